/* check_cli.c — the built `mmaprobe` program (MMP_BINARY) under bad input and faults: each bad
 * argument, suite, plugin or environment gives its documented exit code and a one-line message
 * naming the problem; results finished before a fault are kept (full disk: the JSON lines
 * written stay valid; SIGINT/SIGTERM: a valid partial report that says interrupted).
 * Full disk is simulated without root by MMP_FAULT_WRITE_AFTER=N (writes fail after N lines);
 * the JSON-lines path as a symlink to /dev/full is refused (outputs are regular files). */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <inttypes.h>
#include <math.h>

#include "mmaprobe/npy.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/report.h"
#include "cli/progress.h"
#include "tests/check_main.h"
#include "tests/lib/drive.h"

#ifndef MMP_BINARY
#error "MMP_BINARY (path of the mmaprobe program) must be defined by CMake"
#endif

static void setup(void) { drive_tmpdir_make("check_cli"); }
static void teardown(void) { drive_tmpdir_remove(); }

static rlim_t child_as_limit;   /* RLIMIT_AS for the program (0 = unchanged) */

static void cli_child(void)
{
    if (child_as_limit) {
        struct rlimit rl = {child_as_limit, child_as_limit};
        setrlimit(RLIMIT_AS, &rl);
    }
}

/* Start mmaprobe with argv (NULL-terminated, argv[0] ignored), stdout/stderr to files. */
static pid_t start(char *const *argv) { return drive_start(argv, cli_child); }

static int finish(pid_t pid) { return drive_finish(pid, 600, NULL, NULL); }

/* Run "mmaprobe args..." (a space-separated string; "@" is replaced by the temp dir). */
static int run(const char *args) { return finish(start(drive_split(args))); }

/* The run document at path, read (the test fails with the reader's message otherwise). */
static void read_doc(mmp_run *r, const char *path)
{
    mmp_run_init(r);
    ck_assert_msg(mmp_report_read_json(r, path) == MMP_STATUS_OK, "%s", mmp_error_last());
}

typedef struct {
    const char *args;
    int exit_code;
    const char *says;
} bad_input;

static const bad_input bad[] = {
    {"frobnicate", 2, "mmaprobe: unknown command 'frobnicate'"},
    {"validate --bogus", 2, "unknown option '--bogus'"},
    {"validate --suite", 2, "option '--suite' needs a value"},
    {"validate --seed -3", 2, "bad --seed '-3'"},
    {"validate --seed 99999999999999999999", 2, "bad --seed '99999999999999999999'"},
    {"validate --timeout 0", 2, "bad --timeout '0'"},
    {"validate --timeout nan", 2, "bad --timeout 'nan'"},
    {"validate --atol -1", 2, "bad --atol '-1'"},
    {"validate --ulps 1e999", 2, "bad --ulps '1e999'"},
    {"validate --tolerance loose", 2, "unknown --tolerance 'loose'"},
    {"validate --shard 3/2", 2, "bad --shard '3/2': shard index 3 must be below the count 2"},
    {"validate --shard 1/0", 2, "bad --shard '1/0'"},
    {"validate --shard x", 2, "bad --shard 'x'"},
    {"validate --device -1", 2, "bad --device '-1'"},
    {"validate --device 0x1", 2, "bad --device '0x1'"},
    {"validate --sanitize valgrind", 2, "unknown --sanitize tool 'valgrind'"},
    {"validate --suite smok -o @/r.json", 2, "suite 'smok': not a built-in suite (smoke, edge, full)"},
    {"validate --suite @ -o @/r.json", 2, "nor a regular file"},
    {"validate --filter nothing* -o @/r.json", 2, "no case matches (suite smoke, filter nothing*)"},
    {"validate --case nonsense -o @/r.json", 2, "--case 'nonsense' is not a case ID"},
    {"validate --case host_f32/f32.f32.f32/1x1x1/exact/s99 -o @/r.json", 2, "no case 'host_f32/f32.f32.f32/1x1x1/exact/s99' in the built-in suites"},
    {"validate --case host_f32/f32.f32.f32/8x8x8/exact/s7 --seed 8 -o @/r.json", 2, "--seed 8 differs from the seed of --case"},
    {"validate --case host_f32/f32.f32.f32/8x8x8/exact/s7 --filter host* -o @/r.json", 2, "cannot be combined with --filter"},
    {"validate --mutants=1 -o @/r.json", 2, "option '--mutants' takes no value (got '--mutants=1')"},
    {"validate --seed=-3", 2, "bad --seed '-3'"},
    {"validate --mut", 2, "unknown option '--mut'"},
    {"validate --help=yes", 2, "option '--help' takes no value (got '--help=yes')"},
    {"validate -q", 2, "unknown option '-q'"},
    {"validate smoke", 2, "unexpected argument 'smoke'"},
    {"validate -- --mutants", 2, "unexpected argument '--mutants'"},
    {"env --device", 2, "option '--device' needs a value"},
    {"env --device=x", 2, "bad --device 'x'"},
    {"probe --random=x", 2, "bad --random 'x'"},
    {"probe --quiet=1", 2, "option '--quiet' takes no value"},
    {"validate --filter host_f32* --shard 63/64 --suite @/one.suite -o @/r.json", 2, "shard 63/64 of 1 cases is empty"},
    {"validate --suite @/bad.suite -o @/r.json", 2, "bad.suite:2: shape must be MxNxK"},
    {"validate --filter host_f32* -o /etc/passwd/r.json", 3, "cannot write /etc/passwd/r.json: Not a directory"},
    {"validate --filter host_f32* -o /nonexistent-dir/r.json", 3, "cannot write /nonexistent-dir/r.json: No such file"},
    {"validate --filter host_f32* -o @", 3, "not a regular file (a directory)"},
    {"list --timeout 1", 2, "unknown option '--timeout' for list"},
    {"list --plugin @/nothing.so", 2, "cannot load"},
    {"report @/missing.json", -1, "missing.json"},
};

