/* okl.c - see okl.h. Row-major matrices throughout; l x p work matrices, no m x m one. */
#include "okl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#define RANK_TOL 1e-10 /* eigenvalues of L below this fraction of the largest count as 0 */
#define ESCAPE_TOL 1e-3 /* a saddle: ||C'KC||_2 > 1 + this (Lemma 8's (13) violated) */
#define ESCAPE_SIZE 1e-2 /* the added direction's share of the largest eigenvalue of L */
#define AA_MEM 5       /* Anderson acceleration: steps remembered */
#define AA_REG 1e-12   /* its least squares: ridge relative to the Gram matrix's trace */

/* A point B = Y~' M of the iteration with its A-step (lines 5-7) and objective. */
typedef struct point {
    double *M;           /* l x p; B = Y~' M (undefined while the state is B = I) */
    double *YB, *BtB;    /* Y~ B (l x p), B'B (p x p) */
    double *W, *t;       /* B'B = W diag(t) W', t ascending, clamped at 0 */
    double *Q, *V, *E;   /* Q = Y~ B W, V = Q ./ (s t' + lambda), E = diag(s) V (l x p) */
    double res, obj;     /* ||Y - K A B'||_F^2 and Q(A, B) at A = A*(B) */
} point;

struct km_okl {
    int64_t l, m, lv;
    int p;
    km_okl_param par;
    double alpha;
    double *U, *s;       /* K = U diag(s) U' (columns of U), s clamped at 0 */
    double *Yt;          /* Y~ = U'Y, l x m */
    double *G;           /* Y~ Y~', l x l */
    double ynorm2;       /* ||Y||_F^2 = tr(G) */
    double *KvU, *H;     /* validation: Kv U and Yv Y~' (lv x l); yv2 = ||Yv||_F^2 */
    double yv2;
    /* the state: B = I (m x p) when start, else point pt[cur]; zero: the solution is L = 0 */
    int start, zero, cur;
    double lambda;
    point pt[3], kept;   /* current, step and trial points; a kept solution (km_okl_keep) */
    /* Anderson acceleration over the steps x -> y = T(x): the differences between
     * consecutive steps of T(x) = y->M, G T(x) = y->YB, f = T(x) - x = D and G f (a ring of
     * AA_MEM), the previous step's values (p*), and the Gram matrix aH_ij = <dF_i, G dF_j> */
    double *aT[AA_MEM], *aGT[AA_MEM], *aF[AA_MEM], *aGF[AA_MEM];
    double *pT, *pGT, *pF, *pGF;
    double aH[AA_MEM * AA_MEM];
    int64_t na;          /* steps recorded since the last reset */
    int extrap;          /* the last trial extrapolated along the step (no Anderson) */
    double beta;         /* its factor */
    double klambda;
    int kstart, kzero, has_kept;
    double *D, *GD, *S, *X, *R, *HM, *work, *T1, *N, *u;
};

km_okl_param km_okl_param_default(void)
{
    km_okl_param p = {0};
    p.p = 1;
    p.delta = 1e-6;
    p.max_iter = 10000;
    return p;
}

static void point_free(point *x)
{
    double *v[] = {x->M, x->YB, x->BtB, x->W, x->t, x->Q, x->V, x->E};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
}

void km_okl_free(km_okl *O)
{
    if (!O)
        return;
    double *v[] = {O->U, O->s, O->Yt, O->G, O->KvU, O->H, O->D, O->GD, O->S, O->X, O->R,
                   O->HM, O->work, O->T1, O->N, O->u};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
    for (int k = 0; k < AA_MEM; k++) {
        free(O->aT[k]);
        free(O->aGT[k]);
        free(O->aF[k]);
        free(O->aGF[k]);
    }
    free(O->pT);
    free(O->pGT);
    free(O->pF);
    free(O->pGF);
    for (int k = 0; k < 3; k++)
        point_free(&O->pt[k]);
    point_free(&O->kept);
    free(O);
}

static double *alloc(int64_t a, int64_t b, int *fail)
{
    double *x = malloc((size_t)(a > 0 ? a : 1) * (size_t)(b > 0 ? b : 1) * sizeof *x);
    *fail |= !x;
    return x;
}

