/* kcd.h - kernel coordinate descent with greedy working sets: thesis Algorithm 1 (c_i =
 * S_i(...), z = Kc kept up to date) where each step moves the coordinate that gains most,
 * on a persistent team of threads that each own a block of the columns of K. */
#ifndef KM_KCD_H
#define KM_KCD_H

#include <stddef.h>
#include <stdint.h>

#include "cd.h"
#include "error.h"
#include "kernel.h"

/*
 * The solver's state for one row set X and kernel: column blocks of K, each with its own row
 * cache of cache_bytes / blocks (rows are computed only over the block's columns, on the
 * worker that owns it). One block until a solve's team first grows, then one per thread
 * (the blocks take the cached rows). Reused across solves (one-versus-all classes).
 * Small problems (m < KM_KCD_PAR_MIN) use one thread, and never more threads than the cores
 * the process may run on (the bits do not depend on the count). Borrows X.
 */
typedef struct km_kcd km_kcd;

#define KM_KCD_PAR_MIN 4096

km_kcd *km_kcd_new(const km_kernel *k, const km_kdata *X, size_t cache_bytes, int threads,
                   km_error *err);
void km_kcd_free(km_kcd *W);

/* How km_kcd_solve sizes its team of workers: KM_TEAM_AUTO (the default) by measurement and
 * the machine's load; KM_TEAM_ALL every worker throughout; KM_TEAM_CHURN one until the rows
 * are first restricted to the active columns (or 4 KM_KCD_SHRINK steps), then all and one in
 * turn at every check (tests: the bits do not depend on who works, nor on when the one
 * block is cut). */
typedef enum { KM_TEAM_AUTO, KM_TEAM_ALL, KM_TEAM_CHURN } km_team_policy;
void km_kcd_set_team(km_kcd *W, km_team_policy policy);

/*
 * Minimizes F(c) = sum_i C[i] L(y[i], (Kc)_i) + c'Kc/2 as km_cd_kernel does, from c = 0,
 * by exact coordinate steps c_i = S_i(.) (Table 2.1's resolvent with alpha = 1/k_ii), each
 * on the coordinate that par->rule picks over the active set:
 *   KM_RULE_GRADIENT  the largest step |h_i|                       (first order)
 *   KM_RULE_GREEDY    the largest decrease of the dual D(c) = c'Kc/2 + sum_i C_i L*(y_i,
 *                     -c_i/C_i), exact for a one-variable step     (second order; AUTO)
 * (ties: the smallest index). Stopping (par->stop): the relative duality gap, computed
 * exactly from c and z every KM_KCD_CHECK steps and whenever the active set has nothing
 * left to move; or max_i |h_i| < delta. Shrinking: every KM_KCD_SHRINK steps, coordinates
 * stuck on a flat piece of S_i deeper than the largest step leave the active set; once it
 * is at most half of all, the rows are restricted to its columns and z is kept there only
 * (the gap is then an estimate); a converged active set, or a small estimate, makes z exact
 * everywhere again (K (c - c0) over the other columns) and the exact gap decides, so a
 * returned "converged" is always certified. When the gap stalls (badly conditioned K:
 * unscaled features under linear or polynomial kernels), an active-set walk takes Newton
 * steps on the free coefficients (face.h: km_face_kwalk; kcd.c: kcd_walk; off with
 * par->no_walk; losses km_face_loss knows). Zero kernel rows (k_ii = 0) take
 * km_loss_dual_argmin; a non-finite k_ii is KM_EINPUT.
 * res->iter counts steps in macro-iterations (steps / m, rounded up); the cap is
 * par->max_iter macro-iterations. The result has the same bits for any number of threads.
 */
int km_kcd_solve(km_kcd *W, const double *y, const double *C, const km_cd_param *par,
                 double *c, double *z, km_cd_result *res, km_error *err);

/* Cache statistics over all blocks since creation (see km_kmatrix_stats). */
void km_kcd_stats(const km_kcd *W, int64_t *served, int64_t *computed);

#define KM_KCD_CHECK 256
#define KM_KCD_SHRINK 1000

#endif
