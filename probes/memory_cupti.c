/* memory_cupti.c — CUPTI's in-process Range Profiler as the first counter source of
 * `probe --memory` (memory_internal.h); measured on the H200 (results/h200/memory/
 * memory-cupti.txt). The trust check in memory_counters.c decides whether its figures are
 * used (every calibration row must agree with the model), so a wrong reading falls back to ncu
 * with the reason printed.
 *
 * The parent never initialises CUDA: mmp_memory_cupti_measure forks; the child creates the
 * context, profiles the same launches ncu profiles (memory_launch.c), and sends back one
 * mmp_memory_counters per kernel launch through a pipe. libcupti is dlopen'ed
 * (memory_cupti_load.c); every failing call becomes a one-line reason naming the call and its
 * CUptiResult. MMP_CUPTI_DEBUG=1 prints the accepted metrics, the ranges and their values
 * on stderr (the child's).
 *
 * Call sequence in the child (CUDA 13 headers; range profiler API of CUDA 12.6+):
 *   cudaFree(0); cuCtxGetCurrent (through cudaGetDriverEntryPointByVersion)
 *   cuptiProfilerInitialize; cuptiDeviceGetChipName
 *   cuptiProfilerHostInitialize (range profiler, chip) ; cuptiProfilerHostConfigAddMetrics per
 *     metric (those the chip refuses are left out, as ncu's unknown metrics are)
 *   cuptiProfilerHostGetConfigImageSize / GetConfigImage / GetNumOfPasses
 *   cuptiRangeProfilerEnable (ctx); GetCounterDataSize + CounterDataImageInitialize
 *   cuptiRangeProfilerSetConfig (auto range: one range per kernel; kernel replay: CUPTI replays
 *     each launch for every pass, so one Start/Stop covers a multi-pass metric set)
 *   Start; the launches; Stop — repeated while Stop says !isAllPassSubmitted (at most 64)
 *   cuptiRangeProfilerDecodeData; GetCounterDataInfo (ranges); per range
 *     cuptiRangeProfilerCounterDataGetRangeInfo (kernel name) + cuptiProfilerHostEvaluateToGpuValues
 *   cuptiRangeProfilerDisable; cuptiProfilerHostDeinitialize; cuptiProfilerDeInitialize
 *
 * cupti_profiler_host.h includes C++'s <string>; probes/cupti_shim/ holds an empty `string` on
 * this file's include path only (probes/CMakeLists.txt), which is all C needs.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memory_internal.h"

#define MAX_RANGES 64

/* What the child sends first: its status and reason, then n mmp_memory_counters. */
typedef struct {
    int status;
    int n;
    char why[400];
} child_header;

#if defined(MMP_HAVE_CUDA) && defined(MMP_HAVE_CUPTI_HEADERS)
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

typedef struct {
    mmp_cupti_lib lib;
    int profiler_init;
    CUpti_Profiler_Host_Object *host;
    CUpti_RangeProfiler_Object *rp;
    uint8_t *config, *data;
    size_t config_size, data_size;
    const char *names[MMP_MEMORY_N_METRICS];
    int index[MMP_MEMORY_N_METRICS]; /* names[i] is mmp_memory_metrics[index[i]] */
    size_t nnames;
} session;

/* A CUPTI parameter block: zeroed, its structSize set (the header's *_STRUCT_SIZE). */
#define PARAMS(T, v) T v = {.structSize = T##_STRUCT_SIZE}
/* Calls CUPTI function IDX (params type PT) through the dlsym table and checks the result. */
#define CUPTI(S, IDX, PT, P) cupti_check((S), ((CUptiResult(*)(PT *))(S)->lib.fn[IDX])(P), (IDX))

static mmp_status cupti_check(session *s, CUptiResult r, int idx)
{
    if (r == CUPTI_SUCCESS) return MMP_STATUS_OK;
    const char *str = NULL;
    CUptiResult (*rs)(CUptiResult, const char **) =
        (CUptiResult(*)(CUptiResult, const char **))s->lib.fn[MMP_CUPTI_GET_RESULT_STRING];
    if (!rs || rs(r, &str) != CUPTI_SUCCESS || !str) str = "no description";
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "%s returned CUptiResult %d (%s)%s", mmp_cupti_func_names[idx], (int)r, str,
                   r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "; GPU profiling is restricted to admin users here" : "");
}

