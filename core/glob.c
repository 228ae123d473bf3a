/* glob.c — the one filter match: shell globs (fnmatch) on case IDs and kernel names. */
#include <fnmatch.h>

#include "mmaprobe/core.h"

int mmp_glob_match(const char *pattern, const char *name)
{
    if (!pattern || !*pattern) return 1;
    return fnmatch(pattern, name ? name : "", 0) == 0;
}
