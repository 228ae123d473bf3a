/* arith_int.c — integer tensor-core probes: mma.sync s8/u8 (m16n8k32) and s4 (m16n8k64), with
 * and without .satfinite. What they measure and how the inputs isolate it:
 *
 *   ovf     c = INT32_MAX - m (m = 0, 1, 1000) plus products at the format's largest positive
 *           product (all K, or one product of 1), and the mirror c = INT32_MIN + m with the most
 *           negative product: the exact sum leaves int32, so the output is either the exact sum
 *           modulo 2^32 (wrap) or INT32_MAX / INT32_MIN (clamp);
 *   ovfmid  c = INT32_MAX - m, product 0 = +P and product 1 = -P (and the reverse order, and the
 *           negative mirror): the exact sum is in range, so a wide accumulator clamped once
 *           gives c, while a clamp after each addition loses P - m;
 *   exact   c = 0 and all K products at either extreme: the largest sums the instruction can
 *           make from a zero accumulator are exact;
 *   random  random inputs over the whole format with small c; randbits: random inputs with c
 *           anywhere in int32; randedge: c within K * max|product| of INT32_MAX or INT32_MIN, so
 *           about half of them overflow.
 * Captures store integers as int32 bit patterns (probes/arith_io.c). The model is
 * mmp_model_int_dot (reference/model.c): wrap, clamp once, or clamp at every addition.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/probe.h"
#include "arith_internal.h"

typedef struct int_fmt {
    mmp_format f;
    int lo, hi;                 /* value range */
} int_fmt;

static const int_fmt int_fmts[] = {
    {MMP_FORMAT_INT8, -128, 127}, {MMP_FORMAT_UINT8, 0, 255},
    {MMP_FORMAT_INT4, -8, 7},     {MMP_FORMAT_UINT4, 0, 15},
};

static const int_fmt *int_fmt_of(mmp_format f)
{
    for (size_t i = 0; i < sizeof int_fmts / sizeof int_fmts[0]; i++)
        if (int_fmts[i].f == f) return &int_fmts[i];
    return NULL;
}

static uint32_t w32(int64_t v) { return (uint32_t)(uint64_t)v; }

static int32_t i32(uint32_t w)
{
    return w <= (uint32_t)INT32_MAX ? (int32_t)w : (int32_t)((int64_t)w - ((int64_t)1 << 32));
}

static mmp_status add(mmp_capture *cap, const char *probe, const int *a, const int *b, int64_t c)
{
    uint32_t wa[256], wb[256];
    for (int j = 0; j < cap->k; j++) { wa[j] = w32(a[j]); wb[j] = w32(b[j]); }
    return mmp_capture_add(cap, probe, wa, wb, w32(c), 0);
}

