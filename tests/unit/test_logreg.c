/* test_logreg.c - the logistic loss (-s logreg): its resolvent against a bisection, the gap
 * certificate computed here, the optimum against Newton's method on the primal written
 * here, kernel (-t linear) against linear, and the method through the table. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "kmtk.h"
#include "linear.h"
#include "test.h"
#include "testutil.h"

/* g'(a) of the 1-D dual written out: (C a + y v)/alpha + log a - log(1 - a), y = +-1. */
static double dgrad(double a, double y, double v, double alpha, double C)
{
    return (C * a + y * v) / alpha + log(a) - log1p(-a);
}

/* The root a of g' by bisection on (0, 1) in a and, when it is near 1, in 1 - a (both in
 * logs, 400 halvings: the bits of a and of 1 - a). Returns y C a. */
static double resolvent_bisect(double y, double v, double alpha, double C)
{
    /* the side: g'(1/2) >= 0 puts the root in (0, 1/2] */
    int upper = dgrad(0.5, y, v, alpha, C) < 0;
    double lo = -745, hi = log(0.5);   /* log t, t = a or 1 - a */
    for (int it = 0; it < 400; it++) {
        double mid = (lo + hi) / 2, t = exp(mid);
        double g = upper ? -dgrad(1 - t, y, v, alpha, C) : dgrad(t, y, v, alpha, C);
        /* upper: t = 1 - a, -g'(1 - t) increases with t */
        if (g > 0)
            hi = mid;
        else
            lo = mid;
    }
    double t = exp((lo + hi) / 2);
    return y * C * (upper ? 1 - t : t);
}

static void test_resolvent(void)
{
    km_rng r;
    km_rng_seed(&r, 7);
    double worst = 0, worst_warm = 0, worst_fixed = 0;
    int inside = 1;
    for (int k = 0; k < 20000; k++) {
        double y = unif(&r) < 0.5 ? -1 : 1;
        /* wide scales: alpha = 1/k_ii from 1e-4 to 1e4, C from 1e-3 to 1e3, v up to 1e3 */
        double alpha = pow(10, 8 * unif(&r) - 4), C = pow(10, 6 * unif(&r) - 3);
        double v = (2 * unif(&r) - 1) * pow(10, 6 * unif(&r) - 3);
        double stuck = -1;
        double c = km_loss_resolvent(KM_LOSS_LOGISTIC, y, v, alpha, C, 0, &stuck);
        double ref = resolvent_bisect(y, v, alpha, C);
        double a = y * c / C, aref = y * ref / C;
        /* relative to the nearer end of (0, 1) (where the root's bits are), past the
         * rounding of a = 1 - t near 1 */
        double e = (fabs(a - aref) - 4e-16) / fmin(aref, 1 - aref);
        worst = fmax(worst, e);
        inside &= a >= 0 && a <= 1 && stuck == 0 && isfinite(c);
        /* warm starts anywhere in (0, 1): the same root */
        double w = unif(&r);
        double cw = km_loss_resolvent_warm(KM_LOSS_LOGISTIC, y, v, alpha, C, 0, y * C * w,
                                           &stuck);
        double aw = y * cw / C;
        double ew = (fabs(aw - aref) - 4e-16) / fmin(aref, 1 - aref);
        worst_warm = fmax(worst_warm, ew);
        /* started at the root (coordinate descent near its fixed point): stays there */
        double cr = km_loss_resolvent_warm(KM_LOSS_LOGISTIC, y, v, alpha, C, 0, ref, &stuck);
        worst_fixed = fmax(worst_fixed, (fabs(y * cr / C - aref) - 4e-16) / fmin(aref, 1 - aref));
    }
    CHECK(inside, "logistic resolvent: y c/C in [0, 1], finite, never stuck (no flat piece)");
    CHECK(worst < 1e-9, "logistic resolvent = bisection on g'(a) = 0 (20,000 points, alpha "
          "1e-4..1e4, C 1e-3..1e3): worst relative error %.2g", worst);
    CHECK(worst_warm < 1e-6, "warm-started from anywhere (coordinate descent's tolerance "
          "1e-3: error ~ r^2/2 for a last step r): within 1e-6 of the root (worst %.2g)",
          worst_warm);
    CHECK(worst_fixed < 1e-12, "warm-started at the root: stays there (worst %.2g): the "
          "fixed point of coordinate descent is exact", worst_fixed);
    /* extremes: roots below 1e-300 (a rounds to 0 or 1), no NaN */
    double stuck;
    double c1 = km_loss_resolvent(KM_LOSS_LOGISTIC, 1, 1e6, 1e-3, 1, 0, &stuck);
    double c2 = km_loss_resolvent(KM_LOSS_LOGISTIC, 1, -1e6, 1e-3, 1, 0, &stuck);
    double c3 = km_loss_resolvent(KM_LOSS_LOGISTIC, -1, 1e6, 1e-3, 1, 0, &stuck);
    CHECK(c1 >= 0 && c1 < 1e-300 && c2 <= 1 && c2 > 1 - 1e-12 && c3 <= -1 + 1e-12 && c3 >= -1,
          "extreme arguments: a -> 0 and a -> 1 without NaN (%g %g %g)", c1, c2, c3);
    CHECK(isfinite(km_loss_conj(KM_LOSS_LOGISTIC, 1, c1, 1, 0)) &&
          isfinite(km_loss_conj(KM_LOSS_LOGISTIC, 1, 1, 1, 0)) &&
          km_loss_conj(KM_LOSS_LOGISTIC, 1, 1, 1, 0) == 0 &&
          isinf(km_loss_conj(KM_LOSS_LOGISTIC, 1, -0.1, 1, 0)) &&
          isinf(km_loss_conj(KM_LOSS_LOGISTIC, -1, 0.1, 1, 0)),
          "logistic conjugate: 0 log 0 = 0 at the ends of [0, C], +inf outside");
    CHECK_CLOSE(km_loss_dual_argmin(KM_LOSS_LOGISTIC, -1, 3, 0), -1.5, 1e-15,
                "an empty row's coefficient minimizes the conjugate: y C/2");
}

