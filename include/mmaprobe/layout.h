/* mmaprobe/layout.h — fragment-layout probes: which lane and register holds which matrix element.
 *
 * Usage (the `mmaprobe probe` CLI calls the entry point; see cli/probe.c):
 *   mmp_layout_results res = {0};
 *   int rc = mmp_probe_layout_run(&res, stdout, argc, argv);   // exit code (MMP_EXIT_*)
 *     mmaprobe probe --layout [--filter S] [--from-capture DIR] [--write-capture DIR]
 *                             [--write-synthetic DIR] [--device N] [--quiet]
 *   argv[0] is the subcommand's name (ignored); options start at argv[1].
 *   Without --from-capture it captures on the GPU *in the calling process* (it creates a CUDA
 *   context and does not fork afterwards; callers that fork must do so before calling it).
 *   With --from-capture it analyses stored captures (tests/data/captures/layout/, results/<gpu>/captures/layout/) and needs no GPU.
 *   Text (tables, pictures) goes to `text` (may be NULL); the typed results to *out (the
 *   "layout" member of the probe document, written by reports/).
 *   Exit code: 0 all captures consistent and (where documented) equal to the PTX ISA; 1 a
 *   difference or an inconsistency (named in the text); 2 usage; 3 no device / unreadable
 *   captures; 4 internal error. --write-synthetic DIR writes the documented mappings as
 *   captures (how tests/data/captures/layout/synthetic/ was made) and needs no GPU.
 *
 * Library use (host only, no GPU):
 *   mmp_layout_capture cap; mmp_layout_capture_init(&cap);
 *   mmp_layout_capture_read(&cap, "tests/data/captures/layout/synthetic/mma.m16n8k16.f32.f16.txt");
 *   mmp_layout_report rep; mmp_layout_analyse(&rep, &cap);       // coverage, duplicates, PTX diff
 *   mmp_layout_print_text(stdout, &cap, &rep);                    // table + picture per fragment
 *   mmp_layout_capture_clear(&cap);
 *
 * Capture format (text, one file per capture; '#' starts a comment line):
 *   mmaprobe-layout-capture 1
 *   capture <id> <kind> <threads>            kind: mma | wmma | ldmatrix | stmatrix | wgmma
 *   source <free text to end of line>        how it was made (gpu name, synthetic, ...)
 *   fragment <name> <rows> <cols> <elems_per_lane> <elems_per_reg>
 *   ... one line per fragment, then one line per held element:
 *   <fragment> <lane> <reg> <elem> <row> <col>
 *   end
 * <lane> is the thread index in the warp (in the warpgroup for wgmma, 0..127), <elem> the element
 * index within the thread's fragment (a_i of the PTX ISA), <reg> = elem / elems_per_reg (the
 * 32-bit register, or the .f64 register), <row> <col> the matrix position, -1 -1 when the probe
 * could not place the element. An element may be held by several (lane, elem): a duplicate.
 *
 * mma.sync coordinates (gauge): an mma.sync's operands live only in registers, so the hardware
 * defines (row, k, col) only up to relabelling rows, k and columns consistently across A, B, C,
 * D. The GPU probe records which (A element, B element) pair feeds which D element and which C
 * element lands in which D element (one-hot operands, see layout_capture.cu);
 * mmp_layout_from_pairs() turns that into coordinates, naming each row/k/column class by the
 * PTX ISA label most of its members carry. A lane holding the wrong elements therefore shows as
 * a difference on that lane; a pure relabelling (unobservable) does not. m8n8k4 (4 independent
 * MMAs per warp, one per quadpair) is stored block-diagonally: MMA q's A is rows 8q..8q+7,
 * k 4q..4q+3 of a 32x16 A, etc. WMMA, ldmatrix, stmatrix and wgmma go through memory, so their
 * coordinates are absolute (memory row/col; for ldmatrix/stmatrix row = the lane whose row
 * address was used, col = the 16-bit element within that row).
 *
 * Pictures for the HTML report: each fragment result carries "owner", the rows x cols grid of
 * the (first) owning lane (-1: nobody), and "reg", that owner's register, so a report can draw
 * the picture itself; mmp_layout_print_picture() writes the same grid as text.
 */
#ifndef MMAPROBE_LAYOUT_H
#define MMAPROBE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MMP_LAYOUT_MAX_FRAGS 12
#define MMP_LAYOUT_NAME 40

typedef struct mmp_layout_slot {
    int16_t frag;                   /* index into capture.frags */
    int16_t lane;                   /* 0..threads-1 */
    int16_t reg;
    int16_t elem;
    int32_t row, col;               /* -1: not placed */
} mmp_layout_slot;

typedef struct mmp_layout_frag {
    char name[MMP_LAYOUT_NAME];     /* "A", "B", "C", "D", "matrix_a.row", "R", ... */
    int32_t rows, cols;
    int32_t elems_per_lane;
    int32_t elems_per_reg;
} mmp_layout_frag;