static void point_alloc(point *x, int64_t l, int64_t p, int *fail)
{
    x->M = alloc(l, p, fail);
    x->YB = alloc(l, p, fail);
    x->Q = alloc(l, p, fail);
    x->V = alloc(l, p, fail);
    x->E = alloc(l, p, fail);
    x->BtB = alloc(p, p, fail);
    x->W = alloc(p, p, fail);
    x->t = alloc(p, 1, fail);
}

static void point_copy(point *dst, const point *src, int64_t l, int64_t p)
{
    size_t lp = (size_t)(l * p) * sizeof(double), pp = (size_t)(p * p) * sizeof(double);
    memcpy(dst->M, src->M, lp);
    memcpy(dst->YB, src->YB, lp);
    memcpy(dst->Q, src->Q, lp);
    memcpy(dst->V, src->V, lp);
    memcpy(dst->E, src->E, lp);
    memcpy(dst->BtB, src->BtB, pp);
    memcpy(dst->W, src->W, pp);
    memcpy(dst->t, src->t, (size_t)p * sizeof(double));
    dst->res = src->res;
    dst->obj = src->obj;
}

static double dot(int64_t n, const double *x, const double *y)
{
    return cblas_ddot((blasint)n, x, 1, y, 1);
}

/* Makes the p x p row-major matrix A symmetric from its upper triangle. */
static void symmetrize(double *A, int64_t p)
{
    for (int64_t i = 0; i < p; i++)
        for (int64_t j = 0; j < i; j++)
            A[i * p + j] = A[j * p + i];
}

