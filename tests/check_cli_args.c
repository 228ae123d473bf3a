/* check_cli_args.c — the one option parser (cli/opts.c) under every subcommand's table, without
 * running anything: "--opt=value" and "--opt value" give the same configuration for every
 * option with a value; every flag refuses "=value"; names are not abbreviated; positional
 * arguments stand anywhere and "--" ends the options; argv is not reordered; the parser can be
 * called again and again (getopt's state reset); the re-run options validate records.
 * tests/check_cli.c drives the built program for the messages, exit codes and --help. */
#include <string.h>

#include "cli/args.h"
#include "tests/check_main.h"

#define ARGC(v) ((int)(sizeof(v) / sizeof((v)[0])) - 1)

static int str_eq(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

/* What a validate parse decided, compared field by field (the strings point into argv). */
static void same_validate(const mmp_validate_args *x, const mmp_validate_args *y, const char *what)
{
    ck_assert_msg(str_eq(x->suite, y->suite) && str_eq(x->filter, y->filter) && str_eq(x->output, y->output) &&
                      str_eq(x->case_id, y->case_id) && str_eq(x->sanitize, y->sanitize) &&
                      str_eq(x->o.acc_model, y->o.acc_model),
                  "%s: strings differ", what);
    ck_assert_msg(x->seed == y->seed && x->maxfail == y->maxfail && x->heatmaps == y->heatmaps &&
                      x->n_plugins == y->n_plugins && x->o.tol.mode == y->o.tol.mode && x->o.tol.atol == y->o.tol.atol &&
                      x->o.tol.rtol == y->o.tol.rtol && x->o.tol.ulps == y->o.tol.ulps &&
                      x->o.timeout_s == y->o.timeout_s && x->o.shard_index == y->o.shard_index &&
                      x->o.shard_count == y->o.shard_count && x->o.device == y->o.device &&
                      x->o.host_max_log2_work == y->o.host_max_log2_work,
                  "%s: values differ", what);
    for (int p = 0; p < x->n_plugins; p++) ck_assert_str_eq(x->plugins[p], y->plugins[p]);
}

/* Every validate option with a value, with a value it accepts (and that is not its default). */
static const char *const valued[][2] = {
    {"--suite", "edge"}, {"--filter", "host_*"}, {"--case", "host_f32/f32.f32.f32/8x8x8/exact/s7"}, {"--seed", "7"},
    {"--plugin", "x.so"}, {"--heatmaps", "all"}, {"--maxfail", "3"}, {"--tolerance", "bitwise"},
    {"--acc-model", "H200"}, {"--atol", "0.5"}, {"--rtol", "0.25"}, {"--ulps", "4"}, {"--timeout", "9"},
    {"--host-max-log2-work", "33"}, {"--shard", "1/3"}, {"--device", "2"}, {"--sanitize", "racecheck"},
    {"--output", "r.json"}, {"-o", "r.json"},
};
static const char *const flags[] = {"--help", "--mutants", "--no-isolate", "--no-prefork", "--require-device",
                                    "--run-after-timeout", "--with-builtins"};

START_TEST(test_equals_and_space)
{
    for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++) {
        char joined[256];
        snprintf(joined, sizeof joined, "%s=%s", valued[i][0], valued[i][1]);
        char *two[] = {"validate", (char *)valued[i][0], (char *)valued[i][1], NULL};
        char *one[] = {"validate", joined, NULL};
        mmp_validate_args a, b, d;
        ck_assert_msg(mmp_validate_args_parse(&a, "validate", ARGC(two), two) == MMP_STATUS_OK, "%s %s: %s",
                      valued[i][0], valued[i][1], mmp_error_last());
        mmp_status st = mmp_validate_args_parse(&b, "validate", ARGC(one), one);
        if (valued[i][0][1] != '-') {   /* a short option: "-o=x" is the value "=x" (getopt's rule) */
            ck_assert_int_eq(st, MMP_STATUS_OK);
            ck_assert_str_eq(b.output, "=r.json");
            continue;
        }
        ck_assert_msg(st == MMP_STATUS_OK, "%s: %s", joined, mmp_error_last());
        same_validate(&a, &b, joined);
        char *none[] = {"validate", NULL};
        mmp_validate_args_parse(&d, "validate", ARGC(none), none);
        ck_assert_msg(memcmp(&a.o.tol, &d.o.tol, sizeof d.o.tol) || a.seed != d.seed || !str_eq(a.suite, d.suite) ||
                          !str_eq(a.filter, d.filter) || !str_eq(a.output, d.output) || a.n_plugins ||
                          a.heatmaps != d.heatmaps || a.maxfail != d.maxfail || a.o.timeout_s != d.o.timeout_s ||
                          a.o.shard_count != d.o.shard_count || a.o.device != d.o.device || a.sanitize ||
                          a.o.acc_model || a.o.host_max_log2_work != d.o.host_max_log2_work || a.case_id,
                      "%s changed nothing", joined);
    }
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char joined[64];
        snprintf(joined, sizeof joined, "%s=1", flags[i]);
        char *argv[] = {"validate", joined, NULL};
        mmp_validate_args a;
        ck_assert_int_eq(mmp_validate_args_parse(&a, "validate", ARGC(argv), argv), MMP_STATUS_INVALID);
        ck_assert_msg(strstr(mmp_error_last(), "takes no value"), "%s: %s", joined, mmp_error_last());
        char *plain[] = {"validate", (char *)flags[i], NULL};
        ck_assert_msg(mmp_validate_args_parse(&a, "validate", ARGC(plain), plain) == MMP_STATUS_OK, "%s", flags[i]);
    }
}
END_TEST

