/* arith_cli.c — `mmaprobe probe --arith`: design, capture (GPU, in a forked child), analyse.
 *
 * Options (after --arith is chosen by probes/cli_probe.c):
 *   --capture-dir D     write each capture to D/<instruction>.txt
 *   --from-capture D    analyse D/<instruction>.txt instead of running the GPU
 *   --synthetic GPU     outputs from the parameter-table model of GPU (no device needed)
 *   --instr ID          only this instruction (repeatable as a comma list)
 *   --random N          random vectors per instruction (default 100000; half bit patterns)
 *   --seed S            seed of the random vectors (default 1)
 * CUDA is used only in a forked child that writes the captures to files.
 */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmaprobe/cli.h"
#include "mmaprobe/probe.h"
#include "probes/arith_internal.h"

#ifndef MMP_HAVE_CUDA
mmp_status mmp_arith_capture_gpu(mmp_capture *cap, const mmp_arith_instr *in, int dev)
{
    (void)cap; (void)dev;
    return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s: this build has no CUDA", in->id);
}
#endif

typedef struct arith_opts {
    const char *capture_dir, *from_capture, *synthetic, *instr;
    size_t n_random;
    uint64_t seed;
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

/* Capture every selected instruction on the GPU in a child process; files in dir. */
static int capture_in_child(const arith_opts *o, const char *dir, FILE *text)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return MMP_EXIT_ENVIRONMENT;
    if (pid == 0) {
        size_t n;
        const mmp_arith_instr *ins = mmp_arith_instrs(&n);
        int failures = 0;
        for (size_t i = 0; i < n; i++) {
            if (!selected(o, ins[i].id)) continue;
            mmp_capture cap;
            if (mmp_arith_design(&cap, &ins[i], o->n_random, o->seed) != MMP_STATUS_OK) { failures++; continue; }
            mmp_status st = mmp_arith_capture_gpu(&cap, &ins[i], 0);
            if (st == MMP_STATUS_NO_DEVICE) {
                fprintf(text, "# arith: no usable CUDA device: %s\n", mmp_error_last());
                mmp_capture_clear(&cap);
                fflush(NULL);
                _exit(MMP_EXIT_ENVIRONMENT);
            }
            if (st == MMP_STATUS_OK) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s.txt", dir, ins[i].id);
                st = mmp_capture_write(&cap, path);
            }
            if (st != MMP_STATUS_OK) {
                fprintf(text, "# %s: not captured: %s\n", ins[i].id, mmp_error_last());
                if (st != MMP_STATUS_UNSUPPORTED) failures++;
            }
            mmp_capture_clear(&cap);
        }
        fflush(NULL);
        _exit(failures ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : MMP_EXIT_INTERNAL;
}

int mmp_probe_arith_run(FILE *text, FILE *json, int argc, char **argv)
{
    arith_opts o = {NULL, NULL, NULL, NULL, 100000, 1};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--capture-dir") && val) { o.capture_dir = val; i++; }
        else if (!strcmp(a, "--from-capture") && val) { o.from_capture = val; i++; }
        else if (!strcmp(a, "--synthetic") && val) { o.synthetic = val; i++; }
        else if (!strcmp(a, "--instr") && val) { o.instr = val; i++; }
        else if (!strcmp(a, "--random") && val) { o.n_random = strtoull(val, NULL, 10); i++; }
        else if (!strcmp(a, "--seed") && val) { o.seed = strtoull(val, NULL, 10); i++; }
    }
    char tmpdir[4096] = "";
    const char *dir = o.from_capture;
    int rc = MMP_EXIT_PASS;
    if (!dir && !o.synthetic) {
        if (o.capture_dir) {
            mkdir(o.capture_dir, 0755);
            dir = o.capture_dir;
        } else {
            snprintf(tmpdir, sizeof tmpdir, "/tmp/mmaprobe-arith-XXXXXX");
            if (!mkdtemp(tmpdir)) {
                fprintf(stderr, "mmaprobe probe: cannot create a temporary directory: %s\n", strerror(errno));
                return MMP_EXIT_ENVIRONMENT;
            }
            dir = tmpdir;
        }
        int crc = capture_in_child(&o, dir, text ? text : stdout);
        if (crc == MMP_EXIT_ENVIRONMENT) {
            if (json) fprintf(json, "  \"arith\": null");
            if (tmpdir[0]) rmdir(tmpdir);
            return MMP_EXIT_ENVIRONMENT;
        }
        if (crc != 0) rc = MMP_EXIT_FAIL;
    }
    size_t n;
    const mmp_arith_instr *ins = mmp_arith_instrs(&n);
    int printed = 0;
    if (json) fprintf(json, "  \"arith\": [\n");
    mmp_arith_report *reps = calloc(n, sizeof *reps);
    if (!reps) return MMP_EXIT_INTERNAL;
    size_t nrep = 0;
    for (size_t i = 0; i < n; i++) {
        if (!selected(&o, ins[i].id)) continue;
        mmp_capture cap;
        mmp_status st;
        if (o.synthetic) {
            const mmp_model_preset *row = mmp_model_preset_find(o.synthetic, ins[i].id);
            int integer = mmp_arith_is_integer(ins[i].in_format);
            if (!row && !integer) continue;
            if ((st = mmp_arith_design(&cap, &ins[i], o.n_random, o.seed)) != MMP_STATUS_OK ||
                (st = mmp_arith_model_outputs(&cap, row ? &row->params : NULL)) != MMP_STATUS_OK) {
                fprintf(stderr, "mmaprobe probe: %s: %s\n", ins[i].id, mmp_error_last());
                rc = MMP_EXIT_INTERNAL;
                continue;
            }
            char desc[256];
            if (row) mmp_model_params_format(desc, sizeof desc, &row->params);
            else snprintf(desc, sizeof desc, "integer: exact sum, %s (PTX ISA)",
                          ins[i].satfinite ? "clamped to int32" : "wrapped modulo 2^32");
            snprintf(cap.origin, sizeof cap.origin, "synthetic: %s model %s", row ? row->gpu : o.synthetic, desc);
            snprintf(cap.device, sizeof cap.device, "model");
            snprintf(cap.sass, sizeof cap.sass, "none (synthetic)");
            if (o.capture_dir) {
                char path[4096];
                mkdir(o.capture_dir, 0755);
                snprintf(path, sizeof path, "%s/synthetic-%s-%s.txt", o.capture_dir, row ? row->gpu : o.synthetic, ins[i].id);
                for (char *p = path + strlen(o.capture_dir); *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
                if (mmp_capture_write(&cap, path) != MMP_STATUS_OK)
                    fprintf(stderr, "mmaprobe probe: %s\n", mmp_error_last());
            }
        } else {
            /* <id>.txt as the GPU step writes it, else the first <name>-<id>.txt (stored
             * captures: h200-<id>.txt, synthetic-h200-<id>.txt) */
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.txt", dir, ins[i].id);
            if (access(path, R_OK) != 0) {
                glob_t gl;
                snprintf(path, sizeof path, "%s/*-%s.txt", dir, ins[i].id);
                int found = glob(path, 0, NULL, &gl) == 0 && gl.gl_pathc > 0;
                if (found) snprintf(path, sizeof path, "%s", gl.gl_pathv[0]);
                globfree(&gl);
                if (!found) continue;
            }
            if ((st = mmp_capture_read(&cap, path)) != MMP_STATUS_OK) {
                fprintf(stderr, "mmaprobe probe: %s\n", mmp_error_last());
                rc = MMP_EXIT_USAGE;
                continue;
            }
        }
        if (mmp_arith_analyse(&reps[nrep], &cap) == MMP_STATUS_OK) {
            if (text) mmp_arith_report_print(text, &reps[nrep]);
            const mmp_model_preset *row = mmp_model_preset_find(table_gpu(cap.device), ins[i].id);
            if (text && row && strncmp(cap.origin, "synthetic", 9)) {
                char d1[256];
                mmp_model_params_format(d1, sizeof d1, &row->params);
                fprintf(text, "  parameter table (%s): %s\n", row->gpu, d1);
            }
            if (reps[nrep].total_mismatches) rc = rc ? rc : MMP_EXIT_FAIL;
            nrep++;
            printed++;
        }
        mmp_capture_clear(&cap);
    }
    for (size_t i = 0; json && i < nrep; i++) mmp_arith_report_json(json, &reps[i], i + 1 == nrep);
    if (json) fprintf(json, "  ]");
    free(reps);
    if (!printed && text) fprintf(text, "# arith: no instruction captured or analysed\n");
    if (tmpdir[0]) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0) fprintf(stderr, "mmaprobe probe: could not remove %s\n", tmpdir);
    }
    return printed ? rc : (rc ? rc : MMP_EXIT_ENVIRONMENT);
}
