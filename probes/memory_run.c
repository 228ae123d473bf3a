/* memory_run.c — `mmaprobe probe --memory`: the analysis of every exposed memory map and of the
 * calibration accesses, then the measurement on the GPU, side by side.
 *
 * Measurement (`--counters auto|cupti|ncu|clock`, default auto = the first that works, in this
 * order, each refusal printed with its reason and kept in the results' "why"):
 *   1. cupti: CUPTI's Range Profiler in a forked child (probes/memory_cupti.c; libcupti is
 *      dlopen'ed). Trusted only when every calibration row agrees with the model
 *      (mmp_memory_counters_accept); otherwise "CUPTI counters disagree with calibration <row>:
 *      measured X, model Y" and the next method is tried. Not yet run on a GPU.
 *   2. ncu: Nsight Compute (`ncu --csv`, clocks left alone) profiling this same program in a
 *      child mode (--calib-child / --launch-child; probes/memory_ncu.c).
 *   Both give shared wavefronts, bank conflicts, instructions, global sectors and requests.
 *   3. clock: a single warp's dependent loads, ~2 cycles more per extra wavefront (calibrated
 *      against the conflict-free row), when no counters can be read (calibrations only).
 * A method named with --counters is the only one tried: when it cannot measure, one line on
 * stderr gives the reason and the exit code is 3 (environment); no measurement is invented.
 * The parent never initialises CUDA: children and ncu do.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/core.h"
#include "mmaprobe/memory.h"
#include "mmaprobe/registry.h"
#include "memory_internal.h"

#ifdef MMP_HAVE_CUDA
mmp_status mmp_memory_calib_launch(double *cycles_per_access, const mmp_memory_calib *c, int iters);
#endif

enum { C_AUTO, C_CUPTI, C_NCU, C_CLOCK };
static const char *const counter_names[] = {"auto", "cupti", "ncu", "clock"};
/* the method used, by the same index (C_AUTO: none was) */
static const char *const method_names[] = {"none", "cupti", "ncu", "clock64"};

typedef struct {
    int measure;
    int counters;                    /* C_* */
    const char *ncu;
    const char *filter;
    int64_t size;
} options;

typedef mmp_memory_counters kernel_counters;


static mmp_status analyse_calibrations(mmp_memory_results *out, FILE *text, const kernel_counters *meas, int nmeas,
                                       const double *cycles, const char *method)
{
    size_t nc;
    const mmp_memory_calib *c = mmp_memory_calibs(&nc);
    fprintf(text, "\ncalibration accesses (one warp; lane l at byte l * stride)\n");
    fprintf(text, "  %-20s %8s %10s | %12s %10s  %s\n", "access", "model", "wavefronts", "measured", "per inst",
            "agree");
    for (size_t i = 0; i < nc; i++) {
        mmp_warp_access a;
        mmp_smem_cost cost;
        mmp_memory_calib_access(&a, &c[i]);
        mmp_memory_smem_cost(&cost, &a);
        double per_inst = NAN;
        if (meas && (int)i < nmeas) {
            per_inst = mmp_memory_calib_measured(&meas[i], &c[i]);
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
        int agree = mmp_memory_calib_agree(per_inst, cost.wavefronts);
        fprintf(text, "  %-20s %6d-way %10d | %12s %10.2f  %s\n", c[i].name, cost.ways, cost.wavefronts,
                isnan(per_inst) ? "-" : method, per_inst, isnan(per_inst) ? "not measured" : (agree ? "yes" : "DISAGREE"));
        mmp_memory_calib_result cr;
        memset(&cr, 0, sizeof cr);
        snprintf(cr.name, sizeof cr.name, "%s", c[i].name);
        cr.model_ways = cost.ways;
        cr.model_wavefronts = cost.wavefronts;
        cr.measured_wavefronts = per_inst;
        cr.agree = isnan(per_inst) ? -1 : agree;
        MMP_TRY(mmp_memory_results_add_calib(out, &cr));
    }
    return MMP_STATUS_OK;
}

#ifdef MMP_HAVE_CUDA
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
    int timed = 0;
    while (got < nc && read(fds[0], &cycles[got], sizeof cycles[0]) == sizeof cycles[0]) timed += !isnan(cycles[got++]);
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return got == nc && timed > 0 ? 0 : -1; /* all rows NaN: no device, nothing measured */
}
#endif

