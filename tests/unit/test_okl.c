/* test_okl.c - low-rank output kernel learning (seed 001): the reduced solver against the
 * plain m-dimensional Algorithm 1, objective (4) never increasing, Lemma 8's conditions
 * (11)-(13) at p = m, L = 0 above alpha, reduced-rank regression and PCA as lambda -> 0,
 * validation MSE, the L = I baseline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "blas.h"
#include "okl.h"
#include "okl_ref.h"
#include "rng.h"
#include "test.h"
#include "testutil.h"


/* K of the Laplacian kernel exp(-gamma |x_i - x_j|) between points a[0..na) and b[0..nb). */
static double *laplacian(const double *a, int64_t na, const double *b, int64_t nb, double gamma)
{
    double *K = malloc((size_t)(na * nb) * sizeof *K);
    for (int64_t i = 0; i < na; i++)
        for (int64_t j = 0; j < nb; j++)
            K[i * nb + j] = exp(-gamma * fabs(a[i] - b[j]));
    return K;
}

/* Points in [-1, 1] and m outputs mixing 3 smooth signals, plus noise. */
static void signals(km_rng *r, int64_t n, int64_t m, double *x, double *Y)
{
    double mix[3 * 64];
    for (int k = 0; k < 3 * 64; k++)
        mix[k] = unif(r);
    for (int64_t i = 0; i < n; i++) {
        x[i] = 2 * unif(r) - 1;
        double z[3] = {sin(3 * x[i]), cos(5 * x[i]), x[i] * x[i]};
        for (int64_t j = 0; j < m; j++)
            Y[i * m + j] = mix[(j % 64) * 3] * z[0] + mix[(j % 64) * 3 + 1] * z[1] +
                           mix[(j % 64) * 3 + 2] * z[2] + 0.3 * (2 * unif(r) - 1);
    }
}

/* A signals problem: points x (l), outputs Y (l x m), the Laplacian kernel matrix K. */
typedef struct signals_data {
    double *x, *Y, *K;
} signals_data;

static signals_data make_signals(km_rng *r, int64_t l, int64_t m, double gamma)
{
    signals_data d = {malloc((size_t)l * 8), malloc((size_t)(l * m) * 8), NULL};
    signals(r, l, m, d.x, d.Y);
    d.K = laplacian(d.x, l, d.x, l, gamma);
    return d;
}

static void free_signals(signals_data *d)
{
    free(d->x), free(d->Y), free(d->K);
}

static double frob(const double *A, int64_t n)
{
    return cblas_dnrm2((blasint)n, A, 1);
}

static double frob_diff(const double *A, const double *B, int64_t n)
{
    double s = 0;
    for (int64_t k = 0; k < n; k++)
        s += (A[k] - B[k]) * (A[k] - B[k]);
    return sqrt(s);
}

/* The path of the reduced solver = the plain Algorithm 1 (same B at every lambda, same
 * iteration counts), for m > l and m < l; objective and validation MSE checked directly. */
