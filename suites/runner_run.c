/* runner_run.c — a list of cases, each kernel's cases in a forked child.
 *
 * The parent never touches CUDA. For each run of consecutive cases of one kernel it forks a
 * child that runs them in order and streams fixed-size messages back through a pipe
 * (runner_common.c): "case i
 * starts", "kernel launch starts/ends", "result of case i" (the mmp_case_result struct). The
 * parent enforces the per-case timeout on the kernel phase (and 30x that on the whole case, for
 * the reference), and turns a child that dies (signal, sanitizer abort, exit after a sticky CUDA
 * error) or runs past its time into an ERROR for the case in flight, then forks a fresh child
 * for the kernel's remaining cases. A stop request (SIGINT/SIGTERM in the caller) kills the
 * child and leaves the unfinished cases as ERROR "interrupted".
 *
 * Prefork (o->prefork, default): while one kernel's child runs, the next kernel's child is
 * already forked and creates its CUDA context (mmp_runner_warm_up), then waits for the parent to
 * close its "go" pipe. The context cost (tens to hundreds of ms per process) is thus paid off the
 * critical path; it is recorded as the child's first case's time_context_ms. A child forked
 * later closes the waiting child's descriptors, so closing "go" in the parent is always seen.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner_internal.h"


static int read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void preset(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o, uint32_t reason,
                   const char *msg)
{
    mmp_runner_result_for_case(r, c, o);
    r->verdict = MMP_VERDICT_ERROR;
    r->reasons = reason;
    snprintf(r->message, sizeof r->message, "%s", msg);
}

/* The child: run cases [from, to) and report. Never returns. ctx_ms: its CUDA context's cost,
 * charged to its first case. */
static void child_main(int fd, const mmp_case *cases, size_t from, size_t to, const mmp_runner_options *o,
                       double ctx_ms)
{
    signal(SIGINT, SIG_IGN);   /* the parent decides; it kills us on a stop request */
    signal(SIGTERM, SIG_DFL);
    mmp_runner_channel_open(fd);
    mmp_runner_options co = *o;
    co.progress = NULL;
    co.jsonl = NULL;
    for (size_t i = from; i < to; i++) {
        mmp_runner_channel_send(MMP_RUNNER_MSG_START, i);
        mmp_case_result r;
        mmp_status st = mmp_runner_run_case(&r, &cases[i], &co);
        if (i == from) r.time_stage_ms[MMP_STAGE_CONTEXT] = ctx_ms;
        mmp_runner_msg h = {MMP_RUNNER_MSG_RESULT, 0, i};
        if (mmp_runner_write_all(fd, &h, sizeof h) || mmp_runner_write_all(fd, &r, sizeof r)) _exit(4);
        if (st == MMP_STATUS_CUDA) _exit(3);   /* sticky CUDA error: a fresh process goes on */
    }
    _exit(0);
}

/* A forked child for cases [from, to): results come on fd; it starts when go is closed. */
typedef struct {
    pid_t pid;                     /* 0: none */
    int fd, go;
    size_t from, to;
} child;

static void child_close_fds(child *ch)
{
    if (ch->fd >= 0) close(ch->fd);
    if (ch->go >= 0) close(ch->go);
    ch->fd = ch->go = -1;
}

/* Fork a child for [from, to) that warms up, then waits for go. `other`: a waiting child whose
 * descriptors the new process must not keep. */
