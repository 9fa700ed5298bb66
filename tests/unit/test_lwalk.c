/* test_lwalk.c - the linear solver's walk on the coefficient side (cd.c, linear_kside):
 * unscaled, nearly collinear rows over more features than the feature-side (Woodbury)
 * walk takes (KM_FACE_MAXDIM). Every loss the walk knows converges at the default stopping
 * rule, certified by a primal and a dual computed here (weak duality: P(w) - P* <= P - D);
 * rls equals LAPACK's ridge solution; the dual never decreases across the walks; plain CD
 * (no walk) does not converge in the same number of sweeps. */
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "cd.h"
#include "face.h"
#include "loss.h"
#include "rng.h"
#include "test.h"
#include "testutil.h"

#define NF 600   /* features: every row touches all, more than KM_FACE_MAXDIM */

/* Rows x_j = 120 + 8 u_j (j < NF), every row close to (124, ..., 124): k_ii ~ 9e6, the
 * deviations ~ 2e3; labels from the first three deviations. */
static km_problem *wide_problem(int64_t l, int classify, uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    km_problem *P = problem_alloc(l, NF, l * NF);
    for (int64_t i = 0; i < l; i++) {
        double t = 0;
        for (int j = 0; j < NF; j++) {
            double u = unif(&r);
            if (j < 3)
                t += (j == 1 ? -1 : 1) * u;
            P->index[i * NF + j] = j;
            P->value[i * NF + j] = 120 + 8 * u;
        }
        t += 0.3 * (unif(&r) - 0.5) - 0.5;
        P->y[i] = classify ? (t < 0 ? 1 : -1) : 3 + 2 * t;
        P->row_ptr[i + 1] = (i + 1) * NF;
    }
    P->nnz = l * NF;
    return P;
}

#define NS 3000   /* the sparse set's features */
#define NB 5      /* its dense, large columns */
#define NR 40     /* its random small entries per row */

/* Sparse rows: NB large columns 1000 + 20 u in every row (k_ii ~ 5e6) and NR entries u in
 * [0, 1) at random columns among NS - NB (about 1.5% non-zero: K_WW by sparse dots);
 * labels from the small entries (a fixed random weight on each column). */
static km_problem *sparse_problem(int64_t l, int classify, uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    int per = NB + NR;
    km_problem *P = problem_alloc(l, NS, l * per);
    double *wt = malloc(NS * sizeof *wt);
    char *seen = malloc(NS);
    for (int j = 0; j < NS; j++)
        wt[j] = 2 * unif(&r) - 1;
    int64_t k = 0;
    for (int64_t i = 0; i < l; i++) {
        double t = 0;
        memset(seen, 0, NS);
        for (int j = 0; j < NB; j++) {
            P->index[k] = j;
            P->value[k++] = 1000 + 20 * unif(&r);
        }
        int64_t b = k;
        for (int q = 0; q < NR; q++) {
            int j;
            do
                j = NB + (int)(unif(&r) * (NS - NB));
            while (seen[j]);
            seen[j] = 1;
            double u = unif(&r);
            t += wt[j] * u;
            int64_t p = k++;   /* insertion: the indices of a row increase */
            while (p > b && P->index[p - 1] > j) {
                P->index[p] = P->index[p - 1];
                P->value[p] = P->value[p - 1];
                p--;
            }
            P->index[p] = j;
            P->value[p] = u;
        }
        t += 0.3 * (unif(&r) - 0.5);
        P->y[i] = classify ? (t < 0 ? 1 : -1) : 3 + 2 * t;
        P->row_ptr[i + 1] = k;
    }
    P->nnz = k;
    free(wt);
    free(seen);
    return P;
}

/* P(w) = ||w||^2/2 + C sum L(y_i, x_i'w + b w_b) and D(c) = -||X'c||^2/2 - sum C L*(y_i,
 * -c_i/C) (X with the bias column b when b >= 0, w_b = w[n]), from the rows here; *wdiff =
 * max |w - X'c| / max(1, |w|). */
static void primal_dual(km_loss loss, const km_problem *P, double b, double C, double eps,
                        const double *w, const double *c, double *Pv, double *Dv,
                        double *wdiff)
{
    int n = P->n, dim = n + (b >= 0);
    double *u = calloc((size_t)dim, sizeof *u), p = 0, d = 0, wd = 0, wn = 1;
    for (int64_t i = 0; i < P->l; i++) {
        double z = b >= 0 ? b * w[n] : 0;
        for (int64_t k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++) {
            z += P->value[k] * w[P->index[k]];
            u[P->index[k]] += c[i] * P->value[k];
        }
        if (b >= 0)
            u[n] += c[i] * b;
        p += C * loss_value_by_hand(loss, P->y[i], z, eps);
        d -= conj_by_hand(loss, P->y[i], c[i], C, eps);
    }
    for (int j = 0; j < dim; j++) {
        p += w[j] * w[j] / 2;
        d -= u[j] * u[j] / 2;
        wd = fmax(wd, fabs(w[j] - u[j]));
        wn = fmax(wn, fabs(w[j]));
    }
    free(u);
    *Pv = p;
    *Dv = d;
    *wdiff = wd / wn;
}

