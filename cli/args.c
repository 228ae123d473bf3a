/* cli/args.c — parse the arguments of `mmaprobe validate` / `mmaprobe list` (cli/args.h).
 * Nothing here runs a case, opens a file or touches CUDA: the parser is fuzzed (fuzz_cli.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "opts.h"
#include "mmaprobe/registry.h"

mmp_status mmp_parse_int64(int64_t *out, const char *s, int64_t lo, int64_t hi)
{
    mmp_status bad = MMP_STATUS_INVALID;
    if (!s || !*s) return MMP_ERR(bad, "empty integer");
    const char *p = s;
    int neg = 0;
    if (*p == '-' && lo < 0) { neg = 1; p++; }
    if (*p < '0' || *p > '9') return MMP_ERR(bad, "'%s' is not a decimal integer", s);
    uint64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return MMP_ERR(bad, "'%s' is not a decimal integer", s);
        if (v > (UINT64_MAX - 9) / 10) return MMP_ERR(bad, "'%s' is out of range", s);
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > (uint64_t)INT64_MAX) return MMP_ERR(bad, "'%s' is out of range", s);
    }
    int64_t x = neg ? -(int64_t)v : (int64_t)v;
    if (x < lo || x > hi)
        return MMP_ERR(bad, "'%s' is outside [%lld, %lld]", s, (long long)lo, (long long)hi);
    *out = x;
    return MMP_STATUS_OK;
}

size_t mmp_args_quote(char *buf, size_t size, size_t len, const char *s, int always)
{
    int plain = *s != '\0' && !always;
    for (const char *p = s; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-_./=,:+@%", *p);
    if (!strcmp(s, " ")) plain = 1;   /* the separator */
    if (plain) return len + (size_t)snprintf(buf + (len < size ? len : size), len < size ? size - len : 0, "%s", s);
    len += (size_t)snprintf(buf + (len < size ? len : size), len < size ? size - len : 0, "'");
    for (const char *p = s; *p; p++)
        len += (size_t)snprintf(buf + (len < size ? len : size), len < size ? size - len : 0, *p == '\'' ? "'\\''" : "%c", *p);
    return len + (size_t)snprintf(buf + (len < size ? len : size), len < size ? size - len : 0, "'");
}

mmp_status mmp_parse_uint64(uint64_t *out, const char *s)
{
    mmp_status bad = MMP_STATUS_INVALID;
    if (!s || !*s) return MMP_ERR(bad, "empty integer");
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return MMP_ERR(bad, "'%s' is not a decimal integer", s);
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return MMP_ERR(bad, "'%s' is out of range", s);
        v = v * 10 + d;
    }
    *out = v;
    return MMP_STATUS_OK;
}

mmp_status mmp_parse_finite(double *out, const char *s)
{
    if (!s || !*s || *s == ' ' || *s == '\t') return MMP_ERR(MMP_STATUS_INVALID, "empty number");
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(x))
        return MMP_ERR(MMP_STATUS_INVALID, "'%s' is not a finite number", s);
    *out = x;
    return MMP_STATUS_OK;
}

static const char *const sanitize_tools[] = {"memcheck", "racecheck", "initcheck", "synccheck", NULL};

#define BAD(...) MMP_ERR(MMP_STATUS_INVALID, __VA_ARGS__)

/* the seed of a case ID: its last component, sSEED */
static mmp_status id_seed(uint64_t *seed, const char *id)
{
    const char *s = strrchr(id, '/');
    if (!s || s[1] != 's' || mmp_parse_uint64(seed, s + 2) != MMP_STATUS_OK)
        return BAD("--case '%s' is not a case ID (kernel/precision/shape/.../dist/sSEED)", id);
    return MMP_STATUS_OK;
}

