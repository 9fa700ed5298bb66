/* test_kcd.c - the greedy kernel solver (kcd.h) against independent solutions: the duality
 * gap as primal - dual written out here, optimality (2.8), the cyclic solver's optimum,
 * RLS by LAPACK; shrinking, threads and the stopping rules. */
#include <lapacke.h>
#include <sched.h>
#include <string.h>

#include "cd.h"
#include "kcd.h"
#include "kernel.h"
#include "tasks.h"
#include "test.h"
#include "testutil.h"

/* Primal and dual from a dense K (testutil.h: loss and conjugate written out by hand). */
static void primal_dual(km_loss loss, const double *K, const double *y, const double *c,
                        int64_t l, double C, double eps, double *P, double *D)
{
    primal_dual_dense(loss, K, y, c, l, C, eps, P, D, NULL);
}

static km_team_policy team_policy = KM_TEAM_AUTO;   /* how solve's team is sized */

static solved solve(const km_problem *P, const km_kernel *k, km_loss loss, double C,
                    double eps, km_rule rule, km_stop stop, double delta, int shrinking,
                    int threads, size_t cache)
{
    km_cd_param par = km_cd_param_default();
    par.loss = loss;
    par.eps = eps;
    par.rule = rule;
    par.stop = stop;
    par.delta = delta;
    par.shrinking = shrinking;
    par.max_iter = 100000;
    return kcd_solve_team(P, k, &par, C, threads, cache, team_policy);
}

/* Every loss, both greedy rules: converged with the gap it reports <= delta; that gap is
 * primal - dual computed here from a dense K; (2.8) holds at tight delta; and the optimum
 * is the cyclic solver's (objective within 1e-9). */
static void test_gap_and_optimum(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.4, 0, 3, 0};
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        km_problem *P = random_problem(150, 6, 0.7, km_loss_is_classification(loss),
                                       80 + (uint64_t)loss);
        double C = 1.5, eps = 0.1, *K = dense_K(&k, P);
        for (int r = 0; r < 2; r++) {
            km_rule rule = r ? KM_RULE_GRADIENT : KM_RULE_GREEDY;
            const char *rn = km_rule_name(rule), *ln = km_loss_name(loss);
            solved s = solve(P, &k, loss, C, eps, rule, KM_STOP_GAP, 1e-3, 1, 1, 1 << 20);
            double Pv, Dv;
            primal_dual(loss, K, P->y, s.c, P->l, C, eps, &Pv, &Dv);
            CHECK(s.rc == KM_OK && s.res.converged && s.res.gap <= 1e-3,
                  "%s %s: converged at gap %.3g <= 1e-3", ln, rn, s.res.gap);
            CHECK(fabs((Pv - Dv) / Pv - s.res.gap) <= 1e-9 && fabs(Pv - s.res.primal) <= 1e-9 *
                  Pv, "%s %s: reported gap %.6g = (P - D)/P %.6g from a dense K", ln, rn,
                  s.res.gap, (Pv - Dv) / Pv);
            release(&s);
            s = solve(P, &k, loss, C, eps, rule, KM_STOP_GAP, 1e-12, 1, 1, 1 << 20);
            int bad = 0;
            for (int64_t i = 0; i < P->l; i++)
                bad += !kkt_ok(loss, P->y[i], s.z[i], s.c[i], C, eps, 1e-5);
            CHECK(s.rc == KM_OK && s.res.converged && bad == 0,
                  "%s %s at gap 1e-12: (2.8) holds at every i (%d violations)", ln, rn, bad);
            /* the thesis' cyclic solver, run tight */
            km_error err;
            km_kdata *X = km_kdata_new(P, NULL, P->l, &err);
            km_kmatrix *Km = km_kmatrix_new(&k, X, 1 << 20, 1, &err);
            double *Cv = malloc((size_t)P->l * sizeof *Cv), *c2 = malloc((size_t)P->l * 8);
            double *z2 = malloc((size_t)P->l * 8);
            for (int64_t i = 0; i < P->l; i++)
                Cv[i] = C;
            km_cd_param par = km_cd_param_default();
            par.loss = loss;
            par.eps = eps;
            par.rule = KM_RULE_CYCLIC;
            par.stop = KM_STOP_STEP;
            par.delta = 1e-12;
            par.max_iter = 1000000;
            km_cd_result res;
            km_cd_kernel(Km, P->y, Cv, &par, c2, z2, &res, &err);
            double P2, D2;
            primal_dual(loss, K, P->y, c2, P->l, C, eps, &P2, &D2);
            primal_dual(loss, K, P->y, s.c, P->l, C, eps, &Pv, &Dv);
            CHECK(fabs(Pv - P2) <= 1e-9 * P2, "%s %s: objective %.15g = cyclic CD's %.15g "
                  "within 1e-9", ln, rn, Pv, P2);
            km_kmatrix_free(Km);
            km_kdata_free(X);
            free(Cv);
            free(c2);
            free(z2);
            release(&s);
        }
        free(K);
        km_problem_free(P);
    }
}

