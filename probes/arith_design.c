/* arith_design.c — the inputs that isolate each feature of an arithmetic probe (Fasi et al. 2021; Khattak & Mikaitis 2025). Each family is a probe name:
 *
 *   anchor  an anchor 1.0 (as c, or as product 0 with c = 0) plus one product t = +-2^-j or
 *           +-3*2^-j: which t change the output gives the significand bits kept, the extra
 *           alignment bits (t below fp32's last bit), the rounding of aligned terms for each
 *           sign (negative t beyond every kept bit), and the output rounding (3*2^-j near a tie);
 *   block   products 0..i-1 = s = 2^-(24+E) (lost when aligned with 1 in one block, E = any
 *           extra bits up to 8), product i = 1, product i+1 = -1, c = 0: the output is 0 while
 *           the small terms share a block with the 1 and exactly their sum once they are summed
 *           in an earlier block, so the first i with a non-zero output is the block size; the
 *           output for every i also checks the chaining order (sequential) of the blocks;
 *   floor   c = 0 and one or two tiny products (1+2^-p)*2^-m: bits lost below the exponent floor;
 *   subnorm subnormal inputs (products of a subnormal and 1) and subnormal outputs;
 *   special NaN, Inf*0, +Inf with -Inf, Inf with finite, -0 products and c = -0;
 *   chain   (chains of instructions over K: wgmma .chain4/.promote4) anchor A = 2^12 in the first
 *           instruction and t = A*2^-j in the last product: the bits the running sum keeps
 *           across instructions, in the accumulator (scale-d = 1) or promoted to fp32;
 *   random  random values (exponents within +-8), then random bit patterns of the input format
 *           (including NaN/Inf/subnormals) with random fp32 c.
 * Integer instructions (s8/u8/s4, +-satfinite) have their own families: probes/arith_int.c.
 * The instruction table is probes/arith_table.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/probe.h"
#include "arith_internal.h"

/* Input formats: precision (bits incl. the implicit one), emin, largest finite, storage bits. */
typedef struct in_fmt {
    mmp_format f;
    int prec, emin, bits, ebits;
    double max;
} in_fmt;

static const in_fmt in_fmts[] = {
    {MMP_FORMAT_FP16, 11, -14, 16, 5, 65504.0},
    {MMP_FORMAT_BF16, 8, -126, 16, 8, 3.3895313892515355e38},
    {MMP_FORMAT_TF32, 11, -126, 19, 8, 3.4011621342146535e38},
    {MMP_FORMAT_E4M3, 4, -6, 8, 4, 448.0},
    {MMP_FORMAT_E5M2, 3, -14, 8, 5, 57344.0},
};

static const in_fmt *in_fmt_of(mmp_format f)
{
    for (size_t i = 0; i < sizeof in_fmts / sizeof in_fmts[0]; i++)
        if (in_fmts[i].f == f) return &in_fmts[i];
    return NULL;
}

static int representable(double x, const in_fmt *F)
{
    if (x == 0.0 || isnan(x)) return 1;
    if (isinf(x)) return F->f != MMP_FORMAT_E4M3;
    if (fabs(x) > F->max) return 0;
    int e = ilogb(x);
    int lsb = (e < F->emin ? F->emin : e) - (F->prec - 1);   /* exponent of the last bit */
    double m = ldexp(fabs(x), -lsb);
    return m == floor(m);
}

/* Split the product value v into a*b, both exact in the input format; 0 if impossible. */
static int split_product(double *a, double *b, double v, const in_fmt *F)
{
    if (v == 0.0) { *a = 0.0; *b = 0.0; return 1; }
    int e = ilogb(v);
    double m = ldexp(v, -e);               /* [1,2), carries the sign */
    /* the most balanced split first: ea = e/2, then outward (|ea - (e - ea)| grows with d) */
    int h = e >= 0 ? e / 2 : -((-e + 1) / 2);
    for (int d = 0; d <= 330; d++)
        for (int side = 0; side < 2; side++) {
            int ea = side ? h - d : h + d;
            if ((side && d == 0) || ea < -160 || ea > 160) continue;
            double x = ldexp(m, ea), y = ldexp(1.0, e - ea);
            if (representable(x, F) && representable(y, F)) { *a = x; *b = y; return 1; }
        }
    return 0;
}

