/* layout_run.c — `mmaprobe probe layout`: capture fragment layouts on the GPU (or read stored
 * captures), analyse them against the PTX ISA, print tables, pictures and JSON.
 *
 * Build/run: part of libmmp; `mmaprobe probe --layout` (through cli/probe.c), or
 *   scripts/device/30-probe.sh (probe --write-capture) on a GPU machine. Exit codes: 0 every capture is a consistent
 *   mapping and matches the PTX ISA where documented; 1 a capture is inconsistent or differs
 *   from the PTX ISA (a finding: the text names fragment, lane, register); 2 usage; 3 no device
 *   (GPU mode) or unreadable capture directory; 4 internal error.
 * GPU mode creates a CUDA context in the calling process (after mmp_env_capture's forked query)
 * and never forks; the caller must not fork after calling it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mmaprobe/core.h"
#include "mmaprobe/reference.h"
#include "mmaprobe/layout.h"

typedef struct run_opts {
    const char *filter, *from, *write_capture, *write_synth;
    int device, quiet;
} run_opts;

typedef struct run_state {
    FILE *text;
    mmp_layout_results *out;
    int n_match, n_differ, n_inconsistent, n_discovered, n_skipped, n_errors;
    const run_opts *o;
    const mmp_env *env;
} run_state;

static const int k_wgmma_n[] = {8, 16, 64, 128, 256};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mmaprobe probe layout [--filter S] [--from-capture DIR] [--write-capture DIR]\n"
            "                             [--write-synthetic DIR] [--device N] [--quiet]\n"
            "  Which lane and register holds which element of every mma.sync, WMMA, ldmatrix,\n"
            "  stmatrix and wgmma fragment; compared with the PTX ISA's documented mapping.\n"
            "  --filter S           only captures whose id contains S (comma-separated: any of)\n"
            "  --from-capture DIR   analyse DIR/*.txt captures instead of running on the GPU\n"
            "  --write-capture DIR  also store each GPU capture as DIR/<id>.txt\n"
            "  --write-synthetic DIR  write the PTX ISA's mappings as captures (DIR/<id>.txt) and exit\n"
            "  --quiet              tables only, no pictures\n"
            "  exit: 0 all consistent and as documented, 1 a difference or inconsistency, 2 usage,\n"
            "        3 no device / unreadable input, 4 internal error\n");
}

static int matches(const char *filter, const char *id)
{
    if (!filter || !*filter) return 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", filter);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (strstr(id, tok)) return 1;
    return 0;
}

static mmp_status mkdir_p(const char *dir)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return MMP_ERR(MMP_STATUS_IO, "cannot create %s: %s", buf, strerror(errno));
            *p = '/';
        }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return MMP_ERR(MMP_STATUS_IO, "cannot create %s: %s", buf, strerror(errno));
    return MMP_STATUS_OK;
}

/* Analyse, print, count, optionally store one capture. */
static mmp_status report_one(run_state *rs, mmp_layout_capture *cap)
{
    if (!strncmp(cap->source, "gpu:", 4) && rs->env && rs->env->gpu[0]) {   /* name the GPU in the capture */
        char src[sizeof cap->source];
        snprintf(src, sizeof src, "gpu %s (sm_%d%d, driver %s):%s", rs->env->gpu, rs->env->cc_major,
                 rs->env->cc_minor, rs->env->driver, cap->source + 4);
        memcpy(cap->source, src, sizeof src);
    }
    mmp_layout_report rep;
    MMP_TRY(mmp_layout_analyse(&rep, cap));
    if (!rep.consistent) rs->n_inconsistent++;
    else if (!rep.documented) rs->n_discovered++;
    else if (rep.differences) rs->n_differ++;
    else rs->n_match++;
    if (rs->text) {
        if (rs->o->quiet) {
            fprintf(rs->text, "%-34s %s\n", cap->id,
                    !rep.consistent ? "inconsistent" : !rep.documented ? "discovered"
                    : rep.differences ? "DIFFERS from the PTX ISA" : "matches the PTX ISA");
        } else {
            mmp_layout_print_text(rs->text, cap, &rep);
        }
    }
    mmp_layout_result res;
    MMP_TRY(mmp_layout_result_fill(&res, cap, &rep));
    mmp_status st = mmp_layout_results_add(rs->out, &res);
    mmp_layout_result_clear(&res);
    MMP_TRY(st);
    if (rs->o->write_capture) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.txt", rs->o->write_capture, cap->id);
        MMP_TRY(mmp_layout_capture_write_file(path, cap));
    }
    return MMP_STATUS_OK;
}