km_okl *km_okl_new(const double *K, const double *Y, int64_t l, int64_t m, const double *Kv,
                   const double *Yv, int64_t lv, const km_okl_param *par, km_error *err)
{
    if (l < 1 || m < 1)
        return km_error_set(err, KM_EUSAGE, "okl: no training data"), NULL;
    if (!par->identity && (par->p < 1 || par->p > m))
        return km_error_set(err, KM_EUSAGE, "okl: the rank p = %d must be in 1..%lld (the "
                            "number of outputs)", par->p, (long long)m), NULL;
    if (!(par->delta > 0) || par->max_iter < 1)
        return km_error_set(err, KM_EUSAGE, "okl: need delta > 0 and max_iter >= 1"), NULL;
    km_okl *O = calloc(1, sizeof *O);
    if (!O)
        return km_error_nomem(err, "okl"), NULL;
    O->l = l;
    O->m = m;
    O->lv = lv;
    O->par = *par;
    /* p > l changes nothing but the start: an optimal L has rank <= rank K <= l (Lemma 8,
     * (12)), so the iteration works with min(p, l) columns */
    int64_t p = O->p = par->identity ? 0 : par->p < l ? par->p : (int)l;
    int fail = 0;
    O->U = alloc(l, l, &fail);
    O->s = alloc(l, 1, &fail);
    O->Yt = alloc(l, m, &fail);
    O->G = alloc(l, l, &fail);
    if (lv > 0) {
        O->KvU = alloc(lv, l, &fail);
        O->H = alloc(lv, l, &fail);
        O->R = alloc(lv, par->identity ? l : p, &fail);
        O->HM = alloc(lv, p, &fail);
    }
    if (!par->identity) {
        for (int k = 0; k < 3; k++)
            point_alloc(&O->pt[k], l, p, &fail);
        point_alloc(&O->kept, l, p, &fail);
        O->D = alloc(l, p, &fail);
        O->GD = alloc(l, p, &fail);
        O->X = alloc(l, p, &fail);
        O->S = alloc(p, p, &fail);
        O->T1 = alloc(l, l, &fail);
        O->N = alloc(l, l, &fail);
        O->u = alloc(l, 2, &fail);
        for (int k = 0; k < AA_MEM && !par->plain; k++) {
            O->aT[k] = alloc(l, p, &fail);
            O->aGT[k] = alloc(l, p, &fail);
            O->aF[k] = alloc(l, p, &fail);
            O->aGF[k] = alloc(l, p, &fail);
        }
        if (!par->plain) {
            O->pT = alloc(l, p, &fail);
            O->pGT = alloc(l, p, &fail);
            O->pF = alloc(l, p, &fail);
            O->pGF = alloc(l, p, &fail);
        }
    }
    O->work = alloc(l, l, &fail);
    if (fail) {
        km_okl_free(O);
        return km_error_nomem(err, "okl matrices"), NULL;
    }
    /* line 1: K = U diag(s) U' */
    memcpy(O->U, K, (size_t)(l * l) * sizeof *K);
    if (LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)l, O->U, (lapack_int)l, O->s)) {
        km_okl_free(O);
        return km_error_set(err, KM_EINTERNAL, "okl: eigendecomposition of K failed"), NULL;
    }
    for (int64_t i = 0; i < l; i++)
        O->s[i] = O->s[i] > 0 ? O->s[i] : 0; /* K is PSD: rounding noise only */
    /* line 3: Y~ = U'Y; G = Y~ Y~' */
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)l, (blasint)m, (blasint)l,
                1, O->U, (blasint)l, Y, (blasint)m, 0, O->Yt, (blasint)m);
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (blasint)l, (blasint)m, 1, O->Yt,
                (blasint)m, 0, O->G, (blasint)l);
    symmetrize(O->G, l);
    O->ynorm2 = 0;
    for (int64_t i = 0; i < l; i++)
        O->ynorm2 += O->G[i * l + i];
    /* alpha^2 = ||Y'KY||_2 = lambda_max(S^1/2 G S^1/2) (the nonzero spectra agree) */
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < l; j++)
            O->work[i * l + j] = sqrt(O->s[i] * O->s[j]) * O->G[i * l + j];
    double top = 0;
    lapack_int found;
    lapack_int *isuppz = malloc(2 * sizeof *isuppz);
    if (!isuppz || LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'N', 'I', 'U', (lapack_int)l, O->work,
                                  (lapack_int)l, 0, 0, (lapack_int)l, (lapack_int)l, 0, &found,
                                  &top, NULL, 1, isuppz)) {
        free(isuppz);
        km_okl_free(O);
        return km_error_set(err, KM_EINTERNAL, "okl: eigenvalue of Y'KY failed"), NULL;
    }
    free(isuppz);
    O->alpha = sqrt(top > 0 ? top : 0);
    /* validation: Kv U, H = Yv Y~', ||Yv||^2 */
    if (lv > 0) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)lv, (blasint)l,
                    (blasint)l, 1, Kv, (blasint)l, O->U, (blasint)l, 0, O->KvU, (blasint)l);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)lv, (blasint)l,
                    (blasint)m, 1, Yv, (blasint)m, O->Yt, (blasint)m, 0, O->H, (blasint)l);
        O->yv2 = dot(lv * m, Yv, Yv);
    }
    O->start = 1;
    return O;
}

double km_okl_alpha(const km_okl *O)
{
    return O->alpha;
}

int64_t km_okl_ncodes(const km_okl *O)
{
    return O->par.identity ? O->m : O->p;
}

/* Lines 5-7 at x (given x->YB = Y~ B and x->BtB = B'B): B'B = W diag(t) W', Q = Y~ B W,
 * V = Q ./ (s t' + lambda), E = diag(s) V (line 9), and Q(A*(B), B) of (4) in reduced form:
 * ||Y - K A B'||^2 = ||Y||^2 - 2 <E, Q> + sum_j t_j ||E_j||^2, <A, K A> = sum_i s_i ||V_i||^2,
 * ||B||^2 = sum_j t_j (A = U V W', K A B' = U E W' B', W' B'B W = diag(t)). */