typedef struct mmp_layout_capture {
    char id[96];                    /* "mma.m16n8k16.f32.f16", also the filter key */
    char kind[16];                  /* mma | wmma | ldmatrix | stmatrix | wgmma */
    int32_t threads;                /* 32, or 128 for wgmma */
    char source[256];
    int32_t n_frags;
    mmp_layout_frag frags[MMP_LAYOUT_MAX_FRAGS];
    mmp_layout_slot *slots;
    size_t n_slots, cap_slots;
} mmp_layout_capture;

void mmp_layout_capture_init(mmp_layout_capture *cap);
void mmp_layout_capture_clear(mmp_layout_capture *cap);
/* Declare a fragment; returns its index in *index. */
mmp_status mmp_layout_capture_add_frag(int *index, mmp_layout_capture *cap, const char *name,
                                       int rows, int cols, int elems_per_lane, int elems_per_reg);
mmp_status mmp_layout_capture_add(mmp_layout_capture *cap, int frag, int lane, int elem, int row,
                                  int col);
int mmp_layout_capture_find_frag(const mmp_layout_capture *cap, const char *name); /* -1: none */
/* The text format above. read: MMP_STATUS_PARSE with "file:line: problem" on bad input. */
mmp_status mmp_layout_capture_write(FILE *out, const mmp_layout_capture *cap);
mmp_status mmp_layout_capture_write_file(const char *path, const mmp_layout_capture *cap);
mmp_status mmp_layout_capture_read(mmp_layout_capture *cap, const char *path);
/* Swap what two lanes hold in one fragment (used to plant a difference in tests). */
mmp_status mmp_layout_capture_swap_lanes(mmp_layout_capture *cap, const char *frag, int lane1,
                                         int lane2);

/* ---- documented mappings (PTX ISA "Matrix fragments for mma.*", ldmatrix, wgmma) ---------- */

/* (lane, elem) -> (row, col); returns 0, or -1 if (lane, elem) is out of range. */
typedef int (*mmp_layout_doc_fn)(int *row, int *col, int lane, int elem, const void *param);

typedef struct mmp_layout_doc_frag {
    const char *name;
    int rows, cols, elems_per_lane, elem_bits;
    mmp_layout_doc_fn fn;
    const void *param;
} mmp_layout_doc_frag;

typedef struct mmp_layout_doc {
    const char *id;                 /* capture id */
    const char *kind;
    const char *ptx;                /* the instruction, e.g. "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" */
    int min_cc;                     /* 80, 89, 90 (x10 major + minor) */
    int only_cc;                    /* nonzero: that cc only (wgmma: 90, sm_90a) */
    int threads;
    int n_frags;
    mmp_layout_doc_frag frags[4];
    const char *section;            /* PTX ISA section the formulas come from */
} mmp_layout_doc;

size_t mmp_layout_doc_count(void);
const mmp_layout_doc *mmp_layout_doc_get(size_t i);
const mmp_layout_doc *mmp_layout_doc_find(const char *id);   /* NULL: undocumented */
/* The capture the documented formulas predict. */
mmp_status mmp_layout_doc_capture(mmp_layout_capture *cap, const mmp_layout_doc *doc);

/* ---- mma.sync pair probes -> coordinates -------------------------------------------------- */

/* pairs[sa * nB + sb]: the D slot (lane * elems_per_lane + elem) that the product of A slot sa
 * and B slot sb lands in, -1 if none (different k), -2 if several or a wrong value. cmap[c]: the
 * D slot C slot c lands in (-1 none, -2 several/wrong). Slots number lane-major. Needs the doc
 * entry for the shapes and for naming the classes (see the gauge note above). */
mmp_status mmp_layout_from_pairs(mmp_layout_capture *cap, const mmp_layout_doc *doc,
                                 const int32_t *pairs, const int32_t *cmap);
/* The pair table a capture with fragments A, B, C, D predicts (tests, and to check a GPU
 * capture end to end): pairs has nA*nB entries, cmap nC. */
mmp_status mmp_layout_pairs_from_capture(int32_t *pairs, int32_t *cmap, const mmp_layout_capture *cap);
/* How many observations (pairs and cmap entries) the capture does not reproduce: 0 means the
 * reconstructed coordinates explain everything the GPU showed. */
mmp_status mmp_layout_pairs_check(int64_t *mismatches, const int32_t *pairs, const int32_t *cmap,
                                  const mmp_layout_capture *cap);
/* Sizes of the pair table for a doc entry: slots of A, B, C (= D). */
void mmp_layout_pair_sizes(int *n_a, int *n_b, int *n_c, const mmp_layout_doc *doc);

/* ---- analysis ----------------------------------------------------------------------------- */

#define MMP_LAYOUT_MAX_DIFFS 16

