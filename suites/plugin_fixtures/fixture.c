/* fixture.c — plugin libraries for suites/check_plugin.c and suites/check_cli.c: one correct
 * plugin and one per way a plugin can be wrong. suites/CMakeLists.txt builds this file once per
 * variant as fix_<variant>.so with -DFIX_<VARIANT>:
 *
 *   good          one correct fp32 host kernel ("fix_good_f32")
 *   no_symbol     does not export mmp_plugin_kernels
 *   abi           mmp_plugin_kernels reports ABI version 99
 *   desc_abi      the descriptor says ABI version 2
 *   null_table    returns NULL            zero_count  count 0
 *   null_entry    run = NULL              null_name   name = NULL
 *   bad_name      "Bad-Name"              bad_format  a_format = 99
 *   bad_layout    layouts_a = 4           bad_multiple  m_multiple = 0
 *   int8_fp16     int8 inputs, int32 accumulator, fp16 output (an impossible combination)
 *   crash_ctor    SIGSEGV in a constructor      crash_kernels  SIGSEGV in mmp_plugin_kernels
 *   hang_ctor     a constructor that never returns
 *   dup_name      a kernel named host_f32 (taken by a built-in)
 *   device        a device kernel (min_cc 80): SKIP on a machine without a GPU
 *   wild          a host kernel that writes 64 KiB before its output buffer (crashes or
 *                 corrupts the runner child's heap; never the run)
 */
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "mmaprobe/kernel.h"

static int run_f32(const mmp_kernel_args *x)
{
    const float *a = x->a, *b = x->b;
    float *d = x->d;
    for (int64_t i = 0; i < x->m; i++)
        for (int64_t j = 0; j < x->n; j++) {
            float s = 0;
            for (int64_t k = 0; k < x->k; k++) {
                float av = x->layout_a == 0 ? a[i * x->lda + k] : a[k * x->lda + i];
                float bv = x->layout_b == 0 ? b[k * x->ldb + j] : b[j * x->ldb + k];
                s = __builtin_fmaf(av, bv, s);
            }
            if (x->layout_d == 0) d[i * x->ldd + j] = (float)(x->alpha * s);
            else d[j * x->ldd + i] = (float)(x->alpha * s);
        }
#ifdef FIX_WILD
    volatile char *p = (volatile char *)x->d - 65536;
    for (int i = 0; i < 65536; i += 64) p[i] = 0x5A;
#endif
    return 0;
}

#if defined(FIX_CRASH_CTOR)
__attribute__((constructor)) static void boom(void) { raise(SIGSEGV); }
#elif defined(FIX_HANG_CTOR)
__attribute__((constructor)) static void hang(void) { for (;;) pause(); }
#endif

#ifndef FIX_NAME
#define FIX_NAME "fix_good_f32"
#endif

static __attribute__((unused)) mmp_kernel_desc k[] = {{
    .abi_version = MMP_KERNEL_ABI_VERSION, .name = FIX_NAME, .family = "fixture",
    .a_format = MMP_FORMAT_FP32, .b_format = MMP_FORMAT_FP32, .c_format = MMP_FORMAT_FP32,
    .d_format = MMP_FORMAT_FP32, .acc_format = MMP_FORMAT_FP32, .mul_format = -1,
    .layouts_a = MMP_LAYOUTS_ANY, .layouts_b = MMP_LAYOUTS_ANY, .layouts_d = MMP_LAYOUTS_ANY,
    .m_multiple = 1, .n_multiple = 1, .k_multiple = 1, .deterministic = 1,
    .where = MMP_KERNEL_HOST, .run = run_f32, .description = "plugin fixture",
}};

#ifndef FIX_NO_SYMBOL
const mmp_kernel_desc *mmp_plugin_kernels(uint32_t *count, uint32_t *abi_version)
{
    *count = 1;
    *abi_version = MMP_KERNEL_ABI_VERSION;
#if defined(FIX_ABI)
    *abi_version = 99;
#elif defined(FIX_DESC_ABI)
    k[0].abi_version = 2;
#elif defined(FIX_NULL_TABLE)
    return NULL;
#elif defined(FIX_ZERO_COUNT)
    *count = 0;
#elif defined(FIX_NULL_ENTRY)
    k[0].run = NULL;
#elif defined(FIX_NULL_NAME)
    k[0].name = NULL;
#elif defined(FIX_BAD_NAME)
    k[0].name = "Bad-Name";
#elif defined(FIX_BAD_FORMAT)
    k[0].a_format = 99;
#elif defined(FIX_BAD_LAYOUT)
    k[0].layouts_a = 4;
#elif defined(FIX_BAD_MULTIPLE)
    k[0].m_multiple = 0;
#elif defined(FIX_INT8_FP16)
    k[0].a_format = k[0].b_format = MMP_FORMAT_INT8;
    k[0].c_format = k[0].acc_format = MMP_FORMAT_INT32;
    k[0].d_format = MMP_FORMAT_FP16;
#elif defined(FIX_CRASH_KERNELS)
    raise(SIGSEGV);
#elif defined(FIX_DUP_NAME)
    k[0].name = "host_f32";
#elif defined(FIX_WILD)
    k[0].name = "fix_wild_f32";
#elif defined(FIX_DEVICE)
    k[0].name = "fix_device_f32";
    k[0].where = MMP_KERNEL_DEVICE;
    k[0].min_cc = 80;
#endif
    return k;
}
#endif
