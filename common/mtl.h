/* mtl.h - client-server multi-task learning with a mixed-effect kernel (thesis ch. 5):
 * the offline solver (Algorithm 4), the incremental server update (Algorithms 5-8) and the
 * client's estimate (Algorithm 9), all in the number n of unique inputs.
 *
 * Problem (5.4): (K + lambda W) c = y over all examples (x_i, t_i, y_i) with weights w_i > 0,
 * K the mixed-effect kernel (5.2): alpha K(x1, x2) + (1 - alpha) [t1 = t2] K~_t1(x1, x2), the
 * individual kernel K~_j of task j the default K~ unless configured for j ("Kernels K and
 * K~_j can possibly be all distinct"). The estimate of task j is (5.3):
 *   g_j(x) = alpha sum_i cbar_i K(xbar_i, x) + (1 - alpha) sum_{i in task j} c_i K~_j(x_i, x),
 * cbar = P'c (5.8) over the unique inputs xbar_1..xbar_n. Repeated inputs of one task are
 * merged into one (w = (sum 1/w_i)^-1, y = w sum y_i/w_i; Case 1 of section 5.3.1): the
 * task's coefficient of a merged input is the sum of the per-example coefficients of (5.4).
 *
 * The factor Kbar = L D L' (5.7) has L unit lower triangular and D diagonal, grown one row per
 * new input (Algorithm 8 lines 3-7). A new pivot beta <= KM_MTL_DROP K(x, x) means x is in
 * the span of the earlier inputs (the linear kernel beyond its rank, a polynomial kernel
 * beyond its dimension): its pivot is set to 0 and its column of L stays zero, so L D L' is
 * the Gram matrix of the inputs projected on the span of the kept ones (rank r < n, as
 * (5.7) allows). With an exactly rank-deficient kernel this is exact to rounding; an input
 * merely within relative distance sqrt(KM_MTL_DROP) of the span moves Kbar by up to that
 * much. Raising small pivots instead (jitter) was tried and dropped: the noise divided by
 * them grew L without bound (poly kernel of rank 15 over 42 inputs: entries 1e300 by the
 * 37th input).
 *
 * Disclosed information (section 5.3): the unique inputs Xbar, ybar and H. Undisclosed: each
 * task's index vector h_j, merged outputs y_j and weights w_j, and R_j.
 *
 * H changes by one rank-one term per triple (Algorithm 5 line 35). The terms are queued and
 * applied KM_MTL_BATCH at a time as one symmetric rank-k update (Woodbury, BLAS-3); a reader
 * of H (km_mtl_disclose, km_mtl_estimate) gets them applied to a copy. The state after a
 * sequence of updates is therefore a function of that sequence alone, bit for bit, whoever
 * read it in between (journal replay gives the identical state).
 */
#ifndef KM_MTL_H
#define KM_MTL_H

#include <stdint.h>

#include "error.h"
#include "kernel.h"
#include "problem.h"

/* A pivot of Kbar = L D L' at most this times K(x, x) is taken as zero (x in the span). */
#define KM_MTL_DROP 1e-12
/* Rank-one terms of H applied together (one dsymm + dsyrk of rank KM_MTL_BATCH). */
#define KM_MTL_BATCH 64
/* Bound on the kernel values K(x, x), K~_j(x, x) of an input, on |y| and on w and 1/w: a
 * triple beyond it is refused (its update would overflow: an expdot kernel of an input of
 * norm 27 is inf). For positive semi-definite kernels |K(x, x')| <= sqrt(K(x, x) K(x', x')),
 * so every kernel value of the state stays within it. */
#define KM_MTL_KMAX 1e100
/* Feature indices (0-based) are below this, so that index + 1 fits an int32_t. */
#define KM_MTL_MAX_INDEX INT32_MAX
/* Most unique inputs a state holds (every n x n size then fits size_t and a BLAS int). */
#define KM_MTL_MAX_INPUTS ((int64_t)1 << 26)

