/* cli/args_tools.c — the arguments of `mmaprobe env`, `probe`, `report`, `diff` and `merge`
 * (cli/args.h). Nothing here opens a file or runs anything: the parsers are fuzzed
 * (tests/fuzz/fuzz_tool_args.c). Every count has a bound, so no value saturates to 2^64-1 or
 * wraps to 0 ("--device 4294967296"), and an empty value is refused ("--device ''"). */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "opts.h"
#include "mmaprobe/model.h"
#include "mmaprobe/probe.h"

#define BAD(...) MMP_ERR(MMP_STATUS_INVALID, __VA_ARGS__)

/* ---- env ---- */

static const mmp_opt env_opts[] = {{"help", 'h', 0, 'h'}, {"device", 0, 1, 'd' + 256}};

static mmp_status on_env_option(void *ctx, const mmp_opt_hit *h)
{
    mmp_env_args *a = ctx;
    if (h->opt->code == 'h') {
        a->help = 1;
        return MMP_STATUS_OK;
    }
    int64_t d;
    if (mmp_parse_int64(&d, h->value, 0, 1023)) return BAD("bad --device '%s' (a device ordinal 0..1023)", h->value);
    a->device = (int)d;
    return MMP_STATUS_OK;
}

mmp_status mmp_env_args_parse(mmp_env_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->device = -1;
    return mmp_opts_parse(env_opts, sizeof env_opts / sizeof env_opts[0], argc, argv, on_env_option, NULL, a);
}

/* ---- probe ---- */

enum { V_FLAG, V_TEXT, V_COUNT, V_U64, V_GPU, V_INSTR, V_COUNTERS, V_PATH };
enum { G_ARITH = MMP_PROBE_GROUP_ARITH, G_LAYOUT = MMP_PROBE_GROUP_LAYOUT, G_MEMORY = MMP_PROBE_GROUP_MEMORY };

/* Every option a probe group takes, which groups get it and how its value is checked. */
static const struct probe_opt {
    const char *name;
    int kind, groups;
    int64_t lo, hi;
    const char *what;
} probe_opts[] = {
    {"--capture-dir", V_PATH, G_ARITH, 0, 0, NULL},
    {"--capture-keep", V_COUNT, G_ARITH, 0, MMP_PROBE_MAX_RANDOM, "random vectors kept in each text capture"},
    {"--synthetic", V_GPU, G_ARITH, 0, 0, NULL},
    {"--instr", V_INSTR, G_ARITH, 0, 0, NULL},
    {"--random", V_COUNT, G_ARITH, 0, MMP_PROBE_MAX_RANDOM, "random vectors per instruction"},
    {"--seed", V_U64, G_ARITH, 0, 0, NULL},
    {"--threads", V_COUNT, G_ARITH, 1, 32, "analysis threads"},
    {"--from-capture", V_PATH, G_ARITH | G_LAYOUT, 0, 0, NULL},
    {"--write-capture", V_PATH, G_LAYOUT, 0, 0, NULL},
    {"--write-synthetic", V_PATH, G_LAYOUT, 0, 0, NULL},
    {"--quiet", V_FLAG, G_LAYOUT, 0, 0, NULL},
    {"--device", V_COUNT, G_LAYOUT, 0, 1023, "a device ordinal"},
    {"--filter", V_TEXT, G_LAYOUT | G_MEMORY, 0, 0, NULL},
    {"--no-measure", V_FLAG, G_MEMORY, 0, 0, NULL},
    {"--ncu", V_PATH, G_MEMORY, 0, 0, NULL},
    {"--size", V_COUNT, G_MEMORY, 64, 16384, "M = N = K of the memory probe"},
    {"--counters", V_COUNTERS, G_MEMORY, 0, 0, NULL},
    {"--calib-child", V_FLAG, G_MEMORY, 0, 0, NULL},
    {"--launch-child", V_TEXT, G_MEMORY, 0, 0, NULL},
};
#define N_PROBE_OPTS (sizeof probe_opts / sizeof probe_opts[0])

