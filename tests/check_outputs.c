/* check_outputs.c — the outputs of the built program (MMP_BINARY, or $MMP_TEST_BINARY to try
 * another build) under hostile paths, faults and signals:
 *   - `-o` / `--json` naming a FIFO, a directory, a device or a socket is exit 3 with one line
 *     "cannot write PATH: not a regular file (a FIFO)" before any work, and the node stays;
 *     a symbolic link is written through to its target and stays a link;
 *   - every output (validate, report, diff, merge, probe) is atomic: a write error leaves the
 *     previous file as it was (MMP_FAULT_WRITE_AFTER, and a real EFBIG from RLIMIT_FSIZE);
 *   - a closed stdout (SIGPIPE) does not lose the run; SIGHUP stops it with a partial report;
 *   - a second run on the same RUN.json stops before any case; a run killed with SIGKILL leaves
 *     no lock behind, and its predecessor's RUN.json set aside as RUN.json.prev;
 *   - under address-space limits the run ends promptly, a case without memory is ERROR
 *     "out of memory" (no hang in fork(), no timeout).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "mmaprobe/report.h"
#include "tests/check_main.h"
#include "tests/lib/drive.h"

#ifndef MMP_BINARY
#error "MMP_BINARY (path of the mmaprobe program) must be defined by CMake"
#endif

static rlim_t child_as_limit;     /* RLIMIT_AS for the program (0 = unchanged) */
static rlim_t child_fsize_limit;  /* RLIMIT_FSIZE for the program (0 = unchanged) */
static int child_stdout_broken;   /* stdout a pipe nobody reads (its reader closed) */

static void kill_descendants(pid_t pid);

/* Every process a test started, and every one orphaned to it, ended: also when an assertion
 * ends the test early (Check's forked test calls exit, so this runs). */
static void end_all(void)
{
    for (int round = 0; round < 5; round++) {
        kill_descendants(getpid());
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
    }
}

static void setup(void)
{
    drive_tmpdir_make("check_outputs");
    child_as_limit = child_fsize_limit = 0;
    child_stdout_broken = 0;
    /* a kernel's process orphaned by a killed run comes back to this test, which ends it */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    atexit(end_all);
}

static void teardown(void)
{
    end_all();
    drive_tmpdir_remove();
}

/* Start mmaprobe with argv; stdout/stderr to TAG.out / TAG.err in the temp dir. */
static pid_t start_tagged(char *const *argv, const char *tag)
{
    char o[128], e[128];
    snprintf(o, sizeof o, "%s/%s.out", tmpdir, tag);
    snprintf(e, sizeof e, "%s/%s.err", tmpdir, tag);
    int broken[2] = {-1, -1};
    if (child_stdout_broken) ck_assert_int_eq(pipe(broken), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (child_stdout_broken) {
            close(broken[0]);   /* the reader is gone before the first write: `| head -0` */
            dup2(broken[1], 1);
        } else {
            dup2(fo, 1);
        }
        dup2(fe, 2);
        signal(SIGPIPE, SIG_DFL);   /* as a shell starts a program */
        signal(SIGXFSZ, SIG_DFL);
        setenv("CI", "1", 1);
        if (child_as_limit) {
            struct rlimit rl = {child_as_limit, child_as_limit};
            setrlimit(RLIMIT_AS, &rl);
        }
        if (child_fsize_limit) {
            struct rlimit rl = {child_fsize_limit, child_fsize_limit};
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        execv(drive_binary(), argv);
        _exit(127);
    }
    if (child_stdout_broken) {
        close(broken[0]);
        close(broken[1]);
    }
    return pid;
}

/* Every descendant of pid, killed (with its process group): what a killed run left behind. */
static void kill_descendants(pid_t pid)
{
    char p[64], buf[4096];
    snprintf(p, sizeof p, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    slurp(buf, sizeof buf, p);
    for (char *s = buf, *e; *s; s = e) {
        long c = strtol(s, &e, 10);
        if (e == s) break;
        if (c > 0) {
            kill_descendants((pid_t)c);
            kill(-(pid_t)c, SIGKILL);
            kill((pid_t)c, SIGKILL);
        }
    }
}

/* Wait at most limit_s seconds; on expiry kill it and what it started, and return -1.
 * Else the exit code (a death by signal fails the test), stdout/stderr in out_text/err_text. */
static int finish_tagged(pid_t pid, const char *tag, double limit_s)
{
    int st = 0, timed_out = 0;
    double t0 = now_s();
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) break;
        ck_assert_int_eq(r, 0);
        if (now_s() - t0 > limit_s) {
            kill_descendants(pid);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            timed_out = 1;
            break;
        }
        usleep(20000);
    }
    char o[128], e[128];
    snprintf(o, sizeof o, "%s/%s.out", tmpdir, tag);
    snprintf(e, sizeof e, "%s/%s.err", tmpdir, tag);
    slurp(out_text, sizeof out_text, o);
    slurp(err_text, sizeof err_text, e);
    if (timed_out) return -1;
    if (!WIFEXITED(st)) kill_descendants(getpid());   /* what it left, now ours (a subreaper) */
    ck_assert_msg(WIFEXITED(st), "mmaprobe died of signal %d: %s", WIFSIGNALED(st) ? WTERMSIG(st) : 0, err_text);
    return WEXITSTATUS(st);
}

