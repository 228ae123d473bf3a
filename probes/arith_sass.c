/* arith_sass.c — which SASS instruction ran a probe, and is the path native or emulated.
 *
 * Input: the text of `cuobjdump -sass <binary>`: "code for sm_90" lines, "Function : <mangled
 * name>" lines, then one instruction per line after an address comment (slash-star 0090
 * star-slash), an optional predicate (@P0, @!P0), the opcode with its modifiers
 * (HMMA.16816.F32.BF16), operands, ';' and the encoding comment; a second line holds only the
 * rest of the encoding. Labels ("$__internal_0_$__cuda_sm_9x_mma_...:", ".L_x_0:") stand alone.
 * The file tests/data/sass-sample-sm90.txt is a worked example (check_sass uses it).
 * A function is picked by a key that its (mangled) name contains and by the architecture of
 * its "code for sm_NN" section; the routines it CALLs (internal emulation routines) count as
 * part of it, whether listed inside its text (as labels) or as Function sections of their own.
 * Native means a tensor-core opcode that takes the instruction's input type directly (HMMA /
 * HGMMA for f16, .BF16, .TF32; QGMMA / QMMA or an .E4M3/.E5M2 operand for FP8; IMMA / IGMMA
 * with .S8/.U8 for 8-bit and .S4/.U4 for 4-bit integers). Emulated: a call to a
 * __cuda_sm*_mma* routine, FP8 run on f16 HMMA, 4-bit integers on an 8-bit IMMA shape or on
 * IMAD/IDP sequences.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/probe.h"
#include "mmaprobe/sysio.h"

static const char *const tensor_ops[] = {"HMMA", "IMMA", "DMMA", "BMMA", "QMMA", "OMMA",
                                         "HGMMA", "IGMMA", "QGMMA", "BGMMA"};

static int is_tensor_op(const char *op)
{
    for (size_t i = 0; i < sizeof tensor_ops / sizeof tensor_ops[0]; i++) {
        size_t n = strlen(tensor_ops[i]);
        if (!strncmp(op, tensor_ops[i], n) && (op[n] == '.' || op[n] == 0)) return 1;
    }
    return 0;
}

/* 1 if the '.'-separated opcode has the token tok ("BF16", "S4"). */
static int has_token(const char *op, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.'))
        if (!strncmp(p + 1, tok, n) && (p[1 + n] == '.' || p[1 + n] == 0)) return 1;
    return 0;
}

typedef struct tally {
    char op[16][64];
    int count[16];
    int n;
} tally;

static void tally_add(tally *t, const char *op)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->op[i], op)) { t->count[i]++; return; }
    if (t->n == 16) return;
    snprintf(t->op[t->n], sizeof t->op[t->n], "%s", op);
    t->count[t->n++] = 1;
}

typedef struct scan_state {
    tally tensor;
    int n_imad, n_conv;
    char callees[4][128];
    int ncallees;
    char routine[128];          /* an emulation routine seen (label or call) */
    int functions;              /* matching Function sections seen */
} scan_state;

/* The architecture number of a "code for sm_90a" line (90), or -1. */
static int arch_of(const char *line)
{
    const char *p = strstr(line, "code for sm_");
    return p ? atoi(p + 12) : -1;
}

/* Opcode of an instruction line (address comment, optional predicate, opcode), or 0. */
static int opcode_of(char *op, size_t size, const char *line, const char **operands)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (p[0] != '/' || p[1] != '*' || !isxdigit((unsigned char)p[2])) return 0;
    p += 2;
    while (isxdigit((unsigned char)*p)) p++;
    if (p[0] != '*' || p[1] != '/') return 0;
    p += 2;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '@') {   /* predicate guard */
        while (*p && *p != ' ' && *p != '\t') p++;
        while (*p == ' ' || *p == '\t') p++;
    }
    size_t n = 0;
    while (p[n] && !isspace((unsigned char)p[n]) && p[n] != ';' && n + 1 < size) n++;
    if (n == 0) return 0;
    memcpy(op, p, n);
    op[n] = 0;
    if (operands) *operands = p + n;
    return 1;
}

static int is_emulation_routine(const char *name)
{
    return strstr(name, "__cuda_sm") && strstr(name, "mma");
}

