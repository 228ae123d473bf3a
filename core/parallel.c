/* parallel.c — the one parallel-for: fn over [0, n) in fixed chunks, dynamically scheduled on
 * a number of threads (the caller works too), and the monotonic clock. Callers that need
 * results independent of the thread count combine per-chunk partials in chunk order. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mmaprobe/core.h"

double mmp_clock_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int mmp_parallel_threads(int requested)
{
    if (requested > 0) return requested;
    const char *e = getenv("MMP_THREADS");   /* tests compare 1 thread with several */
    int t = e && *e ? atoi(e) : 0;
    if (t > 0 && t <= MMP_PARALLEL_MAX_THREADS) return t;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > MMP_PARALLEL_MAX_THREADS) n = MMP_PARALLEL_MAX_THREADS;
    return n > 0 ? (int)n : 1;
}

typedef struct {
    mmp_parallel_fn fn;
    void *ctx;
    int64_t n, chunk;
    atomic_llong next;
} par_job;

typedef struct {
    par_job *job;
    int tid;
} par_arg;

static void *par_worker(void *p)
{
    par_arg *a = p;
    par_job *j = a->job;
    for (;;) {
        int64_t b = atomic_fetch_add(&j->next, j->chunk);
        if (b >= j->n) break;
        int64_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
        j->fn(j->ctx, b, e, a->tid);
    }
    return NULL;
}

void mmp_parallel_for(int threads, int64_t n, int64_t chunk, mmp_parallel_fn fn, void *ctx)
{
    if (n <= 0) return;
    if (chunk < 1) chunk = 1;
    int64_t chunks = (n + chunk - 1) / chunk;
    if (threads > chunks) threads = (int)chunks;
    if (threads <= 1) {
        fn(ctx, 0, n, 0);
        return;
    }
    if (threads > MMP_PARALLEL_MAX_THREADS) threads = MMP_PARALLEL_MAX_THREADS;
    par_job job = {fn, ctx, n, chunk, 0};
    pthread_t th[MMP_PARALLEL_MAX_THREADS];
    par_arg args[MMP_PARALLEL_MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads; t++) {
        args[t] = (par_arg){&job, t};
        if (pthread_create(&th[t], NULL, par_worker, &args[t]) != 0) break;
        started = t;
    }
    args[0] = (par_arg){&job, 0};
    par_worker(&args[0]);   /* the caller works too; a failed create just means fewer threads */
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
}
