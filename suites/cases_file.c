/* cases_file.c — custom suites from a text file, one group of cases per line:
 *
 *     # comment; blank lines are ignored
 *     shape=256x256x4096 dist=uniform,normal seed=1,2 kernel=host_*
 *     shape=129x64x64 ld=136.72.72 layout=row.col.row dist=exact alpha=2 beta=0.5
 *
 * shape is required; dist defaults to uniform, seed to the run's seed, kernel to every kernel.
 * Each line expands to kernel x dist x seed. A bad line is MMP_STATUS_PARSE "FILE:LINE: what".
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner_internal.h"
#include "mmaprobe/sysio.h"

#define MAX_LIST 16
#define MAX_LINE 1024
#define MAX_CASES (1 << 18)   /* ~100 MB of cases: a file expanding to more is surely a mistake */
/* Cases built before the filter drops them (~1 us each): a long file of lines that expand to
 * thousands of cases each, under a filter that keeps none, stops after a few seconds. */
#define MAX_EXPANDED (1 << 20)


static int parse_i64(int64_t *out, const char *s, const char *end)
{
    if (s == end || end - s > 18) return -1;
    int64_t v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

/* "AxBxC" or "A.B.C" into three positive integers. */
static int parse_triple(int64_t v[3], const char *s, char sep)
{
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        const char *e = i < 2 ? strchr(p, sep) : p + strlen(p);
        if (!e || parse_i64(&v[i], p, e) || v[i] <= 0 || v[i] > (1LL << 31)) return -1;
        p = e + 1;
    }
    return 0;
}

static int parse_layout(mmp_layout *l, const char *s, size_t n)
{
    if (n == 3 && !strncmp(s, "row", 3)) { *l = MMP_LAYOUT_ROW; return 0; }
    if (n == 3 && !strncmp(s, "col", 3)) { *l = MMP_LAYOUT_COL; return 0; }
    return -1;
}

static int parse_double(double *x, const char *s)
{
    char *end;
    errno = 0;
    *x = strtod(s, &end);
    return *s && !*end && !errno && isfinite(*x) ? 0 : -1;
}

static mmp_status bad(const char *name, int lineno, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static mmp_status bad(const char *name, int lineno, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mmp_error_set(MMP_STATUS_PARSE, __FILE__, __LINE__, "%s:%d: %s", name, lineno, msg);
}
#define BAD(...) bad(name, lineno, __VA_ARGS__)

static mmp_status parse_line(mmp_case_list *out, size_t *expanded, char *line, const char *name, int lineno,
                             const mmp_kernel_desc *const *kernels, size_t n_kernels, uint64_t seed)
{
    int64_t shape[3] = {0, 0, 0}, ld[3] = {0, 0, 0};
    int have_shape = 0, have_ld = 0, have_layout = 0;
    mmp_layout lay[3] = {MMP_LAYOUT_ROW, MMP_LAYOUT_ROW, MMP_LAYOUT_ROW};
    mmp_dist dists[MAX_LIST];
    int nd = 0, ns = 0;
    uint64_t seeds[MAX_LIST];
    const char *kglob = "*";
    double alpha = 1.0, beta = 0.0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return BAD("expected key=value, got '%s'", tok);
        *eq = '\0';
        char *key = tok, *val = eq + 1;
        if (!*val) return BAD("empty value for '%s'", key);
        if (!strcmp(key, "shape")) {
            if (parse_triple(shape, val, 'x')) return BAD("shape must be MxNxK with 1 <= each <= 2^31, got '%s'", val);
            have_shape = 1;
        } else if (!strcmp(key, "ld")) {
            if (parse_triple(ld, val, '.')) return BAD("ld must be LDA.LDB.LDD (positive), got '%s'", val);
            have_ld = 1;
        } else if (!strcmp(key, "layout")) {
            if (strlen(val) != 11 || val[3] != '.' || val[7] != '.' || parse_layout(&lay[0], val, 3) ||
                parse_layout(&lay[1], val + 4, 3) || parse_layout(&lay[2], val + 8, 3))
                return BAD("layout must be like row.col.row (A.B.D), got '%s'", val);
            have_layout = 1;
        } else if (!strcmp(key, "dist")) {
            char *s2 = NULL;
            for (char *d = strtok_r(val, ",", &s2); d; d = strtok_r(NULL, ",", &s2)) {
                if (nd == MAX_LIST) return BAD("at most %d distributions per line", MAX_LIST);
                if (mmp_dist_from_name(&dists[nd++], d) != MMP_STATUS_OK) return BAD("%s", mmp_error_last());
            }
        } else if (!strcmp(key, "seed")) {
            char *s2 = NULL;
            for (char *d = strtok_r(val, ",", &s2); d; d = strtok_r(NULL, ",", &s2)) {
                int64_t v;
                if (ns == MAX_LIST) return BAD("at most %d seeds per line", MAX_LIST);
                if (parse_i64(&v, d, d + strlen(d))) return BAD("seed must be a non-negative integer, got '%s'", d);
                seeds[ns++] = (uint64_t)v;
            }
        } else if (!strcmp(key, "kernel")) {
            kglob = val;
        } else if (!strcmp(key, "alpha")) {
            if (parse_double(&alpha, val)) return BAD("alpha must be a finite number, got '%s'", val);
        } else if (!strcmp(key, "beta")) {
            if (parse_double(&beta, val)) return BAD("beta must be a finite number, got '%s'", val);
        } else {
            return BAD("unknown key '%s' (shape, ld, layout, dist, seed, kernel, alpha, beta)", key);
        }
    }
    if (!have_shape) return BAD("missing shape=MxNxK");
    if (!nd) dists[nd++] = MMP_DIST_UNIFORM;
    if (!ns) seeds[ns++] = seed;
    int matched = 0;
    for (size_t ki = 0; ki < n_kernels; ki++) {
        const mmp_kernel_desc *k = kernels[ki];
        if (fnmatch(kglob, k->name, 0) != 0) continue;
        matched = 1;
        for (int d = 0; d < nd; d++)
            for (int s = 0; s < ns; s++) {
                mmp_case c;
                mmp_case_init(&c, k, shape[0], shape[1], shape[2], dists[d], seeds[s]);
                if (have_layout) { c.la = lay[0]; c.lb = lay[1]; c.ld = c.lc = lay[2]; }
                c.lda = have_ld ? ld[0] : 0;
                c.ldb = have_ld ? ld[1] : 0;
                c.ldd = c.ldc = have_ld ? ld[2] : 0;
                c.alpha = alpha;
                c.beta = beta;
                snprintf(c.suite, sizeof c.suite, "custom");
                mmp_case_finish(&c);
                if (have_ld) {
                    mmp_gemm g;
                    mmp_case_gemm(&g, &c);
                    if (mmp_gemm_check(&g) != MMP_STATUS_OK) return BAD("%s", mmp_error_last());
                }
                if (out->n >= MAX_CASES) return BAD("the suite expands to more than %d cases", MAX_CASES);
                if (++*expanded > MAX_EXPANDED)
                    return BAD("the suite expands to more than %d cases before the filter (at most %d may remain "
                               "after it)", MAX_EXPANDED, MAX_CASES);
                MMP_TRY(mmp_case_list_push(out, &c));
            }
    }
    if (!matched) return BAD("kernel pattern '%s' matches no kernel", kglob);
    return MMP_STATUS_OK;
}

