/* ref_absbound.c — the metrics' bound |alpha| (|A||B|)_ij + |beta| |C_ij| on the host: one
 * DGEMM of the absolute values, then ref_absbound_one (ref_internal.h) per element. The device
 * path computes |A||B| itself and only calls ref_absbound_finish. */
#include <math.h>
#include <stdlib.h>

#include <cblas.h>

#include "mmaprobe/core.h"
#include "ref_internal.h"

typedef struct {
    mmp_ref_result *r;
    const ref_data *d;
    const double *ab;   /* row-major fl(|A||B|) */
} abs_job;

static void abs_rows(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    abs_job *j = ctx;
    const ref_data *d = j->d;
    double K = (double)d->k;
    double aa = fabs(d->g->alpha), bb = d->c64 ? fabs(d->g->beta) : 0.0;
    for (int64_t i = b; i < e; i++)
        for (int64_t jj = 0; jj < d->n; jj++) {
            j->r->absbound[i * d->n + jj] =
                ref_absbound_one(j->ab[i * d->n + jj], K, aa, bb, d->c64 ? fabs(d->c64[i * d->n + jj]) : 0.0);
        }
}

mmp_status ref_absbound_cpu(mmp_ref_result *r, const ref_data *d)
{
    size_t na = (size_t)d->m * d->k, nb = (size_t)d->k * d->n, nc = (size_t)d->m * d->n;
    double *aa = malloc(na * sizeof(double)), *ab = malloc(nb * sizeof(double));
    double *cc = malloc(nc * sizeof(double));
    if (!aa || !ab || !cc) {
        free(aa); free(ab); free(cc);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "reference: cannot allocate the |A||B| bound");
    }
    for (size_t i = 0; i < na; i++) aa[i] = fabs(d->a64[i]);
    for (size_t i = 0; i < nb; i++) ab[i] = fabs(d->b64[i]);
    /* row-major |A||B| = column-major (|B|^T |A|^T) */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)d->n, (int)d->m, (int)d->k, 1.0, ab,
                (int)d->k, aa, (int)d->k, 0.0, cc, (int)d->n);
    ref_absbound_finish(r, d, cc);
    free(aa); free(ab); free(cc);
    return MMP_STATUS_OK;
}

void ref_absbound_finish(mmp_ref_result *r, const ref_data *d, const double *ab)
{
    abs_job j = {r, d, ab};
    mmp_parallel_for(d->threads, d->m, 8, abs_rows, &j);
}