static void test_reduced_equals_plain(int64_t l, int64_t m, int p, uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    int64_t lv = 7;
    signals_data S = make_signals(&r, l, m, 2);
    double *Y = S.Y, *K = S.K;
    double *xv = malloc((size_t)lv * 8), *Yv = malloc((size_t)(lv * m) * 8);
    signals(&r, lv, m, xv, Yv);
    double *Kv = laplacian(xv, lv, S.x, l, 2);
    km_okl_param par = km_okl_param_default();
    par.p = p;
    par.delta = 1e-9;
    par.plain = 1;
    km_error err = {0};
    km_okl *O = km_okl_new(K, Y, l, m, Kv, Yv, lv, &par, &err);
    CHECK(O != NULL, "okl_new l=%lld m=%lld: %s", (long long)l, (long long)m, err.msg);
    double alpha = km_okl_alpha(O);
    CHECK_CLOSE(alpha, sqrt(ref_norm_ytky(K, Y, l, m)), 1e-12,
                "alpha = sqrt(||Y'KY||_2) from the l x l reduction (m = %lld)", (long long)m);
    double *B = calloc((size_t)(m * p), 8), *A = malloc((size_t)(l * p) * 8);
    double *Bl = malloc((size_t)(m * p) * 8), *Al = malloc((size_t)(l * p) * 8);
    for (int j = 0; j < p; j++)
        B[j * p + j] = 1;
    double worst_b = 0, worst_a = 0, worst_q = 0, worst_v = 0, worst_t = 0;
    double *L = malloc((size_t)(m * m) * 8), *Ll = malloc((size_t)(m * m) * 8);
    double *AB = malloc((size_t)(l * m) * 8), *ABl = malloc((size_t)(l * m) * 8);
    int same_iter = 0, near_iter = 1, nl = 10;
    for (int k = 0; k < nl; k++) {
        double lambda = alpha * pow(10, -3.0 * (k + 1) / nl);
        km_okl_info info;
        CHECK(km_okl_solve(O, lambda, &info, &err) == KM_OK && info.converged,
              "lambda = %.3g alpha: converged in %lld iterations %s", lambda / alpha,
              (long long)info.iter, err.msg);
        int64_t it = ref_okl_solve(K, Y, l, m, p, lambda, par.delta * sqrt(alpha), 10000, B, A);
        km_okl_A(O, Al);
        km_okl_B(O, Bl, &err);
        same_iter += it == info.iter;
        near_iter &= llabs(it - info.iter) <= 2;
        if (it != info.iter)
            printf("  lambda %.3g alpha: %lld iterations, plain %lld\n", lambda / alpha,
                   (long long)info.iter, (long long)it);
        /* B is unique up to B R (R orthogonal: B = I at the start has any eigenbasis W),
         * so compare L = B B' and the fitted coefficients A B' = C L */
        ref_mul(0, 1, m, p, m, B, B, L);
        ref_mul(0, 1, m, p, m, Bl, Bl, Ll);
        ref_mul(0, 1, l, p, m, A, B, AB);
        ref_mul(0, 1, l, p, m, Al, Bl, ABl);
        worst_b = fmax(worst_b, frob_diff(Ll, L, m * m) / frob(L, m * m));
        worst_a = fmax(worst_a, frob_diff(ABl, AB, l * m) / frob(AB, l * m));
        double q = ref_okl_objective(K, Y, l, m, p, Al, Bl, lambda);
        worst_q = fmax(worst_q, fabs(info.objective - q) / q);
        double v = ref_okl_mse(Kv, Yv, lv, l, m, p, Al, Bl);
        worst_v = fmax(worst_v, fabs(info.valid_mse - v) / v);
        double tr = ref_okl_mse(K, Y, l, l, m, p, Al, Bl);
        worst_t = fmax(worst_t, fabs(info.train_mse - tr) / tr);
    }
    CHECK(near_iter && same_iter >= nl - 2, "l=%lld m=%lld p=%d: iteration counts as the "
          "plain algorithm's (%d of %d equal; where ||B - B_prev|| creeps past the threshold, rounding may move the stop by <= 2)",
          (long long)l, (long long)m, p, same_iter, nl);
    CHECK(worst_b < 1e-8 && worst_a < 1e-8, "reduced solver = plain Algorithm 1 on the path: "
          "L = BB' and A B' to %.2g, %.2g", worst_b, worst_a);
    CHECK(worst_q < 1e-10 && worst_v < 1e-9 && worst_t < 1e-9, "objective (4), validation "
          "and training MSE = direct evaluation (%.2g, %.2g, %.2g)", worst_q, worst_v, worst_t);
    km_okl_free(O);
    free_signals(&S), free(xv), free(Yv), free(Kv), free(B), free(A), free(Bl);
    free(Al), free(L), free(Ll), free(AB), free(ABl);
}

/* The default solver (Anderson acceleration + saddle escape) against the plain algorithm
 * on one path: never a higher objective, fewer iterations, and every returned L of rank
 * < p certified by Lemma 8's (13) with C of (11) solved directly. */
