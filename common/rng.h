/* rng.h - a small seeded generator (xoshiro256**) so every random choice follows --seed. */
#ifndef KM_RNG_H
#define KM_RNG_H

#include <stdint.h>

typedef struct km_rng {
    uint64_t s[4];
} km_rng;

/* Seeds the state from one 64-bit seed (expanded with splitmix64). */
void km_rng_seed(km_rng *r, uint64_t seed);

/* Next 64 random bits. */
uint64_t km_rng_next(km_rng *r);

/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t km_rng_below(km_rng *r, uint64_t n);

/* Uniform double in the open interval (0, 1). */
double km_rng_uniform(km_rng *r);

/* Standard normal deviate (Box-Muller, one of the pair). */
double km_rng_normal(km_rng *r);

/* Shuffles a[0..n) in place (Fisher-Yates). */
void km_rng_shuffle(km_rng *r, int64_t *a, int64_t n);

#endif
