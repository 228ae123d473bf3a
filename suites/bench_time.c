/* bench_time.c — one bench row timed in this process (the timing child of bench_child.c):
 * a host kernel with the monotonic clock here, a device kernel through bench_cuda.cu; the
 * device's peak for the row's precision (measured once per precision per process) and its
 * clocks before and after.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "mmaprobe/peak.h"
#endif
#include "mmaprobe/core.h"
#include "bench_internal.h"
#include "runner_internal.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void mmp_bench_stats(double *median, double *min, double *max, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    *min = t[0];
    *max = t[n - 1];
}

int mmp_bench_sets(int64_t set_bytes, int64_t rotate_bytes)
{
    if (set_bytes <= 0) return 2;
    int64_t s = rotate_bytes / set_bytes + 1;   /* strictly more than rotate_bytes */
    return s < 2 ? 2 : s > 64 ? 64 : (int)s;
}

void mmp_bench_set_case(mmp_case *c, const mmp_bench_row *r, const mmp_bench_options *o, int s)
{
    mmp_case_init(c, r->kernel, r->m, r->n, r->k, o->dist, o->seed + (uint64_t)s);
    c->la = r->la;
    c->lb = r->lb;
    c->lc = c->ld = r->ld;
    c->lda = c->ldb = c->ldc = c->ldd = 0;
    mmp_case_finish(c);
}

/* Launch k on sets of a and b; t->why on failure. */
static void host_loop(mmp_bench_timing *t, const mmp_kernel_desc *k, const mmp_bench_row *r, const mmp_case *c,
                      unsigned char *a, unsigned char *b, void *d, size_t ab, size_t bb, int sets,
                      const mmp_bench_options *o)
{
    if (!mmp_layouts_has(k->layouts_a, r->la) || !mmp_layouts_has(k->layouts_b, r->lb) || !mmp_layouts_has(k->layouts_d, r->ld)) {
        snprintf(t->why, sizeof t->why, "%s does not take layouts %s.%s.%s", k->name, mmp_layout_name(r->la),
                 mmp_layout_name(r->lb), mmp_layout_name(r->ld));
        t->skip = 1;
        return;
    }
    size_t wsb = k->workspace_bytes ? k->workspace_bytes(r->m, r->n, r->k) : 0;
    void *ws = wsb ? malloc(wsb) : NULL;
    double *times = malloc((size_t)o->iters * sizeof *times);
    if ((wsb && !ws) || !times) {
        snprintf(t->why, sizeof t->why, "out of host memory");
        free(ws);
        free(times);
        return;
    }
    mmp_kernel_args x;
    memset(&x, 0, sizeof x);
    x.m = r->m; x.n = r->n; x.k = r->k;
    x.layout_a = c->la; x.layout_b = c->lb; x.layout_c = x.layout_d = c->ld;
    x.lda = c->lda; x.ldb = c->ldb; x.ldc = x.ldd = c->ldd;
    x.alpha = 1.0;
    x.d = d;
    x.workspace = ws;
    x.workspace_size = wsb;
    int ok = 1;
    const mmp_format_info *fd = mmp_format_get_info((mmp_format)k->d_format);
    const size_t eb = (size_t)fd->storage_bits / 8, db = mmp_format_bytes((mmp_format)k->d_format, mmp_gemm_span(c->ld, c->ldd, r->m, r->n));
    const int check = fd->is_float && (eb == 1 || eb == 2 || eb == 4) && db % eb == 0;
    if (check) memset(d, 0xFF, db);   /* NaN in every float format */
    for (int i = 0; i < o->warmup + o->iters && ok; i++) {
        int s = i % sets;
        x.a = a + (size_t)s * ab;
        x.b = b + (size_t)s * bb;
        double t0 = mmp_clock_now();
        int rc = k->run(&x);
        double t1 = mmp_clock_now();
        if (rc != MMP_KERNEL_OK) {
            snprintf(t->why, sizeof t->why, "%s returned %d (%s)", k->name, rc,
                     rc == MMP_KERNEL_UNSUPPORTED ? "unsupported arguments" : "error");
            t->skip = rc == MMP_KERNEL_UNSUPPORTED;
            ok = 0;
        } else if (i >= o->warmup) {
            times[i - o->warmup] = (t1 - t0) * 1e3;
        }
    }
    t->unwritten = -1;
    if (ok && check) {
        t->unwritten = 0;
        for (size_t i = 0; i < db; i += eb) {
            size_t ones = 0;
            while (ones < eb && ((const unsigned char *)d)[i + ones] == 0xFF) ones++;
            t->unwritten += ones == eb;
        }
    }
    if (ok && t->unwritten > 0) {
        snprintf(t->why, sizeof t->why, "%s left %lld of %lld output elements unwritten at %lldx%lldx%lld", k->name,
                 (long long)t->unwritten, (long long)(r->m * r->n), (long long)r->m, (long long)r->n, (long long)r->k);
        ok = 0;
    }
    if (ok) {
        mmp_bench_stats(&t->median_ms, &t->min_ms, &t->max_ms, times, o->iters);
        t->done = 1;
        t->warmup = o->warmup;
        t->iters = o->iters;
        t->sets = sets;
        t->set_bytes = (int64_t)(ab + bb);
    }
    free(ws);
    free(times);
}

