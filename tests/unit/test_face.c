/* test_face.c - the subspace step of the linear dual CD solver (face.h, cd.c) on badly
 * conditioned, unscaled data: every loss converges at the default stopping rule within the
 * default cap, certified by a duality gap computed here (weak duality: P(w) - P* <= P - D),
 * rls equals LAPACK's ridge solution, the dual never decreases, and plain CD (the kernel
 * solver on the same linear kernel, which has no subspace step) does not converge there. */
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "face.h"
#include "kernel.h"
#include "loss.h"
#include "rng.h"
#include "test.h"
#include "testutil.h"

#define NF 4

/* Unscaled, nearly collinear rows: x = (100 + 3u, 100 + 3u', 1000 (1 + 0.02u''), u'''),
 * every row close to (100, 100, 1000, 0.5); labels from the small deviations. */
static km_problem *unscaled_problem(int64_t l, int classify, uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    km_problem *P = problem_alloc(l, NF, l * NF);
    for (int64_t i = 0; i < l; i++) {
        double u[NF];
        for (int j = 0; j < NF; j++)
            u[j] = unif(&r);
        double x[NF] = {100 + 3 * u[0], 100 + 3 * u[1], 1000 * (1 + 0.02 * u[2]), u[3]};
        for (int j = 0; j < NF; j++) {
            P->index[i * NF + j] = j;
            P->value[i * NF + j] = x[j];
        }
        P->row_ptr[i + 1] = (i + 1) * NF;
        double noise = 0.3 * (2 * unif(&r) - 1);
        double s = u[0] - u[1] + 2 * (u[3] - 0.5) + noise;
        P->y[i] = classify ? (s > 0 ? 1 : -1) : 3 + 2 * s + 0.002 * x[2];
    }
    P->nnz = l * NF;
    return P;
}

/* Dense l x dim copy of X (the bias column last when bias >= 0). */
static double *dense_X(const km_problem *P, double bias, int dim)
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

/* P(w) = ||w||^2/2 + C sum L(y_i, x_i'w) and D(c) = -||X'c||^2/2 - sum C L*(y_i, -c_i/C),
 * both computed here from dense X; *wdiff gets max |w - X'c| / max(1, |w|). */
static void primal_dual(km_loss loss, const double *X, const double *y, int64_t l, int dim,
                        double C, double eps, const double *w, const double *c, double *Pv,
                        double *Dv, double *wdiff)
{
    double p = 0, d = 0, wd = 0, wn = 1;
    for (int j = 0; j < dim; j++) {
        double u = 0;
        for (int64_t i = 0; i < l; i++)
            u += c[i] * X[i * dim + j];
        p += w[j] * w[j] / 2;
        d -= u * u / 2;
        wd = fmax(wd, fabs(w[j] - u));
        wn = fmax(wn, fabs(w[j]));
    }
    for (int64_t i = 0; i < l; i++) {
        double z = 0;
        for (int j = 0; j < dim; j++)
            z += X[i * dim + j] * w[j];
        p += C * loss_value_by_hand(loss, y[i], z, eps);
        d -= conj_by_hand(loss, y[i], c[i], C, eps);
    }
    *Pv = p;
    *Dv = d;
    *wdiff = wd / wn;
}

static const double C_of[KM_LOSS_SVR + 1] = {1, 1, 1, 1, 1};
#define EPS 0.1

/* The default (gap 1e-5, cap 10,000) converges on every loss, with and without a bias;
 * the gap is certified by P and D computed here. */
