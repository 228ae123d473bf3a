/* kernels/int4_fused_budget.c — the shared-memory budget of the int4_fused kernels per execution
 * mode (fused.h), itemised by purpose, and its cross-checks against the layout the kernel really
 * carves (kernels/int4_fused_layout.h), the stage count the kernel picks and, on a device, what
 * cudaFuncGetAttributes reports (a per-case check of the int4_fused runner cases: suites/fused_cases.c).
 *
 * The budget is written from the algorithm's data volumes (one line per buffer: its logical
 * bytes, how many CTAs split one copy, per-stage or not), on purpose NOT from the layout code, so
 * that an accounting error (a buffer counted twice, or a logical tile counted as a
 * per-CTA allocation) shows as a mismatch instead of being copied into both.
 * Ownership in these kernels: no buffer is split between CTAs (ctas_sharing = 1 everywhere: no
 * clusters); every tile is per CTA; per-stage buffers exist once per pipeline stage.
 * Padding: the rows of xq/wq (+16 B), x (+16 B), a (+16 B) and T (+4 B) are padded against bank
 * conflicts, and every region is rounded up to 128 B.
 */
#include <string.h>

#include "int4_fused_layout.h"
#include "mmaprobe/fused.h"

static const char *mode_names[MMP_FUSED_MODE_COUNT_] = {"simple", "persistent"};
const char *mmp_fused_mode_name(mmp_fused_mode mode)
{
    return (unsigned)mode < MMP_FUSED_MODE_COUNT_ ? mode_names[mode] : "?";
}
static const char *kind_names[MMP_FUSED_SMEM_KIND_COUNT_] = {"main", "scale", "residual", "sync", "padding"};

static uint32_t align128(uint32_t x) { return (x + 127u) / 128u * 128u; }

static void add(mmp_fused_smem_budget *b, const char *name, mmp_fused_smem_kind kind, int per_stage,
                uint32_t logical, uint32_t sharing)
{
    mmp_fused_smem_part *p = &b->part[b->nparts++];
    p->name = name;
    p->kind = kind;
    p->per_stage = per_stage;
    p->logical_bytes = logical;
    p->ctas_sharing = sharing;
    p->per_cta_bytes = logical / sharing;
    p->total_bytes = p->per_cta_bytes * (per_stage ? (uint32_t)b->stages : 1u);
    b->by_kind[kind] += p->total_bytes;
    if (per_stage) b->stage_bytes += p->per_cta_bytes;
    else b->fixed_bytes += p->per_cta_bytes;
}

/* padding of a region: row padding plus the rounding of its size up to 128 B */
static uint32_t pad(uint32_t rows, uint32_t useful_row, uint32_t stride)
{
    return align128(rows * stride) - rows * useful_row;
}

