/* arith_run.c — `mmaprobe probe --arith`: design, capture (GPU, in a forked child), analyse.
 *
 * Options (after --arith is chosen by cli/probe.c, which checks every value and its bound first:
 * cli/args_tools.c):
 *   --capture-dir D     write each capture to D/<instruction>.txt (text, replayable by CI)
 *   --capture-keep N    random vectors kept in those text captures (default: all); every
 *                       designed probe vector is always kept
 *   --from-capture D    analyse D/<instruction>.txt (or D/NAME-<instruction>.txt) instead of the GPU
 *   --synthetic GPU     outputs from the parameter-table model of GPU (no device needed)
 *   --instr ID          only this instruction (repeatable as a comma list)
 *   --random N          random vectors per instruction (default 100000, at most 10^6; half bit
 *                       patterns)
 *   --seed S            seed of the random vectors (default 1)
 *   --threads N         analysis threads (default: online CPUs, at most 32)
 * CUDA is used only in a forked child, which hands each capture back as a binary file (or a
 * ".skip" file with the reason it could not run); the parent analyses the instructions in
 * parallel threads and prints them in table order. Instructions that could not be captured
 * appear in the text and the results with their reason (e.g. a device without sm_90a for wgmma).
 */
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mmaprobe/core.h"
#include "mmaprobe/probe.h"
#include "arith_internal.h"

#ifndef MMP_HAVE_CUDA
mmp_status mmp_arith_capture_gpu(mmp_capture *cap, const mmp_arith_instr *in, int dev)
{
    (void)cap; (void)dev;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s: this build has no CUDA", in->id);
}
#endif

typedef struct arith_opts {
    const char *capture_dir, *from_capture, *synthetic, *instr;
    size_t n_random, keep;
    uint64_t seed;
    int threads;
} arith_opts;

