/* check_channel.c — the boundary between mmaprobe and the process that runs a kernel, attacked
 * by the hostile plugins of tests/fixtures/hostile.c through the built program (MMP_BINARY,
 * or $MMP_TEST_BINARY to try another build): a forged result is never a PASS, a kernel that
 * forks or writes junk to every descriptor gets an ERROR "protocol" or its true verdict and
 * never corrupts RUN.json or RUN.json.jsonl, a process left behind by a kernel does not stall
 * the run, a short message does not block a stop request, a plugin crashing only on its second
 * load is a one-line error, and running out of descriptors is exit 3 with a partial report.
 * Also the channel decoder itself (runner_channel.c): each field of a frame checked. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/report.h"
#include "suites/runner_internal.h"
#include "tests/check_main.h"
#include "tests/lib/drive.h"

#ifndef MMP_BINARY
#error "MMP_BINARY (path of the mmaprobe program) must be defined by CMake"
#endif

static rlim_t child_nofile;   /* RLIMIT_NOFILE for the program (0 = unchanged) */

static void setup(void)
{
    drive_tmpdir_make("check_channel");
    child_nofile = 0;
}

static void teardown(void) { drive_tmpdir_remove(); }

static void hostile(char *buf, size_t size, const char *variant)
{
    snprintf(buf, size, "%s/hostile_%s.so", MMP_PLUGIN_FIXTURES, variant);
}

/* Start mmaprobe with argv (NULL-terminated, argv[0] ignored): stdin /dev/null, stdout/stderr
 * to files, the descriptor limit 1024 (a kernel looping over 0..1023 then reaches every
 * descriptor the program may have) unless child_nofile says otherwise. */
static void channel_child(void)
{
    int fi = open("/dev/null", O_RDONLY);
    dup2(fi, 0);
    for (int fd = 3; fd < 1024; fd++) close(fd);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = child_nofile ? child_nofile : 1024;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

static pid_t start(char *const *argv) { return drive_start(argv, channel_child); }

/* Wait for the program at most `limit` seconds (then kill it: the test fails); its exit code.
 * *took: seconds it ran. */
static int finish_within(pid_t pid, double limit, double *took) { return drive_finish(pid, limit, took, NULL); }

/* validate --plugin hostile_<variant>.so --suite @/s.suite --timeout T -o @/r.json [--mutants] */
static int validate(const char *variant, const char *suite, const char *timeout, int mutants, double limit,
                    double *took)
{
    char plugin[4096], s[256], json[256];
    hostile(plugin, sizeof plugin, variant);
    write_file("s.suite", suite);
    path_in(s, sizeof s, "s.suite");
    path_in(json, sizeof json, "r.json");
    char *argv[16];
    int a = 0;
    argv[a++] = "mmaprobe";
    argv[a++] = "validate";
    if (mutants) argv[a++] = "--mutants";
    argv[a++] = "--plugin";
    argv[a++] = plugin;
    argv[a++] = "--suite";
    argv[a++] = s;
    argv[a++] = "--timeout";
    argv[a++] = (char *)timeout;
    argv[a++] = "-o";
    argv[a++] = json;
    argv[a] = NULL;
    return finish_within(start(argv), limit, took);
}

static void read_run(mmp_run *r, const char *name, int jsonl)
{
    char p[256];
    path_in(p, sizeof p, name);
    mmp_run_init(r);
    mmp_status st = jsonl ? mmp_run_read_jsonl(r, p) : mmp_report_read_json(r, p);
    ck_assert_msg(st == MMP_STATUS_OK, "%s: %s", name, mmp_error_last());
}

/* `mmaprobe report FILE` renders it (exit 0). */
static void report_reads(const char *name)
{
    char p[256];
    path_in(p, sizeof p, name);
    char *argv[] = {"mmaprobe", "report", p, NULL};
    int rc = finish_within(start(argv), 20, NULL);
    ck_assert_msg(rc == 0, "report %s: exit %d: %s", name, rc, last_err_line());
}

static void print_cases(const mmp_run *r)
{
    for (size_t i = 0; i < r->n_cases; i++)
        printf("  %s: %s %s\n", r->cases[i].id, mmp_verdict_name(r->cases[i].verdict), r->cases[i].message);
}

/* A hostile case: its true verdict (want) or ERROR protocol; the record is its case's. */
static void hostile_case_ok(const mmp_case_result *c, const char *kernel, int64_t m, mmp_verdict want)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s/f32.f32.f32/", kernel);
    ck_assert_msg(strncmp(c->id, prefix, strlen(prefix)) == 0, "a case that is not the suite's: '%s'", c->id);
    ck_assert_int_eq(c->m, m);
    ck_assert_msg(c->verdict == want || (c->verdict == MMP_VERDICT_ERROR && c->reasons == MMP_REASON_PROTOCOL &&
                                         strncmp(c->message, "protocol: ", 10) == 0),
                  "%s: %s %s", c->id, mmp_verdict_name(c->verdict), c->message);
}

