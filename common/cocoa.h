/* cocoa.h - CoCoA+ (Ma et al. 2015; Smith et al., "CoCoA: a general framework for
 * communication-efficient distributed optimization") for the linear solver of the five losses
 * of Table 2.1: each rank runs one epoch of dual coordinate descent on its own rows against
 * the local subproblem with sigma' = R (adding, gamma = 1), then one allreduce adds the
 * changes of w. Stops on the global relative duality gap. Rows are spread over ranks by
 * km_dist_partition (hash of (seed, line), so that sorted files do not give each rank one
 * class). */
#ifndef KM_COCOA_H
#define KM_COCOA_H

#include <stdint.h>

#include "cd.h"
#include "dist.h"
#include "kmtk.h"

typedef struct km_cocoa_param {
    km_cd_param cd;     /* loss, eps, delta (relative gap; <= 0: KM_CD_DEFAULT_GAP), seed,
                           max_iter (rounds); rule, stop, shrinking do not apply */
    double bias;        /* < 0: none */
    double sigma;       /* sigma' of the local subproblem; <= 0: R (safe for adding) */
    int rounds_at_1;    /* 1: the round algorithm even at R = 1 (else serial CD runs: at
                           R = 1, sigma' = 1 and the subproblem is the problem) */
} km_cocoa_param;

typedef struct km_cocoa_result {
    int64_t rounds;
    int converged;
    double primal;      /* global F(w) of the returned w (from the gap terms) */
    double gap;         /* its global relative duality gap */
    double delta;
    km_dist_stats comm; /* this rank's communication during the solve */
} km_cocoa_result;

/*
 * Minimizes F(w) = sum_i C_i L(y_i, w'x_i) + ||w||^2/2 over the rows of all ranks; this rank
 * holds the rows of P (local, P->n <= n), y and C of its P->l rows. w gets n + 1 entries (the
 * bias weight last), the same bits on every rank; c (may be NULL) this rank's coefficients.
 * Each round: one local epoch in the order of a permutation from (seed, rank, round), then one
 * allreduce of 8 (n + 3) bytes: the change of w (n + 1) and the two sums of the gap terms of
 * the w the round started from (km_cd_gap_terms' F and F - D), so the stopping test costs no
 * extra collective; the w returned is the last one certified (gap <= delta) or, at the cap,
 * the last one.
 */
int km_cocoa_linear(km_dist *d, const km_problem *P, int32_t n, const double *y,
                    const double *C, const km_cocoa_param *par, double *w, double *c,
                    km_cocoa_result *res, km_error *err);

/* How rows are spread over ranks. */
typedef enum { KM_PART_HASH, KM_PART_BYTES } km_partition;

/*
 * Spreads rows over ranks: rank r holds the rows of P (single-output), whose global line
 * numbers are line[0..P->l) (increasing); hash sends row i to rank h(seed, line) mod R
 * (alltoallv), bytes keeps them. *out gets the rows this rank ends with, in increasing line
 * order (*out_line their lines, may be NULL).
 */
int km_dist_partition(km_dist *d, const km_problem *P, const int64_t *line, km_partition part,
                      uint64_t seed, km_problem **out, int64_t **out_line, km_error *err);

/*
 * The whole training of a linear model by CoCoA+ for method m (one of the five losses) with
 * parameters p (C, epsilon, bias, -w weights, tolerance, seed, max_iter), on the rows each
 * rank holds: labels gathered, binary or one-versus-all as km_train, the model (the same on
 * every rank) in *out, a summary in rep (rounds, objective, gap, communication).
 */
int km_cocoa_train(km_dist *d, const km_method *m, const km_problem *P, const km_params *p,
                   int rounds_at_1, km_model **out, km_report *rep, km_error *err);

/*
 * km_fixedpoint (cd.h, the fixed-point iteration (2.10)) with the rows of K over the ranks of
 * the communicator installed for this thread (km_dist_current): each rank computes its block
 * of rows of z = Kc, z is gathered (allgatherv), and every rank takes the O(m) steps 2 and 3
 * and the gap. Each z_i is summed in km_kmatrix_matvec's order for a K held in memory, so
 * the result has train's bits, for every R, when all of K fits the cache (-m); the step
 * rule 1/||K||_2 and the case of no communicator run km_fixedpoint itself.
 */
int km_dist_fixedpoint(km_kmatrix *K, const double *y, const double *C, const km_cd_param *par,
                       km_alpha_rule rule, int threads, double *c, double *z, km_cd_result *res,
                       km_error *err);

#endif
