/* gen_sparse.c - a large synthetic, text-like sparse data set in svmlight format on stdout.
 *
 * The model (fixed by --seed, --features, --avg-nnz):
 *   - a vocabulary of D features; term rank r (0-based) has token probability
 *     p_r proportional to 1/(r+1)^ZIPF_S (Zipf law); ranks are mapped to feature indices
 *     by a random permutation, so frequent terms are spread over the index range;
 *   - an idf per term, idf_r = log(1 + 1/df_r), df_r = 1 - exp(-2 K p_r) (the expected
 *     fraction of documents holding the term);
 *   - a hidden sparse weight vector: each of the HIDDEN_TOP * D most frequent terms gets
 *     weight N(0,1) with probability HIDDEN_DENSITY, every other term 0;
 *   - the centre (median) and scale (standard deviation) of the raw score w'x, estimated
 *     on PILOT_ROWS documents drawn from a stream of the model seed alone.
 * A row (drawn from a stream of --seed and --split-seed): a length L (distinct terms),
 * lognormal with mean K; tokens drawn from the Zipf law until L distinct terms are seen;
 * value = (1 + log tf) * idf, the row scaled to unit L2 norm; z = (w'x - centre) / scale;
 * label = sign(z + NOISE_SD * N(0,1)) (printed +1 / -1), or with --regression the real
 * z + NOISE_SD * N(0,1). Indices are 1-based and strictly increasing, values printed with
 * 6 significant digits. Same options, same bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

/* Tuning constants of the generator, in one place. */
#define ZIPF_S          1.0      /* Zipf exponent of term frequencies */
#define LEN_SIGMA       0.5      /* sigma of log document length */
#define LEN_MAX_FACTOR  20       /* longest document: LEN_MAX_FACTOR * K distinct terms */
#define HIDDEN_TOP      0.05     /* hidden weights live on this most frequent part of the vocabulary */
#define HIDDEN_DENSITY  0.5      /* fraction of those terms with a non-zero hidden weight */
#define NOISE_SD        0.1      /* label noise, in units of the score's standard deviation */
#define PILOT_ROWS      4096     /* documents used to centre and scale the score */
#define MAX_FEATURES    100000000
#define OUT_BUF         (4u << 20)

#define DEF_ROWS        400000
#define DEF_FEATURES    100000
#define DEF_AVG_NNZ     80

/* Everything fixed by the model seed, plus scratch space for one row. */
typedef struct gen {
    int32_t d;            /* vocabulary size */
    double k;             /* mean number of distinct terms per row */
    int32_t len_max;      /* cap on distinct terms per row */
    double *alias_p;      /* Walker alias table over ranks: acceptance probability */
    int32_t *alias_j;     /*   and alias rank */
    int32_t *feature;     /* rank -> 0-based feature index */
    double *idf;          /* rank -> idf */
    double *hidden;       /* rank -> hidden weight */
    double centre, scale; /* of the raw score */
    uint32_t *stamp;      /* rank -> last row id that used it (distinct-term test) */
    uint32_t *tf;         /* rank -> term frequency in the current row */
    uint32_t row_id;
    int32_t *ranks;       /* distinct ranks of the current row */
    uint64_t *keys;       /* (feature << 32 | position) of the current row, sorted */
    double *vals;         /* values of the current row, by position */
} gen;

/* Seeds a generator from a seed and a stream number (independent streams). */
static void rng_seed(km_rng *r, uint64_t seed, uint64_t stream)
{
    km_rng_seed(r, seed ^ (0xD1B54A32D192ED03ULL * (stream + 1)));
}

