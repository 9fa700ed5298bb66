/* test_solver.c - the resolvents of Table 2.1 and linear coordinate descent (Algorithm 2)
 * against independent solutions: 1-D brute force, LAPACK ridge, dual FISTA. */
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "linear.h"
#include "loss.h"
#include "rng.h"
#include "test.h"
#include "testutil.h"

/* Minimizes the convex psi(c) = alpha C L(y, (v + c)/alpha) + c^2/2 by golden section:
 * its minimizer is -J_alpha(v) (Theorem 8 in one dimension), found without the table. */
static double brute_resolvent(km_loss loss, double y, double v, double alpha, double C,
                              double eps)
{
    double lo = -C - 10 - fabs(v) - fabs(alpha * y), hi = -lo;
    const double g = (sqrt(5) - 1) / 2;
    for (int it = 0; it < 300; it++) {
        double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
        double fa = alpha * C * km_loss_value(loss, y, (v + a) / alpha, eps) + a * a / 2;
        double fb = alpha * C * km_loss_value(loss, y, (v + b) / alpha, eps) + b * b / 2;
        if (fa < fb)
            hi = b;
        else
            lo = a;
    }
    return (lo + hi) / 2;
}

static void test_resolvents(void)
{
    km_rng r;
    km_rng_seed(&r, 7);
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        double worst = 0;
        for (int t = 0; t < 2000; t++) {
            double y = km_loss_is_classification(loss) ? (unif(&r) < .5 ? -1 : 1)
                                                       : 4 * unif(&r) - 2;
            double v = 6 * unif(&r) - 3, alpha = 0.05 + 3 * unif(&r);
            double C = 0.1 + 3 * unif(&r), eps = 0.5 * unif(&r), stuck;
            double c = km_loss_resolvent(loss, y, v, alpha, C, eps, &stuck);
            double b = brute_resolvent(loss, y, v, alpha, C, eps);
            if (fabs(c - b) > worst)
                worst = fabs(c - b);
        }
        CHECK(worst < 1e-7, "resolvent of %s equals the 1-D minimizer (max diff %.2g)",
              km_loss_name(loss), worst);
    }
}

/* C L*(y, -c/C) = sup_z (-c z - C L(y, z)) by golden section on the concave function over a
 * wide interval: the conjugate without the closed forms of km_loss_conj. */
static double brute_conj(km_loss loss, double y, double c, double C, double eps)
{
    double lo = -50, hi = 50;
    const double g = (sqrt(5) - 1) / 2;
    for (int it = 0; it < 300; it++) {
        double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
        double fa = -c * a - C * km_loss_value(loss, y, a, eps);
        double fb = -c * b - C * km_loss_value(loss, y, b, eps);
        if (fa > fb)
            hi = b;
        else
            lo = a;
    }
    double z = (lo + hi) / 2;
    return -c * z - C * km_loss_value(loss, y, z, eps);
}

static void test_conjugates(void)
{
    km_rng r;
    km_rng_seed(&r, 8);
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        double worst = 0, neg = 0;
        for (int t = 0; t < 2000; t++) {
            double y = km_loss_is_classification(loss) ? (unif(&r) < .5 ? -1 : 1)
                                                       : 4 * unif(&r) - 2;
            double C = 0.1 + 3 * unif(&r), eps = 0.5 * unif(&r), stuck;
            /* a coefficient the resolvent returns: feasible by construction */
            double c = km_loss_resolvent(loss, y, 6 * unif(&r) - 3, 0.05 + 3 * unif(&r), C,
                                         eps, &stuck);
            double conj = km_loss_conj(loss, y, c, C, eps);
            worst = fmax(worst, fabs(conj - brute_conj(loss, y, c, C, eps)));
            double z = 8 * unif(&r) - 4;   /* Fenchel-Young: C L + C L* + c z >= 0 */
            neg = fmin(neg, C * km_loss_value(loss, y, z, eps) + conj + c * z);
        }
        CHECK(worst < 1e-7, "conjugate of %s equals the 1-D supremum (max diff %.2g)",
              km_loss_name(loss), worst);
        CHECK(neg > -1e-12, "%s: every gap term C L + C L* + c z >= 0 (min %.2g)",
              km_loss_name(loss), neg);
    }
    CHECK(isinf(km_loss_conj(KM_LOSS_L1SVM, 1, -0.5, 1, 0)) &&
              isinf(km_loss_conj(KM_LOSS_L1SVM, 1, 1.5, 1, 0)) &&
              isinf(km_loss_conj(KM_LOSS_SVR, 1, -2, 1, 0.1)),
          "conjugates are +inf outside the resolvent's range");
}

