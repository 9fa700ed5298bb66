/* face.h - the subspace step of the dual coordinate-descent solvers: an active-set walk on
 * a face of the piecewise-quadratic dual, in the span of the data (doc/linear-solver.md). */
#ifndef KM_FACE_H
#define KM_FACE_H

#include <stdint.h>

#include "loss.h"

/* The walks' parameters (cd.c, kcd.c: their comments) */
#ifndef KM_FACE_EVERY
#define KM_FACE_EVERY 10
#endif
#ifndef KM_FACE_STALL
#define KM_FACE_STALL 0.8409
#endif
#ifndef KM_FACE_MU
#define KM_FACE_MU 1e-9
#endif
#ifndef KM_FACE_SWEEPS
#define KM_FACE_SWEEPS 64
#endif
#ifndef KM_KWALK_REFINE
#define KM_KWALK_REFINE 1e-6
#endif
#ifndef KM_FACE_MAXDIM
#define KM_FACE_MAXDIM 512
#endif

/* A breakpoint of a projected path: coefficient k reaches its bound at t. Both walks keep
 * them in a min-heap on (t, k) (a fixed order for ties); km_face_bp_down sifts h[i] down. */
typedef struct km_face_bp {
    double t;
    int64_t k;
} km_face_bp;
void km_face_bp_down(km_face_bp *h, int64_t n, int64_t i);

/*
 * The solvers minimize G(c) = c'Kc/2 + sum_i phi_i(c_i), phi_i(c) = C_i L*(y_i, -c/C_i) (-D,
 * see km_loss_conj). Every loss of Table 2.1 has a phi_i that is quadratic on each of at
 * most two closed pieces (with y = +-1 for the classifiers):
 *   l1svm  -y c             on y c in [0, C]        curvature 0
 *   l2svm  -y c + c^2/(4C)  on y c in [0, inf)      1/(2C)
 *   rls    -y c + c^2/(2C)  on the real line         1/C
 *   rla    -y c             on [-C, C]              0
 *   svr    -y c + eps c     on [0, C], -y c - eps c on [-C, 0]   0
 * Where the curvature is 0 (or small against k_ii), G is (nearly) linear along the null
 * space of K: dual coordinate descent crawls there on badly conditioned data (its steps are
 * about gradient / k_ii), while the optimum puts most of those coefficients on bounds.
 */

/* 1 if the loss's phi is piecewise quadratic as above (the subspace step applies). */
int km_face_loss(km_loss loss);

/*
 * The piece coefficient i may move in, given z_i = (Kc)_i: the one that holds c strictly
 * inside, or, for c on a bound or a kink, the adjacent piece into which the one-sided
 * derivative z_i + phi_i' descends; there phi_i(t) = a t + d t^2/2 + const for t in
 * [lo, hi]. Returns 1 for such a free coefficient, 0 if c is fixed (on a bound or kink with
 * no descent into a piece, or a loss km_face_loss does not know).
 */
int km_face_piece(km_loss loss, double y, double C, double eps, double c, double z,
                  double *lo, double *hi, double *a, double *d);

/*
 * Rank-1 downdate of a Cholesky factor: L L' - x x' = L~ L~' in place (L lower triangular,
 * n x n, row-major, leading dimension n; x is overwritten). Returns 0, or -1 if the result
 * is not positive definite to working precision (L is then garbage: refactor).
 */
int km_face_chol_downdate(double *L, int n, double *x);

/*
 * K_WW for a walk too large for a dense matrix (km_face_kwalk's conjugate-gradient path):
 * mul sets y = K_WW x (x, y: nw entries, the coefficients with x_k = 0 may be skipped), col
 * sets out = column k of K_WW (= row k); both add their flops to *work and return 0, or -1
 * on failure (the caller keeps the error).
 */
typedef struct km_face_kop {
    int (*mul)(void *u, const double *x, double *y, double *work);
    int (*col)(void *u, int64_t k, double *out, double *work);
    void *u;
} km_face_kop;