START_TEST(test_bad_input)
{
    const bad_input *b = &bad[_i];
    write_file("bad.suite", "shape=8x8x8 kernel=host_f32\nshape=8x8\n");
    write_file("one.suite", "shape=8x8x8 kernel=host_f32\n");
    int rc = run(b->args);
    const char *line = last_err_line();
    char want[512];
    snprintf(want, sizeof want, "%s", b->says);
    char *at = strchr(want, '@');
    if (at) { char rest[256]; snprintf(rest, sizeof rest, "%s", at + 1); snprintf(at, want + sizeof want - at, "%s%s", tmpdir, rest); }
    printf("%-70s -> %d  %s\n", b->args, rc, line);
    if (b->exit_code >= 0) ck_assert_msg(rc == b->exit_code, "%s: exit %d, want %d (%s)", b->args, rc, b->exit_code, line);
    else ck_assert_msg(rc == 2 || rc == 3, "%s: exit %d", b->args, rc);
    ck_assert_msg(strstr(line, want), "%s: '%s' should say '%s'", b->args, line, want);
    ck_assert_msg(strstr(line, "mmaprobe"), "the message names the program: %s", line);
}
END_TEST

static void plugin_path(char *buf, size_t size, const char *variant)
{
    snprintf(buf, size, "%s/fix_%s.so", MMP_PLUGIN_FIXTURES, variant);
}

START_TEST(test_bad_plugins_exit_2)
{
    static const char *const variants[] = {"no_symbol", "abi", "null_entry", "int8_fp16", "crash_ctor", "dup_name"};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        char p[4096], args[4300];
        plugin_path(p, sizeof p, variants[i]);
        snprintf(args, sizeof args, "validate --plugin %s -o @/r.json", p);
        int rc = run(args);
        printf("plugin %-12s -> %d  %s\n", variants[i], rc, last_err_line());
        ck_assert_int_eq(rc, 2);
        ck_assert_ptr_nonnull(strstr(last_err_line(), p));
    }
}
END_TEST

/* No GPU: a device kernel SKIPs with the reason; exit 3 only because nothing ran. */
START_TEST(test_no_device)
{
    char p[4096], args[4300];
    plugin_path(p, sizeof p, "device");
    snprintf(args, sizeof args, "validate --plugin %s --filter fix_device* -o @/r.json", p);
    int rc = run(args);
    if (strstr(out_text, "# gpu: none") == NULL && strstr(out_text, "no CUDA") == NULL) {
        printf("a GPU is present: the no-device path is not what runs here\n");
        return;
    }
    ck_assert_msg(rc == 3, "exit %d: %s", rc, err_text);
    /* with a host kernel that runs too, the run is judged on what ran: exit 0 */
    snprintf(args, sizeof args, "validate --plugin %s --suite @/mix.suite -o @/r.json", p);
    write_file("mix.suite", "shape=8x8x8 kernel=fix_device_f32\nshape=8x8x8 kernel=host_f32\n");
    rc = run(args);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err_text);
    ck_assert_ptr_nonnull(strstr(out_text, "1 pass, 0 fail, 0 error, 1 skip"));
    /* its progress line (stderr) says why, not only "(unsupported)" */
    const char *line = strstr(err_text, "SKIP  fix_device_f32/");
    const char *cuda = line ? strstr(line, "CUDA") : NULL;
    ck_assert_msg(line && strstr(line, "(unsupported: ") && cuda && cuda < strchr(line, '\n'), "%s", err_text);
    /* the skipped kernel's table row has no figures, and its reason is said once */
    const char *row = strstr(out_text, "\nfix_device_f32 ");
    ck_assert_msg(row && strstr(row, "      -         -"), "%s", out_text);
    char json[256];
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    mmp_run doc;
    read_doc(&doc, json);
    for (size_t i = 0; i < doc.n_cases; i++)
        if (doc.cases[i].verdict == MMP_VERDICT_SKIP)
            ck_assert_msg(doc.cases[i].message[0] && !strstr(doc.cases[i].message, "no CUDA device (no CUDA device"),
                          "%s", doc.cases[i].message);   /* "no CUDA device (...)", or "built without CUDA" */
    mmp_run_clear(&doc);
    /* --require-device: a CI job on a GPU runner that lost its GPU must not pass on host cases */
    snprintf(args, sizeof args, "validate --plugin %s --suite @/mix.suite --require-device -o @/r.json", p);
    rc = run(args);
    ck_assert_msg(rc == 3, "exit %d: %s", rc, err_text);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "--require-device: no case of a device kernel ran"));
    rc = run("validate --filter host_f32/* --require-device -o @/r.json");   /* only host kernels: the same */
    ck_assert_msg(rc == 3, "exit %d: %s", rc, err_text);
}
END_TEST

/* The JSON-lines path a link to /dev/full, a character device: refused before any case runs
 * (outputs are regular files; tests/check_outputs.c has the other kinds), exit 3. */
