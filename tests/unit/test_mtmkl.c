/* test_mtmkl.c - multi-task MKL (seed 004) against independent solutions: the l1svm solver
 * for the cases that reduce to it, a dense recomputation of the primal and the dual, a
 * projected-gradient solve of Problem 3 written here, the optimality conditions of theta,
 * and the step as printed (which stalls). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtk.h"
#include "model.h"
#include "mtmkl.h"
#include "rng.h"
#include "test.h"

/* The problem of n rows of d dense features in CSR (rp, ix, v), labels y, tasks qid; the
 * arrays are freed. */
static km_problem *dense_problem(int64_t n, int32_t d, int64_t *rp, int32_t *ix, double *v,
                                 double *y, int64_t *qid)
{
    km_problem *P = NULL;
    km_error err;
    km_problem_from_csr(n, d, rp, ix, v, y, qid, &P, &err);
    free(rp);
    free(qid);
    free(ix);
    free(v);
    free(y);
    return P;
}

/* n rows, d dense features, tasks qid 1..T, labels +-1 from a per-task noisy rule. */
static km_problem *make(int64_t n, int32_t d, int T, uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    int64_t *rp = malloc((size_t)(n + 1) * sizeof *rp), *qid = malloc((size_t)n * sizeof *qid);
    int32_t *ix = malloc((size_t)(n * d) * sizeof *ix);
    double *v = malloc((size_t)(n * d) * sizeof *v), *y = malloc((size_t)n * sizeof *y);
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        qid[i] = 1 + (int64_t)(i % T);
        double s = 0;
        for (int32_t j = 0; j < d; j++) {
            ix[i * d + j] = j;
            v[i * d + j] = km_rng_normal(&r);
            s += v[i * d + j] * (j == (int32_t)(qid[i] % d) ? 2 : 0.5);
        }
        y[i] = s + 0.8 * km_rng_normal(&r) > 0 ? 1 : -1;
        rp[i + 1] = (i + 1) * d;
    }
    return dense_problem(n, d, rp, ix, v, y, qid);
}

/* The kernel of the inputs for dense_kernel (NULL: x_i'x_j). */
static const km_kernel *input_kernel;

/* Dense K~_m(i, j) = G_m[t_i, t_j] k(x_i, x_j) from the factors. */
static double *dense_kernel(const km_problem *P, const km_mtmkl_tasks *k, int m)
{
    int64_t n = P->l;
    int32_t T = k->T;
    double *G = calloc((size_t)T * (size_t)T, sizeof *G), *K = malloc((size_t)(n * n) *
                                                                      sizeof *K);
    for (int32_t f = 0; f < k->nf; f++)
        if (k->f[f].m == m)
            for (int32_t a = 0; a < k->f[f].nq; a++)
                for (int32_t b = 0; b < k->f[f].nq; b++)
                    G[(int64_t)k->f[f].task[a] * T + k->f[f].task[b]] +=
                        k->f[f].lambda * k->f[f].q[a] * k->f[f].q[b];
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double dotp = 0, si = 0, sj = 0;
            for (int64_t a = P->row_ptr[i]; a < P->row_ptr[i + 1]; a++)
                for (int64_t b = P->row_ptr[j]; b < P->row_ptr[j + 1]; b++)
                    dotp += P->index[a] == P->index[b] ? P->value[a] * P->value[b] : 0;
            for (int64_t a = P->row_ptr[i]; a < P->row_ptr[i + 1]; a++)
                si += P->value[a] * P->value[a];
            for (int64_t b = P->row_ptr[j]; b < P->row_ptr[j + 1]; b++)
                sj += P->value[b] * P->value[b];
            if (input_kernel)   /* here: rbf exp(-gamma ||x_i - x_j||^2) */
                dotp = exp(-input_kernel->gamma * (si + sj - 2 * dotp));
            K[i * n + j] = G[(int64_t)km_mtmkl_task(k, P->qid[i]) * T +
                             km_mtmkl_task(k, P->qid[j])] * dotp;
        }
    free(G);
    return K;
}

static double pnorm_dual(const double *beta, int M, double p)
{
    if (p == 1) {
        double t = 0;
        for (int m = 0; m < M; m++)
            t = fmax(t, beta[m]);
        return t;
    }
    double ps = p / (p - 1), s = 0;
    for (int m = 0; m < M; m++)
        s += pow(beta[m], ps);
    return pow(s, 1 / ps);
}

/* Problem 3's dual value at alpha, from the dense kernels; beta out. */
static double dual_value(double *const *K, int M, int64_t n, const double *y,
                         const double *alpha, double p, double *beta)
{
    double sa = 0;
    for (int64_t i = 0; i < n; i++)
        sa += alpha[i];
    for (int m = 0; m < M; m++) {
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                s += y[i] * alpha[i] * K[m][i * n + j] * y[j] * alpha[j];
        beta[m] = s;
    }
    return sa - pnorm_dual(beta, M, p) / 2;
}

/* An independent solve of Problem 3: FISTA projected-gradient ascent on [0, C]^n with
 * adaptive restart and a backtracking step. */
