/* validate.c — `mmaprobe validate`.
 *
 *   mmaprobe validate [--suite smoke|edge|full|FILE] [--filter GLOB] [--seed N] [--mutants]
 *                     [--tolerance bound|probabilistic|bitwise] [--atol X] [--rtol X] [--ulps N]
 *                     [--timeout S] [--shard I/N] [--device N] [-o RUN.json] [--no-isolate] [--no-prefork]
 *                     [--plugin LIB.so]... [--sanitize memcheck|racecheck|initcheck|synccheck]
 *                     [--require-device] [--case ID] [--maxfail N | -x] [--run-after-timeout]
 *                     [--heatmaps failing|all|none] [--with-builtins] [--save-failures DIR]
 *
 * Exit: 0 all PASS/SKIP, 1 a FAIL or ERROR, 2 usage/input (bad option, suite file, plugin, no
 * case matching), 3 environment (unwritable output — checked before any case runs —, a write
 * failing during the run, e.g. a full disk; no device when nothing could run; with
 * --require-device, no case of a device kernel that ran (PASS, FAIL or ERROR); --sanitize
 * without compute-sanitizer when everything else passed; no descriptor or process left to
 * start a kernel's child: the report is then partial), 4 internal.
 * Results finished before a fault are kept: the JSON-lines file holds whole lines only, and
 * SIGINT/SIGTERM/SIGHUP stop the run with a valid partial report (complete: false,
 * interrupted_by). Outputs: RUN.json and RUN.json.jsonl are regular files (core/fileio.c); the
 * JSON-lines file is locked for the run, so a second run with the same -o stops before any case
 * (exit 3); a RUN.json already there is moved to RUN.json.prev when the run starts (no reader
 * pairs it with the new run's lines) and removed once the new one is written.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/report.h"
#include "mmaprobe/runner.h"
#include "args.h"
#include "progress.h"

static volatile int stop_flag;
static volatile sig_atomic_t stop_signal;
/* First SIGINT/SIGTERM/SIGHUP: stop after the case in flight (its child is killed), write the
 * partial report. A second one ends the program at once (the JSON lines written so far stay
 * valid). SIGHUP is a closed terminal or a session ending: the same stop, not a lost run. */
static void on_signal(int sig)
{
    if (stop_flag) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_flag = 1;
    stop_signal = sig;
    static const char msg[] = "\nmmaprobe validate: stopping; writing the partial report (again to quit now)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
}

/* What each finished case passes through before the progress lines and the JSON lines:
 * --heatmaps (a 64 x 64 map per case made the documents of passing runs tens of MB; failing
 * cases keep theirs by default) and --maxfail N (the run stops, as on a signal, once N cases
 * FAILed or ERRORed). */
typedef struct result_sink {
    mmp_progress *progress;
    mmp_case_result *results;      /* the runner's array: the case's own record is edited */
    int heatmaps;                  /* mmp_validate_args.heatmaps */
    int64_t maxfail, fails;
    int maxfail_hit;
} result_sink;

static void on_result(const mmp_case_result *r, size_t index, void *user)
{
    result_sink *s = user;
    int failed = r->verdict == MMP_VERDICT_FAIL || r->verdict == MMP_VERDICT_ERROR;
    if (s->heatmaps == 2 || (s->heatmaps == 0 && !failed)) {
        s->results[index].metrics.heat_rows = s->results[index].metrics.heat_cols = 0;
        r = &s->results[index];
    }
    mmp_progress_result(s->progress, r, index);
    s->fails += failed;
    if (s->maxfail && s->fails >= s->maxfail && !stop_flag) {
        s->maxfail_hit = 1;
        stop_flag = 1;
    }
}

static int fail(const char *cmd, mmp_status st)
{
    fprintf(stderr, "mmaprobe %s: %s\n", cmd, mmp_error_last());
    return mmp_status_exit_code(st);
}

static void append_message(mmp_case_result *r, const char *text)
{
    size_t used = strlen(r->message);
    snprintf(r->message + used, sizeof r->message - used, "%s%s", used ? "; " : "", text);
}

