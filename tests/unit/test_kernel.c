/* test_kernel.c - kernels against their formulas, blocks (dgemm and sparse, index lists,
 * threads) against km_kernel_eval, the kernel matrix (PSD, unit diagonal, bit-identical rows
 * for every cache size, LRU order, matvec, rows restricted to columns), names and parameter checks. */
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "rng.h"
#include "test.h"

static double unif(km_rng *r) { return (double)(km_rng_next(r) >> 11) * 0x1p-53; }

/* A random sparse problem: l rows, n features, each present with probability density,
 * values uniform in (-scale, scale); empty rows happen. */
static km_problem *random_problem(int64_t l, int32_t n, double density, double scale,
                                  uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    km_problem *P = calloc(1, sizeof *P);
    P->l = l;
    P->n = n;
    P->row_ptr = calloc((size_t)l + 1, sizeof *P->row_ptr);
    P->index = malloc((size_t)(l * n + 1) * sizeof *P->index);
    P->value = malloc((size_t)(l * n + 1) * sizeof *P->value);
    P->y = calloc((size_t)l, sizeof *P->y);
    int64_t k = 0;
    for (int64_t i = 0; i < l; i++) {
        for (int32_t j = 0; j < n; j++)
            if (unif(&r) < density) {
                P->index[k] = j;
                P->value[k++] = scale * (2 * unif(&r) - 1);
            }
        P->row_ptr[i + 1] = k;
    }
    P->nnz = k;
    return P;
}

/* Like random_problem with every stride-th feature frequent (density hi) and the others
 * rare (lo): dense and sparse columns mixed. */
static km_problem *mixed_problem(int64_t l, int32_t n, int stride, double hi, double lo,
                                 uint64_t seed)
{
    km_problem *P = random_problem(l, n, 1, 1, seed);
    km_rng r;
    km_rng_seed(&r, seed + 1);
    int64_t k = 0;
    for (int64_t i = 0; i < l; i++) {
        int64_t t0 = P->row_ptr[i], t1 = P->row_ptr[i + 1];
        P->row_ptr[i] = k;
        for (int64_t t = t0; t < t1; t++)
            if (unif(&r) < (P->index[t] % stride == 0 ? hi : lo)) {
                P->index[k] = P->index[t];
                P->value[k++] = P->value[t];
            }
    }
    P->row_ptr[l] = k;
    P->nnz = k;
    return P;
}

/* Row i of P as a dense vector of length n (zero-padded). */
static void densify(const km_problem *P, int64_t i, int32_t n, double *x)
{
    memset(x, 0, (size_t)n * sizeof *x);
    for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++)
        x[P->index[t]] = P->value[t];
}

/* The kernel written out on dense vectors, independently of the library. */
static double direct(const km_kernel *k, const double *x, const double *y, int32_t n)
{
    double dot = 0, d2 = 0, d1 = 0;
    for (int32_t j = 0; j < n; j++) {
        dot += x[j] * y[j];
        d2 += (x[j] - y[j]) * (x[j] - y[j]);
        d1 += fabs(x[j] - y[j]);
    }
    switch (k->type) {
    case KM_KERNEL_LINEAR: return dot;
    case KM_KERNEL_POLY: return pow(k->gamma * dot + k->coef0, k->degree);
    case KM_KERNEL_RBF: return exp(-k->gamma * d2);
    case KM_KERNEL_SIGMOID: return tanh(k->gamma * dot + k->coef0);
    case KM_KERNEL_LAPLACIAN: return exp(-k->gamma * d1);
    case KM_KERNEL_EXPDOT: return exp(k->gamma * dot);
    default: return 1 + (x[0] < y[0] ? x[0] : y[0]);
    }
}

/* Squared norm of row i of P. */
static double sqnorm(const km_problem *P, int64_t i)
{
    double s = 0;
    for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++)
        s += P->value[t] * P->value[t];
    return s;
}

/* km_kernel_eval on rows i of P and j of Q. */
static double eval_rows(const km_kernel *k, const km_problem *P, int64_t i, const km_problem *Q,
                        int64_t j)
{
    int64_t a = P->row_ptr[i], b = Q->row_ptr[j];
    return km_kernel_eval(k, P->index + a, P->value + a, P->row_ptr[i + 1] - a, sqnorm(P, i),
                          Q->index + b, Q->value + b, Q->row_ptr[j + 1] - b, sqnorm(Q, j));
}

/* Relative difference |a - b| / max(1, |b|). */
static double reldiff(double a, double b)
{
    return fabs(a - b) / (fabs(b) > 1 ? fabs(b) : 1);
}

/* One kernel of each type with typical parameters (gamma chosen per data scale). */
static km_kernel kernel_of(int type, double gamma)
{
    km_kernel k = {(km_kernel_type)type, gamma, 0.5, 3, 0};
    return k;
}

static void test_names(void)
{
    static const char *names[] = {"linear", "poly", "rbf", "sigmoid", "laplacian", "expdot",
                                  "spline"};
    int ok = 1;
    for (int t = 0; t < KM_KERNEL_COUNT; t++)
        ok &= km_kernel_from_name(names[t]) == t &&
              km_kernel_from_name(km_kernel_name((km_kernel_type)t)) == t;
    CHECK(ok, "every kernel name parses to its type and back");
    CHECK(km_kernel_from_name("polynomial") == KM_KERNEL_POLY, "\"polynomial\" is poly");
    CHECK(km_kernel_from_name("0") == KM_KERNEL_LINEAR && km_kernel_from_name("1") == KM_KERNEL_POLY &&
          km_kernel_from_name("2") == KM_KERNEL_RBF && km_kernel_from_name("3") == KM_KERNEL_SIGMOID,
          "svm-train numbers 0..3: linear, poly, rbf, sigmoid");
    CHECK(km_kernel_from_name("4") == KM_KERNEL_PRECOMPUTED &&
          km_kernel_from_name("precomputed") == KM_KERNEL_PRECOMPUTED,
          "svm-train -t 4: precomputed");
    CHECK(km_kernel_from_name("5") == -1 && km_kernel_from_name("") == -1 &&
          km_kernel_from_name("rbf2") == -1 && km_kernel_from_name("22") == -1 &&
          km_kernel_from_name(NULL) == -1, "unknown names give -1");
}

