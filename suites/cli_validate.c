/* cli_validate.c — `mmaprobe list` and `mmaprobe validate`.
 *
 *   mmaprobe validate [--suite smoke|edge|full|FILE] [--filter GLOB] [--seed N] [--mutants]
 *                     [--tolerance bound|probabilistic|bitwise] [--atol X] [--rtol X] [--ulps N]
 *                     [--timeout S] [--shard I/N] [--device N] [-o RUN.json] [--no-isolate]
 *   mmaprobe list [--suite S] [--filter GLOB] [--mutants]
 * Exit: 0 all PASS/SKIP, 1 a FAIL or ERROR, 2 usage/input, 3 environment, 4 internal.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/cli.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/report.h"
#include "mmaprobe/runner.h"

typedef struct {
    const char *suite, *filter, *output;
    uint64_t seed;
    int mutants, list_only;
    const char *plugins[16];
    int n_plugins;
    mmp_runner_options o;
} cli;

static volatile int stop_flag;
static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_flag = 1; stop_signal = sig; }

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "mmaprobe %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (try 'mmaprobe %s --help')\n", cmd);
    return MMP_EXIT_USAGE;
}

static int parse_num(double *x, const char *s)
{
    char *end;
    *x = strtod(s, &end);
    return *s && !*end && *x == *x ? 0 : -1;
}

static int parse_args(cli *c, const char *cmd, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->suite = "smoke";
    c->seed = 42;
    c->output = "mmaprobe-run.json";
    mmp_runner_options_init(&c->o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
#define NEED() do { if (!v) return usage_error(cmd, "%s needs a value", a); i++; } while (0)
        if (!strcmp(a, "--suite")) { NEED(); c->suite = v; }
        else if (!strcmp(a, "--filter")) { NEED(); c->filter = v; }
        else if (!strcmp(a, "--seed")) { NEED(); if (parse_num(&x, v) || x < 0) return usage_error(cmd, "bad --seed '%s'", v); c->seed = (uint64_t)x; }
        else if (!strcmp(a, "--mutants")) c->mutants = 1;
        else if (!strcmp(a, "--plugin")) {
            NEED();
            if (c->n_plugins == 16) return usage_error(cmd, "at most 16 --plugin (got '%s')", v);
            c->plugins[c->n_plugins++] = v;
        }
        else if (!strcmp(a, "--no-isolate")) c->o.isolate = 0;
        else if (!strcmp(a, "--tolerance")) {
            NEED();
            if (mmp_tolerance_from_name(&c->o.tol.mode, v) != MMP_STATUS_OK) return usage_error(cmd, "unknown tolerance '%s'", v);
        } else if (!strcmp(a, "--atol") || !strcmp(a, "--rtol")) {
            NEED();
            if (parse_num(&x, v) || x < 0) return usage_error(cmd, "bad tolerance value '%s'", v);
            if (a[2] == 'a') c->o.tol.atol = x; else c->o.tol.rtol = x;
            c->o.tol.mode = MMP_TOLERANCE_ATOL_RTOL;
        } else if (!strcmp(a, "--ulps")) {
            NEED();
            if (parse_num(&x, v) || x < 0) return usage_error(cmd, "bad --ulps '%s'", v);
            c->o.tol.ulps = x;
            c->o.tol.mode = MMP_TOLERANCE_ULPS;
        } else if (!strcmp(a, "--timeout")) {
            NEED();
            if (parse_num(&x, v) || x <= 0) return usage_error(cmd, "bad --timeout '%s' (seconds > 0)", v);
            c->o.timeout_s = x;
        } else if (!strcmp(a, "--shard")) {
            NEED();
            int si, sn; char extra;
            if (sscanf(v, "%d/%d%c", &si, &sn, &extra) != 2 || sn < 1 || si < 0 || si >= sn)
                return usage_error(cmd, "bad --shard '%s' (I/N with 0 <= I < N)", v);
            c->o.shard_index = si;
            c->o.shard_count = sn;
        } else if (!strcmp(a, "--device")) {
            NEED();
            if (parse_num(&x, v) || x < 0 || x != (int)x) return usage_error(cmd, "bad --device '%s'", v);
            c->o.device = (int)x;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) { NEED(); c->output = v; }
        else return usage_error(cmd, "unknown option '%s'", a);
#undef NEED
    }
    return -1;
}

#define MAX_KERNELS 2048
static const mmp_kernel_desc *all_kernels[MAX_KERNELS];

/* Built-in kernels (and mutants) plus every plugin's, plugins checked (exit 2 on a bad one). */
static mmp_status kernel_list(size_t *nk, const cli *c)
{
    size_t nb;
    const mmp_kernel_desc *const *k = mmp_registry_kernels(&nb, c->mutants ? MMP_REGISTRY_ALL : MMP_REGISTRY_DEFAULT);
    *nk = 0;
    for (size_t i = 0; i < nb && *nk < MAX_KERNELS; i++) all_kernels[(*nk)++] = k[i];
    for (int p = 0; p < c->n_plugins; p++) {
        const mmp_kernel_desc *pk;
        size_t pn;
        MMP_TRY(mmp_plugin_load(&pk, &pn, c->plugins[p]));
        for (size_t i = 0; i < pn && *nk < MAX_KERNELS; i++) {
            for (size_t j = 0; j < *nk; j++)
                if (!strcmp(all_kernels[j]->name, pk[i].name))
                    return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: kernel name '%s' is already taken", c->plugins[p], pk[i].name);
            all_kernels[(*nk)++] = &pk[i];
        }
    }
    return MMP_STATUS_OK;
}

