/* okl.h - low-rank output kernel learning (seed 001, Dinuzzo and Fukumizu): block
 * coordinate descent on (A, B), Algorithm 1, along a regularization path. */
#ifndef KM_OKL_H
#define KM_OKL_H

#include <stdint.h>

#include "error.h"

/*
 * Problem (4): min over A (l x p), B (m x p) of
 *   Q(A, B) = ||Y - K A B'||_F^2 / (2 lambda) + <A, K A>_F / 2 + ||B||_F^2 / 2,
 * equivalent to (1)-(2) with the output kernel L = B B' of rank <= p (Theorem 5). The
 * learned function is g(x) = B A' k(x), k(x) = (K(x_1, x) .. K(x_l, x))': the codes
 * g1(x) = A' k(x) (p numbers) decoded by B (section 3.1).
 *
 * Algorithm 1 as implemented: K = U diag(s) U' once (dsyevd); Y~ = U'Y; then alternately
 * the A-step (lines 5-7: B'B = W diag(t) W', V = (Y~ B W) ./ (s t' + lambda)) and the
 * B-step (lines 9-10: E = diag(s) V, B = Y~' E (E'E + lambda I)^-1 W'), until
 * ||B - B_prev||_F < delta sqrt(alpha) (the seed's "until ... >= delta" is a typo; the
 * factor sqrt(alpha) makes the test invariant to the scale of Y: Y -> cY scales lambda
 * and alpha by c and B by sqrt(c)); finally A = U V W' for the last B.
 *
 * Reduction (beyond the paper): after one B-step B = Y~' M with M = E (E'E + lambda I)^-1
 * W' (l x p), so with G = Y~ Y~' (l x l) every later step runs on l x p and p x p matrices:
 * Y~ B = G M, B'B = M' G M, ||B - B_prev||_F^2 = tr(D' G D) with D = M - M_prev. An
 * iteration costs O(l^2 p + p^3), independent of the number of outputs m; B itself is
 * formed only on request (km_okl_B, O(l m p)). No m x m matrix is ever formed.
 *
 * Path (section 5.3): lambdas from large to small, each warm-started from the previous B;
 * the first from B = I (m x p). For lambda >= alpha = sqrt(||Y'KY||_2) the solution is
 * L = 0 (Lemma 8: C = Y / lambda satisfies (11)-(13)): returned without iterations, and
 * the next lambda starts again from B = I (B = 0 is a fixed point of the iteration).
 *
 * Beyond the paper (unless plain = 1), two additions that keep Algorithm 1's fixed points:
 * - Anderson acceleration (memory 5, in the metric of B) of the map x -> T(x) of one
 *   iteration: the extrapolated trial replaces T(x) only when it lowers Q(A*(B), B), so Q
 *   still never increases, and the stopping test is on the plain step T(x) - x. At small
 *   lambda, where the plain iteration crawls, it needs an order of magnitude fewer
 *   iterations (doc/okl.md).
 * - Saddle escape by Lemma 8: at a converged B of rank < p, C of (11) is the residual over
 *   lambda and ||C'KC||_2 comes from an l x l eigenproblem; if it exceeds 1 (condition (13)
 *   fails) the point is a saddle (the plain iteration stops at such points when a warm
 *   start lacks a direction), so its top eigenvector is added to B and the iteration
 *   goes on. A returned B of rank < p thus satisfies (13) to 1e-3: a certified global
 *   optimum of (6).
 *
 * Baseline (identity = 1): the output kernel fixed to L = I, i.e. independent RLS per
 * output, C = (K + lambda I)^-1 Y; then A = C (l x m) and B = I.
 */
typedef struct km_okl_param {
    int p;              /* rank of L (1 <= p <= m); p > l works as p = l, which loses
                         * nothing: an optimal L has rank <= rank K <= l (Lemma 8) */
    double delta;       /* stop when ||B - B_prev||_F < delta sqrt(alpha) (default 1e-6) */
    int64_t max_iter;   /* cap on iterations per lambda (default 10000) */
    int identity;       /* 1: the baseline L = I instead of learning L */
    int plain;          /* 1: Algorithm 1 as printed: no acceleration, no saddle escape */
} km_okl_param;

km_okl_param km_okl_param_default(void);

typedef struct km_okl km_okl;

/* Prepares a path over K (l x l, symmetric PSD, row-major) and Y (l x m, row-major:
 * Y[i * m + j] = output j of example i); optional validation data Kv (lv x l: kernel of
 * validation row a and training row i at a * l + i) and Yv (lv x m), or lv = 0. Does the
 * eigendecomposition of K, Y~ = U'Y and the products that make every later step O(l^2 p).
 * The caller's matrices are not kept. */
km_okl *km_okl_new(const double *K, const double *Y, int64_t l, int64_t m, const double *Kv,
                   const double *Yv, int64_t lv, const km_okl_param *par, km_error *err);
void km_okl_free(km_okl *O);

/* alpha = sqrt(||Y'KY||_2), computed as the largest eigenvalue of S^1/2 G S^1/2. */
double km_okl_alpha(const km_okl *O);

typedef struct km_okl_info {
    double lambda;
    double objective;   /* Q(A, B) of (4) at the returned pair (with tr(L)/2 = m/2 for L = I) */
    int rank;           /* rank of L = B B': eigenvalues of B'B above 1e-10 of the largest */
    int64_t iter;       /* iterations of Algorithm 1 (0 when lambda >= alpha, and for L = I) */
    int converged;      /* 0 when max_iter stopped it */
    double train_mse;   /* ||Y - K A B'||_F^2 / (l m) */
    double valid_mse;   /* same on the validation data (NaN without them) */
} km_okl_info;

/* Solves (4) at lambda > 0, warm-started from the current B; fills *info. Afterwards
 * km_okl_A / km_okl_B give the solution. */
int km_okl_solve(km_okl *O, double lambda, km_okl_info *info, km_error *err);

/* Codes dimension: min(p, l), or m for the baseline L = I. */
int64_t km_okl_ncodes(const km_okl *O);

/* The solution's A (l x ncodes, row-major), optimal for the returned B (uses O's work
 * space, hence not const). */
void km_okl_A(km_okl *O, double *A);

/* The solution's B (m x p, row-major); KM_EUSAGE for the baseline (B = I). */
int km_okl_B(const km_okl *O, double *B, km_error *err);

/* The eigenvalues of L = B B' (the p eigenvalues of B'B, descending). */
void km_okl_L_eigenvalues(const km_okl *O, double *t);

/* Keeps a copy of the current solution; km_okl_recall makes it current again (for A, B and
 * as the next warm start). Costs O(l p) memory, allocated with O. */
void km_okl_keep(km_okl *O);
void km_okl_recall(km_okl *O);

#endif