START_TEST(test_full_disk_dev_full)
{
    char link[256];
    snprintf(link, sizeof link, "%s/r.json.jsonl", tmpdir);
    ck_assert_int_eq(symlink("/dev/full", link), 0);
    int rc = run("validate --filter host_f32/* -o @/r.json");
    printf("/dev/full -> %d  %s\n", rc, last_err_line());
    ck_assert_int_eq(rc, 3);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "not a regular file (a character device)"));
    char json[256];
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    ck_assert_int_ne(access(json, F_OK), 0);   /* no case ran */
}
END_TEST

/* The disk fills after 2 lines: those 2 stay valid, the error is reported, exit 3. */
START_TEST(test_full_disk_after_n)
{
    setenv("MMP_FAULT_WRITE_AFTER", "2", 1);
    int rc = run("validate --filter host_f32/* -o @/r.json");
    unsetenv("MMP_FAULT_WRITE_AFTER");
    printf("MMP_FAULT_WRITE_AFTER=2 -> %d  %s\n", rc, last_err_line());
    ck_assert_int_eq(rc, 3);
    ck_assert_ptr_nonnull(strstr(err_text, "No space left on device"));
    char jl[256], json[256];
    snprintf(jl, sizeof jl, "%s/r.json.jsonl", tmpdir);
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    ck_assert_uint_eq(count_lines(jl), 2);
    mmp_run r;
    mmp_run_init(&r);
    ck_assert_msg(mmp_run_read_jsonl(&r, jl) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_uint_eq(r.n_cases, 2);
    ck_assert_int_eq(r.cases[0].verdict, MMP_VERDICT_PASS);
    mmp_run_clear(&r);
    ck_assert_int_ne(access(json, F_OK), 0);   /* the final document could not be written */
}
END_TEST

/* SIGINT / SIGTERM while a case hangs: a valid partial report that says so. */
static void interrupt_with(int sig, const char *name)
{
    write_file("slow.suite", "shape=8x8x8 kernel=host_f32\nshape=8x8x8 kernel=mut_host_hang\nshape=9x9x9 kernel=host_f64\n");
    char suite[256], json[256], jl[256];
    snprintf(suite, sizeof suite, "%s/slow.suite", tmpdir);
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    snprintf(jl, sizeof jl, "%s/r.json.jsonl", tmpdir);
    char *argv[] = {"mmaprobe", "validate", "--mutants", "--suite", suite, "--timeout", "60", "-o", json, NULL};
    pid_t pid = start(argv);
    for (int i = 0; i < 600 && count_lines(jl) < 1; i++) usleep(50000);   /* host_f32 finished */
    ck_assert_uint_eq(count_lines(jl), 1);
    usleep(300000);
    kill(pid, sig);
    int rc = finish(pid);
    printf("%s -> %d  %s\n", name, rc, last_err_line());
    ck_assert_int_eq(rc, 1);   /* unfinished cases are ERROR interrupted */
    char want[64];
    snprintf(want, sizeof want, "interrupted by %s: partial report", name);
    ck_assert_ptr_nonnull(strstr(err_text, want));
    mmp_run r;
    read_doc(&r, json);
    ck_assert_int_eq(r.complete, 0);
    ck_assert_str_eq(r.interrupted_by, name);
    ck_assert_uint_eq(r.n_cases, 3);
    ck_assert_int_eq(r.cases[0].verdict, MMP_VERDICT_PASS);
    ck_assert(r.cases[1].reasons & MMP_REASON_INTERRUPTED);
    ck_assert(r.cases[2].reasons & MMP_REASON_INTERRUPTED);
    mmp_run_clear(&r);
    mmp_run_init(&r);
    ck_assert_int_eq(mmp_run_read_jsonl(&r, jl), MMP_STATUS_OK);
    ck_assert_uint_ge(r.n_cases, 1);
    mmp_run_clear(&r);
}

START_TEST(test_sigint) { interrupt_with(SIGINT, "SIGINT"); }
END_TEST
START_TEST(test_sigterm) { interrupt_with(SIGTERM, "SIGTERM"); }
END_TEST

/* Kernels that crash, hang, corrupt memory: each case gets its verdict, the run goes on. */
START_TEST(test_faulty_kernels_run_continues)
{
    write_file("faults.suite", "shape=8x8x8 kernel=mut_host_crash\nshape=8x8x8 kernel=mut_host_wild_write\n"
                               "shape=8x8x8 kernel=mut_host_write_before\nshape=8x8x8 kernel=mut_host_hang\n"
                               "shape=8x8x8 kernel=host_f32\n");
    int rc = run("validate --mutants --suite @/faults.suite --timeout 1 -o @/r.json");
    ck_assert_int_eq(rc, 1);
    char json[256];
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    mmp_run r;
    read_doc(&r, json);
    ck_assert_uint_eq(r.n_cases, 5);
    for (size_t i = 0; i < r.n_cases; i++) printf("%s: %s %s\n", r.cases[i].id, mmp_verdict_name(r.cases[i].verdict), r.cases[i].message);
    ck_assert(r.cases[0].verdict == MMP_VERDICT_ERROR && (r.cases[0].reasons & MMP_REASON_CRASH));
    ck_assert(r.cases[1].verdict == MMP_VERDICT_ERROR && (r.cases[1].reasons & MMP_REASON_CRASH));
    ck_assert(r.cases[2].verdict == MMP_VERDICT_FAIL && (r.cases[2].reasons & MMP_REASON_GUARD));
    ck_assert(r.cases[3].verdict == MMP_VERDICT_ERROR && (r.cases[3].reasons & MMP_REASON_TIMEOUT));
    ck_assert_int_eq(r.cases[4].verdict, MMP_VERDICT_PASS);
    ck_assert_ptr_nonnull(strstr(r.cases[0].id, "mut_host_crash/"));
    mmp_run_clear(&r);
}
END_TEST

/* A hung kernel costs one timeout: its later cases SKIP naming the case that timed out (unless
 * --run-after-timeout), the timed-out case records the time it ran; other kernels run.
 * --maxfail N / -x: the run stops after N failures, the rest SKIP, the report says why. */
START_TEST(test_timeout_and_maxfail)
{
    write_file("hang.suite", "shape=8x8x8 kernel=mut_host_hang\nshape=9x9x9 kernel=mut_host_hang\n"
                             "shape=10x10x10 kernel=mut_host_hang\nshape=8x8x8 kernel=host_f32\n");
    char json[256];
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    for (int keep = 0; keep < 2; keep++) {
        int rc = run(keep ? "validate --mutants --suite @/hang.suite --timeout 1 --run-after-timeout -o @/r.json"
                          : "validate --mutants --suite @/hang.suite --timeout 1 -o @/r.json");
        ck_assert_int_eq(rc, 1);
        mmp_run r;
        read_doc(&r, json);
        ck_assert_uint_eq(r.n_cases, 4);
        for (size_t i = 0; i < r.n_cases; i++)
            printf("keep %d %s: %s %.0f ms %s\n", keep, r.cases[i].id, mmp_verdict_name(r.cases[i].verdict),
                   r.cases[i].time_total_ms, r.cases[i].message);
        ck_assert(r.cases[0].verdict == MMP_VERDICT_ERROR && (r.cases[0].reasons & MMP_REASON_TIMEOUT));
        ck_assert_msg(r.cases[0].time_total_ms >= 1000.0, "a timed-out case records %g ms", r.cases[0].time_total_ms);
        for (size_t i = 1; i < 3; i++) {
            if (keep) ck_assert(r.cases[i].verdict == MMP_VERDICT_ERROR && (r.cases[i].reasons & MMP_REASON_TIMEOUT));
            else ck_assert_msg(r.cases[i].verdict == MMP_VERDICT_SKIP && strstr(r.cases[i].message, r.cases[0].id) &&
                                   strstr(r.cases[i].message, "timed out"),
                               "%s", r.cases[i].message);
        }
        ck_assert_int_eq(r.cases[3].verdict, MMP_VERDICT_PASS);
        ck_assert(r.complete);
        mmp_run_clear(&r);
    }
    int rc = run("validate --mutants --filter mut_host_* -x -o @/r.json");
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strstr(out_text, "0 pass, 1 fail, 0 error,") && strstr(out_text, "PARTIAL: stopped at --maxfail"), "%s",
                  out_text);
    mmp_run r;
    read_doc(&r, json);
    ck_assert(!r.complete && !strcmp(r.interrupted_by, "--maxfail 1"));
    ck_assert_int_eq(r.cases[r.n_cases - 1].verdict, MMP_VERDICT_SKIP);
    ck_assert_ptr_nonnull(strstr(r.cases[r.n_cases - 1].message, "--maxfail"));
    mmp_run_clear(&r);
    ck_assert_int_eq(run("validate --maxfail 0 -o @/r.json"), 2);
}
END_TEST

