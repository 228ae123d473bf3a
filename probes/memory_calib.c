/* memory_calib.c — calibration accesses with known bank-conflict answers (memory.h).
 * Lane l (or ldmatrix row l) reads at byte address l * stride_bytes; expected figures follow
 * from the model in memory.h and are what the GPU measurement must reproduce. */
#include <string.h>

#include "mmaprobe/memory.h"

#define LDS(nm, b, s, ways, wf) {nm, MMP_ACCESS_LDS, b, s, 0, ways, wf}
#define LDSM(nm, s, ways, wf) {nm, MMP_ACCESS_LDSM, 16, s, 4, ways, wf}

static const mmp_memory_calib calibs[] = {
    LDS("lds32_stride4", 4, 4, 1, 1),       /* consecutive words: one wavefront */
    LDS("lds32_broadcast", 4, 0, 1, 1),     /* one word for all lanes: broadcast */
    LDS("lds32_stride8", 4, 8, 2, 2),       /* lanes l and l+16 share a bank */
    LDS("lds32_stride128", 4, 128, 32, 32), /* every lane in bank 0 */
    LDS("lds32_stride132", 4, 132, 1, 1),   /* padded by one word: conflict-free */
    LDS("lds64_stride8", 8, 8, 1, 2),       /* two half-warp phases */
    LDS("lds64_stride16", 8, 16, 2, 4),
    LDS("lds128_stride16", 16, 16, 1, 4),   /* four quarter-warp phases */
    LDS("lds128_stride32", 16, 32, 2, 8),
    LDS("lds128_stride128", 16, 128, 8, 32),
    LDSM("ldsm_x4_row16", 16, 1, 4),        /* 8 rows of 16 B back to back */
    LDSM("ldsm_x4_row64", 64, 4, 16),       /* 32 bf16 per row (the plain BK=32 tile of the bf16_mma family) */
    LDSM("ldsm_x4_row80", 80, 1, 4),        /* the same padded by 16 B */
    LDSM("ldsm_x4_row128", 128, 8, 32),     /* 64 bf16 per row, unpadded */
    LDSM("ldsm_x4_row144", 144, 1, 4),      /* padded by 16 B */
};

const mmp_memory_calib *mmp_memory_calibs(size_t *count)
{
    *count = sizeof calibs / sizeof calibs[0];
    return calibs;
}

void mmp_memory_calib_access(mmp_warp_access *out, const mmp_memory_calib *c)
{
    memset(out, 0, sizeof *out);
    out->label = c->name;
    out->kind = c->kind;
    out->bytes = c->bytes;
    out->matrices = c->matrices;
    out->active = 0xffffffffu;
    out->operand = -1;
    for (int l = 0; l < 32; l++) out->addr[l] = (uint64_t)l * (uint64_t)c->stride_bytes;
}
