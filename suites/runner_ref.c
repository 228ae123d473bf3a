/* runner_ref.c — the reference of a case: the certified reference GEMM (reference.h) on the
 * stored inputs: exact D rounded to binary64 and to the output format, and S_ij for the bounds.
 * Device kernels use its cuBLAS path (we are in the runner's child, which never forks), host
 * kernels and machines without a device the certified CPU path (Ozaki + OpenBLAS, MPFR for
 * undecided elements). */
#include <string.h>

#include "mmaprobe/reference.h"
#include "runner_internal.h"

mmp_status mmp_ref_compute(mmp_ref *ref, const mmp_case *c, mmp_buffer *a, mmp_buffer *b,
                           mmp_buffer *cc, int device, int keep_device, mmp_status (*host_operands)(void *),
                           void *host_ctx)
{
    (void)keep_device;   /* device builds only */
    memset(ref, 0, sizeof *ref);
    mmp_ref_result *r = &ref->res;
    mmp_ref_result_init(r);
    mmp_gemm g;
    mmp_case_gemm(&g, c);
    if (!cc) g.beta = 0;
    mmp_ref_options o;
    mmp_ref_options_init(&o);
    o.want_absbound = 1;
    o.device = device;
    mmp_status st = MMP_STATUS_UNSUPPORTED;
#ifdef MMP_HAVE_CUDA
    if (c->kernel->where == MMP_KERNEL_DEVICE) {
        o.path = MMP_REF_PATH_CUDA;
        /* resident buffers (device stages): the reference reads the device copies, no upload */
        if (a->dev_pristine && b->dev_pristine && (!cc || cc->dev_pristine)) {
            o.dev_a = mmp_buffer_kernel_ptr(a);
            o.dev_b = mmp_buffer_kernel_ptr(b);
            o.dev_c = cc ? mmp_buffer_kernel_ptr(cc) : NULL;
            o.keep_device = keep_device;
            o.host_operands = host_operands;
            o.host_ctx = host_ctx;
        }
        st = mmp_ref_gemm(r, mmp_buffer_host(a), mmp_buffer_host(b), cc ? mmp_buffer_host(cc) : NULL, &g, &o);
        if (st != MMP_STATUS_OK) {   /* fall back to the CPU path */
            mmp_ref_result_clear(r);
            mmp_ref_result_init(r);
        }
    }
#endif
    if (st != MMP_STATUS_OK) {
        if (host_operands) MMP_TRY(host_operands(host_ctx));   /* the CPU path reads the host copies */
        o.host_operands = NULL;
        o.path = MMP_REF_PATH_CERTIFIED;
        MMP_TRY(mmp_ref_gemm(r, mmp_buffer_host(a), mmp_buffer_host(b), cc ? mmp_buffer_host(cc) : NULL, &g, &o));
    }
    ref->exact = r->d64;
    ref->absdot = r->absbound;
    ref->want_out = r->dout;
    ref->dev_exact = r->dev_d64;
    ref->dev_absdot = r->dev_absbound;
    ref->dev_want_out = r->dev_dout;
    ref->n_mpfr = r->n_mpfr;
    ref->n_exact = r->n_exact;
    ref->n_dot = r->split.n_dot;
    const mmp_format_info *acc = mmp_format_get_info((mmp_format)c->kernel->acc_format);
    ref->int_acc = acc && !acc->is_float;
    return MMP_STATUS_OK;
}

void mmp_ref_clear(mmp_ref *ref)
{
    if (ref->exact || ref->want_out || ref->dev_exact) mmp_ref_result_clear(&ref->res);
    memset(ref, 0, sizeof *ref);
}