/* Dense row-major l x dim copy of X (with the bias column when bias >= 0). */
static double *dense(const km_problem *P, double bias, int dim)
{
    double *X = calloc((size_t)(P->l * dim), sizeof *X);
    for (int64_t i = 0; i < P->l; i++) {
        for (int64_t k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++)
            X[i * dim + P->index[k]] = P->value[k];
        if (bias >= 0)
            X[i * dim + dim - 1] = bias;
    }
    return X;
}

/* Primal objective written independently of the library. */
static double primal(km_loss loss, const double *X, const double *y, int64_t l, int dim,
                     double C, double eps, const double *w)
{
    double F = 0;
    for (int j = 0; j < dim; j++)
        F += w[j] * w[j] / 2;
    for (int64_t i = 0; i < l; i++) {
        double z = 0;
        for (int j = 0; j < dim; j++)
            z += X[i * dim + j] * w[j];
        double m;
        switch (loss) {
        case KM_LOSS_L1SVM: m = 1 - y[i] * z; F += C * (m > 0 ? m : 0); break;
        case KM_LOSS_L2SVM: m = 1 - y[i] * z; F += C * (m > 0 ? m * m : 0); break;
        case KM_LOSS_RLS: F += C * (y[i] - z) * (y[i] - z) / 2; break;
        case KM_LOSS_RLA: F += C * fabs(y[i] - z); break;
        case KM_LOSS_LOGISTIC: m = -y[i] * z; F += C * (m > 0 ? m + log(1 + exp(-m)) : log(1 + exp(m))); break;
        default: m = fabs(y[i] - z) - eps; F += C * (m > 0 ? m : 0); break;
        }
    }
    return F;
}

/* An independent solver: FISTA on the dual min_c c'Kc/2 + sum_i g_i(c_i), K = XX', with
 * the prox of each conjugate written out per loss; returns w = X'c. */
static void dual_fista(km_loss loss, const double *X, const double *y, int64_t l, int dim,
                       double C, double eps, double *w, int iters)
{
    double *K = malloc((size_t)(l * l) * sizeof *K), *ev = malloc((size_t)l * sizeof *ev);
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < l; j++) {
            double s = 0;
            for (int q = 0; q < dim; q++)
                s += X[i * dim + q] * X[j * dim + q];
            K[i * l + j] = s;
        }
    double *Kc = malloc((size_t)(l * l) * sizeof *Kc);
    memcpy(Kc, K, (size_t)(l * l) * sizeof *K);
    LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (lapack_int)l, Kc, (lapack_int)l, ev);
    double t = 1 / ev[l - 1];
    double *c = calloc((size_t)l, sizeof *c), *u = calloc((size_t)l, sizeof *u);
    double *cold = calloc((size_t)l, sizeof *cold);
    double theta = 1;
    for (int it = 0; it < iters; it++) {
        memcpy(cold, c, (size_t)l * sizeof *c);
        for (int64_t i = 0; i < l; i++) {
            double g = 0;
            for (int64_t j = 0; j < l; j++)
                g += K[i * l + j] * u[j];
            double a = u[i] - t * g, b;
            switch (loss) {
            case KM_LOSS_L1SVM:   /* g = -beta, beta = y c in [0, C] */
                b = y[i] * a + t;
                c[i] = y[i] * (b < 0 ? 0 : b > C ? C : b);
                break;
            case KM_LOSS_L2SVM:   /* g = -beta + beta^2/(4C), beta >= 0 */
                b = (y[i] * a + t) / (1 + t / (2 * C));
                c[i] = y[i] * (b > 0 ? b : 0);
                break;
            default:              /* svr: g = -y c + eps |c|, |c| <= C */
                b = a + t * y[i];
                b = b > t * eps ? b - t * eps : b < -t * eps ? b + t * eps : 0;
                c[i] = b < -C ? -C : b > C ? C : b;
                break;
            }
        }
        double th = (1 + sqrt(1 + 4 * theta * theta)) / 2;
        for (int64_t i = 0; i < l; i++)
            u[i] = c[i] + (theta - 1) / th * (c[i] - cold[i]);
        theta = th;
    }
    for (int q = 0; q < dim; q++) {
        w[q] = 0;
        for (int64_t i = 0; i < l; i++)
            w[q] += c[i] * X[i * dim + q];
    }
    free(K); free(Kc); free(ev); free(c); free(u); free(cold);
}

