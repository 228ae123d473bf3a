/* memory_ncu.c — Nsight Compute as a counter source for `probe --memory` (memory_internal.h):
 * `ncu --csv --clock-control none` profiles this same program in a child mode (--calib-child /
 * --launch-child KERNEL); the metrics the installed ncu does not know are dropped first. Needs no
 * CUDA in this process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memory_internal.h"

static int self_path(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0) return -1;
    buf[n] = '\0';
    return 0;
}

const char *mmp_memory_ncu_find(const char *opt)
{
    static char path[512];
    if (opt) return access(opt, X_OK) == 0 ? opt : NULL;
    const char *cands[] = {"/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu", NULL};
    for (int i = 0; cands[i]; i++)
        if (access(cands[i], X_OK) == 0) return cands[i];
    FILE *p = popen("command -v ncu 2>/dev/null", "r");
    if (!p) return NULL;
    char *ok = fgets(path, sizeof path, p);
    pclose(p);
    if (!ok) return NULL;
    path[strcspn(path, "\n")] = '\0';
    return path[0] ? path : NULL;
}

int mmp_memory_ncu_parse(mmp_memory_counters *out, int max, FILE *in)
{
    char line[4096];
    int n = 0, col_id = -1, col_kernel = -1, col_metric = -1, col_value = -1;
    char last_id[64] = "";
    while (fgets(line, sizeof line, in)) {
        if (line[0] != '"') continue;
        char *fields[64];
        int nf = 0;
        for (char *p = line; *p && nf < 64;) {
            if (*p != '"') break;
            char *start = ++p;
            while (*p && *p != '"') p++;
            if (*p) *p++ = '\0';
            fields[nf++] = start;
            if (*p == ',') p++;
        }
        if (col_metric < 0) {
            for (int i = 0; i < nf; i++) {
                if (!strcmp(fields[i], "ID")) col_id = i;
                if (!strcmp(fields[i], "Kernel Name")) col_kernel = i;
                if (!strcmp(fields[i], "Metric Name")) col_metric = i;
                if (!strcmp(fields[i], "Metric Value")) col_value = i;
            }
            continue;
        }
        if (col_id >= nf || col_kernel >= nf || col_metric >= nf || col_value >= nf) continue;
        if (strcmp(fields[col_id], last_id)) {
            if (n >= max) break;
            snprintf(last_id, sizeof last_id, "%s", fields[col_id]);
            memset(&out[n], 0, sizeof out[n]);
            snprintf(out[n].kernel, sizeof out[n].kernel, "%s", fields[col_kernel]);
            n++;
        }
        for (size_t m = 0; m < MMP_MEMORY_N_METRICS; m++)
            if (!strcmp(fields[col_metric], mmp_memory_metrics[m])) {
                char *v = fields[col_value], clean[64];
                size_t k = 0;
                for (; *v && k + 1 < sizeof clean; v++)
                    if (*v != ',') clean[k++] = *v;
                clean[k] = '\0';
                out[n - 1].v[m] = strtod(clean, NULL);
                out[n - 1].have[m] = 1;
            }
    }
    return n;
}

int mmp_memory_ncu_run(const char *ncu, const char *child_args, const char *kernel_regex,
                       mmp_memory_counters *out, int max, char *why, size_t wsize)
{
    char self[512], cmd[4096], metrics[2048] = "";
    if (self_path(self, sizeof self)) { snprintf(why, wsize, "cannot find this program's path"); return -1; }
    /* keep only the metrics this ncu knows */
    snprintf(cmd, sizeof cmd, "%s --query-metrics 2>/dev/null", ncu);
    FILE *q = popen(cmd, "r");
    char *known = NULL;
    size_t klen = 0;
    if (q) {
        char buf[4096];
        size_t r;
        while ((r = fread(buf, 1, sizeof buf, q)) > 0) {
            char *nk = realloc(known, klen + r + 1);
            if (!nk) break;
            known = nk;
            memcpy(known + klen, buf, r);
            klen += r;
            known[klen] = '\0';
        }
        pclose(q);
    }
    for (size_t m = 0; m < MMP_MEMORY_N_METRICS; m++) {
        char base[128];
        snprintf(base, sizeof base, "%s", mmp_memory_metrics[m]);
        char *dot = strrchr(base, '.');
        if (dot) *dot = '\0';
        if (known && !strstr(known, base)) continue;
        size_t used = strlen(metrics);
        snprintf(metrics + used, sizeof metrics - used, "%s%s", used ? "," : "", mmp_memory_metrics[m]);
    }
    free(known);
    snprintf(cmd, sizeof cmd, "%s --csv --clock-control none --metrics %s --kernel-name regex:'%s' %s probe --memory %s 2>&1",
             ncu, metrics, kernel_regex, self, child_args);
    FILE *p = popen(cmd, "r");
    if (!p) { snprintf(why, wsize, "cannot start ncu: %s", strerror(errno)); return -1; }
    int n = mmp_memory_ncu_parse(out, max, p);
    int rc = pclose(p);
    if (n <= 0) {
        snprintf(why, wsize, "ncu produced no counters (exit %d; profiling refused or no device)",
                 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
        return -1;
    }
    return n;
}
