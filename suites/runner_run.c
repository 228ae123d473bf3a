/* runner_run.c — a list of cases, each kernel's cases in a forked child.
 *
 * The parent never touches CUDA. For each run of consecutive cases of one kernel it forks a
 * child that runs them in order and reports through a pipe in authenticated frames
 * (runner_channel.c): "case i starts", "kernel launch starts/ends", "result of case i" (the
 * mmp_case_result record). The parent enforces the per-case timeout on the kernel phase (and 30x
 * that on the whole case, for the reference), and turns a child that dies (signal, sanitizer
 * abort, exit after a sticky CUDA error), runs past its time or breaks the protocol (a frame it
 * would never send: written by the kernel, by a process the kernel forked, garbled) into an
 * ERROR for the case in flight, then forks a fresh child for the kernel's remaining cases. A
 * stop request (SIGINT/SIGTERM in the caller) kills the child and leaves the unfinished cases as
 * ERROR "interrupted".
 *
 * A child and everything its kernel starts form one process group, killed as a whole when the
 * child is done with, whatever the reason (its last result, a timeout, a protocol error, a
 * stop); the parent learns that a child ended from its exit status, never from the pipe's end
 * of file, which a process the kernel left behind can hold open. The parent reads without
 * blocking, so nothing a child does or fails to do can stall it past the timeouts or a stop.
 * A child keeps only descriptors 0-2, its channel (moved to a random high number) and its "go"
 * pipe: the parent's outputs (RUN.json.jsonl) are closed in it.
 *
 * Prefork (o->prefork, default): while one kernel's child runs, the next kernel's child is
 * already forked and creates its CUDA context (mmp_runner_warm_up), then waits for the parent to
 * close its "go" pipe. The context cost (tens to hundreds of ms per process) is thus paid off the
 * critical path; it is recorded as the child's first case's time_context_ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner_internal.h"
#include "mmaprobe/sysio.h"

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

/* 64 random bits per child (the channel's nonce); the clock and a counter where the kernel has
 * no getrandom. */
static uint64_t random_nonce(void)
{
    uint64_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v) return v;
    static uint64_t count;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return mmp_rng_u64((uint64_t)t.tv_sec, (uint64_t)t.tv_nsec, (uint64_t)getpid(), ++count);
}

/* The child: run cases [from, to) and report. Never returns. ctx_ms: its CUDA context's cost,
 * charged to its first case. */
static void child_main(int fd, uint64_t nonce, const mmp_case *cases, size_t from, size_t to,
                       const mmp_runner_options *o, double ctx_ms)
{
    signal(SIGINT, SIG_IGN);   /* the parent decides; it kills us on a stop request */
    signal(SIGTERM, SIG_DFL);
    mmp_runner_channel_open(fd, nonce);
    mmp_runner_options co = *o;
    co.progress = NULL;
    co.jsonl = NULL;
    for (size_t i = from; i < to; i++) {
        if (mmp_runner_channel_send(MMP_RUNNER_MSG_START, i, NULL)) _exit(4);
        mmp_case_result r;
        mmp_status st = mmp_runner_run_case(&r, &cases[i], &co);
        if (i == from) r.time_stage_ms[MMP_STAGE_CONTEXT] = ctx_ms;
        if (mmp_runner_channel_send(MMP_RUNNER_MSG_RESULT, i, &r)) _exit(4);
        if (st == MMP_STATUS_CUDA) _exit(3);   /* sticky CUDA error: a fresh process goes on */
    }
    _exit(0);
}

/* A forked child for cases [from, to): frames come on fd; it starts when go is closed. */
typedef struct {
    pid_t pid;                     /* 0: none */
    int fd, go;
    size_t from, to;
    uint64_t nonce;
} child;

static void child_close_fds(child *ch)
{
    if (ch->fd >= 0) close(ch->fd);
    if (ch->go >= 0) close(ch->go);
    ch->fd = ch->go = -1;
}

