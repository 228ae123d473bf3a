/* runner_channel.c — the channel from a runner child (the process that runs a kernel's cases)
 * to the parent, both ends.
 *
 * The kernel runs in the child's process: it can write to the channel's descriptor, fork, or
 * scribble over memory. So every message is a frame the parent checks in full before it
 * believes a byte of it:
 *
 *   magic "MMPC" | type | sequence number | case index | payload length | sender's pid | check
 *   then, after MMP_RUNNER_MSG_RESULT, the mmp_case_result record
 *
 * check is a 64-bit FNV-1a over the child's nonce (64 random bits from the parent, never sent),
 * the header with check = 0 and the payload. Bytes written by the kernel, a message forged
 * without the nonce, a frame sent by another process (a kernel that forked: its pid differs),
 * a second writer (sequence numbers repeat) and two interleaved writes (the check fails) are
 * all protocol errors, and so is a result that is not one the case could have: another case,
 * an out-of-range verdict or reason, an unterminated string, a negative count, other m/n/k.
 * The decoder is a pure function of the bytes and the parent's expectations
 * (mmp_runner_channel_decode; tests/fuzz/fuzz_channel.c fuzzes it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner_internal.h"

/* ---- the frame ---- */
uint64_t mmp_runner_channel_check(uint64_t nonce, const void *frame, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    const unsigned char *nb = (const unsigned char *)&nonce, *p = frame;
    for (int i = 0; i < 8; i++) h = (h ^ nb[i]) * 1099511628211ull;
    for (size_t i = 0; i < len; i++) {
        /* the check field itself counts as zero */
        unsigned char b = i >= offsetof(mmp_runner_frame, check) &&
                                  i < offsetof(mmp_runner_frame, check) + sizeof(uint64_t)
                              ? 0 : p[i];
        h = (h ^ b) * 1099511628211ull;
    }
    for (int i = 0; i < 8; i++) h = (h ^ nb[7 - i]) * 1099511628211ull;
    return h;
}

size_t mmp_runner_channel_encode(void *buf, size_t size, uint64_t nonce, uint64_t seq, int32_t pid, uint32_t type,
                                 uint64_t index, const mmp_case_result *r)
{
    size_t payload = type == MMP_RUNNER_MSG_RESULT ? sizeof *r : 0;
    size_t total = sizeof(mmp_runner_frame) + payload;
    if (size < total || (payload && !r)) return 0;
    mmp_runner_frame h;
    memset(&h, 0, sizeof h);
    h.magic = MMP_RUNNER_MAGIC;
    h.type = type;
    h.seq = seq;
    h.index = index;
    h.length = (uint32_t)payload;
    h.pid = pid;
    unsigned char *b = buf;
    memcpy(b, &h, sizeof h);
    if (payload) memcpy(b + sizeof h, r, payload);
    h.check = mmp_runner_channel_check(nonce, b, total);
    memcpy(b + offsetof(mmp_runner_frame, check), &h.check, sizeof h.check);
    return total;
}

/* ---- the parent's end ---- */
void mmp_runner_rx_init(mmp_runner_rx *rx, uint64_t nonce, int32_t pid, const mmp_case *cases, size_t from, size_t to,
                        int32_t shard_index, int32_t shard_count)
{
    memset(rx, 0, offsetof(mmp_runner_rx, buf));
    rx->nonce = nonce;
    rx->pid = pid;
    rx->cases = cases;
    rx->next = from;
    rx->to = to;
    rx->phase = MMP_RUNNER_RX_IDLE;
    rx->shard_index = shard_index;
    rx->shard_count = shard_count;
}

static const char *type_name(uint32_t t)
{
    switch (t) {
    case MMP_RUNNER_MSG_START: return "start";
    case MMP_RUNNER_MSG_KERNEL: return "kernel";
    case MMP_RUNNER_MSG_KERNEL_DONE: return "kernel-done";
    case MMP_RUNNER_MSG_RESULT: return "result";
    default: return "?";
    }
}

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