static void note_error(run_state *rs, const char *id)
{
    rs->n_errors++;
    if (rs->text) fprintf(rs->text, "%-34s ERROR: %s\n", id, mmp_error_last());
    fprintf(stderr, "mmaprobe probe layout: %s: %s\n", id, mmp_error_last());
}

static void note_skip(run_state *rs, const char *id, const char *why)
{
    rs->n_skipped++;
    if (rs->text) fprintf(rs->text, "%-34s SKIP: %s\n", id, why);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static mmp_status run_from_dir(run_state *rs, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return MMP_ERR(MMP_STATUS_IO, "cannot read capture directory %s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap_n = 0;
    mmp_status st = MMP_STATUS_OK;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".txt") != 0) continue;
        if (n == cap_n) {
            cap_n = cap_n ? 2 * cap_n : 64;
            char **p = realloc(names, cap_n * sizeof *p);
            if (!p) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); break; }
            names = p;
        }
        if (!(names[n] = strdup(e->d_name))) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory"); break; }
        n++;
    }
    closedir(d);
    if (st == MMP_STATUS_OK && n == 0) st = MMP_ERR(MMP_STATUS_IO, "no *.txt captures in %s", dir);
    if (st == MMP_STATUS_OK) qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && st == MMP_STATUS_OK; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        mmp_layout_capture cap;
        mmp_layout_capture_init(&cap);
        mmp_status r = mmp_layout_capture_read(&cap, path);
        if (r != MMP_STATUS_OK) {
            note_error(rs, names[i]);
            st = r;                       /* a malformed stored capture is an input error */
        } else if (matches(rs->o->filter, cap.id)) {
            r = report_one(rs, &cap);
            if (r != MMP_STATUS_OK) st = r;
        }
        mmp_layout_capture_clear(&cap);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return st;
}

static mmp_status write_synthetic(const char *dir)
{
    MMP_TRY(mkdir_p(dir));
    for (size_t i = 0; i < mmp_layout_doc_count(); i++) {
        const mmp_layout_doc *doc = mmp_layout_doc_get(i);
        mmp_layout_capture cap;
        mmp_layout_capture_init(&cap);
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.txt", dir, doc->id);
        mmp_status st = mmp_layout_doc_capture(&cap, doc);
        if (st == MMP_STATUS_OK) st = mmp_layout_capture_write_file(path, &cap);
        mmp_layout_capture_clear(&cap);
        MMP_TRY(st);
    }
    return MMP_STATUS_OK;
}

