/* fuzz_json.c — libFuzzer harness for the JSON reader and everything that reads a run document.
 *
 * Build (clang only):  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
 *                      cmake --build build-fuzz --target fuzz_json
 * Run:                 build-fuzz/fuzz_json -jobs=1 -max_total_time=600 -max_len=65536 \
 *                          fuzz-work/ tests/fuzz/corpus/json/
 * Each input is (1) parsed as generic JSON, and, if it reads as a run document, (2) written
 * back and read again, which must give the same bytes (the round-trip property), and (3) put
 * through every renderer, diff against itself and merge with itself. Any crash, sanitizer
 * report or round-trip mismatch is a bug (abort() here is the harness's, not library code).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"
#include "mmaprobe/json.h"

static char *write_mem(const mmp_run *run, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) abort();
    if (mmp_report_write_json_stream(f, run) != MMP_STATUS_OK) abort();
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mmp_json *v = NULL;
    if (mmp_json_parse(&v, (const char *)data, size, "fuzz") == MMP_STATUS_OK) {
        if (!v) abort();
        mmp_json_free(v);
    } else if (v || !mmp_error_last()[0]) {
        abort();                                   /* a failure must leave no tree and a message */
    }
    mmp_run run;
    mmp_run_init(&run);
    if (mmp_report_read_json_text(&run, (const char *)data, size, "fuzz") == MMP_STATUS_OK) {
        size_t n1, n2;
        char *w1 = write_mem(&run, &n1);
        mmp_run again;
        mmp_run_init(&again);
        if (mmp_report_read_json_text(&again, w1, n1, "rewritten") != MMP_STATUS_OK) {
            fprintf(stderr, "re-read failed: %s\n", mmp_error_last());
            abort();
        }
        char *w2 = write_mem(&again, &n2);
        if (n1 != n2 || memcmp(w1, w2, n1) != 0) {
            fprintf(stderr, "round trip changed the document\n");
            abort();
        }
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            for (int f = 0; f < MMP_REPORT_FORMAT_COUNT_; f++) mmp_report_render(null, &run, (mmp_report_format)f);
            size_t reg;
            mmp_diff_options opt = {2.0, 1, 0, 0};
            mmp_report_diff(null, &reg, &run, &again, &opt);
            const mmp_run *two[2] = {&run, &again};
            const char *names[2] = {"a", "b"};
            mmp_run merged;
            mmp_run_init(&merged);
            /* a run that merges alone (no ID repeated with different results) merges with its
             * copy -- when the copy has the same schema version: a newer minor's document is
             * rewritten as this version, and merge refuses to mix versions (by design) */
            int alone = mmp_report_merge(&merged, two, names, 1) == MMP_STATUS_OK &&
                        run.schema_minor == again.schema_minor;
            mmp_run_clear(&merged);
            if (alone && mmp_report_merge(&merged, two, names, 2) != MMP_STATUS_OK) {
                fprintf(stderr, "merging a run with its own copy failed: %s\n", mmp_error_last());
                abort();
            }
            mmp_run_clear(&merged);
            fclose(null);
        }
        mmp_run_clear(&again);
        free(w1);
        free(w2);
    }
    mmp_run_clear(&run);
    return 0;
}