static void test_accelerated(void)
{
    km_rng r;
    km_rng_seed(&r, 17);
    int64_t l = 20, m = 10, p = 5;
    signals_data S = make_signals(&r, l, m, 4);
    double *Y = S.Y, *K = S.K;
    km_okl_param par = km_okl_param_default();
    par.p = (int)p;
    par.delta = 1e-8;
    km_error err = {0};
    km_okl *O = km_okl_new(K, Y, l, m, NULL, NULL, 0, &par, &err);
    par.plain = 1;
    km_okl *Op = km_okl_new(K, Y, l, m, NULL, NULL, 0, &par, &err);
    double alpha = km_okl_alpha(O);
    double *B = malloc((size_t)(m * p) * 8), *C = malloc((size_t)(l * m) * 8);
    double *KC = malloc((size_t)(l * m) * 8), *CKC = malloc((size_t)(m * m) * 8);
    double *Z = malloc((size_t)(m * m) * 8), *w = malloc((size_t)m * 8);
    int64_t it = 0, itp = 0;
    int higher = 0, lower = 0, certified = 0, deficient = 0;
    double worst13 = 0;
    for (int k = 0; k < 16; k++) {
        double lambda = alpha * pow(10, -0.25 * (k + 1));
        km_okl_info a, b;
        km_okl_solve(O, lambda, &a, &err);
        km_okl_solve(Op, lambda, &b, &err);
        it += a.iter;
        itp += b.iter;
        higher += a.objective > b.objective * (1 + 1e-9);
        lower += a.objective < b.objective * (1 - 1e-7);
        if (a.rank < p) {
            deficient++;
            km_okl_B(O, B, &err);
            ref_okl_C(K, Y, l, m, p, B, lambda, C);
            ref_mul(0, 0, l, l, m, K, C, KC);
            ref_mul(1, 0, m, l, m, C, KC, CKC);
            ref_eig(CKC, m, Z, w);
            worst13 = fmax(worst13, w[m - 1]);
            certified += w[m - 1] <= 1 + 2e-3;
        }
    }
    CHECK(higher == 0, "accelerated path: no objective above the plain algorithm's "
          "(%d of 16 lower, at saddles where the plain iteration stopped)", lower);
    CHECK(it < itp, "accelerated path: %lld iterations, plain %lld", (long long)it,
          (long long)itp);
    CHECK(deficient > 0 && certified == deficient, "every solution of rank < p (%d) satisfies "
          "(13): ||C'KC||_2 <= 1 (max %.6f)", deficient, worst13);
    km_okl_free(O);
    km_okl_free(Op);
    free_signals(&S), free(B), free(C), free(KC), free(CKC), free(Z), free(w);
}

/* Q(A, B) never increases: one iteration per call, each call's pair (A*(B_k), B_k). */
static void test_monotone(void)
{
    km_rng r;
    km_rng_seed(&r, 11);
    int64_t l = 15, m = 9;
    signals_data S = make_signals(&r, l, m, 5);
    double *Y = S.Y, *K = S.K;
    km_okl_param par = km_okl_param_default();
    par.p = 4;
    par.max_iter = 1;
    km_error err = {0};
    km_okl *O = km_okl_new(K, Y, l, m, NULL, NULL, 0, &par, &err);
    double alpha = km_okl_alpha(O);
    int up = 0, steps = 0;
    double prev = INFINITY, lambda = 0;
    for (int k = 0; k < 4; k++) {
        lambda = alpha * pow(10, -1.0 - k);
        prev = INFINITY; /* the objective changes with lambda */
        for (int it = 0; it < 60; it++) {
            km_okl_info info;
            km_okl_solve(O, lambda, &info, &err);
            up += info.objective > prev * (1 + 1e-13);
            prev = info.objective;
            steps++;
        }
    }
    CHECK(up == 0, "Q(A, B) non-increasing over %d iterations at 4 lambdas", steps);
    km_okl_free(O);
    free_signals(&S);
}

