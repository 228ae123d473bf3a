/* mmaprobe/probe.h — arithmetic probes: published vectors, captures, analysis, the CLI hooks.
 *
 * Usage:
 *   // published hardware vectors (shared/data/mma-vectors)
 *   char dir[4096];
 *   if (mmp_vectors_dir(dir, sizeof dir) == MMP_STATUS_OK) {
 *       mmp_vector_set s;
 *       mmp_vectors_load(&s, dir, "H100", "fp16", MMP_FORMAT_FP32);   // ... use s.a, s.d_bits
 *       mmp_vectors_clear(&s);
 *   }
 *   // captures: (inputs, outputs) of one instruction, as text (format in probes/arith_io.c)
 *   mmp_capture cap;
 *   mmp_capture_read(&cap, "tests/data/captures/arith/synthetic-h200-mma.f16.f32.txt");
 *   mmp_arith_report rep;
 *   mmp_arith_analyse(&rep, &cap);            // derive the model parameters from the probes
 *   mmp_arith_report_print(stdout, &rep);     // readable text
 *   mmp_capture_clear(&cap);
 *
 * The probe groups, one signature each (outputs first; text may be NULL):
 *   mmp_probe_results res; mmp_probe_results_init(&res);
 *   int rc = mmp_probe_arith_run(&res.arith, stdout, argc, argv);    // probes/arith_run.c
 *   rc = mmp_probe_layout_run(&res.layout, stdout, argc, argv);      // probes/layout_run.c
 *   rc = mmp_probe_memory_run(&res.memory, stdout, argc, argv);      // probes/memory_run.c
 *   mmp_probe_results_clear(&res);
 * Each fills its typed results (the run document, reports/, writes them as JSON) and returns a
 * process exit code (MMP_EXIT_*).
 */
#ifndef MMAPROBE_PROBE_H
#define MMAPROBE_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "mmaprobe/format.h"
#include "mmaprobe/layout.h"
#include "mmaprobe/memory.h"
#include "mmaprobe/model.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- published vectors (probes/vectors.c) ---- */
typedef struct mmp_vector_set {
    char gpu[16], in_name[8];
    mmp_format in_format, out_format;
    int k;                      /* products per vector (the line length of a_*.txt) */
    size_t count;
    double *a, *b;              /* count * k exact input values */
    double *c;                  /* count accumulator inputs (fp32) */
    uint32_t *d_bits;           /* count outputs as fp32 patterns (fp16 outputs widened) */
} mmp_vector_set;

/* The data directory: $MMP_VECTORS_DIR, else MMP_SOURCE_DIR/shared/data/mma-vectors, else
 * MMP_SOURCE_DIR/../shared/data/mma-vectors (the CI clone).
 * MMP_STATUS_IO (with the paths tried) when neither exists. */
mmp_status mmp_vectors_dir(char *dir, size_t size);
/* Load <dir>/<gpu>/<in>/{a,b}_<gpu>_<in>.txt, c_<gpu>_fp32.txt, d_<gpu>_<out>.txt. */
mmp_status mmp_vectors_load(mmp_vector_set *s, const char *dir, const char *gpu, const char *in,
                            mmp_format out);
void mmp_vectors_clear(mmp_vector_set *s);

/* ---- captures (probes/arith_io.c) ---- */
typedef struct mmp_capture_vec {
    char probe[24];             /* which probe designed this vector: "bits", "block", ... */
    uint32_t c, d;              /* fp32 patterns (fp16 widened; integers as int32 bits) */
    uint32_t *a, *b;            /* k patterns each (point into the capture's storage) */
} mmp_capture_vec;

typedef struct mmp_capture {
    char instruction[32];       /* "mma.f16.f32", "wgmma.e4m3.f32", "mma.s8.s32.satfinite" */
    char sass[96];              /* SASS opcode that ran it ("HMMA.16816.F32"), or "unknown" */
    char device[128];           /* GPU name, or "model" for synthetic captures */
    char origin[256];           /* "gpu" or "synthetic: <model parameters>" */
    mmp_format in_format, out_format;
    int k;
    size_t count, capacity;
    int native;                 /* 1 native tensor-core path, 0 emulated, -1 unknown (SASS) */
    char path_note[160];        /* why: "QGMMA.64x8x32.F32.E4M3.E4M3 takes e4m3 directly", ... */
    mmp_capture_vec *v;
    uint32_t *store;            /* 2*k words per vector */
    size_t inputs_rounded;      /* FP8 input words mmp_capture_read rounded to the format (RN, as
                                   the upload converts them): recorded values it cannot hold */
} mmp_capture;

