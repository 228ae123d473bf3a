/* runner_common.c — the pieces every case path of the runner shares, below all of them: the
 * clock, the message builder, the result record's identity, SKIP, the device query (once per
 * process), sticky CUDA errors, the case stream. (The runner child's channel to the parent, which
 * the case paths report their kernel phase through, is runner_channel.c.)
 *
 * Calls flow one way: runner_run.c (the parent and its children) -> runner_case.c (a GEMM case)
 * -> runner_operator.c (an operator case) -> this file. A runner child opens the channel
 * (mmp_runner_channel_open) and the case paths report their kernel phase through it
 * (mmp_runner_phase, runner_channel.c), so the parent can time out a launch; outside a child
 * both are no-ops.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "mmaprobe/cuda_check.h"
#endif
#include "runner_internal.h"

double mmp_runner_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

void mmp_runner_say(mmp_case_result *r, const char *fmt, ...)
{
    size_t used = strlen(r->message);
    if (used + 3 >= sizeof r->message) return;
    if (used) { strcpy(r->message + used, "; "); used += 2; }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message + used, sizeof r->message - used, fmt, ap);
    va_end(ap);
}

void mmp_runner_result_for_case(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o)
{
    mmp_case_result_init(r);
    snprintf(r->id, sizeof r->id, "%s", c->id);
    snprintf(r->kernel, sizeof r->kernel, "%s", c->kernel->name ? c->kernel->name : "?");
    snprintf(r->family, sizeof r->family, "%s", c->kernel->family ? c->kernel->family : "plugin");
    mmp_case_precision(r->precision, sizeof r->precision, c->kernel);
    snprintf(r->dist, sizeof r->dist, "%s", mmp_dist_name(c->dist));
    snprintf(r->suite, sizeof r->suite, "%s", c->suite);
    r->m = c->m; r->n = c->n; r->k = c->k;
    r->lda = c->lda; r->ldb = c->ldb; r->ldc = c->ldc; r->ldd = c->ldd;
    r->seed = c->seed;
    snprintf(r->tolerance, sizeof r->tolerance, "%s", c->op ? "budget" : mmp_tolerance_name(o->tol.mode));
    r->shard_index = o->shard_index;
    r->shard_count = o->shard_count;
    r->device = c->kernel->where == MMP_KERNEL_DEVICE ? o->device : -1;
}

int mmp_runner_skip(mmp_case_result *r, const char *why)
{
    r->verdict = MMP_VERDICT_SKIP;
    r->reasons |= MMP_REASON_UNSUPPORTED;
    snprintf(r->message, sizeof r->message, "%s", why);
    return 1;
}

/* ---- the device: queried once per process (this is a child of the runner) ---- */
static int dev_state = -1, dev_cc;
static char dev_reason[160];

static void device_query(const mmp_runner_options *o)
{
    if (dev_state >= 0) return;
    if (o->have_device == 0) {
        dev_state = 0;
        snprintf(dev_reason, sizeof dev_reason, "%s", o->no_device_reason[0] ? o->no_device_reason : "no CUDA device");
        return;
    }
    if (o->have_device == 1 && o->device_cc > 0) {   /* known by the caller (and in tests) */
        dev_state = 1;
        dev_cc = o->device_cc;
        return;
    }
#ifdef MMP_HAVE_CUDA
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= o->device) {
        dev_state = 0;
        snprintf(dev_reason, sizeof dev_reason, "no CUDA device%s%s", e != cudaSuccess ? ": " : "",
                 e != cudaSuccess ? cudaGetErrorString(e) : "");
        return;
    }
    struct cudaDeviceProp p;
    if (cudaSetDevice(o->device) != cudaSuccess || cudaGetDeviceProperties(&p, o->device) != cudaSuccess) {
        dev_state = 0;
        snprintf(dev_reason, sizeof dev_reason, "no CUDA device: cannot use device %d", o->device);
        return;
    }
    dev_state = 1;
    dev_cc = p.major * 10 + p.minor;
#else
    dev_state = 0;
    snprintf(dev_reason, sizeof dev_reason, "no CUDA device (built without CUDA)");
#endif
}

int mmp_runner_device_skip(mmp_case_result *r, const mmp_runner_options *o, int min_cc, int arch_specific)
{
    device_query(o);
    if (!dev_state) return mmp_runner_skip(r, dev_reason);
    if ((arch_specific && dev_cc != min_cc) || dev_cc < min_cc) {
        char why[96];
        snprintf(why, sizeof why, "needs sm_%d%s, device is sm_%d", min_cc, arch_specific ? "a" : "", dev_cc);
        return mmp_runner_skip(r, why);
    }
    return 0;
}

int mmp_runner_device_cc(const mmp_runner_options *o)
{
    device_query(o);
    return dev_state == 1 ? dev_cc : 0;
}

#ifdef MMP_HAVE_CUDA
int mmp_runner_cuda_sticky(int err)
{
    cudaError_t e = (cudaError_t)err;
    return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorHardwareStackError ||
           e == cudaErrorIllegalInstruction || e == cudaErrorMisalignedAddress || e == cudaErrorInvalidAddressSpace ||
           e == cudaErrorInvalidPc || e == cudaErrorAssert || e == cudaErrorLaunchTimeout ||
           e == cudaErrorECCUncorrectable || e == cudaErrorUnknown;
}

mmp_status mmp_runner_stream(void **stream)
{
    static cudaStream_t s;
    if (!s) MMP_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = s;
    return MMP_STATUS_OK;
}
#endif
