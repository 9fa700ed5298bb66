/* test_kernel_solver.c - kernel coordinate descent (Algorithm 1) and the fixed-point
 * iteration (2.10) against direct solutions: RLS by LAPACK Cholesky, optimality (2.8),
 * CD = fixed point, kernel solver = linear solver on the linear kernel, any cache size. */
#include <lapacke.h>
#include <string.h>
#include <unistd.h>

#include "cd.h"
#include "kernel.h"
#include "linear.h"
#include "model.h"
#include "test.h"
#include "testutil.h"

/* Solves with CD (fixedpoint = 0) or the fixed point on all rows of P, constant C. */
static solved solve(const km_problem *P, const km_kernel *k, km_loss loss, double C, double eps,
                    int fixedpoint, km_alpha_rule rule, double delta, size_t cache)
{
    solved s = {0};
    int64_t l = P->l;
    km_error *err = &s.err;
    km_kdata *X = km_kdata_new(P, NULL, l, err);
    km_kmatrix *K = X ? km_kmatrix_new(k, X, cache, 1, err) : NULL;
    double *Cv = const_C(l, C);
    km_cd_param par = km_cd_param_default();
    par.loss = loss;
    par.eps = eps;
    par.delta = delta;
    par.stop = KM_STOP_STEP;   /* tight deltas on the step scale; the gap rule: test_gap_* */
    par.max_iter = 200000;
    s.c = malloc((size_t)l * sizeof *s.c);
    s.z = malloc((size_t)l * sizeof *s.z);
    s.rc = !K ? -1 : fixedpoint ? km_fixedpoint(K, P->y, Cv, &par, rule, 2, s.c, s.z, &s.res, err)
                                : km_cd_kernel(K, P->y, Cv, &par, s.c, s.z, &s.res, err);
    CHECK(s.rc == KM_OK && s.res.converged, "%s %s (%s kernel) converges in %lld iterations",
          km_loss_name(loss), fixedpoint ? "fixed point" : "kernel CD", km_kernel_name(k->type),
          (long long)s.res.iter);
    for (int64_t i = 0; i < l; i++)
        s.F += C * km_loss_value(loss, P->y[i], s.z[i], eps) + s.c[i] * s.z[i] / 2;
    km_kmatrix_free(K);
    km_kdata_free(X);
    free(Cv);
    return s;
}

/* RLS: c = (K + I/C)^-1 y by LAPACK dposv, for RBF, polynomial and spline kernels. */
static void test_rls_closed_form(void)
{
    km_kernel ks[3] = {{KM_KERNEL_RBF, 0.5, 0, 3, 0}, {KM_KERNEL_POLY, 0.3, 1, 2, 0},
                       {KM_KERNEL_SPLINE, 0, 0, 1, 0}};
    for (int t = 0; t < 3; t++) {
        km_problem *P = random_problem(60, t == 2 ? 1 : 5, t == 2 ? 1.0 : 0.6, 0, 40 + t);
        double C = 2;
        int64_t l = P->l;
        double *A = dense_K(&ks[t], P), *c = malloc((size_t)l * sizeof *c);
        for (int64_t i = 0; i < l; i++) {
            A[i * l + i] += 1 / C;
            c[i] = P->y[i];
        }
        int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', (int)l, 1, A, (int)l, c, 1);
        for (int fp = 0; fp < 2; fp++) {
            solved s = solve(P, &ks[t], KM_LOSS_RLS, C, 0, fp, KM_ALPHA_NORM2, 1e-12, 1 << 20);
            double d = 0;
            for (int64_t i = 0; i < l; i++)
                d = fmax(d, fabs(s.c[i] - c[i]));
            CHECK(info == 0 && d < 1e-8, "rls %s, %s kernel: c = (K + I/C)^-1 y by LAPACK "
                  "(max diff %.2g)", fp ? "fixed point" : "CD", km_kernel_name(ks[t].type), d);
            release(&s);
        }
        free(A);
        free(c);
        km_problem_free(P);
    }
}

