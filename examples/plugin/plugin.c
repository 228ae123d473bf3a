/* A ~30-line mmaprobe plugin: a plain fp32 host GEMM (swap in your CUDA launcher and set
 * .where = MMP_KERNEL_DEVICE for a GPU kernel; pointers are then device pointers).
 * Build: cmake -S . -B build && cmake --build build
 * Run:   mmaprobe validate --plugin ./build/libmine.so --suite smoke --filter 'mine*'   */
#include "mmaprobe/gemm.h"
#include "mmaprobe/kernel.h"

static int run(const mmp_kernel_args *x)
{
    const float *a = x->a, *b = x->b;
    float *d = x->d;
    for (int64_t i = 0; i < x->m; i++)
        for (int64_t j = 0; j < x->n; j++) {
            float s = 0;
            for (int64_t k = 0; k < x->k; k++) s += a[i * x->lda + k] * b[k * x->ldb + j];
            d[i * x->ldd + j] = (float)x->alpha * s;
        }
    return MMP_KERNEL_OK;
}

static const mmp_kernel_desc kernels[] = {{
    .abi_version = MMP_KERNEL_ABI_VERSION, .name = "mine_f32", .family = "plugin",
    .a_format = MMP_FORMAT_FP32, .b_format = MMP_FORMAT_FP32, .c_format = MMP_FORMAT_FP32,
    .d_format = MMP_FORMAT_FP32, .acc_format = MMP_FORMAT_FP32, .mul_format = -1,
    .layouts_a = MMP_LAYOUTS_ROW, .layouts_b = MMP_LAYOUTS_ROW, .layouts_d = MMP_LAYOUTS_ROW,
    .m_multiple = 1, .n_multiple = 1, .k_multiple = 1, .deterministic = 1,
    .where = MMP_KERNEL_HOST, .run = run, .description = "example plugin: fp32 host loop"}};

const mmp_kernel_desc *mmp_plugin_kernels(uint32_t *count, uint32_t *abi_version)
{
    *count = 1;
    *abi_version = MMP_KERNEL_ABI_VERSION;
    return kernels;
}
