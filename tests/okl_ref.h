/* okl_ref.h - the plain Algorithm 1 of seed 001 (low-rank output kernel learning), line by
 * line on the full m x p matrix B, and direct evaluations of (4) and (11)-(13), for testing
 * the reduced production solver (common/okl.c). Header-only, small dense data, row-major.
 *
 *   Q(A, B) = ||Y - K A B'||_F^2 / (2 lambda) + <A, K A>_F / 2 + ||B||_F^2 / 2     (4)
 *   K C L + lambda C = Y (11),  (C'KC) B = B (12),  ||C'KC||_2 <= 1 (13),  L = B B'
 */
#ifndef KM_OKL_REF_H
#define KM_OKL_REF_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

/* C = A B (a x b times b x c), or with transposes; plain loops. */
static inline void ref_mul(int ta, int tb, int64_t a, int64_t b, int64_t c, const double *A,
                           const double *B, double *C)
{
    for (int64_t i = 0; i < a; i++)
        for (int64_t j = 0; j < c; j++) {
            double s = 0;
            for (int64_t k = 0; k < b; k++)
                s += (ta ? A[k * a + i] : A[i * b + k]) * (tb ? B[j * b + k] : B[k * c + j]);
            C[i * c + j] = s;
        }
}

/* Eigenvalues (ascending) and eigenvectors (columns of Z) of the symmetric n x n S. */
static inline void ref_eig(const double *S, int64_t n, double *Z, double *w)
{
    memcpy(Z, S, (size_t)(n * n) * sizeof *Z);
    LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)n, Z, (lapack_int)n, w);
}

/* ||Y'KY||_2 (m x m, formed explicitly). */
static inline double ref_norm_ytky(const double *K, const double *Y, int64_t l, int64_t m)
{
    double *KY = malloc((size_t)(l * m) * sizeof *KY), *T = malloc((size_t)(m * m) * sizeof *T);
    double *Z = malloc((size_t)(m * m) * sizeof *Z), *w = malloc((size_t)m * sizeof *w);
    ref_mul(0, 0, l, l, m, K, Y, KY);
    ref_mul(1, 0, m, l, m, Y, KY, T);
    ref_eig(T, m, Z, w);
    double top = w[m - 1];
    free(KY), free(T), free(Z), free(w);
    return top;
}

/* Q(A, B) of (4), directly. */
static inline double ref_okl_objective(const double *K, const double *Y, int64_t l, int64_t m,
                                       int64_t p, const double *A, const double *B,
                                       double lambda)
{
    double *KA = malloc((size_t)(l * p) * sizeof *KA), *F = malloc((size_t)(l * m) * sizeof *F);
    ref_mul(0, 0, l, l, p, K, A, KA);
    ref_mul(0, 1, l, p, m, KA, B, F);
    double res = 0, aka = 0, bb = 0;
    for (int64_t k = 0; k < l * m; k++)
        res += (Y[k] - F[k]) * (Y[k] - F[k]);
    for (int64_t k = 0; k < l * p; k++)
        aka += A[k] * KA[k];
    for (int64_t k = 0; k < m * p; k++)
        bb += B[k] * B[k];
    free(KA), free(F);
    return res / (2 * lambda) + aka / 2 + bb / 2;
}

/* Mean squared error of the predictions Kx A B' (n x m) against Yx. */
static inline double ref_okl_mse(const double *Kx, const double *Yx, int64_t n, int64_t l,
                                 int64_t m, int64_t p, const double *A, const double *B)
{
    double *KA = malloc((size_t)(n * p) * sizeof *KA), *F = malloc((size_t)(n * m) * sizeof *F);
    ref_mul(0, 0, n, l, p, Kx, A, KA);
    ref_mul(0, 1, n, p, m, KA, B, F);
    double res = 0;
    for (int64_t k = 0; k < n * m; k++)
        res += (Yx[k] - F[k]) * (Yx[k] - F[k]);
    free(KA), free(F);
    return res / ((double)n * (double)m);
}

/* The plain Algorithm 1 at one lambda, from the m x p matrix B (updated in place; B = I
 * on the first call of a path): a-step (lines 5-7), then repeat {b-step (lines 9-10),
 * a-step} until ||B - B_prev||_F < tol; A = U V W' (line 12) for the final B. Returns the
 * number of B updates. Everything in m dimensions; the linear system of line 10 by dgesv. */
