/* fuzz_suitefile.c — libFuzzer harness for the custom-suite parser (mmp_suitefile_parse_text).
 *
 * Build (clang only):  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
 *                      cmake --build build-fuzz --target fuzz_suitefile
 * Run:                 build-fuzz/reports/fuzz_suitefile -jobs=1 -max_total_time=600 -max_len=2048 \
 *                          fuzz-work/suitefile tests/fuzz/corpus/suitefile
 * Replayed over tests/fuzz/corpus/suitefile/ (seeds and fixed crashers) by the ctest
 * fuzz_replay_suitefile in every build (suites/fuzz.cmake).
 * Properties: never crashes; success gives cases with positive shapes, an ID and tight-or-larger
 * leading dimensions; failure gives no cases and a "fuzz:LINE: message" (or "fuzz: empty").
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/registry.h"
#include "mmaprobe/runner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t nk;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&nk, MMP_REGISTRY_ALL);
    mmp_case *cases = NULL;
    size_t n = 0;
    mmp_status st = mmp_suitefile_parse_text(&cases, &n, (const char *)data, size, "fuzz", k, nk, NULL, 42);
    if (st != MMP_STATUS_OK) {
        if (cases || n || strncmp(mmp_error_last(), "fuzz:", 5) != 0) abort();
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const mmp_case *c = &cases[i];
        if (c->m <= 0 || c->n <= 0 || c->k <= 0 || !c->id[0] || !c->kernel) abort();
        if (c->lda <= 0 || c->ldb <= 0 || c->ldd <= 0) abort();
    }
    mmp_cases_free(cases);
    return 0;
}