/* --sanitize: re-run the smallest case of each kernel (or every case matching --filter) under
 * compute-sanitizer; findings make the case FAIL with reason sanitizer. Returns 1 when the
 * sanitizer could not run (said once on stderr; the cases' messages say "not run" and why). */
static int sanitize(mmp_case_result *res, const mmp_case *cases, size_t n, const mmp_validate_args *c)
{
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) { fprintf(stderr, "mmaprobe validate: --sanitize: cannot find this program (/proc/self/exe)\n"); return 1; }
    self[sl] = '\0';
    char seed[32], device[16];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
    snprintf(device, sizeof device, "%d", c->o.device);
    char *extra[64];
    int e = 0;
    extra[e++] = "--suite"; extra[e++] = (char *)c->suite;
    extra[e++] = "--seed"; extra[e++] = seed;
    extra[e++] = "--device"; extra[e++] = device;
    if (c->mutants) extra[e++] = "--mutants";
    for (int p = 0; p < c->n_plugins && e < 60; p++) { extra[e++] = "--plugin"; extra[e++] = (char *)c->plugins[p]; }
    extra[e] = NULL;
    int said = 0, not_run = 0;
    for (size_t i = 0; i < n && !stop_flag; i++) {
        if (res[i].verdict == MMP_VERDICT_SKIP) continue;
        if (!c->filter) {   /* the smallest case of its kernel only */
            int smallest = 1;
            double w = (double)cases[i].m * cases[i].n * cases[i].k;
            for (size_t j = 0; j < n && smallest; j++)
                if (j != i && cases[j].kernel == cases[i].kernel && res[j].verdict != MMP_VERDICT_SKIP) {
                    double wj = (double)cases[j].m * cases[j].n * cases[j].k;
                    smallest = wj > w || (wj == w && j > i);
                }
            if (!smallest) continue;
        }
        int finding = 0;
        char msg[400], line[480];
        mmp_status st = mmp_runner_sanitize_case(&finding, msg, sizeof msg, c->sanitize, self, cases[i].id, extra,
                                                 10 * c->o.timeout_s + 60);
        if (st != MMP_STATUS_OK) {
            not_run = 1;
            if (!said++) fprintf(stderr, "mmaprobe validate: --sanitize %s: not run: %s\n", c->sanitize, mmp_error_last());
            snprintf(line, sizeof line, "sanitizer %s not run: %s", c->sanitize, mmp_error_last());
            append_message(&res[i], line);
            continue;
        }
        fprintf(stderr, "sanitizer %s %s\n", cases[i].id, msg);
        if (!finding) continue;
        res[i].reasons |= MMP_REASON_SANITIZER;
        if (res[i].verdict == MMP_VERDICT_PASS) res[i].verdict = MMP_VERDICT_FAIL;
        snprintf(line, sizeof line, "sanitizer: %s", msg);
        append_message(&res[i], line);
    }
    return not_run;
}

/* The failures at the end of the run (pytest's short summary): each with its message and the
 * command that re-runs it alone; at most MAX_LISTED, the rest counted (all are in RUN.json).
 * Cases that an interrupt left unfinished are ERROR interrupted in the document (a gate sees
 * them) but one count here: they did not fail, they did not run. */
static int unfinished(const mmp_case_result *r)
{
    return r->verdict == MMP_VERDICT_ERROR && r->reasons == MMP_REASON_INTERRUPTED;
}