/* Scan every Function section whose name contains key (exact == 1: equals key) in arch sm. */
static void scan(scan_state *st, const char *text, const char *key, int exact, int sm)
{
    int arch = -1, in_fn = 0;
    const char *line = text;
    char buf[512], op[64];
    while (line && *line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = 0;
        line = nl ? nl + 1 : NULL;
        int a = arch_of(buf);
        if (a >= 0) { arch = a; in_fn = 0; continue; }
        const char *fn = strstr(buf, "Function : ");
        if (fn) {
            fn += 11;
            char name[256];
            snprintf(name, sizeof name, "%s", fn);
            name[strcspn(name, " \t\r")] = 0;
            in_fn = (exact ? !strcmp(name, key) : strstr(name, key) != NULL) && (sm <= 0 || arch == sm);
            st->functions += in_fn;
            continue;
        }
        if (!in_fn) continue;
        const char *operands = NULL;
        if (!opcode_of(op, sizeof op, buf, &operands)) {
            /* a label inside the function's text: "$__internal_0_$__cuda_sm_9x_mma_...:" */
            char *t = buf;
            while (*t == ' ' || *t == '\t') t++;
            if (t[0] && t[strlen(t) - 1] == ':' && is_emulation_routine(t)) {
                t[strlen(t) - 1] = 0;
                snprintf(st->routine, sizeof st->routine, "%s", t);
            }
            continue;
        }
        if (is_tensor_op(op)) tally_add(&st->tensor, op);
        else if (!strncmp(op, "IMAD", 4) && strncmp(op, "IMAD.MOV", 8) && strncmp(op, "IMAD.WIDE", 9)) st->n_imad++;
        else if (!strncmp(op, "IDP", 3)) st->n_imad++;
        else if (!strncmp(op, "F2FP", 4) || !strncmp(op, "HADD2.F32", 9) || !strncmp(op, "I2F", 3)) st->n_conv++;
        if (!strncmp(op, "CALL", 4) && operands) {
            const char *b = strchr(operands, '(');
            const char *q = strchr(operands, '`');
            const char *s = b ? b + 1 : q ? q + 1 : NULL;
            if (s && st->ncallees < 4) {
                char *c = st->callees[st->ncallees];
                size_t n = strcspn(s, ") `;");
                if (n >= sizeof st->callees[0]) n = sizeof st->callees[0] - 1;
                memcpy(c, s, n);
                c[n] = 0;
                if (n) {
                    if (is_emulation_routine(c)) snprintf(st->routine, sizeof st->routine, "%s", c);
                    st->ncallees++;
                }
            }
        }
    }
}

typedef struct want {
    mmp_format in;
    const char *tokens[3];      /* any of these tokens on a tensor op: native */
    int fp16_default;           /* HMMA/HGMMA without another type token is native */
    int fp8_ops;                /* QMMA / QGMMA are native */
} want;

static const want wants[] = {
    {MMP_FORMAT_FP16, {NULL}, 1, 0},
    {MMP_FORMAT_BF16, {"BF16", NULL}, 0, 0},
    {MMP_FORMAT_TF32, {"TF32", NULL}, 0, 0},
    {MMP_FORMAT_E4M3, {"E4M3", NULL}, 0, 1},
    {MMP_FORMAT_E5M2, {"E5M2", NULL}, 0, 1},
    {MMP_FORMAT_INT8, {"S8", NULL}, 0, 0},
    {MMP_FORMAT_UINT8, {"U8", NULL}, 0, 0},
    {MMP_FORMAT_INT4, {"S4", NULL}, 0, 0},
    {MMP_FORMAT_UINT4, {"U4", NULL}, 0, 0},
};

static int op_native(const char *op, const want *w)
{
    for (int i = 0; i < 3 && w->tokens[i]; i++)
        if (has_token(op, w->tokens[i])) return 1;
    if (w->fp8_ops && (!strncmp(op, "QMMA", 4) || !strncmp(op, "QGMMA", 5))) return 1;
    if (w->fp16_default && (!strncmp(op, "HMMA", 4) || !strncmp(op, "HGMMA", 5))) {
        static const char *other[] = {"BF16", "TF32", "E4M3", "E5M2", "F64"};
        for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
            if (has_token(op, other[i])) return 0;
        return 1;
    }
    return 0;
}

