/* gen_microarray.c - a synthetic stand-in for the 14 Cancers microarray data (Ramaswamy et
 * al., PNAS 2001; Hastie, Tibshirani & Friedman, ESL 2nd ed., chapter 18) used in
 * Dinuzzo's thesis, section 4.5.3 and Table 4.5: 144 training and 54 test patients,
 * 16,063 genes, 14 cancer classes. The real data are not available here; this file makes
 * data of the same shape from a stated model. It is not derived from the real data.
 *
 * The model, on the log2 scale (fixed by --seed, -n, -k, --informative):
 *   - gene g has a baseline m_g ~ N(BASE_MEAN, BASE_SD^2) and a noise level
 *     s_g = NOISE_MEDIAN * exp(NOISE_SPREAD * N(0,1));
 *   - correlated blocks: BLOCK_FRAC of the genes, picked at random, form blocks of
 *     BLOCK_SIZE genes; a gene of block B has loading r_g ~ U(LOAD_MIN, LOAD_MAX) on a
 *     factor f_B ~ N(0,1) drawn once per patient (genes of a block correlate about r r');
 *   - markers: each class c gets --informative genes of its own (distinct across
 *     classes) with shift d_g = +-s_g * EFFECT * U(0.5, 1.5), up with probability UP_FRAC.
 * A patient of class c (drawn from a stream of --seed for the training file and another
 * for the test file) has a tumour purity a ~ U(PURITY_MIN, 1) and an array offset
 * o ~ N(0, OFFSET_SD^2) common to all its genes; gene g reads
 *   z_g = m_g + o + s_g * (r_g f_B(g) + sqrt(1 - r_g^2) e_g) + a * d_g   (e_g ~ N(0,1)),
 * (r_g = 0 outside blocks, d_g = 0 for genes that are not markers of c) and is written as
 * the expression level 2^z_g with %.6g: positive, right-skewed, gene-specific scales.
 *
 * Class sizes: with 14 classes (-k 14), the training and test rows are shared out in the
 * proportions of the real split (GCM_TRAIN, GCM_TEST: 144 and 54 rows exactly at the
 * defaults), otherwise evenly; largest remainders, ties to the lower class. Labels are
 * 1..k; the rows of each file are in random order. Rows are dense: all n genes printed.
 * The training rows do not depend on -t, nor the test rows on -l.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "rng.h"

/* Constants of the model, in one place. */
#define BASE_MEAN     7.0    /* log2 baseline expression: mean over genes */
#define BASE_SD       1.5    /*   and its spread */
#define NOISE_MEDIAN  0.5    /* log2 noise standard deviation of a gene: median */
#define NOISE_SPREAD  0.4    /*   and log-scale spread */
#define BLOCK_FRAC    0.2    /* fraction of genes in correlated blocks */
#define BLOCK_SIZE    40     /* genes per block */
#define LOAD_MIN      0.4    /* loading of a block gene on its factor */
#define LOAD_MAX      0.9
#define EFFECT        6.0    /* marker shift, in units of the gene's noise sd */
#define UP_FRAC       0.7    /* fraction of markers up-regulated in their class */
#define PURITY_MIN    0.4    /* tumour purity a ~ U(PURITY_MIN, 1) scales the shifts */
#define OFFSET_SD     0.2    /* per-array log2 offset */

#define DEF_TRAIN     144
#define DEF_TEST      54
#define DEF_GENES     16063
#define DEF_CLASSES   14
#define DEF_MARKERS   30
#define MAX_GENES     100000000
#define MAX_ROWS      100000000

/* Class sizes of the 14 Cancers split (ESL, after Ramaswamy et al. 2001): breast,
 * prostate, lung, colorectal, lymphoma, bladder, melanoma, uterus, leukemia, renal,
 * pancreas, ovary, mesothelioma, CNS. */
static const int GCM_TRAIN[14] = {8, 8, 8, 8, 16, 8, 8, 8, 24, 8, 8, 8, 8, 16};
static const int GCM_TEST[14] = {4, 6, 4, 4, 6, 3, 2, 2, 6, 3, 3, 4, 3, 4};

/* The model of --seed. */
typedef struct model {
    int32_t n, k;
    double *base;     /* m_g */
    double *sd;       /* s_g */
    double *load;     /* r_g (0 outside blocks) */
    double *resid;    /* sqrt(1 - r_g^2) */
    int32_t *block;   /* block of g, or -1 */
    int32_t nblocks;
    int32_t *marker;  /* class (0-based) whose marker g is, or -1 */
    double *shift;    /* d_g */
} model;

/* Seeds a generator from a seed and a stream number (independent streams). */
static void rng_seed(km_rng *r, uint64_t seed, uint64_t stream)
{
    km_rng_seed(r, seed ^ (0xD1B54A32D192ED03ULL * (stream + 1)));
}