static mmp_status build_cases(mmp_case **cases, size_t *n, const cli *c)
{
    size_t nk;
    *cases = NULL;
    *n = 0;
    MMP_TRY(kernel_list(&nk, c));
    return mmp_cases_build(cases, n, c->suite, all_kernels, nk, c->filter, c->seed);
}

int mmp_cli_list(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: mmaprobe list [--suite S] [--filter GLOB] [--mutants]\n"
               "  kernels and suites; with --filter or --suite, the case IDs too\n");
        return MMP_EXIT_PASS;
    }
    cli c;
    int rc = parse_args(&c, "list", argc, argv);
    if (rc >= 0) return rc;
    int show_cases = 0;
    for (int i = 1; i < argc; i++) show_cases |= !strcmp(argv[i], "--filter") || !strcmp(argv[i], "--suite");
    mmp_env env;
    mmp_env_capture(&env, -1, c.seed, argc, argv);
    mmp_env_print(stdout, &env, "# ");
    size_t nk;
    mmp_status lst = kernel_list(&nk, &c);
    if (lst != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe list: %s\n", mmp_error_last());
        return mmp_status_exit_code(lst);
    }
    const mmp_kernel_desc *const *k = all_kernels;
    printf("kernels (%zu):\n", nk);
    for (size_t i = 0; i < nk; i++) {
        char prec[48];
        mmp_case_precision(prec, sizeof prec, k[i]);
        printf("  %-28s %-16s %-6s %s\n", k[i]->name, prec, k[i]->where == MMP_KERNEL_HOST ? "host" : "device",
               k[i]->description ? k[i]->description : "");
    }
    printf("suites:\n");
    for (int i = 0; mmp_builtin_suites[i]; i++)
        printf("  %-8s %s\n", mmp_builtin_suites[i], mmp_suite_description(mmp_builtin_suites[i]));
    if (!show_cases) return MMP_EXIT_PASS;
    mmp_case *cases;
    size_t n;
    mmp_status st = build_cases(&cases, &n, &c);
    if (st != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe list: %s\n", mmp_error_last());
        return mmp_status_exit_code(st);
    }
    printf("cases (%zu):\n", n);
    for (size_t i = 0; i < n; i++) printf("  %s\n", cases[i].id);
    mmp_cases_free(cases);
    return MMP_EXIT_PASS;
}

typedef struct {
    FILE *jsonl;
    FILE *progress;
    int tty;
    size_t done, total;
    double t0;
} progress_state;

static void on_result(const mmp_case_result *r, size_t index, void *user)
{
    progress_state *p = user;
    (void)index;
    p->done++;
    if (p->jsonl) mmp_report_write_case_line(p->jsonl, r);
    char why[160];
    if (r->verdict != MMP_VERDICT_PASS || !p->tty)
        fprintf(p->progress, "%s[%zu/%zu] %-5s %s%s%s%s\n", p->tty ? "\r\033[K" : "", p->done, p->total,
                mmp_verdict_name(r->verdict), r->id, r->reasons ? " (" : "",
                r->reasons ? mmp_reason_format(why, sizeof why, r->reasons) : "", r->reasons ? ")" : "");
    if (p->tty) fprintf(p->progress, "\r\033[K%s: %zu/%zu cases", r->kernel, p->done, p->total);
    fflush(p->progress);
}

