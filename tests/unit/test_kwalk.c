/* test_kwalk.c - the kernel solver's active-set walk (face.h: km_face_kwalk; kcd.c) on badly
 * conditioned problems: the dual G = c'Kc/2 + sum_i C L*(y_i, -c_i/C) written out here never
 * increases and falls by the gain reported, z stays K c, RLS lands on LAPACK's closed form;
 * km_kcd_solve with the walk certifies its gap (primal and dual from a dense K here), reaches
 * the optimum of the plain rule, and gives the same bits for one thread or two. */
#include <lapacke.h>
#include <string.h>

#include "cd.h"
#include "face.h"
#include "kcd.h"
#include "kernel.h"
#include "test.h"
#include "testutil.h"

/* The loss written out again (not km_loss_value). */
static double loss_of(km_loss loss, double y, double z, double eps)
{
    double m;
    switch (loss) {
    case KM_LOSS_L1SVM: m = 1 - y * z; return m > 0 ? m : 0;
    case KM_LOSS_L2SVM: m = 1 - y * z; return m > 0 ? m * m : 0;
    case KM_LOSS_RLS: return (y - z) * (y - z) / 2;
    case KM_LOSS_RLA: return fabs(y - z);
    default: m = fabs(y - z) - eps; return m > 0 ? m : 0;
    }
}

/* An unscaled problem: features 50 + 20 u (u in [-1, 1]), like raw pixel values; its
 * linear kernel has k_ij ~ n 2500 and rank n: coordinate descent crawls on it. */
static km_problem *unscaled_problem(int64_t l, int32_t n, int classify, uint64_t seed)
{
    km_problem *P = random_problem(l, n, 1.0, classify, seed);
    for (int64_t t = 0; t < P->nnz; t++)
        P->value[t] = 50 + 20 * P->value[t];
    return P;
}

/* G(c) = c'Kc/2 + sum_i C L*(y_i, -c_i/C) and z = K c, from a dense K. */
static double dual_G(km_loss loss, const double *K, const double *y, const double *c,
                     int64_t l, double C, double eps, double *z)
{
    double quad = 0, conj = 0;
    for (int64_t i = 0; i < l; i++) {
        double zi = 0;
        for (int64_t j = 0; j < l; j++)
            zi += K[i * l + j] * c[j];
        if (z)
            z[i] = zi;
        quad += c[i] * zi;
        conj += conj_by_hand(loss, y[i], c[i], C, eps);
    }
    return quad / 2 + conj;
}

/* Primal P(c) = sum_i C L(y_i, (Kc)_i) + c'Kc/2. */
static double primal_P(km_loss loss, const double *K, const double *y, const double *c,
                       int64_t l, double C, double eps)
{
    double quad = 0, Lsum = 0;
    for (int64_t i = 0; i < l; i++) {
        double zi = 0;
        for (int64_t j = 0; j < l; j++)
            zi += K[i * l + j] * c[j];
        quad += c[i] * zi;
        Lsum += C * loss_of(loss, y[i], zi, eps);
    }
    return Lsum + quad / 2;
}

/* The walk alone on all coefficients of a rank-4 kernel (linear, unscaled features): from a
 * feasible start (some coefficients on bounds, some inside, z = K c), for budgets that allow
 * more and more directions, G never rises above G(start), falls by exactly the gain
 * reported, does not rise with the budget (a larger budget runs a longer prefix of the same
 * directions), c stays feasible and z stays K c. */
