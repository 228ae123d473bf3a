/* layout_wgmma.cu — wgmma .m64nNk16 accumulator layout on the GPU (sm_90a only).
 *
 * Build: compiled for sm_90a alone into libmmp (CMake's sm90a/ rule); run through
 *   `mmaprobe probe layout --filter wgmma` on an H100/H200.
 * Method (version 1, the only one): one warpgroup (128 threads) runs
 *   wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 with A in registers and B in shared memory,
 * scale-d = 0 (D = A.B). A(i,0) = i, A(i,1) = 1, B(0,j) = 1, B(1,j) = 64 j, all else 0, so
 * D(i,j) = i + 64 j exactly (every value is an integer below 2^14, exact in fp16 and fp32).
 * Each thread returns its N/2 accumulator registers; the host decodes (i, j) from each value.
 * Coordinates: rows are defined through A's register layout (the PTX ISA's wgmma A fragment,
 * the m16n8k16 layout per warp: warp w holds rows 16w..16w+15), columns through B's shared
 * memory: K-major, no swizzle, core matrices of 8 rows x 16 bytes, LBO = 128 bytes (next core
 * matrix along K), SBO = 256 bytes (next 8 rows along N). A mistake in either shows as values
 * that do not decode (unplaced elements) or as differences in the columns, never silently.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/layout.h"

template <int N>
__device__ void wgmma_rs(float *d, const uint32_t *a, uint64_t desc, int scale_d);

template <>
__device__ void wgmma_rs<8>(float *d, const uint32_t *a, uint64_t desc, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

template <>
__device__ void wgmma_rs<16>(float *d, const uint32_t *a, uint64_t desc, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

template <>
__device__ void wgmma_rs<64>(float *d, const uint32_t *a, uint64_t desc, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

template <>
__device__ void wgmma_rs<128>(float *d, const uint32_t *a, uint64_t desc, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

template <>
__device__ void wgmma_rs<256>(float *d, const uint32_t *a, uint64_t desc, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128,%129,%130,%131}, %132, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}

static __device__ uint32_t pack_half2(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &h, 4);
    return u;
}

static __device__ float a_value(int row, int col) { return col == 0 ? (float)row : col == 1 ? 1.0f : 0.0f; }

template <int N>
__global__ void k_wgmma(float *out, int *unsupported)
{
    __shared__ alignas(256) __half bs[256 * 16];
    const int t = threadIdx.x, w = t / 32, l = t % 32, g = l >> 2, tg = l & 3;
    for (int i = t; i < N * 16; i += 128) {
        int n = i / 16, k = i % 16;
        float v = k == 0 ? 1.0f : k == 1 ? 64.0f * (float)n : 0.0f;
        bs[((n / 8) * 256 + (k / 8) * 128 + (n % 8) * 16 + (k % 8) * 2) / 2] = __float2half(v);
    }
    uint32_t a[4];
    for (int r = 0; r < 4; r++) {
        int row = 16 * w + g + 8 * (r & 1), col = 2 * tg + 8 * (r >> 1);
        a[r] = pack_half2(a_value(row, col), a_value(row, col + 1));
    }
    float d[N / 2];
    for (int i = 0; i < N / 2; i++) d[i] = 0.0f;
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(bs);
    uint64_t desc = (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    wgmma_rs<N>(d, a, desc, 0);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#else
    (void)desc;
    if (t == 0) *unsupported = 1;
#endif
    for (int i = 0; i < N / 2; i++) out[t * (N / 2) + i] = d[i];
}

typedef void (*wg_kernel)(float *, int *);
static const struct { int n; wg_kernel k; } k_wg[] = {
    {8, k_wgmma<8>}, {16, k_wgmma<16>}, {64, k_wgmma<64>}, {128, k_wgmma<128>}, {256, k_wgmma<256>},
};

extern "C" mmp_status mmp_layout_gpu_wgmma(mmp_layout_capture *cap, int n)
{
    wg_kernel kern = NULL;
    for (size_t i = 0; i < sizeof k_wg / sizeof k_wg[0]; i++)
        if (k_wg[i].n == n) kern = k_wg[i].k;
    if (!kern) return MMP_ERR(MMP_STATUS_INVALID, "wgmma: no probe for N = %d (8, 16, 64, 128, 256)", n);
    const int per = n / 2;
    float *d_out = NULL, *out = (float *)malloc(sizeof(float) * 128 * per);
    int *d_flag = NULL, flag = 0;
    if (!out) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    cudaError_t e = cudaMalloc(&d_out, sizeof(float) * 128 * per);
    if (e == cudaSuccess) e = cudaMalloc(&d_flag, sizeof(int));
    if (e == cudaSuccess) e = cudaMemset(d_flag, 0, sizeof(int));
    if (e == cudaSuccess) {
        kern<<<1, 128>>>(d_out, d_flag);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(&flag, d_flag, sizeof(int), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(out, d_out, sizeof(float) * 128 * per, cudaMemcpyDeviceToHost);
    cudaFree(d_out);
    cudaFree(d_flag);
    mmp_status st = MMP_STATUS_OK;
    if (e != cudaSuccess) st = MMP_ERR(MMP_STATUS_CUDA, "wgmma n%d: %s", n, cudaGetErrorString(e));
    else if (flag) st = MMP_ERR(MMP_STATUS_UNSUPPORTED, "wgmma n%d: this binary has no sm_90a code", n);
    int idx = 0;
    if (st == MMP_STATUS_OK) {
        mmp_layout_capture_clear(cap);
        snprintf(cap->id, sizeof cap->id, "wgmma.m64n%dk16.f32.f16", n);
        snprintf(cap->kind, sizeof cap->kind, "wgmma");
        snprintf(cap->source, sizeof cap->source,
                 "gpu: D = A.B with D(i,j) = i + 64 j (A in registers, B K-major no-swizzle in shared memory)");
        cap->threads = 128;
        st = mmp_layout_capture_add_frag(&idx, cap, "D", 64, n, per, 1);
    }
    for (int t = 0; t < 128 && st == MMP_STATUS_OK; t++)
        for (int i = 0; i < per && st == MMP_STATUS_OK; i++) {
            float v = out[t * per + i];
            int ok = v >= 0.0f && v < 64.0f * (float)n && v == (float)(int)v;
            int code = ok ? (int)v : 0;
            st = mmp_layout_capture_add(cap, idx, t, i, ok ? code % 64 : -1, ok ? code / 64 : -1);
        }
    free(out);
    return st;
}