static int run(const char *args)
{
    int rc = finish_tagged(start_tagged(drive_split(args), "run"), "run", 60);
    ck_assert_msg(rc >= 0, "%s: still running after 60 s", args);
    return rc;
}

static int is_kind(const char *path, mode_t kind)
{
    struct stat s;
    return lstat(path, &s) == 0 && (s.st_mode & S_IFMT) == kind;
}

static int exists(const char *path)
{
    struct stat s;
    return lstat(path, &s) == 0;
}

/* A run document on disk (NULL: none or unreadable). */
static int read_run(mmp_run *r, const char *path)
{
    mmp_run_init(r);
    return mmp_report_read_json(r, path) == MMP_STATUS_OK;
}

static int same_text(const char *path, const char *want)
{
    static char got[1 << 16];
    slurp(got, sizeof got, path);
    return strcmp(got, want) == 0;
}

/* No temporary file of an atomic write left in the temp dir. */
static int no_temp_files(void)
{
    DIR *d = opendir(tmpdir);
    ck_assert_ptr_nonnull(d);
    int clean = 1;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp.")) clean = 0;
    closedir(d);
    return clean;
}

static void make_socket(const char *path)
{
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    close(s);   /* the socket node stays */
}

static void one_run(const char *name)
{
    write_file("one.suite", "shape=8x8x8 dist=uniform kernel=host_f32\n");
    char args[256];
    snprintf(args, sizeof args, "validate --suite @/one.suite -o @/%s", name);
    ck_assert_msg(run(args) == 0, "%s", err_text);
}

/* ---- item: outputs are regular files ---- */

