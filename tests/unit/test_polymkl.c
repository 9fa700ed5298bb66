/* test_polymkl.c - randomized MKL of polynomial kernels (seed 002, issue 15) against
 * independent computations: Algorithm 3's probabilities against the enumeration of every
 * tuple (and a chi-square test of its draws), ||g||_1 from its pieces against the sum of
 * |g_t|, the corrected gradient against central differences of J, the projection, Kloft's
 * closed form against its optimality conditions, fixed weights against train -s rls -t poly,
 * and the model file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtk.h"
#include "model.h"
#include "polymkl.h"
#include "rng.h"
#include "test.h"

/* X (n x r column-major) and y, N(0, 1) entries; y a polynomial of X plus noise. */
static void make_xy(int64_t n, int r, uint64_t seed, double *X, double *y)
{
    km_rng g;
    km_rng_seed(&g, seed);
    for (int64_t a = 0; a < n * r; a++)
        X[a] = km_rng_normal(&g);
    for (int64_t i = 0; i < n; i++)
        y[i] = X[i] - 0.5 * X[n + i] * X[i] + 0.3 * X[(r - 1) * n + i] * X[i] * X[i] +
               0.1 * km_rng_normal(&g);
}

/* make_xy's rows (seed) into X, y and a solver on them: tuples of degree <= D, weights
 * rho2, lambda lam. */
static km_polymkl *new_solver(int64_t n, int r, int D, uint64_t seed, const double *rho2,
                              double lam, double *X, double *y, km_error *err)
{
    make_xy(n, r, seed, X, y);
    return km_polymkl_new(n, r, X, NULL, y, D, rho2, lam, err);
}

/* The rows of X (n x r column-major) and labels y as a problem: row i has the r features
 * a x_ij + shift j. */
static int problem_of(int64_t n, int r, const double *X, double a, int shift, const double *y,
                      km_problem **P, km_error *err)
{
    int64_t *rp = malloc((size_t)(n + 1) * sizeof *rp);
    int32_t *ix = malloc((size_t)(n * r) * sizeof *ix);
    double *v = malloc((size_t)(n * r) * sizeof *v);
    int rc = rp && ix && v ? KM_OK : km_error_nomem(err, "test rows");
    for (int64_t i = 0; rc == KM_OK && i <= n; i++)
        rp[i] = i * r;
    for (int64_t i = 0; rc == KM_OK && i < n; i++)
        for (int j = 0; j < r; j++) {
            ix[i * r + j] = j;
            v[i * r + j] = shift ? a * X[j * n + i] + j : a * X[j * n + i];
        }
    if (rc == KM_OK)
        rc = km_problem_from_csr(n, r, rp, ix, v, y, NULL, P, err);
    free(rp);
    free(ix);
    free(v);
    return rc;
}

/* The position of the tuple (d, idx) in S's order: the sum_{e<d} r^e tuples of lower degree,
 * then idx as a number in base r. */
static int64_t tuple_pos(int r, int d, const int32_t *idx)
{
    int64_t t = 0, p = 1, w = 0;
    for (int e = 0; e < d; e++) {
        t += p;
        p *= r;
    }
    for (int e = 0; e < d; e++)
        w = w * r + idx[e];
    return t + w;
}

/* Every tuple of S in order: tuple t of degree dd[t], its indices at ii + t D. */
static void all_tuples(km_polymkl *S, int D, int64_t m, int *dd, int32_t *ii)
{
    for (int64_t t = 0; t < m; t++)
        km_polymkl_tuple(S, t, &dd[t], ii + t * D);
}

/* The mean over seeds 1, 2, 3 of J(theta_T) - J* for Algorithm 2 (unit step, the literal
 * rule 2) with the sampler; *bad set if a run fails or ends below J* (1 - 1e-12). */
static double mean_excess(km_polymkl *S, int64_t T, int sampler, double Jstar, int *bad)
{
    double e = 0;
    *bad = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        km_polymkl_param par = {.iters = T, .step = 1, .literal_step = 2, .sampler = sampler,
                                .seed = seed};
        km_polymkl_info info;
        km_error err;
        int rc = km_polymkl_run(S, &par, &info, &err);
        e += (info.J - Jstar) / 3;
        if (rc || info.J < Jstar * (1 - 1e-12))
            *bad = 1;
    }
    return e;
}

/* max_i |dec_i - (y_i - y_scale lambda c_i)| over the n training rows P of the polymkl model
 * M (the c-step's equation), dec its decision values. */
static double cstep_dev(km_model *M, const km_problem *P, int64_t n, const double *y,
                        double *dec, km_error *err)
{
    km_model_decision_rows(M, P, NULL, n, dec, 1, err);
    const km_polymkl_body *b = M->body;
    double dev = 0;
    for (int64_t i = 0; i < n; i++)
        dev = fmax(dev, fabs(dec[i] - (y[i] - b->y_scale * b->lambda * b->c[i])));
    return dev;
}