/* The options of validate; list takes those up to OPT_LIST_LAST. */
enum {
    OPT_SUITE = 256, OPT_FILTER, OPT_CASE, OPT_SEED, OPT_MUTANTS, OPT_PLUGIN, OPT_LIST_LAST = OPT_PLUGIN,
    OPT_NO_ISOLATE, OPT_NO_PREFORK, OPT_REQUIRE_DEVICE, OPT_RUN_AFTER_TIMEOUT, OPT_WITH_BUILTINS, OPT_HEATMAPS,
    OPT_MAXFAIL, OPT_TOLERANCE, OPT_ACC_MODEL, OPT_ATOL, OPT_RTOL, OPT_ULPS, OPT_TIMEOUT, OPT_HOST_WORK, OPT_SHARD,
    OPT_DEVICE, OPT_SANITIZE, OPT_SAVE_FAILURES
};

static const mmp_opt validate_opts[] = {
    {"help", 'h', 0, 'h'},
    {"suite", 0, 1, OPT_SUITE},
    {"filter", 0, 1, OPT_FILTER},
    {"case", 0, 1, OPT_CASE},
    {"seed", 0, 1, OPT_SEED},
    {"mutants", 0, 0, OPT_MUTANTS},
    {"plugin", 0, 1, OPT_PLUGIN},
    {"no-isolate", 0, 0, OPT_NO_ISOLATE},
    {"no-prefork", 0, 0, OPT_NO_PREFORK},
    {"require-device", 0, 0, OPT_REQUIRE_DEVICE},
    {"run-after-timeout", 0, 0, OPT_RUN_AFTER_TIMEOUT},
    {"with-builtins", 0, 0, OPT_WITH_BUILTINS},
    {"heatmaps", 0, 1, OPT_HEATMAPS},
    {NULL, 'x', 0, 'x'},
    {"maxfail", 0, 1, OPT_MAXFAIL},
    {"tolerance", 0, 1, OPT_TOLERANCE},
    {"acc-model", 0, 1, OPT_ACC_MODEL},
    {"atol", 0, 1, OPT_ATOL},
    {"rtol", 0, 1, OPT_RTOL},
    {"ulps", 0, 1, OPT_ULPS},
    {"timeout", 0, 1, OPT_TIMEOUT},
    {"host-max-log2-work", 0, 1, OPT_HOST_WORK},
    {"shard", 0, 1, OPT_SHARD},
    {"device", 0, 1, OPT_DEVICE},
    {"sanitize", 0, 1, OPT_SANITIZE},
    {"output", 'o', 1, 'o'},
    {"save-failures", 0, 1, OPT_SAVE_FAILURES},
};

typedef struct validate_parse {
    mmp_validate_args *a;
    int list, seed_given;
} validate_parse;

/* Several --filter options: any of them (joined as one list). */
static mmp_status add_filter(mmp_validate_args *a, const char *v)
{
    if (!a->filter) {
        a->filter = v;
        return MMP_STATUS_OK;
    }
    size_t have = strlen(a->filter_buf[0] ? a->filter_buf : a->filter);
    if (!a->filter_buf[0]) snprintf(a->filter_buf, sizeof a->filter_buf, "%s", a->filter);
    if (have + 1 + strlen(v) >= sizeof a->filter_buf)
        return BAD("the --filter lists are longer than %zu bytes", sizeof a->filter_buf - 1);
    strcat(a->filter_buf, ",");
    strcat(a->filter_buf, v);
    a->filter = a->filter_buf;
    return MMP_STATUS_OK;
}

static mmp_status parse_shard(mmp_validate_args *a, const char *v)
{
    const char *slash = strchr(v, '/');
    int64_t si, sn;
    char head[24];
    size_t hl = slash ? (size_t)(slash - v) : 0;
    if (!slash || hl >= sizeof head) return BAD("bad --shard '%s' (I/N with 0 <= I < N)", v);
    memcpy(head, v, hl);
    head[hl] = '\0';
    if (mmp_parse_int64(&si, head, 0, 1 << 20) || mmp_parse_int64(&sn, slash + 1, 1, 1 << 20))
        return BAD("bad --shard '%s' (I/N with 0 <= I < N)", v);
    if (si >= sn)
        return BAD("bad --shard '%s': shard index %lld must be below the count %lld", v, (long long)si, (long long)sn);
    a->o.shard_index = (int)si;
    a->o.shard_count = (int)sn;
    return MMP_STATUS_OK;
}

