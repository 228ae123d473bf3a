/* bench_doc.c — the JSON document of `mmaprobe bench`: the environment block every mmaprobe
 * document starts with, the options the timings were made under, then one object per row
 * (kernel x shape): its validation, state, timing, baseline, peak and the GPU's clocks. Figures
 * there is nothing to compare with are null. Written atomically (core/fileio.c).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "mmaprobe/bench.h"
#include "mmaprobe/core.h"
#include "mmaprobe/json.h"
#include "mmaprobe/report.h"
#include "json_run.h"

static void num(mmp_jw *w, const char *key, double x)
{
    mmp_jw_key(w, key);
    if (isnan(x)) mmp_jw_null(w);
    else mmp_jw_double(w, x);
}

static void str(mmp_jw *w, const char *key, const char *s)
{
    mmp_jw_key(w, key);
    mmp_jw_string(w, s ? s : "");
}

static void timing(mmp_jw *w, const char *key, const mmp_bench_timing *t, double tflops)
{
    mmp_jw_key(w, key);
    mmp_jw_begin_object(w);
    mmp_jw_key(w, "done"); mmp_jw_bool(w, t->done);
    num(w, "median_ms", t->done ? t->median_ms : NAN);
    num(w, "min_ms", t->done ? t->min_ms : NAN);
    num(w, "max_ms", t->done ? t->max_ms : NAN);
    num(w, "tflops", t->done ? tflops : NAN);
    mmp_jw_key(w, "warmup"); mmp_jw_int64(w, t->warmup);
    mmp_jw_key(w, "iters"); mmp_jw_int64(w, t->iters);
    mmp_jw_key(w, "sets"); mmp_jw_int64(w, t->sets);
    mmp_jw_key(w, "set_bytes"); mmp_jw_int64(w, t->set_bytes);
    mmp_jw_key(w, "unwritten"); mmp_jw_int64(w, t->unwritten);
    str(w, "why", t->why);
    mmp_jw_end_object(w);
}

static void clocks(mmp_jw *w, const char *key, const mmp_bench_clocks *c)
{
    mmp_jw_key(w, key);
    mmp_jw_begin_object(w);
    mmp_jw_key(w, "available"); mmp_jw_bool(w, c->available);
    num(w, "sm_clock_mhz", c->available ? c->sm_mhz : NAN);
    num(w, "mem_clock_mhz", c->available ? c->mem_mhz : NAN);
    num(w, "power_w", c->available ? c->power_w : NAN);
    num(w, "temperature_c", c->available ? c->temp_c : NAN);
    str(w, "why", c->why);
    mmp_jw_end_object(w);
}

static void row(mmp_jw *w, const mmp_bench_row *r)
{
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)r->m, (long long)r->n, (long long)r->k);
    mmp_jw_begin_object(w);
    str(w, "kernel", r->kernel->name);
    str(w, "precision", r->precision);
    str(w, "where", r->kernel->where == MMP_KERNEL_HOST ? "host" : "device");
    str(w, "shape", shape);
    mmp_jw_key(w, "m"); mmp_jw_int64(w, r->m);
    mmp_jw_key(w, "n"); mmp_jw_int64(w, r->n);
    mmp_jw_key(w, "k"); mmp_jw_int64(w, r->k);
    char lay[32];
    snprintf(lay, sizeof lay, "%s.%s.%s", mmp_layout_name(r->la), mmp_layout_name(r->lb), mmp_layout_name(r->ld));
    str(w, "layouts", lay);
    str(w, "state", mmp_bench_state_name(r->out.state));
    str(w, "why", r->out.why);
    mmp_jw_key(w, "validation");
    mmp_jw_begin_object(w);
    str(w, "verdict", r->verdict);
    mmp_jw_key(w, "pass"); mmp_jw_int64(w, r->n_pass);
    mmp_jw_key(w, "fail"); mmp_jw_int64(w, r->n_fail);
    mmp_jw_key(w, "error"); mmp_jw_int64(w, r->n_error);
    mmp_jw_key(w, "skip"); mmp_jw_int64(w, r->n_skip);
    str(w, "why", r->validation_why);
    str(w, "failed_case", r->failed_case);
    mmp_jw_end_object(w);
    timing(w, "timing", &r->out.kernel, r->tflops);
    str(w, "baseline_kernel", r->baseline ? r->baseline->name : "");
    timing(w, "baseline", &r->out.baseline, r->baseline_tflops);
    num(w, "pct_of_baseline", r->pct_baseline);
    num(w, "peak_tflops", r->out.peak_tflops > 0 ? r->out.peak_tflops : NAN);
    str(w, "peak_how", r->out.peak_how);
    num(w, "pct_of_peak", r->pct_peak);
    clocks(w, "clocks_before", &r->out.before);
    clocks(w, "clocks_after", &r->out.after);
    mmp_jw_end_object(w);
}

mmp_status mmp_report_write_bench_stream(FILE *out, const mmp_env *env, const mmp_bench_run *b)
{
    mmp_jw w;
    mmp_jw_init(&w, out, 2);
    mmp_jw_begin_object(&w);
    str(&w, "format", "mmaprobe-bench");
    str(&w, "schema_version", "1.0");
    mmp_jw_key(&w, "env");
    mmp_json_write_env(&w, env);
    const mmp_bench_options *o = &b->opts;
    mmp_jw_key(&w, "options");
    mmp_jw_begin_object(&w);
    str(&w, "suite", o->suite);
    mmp_jw_key(&w, "seed"); mmp_jw_uint64(&w, o->seed);
    str(&w, "dist", mmp_dist_name(o->dist));
    mmp_jw_key(&w, "rotate_bytes"); mmp_jw_int64(&w, o->rotate_bytes);
    mmp_jw_key(&w, "timeout_s"); mmp_jw_double(&w, o->timeout_s);
    str(&w, "flops", "2*M*N*K per launch (integer kernels: operations, TOP/s)");
    mmp_jw_end_object(&w);
    mmp_jw_key(&w, "exit_code");
    mmp_jw_int64(&w, mmp_bench_exit_code(b));
    mmp_jw_key(&w, "rows");
    mmp_jw_begin_array(&w);
    for (size_t i = 0; i < b->n_rows; i++) row(&w, &b->rows[i]);
    mmp_jw_end_array(&w);
    mmp_jw_end_object(&w);
    fputc('\n', out);
    if (w.error) return MMP_ERR(MMP_STATUS_INTERNAL, "JSON writer misuse (unbalanced containers)");
    if (fflush(out) != 0 || ferror(out)) return MMP_ERR(MMP_STATUS_IO, "cannot write the bench document: %s", strerror(errno));
    return MMP_STATUS_OK;
}

typedef struct {
    const mmp_env *env;
    const mmp_bench_run *b;
} bench_doc;

static mmp_status write_doc(FILE *out, void *ctx)
{
    const bench_doc *d = ctx;
    return mmp_report_write_bench_stream(out, d->env, d->b);
}

mmp_status mmp_report_write_bench(const char *path, const mmp_env *env, const mmp_bench_run *b)
{
    bench_doc d = {env, b};
    return mmp_file_write_atomic(path, write_doc, &d);
}
