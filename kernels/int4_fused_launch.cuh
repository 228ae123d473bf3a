/* kernels/int4_fused_launch.cuh — launchers, the operator table and the GEMM-ABI rows of the
 * int4_fused family; included once, at the end of kernels/int4_fused.cu (the kernels above).
 * Every launcher has the signature mmp_fused_run_fn (fused.h) and fills the runtime decisions. */

static int fk_unsupported(int verbose, const char *why)
{
    if (verbose) fprintf(stderr, "int4_fused: unsupported: %s\n", why);
    return MMP_KERNEL_UNSUPPORTED;
}

static int fk_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Shapes the tile kernels take; MMP_KERNEL_UNSUPPORTED otherwise. */
static int fk_shape_check(const mmp_fused_operands *o, const mmp_fused_problem *p, mmp_fused_part part, int verbose)
{
    if (mmp_fused_problem_check(p) != MMP_STATUS_OK) return fk_unsupported(verbose, "invalid problem");
    if (p->rank != MMP_FUSEDK_RANK) return fk_unsupported(verbose, "rank must be 32");
    if (p->m % MMP_FUSEDK_BM || (part != MMP_FUSED_PART_DOWN && p->n % MMP_FUSEDK_BN))
        return fk_unsupported(verbose, "M must be a multiple of 128 and N of 64");
    if (p->group % MMP_FUSEDK_BK || p->k % p->group) return fk_unsupported(verbose, "g must be a multiple of 64 dividing K");
    if (p->n > INT32_MAX / 2 || p->m * p->n > ((int64_t)1 << 40)) return fk_unsupported(verbose, "problem too large");
    if (!fk_aligned16(o->xq) || !fk_aligned16(o->wq) || !fk_aligned16(o->x) || !fk_aligned16(o->a) ||
        !fk_aligned16(o->b) || !fk_aligned16(o->y))
        return fk_unsupported(verbose, "operands must be 16-byte aligned");
    return MMP_KERNEL_OK;
}

static fk_params fk_params_make(const mmp_fused_operands *o, const mmp_fused_problem *p, mmp_fused_part part)
{
    fk_params q;
    q.xq = (const uint8_t *)o->xq;
    q.wq = (const uint8_t *)o->wq;
    q.sx = (const uint16_t *)o->sx;
    q.sw = (const uint16_t *)o->sw;
    q.x = (const uint16_t *)o->x;
    q.a = (const uint16_t *)o->a;
    q.b = (const uint16_t *)o->b;
    q.beta = o->beta;
    q.y = (float *)o->y;
    q.m = p->m;
    q.n = part == MMP_FUSED_PART_DOWN ? MMP_FUSEDK_BN : p->n;   /* DOWN: one tile column, T is M x 32 */
    q.k = p->k;
    q.tiles_m = p->m / MMP_FUSEDK_BM;
    q.tiles = q.tiles_m * (q.n / MMP_FUSEDK_BN);
    q.group = p->group;
    q.scale_bf16 = p->scale_format == MMP_FORMAT_BF16;
    q.stages = 1;
    return q;
}