/* Every loss: (2.8) at the returned c, and CD and fixed point agree on F within 1e-6. */
static void test_optimality_and_agreement(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.4, 0, 3, 0};
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        km_problem *P = random_problem(70, 6, 0.7, km_loss_is_classification(loss),
                                       60 + (uint64_t)loss);
        double C = 1.5, eps = 0.1;
        solved cd = solve(P, &k, loss, C, eps, 0, KM_ALPHA_TRACE, 1e-11, 1 << 20);
        int bad = 0;
        for (int64_t i = 0; i < P->l; i++)
            bad += !kkt_ok(loss, P->y[i], cd.z[i], cd.c[i], C, eps, 1e-6);
        CHECK(bad == 0, "%s kernel CD: optimality conditions (2.8) hold (%d violations)",
              km_loss_name(loss), bad);
        solved fp = solve(P, &k, loss, C, eps, 1, KM_ALPHA_NORM2, 1e-12, 1 << 20);
        CHECK(fabs(cd.F - fp.F) <= 1e-6 * fabs(cd.F), "%s: CD objective %.12g = fixed-point "
              "objective %.12g within 1e-6", km_loss_name(loss), cd.F, fp.F);
        release(&cd);
        release(&fp);
        km_problem_free(P);
    }
}

/* alpha = 1/tr(K) reaches the same point as 1/||K||_2. */
static void test_alpha_rules(void)
{
    km_kernel k = {KM_KERNEL_RBF, 1, 0, 3, 0};
    km_problem *P = random_problem(40, 4, 0.8, 1, 77);
    solved a = solve(P, &k, KM_LOSS_L2SVM, 1, 0, 1, KM_ALPHA_TRACE, 1e-12, 1 << 20);
    solved b = solve(P, &k, KM_LOSS_L2SVM, 1, 0, 1, KM_ALPHA_NORM2, 1e-12, 1 << 20);
    CHECK(fabs(a.F - b.F) <= 1e-8 * a.F, "fixed point: 1/tr(K) and 1/||K||_2 reach the same "
          "objective (%.12g, %.12g; %lld vs %lld iterations)", a.F, b.F, (long long)a.res.iter,
          (long long)b.res.iter);
    release(&a);
    release(&b);
    km_problem_free(P);
}

/* The linear kernel through the kernel solver equals the linear solver. */
static void test_linear_kernel_equals_linear_solver(void)
{
    km_problem *P = random_problem(80, 10, 0.5, 1, 91);
    km_kernel k = {KM_KERNEL_LINEAR, 0, 0, 3, 0};
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        double C = 0.8, eps = 0.1;
        solved s = solve(P, &k, loss, C, eps, 0, KM_ALPHA_TRACE, 1e-11, 1 << 20);
        double *w = calloc(11, sizeof *w), *Cv = malloc(80 * sizeof *Cv);
        for (int i = 0; i < 80; i++)
            Cv[i] = C;
        km_cd_param par = km_cd_param_default();
        par.loss = loss;
        par.eps = eps;
        par.delta = 1e-11;
        par.max_iter = 200000;
        km_linear_data d = {P, NULL, 80, -1};
        km_cd_result res;
        km_error err;
        km_cd_linear(&d, P->y, Cv, &par, w, NULL, &res, &err);
        double F = km_linear_objective(&d, P->y, Cv, loss, eps, w);
        CHECK(fabs(F - s.F) <= 1e-7 * fabs(F), "%s: kernel solver with the linear kernel "
              "(%.12g) = linear solver (%.12g)", km_loss_name(loss), s.F, F);
        free(w);
        free(Cv);
        release(&s);
    }
    km_problem_free(P);
}

/* The cache never changes a result: the same c bit for bit with 2 rows or all of K. */
static void test_cache_sizes(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.3, 0, 3, 0};
    km_problem *P = random_problem(150, 8, 0.5, 1, 5);
    size_t sizes[3] = {2 * 150 * 8, 37 * 150 * 8, 150 * 150 * 8 + 4096};
    solved s[3];
    for (int t = 0; t < 3; t++)
        s[t] = solve(P, &k, KM_LOSS_L1SVM, 1, 0, 0, KM_ALPHA_TRACE, 1e-6, sizes[t]);
    CHECK(memcmp(s[0].c, s[2].c, 150 * sizeof(double)) == 0 &&
          memcmp(s[1].c, s[2].c, 150 * sizeof(double)) == 0 &&
          s[0].res.iter == s[2].res.iter, "kernel CD: identical c with a 2-row, a 37-row and a "
          "full cache");
    for (int t = 0; t < 3; t++)
        release(&s[t]);
    km_problem_free(P);
}

