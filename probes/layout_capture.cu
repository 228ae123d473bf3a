/* layout_capture.cu — mma.sync fragment layouts on the GPU by one-hot pair probes.
 *
 * Build: part of libmmp (CUDA builds); run through `mmaprobe probe layout` (probes/layout_run.c).
 * Method, per mma.sync shape (a row of k_ops below):
 *   1. warp w < nA: A holds a single 1 in slot w (lane w / EA, element w % EA), B a single 1 in
 *      slot sb for every sb in turn, C = 0. D = A.B has one nonzero element (the product of
 *      the two ones) exactly when the two slots carry the same k: its D slot is recorded in
 *      pairs[w * nB + sb] (-1: D all zero; -2: several nonzero or a value other than 1).
 *   2. warp nA + c: A = B = 0, C holds a single 1 in slot c: cmap[c] = the D slot it lands in.
 * Every value is 0 or 1 of the operand's format, so the probe is exact for every type (f16,
 * bf16, tf32, e4m3, e5m2, s8/u8, s4/u4, b1 with .and.popc, f64). The host turns the table into
 * coordinates (mmp_layout_from_pairs, probes/layout_analyse.c).
 * Element i of a fragment sits at bits [i*bits, (i+1)*bits) of the thread's register list
 * (low to high), the PTX ISA packing. Ops the device arch lacks (e4m3 before sm_89, f64
 * m16n8k* before sm_90) compile to a stub that raises a flag: the host reports UNSUPPORTED.
 */
#include <cuda_runtime.h>
#include <nv/target>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cuda_check.h"
#include "mmaprobe/layout.h"

// ------------------------------------------------------------------------------------------------
// inline-asm operand lists: MMP_ASM<word bits>_<D words>_<A words>_<B words>(instruction)

#define MMP_ASM32_4_4_2(insn) \
    asm volatile(insn " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};" \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))

#define MMP_ASM32_2_4_2(insn) \
    asm volatile(insn " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};" \
                 : "=r"(d[0]), "=r"(d[1]) \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]))

#define MMP_ASM32_4_2_1(insn) \
    asm volatile(insn " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};" \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))

#define MMP_ASM32_2_2_1(insn) \
    asm volatile(insn " {%0,%1}, {%2,%3}, {%4}, {%5,%6};" \
                 : "=r"(d[0]), "=r"(d[1]) \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]))

#define MMP_ASM32_2_1_1(insn) \
    asm volatile(insn " {%0,%1}, {%2}, {%3}, {%4,%5};" \
                 : "=r"(d[0]), "=r"(d[1]) \
                 : "r"(a[0]), "r"(b[0]), "r"(c[0]), "r"(c[1]))

#define MMP_ASM32_8_2_2(insn) \
    asm volatile(insn " {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15,%16,%17,%18,%19};" \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7]) \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(c[5]), "r"(c[6]), "r"(c[7]))

#define MMP_ASM32_4_2_2(insn) \
    asm volatile(insn " {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};" \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]))

#define MMP_ASM64_2_1_1(insn) \
    asm volatile(insn " {%0,%1}, {%2}, {%3}, {%4,%5};" \
                 : "=l"(d[0]), "=l"(d[1]) \
                 : "l"(a[0]), "l"(b[0]), "l"(c[0]), "l"(c[1]))

#define MMP_ASM64_4_2_1(insn) \
    asm volatile(insn " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};" \
                 : "=l"(d[0]), "=l"(d[1]), "=l"(d[2]), "=l"(d[3]) \
                 : "l"(a[0]), "l"(a[1]), "l"(b[0]), "l"(c[0]), "l"(c[1]), "l"(c[2]), "l"(c[3]))

#define MMP_ASM64_4_4_2(insn) \
    asm volatile(insn " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};" \
                 : "=l"(d[0]), "=l"(d[1]), "=l"(d[2]), "=l"(d[3]) \
                 : "l"(a[0]), "l"(a[1]), "l"(a[2]), "l"(a[3]), "l"(b[0]), "l"(b[1]), "l"(c[0]), "l"(c[1]), "l"(c[2]), "l"(c[3]))