static void test_check(void)
{
    km_error err;
    int ok = 1;
    for (int t = 0; t < KM_KERNEL_COUNT; t++) {
        km_kernel k = kernel_of(t, 0.5);
        ok &= km_kernel_check(&k, t == KM_KERNEL_SPLINE ? 1 : 20, &err) == KM_OK;
    }
    CHECK(ok, "valid parameters pass km_kernel_check");
    int bad = 0, msgs = 1;
    const int need_gamma[] = {KM_KERNEL_POLY, KM_KERNEL_RBF, KM_KERNEL_SIGMOID,
                              KM_KERNEL_LAPLACIAN, KM_KERNEL_EXPDOT};
    const double gammas[] = {0, -1, NAN};
    for (int q = 0; q < 5; q++)
        for (int g = 0; g < 3; g++) {
            km_kernel k = kernel_of(need_gamma[q], gammas[g]);
            km_error_clear(&err);
            bad += km_kernel_check(&k, 5, &err) == KM_EUSAGE && err.code == KM_EUSAGE;
            msgs &= err.msg[0] != '\0' && strchr(err.msg, '\n') == NULL;
        }
    CHECK(bad == 15 && msgs, "gamma <= 0 or NaN is a usage error with a one-line reason (%d/15)",
          bad);
    km_kernel lin = kernel_of(KM_KERNEL_LINEAR, 0);
    CHECK(km_kernel_check(&lin, 5, &err) == KM_OK, "the linear kernel ignores gamma");
    km_kernel poly = kernel_of(KM_KERNEL_POLY, 1);
    poly.degree = 0;
    CHECK(km_kernel_check(&poly, 5, &err) == KM_EUSAGE, "poly degree 0 is a usage error: %s",
          err.msg);
    km_kernel sp = kernel_of(KM_KERNEL_SPLINE, 0);
    CHECK(km_kernel_check(&sp, 2, &err) == KM_EUSAGE, "spline on 2 features is a usage error: %s",
          err.msg);
    CHECK(km_kernel_check(&sp, 1, &err) == KM_OK && km_kernel_check(&sp, 0, &err) == KM_OK,
          "spline on 1-D (or empty) data is fine");
}

/* Every kernel against its formula on random sparse rows (and empty ones). */
static void test_eval(void)
{
    const int32_t n = 25;
    km_problem *P = random_problem(40, n, 0.3, 1, 11);
    km_problem *S = random_problem(40, 1, 0.7, 2, 12);   /* 1-D rows, some empty */
    double x[25], y[25];
    for (int t = 0; t < KM_KERNEL_COUNT; t++) {
        km_kernel k = kernel_of(t, t == KM_KERNEL_EXPDOT || t == KM_KERNEL_POLY ? 0.3 : 0.7);
        const km_problem *Q = t == KM_KERNEL_SPLINE ? S : P;
        int32_t nq = t == KM_KERNEL_SPLINE ? 1 : n;
        double worst = 0;
        for (int64_t i = 0; i < Q->l; i++)
            for (int64_t j = 0; j < Q->l; j++) {
                densify(Q, i, nq, x);
                densify(Q, j, nq, y);
                double d = reldiff(eval_rows(&k, Q, i, Q, j), direct(&k, x, y, nq));
                worst = d > worst ? d : worst;
            }
        CHECK(worst < 1e-13, "%s kernel equals its formula (max rel diff %.2g)",
              km_kernel_name(k.type), worst);
    }
    km_problem_free(P);
    km_problem_free(S);

    /* The kernels' exp over its whole range, via expdot on 1-D rows: exp(1 * 1 * t). */
    km_kernel e = kernel_of(KM_KERNEL_EXPDOT, 1);
    km_rng r;
    km_rng_seed(&r, 5);
    int32_t one = 0;
    double v1 = 1, worst = 0;
    int edges = 1;
    for (int q = 0; q < 200000; q++) {
        double t = -760 + 1480 * unif(&r);
        double got = km_kernel_eval(&e, &one, &v1, 1, 1, &one, &t, 1, t * t), want = exp(t);
        if (want > 0x1p-1022 && isfinite(want)) {
            double d = fabs(got - want) / want;
            worst = d > worst ? d : worst;
        } else {
            edges &= got == want || fabs(got - want) <= 0x1p-1074 * 4;
        }
    }
    CHECK(worst <= 4 * 0x1p-53 && edges,
          "exp of the kernels within 4 ulp of libm on [-760, 720] (max %.2g ulp)",
          worst / 0x1p-53);
}

