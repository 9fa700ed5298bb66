/* bench/dtoa_speed.c - km_dtoa against snprintf("%.17g") in ns per value (wall and CPU
 * time, median of the repeats), and the bytes each writes, on model-like doubles (random
 * signs, 53-bit mantissas, decimal exponents -8..4) and on random bit patterns.
 * Usage: bench/dtoa_speed [N [REPEATS]]   (default 1000000 values, 7 repeats) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dtoa.h"
#include "benchutil.h"

static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* One timing of fmt over x[0..n): wall and CPU ns per value; *bytes the text's size. */
static void run(const double *x, long n, int use_dtoa, double *wall, double *cpu, long *bytes)
{
    char buf[64];
    long tot = 0;
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (long i = 0; i < n; i++)
        tot += use_dtoa ? km_dtoa(x[i], buf) : snprintf(buf, sizeof buf, "%.17g", x[i]);
    *wall = (now(CLOCK_MONOTONIC) - w0) / n * 1e9;
    *cpu = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) / n * 1e9;
    *bytes = tot;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    if (n < 1 || reps < 1 || reps > 99)
        return 1;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x)
        return 3;
    printf("| values | formatter | wall ns/value | CPU ns/value | bytes/value |\n|---|---|---:|---:|---:|\n");
    for (int set = 0; set < 2; set++) {
        uint64_t s = 42;
        for (long i = 0; i < n; i++) {
            uint64_t b = next(&s);
            if (set == 0) {
                double m = (double)(b >> 11) / 9007199254740992.0;
                static const double p10[] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1,
                                             1, 10, 100, 1e3, 1e4};
                x[i] = (b & 1 ? -m : m) * p10[next(&s) % 13];
            } else {
                if (((b >> 52) & 0x7ff) == 0x7ff)
                    b &= ~(1ull << 62);
                memcpy(&x[i], &b, sizeof b);
            }
        }
        for (int f = 0; f < 2; f++) {
            double w[99], c[99];
            long bytes = 0;
            for (int r = 0; r < reps; r++)
                run(x, n, f == 0, &w[r], &c[r], &bytes);
            qsort(w, (size_t)reps, sizeof *w, cmp_d);
            qsort(c, (size_t)reps, sizeof *c, cmp_d);
            printf("| %s | %s | %.1f | %.1f | %.2f |\n", set ? "random bit patterns"
                   : "model-like (|x| in 1e-8..1e4)", f ? "snprintf %.17g" : "km_dtoa",
                   w[reps / 2], c[reps / 2], (double)bytes / n);
        }
    }
    free(x);
    return 0;
}