static const char *const commands[] = {
    "validate --suite @/one.suite -o %s",
    "report @/r.json -o %s",
    "diff @/r.json @/r.json -o %s",
    "merge @/r.json -o %s",
    "probe --layout --json %s",
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

START_TEST(test_special_outputs_refused)
{
    one_run("r.json");
    char fifo[256], dir[256], dev[256], sock[256];
    path_in(fifo, sizeof fifo, "fifo");
    path_in(dir, sizeof dir, "dir");
    path_in(dev, sizeof dev, "null");   /* a link to /dev/null: followed, and refused */
    path_in(sock, sizeof sock, "sock");
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(symlink("/dev/null", dev), 0);
    make_socket(sock);
    const struct {
        const char *path, *kind;
        mode_t mode;
    } nodes[] = {{fifo, "a FIFO", S_IFIFO}, {dir, "a directory", S_IFDIR}, {dev, "a character device", S_IFLNK},
                 {sock, "a socket", S_IFSOCK}};
    for (size_t c = 0; c < N_COMMANDS; c++)
        for (size_t k = 0; k < sizeof nodes / sizeof nodes[0]; k++) {
            char args[512], want[512];
            snprintf(args, sizeof args, commands[c], nodes[k].path);
            int rc = run(args);
            printf("%-60s -> %d  %s\n", args, rc, last_err_line());
            snprintf(want, sizeof want, "cannot write %s: not a regular file (%s)", nodes[k].path, nodes[k].kind);
            ck_assert_msg(rc == 3, "%s: exit %d (%s)", args, rc, err_text);
            ck_assert_msg(strstr(last_err_line(), want), "%s: '%s' should say '%s'", args, last_err_line(), want);
            ck_assert_msg(is_kind(nodes[k].path, nodes[k].mode), "%s: %s was replaced", args, nodes[k].path);
            ck_assert_msg(!strstr(err_text, "[1/") && !strstr(out_text, "layout:"), "%s: work ran: %s", args, err_text);
            char jl[300];
            snprintf(jl, sizeof jl, "%s.jsonl", nodes[k].path);
            ck_assert_msg(!exists(jl), "%s: %s was made", args, jl);
        }
    ck_assert(is_kind("/dev/null", S_IFCHR));
}
END_TEST

/* The JSON-lines file beside RUN.json is an output too: a link to /dev/full or a FIFO there is
 * refused before any case (a FIFO without a reader used to block the open forever). */
START_TEST(test_jsonl_special_refused)
{
    write_file("one.suite", "shape=8x8x8 dist=uniform kernel=host_f32\n");
    char jl[256];
    path_in(jl, sizeof jl, "r.json.jsonl");
    ck_assert_int_eq(symlink("/dev/full", jl), 0);
    int rc = finish_tagged(start_tagged(drive_split("validate --suite @/one.suite -o @/r.json"), "run"), "run", 20);
    printf("jsonl -> /dev/full: %d  %s\n", rc, last_err_line());
    ck_assert_int_eq(rc, 3);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "r.json.jsonl: not a regular file (a character device)"));
    ck_assert_ptr_null(strstr(err_text, "[1/"));
    ck_assert(is_kind(jl, S_IFLNK));
    unlink(jl);
    ck_assert_int_eq(mkfifo(jl, 0644), 0);
    rc = finish_tagged(start_tagged(drive_split("validate --suite @/one.suite -o @/r.json"), "run"), "run", 20);
    printf("jsonl a FIFO: %d  %s\n", rc, last_err_line());
    ck_assert_msg(rc == 3, "exit %d (-1: blocked)", rc);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "r.json.jsonl: not a regular file (a FIFO)"));
    ck_assert(is_kind(jl, S_IFIFO));
}
END_TEST

/* A symbolic link is followed: its target (existing or not) gets the document, the link stays. */
START_TEST(test_symlink_written_through)
{
    write_file("real.json", "old\n");
    char link[256], real[256], dangle[256], made[256];
    path_in(link, sizeof link, "link.json");
    path_in(real, sizeof real, "real.json");
    path_in(dangle, sizeof dangle, "dangle.json");
    path_in(made, sizeof made, "made.json");
    ck_assert_int_eq(symlink("real.json", link), 0);   /* relative: from the link's folder */
    one_run("link.json");
    ck_assert(is_kind(link, S_IFLNK));
    mmp_run r;
    ck_assert_msg(read_run(&r, real), "%s", mmp_error_last());
    ck_assert_uint_eq(r.n_cases, 1);
    mmp_run_clear(&r);
    char prev[300];
    snprintf(prev, sizeof prev, "%s.prev", real);
    ck_assert(!exists(prev));
    ck_assert_int_eq(run("report @/link.json -o @/link.json"), 0);
    ck_assert(is_kind(link, S_IFLNK));
    ck_assert_int_eq(symlink("made.json", dangle), 0);
    write_file("one.suite", "shape=8x8x8 dist=uniform kernel=host_f32\n");
    one_run("r.json");
    ck_assert_int_eq(run("merge @/r.json -o @/dangle.json"), 0);
    ck_assert(is_kind(dangle, S_IFLNK));
    ck_assert(is_kind(made, S_IFREG));
    ck_assert(read_run(&r, made));
    mmp_run_clear(&r);
    ck_assert_int_eq(chmod(made, 0640), 0);
    ck_assert_int_eq(run("merge @/r.json -o @/dangle.json"), 0);
    struct stat s;
    ck_assert_int_eq(stat(made, &s), 0);
    ck_assert_int_eq(s.st_mode & 0777, 0640);   /* a replaced file keeps its permissions */
}
END_TEST

/* ---- item: every output atomic ---- */

static const char *const atomic_commands[] = {
    "validate --suite @/one.suite -o @/out",
    "report @/r.json -o @/out",
    "report @/r.json --format html -o @/out",
    "diff @/r.json @/r.json -o @/out",
    "merge @/r.json -o @/out",
    "probe --arith --synthetic H200 --instr wgmma.e5m2.f32.chain4 --random 10 --json @/out",
};
#define N_ATOMIC (sizeof atomic_commands / sizeof atomic_commands[0])