/* sv = the decision values of M on the n rows of Q in the support vector form; returns
 * max_i |sv_i - poly_i| against the polynomial form's poly, *range = max_i |poly_i|. */
static double sv_form_dev(km_model *M, const km_problem *Q, int64_t n, const double *poly,
                          double *sv, double *range, km_error *err)
{
    km_polymkl_body *b = M->body;
    b->use_sv = 1;
    km_model_decision_rows(M, Q, NULL, n, sv, 1, err);
    b->use_sv = 0;
    double dev = 0;
    *range = 0;
    for (int64_t i = 0; i < n; i++) {
        dev = fmax(dev, fabs(sv[i] - poly[i]));
        *range = fmax(*range, fabs(poly[i]));
    }
    return dev;
}

/* Dense base kernels: K_j = exp(-|x_ij - x_kj|^2 / 2) per column j (Gaussian on one
 * feature). */
static double **dense_kernels(int64_t n, int r, const double *X)
{
    double **K = malloc((size_t)r * sizeof *K);
    for (int j = 0; j < r; j++) {
        K[j] = malloc((size_t)(n * n) * sizeof **K);
        for (int64_t a = 0; a < n; a++)
            for (int64_t b = 0; b < n; b++) {
                double d = X[j * n + a] - X[j * n + b];
                K[j][b * n + a] = exp(-0.5 * d * d);
            }
    }
    return K;
}

/* A few tuples with positive weights so that c is not y / lambda. */
static void some_theta(km_polymkl *S, int D)
{
    int d[4] = {0, 1, 2, D};
    int32_t idx[4 * 8] = {0};
    double w[4] = {0.2, 0.5, 0.3, 0.4};
    idx[1 * D + 0] = 1;
    idx[2 * D + 0] = 0, idx[2 * D + 1] = 2;
    for (int i = 0; i < D; i++)
        idx[3 * D + i] = (int32_t)(i % 3);
    km_error err;
    int rc = km_polymkl_set_theta(S, 4, d, idx, w, &err);
    CHECK(rc == KM_OK, "set theta on 4 tuples (%s)", rc ? err.msg : "ok");
}

/* Algorithm 3 against enumeration: the probability of every tuple, ||g||_1, and a
 * chi-square test of 10^5 draws. Rank-one base kernels with n = 12 rows take the step
 * through Z_2 (the C(5, 2) = 10 < n products of two features), with n = 10 through
 * S^{o 2} itself. */
static void test_sampler(int dense, int64_t n)
{
    const int r = 4, D = 3;
    double X[12 * 4], y[12], rho2[4] = {1, 0.5, 2, 4};
    make_xy(n, r, 7, X, y);
    double **K = dense ? dense_kernels(n, r, X) : NULL;
    km_error err;
    km_polymkl *S = km_polymkl_new(n, r, dense ? NULL : X, (const double *const *)K, y, D, rho2,
                                   0.1, &err);
    const char *what = dense ? "dense" : n > 10 ? "rank one, Z_2" : "rank one, S^{o 2}";
    CHECK(S != NULL, "%s base kernels: a problem (%s)", what, S ? "ok" : err.msg);
    if (!S)
        return;
    some_theta(S, D);
    int64_t m = km_polymkl_count(S);
    CHECK(m == 1 + 4 + 16 + 64, "|I| = sum_d r^d = 85 (%lld)", (long long)m);
    double *beta = malloc((size_t)m * sizeof *beta), *q = malloc((size_t)m * sizeof *q);
    km_polymkl_beta(S, beta, &err);
    double total = 0, worst = 0, psum = 0;
    for (int64_t t = 0; t < m; t++)
        total += beta[t];
    for (int64_t t = 0; t < m; t++) {   /* the product of Algorithm 3's conditionals */
        int d;
        int32_t idx[8];
        km_polymkl_tuple(S, t, &d, idx);
        q[t] = km_polymkl_sample(S, NULL, &d, idx, &err);
        psum += q[t];
        worst = fmax(worst, fabs(q[t] - beta[t] / total));
    }
    CHECK(worst <= 1e-12, "%s: every tuple's probability = |g_t| / ||g||_1 (max error %.2g, "
          "sum %.15g)", what, worst, psum);
    double delta[4], lam = 0.1;
    double g1 = km_polymkl_delta(S, delta);
    CHECK_CLOSE(g1, 0.5 * lam * total, 1e-12, "||g||_1 from Algorithm 3's delta(d) = the sum of "
                "|g_t| by enumeration (%.15g)", g1);
    long N = 100000, *cnt = calloc((size_t)m, sizeof *cnt);
    km_rng g;
    km_rng_seed(&g, 42);
    for (long s = 0; s < N; s++) {
        int d;
        int32_t idx[8];
        km_polymkl_sample(S, &g, &d, idx, &err);
        cnt[tuple_pos(r, d, idx)]++;
    }
    /* chi-square over the cells with expected count >= 5 (the rest pooled) */
    double chi = 0, pool_o = 0, pool_e = 0;
    int df = -1;
    for (int64_t t = 0; t < m; t++) {
        double e = (double)N * q[t];
        if (e >= 5) {
            chi += ((double)cnt[t] - e) * ((double)cnt[t] - e) / e;
            df++;
        } else {
            pool_o += (double)cnt[t];
            pool_e += e;
        }
    }
    if (pool_e >= 5) {
        chi += (pool_o - pool_e) * (pool_o - pool_e) / pool_e;
        df++;
    }
    /* Wilson-Hilferty: the 1e-4 upper quantile of chi^2_df */
    double z = 3.719, h = 2.0 / (9.0 * df), crit = df * pow(1 - h + z * sqrt(h), 3);
    CHECK(chi <= crit, "%s: chi-square of 10^5 draws %.1f <= %.1f (df %d, p = 1e-4)",
          what, chi, crit, df);
    free(cnt);
    free(beta);
    free(q);
    km_polymkl_free(S);
    if (K) {
        for (int j = 0; j < r; j++)
            free(K[j]);
        free(K);
    }
}