int mmp_cli_validate(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: mmaprobe validate [--suite smoke|edge|full|FILE] [--filter GLOB] [--seed N] [--mutants]\n"
               "         [--tolerance bound|probabilistic|bitwise] [--atol X] [--rtol X] [--ulps N]\n"
               "         [--timeout S] [--shard I/N] [--device N] [-o RUN.json] [--no-isolate]\n"
               "         [--plugin LIB.so]...\n"
               "  runs every case (each kernel in its own process), writes RUN.json (and RUN.json.jsonl\n"
               "  as cases finish), prints a table. Exit 0 all pass/skip, 1 a FAIL or ERROR, 2 usage,\n"
               "  3 environment, 4 internal.\n");
        return MMP_EXIT_PASS;
    }
    cli c;
    int rc = parse_args(&c, "validate", argc, argv);
    if (rc >= 0) return rc;
    mmp_env env;
    mmp_status est = mmp_env_capture(&env, c.o.device, c.seed, argc, argv);
    mmp_env_print(stdout, &env, "# ");
    if (est != MMP_STATUS_OK) {
        c.o.have_device = 0;
        snprintf(c.o.no_device_reason, sizeof c.o.no_device_reason, "no CUDA device (%s)", env.no_device_reason);
    }
    mmp_case *cases;
    size_t n;
    mmp_status st = build_cases(&cases, &n, &c);
    if (st != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe validate: %s\n", mmp_error_last());
        return mmp_status_exit_code(st);
    }
    mmp_cases_shard(cases, &n, c.o.shard_index, c.o.shard_count);
    if (n == 0) {
        fprintf(stderr, "mmaprobe validate: no case matches (suite %s, filter %s)\n", c.suite, c.filter ? c.filter : "-");
        mmp_cases_free(cases);
        return MMP_EXIT_USAGE;
    }
    char jl_path[4096];
    snprintf(jl_path, sizeof jl_path, "%s.jsonl", c.output);
    FILE *jl = fopen(jl_path, "w");
    if (!jl) {
        fprintf(stderr, "mmaprobe validate: cannot write %s\n", jl_path);
        mmp_cases_free(cases);
        return MMP_EXIT_ENVIRONMENT;
    }
    progress_state ps = {jl, stderr, isatty(2) && !getenv("CI"), 0, n, 0};
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    c.o.stop = &stop_flag;
    mmp_case_result *res = calloc(n, sizeof *res);
    if (!res) { fclose(jl); mmp_cases_free(cases); fprintf(stderr, "mmaprobe validate: out of memory\n"); return MMP_EXIT_INTERNAL; }
    fprintf(stderr, "mmaprobe validate: %zu cases (suite %s)\n", n, c.suite);
    st = mmp_runner_run(res, cases, n, &c.o, on_result, &ps);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (ps.tty) fprintf(stderr, "\r\033[K");
    fclose(jl);
    mmp_run run;
    mmp_run_init(&run);
    run.env = env;
    snprintf(run.kind, sizeof run.kind, "validate");
    snprintf(run.suite, sizeof run.suite, "%s", c.suite);
    run.complete = !stop_flag;
    if (stop_flag) snprintf(run.interrupted_by, sizeof run.interrupted_by, "%s", stop_signal == SIGTERM ? "SIGTERM" : "SIGINT");
    int counts[MMP_VERDICT_COUNT_] = {0};
    for (size_t i = 0; i < n; i++) {
        mmp_run_add(&run, &res[i]);
        if ((unsigned)res[i].verdict < MMP_VERDICT_COUNT_) counts[res[i].verdict]++;
    }
    mmp_runner_print_table(stdout, res, n);
    printf("%d pass, %d fail, %d error, %d skip\n", counts[0], counts[1], counts[2], counts[3]);
    int exit_code = counts[MMP_VERDICT_FAIL] || counts[MMP_VERDICT_ERROR] ? MMP_EXIT_FAIL : MMP_EXIT_PASS;
    if (st != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe validate: %s\n", mmp_error_last());
        exit_code = MMP_EXIT_INTERNAL;
    }
    mmp_status ws = mmp_report_write_json(c.output, &run);
    if (ws != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe validate: %s\n", mmp_error_last());
        exit_code = mmp_status_exit_code(ws);
    } else {
        printf("results: %s%s\n", c.output, run.complete ? "" : " (PARTIAL: interrupted)");
    }
    if (stop_flag)
        fprintf(stderr, "mmaprobe validate: interrupted by %s: partial report %s has %zu finished cases\n",
                run.interrupted_by, c.output, ps.done);
    if (exit_code == MMP_EXIT_PASS && counts[MMP_VERDICT_PASS] == 0 && est != MMP_STATUS_OK)
        exit_code = MMP_EXIT_ENVIRONMENT;   /* everything skipped for want of a device */
    mmp_run_clear(&run);
    free(res);
    mmp_cases_free(cases);
    return exit_code;
}