static mmp_status current_context(CUcontext *ctx, int *dev)
{
    cudaError_t e = cudaFree(0);
    if (e == cudaSuccess) e = cudaGetDevice(dev);
    if (e != cudaSuccess) return MMP_ERR(MMP_STATUS_NO_DEVICE, "no CUDA device (%s)", cudaGetErrorString(e));
    void *fp = NULL;
    enum cudaDriverEntryPointQueryResult q;
    e = cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fp, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || !fp || q != cudaDriverEntryPointSuccess)
        return MMP_ERR(MMP_STATUS_NO_DEVICE, "cannot reach the driver's cuCtxGetCurrent (%s)", cudaGetErrorString(e));
    CUresult r = ((CUresult(*)(CUcontext *))fp)(ctx);
    if (r != CUDA_SUCCESS || !*ctx) return MMP_ERR(MMP_STATUS_NO_DEVICE, "no current CUDA context (CUresult %d)", (int)r);
    return MMP_STATUS_OK;
}

/* A host object for the range profiler on this chip. */
static mmp_status host_init(session *s, const char *chip, CUpti_Profiler_Host_Object **obj)
{
    PARAMS(CUpti_Profiler_Host_Initialize_Params, hi);
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = chip;
    hi.pCounterAvailabilityImage = NULL;
    MMP_TRY(CUPTI(s, MMP_CUPTI_HOST_INITIALIZE, CUpti_Profiler_Host_Initialize_Params, &hi));
    *obj = hi.pHostObject;
    return MMP_STATUS_OK;
}

static void host_deinit(session *s, CUpti_Profiler_Host_Object *obj)
{
    PARAMS(CUpti_Profiler_Host_Deinitialize_Params, d);
    d.pHostObject = obj;
    (void)CUPTI(s, MMP_CUPTI_HOST_DEINITIALIZE, CUpti_Profiler_Host_Deinitialize_Params, &d);
}

static mmp_status host_add(session *s, CUpti_Profiler_Host_Object *obj, const char **names, size_t n)
{
    PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, am);
    am.pHostObject = obj;
    am.ppMetricNames = names;
    am.numMetrics = n;
    return CUPTI(s, MMP_CUPTI_HOST_CONFIG_ADD_METRICS, CUpti_Profiler_Host_ConfigAddMetrics_Params, &am);
}

/* Host side: the config image for the metrics this chip accepts. Each metric is tried on a
 * host object of its own: on the H200 one refused name (INVALID_PARAMETER) left the object
 * answering CUPTI_ERROR_UNKNOWN to every later metric, valid ones too. */
static mmp_status build_config(session *s, const char *chip)
{
    char first_refusal[300] = "";
    for (int m = 0; m < MMP_MEMORY_N_METRICS; m++) {
        const char *name = mmp_memory_metrics[m];
        CUpti_Profiler_Host_Object *probe = NULL;
        MMP_TRY(host_init(s, chip, &probe));
        mmp_status st = host_add(s, probe, &name, 1);
        host_deinit(s, probe);
        if (st == MMP_STATUS_OK) {
            s->names[s->nnames] = name;
            s->index[s->nnames++] = m;
        } else {
            if (!first_refusal[0]) snprintf(first_refusal, sizeof first_refusal, "%s (%s)", name, mmp_error_last());
            if (getenv("MMP_CUPTI_DEBUG")) fprintf(stderr, "cupti: metric refused: %s: %s\n", name, mmp_error_last());
        }
    }
    if (!s->nnames) return MMP_ERR(MMP_STATUS_NO_DEVICE, "chip %s accepts none of the metrics: %s", chip, first_refusal);
    MMP_TRY(host_init(s, chip, &s->host));
    MMP_TRY(host_add(s, s->host, s->names, s->nnames));
    PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, cs);
    cs.pHostObject = s->host;
    MMP_TRY(CUPTI(s, MMP_CUPTI_HOST_GET_CONFIG_IMAGE_SIZE, CUpti_Profiler_Host_GetConfigImageSize_Params, &cs));
    s->config_size = cs.configImageSize;
    s->config = calloc(1, s->config_size ? s->config_size : 1);
    if (!s->config) return MMP_ERR(MMP_STATUS_NO_MEMORY, "config image of %zu bytes", s->config_size);
    PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, ci);
    ci.pHostObject = s->host;
    ci.configImageSize = s->config_size;
    ci.pConfigImage = s->config;
    MMP_TRY(CUPTI(s, MMP_CUPTI_HOST_GET_CONFIG_IMAGE, CUpti_Profiler_Host_GetConfigImage_Params, &ci));
    PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params, np);
    np.configImageSize = s->config_size;
    np.pConfigImage = s->config;
    MMP_TRY(CUPTI(s, MMP_CUPTI_HOST_GET_NUM_OF_PASSES, CUpti_Profiler_Host_GetNumOfPasses_Params, &np));
    if (getenv("MMP_CUPTI_DEBUG"))
        fprintf(stderr, "cupti: chip %s, %zu of %d metrics accepted, %zu passes\n", chip, s->nnames,
                MMP_MEMORY_N_METRICS, (size_t)np.numOfPasses);
    return MMP_STATUS_OK;
}

