/* readfile.c — reading a file a user named (mmaprobe/sysio.h): opened without blocking, refused
 * unless it is a regular file, read whole up to a limit. fopen() on a FIFO waits for a writer
 * forever; open(O_NONBLOCK) returns at once and fstat then says what the path is. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mmaprobe/sysio.h"

const char *mmp_file_kind(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a plain file";
}

int mmp_file_open_regular(const char *path, const char **kind)
{
    *kind = NULL;
    if (!path || !*path) { errno = ENOENT; return -1; }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        *kind = mmp_file_kind(sb.st_mode);
        errno = 0;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

mmp_status mmp_file_open_status(int e)
{
    return e == 0 || e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG || e == ELOOP ? MMP_STATUS_INVALID
                                                                                     : MMP_STATUS_IO;
}

mmp_status mmp_file_read_regular(char **text, size_t *len, const char *path, size_t max)
{
    *text = NULL;
    *len = 0;
    const char *kind;
    int fd = mmp_file_open_regular(path, &kind);
    if (fd < 0) {
        int e = errno;
        if (kind) return MMP_ERR(MMP_STATUS_INVALID, "%s is not a regular file (%s)", path, kind);
        return MMP_ERR(mmp_file_open_status(e), "cannot open %s: %s", path, strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && (uint64_t)sb.st_size > (uint64_t)max) {
        close(fd);
        return MMP_ERR(MMP_STATUS_PARSE, "%s: larger than the %zu-byte limit", path, max);
    }
    size_t cap = sb.st_size > 0 ? (size_t)sb.st_size + 1 : 4096, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) { close(fd); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path); }
    for (;;) {
        if (n == cap) {   /* the file grew while being read */
            if (cap > max) {
                free(buf);
                close(fd);
                return MMP_ERR(MMP_STATUS_PARSE, "%s: larger than the %zu-byte limit", path, max);
            }
            size_t nc = cap * 2;
            char *nb = realloc(buf, nc + 1);
            if (!nb) { free(buf); close(fd); return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path); }
            buf = nb;
            cap = nc;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return MMP_ERR(MMP_STATUS_IO, "cannot read %s: %s", path, strerror(e));
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n > max) { free(buf); return MMP_ERR(MMP_STATUS_PARSE, "%s: larger than the %zu-byte limit", path, max); }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return MMP_STATUS_OK;
}
