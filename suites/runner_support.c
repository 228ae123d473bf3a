/* runner_support.c — what a kernel declares it cannot take, checked before run() is called: the
 * constraints of ABI 1.3 (min_k, ld_align_bytes, tight_d) and, for a device kernel from a plugin,
 * whether the library carries GPU code this device can run. Each is a SKIP whose reason names
 * the constraint ("k=17 < min_k 64"), never an ERROR.
 */
#include <dlfcn.h>
#include <string.h>

#include "runner_internal.h"

/* Leading dimension ld (elements of format f) in bytes, and whether it is a multiple of align. */
static int ld_aligned(int64_t ld, int32_t f, int align)
{
    size_t bytes = mmp_format_bytes((mmp_format)f, (size_t)ld);
    return bytes % (size_t)align == 0;
}

int mmp_runner_constraint_skip(mmp_case_result *r, const mmp_case *c)
{
    const mmp_kernel_desc *k = c->kernel;
    char why[200];
    if (k->min_k > 1 && c->k < k->min_k) {
        snprintf(why, sizeof why, "k=%lld < min_k %d", (long long)c->k, (int)k->min_k);
        return mmp_runner_skip(r, why);
    }
    if (k->ld_align_bytes > 1) {
        const int reads_c = c->beta != 0 && k->reads_c;
        const struct { const char *name; int64_t ld; int32_t f; int used; } m[4] = {
            {"lda", c->lda, k->a_format, 1}, {"ldb", c->ldb, k->b_format, 1},
            {"ldc", c->ldc, k->c_format, reads_c}, {"ldd", c->ldd, k->d_format, 1}};
        for (int i = 0; i < 4; i++)
            if (m[i].used && !ld_aligned(m[i].ld, m[i].f, k->ld_align_bytes)) {
                snprintf(why, sizeof why, "%s %lld elements is not %d-byte aligned (ld_align_bytes)", m[i].name,
                         (long long)m[i].ld, (int)k->ld_align_bytes);
                return mmp_runner_skip(r, why);
            }
    }
    if (k->tight_d) {
        int64_t tight = mmp_case_tight_ld(c->ld, c->m, c->n);
        if (c->ldd != tight) {
            snprintf(why, sizeof why, "ldd %lld is not tight (%lld): the kernel declares tight_d", (long long)c->ldd,
                     (long long)tight);
            return mmp_runner_skip(r, why);
        }
    }
    return 0;
}

/* The GPU code of the library that holds `fn`, read once per library (the runner child runs one
 * kernel's cases, so the last library is nearly always the one asked about). *self = 1 when fn is
 * in mmaprobe's own object: its built-in kernels are checked by min_cc alone. */
static const mmp_fatbin_info *code_of(int *self, const char **lib, const void *fn)
{
    static char last[4096];
    static mmp_fatbin_info info;
    static int known;
    static const char anchor = 0;   /* an address in mmaprobe's own object */
    Dl_info here, there;
    *self = 1;
    *lib = NULL;
    if (!dladdr(&anchor, &here) || !dladdr(fn, &there) || !there.dli_fname)
        return NULL;
    if (here.dli_fbase == there.dli_fbase) return NULL;
    *self = 0;
    *lib = there.dli_fname;
    if (!known || strcmp(last, there.dli_fname) != 0) {
        snprintf(last, sizeof last, "%s", there.dli_fname);
        known = mmp_fatbin_read_elf(&info, there.dli_fname) == MMP_STATUS_OK ? 1 : -1;
    }
    return known == 1 ? &info : NULL;
}

int mmp_runner_code_skip(mmp_case_result *r, const mmp_runner_options *o, const mmp_kernel_desc *k)
{
    if (k->where != MMP_KERNEL_DEVICE || !k->run) return 0;
    int self;
    const char *lib;
    union { mmp_kernel_run_fn run; const void *addr; } entry = {.run = k->run};   /* ISO C: no cast */
    const mmp_fatbin_info *info = code_of(&self, &lib, entry.addr);
    if (self || !info) return 0;   /* built in, or nothing readable against it: the launch decides */
    int cc = mmp_runner_device_cc(o);
    if (cc <= 0 || mmp_fatbin_runs_on(info, cc)) return 0;
    char codes[160], why[320];
    mmp_fatbin_describe(codes, sizeof codes, info);
    snprintf(why, sizeof why, "plugin has code for %s only; this device is sm_%d", codes, cc);
    return mmp_runner_skip(r, why);
}

int mmp_runner_launch_status(mmp_case_result *r, const mmp_kernel_desc *k)
{
    if (!k->launch_status) return 0;
    char msg[256] = "";
    int rc = k->launch_status(msg, sizeof msg);
    if (rc == 0) return 0;
    msg[sizeof msg - 1] = '\0';
    for (char *p = msg; *p; p++)   /* one line, no terminal controls, whatever the plugin wrote */
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    if (msg[0]) mmp_runner_say(r, "launch: %s", msg);
    else mmp_runner_say(r, "launch: the kernel's launch_status returned %d", rc);
    return 1;
}