mmp_status mmp_arith_design_int(mmp_capture *cap, const mmp_arith_instr *in, size_t n_random,
                                uint64_t seed)
{
    const int_fmt *F = int_fmt_of(in->in_format);
    if (!F) return MMP_ERR(MMP_STATUS_UNSUPPORTED, "arith design: %s has no integer input format", in->id);
    mmp_capture_init(cap, in->id, in->in_format, MMP_FORMAT_INT32, in->k);
    int k = in->k, a[256], b[256];
    /* the largest positive product and the most negative one (0 for unsigned formats) */
    int pa = F->lo < 0 && F->lo * F->lo > F->hi * F->hi ? F->lo : F->hi;
    int neg_a = F->lo < 0 ? F->lo : 0, neg_b = F->hi;
    static const int64_t ms[] = {0, 1, 1000};
    for (size_t mi = 0; mi < 3; mi++)
        for (int sign = 0; sign < 2; sign++) {
            if (sign && neg_a == 0) continue;
            int64_t c = sign ? (int64_t)INT32_MIN + ms[mi] : (int64_t)INT32_MAX - ms[mi];
            for (int j = 0; j < k; j++) { a[j] = sign ? neg_a : pa; b[j] = sign ? neg_b : pa; }
            MMP_TRY(add(cap, "ovf", a, b, c));
            memset(a, 0, sizeof a);
            memset(b, 0, sizeof b);
            a[0] = sign ? -1 : 1;
            b[0] = 1;
            if (sign && F->lo == 0) continue;
            if (ms[mi] == 0) MMP_TRY(add(cap, "ovf", a, b, c));   /* one step over the edge */
        }
    for (size_t mi = 0; mi < 3; mi++)
        for (int sign = 0; sign < 2; sign++)
            for (int order = 0; order < 2; order++) {
                if (F->lo == 0) continue;   /* unsigned inputs: no negative product */
                int64_t c = sign ? (int64_t)INT32_MIN + ms[mi] : (int64_t)INT32_MAX - ms[mi];
                memset(a, 0, sizeof a);
                memset(b, 0, sizeof b);
                /* +P and -P with P = m*m, m the largest magnitude of both signs (127 for s8,
                 * 7 for s4): toward the edge first (order 0) or away from it first */
                int m = F->hi < -F->lo ? F->hi : -F->lo;
                int neg_first = order ? !sign : sign;
                a[0] = neg_first ? -m : m; b[0] = m;
                a[1] = neg_first ? m : -m; b[1] = m;
                MMP_TRY(add(cap, "ovfmid", a, b, c));
            }
    for (int sign = 0; sign < 2; sign++) {
        if (sign && neg_a == 0) continue;
        for (int j = 0; j < k; j++) { a[j] = sign ? neg_a : pa; b[j] = sign ? neg_b : pa; }
        MMP_TRY(add(cap, "exact", a, b, 0));
    }
    mmp_rng_stream s;
    mmp_rng_stream_init(&s, seed, mmp_rng_hash("arith-int-random"));
    int64_t span = (int64_t)k * (int64_t)(F->lo * F->lo > F->hi * F->hi ? F->lo * F->lo : F->hi * F->hi);
    for (size_t v = 0; v < n_random; v++) {
        int mode = (int)(v % 3);
        for (int j = 0; j < k; j++) {
            a[j] = F->lo + (int)(mmp_rng_stream_u64(&s) % (uint64_t)(F->hi - F->lo + 1));
            b[j] = F->lo + (int)(mmp_rng_stream_u64(&s) % (uint64_t)(F->hi - F->lo + 1));
        }
        uint64_t r = mmp_rng_stream_u64(&s);
        int64_t c;
        const char *name;
        if (mode == 0) { c = (int64_t)(r % (1u << 21)) - (1 << 20); name = "random"; }
        else if (mode == 1) { c = i32((uint32_t)r); name = "randbits"; }
        else {
            int64_t off = (int64_t)((r >> 1) % (uint64_t)(span + 1));
            c = r & 1 ? (int64_t)INT32_MIN + off : (int64_t)INT32_MAX - off;
            name = "randedge";
        }
        MMP_TRY(add(cap, name, a, b, c));
    }
    return MMP_STATUS_OK;
}

static mmp_status model_d(uint32_t *d, const mmp_capture *cap, const mmp_capture_vec *v, int sat,
                          int stepwise)
{
    int32_t a[256], b[256], out;
    for (int j = 0; j < cap->k; j++) { a[j] = i32(v->a[j]); b[j] = i32(v->b[j]); }
    MMP_TRY(mmp_model_int_dot(&out, a, b, i32(v->c), cap->k, sat, stepwise));
    *d = w32(out);
    return MMP_STATUS_OK;
}

mmp_status mmp_arith_model_outputs_int(mmp_capture *cap, int satfinite, int stepwise)
{
    for (size_t i = 0; i < cap->count; i++) MMP_TRY(model_d(&cap->v[i].d, cap, &cap->v[i], satfinite, stepwise));
    return MMP_STATUS_OK;
}

/* Mismatches of the vectors whose probe starts with prefix ("" = all) under a model. */
static size_t bad_of(const mmp_capture *cap, const char *prefix, int sat, int stepwise, size_t *n,
                     size_t *first)
{
    size_t bad = 0, len = strlen(prefix);
    *n = 0;
    for (size_t i = 0; i < cap->count; i++) {
        if (strncmp(cap->v[i].probe, prefix, len)) continue;
        ++*n;
        uint32_t d = 0;
        if (model_d(&d, cap, &cap->v[i], sat, stepwise) != MMP_STATUS_OK || d != cap->v[i].d) {
            if (!bad && first) *first = i;
            bad++;
        }
    }
    return bad;
}

