/* fuzz_jsonl.c — libFuzzer harness for the JSON-lines reader of a partial run
 * (mmp_run_read_jsonl_text, reports/run.c: what `report RUN.json.jsonl` reads after a crash).
 *
 * Build (clang only):  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DMMP_FUZZ=ON -DMMP_ENABLE_CUDA=OFF
 *                      cmake --build build-fuzz --target fuzz_jsonl
 * Run:                 build-fuzz/tests/fuzz_jsonl -jobs=1 -max_total_time=600 -max_len=32768 \
 *                          -close_fd_mask=2 fuzz-work/jsonl tests/fuzz/corpus/jsonl
 * (-close_fd_mask=2: the reader says "ignoring a truncated last line" on stderr for most inputs.)
 * Properties: never crashes; a failure is one line of message; lines that read are written back
 * one case a line and read again to the same cases and the same bytes (round trip), and render
 * as text without a control byte reaching the terminal. abort() tells libFuzzer a property broke.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/report.h"

static char *write_lines(const mmp_run *run, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) abort();
    for (size_t i = 0; i < run->n_cases; i++)
        if (mmp_report_write_case_line(f, &run->cases[i]) != MMP_STATUS_OK) abort();
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mmp_run run;
    mmp_run_init(&run);
    mmp_status st = mmp_run_read_jsonl_text(&run, (const char *)data, size, "fuzz.jsonl");
    if (st != MMP_STATUS_OK) {
        const char *m = mmp_error_last();
        if (!m[0] || strchr(m, '\n')) abort();
        mmp_run_clear(&run);
        return 0;
    }
    size_t n1, n2;
    char *w1 = write_lines(&run, &n1);
    mmp_run again;
    mmp_run_init(&again);
    if (mmp_run_read_jsonl_text(&again, w1, n1, "rewritten.jsonl") != MMP_STATUS_OK) abort();
    if (again.n_cases != run.n_cases) abort();
    char *w2 = write_lines(&again, &n2);
    if (n1 != n2 || memcmp(w1, w2, n1) != 0) abort();   /* write -> read -> write is stable */
    /* the terminal table of a partial run: no ESC, BEL or C1 control from the lines */
    char *text = NULL;
    size_t tlen = 0;
    FILE *t = open_memstream(&text, &tlen);
    if (!t) abort();
    run.complete = 0;
    mmp_report_print_text(t, &run);
    fclose(t);
    for (size_t i = 0; i < tlen; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == 0x1b || c == 0x07 || (c == 0xc2 && i + 1 < tlen && (unsigned char)text[i + 1] >= 0x80 &&
                                       (unsigned char)text[i + 1] <= 0x9f))
            abort();
    }
    free(text);
    free(w1);
    free(w2);
    mmp_run_clear(&again);
    mmp_run_clear(&run);
    return 0;
}