/* Out of descriptors or processes is the environment's limit (exit 3), not our bug. */
static mmp_status start_error(const char *what, int err, const mmp_case *c)
{
    mmp_status st = err == EMFILE || err == ENFILE ? MMP_STATUS_IO
                  : err == EAGAIN || err == ENOMEM ? MMP_STATUS_NO_MEMORY : MMP_STATUS_INTERNAL;
    return MMP_ERR(st, "cannot start the process for kernel %s: %s: %s", c->kernel->name ? c->kernel->name : "?",
                   what, strerror(err));
}

/* Fork a child for [from, to) that warms up, then waits for go. */
static mmp_status spawn(child *ch, const mmp_case *cases, size_t from, size_t to, const mmp_runner_options *o)
{
    int fds[2], gos[2];
    ch->pid = 0;
    ch->fd = ch->go = -1;
    if (pipe2(fds, O_CLOEXEC) != 0) return start_error("pipe", errno, &cases[from]);
    if (pipe2(gos, O_CLOEXEC) != 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return start_error("pipe", e, &cases[from]);
    }
    uint64_t nonce = random_nonce();
    fflush(NULL);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]); close(fds[1]); close(gos[0]); close(gos[1]);
        return start_error("fork", e, &cases[from]);
    }
    if (pid == 0) {
        setpgid(0, 0);   /* its own process group: what the kernel starts is killed with it */
        mmp_spawn_die_with_parent(parent);   /* and it never outlives mmaprobe (SIGKILL included) */
        int fd = mmp_runner_child_descriptors(fds[1], gos[0], nonce);
        double ctx = mmp_runner_warm_up(&cases[from], o);
        char b;
        ssize_t got;
        while ((got = read(gos[0], &b, 1)) < 0 && errno == EINTR) {}
        close(gos[0]);
        child_main(fd, nonce, cases, from, to, o, ctx);
    }
    setpgid(pid, pid);   /* also here: whichever runs first */
    close(fds[1]);
    close(gos[0]);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    ch->pid = pid;
    ch->fd = fds[0];
    ch->go = gos[1];
    ch->from = from;
    ch->to = to;
    ch->nonce = nonce;
    return MMP_STATUS_OK;
}

static void release(child *ch)
{
    if (ch->go >= 0) close(ch->go);   /* EOF: go */
    ch->go = -1;
}

/* The child and everything it started (its own process group) killed at once. Called before
 * the child is reaped, so the group's number cannot belong to anyone else yet. */
static void kill_group(pid_t pid)
{
    if (pid <= 0) return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

static int stopped(const mmp_runner_options *o) { return o->stop && *o->stop; }

/* Reap a killed child. A process that held a CUDA context and pinned memory can take seconds
 * to be torn down; a stop request does not wait for more than a fifth of a second (the child
 * is dead, the kernel reaps it when we exit). */
static int reap(pid_t pid, int *status, const mmp_runner_options *o)
{
    double stop_at = 0;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) return 1;
        if (r < 0 && errno != EINTR) return 0;
        if (stopped(o)) {
            if (!stop_at) stop_at = now_s() + 0.2;
            else if (now_s() > stop_at) return 0;
        }
        usleep(5000);
    }
}

/* Whether the child has ended (its status is kept for reap). */
static int has_exited(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

static void discard(child *ch, const mmp_runner_options *o)
{
    if (ch->pid <= 0) return;
    kill_group(ch->pid);
    int status;
    reap(ch->pid, &status, o);
    child_close_fds(ch);
    ch->pid = 0;
}

static void deliver(mmp_case_result *results, size_t i, const mmp_case_result *r, mmp_runner_result_fn cb, void *user)
{
    results[i] = *r;
    if (cb) cb(&results[i], i, user);
}

/* The end of the run of consecutive cases of cases[g0]'s kernel. */
static size_t group_end(const mmp_case *cases, size_t n, size_t g0)
{
    size_t g1 = g0 + 1;
    while (g1 < n && cases[g1].kernel == cases[g0].kernel) g1++;
    return g1;
}

/* Read what the child has sent (without blocking), up to a pass over what the pipe holds.
 * 1: read something, 0: nothing there, -1: end of file. */
static int receive(mmp_runner_rx *rx, int fd)
{
    int any = 0;
    for (;;) {
        unsigned char tmp[16384];
        size_t room = sizeof rx->buf - rx->have;
        if (!room) return 1;
        ssize_t r = read(fd, tmp, room < sizeof tmp ? room : sizeof tmp);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) return any ? 1 : -1;
        if (r < 0) return any;
        mmp_runner_rx_push(rx, tmp, (size_t)r);
        any = 1;
    }
}

