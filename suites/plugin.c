/* plugin.c — load kernels from a shared library (the plugin ABI of kernel.h).
 *
 * The library is first loaded in a forked child, which checks it and reports through a pipe:
 * a library whose constructors or mmp_plugin_kernels() crash takes the child down, not the run.
 * Then it is loaded here and checked again: the symbol, the ABI version, the count, every
 * descriptor's fields and a possible format combination. Any problem: MMP_STATUS_INVALID with a
 * one-line message (exit 2). A plugin still loading after $MMP_PLUGIN_LOAD_TIMEOUT seconds
 * (default 60) is killed and refused the same way. A library that loads in the child and crashes
 * only here (a constructor that behaves differently the second time) is caught too: the load
 * here runs under handlers of the crash signals that jump back out of it, and is refused with
 * "crashed while loading in-process". The loader is then in an unknown state, so the caller is
 * expected to end the program (it does: exit 2).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/runner.h"
#include "mmaprobe/sysio.h"

static int valid_name(const char *s)
{
    if (!s || !*s || strlen(s) > 63) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

static int is_int_format(int32_t f)
{
    const mmp_format_info *fi = mmp_format_get_info((mmp_format)f);
    return fi && !fi->is_float;
}

mmp_status mmp_plugin_check_desc(const mmp_kernel_desc *d)
{
    if (!d) return MMP_ERR(MMP_STATUS_INVALID, "NULL descriptor");
    if (d->abi_version != MMP_KERNEL_ABI_VERSION)
        return MMP_ERR(MMP_STATUS_INVALID, "descriptor ABI version %u, this mmaprobe speaks %u.%u", d->abi_version,
                       MMP_KERNEL_ABI_VERSION >> 16, MMP_KERNEL_ABI_VERSION & 0xffffu);
    if (!valid_name(d->name)) return MMP_ERR(MMP_STATUS_INVALID, "kernel name must be 1-63 of [a-z0-9_]");
    const int32_t f[5] = {d->a_format, d->b_format, d->c_format, d->d_format, d->acc_format};
    static const char *const what[5] = {"a_format", "b_format", "c_format", "d_format", "acc_format"};
    for (int i = 0; i < 5; i++)
        if (!mmp_format_get_info((mmp_format)f[i]))
            return MMP_ERR(MMP_STATUS_INVALID, "%s: %s %d out of range", d->name, what[i], (int)f[i]);
    if (d->mul_format != -1 && !mmp_format_get_info((mmp_format)d->mul_format))
        return MMP_ERR(MMP_STATUS_INVALID, "%s: mul_format %d out of range", d->name, (int)d->mul_format);
    if (d->acc_bits < 0 || d->acc_bits > 64) return MMP_ERR(MMP_STATUS_INVALID, "%s: acc_bits %d out of range", d->name, (int)d->acc_bits);
    const uint32_t masks[3] = {d->layouts_a, d->layouts_b, d->layouts_d};
    static const char *const mname[3] = {"layouts_a", "layouts_b", "layouts_d"};
    for (int i = 0; i < 3; i++) {
        if (masks[i] <= 1)   /* MMP_LAYOUT_ROW (0) or MMP_LAYOUT_COL (1) where a mask belongs */
            return MMP_ERR(MMP_STATUS_INVALID, "%s: %s = %u is a layout value (MMP_LAYOUT_%s), not a mask: use "
                           "MMP_LAYOUTS_ROW, MMP_LAYOUTS_COL or MMP_LAYOUTS_ANY", d->name, mname[i], masks[i],
                           masks[i] ? "COL" : "ROW");
        if (!(masks[i] & MMP_LAYOUTS_TAG) || (masks[i] & ~MMP_LAYOUTS_ANY) || !(masks[i] & 3u))
            return MMP_ERR(MMP_STATUS_INVALID, "%s: %s = %#x is not MMP_LAYOUTS_ROW, MMP_LAYOUTS_COL or MMP_LAYOUTS_ANY",
                           d->name, mname[i], masks[i]);
    }
    if (d->m_multiple < 1 || d->n_multiple < 1 || d->k_multiple < 1 || d->m_multiple > 4096 ||
        d->n_multiple > 4096 || d->k_multiple > 4096)
        return MMP_ERR(MMP_STATUS_INVALID, "%s: shape multiples must be in 1..4096", d->name);
    if (d->min_cc < 0 || d->min_cc > 200) return MMP_ERR(MMP_STATUS_INVALID, "%s: min_cc %d out of range", d->name, (int)d->min_cc);
    if ((d->reads_c & ~1) || (d->deterministic & ~1) || (d->arch_specific & ~1))
        return MMP_ERR(MMP_STATUS_INVALID, "%s: reads_c, deterministic, arch_specific must be 0 or 1", d->name);
    if (d->where != MMP_KERNEL_DEVICE && d->where != MMP_KERNEL_HOST)
        return MMP_ERR(MMP_STATUS_INVALID, "%s: where must be MMP_KERNEL_DEVICE or MMP_KERNEL_HOST", d->name);
    if (!d->run) return MMP_ERR(MMP_STATUS_INVALID, "%s: NULL entry point (run)", d->name);
    if ((unsigned)d->out_round > MMP_ROUND_DOWN || (d->flush_subnormals & ~1))
        return MMP_ERR(MMP_STATUS_INVALID, "%s: out_round must be an mmp_round, flush_subnormals 0 or 1", d->name);
    if (d->min_k < 0 || d->min_k > (1 << 30))
        return MMP_ERR(MMP_STATUS_INVALID, "%s: min_k %d out of range (0..2^30)", d->name, (int)d->min_k);
    if (d->ld_align_bytes < 0 || d->ld_align_bytes > 4096 || (d->ld_align_bytes & (d->ld_align_bytes - 1)))
        return MMP_ERR(MMP_STATUS_INVALID, "%s: ld_align_bytes %d must be 0 or a power of two up to 4096", d->name,
                       (int)d->ld_align_bytes);
    if (d->tight_d & ~1) return MMP_ERR(MMP_STATUS_INVALID, "%s: tight_d must be 0 or 1", d->name);
    /* impossible combinations */
    int ia = is_int_format(d->a_format), ib = is_int_format(d->b_format), iacc = is_int_format(d->acc_format);
    if (ia != ib) return MMP_ERR(MMP_STATUS_INVALID, "%s: A and B must both be integer or both float", d->name);
    if (ia != iacc)
        return MMP_ERR(MMP_STATUS_INVALID, "%s: %s inputs with a %s accumulator is not a supported combination",
                       d->name, mmp_format_name((mmp_format)d->a_format), mmp_format_name((mmp_format)d->acc_format));
    if (iacc && d->acc_format != MMP_FORMAT_INT32)
        return MMP_ERR(MMP_STATUS_INVALID, "%s: integer accumulators must be int32", d->name);
    if (iacc && !is_int_format(d->d_format))
        return MMP_ERR(MMP_STATUS_INVALID, "%s: int32 accumulation with %s output is not supported", d->name,
                       mmp_format_name((mmp_format)d->d_format));
    if (!iacc && is_int_format(d->d_format))
        return MMP_ERR(MMP_STATUS_INVALID, "%s: float accumulation with integer output is not supported", d->name);
    return MMP_STATUS_OK;
}

