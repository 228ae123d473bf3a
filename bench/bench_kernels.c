/* bench/bench_kernels.c — timing mode: every registered device kernel (or those matching
 * --filter) at square sizes, against its same-precision WMMA baseline and cuBLAS, as Markdown
 * tables (time, throughput, speedup over the baseline, fraction of cuBLAS).
 *
 *   bench_kernels [--filter 'bf16_*,fp16_*'] [--sizes 512,1024,2048,4096,8192] [--reps 20]
 *                 [--warmup 3] [--sass FILE] [--out FILE] [--no-cublas] [--list] [--budget 300]
 *
 * Method: per kernel a child process (the parent never touches CUDA, so it may fork; a crash
 * or hang of one kernel costs only its row). Per size: --warmup launches, then --reps launches
 * each bracketed by CUDA events, median kept. Inputs are rotated over enough buffer sets that
 * their total is at least 3x the L2 size, so no launch finds its operands in L2. Inputs are
 * random values of magnitude 1/4..1 (finite in every format), outputs are not checked here
 * (that is `mmaprobe validate`). TFLOP/s = 2 N^3 / time. Speedup is against the kernel of the
 * same input formats whose name contains "wmma" (an exact "<x>_wmma" name, else the last
 * registered, i.e. fastest, version); cuBLAS is cublasGemmEx (cublasLt for FP8) with the same
 * formats and accumulator, in the "TN" layout. --sass FILE: lines "function<TAB>tensor ops"
 * (bench/bench_kernels.sh makes it from cuobjdump); a row gets the ops of the functions whose
 * demangled name contains the kernel name as an identifier (or name + "_kernel").
 *
 * Exit: 0 done, 1 a kernel failed, 2 usage, 3 output not writable, 77 no CUDA device.
 */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mmaprobe/core.h"
#include "mmaprobe/format.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/status.h"

#define MAX_SIZES 8
#define MAX_ROWS 256
#define WHY 72

typedef struct opts {
    const char *filter, *sass, *out;
    long long sizes[MAX_SIZES];
    int nsizes, reps, warmup, cublas, list, budget;
} opts;

/* What a child sends back for one row. */
typedef struct result {
    double ms[MAX_SIZES];          /* < 0: not measured, why[] says why */
    int sets[MAX_SIZES];           /* buffer sets rotated */
    int error;                     /* 1: a launch or CUDA error (not a skip) */
    char note[WHY];                /* a remark on how the row was measured, or "" */
    char why[MAX_SIZES][WHY];
} result;

typedef struct row {
    const mmp_kernel_desc *k;      /* NULL: cuBLAS row */
    int a, b, d, acc, mul;         /* formats */
    int baseline, cublas;          /* row indices or -1 */
    char name[64], sass[128];
    result r;
} row;

static const char *fmt(int f) { return f < 0 ? "in" : mmp_format_name((mmp_format)f); }

/* ---- device side (child processes only) -------------------------------------------------- */
#ifdef MMP_HAVE_CUDA
#include "bench/bench_kernels_cuda.h"
#endif

/* ---- rows -------------------------------------------------------------------------------- */
static int match_filter(const char *name, const char *filter)
{
    if (!filter || !*filter) return 1;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", filter);
    for (char *save = NULL, *g = strtok_r(buf, ",", &save); g; g = strtok_r(NULL, ",", &save))
        if (fnmatch(g, name, 0) == 0) return 1;
    return 0;
}

static int find_row(const row *rows, int n, const mmp_kernel_desc *k)
{
    for (int i = 0; i < n; i++)
        if (rows[i].k == k) return i;
    return -1;
}

static int add_kernel(row *rows, int *n, const mmp_kernel_desc *k)
{
    int i = find_row(rows, *n, k);
    if (i >= 0 || *n >= MAX_ROWS) return i;
    row *r = &rows[*n];
    memset(r, 0, sizeof *r);
    r->k = k;
    r->a = k->a_format; r->b = k->b_format; r->d = k->d_format; r->acc = k->acc_format;
    r->mul = k->mul_format;
    r->baseline = r->cublas = -1;
    snprintf(r->name, sizeof r->name, "%s", k->name);
    return (*n)++;
}

/* The same-precision WMMA baseline: an exact "<x>_wmma" name, else the last registered wmma
 * kernel (families list naive -> fast); same accumulator preferred. */
