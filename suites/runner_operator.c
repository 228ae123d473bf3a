/* runner_operator.c — an operator case (runner.h mmp_operator), start to verdict, with the GEMM
 * path's machinery: every operand in a guarded mmp_buffer (4 KiB guards on both sides, canaries),
 * inputs restored and the output poisoned (mmp_runner_poison_bits: float outputs a NaN no
 * arithmetic makes, integer outputs sentinel 0x5A.. in run 1 and 0xA5.. in run 2) before each of
 * two runs; after each, guard damage of every buffer and changed input elements; unwritten
 * (float: poison in either run; integer: both sentinels) and nondeterministic (the runs differ
 * bitwise) output elements; then the operator's reference step (its check hook). Device
 * operators' buffers are uploaded whole, guards included, and downloaded whole after each run, so
 * a write past either end on the device lands in a guard. Stage times as for GEMM cases.
 */
#include <stdlib.h>
#include <string.h>

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "mmaprobe/cuda_check.h"
#endif
#include "runner_internal.h"

typedef struct opcase {
    mmp_operand d[MMP_OPERATOR_MAX_OPERANDS];
    mmp_buffer b[MMP_OPERATOR_MAX_OPERANDS];
    void *host[MMP_OPERATOR_MAX_OPERANDS], *ptr[MMP_OPERATOR_MAX_OPERANDS];
    int n, out;
    int device;
    void *stream;
} opcase;

static void opcase_clear(opcase *x)
{
    for (int i = 0; i < x->n; i++) mmp_buffer_clear(&x->b[i]);
}

static mmp_status opcase_init(opcase *x, const mmp_case *c)
{
    x->out = -1;
    int n = c->op->operands(x->d, c);
    if (n <= 0 || n > MMP_OPERATOR_MAX_OPERANDS)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s", n <= 0 ? mmp_error_last() : "too many operands");
    for (int i = 0; i < n; i++) {
        if (x->d[i].role != MMP_OPERAND_OUTPUT) continue;
        if (x->out >= 0) return MMP_ERR(MMP_STATUS_INTERNAL, "operator case %s: two outputs", c->id);
        x->out = i;
    }
    if (x->out < 0) return MMP_ERR(MMP_STATUS_INTERNAL, "operator case %s: no output", c->id);
    for (int i = 0; i < n; i++) {
        const mmp_operand *d = &x->d[i];
        x->n = i + 1;
        MMP_TRY(mmp_buffer_init(&x->b[i], d->f, MMP_LAYOUT_ROW, d->cols, d->rows, d->cols));
        mmp_buffer_fill_canary(&x->b[i]);
        x->host[i] = mmp_buffer_host(&x->b[i]);
    }
    return MMP_STATUS_OK;
}

/* One launch; OK, MMP_STATUS_UNSUPPORTED, MMP_STATUS_KERNEL (r says why) or MMP_STATUS_CUDA
 * (sticky). after != 0: the operator's after hook instead of run, on the buffers as they are. */
static mmp_status launch(mmp_case_result *r, opcase *x, const mmp_case *c, void *state, int after, double *ms)
{
    const mmp_operator *op = c->op;
    double *stage = r->time_stage_ms;
    int rc = MMP_KERNEL_OK;
    mmp_status hs = MMP_STATUS_OK;
    if (!x->device) {
        for (int i = 0; i < x->n; i++) x->ptr[i] = mmp_buffer_kernel_ptr(&x->b[i]);
        double t0 = mmp_runner_now_ms();
        mmp_runner_phase(1);
        if (after) hs = op->after(state, x->ptr, c, NULL);
        else rc = op->run(state, x->ptr, c, NULL);
        mmp_runner_phase(0);
        *ms = mmp_runner_now_ms() - t0;
    } else {
#ifdef MMP_HAVE_CUDA
        double tx = mmp_runner_now_ms();
        if (!after)
            for (int i = 0; i < x->n; i++) MMP_TRY(mmp_buffer_upload(&x->b[i]));
        stage[MMP_STAGE_TRANSFER] += mmp_runner_now_ms() - tx;
        for (int i = 0; i < x->n; i++) x->ptr[i] = mmp_buffer_kernel_ptr(&x->b[i]);
        cudaEvent_t e0, e1;
        MMP_CUDA_CHECK(cudaEventCreate(&e0));
        MMP_CUDA_CHECK(cudaEventCreate(&e1));
        MMP_CUDA_CHECK(cudaEventRecord(e0, x->stream));
        mmp_runner_phase(1);
        if (after) hs = op->after(state, x->ptr, c, x->stream);
        else rc = op->run(state, x->ptr, c, x->stream);
        cudaError_t le = cudaGetLastError();
        cudaEventRecord(e1, x->stream);
        cudaError_t se = cudaStreamSynchronize(x->stream);
        mmp_runner_phase(0);
        float t = 0;
        if (se == cudaSuccess) cudaEventElapsedTime(&t, e0, e1);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        *ms = t;
        cudaError_t err = se != cudaSuccess ? se : le;
        if (err != cudaSuccess) {
            mmp_runner_say(r, "cuda: %s (%s)%s", cudaGetErrorName(err), cudaGetErrorString(err), after ? " in the after step" : "");
            r->reasons |= MMP_REASON_CUDA;
            if (mmp_runner_cuda_sticky((int)err)) return MMP_ERR(MMP_STATUS_CUDA, "sticky CUDA error: %s", cudaGetErrorString(err));
            return MMP_STATUS_KERNEL;
        }
        if (!after && rc == MMP_KERNEL_OK) {
            tx = mmp_runner_now_ms();
            for (int i = 0; i < x->n; i++) MMP_TRY(mmp_buffer_download(&x->b[i]));
            stage[MMP_STAGE_TRANSFER] += mmp_runner_now_ms() - tx;
        }
#else
        (void)stage;
        return MMP_ERR(MMP_STATUS_NO_DEVICE, "device operator in a build without CUDA");
#endif
    }
    if (hs != MMP_STATUS_OK) return hs;
    if (rc == MMP_KERNEL_UNSUPPORTED) return MMP_STATUS_UNSUPPORTED;
    if (rc != MMP_KERNEL_OK) {
        mmp_runner_say(r, "launch: operator returned %d", rc);
        return MMP_STATUS_KERNEL;
    }
    return MMP_STATUS_OK;
}

