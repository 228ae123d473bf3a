/* vectors.c — loader for the published tensor-core vectors (shared/data/mma-vectors/README.md).
 *
 * a_*, b_*: K space-separated hex fp32 patterns per line; c_*_fp32 and d_*: one 32-character
 * binary fp32 pattern per line (an fp16 output is the fp32 pattern of the same value).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mmaprobe/probe.h"

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

mmp_status mmp_vectors_dir(char *dir, size_t size)
{
    const char *env = getenv("MMP_VECTORS_DIR");
    if (env && *env) {
        if (!is_dir(env))
            return MMP_ERR(MMP_STATUS_IO, "MMP_VECTORS_DIR=%s is not a directory", env);
        snprintf(dir, size, "%s", env);
        return MMP_STATUS_OK;
    }
#ifdef MMP_SOURCE_DIR
    /* the full set: shared/ beside the repository (CI), or inside it (a device copy) */
    snprintf(dir, size, "%s/shared/data/mma-vectors", MMP_SOURCE_DIR);
    if (is_dir(dir)) return MMP_STATUS_OK;
    snprintf(dir, size, "%s/../shared/data/mma-vectors", MMP_SOURCE_DIR);
    if (is_dir(dir)) return MMP_STATUS_OK;
    /* else the committed subset (500 vectors per file, the same licence) */
    snprintf(dir, size, "%s/tests/data/mma-vectors", MMP_SOURCE_DIR);
    if (is_dir(dir)) return MMP_STATUS_OK;
    return MMP_ERR(MMP_STATUS_IO, "no vector data: MMP_VECTORS_DIR unset, %s missing", dir);
#else
    return MMP_ERR(MMP_STATUS_IO, "no vector data: MMP_VECTORS_DIR unset");
#endif
}

void mmp_vectors_clear(mmp_vector_set *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
    free(s->d_bits);
    memset(s, 0, sizeof *s);
}

static double from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* Read a file of hex words; every line must hold the same number of words (*k, set by the
 * first line when 0). Returns the words in *out, the line count in *n. */
static mmp_status read_hex(uint32_t **out, size_t *n, int *k, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 0, len = 0, lines = 0;
    uint32_t *w = NULL;
    char line[1024];
    mmp_status st = MMP_STATUS_OK;
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end;
        int words = 0;
        while (1) {
            while (*p == ' ' || *p == '\t') p++;
            if (!*p || *p == '\n' || *p == '\r') break;
            unsigned long v = strtoul(p, &end, 16);
            if (end == p || v > 0xffffffffUL) {
                st = MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: not a hex fp32 word", path, lines + 1);
                goto done;
            }
            if (len == cap) {
                cap = cap ? 2 * cap : 4096;
                uint32_t *nw = realloc(w, cap * sizeof *w);
                if (!nw) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path); goto done; }
                w = nw;
            }
            w[len++] = (uint32_t)v;
            words++;
            p = end;
        }
        if (words == 0) continue;
        if (*k == 0) *k = words;
        if (words != *k) {
            st = MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: %d words, expected %d", path, lines + 1, words, *k);
            goto done;
        }
        lines++;
    }
done:
    fclose(f);
    if (st != MMP_STATUS_OK) { free(w); return st; }
    *out = w;
    *n = lines;
    return MMP_STATUS_OK;
}

/* One 32-character binary string per line. */
static mmp_status read_bin(uint32_t **out, size_t n, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot open %s: %s", path, strerror(errno));
    uint32_t *w = malloc((n ? n : 1) * sizeof *w);
    if (!w) { fclose(f); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path); }
    char line[128];
    size_t i = 0;
    while (i < n && fgets(line, sizeof line, f)) {
        uint32_t v = 0;
        int bits = 0;
        for (char *p = line; *p && *p != '\n' && *p != '\r'; p++) {
            if (*p != '0' && *p != '1') { bits = -1; break; }
            v = v << 1 | (uint32_t)(*p - '0');
            bits++;
        }
        if (bits == 0) continue;
        if (bits != 32) {
            fclose(f);
            free(w);
            return MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: not a 32-character binary string", path, i + 1);
        }
        w[i++] = v;
    }
    fclose(f);
    if (i != n) {
        free(w);
        return MMP_ERR(MMP_STATUS_PARSE, "%s: %zu lines, expected %zu", path, i, n);
    }
    *out = w;
    return MMP_STATUS_OK;
}

