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

/* An unscaled problem: features 50 + 20 u (u in [-1, 1]), like raw pixel values; its
 * linear kernel has k_ij ~ n 2500 and rank n: coordinate descent crawls on it. */
static km_problem *unscaled_problem(int64_t l, int32_t n, int classify, uint64_t seed)
{
    km_problem *P = random_problem(l, n, 1.0, classify, seed);
    for (int64_t t = 0; t < P->nnz; t++)
        P->value[t] = 50 + 20 * P->value[t];
    return P;
}

/* G(c) = c'Kc/2 + sum_i C L*(y_i, -c_i/C) (= -D) and z = K c, from a dense K. */
static double dual_G(km_loss loss, const double *K, const double *y, const double *c,
                     int64_t l, double C, double eps, double *z)
{
    double Pv, Dv;
    primal_dual_dense(loss, K, y, c, l, C, eps, &Pv, &Dv, z);
    return -Dv;
}

/* Primal P(c) = sum_i C L(y_i, (Kc)_i) + c'Kc/2. */
static double primal_P(km_loss loss, const double *K, const double *y, const double *c,
                       int64_t l, double C, double eps)
{
    double Pv, Dv;
    primal_dual_dense(loss, K, y, c, l, C, eps, &Pv, &Dv, NULL);
    return Pv;
}

/* K_WW as km_face_kop (the conjugate-gradient path) from a dense matrix, written out here:
 * y = K x row by row, a column copied. */
typedef struct dense_op {
    const double *K;
    int64_t n;
} dense_op;

static int dop_mul(void *u, const double *x, double *y, double *work)
{
    const dense_op *o = u;
    for (int64_t i = 0; i < o->n; i++) {
        double t = 0;
        for (int64_t j = 0; j < o->n; j++)
            t += o->K[i * o->n + j] * x[j];
        y[i] = t;
    }
    *work += 0;
    return 0;
}

static int dop_col(void *u, int64_t k, double *out, double *work)
{
    const dense_op *o = u;
    memcpy(out, o->K + k * o->n, (size_t)o->n * sizeof *out);
    *work += 0;
    return 0;
}

/* The walk on K (nw x nw) by the dense path (cg = 0) or by conjugate gradients (cg = 1). */
static int walk(int cg, int64_t nw, const double *K, const double *lo, const double *hi,
                const double *a, const double *d, double mu, double budget, double *c,
                double *zW, double *gain, double *work, double curv[2])
{
    dense_op o = {K, nw};
    km_face_kop op = {dop_mul, dop_col, &o};
    return km_face_kwalk(nw, cg ? NULL : K, &op, lo, hi, a, d, mu, budget, c, zW, gain, work,
                         curv);
}

/* The walk alone on all coefficients of a rank-4 kernel (linear, unscaled features), by the
 * dense path and by conjugate gradients: from a feasible start (some coefficients on bounds,
 * some inside, z = K c), for budgets that allow more and more directions, G never rises
 * above G(start), falls by exactly the gain reported, does not rise with the budget (a
 * larger budget runs a longer prefix of the same directions), c stays feasible and z stays
 * K c; for rls, with an ample budget, both paths reach the same G (the optimum). */
