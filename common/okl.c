/* okl.c - see okl.h. Row-major matrices throughout; l x p work matrices, no m x m one. */
#include "okl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#define RANK_TOL 1e-10 /* eigenvalues of L below this fraction of the largest count as 0 */

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
    /* the state: B = I (m x p) when start, else B = Y~' M; zero: the solution is L = 0 */
    int start, zero;
    double lambda;
    double *M, *Mn, *D, *YB, *BtB, *W, *t, *Q, *V, *E, *S, *X, *R, *HM;
    double *work;
    /* a kept solution (km_okl_keep): lambda, flags, M, V, W, t */
    double klambda;
    int kstart, kzero, kept;
    double *kM, *kV, *kW, *kt;
};

km_okl_param km_okl_param_default(void)
{
    km_okl_param p = {0};
    p.p = 1;
    p.delta = 1e-6;
    p.max_iter = 10000;
    return p;
}

void km_okl_free(km_okl *O)
{
    if (!O)
        return;
    double *v[] = {O->U, O->s, O->Yt, O->G, O->KvU, O->H, O->M, O->Mn, O->D, O->YB,
                   O->BtB, O->W, O->t, O->Q, O->V, O->E, O->S, O->X, O->R, O->HM, O->work,
                   O->kM, O->kV, O->kW, O->kt};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
    free(O);
}

static double *alloc(int64_t a, int64_t b, int *fail)
{
    double *x = malloc((size_t)(a > 0 ? a : 1) * (size_t)(b > 0 ? b : 1) * sizeof *x);
    *fail |= !x;
    return x;
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
    int64_t p = O->p = par->identity ? 0 : par->p;
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
        double **lp[] = {&O->M, &O->Mn, &O->D, &O->YB, &O->Q, &O->V, &O->E, &O->X, &O->kM,
                         &O->kV};
        for (size_t i = 0; i < sizeof lp / sizeof *lp; i++)
            *lp[i] = alloc(l, p, &fail);
        O->BtB = alloc(p, p, &fail);
        O->W = alloc(p, p, &fail);
        O->kW = alloc(p, p, &fail);
        O->kt = alloc(p, 1, &fail);
        O->S = alloc(p, p, &fail);
        O->t = alloc(p, 1, &fail);
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

/* Lines 5-7: B'B = W diag(t) W', Q = Y~ B W, V = Q ./ (s t' + lambda), and E = diag(s) V
 * (line 9), for the current B (given by YB = Y~ B and BtB = B'B). */
static int a_step(km_okl *O, km_error *err)
{
    int64_t l = O->l, p = O->p;
    memcpy(O->W, O->BtB, (size_t)(p * p) * sizeof *O->W);
    if (LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)p, O->W, (lapack_int)p, O->t))
        return km_error_set(err, KM_EINTERNAL, "okl: eigendecomposition of B'B failed");
    for (int64_t j = 0; j < p; j++)
        O->t[j] = O->t[j] > 0 ? O->t[j] : 0;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)l, (blasint)p, (blasint)p,
                1, O->YB, (blasint)p, O->W, (blasint)p, 0, O->Q, (blasint)p);
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < p; j++) {
            O->V[i * p + j] = O->Q[i * p + j] / (O->s[i] * O->t[j] + O->lambda);
            O->E[i * p + j] = O->s[i] * O->V[i * p + j];
        }
    return KM_OK;
}

/* Line 10 in reduced form: M_new = E (E'E + lambda I)^-1 W' (B_new = Y~' M_new); returns
 * ||B_new - B||_F^2 and moves the state to B_new (M, YB = G M, BtB = M' G M). */
