/* fileio.c — the outputs: the one atomic file write (the document goes to a temporary file beside
 * the destination, is flushed to disk, then renamed over it, so a reader, a crash or a full disk
 * sees either the previous file or the whole new one), the JSON-lines file opened in place under
 * a lock, and the previous document set aside.
 *
 * Outputs are regular files. A path naming a directory, a device, a FIFO or a socket is refused:
 * renaming over it would destroy it (as root, /dev/null), and writing into it would block (a
 * FIFO without a reader) or reach a device. A symbolic link is followed to its final target,
 * which must be a regular file or not exist yet; the new file replaces the target and the link
 * stays a link. The kind is checked when the output is first named and again just before the
 * rename (a window of a few system calls remains: rename cannot be made conditional). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mmaprobe/core.h"
#include "mmaprobe/sysio.h"

/* The final target of path after following symbolic links (at most 40, as the kernel does) into
 * a malloc'd string; *exists: whether it exists (then *st is its stat). */
static mmp_status resolve(char **target, int *exists, struct stat *st, const char *path)
{
    *target = NULL;
    *exists = 0;
    if (!path || !*path) return MMP_ERR(MMP_STATUS_IO, "cannot write an output with an empty name");
    char *p = strdup(path);
    if (!p) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    for (int hops = 0;; hops++) {
        if (lstat(p, st) != 0) {
            if (errno == ENOENT) break;   /* created by the write */
            mmp_status s = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
            free(p);
            return s;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = 1;
            break;
        }
        char link[PATH_MAX];
        ssize_t n = hops < 40 ? readlink(p, link, sizeof link - 1) : -1;
        if (n < 0) {
            mmp_status s = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, hops < 40 ? strerror(errno) : strerror(ELOOP));
            free(p);
            return s;
        }
        link[n] = '\0';
        const char *slash = strrchr(p, '/');
        size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;   /* relative: from the link's folder */
        char *q = malloc(dir + (size_t)n + 1);
        if (!q) { free(p); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); }
        memcpy(q, p, dir);
        memcpy(q + dir, link, (size_t)n + 1);
        free(p);
        p = q;
    }
    if (*exists && !S_ISREG(st->st_mode)) {
        mmp_status s = MMP_ERR(MMP_STATUS_IO, "cannot write %s: not a regular file (%s)", path, mmp_file_kind(st->st_mode));
        free(p);
        return s;
    }
    *target = p;
    return MMP_STATUS_OK;
}

static char *temp_name(const char *path)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (tmp) snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    return tmp;
}

mmp_status mmp_file_check_writable(const char *path)
{
    char *target;
    int exists;
    struct stat s;
    MMP_TRY(resolve(&target, &exists, &s, path));
    char *tmp = temp_name(target);
    free(target);
    if (!tmp) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        mmp_status st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
        free(tmp);
        return st;
    }
    close(fd);
    unlink(tmp);
    free(tmp);
    return MMP_STATUS_OK;
}

/* MMP_FAULT_WRITE_AFTER=N (tests): a document is cut after N bytes and fails with ENOSPC. */
static long fault_bytes(void)
{
    const char *f = getenv("MMP_FAULT_WRITE_AFTER");
    if (!f || !*f) return -1;
    char *e;
    long v = strtol(f, &e, 10);
    return !*e && v >= 0 ? v : -1;
}

/* The folder entry of a rename made durable; a file system without directory fsync is no error. */
static void sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash == path ? 1 : slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    if (fsync(fd) != 0) { /* EINVAL on some file systems: the data itself is synced */ }
    close(fd);
}

mmp_status mmp_file_write_atomic(const char *path, mmp_file_writer write, void *ctx)
{
    char *target;
    int exists;
    struct stat old;
    MMP_TRY(resolve(&target, &exists, &old, path));
    char *tmp = temp_name(target);
    if (!tmp) { free(target); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        mmp_status st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
        free(tmp);
        free(target);
        return st;
    }
    mode_t mask = umask(0);                     /* mkstemp makes 0600: give the file's own mode, */
    umask(mask);                                /* or the usual 0666 & ~umask for a new one */
    if (fchmod(fd, exists ? old.st_mode & 07777 : 0666 & ~mask) != 0) { /* keep 0600: still a valid document */ }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        free(target);
        return MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    }
    errno = 0;
    mmp_status st = write(f, ctx);
    int write_errno = errno;
    if (st == MMP_STATUS_IO && ferror(f) && write_errno)   /* the writer's own words lack the path */
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(write_errno));
    if (st == MMP_STATUS_OK && (fflush(f) != 0 || ferror(f)))
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    long fault = fault_bytes();
    if (st == MMP_STATUS_OK && fault >= 0 && ftell(f) > fault) {
        if (ftruncate(fd, fault) != 0) { /* the temporary file goes anyway */ }
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s [MMP_FAULT_WRITE_AFTER]", path, strerror(ENOSPC));
    }
    if (st == MMP_STATUS_OK && fsync(fd) != 0)
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    if (fclose(f) != 0 && st == MMP_STATUS_OK)
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    struct stat now;
    if (st == MMP_STATUS_OK && lstat(target, &now) == 0 && !S_ISREG(now.st_mode))   /* swapped meanwhile */
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: not a regular file (%s)", path,
                     S_ISLNK(now.st_mode) ? "a symbolic link made during the write" : mmp_file_kind(now.st_mode));
    if (st == MMP_STATUS_OK && rename(tmp, target) != 0)
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    if (st == MMP_STATUS_OK) sync_dir(target);
    else unlink(tmp);
    free(tmp);
    free(target);
    return st;
}