static void print_failures(FILE *out, const mmp_case_result *res, size_t n, const char *rerun)
{
    enum { MAX_LISTED = 30 };
    size_t bad = 0, listed = 0, cut = 0;
    for (size_t i = 0; i < n; i++) {
        if (unfinished(&res[i])) cut++;
        else bad += res[i].verdict == MMP_VERDICT_FAIL || res[i].verdict == MMP_VERDICT_ERROR;
    }
    if (!bad && !cut) return;
    if (bad) fprintf(out, "\n%zu failed (FAIL or ERROR):\n", bad);
    for (size_t i = 0; i < n && listed < MAX_LISTED; i++) {
        const mmp_case_result *r = &res[i];
        if ((r->verdict != MMP_VERDICT_FAIL && r->verdict != MMP_VERDICT_ERROR) || unfinished(r)) continue;
        char why[160];
        fprintf(out, "%-5s ", mmp_verdict_name(r->verdict));
        mmp_text_fputs(out, r->id);
        fprintf(out, " (%s)\n", mmp_reason_format(why, sizeof why, r->reasons));
        mmp_progress_print_failure(out, r, rerun, "      ");
        listed++;
    }
    if (listed < bad) fprintf(out, "... and %zu more (every one is in the run document)\n", bad - listed);
    if (cut)
        fprintf(out, "\n%zu case(s) did not finish: interrupted (ERROR interrupted in the run document; run again "
                     "to finish them)\n", cut);
    fputc('\n', out);
}

static void usage_validate(void)
{
    printf("usage: mmaprobe validate [--suite smoke|edge|full|FILE] [--filter GLOB] [--seed N] [--mutants]\n"
           "         [--tolerance bound|probabilistic|bitwise] [--atol X] [--rtol X] [--ulps N]\n"
           "         [--acc-model GPU|probe.json]  (bounds from the measured accumulator model)\n"
           "         [--timeout S] [--shard I/N] [--device N] [-o RUN.json] [--no-isolate] [--no-prefork]\n"
           "         [--host-max-log2-work N]  (host kernels: skip cases above 2^N multiply-adds; 30)\n"
           "         [--plugin LIB.so]... [--sanitize memcheck|racecheck|initcheck|synccheck]\n"
           "         [--require-device]  (exit 3 unless a device kernel's case ran: a CI gate on a GPU runner)\n"
           "         [--case ID]  (one case by its ID, seed included: the re-run line printed after a failure)\n"
           "         [--maxfail N | -x]  (stop after N failures; the rest SKIP)  [--run-after-timeout]\n"
           "         [--heatmaps failing|all|none]  (which cases keep their error heatmap; failing)\n"
           "         [--save-failures DIR]  (each FAIL case's A, B, C, D and reference as .npy files in\n"
           "                                 DIR/<ID, '/' as '_'>/ with a README.txt; at most 2 GiB a case)\n"
           "  --plugin runs only the plugins' kernels unless --with-builtins (or --filter/--case) asks for more.\n"
           "  after a case times out, its kernel's remaining cases SKIP unless --run-after-timeout.\n"
           "  --filter takes a comma-separated list of globs on case IDs; '!GLOB' excludes ('*,!host_*');\n"
           "  several --filter options add up ('-GLOB' is not an exclusion: an ID's part after a comma\n"
           "  may start with '-', as in ab1,-0.5). --opt=value and --opt value work for every option\n"
           "  with a value; names are not abbreviated; '--' ends the options.\n"
           "  runs every case (each kernel in its own process, the next one started and its CUDA\n"
           "  context created while the current kernel runs), writes RUN.json (and RUN.json.jsonl\n"
           "  as cases finish), prints a table. Exit 0 all pass/skip, 1 a FAIL or ERROR, 2 usage or\n"
           "  input, 3 environment (unwritable output, full disk, no device), 4 internal.\n");
}

