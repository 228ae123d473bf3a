/* arith_capture.cu — run arithmetic-probe vectors through the real tensor-core instructions.
 *
 * Build: part of libmmp (CUDA builds). Run: `mmaprobe probe --arith` (in a forked child).
 *
 * Each warp computes one tile D = A*B + C of the instruction's shape (m16n8kK for mma.sync,
 * m16n16k16 for WMMA). Vector r of a tile sits in row r of A, column r of B and C[r][r], so a
 * tile carries 8 (mma.sync) or 16 (WMMA) independent dot products, read back from D[r][r];
 * every other row of A and column of B is zero. Inputs travel as fp32 (exact in the input
 * format) and are converted in the kernel; fp16 outputs come back widened to fp32.
 * Fragment positions follow the PTX ISA's documented mma.sync layouts (the layout probes
 * check them on the device); WMMA goes through load/store_matrix_sync, layout-free.
 *
 *   version 1 is mma.sync f16/bf16 m16n8k16 (f32 and f16 accumulators)
 *   version 2 is mma.sync tf32 m16n8k8
 *   version 3 is mma.sync e4m3/e5m2 m16n8k32 (sm_89+)
 *   version 4 is wmma m16n16k16 f16 -> f32
 *   version 5 is mma.sync s8/u8 m16n8k32 and s4 m16n8k64 (s32, with and without .satfinite)
 *   wgmma lives in probes/sm90a/arith_wgmma.cu (sm_90a only).
 * Every capture names the SASS that ran it and whether that path is native (probes/arith_sass.c
 * on `cuobjdump -sass` of this executable).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <mma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vector>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/probe.h"
#include "arith_internal.h"

/* ------------------------------------------------------------------------------------------ */
/* packing helpers (device) */

__device__ static uint32_t pack_h2(float x, float y)
{
    __half2 h = __halves2half2(__float2half_rn(x), __float2half_rn(y));
    return *reinterpret_cast<uint32_t *>(&h);
}

__device__ static uint32_t pack_b2(float x, float y)
{
    __nv_bfloat162 h = __halves2bfloat162(__float2bfloat16_rn(x), __float2bfloat16_rn(y));
    return *reinterpret_cast<uint32_t *>(&h);
}

template <int E5M2>
__device__ static uint32_t pack_f8x4(const float *v)
{
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) {
        __nv_fp8_storage_t s = __nv_cvt_float_to_fp8(v[i], __NV_NOSAT, E5M2 ? __NV_E5M2 : __NV_E4M3);
        r |= (uint32_t)s << (8 * i);
    }
    return r;
}

/* A: tile rows x K row-major; B: 8 columns x K (column n contiguous); C, D: 16 x 8 row-major. */