/* Target side: enable on ctx, counter data image, config (auto range, kernel replay). */
static mmp_status configure(session *s, CUcontext ctx)
{
    PARAMS(CUpti_RangeProfiler_Enable_Params, en);
    en.ctx = ctx;
    MMP_TRY(CUPTI(s, MMP_CUPTI_RP_ENABLE, CUpti_RangeProfiler_Enable_Params, &en));
    s->rp = en.pRangeProfilerObject;
    PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params, ds);
    ds.pRangeProfilerObject = s->rp;
    ds.pMetricNames = s->names;
    ds.numMetrics = s->nnames;
    ds.maxNumOfRanges = MAX_RANGES;
    ds.maxNumRangeTreeNodes = MAX_RANGES;
    MMP_TRY(CUPTI(s, MMP_CUPTI_RP_GET_COUNTER_DATA_SIZE, CUpti_RangeProfiler_GetCounterDataSize_Params, &ds));
    s->data_size = ds.counterDataSize;
    s->data = calloc(1, s->data_size ? s->data_size : 1);
    if (!s->data) return MMP_ERR(MMP_STATUS_NO_MEMORY, "counter data image of %zu bytes", s->data_size);
    PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params, di);
    di.pRangeProfilerObject = s->rp;
    di.counterDataSize = s->data_size;
    di.pCounterData = s->data;
    MMP_TRY(CUPTI(s, MMP_CUPTI_RP_COUNTER_DATA_IMAGE_INITIALIZE, CUpti_RangeProfiler_CounterDataImage_Initialize_Params, &di));
    PARAMS(CUpti_RangeProfiler_SetConfig_Params, sc);
    sc.pRangeProfilerObject = s->rp;
    sc.configSize = s->config_size;
    sc.pConfig = s->config;
    sc.counterDataImageSize = s->data_size;
    sc.pCounterDataImage = s->data;
    sc.range = CUPTI_AutoRange;
    sc.replayMode = CUPTI_KernelReplay;
    sc.maxRangesPerPass = MAX_RANGES;
    sc.numNestingLevels = 1; /* auto range: one level */
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 0;
    return CUPTI(s, MMP_CUPTI_RP_SET_CONFIG, CUpti_RangeProfiler_SetConfig_Params, &sc);
}

/* Start, launch, Stop until every pass is submitted; then decode. */
static mmp_status collect(session *s, const char *kernel, int64_t size)
{
    int all = 0;
    for (int pass = 0; pass < 64 && !all; pass++) {
        PARAMS(CUpti_RangeProfiler_Start_Params, st);
        st.pRangeProfilerObject = s->rp;
        MMP_TRY(CUPTI(s, MMP_CUPTI_RP_START, CUpti_RangeProfiler_Start_Params, &st));
        mmp_status ls = kernel ? mmp_memory_launch_kernel(kernel, size) : mmp_memory_launch_calibs(NULL, 0);
        PARAMS(CUpti_RangeProfiler_Stop_Params, sp);
        sp.pRangeProfilerObject = s->rp;
        if (ls != MMP_STATUS_OK) return ls; /* the launch's own reason */
        MMP_TRY(CUPTI(s, MMP_CUPTI_RP_STOP, CUpti_RangeProfiler_Stop_Params, &sp));
        all = sp.isAllPassSubmitted != 0;
    }
    if (!all) return MMP_ERR(MMP_STATUS_NO_DEVICE, "cuptiRangeProfilerStop: passes still pending after 64 replays");
    PARAMS(CUpti_RangeProfiler_DecodeData_Params, dd);
    dd.pRangeProfilerObject = s->rp;
    MMP_TRY(CUPTI(s, MMP_CUPTI_RP_DECODE_DATA, CUpti_RangeProfiler_DecodeData_Params, &dd));
    if (dd.numOfRangeDropped)
        return MMP_ERR(MMP_STATUS_NO_DEVICE, "cuptiRangeProfilerDecodeData dropped %zu ranges", dd.numOfRangeDropped);
    return MMP_STATUS_OK;
}

