/* tests/fuzz/fuzz_argv.h — a fuzz input as a command line for the argument fuzzers (fuzz_cli,
 * fuzz_tool_args): the bytes after the first, split at newlines into argv[1..], argv[0] = cmd.
 *
 * Usage: char *argv[FUZZ_ARGV_MAX + 1]; char *buf; int argc = fuzz_argv(argv, &buf, cmd, data, size);
 *        ... parse ...; free(buf);   (argc < 0: out of memory)
 */
#ifndef MMAPROBE_FUZZ_ARGV_H
#define MMAPROBE_FUZZ_ARGV_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ARGV_MAX 259

static inline int fuzz_argv(char **argv, char **buf, const char *cmd, const uint8_t *data, size_t size)
{
    *buf = malloc(size);
    if (!*buf) return -1;
    memcpy(*buf, data + 1, size - 1);
    (*buf)[size - 1] = '\0';
    int argc = 0;
    argv[argc++] = (char *)cmd;
    char *p = *buf, *end = *buf + size - 1;
    while (p < end && argc < FUZZ_ARGV_MAX) {
        argv[argc++] = p;
        while (p < end && *p && *p != '\n') p++;
        *p++ = '\0';
    }
    argv[argc] = NULL;
    return argc;
}

#endif
