/* runner_case.c — one case, start to verdict, in the calling process.
 *
 *  1. support: layouts, shape multiples, 4-bit ld, the declared constraints (min_k, ld
 *     alignment, tight D), device and compute capability, the plugin's GPU code -> SKIP
 *  2. inputs from the case's distribution into guarded buffers (canaries in guards and ld
 *     padding), pristine copies kept; the reference from those stored inputs
 *  3. two launches; before each the output holds poison (a NaN with a payload no arithmetic
 *     makes; integer outputs: sentinel 0x5A.. then 0xA5..), the inputs are restored
 *  4. after each: guard/padding damage of every buffer, changed input elements
 *  5. unwritten = still poison (integers: the sentinel in both runs); nondeterministic = the two
 *     outputs differ bitwise (unless the kernel declares itself non-deterministic)
 *  6. metrics against the reference (metrics.h); exact inputs (exact, onehot, integer
 *     accumulators) must match bit for bit, others the tolerance in force
 * An operator case (c->op) goes the same steps in runner_operator.c with its own operands and
 * reference step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "mmaprobe/cuda_check.h"
#endif
#include "runner_internal.h"

/* 1 (and r is a SKIP) if the kernel cannot take this case. */
static int unsupported(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o)
{
    const mmp_kernel_desc *k = c->kernel;
    char why[200];
    if (!(k->layouts_a & (1u << c->la)) || !(k->layouts_b & (1u << c->lb)) || !(k->layouts_d & (1u << c->ld)))
        return mmp_runner_skip(r, "layout not accepted by the kernel");
    int64_t mm = k->m_multiple > 0 ? k->m_multiple : 1, nm = k->n_multiple > 0 ? k->n_multiple : 1,
            km = k->k_multiple > 0 ? k->k_multiple : 1;
    if (c->m % mm || c->n % nm || c->k % km) {
        snprintf(why, sizeof why, "shape %lldx%lldx%lld: kernel needs multiples of %lldx%lldx%lld",
                 (long long)c->m, (long long)c->n, (long long)c->k, (long long)mm, (long long)nm, (long long)km);
        return mmp_runner_skip(r, why);
    }
    mmp_gemm g;
    mmp_case_gemm(&g, c);
    if (mmp_gemm_check(&g) != MMP_STATUS_OK) {
        snprintf(why, sizeof why, "invalid problem: %s", mmp_error_last());
        return mmp_runner_skip(r, why);
    }
    if (mmp_runner_constraint_skip(r, c)) return 1;
    if (k->where == MMP_KERNEL_HOST) {
        double work = (double)c->m * (double)c->n * (double)c->k;
        if (work > ldexp(1.0, o->host_max_log2_work)) {
            snprintf(why, sizeof why, "host kernel: M*N*K = %.3g above 2^%d (too slow on the CPU)", work,
                     o->host_max_log2_work);
            return mmp_runner_skip(r, why);
        }
        return 0;
    }
    return mmp_runner_device_skip(r, o, k->min_cc, k->arch_specific) || mmp_runner_code_skip(r, o, k);
}

typedef struct {
    mmp_buffer buf[4];             /* A, B, C, D */
    int have_c;
    void *workspace;
    size_t ws_size;
    int ws_on_device;              /* workspace from cudaMalloc (else malloc) */
    int resident;                  /* device stages: buffers live on the device (runner_dev.cu) */
    int devcheck;                  /* resident, and the comparison runs on the device too */
    void *stream;                  /* resident: the case stream every stage is queued on */
    void *got0;                    /* devcheck: run 1's output, kept on the device */
    int host_stale;                /* resident: the host images of A, B, C not filled yet */
} operands;

/* Device stages for a device kernel unless MMP_DEVICE_STAGES=0 (the host stages are the
 * oracle they are tested against). */
static int want_resident(const mmp_case *c)
{
#ifdef MMP_HAVE_CUDA
    const char *e = getenv("MMP_DEVICE_STAGES");
    return c->kernel->where == MMP_KERNEL_DEVICE && !(e && strcmp(e, "0") == 0);
#else
    (void)c;
    return 0;
#endif
}