typedef struct mmp_layout_frag_report {
    int64_t expected;               /* elements that should be held */
    int64_t covered;                /* of those, held by at least one slot */
    int64_t uncovered;
    int64_t duplicated;             /* elements held by more than one slot */
    int64_t unplaced;               /* slots with row -1 */
    int64_t out_of_range;           /* slots outside the matrix or the documented element set */
    int64_t slots;
    int documented;                 /* a PTX ISA mapping exists for this fragment */
    int64_t differences;            /* slots whose position differs from the documented one */
    uint32_t differing_lanes[4];    /* bit set over lanes 0..127 */
    int n_diffs;                    /* first MMP_LAYOUT_MAX_DIFFS differences */
    struct { int lane, reg, elem, row, col, doc_row, doc_col; } diffs[MMP_LAYOUT_MAX_DIFFS];
} mmp_layout_frag_report;

typedef struct mmp_layout_report {
    int n_frags;
    mmp_layout_frag_report frags[MMP_LAYOUT_MAX_FRAGS];
    int consistent;                 /* every fragment fully covered, no unplaced/out-of-range slot */
    int documented;                 /* a doc entry was found */
    int64_t differences;            /* total over fragments */
} mmp_layout_report;

/* Analyse cap against its documented mapping (looked up by id; none: discovery only). */
mmp_status mmp_layout_analyse(mmp_layout_report *rep, const mmp_layout_capture *cap);
/* "lanes 3, 7" style list of differing lanes into buf. */
char *mmp_layout_lanes_format(char *buf, size_t size, const uint32_t lanes[4]);

/* ---- output ------------------------------------------------------------------------------- */

/* Table (duplicates, differences) and picture of every fragment. */
void mmp_layout_print_text(FILE *out, const mmp_layout_capture *cap, const mmp_layout_report *rep);
/* The matrix with the owning lane in each cell ('.' unheld, '*' after a lane: also held
 * elsewhere) and, below, the register of each cell. */
void mmp_layout_print_picture(FILE *out, const mmp_layout_capture *cap, int frag);

/* ---- typed results (what the run document holds; probes/layout_print.c, probes/results.c) -- */

/* One fragment of a capture: its shape, its analysis, and the picture as grids. */
typedef struct mmp_layout_frag_result {
    mmp_layout_frag frag;           /* name, rows, cols, elems_per_lane, elems_per_reg */
    mmp_layout_frag_report rep;     /* coverage, duplicates, differences from the PTX ISA */
    int32_t *owner;                 /* rows*cols (row-major): first owning lane, -1 nobody; or NULL */
    int32_t *reg;                   /* rows*cols: that owner's register, -1 nobody; or NULL */
} mmp_layout_frag_result;

typedef struct mmp_layout_result {
    char id[96], kind[16];
    char instruction[128];          /* the documented PTX instruction, "" when undocumented */
    char section[96];               /* the PTX ISA section of the documented mapping, or "" */
    char source[256];
    int32_t threads;
    int documented, consistent;
    int64_t differences;
    int n_frags;
    mmp_layout_frag_result frags[MMP_LAYOUT_MAX_FRAGS];
} mmp_layout_result;

typedef struct mmp_layout_results {
    int present;                    /* the group ran */
    char gpu[128], mode[64];        /* mode: "gpu" or "from-capture" */
    int32_t cc;
    mmp_layout_result *items;
    size_t n, cap;
    int32_t n_match, n_differ, n_inconsistent, n_discovered, n_skipped, n_errors;
} mmp_layout_results;

/* "matches-ptx-isa", "differs-from-ptx-isa", "discovered" or "inconsistent". */
const char *mmp_layout_verdict_name(int consistent, int documented, int64_t differences);
/* The typed result of one analysed capture (owner/reg grids malloc'd; free with
 * mmp_layout_result_clear). */
mmp_status mmp_layout_result_fill(mmp_layout_result *out, const mmp_layout_capture *cap,
                                  const mmp_layout_report *rep);
void mmp_layout_result_clear(mmp_layout_result *r);
/* Append *r (its grids move into g; *r is left without them). */
mmp_status mmp_layout_results_add(mmp_layout_results *g, mmp_layout_result *r);

/* ---- GPU captures (probes/layout_capture.cu, probes/sm90a/layout_wgmma.cu) ----------------- */

/* Raw pair probes for an mma.sync doc entry (pairs nA*nB, cmap nC ints; see above).
 * MMP_STATUS_UNSUPPORTED when the binary has no code for it on this device. */
mmp_status mmp_layout_gpu_mma_pairs(int32_t *pairs, int32_t *cmap, const char *id);
/* Memory-anchored captures, by index (0..count-1); id and needs in *id / *min_cc / *only_cc. */
size_t mmp_layout_gpu_mem_count(void);
mmp_status mmp_layout_gpu_mem_info(const char **id, int *min_cc, int *only_cc, size_t i);
mmp_status mmp_layout_gpu_mem_capture(mmp_layout_capture *cap, size_t i);
/* wgmma m64nNk16 f32.f16.f16 accumulator (sm_90a). N in {8, 16, 64, 128, 256}. */
mmp_status mmp_layout_gpu_wgmma(mmp_layout_capture *cap, int n);

/* ---- the probe ---------------------------------------------------------------------------- */

int mmp_probe_layout_run(mmp_layout_results *out, FILE *text, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
