/* mmaprobe/memory.h — shared-memory bank conflicts and global-memory coalescing, from the
 * addresses a kernel exposes (memmap.h), and measured on the GPU for comparison.
 *
 * Analysis of one warp-level access (host, no GPU):
 *   mmp_smem_cost c;  mmp_memory_smem_cost(&c, &access);   // wavefronts, ideal, conflict ways
 *   mmp_gmem_cost g;  mmp_memory_gmem_cost(&g, &access);   // sectors touched vs ideal
 * Per kernel (all warps' accesses of one K step, via the kernel's memmap):
 *   mmp_memory_report r;
 *   mmp_memory_analyse(&r, map, &shape);                   // totals, worst instruction, bank map
 *   mmp_memory_print(stdout, &r);  mmp_memory_json(json, &r);
 *
 * The model (bank = (byte address / 4) mod 32; a wavefront serves at most one distinct 4-byte
 * word per bank; the same word read by several lanes is a broadcast, not a conflict):
 *   4-byte LDS/STS: the whole warp is one phase;  8-byte: two phases of 16 lanes;
 *   16-byte (and cp.async 16 B writes): four phases of 8 lanes;
 *   ldmatrix: one phase per 8x8 matrix (8 row addresses of 16 bytes each).
 *   wavefronts(phase) = max over banks of the distinct words of that bank; conflict ways =
 *   the largest wavefront count of any phase; ideal = number of phases with an active lane.
 * Global loads: sectors = distinct 32-byte sectors of all bytes the active lanes read;
 *   ideal = ceil(distinct bytes / 32) (were they packed); efficiency = bytes / (32 sectors).
 */
#ifndef MMAPROBE_MEMORY_H
#define MMAPROBE_MEMORY_H

#include <stdint.h>
#include <stdio.h>
#include "mmaprobe/memmap.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mmp_smem_cost {
    int32_t phases;        /* phases with at least one active lane (= ideal wavefronts) */
    int32_t wavefronts;    /* sum over phases */
    int32_t ways;          /* worst phase's wavefronts (1 = conflict-free) */
    int32_t bank_words[32];/* distinct words per bank, summed over phases (the bank map) */
} mmp_smem_cost;

typedef struct mmp_gmem_cost {
    int32_t sectors;       /* 32-byte sectors touched */
    int32_t ideal;         /* ceil(distinct bytes / 32) */
    int64_t bytes;         /* distinct bytes requested */
} mmp_gmem_cost;

mmp_status mmp_memory_smem_cost(mmp_smem_cost *out, const mmp_warp_access *a);
mmp_status mmp_memory_gmem_cost(mmp_gmem_cost *out, const mmp_warp_access *a);

#define MMP_MEMORY_MAX_ACCESSES 256

typedef struct mmp_memory_report {
    char kernel[96];
    int32_t warps, accesses;           /* warps analysed, warp-level accesses per K step */
    /* shared memory, per K step of one CTA (all warps) */
    int64_t smem_wavefronts, smem_ideal, smem_ld_wavefronts, smem_st_wavefronts;
    int64_t smem_ld_ideal, smem_st_ideal;
    int32_t worst_ways;                /* worst instruction's conflict ways */
    char worst_label[64];
    int64_t bank_words[32];            /* the bank map, whole K step */
    /* global memory */
    int64_t gmem_sectors, gmem_ideal, gmem_bytes;
    double gmem_efficiency;            /* bytes used per byte fetched */
    double worst_gmem_efficiency;
    char worst_gmem_label[64];
    int64_t smem_bytes_per_stage, smem_bytes_total;
    int32_t stages, ctas_per_sm_expected;
} mmp_memory_report;

/* Analyses every warp of one CTA at K step kstep (0 = steady state is usually step 1). */
mmp_status mmp_memory_analyse(mmp_memory_report *out, const mmp_kernel_memmap *map,
                              const mmp_memmap_shape *shape, int kstep);
void mmp_memory_print(FILE *out, const mmp_memory_report *r);
void mmp_memory_json(FILE *out, const mmp_memory_report *r);   /* one JSON object */

/* Calibration maps with known answers: stride-s 4/8/16-byte loads, ldmatrix with 16- and
 * 128-byte row spacing (and the padded/swizzled fixes). Each has its expected ways. */
typedef struct mmp_memory_calib {
    const char *name;              /* "lds32_stride1", "ldsm_x4_row128", ... */
    mmp_access_kind kind;
    int32_t bytes;                 /* per lane */
    int32_t stride_bytes;          /* lane (or ldmatrix row) spacing */
    int32_t matrices;              /* ldmatrix only */
    int32_t expected_ways;         /* the known answer */
    int32_t expected_wavefronts;
} mmp_memory_calib;

const mmp_memory_calib *mmp_memory_calibs(size_t *count);
/* The warp access a calibration row describes (addresses from lane * stride). */
void mmp_memory_calib_access(mmp_warp_access *out, const mmp_memory_calib *c);

/* `mmaprobe probe --memory [--counters auto|cupti|ncu|clock]`: analysis for every registered map
 * and the calibrations, plus the measurement on the GPU when there is one (probes/memory_run.c):
 * CUPTI's range profiler (trusted only when every calibration row agrees with the model), then
 * Nsight Compute, then clock64 timing, each refusal printed with its reason. A method named with
 * --counters that cannot measure: one line on stderr, exit 3. */
int mmp_probe_memory_run(FILE *text, FILE *json, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
