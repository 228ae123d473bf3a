/* gpu_available.c — mmp_check_gpu_available() for the GPU Check suites (suites/check_main.h).
 *
 * The CUDA query runs in a forked child (mmp_env_capture), so the test process never holds a
 * CUDA context and Check can fork its tests afterwards; CUDA is first touched there, or in the
 * runner's per-kernel children.
 */
#include <stdio.h>

#include "mmaprobe/core.h"

int mmp_check_gpu_available(char *reason, size_t size);

int mmp_check_gpu_available(char *reason, size_t size)
{
    mmp_env e;
    mmp_status st = mmp_env_capture(&e, -1, 0, 0, NULL);
    if (st == MMP_STATUS_OK && e.device >= 0) {
        if (reason && size) snprintf(reason, size, "%s (cc %d.%d)", e.gpu, e.cc_major, e.cc_minor);
        return 1;
    }
    if (reason && size)
        snprintf(reason, size, "no usable CUDA device: %s",
                 e.no_device_reason[0] ? e.no_device_reason : mmp_status_name(st));
    return 0;
}
