/* arith_analyse.c — derive the tensor-core model parameters from a capture (host only).
 *
 * Each feature is measured on the family of vectors designed to isolate it
 * (probes/arith_design.c): the analysis finds the parameter values for which the model
 * reproduces that family bit for bit, the other parameters fixed at the values found before
 * (order: anchor -> block -> floor -> subnormals), and reports ties honestly (a feature the
 * family cannot see on this instruction, e.g. the floor for fp16 inputs, is "not observable").
 * Then every vector, the random ones included, is replayed through the fitted model.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/probe.h"
#include "arith_internal.h"

typedef struct fam {
    const mmp_capture *cap;
    const char *probe;          /* prefix of the probe names in the family */
    double *a, *b;              /* scratch, k each */
    size_t *idx, nidx;          /* the family's vectors (set_family) */
    const char *idx_of;         /* the probe idx was built for */
} fam;

static int in_family(const mmp_capture_vec *v, const char *probe)
{
    return strncmp(v->probe, probe, strlen(probe)) == 0;
}

static size_t family_size(const mmp_capture *cap, const char *probe)
{
    size_t n = 0;
    for (size_t i = 0; i < cap->count; i++) n += in_family(&cap->v[i], probe);
    return n;
}

static double model_out(fam *F, const mmp_capture_vec *v, const mmp_model_params *p)
{
    for (int j = 0; j < F->cap->k; j++) {
        F->a[j] = mmp_probe_value(v->a[j]);
        F->b[j] = mmp_probe_value(v->b[j]);
    }
    double d = NAN;
    mmp_model_dot(&d, F->a, F->b, mmp_probe_value(v->c), F->cap->k, p);
    return d;
}

/* The indices of the family F->probe (built once per family; idx holds cap->count slots). */
static void index_family(fam *F)
{
    if (F->idx_of == F->probe) return;
    F->nidx = 0;
    for (size_t i = 0; i < F->cap->count; i++)
        if (in_family(&F->cap->v[i], F->probe)) F->idx[F->nidx++] = i;
    F->idx_of = F->probe;
}

/* Mismatches of the family under p, stopping past limit. */
static size_t family_bad(fam *F, const mmp_model_params *p, size_t limit, size_t *first)
{
    size_t bad = 0;
    index_family(F);
    for (size_t n = 0; n < F->nidx; n++) {
        size_t i = F->idx[n];
        const mmp_capture_vec *v = &F->cap->v[i];
        if (!mmp_model_fp32_same(mmp_model_fp32_bits(model_out(F, v, p)), v->d)) {
            if (first && !bad) *first = i;
            if (++bad > limit) break;
        }
    }
    return bad;
}

/* Vectors of the whole capture the model does not reproduce. */
static size_t capture_bad(fam *F, const mmp_model_params *p)
{
    size_t bad = 0;
    for (size_t i = 0; i < F->cap->count; i++) {
        const mmp_capture_vec *v = &F->cap->v[i];
        bad += !mmp_model_fp32_same(mmp_model_fp32_bits(model_out(F, v, p)), v->d);
    }
    return bad;
}

/* Tie-break between parameter sets the designed family cannot tell apart: mismatches on the
 * first 2000 random vectors (a measurement, not a prior; bounded so 10^5-vector captures stay fast). */
static size_t random_bad(fam *F, const mmp_model_params *p)
{
    size_t bad = 0, seen = 0;
    for (size_t i = 0; i < F->cap->count && seen < 2000; i++) {
        const mmp_capture_vec *v = &F->cap->v[i];
        if (!in_family(v, "rand")) continue;
        seen++;
        bad += !mmp_model_fp32_same(mmp_model_fp32_bits(model_out(F, v, p)), v->d);
    }
    return bad;
}

#define add_feature mmp_arith_add_feature

static const char *rname(mmp_round r)
{
    return r == MMP_ROUND_NEAREST_EVEN ? "round-to-nearest-even" : r == MMP_ROUND_TOWARD_ZERO ? "toward zero (truncation)"
         : r == MMP_ROUND_DOWN ? "toward -inf" : "toward +inf";
}