static int b_step(km_okl *O, double *d2, km_error *err)
{
    int64_t l = O->l, p = O->p, m = O->m;
    double lambda = O->lambda;
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (blasint)p, (blasint)l, 1, O->E,
                (blasint)p, 0, O->S, (blasint)p);
    for (int64_t j = 0; j < p; j++)
        O->S[j * p + j] += lambda;
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)p, O->S, (lapack_int)p))
        return km_error_set(err, KM_EINTERNAL, "okl: E'E + lambda I is not positive definite");
    /* X = E (R'R)^-1: X R' R = E, two triangular solves from the right */
    memcpy(O->X, O->E, (size_t)(l * p) * sizeof *O->X);
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, (blasint)l,
                (blasint)p, 1, O->S, (blasint)p, O->X, (blasint)p);
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasUpper, CblasTrans, CblasNonUnit, (blasint)l,
                (blasint)p, 1, O->S, (blasint)p, O->X, (blasint)p);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)l, (blasint)p, (blasint)p,
                1, O->X, (blasint)p, O->W, (blasint)p, 0, O->Mn, (blasint)p);
    if (O->start) {
        /* ||Y~'M - I||^2 = <M, G M> - 2 sum_j <Y~ column j, M column j> + p */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)l, (blasint)p,
                    (blasint)l, 1, O->G, (blasint)l, O->Mn, (blasint)p, 0, O->YB, (blasint)p);
        double c = 0;
        for (int64_t i = 0; i < l; i++)
            for (int64_t j = 0; j < p; j++)
                c += O->Yt[i * m + j] * O->Mn[i * p + j];
        *d2 = dot(l * p, O->Mn, O->YB) - 2 * c + (double)p;
    } else {
        /* ||Y~'(M_new - M)||^2 = <D, G D>; G D lands in X (free now) */
        for (int64_t k = 0; k < l * p; k++)
            O->D[k] = O->Mn[k] - O->M[k];
        cblas_dsymm(CblasRowMajor, CblasLeft, CblasUpper, (blasint)l, (blasint)p, 1, O->G,
                    (blasint)l, O->D, (blasint)p, 0, O->X, (blasint)p);
        *d2 = dot(l * p, O->D, O->X);
        cblas_dsymm(CblasRowMajor, CblasLeft, CblasUpper, (blasint)l, (blasint)p, 1, O->G,
                    (blasint)l, O->Mn, (blasint)p, 0, O->YB, (blasint)p);
    }
    *d2 = *d2 > 0 ? *d2 : 0;
    double *tmp = O->M;
    O->M = O->Mn;
    O->Mn = tmp;
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)p, (blasint)p, (blasint)l, 1,
                O->M, (blasint)p, O->YB, (blasint)p, 0, O->BtB, (blasint)p);
    for (int64_t i = 0; i < p; i++) /* exactly symmetric */
        for (int64_t j = 0; j < i; j++)
            O->BtB[i * p + j] = O->BtB[j * p + i] = (O->BtB[i * p + j] + O->BtB[j * p + i]) / 2;
    O->start = 0;
    return KM_OK;
}

