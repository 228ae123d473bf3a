/* ref_alloc.c — the reference's large arrays (slices, the double-double state, products,
 * results: up to ~2.6 GB at 8192^2) from anonymous mappings advised for transparent huge pages.
 *
 * Why: with 4 KiB pages the first touch of those arrays by the worker threads dominates the
 * certified path's "combine" stage (perf shows page faults, page-table lock contention and TLB
 * shootdowns in accumulate_rows as a large share of all cycles). Linux's default THP mode
 * is "madvise": only advised regions get 2 MiB pages, 512x fewer faults. The kernel zero-fills
 * the mapping lazily, so a zeroed array costs nothing until the threads touch it, in parallel.
 * Small requests use calloc/malloc. Either way a 64-byte header says how to free.
 */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ref_internal.h"

#define HUGE_SZ ((size_t)2 << 20)
#define BIG_MIN ((size_t)8 << 20)
#define HDR 64

typedef struct {
    void *base;           /* what to free / unmap */
    size_t len;           /* mapping length (0: from malloc) */
} big_hdr;

void *ref_big_alloc(size_t bytes, int zero)
{
    if (bytes < BIG_MIN) {
        char *q = zero ? calloc(1, bytes + HDR) : malloc(bytes + HDR);
        if (!q) return NULL;
        big_hdr h = {q, 0};
        memcpy(q, &h, sizeof h);
        return q + HDR;
    }
    size_t len = bytes + 2 * HUGE_SZ;
    char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    uintptr_t data = ((uintptr_t)base + HDR + HUGE_SZ - 1) & ~(uintptr_t)(HUGE_SZ - 1);
#ifdef MADV_HUGEPAGE
    madvise((void *)data, (bytes + HUGE_SZ - 1) & ~(HUGE_SZ - 1), MADV_HUGEPAGE);   /* advice only */
#endif
    big_hdr h = {base, len};
    memcpy((char *)data - HDR, &h, sizeof h);
    return (void *)data;
}

void ref_big_free(void *p)
{
    if (!p) return;
    big_hdr h;
    memcpy(&h, (char *)p - HDR, sizeof h);
    if (h.len) munmap(h.base, h.len);
    else free(h.base);
}

/* ---- touching result arrays in the background (the device path's download) ----
 * The device path downloads d64 and dout (1 GB at 8192^2) into fresh mappings: their first
 * touch (the kernel zero-fills each page on its fault) would sit on the critical path of the
 * copy. ref_prefault_start writes one byte per 4 KiB in host threads while the device computes;
 * ref_prefault_join waits. The contents are unspecified either way (the copy overwrites them). */
#include <pthread.h>

typedef struct {
    pthread_t th;
    int started, threads;
    char *p[3];
    size_t n[3];
} prefault_job;

static void touch_range(void *ctx, int64_t b, int64_t e, int tid)
{
    (void)tid;
    prefault_job *j = ctx;
    for (int64_t page = b; page < e; page++) {
        int64_t off = page * 4096;
        for (int a = 0; a < 3; a++) {
            if (off < (int64_t)j->n[a]) j->p[a][off] = 0;
            off -= (int64_t)((j->n[a] + 4095) / 4096 * 4096);
            if (off < 0) break;
        }
    }
}

static void *prefault_main(void *arg)
{
    prefault_job *j = arg;
    size_t pages = 0;
    for (int a = 0; a < 3; a++) pages += (j->n[a] + 4095) / 4096;
    mmp_parallel_for(j->threads, (int64_t)pages, 512, touch_range, j);
    return NULL;
}

void *ref_prefault_start(void *p0, size_t n0, void *p1, size_t n1, void *p2, size_t n2, int threads)
{
    prefault_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->p[0] = p0; j->n[0] = p0 ? n0 : 0;
    j->p[1] = p1; j->n[1] = p1 ? n1 : 0;
    j->p[2] = p2; j->n[2] = p2 ? n2 : 0;
    j->threads = threads < 1 ? 1 : threads;
    j->started = pthread_create(&j->th, NULL, prefault_main, j) == 0;
    return j;
}

void ref_prefault_join(void *handle)
{
    prefault_job *j = handle;
    if (!j) return;
    if (j->started) pthread_join(j->th, NULL);
    else prefault_main(j);   /* no thread: do it now */
    free(j);
}
