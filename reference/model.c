/* model.c — bit-accurate model of one tensor-core dot-product-accumulate (see mmaprobe/model.h).
 *
 * Every quantity is an integer significand times a power of two: a product of two inputs of at
 * most 11 significant bits is a 22-bit integer, so a block's aligned terms fit in int64 with
 * room for the carries of 32 terms. Doubles are used only to hold exact values.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mmaprobe/model.h"

/* Exponent range of the formats the model reads and writes (normal e: emin <= e <= emax for
 * values 1.x * 2^e) and their fraction bits. Local so the model has no other dependency. */
typedef struct fmt_range {
    mmp_format f;
    int emin, emax, frac;
} fmt_range;

static const fmt_range fmt_ranges[] = {
    {MMP_FORMAT_FP32, -126, 127, 23}, {MMP_FORMAT_TF32, -126, 127, 10},
    {MMP_FORMAT_FP16, -14, 15, 10},   {MMP_FORMAT_BF16, -126, 127, 7},
    {MMP_FORMAT_E4M3, -6, 8, 3},      {MMP_FORMAT_E5M2, -14, 15, 2},
};

static const fmt_range *range_of(mmp_format f)
{
    for (size_t i = 0; i < sizeof fmt_ranges / sizeof fmt_ranges[0]; i++)
        if (fmt_ranges[i].f == f) return &fmt_ranges[i];
    return NULL;
}

static const char *fmt_name(mmp_format f)
{
    static const char *names[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

static const char *round_name(mmp_round r)
{
    static const char *names[] = {"rn", "rz", "ru", "rd"};
    return (unsigned)r < 4 ? names[r] : "?";
}

void mmp_model_params_init(mmp_model_params *p)
{
    memset(p, 0, sizeof *p);
    p->in_format = MMP_FORMAT_FP16;
    p->out_format = MMP_FORMAT_FP32;
    p->block_size = 16;
    p->extra_align_bits = 0;
    p->result_frac_bits = 0;
    p->align_round = MMP_ROUND_TOWARD_ZERO;
    p->out_round = MMP_ROUND_TOWARD_ZERO;
    p->align_floor = -133;
    p->in_subnormals = 1;
    p->out_subnormals = 1;
    p->chain = MMP_MODEL_CHAIN_SEQUENTIAL;
}

static int result_frac(const mmp_model_params *p)
{
    return p->result_frac_bits > 0 ? p->result_frac_bits : range_of(p->out_format)->frac;
}

static const char *promote_text(const mmp_model_params *p)
{
    static _Thread_local char buf[32];
    if (p->promote <= 0) return "";
    snprintf(buf, sizeof buf, " promote=%d", p->promote);
    return buf;
}

static const char *il_text(const mmp_model_params *p)
{
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, " interleave=%d", p->interleave);
    return buf;
}

void mmp_model_params_format(char *buf, size_t size, const mmp_model_params *p)
{
    const fmt_range *o = range_of(p->out_format);
    snprintf(buf, size,
             "in=%s out=%s block=%d extra_bits=%d result_frac=%d align=%s out_round=%s floor=%d "
             "in_sub=%d out_sub=%d c_in_out=%d prod_norm=%d%s%s%s%s%s",
             fmt_name(p->in_format), fmt_name(p->out_format),
             p->block_size, p->extra_align_bits, o ? result_frac(p) : -1,
             round_name(p->align_round), round_name(p->out_round), p->align_floor,
             p->in_subnormals, p->out_subnormals, p->c_in_out_format, p->products_normalised,
             p->c_unused ? " c=unused" : "", promote_text(p),
             p->emulate_f16 ? " emulated=f16-hmma" : "", p->interleave ? il_text(p) : "",
             p->c_fadd ? " c=fadd" : "");
}

mmp_status mmp_model_params_check(const mmp_model_params *p)
{
    if (!p) return MMP_ERR(MMP_STATUS_INVALID, "model parameters are NULL");
    const fmt_range *in = range_of(p->in_format);
    if (!in || p->in_format == MMP_FORMAT_FP32)
        return MMP_ERR(MMP_STATUS_INVALID, "model input format %d is not fp16/bf16/tf32/e4m3/e5m2",
                       (int)p->in_format);
    if (p->out_format != MMP_FORMAT_FP32 && p->out_format != MMP_FORMAT_FP16)
        return MMP_ERR(MMP_STATUS_INVALID, "model output format %d is not fp32/fp16", (int)p->out_format);
    if (p->block_size < 1 || p->block_size > 64)
        return MMP_ERR(MMP_STATUS_INVALID, "model block size %d is not in 1..64", p->block_size);
    if (p->extra_align_bits < -20 || p->extra_align_bits > 30)
        return MMP_ERR(MMP_STATUS_INVALID, "model extra alignment bits %d not in -20..30",
                       p->extra_align_bits);
    if (p->result_frac_bits < 0 || p->result_frac_bits > 23)
        return MMP_ERR(MMP_STATUS_INVALID, "model result fraction bits %d not in 0..23",
                       p->result_frac_bits);
    if ((unsigned)p->align_round > MMP_ROUND_DOWN || (unsigned)p->out_round > MMP_ROUND_DOWN)
        return MMP_ERR(MMP_STATUS_INVALID, "model rounding mode out of range");
    if (p->promote < 0 || p->promote > 256)
        return MMP_ERR(MMP_STATUS_INVALID, "model promotion interval %d not in 0..256", p->promote);
    if (p->c_fadd && p->out_format != MMP_FORMAT_FP32)
        return MMP_ERR(MMP_STATUS_INVALID, "model c added by an fp32 FADD needs an fp32 output");
    if (p->emulate_f16 && p->in_format != MMP_FORMAT_E4M3 && p->in_format != MMP_FORMAT_E5M2)
        return MMP_ERR(MMP_STATUS_INVALID, "model f16 emulation needs e4m3/e5m2 inputs, not %s",
                       fmt_name(p->in_format));
    if (p->interleave < 0 || p->interleave > 64)
        return MMP_ERR(MMP_STATUS_INVALID, "model interleave group %d not in 0..64", p->interleave);
    if (p->chain != MMP_MODEL_CHAIN_SEQUENTIAL)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "model chaining order %d is not implemented", (int)p->chain);
    return MMP_STATUS_OK;
}

