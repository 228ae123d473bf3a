/* ref_nocuda.c — the device paths' entry points in a host-only build (MMP_ENABLE_CUDA=OFF):
 * each returns MMP_STATUS_UNSUPPORTED. With CUDA, ref_cuda.cu and ref_cuda2.cu define them and
 * reference/CMakeLists.txt leaves this file out. */
#include "mmaprobe/metrics.h"
#include "ref_internal.h"
#include "ref_plan.h"

mmp_status ref_cuda2_run(mmp_ref_result *r, const void *a, const void *b, const void *c, const mmp_gemm *g,
                         const mmp_ref_options *o, int threads)
{
    (void)r; (void)a; (void)b; (void)c; (void)g; (void)o; (void)threads;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}

mmp_status ref_cuda_run(mmp_ref_result *r, const ref_data *d, const mmp_ref_options *o)
{
    (void)r; (void)d; (void)o;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}

mmp_status ref_cuda2_upload(void **dev, const void *host, mmp_format f, mmp_layout l, int64_t ld, int64_t rows,
                            int64_t cols, int device)
{
    (void)host; (void)f; (void)l; (void)ld; (void)rows; (void)cols; (void)device;
    *dev = NULL;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}

void ref_cuda2_free(void *dev) { (void)dev; }

mmp_status ref_cuda2_vstats(ref_vstats *out, const double *x, int64_t rows, int64_t len, int beta)
{
    (void)out; (void)x; (void)rows; (void)len; (void)beta;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}

mmp_status ref_cuda_time_dgemm(double *seconds, int64_t m, int64_t n, int64_t k, int device)
{
    (void)m; (void)n; (void)k; (void)device;
    *seconds = 0;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}

mmp_status mmp_metrics_subnormal_excess_device(double *excess, double *sub_abs, int *none, const void *a,
                                               mmp_format fa, mmp_layout la, int64_t lda, const void *b,
                                               mmp_format fb, mmp_layout lb, int64_t ldb, int64_t m, int64_t n,
                                               int64_t k, double alpha, const mmp_metrics_excess_skip *skip,
                                               int device, int out_on_device)
{
    (void)skip;
    (void)excess; (void)sub_abs; (void)a; (void)fa; (void)la; (void)lda; (void)b; (void)fb; (void)lb; (void)ldb;
    (void)m; (void)n; (void)k; (void)alpha; (void)device; (void)out_on_device;
    if (none) *none = 1;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "subnormal excess: this build has no CUDA (MMP_ENABLE_CUDA=OFF)");
}