/* Prints the usage text. */
static void usage(FILE *f)
{
    fprintf(f,
        "Usage: gen_microarray [options] OUT_TRAIN OUT_TEST\n"
        "Writes a synthetic stand-in for the 14 Cancers microarray data (Ramaswamy et al.\n"
        "2001; thesis Table 4.5) in svmlight format: dense rows of positive expression\n"
        "levels (log-normal genes, correlated gene blocks, a few marker genes per class),\n"
        "labels 1..k. Either output may be '-' (standard output).\n"
        "  -l L            training rows (default %d)\n"
        "  -t T            test rows (default %d)\n"
        "  -n N            genes (features, default %d)\n"
        "  -k K            classes (default %d; with 14 the class sizes follow the real\n"
        "                  split, otherwise they are even)\n"
        "  --informative M marker genes per class (default %d)\n"
        "  --seed S        seed of the model and of the rows (default 1)\n"
        "  -h, --help      this text\n",
        DEF_TRAIN, DEF_TEST, DEF_GENES, DEF_CLASSES, DEF_MARKERS);
}

/* Shares total rows out over k classes in proportion to w[0..k) (largest remainders,
 * ties to the lower class) into count[0..k). */
static void apportion(const int *w, int32_t k, int64_t total, int64_t *count)
{
    int64_t wsum = 0, given = 0;
    for (int32_t c = 0; c < k; c++)
        wsum += w[c];
    for (int32_t c = 0; c < k; c++) {
        count[c] = total * w[c] / wsum;
        given += count[c];
    }
    while (given < total) { /* the largest remainder total * w[c] mod wsum gets one more */
        int32_t best = 0;
        int64_t rbest = -1;
        for (int32_t c = 0; c < k; c++) {
            int64_t rem = total * w[c] - count[c] * wsum;
            if (rem > rbest) {
                rbest = rem;
                best = c;
            }
        }
        count[best]++;
        given++;
    }
}

/* Frees the model's arrays. */
static void model_free(model *m)
{
    free(m->base);
    free(m->sd);
    free(m->load);
    free(m->resid);
    free(m->block);
    free(m->marker);
    free(m->shift);
}

/* Builds the model of seed; -1 when out of memory. */
static int model_init(model *m, uint64_t seed, int32_t n, int32_t k, int32_t markers)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    m->k = k;
    size_t nn = (size_t)n;
    m->base = malloc(nn * sizeof *m->base);
    m->sd = malloc(nn * sizeof *m->sd);
    m->load = calloc(nn, sizeof *m->load);
    m->resid = malloc(nn * sizeof *m->resid);
    m->block = malloc(nn * sizeof *m->block);
    m->marker = malloc(nn * sizeof *m->marker);
    m->shift = calloc(nn, sizeof *m->shift);
    int64_t *perm = malloc(nn * sizeof *perm);
    if (!m->base || !m->sd || !m->load || !m->resid || !m->block || !m->marker || !m->shift
        || !perm) {
        free(perm);
        return -1;
    }
    km_rng r;
    rng_seed(&r, seed, 0);
    for (int32_t g = 0; g < n; g++) {
        m->base[g] = BASE_MEAN + BASE_SD * km_rng_normal(&r);
        m->sd[g] = NOISE_MEDIAN * exp(NOISE_SPREAD * km_rng_normal(&r));
        m->resid[g] = 1.0;
        m->block[g] = -1;
        m->marker[g] = -1;
        perm[g] = g;
    }
    /* blocks: the first nblocks * BLOCK_SIZE genes of a random order */
    km_rng_shuffle(&r, perm, n);
    m->nblocks = (int32_t)(BLOCK_FRAC * n / BLOCK_SIZE);
    for (int64_t j = 0; j < (int64_t)m->nblocks * BLOCK_SIZE; j++) {
        int64_t g = perm[j];
        m->block[g] = (int32_t)(j / BLOCK_SIZE);
        m->load[g] = LOAD_MIN + (LOAD_MAX - LOAD_MIN) * km_rng_uniform(&r);
        m->resid[g] = sqrt(1.0 - m->load[g] * m->load[g]);
    }
    /* markers: consecutive runs of another random order, one run per class */
    km_rng_shuffle(&r, perm, n);
    for (int64_t j = 0; j < (int64_t)k * markers; j++) {
        int64_t g = perm[j];
        double dir = km_rng_uniform(&r) < UP_FRAC ? 1.0 : -1.0;
        m->marker[g] = (int32_t)(j / markers);
        m->shift[g] = dir * m->sd[g] * EFFECT * (0.5 + km_rng_uniform(&r));
    }
    free(perm);
    return 0;
}

/* Writes rows patients, count[c] of class c in random order, drawn from stream of seed,
 * to f; returns 0, -1 when out of memory. */