/* GPU mode: mma.sync pair probes, memory-anchored captures, wgmma. */
static void run_gpu(run_state *rs, int cc)
{
    for (size_t i = 0; i < mmp_layout_doc_count(); i++) {
        const mmp_layout_doc *doc = mmp_layout_doc_get(i);
        if (strcmp(doc->kind, "mma") != 0 || !matches(rs->o->filter, doc->id)) continue;
        char why[96];
        if (cc < doc->min_cc) {
            snprintf(why, sizeof why, "needs sm_%d (device is sm_%d)", doc->min_cc, cc);
            note_skip(rs, doc->id, why);
            continue;
        }
        int na, nb, nc;
        mmp_layout_pair_sizes(&na, &nb, &nc, doc);
        int32_t *pairs = malloc(sizeof(int32_t) * (size_t)na * nb), *cmap = malloc(sizeof(int32_t) * (size_t)nc);
        mmp_layout_capture cap;
        mmp_layout_capture_init(&cap);
        mmp_status st = pairs && cmap ? mmp_layout_gpu_mma_pairs(pairs, cmap, doc->id)
                                      : MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory");
        int64_t unexplained = 0;
        if (st == MMP_STATUS_OK) st = mmp_layout_from_pairs(&cap, doc, pairs, cmap);
        if (st == MMP_STATUS_OK) st = mmp_layout_pairs_check(&unexplained, pairs, cmap, &cap);
        if (st == MMP_STATUS_OK) {
            snprintf(cap.source, sizeof cap.source,
                     "gpu: one-hot pair probes (A x B -> D, C -> D); %lld of %lld observations not explained by the mapping",
                     (long long)unexplained, (long long)na * nb + nc);
            st = report_one(rs, &cap);
        }
        if (st == MMP_STATUS_OK && unexplained) {
            rs->n_inconsistent++;   /* the hardware did something no fragment mapping describes */
            if (rs->text) fprintf(rs->text, "%-34s INCONSISTENT: %lld pair observations not explained\n", doc->id,
                                  (long long)unexplained);
        }
        if (st == MMP_STATUS_UNSUPPORTED) note_skip(rs, doc->id, mmp_error_last());
        else if (st != MMP_STATUS_OK) note_error(rs, doc->id);
        mmp_layout_capture_clear(&cap);
        free(pairs); free(cmap);
    }
    for (size_t i = 0; i < mmp_layout_gpu_mem_count(); i++) {
        const char *id = "?";
        int min_cc = 0, only_cc = 0;
        if (mmp_layout_gpu_mem_info(&id, &min_cc, &only_cc, i) != MMP_STATUS_OK || !matches(rs->o->filter, id)) continue;
        char why[96];
        if (cc < min_cc || (only_cc && cc != only_cc)) {
            snprintf(why, sizeof why, "needs sm_%d%s (device is sm_%d)", only_cc ? only_cc : min_cc, only_cc ? "" : "+", cc);
            note_skip(rs, id, why);
            continue;
        }
        mmp_layout_capture cap;
        mmp_layout_capture_init(&cap);
        mmp_status st = mmp_layout_gpu_mem_capture(&cap, i);
        if (st == MMP_STATUS_OK) st = report_one(rs, &cap);
        if (st == MMP_STATUS_UNSUPPORTED) note_skip(rs, id, mmp_error_last());
        else if (st != MMP_STATUS_OK) note_error(rs, id);
        mmp_layout_capture_clear(&cap);
    }
    for (size_t i = 0; i < sizeof k_wgmma_n / sizeof k_wgmma_n[0]; i++) {
        char id[64];
        snprintf(id, sizeof id, "wgmma.m64n%dk16.f32.f16", k_wgmma_n[i]);
        if (!matches(rs->o->filter, id)) continue;
        if (cc != 90) {
            note_skip(rs, id, "wgmma needs sm_90a (an H100/H200)");
            continue;
        }
        mmp_layout_capture cap;
        mmp_layout_capture_init(&cap);
        mmp_status st = mmp_layout_gpu_wgmma(&cap, k_wgmma_n[i]);
        if (st == MMP_STATUS_OK) st = report_one(rs, &cap);
        if (st == MMP_STATUS_UNSUPPORTED) note_skip(rs, id, mmp_error_last());
        else if (st != MMP_STATUS_OK) note_error(rs, id);
        mmp_layout_capture_clear(&cap);
    }
}

static int parse_opts(run_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->device = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **target = !strcmp(a, "--filter") ? &o->filter : !strcmp(a, "--from-capture") ? &o->from
                            : !strcmp(a, "--write-capture") ? &o->write_capture
                            : !strcmp(a, "--write-synthetic") ? &o->write_synth : NULL;
        if (target || !strcmp(a, "--device")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "mmaprobe probe layout: %s needs a value\n", a);
                return MMP_EXIT_USAGE;
            }
            if (target) {
                *target = argv[++i];
            } else {
                char *end;
                long d = strtol(argv[++i], &end, 10);
                if (*end || d < 0 || d > 1024) {
                    fprintf(stderr, "mmaprobe probe layout: --device needs a non-negative integer (got '%s')\n", argv[i]);
                    return MMP_EXIT_USAGE;
                }
                o->device = (int)d;
            }
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        } else {
            fprintf(stderr, "mmaprobe probe layout: unknown option '%s' (see --help)\n", a);
            return MMP_EXIT_USAGE;
        }
    }
    return 0;
}