/* Objective (4), training and validation MSE at the current (A, B) (after an A-step). */
static void evaluate(km_okl *O, km_okl_info *info)
{
    int64_t l = O->l, p = O->p, m = O->m, lv = O->lv;
    double lambda = O->lambda;
    double cross = dot(l * p, O->E, O->Q), fit = 0, ka = 0, tr = 0;
    for (int64_t j = 0; j < p; j++) {
        fit += O->t[j] * cblas_ddot((blasint)l, O->E + j, (blasint)p, O->E + j, (blasint)p);
        tr += O->t[j];
    }
    for (int64_t i = 0; i < l; i++)
        ka += O->s[i] * dot(p, O->V + i * p, O->V + i * p);
    double res = O->ynorm2 - 2 * cross + fit;
    res = res > 0 ? res : 0;
    info->objective = res / (2 * lambda) + ka / 2 + tr / 2;
    info->train_mse = res / ((double)l * (double)m);
    info->rank = 0;
    double tmax = p > 0 ? O->t[p - 1] : 0; /* ascending */
    for (int64_t j = 0; j < p; j++)
        info->rank += O->t[j] > RANK_TOL * tmax && tmax > 0;
    info->valid_mse = NAN;
    if (lv > 0) {
        /* R = Kv U V, Yv B W = H M W: ||Yv - R W'B'||^2 = yv2 - 2 <H M W, R>
         * + sum_j t_j ||R_j||^2 (D is free work space between steps) */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)lv, (blasint)p,
                    (blasint)l, 1, O->KvU, (blasint)l, O->V, (blasint)p, 0, O->R, (blasint)p);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)l, (blasint)p,
                    (blasint)p, 1, O->M, (blasint)p, O->W, (blasint)p, 0, O->D, (blasint)p);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)lv, (blasint)p,
                    (blasint)l, 1, O->H, (blasint)l, O->D, (blasint)p, 0, O->HM, (blasint)p);
        double vfit = 0, vcross = dot(lv * p, O->HM, O->R);
        for (int64_t j = 0; j < p; j++)
            vfit += O->t[j] * cblas_ddot((blasint)lv, O->R + j, (blasint)p, O->R + j, (blasint)p);
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
    if (O->start) { /* line 2: B = I (m x p): Y~ B = the first p columns of Y~, B'B = I */
        for (int64_t i = 0; i < l; i++)
            memcpy(O->YB + i * p, O->Yt + i * m, (size_t)p * sizeof *O->YB);
        memset(O->BtB, 0, (size_t)(p * p) * sizeof *O->BtB);
        for (int64_t j = 0; j < p; j++)
            O->BtB[j * p + j] = 1;
    }
    int rc = a_step(O, err);
    double tol = O->par.delta * sqrt(O->alpha);
    while (rc == KM_OK && info->iter < O->par.max_iter) {
        double d2 = 0;
        if ((rc = b_step(O, &d2, err)) || (rc = a_step(O, err)))
            break;
        info->iter++;
        if (sqrt(d2) < tol) {
            info->converged = 1;
            break;
        }
    }
    if (rc == KM_OK)
        evaluate(O, info);
    return rc;
}

void km_okl_A(km_okl *O, double *A)
{
    int64_t l = O->l;
    if (O->par.identity) { /* C = U diag(1 / (s + lambda)) Y~ */
        int64_t m = O->m;
        for (int64_t i = 0; i < l; i++)
            for (int64_t j = 0; j < m; j++)
                A[i * m + j] = 0;
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
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)l, (blasint)p, (blasint)p, 1,
                O->V, (blasint)p, O->W, (blasint)p, 0, O->X, (blasint)p);
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
                O->Yt, (blasint)m, O->M, (blasint)p, 0, B, (blasint)p);
    return KM_OK;
}

void km_okl_L_eigenvalues(const km_okl *O, double *t)
{
    for (int64_t j = 0; j < O->p; j++)
        t[j] = O->zero ? 0 : O->t[O->p - 1 - j];
}

void km_okl_keep(km_okl *O)
{
    O->kept = 1;
    O->klambda = O->lambda;
    O->kstart = O->start;
    O->kzero = O->zero;
    if (O->par.identity)
        return;
    size_t lp = (size_t)(O->l * O->p) * sizeof(double), pp = (size_t)(O->p * O->p) * 8;
    memcpy(O->kM, O->M, lp);
    memcpy(O->kV, O->V, lp);
    memcpy(O->kW, O->W, pp);
    memcpy(O->kt, O->t, (size_t)O->p * sizeof(double));
}

void km_okl_recall(km_okl *O)
{
    if (!O->kept)
        return;
    O->lambda = O->klambda;
    O->start = O->kstart;
    O->zero = O->kzero;
    if (O->par.identity)
        return;
    size_t lp = (size_t)(O->l * O->p) * sizeof(double), pp = (size_t)(O->p * O->p) * 8;
    memcpy(O->M, O->kM, lp);
    memcpy(O->V, O->kV, lp);
    memcpy(O->W, O->kW, pp);
    memcpy(O->t, O->kt, (size_t)O->p * sizeof(double));
    /* the warm start state of B = Y~'M: Y~ B = G M, B'B = M' G M */
    if (!O->start && !O->zero) {
        int64_t l = O->l, p = O->p;
        cblas_dsymm(CblasRowMajor, CblasLeft, CblasUpper, (blasint)l, (blasint)p, 1, O->G,
                    (blasint)l, O->M, (blasint)p, 0, O->YB, (blasint)p);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)p, (blasint)p, (blasint)l,
                    1, O->M, (blasint)p, O->YB, (blasint)p, 0, O->BtB, (blasint)p);
    }
}