static void test_walk_monotone(void)
{
    const km_loss losses[] = {KM_LOSS_L1SVM, KM_LOSS_L2SVM, KM_LOSS_RLA, KM_LOSS_SVR};
    km_kernel k = {KM_KERNEL_LINEAR, 1, 0, 1, 0};
    for (size_t q = 0; q < sizeof losses / sizeof *losses; q++) {
        km_loss loss = losses[q];
        int classify = loss == KM_LOSS_L1SVM || loss == KM_LOSS_L2SVM;
        km_problem *P = unscaled_problem(120, 4, classify, 11 + q);
        int64_t l = P->l;
        double C = 2, eps = 0.1;
        double *K = dense_K(&k, P);
        double *c0 = malloc((size_t)l * sizeof *c0), *z0 = malloc((size_t)l * sizeof *z0);
        double *c = malloc((size_t)l * sizeof *c), *z = malloc((size_t)l * sizeof *z);
        double *zt = malloc((size_t)l * sizeof *zt), *pc = malloc(4 * (size_t)l * sizeof *pc);
        km_rng r;
        km_rng_seed(&r, 5 + q);
        for (int64_t i = 0; i < l; i++) {   /* a feasible start: bounds and insides */
            double u = unif(&r), y = P->y[i];
            double s = classify ? y : (u < 0.5 ? -1 : 1);
            c0[i] = u < 0.3 ? 0 : u < 0.5 ? s * C : s * C * unif(&r);
            if (loss == KM_LOSS_L2SVM)
                c0[i] = u < 0.3 ? 0 : y * C * unif(&r);
        }
        double G0 = dual_G(loss, K, P->y, c0, l, C, eps, z0), Gprev = G0, scale = fabs(G0) + 1;
        int ok = 1, ok_gain = 1, ok_z = 1, ok_feas = 1, moved = 0;
        for (double budget = 1e4; budget <= 1e10; budget *= 4) {
            int64_t nw = 0;
            int64_t *Wi = malloc((size_t)l * sizeof *Wi);
            for (int64_t i = 0; i < l; i++)
                if (km_face_piece(loss, P->y[i], C, eps, c0[i], z0[i], &pc[4 * nw],
                                  &pc[4 * nw + 1], &pc[4 * nw + 2], &pc[4 * nw + 3]))
                    Wi[nw++] = i;
            double *KW = malloc((size_t)(nw * nw) * sizeof *KW);
            double *v = malloc(6 * (size_t)nw * sizeof *v);
            double *lo = v, *hi = v + nw, *a = v + 2 * nw, *d = v + 3 * nw, *cw = v + 4 * nw,
                   *zw = v + 5 * nw;
            for (int64_t s = 0; s < nw; s++) {
                lo[s] = pc[4 * s];
                hi[s] = pc[4 * s + 1];
                a[s] = pc[4 * s + 2];
                d[s] = pc[4 * s + 3];
                cw[s] = c0[Wi[s]];
                zw[s] = z0[Wi[s]];
                for (int64_t t = 0; t < nw; t++)
                    KW[s * nw + t] = K[Wi[s] * l + Wi[t]];
            }
            double gain, work, mu = 1e-9 * K[0];
            int rc = km_face_kwalk(nw, KW, lo, hi, a, d, mu, budget, cw, zw, &gain, &work);
            memcpy(c, c0, (size_t)l * sizeof *c);
            for (int64_t s = 0; s < nw; s++) {
                c[Wi[s]] = cw[s];
                ok_feas &= cw[s] >= lo[s] && cw[s] <= hi[s];
            }
            double G = dual_G(loss, K, P->y, c, l, C, eps, zt);
            for (int64_t s = 0; s < nw; s++)   /* z_W by the walk = (K c)_W */
                ok_z &= fabs(zw[s] - zt[Wi[s]]) <= 1e-9 * (fabs(zt[Wi[s]]) + 1e3);
            ok &= rc == 0 && G <= G0 + 1e-12 * scale && G <= Gprev + 1e-12 * scale;
            ok_gain &= fabs((G0 - G) - gain) <= 1e-9 * scale;
            moved |= gain > 0;
            Gprev = G;
            free(Wi);
            free(KW);
            free(v);
        }
        CHECK(ok && moved, "%s: the walk never raises G (G0 %.6g -> %.6g), nor with more budget",
              km_loss_name(loss), G0, Gprev);
        CHECK(ok_gain, "%s: G falls by the gain reported", km_loss_name(loss));
        CHECK(ok_z && ok_feas, "%s: z_W stays (K c)_W, c inside its pieces", km_loss_name(loss));
        free(K);
        free(c0);
        free(z0);
        free(c);
        free(z);
        free(zt);
        free(pc);
        km_problem_free(P);
    }
}

/* RLS: K_WW + I/C is positive definite, so one Newton direction of the walk from c = 0 is
 * the closed form (K + I/C) c = y (LAPACK's dposv here), on an unscaled rank-5 kernel. */