static double solve_dual_pg(double *const *K, int M, int64_t n, const double *y, double C,
                            double p, int iters)
{
    double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
    double *x = malloc((size_t)n * sizeof *x), *gr = malloc((size_t)n * sizeof *gr);
    double *beta = malloc((size_t)M * sizeof *beta), *w = malloc((size_t)M * sizeof *w);
    double L = 1, tk = 1, fa = dual_value(K, M, n, y, a, p, beta);
    for (int it = 0; it < iters; it++) {
        double fb = dual_value(K, M, n, y, b, p, beta), nb = pnorm_dual(beta, M, p);
        double ps = p > 1 ? p / (p - 1) : INFINITY;
        for (int m = 0; m < M; m++)   /* d||beta||_{p*} / d beta_m */
            w[m] = nb > 0 ? (p > 1 ? pow(beta[m] / nb, ps - 1) : (beta[m] == nb)) : 1.0 / M;
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            for (int m = 0; m < M; m++)
                for (int64_t j = 0; j < n; j++)
                    s += w[m] * K[m][i * n + j] * y[j] * b[j];
            gr[i] = 1 - y[i] * s;
        }
        double fx;
        for (;;) {   /* backtracking: the quadratic model must lie below f */
            double lin = 0, quad = 0;
            for (int64_t i = 0; i < n; i++) {
                x[i] = fmin(C, fmax(0, b[i] + gr[i] / L));
                lin += gr[i] * (x[i] - b[i]);
                quad += (x[i] - b[i]) * (x[i] - b[i]);
            }
            fx = dual_value(K, M, n, y, x, p, beta);
            if (fx >= fb + lin - L / 2 * quad - 1e-15 * fabs(fb))
                break;
            L *= 2;
        }
        double tn = (1 + sqrt(1 + 4 * tk * tk)) / 2;
        if (fx < fa) {   /* restart */
            tk = 1;
            memcpy(b, a, (size_t)n * sizeof *b);
            continue;
        }
        for (int64_t i = 0; i < n; i++) {
            double xn = x[i];
            b[i] = xn + (tk - 1) / tn * (xn - a[i]);
            a[i] = xn;
        }
        fa = fx;
        tk = tn;
        L *= 0.9;
    }
    free(a);
    free(b);
    free(x);
    free(gr);
    free(beta);
    free(w);
    return fa;
}

/* Groups {all}, {1, 2}, {3} over tasks 1..3. */
static void three_groups(const km_problem *P, km_mtmkl_tasks *k)
{
    km_error err;
    int64_t all[] = {1, 2, 3}, two[] = {1, 2}, one[] = {3};
    km_mtmkl_tasks_init(k, P, NULL, 0, &err);
    km_mtmkl_add_group(k, all, 3, "all", &err);
    km_mtmkl_add_group(k, two, 2, "12", &err);
    km_mtmkl_add_group(k, one, 1, "3", &err);
}

static void test_against_independent(const km_kernel *kern)
{
    input_kernel = kern;
    const char *mode = kern ? "rbf kernel mode" : "linear mode";
    km_problem *P = make(40, 4, 3, 5);
    km_mtmkl_tasks k;
    three_groups(P, &k);
    double *K[3];
    for (int m = 0; m < 3; m++)
        K[m] = dense_kernel(P, &k, m);
    const double ps[] = {1.5, 2, 3};
    for (int q = 0; q < 3; q++) {
        double p = ps[q], C = 1;
        km_mtmkl_param par = {C, p, 1e-11, 200000, 1, 0, NULL, NULL, kern, 1 << 20, 0, 0};
        km_mtmkl_result r;
        km_error err;
        int rc = km_mtmkl_train(P, P->y, &k, &par, &r, &err);
        CHECK(rc == KM_OK && r.converged && r.gap <= 1e-10, "%s, p = %g: converged to gap %.3g "
              "<= 1e-10 in %lld passes", mode, p, r.gap, (long long)r.passes);
        /* the primal and the dual recomputed from dense matrices */
        double beta[3], z, loss = 0, reg = 0;
        double D = dual_value(K, 3, P->l, P->y, r.alpha, p, beta);
        for (int64_t i = 0; i < P->l; i++) {
            z = 0;
            for (int m = 0; m < 3; m++)
                for (int64_t j = 0; j < P->l; j++)
                    z += r.theta[m] * K[m][i * P->l + j] * P->y[j] * r.alpha[j];
            loss += fmax(0, 1 - P->y[i] * z);
        }
        for (int m = 0; m < 3; m++)
            reg += r.theta[m] * beta[m];
        double Pr = reg / 2 + C * loss;
        CHECK(fabs(Pr - r.primal) <= 1e-9 * Pr && fabs(D - r.dual) <= 1e-9 * fabs(D) &&
              (Pr - D) / Pr <= 2e-10, "%s, p = %g: primal %.12g and dual %.12g "
              "recomputed densely (gap %.3g)", mode, p, Pr, D, (Pr - D) / Pr);
        /* theta: on the sphere of the l_p ball, proportional to beta^{1/(p-1)} */
        double tn = 0, bn = 0, dev = 0;
        for (int m = 0; m < 3; m++) {
            tn += pow(r.theta[m], p);
            bn += pow(beta[m], p / (p - 1));
        }
        bn = pow(bn, 1 / p);
        for (int m = 0; m < 3; m++)
            dev = fmax(dev, fabs(r.theta[m] - pow(beta[m], 1 / (p - 1)) / bn));
        CHECK(fabs(pow(tn, 1 / p) - 1) < 1e-9 && dev < 1e-4, "%s, p = %g: ||theta||_p = 1, theta "
              "proportional to beta^(1/(p-1)) (largest deviation %.2g)", mode, p, dev);
        /* an independent solve of Problem 3 */
        double Dpg = solve_dual_pg(K, 3, P->l, P->y, C, p, 20000);
        CHECK(fabs(Dpg - r.dual) <= 1e-8 * fabs(r.dual), "%s, p = %g: the dual = projected "
              "gradient's %.12g (ours %.12g, rel %.2g)", mode, p, Dpg, r.dual,
              fabs(Dpg - r.dual) / fabs(r.dual));
        km_mtmkl_result_free(&r);
    }
    for (int m = 0; m < 3; m++)
        free(K[m]);
    km_mtmkl_tasks_free(&k);
    km_problem_free(P);
    input_kernel = NULL;
}

/* J(theta) = max_{0 <= a <= C} 1'a - 1/2 a'Y K_theta Y a (the SVM dual at fixed theta, the
 * inner problem of Problem 2 at p = 1), by dual coordinate ascent with exact coordinate steps
 * on the dense K_theta = sum_m theta_m K_m, warm-started from a, to a projected gradient of
 * 1e-13. */