/* Load and check in this process; message into the error slot. */
static mmp_status load_here(const mmp_kernel_desc **kernels, size_t *count, const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: cannot load: %s", path, dlerror());
    mmp_plugin_kernels_fn fn;
    *(void **)&fn = dlsym(h, MMP_PLUGIN_SYMBOL);
    if (!fn) return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: no symbol %s", path, MMP_PLUGIN_SYMBOL);
    uint32_t n = 0, v = 0;
    const mmp_kernel_desc *k = fn(&n, &v);
    if (v != MMP_KERNEL_ABI_VERSION && v != MMP_KERNEL_ABI_VERSION_1_2 && v != MMP_KERNEL_ABI_VERSION_1_1 &&
        v != MMP_KERNEL_ABI_VERSION_1_0)
        return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: ABI version %u, this mmaprobe speaks %u.%u (and 1.2, 1.1, and 1.0 reported as 1)",
                       path, v, MMP_KERNEL_ABI_VERSION >> 16, MMP_KERNEL_ABI_VERSION & 0xffffu);
    if (!k || n == 0 || n > 1024)
        return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: %s", path, !k ? "NULL kernel table" : "kernel count must be 1..1024");
    if (v != MMP_KERNEL_ABI_VERSION) {
        /* an older table: copied into current rows (older rows are shorter: the appended fields
         * 0, i.e. nearest output rounding, subnormals kept, no constraints, no launch_status),
         * the untagged masks of 1.0 and 1.1 (1 row, 2 col, 3 any) tagged. Kept for the process's
         * life, as the library is. */
        const size_t row = v == MMP_KERNEL_ABI_VERSION_1_0 ? MMP_KERNEL_DESC_SIZE_1_0 : MMP_KERNEL_DESC_SIZE_1_2;
        mmp_kernel_desc *cp = calloc(n, sizeof *cp);
        if (!cp) return MMP_ERR(MMP_STATUS_NO_MEMORY, "plugin %s: out of memory", path);
        for (uint32_t i = 0; i < n; i++) {
            memcpy(&cp[i], (const char *)k + (size_t)i * row, row);
            if (cp[i].abi_version == v) cp[i].abi_version = MMP_KERNEL_ABI_VERSION;
            uint32_t *m[3] = {&cp[i].layouts_a, &cp[i].layouts_b, &cp[i].layouts_d};
            for (int j = 0; j < 3 && v != MMP_KERNEL_ABI_VERSION_1_2; j++)
                if (*m[j] >= 1 && *m[j] <= 3) *m[j] |= MMP_LAYOUTS_TAG;
        }
        k = cp;
    }
    for (uint32_t i = 0; i < n; i++)
        if (mmp_plugin_check_desc(&k[i]) != MMP_STATUS_OK) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s", mmp_error_last());
            return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: kernel %u: %s", path, i, msg);
        }
    *kernels = k;
    *count = n;
    return MMP_STATUS_OK;
}