/* Old-format forged results on every descriptor, eight times over (more than a pipe holds):
 * the forger never writes D, so its case is FAIL unwritten or ERROR protocol, never PASS; the
 * run neither believes the forgery nor deadlocks on it, and the next kernel runs. */
START_TEST(test_forged_result_is_no_pass)
{
    double took;
    int rc = validate("forge", "shape=8x8x8 kernel=hostile_forge\nshape=8x8x8 kernel=host_f32\n", "2", 0, 20, &took);
    printf("forge -> %d in %.2f s  %s\n", rc, took, last_err_line());
    ck_assert_int_eq(rc, 1);
    mmp_run r;
    read_run(&r, "r.json", 0);
    print_cases(&r);
    ck_assert_uint_eq(r.n_cases, 2);
    ck_assert_int_ne(r.cases[0].verdict, MMP_VERDICT_PASS);
    ck_assert_ptr_nonnull(strstr(r.cases[0].id, "hostile_forge/"));
    ck_assert(r.cases[0].reasons & (MMP_REASON_PROTOCOL | MMP_REASON_UNWRITTEN));
    ck_assert_int_eq(r.cases[1].verdict, MMP_VERDICT_PASS);
    mmp_run_clear(&r);
    read_run(&r, "r.json.jsonl", 1);
    ck_assert_uint_eq(r.n_cases, 2);
    mmp_run_clear(&r);
}
END_TEST

/* fork() inside run(): two processes report; each case is PASS or ERROR protocol, never a case
 * made of garbage; the report reads; the next kernel runs. */
START_TEST(test_fork_in_run)
{
    double took;
    int rc = validate("fork_run", "shape=8x8x8 kernel=hostile_fork_run\nshape=9x9x9 kernel=hostile_fork_run\n"
                      "shape=10x10x10 kernel=hostile_fork_run\nshape=8x8x8 kernel=host_f32\n", "2", 0, 20, &took);
    printf("fork_run -> %d in %.2f s\n", rc, took);
    ck_assert(rc == 0 || rc == 1);
    mmp_run r;
    read_run(&r, "r.json", 0);
    print_cases(&r);
    ck_assert_uint_eq(r.n_cases, 4);
    for (int i = 0; i < 3; i++) hostile_case_ok(&r.cases[i], "hostile_fork_run", 8 + i, MMP_VERDICT_PASS);
    ck_assert_int_eq(r.cases[3].verdict, MMP_VERDICT_PASS);
    mmp_run_clear(&r);
    report_reads("r.json");
    report_reads("r.json.jsonl");
}
END_TEST

/* Junk written to every descriptor 0..1023: RUN.json.jsonl is not among the kernel's
 * descriptors (it stays valid JSON lines, one per case), the channel detects the junk. */
START_TEST(test_junk_on_every_descriptor)
{
    double took;
    int rc = validate("junk_fds", "shape=8x8x8 kernel=hostile_junk_fds\nshape=9x9x9 kernel=hostile_junk_fds\n"
                      "shape=8x8x8 kernel=host_f32\n", "2", 0, 20, &took);
    printf("junk_fds -> %d in %.2f s\n", rc, took);
    ck_assert(rc == 0 || rc == 1);
    mmp_run r;
    read_run(&r, "r.json.jsonl", 1);
    print_cases(&r);
    ck_assert_uint_eq(r.n_cases, 3);
    for (int i = 0; i < 2; i++) hostile_case_ok(&r.cases[i], "hostile_junk_fds", 8 + i, MMP_VERDICT_PASS);
    ck_assert_int_eq(r.cases[2].verdict, MMP_VERDICT_PASS);
    mmp_run_clear(&r);
    read_run(&r, "r.json", 0);
    ck_assert_uint_eq(r.n_cases, 3);
    mmp_run_clear(&r);
    report_reads("r.json.jsonl");
}
END_TEST

