/* examples/library/main.c — libmmp from a program of your own: the correctly rounded product of
 * two small fp32 matrices by the certified reference (mmaprobe/reference.h), against a plain
 * fp32 loop; prints the largest difference in ulps. Build: see CMakeLists.txt beside it. */
#include <math.h>
#include <stdio.h>

#include "mmaprobe/gemm.h"
#include "mmaprobe/reference.h"

int main(void)
{
    enum { M = 8, N = 8, K = 1000 };
    static float a[M * K], b[K * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7919 % 1000) / 999.0 - 0.5);
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 104729 % 1000) / 999.0 - 0.5);
    mmp_gemm g;
    mmp_gemm_init(&g, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, M, N, K);   /* row-major */
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    mmp_ref_result r;
    mmp_ref_result_init(&r);
    if (mmp_ref_gemm(&r, a, b, NULL, &g, &o) != MMP_STATUS_OK) {
        fprintf(stderr, "reference: %s\n", mmp_error_last());
        return 1;
    }
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < K; k++) s = fmaf(a[i * K + k], b[k * N + j], s);
            double want = r.dout[i * N + j], ulp = nextafterf((float)fabs(want), INFINITY) - (float)fabs(want);
            if (fabs(s - want) / ulp > worst) worst = fabs(s - want) / ulp;
        }
    printf("fp32 loop vs the correctly rounded product, %dx%dx%d: at most %.1f ulp (%lld elements by MPFR)\n", M, N,
           K, worst, (long long)r.n_mpfr);
    mmp_ref_result_clear(&r);
    return 0;
}
