/* fused_cases.c — the int4_fused operator (fused.h) as operator cases of the runner: one case per
 * component x mode (a row of fused_rows, named as the op of mmp_fused_ops() it runs) x shape of
 * the built-in suite, ID  <op>/<part>/MxNxK/g<g>/r<r>/<scales>[/grid<cap>]/s<seed>.
 *
 * Operands: xq, sx, wq, sw, x, a, b, beta, z (inputs, from mmp_fused_host_fill of the case's
 * seed) and y (the part's output: fp32, int8 for DECODE). The reference step: the exact
 * per-component reference and its per-element budget (mmp_fused_ref_compute, budget 0 = bitwise);
 * bit for bit against the host emulation where the order is known (QGEMM; LOWRANK and FUSED given
 * the device's T, from a launch of the same mode's DOWN op in the after step); for the tiled parts
 * the itemised smem budget against the launch's decision (cudaFuncGetAttributes static + dynamic).
 * Without CUDA (no ops) or a device the cases are SKIPs with the reason.
 */
#include <stdlib.h>
#include <string.h>

#ifdef MMP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "mmaprobe/fused.h"
#include "runner_internal.h"

typedef struct fused_row {
    const char *name;              /* the op of mmp_fused_ops() */
    mmp_fused_mode mode;
    mmp_fused_part part;
} fused_row;

#define S MMP_FUSED_MODE_SIMPLE
#define P MMP_FUSED_MODE_PERSISTENT
static const fused_row fused_rows[] = {
    {"int4_fused_decode", S, MMP_FUSED_PART_DECODE},
    {"int4_fused_dequant", S, MMP_FUSED_PART_DEQUANT},
    {"int4_fused_affine", S, MMP_FUSED_PART_AFFINE},
    {"int4_fused_simple_qgemm", S, MMP_FUSED_PART_QGEMM},
    {"int4_fused_simple_down", S, MMP_FUSED_PART_DOWN},
    {"int4_fused_simple_lowrank", S, MMP_FUSED_PART_LOWRANK},
    {"int4_fused_simple", S, MMP_FUSED_PART_FUSED},
    {"int4_fused_persistent_qgemm", P, MMP_FUSED_PART_QGEMM},
    {"int4_fused_persistent_down", P, MMP_FUSED_PART_DOWN},
    {"int4_fused_persistent_lowrank", P, MMP_FUSED_PART_LOWRANK},
    {"int4_fused_persistent", P, MMP_FUSED_PART_FUSED},
};
#undef S
#undef P
enum { N_ROWS = sizeof fused_rows / sizeof fused_rows[0] };

#define FUSED_DESC(nm, dfmt)                                                                          \
    {.abi_version = MMP_KERNEL_ABI_VERSION, .name = nm, .family = "int4_fused",                       \
     .a_format = MMP_FORMAT_INT4, .b_format = MMP_FORMAT_INT4, .c_format = MMP_FORMAT_FP32,           \
     .d_format = dfmt, .acc_format = MMP_FORMAT_INT32, .mul_format = -1,                              \
     .layouts_a = MMP_LAYOUTS_ROW, .layouts_b = MMP_LAYOUTS_ROW, .layouts_d = MMP_LAYOUTS_ROW,        \
     .m_multiple = 1, .n_multiple = 1, .k_multiple = 1, .min_cc = 80, .deterministic = 1,             \
     .where = MMP_KERNEL_DEVICE, .description = "int4_fused operator component (fused.h)"}
/* The identity rows of the cases (the runner's record and grouping), in fused_rows' order. */
static const mmp_kernel_desc fused_descs[N_ROWS] = {
    FUSED_DESC("int4_fused_decode", MMP_FORMAT_INT8), FUSED_DESC("int4_fused_dequant", MMP_FORMAT_FP32),
    FUSED_DESC("int4_fused_affine", MMP_FORMAT_FP32), FUSED_DESC("int4_fused_simple_qgemm", MMP_FORMAT_FP32),
    FUSED_DESC("int4_fused_simple_down", MMP_FORMAT_FP32), FUSED_DESC("int4_fused_simple_lowrank", MMP_FORMAT_FP32),
    FUSED_DESC("int4_fused_simple", MMP_FORMAT_FP32), FUSED_DESC("int4_fused_persistent_qgemm", MMP_FORMAT_FP32),
    FUSED_DESC("int4_fused_persistent_down", MMP_FORMAT_FP32),
    FUSED_DESC("int4_fused_persistent_lowrank", MMP_FORMAT_FP32), FUSED_DESC("int4_fused_persistent", MMP_FORMAT_FP32),
};