/* mmaprobe killed with SIGKILL (no handler runs) while a kernel hangs: the kernel's process
 * dies with it instead of hanging on forever. This test process adopts the orphans (a child
 * subreaper) and waits for every descendant to be gone. */
START_TEST(test_parent_killed)
{
    ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    write_file("hang1.suite", "shape=8x8x8 kernel=mut_host_hang\n");
    char suite[256], json[256];
    snprintf(suite, sizeof suite, "%s/hang1.suite", tmpdir);
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    char *argv[] = {"mmaprobe", "validate", "--mutants", "--suite", suite, "--timeout", "600", "--no-prefork", "-o", json, NULL};
    pid_t pid = start(argv);
    char e[128];
    snprintf(e, sizeof e, "%s/stderr", tmpdir);
    for (int i = 0; i < 200 && !strstr(err_text, "1 cases"); i++) {   /* the run has started */
        usleep(50000);
        slurp(err_text, sizeof err_text, e);
    }
    usleep(1500000);   /* its kernel's process is in the hang by now */
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    int gone = 0;
    for (int i = 0; i < 200 && !gone; i++) {   /* up to 10 s for the adopted kernel process */
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w < 0 && errno == ECHILD) gone = 1;
        else if (w == 0) usleep(50000);
    }
    if (!gone) {   /* leave no hung process behind: kill the adopted ones' process groups */
        DIR *d = opendir("/proc");
        struct dirent *de;
        while (d && (de = readdir(d))) {
            char path[300], line[256];
            snprintf(path, sizeof path, "/proc/%s/status", de->d_name);
            FILE *f = fopen(path, "r");
            while (f && fgets(line, sizeof line, f))
                if (!strncmp(line, "PPid:", 5) && atoi(line + 5) == getpid()) kill(-atoi(de->d_name), SIGKILL);
            if (f) fclose(f);
        }
        if (d) closedir(d);
    }
    ck_assert_msg(gone, "a kernel's process outlived mmaprobe killed with SIGKILL");
}
END_TEST