/* version 1: f16 / bf16 m16n8k16, accumulator f32 (F16OUT = 0) or f16 (F16OUT = 1) */
template <int BF16, int F16OUT>
__global__ void arith_k_16816(const float *A, const float *B, const float *C, float *D)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    const float *a = A + (size_t)blockIdx.x * 16 * 16, *b = B + (size_t)blockIdx.x * 8 * 16;
    const float *c = C + (size_t)blockIdx.x * 128;
    float *d = D + (size_t)blockIdx.x * 128;
    uint32_t ra[4], rb[2];
    for (int r = 0; r < 4; r++) {   /* register r holds elements 2r, 2r+1 */
        int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
        float x = a[row * 16 + col], y = a[row * 16 + col + 1];
        ra[r] = BF16 ? pack_b2(x, y) : pack_h2(x, y);
    }
    for (int r = 0; r < 2; r++) {
        int k = 2 * t + 8 * r;
        float x = b[g * 16 + k], y = b[g * 16 + k + 1];
        rb[r] = BF16 ? pack_b2(x, y) : pack_h2(x, y);
    }
    int row0 = g, row1 = g + 8, col = 2 * t;
    if (!F16OUT) {
        float c0 = c[row0 * 8 + col], c1 = c[row0 * 8 + col + 1], c2 = c[row1 * 8 + col], c3 = c[row1 * 8 + col + 1];
        float d0, d1, d2, d3;
        if (BF16)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                         : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                         : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                           "f"(c0), "f"(c1), "f"(c2), "f"(c3));
        else
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                         : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                         : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                           "f"(c0), "f"(c1), "f"(c2), "f"(c3));
        d[row0 * 8 + col] = d0; d[row0 * 8 + col + 1] = d1; d[row1 * 8 + col] = d2; d[row1 * 8 + col + 1] = d3;
    } else {
        uint32_t c01 = pack_h2(c[row0 * 8 + col], c[row0 * 8 + col + 1]);
        uint32_t c23 = pack_h2(c[row1 * 8 + col], c[row1 * 8 + col + 1]);
        uint32_t d01, d23;
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};\n"
                     : "=r"(d01), "=r"(d23)
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(c01), "r"(c23));
        __half2 h01 = *reinterpret_cast<__half2 *>(&d01), h23 = *reinterpret_cast<__half2 *>(&d23);
        d[row0 * 8 + col] = __low2float(h01); d[row0 * 8 + col + 1] = __high2float(h01);
        d[row1 * 8 + col] = __low2float(h23); d[row1 * 8 + col + 1] = __high2float(h23);
    }
}

/* version 2: tf32 m16n8k8 */
__global__ void arith_k_1688_tf32(const float *A, const float *B, const float *C, float *D)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    const float *a = A + (size_t)blockIdx.x * 16 * 8, *b = B + (size_t)blockIdx.x * 8 * 8;
    const float *c = C + (size_t)blockIdx.x * 128;
    float *d = D + (size_t)blockIdx.x * 128;
    uint32_t ra[4], rb[2];
    for (int r = 0; r < 4; r++) ra[r] = __float_as_uint(a[(g + 8 * (r & 1)) * 8 + t + 4 * (r >> 1)]);
    for (int r = 0; r < 2; r++) rb[r] = __float_as_uint(b[g * 8 + t + 4 * r]);
    int row0 = g, row1 = g + 8, col = 2 * t;
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                   "f"(c[row0 * 8 + col]), "f"(c[row0 * 8 + col + 1]), "f"(c[row1 * 8 + col]), "f"(c[row1 * 8 + col + 1]));
    d[row0 * 8 + col] = d0; d[row0 * 8 + col + 1] = d1; d[row1 * 8 + col] = d2; d[row1 * 8 + col + 1] = d3;
}

/* version 3: e4m3 / e5m2 m16n8k32 (f32 accumulator) */
template <int E5M2>
__global__ void arith_k_16832_f8(const float *A, const float *B, const float *C, float *D)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    const float *a = A + (size_t)blockIdx.x * 16 * 32, *b = B + (size_t)blockIdx.x * 8 * 32;
    const float *c = C + (size_t)blockIdx.x * 128;
    float *d = D + (size_t)blockIdx.x * 128;
    uint32_t ra[4], rb[2];
    float v[4];
    for (int r = 0; r < 4; r++) {
        int row = g + 8 * (r & 1), col = 4 * t + 16 * (r >> 1);
        for (int i = 0; i < 4; i++) v[i] = a[row * 32 + col + i];
        ra[r] = pack_f8x4<E5M2>(v);
    }
    for (int r = 0; r < 2; r++) {
        int k = 4 * t + 16 * r;
        for (int i = 0; i < 4; i++) v[i] = b[g * 32 + k + i];
        rb[r] = pack_f8x4<E5M2>(v);
    }
    int row0 = g, row1 = g + 8, col = 2 * t;
    float d0, d1, d2, d3;
    if (E5M2)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                     : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                       "f"(c[row0 * 8 + col]), "f"(c[row0 * 8 + col + 1]), "f"(c[row1 * 8 + col]), "f"(c[row1 * 8 + col + 1]));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
                     : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                     : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                       "f"(c[row0 * 8 + col]), "f"(c[row0 * 8 + col + 1]), "f"(c[row1 * 8 + col]), "f"(c[row1 * 8 + col + 1]));
    d[row0 * 8 + col] = d0; d[row0 * 8 + col + 1] = d1; d[row1 * 8 + col] = d2; d[row1 * 8 + col + 1] = d3;
