/* suites/fused_gpu.c — GPU validation of the int4_fused operator table, part by part (fused.h,
 * mmp_fused_gpu_validate). Used by suites/check_gpu_fused.c and scripts/device/50-fused.sh.
 *
 * Per op: output poisoned (fp32: NaN bytes 0xFF; int8: 0x55 = 85, not an int4 value) and followed
 * by a 4 KiB guard of 0xA5; run twice (bitwise equal unless nondeterministic); compared with the
 * exact reference of its part and the part's per-element budget (reference/fused_ref.c); compared
 * bit for bit with the host emulation where the arithmetic order is known (QGEMM; LOWRANK and
 * FUSED given the T of the same mode's DOWN run); the smem budget of its mode and stage count
 * checked against cudaFuncGetAttributes (static) + the dynamic bytes of the launch.
 * CUDA is first touched inside the calling process (a forked Check test or the bench).
 */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/fused.h"

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/kernel.h"

enum { GUARD = 4096 };

typedef struct devbuf { void *xq, *sx, *wq, *sw, *x, *a, *b, *beta, *z, *y; } devbuf;

static mmp_status up(void **d, const void *h, size_t bytes)
{
    MMP_CUDA_CHECK(cudaMalloc(d, bytes));
    MMP_CUDA_CHECK(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
    return MMP_STATUS_OK;
}

static mmp_status upload(devbuf *d, const mmp_fused_host *h, size_t ybytes)
{
    const mmp_fused_problem *p = &h->p;
    const int64_t ng = p->k / p->group;
    MMP_TRY(up(&d->xq, h->xq, (size_t)(p->m * p->k / 2)));
    MMP_TRY(up(&d->wq, h->wq, (size_t)(p->n * p->k / 2)));
    MMP_TRY(up(&d->sx, h->sx, (size_t)(p->m * ng * 2)));
    MMP_TRY(up(&d->sw, h->sw, (size_t)(p->n * ng * 2)));
    MMP_TRY(up(&d->x, h->x, (size_t)(p->m * p->k * 2)));
    MMP_TRY(up(&d->a, h->a, (size_t)(p->k * p->rank * 2)));
    MMP_TRY(up(&d->b, h->b, (size_t)(p->rank * p->n * 2)));
    MMP_TRY(up(&d->beta, h->beta, (size_t)p->n * 4));
    MMP_TRY(up(&d->z, h->z, (size_t)(p->m * p->n * 4)));
    MMP_CUDA_CHECK(cudaMalloc(&d->y, ybytes + GUARD));
    return MMP_STATUS_OK;
}

static void devbuf_free(devbuf *d)
{
    void **v = (void **)d;
    for (size_t i = 0; i < sizeof *d / sizeof(void *); i++)
        if (v[i]) cudaFree(v[i]);
}

typedef struct opres {
    int skipped, error, nondet, guard, emul_checked;
    int64_t emul_diff;
    mmp_fused_decision dec;
    mmp_fused_check check;
} opres;

/* Launch op twice into poisoned outputs; got[0], got[1] receive the results. */
static mmp_status run_op(opres *r, void *got[2], const mmp_fused_op *op, const devbuf *d, const mmp_fused_problem *p,
                         size_t bytes, int grid_cap, int verbose)
{
    mmp_fused_operands o = {d->xq, d->sx, d->wq, d->sw, d->x, d->a, d->b, d->beta, d->z, d->y};
    uint8_t *guard = malloc(GUARD);
    if (!guard) return MMP_ERR(MMP_STATUS_NO_MEMORY, "fused validate: out of host memory");
    for (int rep = 0; rep < 2; rep++) {
        MMP_CUDA_CHECK(cudaMemset(d->y, op->part == MMP_FUSED_PART_DECODE ? 0x55 : 0xFF, bytes));
        MMP_CUDA_CHECK(cudaMemset((char *)d->y + bytes, 0xA5, GUARD));
        memset(&r->dec, 0, sizeof r->dec);
        r->dec.grid = grid_cap;
        int rc = op->run(&o, p, NULL, &r->dec, verbose && rep == 0);
        if (rc == MMP_KERNEL_UNSUPPORTED) { r->skipped = 1; break; }
        cudaError_t e = cudaDeviceSynchronize();
        if (rc != MMP_KERNEL_OK || e != cudaSuccess) {
            r->error = 1;
            free(guard);
            if (e != cudaSuccess)   /* sticky: the context is gone, stop here */
                return MMP_ERR(MMP_STATUS_CUDA, "%s: %s", op->name, cudaGetErrorString(e));
            return MMP_STATUS_OK;
        }
        MMP_CUDA_CHECK(cudaMemcpy(got[rep], d->y, bytes, cudaMemcpyDeviceToHost));
        MMP_CUDA_CHECK(cudaMemcpy(guard, (char *)d->y + bytes, GUARD, cudaMemcpyDeviceToHost));
        for (int i = 0; i < GUARD; i++) r->guard |= guard[i] != 0xA5;
    }
    free(guard);
    if (!r->skipped) r->nondet = memcmp(got[0], got[1], bytes) != 0;
    return MMP_STATUS_OK;
}

mmp_status mmp_fused_gpu_validate(FILE *out, const mmp_fused_problem *p, uint64_t seed, int grid_cap, int verbose,
                                  int *n_fail)
{
    *n_fail = 0;
    mmp_fused_host h;
    MMP_TRY(mmp_fused_host_init(&h, p));
    mmp_status st = mmp_fused_host_fill(&h, seed);
    size_t n_ops = 0;
    const mmp_fused_op *ops = mmp_fused_ops(&n_ops);
    size_t maxbytes = 4 * (size_t)(p->n * p->k > p->m * p->n ? p->n * p->k : p->m * p->n);
    devbuf d;
    memset(&d, 0, sizeof d);
    mmp_fused_ref ref[MMP_FUSED_PART_COUNT_];
    int have_ref[MMP_FUSED_PART_COUNT_] = {0}, budget_printed[MMP_FUSED_MODE_COUNT_] = {0};
    float *t_gpu[MMP_FUSED_MODE_COUNT_] = {NULL, NULL};
    void *got[2] = {malloc(maxbytes), malloc(maxbytes)}, *emul = malloc(maxbytes);
    int dev = 0, ccmaj = 0, ccmin = 0;
    for (int i = 0; i < MMP_FUSED_PART_COUNT_; i++) mmp_fused_ref_init(&ref[i]);
    if (st != MMP_STATUS_OK) goto done;
    if (!got[0] || !got[1] || !emul) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "fused validate: out of host memory"); goto done; }
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&ccmaj, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&ccmin, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        st = MMP_ERR(MMP_STATUS_NO_DEVICE, "fused validate: no CUDA device");
        goto done;
    }
    if ((st = upload(&d, &h, maxbytes)) != MMP_STATUS_OK) goto done;
    fprintf(out, "# fused operator %lldx%lldx%lld g=%d r=%d scales=%s seed=%llu grid_cap=%d\n", (long long)p->m,
            (long long)p->n, (long long)p->k, p->group, p->rank, mmp_format_name(p->scale_format),
            (unsigned long long)seed, grid_cap);
    for (size_t i = 0; i < n_ops; i++) {
        const mmp_fused_op *op = &ops[i];
        const mmp_fused_part part = op->part;
        int64_t rows, cols;
        mmp_fused_part_shape(&rows, &cols, p, part);
        const size_t es = part == MMP_FUSED_PART_DECODE ? 1 : 4, bytes = (size_t)(rows * cols) * es;
        if (ccmaj * 10 + ccmin < op->min_cc) {
            fprintf(out, "%-34s %-8s SKIP (needs cc %d)\n", op->name, mmp_fused_part_name(part), op->min_cc);
            continue;
        }
        opres r;
        memset(&r, 0, sizeof r);
        if ((st = run_op(&r, got, op, &d, p, bytes, grid_cap, verbose)) != MMP_STATUS_OK) {
            fprintf(out, "%-34s %-8s ERROR %s\n", op->name, mmp_fused_part_name(part), mmp_error_last());
            ++*n_fail;
            goto done;
        }
        if (r.skipped || r.error) {
            fprintf(out, "%-34s %-8s %s\n", op->name, mmp_fused_part_name(part), r.skipped ? "SKIP (unsupported shape)" : "ERROR (launch)");
            *n_fail += r.error;
            continue;
        }
        if (!have_ref[part]) {
            if ((st = mmp_fused_ref_compute(&ref[part], &h, part)) != MMP_STATUS_OK) goto done;
            have_ref[part] = 1;
        }
        mmp_fused_check_compare(&r.check, got[0], &ref[part]);
        const int tile_op = part == MMP_FUSED_PART_QGEMM || part == MMP_FUSED_PART_DOWN ||
                            part == MMP_FUSED_PART_LOWRANK || part == MMP_FUSED_PART_FUSED;
        if (part == MMP_FUSED_PART_DOWN) {
            free(t_gpu[op->mode]);
            t_gpu[op->mode] = malloc(bytes);
            if (t_gpu[op->mode]) memcpy(t_gpu[op->mode], got[0], bytes);
        }
        const float *tg = t_gpu[op->mode];
        if (part == MMP_FUSED_PART_QGEMM || ((part == MMP_FUSED_PART_LOWRANK || part == MMP_FUSED_PART_FUSED) && tg)) {
            if ((st = mmp_fused_emulate(emul, &h, part, tg)) != MMP_STATUS_OK) goto done;
            r.emul_checked = 1;
            r.emul_diff = mmp_fused_bitwise_diff(got[0], emul, rows * cols, part, NULL);
        }
        const char *smem = "-";
        char smem_msg[160] = "";
        if (tile_op) {
            mmp_fused_smem_budget b;
            if ((st = mmp_fused_smem_budget_make(&b, r.dec.mode, r.dec.stages, MMP_FUSED_FAULT_NONE)) != MMP_STATUS_OK) goto done;
            if (!budget_printed[r.dec.mode]) {
                mmp_fused_smem_budget_print(out, &b);
                budget_printed[r.dec.mode] = 1;
            }
            mmp_fused_decision_print(out, op->name, &r.dec);
            mmp_status bs = mmp_fused_smem_budget_check(&b, r.dec.smem_limit, r.dec.stages, r.dec.smem_static + r.dec.smem_dynamic);
            smem = bs == MMP_STATUS_OK ? "ok" : "MISMATCH";
            if (bs != MMP_STATUS_OK) snprintf(smem_msg, sizeof smem_msg, " (%s)", mmp_error_last());
        }
        int fail = r.check.n_bad > 0 || r.nondet || r.guard || (r.emul_checked && r.emul_diff) || !strcmp(smem, "MISMATCH");
        *n_fail += fail;
        fprintf(out, "%-34s verdict %s: guard %s, runs %s, emulation %s%lld, smem budget %s%s\n", op->name,
                fail ? "FAIL" : "PASS", r.guard ? "OVERWRITTEN" : "ok", r.nondet ? "DIFFER" : "bitwise equal",
                r.emul_checked ? "bitwise diff " : "not applicable ", (long long)r.emul_diff, smem, smem_msg);
        mmp_fused_check_print(out, op->name, &r.check, &ref[part]);
    }
done:
    for (int i = 0; i < MMP_FUSED_PART_COUNT_; i++) mmp_fused_ref_clear(&ref[i]);
    for (int i = 0; i < MMP_FUSED_MODE_COUNT_; i++) free(t_gpu[i]);
    free(got[0]);
    free(got[1]);
    free(emul);
    devbuf_free(&d);
    mmp_fused_host_clear(&h);
    return st;
}

#else
mmp_status mmp_fused_gpu_validate(FILE *out, const mmp_fused_problem *p, uint64_t seed, int grid_cap, int verbose,
                                  int *n_fail)
{
    (void)out; (void)p; (void)seed; (void)grid_cap; (void)verbose;
    *n_fail = 0;
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "fused validate: built without CUDA");
}
#endif