static void time_host(mmp_bench_outcome *out, const mmp_bench_row *r, const mmp_bench_options *o)
{
    mmp_case c;
    mmp_bench_set_case(&c, r, o, 0);
    const mmp_kernel_desc *k = r->kernel;
    size_t ab = mmp_format_bytes((mmp_format)k->a_format, mmp_gemm_span(c.la, c.lda, r->m, r->k));
    size_t bb = mmp_format_bytes((mmp_format)k->b_format, mmp_gemm_span(c.lb, c.ldb, r->k, r->n));
    size_t db = mmp_format_bytes((mmp_format)k->d_format, mmp_gemm_span(c.ld, c.ldd, r->m, r->n));
    int sets = mmp_bench_sets((int64_t)(ab + bb), o->rotate_bytes);
    unsigned char *a = malloc(ab * (size_t)sets), *b = malloc(bb * (size_t)sets);
    void *d = malloc(db);
    if (!a || !b || !d) {
        out->state = MMP_BENCH_SKIPPED;
        snprintf(out->why, sizeof out->why, "needs %zu MB of host memory", ((ab + bb) * (size_t)sets + db) >> 20);
        goto done;
    }
    for (int s = 0; s < sets; s++) {
        mmp_case cs;
        mmp_bench_set_case(&cs, r, o, s);
        if (mmp_case_fill(a + (size_t)s * ab, &cs, 0) != MMP_STATUS_OK || mmp_case_fill(b + (size_t)s * bb, &cs, 1) != MMP_STATUS_OK) {
            out->state = MMP_BENCH_ERROR;
            snprintf(out->why, sizeof out->why, "filling the operands: %s", mmp_error_last());
            goto done;
        }
    }
    host_loop(&out->kernel, k, r, &c, a, b, d, ab, bb, sets, o);
    if (!out->kernel.done) {
        out->state = out->kernel.skip ? MMP_BENCH_SKIPPED : MMP_BENCH_ERROR;
        snprintf(out->why, sizeof out->why, "%s", out->kernel.why);
        goto done;
    }
    out->state = MMP_BENCH_TIMED;
    if (r->baseline == k) out->baseline = out->kernel;
    else if (r->baseline) host_loop(&out->baseline, r->baseline, r, &c, a, b, d, ab, bb, sets, o);
    snprintf(out->peak_how, sizeof out->peak_how, "a host kernel: no tensor-core peak");
done:
    free(a);
    free(b);
    free(d);
}

#ifdef MMP_HAVE_CUDA
/* The peak of a precision, measured once per process. */
static void peak_for(mmp_bench_outcome *out, const mmp_kernel_desc *k)
{
    enum { SLOTS = 8 };
    static struct { int a, b, done; double tflops; char how[96]; } memo[SLOTS];
    static int n_memo;
    const int a = k->mul_format >= 0 ? k->mul_format : k->a_format, b = k->mul_format >= 0 ? k->mul_format : k->b_format;
    for (int i = 0; i < n_memo; i++)
        if (memo[i].a == a && memo[i].b == b) {
            out->peak_tflops = memo[i].tflops;
            snprintf(out->peak_how, sizeof out->peak_how, "%s", memo[i].how);
            return;
        }
    double t = 0;
    char how[96] = "";
    if (mmp_peak_measure(&t, how, sizeof how, a, b) != MMP_STATUS_OK && !how[0])
        snprintf(how, sizeof how, "not measured: %s", mmp_error_last());
    out->peak_tflops = t;
    snprintf(out->peak_how, sizeof out->peak_how, "%s", how);
    if (n_memo < SLOTS) {
        memo[n_memo].a = a;
        memo[n_memo].b = b;
        memo[n_memo].tflops = t;
        snprintf(memo[n_memo].how, sizeof memo[n_memo].how, "%s", how);
        n_memo++;
    }
}

static void time_device(mmp_bench_outcome *out, const mmp_bench_row *r, const mmp_bench_options *o)
{
    int cc = 0;
    if (cudaSetDevice(o->runner.device) != cudaSuccess) {
        out->state = MMP_BENCH_SKIPPED;
        snprintf(out->why, sizeof out->why, "no CUDA device %d in the timing process", o->runner.device);
        return;
    }
    mmp_bench_clocks_read(&out->before, o->runner.device);
    mmp_status st = mmp_bench_time_device(&out->kernel, &out->baseline, &cc, r, o);
    mmp_bench_clocks_read(&out->after, o->runner.device);
    if (st != MMP_STATUS_OK || !out->kernel.done) {
        out->state = st == MMP_STATUS_OK && out->kernel.skip ? MMP_BENCH_SKIPPED : MMP_BENCH_ERROR;
        snprintf(out->why, sizeof out->why, "%s", st != MMP_STATUS_OK ? mmp_error_last() : out->kernel.why);
        return;
    }
    out->state = MMP_BENCH_TIMED;
    peak_for(out, r->kernel);
}
#endif

void mmp_bench_time_row(mmp_bench_outcome *out, const mmp_bench_row *r, const mmp_bench_options *options)
{
    memset(out, 0, sizeof *out);
    const int host = r->kernel->where == MMP_KERNEL_HOST;
    mmp_bench_options lo = *options;   /* the launch counts of this kind of kernel */
    if (lo.warmup < 0) lo.warmup = host ? 1 : 10;
    if (lo.iters < 0) lo.iters = host ? 5 : 50;
    const mmp_bench_options *o = &lo;
    if (host) {
        snprintf(out->before.why, sizeof out->before.why, "a host kernel");
        snprintf(out->after.why, sizeof out->after.why, "a host kernel");
        time_host(out, r, o);
        return;
    }
#ifdef MMP_HAVE_CUDA
    time_device(out, r, o);
#else
    out->state = MMP_BENCH_SKIPPED;
    snprintf(out->why, sizeof out->why, "built without CUDA");
#endif
}