static void test_walk_monotone(void)
{
    const km_loss losses[] = {KM_LOSS_L1SVM, KM_LOSS_L2SVM, KM_LOSS_RLA, KM_LOSS_SVR,
                              KM_LOSS_RLS};
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
        double G0 = dual_G(loss, K, P->y, c0, l, C, eps, z0), scale = fabs(G0) + 1;
        double Gend[2] = {0, 0};
        for (int cg = 0; cg < 2; cg++) {
            double Gprev = G0;
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
                double *lo = v, *hi = v + nw, *a = v + 2 * nw, *d = v + 3 * nw,
                       *cw = v + 4 * nw, *zw = v + 5 * nw;
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
                double gain, work, curv[2], mu = 1e-9 * K[0];
                int rc = walk(cg, nw, KW, lo, hi, a, d, mu, budget, cw, zw, &gain, &work,
                              curv);
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
            Gend[cg] = Gprev;
            const char *path = cg ? "CG" : "Cholesky";
            CHECK(ok && moved, "%s, %s: the walk never raises G (G0 %.6g -> %.6g), nor with "
                  "more budget", km_loss_name(loss), path, G0, Gprev);
            CHECK(ok_gain, "%s, %s: G falls by the gain reported", km_loss_name(loss), path);
            CHECK(ok_z && ok_feas, "%s, %s: z_W stays (K c)_W, c inside its pieces",
                  km_loss_name(loss), path);
        }
        /* rls: no bounds, so G's optimum is unique and both paths reach it (with bounds the
         * walk's last face depends on the path: coefficients that stop stay out) */
        if (loss == KM_LOSS_RLS)
            CHECK(fabs(Gend[0] - Gend[1]) <= 1e-10 * scale, "%s: CG walk = Cholesky walk (G "
                  "%.15g, %.15g)", km_loss_name(loss), Gend[1], Gend[0]);
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

/* RLS: K_WW + I/C is positive definite, so the walk from c = 0 is the closed form
 * (K + I/C) c = y (LAPACK's dposv here), on an unscaled rank-5 kernel: one Cholesky
 * direction, or a few truncated Newton (CG) ones. */
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
    }
    int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', (lapack_int)l, 1, A, (lapack_int)l, ref, 1);
    for (int cg = 0; cg < 2; cg++) {
        for (int64_t i = 0; i < l; i++) {
            c[i] = z[i] = 0;
            km_face_piece(KM_LOSS_RLS, P->y[i], C, 0, 0, 0, &lo[i], &hi[i], &a[i], &d[i]);
        }
        double gain, work, curv[2], err = 0, nref = 0;
        int rc = walk(cg, l, K, lo, hi, a, d, 1e-9 * K[0], 1e12, c, z, &gain, &work, curv);
        for (int64_t i = 0; i < l; i++) {
            err = fmax(err, fabs(c[i] - ref[i]));
            nref = fmax(nref, fabs(ref[i]));
        }
        CHECK(info == 0 && rc == 0 && err <= 1e-8 * nref,
              "rls, %s: the walk from 0 is LAPACK's closed form (max error %.3g of %.3g)",
              cg ? "CG" : "Cholesky", err, nref);
    }
    free(K);
    free(A);
    free(ref);
    free(v);
    km_problem_free(P);
}

/* K = V diag(lambda) V' with one eigenvalue -0.5 (V orthogonal, from LAPACK's QR of a
 * random matrix) and the rls pieces of curvature d = 0.25: K + D is indefinite. Both paths
 * say so (return 1) with the curvature of a direction where v'(K + D)v <= 0 (the dense
 * path: the eigenvector, curvature -0.5 of K); with d = 0 (rla's pieces, a box: the dual is
 * bounded) nothing is reported. */
static void test_walk_indefinite(void)
{
    int64_t n = 40;
    double *V = malloc((size_t)(n * n) * sizeof *V), *K = calloc((size_t)(n * n), sizeof *K);
    double *tau = malloc((size_t)n * sizeof *tau), *v = malloc(6 * (size_t)n * sizeof *v);
    double *lo = v, *hi = v + n, *a = v + 2 * n, *d = v + 3 * n, *c = v + 4 * n, *z = v + 5 * n;
    km_rng r;
    km_rng_seed(&r, 77);
    for (int64_t i = 0; i < n * n; i++)
        V[i] = 2 * unif(&r) - 1;
    LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, V, (lapack_int)n, tau);
    LAPACKE_dorgqr(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, (lapack_int)n, V,
                   (lapack_int)n, tau);
    for (int64_t t = 0; t < n; t++) {   /* eigenvalues -0.5, then 1..n-1 */
        double lam = t == 0 ? -0.5 : (double)t;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                K[i * n + j] += lam * V[i * n + t] * V[j * n + t];
    }
    for (int cg = 0; cg < 2; cg++) {
        for (int64_t i = 0; i < n; i++) {
            double y = 2 * unif(&r) - 1;
            c[i] = z[i] = 0;
            km_face_piece(KM_LOSS_RLS, y, 4, 0, 0, 0, &lo[i], &hi[i], &a[i], &d[i]);
        }
        double gain, work, curv[2];
        int rc = walk(cg, n, K, lo, hi, a, d, 1e-9, 1e12, c, z, &gain, &work, curv);
        CHECK(rc == 1 && curv[0] + curv[1] <= 0 && fabs(curv[1] - 0.25) <= 1e-12 &&
              (cg || fabs(curv[0] + 0.5) <= 1e-9),
              "%s: K + D indefinite (K's eigenvalue -0.5, d 0.25) is reported: curvature "
              "%.6g of K, %.3g of the loss", cg ? "CG" : "Cholesky", curv[0], curv[1]);
        for (int64_t i = 0; i < n; i++) {
            double y = 2 * unif(&r) - 1;
            c[i] = z[i] = 0;
            km_face_piece(KM_LOSS_RLA, y, 1, 0, 0, 0, &lo[i], &hi[i], &a[i], &d[i]);
        }
        rc = walk(cg, n, K, lo, hi, a, d, 1e-9, 1e12, c, z, &gain, &work, curv);
        double G = 0;   /* G(c) - G(0) = c'Kc/2 - y'c on rla's box */
        for (int64_t i = 0; i < n; i++) {
            double Kc = 0;
            for (int64_t j = 0; j < n; j++)
                Kc += K[i * n + j] * c[j];
            G += c[i] * Kc / 2 + a[i] * c[i];
        }
        /* (the dense path's ridge of at most 1e6 mu cannot make K + mu I definite: it does
         * not walk; CG takes steepest descent where it meets negative curvature) */
        CHECK(rc == 0 && gain >= 0 && (cg == 0 || gain > 0) && fabs(G + gain) <= 1e-9 * gain,
              "%s: on a box (d = 0) nothing is reported, G falls by the gain (%.3g)",
              cg ? "CG" : "Cholesky", gain);
    }
    free(V);
    free(K);
    free(tau);
    free(v);
}

