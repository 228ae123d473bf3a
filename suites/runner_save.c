/* runner_save.c — a FAIL case's data for `validate --save-failures DIR` (CUTLASS's tests dump
 * A, B, the reference and the result of a failure the same way): in the case's process, once
 * its verdict is known and its buffers still exist (runner_case.c), the inputs as filled, the
 * kernel's output and the correctly rounded reference go to DIR/<ID, '/' -> '_'>/ as NumPy
 * .npy files (core/npy.c), with a README.txt saying what each is, how to re-run the case and
 * how to load them. Device-resident buffers are copied back for this one case only, and a
 * case whose files would pass MMP_SAVE_FAILURES_MAX_BYTES is not saved. Nothing here changes
 * the verdict: what was saved, or why not, is the last part of the case's message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mmaprobe/core.h"
#include "mmaprobe/npy.h"
#include "runner_internal.h"

/* The .npy type a storage format is saved as: its raw bits where NumPy has no such number. */
static const char *npy_descr(mmp_format f)
{
    switch (f) {
    case MMP_FORMAT_FP64: return "<f8";
    case MMP_FORMAT_FP32:
    case MMP_FORMAT_TF32: return "<f4";
    case MMP_FORMAT_FP16: return "<f2";
    case MMP_FORMAT_BF16: return "<u2";
    case MMP_FORMAT_INT32: return "<i4";
    case MMP_FORMAT_INT8:
    case MMP_FORMAT_INT4: return "|i1";
    default: return "|u1";   /* e4m3, e5m2, uint8, uint4 */
    }
}

/* The README's line on how a format's file decodes, or NULL when np.load gives the values. */
static const char *decode_note(mmp_format f)
{
    switch (f) {
    case MMP_FORMAT_BF16: return "bf16 stored as its raw bits (uint16): x = (a.astype(np.uint32) << 16).view(np.float32)";
    case MMP_FORMAT_E4M3: return "e4m3 stored as its raw bits (uint8): x = a.view(ml_dtypes.float8_e4m3fn).astype(np.float32)";
    case MMP_FORMAT_E5M2: return "e5m2 stored as its raw bits (uint8): x = a.view(ml_dtypes.float8_e5m2).astype(np.float32)";
    case MMP_FORMAT_TF32: return "tf32 stored as float32 (its 13 low significand bits are zero)";
    case MMP_FORMAT_INT4: return "int4 unpacked: one element per int8 (sign-extended; the kernel reads two per byte, low nibble first)";
    case MMP_FORMAT_UINT4: return "uint4 unpacked: one element per uint8 (the kernel reads two per byte, low nibble first)";
    default: return NULL;
    }
}

/* rows x cols of the span (b's layout and ld) packed in the layout's own order, so the file is
 * C order for a row-major matrix and Fortran order for a column-major one; 4-bit elements
 * widened to a byte each. */
static void pack(unsigned char *out, const unsigned char *span, const mmp_buffer *b, size_t item)
{
    const int row = b->l == MMP_LAYOUT_ROW, bits = mmp_format_get_info(b->f)->storage_bits;
    const int64_t outer = row ? b->rows : b->cols, inner = row ? b->cols : b->rows;
    for (int64_t x = 0; x < outer; x++) {
        unsigned char *o = out + (size_t)x * (size_t)inner * item;
        if (bits >= 8) {
            memcpy(o, span + (size_t)x * (size_t)b->ld * item, (size_t)inner * item);
            continue;
        }
        for (int64_t y = 0; y < inner; y++) {
            unsigned v = (unsigned)mmp_format_load_bits(span, (size_t)(x * b->ld + y), b->f);
            o[y] = (unsigned char)(b->f == MMP_FORMAT_INT4 && (v & 8) ? v | 0xF0u : v);
        }
    }
}

typedef struct save_ctx {
    char dir[4096];
    void *stream;
} save_ctx;

/* The span (host, or device when on_device) of matrix b saved as dir/name.npy. */
static mmp_status save_matrix(const save_ctx *s, const char *name, const mmp_buffer *b, const void *span, int on_device)
{
    const char *descr = npy_descr(b->f);
    const size_t item = mmp_npy_item_bytes(descr);
    void *host = NULL, *packed = malloc((size_t)b->rows * (size_t)b->cols * item + 1);
    mmp_status st = packed ? MMP_STATUS_OK : MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory", name);
    if (st == MMP_STATUS_OK && on_device) {
#ifdef MMP_HAVE_CUDA
        host = malloc(b->data_bytes);
        st = host ? mmp_runner_dev_download(host, span, b->data_bytes, s->stream)
                  : MMP_ERR(MMP_STATUS_NO_MEMORY, "%s: out of memory", name);
        span = host;
#else
        st = MMP_ERR(MMP_STATUS_INTERNAL, "%s on a device in a build without CUDA", name);
#endif
    }
    if (st == MMP_STATUS_OK) {
        pack(packed, span, b, item);
        mmp_npy_array a = {"", b->l == MMP_LAYOUT_COL, 2, {b->rows, b->cols}};
        snprintf(a.descr, sizeof a.descr, "%s", descr);
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.npy", s->dir, name);
        st = mmp_npy_write(path, &a, packed);
    }
    free(host);
    free(packed);
    return st;
}

