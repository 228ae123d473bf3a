/* spawn.c — external tools run with an argument vector, never through a shell
 * (mmaprobe/sysio.h). posix_spawn is safe in a threaded process (the arith probe reads captures
 * through xz from several threads at once); the pipe is made close-on-exec so one tool never
 * inherits another's pipe (which would keep it open and its reader waiting). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/sysio.h"

extern char **environ;

void mmp_spawn_die_with_parent(int parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != (pid_t)parent) _exit(1);   /* it died before the call: no signal will come */
}

mmp_status mmp_spawn_read(mmp_child *c, char *const argv[], int flags)
{
    c->pid = -1;
    c->out = NULL;
    if (!argv || !argv[0] || !argv[0][0]) return MMP_ERR(MMP_STATUS_INVALID, "spawn: no program named");
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return MMP_ERR(MMP_STATUS_IO, "cannot run %s: pipe: %s", argv[0], strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    if (flags & MMP_SPAWN_STDERR_OUT) posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    else posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    /* the child starts with the default action for every signal and none blocked */
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int e = strchr(argv[0], '/') ? posix_spawn(&pid, argv[0], &fa, &at, argv, environ)
                                 : posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[1]);
    if (e != 0) {
        close(fds[0]);
        return MMP_ERR(MMP_STATUS_IO, "cannot run %s: %s", argv[0], strerror(e));
    }
    c->out = fdopen(fds[0], "r");
    if (!c->out) {
        close(fds[0]);
        int ws;
        while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "cannot run %s: out of memory", argv[0]);
    }
    c->pid = pid;
    return MMP_STATUS_OK;
}

int mmp_spawn_wait(mmp_child *c)
{
    if (c->out) fclose(c->out);
    c->out = NULL;
    if (c->pid <= 0) return -1;
    int ws;
    pid_t r;
    while ((r = waitpid(c->pid, &ws, 0)) < 0 && errno == EINTR) {}
    c->pid = -1;
    return r < 0 ? -1 : ws;
}

static int try_dirs(char *buf, size_t size, const char *name, const char *dirs)
{
    for (const char *p = dirs; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (n > 0) {
            int w = snprintf(buf, size, "%.*s/%s", (int)n, p, name);
            struct stat sb;
            if (w > 0 && (size_t)w < size && stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) && access(buf, X_OK) == 0)
                return 0;
        }
        if (!colon) break;
        p = colon + 1;
    }
    return -1;
}

int mmp_spawn_which(char *buf, size_t size, const char *name, const char *extra)
{
    if (!buf || !size || !name || !*name || strchr(name, '/')) return -1;
    if (try_dirs(buf, size, name, getenv("PATH")) == 0) return 0;
    if (try_dirs(buf, size, name, extra) == 0) return 0;
    buf[0] = '\0';
    return -1;
}