/* At p = m the converged pair satisfies Lemma 8: C of (11) gives (C'KC) B = B (12) and
 * ||C'KC||_2 <= 1 (13), the certificate of global optimality. */
static void test_lemma8(void)
{
    km_rng r;
    km_rng_seed(&r, 5);
    int64_t l = 9, m = 4;
    signals_data S = make_signals(&r, l, m, 1);
    double *Y = S.Y, *K = S.K;
    km_okl_param par = km_okl_param_default();
    par.p = (int)m;
    par.delta = 1e-13;
    par.max_iter = 200000;
    km_error err = {0};
    km_okl *O = km_okl_new(K, Y, l, m, NULL, NULL, 0, &par, &err);
    double alpha = km_okl_alpha(O);
    double *B = malloc((size_t)(m * m) * 8), *C = malloc((size_t)(l * m) * 8);
    double *KC = malloc((size_t)(l * m) * 8), *CKC = malloc((size_t)(m * m) * 8);
    double *R = malloc((size_t)(m * m) * 8), *Z = malloc((size_t)(m * m) * 8), w[16];
    double worst12 = 0, worst13 = 0;
    int ranks_below = 0;
    for (int k = 0; k < 8; k++) {
        double lambda = alpha * pow(10, -0.5 * (k + 1));
        km_okl_info info;
        km_okl_solve(O, lambda, &info, &err);
        km_okl_B(O, B, &err);
        ref_okl_C(K, Y, l, m, m, B, lambda, C);
        ref_mul(0, 0, l, l, m, K, C, KC);
        ref_mul(1, 0, m, l, m, C, KC, CKC);
        ref_mul(0, 0, m, m, m, CKC, B, R);
        worst12 = fmax(worst12, frob_diff(R, B, m * m) / frob(B, m * m));
        ref_eig(CKC, m, Z, w);
        worst13 = fmax(worst13, w[m - 1]);
        ranks_below += info.rank < m;
    }
    /* 1e-6: OpenBLAS's AVX-512 kernels leave 2.2e-7 where its AVX2 ones left < 1e-7 (the
     * same iteration stops on ||B - B_prev|| alone, not on these residuals) */
    CHECK(worst12 < 1e-6, "p = m: (C'KC) B = B (12) on 8 lambdas (relative %.2g)", worst12);
    CHECK(worst13 <= 1 + 1e-6, "p = m: ||C'KC||_2 <= 1 (13): global optimum (max %.15g)",
          worst13);
    CHECK(ranks_below > 0, "p = m: the rank of L drops below m for larger lambdas (%d of 8)",
          ranks_below);
    km_okl_free(O);
    free_signals(&S), free(B), free(C), free(KC), free(CKC), free(R), free(Z);
}

/* L = 0 for lambda >= alpha: the plain iteration from B = I goes to 0 there, C = Y/lambda
 * certifies it by (13), which fails just below alpha; the solver returns L = 0. */
static void test_zero_above_alpha(void)
{
    km_rng r;
    km_rng_seed(&r, 3);
    int64_t l = 10, m = 5, p = 2;
    signals_data S = make_signals(&r, l, m, 2);
    double *Y = S.Y, *K = S.K;
    km_okl_param par = km_okl_param_default();
    par.p = (int)p;
    km_error err = {0};
    km_okl *O = km_okl_new(K, Y, l, m, NULL, NULL, 0, &par, &err);
    double alpha = km_okl_alpha(O), top = ref_norm_ytky(K, Y, l, m);
    /* C = Y / lambda: C'KC = Y'KY / lambda^2, so (13) <=> lambda >= alpha */
    CHECK(top / (alpha * alpha) <= 1 + 1e-12 && top / pow(0.999 * alpha, 2) > 1,
          "C = Y/lambda satisfies (13) exactly from lambda = alpha");
    double *B = calloc((size_t)(m * p), 8), *A = malloc((size_t)(l * p) * 8);
    for (int j = 0; j < p; j++)
        B[j * p + j] = 1;
    ref_okl_solve(K, Y, l, m, p, 1.2 * alpha, 1e-12, 100000, B, A);
    CHECK(frob(B, m * p) < 1e-9, "plain iteration at 1.2 alpha from B = I: B -> 0 (%.2g)",
          frob(B, m * p));
    km_okl_info info;
    CHECK(km_okl_solve(O, 1.2 * alpha, &info, &err) == KM_OK && info.rank == 0 &&
          info.iter == 0, "solver at 1.2 alpha: L = 0 without iterations");
    km_okl_B(O, B, &err);
    CHECK(frob(B, m * p) == 0, "B = 0 returned");
    CHECK_CLOSE(info.objective, ref_okl_objective(K, Y, l, m, p, A, B, 1.2 * alpha), 1e-14,
                "objective at L = 0 is ||Y||^2 / (2 lambda)");
    km_okl_solve(O, 0.5 * alpha, &info, &err);
    CHECK(info.rank > 0, "below alpha the path restarts from B = I and finds L != 0 "
          "(rank %d)", info.rank);
    km_okl_free(O);
    free_signals(&S), free(B), free(A);
}