/* The individual kernel K~_j of one task (5.2). */
typedef struct km_mtl_tkernel {
    int64_t task;
    km_kernel kernel;
} km_mtl_tkernel;

typedef struct km_mtl_param {
    double alpha;   /* (5.2) weight of the common kernel, 0 <= alpha <= 1 */
    double lambda;  /* regularization parameter, > 0 */
    km_kernel K;    /* common kernel K */
    km_kernel Kt;   /* default individual kernel K~: every task not in tk */
    int64_t ntk;    /* tasks with their own K~_j: tk[0..ntk), task ids strictly increasing */
    const km_mtl_tkernel *tk;   /* borrowed; km_mtl_new copies it */
} km_mtl_param;

/* The defaults of both `train -s mtl` and `mtl-server`: alpha 0.5, lambda 1, K and the
 * default K~ linear (gamma 1, coef0 0, degree 3 for when another type is chosen), no
 * per-task kernels. The front ends take gamma = 1/(number of features) for a kernel that
 * uses it when no gamma is given (-g, --task-gamma), as LIBSVM does: km_mtl_param_gamma. */
km_mtl_param km_mtl_param_default(void);

/* The LIBSVM default gamma = 1/n (n > 0 features; 1 for n <= 0) for K unless have_gamma and
 * for K~ unless have_tgamma, set only in a kernel that uses gamma (a linear kernel keeps
 * its stored value, so its parameters compare equal whatever n). */
void km_mtl_param_gamma(km_mtl_param *p, int32_t n, int have_gamma, int have_tgamma);

/* KM_EUSAGE with a reason unless 0 <= alpha <= 1, lambda > 0 and finite, every kernel
 * valid for n features (km_kernel_check; the spline kernel needs n = 1) and positive
 * semi-definite (not sigmoid), and tk's task ids strictly increasing. */
int km_mtl_param_check(const km_mtl_param *p, int32_t n, km_error *err);

/* Task `task`'s individual kernel K~_j (5.2): its entry of p->tk, else p->Kt. */
const km_kernel *km_mtl_task_kernel(const km_mtl_param *p, int64_t task);

/* Reads a task-kernel file: lines 'TASK KERNEL' (TASK an integer id, KERNEL in the syntax
 * of km_basis_parse, doc/kernel-list.md, without a feature subset); blank lines and lines
 * whose first non-blank character is '#' skipped. *tk (malloc'ed, sorted by task; NULL
 * when *ntk = 0) for km_mtl_param. KM_EINPUT "PATH:LINE: reason" (a task twice too). */
int km_mtl_read_task_kernels(const char *path, km_mtl_tkernel **tk, int64_t *ntk,
                             km_error *err);

/* The whole state of the server (or of a client's local copy). */
typedef struct km_mtl km_mtl;

km_mtl *km_mtl_new(const km_mtl_param *p, km_error *err);
void km_mtl_free(km_mtl *s);

const km_mtl_param *km_mtl_param_of(const km_mtl *s);

/* The number n of unique inputs. */
int64_t km_mtl_n(const km_mtl *s);

/* The number of triples applied since creation (km_mtl_update calls that succeeded). */
int64_t km_mtl_version(const km_mtl *s);

/* Task `task`'s number of distinct inputs l_j and of triples received (0, 0 if unknown). */
void km_mtl_task_size(const km_mtl *s, int64_t task, int64_t *l, int64_t *triples);

/* Checks a triple without applying it: indices 0-based strictly increasing, below
 * KM_MTL_MAX_INDEX and below n_features (when n_features > 0), values finite, |y| <=
 * KM_MTL_KMAX, KM_MTL_KMAX^-1 <= w <= KM_MTL_KMAX. KM_EINPUT with a reason. */
int km_mtl_check_triple(const int32_t *index, const double *value, int64_t nnz, double y,
                        double w, int32_t n_features, km_error *err);

/* Checks that x's own kernel values K(x, x) (when alpha > 0) and K~_task(x, x) (when
 * alpha < 1) are finite and at most KM_MTL_KMAX. KM_EINPUT naming the kernel otherwise. */
