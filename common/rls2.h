/* rls2.h - regularized least squares with two layers (RLS2, thesis ch. 4): Algorithm 3,
 * alternating the linear system (4.2) in c with the simplex-constrained least squares (4.4)
 * in d, solved by an SMO-type method. */
#ifndef KM_RLS2_H
#define KM_RLS2_H

#include <stdint.h>

#include "error.h"
#include "kbank.h"

typedef struct km_rls2_param {
    double delta;     /* stop when ||(K(d) + lambda I) c - y|| <= delta ||y|| (thesis: 1e-2) */
    int max_iter;     /* iterations of Algorithm 3 per lambda (a cap that warns) */
    double smo_eps;   /* d-step: stop when the gradient gap <= smo_eps * its scale
                         (0: delta * 1e-4, at least 1e-15) */
    int threads;
    int general;      /* 1: Algorithm 3 also for rank-one kernels (default 0: rls2lin.h) */
} km_rls2_param;

/* delta 1e-2, max_iter 1000, smo_eps 0 (from delta), threads 1, general 0. */
void km_rls2_param_default(km_rls2_param *par);

typedef struct km_rls2_info {
    int iter;         /* iterations of Algorithm 3, or sweeps of rls2lin.h (at least 1) */
    int converged;    /* 0 when max_iter stopped it */
    int kernels;      /* d_k > 0 */
    double objective; /* (4.1) at the returned (c, d) */
    double residual;  /* ||(K(d) + lambda I) c - y|| / ||y|| */
    int64_t smo_steps;
    double seconds;
} km_rls2_info;

/*
 * A problem (4.1): the kernels of B scaled by s (K^k = s_k K~^k; s_k = 0 leaves kernel k
 * out) and outputs y over the rows of B. It keeps d between calls: each solve starts from
 * the last solution (the warm start of a path), the first from Lemma 6.
 *
 * Two economies keep Algorithm 3's iterates (both checked, neither approximate):
 *  - the c-step solves (4.2) by conjugate gradient preconditioned with the last Cholesky
 *    factor of K(d') + lambda' I, from the last c; when it has not converged (relative
 *    residual delta / 10) within about the cost of a factorization, K(d) + lambda I is
 *    formed and factored (LAPACK dpotrf) and solved directly;
 *  - the d-step computes the columns K^k c of V for a working set (the selected kernels
 *    and the last candidates) and screens the others safely with a bound on how far
 *    their stale columns can be from the true ones (rls2.c, d_step): a kernel joins when
 *    the bound cannot rule out that it enters d, so d is (4.4)'s on every kernel.
 *
 * When every kernel of B is rank one (K~^k = x^k x^k': linear RLS2, km_kbank_rank_one) and
 * par->general is 0, the solve is not Algorithm 3 but the solver of the equivalent problem
 * (4.9) in rls2lin.h (coordinate descent and Newton steps), mapped back to (d, c) by
 * (4.7): it stops when the duality gap is at most max(delta^2, 1e-14) of the objective
 * (1e-4 at the default delta) or the optimality conditions hold exactly up to rounding;
 * info->iter counts its sweeps
 * (smo_steps stays 0). Same optimum, d, c and predictions as Algorithm 3 (tested).
 */
typedef struct km_rls2 km_rls2;

km_rls2 *km_rls2_new(const km_kbank *B, const double *s, const double *y,
                     const km_rls2_param *par, km_error *err);
void km_rls2_free(km_rls2 *R);

/* Algorithm 3 (or the linear solver, above) at lambda > 0. */
int km_rls2_solve(km_rls2 *R, double lambda, km_rls2_info *info, km_error *err);

/* The next solve starts cold: from Lemma 6. */
void km_rls2_restart(km_rls2 *R);

const double *km_rls2_d(const km_rls2 *R);    /* m kernel weights */
const double *km_rls2_c(const km_rls2 *R);    /* l coefficients */
const double *km_rls2_fit(const km_rls2 *R);  /* K(d) c at the rows of B */

/* Lemma 6's alignments a_k = y'K^k y (m values). */
int km_rls2_alignment(km_rls2 *R, double *a, km_error *err);

/* Degrees of freedom tr(K(d) (K(d) + lambda I)^-1) at the current d: (4.11) for linear
 * kernels (tr X~ (X~'X~ + lambda Gamma~)^-1 X~' = the same trace), its natural extension
 * otherwise. One Cholesky factorization and inverse (l^3). */
int km_rls2_dof(km_rls2 *R, double lambda, double *df, km_error *err);

/*
 * min ||V d - u||^2 over the simplex (4.4) by SMO: each step moves weight between two
 * coordinates (the one with the largest gradient among d_j > 0 and, by a second-order
 * rule, one with a smaller gradient), with Gram columns V'v_k computed once when first
 * needed. V is l x m column-major; qd its squared column norms (NULL: computed); d (in: a
 * start on the simplex, out: the solution).
 * Columns with skip[k] != 0 are left out (d_k stays 0). Stops when
 * max_{d_j > 0} g_j - min_k g_k <= eps * max_k ||v_k|| ||u|| (g = V'(Vd - u)), checked on
 * a freshly computed gradient, which goes to grad (m values; NULL: not wanted). *steps gets
 * the number of SMO steps.
 */
int km_simplex_ls(const double *V, int64_t l, int m, const double *u,
                  const unsigned char *skip, const double *qd, double eps, double *d,
                  double *grad, int64_t *steps, km_error *err);

#endif
