/* cli/args_tools.c — the arguments of `mmaprobe env`, `probe`, `report`, `diff` and `merge`
 * (cli/args.h). Nothing here opens a file or runs anything: the parsers are fuzzed
 * (tests/fuzz/fuzz_tool_args.c). Every count has a bound, so no value saturates to 2^64-1 or
 * wraps to 0 ("--device 4294967296"), and an empty value is refused ("--device ''"). */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "mmaprobe/model.h"
#include "mmaprobe/probe.h"

#define BAD(...) MMP_ERR(MMP_STATUS_INVALID, __VA_ARGS__)

/* ---- env ---- */

mmp_status mmp_env_args_parse(mmp_env_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->device = -1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!o) return BAD("NULL argument %d", i);
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) a->help = 1;
        else if (!strcmp(o, "--device")) {
            if (i + 1 >= argc || !argv[i + 1]) return BAD("option '--device' needs a value");
            int64_t d;
            if (mmp_parse_int64(&d, argv[++i], 0, 1023))
                return BAD("bad --device '%s' (a device ordinal 0..1023)", argv[i]);
            a->device = (int)d;
        } else return BAD("unknown option '%s'", o);
    }
    return MMP_STATUS_OK;
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

mmp_status mmp_probe_args_parse(mmp_probe_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->device = -1;
    for (int g = 0; g < 3; g++) {
        a->sub_argv[g] = calloc((size_t)argc + 2, sizeof(char *));
        if (!a->sub_argv[g]) { mmp_probe_args_free(a); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); }
        a->sub_argv[g][0] = argc > 0 ? argv[0] : "probe";
        a->sub_argc[g] = 1;
    }
    mmp_status st = MMP_STATUS_OK;
    for (int i = 1; i < argc && st == MMP_STATUS_OK; i++) {
        const char *o = argv[i];
        if (!o) { st = BAD("NULL argument %d", i); break; }
        if (!strcmp(o, "--arith")) a->groups |= G_ARITH;
        else if (!strcmp(o, "--layout")) a->groups |= G_LAYOUT;
        else if (!strcmp(o, "--memory")) a->groups |= G_MEMORY;
        else if (!strcmp(o, "-h") || !strcmp(o, "--help")) a->help = 1;
        else if (!strcmp(o, "--json")) {
            if (i + 1 >= argc || !argv[i + 1]) st = BAD("--json needs a file");
            else if (!*argv[i + 1]) st = BAD("--json needs a file, got ''");
            else a->json = argv[++i];
        } else {
            size_t k = 0;
            while (k < N_PROBE_OPTS && strcmp(o, probe_opts[k].name)) k++;
            const struct probe_opt *po = k < N_PROBE_OPTS ? &probe_opts[k] : NULL;
            if (!po || (po->kind != V_FLAG && (i + 1 >= argc || !argv[i + 1]))) {
                st = BAD("unknown or incomplete option %s (see --help)", o);
                break;
            }
            if (po->kind != V_FLAG && (st = check_value(po, argv[i + 1], a)) != MMP_STATUS_OK) break;
            for (int g = 0; g < 3; g++) {
                if (!(po->groups & (1 << g))) continue;
                a->sub_argv[g][a->sub_argc[g]++] = argv[i];
                if (po->kind != V_FLAG) a->sub_argv[g][a->sub_argc[g]++] = argv[i + 1];
            }
            if (po->kind != V_FLAG) i++;
        }
    }
    if (st != MMP_STATUS_OK) { mmp_probe_args_free(a); return st; }
    if (!a->groups) a->groups = G_ARITH | G_LAYOUT;   /* --memory profiles kernels (ncu): only when asked */
    return MMP_STATUS_OK;
}

/* ---- report, diff, merge ---- */

/* "--opt VALUE" / "--opt=VALUE": the value ("" when the option ends the line), or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc || !argv[*i + 1]) return "";
    return argv[++*i];
}

void mmp_doc_args_free(mmp_doc_args *a)
{
    free(a->inputs);
    a->inputs = NULL;
    a->n_inputs = 0;
}

static mmp_status doc_parse(mmp_doc_args *a, int cmd, int argc, char **argv)
{
    enum { REPORT, DIFF, MERGE };
    const char *v;
    for (int i = 1; i < argc; i++) {
        if (!argv[i]) return BAD("NULL argument %d", i);
        if (cmd == REPORT && (v = opt_value(argc, argv, &i, "--format"))) {
            if (mmp_report_format_from_name(&a->format, v) != MMP_STATUS_OK)
                return BAD("unknown format (text, md, junit, html, csv): %s", v);
        } else if (cmd == DIFF && (v = opt_value(argc, argv, &i, "--format"))) {
            if (!strcmp(v, "md") || !strcmp(v, "markdown")) a->markdown = 1;
            else if (!strcmp(v, "text")) a->markdown = 0;
            else return BAD("unknown format (text, md): %s", v);
        } else if (cmd == DIFF && (v = opt_value(argc, argv, &i, "--max-ratio-growth"))) {
            if (mmp_parse_finite(&a->max_ratio_growth, v) || a->max_ratio_growth < 1)
                return BAD("--max-ratio-growth needs a finite factor >= 1: %s", v);
        } else if (cmd == DIFF && !strcmp(argv[i], "--allow-missing")) {
            a->allow_missing = 1;
        } else if (cmd == DIFF && !strcmp(argv[i], "--allow-skip")) {
            a->allow_skip = 1;
        } else if ((v = opt_value(argc, argv, &i, "-o")) || (cmd != DIFF && (v = opt_value(argc, argv, &i, "--output")))) {
            if (!*v) return BAD("-o needs a file name");
            a->output = v;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            a->help = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return BAD("unknown option: %s", argv[i]);
        } else if (cmd == REPORT && a->n_inputs == 1) {
            return BAD("one run document at a time: %s", argv[i]);
        } else if (cmd == DIFF && a->n_inputs == 2) {
            return BAD("more than two run documents: %s", argv[i]);
        } else {
            a->inputs[a->n_inputs++] = argv[i];
        }
    }
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
    int c = !cmd ? -1 : !strcmp(cmd, "report") ? 0 : !strcmp(cmd, "diff") ? 1 : !strcmp(cmd, "merge") ? 2 : -1;
    if (c < 0) return MMP_ERR(MMP_STATUS_INTERNAL, "no document subcommand '%s'", cmd ? cmd : "(null)");
    a->inputs = calloc(argc > 0 ? (size_t)argc : 1, sizeof *a->inputs);
    if (!a->inputs) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    mmp_status st = doc_parse(a, c, argc, argv);
    if (st != MMP_STATUS_OK) mmp_doc_args_free(a);
    return st;
}