/* km_kernel_block equals km_kernel_eval entrywise (dgemm path to 1e-12, exact path bitwise). */
static void test_block(void)
{
    km_problem *D = random_problem(70, 20, 0.6, 1, 21);    /* dense enough for dgemm */
    km_problem *S = random_problem(70, 35, 0.05, 1, 22);   /* stays sparse */
    km_problem *T = random_problem(30, 1, 0.8, 1, 23);     /* 1-D for the spline */
    km_error err;
    km_kdata *XD = km_kdata_new(D, NULL, D->l, &err), *XS = km_kdata_new(S, NULL, S->l, &err);
    km_kdata *XT = km_kdata_new(T, NULL, T->l, &err);
    CHECK(XD && XS && XT && km_kdata_size(XD) == 70, "row sets built");
    CHECK(km_kdata_dense(XD) && !km_kdata_dense(XS), "60%% dense rows get a dense copy, 5%% do not");
    km_rng r;
    km_rng_seed(&r, 3);
    int64_t ia[70], ib[70];
    double *out = malloc(70 * 70 * sizeof *out);
    const int sizes[][2] = {{1, 70}, {3, 5}, {8, 8}, {50, 9}, {70, 70}, {9, 1}};
    const km_kdata *sets[][2] = {{XD, XD}, {XS, XS}, {XD, XS}, {XS, XD}};
    const km_problem *probs[][2] = {{D, D}, {S, S}, {D, S}, {S, D}};
    for (int t = 0; t < KM_KERNEL_COUNT; t++) {
        km_kernel k = kernel_of(t, 0.4);
        double worst = 0;
        int calls = 0, ok = 1, exact = 1;
        for (int s = 0; s < 4; s++) {
            const km_kdata *A = t == KM_KERNEL_SPLINE ? XT : sets[s][0];
            const km_kdata *B = t == KM_KERNEL_SPLINE ? XT : sets[s][1];
            const km_problem *PA = t == KM_KERNEL_SPLINE ? T : probs[s][0];
            const km_problem *PB = t == KM_KERNEL_SPLINE ? T : probs[s][1];
            int64_t ma = km_kdata_size(A), mb = km_kdata_size(B);
            for (int z = 0; z < 6; z++)
                for (int lists = 0; lists < 2; lists++)
                    for (int threads = 1; threads <= 2; threads++) {
                        int64_t na = sizes[z][0] < ma ? sizes[z][0] : ma;
                        int64_t nb = sizes[z][1] < mb ? sizes[z][1] : mb;
                        for (int64_t a = 0; a < na; a++)   /* random, with repeats */
                            ia[a] = (int64_t)km_rng_below(&r, (uint64_t)ma);
                        for (int64_t b = 0; b < nb; b++)
                            ib[b] = (int64_t)km_rng_below(&r, (uint64_t)mb);
                        const int64_t *pa = lists ? ia : NULL, *pb = lists ? ib : NULL;
                        ok &= km_kernel_block(&k, A, pa, na, B, pb, nb, out, threads, &err) == KM_OK;
                        calls++;
                        for (int64_t a = 0; a < na; a++)
                            for (int64_t b = 0; b < nb; b++) {
                                double want = eval_rows(&k, PA, pa ? pa[a] : a, PB, pb ? pb[b] : b);
                                double d = reldiff(out[a * nb + b], want);
                                worst = d > worst ? d : worst;
                                if (!km_kdata_dense(A) || !km_kdata_dense(B) || na < 8 || nb < 8)
                                    exact &= out[a * nb + b] == want;
                            }
                    }
        }
        CHECK(ok && worst < 1e-12 && exact,
              "%s: %d blocks (dense/sparse/mixed, index lists, threads 1-2) equal km_kernel_eval "
              "(max rel diff %.2g; sparse path bit-identical)", km_kernel_name(k.type), calls, worst);
    }
    km_kernel rbf = kernel_of(KM_KERNEL_RBF, 0.4);
    ia[0] = 70;
    CHECK(km_kernel_block(&rbf, XD, ia, 1, XD, NULL, 3, out, 1, &err) == KM_EUSAGE,
          "an index out of range is a usage error: %s", err.msg);
    CHECK(km_kernel_block(&rbf, XD, NULL, 0, XD, NULL, 3, out, 1, &err) == KM_OK,
          "an empty block is fine");
    int64_t bad_rows[] = {0, 70};
    CHECK(!km_kdata_new(D, bad_rows, 2, &err) && err.code == KM_EUSAGE,
          "a row set with a row out of range is refused: %s", err.msg);
    CHECK(!km_kdata_new(D, NULL, 71, &err) && err.code == KM_EUSAGE,
          "a row set larger than the problem is refused");

    /* A row subset: same values as the rows of the whole set. */
    int64_t sub[] = {5, 0, 69, 5};
    km_kdata *XU = km_kdata_new(D, sub, 4, &err);
    double o1[4 * 70], o2[4 * 70];
    int64_t pick[] = {5, 0, 69, 5};
    km_kernel_block(&rbf, XU, NULL, 4, XS, NULL, 70, o1, 1, &err);
    km_kernel_block(&rbf, XD, pick, 4, XS, NULL, 70, o2, 1, &err);
    CHECK(XU && memcmp(o1, o2, sizeof o1) == 0, "a row subset gives the rows of the whole set");
    km_kdata_free(XU);
    free(out);
    km_kdata_free(XD);
    km_kdata_free(XS);
    km_kdata_free(XT);
    km_problem_free(D);
    km_problem_free(S);
    km_problem_free(T);
}

/* Work split over 2 threads (blocks by rows, by columns, dgemm; long kernel rows) gives the
 * values of 1 thread: the same bits on the exact path, rounding on the dgemm path. */