#endif
}

/* version 4: WMMA m16n16k16 f16 -> f32 (A 16x16, B 16 columns x 16, C/D 16x16) */
__global__ void arith_k_wmma_f16(const float *A, const float *B, const float *C, float *D)
{
    namespace w = nvcuda::wmma;
    __shared__ __half sa[256], sb[256];
    __shared__ float sc[256];
    const float *a = A + (size_t)blockIdx.x * 256, *b = B + (size_t)blockIdx.x * 256;
    for (int i = threadIdx.x; i < 256; i += 32) {
        sa[i] = __float2half_rn(a[i]);
        sb[i] = __float2half_rn(b[i]);   /* column n contiguous = col_major */
        sc[i] = C[(size_t)blockIdx.x * 256 + i];
    }
    __syncwarp();
    w::fragment<w::matrix_a, 16, 16, 16, __half, w::row_major> fa;
    w::fragment<w::matrix_b, 16, 16, 16, __half, w::col_major> fb;
    w::fragment<w::accumulator, 16, 16, 16, float> fc;
    w::load_matrix_sync(fa, sa, 16);
    w::load_matrix_sync(fb, sb, 16);
    w::load_matrix_sync(fc, sc, 16, w::mem_row_major);
    w::mma_sync(fc, fa, fb, fc);
    w::store_matrix_sync(D + (size_t)blockIdx.x * 256, fc, 16, w::mem_row_major);
}

/* version 5: integer s8 / u8 m16n8k32 and s4 m16n8k64, s32 accumulator, with or without
 * .satfinite. Inputs arrive as int32 bit patterns in the float arrays. */
#define ARITH_MMA_INT(PTX)                                                                         \
    asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"                \
                 : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)                                           \
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),          \
                   "r"(c[row0 * 8 + col]), "r"(c[row0 * 8 + col + 1]), "r"(c[row1 * 8 + col]),     \
                   "r"(c[row1 * 8 + col + 1]))

template <int U8, int SAT>
__global__ void arith_k_16832_i8(const float *A, const float *B, const float *C, float *D)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    const int *a = reinterpret_cast<const int *>(A) + (size_t)blockIdx.x * 16 * 32;
    const int *b = reinterpret_cast<const int *>(B) + (size_t)blockIdx.x * 8 * 32;
    const int *c = reinterpret_cast<const int *>(C) + (size_t)blockIdx.x * 128;
    int *d = reinterpret_cast<int *>(D) + (size_t)blockIdx.x * 128;
    uint32_t ra[4] = {0, 0, 0, 0}, rb[2] = {0, 0};
    for (int r = 0; r < 4; r++) {   /* register r: row g (+8 if r odd), 4 bytes from column 4t (+16) */
        int row = g + 8 * (r & 1), col = 4 * t + 16 * (r >> 1);
        for (int i = 0; i < 4; i++) ra[r] |= ((uint32_t)a[row * 32 + col + i] & 0xffu) << (8 * i);
    }
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 4; i++) rb[r] |= ((uint32_t)b[g * 32 + 4 * t + 16 * r + i] & 0xffu) << (8 * i);
    int row0 = g, row1 = g + 8, col = 2 * t, d0, d1, d2, d3;
    if (U8 && SAT) ARITH_MMA_INT("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32");
    else if (U8) ARITH_MMA_INT("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32");
    else if (SAT) ARITH_MMA_INT("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32");
    else ARITH_MMA_INT("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32");
    d[row0 * 8 + col] = d0; d[row0 * 8 + col + 1] = d1; d[row1 * 8 + col] = d2; d[row1 * 8 + col + 1] = d3;
}