/* A dense problem: l rows of dim features (the last one a constant 1), labels from a noisy
 * logistic model. */
static km_problem *dense_problem(int64_t l, int dim, uint64_t seed, double *X)
{
    km_rng r;
    km_rng_seed(&r, seed);
    km_problem *P = calloc(1, sizeof *P);
    P->l = l;
    P->n = dim;
    P->nnz = l * dim;
    P->row_ptr = malloc((size_t)(l + 1) * sizeof *P->row_ptr);
    P->index = malloc((size_t)(l * dim) * sizeof *P->index);
    P->value = malloc((size_t)(l * dim) * sizeof *P->value);
    P->y = malloc((size_t)l * sizeof *P->y);
    for (int64_t i = 0; i <= l; i++)
        P->row_ptr[i] = i * dim;
    for (int64_t i = 0; i < l; i++) {
        double z = 0;
        for (int j = 0; j < dim; j++) {
            double x = j == dim - 1 ? 1 : 2 * unif(&r) - 1;
            X[i * dim + j] = x;
            P->index[i * dim + j] = j;
            P->value[i * dim + j] = x;
            z += x * (j % 2 ? 1.5 : -2.0);
        }
        P->y[i] = unif(&r) < 1 / (1 + exp(-z)) ? 1 : -1;
    }
    return P;
}

/* Newton's method on the primal F(w) = ||w||^2/2 + C sum_i log(1 + exp(-y_i w'x_i)) with a
 * backtracking line search (the Hessian I + C X' D X by LAPACK dposv); returns F. */
static double primal_lr(const double *X, const double *y, int64_t l, int dim, double C,
                        const double *w)
{
    double F = 0;
    for (int j = 0; j < dim; j++)
        F += w[j] * w[j] / 2;
    for (int64_t i = 0; i < l; i++) {
        double z = 0;
        for (int j = 0; j < dim; j++)
            z += X[i * dim + j] * w[j];
        double m = -y[i] * z;
        F += C * (m > 0 ? m + log(1 + exp(-m)) : log(1 + exp(m)));
    }
    return F;
}

static double newton_lr(const double *X, const double *y, int64_t l, int dim, double C,
                        double *w)
{
    double *H = malloc((size_t)(dim * dim) * sizeof *H), *g = malloc((size_t)dim * sizeof *g);
    double *wn = malloc((size_t)dim * sizeof *wn);
    memset(w, 0, (size_t)dim * sizeof *w);
    for (int it = 0; it < 100; it++) {
        for (int j = 0; j < dim; j++) {
            g[j] = w[j];
            for (int k = 0; k < dim; k++)
                H[j * dim + k] = j == k;
        }
        for (int64_t i = 0; i < l; i++) {
            const double *x = X + i * dim;
            double z = 0;
            for (int j = 0; j < dim; j++)
                z += x[j] * w[j];
            double s = 1 / (1 + exp(y[i] * z));   /* sigma(-y z) */
            double d = s * (1 - s);
            for (int j = 0; j < dim; j++) {
                g[j] -= C * y[i] * s * x[j];
                for (int k = 0; k < dim; k++)
                    H[j * dim + k] += C * d * x[j] * x[k];
            }
        }
        double gn = 0;
        for (int j = 0; j < dim; j++)
            gn += g[j] * g[j];
        if (sqrt(gn) < 1e-12)
            break;
        LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', dim, 1, H, dim, g, 1);   /* g = H^{-1} grad */
        double F0 = primal_lr(X, y, l, dim, C, w), step = 1;
        for (; step > 1e-12; step /= 2) {
            for (int j = 0; j < dim; j++)
                wn[j] = w[j] - step * g[j];
            if (primal_lr(X, y, l, dim, C, wn) <= F0)
                break;
        }
        memcpy(w, wn, (size_t)dim * sizeof *w);
    }
    double F = primal_lr(X, y, l, dim, C, w);
    free(H);
    free(g);
    free(wn);
    return F;
}