/* set 0: the dense wide rows (K_WW by dsyrk), 1: the sparse ones (by sparse dots). */
static km_problem *problem(int set, int64_t l, int classify, uint64_t seed)
{
    return set ? sparse_problem(l, classify, seed) : wide_problem(l, classify, seed);
}

static const char *const set_name[2] = {"dense 600-feature", "sparse 3,000-feature"};

#define EPS 0.1
#define L 300

/* Each loss of Table 2.1 the walk knows, with and without a bias, on both sets: the
 * default converges, certified by P and D computed here; plain CD (no walk) in as many
 * sweeps does not. */
static void test_converges(void)
{
    CHECK(NF > KM_FACE_MAXDIM, "the rows touch %d features, more than the feature side's %d",
          NF, KM_FACE_MAXDIM);
    for (int set = 0; set < 2; set++)
        for (int loss = 0; loss < KM_LOSS_COUNT; loss++)
            for (int b = 0; b < 2 && km_face_loss(loss); b++) {
                double bias = b ? 1 : -1, C = 1;
                km_problem *P = problem(set, L, km_loss_is_classification(loss),
                                        60 + (uint64_t)loss);
                double *w = calloc((size_t)P->n + 1, sizeof *w), *c = calloc(L, sizeof *c);
                km_cd_result r = linear_solve(P, loss, C, EPS, bias,
                                              km_cd_param_default().max_iter, 0, w, c);
                double Pv, Dv, wd;
                primal_dual(loss, P, bias, C, EPS, w, c, &Pv, &Dv, &wd);
                CHECK(r.converged == 1 && r.gap <= KM_CD_DEFAULT_GAP,
                      "%s, bias %g, %s: the default converges (%lld sweeps, gap %.3g)",
                      km_loss_name(loss), bias, set_name[set], (long long)r.iter, r.gap);
                CHECK(isfinite(Dv) && wd <= 1e-9 &&
                          (Pv - Dv) / Pv <= KM_CD_DEFAULT_GAP * (1 + 1e-6) &&
                          fabs(Pv - r.primal) <= 1e-9 * Pv,
                      "%s, bias %g, %s: certificate computed here: (P - D)/P = %.3g <= 1e-5, "
                      "c feasible, w = X'c (to %.2g), P = the solver's", km_loss_name(loss),
                      bias, set_name[set], (Pv - Dv) / Pv, wd);
                if (r.converged == 1) {   /* plain CD, as many sweeps */
                    km_cd_result rp = linear_solve(P, loss, C, EPS, bias, r.iter, 1, w, c);
                    CHECK(rp.converged == 0 && rp.gap > 10 * KM_CD_DEFAULT_GAP,
                          "%s, bias %g, %s: plain CD (no walk) in the same %lld sweeps stops "
                          "at gap %.3g", km_loss_name(loss), bias, set_name[set],
                          (long long)r.iter, rp.gap);
                }
                free(w);
                free(c);
                km_problem_free(P);
            }
}

/* rls: the ridge solution (X X' + I/C) c = y, w = X'c, by LAPACK (the l x l side: the
 * features outnumber the rows); the solver's w equals it to 1e-8. */
static void test_rls_closed_form(void)
{
    km_problem *P = wide_problem(L, 0, 77);   /* dense: X X' by the loop below */
    double C = 1, *A = calloc((size_t)L * L, sizeof *A), *cr = malloc(L * sizeof *cr);
    for (int64_t i = 0; i < L; i++) {
        for (int64_t j = 0; j <= i; j++) {
            double s = 1;   /* the bias column, b = 1 */
            for (int k = 0; k < NF; k++)
                s += P->value[i * NF + k] * P->value[j * NF + k];
            A[i * L + j] = A[j * L + i] = s;
        }
        A[i * L + i] += 1 / C;
        cr[i] = P->y[i];
    }
    int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', L, 1, A, L, cr, 1);
    double wr[NF + 1] = {0}, w[NF + 1], *c = calloc(L, sizeof *c);
    for (int64_t i = 0; i < L; i++) {
        for (int k = 0; k < NF; k++)
            wr[k] += cr[i] * P->value[i * NF + k];
        wr[NF] += cr[i];
    }
    km_cd_result r =
        linear_solve(P, KM_LOSS_RLS, C, 0, 1, km_cd_param_default().max_iter, 0, w, c);
    double dw = 0, nw = 0;
    for (int k = 0; k <= NF; k++) {
        dw += (w[k] - wr[k]) * (w[k] - wr[k]);
        nw += wr[k] * wr[k];
    }
    CHECK(info == 0 && r.converged == 1 && sqrt(dw / nw) <= 1e-8,
          "rls, %d x %d unscaled rows, bias 1: w equals LAPACK's ridge solution to %.2g "
          "(relative, 2-norm; %lld sweeps)", L, NF, sqrt(dw / nw), (long long)r.iter);
    free(A);
    free(cr);
    free(c);
    km_problem_free(P);
}

