/* cli/opts.c — table-driven option parsing over getopt_long (cli/opts.h).
 *
 * getopt_long runs in RETURN_IN_ORDER mode (optstring "-:..."): a positional argument comes
 * back as code 1 where it stands, so argv is never permuted (the re-run line and the fuzzers
 * see the arguments as given) and POSIXLY_CORRECT does not change what a command line means;
 * "--" makes getopt stop, and the arguments after it are positional. The leading ':' makes a
 * missing value ':' instead of '?', and opterr = 0 keeps getopt's own messages off stderr: each
 * error becomes one mmp_status message here. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "opts.h"

#define BAD(...) MMP_ERR(MMP_STATUS_INVALID, __VA_ARGS__)
#define MAX_OPTS 64

static const mmp_opt *by_code(const mmp_opt *t, size_t n, int code)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].code == code) return &t[i];
    return NULL;
}

/* The length of a "--name[=value]" token's name part (after the dashes). */
static size_t name_len(const char *tok) { return strcspn(tok + 2, "="); }

/* Whether tok ("--name" or "--name=value") names row exactly: getopt_long would also take a
 * unique abbreviation, which is refused so that a later option cannot change its meaning. */
static int names_exactly(const char *tok, const mmp_opt *row)
{
    return row && row->name && tok[0] == '-' && tok[1] == '-' && name_len(tok) == strlen(row->name) &&
           !strncmp(tok + 2, row->name, strlen(row->name));
}

static mmp_status unknown_long(const char *tok)
{
    if (tok[0] != '-' || tok[1] != '-') return BAD("unknown option '%s'", tok);
    return BAD("unknown option '%.*s'", (int)(2 + name_len(tok)), tok);
}

static mmp_status positional(mmp_opt_positional on_arg, void *ctx, const char *arg)
{
    if (!on_arg) return BAD("unexpected argument '%s'", arg);
    return on_arg(ctx, arg);
}

mmp_status mmp_opts_parse(const mmp_opt *table, size_t n, int argc, char **argv, mmp_opt_handler on_opt,
                          mmp_opt_positional on_arg, void *ctx)
{
    if (n > MAX_OPTS || argc < 1 || !argv) return MMP_ERR(MMP_STATUS_INTERNAL, "option table of %zu rows, argc %d", n, argc);
    for (int i = 1; i < argc; i++)
        if (!argv[i]) return BAD("NULL argument %d", i);
    struct option longs[MAX_OPTS + 1];
    char shorts[2 + 2 * MAX_OPTS + 1];
    size_t nl = 0, ns = 0;
    shorts[ns++] = '-';   /* positional arguments in order, argv untouched */
    shorts[ns++] = ':';   /* a missing value is ':' */
    for (size_t i = 0; i < n; i++) {
        if (table[i].name)
            longs[nl++] = (struct option){table[i].name, table[i].has_value ? required_argument : no_argument, NULL,
                                          table[i].code};
        if (table[i].short_name) {
            shorts[ns++] = table[i].short_name;
            if (table[i].has_value) shorts[ns++] = ':';
        }
    }
    longs[nl] = (struct option){NULL, 0, NULL, 0};
    shorts[ns] = '\0';
    optind = 0;   /* GNU: start over (the fuzzers parse again and again) */
    opterr = 0;
    for (;;) {
        int li = -1;
        int c = getopt_long(argc, argv, shorts, longs, &li);
        if (c == -1) break;
        if (c == 1) {
            MMP_TRY(positional(on_arg, ctx, optarg));
            continue;
        }
        if (c == '?') {   /* unknown, or a flag given "=value" */
            const mmp_opt *row = optopt ? by_code(table, n, optopt) : NULL;
            if (optopt && !row) return BAD("unknown option '-%c'", optopt);
            const char *tok = argv[optind - 1];
            if (row && row->name && tok[0] == '-' && tok[1] == '-' && names_exactly(tok, row))
                return BAD("option '--%s' takes no value (got '%s')", row->name, tok);
            return unknown_long(tok);
        }
        if (c == ':') {   /* a missing value: its option is the last argument */
            const char *tok = argv[argc - 1];
            const mmp_opt *row = by_code(table, n, optopt);
            if (tok[0] == '-' && tok[1] == '-') {
                if (!names_exactly(tok, row)) return unknown_long(tok);
                return BAD("option '--%s' needs a value", row->name);
            }
            return BAD("option '-%c' needs a value", optopt);
        }
        const mmp_opt *row = by_code(table, n, c);
        if (!row) return MMP_ERR(MMP_STATUS_INTERNAL, "getopt_long returned %d", c);
        char spelled[80];
        mmp_opt_hit hit = {row, row->has_value ? optarg : NULL, spelled, {NULL, NULL}};
        if (li >= 0) {   /* a long option: the tokens it came as */
            int attached = !row->has_value || optarg != argv[optind - 1];
            const char *tok = argv[optind - (attached ? 1 : 2)];
            if (!names_exactly(tok, row)) return unknown_long(tok);
            hit.tokens[0] = tok;
            hit.tokens[1] = attached ? NULL : optarg;
            snprintf(spelled, sizeof spelled, "--%s", row->name);
        } else {         /* a short one, perhaps in a cluster ("-xo FILE"): said alone */
            snprintf(spelled, sizeof spelled, "-%c", row->short_name);
            hit.tokens[0] = spelled;
            hit.tokens[1] = hit.value;
        }
        MMP_TRY(on_opt(ctx, &hit));
    }
    for (int i = optind; i < argc; i++) MMP_TRY(positional(on_arg, ctx, argv[i]));   /* after "--" */
    return MMP_STATUS_OK;
}