/* Prints the usage text. */
static void usage(FILE *f)
{
    fprintf(f,
        "Usage: gen_sparse [options] > FILE\n"
        "Writes a synthetic text-like sparse set (svmlight format) to stdout: Zipf term\n"
        "frequencies, lognormal document lengths, tf-idf values, rows of unit L2 norm,\n"
        "labels from a hidden sparse linear model.\n"
        "  --rows N        rows to write (default %d)\n"
        "  --features D    vocabulary size = largest feature index (default %d)\n"
        "  --avg-nnz K     mean number of non-zeros per row (default %d)\n"
        "  --seed S        model seed: vocabulary, idf, hidden weights (default 1)\n"
        "  --split-seed T  row seed: which rows are drawn (default 1); a train and a test\n"
        "                  file share one model when only --rows/--split-seed differ\n"
        "  --regression    label = real score + noise instead of its sign\n"
        "  -h, --help      this text\n",
        DEF_ROWS, DEF_FEATURES, DEF_AVG_NNZ);
}

/* Parses an unsigned decimal integer in [lo, hi]; returns 0 on success. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Sorts keys[0..n) ascending (quicksort, median of three, insertion sort for short runs). */
static void sort_u64(uint64_t *a, int64_t n)
{
    while (n > 16) {
        uint64_t x = a[0], y = a[n / 2], z = a[n - 1];
        uint64_t piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < piv)
                i++;
            while (a[j] > piv)
                j--;
            if (i >= j)
                break;
            uint64_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* recurse into the smaller part, loop on the larger */
        int64_t left = j + 1;
        if (left < n - left) {
            sort_u64(a, left);
            a += left;
            n -= left;
        } else {
            sort_u64(a + left, n - left);
            n = left;
        }
    }
    for (int64_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        int64_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

/* Frees the generator's arrays. */
static void gen_free(gen *g)
{
    free(g->alias_p);
    free(g->alias_j);
    free(g->feature);
    free(g->idf);
    free(g->hidden);
    free(g->stamp);
    free(g->tf);
    free(g->ranks);
    free(g->keys);
    free(g->vals);
}

/* Builds the Walker alias table of the Zipf law over d ranks (Vose's method). */
static int build_alias(gen *g, const double *p)
{
    int32_t d = g->d;
    int32_t *small = malloc((size_t)d * sizeof *small);
    int32_t *large = malloc((size_t)d * sizeof *large);
    double *q = malloc((size_t)d * sizeof *q);
    if (!small || !large || !q) {
        free(small);
        free(large);
        free(q);
        return -1;
    }
    int32_t ns = 0, nl = 0;
    for (int32_t i = 0; i < d; i++) {
        q[i] = p[i] * d;
        if (q[i] < 1.0)
            small[ns++] = i;
        else
            large[nl++] = i;
    }
    while (ns > 0 && nl > 0) {
        int32_t s = small[--ns], l = large[nl - 1];
        g->alias_p[s] = q[s];
        g->alias_j[s] = l;
        q[l] -= 1.0 - q[s];
        if (q[l] < 1.0) {
            nl--;
            small[ns++] = l;
        }
    }
    while (nl > 0) {
        int32_t l = large[--nl];
        g->alias_p[l] = 1.0;
        g->alias_j[l] = l;
    }
    while (ns > 0) { /* only from rounding */
        int32_t s = small[--ns];
        g->alias_p[s] = 1.0;
        g->alias_j[s] = s;
    }
    free(small);
    free(large);
    free(q);
    return 0;
}

/* Draws one rank from the Zipf law. */
static inline int32_t draw_rank(const gen *g, km_rng *r)
{
    uint64_t b = km_rng_next(r);
    int32_t i = (int32_t)(((b >> 32) * (uint64_t)g->d) >> 32);
    double u = (double)(b & 0xFFFFFFFFu) * (1.0 / 4294967296.0);
    return u < g->alias_p[i] ? i : g->alias_j[i];
}

/* Draws one row into g's scratch arrays; returns its nnz and sets *score (raw w'x). */
static int32_t draw_row(gen *g, km_rng *r, double *score)
{
    /* lognormal length with mean k */
    double len = g->k * exp(LEN_SIGMA * km_rng_normal(r) - 0.5 * LEN_SIGMA * LEN_SIGMA);
    int32_t L = (int32_t)(len + 0.5);
    if (L < 1)
        L = 1;
    if (L > g->len_max)
        L = g->len_max;

    if (++g->row_id == 0) { /* stamp wrap-around: forget all stamps */
        memset(g->stamp, 0, (size_t)g->d * sizeof *g->stamp);
        g->row_id = 1;
    }
    uint32_t id = g->row_id;
    int32_t n = 0;
    int64_t draws = 0, cap = 50 * (int64_t)L + 1000;
    while (n < L && draws < cap) {
        int32_t rk = draw_rank(g, r);
        draws++;
        if (g->stamp[rk] != id) {
            g->stamp[rk] = id;
            g->tf[rk] = 1;
            g->ranks[n++] = rk;
        } else {
            g->tf[rk]++;
        }
    }

    double ss = 0.0, s = 0.0;
    for (int32_t i = 0; i < n; i++) {
        int32_t rk = g->ranks[i];
        double v = (1.0 + log((double)g->tf[rk])) * g->idf[rk];
        g->vals[i] = v;
        ss += v * v;
        s += g->hidden[rk] * v;
        g->keys[i] = ((uint64_t)(uint32_t)g->feature[rk] << 32) | (uint32_t)i;
    }
    double inv = 1.0 / sqrt(ss);
    for (int32_t i = 0; i < n; i++)
        g->vals[i] *= inv;
    *score = s * inv;
    return n;
}

/* Compares doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Builds the model of --seed: vocabulary, alias table, idf, hidden weights, score centre/scale. */
static int gen_init(gen *g, uint64_t seed, int32_t d, int32_t k)
{
    memset(g, 0, sizeof *g);
    g->d = d;
    g->k = k;
    int64_t lm = (int64_t)LEN_MAX_FACTOR * k;
    int32_t half = d / 2 > 0 ? d / 2 : 1;
    g->len_max = (int32_t)(lm < half ? lm : half);
    if (g->len_max < k && k <= d) /* allow the mean itself when D is small */
        g->len_max = k;

    size_t nd = (size_t)d, nl = (size_t)g->len_max;
    double *p = malloc(nd * sizeof *p);
    g->alias_p = malloc(nd * sizeof *g->alias_p);
    g->alias_j = malloc(nd * sizeof *g->alias_j);
    g->feature = malloc(nd * sizeof *g->feature);
    g->idf = malloc(nd * sizeof *g->idf);
    g->hidden = malloc(nd * sizeof *g->hidden);
    g->stamp = calloc(nd, sizeof *g->stamp);
    g->tf = malloc(nd * sizeof *g->tf);
    g->ranks = malloc(nl * sizeof *g->ranks);
    g->keys = malloc(nl * sizeof *g->keys);
    g->vals = malloc(nl * sizeof *g->vals);
    double *pilot = malloc(PILOT_ROWS * sizeof *pilot);
    if (!p || !g->alias_p || !g->alias_j || !g->feature || !g->idf || !g->hidden || !g->stamp
        || !g->tf || !g->ranks || !g->keys || !g->vals || !pilot) {
        free(p);
        free(pilot);
        return -1;
    }

    km_rng r;
    rng_seed(&r, seed, 0);
    double z = 0.0;
    for (int32_t i = 0; i < d; i++) {
        p[i] = pow((double)i + 1.0, -ZIPF_S);
        z += p[i];
    }
    for (int32_t i = 0; i < d; i++) {
        p[i] /= z;
        double df = -expm1(-2.0 * k * p[i]);
        g->idf[i] = log1p(1.0 / df);
    }
    for (int32_t i = 0; i < d; i++) /* Fisher-Yates: rank -> feature */
        g->feature[i] = i;
    for (int32_t i = d - 1; i > 0; i--) {
        int32_t j = (int32_t)km_rng_below(&r, (uint64_t)i + 1);
        int32_t t = g->feature[i];
        g->feature[i] = g->feature[j];
        g->feature[j] = t;
    }
    for (int32_t i = 0; i < d; i++)
        g->hidden[i] = km_rng_uniform(&r) < HIDDEN_DENSITY && i < HIDDEN_TOP * d ? km_rng_normal(&r) : 0.0;
    int rc = build_alias(g, p);
    free(p);
    if (rc) {
        free(pilot);
        return -1;
    }

    /* centre and scale of the score, from documents of the model stream */
    km_rng pr;
    rng_seed(&pr, seed, 1);
    double sum = 0.0, sum2 = 0.0;
    for (int i = 0; i < PILOT_ROWS; i++) {
        draw_row(g, &pr, &pilot[i]);
        sum += pilot[i];
        sum2 += pilot[i] * pilot[i];
    }
    qsort(pilot, PILOT_ROWS, sizeof *pilot, cmp_double);
    g->centre = 0.5 * (pilot[PILOT_ROWS / 2 - 1] + pilot[PILOT_ROWS / 2]);
    double mean = sum / PILOT_ROWS;
    double var = sum2 / PILOT_ROWS - mean * mean;
    g->scale = var > 0 ? sqrt(var) : 1.0;
    free(pilot);
    return 0;
}

/* Writes the decimal digits of u at p; returns the end. */
static inline char *put_u32(char *p, uint32_t u)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* Writes v with 6 significant digits exactly as printf's %.6g (correctly rounded; fast
 * path for 1e-4 <= v < 1e6, snprintf otherwise); returns the end. */
