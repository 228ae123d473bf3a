/* mmaprobe/memory.h — shared-memory bank conflicts and global-memory coalescing, from the
 * addresses a kernel exposes (memmap.h), and measured on the GPU for comparison.
 *
 * Analysis of one warp-level access (host, no GPU):
 *   mmp_smem_cost c;  mmp_memory_smem_cost(&c, &access);   // wavefronts, ideal, conflict ways
 *   mmp_gmem_cost g;  mmp_memory_gmem_cost(&g, &access);   // sectors touched vs ideal
 * Per kernel (all warps' accesses of one K step, via the kernel's memmap):
 *   mmp_memory_report r;
 *   mmp_memory_analyse(&r, map, &shape);                   // totals, worst instruction, bank map
 *   mmp_memory_print(stdout, &r);
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
 *
 * cp.async (LDGSTS) sectors as L1TEX counts them (l1tex_sectors; our measured finding on the
 * H200, Nsight Compute's l1tex__t_sectors_pipe_lsu_mem_global_op_ld, results/h200/memory/):
 * the t-stage requests global sectors once per *shared-write wavefront*, not once per
 * instruction. The wavefronts of one phase (the 16-byte shared model's quarter-warp; half-warp
 * for 8 bytes, whole warp for 4) are formed greedily in lane order over 32-byte shared chunks:
 * a wavefront holds at most one 32-byte-aligned chunk per slot (chunk index mod 4, i.e. one per
 * quarter of a 128-byte row); a lane whose chunk's slot already holds another chunk waits for a
 * later wavefront. Each wavefront then requests the distinct sectors of its own lanes, so a
 * sector whose two 16-byte halves land in different wavefronts is counted twice. The cost is
 * not the 4-byte-bank conflict count: a contiguous 128-byte quarter-warp that starts 16 bytes
 * into a row is conflict-free yet costs one sector more (its last 16 B reuse the first slot);
 * the 80-byte padded rows of bf16_mma_padded cost one more sector per quarter-warp. Per CTA per
 * K step, this reproduces every measured kernel but one: bf16_mma_padded(_3stage) 640 (ideal
 * 512), fp16_ptx_* 608 (A padded +64, B rows shifted 16 bytes +32), fp16_wmma_cp_async 464,
 * every swizzled / conflict-free kernel and every int8/int4 .ca kernel exactly at its ideal.
 * Not explained: int4_ptx_mma_k64_x4_x2nontrans_cg measures 384 where its map (identical to
 * int4_ptx_mma_k64's, which measures 256 with cp.async.ca) gives 256: a .cg effect that no
 * address rule can see. Only 16-byte copies were measured; 4- and 8-byte copies use the same
 * rule unverified.
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
    int32_t l1tex_sectors; /* cp.async: sectors as L1TEX counts them (see above); else = sectors */
    int32_t ldgsts_wavefronts; /* cp.async: the shared-write wavefronts of that rule; else 0 */
} mmp_gmem_cost;

mmp_status mmp_memory_smem_cost(mmp_smem_cost *out, const mmp_warp_access *a);
mmp_status mmp_memory_gmem_cost(mmp_gmem_cost *out, const mmp_warp_access *a);
/* The cp.async rule alone: sectors and shared-write wavefronts of one cp.async access. */
mmp_status mmp_memory_ldgsts_sectors(int32_t *sectors, int32_t *wavefronts, const mmp_warp_access *a);

#define MMP_MEMORY_MAX_ACCESSES 512
#define MMP_MEMORY_MAX_SITES 8         /* access sites whose worst request a report keeps */
#define MMP_MEMORY_GRID_MAX 32         /* wavefronts of one request at most (32-way, or 4 x 8-way) */

/* One warp's shared-memory request, kept to draw it (probes/memory_grid.c): each lane's first
 * 4-byte word, counted from a 128-byte-aligned base so that bank = word % 32 and distinct words
 * stay distinct. A report keeps the worst request (most wavefronts) of each access site. */
typedef struct mmp_memory_request {
    char label[48];                    /* the access site, e.g. "A ldmatrix.x4" */
    int32_t kind;                      /* mmp_access_kind */
    int32_t bytes, matrices;           /* per lane (ldmatrix: 16 per row address); ldmatrix's matrices */
    uint32_t active;                   /* lanes taking part */
    int32_t warp;                      /* the warp that issues it */
    uint32_t word[32];                 /* each lane's first word from the base */
    int32_t wavefronts, ways;          /* its cost, as mmp_memory_smem_cost gives it */
} mmp_memory_request;

