/* layout_doc.c — the documented fragment mappings (PTX ISA 9.7.14.5 "Matrix fragments for mma.*",
 * 9.7.14.5.15 ldmatrix/stmatrix, 9.7.15.5 wgmma register fragments) as a table of formulas.
 *
 * Notation of the PTX ISA: groupID g = laneid >> 2, threadID_in_group t = laneid % 4, element i of
 * a thread's fragment lives in register r = i / E (E elements per 32-bit or .f64 register) at
 * position j = i % E. Every m16n8kK / m8n8kK shape follows two formulas:
 *   A: row = g + 8 * (r & 1)          col = t * E + j + (r >> 1) * 4E
 *   B: row = t * E + j + r * 4E       col = g
 *   C/D (4 or 2 elements): row = g + 8 * (i >> 1)   col = 2t + (i & 1)
 * (checked against each section: m16n8k16 f16 E=2, tf32 E=1, s8/e4m3 E=4, s4 E=8, b1 E=32,
 * f64 E=1 with .f64 registers). m8n8k4 .f16 (four MMAs, one per quadpair q = (laneid >> 2) & 3,
 * "high" half h = laneid >= 16) has its own formulas, stored block-diagonally (layout.h).
 */
#include <string.h>

#include "mmaprobe/layout.h"

typedef struct { int e; } per_reg;
static const per_reg E1 = {1}, E2 = {2}, E4 = {4}, E8 = {8}, E32 = {32};

static int a_std(int *row, int *col, int lane, int i, const void *p)
{
    int e = ((const per_reg *)p)->e, g = lane >> 2, t = lane & 3, r = i / e, j = i % e;
    *row = g + 8 * (r & 1);
    *col = t * e + j + (r >> 1) * 4 * e;
    return 0;
}

static int b_std(int *row, int *col, int lane, int i, const void *p)
{
    int e = ((const per_reg *)p)->e, g = lane >> 2, t = lane & 3, r = i / e, j = i % e;
    *row = t * e + j + r * 4 * e;
    *col = g;
    return 0;
}

static int c_std(int *row, int *col, int lane, int i, const void *p)
{
    (void)p;
    *row = (lane >> 2) + 8 * (i >> 1);
    *col = 2 * (lane & 3) + (i & 1);
    return 0;
}

/* m8n8k4 .f16: quadpair q holds MMA q; its A block is rows 8q.., k 4q.., its D block 8q.., 8q.. */
static int qp(int lane) { return (lane >> 2) & 3; }
static int hi(int lane) { return lane >= 16 ? 4 : 0; }

static int a884_row(int *row, int *col, int lane, int i, const void *p)
{
    (void)p;
    *row = 8 * qp(lane) + (lane % 4) + hi(lane);
    *col = 4 * qp(lane) + i;
    return 0;
}

static int a884_col(int *row, int *col, int lane, int i, const void *p)
{
    (void)p;
    *row = 8 * qp(lane) + (i % 4) + hi(lane);
    *col = 4 * qp(lane) + lane % 4;
    return 0;
}

static int b884_col(int *row, int *col, int lane, int i, const void *p)
{
    (void)p;
    *row = 4 * qp(lane) + i;
    *col = 8 * qp(lane) + lane % 4 + hi(lane);
    return 0;
}

static int b884_row(int *row, int *col, int lane, int i, const void *p)
{
    (void)p;
    *row = 4 * qp(lane) + lane % 4;
    *col = 8 * qp(lane) + i + hi(lane);
    return 0;
}

static int c884_f16(int *row, int *col, int lane, int i, const void *p)
{
    (void)p;
    *row = 8 * qp(lane) + lane % 4 + hi(lane);
    *col = 8 * qp(lane) + i;
    return 0;
}

static int c884_f32(int *row, int *col, int lane, int i, const void *p)
{
    (void)p;
    *row = 8 * qp(lane) + (lane & 1) + (i & 2) + hi(lane);
    *col = 8 * qp(lane) + (i & 4) + (lane & 2) + (i & 1);
    return 0;
}