/* Stopped by the iteration cap at any point (rows restricted to the active set or not), CD
 * returns z = K c and the same c for a 2-row and a full cache. */
static void test_cap_z(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.3, 0, 3, 0};
    km_problem *P = random_problem(150, 8, 0.5, 1, 6);
    int64_t l = P->l;
    double *A = dense_K(&k, P), *Cv = malloc((size_t)l * sizeof *Cv), worst = 0;
    for (int64_t i = 0; i < l; i++)
        Cv[i] = 1;
    int same = 1, ok = 1;
    for (int64_t cap = 1; cap <= 12; cap++) {
        double *c[2], *z[2];
        for (int t = 0; t < 2; t++) {
            km_error err;
            km_kdata *X = km_kdata_new(P, NULL, l, &err);
            km_kmatrix *K = km_kmatrix_new(&k, X, t ? (size_t)(l * l * 8 + 4096) : 2 * 150 * 8,
                                           1, &err);
            km_cd_param par = km_cd_param_default();
            par.loss = KM_LOSS_L1SVM;
            par.delta = 1e-9;
            par.max_iter = cap;
            km_cd_result res;
            c[t] = malloc((size_t)l * sizeof *c[t]);
            z[t] = malloc((size_t)l * sizeof *z[t]);
            ok &= km_cd_kernel(K, P->y, Cv, &par, c[t], z[t], &res, &err) == KM_OK &&
                  res.iter == cap && km_kmatrix_ncols(K) == l;
            for (int64_t i = 0; i < l; i++) {
                double s = 0;
                for (int64_t j = 0; j < l; j++)
                    s += A[i * l + j] * c[t][j];
                worst = fmax(worst, fabs(s - z[t][i]));
            }
            km_kmatrix_free(K);
            km_kdata_free(X);
        }
        same &= memcmp(c[0], c[1], (size_t)l * sizeof *c[0]) == 0 &&
                memcmp(z[0], z[1], (size_t)l * sizeof *z[0]) == 0;
        for (int t = 0; t < 2; t++) {
            free(c[t]);
            free(z[t]);
        }
    }
    CHECK(ok && same && worst < 1e-12, "kernel CD stopped after 1..12 macro-iterations: z = K c "
          "(max diff %.2g), whole rows again, identical c and z with a 2-row and a full cache",
          worst);
    free(A);
    free(Cv);
    km_problem_free(P);
}

/* The index rules with shrinking on a small cache (rows restricted to the active set, check
 * sweeps in two parts, forward and backward): optimality (2.8) and z = K c. */
static void test_rules(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.3, 0, 3, 0};
    km_problem *P = random_problem(200, 8, 0.5, 1, 8);
    int64_t l = P->l;
    double *A = dense_K(&k, P), *Cv = malloc((size_t)l * sizeof *Cv);
    double *c = malloc((size_t)l * sizeof *c), *z = malloc((size_t)l * sizeof *z);
    for (int64_t i = 0; i < l; i++)
        Cv[i] = 2;
    const km_loss losses[3] = {KM_LOSS_L1SVM, KM_LOSS_RLA, KM_LOSS_SVR};   /* flat pieces */
    for (int rule = 0; rule < 3; rule++)
        for (int q = 0; q < 3; q++) {
            km_loss loss = losses[q];
            km_error err;
            km_kdata *X = km_kdata_new(P, NULL, l, &err);
            km_kmatrix *K = km_kmatrix_new(&k, X, 5 * 200 * 8, 1, &err);
            km_cd_param par = km_cd_param_default();
            par.loss = loss;
            par.rule = rule;
            par.delta = 1e-8;
            par.stop = KM_STOP_STEP;
            par.max_iter = 100000;
            km_cd_result res;
            int rc = km_cd_kernel(K, P->y, Cv, &par, c, z, &res, &err);
            int bad = 0;
            double worst = 0;
            for (int64_t i = 0; i < l; i++) {
                double s = 0;
                for (int64_t j = 0; j < l; j++)
                    s += A[i * l + j] * c[j];
                worst = fmax(worst, fabs(s - z[i]));
                bad += !kkt_ok(loss, P->y[i], z[i], c[i], 2, par.eps, 1e-6);
            }
            CHECK(rc == KM_OK && res.converged && bad == 0 && worst < 1e-11, "%s rule, %s, "
                  "5-row cache: converges (%lld iterations), (2.8) holds, z = K c (%.2g)",
                  km_rule_name(rule), km_loss_name(loss), (long long)res.iter, worst);
            km_kmatrix_free(K);
            km_kdata_free(X);
        }
    free(A);
    free(Cv);
    free(c);
    free(z);
    km_problem_free(P);
}