/* One option's effect on a; the caller records it for the re-run line. */
static mmp_status validate_option(validate_parse *p, const mmp_opt_hit *h)
{
    mmp_validate_args *a = p->a;
    const char *v = h->value, *o = h->spelled;
    double x;
    int64_t n;
    switch (h->opt->code) {
    case 'h': a->help = 1; break;
    case OPT_SUITE:
        if (!*v) return BAD("--suite needs a name or a file, got ''");
        a->suite = v;
        a->show_cases = a->suite_given = 1;
        break;
    case OPT_FILTER:
        MMP_TRY(add_filter(a, v));
        a->show_cases = 1;
        break;
    case OPT_CASE:
        if (!*v) return BAD("--case needs a case ID, got ''");
        a->case_id = v;
        a->show_cases = 1;
        break;
    case OPT_SEED:
        if (mmp_parse_uint64(&a->seed, v)) return BAD("bad --seed '%s' (a decimal integer in 0..2^64-1)", v);
        p->seed_given = 1;
        break;
    case OPT_MUTANTS: a->mutants = 1; break;
    case OPT_PLUGIN:
        if (!*v) return BAD("--plugin needs a library path, got ''");
        if (a->n_plugins == MMP_MAX_PLUGINS) return BAD("at most %d --plugin options (got '%s')", MMP_MAX_PLUGINS, v);
        a->plugins[a->n_plugins++] = v;
        break;
    case OPT_NO_ISOLATE: a->o.isolate = 0; break;
    case OPT_NO_PREFORK: a->o.prefork = 0; break;
    case OPT_REQUIRE_DEVICE: a->require_device = 1; break;
    case OPT_RUN_AFTER_TIMEOUT: a->o.after_timeout = 1; break;
    case OPT_WITH_BUILTINS: a->with_builtins = 1; break;
    case OPT_HEATMAPS:
        if (!strcmp(v, "failing")) a->heatmaps = 0;
        else if (!strcmp(v, "all")) a->heatmaps = 1;
        else if (!strcmp(v, "none")) a->heatmaps = 2;
        else return BAD("unknown --heatmaps '%s' (failing, all, none)", v);
        break;
    case 'x': a->maxfail = 1; break;
    case OPT_MAXFAIL:
        if (mmp_parse_int64(&a->maxfail, v, 1, 1000000000)) return BAD("bad --maxfail '%s' (a count >= 1)", v);
        break;
    case OPT_TOLERANCE:
        if (mmp_tolerance_from_name(&a->o.tol.mode, v) != MMP_STATUS_OK)
            return BAD("unknown --tolerance '%s' (bound, probabilistic, bitwise)", v);
        break;
    case OPT_ACC_MODEL:
        if (!*v) return BAD("--acc-model needs a GPU name (e.g. H200) or a probe JSON file");
        a->o.acc_model = v;
        break;
    case OPT_ATOL:
    case OPT_RTOL:
        if (mmp_parse_finite(&x, v) || x < 0) return BAD("bad %s '%s' (a finite number >= 0)", o, v);
        if (h->opt->code == OPT_ATOL) a->o.tol.atol = x; else a->o.tol.rtol = x;
        a->o.tol.mode = MMP_TOLERANCE_ATOL_RTOL;
        break;
    case OPT_ULPS:
        if (mmp_parse_finite(&x, v) || x < 0) return BAD("bad --ulps '%s' (a finite number >= 0)", v);
        a->o.tol.ulps = x;
        a->o.tol.mode = MMP_TOLERANCE_ULPS;
        break;
    case OPT_TIMEOUT:
        if (mmp_parse_finite(&x, v) || x <= 0 || x > 86400) return BAD("bad --timeout '%s' (seconds, 0 < S <= 86400)", v);
        a->o.timeout_s = x;
        break;
    case OPT_HOST_WORK:
        if (mmp_parse_int64(&n, v, 10, 60)) return BAD("bad --host-max-log2-work '%s' (an integer 10..60)", v);
        a->o.host_max_log2_work = (int)n;
        break;
    case OPT_SHARD: MMP_TRY(parse_shard(a, v)); break;
    case OPT_DEVICE:
        if (mmp_parse_int64(&n, v, 0, 1023)) return BAD("bad --device '%s' (a device ordinal 0, 1, ...)", v);
        a->o.device = (int)n;
        break;
    case OPT_SANITIZE: {
        int ok = 0;
        for (int t = 0; sanitize_tools[t]; t++) ok |= !strcmp(v, sanitize_tools[t]);
        if (!ok) return BAD("unknown --sanitize tool '%s' (memcheck, racecheck, initcheck, synccheck)", v);
        a->sanitize = v;
        break;
    }
    case 'o':
        if (!*v) return BAD("%s needs a file path, got ''", o);
        a->output = v;
        break;
    case OPT_SAVE_FAILURES:
        if (!*v) return BAD("--save-failures needs a directory, got ''");
        a->o.save_failures = v;
        break;
    default: return MMP_ERR(MMP_STATUS_INTERNAL, "validate option %s has no handler", o);
    }
    return MMP_STATUS_OK;
}

