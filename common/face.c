/* face.c - the pieces of the duals of Table 2.1 and the dense helpers of the subspace step
 * (the step itself: cd.c, linear_face_step). */
#include "face.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

typedef struct piece {
    double lo, hi, a, d;   /* phi(t) = a t + d t^2/2 + const on [lo, hi] */
} piece;

int km_face_loss(km_loss loss)
{
    switch (loss) {
    case KM_LOSS_L1SVM:
    case KM_LOSS_L2SVM:
    case KM_LOSS_RLS:
    case KM_LOSS_RLA:
    case KM_LOSS_SVR:
        return 1;
    default:
        return 0;
    }
}

/* The pieces of phi for a loss (face.h), in increasing order; their number (0: unknown). */
static int pieces(km_loss loss, double y, double C, double eps, piece pc[2])
{
    switch (loss) {
    case KM_LOSS_L1SVM:   /* -y c on y c in [0, C]: c between 0 and y C (the resolvent's) */
        pc[0] = (piece){y > 0 ? 0 : y * C, y > 0 ? y * C : 0, -y, 0};
        return 1;
    case KM_LOSS_L2SVM:   /* -y c + c^2/(4C) on y c >= 0 */
        pc[0] = (piece){y < 0 ? -INFINITY : 0, y > 0 ? INFINITY : 0, -y, 1 / (2 * C)};
        return 1;
    case KM_LOSS_RLS:     /* -y c + c^2/(2C) */
        pc[0] = (piece){-INFINITY, INFINITY, -y, 1 / C};
        return 1;
    case KM_LOSS_RLA:     /* -y c on [-C, C] */
        pc[0] = (piece){-C, C, -y, 0};
        return 1;
    case KM_LOSS_SVR:     /* -y c + eps |c| on [-C, C]: a kink at 0 unless eps = 0 */
        if (eps == 0) {
            pc[0] = (piece){-C, C, -y, 0};
            return 1;
        }
        pc[0] = (piece){-C, 0, -y - eps, 0};
        pc[1] = (piece){0, C, -y + eps, 0};
        return 2;
    default:
        return 0;
    }
}

int km_face_piece(km_loss loss, double y, double C, double eps, double c, double z,
                  double *lo, double *hi, double *a, double *d)
{
    piece pc[2];
    int np = pieces(loss, y, C, eps, pc), right = -1, left = -1, k = -1;
    *lo = *hi = c;
    *a = *d = 0;
    for (int j = 0; j < np; j++) {
        if (pc[j].lo < c && c < pc[j].hi) {   /* inside a piece */
            k = j;
            break;
        }
        if (c == pc[j].lo && c < pc[j].hi)
            right = j;
        if (c == pc[j].hi && pc[j].lo < c)
            left = j;
    }
    if (k < 0 && right >= 0 && z + pc[right].a + pc[right].d * c < 0)   /* descends up */
        k = right;
    else if (k < 0 && left >= 0 && z + pc[left].a + pc[left].d * c > 0)  /* descends down */
        k = left;
    if (k < 0)
        return 0;
    *lo = pc[k].lo;
    *hi = pc[k].hi;
    *a = pc[k].a;
    *d = pc[k].d;
    return 1;
}

int km_face_chol_downdate(double *L, int n, double *x)
{
    for (int k = 0; k < n; k++) {
        double lkk = L[k * n + k], r2 = lkk * lkk - x[k] * x[k];
        if (!(r2 > 1e-14 * lkk * lkk))
            return -1;
        double r = sqrt(r2), cs = r / lkk, sn = x[k] / lkk;
        L[k * n + k] = r;
        for (int i = k + 1; i < n; i++) {
            L[i * n + k] = (L[i * n + k] - sn * x[i]) / cs;
            x[i] = cs * x[i] - sn * L[i * n + k];
        }
    }
    return 0;
}

/* ---- the kernel solver's walk (face.h: km_face_kwalk) ---- */

static int bp_less(const km_face_bp *x, const km_face_bp *y)
{
    return x->t < y->t || (x->t == y->t && x->k < y->k);
}