/* train + decision on rows: a kernel model predicts what c and K say (z = K c). */
static void test_model_decision(void)
{
    km_problem *P = random_problem(90, 6, 0.6, 1, 12);
    km_train_param par = {0};
    par.cd = km_cd_param_default();
    par.cd.loss = KM_LOSS_L1SVM;
    par.cd.delta = 1e-9;
    par.cd.stop = KM_STOP_STEP;
    par.cd.rule = KM_RULE_RANDOM;   /* the solver solve() runs, so that z is its z */
    par.C = 1;
    par.bias = -1;
    par.use_kernel = 1;
    par.kernel = (km_kernel){KM_KERNEL_RBF, 0.5, 0, 3, 0};
    par.cache_bytes = 1 << 20;
    par.threads = 1;
    km_model *m = NULL;
    km_error err;
    int rc = km_train(P, NULL, 0, &par, &m, NULL, &err);
    CHECK(rc == KM_OK && km_model_expansion(m) && km_model_expansion(m)->sv->l > 0 &&
          km_model_expansion(m)->sv->l < 90, "kernel model keeps "
          "only the support vectors (%lld of 90)", rc ? -1LL : (long long)km_model_expansion(m)->sv->l);
    solved s = solve(P, &par.kernel, KM_LOSS_L1SVM, 1, 0, 0, KM_ALPHA_TRACE, 1e-9, 1 << 20);
    double *dec = malloc(90 * sizeof *dec), d = 0;
    rc = km_model_decision_rows(m, P, NULL, 90, dec, 2, &err);
    for (int i = 0; i < 90; i++)
        d = fmax(d, fabs(dec[i] - s.z[i]));
    CHECK(rc == KM_OK && d < 1e-10, "decision values of the model equal z = K c (max diff "
          "%.2g)", d);
    char path[] = "/tmp/kmtk-kmodel-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    km_model *q = NULL;
    rc = km_model_write(m, path, &err) || km_model_read(path, &q, &err);
    double *dec2 = malloc(90 * sizeof *dec2);
    if (rc == KM_OK)
        rc = km_model_decision_rows(q, P, NULL, 90, dec2, 1, &err);
    CHECK(rc == KM_OK && memcmp(dec, dec2, 90 * sizeof *dec) == 0, "kernel model file "
          "round-trips: identical decision values");
    unlink(path);
    km_model_free(q);
    km_model_free(m);
    free(dec);
    free(dec2);
    release(&s);
    km_problem_free(P);
}

/* Kernel CD (cyclic rule, shrinking, a 6-row cache) or the fixed point under a stopping
 * rule; c and z get m entries. */