/* --plugin runs the plugin's kernels only (a user validating theirs does not wait for the 69
 * built-in ones); --with-builtins, a --filter or a suite file bring others in. */
START_TEST(test_plugin_only)
{
    char p[4096], args[4400];
    plugin_path(p, sizeof p, "good");
    snprintf(args, sizeof args, "validate --plugin %s -o @/r.json", p);
    int rc = run(args);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err_text);
    char json[256];
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    mmp_run r;
    read_doc(&r, json);
    ck_assert_uint_gt(r.n_cases, 0);
    for (size_t i = 0; i < r.n_cases; i++) ck_assert_str_eq(r.cases[i].kernel, "fix_good_f32");
    size_t only = r.n_cases;
    mmp_run_clear(&r);
    snprintf(args, sizeof args, "validate --plugin %s --with-builtins --filter fix_good_f32/*,host_f32/* -o @/r.json", p);
    ck_assert_int_eq(run(args), 0);
    read_doc(&r, json);
    size_t host = 0;
    for (size_t i = 0; i < r.n_cases; i++) host += !strcmp(r.cases[i].kernel, "host_f32");
    ck_assert_msg(host > 0 && r.n_cases == only + host, "%zu cases, %zu of host_f32", r.n_cases, host);
    mmp_run_clear(&r);
}
END_TEST

/* A case too large for the memory there is: ERROR "out of memory" for that case, the next case
 * runs. (Address space limited to 2 GiB; not under ASan, whose shadow memory needs more.) */
START_TEST(test_out_of_memory)
{
#if defined(__SANITIZE_ADDRESS__)
    printf("ASan build: RLIMIT_AS cannot be used, out-of-memory test skipped\n");
    return;
#endif
    write_file("big.suite", "shape=32768x32768x1 kernel=host_f32\nshape=8x8x8 kernel=host_f32\n");
    child_as_limit = (rlim_t)2 << 30;
    int rc = run("validate --suite @/big.suite -o @/r.json");
    child_as_limit = 0;
    ck_assert_msg(rc == 1, "exit %d: %s", rc, err_text);
    char json[256];
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    mmp_run r;
    mmp_run_init(&r);
    ck_assert_int_eq(mmp_report_read_json(&r, json), MMP_STATUS_OK);
    ck_assert_uint_eq(r.n_cases, 2);
    printf("out of memory: %s %s\n", mmp_verdict_name(r.cases[0].verdict), r.cases[0].message);
    ck_assert_int_eq(r.cases[0].verdict, MMP_VERDICT_ERROR);
    ck_assert_ptr_nonnull(strstr(r.cases[0].message, "out of memory for 32768x32768x1"));
    ck_assert_int_eq(r.cases[1].verdict, MMP_VERDICT_PASS);
    mmp_run_clear(&r);
}
END_TEST

/* --sanitize with a stand-in compute-sanitizer printing a stored sample: the finding FAILs the
 * case with reason sanitizer; without the tool: said once, "not run" in the messages, exit 3. */
START_TEST(test_sanitize)
{
    char fake[256];
    snprintf(fake, sizeof fake, "%s/compute-sanitizer", tmpdir);
    FILE *f = fopen(fake, "w");
    fprintf(f, "#!/bin/sh\ncat '%s/tests/data/sanitizer-samples/memcheck-oob.txt'\nexit 99\n", MMP_SOURCE_DIR);
    fclose(f);
    chmod(fake, 0755);
    setenv("MMP_COMPUTE_SANITIZER", fake, 1);
    int rc = run("validate --filter host_f32/*/exact/* --sanitize memcheck -o @/r.json");
    unsetenv("MMP_COMPUTE_SANITIZER");
    ck_assert_msg(rc == 1, "exit %d: %s", rc, err_text);
    char json[256];
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    mmp_run r;
    mmp_run_init(&r);
    ck_assert_int_eq(mmp_report_read_json(&r, json), MMP_STATUS_OK);
    ck_assert_uint_eq(r.n_cases, 1);
    printf("fake memcheck: %s %s\n", mmp_verdict_name(r.cases[0].verdict), r.cases[0].message);
    ck_assert_int_eq(r.cases[0].verdict, MMP_VERDICT_FAIL);
    ck_assert(r.cases[0].reasons & MMP_REASON_SANITIZER);
    ck_assert_ptr_nonnull(strstr(r.cases[0].message, "sanitizer: memcheck: 3 errors; first: Invalid __global__ write"));
    mmp_run_clear(&r);
    /* not found */
    setenv("MMP_COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer", 1);
    rc = run("validate --filter host_f32/*/exact/* --sanitize racecheck -o @/r.json");
    unsetenv("MMP_COMPUTE_SANITIZER");
    ck_assert_msg(rc == 3, "exit %d: %s", rc, err_text);
    ck_assert_ptr_nonnull(strstr(err_text, "--sanitize racecheck: not run:"));
    ck_assert_ptr_nonnull(strstr(out_text, "sanitizer racecheck: NOT RUN"));
    mmp_run_init(&r);
    ck_assert_int_eq(mmp_report_read_json(&r, json), MMP_STATUS_OK);
    ck_assert_int_eq(r.cases[0].verdict, MMP_VERDICT_PASS);
    ck_assert_ptr_nonnull(strstr(r.cases[0].message, "sanitizer racecheck not run"));
    mmp_run_clear(&r);
}
END_TEST

