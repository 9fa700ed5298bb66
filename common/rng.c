/* rng.c - see rng.h. */
#include "rng.h"

#include <math.h>

/* splitmix64 step, used only to expand the seed. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void km_rng_seed(km_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t km_rng_next(km_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t km_rng_below(km_rng *r, uint64_t n)
{
    /* Lemire's multiply-shift with rejection: unbiased, and a division only rarely */
    unsigned __int128 m = (unsigned __int128)km_rng_next(r) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t t = (0 - n) % n;
        while (low < t) {
            m = (unsigned __int128)km_rng_next(r) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double km_rng_uniform(km_rng *r)
{
    return ((double)(km_rng_next(r) >> 11) + 0.5) * 0x1p-53;
}

double km_rng_normal(km_rng *r)
{
    double u = km_rng_uniform(r), v = km_rng_uniform(r);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

void km_rng_shuffle(km_rng *r, int64_t *a, int64_t n)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)km_rng_below(r, (uint64_t)i + 1);
        int64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}