/* km_cd_linear on all rows of P with constant C. */
static int linear_cd(const km_problem *P, const km_cd_param *par, double C, double bias,
                     double *w, double *c, km_cd_result *res)
{
    double *Cv = malloc((size_t)P->l * sizeof *Cv);
    for (int64_t i = 0; i < P->l; i++)
        Cv[i] = C;
    km_linear_data d = {P, NULL, P->l, bias};
    km_error err;
    int rc = km_cd_linear(&d, P->y, Cv, par, w, c, res, &err);
    free(Cv);
    return rc;
}

/* Runs the library's linear CD on all rows with constant C (the step rule). */
static km_cd_result solve(const km_problem *P, km_loss loss, double C, double eps,
                          double bias, double delta, km_rule rule, int shrinking,
                          uint64_t seed, double *w, double *c)
{
    km_cd_param par = km_cd_param_default();
    par.loss = loss;
    par.eps = eps;
    par.delta = delta;
    par.rule = rule;
    par.shrinking = shrinking;
    par.seed = seed;
    par.stop = KM_STOP_STEP;   /* tight deltas on the step scale; the gap rule: test_gap_* */
    par.max_iter = 100000;
    km_cd_result res;
    int rc = linear_cd(P, &par, C, bias, w, c, &res);
    CHECK(rc == KM_OK && res.converged, "%s CD converges (%lld macro-iterations)",
          km_loss_name(loss), (long long)res.iter);
    return res;
}

static void test_optimality(void)
{
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        int cls = km_loss_is_classification(loss);
        km_problem *P = random_problem(120, 15, 0.4, cls, 11 + (uint64_t)loss);
        double *w = calloc(16, sizeof *w), *c = calloc(120, sizeof *c);
        double C = 0.7, eps = 0.2;
        solve(P, loss, C, eps, -1, 1e-10, KM_RULE_RANDOM, 1, 1, w, c);
        int bad = 0;
        double wdiff = 0;
        double *w2 = calloc(16, sizeof *w2);
        for (int64_t i = 0; i < P->l; i++) {
            double z = km_linear_decision(P, i, w, P->n, -1);
            bad += !kkt_ok(loss, P->y[i], z, c[i], C, eps, 1e-6);
            for (int64_t k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++)
                w2[P->index[k]] += c[i] * P->value[k];
        }
        for (int j = 0; j < 15; j++)
            wdiff = fmax(wdiff, fabs(w[j] - w2[j]));
        CHECK(bad == 0, "%s: optimality conditions (2.8) hold at every i (%d violations)",
              km_loss_name(loss), bad);
        CHECK(wdiff < 1e-9, "%s: w = sum_i c_i x_i (max diff %.2g)", km_loss_name(loss), wdiff);
        free(w); free(w2); free(c);
        km_problem_free(P);
    }
}

static void test_rls_closed_form(void)
{
    for (int b = 0; b < 2; b++) {
        double bias = b ? 1.5 : -1;
        km_problem *P = random_problem(80, 20, 0.3, 0, 5);
        int dim = 20 + b;
        double C = 2.5;
        double *X = dense(P, bias, dim);
        double *A = calloc((size_t)(dim * dim), sizeof *A), *rhs = calloc((size_t)dim, sizeof *rhs);
        for (int p = 0; p < dim; p++) {
            for (int q = 0; q < dim; q++)
                for (int64_t i = 0; i < P->l; i++)
                    A[p * dim + q] += X[i * dim + p] * X[i * dim + q];
            A[p * dim + p] += 1 / C;                     /* (X'X + I/C) w = X'y */
            for (int64_t i = 0; i < P->l; i++)
                rhs[p] += X[i * dim + p] * P->y[i];
        }
        int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', dim, 1, A, dim, rhs, 1);
        double *w = calloc(21, sizeof *w);
        solve(P, KM_LOSS_RLS, C, 0, bias, 1e-12, KM_RULE_CYCLIC, 1, 1, w, NULL);
        double diff = 0;
        for (int j = 0; j < 20; j++)
            diff = fmax(diff, fabs(w[j] - rhs[j]));
        if (b)
            diff = fmax(diff, fabs(w[20] - rhs[20]));
        CHECK(info == 0 && diff < 1e-8, "rls%s equals the ridge solution (X'X + I/C)^-1 X'y "
              "by LAPACK dposv (max diff %.2g)", b ? " with bias" : "", diff);
        free(X); free(A); free(rhs); free(w);
        km_problem_free(P);
    }
}

