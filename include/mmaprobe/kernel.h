/* mmaprobe/kernel.h — the versioned C ABI of a GEMM kernel under test (also the plugin ABI).
 *
 * A kernel is a descriptor row plus an entry point. Built-in kernels are rows of tables in
 * kernels/; external ones come from a shared library that exports
 *
 *     const mmp_kernel_desc *mmp_plugin_kernels(uint32_t *count, uint32_t *abi_version);
 *
 * which sets *abi_version = MMP_KERNEL_ABI_VERSION and *count, and returns an array of *count
 * descriptors that stay valid until the library is unloaded. Plugin skeleton (a CUDA one, in a
 * .cu file; examples/plugin_cuda/plugin.cu is a whole one):
 *
 *     #include "mmaprobe/plugin_cuda.h"   // kernel.h + mmp_plugin_cuda_launch_status
 *     static int run(const mmp_kernel_args *a) { my_gemm<<<...,(cudaStream_t)a->stream>>>(...); return 0; }
 *     static const mmp_kernel_desc k[] = {{ .abi_version = MMP_KERNEL_ABI_VERSION, .name = "mine",
 *         .a_format = MMP_FORMAT_FP16, .b_format = MMP_FORMAT_FP16, .c_format = MMP_FORMAT_FP32,
 *         .d_format = MMP_FORMAT_FP32, .acc_format = MMP_FORMAT_FP32, .mul_format = -1,
 *         .layouts_a = MMP_LAYOUTS_ROW, .layouts_b = MMP_LAYOUTS_COL, .layouts_d = MMP_LAYOUTS_ROW,
 *         .m_multiple = 16, .n_multiple = 16, .k_multiple = 16, .min_cc = 80,
 *         .deterministic = 1, .where = MMP_KERNEL_DEVICE, .run = run,   // C++: in field order
 *         .min_k = 16, .ld_align_bytes = 16, .launch_status = mmp_plugin_cuda_launch_status }};
 *     extern "C" const mmp_kernel_desc *mmp_plugin_kernels(uint32_t *n, uint32_t *v)
 *     { *n = 1; *v = MMP_KERNEL_ABI_VERSION; return k; }
 *
 * Entry point contract: pointers are device pointers for MMP_KERNEL_DEVICE (launch on
 * args->stream, asynchronous is fine) and host pointers for MMP_KERNEL_HOST. Layouts are those
 * in args (one of those the descriptor accepts). D holds NaN poison when run() is called and
 * every element must be written; c is NULL when beta = 0; alpha must be honoured whatever
 * reads_c says. Returns MMP_KERNEL_OK (0) on success, MMP_KERNEL_UNSUPPORTED for arguments it
 * cannot take (the case is a SKIP, never a PASS), another non-zero value on error (ERROR
 * launch). A minimum K, an ld alignment and a tight D are better declared in the descriptor
 * (min_k, ld_align_bytes, tight_d): the runner then SKIPs with a reason naming the constraint
 * without calling run().
 *
 * Launch errors: a plugin carries its own CUDA runtime (mmaprobe links its own statically), so
 * mmaprobe's cudaGetLastError() cannot see a launch that failed in the plugin (bad grid, too many
 * threads or too much shared memory per block): D stays poison and the case would read FAIL
 * unwritten. Either set .launch_status = mmp_plugin_cuda_launch_status (mmaprobe/plugin_cuda.h:
 * the plugin's runtime asked right after run(); an error is ERROR launch with its message), or
 * check in run() itself: if (cudaGetLastError() != cudaSuccess) return MMP_KERNEL_ERROR;
 *
 * Device code: before a plugin's device kernel runs, the runner reads the library's .nv_fatbin;
 * when it holds no cubin or PTX this device can run, the case is a SKIP ("plugin has code for
 * sm_90a only; this device is sm_80"), not an ERROR.
 *
 * Defaults of a field left out (0): family NULL, mul_format 0 is fp64 (so set -1: "the inputs'
 * own"), acc_bits "from acc_format", layouts 0 is refused (set a mask), reads_c no, shape
 * multiples 0 are refused (set 1 for "any"), min_cc none, arch_specific no, deterministic no
 * (two runs may differ), where device, workspace none, description none, out_round nearest
 * even, flush_subnormals no, min_k none, ld_align_bytes none, tight_d no, launch_status none.
 */
#ifndef MMAPROBE_KERNEL_H
#define MMAPROBE_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include "mmaprobe/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* major << 16 | minor. 1.1 appended out_round and flush_subnormals to mmp_kernel_desc; 1.2
 * tags the layout masks (below); 1.3 appended the constraints min_k, ld_align_bytes, tight_d and
 * the launch_status hook. 1.0 plugins (which report 1u), 1.1 and 1.2 plugins still load: their
 * rows are copied, the appended fields 0 and the masks of 1.0 and 1.1 (1, 2, 3) tagged. */
#define MMP_KERNEL_ABI_VERSION 0x10003u
#define MMP_KERNEL_ABI_VERSION_1_2 0x10002u
#define MMP_KERNEL_ABI_VERSION_1_1 0x10001u
#define MMP_KERNEL_ABI_VERSION_1_0 1u

/* Layout masks: bit (1u << layout) for each mmp_layout accepted, plus the tag MMP_LAYOUTS_TAG,
 * so that a layout value written where a mask belongs (.layouts_b = MMP_LAYOUT_COL, which is
 * 1, "row" as a bare mask) is refused when the plugin loads instead of meaning something else. */
enum { MMP_LAYOUTS_TAG = 0x100u, MMP_LAYOUTS_ROW = 0x101u, MMP_LAYOUTS_COL = 0x102u, MMP_LAYOUTS_ANY = 0x103u };
/* Whether mask accepts layout (an mmp_layout value); never test a mask with & MMP_LAYOUTS_ROW,
 * which holds the tag too. */
