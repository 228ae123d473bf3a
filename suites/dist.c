/* dist.c — input distributions. Every element is a pure function of (seed, case data key,
 * matrix, row, column), drawn through Philox (rng.c), so a failing element can be regenerated
 * from the case ID alone. Values are returned unrounded; the runner stores them in the operand's
 * format with round-to-nearest (saturating for integers).
 *
 *   exact    integers in [-q, q] with K q^2 < 2^(p-1) for the smallest precision p among the
 *            accumulator, the multiply format and a float output: every partial sum is an
 *            integer below 2^p, so exact in the accumulator, whatever the summation order.
 *            When even q = 1 is too big, A is non-zero only every stride-th k (counting back
 *            from k = K-1, so the K tail is always used).
 *   uniform  U[-1, 1) (integers: the format's whole range)
 *   normal   N(0, 1)  (integers: N(0, (max/4)^2), saturated)
 *   wide     random sign and significand, binary exponent uniform from the smallest subnormal
 *            up to a limit that keeps every product and sum finite in the accumulator and output
 *   cancel   pairs a(i,2p) = a(i,2p+1), b(2p+1,j) = -b(2p,j)(1 + small): large terms cancel
 *   onehot   one non-zero (small integer) per row of A and column of B, at one of two k
 *            positions (seeded): a wrong index moves a value to a wrong output position
 *   special  uniform values (|B| <= 1/2) with, per row of A by i % 8: NaN, +Inf, -Inf, -0,
 *            max finite (when it cannot overflow the accumulator), min subnormal, and per column
 *            of B by j % 4: +Inf, NaN; IEEE rules then decide NaN/Inf per output element.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "runner_internal.h"

static const char *const dist_names[MMP_DIST_COUNT_] = {"exact", "uniform", "normal", "wide",
                                                        "cancel", "onehot", "special"};

const char *mmp_dist_name(mmp_dist d) { return (unsigned)d < MMP_DIST_COUNT_ ? dist_names[d] : "?"; }

mmp_status mmp_dist_from_name(mmp_dist *d, const char *name)
{
    for (int i = 0; i < MMP_DIST_COUNT_; i++)
        if (name && !strcasecmp(name, dist_names[i])) { *d = (mmp_dist)i; return MMP_STATUS_OK; }
    return MMP_ERR(MMP_STATUS_INVALID,
                   "unknown distribution '%s' (exact, uniform, normal, wide, cancel, onehot, special)",
                   name ? name : "(null)");
}

uint64_t mmp_case_stream(const mmp_case *c)
{
    /* The ID is kernel/precision/shape[/ld][/layout]/dist/sSEED: hash what is between the
     * kernel name and the seed. */
    const char *s = strchr(c->id, '/');
    const char *e = strrchr(c->id, '/');
    char key[256];
    size_t n = s && e && e > s ? (size_t)(e - s) : strlen(c->id);
    if (n >= sizeof key) n = sizeof key - 1;
    memcpy(key, s && e && e > s ? s : c->id, n);
    key[n] = '\0';
    return mmp_rng_hash(key);
}

static int log2_floor(double x) { int e; frexp(x, &e); return e - 1; }

static int precision_of(mmp_format f)
{
    const mmp_format_info *fi = mmp_format_get_info(f);
    return fi && fi->is_float ? fi->precision : 31;
}

void mmp_dist_ctx_init(mmp_dist_ctx *x, const mmp_case *c)
{
    const mmp_kernel_desc *kd = c->kernel;
    memset(x, 0, sizeof *x);
    x->dist = c->dist;
    x->seed = c->seed;
    x->stream = mmp_case_stream(c);
    x->k = c->k;
    x->fmt[0] = (mmp_format)kd->a_format;
    x->fmt[1] = (mmp_format)kd->b_format;
    x->fmt[2] = (mmp_format)kd->c_format;
    for (int m = 0; m < 3; m++) mmp_format_hd_init(&x->fh[m], x->fmt[m]);
    x->key = mmp_rng_hd_key(x->seed, x->stream);
    const mmp_format_info *acc = mmp_format_get_info((mmp_format)kd->acc_format);
    const mmp_format_info *out = mmp_format_get_info((mmp_format)kd->d_format);
    int acc_float = acc && acc->is_float;

    /* exact: the precision every partial sum must fit in. */
    int p = acc_float ? (kd->acc_bits > 0 ? kd->acc_bits : acc->precision) : 31;
    if (out && out->is_float && out->precision < p) p = out->precision;
    int q_in = 1 << 20;
    for (int m = 0; m < 3; m++) {
        const mmp_format_info *fi = mmp_format_get_info(x->fmt[m]);
        if (!fi) continue;
        int lim = fi->is_float ? (1 << (fi->precision < 20 ? fi->precision : 20)) : (int)fi->max_finite;
        if (lim < q_in) q_in = lim;
    }
    if (kd->mul_format >= 0 && mmp_format_get_info((mmp_format)kd->mul_format)) {
        int pm = precision_of((mmp_format)kd->mul_format);
        if (pm < 20 && (1 << pm) < q_in) q_in = 1 << pm;
    }
    double cap = ldexp(1.0, p - 1) - 1;  /* every |partial sum| (and C) stays below this */
    int64_t q = 1;
    for (int64_t t = 8; t >= 1; t /= 2)
        if (t <= q_in && (double)c->k * t * t + t <= cap) { q = t; break; }
    x->exact_q = q;
    x->exact_stride = 1;
    if ((double)c->k * q * q + q > cap) x->exact_stride = (int64_t)ceil((double)c->k / (cap - 1));

    /* onehot: rows of A and columns of B pick k in a window of 2 placed by the seed. */
    x->onehot_width = c->k < 2 ? c->k : 2;
    uint32_t w[4];
    mmp_rng_philox(w, c->seed, x->stream, ~0ull, 7);
    x->onehot_base = (int64_t)(w[0] % (uint64_t)(c->k - x->onehot_width + 1));

    /* wide: 2 e_max + log2(K) + 2 <= log2(max) of accumulator and output. */
    double lim = acc_float ? acc->max_finite : 0x1p30;
    if (out && out->is_float && out->max_finite < lim) lim = out->max_finite;
    int ehi = (log2_floor(lim) - log2_floor((double)c->k) - 2) / 2;
    for (int m = 0; m < 3; m++) {
        const mmp_format_info *fi = mmp_format_get_info(x->fmt[m]);
        if (!fi || !fi->is_float) continue;
        /* Down to the format's smallest subnormal: products and sums may underflow the
         * accumulator, which the bound allows for (metrics.h: absolute K_eff min_normal(acc)). */
        x->wide_lo[m] = log2_floor(fi->min_subnormal);
        x->wide_hi[m] = ehi < log2_floor(fi->max_finite) ? ehi : log2_floor(fi->max_finite);
        if (m == MMP_MAT_C) x->wide_hi[m] = log2_floor(lim) - 2;
        if (x->wide_hi[m] < x->wide_lo[m]) x->wide_hi[m] = x->wide_lo[m];
    }
    /* special: max finite of A times |b| <= 1/2 plus K terms of size <= 1 must stay finite. */
    const mmp_format_info *fa = mmp_format_get_info(x->fmt[0]);
    x->special_max = fa && acc_float && fa->max_finite * 0.5 + (double)c->k * 2 < lim * 0.5;
}

double mmp_dist_value(const mmp_dist_ctx *x, int mat, int64_t i, int64_t j)
{
    return mmp_dist_hd_value(x, mat, i, j);
}