static void operands_clear(operands *ops)
{
    for (int i = 0; i < 4; i++) mmp_buffer_clear(&ops->buf[i]);
#ifdef MMP_HAVE_CUDA
    if (ops->got0) cudaFree(ops->got0);
    ops->got0 = NULL;
    if (ops->workspace && ops->ws_on_device) cudaFree(ops->workspace);
    else
#endif
        free(ops->workspace);
    ops->workspace = NULL;
}

/* mmp_ref_compute's host_operands: the host images of the resident inputs, once */
static mmp_status host_inputs(void *ctx)
{
    operands *ops = ctx;
#ifdef MMP_HAVE_CUDA
    for (int mat = 0; mat < 3 && ops->host_stale; mat++)
        if (ops->buf[mat].image) MMP_TRY(mmp_buffer_dev_download(mmp_buffer_host(&ops->buf[mat]), &ops->buf[mat], ops->stream));
#endif
    ops->host_stale = 0;
    return MMP_STATUS_OK;
}

static mmp_status fill_inputs(operands *ops, const mmp_case *c)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_dist_ctx x;
    mmp_dist_ctx_init(&x, c);
    ops->have_c = c->beta != 0 && k->reads_c;
    MMP_TRY(mmp_buffer_init(&ops->buf[0], (mmp_format)k->a_format, c->la, c->lda, c->m, c->k));
    MMP_TRY(mmp_buffer_init(&ops->buf[1], (mmp_format)k->b_format, c->lb, c->ldb, c->k, c->n));
    if (ops->have_c) MMP_TRY(mmp_buffer_init(&ops->buf[2], (mmp_format)k->c_format, c->lc, c->ldc, c->m, c->n));
    MMP_TRY(mmp_buffer_init(&ops->buf[3], (mmp_format)k->d_format, c->ld, c->ldd, c->m, c->n));
#ifdef MMP_HAVE_CUDA
    if (ops->resident) {
        MMP_TRY(mmp_runner_stream(&ops->stream));
        for (int mat = 0; mat < 4; mat++)
            if (ops->buf[mat].image) MMP_TRY(mmp_buffer_dev_init(&ops->buf[mat]));
        for (int mat = 0; mat < 3; mat++) {
            mmp_buffer *b = &ops->buf[mat];
            if (!b->image) continue;
            MMP_TRY(mmp_buffer_dev_canary(b, ops->stream));
            MMP_TRY(mmp_buffer_dev_fill(b, &x, mat, ops->stream));
            MMP_TRY(mmp_buffer_dev_snapshot(b, ops->stream));
        }
        /* the host reads the inputs for the checks a device comparison leaves to it, and the
         * reference for elements its device path leaves undecided: with the comparison on the
         * device they are copied only when the reference asks (host_inputs) */
        ops->host_stale = 1;
        /* the reference's kernels run on the legacy stream, which does not wait for this
         * non-blocking one: the inputs must be complete before it starts */
        MMP_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)ops->stream));
        return ops->devcheck ? MMP_STATUS_OK : host_inputs(ops);
    }
#endif
    for (int mat = 0; mat < 3; mat++) {
        mmp_buffer *b = &ops->buf[mat];
        if (!b->image) continue;
        mmp_buffer_fill_canary(b);
        mmp_runner_fill(b, &x, mat);
        mmp_buffer_snapshot(b);
    }
    return MMP_STATUS_OK;
}

/* One launch; returns OK, MMP_STATUS_KERNEL (kernel error, r says why) or MMP_STATUS_CUDA
 * (sticky: the process must stop using the device). */
