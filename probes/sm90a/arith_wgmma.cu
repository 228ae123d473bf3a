/* arith_wgmma.cu — run arithmetic-probe vectors through wgmma (sm_90a only).
 *
 * Build: part of libmmp; compiled alone for sm_90a (-gencode=arch=compute_90a,code=sm_90a).
 * Run: `mmaprobe probe --arith --instr wgmma.e4m3.f32,...` (captures run in a forked child).
 *
 * One CTA (a warpgroup of 128 threads) computes one m64n8 tile D = A*B + C. Vector r (r < 8)
 * of a tile sits in row r of A, column r of B and C[r][r]; every other row of A is zero, so a
 * tile carries 8 independent dot products, read back from D[r][r]. A and B come from shared
 * memory through matrix descriptors: no swizzle, K-major, "core matrices" of 8 rows x 16 bytes
 * stored contiguously (128 bytes); the core matrices of one row block follow each other along
 * K (leading-dimension byte offset, LBO = 128), row blocks follow each other at the stride
 * byte offset (SBO = K bytes * 8). Every instruction reads 32 bytes of K per row (16 f16/bf16,
 * 8 tf32, 32 FP8), i.e. two core matrices; a chain of n instructions moves the start address by
 * 2 * LBO per instruction. Before any capture, a self-check tile of small integers (exact in
 * every format and accumulator) must come back exact in all 64 x 8 outputs, or the capture
 * stops with an error: this checks the shared-memory layout, the descriptors (and retries with
 * LBO and SBO exchanged, the other reading of the PTX ISA's definition) and the accumulator
 * fragment layout (thread 32w + 4g + t holds rows 16w + g and 16w + g + 8, columns 2t, 2t + 1).
 *
 *   version 1 is one wgmma m64n8k{16,8,32}, f32 or f16 accumulator, scale-d = 1 (C used)
 *   version 2 is the same with scale-d = 0 (".c0": C ignored; how the published FP8 vectors
 *             were measured)
 *   version 3 is four wgmma chained with scale-d = 1 over K = 128 (".chain4")
 *   version 4 is four wgmma with scale-d = 0 each, the results added to C in fp32 registers
 *             (".promote4": the FP8 GEMM promotion)
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/probe.h"
#include "arith_internal.h"

enum { WG_M = 64, WG_N = 8, ROW_BYTES = 32, CORE = 128, THREADS = 128, MAX_NI = 4 };
enum { T_F16 = 0, T_BF16 = 1, T_TF32 = 2, T_E4M3 = 3, T_E5M2 = 4 };

template <int T> struct elem { enum { size = T == T_TF32 ? 4 : T <= T_BF16 ? 2 : 1 }; };

/* Byte offset of (row, byte kb of K) in the core-matrix layout with nk core matrices along K. */
__device__ static int core_offset(int row, int kb, int nk)
{
    return (row >> 3) * (nk * CORE) + (kb >> 4) * CORE + (row & 7) * 16 + (kb & 15);
}

template <int T>
__device__ static void store_elem(unsigned char *p, float x)
{
    if (T == T_F16) { __half h = __float2half_rn(x); memcpy(p, &h, 2); }
    else if (T == T_BF16) { __nv_bfloat16 h = __float2bfloat16_rn(x); memcpy(p, &h, 2); }
    else if (T == T_TF32) { memcpy(p, &x, 4); }   /* exact tf32 values: low 13 bits already 0 */
    else *p = (unsigned char)__nv_cvt_float_to_fp8(x, __NV_NOSAT, T == T_E5M2 ? __NV_E5M2 : __NV_E4M3);
}

/* Matrix descriptor: start address, LBO, SBO (all >> 4), no swizzle (bits 62-63 = 0). */
__device__ static uint64_t make_desc(const void *smem, uint32_t lbo, uint32_t sbo)
{
    uint32_t a = (uint32_t)__cvta_generic_to_shared(smem);
    return (uint64_t)((a >> 4) & 0x3fff) | ((uint64_t)((lbo >> 4) & 0x3fff) << 16) |
           ((uint64_t)((sbo >> 4) & 0x3fff) << 32);
}