static int is_gpu_of_table(const char *name)
{
    size_t n;
    const mmp_model_preset *p = mmp_model_presets(&n);
    for (size_t i = 0; i < n; i++)
        if (mmp_model_preset_find(name, p[i].instruction) == &p[i]) return 1;
    return 0;
}

/* The table's GPU names, comma-separated, for a message. */
static const char *gpu_names(void)
{
    static char names[256];
    size_t n, used = 0;
    const mmp_model_preset *p = mmp_model_presets(&n);
    names[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char pat[40];
        snprintf(pat, sizeof pat, ", %s,", p[i].gpu);
        char have[260];
        snprintf(have, sizeof have, ", %s,", names);
        if (strstr(have, pat)) continue;
        used += (size_t)snprintf(names + used, used < sizeof names ? sizeof names - used : 0, "%s%s",
                                 used ? ", " : "", p[i].gpu);
        if (used >= sizeof names) break;
    }
    return names;
}

const char *mmp_args_gpu_names(void) { return gpu_names(); }
int mmp_args_is_gpu(const char *name) { return is_gpu_of_table(name); }

static mmp_status check_value(const struct probe_opt *o, const char *v, mmp_probe_args *a)
{
    int64_t n;
    switch (o->kind) {
    case V_TEXT:
        if (!*v) return BAD("%s needs a value, got ''", o->name);
        return MMP_STATUS_OK;
    case V_PATH:
        if (!*v) return BAD("%s needs a path, got ''", o->name);
        if (a->n_paths == (int)(sizeof a->path_opt / sizeof a->path_opt[0]))
            return BAD("too many path options (at most %d)", a->n_paths);
        a->path_opt[a->n_paths] = o->name;
        a->path_val[a->n_paths++] = v;
        return MMP_STATUS_OK;
    case V_COUNT:
        if (mmp_parse_int64(&n, v, o->lo, o->hi))
            return BAD("bad %s '%s' (%s: an integer %lld..%lld)", o->name, v, o->what, (long long)o->lo, (long long)o->hi);
        if (!strcmp(o->name, "--device")) a->device = (int)n;
        return MMP_STATUS_OK;
    case V_U64: {
        uint64_t u;
        if (mmp_parse_uint64(&u, v)) return BAD("bad %s '%s' (a decimal integer in 0..2^64-1)", o->name, v);
        return MMP_STATUS_OK;
    }
    case V_GPU:
        if (!is_gpu_of_table(v)) return BAD("unknown --synthetic GPU '%s' (%s)", v, gpu_names());
        return MMP_STATUS_OK;
    case V_INSTR: {
        if (!*v) return BAD("--instr needs instruction IDs, got ''");
        char id[64];
        for (const char *p = v;;) {
            size_t len = strcspn(p, ",");
            if (len == 0 || len >= sizeof id) return BAD("bad --instr '%s' (a comma-separated list of instruction IDs)", v);
            memcpy(id, p, len);
            id[len] = '\0';
            if (!mmp_arith_instr_find(id))
                return BAD("unknown --instr '%s' (`mmaprobe probe --arith` lists the instructions, e.g. mma.f16.f32)", id);
            if (!p[len]) break;
            p += len + 1;
        }
        return MMP_STATUS_OK;
    }
    case V_COUNTERS:
        if (strcmp(v, "auto") && strcmp(v, "cupti") && strcmp(v, "ncu") && strcmp(v, "clock"))
            return BAD("bad --counters '%s' (auto, cupti, ncu, clock)", v);
        return MMP_STATUS_OK;
    default:
        return MMP_STATUS_OK;
    }
}

void mmp_probe_args_free(mmp_probe_args *a)
{
    for (int g = 0; g < 3; g++) {
        free(a->sub_argv[g]);
        a->sub_argv[g] = NULL;
    }
}

