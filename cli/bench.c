/* bench.c — `mmaprobe bench`: validate, then time (suites/bench.c does the work).
 *
 *   mmaprobe bench --filter GLOB [--plugin LIB.so]... [--mutants] [--suite smoke|edge|full|FILE]
 *                  [--shape MxNxK]... [--layouts row.col.row] [--dist uniform] [--seed N]
 *                  [--warmup N] [--iters N] [--rotate-bytes B] [--timeout S] [--device N]
 *                  [--host-max-log2-work N] [--json OUT]
 *
 * Exit: 0 every kernel chosen passed validation and something was timed; 1 a kernel refused
 * (FAIL or ERROR in validation) or a timing that failed; 2 usage or input (bad option, no kernel
 * matching, bad plugin or suite file); 3 environment (nothing could be timed: no device;
 * unwritable --json, checked before anything runs).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "args.h"
#include "opts.h"
#include "mmaprobe/bench.h"
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/report.h"

typedef struct bench_args {
    int help;
    const char *json;
    char filter[4096];             /* several --filter: joined with ',' */
    mmp_validate_args kernels;     /* --plugin, --mutants: the kernel table (cli/args.c) */
    mmp_bench_options o;
} bench_args;

#define BAD(...) MMP_ERR(MMP_STATUS_INVALID, __VA_ARGS__)

static mmp_status parse_shape(int64_t s[3], const char *v)
{
    char buf[96];
    if (strlen(v) >= sizeof buf) return BAD("bad --shape '%s' (MxNxK)", v);
    snprintf(buf, sizeof buf, "%s", v);
    char *p = buf;
    for (int i = 0; i < 3; i++) {
        char *x = i < 2 ? strchr(p, 'x') : NULL;
        if (i < 2 && !x) return BAD("bad --shape '%s' (MxNxK, e.g. 4096x4096x4096)", v);
        if (x) *x = '\0';
        if (mmp_parse_int64(&s[i], p, 1, (int64_t)1 << 20)) return BAD("bad --shape '%s' (MxNxK, each 1..1048576)", v);
        p = x ? x + 1 : p;
    }
    return MMP_STATUS_OK;
}

static mmp_status parse_layouts(mmp_bench_options *o, const char *v)
{
    mmp_layout l[3];
    const char *p = v;
    for (int i = 0; i < 3; i++) {
        if (!strncmp(p, "row", 3)) l[i] = MMP_LAYOUT_ROW;
        else if (!strncmp(p, "col", 3)) l[i] = MMP_LAYOUT_COL;
        else return BAD("bad --layouts '%s' (A.B.D, each row or col: row.col.row)", v);
        p += 3;
        if (*p != (i < 2 ? '.' : '\0')) return BAD("bad --layouts '%s' (A.B.D, each row or col: row.col.row)", v);
        p += i < 2;
    }
    o->la = l[0];
    o->lb = l[1];
    o->ld = l[2];
    o->layouts_given = 1;
    return MMP_STATUS_OK;
}

enum { OPT_PLUGIN = 256, OPT_MUTANTS, OPT_SUITE, OPT_SHAPE, OPT_LAYOUTS, OPT_DIST, OPT_SEED, OPT_WARMUP, OPT_ITERS,
       OPT_ROTATE, OPT_TIMEOUT, OPT_DEVICE, OPT_HOSTWORK, OPT_JSON, OPT_FILTER };

static const mmp_opt options[] = {
    {"help", 'h', 0, 'h'},                      {"filter", 0, 1, OPT_FILTER},
    {"plugin", 0, 1, OPT_PLUGIN},               {"mutants", 0, 0, OPT_MUTANTS},
    {"suite", 0, 1, OPT_SUITE},                 {"shape", 0, 1, OPT_SHAPE},
    {"layouts", 0, 1, OPT_LAYOUTS},             {"dist", 0, 1, OPT_DIST},
    {"seed", 0, 1, OPT_SEED},                   {"warmup", 0, 1, OPT_WARMUP},
    {"iters", 0, 1, OPT_ITERS},                 {"rotate-bytes", 0, 1, OPT_ROTATE},
    {"timeout", 0, 1, OPT_TIMEOUT},             {"device", 0, 1, OPT_DEVICE},
    {"host-max-log2-work", 0, 1, OPT_HOSTWORK}, {"json", 0, 1, OPT_JSON},
};