/* The corrected gradient g_t = -(lambda/2) c'K_t c / rho_d^2 against central differences of
 * J = (lambda/2) y'c; the paper's (12) (no 1/2) is off by a factor 2. */
static void test_gradient(void)
{
    const int64_t n = 15;
    const int r = 3, D = 3;
    double X[15 * 3], y[15], rho2[4] = {1, 1, 1, 4}, lam = 0.3;
    km_error err;
    km_polymkl *S = new_solver(n, r, D, 3, rho2, lam, X, y, &err);
    int64_t m = km_polymkl_count(S);
    double *theta = malloc((size_t)m * sizeof *theta), *beta = malloc((size_t)m * sizeof *beta);
    int *dd = malloc((size_t)m * sizeof *dd);
    int32_t *ii = calloc((size_t)m * D, sizeof *ii);
    km_rng g;
    km_rng_seed(&g, 5);
    all_tuples(S, D, m, dd, ii);
    for (int64_t t = 0; t < m; t++)
        theta[t] = 0.05 + 0.1 * km_rng_uniform(&g);
    km_polymkl_set_theta(S, m, dd, ii, theta, &err);
    km_polymkl_beta(S, beta, &err);
    double worst = 0, worst_paper = 0;
    int64_t probe[] = {0, 2, 7, 20, m - 1};
    for (int q = 0; q < 5; q++) {
        int64_t t = probe[q];
        double h = 1e-4, save = theta[t], Jp, Jm;
        theta[t] = save + h;
        km_polymkl_set_theta(S, m, dd, ii, theta, &err);
        Jp = km_polymkl_J(S);
        theta[t] = save - h;
        km_polymkl_set_theta(S, m, dd, ii, theta, &err);
        Jm = km_polymkl_J(S);
        theta[t] = save;
        double fd = (Jp - Jm) / (2 * h), gt = -0.5 * lam * beta[t], paper = -lam * beta[t];
        worst = fmax(worst, fabs(fd - gt) / fabs(fd));
        worst_paper = fmax(worst_paper, fabs(fd - paper) / fabs(fd));
    }
    CHECK(worst <= 1e-6, "g_t = -(lambda/2) c'K_t c / rho_d^2 = central differences of J "
          "(relative error %.2g over 5 tuples)", worst);
    CHECK(worst_paper > 0.9, "... and the paper's (12) without 1/2 is not (relative error %.2g)",
          worst_paper);
    free(theta);
    free(beta);
    free(dd);
    free(ii);
    km_polymkl_free(S);
}

typedef struct quad_ctx {
    km_polymkl *S;
    int bad, rows;
    double maxnorm;
} quad_ctx;

static void quad_trace(void *user, int64_t k, double sec, double J, int64_t active, double g1,
                       double gap)
{
    (void)k, (void)sec, (void)J, (void)active, (void)g1, (void)gap;
    quad_ctx *q = user;
    int d;
    int32_t idx[8];
    for (int64_t t = 0; t < km_polymkl_active(q->S); t++)
        if (!(km_polymkl_theta_at(q->S, t, &d, idx) >= 0))
            q->bad++;
    q->maxnorm = fmax(q->maxnorm, km_polymkl_theta_norm(q->S));
    q->rows++;
}