/* Step 1, the anchor family: extra bits, output rounding, term rounding, c used. */
static void fit_anchor(mmp_arith_report *r, fam *F, mmp_model_params *p)
{
    static const mmp_round outs[] = {MMP_ROUND_TOWARD_ZERO, MMP_ROUND_NEAREST_EVEN};
    static const mmp_round aligns[] = {MMP_ROUND_TOWARD_ZERO, MMP_ROUND_DOWN};
    int out_frac = p->out_format == MMP_FORMAT_FP16 ? 10 : 23;
    F->probe = "anchor";
    mmp_model_params best = *p;
    size_t best_bad = SIZE_MAX, ties = 0, n = family_size(F->cap, "anchor"), best_rnd = SIZE_MAX;
    int extra_lo = 99, extra_hi = -99;
    for (int cu = 0; cu <= 1; cu++)
        for (size_t o = 0; o < 2; o++)
            for (size_t al = 0; al < 2; al++)
                for (int extra = -12; extra <= 8; extra++) {
                    mmp_model_params q = *p;
                    q.c_unused = cu;
                    q.out_round = outs[o];
                    q.align_round = aligns[al];
                    q.extra_align_bits = extra;
                    q.result_frac_bits = extra < 0 && out_frac + extra > 0 ? out_frac + extra : 0;
                    size_t bad = family_bad(F, &q, best_bad == SIZE_MAX ? SIZE_MAX - 1 : best_bad, NULL);
                    if (bad < best_bad) { best_bad = bad; best = q; ties = 0; extra_lo = extra_hi = extra; best_rnd = SIZE_MAX; }
                    else if (bad == best_bad) {
                        /* the family cannot tell them apart: the random vectors decide */
                        if (best_rnd == SIZE_MAX) best_rnd = random_bad(F, &best);
                        size_t rb = random_bad(F, &q);
                        if (rb < best_rnd) { best_rnd = rb; best = q; }
                        ties++;
                        if (q.c_unused == best.c_unused && q.out_round == best.out_round &&
                            q.align_round == best.align_round) {
                            if (extra < extra_lo) extra_lo = extra;
                            if (extra > extra_hi) extra_hi = extra;
                        }
                    }
                }
    *p = best;
    const char *m_extra = "anchor 1 (as c, and as product 0 with c=0) plus one product t=+-2^-j, "
                          "+-3*2^-j: t below fp32's last bit survives only in extra alignment bits";
    if (extra_lo == extra_hi)
        add_feature(r, "extra_alignment_bits", best_bad == 0, m_extra, "%d (%zu/%zu vectors explained)",
                    best.extra_align_bits, n - best_bad, n);
    else
        add_feature(r, "extra_alignment_bits", best_bad == 0, m_extra,
                    "%d (designed vectors allow %d..%d, %zu/%zu explained; the random vectors chose %d)",
                    best.extra_align_bits, extra_lo, extra_hi, n - best_bad, n, best.extra_align_bits);
    add_feature(r, "accumulator_fraction_bits", best_bad == 0,
                "fraction bits of the aligned sum below the largest exponent: 23 + extra bits",
                "%d", 23 + best.extra_align_bits);
    add_feature(r, "result_fraction_bits", best_bad == 0,
                "fraction bits of each block result: an FP8 narrow accumulator keeps fewer than fp32's 23",
                "%d", best.result_frac_bits ? best.result_frac_bits : out_frac);
    add_feature(r, "output_rounding", best_bad == 0,
                "anchor 1 + 3*2^-j (between two outputs) and +-2^-j: rounded up only under nearest",
                "%s", rname(best.out_round));
    add_feature(r, "term_rounding", best_bad == 0,
                "negative t beyond every kept bit: output 1 under truncation of magnitudes, "
                "1-ulp under two's-complement truncation (toward -inf); positive t: 1 in both",
                "%s", best.align_round == MMP_ROUND_DOWN ? "toward -inf (per sign: magnitudes of negatives round up)"
                                                          : "toward zero for both signs");
    add_feature(r, "accumulator_c", best_bad == 0,
                "anchor as c versus as product 0: an instruction that ignores c fails the c=1 vectors",
                "%s", best.c_unused ? "c not used (zero accumulator)" : "c used");
    /* direct reading: largest j with 1 + 2^-j != 1 (anchor as c) */
    int kept = 0;
    for (size_t i = 0; i < F->cap->count; i++) {
        const mmp_capture_vec *v = &F->cap->v[i];
        if (!in_family(v, "anchor") || v->c != 0x3f800000u) continue;
        double t = mmp_probe_value(v->a[1]) * mmp_probe_value(v->b[1]);
        int j = -ilogb(t);
        if (t > 0 && ldexp(1.0, -j) == t && v->d != 0x3f800000u && j > kept) kept = j;
    }
    add_feature(r, "significand_bits_visible", kept > 0,
                "c = 1, one product 2^-j: the largest j whose output differs from 1 (limited by "
                "the output format: fp32 shows at most 23, fp16 10)", "%d", kept);
}