static char *put_g6(char *p, double v)
{
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10};
    if (!(v >= 1e-4 && v < 999999.5))
        return p + snprintf(p, 32, "%.6g", v);
    int e = 5;
    while (e > -4 && v < (e >= 0 ? p10[e] : 1.0 / p10[-e]))
        e--;
    /* m = round(v * 10^(5-e)): six digits, normally 100000..999999 */
    double sc = p10[5 - e], x = v * sc;
    uint32_t m = (uint32_t)(x + 0.5);
    double frac = x - (double)(uint32_t)x;
    if (frac > 0.4999 && frac < 0.5001) { /* near a tie: decide on the exact product */
        double lo = fma(v, sc, -((double)m - 0.5)), hi = fma(v, sc, -((double)m + 0.5));
        if (lo < 0 || (lo == 0 && (m & 1)))
            m--;
        else if (hi > 0 || (hi == 0 && (m & 1)))
            m++;
    }
    if (m < 100000)
        return p + snprintf(p, 32, "%.6g", v);
    if (m >= 1000000) {
        if (e == 5)
            return p + snprintf(p, 32, "%.6g", v);
        m = (m + 5) / 10;
        e++;
    }
    char dig[6];
    for (int i = 5; i >= 0; i--) {
        dig[i] = (char)('0' + m % 10);
        m /= 10;
    }
    int last = 5; /* strip trailing zeros of the fraction */
    while (last > 0 && last > e && dig[last] == '0')
        last--;
    if (e >= 0) {
        for (int i = 0; i <= e; i++)
            *p++ = dig[i];
        if (last > e) {
            *p++ = '.';
            for (int i = e + 1; i <= last; i++)
                *p++ = dig[i];
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = -1; i > e; i--)
            *p++ = '0';
        for (int i = 0; i <= last; i++)
            *p++ = dig[i];
    }
    return p;
}

