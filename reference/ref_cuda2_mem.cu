/* ref_cuda2_mem.cu — where the device reference (version 2, ref_cuda2.cu, ref_cuda2_imma.cu)
 * gets its memory. A call makes a few dozen large, short-lived device arrays (the binary64
 * copies, slice planes, int32 products, the state); cudaMalloc maps each one and cudaFree waits
 * for the device and unmaps it, which at 8192^3 costs milliseconds a call. So they come from a
 * stream-ordered pool of the reference's own (one per device, on the legacy default stream that
 * every stage uses), which keeps its memory between calls; and the statistics that come back for
 * the plan land in pinned host buffers kept between calls (a pageable copy of a few MB is a
 * staged one, several times slower).
 *
 *   ref_mem_mark mk;  ref_cuda2_mem_begin(&mk);    // after cudaSetDevice: resets the watermarks
 *   void *p;  MMP_TRY(ref_cuda2_dalloc(&p, bytes)); ref_cuda2_mem_sample(&mk); ... ref_cuda2_dfree(p);
 *   int64_t peak = ref_cuda2_mem_end(&mk);         // most bytes in use at once; trims the pool
 *   void *h = ref_cuda2_pinned(slot, bytes);       // NULL: busy or not available, use calloc
 *   ref_cuda2_pinned_release(slot);
 *
 * The pool keeps at most MMP_REF_POOL_KEEP MiB between calls (default: 8192, or an eighth of
 * the device's memory when that is less, so that a small GPU keeps room for the next case's
 * buffers); MMP_REF_POOL_KEEP=0 returns everything after each call, and a device without
 * memory pools gets cudaMalloc. Arrays that outlive the call (keep_device's results) are plain
 * cudaMalloc, freed by their owner.
 * The peak (mmp_ref_result.device_peak_bytes) is the pool's high watermark plus the most that
 * cudaMemGetInfo saw in use outside the pool at the samples (cuBLAS's workspace).
 */
#include <atomic>
#include <cuda_runtime.h>
#include <mutex>
#include <stdlib.h>

#include "mmaprobe/cuda_check.h"
#include "ref_v2.h"

#define MAX_DEVICES 64

static std::mutex pool_lock;
static cudaMemPool_t pools[MAX_DEVICES];
static int pool_state[MAX_DEVICES];   /* 0 not tried, 1 pool, -1 none (cudaMalloc) */

static int current_device(void)
{
    int d = 0;
    if (cudaGetDevice(&d) != cudaSuccess) { (void)cudaGetLastError(); return -1; }
    return d >= 0 && d < MAX_DEVICES ? d : -1;
}

static cudaMemPool_t pool_of(int d)
{
    if (d < 0) return NULL;
    std::lock_guard<std::mutex> g(pool_lock);
    if (pool_state[d] == 0) {
        int ok = 0;
        pool_state[d] = -1;
        if (cudaDeviceGetAttribute(&ok, cudaDevAttrMemoryPoolsSupported, d) == cudaSuccess && ok) {
            cudaMemPoolProps pr = {};
            pr.allocType = cudaMemAllocationTypePinned;
            pr.location.type = cudaMemLocationTypeDevice;
            pr.location.id = d;
            uint64_t keep_all = UINT64_MAX;   /* nothing goes back at synchronisations: trimmed at the end */
            if (cudaMemPoolCreate(&pools[d], &pr) == cudaSuccess &&
                cudaMemPoolSetAttribute(pools[d], cudaMemPoolAttrReleaseThreshold, &keep_all) == cudaSuccess)
                pool_state[d] = 1;
        }
        (void)cudaGetLastError();
    }
    return pool_state[d] == 1 ? pools[d] : NULL;
}

extern "C" mmp_status ref_cuda2_dalloc(void **p, size_t bytes)
{
    cudaMemPool_t pool = pool_of(current_device());
    if (bytes == 0) bytes = 1;
    if (pool) MMP_CUDA_CHECK(cudaMallocFromPoolAsync(p, bytes, pool, 0));
    else MMP_CUDA_CHECK(cudaMalloc(p, bytes));
    return MMP_STATUS_OK;
}