/* One range's metric values into k. */
static mmp_status range_values(session *s, mmp_memory_counters *k, size_t r, const char *name)
{
    double values[MMP_MEMORY_N_METRICS];
    PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, ev);
    ev.pHostObject = s->host;
    ev.pCounterDataImage = s->data;
    ev.counterDataImageSize = s->data_size;
    ev.rangeIndex = r;
    ev.ppMetricNames = s->names;
    ev.numMetrics = s->nnames;
    ev.pMetricValues = values;
    MMP_TRY(CUPTI(s, MMP_CUPTI_HOST_EVALUATE_TO_GPU_VALUES, CUpti_Profiler_Host_EvaluateToGpuValues_Params, &ev));
    memset(k, 0, sizeof *k);
    snprintf(k->kernel, sizeof k->kernel, "%s", name);
    for (size_t i = 0; i < s->nnames; i++) {
        k->v[s->index[i]] = values[i];
        k->have[s->index[i]] = 1;
        if (getenv("MMP_CUPTI_DEBUG")) fprintf(stderr, "cupti: range %zu '%s' %s = %g\n", r, name, s->names[i], values[i]);
    }
    return MMP_STATUS_OK;
}

/* One mmp_memory_counters per range, in launch order, keeping calibration or kernel ranges.
 * Auto ranges are one per kernel launch, in launch order. They are matched by name (the
 * kernel's, as ncu's kernel regex does); when no range carries a calibration kernel's name
 * (range names that are not kernel names) but there is exactly one range per calibration
 * launch, they are taken in launch order. Otherwise the reason lists what was decoded. */
static mmp_status evaluate(session *s, mmp_memory_counters *out, int *n, int max, const char *kernel)
{
    PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params, inf);
    inf.pCounterDataImage = s->data;
    inf.counterDataImageSize = s->data_size;
    MMP_TRY(CUPTI(s, MMP_CUPTI_RP_GET_COUNTER_DATA_INFO, CUpti_RangeProfiler_GetCounterDataInfo_Params, &inf));
    if (getenv("MMP_CUPTI_DEBUG")) fprintf(stderr, "cupti: %zu ranges decoded\n", inf.numTotalRanges);
    *n = 0;
    char seen[160] = "";
    size_t ncalib_rows;
    (void)mmp_memory_calibs(&ncalib_rows);
    int by_order = 0;
    for (int attempt = 0; attempt < 2 && *n == 0; attempt++) {
        if (attempt == 1) {
            if (kernel || inf.numTotalRanges != ncalib_rows) break;
            by_order = 1; /* unnamed ranges, one per calibration launch */
        }
        for (size_t r = 0; r < inf.numTotalRanges && *n < max; r++) {
            PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params, ri);
            ri.pCounterDataImage = s->data;
            ri.counterDataImageSize = s->data_size;
            ri.rangeIndex = r;
            ri.rangeDelimiter = "/";
            MMP_TRY(CUPTI(s, MMP_CUPTI_RP_GET_RANGE_INFO, CUpti_RangeProfiler_CounterData_GetRangeInfo_Params, &ri));
            const char *name = ri.rangeName ? ri.rangeName : "";
            if (attempt == 0 && r < 3)
                snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s'%.40s'", r ? ", " : "", name);
            int is_calib = by_order || strstr(name, "mmp_calib_") != NULL;
            if (kernel ? is_calib : !is_calib) continue; /* ncu's kernel regex, as a filter */
            MMP_TRY(range_values(s, &out[(*n)++], r, name));
            if (kernel) break; /* the first launch that is not a calibration, as with ncu */
        }
    }
    if (*n == 0)
        return MMP_ERR(MMP_STATUS_NO_DEVICE, "CUPTI decoded %zu ranges, none of them %s (range names: %s)",
                       inf.numTotalRanges, kernel ? "a kernel's" : "a calibration launch's",
                       seen[0] ? seen : "none");
    return MMP_STATUS_OK;
}

static void teardown(session *s)
{
    if (s->rp) {
        PARAMS(CUpti_RangeProfiler_Disable_Params, d);
        d.pRangeProfilerObject = s->rp;
        (void)CUPTI(s, MMP_CUPTI_RP_DISABLE, CUpti_RangeProfiler_Disable_Params, &d);
    }
    if (s->host) host_deinit(s, s->host);
    if (s->profiler_init) {
        PARAMS(CUpti_Profiler_DeInitialize_Params, d);
        (void)CUPTI(s, MMP_CUPTI_PROFILER_DEINITIALIZE, CUpti_Profiler_DeInitialize_Params, &d);
    }
    free(s->config);
    free(s->data);
}

