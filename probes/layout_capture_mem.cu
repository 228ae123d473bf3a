/* layout_capture_mem.cu — memory-anchored fragment layouts on the GPU: WMMA fragments (whose
 * mapping the CUDA programming guide leaves unspecified), ldmatrix and stmatrix.
 *
 * Build: part of libmmp (CUDA builds); run through `mmaprobe probe layout`.
 * Method:
 *  - WMMA load (matrix_a/matrix_b, accumulator): memory element (r, c) holds a code for its
 *    logical index k = r * cols + c (fp16/bf16: bits 0x4000 + k + 1; f32/tf32/f64/s32: k + 1 as
 *    a value; 8-, 4-, 1-bit types: k + 1 in base 2^bits, one digit per load; the leading
 *    dimension is padded to 16 bytes, padding is 0 and decodes to "no element"),
 *    stored row- or column-major as the fragment asks; load_matrix_sync, then every thread
 *    returns its fragment's raw storage (x[]); element i of a thread is bits [i*b, (i+1)*b) of it.
 *    An element held by several (lane, i) shows as a duplicate.
 *  - WMMA store (accumulator): every thread's element i holds the code lane * n + i (+ 1);
 *    store_matrix_sync into memory prefilled with NaN / -1; each memory cell names its writer.
 *  - ldmatrix: lane l gives the address of shared-memory row q(l) = (13 l + 5) mod 32 (a
 *    permutation, so row order and lane order differ); cell (q, c) holds q * 8 + c; the
 *    registers read back name (q, c), hence (the lane that supplied q, c).
 *  - stmatrix (sm_90): register element i of lane l holds l * 2N + i; memory is read back.
 * Version 1 is this: one warp per capture, one launch per pass.
 */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <nv/target>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/layout.h"

using namespace nvcuda;

enum enc_kind { ENC_F16, ENC_F32, ENC_F64, ENC_I32, ENC_RAW };

static int row_perm(int lane) { return (13 * lane + 5) & 31; }

// ------------------------------------------------------------------------------------------------
// kernels

template <class F, class T, int ACC, int COLMEM>
__global__ void k_wmma_load(const void *mem, unsigned ld, unsigned char *out)
{
    F f;
    if constexpr (ACC) wmma::load_matrix_sync(f, (const T *)mem, ld, COLMEM ? wmma::mem_col_major : wmma::mem_row_major);
    else wmma::load_matrix_sync(f, (const T *)mem, ld);
    memcpy(out + threadIdx.x * sizeof(f.x), f.x, sizeof(f.x));
}

template <class F, class T, int COLMEM>
__global__ void k_wmma_store(void *mem, unsigned ld, const unsigned char *in)
{
    F f;
    memcpy(f.x, in + threadIdx.x * sizeof(f.x), sizeof(f.x));
    wmma::store_matrix_sync((T *)mem, f, ld, COLMEM ? wmma::mem_col_major : wmma::mem_row_major);
}

template <int N, int TRANS>
__global__ void k_ldmatrix(uint32_t *out)
{
    __shared__ alignas(16) uint16_t sm[32 * 8];
    const int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) sm[i] = (uint16_t)i;
    __syncwarp();
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(&sm[((13 * lane + 5) & 31) * 8]);
    uint32_t r[4] = {0, 0, 0, 0};
    if (N == 1 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr));
    if (N == 2 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
    if (N == 4 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    if (N == 1 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr));
    if (N == 2 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
    if (N == 4 && TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    for (int i = 0; i < N; i++) out[lane * N + i] = r[i];
}

template <int N, int TRANS>
__global__ void k_stmatrix(uint16_t *out, int *unsupported)
{
    __shared__ alignas(16) uint16_t sm[32 * 8];
    const int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) sm[i] = 0xFFFF;
    __syncwarp();
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(&sm[((13 * lane + 5) & 31) * 8]);
    uint32_t r[4];
    for (int i = 0; i < 4; i++) r[i] = (uint32_t)(lane * 2 * N + 2 * i) | ((uint32_t)(lane * 2 * N + 2 * i + 1) << 16);
    NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90, (
        if (N == 1 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]) : "memory");
        if (N == 2 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
        if (N == 4 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
        if (N == 1 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]) : "memory");
        if (N == 2 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
        if (N == 4 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};" :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
    ), (if (lane == 0) *unsupported = 1;))
    __syncwarp();
    for (int i = lane; i < 256; i += 32) out[i] = sm[i];
}