static inline int mmp_layouts_has(uint32_t mask, int layout) { return (int)((mask >> layout) & 1u); }
enum { MMP_KERNEL_DEVICE = 0, MMP_KERNEL_HOST = 1 };

/* Entry-point return values. UNSUPPORTED: the kernel cannot take these arguments (e.g. a
 * leading dimension its vector loads or TMA cannot align to) — reported as SKIP with reason,
 * never as PASS. Anything else non-zero is an ERROR (launch failure). */
enum { MMP_KERNEL_OK = 0, MMP_KERNEL_ERROR = 1, MMP_KERNEL_UNSUPPORTED = 2 };

typedef struct mmp_kernel_args {
    const void *a, *b, *c;         /* c may be NULL when beta == 0 */
    void *d;
    int64_t m, n, k;
    int32_t layout_a, layout_b, layout_c, layout_d;   /* mmp_layout values */
    int64_t lda, ldb, ldc, ldd;    /* in elements */
    double alpha, beta;
    void *workspace;               /* workspace_bytes(m, n, k) bytes, or NULL if 0 */
    size_t workspace_size;
    void *stream;                  /* cudaStream_t for device kernels, NULL for host kernels */
} mmp_kernel_args;

typedef int (*mmp_kernel_run_fn)(const mmp_kernel_args *args);
/* Asked right after run() (device and host kernels): 0 when the launches run() made went out
 * cleanly; else non-zero with a one-line reason in msg (size bytes, NUL-terminated), and the case
 * is ERROR launch. A CUDA plugin reads its own runtime's last error (mmp_plugin_cuda_launch_status
 * in mmaprobe/plugin_cuda.h), clearing it. */
typedef int (*mmp_kernel_launch_status_fn)(char *msg, size_t size);
typedef size_t (*mmp_kernel_workspace_fn)(int64_t m, int64_t n, int64_t k);

typedef struct mmp_kernel_desc {
    uint32_t abi_version;          /* MMP_KERNEL_ABI_VERSION */
    const char *name;              /* unique, [a-z0-9_] : first part of every case ID */
    const char *family;            /* e.g. "bf16_mma", "cublas", "host" */
    int32_t a_format, b_format, c_format, d_format; /* mmp_format values */
    int32_t acc_format;            /* declared accumulator format (error bound uses it) */
    int32_t mul_format;            /* format inputs are rounded to before multiplying
                                      (e.g. tf32 for an fp32 kernel on tensor cores); -1 = the
                                      inputs' own (set it: 0 is fp64, a format like any other) */
    int32_t acc_bits;              /* significand bits the accumulator really keeps (incl. the
                                      implicit bit), 0 = from acc_format; e.g. 14 for narrow FP8 */
    uint32_t layouts_a, layouts_b, layouts_d; /* MMP_LAYOUTS_ROW, _COL or _ANY (masks, not
                                      mmp_layout values: those are refused) */
    int32_t reads_c;               /* 1: reads C (beta != 0 cases); 0: D = alpha A*B only, C NULL.
                                      alpha is always honoured. D holds NaN poison when run()
                                      starts: every element must be written */
    int32_t m_multiple, n_multiple, k_multiple;   /* shape multiples required (1 = any) */
    int32_t min_cc;                /* e.g. 80 for sm_80; 0 for host kernels */
    int32_t arch_specific;         /* 1: needs exactly min_cc's "a" target (sm_90a) */
    int32_t deterministic;         /* 1: two runs must match bit for bit */
    int32_t where;                 /* MMP_KERNEL_DEVICE or MMP_KERNEL_HOST */
    mmp_kernel_workspace_fn workspace_bytes; /* NULL = none */
    mmp_kernel_run_fn run;
    const char *description;       /* one line */
    /* appended in ABI 1.1 (0 in a 1.0 descriptor): */
    int32_t out_round;             /* mmp_round of the kernel's own conversion of its accumulator
                                      to a narrower d_format; 0 = nearest even (the default) */
    int32_t flush_subnormals;      /* 1: subnormal outputs (and inputs) are flushed to zero, as
                                      declared (no flushed-subnormal FAIL); 0 = kept */
    /* appended in ABI 1.3 (0 in older descriptors). The constraints make a case the kernel
     * cannot take a SKIP naming the constraint, decided before run() is called: */
    int32_t min_k;                 /* smallest K taken (e.g. the pipeline depth times the K tile);
                                      0 or 1 = any */
    int32_t ld_align_bytes;        /* lda, ldb, ldc (when C is read) and ldd, in bytes, must be
                                      multiples of this (vector loads, TMA): a power of two up to
                                      4096; 0 or 1 = any */
    int32_t tight_d;               /* 1: ldd must be D's tight leading dimension (n for row-major
                                      D, m for column-major); 0 = any ldd */
    mmp_kernel_launch_status_fn launch_status; /* NULL = none (then run()'s return value and
                                      mmaprobe's own runtime are all that report a launch error) */
} mmp_kernel_desc;
/* Size of a 1.0 descriptor (the fields before out_round). */
#define MMP_KERNEL_DESC_SIZE_1_0 offsetof(mmp_kernel_desc, out_round)
/* Size of a 1.1 or 1.2 descriptor (the fields before min_k). */
#define MMP_KERNEL_DESC_SIZE_1_2 offsetof(mmp_kernel_desc, min_k)

typedef const mmp_kernel_desc *(*mmp_plugin_kernels_fn)(uint32_t *count, uint32_t *abi_version);
#define MMP_PLUGIN_SYMBOL "mmp_plugin_kernels"

#ifdef __cplusplus
}
#endif
#endif