static mmp_status launch(mmp_case_result *r, operands *ops, const mmp_case *c, double *ms)
{
    const mmp_kernel_desc *k = c->kernel;
    int device = k->where == MMP_KERNEL_DEVICE;
    mmp_kernel_args a;
    memset(&a, 0, sizeof a);
    a.m = c->m; a.n = c->n; a.k = c->k;
    a.layout_a = c->la; a.layout_b = c->lb; a.layout_c = c->lc; a.layout_d = c->ld;
    a.lda = c->lda; a.ldb = c->ldb; a.ldc = ops->have_c ? c->ldc : c->ldd; a.ldd = c->ldd;
    a.alpha = c->alpha;
    a.beta = ops->have_c ? c->beta : 0.0;
    a.workspace = ops->workspace;
    a.workspace_size = ops->ws_size;
    if (!device) {
        a.a = mmp_buffer_kernel_ptr(&ops->buf[0]);
        a.b = mmp_buffer_kernel_ptr(&ops->buf[1]);
        a.c = ops->have_c ? mmp_buffer_kernel_ptr(&ops->buf[2]) : NULL;
        a.d = mmp_buffer_kernel_ptr(&ops->buf[3]);
        double t0 = mmp_runner_now_ms();
        mmp_runner_phase(1);
        int rc = k->run(&a);
        int failed = mmp_runner_launch_status(r, k);
        mmp_runner_phase(0);
        *ms = mmp_runner_now_ms() - t0;
        if (failed) return MMP_STATUS_KERNEL;
        if (rc == MMP_KERNEL_UNSUPPORTED) return MMP_STATUS_UNSUPPORTED;
        if (rc != 0) {
            mmp_runner_say(r, "launch: kernel returned %d", rc);
            return MMP_STATUS_KERNEL;
        }
        return MMP_STATUS_OK;
    }
#ifdef MMP_HAVE_CUDA
    void *stream;
    MMP_TRY(mmp_runner_stream(&stream));
    double tx = mmp_runner_now_ms();
    for (int i = 0; i < 4 && !ops->resident; i++)
        if (ops->buf[i].image) MMP_TRY(mmp_buffer_upload(&ops->buf[i]));
    r->time_stage_ms[MMP_STAGE_TRANSFER] += mmp_runner_now_ms() - tx;
    a.a = mmp_buffer_kernel_ptr(&ops->buf[0]);
    a.b = mmp_buffer_kernel_ptr(&ops->buf[1]);
    a.c = ops->have_c ? mmp_buffer_kernel_ptr(&ops->buf[2]) : NULL;
    a.d = mmp_buffer_kernel_ptr(&ops->buf[3]);
    a.stream = stream;
    cudaEvent_t e0, e1;
    MMP_CUDA_CHECK(cudaEventCreate(&e0));
    MMP_CUDA_CHECK(cudaEventCreate(&e1));
    MMP_CUDA_CHECK(cudaEventRecord(e0, stream));
    mmp_runner_phase(1);
    int rc = k->run(&a);
    int failed = mmp_runner_launch_status(r, k);   /* the plugin's own runtime: see kernel.h */
    cudaError_t le = cudaGetLastError();
    cudaEventRecord(e1, stream);
    cudaError_t se = cudaStreamSynchronize(stream);
    mmp_runner_phase(0);
    float t = 0;
    if (se == cudaSuccess) cudaEventElapsedTime(&t, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    *ms = t;
    cudaError_t err = se != cudaSuccess ? se : le;
    if (err != cudaSuccess) {
        mmp_runner_say(r, "cuda: %s (%s)", cudaGetErrorName(err), cudaGetErrorString(err));
        r->reasons |= MMP_REASON_CUDA;
        if (mmp_runner_cuda_sticky((int)err)) return MMP_ERR(MMP_STATUS_CUDA, "sticky CUDA error: %s", cudaGetErrorString(err));
        return MMP_STATUS_KERNEL;
    }
    if (failed) return MMP_STATUS_KERNEL;
    if (rc == MMP_KERNEL_UNSUPPORTED) return MMP_STATUS_UNSUPPORTED;
    if (rc != 0) {
        mmp_runner_say(r, "launch: kernel returned %d", rc);
        return MMP_STATUS_KERNEL;
    }
    tx = mmp_runner_now_ms();
    for (int i = 0; i < 4 && !ops->resident; i++)
        if (ops->buf[i].image) MMP_TRY(mmp_buffer_download(&ops->buf[i]));
    r->time_stage_ms[MMP_STAGE_TRANSFER] += mmp_runner_now_ms() - tx;
    return MMP_STATUS_OK;
#else
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "device kernel in a build without CUDA");
#endif
}