/* One option's value into a; MMP_STATUS_INVALID naming it otherwise. */
static mmp_status take(bench_args *a, int c, const char *v)
{
    mmp_bench_options *o = &a->o;
    int64_t n;
    double x;
    switch (c) {
    case 'h': a->help = 1; return MMP_STATUS_OK;
    case OPT_FILTER:
        if (!*v) return BAD("--filter needs a glob of kernel names, got ''");
        if (strlen(a->filter) + 1 + strlen(v) >= sizeof a->filter) return BAD("the --filter lists are too long");
        if (a->filter[0]) strcat(a->filter, ",");
        strcat(a->filter, v);
        return MMP_STATUS_OK;
    case OPT_PLUGIN:
        if (!*v) return BAD("--plugin needs a library path, got ''");
        if (a->kernels.n_plugins == MMP_MAX_PLUGINS) return BAD("at most %d --plugin options", MMP_MAX_PLUGINS);
        a->kernels.plugins[a->kernels.n_plugins++] = v;
        return MMP_STATUS_OK;
    case OPT_MUTANTS: a->kernels.mutants = 1; return MMP_STATUS_OK;
    case OPT_SUITE:
        if (!*v) return BAD("--suite needs a name or a file, got ''");
        o->suite = v;
        return MMP_STATUS_OK;
    case OPT_SHAPE:
        if (o->n_shapes == MMP_BENCH_MAX_SHAPES) return BAD("at most %d --shape options", MMP_BENCH_MAX_SHAPES);
        MMP_TRY(parse_shape(o->shape[o->n_shapes], v));
        o->n_shapes++;
        return MMP_STATUS_OK;
    case OPT_LAYOUTS: return parse_layouts(o, v);
    case OPT_DIST:
        if (mmp_dist_from_name(&o->dist, v) != MMP_STATUS_OK) return BAD("unknown --dist '%s' (uniform, normal, exact, ...)", v);
        return MMP_STATUS_OK;
    case OPT_SEED:
        if (mmp_parse_uint64(&o->seed, v)) return BAD("bad --seed '%s' (a decimal integer in 0..2^64-1)", v);
        return MMP_STATUS_OK;
    case OPT_WARMUP:
        if (mmp_parse_int64(&n, v, 0, 100000)) return BAD("bad --warmup '%s' (a count 0..100000)", v);
        o->warmup = (int)n;
        return MMP_STATUS_OK;
    case OPT_ITERS:
        if (mmp_parse_int64(&n, v, 1, 100000)) return BAD("bad --iters '%s' (a count 1..100000)", v);
        o->iters = (int)n;
        return MMP_STATUS_OK;
    case OPT_ROTATE:
        if (mmp_parse_int64(&n, v, 0, (int64_t)1 << 40)) return BAD("bad --rotate-bytes '%s' (bytes, 0..2^40; 0: twice the L2)", v);
        o->rotate_bytes = n;
        return MMP_STATUS_OK;
    case OPT_TIMEOUT:
        if (mmp_parse_finite(&x, v) || x <= 0 || x > 86400) return BAD("bad --timeout '%s' (seconds, 0 < S <= 86400)", v);
        o->timeout_s = x;
        o->runner.timeout_s = x;
        return MMP_STATUS_OK;
    case OPT_DEVICE:
        if (mmp_parse_int64(&n, v, 0, 1023)) return BAD("bad --device '%s' (a device ordinal 0, 1, ...)", v);
        o->runner.device = (int)n;
        return MMP_STATUS_OK;
    case OPT_HOSTWORK:
        if (mmp_parse_int64(&n, v, 10, 60)) return BAD("bad --host-max-log2-work '%s' (an integer 10..60)", v);
        o->runner.host_max_log2_work = (int)n;
        return MMP_STATUS_OK;
    case OPT_JSON:
        if (!*v) return BAD("--json needs a file path, got ''");
        a->json = v;
        return MMP_STATUS_OK;
    default: return BAD("unknown option");
    }
}

static mmp_status on_opt(void *ctx, const mmp_opt_hit *h) { return take(ctx, h->opt->code, h->value); }

static mmp_status parse(bench_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    mmp_bench_options_init(&a->o);
    a->kernels.suite = "smoke";
    mmp_runner_options_init(&a->kernels.o);
    /* NULL on_arg: bench takes options only, a stray argument is refused by name */
    MMP_TRY(mmp_opts_parse(options, sizeof options / sizeof options[0], argc, argv, on_opt, NULL, a));
    if (!a->help && !a->filter[0] && !a->kernels.n_plugins)
        return BAD("bench needs --filter GLOB naming the kernels to time (or --plugin LIB.so)");
    return MMP_STATUS_OK;
}

static void usage(void)
{
    printf("usage: mmaprobe bench --filter GLOB [--plugin LIB.so]... [--mutants] [--suite smoke|edge|full|FILE]\n"
           "         [--shape MxNxK]... [--layouts row.col.row] [--dist uniform] [--seed N]\n"
           "         [--warmup N] [--iters N] [--rotate-bytes B] [--timeout S] [--device N]\n"
           "         [--host-max-log2-work N] [--json OUT.json]\n"
           "  Validates the kernels whose names match GLOB (a comma-separated list; '!GLOB' excludes) with the\n"
           "  suite (smoke), and times only those that PASS: warm-up launches, then the median (min, max) of\n"
           "  N launches, operands rotated over sets larger than --rotate-bytes together (default twice the\n"
           "  L2 cache), uniform data. Device kernels: 4096^3 and 8192^3 with CUDA events (10 + 50 launches);\n"
           "  host kernels: 128^3 with the monotonic clock (1 + 5). Each row is compared with the cuBLAS or\n"
           "  CBLAS kernel of the same precision (lib %%) and the measured tensor-core peak (peak %%); NVML's\n"
           "  clocks, power and temperature before and after are in the JSON document.\n"
           "  --plugin alone benches the plugins' kernels. --opt=value works for every option with a value.\n"
           "  Exit 0 timed, 1 a kernel refused (validation FAIL/ERROR) or a timing error, 2 usage or input,\n"
           "  3 nothing could be timed (no device) or unwritable --json.\n");
}