/* theta stays in the quadrant of the l2 ball; Kloft reaches the gap and theta = |g|/||g||. */
static void test_solvers(void)
{
    const int64_t n = 30;
    const int r = 4, D = 3;
    double X[30 * 4], y[30], rho2[4] = {1, 1, 1, 4};
    km_error err;
    km_polymkl *S = new_solver(n, r, D, 9, rho2, 0.01, X, y, &err);
    const char *names[] = {"alg3", "uniform", "full"};
    double Jk[3];
    for (int smp = 0; smp < 3; smp++) {
        quad_ctx q = {S, 0, 0, 0};
        km_polymkl_param par = {.iters = 300, .step = 1, .sampler = smp, .seed = 3,
                                .gap_work = 1e8, .trace = quad_trace, .user = &q};
        km_polymkl_info info;
        int rc = km_polymkl_run(S, &par, &info, &err);
        quad_trace(&q, 0, 0, 0, 0, 0, 0);
        CHECK(rc == KM_OK && q.bad == 0 && q.maxnorm <= 1 + 1e-12,
              "--sampler %s: theta >= 0 and ||theta|| <= 1 at %d checks (max %.17g)",
              names[smp], q.rows, q.maxnorm);
        Jk[smp] = info.J;
        CHECK(info.gap >= -1e-12, "--sampler %s: J(theta_T) = %.6g >= the dual bound (gap %.3g)",
              names[smp], info.J, info.gap);
    }
    km_polymkl_param par = {.iters = 1000, .solver = KM_POLY_KLOFT, .tol = 1e-10,
                            .gap_work = 1e8};
    km_polymkl_info info;
    int rc = km_polymkl_run(S, &par, &info, &err);
    CHECK(rc == KM_OK && info.converged && info.gap <= 1e-10, "Kloft: relative gap %.3g <= "
          "1e-10 in %lld iterations, J* = %.12g", info.gap, (long long)info.iters, info.J);
    CHECK(Jk[0] >= info.J * (1 - 1e-9) && Jk[1] >= info.J * (1 - 1e-9),
          "J(theta_T) of Algorithm 3 (%.6g) and UCD (%.6g) >= J* (%.6g)", Jk[0], Jk[1], info.J);
    int64_t m = km_polymkl_count(S);
    double *beta = malloc((size_t)m * sizeof *beta);
    double nb = km_polymkl_beta(S, beta, &err), worst = 0;
    for (int64_t t = 0; t < km_polymkl_active(S); t++) {
        int d;
        int32_t idx[8];
        double th = km_polymkl_theta_at(S, t, &d, idx);
        worst = fmax(worst, fabs(th - beta[tuple_pos(r, d, idx)] / nb));
    }
    CHECK(worst <= 1e-4, "Kloft: theta = |g| / ||g||_2 (max deviation %.2g)", worst);
    free(beta);
    km_polymkl_free(S);
}

/* Algorithm 2 with Algorithm 3: J(theta_T) - J* (J* by Kloft) over three seeds falls about
 * like 1/sqrt(T) and stays below UCD's at equal T (default step rule: unit). */
static void test_rate(void)
{
    const int64_t n = 30;
    const int r = 4, D = 3;
    double X[30 * 4], y[30], rho2[4] = {1, 1, 1, 4};
    km_error err;
    km_polymkl *S = new_solver(n, r, D, 9, rho2, 0.01, X, y, &err);
    km_polymkl_param kp = {.iters = 1000, .solver = KM_POLY_KLOFT, .tol = 1e-12, .gap_work = 1e8};
    km_polymkl_info info;
    km_polymkl_run(S, &kp, &info, &err);
    double Jstar = info.J, e[2][2] = {{0, 0}, {0, 0}};
    int64_t Ts[2] = {300, 3000};
    int bad;
    for (int smp = 0; smp < 2; smp++)
        for (int a = 0; a < 2; a++)
            e[smp][a] = mean_excess(S, Ts[a], smp ? KM_POLY_UNIFORM : KM_POLY_ALG3, Jstar, &bad);
    CHECK(e[0][1] <= 0.5 * e[0][0] && e[0][1] > 0, "Algorithm 3: J(theta_T) - J* = %.4g at T = "
          "300, %.4g at T = 3000 (ratio %.3f; 1/sqrt(10) = 0.316), mean of 3 seeds", e[0][0],
          e[0][1], e[0][1] / e[0][0]);
    CHECK(e[0][0] < e[1][0] && e[0][1] < e[1][1], "... below UCD's at equal T (%.4g, %.4g)",
          e[1][0], e[1][1]);
    km_polymkl_free(S);
}

/* --average: the result is (1/T) sum_k theta^(k), each theta^(k) taken from a run of k
 * iterations with the same seed. */