/* Seconds a plugin may take to load and list its kernels ($MMP_PLUGIN_LOAD_TIMEOUT, default 60). */
static double load_timeout_s(void)
{
    const char *e = getenv("MMP_PLUGIN_LOAD_TIMEOUT");
    char *end;
    double t = e && *e ? strtod(e, &end) : 60;
    return e && *e && (*end || !(t > 0) || t > 3600) ? 60 : t;
}

/* ---- the load in this process, under crash handlers ---- */
static sigjmp_buf load_jump;
static volatile sig_atomic_t load_signal;
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
enum { N_CRASH = sizeof crash_signals / sizeof crash_signals[0] };

static struct sigaction load_old[N_CRASH];   /* static: kept across the jump */

static void on_crash(int sig)
{
    load_signal = sig;
    siglongjmp(load_jump, 1);
}

static mmp_status load_guarded(const mmp_kernel_desc **kernels, size_t *count, const char *path)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    load_signal = 0;
    fflush(NULL);   /* what was printed so far is out, whatever happens next */
    if (sigsetjmp(load_jump, 1) == 0) {
        for (int i = 0; i < N_CRASH; i++) sigaction(crash_signals[i], &sa, &load_old[i]);
        mmp_status st = load_here(kernels, count, path);
        for (int i = 0; i < N_CRASH; i++) sigaction(crash_signals[i], &load_old[i], NULL);
        return st;
    }
    for (int i = 0; i < N_CRASH; i++) sigaction(crash_signals[i], &load_old[i], NULL);
    *kernels = NULL;
    *count = 0;
    int sig = load_signal;
    return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: crashed while loading in-process (signal %d, %s; it had loaded "
                   "cleanly in the checking process)", path, sig, strsignal(sig));
}

mmp_status mmp_plugin_load(const mmp_kernel_desc **kernels, size_t *count, const char *path)
{
    *kernels = NULL;
    *count = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)   /* out of descriptors: the environment's limit, exit 3 */
        return MMP_ERR(errno == EMFILE || errno == ENFILE ? MMP_STATUS_IO : MMP_STATUS_INTERNAL,
                       "plugin %s: cannot check it: pipe: %s", path, strerror(errno));
    fflush(NULL);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return MMP_ERR(e == EAGAIN || e == ENOMEM ? MMP_STATUS_NO_MEMORY : MMP_STATUS_INTERNAL,
                       "plugin %s: cannot check it: fork: %s", path, strerror(e));
    }
    if (pid == 0) {
        mmp_spawn_die_with_parent(parent);
        close(fds[0]);
        const mmp_kernel_desc *k;
        size_t n;
        char msg[512] = "";
        if (load_here(&k, &n, path) != MMP_STATUS_OK) snprintf(msg, sizeof msg, "%s", mmp_error_last());
        ssize_t w = write(fds[1], msg, strlen(msg) + 1);
        _exit(w > 0 ? 0 : 1);
    }
    close(fds[1]);
    char msg[512] = "";
    size_t have = 0;
    double timeout = load_timeout_s();
    int timed_out = 0;
    for (double waited = 0;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int pr = poll(&p, 1, 100);
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) {
            if ((waited += 0.1) > timeout) { timed_out = 1; kill(pid, SIGKILL); break; }
            continue;
        }
        ssize_t r = read(fds[0], msg + have, sizeof msg - 1 - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        have += (size_t)r;
        if (have == sizeof msg - 1) break;
    }
    msg[have] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (timed_out)
        return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: still loading after %g s (a constructor or %s hangs; "
                       "MMP_PLUGIN_LOAD_TIMEOUT sets the limit)", path, timeout, MMP_PLUGIN_SYMBOL);
    if (WIFSIGNALED(status))
        return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: crashed while loading (signal %d, %s)", path, WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
    if (!have || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return MMP_ERR(MMP_STATUS_INVALID, "plugin %s: the loading process failed without a message", path);
    if (msg[0]) return MMP_ERR(MMP_STATUS_INVALID, "%s", msg);
    return load_guarded(kernels, count, path);
}
