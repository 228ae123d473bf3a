/* host.c — host GEMM kernels (family "host"): correct, naive loops on host memory, so the whole
 * runner (poison, guards, verdicts, isolation) is tested in CI without a GPU.
 *
 * Build/run: part of libmmp;  mmaprobe validate --suite smoke --filter 'host_*'
 *
 * version 1 is the naive loop of every row: D = alpha * sum_k A(i,k) B(k,j) + beta * C, the
 *   accumulator rounded after every fused multiply-add to the declared accumulator format
 *   (mmp_format_round), then the result rounded to the output format;
 * version 2 (host_tc_*) emulates tensor-core arithmetic: the same loop with the accumulator
 *   rounded TOWARD ZERO, the correct-but-truncating kernel the default bound must never fail;
 * version 3 (host_blas_f32/f64) is the CBLAS sgemm/dgemm the reference links: a fast CPU
 *   kernel for large cases (end-to-end timing of the harness on a machine without a GPU; run
 *   with --host-max-log2-work, as host kernels above 2^30 multiply-adds are skipped).
 * One launcher signature: int run(const mmp_kernel_args *).
 */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "mmaprobe/gemm.h"
#include "mmaprobe/registry.h"
#include "host_gemm.h"

int mmp_host_gemm(const mmp_kernel_args *x, mmp_format fa, mmp_format fb, mmp_format fc, mmp_format fd,
                  mmp_format facc, mmp_round rnd)
{
    const mmp_format_info *acc = mmp_format_get_info(facc);
    int int_acc = !acc->is_float;
    for (int64_t i = 0; i < x->m; i++)
        for (int64_t j = 0; j < x->n; j++) {
            double s = 0;
            for (int64_t k = 0; k < x->k; k++) {
                double a = mmp_format_load(x->a, mmp_gemm_index((mmp_layout)x->layout_a, x->lda, i, k), fa);
                double b = mmp_format_load(x->b, mmp_gemm_index((mmp_layout)x->layout_b, x->ldb, k, j), fb);
                if (int_acc) s += a * b;       /* exact: |s| < 2^53 */
                else if (facc == MMP_FORMAT_FP64 && rnd == MMP_ROUND_NEAREST_EVEN) s = fma(a, b, s);
                else s = mmp_format_round(fma(a, b, s), facc, rnd, 0);
            }
            double v = x->alpha * s;
            if (x->beta != 0 && x->c)
                v += x->beta * mmp_format_load(x->c, mmp_gemm_index((mmp_layout)x->layout_c, x->ldc, i, j), fc);
            mmp_format_store(x->d, mmp_gemm_index((mmp_layout)x->layout_d, x->ldd, i, j), v, fd,
                             MMP_ROUND_NEAREST_EVEN, !mmp_format_get_info(fd)->is_float);
        }
    return 0;
}