/* Progress lines: per kernel done/total with time left; plain lines without a terminal. */
/* A failure tells what failed and how to re-run exactly that case: the message and a
 * `--case ID` command after its progress line, a summary of the failures at the end; the
 * printed command, run as it stands, runs that one case (seed taken from the ID) and fails the
 * same way. Several --filter options add up; --opt=value works. */
START_TEST(test_failures_rerun)
{
    int rc = run("validate --mutants --filter=mut_host_drop_k_tile/*/exact/* --filter mut_host_drop_k_tile/*/uniform/* "
                 "--seed=5 -o @/r.json");
    ck_assert_msg(rc == 1, "exit %d: %s", rc, err_text);
    ck_assert_msg(strstr(err_text, "FAIL  mut_host_drop_k_tile/f16.f16.f32/64x64x128/exact/s5 (exact-mismatch)") &&
                      strstr(err_text, "elements differ from the exact result, first (0,0) got"),
                  "%s", err_text);
    const char *want = "re-run: mmaprobe validate --case 'mut_host_drop_k_tile/f16.f16.f32/64x64x128/uniform/s5' --mutants\n";
    ck_assert_msg(strstr(err_text, want), "%s", err_text);
    ck_assert_msg(strstr(out_text, "3 failed (FAIL or ERROR):") && strstr(out_text, want) &&
                      strstr(out_text, "0 pass, 3 fail, 0 error, 0 skip"),
                  "%s", out_text);
    /* the command as printed (the quotes are the shell's) */
    rc = run("validate --case mut_host_drop_k_tile/f16.f16.f32/64x64x128/uniform/s5 --mutants -o @/one.json");
    ck_assert_msg(rc == 1, "exit %d: %s", rc, err_text);
    ck_assert_msg(strstr(out_text, "0 pass, 1 fail, 0 error, 0 skip") && strstr(out_text, "seed: 5"), "%s", out_text);
    /* an edge-suite case and an ID with a comma (alpha, beta) */
    rc = run("validate --case host_f32/f32.f32.f32/2x32x64/uniform/s7 -o @/one.json");
    ck_assert_msg(rc == 0 && strstr(out_text, "1 pass, 0 fail") && strstr(err_text, "(suite edge)"), "exit %d: %s %s", rc,
                  out_text, err_text);
    rc = run("validate --case mut_host_drop_k_tile/f16.f16.f32/64x64x128/ab-1.5,0.5/uniform/s42 --mutants -o @/one.json");
    ck_assert_msg(rc == 1 && strstr(out_text, "0 pass, 1 fail"), "exit %d: %s", rc, out_text);
    /* heatmaps: a failing case keeps its own, a passing one not unless --heatmaps all */
    char json[256];
    snprintf(json, sizeof json, "%s/h.json", tmpdir);
    for (int all = 0; all < 2; all++) {
        rc = run(all ? "validate --mutants --filter mut_host_drop_k_tile/*/uniform/*,host_f32/*/64x64x*/uniform/* "
                       "--suite edge --heatmaps=all -o @/h.json"
                     : "validate --mutants --filter mut_host_drop_k_tile/*/uniform/*,host_f32/*/64x64x*/uniform/* "
                       "--suite edge -o @/h.json");
        ck_assert_msg(rc == 1, "exit %d: %s", rc, err_text);
        mmp_run r;
        read_doc(&r, json);
        int fail_maps = 0, pass_maps = 0, fails = 0, passes = 0;
        for (size_t i = 0; i < r.n_cases; i++) {
            int has = r.cases[i].metrics.heat_rows > 0;
            if (r.cases[i].verdict == MMP_VERDICT_FAIL) { fails++; fail_maps += has; }
            if (r.cases[i].verdict == MMP_VERDICT_PASS) { passes++; pass_maps += has; }
        }
        ck_assert_msg(fails > 0 && passes > 0 && fail_maps == fails && pass_maps == (all ? passes : 0),
                      "all %d: %d/%d failing and %d/%d passing cases with heatmaps", all, fail_maps, fails, pass_maps,
                      passes);
        mmp_run_clear(&r);
    }
    ck_assert_int_eq(run("validate --heatmaps some -o @/h.json"), 2);
}
END_TEST

/* The .npy file dir/name: its header (the test fails on a bad one) and the value of element
 * (i, j) as a double (f4 or f8). */
static void npy_read(mmp_npy_array *h, double *at, const char *dir, const char *name, int64_t i, int64_t j)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    static unsigned char bytes[1 << 20];
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: missing", path);
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    size_t off;
    ck_assert_msg(mmp_npy_parse_header(h, &off, bytes, n) == MMP_STATUS_OK, "%s: %s", path, mmp_error_last());
    size_t item = mmp_npy_item_bytes(h->descr);
    ck_assert_uint_eq(n - off, (size_t)h->shape[0] * (size_t)h->shape[1] * item);
    size_t idx = h->fortran_order ? (size_t)(j * h->shape[0] + i) : (size_t)(i * h->shape[1] + j);
    if (!at) return;
    if (!strcmp(h->descr, "<f4")) { float x; memcpy(&x, bytes + off + idx * 4, 4); *at = x; }
    else { ck_assert_str_eq(h->descr, "<f8"); memcpy(at, bytes + off + idx * 8, 8); }
}