/* Shrinking does not change the fixed point; the step rule stops by max |h|; RLS at the
 * default gap equals the closed form (K + I/C)^-1 y to 1e-3 of the decision values'
 * range. */
static void test_shrinking_step_rule_rls(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.3, 0, 3, 0};
    km_problem *P = random_problem(3000, 8, 0.6, 1, 91);
    solved a = solve(P, &k, KM_LOSS_L1SVM, 4, 0, KM_RULE_GREEDY, KM_STOP_GAP, 1e-10, 1, 1,
                     8 << 20);
    solved b = solve(P, &k, KM_LOSS_L1SVM, 4, 0, KM_RULE_GREEDY, KM_STOP_GAP, 1e-10, 0, 1,
                     8 << 20);
    double d = 0;
    for (int64_t i = 0; i < P->l; i++)
        d = fmax(d, fabs(a.c[i] - b.c[i]));
    CHECK(a.res.converged && b.res.converged && fabs(a.res.primal - b.res.primal) <= 1e-9 *
          b.res.primal, "3000 rows, small cache: with and without shrinking, objectives "
          "%.15g and %.15g (max coefficient diff %.2g)", a.res.primal, b.res.primal, d);
    release(&a);
    release(&b);
    a = solve(P, &k, KM_LOSS_L1SVM, 4, 0, KM_RULE_GREEDY, KM_STOP_STEP, 1e-6, 1, 1, 8 << 20);
    CHECK(a.rc == KM_OK && a.res.converged && a.res.max_h < 1e-6 && a.res.gap < 1e-3,
          "step rule: max|h| %.2g < 1e-6 at the end (gap %.2g)", a.res.max_h, a.res.gap);
    release(&a);
    km_problem_free(P);

    km_kernel ks[2] = {{KM_KERNEL_LINEAR, 0, 0, 3, 0}, {KM_KERNEL_RBF, 0.5, 0, 3, 0}};
    for (int t = 0; t < 2; t++) {
        P = random_problem(200, 6, 0.7, 0, 95 + (uint64_t)t);
        for (int64_t q = 0; q < P->nnz; q++)   /* unscaled features */
            P->value[q] *= 10;
        int64_t l = P->l;
        double C = 2, *A = dense_K(&ks[t], P), *K = dense_K(&ks[t], P);
        double *c = malloc((size_t)l * sizeof *c);
        for (int64_t i = 0; i < l; i++) {
            A[i * l + i] += 1 / C;
            c[i] = P->y[i];
        }
        int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', (int)l, 1, A, (int)l, c, 1);
        solved s = solve(P, &ks[t], KM_LOSS_RLS, C, 0, KM_RULE_AUTO, KM_STOP_GAP, 0, 1, 1,
                         1 << 20);
        double lo = INFINITY, hi = -INFINITY, worst = 0;
        for (int64_t i = 0; i < l; i++) {
            double f = 0;
            for (int64_t j = 0; j < l; j++)
                f += K[i * l + j] * c[j];
            lo = fmin(lo, f);
            hi = fmax(hi, f);
            worst = fmax(worst, fabs(f - s.z[i]));
        }
        CHECK(info == 0 && s.res.converged && worst <= 1e-3 * (hi - lo),
              "rls, %s kernel, features x10, default gap: decision values within %.2g of "
              "the closed form's range (%.3g)", km_kernel_name(ks[t].type),
              worst / (hi - lo), hi - lo);
        release(&s);
        free(A);
        free(K);
        free(c);
        km_problem_free(P);
    }
}

/* One thread or two: the same bits (the team splits the columns of K; the selection and
 * the gap do not depend on the split), whether the team sizes itself (auto: one worker
 * on a busy machine), keeps both workers throughout, or changes size at every check. */
