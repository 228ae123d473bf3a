/* mmaprobe/format.h — number formats: encode, decode, round (binary64 <-> format).
 *
 * Usage:
 *   mmp_format f;
 *   if (mmp_format_from_name(&f, "e4m3") != MMP_STATUS_OK) ...;
 *   uint64_t bits; int ternary;
 *   mmp_format_encode(&bits, &ternary, 0.1, f, MMP_ROUND_NEAREST_EVEN, 0);  // bits of RN(0.1)
 *   double y = mmp_format_decode(bits, f);                                  // exact
 *   double r = mmp_format_round(0.1, f, MMP_ROUND_TOWARD_ZERO, 1);          // satfinite
 *   mmp_format_store(buf, idx, x, f, MMP_ROUND_NEAREST_EVEN, 0);            // into a matrix
 *   double v = mmp_format_load(buf, idx, f);
 *
 * Formats: fp64, fp32, tf32 (19-bit: 1+8+10, stored in 32 bits, low 13 bits zero), fp16, bf16,
 * fp8 e4m3 (OCP "FN": no infinities, NaN = S.1111.111, max 448), fp8 e5m2 (IEEE-like),
 * int32, int8, uint8, int4/uint4 (two per byte, low nibble first; element i is in byte i/2).
 * Storage size in bits: mmp_format_info(f)->storage_bits (4 for int4/uint4).
 * Rounding: nearest-even, toward zero, up, down; satfinite clamps overflow to +-max finite
 * (and NaN to NaN for floats, to 0 for integers as PTX cvt.sat does).
 * Integer formats round to an integer with the given mode and, without satfinite, wrap modulo 2^bits.
 * Without satfinite a float overflow gives +-Inf (or NaN for e4m3, which has no Inf).
 */
#ifndef MMAPROBE_FORMAT_H
#define MMAPROBE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The numeric values are part of the plugin ABI (kernel.h): append only. */
typedef enum mmp_format {
    MMP_FORMAT_FP64 = 0,
    MMP_FORMAT_FP32 = 1,
    MMP_FORMAT_TF32 = 2,
    MMP_FORMAT_FP16 = 3,
    MMP_FORMAT_BF16 = 4,
    MMP_FORMAT_E4M3 = 5,
    MMP_FORMAT_E5M2 = 6,
    MMP_FORMAT_INT32 = 7,
    MMP_FORMAT_INT8 = 8,
    MMP_FORMAT_UINT8 = 9,
    MMP_FORMAT_INT4 = 10,
    MMP_FORMAT_UINT4 = 11,
    MMP_FORMAT_COUNT_
} mmp_format;

typedef enum mmp_round {
    MMP_ROUND_NEAREST_EVEN = 0,
    MMP_ROUND_TOWARD_ZERO = 1,
    MMP_ROUND_UP = 2,   /* toward +inf */
    MMP_ROUND_DOWN = 3  /* toward -inf */
} mmp_round;

typedef struct mmp_format_info {
    mmp_format format;
    const char *name;      /* "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2", "int8", ... */
    int storage_bits;      /* bits one element occupies in memory (4 for int4) */
    int is_float;
    int is_signed;
    /* floats: precision (significand bits incl. the implicit one), exponents as MPFR uses them
     * for a value 0.1xxx * 2^e: normal numbers have emin <= e <= emax. */
    int precision;
    int emin, emax;
    int has_inf, has_nan;
    double max_finite;     /* largest finite value (ints: largest value) */
    double min_normal;     /* smallest positive normal (ints: 1) */
    double min_subnormal;  /* smallest positive (ints: 1) */
    double lowest;         /* most negative finite value */
    double unit_roundoff;  /* 2^-precision (round to nearest); 0 for ints */
} mmp_format_info;

const mmp_format_info *mmp_format_get_info(mmp_format f); /* NULL if f is out of range */
const char *mmp_format_name(mmp_format f);                /* "?" if out of range */
mmp_status mmp_format_from_name(mmp_format *f, const char *name); /* case-insensitive; aliases ok */
size_t mmp_format_bytes(mmp_format f, size_t count);      /* bytes for count elements */

/* Round x to f; *ternary gets the sign of (result - x) as MPFR does (NULL allowed). */
double mmp_format_round(double x, mmp_format f, mmp_round rnd, int satfinite);
mmp_status mmp_format_encode(uint64_t *bits, int *ternary, double x, mmp_format f, mmp_round rnd,
                             int satfinite);
double mmp_format_decode(uint64_t bits, mmp_format f);    /* exact; NaN keeps its sign */

/* Element access in a buffer of f (int4: nibble idx%2 of byte idx/2, low nibble first). */
double mmp_format_load(const void *buf, size_t idx, mmp_format f);
void mmp_format_store(void *buf, size_t idx, double x, mmp_format f, mmp_round rnd, int satfinite);
uint64_t mmp_format_load_bits(const void *buf, size_t idx, mmp_format f);
void mmp_format_store_bits(void *buf, size_t idx, uint64_t bits, mmp_format f);

#ifdef __cplusplus
}
#endif
#endif