static solved solve(const km_problem *P, const km_kernel *k, km_loss loss, double C, double eps,
                    double delta, int no_walk, int threads, int64_t max_iter)
{
    km_cd_param par = km_cd_param_default();
    par.loss = loss;
    par.eps = eps;
    par.delta = delta;
    par.no_walk = no_walk;
    par.max_iter = max_iter;
    return kcd_solve_team(P, k, &par, C, threads, 16 << 20,
                          threads > 1 ? KM_TEAM_CHURN : KM_TEAM_AUTO);
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

/* One thread or two with the walks: the same bits (the walks run on worker 0 alone, over
 * every block). Two threads turn between one worker and two at every check once the rows
 * are restricted (km_kcd_set_team's churn), so the one block is cut mid-solve whatever the
 * machine's load. l1svm: the dense walk, which did run (the plain rule's c differs); rls:
 * the CG walk (all 4,396 coefficients free). */
static void test_threads(void)
{
    km_kernel k = {KM_KERNEL_LINEAR, 1, 0, 1, 0};
    const struct {
        km_loss loss;
        int seed;
        int64_t max_iter;
        const char *walk;
    } cases[] = {{KM_LOSS_L1SVM, 41, 24, "walk"}, {KM_LOSS_RLS, 43, 60, "CG walk"}};
    for (int q = 0; q < 2; q++) {
        km_loss loss = cases[q].loss;
        km_problem *P = unscaled_problem(KM_KCD_PAR_MIN + 300, 3, loss == KM_LOSS_L1SVM,
                                         cases[q].seed);
        solved a = solve(P, &k, loss, 1, 0, 0, 0, 1, cases[q].max_iter);
        solved b = solve(P, &k, loss, 1, 0, 0, 0, 2, cases[q].max_iter);
        size_t bytes = (size_t)P->l * sizeof(double);
        CHECK(a.rc == KM_OK && b.rc == KM_OK && (loss != KM_LOSS_RLS || a.res.converged) &&
              memcmp(a.c, b.c, bytes) == 0 && memcmp(a.z, b.z, bytes) == 0 &&
              a.res.iter == b.res.iter,
              "%s, %lld rows, unscaled: -n 1 and -n 2 give the same bits with the %s (%lld "
              "sweeps, gap %.3g)", km_loss_name(loss), (long long)P->l, cases[q].walk,
              (long long)a.res.iter, a.res.gap);
        if (loss == KM_LOSS_L1SVM) {
            solved u = solve(P, &k, loss, 1, 0, 0, 1, 1, cases[q].max_iter);
            CHECK(u.rc == KM_OK && memcmp(a.c, u.c, bytes) != 0,
                  "the walk ran (c differs from the plain rule's; gaps %.3g, %.3g)",
                  a.res.gap, u.res.gap);
            release(&u);
        }
        release(&a);
        release(&b);
        km_problem_free(P);
    }
}

/* The conjugate-gradient walk in the solver, on unscaled sets of more rows than KM_KWALK_MAX
 * (all free: CG), under three kernels of the same values up to the offset: the linear one
 * (products through the features, X_W (X_W'p)), the linear one with an offset (K + 1, as
 * -B 1: b^2 (sum p) added), and the degree-1 polynomial (gamma 1, coef0 0: x'x' again, but
 * through the rows: a 16 MB cache stores 1,398 of the 1,500 rows of K_WW, the others are
 * computed at each product). rls: LAPACK's ridge solution (K + I/C) c = y to 1e-8 relative
 * at -e 1e-14, and convergence at the default gap (the plain rule does not, in the same
 * sweeps); the linear kernel's c differs in its bits from the polynomial's (whose rows hold
 * the same values: the feature path ran) and agrees with it to 1e-8. l2svm (curvature
 * 1/(2C) on every piece): the gap from a dense K at the default, and at -e 1e-12 an
 * objective within the default gap of it. */
static void test_solve_cg(void)
{
    const km_kernel kernels[] = {{KM_KERNEL_LINEAR, 1, 0, 1, 0},
                                 {KM_KERNEL_LINEAR, 1, 0, 1, 1},
                                 {KM_KERNEL_POLY, 1, 0, 1, 0}};
    const char *names[] = {"linear (features)", "linear + 1 (features)", "poly 1 (rows)"};
    double *tight[3] = {NULL, NULL, NULL};
    km_problem *P = unscaled_problem(KM_KWALK_MAX + 500, 5, 0, 91);
    int64_t l = P->l;
    double C = 1;
    for (int kk = 0; kk < 3; kk++) {
        const km_kernel *k = &kernels[kk];
        double *K = dense_K(k, P), *A = malloc((size_t)(l * l) * sizeof *A);
        double *ref = malloc((size_t)l * sizeof *ref), err = 0, nref = 0;
        for (int64_t i = 0; i < l; i++) {
            for (int64_t j = 0; j < l; j++)
                A[i * l + j] = K[i * l + j] + (i == j ? 1 / C : 0);
            ref[i] = P->y[i];
        }
        int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', (lapack_int)l, 1, A, (lapack_int)l, ref,
                                 1);
        solved t = solve(P, k, KM_LOSS_RLS, C, 0, 1e-14, 0, 1, 2000);
        for (int64_t i = 0; i < l; i++) {
            err = fmax(err, fabs(t.c[i] - ref[i]));
            nref = fmax(nref, fabs(ref[i]));
        }
        CHECK(info == 0 && t.rc == KM_OK && t.res.converged && err <= 1e-8 * nref,
              "rls, %s, %lld rows (> %d: the CG walk), unscaled: LAPACK's ridge solution (max "
              "error %.3g of %.3g, %lld sweeps)", names[kk], (long long)l, KM_KWALK_MAX, err,
              nref, (long long)t.res.iter);
        solved a = solve(P, k, KM_LOSS_RLS, C, 0, 0, 0, 1, 300);
        solved u = solve(P, k, KM_LOSS_RLS, C, 0, 0, 1, 1, 300);
        double Pa = primal_P(KM_LOSS_RLS, K, P->y, a.c, l, C, 0);
        double Da = -dual_G(KM_LOSS_RLS, K, P->y, a.c, l, C, 0, NULL);
        CHECK(a.rc == KM_OK && a.res.converged && (Pa - Da) / Pa <= 1.001e-5,
              "rls, %s, CG walk: converged at the default in %lld sweeps, gap %.3g from a "
              "dense K", names[kk], (long long)a.res.iter, (Pa - Da) / Pa);
        CHECK(u.rc == KM_OK && !u.res.converged,
              "rls, %s, no walk: the cap of 300 sweeps (gap %.3g)", names[kk], u.res.gap);
        tight[kk] = t.c;
        t.c = NULL;
        release(&t);
        release(&a);
        release(&u);
        free(K);
        free(A);
        free(ref);
    }
    double dif = 0, nc = 0;
    for (int64_t i = 0; i < l; i++) {
        dif = fmax(dif, fabs(tight[0][i] - tight[2][i]));
        nc = fmax(nc, fabs(tight[2][i]));
    }
    CHECK(memcmp(tight[0], tight[2], (size_t)l * sizeof(double)) != 0 && dif <= 1e-8 * nc,
          "rls: the linear kernel through the features and the degree-1 polynomial through the "
          "rows differ in the bits (the feature path ran) by at most %.3g of %.3g", dif, nc);
    for (int kk = 0; kk < 3; kk++)
        free(tight[kk]);
    km_problem_free(P);
    P = unscaled_problem(KM_KWALK_MAX + 500, 5, 1, 92);
    for (int kk = 0; kk < 3; kk += 2) {
        const km_kernel *k = &kernels[kk];
        double *K = dense_K(k, P);
        solved a = solve(P, k, KM_LOSS_L2SVM, C, 0, 0, 0, 1, 300);
        solved u = solve(P, k, KM_LOSS_L2SVM, C, 0, 1e-12, 0, 1, 2000);
        double Pa = primal_P(KM_LOSS_L2SVM, K, P->y, a.c, l, C, 0);
        double Da = -dual_G(KM_LOSS_L2SVM, K, P->y, a.c, l, C, 0, NULL);
        double Pu = primal_P(KM_LOSS_L2SVM, K, P->y, u.c, l, C, 0);
        double Du = -dual_G(KM_LOSS_L2SVM, K, P->y, u.c, l, C, 0, NULL);
        CHECK(a.rc == KM_OK && a.res.converged && (Pa - Da) / Pa <= 1.001e-5 &&
              u.rc == KM_OK && u.res.converged && Pu <= Pa && Pa - Pu <= 1.001e-5 * Pa &&
              (Pu - Du) / Pu <= 1e-11,
              "l2svm, %s, %lld rows, unscaled: converged at the default in %lld sweeps, gap "
              "%.3g from a dense K; at -e 1e-12 in %lld (gap %.3g)", names[kk], (long long)l,
              (long long)a.res.iter, (Pa - Da) / Pa, (long long)u.res.iter, (Pu - Du) / Pu);
        release(&a);
        release(&u);
        free(K);
    }
    km_problem_free(P);
}