/* ldmatrix / stmatrix .m8n8 .b16: register r is matrix r; row = the lane whose row address
 * was used (matrix r's rows come from lanes 8r..8r+7), col = the 16-bit element in that row. */
typedef struct { int trans; } ld_param;
static const ld_param LD_N = {0}, LD_T = {1};

static int ld_map(int *row, int *col, int lane, int i, const void *p)
{
    int r = i / 2, e = i % 2;
    if (((const ld_param *)p)->trans) {
        *row = 8 * r + 2 * (lane % 4) + e;
        *col = lane / 4;
    } else {
        *row = 8 * r + lane / 4;
        *col = 2 * (lane % 4) + e;
    }
    return 0;
}

/* wgmma .m64nNk16 accumulator D: warp w of the warpgroup owns rows 16w..16w+15. */
static int wgmma_d(int *row, int *col, int thread, int i, const void *p)
{
    (void)p;
    int w = thread / 32, l = thread % 32;
    *row = 16 * w + (l >> 2) + 8 * ((i >> 1) & 1);
    *col = (i >> 2) * 8 + 2 * (l & 3) + (i & 1);
    return 0;
}

#define FR(nm, r, c, n, bits, f, p) {nm, r, c, n, bits, f, p}
/* A standard mma.sync entry: A rows x k, B k x n, C/D m x n. */
#define MMA(id_, ptx_, cc_, m_, n_, k_, na_, abits_, ea_, nb_, nc_, cbits_, sec_)              \
    {id_, "mma", ptx_, cc_, 0, 32, 4,                                                          \
     {FR("A", m_, k_, na_, abits_, a_std, &ea_), FR("B", k_, n_, nb_, abits_, b_std, &ea_),     \
      FR("C", m_, n_, nc_, cbits_, c_std, NULL), FR("D", m_, n_, nc_, cbits_, c_std, NULL)},    \
     sec_}
#define M884(id_, ptx_, afn, bfn, cfn, cbits_)                                                 \
    {id_, "mma", ptx_, 70, 0, 32, 4,                                                           \
     {FR("A", 32, 16, 4, 16, afn, NULL), FR("B", 16, 32, 4, 16, bfn, NULL),                    \
      FR("C", 32, 32, 8, cbits_, cfn, NULL), FR("D", 32, 32, 8, cbits_, cfn, NULL)},            \
     "9.7.14.5.1 m8n8k4 .f16 (block-diagonal: quadpair q = MMA q)"}
#define LDST(id_, kind_, ptx_, cc_, nmat, par)                                                 \
    {id_, kind_, ptx_, cc_, 0, 32, 1, {FR("R", 8 * (nmat), 8, 2 * (nmat), 16, ld_map, &par)},  \
     "9.7.9.25 ldmatrix / 9.7.9.26 stmatrix (.m8n8 .b16)"}
#define WG(id_, ptx_, n_)                                                                      \
    {id_, "wgmma", ptx_, 90, 90, 128, 1, {FR("D", 64, n_, (n_) / 2, 32, wgmma_d, NULL)},        \
     "9.7.15.5.1 wgmma .m64nNk16 register fragment D"}

