/* gen_poly_terms.c - the synthetic data of seed 002, section 5.2 (Figure 2), in svmlight
 * format: x uniform in [-1, 1]^r, y the uniform combination (coefficients 1) of --terms
 * distinct monomials of degree <= --degree drawn uniformly among all C(r + D, D) of them,
 * noise free. Writes PREFIX.train, PREFIX.valid, PREFIX.test (500 / 1000 / 1000 rows by
 * default) and PREFIX.terms (one monomial per line: its 1-based variables, "const" for the
 * constant). Rows come from one stream of --seed in order: train, then valid, then test.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: gen_poly_terms [options] PREFIX\n"
        "Writes PREFIX.train, PREFIX.valid, PREFIX.test and PREFIX.terms: x uniform in\n"
        "[-1,1]^r, y = the sum of --terms distinct monomials of degree <= D drawn uniformly\n"
        "among all of them (seed 002, section 5.2), noise free.\n"
        "  -r R          input dimension (default 10)\n"
        "  -d D          largest degree of a monomial (default 3)\n"
        "  --terms K     monomials in y (default 10)\n"
        "  --train N     rows of PREFIX.train (default 500)\n"
        "  --valid N     rows of PREFIX.valid (default 1000)\n"
        "  --test N      rows of PREFIX.test (default 1000)\n"
        "  --seed S      seed of the random draws (default 1)\n"
        "  -h, --help    this text\n");
}

/* Enumerates the monomials of degree <= D in r variables as sorted index lists (each
 * padded to D with -1) into *mono; returns their number. */
static int64_t monomials(int r, int D, int32_t **mono)
{
    int64_t cap = 1024, m = 0;
    int32_t *M = malloc((size_t)cap * (size_t)(D > 0 ? D : 1) * sizeof *M), cur[64];
    if (!M)
        return -1;
    for (int d = 0; d <= D; d++) {   /* non-decreasing tuples of length d */
        for (int i = 0; i < d; i++)
            cur[i] = 0;
        for (;;) {
            if (m == cap) {
                cap *= 2;
                int32_t *g = realloc(M, (size_t)cap * (size_t)(D > 0 ? D : 1) * sizeof *g);
                if (!g) {
                    free(M);
                    return -1;
                }
                M = g;
            }
            for (int i = 0; i < (D > 0 ? D : 1); i++)
                M[m * (D > 0 ? D : 1) + i] = i < d ? cur[i] : -1;
            m++;
            int i = d - 1;
            while (i >= 0 && cur[i] == r - 1)
                i--;
            if (i < 0)
                break;
            cur[i]++;
            for (int q = i + 1; q < d; q++)
                cur[q] = cur[i];
        }
    }
    *mono = M;
    return m;
}

static int write_rows(const char *prefix, const char *ext, long n, int r, int D, int K,
                      const int32_t *mono, const int64_t *pick, km_rng *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%s", prefix, ext);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "gen_poly_terms: %s: cannot write\n", path);
        return 2;
    }
    double *x = malloc((size_t)r * sizeof *x);
    int Dm = D > 0 ? D : 1;
    for (long i = 0; i < n; i++) {
        for (int j = 0; j < r; j++)
            x[j] = 2 * km_rng_uniform(g) - 1;
        double y = 0;
        for (int k = 0; k < K; k++) {
            double p = 1;
            for (int q = 0; q < Dm && mono[pick[k] * Dm + q] >= 0; q++)
                p *= x[mono[pick[k] * Dm + q]];
            y += p;
        }
        fprintf(f, "%.17g", y);
        for (int j = 0; j < r; j++)
            fprintf(f, " %d:%.17g", j + 1, x[j]);
        fputc('\n', f);
    }
    free(x);
    if (fclose(f)) {
        fprintf(stderr, "gen_poly_terms: %s: write error\n", path);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long r = 10, D = 3, K = 10, ntrain = 500, nvalid = 1000, ntest = 1000;
    uint64_t seed = 1;
    static const struct option longs[] = {
        {"terms", required_argument, 0, 'K'}, {"train", required_argument, 0, 'T'},
        {"valid", required_argument, 0, 'V'}, {"test", required_argument, 0, 'E'},
        {"seed", required_argument, 0, 'S'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "r:d:h", longs, NULL)) != -1) {
        char *end = NULL;
        long v = optarg ? strtol(optarg, &end, 10) : 0;
        if (optarg && (*end || v < 0)) {
            fprintf(stderr, "gen_poly_terms: bad value '%s'\n", optarg);
            return 1;
        }
        switch (c) {
        case 'r': r = v; break;
        case 'd': D = v; break;
        case 'K': K = v; break;
        case 'T': ntrain = v; break;
        case 'V': nvalid = v; break;
        case 'E': ntest = v; break;
        case 'S': seed = (uint64_t)v; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 1;
        }
    }
    if (optind != argc - 1 || r < 1 || D > 10) {
        usage(stderr);
        return 1;
    }
    const char *prefix = argv[optind];
    int32_t *mono = NULL;
    int64_t m = monomials((int)r, (int)D, &mono);
    if (m < 0 || K > m) {
        fprintf(stderr, "gen_poly_terms: %s\n", m < 0 ? "out of memory" :
                "--terms exceeds the number of monomials");
        return m < 0 ? 3 : 1;
    }
    km_rng g;
    km_rng_seed(&g, seed);
    int64_t *perm = malloc((size_t)m * sizeof *perm);
    for (int64_t a = 0; a < m; a++)
        perm[a] = a;
    for (int64_t a = 0; a < K; a++) {   /* K distinct monomials: a partial shuffle */
        int64_t b = a + (int64_t)km_rng_below(&g, (uint64_t)(m - a)), t = perm[a];
        perm[a] = perm[b];
        perm[b] = t;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s.terms", prefix);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "gen_poly_terms: %s: cannot write\n", path);
        return 2;
    }
    int Dm = D > 0 ? (int)D : 1;
    for (long k = 0; k < K; k++) {
        int q = 0;
        for (; q < Dm && mono[perm[k] * Dm + q] >= 0; q++)
            fprintf(f, q ? " %d" : "%d", mono[perm[k] * Dm + q] + 1);
        fputs(q ? "\n" : "const\n", f);
    }
    int rc = fclose(f) ? 2 : 0;
    if (!rc)
        rc = write_rows(prefix, "train", ntrain, (int)r, (int)D, (int)K, mono, perm, &g);
    if (!rc)
        rc = write_rows(prefix, "valid", nvalid, (int)r, (int)D, (int)K, mono, perm, &g);
    if (!rc)
        rc = write_rows(prefix, "test", ntest, (int)r, (int)D, (int)K, mono, perm, &g);
    free(mono);
    free(perm);
    return rc;
}