/* Guard and input damage of every buffer after run `run`; a message part for each buffer and
 * kind the first time it is seen (with the run). */
static void check_damage(mmp_case_result *r, opcase *x, int run, uint32_t seen[MMP_OPERATOR_MAX_OPERANDS])
{
    for (int i = 0; i < x->n; i++) {
        mmp_damage d;
        const mmp_buffer *b = &x->b[i];
        mmp_buffer_damage(&d, b, i != x->out);
        if (d.guard_bytes) {
            r->reasons |= MMP_REASON_GUARD;
            r->n_guard += d.guard_bytes;
            if (!(seen[i] & 1))
                mmp_runner_say(r, "guard: %lld bytes of %s's guard changed (run %d), first at byte %+lld from its %s",
                               (long long)d.guard_bytes, x->d[i].name, run + 1,
                               d.first_guard < 0 ? d.first_guard : d.first_guard - (long long)b->data_bytes,
                               d.first_guard < 0 ? "start" : "end");
            seen[i] |= 1;
        }
        if (d.logical) {
            r->reasons |= MMP_REASON_INPUT_MODIFIED;
            r->n_input_modified += d.logical;
            if (!(seen[i] & 2))
                mmp_runner_say(r, "input-modified: %lld elements of %s (run %d), first (%lld,%lld)", (long long)d.logical,
                               x->d[i].name, run + 1, (long long)d.log_i, (long long)d.log_j);
            seen[i] |= 2;
        }
    }
}

/* Unwritten and nondeterministic output elements (row-major); unwritten ones are set to the
 * operator's expected value in out[0], so they are reported once. */
static void scan(mmp_case_result *r, void **out, const opcase *x, const mmp_case *c, const void *state)
{
    const mmp_operand *d = &x->d[x->out];
    const int is_float = mmp_format_get_info(d->f)->is_float;
    const uint64_t p0 = mmp_runner_poison_bits(d->f, 0), p1 = mmp_runner_poison_bits(d->f, 1);
    int64_t n = d->rows * d->cols, un = -1, nd = -1;
    for (int64_t e = 0; e < n; e++) {
        uint64_t x0 = mmp_format_load_bits(out[0], (size_t)e, d->f), x1 = mmp_format_load_bits(out[1], (size_t)e, d->f);
        if (is_float ? (x0 == p0 || x1 == p1) : (x0 == p0 && x1 == p1)) {
            if (!r->n_unwritten++) un = e;
            mmp_format_store_bits(out[0], (size_t)e, c->op->expected(state, e), d->f);
            continue;
        }
        if (!mmp_runner_bits_equal(x0, x1, d->f) && !r->n_nondet++) nd = e;
    }
    if (r->n_unwritten) {
        r->reasons |= MMP_REASON_UNWRITTEN;
        mmp_runner_say(r, "unwritten: %lld of %lld elements of %s still hold poison, first (%lld,%lld)",
                       (long long)r->n_unwritten, (long long)n, d->name, (long long)(un / d->cols), (long long)(un % d->cols));
    }
    if (r->n_nondet && c->kernel->deterministic) {
        r->reasons |= MMP_REASON_NONDETERMINISTIC;
        mmp_runner_say(r, "nondeterministic: %lld elements of %s differ between two runs, first (%lld,%lld)",
                       (long long)r->n_nondet, d->name, (long long)(nd / d->cols), (long long)(nd % d->cols));
    }
}

