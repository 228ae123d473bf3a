/* runner_dev.cu — a device case's per-element stages on the device (runner_internal.h,
 * "device stages"): the buffers never cross the host link before the launch.
 *
 *  - fill: operand mat of the case's distribution, element by element with dist_hd.h (the
 *    host generator's own code, so the same bytes: check_gpu_runner compares them);
 *  - fill_bits: every element = one bit pattern (the output's poison or sentinel);
 *  - damage: image against pristine: changed guard bytes, ld-padding elements and (inputs)
 *    matrix elements, with the first of each in address order (buffer.c's mmp_buffer_damage).
 * Elements of at least 8 bits get a thread each; 4-bit formats a thread per byte (two
 * neighbours share it), padding nibbles keep their canary. Counts and first positions are
 * atomics on order-free quantities (sums, minima of an index): the same on any schedule.
 * Compiled without FMA contraction (CMakeLists.txt): dist_hd.h's arithmetic rounds as the host's.
 */
#include <cuda_runtime.h>

#include "mmaprobe/cuda_check.h"
#include "runner_internal.h"

namespace {

struct dev_shape {
    mmp_format_hd f;
    int row;              /* layout row-major */
    int64_t ld, rows, cols;
    size_t span;          /* elements spanned, ld padding included */
};

/* Element idx of the span: its (i, j) and whether it is a matrix element. */
__device__ __forceinline__ int logical_at(const dev_shape &s, uint64_t idx, int64_t *i, int64_t *j)
{
    int64_t outer = (int64_t)(idx / (uint64_t)s.ld), inner = (int64_t)(idx % (uint64_t)s.ld);
    *i = s.row ? outer : inner;
    *j = s.row ? inner : outer;
    return idx < s.span && *i < s.rows && *j < s.cols;
}

/* the new bits of element idx: the distribution's value (gen) or a constant (else) */
__device__ __forceinline__ int element_bits(uint64_t *bits, const dev_shape &s, const mmp_dist_ctx *x, int mat,
                                            uint64_t constant, uint64_t idx)
{
    int64_t i, j;
    if (!logical_at(s, idx, &i, &j)) return 0;
    *bits = x ? mmp_dist_hd_bits(x, mat, i, j) : constant;
    return 1;
}

__global__ void fill_kernel(unsigned char *data, dev_shape s, mmp_dist_ctx x, int use_x, int mat, uint64_t constant,
                            uint64_t units)
{
    const mmp_dist_ctx *px = use_x ? &x : nullptr;
    for (uint64_t u = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; u < units; u += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t bits;
        if (s.f.storage_bits == 4) {   /* byte u: elements 2u (low nibble) and 2u + 1 */
            unsigned char b = data[u];
            if (element_bits(&bits, s, px, mat, constant, 2 * u)) b = (unsigned char)((b & 0xF0) | (bits & 0xF));
            if (element_bits(&bits, s, px, mat, constant, 2 * u + 1)) b = (unsigned char)((b & 0x0F) | ((bits & 0xF) << 4));
            data[u] = b;
            continue;
        }
        if (!element_bits(&bits, s, px, mat, constant, u)) continue;
        switch (s.f.storage_bits) {
        case 8: data[u] = (unsigned char)bits; break;
        case 16: ((uint16_t *)data)[u] = (uint16_t)bits; break;
        case 32: ((uint32_t *)data)[u] = (uint32_t)bits; break;
        default: ((uint64_t *)data)[u] = bits; break;
        }
    }
}

struct dev_damage {
    unsigned long long guard, first_guard, padding, first_pad, logical, first_log;
};

__global__ void guard_kernel(dev_damage *d, const unsigned char *img, const unsigned char *pri, size_t data_bytes,
                             size_t total)
{
    size_t n = 2 * (size_t)MMP_GUARD_BYTES;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n; t += (size_t)gridDim.x * blockDim.x) {
        size_t o = t < MMP_GUARD_BYTES ? t : t - MMP_GUARD_BYTES + MMP_GUARD_BYTES + data_bytes;
        if (o >= total || img[o] == pri[o]) continue;
        atomicAdd(&d->guard, 1ull);
        atomicMin(&d->first_guard, (unsigned long long)o);
    }
}