extern "C" void ref_cuda2_dfree(void *p)
{
    if (!p) return;
    if (pool_of(current_device())) cudaFreeAsync(p, 0);
    else cudaFree(p);
}

static size_t pool_get(cudaMemPool_t pool, cudaMemPoolAttr a)
{
    uint64_t v = 0;
    if (pool && cudaMemPoolGetAttribute(pool, a, &v) != cudaSuccess) { (void)cudaGetLastError(); v = 0; }
    return (size_t)v;
}

extern "C" void ref_cuda2_mem_begin(ref_mem_mark *mk)
{
    size_t fr = 0, tot = 0;
    mk->device = current_device();
    mk->outside_max = 0;
    mk->ok = cudaMemGetInfo(&fr, &tot) == cudaSuccess;
    if (!mk->ok) (void)cudaGetLastError();
    mk->free0 = fr;
    mk->total = tot;
    cudaMemPool_t pool = pool_of(mk->device);
    uint64_t zero = 0;
    if (pool) (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero);   /* 0 resets it */
    mk->reserved0 = pool_get(pool, cudaMemPoolAttrReservedMemCurrent);
}

extern "C" void ref_cuda2_mem_sample(ref_mem_mark *mk)
{
    size_t fr = 0, tot = 0;
    if (!mk->ok || cudaMemGetInfo(&fr, &tot) != cudaSuccess) { (void)cudaGetLastError(); return; }
    long long grown = (long long)pool_get(pool_of(mk->device), cudaMemPoolAttrReservedMemCurrent) - (long long)mk->reserved0;
    long long outside = (long long)mk->free0 - (long long)fr - grown;
    if (outside > mk->outside_max) mk->outside_max = outside;
}

extern "C" int64_t ref_cuda2_mem_end(ref_mem_mark *mk)
{
    if (!mk->ok) return 0;   /* never begun: the call stopped before its first allocation */
    cudaMemPool_t pool = pool_of(mk->device);
    int64_t peak = mk->outside_max + (int64_t)pool_get(pool, cudaMemPoolAttrUsedMemHigh);
    if (pool) {
        const char *e = getenv("MMP_REF_POOL_KEEP");
        size_t keep = (size_t)8192 << 20;
        if (mk->total / 8 < keep) keep = mk->total / 8;
        if (e && *e) keep = (size_t)strtoull(e, NULL, 10) << 20;
        (void)cudaStreamSynchronize(0);   /* the frees have happened: they can be released */
        (void)cudaMemPoolTrimTo(pool, keep);
        (void)cudaGetLastError();
    }
    return peak;
}

/* ---- pinned host buffers, one per slot, kept between calls ---- */
#define REF_PINNED_MIN ((size_t)4 << 20)   /* the statistics of 14,000 vectors */
static std::atomic<int> pin_busy[REF_PINNED_SLOTS];
static void *pin_buf[REF_PINNED_SLOTS];
static size_t pin_bytes[REF_PINNED_SLOTS];

extern "C" void *ref_cuda2_pinned(int slot, size_t bytes)
{
    if (slot < 0 || slot >= REF_PINNED_SLOTS || pin_busy[slot].exchange(1)) return NULL;
    if (pin_bytes[slot] < bytes) {
        /* pinning costs milliseconds a few MB: at least REF_PINNED_MIN, at least twice what it
         * had, so that a suite's growing sizes do not each pay for it again */
        size_t want = bytes > REF_PINNED_MIN ? bytes : REF_PINNED_MIN;
        if (want < 2 * pin_bytes[slot]) want = 2 * pin_bytes[slot];
        bytes = want;
        if (pin_buf[slot]) cudaFreeHost(pin_buf[slot]);
        pin_buf[slot] = NULL;
        pin_bytes[slot] = 0;
        if (cudaMallocHost(&pin_buf[slot], bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            pin_buf[slot] = NULL;
            pin_busy[slot] = 0;
            return NULL;
        }
        pin_bytes[slot] = bytes;
    }
    return pin_buf[slot];
}

extern "C" void ref_cuda2_pinned_release(int slot)
{
    if (slot >= 0 && slot < REF_PINNED_SLOTS) pin_busy[slot] = 0;
}