static void test_converges(void)
{
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++)
        for (int b = 0; b < 2 && km_face_loss(loss); b++) {   /* the losses of Table 2.1 */
            double bias = b ? 1 : -1;
            int dim = NF + b;
            km_problem *P = unscaled_problem(300, km_loss_is_classification(loss),
                                             40 + (uint64_t)loss);
            double *X = dense_X(P, bias, dim), C = C_of[loss];
            double *w = calloc(NF + 1, sizeof *w), *c = calloc((size_t)P->l, sizeof *c);
            km_cd_result r = linear_solve(P, loss, C, EPS, bias,
                                          km_cd_param_default().max_iter, 0, w, c);
            double Pv, Dv, wd;   /* w[NF] is the bias weight (dim = NF + 1 with a bias) */
            primal_dual(loss, X, P->y, P->l, dim, C, EPS, w, c, &Pv, &Dv, &wd);
            CHECK(r.converged == 1 && r.gap <= KM_CD_DEFAULT_GAP,
                  "%s, bias %g: the default converges on unscaled data (%lld macro-iterations, "
                  "gap %.3g)", km_loss_name(loss), bias, (long long)r.iter, r.gap);
            CHECK(isfinite(Dv) && wd <= 1e-9 && (Pv - Dv) / Pv <= KM_CD_DEFAULT_GAP * (1 + 1e-6) &&
                      fabs(Pv - r.primal) <= 1e-9 * Pv,
                  "%s, bias %g: certificate computed here: (P - D)/P = %.3g <= 1e-5, c feasible, "
                  "w = X'c (to %.2g), P = the solver's", km_loss_name(loss), bias,
                  (Pv - Dv) / Pv, wd);
            free(X); free(w); free(c);
            km_problem_free(P);
        }
}

/* rls: the closed form (X'X + I/C) w = X'y by LAPACK. */
static void test_rls_closed_form(void)
{
    km_problem *P = unscaled_problem(300, 0, 77);
    int dim = NF + 1;
    double C = 1, *X = dense_X(P, 1, dim);
    double A[(NF + 1) * (NF + 1)] = {0}, rhs[NF + 1] = {0};
    for (int p = 0; p < dim; p++) {
        for (int q = 0; q < dim; q++)
            for (int64_t i = 0; i < P->l; i++)
                A[p * dim + q] += X[i * dim + p] * X[i * dim + q];
        A[p * dim + p] += 1 / C;
        for (int64_t i = 0; i < P->l; i++)
            rhs[p] += X[i * dim + p] * P->y[i];
    }
    int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', dim, 1, A, dim, rhs, 1);
    double w[NF + 1], *c = calloc((size_t)P->l, sizeof *c);
    km_cd_result r =
        linear_solve(P, KM_LOSS_RLS, C, 0, 1, km_cd_param_default().max_iter, 0, w, c);
    double d = 0, zmin = INFINITY, zmax = -INFINITY, Pw, Pr, Dv, wd;
    for (int64_t i = 0; i < P->l; i++) {
        double z = 0, zr = 0;
        for (int j = 0; j < dim; j++) {
            z += X[i * dim + j] * w[j];
            zr += X[i * dim + j] * rhs[j];
        }
        d = fmax(d, fabs(z - zr));
        zmin = fmin(zmin, zr);
        zmax = fmax(zmax, zr);
    }
    primal_dual(KM_LOSS_RLS, X, P->y, P->l, dim, C, 0, w, c, &Pw, &Dv, &wd);
    primal_dual(KM_LOSS_RLS, X, P->y, P->l, dim, C, 0, rhs, c, &Pr, &Dv, &wd);
    CHECK(info == 0 && r.converged == 1 && d <= 1e-3 * (zmax - zmin) &&
              (Pw - Pr) / Pr <= KM_CD_DEFAULT_GAP && Pw >= Pr * (1 - 1e-12),
          "rls on unscaled data: decision values within %.2g of the range of LAPACK's ridge "
          "solution, objective %.3g above it", d / (zmax - zmin), (Pw - Pr) / Pr);
    free(X); free(c);
    km_problem_free(P);
}

/* The dual never decreases: the run capped at k macro-iterations is the prefix of the run
 * capped at k + 1 (deterministic), so D(c_k), computed here, must not fall with k, across
 * the subspace steps too (tried every 10 macro-iterations). */
static void test_dual_monotone(void)
{
    for (int loss = 0; loss <= KM_LOSS_SVR; loss++) {
        km_problem *P = unscaled_problem(120, km_loss_is_classification(loss),
                                         90 + (uint64_t)loss);
        double *X = dense_X(P, -1, NF), C = C_of[loss];
        double w[NF + 1], *c = calloc((size_t)P->l, sizeof *c), prev = -INFINITY, worst = 0;
        int k, bad = 0;
        for (k = 1; k <= 80; k++) {
            km_cd_result r = linear_solve(P, loss, C, EPS, -1, k, 0, w, c);
            double Pv, Dv, wd;
            primal_dual(loss, X, P->y, P->l, NF, C, EPS, w, c, &Pv, &Dv, &wd);
            dual_step(Dv, &prev, &bad, &worst);
            if (r.converged)
                break;
        }
        CHECK(bad == 0 && isfinite(prev), "%s: the dual never decreases over %d macro-iterations "
              "(%d decreases, worst %.3g)", km_loss_name(loss), k, bad, worst);
        free(X); free(c);
        km_problem_free(P);
    }
}

