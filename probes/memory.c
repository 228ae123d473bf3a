/* memory.c — bank-conflict and coalescing analysis of warp-level accesses (memory.h).
 *
 * Global sectors come in two figures: the distinct sectors an access touches (ideal, and the
 * bytes-used efficiency), and, for cp.async, the sectors as the H200's L1TEX counts them: once per
 * shared-write wavefront, the wavefronts formed greedily in lane order with at most one 32-byte
 * shared chunk per slot (chunk mod 4) — our measured finding (memory.h, results/h200/README.md),
 * which turns bf16_mma_padded's 512 into the measured 640 and fp16_ptx_mma's into 608. */
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/memory.h"

/* Lanes [first, first+count) form one phase: count the distinct words each bank serves. */
static int phase_wavefronts(const mmp_warp_access *a, const int *lanes, int nl, int32_t *bank_words)
{
    uint64_t words[32 * 4];
    int nw = 0;
    for (int i = 0; i < nl; i++) {
        int lane = lanes[i];
        int span = a->bytes;
        for (int b = 0; b < span; b += 4) {
            uint64_t w = (a->addr[lane] + (uint64_t)b) / 4;
            int seen = 0;
            for (int q = 0; q < nw; q++)
                if (words[q] == w) { seen = 1; break; }
            if (!seen && nw < (int)(sizeof words / sizeof words[0])) words[nw++] = w;
        }
    }
    int per_bank[32] = {0};
    for (int q = 0; q < nw; q++) per_bank[words[q] % 32]++;
    int worst = 0;
    for (int b = 0; b < 32; b++) {
        if (per_bank[b] > worst) worst = per_bank[b];
        bank_words[b] += per_bank[b];
    }
    return worst;
}