static const char *const mat_names[4] = {"A", "B", "C", "D"};

/* Guard, padding and input damage after a launch: reasons and counts into r, the damage into
 * d[mat] (messages come once for both runs: say_damage). */
static mmp_status check_damage(mmp_case_result *r, operands *ops, mmp_damage d[4])
{
    for (int mat = 0; mat < 4; mat++) {
        mmp_buffer *b = &ops->buf[mat];
        memset(&d[mat], 0, sizeof d[mat]);
        if (!b->image) continue;
#ifdef MMP_HAVE_CUDA
        if (ops->resident) MMP_TRY(mmp_buffer_dev_damage(&d[mat], b, mat < 3, ops->stream));
        else
#endif
            mmp_buffer_damage(&d[mat], b, mat < 3);
        if (d[mat].guard_bytes || d[mat].padding) r->reasons |= MMP_REASON_GUARD;
        if (d[mat].logical) r->reasons |= MMP_REASON_INPUT_MODIFIED;
        r->n_guard += d[mat].guard_bytes + d[mat].padding;
        r->n_input_modified += d[mat].logical;
    }
    return MMP_STATUS_OK;
}

/* Which runs (of `runs`) show a damage: "run 1", "run 2" or "both runs" (when equal). */
static const char *which_runs(int have0, int have1, int same)
{
    if (have0 && have1) return same ? "both runs" : "run 1; run 2 differs";
    return have0 ? "run 1" : "run 2";
}

/* One message part per buffer and kind of damage, whichever run(s) showed it. */
static void say_damage(mmp_case_result *r, const operands *ops, mmp_damage d[2][4], int runs)
{
    for (int mat = 0; mat < 4; mat++) {
        const mmp_buffer *b = &ops->buf[mat];
        if (!b->image) continue;
        const mmp_damage *d0 = &d[0][mat], *d1 = runs > 1 ? &d[1][mat] : NULL;
        int g0 = d0->guard_bytes != 0, g1 = d1 && d1->guard_bytes;
        if (g0 || g1) {
            const mmp_damage *x = g0 ? d0 : d1;
            mmp_runner_say(r, "guard: %lld bytes of %s's guard changed (%s), first at byte %+lld from its %s",
                (long long)x->guard_bytes, mat_names[mat],
                which_runs(g0, g1, g1 && d1->guard_bytes == d0->guard_bytes && d1->first_guard == d0->first_guard),
                x->first_guard < 0 ? x->first_guard : x->first_guard - (long long)b->data_bytes,
                x->first_guard < 0 ? "start" : "end");
        }
        int p0 = d0->padding != 0, p1 = d1 && d1->padding;
        if (p0 || p1) {
            const mmp_damage *x = p0 ? d0 : d1;
            mmp_runner_say(r, "guard: %lld ld-padding elements of %s changed (%s), first at [%lld][%lld] of ld %lld",
                (long long)x->padding, mat_names[mat],
                which_runs(p0, p1, p1 && d1->padding == d0->padding && d1->pad_i == d0->pad_i && d1->pad_j == d0->pad_j),
                (long long)x->pad_i, (long long)x->pad_j, (long long)b->ld);
        }
        int l0 = d0->logical != 0, l1 = d1 && d1->logical;
        if (l0 || l1) {
            const mmp_damage *x = l0 ? d0 : d1;
            mmp_runner_say(r, "input-modified: %lld elements of %s (%s), first (%lld,%lld)", (long long)x->logical, mat_names[mat],
                which_runs(l0, l1, l1 && d1->logical == d0->logical && d1->log_i == d0->log_i && d1->log_j == d0->log_j),
                (long long)x->log_i, (long long)x->log_j);
        }
    }
}

/* Before run `run`: inputs as filled, D all canary then poison (or the run's sentinel) in
 * every element, and that state as D's pristine image. */
