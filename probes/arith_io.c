/* arith_io.c — arithmetic-probe captures as text.
 *
 * A capture is every (inputs, output) of one instruction. Format (version 1), '#' lines are
 * comments, header keys first, then one line per vector:
 *   mmaprobe-arith-capture 1
 *   instruction mma.f16.f32
 *   sass HMMA.16816.F32
 *   native yes <note>                 (yes | no | unknown, then why: the SASS path; optional)
 *   device NVIDIA H200
 *   origin gpu                        (or "synthetic: <model parameters>")
 *   in fp16
 *   out fp32
 *   k 16
 *   count N
 *   <probe> <c> <d> <a_0> ... <a_k-1> <b_0> ... <b_k-1>
 * Every value is an 8-digit hex fp32 pattern (inputs are exact in fp32; an fp16 output is the
 * fp32 pattern of the same value; integer formats store int32 two's-complement bits).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmaprobe/probe.h"
#include "mmaprobe/sysio.h"

uint32_t mmp_probe_bits(double x) { return mmp_model_fp32_bits(x); }
double mmp_probe_value(uint32_t bits) { return mmp_model_fp32_value(bits); }

void mmp_capture_init(mmp_capture *cap, const char *instruction, mmp_format in, mmp_format out, int k)
{
    memset(cap, 0, sizeof *cap);
    snprintf(cap->instruction, sizeof cap->instruction, "%s", instruction ? instruction : "?");
    snprintf(cap->sass, sizeof cap->sass, "unknown");
    snprintf(cap->device, sizeof cap->device, "unknown");
    snprintf(cap->origin, sizeof cap->origin, "gpu");
    cap->native = -1;
    cap->in_format = in;
    cap->out_format = out;
    cap->k = k;
}

void mmp_capture_clear(mmp_capture *cap)
{
    free(cap->v);
    free(cap->store);
    memset(cap, 0, sizeof *cap);
}

static mmp_status grow(mmp_capture *cap)
{
    size_t nc = cap->capacity ? 2 * cap->capacity : 256;
    mmp_capture_vec *nv = realloc(cap->v, nc * sizeof *nv);
    if (!nv) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for %zu capture vectors", nc);
    cap->v = nv;
    uint32_t *ns = realloc(cap->store, nc * 2 * (size_t)cap->k * sizeof *ns);
    if (!ns) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory for %zu capture vectors", nc);
    cap->store = ns;
    cap->capacity = nc;
    for (size_t i = 0; i < cap->count; i++) {  /* re-point into the moved storage */
        cap->v[i].a = cap->store + i * 2 * (size_t)cap->k;
        cap->v[i].b = cap->v[i].a + cap->k;
    }
    return MMP_STATUS_OK;
}

mmp_status mmp_capture_add(mmp_capture *cap, const char *probe, const uint32_t *a,
                           const uint32_t *b, uint32_t c, uint32_t d)
{
    if (cap->k < 1) return MMP_ERR(MMP_STATUS_INVALID, "capture has K %d", cap->k);
    if (cap->count == cap->capacity) MMP_TRY(grow(cap));
    mmp_capture_vec *v = &cap->v[cap->count];
    snprintf(v->probe, sizeof v->probe, "%s", probe);
    v->a = cap->store + cap->count * 2 * (size_t)cap->k;
    v->b = v->a + cap->k;
    memcpy(v->a, a, (size_t)cap->k * sizeof *a);
    memcpy(v->b, b, (size_t)cap->k * sizeof *b);
    v->c = c;
    v->d = d;
    cap->count++;
    return MMP_STATUS_OK;
}

static const char *fname(mmp_format f)
{
    static const char *names[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2",
                                  "int32", "int8", "uint8", "int4", "uint4"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

static int fparse(mmp_format *f, const char *s)
{
    static const char *names[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2",
                                  "int32", "int8", "uint8", "int4", "uint4"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], s) == 0) { *f = (mmp_format)i; return 1; }
    return 0;
}

mmp_status mmp_capture_write(const char *path, const mmp_capture *cap)
{
    FILE *f = fopen(path, "w");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "mmaprobe-arith-capture 1\n# format: probes/arith_io.c; one vector per line:\n"
               "# <probe> <c> <d> <a_0..a_k-1> <b_0..b_k-1>, hex fp32 patterns\n");
    fprintf(f, "instruction %s\nsass %s\nnative %s %s\ndevice %s\norigin %s\nin %s\nout %s\nk %d\ncount %zu\n",
            cap->instruction, cap->sass,
            cap->native > 0 ? "yes" : cap->native == 0 ? "no" : "unknown",
            cap->path_note[0] ? cap->path_note : "-", cap->device, cap->origin,
            fname(cap->in_format), fname(cap->out_format), cap->k, cap->count);
    for (size_t i = 0; i < cap->count; i++) {
        const mmp_capture_vec *v = &cap->v[i];
        fprintf(f, "%s %08x %08x", v->probe, v->c, v->d);
        for (int j = 0; j < cap->k; j++) fprintf(f, " %08x", v->a[j]);
        for (int j = 0; j < cap->k; j++) fprintf(f, " %08x", v->b[j]);
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return MMP_ERR(MMP_STATUS_IO, "error writing %s", path);
    return MMP_STATUS_OK;
}

