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
#include "mmaprobe/bench.h"
#include "mmaprobe/probe.h"
#include "mmaprobe/result.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MMP_REPORT_SCHEMA_MAJOR 1
#define MMP_REPORT_SCHEMA_MINOR 2

typedef struct mmp_run {
    mmp_env env;
    char kind[16];                 /* "validate" or "probe" */
    char suite[64];
    int32_t complete;              /* 0: partial (interrupted) */
    char interrupted_by[32];       /* "SIGINT", ... */
    mmp_case_result *cases;
    size_t n_cases, cap_cases;
    mmp_probe_results *probes;     /* typed probe results, owned (mmp_run_clear frees), or NULL */
    mmp_env *shards;               /* merged runs: the environment of each shard, in merge order */
    size_t n_shards;
    int32_t schema_major, schema_minor; /* as read from a file (the writer's version when built) */
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
/* Text for a terminal (reports/text_clean.c): control bytes (ESC included), DEL, C1 controls
 * and invalid UTF-8 bytes of s written as \xNN, every other character as it is. clean: the same
 * into buf (cut at a whole character or escape), returns buf. */
void mmp_text_fputs(FILE *out, const char *s);
const char *mmp_text_clean(char *buf, size_t size, const char *s);

/* The compact probe tables (one per group: instructions, captures, kernels) of render_probes.c;
 * markdown 1: Markdown tables. Nothing when run->probes is NULL. */
void mmp_report_print_probes(FILE *out, const mmp_run *run, int markdown);
/* Read from a string instead of a file (name prefixes error messages). */
mmp_status mmp_report_read_json_text(mmp_run *run, const char *text, size_t len, const char *name);
/* The JSON lines of a partial run from a string (name prefixes error messages; fuzzed). */
mmp_status mmp_run_read_jsonl_text(mmp_run *run, const char *text, size_t len, const char *name);
/* Write the whole document to a stream (mmp_report_write_json writes a file atomically). */
mmp_status mmp_report_write_json_stream(FILE *out, const mmp_run *run);

/* The bench document (reports/bench_doc.c): format "mmaprobe-bench", the environment, the
 * options, then per row (kernel x shape) its validation, state, timing (median/min/max ms,
 * TFLOP/s), the library baseline, the measured peak, clocks before and after; null where there
 * is nothing to compare with. The file is written atomically. */
mmp_status mmp_report_write_bench(const char *path, const mmp_env *env, const mmp_bench_run *b);
mmp_status mmp_report_write_bench_stream(FILE *out, const mmp_env *env, const mmp_bench_run *b);

/* One row of the summary per precision x kernel, in first-seen order. */
typedef struct mmp_summary_row {
    char precision[48];
    char kernel[96];
    int64_t cases, pass, fail, error, skip;
    double worst_ratio_det;        /* max over cases of metrics.max_ratio_det (0: none) */
    double worst_ratio_prob;       /* max over cases of metrics.max_ratio_prob */
    double max_ulp;
    double time_kernel_ms;         /* sum of the cases' kernel times */
    mmp_verdict verdict;           /* FAIL > ERROR > PASS > SKIP */
} mmp_summary_row;
/* rows is malloc'ed (free it); *n may be 0. */
mmp_status mmp_report_summarise(mmp_summary_row **rows, size_t *n, const mmp_run *run);
/* Counts over all cases; returns the process exit code a run deserves (0 or 1). */
int mmp_report_counts(const mmp_run *run, int64_t counts[MMP_VERDICT_COUNT_]);

typedef enum mmp_report_format {
    MMP_REPORT_TEXT, MMP_REPORT_MD, MMP_REPORT_JUNIT, MMP_REPORT_HTML, MMP_REPORT_CSV, MMP_REPORT_FORMAT_COUNT_
} mmp_report_format;
/* MMP_STATUS_INVALID for an unknown name ("markdown" is md). */
mmp_status mmp_report_format_from_name(mmp_report_format *f, const char *name);
mmp_status mmp_report_render(FILE *out, const mmp_run *run, mmp_report_format format);
void mmp_report_print_md(FILE *out, const mmp_run *run);
void mmp_report_print_junit(FILE *out, const mmp_run *run);
void mmp_report_print_html(FILE *out, const mmp_run *run);
void mmp_report_print_csv(FILE *out, const mmp_run *run);   /* one row per case (render_csv.c) */

/* Regressions of cur against base. A regression: a case that PASSed (or is new) and now FAILs
 * or ERRORs; a case measured in both whose max_ratio_det grew by more than max_ratio_growth
 * (a factor, e.g. 2.0); a base case missing from cur (unless allow_missing: a run that lost
 * cases, e.g. an interrupted one or a smaller filter, proves nothing about them); a PASS case
 * now skipped (unless allow_skip: a run without the GPU skips every device case).
 * *regressions gets their number. */
typedef struct mmp_diff_options {
    double max_ratio_growth;       /* default 2.0 */
    int markdown;                  /* 1: Markdown for a CI comment */
    int allow_missing;             /* 1: base cases missing from cur are listed, not regressions */
    int allow_skip;                /* 1: PASS -> SKIP is listed, not a regression */
} mmp_diff_options;
mmp_status mmp_report_diff(FILE *out, size_t *regressions, const mmp_run *base, const mmp_run *cur,
                           const mmp_diff_options *opt);

/* Merge shards into out (initialised, empty). Refuses different schema versions (naming the
 * files and versions), a case ID present twice with different results and shards of different
 * counts; identical duplicates are kept once. Coverage: when the cases come from shards of N
 * (--shard i/N), every index 0..N-1 must have cases, else out is incomplete (complete = 0,
 * interrupted_by names the missing shards). names label the inputs in messages. */
mmp_status mmp_report_merge(mmp_run *out, const mmp_run *const *runs, const char *const *names, size_t n);

#ifdef __cplusplus
}
#endif
#endif