static void test_against_fista(void)
{
    const km_loss losses[] = {KM_LOSS_L1SVM, KM_LOSS_L2SVM, KM_LOSS_SVR};
    for (int t = 0; t < 3; t++) {
        km_loss loss = losses[t];
        int cls = km_loss_is_classification(loss);
        km_problem *P = random_problem(60, 10, 0.5, cls, 100 + (uint64_t)t);
        double C = 1.3, eps = 0.15, bias = 1;
        int dim = 11;
        double *X = dense(P, bias, dim);
        double *wref = calloc((size_t)dim, sizeof *wref), *w = calloc((size_t)dim, sizeof *w);
        dual_fista(loss, X, P->y, P->l, dim, C, eps, wref, 30000);
        solve(P, loss, C, eps, bias, 1e-8, KM_RULE_RANDOM, 1, 3, w, NULL);
        double Fref = primal(loss, X, P->y, P->l, dim, C, eps, wref);
        double F = primal(loss, X, P->y, P->l, dim, C, eps, w);
        km_linear_data d = {P, NULL, P->l, bias};
        double *Cv = malloc((size_t)P->l * sizeof *Cv);
        for (int64_t i = 0; i < P->l; i++)
            Cv[i] = C;
        double Flib = km_linear_objective(&d, P->y, Cv, loss, eps, w);
        CHECK(fabs(F - Fref) <= 1e-4 * Fref, "%s primal objective %.10g matches dual FISTA's "
              "%.10g within 1e-4", km_loss_name(loss), F, Fref);
        CHECK_CLOSE(Flib, F, 1e-12, "%s: library objective equals the test's", km_loss_name(loss));
        free(X); free(wref); free(w); free(Cv);
        km_problem_free(P);
    }
}

static void test_rules_and_shrinking(void)
{
    km_problem *P = random_problem(300, 30, 0.2, 1, 9);
    double Cv = 1;
    double *Cs = malloc(300 * sizeof *Cs);
    for (int i = 0; i < 300; i++)
        Cs[i] = Cv;
    km_linear_data d = {P, NULL, 300, -1};
    double F[5], *w = calloc(31, sizeof *w), *w2 = calloc(31, sizeof *w2);
    const km_rule rules[] = {KM_RULE_RANDOM, KM_RULE_CYCLIC, KM_RULE_AITKEN};
    for (int r = 0; r < 3; r++) {
        solve(P, KM_LOSS_L1SVM, Cv, 0, -1, 1e-9, rules[r], 1, 1, w, NULL);
        F[r] = km_linear_objective(&d, P->y, Cs, KM_LOSS_L1SVM, 0, w);
    }
    solve(P, KM_LOSS_L1SVM, Cv, 0, -1, 1e-9, KM_RULE_RANDOM, 0, 1, w, NULL);
    F[3] = km_linear_objective(&d, P->y, Cs, KM_LOSS_L1SVM, 0, w);
    solve(P, KM_LOSS_L1SVM, Cv, 0, -1, 1e-9, KM_RULE_RANDOM, 1, 99, w, NULL);
    F[4] = km_linear_objective(&d, P->y, Cs, KM_LOSS_L1SVM, 0, w);
    for (int r = 1; r < 5; r++)
        CHECK_CLOSE(F[r], F[0], 1e-8, "l1svm objective is the same for rule/shrinking/seed "
                    "variant %d", r);
    km_cd_result a = solve(P, KM_LOSS_L1SVM, Cv, 0, -1, 1e-3, KM_RULE_RANDOM, 1, 42, w, NULL);
    km_cd_result b = solve(P, KM_LOSS_L1SVM, Cv, 0, -1, 1e-3, KM_RULE_RANDOM, 1, 42, w2, NULL);
    CHECK(a.iter == b.iter && memcmp(w, w2, 31 * sizeof *w) == 0,
          "same seed, bit-identical w");
    free(w); free(w2); free(Cs);
    km_problem_free(P);
}

