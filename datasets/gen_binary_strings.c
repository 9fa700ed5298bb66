/* gen_binary_strings.c - the Binary strings data of Dinuzzo's thesis, section 4.5.1,
 * Experiment 1, in svmlight format.
 *
 * The model: l strings x in {0,1}^n, every bit independently Bernoulli(p); the output
 *   y = x_1 + x_2 + x_3 + eps,   eps ~ N(0, sigma^2),
 * depends on the first three bits only. The thesis draws l = 250 strings of n = 100 bits
 * with p = 0.5 and sigma = 0.01 and uses the first 150 for training, the other 100 for
 * testing: the defaults here. Only the bits equal to 1 are written (value 1, indices
 * 1..n increasing); labels are printed with %.17g (the double exactly).
 *
 * Rows come from one stream of --seed in order (per row: the n bits, then eps), so the
 * rows of a seed do not depend on --train: the split only decides which file gets them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "rng.h"

#define DEF_ROWS   250
#define DEF_BITS   100
#define DEF_P      0.5
#define DEF_SIGMA  0.01
#define DEF_TRAIN  150
#define MAX_BITS   100000000
#define RELEVANT   3         /* y sums this many leading bits */

/* Prints the usage text. */
static void usage(FILE *f)
{
    fprintf(f,
        "Usage: gen_binary_strings [options] [OUT [OUT_TEST]]\n"
        "Writes the Binary strings data of Dinuzzo's thesis (section 4.5.1, Experiment 1)\n"
        "in svmlight format: l random strings x in {0,1}^n, each bit Bernoulli(p), and\n"
        "y = x1 + x2 + x3 + eps with eps ~ N(0, sigma^2); only the bits equal to 1 are\n"
        "written. OUT is a file or '-' (standard output, the default). With OUT_TEST the\n"
        "first --train rows go to OUT and the others to OUT_TEST (the thesis: 150 / 100).\n"
        "  -l L          strings (rows) to write (default %d)\n"
        "  -n N          bits per string (features, default %d)\n"
        "  -p P          probability of a 1 bit, 0 < P < 1 (default %g)\n"
        "  --sigma S     standard deviation of the noise, S >= 0 (default %g)\n"
        "  --train N     with OUT_TEST: rows written to OUT (default %d)\n"
        "  --seed S      seed of the random draws (default 1)\n"
        "  -h, --help    this text\n",
        DEF_ROWS, DEF_BITS, DEF_P, DEF_SIGMA, DEF_TRAIN);
}

int main(int argc, char **argv)
{
    km_cli_init("gen_binary_strings");
    long long rows = DEF_ROWS, bits = DEF_BITS, train = DEF_TRAIN;
    double p = DEF_P, sigma = DEF_SIGMA;
    uint64_t seed = 1;
    int have_train = 0;
    static const struct option longopts[] = {
        {"sigma", required_argument, 0, 's'},
        {"train", required_argument, 0, 't'},
        {"seed", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":l:n:p:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': rows = km_cli_integer("-l", optarg, 1, INT64_MAX); break;
        case 'n': bits = km_cli_integer("-n", optarg, RELEVANT, MAX_BITS); break;
        case 'p':
            p = km_cli_number("-p", optarg);
            if (!(p > 0 && p < 1))
                km_cli_die(1, "-p: expected a probability strictly between 0 and 1, got '%s'",
                           optarg);
            break;
        case 's':
            sigma = km_cli_number("--sigma", optarg);
            if (sigma < 0)
                km_cli_die(1, "--sigma: expected a number >= 0, got '%s'", optarg);
            break;
        case 't':
            train = km_cli_integer("--train", optarg, 1, INT64_MAX);
            have_train = 1;
            break;
        case 'S': seed = (uint64_t)km_cli_integer("--seed", optarg, 0, INT64_MAX); break;
        case 'h': usage(stdout); return 0;
        case ':': km_cli_die(1, "option %s needs a value", argv[optind - 1]);
        default: km_cli_die(1, "unknown option '%s'", argv[optind - 1]);
        }
    }
    int nout = argc - optind;
    if (nout > 2)
        km_cli_die(1, "unexpected argument '%s' (at most OUT and OUT_TEST)", argv[optind + 2]);
    const char *out = nout >= 1 ? argv[optind] : "-";
    const char *out_test = nout == 2 ? argv[optind + 1] : NULL;
    if (out_test) {
        if (strcmp(out, "-") == 0 && strcmp(out_test, "-") == 0)
            km_cli_die(1, "OUT and OUT_TEST cannot both be standard output");
        if (train >= rows)
            km_cli_die(1, "--train %lld%s leaves no test rows out of -l %lld", train,
                       have_train ? "" : " (the default)", rows);
    } else {
        if (have_train)
            km_cli_die(1, "--train needs two output files (OUT OUT_TEST)");
        train = rows;
    }

    int32_t *ones = malloc((size_t)bits * sizeof *ones); /* indices of a row's 1 bits */
    if (!ones)
        km_cli_die(3, "out of memory");
    FILE *f = km_cli_open_out(out);
    FILE *ft = out_test ? km_cli_open_out(out_test) : NULL;
    km_rng r;
    km_rng_seed(&r, seed);
    FILE *dst = f;
    for (long long i = 0; i < rows; i++) {
        if (i == train) {
            km_cli_close_out(f, out);
            dst = ft;
        }
        int32_t k = 0, sum = 0;
        for (int32_t j = 0; j < bits; j++) {
            if (km_rng_uniform(&r) < p) {
                ones[k++] = j + 1;
                if (j < RELEVANT)
                    sum++;
            }
        }
        double y = sum + sigma * km_rng_normal(&r);
        fprintf(dst, "%.17g", y);
        for (int32_t j = 0; j < k; j++)
            fprintf(dst, " %" PRId32 ":1", ones[j]);
        fputc('\n', dst);
    }
    km_cli_close_out(dst, dst == f ? out : out_test);
    free(ones);
    return 0;
}
