/* rls2_ref.h - independent reference solvers for regularized least squares with two layers
 * (RLS2, thesis ch. 4), for testing the production solver. Header-only, small dense data.
 *
 * Conventions: matrices are dense column-major (an l x m matrix V has V[k*l + i] = V_ik);
 * kernel matrices K^k are l x l symmetric positive semidefinite (so the layout does not
 * matter); the simplex is Delta_m = {d >= 0, sum_k d_k = 1}. Objectives are returned exactly
 * as written in the thesis, with their factors 1/2:
 *
 *   (4.1)  F(c, d) = ||y - K(d)c||^2 / (2 lambda) + c'K(d)c / 2,   K(d) = sum_k d_k K^k
 *   (4.3)  f(d)    = min_c F(c, d) = y'c*(d) / 2,   c*(d) = (K(d) + lambda I)^-1 y   (4.2)
 *          grad_k f(d) = -c*'K^k c* / 2,  Hessian_jk = v_j'(K(d) + lambda I)^-1 v_k,
 *          v_k = K^k c*  (differentiating c* = A^-1 y: the derivative of c* in d_j is -A^-1 v_j)
 *   (4.4)  ||V d - u||^2  (no 1/2),  V = [K^1 c ... K^m c],  u = y - lambda c / 2
 *   (4.9)  ||y - X w||^2 / (2 lambda) + (1/2) (sum_k |w_k| / sqrt(s_k))^2
 *
 * With linear basis kernels K^k = s_k x^k x^k' (x^k = column k of X) the optimal values of
 * (4.3) and (4.9) are EQUAL (factor 1, Lemma 7): with Gamma = diag(s_k d_k), z = X'c and
 * w = Gamma z, K(d)c = Xw and c'K(d)c = sum_k w_k^2 / (s_k d_k), whose minimum over the
 * simplex is (sum_k |w_k| / sqrt(s_k))^2 (Cauchy-Schwarz, at d_k proportional to
 * |w_k| / sqrt(s_k)). Solutions map by w_k = d_k s_k z_k, z = X'c (4.7), Xw = K(d)c = y - lambda c,
 * and back by d_k = (|w_k|/sqrt(s_k)) / sum_j (|w_j|/sqrt(s_j)), c = (y - Xw) / lambda.
 *
 * Functions (all static inline; none keeps state):
 *   ref_simplex_ls   exact minimizer of (4.4) by enumerating supports (m <= REF_SIMPLEX_LS_MAX_M)
 *   ref_rls2         minimizer of (4.3): FISTA with backtracking and restart, then Newton on
 *                    the support; ref_rls2_eval / ref_simplex_kkt / ref_simplex_fw_gap check
 *                    any d (also the production solver's)
 *   ref_sql1         minimizer of (4.9): FISTA with the exact prox of the squared weighted
 *                    l1 norm (ref_prox_sql1), then a linear solve on the support;
 *                    ref_sql1_objective / ref_sql1_kkt check any w
 *
 * Threads: with the pthread OpenBLAS, tiny matrices in a loop make the idle BLAS threads
 * spin (sched_yield), several times the wall time; callers should run
 * km_blas_threads(1) first (tests/unit/test_rls2_ref.c does).
 */
#ifndef KM_RLS2_REF_H
#define KM_RLS2_REF_H

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REF_SIMPLEX_LS_MAX_M 16

/* ---------------------------------------------------------------- the simplex */

/* KKT violation on the simplex for gradient g at feasible d: max_{k: d_k > 0} g_k - min_k g_k
 * (>= 0; 0 iff d is optimal for a convex objective with gradient g: g_k = min g on the
 * support, g_k >= min g elsewhere). Absolute, in the units of g. */
static inline double ref_simplex_kkt(const double *g, const double *d, int m)
{
    double gmin = INFINITY, gmax = -INFINITY;
    for (int k = 0; k < m; k++) {
        gmin = fmin(gmin, g[k]);
        if (d[k] > 0)
            gmax = fmax(gmax, g[k]);
    }
    return gmax - gmin;
}

/* Frank-Wolfe gap d'g - min_k g_k (0 <= gap <= ref_simplex_kkt): for a convex objective f
 * with gradient g at d, f(d) - min_simplex f <= gap (f(d*) >= f(d) + g'(d* - d) and
 * g'd* >= min g). A certified bound on the objective error. */
static inline double ref_simplex_fw_gap(const double *g, const double *d, int m)
{
    double gmin = INFINITY, s = 0;
    for (int k = 0; k < m; k++) {
        gmin = fmin(gmin, g[k]);
        s += d[k] * g[k];
    }
    return s - gmin;
}