/* One wgmma with a predicate scale-d (0: D = A*B, 1: D = A*B + D). */
template <int T>
__device__ static void wg_f32(float *d, uint64_t da, uint64_t db, int scale_d)
{
#define WG_F32(SHAPE_TYPES, TAIL)                                                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"                                     \
                 "wgmma.mma_async.sync.aligned." SHAPE_TYPES " {%0,%1,%2,%3}, %4, %5, p, 1, 1" TAIL \
                 ";\n}\n"                                                                         \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                 \
                 : "l"(da), "l"(db), "r"(scale_d))
    if (T == T_F16) WG_F32("m64n8k16.f32.f16.f16", ", 0, 0");
    else if (T == T_BF16) WG_F32("m64n8k16.f32.bf16.bf16", ", 0, 0");
    else if (T == T_TF32) WG_F32("m64n8k8.f32.tf32.tf32", "");
    else if (T == T_E4M3) WG_F32("m64n8k32.f32.e4m3.e4m3", "");
    else WG_F32("m64n8k32.f32.e5m2.e5m2", "");
#undef WG_F32
}

template <int T>
__device__ static void wg_f16(uint32_t *d, uint64_t da, uint64_t db, int scale_d)
{
#define WG_F16(SHAPE_TYPES, TAIL)                                                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                     \
                 "wgmma.mma_async.sync.aligned." SHAPE_TYPES " {%0,%1}, %2, %3, p, 1, 1" TAIL     \
                 ";\n}\n"                                                                         \
                 : "+r"(d[0]), "+r"(d[1])                                                         \
                 : "l"(da), "l"(db), "r"(scale_d))
    if (T == T_F16) WG_F16("m64n8k16.f16.f16.f16", ", 0, 0");
    else if (T == T_E4M3) WG_F16("m64n8k32.f16.e4m3.e4m3", "");
    else if (T == T_E5M2) WG_F16("m64n8k32.f16.e5m2.e5m2", "");
#undef WG_F16
}