/* Plain CD, the kernel solver on the same linear kernel (no subspace step), at the same
 * cap: it does not reach the default gap on these data (what the subspace step is for). */
static void test_plain_cd_crawls(void)
{
    for (int loss = 0; loss <= KM_LOSS_SVR; loss += 2) {   /* l1svm, rls, svr */
        km_problem *P = unscaled_problem(300, km_loss_is_classification(loss),
                                         40 + (uint64_t)loss);
        km_kernel kl = {KM_KERNEL_LINEAR, 0, 0, 3, 0};
        km_error err;
        km_kdata *Xd = km_kdata_new(P, NULL, P->l, &err);
        km_kmatrix *K = km_kmatrix_new(&kl, Xd, 8 << 20, 1, &err);
        double *Cv = malloc((size_t)P->l * sizeof *Cv), *c = malloc((size_t)P->l * 8);
        double *z = malloc((size_t)P->l * 8);
        for (int64_t i = 0; i < P->l; i++)
            Cv[i] = C_of[loss];
        km_cd_param par = km_cd_param_default();
        par.loss = loss;
        par.eps = EPS;
        par.rule = KM_RULE_RANDOM;
        km_cd_result rk = {0};
        int rc = km_cd_kernel(K, P->y, Cv, &par, c, z, &rk, &err);
        double w[NF + 1];
        km_cd_result rl = linear_solve(P, loss, C_of[loss], EPS, -1, par.max_iter, 0, w, c);
        CHECK(rc == KM_OK && !rk.converged && rk.gap > 10 * KM_CD_DEFAULT_GAP && rl.converged == 1,
              "%s: plain CD stops at the cap (gap %.3g after %lld), with the subspace step "
              "gap %.3g after %lld", km_loss_name(loss), rk.gap, (long long)rk.iter, rl.gap,
              (long long)rl.iter);
        km_kmatrix_free(K);
        km_kdata_free(Xd);
        free(Cv); free(c); free(z);
        km_problem_free(P);
    }
}

/* km_face_piece: the piece holds c (or starts at it, in the direction of descent), and
 * phi (conj_by_hand) is a t + d t^2/2 + const on it. */
static void test_pieces(void)
{
    km_rng r;
    km_rng_seed(&r, 5);
    for (int loss = 0; loss < KM_LOSS_COUNT; loss++) {
        int bad = 0, nfree = 0;
        if (!km_face_loss(loss)) {   /* not piecewise quadratic (logistic): never free */
            double lo, hi, a, d;
            for (int t = 0; t < 100; t++)
                nfree += km_face_piece(loss, 1, 1, 0.1, 0.5 * unif(&r), 4 * unif(&r) - 2, &lo,
                                       &hi, &a, &d);
            CHECK(nfree == 0, "%s: km_face_piece frees no coefficient of a loss the step does "
                  "not know (%d freed)", km_loss_name(loss), nfree);
            continue;
        }
        for (int t = 0; t < 4000; t++) {
            double y = km_loss_is_classification(loss) ? (unif(&r) < .5 ? -1 : 1) : 4 * unif(&r) - 2;
            double C = 0.5 + unif(&r), eps = 0.3, z = 4 * unif(&r) - 2, c;
            double q = unif(&r);   /* on a bound or kink a third of the time */
            double lo0 = loss == KM_LOSS_L1SVM ? fmin(0, y * C) : -C;
            double hi0 = loss == KM_LOSS_L1SVM ? fmax(0, y * C) : C;
            if (loss == KM_LOSS_L2SVM)
                lo0 = y > 0 ? 0 : -3, hi0 = y > 0 ? 3 : 0;
            c = q < 0.15 ? lo0 : q < 0.3 ? hi0 : q < 0.35 ? 0 : lo0 + (hi0 - lo0) * unif(&r);
            if (isinf(conj_by_hand(loss, y, c, C, eps)))
                continue;
            double lo, hi, a, d;
            if (!km_face_piece(loss, y, C, eps, c, z, &lo, &hi, &a, &d))
                continue;
            nfree++;
            int ok = lo <= c && c <= hi && lo < hi;
            if (c == lo)   /* from its lower end: descends upwards */
                ok &= z + a + d * c < 0;
            if (c == hi)
                ok &= z + a + d * c > 0;
            double t1 = fmax(lo, -5) + (fmin(hi, 5) - fmax(lo, -5)) * 0.3;
            double t2 = fmax(lo, -5) + (fmin(hi, 5) - fmax(lo, -5)) * 0.8;
            double lhs = conj_by_hand(loss, y, t2, C, eps) - conj_by_hand(loss, y, t1, C, eps);
            double rhs = a * (t2 - t1) + d * (t2 * t2 - t1 * t1) / 2;
            ok &= fabs(lhs - rhs) <= 1e-12 * (1 + fabs(lhs));
            bad += !ok;
        }
        CHECK(bad == 0 && nfree > 1000, "%s: km_face_piece gives the piece of phi that holds c "
              "or descends from it (%d free, %d wrong)", km_loss_name(loss), nfree, bad);
    }
}