static mmp_status poison(operands *ops, mmp_format df, int run)
{
    mmp_buffer *d = &ops->buf[3];
#ifdef MMP_HAVE_CUDA
    if (ops->resident) {
        for (int mat = 0; mat < 3; mat++)
            if (ops->buf[mat].image) MMP_TRY(mmp_buffer_dev_restore(&ops->buf[mat], ops->stream));
        MMP_TRY(mmp_buffer_dev_canary(d, ops->stream));
        MMP_TRY(mmp_buffer_dev_fill_bits(d, mmp_runner_poison_bits(df, run), ops->stream));
        MMP_TRY(mmp_buffer_dev_snapshot(d, ops->stream));
        MMP_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)ops->stream));
        return MMP_STATUS_OK;
    }
#endif
    for (int mat = 0; mat < 3; mat++)
        if (ops->buf[mat].image) mmp_buffer_restore(&ops->buf[mat]);
    mmp_buffer_fill_canary(d);
    mmp_buffer_fill_logical_bits(d, mmp_runner_poison_bits(df, run));
    mmp_buffer_snapshot(d);
    return MMP_STATUS_OK;
}

static mmp_status run_case(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o)
{
    const mmp_kernel_desc *k = c->kernel;
    mmp_format df = (mmp_format)k->d_format;
    operands ops;
    memset(&ops, 0, sizeof ops);
    ops.resident = want_resident(c);
#ifdef MMP_HAVE_CUDA
    ops.devcheck = ops.resident && mmp_check_device_ok(c, o);   /* planned; confirmed after the reference */
#endif
    mmp_ref ref;
    memset(&ref, 0, sizeof ref);
    void *out[2] = {NULL, NULL};
    double *stage = r->time_stage_ms;
    double t0 = mmp_runner_now_ms();
    mmp_status st = fill_inputs(&ops, c);
    stage[MMP_STAGE_INPUTS] += mmp_runner_now_ms() - t0;
    if (st != MMP_STATUS_OK) goto done;
    t0 = mmp_runner_now_ms();
    st = mmp_ref_compute(&ref, c, &ops.buf[0], &ops.buf[1], ops.have_c ? &ops.buf[2] : NULL, o->device, ops.devcheck,
                         ops.host_stale ? host_inputs : NULL, &ops);
    r->time_reference_ms = mmp_runner_now_ms() - t0;
    stage[MMP_STAGE_REFERENCE] = r->time_reference_ms;
    r->n_mpfr = ref.n_mpfr;
    r->n_exact = ref.n_exact;
    r->n_dot = ref.n_dot;
    if (st != MMP_STATUS_OK) goto done;
    ops.devcheck = ops.devcheck && ref.dev_exact && ref.dev_want_out;   /* else the host compares */
    if (!ops.devcheck && ops.host_stale) st = host_inputs(&ops);
    if (st != MMP_STATUS_OK) goto done;
    t0 = mmp_runner_now_ms();
#ifdef MMP_HAVE_CUDA
    if (ops.devcheck && cudaMalloc(&ops.got0, ops.buf[3].data_bytes) != cudaSuccess) {
        cudaGetLastError();
        ops.got0 = NULL;
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "cannot allocate %zu bytes of device memory for run 1's output",
                     ops.buf[3].data_bytes);
        goto done;
    }
