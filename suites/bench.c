/* bench.c — `mmaprobe bench` below the command line: the rows (kernel x shape), the validation
 * gate, the figures derived from a timing, the exit code and the table (mmaprobe/bench.h).
 * The timing itself runs in a forked child (bench_child.c); this file never touches CUDA.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/bench.h"
#include "mmaprobe/core.h"
#include "mmaprobe/registry.h"
#include "bench_internal.h"

void mmp_bench_options_init(mmp_bench_options *o)
{
    memset(o, 0, sizeof *o);
    o->suite = "smoke";
    o->seed = 42;
    o->la = MMP_LAYOUT_ROW;
    o->lb = MMP_LAYOUT_COL;
    o->ld = MMP_LAYOUT_ROW;
    o->dist = MMP_DIST_UNIFORM;
    o->warmup = o->iters = -1;
    o->timeout_s = 300;
    mmp_runner_options_init(&o->runner);
}

const char *mmp_bench_state_name(mmp_bench_state s)
{
    static const char *const names[] = {"timed", "refused", "skipped", "error"};
    return (unsigned)s < MMP_BENCH_STATE_COUNT_ ? names[s] : "?";
}

void mmp_bench_run_init(mmp_bench_run *b) { memset(b, 0, sizeof *b); }

void mmp_bench_run_clear(mmp_bench_run *b)
{
    free(b->rows);
    memset(b, 0, sizeof *b);
}

/* ---- the library kernel of the same precision ---- */
static int is_library(const mmp_kernel_desc *k)
{
    if (k->where == MMP_KERNEL_HOST) return k->name && !strncmp(k->name, "host_blas_", 10);
    return k->family && !strcmp(k->family, "cublas");
}

const mmp_kernel_desc *mmp_bench_baseline(const mmp_kernel_desc *k)
{
    if (is_library(k)) return k;
    size_t n;
    const mmp_kernel_desc *const *all = mmp_registry_kernels(&n, MMP_REGISTRY_DEFAULT);
    const mmp_kernel_desc *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const mmp_kernel_desc *c = all[i];
        if (!is_library(c) || c->where != k->where || c->a_format != k->a_format || c->b_format != k->b_format ||
            c->d_format != k->d_format || c->acc_format != k->acc_format)
            continue;
        if (c->mul_format == k->mul_format) return c;   /* e.g. tf32 multiplies: cublas_tf32 */
        if (!best) best = c;
    }
    return best;
}

/* ---- rows ---- */
static const int64_t device_shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}};
static const int64_t host_shapes[][3] = {{128, 128, 128}};

static mmp_layout pick(uint32_t mask, int given, mmp_layout want, mmp_layout first)
{
    if (given) return want;
    return mmp_layouts_has(mask, first) ? first : (mmp_layout)(1 - first);
}

static void row_init(mmp_bench_row *r, const mmp_kernel_desc *k, const int64_t s[3], const mmp_bench_options *o)
{
    memset(r, 0, sizeof *r);
    r->kernel = k;
    r->baseline = mmp_bench_baseline(k);
    mmp_case_precision(r->precision, sizeof r->precision, k);
    r->m = s[0];
    r->n = s[1];
    r->k = s[2];
    r->la = pick(k->layouts_a, o->layouts_given, o->la, MMP_LAYOUT_ROW);
    r->lb = pick(k->layouts_b, o->layouts_given, o->lb, MMP_LAYOUT_COL);
    r->ld = pick(k->layouts_d, o->layouts_given, o->ld, MMP_LAYOUT_ROW);
    r->out.state = MMP_BENCH_SKIPPED;
    r->tflops = r->baseline_tflops = 0;
    r->pct_baseline = r->pct_peak = NAN;
    if (!mmp_layouts_has(k->layouts_a, r->la) || !mmp_layouts_has(k->layouts_b, r->lb) ||
        !mmp_layouts_has(k->layouts_d, r->ld))
        snprintf(r->out.why, sizeof r->out.why, "the kernel does not take layouts %s.%s.%s", mmp_layout_name(r->la),
                 mmp_layout_name(r->lb), mmp_layout_name(r->ld));
    else if (r->m % k->m_multiple || r->n % k->n_multiple || r->k % k->k_multiple)
        snprintf(r->out.why, sizeof r->out.why, "shape %lldx%lldx%lld is not a multiple of %d/%d/%d", (long long)r->m,
                 (long long)r->n, (long long)r->k, k->m_multiple, k->n_multiple, k->k_multiple);
}