__global__ void damage_kernel(dev_damage *d, const unsigned char *img, const unsigned char *pri, dev_shape s,
                              int logical, uint64_t n_elems)
{
    for (uint64_t idx = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; idx < n_elems;
         idx += (uint64_t)gridDim.x * blockDim.x) {
        if (mmp_format_hd_load_bits(img, idx, &s.f) == mmp_format_hd_load_bits(pri, idx, &s.f)) continue;
        int64_t i, j;
        if (!logical_at(s, idx, &i, &j)) {
            atomicAdd(&d->padding, 1ull);
            atomicMin(&d->first_pad, (unsigned long long)idx);
        } else if (logical) {
            atomicAdd(&d->logical, 1ull);
            atomicMin(&d->first_log, (unsigned long long)idx);
        }
    }
}

dev_shape shape_of(const mmp_buffer *b)
{
    dev_shape s;
    mmp_format_hd_init(&s.f, b->f);
    s.row = b->l == MMP_LAYOUT_ROW;
    s.ld = b->ld;
    s.rows = b->rows;
    s.cols = b->cols;
    s.span = b->span;
    return s;
}

unsigned grid_for(uint64_t n)
{
    uint64_t g = (n + 255) / 256;
    return (unsigned)(g < 65535 ? (g ? g : 1) : 65535);
}

mmp_status fill_any(mmp_buffer *b, const mmp_dist_ctx *x, int mat, uint64_t constant, void *stream)
{
    dev_shape s = shape_of(b);
    uint64_t units = s.f.storage_bits == 4 ? b->data_bytes : b->span;
    mmp_dist_ctx zero;
    memset(&zero, 0, sizeof zero);
    fill_kernel<<<grid_for(units), 256, 0, (cudaStream_t)stream>>>((unsigned char *)b->dev + MMP_GUARD_BYTES, s,
                                                                   x ? *x : zero, x != nullptr, mat, constant, units);
    MMP_CUDA_CHECK(cudaGetLastError());
    return MMP_STATUS_OK;
}

}  // namespace

extern "C" {

mmp_status mmp_buffer_dev_fill(mmp_buffer *b, const mmp_dist_ctx *x, int mat, void *stream)
{
    return fill_any(b, x, mat, 0, stream);
}

mmp_status mmp_buffer_dev_fill_bits(mmp_buffer *b, uint64_t bits, void *stream)
{
    return fill_any(b, nullptr, 0, bits, stream);
}

mmp_status mmp_buffer_dev_damage(mmp_damage *dmg, const mmp_buffer *b, int logical, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    memset(dmg, 0, sizeof *dmg);
    dmg->pad_i = dmg->pad_j = dmg->log_i = dmg->log_j = -1;
    dev_damage h = {0, ~0ull, 0, ~0ull, 0, ~0ull}, *d = nullptr;
    MMP_CUDA_CHECK(cudaMallocAsync((void **)&d, sizeof *d, st));
    cudaError_t e = cudaMemcpyAsync(d, &h, sizeof h, cudaMemcpyHostToDevice, st);
    const unsigned char *img = (const unsigned char *)b->dev, *pri = (const unsigned char *)b->dev_pristine;
    dev_shape s = shape_of(b);
    uint64_t n_elems = (uint64_t)(b->data_bytes * 8 / (size_t)s.f.storage_bits);
    if (e == cudaSuccess) {
        guard_kernel<<<32, 256, 0, st>>>(d, img, pri, b->data_bytes, b->total);
        damage_kernel<<<grid_for(n_elems), 256, 0, st>>>(d, img + MMP_GUARD_BYTES, pri + MMP_GUARD_BYTES, s, logical,
                                                          n_elems);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    cudaFreeAsync(d, st);
    MMP_CUDA_CHECK(e);
    dmg->guard_bytes = (int64_t)h.guard;
    if (h.guard) dmg->first_guard = (long long)h.first_guard - MMP_GUARD_BYTES;
    dmg->padding = (int64_t)h.padding;
    if (h.padding) {
        dmg->pad_i = (int64_t)(h.first_pad / (uint64_t)b->ld);
        dmg->pad_j = (int64_t)(h.first_pad % (uint64_t)b->ld);
    }
    dmg->logical = (int64_t)h.logical;
    if (h.logical) {
        int64_t outer = (int64_t)(h.first_log / (uint64_t)b->ld), inner = (int64_t)(h.first_log % (uint64_t)b->ld);
        dmg->log_i = s.row ? outer : inner;
        dmg->log_j = s.row ? inner : outer;
    }
    return MMP_STATUS_OK;
}

}  // extern "C"
