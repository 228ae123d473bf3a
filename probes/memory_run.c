/* memory_run.c — `mmaprobe probe --memory`: the analysis of every exposed memory map and of the
 * calibration accesses, then the measurement on the GPU, side by side.
 *
 * Measurement, chosen automatically with the reason printed:
 *   1. Nsight Compute (`ncu --csv`, clocks left alone) profiling this same program in a child
 *      mode (--calib-child / --launch-child) — counters: shared wavefronts, bank conflicts,
 *      instructions, global sectors and requests.
 *   2. clock64: a single warp's dependent loads, ~2 cycles more per extra wavefront
 *      (calibrated against the conflict-free row), when no counters can be read.
 * (CUPTI's in-process range profiler is not wired in yet: the reason is printed.)
 * The parent never initialises CUDA: children and ncu do.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/memory.h"
#include "mmaprobe/registry.h"

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>
mmp_status mmp_memory_calib_launch(double *cycles_per_access, const mmp_memory_calib *c, int iters);
#endif

typedef struct {
    int measure;
    const char *ncu;
    const char *filter;
    int64_t size;
} options;

/* The metrics wanted; those the installed ncu does not know are dropped before profiling. */
static const char *const wanted_metrics[] = {
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_ldsm.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
};
#define N_METRICS (sizeof wanted_metrics / sizeof wanted_metrics[0])

typedef struct {
    char kernel[128];
    double v[N_METRICS];
    int have[N_METRICS];
} kernel_counters;

static int self_path(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0) return -1;
    buf[n] = '\0';
    return 0;
}