static mmp_status make_rows(mmp_bench_run *b, const mmp_kernel_desc *const *kernels, size_t nk,
                            const mmp_bench_options *o)
{
    size_t cap = 0;
    for (size_t i = 0; i < nk; i++)
        cap += o->n_shapes ? (size_t)o->n_shapes
                           : kernels[i]->where == MMP_KERNEL_HOST ? sizeof host_shapes / sizeof host_shapes[0]
                                                                  : sizeof device_shapes / sizeof device_shapes[0];
    b->rows = calloc(cap ? cap : 1, sizeof *b->rows);
    if (!b->rows) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for %zu bench rows", cap);
    for (size_t i = 0; i < nk; i++) {
        const int host = kernels[i]->where == MMP_KERNEL_HOST;
        int ns = o->n_shapes ? o->n_shapes : host ? (int)(sizeof host_shapes / sizeof host_shapes[0])
                                                  : (int)(sizeof device_shapes / sizeof device_shapes[0]);
        for (int s = 0; s < ns; s++)
            row_init(&b->rows[b->n_rows++], kernels[i], o->n_shapes ? o->shape[s] : host ? host_shapes[s] : device_shapes[s], o);
    }
    return MMP_STATUS_OK;
}

/* ---- the validation gate ---- */
static void say(const mmp_bench_options *o, const char *fmt, const char *a, const char *b)
{
    if (!o->progress) return;
    fprintf(o->progress, fmt, a, b);
    fflush(o->progress);
}

/* Each kernel's verdict over the suite's cases: FAIL/ERROR if any case is, else PASS if one
 * passed, else SKIP (every case skipped, or the suite has none for it). */
static mmp_status gate(mmp_bench_run *b, const mmp_kernel_desc *const *kernels, size_t nk, const mmp_bench_options *o)
{
    mmp_case *cases = NULL;
    size_t n = 0;
    MMP_TRY(mmp_cases_build(&cases, &n, o->suite, kernels, nk, NULL, o->seed));
    mmp_case_result *res = calloc(n ? n : 1, sizeof *res);
    if (!res) {
        mmp_cases_free(cases);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for %zu validation results", n);
    }
    if (o->progress) fprintf(o->progress, "mmaprobe bench: validating %zu kernel(s): %zu cases of suite %s\n", nk, n, o->suite);
    mmp_status st = n ? mmp_runner_run(res, cases, n, &o->runner, NULL, NULL) : MMP_STATUS_OK;
    for (size_t r = 0; r < b->n_rows; r++) {
        mmp_bench_row *row = &b->rows[r];
        const mmp_case_result *first_bad = NULL, *first_skip = NULL;
        for (size_t i = 0; i < n; i++) {
            if (cases[i].kernel != row->kernel) continue;
            switch (res[i].verdict) {
            case MMP_VERDICT_PASS: row->n_pass++; break;
            case MMP_VERDICT_FAIL: row->n_fail++; if (!first_bad) first_bad = &res[i]; break;
            case MMP_VERDICT_ERROR:
                if (res[i].reasons == MMP_REASON_INTERRUPTED) {   /* a stop request, not the kernel's doing */
                    row->n_skip++;
                    if (!first_skip) first_skip = &res[i];
                    break;
                }
                row->n_error++;
                if (!first_bad) first_bad = &res[i];
                break;
            default: row->n_skip++; if (!first_skip) first_skip = &res[i]; break;
            }
        }
        if (first_bad) {
            char why[160];
            snprintf(row->verdict, sizeof row->verdict, "%s", mmp_verdict_name(first_bad->verdict));
            snprintf(row->validation_why, sizeof row->validation_why, "%s %s (%s): %s", mmp_verdict_name(first_bad->verdict),
                     first_bad->id, mmp_reason_format(why, sizeof why, first_bad->reasons), first_bad->message);
            snprintf(row->failed_case, sizeof row->failed_case, "%s", first_bad->id);
            row->out.state = MMP_BENCH_REFUSED;
            snprintf(row->out.why, sizeof row->out.why, "not timed: validation %s (%d of %d cases)", row->verdict,
                     row->n_fail + row->n_error, row->n_pass + row->n_fail + row->n_error + row->n_skip);
        } else if (row->n_pass) {
            snprintf(row->verdict, sizeof row->verdict, "PASS");
        } else {
            snprintf(row->verdict, sizeof row->verdict, "SKIP");
            row->out.state = MMP_BENCH_SKIPPED;
            snprintf(row->out.why, sizeof row->out.why, "not timed: validation skipped every case (%s)",
                     first_skip ? first_skip->message : "the suite has no case for this kernel");
        }
    }
    for (size_t i = 0; i < nk; i++) {
        for (size_t r = 0; r < b->n_rows; r++)
            if (b->rows[r].kernel == kernels[i]) {
                say(o, "mmaprobe bench: %s: validation %s\n", kernels[i]->name, b->rows[r].verdict);
                break;
            }
    }
    free(res);
    mmp_cases_free(cases);
    return st;
}