void km_face_bp_down(km_face_bp *h, int64_t n, int64_t i)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && bp_less(&h[l], &h[m]))
            m = l;
        if (r < n && bp_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        km_face_bp t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* The smallest eigenvalue of K_OO + diag(d) (O = the no coefficients listed), by LAPACK
 * (dsyevr), and K's and the loss's curvature along its eigenvector v: curv[0] = v'K v,
 * curv[1] = v'diag(d) v (|v| = 1). Returns the eigenvalue, or NAN if LAPACK fails. */
static double smallest_curvature(const double *K, size_t n, const int64_t *O, int64_t no,
                                 const double *d, double curv[2])
{
    double *M = malloc((size_t)no * (size_t)no * sizeof *M), *v = malloc((size_t)no * sizeof *v);
    lapack_int *isup = malloc(2 * sizeof *isup), found = 0;
    double lam = NAN;
    if (M && v && isup) {
        for (int64_t p = 0; p < no; p++)
            for (int64_t q = 0; q < no; q++)
                M[p * no + q] = K[(size_t)O[p] * n + (size_t)O[q]] + (p == q ? d[O[p]] : 0);
        if (LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'L', (lapack_int)no, M, (lapack_int)no, 0,
                           0, 1, 1, 0, &found, &lam, v, 1, isup) != 0 || found != 1)
            lam = NAN;
        double D = 0;
        for (int64_t p = 0; found == 1 && p < no; p++)
            D += d[O[p]] * v[p] * v[p];
        curv[0] = lam - D;
        curv[1] = D;
    }
    free(M);
    free(v);
    free(isup);
    return lam;
}

/* K_WW's products and columns: the dense matrix, or the caller's operator (km_face_kop). */
typedef struct kmat {
    const double *K;
    const km_face_kop *op;
    size_t n;
    double *col;   /* n: a column from op */
} kmat;

/* Column k of K_WW (= row k), or NULL (op failed). */
static const double *kmat_col(const kmat *M, int64_t k, double *work)
{
    if (M->K)
        return M->K + (size_t)k * M->n;
    return M->op->col(M->op->u, k, M->col, work) ? NULL : M->col;
}