static int process_gone(pid_t pid, double wait_s)
{
    for (double t0 = now_s(); now_s() - t0 < wait_s; usleep(20000))
        if (kill(pid, 0) != 0) return 1;
    return 0;
}

/* A process left behind by the kernel holds every descriptor of the kernel's process: the run
 * ends as soon as the cases are done (it waited up to 30 x the timeout for the pipe's end of
 * file), and the process, in the kernel's group, is killed with it. */
START_TEST(test_grandchild_holding_the_pipe)
{
    char pidfile[256];
    path_in(pidfile, sizeof pidfile, "grandchild.pid");
    setenv("HOSTILE_PIDFILE", pidfile, 1);
    double took;
    int rc = validate("grandchild", "shape=8x8x8 kernel=hostile_grandchild\nshape=9x9x9 kernel=host_f32\n", "1", 0, 25,
                      &took);
    unsetenv("HOSTILE_PIDFILE");
    printf("grandchild -> %d in %.2f s  %s\n", rc, took, last_err_line());
    ck_assert_msg(took < 20, "the run took %.1f s (waiting on the pipe takes 30 x the 1 s timeout)", took);
    ck_assert_int_eq(rc, 0);
    char text[256];
    slurp(text, sizeof text, pidfile);   /* one line per run of the kernel (two per case) */
    int seen = 0;
    for (char *p = text, *e; *p; p = e) {
        long gp = strtol(p, &e, 10);
        if (e == p) break;
        ck_assert_int_gt(gp, 1);
        ck_assert_msg(process_gone((pid_t)gp, 3), "the kernel's leftover process %ld is still alive", gp);
        seen++;
    }
    ck_assert_int_ge(seen, 1);
}
END_TEST

/* The same with a process that left the kernel's group (setsid): it cannot be killed with the
 * group, and must not hold the run up either. */
START_TEST(test_grandchild_outside_the_group)
{
    double took;
    int rc = validate("grandchild_setsid", "shape=8x8x8 kernel=hostile_grandchild_setsid\nshape=9x9x9 kernel=host_f32\n",
                      "1", 0, 40, &took);
    printf("grandchild_setsid -> %d in %.2f s  %s\n", rc, took, last_err_line());
    ck_assert_msg(took < 20, "the run took %.1f s (waiting on the pipe takes 30 x the 1 s timeout)", took);
    ck_assert_int_eq(rc, 0);
    mmp_run r;
    read_run(&r, "r.json", 0);
    ck_assert_uint_eq(r.n_cases, 2);
    ck_assert_int_eq(r.cases[0].verdict, MMP_VERDICT_PASS);
    mmp_run_clear(&r);
}
END_TEST

static size_t lines_in(const char *name)
{
    char p[256];
    path_in(p, sizeof p, name);
    return count_lines(p);
}

/* A kernel sends 4 bytes of a message and waits forever, then a kernel hangs: the first
 * SIGINT stops the run within a second or two with a partial report (the parent was blocked
 * reading the rest of the message, and a stop request did nothing). */
START_TEST(test_short_message_then_sigint)
{
    char plugin[4096], s[256], json[256];
    hostile(plugin, sizeof plugin, "stall");
    write_file("s.suite", "shape=8x8x8 kernel=hostile_stall\nshape=8x8x8 kernel=mut_host_hang\nshape=8x8x8 kernel=host_f32\n");
    path_in(s, sizeof s, "s.suite");
    path_in(json, sizeof json, "r.json");
    char *argv[] = {"mmaprobe", "validate", "--mutants", "--plugin", plugin, "--suite", s, "--timeout", "60", "-o", json, NULL};
    pid_t pid = start(argv);
    for (double t0 = now_s(); now_s() - t0 < 3 && lines_in("r.json.jsonl") < 1;) usleep(20000);
    usleep(300000);
    kill(pid, SIGINT);
    double took;
    int rc = finish_within(pid, 30, &took);
    printf("stall + SIGINT -> %d, %.2f s after the signal  %s\n", rc, took, last_err_line());
    /* the failure mode waits for the 60 s timeout; the figure itself is a benchmark's */
    ck_assert_msg(took < 20, "%.1f s from SIGINT to exit", took);
    ck_assert_int_eq(rc, 1);
    ck_assert_ptr_nonnull(strstr(err_text, "interrupted by SIGINT: partial report"));
    mmp_run r;
    read_run(&r, "r.json", 0);
    print_cases(&r);
    ck_assert_int_eq(r.complete, 0);
    ck_assert_uint_eq(r.n_cases, 3);
    ck_assert_int_eq(r.cases[0].verdict, MMP_VERDICT_ERROR);
    ck_assert(r.cases[0].reasons & MMP_REASON_PROTOCOL);
    ck_assert(r.cases[1].reasons & MMP_REASON_INTERRUPTED);
    /* the failure summary lists the protocol ERROR and counts the unfinished cases, once */
    ck_assert_ptr_nonnull(strstr(out_text, "1 failed (FAIL or ERROR)"));
    ck_assert_ptr_nonnull(strstr(out_text, "2 case(s) did not finish: interrupted"));
    ck_assert_ptr_null(strstr(out_text, "ERROR mut_host_hang"));
    mmp_run_clear(&r);
}
END_TEST

