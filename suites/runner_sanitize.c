/* runner_sanitize.c — re-run a case under NVIDIA compute-sanitizer and read its summary.
 *
 *   compute-sanitizer --tool memcheck --error-exitcode 99 <self> validate --filter <id>
 *                     --no-isolate -o <tmp>/run.json [--suite ...] [--seed ...] [...]
 *
 * The tool's lines start with "========= ". Its verdict is the last summary line:
 *   memcheck, initcheck, synccheck:  "========= ERROR SUMMARY: 3 errors"
 *   racecheck:                       "========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)"
 * (racecheck counts warnings apart; only errors are findings). The first error is the first
 * tool line after the banner that is neither indented detail, blank, a summary, a racecheck
 * "Warning:" (real H200 output lists warnings first) nor the tool's "Target application
 * returned an error" note; a warning stands in only when no error line exists. No summary
 * at all (the tool did not start, or was killed) is "not run", never a clean pass.
 * compute-sanitizer is found through $MMP_COMPUTE_SANITIZER, then $PATH, then
 * $CUDA_HOME/bin and /usr/local/cuda/bin.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mmaprobe/runner.h"
#include "mmaprobe/sysio.h"

#define PREFIX "========="

static const char *skip_prefix(const char *line, size_t len, size_t *rest)
{
    size_t pl = sizeof PREFIX - 1;
    if (len < pl || memcmp(line, PREFIX, pl)) return NULL;
    *rest = len - pl;
    return line + pl;
}

/* Integer right after text (skipping spaces); -1 if none. */
static long long number_after(const char *s, size_t len, const char *text)
{
    size_t tl = strlen(text);
    for (size_t i = 0; i + tl <= len; i++)
        if (!memcmp(s + i, text, tl)) {
            size_t p = i + tl;
            while (p < len && s[p] == ' ') p++;
            if (p == len || s[p] < '0' || s[p] > '9') return -1;
            long long v = 0;
            while (p < len && s[p] >= '0' && s[p] <= '9' && v < (1LL << 50)) v = v * 10 + (s[p++] - '0');
            return v;
        }
    return -1;
}

static int contains(const char *s, size_t len, const char *text)
{
    size_t tl = strlen(text);
    for (size_t i = 0; i + tl <= len; i++)
        if (!memcmp(s + i, text, tl)) return 1;
    return 0;
}

mmp_status mmp_sanitizer_parse(mmp_sanitizer_summary *s, const char *text, size_t len)
{
    memset(s, 0, sizeof *s);
    s->errors = -1;
    char warn[sizeof s->first] = "";
    size_t pos = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        const char *line = text + pos;
        size_t ll = end - pos, rl;
        pos = end + 1;
        if (ll && line[ll - 1] == '\r') ll--;
        const char *r = skip_prefix(line, ll, &rl);
        if (!r) continue;
        /* r: " ERROR SUMMARY: 3 errors" / "     at 0x..." (detail) / " Invalid __global__ ..." */
        if (rl == 0 || r[0] != ' ') continue;
        if (contains(r, rl, "ERROR SUMMARY:")) {
            long long n = number_after(r, rl, "ERROR SUMMARY:");
            if (n >= 0) { s->errors = n; s->have_summary = 1; }
            continue;
        }
        if (contains(r, rl, "RACECHECK SUMMARY:")) {
            long long e = number_after(r, rl, "(");   /* "(1 error, 0 warnings)" */
            long long h = number_after(r, rl, "RACECHECK SUMMARY:");
            if (e < 0 && h >= 0) e = h;
            if (e >= 0) { s->errors = e; s->have_summary = 1; }
            continue;
        }
        if (contains(r, rl, "LEAK SUMMARY:") || contains(r, rl, "COMPUTE-SANITIZER")) continue;
        size_t sp = 0;
        while (sp < rl && r[sp] == ' ') sp++;
        if (sp == rl || sp > 1) continue;            /* blank, or indented detail of an error */
        if (contains(r, rl, "Target application returned an error")) continue;
        int is_warn = rl - sp >= 8 && !memcmp(r + sp, "Warning:", 8);
        char *dst = is_warn ? warn : s->first;
        if (!dst[0]) {
            size_t n = rl - sp < sizeof s->first - 1 ? rl - sp : sizeof s->first - 1;
            memcpy(dst, r + sp, n);
            dst[n] = '\0';
            for (char *c = dst; *c; c++)
                if ((unsigned char)*c < 0x20) *c = ' ';
        }
    }
    if (!s->first[0]) memcpy(s->first, warn, sizeof warn);
    if (!s->have_summary) return MMP_ERR(MMP_STATUS_PARSE, "no compute-sanitizer summary line in its output");
    if (s->errors == 0) s->first[0] = '\0';           /* lines before a clean summary are notes */
    return MMP_STATUS_OK;
}