static void test_threads_bit_identical(void)
{
    km_kernel k = {KM_KERNEL_RBF, 0.5, 0, 3, 0};
    km_problem *P = random_problem(KM_KCD_PAR_MIN + 500, 5, 0.8, 1, 97);
    static const char *names[] = {"auto", "all", "churn"};
    for (int loss = 0; loss < 2; loss++) {
        solved a = solve(P, &k, loss, 2, 0, KM_RULE_GREEDY, KM_STOP_GAP, 1e-4, 1, 1, 16 << 20);
        for (km_team_policy t = KM_TEAM_AUTO; t <= KM_TEAM_CHURN; t++) {
            team_policy = t;
            solved b = solve(P, &k, loss, 2, 0, KM_RULE_GREEDY, KM_STOP_GAP, 1e-4, 1, 2,
                             16 << 20);
            team_policy = KM_TEAM_AUTO;
            CHECK(a.rc == KM_OK && b.rc == KM_OK &&
                  memcmp(a.c, b.c, (size_t)P->l * sizeof *a.c) == 0 &&
                  memcmp(a.z, b.z, (size_t)P->l * sizeof *a.z) == 0 &&
                  a.res.iter == b.res.iter,
                  "%s, %lld rows: -n 1 and -n 2 (team %s) give the same bits (gap %.3g)",
                  km_loss_name(loss), (long long)P->l, names[t], a.res.gap);
            release(&b);
        }
        release(&a);
    }
    km_problem_free(P);
}

/* Empty rows under dot-product kernels have k_ii = 0 and a zero kernel row: the gap closes
 * (their c_i is the minimizer of the conjugate term, not the thesis' 0, which leaves
 * C L(y_i, 0) of gap behind), for every loss, greedy and cyclic; the gap from a dense K. */
static void test_zero_rows(void)
{
    km_kernel k = {KM_KERNEL_POLY, 0.5, 0, 2, 0};
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        km_problem *P = random_problem(60, 5, 0.6, km_loss_is_classification(loss),
                                       300 + (uint64_t)loss);
        for (int64_t i = 0; i < P->l; i += 7)   /* every 7th row emptied */
            for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++)
                P->value[t] = 0;
        double *K = dense_K(&k, P), Pv, Dv;
        solved s = solve(P, &k, loss, 1.5, 0.1, KM_RULE_GREEDY, KM_STOP_GAP, 1e-8, 1, 1, 1 << 20);
        primal_dual(loss, K, P->y, s.c, P->l, 1.5, 0.1, &Pv, &Dv);
        CHECK(s.rc == KM_OK && s.res.converged && (Pv - Dv) / Pv <= 1e-8,
              "%s, poly kernel, every 7th row empty: gap %.2g <= 1e-8 by a dense K",
              km_loss_name(loss), (Pv - Dv) / Pv);
        release(&s);
        free(K);
        km_problem_free(P);
    }
    /* a row whose features overflow the kernel: an input error naming it */
    km_problem *P = random_problem(20, 3, 1.0, 1, 310);
    P->value[P->row_ptr[4]] = 1e200;
    solved s = solve(P, &k, KM_LOSS_L1SVM, 1, 0, KM_RULE_GREEDY, KM_STOP_GAP, 0, 1, 1, 1 << 20);
    CHECK(s.rc == KM_EINPUT, "a row of 1e200 features under poly: KM_EINPUT (rc %d)", s.rc);
    release(&s);
    km_problem_free(P);
}

/* A process held to one CPU (taskset, a cpuset) counts one core: one worker by default,
 * and -n 2 takes the one-block path of -n 1 (a team there only waits), the same bits. */
static void test_affinity(void)
{
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0) {
        CHECK(0, "sched_getaffinity");
        return;
    }
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CHECK(km_cores() == CPU_COUNT(&all) && km_cores() >= 1,
          "km_cores() = %d, the CPUs of the affinity mask (%d)", km_cores(), CPU_COUNT(&all));
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        CHECK(0, "sched_setaffinity to CPU %d", first);
        return;
    }
    CHECK(km_cores() == 1 && km_threads_default() == 1,
          "held to CPU %d: km_cores() = %d, km_threads_default() = %d (1, 1)", first,
          km_cores(), km_threads_default());
    km_kernel k = {KM_KERNEL_RBF, 0.5, 0, 3, 0};
    km_problem *P = random_problem(KM_KCD_PAR_MIN + 100, 4, 0.8, 1, 98);
    km_cd_param par = km_cd_param_default();
    par.eps = 1e-4;
    solved a = kcd_solve(P, &k, &par, 1, 1, 8 << 20), b = kcd_solve(P, &k, &par, 1, 2, 8 << 20);
    CHECK(a.rc == KM_OK && b.rc == KM_OK &&
              memcmp(a.c, b.c, (size_t)P->l * sizeof *a.c) == 0,
          "held to one CPU: -n 2 gives -n 1's bits (%lld rows)", (long long)P->l);
    release(&a);
    release(&b);
    km_problem_free(P);
    sched_setaffinity(0, sizeof all, &all);
}

int main(void)
{
    test_affinity();
    test_zero_rows();
    test_gap_and_optimum();
    test_shrinking_step_rule_rls();
    test_threads_bit_identical();
    TEST_EXIT();
}