#define F(x) MMP_FORMAT_##x
#define HOST_RUN(name, a, b, c, d, acc, rnd)                                            \
    static int run_##name(const mmp_kernel_args *x)                                    \
    { return mmp_host_gemm(x, F(a), F(b), F(c), F(d), F(acc), MMP_ROUND_##rnd); }
HOST_RUN(f64, FP64, FP64, FP64, FP64, FP64, NEAREST_EVEN)
HOST_RUN(f32, FP32, FP32, FP32, FP32, FP32, NEAREST_EVEN)
HOST_RUN(f16_f32, FP16, FP16, FP32, FP32, FP32, NEAREST_EVEN)
HOST_RUN(bf16_f32, BF16, BF16, FP32, FP32, FP32, NEAREST_EVEN)
HOST_RUN(f16_f16, FP16, FP16, FP16, FP16, FP16, NEAREST_EVEN)
HOST_RUN(i8_i32, INT8, INT8, INT32, INT32, INT32, NEAREST_EVEN)
HOST_RUN(tc_f16_f32, FP16, FP16, FP32, FP32, FP32, TOWARD_ZERO)
HOST_RUN(tc_bf16_f32, BF16, BF16, FP32, FP32, FP32, TOWARD_ZERO)

/* D (layout_d, ldd) = alpha A B + beta C through CBLAS in the column-major view: a row-major
 * D is computed as D^T = B^T A^T. C is first copied into D (its own layout and ld). */
#define BLAS_RUN(nm, T, gemm)                                                                      \
    static int run_##nm(const mmp_kernel_args *x)                                                  \
    {                                                                                             \
        T *d = x->d;                                                                              \
        const T *c = x->c;                                                                        \
        double beta = x->beta != 0 && c ? x->beta : 0.0;                                          \
        if (beta != 0)                                                                            \
            for (int64_t i = 0; i < x->m; i++)                                                    \
                for (int64_t j = 0; j < x->n; j++)                                                \
                    d[mmp_gemm_index((mmp_layout)x->layout_d, x->ldd, i, j)] =                   \
                        c[mmp_gemm_index((mmp_layout)x->layout_c, x->ldc, i, j)];                \
        int acol = x->layout_a == MMP_LAYOUT_COL, bcol = x->layout_b == MMP_LAYOUT_COL;            \
        if (x->layout_d == MMP_LAYOUT_COL)                                                        \
            gemm(CblasColMajor, acol ? CblasNoTrans : CblasTrans, bcol ? CblasNoTrans : CblasTrans, \
                 (int)x->m, (int)x->n, (int)x->k, (T)x->alpha, x->a, (int)x->lda, x->b, (int)x->ldb,   \
                 (T)beta, d, (int)x->ldd);                                                        \
        else                                                                                      \
            gemm(CblasColMajor, bcol ? CblasTrans : CblasNoTrans, acol ? CblasTrans : CblasNoTrans, \
                 (int)x->n, (int)x->m, (int)x->k, (T)x->alpha, x->b, (int)x->ldb, x->a, (int)x->lda,   \
                 (T)beta, d, (int)x->ldd);                                                        \
        return 0;                                                                                 \
    }
BLAS_RUN(blas_f32, float, cblas_sgemm)
BLAS_RUN(blas_f64, double, cblas_dgemm)

#define HOST_ROW(nm, a, b, c, d, acc, desc)                                                        \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = "host_" #nm, .family = "host", .a_format = F(a), \
     .b_format = F(b), .c_format = F(c), .d_format = F(d), .acc_format = F(acc), .mul_format = -1,  \
     .layouts_a = MMP_LAYOUTS_ANY, .layouts_b = MMP_LAYOUTS_ANY, .layouts_d = MMP_LAYOUTS_ANY,      \
     .reads_c = 1, .m_multiple = 1, .n_multiple = 1, .k_multiple = 1, .deterministic = 1,           \
     .where = MMP_KERNEL_HOST, .run = run_##nm, .description = desc}
static const mmp_kernel_desc host_kernels[] = {
    HOST_ROW(f64, FP64, FP64, FP64, FP64, FP64, "fp64 FMA loop"),
    HOST_ROW(f32, FP32, FP32, FP32, FP32, FP32, "fp32 inputs, fp32 accumulator rounded to nearest"),
    HOST_ROW(f16_f32, FP16, FP16, FP32, FP32, FP32, "fp16 inputs, fp32 accumulator"),
    HOST_ROW(bf16_f32, BF16, BF16, FP32, FP32, FP32, "bf16 inputs, fp32 accumulator"),
    HOST_ROW(f16_f16, FP16, FP16, FP16, FP16, FP16, "fp16 inputs, fp16 accumulator and output"),
    HOST_ROW(i8_i32, INT8, INT8, INT32, INT32, INT32, "int8 inputs, int32 accumulator"),
    HOST_ROW(tc_f16_f32, FP16, FP16, FP32, FP32, FP32, "fp16 -> fp32 accumulating toward zero (tensor-core-like)"),
    HOST_ROW(tc_bf16_f32, BF16, BF16, FP32, FP32, FP32, "bf16 -> fp32 accumulating toward zero (tensor-core-like)"),
    HOST_ROW(blas_f32, FP32, FP32, FP32, FP32, FP32, "CBLAS sgemm (fast; for large cases on the CPU)"),
    HOST_ROW(blas_f64, FP64, FP64, FP64, FP64, FP64, "CBLAS dgemm (fast; for large cases on the CPU)"),
};

const mmp_kernel_desc *mmp_kernels_host(size_t *count)
{
    *count = sizeof host_kernels / sizeof host_kernels[0];
    return host_kernels;
}