/* The linear solver's optimum against Newton's, and the gap certificate by hand. */
static void test_optimum_and_gap(void)
{
    const int64_t l = 300;
    const int dim = 6;
    double *X = malloc((size_t)(l * dim) * sizeof *X);
    km_problem *P = dense_problem(l, dim, 11, X);
    double Cs[] = {0.1, 1, 30};
    for (int t = 0; t < 3; t++) {
        double C = Cs[t];
        double wn[dim], Fn = newton_lr(X, P->y, l, dim, C, wn);
        km_cd_param par = km_cd_param_default();
        par.loss = KM_LOSS_LOGISTIC;
        par.delta = 1e-12;
        par.rule = KM_RULE_RANDOM;
        double *Cv = malloc((size_t)l * sizeof *Cv), *c = malloc((size_t)l * sizeof *c);
        for (int64_t i = 0; i < l; i++)
            Cv[i] = C;
        km_linear_data d = {P, NULL, l, -1};
        double w[dim + 1];
        km_cd_result res;
        km_error err;
        int rc = km_cd_linear(&d, P->y, Cv, &par, w, c, &res, &err);
        CHECK(rc == KM_OK && res.converged, "C = %g: linear CD converges (%lld sweeps)", C,
              (long long)res.iter);
        double F = primal_lr(X, P->y, l, dim, C, w), dw = 0;
        for (int j = 0; j < dim; j++)
            dw = fmax(dw, fabs(w[j] - wn[j]));
        CHECK_CLOSE(F, Fn, 1e-10, "C = %g: the objective equals Newton's on the primal "
                    "(%.15g vs %.15g)", C, F, Fn);
        CHECK(dw < 1e-5, "C = %g: w equals Newton's (max diff %.2g)", C, dw);
        /* the certificate by hand: D(c) = -||X'c||^2/2 - sum_i C (a log a + (1-a) log(1-a)) */
        km_cd_param p3 = par;
        p3.delta = 1e-3;
        rc = km_cd_linear(&d, P->y, Cv, &p3, w, c, &res, &err);
        double v[dim], Dv = 0, Pv = primal_lr(X, P->y, l, dim, C, w), ok = rc == KM_OK;
        memset(v, 0, sizeof v);
        for (int64_t i = 0; i < l; i++) {
            double a = P->y[i] * c[i] / C;
            ok = ok && a > 0 && a < 1;
            Dv -= C * (a * log(a) + (1 - a) * log(1 - a));
            for (int j = 0; j < dim; j++)
                v[j] += c[i] * X[i * dim + j];
        }
        for (int j = 0; j < dim; j++)
            Dv -= v[j] * v[j] / 2;
        CHECK(ok, "C = %g: every dual variable strictly inside (0, C)", C);
        CHECK(fabs((Pv - Dv) / Pv - res.gap) <= 1e-9 && res.gap <= 1e-3 && Pv - Dv >= 0,
              "C = %g: reported gap %.6g = (P - D)/P by hand %.6g <= 1e-3", C, res.gap,
              (Pv - Dv) / Pv);
        CHECK(Pv - Fn <= res.gap * Pv + 1e-12, "C = %g: the gap bounds the suboptimality "
              "(%.3g <= %.3g)", C, (Pv - Fn) / Pv, res.gap);
        free(Cv);
        free(c);
    }
    km_problem_free(P);
    free(X);
}

/* Through the method table: -t linear (kernel CD, and the greedy solver) against the linear
 * solver, multi-class one-versus-all, and the probabilities of the binary model. */
static km_model *train(const km_problem *P, const char *kernel, const char *rule,
                       km_report *rep)
{
    km_params *p = km_params_new();
    km_error err;
    km_params_set(p, "C", "2", &err);
    km_params_set(p, "tolerance", "1e-11", &err);
    if (kernel)
        km_params_set(p, "kernel", kernel, &err);
    if (rule)
        km_params_set(p, "rule", rule, &err);
    km_model *m = NULL;
    int rc = km_method_train(km_method_find("logreg"), P, p, &m, rep, &err);
    if (rc)
        printf("# %s\n", err.msg);
    km_params_free(p);
    return rc ? NULL : m;
}