int km_face_kwalk(int64_t nw, const double *K, const km_face_kop *op, const double *lo,
                  const double *hi, const double *a, const double *d, double mu, double budget,
                  double *c, double *zW, double *gain, double *work, double curv[2])
{
    *gain = 0;
    *work = 0;
    curv[0] = curv[1] = 0;
    if (nw <= 0)
        return 0;
    size_t n = (size_t)nw;
    int dense = K != NULL;
    char *on = malloc(n);
    int64_t *O = malloc(n * sizeof *O);
    km_face_bp *bp = malloc(n * sizeof *bp);
    double *M = dense ? malloc(n * n * sizeof *M) : NULL;
    double *v = malloc((dense ? 7 : 13) * n * sizeof *v);
    int rc = 0;
    if (!on || !O || !bp || (dense && !M) || !v) {
        rc = -1;
        goto done;
    }
    double *g = v, *s = g + n, *S = s + n, *tk = S + n, *KA = tk + n, *B = KA + n,
           *u = B + n;
    /* the CG path: the residual, the direction of CG, K times it, K s, K B (the stopped
     * part of a step), a column */
    double *r = dense ? NULL : u + n, *p = dense ? NULL : r + n, *Kp = dense ? NULL : p + n, *KS = dense ? NULL : Kp + n, *KB = dense ? NULL : KS + n;
    kmat Km = {K, op, n, dense ? NULL : KB + n};
    memset(on, 1, n);
    double nww = (double)nw * (double)nw;
    int64_t no = 0;
    int fresh = 1;   /* O changed: a new factor */
    for (int64_t dir = 0; dir <= 4 * nw; dir++) {
        if (dense) {
            if (fresh) {
                no = 0;
                int flat = 0;   /* a coefficient of O without curvature: mu needed */
                for (int64_t k = 0; k < nw; k++)
                    if (on[k]) {
                        O[no++] = k;
                        flat |= !(d[k] > 0);
                    }
                double fw = (double)no * (double)no * (double)no / 3 + (double)no * (double)no;
                if (no == 0 || *work + fw + 4 * nww > budget)
                    break;
                *work += fw;
                /* M = K_OO + diag(d + mu), lower triangle: mu only where K_OO + D may be
                 * singular (a zero d), or once the factor without it failed */
                int ok = 0;
                for (double rr = flat ? 1 : 0; !ok && rr <= 1e6; rr = rr > 0 ? 100 * rr : 1) {
                    for (int64_t pp = 0; pp < no; pp++) {
                        const double *Kp_ = K + (size_t)O[pp] * n;
                        for (int64_t q = 0; q <= pp; q++)
                            M[pp * no + q] = Kp_[O[q]];
                        M[pp * no + pp] += d[O[pp]] + rr * mu;
                    }
                    ok = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)no, M,
                                        (lapack_int)no) == 0;
                    /* every coefficient has curvature d > 0, yet K_OO + D is not positive
                     * definite: K is not positive semidefinite at working precision (its
                     * rounding is more than the loss's curvature). No ridge: stop here. */
                    if (!ok && rr == 0) {
                        *work += 10 * (double)no * (double)no * (double)no;
                        double lam = smallest_curvature(K, n, O, no, d, curv);
                        if (lam <= 0) {
                            rc = 1;
                            goto done;
                        }
                        curv[0] = curv[1] = 0;
                    }
                }
                if (!ok)
                    break;
                fresh = 0;
            }
            if (*work + 4 * nww > budget)
                break;
            *work += 4 * nww;   /* KA, the update of zW, the solve */
            for (int64_t pp = 0; pp < no; pp++) {   /* g on O; s = -M^-1 g */
                int64_t k = O[pp];
                g[k] = zW[k] + a[k] + d[k] * c[k];
                s[pp] = -g[k];
            }
            if (LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)no, 1, M, (lapack_int)no, s,
                               1) != 0)
                break;
        } else {
            /* truncated Newton: s ~ -(K_OO + diag(d + mu))^-1 g_O by conjugate gradients
             * (Nocedal and Wright, Algorithm 5.2), K s accumulated from the products; stops
             * at a relative residual of KM_KWALK_CG_TOL, at KM_KWALK_CG_MAX products, or at
             * the budget. Not preconditioned: K_OO of low numerical rank plus a constant
             * d + mu has few distinct eigenvalues, which CG needs few products for
             * (Jacobi's diagonal spreads them: 3.4x the products on unscaled satimage) */
            no = 0;
            int flat = 0;
            for (int64_t k = 0; k < nw; k++)
                if (on[k]) {
                    O[no++] = k;
                    flat |= !(d[k] > 0);
                }
            double prod = 2 * (double)nw * (double)no + 8 * (double)no;
            if (no == 0 || *work + prod > budget)
                break;
            double rmu = flat ? mu : 0, rr0 = 0;
            memset(p, 0, n * sizeof *p);
            memset(KS, 0, n * sizeof *KS);
            for (int64_t pp = 0; pp < no; pp++) {
                int64_t k = O[pp];
                g[k] = zW[k] + a[k] + d[k] * c[k];
                s[pp] = 0;
                r[pp] = -g[k];
                p[k] = r[pp];
                rr0 += r[pp] * r[pp];
            }
            int iters = 0;
            double rz = rr0;   /* r'r of the last iteration */
            for (int it = 0; it < KM_KWALK_CG_MAX && *work + prod <= budget; it++) {
                if (op->mul(op->u, p, Kp, work)) {
                    rc = -1;
                    goto done;
                }
                *work += prod;
                double pq = 0, pkp = 0, pp2 = 0, dp = 0;
                for (int64_t q = 0; q < no; q++) {
                    int64_t k = O[q];
                    pkp += p[k] * Kp[k];
                    dp += d[k] * p[k] * p[k];
                    pp2 += p[k] * p[k];
                }
                pq = pkp + dp + rmu * pp2;
                if (!(pq > 0)) {   /* negative curvature along p */
                    if (!flat) {   /* as in the dense path: K is not PSD at precision */
                        curv[0] = pkp / pp2;
                        curv[1] = dp / pp2;
                        rc = 1;
                        goto done;
                    }
                    if (it == 0) {   /* steepest descent (the line search is exact) */
                        for (int64_t q = 0; q < no; q++)
                            s[q] = p[O[q]];
                        memcpy(KS, Kp, n * sizeof *KS);
                        iters = 1;
                    }
                    break;
                }
                double al = rz / pq, rr = 0;
                for (int64_t k = 0; k < nw; k++)
                    KS[k] += al * Kp[k];
                for (int64_t q = 0; q < no; q++) {
                    int64_t k = O[q];
                    s[q] += al * p[k];
                    r[q] -= al * (Kp[k] + (d[k] + rmu) * p[k]);
                    rr += r[q] * r[q];
                }
                iters = it + 1;
                if (!(rr > KM_KWALK_CG_TOL * KM_KWALK_CG_TOL * rr0))
                    break;
                double be = rr / rz;
                rz = rr;
                for (int64_t q = 0; q < no; q++)
                    p[O[q]] = r[q] + be * p[O[q]];
            }
            if (iters == 0)
                break;
        }
        int64_t nb = 0, out = 0;
        double G1 = 0, DS = 0;
        memset(S, 0, n * sizeof *S);
        memset(B, 0, n * sizeof *B);
        if (!dense)
            memset(KB, 0, n * sizeof *KB);
        for (int64_t pp = 0; pp < no; pp++) {
            int64_t k = O[pp];
            double sk = s[pp];
            tk[k] = sk > 0 ? (hi[k] - c[k]) / sk : sk < 0 ? (lo[k] - c[k]) / sk : INFINITY;
            if (!(tk[k] > 0)) {   /* on its bound and pointing out: stays, and leaves O */
                on[k] = 0;
                out++;
                if (!dense && sk != 0) {   /* K s without it */
                    const double *Kk = kmat_col(&Km, k, work);
                    if (!Kk) {
                        rc = -1;
                        goto done;
                    }
                    for (int64_t j = 0; j < nw; j++)
                        KS[j] -= sk * Kk[j];
                }
                continue;
            }
            S[k] = sk;
            G1 += g[k] * sk;
            DS += d[k] * sk * sk;
            if (isfinite(tk[k]))
                bp[nb++] = (km_face_bp){tk[k], k};
        }
        fresh = out > 0;
        if (!(G1 < 0)) {   /* no descent without those that left: a new direction, or done */
            if (out)
                continue;
            break;
        }
        int64_t passed = out;
        if (dense)   /* KA = K A: A (= S) the moving part of the step, B the stopped */
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)nw, (int)nw, 1, K, (int)nw, S, 1, 0,
                        KA, 1);
        else
            memcpy(KA, KS, n * sizeof *KA);
        for (int64_t i = nb / 2 - 1; i >= 0; i--)
            km_face_bp_down(bp, nb, i);
        double t = 0, f = 0, tbest = 0;
        int apply = 1;
        for (;;) {   /* f(t) = G(P[c + t s]) - G(c): f' = G1 + (DS + A'KA) t + B'KA */
            double AA = 0, BA = 0;
            for (int64_t k = 0; k < nw; k++) {
                AA += S[k] * KA[k];
                BA += B[k] * KA[k];
            }
            *work += 4 * (double)nw;
            double f1 = G1 + (DS + AA) * t + BA, f2 = DS + AA;
            double tn = nb > 0 ? bp[0].t : INFINITY;
            if (!(f1 < 0)) {
                tbest = t;
                break;
            }
            double ts = f2 > 0 ? t - f1 / f2 : INFINITY;
            if (ts <= tn) {
                f += f1 * (ts - t) + f2 * (ts - t) * (ts - t) / 2;
                tbest = ts;
                break;
            }
            if (!isfinite(tn)) {   /* no curvature, no bound: not on these pieces */
                apply = 0;
                break;
            }
            f += f1 * (tn - t) + f2 * (tn - t) * (tn - t) / 2;
            t = tn;
            int64_t k = bp[0].k;   /* k stops on its bound */
            bp[0] = bp[--nb];
            km_face_bp_down(bp, nb, 0);
            passed++;
            double bk = S[k] > 0 ? hi[k] : lo[k], sk = S[k];
            const double *Kk = kmat_col(&Km, k, work);   /* column k = row k */
            if (!Kk) {
                rc = -1;
                goto done;
            }
            S[k] = 0;
            B[k] = bk - c[k];
            for (int64_t j = 0; j < nw; j++)
                KA[j] -= sk * Kk[j];
            if (!dense)
                for (int64_t j = 0; j < nw; j++)
                    KB[j] += B[k] * Kk[j];
            G1 -= g[k] * sk;
            DS -= d[k] * sk * sk;
        }
        if (!apply || !(f < 0))
            break;
        memset(u, 0, n * sizeof *u);
        for (int64_t pp = 0; pp < no; pp++) {   /* apply: c, and zW by K_WW times the change */
            int64_t k = O[pp];
            if (!on[k])
                continue;
            double sk = s[pp], cn;
            if (tk[k] <= tbest) {   /* on its bound now: leaves O */
                cn = sk > 0 ? hi[k] : lo[k];
                on[k] = 0;
                passed++;
            } else {
                cn = c[k] + tbest * sk;
                cn = cn < lo[k] ? lo[k] : cn > hi[k] ? hi[k] : cn;
            }
            u[k] = cn - c[k];
            c[k] = cn;
        }
        if (dense)
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)nw, (int)nw, 1, K, (int)nw, u, 1, 1,
                        zW, 1);
        else   /* K u = tbest K A + K B (A, B at the end of the search) */
            for (int64_t j = 0; j < nw; j++)
                zW[j] += tbest * KA[j] + KB[j];
        *gain -= f;
        fresh = passed > 0;
        /* the Newton step landed inside: W's optimum, or up to mu: then the same factor
         * again (a proximal step) while it gains */
        if (passed == 0 && !(-f > KM_KWALK_REFINE * *gain))
            break;
    }
