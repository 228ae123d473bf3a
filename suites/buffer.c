/* buffer.c — guarded operand buffers, the same for host and device kernels.
 *
 * A buffer is one image  [4 KiB guard | data: every element the layout and ld span | 4 KiB guard]
 * filled with a canary byte before the matrix elements are written, so the ld padding holds
 * canaries too. A pristine copy is kept; after the launch the image (copied back from the
 * device for device kernels: one allocation with the same guards) is compared with it, and
 * guard bytes, padding elements and (for inputs) matrix elements that changed are counted with
 * the first positions (GMP's "try" tool does the same with redzones and dead values).
 */
#include <stdlib.h>
#include <string.h>

#ifdef MMP_HAVE_CUDA
#include "mmaprobe/cuda_check.h"
#endif
#include "runner_internal.h"

mmp_status mmp_buffer_init(mmp_buffer *b, mmp_format f, mmp_layout l, int64_t ld, int64_t rows,
                           int64_t cols)
{
    memset(b, 0, sizeof *b);
    b->f = f; b->l = l; b->ld = ld; b->rows = rows; b->cols = cols;
    b->span = mmp_gemm_span(l, ld, rows, cols);
    if (rows <= 0 || cols <= 0 || ld <= 0 || b->span > ((size_t)1 << 56))   /* bytes must not overflow */
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "a %lldx%lld operand (ld %lld) is too large to allocate", (long long)rows,
                       (long long)cols, (long long)ld);
    b->data_bytes = mmp_format_bytes(f, b->span);
    b->total = b->data_bytes + 2 * MMP_GUARD_BYTES;
    size_t alloc = (b->total + 4095) / 4096 * 4096;
    b->image = aligned_alloc(4096, alloc);
    b->pristine = malloc(b->total);
    if (!b->image || !b->pristine) {
        mmp_buffer_clear(b);
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "cannot allocate %zu bytes for a %lldx%lld operand",
                       alloc, (long long)rows, (long long)cols);
    }
    return MMP_STATUS_OK;
}

void mmp_buffer_clear(mmp_buffer *b)
{
#ifdef MMP_HAVE_CUDA
    if (b->dev) cudaFree(b->dev);
    if (b->dev_pristine) cudaFree(b->dev_pristine);
#endif
    free(b->image);
    free(b->pristine);
    memset(b, 0, sizeof *b);
}

void *mmp_buffer_kernel_ptr(mmp_buffer *b)
{
    if (b->dev) return (unsigned char *)b->dev + MMP_GUARD_BYTES;
    return b->image + MMP_GUARD_BYTES;
}

/* On every core (runner_stages.c): at 8192^2 these are hundreds of MB per launch. */
void mmp_buffer_fill_canary(mmp_buffer *b) { mmp_runner_bytes(b->image, NULL, MMP_CANARY_BYTE, b->total); }
void mmp_buffer_snapshot(mmp_buffer *b) { mmp_runner_bytes(b->pristine, b->image, 0, b->total); }
void mmp_buffer_restore(mmp_buffer *b) { mmp_runner_bytes(b->image, b->pristine, 0, b->total); }

/* Is element index idx of the span a matrix element (not ld padding)? */
static int is_logical(const mmp_buffer *b, size_t idx, int64_t *i, int64_t *j)
{
    int64_t outer = (int64_t)idx / b->ld, inner = (int64_t)idx % b->ld;
    int64_t r = b->l == MMP_LAYOUT_ROW ? outer : inner, c = b->l == MMP_LAYOUT_ROW ? inner : outer;
    *i = r; *j = c;
    return r < b->rows && c < b->cols;
}

#define DMG_CHUNK ((size_t)1 << 20)

typedef struct {
    const mmp_buffer *b;
    int logical;
    mmp_damage *part;              /* one per chunk; or, with one set, a single accumulator */
    int one;
} dmg_job;

/* Chunks [c0, c1) of the data bytes: padding and logical changes, counted with their first
 * positions, into part[chunk] (or the single accumulator, chunks taken in order). */
static void damage_chunks(void *ctx, int64_t c0, int64_t c1, int tid)
{
    (void)tid;
    dmg_job *J = ctx;
    const mmp_buffer *b = J->b;
    const unsigned char *img = b->image + MMP_GUARD_BYTES, *pri = b->pristine + MMP_GUARD_BYTES;
    int bits = mmp_format_get_info(b->f)->storage_bits;
    size_t n_elems = (size_t)((b->data_bytes * 8) / (size_t)bits);
    for (int64_t q = c0; q < c1; q++) {
        mmp_damage *dmg = J->one ? J->part : &J->part[q];
        size_t hi = (size_t)(q + 1) * DMG_CHUNK < b->data_bytes ? (size_t)(q + 1) * DMG_CHUNK : b->data_bytes;
        for (size_t byte = (size_t)q * DMG_CHUNK; byte < hi; byte++) {
            if (img[byte] == pri[byte]) continue;
            size_t first = byte * 8 / (size_t)bits, last = ((byte + 1) * 8 - 1) / (size_t)bits;
            for (size_t idx = first; idx <= last && idx < n_elems; idx++) {
                if (mmp_format_load_bits(img, idx, b->f) == mmp_format_load_bits(pri, idx, b->f)) continue;
                int64_t i, j;
                int in = idx < b->span && is_logical(b, idx, &i, &j);
                if (!in) {
                    if (!dmg->padding++) {
                        dmg->pad_i = (int64_t)idx / b->ld;
                        dmg->pad_j = (int64_t)idx % b->ld;
                    }
                } else if (J->logical) {
                    if (!dmg->logical++) { dmg->log_i = i; dmg->log_j = j; }
                }
            }
            if (bits >= 8) byte = ((last + 1) * (size_t)bits) / 8 - 1;   /* next element */
        }
    }
}

