/* glob.c — the one filter match: shell globs (fnmatch) on case IDs and kernel names. A filter
 * is a comma-separated list of globs; those that start with '!' exclude (as gtest's "-" part):
 * a name matches when no exclusion matches it and some inclusion does (or there is none), so
 * "*,!host_*" is everything but the host kernels and "!cublas_f64*" everything but that kernel. */
#include <fnmatch.h>
#include <string.h>

#include "mmaprobe/core.h"

int mmp_glob_match(const char *pattern, const char *name)
{
    if (!pattern || !*pattern) return 1;
    if (!name) name = "";
    if (!strchr(pattern, ',') && pattern[0] != '!') return fnmatch(pattern, name, 0) == 0;
    int any_include = 0, included = 0;
    char one[512];
    for (const char *p = pattern; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len >= sizeof one) len = sizeof one - 1;
        memcpy(one, p, len);
        one[len] = '\0';
        p = e ? e + 1 : p + strlen(p);
        if (!one[0]) continue;
        if (one[0] == '!') {
            if (fnmatch(one + 1, name, 0) == 0) return 0;
        } else {
            any_include = 1;
            included |= fnmatch(one, name, 0) == 0;
        }
    }
    return included || !any_include;
}
