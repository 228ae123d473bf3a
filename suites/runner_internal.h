/* suites/runner_internal.h — the runner's internal pieces (not installed, not plugin ABI):
 * distributions' per-case parameters, guarded buffers, the reference/compare step.
 *
 *   mmp_dist_ctx x; mmp_dist_ctx_init(&x, &case);
 *   double v = mmp_dist_value(&x, MMP_MAT_A, i, k);          // before rounding to A's format
 *   mmp_buffer b; mmp_buffer_init(&b, fmt, layout, ld, rows, cols); ... mmp_buffer_clear(&b);
 */
#ifndef MMAPROBE_RUNNER_INTERNAL_H
#define MMAPROBE_RUNNER_INTERNAL_H

#include "mmaprobe/metrics.h"
#include "mmaprobe/reference.h"
#include "mmaprobe/runner.h"
#include "dist_hd.h"
#include "runner_alt_hd.h"

#ifdef __cplusplus
extern "C" {
#endif


/* ---- dist.c (the context and the element function: dist_hd.h) ---- */
void mmp_dist_ctx_init(mmp_dist_ctx *x, const mmp_case *c);
/* The value of element (i, j) of matrix mat (before rounding to its storage format). */
double mmp_dist_value(const mmp_dist_ctx *x, int mat, int64_t i, int64_t j);
/* The case's data key: the ID without the kernel name and the seed (same data for every kernel
 * of one precision), hashed. */
uint64_t mmp_case_stream(const mmp_case *c);

/* ---- buffer.c: a host image  guard | data (ld padding included) | guard  ---- */
#define MMP_GUARD_BYTES 4096
#define MMP_CANARY_BYTE 0xC5

typedef struct mmp_buffer {
    unsigned char *image;          /* guard + data + guard, 4096-aligned */
    unsigned char *pristine;       /* copy of the image as filled before the launch */
    size_t data_bytes, total;
    size_t span;                   /* elements spanned (incl. ld padding) */
    mmp_format f;
    mmp_layout l;
    int64_t ld, rows, cols;
    void *dev;                     /* device copy of the image (CUDA) or NULL */
    void *dev_pristine;            /* resident buffers: the pristine image on the device */
} mmp_buffer;

mmp_status mmp_buffer_init(mmp_buffer *b, mmp_format f, mmp_layout l, int64_t ld, int64_t rows,
                           int64_t cols);
void mmp_buffer_clear(mmp_buffer *b);
static inline void *mmp_buffer_host(mmp_buffer *b) { return b->image + MMP_GUARD_BYTES; }
/* The data as filled before the launch (the pristine copy when kept), NULL without an image. */
static inline const void *mmp_buffer_filled(const mmp_buffer *b)
{
    if (!b || !b->image) return NULL;
    return (b->pristine ? b->pristine : b->image) + MMP_GUARD_BYTES;
}
void *mmp_buffer_kernel_ptr(mmp_buffer *b);
/* Create this process's CUDA context for the case's device now (a kernel's forked child,
 * before its first case); its milliseconds, 0 for host kernels or without a device. */
double mmp_runner_warm_up(const mmp_case *c, const mmp_runner_options *o);

/* ---- per-element stages (runner_stages.c) ---- */
/* Poison (float outputs, run 0 and 1 alike) and the two sentinels (integer outputs), as bits. */
uint64_t mmp_runner_poison_bits(mmp_format f, int run);
int mmp_runner_bits_equal(uint64_t x, uint64_t y, mmp_format f);   /* NaN == NaN of any payload */
/* Lines (rows of a row-major buffer, columns of a column-major one) per chunk: ~64K elements. */
int64_t mmp_runner_line_chunk(int64_t inner);
/* dst = src (src != NULL) or every byte = value, on every core (fixed chunks). */
void mmp_runner_bytes(void *dst, const void *src, int value, size_t bytes);
/* Buffer b's data (not its guards) filled with operand mat of the distribution x, as a pure
 * function of each element: the same bytes on any thread count (sub-byte formats share bytes
 * between neighbours, so those are filled by one thread). */
void mmp_runner_fill(mmp_buffer *b, const mmp_dist_ctx *x, int mat);
void mmp_buffer_fill_canary(mmp_buffer *b);   /* every byte (guards, data, padding) = canary */
void mmp_buffer_fill_logical_bits(mmp_buffer *b, uint64_t bits);   /* every element = bits (runner_stages.c) */
void mmp_buffer_snapshot(mmp_buffer *b);      /* pristine = image */
void mmp_buffer_restore(mmp_buffer *b);       /* image = pristine */

typedef struct mmp_damage {
    int64_t guard_bytes;           /* guard bytes changed */
    long long first_guard;         /* offset from the data start (negative: before) */
    int64_t padding;               /* ld padding elements changed */
    int64_t pad_i, pad_j;          /* first one as (index / ld, index % ld) */
    int64_t logical;               /* logical elements changed (inputs) */
    int64_t log_i, log_j;
} mmp_damage;
/* Compare the image with pristine: guards, padding, and (if logical) the matrix elements. */
void mmp_buffer_damage(mmp_damage *dmg, const mmp_buffer *b, int logical);

#ifdef MMP_HAVE_CUDA
mmp_status mmp_buffer_upload(mmp_buffer *b);   /* allocate (once) and copy the image over */
mmp_status mmp_buffer_download(mmp_buffer *b); /* image = device copy */
/* Resident buffers (a device case's stages on the device: buffer.c, runner_dev.cu). After
 * mmp_buffer_init: dev_init allocates the device image and its pristine copy (the host keeps
 * only its image); the rest are queued on stream. fill writes operand mat of x into the data
 * (padding untouched), fill_bits every element; damage is mmp_buffer_damage on the device;
 * download copies the data (no guards) to dst and waits. */
mmp_status mmp_buffer_dev_init(mmp_buffer *b);
mmp_status mmp_buffer_dev_canary(mmp_buffer *b, void *stream);
mmp_status mmp_buffer_dev_fill(mmp_buffer *b, const mmp_dist_ctx *x, int mat, void *stream);
mmp_status mmp_buffer_dev_fill_bits(mmp_buffer *b, uint64_t bits, void *stream);
mmp_status mmp_buffer_dev_snapshot(mmp_buffer *b, void *stream);
mmp_status mmp_buffer_dev_restore(mmp_buffer *b, void *stream);
mmp_status mmp_buffer_dev_damage(mmp_damage *dmg, const mmp_buffer *b, int logical, void *stream);
mmp_status mmp_buffer_dev_download(void *dst, const mmp_buffer *b, void *stream);
/* bytes of device memory at src to the host (queued on stream, then waited for) */
mmp_status mmp_runner_dev_download(void *dst, const void *src, size_t bytes, void *stream);
#endif

/* ---- runner_ref.c (reference), runner_check.c (metrics, verdict reasons) ---- */
typedef struct mmp_ref {
    mmp_ref_result res;            /* owns the arrays below */
    int64_t n_mpfr, n_exact, n_dot;
    double *exact;                 /* alpha*sum + beta*c (long double sums), M x N row-major */
    double *absdot;                /* |alpha| sum |a||b| + |beta||c| */
    double *want_out;              /* exact rounded to the output format (nearest even) */
    int int_acc;                   /* integer accumulator: results are exact */
    /* keep_device (the comparison on the device): the three arrays there, the host ones NULL;
     * NULL when the reference could not keep them (its CPU path, integer inputs) */
    const double *dev_exact, *dev_absdot, *dev_want_out;
} mmp_ref;
/* keep_device: ask the device path to leave its result on the device (resident buffers);
 * host_operands (or NULL): fills the host copies of a, b, cc before the reference reads them. */
mmp_status mmp_ref_compute(mmp_ref *ref, const mmp_case *c, mmp_buffer *a, mmp_buffer *b,
                           mmp_buffer *cc, int device, int keep_device, mmp_status (*host_operands)(void *),
                           void *host_ctx);
/* Unwritten (poison in either run; integers: both sentinels) and nondeterministic (runs differ)
 * elements of the two outputs; unwritten ones are set to the reference's value in out[0] so they
 * are reported once. Counts into r, the row-major first positions into un_ / nd_. */
mmp_status mmp_runner_scan_outputs(mmp_case_result *r, int64_t *un_i, int64_t *un_j, int64_t *nd_i,
                                   int64_t *nd_j, uint8_t *un_marks, void **out, const mmp_ref *ref, const mmp_case *c);
/* un_marks (MMP_HEAT_MAX^2 cells, or NULL): the heatmap cells (shape min(M,64) x min(N,64), as
 * the metrics make it) holding an unwritten element, MMP_HEAT_MARK_UNWRITTEN; merged into the
 * metrics' marks once they are computed (the comparison sees those elements as correct). */
void mmp_runner_heat_unwritten(mmp_case_result *r, const uint8_t *un_marks);
/* D's guard and ld-padding damage of each run (NULL: none) as guard marks of the heatmap; after
 * the comparison, in the host and the device path alike. */
void mmp_runner_heat_guard(mmp_case_result *r, const mmp_case *c, const mmp_damage *run0, const mmp_damage *run1);
void mmp_ref_clear(mmp_ref *ref);
/* The scan's reasons and message parts (unwritten; nondeterministic unless declared so). */
/* A case failing only because elements are unwritten has its first failing position (the
 * heatmap's and the reports' marker) at the first unwritten element: call after the metrics. */
void mmp_runner_first_bad_unwritten(mmp_case_result *r, int64_t un_i, int64_t un_j);
void mmp_runner_say_scan(mmp_case_result *r, const mmp_case *c, int64_t un_i, int64_t un_j, int64_t nd_i,
                         int64_t nd_j);
/* Compare got (D's data in the case's layout and ldd) with the reference; fill r's metrics,
 * reasons and message. */
void mmp_check_output(mmp_case_result *r, const mmp_case *c, const mmp_ref *ref, const void *got,
                      const mmp_runner_options *o, const mmp_buffer *ops);
/* The metrics' input of a case (runner_check.c): formats, units (a fitted model's where
 * o->acc_model has the instruction: r->tolerance says so), the host reference arrays. */
void mmp_check_input_init(mmp_metrics_input *in, mmp_case_result *r, const mmp_case *c, const mmp_ref *ref,
                          const void *got, const mmp_runner_options *o);
/* The NaN/Inf excuse's input (runner_alt_hd.h) of a case whose filled inputs are a, b, cc (host
 * or device pointers; cc NULL without C). */
void mmp_check_alt_init(mmp_alt_in *x, const mmp_case *c, const void *a, const void *b, const void *cc);
/* The reasons and message parts of a comparison, from its facts (host or device comparison). */
void mmp_check_say_nan(mmp_case_result *r, int64_t i, int64_t j, double g, double w);
void mmp_check_say_exact(mmp_case_result *r, int64_t bad, int64_t i, int64_t j, double g, double w);
void mmp_check_say_bound(mmp_case_result *r, int64_t finite_bad, const mmp_runner_options *o);
/* runner_verdict.c (ops: the A, B, C buffers; their pristine images are read) */
int mmp_check_is_narrow(const mmp_kernel_desc *k);
/* Narrow accumulator against the tensor-core model: elements beyond its tolerance marked in bad,
 * their count (or 1 for a norm failure) returned; -1 when no model applies (message says so). */
int64_t mmp_check_narrow(mmp_case_result *r, unsigned char *bad, double *worst_ratio, const mmp_case *c,
                         const mmp_ref *ref, const void *got, const mmp_buffer *ops, const mmp_runner_options *o);
/* The narrow-accumulator step of a verdict under the bound tolerance: mmp_check_narrow where
 * the kernel's accumulator is narrow (and ops are given), its ratio then in force (it replaces
 * the useless bound's max_ratio_det) and bound-exceeded set when elements are beyond it.
 * Returns mmp_check_narrow's count, or -1 (no model: the bound's verdict stands). */
int64_t mmp_check_narrow_verdict(mmp_case_result *r, unsigned char *bad, const mmp_case *c, const mmp_ref *ref,
                                 const void *got, const mmp_buffer *ops, const mmp_runner_options *o);
/* 1 if mmp_check_narrow would run the model reference (it reads the arrays), 0 if it only says
 * there is no meaningful bound. */
int mmp_check_narrow_runs_model(const mmp_case *c, const mmp_runner_options *o);
int mmp_check_rounding(mmp_case_result *r, const mmp_case *c, const mmp_ref *ref, const void *got,
                       const double *sub_excess);
int64_t mmp_check_flush(mmp_case_result *r, unsigned char *flushed, const mmp_case *c, const mmp_ref *ref,
                        const void *got, const double *sub_abs);
/* The two checks' parts, for the comparison on the device: whether they apply and their
 * constants (0: not checked), and the verdict from the counts / sums (runner_verdict.c). */
int mmp_check_rounding_params(double *max_out, double *gamma, double *floor_term, const mmp_case *c, int have_absdot);
int mmp_check_rounding_sums(mmp_case_result *r, const mmp_case *c, const double q[5]);
int mmp_check_flush_params(int *pacc, double *lost, double *min_normal, const mmp_case *c);
void mmp_check_flush_say(mmp_case_result *r, int64_t n, int64_t fi, int64_t fj, double fw);

#ifdef MMP_HAVE_CUDA
/* ---- runner_check_dev.c: the comparison on the device (runner_devcheck.h) ---- */
/* 1 if the device comparison can take case c (resident buffers; no tf32-style input rounding,
 * whose NaN/Inf excuse needs the inputs; no tensor-core model reference to run on the host). */
int mmp_check_device_ok(const mmp_case *c, const mmp_runner_options *o);
/* mmp_runner_scan_outputs and mmp_check_output in one pass on the device: got0 (run 1's output,
 * unwritten elements overwritten) and got1 in D's layout, the reference's device arrays. */
mmp_status mmp_check_output_device(mmp_case_result *r, const mmp_case *c, const mmp_ref *ref, void *got0,
                                   const void *got1, const mmp_runner_options *o, const mmp_buffer *ops, void *stream);
#endif

/* ---- runner_common.c: shared by every case path (runner_run.c > runner_case.c >
 * runner_operator.c > runner_common.c) ---- */
double mmp_runner_now_ms(void);
/* A result record filled with the case identity and options. */
void mmp_runner_result_for_case(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o);
int mmp_runner_skip(mmp_case_result *r, const char *why);   /* r = SKIP (unsupported) why; 1 */
/* 1 (r a SKIP with the reason) if there is no usable device or it is below min_cc. */
int mmp_runner_device_skip(mmp_case_result *r, const mmp_runner_options *o, int min_cc, int arch_specific);
/* The device's compute capability (major*10+minor), 0 when there is no usable device. */
int mmp_runner_device_cc(const mmp_runner_options *o);
/* ---- runner_support.c: what the kernel declares it cannot take, before run() ---- */
/* 1 (r a SKIP naming the constraint) if case c breaks its kernel's min_k, ld_align_bytes or tight_d. */
int mmp_runner_constraint_skip(mmp_case_result *r, const mmp_case *c);
/* 1 (r a SKIP) if k is a device kernel of a plugin whose library has no GPU code this device runs. */
int mmp_runner_code_skip(mmp_case_result *r, const mmp_runner_options *o, const mmp_kernel_desc *k);
/* 1 (the plugin's reason said in r, "launch: ...") if k's launch_status reports a failed launch. */
int mmp_runner_launch_status(mmp_case_result *r, const mmp_kernel_desc *k);
#ifdef MMP_HAVE_CUDA
int mmp_runner_cuda_sticky(int cuda_error);   /* the context is lost: the process must stop */
mmp_status mmp_runner_stream(void **stream);  /* the process's non-blocking case stream */
#endif
/* ---- runner_channel.c: the runner child -> parent channel (a frame per message) ---- */
enum { MMP_RUNNER_MSG_START = 1, MMP_RUNNER_MSG_KERNEL = 2, MMP_RUNNER_MSG_KERNEL_DONE = 3, MMP_RUNNER_MSG_RESULT = 4 };
#define MMP_RUNNER_MAGIC 0x43504d4du   /* the bytes "MMPC" */
typedef struct mmp_runner_frame {
    uint32_t magic, type;
    uint64_t seq;                  /* 0, 1, ... per child */
    uint64_t index;                /* the case */
    uint32_t length;               /* payload bytes: sizeof(mmp_case_result) after a result, else 0 */
    int32_t pid;                   /* the sender, getpid() when it sent */
    uint64_t check;                /* mmp_runner_channel_check over nonce, header (check = 0), payload */
} mmp_runner_frame;
enum { MMP_RUNNER_FRAME_MAX = sizeof(mmp_runner_frame) + sizeof(mmp_case_result) };
uint64_t mmp_runner_channel_check(uint64_t nonce, const void *frame, size_t len);
/* One frame into buf (type RESULT: r is the payload); its size, 0 if size is too small. */
size_t mmp_runner_channel_encode(void *buf, size_t size, uint64_t nonce, uint64_t seq, int32_t pid, uint32_t type,
                                 uint64_t index, const mmp_case_result *r);
/* The parent's end: what it expects of one child, and the bytes received but not decoded. */
enum { MMP_RUNNER_RX_IDLE, MMP_RUNNER_RX_CASE, MMP_RUNNER_RX_KERNEL };
typedef struct mmp_runner_rx {
    uint64_t nonce;
    int32_t pid;                   /* the child */
    uint64_t seq;                  /* of the next frame */
    const mmp_case *cases;         /* indexed like the results */
    size_t next, to;               /* the case whose messages come next; the child's end */
    int phase;                     /* MMP_RUNNER_RX_*: before a start, in the case, in the kernel */
    int32_t shard_index, shard_count;
    size_t have;
    unsigned char buf[2 * MMP_RUNNER_FRAME_MAX];
} mmp_runner_rx;
typedef struct mmp_runner_event {
    uint32_t type;
    uint64_t index;
    mmp_case_result result;        /* MMP_RUNNER_MSG_RESULT */
} mmp_runner_event;
void mmp_runner_rx_init(mmp_runner_rx *rx, uint64_t nonce, int32_t pid, const mmp_case *cases, size_t from, size_t to,
                        int32_t shard_index, int32_t shard_count);
/* The frame at the front of bytes[0, len) checked against rx: OK with *used its size (ev filled,
 * rx advanced), OK with *used = 0 while the frame is incomplete, or MMP_STATUS_PARSE "protocol:
 * ..." (rx unchanged). Pure: no I/O, no global state. */
mmp_status mmp_runner_channel_decode(mmp_runner_rx *rx, mmp_runner_event *ev, size_t *used, const void *bytes,
                                     size_t len);
size_t mmp_runner_rx_push(mmp_runner_rx *rx, const void *bytes, size_t n);   /* bytes taken (room) */
/* The next whole frame of the pushed bytes: *got = 1 and ev; *got = 0 (more bytes needed); or
 * the protocol error of mmp_runner_channel_decode. */
mmp_status mmp_runner_rx_next(mmp_runner_rx *rx, mmp_runner_event *ev, int *got);
/* The child's end. */
int mmp_runner_write_all(int fd, const void *p, size_t n);   /* 0, or -1 on a write error */
void mmp_runner_channel_open(int fd, uint64_t nonce);        /* this process is a runner child */
/* One frame (r: the result, for MMP_RUNNER_MSG_RESULT); 0, -1 on a write error; no-op (0)
 * without a channel. */
int mmp_runner_channel_send(uint32_t type, uint64_t index, const mmp_case_result *r);
void mmp_runner_phase(int in_kernel);                        /* kernel launch starts (1) / ends (0) */
/* In a runner child, before anything else: the channel moved to a descriptor picked with random
 * in the upper half of the descriptor limit (no kernel is told where), every descriptor but 0,
 * 1, 2, the channel and keep closed (the parent's outputs such as RUN.json.jsonl, other
 * children's pipes: fork keeps them open without exec, O_CLOEXEC or not). The channel's
 * descriptor, close-on-exec. */
int mmp_runner_child_descriptors(int channel, int keep, uint64_t random);
/* An operator case start to verdict (runner_operator.c; mmp_runner_run_case dispatches). */
mmp_status mmp_runner_run_operator(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o);
/* A case list under construction (case_id.c): push applies the glob filter on the ID. */
typedef struct mmp_case_list {
    mmp_case *v;
    size_t n, cap;
    const char *filter;
} mmp_case_list;
mmp_status mmp_case_list_push(mmp_case_list *l, const mmp_case *c);
/* Keep the first of every set of cases with one ID, in list order. */
mmp_status mmp_case_list_dedupe(mmp_case_list *l);

/* ---- runner_save.c: a FAIL case's data for o->save_failures ---- */
typedef struct mmp_failure_data {
    const mmp_buffer *buf;         /* A, B, C, D: formats, layouts, ld, shapes; A, B, C as filled */
    int have_c;
    int inputs_on_device;          /* resident: the inputs' pristine images are on the device */
    const void *got;               /* D's data span (ld padding included) after the second launch,
                                      as the kernel wrote it (the first one's may be patched by
                                      the unwritten scan), or NULL */
    int got_on_device;
    void *stream;                  /* device copies are queued on it */
    const mmp_ref *ref;            /* host arrays, else the device ones */
} mmp_failure_data;
/* Write DIR/<ID with '/' as '_'>/{A,B,C,D,reference,reference_f64}.npy and README.txt (r's
 * message, the re-run command, how to load them). Never fails the case: what was saved, or
 * why not, is a part of r's message. */
void mmp_runner_save_failure(mmp_case_result *r, const mmp_case *c, const mmp_runner_options *o,
                             const mmp_failure_data *f);

#ifdef __cplusplus
}
#endif

#endif
