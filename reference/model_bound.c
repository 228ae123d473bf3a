/* model_bound.c — the runner's hook from a kernel's precision to a measured accumulator model
 * (see mmp_model_bound_for_kernel in mmaprobe/model.h).
 *
 * The source is a GPU of the parameter table (reference/model_presets.c) or a probe JSON that
 * `mmaprobe probe --json` wrote: its "arith" entries carry "instruction" and a "model" object
 * (the run document's "probes" member, reports/json_probes.c). The reader here reads only that shape:
 * every "instruction" key followed, within the same entry, by a "model" object with integer
 * and short string fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/model.h"

static const char *in_name(mmp_format f)
{
    switch (f) {
    case MMP_FORMAT_FP16: return "f16";
    case MMP_FORMAT_BF16: return "bf16";
    case MMP_FORMAT_TF32: return "tf32";
    case MMP_FORMAT_E4M3: return "e4m3";
    case MMP_FORMAT_E5M2: return "e5m2";
    default: return NULL;
    }
}

/* The instruction ids to try, best first. */
static int candidates(char ids[6][32], mmp_format in, mmp_format out, int wgmma)
{
    const char *i = in_name(in), *o = out == MMP_FORMAT_FP32 ? "f32" : out == MMP_FORMAT_FP16 ? "f16" : NULL;
    if (!i || !o) return 0;
    static const char *order_wgmma[] = {"wgmma.%s.%s", "wgmma.%s.%s.c0", "mma.%s.%s", "wmma.%s.%s"};
    static const char *order_mma[] = {"mma.%s.%s", "wmma.%s.%s", "wgmma.%s.%s", "wgmma.%s.%s.c0"};
    const char **order = wgmma ? order_wgmma : order_mma;
    for (int n = 0; n < 4; n++) snprintf(ids[n], sizeof ids[n], order[n], i, o);
    return 4;
}

static char *read_all(const char *path, mmp_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) { *st = MMP_ERR(MMP_STATUS_IO, "cannot open probe JSON %s: %s", path, strerror(errno)); return NULL; }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *nb = realloc(buf, 2 * cap + 1);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (!buf) { *st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path); return NULL; }
    buf[n] = 0;
    return buf;
}

/* Integer field `key` in [from, to): 1 found. */
static int int_field(int *v, const char *from, const char *to, const char *key)
{
    char pat[48];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(from, pat);
    if (!p || p >= to) return 0;
    char *end;
    long x = strtol(p + strlen(pat), &end, 10);
    if (end == p + strlen(pat)) return 0;
    *v = (int)x;
    return 1;
}

static int str_field(char *v, size_t size, const char *from, const char *to, const char *key)
{
    char pat[48];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(from, pat);
    if (!p || p >= to) return 0;
    p += strlen(pat);
    size_t n = 0;
    while (p[n] && p[n] != '"' && n + 1 < size) n++;
    memcpy(v, p, n);
    v[n] = 0;
    return 1;
}

static mmp_round round_of(const char *s)
{
    return !strcmp(s, "rn") ? MMP_ROUND_NEAREST_EVEN : !strcmp(s, "rd") ? MMP_ROUND_DOWN
         : !strcmp(s, "ru") ? MMP_ROUND_UP : MMP_ROUND_TOWARD_ZERO;
}

/* Drop the blanks after every ':' and ',' outside strings, so the patterns below match the
 * compact and the spaced JSON writers alike. */
static void squeeze(char *t)
{
    char *o = t;
    int in_str = 0;
    for (const char *p = t; *p; p++) {
        *o++ = *p;
        if (in_str) {
            if (*p == '\\' && p[1]) *o++ = *++p;
            else if (*p == '"') in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == ':' || *p == ',') {
            while (p[1] == ' ' || p[1] == '\n' || p[1] == '\t' || p[1] == '\r') p++;
        }
    }
    *o = 0;
}

