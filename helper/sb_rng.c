/* sb_rng.c: splitmix64 + xoshiro256** (Blackman and Vigna), public domain algorithms. */
#include "sb_rng.h"
#include <string.h>

static uint64_t sb_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t sb_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void sb_rng_seed(sb_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = sb_splitmix64(&x);
}

uint64_t sb_rng_next(sb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = sb_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = sb_rotl(s[3], 45);
    return result;
}

uint64_t sb_rng_below(sb_rng *r, uint64_t bound)
{
    unsigned __int128 m = (unsigned __int128)sb_rng_next(r) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = (0 - bound) % bound;
        while (low < threshold) {
            m = (unsigned __int128)sb_rng_next(r) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

void sb_rng_fill(uint64_t seed, unsigned char *buf, size_t len)
{
    sb_rng r;
    sb_rng_seed(&r, seed);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v = sb_rng_next(&r);
        memcpy(buf + i, &v, 8);
    }
    if (i < len) {
        uint64_t v = sb_rng_next(&r);
        memcpy(buf + i, &v, len - i);
    }
}