static void test_bias_is_a_feature(void)
{
    km_problem *P = random_problem(100, 8, 0.5, 1, 21);
    km_problem *Q = random_problem(100, 8, 0.5, 1, 21);
    /* Q = P with an explicit 9th feature of value 2 */
    Q->n = 9;
    Q->index = realloc(Q->index, (size_t)(Q->nnz + 100) * sizeof *Q->index);
    Q->value = realloc(Q->value, (size_t)(Q->nnz + 100) * sizeof *Q->value);
    int64_t k = 0;
    for (int64_t i = 0; i < 100; i++) {
        for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++, k++) {
            Q->index[k] = P->index[t];
            Q->value[k] = P->value[t];
        }
        Q->index[k] = 8;
        Q->value[k++] = 2;
        Q->row_ptr[i + 1] = k;
    }
    Q->nnz = k;
    double *w = calloc(10, sizeof *w), *w2 = calloc(11, sizeof *w2);
    solve(P, KM_LOSS_L2SVM, 1, 0, 2, 1e-10, KM_RULE_CYCLIC, 1, 1, w, NULL);
    solve(Q, KM_LOSS_L2SVM, 1, 0, -1, 1e-10, KM_RULE_CYCLIC, 1, 1, w2, NULL);
    double diff = 0;
    for (int j = 0; j < 9; j++)
        diff = fmax(diff, fabs(w[j == 8 ? 8 : j] - w2[j]));
    CHECK(diff < 1e-8, "-B 2 equals an explicit constant feature 2 (max diff %.2g)", diff);
    free(w); free(w2);
    km_problem_free(P);
    km_problem_free(Q);
}

static void test_one_vs_all_and_weights(void)
{
    /* three classes: OVA weight vectors equal the binary problems solved directly */
    km_problem *P = random_problem(150, 6, 0.6, 0, 31);
    for (int64_t i = 0; i < 150; i++)
        P->y[i] = P->y[i] < -0.3 ? 1 : P->y[i] < 0.3 ? 2 : 3;
    km_train_param par = {0};
    par.cd = km_cd_param_default();
    par.cd.loss = KM_LOSS_L1SVM;
    par.cd.delta = 1e-9;
    par.cd.stop = KM_STOP_STEP;
    par.C = 0.5;
    par.bias = 1;
    km_class_weight cw = {2, 3.0};
    par.weights = &cw;
    par.nr_weight = 1;
    km_model *m = NULL;
    km_train_info info;
    km_error err;
    int rc = km_train(P, NULL, 0, &par, &m, &info, &err);
    CHECK(rc == KM_OK && m->nr_class == 3 && m->nr_w == 3, "three classes give three "
          "one-versus-all vectors");
    double *y = malloc(150 * sizeof *y), *C = malloc(150 * sizeof *C), *w = calloc(7, sizeof *w);
    km_linear_data d = {P, NULL, 150, 1};
    for (int k = 0; k < 3; k++) {
        for (int64_t i = 0; i < 150; i++) {
            y[i] = P->y[i] == k + 1 ? 1 : -1;
            C[i] = y[i] > 0 && k == 1 ? 1.5 : 0.5;
        }
        km_cd_result res;
        km_cd_param cp = par.cd;
        km_cd_linear(&d, y, C, &cp, w, NULL, &res, &err);
        double F = km_linear_objective(&d, y, C, KM_LOSS_L1SVM, 0, w);
        CHECK_CLOSE(info.objective[k], F, 1e-7, "class %d vs rest: same objective as the "
                    "directly weighted problem", k + 1);
    }
    km_train_info_free(&info);
    km_model_free(m);
    free(y); free(C); free(w);
    km_problem_free(P);
}

/* Linear CD under the gap rule (or the step rule) at delta; returns the result. */
static km_cd_result solve_stop(const km_problem *P, km_loss loss, double C, double eps,
                               double bias, km_stop stop, double delta, int shrinking,
                               int64_t max_iter, double *w, double *c)
{
    km_cd_param par = km_cd_param_default();
    par.loss = loss;
    par.eps = eps;
    par.stop = stop;
    par.delta = delta;
    par.shrinking = shrinking;
    par.max_iter = max_iter;
    km_cd_result res;
    int rc = linear_cd(P, &par, C, bias, w, c, &res);
    CHECK(rc == KM_OK, "%s linear CD returns", km_loss_name(loss));
    return res;
}