/* The figures of a timed row. */
static void derive(mmp_bench_row *r)
{
    const mmp_bench_outcome *x = &r->out;
    double ops = 2.0 * (double)r->m * (double)r->n * (double)r->k;
    if (x->state != MMP_BENCH_TIMED || !x->kernel.done || x->kernel.median_ms <= 0) return;
    r->tflops = ops / (x->kernel.median_ms * 1e-3) / 1e12;
    if (x->baseline.done && x->baseline.median_ms > 0) {
        r->baseline_tflops = ops / (x->baseline.median_ms * 1e-3) / 1e12;
        r->pct_baseline = 100.0 * r->tflops / r->baseline_tflops;
    }
    if (x->peak_tflops > 0) r->pct_peak = 100.0 * r->tflops / x->peak_tflops;
}

mmp_status mmp_bench_execute(mmp_bench_run *b, const mmp_kernel_desc *const *kernels, size_t nk,
                             const mmp_bench_options *o)
{
    mmp_bench_run_clear(b);
    b->opts = *o;
    MMP_TRY(make_rows(b, kernels, nk, o));
    MMP_TRY(gate(b, kernels, nk, o));
    size_t todo = 0;
    for (size_t r = 0; r < b->n_rows; r++) {
        mmp_bench_row *row = &b->rows[r];
        if (row->out.state == MMP_BENCH_SKIPPED && !row->out.why[0] && !strcmp(row->verdict, "PASS")) todo++;
    }
    mmp_status st = todo ? mmp_bench_time_rows(b, o) : MMP_STATUS_OK;
    for (size_t r = 0; r < b->n_rows; r++) derive(&b->rows[r]);
    return st;
}

int mmp_bench_exit_code(const mmp_bench_run *b)
{
    size_t timed = 0, bad = 0;
    for (size_t r = 0; r < b->n_rows; r++) {
        timed += b->rows[r].out.state == MMP_BENCH_TIMED;
        bad += b->rows[r].out.state == MMP_BENCH_REFUSED || b->rows[r].out.state == MMP_BENCH_ERROR;
    }
    if (bad) return MMP_EXIT_FAIL;
    return timed ? MMP_EXIT_PASS : MMP_EXIT_ENVIRONMENT;
}