int mmp_cli_validate(int argc, char **argv)
{
    mmp_validate_args c;
    mmp_status st = mmp_validate_args_parse(&c, "validate", argc, argv);
    if (st != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe validate: %s (try 'mmaprobe validate --help')\n", mmp_error_last());
        return MMP_EXIT_USAGE;
    }
    if (c.help) { usage_validate(); return MMP_EXIT_PASS; }
    st = mmp_validate_args_check_inputs(&c);   /* --acc-model: exit 2 with the reason, before anything runs */
    if (st != MMP_STATUS_OK) return fail("validate", st);
    st = mmp_file_check_writable(c.output);   /* exit 3 before any case runs */
    if (st == MMP_STATUS_OK) st = mmp_validate_args_make_dirs(&c);
    if (st != MMP_STATUS_OK) return fail("validate", st);
    mmp_env env;
    mmp_status est = mmp_env_capture(&env, c.o.device, c.seed, argc, argv);
    snprintf(env.blas, sizeof env.blas, "%s", mmp_ref_blas_name());
    mmp_env_print(stdout, &env, "# ");
    if (est != MMP_STATUS_OK) {
        c.o.have_device = 0;
        snprintf(c.o.no_device_reason, sizeof c.o.no_device_reason, "%s", env.no_device_reason);   /* "no CUDA device (...)" */
    }
    mmp_case *cases;
    size_t n;
    st = mmp_validate_args_cases(&cases, &n, &c);
    if (st != MMP_STATUS_OK) return fail("validate", st);
    size_t n_all = n;
    mmp_cases_shard(cases, &n, c.o.shard_index, c.o.shard_count);
    if (n == 0) {
        if (n_all)
            fprintf(stderr, "mmaprobe validate: shard %d/%d of %zu cases is empty\n", c.o.shard_index, c.o.shard_count, n_all);
        else
            fprintf(stderr, "mmaprobe validate: no case matches (suite %s, filter %s)\n", c.suite, c.filter ? c.filter : "-");
        mmp_cases_free(cases);
        return MMP_EXIT_USAGE;
    }
    mmp_case_result *res = calloc(n, sizeof *res);
    if (!res) { mmp_cases_free(cases); fprintf(stderr, "mmaprobe validate: out of memory\n"); return MMP_EXIT_INTERNAL; }
    mmp_progress ps;
    mmp_progress_init(&ps, stderr, cases, n, isatty(2) && !(getenv("CI") && *getenv("CI")));
    const char *rerun = c.rerun_len < sizeof c.rerun ? c.rerun : " (the options of this command)";
    ps.rerun_extra = rerun;
    c.o.rerun_options = rerun;   /* --save-failures: README.txt's re-run command */
    char jl_path[4200];
    snprintf(jl_path, sizeof jl_path, "%s.jsonl", c.output);
    st = mmp_progress_open_jsonl(&ps, jl_path);   /* locked: exit 3 while another run writes it */
    if (st == MMP_STATUS_OK) st = mmp_file_set_aside(c.output, ".prev");
    if (st != MMP_STATUS_OK) {
        if (ps.lock_holder)
            fprintf(stderr, "mmaprobe validate: %s is being written by another mmaprobe (pid %ld)\n", c.output, ps.lock_holder);
        else
            fprintf(stderr, "mmaprobe validate: %s\n", mmp_error_last());
        mmp_progress_finish(&ps);
        free(res);
        mmp_cases_free(cases);
        return mmp_status_exit_code(st);
    }
    struct sigaction sa, old_int, old_term, old_hup;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    c.o.stop = &stop_flag;
    result_sink sink = {&ps, res, c.heatmaps, c.maxfail, 0, 0};
    fprintf(stderr, "mmaprobe validate: %zu cases (suite %s)\n", n, c.suite);
    st = mmp_runner_run(res, cases, n, &c.o, on_result, &sink);
    mmp_progress_finish(&ps);
    int sanitizer_not_run = 0;
    if (c.sanitize && st == MMP_STATUS_OK && !stop_flag) sanitizer_not_run = sanitize(res, cases, n, &c);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    mmp_run run;
    mmp_run_init(&run);
    run.env = env;
    snprintf(run.kind, sizeof run.kind, "validate");
    snprintf(run.suite, sizeof run.suite, "%s", c.suite);
    run.complete = !stop_flag && st == MMP_STATUS_OK;   /* a runner that could not go on: partial */
    const int maxfail_hit = sink.maxfail_hit;
    if (maxfail_hit) {
        snprintf(run.interrupted_by, sizeof run.interrupted_by, "--maxfail %lld", (long long)c.maxfail);
        for (size_t i = 0; i < n; i++)   /* the cases it did not run: skipped, saying why */
            if (res[i].verdict == MMP_VERDICT_ERROR && res[i].reasons == MMP_REASON_INTERRUPTED) {
                res[i].verdict = MMP_VERDICT_SKIP;
                res[i].reasons = 0;
                snprintf(res[i].message, sizeof res[i].message, "not run: the run stopped at %lld failures (--maxfail)",
                         (long long)c.maxfail);
            }
    } else if (stop_flag) {
        snprintf(run.interrupted_by, sizeof run.interrupted_by, "%s",
                 stop_signal == SIGTERM ? "SIGTERM" : stop_signal == SIGHUP ? "SIGHUP" : "SIGINT");
    }
    int counts[MMP_VERDICT_COUNT_] = {0};
    for (size_t i = 0; i < n; i++) {
        mmp_run_add(&run, &res[i]);
        if ((unsigned)res[i].verdict < MMP_VERDICT_COUNT_) counts[res[i].verdict]++;
    }
    mmp_runner_print_table(stdout, res, n);
    print_failures(stdout, res, n, rerun);
    printf("%d pass, %d fail, %d error, %d skip\n", counts[0], counts[1], counts[2], counts[3]);
    if (c.sanitize)
        printf("sanitizer %s: %s\n", c.sanitize, sanitizer_not_run ? "NOT RUN (see the cases' messages)" : stop_flag ? "not run (interrupted)" : "run");
    int exit_code = counts[MMP_VERDICT_FAIL] || counts[MMP_VERDICT_ERROR] ? MMP_EXIT_FAIL : MMP_EXIT_PASS;
    if (exit_code == MMP_EXIT_PASS && counts[MMP_VERDICT_PASS] == 0 && est != MMP_STATUS_OK)
        exit_code = MMP_EXIT_ENVIRONMENT;   /* everything skipped for want of a device */
    if (exit_code == MMP_EXIT_PASS && sanitizer_not_run)
        exit_code = MMP_EXIT_ENVIRONMENT;   /* a requested check that could not run is no pass */
    if (st != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe validate: %s\n", mmp_error_last());
        exit_code = mmp_status_exit_code(st);   /* out of descriptors or processes: 3 */
    }
    if (c.require_device && !stop_flag) {
        size_t ran = 0;
        for (size_t i = 0; i < n; i++)
            ran += cases[i].kernel && cases[i].kernel->where == MMP_KERNEL_DEVICE && res[i].verdict != MMP_VERDICT_SKIP;
        if (!ran) {
            fprintf(stderr, "mmaprobe validate: --require-device: no case of a device kernel ran (%s)\n",
                    env.no_device_reason[0] ? env.no_device_reason : "every device case was skipped or filtered out");
            if (exit_code == MMP_EXIT_PASS || exit_code == MMP_EXIT_FAIL) exit_code = MMP_EXIT_ENVIRONMENT;
        }
    }
    if (ps.write_error[0]) {
        fprintf(stderr, "mmaprobe validate: %s\n", ps.write_error);
        if (exit_code != MMP_EXIT_INTERNAL) exit_code = MMP_EXIT_ENVIRONMENT;
    }
    mmp_status ws = mmp_progress_fault_hit(&ps)
                        ? MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s [MMP_FAULT_WRITE_AFTER]", c.output, strerror(ENOSPC))
                        : mmp_report_write_json(c.output, &run);
    if (ws != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe validate: %s; the results of the finished cases are in %s\n", mmp_error_last(), jl_path);
        if (exit_code != MMP_EXIT_INTERNAL) exit_code = mmp_status_exit_code(ws);
    } else {
        printf("results: %s%s\n", c.output, run.complete ? "" : maxfail_hit ? " (PARTIAL: stopped at --maxfail)" : stop_flag ? " (PARTIAL: interrupted)" : " (PARTIAL: the run could not go on)");
        if (mmp_file_remove_aside(c.output, ".prev") != MMP_STATUS_OK)   /* the previous run's, set aside */
            fprintf(stderr, "mmaprobe validate: %s\n", mmp_error_last());
    }
    if (stop_flag)
        fprintf(stderr, "mmaprobe validate: %s %s: partial report %s has %zu finished cases of %zu\n",
                maxfail_hit ? "stopped by" : "interrupted by", run.interrupted_by, c.output, ps.done, n);
    mmp_run_clear(&run);
    free(res);
    mmp_cases_free(cases);
    return exit_code;
}