/* Unknown, abbreviated, missing values, stray arguments: one line each, naming the argument. */
START_TEST(test_errors)
{
    static const char *const cases[][3] = {
        {"--mut", NULL, "unknown option '--mut'"},        /* no abbreviations */
        {"--mut=1", NULL, "unknown option '--mut'"},
        {"--no", NULL, "unknown option '--no'"},          /* ambiguous to getopt: unknown here */
        {"-q", NULL, "unknown option '-q'"},
        {"stray", NULL, "unexpected argument 'stray'"},
        {"--seed", NULL, "option '--seed' needs a value"},
        {"-o", NULL, "option '-o' needs a value"},
        {"--seed", "-3", "bad --seed '-3'"},              /* a value may start with '-' */
        {"-x", "--filter", "option '--filter' needs a value"},
        {"--", "--mutants", "unexpected argument '--mutants'"},   /* "--" ends the options */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {"validate", (char *)cases[i][0], (char *)cases[i][1], NULL};
        int argc = cases[i][1] ? 3 : 2;
        mmp_validate_args a;
        ck_assert_int_eq(mmp_validate_args_parse(&a, "validate", argc, argv), MMP_STATUS_INVALID);
        ck_assert_msg(strstr(mmp_error_last(), cases[i][2]) && !strchr(mmp_error_last(), '\n'), "%s %s: '%s'",
                      cases[i][0], cases[i][1] ? cases[i][1] : "", mmp_error_last());
    }
}
END_TEST

/* Several --filter add up; the parse is the same on a second call (getopt's state reset), after
 * a failing one too; argv is left in its order; a short-option cluster works. */
START_TEST(test_repeat_and_order)
{
    char *argv[] = {"validate", "--filter", "a*", "-xo", "r.json", "--filter=b*,!c*", "--seed", "3", NULL};
    char *copy[sizeof argv / sizeof argv[0]];
    memcpy(copy, argv, sizeof argv);
    for (int round = 0; round < 3; round++) {
        mmp_validate_args a;
        ck_assert_msg(mmp_validate_args_parse(&a, "validate", ARGC(argv), argv) == MMP_STATUS_OK, "%s", mmp_error_last());
        ck_assert_str_eq(a.filter, "a*,b*,!c*");
        ck_assert_str_eq(a.output, "r.json");
        ck_assert(a.maxfail == 1 && a.seed == 3);
        ck_assert(!memcmp(argv, copy, sizeof argv));
        char *bad[] = {"validate", "--seed", "x", "--bogus", NULL};
        ck_assert_int_eq(mmp_validate_args_parse(&a, "validate", ARGC(bad), bad), MMP_STATUS_INVALID);
    }
}
END_TEST

/* The re-run line keeps the options that find the case's kernel and judge it, as given, and
 * drops those choosing cases, outputs and stops (and a built-in suite). */
