/* polymkl.h - randomized mirror-descent MKL for polynomial kernels (seed 002, Afkanpour,
 * Gyorgy, Szepesvari, Bowling), with the corrections of issue 15 (doc/polymkl.md).
 *
 * Base kernels kappa_1..kappa_r over n rows (K_j their n x n matrices). The index set I is
 * the ordered tuples t = (r_1..r_d), 0 <= d <= D, 0 <= r_i < r, kappa_t = prod kappa_{r_i}
 * (d = 0: the constant 1), so that (sum_j kappa_j)^d = sum_{|t| = d} kappa_t and
 * S^{o d} = sum_{|t| = d} K_t (S = sum_j K_j, o the Hadamard power). Weights rho_d^2 > 0.
 *
 *   J(theta) = min_f 1/2 sum_i (f(x_i) - y_i)^2 + lambda/2 ||f||^2_{H_theta}
 *            = (lambda/2) y'c,   c = (K_theta + lambda I)^{-1} y,
 *   K_theta = sum_t theta_t rho_d^{-2} K_t,   theta >= 0, ||theta||_2 <= 1,
 *   g_t = dJ/dtheta_t = -(lambda/2) c'K_t c / rho_d^2      (the paper's (12) without 1/2)
 *   ||g||_1 = (lambda/2) sum_d delta(d),   delta(d) = rho_d^{-2} c'S^{o d} c,
 *   D(c) = lambda (y'c - lambda/2 ||c||^2) - lambda/2 ||beta||_2 <= J* <= J(theta),
 *          beta_t = c'K_t c / rho_d^2  (a dual bound: J* = min_theta max_c, swapped).
 *
 * Algorithm 3 (corrected line 6): d with probability delta(d) / sum delta; M_0 = cc'; for
 * i = 1..d, z_i = j with probability <M_{i-1} o K_j, S^{o(d-i)}> / <M_{i-1}, S^{o(d-i+1)}>,
 * M_i = M_{i-1} o K_{z_i}: the tuple t with probability |g_t| / ||g||_1. For rank-one base
 * kernels K_j = x_j x_j' (a linear kernel on one feature) M_i = v v', v = c o x_{z_1} o ..
 * o x_{z_i}, and a step is one product S^{o m} diag(v) X: O(r n^2).
 *
 * Algorithm 2 (projected stochastic gradient on the quadrant of the l2 ball): with the
 * estimate -||g||_1 e_{I_k}, theta_{I_k} += gamma_k ||g||_1, gamma_k = gamma_0 / sqrt(k)
 * (by default divided by C_0 = ||g||_1 at theta = 0, so that the step is scale-free),
 * then theta <- theta / max(1, ||theta||_2). theta is kept as scale * theta~ in a hash map
 * keyed by tuple, K_theta = scale * K~ with K~ updated by one K_t per step.
 */
#ifndef KM_POLYMKL_H
#define KM_POLYMKL_H

#include <stdint.h>

#include "error.h"
#include "rng.h"

enum { KM_POLY_ALG3, KM_POLY_UNIFORM, KM_POLY_FULL };   /* samplers */
enum { KM_POLY_STOCH, KM_POLY_KLOFT };                  /* solvers */

typedef struct km_polymkl km_polymkl;

/* A problem over n rows, y (n), degree D >= 0, rho2[0..D] > 0, lambda > 0, and r base
 * kernels: rank-one X (n x r, column j = x_j, column-major; K_j = x_j x_j') when X is not
 * NULL, else K (r dense n x n matrices, column-major, symmetric, all entries). The arrays
 * are copied. theta starts at 0. */
km_polymkl *km_polymkl_new(int64_t n, int r, const double *X, const double *const *K,
                           const double *y, int D, const double *rho2, double lambda,
                           km_error *err);
void km_polymkl_free(km_polymkl *S);