static double svm_dual(double *const *K, int M, const double *theta, int64_t n, const double *y,
                       double C, double *a)
{
    double *Kt = calloc((size_t)(n * n), sizeof *Kt), *G = malloc((size_t)n * sizeof *G);
    for (int m = 0; m < M; m++)
        for (int64_t q = 0; q < n * n; q++)
            Kt[q] += theta[m] * K[m][q];
    for (int64_t i = 0; i < n; i++) {   /* G_i = 1 - y_i (K_theta Y a)_i */
        double s = 0;
        for (int64_t j = 0; j < n; j++)
            s += Kt[i * n + j] * y[j] * a[j];
        G[i] = 1 - y[i] * s;
    }
    for (int pass = 0; pass < 1000000; pass++) {
        double viol = 0;
        for (int64_t i = 0; i < n; i++) {
            double kii = Kt[i * n + i];
            double an = kii > 0 ? fmin(C, fmax(0, a[i] + G[i] / kii)) : G[i] > 0 ? C : a[i];
            double pg = a[i] == 0 ? fmax(G[i], 0) : a[i] == C ? fmin(G[i], 0) : G[i];
            viol = fmax(viol, fabs(pg));
            double h = an - a[i];
            if (h == 0)
                continue;
            a[i] = an;
            for (int64_t j = 0; j < n; j++)
                G[j] -= y[j] * Kt[j * n + i] * y[i] * h;
        }
        if (viol <= 1e-13)
            break;
    }
    double sa = 0, q = 0;
    for (int64_t i = 0; i < n; i++) {
        sa += a[i];
        q += a[i] * (1 - G[i]);   /* a_i y_i (K_theta Y a)_i */
    }
    free(Kt);
    free(G);
    return sa - q / 2;
}

/* min over the simplex of 3 weights of J (Problem 2 at p = 1), J convex: nested golden-section
 * searches, theta = (s, (1 - s) r, (1 - s)(1 - r)), each to a bracket of 1e-5. */
static double *const *gs_K;   /* the kernels and problem of gs_J */
static const double *gs_y;
static int64_t gs_n;
static double gs_C, *gs_a;

static double gs_J(double s, double r)
{
    double theta[3] = {s, (1 - s) * r, (1 - s) * (1 - r)};
    return svm_dual(gs_K, 3, theta, gs_n, gs_y, gs_C, gs_a);
}

static double golden(double (*f)(double, double), double fixed, int inner, double *arg)
{
    const double phi = (sqrt(5) - 1) / 2;
    double lo = 0, hi = 1, x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
    double f1 = inner ? f(fixed, x1) : golden(f, x1, 1, NULL);
    double f2 = inner ? f(fixed, x2) : golden(f, x2, 1, NULL);
    while (hi - lo > 1e-5) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - phi * (hi - lo);
            f1 = inner ? f(fixed, x1) : golden(f, x1, 1, NULL);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + phi * (hi - lo);
            f2 = inner ? f(fixed, x2) : golden(f, x2, 1, NULL);
        }
    }
    if (arg)
        *arg = (lo + hi) / 2;
    double e0 = inner ? f(fixed, 0) : golden(f, 0, 1, NULL);   /* the ends: J may be least */
    double e1 = inner ? f(fixed, 1) : golden(f, 1, 1, NULL);   /* on the simplex's edge */
    return fmin(fmin(f1, f2), fmin(e0, e1));
}

/* p = 1 (linear mode, where the walk of mtmkl.c runs): the gap, the primal and the dual
 * recomputed densely, theta on the simplex and its optimality (weight only where beta is
 * largest), and the objective against min_theta J(theta) by the nested golden-section
 * searches above, an independent solve of Problem 2. */
static void test_p1(void)
{
    const double Cs[] = {0.01, 1, 100};
    const int64_t ns[] = {40, 90, 30};
    const int32_t ds[] = {4, 4, 1};   /* d = 1: K~_theta on the free rows is singular (rank
                                         <= 3), the walk's ridge and least-squares paths */
    for (int q = 0; q < 3; q++) {
        km_problem *P = make(ns[q], ds[q], 3, 7 + q);
        km_mtmkl_tasks k;
        three_groups(P, &k);
        double *K[3];
        for (int m = 0; m < 3; m++)
            K[m] = dense_kernel(P, &k, m);
        for (int c = 0; c < 3; c++) {
            double C = Cs[c];
            km_mtmkl_param par = {C, 1, 1e-11, 100000, 1, 0, NULL, NULL, NULL, 0, 0, 0};
            km_mtmkl_result r;
            km_error err;
            int rc = km_mtmkl_train(P, P->y, &k, &par, &r, &err);
            CHECK(rc == KM_OK && r.converged && r.gap <= 1e-11, "p = 1, %lld rows, C = %g: "
                  "converged to gap %.3g <= 1e-11 in %lld passes", (long long)P->l, C, r.gap,
                  (long long)r.passes);
            /* E.1's theta steps alone (no walk) to the same gap: never fewer passes; many
             * more at C >= 1, where theta is inside the simplex (at C = 0.01 it is a corner,
             * (1, 0, 0), which E.1 reaches as fast) */
            km_mtmkl_param par1 = par;
            par1.no_walk = 1;
            par1.max_iter = 20000;
            km_mtmkl_result r1;
            rc = km_mtmkl_train(P, P->y, &k, &par1, &r1, &err);
            CHECK(rc == KM_OK && r1.passes >= r.passes &&
                  (C < 1 || r1.passes > 5 * r.passes || !r1.converged) &&
                  (!r1.converged || fabs(r1.primal - r.primal) <= 1e-10 * r.primal),
                  "p = 1, %lld rows, C = %g: E.1 alone takes %lld passes (gap %.2g), the walk "
                  "%lld; the same objective when both converge", (long long)P->l, C,
                  (long long)r1.passes, r1.gap, (long long)r.passes);
            if (rc == KM_OK)
                km_mtmkl_result_free(&r1);
            double beta[3], loss = 0, reg = 0, tsum = 0, tmin = INFINITY, bmax = 0, slack = 0;
            double D = dual_value(K, 3, P->l, P->y, r.alpha, 1, beta);
            for (int64_t i = 0; i < P->l; i++) {
                double z = 0;
                for (int m = 0; m < 3; m++)
                    for (int64_t j = 0; j < P->l; j++)
                        z += r.theta[m] * K[m][i * P->l + j] * P->y[j] * r.alpha[j];
                loss += fmax(0, 1 - P->y[i] * z);
            }
            for (int m = 0; m < 3; m++) {
                reg += r.theta[m] * beta[m];
                tsum += r.theta[m];
                tmin = fmin(tmin, r.theta[m]);
                bmax = fmax(bmax, beta[m]);
            }
            for (int m = 0; m < 3; m++)   /* sum_m theta_m (max beta - beta_m) = 0 */
                slack += r.theta[m] * (bmax - beta[m]);
            double Pr = reg / 2 + C * loss;
            CHECK(fabs(Pr - r.primal) <= 1e-9 * Pr && fabs(D - r.dual) <= 1e-9 * fabs(D) &&
                  (Pr - D) / Pr <= 1e-10, "p = 1, %lld rows, C = %g: primal %.12g and dual "
                  "%.12g recomputed densely (gap %.3g)", (long long)P->l, C, Pr, D,
                  (Pr - D) / Pr);
            CHECK(fabs(tsum - 1) <= 1e-12 && tmin >= 0 && slack <= 1e-9 * bmax, "p = 1, %lld "
                  "rows, C = %g: theta (%.6g %.6g %.6g) on the simplex (sum - 1 = %.2g), weight "
                  "only where beta is largest (sum theta_m (max beta - beta_m) = %.2g of max "
                  "beta)", (long long)P->l, C, r.theta[0], r.theta[1], r.theta[2], tsum - 1,
                  slack / bmax);
            gs_K = K;
            gs_y = P->y;
            gs_n = P->l;
            gs_C = C;
            gs_a = calloc((size_t)P->l, sizeof *gs_a);
            double s;
            double J = golden(gs_J, 0, 0, &s);
            free(gs_a);
            CHECK(fabs(J - r.primal) <= 1e-6 * r.primal, "p = 1, %lld rows, C = %g: the "
                  "objective %.10g = min over the simplex of the SVM dual J(theta) by golden "
                  "sections %.10g (rel %.2g)", (long long)P->l, C, r.primal, J,
                  fabs(J - r.primal) / r.primal);
            km_mtmkl_result_free(&r);
        }
        for (int m = 0; m < 3; m++)
            free(K[m]);
        km_mtmkl_tasks_free(&k);
        km_problem_free(P);
    }
}