static mmp_status on_validate_option(void *ctx, const mmp_opt_hit *h)
{
    validate_parse *p = ctx;
    mmp_validate_args *a = p->a;
    const int code = h->opt->code;
    if (p->list && code != 'h' && code > OPT_LIST_LAST)
        return BAD("unknown option '%s' for list (--suite, --filter, --mutants, --plugin)", h->spelled);
    MMP_TRY(validate_option(p, h));
    /* the options that choose the cases, the outputs (--save-failures too) or when to stop are
     * not a re-run's, nor is a built-in suite (the re-run finds the case in every one) */
    static const int chooses[] = {OPT_FILTER, OPT_CASE, OPT_SEED, OPT_SHARD, 'o', OPT_MAXFAIL, 'x', OPT_SAVE_FAILURES, 'h'};
    int keep = !(code == OPT_SUITE && (!strcmp(h->value, "smoke") || !strcmp(h->value, "edge") || !strcmp(h->value, "full")));
    for (size_t c = 0; c < sizeof chooses / sizeof chooses[0] && keep; c++) keep = code != chooses[c];
    for (int t = 0; keep && t < 2 && h->tokens[t]; t++) {
        a->rerun_len = mmp_args_quote(a->rerun, sizeof a->rerun, a->rerun_len, " ", 0);
        a->rerun_len = mmp_args_quote(a->rerun, sizeof a->rerun, a->rerun_len, h->tokens[t], 0);
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_validate_args_parse(mmp_validate_args *a, const char *cmd, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->suite = "smoke";
    a->seed = 42;
    a->output = "mmaprobe-run.json";
    mmp_runner_options_init(&a->o);
    validate_parse p = {a, cmd && !strcmp(cmd, "list"), 0};
    MMP_TRY(mmp_opts_parse(validate_opts, sizeof validate_opts / sizeof validate_opts[0], argc, argv,
                           on_validate_option, NULL, &p));
    if (a->case_id && a->filter) return BAD("--case names one case; it cannot be combined with --filter");
    if (a->case_id) {
        uint64_t s;
        MMP_TRY(id_seed(&s, a->case_id));
        if (p.seed_given && s != a->seed)
            return BAD("--seed %llu differs from the seed of --case '%s'", (unsigned long long)a->seed, a->case_id);
        a->seed = s;
    }
    return MMP_STATUS_OK;
}

#define MAX_KERNELS 2048
static const mmp_kernel_desc *all_kernels[MAX_KERNELS];

const mmp_kernel_desc *const *mmp_validate_args_kernel_table(void) { return all_kernels; }

/* Built-in kernels (and mutants) plus every plugin's, plugins checked (exit 2 on a bad one). */
mmp_status mmp_validate_args_kernels(size_t *nk, const mmp_validate_args *c)
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

/* With --plugin, a built-in suite and neither --with-builtins, --filter nor --case: the plugins'
 * kernels (and the mutants with --mutants) only, the order kept; else every kernel. */
static const mmp_kernel_desc *chosen[MAX_KERNELS];
static size_t choose_kernels(const mmp_validate_args *c, size_t nk, int *builtin_ops)
{
    *builtin_ops = 1;
    const int builtin_suite = !strcmp(c->suite, "smoke") || !strcmp(c->suite, "edge") || !strcmp(c->suite, "full");
    if (!c->n_plugins || c->with_builtins || c->filter || c->case_id || !builtin_suite) {   /* a suite file names its kernels */
        memcpy(chosen, all_kernels, nk * sizeof *chosen);
        return nk;
    }
    size_t nd, ns = 0;
    const mmp_kernel_desc *const *def = mmp_registry_kernels(&nd, MMP_REGISTRY_DEFAULT);
    for (size_t i = 0; i < nk; i++) {
        int builtin = 0;
        for (size_t j = 0; j < nd && !builtin; j++) builtin = def[j] == all_kernels[i];
        if (!builtin) chosen[ns++] = all_kernels[i];   /* a plugin's, or a mutant (--mutants) */
    }
    *builtin_ops = 0;
    return ns;
}

static mmp_status suite_cases(mmp_case **cases, size_t *n, size_t nk, const char *suite, const char *filter,
                              uint64_t seed, int builtin_ops)
{
    MMP_TRY(mmp_cases_build(cases, n, suite, chosen, nk, filter, seed));
    mmp_status st = builtin_ops ? mmp_cases_add_operators(cases, n, suite, filter, seed) : MMP_STATUS_OK;
    if (st != MMP_STATUS_OK) {
        mmp_cases_free(*cases);
        *cases = NULL;
        *n = 0;
    }
    return st;
}

mmp_status mmp_validate_args_cases(mmp_case **cases, size_t *n, mmp_validate_args *c)
{
    size_t nk;
    *cases = NULL;
    *n = 0;
    MMP_TRY(mmp_validate_args_kernels(&nk, c));
    int ops;
    nk = choose_kernels(c, nk, &ops);
    if (!c->case_id) return suite_cases(cases, n, nk, c->suite, c->filter, c->seed, ops);
    const uint64_t seed = c->seed;   /* the ID's (parsed with the options) */
    const char *suites[] = {c->suite_given ? c->suite : NULL, "smoke", "edge", "full"};
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        if (!suites[s] || (s > 0 && c->suite_given && !strcmp(suites[s], c->suite))) continue;
        MMP_TRY(suite_cases(cases, n, nk, suites[s], NULL, seed, ops));   /* matched exactly: IDs may hold ',' */
        size_t keep = 0;
        for (size_t i = 0; i < *n && !keep; i++)
            if (!strcmp((*cases)[i].id, c->case_id)) (*cases)[keep++] = (*cases)[i];
        *n = keep;
        if (*n) {
            c->suite = suites[s];
            return MMP_STATUS_OK;
        }
        mmp_cases_free(*cases);
        *cases = NULL;
    }
    return BAD("no case '%s' in %s%sthe built-in suites (a suite file's case: add --suite FILE%s)", c->case_id,
               c->suite_given ? c->suite : "", c->suite_given ? " or " : "",
               c->mutants || c->n_plugins ? "" : "; a mutant's or a plugin's: add --mutants or --plugin LIB.so");
}
