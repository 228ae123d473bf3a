/* result.c — verdict and reason names, record initialisers. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mmaprobe/result.h"

static const char *const verdict_names[MMP_VERDICT_COUNT_] = {"PASS", "FAIL", "ERROR", "SKIP"};

static const char *const reason_names[MMP_REASON_COUNT_] = {
    "unwritten", "guard", "input-modified", "exact-mismatch", "bound-exceeded",
    "nan-mismatch", "nondeterministic", "sanitizer", "launch", "cuda",
    "crash", "timeout", "unsupported", "int32-overflow", "interrupted",
    "biased-rounding", "flushed-subnormal", "protocol",
};

const char *mmp_verdict_name(mmp_verdict v)
{
    return (unsigned)v < MMP_VERDICT_COUNT_ ? verdict_names[v] : "?";
}

mmp_status mmp_verdict_from_name(mmp_verdict *v, const char *s)
{
    for (int i = 0; i < MMP_VERDICT_COUNT_; i++)
        if (s && strcasecmp(s, verdict_names[i]) == 0) { *v = (mmp_verdict)i; return MMP_STATUS_OK; }
    return MMP_ERR(MMP_STATUS_INVALID, "unknown verdict '%s'", s ? s : "(null)");
}

const char *mmp_reason_name(mmp_reason bit)
{
    for (int i = 0; i < MMP_REASON_COUNT_; i++)
        if ((uint32_t)bit == (1u << i)) return reason_names[i];
    return "?";
}

char *mmp_reason_format(char *buf, size_t size, uint32_t mask)
{
    size_t used = 0;
    if (size == 0) return buf;
    buf[0] = '\0';
    for (int i = 0; i < MMP_REASON_COUNT_; i++) {
        if (!(mask & (1u << i))) continue;
        int w = snprintf(buf + used, size - used, "%s%s", used ? "," : "", reason_names[i]);
        if (w < 0 || (size_t)w >= size - used) break;
        used += (size_t)w;
    }
    return buf;
}

mmp_status mmp_reason_parse(uint32_t *mask, const char *list)
{
    uint32_t m = 0;
    const char *p = list ? list : "";
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (int i = 0; i < MMP_REASON_COUNT_ && len; i++)
            if (strlen(reason_names[i]) == len && strncmp(p, reason_names[i], len) == 0) {
                m |= 1u << i; found = 1;
            }
        if (len && !found) return MMP_ERR(MMP_STATUS_INVALID, "unknown reason '%.*s'", (int)len, p);
        p += len + (e ? 1 : 0);
    }
    *mask = m;
    return MMP_STATUS_OK;
}

const char *mmp_heat_mark_name(mmp_heat_mark k)
{
    static const char *const names[MMP_HEAT_MARK_COUNT_] = {"none", "guard", "nan", "unwritten"};
    return (unsigned)k < MMP_HEAT_MARK_COUNT_ ? names[k] : "?";
}

double mmp_hist_edge(int bin)
{
    if (bin <= 0) return 0.0;
    if (bin >= MMP_HIST_BINS) return INFINITY;
    return ldexp(1.0, bin - (MMP_HIST_BINS - 1)); /* bin 1 = 2^-14 ... bin 15 = 1 */
}

void mmp_metrics_init(mmp_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->worst_i = m->worst_j = m->first_bad_i = m->first_bad_j = -1;
}

const char *mmp_stage_name(mmp_stage s)
{
    static const char *names[MMP_STAGE_COUNT_] = {"inputs", "reference", "poison", "transfer",
                                                  "launch", "guards", "compare", "memory", "context"};
    return (unsigned)s < MMP_STAGE_COUNT_ ? names[s] : NULL;
}

void mmp_stage_print(FILE *out, const double ms[MMP_STAGE_COUNT_])
{
    double total = 0;
    for (int s = 0; s < MMP_STAGE_CONTEXT; s++) total += ms[s];
    fprintf(out, "time by stage:");
    for (int s = 0; s < MMP_STAGE_CONTEXT; s++)
        fprintf(out, "%s %s %.3g s (%.0f%%)", s ? "," : "", mmp_stage_name((mmp_stage)s), ms[s] / 1e3,
                total > 0 ? 100.0 * ms[s] / total : 0.0);
    /* contexts are created before a child's first case (preforked: while the previous kernel
     * runs), outside the cases' times */
    fprintf(out, "; CUDA contexts %.3g s\n", ms[MMP_STAGE_CONTEXT] / 1e3);
}

void mmp_case_result_init(mmp_case_result *r)
{
    memset(r, 0, sizeof *r);
    mmp_metrics_init(&r->metrics);
    r->verdict = MMP_VERDICT_SKIP;
    r->shard_count = 1;
    r->device = -1;
}

void mmp_env_init(mmp_env *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->gpu, sizeof e->gpu, "none");
    e->device = -1;
}