static const char previous[] = "the previous good file\n";

START_TEST(test_write_error_keeps_previous_file)
{
    one_run("r.json");
    for (size_t c = 0; c < N_ATOMIC; c++) {
        write_file("out", previous);
        setenv("MMP_FAULT_WRITE_AFTER", "16", 1);   /* the disk fills after 16 bytes */
        int rc = run(atomic_commands[c]);
        unsetenv("MMP_FAULT_WRITE_AFTER");
        printf("%-60s -> %d  %s\n", atomic_commands[c], rc, last_err_line());
        char out[256];
        path_in(out, sizeof out, "out");
        ck_assert_msg(rc == 3, "%s: exit %d (%s)", atomic_commands[c], rc, err_text);
        ck_assert_msg(strstr(last_err_line(), "No space left on device") || strstr(err_text, "No space left on device"),
                      "%s: %s", atomic_commands[c], err_text);
        if (c == 0) {   /* validate set the previous document aside when it started: it stays there */
            char prev[300];
            snprintf(prev, sizeof prev, "%s.prev", out);
            ck_assert_msg(!exists(out) && same_text(prev, previous), "validate: the previous file was changed");
            unlink(prev);
        } else {
            ck_assert_msg(same_text(out, previous), "%s: the previous file was changed", atomic_commands[c]);
        }
        ck_assert_msg(no_temp_files(), "%s: a temporary file was left", atomic_commands[c]);
    }
}
END_TEST

/* A real write error (EFBIG: the file-size limit, whose SIGXFSZ must not kill the program). */
START_TEST(test_file_size_limit_keeps_previous_file)
{
    one_run("r.json");
    static const char *const cmds[] = {"report @/r.json -o @/out", "merge @/r.json -o @/out"};
    for (size_t c = 0; c < 2; c++) {
        write_file("out", previous);
        child_fsize_limit = 200;
        int rc = run(cmds[c]);
        child_fsize_limit = 0;
        printf("%-40s RLIMIT_FSIZE 200 -> %d  %s\n", cmds[c], rc, last_err_line());
        char out[256];
        path_in(out, sizeof out, "out");
        ck_assert_msg(rc == 3, "%s: exit %d (%s)", cmds[c], rc, err_text);
        ck_assert_ptr_nonnull(strstr(last_err_line(), "File too large"));
        ck_assert_msg(same_text(out, previous), "%s: the previous file was changed", cmds[c]);
        ck_assert(no_temp_files());
        ck_assert_int_eq(run(cmds[c]), 0);   /* without the limit: written */
        ck_assert(!same_text(out, previous));
    }
}
END_TEST

/* ---- item: signals ---- */

/* `validate ... | head -0`: the closed stdout is no reason to lose the run. */
START_TEST(test_closed_stdout)
{
    write_file("one.suite", "shape=8x8x8 dist=uniform kernel=host_f32\n");
    child_stdout_broken = 1;
    int rc = run("validate --suite @/one.suite -o @/r.json");
    printf("validate | (closed) -> %d  %s\n", rc, last_err_line());
    ck_assert_int_eq(rc, 0);
    char json[256];
    path_in(json, sizeof json, "r.json");
    mmp_run r;
    ck_assert_msg(read_run(&r, json), "%s", mmp_error_last());
    ck_assert_int_eq(r.complete, 1);
    ck_assert_uint_eq(r.n_cases, 1);
    mmp_run_clear(&r);
    rc = run("report @/r.json");   /* nothing written: said, exit 3 */
    child_stdout_broken = 0;
    printf("report | (closed) -> %d  %s\n", rc, last_err_line());
    ck_assert_int_eq(rc, 3);
    ck_assert_ptr_nonnull(strstr(last_err_line(), "Broken pipe"));
}
END_TEST

static void wait_lines(const char *jl, size_t n)
{
    for (int i = 0; i < 600 && count_lines(jl) < n; i++) usleep(50000);
    ck_assert_uint_ge(count_lines(jl), n);
}

static void write_slow_suite(void)
{
    write_file("slow.suite", "shape=8x8x8 kernel=host_f32\nshape=8x8x8 kernel=mut_host_hang\nshape=9x9x9 kernel=host_f64\n");
}

