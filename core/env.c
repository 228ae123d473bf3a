/* env.c — capture the environment header (GPU, CC, driver, CUDA, cuBLAS, MPFR, Check, git SHA).
 *
 * CUDA is touched only in a forked child that writes what it found through a pipe, so the
 * calling process never holds a CUDA context and can fork safely afterwards.
 */
#include <check.h>
#include <errno.h>
#include <mpfr.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>

#include "mmp_gitsha.h"   /* MMP_GIT_SHA, written at build time (cmake/gitsha.cmake) */
#include "mmaprobe/core.h"

#ifdef MMP_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

/* Runs in the child: fills the CUDA part of e. Returns 0 if a device is usable. */
static int query_cuda(mmp_env *e, int device)
{
    int n = 0, v = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (cudaDriverGetVersion(&v) == cudaSuccess && v)
        snprintf(e->driver, sizeof e->driver, "CUDA %d.%d", v / 1000, (v % 1000) / 10);
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        snprintf(e->runtime, sizeof e->runtime, "%d.%d", v / 1000, (v % 1000) / 10);
    if (err != cudaSuccess || n == 0) {
        snprintf(e->no_device_reason, sizeof e->no_device_reason, "no CUDA device (%s)",
                 err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");
        return 1;
    }
    if (device < 0) device = 0;
    if (device >= n) {
        snprintf(e->no_device_reason, sizeof e->no_device_reason,
                 "no CUDA device %d (this machine has %d)", device, n);
        return 1;
    }
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        snprintf(e->no_device_reason, sizeof e->no_device_reason, "cannot read device %d's properties", device);
        return 1;
    }
    snprintf(e->gpu, sizeof e->gpu, "%s", p.name);
    e->cc_major = p.major;
    e->cc_minor = p.minor;
    e->sm_count = p.multiProcessorCount;
    e->device = device;
    char drv[80];
    if (cudaDriverGetVersion(&v) == cudaSuccess) snprintf(drv, sizeof drv, "CUDA %d.%d", v / 1000, (v % 1000) / 10);
    else snprintf(drv, sizeof drv, "?");
    /* The kernel driver's version string (e.g. 580.159.04) when the proc file exists. */
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    char line[256];
    if (f && fgets(line, sizeof line, f)) {
        /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module [for x86_64]  580.159.04  ..." */
        char ver[32] = "";
        for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
            unsigned a, b;
            if (sscanf(tok, "%u.%u", &a, &b) == 2 && strchr(tok, '.')) {
                snprintf(ver, sizeof ver, "%s", tok);
                break;
            }
        }
        if (ver[0]) snprintf(e->driver, sizeof e->driver, "%s (%s)", ver, drv);
        else snprintf(e->driver, sizeof e->driver, "%s", drv);
    } else {
        snprintf(e->driver, sizeof e->driver, "%s", drv);
    }
    if (f) fclose(f);
    cublasHandle_t h;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
        int cv = 0;
        cublasGetVersion(h, &cv);
        snprintf(e->cublas, sizeof e->cublas, "%d.%d.%d", cv / 10000, (cv % 10000) / 100, cv % 100);
        cublasDestroy(h);
    }
    return 0;
}
#endif

static void fill_host(mmp_env *e, uint64_t seed, int argc, char **argv)
{
    snprintf(e->mpfr, sizeof e->mpfr, "%s", mpfr_get_version());
    snprintf(e->check, sizeof e->check, "%d.%d.%d", CHECK_MAJOR_VERSION, CHECK_MINOR_VERSION,
             CHECK_MICRO_VERSION);
    snprintf(e->git_sha, sizeof e->git_sha, "%s", MMP_GIT_SHA);
    if (gethostname(e->hostname, sizeof e->hostname) != 0) snprintf(e->hostname, sizeof e->hostname, "?");
    e->hostname[sizeof e->hostname - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(e->started, sizeof e->started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    e->seed = seed;
    size_t used = 0;
    e->command[0] = '\0';
    for (int i = 0; i < argc && argv; i++) {
        int w = snprintf(e->command + used, sizeof e->command - used, "%s%s", i ? " " : "", argv[i]);
        if (w < 0 || (size_t)w >= sizeof e->command - used) break;
        used += (size_t)w;
    }
}

mmp_status mmp_env_capture(mmp_env *e, int device, uint64_t seed, int argc, char **argv)
{
    mmp_env_init(e);
    fill_host(e, seed, argc, argv);
#ifndef MMP_HAVE_CUDA
    (void)device;
    snprintf(e->no_device_reason, sizeof e->no_device_reason, "built without CUDA");
    return MMP_STATUS_NO_DEVICE;
#else
    int fds[2];
    if (pipe(fds) != 0) return MMP_ERR(MMP_STATUS_INTERNAL, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]); close(fds[1]);
        return MMP_ERR(MMP_STATUS_INTERNAL, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        mmp_env child = *e;
        int rc = query_cuda(&child, device);
        ssize_t w = write(fds[1], &child, sizeof child);
        close(fds[1]);
        _exit(w == (ssize_t)sizeof child ? rc : 2);
    }
    close(fds[1]);
    mmp_env got;
    size_t have = 0;
    while (have < sizeof got) {
        ssize_t r = read(fds[0], (char *)&got + have, sizeof got - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        have += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (have == sizeof got) *e = got;
    else snprintf(e->no_device_reason, sizeof e->no_device_reason,
                  "the CUDA query process died (%s)", WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no answer");
    if (have != sizeof got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        e->device = -1;
        return MMP_STATUS_NO_DEVICE;
    }
    return MMP_STATUS_OK;
#endif
}

void mmp_env_print(FILE *out, const mmp_env *e, const char *prefix)
{
    const char *p = prefix ? prefix : "";
    if (e->device >= 0)
        fprintf(out, "%sgpu: %s (device %d, cc %d.%d, %d SMs)\n", p, e->gpu, e->device, e->cc_major,
                e->cc_minor, e->sm_count);
    else
        fprintf(out, "%sgpu: none (%s)\n", p, e->no_device_reason[0] ? e->no_device_reason : "no device");
    fprintf(out, "%sdriver: %s  cuda runtime: %s  cublas: %s\n", p, e->driver[0] ? e->driver : "-",
            e->runtime[0] ? e->runtime : "-", e->cublas[0] ? e->cublas : "-");
    fprintf(out, "%smpfr: %s  check: %s  git: %s  host: %s\n", p, e->mpfr, e->check, e->git_sha, e->hostname);
    if (e->blas[0]) fprintf(out, "%sblas: %s\n", p, e->blas);
    fprintf(out, "%sstarted: %s  seed: %llu\n", p, e->started, (unsigned long long)e->seed);
    if (e->command[0]) fprintf(out, "%scommand: %s\n", p, e->command);
}
