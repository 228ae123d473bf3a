/* kernels/int4_fused_ops.c — host side of the int4_fused operator table (fused.h): lookup by name,
 * the verbose decision line, and the empty table of a build without CUDA. */
#include <string.h>

#include "mmaprobe/fused.h"

#ifndef MMP_HAVE_CUDA
const mmp_fused_op *mmp_fused_ops(size_t *count)
{
    *count = 0;
    return NULL;
}
#endif

const mmp_fused_op *mmp_fused_op_find(const char *name)
{
    size_t n = 0;
    const mmp_fused_op *ops = mmp_fused_ops(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(ops[i].name, name) == 0) return &ops[i];
    return NULL;
}

void mmp_fused_decision_print(FILE *out, const char *name, const mmp_fused_decision *d)
{
    fprintf(out,
            "decision %s: mode=%s smem/CTA=%u (static %u + dynamic %u, limit %u) stages=%d tile=%dx%dx%d "
            "threads=%d regs=%d ctas/SM=%d grid=%d tiles=%d SMs=%d\n",
            name, mmp_fused_mode_name(d->mode), d->smem_static + d->smem_dynamic, d->smem_static, d->smem_dynamic,
            d->smem_limit, d->stages, d->tile_m, d->tile_n, d->tile_k, d->threads, d->regs, d->ctas_per_sm, d->grid,
            d->tiles, d->sms);
}
