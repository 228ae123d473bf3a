/* memory_cupti_load.c — libcupti loaded at run time (memory_internal.h): libmmp has no link-time
 * dependency on CUPTI, so a machine without it still runs every other path, and a missing file
 * or symbol becomes a one-line reason for falling back to ncu.
 *
 * The file: $MMP_CUPTI_LIB when set (that file only: tests point it at a path that does not
 * exist), else the first of libcupti.so.13, libcupti.so (the loader's search path), then
 * $CUDA_HOME/extras/CUPTI/lib64, $CUDA_HOME/lib64, /usr/local/cuda/extras/CUPTI/lib64 and
 * /usr/local/cuda/lib64. libcupti's host API loads libnvperf_host by name; it is preloaded from
 * libcupti's own folder when it is there, so it need not be on LD_LIBRARY_PATH.
 * Needs no CUDA: it builds (and is tested) in the host-only build too.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory_internal.h"

const char *const mmp_cupti_func_names[MMP_CUPTI_N_FUNCS] = {
    "cuptiGetResultString",
    "cuptiProfilerInitialize",
    "cuptiProfilerDeInitialize",
    "cuptiDeviceGetChipName",
    "cuptiProfilerHostInitialize",
    "cuptiProfilerHostDeinitialize",
    "cuptiProfilerHostConfigAddMetrics",
    "cuptiProfilerHostGetConfigImageSize",
    "cuptiProfilerHostGetConfigImage",
    "cuptiProfilerHostGetNumOfPasses",
    "cuptiProfilerHostEvaluateToGpuValues",
    "cuptiRangeProfilerEnable",
    "cuptiRangeProfilerDisable",
    "cuptiRangeProfilerGetCounterDataSize",
    "cuptiRangeProfilerCounterDataImageInitialize",
    "cuptiRangeProfilerSetConfig",
    "cuptiRangeProfilerStart",
    "cuptiRangeProfilerStop",
    "cuptiRangeProfilerDecodeData",
    "cuptiRangeProfilerGetCounterDataInfo",
    "cuptiRangeProfilerCounterDataGetRangeInfo",
};

static void preload_nvperf(mmp_cupti_lib *lib)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", lib->path);
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = '\0';
    char path[600];
    snprintf(path, sizeof path, "%s/libnvperf_host.so", dir);
    lib->nvperf = dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* NULL: libcupti searches itself */
}

mmp_status mmp_memory_cupti_open(mmp_cupti_lib *lib)
{
    memset(lib, 0, sizeof *lib);
    const char *forced = getenv("MMP_CUPTI_LIB");
    char cands[8][512];
    int nc = 0;
    if (forced && *forced) {
        snprintf(cands[nc++], sizeof cands[0], "%s", forced);
    } else {
        const char *home = getenv("CUDA_HOME");
        snprintf(cands[nc++], sizeof cands[0], "libcupti.so.13");
        snprintf(cands[nc++], sizeof cands[0], "libcupti.so");
        if (home && *home) {
            snprintf(cands[nc++], sizeof cands[0], "%s/extras/CUPTI/lib64/libcupti.so", home);
            snprintf(cands[nc++], sizeof cands[0], "%s/lib64/libcupti.so", home);
        }
        snprintf(cands[nc++], sizeof cands[0], "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
        snprintf(cands[nc++], sizeof cands[0], "/usr/local/cuda/lib64/libcupti.so");
    }
    char first_err[256] = "";
    for (int i = 0; i < nc && !lib->handle; i++) {
        lib->handle = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
        if (lib->handle) snprintf(lib->path, sizeof lib->path, "%s", cands[i]);
        else if (!first_err[0]) {
            const char *e = dlerror();
            snprintf(first_err, sizeof first_err, "%s", e ? e : "unknown dlopen error");
        }
    }
    if (!lib->handle) {
        if (forced && *forced)
            return MMP_ERR(MMP_STATUS_NO_DEVICE, "cannot load libcupti from MMP_CUPTI_LIB=%s: %s", forced, first_err);
        return MMP_ERR(MMP_STATUS_NO_DEVICE, "cannot load libcupti (tried libcupti.so.13, libcupti.so and the CUDA"
                       " folders; set MMP_CUPTI_LIB): %s", first_err);
    }
    for (int f = 0; f < MMP_CUPTI_N_FUNCS; f++) {
        lib->fn[f] = dlsym(lib->handle, mmp_cupti_func_names[f]);
        if (!lib->fn[f]) {
            char path[512];
            snprintf(path, sizeof path, "%s", lib->path);
            mmp_memory_cupti_close(lib);
            return MMP_ERR(MMP_STATUS_NO_DEVICE, "%s has no %s (CUPTI older than CUDA 12.6's range profiler?)", path,
                           mmp_cupti_func_names[f]);
        }
    }
    /* the real file behind a bare soname, for libnvperf_host next to it */
    Dl_info info;
    if (!strchr(lib->path, '/') && dladdr(lib->fn[MMP_CUPTI_RP_ENABLE], &info) && info.dli_fname)
        snprintf(lib->path, sizeof lib->path, "%s", info.dli_fname);
    preload_nvperf(lib);
    return MMP_STATUS_OK;
}

void mmp_memory_cupti_close(mmp_cupti_lib *lib)
{
    if (lib->handle) dlclose(lib->handle);
    if (lib->nvperf) dlclose(lib->nvperf);
    memset(lib, 0, sizeof *lib);
}