done:
    free(on);
    free(O);
    free(bp);
    free(M);
    free(v);
    return rc;
}

/* ---- the interior-point step (face.h: km_face_box, km_face_ipm) ---- */

int km_face_box(km_loss loss, double y, double C, double eps, double *lo, double *hi,
                double *a, double *d)
{
    piece pc[2];
    if (pieces(loss, y, C, eps, pc) != 1 || !isfinite(pc[0].lo) || !isfinite(pc[0].hi))
        return 0;
    *lo = pc[0].lo;
    *hi = pc[0].hi;
    *a = pc[0].a;
    *d = pc[0].d;
    return 1;
}

/* The lower bound of the box QP at w (face.h): -w'w/2 + sum_i min over [lo_i, hi_i] of
 * (x_i'w + a_i) t + d_i t^2/2 (Lagrangian duality, ||X'c||^2/2 = max_v v'X'c - ||v||^2/2). */
static double ipm_lower(int64_t m, const double *z, const double *lo, const double *hi,
                        const double *a, const double *d, double ww)
{
    double s = -ww / 2;
    for (int64_t i = 0; i < m; i++) {
        double q = z[i] + a[i], t = d[i] > 0 ? -q / d[i] : q > 0 ? lo[i] : hi[i];
        t = t < lo[i] ? lo[i] : t > hi[i] ? hi[i] : t;
        s += q * t + d[i] * t * t / 2;
    }
    return s;
}