static void test_threads(void)
{
    km_error err;
    const double dens[] = {0.4, 0.03};
    for (int dd = 0; dd < 2; dd++) {
        km_problem *P = random_problem(9000, 30, dens[dd], 1, 71 + dd);
        km_kdata *X = km_kdata_new(P, NULL, P->l, &err);
        int64_t m = P->l, ia[40];
        km_rng r;
        km_rng_seed(&r, 8);
        for (int a = 0; a < 40; a++)
            ia[a] = (int64_t)km_rng_below(&r, (uint64_t)m);
        double *o1 = malloc((size_t)(40 * m) * sizeof *o1), *o2 = malloc((size_t)(40 * m) * sizeof *o2);
        const int types[] = {KM_KERNEL_RBF, KM_KERNEL_LAPLACIAN};
        for (int q = 0; q < 2; q++) {
            km_kernel k = kernel_of(types[q], 0.2);
            const int64_t rows[] = {1, 3, 40};
            double worst = 0, spot = 0;
            int ok = 1, same = 1;
            for (int z = 0; z < 3; z++) {
                int64_t na = rows[z];
                ok &= km_kernel_block(&k, X, ia, na, X, NULL, m, o1, 1, &err) == KM_OK &&
                      km_kernel_block(&k, X, ia, na, X, NULL, m, o2, 2, &err) == KM_OK;
                int exact = !km_kdata_dense(X) || na < 8 || k.type == KM_KERNEL_LAPLACIAN;
                for (int64_t e = 0; e < na * m; e++) {
                    double d = reldiff(o2[e], o1[e]);
                    worst = d > worst ? d : worst;
                    if (exact)
                        same &= o2[e] == o1[e];
                }
                for (int s = 0; s < 300; s++) {
                    int64_t a = (int64_t)km_rng_below(&r, (uint64_t)na);
                    int64_t b = (int64_t)km_rng_below(&r, (uint64_t)m);
                    double d = reldiff(o2[a * m + b], eval_rows(&k, P, ia[a], P, b));
                    spot = d > spot ? d : spot;
                }
            }
            CHECK(ok && same && worst < 1e-12 && spot < 1e-12,
                  "%s, %.0f%% dense, blocks of 1, 3, 40 x 9000: 2 threads give the values of 1 "
                  "(max rel diff %.2g, vs eval %.2g)", km_kernel_name(k.type), 100 * dens[dd],
                  worst, spot);
            km_kmatrix *K1 = km_kmatrix_new(&k, X, 0, 1, &err), *K2 = km_kmatrix_new(&k, X, 0, 2, &err);
            int rows_same = 1;
            for (int a = 0; a < 6; a++) {
                memcpy(o1, km_kmatrix_row(K1, ia[a], &err), (size_t)m * sizeof *o1);
                rows_same &= memcmp(o1, km_kmatrix_row(K2, ia[a], &err), (size_t)m * sizeof *o1) == 0;
            }
            CHECK(rows_same, "%s, %.0f%% dense: kernel rows of 9000 split over 2 threads are the "
                  "same bits", km_kernel_name(k.type), 100 * dens[dd]);
            km_kmatrix_free(K1);
            km_kmatrix_free(K2);
        }
        free(o1);
        free(o2);
        km_kdata_free(X);
        km_problem_free(P);
    }
}

/* The column path with dense and sparse columns mixed, for the precomputed matrix (upper
 * triangles) and single rows, and for long rows. */
static void test_columns(void)
{
    km_error err;
    for (int v = 0; v < 2; v++) {   /* with and without a dense copy of all columns */
        km_problem *P = v ? mixed_problem(1300, 400, 8, 0.5, 0.05, 81)
                          : mixed_problem(1300, 200, 4, 0.7, 0.1, 81);
        km_kdata *X = km_kdata_new(P, NULL, P->l, &err);
        km_kernel k = kernel_of(KM_KERNEL_RBF, 0.05);
        km_kmatrix *Kf = km_kmatrix_new(&k, X, (size_t)1 << 26, 2, &err);
        km_kmatrix *Kr = km_kmatrix_new(&k, X, 0, 1, &err);
        int64_t m = P->l;
        km_rng r;
        km_rng_seed(&r, 4);
        int same = Kf && Kr, ref = 1;
        double *row = malloc((size_t)m * sizeof *row);
        for (int q = 0; same && q < 30; q++) {
            int64_t i = (int64_t)km_rng_below(&r, (uint64_t)m);
            memcpy(row, km_kmatrix_row(Kr, i, &err), (size_t)m * sizeof *row);
            same &= memcmp(row, km_kmatrix_row(Kf, i, &err), (size_t)m * sizeof *row) == 0;
            for (int64_t j = 0; q < 3 && j < m; j++)
                ref &= row[j] == eval_rows(&k, P, i, P, j);
        }
        CHECK(same && ref, "mixed dense/sparse columns, %s: precomputed K and single rows "
              "bit-identical, equal to km_kernel_eval", v ? "frequent columns kept dense"
                                                          : "all columns dense (dgemm)");
        CHECK(km_kdata_dense(X) == !v, "a dense copy of all columns only when two rows share "
              "a tenth of the features");
        km_kmatrix_free(Kf);
        km_kmatrix_free(Kr);
        km_kdata_free(X);
        km_problem_free(P);
        free(row);
    }

    km_problem *P = mixed_problem(400, 1200, 4, 0.7, 0.1, 82);   /* about 300 features a row */
    km_kdata *X = km_kdata_new(P, NULL, P->l, &err);
    km_kernel k = kernel_of(KM_KERNEL_RBF, 0.005);
    km_kmatrix *K = km_kmatrix_new(&k, X, 0, 2, &err);
    int wide = K != NULL;
    for (int64_t i = 0; wide && i < P->l; i += 37) {
        const double *ki = km_kmatrix_row(K, i, &err);
        for (int64_t j = 0; j < P->l; j++)
            wide &= ki[j] == eval_rows(&k, P, i, P, j);
    }
    CHECK(wide, "rows of about 300 features (%.0f on average) equal km_kernel_eval",
          (double)P->nnz / (double)P->l);
    km_kmatrix_free(K);
    km_kdata_free(X);
    km_problem_free(P);
}

