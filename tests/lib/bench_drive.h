/* tests/lib/bench_drive.h — what the tests of `mmaprobe bench` (check_bench.c, check_gpu_bench.c)
 * share: running the program with its output captured, the bench document read back and
 * checked for its header, a row of it, its fields, a line of the table.
 *
 * Usage (after tests/lib/drive.h, with MMP_BINARY defined):
 *   ck_assert_int_eq(run("bench --filter host_f32 --json @/b.json"), 0);
 *   const mmp_json *r = row_of(read_doc("b.json"), "host_f32");
 *   ck_assert_str_eq(field(r, "state"), "timed");
 */
#ifndef MMAPROBE_TESTS_BENCH_DRIVE_H
#define MMAPROBE_TESTS_BENCH_DRIVE_H

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/json.h"
#include "tests/lib/drive.h"

/* The program where CMake built it, else (a build carried to another machine: run-all.sh)
 * mmaprobe beside this test's folder, as MMP_TEST_BINARY for drive_binary(). */
static inline void bench_find_binary(void)
{
    const char *b = getenv("MMP_TEST_BINARY");
    if ((b && *b) || access(MMP_BINARY, X_OK) == 0) return;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
    if (n <= 0) return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return;
    snprintf(slash, sizeof self - (size_t)(slash - self), "/../mmaprobe");
    if (access(self, X_OK) == 0) setenv("MMP_TEST_BINARY", self, 1);
}

/* Run "mmaprobe args..." ("@": the temp dir); stdout and stderr into out_text and err_text. */
static inline int run(const char *args) { return drive_finish(drive_start(drive_split(args), NULL), 600, NULL, NULL); }

static mmp_json *doc;
static char doc_text[1 << 20];

/* The bench document at @/name, parsed (the test fails with the reader's message otherwise). */
static inline const mmp_json *read_doc(const char *name)
{
    char p[256];
    path_in(p, sizeof p, name);
    slurp(doc_text, sizeof doc_text, p);
    ck_assert_msg(doc_text[0], "no document at %s", p);
    mmp_json_free(doc);
    doc = NULL;
    ck_assert_msg(mmp_json_parse(&doc, doc_text, strlen(doc_text), name) == MMP_STATUS_OK, "%s", mmp_error_last());
    const mmp_json *f = mmp_json_get(doc, "format");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->str, "mmaprobe-bench");
    const mmp_json *env = mmp_json_get(doc, "env");
    ck_assert_ptr_nonnull(env);
    ck_assert_ptr_nonnull(mmp_json_get(env, "git_sha"));
    ck_assert_ptr_nonnull(mmp_json_get(env, "mpfr"));
    return doc;
}

/* The row of kernel in the document (the first one). */
static inline const mmp_json *row_of(const mmp_json *d, const char *kernel)
{
    const mmp_json *rows = mmp_json_get(d, "rows");
    ck_assert_ptr_nonnull(rows);
    for (size_t i = 0; i < rows->n; i++) {
        const mmp_json *k = mmp_json_get(rows->items[i], "kernel");
        if (k && !strcmp(k->str, kernel)) return rows->items[i];
    }
    ck_abort_msg("no row of %s in the document", kernel);
    return NULL;
}

static inline const char *field(const mmp_json *obj, const char *key)
{
    const mmp_json *v = mmp_json_get(obj, key);
    ck_assert_msg(v && v->type == MMP_JSON_STRING, "no string %s", key);
    return v->str;
}

static inline double number(const mmp_json *obj, const char *key)
{
    double x = 0;
    const mmp_json *v = mmp_json_get(obj, key);
    ck_assert_msg(v && mmp_json_double(&x, v) == 0, "no number %s", key);
    return x;
}

/* A line of the table that holds all of a, b and c. */
static inline int table_has(const char *a, const char *b, const char *c)
{
    for (const char *line = out_text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), line);
        if (strstr(buf, a) && strstr(buf, b) && strstr(buf, c)) return 1;
        line = end ? end + 1 : NULL;
    }
    return 0;
}

#endif