/* op_arg: 0 row, 1 group, 2 rank, 3 scale format, 4 persistent grid cap (0: none). */
enum { ARG_ROW, ARG_GROUP, ARG_RANK, ARG_SCALES, ARG_GRID };

static void problem(mmp_fused_problem *p, const mmp_case *c)
{
    p->m = c->m;
    p->n = c->n;
    p->k = c->k;
    p->group = (int32_t)c->op_arg[ARG_GROUP];
    p->rank = (int32_t)c->op_arg[ARG_RANK];
    p->scale_format = (mmp_format)c->op_arg[ARG_SCALES];
}

static void fused_id(char *buf, size_t size, const mmp_case *c)
{
    const fused_row *row = &fused_rows[c->op_arg[ARG_ROW]];
    char grid[24] = "";
    if (c->op_arg[ARG_GRID] > 0) snprintf(grid, sizeof grid, "/grid%lld", (long long)c->op_arg[ARG_GRID]);
    snprintf(buf, size, "%s/%s/%lldx%lldx%lld/g%lld/r%lld/%s%s/s%llu", row->name, mmp_fused_part_name(row->part),
             (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->op_arg[ARG_GROUP],
             (long long)c->op_arg[ARG_RANK], mmp_format_name((mmp_format)c->op_arg[ARG_SCALES]), grid,
             (unsigned long long)c->seed);
}

enum { O_XQ, O_SX, O_WQ, O_SW, O_X, O_A, O_B, O_BETA, O_Z, O_Y, O_COUNT };

static int fused_operands(mmp_operand *d, const mmp_case *c)
{
    mmp_fused_problem p;
    problem(&p, c);
    if (mmp_fused_problem_check(&p) != MMP_STATUS_OK) return -1;   /* the message is set */
    const mmp_fused_part part = fused_rows[c->op_arg[ARG_ROW]].part;
    const int64_t ng = p.k / p.group;
    int64_t rows, cols;
    mmp_fused_part_shape(&rows, &cols, &p, part);
    const mmp_operand v[O_COUNT] = {
        {"xq", MMP_FORMAT_INT4, p.m, p.k, MMP_OPERAND_INPUT},
        {"sx", p.scale_format, p.m, ng, MMP_OPERAND_INPUT},
        {"wq", MMP_FORMAT_INT4, p.n, p.k, MMP_OPERAND_INPUT},
        {"sw", p.scale_format, p.n, ng, MMP_OPERAND_INPUT},
        {"x", MMP_FORMAT_BF16, p.m, p.k, MMP_OPERAND_INPUT},
        {"a", MMP_FORMAT_BF16, p.k, p.rank, MMP_OPERAND_INPUT},
        {"b", MMP_FORMAT_BF16, p.rank, p.n, MMP_OPERAND_INPUT},
        {"beta", MMP_FORMAT_FP32, 1, p.n, MMP_OPERAND_INPUT},
        {"z", MMP_FORMAT_FP32, p.m, p.n, MMP_OPERAND_INPUT},
        {"y", part == MMP_FUSED_PART_DECODE ? MMP_FORMAT_INT8 : MMP_FORMAT_FP32, rows, cols, MMP_OPERAND_OUTPUT},
    };
    memcpy(d, v, sizeof v);
    return O_COUNT;
}

typedef struct fused_state {
    mmp_fused_problem p;
    const fused_row *row;
    const mmp_fused_op *op;
    mmp_fused_host h;
    mmp_fused_ref ref;
    mmp_fused_decision dec;
    int64_t rows, cols;
    float *emul;                   /* the host emulation of the kernel's order, or NULL */
    float *t;                      /* the device's T (LOWRANK, FUSED: after step), or NULL */
    char t_note[160];              /* why T is missing */
} fused_state;

static void fused_clear(void *state)
{
    fused_state *s = state;
    if (!s) return;
    mmp_fused_host_clear(&s->h);
    mmp_fused_ref_clear(&s->ref);
    free(s->emul);
    free(s->t);
    free(s);
}

static mmp_status fused_prepare(void **state, void *const *host, const mmp_case *c)
{
    const fused_row *row = &fused_rows[c->op_arg[ARG_ROW]];
    const mmp_fused_op *op = mmp_fused_op_find(row->name);
    if (!op) return MMP_ERR(MMP_STATUS_UNSUPPORTED, "%s: not in this build's int4_fused table (built without CUDA?)", row->name);
    fused_state *s = calloc(1, sizeof *s);
    if (!s) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of host memory");
    *state = s;
    s->row = row;
    s->op = op;
    problem(&s->p, c);
    mmp_fused_ref_init(&s->ref);
    mmp_fused_part_shape(&s->rows, &s->cols, &s->p, row->part);
    MMP_TRY(mmp_fused_host_init(&s->h, &s->p));
    MMP_TRY(mmp_fused_host_fill(&s->h, c->seed));
    const mmp_fused_problem *p = &s->p;
    const size_t ng = (size_t)(p->k / p->group);
    const void *src[O_Y] = {s->h.xq, s->h.sx, s->h.wq, s->h.sw, s->h.x, s->h.a, s->h.b, s->h.beta, s->h.z};
    const size_t bytes[O_Y] = {(size_t)(p->m * p->k / 2), (size_t)p->m * ng * 2, (size_t)(p->n * p->k / 2),
                               (size_t)p->n * ng * 2, (size_t)(p->m * p->k * 2), (size_t)(p->k * p->rank * 2),
                               (size_t)(p->rank * p->n * 2), (size_t)p->n * 4, (size_t)(p->m * p->n * 4)};
    for (int i = 0; i < O_Y; i++) memcpy(host[i], src[i], bytes[i]);
    return MMP_STATUS_OK;
}

static mmp_status emulate(fused_state *s)
{
    if (!s->emul) s->emul = malloc((size_t)(s->rows * s->cols) * sizeof(float));
    if (!s->emul) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of host memory");
    return mmp_fused_emulate(s->emul, &s->h, s->row->part, s->t);
}

static mmp_status fused_reference(void *state, const mmp_case *c)
{
    (void)c;
    fused_state *s = state;
    MMP_TRY(mmp_fused_ref_compute(&s->ref, &s->h, s->row->part));
    if (s->row->part == MMP_FUSED_PART_QGEMM) MMP_TRY(emulate(s));
    return MMP_STATUS_OK;
}

static mmp_fused_operands operands_of(void *const *ptr)
{
    mmp_fused_operands o = {ptr[O_XQ], ptr[O_SX], ptr[O_WQ], ptr[O_SW], ptr[O_X], ptr[O_A], ptr[O_B],
                            ptr[O_BETA], ptr[O_Z], ptr[O_Y]};
    return o;
}

static int fused_run(void *state, void *const *ptr, const mmp_case *c, void *stream)
{
    fused_state *s = state;
    mmp_fused_operands o = operands_of(ptr);
    memset(&s->dec, 0, sizeof s->dec);
    s->dec.grid = (int)c->op_arg[ARG_GRID];
    return s->op->run(&o, &s->p, stream, &s->dec, 0);
}

/* LOWRANK and FUSED: T from the same mode's DOWN op (same operands, the same grid cap), so that
 * the epilogue can be compared bit for bit with the host emulation given that T. */
static mmp_status fused_after(void *state, void *const *ptr, const mmp_case *c, void *stream)
{
    fused_state *s = state;
    const mmp_fused_part part = s->row->part;
    if (part != MMP_FUSED_PART_LOWRANK && part != MMP_FUSED_PART_FUSED) return MMP_STATUS_OK;
#ifdef MMP_HAVE_CUDA
    const mmp_fused_op *down = NULL;
    for (int i = 0; i < N_ROWS; i++)
        if (fused_rows[i].mode == s->row->mode && fused_rows[i].part == MMP_FUSED_PART_DOWN)
            down = mmp_fused_op_find(fused_rows[i].name);
    if (!down) { snprintf(s->t_note, sizeof s->t_note, "no DOWN op of mode %s", mmp_fused_mode_name(s->row->mode)); return MMP_STATUS_OK; }
    const size_t bytes = (size_t)(s->p.m * s->p.rank) * sizeof(float);
    void *t_dev = NULL;
    if (cudaMalloc(&t_dev, bytes) != cudaSuccess) return MMP_ERR(MMP_STATUS_NO_MEMORY, "cannot allocate T on the device");
    mmp_fused_operands o = operands_of(ptr);
    o.y = t_dev;
    mmp_fused_decision d = {0};
    d.grid = (int)c->op_arg[ARG_GRID];
    int rc = down->run(&o, &s->p, stream, &d, 0);
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
    s->t = rc == MMP_KERNEL_OK && e == cudaSuccess ? malloc(bytes) : NULL;
    if (s->t && cudaMemcpy(s->t, t_dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) { free(s->t); s->t = NULL; }
    cudaFree(t_dev);
    if (!s->t) snprintf(s->t_note, sizeof s->t_note, "%s returned %d (%s)", down->name, rc, cudaGetErrorString(e));
    else MMP_TRY(emulate(s));
    if (e != cudaSuccess) return MMP_ERR(MMP_STATUS_KERNEL, "%s: %s", down->name, cudaGetErrorString(e));
    return MMP_STATUS_OK;
#else
    (void)ptr; (void)c; (void)stream;
    snprintf(s->t_note, sizeof s->t_note, "built without CUDA");
    return MMP_STATUS_OK;
#endif
}

static uint64_t fused_expected(const void *state, int64_t idx)
{
    const fused_state *s = state;
    if (s->row->part == MMP_FUSED_PART_DECODE) return (uint8_t)(int8_t)s->ref.want64[idx];
    uint32_t bits;
    memcpy(&bits, s->emul ? &s->emul[idx] : &s->ref.want32[idx], 4);
    return bits;
}

static int tiled(mmp_fused_part part)
{
    return part == MMP_FUSED_PART_QGEMM || part == MMP_FUSED_PART_DOWN || part == MMP_FUSED_PART_LOWRANK ||
           part == MMP_FUSED_PART_FUSED;
}

static mmp_status fused_check(mmp_case_result *r, void *state, const void *got, const mmp_case *c)
{
    (void)c;
    fused_state *s = state;
    const mmp_fused_part part = s->row->part;
    mmp_fused_check k;
    mmp_fused_check_compare(&k, got, &s->ref);
    mmp_metrics *m = &r->metrics;
    m->count = k.n;
    m->max_abs_err = k.max_err;
    m->max_ratio_det = k.max_ratio;
    m->above_det = m->above_tol = k.n_bad;
    m->nan_mismatch = k.n_nan;
    if (k.n_bad) {
        const int64_t e = k.first_bad;
        m->first_bad_i = e / s->cols;
        m->first_bad_j = e % s->cols;
        const int bitwise = s->ref.budget[e] == 0;
        r->reasons |= k.n_nan ? MMP_REASON_NAN_MISMATCH : bitwise ? MMP_REASON_EXACT_MISMATCH : MMP_REASON_BOUND_EXCEEDED;
        const double v = part == MMP_FUSED_PART_DECODE ? ((const int8_t *)got)[e] : ((const float *)got)[e];
        mmp_runner_say(r, "%s: %lld of %lld elements beyond the per-element budget, first (%lld,%lld) got %.9g exact %.17g budget %.3g; max err/budget %.3g (%s)",
                       k.n_nan ? "nan-mismatch" : bitwise ? "exact-mismatch" : "bound-exceeded", (long long)k.n_bad,
                       (long long)k.n, (long long)m->first_bad_i, (long long)m->first_bad_j, v, s->ref.want64[e],
                       s->ref.budget[e], k.max_ratio, mmp_fused_budget_reason(part));
    }
    if (s->emul) {
        int64_t first;
        int64_t nd = mmp_fused_bitwise_diff(got, s->emul, s->rows * s->cols, part, &first);
        if (nd) {
            r->reasons |= MMP_REASON_EXACT_MISMATCH;
            mmp_runner_say(r, "exact-mismatch: %lld elements differ bitwise from the host emulation of the kernel's order%s, first (%lld,%lld)",
                           (long long)nd, s->t ? " (given the device's T)" : "", (long long)(first / s->cols), (long long)(first % s->cols));
        }
    } else if (part == MMP_FUSED_PART_LOWRANK || part == MMP_FUSED_PART_FUSED) {
        mmp_runner_say(r, "note: emulation not compared (%s)", s->t_note[0] ? s->t_note : "no T");
    }
    if (tiled(part)) {
        mmp_fused_smem_budget b;
        MMP_TRY(mmp_fused_smem_budget_make(&b, s->dec.mode, s->dec.stages, MMP_FUSED_FAULT_NONE));
        if (mmp_fused_smem_budget_check(&b, s->dec.smem_limit, s->dec.stages, s->dec.smem_static + s->dec.smem_dynamic) !=
            MMP_STATUS_OK) {
            r->reasons |= MMP_REASON_EXACT_MISMATCH;
            mmp_runner_say(r, "exact-mismatch: smem budget: %s", mmp_error_last());
        }
    }
    return MMP_STATUS_OK;
}

static const mmp_operator fused_operator = {fused_id, fused_operands, fused_prepare, fused_reference, fused_run,
                                            fused_after, fused_expected, fused_check, fused_clear};

/* Shapes of the built-in suites: {m, n, k, group, rank, scale format, grid cap}. */
typedef struct fused_shape { int64_t m, n, k; int32_t g, r; mmp_format sf; int grid; } fused_shape;
static const fused_shape smoke_shapes[] = {
    {128, 64, 64, 64, 32, MMP_FORMAT_FP16, 0},     /* one tile, one K step, one group */
    {256, 128, 384, 64, 32, MMP_FORMAT_BF16, 1},   /* one CTA walks 4 tiles: phases wrap across tiles */
};
static const fused_shape edge_shapes[] = {
    {256, 192, 512, 128, 32, MMP_FORMAT_FP16, 0},  /* 6 tiles, one per CTA */
    {384, 192, 256, 64, 32, MMP_FORMAT_FP16, 5},   /* 18 tiles over 5 CTAs, uneven */
    {100, 64, 128, 64, 32, MMP_FORMAT_FP16, 0},    /* M not a multiple of 128: tiled parts SKIP */
    {128, 64, 128, 64, 16, MMP_FORMAT_FP16, 0},    /* rank 16: tiled parts SKIP */
};
static const fused_shape full_shapes[] = {
    {1024, 1024, 2048, 64, 32, MMP_FORMAT_FP16, 0},
    {1024, 512, 4096, 128, 32, MMP_FORMAT_BF16, 0},
};

mmp_status mmp_case_init_fused(mmp_case *c, const char *op_name, const mmp_fused_problem *p, int grid_cap, uint64_t seed)
{
    for (int i = 0; i < N_ROWS; i++) {
        if (strcmp(fused_rows[i].name, op_name) != 0) continue;
        mmp_case_init(c, &fused_descs[i], p->m, p->n, p->k, MMP_DIST_NORMAL, seed);
        c->op = &fused_operator;
        c->op_arg[ARG_ROW] = i;
        c->op_arg[ARG_GROUP] = p->group;
        c->op_arg[ARG_RANK] = p->rank;
        c->op_arg[ARG_SCALES] = p->scale_format;
        c->op_arg[ARG_GRID] = grid_cap;
        mmp_case_finish(c);
        return MMP_STATUS_OK;
    }
    return MMP_ERR(MMP_STATUS_INVALID, "no int4_fused op named '%s'", op_name);
}

mmp_status mmp_cases_add_operators(mmp_case **cases, size_t *count, const char *suite, const char *filter,
                                   uint64_t seed)
{
    if (!suite || !*suite) suite = "smoke";
    const fused_shape *shapes = smoke_shapes;
    size_t n_shapes = sizeof smoke_shapes / sizeof smoke_shapes[0];
    if (!strcmp(suite, "edge")) { shapes = edge_shapes; n_shapes = sizeof edge_shapes / sizeof edge_shapes[0]; }
    else if (!strcmp(suite, "full")) { shapes = full_shapes; n_shapes = sizeof full_shapes / sizeof full_shapes[0]; }
    else if (strcmp(suite, "smoke") != 0) return MMP_STATUS_OK;   /* a suite file: GEMM cases only */
    mmp_case_list l = {*cases, *count, *count, filter};
    mmp_status st = MMP_STATUS_OK;
    /* operator-major, like kernels: each op's cases run in one child */
    for (int i = 0; i < N_ROWS && st == MMP_STATUS_OK; i++)
        for (size_t s = 0; s < n_shapes && st == MMP_STATUS_OK; s++) {
            const fused_shape *x = &shapes[s];
            mmp_fused_problem p = {x->m, x->n, x->k, x->g, x->r, x->sf};
            mmp_case c;
            st = mmp_case_init_fused(&c, fused_rows[i].name, &p, fused_rows[i].mode == MMP_FUSED_MODE_PERSISTENT ? x->grid : 0, seed);
            snprintf(c.suite, sizeof c.suite, "%s", suite);
            if (st == MMP_STATUS_OK) st = mmp_case_list_push(&l, &c);
        }
    *cases = l.v;
    *count = l.n;
    return st;
}
