/* gen_music.c - the simulated music recommendation data of Dinuzzo's thesis, section 5.4.
 *
 * The thesis took 489 artists with 19 LastFM tag weights each (not available): here the
 * tags are generated. Item i gets one main tag (weight U[0.5, 1]) and each other tag with
 * probability 0.15 (weight U[0, 0.8]); the vector is normalised to the unit sphere (all
 * weights non-negative, as tag counts). Then as in the thesis: an average user h drawn from
 * the Gaussian process with covariance K(x1, x2) = exp(x1'x2) over the items (eigenvectors
 * of the item kernel matrix, negative rounding eigenvalues taken as 0); m users
 * g_j = 0.25 h + 0.75 h~_j with h~_j from the Gaussian process with covariance x1'x2, that
 * is h~_j(x) = theta_j'x with theta_j ~ N(0, I); for each user `--ratings` distinct items
 * drawn uniformly and ratings y = g_j(x) + N(0, sigma^2).
 *
 * Files: PREFIX.items "h(x_i) 1:x_i1 ..." (one line per item, label = the average user);
 * PREFIX.train "y qid:j 1:x ..." (users 1..m in order, their ratings in draw order);
 * PREFIX.users "j theta_j1 ... theta_jd" (the true individual shifts). Numbers %.17g.
 * Draws in this order from one stream of --seed: the item tags, the GP normals of h, then
 * per user theta_j, the items and the noise.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "cli.h"
#include "rng.h"

static const char usage[] =
    "Usage: gen_music [options] PREFIX\n"
    "Writes the simulated music recommendation data of Dinuzzo's thesis 5.4 (tags\n"
    "generated: the LastFM tags are not available) to PREFIX.items, PREFIX.train and\n"
    "PREFIX.users; see the comment at the top of datasets/gen_music.c.\n"
    "  --items N     items (artists, default 489)\n"
    "  --tags D      tag features (default 19)\n"
    "  --genres G    genre prototypes of the tags (default 8)\n"
    "  -m M          users (default 100000)\n"
    "  --ratings R   ratings per user (default 5)\n"
    "  --sigma S     noise standard deviation (default 0.01)\n"
    "  --seed S      seed of the random draws (default 1)\n"
    "  -h            this text\n";

static double unif(km_rng *r)
{
    return (double)(km_rng_next(r) >> 11) * 0x1p-53;
}

static FILE *open_or_die(const char *prefix, const char *ext)
{
    size_t n = strlen(prefix) + strlen(ext) + 1;
    char *p = malloc(n);
    if (!p)
        km_cli_die(3, "out of memory");
    snprintf(p, n, "%s%s", prefix, ext);
    FILE *f = km_cli_open_out(p);
    free(p);
    return f;
}

int main(int argc, char **argv)
{
    km_cli_init("gen_music");
    long long items = 489, tags = 19, m = 100000, ratings = 5, seed = 1, genres = 8;
    double sigma = 0.01;
    const char *prefix = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() km_cli_value(argc, argv, &i)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--items")) {
            items = km_cli_integer(a, NEXT(), 1, 100000);
        } else if (!strcmp(a, "--tags")) {
            tags = km_cli_integer(a, NEXT(), 1, 10000);
        } else if (!strcmp(a, "-m")) {
            m = km_cli_integer(a, NEXT(), 1, 100000000);
        } else if (!strcmp(a, "--genres")) {
            genres = km_cli_integer(a, NEXT(), 1, 100000);
        } else if (!strcmp(a, "--ratings")) {
            ratings = km_cli_integer(a, NEXT(), 1, 1000000);
        } else if (!strcmp(a, "--sigma")) {
            sigma = km_cli_number(a, NEXT());
        } else if (!strcmp(a, "--seed")) {
            seed = km_cli_integer(a, NEXT(), 0, INT64_MAX);
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else if (!prefix) {
            prefix = a;
        } else {
            km_cli_die(1, "too many arguments ('%s')", a);
        }
#undef NEXT
    }
    if (!prefix)
        km_cli_die(1, "no output PREFIX");
    if (ratings > items)
        km_cli_die(1, "--ratings %lld > --items %lld: ratings are of distinct items", ratings,
                   items);
    if (!(sigma >= 0))
        km_cli_die(1, "--sigma must be >= 0");
    km_rng r;
    km_rng_seed(&r, (uint64_t)seed);
    int64_t n = items, d = tags;
    double *X = calloc((size_t)(n * d), sizeof *X), *K = malloc((size_t)(n * n) * sizeof *K);
    double *ev = malloc((size_t)n * sizeof *ev), *h = calloc((size_t)n, sizeof *h);
    double *theta = malloc((size_t)d * sizeof *theta);
    int64_t *perm = malloc((size_t)n * sizeof *perm);
    if (!X || !K || !ev || !h || !theta || !perm)
        km_cli_die(3, "out of memory");
    /* genres: each a prototype weighting 2 to 5 tags; an item follows one genre (or two,
     * with probability 0.3), its weights scaled by U[0.5, 1.5], plus stray tags; then on
     * the unit sphere, non-negative */
    double *proto = calloc((size_t)(genres * d), sizeof *proto);
    if (!proto)
        km_cli_die(3, "out of memory");
    for (int64_t q = 0; q < genres; q++)
        for (int64_t k = 0, nt = 2 + (int64_t)km_rng_below(&r, 4); k < nt; k++)
            proto[q * d + (int64_t)km_rng_below(&r, (uint64_t)d)] = 0.3 + 0.7 * unif(&r);
    for (int64_t i = 0; i < n; i++) {
        int64_t g1 = (int64_t)km_rng_below(&r, (uint64_t)genres);
        int64_t g2 = unif(&r) < 0.3 ? (int64_t)km_rng_below(&r, (uint64_t)genres) : g1;
        double nrm = 0;
        for (int64_t t = 0; t < d; t++) {
            double v = (proto[g1 * d + t] + (g2 != g1 ? 0.5 * proto[g2 * d + t] : 0)) *
                       (0.5 + unif(&r));
            if (unif(&r) < 0.05)
                v += 0.3 * unif(&r);
            X[i * d + t] = v;
            nrm += v * v;
        }
        for (int64_t t = 0; t < d; t++)
            X[i * d + t] /= sqrt(nrm);
    }
    free(proto);
    /* h ~ GP(0, exp(x'y)) on the items: h = V diag(sqrt(max(ev, 0))) xi */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)d, 1.0, X,
                (int)d, X, (int)d, 0.0, K, (int)n);
    for (int64_t i = 0; i < n * n; i++)
        K[i] = exp(K[i]);
    int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', (int)n, K, (int)n, ev);
    if (info)
        km_cli_die(3, "dsyevd failed (info %d)", info);
    for (int64_t k = 0; k < n; k++) {
        double s = sqrt(ev[k] > 0 ? ev[k] : 0) * km_rng_normal(&r);
        for (int64_t i = 0; i < n; i++)
            h[i] += K[i * n + k] * s;
    }
    FILE *fi = open_or_die(prefix, ".items"), *ft = open_or_die(prefix, ".train"),
         *fu = open_or_die(prefix, ".users");
    for (int64_t i = 0; i < n; i++) {
        fprintf(fi, "%.17g", h[i]);
        for (int64_t t = 0; t < d; t++)
            if (X[i * d + t] != 0)
                fprintf(fi, " %lld:%.17g", (long long)t + 1, X[i * d + t]);
        fputc('\n', fi);
    }
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    for (long long j = 1; j <= m; j++) {
        fprintf(fu, "%lld", j);
        for (int64_t t = 0; t < d; t++) {
            theta[t] = km_rng_normal(&r);
            fprintf(fu, " %.17g", theta[t]);
        }
        fputc('\n', fu);
        for (long long k = 0; k < ratings; k++) {   /* distinct items: partial shuffle */
            int64_t pick = k + (int64_t)km_rng_below(&r, (uint64_t)(n - k));
            int64_t tmp = perm[k];
            perm[k] = perm[pick];
            perm[pick] = tmp;
            int64_t i = perm[k];
            double g = 0.25 * h[i];
            for (int64_t t = 0; t < d; t++)
                g += 0.75 * theta[t] * X[i * d + t];
            fprintf(ft, "%.17g qid:%lld", g + sigma * km_rng_normal(&r), j);
            for (int64_t t = 0; t < d; t++)
                if (X[i * d + t] != 0)
                    fprintf(ft, " %lld:%.17g", (long long)t + 1, X[i * d + t]);
            fputc('\n', ft);
        }
    }
    km_cli_close_out(fi, "items");
    km_cli_close_out(ft, "train");
    km_cli_close_out(fu, "users");
    free(X);
    free(K);
    free(ev);
    free(h);
    free(theta);
    free(perm);
    return 0;
}