START_TEST(test_sighup_partial_report)
{
    write_slow_suite();
    char jl[256], json[256];
    path_in(jl, sizeof jl, "r.json.jsonl");
    path_in(json, sizeof json, "r.json");
    pid_t pid = start_tagged(drive_split("validate --mutants --suite @/slow.suite --timeout 60 -o @/r.json"), "run");
    wait_lines(jl, 1);
    usleep(300000);
    kill(pid, SIGHUP);
    int rc = finish_tagged(pid, "run", 30);
    printf("SIGHUP -> %d  %s\n", rc, last_err_line());
    ck_assert_int_eq(rc, 1);
    ck_assert_ptr_nonnull(strstr(err_text, "interrupted by SIGHUP: partial report"));
    mmp_run r;
    ck_assert_msg(read_run(&r, json), "%s", mmp_error_last());
    ck_assert_int_eq(r.complete, 0);
    ck_assert_str_eq(r.interrupted_by, "SIGHUP");
    ck_assert_uint_eq(r.n_cases, 3);
    ck_assert_int_eq(r.cases[0].verdict, MMP_VERDICT_PASS);
    mmp_run_clear(&r);
}
END_TEST

/* ---- item: one writer per RUN.json; no stale document beside a new run's lines ---- */

START_TEST(test_second_run_refused)
{
    write_slow_suite();
    write_file("one.suite", "shape=8x8x8 dist=uniform kernel=host_f32\n");
    char jl[256];
    path_in(jl, sizeof jl, "r.json.jsonl");
    pid_t first = start_tagged(drive_split("validate --mutants --suite @/slow.suite --timeout 60 -o @/r.json"), "first");
    wait_lines(jl, 1);
    double t0 = now_s();
    int rc = finish_tagged(start_tagged(drive_split("validate --suite @/one.suite -o @/r.json"), "second"), "second", 20);
    printf("second run -> %d in %.1f s  %s\n", rc, now_s() - t0, last_err_line());
    static char second_err[1 << 16];
    snprintf(second_err, sizeof second_err, "%s", err_text);
    size_t lines = count_lines(jl);
    mmp_run r;
    mmp_run_init(&r);
    int jsonl_ok = mmp_run_read_jsonl(&r, jl) == MMP_STATUS_OK && r.n_cases == 1;
    mmp_run_clear(&r);
    kill(first, SIGTERM);   /* before any assertion: nothing is left running */
    int first_rc = finish_tagged(first, "first", 30);
    snprintf(err_text, sizeof err_text, "%s", second_err);
    ck_assert_int_eq(rc, 3);
    char want[256];
    snprintf(want, sizeof want, "r.json is being written by another mmaprobe (pid %d)", (int)first);
    ck_assert_msg(strstr(last_err_line(), want), "'%s' should say '%s'", last_err_line(), want);
    ck_assert_ptr_null(strstr(err_text, "[1/"));
    ck_assert_uint_eq(lines, 1);   /* the first run's line is still there, alone */
    ck_assert(jsonl_ok);
    ck_assert_int_eq(first_rc, 1);
    ck_assert_int_eq(run("validate --suite @/one.suite -o @/r.json"), 0);   /* the lock went with it */
}
END_TEST

START_TEST(test_killed_run_leaves_no_stale_report)
{
    one_run("r.json");   /* a complete document from a previous run */
    write_slow_suite();
    char jl[256], json[256], prev[256];
    path_in(jl, sizeof jl, "r.json.jsonl");
    path_in(json, sizeof json, "r.json");
    path_in(prev, sizeof prev, "r.json.prev");
    ck_assert_int_eq(unlink(jl), 0);   /* the previous run's lines: wait for the new run's */
    pid_t pid = start_tagged(drive_split("validate --mutants --suite @/slow.suite --timeout 60 -o @/r.json"), "killed");
    wait_lines(jl, 1);
    kill_descendants(pid);
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    kill_descendants(getpid());
    ck_assert(WIFSIGNALED(st));
    ck_assert_msg(!exists(json), "the previous run's RUN.json stays beside the new JSON lines");
    mmp_run r;
    ck_assert_msg(read_run(&r, prev), "%s", mmp_error_last());   /* set aside, whole */
    ck_assert_int_eq(r.complete, 1);
    ck_assert_uint_eq(r.n_cases, 1);
    mmp_run_clear(&r);
    mmp_run_init(&r);
    ck_assert_int_eq(mmp_run_read_jsonl(&r, jl), MMP_STATUS_OK);
    ck_assert_uint_ge(r.n_cases, 1);
    mmp_run_clear(&r);
    double t0 = now_s();
    int rc = finish_tagged(start_tagged(drive_split("validate --suite @/one.suite -o @/r.json"), "next"), "next", 20);
    printf("after SIGKILL: next run -> %d in %.1f s\n", rc, now_s() - t0);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err_text);   /* no stale lock */
    ck_assert(read_run(&r, json));
    ck_assert_int_eq(r.complete, 1);
    mmp_run_clear(&r);
    ck_assert(!exists(prev));   /* removed once the new document is written */
}
END_TEST