/* Decode a random bit pattern of the input format (sign, exponent, fraction). */
static double decode_bits(uint32_t u, const in_fmt *F)
{
    int fb = F->prec - 1, eb = F->ebits;
    uint32_t frac = u & ((1u << fb) - 1), ex = (u >> fb) & ((1u << eb) - 1), sgn = (u >> (fb + eb)) & 1;
    int bias = (1 << (eb - 1)) - 1;
    double v;
    if (F->f == MMP_FORMAT_E4M3) {
        if (ex == 15 && frac == 7) return NAN;
    } else if (ex == (1u << eb) - 1) {
        v = frac ? NAN : INFINITY;
        return sgn ? -v : v;
    }
    if (ex == 0) v = ldexp((double)frac, 1 - bias - fb);
    else v = ldexp((double)(frac | (1u << fb)), (int)ex - bias - fb);
    return sgn ? -v : v;
}

typedef struct builder {
    mmp_capture *cap;
    const in_fmt *F;
    double *a, *b;
} builder;

static mmp_status add_vec(builder *B, const char *probe, double c)
{
    uint32_t a[256], b[256];
    for (int j = 0; j < B->cap->k; j++) {
        a[j] = mmp_probe_bits(B->a[j]);
        b[j] = mmp_probe_bits(B->b[j]);
        /* keep signed zeros and NaN payload-free */
        if (B->a[j] == 0.0 && signbit(B->a[j])) a[j] = 0x80000000u;
        if (B->b[j] == 0.0 && signbit(B->b[j])) b[j] = 0x80000000u;
    }
    uint32_t cb = c == 0.0 && signbit(c) ? 0x80000000u : mmp_probe_bits(c);
    return mmp_capture_add(B->cap, probe, a, b, cb, 0);
}

static void zero(builder *B)
{
    for (int j = 0; j < B->cap->k; j++) B->a[j] = B->b[j] = 0.0;
}

/* Set product j to v; 0 if v cannot be written as a product of two inputs. */
static int put(builder *B, int j, double v)
{
    return split_product(&B->a[j], &B->b[j], v, B->F);
}

static mmp_status design_anchor(builder *B)
{
    int k = B->cap->k;
    for (int anchor_c = 0; anchor_c <= 1; anchor_c++)
        for (int j = 1; j <= 40; j++)
            for (int form = 0; form < 4; form++) {
                double t = (form & 1 ? 3.0 : 1.0) * ldexp(1.0, -j) * (form & 2 ? -1.0 : 1.0);
                zero(B);
                double c = anchor_c ? 1.0 : 0.0;
                if (!anchor_c && !put(B, 0, 1.0)) continue;
                if (k < 2 || !put(B, 1, t)) continue;
                MMP_TRY(add_vec(B, "anchor", c));
                /* with a half-ulp tie h of the output beside the anchor, t decides the
                 * rounding of a nearest-rounded output: the extra bits show through fp16 */
                if (k >= 3 && put(B, 2, ldexp(1.0, -(B->cap->out_format == MMP_FORMAT_FP16 ? 11 : 24))))
                    MMP_TRY(add_vec(B, "anchor", c));
            }
    return MMP_STATUS_OK;
}

static mmp_status design_block(builder *B)
{
    /* s = 2^-(24+e) (fp32 scale, e up to 8 extra bits) and 2^-(14+e) (FP8 narrow scale) */
    int k = B->cap->k;
    for (int scale = 0; scale < 2; scale++)
        for (int e = 0; e <= 8; e++) {
            double s = ldexp(1.0, -((scale ? 14 : 24) + e));
            /* i up to 66: enough to tell every block size the analysis tries (<= 64) */
            for (int i = 1; i + 1 < k && i <= 66; i++) {
                zero(B);
                int ok = put(B, i, 1.0) && put(B, i + 1, -1.0);
                for (int j = 0; j < i && ok; j++) ok = put(B, j, s);
                if (ok) MMP_TRY(add_vec(B, "block", 0.0));
            }
        }
    return MMP_STATUS_OK;
}

static mmp_status design_floor(builder *B)
{
    int k = B->cap->k;
    for (int m = 10; m <= 160; m++)
        for (int p = 1; p <= 8; p++) {
            zero(B);
            double v = (1.0 + ldexp(1.0, -p)) * ldexp(1.0, -m);
            if (!put(B, 0, v)) continue;
            MMP_TRY(add_vec(B, "floor", 0.0));
            if (k >= 2 && put(B, 1, ldexp(1.0, -m - p - 1))) MMP_TRY(add_vec(B, "floor", 0.0));
        }
    return MMP_STATUS_OK;
}