/* Step 2, the block family. */
static void fit_block(mmp_arith_report *r, fam *F, mmp_model_params *p)
{
    static const int blocks[] = {1, 2, 4, 8, 16, 32, 64};
    F->probe = "block";
    size_t n = family_size(F->cap, "block"), best_bad = SIZE_MAX, best_rnd = SIZE_MAX;
    int best = p->block_size, lo = 0, hi = 0;
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        if (i > 0 && blocks[i - 1] >= F->cap->k) break;
        mmp_model_params q = *p;
        q.block_size = blocks[i];
        size_t bad = family_bad(F, &q, SIZE_MAX - 1, NULL);
        if (bad < best_bad) { best_bad = bad; best = blocks[i]; lo = hi = blocks[i]; best_rnd = SIZE_MAX; }
        else if (bad == best_bad) {
            hi = blocks[i];
            mmp_model_params bq = *p;
            bq.block_size = best;
            if (best_rnd == SIZE_MAX) best_rnd = random_bad(F, &bq);
            size_t rb = random_bad(F, &q);
            if (rb < best_rnd) { best_rnd = rb; best = blocks[i]; }
        }
    }
    p->block_size = best;
    const char *m = "products 0..i-1 = 2^-(24+e), product i = 1, i+1 = -1, c = 0: output 0 while the "
                    "small terms share the 1's block, their sum once an earlier block holds them";
    if (n == 0) add_feature(r, "block_size", 0, m, "no block vectors");
    else if (lo != hi)
        add_feature(r, "block_size", best_bad == 0, m, "%d (designed vectors allow %d..%d; the random vectors chose %d)",
                    best, lo, hi, best);
    else add_feature(r, "block_size", best_bad == 0, m, "%d (%zu/%zu explained)", best, n - best_bad, n);
    add_feature(r, "chain_order", best_bad == 0,
                "the same vectors for every i: blocks chained in index order, c entering the first",
                "%s", best_bad == 0 ? "sequential (c, block 0, block 1, ...)" : "not sequential");
}

/* Step 3, floor; step 4, subnormals. */
static void fit_floor_sub(mmp_arith_report *r, fam *F, mmp_model_params *p)
{
    F->probe = "floor";
    size_t best_bad = SIZE_MAX;
    int lo = 0, hi = 0, def = p->align_floor, def_ok = 0;
    size_t def_bad = family_bad(F, p, SIZE_MAX - 1, NULL);
    for (int fl = -160; fl <= -5; fl++) {
        mmp_model_params q = *p;
        q.align_floor = fl;
        size_t bad = family_bad(F, &q, best_bad == SIZE_MAX ? SIZE_MAX - 1 : best_bad, NULL);
        if (bad < best_bad) { best_bad = bad; lo = hi = fl; }
        else if (bad == best_bad) hi = fl;
    }
    if (def_bad == best_bad && def >= lo && def <= hi) def_ok = 1;
    if (!def_ok) p->align_floor = lo;
    const char *m = "c = 0 and products (1+2^-p)*2^-m: their low bits vanish when the exponent floor "
                    "is above them";
    if (lo == -160 && hi == -5) add_feature(r, "exponent_floor", 1, m, "not observable (kept %d)", p->align_floor);
    else add_feature(r, "exponent_floor", best_bad == 0, m, "%d (consistent range %d..%d)", p->align_floor, lo, hi);

    F->probe = "subnorm";
    size_t bb = SIZE_MAX;
    mmp_model_params best = *p;
    for (int is = 1; is >= 0; is--)
        for (int os = 1; os >= 0; os--) {
            mmp_model_params q = *p;
            q.in_subnormals = is;
            q.out_subnormals = os;
            size_t bad = family_bad(F, &q, SIZE_MAX - 1, NULL);
            if (bad < bb) { bb = bad; best = q; }
        }
    *p = best;
    add_feature(r, "subnormal_inputs", bb == 0, "smallest subnormal input times 1, with c = 0 and c = 2^emin",
                "%s", p->in_subnormals ? "kept" : "flushed to zero");
    add_feature(r, "subnormal_outputs", bb == 0, "products 1.5*2^-m for m = 120..150 and c = 2^-149",
                "%s", p->out_subnormals ? "kept" : "flushed to zero");
}