/* p = 1 with many kernels, as in the tree experiment: 8 tasks, the 15 nodes of a binary tree
 * as groups (the walk starts with S = the kernels whose beta is at least half the largest,
 * and its Newton steps drop weights from S within a step). The certificate is computed here
 * from the dense K~_m: the primal at (theta, c) and the dual of Problem 3 at alpha (weak
 * duality: their relative difference bounds the distance to the optimum), theta on the
 * simplex with weight only where beta is largest; the objective equals (E.1)'s alone when
 * that converges, and the walk takes fewer passes. */
static void test_p1_tree(void)
{
    const double Cs[] = {0.01, 1, 100};
    km_problem *P = make(112, 5, 8, 21);
    km_mtmkl_tasks k;
    km_error err;
    km_mtmkl_tasks_init(&k, P, NULL, 0, &err);
    for (int w = 8; w >= 1; w /= 2)   /* widths 8, 4, 2, 1: 1 + 2 + 4 + 8 groups */
        for (int a = 1; a <= 8; a += w) {
            int64_t S[8];
            char name[16];
            for (int b = 0; b < w; b++)
                S[b] = a + b;
            snprintf(name, sizeof name, "%d-%d", a, a + w - 1);
            km_mtmkl_add_group(&k, S, w, name, &err);
        }
    const int M = k.M;
    double *K[15];
    for (int m = 0; m < M; m++)
        K[m] = dense_kernel(P, &k, m);
    for (int c = 0; c < 3; c++) {
        double C = Cs[c];
        km_mtmkl_param par = {C, 1, 1e-11, 100000, 3, 0, NULL, NULL, NULL, 0, 0, 0};
        km_mtmkl_result r;
        int rc = km_mtmkl_train(P, P->y, &k, &par, &r, &err);
        CHECK(rc == KM_OK && r.converged && r.gap <= 1e-11, "p = 1, 15 tree groups, C = %g: "
              "converged to gap %.3g <= 1e-11 in %lld passes", C, r.gap, (long long)r.passes);
        if (rc != KM_OK)
            continue;
        double beta[15], loss = 0, reg = 0, tsum = 0, tmin = INFINITY, bmax = 0, slack = 0;
        double D = dual_value(K, M, P->l, P->y, r.alpha, 1, beta);
        for (int64_t i = 0; i < P->l; i++) {
            double z = 0;
            for (int m = 0; m < M; m++)
                for (int64_t j = 0; j < P->l; j++)
                    z += r.theta[m] * K[m][i * P->l + j] * P->y[j] * r.alpha[j];
            loss += fmax(0, 1 - P->y[i] * z);
        }
        int nz = 0;
        for (int m = 0; m < M; m++) {
            reg += r.theta[m] * beta[m];
            tsum += r.theta[m];
            tmin = fmin(tmin, r.theta[m]);
            bmax = fmax(bmax, beta[m]);
            nz += r.theta[m] > 0;
        }
        for (int m = 0; m < M; m++)
            slack += r.theta[m] * (bmax - beta[m]);
        double Pr = reg / 2 + C * loss;
        CHECK((Pr - D) / Pr <= 1e-10 && fabs(Pr - r.primal) <= 1e-9 * Pr, "p = 1, 15 tree "
              "groups, C = %g: the dense primal %.12g and dual %.12g certify the optimum "
              "(relative gap %.2g)", C, Pr, D, (Pr - D) / Pr);
        CHECK(fabs(tsum - 1) <= 1e-12 && tmin >= 0 && slack <= 1e-9 * bmax, "p = 1, 15 tree "
              "groups, C = %g: theta on the simplex, %d weights > 0, only where beta is largest "
              "(sum theta_m (max beta - beta_m) = %.2g of max beta)", C, nz, slack / bmax);
        km_mtmkl_param par1 = par;
        par1.no_walk = 1;
        par1.max_iter = 30000;
        km_mtmkl_result r1;
        if (km_mtmkl_train(P, P->y, &k, &par1, &r1, &err) == KM_OK) {
            CHECK(r1.passes >= r.passes && (!r1.converged ||
                  fabs(r1.primal - r.primal) <= 1e-9 * r.primal), "p = 1, 15 tree groups, "
                  "C = %g: (E.1) alone %lld passes (gap %.2g), the walk %lld; the same "
                  "objective when both converge", C, (long long)r1.passes, r1.gap,
                  (long long)r.passes);
            km_mtmkl_result_free(&r1);
        }
        km_mtmkl_result_free(&r);
    }
    for (int m = 0; m < M; m++)
        free(K[m]);
    km_mtmkl_tasks_free(&k);
    km_problem_free(P);
}