/* |I| = sum_{d <= D} r^d, or -1 when it exceeds 2^62. Tuples are numbered degree by
 * degree, then lexicographically: index(t) = sum_{e < d} r^e + sum_i r_i r^{d-1-i}. */
int64_t km_polymkl_count(const km_polymkl *S);
/* The tuple of an index: *d and idx[0..d). */
void km_polymkl_tuple(const km_polymkl *S, int64_t index, int *d, int32_t *idx);

/* Sets theta = the tuples (count of them, degree d[k], indices idx[k * D ..]) with weights
 * w (> 0; repeated tuples add up), ||theta|| not checked; then the c-step. */
int km_polymkl_set_theta(km_polymkl *S, int64_t count, const int *d, const int32_t *idx,
                         const double *w, km_error *err);

/* The number of distinct orderings m_t = d! / prod_j k_j! of a tuple (k_j: how often base
 * kernel j occurs in it). */
double km_polymkl_orderings(int d, const int32_t *idx);

/* The monomial adjustment (on != 0): every tuple t gets rho_t^2 = rho_d^2 sqrt(m_t), so that
 * the problem over ordered tuples is the problem over distinct monomials (products of
 * base kernels up to order) with weight rho_d^2 each: a monomial's m_t orderings share its
 * weight equally at the optimum, theta_mono = sqrt(m_t) theta_t keeps ||theta||_2, and
 * m_t theta_t / rho_t^2 = theta_mono / rho_d^2. (Conversely the plain problem is the
 * distinct-monomial one with rho_mono^2 = rho_d^2 / sqrt(m_t).) Algorithm 3 still draws
 * from the rho_d distribution; the step is weighted by rho_d^2 / rho_t^2 (importance
 * sampling), and delta / ||g||_1 (km_polymkl_delta, the trace's g1) are Algorithm 3's.
 * theta is reset to 0; then the c-step. */
int km_polymkl_set_monomial(km_polymkl *S, int on, km_error *err);

/* A new lambda (> 0), theta kept; then the c-step. */
int km_polymkl_set_lambda(km_polymkl *S, double lambda, km_error *err);

/* The c-step at the current theta: c and J (Cholesky of K_theta + lambda I). */
int km_polymkl_solve(km_polymkl *S, km_error *err);
const double *km_polymkl_c(const km_polymkl *S);
double km_polymkl_J(const km_polymkl *S);

/* delta[0..D] at the current c; returns ||g||_1 = (lambda/2) sum delta. */
double km_polymkl_delta(km_polymkl *S, double *delta);

/* Algorithm 3: draws a tuple (*d, idx[0..d)) with rng; returns its probability (the
 * product of the conditional probabilities of the draws). With rng NULL it draws nothing
 * and returns the probability of the given tuple (*d, idx). */
double km_polymkl_sample(km_polymkl *S, km_rng *rng, int *d, int32_t *idx, km_error *err);

/* beta[index] = c'K_t c / rho_d^2 for every tuple (|I| values) by enumeration; returns
 * ||beta||_2, or -1 with err set (out of memory). */
double km_polymkl_beta(km_polymkl *S, double *beta, km_error *err);

/* The dual bound D(c) from beta's norm (above). */
double km_polymkl_dual(const km_polymkl *S, double beta_norm);

