/* ref_gemm.c — the reference GEMM's entry points (include/mmaprobe/reference.h): checks the
 * problem, picks a path and runs it. The top of reference/: it calls the paths (ref_mpfr.c,
 * ref_integer.c, ref_certified.c, the device paths) and the shared pieces below them
 * (ref_base.c, ref_absbound.c); nothing in reference/ calls back into it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mmaprobe/core.h"
#include "ref_internal.h"

#ifdef MMP_HAVE_OPENBLAS
/* OpenBLAS's own controls (declared here: a netlib cblas.h may come first on the path). */
char *openblas_get_corename(void);
#endif

const char *mmp_ref_blas_name(void)
{
#ifdef MMP_HAVE_OPENBLAS
    static char name[64];
    snprintf(name, sizeof name, "OpenBLAS (%s)", openblas_get_corename());
    return name;
#else
    return "reference CBLAS (not OpenBLAS: slow, no thread control)";
#endif
}

/* Which device path: 2, 1, 0 (not the device path) or -1 (version 2 forced but not possible).
 * Version 2 takes every float or integer format; it leaves to version 1 (or the host) what
 * the host handles anyway: force_mpfr, non-finite alpha/beta, and exact integer GEMMs unless
 * the results are to stay on the device (keep_device: then version 2 decides them too, its
 * slices' DGEMMs exact on integers, and there is no i64). */
static int device_version(const mmp_ref_options *o, const mmp_gemm *g, int integer)
{
    if (o->path != MMP_REF_PATH_CUDA) return 0;
    int want = o->device_version;
    const char *e = getenv("MMP_REF_DEVICE_VERSION");
    if (want == 0 && e && (*e == '1' || *e == '2')) want = *e - '0';
    if (want == 1) return 1;
    int fits = (!integer || o->keep_device) && !o->force_mpfr && isfinite(g->alpha) && isfinite(g->beta);
    if (want == 2 && !fits) return -1;
    return fits ? 2 : 1;
}

mmp_status mmp_ref_gemm(mmp_ref_result *r, const void *a, const void *b, const void *c,
                        const mmp_gemm *g, const mmp_ref_options *o)
{
    if (!r) return MMP_ERR(MMP_STATUS_INVALID, "reference: NULL result");
    mmp_ref_options def;
    if (!o) { mmp_ref_options_init(&def); o = &def; }
    MMP_TRY(mmp_gemm_check(g));
    if (!a || !b) return MMP_ERR(MMP_STATUS_INVALID, "reference: NULL %s matrix", !a ? "A" : "B");
    if (g->beta != 0.0 && !c) return MMP_ERR(MMP_STATUS_INVALID, "reference: NULL C with beta != 0");
    if (o->path != MMP_REF_PATH_CERTIFIED && o->path != MMP_REF_PATH_MPFR && o->path != MMP_REF_PATH_CUDA)
        return MMP_ERR(MMP_STATUS_INVALID, "reference: unknown path %d", (int)o->path);
    if ((uint64_t)g->m * (uint64_t)g->n > ((uint64_t)1 << 40) || g->m > INT32_MAX || g->n > INT32_MAX ||
        g->k > INT32_MAX)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: %lldx%lldx%lld is too large",
                       (long long)g->m, (long long)g->n, (long long)g->k);
    double t0 = mmp_clock_now();
    int threads = mmp_parallel_threads(o->threads);
    MMP_TRY(mmp_blas_fit_threads(o->threads));   /* else OpenBLAS's own default; fewer when memory is short */
    int integer = ref_integer_eligible(g);
    int version = device_version(o, g, integer);
    if (version == 2) integer = 0;   /* version 2 has no i64 */
    MMP_TRY(ref_result_alloc(r, g->m, g->n, o->want_absbound, integer));
    r->is_integer = integer;
    r->path = o->path;
    if (version == 2) {   /* native operands straight to the device: no host load */
        mmp_status st = ref_cuda2_run(r, a, b, c, g, o, threads);
        if (st != MMP_STATUS_OK) { mmp_ref_result_clear(r); return st; }
        r->time.total_s = mmp_clock_now() - t0;
        return MMP_STATUS_OK;
    }
    if (o->host_operands) {   /* every other path reads them now */
        mmp_status hs = o->host_operands(o->host_ctx);
        if (hs != MMP_STATUS_OK) { mmp_ref_result_clear(r); return hs; }
    }
    if (version < 0) {
        mmp_ref_result_clear(r);
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "reference: device path version 2 cannot take this problem "
                       "(integer inputs with integer alpha/beta, force_mpfr or a non-finite alpha/beta)");
    }
    ref_data d;
    mmp_status st = ref_data_load(&d, a, b, c, g, threads);
    if (st != MMP_STATUS_OK) { mmp_ref_result_clear(r); return st; }
    r->time.convert_s = mmp_clock_now() - t0;
    r->split.load_s = r->time.convert_s;
    int handled = 0;
    if (o->path == MMP_REF_PATH_MPFR) {
        st = ref_mpfr_run(r, &d);
        handled = 1;
    } else if (integer && !o->force_mpfr) {
        st = ref_integer_run(r, &handled, &d, o);   /* host, both certified paths */
    }
    int on_device = 0;
    if (st == MMP_STATUS_OK && !handled) {
        on_device = o->path == MMP_REF_PATH_CUDA;
        st = on_device ? ref_cuda_run(r, &d, o) : ref_certified_run(r, &d, o);
    }
    if (st == MMP_STATUS_OK && o->want_absbound && !on_device)   /* the device path does its own */
        st = ref_absbound_cpu(r, &d);
    ref_data_free(&d);
    if (st != MMP_STATUS_OK) { mmp_ref_result_clear(r); return st; }
    r->time.total_s = mmp_clock_now() - t0;
    return MMP_STATUS_OK;
}