static inline int64_t ref_okl_solve(const double *K, const double *Y, int64_t l, int64_t m,
                                    int64_t p, double lambda, double tol, int64_t max_iter,
                                    double *B, double *A)
{
    double *U = malloc((size_t)(l * l) * sizeof *U), *s = malloc((size_t)l * sizeof *s);
    double *Yt = malloc((size_t)(l * m) * sizeof *Yt), *BtB = malloc((size_t)(p * p) * 8);
    double *W = malloc((size_t)(p * p) * 8), *t = malloc((size_t)p * 8);
    double *YB = malloc((size_t)(l * p) * 8), *Q = malloc((size_t)(l * p) * 8);
    double *V = malloc((size_t)(l * p) * 8), *E = malloc((size_t)(l * p) * 8);
    double *S = malloc((size_t)(p * p) * 8), *T = malloc((size_t)(m * p) * 8);
    double *Bn = malloc((size_t)(m * p) * 8);
    lapack_int *piv = malloc((size_t)p * sizeof *piv);
    ref_eig(K, l, U, s);                                   /* line 1 */
    for (int64_t i = 0; i < l; i++)
        s[i] = s[i] > 0 ? s[i] : 0;
    ref_mul(1, 0, l, l, m, U, Y, Yt);                      /* line 3 */
    int64_t iter = 0;
    for (int first = 1;; first = 0) {
        ref_mul(1, 0, p, m, p, B, B, BtB);                 /* line 5 */
        ref_eig(BtB, p, W, t);
        for (int64_t j = 0; j < p; j++)
            t[j] = t[j] > 0 ? t[j] : 0;
        ref_mul(0, 0, l, m, p, Yt, B, YB);                 /* line 6 */
        ref_mul(0, 0, l, p, p, YB, W, Q);
        for (int64_t i = 0; i < l; i++)                    /* lines 7, 9 */
            for (int64_t j = 0; j < p; j++) {
                V[i * p + j] = Q[i * p + j] / (s[i] * t[j] + lambda);
                E[i * p + j] = s[i] * V[i * p + j];
            }
        if (!first) {
            double d = 0;
            for (int64_t k = 0; k < m * p; k++)
                d += (B[k] - Bn[k]) * (B[k] - Bn[k]);      /* Bn holds B_prev here */
            if (sqrt(d) < tol || iter >= max_iter)
                break;
        }
        /* line 10: B = Y~' E (E'E + lambda I)^-1 W'; (E'E + lambda I) X' = E' by dgesv */
        ref_mul(1, 0, p, l, p, E, E, S);
        for (int64_t j = 0; j < p; j++)
            S[j * p + j] += lambda;
        double *Xt = malloc((size_t)(p * l) * 8);
        for (int64_t i = 0; i < l; i++)
            for (int64_t j = 0; j < p; j++)
                Xt[j * l + i] = E[i * p + j];
        LAPACKE_dgesv(LAPACK_ROW_MAJOR, (lapack_int)p, (lapack_int)l, S, (lapack_int)p, piv, Xt,
                      (lapack_int)l);
        double *XW = malloc((size_t)(l * p) * 8);
        ref_mul(1, 1, l, p, p, Xt, W, XW);                 /* X W' with X = Xt' */
        memcpy(Bn, B, (size_t)(m * p) * 8);
        ref_mul(1, 0, m, l, p, Yt, XW, B);
        free(Xt), free(XW);
        iter++;
    }
    double *VW = malloc((size_t)(l * p) * 8);               /* line 12 */
    ref_mul(0, 1, l, p, p, V, W, VW);
    ref_mul(0, 0, l, l, p, U, VW, A);
    free(VW);
    free(U), free(s), free(Yt), free(BtB), free(W), free(t), free(YB), free(Q), free(V);
    free(E), free(S), free(T), free(Bn), free(piv);
    return iter;
}

/* The C of (11) for L = B B': (L kron K + lambda I) vec(C) = vec(Y), an (l m) x (l m)
 * system solved directly (vec over rows i of C then outputs j: C[i * m + j]). */
static inline void ref_okl_C(const double *K, const double *Y, int64_t l, int64_t m, int64_t p,
                             const double *B, double lambda, double *C)
{
    int64_t N = l * m;
    double *L = malloc((size_t)(m * m) * 8), *Sy = malloc((size_t)(N * N) * 8);
    lapack_int *piv = malloc((size_t)N * sizeof *piv);
    ref_mul(0, 1, m, p, m, B, B, L);
    /* (K C L)_ij = sum_k,q K_ik C_kq L_qj */
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < m; j++)
            for (int64_t k = 0; k < l; k++)
                for (int64_t q = 0; q < m; q++)
                    Sy[(i * m + j) * N + k * m + q] = K[i * l + k] * L[q * m + j] +
                                                      (i == k && j == q ? lambda : 0);
    memcpy(C, Y, (size_t)N * 8);
    LAPACKE_dgesv(LAPACK_ROW_MAJOR, (lapack_int)N, 1, Sy, (lapack_int)N, piv, C, 1);
    free(L), free(Sy), free(piv);
}

#endif
