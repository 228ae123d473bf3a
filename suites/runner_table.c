/* runner_table.c — the end-of-run table per kernel x precision: pass/fail/error/skip counts,
 * worst error/bound ratio, max ULP, time (local printer; reports/ renders the same from JSON). */
#include <math.h>
#include <string.h>

#include "mmaprobe/runner.h"

typedef struct {
    const char *kernel, *precision;
    int count[MMP_VERDICT_COUNT_];
    double worst_ratio, max_ulp, ms;
} row;

void mmp_runner_print_table(FILE *out, const mmp_case_result *res, size_t n)
{
    row rows[256];
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        const mmp_case_result *r = &res[i];
        size_t j = 0;
        while (j < nr && (strcmp(rows[j].kernel, r->kernel) || strcmp(rows[j].precision, r->precision))) j++;
        if (j == nr) {
            if (nr == sizeof rows / sizeof rows[0]) continue;
            memset(&rows[nr], 0, sizeof rows[nr]);
            rows[nr].kernel = r->kernel;
            rows[nr].precision = r->precision;
            nr++;
        }
        if ((unsigned)r->verdict < MMP_VERDICT_COUNT_) rows[j].count[r->verdict]++;
        if (r->verdict == MMP_VERDICT_PASS || r->verdict == MMP_VERDICT_FAIL) {
            /* NaN: some case had no meaningful bound (an infinite one); it stays visible */
            if (r->metrics.max_ratio_det > rows[j].worst_ratio || isnan(r->metrics.max_ratio_det))
                rows[j].worst_ratio = r->metrics.max_ratio_det;
            if (r->metrics.max_ulp > rows[j].max_ulp) rows[j].max_ulp = r->metrics.max_ulp;
        }
        rows[j].ms += r->time_total_ms;
    }
    double stages[MMP_STAGE_COUNT_] = {0};
    for (size_t i = 0; i < n; i++)
        for (int s = 0; s < MMP_STAGE_COUNT_; s++) stages[s] += res[i].time_stage_ms[s];
    fprintf(out, "%-28s %-16s %5s %5s %5s %5s %11s %9s %9s\n", "kernel", "precision", "pass", "fail", "error",
            "skip", "err/bound", "max ulp", "time s");
    for (size_t j = 0; j < nr; j++) {
        char ratio[24], ulp[24];
        const int measured = rows[j].count[0] + rows[j].count[1] > 0;   /* a PASS or FAIL case: figures */
        if (!measured) snprintf(ratio, sizeof ratio, "-");
        else if (isnan(rows[j].worst_ratio)) snprintf(ratio, sizeof ratio, "none");
        else snprintf(ratio, sizeof ratio, "%.3g", rows[j].worst_ratio);
        if (measured) snprintf(ulp, sizeof ulp, "%.3g", rows[j].max_ulp);
        else snprintf(ulp, sizeof ulp, "-");
        fprintf(out, "%-28s %-16s %5d %5d %5d %5d %11s %9s %9.2f\n", rows[j].kernel, rows[j].precision,
                rows[j].count[0], rows[j].count[1], rows[j].count[2], rows[j].count[3], ratio, ulp, rows[j].ms / 1e3);
    }
    mmp_stage_print(out, stages);
}