#endif
    if (k->workspace_bytes) {
        ops.ws_size = k->workspace_bytes(c->m, c->n, c->k);
        if (ops.ws_size) {
#ifdef MMP_HAVE_CUDA
            if (k->where == MMP_KERNEL_DEVICE) {
                if (cudaMalloc(&ops.workspace, ops.ws_size) != cudaSuccess) ops.workspace = NULL;
                ops.ws_on_device = 1;
            } else
#endif
                ops.workspace = malloc(ops.ws_size);
            if (!ops.workspace) {
                st = MMP_ERR(MMP_STATUS_NO_MEMORY, "cannot allocate a %zu-byte workspace", ops.ws_size);
                goto done;
            }
        }
    }
    stage[MMP_STAGE_MEMORY] += mmp_runner_now_ms() - t0;
    mmp_buffer *d = &ops.buf[3];
    mmp_damage dmg[2][4];
    int runs_done = 0;
    for (int run = 0; run < 2; run++) {
        t0 = mmp_runner_now_ms();
        st = poison(&ops, df, run);
        stage[MMP_STAGE_POISON] += mmp_runner_now_ms() - t0;
        if (st != MMP_STATUS_OK) goto done;
        double ms = 0, tx0 = stage[MMP_STAGE_TRANSFER];
        t0 = mmp_runner_now_ms();
        st = launch(r, &ops, c, &ms);
        stage[MMP_STAGE_LAUNCH] += mmp_runner_now_ms() - t0 - (stage[MMP_STAGE_TRANSFER] - tx0);
        if (st == MMP_STATUS_UNSUPPORTED) {
            mmp_runner_skip(r, "the kernel's entry point declined these arguments (MMP_KERNEL_UNSUPPORTED)");
            st = MMP_STATUS_OK;
            goto done;
        }
        if (st != MMP_STATUS_OK) {
            if (runs_done) say_damage(r, &ops, dmg, runs_done);
            r->verdict = MMP_VERDICT_ERROR;
            if (st == MMP_STATUS_KERNEL && !(r->reasons & MMP_REASON_CUDA)) r->reasons |= MMP_REASON_LAUNCH;
            if (st == MMP_STATUS_KERNEL) st = MMP_STATUS_OK;
            else if (st != MMP_STATUS_CUDA) mmp_runner_say(r, "%s", mmp_error_last());
            goto done;
        }
        if (run == 0 || ms < r->time_kernel_ms) r->time_kernel_ms = ms;
        t0 = mmp_runner_now_ms();
        st = check_damage(r, &ops, dmg[run]);
        if (st != MMP_STATUS_OK) goto done;
        runs_done++;
        stage[MMP_STAGE_GUARDS] += mmp_runner_now_ms() - t0;
        t0 = mmp_runner_now_ms();
#ifdef MMP_HAVE_CUDA
        if (ops.devcheck) {   /* run 1's output is copied on the device; run 2's stays in D */
            if (run == 0 && cudaMemcpyAsync(ops.got0, mmp_buffer_kernel_ptr(d), d->data_bytes, cudaMemcpyDeviceToDevice,
                                            (cudaStream_t)ops.stream) != cudaSuccess)
                st = MMP_ERR(MMP_STATUS_CUDA, "copy of run 1's output: %s", cudaGetErrorString(cudaGetLastError()));
            stage[MMP_STAGE_TRANSFER] += mmp_runner_now_ms() - t0;
            if (st != MMP_STATUS_OK) goto done;
            continue;
        }
#endif
        out[run] = malloc(d->data_bytes);
        if (!out[run]) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); goto done; }
#ifdef MMP_HAVE_CUDA
        if (ops.resident) st = mmp_buffer_dev_download(out[run], d, ops.stream);
        else
#endif
            memcpy(out[run], mmp_buffer_host(d), d->data_bytes);
        stage[MMP_STAGE_TRANSFER] += mmp_runner_now_ms() - t0;
        if (st != MMP_STATUS_OK) goto done;
    }
    t0 = mmp_runner_now_ms();
    say_damage(r, &ops, dmg, runs_done);
    /* Unwritten and nondeterministic; unwritten elements are then set to the expected value so
     * that they are reported once, as unwritten, and not again as wrong values. */
    int64_t un_i = -1, un_j = -1, nd_i = -1, nd_j = -1;
#ifdef MMP_HAVE_CUDA
    if (ops.devcheck) {   /* the scan and the comparison in one pass on the device */
        st = mmp_check_output_device(r, c, &ref, ops.got0, mmp_buffer_kernel_ptr(d), o, ops.buf, ops.stream);
        if (st != MMP_STATUS_OK) goto done;
    } else