int km_mtl_check_kernels(const km_mtl_param *p, int64_t task, const int32_t *index,
                         const double *value, int64_t nnz, km_error *err);

/* Algorithm 5: receives (x, y, w) from task `task` (any 64-bit id; a new id starts a task)
 * and updates everything (Cases 1-3). x is a sparse row (0-based increasing indices; zero
 * values are dropped). All or nothing: a triple that is bad (km_mtl_check_triple,
 * km_mtl_check_kernels) or whose update would not be finite or positive definite (R_j's
 * gamma, the pivot of Kbar, the Cholesky pivots of H's batched Woodbury system: by a bound
 * or computed, at each commit and full batch) is refused with KM_EINPUT, and out of memory is
 * KM_EINTERNAL; in both cases the state is as before the call. Outside a transaction each
 * call is one; inside one (km_mtl_begin) an error leaves the transaction to roll back. */
int km_mtl_update(km_mtl *s, int64_t task, const int32_t *index, const double *value,
                  int64_t nnz, double y, double w, km_error *err);

/* Transactions: km_mtl_begin, then km_mtl_update calls, then km_mtl_commit (which runs the
 * checks of H's pending terms: on failure it rolls back and returns KM_EINPUT) or
 * km_mtl_rollback (the state, version and tasks of km_mtl_begin back, bit for bit). The
 * server makes each SEND request one, so that a request is applied whole or not at all.
 * H's terms are checked at each commit and each full batch, so the state after a sequence
 * of transactions is a function of that sequence (a journal replay gives the same bits). */
int km_mtl_begin(km_mtl *s, km_error *err);
int km_mtl_commit(km_mtl *s, km_error *err);
void km_mtl_rollback(km_mtl *s);

/* H's pending rank-one terms are checked at each commit by a bound, O(n) per triple, that
 * guarantees the Cholesky factorization of their Woodbury system (see check_terms in
 * mtl.c); only when it does not hold is the system itself formed and factored (a dsymm of
 * H per commit). on = 1: always the latter (tests; the paranoid). */
void km_mtl_exact_checks(km_mtl *s, int on);

/* The task-private part of Algorithm 5 only (h_j, y_j, w_j, R_j; Xbar, ybar, H untouched):
 * an active client rebuilding its own R_j after the server has its triples. The input must
 * already be among the unique inputs (KM_EINPUT otherwise). */
int km_mtl_update_private(km_mtl *s, int64_t task, const int32_t *index, const double *value,
                          int64_t nnz, double y, double w, km_error *err);

/* Disclosed information (section 5.3): unique inputs first..n-1 (X: CSR rows, y unused),
 * ybar (n) and H (n x n, full, column-major), at a version. */
typedef struct km_mtl_disclosed {
    int64_t version;
    int64_t n;
    int64_t first;
    km_problem *X;   /* n - first rows */
    double *ybar;
    double *H;
} km_mtl_disclosed;

/* Fills *out with the disclosed data at the current version; inputs from `first` on
 * (0 <= first <= n). */
int km_mtl_disclose(km_mtl *s, int64_t first, km_mtl_disclosed *out, km_error *err);
void km_mtl_disclosed_free(km_mtl_disclosed *d);

/* Brings d up to a later disclosure upd (its inputs from upd->first <= d->n on; those d
 * already has are skipped): the new inputs appended, ybar and H replaced; upd is emptied.
 * KM_EINPUT if upd->first > d->n or upd is older than d (d and upd unchanged). */
int km_mtl_disclosed_merge(km_mtl_disclosed *d, km_mtl_disclosed *upd, km_error *err);

/* Algorithm 9 lines 1-7: a client's state from disclosed data (first must be 0): Xbar,
 * L and D recomputed from Xbar, ybar and H as given; no tasks. A passive client then adds
 * its own data with km_mtl_update, an active one with km_mtl_update_private. */
km_mtl *km_mtl_from_disclosed(const km_mtl_param *p, const km_mtl_disclosed *d, km_error *err);