mmp_status mmp_arith_analyse_int(mmp_arith_report *rep, const mmp_capture *cap)
{
    const mmp_arith_instr *in = mmp_arith_instr_find(cap->instruction);
    int documented_sat = in ? in->satfinite : strstr(cap->instruction, "satfinite") != NULL;
    static const int cands[3][2] = {{0, 0}, {1, 0}, {1, 1}};
    size_t best_bad = SIZE_MAX, n;
    int best = 0;
    for (int i = 0; i < 3; i++) {
        size_t bad = bad_of(cap, "", cands[i][0], cands[i][1], &n, NULL);
        if (bad < best_bad) { best_bad = bad; best = i; }
    }
    rep->integer = 1;
    rep->int_saturates = cands[best][0];
    rep->int_stepwise = cands[best][1];
    size_t nov, nmid, nex;
    size_t bov = bad_of(cap, "ovf", rep->int_saturates, rep->int_stepwise, &nov, NULL);
    size_t bmid = bad_of(cap, "ovfmid", rep->int_saturates, rep->int_stepwise, &nmid, NULL);
    size_t bex = bad_of(cap, "exact", rep->int_saturates, rep->int_stepwise, &nex, NULL);
    /* the ovf family alone under the other overflow rule: does the capture separate them? */
    size_t nother, bother = bad_of(cap, "ovf", !rep->int_saturates, 0, &nother, NULL);
    mmp_arith_add_feature(rep, "overflow", bov == 0 && bother > 0,
                          "c = INT32_MAX - m (m = 0, 1, 1000) plus the largest products, and the "
                          "negative mirror: the exact sum leaves int32",
                          "%s (%zu/%zu overflow vectors explained; the other rule explains %zu)",
                          rep->int_saturates ? "saturates: clamped to [INT32_MIN, INT32_MAX]"
                                             : "wraps modulo 2^32 (two's complement)",
                          nov - bov, nov, nother - bother);
    if (rep->int_saturates && nmid == 0)
        mmp_arith_add_feature(rep, "accumulation", 1, "unsigned inputs: no negative product to cancel",
                              "not observable (a per-step clamp cannot differ without a negative product)");
    else if (rep->int_saturates)
        mmp_arith_add_feature(rep, "accumulation", bmid == 0,
                              "c = INT32_MAX - m, products +P then -P (and reversed): the exact sum is "
                              "in range; a clamp after each addition would lose P - m",
                              "%s (%zu/%zu explained)",
                              rep->int_stepwise ? "clamped after each addition" : "exact wide sum, clamped once",
                              nmid - bmid, nmid);
    else if (nmid == 0)
        mmp_arith_add_feature(rep, "accumulation", 1, "unsigned inputs: no negative product to cancel",
                              "not observable (wrap is modular: exact modulo 2^32 in any order)");
    else
        mmp_arith_add_feature(rep, "accumulation", bmid == 0,
                              "c = INT32_MAX - m, products +P then -P: under wrapping every order gives "
                              "the same result (arithmetic modulo 2^32)",
                              "exact modulo 2^32 (%zu/%zu explained)", nmid - bmid, nmid);
    mmp_arith_add_feature(rep, "largest_sums", bex == 0, "c = 0, all K products at the format's extremes",
                          "%s (%zu vectors)", bex == 0 ? "exact" : "NOT exact", nex);
    mmp_arith_add_feature(rep, "ptx_isa_agreement", rep->int_saturates == documented_sat,
                          "PTX ISA: without .satfinite the s32 accumulator wraps; with it the result "
                          "is clamped to the int32 range",
                          "%s (expected %s)", rep->int_saturates == documented_sat ? "as documented" : "DIFFERS",
                          documented_sat ? "clamp" : "wrap");
    size_t first = 0;
    rep->total_mismatches = bad_of(cap, "", rep->int_saturates, rep->int_stepwise, &rep->n_total, &first);
    rep->random_mismatches = bad_of(cap, "rand", rep->int_saturates, rep->int_stepwise, &rep->n_random, NULL);
    if (rep->total_mismatches) {
        uint32_t m = 0;
        model_d(&m, cap, &cap->v[first], rep->int_saturates, rep->int_stepwise);
        snprintf(rep->mismatch_example, sizeof rep->mismatch_example, "vector %zu (%s): model %08x, %s %08x",
                 first, cap->v[first].probe, m, strncmp(cap->origin, "synthetic", 9) ? "hardware" : "capture",
                 cap->v[first].d);
    }
    return MMP_STATUS_OK;
}