static mmp_status design_subnormal(builder *B)
{
    const in_fmt *F = B->F;
    double sub = ldexp(1.0, F->emin - (F->prec - 1));   /* smallest subnormal input */
    for (int mult = 1; mult <= 3; mult += 2)
        for (int cexp = -1; cexp <= 1; cexp++) {
            /* subnormal input times 1, with c = 0 or a small c */
            zero(B);
            B->a[0] = sub * mult;
            B->b[0] = 1.0;
            double c = cexp < 0 ? 0.0 : ldexp(1.0, F->emin + cexp);
            MMP_TRY(add_vec(B, "subnorm", c));
        }
    /* subnormal fp32 output: tiny products (bf16/tf32 reach it; fp16 does not) */
    for (int m = 120; m <= 150; m++) {
        zero(B);
        if (!put(B, 0, ldexp(1.5, -m))) continue;
        MMP_TRY(add_vec(B, "subnorm", 0.0));
        MMP_TRY(add_vec(B, "subnorm", ldexp(1.0, -149)));  /* c: fp32's smallest subnormal */
    }
    return MMP_STATUS_OK;
}

static mmp_status design_special(builder *B)
{
    int k = B->cap->k;
    double inf = B->F->f == MMP_FORMAT_E4M3 ? NAN : INFINITY;  /* e4m3 has no Inf */
    const double cs[] = {0.0, -0.0, 1.0, INFINITY, -INFINITY, NAN};
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
        for (int kind = 0; kind < 7; kind++) {
            zero(B);
            switch (kind) {
            case 0: break;                                        /* all +0 products */
            case 1: B->a[0] = -0.0; B->b[0] = 1.0; break;         /* a -0 product */
            case 2: B->a[0] = NAN; B->b[0] = 1.0; break;
            case 3: B->a[0] = inf; B->b[0] = 0.0; break;          /* Inf*0 */
            case 4: B->a[0] = inf; B->b[0] = 1.0; if (k > 1) { B->a[1] = -inf; B->b[1] = 1.0; } break;
            case 5: B->a[0] = inf; B->b[0] = -1.0; if (k > 1) { B->a[1] = 1.0; B->b[1] = 1.0; } break;
            case 6: B->a[0] = 1.0; B->b[0] = 1.0; if (k > 1) { B->a[1] = -1.0; B->b[1] = 1.0; } break;
            }
            MMP_TRY(add_vec(B, "special", cs[ci]));
        }
    return MMP_STATUS_OK;
}

/* fp16 accumulator (fp16 output): c given as fp32 beyond fp16's range (+-1e5: an infinity once
 * uploaded; 65520: rounds to +Inf under round-to-nearest, 65519 to 65504) against an opposite
 * infinite product, a same-sign one, and finite products. Appended after the random vectors so
 * that their indices stay those of earlier runs (the H200 run's NaN vectors are found by index). */
static mmp_status design_special_fp16_c(builder *B)
{
    if (B->cap->out_format != MMP_FORMAT_FP16) return MMP_STATUS_OK;
    int k = B->cap->k;
    double inf = B->F->f == MMP_FORMAT_E4M3 ? 0.0 : INFINITY;   /* e4m3 has no Inf */
    const double cs[] = {1e5, -1e5, 65520.0, 65519.0};
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
        for (int kind = 0; kind < 4; kind++) {
            zero(B);
            switch (kind) {
            case 0: break;
            case 1: if (inf == 0.0) continue; B->a[0] = -inf; B->b[0] = 1.0; break;
            case 2: if (inf == 0.0) continue; B->a[0] = inf; B->b[0] = 1.0; break;
            case 3: B->a[0] = 1.0; B->b[0] = 1.0; if (k > 1) { B->a[1] = -1.0; B->b[1] = 0.5; } break;
            }
            MMP_TRY(add_vec(B, "special", cs[ci]));
        }
    return MMP_STATUS_OK;
}

/* Chains of instructions over K (promote > 0): anchor A in the first instruction (as c, or as
 * product 0 with c = 0), t = +-A*2^-j in the last product: how many bits of the running sum
 * survive the chain. A = 2^12 keeps t = A*2^-j a product of two inputs up to j = 30 even
 * for FP8 (smallest e4m3 product 2^-18). */
static mmp_status design_chain(builder *B)
{
    int k = B->cap->k;
    double A = ldexp(1.0, 12);
    for (int anchor_c = 0; anchor_c <= 1; anchor_c++)
        for (int j = 1; j <= 30; j++)
            for (int sg = 0; sg < 2; sg++) {
                zero(B);
                if (!anchor_c && !put(B, 0, A)) continue;
                if (!put(B, k - 1, (sg ? -1.0 : 1.0) * ldexp(A, -j))) continue;
                MMP_TRY(add_vec(B, "chain", anchor_c ? A : 0.0));
            }
    return MMP_STATUS_OK;
}