static int executable(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

mmp_status mmp_sanitizer_find(char *path, size_t size)
{
    const char *env = getenv("MMP_COMPUTE_SANITIZER");
    if (env && *env) {
        if (!executable(env))
            return MMP_ERR(MMP_STATUS_NO_DEVICE, "MMP_COMPUTE_SANITIZER=%s is not an executable file", env);
        snprintf(path, size, "%s", env);
        return MMP_STATUS_OK;
    }
    const char *pathvar = getenv("PATH");
    char cand[4096];
    for (const char *p = pathvar ? pathvar : ""; *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n && n < sizeof cand - 32) {
            snprintf(cand, sizeof cand, "%.*s/compute-sanitizer", (int)n, p);
            if (executable(cand)) { snprintf(path, size, "%s", cand); return MMP_STATUS_OK; }
        }
        p += n + (e ? 1 : 0);
        if (!e) break;
    }
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(cand, sizeof cand, "%s/bin/compute-sanitizer", home);
        if (executable(cand)) { snprintf(path, size, "%s", cand); return MMP_STATUS_OK; }
    }
    if (executable("/usr/local/cuda/bin/compute-sanitizer")) {
        snprintf(path, size, "/usr/local/cuda/bin/compute-sanitizer");
        return MMP_STATUS_OK;
    }
    return MMP_ERR(MMP_STATUS_NO_DEVICE,
                   "compute-sanitizer not found (looked in $MMP_COMPUTE_SANITIZER, $PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)");
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Run argv, collecting stdout+stderr (up to max bytes kept, the tail wins) with a timeout. */
static mmp_status run_capture(char **out, size_t *out_len, int *status, char *const *argv, double timeout_s)
{
    enum { MAX = 1 << 20 };
    int fds[2];
    if (pipe(fds) != 0) return MMP_ERR(MMP_STATUS_INTERNAL, "pipe: %s", strerror(errno));
    fflush(NULL);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) { close(fds[0]); close(fds[1]); return MMP_ERR(MMP_STATUS_INTERNAL, "fork: %s", strerror(errno)); }
    if (pid == 0) {
        mmp_spawn_die_with_parent(parent);   /* the sanitizer (and the run under it) dies with mmaprobe */
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        signal(SIGINT, SIG_IGN);
        execv(argv[0], argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    char *buf = malloc(MAX + 1);
    size_t n = 0;
    double t0 = now_s();
    int killed = 0;
    if (!buf) { kill(pid, SIGKILL); }
    for (; buf;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int pr = poll(&p, 1, 200);
        if (now_s() - t0 > timeout_s) { kill(pid, SIGKILL); killed = 1; break; }
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        char chunk[4096];
        ssize_t r = read(fds[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        if (n + (size_t)r > MAX) {             /* keep the tail: the summary is at the end */
            size_t drop = n + (size_t)r - MAX;
            memmove(buf, buf + drop, n - drop);
            n -= drop;
        }
        memcpy(buf + n, chunk, (size_t)r);
        n += (size_t)r;
    }
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    *status = st;
    if (!buf) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    if (killed) return MMP_ERR(MMP_STATUS_KERNEL, "killed after %g s", timeout_s);
    return MMP_STATUS_OK;
}

mmp_status mmp_runner_sanitize_case(int *finding, char *msg, size_t msg_size, const char *tool,
                                    const char *self_exe, const char *case_id,
                                    char *const *extra_args, double timeout_s)
{
    *finding = 0;
    msg[0] = '\0';
    char tool_path[4096];
    MMP_TRY(mmp_sanitizer_find(tool_path, sizeof tool_path));
    char dir[] = "/tmp/mmaprobe-sanitize.XXXXXX";
    if (!mkdtemp(dir)) return MMP_ERR(MMP_STATUS_IO, "cannot make a temporary directory: %s", strerror(errno));
    char json[64], filter[600];
    snprintf(json, sizeof json, "%s/run.json", dir);
    /* the ID as a glob matching itself: escape the glob's special characters */
    size_t f = 0;
    for (const char *c = case_id; *c && f + 3 < sizeof filter; c++) {
        if (strchr("*?[]\\", *c)) filter[f++] = '\\';
        filter[f++] = *c;
    }
    filter[f] = '\0';
    char *argv[64];
    int a = 0;
    argv[a++] = tool_path;
    argv[a++] = "--tool";
    argv[a++] = (char *)tool;
    argv[a++] = "--error-exitcode";
    argv[a++] = "99";
    argv[a++] = (char *)self_exe;
    argv[a++] = "validate";
    argv[a++] = "--no-isolate";
    argv[a++] = "--filter";
    argv[a++] = filter;
    argv[a++] = "-o";
    argv[a++] = json;
    for (int i = 0; extra_args && extra_args[i] && a < 63; i++) argv[a++] = extra_args[i];
    argv[a] = NULL;
    char *out = NULL;
    size_t len = 0;
    int status = 0;
    mmp_status st = run_capture(&out, &len, &status, argv, timeout_s);
    char jl[80];
    snprintf(jl, sizeof jl, "%s.jsonl", json);
    unlink(json);
    unlink(jl);
    rmdir(dir);
    if (st != MMP_STATUS_OK) {
        free(out);
        char why[200];
        snprintf(why, sizeof why, "%s", mmp_error_last());
        return MMP_ERR(MMP_STATUS_KERNEL, "%s: %s", tool, why);
    }
    mmp_sanitizer_summary s;
    st = mmp_sanitizer_parse(&s, out, len);
    if (st != MMP_STATUS_OK) {
        /* the last non-empty line says why (e.g. "cannot run ..." or the tool's own error) */
        size_t e = len;
        while (e && (out[e - 1] == '\n' || out[e - 1] == '\r' || out[e - 1] == ' ')) e--;
        size_t b = e;
        while (b && out[b - 1] != '\n') b--;
        st = MMP_ERR(MMP_STATUS_KERNEL, "%s: no summary in its output (exit %d)%s%.*s", tool,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1, e > b ? ": " : "",
                     (int)(e - b > 160 ? 160 : e - b), out + b);
        free(out);
        return st;
    }
    free(out);
    if (s.errors > 0) {
        *finding = 1;
        snprintf(msg, msg_size, "%s: %lld error%s; first: %s", tool, s.errors, s.errors == 1 ? "" : "s",
                 s.first[0] ? s.first : "(no error line)");
    } else {
        snprintf(msg, msg_size, "%s: clean (0 errors)", tool);
    }
    return MMP_STATUS_OK;
}