/* The Newton system (X X' + E) dc = r by Woodbury (face.h): dw = M^-1 X'(r/E) with the
 * factor of M in Mf (column-major upper), dc = (r - X dw)/E; q, p: scratch of m. */
static void ipm_solve(int64_t m, int nf, const double *X, const double *E, const double *Mf,
                      const double *r, double *q, double *p, double *dw, double *dc)
{
    for (int64_t i = 0; i < m; i++)
        q[i] = r[i] / E[i];
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)m, nf, 1, X, nf, q, 1, 0, dw, 1);
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', nf, 1, Mf, nf, dw, nf);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, nf, 1, X, nf, dw, 1, 0, p, 1);
    for (int64_t i = 0; i < m; i++)
        dc[i] = (r[i] - p[i]) / E[i];
}

/* The longest step in [0, 1] that keeps c in (lo, hi) and zl, zu positive. */
static double ipm_step(int64_t m, const double *sl, const double *su, const double *zl,
                       const double *zu, const double *dc, const double *dzl,
                       const double *dzu)
{
    double t = 1;
    for (int64_t i = 0; i < m; i++) {
        if (dc[i] < 0 && t * dc[i] < -sl[i])
            t = sl[i] / -dc[i];
        if (dc[i] > 0 && t * dc[i] > su[i])
            t = su[i] / dc[i];
        if (dzl[i] < 0 && t * dzl[i] < -zl[i])
            t = zl[i] / -dzl[i];
        if (dzu[i] < 0 && t * dzu[i] < -zu[i])
            t = zu[i] / -dzu[i];
    }
    return t;
}