int mmp_probe_layout_run(mmp_layout_results *out, FILE *text, int argc, char **argv)
{
    run_opts o;
    int rc = parse_opts(&o, argc, argv);
    if (rc) return rc < 0 ? MMP_EXIT_PASS : rc;
    if (o.write_synth) {
        if (write_synthetic(o.write_synth) != MMP_STATUS_OK) {
            fprintf(stderr, "mmaprobe probe layout: %s\n", mmp_error_last());
            return MMP_EXIT_ENVIRONMENT;
        }
        if (text) fprintf(text, "wrote %zu synthetic captures to %s\n", mmp_layout_doc_count(), o.write_synth);
        return MMP_EXIT_PASS;
    }
    if (o.write_capture && mkdir_p(o.write_capture) != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe probe layout: %s\n", mmp_error_last());
        return MMP_EXIT_ENVIRONMENT;
    }
    mmp_env env;
    mmp_status est = mmp_env_capture(&env, o.device, 0, argc, argv);   /* forks: before any CUDA use */
    snprintf(env.blas, sizeof env.blas, "%s", mmp_ref_blas_name());
    if (text) mmp_env_print(text, &env, "# ");
    run_state rs = {text, out, 0, 0, 0, 0, 0, 0, &o, &env};
    out->present = 1;
    snprintf(out->gpu, sizeof out->gpu, "%s", est == MMP_STATUS_OK ? env.gpu : "none");
    out->cc = env.cc_major * 10 + env.cc_minor;
    snprintf(out->mode, sizeof out->mode, "%s", o.from ? "from-capture" : "gpu");
    mmp_status st = MMP_STATUS_OK;
    if (o.from) {
        st = run_from_dir(&rs, o.from);
    } else if (est != MMP_STATUS_OK) {
        st = MMP_ERR(MMP_STATUS_NO_DEVICE, "no GPU: %s (use --from-capture DIR to analyse stored captures)",
                     env.no_device_reason);
    } else {
        run_gpu(&rs, env.cc_major * 10 + env.cc_minor);
    }
    out->n_match = rs.n_match;
    out->n_differ = rs.n_differ;
    out->n_inconsistent = rs.n_inconsistent;
    out->n_discovered = rs.n_discovered;
    out->n_skipped = rs.n_skipped;
    out->n_errors = rs.n_errors;
    if (text)
        fprintf(text, "\nlayout: %d match the PTX ISA, %d differ, %d inconsistent, %d discovered (undocumented), "
                      "%d skipped, %d errors\n",
                rs.n_match, rs.n_differ, rs.n_inconsistent, rs.n_discovered, rs.n_skipped, rs.n_errors);
    if (st != MMP_STATUS_OK) {
        fprintf(stderr, "mmaprobe probe layout: %s\n", mmp_error_last());
        return mmp_status_exit_code(st);
    }
    if (rs.n_errors) return MMP_EXIT_INTERNAL;
    return rs.n_differ || rs.n_inconsistent ? MMP_EXIT_FAIL : MMP_EXIT_PASS;
}

#ifndef MMP_HAVE_CUDA
mmp_status mmp_layout_gpu_mma_pairs(int32_t *pairs, int32_t *cmap, const char *id)
{
    (void)pairs; (void)cmap;
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "%s: built without CUDA", id);
}
size_t mmp_layout_gpu_mem_count(void) { return 0; }
mmp_status mmp_layout_gpu_mem_info(const char **id, int *min_cc, int *only_cc, size_t i)
{
    (void)id; (void)min_cc; (void)only_cc;
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "memory capture %zu: built without CUDA", i);
}
mmp_status mmp_layout_gpu_mem_capture(mmp_layout_capture *cap, size_t i)
{
    (void)cap;
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "memory capture %zu: built without CUDA", i);
}
mmp_status mmp_layout_gpu_wgmma(mmp_layout_capture *cap, int n)
{
    (void)cap;
    return MMP_ERR(MMP_STATUS_NO_DEVICE, "wgmma n%d: built without CUDA", n);
}
#endif
