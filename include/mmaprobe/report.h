/* mmaprobe/report.h — the JSON run document (the one source of truth) and its renderers.
 * Owned by reports/. The runner writes through these functions; every renderer reads them.
 *
 * Writing while a run goes on (crash- and Ctrl-C-safe):
 *   FILE *jl = fopen("run.jsonl", "a");
 *   mmp_report_write_case_line(jl, &result);      // one JSON object per line, flushed
 * Final document, written atomically (temp file + rename):
 *   mmp_run run; mmp_run_init(&run); run.env = env; mmp_run_add(&run, &result); ...
 *   mmp_report_write_json("run.json", &run);
 *   mmp_run_clear(&run);
 * Reading (rejects unknown major versions and malformed files: MMP_STATUS_PARSE + message):
 *   mmp_run run; mmp_run_init(&run);
 *   if (mmp_report_read_json(&run, "run.json") != MMP_STATUS_OK) puts(mmp_error_last());
 *   mmp_run_read_jsonl(&run, "run.jsonl");        // a partial run's lines
 */
#ifndef MMAPROBE_REPORT_H
#define MMAPROBE_REPORT_H

#include <stdio.h>
#include "mmaprobe/result.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MMP_REPORT_SCHEMA_MAJOR 1
#define MMP_REPORT_SCHEMA_MINOR 0

typedef struct mmp_run {
    mmp_env env;
    char kind[16];                 /* "validate" or "probe" */
    char suite[64];
    int32_t complete;              /* 0: partial (interrupted) */
    char interrupted_by[32];       /* "SIGINT", ... */
    mmp_case_result *cases;
    size_t n_cases, cap_cases;
    char *probes_json;             /* probe results: a JSON object text owned by the run (or NULL) */
} mmp_run;

void mmp_run_init(mmp_run *run);
void mmp_run_clear(mmp_run *run);
mmp_status mmp_run_add(mmp_run *run, const mmp_case_result *r);

mmp_status mmp_report_write_case_line(FILE *out, const mmp_case_result *r);
mmp_status mmp_report_write_json(const char *path, const mmp_run *run);
mmp_status mmp_report_read_json(mmp_run *run, const char *path);
mmp_status mmp_run_read_jsonl(mmp_run *run, const char *path);

/* The terminal table (also printed at the end of validate). */
void mmp_report_print_text(FILE *out, const mmp_run *run);

#ifdef __cplusplus
}
#endif
#endif