// ------------------------------------------------------------------------------------------------
// host side: one row per fragment, one row per capture

typedef mmp_status (*launch_fn)(void *d_mem, unsigned ld, unsigned char *d_lanes);

template <class F, class T, int ACC, int COLMEM>
static mmp_status launch_load(void *d_mem, unsigned ld, unsigned char *d_lanes)
{
    k_wmma_load<F, T, ACC, COLMEM><<<1, 32>>>(d_mem, ld, d_lanes);
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_CUDA_CHECK(cudaDeviceSynchronize());
    return MMP_STATUS_OK;
}

template <class F, class T, int COLMEM>
static mmp_status launch_store(void *d_mem, unsigned ld, unsigned char *d_lanes)
{
    k_wmma_store<F, T, COLMEM><<<1, 32>>>(d_mem, ld, d_lanes);
    MMP_CUDA_CHECK(cudaGetLastError());
    MMP_CUDA_CHECK(cudaDeviceSynchronize());
    return MMP_STATUS_OK;
}

template <class F> static constexpr int xbytes() { return (int)sizeof(((F *)nullptr)->x); }

typedef struct wfrag {
    const char *name;
    int rows, cols, colmem, bits, enc, store, bytes;
    launch_fn fn;
} wfrag;

typedef struct mem_row {
    const char *id;
    int min_cc, only_cc;
    int n;                          /* 0: ldmatrix/stmatrix row */
    wfrag fr[10];
    int ld_n, ld_trans, is_st;
} mem_row;

