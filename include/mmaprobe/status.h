/* mmaprobe/status.h — status codes, the last-error message, exit codes.
 *
 * Usage:
 *   mmp_status st = mmp_something(...);
 *   if (st != MMP_STATUS_OK) fprintf(stderr, "mmaprobe: %s\n", mmp_error_last());
 *   return mmp_status_exit_code(st);            // only main() exits
 *
 *   // in library code, fail with a one-line message naming the problem:
 *   if (k <= 0) return MMP_ERR(MMP_STATUS_INVALID, "K must be positive (got %lld)", (long long)k);
 *
 * The message is thread-local; the file and line of the failing check are kept
 * separately (mmp_error_where) so the one-line message stays readable.
 */
#ifndef MMAPROBE_STATUS_H
#define MMAPROBE_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mmp_status {
    MMP_STATUS_OK = 0,
    MMP_STATUS_INVALID,     /* bad argument or bad input (usage error)          -> exit 2 */
    MMP_STATUS_PARSE,       /* malformed file (suite, JSON, plugin descriptor)  -> exit 2 */
    MMP_STATUS_UNSUPPORTED, /* shape/format/device not supported: a SKIP        -> exit 2 */
    MMP_STATUS_NO_DEVICE,   /* no CUDA device, driver or library                -> exit 3 */
    MMP_STATUS_NO_MEMORY,   /* host or device allocation failed                 -> exit 3 */
    MMP_STATUS_IO,          /* cannot read/write a file                         -> exit 3 */
    MMP_STATUS_CUDA,        /* CUDA runtime/driver error                        -> exit 4 */
    MMP_STATUS_KERNEL,      /* kernel under test returned an error              -> exit 1 */
    MMP_STATUS_INTERNAL,    /* a bug in mmaprobe                                -> exit 4 */
    MMP_STATUS_COUNT_
} mmp_status;

/* Documented process exit codes (README "Exit codes"). */
enum {
    MMP_EXIT_PASS = 0,        /* everything ran and passed                      */
    MMP_EXIT_FAIL = 1,        /* a failure (FAIL or ERROR verdict, regression)  */
    MMP_EXIT_USAGE = 2,       /* usage or input error                           */
    MMP_EXIT_ENVIRONMENT = 3, /* no device, missing library, unwritable output  */
    MMP_EXIT_INTERNAL = 4,    /* internal error                                 */
    MMP_EXIT_SKIP = 77        /* test-only: skipped (automake/ctest convention) */
};

const char *mmp_status_name(mmp_status st);
int mmp_status_exit_code(mmp_status st);

/* Record a one-line message (printf-style) and return st. */
mmp_status mmp_error_set(mmp_status st, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
const char *mmp_error_last(void);   /* "" when none */
const char *mmp_error_where(void);  /* "file.c:123" of the last mmp_error_set */
void mmp_error_clear(void);

#define MMP_ERR(st, ...) mmp_error_set((st), __FILE__, __LINE__, __VA_ARGS__)
/* Propagate a failing status unchanged. */
#define MMP_TRY(expr)                                   \
    do {                                                \
        mmp_status mmp_try_st_ = (expr);                \
        if (mmp_try_st_ != MMP_STATUS_OK) return mmp_try_st_; \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