void mmp_capture_init(mmp_capture *cap, const char *instruction, mmp_format in, mmp_format out, int k);
void mmp_capture_clear(mmp_capture *cap);
/* Append one vector (values exact in the formats); returns MMP_STATUS_NO_MEMORY on failure. */
mmp_status mmp_capture_add(mmp_capture *cap, const char *probe, const uint32_t *a,
                           const uint32_t *b, uint32_t c, uint32_t d);
mmp_status mmp_capture_write(const char *path, const mmp_capture *cap);
/* Reads "<file>.xz" through `xz -dc`. FP8 inputs are rounded to their format (nearest-even,
 * what the GPU upload does); cap->inputs_rounded counts the words that changed. */
mmp_status mmp_capture_read(mmp_capture *cap, const char *path);
/* Binary form (same machine; the GPU child hands captures to the parent this way). */
mmp_status mmp_capture_write_bin(const char *path, const mmp_capture *cap);
mmp_status mmp_capture_read_bin(mmp_capture *cap, const char *path);
/* Text capture with every designed vector and the first keep random ("rand*") ones. */
mmp_status mmp_capture_write_subset(const char *path, const mmp_capture *cap, size_t keep);

/* fp32 pattern <-> value helpers for capture words */
uint32_t mmp_probe_bits(double x);
double mmp_probe_value(uint32_t bits);

/* ---- instruction table (probes/arith_table.c), probe design (probes/arith_design.c) ---- */
/* One instruction the arithmetic probes cover. */
typedef struct mmp_arith_instr {
    const char *id;             /* "mma.f16.f32": the capture file name and filter key */
    const char *ptx;            /* the PTX instruction */
    mmp_format in_format, out_format;
    int k;                      /* the instruction's K (products per output) */
    int min_cc;                 /* compute capability x10 needed (sm_90a: 90 and wgmma=1) */
    int wgmma;
    int satfinite;              /* integer mma with .satfinite (clamp instead of wrap) */
    int c_zero;                 /* wgmma run with scale-d = 0: the accumulator input is ignored */
    int promote;                /* K is chained over K/promote instructions; 0: one instruction.
                                   > 0 with c_zero = 0: wgmma with scale-d = 1 (hardware chain);
                                   the ".promote" ids add each instruction's result in fp32 */
    int promote_fp32;           /* 1: partial results summed in fp32 registers (FADD) */
} mmp_arith_instr;

const mmp_arith_instr *mmp_arith_instrs(size_t *count);
const mmp_arith_instr *mmp_arith_instr_find(const char *id);

/* Fill cap's inputs (d = 0) with every probe vector for this instruction, then n_random
 * random vectors (half random values, half random bit patterns) from seed. */
mmp_status mmp_arith_design(mmp_capture *cap, const mmp_arith_instr *in, size_t n_random,
                            uint64_t seed);
/* Fill every d of cap from the model (synthetic captures, and the comparison). */
mmp_status mmp_arith_model_outputs(mmp_capture *cap, const mmp_model_params *p);

/* ---- analysis (probes/arith_analyse.c) ---- */
typedef struct mmp_arith_feature {
    char name[32];              /* "significand_bits", "block_size", ... */
    char value[128];            /* measured value, printable */
    char method[256];           /* how the inputs isolate it */
    int ok;                     /* 1 measured consistently; 0 inconclusive (reason in value) */
} mmp_arith_feature;

typedef struct mmp_arith_report {
    char instruction[32], sass[96], device[128], origin[256];
    int native;                           /* from the capture: 1 native, 0 emulated, -1 unknown */
    char path_note[160];
    int integer;                          /* integer instruction: the fields below, not fitted */
    int int_saturates, int_stepwise;      /* clamp (1) or wrap (0); clamped at each addition */
    mmp_arith_feature f[24];
    int nf;
    mmp_model_params fitted;
    size_t n_random, random_mismatches;   /* random vectors vs the fitted model */
    size_t n_total, total_mismatches;     /* every vector in the capture vs the model */
    char mismatch_example[256];
} mmp_arith_report;