static int a_step(km_okl *O, point *x, km_error *err)
{
    int64_t l = O->l, p = O->p;
    memcpy(x->W, x->BtB, (size_t)(p * p) * sizeof *x->W);
    if (LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)p, x->W, (lapack_int)p, x->t))
        return km_error_set(err, KM_EINTERNAL, "okl: eigendecomposition of B'B failed");
    for (int64_t j = 0; j < p; j++)
        x->t[j] = x->t[j] > 0 ? x->t[j] : 0;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)l, (blasint)p, (blasint)p,
                1, x->YB, (blasint)p, x->W, (blasint)p, 0, x->Q, (blasint)p);
    double ka = 0, fit = 0, tr = 0;
    for (int64_t i = 0; i < l; i++) {
        double si = O->s[i], vv = 0;
        for (int64_t j = 0; j < p; j++) {
            double v = x->Q[i * p + j] / (si * x->t[j] + O->lambda);
            x->V[i * p + j] = v;
            x->E[i * p + j] = si * v;
            vv += v * v;
            fit += x->t[j] * si * si * v * v;
        }
        ka += si * vv;
    }
    for (int64_t j = 0; j < p; j++)
        tr += x->t[j];
    double res = O->ynorm2 - 2 * dot(l * p, x->E, x->Q) + fit;
    x->res = res > 0 ? res : 0;
    x->obj = x->res / (2 * O->lambda) + ka / 2 + tr / 2;
    return KM_OK;
}

/* B'B = M' (Y~ B) of a point, exactly symmetric. */
static void gram(km_okl *O, point *x)
{
    int64_t l = O->l, p = O->p;
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)p, (blasint)p, (blasint)l, 1,
                x->M, (blasint)p, x->YB, (blasint)p, 0, x->BtB, (blasint)p);
    for (int64_t i = 0; i < p; i++)
        for (int64_t j = 0; j < i; j++)
            x->BtB[i * p + j] = x->BtB[j * p + i] = (x->BtB[i * p + j] + x->BtB[j * p + i]) / 2;
}

/* Line 10 in reduced form from x (after its A-step) to y: y->M = E (E'E + lambda I)^-1 W'
 * (B_new = Y~' y->M), y->YB = G y->M, y->BtB; D = y->M - x->M and GD = G D (when x is not
 * the start B = I); returns ||B_new - B||_F^2 (= <D, G D>). */
static int b_step(km_okl *O, const point *x, point *y, double *d2, km_error *err)
{
    int64_t l = O->l, p = O->p, m = O->m;
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (blasint)p, (blasint)l, 1, x->E,
                (blasint)p, 0, O->S, (blasint)p);
    for (int64_t j = 0; j < p; j++)
        O->S[j * p + j] += O->lambda;
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)p, O->S, (lapack_int)p))
        return km_error_set(err, KM_EINTERNAL, "okl: E'E + lambda I is not positive definite");
    /* X = E (R'R)^-1: X R' R = E, two triangular solves from the right */
    memcpy(O->X, x->E, (size_t)(l * p) * sizeof *O->X);
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, (blasint)l,
                (blasint)p, 1, O->S, (blasint)p, O->X, (blasint)p);
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasUpper, CblasTrans, CblasNonUnit, (blasint)l,
                (blasint)p, 1, O->S, (blasint)p, O->X, (blasint)p);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)l, (blasint)p, (blasint)p,
                1, O->X, (blasint)p, x->W, (blasint)p, 0, y->M, (blasint)p);
    cblas_dsymm(CblasRowMajor, CblasLeft, CblasUpper, (blasint)l, (blasint)p, 1, O->G,
                (blasint)l, y->M, (blasint)p, 0, y->YB, (blasint)p);
    if (O->start) {
        /* ||Y~'M - I||^2 = <M, G M> - 2 sum_j <Y~ column j, M column j> + p */
        double c = 0;
        for (int64_t i = 0; i < l; i++)
            for (int64_t j = 0; j < p; j++)
                c += O->Yt[i * m + j] * y->M[i * p + j];
        *d2 = dot(l * p, y->M, y->YB) - 2 * c + (double)p;
    } else {
        /* ||Y~'D||^2 = <D, G D> with G D = Y~B_new - Y~B: the rounding of the difference
         * stays relative to ||Y~B||, far below the tolerances of the stopping test */
        for (int64_t k = 0; k < l * p; k++) {
            O->D[k] = y->M[k] - x->M[k];
            O->GD[k] = y->YB[k] - x->YB[k];
        }
        *d2 = dot(l * p, O->D, O->GD);
    }
    *d2 = *d2 > 0 ? *d2 : 0;
    gram(O, y);
    return KM_OK;
}

