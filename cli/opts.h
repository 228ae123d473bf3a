/* cli/opts.h — the one option parser of every subcommand: a table of options over getopt_long.
 *
 *   static const mmp_opt table[] = {
 *       {"help", 'h', 0, 'h'},            // -h / --help
 *       {"suite", 0, 1, OPT_SUITE},       // --suite NAME / --suite=NAME
 *       {NULL, 'x', 0, 'x'},              // -x only
 *   };
 *   static mmp_status on_opt(void *ctx, const mmp_opt_hit *h) { switch (h->opt->code) ... }
 *   static mmp_status on_arg(void *ctx, const char *arg) { ... }   // a positional argument
 *   MMP_TRY(mmp_opts_parse(table, N, argc, argv, on_opt, on_arg, ctx));
 *
 * Rules, the same for every subcommand: "--opt value" and "--opt=value" for an option with a
 * value (short ones: "-o value", "-ovalue"); a flag given "=value" is refused; long names are
 * never abbreviated ("--mut" is unknown, so a new option cannot change what an old command
 * line means); positional arguments may stand anywhere and are passed to on_arg in order (NULL
 * on_arg: each is refused); "--" ends the options, everything after it is positional. Every
 * error is MMP_STATUS_INVALID with a one-line message naming the argument — getopt itself
 * prints nothing (opterr = 0). argv is not reordered. The parser state is reset on each call
 * (optind = 0), so parsers can be called again and again (the fuzzers do).
 */
#ifndef MMAPROBE_CLI_OPTS_H
#define MMAPROBE_CLI_OPTS_H

#include <stddef.h>

#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mmp_opt {
    const char *name;       /* long name without "--", or NULL (a short option only) */
    char short_name;        /* 'h', 'o', ... or 0 (a long option only) */
    int has_value;          /* 0: a flag; 1: needs a value */
    int code;               /* what the handler switches on; > 255 unless it is short_name */
} mmp_opt;

typedef struct mmp_opt_hit {
    const mmp_opt *opt;     /* the table row */
    const char *value;      /* its value (points into argv), or NULL for a flag */
    const char *spelled;    /* the option as messages name it: "--suite" or "-o" */
    const char *tokens[2];  /* the argv tokens it came as, to repeat it on another command line:
                               {"--suite", "x"}, {"--suite=x", NULL}, {"-x", NULL} */
} mmp_opt_hit;

typedef mmp_status (*mmp_opt_handler)(void *ctx, const mmp_opt_hit *hit);
typedef mmp_status (*mmp_opt_positional)(void *ctx, const char *arg);

/* argv[0] is the subcommand; argv[1..argc-1] are parsed. The first handler error stops the
 * parse and is returned as it is. */
mmp_status mmp_opts_parse(const mmp_opt *table, size_t n, int argc, char **argv, mmp_opt_handler on_opt,
                          mmp_opt_positional on_arg, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
