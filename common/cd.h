/* cd.h - coordinate descent for regularized kernel methods (thesis Algorithms 1 and 2). */
#ifndef KM_CD_H
#define KM_CD_H

#include <stdint.h>

#include "error.h"
#include "kernel.h"
#include "loss.h"
#include "problem.h"

/* Index rules. The thesis' rules of 2.3.1 are "essentially cyclic", so Theorem 11 applies;
 * the greedy rules (kernel solver only: they need z = Kc for every coefficient) pick the
 * coordinate that gains most. */
typedef enum {
    KM_RULE_RANDOM,   /* randomized cyclic: a new permutation every macro-iteration */
    KM_RULE_CYCLIC,   /* 1, ..., l */
    KM_RULE_AITKEN,   /* Aitken double sweep: forward, then backward, alternating */
    KM_RULE_GRADIENT, /* greedy, first order: the largest step |h_i| */
    KM_RULE_GREEDY,   /* greedy, second order: the largest decrease of the dual */
    KM_RULE_AUTO      /* the default: random for the linear solver, the best greedy rule
                         for kernels */
} km_rule;

/* The rule called name ("random", "cyclic", "aitken", "gradient", "greedy", "auto"), or
 * -1. */
int km_rule_from_name(const char *name);
const char *km_rule_name(km_rule rule);

/* 1 for the rules of the greedy kernel solver (kcd.h): gradient, greedy, auto. */
int km_rule_is_greedy(km_rule rule);

/* Stopping rules. */
typedef enum {
    KM_STOP_GAP,      /* relative duality gap (F - D) / F <= delta (the default): checked on
                         an estimate at the end of each macro-iteration, certified by the
                         exact gap over every coefficient (z made exact) before stopping */
    KM_STOP_STEP      /* the thesis' rule: max_i |h_i| < delta over a macro-iteration */
} km_stop;

typedef struct km_cd_param {
    km_loss loss;
    double eps;          /* svr's epsilon */
    km_stop stop;
    double delta;        /* the tolerance of the stopping rule; <= 0: the default,
                            KM_CD_DEFAULT_GAP for the gap, for the step rule
                            KM_CD_DEFAULT_TOL / mean_i k_ii (see below) */
    km_rule rule;
    uint64_t seed;       /* for KM_RULE_RANDOM */
    int64_t max_iter;    /* cap on macro-iterations */
    int shrinking;       /* drop coefficients stuck on a flat piece of S_i; the final
                            check runs over all coefficients, so the fixed point is unchanged */
    int no_walk;         /* 1: no active-set walk when the gap stalls (face.h; linear:
                            linear_face_step, kernels: km_face_kwalk); 0: the default */
    /* Called after every macro-iteration (may be NULL). */
    void (*progress)(void *user, int64_t iter, double max_h, int64_t active);
    void *user;
    const double *c_init;  /* NULL: start from c = 0; else a warm start from these m
                              coefficients (feasible: c_i in -C_i dL(y_i, .), e.g. a solution
                              at another C mapped by km_start_coef, linear.h); rows with k_ii <= 0 keep
                              their own start. Every solver (linear, kernel CD, greedy, fixed
                              point) reaches the same optimum from it. */
} km_cd_param;

/*
 * The default relative duality gap: scale-free (a ratio of objective values), and an upper
 * bound on the relative primal gap (F - F*)/F of the returned c. Chosen by measurement
 * (relative primal gap to a solve certified at 1e-9; linear solver, C = 1, svr p = 0.1, on
 * a9a, w8a, ijcnn1 x l1svm, l2svm, svr): at 1e-3 2.0e-4 .. 5.7e-4, at 1e-4 1.2e-5 ..
 * 7.4e-5, at 1e-5 1.0e-6 .. 8.6e-6, at 1e-6 below 9e-7. 1e-5 is 20x inside LIBSVM's default
 * accuracy (2e-4 on its benchmark sets, issue 11) and inside LIBLINEAR's default on 8 of
 * the 9 (w8a l2svm: liblinear -s 1 stops at 4.7e-7); kernel ijcnn1 RBF: 5e-6. RLS: the
 * decision values within 5e-4 of their range from the closed form (heart_scale, linear
 * kernel; the linear solver and RBF closer). 1e-6 costs up to 5x the sweeps on the linear
 * l1svm/svr tails (w8a svr: 27,000 sweeps against 5,169) and 1.5x the kernel steps.
 */
#define KM_CD_DEFAULT_GAP 1e-5

/*
 * The default delta of the step rule. h_i is the change of c_i, about (gradient of the dual
 * in i) / k_ii, so a fixed delta is loose where rows have large norms and strict where they
 * are normalised. The default puts the tolerance on the gradient scale instead: delta =
 * 0.05 / mean_i k_ii (0.05 for unit-norm rows, about LIBLINEAR's default eps = 0.1 on
 * max PG - min PG).
 */
#define KM_CD_DEFAULT_TOL 0.05

/* Defaults: l2svm, eps 0.1, the gap rule, delta automatic (0), rule auto, seed 1,
 * KM_CD_DEFAULT_MAX_ITER macro-iterations, shrinking. */
km_cd_param km_cd_param_default(void);

/*
 * Shrinking drops a coefficient that stays on a flat piece of S_i (h_i = 0) when it lies
 * deeper inside it than this factor times the largest |h| of the previous macro-iteration
 * (the final check visits every coefficient, so the fixed point does not depend on it).
 * 1 keeps anything the last sweep's largest step could reach and shrinks late: a9a l1svm
 * visits all 32,561 coefficients for 12 sweeps. Measured (linear solver, C = 1, a9a, w8a,
 * ijcnn1, reuters-lasvm x l1svm, l2svm at gap 1e-3 and svr at 0.03, solve time): 0.5 takes
 * 0.59-0.97x the time of 1 (a9a l1svm 0.70x, w8a l1svm 0.59x), one case 1.2x (reuters-lasvm
 * l1svm, 5 ms); at the default gap 0.69-1.03x, though up to 1.5x the sweeps (w8a svr 7,599,
 * each cheaper). 0.2 and 0.05 gain more on some sets and lose on others.
 */