mmp_status mmp_vectors_load(mmp_vector_set *s, const char *dir, const char *gpu, const char *in,
                            mmp_format out)
{
    memset(s, 0, sizeof *s);
    static const struct { const char *name; mmp_format f; } ins[] = {
        {"fp16", MMP_FORMAT_FP16}, {"bf16", MMP_FORMAT_BF16}, {"tf32", MMP_FORMAT_TF32},
        {"E4M3", MMP_FORMAT_E4M3}, {"E5M2", MMP_FORMAT_E5M2}};
    int found = 0;
    for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++)
        if (strcmp(ins[i].name, in) == 0) { s->in_format = ins[i].f; found = 1; }
    if (!found) return MMP_ERR(MMP_STATUS_INVALID, "unknown vector input format %s", in);
    if (out != MMP_FORMAT_FP32 && out != MMP_FORMAT_FP16)
        return MMP_ERR(MMP_STATUS_INVALID, "vector output format must be fp32 or fp16");
    snprintf(s->gpu, sizeof s->gpu, "%s", gpu);
    snprintf(s->in_name, sizeof s->in_name, "%s", in);
    s->out_format = out;
    char path[4096];
    uint32_t *wa = NULL, *wb = NULL, *wc = NULL, *wd = NULL;
    size_t na = 0, nb = 0;
    int ka = 0, kb = 0;
    mmp_status st;
    snprintf(path, sizeof path, "%s/%s/%s/a_%s_%s.txt", dir, gpu, in, gpu, in);
    if ((st = read_hex(&wa, &na, &ka, path)) != MMP_STATUS_OK) goto fail;
    snprintf(path, sizeof path, "%s/%s/%s/b_%s_%s.txt", dir, gpu, in, gpu, in);
    kb = ka;
    if ((st = read_hex(&wb, &nb, &kb, path)) != MMP_STATUS_OK) goto fail;
    if (nb != na) { st = MMP_ERR(MMP_STATUS_PARSE, "%s: %zu vectors, a has %zu", path, nb, na); goto fail; }
    snprintf(path, sizeof path, "%s/%s/%s/c_%s_fp32.txt", dir, gpu, in, gpu);
    if ((st = read_bin(&wc, na, path)) != MMP_STATUS_OK) goto fail;
    snprintf(path, sizeof path, "%s/%s/%s/d_%s_%s.txt", dir, gpu, in, gpu,
             out == MMP_FORMAT_FP16 ? "fp16" : "fp32");
    if ((st = read_bin(&wd, na, path)) != MMP_STATUS_OK) goto fail;
    s->k = ka;
    s->count = na;
    s->a = malloc(na * (size_t)ka * sizeof *s->a);
    s->b = malloc(na * (size_t)ka * sizeof *s->b);
    s->c = malloc(na * sizeof *s->c);
    if (!s->a || !s->b || !s->c) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for vectors"); goto fail; }
    for (size_t i = 0; i < na * (size_t)ka; i++) {
        s->a[i] = from_bits(wa[i]);
        s->b[i] = from_bits(wb[i]);
    }
    for (size_t i = 0; i < na; i++) s->c[i] = from_bits(wc[i]);
    s->d_bits = wd;
    free(wa);
    free(wb);
    free(wc);
    return MMP_STATUS_OK;
fail:
    free(wa);
    free(wb);
    free(wc);
    free(wd);
    mmp_vectors_clear(s);
    return st;
}
