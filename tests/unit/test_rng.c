/* test_rng.c - the seeded generator: reproducible, in range, uniform, shuffles permute. */
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "test.h"

int main(void)
{
    km_rng a, b;
    km_rng_seed(&a, 42);
    km_rng_seed(&b, 42);
    int same = 1;
    for (int i = 0; i < 1000; i++)
        same &= km_rng_next(&a) == km_rng_next(&b);
    CHECK(same, "same seed, same sequence");
    km_rng_seed(&b, 43);
    CHECK(km_rng_next(&a) != km_rng_next(&b), "another seed, another sequence");

    /* chi-square over 10 cells, 100,000 draws: 9 degrees of freedom, 99.9% point 27.9 */
    int64_t cnt[10] = {0};
    int in_range = 1;
    for (int i = 0; i < 100000; i++) {
        uint64_t x = km_rng_below(&a, 10);
        in_range &= x < 10;
        if (x < 10)
            cnt[x]++;
    }
    double chi = 0;
    for (int k = 0; k < 10; k++)
        chi += (cnt[k] - 1e4) * (cnt[k] - 1e4) / 1e4;
    CHECK(in_range, "km_rng_below(10) stays below 10");
    CHECK(chi < 27.9, "km_rng_below(10) is uniform (chi-square %.2f < 27.9)", chi);
    uint64_t big = (1ULL << 63) + 12345, top = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = km_rng_below(&a, big);
        top |= x >= big;
    }
    CHECK(!top, "km_rng_below works for n > 2^63");

    int64_t p[1000];
    for (int i = 0; i < 1000; i++)
        p[i] = i;
    km_rng_shuffle(&a, p, 1000);
    char seen[1000] = {0};
    int perm = 1, moved = 0;
    for (int i = 0; i < 1000; i++) {
        perm &= p[i] >= 0 && p[i] < 1000 && !seen[p[i]];
        if (p[i] >= 0 && p[i] < 1000)
            seen[p[i]] = 1;
        moved += p[i] != i;
    }
    CHECK(perm && moved > 900, "shuffle gives a permutation that moves most items (%d)", moved);
    TEST_EXIT();
}