__device__ static void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ static void wg_commit_wait()
{
    asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

/* A: tiles x rows_in rows x K floats (exact in the format; rows rows_in..63 are zero); B: tiles
 * x 8 columns x K; C, D: tiles x 64 x 8 row-major. NI instructions of K/NI each; F16OUT: f16 accumulator; MODE 0: chain with
 * scale-d = 1 (the first one scale-d = !c_zero), MODE 1: promote (each scale-d = 0, FADD).
 * swap: exchange LBO and SBO in the descriptors. */
template <int T, int F16OUT, int NI, int MODE>
__global__ void __launch_bounds__(THREADS) arith_k_wgmma(const float *A, const float *B, const float *C,
                                                         float *D, int rows_in, int swap, int c_zero)
{
    __shared__ __align__(128) unsigned char sa[WG_M * ROW_BYTES * MAX_NI];
    __shared__ __align__(128) unsigned char sb[WG_N * ROW_BYTES * MAX_NI];
    const int esz = elem<T>::size, k = NI * ROW_BYTES / esz, nk = NI * ROW_BYTES / 16;
    const float *a = A + (size_t)blockIdx.x * rows_in * k, *b = B + (size_t)blockIdx.x * WG_N * k;
    const float *c = C + (size_t)blockIdx.x * WG_M * WG_N;
    float *dout = D + (size_t)blockIdx.x * WG_M * WG_N;
    int tid = threadIdx.x;
    for (int i = tid; i < WG_M * k; i += THREADS)
        store_elem<T>(sa + core_offset(i / k, (i % k) * esz, nk), i / k < rows_in ? a[i] : 0.f);
    for (int i = tid; i < WG_N * k; i += THREADS)
        store_elem<T>(sb + core_offset(i / k, (i % k) * esz, nk), b[i]);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  /* generic writes -> wgmma */
    __syncthreads();
    uint32_t lbo = CORE, sbo_a = nk * CORE, sbo_b = nk * CORE;
    int w = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    int r0 = 16 * w + g, r1 = r0 + 8, col = 2 * t;
    float cf[4] = {c[r0 * 8 + col], c[r0 * 8 + col + 1], c[r1 * 8 + col], c[r1 * 8 + col + 1]};
    float out[4];
    if (F16OUT) {
        __half2 h0 = __floats2half2_rn(cf[0], cf[1]), h1 = __floats2half2_rn(cf[2], cf[3]);
        uint32_t d[2];
        memcpy(&d[0], &h0, 4);
        memcpy(&d[1], &h1, 4);
        wg_fence();
        for (int s = 0; s < NI; s++) {
            uint64_t da = make_desc(sa + s * 2 * CORE, swap ? sbo_a : lbo, swap ? lbo : sbo_a);
            uint64_t db = make_desc(sb + s * 2 * CORE, swap ? sbo_b : lbo, swap ? lbo : sbo_b);
            wg_f16<T>(d, da, db, s == 0 ? !c_zero : 1);
        }
        wg_commit_wait();
        memcpy(&h0, &d[0], 4);
        memcpy(&h1, &d[1], 4);
        out[0] = __low2float(h0); out[1] = __high2float(h0);
        out[2] = __low2float(h1); out[3] = __high2float(h1);
    } else if (MODE == 0) {
        float d[4] = {cf[0], cf[1], cf[2], cf[3]};
        wg_fence();
        for (int s = 0; s < NI; s++) {
            uint64_t da = make_desc(sa + s * 2 * CORE, swap ? sbo_a : lbo, swap ? lbo : sbo_a);
            uint64_t db = make_desc(sb + s * 2 * CORE, swap ? sbo_b : lbo, swap ? lbo : sbo_b);
            wg_f32<T>(d, da, db, s == 0 ? !c_zero : 1);
        }
        wg_commit_wait();
        for (int i = 0; i < 4; i++) out[i] = d[i];
    } else {
        float acc[4] = {cf[0], cf[1], cf[2], cf[3]};
        for (int s = 0; s < NI; s++) {
            float d[4] = {0.f, 0.f, 0.f, 0.f};
            uint64_t da = make_desc(sa + s * 2 * CORE, swap ? sbo_a : lbo, swap ? lbo : sbo_a);
            uint64_t db = make_desc(sb + s * 2 * CORE, swap ? sbo_b : lbo, swap ? lbo : sbo_b);
            wg_fence();
            wg_f32<T>(d, da, db, 0);
            wg_commit_wait();
            for (int i = 0; i < 4; i++) acc[i] = __fadd_rn(acc[i], d[i]);   /* the promotion */
        }
        for (int i = 0; i < 4; i++) out[i] = acc[i];
    }
    dout[r0 * 8 + col] = out[0]; dout[r0 * 8 + col + 1] = out[1];
    dout[r1 * 8 + col] = out[2]; dout[r1 * 8 + col + 1] = out[3];
}

/* ------------------------------------------------------------------------------------------ */
/* host side */

typedef void (*wg_kernel)(const float *, const float *, const float *, float *, int, int, int);

typedef struct wg_row {
    const char *id;
    wg_kernel fn;
    const char *sass_key;       /* part of the mangled name (cuobjdump -sass) */
} wg_row;

#define WGK(T, F16, NI, MODE) arith_k_wgmma<T, F16, NI, MODE>
#define KEY(T, F16, NI, MODE) "13arith_k_wgmmaILi" #T "ELi" #F16 "ELi" #NI "ELi" #MODE "EE"
static const wg_row wg_rows[] = {
    {"wgmma.f16.f32", WGK(0, 0, 1, 0), KEY(0, 0, 1, 0)},
    {"wgmma.f16.f16", WGK(0, 1, 1, 0), KEY(0, 1, 1, 0)},
    {"wgmma.bf16.f32", WGK(1, 0, 1, 0), KEY(1, 0, 1, 0)},
    {"wgmma.tf32.f32", WGK(2, 0, 1, 0), KEY(2, 0, 1, 0)},
    {"wgmma.f16.f32.c0", WGK(0, 0, 1, 0), KEY(0, 0, 1, 0)},
    {"wgmma.bf16.f32.c0", WGK(1, 0, 1, 0), KEY(1, 0, 1, 0)},
    {"wgmma.tf32.f32.c0", WGK(2, 0, 1, 0), KEY(2, 0, 1, 0)},
    {"wgmma.e4m3.f32", WGK(3, 0, 1, 0), KEY(3, 0, 1, 0)},
    {"wgmma.e4m3.f32.c0", WGK(3, 0, 1, 0), KEY(3, 0, 1, 0)},
    {"wgmma.e4m3.f16", WGK(3, 1, 1, 0), KEY(3, 1, 1, 0)},
    {"wgmma.e5m2.f32", WGK(4, 0, 1, 0), KEY(4, 0, 1, 0)},
    {"wgmma.e5m2.f32.c0", WGK(4, 0, 1, 0), KEY(4, 0, 1, 0)},
    {"wgmma.e5m2.f16", WGK(4, 1, 1, 0), KEY(4, 1, 1, 0)},
    {"wgmma.e4m3.f32.chain4", WGK(3, 0, 4, 0), KEY(3, 0, 4, 0)},
    {"wgmma.e4m3.f32.promote4", WGK(3, 0, 4, 1), KEY(3, 0, 4, 1)},
    {"wgmma.e5m2.f32.chain4", WGK(4, 0, 4, 0), KEY(4, 0, 4, 0)},
    {"wgmma.e5m2.f32.promote4", WGK(4, 0, 4, 1), KEY(4, 0, 4, 1)},
};
#undef WGK
#undef KEY

/* Run `tiles` tiles: host arrays in the kernel's layout, D filled. */
static mmp_status run_tiles(const wg_row *wr, const std::vector<float> &A, const std::vector<float> &B,
                            const std::vector<float> &C, std::vector<float> &D, size_t tiles, int rows_in,
                            int swap, int c_zero)
{
    float *dA = NULL, *dB = NULL, *dC = NULL, *dD = NULL;
    mmp_status st = [&]() -> mmp_status {
        MMP_CUDA_CHECK(cudaMalloc(&dA, A.size() * 4));
        MMP_CUDA_CHECK(cudaMalloc(&dB, B.size() * 4));
        MMP_CUDA_CHECK(cudaMalloc(&dC, C.size() * 4));
        MMP_CUDA_CHECK(cudaMalloc(&dD, D.size() * 4));
        MMP_CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
        MMP_CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
        MMP_CUDA_CHECK(cudaMemcpy(dC, C.data(), C.size() * 4, cudaMemcpyHostToDevice));
        wr->fn<<<(unsigned)tiles, THREADS>>>(dA, dB, dC, dD, rows_in, swap, c_zero);
        MMP_CUDA_CHECK(cudaGetLastError());
        MMP_CUDA_CHECK(cudaDeviceSynchronize());
        MMP_CUDA_CHECK(cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost));
        return MMP_STATUS_OK;
    }();
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    cudaFree(dD);
    return st;
}