static void test_average(void)
{
    const int64_t n = 10;
    const int r = 3, D = 2, T = 25;
    double X[10 * 3], y[10], rho2[3] = {1, 1, 1};
    km_error err;
    km_polymkl *S = new_solver(n, r, D, 17, rho2, 0.05, X, y, &err);
    int64_t m = km_polymkl_count(S);
    double *sum = calloc((size_t)m, sizeof *sum), *avg = calloc((size_t)m, sizeof *avg);
    km_polymkl_info info;
    for (int k = 1; k <= T + 1; k++) {
        km_polymkl_param par = {.iters = k <= T ? k : T, .step = 0.5, .seed = 8,
                                .average = k > T};
        km_polymkl_run(S, &par, &info, &err);
        double *to = k <= T ? sum : avg;
        for (int64_t t = 0; t < km_polymkl_active(S); t++) {
            int d;
            int32_t idx[8];
            double th = km_polymkl_theta_at(S, t, &d, idx);
            to[tuple_pos(r, d, idx)] += th;
        }
    }
    double worst = 0;
    for (int64_t t = 0; t < m; t++)
        worst = fmax(worst, fabs(avg[t] - sum[t] / T));
    CHECK(worst <= 1e-12, "--average: theta = (1/T) sum_k theta^(k) over T = %d runs (max error "
          "%.2g)", T, worst);
    free(sum);
    free(avg);
    km_polymkl_free(S);
}

/* The lambda path's warm start: after a run at lambda_1, km_polymkl_set_lambda(lambda_2) and
 * a warm run of 0 iterations keep theta, and J is that of theta at lambda_2 solved afresh
 * (km_polymkl_set_theta on the same tuples in a problem made with lambda_2); a warm run
 * of 50 more iterations stays in the quadrant of the ball and lowers J. */
static void test_warm(void)
{
    const int64_t n = 20;
    const int r = 3, D = 3;
    double X[20 * 3], y[20], rho2[4] = {1, 1, 1, 4};
    km_error err;
    km_polymkl *S = new_solver(n, r, D, 23, rho2, 0.1, X, y, &err);
    km_polymkl *S2 = km_polymkl_new(n, r, X, NULL, y, D, rho2, 0.01, &err);
    km_polymkl_info info;
    km_polymkl_param par = {.iters = 200, .step = 1, .literal_step = 2, .seed = 5};
    km_polymkl_run(S, &par, &info, &err);
    int64_t nt = km_polymkl_active(S);
    double norm = km_polymkl_theta_norm(S);
    int *dd = malloc((size_t)nt * sizeof *dd);
    int32_t *ii = calloc((size_t)nt * D, sizeof *ii);
    double *w = malloc((size_t)nt * sizeof *w);
    for (int64_t t = 0; t < nt; t++)
        w[t] = km_polymkl_theta_at(S, t, &dd[t], ii + t * D);
    int rc = km_polymkl_set_lambda(S, 0.01, &err);
    par.warm = 1;
    par.k0 = info.iters;
    par.iters = 0;
    if (rc == KM_OK)
        rc = km_polymkl_run(S, &par, &info, &err);
    if (rc == KM_OK)
        rc = km_polymkl_set_theta(S2, nt, dd, ii, w, &err);
    double J1 = km_polymkl_J(S), J2 = km_polymkl_J(S2);
    CHECK(rc == KM_OK && km_polymkl_active(S) == nt && km_polymkl_theta_norm(S) == norm &&
          fabs(J1 - J2) <= 1e-10 * J2, "warm start: theta kept (%lld tuples, norm %.17g), J at "
          "the new lambda = J of that theta solved afresh (%.15g, %.15g; %s)", (long long)nt,
          norm, J1, J2, rc ? err.msg : "ok");
    par.iters = 50;
    if (rc == KM_OK)
        rc = km_polymkl_run(S, &par, &info, &err);
    CHECK(rc == KM_OK && info.J < J1 && km_polymkl_theta_norm(S) <= 1 + 1e-15,
          "a warm run of 50 iterations: J %.10g < %.10g, ||theta|| = %.17g", info.J, J1,
          km_polymkl_theta_norm(S));
    free(dd);
    free(ii);
    free(w);
    km_polymkl_free(S);
    km_polymkl_free(S2);
}

/* The monomial adjustment (rho_t^2 = rho_d^2 sqrt(m_t)): Kloft's optimum has equal theta on
 * the orderings of a monomial, and theta_mono = sqrt(m_t) theta_t is the optimum of the
 * problem over distinct monomials, theta_mono = beta_mono / ||beta_mono|| with beta_mono =
 * c'K_mono c / rho_d^2 (its closed-form condition); Algorithm 2 stays above that J* and
 * approaches it. Through the method table, the model's decision values on the training
 * rows are y - y_scale lambda c (the model's kernel takes rho_t too). */
