/* mmaprobe/registry.h — the built-in kernels: rows of per-family tables.
 *
 * Each family file (kernels/<family>.cu or .c) defines its getter, e.g.
 *     const mmp_kernel_desc *mmp_kernels_bf16_mma(size_t *count);
 * returning a static table. kernels/registry.c lists every family getter; a family not built
 * (no CUDA, or not written yet) falls back to a weak empty getter there. Mutants (deliberately
 * broken kernels the harness must catch) are separate families, never in the default list.
 *
 * Usage:
 *   size_t n; const mmp_kernel_desc *const *k = mmp_registry_kernels(&n, MMP_REGISTRY_DEFAULT);
 *   const mmp_kernel_desc *d = mmp_registry_find("cublas_hgemm", MMP_REGISTRY_ALL);
 */
#ifndef MMAPROBE_REGISTRY_H
#define MMAPROBE_REGISTRY_H

#include <stddef.h>
#include "mmaprobe/kernel.h"
#include "mmaprobe/memmap.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MMP_REGISTRY_DEFAULT = 1, MMP_REGISTRY_MUTANTS = 2, MMP_REGISTRY_ALL = 3 };

typedef const mmp_kernel_desc *(*mmp_family_fn)(size_t *count);

/* Pointers to every registered descriptor selected by which (a static array, built once). */
const mmp_kernel_desc *const *mmp_registry_kernels(size_t *count, int which);
const mmp_kernel_desc *mmp_registry_find(const char *name, int which);
/* Memory maps (for probes --memory) of the kernels that expose them. */
const mmp_kernel_memmap *const *mmp_registry_memmaps(size_t *count);

/* Family getters (kernels/registry.c has weak empty defaults for each). */
#define MMP_KERNEL_FAMILIES(X) \
    X(host) X(cublas) X(simt) X(fp16_wmma) X(fp16_ptx) X(bf16_mma) X(int8_ptx) X(int4_ptx) \
    X(wgmma) X(int4_fused)
#define MMP_MUTANT_FAMILIES(X) X(host_mutants) X(cuda_mutants) X(host_tcm)
#define MMP_DECLARE_FAMILY(f) const mmp_kernel_desc *mmp_kernels_##f(size_t *count); \
                              const mmp_kernel_memmap *mmp_memmaps_##f(size_t *count);
MMP_KERNEL_FAMILIES(MMP_DECLARE_FAMILY)
MMP_MUTANT_FAMILIES(MMP_DECLARE_FAMILY)

#ifdef __cplusplus
}
#endif
#endif
