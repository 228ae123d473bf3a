/* host_tcm.c — family "host_tcm": host GEMMs that run the H200 tensor-core model (model.h) in
 * natural K order, the "hardware" of the tolerance tests. Controls, not in the default list
 * (mmaprobe validate --mutants --filter 'host_tcm_*'): each must PASS every suite, wide and
 * special data at K = 1 ... 8192 included (tests/check_tolerance.c).
 *
 * host_tcm_bf16_f32         mma.bf16.f32, fp32 output
 * host_tcm_bf16_f32_splitk  the same with K split in two halves added in fp32 (split-K)
 * host_tcm_f16_f32          mma.f16.f32
 * host_tcm_f16_f16          mma.f16.f16: fp16 accumulator and output (a narrow accumulator)
 * host_tcm_f16_f32_h        mma.f16.f32, the fp32 accumulator converted to an fp16 output by
 *                           round to nearest (the control of the rounding test)
 * host_tcm_tf32_f32         mma.tf32.f32 on tf32 inputs
 * host_tcm_e4m3_f32         mma.e4m3.f32 (sm_90's f16 HMMA emulation, c added by FADD)
 * host_tcm_e4m3_f32_wg      wgmma.e4m3.f32: 13 fraction bits kept (acc_bits 14: narrow)
 */
#include <math.h>
#include <stdlib.h>

#include "mmaprobe/gemm.h"
#include "mmaprobe/model.h"
#include "mmaprobe/registry.h"
#include "host_tcm.h"

int mmp_host_tcm_gemm(const mmp_kernel_args *x, const char *instruction, int splits, int rounding, unsigned bugs)
{
    const mmp_model_preset *row = mmp_model_preset_find("H200", instruction);
    if (!row) return MMP_KERNEL_ERROR;
    mmp_model_params p = row->params;
    if (bugs & MMP_TCM_NARROW_LOW) p.result_frac_bits = 6;
    mmp_format fin = p.in_format, facc = p.out_format;
    /* the D and C formats: fp16 for a narrow accumulator, else as the descriptor's rounding says */
    int half_out = facc == MMP_FORMAT_FP16 || rounding >= 0;
    mmp_format fd = half_out ? MMP_FORMAT_FP16 : MMP_FORMAT_FP32, fc = facc == MMP_FORMAT_FP16 ? MMP_FORMAT_FP16 : MMP_FORMAT_FP32;
    mmp_round rd = rounding >= 0 ? (mmp_round)rounding : MMP_ROUND_NEAREST_EVEN;
    double *a = malloc((size_t)x->k * sizeof *a), *b = malloc((size_t)x->k * sizeof *b);
    if (!a || !b) { free(a); free(b); return MMP_KERNEL_ERROR; }
    for (int64_t i = 0; i < x->m; i++) {
        for (int64_t t = 0; t < x->k; t++) a[t] = mmp_format_load(x->a, mmp_gemm_index((mmp_layout)x->layout_a, x->lda, i, t), fin);
        for (int64_t j = 0; j < x->n; j++) {
            for (int64_t t = 0; t < x->k; t++)
                b[t] = mmp_format_load(x->b, mmp_gemm_index((mmp_layout)x->layout_b, x->ldb, t, j), fin);
            double s = 0;
            int64_t part = splits > 1 ? (x->k + splits - 1) / splits : x->k;
            part = (part + 15) / 16 * 16;
            for (int64_t t0 = 0; t0 < x->k; t0 += part) {
                int n = (int)(x->k - t0 < part ? x->k - t0 : part);
                double v;
                if (mmp_model_dot(&v, a + t0, b + t0, 0.0, n, &p) != MMP_STATUS_OK) { free(a); free(b); return MMP_KERNEL_ERROR; }
                /* split-K parts are added in fp32 (round to nearest); one part is the result */
                s = t0 == 0 ? v : (double)(float)(s + v);
            }
            double v = x->alpha == 1.0 ? s : (double)(float)(x->alpha * s);
            if (x->beta != 0 && x->c)
                v = (double)(float)(v + x->beta * mmp_format_load(x->c, mmp_gemm_index((mmp_layout)x->layout_c, x->ldc, i, j), fc));
            if ((bugs & MMP_TCM_FLUSH_OUT) && fabs(v) < 0x1p-126) v = 0.0 * v;
            mmp_format_store(x->d, mmp_gemm_index((mmp_layout)x->layout_d, x->ldd, i, j), v, fd, rd, 0);
        }
    }
    free(a);
    free(b);
    return MMP_KERNEL_OK;
}