#define KM_CD_SHRINK 0.5

/* The default cap on macro-iterations. Without the linear solver's subspace step the long
 * tails of l1svm and svr needed more than 1000 (mostly cheap, shrunk) sweeps at
 * KM_CD_DEFAULT_GAP (w8a svr 7,599, a9a l1svm 1,781) and badly conditioned data (unscaled
 * satimage, housing) crawled at a gap near 1 to this cap. With it (doc/linear-solver.md)
 * the linear solver converges on those at the default gap in at most ~1,100 sweeps
 * (unscaled satimage l1svm, the slowest measured) and needs 32-5,115 on the sets above
 * (w8a svr the most);
 * the kernel solver (no subspace step) can still run into the cap on unscaled data, which
 * then stops with a warning in seconds rather than minutes. */
#define KM_CD_DEFAULT_MAX_ITER 10000

typedef struct km_cd_result {
    int64_t iter;        /* macro-iterations run */
    int converged;       /* 0 if max_iter was reached first */
    double max_h;        /* max |h_i| of the last macro-iteration */
    double delta;        /* the tolerance used */
    double primal;       /* F at the returned c */
    double gap;          /* its relative duality gap (F - D) / F, whatever the rule */
} km_cd_result;

/*
 * The linear kernel on rows of a sparse problem: K = X X' over the rows listed in
 * rows[0..m) (all rows in order if rows is NULL, m = P->l). If bias >= 0, every row
 * gets an extra constant feature of value bias (as LIBLINEAR's -B), stored at w[n].
 */
typedef struct km_linear_data {
    const km_problem *P;
    const int64_t *rows;
    int64_t m;
    double bias;
} km_linear_data;

/* Length of w for this data: P->n + 1 (the last entry is the bias weight, 0 if none). */
int64_t km_linear_dim(const km_linear_data *d);

/*
 * Algorithm 2: minimizes F(w) = sum_i C[i] L(y[i], w'x_i) + ||w||^2/2 by coordinate
 * descent on c, keeping w = sum_i c_i x_i up to date. y and C have m entries; w gets
 * km_linear_dim() entries and c (may be NULL) m entries. Starts from c = 0.
 */
int km_cd_linear(const km_linear_data *d, const double *y, const double *C,
                 const km_cd_param *par, double *w, double *c, km_cd_result *res,
                 km_error *err);

/* z = w'x_i for row i of P (features beyond dim are ignored; bias as above). */
double km_linear_decision(const km_problem *P, int64_t i, const double *w, int32_t n,
                          double bias);

/* The primal objective F(w) above. */
double km_linear_objective(const km_linear_data *d, const double *y, const double *C,
                           km_loss loss, double eps, const double *w);

/*
 * Algorithm 1: minimizes F(c) = sum_i C[i] L(y[i], (Kc)_i) + c'Kc/2 by coordinate descent,
 * keeping z = Kc up to date (one kernel row per changed coefficient). c and z get m =
 * km_kmatrix_size(K) entries. Starts from c = 0.
 */
int km_cd_kernel(km_kmatrix *K, const double *y, const double *C, const km_cd_param *par,
                 double *c, double *z, km_cd_result *res, km_error *err);

/*
 * The primal F(c) = sum_i C_i L(y_i, z_i) + c'z/2 and the duality gap F(c) - D(c) of c with
 * z = Kc (see km_loss_conj), each summed over the coordinates i in [lo, hi) in increasing
 * order: out[0] += primal part, out[1] += gap part. Callers that split the work sum fixed
 * blocks in order, so the result has the same bits whatever the number of threads.
 */
void km_cd_gap_terms(km_loss loss, double eps, const double *y, const double *C,
                     const double *c, const double *z, int64_t lo, int64_t hi, double out[2]);

/* (F - D) / F over all m coordinates (0 when F = 0; NaN when F or F - D is not finite),
 * summed in blocks of KM_GAP_BLOCK; *primal gets F. */
#define KM_GAP_BLOCK 4096
double km_cd_relative_gap(km_loss loss, double eps, const double *y, const double *C,
                          const double *c, const double *z, int64_t m, double *primal);

/* Step size of the fixed-point iteration: alpha = 1/tr(K) or 1/||K||_2 (power iteration). */
typedef enum { KM_ALPHA_TRACE, KM_ALPHA_NORM2 } km_alpha_rule;

/*
 * Fixed-point (Jacobi) iteration (2.10): z = Kc; v = alpha z - c; c = -J_alpha(v), from
 * c = 0. Stops (KM_STOP_GAP) when the relative gap of c, checked with each exact z = Kc, is
 * <= delta (default KM_CD_DEFAULT_GAP), or (KM_STOP_STEP) when max_i |c_i change| < delta
 * (default: KM_CD_DEFAULT_TOL * alpha, the coordinate-descent default on the same scale).
 * res->primal and res->gap are those of the returned c. The product Kc runs on threads.
 * par->rule, seed and shrinking do not apply. z gets Kc of the returned c.
 */
int km_fixedpoint(km_kmatrix *K, const double *y, const double *C, const km_cd_param *par,
                  km_alpha_rule rule, int threads, double *c, double *z, km_cd_result *res,
                  km_error *err);

#endif