/* Anderson acceleration of the fixed-point map T of Algorithm 1 (x -> y), in the metric of
 * B = Y~'M (<D1, D2> = tr(D1' G D2)): records the step just taken, then builds the trial
 * z = T(x_k) - sum_i gamma_i dT_i with gamma minimising ||f_k - sum_i gamma_i dF_i||, the
 * d's the differences between consecutive steps (f = T(x) - x). Returns 0 when there is
 * no trial yet (the first step after a reset). */
static int anderson(km_okl *O, const point *y, point *z)
{
    int64_t n = O->l * O->p, k = O->na++;
    double *cur[4] = {y->M, y->YB, O->D, O->GD}, *prev[4] = {O->pT, O->pGT, O->pF, O->pGF};
    if (k > 0) {
        int s = (int)((k - 1) % AA_MEM);
        double *diff[4] = {O->aT[s], O->aGT[s], O->aF[s], O->aGF[s]};
        for (int v = 0; v < 4; v++)
            for (int64_t t = 0; t < n; t++)
                diff[v][t] = cur[v][t] - prev[v][t];
        int q = (int)(k < AA_MEM ? k : AA_MEM);
        for (int j = 0; j < q; j++)
            O->aH[s * AA_MEM + j] = O->aH[j * AA_MEM + s] = dot(n, O->aF[s], O->aGF[j]);
    }
    for (int v = 0; v < 4; v++)
        memcpy(prev[v], cur[v], (size_t)n * sizeof(double));
    if (k == 0)
        return 0;
    int q = (int)(k < AA_MEM ? k : AA_MEM);
    double Hm[AA_MEM * AA_MEM], gamma[AA_MEM], trace = 0;
    for (int i = 0; i < q; i++) {
        for (int j = 0; j < q; j++)
            Hm[i * q + j] = O->aH[i * AA_MEM + j];
        gamma[i] = dot(n, O->aGF[i], O->D);
        trace += Hm[i * q + i];
    }
    for (int i = 0; i < q; i++)
        Hm[i * q + i] += AA_REG * trace + 1e-300;
    O->extrap = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', q, 1, Hm, q, gamma, 1) != 0;
    if (O->extrap) {
        /* the differences are numerically parallel: the iteration drifts along one
         * direction (f_k ~ f_k-1, as for 1,000 iterations at one lambda of Experiment 2).
         * Extrapolate along the last step instead, z = T(x) + beta f, beta doubling while
         * the trials pay and back to 1 when one does not */
        for (int64_t t = 0; t < n; t++) {
            z->M[t] = y->M[t] + O->beta * O->D[t];
            z->YB[t] = y->YB[t] + O->beta * O->GD[t];
        }
        gram(O, z);
        return 1;
    }
    memcpy(z->M, y->M, (size_t)n * sizeof(double));
    memcpy(z->YB, y->YB, (size_t)n * sizeof(double));
    for (int i = 0; i < q; i++) {
        cblas_daxpy((blasint)n, -gamma[i], O->aT[i], 1, z->M, 1);
        cblas_daxpy((blasint)n, -gamma[i], O->aGT[i], 1, z->YB, 1);
    }
    gram(O, z);
    return 1;
}

/* Lemma 8 used constructively at a converged point x of rank < p: C of (11) is the
 * residual over lambda, U'C = (Y~ - E W'B') / lambda = Phi Y~ / lambda, Phi = I - E W'M',
 * so the nonzero spectrum of C'KC is that of N = S^1/2 Phi G Phi' S^1/2 / lambda^2 (l x l).
 * If ||C'KC||_2 > 1 + ESCAPE_TOL, (13) fails: x is a saddle, and its top eigenvector
 * v = Y~'Phi'S^1/2 u (N u = mu u) is a descent direction for L; it is added to B in the
 * weakest eigendirection of B'B (x moves to the new point, A-step done). Returns 1 when x
 * moved, 0 when (13) holds or B has no free direction. */