/* The lane -> bank grid of one request: one row per wavefront, phase by phase (the phase's k-th
 * wavefront serves the k-th distinct word of every bank, in lane order), a lane mask per bank. */
typedef struct mmp_memory_grid {
    int32_t wavefronts, phases;
    int32_t phase[MMP_MEMORY_GRID_MAX];        /* the phase each wavefront belongs to */
    uint32_t lanes[MMP_MEMORY_GRID_MAX][32];   /* [wavefront][bank]: lanes served (several: broadcast) */
} mmp_memory_grid;

/* The request a warp access makes (its cost from mmp_memory_smem_cost); INVALID for a global
 * load or an address span that does not fit the word offsets. */
mmp_status mmp_memory_request_make(mmp_memory_request *q, const mmp_warp_access *a, int warp, const mmp_smem_cost *c);
/* The grid of a request; its wavefront count equals the request's (INVALID when it cannot). */
mmp_status mmp_memory_request_grid(mmp_memory_grid *g, const mmp_memory_request *q);
/* The grid as text: a 32-column row per wavefront, each cell the lane served in base 32
 * (0-9, a-v), '*' for a broadcast of one word to several lanes, '.' for an idle bank. */
void mmp_memory_request_print(FILE *out, const mmp_memory_request *q);

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
    /* global sectors with cp.async counted as L1TEX counts them (distinct sectors otherwise):
     * the figure measured sectors are judged against */
    int64_t gmem_l1tex_sectors;
    /* the worst request of each shared-memory access site (first seen first), to draw */
    int32_t n_requests;
    mmp_memory_request requests[MMP_MEMORY_MAX_SITES];
} mmp_memory_report;

/* Analyses every warp of one CTA at K step kstep (0 = steady state is usually step 1). */
mmp_status mmp_memory_analyse(mmp_memory_report *out, const mmp_kernel_memmap *map,
                              const mmp_memmap_shape *shape, int kstep);
void mmp_memory_print(FILE *out, const mmp_memory_report *r);

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

/* ---- typed results (what the run document holds; probes/results.c) ---- */

/* One calibration access: the model's cost and what the method measured. */
typedef struct mmp_memory_calib_result {
    char name[32];
    int32_t model_ways, model_wavefronts;
    double measured_wavefronts;        /* per instruction; NaN: not measured */
    int agree;                         /* 1 agree, 0 disagree, -1 not measured */
} mmp_memory_calib_result;

/* One kernel: the analysis of its memory map and, when counters were read, the measurement
 * per CTA per K step beside the model figures it is judged against. */
typedef struct mmp_memory_kernel_result {
    mmp_memory_report analysis;
    int measured;                      /* 1: the fields below hold a measurement */
    char method[16];                   /* "cupti", "ncu" */
    double smem_ld_wavefronts;         /* NaN: the profiler gave none */
    double smem_st_wavefronts;         /* shown, not judged (cp.async writes are not in it) */
    double gmem_sectors;               /* NaN: the profiler gave none */
    int64_t gmem_model;                /* = analysis.gmem_l1tex_sectors */
    int agree, gmem_agree;             /* 1 agree, 0 disagree, -1 not measured */
    char why[256];                     /* not measured: why ("" when no method ran) */
} mmp_memory_kernel_result;

typedef struct mmp_memory_results {
    int present;                       /* the group ran */
    char method[16];                   /* "none", "cupti", "ncu", "clock64" */
    char why[1024];                    /* methods refused, with their reasons */
    mmp_memory_calib_result *calib;
    size_t n_calib, cap_calib;
    mmp_memory_kernel_result *kernels;
    size_t n_kernels, cap_kernels;
    int32_t disagreements;             /* measured figures outside the model's tolerance */
} mmp_memory_results;

mmp_status mmp_memory_results_add_calib(mmp_memory_results *g, const mmp_memory_calib_result *c);
mmp_status mmp_memory_results_add_kernel(mmp_memory_results *g, const mmp_memory_kernel_result *k);

/* `mmaprobe probe --memory [--counters auto|cupti|ncu|clock]`: analysis for every registered map
 * and the calibrations, plus the measurement on the GPU when there is one (probes/memory_run.c):
 * CUPTI's range profiler (trusted only when every calibration row agrees with the model), then
 * Nsight Compute, then clock64 timing, each refusal printed with its reason. A method named with
 * --counters that cannot measure: one line on stderr, exit 3. */
int mmp_probe_memory_run(mmp_memory_results *out, FILE *text, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
