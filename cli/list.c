/* list.c — `mmaprobe list`: the kernels (built-in, mutants, plugins) and the suites; with
 * --suite or --filter, the case IDs too; with --plugin, the GPU code each plugin library carries.
 *
 *   mmaprobe list [--suite S] [--filter GLOB] [--mutants] [--plugin LIB.so]...
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"
#include "mmaprobe/registry.h"
#include "mmaprobe/report.h"
#include "mmaprobe/runner.h"
#include "args.h"

static int fail(const char *cmd, mmp_status st)
{
    fprintf(stderr, "mmaprobe %s: %s\n", cmd, mmp_error_last());
    return mmp_status_exit_code(st);
}

int mmp_cli_list(int argc, char **argv)
{
    mmp_validate_args c;
    mmp_status st = mmp_validate_args_parse(&c, "list", argc, argv);
    if (st != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe list: %s (try 'mmaprobe list --help')\n", mmp_error_last());
        return MMP_EXIT_USAGE;
    }
    if (c.help) {
        printf("usage: mmaprobe list [--suite S] [--filter GLOB] [--mutants] [--plugin LIB.so]...\n"
               "  kernels and suites; with --filter or --suite, the case IDs too\n");
        return MMP_EXIT_PASS;
    }
    mmp_env env;
    mmp_env_capture(&env, -1, c.seed, argc, argv);
    snprintf(env.blas, sizeof env.blas, "%s", mmp_ref_blas_name());
    mmp_env_print(stdout, &env, "# ");
    size_t nk;
    st = mmp_validate_args_kernels(&nk, &c);
    if (st != MMP_STATUS_OK) return fail("list", st);
    const mmp_kernel_desc *const *k = mmp_validate_args_kernel_table();
    printf("kernels (%zu):\n", nk);
    for (size_t i = 0; i < nk; i++) {
        char prec[48], name[256], desc[1024];
        mmp_case_precision(prec, sizeof prec, k[i]);
        /* a plugin's strings reach the terminal with their control bytes escaped (\xNN) */
        printf("  %-28s %-16s %-6s %s\n", mmp_text_clean(name, sizeof name, k[i]->name), prec,
               k[i]->where == MMP_KERNEL_HOST ? "host" : "device",
               mmp_text_clean(desc, sizeof desc, k[i]->description ? k[i]->description : ""));
    }
    if (c.n_plugins) printf("plugins (the GPU code each carries: SASS sm_XY runs on X.Y and later X.*; PTX is JIT-compiled):\n");
    for (int i = 0; i < c.n_plugins; i++) {
        mmp_fatbin_info fi;
        char codes[400], path[1024];
        if (mmp_fatbin_read_elf(&fi, c.plugins[i]) == MMP_STATUS_OK) mmp_fatbin_describe(codes, sizeof codes, &fi);
        else snprintf(codes, sizeof codes, "unknown: %s", mmp_error_last());
        printf("  %s: %s\n", mmp_text_clean(path, sizeof path, c.plugins[i]), codes);
    }
    printf("suites:\n");
    for (int i = 0; mmp_builtin_suites[i]; i++)
        printf("  %-8s %s\n", mmp_builtin_suites[i], mmp_suite_description(mmp_builtin_suites[i]));
    if (!c.show_cases) return MMP_EXIT_PASS;
    mmp_case *cases;
    size_t n;
    st = mmp_validate_args_cases(&cases, &n, &c);
    if (st != MMP_STATUS_OK) return fail("list", st);
    printf("cases (%zu):\n", n);
    for (size_t i = 0; i < n; i++) {
        char id[512];
        printf("  %s\n", mmp_text_clean(id, sizeof id, cases[i].id));
    }
    mmp_cases_free(cases);
    return MMP_EXIT_PASS;
}