/* A constructor that crashes only when the library was loaded before in this process tree:
 * the vetting child's load succeeds, the program's own load crashes; a one-line error, exit 2
 * (the program died of SIGSEGV without a word). */
START_TEST(test_crash_on_second_load)
{
    char plugin[4096], marker[256], s[256], json[256];
    hostile(plugin, sizeof plugin, "crash_second");
    path_in(marker, sizeof marker, "marker");
    write_file("s.suite", "shape=8x8x8 kernel=host_f32\n");
    path_in(s, sizeof s, "s.suite");
    path_in(json, sizeof json, "r.json");
    setenv("HOSTILE_MARKER", marker, 1);
    for (int cmd = 0; cmd < 2; cmd++) {
        unlink(marker);
        char *v[] = {"mmaprobe", "validate", "--plugin", plugin, "--suite", s, "-o", json, NULL};
        char *l[] = {"mmaprobe", "list", "--plugin", plugin, NULL};
        int rc = finish_within(start(cmd ? l : v), 20, NULL);
        printf("crash_second (%s) -> %d  %s\n", cmd ? "list" : "validate", rc, last_err_line());
        ck_assert_int_eq(rc, 2);
        char want[4200];
        snprintf(want, sizeof want, "plugin %s: crashed while loading in-process (signal 11", plugin);
        ck_assert_ptr_nonnull(strstr(last_err_line(), want));
        ck_assert_ptr_nonnull(strstr(last_err_line(), cmd ? "mmaprobe list: " : "mmaprobe validate: "));
    }
    unsetenv("HOSTILE_MARKER");
    ck_assert_int_ne(access(json, F_OK), 0);   /* no case ran */
}
END_TEST

/* Six descriptors: no pipe for a kernel's process. Exit 3 (the environment), one line naming
 * it, and a RUN.json that says it is partial. */
START_TEST(test_out_of_descriptors)
{
    char s[256], json[256];
    write_file("s.suite", "shape=8x8x8 kernel=host_f32\nshape=9x9x9 kernel=host_f32\n");
    path_in(s, sizeof s, "s.suite");
    path_in(json, sizeof json, "r.json");
    child_nofile = 6;
    char *argv[] = {"mmaprobe", "validate", "--suite", s, "-o", json, NULL};
    int rc = finish_within(start(argv), 20, NULL);
    child_nofile = 0;
    printf("ulimit -n 6 -> %d  %s\n", rc, last_err_line());
    ck_assert_int_eq(rc, 3);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "Too many open files"));
    ck_assert_ptr_nonnull(strstr(last_err_line(), "mmaprobe validate: "));
    if (access(json, F_OK) == 0) {
        mmp_run r;
        read_run(&r, "r.json", 0);
        ck_assert_int_eq(r.complete, 0);
        for (size_t i = 0; i < r.n_cases; i++) {
            if (r.cases[i].verdict != MMP_VERDICT_ERROR) continue;
            ck_assert_ptr_nonnull(strstr(r.cases[i].message, "Too many open files"));
        }
        mmp_run_clear(&r);
    }
}
END_TEST

/* ---- the decoder (mmp_runner_channel_decode) ---- */
static mmp_case dcases[2];
static const uint64_t NONCE = 0x0123456789abcdefull;
enum { PID = 4242 };

static void decoder_cases(void)
{
    const mmp_kernel_desc *k = mmp_registry_find("host_f32", MMP_REGISTRY_ALL);
    ck_assert_ptr_nonnull(k);
    mmp_case_init(&dcases[0], k, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&dcases[1], k, 9, 8, 8, MMP_DIST_UNIFORM, 1);
}