mmp_status mmp_arith_analyse(mmp_arith_report *rep, const mmp_capture *cap);
void mmp_arith_report_print(FILE *out, const mmp_arith_report *rep);

/* ---- SASS: which hardware instruction ran a probe (probes/arith_sass.c) ---- */
typedef struct mmp_sass_summary {
    char opcodes[96];           /* tensor-core opcodes of the function, most frequent first */
    int n_tensor;               /* tensor-core instructions (HMMA/IMMA/HGMMA/QGMMA/...) */
    int n_imad;                 /* IMAD/IDP integer multiply-adds (not .MOV/.WIDE address math) */
    int n_convert;              /* F2FP/HADD2.F32/I2F conversions */
    int native;                 /* 1 native, 0 emulated, -1 unknown */
    char note[160];             /* the reason, printable */
} mmp_sass_summary;

/* Summarise the function whose mangled name contains key, in the "code for sm_<sm>" sections
 * (sm <= 0: any) of a `cuobjdump -sass` listing, for an instruction with input format in.
 * MMP_STATUS_UNSUPPORTED (summary says why) when no such function is listed. */
mmp_status mmp_sass_summarise(mmp_sass_summary *s, const char *sass, const char *key, int sm,
                              mmp_format in);
/* `cuobjdump -sass` of this process's executable (malloc'd), NULL when unavailable. */
char *mmp_sass_dump(void);

/* ---- GPU capture (probes/arith_capture.cu, probes/sm90a/arith_wgmma.cu) ---- */
/* Run every vector of cap through the instruction on device dev and fill its outputs and
 * SASS name. MMP_STATUS_UNSUPPORTED when the build or the device lacks it. CUDA: call only in
 * a process that never forks afterwards (the CLI runs captures in a forked child). */
mmp_status mmp_arith_capture_gpu(mmp_capture *cap, const mmp_arith_instr *in, int dev);

/* ---- typed results of the probe groups (probes/results.c) ---- */
typedef enum mmp_probe_state {
    MMP_PROBE_STATE_ANALYSED,   /* captured (or read) and analysed: rep holds the analysis */
    MMP_PROBE_STATE_SKIPPED,    /* not capturable here (build or device lacks it): reason says why */
    MMP_PROBE_STATE_FAILED,     /* capture or analysis failed: reason holds the error */
    MMP_PROBE_STATE_COUNT_
} mmp_probe_state;

const char *mmp_probe_state_name(mmp_probe_state s);          /* "analysed", "skipped", "failed" */
mmp_status mmp_probe_state_from_name(mmp_probe_state *s, const char *name);

/* One arithmetic instruction: the analysis (features, fitted model: extra alignment bits,
 * rounding, alignment floor, block size, subnormal handling; native or emulated path and SASS
 * opcode; replay mismatch counts) or why there is none. */
typedef struct mmp_arith_result {
    char instruction[32];
    mmp_probe_state state;
    char reason[512];           /* skipped/failed: why; analysed: a note ("capture not stored: ...") */
    mmp_arith_report rep;       /* analysed only */
} mmp_arith_result;

typedef struct mmp_arith_results {
    int present;                /* the group ran (else the document says null) */
    mmp_arith_result *items;
    size_t n, cap;
} mmp_arith_results;

/* The three groups of one `mmaprobe probe` run; a group that did not run has present = 0. */
typedef struct mmp_probe_results {
    mmp_arith_results arith;
    mmp_layout_results layout;
    mmp_memory_results memory;
} mmp_probe_results;

void mmp_probe_results_init(mmp_probe_results *r);
void mmp_probe_results_clear(mmp_probe_results *r);
/* Append a copy of *a. */
mmp_status mmp_arith_results_add(mmp_arith_results *g, const mmp_arith_result *a);
/* Append every entry of src to dst (deep copies), and add src's counts: merging shards. */
mmp_status mmp_probe_results_append(mmp_probe_results *dst, const mmp_probe_results *src);

/* ---- the probe groups ---- */
int mmp_probe_arith_run(mmp_arith_results *out, FILE *text, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
