/* cli_probe.c — `mmaprobe probe [--arith] [--layout] [--memory] [--json FILE] [--capture-dir D]
 *                               [--from-capture D] [arith options, see probes/arith_cli.c:
 *                               --synthetic, --instr, --random, --seed, --capture-keep, --threads]`
 *
 * Runs the chosen probe groups (all three when none is named), prints the environment header
 * and readable text to stdout, and writes one JSON document with "env", "arith", "layout",
 * "memory" keys. The layout and memory groups come from other modules; until they are linked
 * their weak defaults report "not built". Exit: 0 pass, 1 a probe found a mismatch or failed,
 * 2 usage, 3 no device / unwritable output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/cli.h"
#include "mmaprobe/probe.h"

__attribute__((weak)) int mmp_probe_layout_run(FILE *text, FILE *json, int argc, char **argv)
{
    (void)argc; (void)argv;
    if (text) fprintf(text, "# layout probes: not built into this binary\n");
    if (json) fprintf(json, "  \"layout\": null");
    return MMP_EXIT_PASS;
}

__attribute__((weak)) int mmp_probe_memory_run(FILE *text, FILE *json, int argc, char **argv)
{
    (void)argc; (void)argv;
    if (text) fprintf(text, "# memory probes: not built into this binary\n");
    if (json) fprintf(json, "  \"memory\": null");
    return MMP_EXIT_PASS;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mmaprobe probe [--arith] [--layout] [--memory] [--json FILE]\n"
               "                      [--capture-dir D] [--from-capture D] [--synthetic GPU]\n"
               "                      [--instr ID[,ID...]] [--random N] [--seed S]\n"
               "                      [--capture-keep N] [--threads N]\n");
}

int mmp_cli_probe(int argc, char **argv)
{
    int arith = 0, layout = 0, memory = 0;
    const char *json_path = NULL;
    static const char *with_value[] = {"--capture-dir", "--from-capture", "--synthetic", "--instr",
                                       "--random", "--seed", "--capture-keep", "--threads"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--arith")) arith = 1;
        else if (!strcmp(a, "--layout")) layout = 1;
        else if (!strcmp(a, "--memory")) memory = 1;
        else if (!strcmp(a, "--json")) {
            if (i + 1 >= argc) { usage(stderr); return MMP_EXIT_USAGE; }
            json_path = argv[++i];
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return MMP_EXIT_PASS;
        } else {
            int known = 0;
            for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
                if (!strcmp(a, with_value[k])) known = 1;
            if (!known || i + 1 >= argc) {
                fprintf(stderr, "mmaprobe probe: unknown or incomplete option %s\n", a);
                usage(stderr);
                return MMP_EXIT_USAGE;
            }
            i++;
        }
    }
    if (!arith && !layout && !memory) arith = layout = memory = 1;
    mmp_env env;
    mmp_env_capture(&env, -1, 0, argc, argv);
    mmp_env_print(stdout, &env, "# ");
    FILE *json = NULL;
    if (json_path) {
        json = fopen(json_path, "w");
        if (!json) {
            fprintf(stderr, "mmaprobe probe: cannot write %s\n", json_path);
            return MMP_EXIT_ENVIRONMENT;
        }
        fprintf(json, "{\n  \"env\": {\"gpu\": \"%s\", \"cc\": \"%d.%d\", \"git_sha\": \"%s\"},\n",
                env.gpu, env.cc_major, env.cc_minor, env.git_sha);
    }
    /* the sub-runners take the options after "probe" (without --json: the document is ours)
     * and ignore those they do not know */
    char **sub_argv = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *sub_argv);
    if (!sub_argv) return MMP_EXIT_INTERNAL;
    int sub_argc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) { i++; continue; }
        sub_argv[sub_argc++] = argv[i];
    }
    int rc = MMP_EXIT_PASS, sub, any = 0;
    static const struct {
        const char *key;
        int (*run)(FILE *, FILE *, int, char **);
    } groups[] = {{"arith", mmp_probe_arith_run}, {"layout", mmp_probe_layout_run}, {"memory", mmp_probe_memory_run}};
    const int on[] = {arith, layout, memory};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        if (!on[g]) continue;
        /* each group writes `"<key>": value` into a buffer; a bare value gets its key here and
         * an empty one `null`, so the document stays valid whatever a group writes */
        char *buf = NULL;
        size_t len = 0;
        /* always a stream, even without --json: a group must not see a NULL one */
        FILE *mem = open_memstream(&buf, &len);
        sub = groups[g].run(stdout, mem, sub_argc, sub_argv);
        if (sub > rc) rc = sub;
        if (mem) fclose(mem);
        if (json) {
            const char *v = buf ? buf : "";
            while (*v == ' ' || *v == '\n' || *v == '\t') v++;
            size_t kl = strlen(groups[g].key);
            if (any) fprintf(json, ",\n");
            if (!*v) fprintf(json, "  \"%s\": null", groups[g].key);
            else if (v[0] == '"' && !strncmp(v + 1, groups[g].key, kl) && v[1 + kl] == '"') fprintf(json, "  %s", v);
            else fprintf(json, "  \"%s\": %s", groups[g].key, v);
        }
        free(buf);
        any = 1;
    }
    free(sub_argv);
    if (json) {
        fprintf(json, "\n}\n");
        if (fclose(json) != 0) return MMP_EXIT_ENVIRONMENT;
    }
    return rc;
}