/* Round the magnitude m * 2^-s (s >= 0) to an integer: mode applied to a value of sign neg. */
static uint64_t round_shift(uint64_t m, int s, int neg, mmp_round mode)
{
    if (s <= 0) return m;
    uint64_t q = s >= 64 ? 0 : m >> s;
    uint64_t rem = s >= 64 ? m : m - (q << s);
    if (rem == 0) return q;
    switch (mode) {
    case MMP_ROUND_TOWARD_ZERO: return q;
    case MMP_ROUND_UP: return neg ? q : q + 1;
    case MMP_ROUND_DOWN: return neg ? q + 1 : q;
    case MMP_ROUND_NEAREST_EVEN:
    default: {
        if (s > 64) return q;  /* rem < 2^64 <= half */
        uint64_t half = (uint64_t)1 << (s - 1);
        if (rem > half || (rem == half && (q & 1))) return q + 1;
        return q;
    }
    }
}

static int bit_length(uint64_t m)
{
    int n = 0;
    while (m) { n++; m >>= 1; }
    return n;
}

/* Round the exact value (-1)^neg * m * 2^e0 to out (frac bits, exponent range of the output
 * format), mode rnd; flush subnormals if asked. */
static double round_result(uint64_t m, int e0, int neg, int frac, const fmt_range *o,
                           mmp_round rnd, int out_subnormals)
{
    if (m == 0) return 0.0;
    int e = e0 + bit_length(m) - 1;           /* exponent of the leading bit */
    int el = e < o->emin ? o->emin : e;       /* subnormal results share emin's quantum */
    int qe = el - frac;                       /* exponent of the last kept bit */
    uint64_t r = qe > e0 ? round_shift(m, qe - e0, neg, rnd) : m;
    int re = qe > e0 ? qe : e0;
    double v = ldexp((double)r, re);
    if (v >= ldexp(1.0, o->emax + 1)) return neg ? -INFINITY : INFINITY;
    if (!out_subnormals && v < ldexp(1.0, o->emin)) v = 0.0;
    return neg ? -v : v;
}

