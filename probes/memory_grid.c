/* memory_grid.c — one warp's shared-memory request as a lane -> bank grid (memory.h): which
 * lanes each bank serves in each wavefront. The phases and the wavefront rule are those of
 * mmp_memory_smem_cost (memory.c): ldmatrix one phase per 8x8 matrix (8 lanes, 16-byte rows),
 * 16-byte accesses quarter-warps, 8-byte half-warps, 4-byte and narrower the whole warp; within
 * a phase the k-th wavefront serves the k-th distinct word of every bank (in lane order), and
 * lanes reading one word share its cell (a broadcast). So a 4-way conflict shows as 4 rows per
 * phase with the conflicting lanes stacked in one bank column, a conflict-free phase as one row
 * with all 32 banks busy.
 */
#include <string.h>

#include "mmaprobe/memory.h"

static int is_ldsm(int32_t kind)
{
    return kind == MMP_ACCESS_LDSM || kind == MMP_ACCESS_LDSM_T || kind == MMP_ACCESS_STSM;
}

mmp_status mmp_memory_request_make(mmp_memory_request *q, const mmp_warp_access *a, int warp, const mmp_smem_cost *c)
{
    if (!q || !a || !c) return MMP_ERR(MMP_STATUS_INVALID, "memory: NULL argument");
    if (a->kind == MMP_ACCESS_LDG) return MMP_ERR(MMP_STATUS_INVALID, "memory: a global load makes no shared request");
    memset(q, 0, sizeof *q);
    snprintf(q->label, sizeof q->label, "%s", a->label ? a->label : "?");
    q->kind = (int32_t)a->kind;
    q->bytes = is_ldsm(a->kind) ? 16 : a->bytes;
    q->matrices = is_ldsm(a->kind) ? a->matrices : 0;
    q->active = is_ldsm(a->kind) ? (a->matrices >= 4 ? 0xffffffffu : (1u << (8 * a->matrices)) - 1) : a->active;
    q->warp = warp;
    q->wavefronts = c->wavefronts;
    q->ways = c->ways;
    uint64_t lo = UINT64_MAX;
    for (int l = 0; l < 32; l++)
        if ((q->active >> l & 1) && a->addr[l] < lo) lo = a->addr[l];
    if (lo == UINT64_MAX) return MMP_STATUS_OK;
    lo &= ~(uint64_t)127;   /* a 128-byte-aligned base keeps every word's bank */
    for (int l = 0; l < 32; l++) {
        if (!(q->active >> l & 1)) continue;
        uint64_t w = (a->addr[l] - lo) / 4;
        if (w > UINT32_MAX - 4) return MMP_ERR(MMP_STATUS_INVALID, "memory: %s spans more than 16 GiB", q->label);
        q->word[l] = (uint32_t)w;
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_memory_request_grid(mmp_memory_grid *g, const mmp_memory_request *q)
{
    if (!g || !q) return MMP_ERR(MMP_STATUS_INVALID, "memory: NULL argument");
    memset(g, 0, sizeof *g);
    int per_phase = is_ldsm(q->kind) ? 8 : q->bytes <= 4 ? 32 : q->bytes == 8 ? 16 : 8;
    int words = q->bytes <= 4 ? 1 : q->bytes / 4;
    if (q->bytes <= 0 || q->bytes > 16) return MMP_ERR(MMP_STATUS_INVALID, "memory: %d-byte request", (int)q->bytes);
    for (int p = 0; p < 32; p += per_phase) {
        uint32_t seen_word[32 * 4];
        int seen_bank_rank[32 * 4], nseen = 0, per_bank[32] = {0}, deepest = 0, any = 0;
        for (int l = p; l < p + per_phase; l++) {
            if (!(q->active >> l & 1)) continue;
            any = 1;
            for (int t = 0; t < words; t++) {
                uint32_t w = q->word[l] + (uint32_t)t;
                int rank = -1;
                for (int s = 0; s < nseen; s++)
                    if (seen_word[s] == w) { rank = seen_bank_rank[s]; break; }
                if (rank < 0) {
                    rank = per_bank[w % 32]++;
                    seen_word[nseen] = w;
                    seen_bank_rank[nseen++] = rank;
                }
                if (rank + 1 > deepest) deepest = rank + 1;
                if (g->wavefronts + rank >= MMP_MEMORY_GRID_MAX)
                    return MMP_ERR(MMP_STATUS_INVALID, "memory: %s needs more than %d wavefronts", q->label,
                                   MMP_MEMORY_GRID_MAX);
                g->lanes[g->wavefronts + rank][w % 32] |= 1u << l;
            }
        }
        if (!any) continue;
        for (int r = 0; r < deepest; r++) g->phase[g->wavefronts + r] = g->phases;
        g->wavefronts += deepest;
        g->phases++;
    }
    return MMP_STATUS_OK;
}

void mmp_memory_request_print(FILE *out, const mmp_memory_request *q)
{
    mmp_memory_grid g;
    if (mmp_memory_request_grid(&g, q) != MMP_STATUS_OK) {
        fprintf(out, "  %s: no grid (%s)\n", q->label, mmp_error_last());
        return;
    }
    fprintf(out, "  lanes by bank, %s (warp %d): %d wavefronts in %d phases, %d-way\n", q->label, (int)q->warp,
            (int)g.wavefronts, (int)g.phases, (int)q->ways);
    fprintf(out, "   wf ph  ");
    for (int b = 0; b < 32; b++) fputc("0123456789abcdefghijklmnopqrstuv"[b], out);
    fputs("   (bank; cell: lane 0-9a-v, * broadcast, . idle)\n", out);
    for (int r = 0; r < g.wavefronts; r++) {
        fprintf(out, "   %2d %2d  ", r, (int)g.phase[r]);
        for (int b = 0; b < 32; b++) {
            uint32_t m = g.lanes[r][b];
            int lane = 0;
            while (m && !(m >> lane & 1)) lane++;
            fputc(!m ? '.' : (m & (m - 1)) ? '*' : "0123456789abcdefghijklmnopqrstuv"[lane], out);
        }
        fputc('\n', out);
    }
}
