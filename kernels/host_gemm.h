/* kernels/host_gemm.h — the host GEMM loop shared by host kernels and host mutants.
 *   mmp_host_gemm(args, a, b, c, d, acc, rounding): D = alpha A B + beta C with the accumulator
 *   rounded to acc (rounding mode rnd) after every fused multiply-add. Returns 0. */
#ifndef MMAPROBE_KERNELS_HOST_GEMM_H
#define MMAPROBE_KERNELS_HOST_GEMM_H
#include "mmaprobe/format.h"
#include "mmaprobe/kernel.h"
int mmp_host_gemm(const mmp_kernel_args *x, mmp_format fa, mmp_format fb, mmp_format fc, mmp_format fd,
                  mmp_format facc, mmp_round rnd);
#endif