/* An M x N row-major array of doubles of the reference (host, or device when on_device). */
static mmp_status save_reference(const save_ctx *s, const char *name, const double *v, int on_device, int64_t m, int64_t n)
{
    mmp_buffer b;
    memset(&b, 0, sizeof b);
    b.f = MMP_FORMAT_FP64;
    b.l = MMP_LAYOUT_ROW;
    b.rows = m;
    b.cols = b.ld = n;
    b.data_bytes = (size_t)m * (size_t)n * sizeof(double);
    return save_matrix(s, name, &b, v, on_device);
}

/* The case ID as one directory name: '/' (and anything a shell or a file system minds) '_'. */
static void dir_name(char *out, size_t size, const char *id)
{
    size_t k = 0;
    for (const char *p = id; *p && k + 1 < size && k < 200; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("._,+=-", *p);
        out[k] = ok && !(k == 0 && *p == '.') ? *p : '_';
        k++;
    }
    out[k] = '\0';
}

typedef struct readme_job {
    const mmp_case_result *r;
    const mmp_case *c;
    const mmp_runner_options *o;
    const mmp_failure_data *f;
    const char *message, *dir;
} readme_job;

static mmp_status write_readme(FILE *out, void *ctx)
{
    const readme_job *j = ctx;
    const mmp_case *c = j->c;
    char why[200], quoted[1200];
    size_t q = 0;
    quoted[q++] = '\'';   /* the ID in single quotes, a quote in it as '\'' */
    for (const char *p = c->id; *p && q + 6 < sizeof quoted; p++) {
        if (*p == '\'') { memcpy(quoted + q, "'\\''", 4); q += 4; }
        else quoted[q++] = *p;
    }
    quoted[q++] = '\'';
    quoted[q] = '\0';
    fprintf(out, "case: %s\nverdict: %s (%s)\nmessage: %s\n", c->id, mmp_verdict_name(j->r->verdict),
            mmp_reason_format(why, sizeof why, j->r->reasons), j->message);
    fprintf(out, "re-run: mmaprobe validate --case %s%s\n", quoted, j->o->rerun_options ? j->o->rerun_options : "");
    fprintf(out, "first failing element (i, j): (%lld, %lld)\nalpha = %.17g, beta = %.17g\n\n",
            (long long)j->r->metrics.first_bad_i, (long long)j->r->metrics.first_bad_j, c->alpha, c->beta);
    fprintf(out, "files (shape (rows, cols); fortran_order True where the kernel's matrix is column-major; ld padding dropped):\n");
    static const char *const what[4] = {"input A (as filled, before the launches)", "input B (as filled)",
                                        "input C (as filled)",
                                        "the kernel's output of its second launch, as written (the two launches are\n"
                                        "                      compared bitwise; unwritten elements hold the poison NaN or sentinel)"};
    for (int mat = 0; mat < 4; mat++) {
        const mmp_buffer *b = &j->f->buf[mat];
        if (mat == 2 && !j->f->have_c) continue;
        fprintf(out, "  %s.npy             %lld x %lld %s %s: %s\n", mat == 0 ? "A" : mat == 1 ? "B" : mat == 2 ? "C" : "D",
                (long long)b->rows, (long long)b->cols, mmp_format_name(b->f), b->l == MMP_LAYOUT_ROW ? "row" : "col",
                what[mat]);
    }
    fprintf(out, "  reference.npy     %lld x %lld float64: the exact result correctly rounded to %s (what D should hold)\n"
                 "  reference_f64.npy %lld x %lld float64: the exact result correctly rounded to binary64\n",
            (long long)c->m, (long long)c->n, mmp_format_name(j->f->buf[3].f), (long long)c->m, (long long)c->n);
    int said = 0;
    for (int mat = 0; mat < 4; mat++) {
        const char *note = mat != 2 || j->f->have_c ? decode_note(j->f->buf[mat].f) : NULL;
        if (!note) continue;
        int dup = 0;
        for (int e = 0; e < mat; e++) dup |= j->f->buf[e].f == j->f->buf[mat].f;
        if (dup) continue;
        fprintf(out, "%s  %s\n", said++ ? "" : "\ndtypes (ml_dtypes: pip install ml_dtypes):\n", note);
    }
    fprintf(out, "\nload (Python, NumPy):\n  python3 -c \"import numpy as np, glob, os; m = {os.path.basename(f)[:-4]: np.load(f) "
                 "for f in glob.glob('%s/*.npy')}; print({k: (v.dtype, v.shape) for k, v in m.items()})\"\n", j->dir);
    return MMP_STATUS_OK;
}