static void rest_of(char *dst, size_t size, const char *line, const char *key)
{
    const char *p = line + strlen(key);
    while (*p == ' ') p++;
    snprintf(dst, size, "%s", p);
    size_t n = strlen(dst);
    while (n && (dst[n - 1] == '\n' || dst[n - 1] == '\r')) dst[--n] = 0;
    /* these strings are printed to the terminal: no control bytes (ESC) from a capture file */
    for (char *q = dst; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f) *q = '?';
}

mmp_status mmp_capture_read(mmp_capture *cap, const char *path)
{
    memset(cap, 0, sizeof *cap);
    /* "<name>.xz": stored compressed in the repository, read through `xz -dc` */
    size_t plen = strlen(path);
    int xz = plen > 3 && !strcmp(path + plen - 3, ".xz");
    if (xz && access(path, R_OK) != 0)
        return MMP_ERR(MMP_STATUS_IO, "cannot open capture %s: %s", path, strerror(errno));
    FILE *f = NULL;
    mmp_child child = {-1, NULL};
    if (xz) {
        /* a FIFO or a device would hold xz up: only a regular file goes to it; no shell: the
         * path is one argument, whatever it holds */
        const char *kind;
        int fd = mmp_file_open_regular(path, &kind);
        if (fd < 0 && kind) return MMP_ERR(MMP_STATUS_INVALID, "capture %s is not a regular file (%s)", path, kind);
        if (fd >= 0) close(fd);
        char *argv[] = {"xz", "-dc", "--", (char *)path, NULL};
        MMP_TRY(mmp_spawn_read(&child, argv, MMP_SPAWN_STDERR_NULL));
        f = child.out;
    } else {
        const char *kind;
        int fd = mmp_file_open_regular(path, &kind);
        if (fd < 0 && kind) return MMP_ERR(MMP_STATUS_INVALID, "capture %s is not a regular file (%s)", path, kind);
        if (fd >= 0 && !(f = fdopen(fd, "r"))) close(fd);
    }
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot open capture %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t lsize = 0, lineno = 0;
    mmp_status st = MMP_STATUS_OK;
    int version = 0, k = 0;
    char instr[32] = "", sass[96] = "", native[200] = "", dev[128] = "", origin[256] = "", tmp[32];
    mmp_format in = MMP_FORMAT_COUNT_, out = MMP_FORMAT_COUNT_;
    uint32_t *a = NULL;
    size_t cap_rounded = 0;
    while (getline(&line, &lsize, f) > 0) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (!version) {
            if (sscanf(line, "mmaprobe-arith-capture %d", &version) != 1 || version != 1) {
                st = MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: not an mmaprobe arith capture (version 1)", path, lineno);
                break;
            }
            continue;
        }
        if (!strncmp(line, "instruction ", 12)) { rest_of(instr, sizeof instr, line, "instruction"); continue; }
        if (!strncmp(line, "sass ", 5)) { rest_of(sass, sizeof sass, line, "sass"); continue; }
        if (!strncmp(line, "native ", 7)) { rest_of(native, sizeof native, line, "native"); continue; }
        if (!strncmp(line, "device ", 7)) { rest_of(dev, sizeof dev, line, "device"); continue; }
        if (!strncmp(line, "origin ", 7)) { rest_of(origin, sizeof origin, line, "origin"); continue; }
        if (!strncmp(line, "count ", 6)) continue;
        if (!strncmp(line, "in ", 3) || !strncmp(line, "out ", 4)) {
            int is_in = line[0] == 'i';
            rest_of(tmp, sizeof tmp, line, is_in ? "in" : "out");
            if (!fparse(is_in ? &in : &out, tmp)) {
                st = MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: unknown format %s", path, lineno, tmp);
                break;
            }
            continue;
        }
        if (!strncmp(line, "k ", 2)) {
            k = atoi(line + 2);
            if (k < 1 || k > 256) { st = MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: bad k", path, lineno); break; }
            continue;
        }
        /* a vector line */
        if (!cap->k) {
            if (!k || in == MMP_FORMAT_COUNT_ || out == MMP_FORMAT_COUNT_ || !instr[0]) {
                st = MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: vector before the header (instruction, in, out, k)", path, lineno);
                break;
            }
            mmp_capture_init(cap, instr, in, out, k);
            if (sass[0]) snprintf(cap->sass, sizeof cap->sass, "%s", sass);
            if (native[0]) {
                /* "yes <note>", "no <note>", "unknown <note>" */
                cap->native = !strncmp(native, "yes", 3) ? 1 : !strncmp(native, "no", 2) ? 0 : -1;
                const char *n = strchr(native, ' ');
                snprintf(cap->path_note, sizeof cap->path_note, "%s", n ? n + 1 : "");
            }
            if (dev[0]) snprintf(cap->device, sizeof cap->device, "%s", dev);
            if (origin[0]) snprintf(cap->origin, sizeof cap->origin, "%s", origin);
            a = malloc(2 * (size_t)k * sizeof *a);
            if (!a) { st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path); break; }
        }
        char probe[24];
        int used = 0;
        unsigned c, d;
        if (sscanf(line, "%23s %x %x%n", probe, &c, &d, &used) != 3) {
            st = MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: malformed vector line", path, lineno);
            break;
        }
        char *p = line + used, *end;
        for (int j = 0; j < 2 * k; j++) {
            unsigned long w = strtoul(p, &end, 16);
            if (end == p) { st = MMP_ERR(MMP_STATUS_PARSE, "%s:%zu: %d of %d input words", path, lineno, j, 2 * k); break; }
            a[j] = (uint32_t)w;
            p = end;
        }
        if (st != MMP_STATUS_OK) break;
        /* FP8 inputs reach the GPU through a round-to-nearest-even conversion
         * (__nv_cvt_float_to_fp8, no saturation): a recorded value the format cannot hold (the
         * random e4m3 values 1.xxx*2^-7 and 2^-8 of captures before probearith3) is replayed
         * as the value the tensor core multiplied */
        if (in == MMP_FORMAT_E4M3 || in == MMP_FORMAT_E5M2)
            for (int j = 0; j < 2 * k; j++) {
                double x = mmp_probe_value(a[j]);
                if (!isfinite(x)) continue;
                uint32_t r = mmp_probe_bits(mmp_format_round(x, in, MMP_ROUND_NEAREST_EVEN, 0));
                if (r != a[j]) { a[j] = r; cap_rounded++; }
            }
        if ((st = mmp_capture_add(cap, probe, a, a + k, c, d)) != MMP_STATUS_OK) break;
    }
    free(line);
    free(a);
    int rc = xz ? mmp_spawn_wait(&child) : fclose(f);
    if (st == MMP_STATUS_OK && xz && rc != 0)
        st = MMP_ERR(MMP_STATUS_IO, "%s: xz -dc failed (status %d; is xz installed?)", path, rc);
    if (st == MMP_STATUS_OK) cap->inputs_rounded = cap_rounded;
    if (st == MMP_STATUS_OK && !version) st = MMP_ERR(MMP_STATUS_PARSE, "%s: empty capture", path);
    if (st == MMP_STATUS_OK && !cap->k) st = MMP_ERR(MMP_STATUS_PARSE, "%s: capture has no vectors", path);
    if (st != MMP_STATUS_OK) mmp_capture_clear(cap);
    return st;
}

