/* mtmkl.h - multi-task multiple kernel learning (seed 004, Widmer, Kloft, Ratsch): task
 * similarity kernels G_1..G_M (T x T, PSD, possibly singular) weighted by theta in the
 * l_p ball, the hinge loss, the linear kernel on the inputs; dual coordinate ascent
 * (the corrected (E.3)-(E.4)) with the closed-form theta step (the corrected (E.1)),
 * Algorithm E.1, stopped on the relative duality gap of Problem 3 (doc/mtmkl.md).
 *
 * Storage independent of theta (as SHOGUN's LibLinearMTL): each G_m is kept as factors
 * G_m = sum_k lambda_k q_k q_k' (a group mask 1_S 1_S' is one factor with q = 1_S; a
 * general PSD matrix its eigenvectors with lambda > 0), and per factor the d-vector
 * g_k = sum_s q_k[s] v_s with v_s = sum_{i in task s} c_i x_i, c_i = y_i alpha_i. Then
 *   z_i = x_i'U[:, t] with U = V G_theta, U[:, t] = sum_m theta_m sum_{k in m}
 *         lambda_k q_k[t] g_k,
 *   beta_m = c'K~_m c = sum_{k in m} lambda_k ||g_k||^2,
 * and a change h of c_i adds h q_k[t] x_i to the g_k of the factors with q_k[t] != 0.
 */
#ifndef KM_MTMKL_H
#define KM_MTMKL_H

#include <stdint.h>

#include "error.h"
#include "kernel.h"
#include "problem.h"

/* One factor lambda q q' of the task kernel G_m. */
typedef struct km_mtmkl_factor {
    int m;               /* the task kernel it belongs to, 0..M-1 */
    double lambda;       /* > 0 */
    int32_t nq;          /* tasks with q[t] != 0 */
    int32_t *task;       /* their indices (0..T-1), increasing */
    double *q;           /* their entries of q */
} km_mtmkl_factor;

/* The task kernels over T tasks (task index t <-> id task_id[t], increasing). */
typedef struct km_mtmkl_tasks {
    int32_t T;
    int64_t *task_id;
    int M;
    char **name;         /* M kernel names (a group's ids as written), for reports */
    int32_t nf;
    km_mtmkl_factor *f;
} km_mtmkl_tasks;

void km_mtmkl_tasks_free(km_mtmkl_tasks *k);

/* The task ids of P's rows (qid) merged with ids[0..nids), sorted, unique, into *k (M = 0
 * yet). KM_EINPUT when a row has no qid. */
int km_mtmkl_tasks_init(km_mtmkl_tasks *k, const km_problem *P, const int64_t *ids,
                        int64_t nids, km_error *err);

/* Adds a group kernel 1_S 1_S' over the task ids S[0..n) (each must be a task of k). */
int km_mtmkl_add_group(km_mtmkl_tasks *k, const int64_t *S, int64_t n, const char *name,
                       km_error *err);

/* Adds a general PSD kernel G (T x T, row-major over k's task indices) as its
 * eigen-factors (LAPACK dsyevd; eigenvalues below -1e-10 max|eig| are an error: not PSD). */
int km_mtmkl_add_matrix(km_mtmkl_tasks *k, const double *G, const char *name, km_error *err);

/* Adds the identity G = I as one kernel: T factors e_t e_t' (the Individual baseline). */
int km_mtmkl_add_identity(km_mtmkl_tasks *k, const char *name, km_error *err);

/* Reads a groups file: one group per line, task ids separated by blanks or commas, ranges
 * A-B; '#' comments, blank lines skipped; each group a kernel. The ids of every line are
 * returned in *ids / *ptr (nlines + 1 offsets) for km_mtmkl_tasks_init and add_group. */
int km_mtmkl_read_groups(const char *path, int64_t **ids, int64_t **ptr, int64_t *nlines,
                         km_error *err);

/* Reads a similarity file: lines "m a b value" (kernel m from 1, task ids a b; symmetric: b a
 * is set too). *trip gets ntrip (m, a, b, value) quadruples as doubles. */
int km_mtmkl_read_sim(const char *path, double **trip, int64_t *ntrip, int *M, km_error *err);

typedef struct km_mtmkl_param {
    double C;            /* > 0 */
    double p;            /* the l_p norm of theta, >= 1 */
    double eps;          /* stop when (P - D) / P <= eps */
    int64_t max_iter;    /* cap on passes */
    uint64_t seed;       /* the random permutations */
    int fixed;           /* 1: theta = M^{-1/p} fixed (Vanilla): no theta step, the SVM dual */
    void (*progress)(void *user, int64_t pass, double primal, double gap);
    void *user;
    const km_kernel *kernel;   /* NULL: the linear mode above (g_k); else the kernel mode:
                                  per factor s_k = K (q_k o c) over the rows, kept up to date
                                  from the rows of K (a cache of cache_bytes) */
    size_t cache_bytes;
    int own_cd;          /* 1: always this module's passes; 0: one task kernel that is a
                            multiple of 11' (Union, or T = M = 1) is the l1svm problem and
                            goes to cd.c's linear solver (km_cd_linear; doc/mtmkl.md) */
    int no_walk;         /* 1: p = 1 by E.1's theta steps alone, without the Newton walk
                            (doc/mtmkl.md; for comparisons) */
} km_mtmkl_param;

typedef struct km_mtmkl_result {
    int32_t d;           /* input dimension (features) */
    double *theta;       /* M kernel weights */
    double *beta;        /* M values c'K~_m c */
    double *g;           /* nf * d: the factors' vectors g_k, row-major (linear mode) */
    double *alpha;       /* l dual coefficients in [0, C] */
    double primal, dual, gap;
    int64_t passes;
    int converged;
} km_mtmkl_result;

void km_mtmkl_result_free(km_mtmkl_result *r);

/* Trains on the rows of P (labels y = +-1 in ylab, l values; tasks from P->qid) with the
 * task kernels k. */
int km_mtmkl_train(const km_problem *P, const double *ylab, const km_mtmkl_tasks *k,
                   const km_mtmkl_param *par, km_mtmkl_result *r, km_error *err);

/* The task index of id (binary search), or -1. */
int32_t km_mtmkl_task(const km_mtmkl_tasks *k, int64_t id);

/* q_k[t] of a factor (0 when it does not touch task t; t < 0: the mean over the tasks). */
double km_mtmkl_factor_q(const km_mtmkl_tasks *k, const km_mtmkl_factor *F, int32_t t);

/* z = x'U[:, t] for task t (t < 0: the average task, (1/T) sum_t U[:, t]) of a sparse row
 * (features >= d ignored). */
double km_mtmkl_decision(const km_mtmkl_tasks *k, const double *theta, const double *g,
                         int32_t d, int32_t t, const int32_t *index, const double *value,
                         int64_t nnz);

#endif