/* The dual never decreases: the run capped at k sweeps is the prefix of the run capped at
 * k + 1 (deterministic), so D(c_k), computed here, must not fall with k, across the walks
 * too (tried from sweep 10 on). */
static void test_dual_monotone(void)
{
    for (int set = 0; set < 2; set++)
        for (int loss = 0; loss <= KM_LOSS_SVR; loss++) {
            if (!km_face_loss(loss))
                continue;
            km_problem *P = problem(set, 150, km_loss_is_classification(loss),
                                    90 + (uint64_t)loss);
            double *w = malloc(((size_t)P->n + 1) * sizeof *w), *c = calloc(150, sizeof *c);
            double prev = -INFINITY, worst = 0;
            int k, bad = 0;
            for (k = 1; k <= 60; k++) {
                km_cd_result r = linear_solve(P, loss, 1, EPS, -1, k, 0, w, c);
                double Pv, Dv, wd;
                primal_dual(loss, P, -1, 1, EPS, w, c, &Pv, &Dv, &wd);
                dual_step(Dv, &prev, &bad, &worst);
                if (r.converged)
                    break;
            }
            CHECK(bad == 0 && isfinite(prev),
                  "%s, %s: the dual never decreases over %d sweeps (%d decreases, worst %.3g)",
                  km_loss_name(loss), set_name[set], k, bad, worst);
            free(w);
            free(c);
            km_problem_free(P);
        }
}

/* The 32-task tree's Union baseline in small (bench/mtmkl/tree.sh): DL dense rows of DF
 * features N(0, 1)-like (a sum of three uniforms), labels from the first ten features
 * drowned in noise. Nearly every row violates the margin and the rows free to move
 * outnumber the features (a degenerate face: the walk pivots one coefficient per
 * direction there), so the interior-point step (km_face_ipm) takes over: l1svm, rla and
 * svr at p = 0 converge in a few dozen sweeps at C = 0.1 and 100, with and without a bias, certified
 * by P and D computed here; plain CD in as many sweeps does not. */
#define DL 640
#define DF 100
static void test_degenerate(void)
{
    km_rng r;
    km_rng_seed(&r, 81);
    km_problem *P = problem_alloc(DL, DF, DL * DF);
    for (int64_t i = 0; i < DL; i++) {
        double t = 0;
        for (int j = 0; j < DF; j++) {
            double x = 20 * (unif(&r) + unif(&r) + unif(&r) - 1.5);
            t += j < 10 ? x : 0;
            P->index[i * DF + j] = j;
            P->value[i * DF + j] = x;
        }
        t += 400 * (unif(&r) - 0.5);
        P->y[i] = t > 0 ? 1 : -1;
        P->row_ptr[i + 1] = (i + 1) * DF;
    }
    P->nnz = DL * DF;
    km_loss losses[3] = {KM_LOSS_L1SVM, KM_LOSS_RLA, KM_LOSS_SVR};   /* svr at p = 0: a box */
    for (int li = 0; li < 3; li++)
        for (int ci = 0; ci < 2; ci++)
            for (int b = 0; b < 2; b++) {
                km_loss loss = losses[li];
                double C = ci ? 100 : 0.1, bias = b ? 1 : -1, Pv, Dv, wd,
                       eps = loss == KM_LOSS_SVR ? 0 : EPS;
                double *w = calloc(DF + 1, sizeof *w), *c = calloc(DL, sizeof *c);
                km_cd_result res = linear_solve(P, loss, C, eps, bias,
                                                km_cd_param_default().max_iter, 0, w, c);
                primal_dual(loss, P, bias, C, eps, w, c, &Pv, &Dv, &wd);
                CHECK(res.converged == 1 && res.iter <= 60 && isfinite(Dv) && wd <= 1e-9 &&
                          (Pv - Dv) / Pv <= KM_CD_DEFAULT_GAP * (1 + 1e-6) &&
                          fabs(Pv - res.primal) <= 1e-9 * Pv,
                      "%s, C %g, bias %g, degenerate 640 x 100: converges in %lld sweeps "
                      "(<= 60), certificate computed here (P - D)/P = %.3g, w = X'c (to "
                      "%.2g), P = the solver's", km_loss_name(loss), C, bias,
                      (long long)res.iter, (Pv - Dv) / Pv, wd);
                km_cd_result rp = linear_solve(P, loss, C, eps, bias, res.iter, 1, w, c);
                CHECK(rp.converged == 0,
                      "%s, C %g, bias %g, degenerate 640 x 100: plain CD (no walk) in the same "
                      "%lld sweeps stops at gap %.3g", km_loss_name(loss), C, bias,
                      (long long)res.iter, rp.gap);
                free(w);
                free(c);
            }
    km_problem_free(P);
}

int main(void)
{
    test_converges();
    test_rls_closed_form();
    test_dual_monotone();
    test_degenerate();
    TEST_EXIT();
}