/* The RBF kernel matrix: symmetric, unit diagonal, positive semidefinite. */
static void test_psd(void)
{
    km_problem *P = random_problem(60, 10, 0.5, 1, 31);
    km_error err;
    km_kernel k = kernel_of(KM_KERNEL_RBF, 0.8);
    km_kdata *X = km_kdata_new(P, NULL, P->l, &err);
    km_kmatrix *K = km_kmatrix_new(&k, X, 1 << 20, 2, &err);
    int64_t m = km_kmatrix_size(K);
    double *A = malloc((size_t)(m * m) * sizeof *A), w[60];
    int unit = 1;
    for (int64_t i = 0; i < m; i++) {
        memcpy(A + i * m, km_kmatrix_row(K, i, &err), (size_t)m * sizeof *A);
        unit &= km_kmatrix_diag(K, i) == 1 && A[i * m + i] == 1;
    }
    int sym = 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < i; j++)
            sym &= A[i * m + j] == A[j * m + i];
    CHECK(unit, "RBF kernel matrix has a unit diagonal (exactly)");
    CHECK(sym, "RBF kernel matrix is exactly symmetric");
    int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (int)m, A, (int)m, w);
    CHECK(info == 0 && w[0] >= -1e-10, "RBF kernel matrix is PSD (smallest eigenvalue %.3g)", w[0]);
    km_kmatrix_free(K);
    km_kdata_free(X);
    km_problem_free(P);
    free(A);
}

/* Rows are the same bits for cache sizes of 2 rows, 10 rows and all of K, in random order,
 * and equal to km_kernel_eval; LRU order and statistics. */