static mmp_status spawn(child *ch, const mmp_case *cases, size_t from, size_t to, const mmp_runner_options *o,
                        child *other)
{
    int fds[2], gos[2];
    ch->pid = 0;
    ch->fd = ch->go = -1;
    if (pipe(fds) != 0) return MMP_ERR(MMP_STATUS_INTERNAL, "pipe: %s", strerror(errno));
    if (pipe(gos) != 0) {
        close(fds[0]);
        close(fds[1]);
        return MMP_ERR(MMP_STATUS_INTERNAL, "pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]); close(fds[1]); close(gos[0]); close(gos[1]);
        return MMP_ERR(MMP_STATUS_INTERNAL, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);   /* its own process group: a timeout or a stop kills what it started too */
        close(fds[0]);
        close(gos[1]);
        if (other && other->pid > 0) child_close_fds(other);
        double ctx = mmp_runner_warm_up(&cases[from], o);
        char b;
        ssize_t got;
        while ((got = read(gos[0], &b, 1)) < 0 && errno == EINTR) {}
        close(gos[0]);
        child_main(fds[1], cases, from, to, o, ctx);
    }
    setpgid(pid, pid);   /* also here: whichever runs first */
    close(fds[1]);
    close(gos[0]);
    ch->pid = pid;
    ch->fd = fds[0];
    ch->go = gos[1];
    ch->from = from;
    ch->to = to;
    return MMP_STATUS_OK;
}

static void release(child *ch)
{
    if (ch->go >= 0) close(ch->go);   /* EOF: go */
    ch->go = -1;
}

/* The child and everything it started (its own process group) killed at once. */
static void kill_group(pid_t pid)
{
    if (pid <= 0) return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

/* Reap a killed child. prompt: wait at most a fifth of a second (a process that held a CUDA
 * context and pinned memory can take seconds to be torn down; on a stop request the partial
 * report must not wait for that: the child is dead, the kernel reaps it when we exit). */
static int reap(pid_t pid, int *status, int prompt)
{
    for (int tries = 0;; tries++) {
        pid_t r = waitpid(pid, status, prompt ? WNOHANG : 0);
        if (r == pid) return 1;
        if (r < 0 && errno != EINTR) return 0;
        if (prompt) {
            if (tries >= 20) return 0;
            usleep(10000);
        }
    }
}

static void discard(child *ch, int prompt)
{
    if (ch->pid <= 0) return;
    kill_group(ch->pid);
    int status;
    reap(ch->pid, &status, prompt);
    child_close_fds(ch);
    ch->pid = 0;
}

static void deliver(mmp_case_result *results, size_t i, const mmp_case_result *r, mmp_runner_result_fn cb, void *user)
{
    results[i] = *r;
    if (cb) cb(&results[i], i, user);
}

static int stopped(const mmp_runner_options *o) { return o->stop && *o->stop; }

/* The end of the run of consecutive cases of cases[g0]'s kernel. */
static size_t group_end(const mmp_case *cases, size_t n, size_t g0)
{
    size_t g1 = g0 + 1;
    while (g1 < n && cases[g1].kernel == cases[g0].kernel) g1++;
    return g1;
}

mmp_status mmp_runner_run(mmp_case_result *results, const mmp_case *cases, size_t n,
                          const mmp_runner_options *o, mmp_runner_result_fn on_result, void *user)
{
    for (size_t i = 0; i < n; i++)
        preset(&results[i], &cases[i], o, MMP_REASON_INTERRUPTED, "interrupted before this case finished");
    child waiting = {0, -1, -1, 0, 0};   /* the preforked child of the next kernel */
    mmp_status st = MMP_STATUS_OK;
    size_t g0 = 0;
    while (g0 < n && !stopped(o) && st == MMP_STATUS_OK) {
        size_t g1 = group_end(cases, n, g0);
        size_t next = g0;
        while (next < g1 && !stopped(o)) {
            if (!o->isolate) {
                mmp_case_result r;
                mmp_runner_run_case(&r, &cases[next], o);
                deliver(results, next, &r, on_result, user);
                next++;
                continue;
            }
            child cur;
            if (waiting.pid > 0 && waiting.from == next && waiting.to == g1) {
                cur = waiting;
                waiting.pid = 0;
                waiting.fd = waiting.go = -1;
            } else if ((st = spawn(&cur, cases, next, g1, o, &waiting)) != MMP_STATUS_OK) {
                break;
            }
            release(&cur);
            /* the next kernel's child starts (and creates its context) while this one runs */
            if (o->prefork && waiting.pid == 0 && g1 < n && !stopped(o))
                spawn(&waiting, cases, g1, group_end(cases, n, g1), o, NULL);   /* failing: none waits */
            double timeout = o->timeout_s > 0 ? o->timeout_s : 60;
            double case_start = now_s(), kernel_start = 0;
            int in_kernel = 0, ended = 0;
            const char *why = NULL;
            uint32_t reason = 0;
            char buf[200];
            while (!ended) {
                if (stopped(o)) { why = "interrupted"; reason = MMP_REASON_INTERRUPTED; break; }
                double t = now_s();
                if ((in_kernel && t - kernel_start > timeout) || t - case_start > 30 * timeout) {
                    snprintf(buf, sizeof buf, "timeout: the case ran past %g s%s (child killed)",
                             in_kernel ? timeout : 30 * timeout, in_kernel ? " in the kernel" : "");
                    why = buf;
                    reason = MMP_REASON_TIMEOUT;
                    break;
                }
                struct pollfd p = {cur.fd, POLLIN, 0};
                int pr = poll(&p, 1, 100);
                if (pr < 0 && errno == EINTR) continue;
                if (pr <= 0) continue;
                mmp_runner_msg h;
                if (read_all(cur.fd, &h, sizeof h)) { ended = 1; break; }
                if (h.type == MMP_RUNNER_MSG_START) { case_start = now_s(); in_kernel = 0; }
                else if (h.type == MMP_RUNNER_MSG_KERNEL) { kernel_start = now_s(); in_kernel = 1; }
                else if (h.type == MMP_RUNNER_MSG_KERNEL_DONE) in_kernel = 0;
                else if (h.type == MMP_RUNNER_MSG_RESULT) {
                    mmp_case_result r;
                    if (read_all(cur.fd, &r, sizeof r) || h.index != next) { ended = 1; break; }
                    deliver(results, next, &r, on_result, user);
                    next++;
                    in_kernel = 0;
                    case_start = now_s();
                }
            }
            int status = 0;
            if (!ended) kill_group(cur.pid);
            reap(cur.pid, &status, stopped(o));
            child_close_fds(&cur);
            if (next >= g1) break;
            if (!why) {
                reason = MMP_REASON_CRASH;
                if (WIFSIGNALED(status))
                    snprintf(buf, sizeof buf, "crash: the kernel's process died of signal %d (%s)", WTERMSIG(status),
                             strsignal(WTERMSIG(status)));
                else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
                    snprintf(buf, sizeof buf, "cuda: sticky CUDA error, process restarted"), reason = MMP_REASON_CUDA;
                else
                    snprintf(buf, sizeof buf, "crash: the kernel's process exited with status %d without a result",
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                why = buf;
            }
            if (reason == MMP_REASON_INTERRUPTED) break;
            mmp_case_result r;
            preset(&r, &cases[next], o, reason, why);
            deliver(results, next, &r, on_result, user);
            next++;
        }
        g0 = g1;
    }
    discard(&waiting, stopped(o));
    return st;
}

void mmp_runner_options_init(mmp_runner_options *o)
{
    memset(o, 0, sizeof *o);
    mmp_tolerance_init(&o->tol);
    o->timeout_s = 60;
    o->isolate = 1;
    o->prefork = 1;
    o->device = 0;
    o->shard_index = 0;
    o->shard_count = 1;
    o->have_device = -1;
    o->host_max_log2_work = 30;
}