/* ---- item: memory limits end promptly ---- */

/* Address-space limits from tight to roomy: each run ends within 10 s (with --timeout 0.5 a
 * child hanging in OpenBLAS ran 15 s to its whole-case limit, and a parent stuck in fork()
 * forever); a case that cannot get memory is ERROR "out of memory", never a timeout. */
START_TEST(test_memory_limits_end_promptly)
{
#if defined(__SANITIZE_ADDRESS__)
    printf("ASan build: RLIMIT_AS cannot be used, memory-limit test skipped\n");
    return;
#endif
    write_file("m.suite", "shape=64x64x128 dist=uniform kernel=host_f32\n");
    static const int mib[] = {96, 128, 160, 192, 224, 256, 320, 384, 512, 768, 1024};
    int oom = 0, started = 0;
    char json[256];
    path_in(json, sizeof json, "r.json");
    for (size_t i = 0; i < sizeof mib / sizeof mib[0]; i++) {
        unlink(json);
        child_as_limit = (rlim_t)mib[i] << 20;
        double t0 = now_s();
        int rc = finish_tagged(start_tagged(drive_split("validate --suite @/m.suite --timeout 0.5 -o @/r.json"), "mem"), "mem", 10);
        double dt = now_s() - t0;
        child_as_limit = 0;
        mmp_run r;
        int have = read_run(&r, json);
        printf("RLIMIT_AS %4d MiB -> %d in %.2f s  %s%s%s\n", mib[i], rc, dt, have && r.n_cases ? mmp_verdict_name(r.cases[0].verdict) : "",
               have && r.n_cases ? " " : "", have && r.n_cases ? r.cases[0].message : last_err_line());
        ck_assert_msg(rc >= 0, "RLIMIT_AS %d MiB: still running after 10 s: %s", mib[i], err_text);
        if (strstr(out_text, "# gpu:")) started++;
        if (have && r.n_cases == 1) {
            ck_assert_msg(!(r.cases[0].reasons & MMP_REASON_TIMEOUT), "RLIMIT_AS %d MiB: a timeout, not out of memory", mib[i]);
            if (r.cases[0].verdict == MMP_VERDICT_ERROR) {
                ck_assert_msg(strstr(r.cases[0].message, "out of memory"), "%d MiB: %s", mib[i], r.cases[0].message);
                oom++;
            }
        } else if (rc != 127) {
            ck_assert_msg(rc == 3 || rc == 4 || rc == 1, "RLIMIT_AS %d MiB: exit %d", mib[i], rc);
        }
        if (have) mmp_run_clear(&r);
    }
    printf("%d of the limits started the program, %d gave ERROR out of memory\n", started, oom);
    if (started >= 3) ck_assert_int_ge(oom, 1);   /* the tight ones did, not a timeout */
}
END_TEST

static Suite *outputs_suite(void)
{
    Suite *s = suite_create("outputs");
    TCase *tc = tcase_create("outputs");
    tcase_set_timeout(tc, 240);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_special_outputs_refused);
    tcase_add_test(tc, test_jsonl_special_refused);
    tcase_add_test(tc, test_symlink_written_through);
    tcase_add_test(tc, test_write_error_keeps_previous_file);
    tcase_add_test(tc, test_file_size_limit_keeps_previous_file);
    tcase_add_test(tc, test_closed_stdout);
    tcase_add_test(tc, test_sighup_partial_report);
    tcase_add_test(tc, test_second_run_refused);
    tcase_add_test(tc, test_killed_run_leaves_no_stale_report);
    tcase_add_test(tc, test_memory_limits_end_promptly);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(outputs_suite)