/* A finite non-zero x as sig * 2^(exp - fbits), sig an integer, exp >= emin (subnormals keep emin). */
static void split(uint64_t *sig, int *exp, double x, int emin, int fbits)
{
    /* from the binary64 fields (x is a normal double: every value here is an fp32 or narrower
     * value): |x| = (2^52 + m) * 2^(e-52); sig = |x| * 2^(fbits-E) with E = max(e, emin) is an
     * integer because x is exact in the format, so the shift below drops only zero bits */
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    uint64_t m = (u & 0xfffffffffffffull) | (1ull << 52);
    int E = e < emin ? emin : e;
    *exp = E;
    int sh = 52 - fbits + (E - e);
    *sig = sh >= 64 ? 0 : sh >= 0 ? m >> sh : m << -sh;
}

/* One block: n products plus the accumulator c (exact in the output format). */
static double block(const double *a, const double *b, int n, double c, const mmp_model_params *p,
                    const fmt_range *in, const fmt_range *o)
{
    enum { FB = 23 };                 /* fraction bits of the fp32-based alignment grid */
    uint64_t sig[65];
    int ex[65], neg[65], t = 0;
    double min_in = ldexp(1.0, in->emin), min_out = ldexp(1.0, o->emin);
    if (!p->out_subnormals && fabs(c) < min_out) c = 0.0;
    for (int i = 0; i < n; i++) {
        double x = a[i], y = b[i];
        if (!p->in_subnormals) {
            if (fabs(x) < min_in) x = 0.0;
            if (fabs(y) < min_in) y = 0.0;
        }
        if (x == 0.0 || y == 0.0) continue;
        uint64_t sx, sy;
        int exx, exy;
        split(&sx, &exx, x, in->emin, in->frac);
        split(&sy, &exy, y, in->emin, in->frac);
        /* product significand in [0,4) with 2*frac fraction bits, moved to FB fraction bits */
        uint64_t s = sx * sy;
        int e = exx + exy;
        s <<= FB - 2 * in->frac;
        if (p->products_normalised && s >= ((uint64_t)2 << FB)) {
            /* renormalise; the dropped bit is always 0 for inputs of <= 12 bits */
            s >>= 1;
            e += 1;
        }
        sig[t] = s;
        ex[t] = e;
        neg[t] = (x < 0) != (y < 0);
        t++;
    }
    if (c != 0.0) {
        split(&sig[t], &ex[t], c, -126, FB);
        neg[t] = c < 0;
        t++;
    }
    if (t == 0) return 0.0;
    int emax = p->align_floor;
    for (int i = 0; i < t; i++)
        if (ex[i] > emax) emax = ex[i];
    int ea = p->extra_align_bits;
    int64_t sum = 0;
    for (int i = 0; i < t; i++) {
        uint64_t s = sig[i];
        /* keep FB + ea fraction bits below 2^emax: first to the term's own grid (a negative ea
         * drops low bits of each term, as the narrow FP8 accumulator does), then aligned */
        if (ea >= 0) s <<= ea;
        else s = round_shift(s, -ea, neg[i], p->align_round);
        s = round_shift(s, emax - ex[i], neg[i], p->align_round);
        sum += neg[i] ? -(int64_t)s : (int64_t)s;
    }
    if (sum == 0) return 0.0;
    int sneg = sum < 0;
    uint64_t m = sneg ? (uint64_t)(-sum) : (uint64_t)sum;
    return round_result(m, emax - FB - ea, sneg, result_frac(p), o, p->out_round, p->out_subnormals);
}