/* Parses `ncu --csv` (one row per kernel x metric); fills up to max kernels in launch order. */
static int parse_ncu_csv(FILE *in, kernel_counters *out, int max)
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
        for (size_t m = 0; m < N_METRICS; m++)
            if (!strcmp(fields[col_metric], wanted_metrics[m])) {
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

/* Runs ncu over this program in a child mode; returns kernels parsed, or -1 with *why. */
static int run_ncu(const char *ncu, const char *child_args, const char *kernel_regex, kernel_counters *out,
                   int max, char *why, size_t wsize)
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
    for (size_t m = 0; m < N_METRICS; m++) {
        char base[128];
        snprintf(base, sizeof base, "%s", wanted_metrics[m]);
        char *dot = strrchr(base, '.');
        if (dot) *dot = '\0';
        if (known && !strstr(known, base)) continue;
        size_t used = strlen(metrics);
        snprintf(metrics + used, sizeof metrics - used, "%s%s", used ? "," : "", wanted_metrics[m]);
    }
    free(known);
    snprintf(cmd, sizeof cmd, "%s --csv --clock-control none --metrics %s --kernel-name regex:'%s' %s probe --memory %s 2>&1",
             ncu, metrics, kernel_regex, self, child_args);
    FILE *p = popen(cmd, "r");
    if (!p) { snprintf(why, wsize, "cannot start ncu: %s", strerror(errno)); return -1; }
    int n = parse_ncu_csv(p, out, max);
    int rc = pclose(p);
    if (n <= 0) {
        snprintf(why, wsize, "ncu produced no counters (exit %d; profiling refused or no device)",
                 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
        return -1;
    }
    return n;
}

static double metric(const kernel_counters *k, int m) { return k->have[m] ? k->v[m] : NAN; }

static void analyse_calibrations(FILE *text, FILE *json, const kernel_counters *meas, int nmeas,
                                 const double *cycles, const char *method)
{
    size_t nc;
    const mmp_memory_calib *c = mmp_memory_calibs(&nc);
    fprintf(text, "\ncalibration accesses (one warp; lane l at byte l * stride)\n");
    fprintf(text, "  %-20s %8s %10s | %12s %10s  %s\n", "access", "model", "wavefronts", "measured", "per inst",
            "agree");
    fprintf(json, "\"calibration\":{\"method\":\"%s\",\"rows\":[", method);
    for (size_t i = 0; i < nc; i++) {
        mmp_warp_access a;
        mmp_smem_cost cost;
        mmp_memory_calib_access(&a, &c[i]);
        mmp_memory_smem_cost(&cost, &a);
        double per_inst = NAN;
        if (meas && (int)i < nmeas) {
            double wf = 0, inst = 0;
            int is_ldsm = c[i].kind == MMP_ACCESS_LDSM;
            double wld = metric(&meas[i], 0), wsm = metric(&meas[i], 2);
            double ild = metric(&meas[i], 6), ism = metric(&meas[i], 8);
            wf = (isnan(wld) ? 0 : wld) + (isnan(wsm) ? 0 : wsm);
            inst = is_ldsm ? ism : ild;
            if (is_ldsm && !isnan(ild)) inst = ism; /* the loop issues only ldmatrix loads */
            per_inst = inst > 0 ? wf / inst : NAN;
        } else if (cycles && !isnan(cycles[i])) {
            /* fallback: 2 cycles per extra wavefront over the conflict-free row of the same kind */
            double base = NAN;
            for (size_t j = 0; j < nc; j++)
                if (c[j].kind == c[i].kind && c[j].bytes == c[i].bytes && c[j].expected_ways == 1) { base = cycles[j]; break; }
            mmp_smem_cost bc;
            mmp_warp_access ba;
            for (size_t j = 0; j < nc; j++)
                if (c[j].kind == c[i].kind && c[j].bytes == c[i].bytes && c[j].expected_ways == 1) {
                    mmp_memory_calib_access(&ba, &c[j]);
                    mmp_memory_smem_cost(&bc, &ba);
                    per_inst = bc.wavefronts + (cycles[i] - base) / 2.0;
                    break;
                }
        }
        int agree = !isnan(per_inst) && fabs(per_inst - cost.wavefronts) <= 0.15 * cost.wavefronts + 0.5;
        fprintf(text, "  %-20s %6d-way %10d | %12s %10.2f  %s\n", c[i].name, cost.ways, cost.wavefronts,
                isnan(per_inst) ? "-" : method, per_inst, isnan(per_inst) ? "not measured" : (agree ? "yes" : "DISAGREE"));
        char mv[32];
        if (isnan(per_inst)) snprintf(mv, sizeof mv, "null");
        else snprintf(mv, sizeof mv, "%.4f", per_inst);
        fprintf(json, "%s{\"name\":\"%s\",\"model_ways\":%d,\"model_wavefronts\":%d,\"measured_wavefronts\":%s,\"agree\":%s}",
                i ? "," : "", c[i].name, cost.ways, cost.wavefronts, mv,
                isnan(per_inst) ? "null" : (agree ? "true" : "false"));
    }
    fprintf(json, "]}");
}

#ifdef MMP_HAVE_CUDA
static const char *find_ncu(const options *o)
{
    static char path[512];
    if (o->ncu) return access(o->ncu, X_OK) == 0 ? o->ncu : NULL;
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

/* Child modes, run under ncu: launch the calibration kernels / one built-in kernel once. */
static int calib_child(void)
{
    size_t nc;
    const mmp_memory_calib *c = mmp_memory_calibs(&nc);
    for (size_t i = 0; i < nc; i++) {
        double cyc;
        if (mmp_memory_calib_launch(&cyc, &c[i], 256) != MMP_STATUS_OK) {
            fprintf(stderr, "calibration %s: %s\n", c[i].name, mmp_error_last());
            return MMP_EXIT_ENVIRONMENT;
        }
    }
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : MMP_EXIT_INTERNAL;
}

static int launch_child(const char *name, int64_t size)
{
    const mmp_kernel_desc *d = mmp_registry_find(name, MMP_REGISTRY_DEFAULT);
    if (!d) { fprintf(stderr, "no kernel '%s'\n", name); return MMP_EXIT_USAGE; }
    int64_t m = size, n = size, k = size;
    mmp_kernel_args a;
    memset(&a, 0, sizeof a);
    a.m = m; a.n = n; a.k = k;
    a.layout_a = (d->layouts_a & MMP_LAYOUTS_ROW) ? 0 : 1;
    a.layout_b = (d->layouts_b & MMP_LAYOUTS_ROW) ? 0 : 1;
    a.layout_d = (d->layouts_d & MMP_LAYOUTS_ROW) ? 0 : 1;
    a.layout_c = a.layout_d;
    a.lda = a.layout_a == 0 ? k : m;
    a.ldb = a.layout_b == 0 ? n : k;
    a.ldc = a.ldd = a.layout_d == 0 ? n : m;
    a.alpha = 1; a.beta = 0;
    void *pa, *pb, *pd;
    size_t ba = mmp_format_bytes((mmp_format)d->a_format, (size_t)(m * k));
    size_t bb = mmp_format_bytes((mmp_format)d->b_format, (size_t)(k * n));
    size_t bd = mmp_format_bytes((mmp_format)d->d_format, (size_t)(m * n));
    if (cudaMalloc(&pa, ba) || cudaMalloc(&pb, bb) || cudaMalloc(&pd, bd)) return MMP_EXIT_ENVIRONMENT;
    cudaMemset(pa, 0, ba);
    cudaMemset(pb, 0, bb);
    a.a = pa; a.b = pb; a.d = pd;
    int rc = d->run(&a);
    cudaError_t e = cudaDeviceSynchronize();
    return rc == 0 && e == cudaSuccess ? 0 : MMP_EXIT_FAIL;
}

/* Fallback: clock64 per calibration, in a child process (the parent never touches CUDA). */
static int clock_fallback(double *cycles, size_t nc)
{
    int fds[2];
    if (pipe(fds)) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        size_t n;
        const mmp_memory_calib *c = mmp_memory_calibs(&n);
        for (size_t i = 0; i < n && i < nc; i++) {
            double cyc = NAN;
            if (mmp_memory_calib_launch(&cyc, &c[i], 256) != MMP_STATUS_OK) cyc = NAN;
            if (write(fds[1], &cyc, sizeof cyc) != sizeof cyc) _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    while (got < nc && read(fds[0], &cycles[got], sizeof cycles[0]) == sizeof cycles[0]) got++;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return got == nc ? 0 : -1;
}
#endif

static int parse_options(options *o, int argc, char **argv, const char **child, const char **child_kernel)
{
    o->measure = 1; o->ncu = NULL; o->filter = "*"; o->size = 2048;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-measure")) o->measure = 0;
        else if (!strcmp(argv[i], "--ncu") && i + 1 < argc) o->ncu = argv[++i];
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) o->filter = argv[++i];
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            char *end;
            o->size = strtoll(argv[++i], &end, 10);
            if (*end || o->size < 64 || o->size > 16384) {
                fprintf(stderr, "mmaprobe probe --memory: --size must be 64..16384 (got '%s')\n", argv[i]);
                return MMP_EXIT_USAGE;
            }
        } else if (!strcmp(argv[i], "--calib-child")) *child = "calib";
        else if (!strcmp(argv[i], "--launch-child") && i + 1 < argc) { *child = "launch"; *child_kernel = argv[++i]; }
    }
    return 0;
}