/* The tree experiment's data (section 4, as datasets/gen_mtl_tree), smaller: 2^depth tasks at
 * the leaves of a binary tree, the root's mean 1_d, each child flipping the sign of 5
 * random dimensions of its parent's mean; 10 rows per class per task, x ~ N(+-mu_t / 2,
 * s^2 I). The groups (one per tree node, 2^(depth+1) - 1) go into k. */
static km_problem *make_tree(int depth, int32_t d, double s, uint64_t seed, km_mtmkl_tasks *k)
{
    km_rng r;
    km_rng_seed(&r, seed);
    int T = 1 << depth, nodes = 2 * T - 1;
    double *mu = malloc((size_t)nodes * (size_t)d * sizeof *mu);   /* heap order, root 0 */
    for (int32_t j = 0; j < d; j++)
        mu[j] = 1;
    for (int v = 1; v < nodes; v++) {
        memcpy(mu + (int64_t)v * d, mu + (int64_t)((v - 1) / 2) * d, (size_t)d * sizeof *mu);
        for (int f = 0; f < 5; f++)
            mu[(int64_t)v * d + (int32_t)(km_rng_uniform(&r) * d) % d] *= -1;
    }
    int64_t n = (int64_t)T * 20;
    int64_t *rp = malloc((size_t)(n + 1) * sizeof *rp), *qid = malloc((size_t)n * sizeof *qid);
    int32_t *ix = malloc((size_t)(n * d) * sizeof *ix);
    double *v = malloc((size_t)(n * d) * sizeof *v), *y = malloc((size_t)n * sizeof *y);
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int t = (int)(i / 20);
        const double *m = mu + (int64_t)(T - 1 + t) * d;   /* leaf t */
        qid[i] = t + 1;
        y[i] = i % 2 ? -1 : 1;
        for (int32_t j = 0; j < d; j++) {
            ix[i * d + j] = j;
            v[i * d + j] = y[i] * m[j] / 2 + s * km_rng_normal(&r);
        }
        rp[i + 1] = (i + 1) * d;
    }
    km_problem *P = dense_problem(n, d, rp, ix, v, y, qid);
    km_error err;
    km_mtmkl_tasks_init(k, P, NULL, 0, &err);
    for (int u = 0; u < nodes; u++) {   /* node u's leaves: [lo, hi] of the heap's last level */
        int lo = u, hi = u;
        while (lo < T - 1) {
            lo = 2 * lo + 1;
            hi = 2 * hi + 2;
        }
        int64_t S[64];
        char name[16];
        for (int t = lo; t <= hi; t++)
            S[t - lo] = t - (T - 1) + 1;
        snprintf(name, sizeof name, "node%d", u);
        km_mtmkl_add_group(k, S, hi - lo + 1, name, &err);
    }
    free(mu);
    return P;
}

/* p = 1 on the tree experiment's data (16 tasks, 31 groups, 320 rows, 40 features; s = 20
 * and sqrt(20)), where the Newton walk works on a few hundred free rows: the certificate is
 * computed here without the library's sums: v_t = sum_{i in t} c_i x_i, beta_m = ||sum_{t
 * in S_m} v_t||^2, z_i = sum_m theta_m x_i'(sum_{t in S_m} v_t) over the groups S_m that hold
 * t_i; the primal at (theta, c) and the dual of Problem 3 at alpha agree to 1e-9 (weak
 * duality), theta is on the simplex with weight only where beta is largest; within 50
 * passes (E.1 alone: thousands on the 32-task tree, doc/mtmkl.md). 14 of the 18 runs close
 * the gap with their first walk (pass 10; not: s = sqrt(20) at C = 0.001, where the first
 * walk does not halve the gap, and s = 20, draw 1, C = 100, where the first walk stalls);
 * among the 14, s = sqrt(20), draw 1, C = 100 meets a cycle (the rows that came in leave
 * again) and goes on one violating row at a time. */