mmp_status mmp_file_open_locked(int *fd, long *holder, const char *path)
{
    *fd = -1;
    *holder = 0;
    char *target;
    int exists;
    struct stat s;
    MMP_TRY(resolve(&target, &exists, &s, path));
    /* No O_TRUNC before the lock is held (it would cut another run's lines); O_NONBLOCK and
     * O_NOFOLLOW so that a FIFO or link put there since cannot block or redirect the open. */
    int f = open(target, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
    free(target);
    if (f < 0) return MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    mmp_status bad = MMP_STATUS_OK;
    if (fstat(f, &s) != 0) bad = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    else if (!S_ISREG(s.st_mode)) bad = MMP_ERR(MMP_STATUS_IO, "cannot write %s: not a regular file (%s)", path, mmp_file_kind(s.st_mode));
    if (bad != MMP_STATUS_OK) {
        close(f);
        return bad;
    }
    int fl = fcntl(f, F_GETFL);
    if (fl >= 0) (void)fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
    /* A POSIX record lock: not inherited by forked children, released when this process ends
     * however it ends (so a killed run leaves no stale lock), and F_GETLK names the holder. */
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(f, F_SETLK, &lk) != 0) {
        int e = errno;
        if (e == EACCES || e == EAGAIN) {
            struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
            *holder = fcntl(f, F_GETLK, &q) == 0 && q.l_type != F_UNLCK ? (long)q.l_pid : -1;
            close(f);
            return MMP_ERR(MMP_STATUS_IO, "%s is being written by another process (pid %ld)", path, *holder);
        }
        if (e != ENOLCK && e != EINVAL) {   /* a file system without locks: write unlocked */
            close(f);
            return MMP_ERR(MMP_STATUS_IO, "cannot lock %s: %s", path, strerror(e));
        }
    }
    if (ftruncate(f, 0) != 0) {
        mmp_status st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
        close(f);
        return st;
    }
    *fd = f;
    return MMP_STATUS_OK;
}

/* path's final target and the name beside it with suffix, both malloc'd; *exists as resolve's */
static mmp_status aside_paths(char **target, char **aside, int *exists, const char *path, const char *suffix)
{
    struct stat s;
    *aside = NULL;
    MMP_TRY(resolve(target, exists, &s, path));
    size_t n = strlen(*target) + strlen(suffix) + 1;
    *aside = malloc(n);
    if (!*aside) {
        free(*target);
        *target = NULL;
        return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    }
    snprintf(*aside, n, "%s%s", *target, suffix);
    return MMP_STATUS_OK;
}

mmp_status mmp_file_set_aside(const char *path, const char *suffix)
{
    char *target, *aside;
    int exists;
    MMP_TRY(aside_paths(&target, &aside, &exists, path, suffix));
    mmp_status st = MMP_STATUS_OK;
    if (exists && rename(target, aside) != 0)
        st = MMP_ERR(MMP_STATUS_IO, "cannot move %s aside to %s: %s", path, aside, strerror(errno));
    free(aside);
    free(target);
    return st;
}

mmp_status mmp_file_remove_aside(const char *path, const char *suffix)
{
    char *target, *aside;
    int exists;
    MMP_TRY(aside_paths(&target, &aside, &exists, path, suffix));
    mmp_status st = MMP_STATUS_OK;
    struct stat a;
    if (lstat(aside, &a) == 0 && S_ISREG(a.st_mode) && unlink(aside) != 0)
        st = MMP_ERR(MMP_STATUS_IO, "cannot remove %s: %s", aside, strerror(errno));
    free(aside);
    free(target);
    return st;
}