#define MMP_ASM64_4_8_4(insn) \
    asm volatile(insn " {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%16,%17,%18,%19};" \
                 : "=l"(d[0]), "=l"(d[1]), "=l"(d[2]), "=l"(d[3]) \
                 : "l"(a[0]), "l"(a[1]), "l"(a[2]), "l"(a[3]), "l"(a[4]), "l"(a[5]), "l"(a[6]), "l"(a[7]), "l"(b[0]), "l"(b[1]), "l"(b[2]), "l"(b[3]), "l"(c[0]), "l"(c[1]), "l"(c[2]), "l"(c[3]))


// ------------------------------------------------------------------------------------------------
// one struct per shape: word type, words and elements per lane, element bits, the value 1

#define MMP_OP(NAME, WT, ND_, NA_, NB_, EA_, EB_, EC_, BA_, BC_, ONEA_, ONEC_, TARGET, ASM)     \
    struct NAME {                                                                              \
        typedef WT W;                                                                          \
        static constexpr int ND = ND_, NA = NA_, NB = NB_, EA = EA_, EB = EB_, EC = EC_;       \
        static constexpr int BA = BA_, BC = BC_;                                               \
        static constexpr uint64_t ONE_A = ONEA_, ONE_C = ONEC_;                                \
        __device__ static bool mma(W *d, const W *a, const W *b, const W *c)                   \
        {                                                                                      \
            NV_IF_ELSE_TARGET(TARGET, (ASM; return true;),                                     \
                              ((void)d; (void)a; (void)b; (void)c; return false;))             \
        }                                                                                      \
    };

#define F16_1 0x3C00ull
#define BF16_1 0x3F80ull
#define F32_1 0x3F800000ull
#define F64_1 0x3FF0000000000000ull