static void test_p1_tree_experiment(void)
{
    const double Cs[] = {0.001, 0.1, 100}, sig[] = {20, 4.47213595499958};
    int walk1 = 0;
    for (int si = 0; si < 2; si++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            km_mtmkl_tasks k;
            km_problem *P = make_tree(4, 40, sig[si], seed, &k);
            const int64_t n = P->l;
            const int32_t d = P->n, T = k.T, M = k.M;
            double *V = malloc((size_t)T * (size_t)d * sizeof *V);
            double *Gm = malloc((size_t)M * (size_t)d * sizeof *Gm);   /* sum_{t in S_m} v_t */
            double *beta = malloc((size_t)M * sizeof *beta);
            for (int c = 0; c < 3; c++) {
                double C = Cs[c];
                km_mtmkl_param par = {C, 1, 1e-10, 100000, 3, 0, NULL, NULL, NULL, 0, 0, 0};
                km_mtmkl_result r;
                km_error err;
                int rc = km_mtmkl_train(P, P->y, &k, &par, &r, &err);
                CHECK(rc == KM_OK && r.converged && r.gap <= 1e-10 && r.passes <= 50,
                      "p = 1, tree data s = %.3g, draw %d, C = %g: converged to gap %.3g <= "
                      "1e-10 in %lld <= 50 passes", sig[si],
                      (int)seed, C, r.gap, (long long)r.passes);
                walk1 += rc == KM_OK && r.converged && r.passes == 10;
                if (rc != KM_OK)
                    continue;
                memset(V, 0, (size_t)T * (size_t)d * sizeof *V);
                double sa = 0;
                for (int64_t i = 0; i < n; i++) {
                    int32_t t = km_mtmkl_task(&k, P->qid[i]);
                    sa += r.alpha[i];
                    for (int64_t j = P->row_ptr[i]; j < P->row_ptr[i + 1]; j++)
                        V[(int64_t)t * d + P->index[j]] += P->y[i] * r.alpha[i] * P->value[j];
                }
                double bmax = 0, reg = 0, tsum = 0, tmin = INFINITY, slack = 0, loss = 0;
                for (int m = 0; m < M; m++) {
                    const km_mtmkl_factor *F = NULL;
                    for (int32_t f = 0; f < k.nf; f++)
                        if (k.f[f].m == m)
                            F = &k.f[f];
                    double *gm = Gm + (int64_t)m * d;
                    memset(gm, 0, (size_t)d * sizeof *gm);
                    for (int32_t a = 0; a < F->nq; a++)
                        for (int32_t j = 0; j < d; j++)
                            gm[j] += V[(int64_t)F->task[a] * d + j];
                    beta[m] = 0;
                    for (int32_t j = 0; j < d; j++)
                        beta[m] += gm[j] * gm[j];
                    bmax = fmax(bmax, beta[m]);
                    reg += r.theta[m] * beta[m];
                    tsum += r.theta[m];
                    tmin = fmin(tmin, r.theta[m]);
                }
                for (int m = 0; m < M; m++)
                    slack += r.theta[m] * (bmax - beta[m]);
                for (int64_t i = 0; i < n; i++) {
                    int32_t t = km_mtmkl_task(&k, P->qid[i]);
                    double z = 0;
                    for (int32_t f = 0; f < k.nf; f++) {
                        int in = 0;
                        for (int32_t a = 0; a < k.f[f].nq; a++)
                            in |= k.f[f].task[a] == t;
                        if (!in)
                            continue;
                        const double *gm = Gm + (int64_t)k.f[f].m * d;
                        for (int64_t j = P->row_ptr[i]; j < P->row_ptr[i + 1]; j++)
                            z += r.theta[k.f[f].m] * P->value[j] * gm[P->index[j]];
                    }
                    loss += fmax(0, 1 - P->y[i] * z);
                }
                double Pr = reg / 2 + C * loss, D = sa - bmax / 2;
                CHECK((Pr - D) / Pr <= 1e-9 && fabs(Pr - r.primal) <= 1e-9 * Pr,
                      "p = 1, tree data s = %.3g, draw %d, C = %g: the primal %.12g and the "
                      "dual %.12g recomputed here certify the optimum (relative gap %.2g)",
                      sig[si], (int)seed, C, Pr, D, (Pr - D) / Pr);
                CHECK(fabs(tsum - 1) <= 1e-12 && tmin >= 0 && slack <= 1e-9 * bmax,
                      "p = 1, tree data s = %.3g, draw %d, C = %g: theta on the simplex, "
                      "weight only where beta is largest (%.2g of max beta)", sig[si],
                      (int)seed, C, slack / bmax);
                km_mtmkl_result_free(&r);
            }
            free(V);
            free(Gm);
            free(beta);
            km_mtmkl_tasks_free(&k);
            km_problem_free(P);
        }
    CHECK(walk1 >= 14, "p = 1, tree data: %d of 18 runs closed the gap with their first walk "
          "(pass 10)", walk1);
}

/* Algorithm E.1 with (E.3) as printed: numerator 1 - y_i sum_m theta_m <w_mt, x_i> with
 * w_mt carrying theta_m already (so theta_m twice), denominator sum_m theta_m k~_m(x_i,
 * x_i); the theta step as corrected. Returns the final primal. */
static double printed_step(double *const *K, int M, int64_t n, const double *y, double C,
                           double p, int passes)
{
    double *alpha = calloc((size_t)n, sizeof *alpha), theta[8], beta[8];
    for (int m = 0; m < M; m++)
        theta[m] = pow(M, -1 / p);
    double primal = INFINITY;
    for (int it = 0; it < passes; it++) {
        for (int64_t i = 0; i < n; i++) {
            double num = 1, den = 0;
            for (int m = 0; m < M; m++) {
                double zm = 0;
                for (int64_t j = 0; j < n; j++)
                    zm += K[m][i * n + j] * y[j] * alpha[j];
                num -= y[i] * theta[m] * theta[m] * zm;
                den += theta[m] * K[m][i * n + i];
            }
            alpha[i] = fmin(C, fmax(0, alpha[i] + num / den));
        }
        dual_value(K, M, n, y, alpha, p, beta);
        double loss = 0, reg = 0;
        for (int m = 0; m < M; m++)
            reg += theta[m] * beta[m];
        for (int64_t i = 0; i < n; i++) {
            double z = 0;
            for (int m = 0; m < M; m++)
                for (int64_t j = 0; j < n; j++)
                    z += theta[m] * K[m][i * n + j] * y[j] * alpha[j];
            loss += fmax(0, 1 - y[i] * z);
        }
        double pr = reg / 2 + C * loss;
        if (pr < primal) {
            double norm = 0;
            for (int m = 0; m < M; m++)
                norm += pow(theta[m] * theta[m] * beta[m], p / (p + 1));
            norm = pow(norm, 1 / p);
            for (int m = 0; m < M; m++)
                theta[m] = pow(theta[m] * theta[m] * beta[m], 1 / (p + 1)) / norm;
        }
        primal = fmin(primal, pr);
    }
    free(alpha);
    return primal;
}