int km_face_ipm(int64_t m, int nf, const double *X, const double *lo, const double *hi,
                const double *a, const double *d, double tol, int maxit, double *c, double *w,
                double *gap, double *work)
{
    size_t n = (size_t)(m > 0 ? m : 1), f = (size_t)(nf > 0 ? nf : 1);
    double *v = malloc(19 * n * sizeof *v), *Xs = malloc(n * f * sizeof *Xs),
           *Mf = malloc(f * f * sizeof *Mf), *u = malloc(2 * f * sizeof *u);
    int rc = 1;
    double flops = 0;
    *gap = INFINITY;
    if (!v || !Xs || !Mf || !u) {
        rc = -1;
        goto out;
    }
    double *z = v, *g = z + n, *sl = g + n, *su = sl + n, *zl = su + n, *zu = zl + n,
           *E = zu + n, *r = E + n, *q = r + n, *p = q + n, *dc = p + n, *dzl = dc + n,
           *dzu = dzl + n, *ac = dzu + n, *azl = ac + n, *azu = azl + n, *tl = azu + n,
           *tu = tl + n, *cb = tu + n, *dw = u, *aw = u + f;
    double best = INFINITY;   /* the best certified gap, its c in cb */
    int worse = 0;
    double mn = (double)m * nf;
    /* the start: c inside its box, at least a tenth of the box from either bound (the
     * central path is far from the bounds; a start near them makes short steps) */
    for (int64_t i = 0; i < m; i++) {
        double b = (hi[i] - lo[i]) / 10;
        c[i] = c[i] < lo[i] + b ? lo[i] + b : c[i] > hi[i] - b ? hi[i] - b : c[i];
    }
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)m, nf, 1, X, nf, c, 1, 0, w, 1);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, nf, 1, X, nf, w, 1, 0, z, 1);
    double gs = 0;
    for (int64_t i = 0; i < m; i++) {
        g[i] = z[i] + a[i] + d[i] * c[i];
        gs += fabs(g[i]);
    }
    gs = gs / (double)n + 1e-300;
    for (int64_t i = 0; i < m; i++) {   /* multipliers: the gradient's sign, and some */
        zl[i] = (g[i] > 0 ? g[i] : 0) + gs / 10;
        zu[i] = (g[i] < 0 ? -g[i] : 0) + gs / 10;
    }
    flops += 2 * mn;
    for (int it = 0;; it++) {
        double ww = cblas_ddot(nf, w, 1, w, 1), Gc = ww / 2;
        for (int64_t i = 0; i < m; i++) {
            g[i] = z[i] + a[i] + d[i] * c[i];
            Gc += a[i] * c[i] + d[i] * c[i] * c[i] / 2;
        }
        double LB = ipm_lower(m, z, lo, hi, a, d, ww), sc = fmax(fabs(Gc), fabs(LB));
        *gap = sc > 0 ? (Gc - LB) / sc : 0;
        if (!isfinite(*gap))   /* overflow: no certificate, stop */
            break;
        if (*gap < best) {
            best = *gap;
            memcpy(cb, c, n * sizeof *cb);
            worse = 0;
        } else if (best < KM_IPM_STALL && ++worse >= 2) {
            /* near the end the Woodbury solve loses accuracy (E -> 0 on the free
             * coefficients): the gap stalls (early on it may rise: not a stall) */
            break;
        }
        if (*gap <= tol || it >= maxit)
            break;
        double mu = 0;
        for (int64_t i = 0; i < m; i++) {
            sl[i] = c[i] - lo[i];
            su[i] = hi[i] - c[i];
            E[i] = d[i] + zl[i] / sl[i] + zu[i] / su[i];
            double s = 1 / sqrt(E[i]);
            for (int j = 0; j < nf; j++)
                Xs[(size_t)i * f + (size_t)j] = X[(size_t)i * f + (size_t)j] * s;
            mu += sl[i] * zl[i] + su[i] * zu[i];
        }
        mu /= 2 * (double)m;
        if (!(mu > 0))
            break;
        /* M = I + X'E^-1 X: row-major lower = column-major upper */
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, nf, (int)m, 1, Xs, nf, 0, Mf, nf);
        for (int j = 0; j < nf; j++)
            Mf[(size_t)j * f + (size_t)j] += 1;
        if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', nf, Mf, nf) != 0) {
            break;
        }
        flops += mn * nf / 2 + (double)nf * nf * nf / 6 + 10 * mn;
        /* the predictor (affine scaling): complementarity targets 0 */
        for (int64_t i = 0; i < m; i++)
            r[i] = -g[i];
        ipm_solve(m, nf, X, E, Mf, r, q, p, aw, ac);
        for (int64_t i = 0; i < m; i++) {
            azl[i] = -zl[i] - zl[i] / sl[i] * ac[i];
            azu[i] = -zu[i] + zu[i] / su[i] * ac[i];
        }
        double ta = ipm_step(m, sl, su, zl, zu, ac, azl, azu), mua = 0;
        for (int64_t i = 0; i < m; i++)
            mua += (sl[i] + ta * ac[i]) * (zl[i] + ta * azl[i]) +
                   (su[i] - ta * ac[i]) * (zu[i] + ta * azu[i]);
        mua /= 2 * (double)m;
        double sigma = mua / mu;
        sigma = sigma * sigma * sigma;
        /* the corrector (Mehrotra): targets sigma mu less the predictor's second order */
        for (int64_t i = 0; i < m; i++) {
            tl[i] = sigma * mu - ac[i] * azl[i];
            tu[i] = sigma * mu + ac[i] * azu[i];
            r[i] = -g[i] + tl[i] / sl[i] - tu[i] / su[i];
        }
        ipm_solve(m, nf, X, E, Mf, r, q, p, dw, dc);
        for (int64_t i = 0; i < m; i++) {
            dzl[i] = tl[i] / sl[i] - zl[i] - zl[i] / sl[i] * dc[i];
            dzu[i] = tu[i] / su[i] - zu[i] + zu[i] / su[i] * dc[i];
        }
        double t = ipm_step(m, sl, su, zl, zu, dc, dzl, dzu);
        t = t < 1 ? 0.99 * t : 1;
        for (int64_t i = 0; i < m; i++) {
            c[i] += t * dc[i];
            c[i] = c[i] <= lo[i] ? lo[i] + 0.01 * sl[i] : c[i] >= hi[i] ? hi[i] - 0.01 * su[i] : c[i];
            zl[i] += t * dzl[i];
            zu[i] += t * dzu[i];
        }
        /* w = X'c and z = X w afresh (updated by t dw and t X dw they drift, and the gap
         * would certify the drifted point) */
        cblas_dgemv(CblasRowMajor, CblasTrans, (int)m, nf, 1, X, nf, c, 1, 0, w, 1);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, nf, 1, X, nf, w, 1, 0, z, 1);
    }
    if (isfinite(best)) {   /* the best iterate */
        memcpy(c, cb, n * sizeof *c);
        cblas_dgemv(CblasRowMajor, CblasTrans, (int)m, nf, 1, X, nf, c, 1, 0, w, 1);
        flops += mn;
    }
    *gap = best;
    rc = best <= tol ? 0 : 1;
out:
    *work += flops;
    free(v);
    free(Xs);
    free(Mf);
    free(u);
    return rc;
}
