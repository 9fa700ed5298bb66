/* rls2lin.h - linear RLS2 (thesis 4.3: rank-one basis kernels K~^k = x^k x^k') solved as the
 * scaled squared-l1 problem (4.9), glmnet-style: coordinate descent on a working set with
 * warm starts along the path, Newton steps on the support, and the optimality check over
 * every kernel by safe bounds instead of a pass over all of them. km_rls2 selects it for
 * banks of rank-one kernels (rls2.h); Algorithm 3 stays the general solver. */
#ifndef KM_RLS2LIN_H
#define KM_RLS2LIN_H

#include <stdint.h>

#include "error.h"
#include "rls2.h"

/*
 * With a_k = sqrt(s_k) x^k (A = [a_1 ... a_m]) and b_k = w_k / sqrt(s_k), (4.9) reads
 *
 *     P(b) = ||y - A b||^2 / (2 lambda) + ||b||_1^2 / 2,
 *
 * and its optimal value is the optimal value of (4.1) (Lemma 7). The dual of (4.1) over c,
 * D(c) = y'c - lambda ||c||^2 / 2 - max_k (a_k'c)^2 / 2 (min over the simplex of the
 * concave problem in c, exchanged), is at most that value for every c; at c = t (y - Ab) /
 * lambda with the best t it is (y'r)^2 / (2 (lambda ||r||^2 + max_k (a_k'r)^2)), r = y - Ab.
 * A solve stops when the duality gap P - D <= tol P (the objective is then certified within
 * tol, relative, of the optimum), or when b meets the optimality conditions
 * (|a_k'r| <= lambda ||b||_1, with equality and the sign of b_k where b_k != 0) exactly up
 * to rounding: a Newton step ended at the minimizer on the support's orthant, a sweep then
 * moved no coordinate in or out, and no kernel violates them.
 *
 * The solution maps back as the thesis says ((4.7) and the proof of Lemma 7):
 * d_k = |b_k| / ||b||_1, c = (y - Ab) / lambda, K(d)c = sum_k d_k a_k a_k'c.
 */
typedef struct km_rls2lin km_rls2lin;

/* x[k] = x^k (l values each, kept by the caller), scales s (s_k = 0 leaves kernel k out),
 * outputs y (copied). */
km_rls2lin *km_rls2lin_new(int64_t l, int m, const double *const *x, const double *s,
                           const double *y, km_error *err);
void km_rls2lin_free(km_rls2lin *L);

/* The next solve starts cold (b = 0: Lemma 6's kernel first). */
void km_rls2lin_restart(km_rls2lin *L);

/*
 * (4.9) at lambda > 0 from the last solution (the warm start of a path), until the
 * stopping rule above or after max_sweeps sweeps over the working set. Writes d (m), c (l)
 * and fit = K(d)c (l), and info: iter = sweeps, converged, kernels, objective (4.1) at
 * (c, d), residual ||(K(d) + lambda I)c - y|| / ||y|| (Algorithm 3's test), seconds.
 */
int km_rls2lin_solve(km_rls2lin *L, double lambda, double tol, int max_sweeps, double *d,
                     double *c, double *fit, km_rls2_info *info, km_error *err);

#endif