static void test_cache(void)
{
    km_error err;
    const double dens[] = {0.6, 0.04};
    for (int dd = 0; dd < 2; dd++)
        for (int t = 0; t < KM_KERNEL_COUNT; t++) {
            if (t == KM_KERNEL_SPLINE)
                continue;
            km_problem *P = random_problem(150, 30, dens[dd], 1, 41 + t);
            km_kernel k = kernel_of(t, 0.3);
            km_kdata *X = km_kdata_new(P, NULL, P->l, &err);
            int64_t m = P->l;
            size_t rowb = (size_t)m * sizeof(double);
            size_t caches[] = {2 * rowb, 10 * rowb, (size_t)m * rowb, 0};
            km_kmatrix *K[4];
            for (int c = 0; c < 4; c++)
                K[c] = km_kmatrix_new(&k, X, caches[c], c == 0 ? 1 : 2, &err);
            km_rng r;
            km_rng_seed(&r, 99);
            int same = 1, ref = 1, ok = 1;
            double *copy = malloc(rowb);
            for (int q = 0; q < 400; q++) {
                int64_t i = (int64_t)km_rng_below(&r, (uint64_t)m);
                const double *r0 = km_kmatrix_row(K[0], i, &err);
                ok &= r0 != NULL;
                memcpy(copy, r0, rowb);
                for (int c = 1; c < 4; c++) {
                    const double *rc = km_kmatrix_row(K[c], i, &err);
                    same &= rc && memcmp(rc, copy, rowb) == 0;
                }
                if (q % 40 == 0)
                    for (int64_t j = 0; j < m; j++)
                        ref &= copy[j] == eval_rows(&k, P, i, P, j);
            }
            CHECK(ok && same && ref, "%s on %.0f%% dense data: rows bit-identical for caches of 2, 10 and all rows "
                  "(threads 1, 2, 2), and equal to km_kernel_eval", km_kernel_name(k.type),
                  100 * dens[dd]);
            if (t == KM_KERNEL_LINEAR)
                CHECK(km_kdata_dense(X) == (dd == 0), "the %.0f%% dense rows %s a dense copy",
                      100 * dens[dd], dd == 0 ? "have" : "do not have");
            if (t == KM_KERNEL_RBF && dd == 0) {
                int64_t served, computed;
                km_kmatrix_stats(K[2], &served, &computed);
                CHECK(served == 400 && computed == m, "whole K: 400 rows served, %lld computed once",
                      (long long)computed);
                km_kmatrix_stats(K[0], &served, &computed);
                CHECK(served == 400 && computed > 300 && computed <= 400,
                      "2-row cache: %lld of 400 rows computed", (long long)computed);
            }
            for (int c = 0; c < 4; c++)
                km_kmatrix_free(K[c]);
            free(copy);
            km_kdata_free(X);
            km_problem_free(P);
        }

    /* LRU order with a 10-row cache. */
    km_problem *P = random_problem(40, 8, 0.5, 1, 51);
    km_kernel k = kernel_of(KM_KERNEL_RBF, 0.5);
    km_kdata *X = km_kdata_new(P, NULL, P->l, &err);
    km_kmatrix *K = km_kmatrix_new(&k, X, 10 * 40 * sizeof(double), 1, &err);
    int64_t served, computed;
    for (int64_t i = 0; i < 10; i++)
        km_kmatrix_row(K, i, &err);
    km_kmatrix_row(K, 0, &err);   /* hit: 0 becomes most recent, 1 least */
    km_kmatrix_stats(K, &served, &computed);
    CHECK(served == 11 && computed == 10, "10 rows fill the cache, a repeat is a hit");
    km_kmatrix_row(K, 10, &err);  /* evicts 1 */
    km_kmatrix_row(K, 0, &err);   /* hit */
    km_kmatrix_row(K, 2, &err);   /* hit */
    km_kmatrix_stats(K, &served, &computed);
    int hits_ok = computed == 11;
    km_kmatrix_row(K, 1, &err);   /* miss: evicts 3 */
    km_kmatrix_row(K, 3, &err);   /* miss: evicts 4 */
    km_kmatrix_stats(K, &served, &computed);
    CHECK(hits_ok && served == 16 && computed == 13, "least recently used rows are evicted first");
    const double *prev = km_kmatrix_row(K, 20, &err);
    double keep[40];
    memcpy(keep, prev, sizeof keep);
    km_kmatrix_row(K, 21, &err);
    CHECK(memcmp(prev, keep, sizeof keep) == 0, "the previous row stays valid after the next call");
    CHECK(!km_kmatrix_row(K, 40, &err) && err.code == KM_EUSAGE && !km_kmatrix_row(K, -1, &err),
          "a row out of range is a usage error: %s", err.msg);
    km_kmatrix_free(K);

    /* Passes: rows unused for two passes go first, then the most recent but the last. */
    K = km_kmatrix_new(&k, X, 10 * 40 * sizeof(double), 1, &err);
    km_kmatrix_pass(K);
    for (int64_t i = 0; i < 10; i++)   /* pass 1: rows 0..9 fill the cache */
        km_kmatrix_row(K, i, &err);
    km_kmatrix_pass(K);
    for (int64_t i = 0; i < 3; i++)    /* pass 2: 0..2 hit, 20..24 miss */
        km_kmatrix_row(K, i, &err);
    for (int64_t i = 20; i < 25; i++)
        km_kmatrix_row(K, i, &err);
    km_kmatrix_stats(K, &served, &computed);
    int64_t c2 = computed;
    int kept = 1;
    km_kmatrix_row(K, 0, &err);         /* the rows of pass 1 kept beside the first misses */
    km_kmatrix_row(K, 9, &err);
    km_kmatrix_stats(K, &served, &computed);
    kept &= computed == c2;
    km_kmatrix_pass(K);
    km_kmatrix_pass(K);                 /* pass 4: rows used in neither pass 3 nor 4 go first */
    km_kmatrix_row(K, 2, &err);
    for (int64_t i = 30; i < 39; i++)
        km_kmatrix_row(K, i, &err);
    km_kmatrix_stats(K, &served, &computed);
    c2 = computed;
    km_kmatrix_row(K, 2, &err);
    km_kmatrix_row(K, 38, &err);
    km_kmatrix_stats(K, &served, &computed);
    CHECK(kept && computed == c2 && c2 == 10 + 5 + 1 + 9, "passes: a cycling working set keeps "
          "the rows of the last pass; rows idle for two passes are evicted first");
    km_kmatrix_free(K);

    /* km_kmatrix_axpy: cached rows, and rows added in pieces when the cache is full of rows
     * in use, on 1 and 2 threads, restricted or not: the bits of z += h row. */
    int axpy_same = 1;
    for (int threads = 1; threads <= 2; threads++)
        for (int restricted = 0; restricted < 2; restricted++) {
            K = km_kmatrix_new(&k, X, 3 * 40 * sizeof(double), threads, &err);
            km_kmatrix *Kref = km_kmatrix_new(&k, X, 0, 1, &err);
            int64_t cols[20], nc = restricted ? 20 : 40;
            for (int64_t t = 0; t < 20; t++)
                cols[t] = 2 * t + 1;
            if (restricted) {
                km_kmatrix_restrict(K, cols, nc, &err);
                km_kmatrix_restrict(Kref, cols, nc, &err);
            }
            double z1[40] = {0}, z2[40] = {0};
            for (int p = 0; p < 3; p++) {
                km_kmatrix_pass(K);
                for (int64_t i = 0; i < 12; i++) {
                    double h = 0.25 * (double)(i + 1) - 1.1;
                    axpy_same &= km_kmatrix_axpy(K, (i * 7 + p) % 40, h, z1, &err) == KM_OK;
                    const double *row = km_kmatrix_row(Kref, (i * 7 + p) % 40, &err);
                    for (int64_t t = 0; t < nc; t++)
                        z2[t] += h * row[t];
                }
            }
            axpy_same &= memcmp(z1, z2, sizeof z1) == 0;
            km_kmatrix_free(K);
            km_kmatrix_free(Kref);
        }
    CHECK(axpy_same, "axpy: rows from the cache or added in pieces without it (1 and 2 "
          "threads, whole and restricted rows) give the bits of z += h row");
    km_kdata_free(X);
    km_problem_free(P);
}