/* Follow child ch until it has reported its last case or something ends it; results are
 * delivered as they come and *next advances. Returns 0 when the child is done or has exited by
 * itself (the caller reads why from its status), else the reason for the case in flight, with
 * the message in why. */
static uint32_t follow(child *ch, mmp_runner_rx *rx, size_t *next, mmp_case_result *results, const mmp_case *cases,
                       const mmp_runner_options *o, mmp_runner_result_fn on_result, void *user, char *why,
                       size_t why_size, double *elapsed_ms)
{
    mmp_runner_rx_init(rx, ch->nonce, (int32_t)ch->pid, cases, *next, ch->to, o->shard_index, o->shard_count);
    double timeout = o->timeout_s > 0 ? o->timeout_s : 60;
    double case_start = now_s(), kernel_start = 0;
    int in_kernel = 0, eof = 0, exited = 0;
    while (*next < ch->to) {
        if (stopped(o)) {
            snprintf(why, why_size, "interrupted");
            return MMP_REASON_INTERRUPTED;
        }
        double t = now_s();
        *elapsed_ms = (t - case_start) * 1e3;   /* the case in flight's time so far */
        if ((in_kernel && t - kernel_start > timeout) || t - case_start > 30 * timeout) {
            snprintf(why, why_size, "timeout: the case ran past %g s%s (child killed)", in_kernel ? timeout : 30 * timeout,
                     in_kernel ? " in the kernel" : "");
            return MMP_REASON_TIMEOUT;
        }
        /* checked before the last read: all it wrote before it ended is in the pipe then */
        exited = exited || has_exited(ch->pid);
        int got = 0;
        if (!eof) {
            struct pollfd p = {ch->fd, POLLIN, 0};
            int pr = poll(&p, 1, exited ? 0 : 100);
            if (pr > 0) {
                got = receive(rx, ch->fd);
                eof = got < 0;
            }
        } else if (!exited) {
            usleep(10000);   /* it closed its end: its exit status comes soon */
        }
        for (;;) {
            mmp_runner_event ev;
            int have;
            if (mmp_runner_rx_next(rx, &ev, &have) != MMP_STATUS_OK) {
                snprintf(why, why_size, "%s (the kernel's process group killed)", mmp_error_last());
                return MMP_REASON_PROTOCOL;
            }
            if (!have) break;
            if (ev.type == MMP_RUNNER_MSG_START) {
                case_start = now_s();
                in_kernel = 0;
            } else if (ev.type == MMP_RUNNER_MSG_KERNEL) {
                kernel_start = now_s();
                in_kernel = 1;
            } else if (ev.type == MMP_RUNNER_MSG_KERNEL_DONE) {
                in_kernel = 0;
            } else {
                deliver(results, *next, &ev.result, on_result, user);
                ++*next;
                in_kernel = 0;
                case_start = now_s();
            }
        }
        if (exited && got <= 0) break;   /* gone, and everything it sent is read */
    }
    return 0;
}

