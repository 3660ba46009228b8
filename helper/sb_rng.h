/* sb_rng.h: seeded pseudo-random numbers (splitmix64 seeding xoshiro256**) for
 * incompressible fill data and random access orders. Same seed, same bytes and
 * order on every platform. */
#ifndef SB_RNG_H
#define SB_RNG_H
#include <stddef.h>
#include <stdint.h>

typedef struct { uint64_t s[4]; } sb_rng;

void sb_rng_seed(sb_rng *r, uint64_t seed);
uint64_t sb_rng_next(sb_rng *r);
/* Uniform integer in [0, bound), bound > 0, without modulo bias (Lemire). */
uint64_t sb_rng_below(sb_rng *r, uint64_t bound);
/* Fill len bytes with the stream of the seed. */
void sb_rng_fill(uint64_t seed, unsigned char *buf, size_t len);
#endif