static mmp_status run_operator(mmp_case_result *r, const mmp_case *c, opcase *x, void **state, void **out)
{
    const mmp_operator *op = c->op;
    double *stage = r->time_stage_ms;
    double t0 = mmp_runner_now_ms();
    mmp_status st = opcase_init(x, c);
    if (st == MMP_STATUS_OK) st = op->prepare(state, x->host, c);
    stage[MMP_STAGE_INPUTS] += mmp_runner_now_ms() - t0;
    if (st == MMP_STATUS_UNSUPPORTED) {
        mmp_runner_skip(r, mmp_error_last());
        return MMP_STATUS_OK;
    }
    MMP_TRY(st);
    for (int i = 0; i < x->n; i++)
        if (i != x->out) mmp_buffer_snapshot(&x->b[i]);
    t0 = mmp_runner_now_ms();
    st = op->reference(*state, c);
    r->time_reference_ms = stage[MMP_STAGE_REFERENCE] = mmp_runner_now_ms() - t0;
    MMP_TRY(st);
#ifdef MMP_HAVE_CUDA
    if (x->device) MMP_TRY(mmp_runner_stream(&x->stream));
#endif
    mmp_buffer *y = &x->b[x->out];
    uint32_t seen[MMP_OPERATOR_MAX_OPERANDS] = {0};
    for (int run = 0; run < 2; run++) {
        t0 = mmp_runner_now_ms();
        for (int i = 0; i < x->n; i++)
            if (i != x->out) mmp_buffer_restore(&x->b[i]);
        mmp_buffer_fill_canary(y);
        mmp_buffer_fill_logical_bits(y, mmp_runner_poison_bits(y->f, run));
        mmp_buffer_snapshot(y);
        stage[MMP_STAGE_POISON] += mmp_runner_now_ms() - t0;
        double ms = 0, tx0 = stage[MMP_STAGE_TRANSFER];
        t0 = mmp_runner_now_ms();
        st = launch(r, x, c, *state, 0, &ms);
        stage[MMP_STAGE_LAUNCH] += mmp_runner_now_ms() - t0 - (stage[MMP_STAGE_TRANSFER] - tx0);
        if (st == MMP_STATUS_UNSUPPORTED) {
            mmp_runner_skip(r, "the operator declined these arguments (MMP_KERNEL_UNSUPPORTED)");
            return MMP_STATUS_OK;
        }
        if (st == MMP_STATUS_KERNEL) {
            r->verdict = MMP_VERDICT_ERROR;
            if (!(r->reasons & MMP_REASON_CUDA)) r->reasons |= MMP_REASON_LAUNCH;
            return MMP_STATUS_OK;
        }
        MMP_TRY(st);
        if (run == 0 || ms < r->time_kernel_ms) r->time_kernel_ms = ms;
        t0 = mmp_runner_now_ms();
        check_damage(r, x, run, seen);
        out[run] = malloc(y->data_bytes);
        if (!out[run]) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
        memcpy(out[run], mmp_buffer_host(y), y->data_bytes);
        stage[MMP_STAGE_GUARDS] += mmp_runner_now_ms() - t0;
    }
    if (op->after) {
        double ms = 0;
        t0 = mmp_runner_now_ms();
        st = launch(r, x, c, *state, 1, &ms);
        stage[MMP_STAGE_LAUNCH] += mmp_runner_now_ms() - t0;
        if (st == MMP_STATUS_KERNEL) {
            r->verdict = MMP_VERDICT_ERROR;
            r->reasons |= MMP_REASON_LAUNCH;
            return MMP_STATUS_OK;
        }
        MMP_TRY(st);
    }
    t0 = mmp_runner_now_ms();
    scan(r, out, x, c, *state);
    st = op->check(r, *state, out[0], c);
    stage[MMP_STAGE_COMPARE] += mmp_runner_now_ms() - t0;
    MMP_TRY(st);
    r->verdict = r->reasons ? MMP_VERDICT_FAIL : MMP_VERDICT_PASS;
    return MMP_STATUS_OK;
}

mmp_status mmp_runner_run_operator(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o)
{
    mmp_runner_result_for_case(r, c, o);
    const mmp_kernel_desc *k = c->kernel;
    if (k->where == MMP_KERNEL_DEVICE && mmp_runner_device_skip(r, o, k->min_cc, k->arch_specific)) return MMP_STATUS_OK;
    opcase x;
    memset(&x, 0, sizeof x);
    x.device = k->where == MMP_KERNEL_DEVICE;
    void *state = NULL, *out[2] = {NULL, NULL};
    mmp_status st = run_operator(r, c, &x, &state, out);
    if (st != MMP_STATUS_OK) {
        r->verdict = MMP_VERDICT_ERROR;
        if (st == MMP_STATUS_CUDA) r->reasons |= MMP_REASON_CUDA;
        if (st == MMP_STATUS_NO_MEMORY) {
            char why[400];
            snprintf(why, sizeof why, "%s", mmp_error_last());
            mmp_runner_say(r, "out of memory for %s: %s", c->id, why);
            if (x.device) r->reasons |= MMP_REASON_CUDA;
            st = MMP_STATUS_OK;
        } else if (st != MMP_STATUS_CUDA) {
            mmp_runner_say(r, "%s", mmp_error_last());
            st = MMP_STATUS_OK;   /* r holds the verdict; only a sticky error stops the process */
        }
    }
    c->op->clear(state);
    free(out[0]);
    free(out[1]);
    opcase_clear(&x);
    return st;
}
