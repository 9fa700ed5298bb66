/* gen_okl_signals.c - the multiple-signals data of "Learning low-rank output kernels"
 * (seed 001, section 6), in multi-output svmlight format.
 *
 * The model: 50 independent realisations Z_k of a zero-mean Gaussian process on [-1, 1]
 * with covariance exp(-10 |x1 - x2|), sampled on 200 uniformly spaced points; m processes
 * U_j = sum_k B_jk Z_k with mixing weights B_jk ~ U[0, 1]; outputs U_j(x_i) + noise, the
 * noise of output j Gaussian with variance equal to the signal's mean square over the grid
 * (signal-to-noise ratio 1:1). A random --train of the 200 points go to OUT, the others
 * to OUT_TEST (the paper: 100 / 100; the second half tunes lambda).
 *
 * Each line: "y_1,...,y_m 1:x". Draws in this order from one stream of --seed: the
 * 200 x 50 normals of Z, the m x 50 mixing weights, the split, then the noise row by row.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "cli.h"
#include "rng.h"

#define DEF_POINTS    200
#define DEF_PROCESSES 50
#define DEF_OUTPUTS   200
#define DEF_TRAIN     100
#define DEF_GAMMA     10
#define DEF_DIGITS    9

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: gen_okl_signals [options] OUT OUT_TEST\n"
        "Writes the multiple-signals data of Dinuzzo and Fukumizu, \"Learning low-rank\n"
        "output kernels\" (section 6): m mixtures of Gaussian-process realisations on a\n"
        "grid of [-1, 1], noise at signal-to-noise ratio 1:1, as multi-output svmlight\n"
        "lines \"y_1,...,y_m 1:x\". --train random grid points go to OUT, the rest to\n"
        "OUT_TEST ('-' = standard output for one of them).\n"
        "  -m M            outputs (processes U_j, default %d; Experiment 2: 100000)\n"
        "  --points N      grid points (default %d)\n"
        "  --processes K   Gaussian-process realisations mixed (default %d)\n"
        "  --gamma G       covariance exp(-G |x1 - x2|) (default %d)\n"
        "  --snr R         signal-to-noise ratio (mean squares; default 1; 0: no noise)\n"
        "  --train N       points written to OUT (default %d)\n"
        "  --digits D      significant digits of the outputs (default %d; 17 = exact)\n"
        "  --seed S        seed of the random draws (default 1)\n"
        "  -h, --help      this text\n",
        DEF_OUTPUTS, DEF_POINTS, DEF_PROCESSES, DEF_GAMMA, DEF_TRAIN, DEF_DIGITS);
}

int main(int argc, char **argv)
{
    km_cli_init("gen_okl_signals");
    long long m = DEF_OUTPUTS, points = DEF_POINTS, procs = DEF_PROCESSES, train = DEF_TRAIN;
    double gamma = DEF_GAMMA, snr = 1;
    int digits = DEF_DIGITS;
    uint64_t seed = 1;
    static const struct option longopts[] = {
        {"points", required_argument, 0, 'P'},  {"processes", required_argument, 0, 'K'},
        {"gamma", required_argument, 0, 'g'},   {"snr", required_argument, 0, 'r'},
        {"train", required_argument, 0, 't'},   {"digits", required_argument, 0, 'd'},
        {"seed", required_argument, 0, 'S'},    {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":m:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': m = km_cli_integer("-m", optarg, 1, 100000000); break;
        case 'P': points = km_cli_integer("--points", optarg, 2, 100000); break;
        case 'K': procs = km_cli_integer("--processes", optarg, 1, 100000); break;
        case 'g':
            gamma = km_cli_number("--gamma", optarg);
            if (!(gamma > 0))
                km_cli_die(1, "--gamma: expected a number > 0, got '%s'", optarg);
            break;
        case 'r':
            snr = km_cli_number("--snr", optarg);
            if (!(snr >= 0))
                km_cli_die(1, "--snr: expected a number >= 0, got '%s'", optarg);
            break;
        case 't': train = km_cli_integer("--train", optarg, 1, INT64_MAX); break;
        case 'd': digits = (int)km_cli_integer("--digits", optarg, 1, 17); break;
        case 'S': seed = (uint64_t)km_cli_integer("--seed", optarg, 0, INT64_MAX); break;
        case 'h': usage(stdout); return 0;
        case ':': km_cli_die(1, "option %s needs a value", argv[optind - 1]);
        default: km_cli_die(1, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        km_cli_die(1, "expected OUT and OUT_TEST");
    const char *out = argv[optind], *out_test = argv[optind + 1];
    if (strcmp(out, "-") == 0 && strcmp(out_test, "-") == 0)
        km_cli_die(1, "OUT and OUT_TEST cannot both be standard output");
    if (train >= points)
        km_cli_die(1, "--train %lld leaves no test points out of --points %lld", train, points);

    int64_t n = points, K = procs;
    double *x = malloc((size_t)n * sizeof *x), *C = malloc((size_t)(n * n) * sizeof *C);
    double *Z = malloc((size_t)(n * K) * sizeof *Z), *B = malloc((size_t)(m * K) * sizeof *B);
    double *S = malloc((size_t)(K * K) * sizeof *S), *sd = malloc((size_t)m * sizeof *sd);
    double *row = malloc((size_t)m * sizeof *row);
    int64_t *order = malloc((size_t)n * sizeof *order);
    char *is_train = calloc((size_t)n, 1);
    if (!x || !C || !Z || !B || !S || !sd || !row || !order || !is_train)
        km_cli_die(3, "out of memory");
    km_rng r;
    km_rng_seed(&r, seed);
    /* Z = chol(C) N: the GP realisations on the grid (C + 1e-10 I for rounding) */
    for (int64_t i = 0; i < n; i++)
        x[i] = -1 + 2.0 * (double)i / (double)(n - 1);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            C[i * n + j] = exp(-gamma * fabs(x[i] - x[j])) + (i == j ? 1e-10 : 0);
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, C, (lapack_int)n))
        km_cli_die(3, "Cholesky factorization of the GP covariance failed");
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++)
            C[i * n + j] = 0;
    double *N = malloc((size_t)(n * K) * sizeof *N);
    if (!N)
        km_cli_die(3, "out of memory");
    for (int64_t k = 0; k < n * K; k++)
        N[k] = km_rng_normal(&r);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)n, (blasint)K, (blasint)n, 1,
                C, (blasint)n, N, (blasint)K, 0, Z, (blasint)K);
    free(N);
    for (int64_t k = 0; k < m * K; k++)
        B[k] = km_rng_uniform(&r);
    /* noise sd of output j: sqrt(mean_i U_ij^2 / snr), mean_i U_ij^2 = b_j' (Z'Z / n) b_j */
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (blasint)K, (blasint)n, 1.0 / (double)n,
                Z, (blasint)K, 0, S, (blasint)K);
    double *Sb = malloc((size_t)K * sizeof *Sb);
    for (int64_t j = 0; j < m; j++) {
        cblas_dsymv(CblasRowMajor, CblasUpper, (blasint)K, 1, S, (blasint)K, B + j * K, 1, 0, Sb,
                    1);
        double power = cblas_ddot((blasint)K, B + j * K, 1, Sb, 1);
        sd[j] = snr > 0 ? sqrt(power / snr) : 0;
    }
    free(Sb);
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    km_rng_shuffle(&r, order, n);
    for (int64_t i = 0; i < train; i++)
        is_train[order[i]] = 1;
    FILE *f = km_cli_open_out(out), *ft = km_cli_open_out(out_test);
    for (int64_t i = 0; i < n; i++) {
        /* U(x_i) = B Z_i (m values), plus noise */
        cblas_dgemv(CblasRowMajor, CblasNoTrans, (blasint)m, (blasint)K, 1, B, (blasint)K,
                    Z + i * K, 1, 0, row, 1);
        FILE *dst = is_train[i] ? f : ft;
        for (int64_t j = 0; j < m; j++)
            fprintf(dst, j ? ",%.*g" : "%.*g", digits, row[j] + sd[j] * km_rng_normal(&r));
        fprintf(dst, " 1:%.17g\n", x[i]);
    }
    km_cli_close_out(f, out);
    km_cli_close_out(ft, out_test);
    free(x), free(C), free(Z), free(B), free(S), free(sd), free(row), free(order);
    free(is_train);
    return 0;
}
