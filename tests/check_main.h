/* suites/check_main.h — one main() for every Check suite (GStreamer's GST_CHECK_MAIN idea).
 *
 * Usage, at the end of suites/check_<module>.c:
 *   static Suite *format_suite(void) { ... }
 *   MMP_CHECK_MAIN(format_suite)
 *
 * The seed for random tests comes from $MMP_SEED (decimal) or the clock, is printed first
 * ("include this in bug reports") and is available as mmp_check_seed. GPU suites define
 * MMP_CHECK_GPU before including this header: with no CUDA device the program prints why and
 * exits 77 (skip). CUDA is never initialised here, in the parent: Check forks each test, and
 * CUDA must be first touched inside the forked child (or run with CK_FORK=no).
 * Exit status: 0 when every test passed, 1 otherwise.
 */
#ifndef MMAPROBE_CHECK_MAIN_H
#define MMAPROBE_CHECK_MAIN_H

#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t mmp_check_seed;

static inline uint64_t mmp_check_seed_init(const char *suite_name)
{
    const char *s = getenv("MMP_SEED");
    uint64_t seed = s && *s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
    printf("# %s: seed %" PRIu64 " (set MMP_SEED=%" PRIu64 " to reproduce; include it in bug reports)\n",
           suite_name, seed, seed);
    fflush(stdout);
    return seed;
}

#ifdef MMP_CHECK_GPU
/* Defined by the GPU suite's support code: 1 if a CUDA device is usable, else 0 with reason.
 * Implementations must query in a child process or via the driver without keeping a context. */
int mmp_check_gpu_available(char *reason, size_t size);
#define MMP_CHECK_GPU_GATE()                                                  \
    do {                                                                      \
        char why_[256] = "";                                                  \
        if (!mmp_check_gpu_available(why_, sizeof why_)) {                    \
            printf("SKIP: %s\n", why_);                                       \
            return 77;                                                        \
        }                                                                     \
    } while (0)
#else
#define MMP_CHECK_GPU_GATE() do { } while (0)
#endif

#define MMP_CHECK_MAIN(suite_fn)                                              \
    int main(void)                                                            \
    {                                                                         \
        MMP_CHECK_GPU_GATE();                                                 \
        mmp_check_seed = mmp_check_seed_init(#suite_fn);                      \
        SRunner *sr_ = srunner_create(suite_fn());                            \
        srunner_run_all(sr_, CK_NORMAL);                                      \
        int failed_ = srunner_ntests_failed(sr_);                             \
        srunner_free(sr_);                                                    \
        return failed_ == 0 ? 0 : 1;                                          \
    }

#endif