/* z = K c equals the naive sum, for the whole K and the row cache, dense and sparse data. */
static void test_matvec(void)
{
    km_error err;
    const double dens[] = {0.6, 0.05};
    for (int dd = 0; dd < 2; dd++)
        for (int t = 0; t < KM_KERNEL_COUNT; t++) {
            if (t == KM_KERNEL_SPLINE)
                continue;
            km_problem *P = random_problem(130, 15, dens[dd], 1, 61 + t);
            int64_t m = P->l;
            km_kernel k = kernel_of(t, 0.3);
            km_kdata *X = km_kdata_new(P, NULL, m, &err);
            km_rng r;
            km_rng_seed(&r, 7);
            double c[130], z[130], want[130], scale[130];
            for (int64_t j = 0; j < m; j++)
                c[j] = unif(&r) < 0.3 ? 0 : 2 * unif(&r) - 1;
            for (int64_t i = 0; i < m; i++) {
                want[i] = scale[i] = 0;
                for (int64_t j = 0; j < m; j++) {
                    double v = eval_rows(&k, P, i, P, j) * c[j];
                    want[i] += v;
                    scale[i] += fabs(v);
                }
            }
            double worst = 0;
            int ok = 1;
            for (int full = 0; full < 2; full++)
                for (int threads = 1; threads <= 2; threads++) {
                    km_kmatrix *K = km_kmatrix_new(&k, X, full ? 1 << 20 : 10 * 130 * 8, 1, &err);
                    for (int64_t i = 0; K && threads == 2 && i < 12; i++)   /* some rows cached */
                        ok &= km_kmatrix_row(K, 3 * i, &err) != NULL;
                    ok &= K && km_kmatrix_matvec(K, c, z, threads, &err) == KM_OK;
                    for (int64_t i = 0; i < m; i++) {
                        double d = fabs(z[i] - want[i]) / (scale[i] > 1 ? scale[i] : 1);
                        worst = d > worst ? d : worst;
                    }
                    km_kmatrix_free(K);
                }
            CHECK(ok && worst < 1e-12, "%s on %.0f%% dense data: matvec (whole K and cache, "
                  "rows cached or not, threads 1-2) equals the naive sum (max rel diff %.2g)",
                  km_kernel_name(k.type), 100 * dens[dd], worst);
            if (t == KM_KERNEL_LAPLACIAN || t == KM_KERNEL_RBF) {   /* every c_j != 0 */
                for (int64_t j = 0; j < m; j++)
                    c[j] = c[j] != 0 ? c[j] : 0.5;
                km_kmatrix *K = km_kmatrix_new(&k, X, 0, 2, &err);
                ok = K && km_kmatrix_matvec(K, c, z, 2, &err) == KM_OK;
                worst = 0;
                for (int64_t i = 0; i < m; i++) {
                    double s2 = 0, a2 = 0;
                    for (int64_t j = 0; j < m; j++) {
                        double v = eval_rows(&k, P, i, P, j) * c[j];
                        s2 += v;
                        a2 += fabs(v);
                    }
                    double d = fabs(z[i] - s2) / (a2 > 1 ? a2 : 1);
                    worst = d > worst ? d : worst;
                }
                CHECK(ok && worst < 1e-12, "%s: matvec with every c_j != 0 (max rel diff %.2g)",
                      km_kernel_name(k.type), worst);
                km_kmatrix_free(K);
            }
            if (t == KM_KERNEL_RBF) {
                double zero[130] = {0};
                km_kmatrix *K = km_kmatrix_new(&k, X, 0, 1, &err);
                z[0] = 1;
                int rc = km_kmatrix_matvec(K, zero, z, 2, &err);
                int allzero = 1;
                for (int64_t i = 0; i < m; i++)
                    allzero &= z[i] == 0;
                CHECK(rc == KM_OK && allzero, "K 0 = 0");
                km_kmatrix_free(K);
            }
            km_kdata_free(X);
            km_problem_free(P);
        }
}

/* Rows restricted to columns (2/3 of them, 8/15, 2/3 again, all): the bits of whole rows
 * for a small cache and the precomputed K; cached rows cut down or extended, not
 * recomputed; columns out of order refused; km_kmatrix_addmul adds rows in order. */
static void test_restrict(void)
{
    km_error err;
    for (int v = 0; v < 2; v++) {   /* frequent columns dense, or all dense */
        km_problem *P = v ? mixed_problem(300, 200, 4, 0.7, 0.1, 83)
                          : mixed_problem(300, 400, 8, 0.5, 0.05, 84);
        int64_t m = P->l;
        km_kdata *X = km_kdata_new(P, NULL, m, &err);
        km_kernel k = kernel_of(KM_KERNEL_RBF, 0.05);
        km_kmatrix *Kref = km_kmatrix_new(&k, X, 0, 1, &err);
        km_kmatrix *Ks = km_kmatrix_new(&k, X, 12 * (size_t)m * sizeof(double), 2, &err);
        km_kmatrix *Kf = km_kmatrix_new(&k, X, (size_t)m * (size_t)m * sizeof(double), 1, &err);
        int64_t *c1 = malloc((size_t)m * sizeof *c1), *c2 = malloc((size_t)m * sizeof *c2);
        double *ref = malloc((size_t)m * sizeof *ref);
        int64_t n1 = 0, n2 = 0;
        for (int64_t j = 0; j < m; j++)
            if (j % 3 != 1)
                c1[n1++] = j;
        for (int64_t t = 0; t < n1; t++)
            if (c1[t] % 5 != 2)
                c2[n2++] = c1[t];
        int same = 1, cut = 1;
        for (int64_t i = 0; i < 12; i++)   /* fill the small cache with whole rows */
            km_kmatrix_row(Ks, c2[i], &err);
        for (int stage = 0; stage < 4; stage++) {
            const int64_t *cols = stage == 0 || stage == 2 ? c1 : stage == 1 ? c2 : NULL;
            int64_t nc = cols == c1 ? n1 : cols == c2 ? n2 : m;
            km_kmatrix_row(Ks, c2[5], &err);   /* cached when the columns change */
            same &= km_kmatrix_restrict(Ks, cols, nc, &err) == KM_OK &&
                    km_kmatrix_restrict(Kf, cols, nc, &err) == KM_OK &&
                    km_kmatrix_ncols(Ks) == nc && km_kmatrix_ncols(Kf) == nc;
            int64_t served, before, after;
            km_kmatrix_stats(Ks, &served, &before);
            const double *r0 = km_kmatrix_row(Ks, c2[5], &err);
            km_kmatrix_stats(Ks, &served, &after);
            if (stage < 3)   /* all columns back: too many to add, the cache is emptied */
                cut &= after == before;
            for (int64_t q = 0; q < 40 && r0; q++) {
                int64_t i = q == 0 ? c2[5] : c2[(q * 37) % n2];
                memcpy(ref, km_kmatrix_row(Kref, i, &err), (size_t)m * sizeof *ref);
                const double *rs = km_kmatrix_row(Ks, i, &err);
                for (int64_t t = 0; rs && t < nc; t++)
                    same &= rs[t] == ref[cols ? cols[t] : t];
                const double *rf = km_kmatrix_row(Kf, i, &err);
                for (int64_t t = 0; rf && t < nc; t++)
                    same &= rf[t] == ref[cols ? cols[t] : t];
                same &= rs && rf;
            }
        }
        CHECK(same && cut, "%s: rows restricted to 2/3, 8/15, 2/3 of the columns, then all: "
              "the bits of whole rows (12-row cache, precomputed K); cached rows are cut "
              "down and extended, not recomputed", v ? "all columns dense"
                                                     : "frequent columns dense");
        int64_t bad_cols[2] = {5, 3};
        int bad = km_kmatrix_restrict(Ks, bad_cols, 2, &err) == KM_EUSAGE;
        CHECK(bad && km_kmatrix_ncols(Ks) == m, "columns out of order are a usage error: %s",
              err.msg);
        int64_t rows[3] = {7, 2, 250};
        double coef[3] = {0.5, -1.25, 3}, *o1 = malloc((size_t)m * sizeof *o1);
        double *o2 = malloc((size_t)m * sizeof *o2);
        for (int64_t t = 0; t < n1; t++)
            o1[t] = o2[t] = (double)t / 7;
        int ok = km_kmatrix_addmul(Ks, rows, coef, 3, c1, n1, o1, &err) == KM_OK;
        for (int r = 0; r < 3; r++) {
            memcpy(ref, km_kmatrix_row(Kref, rows[r], &err), (size_t)m * sizeof *ref);
            for (int64_t t = 0; t < n1; t++)
                o2[t] += coef[r] * ref[c1[t]];
        }
        CHECK(ok && memcmp(o1, o2, (size_t)n1 * sizeof *o1) == 0, "addmul: out += the "
              "coefficients times rows on listed columns, the same bits as row by row");
        free(o1);
        free(o2);
        free(c1);
        free(c2);
        free(ref);
        km_kmatrix_free(Kref);
        km_kmatrix_free(Ks);
        km_kmatrix_free(Kf);
        km_kdata_free(X);
        km_problem_free(P);
    }
}

