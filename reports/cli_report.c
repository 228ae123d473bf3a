/* cli_report.c — `mmaprobe report`, `mmaprobe diff`, `mmaprobe merge`.
 *
 *   mmaprobe report RUN.json [--format text|md|junit|html] [-o FILE]   (RUN.jsonl: a partial run)
 *   mmaprobe diff BASE.json NEW.json [--max-ratio-growth X] [--format text|md] [-o FILE]
 *   mmaprobe merge A.json B.json ... -o ALL.json
 * Exit codes: report 0 (rendered, whatever the verdicts), diff 1 on a regression, merge 0;
 * 2 for usage errors and malformed or mismatched inputs, 3 when an output cannot be written.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cli.h"
#include "mmaprobe/report.h"

static const char *const format_names[MMP_REPORT_FORMAT_COUNT_] = {"text", "md", "junit", "html"};

int mmp_report_format_from_name(mmp_report_format *f, const char *name)
{
    for (int i = 0; i < MMP_REPORT_FORMAT_COUNT_; i++)
        if (name && strcmp(name, format_names[i]) == 0) { *f = (mmp_report_format)i; return 0; }
    if (name && strcmp(name, "markdown") == 0) { *f = MMP_REPORT_MD; return 0; }
    return -1;
}

mmp_status mmp_report_render(FILE *out, const mmp_run *run, mmp_report_format format)
{
    switch (format) {
    case MMP_REPORT_TEXT: mmp_report_print_text(out, run); break;
    case MMP_REPORT_MD: mmp_report_print_md(out, run); break;
    case MMP_REPORT_JUNIT: mmp_report_print_junit(out, run); break;
    case MMP_REPORT_HTML: mmp_report_print_html(out, run); break;
    default: return MMP_ERR(MMP_STATUS_INVALID, "unknown report format %d", (int)format);
    }
    if (fflush(out) != 0 || ferror(out)) return MMP_ERR(MMP_STATUS_IO, "cannot write the report: %s", strerror(errno));
    return MMP_STATUS_OK;
}

static int fail(mmp_status st, const char *cmd)
{
    fprintf(stderr, "mmaprobe %s: %s\n", cmd, mmp_error_last());
    return mmp_status_exit_code(st);
}

static int usage(const char *cmd, const char *msg, const char *arg)
{
    fprintf(stderr, "mmaprobe %s: %s%s%s\n", cmd, msg, arg ? ": " : "", arg ? arg : "");
    if (strcmp(cmd, "report") == 0)
        fprintf(stderr, "usage: mmaprobe report RUN.json [--format text|md|junit|html] [-o FILE]\n");
    else if (strcmp(cmd, "diff") == 0)
        fprintf(stderr, "usage: mmaprobe diff BASE.json NEW.json [--max-ratio-growth X] [--format text|md] [-o FILE]\n");
    else
        fprintf(stderr, "usage: mmaprobe merge A.json B.json ... -o ALL.json\n");
    return MMP_EXIT_USAGE;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static mmp_status load(mmp_run *run, const char *path)
{
    mmp_run_init(run);
    mmp_status st = ends_with(path, ".jsonl") ? mmp_run_read_jsonl(run, path) : mmp_report_read_json(run, path);
    if (st == MMP_STATUS_OK && ends_with(path, ".jsonl")) run->complete = 0;
    return st;
}

/* Parse "--opt VALUE" / "--opt=VALUE"; returns the value or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) return "";
    return argv[++*i];
}

static FILE *open_out(const char *path, mmp_status *st)
{
    if (!path) return stdout;
    FILE *f = fopen(path, "w");
    if (!f) *st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    return f;
}

static mmp_status close_out(FILE *f, const char *path, mmp_status st)
{
    if (f == stdout || !f) return st;
    if (fclose(f) != 0 && st == MMP_STATUS_OK) st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    return st;
}

int mmp_cli_report(int argc, char **argv)
{
    const char *in = NULL, *outp = NULL, *v;
    mmp_report_format fmt = MMP_REPORT_TEXT;
    for (int i = 1; i < argc; i++) {
        if ((v = opt_value(argc, argv, &i, "--format"))) {
            if (mmp_report_format_from_name(&fmt, v)) return usage("report", "unknown format (text, md, junit, html)", v);
        } else if ((v = opt_value(argc, argv, &i, "-o")) || (v = opt_value(argc, argv, &i, "--output"))) {
            if (!*v) return usage("report", "-o needs a file name", NULL);
            outp = v;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage("report", "render a run document", NULL);
            return MMP_EXIT_PASS;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage("report", "unknown option", argv[i]);
        } else if (in) {
            return usage("report", "one run document at a time", argv[i]);
        } else {
            in = argv[i];
        }
    }
    if (!in) return usage("report", "missing the run document", NULL);
    mmp_run run;
    mmp_status st = load(&run, in);
    if (st != MMP_STATUS_OK) { mmp_run_clear(&run); return fail(st, "report"); }
    FILE *f = open_out(outp, &st);
    if (f) st = close_out(f, outp, mmp_report_render(f, &run, fmt));
    mmp_run_clear(&run);
    return st == MMP_STATUS_OK ? MMP_EXIT_PASS : fail(st, "report");
}

int mmp_cli_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *outp = NULL, *v;
    mmp_diff_options opt = {2.0, 0};
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if ((v = opt_value(argc, argv, &i, "--max-ratio-growth"))) {
            char *e;
            errno = 0;
            opt.max_ratio_growth = strtod(v, &e);
            if (!*v || *e || errno || !isfinite(opt.max_ratio_growth) || opt.max_ratio_growth < 1)
                return usage("diff", "--max-ratio-growth needs a finite factor >= 1", v);
        } else if ((v = opt_value(argc, argv, &i, "--format"))) {
            if (strcmp(v, "md") == 0 || strcmp(v, "markdown") == 0) opt.markdown = 1;
            else if (strcmp(v, "text") == 0) opt.markdown = 0;
            else return usage("diff", "unknown format (text, md)", v);
        } else if ((v = opt_value(argc, argv, &i, "-o"))) {
            if (!*v) return usage("diff", "-o needs a file name", NULL);
            outp = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage("diff", "unknown option", argv[i]);
        } else if (np < 2) {
            paths[np++] = argv[i];
        } else {
            return usage("diff", "more than two run documents", argv[i]);
        }
    }
    if (np != 2) return usage("diff", "needs BASE.json and NEW.json", NULL);
    mmp_run base, cur;
    mmp_status st = load(&base, paths[0]);
    if (st == MMP_STATUS_OK) st = load(&cur, paths[1]);
    else mmp_run_init(&cur);
    size_t regressions = 0;
    if (st == MMP_STATUS_OK) {
        FILE *f = open_out(outp, &st);
        if (f) st = close_out(f, outp, mmp_report_diff(f, &regressions, &base, &cur, &opt));
    }
    mmp_run_clear(&base);
    mmp_run_clear(&cur);
    if (st != MMP_STATUS_OK) return fail(st, "diff");
    return regressions ? MMP_EXIT_FAIL : MMP_EXIT_PASS;
}

int mmp_cli_merge(int argc, char **argv)
{
    const char *outp = NULL, *v;
    const char **names = calloc((size_t)argc + 1, sizeof *names);
    if (!names) return MMP_EXIT_ENVIRONMENT;
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if ((v = opt_value(argc, argv, &i, "-o")) || (v = opt_value(argc, argv, &i, "--output"))) {
            if (!*v) { free(names); return usage("merge", "-o needs a file name", NULL); }
            outp = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(names);
            return usage("merge", "unknown option", argv[i]);
        } else {
            names[n++] = argv[i];
        }
    }
    if (!outp || n == 0) { free(names); return usage("merge", n ? "missing -o ALL.json" : "no input runs", NULL); }
    mmp_run *runs = calloc(n, sizeof *runs);
    const mmp_run **ptrs = calloc(n, sizeof *ptrs);
    mmp_status st = runs && ptrs ? MMP_STATUS_OK : MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    size_t loaded = 0;
    for (size_t i = 0; st == MMP_STATUS_OK && i < n; i++) {
        st = load(&runs[i], names[i]);
        loaded = i + 1;
        ptrs[i] = &runs[i];
    }
    mmp_run out;
    mmp_run_init(&out);
    if (st == MMP_STATUS_OK) st = mmp_report_merge(&out, ptrs, names, n);
    if (st == MMP_STATUS_OK) st = mmp_report_write_json(outp, &out);
    if (st == MMP_STATUS_OK) {
        int64_t counts[MMP_VERDICT_COUNT_];
        mmp_report_counts(&out, counts);
        fprintf(stderr, "mmaprobe merge: %zu runs, %zu cases (%lld FAIL, %lld ERROR) -> %s\n", n, out.n_cases,
                (long long)counts[MMP_VERDICT_FAIL], (long long)counts[MMP_VERDICT_ERROR], outp);
    }
    mmp_run_clear(&out);
    for (size_t i = 0; i < loaded; i++) mmp_run_clear(&runs[i]);
    free(runs);
    free(ptrs);
    free(names);
    return st == MMP_STATUS_OK ? MMP_EXIT_PASS : fail(st, "merge");
}