static void good_result(mmp_case_result *r, int i)
{
    mmp_runner_options o;
    mmp_runner_options_init(&o);
    mmp_runner_result_for_case(r, &dcases[i], &o);
    r->verdict = MMP_VERDICT_PASS;
}

static unsigned char frame[MMP_RUNNER_FRAME_MAX];

static size_t enc(uint64_t seq, int32_t pid, uint32_t type, uint64_t index, const mmp_case_result *r)
{
    size_t n = mmp_runner_channel_encode(frame, sizeof frame, NONCE, seq, pid, type, index, r);
    ck_assert_uint_gt(n, 0);
    return n;
}

/* Decode frame[0, n) on a fresh receiver that has seen START and KERNEL/KERNEL_DONE of case 0. */
static mmp_status decode_result(size_t n, const char **msg)
{
    static mmp_runner_rx rx;
    static mmp_runner_event ev;
    mmp_runner_rx_init(&rx, NONCE, PID, dcases, 0, 2, 0, 1);
    rx.seq = 1;
    rx.phase = MMP_RUNNER_RX_CASE;
    size_t used = 0;
    mmp_status st = mmp_runner_channel_decode(&rx, &ev, &used, frame, n);
    *msg = mmp_error_last();
    if (st == MMP_STATUS_OK) {
        ck_assert_uint_eq(used, n);
        ck_assert_uint_eq(rx.next, 1);
    }
    return st;
}

START_TEST(test_decoder_accepts_the_protocol)
{
    decoder_cases();
    static mmp_runner_rx rx;
    static mmp_runner_event ev;
    mmp_runner_rx_init(&rx, NONCE, PID, dcases, 0, 2, 0, 1);
    mmp_case_result r;
    uint64_t seq = 0;
    static const uint32_t order[] = {MMP_RUNNER_MSG_START, MMP_RUNNER_MSG_KERNEL, MMP_RUNNER_MSG_KERNEL_DONE,
                                     MMP_RUNNER_MSG_KERNEL, MMP_RUNNER_MSG_KERNEL_DONE, MMP_RUNNER_MSG_RESULT};
    for (int c = 0; c < 2; c++)
        for (int m = 0; m < 6; m++) {
            good_result(&r, c);
            size_t n = enc(seq++, PID, order[m], (uint64_t)c, &r);
            /* a byte at a time: incomplete until the last one */
            for (size_t i = 0; i < n; i++) {
                ck_assert_uint_eq(mmp_runner_rx_push(&rx, frame + i, 1), 1);
                int got = 0;
                ck_assert_msg(mmp_runner_rx_next(&rx, &ev, &got) == MMP_STATUS_OK, "%s", mmp_error_last());
                ck_assert_int_eq(got, i + 1 == n);
            }
            ck_assert_uint_eq(ev.type, order[m]);
            ck_assert_uint_eq(ev.index, (uint64_t)c);
        }
    ck_assert_uint_eq(rx.next, 2);
    ck_assert_str_eq(ev.result.id, dcases[1].id);
}
END_TEST

typedef struct {
    const char *what;
    void (*spoil)(mmp_case_result *r);
    const char *says;
} spoiled;

static void sp_id(mmp_case_result *r) { snprintf(r->id, sizeof r->id, "%s", dcases[1].id); }
static void sp_m(mmp_case_result *r) { r->m = 435594161523; }
static void sp_verdict(mmp_case_result *r) { r->verdict = (mmp_verdict)7; }
static void sp_reason(mmp_case_result *r) { r->reasons = 1u << 30; }
static void sp_string(mmp_case_result *r) { memset(r->message, 'x', sizeof r->message); }
static void sp_count(mmp_case_result *r) { r->n_unwritten = -1; }
static void sp_metric(mmp_case_result *r) { r->metrics.above_tol = -5; }
static void sp_heat(mmp_case_result *r) { r->metrics.heat_rows = 65; }
static void sp_shard(mmp_case_result *r) { r->shard_count = 3; }

static const spoiled spoils[] = {
    {"another case's ID", sp_id, "another case ID"},
    {"m", sp_m, "shape"},
    {"verdict", sp_verdict, "verdict out of range"},
    {"reason", sp_reason, "unknown reason bits"},
    {"string", sp_string, "not terminated"},
    {"count", sp_count, "a negative count"},
    {"metric", sp_metric, "a negative metrics count"},
    {"heatmap", sp_heat, "heatmap size"},
    {"shard", sp_shard, "shard"},
};

