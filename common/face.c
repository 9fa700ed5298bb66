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

int km_face_kwalk(int64_t nw, const double *K, const double *lo, const double *hi,
                  const double *a, const double *d, double mu, double budget, double *c,
                  double *zW, double *gain, double *work)
{
    *gain = 0;
    *work = 0;
    if (nw <= 0)
        return 0;
    size_t n = (size_t)nw;
    char *on = malloc(n);
    int64_t *O = malloc(n * sizeof *O);
    km_face_bp *bp = malloc(n * sizeof *bp);
    double *M = malloc(n * n * sizeof *M), *v = malloc(7 * n * sizeof *v);
    int rc = 0;
    if (!on || !O || !bp || !M || !v) {
        rc = -1;
        goto done;
    }
    double *g = v, *s = g + n, *S = s + n, *tk = S + n, *KA = tk + n, *B = KA + n,
           *u = B + n;
    memset(on, 1, n);
    double nww = (double)nw * (double)nw;
    int64_t no = 0;
    int fresh = 1;   /* O changed: a new factor */
    for (int64_t dir = 0; dir <= 4 * nw; dir++) {
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
            for (double r = flat ? 1 : 0; !ok && r <= 1e6; r = r > 0 ? 100 * r : 1) {
                for (int64_t p = 0; p < no; p++) {
                    const double *Kp = K + (size_t)O[p] * n;
                    for (int64_t q = 0; q <= p; q++)
                        M[p * no + q] = Kp[O[q]];
                    M[p * no + p] += d[O[p]] + r * mu;
                }
                ok = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)no, M,
                                    (lapack_int)no) == 0;
            }
            if (!ok)
                break;
            fresh = 0;
        }
        if (*work + 4 * nww > budget)
            break;
        *work += 4 * nww;   /* KA, the update of zW, the solve */
        for (int64_t p = 0; p < no; p++) {   /* g on O; s = -M^-1 g */
            int64_t k = O[p];
            g[k] = zW[k] + a[k] + d[k] * c[k];
            s[p] = -g[k];
        }
        if (LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)no, 1, M, (lapack_int)no, s, 1)
            != 0)
            break;
        int64_t nb = 0, out = 0;
        double G1 = 0, DS = 0;
        memset(S, 0, n * sizeof *S);
        memset(B, 0, n * sizeof *B);
        for (int64_t p = 0; p < no; p++) {
            int64_t k = O[p];
            double sk = s[p];
            tk[k] = sk > 0 ? (hi[k] - c[k]) / sk : sk < 0 ? (lo[k] - c[k]) / sk : INFINITY;
            if (!(tk[k] > 0)) {   /* on its bound and pointing out: stays, and leaves O */
                on[k] = 0;
                out++;
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
        cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)nw, (int)nw, 1, K, (int)nw, S, 1, 0, KA,
                    1);   /* KA = K A: A (= S) the moving part of the step, B the stopped */
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
            const double *Kk = K + (size_t)k * n;   /* column k = row k */
            for (int64_t j = 0; j < nw; j++)
                KA[j] -= sk * Kk[j];
            S[k] = 0;
            B[k] = bk - c[k];
            G1 -= g[k] * sk;
            DS -= d[k] * sk * sk;
        }
        if (!apply || !(f < 0))
            break;
        memset(u, 0, n * sizeof *u);
        for (int64_t p = 0; p < no; p++) {   /* apply: c, and zW by K_WW times the change */
            int64_t k = O[p];
            if (!on[k])
                continue;
            double sk = s[p], cn;
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
        cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)nw, (int)nw, 1, K, (int)nw, u, 1, 1, zW,
                    1);
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