static const mmp_layout_doc k_docs[] = {
    MMA("mma.m16n8k16.f32.f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 80, 16, 8, 16, 8, 16, E2, 4, 4, 32, "9.7.14.5.8 m16n8k16 .f16"),
    MMA("mma.m16n8k16.f16.f16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 80, 16, 8, 16, 8, 16, E2, 4, 4, 16, "9.7.14.5.8 m16n8k16 .f16"),
    MMA("mma.m16n8k16.f32.bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 80, 16, 8, 16, 8, 16, E2, 4, 4, 32, "9.7.14.5.8 m16n8k16 .bf16"),
    MMA("mma.m16n8k8.f32.f16", "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 80, 16, 8, 8, 4, 16, E2, 2, 4, 32, "9.7.14.5.7 m16n8k8 .f16"),
    MMA("mma.m16n8k8.f16.f16", "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16", 80, 16, 8, 8, 4, 16, E2, 2, 4, 16, "9.7.14.5.7 m16n8k8 .f16"),
    MMA("mma.m16n8k8.f32.bf16", "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 80, 16, 8, 8, 4, 16, E2, 2, 4, 32, "9.7.14.5.7 m16n8k8 .bf16"),
    MMA("mma.m16n8k8.f32.tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 80, 16, 8, 8, 4, 32, E1, 2, 4, 32, "9.7.14.5.7 m16n8k8 .tf32"),
    MMA("mma.m16n8k4.f32.tf32", "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 80, 16, 8, 4, 2, 32, E1, 1, 4, 32, "9.7.14.5.6 m16n8k4 .tf32"),
    MMA("mma.m16n8k32.s32.s8", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 80, 16, 8, 32, 16, 8, E4, 8, 4, 32, "9.7.14.5.10 m16n8k32 .s8"),
    MMA("mma.m16n8k32.s32.u8", "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32", 80, 16, 8, 32, 16, 8, E4, 8, 4, 32, "9.7.14.5.10 m16n8k32 .u8"),
    MMA("mma.m16n8k32.f32.e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 89, 16, 8, 32, 16, 8, E4, 8, 4, 32, "9.7.14.5.10 m16n8k32 .e4m3"),
    MMA("mma.m16n8k32.f32.e5m2", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", 89, 16, 8, 32, 16, 8, E4, 8, 4, 32, "9.7.14.5.10 m16n8k32 .e5m2"),
    MMA("mma.m16n8k16.s32.s8", "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32", 80, 16, 8, 16, 8, 8, E4, 4, 4, 32, "9.7.14.5.9 m16n8k16 .s8"),
    MMA("mma.m16n8k64.s32.s4", "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 80, 16, 8, 64, 32, 4, E8, 16, 4, 32, "9.7.14.5.11 m16n8k64 .s4"),
    MMA("mma.m16n8k64.s32.u4", "mma.sync.aligned.m16n8k64.row.col.s32.u4.u4.s32", 80, 16, 8, 64, 32, 4, E8, 16, 4, 32, "9.7.14.5.11 m16n8k64 .u4"),
    MMA("mma.m16n8k32.s32.s4", "mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32", 80, 16, 8, 32, 16, 4, E8, 8, 4, 32, "9.7.14.5.10 m16n8k32 .s4"),
    MMA("mma.m8n8k16.s32.s8", "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", 75, 8, 8, 16, 4, 8, E4, 4, 2, 32, "9.7.14.5.3 m8n8k16"),
    MMA("mma.m8n8k32.s32.s4", "mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32", 75, 8, 8, 32, 8, 4, E8, 8, 2, 32, "9.7.14.5.4 m8n8k32"),
    MMA("mma.m8n8k128.s32.b1", "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc", 80, 8, 8, 128, 32, 1, E32, 32, 2, 32, "9.7.14.5.5 m8n8k128"),
    MMA("mma.m16n8k128.s32.b1", "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc", 80, 16, 8, 128, 64, 1, E32, 32, 4, 32, "9.7.14.5.12 m16n8k128"),
    MMA("mma.m16n8k256.s32.b1", "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc", 80, 16, 8, 256, 128, 1, E32, 64, 4, 32, "9.7.14.5.13 m16n8k256"),
    MMA("mma.m8n8k4.f64.f64", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 80, 8, 8, 4, 1, 64, E1, 1, 2, 64, "9.7.14.5.2 m8n8k4 .f64"),
    MMA("mma.m16n8k4.f64.f64", "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64", 90, 16, 8, 4, 2, 64, E1, 1, 4, 64, "9.7.14.5.6 m16n8k4 .f64"),
    MMA("mma.m16n8k8.f64.f64", "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64", 90, 16, 8, 8, 4, 64, E1, 2, 4, 64, "9.7.14.5.7 m16n8k8 .f64"),
    MMA("mma.m16n8k16.f64.f64", "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64", 90, 16, 8, 16, 8, 64, E1, 4, 4, 64, "9.7.14.5.8 m16n8k16 .f64"),
    M884("mma.m8n8k4.row.col.f32.f16", "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", a884_row, b884_col, c884_f32, 32),
    M884("mma.m8n8k4.row.col.f16.f16", "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16", a884_row, b884_col, c884_f16, 16),
    M884("mma.m8n8k4.col.row.f32.f16", "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32", a884_col, b884_row, c884_f32, 32),
    LDST("ldmatrix.x1", "ldmatrix", "ldmatrix.sync.aligned.m8n8.x1.shared.b16", 75, 1, LD_N),
    LDST("ldmatrix.x2", "ldmatrix", "ldmatrix.sync.aligned.m8n8.x2.shared.b16", 75, 2, LD_N),
    LDST("ldmatrix.x4", "ldmatrix", "ldmatrix.sync.aligned.m8n8.x4.shared.b16", 75, 4, LD_N),
    LDST("ldmatrix.x1.trans", "ldmatrix", "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16", 75, 1, LD_T),
    LDST("ldmatrix.x2.trans", "ldmatrix", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", 75, 2, LD_T),
    LDST("ldmatrix.x4.trans", "ldmatrix", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 75, 4, LD_T),
    LDST("stmatrix.x1", "stmatrix", "stmatrix.sync.aligned.m8n8.x1.shared.b16", 90, 1, LD_N),
    LDST("stmatrix.x2", "stmatrix", "stmatrix.sync.aligned.m8n8.x2.shared.b16", 90, 2, LD_N),
    LDST("stmatrix.x4", "stmatrix", "stmatrix.sync.aligned.m8n8.x4.shared.b16", 90, 4, LD_N),
    LDST("stmatrix.x1.trans", "stmatrix", "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16", 90, 1, LD_T),
    LDST("stmatrix.x2.trans", "stmatrix", "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16", 90, 2, LD_T),
    LDST("stmatrix.x4.trans", "stmatrix", "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 90, 4, LD_T),
    WG("wgmma.m64n8k16.f32.f16", "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", 8),
    WG("wgmma.m64n16k16.f32.f16", "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16", 16),
    WG("wgmma.m64n64k16.f32.f16", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", 64),
    WG("wgmma.m64n128k16.f32.f16", "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", 128),
    WG("wgmma.m64n256k16.f32.f16", "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", 256),
};

size_t mmp_layout_doc_count(void) { return sizeof k_docs / sizeof k_docs[0]; }

const mmp_layout_doc *mmp_layout_doc_get(size_t i)
{
    return i < mmp_layout_doc_count() ? &k_docs[i] : NULL;
}

const mmp_layout_doc *mmp_layout_doc_find(const char *id)
{
    for (size_t i = 0; i < mmp_layout_doc_count(); i++)
        if (!strcmp(k_docs[i].id, id)) return &k_docs[i];
    return NULL;
}

mmp_status mmp_layout_doc_capture(mmp_layout_capture *cap, const mmp_layout_doc *doc)
{
    mmp_layout_capture_clear(cap);
    snprintf(cap->id, sizeof cap->id, "%s", doc->id);
    snprintf(cap->kind, sizeof cap->kind, "%s", doc->kind);
    snprintf(cap->source, sizeof cap->source, "synthetic: the PTX ISA formulas (%s)", doc->section);
    cap->threads = doc->threads;
    for (int f = 0; f < doc->n_frags; f++) {
        const mmp_layout_doc_frag *df = &doc->frags[f];
        int idx, per_reg = df->elem_bits >= 32 ? 1 : 32 / df->elem_bits;
        MMP_TRY(mmp_layout_capture_add_frag(&idx, cap, df->name, df->rows, df->cols,
                                            df->elems_per_lane, per_reg));
        for (int lane = 0; lane < doc->threads; lane++)
            for (int e = 0; e < df->elems_per_lane; e++) {
                int row, col;
                if (df->fn(&row, &col, lane, e, df->param) != 0)
                    return MMP_ERR(MMP_STATUS_INTERNAL, "%s %s: no documented position for lane %d elem %d",
                                   doc->id, df->name, lane, e);
                MMP_TRY(mmp_layout_capture_add(cap, idx, lane, e, row, col));
            }
    }
    return MMP_STATUS_OK;
}
