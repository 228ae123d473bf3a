/* status.c — status names, exit codes and the thread-local last-error message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mmaprobe/status.h"

static _Thread_local char last_msg[1024];
static _Thread_local char last_where[256];

static const struct {
    const char *name;
    int exit_code;
} status_table[MMP_STATUS_COUNT_] = {
    [MMP_STATUS_OK] = {"ok", MMP_EXIT_PASS},
    [MMP_STATUS_INVALID] = {"invalid", MMP_EXIT_USAGE},
    [MMP_STATUS_PARSE] = {"parse", MMP_EXIT_USAGE},
    [MMP_STATUS_UNSUPPORTED] = {"unsupported", MMP_EXIT_USAGE},
    [MMP_STATUS_NO_DEVICE] = {"no-device", MMP_EXIT_ENVIRONMENT},
    [MMP_STATUS_NO_MEMORY] = {"no-memory", MMP_EXIT_ENVIRONMENT},
    [MMP_STATUS_IO] = {"io", MMP_EXIT_ENVIRONMENT},
    [MMP_STATUS_CUDA] = {"cuda", MMP_EXIT_INTERNAL},
    [MMP_STATUS_KERNEL] = {"kernel", MMP_EXIT_FAIL},
    [MMP_STATUS_INTERNAL] = {"internal", MMP_EXIT_INTERNAL},
};

const char *mmp_status_name(mmp_status st)
{
    if ((unsigned)st >= MMP_STATUS_COUNT_) return "?";
    return status_table[st].name;
}

int mmp_status_exit_code(mmp_status st)
{
    if ((unsigned)st >= MMP_STATUS_COUNT_) return MMP_EXIT_INTERNAL;
    return status_table[st].exit_code;
}

mmp_status mmp_error_set(mmp_status st, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    /* keep the message one line, and free of terminal control bytes (ESC, a C1 control as
     * UTF-8 or as a lone byte) that a file's text could carry */
    for (unsigned char *p = (unsigned char *)last_msg, prev = 0; *p; prev = *p, p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
        else if ((*p < 0x20 && *p != '\t') || *p == 0x7f) *p = '?';
        else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) p[0] = p[1] = '?';
        else if (*p >= 0x80 && *p <= 0xBF && prev < 0x80) *p = '?';
    const char *base = file ? strrchr(file, '/') : NULL;
    snprintf(last_where, sizeof last_where, "%s:%d", base ? base + 1 : (file ? file : "?"), line);
    return st;
}

const char *mmp_error_last(void) { return last_msg; }
const char *mmp_error_where(void) { return last_where; }
void mmp_error_clear(void) { last_msg[0] = '\0'; last_where[0] = '\0'; }
