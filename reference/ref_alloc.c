/* ref_alloc.c — the reference's large arrays (slices, the double-double state, products,
 * results: up to ~2.6 GB at 8192^2) from anonymous mappings advised for transparent huge pages.
 *
 * Why: with 4 KiB pages the first touch of those arrays by the worker threads dominated the
 * certified path's "combine" stage (perf on 1024^3, 2 threads: page faults, page-table lock
 * contention and TLB shootdowns in accumulate_rows ~30% of all cycles). Linux's default THP mode
 * is "madvise": only advised regions get 2 MiB pages, 512x fewer faults. The kernel zero-fills
 * the mapping lazily, so a zeroed array costs nothing until the threads touch it, in parallel.
 * Small requests use calloc/malloc. Either way a 64-byte header says how to free.
 */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "reference/ref_internal.h"

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