static void test_monomial(void)
{
    const int64_t n = 30;
    const int r = 3, D = 3;
    double X[30 * 3], y[30], rho2[4] = {1, 1, 1, 4};
    km_error err;
    km_polymkl *S = new_solver(n, r, D, 31, rho2, 0.01, X, y, &err);
    int rc = S ? km_polymkl_set_monomial(S, 1, &err) : KM_EINTERNAL;
    km_polymkl_info info;
    km_polymkl_param par = {.iters = 200, .solver = KM_POLY_KLOFT, .tol = 1e-12,
                            .gap_work = 1e9};
    if (rc == KM_OK)
        rc = km_polymkl_run(S, &par, &info, &err);
    CHECK(rc == KM_OK && info.gap <= 1e-10 && km_polymkl_orderings(3, (int32_t[]){2, 0, 2}) == 3 &&
          km_polymkl_orderings(3, (int32_t[]){0, 1, 2}) == 6, "--rho-monomial: Kloft reaches "
          "gap %.2g (m_t of (3,1,3) = 3, of (1,2,3) = 6)", rc ? NAN : info.gap);
    if (rc)
        return;
    double Jstar = info.J;
    /* per monomial (multiset): theta of each ordering, and beta_mono */
    int64_t nt = km_polymkl_active(S);
    double spread = 0, tm[64] = {0}, bm[64] = {0}, tn = 0, bn = 0;
    double first[64];
    for (int q = 0; q < 64; q++)
        first[q] = -1;
    const double *c = km_polymkl_c(S);
    for (int64_t t = 0; t < nt; t++) {
        int d;
        int32_t idx[8], cnt[3] = {0, 0, 0};
        double th = km_polymkl_theta_at(S, t, &d, idx);
        for (int i = 0; i < d; i++)
            cnt[idx[i]]++;
        int key = d * 16 + cnt[0] * 4 + cnt[1];   /* the multiset */
        if (first[key] < 0) {
            first[key] = th;
            double u = 0;
            for (int64_t a = 0; a < n; a++) {
                double p = c[a];
                for (int i = 0; i < d; i++)
                    p *= X[(int64_t)idx[i] * n + a];
                u += p;
            }
            bm[key] = u * u / rho2[d];
            tm[key] = sqrt(km_polymkl_orderings(d, idx)) * th;
            tn += tm[key] * tm[key];
            bn += bm[key] * bm[key];
        } else {
            spread = fmax(spread, fabs(th - first[key]));
        }
    }
    double worst = 0;
    for (int q = 0; q < 64; q++)
        if (first[q] >= 0)
            worst = fmax(worst, fabs(tm[q] / sqrt(tn) - bm[q] / sqrt(bn)));
    CHECK(spread <= 1e-6 && worst <= 1e-5, "--rho-monomial: theta equal on a monomial's "
          "orderings (spread %.2g), sqrt(m_t) theta_t = beta_mono / ||beta_mono|| (max "
          "error %.2g)", spread, worst);
    double gapJ[2];
    for (int k = 0; k < 2; k++) {
        int bad;
        gapJ[k] = mean_excess(S, k ? 3000 : 300, KM_POLY_ALG3, Jstar, &bad);
        if (bad)
            gapJ[k] = NAN;
    }
    CHECK(gapJ[0] >= 0 && gapJ[1] >= 0 && gapJ[1] < gapJ[0], "--rho-monomial: Algorithm 2's J - "
          "J* (mean of 3 seeds) %.3g at T = 300, %.3g at T = 3000", gapJ[0], gapJ[1]);
    km_polymkl_free(S);
    /* through the method table */
    km_problem *P = NULL;
    km_model *M = NULL;
    km_params *pp = km_params_new();
    rc = problem_of(n, r, X, 1, 0, y, &P, &err) || km_params_set(pp, "lambda", "0.1", &err) ||
         km_params_set(pp, "iters", "100", &err) ||
         km_params_set(pp, "rho_monomial", "", &err) ||
         km_method_train(km_method_find("polymkl"), P, pp, &M, NULL, &err);
    double dev = NAN;
    if (rc == KM_OK) {
        double dec[30];
        dev = cstep_dev(M, P, n, y, dec, &err);
        if (!((const km_polymkl_body *)M->body)->mono)
            dev = NAN;
    }
    CHECK(rc == KM_OK && dev <= 1e-8, "train --rho-monomial: decision values on the training "
          "rows = y - y_scale lambda c (max error %.2g; %s)", dev, rc ? err.msg : "ok");
    km_model_free(M);
    km_params_free(pp);
    km_problem_free(P);
}

/* theta_t = C(D, d) rho_d^2 makes K_theta = sum_d C(D,d) S^{o d} = (XX' + 1)^{o D}: c equals
 * the coefficients of train -s rls -t poly -g 1 -r 1 -d D with C = 1 / lambda. */
