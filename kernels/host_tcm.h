/* host_tcm.h — host kernels that emulate the H200 tensor core bit for bit through the fitted
 * model (reference/model.c), used as the correct-kernel controls of the tolerance tests and as
 * the base of the tolerance mutants (host_mutants.c). Private to kernels/. */
#ifndef MMAPROBE_HOST_TCM_H
#define MMAPROBE_HOST_TCM_H

#include "mmaprobe/kernel.h"

/* What the emulating GEMM does: an instruction row of the H200 model table (e.g. "mma.bf16.f32"),
 * K split into `splits` contiguous parts (each from a zero accumulator, summed in fp32 round to
 * nearest, as a split-K kernel does), the accumulator's conversion to d_format (rounding), and
 * the planted bugs of the mutants. */
enum {
    MMP_TCM_FLUSH_OUT = 1,      /* subnormal outputs flushed to zero */
    MMP_TCM_NARROW_LOW = 2      /* the fp16 accumulator keeps 6 of its 10 fraction bits */
};
int mmp_host_tcm_gemm(const mmp_kernel_args *x, const char *instruction, int splits, int rounding,
                      unsigned bugs);

#endif