mmp_status mmp_fused_smem_budget_make(mmp_fused_smem_budget *b, mmp_fused_mode mode, int stages,
                                      mmp_fused_budget_fault fault)
{
    if ((unsigned)mode >= MMP_FUSED_MODE_COUNT_) return MMP_ERR(MMP_STATUS_INVALID, "smem budget: bad mode %d", mode);
    if (stages < 1 || stages > MMP_FUSEDK_MAX_STAGES || (mode == MMP_FUSED_MODE_SIMPLE && stages != 1))
        return MMP_ERR(MMP_STATUS_INVALID, "smem budget: %d stages is not possible in mode %s", stages,
                       mmp_fused_mode_name(mode));
    memset(b, 0, sizeof *b);
    b->mode = mode;
    b->fault = fault;
    b->stages = stages;
    const uint32_t BM = MMP_FUSEDK_BM, BN = MMP_FUSEDK_BN, BK = MMP_FUSEDK_BK, R = MMP_FUSEDK_RANK;
    /* main tiles: int4, two per byte */
    add(b, "xq tile (BM x BK int4)", MMP_FUSED_SMEM_MAIN, 1, BM * BK / 2, 1);
    add(b, "wq tile (BN x BK int4)", MMP_FUSED_SMEM_MAIN, 1, BN * BK / 2, 1);
    /* scales of the stage's group (one group per stage: g is a multiple of BK) */
    add(b, "sx (BM fp16/bf16)", MMP_FUSED_SMEM_SCALE, 1, BM * 2, 1);
    add(b, "sw (BN fp16/bf16)", MMP_FUSED_SMEM_SCALE, 1, BN * 2, 1);
    /* residual branch: down-projection inputs per stage, rank-up tile and T per CTA */
    add(b, "x tile (BM x BK bf16)", MMP_FUSED_SMEM_RESIDUAL, 1, BM * BK * 2, 1);
    if (fault == MMP_FUSED_FAULT_X_TWICE) add(b, "x tile again (FAULT)", MMP_FUSED_SMEM_RESIDUAL, 1, BM * BK * 2, 1);
    add(b, "a tile (BK x r bf16)", MMP_FUSED_SMEM_RESIDUAL, 1, BK * R * 2, 1);
    if (mode == MMP_FUSED_MODE_PERSISTENT) {   /* residual pipeline: two buffers of the logical tile */
        add(b, "rank-up B tile buffer 0 (r x BN bf16)", MMP_FUSED_SMEM_RESIDUAL, 0, R * BN * 2, 1);
        add(b, "rank-up B tile buffer 1 (r x BN bf16)", MMP_FUSED_SMEM_RESIDUAL, 0, R * BN * 2, 1);
    } else {
        add(b, "rank-up B tile (r x BN bf16)", MMP_FUSED_SMEM_RESIDUAL, 0, R * BN * 2, 1);
    }
    if (fault == MMP_FUSED_FAULT_RANKUP_TWICE)
        add(b, "rank-up B tile again (FAULT)", MMP_FUSED_SMEM_RESIDUAL, 0, R * BN * 2, 1);
    add(b, "T = X A (BM x r fp32)", MMP_FUSED_SMEM_RESIDUAL, 0, BM * R * 4, 1);
    /* synchronisation: mbarriers (persistent only; the simple kernel uses __syncthreads) */
    uint32_t bar_pad = 0;
    if (mode == MMP_FUSED_MODE_PERSISTENT) {
        add(b, "mbarrier full+empty (2 x 8 B)", MMP_FUSED_SMEM_SYNC, 1, 16, 1);
        add(b, "mbarrier res_full+res_empty x 2", MMP_FUSED_SMEM_SYNC, 0, 32, 1);
        uint32_t bar = 16u * (uint32_t)stages + 32u;
        bar_pad = align128(bar) - bar;
    }
    /* padding: rows and 128-B rounding; the sx/sw regions round up, the stage is their sum */
    uint32_t stage_pad = pad(BM, BK / 2, MMP_FUSEDK_Q_ROW) + pad(BN, BK / 2, MMP_FUSEDK_Q_ROW) +
                         pad(BM, BK * 2, MMP_FUSEDK_X_ROW) + pad(BK, R * 2, MMP_FUSEDK_A_ROW) +
                         (align128(BM * 2) - BM * 2) + (align128(BN * 2) - BN * 2);
    add(b, "padding per stage (rows, 128-B rounding)", MMP_FUSED_SMEM_PADDING, 1, stage_pad, 1);
    add(b, "padding of T rows and B tile rounding", MMP_FUSED_SMEM_PADDING, 0,
        pad(BM, R * 4, MMP_FUSEDK_T_ROW) + (align128(R * BN * 2) - R * BN * 2), 1);
    if (bar_pad) add(b, "padding of the mbarrier region", MMP_FUSED_SMEM_PADDING, 0, bar_pad, 1);
    b->total = b->stage_bytes * (uint32_t)stages + b->fixed_bytes;
    return MMP_STATUS_OK;
}