static void test_poly_equivalence(void)
{
    const int64_t n = 25;
    const int r = 3, D = 3;
    double X[25 * 3], y[25], rho2[4] = {1, 2, 1, 4}, lam = 0.5;
    km_error err;
    km_polymkl *S = new_solver(n, r, D, 13, rho2, lam, X, y, &err);
    int64_t m = km_polymkl_count(S);
    double *theta = malloc((size_t)m * sizeof *theta);
    int *dd = malloc((size_t)m * sizeof *dd);
    int32_t *ii = calloc((size_t)m * D, sizeof *ii);
    static const double binom[4] = {1, 3, 3, 1};
    all_tuples(S, D, m, dd, ii);
    for (int64_t t = 0; t < m; t++)
        theta[t] = binom[dd[t]] * rho2[dd[t]];
    int rc = km_polymkl_set_theta(S, m, dd, ii, theta, &err);
    km_problem *P = NULL;   /* the same rows as a problem for train -s rls */
    km_model *M = NULL;
    km_params *par = km_params_new();
    char C[64];
    snprintf(C, sizeof C, "%.17g", 1 / lam);
    rc = rc || problem_of(n, r, X, 1, 0, y, &P, &err) ||
         km_params_set(par, "kernel", "poly", &err) || km_params_set(par, "gamma", "1", &err) ||
         km_params_set(par, "coef0", "1", &err) || km_params_set(par, "degree", "3", &err) ||
         km_params_set(par, "C", C, &err) || km_params_set(par, "tolerance", "1e-15", &err) ||
         km_params_set(par, "max_iter", "100000", &err) ||
         km_method_train(km_method_find("rls"), P, par, &M, NULL, &err);
    CHECK(rc == KM_OK, "train -s rls -t poly -d 3 -r 1 -g 1 -c 1/lambda (%s)",
          rc ? err.msg : "ok");
    if (rc == KM_OK) {
        km_expansion *e = km_model_expansion(M);
        const double *c = km_polymkl_c(S);
        double worst = 0, scale = 0;
        /* the kernel model keeps the rows with c_i != 0: all here, in order */
        for (int64_t i = 0; i < n && e && e->sv->l == n; i++) {
            worst = fmax(worst, fabs(e->sv_coef[i] - c[i]));
            scale = fmax(scale, fabs(c[i]));
        }
        CHECK(e && e->sv->l == n && worst <= 1e-6 * scale, "theta_t = C(D,d) rho_d^2: c = the "
              "coefficients of rls -t poly (max difference %.2g of %.3g)", worst, scale);
    }
    km_model_free(M);
    km_params_free(par);
    km_problem_free(P);
    free(theta);
    free(dd);
    free(ii);
    km_polymkl_free(S);
}

/* Through the method table: a model's decision values on its training rows are
 * y - y_scale lambda c (the c-step's equation), and a model read back gives them bit for
 * bit. */