/* The gap certificate: P(w) - D(c) computed here from X, c and the conjugates by hand equals
 * res.gap * res.primal; res.gap <= delta; and it bounds the distance to a tight optimum. */
static void test_gap_certificate(void)
{
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        int cls = km_loss_is_classification(loss);
        km_problem *P = random_problem(150, 12, 0.5, cls, 300 + (uint64_t)loss);
        double C = 0.9, eps = 0.15, bias = 1, delta = 1e-4;
        int dim = 13;
        double *X = dense(P, bias, dim), *w = calloc(14, sizeof *w), *c = calloc(150, sizeof *c);
        km_cd_result res = solve_stop(P, loss, C, eps, bias, KM_STOP_GAP, delta, 1, 100000, w, c);
        double Fp = primal(loss, X, P->y, P->l, dim, C, eps, w), ww = 0, conj = 0;
        for (int j = 0; j < dim; j++)
            ww += w[j] * w[j];
        for (int64_t i = 0; i < P->l; i++)
            conj += conj_by_hand(loss, P->y[i], c[i], C, eps);
        double D = -ww / 2 - conj, gap = (Fp - D) / Fp;
        CHECK(res.converged && res.gap <= delta && fabs(gap - res.gap) <= 1e-10 &&
                  fabs(res.primal - Fp) <= 1e-10 * Fp,
              "%s: gap rule stops at relative gap %.3g <= %g (%lld iterations); P - D by hand "
              "%.3g, primal %.12g = %.12g", km_loss_name(loss), res.gap, delta,
              (long long)res.iter, gap, res.primal, Fp);
        double *w2 = calloc(14, sizeof *w2);
        solve_stop(P, loss, C, eps, bias, KM_STOP_STEP, 1e-12, 1, 1000000, w2, NULL);
        double Fstar = primal(loss, X, P->y, P->l, dim, C, eps, w2);
        CHECK(Fp >= Fstar - 1e-9 * Fstar && (Fp - Fstar) / Fp <= res.gap + 1e-12,
              "%s: the gap bounds the primal suboptimality (%.3g <= %.3g)", km_loss_name(loss),
              (Fp - Fstar) / Fp, res.gap);
        /* the step rule: still the thesis' rule, and the gap is filled in */
        km_cd_result st = solve_stop(P, loss, C, eps, bias, KM_STOP_STEP, 1e-3, 1, 100000, w2, c);
        Fp = primal(loss, X, P->y, P->l, dim, C, eps, w2);
        ww = conj = 0;
        for (int j = 0; j < dim; j++)
            ww += w2[j] * w2[j];
        for (int64_t i = 0; i < P->l; i++)
            conj += conj_by_hand(loss, P->y[i], c[i], C, eps);
        gap = (Fp - (-ww / 2 - conj)) / Fp;
        CHECK(st.converged && st.max_h < 1e-3 && st.delta == 1e-3 &&
                  fabs(gap - st.gap) <= 1e-10,
              "%s: step rule stops at max|h| %.3g < 1e-3 and reports its gap %.3g (by hand "
              "%.3g)", km_loss_name(loss), st.max_h, st.gap, gap);
        free(X); free(w); free(w2); free(c);
        km_problem_free(P);
    }
}

/* Shrinking under the gap rule: the same optimum as without it (tight delta). */
static void test_gap_shrinking(void)
{
    const km_loss losses[] = {KM_LOSS_L1SVM, KM_LOSS_RLA, KM_LOSS_SVR};
    for (int t = 0; t < 3; t++) {
        km_problem *P = random_problem(300, 20, 0.3, t == 0, 400 + (uint64_t)t);
        double F[2], *w = calloc(21, sizeof *w), *Cv = malloc(300 * sizeof *Cv);
        for (int i = 0; i < 300; i++)
            Cv[i] = 1.2;
        km_linear_data d = {P, NULL, 300, -1};
        int ok = 1;
        for (int s = 0; s < 2; s++) {
            km_cd_result r = solve_stop(P, losses[t], 1.2, 0.1, -1, KM_STOP_GAP, 1e-12, s,
                                        1000000, w, NULL);
            ok &= r.converged && r.gap <= 1e-12;
            F[s] = km_linear_objective(&d, P->y, Cv, losses[t], 0.1, w);
        }
        CHECK(ok && fabs(F[0] - F[1]) <= 1e-10 * F[0], "%s, gap rule: shrinking does not change "
              "the optimum (%.15g vs %.15g)", km_loss_name(losses[t]), F[1], F[0]);
        free(w); free(Cv);
        km_problem_free(P);
    }
}

