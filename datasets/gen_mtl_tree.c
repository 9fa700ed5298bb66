/* gen_mtl_tree.c - the hierarchical multi-task data of Widmer, Kloft and Ratsch (seed 004,
 * section 4): a binary tree of tasks whose leaves are the tasks; the root's mean is 1_d,
 * each child flips the sign of --flips random dimensions of its parent's mean; task t's
 * rows are x ~ N(+mu_t / 2, s^2 I) (label +1) and N(-mu_t / 2, s^2 I) (label -1). The paper
 * says "depth 4 (2^4 = 32 leaves)": 32 leaves need 5 levels below the root, the default.
 *
 * Writes OUT.train and OUT.test (svmlight, qid: = task 1..2^depth, rows alternating +1 and
 * -1 per task) and OUT.groups (one line per tree node, root first: the tasks below it, for
 * train -s mtmkl --task-groups). The tree comes from --tree-seed, the rows from --seed:
 * draws of one tree (training, validation, test) share --tree-seed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dtoa.h"
#include "rng.h"

static void usage(void)
{
    printf("Usage: gen_mtl_tree [options] OUT\n"
           "Writes OUT.train, OUT.test and OUT.groups: the tree-structured multi-task data of\n"
           "seed 004 (section 4), tasks = the leaves of a binary tree.\n"
           "  --depth D      levels below the root: 2^D tasks (default 5: 32 tasks)\n"
           "  --dim N        features (default 100)\n"
           "  --flips K      dimensions whose sign each child flips (default 5)\n"
           "  --sigma S      standard deviation s of the noise (default 20, as printed)\n"
           "  --train N      training rows per class per task (default 10)\n"
           "  --test N       test rows per class per task (default 1000)\n"
           "  --tree-seed S  seed of the tree (default 1)\n"
           "  --seed S       seed of the rows (default 1)\n"
           "  -h, --help     this text\n");
}

/* Writes n rows per class of every task with means +-mu_t / 2 and noise sd s. */
static void write_rows(const char *path, const double *mu, int T, int d, int64_t n, double s,
                       km_rng *r)
{
    FILE *f = km_cli_open_out(path);
    char b[KM_DTOA_SIZE];
    for (int t = 0; t < T; t++)
        for (int64_t i = 0; i < 2 * n; i++) {
            double sign = i % 2 ? -1 : 1;
            fprintf(f, "%+d qid:%d", (int)sign, t + 1);
            for (int j = 0; j < d; j++) {
                km_dtoa(sign * mu[(int64_t)t * d + j] / 2 + s * km_rng_normal(r), b);
                fprintf(f, " %d:%s", j + 1, b);
            }
            fputc('\n', f);
        }
    km_cli_close_out(f, path);
}

int main(int argc, char **argv)
{
    km_cli_init("gen_mtl_tree");
    long long depth = 5, dim = 100, flips = 5, ntrain = 10, ntest = 1000;
    long long tseed = 1, seed = 1;
    double s = 20;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() km_cli_value(argc, argv, &i)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (!strcmp(a, "--depth")) {
            depth = km_cli_integer(a, NEXT(), 0, 20);
        } else if (!strcmp(a, "--dim")) {
            dim = km_cli_integer(a, NEXT(), 1, 1000000);
        } else if (!strcmp(a, "--flips")) {
            flips = km_cli_integer(a, NEXT(), 0, 1000000);
        } else if (!strcmp(a, "--sigma")) {
            s = km_cli_number(a, NEXT());
            if (!(s >= 0))
                km_cli_die(1, "--sigma: need s >= 0");
        } else if (!strcmp(a, "--train")) {
            ntrain = km_cli_integer(a, NEXT(), 1, 100000000);
        } else if (!strcmp(a, "--test")) {
            ntest = km_cli_integer(a, NEXT(), 1, 100000000);
        } else if (!strcmp(a, "--tree-seed")) {
            tseed = km_cli_integer(a, NEXT(), 0, INT64_MAX);
        } else if (!strcmp(a, "--seed")) {
            seed = km_cli_integer(a, NEXT(), 0, INT64_MAX);
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else if (!out) {
            out = a;
        } else {
            km_cli_die(1, "too many arguments");
        }
#undef NEXT
    }
    if (!out)
        km_cli_die(1, "no output name given");
    if (flips > dim)
        km_cli_die(1, "--flips %lld exceeds --dim %lld", flips, dim);
    int d = (int)dim, T = 1 << depth, nodes = 2 * T - 1;
    /* node k (1-based, heap order): children 2k and 2k + 1; leaves T..2T-1 = tasks 1..T */
    double *mu = malloc((size_t)nodes * (size_t)d * sizeof *mu);
    int64_t *perm = malloc((size_t)d * sizeof *perm);
    if (!mu || !perm)
        km_cli_die(3, "out of memory");
    km_rng r;
    km_rng_seed(&r, (uint64_t)tseed);
    for (int j = 0; j < d; j++)
        mu[j] = 1;
    for (int k = 2; k <= nodes; k++) {
        memcpy(mu + (int64_t)(k - 1) * d, mu + (int64_t)(k / 2 - 1) * d, (size_t)d * sizeof *mu);
        for (int j = 0; j < d; j++)
            perm[j] = j;
        km_rng_shuffle(&r, perm, d);
        for (int q = 0; q < flips; q++)
            mu[(int64_t)(k - 1) * d + perm[q]] *= -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s.groups", out);
    FILE *g = km_cli_open_out(path);
    for (int k = 1; k <= nodes; k++) {   /* the leaves below node k: a range of tasks */
        int lo = k, hi = k;
        while (lo < T) {
            lo *= 2;
            hi = 2 * hi + 1;
        }
        if (lo == hi)
            fprintf(g, "%d\n", lo - T + 1);
        else
            fprintf(g, "%d-%d\n", lo - T + 1, hi - T + 1);
    }
    km_cli_close_out(g, path);
    km_rng_seed(&r, (uint64_t)seed * 0x9e3779b97f4a7c15ull + 12345);
    snprintf(path, sizeof path, "%s.train", out);
    write_rows(path, mu + (int64_t)(T - 1) * d, T, d, ntrain, s, &r);
    snprintf(path, sizeof path, "%s.test", out);
    write_rows(path, mu + (int64_t)(T - 1) * d, T, d, ntest, s, &r);
    free(mu);
    free(perm);
    return 0;
}
