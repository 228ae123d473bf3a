/* rng.c — the only random numbers in product code: counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11) keyed by
 * (seed, stream) and indexed by a 128-bit counter, so every element of every matrix of every
 * case can be regenerated on its own from the case ID: stream = hash of the case's data key,
 * counter = (element position, matrix and draw number). */
#include <math.h>

#include "mmaprobe/core.h"

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Philox4x32-10 on counter c under key k (Random123's philox4x32_10, checked against its
 * known-answer vectors in check_runner.c). */
void mmp_rng_philox_raw(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2])
{
    const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    uint32_t k0 = key[0], k1 = key[1], c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)M0 * c0, p1 = (uint64_t)M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += W0;
        k1 += W1;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

void mmp_rng_philox(uint32_t out[4], uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1)
{
    uint64_t key = splitmix64(seed ^ splitmix64(stream));
    uint32_t k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
    uint32_t c[4] = {(uint32_t)ctr0, (uint32_t)(ctr0 >> 32), (uint32_t)ctr1, (uint32_t)(ctr1 >> 32)};
    mmp_rng_philox_raw(out, c, k);
}

double mmp_rng_uniform(uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1)
{
    uint32_t w[4];
    mmp_rng_philox(w, seed, stream, ctr0, ctr1);
    uint64_t bits = ((uint64_t)w[0] << 32 | w[1]) >> 11;   /* 53 bits */
    return (double)bits * 0x1p-53;
}

double mmp_rng_normal(uint64_t seed, uint64_t stream, uint64_t ctr0, uint64_t ctr1)
{
    uint32_t w[4];
    mmp_rng_philox(w, seed, stream, ctr0, ctr1);
    /* u1 in (0, 1] so log() is finite; Box-Muller with the second pair of words. */
    double u1 = ((double)(((uint64_t)w[0] << 32 | w[1]) >> 11) + 1.0) * 0x1p-53;
    double u2 = (double)(((uint64_t)w[2] << 32 | w[3]) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
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