/* Scale-free: features x 1000 with C / 1000^2 is the same problem (w / 1000, F / 1000^2);
 * at the defaults (gap and cap) both converge, in the same macro-iterations, at the same
 * relative gap (to 1e-9: the subspace step ends some far below the default, where the
 * gap is rounding), with the same decision values. (Features x 1000 at the same C is another
 * problem, effectively C x 10^6: dual CD's slow convergence there is not a stopping rule's.) */
static void test_gap_unscaled(void)
{
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        km_problem *P = random_problem(200, 10, 0.6, km_loss_is_classification(loss),
                                       500 + (uint64_t)loss);
        double *w = calloc(12, sizeof *w), *w2 = calloc(12, sizeof *w2);
        km_cd_result r = solve_stop(P, loss, 1, 0.1, 1, KM_STOP_GAP, 0, 1,
                                    km_cd_param_default().max_iter, w, NULL);
        for (int64_t k = 0; k < P->nnz; k++)
            P->value[k] *= 1000;
        km_cd_result u = solve_stop(P, loss, 1e-6, 0.1, 1000, KM_STOP_GAP, 0, 1,
                                    km_cd_param_default().max_iter, w2, NULL);
        double d = 0, zmax = 0;
        for (int64_t i = 0; i < P->l; i++) {
            double z = km_linear_decision(P, i, w2, P->n, 1000);
            double z1 = 0;
            for (int64_t k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++)
                z1 += P->value[k] / 1000 * w[P->index[k]];
            z1 += w[P->n];
            d = fmax(d, fabs(z - z1));
            zmax = fmax(zmax, fabs(z1));
        }
        CHECK(r.converged && u.converged && r.iter == u.iter && u.gap <= KM_CD_DEFAULT_GAP &&
                  u.delta == KM_CD_DEFAULT_GAP && fabs(u.gap - r.gap) <= 1e-6 * r.gap + 1e-9 &&
                  d <= 1e-9 * zmax,
              "%s, features and bias x 1000, C / 10^6: the default converges as unscaled (%lld "
              "and %lld macro-iterations, gap %.3g and %.3g, decision values within %.2g)",
              km_loss_name(loss), (long long)u.iter, (long long)r.iter, u.gap, r.gap, d);
        free(w); free(w2);
        km_problem_free(P);
    }
}

/* rls at the default gap: decision values within 1e-3 of their range of the ridge solution
 * (X'X + I/C) w = X'y by LAPACK (the requirement for the default -e). */
static void test_rls_default_gap(void)
{
    for (int b = 0; b < 2; b++) {
        double bias = b ? 1 : -1, C = 3;
        km_problem *P = random_problem(200, 25, 0.4, 0, 600 + (uint64_t)b);
        int dim = 25 + b;
        double *X = dense(P, bias, dim);
        double *A = calloc((size_t)(dim * dim), sizeof *A), *rhs = calloc((size_t)dim, sizeof *rhs);
        for (int p = 0; p < dim; p++) {
            for (int q = 0; q < dim; q++)
                for (int64_t i = 0; i < P->l; i++)
                    A[p * dim + q] += X[i * dim + p] * X[i * dim + q];
            A[p * dim + p] += 1 / C;
            for (int64_t i = 0; i < P->l; i++)
                rhs[p] += X[i * dim + p] * P->y[i];
        }
        int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', dim, 1, A, dim, rhs, 1);
        double *w = calloc(27, sizeof *w);
        km_cd_param def = km_cd_param_default();
        km_cd_result r = solve_stop(P, KM_LOSS_RLS, C, 0, bias, KM_STOP_GAP, 0, 1,
                                    def.max_iter, w, NULL);
        double lo = INFINITY, hi = -INFINITY, diff = 0;
        for (int64_t i = 0; i < P->l; i++) {
            double z = 0, zr = 0;
            for (int j = 0; j < dim; j++) {
                z += X[i * dim + j] * (j == dim - 1 && b ? w[25] : w[j]);
                zr += X[i * dim + j] * rhs[j];
            }
            lo = fmin(lo, zr);
            hi = fmax(hi, zr);
            diff = fmax(diff, fabs(z - zr));
        }
        CHECK(info == 0 && r.converged && diff <= 1e-3 * (hi - lo), "rls%s at the default gap "
              "(%g, %lld iterations): decision values within %.2g of the range of LAPACK's "
              "ridge solution (<= 1e-3)", b ? " with bias" : "", r.delta, (long long)r.iter,
              diff / (hi - lo));
        free(X); free(A); free(rhs); free(w);
        km_problem_free(P);
    }
}

