/* cli_progress.c — progress lines and the JSON-lines file of `mmaprobe validate`
 * (suites/cli_progress.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mmaprobe/core.h"
#include "mmaprobe/report.h"
#include "args.h"
#include "progress.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

void mmp_progress_duration(char *buf, size_t size, double s)
{
    if (!(s >= 0)) s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, size, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60) snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, size, "%lds", t);
}

void mmp_progress_init(mmp_progress *p, FILE *out, const mmp_case *cases, size_t n, int tty)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = tty;
    p->cases = cases;
    p->total = n;
    p->t0 = p->t_kernel0 = now_s();
    p->fd = -1;
    p->fault_after = -1;
    const char *f = getenv("MMP_FAULT_WRITE_AFTER");
    if (f && *f) {
        char *e;
        long v = strtol(f, &e, 10);
        if (!*e && v >= 0) p->fault_after = v;
    }
}

mmp_status mmp_progress_open_jsonl(mmp_progress *p, const char *path)
{
    snprintf(p->jsonl_path, sizeof p->jsonl_path, "%s", path);
    return mmp_file_open_locked(&p->fd, &p->lock_holder, path);
}

int mmp_progress_fault_hit(const mmp_progress *p) { return p->fault_after >= 0 && p->lines >= p->fault_after; }

/* Append one whole line; on any failure cut the file back to its last complete line. */
static void append_line(mmp_progress *p, const mmp_case_result *r)
{
    if (p->fd < 0 || p->write_error[0]) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) { snprintf(p->write_error, sizeof p->write_error, "out of memory"); return; }
    mmp_status st = mmp_report_write_case_line(m, r);
    fclose(m);
    if (st != MMP_STATUS_OK || !buf) {
        snprintf(p->write_error, sizeof p->write_error, "%s", mmp_error_last());
        free(buf);
        return;
    }
    off_t start = lseek(p->fd, 0, SEEK_END);
    size_t off = 0;
    int err = 0;
    while (off < len) {
        if (mmp_progress_fault_hit(p)) { err = ENOSPC; break; }
        ssize_t w = write(p->fd, buf + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { err = w < 0 ? errno : ENOSPC; break; }
        off += (size_t)w;
    }
    free(buf);
    if (err) {
        if (start >= 0 && ftruncate(p->fd, start) != 0) { /* nothing more we can do: reported below */ }
        snprintf(p->write_error, sizeof p->write_error, "cannot append to %s: %s%s (its %ld lines before stay valid)",
                 p->jsonl_path, strerror(err), mmp_progress_fault_hit(p) ? " [MMP_FAULT_WRITE_AFTER]" : "", p->lines);
        fprintf(p->out, "%smmaprobe validate: %s; the run goes on\n", p->tty ? "\r\033[K" : "", p->write_error);
        return;
    }
    p->lines++;
}

static void status_line(mmp_progress *p, int final)
{
    double t = now_s(), mean = p->done ? (t - p->t0) / (double)p->done : 0;
    char left[32], kleft[32];
    mmp_progress_duration(left, sizeof left, mean * (double)(p->total - p->done));
    double kmean = p->k_done ? (t - p->t_kernel0) / (double)p->k_done : mean;
    mmp_progress_duration(kleft, sizeof kleft, kmean * (double)(p->k_total - p->k_done));
    fprintf(p->out, "\r\033[K%s: %zu/%zu cases%s%s%s | all: %zu/%zu, %s left%s", p->kernel ? p->kernel->name : "?",
            p->k_done, p->k_total, final ? " done" : ", ", final ? "" : kleft, final ? "" : " left", p->done,
            p->total, left, final ? "\n" : "");
}

void mmp_progress_result(mmp_progress *p, const mmp_case_result *r, size_t index)
{
    append_line(p, r);
    p->done++;
    const mmp_kernel_desc *k = index < p->total ? p->cases[index].kernel : NULL;
    if (k != p->kernel) {
        p->kernel = k;
        p->k_done = 0;
        p->k_total = 0;
        for (size_t i = index; i < p->total && p->cases[i].kernel == k; i++) p->k_total++;
        p->t_kernel0 = now_s();
    }
    p->k_done++;
    char why[160], said[240] = "";
    /* a SKIP says why on its own line (a failure's message follows on the next) */
    if (r->verdict == MMP_VERDICT_SKIP && r->message[0]) {
        strcpy(said, r->reasons ? ": " : "");
        mmp_text_clean(said + strlen(said), sizeof said - strlen(said), r->message);
    }
    int paren = r->reasons || said[0];
    if (r->verdict != MMP_VERDICT_PASS || !p->tty)
        fprintf(p->out, "%s[%zu/%zu] %-5s %s%s%s%s%s\n", p->tty ? "\r\033[K" : "", p->done, p->total,
                mmp_verdict_name(r->verdict), r->id, paren ? " (" : "",
                r->reasons ? mmp_reason_format(why, sizeof why, r->reasons) : "", said, paren ? ")" : "");
    if (r->verdict == MMP_VERDICT_FAIL || r->verdict == MMP_VERDICT_ERROR)
        mmp_progress_print_failure(p->out, r, p->rerun_extra, "      ");
    if (p->tty) status_line(p, p->k_done == p->k_total);   /* a finished kernel keeps its line */
    else if (p->k_done == p->k_total) {
        char left[32];
        double mean = (now_s() - p->t0) / (double)p->done;
        mmp_progress_duration(left, sizeof left, mean * (double)(p->total - p->done));
        fprintf(p->out, "%s: %zu/%zu cases done | all: %zu/%zu, %s left\n", k ? k->name : "?", p->k_done,
                p->k_total, p->done, p->total, left);
    }
    fflush(p->out);
}

void mmp_progress_print_failure(FILE *out, const mmp_case_result *r, const char *extra, const char *indent)
{
    if (r->message[0]) {
        fputs(indent, out);
        mmp_text_fputs(out, r->message);
        fputc('\n', out);
    }
    char id[1024], quoted[2200] = "";
    mmp_text_clean(id, sizeof id, r->id);
    mmp_args_quote(quoted, sizeof quoted, 0, id, 1);   /* an ID may hold ',' or a plugin's odd name */
    fprintf(out, "%sre-run: mmaprobe validate --case %s%s\n", indent, quoted, extra ? extra : "");
}

void mmp_progress_finish(mmp_progress *p)
{
    if (p->tty && p->kernel && p->k_done < p->k_total) fputc('\n', p->out);   /* interrupted mid-kernel */
    if (p->fd >= 0) {
        if (!p->write_error[0] && fsync(p->fd) != 0 && errno != EINVAL && errno != EROFS)
            snprintf(p->write_error, sizeof p->write_error, "cannot write %s: %s", p->jsonl_path, strerror(errno));
        close(p->fd);
        p->fd = -1;
    }
}
