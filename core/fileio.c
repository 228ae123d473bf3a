/* fileio.c — the one atomic file write: the document goes to a temporary file beside the
 * destination, is flushed to disk, then renamed over it, so a reader (or a crash, or a full
 * disk) sees either the previous file or the whole new one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mmaprobe/core.h"

static char *temp_name(const char *path)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (tmp) snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    return tmp;
}

mmp_status mmp_file_check_writable(const char *path)
{
    struct stat s;
    if (stat(path, &s) == 0 && S_ISDIR(s.st_mode))
        return MMP_ERR(MMP_STATUS_IO, "cannot write %s: it is a directory", path);
    char *tmp = temp_name(path);
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

mmp_status mmp_file_write_atomic(const char *path, mmp_file_writer write, void *ctx)
{
    char *tmp = temp_name(path);
    if (!tmp) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        mmp_status st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
        free(tmp);
        return st;
    }
    mode_t mask = umask(0);                     /* mkstemp makes 0600; give the usual 0666 & ~umask */
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) { /* keep 0600: still a valid document */ }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return MMP_ERR(MMP_STATUS_IO, "cannot write %s", path);
    }
    mmp_status st = write(f, ctx);
    if (st == MMP_STATUS_OK && (fflush(f) != 0 || ferror(f)))
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    if (st == MMP_STATUS_OK && fsync(fd) != 0)
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    if (fclose(f) != 0 && st == MMP_STATUS_OK)
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    if (st == MMP_STATUS_OK && rename(tmp, path) != 0)
        st = MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    if (st != MMP_STATUS_OK) unlink(tmp);
    free(tmp);
    return st;
}
