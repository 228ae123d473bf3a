/* memory_ncu.c — Nsight Compute as a counter source for `probe --memory` (memory_internal.h):
 * `ncu --csv --clock-control none` profiles this same program in a child mode (--calib-child /
 * --launch-child KERNEL); the metrics the installed ncu does not know are dropped first. Needs no
 * CUDA in this process. ncu runs with an argument vector (mmaprobe/sysio.h), never through a
 * shell: --ncu PATH reaches it as one word, whatever characters it holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memory_internal.h"
#include "mmaprobe/sysio.h"

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
    return mmp_spawn_which(path, sizeof path, "ncu", NULL) == 0 ? path : NULL;
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

/* At most this many words in child_args (it is built by memory_run.c: "--size N --launch-child K"). */
#define MAX_CHILD_ARGS 8

int mmp_memory_ncu_run(const char *ncu, const char *child_args, const char *kernel_regex,
                       mmp_memory_counters *out, int max, char *why, size_t wsize)
{
    char self[512], metrics[2048] = "", regex[512], words[256];
    if (self_path(self, sizeof self)) { snprintf(why, wsize, "cannot find this program's path"); return -1; }
    /* keep only the metrics this ncu knows */
    char *query[] = {(char *)ncu, "--query-metrics", NULL};
    mmp_child q;
    char *known = NULL;
    size_t klen = 0;
    if (mmp_spawn_read(&q, query, MMP_SPAWN_STDERR_NULL) == MMP_STATUS_OK) {
        char buf[4096];
        size_t r;
        while ((r = fread(buf, 1, sizeof buf, q.out)) > 0) {
            char *nk = realloc(known, klen + r + 1);
            if (!nk) break;
            known = nk;
            memcpy(known + klen, buf, r);
            klen += r;
            known[klen] = '\0';
        }
        mmp_spawn_wait(&q);
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
    snprintf(regex, sizeof regex, "regex:%s", kernel_regex);
    char *argv[16 + MAX_CHILD_ARGS] = {(char *)ncu, "--csv", "--clock-control", "none", "--metrics", metrics,
                                       "--kernel-name", regex, self, "probe", "--memory"};
    int argc = 11;
    snprintf(words, sizeof words, "%s", child_args ? child_args : "");
    char *save = NULL;
    for (char *w = strtok_r(words, " ", &save); w && argc < 11 + MAX_CHILD_ARGS; w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    argv[argc] = NULL;
    mmp_child p;
    if (mmp_spawn_read(&p, argv, MMP_SPAWN_STDERR_OUT) != MMP_STATUS_OK) {
        snprintf(why, wsize, "%s", mmp_error_last());
        return -1;
    }
    int n = mmp_memory_ncu_parse(out, max, p.out);
    int rc = mmp_spawn_wait(&p);
    if (n <= 0) {
        snprintf(why, wsize, "ncu produced no counters (exit %d; profiling refused or no device)",
                 rc >= 0 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
        return -1;
    }
    return n;
}