void mmp_buffer_damage(mmp_damage *dmg, const mmp_buffer *b, int logical)
{
    memset(dmg, 0, sizeof *dmg);
    dmg->pad_i = dmg->pad_j = dmg->log_i = dmg->log_j = -1;
    /* Guards, byte by byte (the part of the last data byte past the span is padding below). */
    for (size_t o = 0; o < b->total; o++) {
        if (o >= MMP_GUARD_BYTES && o < MMP_GUARD_BYTES + b->data_bytes) {
            o = MMP_GUARD_BYTES + b->data_bytes - 1;
            continue;
        }
        if (b->image[o] != b->pristine[o]) {
            if (!dmg->guard_bytes++) dmg->first_guard = (long long)o - MMP_GUARD_BYTES;
        }
    }
    /* Data: whole bytes first (fast path), then element by element where they differ; in
     * fixed 1 MiB chunks (element-aligned for every format) on every core, merged in order. */
    size_t chunks = (b->data_bytes + DMG_CHUNK - 1) / DMG_CHUNK;
    mmp_damage *part = chunks > 1 ? calloc(chunks, sizeof *part) : NULL;
    dmg_job J = {b, logical, part ? part : dmg, part == NULL};
    if (!part) {
        damage_chunks(&J, 0, (int64_t)chunks, 0);   /* one chunk, or no memory: here, in order */
        return;
    }
    mmp_parallel_for(mmp_parallel_threads(0), (int64_t)chunks, 1, damage_chunks, &J);
    for (size_t q = 0; q < chunks; q++) {
        const mmp_damage *p = &part[q];
        if (p->padding && !dmg->padding) { dmg->pad_i = p->pad_i; dmg->pad_j = p->pad_j; }
        if (p->logical && !dmg->logical) { dmg->log_i = p->log_i; dmg->log_j = p->log_j; }
        dmg->padding += p->padding;
        dmg->logical += p->logical;
    }
    free(part);
}

#ifdef MMP_HAVE_CUDA
mmp_status mmp_buffer_upload(mmp_buffer *b)
{
    if (!b->dev) MMP_CUDA_CHECK(cudaMalloc(&b->dev, b->total));
    MMP_CUDA_CHECK(cudaMemcpy(b->dev, b->image, b->total, cudaMemcpyHostToDevice));
    /* From pageable memory cudaMemcpy returns once the bytes are staged, before the DMA has
     * landed, and the kernel runs on a non-blocking stream that does not wait for the legacy
     * stream: without this the second run's poison could land after the kernel wrote D (seen
     * on the H200: every element of a 0.03 ms kernel's output reported unwritten). */
    MMP_CUDA_CHECK(cudaStreamSynchronize(0));
    return MMP_STATUS_OK;
}

mmp_status mmp_buffer_download(mmp_buffer *b)
{
    MMP_CUDA_CHECK(cudaMemcpy(b->image, b->dev, b->total, cudaMemcpyDeviceToHost));
    return MMP_STATUS_OK;
}

/* ---- resident buffers (device stages): image and pristine copy on the device; the host image
 * only receives what host code reads (the filled inputs, the outputs) ---- */
mmp_status mmp_buffer_dev_init(mmp_buffer *b)
{
    free(b->pristine);
    b->pristine = NULL;
    if (cudaMalloc(&b->dev, b->total) != cudaSuccess || cudaMalloc(&b->dev_pristine, b->total) != cudaSuccess) {
        cudaGetLastError();
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "cannot allocate 2 x %zu bytes of device memory for a %lldx%lld operand",
                       b->total, (long long)b->rows, (long long)b->cols);
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_buffer_dev_canary(mmp_buffer *b, void *stream)
{
    MMP_CUDA_CHECK(cudaMemsetAsync(b->dev, MMP_CANARY_BYTE, b->total, (cudaStream_t)stream));
    return MMP_STATUS_OK;
}

mmp_status mmp_buffer_dev_snapshot(mmp_buffer *b, void *stream)
{
    MMP_CUDA_CHECK(cudaMemcpyAsync(b->dev_pristine, b->dev, b->total, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    return MMP_STATUS_OK;
}

mmp_status mmp_buffer_dev_restore(mmp_buffer *b, void *stream)
{
    MMP_CUDA_CHECK(cudaMemcpyAsync(b->dev, b->dev_pristine, b->total, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    return MMP_STATUS_OK;
}

mmp_status mmp_buffer_dev_download(void *dst, const mmp_buffer *b, void *stream)
{
    return mmp_runner_dev_download(dst, (const unsigned char *)b->dev + MMP_GUARD_BYTES, b->data_bytes, stream);
}

mmp_status mmp_runner_dev_download(void *dst, const void *src, size_t bytes, void *stream)
{
    MMP_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream));
    MMP_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream));
    return MMP_STATUS_OK;
}
#endif