/* The self-check tile: A, B in {0..3}, C in {0..3} (exact in every input format, sums <= 4K*9+3
 * exact in f16 and in the 13-bit FP8 accumulator). 1 when all 512 outputs are exact. */
static mmp_status self_check(int *ok, char *why, size_t why_size, const wg_row *wr, int k, int swap,
                             int c_zero)
{
    std::vector<float> A(WG_M * k), B(WG_N * k), C(WG_M * WG_N), D(WG_M * WG_N);
    uint32_t s = 12345;
    for (auto &x : A) { s = s * 1664525u + 1013904223u; x = (float)((s >> 24) & 3); }
    for (auto &x : B) { s = s * 1664525u + 1013904223u; x = (float)((s >> 24) & 3); }
    for (auto &x : C) { s = s * 1664525u + 1013904223u; x = (float)((s >> 24) & 3); }
    MMP_TRY(run_tiles(wr, A, B, C, D, 1, WG_M, swap, c_zero));
    *ok = 1;
    for (int r = 0; r < WG_M && *ok; r++)
        for (int n = 0; n < WG_N; n++) {
            double want = c_zero ? 0.0 : C[r * WG_N + n];
            for (int j = 0; j < k; j++) want += (double)A[r * k + j] * B[n * k + j];
            if ((double)D[r * WG_N + n] != want) {
                *ok = 0;
                snprintf(why, why_size, "D[%d][%d] = %g, expected %g", r, n, D[r * WG_N + n], want);
                break;
            }
        }
    return MMP_STATUS_OK;
}