static void test_printed_step(void)
{
    km_problem *P = make(40, 4, 3, 5);
    km_mtmkl_tasks k;
    three_groups(P, &k);
    double *K[3];
    for (int m = 0; m < 3; m++)
        K[m] = dense_kernel(P, &k, m);
    km_mtmkl_param par = {1, 2, 1e-11, 200000, 1, 0, NULL, NULL, NULL, 0, 0, 0};
    km_mtmkl_result r;
    km_error err;
    km_mtmkl_train(P, P->y, &k, &par, &r, &err);
    double printed = printed_step(K, 3, P->l, P->y, 1, 2, 2000);
    CHECK(printed > (1 + 1e-3) * r.primal, "(E.3) as printed stalls above the optimum: its "
          "best primal %.8g after 2,000 passes vs %.8g (+%.2g%%); the corrected step reaches "
          "a gap of %.2g", printed, r.primal, 100 * (printed / r.primal - 1), r.gap);
    km_mtmkl_result_free(&r);
    for (int m = 0; m < 3; m++)
        free(K[m]);
    km_mtmkl_tasks_free(&k);
    km_problem_free(P);
}

/* Trains a method through the public API; returns the objective (NaN on failure). */
static double objective(const char *method, const km_problem *P, const char *const *kv,
                        km_model **model)
{
    km_params *par = km_params_new();
    km_error err;
    for (; *kv; kv += 2)
        km_params_set(par, kv[0], kv[1], &err);
    km_model *m = NULL;
    km_report rep;
    int rc = km_method_train(km_method_find(method), P, par, &m, &rep, &err);
    if (rc)
        printf("  %s: %s\n", method, err.msg);
    double obj = rc ? NAN : rep.objective;
    km_report_free(&rep);
    km_params_free(par);
    if (model)
        *model = m;
    else
        km_model_free(m);
    return obj;
}

static void test_reductions(void)
{
    static const char *const tight[] = {"tolerance", "1e-12", "max_iter", "100000", NULL};
    static const char *const unionb[] = {"baseline", "union", "tolerance", "1e-12", "max_iter",
                                         "100000", NULL};
    static const char *const indiv[] = {"baseline", "individual", "tolerance", "1e-12",
                                        "max_iter", "100000", NULL};
    /* one task, one kernel G = [1]: l1svm */
    km_problem *P = make(60, 5, 1, 7);
    km_model *a = NULL, *b = NULL;
    double f1 = objective("mtmkl", P, unionb, &a), f2 = objective("l1svm", P, tight, &b);
    CHECK(fabs(f1 - f2) <= 1e-6 * f2, "T = M = 1, G = [1]: the objective of l1svm (%.10g vs "
          "%.10g)", f1, f2);
    double *da = malloc((size_t)P->l * sizeof *da), *db = malloc((size_t)P->l * sizeof *db);
    km_error err;
    km_model_decision_rows(a, P, NULL, P->l, da, 1, &err);
    km_model_decision_rows(b, P, NULL, P->l, db, 1, &err);
    double dev = 0, scale = 0;
    for (int64_t i = 0; i < P->l; i++) {
        dev = fmax(dev, fabs(da[i] - db[i]));
        scale = fmax(scale, fabs(db[i]));
    }
    CHECK(dev <= 1e-5 * scale, "... and its decision values (w) to %.2g of their range", dev /
          scale);
    km_model_free(a);
    km_model_free(b);
    free(da);
    free(db);
    km_problem_free(P);
    /* three tasks, G = 11': l1svm on all rows; G = I: the sum of l1svm per task */
    P = make(90, 5, 3, 8);
    f1 = objective("mtmkl", P, unionb, NULL);
    f2 = objective("l1svm", P, tight, NULL);
    CHECK(fabs(f1 - f2) <= 1e-6 * f2, "G = 11' (union): l1svm on all rows (%.10g vs %.10g)",
          f1, f2);
    /* the one-kernel case goes to cd.c's solver: this module's own passes (own_cd) reach
     * the same optimum, and so does G = 4 * 11' (scale s = 4: C_i = 4 C there, primal / 4) */
    for (int scaled = 0; scaled < 2; scaled++) {
        km_mtmkl_tasks k;
        int64_t all[3] = {1, 2, 3};
        km_mtmkl_tasks_init(&k, P, NULL, 0, &err);
        if (scaled) {
            double G[9];
            for (int e = 0; e < 9; e++)
                G[e] = 4;
            km_mtmkl_add_matrix(&k, G, "4 11'", &err);
        } else {
            km_mtmkl_add_group(&k, all, 3, "1-3", &err);
        }
        double fo[2], gap[2];
        for (int own = 0; own < 2; own++) {
            km_mtmkl_param par = {1, 2, 1e-12, 100000, 1, 0, NULL, NULL, NULL, 0, own, 0};
            km_mtmkl_result r;
            km_mtmkl_train(P, P->y, &k, &par, &r, &err);
            fo[own] = r.primal;
            gap[own] = r.gap;
            km_mtmkl_result_free(&r);
        }
        double want = f2;
        if (scaled) {   /* its optimum: l1svm with C = 4 on x'x, divided by 4 */
            static const char *const c4[] = {"C", "4", "tolerance", "1e-12", "max_iter",
                                             "100000", NULL};
            want = objective("l1svm", P, c4, NULL) / 4;
        }
        CHECK(fabs(fo[0] - want) <= 1e-6 * want && fabs(fo[1] - want) <= 1e-6 * want &&
              gap[0] <= 1e-12 && gap[1] <= 1e-12,
              "G = %s11': by cd.c's solver %.10g (gap %.2g), by the own passes %.10g (gap "
              "%.2g), l1svm %.10g", scaled ? "4 " : "", fo[0], gap[0], fo[1], gap[1], want);
        km_mtmkl_tasks_free(&k);
    }
    f1 = objective("mtmkl", P, indiv, NULL);
    double sum = 0;
    for (int t = 1; t <= 3; t++) {
        int64_t rows[30], n = 0;
        for (int64_t i = 0; i < P->l; i++)
            if (P->qid[i] == t)
                rows[n++] = i;
        km_problem *S = NULL;
        int64_t rp[31];
        int32_t ix[30 * 5];
        double v[30 * 5], y[30];
        rp[0] = 0;
        for (int64_t a2 = 0; a2 < n; a2++) {
            int64_t i = rows[a2], len = P->row_ptr[i + 1] - P->row_ptr[i];
            memcpy(ix + rp[a2], P->index + P->row_ptr[i], (size_t)len * sizeof *ix);
            memcpy(v + rp[a2], P->value + P->row_ptr[i], (size_t)len * sizeof *v);
            y[a2] = P->y[i];
            rp[a2 + 1] = rp[a2] + len;
        }
        km_problem_from_csr(n, P->n, rp, ix, v, y, NULL, &S, &err);
        sum += objective("l1svm", S, tight, NULL);
        km_problem_free(S);
    }
    CHECK(fabs(f1 - sum) <= 1e-6 * sum, "G = I (individual): the sum of l1svm on each task's "
          "rows (%.10g vs %.10g)", f1, sum);
    km_problem_free(P);
}