static int write_rows(FILE *f, const model *m, const int64_t *count, int64_t rows,
                      uint64_t seed, uint64_t stream)
{
    int64_t *label = malloc((size_t)rows * sizeof *label);
    double *factor = malloc(((size_t)m->nblocks + 1) * sizeof *factor);
    if (!label || !factor) {
        free(label);
        free(factor);
        return -1;
    }
    int64_t i = 0;
    for (int32_t c = 0; c < m->k; c++)
        for (int64_t j = 0; j < count[c]; j++)
            label[i++] = c;
    km_rng r;
    rng_seed(&r, seed, stream);
    km_rng_shuffle(&r, label, rows);
    for (i = 0; i < rows; i++) {
        int32_t y = (int32_t)label[i];
        double purity = PURITY_MIN + (1.0 - PURITY_MIN) * km_rng_uniform(&r);
        double offset = OFFSET_SD * km_rng_normal(&r);
        for (int32_t b = 0; b < m->nblocks; b++)
            factor[b] = km_rng_normal(&r);
        fprintf(f, "%d", (int)y + 1);
        for (int32_t g = 0; g < m->n; g++) {
            double noise = m->resid[g] * km_rng_normal(&r);
            if (m->block[g] >= 0)
                noise += m->load[g] * factor[m->block[g]];
            double z = m->base[g] + offset + m->sd[g] * noise;
            if (m->marker[g] == y)
                z += purity * m->shift[g];
            fprintf(f, " %d:%.6g", (int)g + 1, exp2(z));
        }
        fputc('\n', f);
    }
    free(label);
    free(factor);
    return 0;
}

int main(int argc, char **argv)
{
    km_cli_init("gen_microarray");
    long long train = DEF_TRAIN, test = DEF_TEST, genes = DEF_GENES, classes = DEF_CLASSES;
    long long markers = DEF_MARKERS;
    uint64_t seed = 1;
    static const struct option longopts[] = {
        {"informative", required_argument, 0, 'i'},
        {"seed", required_argument, 0, 's'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":l:t:n:k:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': train = km_cli_integer("-l", optarg, 1, MAX_ROWS); break;
        case 't': test = km_cli_integer("-t", optarg, 1, MAX_ROWS); break;
        case 'n': genes = km_cli_integer("-n", optarg, 1, MAX_GENES); break;
        case 'k': classes = km_cli_integer("-k", optarg, 2, 1000000); break;
        case 'i': markers = km_cli_integer("--informative", optarg, 0, MAX_GENES); break;
        case 's': seed = (uint64_t)km_cli_integer("--seed", optarg, 0, INT64_MAX); break;
        case 'h': usage(stdout); return 0;
        case ':': km_cli_die(1, "option %s needs a value", argv[optind - 1]);
        default: km_cli_die(1, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        km_cli_die(1, argc - optind < 2 ? "expected two output files: OUT_TRAIN OUT_TEST"
                                        : "too many arguments (expected OUT_TRAIN OUT_TEST)");
    const char *out_train = argv[optind], *out_test = argv[optind + 1];
    if (strcmp(out_train, "-") == 0 && strcmp(out_test, "-") == 0)
        km_cli_die(1, "OUT_TRAIN and OUT_TEST cannot both be standard output");
    if (classes * markers > genes)
        km_cli_die(1, "-k %lld classes x --informative %lld markers exceed -n %lld genes",
                   classes, markers, genes);

    int32_t k = (int32_t)classes;
    int *even = malloc((size_t)k * sizeof *even);
    int64_t *ntrain = malloc((size_t)k * sizeof *ntrain);
    int64_t *ntest = malloc((size_t)k * sizeof *ntest);
    if (!even || !ntrain || !ntest)
        km_cli_die(3, "out of memory");
    for (int32_t j = 0; j < k; j++)
        even[j] = 1;
    apportion(k == 14 ? GCM_TRAIN : even, k, train, ntrain);
    apportion(k == 14 ? GCM_TEST : even, k, test, ntest);
    for (int32_t j = 0; j < k; j++)
        if (ntrain[j] == 0)
            km_cli_die(1, "-l %lld leaves class %d without training rows", train, (int)j + 1);

    model m;
    if (model_init(&m, seed, (int32_t)genes, k, (int32_t)markers))
        km_cli_die(3, "out of memory");
    FILE *f = km_cli_open_out(out_train);
    FILE *ft = km_cli_open_out(out_test);
    if (write_rows(f, &m, ntrain, train, seed, 1))
        km_cli_die(3, "out of memory");
    km_cli_close_out(f, out_train);
    if (write_rows(ft, &m, ntest, test, seed, 2))
        km_cli_die(3, "out of memory");
    km_cli_close_out(ft, out_test);
    model_free(&m);
    free(even);
    free(ntrain);
    free(ntest);
    return 0;
}
