/* registry.c — every built-in kernel family, listed once. A family whose file is not built
 * (host-only build, or not written yet) resolves to the weak empty getters below; the real
 * getters in kernels/<family>.* override them (executables link libmmp as a whole archive). */
#include <fnmatch.h>
#include <pthread.h>
#include <string.h>

#include "mmaprobe/registry.h"

#define MMP_WEAK_FAMILY(f)                                                                   \
    __attribute__((weak)) const mmp_kernel_desc *mmp_kernels_##f(size_t *count)             \
    { *count = 0; return NULL; }                                                             \
    __attribute__((weak)) const mmp_kernel_memmap *mmp_memmaps_##f(size_t *count)           \
    { *count = 0; return NULL; }
MMP_KERNEL_FAMILIES(MMP_WEAK_FAMILY)
MMP_MUTANT_FAMILIES(MMP_WEAK_FAMILY)

#define MMP_FAMILY_ROW(f) {mmp_kernels_##f, mmp_memmaps_##f},
typedef struct {
    mmp_family_fn kernels;
    const mmp_kernel_memmap *(*memmaps)(size_t *);
} family_row;
static const family_row default_families[] = {MMP_KERNEL_FAMILIES(MMP_FAMILY_ROW)};
static const family_row mutant_families[] = {MMP_MUTANT_FAMILIES(MMP_FAMILY_ROW)};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define MAX_KERNELS 1024
static const mmp_kernel_desc *lists[4][MAX_KERNELS];
static size_t list_len[4];
static const mmp_kernel_memmap *maps[MAX_KERNELS];
static size_t maps_len;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void add_families(int which, const family_row *rows, size_t nrows)
{
    for (size_t f = 0; f < nrows; f++) {
        size_t n = 0;
        const mmp_kernel_desc *t = rows[f].kernels(&n);
        for (size_t i = 0; t && i < n && list_len[which] < MAX_KERNELS; i++)
            lists[which][list_len[which]++] = &t[i];
    }
}

static void build(void)
{
    add_families(MMP_REGISTRY_DEFAULT, default_families, COUNT(default_families));
    add_families(MMP_REGISTRY_MUTANTS, mutant_families, COUNT(mutant_families));
    add_families(MMP_REGISTRY_ALL, default_families, COUNT(default_families));
    add_families(MMP_REGISTRY_ALL, mutant_families, COUNT(mutant_families));
    for (size_t f = 0; f < COUNT(default_families); f++) {
        size_t n = 0;
        const mmp_kernel_memmap *t = default_families[f].memmaps(&n);
        for (size_t i = 0; t && i < n && maps_len < MAX_KERNELS; i++) maps[maps_len++] = &t[i];
    }
}

const mmp_kernel_desc *const *mmp_registry_kernels(size_t *count, int which)
{
    pthread_once(&once, build);
    if (which < MMP_REGISTRY_DEFAULT || which > MMP_REGISTRY_ALL) which = MMP_REGISTRY_DEFAULT;
    *count = list_len[which];
    return lists[which];
}

const mmp_kernel_desc *mmp_registry_find(const char *name, int which)
{
    size_t n;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&n, which);
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(k[i]->name, name)) return k[i];
    return NULL;
}

const mmp_kernel_memmap *const *mmp_registry_memmaps(size_t *count)
{
    pthread_once(&once, build);
    *count = maps_len;
    return maps;
}