/* Step 5 (chains of instructions over K): the bits the running sum keeps. */
static void fit_chain(mmp_arith_report *r, fam *F, const mmp_model_params *p, const mmp_arith_instr *in)
{
    F->probe = "chain";
    size_t n = family_size(F->cap, "chain"), bad = family_bad(F, p, SIZE_MAX - 1, NULL);
    int kept = 0;
    for (size_t i = 0; i < F->cap->count; i++) {
        const mmp_capture_vec *v = &F->cap->v[i];
        if (!in_family(v, "chain")) continue;
        int k = F->cap->k;
        double t = mmp_probe_value(v->a[k - 1]) * mmp_probe_value(v->b[k - 1]);
        double A = v->c ? mmp_probe_value(v->c) : mmp_probe_value(v->a[0]) * mmp_probe_value(v->b[0]);
        if (!(t > 0 && A > 0)) continue;
        int j = ilogb(A) - ilogb(t);
        if (ldexp(A, -j) == t && v->d != mmp_probe_bits(A) && j > kept) kept = j;
    }
    int per = in ? in->promote : F->cap->k;
    add_feature(r, "chain_bits_kept", bad == 0,
                "anchor A = 2^12 in the first instruction (as c, or product 0 with c = 0), t = A*2^-j in "
                "the last of the chained instructions: the largest j whose output differs from A",
                "%d fraction bits survive %d chained instructions of K=%d (%s; %zu/%zu explained)", kept,
                F->cap->k / (per > 0 ? per : F->cap->k), per,
                in && in->promote_fp32 ? "partial results promoted to fp32 registers"
                                       : "accumulated in the instruction's accumulator (scale-d = 1)",
                n - bad, n);
}

/* Step 1 again, once the block size and floor are known: the anchor family alone may not tell
 * the output or term rounding apart (an FP8 block result of 13 fraction bits hides fp32's last
 * bit), and the random vectors that broke the tie were replayed under the unfitted block size.
 * Every vector now decides; the current choice stays on a tie. */
static void refine_rounding(mmp_arith_report *r, fam *F, mmp_model_params *p)
{
    static const mmp_round outs[] = {MMP_ROUND_TOWARD_ZERO, MMP_ROUND_NEAREST_EVEN};
    static const mmp_round aligns[] = {MMP_ROUND_TOWARD_ZERO, MMP_ROUND_DOWN};
    mmp_model_params best = *p;
    size_t best_bad = capture_bad(F, p);
    for (size_t o = 0; o < 2 && best_bad; o++)
        for (size_t al = 0; al < 2 && best_bad; al++) {
            mmp_model_params q = *p;
            q.out_round = outs[o];
            q.align_round = aligns[al];
            size_t bad = capture_bad(F, &q);
            if (bad < best_bad) { best_bad = bad; best = q; }
        }
    if (best.out_round == p->out_round && best.align_round == p->align_round) return;
    *p = best;
    for (int i = 0; i < r->nf; i++) {
        if (!strcmp(r->f[i].name, "output_rounding"))
            snprintf(r->f[i].value, sizeof r->f[i].value, "%s (decided by all vectors)", rname(p->out_round));
        else if (!strcmp(r->f[i].name, "term_rounding"))
            snprintf(r->f[i].value, sizeof r->f[i].value, "%s (decided by all vectors)",
                     p->align_round == MMP_ROUND_DOWN ? "toward -inf (per sign: magnitudes of negatives round up)"
                                                      : "toward zero for both signs");
    }
}