static inline int ref_cmp_desc_(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Euclidean projection of v onto the simplex (sort-based): x = max(v - theta, 0) with
 * theta = (sum_{j<=rho} s_j - 1) / rho, s = v sorted descending, rho the largest j with
 * s_j > (sum_{i<=j} s_i - 1) / j. tmp: m doubles. x may alias v. */
static inline void ref_proj_simplex(const double *v, int m, double *x, double *tmp)
{
    memcpy(tmp, v, (size_t)m * sizeof *tmp);
    qsort(tmp, (size_t)m, sizeof *tmp, ref_cmp_desc_);
    double cum = 0, theta = tmp[0] - 1;
    for (int j = 0; j < m; j++) {
        cum += tmp[j];
        double t = (cum - 1) / (j + 1);
        if (tmp[j] > t)
            theta = t;
    }
    for (int k = 0; k < m; k++)
        x[k] = v[k] > theta ? v[k] - theta : 0;
}

/* ---------------------------------------------------------------- (4.4) by enumeration */

/* ||V d - u||^2 for the l x m matrix V. */
static inline double ref_ls_value(const double *V, int l, int m, const double *u, const double *d)
{
    double s = 0;
    for (int i = 0; i < l; i++) {
        double r = -u[i];
        for (int k = 0; k < m; k++)
            r += V[(size_t)k * l + i] * d[k];
        s += r * r;
    }
    return s;
}

/*
 * Exact minimizer of ||V d - u||^2 (no 1/2) over the simplex, V l x m column-major, by brute
 * force over all 2^m - 1 supports S (1 <= m <= REF_SIMPLEX_LS_MAX_M; meant for m <= 10).
 * Writes d (m) and returns the minimum; NAN (d untouched) if m or l is out of range or
 * allocation fails.
 *
 * On S = {j0 < j1 < ...} the equality-constrained problem min ||V_S d_S - u|| s.t. 1'd_S = 1
 * (KKT system [V_S'V_S 1; 1' 0][d_S; mu] = [V_S'u; 1]) is solved without forming V_S'V_S:
 * with d_{j0} = 1 - sum_{t} d_{jt}, it is the unconstrained least squares
 * min_t ||(u - v_{j0}) - sum_t d_{jt} (v_{jt} - v_{j0})||, solved by LAPACK dgelsd (SVD),
 * which returns the least-norm solution when singular. Candidates with d_S >= 0 (up to
 * 1e-12, then clipped and renormalized) are feasible; the best objective wins (first
 * support in mask order on exact ties).
 *
 * Why this is exact: let d* be a minimizer with the smallest support S. If some h != 0 with
 * supp h in S, 1'h = 0, V h = 0 existed, moving d* along h until a component hits 0 would
 * give a minimizer with a smaller support; so the problem on S has a unique minimizer,
 * which is d* (d* is in the relative interior of its face, so it minimizes the convex
 * objective over the face's affine hull), and enumeration finds it.
 *
 * Ties: when V is rank deficient (e.g. l < m, repeated columns), minimizers need not be
 * unique: d is then ONE minimizer and need not equal another solver's d. Compare the
 * objective ||V d - u||^2, not d.
 */
static inline double ref_simplex_ls(const double *V, int l, int m, const double *u, double *d)
{
    if (l < 1 || m < 1 || m > REF_SIMPLEX_LS_MAX_M)
        return NAN;
    int ld = l > m ? l : m;
    double *A = malloc((size_t)l * (size_t)m * sizeof *A);
    double *b = malloc((size_t)ld * sizeof *b), *sv = malloc((size_t)m * sizeof *sv);
    double *cand = malloc((size_t)m * sizeof *cand);
    double best = INFINITY;
    if (!A || !b || !sv || !cand) {
        free(A); free(b); free(sv); free(cand);
        return NAN;
    }
    for (unsigned mask = 1; mask < (1u << m); mask++) {
        int idx[REF_SIMPLEX_LS_MAX_M], p = 0;
        for (int k = 0; k < m; k++)
            if (mask & (1u << k))
                idx[p++] = k;
        int j0 = idx[0], q = p - 1;
        memset(cand, 0, (size_t)m * sizeof *cand);
        if (q == 0) {
            cand[j0] = 1;
        } else {
            const double *v0 = V + (size_t)j0 * l;
            for (int i = 0; i < l; i++)
                b[i] = u[i] - v0[i];
            for (int t = 0; t < q; t++) {
                const double *vt = V + (size_t)idx[t + 1] * l;
                for (int i = 0; i < l; i++)
                    A[(size_t)t * l + i] = vt[i] - v0[i];
            }
            lapack_int rank;
            if (LAPACKE_dgelsd(LAPACK_COL_MAJOR, l, q, 1, A, l, b, ld, sv, 1e-13, &rank) != 0)
                continue;
            double sum = 0;
            for (int t = 0; t < q; t++) {
                cand[idx[t + 1]] = b[t];
                sum += b[t];
            }
            cand[j0] = 1 - sum;
            double mn = 0, tot = 0;
            for (int t = 0; t < p; t++)
                mn = fmin(mn, cand[idx[t]]);
            if (!(mn >= -1e-12))  /* also rejects NaN */
                continue;
            for (int t = 0; t < p; t++) {
                cand[idx[t]] = fmax(cand[idx[t]], 0);
                tot += cand[idx[t]];
            }
            if (!(tot > 0))
                continue;
            for (int t = 0; t < p; t++)
                cand[idx[t]] /= tot;
        }
        double obj = ref_ls_value(V, l, m, u, cand);
        if (obj < best) {
            best = obj;
            memcpy(d, cand, (size_t)m * sizeof *d);
        }
    }
    free(A); free(b); free(sv); free(cand);
    return best;
}

/* ---------------------------------------------------------------- (4.3) */

/* f(d), c*(d), grad f(d) and optionally V = [K^1 c ... K^m c] (l x m); A (l*l scratch)
 * returns the Cholesky factor (lower) of K(d) + lambda I. d may have negative entries
 * (extrapolated points) as long as K(d) + lambda I stays positive definite; NAN if not. */
static inline double ref_rls2_eval_(const double *const *K, int m, int l, const double *y,
                                    double lambda, const double *d, double *c, double *g,
                                    double *V, double *A)
{
    size_t ll = (size_t)l * (size_t)l;
    memset(A, 0, ll * sizeof *A);
    for (int k = 0; k < m; k++)
        if (d[k] != 0)
            cblas_daxpy((int)ll, d[k], K[k], 1, A, 1);
    for (int i = 0; i < l; i++)
        A[(size_t)i * l + i] += lambda;
    memcpy(c, y, (size_t)l * sizeof *c);
    if (LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', l, 1, A, l, c, l) != 0)
        return NAN;
    double f = cblas_ddot(l, y, 1, c, 1) / 2;
    double *tmp = V ? NULL : malloc((size_t)l * sizeof *tmp);
    if (g) {
        for (int k = 0; k < m; k++) {
            double *v = V ? V + (size_t)k * l : tmp;
            cblas_dsymv(CblasColMajor, CblasLower, l, 1, K[k], l, c, 1, 0, v, 1);
            g[k] = -cblas_ddot(l, c, 1, v, 1) / 2;
        }
    }
    free(tmp);
    return f;
}

/* f(d) = y'c*(d)/2 (the optimal value of (4.1) for this d, with its 1/2); writes c = c*(d)
 * (l, may be NULL) and g = grad f(d) (m, may be NULL). NAN if K(d) + lambda I is not
 * positive definite. KKT check of any d: ref_simplex_kkt(g, d, m). */
static inline double ref_rls2_eval(const double *const *K, int m, int l, const double *y,
                                   double lambda, const double *d, double *c, double *g)
{
    double *A = malloc((size_t)l * (size_t)l * sizeof *A), *cc = malloc((size_t)l * sizeof *cc);
    double f = NAN;
    if (A && cc)
        f = ref_rls2_eval_(K, m, l, y, lambda, d, cc, g, NULL, A);
    if (c && cc)
        memcpy(c, cc, (size_t)l * sizeof *c);
    free(A); free(cc);
    return f;
}

/* max_k |g_k| (the scale for a relative KKT violation). */
static inline double ref_absmax(const double *g, int m)
{
    double s = 0;
    for (int k = 0; k < m; k++)
        s = fmax(s, fabs(g[k]));
    return s;
}

/* FISTA (Beck-Teboulle backtracking, step 1/L, L only grows) with function-value restart
 * (O'Donoghue-Candes: momentum dropped when f would increase), monotone. x, fx, gx: the
 * current point, value, gradient, updated in place. Stops when the KKT violation
 * <= tol or after maxit steps. */
static inline void ref_rls2_fista_(const double *const *K, int m, int l, const double *y,
                                   double lambda, double *x, double *fx, double *gx,
                                   double *Lp, int maxit, double tol, double *A, double *cw)
{
    double *yv = malloc((size_t)m * sizeof *yv), *gy = malloc((size_t)m * sizeof *gy);
    double *p = malloc((size_t)m * sizeof *p), *gp = malloc((size_t)m * sizeof *gp);
    double *tmp = malloc((size_t)m * sizeof *tmp), *srt = malloc((size_t)m * sizeof *srt);
    double L = *Lp, theta = 1, fy = *fx;
    int mom = 0;  /* yv != x */
    memcpy(yv, x, (size_t)m * sizeof *yv);
    memcpy(gy, gx, (size_t)m * sizeof *gy);
    for (int it = 0; it < maxit; it++) {
        if (ref_simplex_kkt(gx, x, m) <= tol)
            break;
        double fp;
        for (;;) {
            for (int k = 0; k < m; k++)
                tmp[k] = yv[k] - gy[k] / L;
            ref_proj_simplex(tmp, m, p, srt);
            fp = ref_rls2_eval_(K, m, l, y, lambda, p, cw, gp, NULL, A);
            double lin = 0, q = 0;
            for (int k = 0; k < m; k++) {
                lin += gy[k] * (p[k] - yv[k]);
                q += (p[k] - yv[k]) * (p[k] - yv[k]);
            }
            if (fp <= fy + lin + L / 2 * q + 8 * DBL_EPSILON * fabs(fy))
                break;
            if (L > 1e300)
                break;
            L *= 2;
        }
        if (!(fp <= *fx)) {           /* restart; from x itself: no more progress */
            if (!mom)
                break;
            mom = 0;
            theta = 1;
            memcpy(yv, x, (size_t)m * sizeof *yv);
            memcpy(gy, gx, (size_t)m * sizeof *gy);
            fy = *fx;
            continue;
        }
        double th = (1 + sqrt(1 + 4 * theta * theta)) / 2, beta = (theta - 1) / th;
        for (int k = 0; k < m; k++)
            yv[k] = p[k] + beta * (p[k] - x[k]);
        memcpy(x, p, (size_t)m * sizeof *x);
        memcpy(gx, gp, (size_t)m * sizeof *gx);
        *fx = fp;
        theta = th;
        mom = beta != 0;
        if (mom) {
            fy = ref_rls2_eval_(K, m, l, y, lambda, yv, cw, gy, NULL, A);
            if (isnan(fy)) {          /* extrapolated outside the domain: restart */
                mom = 0;
                theta = 1;
            }
        }
        if (!mom) {
            memcpy(yv, x, (size_t)m * sizeof *yv);
            memcpy(gy, gx, (size_t)m * sizeof *gy);
            fy = *fx;
        }
    }
    *Lp = L;
    free(yv); free(gy); free(p); free(gp); free(tmp); free(srt);
}

/* Newton's method for f on the face {d_S >= 0, 1'd_S = 1}, S = supp(x): step from
 * [H_SS 1; 1' 0][D; nu] = [-g_S; 0] (LAPACK dgelsd, least-norm if singular), cut at the
 * face's boundary (the blocking coordinate is set to 0 exactly), halved until f decreases
 * or the KKT violation halves. The second test matters when lambda is small: y'c/2 then
 * carries rounding errors of about eps |K| |c|^2, above the decrease of a final Newton step,
 * while the gradient is still accurate; and f(d) - f* <= the Frank-Wolfe gap <= the KKT
 * violation at any d (convexity), so lowering it is progress in the certified sense. */
static inline void ref_rls2_newton_(const double *const *K, int m, int l, const double *y,
                                    double lambda, double *x, double *fx, double *gx,
                                    double *A, double *cw)
{
    double *V = malloc((size_t)l * (size_t)m * sizeof *V);
    double *W = malloc((size_t)l * (size_t)m * sizeof *W);
    double *H = malloc((size_t)(m + 1) * (size_t)(m + 1) * sizeof *H);
    double *rhs = malloc((size_t)(m + 1) * sizeof *rhs), *sv = malloc((size_t)(m + 1) * sizeof *sv);
    double *xn = malloc((size_t)m * sizeof *xn), *gn = malloc((size_t)m * sizeof *gn);
    int *S = malloc((size_t)m * sizeof *S);
    for (int it = 0; it < 60; it++) {
        int p = 0;
        for (int k = 0; k < m; k++)
            if (x[k] > 0)
                S[p++] = k;
        if (p < 2)
            break;
        if (isnan(ref_rls2_eval_(K, m, l, y, lambda, x, cw, gx, V, A)))
            break;
        /* W = A^-1 V_S, H = V_S' W */
        for (int a = 0; a < p; a++)
            memcpy(W + (size_t)a * l, V + (size_t)S[a] * l, (size_t)l * sizeof *W);
        LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', l, p, A, l, W, l);
        int n1 = p + 1;
        for (int a = 0; a < p; a++) {
            for (int bb = 0; bb < p; bb++)
                H[(size_t)bb * n1 + a] = cblas_ddot(l, V + (size_t)S[a] * l, 1, W + (size_t)bb * l, 1);
            H[(size_t)p * n1 + a] = H[(size_t)a * n1 + p] = 1;
            rhs[a] = -gx[S[a]];
        }
        H[(size_t)p * n1 + p] = 0;
        rhs[p] = 0;
        /* symmetrize (rounding) */
        for (int a = 0; a < p; a++)
            for (int bb = a + 1; bb < p; bb++) {
                double h = (H[(size_t)bb * n1 + a] + H[(size_t)a * n1 + bb]) / 2;
                H[(size_t)bb * n1 + a] = H[(size_t)a * n1 + bb] = h;
            }
        lapack_int rank;
        if (LAPACKE_dgelsd(LAPACK_COL_MAJOR, n1, n1, 1, H, n1, rhs, n1, sv, 1e-14, &rank) != 0)
            break;
        double tmax = INFINITY, dn = 0;
        int block = -1;
        for (int a = 0; a < p; a++) {
            double D = rhs[a];
            dn = fmax(dn, fabs(D));
            if (D < 0 && -x[S[a]] / D < tmax) {
                tmax = -x[S[a]] / D;
                block = S[a];
            }
        }
        if (!(dn > 0) || !isfinite(dn))
            break;
        double t = tmax < 1 ? tmax : 1, gap0 = ref_simplex_kkt(gx, x, m);
        int accepted = 0;
        for (int h = 0; h < 40 && !accepted; h++, t /= 2) {
            memcpy(xn, x, (size_t)m * sizeof *xn);
            double sum = 0;
            for (int a = 0; a < p; a++) {
                xn[S[a]] = fmax(x[S[a]] + t * rhs[a], 0);
                if (t == tmax && S[a] == block)
                    xn[S[a]] = 0;
                sum += xn[S[a]];
            }
            for (int a = 0; a < p; a++)
                xn[S[a]] /= sum;
            double fn = ref_rls2_eval_(K, m, l, y, lambda, xn, cw, gn, NULL, A);
            if (isnan(fn))
                continue;
            if (fn < *fx || ref_simplex_kkt(gn, xn, m) <= gap0 / 2) {
                memcpy(x, xn, (size_t)m * sizeof *x);
                memcpy(gx, gn, (size_t)m * sizeof *gx);
                *fx = fn;
                accepted = 1;
            }
        }
        if (!accepted || dn <= 1e-16)
            break;
    }
    free(V); free(W); free(H); free(rhs); free(sv); free(xn); free(gn); free(S);
}

/*
 * Reference RLS2 solver: minimizes f(d) = y'c*(d)/2 (4.3) over the simplex. K: m pointers
 * to l x l PSD kernel matrices; lambda > 0. Writes d (m, on the simplex, exact zeros off
 * the support) and c = c*(d) (l); returns f(d) = y'c/2, the optimal value of (4.1) with
 * its factors 1/2 (NAN on failure). For small data (l <= 40, m <= 15).
 *
 * Method (independent of Algorithm 3): start at the barycenter d = 1/m; rounds of
 * accelerated projected gradient (FISTA, backtracking, restart; exact sort-based
 * projection; Cholesky dposv for c*) followed by Newton's method on the identified face,
 * until the KKT violation ref_simplex_kkt <= 1e-14 max_k |g_k|, a round leaves d unchanged
 * (rounding floor) or 40 rounds. f is convex (matrix-fractional function of the affine
 * K(d) + lambda I), so the Frank-Wolfe gap ref_simplex_fw_gap bounds f(d) - f*. Reached in
 * tests/unit/test_rls2_ref.c (l <= 40, m <= 15, lambda 0.01 to 1): KKT violation / max|g|
 * <= 2e-14 and f(d) - f* <= 1e-14 |f| on random kernels; the floor is rounding in c'K^k c,
 * about eps |K| |c|^2, so large |c| (small lambda, y poorly fit) costs digits: 6e-12 relative
 * for linear kernels at lambda = 0.01, |c| ~ 250.
 * The final KKT violation is ref_simplex_kkt(g, d, m) with g from ref_rls2_eval. Exact
 * zeros off the support (projection and Newton set them exactly): for large lambda
 * the result is exactly the vertex of Lemma 6.
 * d is unique only when f is strictly convex on the simplex (e.g. not with repeated or
 * linearly dependent kernels): compare f, c (c*(d) is unique: c = (y - prediction)/lambda)
 * and predictions K(d)c rather than d in degenerate cases.
 */
static inline double ref_rls2(const double *const *K, int m, int l, const double *y,
                              double lambda, double *d, double *c)
{
    if (m < 1 || l < 1 || !(lambda > 0))
        return NAN;
    double *A = malloc((size_t)l * (size_t)l * sizeof *A), *cw = malloc((size_t)l * sizeof *cw);
    double *g = malloc((size_t)m * sizeof *g), *V = malloc((size_t)l * (size_t)m * sizeof *V);
    double f = NAN, L = 0;
    if (!A || !cw || !g || !V)
        goto out;
    for (int k = 0; k < m; k++)
        d[k] = 1.0 / m;
    f = ref_rls2_eval_(K, m, l, y, lambda, d, cw, g, V, A);
    if (isnan(f))
        goto out;
    /* initial L: the largest diagonal entry of the Hessian at the barycenter */
    for (int k = 0; k < m; k++) {
        memcpy(c, V + (size_t)k * l, (size_t)l * sizeof *c);
        LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', l, 1, A, l, c, l);
        L = fmax(L, cblas_ddot(l, V + (size_t)k * l, 1, c, 1));
    }
    if (!(L > 0))
        L = 1;
    for (int round = 0; round < 40; round++) {
        double gs = ref_absmax(g, m);
        if (ref_simplex_kkt(g, d, m) <= 1e-14 * gs)
            break;
        memcpy(V, d, (size_t)m * sizeof *d);   /* V (l x m, no longer needed): the old d */
        ref_rls2_fista_(K, m, l, y, lambda, d, &f, g, &L, 3000, 1e-9 * gs, A, cw);
        ref_rls2_newton_(K, m, l, y, lambda, d, &f, g, A, cw);
        if (memcmp(V, d, (size_t)m * sizeof *d) == 0)
            break;   /* no step accepted: at the rounding floor */
    }
    f = ref_rls2_eval_(K, m, l, y, lambda, d, c, g, NULL, A);
out:
    free(A); free(cw); free(g); free(V);
    return f;
}

/* ---------------------------------------------------------------- (4.9) */

/* (4.9): ||y - Xw||^2/(2 lambda) + (1/2)(sum_k |w_k|/sqrt(s_k))^2, X l x n column-major. */
static inline double ref_sql1_objective(const double *X, int l, int n, const double *y,
                                        const double *s, double lambda, const double *w)
{
    double r2 = 0, t = 0;
    for (int i = 0; i < l; i++) {
        double r = y[i];
        for (int k = 0; k < n; k++)
            r -= X[(size_t)k * l + i] * w[k];
        r2 += r * r;
    }
    for (int k = 0; k < n; k++)
        t += fabs(w[k]) / sqrt(s[k]);
    return r2 / (2 * lambda) + t * t / 2;
}

/* Optimality violation of w for (4.9): with z = X'(y - Xw)/lambda, T = sum_k a_k |w_k|,
 * a_k = 1/sqrt(s_k), the subgradient condition is z_k = T a_k sign(w_k) if w_k != 0,
 * |z_k| <= T a_k if w_k = 0; returns the largest violation (absolute, units of z). */
static inline double ref_sql1_kkt(const double *X, int l, int n, const double *y,
                                  const double *s, double lambda, const double *w)
{
    double *r = malloc((size_t)l * sizeof *r), T = 0, viol = 0;
    memcpy(r, y, (size_t)l * sizeof *r);
    cblas_dgemv(CblasColMajor, CblasNoTrans, l, n, -1, X, l, w, 1, 1, r, 1);
    for (int k = 0; k < n; k++)
        T += fabs(w[k]) / sqrt(s[k]);
    for (int k = 0; k < n; k++) {
        double z = cblas_ddot(l, X + (size_t)k * l, 1, r, 1) / lambda, a = 1 / sqrt(s[k]);
        double v = w[k] != 0 ? fabs(z - T * a * (w[k] > 0 ? 1 : -1)) : fmax(fabs(z) - T * a, 0);
        viol = fmax(viol, v);
    }
    free(r);
    return viol;
}

typedef struct { double r; int k; } ref_rk_;

static inline int ref_cmp_rk_desc_(const void *a, const void *b)
{
    double x = ((const ref_rk_ *)a)->r, y = ((const ref_rk_ *)b)->r;
    return (x < y) - (x > y);
}

/*
 * Exact prox of the squared weighted l1 norm:
 *   w = argmin_w ||w - v||^2/2 + (t/2)(sum_k a_k |w_k|)^2,   t >= 0, a_k > 0.
 * Derivation. The objective is strictly convex; w_k has the sign of v_k, so write
 * w_k = sign(v_k) u_k, u >= 0, and S = sum_k a_k u_k. Optimality in u_k:
 * u_k - |v_k| + t a_k S = 0 if u_k > 0, |v_k| <= t a_k S if u_k = 0, i.e. the soft threshold
 *   u_k = max(|v_k| - t a_k S, 0),
 * with S the root of phi(S) = S - sum_k a_k max(|v_k| - t a_k S, 0), strictly increasing
 * from phi(0) <= 0: a unique root. Sort r_k = |v_k|/a_k descending, r_(1) >= r_(2) >= ...;
 * k is active (u_k > 0) iff r_k > t S. At the breakpoint S = r_(j)/t the items before j are
 * active, so phi(r_(j)/t) > 0  <=>  r_(j) (1 + t A2_{j-1}) > t A1_{j-1}  <=>  r_(j) > t S_{j-1}, with
 *   A1_p = sum_{i<=p} a_(i) |v_(i)|,  A2_p = sum_{i<=p} a_(i)^2,  S_p = A1_p / (1 + t A2_p)
 * (S_p solves phi = 0 when exactly the first p are active). phi increasing and the
 * breakpoints decreasing in j make the condition true for a prefix j = 1..p*; then the
 * active set is the first p*, S = S_{p*}, and u follows. (All v = 0: w = 0.)
 * tmp: n entries of ref_rk_ scratch. w may alias v.
 */
static inline void ref_prox_sql1(const double *v, const double *a, int n, double t, double *w,
                                 ref_rk_ *tmp)
{
    for (int k = 0; k < n; k++) {
        tmp[k].r = fabs(v[k]) / a[k];
        tmp[k].k = k;
    }
    qsort(tmp, (size_t)n, sizeof *tmp, ref_cmp_rk_desc_);
    double A1 = 0, A2 = 0, S = 0;
    for (int j = 0; j < n; j++) {
        if (!(tmp[j].r > t * S))
            break;
        int k = tmp[j].k;
        A1 += a[k] * fabs(v[k]);
        A2 += a[k] * a[k];
        S = A1 / (1 + t * A2);
    }
    for (int k = 0; k < n; k++) {
        double u = fmax(fabs(v[k]) - t * a[k] * S, 0);
        w[k] = v[k] > 0 ? u : v[k] < 0 ? -u : 0;
    }
}

/* On the support S of w with signs sigma the optimality conditions of (4.9) are linear:
 * (X_S'X_S/lambda + b b') w_S = X_S'y/lambda, b = sigma_S a_S. Solves them (dposv) and
 * returns 1 with the solution in wn if it is sign-consistent, else 0. */
static inline int ref_sql1_polish_(const double *X, int l, int n, const double *y,
                                   const double *a, double lambda, const double *w, double *wn)
{
    int *S = malloc((size_t)n * sizeof *S), p = 0, ok = 0;
    for (int k = 0; k < n; k++)
        if (w[k] != 0)
            S[p++] = k;
    double *M = malloc((size_t)n * (size_t)n * sizeof *M), *r = malloc((size_t)n * sizeof *r);
    if (p > 0) {
        for (int i = 0; i < p; i++) {
            const double *xi = X + (size_t)S[i] * l;
            double bi = w[S[i]] > 0 ? a[S[i]] : -a[S[i]];
            for (int j = 0; j < p; j++) {
                double bj = w[S[j]] > 0 ? a[S[j]] : -a[S[j]];
                M[(size_t)j * p + i] = cblas_ddot(l, xi, 1, X + (size_t)S[j] * l, 1) / lambda + bi * bj;
            }
            r[i] = cblas_ddot(l, xi, 1, y, 1) / lambda;
        }
        if (LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', p, 1, M, p, r, p) == 0) {
            ok = 1;
            memset(wn, 0, (size_t)n * sizeof *wn);
            for (int i = 0; i < p; i++) {
                wn[S[i]] = r[i];
                if (!(r[i] * w[S[i]] > 0))
                    ok = 0;
            }
        }
    }
    free(S); free(M); free(r);
    return ok;
}

/*
 * Reference solver of (4.9): w (n) minimizes ||y - Xw||^2/(2 lambda) + (1/2)(sum_k
 * |w_k|/sqrt(s_k))^2; X l x n column-major, s_k > 0, lambda > 0. Returns the objective
 * (with its 1/2s; NAN on failure). Equal to the optimal value of RLS2 (4.1)/(4.3) with
 * linear kernels K^k = s_k x^k x^k' (see the top of this file).
 *
 * Method: FISTA (step 1/L, L = sigma_max(X)^2/lambda from LAPACK dsyev of X'X, restart
 * when the objective would increase) with the exact prox ref_prox_sql1, from w = 0; then
 * the optimality conditions solved on the identified support and signs (ref_sql1_polish_),
 * kept if they lower the violation ref_sql1_kkt; rounds until ref_sql1_kkt <= 1e-13 max|z|
 * scale or 40 rounds. w is unique when X has full column rank on the support (e.g. l > n,
 * random X); otherwise compare the objective and Xw.
 */
static inline double ref_sql1(const double *X, int l, int n, const double *y, const double *s,
                              double lambda, double *w)
{
    if (l < 1 || n < 1 || !(lambda > 0))
        return NAN;
    double *G = malloc((size_t)n * (size_t)n * sizeof *G), *ev = malloc((size_t)n * sizeof *ev);
    double *a = malloc((size_t)n * sizeof *a), *Xy = malloc((size_t)n * sizeof *Xy);
    double *yv = malloc((size_t)n * sizeof *yv);
    double *gr = malloc((size_t)n * sizeof *gr), *wn = malloc((size_t)n * sizeof *wn);
    ref_rk_ *tmp = malloc((size_t)n * sizeof *tmp);
    double F = NAN, L, zs = 0;
    if (!G || !ev || !a || !Xy || !yv || !gr || !wn || !tmp)
        goto out;
    for (int k = 0; k < n; k++)
        a[k] = 1 / sqrt(s[k]);
    /* G = X'X, Xy = X'y; L = lambda_max(G)/lambda */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, l, 1, X, l, X, l, 0, G, n);
    cblas_dgemv(CblasColMajor, CblasTrans, l, n, 1, X, l, y, 1, 0, Xy, 1);
    {
        double *Gc = malloc((size_t)n * (size_t)n * sizeof *Gc);
        memcpy(Gc, G, (size_t)n * (size_t)n * sizeof *Gc);
        int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, Gc, n, ev);
        free(Gc);
        if (info != 0)
            goto out;
    }
    L = ev[n - 1] / lambda * (1 + 1e-12);
    if (!(L > 0))
        L = 1;
    /* zs: scale of z = X'(y - Xw)/lambda: |X'y|/lambda */
    for (int k = 0; k < n; k++)
        zs = fmax(zs, fabs(Xy[k]) / lambda);
    memset(w, 0, (size_t)n * sizeof *w);
    F = ref_sql1_objective(X, l, n, y, s, lambda, w);
    for (int round = 0; round < 40; round++) {
        double viol = ref_sql1_kkt(X, l, n, y, s, lambda, w);
        if (viol <= 1e-13 * zs)
            break;
        double theta = 1;
        memcpy(yv, w, (size_t)n * sizeof *yv);
        for (int it = 0; it < 5000; it++) {
            /* gr = grad of the smooth part at yv = (G yv - X'y)/lambda; step to yv - gr/L */
            memcpy(gr, Xy, (size_t)n * sizeof *gr);
            cblas_dsymv(CblasColMajor, CblasLower, n, 1, G, n, yv, 1, -1, gr, 1);
            for (int k = 0; k < n; k++)
                wn[k] = yv[k] - gr[k] / lambda / L;
            ref_prox_sql1(wn, a, n, 1 / L, wn, tmp);
            double Fn = ref_sql1_objective(X, l, n, y, s, lambda, wn);
            if (!(Fn <= F)) {
                if (theta == 1)
                    break;   /* no progress from w itself */
                theta = 1;
                memcpy(yv, w, (size_t)n * sizeof *yv);
                continue;
            }
            double th = (1 + sqrt(1 + 4 * theta * theta)) / 2, beta = (theta - 1) / th;
            for (int k = 0; k < n; k++)
                yv[k] = wn[k] + beta * (wn[k] - w[k]);
            memcpy(w, wn, (size_t)n * sizeof *w);
            F = Fn;
            theta = th;
            if ((it & 63) == 63 && ref_sql1_kkt(X, l, n, y, s, lambda, w) <= 1e-9 * zs)
                break;
        }
        /* polish on the support */
        if (ref_sql1_polish_(X, l, n, y, a, lambda, w, wn)) {
            double Fn = ref_sql1_objective(X, l, n, y, s, lambda, wn);
            if (Fn <= F + 4 * DBL_EPSILON * fabs(F) &&
                ref_sql1_kkt(X, l, n, y, s, lambda, wn) < ref_sql1_kkt(X, l, n, y, s, lambda, w)) {
                memcpy(w, wn, (size_t)n * sizeof *w);
                F = Fn;
            }
        }
    }
    F = ref_sql1_objective(X, l, n, y, s, lambda, w);
out:
    free(G); free(ev); free(a); free(Xy); free(yv); free(gr); free(wn); free(tmp);
    return F;
}

#endif