/* The options of probe itself, then probe_opts[i] as code PROBE_OPT0 + i. */
enum { P_ARITH = 256, P_LAYOUT, P_MEMORY, P_JSON, PROBE_OPT0 };
static const mmp_opt probe_own_opts[] = {
    {"help", 'h', 0, 'h'}, {"arith", 0, 0, P_ARITH}, {"layout", 0, 0, P_LAYOUT}, {"memory", 0, 0, P_MEMORY},
    {"json", 0, 1, P_JSON},
};
#define N_PROBE_OWN (sizeof probe_own_opts / sizeof probe_own_opts[0])

static mmp_status on_probe_option(void *ctx, const mmp_opt_hit *h)
{
    mmp_probe_args *a = ctx;
    switch (h->opt->code) {
    case 'h': a->help = 1; return MMP_STATUS_OK;
    case P_ARITH: a->groups |= G_ARITH; return MMP_STATUS_OK;
    case P_LAYOUT: a->groups |= G_LAYOUT; return MMP_STATUS_OK;
    case P_MEMORY: a->groups |= G_MEMORY; return MMP_STATUS_OK;
    case P_JSON:
        if (!*h->value) return BAD("--json needs a file, got ''");
        a->json = h->value;
        return MMP_STATUS_OK;
    default: break;
    }
    const struct probe_opt *po = &probe_opts[h->opt->code - PROBE_OPT0];
    if (po->kind != V_FLAG) MMP_TRY(check_value(po, h->value, a));
    for (int g = 0; g < 3; g++) {   /* each group gets "--name value", whichever way it was spelled */
        if (!(po->groups & (1 << g))) continue;
        a->sub_argv[g][a->sub_argc[g]++] = (char *)po->name;
        if (po->kind != V_FLAG) a->sub_argv[g][a->sub_argc[g]++] = (char *)h->value;
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_probe_args_parse(mmp_probe_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->device = -1;
    mmp_opt table[N_PROBE_OWN + N_PROBE_OPTS];
    memcpy(table, probe_own_opts, sizeof probe_own_opts);
    for (size_t k = 0; k < N_PROBE_OPTS; k++)
        table[N_PROBE_OWN + k] = (mmp_opt){probe_opts[k].name + 2, 0, probe_opts[k].kind != V_FLAG, PROBE_OPT0 + (int)k};
    for (int g = 0; g < 3; g++) {
        a->sub_argv[g] = calloc((size_t)(argc > 0 ? argc : 0) + 2, sizeof(char *));
        if (!a->sub_argv[g]) { mmp_probe_args_free(a); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); }
        a->sub_argv[g][0] = argc > 0 ? argv[0] : "probe";
        a->sub_argc[g] = 1;
    }
    mmp_status st = mmp_opts_parse(table, N_PROBE_OWN + N_PROBE_OPTS, argc, argv, on_probe_option, NULL, a);
    if (st != MMP_STATUS_OK) { mmp_probe_args_free(a); return st; }
    if (!a->groups) a->groups = G_ARITH | G_LAYOUT;   /* --memory profiles kernels (ncu): only when asked */
    return MMP_STATUS_OK;
}

/* ---- report, diff, merge ---- */

void mmp_doc_args_free(mmp_doc_args *a)
{
    free(a->inputs);
    a->inputs = NULL;
    a->n_inputs = 0;
}

enum { REPORT, DIFF, MERGE };
enum { D_FORMAT = 256, D_MAX_GROWTH, D_ALLOW_MISSING, D_ALLOW_SKIP };
static const mmp_opt report_opts[] = {{"help", 'h', 0, 'h'}, {"format", 0, 1, D_FORMAT}, {"output", 'o', 1, 'o'}};
static const mmp_opt diff_opts[] = {
    {"help", 'h', 0, 'h'}, {"format", 0, 1, D_FORMAT}, {"max-ratio-growth", 0, 1, D_MAX_GROWTH},
    {"allow-missing", 0, 0, D_ALLOW_MISSING}, {"allow-skip", 0, 0, D_ALLOW_SKIP}, {"output", 'o', 1, 'o'},
};
static const mmp_opt merge_opts[] = {{"help", 'h', 0, 'h'}, {"output", 'o', 1, 'o'}};

typedef struct doc_parse {
    mmp_doc_args *a;
    int cmd;
} doc_parse;

static mmp_status on_doc_option(void *ctx, const mmp_opt_hit *h)
{
    doc_parse *p = ctx;
    mmp_doc_args *a = p->a;
    const char *v = h->value;
    switch (h->opt->code) {
    case 'h': a->help = 1; break;
    case D_FORMAT:
        if (p->cmd == REPORT) {
            if (mmp_report_format_from_name(&a->format, v) != MMP_STATUS_OK)
                return BAD("unknown format (text, md, junit, html, csv): %s", v);
        } else if (!strcmp(v, "md") || !strcmp(v, "markdown")) a->markdown = 1;
        else if (!strcmp(v, "text")) a->markdown = 0;
        else return BAD("unknown format (text, md): %s", v);
        break;
    case D_MAX_GROWTH:
        if (mmp_parse_finite(&a->max_ratio_growth, v) || a->max_ratio_growth < 1)
            return BAD("--max-ratio-growth needs a finite factor >= 1: %s", v);
        break;
    case D_ALLOW_MISSING: a->allow_missing = 1; break;
    case D_ALLOW_SKIP: a->allow_skip = 1; break;
    case 'o':
        if (!*v) return BAD("%s needs a file name", h->spelled);
        a->output = v;
        break;
    default: return MMP_ERR(MMP_STATUS_INTERNAL, "option %s has no handler", h->spelled);
    }
    return MMP_STATUS_OK;
}

/* A run document named: report takes one, diff two, merge any number. */
static mmp_status on_doc_input(void *ctx, const char *arg)
{
    doc_parse *p = ctx;
    mmp_doc_args *a = p->a;
    if (p->cmd == REPORT && a->n_inputs == 1) return BAD("one run document at a time: %s", arg);
    if (p->cmd == DIFF && a->n_inputs == 2) return BAD("more than two run documents: %s", arg);
    a->inputs[a->n_inputs++] = arg;
    return MMP_STATUS_OK;
}

static mmp_status doc_parse_args(mmp_doc_args *a, int cmd, int argc, char **argv)
{
    static const struct { const mmp_opt *t; size_t n; } tables[] = {
        {report_opts, sizeof report_opts / sizeof report_opts[0]},
        {diff_opts, sizeof diff_opts / sizeof diff_opts[0]},
        {merge_opts, sizeof merge_opts / sizeof merge_opts[0]},
    };
    doc_parse p = {a, cmd};
    MMP_TRY(mmp_opts_parse(tables[cmd].t, tables[cmd].n, argc, argv, on_doc_option, on_doc_input, &p));
    if (a->help) return MMP_STATUS_OK;
    if (cmd == REPORT && a->n_inputs == 0) return BAD("missing the run document");
    if (cmd == DIFF && a->n_inputs != 2) return BAD("needs BASE.json and NEW.json");
    if (cmd == MERGE && a->n_inputs == 0) return BAD("no input runs");
    if (cmd == MERGE && !a->output) return BAD("missing -o ALL.json");
    return MMP_STATUS_OK;
}

mmp_status mmp_doc_args_parse(mmp_doc_args *a, const char *cmd, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->format = MMP_REPORT_TEXT;
    a->max_ratio_growth = 2.0;
    int c = !cmd ? -1 : !strcmp(cmd, "report") ? REPORT : !strcmp(cmd, "diff") ? DIFF : !strcmp(cmd, "merge") ? MERGE : -1;
    if (c < 0) return MMP_ERR(MMP_STATUS_INTERNAL, "no document subcommand '%s'", cmd ? cmd : "(null)");
    a->inputs = calloc(argc > 0 ? (size_t)argc : 1, sizeof *a->inputs);
    if (!a->inputs) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    mmp_status st = doc_parse_args(a, c, argc, argv);
    if (st != MMP_STATUS_OK) mmp_doc_args_free(a);
    return st;
}