/* Round an fp32 value to the output format (nearest-even), the way a C operand is converted. */
static double to_out(double c, const fmt_range *o)
{
    if (!isfinite(c) || c == 0.0) return c;
    uint64_t sig;
    int e;
    split(&sig, &e, c, -126, 23);
    return round_result(sig, e - 23, c < 0, o->frac, o, MMP_ROUND_NEAREST_EVEN, 1);
}

mmp_status mmp_model_dot(double *d, const double *a, const double *b, double c, int k,
                         const mmp_model_params *p)
{
    MMP_TRY(mmp_model_params_check(p));
    if (k < 1) return MMP_ERR(MMP_STATUS_INVALID, "model dot product length %d < 1", k);
    /* emulated FP8: the products are those of the fp16 conversions (same values, fp16's emin) */
    const fmt_range *in = range_of(p->emulate_f16 ? MMP_FORMAT_FP16 : p->in_format);
    const fmt_range *o = range_of(p->out_format);
    if (p->c_unused) c = 0.0;
    /* an accumulator held in the output format (fp16) is converted first: an fp32 c beyond
     * fp16's range arrives as an infinity and meets the products' infinities as one (H200:
     * c = 6.9e34 -> +Inf with a -Inf product gives NaN, not -Inf) */
    if (p->c_in_out_format) c = to_out(c, o);
    /* special values first: NaN wins, then Inf*0, then opposite infinities */
    int pos_inf = 0, neg_inf = 0, nan = isnan(c);
    if (isinf(c)) {
        if (c > 0) pos_inf = 1;
        else neg_inf = 1;
    }
    for (int i = 0; i < k && !nan; i++) {
        if (isnan(a[i]) || isnan(b[i])) nan = 1;
        else if (isinf(a[i]) || isinf(b[i])) {
            if (a[i] == 0.0 || b[i] == 0.0) nan = 1;
            else if ((a[i] < 0) != (b[i] < 0)) neg_inf = 1;
            else pos_inf = 1;
        }
    }
    if (nan || (pos_inf && neg_inf)) { *d = NAN; return MMP_STATUS_OK; }
    if (pos_inf || neg_inf) { *d = pos_inf ? INFINITY : -INFINITY; return MMP_STATUS_OK; }
    if (isinf(c)) { *d = c; return MMP_STATUS_OK; }
    if (p->promote > 0 && p->promote < k && p->out_format == MMP_FORMAT_FP32) {
        /* promotion: each group of `promote` products from a zero accumulator, each group's
         * fp32 result added to the running fp32 sum; (float)(double x + double y) is the
         * correctly rounded fp32 sum of two fp32 values (53 >= 2*24 + 2) */
        for (int g = 0; g < k; g += p->promote) {
            int n = k - g < p->promote ? k - g : p->promote;
            double w = 0.0;
            for (int i = 0; i < n; i += p->block_size) {
                int nb = n - i < p->block_size ? n - i : p->block_size;
                w = block(a + g + i, b + g + i, nb, w, p, in, o);
                if (!isfinite(w)) break;
            }
            c = (double)(float)(c + w);
            if (isnan(c)) break;
        }
        *d = c;
        return MMP_STATUS_OK;
    }
    double pa[256], pb[256];
    if (p->interleave > 0 && k <= 256) {
        /* deal the products to the blocks in groups of `interleave`, round robin */
        int nb = (k + p->block_size - 1) / p->block_size, t = 0;
        for (int blk = 0; blk < nb; blk++)
            for (int g = blk * p->interleave; g < k; g += nb * p->interleave)
                for (int j = g; j < g + p->interleave && j < k; j++) {
                    pa[t] = a[j];
                    pb[t++] = b[j];
                }
        a = pa;
        b = pb;
    }
    double acc = p->c_fadd ? 0.0 : c;
    for (int i = 0; i < k; i += p->block_size) {
        int n = k - i < p->block_size ? k - i : p->block_size;
        acc = block(a + i, b + i, n, acc, p, in, o);
        if (!isfinite(acc)) break;  /* an overflowed block gives the output's infinity */
    }
    /* an emulation's FADD: (float)(x + y) of two fp32 values is their correctly rounded sum */
    if (p->c_fadd) acc = (double)(float)(c + acc);
    *d = acc;
    return MMP_STATUS_OK;
}

