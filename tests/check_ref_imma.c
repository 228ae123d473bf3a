/* check_ref_imma.c — the int8 route of the device reference's version 2 (ref_plan.h, Routes;
 * ref_cuda2_imma.cu), through its host model (ref_v2_host.c: the device's int8 layout, jobs and
 * batches, each int8 GEMM as an exact int64 sum that must fit int32):
 *   - ref_split's slices at 8 bits are integers in [-128, 127] that add back to the value;
 *   - the jobs cover every slice pair of the plan once over all of k, within REF_IMMA_KMAX and
 *     the planes' bounds, at 16-byte offsets;
 *   - every element bit for bit as pure MPFR (and as the certified CPU path) on uniform, wide,
 *     cancelling, special-value, onehot and far-entry data, k not a multiple of 16, alpha and
 *     beta C, with the K' limit forced small (chunks inside a pair, several pairs per GEMM) and
 *     at its real value with K past it (127^2 K overflows int32 without the chunks);
 *   - the same with every square's products by residues (ref_crt.h; check_ref_crt tests its
 *     parts), and with the residues weighed by cost;
 *   - the route: the cost model's choice, MMP_REF_IMMA and mmp_ref_options.imma; the plan on
 *     uniform data (a few slices, exact) and on wide data (a deep triangle, bounded).
 *
 *   build/tests/check_ref_imma            (ctest -L cpu; MMP_SEED=n to reproduce)
 */
#include "tests/check_main.h"

#include <math.h>
#include <string.h>

#include "mmaprobe/format.h"
#include "mmaprobe/reference.h"
#include "reference/ref_v2.h"
#include "tests/lib/ref_testgen.h"

enum { GEN_ONEHOT = GEN_SPECIAL + 1 };   /* one nonzero per row of A and per column of B */

static void onehot_fill(prob *p)
{
    const mmp_gemm *g = &p->g;
    for (int64_t i = 0; i < g->m; i++) {
        int64_t hot = (int64_t)(rnd64() % (uint64_t)g->k);
        for (int64_t k = 0; k < g->k; k++)
            if (k != hot) mmp_format_store(p->a, mmp_gemm_index(g->la, g->lda, i, k), 0.0, g->a, MMP_ROUND_NEAREST_EVEN, 1);
    }
    for (int64_t j = 0; j < g->n; j++) {
        int64_t hot = (int64_t)(rnd64() % (uint64_t)g->k);
        for (int64_t k = 0; k < g->k; k++)
            if (k != hot) mmp_format_store(p->b, mmp_gemm_index(g->lb, g->ldb, k, j), 0.0, g->b, MMP_ROUND_NEAREST_EVEN, 1);
    }
}

/* The host model on the int8 route against pure MPFR and the certified CPU path, every element.
 * crt: mmp_ref_options.crt (2: the pairs only; 3: every square by residues, which must run). */