START_TEST(test_rerun_options)
{
    char *argv[] = {"validate", "--suite=my.suite", "--mutants", "--filter", "x*", "--seed=3", "-o", "r.json",
                    "--tolerance=bitwise", "--maxfail", "2", "-x", "--timeout", "5", "--plugin", "lib one.so",
                    "--shard", "0/2", "--suite", "edge", NULL};
    mmp_validate_args a;
    ck_assert_msg(mmp_validate_args_parse(&a, "validate", ARGC(argv), argv) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_str_eq(a.rerun, " --suite=my.suite --mutants --tolerance=bitwise --timeout 5 --plugin 'lib one.so'");
    ck_assert_uint_eq(a.rerun_len, strlen(a.rerun));
}
END_TEST

/* report, diff, merge: documents anywhere on the line, "--" before one that starts with '-'. */
START_TEST(test_documents)
{
    mmp_doc_args d;
    char *r1[] = {"report", "--format", "md", "x.json", NULL}, *r2[] = {"report", "x.json", "--format=md", NULL};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(mmp_doc_args_parse(&d, "report", 4 - k, k ? r2 : r1), MMP_STATUS_OK);
        ck_assert(d.n_inputs == 1 && !strcmp(d.inputs[0], "x.json") && d.format == MMP_REPORT_MD);
        mmp_doc_args_free(&d);
    }
    char *df[] = {"diff", "a.json", "--allow-skip", "--max-ratio-growth=3", "--", "-b.json", NULL};
    ck_assert_msg(mmp_doc_args_parse(&d, "diff", ARGC(df), df) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert(d.n_inputs == 2 && !strcmp(d.inputs[1], "-b.json") && d.allow_skip && d.max_ratio_growth == 3);
    mmp_doc_args_free(&d);
    char *mg[] = {"merge", "a.json", "-o", "all.json", "b.json", "--output=all2.json", "--", "--c.json", NULL};
    ck_assert_msg(mmp_doc_args_parse(&d, "merge", ARGC(mg), mg) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert(d.n_inputs == 3 && !strcmp(d.inputs[2], "--c.json") && !strcmp(d.output, "all2.json"));
    mmp_doc_args_free(&d);
    char *flag[] = {"diff", "a", "b", "--allow-missing=yes", NULL};
    ck_assert_int_eq(mmp_doc_args_parse(&d, "diff", ARGC(flag), flag), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "option '--allow-missing' takes no value"));
    ck_assert_ptr_null(d.inputs);
    char *three[] = {"diff", "a", "b", "c", NULL};
    ck_assert_int_eq(mmp_doc_args_parse(&d, "diff", ARGC(three), three), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "more than two run documents: c"));
}
END_TEST

/* probe: each group gets "--name value" whichever way it was given; env: --device both ways. */
START_TEST(test_probe_env)
{
    mmp_probe_args p;
    char *argv[] = {"probe", "--random=5", "--layout", "--filter", "x*", "--quiet", "--json=p.json", NULL};
    ck_assert_msg(mmp_probe_args_parse(&p, ARGC(argv), argv) == MMP_STATUS_OK, "%s", mmp_error_last());
    ck_assert_int_eq(p.groups, MMP_PROBE_GROUP_LAYOUT);
    ck_assert_str_eq(p.json, "p.json");
    ck_assert_int_eq(p.sub_argc[0], 3);
    ck_assert(!strcmp(p.sub_argv[0][1], "--random") && !strcmp(p.sub_argv[0][2], "5"));
    ck_assert_int_eq(p.sub_argc[1], 4);
    ck_assert(!strcmp(p.sub_argv[1][1], "--filter") && !strcmp(p.sub_argv[1][3], "--quiet"));
    mmp_probe_args_free(&p);
    char *bad[] = {"probe", "--quiet=1", NULL};
    ck_assert_int_eq(mmp_probe_args_parse(&p, ARGC(bad), bad), MMP_STATUS_INVALID);
    ck_assert_ptr_nonnull(strstr(mmp_error_last(), "takes no value"));
    mmp_env_args e;
    char *e1[] = {"env", "--device=3", NULL}, *e2[] = {"env", "--device", "3", NULL};
    ck_assert(mmp_env_args_parse(&e, ARGC(e1), e1) == MMP_STATUS_OK && e.device == 3);
    ck_assert(mmp_env_args_parse(&e, ARGC(e2), e2) == MMP_STATUS_OK && e.device == 3);
    char *e3[] = {"env", "extra", NULL};
    ck_assert_int_eq(mmp_env_args_parse(&e, ARGC(e3), e3), MMP_STATUS_INVALID);
}
END_TEST

static Suite *cli_args_suite(void)
{
    Suite *s = suite_create("cli_args");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_equals_and_space);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_repeat_and_order);
    tcase_add_test(tc, test_rerun_options);
    tcase_add_test(tc, test_documents);
    tcase_add_test(tc, test_probe_env);
    suite_add_tcase(s, tc);
    return s;
}

MMP_CHECK_MAIN(cli_args_suite)