/* A result record the case could have: NULL, or what is wrong with it. */
static const char *bad_result(const mmp_case_result *r, const mmp_case *c, const mmp_runner_rx *rx)
{
    if (!TERMINATED(r->id) || !TERMINATED(r->kernel) || !TERMINATED(r->family) || !TERMINATED(r->precision) ||
        !TERMINATED(r->dist) || !TERMINATED(r->suite) || !TERMINATED(r->message) || !TERMINATED(r->tolerance))
        return "a string field is not terminated";
    if (strcmp(r->id, c->id) != 0) return "the result is for another case ID";
    if (r->m != c->m || r->n != c->n || r->k != c->k || r->lda != c->lda || r->ldb != c->ldb || r->ldc != c->ldc ||
        r->ldd != c->ldd || r->seed != c->seed)
        return "the result's shape, leading dimensions or seed are not the case's";
    if ((unsigned)r->verdict >= MMP_VERDICT_COUNT_) return "verdict out of range";
    if (r->reasons & ~((1u << MMP_REASON_COUNT_) - 1u)) return "unknown reason bits";
    if (r->n_mpfr < 0 || r->n_exact < 0 || r->n_dot < 0 || r->n_unwritten < 0 || r->n_guard < 0 ||
        r->n_input_modified < 0 || r->n_nondet < 0)
        return "a negative count";
    const mmp_metrics *m = &r->metrics;
    if (m->count < 0 || m->nan_mismatch < 0 || m->inf_mismatch < 0 || m->above_det < 0 || m->above_prob < 0 ||
        m->above_tol < 0)
        return "a negative metrics count";
    if (m->heat_rows < 0 || m->heat_rows > MMP_HEAT_MAX || m->heat_cols < 0 || m->heat_cols > MMP_HEAT_MAX)
        return "heatmap size out of range";
    if (r->shard_index != rx->shard_index || r->shard_count != rx->shard_count) return "the result's shard is not the run's";
    return NULL;
}

mmp_status mmp_runner_channel_decode(mmp_runner_rx *rx, mmp_runner_event *ev, size_t *used, const void *bytes,
                                     size_t len)
{
    *used = 0;
    const unsigned char *b = bytes;
    const uint32_t magic = MMP_RUNNER_MAGIC;
    if (memcmp(b, &magic, len < 4 ? len : 4) != 0)
        return MMP_ERR(MMP_STATUS_PARSE, "protocol: bytes that are not a frame on the result channel "
                       "(written by the kernel?)");
    if (len < sizeof(mmp_runner_frame)) return MMP_STATUS_OK;
    mmp_runner_frame h;
    memcpy(&h, b, sizeof h);
    if (h.type < MMP_RUNNER_MSG_START || h.type > MMP_RUNNER_MSG_RESULT)
        return MMP_ERR(MMP_STATUS_PARSE, "protocol: unknown message type %u", h.type);
    size_t want = h.type == MMP_RUNNER_MSG_RESULT ? sizeof(mmp_case_result) : 0;
    if (h.length != want)
        return MMP_ERR(MMP_STATUS_PARSE, "protocol: %s message of %u payload bytes (want %zu)", type_name(h.type),
                       h.length, want);
    size_t total = sizeof h + want;
    if (len < total) return MMP_STATUS_OK;
    if (mmp_runner_channel_check(rx->nonce, b, total) != h.check)
        return MMP_ERR(MMP_STATUS_PARSE, "protocol: %s message with a bad check (forged, or two writers "
                       "interleaved)", type_name(h.type));
    if (h.pid != rx->pid)
        return MMP_ERR(MMP_STATUS_PARSE, "protocol: %s message from process %d, not the kernel's process %d "
                       "(the kernel forked?)", type_name(h.type), (int)h.pid, (int)rx->pid);
    if (h.seq != rx->seq)
        return MMP_ERR(MMP_STATUS_PARSE, "protocol: message %llu out of sequence (want %llu: a second writer?)",
                       (unsigned long long)h.seq, (unsigned long long)rx->seq);
    if (rx->next >= rx->to || h.index != rx->next)
        return MMP_ERR(MMP_STATUS_PARSE, "protocol: %s message for case index %llu, want %llu",
                       type_name(h.type), (unsigned long long)h.index, (unsigned long long)rx->next);
    int ok = h.type == MMP_RUNNER_MSG_START ? rx->phase == MMP_RUNNER_RX_IDLE
           : h.type == MMP_RUNNER_MSG_KERNEL ? rx->phase == MMP_RUNNER_RX_CASE
           : h.type == MMP_RUNNER_MSG_KERNEL_DONE ? rx->phase == MMP_RUNNER_RX_KERNEL
           : rx->phase != MMP_RUNNER_RX_IDLE;
    if (!ok) return MMP_ERR(MMP_STATUS_PARSE, "protocol: %s message out of order", type_name(h.type));
    ev->type = h.type;
    ev->index = h.index;
    if (h.type == MMP_RUNNER_MSG_RESULT) {
        memcpy(&ev->result, b + sizeof h, sizeof ev->result);
        const char *why = bad_result(&ev->result, &rx->cases[rx->next], rx);
        if (why) return MMP_ERR(MMP_STATUS_PARSE, "protocol: impossible result: %s", why);
    }
    rx->seq++;
    rx->phase = h.type == MMP_RUNNER_MSG_KERNEL ? MMP_RUNNER_RX_KERNEL
              : h.type == MMP_RUNNER_MSG_RESULT ? MMP_RUNNER_RX_IDLE : MMP_RUNNER_RX_CASE;
    if (h.type == MMP_RUNNER_MSG_RESULT) rx->next++;
    *used = total;
    return MMP_STATUS_OK;
}