static void pct(char *buf, size_t size, double x)
{
    if (isnan(x)) snprintf(buf, size, "-");
    else snprintf(buf, size, x < 10 ? "%.2g%%" : "%.1f%%", x);
}

void mmp_bench_print_table(FILE *out, const mmp_bench_run *b)
{
    fprintf(out, "%-28s %-16s %-16s %10s %9s %9s %8s %8s %s\n", "kernel", "precision", "shape", "median ms", "TFLOP/s",
            "lib %", "peak %", "valid", "state");
    for (size_t r = 0; r < b->n_rows; r++) {
        const mmp_bench_row *x = &b->rows[r];
        char shape[64], pb[16], pp[16], ms[24], tf[24];
        snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)x->m, (long long)x->n, (long long)x->k);
        pct(pb, sizeof pb, x->pct_baseline);
        pct(pp, sizeof pp, x->pct_peak);
        if (x->out.state == MMP_BENCH_TIMED) {
            snprintf(ms, sizeof ms, "%.4g", x->out.kernel.median_ms);
            snprintf(tf, sizeof tf, "%.4g%s", x->tflops, mmp_format_get_info((mmp_format)x->kernel->a_format)->is_float ? "" : " TOP");
        } else {
            snprintf(ms, sizeof ms, "-");
            snprintf(tf, sizeof tf, "-");
        }
        fprintf(out, "%-28s %-16s %-16s %10s %9s %9s %8s %8s %s\n", x->kernel->name, x->precision, shape, ms, tf, pb, pp,
                x->verdict[0] ? x->verdict : "-", mmp_bench_state_name(x->out.state));
    }
    fputc('\n', out);
    for (size_t r = 0; r < b->n_rows; r++) {
        const mmp_bench_row *x = &b->rows[r];
        fprintf(out, "%s %lldx%lldx%lld: ", x->kernel->name, (long long)x->m, (long long)x->n, (long long)x->k);
        if (x->out.state != MMP_BENCH_TIMED) {
            fprintf(out, "%s: %s\n", mmp_bench_state_name(x->out.state), x->out.why);
            if (x->validation_why[0]) fprintf(out, "    %s\n", x->validation_why);
            if (x->failed_case[0])
                fprintf(out, "    re-run it alone: mmaprobe validate --case '%s'%s\n", x->failed_case,
                        b->opts.rerun ? b->opts.rerun : "");
            continue;
        }
        const mmp_bench_timing *t = &x->out.kernel;
        fprintf(out, "min %.4g max %.4g ms over %d launches, %d operand sets of %.3g MB\n", t->min_ms, t->max_ms,
                t->iters, t->sets, t->set_bytes / 1e6);
        if (x->baseline && x->out.baseline.done)
            fprintf(out, "    library %s: %.4g ms, %.4g TFLOP/s\n", x->baseline->name, x->out.baseline.median_ms,
                    x->baseline_tflops);
        else
            fprintf(out, "    library: %s\n", x->baseline ? x->out.baseline.why : "no library kernel of this precision");
        if (x->out.peak_tflops > 0) fprintf(out, "    peak %.4g TFLOP/s (%s)\n", x->out.peak_tflops, x->out.peak_how);
        else if (x->out.peak_how[0]) fprintf(out, "    peak: %s\n", x->out.peak_how);
        const mmp_bench_clocks *c0 = &x->out.before, *c1 = &x->out.after;
        if (c0->available && c1->available)
            fprintf(out, "    GPU before -> after: SM %.0f -> %.0f MHz, memory %.0f -> %.0f MHz, %.0f -> %.0f W, %.0f -> %.0f C\n",
                    c0->sm_mhz, c1->sm_mhz, c0->mem_mhz, c1->mem_mhz, c0->power_w, c1->power_w, c0->temp_c, c1->temp_c);
        else
            fprintf(out, "    clocks: %s\n", c0->why[0] ? c0->why : c1->why);
    }
}
