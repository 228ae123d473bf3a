/* probes/arith_internal.h — shared between the arithmetic-probe files (not a public API). */
#ifndef MMAPROBE_ARITH_INTERNAL_H
#define MMAPROBE_ARITH_INTERNAL_H

#include "mmaprobe/probe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 for int8/uint8/int4/uint4 inputs (the integer probes of probes/arith_int.c). */
int mmp_arith_is_integer(mmp_format f);
mmp_status mmp_arith_design_int(mmp_capture *cap, const mmp_arith_instr *in, size_t n_random,
                                uint64_t seed);
mmp_status mmp_arith_model_outputs_int(mmp_capture *cap, int satfinite, int stepwise);
mmp_status mmp_arith_analyse_int(mmp_arith_report *rep, const mmp_capture *cap);
void mmp_arith_add_feature(mmp_arith_report *r, const char *name, int ok, const char *method,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* SASS of the capture kernel whose mangled name contains key (probes/arith_sass.c). */
void mmp_arith_set_sass(mmp_capture *cap, const char *key, int cc);
/* wgmma captures (probes/sm90a/arith_wgmma.cu; CUDA builds only). */
mmp_status mmp_arith_capture_wgmma(mmp_capture *cap, const mmp_arith_instr *in, int dev);

#ifdef __cplusplus
}
#endif

#endif
