/* blas.c — OpenBLAS's thread pool kept safe for fork() and for memory limits (mmaprobe/core.h).
 *
 * OpenBLAS (the pthreads build) starts its worker threads in its library constructor, before
 * main(); each worker first allocates a work buffer and retries a failed allocation forever, and
 * OpenBLAS's pthread_atfork handler joins every worker. Under an address-space limit a worker
 * never gets its buffer, so every fork() of the program hangs, and a forked child whose pool
 * restarts hangs in its first BLAS call. Hence: the program re-executes itself once with a pool
 * of one thread (no worker alive when the parent forks), and a process about to call BLAS asks
 * mmp_blas_fit_threads() for its workers, as many as their buffers fit in the memory left.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mmaprobe/core.h"

#ifdef MMP_HAVE_OPENBLAS
/* OpenBLAS's own controls (declared here: a netlib cblas.h may come first on the path). */
void openblas_set_num_threads(int threads);
int openblas_get_num_threads(void);

/* Each thread's work buffer (OpenBLAS's BUFFER_SIZE: 128 MiB in its x86-64 builds), plus a
 * worker's stack and malloc arena, plus room for what the caller allocates next. */
#define BUFFER_BYTES ((size_t)128 << 20)
#define WORKER_EXTRA ((size_t)16 << 20)
#define HEADROOM ((size_t)32 << 20)
#define ENV_THREADS "MMP_OPENBLAS_THREADS"

static int fitted;   /* threads whose buffers this process has made room for (0: none yet) */

/* Whether bytes of private writable memory can be mapped now (counted against RLIMIT_AS,
 * RLIMIT_DATA and a strict overcommit limit as OpenBLAS's buffers are; no page is touched). */
static int room_for(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return 0;
    munmap(p, bytes);
    return 1;
}

static size_t need(int threads) { return (size_t)threads * (BUFFER_BYTES + WORKER_EXTRA) + HEADROOM; }

static int chosen_threads(void)
{
    const char *e = getenv(ENV_THREADS);
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (!*end && v > 0 && v <= 4096) return (int)v;
    }
    int n = openblas_get_num_threads();
    return n > 0 ? n : 1;
}
#endif

void mmp_blas_reexec_single(char **argv)
{
#ifdef MMP_HAVE_OPENBLAS
    int n = openblas_get_num_threads();
    if (n <= 1) return;
    const char *one = getenv("OPENBLAS_NUM_THREADS");
    if (one && strcmp(one, "1") == 0) return;   /* already re-executed: OpenBLAS ignored it; go on */
    char count[16];
    snprintf(count, sizeof count, "%d", n);
    if (!getenv(ENV_THREADS)) setenv(ENV_THREADS, count, 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* no /proc, or no memory for the exec: run on with the pool as it is */
#else
    (void)argv;
#endif
}

mmp_status mmp_blas_fit_threads(int want)
{
#ifdef MMP_HAVE_OPENBLAS
    if (want <= 0) want = chosen_threads();
    int n = want;
    if (n > fitted) {
        while (n > fitted && n > 1 && !room_for(need(n))) n = n / 2 > fitted ? n / 2 : fitted;
        if (n == 1 && fitted == 0 && !room_for(need(1)))
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "no room for OpenBLAS's %zu MiB work buffer under the memory limit",
                           BUFFER_BYTES >> 20);
        if (n < 1) n = 1;
        if (n > fitted) fitted = n;
    }
    openblas_set_num_threads(n);
    return MMP_STATUS_OK;
#else
    (void)want;
    return MMP_STATUS_OK;
#endif
}
