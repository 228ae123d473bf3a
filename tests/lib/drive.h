/* tests/lib/drive.h — the pieces every test that drives the built program (check_cli,
 * check_inputs, check_outputs, check_channel) shares: a temporary directory per test, its
 * files, an argument string split into argv, the captured stdout/stderr and its last line.
 * How each test starts the program (limits, descriptors, signals) stays in that test.
 *
 * Usage:
 *   static void setup(void) { drive_tmpdir_make("check_x"); }
 *   static void teardown(void) { drive_tmpdir_remove(); }
 *   char *const *argv = drive_split("validate --suite @/s.suite");   // "@": the temp dir
 *   ... run it with stdout/stderr to files, then slurp(out_text, sizeof out_text, path) ...
 */
#ifndef MMAPROBE_TESTS_DRIVE_H
#define MMAPROBE_TESTS_DRIVE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