/* The stage decision and the launch of a tile kernel of mode MODE. */
template <int MODE, bool Q, bool RES, bool AFF, bool OUTT>
static int fk_run_tiles(const mmp_fused_operands *o, const mmp_fused_problem *p, void *stream, mmp_fused_decision *dec,
                        int verbose)
{
    const mmp_fused_part part = OUTT ? MMP_FUSED_PART_DOWN
                                     : Q && RES ? MMP_FUSED_PART_FUSED : Q ? MMP_FUSED_PART_QGEMM : MMP_FUSED_PART_LOWRANK;
    int st = fk_shape_check(o, p, part, verbose);
    if (st) return st;
    fk_params q = fk_params_make(o, p, part);
    /* Device queries, the stage decision and the kernel attributes, once per device and
     * instantiation (not thread-safe: one host thread launches, as in the harness and bench). */
    struct fk_cache { int valid, dev, sms, occ, stages; uint32_t limit, dyn; cudaFuncAttributes fa; };
    static fk_cache c;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return MMP_KERNEL_ERROR;
    const mmp_fused_mode mode = (mmp_fused_mode)MODE;
    void (*kern)(fk_params) = MODE == MMP_FUSED_MODE_SIMPLE ? fk_simple_kernel<Q, RES, AFF, OUTT>
                                                            : fk_persistent_kernel<Q, RES, AFF, OUTT>;
    const int threads = MODE == MMP_FUSED_MODE_SIMPLE ? FK_SIMPLE_THREADS : FK_PERSIST_THREADS;
    if (!c.valid || c.dev != dev) {
        int smem_sm = 0, optin = 0, reserved = 0;
        if (cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
            return MMP_KERNEL_ERROR;
        /* one CTA per SM: the persistent kernel spends the SM's shared memory on pipeline depth */
        c.limit = mmp_fused_smem_limit((uint32_t)smem_sm, (uint32_t)optin, (uint32_t)reserved, 1);
        c.stages = mmp_fused_pick_stages(mode, c.limit, MMP_FUSED_FAULT_NONE, 0);
        if (c.stages < 1 || (MODE == MMP_FUSED_MODE_PERSISTENT && c.stages < 2))
            return fk_unsupported(verbose, "not enough shared memory for the pipeline");
        c.dyn = mmp_fused_smem_layout_bytes(mode, c.stages);
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c.dyn) != cudaSuccess ||
            cudaFuncGetAttributes(&c.fa, kern) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c.occ, kern, threads, c.dyn) != cudaSuccess)
            return MMP_KERNEL_ERROR;
        c.dev = dev;
        c.valid = 1;
    }
    const int stages = c.stages, sms = c.sms, occ = c.occ;
    const uint32_t dyn = c.dyn, limit = c.limit;
    const cudaFuncAttributes &fa = c.fa;
    q.stages = stages;
    if (occ < 1) return fk_unsupported(verbose, "kernel cannot be resident (occupancy 0)");
    int64_t grid = MODE == MMP_FUSED_MODE_SIMPLE ? q.tiles : (q.tiles < (int64_t)sms * occ ? q.tiles : (int64_t)sms * occ);
    if (MODE == MMP_FUSED_MODE_PERSISTENT && dec && dec->grid > 0 && dec->grid < grid) grid = dec->grid;
    if (grid > INT32_MAX) return fk_unsupported(verbose, "too many tiles");
    mmp_fused_decision d;
    d.mode = mode;
    d.stages = stages;
    d.threads = threads;
    d.tile_m = MMP_FUSEDK_BM;
    d.tile_n = MMP_FUSEDK_BN;
    d.tile_k = MMP_FUSEDK_BK;
    d.smem_dynamic = dyn;
    d.smem_static = (uint32_t)fa.sharedSizeBytes;
    d.smem_limit = limit;
    d.ctas_per_sm = occ;
    d.grid = (int)grid;
    d.tiles = (int)q.tiles;
    d.sms = sms;
    d.regs = fa.numRegs;
    if (dec) *dec = d;
    if (verbose) mmp_fused_decision_print(stderr, mmp_fused_mode_name(mode), &d);
    kern<<<(unsigned)grid, threads, dyn, (cudaStream_t)stream>>>(q);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

static int fk_grid(int64_t count) { return (int)(count / 256 + 1 < 65536 ? count / 256 + 1 : 65536); }

static int fk_run_decode(const mmp_fused_operands *o, const mmp_fused_problem *p, void *stream, mmp_fused_decision *dec,
                         int verbose)
{
    (void)dec;
    if (mmp_fused_problem_check(p) != MMP_STATUS_OK) return fk_unsupported(verbose, "invalid problem");
    fk_decode_kernel<<<fk_grid(p->n * p->k), 256, 0, (cudaStream_t)stream>>>((int8_t *)o->y, (const uint8_t *)o->wq,
                                                                              p->n * p->k);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}
static int fk_run_dequant(const mmp_fused_operands *o, const mmp_fused_problem *p, void *stream, mmp_fused_decision *dec,
                          int verbose)
{
    (void)dec;
    if (mmp_fused_problem_check(p) != MMP_STATUS_OK) return fk_unsupported(verbose, "invalid problem");
    fk_dequant_kernel<<<fk_grid(p->n * p->k), 256, 0, (cudaStream_t)stream>>>(
        (float *)o->y, (const uint8_t *)o->wq, (const uint16_t *)o->sw, p->n, p->k, p->group,
        p->scale_format == MMP_FORMAT_BF16);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}