/* Linear input kernel K = XX', lambda -> 0: the fit K A B' tends to reduced-rank regression
 * (closed form: the OLS fit projected on its top p right singular vectors); with Y = X
 * centered, B spans the first p principal components. */
static void test_linear_limits(void)
{
    km_rng r;
    km_rng_seed(&r, 21);
    int64_t l = 30, n = 6, m = 8, p = 2;
    double *X = malloc((size_t)(l * n) * 8), *W0 = malloc((size_t)(n * m) * 8);
    double *Y = malloc((size_t)(l * m) * 8), *K = malloc((size_t)(l * l) * 8);
    for (int64_t k = 0; k < l * n; k++)
        X[k] = 2 * unif(&r) - 1;
    for (int64_t k = 0; k < n * m; k++)
        W0[k] = 2 * unif(&r) - 1;
    ref_mul(0, 0, l, n, m, X, W0, Y);
    for (int64_t k = 0; k < l * m; k++)
        Y[k] += 0.5 * (2 * unif(&r) - 1);
    ref_mul(0, 1, l, n, l, X, X, K);
    /* reduced-rank regression: Yhat = X (X'X)^-1 X'Y, then Yhat V_p V_p' */
    double *XtX = malloc((size_t)(n * n) * 8), *XtY = malloc((size_t)(n * m) * 8);
    double *Yh = malloc((size_t)(l * m) * 8), *G = malloc((size_t)(m * m) * 8);
    double *Z = malloc((size_t)(m * m) * 8), *w = malloc((size_t)m * 8);
    double *P = calloc((size_t)(m * m), 8), *Frr = malloc((size_t)(l * m) * 8);
    ref_mul(1, 0, n, l, n, X, X, XtX);
    ref_mul(1, 0, n, l, m, X, Y, XtY);
    LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', (lapack_int)n, (lapack_int)m, XtX, (lapack_int)n, XtY,
                  (lapack_int)m);
    ref_mul(0, 0, l, n, m, X, XtY, Yh);
    ref_mul(1, 0, m, l, m, Yh, Yh, G);
    ref_eig(G, m, Z, w);
    for (int64_t a = 0; a < m; a++)
        for (int64_t b = 0; b < m; b++)
            for (int64_t q = m - p; q < m; q++)
                P[a * m + b] += Z[a * m + q] * Z[b * m + q];
    ref_mul(0, 0, l, m, m, Yh, P, Frr);

    km_okl_param par = km_okl_param_default();
    par.p = (int)p;
    par.delta = 1e-11;
    par.max_iter = 100000;
    km_error err = {0};
    km_okl *O = km_okl_new(K, Y, l, m, NULL, NULL, 0, &par, &err);
    double alpha = km_okl_alpha(O);
    km_okl_info info;
    /* the fit's distance to reduced-rank regression at 1e-5 alpha and 1e-6 alpha: O(lambda) */
    double *A = malloc((size_t)(l * p) * 8), *B = malloc((size_t)(m * p) * 8);
    double *KA = malloc((size_t)(l * p) * 8), *F = malloc((size_t)(l * m) * 8);
    double e[2];
    for (int k = 0; k <= 18; k++) {
        km_okl_solve(O, alpha * pow(10, -k / 3.0), &info, &err);
        if (k == 15 || k == 18) {
            km_okl_A(O, A);
            km_okl_B(O, B, &err);
            ref_mul(0, 0, l, l, p, K, A, KA);
            ref_mul(0, 1, l, p, m, KA, B, F);
            e[k == 18] = frob_diff(F, Frr, l * m) / frob(Frr, l * m);
        }
    }
    CHECK(info.converged && e[1] < 1e-5 && e[0] / e[1] > 5,
          "lambda -> 0: K A B' -> reduced-rank regression, distance O(lambda) (%.2g at 1e-5 "
          "alpha, %.2g at 1e-6 alpha)", e[0], e[1]);
    km_okl_free(O);

    /* PCA: Y = X centered (m = n), B spans the top-p right singular vectors of X */
    double *Xc = malloc((size_t)(l * n) * 8), *C2 = malloc((size_t)(n * n) * 8);
    double *Z2 = malloc((size_t)(n * n) * 8), *w2 = malloc((size_t)n * 8);
    for (int64_t j = 0; j < n; j++) {
        double mean = 0;
        for (int64_t i = 0; i < l; i++)
            mean += X[i * n + j] * (1 + j) / l; /* unequal scales: distinct components */
        for (int64_t i = 0; i < l; i++)
            Xc[i * n + j] = X[i * n + j] * (1 + j) - mean;
    }
    ref_mul(0, 1, l, n, l, Xc, Xc, K);
    ref_mul(1, 0, n, l, n, Xc, Xc, C2);
    ref_eig(C2, n, Z2, w2);
    O = km_okl_new(K, Xc, l, n, NULL, NULL, 0, &par, &err);
    alpha = km_okl_alpha(O);
    for (int k = 0; k <= 18; k++)
        km_okl_solve(O, alpha * pow(10, -k / 3.0), &info, &err);
    double *Bp = malloc((size_t)(n * p) * 8), *PB = calloc((size_t)(n * p), 8);
    km_okl_B(O, Bp, &err);
    for (int64_t a = 0; a < n; a++) /* PB = V_p V_p' B */
        for (int64_t j = 0; j < p; j++)
            for (int64_t q = n - p; q < n; q++)
                for (int64_t b = 0; b < n; b++)
                    PB[a * p + j] += Z2[a * n + q] * Z2[b * n + q] * Bp[b * p + j];
    double off = frob_diff(PB, Bp, n * p) / frob(Bp, n * p);
    CHECK(info.rank == 2 && off < 1e-6, "Y = centered X: B spans the first 2 principal "
          "components (off-subspace part %.2g)", off);
    km_okl_free(O);
    free(X), free(W0), free(Y), free(K), free(XtX), free(XtY), free(Yh), free(G), free(Z);
    free(w), free(P), free(Frr), free(A), free(B), free(KA), free(F), free(Xc), free(C2);
    free(Z2), free(w2), free(Bp), free(PB);
}