static volatile int stop_flag;
static void on_signal(int sig)
{
    if (stop_flag) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    stop_flag = 1;
}

/* The kernels the arguments name, in registry order. */
static mmp_status choose(const mmp_kernel_desc ***out, size_t *n, bench_args *a)
{
    size_t nk;
    MMP_TRY(mmp_validate_args_kernels(&nk, &a->kernels));
    const mmp_kernel_desc *const *all = mmp_validate_args_kernel_table();
    size_t nd;
    const mmp_kernel_desc *const *def = mmp_registry_kernels(&nd, MMP_REGISTRY_ALL);
    const mmp_kernel_desc **k = calloc(nk ? nk : 1, sizeof *k);
    if (!k) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    *n = 0;
    for (size_t i = 0; i < nk; i++) {
        int builtin = 0;
        for (size_t j = 0; j < nd && !builtin; j++) builtin = def[j] == all[i];
        if (a->filter[0] ? mmp_glob_match(a->filter, all[i]->name) : !builtin) k[(*n)++] = all[i];
    }
    if (!*n) {
        free(k);
        return BAD("no kernel matches --filter '%s' ('mmaprobe list%s' shows them)", a->filter,
                   a->kernels.mutants ? " --mutants" : "");
    }
    *out = k;
    return MMP_STATUS_OK;
}

int mmp_cli_bench(int argc, char **argv)
{
    bench_args a;
    mmp_status st = parse(&a, argc, argv);
    if (st != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe bench: %s (try 'mmaprobe bench --help')\n", mmp_error_last());
        return MMP_EXIT_USAGE;
    }
    if (a.help) { usage(); return MMP_EXIT_PASS; }
    if (a.json && (st = mmp_file_check_writable(a.json)) != MMP_STATUS_OK) return mmp_cli_fail(st, "bench");
    const mmp_kernel_desc **kernels = NULL;
    size_t nk = 0;
    if ((st = choose(&kernels, &nk, &a)) != MMP_STATUS_OK) return mmp_cli_fail(st, "bench");
    mmp_env env;
    mmp_status est = mmp_env_capture(&env, a.o.runner.device, a.o.seed, argc, argv);
    snprintf(env.blas, sizeof env.blas, "%s", mmp_ref_blas_name());
    mmp_env_print(stdout, &env, "# ");
    fflush(stdout);
    if (est != MMP_STATUS_OK) {
        a.o.runner.have_device = 0;
        snprintf(a.o.runner.no_device_reason, sizeof a.o.runner.no_device_reason, "%s", env.no_device_reason);
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    a.o.runner.stop = &stop_flag;
    a.o.progress = stderr;
    char rerun[4096] = "";   /* the kernel table's options: a mutant's or a plugin's case needs them */
    const char *words[2 * MMP_MAX_PLUGINS + 1];
    int nw = 0;
    if (a.kernels.mutants) words[nw++] = "--mutants";
    for (int p = 0; p < a.kernels.n_plugins; p++) {
        words[nw++] = "--plugin";
        words[nw++] = a.kernels.plugins[p];
    }
    size_t rl = 0;
    for (int w = 0; w < nw; w++) {
        rl = mmp_args_quote(rerun, sizeof rerun, rl, " ", 0);
        rl = mmp_args_quote(rerun, sizeof rerun, rl, words[w], 0);
    }
    a.o.rerun = rerun;
    mmp_bench_run b;
    mmp_bench_run_init(&b);
    st = mmp_bench_execute(&b, kernels, nk, &a.o);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    int code = st == MMP_STATUS_OK ? mmp_bench_exit_code(&b) : mmp_status_exit_code(st);
    if (st != MMP_STATUS_OK) fprintf(stderr, "mmaprobe bench: %s\n", mmp_error_last());
    if (st == MMP_STATUS_OK) {   /* a suite file that does not parse, say: the message is the output */
        printf("\n");
        mmp_bench_print_table(stdout, &b);
    }
    if (a.json && st == MMP_STATUS_OK) {
        mmp_status ws = mmp_report_write_bench(a.json, &env, &b);
        if (ws != MMP_STATUS_OK) {
            fprintf(stderr, "mmaprobe bench: %s\n", mmp_error_last());
            if (code == MMP_EXIT_PASS) code = mmp_status_exit_code(ws);
        } else {
            printf("results: %s\n", a.json);
        }
    }
    if (code == MMP_EXIT_ENVIRONMENT && est != MMP_STATUS_OK)
        fprintf(stderr, "mmaprobe bench: nothing could be timed (%s)\n", env.no_device_reason);
    mmp_bench_run_clear(&b);
    free(kernels);
    return code;
}