/* A rank-1 Cholesky downdate against a fresh factor. */
static void test_downdate(void)
{
    enum { N = 6 };
    km_rng r;
    km_rng_seed(&r, 9);
    double B[N * 8], M[N * N] = {0}, x[N], L[N * N], L2[N * N];
    for (int i = 0; i < N * 8; i++)
        B[i] = 2 * unif(&r) - 1;
    for (int i = 0; i < N; i++)
        x[i] = 0.5 * (2 * unif(&r) - 1);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            for (int k = 0; k < 8; k++)
                M[i * N + j] += B[i * 8 + k] * B[j * 8 + k];
            M[i * N + j] += (i == j) + x[i] * x[j];
        }
    memcpy(L, M, sizeof L);
    LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', N, L, N);
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            L[i * N + j] = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            M[i * N + j] -= x[i] * x[j];
    memcpy(L2, M, sizeof L2);
    LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', N, L2, N);
    int rc = km_face_chol_downdate(L, N, x);
    double d = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++)
            d = fmax(d, fabs(L[i * N + j] - L2[i * N + j]));
    CHECK(rc == 0 && d < 1e-12, "Cholesky downdate equals the factor of M - xx' (max diff %.2g)", d);
}

/* km_face_ipm on random box QPs (m rows, nf dense features, boxes [lo, hi] around 0, a
 * random linear term, d = 0 on half the coefficients): the returned c lies strictly inside
 * its box, w = X'c, and the gap certificate computed here, G(c) - LB(w) with LB the
 * Lagrangian bound -||w||^2/2 + sum_i min over the box of (x_i'w + a_i) t + d_i t^2/2, is
 * at most its tolerance (relative); on a strongly convex instance (every d > 0) G equals
 * that of projected coordinate descent written here, run to its fixed point. */
static double ipm_G(int64_t m, int nf, const double *X, const double *a, const double *d,
                    const double *c, double *w, double *LB, const double *lo, const double *hi)
{
    double G = 0, lb = 0;
    for (int j = 0; j < nf; j++)
        w[j] = 0;
    for (int64_t i = 0; i < m; i++)
        for (int j = 0; j < nf; j++)
            w[j] += X[i * nf + j] * c[i];
    for (int j = 0; j < nf; j++) {
        G += w[j] * w[j] / 2;
        lb -= w[j] * w[j] / 2;
    }
    for (int64_t i = 0; i < m; i++) {
        double z = 0;
        for (int j = 0; j < nf; j++)
            z += X[i * nf + j] * w[j];
        G += a[i] * c[i] + d[i] * c[i] * c[i] / 2;
        double q = z + a[i], best = INFINITY;   /* the min over the box: its ends or vertex */
        double cand[3] = {lo[i], hi[i], d[i] > 0 ? -q / d[i] : lo[i]};
        for (int k = 0; k < 3; k++) {
            double t = cand[k] < lo[i] ? lo[i] : cand[k] > hi[i] ? hi[i] : cand[k];
            double v = q * t + d[i] * t * t / 2;
            best = v < best ? v : best;
        }
        lb += best;
    }
    *LB = lb;
    return G;
}