typedef struct km_polymkl_param {
    int64_t iters;        /* iterations of Algorithm 2, or of the closed form (Kloft) */
    double seconds;       /* > 0: also stop after this much CPU time */
    double step;          /* gamma_0 */
    int literal_step;     /* 1: theta_t += gamma_k ||g||_1 as in issue 15; 0: divided by
                             C_0 = ||g(0)||_1 (Corollary 3.3's eta ~ 1/C: scale-free);
                             2: theta_t += gamma_k (the direction of the estimate only) */
    int sampler;          /* KM_POLY_ALG3, _UNIFORM (UCD: uniform tuple, the estimate
                             -|I| |g_t| e_t), _FULL (q by enumeration) */
    int solver;           /* KM_POLY_STOCH or _KLOFT */
    int average;          /* 1: the result is the averaged iterate (1/T) sum_k theta^(k) */
    uint64_t seed;
    int warm;             /* 1: from the current theta (a path of lambdas): Stoch keeps it and
                             steps on with gamma_{k0 + k}; Kloft starts from it when it has
                             every tuple (else from uniform theta) */
    int64_t k0;           /* Stoch, warm: the iterations done before */
    double tol;           /* Kloft: stop when (J - D) / J <= tol */
    double gap_work;      /* evaluate the gap where |I| n (rank-one) or |I| n^2 <= this */
    /* trace rows (iteration, CPU seconds, J, active tuples, ||g||_1, gap or NaN) */
    void (*trace)(void *user, int64_t k, double sec, double J, int64_t active, double g1,
                  double gap);
    void *user;
} km_polymkl_param;

typedef struct km_polymkl_info {
    int64_t iters;
    double J, gap, seconds;   /* gap: NaN where not evaluated */
    int converged;            /* Kloft: gap <= tol */
    int64_t factorizations, cg_steps;   /* of the c-steps (since km_polymkl_new) */
} km_polymkl_info;

/* Runs the solver from theta = 0 (Kloft: uniform theta over all of I), or from the current
 * theta (par->warm); leaves the result's theta and its c in S. */
int km_polymkl_run(km_polymkl *S, const km_polymkl_param *par, km_polymkl_info *info,
                   km_error *err);

/* The current theta: the number of tuples with theta_t > 0; for k below it, the tuple
 * (*d, idx) and theta_t. */
int64_t km_polymkl_active(const km_polymkl *S);
double km_polymkl_theta_at(const km_polymkl *S, int64_t k, int *d, int32_t *idx);
/* ||theta||_2 */
double km_polymkl_theta_norm(const km_polymkl *S);

/* ---- the model kind (model_polymkl.c) ---- */

#include "basis.h"
#include "kmtk.h"

/* polymkl: f(x) = y_mean + y_scale sum_i c_i K_theta(sv_i, z(x)), z(x)_j = (x_j - shift_j) /
 * scale_j (features j < n; sv stored standardized), K_theta(x, x') = sum_t theta_t rho_d^-2
 * prod_i kappa_{r_i}(x, x') over the model's tuples, kappa_j the base kernels. */
extern const km_model_kind km_kind_polymkl;

typedef struct km_polymkl_body {
    km_basis_set basis;   /* r base kernels (on standardized features) */
    int D;
    double *rho2;         /* D + 1 */
    double lambda;
    double *shift, *scale;/* n each */
    double y_mean, y_scale;
    int64_t nt;           /* tuples with theta_t > 0 */
    int *td;              /* their degrees */
    int32_t *tidx;        /* nt * max(D, 1) base kernel indices (0-based) */
    double *theta;
    km_problem *sv;       /* standardized rows */
    double *c;
    /* linear base kernels on one feature each: the explicit polynomial form
     * f = y_mean + y_scale sum_t poly[t] prod_q z_{feat[r_q]}, poly[t] = theta_t rho_d^-2
     * sum_i c_i prod_q sv_i[feat[r_q]]: derived when train makes the model (unless use_sv
     * is set then) and stored in the file (header key poly_form); read from a file that
     * has it (NULL otherwise: a file without poly_form predicts with the support vector
     * form). predict uses it unless use_sv is set */
    int32_t *feat;
    double *poly;
    int use_sv;
    int mono;             /* rho_t^2 = rho_d^2 sqrt(m_t) (header key rho_monomial 1) */
} km_polymkl_body;

/* Turns m (regression, nr_w 1) into a polymkl model; every array of b is owned by m from now
 * on, also on failure (b's struct is copied and zeroed). */
int km_model_set_polymkl(km_model *m, km_polymkl_body *b, km_error *err);

#endif