static void imma_agrees(mmp_format fa, mmp_format fd, int kind, int64_t m, int64_t n, int64_t k, double alpha,
                        double beta, double far, int crt)
{
    prob p;
    mmp_format fc = mmp_format_get_info(fa)->is_float ? MMP_FORMAT_FP32 : MMP_FORMAT_INT32;
    prob_make(&p, fa, fa, fc, fd, m, n, k, (int)(rnd64() % 8), (int)(rnd64() % 2), alpha, beta,
              kind == GEN_ONEHOT ? GEN_RANDOM : (gen_kind)kind);
    if (kind == GEN_ONEHOT) onehot_fill(&p);
    if (far > 0) prob_far(&p, far);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.imma = 1;
    o.crt = crt;
    mmp_ref_result rv, rc, rm;
    mmp_ref_result_init(&rv); mmp_ref_result_init(&rc); mmp_ref_result_init(&rm);
    ck_assert_msg(ref_v2_host_run(&rv, p.a, p.b, p.c, &p.g, &o, 2) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_msg(rv.imma == 1 && rv.slice_bits == REF_IMMA_BETA &&
                      (crt == 3 ? rv.crt > 0 && rv.n_gemms == rv.crt : crt == 2 ? rv.crt == 0 : 1),
                  "%s: route %d, %d bits, %d moduli, %lld GEMMs", mmp_format_name(fa), rv.imma, rv.slice_bits, rv.crt,
                  (long long)rv.n_gemms);
    ck_assert(mmp_ref_gemm(&rc, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
    o.path = MMP_REF_PATH_MPFR;
    ck_assert(mmp_ref_gemm(&rm, p.a, p.b, p.c, &p.g, &o) == MMP_STATUS_OK);
    for (int64_t x = 0; x < m * n; x++)
        ck_assert_msg(same_bits(rv.d64[x], rm.d64[x]) && same_bits(rv.dout[x], rm.dout[x]) &&
                          same_bits(rc.d64[x], rm.d64[x]),
                      "%s->%s kind %d %lldx%lldx%lld alpha %g beta %g far %g (%dx%d slices, %d levels, %d moduli, "
                      "sparse %d) (%lld,%lld): int8 %a/%a cpu %a mpfr %a/%a",
                      mmp_format_name(fa), mmp_format_name(fd), kind, (long long)m, (long long)n, (long long)k, alpha,
                      beta, far, rv.slices_a, rv.slices_b, rv.slice_levels, rv.crt, rv.split.sparse, (long long)(x / n),
                      (long long)(x % n), rv.d64[x], rv.dout[x], rc.d64[x], rm.d64[x], rm.dout[x]);
    mmp_ref_result_clear(&rv); mmp_ref_result_clear(&rc); mmp_ref_result_clear(&rm);
    prob_free(&p);
}

/* ref_split at 8 bits (int8 slices) and at 22 (binary64 slices at K = 1024): S slices of a
 * value whose scale is ref_scale_exp of it (or larger) are integers in [-128, 127] (8 bits) or
 * of magnitude <= 2^21 (22 bits), and the slices and the remainder add back to the value
 * exactly; the remainder is at most 128/255 of the last slice's unit. Values include the
 * largest significands (the first digit's rounding up) of both signs and random 53-bit ones. */
START_TEST(slices_fit_int8)
{
    rs = mmp_check_seed * 3935559000370003845ull + 17;
    int top_bumps = 0;
    for (int t = 0; t < 40000; t++) {
        int beta = t % 2 ? 22 : REF_IMMA_BETA;
        double lo = beta == REF_IMMA_BETA ? -128.0 : -ldexp(1.0, beta - 1), hi = -lo - (beta == REF_IMMA_BETA);
        double v = t % 8 < 2 ? 1.0 - ldexp(1.0, -(1 + (int)(rnd64() % 53))) : urand();
        v = ldexp(v, -(int)(rnd64() % 60)) * ((rnd64() & 1) ? -1 : 1);
        int e0 = ref_scale_exp(fabs(v), beta), f = 0;
        frexp(v, &f);
        ck_assert_msg(e0 == f + 1 || e0 == f + 2, "v %a: scale %d, frexp %d", v, e0, f);
        top_bumps += e0 == f + 2 && beta == REF_IMMA_BETA;
        int e = e0 + (int)(rnd64() % 3);   /* any scale from the vector's up */
        int S = 1 + (int)(rnd64() % REF_SMAX);
        double q[REF_SMAX], last, rem = ref_split(v, e, beta, S, q, 1, &last);
        long double back = rem;
        for (int s = 1; s <= S; s++) {
            ck_assert_msg(q[s - 1] == trunc(q[s - 1]) && q[s - 1] >= lo && q[s - 1] <= hi,
                          "v %a E %d beta %d slice %d: %g", v, e, beta, s, q[s - 1]);
            back += ldexpl((long double)q[s - 1], e - beta * s);
        }
        ck_assert_msg(back == (long double)v && fabs(rem) <= ldexp(0.502, e - beta * S),
                      "v %a E %d beta %d S %d rem %a", v, e, beta, S, rem);
    }
    ck_assert_msg(top_bumps > 0, "no value needed the larger scale: the test misses the first digit's edge");
}
END_TEST

/* ref_v2_slice8_one (the int8 planes' slicing, digit by digit into the planes) stores
 * ref_split's digits, bit for bit, at ref_imma_slot's places and nowhere else, in both orders:
 * values of 8 to 53 significant bits (53: more digits than any format of the int8 route has)
 * spread over up to 300 binades below the scale (subnormals among them), zeros, NaN and Inf,
 * any S. */
START_TEST(slice8_one_as_split)
{
    rs = mmp_check_seed * 2862933555777941757ull + 23;
    int tail = 0;
    for (int t = 0; t < 60000; t++) {
        static const int bits[] = {8, 11, 24, 26, 53};
        int p = bits[rnd64() % 5], kind = (int)(rnd64() % 40);
        double v = ldexp(floor(ldexp(0.5 + 0.5 * urand(), p)), -p);   /* p significant bits */
        v = ldexp(v, 40 - (int)(rnd64() % 300)) * ((rnd64() & 1) ? -1 : 1);
        if (kind == 0) v = 0.0;
        if (kind == 1) v = NAN;
        if (kind == 2) v = -INFINITY;
        int e = 40 + 2 + (int)(rnd64() % 3), S = 1 + (int)(rnd64() % REF_SMAX), rev = (int)(rnd64() & 1);
        double q[REF_SMAX], last;
        ref_split(v, e, REF_IMMA_BETA, S, q, 1, &last);
        enum { KP = 3 };
        int8_t row[REF_SMAX * KP];
        memset(row, 0x5a, sizeof row);
        int ok = ref_v2_slice8_one(row, v, e, REF_IMMA_BETA, S, KP, rev, 1);
        ck_assert_msg(ok, "v %a E %d S %d: a slice outside [-128, 127]", v, e, S);
        int nz = 0;
        for (int s = 1; s <= S; s++) {
            int8_t got = row[ref_imma_slot(s, S, KP, rev) + 1];
            ck_assert_msg(got == (int8_t)q[s - 1], "v %a E %d S %d rev %d slice %d: %d, ref_split %g", v, e, S, rev, s,
                          (int)got, q[s - 1]);
            nz = q[s - 1] != 0.0 ? s : nz;
        }
        if (isfinite(v) && v != 0.0 && nz - ref_zero_slices(v, e, REF_IMMA_BETA) > 6) tail++;
        for (int x = 0; x < REF_SMAX * KP; x++)   /* nothing else written */
            if (x % KP != 1 || x / KP >= S) ck_assert_msg(row[x] == 0x5a, "v %a S %d: slot %d written", v, S, x);
    }
    ck_assert_msg(tail > 0, "no value had more than 6 digits: the test misses long digit strings");
}
END_TEST

/* ref_vstats_pass2_vector equals ref_vstats_pass2 entry by entry, bit for bit, on vectors of
 * entries spread over up to 1100 binades below the maximum (subnormals included), with zeros,
 * NaN and Inf, at 8 bits and 22, at the vector's scale and above it. */
START_TEST(vstats_vector_same)
{
    rs = mmp_check_seed * 6364136223846793005ull + 29;
    enum { LEN = 700 };
    double x[LEN];
    for (int t = 0; t < 300; t++) {
        int beta = t % 2 ? 22 : REF_IMMA_BETA, span = 1 + (int)(rnd64() % 1100);
        for (int k = 0; k < LEN; k++) {
            int kind = (int)(rnd64() % 50);
            x[k] = kind == 0 ? 0.0 : kind == 1 ? NAN : kind == 2 ? -INFINITY
                 : ldexp(urand(), 60 - (int)(rnd64() % (uint64_t)span)) * ((rnd64() & 1) ? -1 : 1);
        }
        ref_vstats a, b;
        ref_vstats_zero(&a);
        for (int k = 0; k < LEN; k++) ref_vstats_pass1(&a, x[k]);
        ref_vstats_scale(&a, beta);
        a.e += (int)(rnd64() % 3);
        b = a;
        for (int k = 0; k < LEN; k++) ref_vstats_pass2(&a, x[k], a.e, beta);
        ref_vstats_pass2_vector(&b, x, LEN, b.e, beta);
        for (int q = 0; q <= REF_SMAX; q++)
            ck_assert_msg(a.cnt[q] == b.cnt[q] && same_bits(a.ssum[q], b.ssum[q]) && same_bits(a.rmax[q], b.rmax[q]),
                          "try %d beta %d span %d slice %d: cnt %d/%d ssum %a/%a rmax %a/%a", t, beta, span, q,
                          a.cnt[q], b.cnt[q], a.ssum[q], b.ssum[q], a.rmax[q], b.rmax[q]);
    }
}
END_TEST

/* The jobs of a plan: every pair (s, t), s + t <= levels, over all of [0, kp) exactly once;
 * K' <= kmax; offsets and K' multiples of 16; each span inside its vector of S kp entries. */
START_TEST(jobs_cover_pairs)
{
    static const int64_t kp_kmax[][2] = {{16, 16},   {48, 16},     {160, 16},           {160, 32},
                                         {160, 400}, {8192, 4096}, {8192, REF_IMMA_KMAX}, {140000, REF_IMMA_KMAX}};
    for (int sa = 1; sa <= REF_SMAX; sa++)
        for (int sb = 1; sb <= REF_SMAX; sb++)
            for (int L = 2; L <= sa + sb; L++)
                for (int q = 0; q < 8; q++) {
                    ref_v2_plan p;
                    memset(&p, 0, sizeof p);
                    p.sa = sa; p.sb = sb; p.levels = L; p.kp = kp_kmax[q][0]; p.kmax = kp_kmax[q][1];
                    int nj = ref_imma_jobs(NULL, 0, &p);
                    ref_imma_job jobs[4096];
                    ck_assert(nj <= 4096);
                    ck_assert_int_eq(ref_imma_jobs(jobs, nj, &p), nj);
                    int64_t cover[REF_SMAX + 1][REF_SMAX + 1];
                    memset(cover, 0, sizeof cover);
                    for (int j = 0; j < nj; j++) {
                        int64_t oa, ob, kk;
                        ref_imma_job_span(&oa, &ob, &kk, &jobs[j], sb, p.kp);
                        ck_assert(kk > 0 && kk <= p.kmax && kk % 16 == 0 && oa % 16 == 0 && ob % 16 == 0);
                        ck_assert(oa >= 0 && ob >= 0 && oa + kk <= sa * p.kp && ob + kk <= sb * p.kp);
                        ck_assert(j == 0 || jobs[j].level >= jobs[j - 1].level);   /* a level's planes together */
                        for (int s = jobs[j].s0; s <= jobs[j].s1; s++) {
                            int t = jobs[j].level - s;
                            ck_assert(s >= 1 && s <= sa && t >= 1 && t <= sb);
                            /* slice s of A faces slice t of B at the same k */
                            ck_assert_int_eq(oa + (s - jobs[j].s0) * p.kp - ref_imma_slot(s, sa, p.kp, 0),
                                             ob + (s - jobs[j].s0) * p.kp - ref_imma_slot(t, sb, p.kp, 1));
                            cover[s][t] += jobs[j].k1 - jobs[j].k0;
                        }
                    }
                    for (int s = 1; s <= sa; s++)
                        for (int t = 1; t <= sb; t++)
                            ck_assert_int_eq(cover[s][t], s + t <= L ? p.kp : 0);
                }
}
END_TEST

/* Every kind of data on the formats the int8 route takes; _i: the format, _i >= 6: the same with
 * every square by residues (ref_crt.h), and by cost. */
START_TEST(model_every_kind)
{
    static const mmp_format fmt[][2] = {{MMP_FORMAT_BF16, MMP_FORMAT_FP32}, {MMP_FORMAT_FP32, MMP_FORMAT_FP32},
                                        {MMP_FORMAT_FP16, MMP_FORMAT_FP16}, {MMP_FORMAT_E4M3, MMP_FORMAT_FP32},
                                        {MMP_FORMAT_TF32, MMP_FORMAT_BF16}, {MMP_FORMAT_INT8, MMP_FORMAT_FP32}};
    rs = mmp_check_seed * 6364136223846793005ull + (uint64_t)_i * 7919 + 3;
    const mmp_format *f = fmt[_i % 6];
    int is_int = f[0] == MMP_FORMAT_INT8, crt = _i >= 6 ? 3 : 2;
    for (int kind = GEN_RANDOM; kind <= GEN_ONEHOT; kind++) {
        int64_t m = 9 + (int64_t)(rnd64() % 24), n = 7 + (int64_t)(rnd64() % 24), k = 1 + (int64_t)(rnd64() % 170);
        if (k % 16 == 0) k++;
        imma_agrees(f[0], f[1], kind, m, n, k, 1.0, 0.0, 0.0, crt);
        imma_agrees(f[0], f[1], kind, m, n, k + 16, is_int ? 0.75 : -0.75, 0.5, 0.0, crt);
        imma_agrees(f[0], f[1], kind, 16, 12, 96, 1.0, 0.0, 0.0, crt);   /* no padding: planes not cleared */
        if (crt == 3) imma_agrees(f[0], f[1], kind, 14, 10, 200, 1.0, 0.0, 0.0, 1);   /* residues by cost */
    }
    imma_agrees(f[0], f[1], GEN_RANDOM, 20, 18, 77, 3.0, 0.1, 0.25, crt);   /* far entries: bound mode */
    imma_agrees(f[0], f[1], GEN_RANDOM, 20, 18, 77, 1.0, 0.0, 0.01, crt);   /* and sparse remainders */
}
END_TEST

/* The K' limit forced small (MMP_REF_IMMA_KMAX): 32 cuts each pair into chunks, 400 puts two
 * pairs of kp = 160 into one GEMM; more GEMMs than pairs, the same bits. */
START_TEST(model_chunked)
{
    rs = mmp_check_seed * 2862933555777941757ull + (uint64_t)_i * 31 + 7;
    static const char *limits[] = {"32", "400", "16"};
    setenv("MMP_REF_IMMA_KMAX", limits[_i], 1);
    for (int kind = GEN_RANDOM; kind <= GEN_ONEHOT; kind++) {
        imma_agrees(MMP_FORMAT_BF16, MMP_FORMAT_FP32, kind, 13, 11, 150, 1.0, 0.0, 0.0, 2);
        imma_agrees(MMP_FORMAT_FP32, MMP_FORMAT_FP32, kind, 12, 10, 149, -0.75, 1.0, 0.0, 2);
    }
    /* the GEMMs counted: one per job of the plan */
    prob p;
    prob_make(&p, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 8, 8, 150, 0, 0, 1.0, 0.0,
              GEN_WIDE);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.imma = 1;
    o.crt = 2;   /* the pairs' jobs */
    mmp_ref_result r;
    mmp_ref_result_init(&r);
    ck_assert(ref_v2_host_run(&r, p.a, p.b, NULL, &p.g, &o, 1) == MMP_STATUS_OK);
    ref_v2_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.sa = r.slices_a; pl.sb = r.slices_b; pl.levels = r.slice_levels; pl.kp = 160; pl.kmax = atoll(limits[_i]);
    int pairs = 0;
    for (int s = 1; s <= pl.sa; s++)
        for (int t = 1; t <= pl.sb; t++) pairs += s + t <= pl.levels;
    ck_assert_int_eq(r.n_gemms, ref_imma_jobs(NULL, 0, &pl));
    ck_assert_msg(_i == 1 ? r.n_gemms < pairs : r.n_gemms == pairs * (160 / pl.kmax), "%lld GEMMs, %d pairs",
                  (long long)r.n_gemms, pairs);
    mmp_ref_result_clear(&r);
    prob_free(&p);
    unsetenv("MMP_REF_IMMA_KMAX");
}
END_TEST

/* K past REF_IMMA_KMAX with every first slice 127 (entries 127/128, scale 2^1): one pair's sum is
 * 127^2 K > 2^31 - 1, so the model's int32 check fails unless the pair is cut into chunks. */
START_TEST(model_long_k)
{
    enum { M = 4, N = 3, K = REF_IMMA_KMAX + 4000 };
    mmp_gemm g;
    mmp_gemm_init(&g, MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, M, N, K);
    uint16_t *a = malloc(sizeof(uint16_t) * M * K), *b = malloc(sizeof(uint16_t) * K * N);
    ck_assert(a && b);
    for (int64_t x = 0; x < (int64_t)M * K; x++)
        mmp_format_store(a, (size_t)x, (x % 5 == 3) ? -127.0 / 128 : 127.0 / 128, g.a, MMP_ROUND_NEAREST_EVEN, 1);
    /* (every entry of A and B is set: the layouts' spans are M K and K N) */
    for (int64_t x = 0; x < (int64_t)K * N; x++) mmp_format_store(b, (size_t)x, 127.0 / 128, g.b, MMP_ROUND_NEAREST_EVEN, 1);
    for (int64_t k = 0; k < K; k++)   /* row 0 all positive: the largest sum */
        mmp_format_store(a, mmp_gemm_index(g.la, g.lda, 0, k), 127.0 / 128, g.a, MMP_ROUND_NEAREST_EVEN, 1);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.imma = 1;
    mmp_ref_result r, rm;
    mmp_ref_result_init(&r); mmp_ref_result_init(&rm);
    ck_assert_msg(ref_v2_host_run(&r, a, b, NULL, &g, &o, 2) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert(r.imma == 1 && r.n_gemms >= 2);
    o.path = MMP_REF_PATH_MPFR;
    ck_assert(mmp_ref_gemm(&rm, a, b, NULL, &g, &o) == MMP_STATUS_OK);
    ck_assert(rm.d64[0] == (double)K * (127.0 / 128) * (127.0 / 128));
    for (int x = 0; x < M * N; x++)
        ck_assert_msg(same_bits(r.d64[x], rm.d64[x]) && same_bits(r.dout[x], rm.dout[x]), "(%d,%d): %a mpfr %a",
                      x / N, x % N, r.d64[x], rm.d64[x]);
    mmp_ref_result_clear(&r); mmp_ref_result_clear(&rm);
    free(a); free(b);
}
END_TEST

/* The route: the cost model takes int8 for the narrow formats, DGEMMs for binary64 (more int8
 * slices than REF_SMAX); MMP_REF_IMMA and the option override it; a route is reported. */
START_TEST(route_choice)
{
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    mmp_gemm g;
    static const mmp_format narrow[] = {MMP_FORMAT_BF16, MMP_FORMAT_FP16, MMP_FORMAT_FP32, MMP_FORMAT_TF32,
                                        MMP_FORMAT_E4M3};
    unsetenv("MMP_REF_IMMA");
    for (int f = 0; f < 5; f++) {
        mmp_gemm_init(&g, narrow[f], narrow[f], MMP_FORMAT_FP32, MMP_FORMAT_FP32, 8192, 8192, 8192);
        ck_assert_msg(ref_plan_route(&g, &o) == 1, "%s", mmp_format_name(narrow[f]));
        o.imma = 2;
        ck_assert_int_eq(ref_plan_route(&g, &o), 0);
        setenv("MMP_REF_IMMA", "0", 1);
        o.imma = 0;
        ck_assert_int_eq(ref_plan_route(&g, &o), 0);
        o.imma = 1;   /* the option before the environment */
        ck_assert_int_eq(ref_plan_route(&g, &o), 1);
        o.imma = 0;
        unsetenv("MMP_REF_IMMA");
    }
    mmp_gemm_init(&g, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, MMP_FORMAT_FP64, 64, 64, 64);
    o.imma = 1;
    ck_assert_int_eq(ref_plan_route(&g, &o), 0);
    setenv("MMP_REF_IMMA", "1", 1);
    o.imma = 0;
    ck_assert_int_eq(ref_plan_route(&g, &o), 0);
    mmp_gemm_init(&g, MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 64, 64, 64);
    ck_assert_int_eq(ref_plan_route(&g, &o), 1);
    unsetenv("MMP_REF_IMMA");
    /* uniform bf16: exact (sparse) with few int8 slices, not the format's five */
    rs = mmp_check_seed + 5;
    prob p;
    prob_make(&p, MMP_FORMAT_BF16, MMP_FORMAT_BF16, MMP_FORMAT_FP32, MMP_FORMAT_FP32, 64, 48, 512, 0, 0, 1.0, 0.0,
              GEN_RANDOM);
    mmp_ref_result r;
    mmp_ref_result_init(&r);
    ck_assert(ref_v2_host_run(&r, p.a, p.b, NULL, &p.g, &o, 2) == MMP_STATUS_OK);
    ck_assert_msg(r.imma == 1 && r.split.sparse && r.slices_a <= 3 && r.slices_b <= 3 && r.n_mpfr + r.n_exact == 0,
                  "route %d, %dx%d slices, sparse %d, %lld past the finish", r.imma, r.slices_a, r.slices_b,
                  r.split.sparse, (long long)(r.n_mpfr + r.n_exact));
    mmp_ref_result_clear(&r);
    prob_free(&p);
}
END_TEST

/* Wide data on the int8 route: a deep triangle (more slices than the DGEMM route's most), and
 * most elements decided by its bound, not left to the dot stage (at most 1 in 4: a shallow
 * triangle of few pairs leaves nearly all of them). */
START_TEST(wide_data_take_a_deep_triangle)
{
    static const mmp_format fmt[] = {MMP_FORMAT_BF16, MMP_FORMAT_FP32};
    rs = mmp_check_seed * 1442695040888963407ull + 77 + (uint64_t)_i;
    prob p;
    prob_make(&p, fmt[_i], fmt[_i], MMP_FORMAT_FP32, MMP_FORMAT_FP32, 96, 80, 512, 0, 0, 1.0, 0.0, GEN_WIDE);
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.imma = 1;
    o.crt = 2;   /* the pairs (check_ref_crt: the same data with residues) */
    mmp_ref_result r, rm;
    mmp_ref_result_init(&r); mmp_ref_result_init(&rm);
    ck_assert(ref_v2_host_run(&r, p.a, p.b, NULL, &p.g, &o, 2) == MMP_STATUS_OK);
    int64_t open = r.split.n_dot + r.n_exact + r.n_mpfr;
    ck_assert_msg(r.imma && !r.split.sparse && r.slice_levels < r.slices_a + r.slices_b && r.slices_a > REF_SMAX_DGEMM &&
                      open <= 96 * 80 / 4,
                  "%s: route %d, %dx%d slices, %d levels, sparse %d, %lld past the bound", mmp_format_name(fmt[_i]),
                  r.imma, r.slices_a, r.slices_b, r.slice_levels, r.split.sparse, (long long)open);
    o.path = MMP_REF_PATH_MPFR;
    ck_assert(mmp_ref_gemm(&rm, p.a, p.b, NULL, &p.g, &o) == MMP_STATUS_OK);
    for (int64_t x = 0; x < 96 * 80; x++) ck_assert(same_bits(r.d64[x], rm.d64[x]) && same_bits(r.dout[x], rm.dout[x]));
    mmp_ref_result_clear(&r); mmp_ref_result_clear(&rm);
    prob_free(&p);
}
END_TEST

static Suite *ref_imma_suite(void)
{
    Suite *s = suite_create("ref_imma");
    TCase *t = tcase_create("int8_route");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, slices_fit_int8);
    tcase_add_test(t, slice8_one_as_split);
    tcase_add_test(t, vstats_vector_same);
    tcase_add_test(t, jobs_cover_pairs);
    tcase_add_loop_test(t, model_every_kind, 0, 12);
    tcase_add_loop_test(t, model_chunked, 0, 3);
    tcase_add_test(t, model_long_k);
    tcase_add_test(t, route_choice);
    tcase_add_loop_test(t, wide_data_take_a_deep_triangle, 0, 2);
    suite_add_tcase(s, t);
    return s;
}

MMP_CHECK_MAIN(ref_imma_suite)