static km_cd_result solve_stop(const km_problem *P, const km_kernel *k, km_loss loss, double C,
                               double eps, int fixedpoint, km_stop stop, double delta,
                               int shrinking, double *c, double *z)
{
    int64_t l = P->l;
    km_error err;
    km_kdata *X = km_kdata_new(P, NULL, l, &err);
    km_kmatrix *K = X ? km_kmatrix_new(k, X, (size_t)(6 * l * 8), 1, &err) : NULL;
    double *Cv = const_C(l, C);
    km_cd_param par = km_cd_param_default();
    par.loss = loss;
    par.eps = eps;
    par.stop = stop;
    par.delta = delta;
    par.rule = KM_RULE_CYCLIC;
    par.shrinking = shrinking;
    km_cd_result res = {0};
    int rc = !K ? -1 : fixedpoint ? km_fixedpoint(K, P->y, Cv, &par, KM_ALPHA_NORM2, 2, c, z, &res, &err)
                                  : km_cd_kernel(K, P->y, Cv, &par, c, z, &res, &err);
    CHECK(rc == KM_OK, "%s %s returns", km_loss_name(loss), fixedpoint ? "fixed point" : "CD");
    km_kmatrix_free(K);
    km_kdata_free(X);
    free(Cv);
    return res;
}

/* The gap certificate: with z = K c from the dense K here, P = sum C L(z) + c'z/2 and
 * D = -c'z/2 - sum C L*(-c/C) by hand; (P - D)/P = res.gap <= delta, P = res.primal, and
 * the gap bounds the distance to a tight optimum. CD (cyclic, shrinking) and fixed point. */
static void test_gap_certificate(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.4, 0, 3, 0};
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        km_problem *P = random_problem(60, 6, 0.7, km_loss_is_classification(loss),
                                       700 + (uint64_t)loss);
        int64_t l = P->l;
        double C = 1.5, eps = 0.1, delta = 1e-4;
        double *A = dense_K(&k, P), *c = malloc((size_t)l * sizeof *c);
        double *z = malloc((size_t)l * sizeof *z), *zt = malloc((size_t)l * sizeof *zt);
        km_cd_result tight = solve_stop(P, &k, loss, C, eps, 0, KM_STOP_STEP, 1e-12, 1, c, z);
        double Fstar = 0;
        for (int64_t i = 0; i < l; i++)
            Fstar += C * km_loss_value(loss, P->y[i], z[i], eps) + c[i] * z[i] / 2;
        for (int fp = 0; fp < 2; fp++) {
            km_cd_result res = solve_stop(P, &k, loss, C, eps, fp, KM_STOP_GAP, delta, 1, c, z);
            double Fp = 0, cz = 0, conj = 0, zd = 0;
            for (int64_t i = 0; i < l; i++) {
                zt[i] = 0;
                for (int64_t j = 0; j < l; j++)
                    zt[i] += A[i * l + j] * c[j];
                zd = fmax(zd, fabs(zt[i] - z[i]));
                cz += c[i] * zt[i];
                Fp += C * km_loss_value(loss, P->y[i], zt[i], eps);
                conj += conj_by_hand(loss, P->y[i], c[i], C, eps);
            }
            Fp += cz / 2;
            double gap = (Fp - (-cz / 2 - conj)) / Fp;
            CHECK(res.converged && res.gap <= delta && fabs(gap - res.gap) <= 1e-9 &&
                      fabs(res.primal - Fp) <= 1e-9 * Fp && zd < 1e-10,
                  "%s kernel %s: gap rule stops at %.3g <= %g (%lld iterations), P - D by hand "
                  "%.3g, z = Kc (%.2g)", km_loss_name(loss), fp ? "fixed point" : "CD (cyclic)",
                  res.gap, delta, (long long)res.iter, gap, zd);
            CHECK(tight.converged && Fp >= Fstar * (1 - 1e-9) &&
                      (Fp - Fstar) / Fp <= res.gap + 1e-9,
                  "%s kernel %s: the gap bounds the primal suboptimality (%.3g <= %.3g)",
                  km_loss_name(loss), fp ? "fixed point" : "CD", (Fp - Fstar) / Fp, res.gap);
        }
        /* the step rule still stops on max|h|, and reports the gap of what it returns */
        km_cd_result st = solve_stop(P, &k, loss, C, eps, 0, KM_STOP_STEP, 1e-3, 1, c, z);
        double Fp = 0, cz = 0, conj = 0;
        for (int64_t i = 0; i < l; i++) {
            cz += c[i] * z[i];
            Fp += C * km_loss_value(loss, P->y[i], z[i], eps);
            conj += conj_by_hand(loss, P->y[i], c[i], C, eps);
        }
        Fp += cz / 2;
        CHECK(st.converged && st.max_h < 1e-3 && fabs((Fp + cz / 2 + conj) / Fp - st.gap) <= 1e-9,
              "%s kernel CD, step rule: max|h| %.3g < 1e-3, gap %.3g reported", km_loss_name(loss),
              st.max_h, st.gap);
        free(A); free(c); free(z); free(zt);
        km_problem_free(P);
    }
}

