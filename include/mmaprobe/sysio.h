/* mmaprobe/sysio.h — the two ways mmaprobe meets the operating system's hostile corners: reading
 * a file a user named (which may be a FIFO, a device or missing) and running an external tool
 * (ncu, cuobjdump, xz) with a path in its arguments (which may hold spaces, quotes or ';').
 *
 * Usage:
 *   char *text; size_t len;
 *   mmp_status st = mmp_file_read_regular(&text, &len, path, 64u << 20);   // never blocks
 *
 *   char *const argv[] = {"xz", "-dc", "--", (char *)path, NULL};
 *   mmp_child c;
 *   if (mmp_spawn_read(&c, argv, MMP_SPAWN_STDERR_NULL) == MMP_STATUS_OK) {
 *       while (fgets(line, sizeof line, c.out)) ...;
 *       int ws = mmp_spawn_wait(&c);            // a wait status: WIFEXITED(ws) && !WEXITSTATUS(ws)
 *   }
 *
 * No shell is involved anywhere: each argv word reaches the program as it is.
 */
#ifndef MMAPROBE_SYSIO_H
#define MMAPROBE_SYSIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading files a user named (core/readfile.c) ---- */
/* A read-only descriptor (close-on-exec) of the regular file at path, or -1. The open does not
 * block (O_NONBLOCK; cleared afterwards), so a FIFO without a writer cannot stall it. On -1,
 * errno says why the open failed, or is 0 with *kind naming what path is instead ("a FIFO",
 * "a directory", "a character device", ...). */
int mmp_file_open_regular(const char *path, const char **kind);
/* The status for an open that failed with errno e: a path that names nothing (ENOENT, ENOTDIR,
 * ENAMETOOLONG, ELOOP, 0 = not a regular file) is the user's input (MMP_STATUS_INVALID, exit 2);
 * a file that exists but cannot be read is the environment's (MMP_STATUS_IO, exit 3). */
mmp_status mmp_file_open_status(int e);
/* What a file of mode m is, for messages: "a directory", "a FIFO", "a character device", ... */
const char *mmp_file_kind(mode_t m);
/* The whole regular file (at most max bytes) as a NUL-terminated buffer the caller frees.
 * Errors: "cannot open PATH: No such file or directory" / "PATH is not a regular file (a FIFO)"
 * (statuses as mmp_file_open_status), "PATH: larger than the N-byte limit" (MMP_STATUS_PARSE),
 * a read error (MMP_STATUS_IO). */
mmp_status mmp_file_read_regular(char **text, size_t *len, const char *path, size_t max);

/* ---- running external tools without a shell (core/spawn.c) ---- */
typedef struct mmp_child {
    int pid;
    FILE *out;                 /* the child's stdout (and stderr with MMP_SPAWN_STDERR_OUT) */
} mmp_child;

enum {
    MMP_SPAWN_STDERR_NULL = 0, /* the child's stderr goes to /dev/null */
    MMP_SPAWN_STDERR_OUT = 1   /* merged into c->out (2>&1) */
};

/* Start argv[0] with the arguments argv (NULL-terminated); argv[0] without a '/' is looked up
 * in PATH. stdin is /dev/null, no descriptor of this process but the pipe is inherited, and
 * the signals this process ignores (SIGPIPE) are back at their defaults in the child.
 * MMP_STATUS_IO "cannot run NAME: REASON" when it cannot start. */
mmp_status mmp_spawn_read(mmp_child *c, char *const argv[], int flags);
/* Close c->out and wait for the child: its wait status (as waitpid gives it), or -1. */
int mmp_spawn_wait(mmp_child *c);
/* In a forked child: die (SIGKILL) when the process that forked it dies, even by SIGKILL, so
 * that no kernel's process outlives mmaprobe; parent is that process's pid (getpid() before the
 * fork: if it is already gone, the child exits at once). */
void mmp_spawn_die_with_parent(int parent);
/* The first executable regular file called name in the directories of $PATH, then of extra
 * (':'-separated; may be NULL): its path in buf and 0, or -1 when there is none. */
int mmp_spawn_which(char *buf, size_t size, const char *name, const char *extra);

#ifdef __cplusplus
}
#endif
#endif