/* km_kmatrix_take_rows: a block of columns (a run of the source's, whole rows or rows
 * restricted to some columns) takes the source's cached rows, most recent first, as many as
 * its cache holds; they are the rows it computes itself, bit for bit, and served without
 * computing; columns that are not a run take nothing. */
static void test_take_rows(void)
{
    km_error err;
    km_problem *P = mixed_problem(300, 200, 4, 0.7, 0.1, 85);
    int64_t m = P->l;
    km_kdata *X = km_kdata_new(P, NULL, m, &err);
    km_kernel k = kernel_of(KM_KERNEL_RBF, 0.05);
    km_kmatrix *Kref = km_kmatrix_new(&k, X, 0, 1, &err);
    int64_t *cols = malloc((size_t)m * sizeof *cols), nc = 0;
    double *ref = malloc((size_t)m * sizeof *ref);
    for (int64_t j = 0; j < m; j++)
        if (j % 4 != 3)
            cols[nc++] = j;
    for (int restricted = 0; restricted < 2; restricted++) {
        /* the source: 20 rows cached (whole, or over cols); the block: columns 100..199 of
         * them (a run of cols when restricted), room for 12 rows */
        km_kmatrix *S = km_kmatrix_new(&k, X, 40 * (size_t)m * sizeof(double), 1, &err);
        if (restricted)
            km_kmatrix_restrict(S, cols, nc, &err);
        for (int64_t i = 0; i < 20; i++)
            km_kmatrix_row(S, (i * 13) % m, &err);
        const int64_t *run = restricted ? cols + 100 : NULL;
        int64_t block[100];
        for (int64_t t = 0; t < 100; t++)
            block[t] = run ? run[t] : 100 + t;
        km_kmatrix *D = km_kmatrix_new(&k, X, 12 * 100 * sizeof(double), 1, &err);
        km_kmatrix_restrict(D, block, 100, &err);
        int64_t took = km_kmatrix_take_rows(D, S), served, computed;
        int same = 1;
        for (int64_t q = 19; q >= 8; q--) {   /* the 12 most recent */
            int64_t i = (q * 13) % m;
            memcpy(ref, km_kmatrix_row(Kref, i, &err), (size_t)m * sizeof *ref);
            const double *r = km_kmatrix_row(D, i, &err);
            for (int64_t t = 0; r && t < 100; t++)
                same &= r[t] == ref[block[t]];
            same &= r != NULL;
        }
        km_kmatrix_stats(D, &served, &computed);
        CHECK(took == 12 && same && computed == 0,
              "%s rows: a block of 100 columns takes the 12 most recent of 20 cached rows "
              "(%lld), the bits it computes, none computed (%lld)",
              restricted ? "restricted" : "whole", (long long)took, (long long)computed);
        km_kmatrix *E = km_kmatrix_new(&k, X, 12 * 100 * sizeof(double), 1, &err);
        int64_t gaps[3] = {3, 5, 9};
        km_kmatrix_restrict(E, gaps, 3, &err);
        CHECK(km_kmatrix_take_rows(E, S) == 0,
              "%s rows: columns 3, 5, 9 (not a run) take none", restricted ? "restricted"
                                                                         : "whole");
        km_kmatrix_free(E);
        km_kmatrix_free(D);
        km_kmatrix_free(S);
    }
    free(cols);
    free(ref);
    km_kmatrix_free(Kref);
    km_kdata_free(X);
    km_problem_free(P);
}

int main(void)
{
    test_names();
    test_check();
    test_eval();
    test_block();
    test_threads();
    test_columns();
    test_psd();
    test_cache();
    test_matvec();
    test_restrict();
    test_take_rows();
    TEST_EXIT();
}
