/* npy.c — NumPy .npy files, format version 1.0 (include/mmaprobe/npy.h): written atomically
 * through core/fileio.c, the header read back by the tests and by anyone checking a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmaprobe/core.h"
#include "mmaprobe/npy.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define PREFIX_LEN 10   /* magic, version (2 bytes), header length (2 bytes) */

size_t mmp_npy_item_bytes(const char *descr)
{
    static const char *const known[] = {"<f8", "<f4", "<f2", "<u2", "<i4", "|i1", "|u1"};
    static const size_t bytes[] = {8, 4, 2, 2, 4, 1, 1};
    for (size_t i = 0; descr && i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(descr, known[i])) return bytes[i];
    return 0;
}

/* The elements of a into *n; 0 for a shape this module does not write. */
static int elements(size_t *n, const mmp_npy_array *a)
{
    if (a->ndim < 1 || a->ndim > 2) return 0;
    *n = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] < 0 || (a->shape[d] > 0 && *n > SIZE_MAX / 16 / (size_t)a->shape[d])) return 0;
        *n *= (size_t)a->shape[d];
    }
    return 1;
}

typedef struct {
    const mmp_npy_array *a;
    const void *data;
    size_t bytes;
} npy_job;

static mmp_status write_npy(FILE *out, void *ctx)
{
    const npy_job *j = ctx;
    const mmp_npy_array *a = j->a;
    char dict[192];
    int n = a->ndim == 1 ? snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (%lld,), }",
                                    a->descr, a->fortran_order ? "True" : "False", (long long)a->shape[0])
                         : snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (%lld, %lld), }",
                                    a->descr, a->fortran_order ? "True" : "False", (long long)a->shape[0],
                                    (long long)a->shape[1]);
    /* spaces, then '\n', so that the data starts at a multiple of 64 bytes (NumPy's alignment) */
    size_t header = ((size_t)PREFIX_LEN + (size_t)n + 1 + 63) / 64 * 64 - PREFIX_LEN;
    unsigned char prefix[PREFIX_LEN] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(header & 0xff),
                                        (unsigned char)(header >> 8)};
    if (fwrite(prefix, 1, sizeof prefix, out) != sizeof prefix || fprintf(out, "%s%*s\n", dict, (int)(header - (size_t)n - 1), "") < 0)
        return MMP_ERR(MMP_STATUS_IO, "cannot write the .npy header");
    if (j->bytes && fwrite(j->data, 1, j->bytes, out) != j->bytes) return MMP_ERR(MMP_STATUS_IO, "cannot write the .npy data");
    return MMP_STATUS_OK;
}

mmp_status mmp_npy_write(const char *path, const mmp_npy_array *a, const void *data)
{
    size_t item = mmp_npy_item_bytes(a->descr), n;
    if (!item) return MMP_ERR(MMP_STATUS_INVALID, "%s: no .npy type '%s'", path, a->descr);
    if (!elements(&n, a)) return MMP_ERR(MMP_STATUS_INVALID, "%s: bad .npy shape (%d dimensions)", path, a->ndim);
    npy_job j = {a, data, n * item};
    return mmp_file_write_atomic(path, write_npy, &j);
}

/* The text after "'key': " in the header dict, or NULL. */
static const char *value_of(const char *dict, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s':", key);
    const char *p = strstr(dict, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    return p;
}

mmp_status mmp_npy_parse_header(mmp_npy_array *a, size_t *data_offset, const void *bytes, size_t len)
{
    const unsigned char *b = bytes;
    memset(a, 0, sizeof *a);
    if (len < PREFIX_LEN || memcmp(b, MAGIC, MAGIC_LEN) != 0) return MMP_ERR(MMP_STATUS_PARSE, "not a .npy file");
    if (b[6] != 1 || b[7] != 0) return MMP_ERR(MMP_STATUS_PARSE, ".npy version %d.%d (1.0 only)", b[6], b[7]);
    size_t header = (size_t)b[8] | (size_t)b[9] << 8;
    if (PREFIX_LEN + header > len || header == 0 || b[PREFIX_LEN + header - 1] != '\n')
        return MMP_ERR(MMP_STATUS_PARSE, ".npy header of %zu bytes: cut or not ended by a newline", header);
    char dict[1024];
    if (header >= sizeof dict) return MMP_ERR(MMP_STATUS_PARSE, ".npy header of %zu bytes: too long", header);
    memcpy(dict, b + PREFIX_LEN, header);
    dict[header] = '\0';
    const char *d = value_of(dict, "descr"), *f = value_of(dict, "fortran_order"), *s = value_of(dict, "shape");
    if (!d || !f || !s || *d != '\'' || *s != '(') return MMP_ERR(MMP_STATUS_PARSE, ".npy header without descr, fortran_order or shape");
    size_t dl = strcspn(d + 1, "'");
    if (dl >= sizeof a->descr || d[1 + dl] != '\'') return MMP_ERR(MMP_STATUS_PARSE, ".npy descr too long");
    memcpy(a->descr, d + 1, dl);
    if (!strncmp(f, "True", 4)) a->fortran_order = 1;
    else if (strncmp(f, "False", 5)) return MMP_ERR(MMP_STATUS_PARSE, ".npy fortran_order is neither True nor False");
    const char *p = s + 1;
    while (a->ndim < 2) {
        while (*p == ' ') p++;
        if (*p == ')') break;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0) return MMP_ERR(MMP_STATUS_PARSE, ".npy shape is not a tuple of sizes");
        a->shape[a->ndim++] = v;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') p++;
    }
    while (*p == ' ') p++;
    if (*p != ')' || a->ndim == 0) return MMP_ERR(MMP_STATUS_PARSE, ".npy shape of 1 or 2 sizes only");
    *data_offset = PREFIX_LEN + header;
    return MMP_STATUS_OK;
}
