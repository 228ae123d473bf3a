/* suites/cli_progress.h — what `mmaprobe validate` shows and appends while cases finish:
 * progress lines (a rewritten status line per kernel with ETA on a terminal, plain lines
 * otherwise or when $CI is set) and the JSON-lines file (whole lines only: a line that cannot
 * be written completely is cut off again, so the file stays valid JSON lines on a full disk).
 *
 *   mmp_progress p; mmp_progress_init(&p, stderr, cases, n, tty);
 *   mmp_progress_open_jsonl(&p, "run.json.jsonl");   // MMP_STATUS_IO: cannot write it, or
 *                                                     // p.lock_holder writes it (a lock, core.h)
 *   ... mmp_progress_result(&p, &result, index) for each finished case ...
 *   mmp_progress_finish(&p);                          // p.write_error[0]: the first write error
 *
 * Fault injection (tests): MMP_FAULT_WRITE_AFTER=N makes every JSON-lines write after the N-th
 * fail with ENOSPC, as a full disk does, and the final JSON document's too (cli_validate.c).
 */
#ifndef MMAPROBE_SUITES_CLI_PROGRESS_H
#define MMAPROBE_SUITES_CLI_PROGRESS_H

#include "mmaprobe/runner.h"

typedef struct mmp_progress {
    FILE *out;
    int tty;
    const mmp_case *cases;
    size_t total, done;
    double t0, t_kernel0;          /* run start, current kernel's first case start */
    const mmp_kernel_desc *kernel; /* kernel of the status line */
    size_t k_done, k_total;
    int fd;                        /* JSON-lines file, -1 if none */
    long lock_holder;              /* pid of the process writing it when it could not be opened */
    char jsonl_path[4096];
    long lines;                    /* complete lines written */
    long fault_after;              /* MMP_FAULT_WRITE_AFTER, -1 = off */
    char write_error[512];         /* first write error ("" = none) */
    const char *rerun_extra;       /* options a re-run of one case needs (" --mutants"), or NULL */
} mmp_progress;

void mmp_progress_init(mmp_progress *p, FILE *out, const mmp_case *cases, size_t n, int tty);
mmp_status mmp_progress_open_jsonl(mmp_progress *p, const char *path);
void mmp_progress_result(mmp_progress *p, const mmp_case_result *r, size_t index);
void mmp_progress_finish(mmp_progress *p);
/* "  message\n  re-run: mmaprobe validate --case 'ID'<extra>\n" for a FAIL or ERROR (indent: the
 * lines' prefix); the message with control bytes escaped. */
void mmp_progress_print_failure(FILE *out, const mmp_case_result *r, const char *extra, const char *indent);
/* Whether the fault hook says writes now fail (used for the final document too). */
int mmp_progress_fault_hit(const mmp_progress *p);
/* "1h02m", "3m05s", "12s": a duration for people. */
void mmp_progress_duration(char *buf, size_t size, double seconds);

#endif
