/* mmaprobe/core.h — the ground floor's plumbing: the counter-based RNG, environment capture,
 * the parallel-for and clock, glob matching, the atomic file write. Everything above core/
 * uses these; core/ itself includes nothing above it (status.h, format.h, gemm.h, result.h and
 * json.h are core's other public headers).
 *
 * Usage:
 *   uint32_t w[4]; mmp_rng_philox(w, seed, stream, ctr0, ctr1);      // pure function of its key
 *   double u = mmp_rng_uniform(seed, stream, i, j);                  // [0, 1), 53 bits
 *   mmp_parallel_for(mmp_parallel_threads(0), n, 4096, fn, ctx);      // fn(ctx, lo, hi, tid)
 *   if (mmp_glob_match("bf16_*", name)) ...
 *   mmp_file_write_atomic(path, write_fn, ctx);                       // temp file, fsync, rename
 *   mmp_env e; mmp_env_capture(&e, -1, seed, argc, argv); mmp_env_print(stdout, &e, "# ");
 */
#ifndef MMAPROBE_CORE_H
#define MMAPROBE_CORE_H

#include <stdint.h>
#include <stdio.h>
#include "mmaprobe/result.h"
#include "mmaprobe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- counter-based RNG (core/rng.c): Philox4x32-10 keyed by (seed, stream) ---- */
/* Philox4x32-10 on counter ctr under key (Random123's philox4x32_10). */
void mmp_rng_philox_raw(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2]);
/* Four 32-bit random words for counter (ctr0, ctr1) under key (seed, stream). Pure function. */
void mmp_rng_philox(uint32_t out[4], uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1);
/* Uniform double in [0, 1) with 53 random bits, and a standard normal (Box-Muller). */
double mmp_rng_uniform(uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1);
double mmp_rng_normal(uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1);
/* 64 random bits: the first two words of mmp_rng_philox. */
uint64_t mmp_rng_u64(uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1);
/* 64-bit FNV-1a of a string: the "case" part of a key. */
uint64_t mmp_rng_hash(const char *s);

/* A sequential stream over Philox for code that draws values one after another (probe
 * designs, generated samples): draw n of stream (seed, stream) is counter (n, 0). */
typedef struct mmp_rng_stream {
    uint64_t seed, stream, next;
} mmp_rng_stream;
void mmp_rng_stream_init(mmp_rng_stream *r, uint64_t seed, uint64_t stream);
uint64_t mmp_rng_stream_u64(mmp_rng_stream *r);
double mmp_rng_stream_uniform(mmp_rng_stream *r);   /* [0, 1), 53 bits */

/* ---- environment capture (core/env.c) ---- */
/* CUDA is queried in a forked child so that the calling process never holds a CUDA context (it
 * may fork later). device < 0: device 0 if present. Always fills what it can; returns
 * MMP_STATUS_NO_DEVICE (with e->no_device_reason) when no CUDA device is usable. argc/argv
 * fill e->command (may be 0/NULL). */
mmp_status mmp_env_capture(mmp_env *e, int device, uint64_t seed, int argc, char **argv);
/* The environment as the header lines every output starts with ("# gpu: ..."). */
void mmp_env_print(FILE *out, const mmp_env *e, const char *prefix);

/* ---- parallel-for and clock (core/parallel.c) ---- */
#define MMP_PARALLEL_MAX_THREADS 256
typedef void (*mmp_parallel_fn)(void *ctx, int64_t begin, int64_t end, int tid);
/* fn over [0, n) in chunks of `chunk` on `threads` threads (dynamic scheduling; tid < 256). */
void mmp_parallel_for(int threads, int64_t n, int64_t chunk, mmp_parallel_fn fn, void *ctx);
/* requested > 0, else $MMP_THREADS, else the number of online cores. */
int mmp_parallel_threads(int requested);
double mmp_clock_now(void);   /* monotonic seconds */

/* ---- glob matching (core/glob.c): 1 if name matches the filter (NULL/"" matches all): a
 * comma-separated list of shell globs, those starting with "!" excluding ("*,!host_*") ---- */
int mmp_glob_match(const char *pattern, const char *name);

/* ---- files (core/fileio.c) ----
 * Outputs are regular files: a path naming a directory, device, FIFO or socket is refused,
 * "cannot write PATH: not a regular file (a FIFO)" (MMP_STATUS_IO). A symbolic link is followed
 * to its final target, which must be a regular file or not exist yet; the link stays a link. */
typedef mmp_status (*mmp_file_writer)(FILE *out, void *ctx);
/* write(out, ctx) into a temporary file beside path's target, fsync, rename over the target
 * (which keeps its permissions). On any error the previous file stays as it was. Tests:
 * MMP_FAULT_WRITE_AFTER=N cuts the document after N bytes and fails with ENOSPC. */
mmp_status mmp_file_write_atomic(const char *path, mmp_file_writer write, void *ctx);
/* The output can be written: no special file, a temporary file can be made beside it. */
mmp_status mmp_file_check_writable(const char *path);
/* path's target opened for writing in place (created if missing, refused unless a regular file),
 * write-locked and then emptied. The lock is a POSIX record lock: forked children do not hold
 * it, and it goes when this process ends, however it ends. Another process holding it:
 * MMP_STATUS_IO, "PATH is being written by another process (pid N)", *holder = N (-1: unknown). */
mmp_status mmp_file_open_locked(int *fd, long *holder, const char *path);
/* path's target (if it exists) renamed to target + suffix, replacing an older one; and that
 * file removed again (if it is a regular file). */
mmp_status mmp_file_set_aside(const char *path, const char *suffix);
mmp_status mmp_file_remove_aside(const char *path, const char *suffix);

/* ---- OpenBLAS's threads (core/blas.c) ----
 * OpenBLAS starts its thread pool when it is loaded, and its fork handler joins every thread;
 * a thread still retrying a failed allocation of its work buffer (under an address-space limit)
 * never joins, and fork() hangs. So the program runs with a pool of one thread (no worker
 * alive at any fork) and each process that calls BLAS sizes the pool just before. */
/* Called first in main(): when OpenBLAS has worker threads, re-execute this program with
 * OPENBLAS_NUM_THREADS=1, the count OpenBLAS had chosen kept in MMP_OPENBLAS_THREADS. Returns
 * (doing nothing) when there are none, without OpenBLAS, or when the exec fails. */
void mmp_blas_reexec_single(char **argv);
/* Size the pool for the BLAS calls about to run in this process: want threads (<= 0: the count
 * OpenBLAS chose for this program), fewer when their work buffers would not fit in the address
 * space left (RLIMIT_AS, RLIMIT_DATA, a strict overcommit limit). MMP_STATUS_NO_MEMORY when not
 * even one buffer fits: OpenBLAS would retry the allocation forever. */
mmp_status mmp_blas_fit_threads(int want);

#ifdef __cplusplus
}
#endif
#endif