/* --save-failures DIR: a FAIL case's inputs, output and reference as .npy files that parse,
 * with the shapes of the case, D differing from the reference at the reported first position,
 * a README with the re-run command (which does not save again); a PASS case writes nothing; a
 * directory that cannot be made is exit 3 before any case; a save that fails is a note in the
 * message, the verdict and exit code unchanged. */
START_TEST(test_save_failures)
{
    int rc = run("validate --mutants --filter mut_host_drop_k_tile/*/exact/*,host_f32/*/exact/* --save-failures "
                 "@/fail/here -o @/r.json");
    ck_assert_msg(rc == 1, "exit %d: %s", rc, err_text);
    ck_assert_msg(!strstr(err_text, "re-run: mmaprobe validate --case 'mut_host_drop_k_tile/f16.f16.f32/64x64x128/exact/s42' --mutants --save"),
                  "%s", err_text);
    char json[256], dir[512];
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    mmp_run r;
    read_doc(&r, json);
    int fails = 0, passes = 0;
    for (size_t c = 0; c < r.n_cases; c++) {
        const mmp_case_result *x = &r.cases[c];
        char name[256];
        snprintf(name, sizeof name, "%s", x->id);
        for (char *p = name; *p; p++) if (*p == '/') *p = '_';
        snprintf(dir, sizeof dir, "%s/fail/here/%s", tmpdir, name);
        if (x->verdict == MMP_VERDICT_PASS) {
            passes++;
            ck_assert_msg(access(dir, F_OK) != 0, "a PASS case saved %s", dir);
            continue;
        }
        ck_assert_int_eq(x->verdict, MMP_VERDICT_FAIL);
        fails++;
        ck_assert_msg(strstr(x->message, "failure data in ") && strstr(x->message, name), "%s", x->message);
        int64_t m, n, k, bi = x->metrics.first_bad_i, bj = x->metrics.first_bad_j;
        ck_assert_int_eq(sscanf(strchr(strchr(x->id, '/') + 1, '/') + 1, "%" SCNd64 "x%" SCNd64 "x%" SCNd64, &m, &n, &k), 3);
        mmp_npy_array h;
        double d, want, want64;
        npy_read(&h, NULL, dir, "A.npy", 0, 0);
        ck_assert(!strcmp(h.descr, "<f2") && h.shape[0] == m && h.shape[1] == k);
        npy_read(&h, NULL, dir, "B.npy", 0, 0);
        ck_assert(!strcmp(h.descr, "<f2") && h.shape[0] == k && h.shape[1] == n);
        ck_assert_msg(bi >= 0 && bj >= 0, "no first failing position");
        npy_read(&h, &d, dir, "D.npy", bi, bj);
        ck_assert(h.shape[0] == m && h.shape[1] == n);
        npy_read(&h, &want, dir, "reference.npy", bi, bj);
        ck_assert(h.shape[0] == m && h.shape[1] == n);
        npy_read(&h, &want64, dir, "reference_f64.npy", bi, bj);
        printf("%s: (%lld,%lld) D %g, reference %g (binary64 %g)\n", x->id, (long long)bi, (long long)bj, d, want, want64);
        ck_assert_msg(d != want, "D equals the reference at the first failing position");
        char readme[600];
        snprintf(readme, sizeof readme, "%s/README.txt", dir);
        slurp(out_text, sizeof out_text, readme);
        char want_line[512];
        snprintf(want_line, sizeof want_line, "re-run: mmaprobe validate --case '%s' --mutants\n", x->id);
        char verdict_msg[600];   /* the message as the verdict left it, before the note */
        snprintf(verdict_msg, sizeof verdict_msg, "message: %.*s\n", (int)(strstr(x->message, "; failure data in") - x->message),
                 x->message);
        ck_assert_msg(strstr(out_text, want_line) && strstr(out_text, "np.load") && strstr(out_text, verdict_msg) &&
                          !strstr(out_text, "--save-failures"),
                      "%s", out_text);
        ck_assert_ptr_nonnull(strstr(out_text, "first failing element (i, j)"));
    }
    ck_assert_msg(fails >= 1 && passes >= 1, "%d FAIL, %d PASS", fails, passes);
    mmp_run_clear(&r);
    /* not a directory: exit 3 before any case */
    write_file("plain", "x\n");
    rc = run("validate --filter host_f32/*/exact/* --save-failures @/plain/sub -o @/r.json");
    ck_assert_msg(rc == 3 && strstr(last_err_line(), "cannot write --save-failures"), "exit %d: %s", rc, err_text);
    /* the case's directory taken by a file: the save fails, the result stands */
    snprintf(dir, sizeof dir, "%s/blocked", tmpdir);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    write_file("blocked/mut_host_drop_k_tile_f16.f16.f32_64x64x128_exact_s42", "a file\n");
    rc = run("validate --case mut_host_drop_k_tile/f16.f16.f32/64x64x128/exact/s42 --mutants --save-failures @/blocked "
             "-o @/r.json");
    ck_assert_msg(rc == 1 && strstr(out_text, "0 pass, 1 fail"), "exit %d: %s", rc, out_text);
    read_doc(&r, json);
    ck_assert_msg(strstr(r.cases[0].message, "failure data not saved: ") && strstr(r.cases[0].message, "exact-mismatch"),
                  "%s", r.cases[0].message);
    mmp_run_clear(&r);
    /* above the per-case limit (MMP_FAULT_SAVE_LIMIT stands in for 2 GiB): nothing written, said */
    setenv("MMP_FAULT_SAVE_LIMIT", "1000", 1);
    rc = run("validate --case mut_host_drop_k_tile/f16.f16.f32/64x64x128/exact/s42 --mutants --save-failures @/small "
             "-o @/r.json");
    unsetenv("MMP_FAULT_SAVE_LIMIT");
    ck_assert_msg(rc == 1, "exit %d: %s", rc, err_text);
    read_doc(&r, json);
    ck_assert_msg(strstr(r.cases[0].message, "failure data not saved: 114688 bytes of data, above the limit of 1000 bytes"),
                  "%s", r.cases[0].message);
    mmp_run_clear(&r);
    snprintf(dir, sizeof dir, "%s/small/mut_host_drop_k_tile_f16.f16.f32_64x64x128_exact_s42", tmpdir);
    ck_assert_int_ne(access(dir, F_OK), 0);
}
END_TEST