static int fk_run_affine(const mmp_fused_operands *o, const mmp_fused_problem *p, void *stream, mmp_fused_decision *dec,
                         int verbose)
{
    (void)dec;
    if (mmp_fused_problem_check(p) != MMP_STATUS_OK) return fk_unsupported(verbose, "invalid problem");
    fk_affine_kernel<<<fk_grid(p->m * p->n), 256, 0, (cudaStream_t)stream>>>((float *)o->y, o->z, o->beta, p->m, p->n);
    return cudaGetLastError() == cudaSuccess ? MMP_KERNEL_OK : MMP_KERNEL_ERROR;
}

#define FK_S MMP_FUSED_MODE_SIMPLE
#define FK_P MMP_FUSED_MODE_PERSISTENT
static const mmp_fused_op fk_ops[] = {
    {"int4_fused_decode", FK_S, MMP_FUSED_PART_DECODE, 80, fk_run_decode, "int4 nibbles of Wq -> int8 (fk_nibble)"},
    {"int4_fused_dequant", FK_S, MMP_FUSED_PART_DEQUANT, 80, fk_run_dequant, "Wq x Sw -> fp32 (fk_nibble, fk_scale)"},
    {"int4_fused_affine", FK_S, MMP_FUSED_PART_AFFINE, 80, fk_run_affine, "Y = Z + beta (fk_affine)"},
    {"int4_fused_simple_qgemm", FK_S, MMP_FUSED_PART_QGEMM, 80, fk_run_tiles<FK_S, true, false, false, false>,
     "version 1, Q only (s4 mma + scale fold)"},
    {"int4_fused_simple_down", FK_S, MMP_FUSED_PART_DOWN, 80, fk_run_tiles<FK_S, false, true, false, true>,
     "version 1, T = X A only (bf16 mma)"},
    {"int4_fused_simple_lowrank", FK_S, MMP_FUSED_PART_LOWRANK, 80, fk_run_tiles<FK_S, false, true, false, false>,
     "version 1, R = (X A) B only"},
    {"int4_fused_simple", FK_S, MMP_FUSED_PART_FUSED, 80, fk_run_tiles<FK_S, true, true, true, false>,
     "version 1: single CTA per tile, one stage, Y = Q + R + beta"},
    {"int4_fused_persistent_qgemm", FK_P, MMP_FUSED_PART_QGEMM, 80, fk_run_tiles<FK_P, true, false, false, false>,
     "version 3: version 2 without residual and affine (headroom)"},
    {"int4_fused_persistent_down", FK_P, MMP_FUSED_PART_DOWN, 80, fk_run_tiles<FK_P, false, true, false, true>,
     "version 2, T = X A only"},
    {"int4_fused_persistent_lowrank", FK_P, MMP_FUSED_PART_LOWRANK, 80, fk_run_tiles<FK_P, false, true, false, false>,
     "version 2, R = (X A) B only"},
    {"int4_fused_persistent", FK_P, MMP_FUSED_PART_FUSED, 80, fk_run_tiles<FK_P, true, true, true, false>,
     "version 2: persistent, producer warp + 8 consumer warps, S-stage mbarrier pipeline"},
};

extern "C" const mmp_fused_op *mmp_fused_ops(size_t *count)
{
    *count = sizeof fk_ops / sizeof fk_ops[0];
    return fk_ops;
}

/* ------------------------------------------------------------------------------------------------ */
/* GEMM ABI: nothing fits. The operator has nine operands (scales, X, A, B, beta have no slot in
 * mmp_kernel_args), and even its main loop alone (int4 inputs, fp32 output after the scale fold)
 * is an impossible descriptor for the runner: integer inputs require an int32 accumulator and an
 * integer output (suites/plugin.c, mmp_plugin_check_desc). So the family getter is empty on
 * purpose and every kernel is reached through mmp_fused_ops() (fused.h). */
extern "C" const mmp_kernel_desc *mmp_kernels_int4_fused(size_t *count)
{
    *count = 0;
    return NULL;
}