/* Find instruction id in the probe JSON text and fill p from its model object. */
static mmp_status from_json(mmp_model_params *p, const char *text, const char *path, const char *id,
                            mmp_format in, mmp_format out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"instruction\":\"%s\"", id);
    const char *e = strstr(text, pat);
    if (!e) return MMP_STATUS_UNSUPPORTED;
    const char *next = strstr(e + 1, "\"instruction\":");
    const char *skip = strstr(e, "\"captured\":false");
    if (skip && (!next || skip < next)) return MMP_STATUS_UNSUPPORTED;   /* not captured there */
    const char *m = strstr(e, "\"model\":{");
    if (!m || (next && m > next))
        return MMP_ERR(MMP_STATUS_PARSE, "%s: entry %s has no \"model\" object", path, id);
    const char *end = strchr(m, '}');
    if (!end) return MMP_ERR(MMP_STATUS_PARSE, "%s: entry %s: unterminated model object", path, id);
    mmp_model_params_init(p);
    p->in_format = in;
    p->out_format = out;
    p->c_in_out_format = out == MMP_FORMAT_FP16;
    char r1[8] = "rz", r2[8] = "rz";
    int ok = int_field(&p->block_size, m, end, "block_size") &&
             int_field(&p->extra_align_bits, m, end, "extra_align_bits") &&
             int_field(&p->result_frac_bits, m, end, "result_frac_bits") &&
             str_field(r1, sizeof r1, m, end, "out_round") && str_field(r2, sizeof r2, m, end, "align_round") &&
             int_field(&p->align_floor, m, end, "align_floor");
    if (!ok) return MMP_ERR(MMP_STATUS_PARSE, "%s: entry %s: model lacks block_size/extra_align_bits/"
                            "result_frac_bits/out_round/align_round/align_floor", path, id);
    p->out_round = round_of(r1);
    p->align_round = round_of(r2);
    int_field(&p->in_subnormals, m, end, "in_subnormals");
    int_field(&p->out_subnormals, m, end, "out_subnormals");
    int_field(&p->c_unused, m, end, "c_unused");
    int_field(&p->promote, m, end, "promote");
    int_field(&p->emulate_f16, m, end, "emulate_f16");
    int_field(&p->interleave, m, end, "interleave");
    int_field(&p->c_fadd, m, end, "c_fadd");
    mmp_status st = mmp_model_params_check(p);
    if (st != MMP_STATUS_OK) return MMP_ERR(MMP_STATUS_PARSE, "%s: entry %s: %s", path, id, mmp_error_last());
    return MMP_STATUS_OK;
}

mmp_status mmp_model_bound_for_kernel(mmp_model_params *p, double *u, char *instruction,
                                      size_t instruction_size, const char *source, mmp_format in,
                                      mmp_format out, int wgmma)
{
    if (!p || !source) return MMP_ERR(MMP_STATUS_INVALID, "model bound: NULL argument");
    char ids[6][32];
    int n = candidates(ids, in, out, wgmma);
    if (n == 0)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "no tensor-core accumulator model for inputs %d / "
                       "accumulator %d (floating-point fp16/bf16/tf32/e4m3/e5m2 -> fp32/fp16 only)",
                       (int)in, (int)out);
    const char *dot = strrchr(source, '.');
    int is_json = dot && !strcmp(dot, ".json");
    char *text = NULL;
    mmp_status st = MMP_STATUS_UNSUPPORTED;
    if (is_json && !(text = read_all(source, &st))) return st;
    if (text) squeeze(text);
    int found = -1;
    for (int i = 0; i < n && found < 0; i++) {
        if (text) {
            st = from_json(p, text, source, ids[i], in, out);
            if (st == MMP_STATUS_OK) found = i;
            else if (st != MMP_STATUS_UNSUPPORTED) break;
        } else {
            const mmp_model_preset *row = mmp_model_preset_find(source, ids[i]);
            if (row) { *p = row->params; found = i; st = MMP_STATUS_OK; }
        }
    }
    free(text);
    if (found < 0) {
        if (st != MMP_STATUS_UNSUPPORTED && st != MMP_STATUS_OK) return st;
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s has no accumulator model for %s (nor %s)",
                       source, ids[0], ids[1]);
    }
    if (u) *u = mmp_model_unit_roundoff(p);
    if (instruction && instruction_size) snprintf(instruction, instruction_size, "%s", ids[found]);
    return MMP_STATUS_OK;
}