/* The baseline L = I: A = (K + lambda I)^-1 Y, its objective and validation MSE. */
static void test_identity(void)
{
    km_rng r;
    km_rng_seed(&r, 8);
    int64_t l = 12, m = 6, lv = 5;
    signals_data S = make_signals(&r, l, m, 3);
    double *Y = S.Y, *K = S.K;
    double *xv = malloc((size_t)lv * 8), *Yv = malloc((size_t)(lv * m) * 8);
    signals(&r, lv, m, xv, Yv);
    double *Kv = laplacian(xv, lv, S.x, l, 3);
    km_okl_param par = km_okl_param_default();
    par.identity = 1;
    km_error err = {0};
    km_okl *O = km_okl_new(K, Y, l, m, Kv, Yv, lv, &par, &err);
    double lambda = 0.05 * km_okl_alpha(O);
    km_okl_info info;
    km_okl_solve(O, lambda, &info, &err);
    double *A = malloc((size_t)(l * m) * 8), *C = malloc((size_t)(l * m) * 8);
    double *KI = malloc((size_t)(l * l) * 8), *Id = calloc((size_t)(m * m), 8);
    km_okl_A(O, A);
    memcpy(C, Y, (size_t)(l * m) * 8);
    memcpy(KI, K, (size_t)(l * l) * 8);
    for (int64_t i = 0; i < l; i++)
        KI[i * l + i] += lambda;
    LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', (lapack_int)l, (lapack_int)m, KI, (lapack_int)l, C,
                  (lapack_int)m);
    for (int64_t j = 0; j < m; j++)
        Id[j * m + j] = 1;
    double e = frob_diff(A, C, l * m) / frob(C, l * m);
    CHECK(e < 1e-10, "L = I: A = (K + lambda I)^-1 Y (%.2g)", e);
    CHECK_CLOSE(info.objective, ref_okl_objective(K, Y, l, m, m, C, Id, lambda), 1e-10,
                "L = I: objective (4) with B = I");
    CHECK_CLOSE(info.valid_mse, ref_okl_mse(Kv, Yv, lv, l, m, m, C, Id), 1e-10,
                "L = I: validation MSE");
    km_okl_free(O);
    free_signals(&S), free(xv), free(Yv), free(Kv), free(A), free(C), free(KI), free(Id);
}

