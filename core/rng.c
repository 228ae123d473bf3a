/* rng.c — the only random numbers in product code: counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11) keyed by
 * (seed, stream) and indexed by a 128-bit counter, so every element of every matrix of every
 * case can be regenerated on its own from the case ID: stream = hash of the case's data key,
 * counter = (element position, matrix and draw number). */
#include <math.h>

#include "mmaprobe/core.h"
#include "mmaprobe/hd.h"

/* Philox4x32-10 on counter c under key k (Random123's philox4x32_10, checked against its
 * known-answer vectors in check_runner.c); the arithmetic is mmaprobe/hd.h's, which device code
 * uses too. */
void mmp_rng_philox_raw(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2])
{
    mmp_rng_hd_philox_raw(out, ctr, key);
}

void mmp_rng_philox(uint32_t out[4], uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1)
{
    mmp_rng_hd_philox_key(out, mmp_rng_hd_key(seed, stream), ctr0, ctr1);
}

double mmp_rng_uniform(uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1)
{
    return mmp_rng_hd_uniform_key(mmp_rng_hd_key(seed, stream), ctr0, ctr1);
}

/* Box-Muller with hd.h's own logarithm and cosine: the same bits on the device. */
double mmp_rng_normal(uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1)
{
    return mmp_rng_hd_normal_key(mmp_rng_hd_key(seed, stream), ctr0, ctr1);
}

uint64_t mmp_rng_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

uint64_t mmp_rng_u64(uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1)
{
    uint32_t w[4];
    mmp_rng_philox(w, seed, stream, ctr0, ctr1);
    return (uint64_t)w[0] << 32 | w[1];
}

void mmp_rng_stream_init(mmp_rng_stream *r, uint64_t seed, uint64_t stream)
{
    r->seed = seed;
    r->stream = stream;
    r->next = 0;
}

uint64_t mmp_rng_stream_u64(mmp_rng_stream *r)
{
    return mmp_rng_u64(r->seed, r->stream, r->next++, 0);
}

double mmp_rng_stream_uniform(mmp_rng_stream *r)
{
    return (double)(mmp_rng_stream_u64(r) >> 11) * 0x1p-53;
}