MMP_OP(op_16816_f32_f16, uint32_t, 4, 4, 2, 8, 4, 4, 16, 32, F16_1, F32_1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"))
MMP_OP(op_16816_f16_f16, uint32_t, 2, 4, 2, 8, 4, 4, 16, 16, F16_1, F16_1, NV_PROVIDES_SM_80,
       MMP_ASM32_2_4_2("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"))
MMP_OP(op_16816_f32_bf16, uint32_t, 4, 4, 2, 8, 4, 4, 16, 32, BF16_1, F32_1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"))
MMP_OP(op_1688_f32_f16, uint32_t, 4, 2, 1, 4, 2, 4, 16, 32, F16_1, F32_1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_2_1("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"))
MMP_OP(op_1688_f16_f16, uint32_t, 2, 2, 1, 4, 2, 4, 16, 16, F16_1, F16_1, NV_PROVIDES_SM_80,
       MMP_ASM32_2_2_1("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16"))
MMP_OP(op_1688_f32_bf16, uint32_t, 4, 2, 1, 4, 2, 4, 16, 32, BF16_1, F32_1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_2_1("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32"))
MMP_OP(op_1688_f32_tf32, uint32_t, 4, 4, 2, 4, 2, 4, 32, 32, F32_1, F32_1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"))
MMP_OP(op_1684_f32_tf32, uint32_t, 4, 2, 1, 2, 1, 4, 32, 32, F32_1, F32_1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_2_1("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32"))
MMP_OP(op_16832_s32_s8, uint32_t, 4, 4, 2, 16, 8, 4, 8, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"))
MMP_OP(op_16832_s32_u8, uint32_t, 4, 4, 2, 16, 8, 4, 8, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32"))
MMP_OP(op_16832_f32_e4m3, uint32_t, 4, 4, 2, 16, 8, 4, 8, 32, 0x38, F32_1, NV_PROVIDES_SM_89,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"))
MMP_OP(op_16832_f32_e5m2, uint32_t, 4, 4, 2, 16, 8, 4, 8, 32, 0x3C, F32_1, NV_PROVIDES_SM_89,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"))
MMP_OP(op_16816_s32_s8, uint32_t, 4, 2, 1, 8, 4, 4, 8, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_2_1("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32"))
MMP_OP(op_16864_s32_s4, uint32_t, 4, 4, 2, 32, 16, 4, 4, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32"))
MMP_OP(op_16864_s32_u4, uint32_t, 4, 4, 2, 32, 16, 4, 4, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k64.row.col.s32.u4.u4.s32"))
MMP_OP(op_16832_s32_s4, uint32_t, 4, 2, 1, 16, 8, 4, 4, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_2_1("mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32"))
MMP_OP(op_8816_s32_s8, uint32_t, 2, 1, 1, 4, 4, 2, 8, 32, 1, 1, NV_PROVIDES_SM_75,
       MMP_ASM32_2_1_1("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32"))
MMP_OP(op_8832_s32_s4, uint32_t, 2, 1, 1, 8, 8, 2, 4, 32, 1, 1, NV_PROVIDES_SM_75,
       MMP_ASM32_2_1_1("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32"))
MMP_OP(op_88128_s32_b1, uint32_t, 2, 1, 1, 32, 32, 2, 1, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_2_1_1("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc"))
MMP_OP(op_168128_s32_b1, uint32_t, 4, 2, 1, 64, 32, 4, 1, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_2_1("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc"))
MMP_OP(op_168256_s32_b1, uint32_t, 4, 4, 2, 128, 64, 4, 1, 32, 1, 1, NV_PROVIDES_SM_80,
       MMP_ASM32_4_4_2("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc"))
MMP_OP(op_884_f64, uint64_t, 2, 1, 1, 1, 1, 2, 64, 64, F64_1, F64_1, NV_PROVIDES_SM_80,
       MMP_ASM64_2_1_1("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"))
MMP_OP(op_1684_f64, uint64_t, 4, 2, 1, 2, 1, 4, 64, 64, F64_1, F64_1, NV_PROVIDES_SM_90,
       MMP_ASM64_4_2_1("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64"))
MMP_OP(op_1688_f64, uint64_t, 4, 4, 2, 4, 2, 4, 64, 64, F64_1, F64_1, NV_PROVIDES_SM_90,
       MMP_ASM64_4_4_2("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64"))
MMP_OP(op_16816_f64, uint64_t, 4, 8, 4, 8, 4, 4, 64, 64, F64_1, F64_1, NV_PROVIDES_SM_90,
       MMP_ASM64_4_8_4("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64"))
MMP_OP(op_884_rc_f32_f16, uint32_t, 8, 2, 2, 4, 4, 8, 16, 32, F16_1, F32_1, NV_PROVIDES_SM_70,
       MMP_ASM32_8_2_2("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32"))
MMP_OP(op_884_rc_f16_f16, uint32_t, 4, 2, 2, 4, 4, 8, 16, 16, F16_1, F16_1, NV_PROVIDES_SM_70,
       MMP_ASM32_4_2_2("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16"))
MMP_OP(op_884_cr_f32_f16, uint32_t, 8, 2, 2, 4, 4, 8, 16, 32, F16_1, F32_1, NV_PROVIDES_SM_70,
       MMP_ASM32_8_2_2("mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32"))

// ------------------------------------------------------------------------------------------------
// the probe kernel

template <class W>
__device__ static void put_one(W *w, int words, int elem, int bits, uint64_t one)
{
    const int wbits = 8 * (int)sizeof(W);
    for (int i = 0; i < words; i++) w[i] = 0;
    int bit = elem * bits;
    w[bit / wbits] = (W)(one << (bit % wbits));
}

/* The D slot holding the only nonzero element of d over the warp; -1 none, -2 several/wrong. */
template <class Op>
__device__ static int32_t scan_d(const typename Op::W *d)
{
    typedef typename Op::W W;
    const int lane = threadIdx.x & 31, wbits = 8 * (int)sizeof(W);
    const uint64_t mask = Op::BC == 64 ? ~0ull : ((1ull << Op::BC) - 1);
    int count = 0, bad = 0, found = -1;
    for (int e = 0; e < Op::EC; e++) {
        int bit = e * Op::BC;
        uint64_t v = ((uint64_t)d[bit / wbits] >> (bit % wbits)) & mask;
        if (v) {
            count++;
            bad |= v != Op::ONE_C;
            found = lane * Op::EC + e;
        }
    }
    for (int o = 16; o; o >>= 1) {
        count += __shfl_xor_sync(0xffffffffu, count, o);
        bad |= __shfl_xor_sync(0xffffffffu, bad, o);
        found = max(found, __shfl_xor_sync(0xffffffffu, found, o));
    }
    return count == 0 ? -1 : (count == 1 && !bad ? found : -2);
}

template <class Op>
__global__ void k_pairs(int32_t *pairs, int32_t *cmap, int *unsupported)
{
    typedef typename Op::W W;
    const int lane = threadIdx.x & 31, warp = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int na = 32 * Op::EA, nb = 32 * Op::EB, nc = 32 * Op::EC;
    if (warp >= na + nc) return;
    W a[Op::NA], b[Op::NB], c[Op::ND], d[Op::ND];
    for (int i = 0; i < Op::NA; i++) a[i] = 0;
    for (int i = 0; i < Op::NB; i++) b[i] = 0;
    for (int i = 0; i < Op::ND; i++) c[i] = 0;
    if (warp < na) {
        if (lane == warp / Op::EA) put_one(a, Op::NA, warp % Op::EA, Op::BA, Op::ONE_A);
        for (int sb = 0; sb < nb; sb++) {
            for (int i = 0; i < Op::NB; i++) b[i] = 0;
            if (lane == sb / Op::EB) put_one(b, Op::NB, sb % Op::EB, Op::BA, Op::ONE_A);
            if (!Op::mma(d, a, b, c)) {
                if (lane == 0) *unsupported = 1;
                return;
            }
            int32_t r = scan_d<Op>(d);
            if (lane == 0) pairs[(size_t)warp * nb + sb] = r;
        }
    } else {
        int cs = warp - na;
        if (lane == cs / Op::EC) put_one(c, Op::ND, cs % Op::EC, Op::BC, Op::ONE_C);
        if (!Op::mma(d, a, b, c)) {
            if (lane == 0) *unsupported = 1;
            return;
        }
        int32_t r = scan_d<Op>(d);
        if (lane == 0) cmap[cs] = r;
    }
}

template <class Op>
static mmp_status run_pairs(int32_t *pairs, int32_t *cmap, const char *id)
{
    const int na = 32 * Op::EA, nb = 32 * Op::EB, nc = 32 * Op::EC;
    int32_t *d_pairs = NULL, *d_cmap = NULL;
    int *d_flag = NULL, flag = 0;
    mmp_status st = MMP_STATUS_OK;
    size_t np = (size_t)na * nb;
    const int threads = 128, warps = na + nc, blocks = (warps * 32 + threads - 1) / threads;
#define TRY(call)                                                                              \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            st = MMP_ERR(MMP_STATUS_CUDA, "%s: %s: %s", id, #call, cudaGetErrorString(e_));    \
            goto done;                                                                         \
        }                                                                                      \
    } while (0)
    TRY(cudaMalloc(&d_pairs, np * sizeof(int32_t)));
    TRY(cudaMalloc(&d_cmap, (size_t)nc * sizeof(int32_t)));
    TRY(cudaMalloc(&d_flag, sizeof(int)));
    TRY(cudaMemset(d_pairs, 0x80, np * sizeof(int32_t)));   /* unwritten: a large negative */
    TRY(cudaMemset(d_cmap, 0x80, (size_t)nc * sizeof(int32_t)));
    TRY(cudaMemset(d_flag, 0, sizeof(int)));
    k_pairs<Op><<<blocks, threads>>>(d_pairs, d_cmap, d_flag);
    TRY(cudaGetLastError());
    TRY(cudaDeviceSynchronize());
    TRY(cudaMemcpy(&flag, d_flag, sizeof(int), cudaMemcpyDeviceToHost));
    if (flag) {
        st = MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s: this binary has no code for it on this device's architecture", id);
        goto done;
    }
    TRY(cudaMemcpy(pairs, d_pairs, np * sizeof(int32_t), cudaMemcpyDeviceToHost));
    TRY(cudaMemcpy(cmap, d_cmap, (size_t)nc * sizeof(int32_t), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < np && st == MMP_STATUS_OK; i++)
        if (pairs[i] < -2) st = MMP_ERR(MMP_STATUS_INTERNAL, "%s: pair %zu was never written", id, i);
    for (int i = 0; i < nc && st == MMP_STATUS_OK; i++)
        if (cmap[i] < -2) st = MMP_ERR(MMP_STATUS_INTERNAL, "%s: C slot %d was never written", id, i);
#undef TRY
done:
    cudaFree(d_pairs);
    cudaFree(d_cmap);
    cudaFree(d_flag);
    return st;
}

typedef mmp_status (*pairs_fn)(int32_t *, int32_t *, const char *);

static const struct {
    const char *id;
    pairs_fn fn;
    int na, nb, nc;   /* slots, checked against the doc table */
} k_ops[] = {
#define ROW(id, op) {id, run_pairs<op>, 32 * op::EA, 32 * op::EB, 32 * op::EC}
    ROW("mma.m16n8k16.f32.f16", op_16816_f32_f16),   ROW("mma.m16n8k16.f16.f16", op_16816_f16_f16),
    ROW("mma.m16n8k16.f32.bf16", op_16816_f32_bf16), ROW("mma.m16n8k8.f32.f16", op_1688_f32_f16),
    ROW("mma.m16n8k8.f16.f16", op_1688_f16_f16),     ROW("mma.m16n8k8.f32.bf16", op_1688_f32_bf16),
    ROW("mma.m16n8k8.f32.tf32", op_1688_f32_tf32),   ROW("mma.m16n8k4.f32.tf32", op_1684_f32_tf32),
    ROW("mma.m16n8k32.s32.s8", op_16832_s32_s8),     ROW("mma.m16n8k32.s32.u8", op_16832_s32_u8),
    ROW("mma.m16n8k32.f32.e4m3", op_16832_f32_e4m3), ROW("mma.m16n8k32.f32.e5m2", op_16832_f32_e5m2),
    ROW("mma.m16n8k16.s32.s8", op_16816_s32_s8),     ROW("mma.m16n8k64.s32.s4", op_16864_s32_s4),
    ROW("mma.m16n8k64.s32.u4", op_16864_s32_u4),     ROW("mma.m16n8k32.s32.s4", op_16832_s32_s4),
    ROW("mma.m8n8k16.s32.s8", op_8816_s32_s8),       ROW("mma.m8n8k32.s32.s4", op_8832_s32_s4),
    ROW("mma.m8n8k128.s32.b1", op_88128_s32_b1),     ROW("mma.m16n8k128.s32.b1", op_168128_s32_b1),
    ROW("mma.m16n8k256.s32.b1", op_168256_s32_b1),   ROW("mma.m8n8k4.f64.f64", op_884_f64),
    ROW("mma.m16n8k4.f64.f64", op_1684_f64),         ROW("mma.m16n8k8.f64.f64", op_1688_f64),
    ROW("mma.m16n8k16.f64.f64", op_16816_f64),       ROW("mma.m8n8k4.row.col.f32.f16", op_884_rc_f32_f16),
    ROW("mma.m8n8k4.row.col.f16.f16", op_884_rc_f16_f16), ROW("mma.m8n8k4.col.row.f32.f16", op_884_cr_f32_f16),
#undef ROW
};

extern "C" mmp_status mmp_layout_gpu_mma_pairs(int32_t *pairs, int32_t *cmap, const char *id)
{
    const mmp_layout_doc *doc = mmp_layout_doc_find(id);
    for (size_t i = 0; i < sizeof k_ops / sizeof k_ops[0]; i++) {
        if (strcmp(k_ops[i].id, id) != 0) continue;
        int na, nb, nc;
        if (!doc) return MMP_ERR(MMP_STATUS_INTERNAL, "%s: no documented entry", id);
        mmp_layout_pair_sizes(&na, &nb, &nc, doc);
        if (na != k_ops[i].na || nb != k_ops[i].nb || nc != k_ops[i].nc)
            return MMP_ERR(MMP_STATUS_INTERNAL, "%s: device op has %d/%d/%d slots, doc table %d/%d/%d", id,
                           k_ops[i].na, k_ops[i].nb, k_ops[i].nc, na, nb, nc);
        return k_ops[i].fn(pairs, cmap, id);
    }
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s: no GPU probe for it", id);
}