static int escape(km_okl *O, point *x, km_error *err)
{
    int64_t l = O->l, p = O->p;
    double tmax = x->t[p - 1], lambda = O->lambda;
    if (!(x->t[0] <= RANK_TOL * tmax))
        return 0; /* full rank p: the rank constraint binds, (13) need not hold */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)l, (blasint)p, (blasint)p, 1,
                x->E, (blasint)p, x->W, (blasint)p, 0, O->X, (blasint)p);
    double *Phi = O->work;
    for (int64_t k = 0; k < l * l; k++)
        Phi[k] = 0;
    for (int64_t i = 0; i < l; i++)
        Phi[i * l + i] = 1;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)l, (blasint)l, (blasint)p, -1,
                O->X, (blasint)p, x->M, (blasint)p, 1, Phi, (blasint)l);
    cblas_dsymm(CblasRowMajor, CblasRight, CblasUpper, (blasint)l, (blasint)l, 1, O->G,
                (blasint)l, Phi, (blasint)l, 0, O->T1, (blasint)l);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)l, (blasint)l, (blasint)l, 1,
                O->T1, (blasint)l, Phi, (blasint)l, 0, O->N, (blasint)l);
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < l; j++)
            O->N[i * l + j] *= sqrt(O->s[i] * O->s[j]) / (lambda * lambda);
    double mu = 0;
    lapack_int found, isuppz[2];
    if (LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'U', (lapack_int)l, O->N, (lapack_int)l, 0,
                       0, (lapack_int)l, (lapack_int)l, 0, &found, &mu, O->u, 1, isuppz))
        return km_error_set(err, KM_EINTERNAL, "okl: eigenvalue of C'KC failed"), -1;
    if (!(mu > 1 + ESCAPE_TOL))
        return 0;
    /* w = Phi' S^1/2 u: the direction in M coordinates; ||v||^2 = w'Gw */
    double *w = O->u + l;
    for (int64_t i = 0; i < l; i++)
        O->u[i] *= sqrt(O->s[i]);
    cblas_dgemv(CblasRowMajor, CblasTrans, (blasint)l, (blasint)l, 1, Phi, (blasint)l, O->u, 1,
                0, w, 1);
    cblas_dsymv(CblasRowMajor, CblasUpper, (blasint)l, 1, O->G, (blasint)l, w, 1, 0, O->u, 1);
    double vv = dot(l, w, O->u);
    if (!(vv > 0))
        return 0;
    /* M += tau w W_0' (W_0: the eigenvector of B'B with the least eigenvalue) */
    double tau = sqrt(ESCAPE_SIZE * (tmax > 0 ? tmax : 1) / vv);
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < p; j++)
            x->M[i * p + j] += tau * w[i] * x->W[j * p];
    cblas_dsymm(CblasRowMajor, CblasLeft, CblasUpper, (blasint)l, (blasint)p, 1, O->G,
                (blasint)l, x->M, (blasint)p, 0, x->YB, (blasint)p);
    gram(O, x);
    return a_step(O, x, err) ? -1 : 1;
}

/* Rank, objective, training and validation MSE at the current point x. */
static void evaluate(km_okl *O, const point *x, km_okl_info *info)
{
    int64_t l = O->l, p = O->p, m = O->m, lv = O->lv;
    info->objective = x->obj;
    info->train_mse = x->res / ((double)l * (double)m);
    info->rank = 0;
    double tmax = p > 0 ? x->t[p - 1] : 0; /* ascending */
    for (int64_t j = 0; j < p; j++)
        info->rank += x->t[j] > RANK_TOL * tmax && tmax > 0;
    info->valid_mse = NAN;
    if (lv > 0) {
        /* R = Kv U V, Yv B W = H M W: ||Yv - R W'B'||^2 = yv2 - 2 <H M W, R>
         * + sum_j t_j ||R_j||^2 (X is free work space between steps) */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)lv, (blasint)p,
                    (blasint)l, 1, O->KvU, (blasint)l, x->V, (blasint)p, 0, O->R, (blasint)p);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)l, (blasint)p,
                    (blasint)p, 1, x->M, (blasint)p, x->W, (blasint)p, 0, O->X, (blasint)p);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)lv, (blasint)p,
                    (blasint)l, 1, O->H, (blasint)l, O->X, (blasint)p, 0, O->HM, (blasint)p);
        double vfit = 0, vcross = dot(lv * p, O->HM, O->R);
        for (int64_t j = 0; j < p; j++)
            vfit += x->t[j] * cblas_ddot((blasint)lv, O->R + j, (blasint)p, O->R + j, (blasint)p);
        double vres = O->yv2 - 2 * vcross + vfit;
        info->valid_mse = (vres > 0 ? vres : 0) / ((double)lv * (double)m);
    }
}