template <int SAT>
__global__ void arith_k_16864_s4(const float *A, const float *B, const float *C, float *D)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    const int *a = reinterpret_cast<const int *>(A) + (size_t)blockIdx.x * 16 * 64;
    const int *b = reinterpret_cast<const int *>(B) + (size_t)blockIdx.x * 8 * 64;
    const int *c = reinterpret_cast<const int *>(C) + (size_t)blockIdx.x * 128;
    int *d = reinterpret_cast<int *>(D) + (size_t)blockIdx.x * 128;
    uint32_t ra[4] = {0, 0, 0, 0}, rb[2] = {0, 0};
    for (int r = 0; r < 4; r++) {   /* register r: row g (+8 if r odd), 8 nibbles from column 8t (+32) */
        int row = g + 8 * (r & 1), col = 8 * t + 32 * (r >> 1);
        for (int i = 0; i < 8; i++) ra[r] |= ((uint32_t)a[row * 64 + col + i] & 0xfu) << (4 * i);
    }
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 8; i++) rb[r] |= ((uint32_t)b[g * 64 + 8 * t + 32 * r + i] & 0xfu) << (4 * i);
    int row0 = g, row1 = g + 8, col = 2 * t, d0, d1, d2, d3;
    if (SAT) ARITH_MMA_INT("mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.s4.s32");
    else ARITH_MMA_INT("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32");
    d[row0 * 8 + col] = d0; d[row0 * 8 + col + 1] = d1; d[row1 * 8 + col] = d2; d[row1 * 8 + col + 1] = d3;
}

/* ------------------------------------------------------------------------------------------ */
/* host side */

typedef void (*arith_kernel)(const float *, const float *, const float *, float *);

typedef struct kernel_row {
    const char *id;
    arith_kernel fn;
    const char *sass_key; /* part of the mangled name: picks the function in cuobjdump -sass */
    int rows, cols;       /* tile: rows of A (= rows of C), columns of B; vectors per tile = min */
} kernel_row;

static const kernel_row kernel_rows[] = {
    {"mma.f16.f32", arith_k_16816<0, 0>, "13arith_k_16816ILi0ELi0EE", 16, 8},
    {"mma.f16.f16", arith_k_16816<0, 1>, "13arith_k_16816ILi0ELi1EE", 16, 8},
    {"mma.bf16.f32", arith_k_16816<1, 0>, "13arith_k_16816ILi1ELi0EE", 16, 8},
    {"mma.tf32.f32", arith_k_1688_tf32, "17arith_k_1688_tf32", 16, 8},
    {"mma.e4m3.f32", arith_k_16832_f8<0>, "16arith_k_16832_f8ILi0EE", 16, 8},
    {"mma.e5m2.f32", arith_k_16832_f8<1>, "16arith_k_16832_f8ILi1EE", 16, 8},
    {"wmma.f16.f32", arith_k_wmma_f16, "16arith_k_wmma_f16", 16, 16},
    {"mma.s8.s32", arith_k_16832_i8<0, 0>, "16arith_k_16832_i8ILi0ELi0EE", 16, 8},
    {"mma.s8.s32.satfinite", arith_k_16832_i8<0, 1>, "16arith_k_16832_i8ILi0ELi1EE", 16, 8},
    {"mma.u8.s32", arith_k_16832_i8<1, 0>, "16arith_k_16832_i8ILi1ELi0EE", 16, 8},
    {"mma.u8.s32.satfinite", arith_k_16832_i8<1, 1>, "16arith_k_16832_i8ILi1ELi1EE", 16, 8},
    {"mma.s4.s32", arith_k_16864_s4<0>, "16arith_k_16864_s4ILi0EE", 16, 8},
    {"mma.s4.s32.satfinite", arith_k_16864_s4<1>, "16arith_k_16864_s4ILi1EE", 16, 8},
};