mmp_status mmp_memory_smem_cost(mmp_smem_cost *out, const mmp_warp_access *a)
{
    if (!out || !a) return MMP_ERR(MMP_STATUS_INVALID, "memory: NULL argument");
    memset(out, 0, sizeof *out);
    int lanes[32], nl;
    if (a->kind == MMP_ACCESS_LDSM || a->kind == MMP_ACCESS_LDSM_T || a->kind == MMP_ACCESS_STSM) {
        if (a->matrices != 1 && a->matrices != 2 && a->matrices != 4)
            return MMP_ERR(MMP_STATUS_INVALID, "memory: ldmatrix with %d matrices", (int)a->matrices);
        mmp_warp_access rows = *a;
        rows.bytes = 16;
        for (int mtx = 0; mtx < a->matrices; mtx++) {
            nl = 0;
            for (int l = mtx * 8; l < mtx * 8 + 8; l++) lanes[nl++] = l;
            int w = phase_wavefronts(&rows, lanes, nl, out->bank_words);
            out->phases++;
            out->wavefronts += w;
            if (w > out->ways) out->ways = w;
        }
        return MMP_STATUS_OK;
    }
    if (a->kind == MMP_ACCESS_LDG) return MMP_ERR(MMP_STATUS_INVALID, "memory: a global load has no bank cost");
    if (a->bytes != 4 && a->bytes != 8 && a->bytes != 16 && a->bytes != 1 && a->bytes != 2)
        return MMP_ERR(MMP_STATUS_INVALID, "memory: %d-byte shared access", (int)a->bytes);
    int per_phase = a->bytes <= 4 ? 32 : (a->bytes == 8 ? 16 : 8);
    mmp_warp_access w4 = *a;
    if (w4.bytes < 4) w4.bytes = 4; /* sub-word accesses occupy their word */
    for (int p = 0; p < 32; p += per_phase) {
        nl = 0;
        for (int l = p; l < p + per_phase; l++)
            if (a->active & (1u << l)) lanes[nl++] = l;
        if (!nl) continue;
        if (w4.bytes == 4 && a->bytes < 4)
            for (int i = 0; i < nl; i++) w4.addr[lanes[i]] = a->addr[lanes[i]] & ~3ull;
        int w = phase_wavefronts(&w4, lanes, nl, out->bank_words);
        out->phases++;
        out->wavefronts += w;
        if (w > out->ways) out->ways = w;
    }
    return MMP_STATUS_OK;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The 32-byte shared chunks lane l writes (at most 2 for <= 16 bytes). */
static int lane_chunks(uint64_t chunk[2], const mmp_warp_access *a, int l)
{
    chunk[0] = a->addr[l] / 32;
    chunk[1] = (a->addr[l] + (uint64_t)a->bytes - 1) / 32;
    return chunk[1] == chunk[0] ? 1 : 2;
}

/* Distinct global sectors of the lanes in mask. */
static int mask_sectors(const mmp_warp_access *a, uint32_t mask)
{
    uint64_t sec[64];
    int ns = 0;
    for (int l = 0; l < 32; l++) {
        if (!(mask & (1u << l))) continue;
        for (uint64_t s = a->gaddr[l] / 32; s <= (a->gaddr[l] + (uint64_t)a->bytes - 1) / 32; s++) {
            int seen = 0;
            for (int q = 0; q < ns; q++)
                if (sec[q] == s) { seen = 1; break; }
            if (!seen) sec[ns++] = s;
        }
    }
    return ns;
}

/* The cp.async sector rule of memory.h: per phase, wavefronts formed greedily in lane order, each
 * holding at most one 32-byte shared chunk per slot (chunk mod 4); each wavefront counts the
 * distinct global sectors of its own lanes. */
mmp_status mmp_memory_ldgsts_sectors(int32_t *sectors, int32_t *wavefronts, const mmp_warp_access *a)
{
    if (!sectors || !wavefronts || !a) return MMP_ERR(MMP_STATUS_INVALID, "memory: NULL argument");
    if (a->kind != MMP_ACCESS_CP_ASYNC) return MMP_ERR(MMP_STATUS_INVALID, "memory: not a cp.async access");
    if (a->bytes != 4 && a->bytes != 8 && a->bytes != 16)
        return MMP_ERR(MMP_STATUS_INVALID, "memory: %d-byte cp.async (4, 8 or 16)", (int)a->bytes);
    const int per_phase = a->bytes == 4 ? 32 : (a->bytes == 8 ? 16 : 8);
    *sectors = 0;
    *wavefronts = 0;
    for (int p = 0; p < 32; p += per_phase) {
        uint32_t left = 0;
        for (int l = p; l < p + per_phase; l++) left |= a->active & (1u << l);
        while (left) {
            uint64_t slot_chunk[4];
            int slot_used[4] = {0, 0, 0, 0};
            uint32_t take = 0;
            for (int l = p; l < p + per_phase; l++) {
                if (!(left & (1u << l))) continue;
                uint64_t ch[2];
                int nc = lane_chunks(ch, a, l), ok = 1;
                for (int c = 0; c < nc; c++)
                    if (slot_used[ch[c] % 4] && slot_chunk[ch[c] % 4] != ch[c]) ok = 0;
                if (!ok) continue;
                for (int c = 0; c < nc; c++) { slot_used[ch[c] % 4] = 1; slot_chunk[ch[c] % 4] = ch[c]; }
                take |= 1u << l;
            }
            *sectors += mask_sectors(a, take);
            (*wavefronts)++;
            left &= ~take;
        }
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_memory_gmem_cost(mmp_gmem_cost *out, const mmp_warp_access *a)
{
    if (!out || !a) return MMP_ERR(MMP_STATUS_INVALID, "memory: NULL argument");
    if (a->bytes <= 0 || a->bytes > 16) return MMP_ERR(MMP_STATUS_INVALID, "memory: %d-byte global access", (int)a->bytes);
    const uint64_t *src = a->kind == MMP_ACCESS_CP_ASYNC ? a->gaddr : a->addr;
    uint64_t bytes[32 * 16];
    int nb = 0;
    for (int l = 0; l < 32; l++)
        if (a->active & (1u << l))
            for (int b = 0; b < a->bytes; b++) bytes[nb++] = src[l] + (uint64_t)b;
    qsort(bytes, (size_t)nb, sizeof bytes[0], cmp_u64);
    int64_t distinct = 0, sectors = 0;
    uint64_t last_byte = ~0ull, last_sector = ~0ull;
    for (int i = 0; i < nb; i++) {
        if (bytes[i] != last_byte) { distinct++; last_byte = bytes[i]; }
        if (bytes[i] / 32 != last_sector) { sectors++; last_sector = bytes[i] / 32; }
    }
    out->sectors = (int32_t)sectors;
    out->bytes = distinct;
    out->ideal = (int32_t)((distinct + 31) / 32);
    out->l1tex_sectors = out->sectors;
    out->ldgsts_wavefronts = 0;
    if (a->kind == MMP_ACCESS_CP_ASYNC)
        return mmp_memory_ldgsts_sectors(&out->l1tex_sectors, &out->ldgsts_wavefronts, a);
    return MMP_STATUS_OK;
}

/* The access site of a label: the label less a trailing " k<step>" (one site per instruction
 * whatever the K sub-step it loads). */
static size_t site_len(const char *label)
{
    size_t n = strlen(label), e = n;
    while (e > 0 && label[e - 1] >= '0' && label[e - 1] <= '9') e--;
    if (e < n && e >= 2 && label[e - 1] == 'k' && label[e - 2] == ' ') return e - 2;
    return n;
}

/* Keep a's request when it is its site's worst so far (a new site while there is room). */
static void keep_request(mmp_memory_report *out, const mmp_warp_access *a, int warp, const mmp_smem_cost *c)
{
    const char *label = a->label ? a->label : "?";
    size_t len = site_len(label);
    int s = 0;
    while (s < out->n_requests && !(strlen(out->requests[s].label) == len && !strncmp(out->requests[s].label, label, len)))
        s++;
    if (s == MMP_MEMORY_MAX_SITES || (s < out->n_requests && c->wavefronts <= out->requests[s].wavefronts)) return;
    mmp_memory_request q;
    if (mmp_memory_request_make(&q, a, warp, c) != MMP_STATUS_OK) return;
    snprintf(q.label, sizeof q.label, "%.*s", (int)(len < sizeof q.label ? len : sizeof q.label - 1), label);
    out->requests[s] = q;
    if (s == out->n_requests) out->n_requests++;
}

mmp_status mmp_memory_analyse(mmp_memory_report *out, const mmp_kernel_memmap *map,
                              const mmp_memmap_shape *shape, int kstep)
{
    if (!out || !map || !shape || !map->enumerate) return MMP_ERR(MMP_STATUS_INVALID, "memory: NULL map");
    memset(out, 0, sizeof *out);
    snprintf(out->kernel, sizeof out->kernel, "%s", map->kernel);
    out->worst_gmem_efficiency = 1.0;
    out->smem_bytes_per_stage = map->smem_bytes_per_stage;
    out->smem_bytes_total = map->smem_bytes_total;
    out->stages = map->stages;
    out->ctas_per_sm_expected = map->ctas_per_sm_expected;
    mmp_warp_access *acc = malloc(sizeof *acc * MMP_MEMORY_MAX_ACCESSES);
    if (!acc) return MMP_ERR(MMP_STATUS_NO_MEMORY, "memory: out of host memory");
    for (int w = 0; w < map->warps_per_cta; w++) {
        int n = map->enumerate(acc, MMP_MEMORY_MAX_ACCESSES, shape, w, kstep);
        if (n < 0) {
            free(acc);
            return MMP_ERR(MMP_STATUS_INVALID, "memory: %s's map failed for warp %d", map->kernel, w);
        }
        out->warps++;
        out->accesses += n;
        for (int i = 0; i < n; i++) {
            const mmp_warp_access *a = &acc[i];
            if (a->kind == MMP_ACCESS_LDG || a->kind == MMP_ACCESS_CP_ASYNC) {
                mmp_gmem_cost g;
                if (mmp_memory_gmem_cost(&g, a) == MMP_STATUS_OK) {
                    out->gmem_sectors += g.sectors;
                    out->gmem_l1tex_sectors += g.l1tex_sectors;
                    out->gmem_ideal += g.ideal;
                    out->gmem_bytes += g.bytes;
                    double eff = g.sectors ? (double)g.bytes / (32.0 * g.sectors) : 1.0;
                    if (eff < out->worst_gmem_efficiency) {
                        out->worst_gmem_efficiency = eff;
                        snprintf(out->worst_gmem_label, sizeof out->worst_gmem_label, "%s", a->label ? a->label : "?");
                    }
                }
            }
            if (a->kind == MMP_ACCESS_LDG) continue;
            mmp_smem_cost c;
            if (mmp_memory_smem_cost(&c, a) != MMP_STATUS_OK) continue;
            int is_store = a->kind == MMP_ACCESS_STS || a->kind == MMP_ACCESS_CP_ASYNC || a->kind == MMP_ACCESS_STSM;
            out->smem_wavefronts += c.wavefronts;
            out->smem_ideal += c.phases;
            if (is_store) { out->smem_st_wavefronts += c.wavefronts; out->smem_st_ideal += c.phases; }
            else { out->smem_ld_wavefronts += c.wavefronts; out->smem_ld_ideal += c.phases; }
            for (int b = 0; b < 32; b++) out->bank_words[b] += c.bank_words[b];
            keep_request(out, a, w, &c);
            if (c.ways > out->worst_ways) {
                out->worst_ways = c.ways;
                snprintf(out->worst_label, sizeof out->worst_label, "%s", a->label ? a->label : "?");
            }
        }
    }
    free(acc);
    out->gmem_efficiency = out->gmem_sectors ? (double)out->gmem_bytes / (32.0 * (double)out->gmem_sectors) : 1.0;
    return MMP_STATUS_OK;
}

void mmp_memory_print(FILE *out, const mmp_memory_report *r)
{
    fprintf(out, "%s: %d warps, %d warp accesses per K step\n", r->kernel, r->warps, r->accesses);
    fprintf(out, "  shared: %lld wavefronts (ideal %lld; loads %lld/%lld, stores %lld/%lld), worst %d-way (%s)\n",
            (long long)r->smem_wavefronts, (long long)r->smem_ideal, (long long)r->smem_ld_wavefronts,
            (long long)r->smem_ld_ideal, (long long)r->smem_st_wavefronts, (long long)r->smem_st_ideal,
            r->worst_ways, r->worst_label[0] ? r->worst_label : "-");
    fprintf(out, "  global: %lld sectors (ideal %lld), %.1f%% of fetched bytes used, worst %.1f%% (%s)\n",
            (long long)r->gmem_sectors, (long long)r->gmem_ideal, 100.0 * r->gmem_efficiency,
            100.0 * r->worst_gmem_efficiency, r->worst_gmem_label[0] ? r->worst_gmem_label : "-");
    if (r->gmem_l1tex_sectors != r->gmem_sectors)
        fprintf(out, "  global sectors as L1TEX counts cp.async (per shared-write wavefront): %lld\n",
                (long long)r->gmem_l1tex_sectors);
    int64_t mx = 1;
    for (int b = 0; b < 32; b++) if (r->bank_words[b] > mx) mx = r->bank_words[b];
    fprintf(out, "  bank map (words per bank, one K step):\n");
    for (int level = 4; level >= 1; level--) {
        fprintf(out, "   ");
        for (int b = 0; b < 32; b++) fputc(r->bank_words[b] * 4 >= mx * level ? '#' : ' ', out);
        fputc('\n', out);
    }
    fprintf(out, "   ");
    for (int b = 0; b < 32; b++) fputc("0123456789abcdefghijklmnopqrstuv"[b], out);
    fputc('\n', out);
    /* the worst request of the worst site: which lanes meet in which bank, wavefront by wavefront */
    int worst = -1;
    for (int s = 0; s < r->n_requests && s < MMP_MEMORY_MAX_SITES; s++)
        if (worst < 0 || r->requests[s].ways > r->requests[worst].ways) worst = s;
    if (worst >= 0) mmp_memory_request_print(out, &r->requests[worst]);
}