static void test_kernel_vs_linear(void)
{
    for (int multi = 0; multi < 2; multi++) {
        km_problem *P = random_problem(150, 8, 0.6, 1, 5 + multi);
        if (multi)   /* three classes */
            for (int64_t i = 0; i < P->l; i++)
                P->y[i] = i % 3 == 0 ? 7 : P->y[i];
        km_report rl, rk, rg;
        km_model *ml = train(P, NULL, NULL, &rl), *mk = train(P, "linear", "random", &rk);
        km_model *mg = train(P, "linear", "greedy", &rg);
        CHECK(ml && mk && mg, "%s: logreg trains linear, kernel CD and greedy",
              multi ? "3 classes" : "2 classes");
        if (!ml || !mk || !mg)
            continue;
        int nw = ml->nr_w;
        double *dl = malloc((size_t)(P->l * nw) * sizeof *dl);
        double *dk = malloc((size_t)(P->l * nw) * sizeof *dk);
        double *dg = malloc((size_t)(P->l * nw) * sizeof *dg);
        km_error err;
        km_model_decision_rows(ml, P, NULL, P->l, dl, 1, &err);
        km_model_decision_rows(mk, P, NULL, P->l, dk, 1, &err);
        km_model_decision_rows(mg, P, NULL, P->l, dg, 1, &err);
        double dmax = 0, gmax = 0, xmax = 0;
        for (int64_t i = 0; i < P->l * nw; i++) {
            dmax = fmax(dmax, fabs(dl[i] - dk[i]));
            gmax = fmax(gmax, fabs(dl[i] - dg[i]));
        }
        for (int64_t i = 0; i < P->l; i++) {
            double q = 0;
            for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++)
                q += P->value[t] * P->value[t];
            xmax = fmax(xmax, sqrt(q));
        }
        /* two solutions at relative gap 1e-11 of objective F: ||w - w*||^2 <= 2 gap F (F is
         * 1-strongly convex), so |x'(w1 - w2)| <= ||x|| 2 sqrt(2e-11 F) */
        double bound = xmax * 2 * sqrt(2e-11 * rl.objective);
        CHECK(nw == (multi ? 3 : 1) && mk->nr_w == nw,
              "%s: one-versus-all gives %d decision values", multi ? "3 classes" : "2 classes",
              nw);
        CHECK(dmax < 1e-9, "%s: kernel -t linear (CD) = linear solver's decision values (%.2g)",
              multi ? "3 classes" : "2 classes", dmax);
        CHECK(gmax <= bound, "%s: kernel -t linear (greedy) = linear solver's decision values "
              "(%.2g <= %.2g, from the gaps)", multi ? "3 classes" : "2 classes", gmax, bound);
        CHECK_CLOSE(rg.objective, rl.objective, 1e-10, "%s: greedy kernel objective = linear's",
                    multi ? "3 classes" : "2 classes");
        CHECK_CLOSE(rk.objective, rl.objective, 1e-9, "%s: kernel objective = linear's",
                    multi ? "3 classes" : "2 classes");
        /* probabilities: binary sigmoid(f), one-versus-all sigmoids normalised */
        double *pr = malloc((size_t)(P->l * ml->nr_class) * sizeof *pr);
        int rc = km_predict_proba(ml, P, pr, &err);
        double bad = 0;
        for (int64_t i = 0; rc == KM_OK && i < P->l; i++) {
            double s = 0, q[3];
            for (int k = 0; k < ml->nr_class; k++)
                s += pr[i * ml->nr_class + k];
            bad = fmax(bad, fabs(s - 1));
            if (!multi) {
                q[1] = 1 / (1 + exp(-dl[i]));
                q[0] = 1 - q[1];
            } else {
                double t = 0;
                for (int k = 0; k < 3; k++)
                    t += q[k] = 1 / (1 + exp(-dl[i * 3 + k]));
                for (int k = 0; k < 3; k++)
                    q[k] /= t;
            }
            for (int k = 0; k < ml->nr_class; k++)
                bad = fmax(bad, fabs(pr[i * ml->nr_class + k] - q[k]));
        }
        CHECK(rc == KM_OK && km_model_has_probability(ml) && bad < 1e-12,
              "%s: km_predict_proba = %s by hand (max diff %.2g)",
              multi ? "3 classes" : "2 classes",
              multi ? "the normalised one-versus-all sigmoids" : "sigmoid(f)", bad);
        free(pr);
        free(dl);
        free(dk);
        free(dg);
        km_model_free(ml);
        km_model_free(mk);
        km_model_free(mg);
        km_report_free(&rl);
        km_report_free(&rk);
        km_report_free(&rg);
        km_problem_free(P);
    }
}

int main(void)
{
    test_resolvent();
    test_optimum_and_gap();
    test_kernel_vs_linear();
    TEST_EXIT();
}