static const mmp_kernel_desc *find_baseline(const mmp_kernel_desc *k, const mmp_kernel_desc *const *all, size_t n)
{
    for (int pass = 0; pass < 2; pass++) {
        const mmp_kernel_desc *exact = NULL, *last = NULL;
        for (size_t i = 0; i < n; i++) {
            const mmp_kernel_desc *c = all[i];
            if (c->where != MMP_KERNEL_DEVICE || !strstr(c->name, "wmma")) continue;
            if (c->a_format != k->a_format || c->b_format != k->b_format) continue;
            if (pass == 0 && c->acc_format != k->acc_format) continue;
            size_t len = strlen(c->name);
            if (len >= 5 && !strcmp(c->name + len - 5, "_wmma")) exact = c;
            last = c;
        }
        if (exact) return exact;
        if (last) return last;
    }
    return NULL;
}

static int is_ident(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'; }

static void sass_lookup(char *out, size_t size, const char *name, const char *path)
{
    out[0] = 0;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return;
    char line[4096];
    size_t nl = strlen(name);
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        char *ops = tab + 1;
        ops[strcspn(ops, "\r\n")] = 0;
        int hit = 0;
        for (char *p = strstr(line, name); p && !hit; p = strstr(p + 1, name)) {
            char after = p[nl];
            int left = p == line || !is_ident(p[-1]);
            int right = !is_ident(after) || (!strncmp(p + nl, "_kernel", 7) && !is_ident(p[nl + 7]));
            hit = left && right;
        }
        if (!hit || strstr(out, ops)) continue;
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", used ? "; " : "", ops);
    }
    fclose(f);
}

/* ---- child processes ----------------------------------------------------------------------- */
static void run_child(result *res, const row *r, const opts *o)
{
    memset(res, 0, sizeof *res);
    for (int s = 0; s < MAX_SIZES; s++) res->ms[s] = -1.0;
#ifdef MMP_HAVE_CUDA
    bench_cuda_row(res, r, o);
#else
    (void)r; (void)o;
    for (int s = 0; s < MAX_SIZES; s++) snprintf(res->why[s], WHY, "built without CUDA");
#endif
}

static void run_row(row *r, const opts *o)
{
    int fds[2];
    if (pipe(fds) != 0) {
        r->r.error = 1;
        for (int s = 0; s < o->nsizes; s++) { r->r.ms[s] = -1; snprintf(r->r.why[s], WHY, "pipe: %s", strerror(errno)); }
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(90);                           /* a hung kernel ends its own row, not the run */
        static result res;
        run_child(&res, r, o);
        ssize_t w = write(fds[1], &res, sizeof res);
        _exit(w == (ssize_t)sizeof res ? 0 : 2);
    }
    close(fds[1]);
    size_t have = 0;
    result got;
    while (pid > 0 && have < sizeof got) {
        ssize_t n = read(fds[0], (char *)&got + have, sizeof got - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        have += (size_t)n;
    }
    close(fds[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (pid > 0 && have == sizeof got) {
        r->r = got;
        return;
    }
    r->r.error = 1;
    for (int s = 0; s < o->nsizes; s++) {
        r->r.ms[s] = -1;
        snprintf(r->r.why[s], WHY, "child died (%s)",
                 pid < 0 ? "fork failed" : WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no answer");
    }
}

/* ---- output -------------------------------------------------------------------------------- */
static void print_tables(FILE *f, const row *rows, int n, const opts *o)
{
    fprintf(f, "\n## Time per launch (ms)\n\nMedian of %d launches after %d warm-up; operands rotated over buffer "
               "sets totalling >= 3x L2. SASS column: static instruction counts per kernel function (cuobjdump).\n\n| kernel | A,B -> D (acc) | tensor op (SASS) |",
            o->reps, o->warmup);
    for (int s = 0; s < o->nsizes; s++) fprintf(f, " N=%lld |", o->sizes[s]);
    fprintf(f, "\n|---|---|---|");
    for (int s = 0; s < o->nsizes; s++) fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        fprintf(f, "| %s | %s,%s -> %s (%s) | %s |", r->name, fmt(r->a), fmt(r->b), fmt(r->d), fmt(r->acc),
                r->sass[0] ? r->sass : (r->k ? "?" : "cuBLAS"));
        for (int s = 0; s < o->nsizes; s++)
            if (r->r.ms[s] >= 0) fprintf(f, " %.4g |", r->r.ms[s]);
            else fprintf(f, " - |");
        fprintf(f, "\n");
    }
    fprintf(f, "\n## Throughput (TFLOP/s, 2N^3 / time)\n\n| kernel |");
    for (int s = 0; s < o->nsizes; s++) fprintf(f, " N=%lld |", o->sizes[s]);
    fprintf(f, "\n|---|");
    for (int s = 0; s < o->nsizes; s++) fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "| %s |", rows[i].name);
        for (int s = 0; s < o->nsizes; s++) {
            double ms = rows[i].r.ms[s], N = (double)o->sizes[s];
            if (ms > 0) fprintf(f, " %.1f |", 2.0 * N * N * N / (ms * 1e-3) / 1e12);
            else fprintf(f, " - |");
        }
        fprintf(f, "\n");
    }
    for (int table = 0; table < 2; table++) {
        fprintf(f, table == 0 ? "\n## Speedup vs the same-precision WMMA baseline (x)\n\n| kernel | baseline |"
                              : "\n## Percent of cuBLAS, same formats and accumulator\n\n| kernel | cuBLAS row |");
        for (int s = 0; s < o->nsizes; s++) fprintf(f, " N=%lld |", o->sizes[s]);
        fprintf(f, "\n|---|---|");
        for (int s = 0; s < o->nsizes; s++) fprintf(f, "---:|");
        fprintf(f, "\n");
        for (int i = 0; i < n; i++) {
            const row *r = &rows[i];
            int ref = table == 0 ? r->baseline : r->cublas;
            if (!r->k) continue;
            fprintf(f, "| %s | %s |", r->name, ref >= 0 ? rows[ref].name : "none");
            for (int s = 0; s < o->nsizes; s++) {
                double me = r->r.ms[s], them = ref >= 0 ? rows[ref].r.ms[s] : -1;
                if (me > 0 && them > 0) fprintf(f, table == 0 ? " %.2f |" : " %.0f%% |", table == 0 ? them / me : 100.0 * them / me);
                else fprintf(f, " - |");
            }
            fprintf(f, "\n");
        }
    }
    int notes = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].r.note[0]) {
            if (!notes++) fprintf(f, "\n## Notes\n\n");
            fprintf(f, "- %s: %s\n", rows[i].name, rows[i].r.note);
        }
    notes = 0;
    for (int i = 0; i < n; i++)
        for (int s = 0; s < o->nsizes; s++)
            if (rows[i].r.ms[s] < 0 && rows[i].r.why[s][0]) {
                if (!notes++) fprintf(f, "\n## Not measured\n\n");
                fprintf(f, "- %s, N=%lld: %s\n", rows[i].name, o->sizes[s], rows[i].r.why[s]);
            }
}