extern "C" mmp_status mmp_arith_capture_gpu(mmp_capture *cap, const mmp_arith_instr *in, int dev)
{
    if (in->wgmma) return mmp_arith_capture_wgmma(cap, in, dev);
    const kernel_row *kr = NULL;
    for (size_t i = 0; i < sizeof kernel_rows / sizeof kernel_rows[0]; i++)
        if (strcmp(kernel_rows[i].id, in->id) == 0) kr = &kernel_rows[i];
    if (!kr) return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s: no capture kernel in this build", in->id);
    MMP_CUDA_CHECK(cudaSetDevice(dev));
    cudaDeviceProp prop;
    MMP_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int cc = prop.major * 10 + prop.minor;
    if (cc < in->min_cc)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s needs sm_%d (device is sm_%d)", in->id, in->min_cc, cc);
    int k = cap->k, per = kr->rows < kr->cols ? kr->rows : kr->cols;
    size_t tiles = (cap->count + per - 1) / per;
    size_t na = tiles * kr->rows * k, nb = tiles * kr->cols * k, nc = tiles * kr->rows * kr->cols;
    std::vector<float> A(na, 0.f), B(nb, 0.f), C(nc, 0.f), D(nc, 0.f);
    for (size_t v = 0; v < cap->count; v++) {
        size_t t = v / per, r = v % per;
        for (int j = 0; j < k; j++) {
            memcpy(&A[(t * kr->rows + r) * k + j], &cap->v[v].a[j], 4);
            memcpy(&B[(t * kr->cols + r) * k + j], &cap->v[v].b[j], 4);
        }
        memcpy(&C[t * kr->rows * kr->cols + r * kr->cols + r], &cap->v[v].c, 4);
    }
    float *dA = NULL, *dB = NULL, *dC = NULL, *dD = NULL;
    mmp_status st = MMP_STATUS_OK;
    do {
        if ((st = [&]() -> mmp_status {
                 MMP_CUDA_CHECK(cudaMalloc(&dA, na * 4));
                 MMP_CUDA_CHECK(cudaMalloc(&dB, nb * 4));
                 MMP_CUDA_CHECK(cudaMalloc(&dC, nc * 4));
                 MMP_CUDA_CHECK(cudaMalloc(&dD, nc * 4));
                 MMP_CUDA_CHECK(cudaMemcpy(dA, A.data(), na * 4, cudaMemcpyHostToDevice));
                 MMP_CUDA_CHECK(cudaMemcpy(dB, B.data(), nb * 4, cudaMemcpyHostToDevice));
                 MMP_CUDA_CHECK(cudaMemcpy(dC, C.data(), nc * 4, cudaMemcpyHostToDevice));
                 kr->fn<<<(unsigned)tiles, 32>>>(dA, dB, dC, dD);
                 MMP_CUDA_CHECK(cudaGetLastError());
                 MMP_CUDA_CHECK(cudaDeviceSynchronize());
                 MMP_CUDA_CHECK(cudaMemcpy(D.data(), dD, nc * 4, cudaMemcpyDeviceToHost));
                 return MMP_STATUS_OK;
             }()) != MMP_STATUS_OK)
            break;
    } while (0);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    cudaFree(dD);
    if (st != MMP_STATUS_OK) return st;
    for (size_t v = 0; v < cap->count; v++) {
        size_t t = v / per, r = v % per;
        memcpy(&cap->v[v].d, &D[t * kr->rows * kr->cols + r * kr->cols + r], 4);
    }
    snprintf(cap->device, sizeof cap->device, "%s", prop.name);
    snprintf(cap->origin, sizeof cap->origin, "gpu");
    mmp_arith_set_sass(cap, kr->sass_key, cc);
    return MMP_STATUS_OK;
}