static int run_bf16_f32(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.bf16.f32", 1, -1, 0); }
static int run_bf16_f32_splitk(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.bf16.f32", 2, -1, 0); }
static int run_f16_f32(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.f16.f32", 1, -1, 0); }
static int run_f16_f16(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.f16.f16", 1, -1, 0); }
static int run_tf32_f32(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.tf32.f32", 1, -1, 0); }
static int run_e4m3_f32(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "mma.e4m3.f32", 1, -1, 0); }
static int run_e4m3_f32_wg(const mmp_kernel_args *x) { return mmp_host_tcm_gemm(x, "wgmma.e4m3.f32", 1, -1, 0); }
static int run_f16_f32_h(const mmp_kernel_args *x)
{
    return mmp_host_tcm_gemm(x, "mma.f16.f32", 1, MMP_ROUND_NEAREST_EVEN, 0);
}

#define F(x) MMP_FORMAT_##x
#define TCM_ROW(nm, in, cf, df, acc, desc)                                                         \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = "host_tcm_" #nm, .family = "host_tcm",         \
     .a_format = F(in), .b_format = F(in), .c_format = F(cf), .d_format = F(df), .acc_format = F(acc), \
     .mul_format = -1, .layouts_a = MMP_LAYOUTS_ANY, .layouts_b = MMP_LAYOUTS_ANY,                 \
     .layouts_d = MMP_LAYOUTS_ANY, .reads_c = 1, .m_multiple = 1, .n_multiple = 1, .k_multiple = 1, \
     .deterministic = 1, .where = MMP_KERNEL_HOST, .run = run_##nm, .description = desc}
static const mmp_kernel_desc tcm_kernels[] = {
    TCM_ROW(bf16_f32, BF16, FP32, FP32, FP32, "control: H200 mma.bf16.f32 model, natural K order"),
    TCM_ROW(bf16_f32_splitk, BF16, FP32, FP32, FP32, "control: H200 mma.bf16.f32 model, K split in two (fp32 sum)"),
    TCM_ROW(f16_f32, FP16, FP32, FP32, FP32, "control: H200 mma.f16.f32 model, natural K order"),
    TCM_ROW(f16_f16, FP16, FP16, FP16, FP16, "control: H200 mma.f16.f16 model (fp16 accumulator)"),
    TCM_ROW(f16_f32_h, FP16, FP32, FP16, FP32, "control: H200 mma.f16.f32 model, fp16 output rounded to nearest"),
    TCM_ROW(tf32_f32, TF32, FP32, FP32, FP32, "control: H200 mma.tf32.f32 model, natural K order"),
    TCM_ROW(e4m3_f32, E4M3, FP32, FP32, FP32, "control: H200 mma.e4m3.f32 model (f16 HMMA emulation)"),
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = "host_tcm_e4m3_f32_wg", .family = "host_tcm",
     .a_format = F(E4M3), .b_format = F(E4M3), .c_format = F(FP32), .d_format = F(FP32), .acc_format = F(FP32),
     .mul_format = -1, .acc_bits = 14, .layouts_a = MMP_LAYOUTS_ANY, .layouts_b = MMP_LAYOUTS_ANY,
     .layouts_d = MMP_LAYOUTS_ANY, .reads_c = 1, .m_multiple = 1, .n_multiple = 1, .k_multiple = 1,
     .min_cc = 90, .arch_specific = 1, .deterministic = 1, .where = MMP_KERNEL_HOST, .run = run_e4m3_f32_wg,
     .description = "control: H200 wgmma.e4m3.f32 model (13 fraction bits: acc_bits 14)"},
};

const mmp_kernel_desc *mmp_kernels_host_tcm(size_t *count)
{
    *count = sizeof tcm_kernels / sizeof tcm_kernels[0];
    return tcm_kernels;
}