#endif
    {
        uint8_t un_marks[MMP_HEAT_MAX * MMP_HEAT_MAX];
        st = mmp_runner_scan_outputs(r, &un_i, &un_j, &nd_i, &nd_j, un_marks, out, &ref, c);
        if (st != MMP_STATUS_OK) goto done;
        mmp_runner_say_scan(r, c, un_i, un_j, nd_i, nd_j);
        mmp_check_output(r, c, &ref, out[0], o, ops.buf);
        mmp_runner_heat_unwritten(r, un_marks);
        mmp_runner_first_bad_unwritten(r, un_i, un_j);
    }
    mmp_runner_heat_guard(r, c, runs_done > 0 ? &dmg[0][3] : NULL, runs_done > 1 ? &dmg[1][3] : NULL);
    stage[MMP_STAGE_COMPARE] += mmp_runner_now_ms() - t0;
    r->verdict = (r->reasons & ~(uint32_t)MMP_REASON_OVERFLOW) ? MMP_VERDICT_FAIL : MMP_VERDICT_PASS;
    if (r->verdict == MMP_VERDICT_FAIL && o->save_failures) {   /* run 2's output: the scan patched run 1's */
        mmp_failure_data fd = {ops.buf, ops.have_c, ops.resident, ops.devcheck ? mmp_buffer_kernel_ptr(d) : out[1],
                               ops.devcheck, ops.stream, &ref};
        mmp_runner_save_failure(r, c, o, &fd);
    }
done:
    t0 = mmp_runner_now_ms();
    free(out[0]);
    free(out[1]);
    mmp_ref_clear(&ref);
    operands_clear(&ops);
    stage[MMP_STAGE_MEMORY] += mmp_runner_now_ms() - t0;
    return st;
}

double mmp_runner_warm_up(const mmp_case *c, const mmp_runner_options *o)
{
#ifdef MMP_HAVE_CUDA
    if (c->kernel->where != MMP_KERNEL_DEVICE || o->have_device == 0) return 0.0;
    double t0 = mmp_runner_now_ms();
    if (cudaSetDevice(o->device) != cudaSuccess || cudaFree(0) != cudaSuccess) {
        cudaGetLastError();            /* the case itself reports the device problem */
        return 0.0;
    }
    return mmp_runner_now_ms() - t0;
#else
    (void)c;
    (void)o;
    return 0.0;
#endif
}

mmp_status mmp_runner_run_case(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o)
{
    double t0 = mmp_runner_now_ms();
    mmp_runner_result_for_case(r, c, o);
    if (c->op) {
        mmp_status st = mmp_runner_run_operator(r, c, o);
        r->time_total_ms = mmp_runner_now_ms() - t0;
        return st;
    }
    if (!c->kernel->run) {
        r->verdict = MMP_VERDICT_ERROR;
        r->reasons |= MMP_REASON_LAUNCH;
        snprintf(r->message, sizeof r->message, "kernel has no entry point");
        return MMP_STATUS_OK;
    }
    if (unsupported(r, c, o)) return MMP_STATUS_OK;
    mmp_status st = run_case(r, c, o);
    if (st != MMP_STATUS_OK) {
        r->verdict = MMP_VERDICT_ERROR;
        if (st == MMP_STATUS_CUDA) r->reasons |= MMP_REASON_CUDA;
        if (st == MMP_STATUS_NO_MEMORY) {
            /* too large for this machine (host or device memory): this case only, the run goes on */
            char why[400];
            snprintf(why, sizeof why, "%s", mmp_error_last());
            r->message[0] = '\0';
            mmp_runner_say(r, "out of memory for %lldx%lldx%lld: %s", (long long)c->m, (long long)c->n, (long long)c->k, why);
            if (c->kernel->where == MMP_KERNEL_DEVICE) r->reasons |= MMP_REASON_CUDA;
            st = MMP_STATUS_OK;
        } else if (!r->message[0]) {
            snprintf(r->message, sizeof r->message, "%s", mmp_error_last());
        }
    }
    r->time_total_ms = mmp_runner_now_ms() - t0;
    return st;
}