/*
 * The active-set walk of the kernel solver (kcd.c) on the coefficients W = 0..nw-1 that
 * can move, on their pieces (km_face_piece: [lo, hi], phi(t) = a t + d t^2/2 + const):
 * each direction is the Newton step s = -(K_OO + diag(d + mu))^-1 g_O on the coefficients
 * O still on (g = z + a + d c the gradient of G = c'Kc/2 + sum phi on the pieces), mu > 0 a
 * ridge for a singular K_WW (there the step runs along K's null space, where coordinate
 * descent crawls) used only where some d is 0. With K (a dense nw x nw K_WW, row-major)
 * the step is solved by a Cholesky factor; with K NULL, through op's products, by
 * conjugate gradients (a truncated Newton step: a relative residual of KM_KWALK_CG_TOL, at most KM_KWALK_CG_MAX products; any of its iterates
 * descends). The step taken is the exact minimizer of G along the projected path
 * P[c + t s] (coefficients stop at their bounds one by one, breakpoints in a heap; between
 * two breakpoints G is a quadratic in t), and those it puts on a bound leave O (as do those
 * on a bound with s pointing out: they stay put). G never increases: each step minimizes
 * it along a path from c (a step whose computed change is not negative is not taken). c
 * and zW = (K c)_W are updated in place (zW by K_WW times the change). It ends when a
 * Newton step lands inside every piece (W's optimum, up to mu), when no descent is left,
 * or before a direction (a product) would take the flops done (*work) over budget.
 * *gain: the decrease of G. Returns 0; -1 when out of memory or op failed; 1 when every
 * coefficient of O has d > 0 and yet K_OO + diag(d) is not positive definite as computed
 * (the Cholesky factor fails and its smallest eigenvalue is <= 0, or CG meets a p with
 * p'(K + D)p <= 0): K is not positive semidefinite at working precision, the dual is not
 * convex as computed, and curv[0] = v'K v / v'v, curv[1] = v'D v / v'v along that
 * direction v (the walk stops there; c and zW hold the steps before).
 */
/* kcd.c's walk: at most this many coefficients take the dense path (Cholesky), more CG */
#ifndef KM_KWALK_MAX
#define KM_KWALK_MAX 1000
#endif
#ifndef KM_KWALK_CG_TOL
#define KM_KWALK_CG_TOL 1e-3
#endif
#ifndef KM_KWALK_CG_MAX
#define KM_KWALK_CG_MAX 200
#endif
int km_face_kwalk(int64_t nw, const double *K, const km_face_kop *op, const double *lo,
                  const double *hi, const double *a, const double *d, double mu, double budget,
                  double *c, double *zW, double *gain, double *work, double curv[2]);


/*
 * The box form of a loss's dual term: 1 if phi_i is one quadratic piece a t + d t^2/2 on a
 * finite interval [lo, hi] (l1svm: y c in [0, C]; rla: [-C, C]; svr with eps = 0), else 0
 * (l2svm and rls: unbounded; svr: a kink).
 */
int km_face_box(km_loss loss, double y, double C, double eps, double *lo, double *hi,
                double *a, double *d);

/*
 * The box QP min G(c) = ||X'c||^2/2 + sum_i (a_i c_i + d_i c_i^2/2), lo <= c <= hi (every
 * bound finite), X dense m x nf row-major, by a primal-dual interior-point method (Mehrotra's
 * predictor-corrector; Wright, Primal-Dual Interior-Point Methods, SIAM 1997, ch. 10): each
 * Newton system (X X' + E) dc = r, E diagonal (d plus the barrier's curvature), by Woodbury
 * in the nf features (M = I + X'E^-1 X: dsyrk and a Cholesky factor, as Ferris and Munson,
 * SIAM J. Optim. 13, 2003, for linear SVMs). c: in, a start (pushed a tenth of its box away
 * from the bounds), out, the last iterate (strictly inside the box); w = X'c. Stops when
 * the relative gap (G(c) - LB(w)) / max(|G|, |LB|) <= tol, LB(w) = -||w||^2/2 + sum_i min
 * over the box of (x_i'w + a_i) t + d_i t^2/2 the Lagrangian lower bound (for l1svm: the
 * primal -F(w)), or after maxit iterations; *gap gets that gap, *work += its flops. Returns
 * 0 (gap <= tol), 1 (not), -1 out of memory. Below a gap of KM_IPM_STALL, two iterations
 * that do not lower the gap end it (the Woodbury solve loses accuracy as the free
 * coefficients' E goes to 0); c is then the iterate of the lowest gap.
 */
#ifndef KM_IPM_STALL
#define KM_IPM_STALL 1e-3
#endif
int km_face_ipm(int64_t m, int nf, const double *X, const double *lo, const double *hi,
                const double *a, const double *d, double tol, int maxit, double *c, double *w,
                double *gap, double *work);

#endif