/* The baseline L = I at lambda: C = U diag(1 / (s + lambda)) Y~, all in closed form. */
static void solve_identity(km_okl *O, km_okl_info *info)
{
    int64_t l = O->l, m = O->m, lv = O->lv;
    double lambda = O->lambda, res = 0, ka = 0;
    for (int64_t i = 0; i < l; i++) {
        double g = O->G[i * l + i], r = lambda / (O->s[i] + lambda);
        res += r * r * g;
        ka += O->s[i] * g / ((O->s[i] + lambda) * (O->s[i] + lambda));
    }
    info->objective = res / (2 * lambda) + ka / 2 + (double)m / 2;
    info->train_mse = res / ((double)l * (double)m);
    info->rank = (int)(m < INT32_MAX ? m : INT32_MAX);
    info->iter = 0;
    info->converged = 1;
    info->valid_mse = NAN;
    if (lv > 0) {
        /* R = Kv U diag(1 / (s + lambda)); ||Yv - R Y~||^2 = yv2 - 2 <H, R> + <R G, R> */
        for (int64_t a = 0; a < lv; a++)
            for (int64_t i = 0; i < l; i++)
                O->R[a * l + i] = O->KvU[a * l + i] / (O->s[i] + lambda);
        double vres = O->yv2 - 2 * dot(lv * l, O->H, O->R);
        for (int64_t a = 0; a < lv; a++) {
            cblas_dsymv(CblasRowMajor, CblasUpper, (blasint)l, 1, O->G, (blasint)l,
                        O->R + a * l, 1, 0, O->work, 1);
            vres += dot(l, O->work, O->R + a * l);
        }
        info->valid_mse = (vres > 0 ? vres : 0) / ((double)lv * (double)m);
    }
}