int mmp_probe_memory_run(FILE *text, FILE *json, int argc, char **argv)
{
    options o;
    const char *child = NULL, *child_kernel = NULL;
    int rc = parse_options(&o, argc, argv, &child, &child_kernel);
    if (rc) return rc;
#ifdef MMP_HAVE_CUDA
    if (child && !strcmp(child, "calib")) return calib_child();
    if (child && !strcmp(child, "launch")) return launch_child(child_kernel, o.size);
#else
    if (child) { fprintf(stderr, "built without CUDA\n"); return MMP_EXIT_ENVIRONMENT; }
#endif
    size_t nc;
    mmp_memory_calibs(&nc);
    kernel_counters *meas = calloc(nc + 1, sizeof *meas);
    double *cycles = malloc(sizeof(double) * nc);
    if (!meas || !cycles) { free(meas); free(cycles); return MMP_EXIT_INTERNAL; }
    for (size_t i = 0; i < nc; i++) cycles[i] = NAN;
    int nmeas = 0;
    const char *method = "none";
    char why[256] = "measurement not requested (--no-measure)";
    const char *ncu = NULL;
    fprintf(json, "{");
    if (o.measure) {
#ifdef MMP_HAVE_CUDA
        fprintf(text, "memory measurement: CUPTI range profiler not wired in this build; trying Nsight Compute\n");
        ncu = find_ncu(&o);
        if (!ncu) snprintf(why, sizeof why, "ncu not found");
        else nmeas = run_ncu(ncu, "--calib-child", "mmp_calib_", meas, (int)nc, why, sizeof why);
        if (nmeas == (int)nc) method = "ncu";
        else {
            fprintf(text, "memory measurement: ncu unusable (%s); falling back to clock64 timing\n", why);
            nmeas = 0;
            if (clock_fallback(cycles, nc) == 0) method = "clock64";
            else snprintf(why, sizeof why, "no CUDA device for the clock64 fallback");
        }
#else
        snprintf(why, sizeof why, "built without CUDA");
#endif
    }
    if (!strcmp(method, "none")) fprintf(text, "memory measurement: none (%s); analysis only\n", why);
    else fprintf(text, "memory measurement: %s\n", method);
    fprintf(json, "\"method\":\"%s\",\"why\":\"%s\",", method, !strcmp(method, "none") ? why : "");
    analyse_calibrations(text, json, nmeas ? meas : NULL, nmeas, !strcmp(method, "clock64") ? cycles : NULL, method);

    /* every kernel that exposes a memory map */
    size_t nmaps;
    const mmp_kernel_memmap *const *maps = mmp_registry_memmaps(&nmaps);
    fprintf(text, "\nkernels (one CTA, one steady-state K step, M = N = K = %lld)\n", (long long)o.size);
    fprintf(json, ",\"kernels\":[");
    int first = 1, disagreements = 0;
    for (size_t i = 0; i < nmaps; i++) {
        if (fnmatch(o.filter, maps[i]->kernel, 0)) continue;
        const mmp_kernel_desc *d = mmp_registry_find(maps[i]->kernel, MMP_REGISTRY_DEFAULT);
        mmp_memmap_shape shape = {o.size, o.size, o.size, o.size, o.size,
                                  d ? mmp_format_get_info((mmp_format)d->a_format)->storage_bits : 16,
                                  d ? mmp_format_get_info((mmp_format)d->b_format)->storage_bits : 16};
        mmp_memory_report r;
        if (mmp_memory_analyse(&r, maps[i], &shape, 1) != MMP_STATUS_OK) {
            fprintf(text, "%s: analysis failed: %s\n", maps[i]->kernel, mmp_error_last());
            continue;
        }
        mmp_memory_print(text, &r);
        fprintf(json, "%s{\"analysis\":", first ? "" : ",");
        mmp_memory_json(json, &r);
        first = 0;
        if (!strcmp(method, "ncu") && ncu) {
            char args[256];
            kernel_counters kc[4];
            snprintf(args, sizeof args, "--size %lld --launch-child %s", (long long)o.size, maps[i]->kernel);
            int nk = run_ncu(ncu, args, "^(?!mmp_calib_)", kc, 4, why, sizeof why);
            if (nk > 0) {
                double ctas = ceil((double)o.size / maps[i]->tile_m) * ceil((double)o.size / maps[i]->tile_n);
                double steps = ceil((double)o.size / maps[i]->tile_k);
                double wld = metric(&kc[0], 0), wsm = metric(&kc[0], 2), wst = metric(&kc[0], 1);
                double ld = ((isnan(wld) ? 0 : wld) + (isnan(wsm) ? 0 : wsm)) / (ctas * steps);
                double st = (isnan(wst) ? 0 : wst) / (ctas * steps);
                double sectors = metric(&kc[0], 9) / (ctas * steps);
                int agree = fabs(ld - (double)r.smem_ld_wavefronts) <= 0.15 * (double)r.smem_ld_wavefronts + 1;
                /* Global sectors are compared too; cp.async's shared writes are not counted by the
                 * _op_st metric (they are LDGSTS traffic), so stores are shown, not judged. */
                int gagree = isnan(sectors) || fabs(sectors - (double)r.gmem_sectors) <= 0.15 * (double)r.gmem_sectors + 1;
                if (!agree) disagreements++;
                if (!gagree) disagreements++;
                fprintf(text, "  measured (ncu, per CTA per K step): shared-load wavefronts %.1f (model %lld) %s;"
                              " global sectors %.1f (model %lld) %s; store wavefronts %.1f (model %lld, cp.async"
                              " writes are not in this counter)\n",
                        ld, (long long)r.smem_ld_wavefronts, agree ? "agree" : "DISAGREE: the exposed map or the model is wrong",
                        sectors, (long long)r.gmem_sectors, gagree ? "agree" : "DISAGREE",
                        st, (long long)r.smem_st_wavefronts);
                fprintf(json, ",\"measured\":{\"method\":\"ncu\",\"smem_ld_wavefronts\":%.3f,\"smem_st_wavefronts\":%.3f,"
                              "\"gmem_sectors\":%.3f,\"agree\":%s,\"gmem_agree\":%s}", ld, st, sectors,
                        agree ? "true" : "false", gagree ? "true" : "false");
            } else {
                fprintf(text, "  measured: no counters for this kernel (%s)\n", why);
            }
        }
        fprintf(json, "}");
    }
    fprintf(json, "],\"disagreements\":%d}", disagreements);
    free(meas);
    free(cycles);
    return MMP_EXIT_PASS;
}