/* The low 32 bits of s as a two's-complement value (no implementation-defined conversion). */
static int64_t wrap32(int64_t s)
{
    uint32_t w = (uint32_t)(uint64_t)s;
    return w <= (uint32_t)INT32_MAX ? (int64_t)w : (int64_t)w - ((int64_t)1 << 32);
}

mmp_status mmp_model_int_dot(int32_t *d, const int32_t *a, const int32_t *b, int32_t c, int k,
                             int satfinite, int stepwise)
{
    if (!d || !a || !b) return MMP_ERR(MMP_STATUS_INVALID, "integer model: NULL argument");
    if (k < 1) return MMP_ERR(MMP_STATUS_INVALID, "integer model: K %d < 1", k);
    int64_t s = c;
    for (int i = 0; i < k; i++) {
        s += (int64_t)a[i] * b[i];  /* |a_i b_i| <= 2^16: no int64 overflow for K <= 2^40 */
        if (stepwise && satfinite) s = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s;
        if (stepwise && !satfinite) s = wrap32(s);
    }
    if (satfinite) s = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s;
    *d = (int32_t)wrap32(s);
    return MMP_STATUS_OK;
}

uint32_t mmp_model_fp32_bits(double x)
{
    if (isnan(x)) return 0x7fffffffu;
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

double mmp_model_fp32_value(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return (double)f;
}

int mmp_model_fp32_same(uint32_t x, uint32_t y)
{
    int xn = (x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu);
    int yn = (y & 0x7f800000u) == 0x7f800000u && (y & 0x7fffffu);
    if (xn || yn) return xn && yn;
    return x == y;
}

double mmp_model_unit_roundoff(const mmp_model_params *p)
{
    /* round to nearest loses half an ulp of result_frac_bits, directed modes a whole ulp */
    int f = result_frac(p);
    return p->out_round == MMP_ROUND_NEAREST_EVEN ? ldexp(1.0, -(f + 1)) : ldexp(1.0, -f);
}

double mmp_model_error_bound(const mmp_model_params *p, int k, double s)
{
    /* Per block: the alignment loses < 1 unit of 2^(E-23-extra) per term (b products + the
     * accumulator), E <= exponent of the largest term <= log2(s) + 1 in magnitude terms, so
     * the loss is < (b+1) * 2^-(23+extra) * 2 * s; then the block result is rounded (u).
     * Summed over ceil(K/b) blocks, each bounded by the running magnitude s (first order). */
    double align = (p->block_size + 1) * ldexp(2.0, -(23 + p->extra_align_bits));
    double u = mmp_model_unit_roundoff(p);
    if (p->promote > 0 && p->promote < k) {
        /* promotion: each group of `promote` products is a chain of its own blocks from zero,
         * its error bounded as above by g times the group's own magnitude s_g (sum s_g <= s, so
         * all groups together lose at most g*s); then one fp32 round-to-nearest addition per
         * group, 2^-24 of the running sum (<= s, first order) each */
        int ng = (k + p->promote - 1) / p->promote;
        int nbg = (p->promote + p->block_size - 1) / p->block_size;
        double g = nbg * (align + u) * (1.0 + nbg * (align + u));
        double f = ng * ldexp(1.0, -24);
        return (g + f * (1.0 + g)) * s * (1.0 + f);
    }
    int nb = (k + p->block_size - 1) / p->block_size;
    double chain = nb * (align + u) * (1.0 + nb * (align + u));
    /* c added after the blocks (c_fadd): one more fp32 round-to-nearest of the total (<= s) */
    if (p->c_fadd) return (chain + ldexp(1.0, -24) * (1.0 + chain)) * s;
    return chain * s;
}