/* Binary captures: the forked GPU child hands its captures to the parent this way (10^5
 * vectors of K = 128 are 100 MB of text, 100 ms of binary). Layout: "MMPCAPB1", the header
 * strings at their struct sizes, native/in/out/k as int32, count as uint64, then per vector
 * probe[24], c, d, and the input words (2k per vector). Same-machine only (host byte order). */
static const char bin_magic[8] = {'M', 'M', 'P', 'C', 'A', 'P', 'B', '1'};

mmp_status mmp_capture_write_bin(const char *path, const mmp_capture *cap)
{
    FILE *f = fopen(path, "wb");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
    int32_t h[4] = {cap->native, (int32_t)cap->in_format, (int32_t)cap->out_format, cap->k};
    uint64_t n = cap->count;
    fwrite(bin_magic, 1, sizeof bin_magic, f);
    fwrite(cap->instruction, 1, sizeof cap->instruction, f);
    fwrite(cap->sass, 1, sizeof cap->sass, f);
    fwrite(cap->device, 1, sizeof cap->device, f);
    fwrite(cap->origin, 1, sizeof cap->origin, f);
    fwrite(cap->path_note, 1, sizeof cap->path_note, f);
    fwrite(h, sizeof h[0], 4, f);
    fwrite(&n, sizeof n, 1, f);
    for (size_t i = 0; i < cap->count; i++) {
        fwrite(cap->v[i].probe, 1, sizeof cap->v[i].probe, f);
        fwrite(&cap->v[i].c, 4, 1, f);
        fwrite(&cap->v[i].d, 4, 1, f);
    }
    if (cap->count) fwrite(cap->store, 4, cap->count * 2 * (size_t)cap->k, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return MMP_ERR(MMP_STATUS_IO, "error writing %s", path);
    return MMP_STATUS_OK;
}

mmp_status mmp_capture_read_bin(mmp_capture *cap, const char *path)
{
    memset(cap, 0, sizeof *cap);
    FILE *f = fopen(path, "rb");
    if (!f) return MMP_ERR(MMP_STATUS_IO, "cannot open capture %s: %s", path, strerror(errno));
    char magic[8];
    mmp_capture h;
    int32_t w[4];
    uint64_t n;
    int ok = fread(magic, 1, 8, f) == 8 && !memcmp(magic, bin_magic, 8) &&
             fread(h.instruction, 1, sizeof h.instruction, f) == sizeof h.instruction &&
             fread(h.sass, 1, sizeof h.sass, f) == sizeof h.sass &&
             fread(h.device, 1, sizeof h.device, f) == sizeof h.device &&
             fread(h.origin, 1, sizeof h.origin, f) == sizeof h.origin &&
             fread(h.path_note, 1, sizeof h.path_note, f) == sizeof h.path_note &&
             fread(w, sizeof w[0], 4, f) == 4 && fread(&n, sizeof n, 1, f) == 1 &&
             w[3] >= 1 && w[3] <= 256 && w[1] >= 0 && w[1] < MMP_FORMAT_COUNT_ && w[2] >= 0 &&
             w[2] < MMP_FORMAT_COUNT_ && n < ((uint64_t)1 << 32);
    if (!ok) {
        fclose(f);
        return MMP_ERR(MMP_STATUS_PARSE, "%s: not a binary mmaprobe capture", path);
    }
    h.instruction[sizeof h.instruction - 1] = h.sass[sizeof h.sass - 1] = 0;
    h.device[sizeof h.device - 1] = h.origin[sizeof h.origin - 1] = h.path_note[sizeof h.path_note - 1] = 0;
    mmp_capture_init(cap, h.instruction, (mmp_format)w[1], (mmp_format)w[2], w[3]);
    snprintf(cap->sass, sizeof cap->sass, "%s", h.sass);
    snprintf(cap->device, sizeof cap->device, "%s", h.device);
    snprintf(cap->origin, sizeof cap->origin, "%s", h.origin);
    snprintf(cap->path_note, sizeof cap->path_note, "%s", h.path_note);
    cap->native = w[0];
    mmp_status st = MMP_STATUS_OK;
    size_t words = (size_t)n * 2 * (size_t)w[3];
    cap->v = malloc((n ? n : 1) * sizeof *cap->v);
    cap->store = malloc((words ? words : 1) * sizeof *cap->store);
    if (!cap->v || !cap->store) st = MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory reading %s", path);
    for (size_t i = 0; st == MMP_STATUS_OK && i < n; i++) {
        mmp_capture_vec *v = &cap->v[i];
        if (fread(v->probe, 1, sizeof v->probe, f) != sizeof v->probe || fread(&v->c, 4, 1, f) != 1 ||
            fread(&v->d, 4, 1, f) != 1)
            st = MMP_ERR(MMP_STATUS_PARSE, "%s: truncated at vector %zu", path, i);
        v->probe[sizeof v->probe - 1] = 0;
        v->a = cap->store + i * 2 * (size_t)w[3];
        v->b = v->a + w[3];
    }
    if (st == MMP_STATUS_OK && words && fread(cap->store, 4, words, f) != words)
        st = MMP_ERR(MMP_STATUS_PARSE, "%s: truncated input words", path);
    fclose(f);
    if (st != MMP_STATUS_OK) { mmp_capture_clear(cap); return st; }
    cap->count = cap->capacity = (size_t)n;
    return MMP_STATUS_OK;
}

/* Write the text capture keeping every designed vector and the first `keep` random ones. */
mmp_status mmp_capture_write_subset(const char *path, const mmp_capture *cap, size_t keep)
{
    mmp_capture sub = *cap;
    mmp_capture_vec *v = malloc((cap->count ? cap->count : 1) * sizeof *v);
    if (!v) return MMP_ERR(MMP_STATUS_NO_MEMORY, "out of memory writing %s", path);
    size_t n = 0, r = 0;
    for (size_t i = 0; i < cap->count; i++) {
        int rnd = strncmp(cap->v[i].probe, "rand", 4) == 0;
        if (rnd && r++ >= keep) continue;
        v[n++] = cap->v[i];
    }
    sub.v = v;
    sub.count = n;
    mmp_status st = mmp_capture_write(path, &sub);
    free(v);
    return st;
}
