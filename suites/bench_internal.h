/* suites/bench_internal.h — the pieces of `mmaprobe bench` shared inside suites/ (not installed).
 *
 *   bench.c        rows, the validation gate, the figures, the table
 *   bench_child.c  the forked timing child and its pipe (mmp_bench_time_rows)
 *   bench_time.c   one row in this process: host timing, the device's peak and clocks
 *   bench_cuda.cu  the device timing loop (CUDA builds)
 *   bench_nvml.c   clocks, power and temperature through NVML loaded at run time
 */
#ifndef MMAPROBE_SUITES_BENCH_INTERNAL_H
#define MMAPROBE_SUITES_BENCH_INTERNAL_H

#include "mmaprobe/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Time every row still to be timed (validation PASS, nothing against it) in forked children, one
 * at a time; a child that dies or overruns o->timeout_s makes its row ERROR and a fresh child
 * takes the next row. MMP_STATUS_IO / NO_MEMORY: no pipe or process could be made. */
mmp_status mmp_bench_time_rows(mmp_bench_run *b, const mmp_bench_options *o);

/* The device timing loop (bench_cuda.cu): the row's kernel, then its baseline (when not NULL and
 * not the kernel itself), on the same operand sets. OK with each timing's done/why set; another
 * status (message set) when the CUDA context cannot be used any more. */
mmp_status mmp_bench_time_device(mmp_bench_timing *kernel, mmp_bench_timing *baseline, int *device_cc,
                                 const mmp_bench_row *r, const mmp_bench_options *o);

/* The median of n values (sorted in place); min and max. */
void mmp_bench_stats(double *median, double *min, double *max, double *t, int n);
/* Operand sets so that sets x set_bytes exceeds rotate_bytes: at least 2, at most 64. */
int mmp_bench_sets(int64_t set_bytes, int64_t rotate_bytes);
/* The case whose data fills operand set s of row r (the kernel's formats, the row's layouts). */
void mmp_bench_set_case(mmp_case *c, const mmp_bench_row *r, const mmp_bench_options *o, int s);

#ifdef __cplusplus
}
#endif
#endif