mmp_status mmp_sass_summarise(mmp_sass_summary *s, const char *sass, const char *key, int sm,
                              mmp_format in_format)
{
    if (!s || !sass || !key) return MMP_ERR(MMP_STATUS_INVALID, "sass summary: NULL argument");
    memset(s, 0, sizeof *s);
    s->native = -1;
    scan_state st;
    memset(&st, 0, sizeof st);
    scan(&st, sass, key, 0, sm);
    if (!st.functions) {
        snprintf(s->opcodes, sizeof s->opcodes, "unknown");
        snprintf(s->note, sizeof s->note, "no function matching %s for sm_%d in the SASS listing", key, sm);
        return MMP_STATUS_UNSUPPORTED;
    }
    int own = st.ncallees;
    for (int i = 0; i < own; i++) scan(&st, sass, st.callees[i], 1, sm);  /* separate sections */
    /* opcodes by frequency */
    int used[16] = {0};
    size_t len = 0;
    for (int k = 0; k < st.tensor.n && k < 3; k++) {
        int best = -1;
        for (int i = 0; i < st.tensor.n; i++)
            if (!used[i] && (best < 0 || st.tensor.count[i] > st.tensor.count[best])) best = i;
        used[best] = 1;
        len += (size_t)snprintf(s->opcodes + len, len < sizeof s->opcodes ? sizeof s->opcodes - len : 0,
                                "%s%s", k ? "," : "", st.tensor.op[best]);
        if (len >= sizeof s->opcodes) break;
    }
    if (!st.tensor.n) snprintf(s->opcodes, sizeof s->opcodes, "none");
    for (int i = 0; i < st.tensor.n; i++) s->n_tensor += st.tensor.count[i];
    s->n_imad = st.n_imad;
    s->n_convert = st.n_conv;
    const want *w = NULL;
    for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++)
        if (wants[i].in == in_format) w = &wants[i];
    int native_ops = 0;
    const char *first_native = NULL;
    for (int i = 0; w && i < st.tensor.n; i++)
        if (op_native(st.tensor.op[i], w)) { native_ops++; if (!first_native) first_native = st.tensor.op[i]; }
    if (st.routine[0]) {
        s->native = 0;
        snprintf(s->note, sizeof s->note, "emulated: calls %s (%d tensor ops: %s; %d IMAD/IDP)",
                 st.routine, s->n_tensor, s->opcodes, s->n_imad);
    } else if (native_ops) {
        s->native = 1;
        snprintf(s->note, sizeof s->note, "native: %s takes %s operands directly", first_native,
                 mmp_format_name(in_format));
    } else if (st.tensor.n) {
        s->native = 0;
        const char *why = in_format == MMP_FORMAT_INT4 || in_format == MMP_FORMAT_UINT4
                              ? "a wider integer IMMA shape (4-bit inputs unpacked)"
                              : in_format == MMP_FORMAT_E4M3 || in_format == MMP_FORMAT_E5M2
                                    ? "an f16 HMMA after converting the FP8 inputs"
                                    : "a tensor op of another input type";
        snprintf(s->note, sizeof s->note, "emulated: %s runs on %s (%d conversions)", s->opcodes, why,
                 s->n_convert);
    } else if (st.n_imad) {
        s->native = 0;
        snprintf(s->note, sizeof s->note, "emulated: no tensor-core op, %d IMAD/IDP integer multiply-adds",
                 st.n_imad);
    } else {
        snprintf(s->note, sizeof s->note, "no tensor-core op and no multiply-add found");
    }
    return MMP_STATUS_OK;
}

char *mmp_sass_dump(void)
{
    char file[1024], tool[1024], timeout[1024];
    /* The probe kernels live in the object that holds this function: the executable when
     * libmmp is linked statically, libmmp.so otherwise (dladdr names it). */
    Dl_info info;
    if (dladdr((void *)mmp_sass_dump, &info) && info.dli_fname && info.dli_fname[0] == '/')
        snprintf(file, sizeof file, "%s", info.dli_fname);
    else
        snprintf(file, sizeof file, "/proc/%d/exe", (int)getpid());
    if (mmp_spawn_which(tool, sizeof tool, "cuobjdump", "/usr/local/cuda/bin") != 0) return NULL;
    /* bounded: a listing that takes longer than 60 s leaves the SASS "unknown" */
    char *with_timeout[] = {timeout, "60", tool, "-sass", file, NULL};
    char *plain[] = {tool, "-sass", file, NULL};
    mmp_child p;
    if (mmp_spawn_read(&p, mmp_spawn_which(timeout, sizeof timeout, "timeout", NULL) == 0 ? with_timeout : plain,
                       MMP_SPAWN_STDERR_NULL) != MMP_STATUS_OK)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, p.out);
        n += got;
        if (got == 0) break;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
    }
    mmp_spawn_wait(&p);
    if (!buf) return NULL;
    buf[n] = 0;
    if (n == 0) { free(buf); return NULL; }
    return buf;
}

/* Name the SASS that ran cap (the function matching key in this executable, for sm_<cc>). The
 * listing is taken once per process. */
void mmp_arith_set_sass(mmp_capture *cap, const char *key, int cc)
{
    static char *text;
    static int tried;
    if (!tried) { text = mmp_sass_dump(); tried = 1; }
    if (!text) {
        snprintf(cap->sass, sizeof cap->sass, "unknown");
        cap->native = -1;
        snprintf(cap->path_note, sizeof cap->path_note, "cuobjdump -sass unavailable (add /usr/local/cuda/bin to PATH)");
        return;
    }
    mmp_sass_summary s;
    mmp_sass_summarise(&s, text, key, cc, cap->in_format);
    snprintf(cap->sass, sizeof cap->sass, "%s", s.opcodes);
    cap->native = s.native;
    snprintf(cap->path_note, sizeof cap->path_note, "%s", s.note);
}