static void test_model_round_trip(void)
{
    km_problem *P = make(60, 4, 3, 9);
    static const char *const def[] = {"tolerance", "1e-9", NULL};
    km_model *m = NULL, *back = NULL;
    double f = objective("mtmkl", P, def, &m);
    km_error err;
    const char *path = "test_mtmkl.tmp.model";
    int rc = km_model_write(m, path, &err) || km_model_read(path, &back, &err);
    CHECK(!rc && isfinite(f) && back->kind == &km_kind_mtmkl, "an mtmkl model (default "
          "groups: all + each task) is written and read back (%s)", rc ? err.msg : "ok");
    /* the decision values of the loaded model = z of the solver, recomputed densely */
    km_mtmkl_tasks k;
    km_mtmkl_tasks_init(&k, P, NULL, 0, &err);
    int64_t all[] = {1, 2, 3};
    km_mtmkl_add_group(&k, all, 3, "all", &err);
    for (int64_t t = 1; t <= 3; t++)
        km_mtmkl_add_group(&k, &t, 1, "one", &err);
    km_mtmkl_param par = {1, 2, 1e-9, 10000, 1, 0, NULL, NULL, NULL, 0, 0, 0};
    km_mtmkl_result r;
    km_mtmkl_train(P, P->y, &k, &par, &r, &err);
    double *K[4], *dec = malloc((size_t)P->l * sizeof *dec), dev = 0, scale = 0;
    for (int q = 0; q < 4; q++)
        K[q] = dense_kernel(P, &k, q);
    km_model_decision_rows(back, P, NULL, P->l, dec, 1, &err);
    for (int64_t i = 0; i < P->l; i++) {
        double z = 0;
        for (int q = 0; q < 4; q++)
            for (int64_t j = 0; j < P->l; j++)
                z += r.theta[q] * K[q][i * P->l + j] * P->y[j] * r.alpha[j];
        dev = fmax(dev, fabs(z - dec[i]));
        scale = fmax(scale, fabs(z));
    }
    CHECK(dev <= 1e-12 * scale, "the reloaded model's decision values = the solver's z "
          "recomputed densely (%.2g of the range)", dev / scale);
    for (int q = 0; q < 4; q++)
        free(K[q]);
    free(dec);
    km_mtmkl_result_free(&r);
    km_mtmkl_tasks_free(&k);
    km_model_free(m);
    km_model_free(back);
    remove(path);
    km_problem_free(P);
}

/* -t linear (the kernel mode on the linear kernel) = the linear mode; a kernel model
 * written and read back predicts the same. Both to a gap of 1e-13: a gap bounds the
 * decision values only to about its square root, and the two modes take different paths. */
static void test_kernel_mode(void)
{
    km_problem *P = make(60, 4, 3, 11);
    static const char *const lin[] = {"tolerance", "1e-13", NULL};
    static const char *const ker[] = {"kernel", "linear", "tolerance", "1e-13", NULL};
    km_model *a = NULL, *b = NULL, *back = NULL;
    double fa = objective("mtmkl", P, lin, &a), fb = objective("mtmkl", P, ker, &b);
    CHECK(fabs(fa - fb) <= 1e-9 * fa, "-t linear = the linear mode: objectives %.12g, %.12g",
          fb, fa);
    double *da = malloc((size_t)P->l * sizeof *da), *db = malloc((size_t)P->l * sizeof *db);
    km_error err;
    km_model_decision_rows(a, P, NULL, P->l, da, 1, &err);
    km_model_decision_rows(b, P, NULL, P->l, db, 1, &err);
    double dev = 0, scale = 0;
    for (int64_t i = 0; i < P->l; i++) {
        dev = fmax(dev, fabs(da[i] - db[i]));
        scale = fmax(scale, fabs(da[i]));
    }
    CHECK(dev <= 1e-8 * scale, "... and decision values (%.2g of the range)", dev / scale);
    const char *path = "test_mtmkl.kernel.tmp.model";
    int rc = km_model_write(b, path, &err) || km_model_read(path, &back, &err);
    if (!rc)
        km_model_decision_rows(back, P, NULL, P->l, da, 1, &err);
    CHECK(!rc && memcmp(da, db, (size_t)P->l * sizeof *da) == 0, "a kernel-mode model read "
          "back: the same decision values, bit for bit (%s)", rc ? err.msg : "ok");
    remove(path);
    free(da);
    free(db);
    km_model_free(a);
    km_model_free(b);
    km_model_free(back);
    km_problem_free(P);
}

int main(void)
{
    test_against_independent(NULL);
    static const km_kernel rbf = {KM_KERNEL_RBF, 0.3, 0, 3, 0};
    test_against_independent(&rbf);
    test_kernel_mode();
    test_p1();
    test_p1_tree();
    test_p1_tree_experiment();
    test_printed_step();
    test_reductions();
    test_model_round_trip();
    TEST_EXIT();
}