static void test_errors(void)
{
    /* p above l works as p = l: the same path bit for bit, min(p, l) codes */
    {
        km_rng r;
        km_rng_seed(&r, 4);
        int64_t l = 6, m = 9;
        signals_data S = make_signals(&r, l, m, 2);
        double *Y = S.Y, *K = S.K;
        km_okl_param pa = km_okl_param_default(), pb = pa;
        pa.p = 9;
        pb.p = 6;
        km_error e2;
        km_okl *Oa = km_okl_new(K, Y, l, m, NULL, NULL, 0, &pa, &e2);
        km_okl *Ob = km_okl_new(K, Y, l, m, NULL, NULL, 0, &pb, &e2);
        int same = km_okl_ncodes(Oa) == 6;
        for (int k = 1; k <= 5; k++) {
            km_okl_info a, b;
            km_okl_solve(Oa, km_okl_alpha(Oa) * pow(10, -0.6 * k), &a, &e2);
            km_okl_solve(Ob, km_okl_alpha(Ob) * pow(10, -0.6 * k), &b, &e2);
            same &= a.objective == b.objective && a.iter == b.iter;
        }
        CHECK(same, "p = 9 > l = 6 runs as p = 6: 6 codes, the same path bit for bit");
        km_okl_free(Oa);
        km_okl_free(Ob);
        free_signals(&S);
    }
    double K = 1, Y[2] = {1, 2};
    km_okl_param par = km_okl_param_default();
    par.p = 3;
    km_error err = {0};
    CHECK(!km_okl_new(&K, Y, 1, 2, NULL, NULL, 0, &par, &err) && err.code == KM_EUSAGE &&
          strstr(err.msg, "rank"), "rank above the number of outputs: %s", err.msg);
    par.p = 1;
    km_okl *O = km_okl_new(&K, Y, 1, 2, NULL, NULL, 0, &par, &err);
    km_okl_info info;
    CHECK(O && km_okl_solve(O, 0, &info, &err) == KM_EUSAGE, "lambda = 0 rejected: %s", err.msg);
    km_okl_free(O);
}

int main(void)
{
    km_blas_threads(1);
    test_reduced_equals_plain(10, 30, 3, 1);
    test_reduced_equals_plain(14, 5, 2, 2);
    test_reduced_equals_plain(8, 12, 8, 4);
    test_accelerated();
    test_monotone();
    test_lemma8();
    test_zero_above_alpha();
    test_linear_limits();
    test_identity();
    test_errors();
    TEST_EXIT();
}