extern "C" mmp_status mmp_arith_capture_wgmma(mmp_capture *cap, const mmp_arith_instr *in, int dev)
{
    const wg_row *wr = NULL;
    for (size_t i = 0; i < sizeof wg_rows / sizeof wg_rows[0]; i++)
        if (strcmp(wg_rows[i].id, in->id) == 0) wr = &wg_rows[i];
    if (!wr) return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s: no wgmma capture kernel in this build", in->id);
    MMP_CUDA_CHECK(cudaSetDevice(dev));
    cudaDeviceProp prop;
    MMP_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int cc = prop.major * 10 + prop.minor;
    if (cc != 90)
        return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s needs sm_90a (device is sm_%d): wgmma is Hopper-only", in->id, cc);
    int k = cap->k, swap = -1;
    char why[2][128] = {"", ""};
    for (int sw = 0; sw < 2 && swap < 0; sw++) {
        int ok = 0;
        MMP_TRY(self_check(&ok, why[sw], sizeof why[sw], wr, k, sw, in->c_zero));
        if (ok) swap = sw;
    }
    if (swap < 0)
        return MMP_ERR(MMP_STATUS_INTERNAL, "%s: wgmma self-check failed (LBO=128/SBO=K*8: %s; exchanged: %s)",
                       in->id, why[0], why[1]);
    size_t tiles = (cap->count + WG_N - 1) / WG_N;
    /* only rows 0..7 of A carry vectors: the kernel zero-fills the other 56 */
    std::vector<float> A(tiles * WG_N * k, 0.f), B(tiles * WG_N * k, 0.f), C(tiles * WG_M * WG_N, 0.f),
        D(tiles * WG_M * WG_N, 0.f);
    for (size_t v = 0; v < cap->count; v++) {
        size_t t = v / WG_N, r = v % WG_N;
        memcpy(&A[(t * WG_N + r) * k], cap->v[v].a, (size_t)k * 4);
        memcpy(&B[(t * WG_N + r) * k], cap->v[v].b, (size_t)k * 4);
        memcpy(&C[t * WG_M * WG_N + r * WG_N + r], &cap->v[v].c, 4);
    }
    MMP_TRY(run_tiles(wr, A, B, C, D, tiles, WG_N, swap, in->c_zero));
    for (size_t v = 0; v < cap->count; v++) {
        size_t t = v / WG_N, r = v % WG_N;
        memcpy(&cap->v[v].d, &D[t * WG_M * WG_N + r * WG_N + r], 4);
    }
    snprintf(cap->device, sizeof cap->device, "%s", prop.name);
    snprintf(cap->origin, sizeof cap->origin, "gpu (wgmma self-check passed, %s)",
             swap ? "LBO/SBO exchanged" : "LBO = K-adjacent core matrices");
    mmp_arith_set_sass(cap, wr->sass_key, cc);
    return MMP_STATUS_OK;
}