static void test_model(void)
{
    const int64_t n = 40;
    const int r = 3;
    double X[40 * 3], y[40];
    make_xy(n, r, 21, X, y);
    km_problem *P = NULL;
    km_model *M = NULL, *back = NULL;
    km_params *par = km_params_new();
    km_error err;
    int rc = problem_of(n, r, X, 2, 1, y, &P, &err) ||
             km_params_set(par, "lambda", "0.1", &err) ||
             km_params_set(par, "iters", "50", &err) ||
             km_params_set(par, "rho2", "1,1,1,4", &err) ||
             km_method_train(km_method_find("polymkl"), P, par, &M, NULL, &err);
    CHECK(rc == KM_OK, "train -s polymkl through the table (%s)", rc ? err.msg : "ok");
    if (rc)
        return;
    double *d1 = malloc((size_t)n * sizeof *d1), *d2 = malloc((size_t)n * sizeof *d2);
    double worst = cstep_dev(M, P, n, y, d1, &err);
    km_polymkl_body *wb = M->body;
    CHECK(wb->sv->l == n && worst <= 1e-8, "decision values on the training rows = y - "
          "y_scale lambda c (max error %.2g)", worst);
    double *d3 = malloc((size_t)n * sizeof *d3), range;
    double dev = sv_form_dev(M, P, n, d1, d3, &range, &err);
    CHECK(wb->poly != NULL && dev <= 1e-10 * range, "the explicit polynomial form (%lld tuples) "
          "= the support vector form (max difference %.2g of %.3g)", (long long)wb->nt, dev,
          range);
    /* held-out rows: 30 rows of another draw */
    double Xq[30 * 3], yq[30];
    make_xy(30, r, 77, Xq, yq);
    km_problem *Q = NULL;
    double q1[30], q2[30];
    rc = problem_of(30, r, Xq, 2.5, 1, yq, &Q, &err);
    dev = range = 0;
    if (rc == KM_OK) {
        km_model_decision_rows(M, Q, NULL, 30, q1, 1, &err);
        dev = sv_form_dev(M, Q, 30, q1, q2, &range, &err);
    }
    CHECK(rc == KM_OK && dev <= 1e-10 * range, "held-out rows: the polynomial form = the "
          "support vector form (max difference %.2g of %.3g)", dev, range);
    free(d3);
    const char *path = "test_polymkl.tmp.model";
    rc = km_model_write(M, path, &err) || km_model_read(path, &back, &err);
    if (rc == KM_OK)
        km_model_decision_rows(back, P, NULL, n, d2, 1, &err);
    CHECK(rc == KM_OK && memcmp(d1, d2, (size_t)n * sizeof *d1) == 0, "the model read back: "
          "the same decision values, bit for bit (%s)", rc ? err.msg : "ok");
    const km_polymkl_body *bb = back ? back->body : NULL;
    CHECK(rc == KM_OK && bb->poly && memcmp(bb->poly, wb->poly, (size_t)wb->nt * sizeof *bb->poly)
          == 0, "the file stores the polynomial form (poly_form 1): read back bit for bit");
    if (rc == KM_OK && Q) {   /* the stored form against the read model's support vectors */
        double range_back;
        km_model_decision_rows(back, Q, NULL, 30, q1, 1, &err);
        dev = sv_form_dev(back, Q, 30, q1, q2, &range_back, &err);
        CHECK(dev <= 1e-10 * range, "held-out rows, the model read back: the stored polynomial "
              "form = the support vector form (max difference %.2g)", dev);
    }
    km_problem_free(Q);
    remove(path);
    /* a model of the previous release (no poly_form): read, written back byte for byte,
     * predicted with the support vector form */
    static const char old[] =
    "kmtk-model 1\n"
    "solver polymkl\n"
    "loss rls\n"
    "degree 2\n"
    "lambda 0.1\n"
    "y_mean 0\n"
    "y_scale 1\n"
    "C 0\n"
    "epsilon 0\n"
    "bias -1\n"
    "nr_feature 4\n"
    "nr_class 0\n"
    "nr_w 1\n"
    "nr_basis 4\n"
    "nr_tuple 6\n"
    "nr_sv 8\n"
    "basis\n"
    "linear features=1\n"
    "linear features=2\n"
    "linear features=3\n"
    "linear features=4\n"
    "rho2 1 1 1\n"
    "shift 0.45833325 0.5 0.5 -0.46933975000000006\n"
    "scale 0.24825770660532878 0.8660254037844386 0.5527706978888263 0.1281204275728016\n"
    "0.5345224838248488 2 2\n"
    "0.3779644730092272 4 3\n"
    "0.37796447300922725 2\n"
    "0.3779644730092272 2 4\n"
    "0.3779644730092272 4 4\n"
    "0.37796447300922725 3 1\n"
    "5.677102260269988 1:1.0070170768049533 2:0.5773502691896258 3:0.9045341981939868 4:1.159727241119064\n"
    "-5.960736770747099 1:0.5035080348934348 2:-1.7320508075688774 3:-0.3015120024207944 4:-1.049280372746264\n"
    "4.649624111584458 1:-1.174852752763404 2:0.5773502691896258 3:-1.5075563939671792 4:0.2761288786668888\n"
    "-8.54119152067969 1:-1.0070180839637963e-6 2:0.5773502691896258 3:0.9045341981939868 4:0.8651918519161412\n"
    "5.935631080407647 1:1.6783638087110901 2:-1.7320508075688774 3:-1.5075563939671792 4:-0.31294189973895714\n"
    "-8.995748871987825 1:0.16783668297653406 2:0.5773502691896258 3:0.9045341981939868 4:-0.31294189973895714\n"
    "6.528199189739247 1:-1.342690442758022 2:0.5773502691896258 3:-0.3015120024207944 4:1.159727241119064\n"
    "-0.7625750018679119 1:-0.8391814008465033 2:0.5773502691896258 3:0.9045341981939868 4:-1.7856110405969774\n"
    "end\n";
    FILE *f = fopen(path, "w");
    km_model *om = NULL;
    rc = f && fputs(old, f) >= 0 && fclose(f) == 0 ? KM_OK : KM_EINPUT;
    if (rc == KM_OK)
        rc = km_model_read(path, &om, &err);
    if (rc == KM_OK)
        rc = km_model_write(om, path, &err);
    char again[sizeof old + 64] = "";
    f = rc == KM_OK ? fopen(path, "r") : NULL;
    size_t got = f ? fread(again, 1, sizeof again - 1, f) : 0;
    if (f)
        fclose(f);
    again[got] = 0;
    CHECK(rc == KM_OK && strcmp(again, old) == 0 && ((km_polymkl_body *)om->body)->poly == NULL,
          "a model of the previous release (no poly_form): read, written back byte for byte, "
          "the support vector form (%s)", rc ? err.msg : "ok");
    km_model_free(om);
    remove(path);
    free(d1);
    free(d2);
    km_model_free(M);
    km_model_free(back);
    km_params_free(par);
    km_problem_free(P);
}

int main(void)
{
    test_warm();
    test_monomial();
    test_sampler(0, 12);
    test_sampler(0, 10);
    test_sampler(1, 12);
    test_gradient();
    test_solvers();
    test_rate();
    test_average();
    test_poly_equivalence();
    test_model();
    TEST_EXIT();
}