/* Bytes of the files' data: the four matrices (4-bit widened) and the two references. */
static uint64_t data_bytes(const mmp_failure_data *f, const mmp_case *c)
{
    uint64_t total = 2 * (uint64_t)c->m * (uint64_t)c->n * sizeof(double);
    for (int mat = 0; mat < 4; mat++)
        if (mat != 2 || f->have_c)
            total += (uint64_t)f->buf[mat].rows * (uint64_t)f->buf[mat].cols * mmp_npy_item_bytes(npy_descr(f->buf[mat].f));
    return total;
}

static mmp_status save_all(const save_ctx *s, const mmp_failure_data *f, const mmp_case *c)
{
    static const char *const names[3] = {"A", "B", "C"};
    for (int mat = 0; mat < 3; mat++) {
        const mmp_buffer *b = &f->buf[mat];
        if (mat == 2 && !f->have_c) continue;
        const void *span = f->inputs_on_device ? (const unsigned char *)b->dev_pristine + MMP_GUARD_BYTES : mmp_buffer_filled(b);
        if (!span) return MMP_ERR(MMP_STATUS_INTERNAL, "input %s has no data", names[mat]);
        MMP_TRY(save_matrix(s, names[mat], b, span, f->inputs_on_device));
    }
    if (!f->got) return MMP_ERR(MMP_STATUS_INTERNAL, "the output was not kept");
    MMP_TRY(save_matrix(s, "D", &f->buf[3], f->got, f->got_on_device));
    const mmp_ref *ref = f->ref;
    int dev = !ref->want_out;
    const double *want = dev ? ref->dev_want_out : ref->want_out, *exact = dev ? ref->dev_exact : ref->exact;
    if (!want || !exact) return MMP_ERR(MMP_STATUS_INTERNAL, "the reference was not kept");
    MMP_TRY(save_reference(s, "reference", want, dev, c->m, c->n));
    return save_reference(s, "reference_f64", exact, dev, c->m, c->n);
}

void mmp_runner_save_failure(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o,
                             const mmp_failure_data *f)
{
    char name[256], message[sizeof r->message];
    snprintf(message, sizeof message, "%s", r->message);
    dir_name(name, sizeof name, c->id);
    save_ctx s;
    s.stream = f->stream;
    int n = snprintf(s.dir, sizeof s.dir, "%s/%s", o->save_failures, name);
    uint64_t bytes = data_bytes(f, c), limit = MMP_SAVE_FAILURES_MAX_BYTES;
    const char *fault = getenv("MMP_FAULT_SAVE_LIMIT");   /* tests: a small limit, to see it hold */
    if (fault && *fault) limit = strtoull(fault, NULL, 10);
    mmp_status st = MMP_STATUS_OK;
    if (n < 0 || (size_t)n >= sizeof s.dir) st = MMP_ERR(MMP_STATUS_IO, "the path is too long");
    else if (bytes > limit)
        st = MMP_ERR(MMP_STATUS_NO_MEMORY, "%llu bytes of data, above the limit of %llu bytes per case",
                     (unsigned long long)bytes, (unsigned long long)limit);
    else if (mkdir(s.dir, 0777) != 0 && errno != EEXIST)
        st = MMP_ERR(MMP_STATUS_IO, "cannot make %s: %s", s.dir, strerror(errno));
    if (st == MMP_STATUS_OK) st = save_all(&s, f, c);
    if (st == MMP_STATUS_OK) {
        readme_job j = {r, c, o, f, message, s.dir};
        char path[4200];
        snprintf(path, sizeof path, "%s/README.txt", s.dir);
        st = mmp_file_write_atomic(path, write_readme, &j);
    }
    if (st == MMP_STATUS_OK) mmp_runner_say(r, "failure data in %s/", s.dir);
    else mmp_runner_say(r, "failure data not saved: %s", mmp_error_last());
}