/* A kernel that is not positive semidefinite at working precision: the degree-3 polynomial
 * kernel on features near 3000 (K's entries ~1e20, rounding ~1e4) under rls with C = 1:
 * the smallest eigenvalue of the stored K + I/C (LAPACK's dsyevr on the dense K here) is
 * negative, and the solver stops with KM_EINPUT saying so, for one thread or two, and
 * whether the walk takes the dense path or CG (200 and 1,200 rows). The same rows scaled
 * down 1000x converge. */
static void test_not_psd(void)
{
    km_kernel k = {KM_KERNEL_POLY, 1, 0, 3, 0};
    const int64_t sizes[] = {200, KM_KWALK_MAX + 200};
    for (int t = 0; t < 2; t++) {
        km_problem *P = random_problem(sizes[t], 3, 1.0, 0, 101 + t);
        for (int64_t q = 0; q < P->nnz; q++)
            P->value[q] = 3000 + 300 * P->value[q];
        int64_t l = P->l;
        double lam = NAN;
        if (t == 0) {
            double *K = dense_K(&k, P), *w = malloc((size_t)l * sizeof *w);
            for (int64_t i = 0; i < l; i++)
                K[i * l + i] += 1;
            lapack_int found = 0, *isup = malloc(2 * sizeof *isup);
            if (LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'N', 'I', 'L', (lapack_int)l, K, (lapack_int)l,
                               0, 0, 1, 1, 0, &found, w, NULL, 1, isup) == 0 && found == 1)
                lam = w[0];
            free(K);
            free(w);
            free(isup);
            CHECK(lam < 0, "the stored K + I/C has a negative eigenvalue (%.3g)", lam);
        }
        for (int n = 1; n <= 2; n++) {
            solved s = solve(P, &k, KM_LOSS_RLS, 1, 0, 0, 0, n, 300);
            CHECK(s.rc == KM_EINPUT && strstr(s.err.msg, "not positive semidefinite at "
                                                         "working precision"),
                  "%lld rows, -n %d: the solver says so (%s)", (long long)l, n, s.err.msg);
            release(&s);
        }
        for (int64_t q = 0; q < P->nnz; q++)
            P->value[q] /= 1000;
        solved s = solve(P, &k, KM_LOSS_RLS, 1, 0, 0, 0, 1, 2000);
        CHECK(s.rc == KM_OK && s.res.converged, "scaled 1000x down: converged (gap %.3g)",
              s.res.gap);
        release(&s);
        km_problem_free(P);
    }
}

int main(void)
{
    test_walk_monotone();
    test_walk_rls_closed_form();
    test_walk_indefinite();
    test_solve_cg();
    test_not_psd();
    test_solve();
    test_threads();
    TEST_EXIT();
}