/* ---- main ---------------------------------------------------------------------------------- */
static int usage(const char *msg)
{
    if (msg) fprintf(stderr, "bench_kernels: %s\n", msg);
    fprintf(stderr, "usage: bench_kernels [--filter GLOBS] [--sizes N,N,...] [--reps R>=20] [--warmup W] "
                    "[--sass FILE] [--out FILE] [--no-cublas] [--list] [--budget S]\n"
                    "  --budget: seconds after which remaining rows are listed as not measured (default 300)\n"
                    "  --list: print the rows (kernel, WMMA baseline, cuBLAS row, SASS ops) and exit\n");
    return MMP_EXIT_USAGE;
}

static int parse_sizes(opts *o, const char *s)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    o->nsizes = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long long v = strtoll(t, &end, 10);
        if (*end || v <= 0 || v > 65536 || o->nsizes >= MAX_SIZES) return -1;
        o->sizes[o->nsizes++] = v;
    }
    return o->nsizes > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    opts o = {NULL, NULL, NULL, {512, 1024, 2048, 4096, 8192}, 5, 20, 3, 1, 0, 300};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(NULL); return MMP_EXIT_PASS; }
        if (!strcmp(a, "--no-cublas")) { o.cublas = 0; continue; }
        if (!strcmp(a, "--list")) { o.list = 1; continue; }
        if (strcmp(a, "--filter") && strcmp(a, "--sass") && strcmp(a, "--out") && strcmp(a, "--sizes") &&
            strcmp(a, "--reps") && strcmp(a, "--warmup") && strcmp(a, "--budget")) {
            fprintf(stderr, "bench_kernels: unknown option '%s'\n", a);
            return usage(NULL);
        }
        if (!v) return usage("option needs a value");
        i++;
        if (!strcmp(a, "--filter")) o.filter = v;
        else if (!strcmp(a, "--sass")) o.sass = v;
        else if (!strcmp(a, "--out")) o.out = v;
        else if (!strcmp(a, "--sizes")) { if (parse_sizes(&o, v)) return usage("--sizes: comma-separated sizes 1..65536, at most 8"); }
        else if (!strcmp(a, "--reps")) { o.reps = atoi(v); if (o.reps < 20 || o.reps > 1000) return usage("--reps must be 20..1000"); }
        else if (!strcmp(a, "--budget")) { o.budget = atoi(v); if (o.budget < 10) return usage("--budget must be >= 10 seconds"); }
        else if (!strcmp(a, "--warmup")) { o.warmup = atoi(v); if (o.warmup < 1 || o.warmup > 100) return usage("--warmup must be 1..100"); }
    }
    mmp_env env;
    if (!o.list) {                /* no device: skip before anything else (ctest/CI convention) */
        mmp_status st = mmp_env_capture(&env, -1, 0, argc, argv);
        if (st != MMP_STATUS_OK) {
            mmp_env_print(stdout, &env, "# ");
            printf("SKIP: %s\n", env.no_device_reason[0] ? env.no_device_reason : "no CUDA device");
            return MMP_EXIT_SKIP;
        }
    }
    static row rows[MAX_ROWS];
    int n = 0;
    size_t nall;
    const mmp_kernel_desc *const *all = mmp_registry_kernels(&nall, MMP_REGISTRY_DEFAULT);
    for (size_t i = 0; i < nall; i++)
        if (all[i]->where == MMP_KERNEL_DEVICE && match_filter(all[i]->name, o.filter)) add_kernel(rows, &n, all[i]);
    if (n == 0) {
        fprintf(stderr, "bench_kernels: no device kernel matches '%s'\n", o.filter ? o.filter : "*");
        return MMP_EXIT_USAGE;
    }
    int nsel = n;
    for (int i = 0; i < nsel; i++) {
        const mmp_kernel_desc *b = find_baseline(rows[i].k, all, nall);
        if (b) rows[i].baseline = add_kernel(rows, &n, b);
    }
    if (o.cublas)
        for (int i = 0, nk = n; i < nk; i++) {
            int found = -1;
            for (int j = nk; j < n && found < 0; j++)
                if (rows[j].a == rows[i].a && rows[j].b == rows[i].b && rows[j].d == rows[i].d &&
                    rows[j].acc == rows[i].acc && rows[j].mul == rows[i].mul)
                    found = j;
            if (found < 0 && n < MAX_ROWS) {
                row *c = &rows[n];
                memset(c, 0, sizeof *c);
                c->a = rows[i].a; c->b = rows[i].b; c->d = rows[i].d; c->acc = rows[i].acc; c->mul = rows[i].mul;
                c->baseline = c->cublas = -1;
                snprintf(c->name, sizeof c->name, "cublas_%s_%s_acc%s", fmt(c->a), fmt(c->d), fmt(c->acc));
                found = n++;
            }
            rows[i].cublas = found;
        }

    if (o.list) {                 /* the plan only: rows, baselines, cuBLAS rows, SASS (no device) */
        for (int i = 0; i < n; i++) {
            if (rows[i].k) sass_lookup(rows[i].sass, sizeof rows[i].sass, rows[i].name, o.sass);
            printf("%-28s baseline %-22s cublas %-28s sass %s\n", rows[i].name,
                   rows[i].baseline >= 0 ? rows[rows[i].baseline].name : "-",
                   rows[i].cublas >= 0 ? rows[rows[i].cublas].name : "-", rows[i].sass[0] ? rows[i].sass : "-");
        }
        return MMP_EXIT_PASS;
    }
    FILE *out = stdout;
    if (o.out && !(out = fopen(o.out, "w"))) {
        fprintf(stderr, "bench_kernels: cannot write %s: %s\n", o.out, strerror(errno));
        return MMP_EXIT_ENVIRONMENT;
    }
    mmp_env_print(out, &env, "    ");
    fprintf(out, "\n# Kernel timing (bench_kernels)\n");
    time_t start = time(NULL);
    for (int pass = 0; pass < 2; pass++)   /* cuBLAS rows first: every % column needs them */
    for (int i = 0; i < n; i++) {
        if ((pass == 0) != (rows[i].k == NULL)) continue;
        if (rows[i].k) sass_lookup(rows[i].sass, sizeof rows[i].sass, rows[i].name, o.sass);
        if (difftime(time(NULL), start) > o.budget) {   /* keep the tables: skip the rest */
            for (int s = 0; s < o.nsizes; s++) {
                rows[i].r.ms[s] = -1;
                snprintf(rows[i].r.why[s], WHY, "time budget (--budget %d s) spent", o.budget);
            }
            continue;
        }
        fprintf(stderr, "bench_kernels: %s ...\n", rows[i].name);
        run_row(&rows[i], &o);
    }
    print_tables(out, rows, n, &o);
    int failed = 0;
    for (int i = 0; i < n; i++) failed |= rows[i].r.error;
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "bench_kernels: cannot write %s\n", o.out);
        return MMP_EXIT_ENVIRONMENT;
    }
    return failed ? MMP_EXIT_FAIL : MMP_EXIT_PASS;
}