mmp_status mmp_runner_run(mmp_case_result *results, const mmp_case *cases, size_t n,
                          const mmp_runner_options *o, mmp_runner_result_fn on_result, void *user)
{
    for (size_t i = 0; i < n; i++)
        preset(&results[i], &cases[i], o, MMP_REASON_INTERRUPTED, "interrupted before this case finished");
    mmp_runner_rx *rx = o->isolate ? malloc(sizeof *rx) : NULL;
    if (o->isolate && !rx) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for the runner's channel");
    child waiting = {0, -1, -1, 0, 0, 0};   /* the preforked child of the next kernel */
    mmp_status st = MMP_STATUS_OK;
    size_t g0 = 0, next = 0;
    while (g0 < n && !stopped(o) && st == MMP_STATUS_OK) {
        size_t g1 = group_end(cases, n, g0);
        next = g0;
        while (next < g1 && !stopped(o)) {
            if (!o->isolate) {
                /* as in a child: the CUDA context is made before the first device case and
                 * charged to its context stage, not to its clock */
                static int warm;
                double ctx = warm ? 0.0 : mmp_runner_warm_up(&cases[next], o);
                warm = warm || ctx > 0.0;
                mmp_case_result r;
                mmp_runner_run_case(&r, &cases[next], o);
                r.time_stage_ms[MMP_STAGE_CONTEXT] += ctx;
                deliver(results, next, &r, on_result, user);
                next++;
                continue;
            }
            child cur;
            if (waiting.pid > 0 && waiting.from == next && waiting.to == g1) {
                cur = waiting;
                waiting.pid = 0;
                waiting.fd = waiting.go = -1;
            } else if ((st = spawn(&cur, cases, next, g1, o)) != MMP_STATUS_OK) {
                break;
            }
            release(&cur);
            /* the next kernel's child starts (and creates its context) while this one runs */
            if (o->prefork && waiting.pid == 0 && g1 < n && !stopped(o))
                spawn(&waiting, cases, g1, group_end(cases, n, g1), o);   /* failing: none waits */
            char buf[600];
            double elapsed_ms = 0;
            uint32_t reason = follow(&cur, rx, &next, results, cases, o, on_result, user, buf, sizeof buf, &elapsed_ms);
            kill_group(cur.pid);   /* done with, whatever the reason: grandchildren too */
            int status = 0;
            reap(cur.pid, &status, o);
            child_close_fds(&cur);
            if (next >= g1) break;
            if (!reason) {
                reason = MMP_REASON_CRASH;
                if (WIFSIGNALED(status))
                    snprintf(buf, sizeof buf, "crash: the kernel's process died of signal %d (%s)", WTERMSIG(status),
                             strsignal(WTERMSIG(status)));
                else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
                    snprintf(buf, sizeof buf, "cuda: sticky CUDA error, process restarted"), reason = MMP_REASON_CUDA;
                else
                    snprintf(buf, sizeof buf, "crash: the kernel's process exited with status %d without a result",
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            }
            if (reason == MMP_REASON_INTERRUPTED) break;
            mmp_case_result r;
            preset(&r, &cases[next], o, reason, buf);
            r.time_total_ms = elapsed_ms;   /* a timed-out case took that long (JUnit, the table) */
            deliver(results, next, &r, on_result, user);
            next++;
            if (reason == MMP_REASON_TIMEOUT && !o->after_timeout) {
                /* a hung kernel would hang again: its other cases are skipped, saying why */
                char msg[sizeof r.message];
                snprintf(msg, sizeof msg, "skipped: %.200s timed out (%.120s); --run-after-timeout runs the rest",
                         results[next - 1].id, buf);
                for (; next < g1; next++) {
                    preset(&r, &cases[next], o, 0, msg);
                    r.verdict = MMP_VERDICT_SKIP;
                    deliver(results, next, &r, on_result, user);
                }
            }
        }
        if (st == MMP_STATUS_OK) g0 = g1;
    }
    if (st != MMP_STATUS_OK) {
        /* the run cannot go on: the cases left say why they did not run */
        char msg[sizeof results[0].message];
        snprintf(msg, sizeof msg, "not run: %s", mmp_error_last());
        for (size_t i = next; i < n; i++) snprintf(results[i].message, sizeof results[i].message, "%s", msg);
    }
    discard(&waiting, o);
    free(rx);
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