static void test_ipm(void)
{
    for (int inst = 0; inst < 4; inst++) {
        int64_t m = inst < 2 ? 400 : 60;
        int nf = inst < 2 ? 30 : 8, strong = inst >= 2;
        double scale = inst == 1 ? 100 : 1;   /* unscaled rows: norms ~ 100 x */
        km_rng r;
        km_rng_seed(&r, 90 + (uint64_t)inst);
        double *X = malloc((size_t)m * nf * sizeof *X), *lo = malloc(m * sizeof *lo),
               *hi = malloc(m * sizeof *hi), *a = malloc(m * sizeof *a),
               *d = malloc(m * sizeof *d), *c = calloc(m, sizeof *c),
               *cc = calloc(m, sizeof *cc), *w = malloc(nf * sizeof *w), *wc = malloc(nf * sizeof *wc);
        for (int64_t i = 0; i < m; i++) {
            for (int j = 0; j < nf; j++)
                X[i * nf + j] = scale * (2 * unif(&r) - 1);
            double y = unif(&r) < 0.5 ? -1 : 1, C = 0.1 + 10 * unif(&r);
            lo[i] = y > 0 ? 0 : -C;   /* l1svm's box, or rla's (inst 1) */
            hi[i] = y > 0 ? C : 0;
            if (inst == 1)
                lo[i] = -C, hi[i] = C;
            a[i] = -y;
            d[i] = strong || i % 2 ? 0.5 * unif(&r) + (strong ? 0.1 : 0) : 0;
        }
        double gap = 0, work = 0, tol = strong ? 1e-8 : 1e-6;   /* the solver asks 1e-6 */
        int rc = km_face_ipm(m, nf, X, lo, hi, a, d, tol, 60, c, w, &gap, &work);
        double LB, G = ipm_G(m, nf, X, a, d, c, wc, &LB, lo, hi), wd = 0, out = 0;
        for (int j = 0; j < nf; j++)
            wd = fmax(wd, fabs(w[j] - wc[j]) / fmax(1, fabs(wc[j])));
        for (int64_t i = 0; i < m; i++)
            out += !(lo[i] < c[i] && c[i] < hi[i]);
        CHECK(rc == 0 && gap <= tol && out == 0 && wd <= 1e-10 &&
                  (G - LB) / fmax(fabs(G), fabs(LB)) <= 2 * tol && work > 0,
              "ipm, %lld x %d%s: gap certificate computed here (G - LB)/|G| = %.3g <= %g, c "
              "strictly inside its box (%g outside), w = X'c (to %.2g)", (long long)m, nf,
              inst == 1 ? " unscaled (x 100), rla's box" : strong ? " strongly convex" : "",
              (G - LB) / fmax(fabs(G), fabs(LB)), tol, out, wd);
        if (strong) {   /* projected coordinate descent, exact per coordinate, here */
            double *z = calloc(nf, sizeof *z);
            for (int sweep = 0; sweep < 20000; sweep++) {
                double maxh = 0;
                for (int64_t i = 0; i < m; i++) {
                    double kii = d[i], gi = a[i] + d[i] * cc[i];
                    for (int j = 0; j < nf; j++) {
                        kii += X[i * nf + j] * X[i * nf + j];
                        gi += X[i * nf + j] * z[j];
                    }
                    double ci = cc[i] - gi / kii;
                    ci = ci < lo[i] ? lo[i] : ci > hi[i] ? hi[i] : ci;
                    for (int j = 0; j < nf; j++)
                        z[j] += (ci - cc[i]) * X[i * nf + j];
                    maxh = fmax(maxh, fabs(ci - cc[i]));
                    cc[i] = ci;
                }
                if (maxh < 1e-14)
                    break;
            }
            double LB2, G2 = ipm_G(m, nf, X, a, d, cc, wc, &LB2, lo, hi);
            CHECK(fabs(G - G2) <= 1e-7 * fabs(G2),
                  "ipm, %lld x %d strongly convex: G = %.12g, projected CD here %.12g",
                  (long long)m, nf, G, G2);
            free(z);
        }
        free(X);
        free(lo);
        free(hi);
        free(a);
        free(d);
        free(c);
        free(cc);
        free(w);
        free(wc);
    }
}

int main(void)
{
    test_pieces();
    test_downdate();
    test_ipm();
    test_converges();
    test_rls_closed_form();
    test_dual_monotone();
    test_plain_cd_crawls();
    TEST_EXIT();
}