static int selected(const arith_opts *o, const char *id)
{
    if (!o->instr) return 1;
    size_t n = strlen(id);
    for (const char *p = o->instr; (p = strstr(p, id)) != NULL; p += n)
        if ((p == o->instr || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

/* GPU gpu name for the parameter table from a device name ("NVIDIA H200" -> "H200"). */
static const char *table_gpu(const char *name)
{
    static const char *gpus[] = {"V100", "A100", "H100", "H200", "B200"};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
        if (strstr(name, gpus[i])) return gpus[i];
    return name;
}

/* Designing the vectors of every instruction in parallel threads (the child does it before it
 * touches CUDA). */
typedef struct design_pool {
    const arith_opts *o;
    const mmp_arith_instr *ins;
    mmp_capture *caps;
    mmp_status *st;
    size_t n, next;
    pthread_mutex_t lock;
} design_pool;

static void *design_worker(void *arg)
{
    design_pool *D = arg;
    for (;;) {
        pthread_mutex_lock(&D->lock);
        size_t i = D->next++;
        pthread_mutex_unlock(&D->lock);
        if (i >= D->n) return NULL;
        D->st[i] = selected(D->o, D->ins[i].id) ? mmp_arith_design(&D->caps[i], &D->ins[i], D->o->n_random, D->o->seed)
                                               : MMP_STATUS_UNSUPPORTED;
    }
}

/* Capture every selected instruction on the GPU in a child process: <dir>/<id>.bin, or
 * <dir>/<id>.skip holding the reason. */
static int capture_in_child(const arith_opts *o, const char *dir, FILE *text)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return MMP_EXIT_ENVIRONMENT;
    if (pid == 0) {
        size_t n;
        const mmp_arith_instr *ins = mmp_arith_instrs(&n);
        mmp_capture *caps = calloc(n, sizeof *caps);
        mmp_status *dst = calloc(n, sizeof *dst);
        if (!caps || !dst) _exit(MMP_EXIT_INTERNAL);
        design_pool D = {o, ins, caps, dst, n, 0, PTHREAD_MUTEX_INITIALIZER};
        pthread_t th[32];
        int started = 0;
        for (int t = 1; t < o->threads && t < 32; t++)
            if (pthread_create(&th[started], NULL, design_worker, &D) == 0) started++;
        design_worker(&D);
        for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
        int failures = 0;
        for (size_t i = 0; i < n; i++) {
            if (!selected(o, ins[i].id)) continue;
            mmp_capture *cap = &caps[i];
            if (dst[i] != MMP_STATUS_OK) { failures++; continue; }
            mmp_status st = mmp_arith_capture_gpu(cap, &ins[i], 0);
            if (st == MMP_STATUS_NO_DEVICE) {
                fprintf(text, "# arith: no usable CUDA device: %s\n", mmp_error_last());
                fflush(NULL);
                _exit(MMP_EXIT_ENVIRONMENT);
            }
            char path[4096];
            if (st == MMP_STATUS_OK) {
                snprintf(path, sizeof path, "%s/%s.bin", dir, ins[i].id);
                st = mmp_capture_write_bin(path, cap);
            }
            if (st != MMP_STATUS_OK) {
                snprintf(path, sizeof path, "%s/%s.skip", dir, ins[i].id);
                FILE *f = fopen(path, "w");
                if (f) {
                    fprintf(f, "%s%s\n", st == MMP_STATUS_UNSUPPORTED ? "unsupported: " : "failed: ", mmp_error_last());
                    fclose(f);
                }
                if (st != MMP_STATUS_UNSUPPORTED) failures++;
            }
            mmp_capture_clear(cap);
        }
        fflush(NULL);
        _exit(failures ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : MMP_EXIT_INTERNAL;
}

/* One instruction's work: obtain the capture, store it, analyse. */
typedef struct job {
    const mmp_arith_instr *in;
    int state;                  /* 0 nothing (not selected / no data), 1 analysed, 2 skipped, 3 error */
    char msg[512];              /* skip reason or error */
    char table_line[320];       /* parameter table row to compare with */
    mmp_arith_report rep;
} job;

typedef struct pool {
    const arith_opts *o;
    const char *dir;            /* binary captures from the child, or NULL */
    job *jobs;
    size_t n, next;
    pthread_mutex_t lock;
} pool;

static void read_skip(job *j, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.skip", dir, j->in->id);
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fgets(j->msg, sizeof j->msg, f)) {
        j->msg[strcspn(j->msg, "\n")] = 0;
        j->state = strncmp(j->msg, "unsupported", 11) ? 3 : 2;
    }
    fclose(f);
}

static void run_job(const pool *P, job *j)
{
    const arith_opts *o = P->o;
    const mmp_arith_instr *in = j->in;
    mmp_capture cap;
    mmp_status st;
    const mmp_model_preset *row = NULL;
    if (o->synthetic) {
        row = mmp_model_preset_find(o->synthetic, in->id);
        int integer = mmp_arith_is_integer(in->in_format);
        if (!row && !integer) return;
        if ((st = mmp_arith_design(&cap, in, o->n_random, o->seed)) != MMP_STATUS_OK ||
            (st = mmp_arith_model_outputs(&cap, row ? &row->params : NULL)) != MMP_STATUS_OK) {
            j->state = 3;
            snprintf(j->msg, sizeof j->msg, "%s", mmp_error_last());
            return;
        }
        char desc[256];
        if (row) mmp_model_params_format(desc, sizeof desc, &row->params);
        else snprintf(desc, sizeof desc, "integer: exact sum, %s (PTX ISA)",
                      in->satfinite ? "clamped to int32" : "wrapped modulo 2^32");
        snprintf(cap.origin, sizeof cap.origin, "synthetic: %s model %s", row ? row->gpu : o->synthetic, desc);
        snprintf(cap.device, sizeof cap.device, "model");
        snprintf(cap.sass, sizeof cap.sass, "none (synthetic)");
    } else if (P->dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.bin", P->dir, in->id);
        if (access(path, R_OK) != 0) { read_skip(j, P->dir); return; }
        if ((st = mmp_capture_read_bin(&cap, path)) != MMP_STATUS_OK) {
            j->state = 3;
            snprintf(j->msg, sizeof j->msg, "%s", mmp_error_last());
            return;
        }
    } else {
        /* <id>.txt as --capture-dir writes it, else the first <name>-<id>.txt (stored
         * captures: h200-<id>.txt, synthetic-h200-<id>.txt) */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.txt", o->from_capture, in->id);
        if (access(path, R_OK) != 0) {
            glob_t gl;
            snprintf(path, sizeof path, "%s/*-%s.txt", o->from_capture, in->id);
            int found = glob(path, 0, NULL, &gl) == 0 && gl.gl_pathc > 0;
            if (found) snprintf(path, sizeof path, "%s", gl.gl_pathv[0]);
            globfree(&gl);
            if (!found) return;
        }
        if ((st = mmp_capture_read(&cap, path)) != MMP_STATUS_OK) {
            j->state = 3;
            snprintf(j->msg, sizeof j->msg, "%s", mmp_error_last());
            return;
        }
    }
    if (o->capture_dir && !o->from_capture) {
        char path[4096];
        if (o->synthetic) {
            snprintf(path, sizeof path, "%s/synthetic-%s-%s.txt", o->capture_dir, row ? row->gpu : o->synthetic, in->id);
            for (char *p = path + strlen(o->capture_dir); *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        } else {
            snprintf(path, sizeof path, "%s/%s.txt", o->capture_dir, in->id);
        }
        if (mmp_capture_write_subset(path, &cap, o->keep) != MMP_STATUS_OK)
            snprintf(j->msg, sizeof j->msg, "capture not stored: %s", mmp_error_last());
    }
    if (mmp_arith_analyse(&j->rep, &cap) == MMP_STATUS_OK) {
        j->state = 1;
        const mmp_model_preset *t = mmp_model_preset_find(table_gpu(cap.device), in->id);
        if (t && strncmp(cap.origin, "synthetic", 9)) {
            char d1[256];
            mmp_model_params_format(d1, sizeof d1, &t->params);
            snprintf(j->table_line, sizeof j->table_line, "parameter table (%s): %s", t->gpu, d1);
        }
    } else {
        j->state = 3;
        snprintf(j->msg, sizeof j->msg, "%s", mmp_error_last());
    }
    mmp_capture_clear(&cap);
}

static void *worker(void *arg)
{
    pool *P = arg;
    for (;;) {
        pthread_mutex_lock(&P->lock);
        size_t i = P->next++;
        pthread_mutex_unlock(&P->lock);
        if (i >= P->n) return NULL;
        run_job(P, &P->jobs[i]);
    }
}

/* The typed result of one job (state 1 analysed, 2 skipped, 3 failed). */
static mmp_status add_result(mmp_arith_results *out, const job *j)
{
    mmp_arith_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.instruction, sizeof r.instruction, "%s", j->in->id);
    r.state = j->state == 1 ? MMP_PROBE_STATE_ANALYSED : j->state == 2 ? MMP_PROBE_STATE_SKIPPED : MMP_PROBE_STATE_FAILED;
    snprintf(r.reason, sizeof r.reason, "%s", j->msg);
    if (j->state == 1) r.rep = j->rep;
    return mmp_arith_results_add(out, &r);
}

static int remove_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb; (void)ftw;
    return (type == FTW_DP ? rmdir(path) : unlink(path)) == 0 ? 0 : -1;
}

/* The child's scratch directory and what it holds (no shell, no symlink followed). */
static void remove_tree(const char *dir)
{
    if (nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "mmaprobe probe: could not remove %s: %s\n", dir, strerror(errno));
}

int mmp_probe_arith_run(mmp_arith_results *out, FILE *text, int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    arith_opts o = {NULL, NULL, NULL, NULL, 100000, (size_t)-1, 1, (int)(cpus > 32 ? 32 : cpus < 1 ? 1 : cpus)};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--capture-dir") && val) { o.capture_dir = val; i++; }
        else if (!strcmp(a, "--capture-keep") && val) { o.keep = strtoull(val, NULL, 10); i++; }
        else if (!strcmp(a, "--from-capture") && val) { o.from_capture = val; i++; }
        else if (!strcmp(a, "--synthetic") && val) { o.synthetic = val; i++; }
        else if (!strcmp(a, "--instr") && val) { o.instr = val; i++; }
        else if (!strcmp(a, "--random") && val) { o.n_random = strtoull(val, NULL, 10); i++; }
        else if (!strcmp(a, "--seed") && val) { o.seed = strtoull(val, NULL, 10); i++; }
        else if (!strcmp(a, "--threads") && val) { o.threads = atoi(val); i++; }
    }
    if (o.threads < 1) o.threads = 1;
    if (o.capture_dir && !o.from_capture) mkdir(o.capture_dir, 0755);
    char tmpdir[4096] = "";
    int rc = MMP_EXIT_PASS;
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!o.from_capture && !o.synthetic) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/mmaprobe-arith-XXXXXX");
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "mmaprobe probe: cannot create a temporary directory: %s\n", strerror(errno));
            return MMP_EXIT_ENVIRONMENT;
        }
        int crc = capture_in_child(&o, tmpdir, text ? text : stdout);
        if (crc == MMP_EXIT_ENVIRONMENT) {   /* no device: the group has no results */
            remove_tree(tmpdir);
            return MMP_EXIT_ENVIRONMENT;
        }
        if (crc != 0) rc = MMP_EXIT_FAIL;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t n;
    const mmp_arith_instr *ins = mmp_arith_instrs(&n);
    job *jobs = calloc(n, sizeof *jobs);
    if (!jobs) return MMP_EXIT_INTERNAL;
    size_t nj = 0;
    for (size_t i = 0; i < n; i++)
        if (selected(&o, ins[i].id)) jobs[nj++].in = &ins[i];
    pool P = {&o, tmpdir[0] ? tmpdir : NULL, jobs, nj, 0, PTHREAD_MUTEX_INITIALIZER};
    int nt = o.threads < (int)nj ? o.threads : (int)nj;
    pthread_t th[32];
    int started = 0;
    for (int t = 1; t < nt && t < 32; t++)
        if (pthread_create(&th[started], NULL, worker, &P) == 0) started++;
    worker(&P);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t2);
    int printed = 0;
    out->present = 1;
    for (size_t i = 0; i < nj; i++) {
        job *j = &jobs[i];
        if (j->state == 0) continue;
        if (add_result(out, j) != MMP_STATUS_OK) {
            fprintf(stderr, "mmaprobe probe: %s\n", mmp_error_last());
            rc = MMP_EXIT_INTERNAL;
        }
        if (j->state == 1) {
            if (text) {
                mmp_arith_report_print(text, &j->rep);
                if (j->table_line[0]) fprintf(text, "  %s\n", j->table_line);
                if (j->msg[0]) fprintf(text, "  note: %s\n", j->msg);
            }
            if (j->rep.total_mismatches) rc = rc ? rc : MMP_EXIT_FAIL;
            printed++;
        } else {
            if (text) fprintf(text, "== %s  not captured: %s\n", j->in->id, j->msg);
            if (j->state == 3) {
                fprintf(stderr, "mmaprobe probe: %s: %s\n", j->in->id, j->msg);
                rc = rc ? rc : (o.from_capture ? MMP_EXIT_USAGE : MMP_EXIT_FAIL);
            }
        }
    }
    if (text)
        fprintf(text, "# arith: %zu instructions, %zu random vectors each; capture %.2f s, host analysis %.2f s "
                      "(%d threads)\n", nj, o.n_random,
                (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
                (double)(t2.tv_sec - t1.tv_sec) + 1e-9 * (double)(t2.tv_nsec - t1.tv_nsec), nt);
    free(jobs);
    if (!printed && text) fprintf(text, "# arith: no instruction captured or analysed\n");
    if (tmpdir[0]) remove_tree(tmpdir);
    return printed ? rc : (rc ? rc : MMP_EXIT_ENVIRONMENT);
}
