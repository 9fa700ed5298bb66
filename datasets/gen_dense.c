/* gen_dense.c - a synthetic dense binary set for the kernel benchmarks (bench/libsvm.sh `dense`):
 * two overlapping Gaussian mixtures, written as svmlight text.
 *
 * The model (fixed by --seed): each class (+1, -1) is a mixture of K components (--components)
 * in d dimensions (--features); component centres are N(0, I). A row draws its class with
 * probability 1/2, a component of that class uniformly, and x = (centre + sigma z) / sqrt(1 +
 * sigma^2), z ~ N(0, I), sigma = --noise: every feature then has mean 0 and variance 1 over
 * the model, so the data are standardised by construction (train and test alike). sigma sets
 * the overlap of the classes: the default gives an RBF SVM (C 4, gamma 0.1) about 89% test
 * accuracy with about a third of the training rows as support vectors (svm-train: 89.35%,
 * 2,808 of 8,000 for the bench pair below). Rows (--split-seed) are drawn
 * independently of the model: a training and a test file of one --seed and different
 * --split-seed are two samples of one distribution. Values print as %.6g, every feature
 * written (1..d), labels +1/-1.
 */
#include <math.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "rng.h"

#define DEF_ROWS       8000
#define DEF_FEATURES   16
#define DEF_COMPONENTS 4
#define DEF_NOISE      1.8
#define MAX_FEATURES   100000
#define MAX_COMPONENTS 10000

/* Prints the usage text. */
static void usage(FILE *f)
{
    fprintf(f,
        "Usage: gen_dense [options] [OUT]\n"
        "Writes a dense binary data set in svmlight format to OUT (default '-', standard\n"
        "output): two classes, each a mixture of Gaussian components with N(0, I) centres,\n"
        "x = (centre + noise z) / sqrt(1 + noise^2), so every feature has mean 0, variance 1.\n"
        "  --rows N        rows to write (default %d)\n"
        "  --features D    dimensions (default %d)\n"
        "  --components K  components per class (default %d)\n"
        "  --noise S       within-component standard deviation, S >= 0, before scaling:\n"
        "                  larger = more overlap (default %g)\n"
        "  --seed S        seed of the model: the centres (default 1)\n"
        "  --split-seed T  seed of the rows drawn (default 1); another T = another sample\n"
        "  -h, --help      this text\n",
        DEF_ROWS, DEF_FEATURES, DEF_COMPONENTS, DEF_NOISE);
}

int main(int argc, char **argv)
{
    km_cli_init("gen_dense");
    long long rows = DEF_ROWS, d = DEF_FEATURES, k = DEF_COMPONENTS;
    double noise = DEF_NOISE;
    uint64_t seed = 1, split = 1;
    static const struct option longopts[] = {
        {"rows", required_argument, 0, 'r'},
        {"features", required_argument, 0, 'd'},
        {"components", required_argument, 0, 'k'},
        {"noise", required_argument, 0, 'n'},
        {"seed", required_argument, 0, 'S'},
        {"split-seed", required_argument, 0, 'T'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': rows = km_cli_integer("--rows", optarg, 1, INT64_MAX); break;
        case 'd': d = km_cli_integer("--features", optarg, 1, MAX_FEATURES); break;
        case 'k': k = km_cli_integer("--components", optarg, 1, MAX_COMPONENTS); break;
        case 'n':
            noise = km_cli_number("--noise", optarg);
            if (!(noise >= 0) || !isfinite(noise))
                km_cli_die(1, "--noise: expected a finite number >= 0, got '%s'", optarg);
            break;
        case 'S': seed = (uint64_t)km_cli_integer("--seed", optarg, 0, INT64_MAX); break;
        case 'T': split = (uint64_t)km_cli_integer("--split-seed", optarg, 0, INT64_MAX); break;
        case 'h': usage(stdout); return 0;
        case ':': km_cli_die(1, "option %s needs a value", argv[optind - 1]);
        default: km_cli_die(1, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        km_cli_die(1, "unexpected argument '%s' (at most OUT)", argv[optind + 1]);
    const char *out = argc - optind == 1 ? argv[optind] : "-";

    /* The model: 2 K centres, class +1's first. */
    double *centre = malloc((size_t)(2 * k * d) * sizeof *centre);
    if (!centre)
        km_cli_die(3, "out of memory");
    km_rng r;
    km_rng_seed(&r, seed);
    for (long long i = 0; i < 2 * k * d; i++)
        centre[i] = km_rng_normal(&r);
    double scale = 1 / sqrt(1 + noise * noise);

    FILE *f = km_cli_open_out(out);
    km_rng_seed(&r, split ^ UINT64_C(0x9e3779b97f4a7c15));
    for (long long i = 0; i < rows; i++) {
        int pos = km_rng_next(&r) >> 63;
        const double *m = centre + ((pos ? 0 : k) + (long long)km_rng_below(&r, (uint64_t)k)) * d;
        fputs(pos ? "+1" : "-1", f);
        for (long long j = 0; j < d; j++)
            fprintf(f, " %lld:%.6g", j + 1, scale * (m[j] + noise * km_rng_normal(&r)));
        fputc('\n', f);
    }
    km_cli_close_out(f, out);
    free(centre);
    return 0;
}
