/* cli/args_files.c — the files and directories the options name, checked before anything runs
 * (cli/args.h): a bad one is one line naming the option and the reason, never a run that
 * silently ignores it (`--acc-model /etc/passwd` used to fall back to the bound) nor one that
 * blocks on it (a FIFO). Input problems exit 2; an output directory that cannot be made, 3. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "mmaprobe/json.h"
#include "mmaprobe/model.h"
#include "mmaprobe/sysio.h"

#define BAD(...) MMP_ERR(MMP_STATUS_INVALID, __VA_ARGS__)

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a > b && !strcmp(s + a - b, suffix);
}

/* A regular file that can be read (O_NONBLOCK: a FIFO is refused, not waited on). */
static mmp_status check_input_file(const char *opt, const char *path)
{
    const char *kind;
    int fd = mmp_file_open_regular(path, &kind);
    if (fd < 0) {
        int e = errno;
        if (kind) return BAD("bad %s '%s': not a regular file (%s)", opt, path, kind);
        return MMP_ERR(mmp_file_open_status(e), "bad %s '%s': %s", opt, path, strerror(e));
    }
    struct stat sb;
    int big = fstat(fd, &sb) == 0 && (uint64_t)sb.st_size > (uint64_t)MMP_JSON_MAX_SIZE;
    close(fd);
    if (big) return BAD("bad %s '%s': larger than the %u-byte limit", opt, path, MMP_JSON_MAX_SIZE);
    return MMP_STATUS_OK;
}

/* The accumulator model the runner would use: a GPU of the table, or a probe JSON holding a
 * model for at least one tensor-core input / accumulator pair. */
static mmp_status check_acc_model(const char *m)
{
    if (mmp_args_is_gpu(m)) return MMP_STATUS_OK;
    if (!ends_with(m, ".json"))
        return BAD("bad --acc-model '%s': neither a GPU of the model table (%s) nor a probe JSON file (FILE.json, "
                   "as `mmaprobe probe --arith --json FILE.json` writes it)", m, mmp_args_gpu_names());
    MMP_TRY(check_input_file("--acc-model", m));
    static const mmp_format ins[] = {MMP_FORMAT_FP16, MMP_FORMAT_BF16, MMP_FORMAT_TF32, MMP_FORMAT_E4M3, MMP_FORMAT_E5M2};
    static const mmp_format outs[] = {MMP_FORMAT_FP32, MMP_FORMAT_FP16};
    for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++)
        for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++) {
            mmp_model_params p;
            double u = 0;
            char instr[48];
            mmp_status st = mmp_model_bound_for_kernel(&p, &u, instr, sizeof instr, m, ins[i], outs[o], 0);
            if (st == MMP_STATUS_OK) return MMP_STATUS_OK;
            if (st != MMP_STATUS_UNSUPPORTED) return BAD("bad --acc-model '%s': %s", m, mmp_error_last());
        }
    return BAD("bad --acc-model '%s': no accumulator model in it (no probes.arith entry with a \"model\" object, "
               "as `mmaprobe probe --arith --json FILE.json` writes it)", m);
}

mmp_status mmp_validate_args_check_inputs(const mmp_validate_args *a)
{
    if (a->o.acc_model) MMP_TRY(check_acc_model(a->o.acc_model));
    return MMP_STATUS_OK;
}

mmp_status mmp_validate_args_make_dirs(const mmp_validate_args *a)
{
    const char *dir = a->o.save_failures;
    if (!dir) return MMP_STATUS_OK;
    char p[4096];
    if (strlen(dir) >= sizeof p) return MMP_ERR(MMP_STATUS_IO, "cannot write --save-failures '%s': path too long", dir);
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {   /* each ancestor, then the directory itself */
        int end = *s == '\0';
        if (*s != '/' && !end) continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return MMP_ERR(MMP_STATUS_IO, "cannot write --save-failures '%s': cannot make %s: %s", dir, p, strerror(errno));
        if (end) break;
        *s = '/';
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return MMP_ERR(MMP_STATUS_IO, "cannot write --save-failures '%s': not a directory", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return MMP_ERR(MMP_STATUS_IO, "cannot write --save-failures '%s': %s", dir, strerror(errno));
    return MMP_STATUS_OK;
}

/* An existing directory (the captures to read). */
static mmp_status check_input_dir(const char *opt, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return MMP_ERR(mmp_file_open_status(errno), "bad %s '%s': %s", opt, path, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) return BAD("bad %s '%s': not a directory", opt, path);
    return MMP_STATUS_OK;
}

/* A directory, or a path whose nearest existing ancestor is one (the probe makes the rest). */
static mmp_status check_output_dir(const char *opt, const char *path)
{
    char p[4096];
    if (strlen(path) >= sizeof p) return MMP_ERR(MMP_STATUS_IO, "cannot write %s '%s': path too long", opt, path);
    snprintf(p, sizeof p, "%s", path);
    for (;;) {
        struct stat sb;
        if (stat(p, &sb) == 0) {
            if (S_ISDIR(sb.st_mode)) return MMP_STATUS_OK;
            return MMP_ERR(MMP_STATUS_IO, "cannot write %s '%s': %s is not a directory", opt, path, p);
        }
        if (errno != ENOENT) return MMP_ERR(MMP_STATUS_IO, "cannot write %s '%s': %s", opt, path, strerror(errno));
        char *slash = strrchr(p, '/');
        while (slash && slash > p && slash[1] == '\0') {   /* "dir/" */
            *slash = '\0';
            slash = strrchr(p, '/');
        }
        if (!slash) return MMP_STATUS_OK;                  /* relative: the working directory */
        if (slash == p) return MMP_STATUS_OK;              /* "/x": the root */
        *slash = '\0';
    }
}

mmp_status mmp_probe_args_check_files(const mmp_probe_args *a)
{
    for (int i = 0; i < a->n_paths; i++) {
        const char *o = a->path_opt[i], *val = a->path_val[i];
        if (!strcmp(o, "--ncu")) {
            struct stat sb;
            if (stat(val, &sb) != 0) return BAD("bad --ncu '%s': %s", val, strerror(errno));
            if (!S_ISREG(sb.st_mode) || access(val, X_OK) != 0) return BAD("bad --ncu '%s': not an executable file", val);
        } else if (!strcmp(o, "--from-capture")) {
            MMP_TRY(check_input_dir(o, val));
        } else {
            MMP_TRY(check_output_dir(o, val));
        }
    }
    return MMP_STATUS_OK;
}
