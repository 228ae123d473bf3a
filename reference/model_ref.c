/* model_ref.c — the tensor-core model as a second reference (model.h, mmp_model_reference):
 * what a correct kernel of one instruction family gets on these inputs, element by element,
 * with the K products in their natural order, and the scale of its rounding errors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/gemm.h"
#include "mmaprobe/model.h"

typedef struct {
    const mmp_model_ref_input *in;
    double *d, *sigma;
    int chain;                     /* 1: blocks chained one call at a time (sigma per block) */
    double unit;                   /* rounding unit of one block result */
    const double *bt;              /* B transposed to binary64 (n x k), or NULL: loaded per use */
    int failed;
} mref_job;

static double load(const void *p, mmp_format f, mmp_layout l, int64_t ld, int64_t i, int64_t j)
{
    return mmp_format_load(p, mmp_gemm_index(l, ld, i, j), f);
}

static void mref_rows(void *ctx, int64_t i0, int64_t i1, int tid)
{
    (void)tid;
    mref_job *J = ctx;
    const mmp_model_ref_input *in = J->in;
    const mmp_model_params *p = in->params;
    int64_t k = in->k;
    double *a = malloc((size_t)k * sizeof *a), *b = malloc((size_t)k * sizeof *b);
    if (!a || !b) { J->failed = 1; free(a); free(b); return; }
    for (int64_t i = i0; i < i1; i++) {
        for (int64_t t = 0; t < k; t++) a[t] = load(in->a, in->fa, in->la, in->lda, i, t);
        for (int64_t j = 0; j < in->n; j++) {
            if (J->bt) memcpy(b, J->bt + j * k, (size_t)k * sizeof *b);
            else
                for (int64_t t = 0; t < k; t++) b[t] = load(in->b, in->fb, in->lb, in->ldb, t, j);
            double c = in->beta != 0 && in->c ? load(in->c, in->fc, in->lc, in->ldc, i, j) : 0.0;
            /* C enters as the accumulator when the GEMM is plain A B + C (what the instruction
             * does); otherwise the model gives A B and alpha, beta are applied in binary64 */
            int c_in = in->alpha == 1.0 && in->beta == 1.0;
            double acc = c_in ? c : 0.0, s2 = 0, v = 0;
            if (J->chain) {
                for (int64_t t = 0; t < k; t += p->block_size) {
                    int nb = (int)(k - t < p->block_size ? k - t : p->block_size);
                    if (mmp_model_dot(&acc, a + t, b + t, acc, nb, p) != MMP_STATUS_OK) { J->failed = 1; break; }
                    if (!isfinite(acc)) break;
                    /* the block's scale: its result, or the sum of its products' magnitudes
                     * when they cancel (a kernel rounding partial sums inside the block then
                     * errs on that larger scale) */
                    double sp = 0;
                    for (int q = 0; q < nb; q++) sp += fabs(a[t + q] * b[t + q]);
                    double sc = fabs(acc) > sp ? fabs(acc) : sp;
                    s2 += (J->unit * sc) * (J->unit * sc);
                }
            } else if (mmp_model_dot(&acc, a, b, acc, (int)k, p) != MMP_STATUS_OK) {
                J->failed = 1;
            } else {
                double s = 0;
                for (int64_t t = 0; t < k; t++) s += fabs(a[t] * b[t]);
                s2 = (J->unit * s) * (J->unit * s);
            }
            v = c_in ? acc : in->alpha * acc + (in->beta != 0 ? in->beta * c : 0.0);
            J->d[i * in->n + j] = v;
            if (J->sigma) J->sigma[i * in->n + j] = fabs(in->alpha) * sqrt(s2);
        }
    }
    free(a);
    free(b);
}

mmp_status mmp_model_reference(double *d, double *sigma, const mmp_model_ref_input *in)
{
    if (!d || !in || !in->params || !in->a || !in->b || in->m <= 0 || in->n <= 0 || in->k <= 0 || in->k > (1 << 30))
        return MMP_ERR(MMP_STATUS_INVALID, "model reference: bad arguments");
    const mmp_model_params *p = in->params;
    MMP_TRY(mmp_model_params_check(p));
    if (in->fa != p->in_format)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "model reference: inputs %d are not the model's %d", (int)in->fa,
                       (int)p->in_format);
    mref_job J = {in, d, sigma, 0, 0, NULL, 0};
    /* B decoded once (the products outnumber B's elements m times) when it is not huge */
    double *bt = in->n * in->k <= ((int64_t)1 << 26) ? malloc((size_t)(in->n * in->k) * sizeof *bt) : NULL;
    if (bt)
        for (int64_t j = 0; j < in->n; j++)
            for (int64_t t = 0; t < in->k; t++) bt[j * in->k + t] = load(in->b, in->fb, in->lb, in->ldb, t, j);
    J.bt = bt;
    /* one block per call reproduces the whole chain exactly when nothing but the accumulator
     * links the blocks (no promotion, interleaving, FADD of c or zero accumulator) */
    J.chain = !p->promote && !p->interleave && !p->c_fadd && !p->c_unused;
    int f = p->result_frac_bits > 0 ? p->result_frac_bits : p->out_format == MMP_FORMAT_FP16 ? 10 : 23;
    /* a block result's rounding error: half a unit of its last kept bit (nearest), a whole
     * one (toward zero); relative to the result, at most 2^-(f+1) resp. 2^-f */
    J.unit = p->out_round == MMP_ROUND_NEAREST_EVEN ? ldexp(1.0, -(f + 1)) : ldexp(1.0, -f);
    mmp_parallel_for(mmp_parallel_threads(0), in->m, 1, mref_rows, &J);
    free(bt);
    if (J.failed) return MMP_ERR(MMP_STATUS_NO_MEMORY, "model reference: out of memory or model error");
    return MMP_STATUS_OK;
}