/* Every subcommand: -h and --help print its usage on stdout and exit 0; an unknown option is
 * one line naming it and exit 2 (report, diff and merge add their usage line after it). */
START_TEST(test_help_and_unknown_everywhere)
{
    static const char *const cmds[] = {"env", "list", "validate", "probe", "report", "diff", "merge"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        for (int longer = 0; longer < 2; longer++) {
            char args[64], want[64];
            snprintf(args, sizeof args, "%s %s", cmds[i], longer ? "--help" : "-h");
            int rc = run(args);
            snprintf(want, sizeof want, "usage: mmaprobe %s", cmds[i]);
            ck_assert_msg(rc == 0 && strstr(out_text, want) && !err_text[0], "%s: exit %d\n%s\n%s", args, rc, out_text,
                          err_text);
        }
        char args[64];
        snprintf(args, sizeof args, "%s --frobnicate=3", cmds[i]);
        int rc = run(args);
        ck_assert_msg(rc == 2 && strstr(err_text, "unknown option '--frobnicate'") && strstr(err_text, "mmaprobe"),
                      "%s: exit %d %s", args, rc, err_text);
        ck_assert_msg(!strstr(err_text, "unrecognized"), "getopt printed its own message: %s", err_text);
    }
}
END_TEST

START_TEST(test_progress_lines)
{
    const mmp_kernel_desc *k1 = mmp_registry_find("host_f32", MMP_REGISTRY_ALL);
    const mmp_kernel_desc *k2 = mmp_registry_find("host_f64", MMP_REGISTRY_ALL);
    mmp_case c[3];
    mmp_case_init(&c[0], k1, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[1], k1, 9, 8, 8, MMP_DIST_UNIFORM, 1);
    mmp_case_init(&c[2], k2, 8, 8, 8, MMP_DIST_UNIFORM, 1);
    for (int tty = 0; tty < 2; tty++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        mmp_progress p;
        mmp_progress_init(&p, f, c, 3, tty);
        for (int i = 0; i < 3; i++) {
            mmp_case_result r;
            mmp_case_result_init(&r);
            snprintf(r.id, sizeof r.id, "%s", c[i].id);
            r.verdict = i == 1 ? MMP_VERDICT_FAIL : MMP_VERDICT_PASS;
            r.reasons = i == 1 ? MMP_REASON_GUARD : 0;
            mmp_progress_result(&p, &r, (size_t)i);
        }
        mmp_progress_finish(&p);
        fclose(f);
        printf("tty=%d:\n%s\n", tty, buf);
        ck_assert_ptr_nonnull(strstr(buf, "host_f32: 2/2 cases done | all: 2/3"));
        ck_assert_ptr_nonnull(strstr(buf, "host_f64: 1/1 cases done | all: 3/3, 0s left"));
        ck_assert_ptr_nonnull(strstr(buf, "FAIL  host_f32/f32.f32.f32/9x8x8/uniform/s1 (guard)"));
        if (tty) ck_assert_ptr_nonnull(strstr(buf, "host_f32: 1/2 cases, "));
        else ck_assert_ptr_null(strstr(buf, "\033[K"));
        free(buf);
    }
    char d[32];
    mmp_progress_duration(d, sizeof d, 3725);
    ck_assert_str_eq(d, "1h02m");
    mmp_progress_duration(d, sizeof d, 185);
    ck_assert_str_eq(d, "3m05s");
    mmp_progress_duration(d, sizeof d, NAN);
    ck_assert_str_eq(d, "0s");
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, test_bad_plugins_exit_2);
    tcase_add_test(tc, test_no_device);
    tcase_add_test(tc, test_full_disk_dev_full);
    tcase_add_test(tc, test_full_disk_after_n);
    tcase_add_test(tc, test_sigint);
    tcase_add_test(tc, test_sigterm);
    tcase_add_test(tc, test_faulty_kernels_run_continues);
    tcase_add_test(tc, test_timeout_and_maxfail);
    tcase_add_test(tc, test_parent_killed);
    tcase_add_test(tc, test_plugin_only);
    tcase_add_test(tc, test_out_of_memory);
    tcase_add_test(tc, test_sanitize);
    tcase_add_test(tc, test_progress_lines);
    tcase_add_test(tc, test_failures_rerun);
    tcase_add_test(tc, test_help_and_unknown_everywhere);
    tcase_add_test(tc, test_save_failures);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(cli_suite)
