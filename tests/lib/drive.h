/* tests/lib/drive.h — the pieces every test that drives the built program (check_cli,
 * check_inputs, check_outputs, check_channel) shares: a temporary directory per test, its
 * files, an argument string split into argv, starting the program with its stdout/stderr in
 * files and waiting for it under a kill limit, the captured output and its last line. What a
 * test changes in the child (limits, descriptors, signals) is its in_child hook.
 *
 * Usage:
 *   static void setup(void) { drive_tmpdir_make("check_x"); }
 *   static void teardown(void) { drive_tmpdir_remove(); }
 *   char *const *argv = drive_split("validate --suite @/s.suite");   // "@": the temp dir
 *   int rc = drive_finish(drive_start(argv, NULL), 60, NULL, NULL);   // out_text, err_text
 */
#ifndef MMAPROBE_TESTS_DRIVE_H
#define MMAPROBE_TESTS_DRIVE_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/check_main.h"

static char tmpdir[64];                             /* this test's temporary directory */
static char out_text[1 << 16], err_text[1 << 16];   /* the last run's stdout and stderr */

static inline void drive_tmpdir_make(const char *name)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/%s.XXXXXX", name);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static inline void drive_tmpdir_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) { /* leftovers in /tmp only */ }
}

/* The program under test: MMP_BINARY, or MMP_TEST_BINARY (to check that a test fails on an
 * older build). */
static inline const char *drive_binary(void)
{
    const char *b = getenv("MMP_TEST_BINARY");
    return b && *b ? b : MMP_BINARY;
}

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static inline void path_in(char *buf, size_t size, const char *name) { snprintf(buf, size, "%s/%s", tmpdir, name); }

/* The file at path (at most size - 1 bytes) into buf, NUL-terminated; "" when it cannot be read. */
static inline void slurp(char *buf, size_t size, const char *path)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static inline void write_file(const char *name, const char *text)
{
    char p[512];
    path_in(p, sizeof p, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Lines in the file at path (0 when it cannot be read). */
static inline size_t count_lines(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = 0;
    for (int c; (c = getc(f)) != EOF;) n += c == '\n';
    fclose(f);
    return n;
}

/* "a b @/c" split at spaces into a NULL-terminated argv whose argv[0] is "mmaprobe" ("@" is the
 * temp dir); static storage, valid until the next call. */
static inline char **drive_split(const char *args)
{
    static char buf[8192];
    static char *argv[64];
    int argc = 0;
    argv[argc++] = "mmaprobe";
    size_t b = 0;
    for (const char *p = args; *p && b < sizeof buf - 128 && argc < 63;) {
        while (*p == ' ') p++;
        if (!*p) break;
        argv[argc++] = buf + b;
        for (; *p && *p != ' '; p++) {
            if (*p == '@') b += (size_t)snprintf(buf + b, sizeof buf - b, "%s", tmpdir);
            else buf[b++] = *p;
        }
        buf[b++] = '\0';
    }
    argv[argc] = NULL;
    return argv;
}

/* Start the program (drive_binary()) with argv (NULL-terminated, argv[0] ignored): stdout and
 * stderr to @/stdout and @/stderr, CI=1 (plain progress lines); in_child (may be NULL) runs in
 * the child just before exec (limits, descriptors, signals). */
static inline pid_t drive_start(char *const *argv, void (*in_child)(void))
{
    char o[128], e[128];
    path_in(o, sizeof o, "stdout");
    path_in(e, sizeof e, "stderr");
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fo, 1);
        dup2(fe, 2);
        setenv("CI", "1", 1);
        if (in_child) in_child();
        execv(drive_binary(), argv);
        _exit(127);
    }
    return pid;
}

/* Wait for pid at most limit_s seconds, then kill it (the test fails: a hang); stdout and
 * stderr into out_text and err_text; the exit code (the test fails on a signal). *took: the
 * seconds it ran, *maxrss_kb: its peak resident memory (either may be NULL). */
static inline int drive_finish(pid_t pid, double limit_s, double *took, long *maxrss_kb)
{
    double t0 = now_s();
    int st = 0, done = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (!done) {
        if (wait4(pid, &st, WNOHANG, &ru) == pid) done = 1;
        else if (now_s() - t0 > limit_s) break;
        else usleep(2000);
    }
    if (took) *took = now_s() - t0;
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    if (maxrss_kb) *maxrss_kb = ru.ru_maxrss;
    char o[128], e[128];
    path_in(o, sizeof o, "stdout");
    path_in(e, sizeof e, "stderr");
    slurp(out_text, sizeof out_text, o);
    slurp(err_text, sizeof err_text, e);
    ck_assert_msg(done, "mmaprobe still running after %g s (killed): %s", limit_s, err_text);
    ck_assert_msg(WIFEXITED(st), "mmaprobe died of signal %d: %s", WIFSIGNALED(st) ? WTERMSIG(st) : 0, err_text);
    return WEXITSTATUS(st);
}

/* The last non-empty line of stderr (the one-line error). */
static inline const char *last_err_line(void)
{
    static char line[2048];
    size_t n = strlen(err_text);
    while (n && err_text[n - 1] == '\n') n--;
    size_t b = n;
    while (b && err_text[b - 1] != '\n') b--;
    snprintf(line, sizeof line, "%.*s", (int)(n - b), err_text + b);
    return line;
}

#endif
