/* bench_child.c — the timing child of `mmaprobe bench`: the parent never touches CUDA, so the
 * rows are timed in a forked process that sends one record per row (its index, then the
 * mmp_bench_outcome) down a pipe. The parent waits for each record with a deadline; a child that
 * dies (a crash in the kernel, a sticky CUDA error) or overruns makes that row ERROR, its process
 * group is killed, and a fresh child takes the rows after it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/core.h"
#include "mmaprobe/sysio.h"
#include "bench_internal.h"
#include "runner_internal.h"

typedef struct record {
    uint64_t index;
    mmp_bench_outcome out;
} record;

static int pending(const mmp_bench_row *r)
{
    return r->out.state == MMP_BENCH_SKIPPED && !r->out.why[0] && !strcmp(r->verdict, "PASS");
}

static void child_main(int fd, int parent, const mmp_bench_run *b, size_t from, const mmp_bench_options *o)
{
    mmp_spawn_die_with_parent(parent);
    signal(SIGINT, SIG_IGN);   /* the parent decides */
    signal(SIGPIPE, SIG_DFL);
    for (size_t i = from; i < b->n_rows; i++) {
        if (!pending(&b->rows[i])) continue;
        record rec;
        memset(&rec, 0, sizeof rec);
        rec.index = i;
        mmp_bench_time_row(&rec.out, &b->rows[i], o);
        if (mmp_runner_write_all(fd, &rec, sizeof rec)) _exit(4);
        if (rec.out.state == MMP_BENCH_ERROR) _exit(3);   /* the context may be unusable: a fresh child goes on */
    }
    _exit(0);
}

/* Read one record: 1 read, 0 the child ended first, -1 past the deadline or stopped. */
static int read_record(record *rec, int fd, double deadline, volatile int *stop)
{
    size_t got = 0;
    while (got < sizeof *rec) {
        if (stop && *stop) return -1;
        double left = deadline - mmp_clock_now();
        if (left <= 0) return -1;
        struct pollfd p = {fd, POLLIN, 0};
        int ms = left > 0.25 ? 250 : (int)(left * 1000) + 1;
        int pr = poll(&p, 1, ms);
        if (pr < 0 && errno != EINTR) return 0;
        if (pr <= 0) continue;
        ssize_t n = read(fd, (char *)rec + got, sizeof *rec - got);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return 0;
        got += (size_t)n;
    }
    return 1;
}

static void end_child(pid_t pid, int *status)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
}

static void row_error(mmp_bench_row *r, const char *fmt, double x)
{
    r->out.state = MMP_BENCH_ERROR;
    snprintf(r->out.why, sizeof r->out.why, fmt, x);
}

mmp_status mmp_bench_time_rows(mmp_bench_run *b, const mmp_bench_options *o)
{
    size_t next = 0;
    while (next < b->n_rows) {
        while (next < b->n_rows && !pending(&b->rows[next])) next++;
        if (next >= b->n_rows) break;
        if (o->runner.stop && *o->runner.stop) {
            for (size_t i = next; i < b->n_rows; i++)
                if (pending(&b->rows[i])) snprintf(b->rows[i].out.why, sizeof b->rows[i].out.why, "not timed: interrupted");
            break;
        }
        int fds[2];
        if (pipe(fds) != 0) return MMP_ERR(MMP_STATUS_IO, "cannot start the timing process: pipe: %s", strerror(errno));
        int parent = (int)getpid();
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            int e = errno;
            close(fds[0]);
            close(fds[1]);
            return MMP_ERR(MMP_STATUS_NO_MEMORY, "cannot start the timing process: fork: %s", strerror(e));
        }
        if (pid == 0) {
            setpgid(0, 0);   /* the child and whatever its kernel starts: killed as one group */
            close(fds[0]);
            child_main(fds[1], parent, b, next, o);
        }
        setpgid(pid, pid);
        close(fds[1]);
        int ended = 0;
        while (next < b->n_rows && !ended) {
            while (next < b->n_rows && !pending(&b->rows[next])) next++;
            if (next >= b->n_rows) break;
            mmp_bench_row *r = &b->rows[next];
            if (o->progress) {
                fprintf(o->progress, "mmaprobe bench: timing %s %lldx%lldx%lld\n", r->kernel->name, (long long)r->m,
                        (long long)r->n, (long long)r->k);
                fflush(o->progress);
            }
            record rec;
            int got = read_record(&rec, fds[0], mmp_clock_now() + o->timeout_s, o->runner.stop);
            if (got == 1 && rec.index == next) {
                r->out = rec.out;
                if (rec.out.state == MMP_BENCH_ERROR) ended = 1;   /* the child exits after an error */
                next++;
                continue;
            }
            int status = 0;
            end_child(pid, &status);
            ended = 2;
            if (got == -1 && o->runner.stop && *o->runner.stop) {
                snprintf(r->out.why, sizeof r->out.why, "not timed: interrupted");
            } else if (got == -1) {
                row_error(r, "timing did not finish within %.0f s (--timeout)", o->timeout_s);
            } else if (got == 1) {
                row_error(r, "the timing process sent a record out of order (row %.0f)", (double)rec.index);
            } else if (WIFSIGNALED(status)) {
                row_error(r, "the timing process died of signal %.0f", (double)WTERMSIG(status));
            } else {
                row_error(r, "the timing process exited with status %.0f", (double)WEXITSTATUS(status));
            }
            next++;
        }
        if (ended != 2) {
            int status;
            end_child(pid, &status);
        }
        close(fds[0]);
    }
    return MMP_STATUS_OK;
}