/* Shrinking (rows restricted to the active set, unshrink for the certificate) keeps the
 * optimum under the gap rule. */
static void test_gap_shrinking(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.3, 0, 3, 0};
    const km_loss losses[] = {KM_LOSS_L1SVM, KM_LOSS_RLA, KM_LOSS_SVR};
    for (int t = 0; t < 3; t++) {
        km_problem *P = random_problem(100, 8, 0.5, t == 0, 800 + (uint64_t)t);
        int64_t l = P->l;
        double F[2], *c = malloc((size_t)l * sizeof *c), *z = malloc((size_t)l * sizeof *z);
        int ok = 1;
        for (int s = 0; s < 2; s++) {
            km_cd_result r = solve_stop(P, &k, losses[t], 2, 0.1, 0, KM_STOP_GAP, 1e-12, s, c, z);
            ok &= r.converged && r.gap <= 1e-12;
            F[s] = r.primal;
        }
        CHECK(ok && fabs(F[0] - F[1]) <= 1e-10 * F[0], "%s kernel CD, gap rule: shrinking does "
              "not change the optimum (%.15g vs %.15g)", km_loss_name(losses[t]), F[1], F[0]);
        free(c); free(z);
        km_problem_free(P);
    }
}

/* rls at the default gap: decision values z = Kc within 1e-3 of their range of the ridge
 * solution c = (K + I/C)^-1 y by LAPACK, CD and fixed point (the requirement). */
static void test_rls_default_gap(void)
{
    km_kernel ks[2] = {{KM_KERNEL_RBF, 0.5, 0, 3, 0}, {KM_KERNEL_LINEAR, 0, 0, 3, 0}};
    for (int t = 0; t < 2; t++) {
        km_problem *P = random_problem(100, 6, 0.6, 0, 900 + (uint64_t)t);
        int64_t l = P->l;
        double C = 4, *A = dense_K(&ks[t], P), *K = dense_K(&ks[t], P);
        double *cr = malloc((size_t)l * sizeof *cr), *c = malloc((size_t)l * sizeof *c);
        double *z = malloc((size_t)l * sizeof *z);
        for (int64_t i = 0; i < l; i++) {
            A[i * l + i] += 1 / C;
            cr[i] = P->y[i];
        }
        int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', (int)l, 1, A, (int)l, cr, 1);
        for (int fp = 0; fp < 2; fp++) {
            km_cd_result r = solve_stop(P, &ks[t], KM_LOSS_RLS, C, 0, fp, KM_STOP_GAP, 0, 1, c, z);
            double lo = INFINITY, hi = -INFINITY, d = 0;
            for (int64_t i = 0; i < l; i++) {
                double zr = 0;
                for (int64_t j = 0; j < l; j++)
                    zr += K[i * l + j] * cr[j];
                lo = fmin(lo, zr);
                hi = fmax(hi, zr);
                d = fmax(d, fabs(zr - z[i]));
            }
            CHECK(info == 0 && r.converged && d <= 1e-3 * (hi - lo), "rls %s, %s kernel, "
                  "default gap %g (%lld iterations): decision values within %.2g of the range "
                  "of LAPACK's (<= 1e-3)", fp ? "fixed point" : "CD", km_kernel_name(ks[t].type),
                  r.delta, (long long)r.iter, d / (hi - lo));
        }
        free(A); free(K); free(cr); free(c); free(z);
        km_problem_free(P);
    }
}

int main(void)
{
    test_rls_closed_form();
    test_optimality_and_agreement();
    test_alpha_rules();
    test_linear_kernel_equals_linear_solver();
    test_cache_sizes();
    test_cap_z();
    test_rules();
    test_model_decision();
    test_gap_certificate();
    test_gap_shrinking();
    test_rls_default_gap();
    TEST_EXIT();
}