static int parse_options(options *o, int argc, char **argv, const char **child, const char **child_kernel)
{
    o->measure = 1; o->counters = C_AUTO; o->ncu = NULL; o->filter = "*"; o->size = 2048;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-measure")) o->measure = 0;
        else if (!strcmp(argv[i], "--ncu") && i + 1 < argc) o->ncu = argv[++i];
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) o->filter = argv[++i];
        else if (!strcmp(argv[i], "--counters") && i + 1 < argc) {
            const char *v = argv[++i];
            int k = 0;
            while (k < 4 && strcmp(v, counter_names[k])) k++;
            if (k == 4) {
                fprintf(stderr, "mmaprobe probe --memory: --counters must be auto, cupti, ncu or clock (got '%s')\n", v);
                return MMP_EXIT_USAGE;
            }
            o->counters = k;
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
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

/* A method was refused: print it, remember it for "why"; returns 1 when it was the only one allowed. */
static int refused(FILE *text, char *why, size_t wsize, const options *o, int method, const char *reason,
                   const char *next)
{
    size_t used = strlen(why);
    snprintf(why + used, wsize - used, "%s%s: %s", used ? "; " : "", counter_names[method], reason);
    if (o->counters == method) {
        fprintf(stderr, "mmaprobe probe --memory: --counters %s: %s\n", counter_names[method], reason);
        return 1;
    }
    fprintf(text, "memory measurement: %s unusable (%s); %s\n", counter_names[method], reason, next);
    return 0;
}

/* Measured figures of one kernel (counters of its first launch) beside its analysis. */
static void compare_kernel(mmp_memory_kernel_result *kr, FILE *text, const kernel_counters *kc,
                           const mmp_kernel_memmap *map, int64_t size, const char *method, int *disagreements)
{
    const mmp_memory_report *r = &kr->analysis;
    double ctas = ceil((double)size / map->tile_m) * ceil((double)size / map->tile_n);
    double steps = ceil((double)size / map->tile_k);
    double wld = mmp_memory_counter(kc, MMP_MEMORY_M_WF_LD), wsm = mmp_memory_counter(kc, MMP_MEMORY_M_WF_LDSM);
    double wst = mmp_memory_counter(kc, MMP_MEMORY_M_WF_ST);
    /* a counter the profiler did not give is "not measured", never "agree" */
    double ld = isnan(wld) && isnan(wsm) ? NAN : ((isnan(wld) ? 0 : wld) + (isnan(wsm) ? 0 : wsm)) / (ctas * steps);
    double st = (isnan(wst) ? 0 : wst) / (ctas * steps);
    double sectors = mmp_memory_counter(kc, MMP_MEMORY_M_SECTORS) / (ctas * steps);
    int agree = !isnan(ld) && fabs(ld - (double)r->smem_ld_wavefronts) <= 0.15 * (double)r->smem_ld_wavefronts + 1;
    /* Global sectors are judged against the sectors as L1TEX counts cp.async (once per
     * shared-write wavefront, memory.h; equal to the distinct sectors for loads and for
     * conflict-free copies); cp.async's shared writes are not counted by the _op_st metric
     * (they are LDGSTS traffic), so stores are shown, not judged. */
    double gmodel = (double)r->gmem_l1tex_sectors;
    int gagree = !isnan(sectors) && fabs(sectors - gmodel) <= 0.15 * gmodel + 1;
    if (!isnan(ld) && !agree) (*disagreements)++;
    if (!isnan(sectors) && !gagree) (*disagreements)++;
    char gm[96], lds[48], secs[48];
    if (r->gmem_l1tex_sectors != r->gmem_sectors)
        snprintf(gm, sizeof gm, "model %lld as L1TEX counts cp.async; distinct %lld", (long long)r->gmem_l1tex_sectors,
                 (long long)r->gmem_sectors);
    else snprintf(gm, sizeof gm, "model %lld", (long long)r->gmem_sectors);
    if (isnan(ld)) snprintf(lds, sizeof lds, "not measured");
    else snprintf(lds, sizeof lds, "%.1f", ld);
    if (isnan(sectors)) snprintf(secs, sizeof secs, "not measured");
    else snprintf(secs, sizeof secs, "%.1f", sectors);
    fprintf(text, "  measured (%s, per CTA per K step): shared-load wavefronts %s (model %lld) %s;"
                  " global sectors %s (%s) %s; store wavefronts %.1f (model %lld, cp.async"
                  " writes are not in this counter)\n",
            method, lds, (long long)r->smem_ld_wavefronts,
            isnan(ld) ? "-" : agree ? "agree" : "DISAGREE: the exposed map or the model is wrong", secs, gm,
            isnan(sectors) ? "-" : gagree ? "agree" : "DISAGREE", st, (long long)r->smem_st_wavefronts);
    kr->measured = 1;
    snprintf(kr->method, sizeof kr->method, "%s", method);
    kr->smem_ld_wavefronts = ld;
    kr->smem_st_wavefronts = st;
    kr->gmem_sectors = sectors;
    kr->gmem_model = r->gmem_l1tex_sectors;
    kr->agree = isnan(ld) ? -1 : agree;
    kr->gmem_agree = isnan(sectors) ? -1 : gagree;
}

/* Picks the method (see the top of this file); fills meas/cycles; returns 0 or an exit code. */
static int measure(FILE *text, const options *o, kernel_counters *meas, int *nmeas, double *cycles, size_t nc,
                   int *method, const char **ncu, char *why, size_t wsize)
{
    int c = o->counters;
    why[0] = '\0';
    if (c == C_AUTO || c == C_CUPTI) {
        mmp_status st = mmp_memory_cupti_measure(meas, nmeas, (int)nc, NULL, o->size);
        if (st == MMP_STATUS_OK) st = mmp_memory_counters_accept(meas, *nmeas, "CUPTI");
        if (st == MMP_STATUS_OK) { *method = C_CUPTI; return 0; }
        *nmeas = 0;
        if (refused(text, why, wsize, o, C_CUPTI, mmp_error_last(), "trying Nsight Compute")) return MMP_EXIT_ENVIRONMENT;
    }
    if (c == C_AUTO || c == C_NCU) {
#ifdef MMP_HAVE_CUDA
        char reason[256] = "ncu not found";
        *ncu = mmp_memory_ncu_find(o->ncu);
#else
        char reason[256] = "built without CUDA"; /* its child modes could launch nothing */
#endif
        if (*ncu) *nmeas = mmp_memory_ncu_run(*ncu, "--calib-child", "mmp_calib_", meas, (int)nc, reason, sizeof reason);
        if (*nmeas == (int)nc) { *method = C_NCU; return 0; }
        if (*ncu && *nmeas >= 0) snprintf(reason, sizeof reason, "ncu read %d of the %zu calibration launches", *nmeas, nc);
        *nmeas = 0;
        *ncu = NULL;
        if (refused(text, why, wsize, o, C_NCU, reason, "falling back to clock64 timing")) return MMP_EXIT_ENVIRONMENT;
    }
#ifdef MMP_HAVE_CUDA
    if (clock_fallback(cycles, nc) == 0) { *method = C_CLOCK; return 0; }
    if (refused(text, why, wsize, o, C_CLOCK, "no CUDA device for the clock64 timing", "analysis only"))
        return MMP_EXIT_ENVIRONMENT;
#else
    (void)cycles;
    if (refused(text, why, wsize, o, C_CLOCK, "built without CUDA", "analysis only")) return MMP_EXIT_ENVIRONMENT;
#endif
    return 0;
}

int mmp_probe_memory_run(mmp_memory_results *out, FILE *text, int argc, char **argv)
{
    options o;
    const char *child = NULL, *child_kernel = NULL;
    int rc = parse_options(&o, argc, argv, &child, &child_kernel);
    if (rc) return rc;
    if (child) { /* modes run under ncu */
        mmp_status st = !strcmp(child, "calib") ? mmp_memory_launch_calibs(NULL, 0)
                                                : mmp_memory_launch_kernel(child_kernel, o.size);
        if (st != MMP_STATUS_OK) fprintf(stderr, "%s\n", mmp_error_last());
        return mmp_status_exit_code(st);
    }
    size_t nc;
    mmp_memory_calibs(&nc);
    kernel_counters *meas = calloc(nc + 1, sizeof *meas);
    double *cycles = malloc(sizeof(double) * nc);
    if (!meas || !cycles) { free(meas); free(cycles); return MMP_EXIT_INTERNAL; }
    for (size_t i = 0; i < nc; i++) cycles[i] = NAN;
    int nmeas = 0;
    int method = C_AUTO;
    char why[1024] = "measurement not requested (--no-measure)";
    const char *ncu = NULL;
    if (o.measure) {
        rc = measure(text, &o, meas, &nmeas, cycles, nc, &method, &ncu, why, sizeof why);
        if (rc) { free(meas); free(cycles); return rc; } /* the forced method failed: nothing printed as measured */
    }
    if (method == C_AUTO) fprintf(text, "memory measurement: none (%s); analysis only\n", why);
    else if (why[0]) fprintf(text, "memory measurement: %s (not used: %s)\n", method_names[method], why);
    else fprintf(text, "memory measurement: %s\n", method_names[method]);
    out->present = 1;
    snprintf(out->method, sizeof out->method, "%s", method_names[method]);
    snprintf(out->why, sizeof out->why, "%s", why);
    mmp_status ast = analyse_calibrations(out, text, nmeas ? meas : NULL, nmeas, method == C_CLOCK ? cycles : NULL,
                                          method_names[method]);

    /* every kernel that exposes a memory map */
    size_t nmaps;
    const mmp_kernel_memmap *const *maps = mmp_registry_memmaps(&nmaps);
    fprintf(text, "\nkernels (one CTA, one steady-state K step, M = N = K = %lld)\n", (long long)o.size);
    int disagreements = 0;
    for (size_t i = 0; i < nmaps; i++) {
        if (!mmp_glob_match(o.filter, maps[i]->kernel)) continue;
        const mmp_kernel_desc *d = mmp_registry_find(maps[i]->kernel, MMP_REGISTRY_DEFAULT);
        /* element widths from the descriptor; 0 (the map's own) where this build has none
         * (a host-only build registers no device kernels, but their maps are analysed) */
        mmp_memmap_shape shape = {o.size, o.size, o.size, o.size, o.size,
                                  d ? mmp_format_get_info((mmp_format)d->a_format)->storage_bits : 0,
                                  d ? mmp_format_get_info((mmp_format)d->b_format)->storage_bits : 0};
        mmp_memory_kernel_result kr;
        memset(&kr, 0, sizeof kr);
        kr.agree = kr.gmem_agree = -1;
        kr.smem_ld_wavefronts = kr.smem_st_wavefronts = kr.gmem_sectors = NAN;
        if (mmp_memory_analyse(&kr.analysis, maps[i], &shape, 1) != MMP_STATUS_OK) {
            fprintf(text, "%s: analysis failed: %s\n", maps[i]->kernel, mmp_error_last());
            continue;
        }
        mmp_memory_print(text, &kr.analysis);
        kr.gmem_model = kr.analysis.gmem_l1tex_sectors;
        kernel_counters kc[4];
        int nk = 0;
        char kwhy[256] = "";
        if (method == C_CUPTI) {
            if (mmp_memory_cupti_measure(kc, &nk, 4, maps[i]->kernel, o.size) != MMP_STATUS_OK) {
                snprintf(kwhy, sizeof kwhy, "%s", mmp_error_last());
                nk = 0;
            } else if (nk == 0) snprintf(kwhy, sizeof kwhy, "CUPTI saw no launch of this kernel");
        } else if (method == C_NCU && ncu) {
            char args[256];
            snprintf(args, sizeof args, "--size %lld --launch-child %s", (long long)o.size, maps[i]->kernel);
            nk = mmp_memory_ncu_run(ncu, args, "^(?!mmp_calib_)", kc, 4, kwhy, sizeof kwhy);
        }
        if (nk > 0) compare_kernel(&kr, text, &kc[0], maps[i], o.size, method_names[method], &disagreements);
        else if (kwhy[0]) fprintf(text, "  measured: no counters for this kernel (%s)\n", kwhy);
        snprintf(kr.why, sizeof kr.why, "%s", kwhy);
        if (ast == MMP_STATUS_OK) ast = mmp_memory_results_add_kernel(out, &kr);
    }
    out->disagreements = disagreements;
    free(meas);
    free(cycles);
    if (ast != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe probe --memory: %s\n", mmp_error_last());
        return MMP_EXIT_INTERNAL;
    }
    return MMP_EXIT_PASS;
}