void mmp_fused_smem_budget_print(FILE *out, const mmp_fused_smem_budget *b)
{
    fprintf(out, "smem budget, mode %s, %d stage%s%s:\n", mmp_fused_mode_name(b->mode), b->stages,
            b->stages == 1 ? "" : "s", b->fault ? " (FAULT INJECTED)" : "");
    fprintf(out, "  %-42s %-8s %9s %7s %9s %9s\n", "part", "kind", "logical", "ctas", "per-cta", "total");
    for (int i = 0; i < b->nparts; i++) {
        const mmp_fused_smem_part *p = &b->part[i];
        fprintf(out, "  %-42s %-8s %9u %7u %9u %9u%s\n", p->name, kind_names[p->kind], p->logical_bytes,
                p->ctas_sharing, p->per_cta_bytes, p->total_bytes, p->per_stage ? "  (x stages)" : "");
    }
    fprintf(out, "  by kind:");
    for (int k = 0; k < MMP_FUSED_SMEM_KIND_COUNT_; k++) fprintf(out, " %s %u", kind_names[k], b->by_kind[k]);
    fprintf(out, "\n  per stage %u, fixed %u, total %u bytes\n", b->stage_bytes, b->fixed_bytes, b->total);
}

uint32_t mmp_fused_smem_layout_bytes(mmp_fused_mode mode, int stages)
{
    mmp_fusedk_layout L;
    mmp_fusedk_layout_make(&L, stages, mode == MMP_FUSED_MODE_PERSISTENT);
    return L.end;
}

uint32_t mmp_fused_smem_limit(uint32_t smem_per_sm, uint32_t optin_per_block, uint32_t reserved_per_block,
                              int ctas_per_sm)
{
    if (ctas_per_sm < 1) ctas_per_sm = 1;
    uint32_t share = smem_per_sm / (uint32_t)ctas_per_sm;
    share = share > reserved_per_block ? share - reserved_per_block : 0;
    return share < optin_per_block ? share : optin_per_block;
}

int mmp_fused_pick_stages(mmp_fused_mode mode, uint32_t limit, mmp_fused_budget_fault fault, int budget_only)
{
    int smax = mode == MMP_FUSED_MODE_SIMPLE ? 1 : MMP_FUSEDK_MAX_STAGES, best = 0;
    for (int s = 1; s <= smax; s++) {
        uint32_t bytes;
        if (budget_only) {
            mmp_fused_smem_budget b;
            if (mmp_fused_smem_budget_make(&b, mode, s, fault) != MMP_STATUS_OK) return 0;
            bytes = b.total;
        } else {
            bytes = mmp_fused_smem_layout_bytes(mode, s);
        }
        if (bytes <= limit) best = s;
    }
    return best;
}

mmp_status mmp_fused_smem_budget_check(const mmp_fused_smem_budget *b, uint32_t limit, int kernel_stages,
                                       uint32_t measured)
{
    mmp_fusedk_layout L;
    mmp_fusedk_layout_make(&L, b->stages, b->mode == MMP_FUSED_MODE_PERSISTENT);
    const uint32_t lk[MMP_FUSED_SMEM_KIND_COUNT_] = {L.main_bytes, L.scale_bytes, L.residual_bytes, L.sync_bytes,
                                                     L.padding_bytes};
    for (int k = 0; k < MMP_FUSED_SMEM_KIND_COUNT_; k++)
        if (b->by_kind[k] != lk[k])
            return MMP_ERR(MMP_STATUS_INTERNAL,
                           "smem budget (%s, %d stages): %s bytes %u in the budget, %u in the kernel's layout",
                           mmp_fused_mode_name(b->mode), b->stages, kind_names[k], b->by_kind[k], lk[k]);
    if (b->total != L.end)
        return MMP_ERR(MMP_STATUS_INTERNAL, "smem budget (%s, %d stages): total %u bytes, the kernel's layout %u",
                       mmp_fused_mode_name(b->mode), b->stages, b->total, L.end);
    int bs = mmp_fused_pick_stages(b->mode, limit, b->fault, 1);
    if (kernel_stages > 0 && bs != kernel_stages)
        return MMP_ERR(MMP_STATUS_INTERNAL, "smem budget (%s): picks %d stages within %u bytes, the kernel %d",
                       mmp_fused_mode_name(b->mode), bs, limit, kernel_stages);
    if (measured > 0 && measured != b->total)
        return MMP_ERR(MMP_STATUS_INTERNAL,
                       "smem budget (%s, %d stages): %u bytes, the compiled kernel uses %u (static + dynamic)",
                       mmp_fused_mode_name(b->mode), b->stages, b->total, measured);
    return MMP_STATUS_OK;
}
