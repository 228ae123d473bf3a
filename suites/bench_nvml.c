/* bench_nvml.c — the GPU's SM and memory clocks, power draw and temperature through NVML, loaded
 * with dlopen at run time: no link dependency, and a machine without the driver's library says
 * "not available" instead of failing. Only queries are made; no clock or setting is changed.
 * The device is found by its PCI bus ID (from CUDA, in the timing process), since NVML's indices
 * need not follow CUDA's ordinals (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER).
 */
#include <dlfcn.h>
#include <string.h>

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "bench_internal.h"

/* NVML's C ABI, as far as used here (nvml.h: nvmlReturn_t 0 = success). */
typedef int nvml_ret;
typedef void *nvml_device;
enum { NVML_CLOCK_SM_ = 1, NVML_CLOCK_MEM_ = 2, NVML_TEMPERATURE_GPU_ = 0 };

typedef struct nvml_api {
    void *lib;
    nvml_ret (*init)(void);
    nvml_ret (*by_index)(unsigned, nvml_device *);
    nvml_ret (*by_pci)(const char *, nvml_device *);
    nvml_ret (*clock)(nvml_device, int, unsigned *);
    nvml_ret (*power)(nvml_device, unsigned *);
    nvml_ret (*temp)(nvml_device, int, unsigned *);
    const char *(*error)(nvml_ret);
    int ready;                     /* 1 loaded and initialised, -1 failed (why) */
    char why[96];
} nvml_api;

static nvml_api api;

static void *sym(const char *name)
{
    void *p = dlsym(api.lib, name);
    if (!p && !api.why[0]) snprintf(api.why, sizeof api.why, "NVML has no %s", name);
    return p;
}

static int load(void)
{
    if (api.ready) return api.ready;
    api.ready = -1;
    api.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!api.lib) {
        snprintf(api.why, sizeof api.why, "not available (no libnvidia-ml.so.1)");
        return api.ready;
    }
    *(void **)&api.init = sym("nvmlInit_v2");
    *(void **)&api.by_index = sym("nvmlDeviceGetHandleByIndex_v2");
    *(void **)&api.by_pci = sym("nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&api.clock = sym("nvmlDeviceGetClockInfo");
    *(void **)&api.power = sym("nvmlDeviceGetPowerUsage");
    *(void **)&api.temp = sym("nvmlDeviceGetTemperature");
    *(void **)&api.error = dlsym(api.lib, "nvmlErrorString");
    if (!api.init || !api.by_index || !api.by_pci || !api.clock || !api.power || !api.temp) return api.ready;
    nvml_ret e = api.init();
    if (e != 0) {
        snprintf(api.why, sizeof api.why, "not available (nvmlInit: %s)", api.error ? api.error(e) : "error");
        return api.ready;
    }
    api.ready = 1;
    return api.ready;
}

void mmp_bench_clocks_read(mmp_bench_clocks *c, int device)
{
    memset(c, 0, sizeof *c);
    if (load() < 0) {
        snprintf(c->why, sizeof c->why, "%s", api.why);
        return;
    }
    nvml_device h = NULL;
    nvml_ret e = 1;
#ifdef MMP_HAVE_CUDA
    char bus[32];
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) e = api.by_pci(bus, &h);
#endif
    if (e != 0) e = api.by_index((unsigned)device, &h);
    if (e != 0) {
        snprintf(c->why, sizeof c->why, "not available (no NVML device for CUDA device %d)", device);
        return;
    }
    unsigned sm = 0, mem = 0, mw = 0, t = 0;
    if (api.clock(h, NVML_CLOCK_SM_, &sm) != 0 || api.clock(h, NVML_CLOCK_MEM_, &mem) != 0 || api.power(h, &mw) != 0 ||
        api.temp(h, NVML_TEMPERATURE_GPU_, &t) != 0) {
        snprintf(c->why, sizeof c->why, "not available (an NVML query failed)");
        return;
    }
    c->available = 1;
    c->sm_mhz = sm;
    c->mem_mhz = mem;
    c->power_w = mw / 1000.0;
    c->temp_c = t;
}