/* The linear solver on a list of rows (cross-validation folds, one-versus-all) is the
 * solver on a problem made of those rows: bit for bit, every specialised loss and the
 * generic one, with and without bias, per-row C, empty rows included. */
static void test_row_subset(void)
{
    const km_loss losses[] = {KM_LOSS_L1SVM, KM_LOSS_L2SVM, KM_LOSS_SVR, KM_LOSS_RLS};
    for (int t = 0; t < 4; t++) {
        km_loss loss = losses[t];
        int cls = km_loss_is_classification(loss);
        km_problem *P = random_problem(200, 25, 0.15, cls, 300 + (uint64_t)t);
        int64_t m = 150, *rows = malloc(200 * sizeof *rows);
        km_rng r;
        km_rng_seed(&r, 7 + (uint64_t)t);
        for (int64_t i = 0; i < 200; i++)
            rows[i] = i;
        km_rng_shuffle(&r, rows, 200);
        km_problem *Q = calloc(1, sizeof *Q);   /* rows[0..m) copied, in that order */
        Q->l = m;
        Q->n = P->n;
        Q->row_ptr = calloc((size_t)m + 1, sizeof *Q->row_ptr);
        Q->index = malloc((size_t)P->nnz * sizeof *Q->index);
        Q->value = malloc((size_t)P->nnz * sizeof *Q->value);
        Q->y = malloc((size_t)m * sizeof *Q->y);
        double *Cs = malloc((size_t)m * sizeof *Cs);
        int64_t k = 0, empty = 0;
        for (int64_t i = 0; i < m; i++) {
            int64_t ri = rows[i];
            empty += P->row_ptr[ri + 1] == P->row_ptr[ri];
            for (int64_t q = P->row_ptr[ri]; q < P->row_ptr[ri + 1]; q++, k++) {
                Q->index[k] = P->index[q];
                Q->value[k] = P->value[q];
            }
            Q->row_ptr[i + 1] = k;
            Q->y[i] = P->y[ri];
            Cs[i] = 0.5 + (double)(i % 3);
        }
        Q->nnz = k;
        for (int b = 0; b < 2; b++) {
            double bias = b ? 1 : -1;
            km_cd_param par = km_cd_param_default();
            par.loss = loss;
            par.delta = 1e-6;
            km_linear_data ds = {P, rows, m, bias}, dq = {Q, NULL, m, bias};
            double *w1 = malloc(26 * sizeof *w1), *w2 = malloc(26 * sizeof *w2);
            double *c1 = malloc((size_t)m * sizeof *c1), *c2 = malloc((size_t)m * sizeof *c2);
            km_cd_result r1, r2;
            km_error err;
            int rc1 = km_cd_linear(&ds, Q->y, Cs, &par, w1, c1, &r1, &err);
            int rc2 = km_cd_linear(&dq, Q->y, Cs, &par, w2, c2, &r2, &err);
            CHECK(rc1 == KM_OK && rc2 == KM_OK && r1.converged && r1.iter == r2.iter &&
                  memcmp(w1, w2, 26 * sizeof *w1) == 0 && memcmp(c1, c2, (size_t)m * sizeof *c1) == 0,
                  "%s, bias %g: rows of P give the bits of their copy (%lld sweeps, %lld "
                  "empty rows)", km_loss_name(loss), bias, (long long)r1.iter,
                  (long long)empty);
            free(w1); free(w2); free(c1); free(c2);
        }
        free(Cs);
        free(rows);
        km_problem_free(Q);
        km_problem_free(P);
    }
}

int main(void)
{
    test_resolvents();
    test_conjugates();
    test_optimality();
    test_rls_closed_form();
    test_against_fista();
    test_rules_and_shrinking();
    test_bias_is_a_feature();
    test_one_vs_all_and_weights();
    test_gap_certificate();
    test_gap_shrinking();
    test_gap_unscaled();
    test_rls_default_gap();
    test_row_subset();
    TEST_EXIT();
}
