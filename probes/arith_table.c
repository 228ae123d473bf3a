/* arith_table.c — the instructions the arithmetic probes cover, and the small helpers every
 * arithmetic-probe file shares (instruction lookup, integer-format test, recording a feature).
 * The lowest arithmetic file: arith_int.c, arith_design.c and arith_analyse.c call into it and
 * it calls none of them, so calls between these files flow one way
 * (table < int < design < analyse).
 *
 * The ".c0" wgmma rows run the same vectors with scale-d = 0: the analysis then finds c unused
 * (as in the published H100/H200 FP8 vectors); the rows without it measure the accumulator
 * with a non-zero C.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mmaprobe/probe.h"
#include "arith_internal.h"

/* Columns: id, PTX, in, out, K, min cc, wgmma, satfinite, scale-d = 0 (c ignored), instruction K
 * of a chain (0: one instruction), chain promoted to fp32. The wgmma rows run with scale-d = 1
 * (the accumulator input used) unless their id ends in ".c0"; ".chain4" rows issue four wgmma
 * with scale-d = 1 into one accumulator, ".promote4" rows four wgmma with scale-d = 0 whose
 * results are added in fp32 registers (the FP8 GEMM "promotion"). */
#define F(x) MMP_FORMAT_##x
static const mmp_arith_instr instrs[] = {
    {"mma.f16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", F(FP16), F(FP32), 16, 80, 0, 0, 0, 0, 0},
    {"mma.f16.f16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", F(FP16), F(FP16), 16, 80, 0, 0, 0, 0, 0},
    {"mma.bf16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", F(BF16), F(FP32), 16, 80, 0, 0, 0, 0, 0},
    {"mma.tf32.f32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", F(TF32), F(FP32), 8, 80, 0, 0, 0, 0, 0},
    /* PTX ISA (mma, "Target ISA notes"): .e4m3/.e5m2 mma requires sm_89 or higher, so sm_90 is
     * included (ptxas 13.0 accepts it for sm_90); the SASS check says whether Hopper runs it
     * on a native FP8 path or converts to f16 first */
    {"mma.e4m3.f32", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", F(E4M3), F(FP32), 32, 89, 0, 0, 0, 0, 0},
    {"mma.e5m2.f32", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", F(E5M2), F(FP32), 32, 89, 0, 0, 0, 0, 0},
    {"wmma.f16.f32", "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32", F(FP16), F(FP32), 16, 70, 0, 0, 0, 0, 0},
    {"mma.s8.s32", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", F(INT8), F(INT32), 32, 80, 0, 0, 0, 0, 0},
    {"mma.s8.s32.satfinite", "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", F(INT8), F(INT32), 32, 80, 0, 1, 0, 0, 0},
    {"mma.u8.s32", "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32", F(UINT8), F(INT32), 32, 80, 0, 0, 0, 0, 0},
    {"mma.u8.s32.satfinite", "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32", F(UINT8), F(INT32), 32, 80, 0, 1, 0, 0, 0},
    {"mma.s4.s32", "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", F(INT4), F(INT32), 64, 80, 0, 0, 0, 0, 0},
    {"mma.s4.s32.satfinite", "mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.s4.s32", F(INT4), F(INT32), 64, 80, 0, 1, 0, 0, 0},
    {"wgmma.f16.f32", "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", F(FP16), F(FP32), 16, 90, 1, 0, 0, 0, 0},
    {"wgmma.f16.f16", "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16", F(FP16), F(FP16), 16, 90, 1, 0, 0, 0, 0},
    {"wgmma.bf16.f32", "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16", F(BF16), F(FP32), 16, 90, 1, 0, 0, 0, 0},
    {"wgmma.tf32.f32", "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", F(TF32), F(FP32), 8, 90, 1, 0, 0, 0, 0},
    {"wgmma.f16.f32.c0", "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 (scale-d 0)", F(FP16), F(FP32), 16, 90, 1, 0, 1, 0, 0},
    {"wgmma.bf16.f32.c0", "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 (scale-d 0)", F(BF16), F(FP32), 16, 90, 1, 0, 1, 0, 0},
    {"wgmma.tf32.f32.c0", "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 (scale-d 0)", F(TF32), F(FP32), 8, 90, 1, 0, 1, 0, 0},
    {"wgmma.e4m3.f32", "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3", F(E4M3), F(FP32), 32, 90, 1, 0, 0, 0, 0},
    {"wgmma.e4m3.f32.c0", "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 (scale-d 0)", F(E4M3), F(FP32), 32, 90, 1, 0, 1, 0, 0},
    {"wgmma.e4m3.f16", "wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3", F(E4M3), F(FP16), 32, 90, 1, 0, 0, 0, 0},
    {"wgmma.e5m2.f32", "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2", F(E5M2), F(FP32), 32, 90, 1, 0, 0, 0, 0},
    {"wgmma.e5m2.f32.c0", "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2 (scale-d 0)", F(E5M2), F(FP32), 32, 90, 1, 0, 1, 0, 0},
    {"wgmma.e5m2.f16", "wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e5m2", F(E5M2), F(FP16), 32, 90, 1, 0, 0, 0, 0},
    {"wgmma.e4m3.f32.chain4", "4 x wgmma m64n8k32 e4m3, scale-d 1", F(E4M3), F(FP32), 128, 90, 1, 0, 0, 32, 0},
    {"wgmma.e4m3.f32.promote4", "4 x wgmma m64n8k32 e4m3, scale-d 0, fp32 FADD", F(E4M3), F(FP32), 128, 90, 1, 0, 0, 32, 1},
    {"wgmma.e5m2.f32.chain4", "4 x wgmma m64n8k32 e5m2, scale-d 1", F(E5M2), F(FP32), 128, 90, 1, 0, 0, 32, 0},
    {"wgmma.e5m2.f32.promote4", "4 x wgmma m64n8k32 e5m2, scale-d 0, fp32 FADD", F(E5M2), F(FP32), 128, 90, 1, 0, 0, 32, 1},
};
#undef F

const mmp_arith_instr *mmp_arith_instrs(size_t *count)
{
    if (count) *count = sizeof instrs / sizeof instrs[0];
    return instrs;
}

const mmp_arith_instr *mmp_arith_instr_find(const char *id)
{
    for (size_t i = 0; id && i < sizeof instrs / sizeof instrs[0]; i++)
        if (strcmp(instrs[i].id, id) == 0) return &instrs[i];
    return NULL;
}

int mmp_arith_is_integer(mmp_format f)
{
    return f == MMP_FORMAT_INT8 || f == MMP_FORMAT_UINT8 || f == MMP_FORMAT_INT4 || f == MMP_FORMAT_UINT4;
}

void mmp_arith_add_feature(mmp_arith_report *r, const char *name, int ok, const char *method,
                           const char *fmt, ...)
{
    if (r->nf >= (int)(sizeof r->f / sizeof r->f[0])) return;
    mmp_arith_feature *f = &r->f[r->nf++];
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->method, sizeof f->method, "%s", method);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->value, sizeof f->value, fmt, ap);
    va_end(ap);
    f->ok = ok;
}