static mmp_status design_random(builder *B, size_t n, uint64_t seed)
{
    const in_fmt *F = B->F;
    mmp_rng_stream s;
    mmp_rng_stream_init(&s, seed, mmp_rng_hash("arith-random"));
    int k = B->cap->k;
    /* every bit pattern of the input format decoded once (2^8 .. 2^19 doubles) */
    double *table = n ? malloc(((size_t)1 << F->bits) * sizeof *table) : NULL;
    for (uint32_t u = 0; table && u < (1u << F->bits); u++) table[u] = decode_bits(u, F);
    for (size_t v = 0; v < n; v++) {
        int bits_mode = v >= n / 2;
        double c;
        for (int j = 0; j < k; j++) {
            for (int side = 0; side < 2; side++) {
                uint64_t r = mmp_rng_stream_u64(&s);
                double x;
                if (bits_mode) {
                    uint32_t pat = (uint32_t)r & ((1u << F->bits) - 1);
                    x = table ? table[pat] : decode_bits(pat, F);
                } else {
                    int e = (int)(r % 17) - 8;
                    uint32_t frac = (uint32_t)(r >> 8) & ((1u << (F->prec - 1)) - 1);
                    /* (1 + frac/2^(prec-1)) * 2^e from the binary64 fields (e in -8..8) */
                    uint64_t u = ((uint64_t)(e + 1023) << 52) | ((uint64_t)frac << (53 - F->prec));
                    memcpy(&x, &u, sizeof x);
                    if (fabs(x) > F->max) x = F->max;
                    /* below the normal range (e4m3: emin -6) the format keeps fewer bits: round
                     * as the upload does, so the capture records what the GPU multiplies */
                    if (!representable(x, F)) x = mmp_format_round(x, F->f, MMP_ROUND_NEAREST_EVEN, 0);
                    if (r >> 63) x = -x;
                }
                (side ? B->b : B->a)[j] = x;
            }
        }
        uint64_t r = mmp_rng_stream_u64(&s);
        if (bits_mode) {
            uint32_t u = (uint32_t)r;
            c = mmp_probe_value(u);
        } else {
            c = ldexp((double)(uint32_t)(r >> 40) / 16777216.0 + 0.5, (int)(r % 9) - 4) * (r & 1 ? -1 : 1);
        }
        mmp_status st = add_vec(B, bits_mode ? "randbits" : "random", c);
        if (st != MMP_STATUS_OK) { free(table); return st; }
    }
    free(table);
    return MMP_STATUS_OK;
}

mmp_status mmp_arith_design(mmp_capture *cap, const mmp_arith_instr *in, size_t n_random,
                            uint64_t seed)
{
    if (!cap || !in) return MMP_ERR(MMP_STATUS_INVALID, "arith design: NULL argument");
    if (mmp_arith_is_integer(in->in_format)) return mmp_arith_design_int(cap, in, n_random, seed);
    const in_fmt *F = in_fmt_of(in->in_format);
    if (!F) return MMP_ERR(MMP_STATUS_UNSUPPORTED, "arith design: %s has no float input format", in->id);
    mmp_capture_init(cap, in->id, in->in_format, in->out_format, in->k);
    double a[256], b[256];
    builder B = {cap, F, a, b};
    mmp_status st;
    if ((st = design_anchor(&B)) != MMP_STATUS_OK || (st = design_block(&B)) != MMP_STATUS_OK ||
        (st = design_floor(&B)) != MMP_STATUS_OK || (st = design_subnormal(&B)) != MMP_STATUS_OK ||
        (st = design_special(&B)) != MMP_STATUS_OK ||
        (in->promote > 0 && (st = design_chain(&B)) != MMP_STATUS_OK) ||
        (st = design_random(&B, n_random, seed)) != MMP_STATUS_OK ||
        (st = design_special_fp16_c(&B)) != MMP_STATUS_OK) {
        mmp_capture_clear(cap);
        return st;
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_arith_model_outputs(mmp_capture *cap, const mmp_model_params *p)
{
    if (mmp_arith_is_integer(cap->in_format)) {
        const mmp_arith_instr *in = mmp_arith_instr_find(cap->instruction);
        return mmp_arith_model_outputs_int(cap, in ? in->satfinite : 0, 0);
    }
    double a[256], b[256];
    for (size_t i = 0; i < cap->count; i++) {
        mmp_capture_vec *v = &cap->v[i];
        for (int j = 0; j < cap->k; j++) {
            a[j] = mmp_probe_value(v->a[j]);
            b[j] = mmp_probe_value(v->b[j]);
        }
        double d;
        MMP_TRY(mmp_model_dot(&d, a, b, mmp_probe_value(v->c), cap->k, p));
        v->d = mmp_probe_bits(d);
    }
    return MMP_STATUS_OK;
}