static void test_walk_rls_closed_form(void)
{
    km_kernel k = {KM_KERNEL_LINEAR, 1, 0, 1, 0};
    km_problem *P = unscaled_problem(150, 5, 0, 23);
    int64_t l = P->l;
    double C = 0.5;
    double *K = dense_K(&k, P), *A = malloc((size_t)(l * l) * sizeof *A);
    double *ref = malloc((size_t)l * sizeof *ref), *v = malloc(6 * (size_t)l * sizeof *v);
    double *lo = v, *hi = v + l, *a = v + 2 * l, *d = v + 3 * l, *c = v + 4 * l, *z = v + 5 * l;
    for (int64_t i = 0; i < l; i++) {
        for (int64_t j = 0; j < l; j++)
            A[i * l + j] = K[i * l + j] + (i == j ? 1 / C : 0);
        ref[i] = P->y[i];
        c[i] = z[i] = 0;
        km_face_piece(KM_LOSS_RLS, P->y[i], C, 0, 0, 0, &lo[i], &hi[i], &a[i], &d[i]);
    }
    int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', (lapack_int)l, 1, A, (lapack_int)l, ref, 1);
    double gain, work, err = 0, nref = 0;
    int rc = km_face_kwalk(l, K, lo, hi, a, d, 1e-9 * K[0], 1e12, c, z, &gain, &work);
    for (int64_t i = 0; i < l; i++) {
        err = fmax(err, fabs(c[i] - ref[i]));
        nref = fmax(nref, fabs(ref[i]));
    }
    CHECK(info == 0 && rc == 0 && err <= 1e-8 * nref,
          "rls: the walk from 0 is LAPACK's closed form (max error %.3g of %.3g)", err, nref);
    free(K);
    free(A);
    free(ref);
    free(v);
    km_problem_free(P);
}

typedef struct solved {
    double *c, *z;
    km_cd_result res;
    int rc;
} solved;

static solved solve(const km_problem *P, const km_kernel *k, km_loss loss, double C, double eps,
                    double delta, int no_walk, int threads, int64_t max_iter)
{
    solved s = {0};
    int64_t l = P->l;
    km_error err;
    km_kdata *X = km_kdata_new(P, NULL, l, &err);
    km_kcd *W = X ? km_kcd_new(k, X, 16 << 20, threads, &err) : NULL;
    double *Cv = malloc((size_t)l * sizeof *Cv);
    for (int64_t i = 0; i < l; i++)
        Cv[i] = C;
    km_cd_param par = km_cd_param_default();
    par.loss = loss;
    par.eps = eps;
    par.delta = delta;
    par.no_walk = no_walk;
    par.max_iter = max_iter;
    s.c = malloc((size_t)l * sizeof *s.c);
    s.z = malloc((size_t)l * sizeof *s.z);
    s.rc = W ? km_kcd_solve(W, P->y, Cv, &par, s.c, s.z, &s.res, &err) : -1;
    km_kcd_free(W);
    km_kdata_free(X);
    free(Cv);
    return s;
}

static void release(solved *s)
{
    free(s->c);
    free(s->z);
}

/* km_kcd_solve on unscaled data (linear kernel, and a degree-2 polynomial one), every loss
 * the walk knows: converged at the default gap, certified by primal and dual computed here
 * from a dense K; at a tight gap, the objective of the plain rule (no walk) to 1e-9; RLS:
 * LAPACK's closed form. */
