/* mmaprobe/npy.h — NumPy .npy files, format version 1.0 (core/npy.c): a case's matrices saved
 * for a failure (`validate --save-failures DIR`) load with np.load in one line.
 *
 * Usage:
 *   mmp_npy_array a = {"<f4", 0, 2, {m, n}};          // row-major (C order) m x n float32
 *   mmp_status st = mmp_npy_write("D.npy", &a, data);  // atomic: temp file, fsync, rename
 *   mmp_npy_array h; size_t off;
 *   st = mmp_npy_parse_header(&h, &off, bytes, len);   // h.descr, h.shape; the data at bytes + off
 *
 * The file: "\x93NUMPY", version 1 0, a little-endian uint16 header length, then a Python dict
 * literal {'descr': '<f4', 'fortran_order': False, 'shape': (m, n), } padded with spaces to a
 * multiple of 64 bytes and ended by '\n', then the elements in the order fortran_order says.
 */
#ifndef MMAPROBE_NPY_H
#define MMAPROBE_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mmp_npy_array {
    char descr[8];          /* "<f8", "<f4", "<f2", "<u2", "<i4", "|i1", "|u1" */
    int fortran_order;      /* 1: the data is column-major */
    int ndim;               /* 1 or 2 */
    int64_t shape[2];
} mmp_npy_array;

/* Bytes of one element of descr (1, 2, 4, 8), 0 for a descr this module does not write. */
size_t mmp_npy_item_bytes(const char *descr);
/* Write path atomically (core/fileio.c): the header, then shape[0] x ... elements of data.
 * MMP_STATUS_INVALID for a bad descr or shape, MMP_STATUS_IO when it cannot be written. */
mmp_status mmp_npy_write(const char *path, const mmp_npy_array *a, const void *data);
/* Read the header at the start of bytes (len of them): the array's description and where its
 * data starts. MMP_STATUS_PARSE for anything but a version 1.0 header this module can read. */
mmp_status mmp_npy_parse_header(mmp_npy_array *a, size_t *data_offset, const void *bytes, size_t len);

#ifdef __cplusplus
}
#endif
#endif