START_TEST(test_decoder_refuses_impossible_results)
{
    decoder_cases();
    const spoiled *s = &spoils[_i];
    mmp_case_result r;
    good_result(&r, 0);
    const char *msg;
    ck_assert_int_eq(decode_result(enc(1, PID, MMP_RUNNER_MSG_RESULT, 0, &r), &msg), MMP_STATUS_OK);
    s->spoil(&r);
    ck_assert_int_eq(decode_result(enc(1, PID, MMP_RUNNER_MSG_RESULT, 0, &r), &msg), MMP_STATUS_PARSE);
    printf("%-18s -> %s\n", s->what, msg);
    ck_assert_ptr_nonnull(strstr(msg, "protocol: impossible result: "));
    ck_assert_ptr_nonnull(strstr(msg, s->says));
}
END_TEST

START_TEST(test_decoder_refuses_bad_frames)
{
    decoder_cases();
    mmp_case_result r;
    good_result(&r, 0);
    const char *msg;
    size_t n = enc(1, PID, MMP_RUNNER_MSG_RESULT, 0, &r);
    /* one flipped bit anywhere: the check (or the magic, type, length before it) fails */
    for (size_t i = 0; i < n; i += 997) {
        enc(1, PID, MMP_RUNNER_MSG_RESULT, 0, &r);
        frame[i] ^= 0x10;
        ck_assert_int_eq(decode_result(n, &msg), MMP_STATUS_PARSE);
        ck_assert_ptr_nonnull(strstr(msg, "protocol: "));
    }
    /* the right check under another nonce: a forgery */
    mmp_runner_channel_encode(frame, sizeof frame, NONCE + 1, 1, PID, MMP_RUNNER_MSG_RESULT, 0, &r);
    ck_assert_int_eq(decode_result(n, &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "bad check"));
    /* another process, out of sequence, another case, out of order */
    ck_assert_int_eq(decode_result(enc(1, PID + 1, MMP_RUNNER_MSG_RESULT, 0, &r), &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "from process 4243, not the kernel's process 4242"));
    ck_assert_int_eq(decode_result(enc(0, PID, MMP_RUNNER_MSG_RESULT, 0, &r), &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "out of sequence"));
    ck_assert_int_eq(decode_result(enc(1, PID, MMP_RUNNER_MSG_RESULT, 1, &r), &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "case index 1, want 0"));
    ck_assert_int_eq(decode_result(enc(1, PID, MMP_RUNNER_MSG_START, 0, &r), &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "start message out of order"));
    ck_assert_int_eq(decode_result(enc(1, PID, MMP_RUNNER_MSG_KERNEL_DONE, 0, &r), &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "out of order"));
    /* the old format (a 16-byte header of type 4): not a frame from the first byte */
    memset(frame, 0, 16);
    frame[0] = 4;
    ck_assert_int_eq(decode_result(1, &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "not a frame"));
    /* a frame with a length that is not its type's */
    enc(1, PID, MMP_RUNNER_MSG_KERNEL, 0, NULL);
    mmp_runner_frame h;
    memcpy(&h, frame, sizeof h);
    h.length = 100;
    memcpy(frame, &h, sizeof h);
    ck_assert_int_eq(decode_result(sizeof h, &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "payload bytes"));
    h.length = 0;
    h.type = 9;
    memcpy(frame, &h, sizeof h);
    ck_assert_int_eq(decode_result(sizeof h, &msg), MMP_STATUS_PARSE);
    ck_assert_ptr_nonnull(strstr(msg, "unknown message type 9"));
}
END_TEST

static Suite *channel_suite(void)
{
    Suite *s = suite_create("channel");
    TCase *tc = tcase_create("hostile");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_forged_result_is_no_pass);
    tcase_add_test(tc, test_fork_in_run);
    tcase_add_test(tc, test_junk_on_every_descriptor);
    tcase_add_test(tc, test_grandchild_holding_the_pipe);
    tcase_add_test(tc, test_grandchild_outside_the_group);
    tcase_add_test(tc, test_short_message_then_sigint);
    tcase_add_test(tc, test_crash_on_second_load);
    tcase_add_test(tc, test_out_of_descriptors);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("decoder");
    tcase_add_test(td, test_decoder_accepts_the_protocol);
    tcase_add_loop_test(td, test_decoder_refuses_impossible_results, 0, (int)(sizeof spoils / sizeof spoils[0]));
    tcase_add_test(td, test_decoder_refuses_bad_frames);
    suite_add_tcase(s, td);
    return s;
}

MMP_CHECK_MAIN(channel_suite)