static void test_solve(void)
{
    const km_loss losses[] = {KM_LOSS_L1SVM, KM_LOSS_L2SVM, KM_LOSS_RLS, KM_LOSS_RLA,
                              KM_LOSS_SVR};
    const km_kernel kernels[] = {{KM_KERNEL_LINEAR, 1, 0, 1, 0},
                                 {KM_KERNEL_POLY, 1.0 / 4, 0, 2, 0}};
    for (size_t kk = 0; kk < 2; kk++)
        for (size_t q = 0; q < sizeof losses / sizeof *losses; q++) {
            km_loss loss = losses[q];
            int classify = loss == KM_LOSS_L1SVM || loss == KM_LOSS_L2SVM;
            km_problem *P = unscaled_problem(300, 4, classify, 31 + q);
            int64_t l = P->l;
            double C = 1, eps = 0.5;
            double *K = dense_K(&kernels[kk], P);
            solved a = solve(P, &kernels[kk], loss, C, eps, 0, 0, 1, 20000);
            double Pa = primal_P(loss, K, P->y, a.c, l, C, eps);
            double Da = -dual_G(loss, K, P->y, a.c, l, C, eps, NULL);
            CHECK(a.rc == KM_OK && a.res.converged && (Pa - Da) / Pa <= 1.001e-5,
                  "%s, %s kernel, unscaled: converged in %lld sweeps, gap (P - D)/P = %.3g "
                  "from a dense K (reported %.3g)",
                  km_loss_name(loss), km_kernel_name(kernels[kk].type),
                  (long long)a.res.iter, (Pa - Da) / Pa, a.res.gap);
            solved t = solve(P, &kernels[kk], loss, C, eps, 1e-12, 0, 1, 200000);
            double Pt = primal_P(loss, K, P->y, t.c, l, C, eps);
            double Dt = -dual_G(loss, K, P->y, t.c, l, C, eps, NULL);
            /* (P and D written out here round at ~1e-16 of terms up to 1e8 larger) */
            CHECK(t.rc == KM_OK && t.res.converged && (Pt - Dt) / Pt <= 1e-7,
                  "%s, %s kernel: at -e 1e-12 converged in %lld sweeps, gap %.3g from a "
                  "dense K (to rounding)", km_loss_name(loss), km_kernel_name(kernels[kk].type),
                  (long long)t.res.iter, (Pt - Dt) / Pt);
            if (kk == 0) {   /* the plain rule converges here in ~1e5 sweeps (poly: not) */
                km_problem *Q = unscaled_problem(loss == KM_LOSS_SVR ? 50 : 100, 3, classify,
                                                 61 + q);
                double *KQ = dense_K(&kernels[kk], Q);
                solved tq = solve(Q, &kernels[kk], loss, C, eps, 1e-12, 0, 1, 400000);
                solved u = solve(Q, &kernels[kk], loss, C, eps, 1e-12, 1, 1, 400000);
                double Pq = primal_P(loss, KQ, Q->y, tq.c, Q->l, C, eps);
                double Pu = primal_P(loss, KQ, Q->y, u.c, Q->l, C, eps);
                CHECK(tq.rc == KM_OK && u.rc == KM_OK && u.res.converged &&
                      fabs(Pq - Pu) <= 1e-9 * fabs(Pu),
                      "%s, %s kernel: the walk's optimum is the plain rule's (%.15g, %.15g; "
                      "%lld and %lld sweeps)", km_loss_name(loss),
                      km_kernel_name(kernels[kk].type), Pq, Pu, (long long)tq.res.iter,
                      (long long)u.res.iter);
                release(&tq);
                release(&u);
                free(KQ);
                km_problem_free(Q);
            }
            if (loss == KM_LOSS_RLS) {
                double *A = malloc((size_t)(l * l) * sizeof *A);
                double *ref = malloc((size_t)l * sizeof *ref), err = 0, nref = 0;
                for (int64_t i = 0; i < l; i++) {
                    for (int64_t j = 0; j < l; j++)
                        A[i * l + j] = K[i * l + j] + (i == j ? 1 / C : 0);
                    ref[i] = P->y[i];
                }
                int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', (lapack_int)l, 1, A,
                                         (lapack_int)l, ref, 1);
                for (int64_t i = 0; i < l; i++) {
                    double zi = 0, zr = 0;
                    for (int64_t j = 0; j < l; j++) {
                        zi += K[i * l + j] * t.c[j];
                        zr += K[i * l + j] * ref[j];
                    }
                    err = fmax(err, fabs(zi - zr));
                    nref = fmax(nref, fabs(zr));
                }
                CHECK(info == 0 && err <= 1e-6 * nref,
                      "rls, %s kernel: decision values of the closed form (max error %.3g "
                      "of %.3g)", km_kernel_name(kernels[kk].type), err, nref);
                free(A);
                free(ref);
            }
            release(&a);
            release(&t);
            free(K);
            km_problem_free(P);
        }
}

/* One thread or two with the walk: the same bits (the walk runs on worker 0 alone, over
 * every block); and the walk did run (the plain rule's c differs). */
static void test_threads(void)
{
    km_kernel k = {KM_KERNEL_LINEAR, 1, 0, 1, 0};
    km_problem *P = unscaled_problem(KM_KCD_PAR_MIN + 300, 3, 1, 41);
    solved a = solve(P, &k, KM_LOSS_L1SVM, 1, 0, 0, 0, 1, 24);
    solved b = solve(P, &k, KM_LOSS_L1SVM, 1, 0, 0, 0, 2, 24);
    solved u = solve(P, &k, KM_LOSS_L1SVM, 1, 0, 0, 1, 1, 24);
    size_t bytes = (size_t)P->l * sizeof(double);
    CHECK(a.rc == KM_OK && b.rc == KM_OK && memcmp(a.c, b.c, bytes) == 0 &&
          memcmp(a.z, b.z, bytes) == 0 && a.res.iter == b.res.iter,
          "l1svm, %lld rows, unscaled: -n 1 and -n 2 give the same bits with the walk (gap %.3g)",
          (long long)P->l, a.res.gap);
    CHECK(u.rc == KM_OK && memcmp(a.c, u.c, bytes) != 0,
          "the walk ran (c differs from the plain rule's; gaps %.3g, %.3g)", a.res.gap,
          u.res.gap);
    release(&a);
    release(&b);
    release(&u);
    km_problem_free(P);
}

int main(void)
{
    test_walk_monotone();
    test_walk_rls_closed_form();
    test_solve();
    test_threads();
    TEST_EXIT();
}