/* Writes n bytes to stdout; returns 0 or -1 on a write error. */
static int flush_out(const char *buf, size_t n)
{
    return fwrite(buf, 1, n, stdout) == n ? 0 : -1;
}

/* Parses options, builds the model and streams the rows to stdout. */
int main(int argc, char **argv)
{
    uint64_t rows = DEF_ROWS, features = DEF_FEATURES, avg = DEF_AVG_NNZ, seed = 1, split = 1;
    int regression = 0;
    static const struct option longopts[] = {
        {"rows", required_argument, 0, 'n'},
        {"features", required_argument, 0, 'd'},
        {"avg-nnz", required_argument, 0, 'k'},
        {"seed", required_argument, 0, 's'},
        {"split-seed", required_argument, 0, 't'},
        {"regression", no_argument, 0, 'r'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'n': bad = parse_u64(optarg, 1, INT64_MAX, &rows); break;
        case 'd': bad = parse_u64(optarg, 1, MAX_FEATURES, &features); break;
        case 'k': bad = parse_u64(optarg, 1, 1000000, &avg); break;
        case 's': bad = parse_u64(optarg, 0, UINT64_MAX, &seed); break;
        case 't': bad = parse_u64(optarg, 0, UINT64_MAX, &split); break;
        case 'r': regression = 1; break;
        case 'h': usage(stdout); return 0;
        case ':':
            fprintf(stderr, "gen_sparse: option %s needs a value (see -h)\n", argv[optind - 1]);
            return 1;
        default:
            fprintf(stderr, "gen_sparse: unknown option '%s' (see -h)\n", argv[optind - 1]);
            return 1;
        }
        if (bad) {
            const char *what = c == 'n' ? "--rows: expected an integer >= 1"
                : c == 'd' ? "--features: expected an integer in 1..100000000"
                : c == 'k' ? "--avg-nnz: expected an integer in 1..1000000"
                : c == 's' ? "--seed: expected an unsigned 64-bit integer"
                : "--split-seed: expected an unsigned 64-bit integer";
            fprintf(stderr, "gen_sparse: %s, got '%s'\n", what, optarg);
            return 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gen_sparse: unexpected argument '%s' (output goes to stdout; see -h)\n",
                argv[optind]);
        return 1;
    }
    if (avg > features) {
        fprintf(stderr, "gen_sparse: --avg-nnz %" PRIu64 " exceeds --features %" PRIu64 "\n",
                avg, features);
        return 1;
    }

    gen g;
    if (gen_init(&g, seed, (int32_t)features, (int32_t)avg)) {
        gen_free(&g);
        fprintf(stderr, "gen_sparse: out of memory\n");
        return 3;
    }
    /* a row needs at most: label (32) + len_max * (" 2147483647:" + value (32)) + "\n" */
    size_t row_max = 64 + (size_t)g.len_max * 48;
    size_t cap = OUT_BUF > 2 * row_max ? OUT_BUF : 2 * row_max;
    char *buf = malloc(cap);
    if (!buf) {
        gen_free(&g);
        fprintf(stderr, "gen_sparse: out of memory\n");
        return 3;
    }

    km_rng r;
    rng_seed(&r, seed ^ (split * 0x9E3779B97F4A7C15ULL), 2);
    size_t len = 0;
    int rc = 0;
    for (uint64_t i = 0; i < rows && rc == 0; i++) {
        double raw;
        int32_t n = draw_row(&g, &r, &raw);
        double zs = (raw - g.centre) / g.scale + NOISE_SD * km_rng_normal(&r);
        if (cap - len < row_max) {
            rc = flush_out(buf, len);
            len = 0;
        }
        char *p = buf + len;
        if (regression) {
            p = put_g6(p, zs < 0 ? -zs : zs);
            if (zs < 0) { /* put the sign in front */
                size_t w = (size_t)(p - (buf + len));
                memmove(buf + len + 1, buf + len, w);
                buf[len] = '-';
                p++;
            }
        } else {
            memcpy(p, zs >= 0 ? "+1" : "-1", 2);
            p += 2;
        }
        sort_u64(g.keys, n);
        for (int32_t j = 0; j < n; j++) {
            uint64_t key = g.keys[j];
            *p++ = ' ';
            p = put_u32(p, (uint32_t)(key >> 32) + 1);
            *p++ = ':';
            p = put_g6(p, g.vals[(uint32_t)key]);
        }
        *p++ = '\n';
        len = (size_t)(p - buf);
    }
    if (rc == 0 && len)
        rc = flush_out(buf, len);
    if (rc == 0 && fflush(stdout) != 0)
        rc = -1;
    free(buf);
    gen_free(&g);
    if (rc) {
        fprintf(stderr, "gen_sparse: write error on stdout: %s\n", strerror(errno));
        return 2;
    }
    return 0;
}