/* The child's whole measurement; the caller is a forked process that exits after it. */
static mmp_status child_measure(mmp_memory_counters *out, int *n, int max, const char *kernel, int64_t size)
{
    session s;
    memset(&s, 0, sizeof s);
    MMP_TRY(mmp_memory_cupti_open(&s.lib));
    CUcontext ctx = NULL;
    int dev = 0;
    MMP_TRY(current_context(&ctx, &dev));
    mmp_status st;
    PARAMS(CUpti_Profiler_Initialize_Params, pi);
    st = CUPTI(&s, MMP_CUPTI_PROFILER_INITIALIZE, CUpti_Profiler_Initialize_Params, &pi);
    s.profiler_init = st == MMP_STATUS_OK;
    PARAMS(CUpti_Device_GetChipName_Params, cn);
    cn.deviceIndex = (size_t)dev;
    if (st == MMP_STATUS_OK) st = CUPTI(&s, MMP_CUPTI_DEVICE_GET_CHIP_NAME, CUpti_Device_GetChipName_Params, &cn);
    if (st == MMP_STATUS_OK) st = build_config(&s, cn.pChipName);
    if (st == MMP_STATUS_OK) st = configure(&s, ctx);
    if (st == MMP_STATUS_OK) st = collect(&s, kernel, size);
    if (st == MMP_STATUS_OK) st = evaluate(&s, out, n, max, kernel);
    char why[400];
    snprintf(why, sizeof why, "%s", mmp_error_last());
    teardown(&s);
    if (st != MMP_STATUS_OK) MMP_ERR(st, "%s", why); /* teardown's errors do not hide the first */
    return st;
}
#else
static mmp_status child_measure(mmp_memory_counters *out, int *n, int max, const char *kernel, int64_t size)
{
    (void)out; (void)n; (void)max; (void)kernel; (void)size;
#ifdef MMP_HAVE_CUDA
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "built without the CUPTI headers (cupti_range_profiler.h)");
#else
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "built without CUDA");
#endif
}
#endif

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

mmp_status mmp_memory_cupti_measure(mmp_memory_counters *out, int *n, int max, const char *kernel, int64_t size)
{
    *n = 0;
#if !defined(MMP_HAVE_CUDA)
    (void)out; (void)max; (void)kernel; (void)size; (void)read_all; (void)write_all;
    return child_measure(out, n, max, kernel, size); /* no fork: nothing to measure with */
#else
    int fds[2];
    if (pipe(fds)) return MMP_ERR(MMP_STATUS_INTERNAL, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return MMP_ERR(MMP_STATUS_INTERNAL, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(300); /* a hung profiler ends as SIGALRM, reported by the parent */
        child_header h;
        memset(&h, 0, sizeof h);
        int got = 0;
        mmp_status st = child_measure(out, &got, max, kernel, size);
        h.status = (int)st;
        h.n = st == MMP_STATUS_OK ? got : 0;
        snprintf(h.why, sizeof h.why, "%s", st == MMP_STATUS_OK ? "" : mmp_error_last());
        int bad = write_all(fds[1], &h, sizeof h) || write_all(fds[1], out, sizeof *out * (size_t)h.n);
        _exit(bad ? 1 : 0);
    }
    close(fds[1]);
    child_header h;
    int ok = read_all(fds[0], &h, sizeof h) == 0 && h.n >= 0 && h.n <= max &&
             read_all(fds[0], out, sizeof *out * (size_t)h.n) == 0;
    close(fds[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
    if (!ok) {
        if (WIFSIGNALED(ws))
            return MMP_ERR(MMP_STATUS_NO_DEVICE, "the CUPTI child died of signal %d (%s)", WTERMSIG(ws),
                           WTERMSIG(ws) == SIGALRM ? "timed out after 300 s" : strsignal(WTERMSIG(ws)));
        return MMP_ERR(MMP_STATUS_INTERNAL, "the CUPTI child sent no counters (exit %d)",
                       WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    }
    if (h.status != MMP_STATUS_OK) {
        h.why[sizeof h.why - 1] = '\0';
        return MMP_ERR((mmp_status)h.status, "%s", h.why);
    }
    *n = h.n;
    return MMP_STATUS_OK;
#endif
}