mmp_status mmp_arith_analyse(mmp_arith_report *rep, const mmp_capture *cap)
{
    memset(rep, 0, sizeof *rep);
    if (!cap || cap->k < 1) return MMP_ERR(MMP_STATUS_INVALID, "arith analyse: empty capture");
    snprintf(rep->instruction, sizeof rep->instruction, "%s", cap->instruction);
    snprintf(rep->sass, sizeof rep->sass, "%s", cap->sass);
    snprintf(rep->device, sizeof rep->device, "%s", cap->device);
    snprintf(rep->origin, sizeof rep->origin, "%s", cap->origin);
    rep->native = cap->native;
    snprintf(rep->path_note, sizeof rep->path_note, "%s", cap->path_note);
    if (mmp_arith_is_integer(cap->in_format)) return mmp_arith_analyse_int(rep, cap);
    const mmp_arith_instr *instr = mmp_arith_instr_find(cap->instruction);
    mmp_model_params p;
    mmp_model_params_init(&p);
    p.in_format = cap->in_format;
    p.out_format = cap->out_format;
    p.block_size = cap->k;
    p.c_in_out_format = cap->out_format == MMP_FORMAT_FP16;
    p.align_floor = cap->out_format == MMP_FORMAT_FP16 ? -21 : -133;
    /* a chain of instructions over K: blocks no longer than one instruction; promoted chains
     * add each instruction's result in fp32 (the instruction table says which) */
    if (instr && instr->promote > 0) {
        p.block_size = instr->promote;
        if (instr->promote_fp32) p.promote = instr->promote;
    }
    MMP_TRY(mmp_model_params_check(&p));
    double *a = malloc(2 * (size_t)cap->k * sizeof *a);
    if (!a) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory analysing %s", cap->instruction);
    size_t *idx = malloc((cap->count ? cap->count : 1) * sizeof *idx);
    if (!idx) { free(a); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory analysing %s", cap->instruction); }
    fam F = {cap, "", a, a + cap->k, idx, 0, NULL};
    /* mma.sync FP8 on a GPU without an FP8 mma datapath (sm_90: F2FP + 2 x HMMA.16816.F32 +
     * FADD c): the K = 32 products are dealt to two f16 blocks in pairs (each register of four
     * FP8 values becomes two fp16x2 registers feeding different HMMAs), the blocks chained from
     * a zero accumulator, c added last in fp32. Both structures are fitted; the one that explains
     * more vectors is kept (the SASS, when known, says which ran). */
    int fp8_mma = instr && !instr->wgmma && !instr->promote &&
                  (cap->in_format == MMP_FORMAT_E4M3 || cap->in_format == MMP_FORMAT_E5M2) &&
                  cap->out_format == MMP_FORMAT_FP32 && cap->k == 32;
    mmp_arith_report *alt = fp8_mma ? malloc(sizeof *alt) : NULL;
    mmp_model_params p_alt = p;
    size_t bad_native = 0, bad_emul = SIZE_MAX;
    if (alt) {
        *alt = *rep;
        p_alt.emulate_f16 = 1;
        p_alt.interleave = 2;
        p_alt.c_fadd = 1;
        p_alt.block_size = 16;
        fit_anchor(alt, &F, &p_alt);
        fit_block(alt, &F, &p_alt);
        fit_floor_sub(alt, &F, &p_alt);
        refine_rounding(alt, &F, &p_alt);
        bad_emul = capture_bad(&F, &p_alt);
    }
    fit_anchor(rep, &F, &p);
    fit_block(rep, &F, &p);
    fit_floor_sub(rep, &F, &p);
    refine_rounding(rep, &F, &p);
    if (alt) {
        bad_native = capture_bad(&F, &p);
        const char *m = "every vector replayed under the native structure (one block over K, c in the "
                        "accumulator) and the emulated one (fp16 conversion, products dealt in pairs to "
                        "two chained 16-product f16 blocks from 0, c added by an fp32 FADD)";
        if (bad_emul < bad_native) {
            *rep = *alt;
            p = p_alt;
        }
        add_feature(rep, "fp8_mma_structure", bad_emul == 0 || bad_native == 0, m,
                    "%s (vectors unexplained: native %zu, emulated %zu; SASS %s)",
                    bad_emul < bad_native ? "emulated: f16 HMMA x2, K split in pairs 0,1|2,3|..., c by FADD"
                                          : "native FP8 dot product",
                    bad_native, bad_emul, cap->sass);
        free(alt);
    }
    if (cap->inputs_rounded)
        add_feature(rep, "inputs_rounded", 1,
                    "capture inputs the FP8 format cannot hold are replayed as the upload's "
                    "round-to-nearest-even conversion (what the tensor core multiplied)",
                    "%zu input values rounded", cap->inputs_rounded);
    if (family_size(cap, "chain")) fit_chain(rep, &F, &p, instr);
    if (instr && !instr->wgmma && (cap->in_format == MMP_FORMAT_E4M3 || cap->in_format == MMP_FORMAT_E5M2))
        add_feature(rep, "isa_support", 1,
                    "PTX ISA, mma Target ISA notes: mma with .e4m3/.e5m2 requires sm_89 or higher "
                    "(ptxas: \"Feature 'mma with FP8 floating point type' requires .target sm_89 or higher\"), "
                    "so sm_90 is a valid target; the SASS says which path runs it",
                    "supported on sm_89+ (sm_90 included); this capture ran %s",
                    cap->native > 0 ? "natively" : cap->native == 0 ? "EMULATED (see hardware_path)" : "on an unknown path");
    F.probe = "special";
    size_t first = 0, nsp = family_size(cap, "special");
    size_t bad = family_bad(&F, &p, SIZE_MAX - 1, &first);
    add_feature(rep, "special_values", bad == 0,
                "NaN in a, Inf*0, +Inf with -Inf, Inf with finite, -0 products, c in {+-0, 1, +-Inf, NaN}; "
                "fp16 accumulators: c = +-1e5, 65520, 65519 given as fp32 (an infinity once converted, or not)",
                bad == 0 ? "IEEE-style: NaN wins, Inf*0 and Inf-Inf give NaN, exact zero sums give +0 (%zu vectors)"
                         : "%zu of %zu differ from the IEEE-style rules", bad ? bad : nsp, nsp);
    rep->fitted = p;
    for (size_t i = 0; i < cap->count; i++) {
        const mmp_capture_vec *v = &cap->v[i];
        uint32_t m = mmp_model_fp32_bits(model_out(&F, v, &p));
        int same = mmp_model_fp32_same(m, v->d);
        int rnd = in_family(v, "rand");
        rep->n_total++;
        rep->n_random += rnd;
        if (!same) {
            rep->total_mismatches++;
            rep->random_mismatches += rnd;
            if (!rep->mismatch_example[0])
                snprintf(rep->mismatch_example, sizeof rep->mismatch_example,
                         "vector %zu (%s): model %08x, %s %08x", i, v->probe, m,
                         strncmp(cap->origin, "synthetic", 9) ? "hardware" : "capture", v->d);
        }
    }
    free(a);
    free(idx);
    return MMP_STATUS_OK;
}

void mmp_arith_report_print(FILE *out, const mmp_arith_report *r)
{
    char desc[320];
    mmp_model_params_format(desc, sizeof desc, &r->fitted);
    fprintf(out, "== %s  (SASS %s, device %s, %s)\n", r->instruction, r->sass, r->device, r->origin);
    fprintf(out, "  %-26s %-4s %s%s%s\n", "hardware_path", "",
            r->native > 0 ? "native" : r->native == 0 ? "EMULATED" : "unknown",
            r->path_note[0] ? ": " : "", r->path_note);
    for (int i = 0; i < r->nf; i++)
        fprintf(out, "  %-26s %-4s %s\n  %26s      how: %s\n", r->f[i].name, r->f[i].ok ? "" : "[?]",
                r->f[i].value, "", r->f[i].method);
    if (r->integer)
        fprintf(out, "  fitted model: integer: exact products, %s%s\n",
                r->int_saturates ? "clamped to int32" : "wrapped modulo 2^32",
                r->int_stepwise ? " after each addition" : " once, after the exact sum");
    else
        fprintf(out, "  fitted model: %s\n", desc);
    fprintf(out, "  replay: %zu/%zu random vectors and %zu/%zu in all differ from the fitted model%s%s\n",
            r->random_mismatches, r->n_random, r->total_mismatches, r->n_total,
            r->mismatch_example[0] ? "; first: " : "", r->mismatch_example);
}