/* Algorithm 4 (offline): the state for all rows of P (task ids from P->qid, or one task 0
 * when P has none; weights w, or 1 when w is NULL). Unique inputs and each task's inputs
 * in order of first appearance, as the server would have them after receiving the rows in
 * order. Cost O(n^3 + sum_j l_j^3 + number of examples). */
int km_mtl_offline(const km_mtl_param *p, const km_problem *P, const double *w, km_mtl **out,
                   km_error *err);

/* A task's estimate (5.3): g_j(x) = alpha sum_i cbar_i K(xbar_i, x)
 *                                   + (1 - alpha) sum_k c_k K~_j(xbar_{h_k}, x). */
typedef struct km_mtl_estimate {
    km_mtl_param param;   /* param.Kt = K~_j; no tk */
    km_problem *X;   /* the n unique inputs xbar_i */
    double *sq;      /* their squared norms */
    double *cbar;    /* n */
    int64_t l;       /* the task's distinct inputs */
    int64_t *h;      /* l rows of X */
    double *c;       /* l coefficients c_j (merged inputs: the sum over the repeats) */
} km_mtl_estimate;

/* Algorithm 9 lines 13-15 (z = H ybar, D L' cbar = z, c_j = R_j (y_j - alpha L(h_j,:) z))
 * for task `task` (a task without data gets the average task, l = 0). z and cbar are kept
 * for the version, so estimating many tasks costs O(n^2) once plus O(l_j^2 + n l_j) each. */
/* The same for callers that evaluate many tasks themselves: c (room for l_j) gets c_j,
 * *h the task's rows of Xbar and *cbar the n values of cbar (both borrowed from s, valid
 * until the next update). */
int km_mtl_task_coef(km_mtl *s, int64_t task, const int64_t **h, double *c, int64_t *l,
                     const double **cbar, km_error *err);

int km_mtl_estimate_task(km_mtl *s, int64_t task, km_mtl_estimate **out, km_error *err);
void km_mtl_estimate_free(km_mtl_estimate *e);

/* The estimates of tasks[0..ntasks) (NULL: every task of s, ntasks ignored) as one MTL
 * model (common/model.h: solver mtl) over all n unique inputs, with n features: cbar and
 * each task's rows h_j, coefficients c_j and kernel K~_j (the default K~ of the model, or
 * stored with the task when it differs). A task without data has no rows (it predicts the
 * average task). */
struct km_model;
int km_mtl_model(km_mtl *s, const int64_t *tasks, int64_t ntasks, int32_t n,
                 struct km_model **out, km_error *err);

/* g_j(x) of a sparse row (0-based increasing indices). */
double km_mtl_estimate_eval(const km_mtl_estimate *e, const int32_t *index,
                            const double *value, int64_t nnz);

/* ---- snapshots: the whole state, so that mtl-server restarts without replaying its journal
 * from the start ---- */

/* Receives the bytes of a snapshot; returns 0 when they were written. */
typedef int (*km_mtl_writer)(void *ctx, const void *p, size_t n);

/* Writes the whole state of s (parameters, unique inputs, L, D, ybar, H and its queued
 * terms, every task's h_j, y_j, w_j and R_j, the version) through write, little-endian
 * ("KMTKMTL1", format in mtl.c); km_mtl_load gives back a state equal bit for bit, whose
 * every later update and estimate is the same as this one's. KM_EINTERNAL for a broken
 * state; KM_EINPUT when write fails. */
int km_mtl_save(const km_mtl *s, km_mtl_writer write, void *ctx, km_error *err);

/* Reads a state written by km_mtl_save from buf[0..len) (*used: its bytes). Every count is
 * checked against the bytes present before anything is allocated; the parameters stored
 * must equal p (KM_EINPUT "snapshot written with other parameters" otherwise); any other
 * inconsistency is KM_EINPUT "snapshot: reason". */
km_mtl *km_mtl_load(const km_mtl_param *p, const unsigned char *buf, size_t len, size_t *used,
                    km_error *err);

#endif