int km_okl_solve(km_okl *O, double lambda, km_okl_info *info, km_error *err)
{
    if (!(lambda > 0) || !isfinite(lambda))
        return km_error_set(err, KM_EUSAGE, "okl: lambda must be > 0 and finite, got %g",
                            lambda);
    memset(info, 0, sizeof *info);
    info->lambda = O->lambda = lambda;
    if (O->par.identity) {
        solve_identity(O, info);
        return KM_OK;
    }
    int64_t l = O->l, p = O->p, m = O->m;
    O->zero = lambda >= O->alpha;
    if (O->zero) { /* Lemma 8: L = 0; start the next lambda from B = I again */
        O->start = 1;
        info->objective = O->ynorm2 / (2 * lambda);
        info->train_mse = O->ynorm2 / ((double)l * (double)m);
        info->valid_mse = O->lv > 0 ? O->yv2 / ((double)O->lv * (double)m) : NAN;
        info->converged = 1;
        return KM_OK;
    }
    point *x = &O->pt[O->cur];
    if (O->start) { /* line 2: B = I (m x p): Y~ B = the first p columns of Y~, B'B = I */
        for (int64_t i = 0; i < l; i++)
            memcpy(x->YB + i * p, O->Yt + i * m, (size_t)p * sizeof *x->YB);
        memset(x->BtB, 0, (size_t)(p * p) * sizeof *x->BtB);
        for (int64_t j = 0; j < p; j++)
            x->BtB[j * p + j] = 1;
    }
    int rc = a_step(O, x, err);
    double tol = O->par.delta * sqrt(O->alpha);
    O->na = 0;
    O->beta = 1;
    int escapes = 0;
    while (rc == KM_OK && info->iter < O->par.max_iter) {
        /* the step of Algorithm 1 into y; then, accelerated, Anderson's trial z, kept when
         * it lowers Q(A*(B), B) below y's (so Q still never increases) */
        int iy = (O->cur + 1) % 3, iz = (O->cur + 2) % 3;
        point *y = &O->pt[iy], *z = &O->pt[iz];
        double d2 = 0;
        int from_start = O->start;
        if ((rc = b_step(O, x, y, &d2, err)) || (rc = a_step(O, y, err)))
            break;
        O->start = 0;
        info->iter++;
        O->cur = iy;
        if (sqrt(d2) < tol) {
            int moved = !O->par.plain && escapes < O->p ? escape(O, y, err) : 0;
            if (moved < 0) {
                rc = err->code;
                break;
            }
            if (!moved) {
                info->converged = 1;
                break;
            }
            escapes++;
            O->na = 0;
            x = y;
            continue;
        }
        if (!O->par.plain && !from_start && anderson(O, y, z)) {
            if ((rc = a_step(O, z, err)))
                break;
            if (z->obj < y->obj)
                O->cur = iz;
            if (O->extrap)
                O->beta = O->cur == iz ? 2 * O->beta : 1;
        }
        x = &O->pt[O->cur];
    }
    if (rc == KM_OK)
        evaluate(O, &O->pt[O->cur], info);
    return rc;
}

void km_okl_A(km_okl *O, double *A)
{
    int64_t l = O->l;
    if (O->par.identity) { /* C = U diag(1 / (s + lambda)) Y~ */
        int64_t m = O->m;
        memset(A, 0, (size_t)(l * m) * sizeof *A);
        for (int64_t k = 0; k < l; k++)
            for (int64_t i = 0; i < l; i++) {
                double u = O->U[i * l + k] / (O->s[k] + O->lambda);
                cblas_daxpy((blasint)m, u, O->Yt + k * m, 1, A + i * m, 1);
            }
        return;
    }
    int64_t p = O->p;
    if (O->zero) {
        memset(A, 0, (size_t)(l * p) * sizeof *A);
        return;
    }
    /* line 12: A = U V W' (X is free work space between steps) */
    const point *x = &O->pt[O->cur];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)l, (blasint)p, (blasint)p, 1,
                x->V, (blasint)p, x->W, (blasint)p, 0, O->X, (blasint)p);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)l, (blasint)p, (blasint)l,
                1, O->U, (blasint)l, O->X, (blasint)p, 0, A, (blasint)p);
}

int km_okl_B(const km_okl *O, double *B, km_error *err)
{
    int64_t l = O->l, m = O->m, p = O->p;
    if (O->par.identity)
        return km_error_set(err, KM_EUSAGE, "okl: the baseline has B = I");
    if (O->zero) {
        memset(B, 0, (size_t)(m * p) * sizeof *B);
        return KM_OK;
    }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)m, (blasint)p, (blasint)l, 1,
                O->Yt, (blasint)m, O->pt[O->cur].M, (blasint)p, 0, B, (blasint)p);
    return KM_OK;
}

void km_okl_L_eigenvalues(const km_okl *O, double *t)
{
    for (int64_t j = 0; j < O->p; j++)
        t[j] = O->zero ? 0 : O->pt[O->cur].t[O->p - 1 - j];
}

void km_okl_keep(km_okl *O)
{
    O->has_kept = 1;
    O->klambda = O->lambda;
    O->kstart = O->start;
    O->kzero = O->zero;
    if (!O->par.identity)
        point_copy(&O->kept, &O->pt[O->cur], O->l, O->p);
}

void km_okl_recall(km_okl *O)
{
    if (!O->has_kept)
        return;
    O->lambda = O->klambda;
    O->start = O->kstart;
    O->zero = O->kzero;
    if (!O->par.identity)
        point_copy(&O->pt[O->cur], &O->kept, O->l, O->p);
}