size_t mmp_runner_rx_push(mmp_runner_rx *rx, const void *bytes, size_t n)
{
    size_t room = sizeof rx->buf - rx->have;
    if (n > room) n = room;
    memcpy(rx->buf + rx->have, bytes, n);
    rx->have += n;
    return n;
}

mmp_status mmp_runner_rx_next(mmp_runner_rx *rx, mmp_runner_event *ev, int *got)
{
    *got = 0;
    if (!rx->have) return MMP_STATUS_OK;
    size_t used;
    MMP_TRY(mmp_runner_channel_decode(rx, ev, &used, rx->buf, rx->have));
    if (!used) return MMP_STATUS_OK;
    memmove(rx->buf, rx->buf + used, rx->have - used);
    rx->have -= used;
    *got = 1;
    return MMP_STATUS_OK;
}

/* ---- the child's end ---- */
static int channel_fd = -1;
static uint64_t channel_nonce, channel_seq, channel_index;
static unsigned char channel_buf[MMP_RUNNER_FRAME_MAX];

int mmp_runner_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

void mmp_runner_channel_open(int fd, uint64_t nonce)
{
    channel_fd = fd;
    channel_nonce = nonce;
    channel_seq = 0;
}

int mmp_runner_channel_send(uint32_t type, uint64_t index, const mmp_case_result *r)
{
    channel_index = index;
    if (channel_fd < 0) return 0;
    size_t n = mmp_runner_channel_encode(channel_buf, sizeof channel_buf, channel_nonce, channel_seq++,
                                         (int32_t)getpid(), type, index, r);
    return n ? mmp_runner_write_all(channel_fd, channel_buf, n) : -1;
}

void mmp_runner_phase(int in_kernel)
{
    mmp_runner_channel_send(in_kernel ? MMP_RUNNER_MSG_KERNEL : MMP_RUNNER_MSG_KERNEL_DONE, channel_index, NULL);
}

/* ---- a runner child's descriptors ---- */
/* Close every descriptor >= 3 but keep[0], keep[1] (close_range where the kernel has it, else
 * the list in /proc/self/fd, else each number below the limit). */
static void close_except(int a, int b, int limit)
{
    if (a > b) { int t = a; a = b; b = t; }
#ifdef SYS_close_range
    int lo = 3, ok = 1;
    const int stops[2] = {a, b};
    for (int i = 0; i < 2 && ok; i++) {
        if (stops[i] < lo) continue;
        if (stops[i] > lo) ok = syscall(SYS_close_range, (unsigned)lo, (unsigned)stops[i] - 1, 0u) == 0;
        lo = stops[i] + 1;
    }
    if (ok && syscall(SYS_close_range, (unsigned)lo, ~0u, 0u) == 0) return;
#endif
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        int self = dirfd(d), fds[4096], n = 0, more = 0;
        for (struct dirent *e; (e = readdir(d));) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd < 3 || fd == a || fd == b || fd == self) continue;
            if (n < (int)(sizeof fds / sizeof fds[0])) fds[n++] = fd;
            else more = 1;
        }
        closedir(d);
        for (int i = 0; i < n; i++) close(fds[i]);
        if (!more) return;
    }
    for (int fd = 3; fd < limit; fd++)
        if (fd != a && fd != b) close(fd);
}

int mmp_runner_child_descriptors(int channel, int keep, uint64_t random)
{
    struct rlimit rl;
    rlim_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    if (lim == RLIM_INFINITY || lim > 65536) lim = 65536;
    int fd = channel;
    if (lim > 8) {
        rlim_t lo = lim / 2;
        int want = (int)(lo + random % (lim - 1 - lo));   /* in [lim/2, lim - 2] */
        int moved = fcntl(channel, F_DUPFD_CLOEXEC, want);
        if (moved >= 0) { close(channel); fd = moved; }
    }
    close_except(fd, keep, (int)lim);
    return fd;
}