mmp_status mmp_suitefile_parse_text(mmp_case **cases, size_t *count, const char *text, size_t len,
                                    const char *name, const mmp_kernel_desc *const *kernels,
                                    size_t n_kernels, const char *filter, uint64_t seed)
{
    mmp_case_list l = {NULL, 0, 0, filter};
    *cases = NULL;
    *count = 0;
    size_t pos = 0, expanded = 0;
    int lineno = 0;
    mmp_status st = MMP_STATUS_OK;
    while (pos < len && st == MMP_STATUS_OK) {
        lineno++;
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        size_t n = end - pos;
        char line[MAX_LINE];
        if (n >= sizeof line) {
            st = BAD("line longer than %d characters", MAX_LINE - 1);
            break;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos = end + 1;
        if (memchr(line, '\0', n)) { st = BAD("NUL byte in line"); break; }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (!*p) continue;
        st = parse_line(&l, &expanded, p, name, lineno, kernels, n_kernels, seed);
    }
    if (st == MMP_STATUS_OK && l.n == 0 && lineno == 0)
        st = mmp_error_set(MMP_STATUS_PARSE, __FILE__, __LINE__, "%s: empty suite file", name);
    if (st == MMP_STATUS_OK) st = mmp_case_list_dedupe(&l);   /* a case listed twice runs once */
    if (st != MMP_STATUS_OK) { free(l.v); return st; }
    *cases = l.v;
    *count = l.n;
    return MMP_STATUS_OK;
}

mmp_status mmp_suitefile_parse(mmp_case **cases, size_t *count, const char *path,
                               const mmp_kernel_desc *const *kernels, size_t n_kernels,
                               const char *filter, uint64_t seed)
{
    /* opened without blocking: a FIFO (or a device) is refused at once, not waited on */
    const char *kind;
    int fd = mmp_file_open_regular(path, &kind);
    if (fd < 0) {
        /* a name that is neither a built-in suite nor a file is a usage error (exit 2); a file
         * that exists but cannot be read is the environment's (exit 3) */
        int e = errno;
        if (kind)
            return MMP_ERR(MMP_STATUS_INVALID, "suite '%s': not a built-in suite (smoke, edge, full) nor a regular "
                           "file (%s)", path, kind);
        return MMP_ERR(mmp_file_open_status(e), "suite '%s': not a built-in suite (smoke, edge, full) and cannot "
                       "read it: %s", path, strerror(e));
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) { close(fd); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path); }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            if (cap > (64u << 20)) { free(buf); fclose(f); return MMP_ERR(MMP_STATUS_PARSE, "%s: larger than 64 MiB", path); }
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path); }
            buf = nb;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        if (r == 0) break;
        len += r;
    }
    int err = ferror(f);
    fclose(f);
    if (err) { free(buf); return MMP_ERR(MMP_STATUS_IO, "%s: read error", path); }
    mmp_status st = mmp_suitefile_parse_text(cases, count, buf, len, path, kernels, n_kernels, filter, seed);
    free(buf);
    return st;
}