#define FRAG_A(M, N, K, TY, T, LAY, bits, enc)                                                  \
    {"a." #LAY, M, K, !strcmp(#LAY, "col"), bits, enc, 0,                                      \
     xbytes<wmma::fragment<wmma::matrix_a, M, N, K, TY, wmma::LAY##_major>>(),                  \
     launch_load<wmma::fragment<wmma::matrix_a, M, N, K, TY, wmma::LAY##_major>, T, 0, 0>}
#define FRAG_B(M, N, K, TY, T, LAY, bits, enc)                                                  \
    {"b." #LAY, K, N, !strcmp(#LAY, "col"), bits, enc, 0,                                      \
     xbytes<wmma::fragment<wmma::matrix_b, M, N, K, TY, wmma::LAY##_major>>(),                  \
     launch_load<wmma::fragment<wmma::matrix_b, M, N, K, TY, wmma::LAY##_major>, T, 0, 0>}
#define ACC_LD(nm, M, N, K, T, COL, bits, enc)                                                 \
    {nm, M, N, COL, bits, enc, 0, xbytes<wmma::fragment<wmma::accumulator, M, N, K, T>>(),      \
     launch_load<wmma::fragment<wmma::accumulator, M, N, K, T>, T, 1, COL>}
#define ACC_ST(nm, M, N, K, T, COL, bits, enc)                                                 \
    {nm, M, N, COL, bits, enc, 1, xbytes<wmma::fragment<wmma::accumulator, M, N, K, T>>(),      \
     launch_store<wmma::fragment<wmma::accumulator, M, N, K, T>, T, COL>}

#define HALF_SHAPE(M, N, K)                                                                     \
    {"wmma.m" #M "n" #N "k" #K ".f16", 70, 0, 10,                                               \
     {FRAG_A(M, N, K, __half, __half, row, 16, ENC_F16), FRAG_A(M, N, K, __half, __half, col, 16, ENC_F16), \
      FRAG_B(M, N, K, __half, __half, row, 16, ENC_F16), FRAG_B(M, N, K, __half, __half, col, 16, ENC_F16), \
      ACC_LD("acc.f32.load.row", M, N, K, float, 0, 32, ENC_F32), ACC_LD("acc.f32.load.col", M, N, K, float, 1, 32, ENC_F32), \
      ACC_ST("acc.f32.store.row", M, N, K, float, 0, 32, ENC_F32), ACC_ST("acc.f32.store.col", M, N, K, float, 1, 32, ENC_F32), \
      ACC_LD("acc.f16.load.row", M, N, K, __half, 0, 16, ENC_F16), ACC_ST("acc.f16.store.row", M, N, K, __half, 0, 16, ENC_F16)}, \
     0, 0, 0}
#define BF16_SHAPE(M, N, K)                                                                     \
    {"wmma.m" #M "n" #N "k" #K ".bf16", 80, 0, 6,                                               \
     {FRAG_A(M, N, K, __nv_bfloat16, __nv_bfloat16, row, 16, ENC_F16), FRAG_A(M, N, K, __nv_bfloat16, __nv_bfloat16, col, 16, ENC_F16), \
      FRAG_B(M, N, K, __nv_bfloat16, __nv_bfloat16, row, 16, ENC_F16), FRAG_B(M, N, K, __nv_bfloat16, __nv_bfloat16, col, 16, ENC_F16), \
      ACC_LD("acc.f32.load.row", M, N, K, float, 0, 32, ENC_F32), ACC_ST("acc.f32.store.row", M, N, K, float, 0, 32, ENC_F32)}, \
     0, 0, 0}
#define S8_SHAPE(M, N, K)                                                                       \
    {"wmma.m" #M "n" #N "k" #K ".s8", 72, 0, 6,                                                 \
     {FRAG_A(M, N, K, signed char, signed char, row, 8, ENC_RAW), FRAG_A(M, N, K, signed char, signed char, col, 8, ENC_RAW), \
      FRAG_B(M, N, K, signed char, signed char, row, 8, ENC_RAW), FRAG_B(M, N, K, signed char, signed char, col, 8, ENC_RAW), \
      ACC_LD("acc.s32.load.row", M, N, K, int, 0, 32, ENC_I32), ACC_ST("acc.s32.store.row", M, N, K, int, 0, 32, ENC_I32)}, \
     0, 0, 0}
#define LDST_ROW(id, n, t, st, cc) {id, cc, 0, 0, {}, n, t, st}

static const mem_row k_rows[] = {
    HALF_SHAPE(16, 16, 16), HALF_SHAPE(32, 8, 16), HALF_SHAPE(8, 32, 16),
    BF16_SHAPE(16, 16, 16), BF16_SHAPE(32, 8, 16), BF16_SHAPE(8, 32, 16),
    {"wmma.m16n16k8.tf32", 80, 0, 6,
     {FRAG_A(16, 16, 8, wmma::precision::tf32, float, row, 32, ENC_F32), FRAG_A(16, 16, 8, wmma::precision::tf32, float, col, 32, ENC_F32),
      FRAG_B(16, 16, 8, wmma::precision::tf32, float, row, 32, ENC_F32), FRAG_B(16, 16, 8, wmma::precision::tf32, float, col, 32, ENC_F32),
      ACC_LD("acc.f32.load.row", 16, 16, 8, float, 0, 32, ENC_F32), ACC_ST("acc.f32.store.row", 16, 16, 8, float, 0, 32, ENC_F32)},
     0, 0, 0},
    S8_SHAPE(16, 16, 16), S8_SHAPE(32, 8, 16), S8_SHAPE(8, 32, 16),
    {"wmma.m8n8k32.s4", 75, 0, 4,
     {FRAG_A(8, 8, 32, wmma::experimental::precision::s4, void, row, 4, ENC_RAW),
      FRAG_B(8, 8, 32, wmma::experimental::precision::s4, void, col, 4, ENC_RAW),
      ACC_LD("acc.s32.load.row", 8, 8, 32, int, 0, 32, ENC_I32), ACC_ST("acc.s32.store.row", 8, 8, 32, int, 0, 32, ENC_I32)},
     0, 0, 0},
    {"wmma.m8n8k128.b1", 75, 0, 4,
     {FRAG_A(8, 8, 128, wmma::experimental::precision::b1, void, row, 1, ENC_RAW),
      FRAG_B(8, 8, 128, wmma::experimental::precision::b1, void, col, 1, ENC_RAW),
      ACC_LD("acc.s32.load.row", 8, 8, 128, int, 0, 32, ENC_I32), ACC_ST("acc.s32.store.row", 8, 8, 128, int, 0, 32, ENC_I32)},
     0, 0, 0},
    {"wmma.m8n8k4.f64", 80, 0, 6,
     {FRAG_A(8, 8, 4, double, double, row, 64, ENC_F64), FRAG_A(8, 8, 4, double, double, col, 64, ENC_F64),
      FRAG_B(8, 8, 4, double, double, row, 64, ENC_F64), FRAG_B(8, 8, 4, double, double, col, 64, ENC_F64),
      ACC_LD("acc.f64.load.row", 8, 8, 4, double, 0, 64, ENC_F64), ACC_ST("acc.f64.store.row", 8, 8, 4, double, 0, 64, ENC_F64)},
     0, 0, 0},
    LDST_ROW("ldmatrix.x1", 1, 0, 0, 75), LDST_ROW("ldmatrix.x2", 2, 0, 0, 75), LDST_ROW("ldmatrix.x4", 4, 0, 0, 75),
    LDST_ROW("ldmatrix.x1.trans", 1, 1, 0, 75), LDST_ROW("ldmatrix.x2.trans", 2, 1, 0, 75),
    LDST_ROW("ldmatrix.x4.trans", 4, 1, 0, 75),
    LDST_ROW("stmatrix.x1", 1, 0, 1, 90), LDST_ROW("stmatrix.x2", 2, 0, 1, 90), LDST_ROW("stmatrix.x4", 4, 0, 1, 90),
    LDST_ROW("stmatrix.x1.trans", 1, 1, 1, 90), LDST_ROW("stmatrix.x2.trans", 2, 1, 1, 90),
    LDST_ROW("stmatrix.x4.trans", 4, 1, 1, 90),
};

// ------------------------------------------------------------------------------------------------
// host: encode, decode, run

static void put_bits(unsigned char *buf, size_t off, int bits, uint64_t v)
{
    for (int b = 0; b < bits; b++) {
        size_t k = off + (size_t)b;
        if (v >> b & 1u) buf[k / 8] |= (unsigned char)(1u << (k % 8));
        else buf[k / 8] &= (unsigned char)~(1u << (k % 8));
    }
}

static uint64_t get_bits(const unsigned char *buf, size_t off, int bits)
{
    uint64_t v = 0;
    for (int b = 0; b < bits; b++) {
        size_t k = off + (size_t)b;
        v |= (uint64_t)(buf[k / 8] >> (k % 8) & 1u) << b;
    }
    return v;
}

/* Element code (index) -> stored bits; index + 1 is stored, so that zero padding decodes to -1. */
static uint64_t encode(int enc, int bits, uint64_t code, int pass)
{
    code += 1;
    float f = (float)code;
    double d = (double)code;
    uint32_t u;
    uint64_t w;
    switch (enc) {
    case ENC_F16: return 0x4000u + code;
    case ENC_F32: memcpy(&u, &f, 4); return u;
    case ENC_F64: memcpy(&w, &d, 8); return w;
    case ENC_I32: return code;
    default: return (code >> (pass * bits)) & ((1ull << bits) - 1);
    }
}

/* The code a raw element carries, or -1 (also for the store prefill: NaN, -1). */
static int64_t decode(int enc, uint64_t raw)
{
    float f;
    double d;
    uint32_t u = (uint32_t)raw;
    switch (enc) {
    case ENC_F16: return raw > 0x4000u && raw < 0x7000u ? (int64_t)(raw - 0x4001u) : -1;
    case ENC_F32: memcpy(&f, &u, 4); return f >= 1.0f && f < 16777216.0f && f == (float)(int64_t)f ? (int64_t)f - 1 : -1;
    case ENC_F64: memcpy(&d, &raw, 8); return d >= 1.0 && d < 1e15 && d == (double)(int64_t)d ? (int64_t)d - 1 : -1;
    case ENC_I32: return (int32_t)u >= 1 ? (int64_t)(int32_t)u - 1 : -1;
    default: return (int64_t)raw;   /* a digit: the caller assembles them and subtracts 1 */
    }
}

static mmp_status wmma_frag(mmp_layout_capture *cap, const wfrag *w)
{
    const int elems = w->bytes * 8 / w->bits, cells = w->rows * w->cols;
    /* leading dimension: the matrix's, padded to a multiple of 16 bytes as WMMA requires */
    unsigned ld = w->colmem ? (unsigned)w->rows : (unsigned)w->cols;
    while ((ld * (unsigned)w->bits) % 128u) ld++;
    const size_t span = (size_t)ld * (w->colmem ? w->cols : w->rows);
    const size_t mem_bytes = (span * w->bits + 7) / 8, lane_bytes = 32 * (size_t)w->bytes;
    int passes = 1, idx;
    if (w->enc == ENC_RAW)
        while ((1ll << (passes * w->bits)) < cells + 1) passes++;
    MMP_TRY(mmp_layout_capture_add_frag(&idx, cap, w->name, w->rows, w->cols, elems, w->bits >= 32 ? 1 : 32 / w->bits));
    unsigned char *mem = (unsigned char *)calloc(mem_bytes, 1), *lanes = (unsigned char *)calloc(lane_bytes, 1);
    int64_t *code = (int64_t *)calloc((size_t)32 * elems, sizeof(int64_t));
    void *d_mem = NULL;
    unsigned char *d_lanes = NULL;
    mmp_status st = MMP_STATUS_OK;
    if (!mem || !lanes || !code) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
#define TRY(call) do { if (st == MMP_STATUS_OK) { cudaError_t e_ = (call); \
        if (e_ != cudaSuccess) st = MMP_ERR(MMP_STATUS_CUDA, "%s %s: %s: %s", cap->id, w->name, #call, cudaGetErrorString(e_)); } } while (0)
    TRY(cudaMalloc(&d_mem, mem_bytes));
    TRY(cudaMalloc(&d_lanes, lane_bytes));
    if (!w->store) {
        for (int pass = 0; pass < passes && st == MMP_STATUS_OK; pass++) {
            for (int r = 0; r < w->rows; r++)
                for (int c = 0; c < w->cols; c++) {
                    size_t p = w->colmem ? (size_t)c * ld + r : (size_t)r * ld + c;
                    put_bits(mem, p * w->bits, w->bits, encode(w->enc, w->bits, (uint64_t)r * w->cols + c, pass));
                }
            TRY(cudaMemcpy(d_mem, mem, mem_bytes, cudaMemcpyHostToDevice));
            if (st == MMP_STATUS_OK) st = w->fn(d_mem, ld, d_lanes);
            TRY(cudaMemcpy(lanes, d_lanes, lane_bytes, cudaMemcpyDeviceToHost));
            for (int i = 0; i < 32 * elems && st == MMP_STATUS_OK; i++) {
                uint64_t raw = get_bits(lanes + (size_t)(i / elems) * w->bytes, (size_t)(i % elems) * w->bits, w->bits);
                if (w->enc == ENC_RAW) code[i] |= (int64_t)(raw << (pass * w->bits));
                else code[i] = decode(w->enc, raw);
            }
        }
        if (w->enc == ENC_RAW)
            for (int i = 0; i < 32 * elems; i++) code[i] -= 1;   /* codes are stored as index + 1 */
        for (int i = 0; i < 32 * elems && st == MMP_STATUS_OK; i++) {
            int ok = code[i] >= 0 && code[i] < cells;
            st = mmp_layout_capture_add(cap, idx, i / elems, i % elems, ok ? (int)(code[i] / w->cols) : -1,
                                        ok ? (int)(code[i] % w->cols) : -1);
        }
    } else {
        for (int i = 0; i < 32 * elems; i++)
            put_bits(lanes + (size_t)(i / elems) * w->bytes, (size_t)(i % elems) * w->bits, w->bits,
                     encode(w->enc, w->bits, (uint64_t)i, 0));
        memset(mem, 0xFF, mem_bytes);
        TRY(cudaMemcpy(d_mem, mem, mem_bytes, cudaMemcpyHostToDevice));
        TRY(cudaMemcpy(d_lanes, lanes, lane_bytes, cudaMemcpyHostToDevice));
        if (st == MMP_STATUS_OK) st = w->fn(d_mem, ld, d_lanes);
        TRY(cudaMemcpy(mem, d_mem, mem_bytes, cudaMemcpyDeviceToHost));
        for (int r = 0; r < w->rows && st == MMP_STATUS_OK; r++)
            for (int c = 0; c < w->cols && st == MMP_STATUS_OK; c++) {
                size_t p = w->colmem ? (size_t)c * ld + r : (size_t)r * ld + c;
                int64_t k = decode(w->enc, get_bits(mem, p * w->bits, w->bits));
                if (k < 0 || k >= 32 * elems) continue;
                code[k] = 1;
                st = mmp_layout_capture_add(cap, idx, (int)(k / elems), (int)(k % elems), r, c);
            }
        for (int i = 0; i < 32 * elems && st == MMP_STATUS_OK; i++)
            if (!code[i]) st = mmp_layout_capture_add(cap, idx, i / elems, i % elems, -1, -1);
    }
#undef TRY
    cudaFree(d_mem);
    cudaFree(d_lanes);
    free(mem); free(lanes); free(code);
    return st;
}

typedef void (*ld_kernel)(uint32_t *);
typedef void (*st_kernel)(uint16_t *, int *);
static const ld_kernel k_ld[3][2] = {{k_ldmatrix<1, 0>, k_ldmatrix<1, 1>}, {k_ldmatrix<2, 0>, k_ldmatrix<2, 1>},
                                     {k_ldmatrix<4, 0>, k_ldmatrix<4, 1>}};
static const st_kernel k_st[3][2] = {{k_stmatrix<1, 0>, k_stmatrix<1, 1>}, {k_stmatrix<2, 0>, k_stmatrix<2, 1>},
                                     {k_stmatrix<4, 0>, k_stmatrix<4, 1>}};

static mmp_status ldst_capture(mmp_layout_capture *cap, const mem_row *row)
{
    const int n = row->ld_n, which = n == 1 ? 0 : n == 2 ? 1 : 2, elems = 2 * n;
    int inv[32], idx, flag = 0;
    for (int l = 0; l < 32; l++) inv[row_perm(l)] = l;
    MMP_TRY(mmp_layout_capture_add_frag(&idx, cap, "R", 8 * n, 8, elems, 2));
    uint32_t *d_out = NULL, out32[128];
    uint16_t out16[256];
    int *d_flag = NULL;
    MMP_CUDA_CHECK(cudaMalloc(&d_out, sizeof out32 + sizeof out16));
    mmp_status st = MMP_STATUS_OK;
    if (cudaMalloc(&d_flag, sizeof(int)) != cudaSuccess || cudaMemset(d_flag, 0, sizeof(int)) != cudaSuccess) {
        cudaFree(d_out);
        return MMP_ERR(MMP_STATUS_CUDA, "%s: cannot allocate a flag", cap->id);
    }
    if (!row->is_st) k_ld[which][row->ld_trans]<<<1, 32>>>(d_out);
    else k_st[which][row->ld_trans]<<<1, 32>>>((uint16_t *)d_out, d_flag);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(&flag, d_flag, sizeof(int), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && !row->is_st) e = cudaMemcpy(out32, d_out, sizeof out32, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && row->is_st) e = cudaMemcpy(out16, d_out, sizeof out16, cudaMemcpyDeviceToHost);
    cudaFree(d_out);
    cudaFree(d_flag);
    if (e != cudaSuccess) return MMP_ERR(MMP_STATUS_CUDA, "%s: %s", cap->id, cudaGetErrorString(e));
    if (flag) return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s: this binary has no sm_90 code for it", cap->id);
    if (!row->is_st) {
        for (int lane = 0; lane < 32 && st == MMP_STATUS_OK; lane++)
            for (int i = 0; i < elems && st == MMP_STATUS_OK; i++) {
                unsigned v = out32[lane * n + i / 2] >> (16 * (i % 2)) & 0xFFFFu;
                st = mmp_layout_capture_add(cap, idx, lane, i, v < 256 ? inv[v / 8] : -1, v < 256 ? (int)(v % 8) : -1);
            }
        return st;
    }
    unsigned char seen[128] = {0};
    for (int p = 0; p < 256 && st == MMP_STATUS_OK; p++) {
        unsigned v = out16[p];
        if (v >= 32u * elems) continue;
        seen[v] = 1;
        st = mmp_layout_capture_add(cap, idx, (int)(v / elems), (int)(v % elems), inv[p / 8], p % 8);
    }
    for (int i = 0; i < 32 * elems && st == MMP_STATUS_OK; i++)
        if (!seen[i]) st = mmp_layout_capture_add(cap, idx, i / elems, i % elems, -1, -1);
    return st;
}

extern "C" size_t mmp_layout_gpu_mem_count(void) { return sizeof k_rows / sizeof k_rows[0]; }

extern "C" mmp_status mmp_layout_gpu_mem_info(const char **id, int *min_cc, int *only_cc, size_t i)
{
    if (i >= mmp_layout_gpu_mem_count()) return MMP_ERR(MMP_STATUS_INVALID, "no memory capture %zu", i);
    *id = k_rows[i].id;
    *min_cc = k_rows[i].min_cc;
    *only_cc = k_rows[i].only_cc;
    return MMP_STATUS_OK;
}

extern "C" mmp_status mmp_layout_gpu_mem_capture(mmp_layout_capture *cap, size_t i)
{
    if (i >= mmp_layout_gpu_mem_count()) return MMP_ERR(MMP_STATUS_INVALID, "no memory capture %zu", i);
    const mem_row *row = &k_rows[i];
    mmp_layout_capture_clear(cap);
    snprintf(cap->id, sizeof cap->id, "%s", row->id);
    snprintf(cap->kind, sizeof cap->kind, "%s", row->n ? "wmma" : row->is_st ? "stmatrix" : "ldmatrix");
    snprintf(cap->source, sizeof cap->source, "gpu: %s",
             row->n ? "position-coded memory through load_matrix_sync / store_matrix_sync"
                    : "position-coded shared memory, row address of lane l = row (13 l + 5) mod 32");
    cap->threads = 32;
    if (!row->n) return ldst_capture(cap, row);
    for (int f = 0; f < row->n; f++) MMP_TRY(wmma_frag(cap, &row->fr[f]));
    return MMP_STATUS_OK;
}
