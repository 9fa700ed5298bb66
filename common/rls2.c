/* rls2.c - see rls2.h. */
#include "rls2.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "report.h"
#include "rls2lin.h"

void km_rls2_param_default(km_rls2_param *par)
{
    par->delta = 1e-2;
    par->max_iter = 1000;
    par->smo_eps = 0;
    par->threads = 1;
    par->general = 0;
}

/* ---- the d-step (4.4) ---- */

/* g = V'(Vd - u), r = Vd - u (Vd from the support's columns only: d is sparse). */
static void gradient(const double *V, int64_t l, int m, const double *u, const double *d,
                     double *r, double *g)
{
    for (int64_t i = 0; i < l; i++)
        r[i] = -u[i];
    for (int k = 0; k < m; k++)
        if (d[k] > 0)
            cblas_daxpy((blasint)l, d[k], V + (size_t)k * (size_t)l, 1, r, 1);
    cblas_dgemv(CblasColMajor, CblasTrans, (blasint)l, m, 1.0, V, (blasint)l, r, 1, 0.0, g,
                1);
}

/*
 * SMO on the active set A (positions t < na, kernels A[t]): the columns V_A packed, Gram
 * columns Q_A[:, t] = V_A' v_A[t] computed when first needed, the gradient gA kept up to
 * date on A only. Kernels left out of A have d_k = 0 and a gradient above every selected
 * kernel's: no SMO step can pick them until the gradient moves, which the exact gradient
 * taken between rounds catches (shrinking, as in LIBSVM). Rounds are short (a few hundred
 * steps) so that A follows the shrinking gap.
 */
typedef struct smo {
    int64_t l;
    int na;
    int *A;
    double *VA, *gA, *QdA, **col;
} smo;

static const double *smo_col(smo *S, int t)
{
    if (!S->col[t]) {
        double *q = malloc((size_t)S->na * sizeof *q);
        if (!q)
            return NULL;
        cblas_dgemv(CblasColMajor, CblasTrans, (blasint)S->l, S->na, 1.0, S->VA,
                    (blasint)S->l, S->VA + (size_t)t * (size_t)S->l, 1, 0.0, q, 1);
        S->col[t] = q;
    }
    return S->col[t];
}

static void smo_clear(smo *S)
{
    if (S->col)
        for (int t = 0; t < S->na; t++) {
            free(S->col[t]);
            S->col[t] = NULL;
        }
}

/* Steps on A until its own gap is <= tol, or until cap steps in all; 0, or -1 when out of
 * memory. */
static int smo_round(smo *S, double *d, double tol, int64_t cap, int64_t *steps)
{
    int na = S->na;
    double *g = S->gA;
    while (*steps < cap) {
        int j = -1;
        double gmin = INFINITY;
        for (int t = 0; t < na; t++) {
            if (d[S->A[t]] > 0 && (j < 0 || g[t] > g[j]))
                j = t;
            if (g[t] < gmin)
                gmin = g[t];
        }
        if (j < 0 || g[j] - gmin <= tol)
            return 0;
        const double *qj = smo_col(S, j);
        if (!qj)
            return -1;
        /* second-order choice of the coordinate that gains weight */
        int i = -1;
        double best = 0;
        for (int t = 0; t < na; t++) {
            if (t == j || !(g[t] < g[j]))
                continue;
            double a = S->QdA[t] + S->QdA[j] - 2 * qj[t];
            double gap = g[j] - g[t];
            double gain = a > 0 ? gap * gap / a : INFINITY;
            if (i < 0 || gain > best) {
                i = t;
                best = gain;
            }
        }
        const double *qi = smo_col(S, i);
        if (!qi)
            return -1;
        int ki = S->A[i], kj = S->A[j];
        double a = S->QdA[i] + S->QdA[j] - 2 * qi[j];
        double step = a > 0 ? (g[j] - g[i]) / a : d[kj];
        if (step >= d[kj]) {
            step = d[kj];
            d[kj] = 0;
        } else {
            d[kj] -= step;
        }
        d[ki] += step;
        for (int t = 0; t < na; t++)
            g[t] += step * (qi[t] - qj[t]);
        (*steps)++;
    }
    return 0;
}

/* The k-th smallest of a[0..n) (1 <= k <= n; a is reordered). */
static double kth_smallest(double *a, int n, int k)
{
    int lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        double piv = a[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < piv)
                i++;
            while (a[j] > piv)
                j--;
            if (i <= j) {
                double t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            break;
    }
    return a[want];
}

int km_simplex_ls(const double *V, int64_t l, int m, const double *u,
                  const unsigned char *skip, const double *qd, double eps, double *d,
                  double *grad, int64_t *steps, km_error *err)
{
    double *Qd = malloc((size_t)m * sizeof *Qd);
    double *g = malloc((size_t)m * sizeof *g);
    double *r = malloc((size_t)(l > 0 ? l : 1) * sizeof *r);
    double *r2 = malloc((size_t)m * sizeof *r2);
    smo S = {l, 0, malloc((size_t)m * sizeof(int)), NULL, malloc((size_t)m * sizeof(double)),
             malloc((size_t)m * sizeof(double)), calloc((size_t)m, sizeof(double *))};
    int rc = KM_OK;
    *steps = 0;
    if (!Qd || !g || !r || !r2 || !S.A || !S.gA || !S.QdA || !S.col) {
        rc = km_error_nomem(err, "simplex least squares");
        goto done;
    }
    double vmax = 0;
    for (int k = 0; k < m; k++) {
        const double *v = V + (size_t)k * (size_t)l;
        Qd[k] = skip && skip[k] ? 0 : qd ? qd[k] : cblas_ddot((blasint)l, v, 1, v, 1);
        vmax = Qd[k] > vmax ? Qd[k] : vmax;
    }
    double tol = eps * sqrt(vmax) * cblas_dnrm2((blasint)l, u, 1);
    if (!(tol > 0))
        tol = DBL_MIN;
    int64_t cap = 1000 * (int64_t)m + 100000;
    int stalled = 0;
    for (;;) {
        /* the exact gradient decides */
        gradient(V, l, m, u, d, r, g);
        int j = -1;
        double gmin = INFINITY;
        for (int k = 0; k < m; k++) {
            if (skip && skip[k])
                continue;
            if (d[k] > 0 && (j < 0 || g[k] > g[j]))
                j = k;
            if (g[k] < gmin)
                gmin = g[k];
        }
        if (j < 0 || g[j] - gmin <= tol || *steps >= cap)
            break;
        /* the active set: the support and the kernels that could enter now, at most the
         * 2 |support| + 100 with the smallest gradients (the rest wait for a later round) */
        smo_clear(&S);
        S.na = 0;
        int nsup = 0, ncand = 0;
        for (int k = 0; k < m; k++) {
            if (skip && skip[k])
                continue;
            nsup += d[k] > 0;
            if (d[k] == 0 && g[k] < g[j])
                r2[ncand++] = g[k];
        }
        int room = stalled ? ncand : 2 * nsup + 100;
        double cut = ncand > room ? kth_smallest(r2, ncand, room) : g[j];
        /* the support, the candidates below the cut, then ties at the cut while there is
         * room (ties taken in index order must not crowd out the smallest gradient) */
        for (int pass = 0; pass < 3; pass++)
            for (int k = 0; k < m; k++) {
                if ((skip && skip[k]) || (pass == 0) != (d[k] > 0))
                    continue;
                if (pass == 0 || (g[k] < g[j] && (pass == 1 ? g[k] < cut : g[k] == cut &&
                                                                    S.na < nsup + room)))
                    S.A[S.na++] = k;
            }
        free(S.VA);
        S.VA = malloc((size_t)S.na * (size_t)l * sizeof *S.VA);
        if (!S.VA) {
            rc = km_error_nomem(err, "simplex least squares");
            goto done;
        }
        for (int t = 0; t < S.na; t++) {
            memcpy(S.VA + (size_t)t * (size_t)l, V + (size_t)S.A[t] * (size_t)l,
                   (size_t)l * sizeof *S.VA);
            S.gA[t] = g[S.A[t]];
            S.QdA[t] = Qd[S.A[t]];
        }
        /* shrink again after a while (the set that could enter shrinks with the gap):
         * after about the work of the exact gradient, 2 l m, at 3 |A| a step */
        int64_t budget = *steps + 100 + l * (int64_t)m / S.na, before = *steps;
        if (smo_round(&S, d, tol, budget < cap ? budget : cap, steps)) {
            rc = km_error_nomem(err, "simplex least squares");
            goto done;
        }
        /* a round without a step while the whole gap is open: take every candidate */
        stalled = *steps == before;
    }
    if (grad)
        memcpy(grad, g, (size_t)m * sizeof *g);
    /* back onto the simplex exactly */
    double sum = 0;
    for (int k = 0; k < m; k++)
        sum += d[k];
    if (sum > 0)
        for (int k = 0; k < m; k++)
            d[k] /= sum;
done:
    smo_clear(&S);
    free(S.col);
    free(S.A);
    free(S.VA);
    free(S.gA);
    free(S.QdA);
    free(Qd);
    free(g);
    free(r);
    free(r2);
    return rc;
}

/* ---- Algorithm 3 ---- */

struct km_rls2 {
    const km_kbank *B;
    int64_t l;
    int m;
    km_rls2_param par;
    double *s, *y, *d, *c, *V, *fit, *u, *w, *K, *g;
    double *qd;              /* ||v_k||^2 of the columns of V */
    double *r, *z, *p, *q;   /* conjugate gradient */
    double *nrm;             /* s_k ||K~^k||_2 bounds */
    double *cprev, drift;    /* the last c; sum of ||c_t - c_t-1|| over the c-steps */
    double *stamp;           /* drift when column k of V was computed */
    unsigned char *skip;     /* s_k = 0 */
    unsigned char *work;     /* V column kept up to date (working set) */
    unsigned char *off;      /* skip or not in the working set */
    int started;             /* d holds a start */
    int unscreened;          /* iterations left that compute every column (screening did
                                not pay lately) */
    int factored;            /* K holds the Cholesky factor of K(d') + lambda' I */
    double *fw, flam;        /* the w = d' s and lambda' of that factor */
    double *F;               /* K(d) = F F' for the dof (l x l/4, made when first needed) */
    km_rls2lin *lin;         /* rank-one kernels: the solver of (4.9) instead */
    const double **x;        /* its x^k */
    double *xown;            /* the x^k gathered from the bank */
};

void km_rls2_free(km_rls2 *R)
{
    if (!R)
        return;
    double *v[] = {R->s, R->y, R->d, R->c, R->V, R->fit, R->u, R->w, R->K, R->g, R->qd,
                   R->r, R->z, R->p, R->q, R->nrm, R->cprev, R->stamp, R->fw, R->F};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
    free(R->skip);
    free(R->work);
    free(R->off);
    km_rls2lin_free(R->lin);
    free(R->x);
    free(R->xown);
    free(R);
}

km_rls2 *km_rls2_new(const km_kbank *B, const double *s, const double *y,
                     const km_rls2_param *par, km_error *err)
{
    km_rls2 *R = calloc(1, sizeof *R);
    if (!R) {
        km_error_nomem(err, "RLS2");
        return NULL;
    }
    int64_t l = km_kbank_rows(B);
    int m = km_kbank_size(B);
    size_t L = (size_t)(l > 0 ? l : 1), M = (size_t)(m > 0 ? m : 1);
    R->B = B;
    R->l = l;
    R->m = m;
    R->par = *par;
    R->s = malloc(M * sizeof *R->s);
    R->y = malloc(L * sizeof *R->y);
    R->d = calloc(M, sizeof *R->d);
    R->c = calloc(L, sizeof *R->c);
    int linear = !par->general && km_kbank_rank_one(B);
    R->V = linear ? NULL : calloc(L * M, sizeof *R->V);
    R->fit = calloc(L, sizeof *R->fit);
    R->u = malloc(L * sizeof *R->u);
    R->w = malloc(M * sizeof *R->w);
    R->fw = malloc(M * sizeof *R->fw);
    R->K = malloc(L * L * sizeof *R->K);
    R->g = calloc(M, sizeof *R->g);
    R->qd = calloc(M, sizeof *R->qd);
    R->r = malloc(L * sizeof *R->r);
    R->z = malloc(L * sizeof *R->z);
    R->p = malloc(L * sizeof *R->p);
    R->q = malloc(L * sizeof *R->q);
    R->nrm = malloc(M * sizeof *R->nrm);
    R->cprev = calloc(L, sizeof *R->cprev);
    R->stamp = calloc(M, sizeof *R->stamp);
    R->skip = malloc(M);
    R->work = malloc(M);
    R->off = malloc(M);
    if (!R->s || !R->y || !R->d || !R->c || (!R->V && !linear) || !R->fit || !R->u ||
        !R->w || !R->fw || !R->K || !R->g || !R->qd || !R->r || !R->z || !R->p || !R->q || !R->nrm || !R->cprev || !R->stamp ||
        !R->skip || !R->work || !R->off) {
        km_rls2_free(R);
        km_error_nomem(err, "RLS2 (the l x l system and the l x m products)");
        return NULL;
    }
    int usable = 0;
    for (int k = 0; k < m; k++) {
        if (!(s[k] >= 0) || !isfinite(s[k])) {
            km_rls2_free(R);
            km_error_set(err, KM_EUSAGE, "scale s_%d = %g is not a finite number >= 0", k + 1,
                         s[k]);
            return NULL;
        }
        R->s[k] = s[k];
        R->skip[k] = s[k] == 0;
        R->work[k] = 1;
        usable += s[k] > 0;
    }
    if (!usable) {
        km_rls2_free(R);
        km_error_set(err, KM_EINPUT, "every basis kernel has scale 0 (constant features?)");
        return NULL;
    }
    memcpy(R->y, y, (size_t)l * sizeof *R->y);
    km_kbank_norms(B, R->nrm);
    for (int k = 0; k < m; k++)
        R->nrm[k] *= R->s[k];
    if (linear) {
        R->x = malloc(M * sizeof *R->x);
        if (!R->x) {
            km_rls2_free(R);
            km_error_nomem(err, "linear RLS2");
            return NULL;
        }
        if (km_kbank_vectors(B, R->x, &R->xown, err) ||
            !(R->lin = km_rls2lin_new(l, m, R->x, R->s, R->y, err))) {
            km_rls2_free(R);
            return NULL;
        }
    }
    return R;
}

const double *km_rls2_d(const km_rls2 *R) { return R->d; }
const double *km_rls2_c(const km_rls2 *R) { return R->c; }
const double *km_rls2_fit(const km_rls2 *R) { return R->fit; }

void km_rls2_restart(km_rls2 *R)
{
    R->started = 0;
    memset(R->work, 1, (size_t)R->m);
    if (R->lin)
        km_rls2lin_restart(R->lin);
}

/* V[:, k] = s_k K~^k c for the usable kernels with want[k] (all when want is NULL). */
static int products(km_rls2 *R, const double *c, const unsigned char *want, km_error *err)
{
    for (int k = 0; k < R->m; k++)
        R->off[k] = !R->skip[k] && (!want || want[k]);
    int rc = km_kbank_products(R->B, c, R->off, R->V, R->par.threads, err);
    for (int k = 0; k < R->m && rc == KM_OK; k++)
        if (R->off[k]) {
            double *v = R->V + (size_t)k * (size_t)R->l;
            cblas_dscal((blasint)R->l, R->s[k], v, 1);
            R->qd[k] = cblas_ddot((blasint)R->l, v, 1, v, 1);
            R->stamp[k] = R->drift;
        }
    return rc;
}

int km_rls2_alignment(km_rls2 *R, double *a, km_error *err)
{
    if (R->lin) { /* y'K^k y = s_k (x^k'y)^2 */
        for (int k = 0; k < R->m; k++) {
            double t = cblas_ddot((blasint)R->l, R->x[k], 1, R->y, 1);
            a[k] = R->skip[k] ? -INFINITY : R->s[k] * t * t;
        }
        return KM_OK;
    }
    int rc = products(R, R->y, NULL, err);
    for (int k = 0; k < R->m && rc == KM_OK; k++)
        a[k] = R->skip[k] ? -INFINITY
                          : cblas_ddot((blasint)R->l, R->y, 1,
                                       R->V + (size_t)k * (size_t)R->l, 1);
    return rc;
}

static void weights(km_rls2 *R, int *nact)
{
    *nact = 0;
    for (int k = 0; k < R->m; k++) {
        R->w[k] = R->d[k] * R->s[k];
        *nact += R->w[k] != 0;
    }
}

/* K = K(d) + lambda I, Cholesky-factored (upper). */
static int factor(km_rls2 *R, double lambda, km_error *err)
{
    int64_t l = R->l;
    int nact;
    weights(R, &nact);
    R->factored = 0;
    memset(R->K, 0, (size_t)l * (size_t)l * sizeof *R->K);
    int rc = km_kbank_combine(R->B, R->w, R->K, err);
    if (rc)
        return rc;
    for (int64_t i = 0; i < l; i++)
        R->K[i + i * l] += lambda;
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', (lapack_int)l, R->K,
                                          (lapack_int)l);
    if (info != 0)
        return km_error_set(err, KM_EINPUT,
                            "K(d) + lambda I is not positive definite at lambda = %g "
                            "(an indefinite basis kernel?)", lambda);
    R->factored = 1;
    memcpy(R->fw, R->w, (size_t)R->m * sizeof *R->fw);
    R->flam = lambda;
    return KM_OK;
}

static void chol_solve(const km_rls2 *R, double *x)
{
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', (lapack_int)R->l, 1, R->K, (lapack_int)R->l, x,
                        (lapack_int)R->l);
}

/* out = (K(d) + lambda I) x, from the kernels (w = d s set). */
static int apply(km_rls2 *R, double lambda, const double *x, double *out, km_error *err)
{
    int rc = km_kbank_cross(R->B, NULL, R->l, NULL, R->l, R->w, x, out, err);
    cblas_daxpy((blasint)R->l, lambda, x, 1, out, 1);
    return rc;
}

/*
 * Conjugate gradient on (K(d) + lambda I) c = y from the current c, preconditioned with the
 * factor in K; up to maxit iterations. *done = 1 when ||r|| <= tol ||y||.
 */
static int pcg(km_rls2 *R, double lambda, double tol, int maxit, int *done, km_error *err)
{
    int64_t l = R->l;
    blasint L = (blasint)l;
    double *r = R->r, *z = R->z, *p = R->p, *q = R->q, *c = R->c;
    int rc = apply(R, lambda, c, r, err);
    if (rc)
        return rc;
    for (int64_t i = 0; i < l; i++)
        r[i] = R->y[i] - r[i];
    double bound = tol * cblas_dnrm2(L, R->y, 1);
    memcpy(z, r, (size_t)l * sizeof *z);
    chol_solve(R, z);
    memcpy(p, z, (size_t)l * sizeof *p);
    double rz = cblas_ddot(L, r, 1, z, 1);
    *done = 0;
    for (int it = 0; it <= maxit; it++) {
        if (cblas_dnrm2(L, r, 1) <= bound) {
            *done = 1;
            break;
        }
        if (it == maxit || !(rz > 0))
            break;
        if ((rc = apply(R, lambda, p, q, err)))
            return rc;
        double alpha = rz / cblas_ddot(L, p, 1, q, 1);
        cblas_daxpy(L, alpha, p, 1, c, 1);
        cblas_daxpy(L, -alpha, q, 1, r, 1);
        memcpy(z, r, (size_t)l * sizeof *z);
        chol_solve(R, z);
        double rz1 = cblas_ddot(L, r, 1, z, 1);
        cblas_dscal(L, rz1 / rz, p, 1);
        cblas_daxpy(L, 1.0, z, 1, p, 1);
        rz = rz1;
    }
    return KM_OK;
}

/* The c-step (4.2): preconditioned CG from the last c, else a fresh factorization. */
static int c_step(km_rls2 *R, double lambda, km_error *err)
{
    int nact, done = 0, rc;
    weights(R, &nact);
    if (R->factored) {
        /* about the cost of forming and factoring K: l^3/3 against 2 l^2 + nact l^2/2 */
        int maxit = (int)((double)R->l / (3.0 * (2.0 + nact / 2.0)));
        maxit = maxit < 3 ? 3 : maxit > 40 ? 40 : maxit;
        if ((rc = pcg(R, lambda, R->par.delta / 10, maxit, &done, err)))
            return rc;
    }
    if (done)
        return KM_OK;
    if ((rc = factor(R, lambda, err)))
        return rc;
    memcpy(R->c, R->y, (size_t)R->l * sizeof *R->c);
    chol_solve(R, R->c);
    return KM_OK;
}

/*
 * The d-step (4.4), on the kernels of the working set (work[k], columns of V up to date)
 * with the others screened safely: a stale column v^ of kernel k differs from v_k =
 * s_k K~^k c by at most nrm_k (drift - stamp_k) (the c-steps since), so its gradient
 * g_k = v_k'r (r = Vd - u) is at least g^_k - that times ||r||. Kernels this cannot keep
 * above the support's gradients get their columns and join, until none is left: the same
 * d as (4.4) on every column. The next working set: the support and the kernels that had
 * to join.
 */
static int d_step(km_rls2 *R, km_rls2_info *info, km_error *err)
{
    int m = R->m, rc;
    int64_t l = R->l;
    unsigned char *join = malloc((size_t)m);
    if (!join)
        return km_error_nomem(err, "RLS2 working set");
    memset(join, 0, (size_t)m);
    int cand = 0, joined = 0;
    for (int k = 0; k < m; k++)
        cand += !R->skip[k] && !R->work[k];
    for (;;) {
        for (int k = 0; k < m; k++)
            R->off[k] = R->skip[k] || !R->work[k];
        int64_t steps;
        /* the d-step a little tighter than the test it feeds: delta 1e-2 -> 1e-6 */
        double eps = R->par.smo_eps > 0 ? R->par.smo_eps : fmax(R->par.delta * 1e-4, 1e-15);
        if ((rc = km_simplex_ls(R->V, l, m, R->u, R->off, R->qd, eps, R->d, R->g, &steps,
                                err)))
            break;
        info->smo_steps += steps;
        memcpy(R->r, R->u, (size_t)l * sizeof *R->r);
        for (int k = 0; k < m; k++)
            if (R->d[k] > 0)
                cblas_daxpy((blasint)l, R->d[k], R->V + (size_t)k * (size_t)l, 1, R->r, 1);
        /* r was u + Vd: make it Vd - u */
        cblas_daxpy((blasint)l, -2.0, R->u, 1, R->r, 1);
        double rn = cblas_dnrm2((blasint)l, R->r, 1), gsup = -INFINITY;
        for (int k = 0; k < m; k++)
            if (R->d[k] > 0 && R->g[k] > gsup)
                gsup = R->g[k];
        int more = 0;
        for (int k = 0; k < m; k++) {
            int in = !R->skip[k] && !R->work[k] &&
                     !(R->g[k] - R->nrm[k] * (R->drift - R->stamp[k]) * rn > gsup);
            R->off[k] = (unsigned char)in;
            if (in)
                join[k] = R->work[k] = 1;
            more += in;
        }
        joined += more;
        if (!more || (rc = products(R, R->c, R->off, err)))
            break;
    }
    /* when most candidates had to join, the next few iterations take every column at
     * once (one products pass, one SMO) instead */
    if (2 * joined > cand)
        R->unscreened = 4;
    else if (R->unscreened > 0)
        R->unscreened--;
    if (rc == KM_OK)
        for (int k = 0; k < m; k++)
            R->work[k] = !R->skip[k] && (R->unscreened || R->d[k] > 0 || join[k]);
    free(join);
    return rc;
}

/* fit = K(d) c = V d; returns ||(K(d) + lambda I) c - y|| / ||y||. */
static double residual(km_rls2 *R, double lambda, double ynorm)
{
    int64_t l = R->l;
    for (int k = 0; k < R->m; k++)
        R->off[k] = R->d[k] > 0;
    memset(R->fit, 0, (size_t)l * sizeof *R->fit);
    for (int k = 0; k < R->m; k++)
        if (R->off[k])
            cblas_daxpy((blasint)l, R->d[k], R->V + (size_t)k * (size_t)l, 1, R->fit, 1);
    double res = 0;
    for (int64_t i = 0; i < l; i++) {
        double e = R->fit[i] + lambda * R->c[i] - R->y[i];
        res += e * e;
    }
    return ynorm > 0 ? sqrt(res) / ynorm : 0;
}

int km_rls2_solve(km_rls2 *R, double lambda, km_rls2_info *info, km_error *err)
{
    double t0 = km_seconds();
    int64_t l = R->l;
    int m = R->m, rc;
    memset(info, 0, sizeof *info);
    if (!(lambda > 0) || !isfinite(lambda))
        return km_error_set(err, KM_EUSAGE, "lambda must be a finite number > 0, not %g",
                            lambda);
    if (R->lin) /* (4.9): the relative duality gap <= delta^2 (not below rounding) */
        return km_rls2lin_solve(R->lin, lambda, fmax(R->par.delta * R->par.delta, 1e-14),
                                R->par.max_iter, R->d, R->c, R->fit, info, err);
    double ynorm = cblas_dnrm2((blasint)l, R->y, 1);
    if (!R->started) {
        /* Lemma 6: d = e_i, i = argmax_k y'K^k y */
        double *a = malloc((size_t)m * sizeof *a);
        if (!a)
            return km_error_nomem(err, "RLS2 start");
        if ((rc = km_rls2_alignment(R, a, err))) {
            free(a);
            return rc;
        }
        int best = 0;
        for (int k = 1; k < m; k++)
            if (a[k] > a[best])
                best = k;
        free(a);
        memset(R->d, 0, (size_t)m * sizeof *R->d);
        R->d[best] = 1;
        R->started = 1;
        R->factored = 0;
    }
    for (;;) {
        /* c = (K(d) + lambda I)^-1 y  (4.2) */
        if ((rc = c_step(R, lambda, err)))
            return rc;
        for (int64_t i = 0; i < l; i++) {
            double e = R->c[i] - R->cprev[i];
            R->r[i] = e * e;
        }
        R->drift += sqrt(cblas_dasum((blasint)l, R->r, 1));
        memcpy(R->cprev, R->c, (size_t)l * sizeof *R->c);
        /* V = [K^k c], u = y - lambda c / 2, d = argmin ||Vd - u|| on the simplex (4.4) */
        if ((rc = products(R, R->c, R->work, err)))
            return rc;
        for (int64_t i = 0; i < l; i++)
            R->u[i] = R->y[i] - lambda * R->c[i] / 2;
        if ((rc = d_step(R, info, err)))
            return rc;
        info->iter++;
        /* the stopping test of thesis 4.5 on this c with the new d: K(d)c = Vd */
        info->residual = residual(R, lambda, ynorm);
        int stop = info->residual <= R->par.delta || info->iter >= R->par.max_iter;
        if (stop) {
            info->converged = info->residual <= R->par.delta;
            break;
        }
    }
    /* (4.1) at (c, d): ||y - K(d)c||^2 / (2 lambda) + c'K(d)c / 2 */
    double loss = 0, pen = 0;
    for (int64_t i = 0; i < l; i++) {
        double e = R->y[i] - R->fit[i];
        loss += e * e;
        pen += R->c[i] * R->fit[i];
    }
    info->objective = loss / (2 * lambda) + pen / 2;
    for (int k = 0; k < m; k++)
        info->kernels += R->d[k] > 0;
    info->seconds = km_seconds() - t0;
    return KM_OK;
}

int km_rls2_dof(km_rls2 *R, double lambda, double *df, km_error *err)
{
    int64_t l = R->l;
    int nact;
    weights(R, &nact);
    /* K(d) = F F' of low rank r (every kernel in use a factor, as along most of a path):
     * tr K (K + lambda I)^-1 = sum mu / (mu + lambda) over the eigenvalues mu of F'F (r x r),
     * l r^2 + r^3 instead of l^3 (and without the cancellation of l - lambda tr) */
    int64_t rmax = l / 4;
    if (rmax > 0 && !R->F && !(R->F = malloc((size_t)l * (size_t)rmax * sizeof *R->F)))
        return km_error_nomem(err, "RLS2 degrees of freedom");
    int64_t r = rmax > 0 ? km_kbank_lowrank(R->B, R->w, rmax, R->F) : -1;
    if (r >= 0) {
        double *FtF = malloc((size_t)(r > 0 ? r * r : 1) * sizeof *FtF),
               *mu = malloc((size_t)(r > 0 ? r : 1) * sizeof *mu);
        lapack_int info = 0;
        if (!FtF || !mu) {
            free(FtF);
            free(mu);
            return km_error_nomem(err, "RLS2 degrees of freedom");
        }
        if (r > 0) {
            cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, (blasint)r, (blasint)l, 1.0,
                        R->F, (blasint)l, 0.0, FtF, (blasint)r);
            info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'U', (lapack_int)r, FtF,
                                  (lapack_int)r, mu);
        }
        double t = 0;
        for (int64_t i = 0; i < r && info == 0; i++)
            t += mu[i] > 0 ? mu[i] / (mu[i] + lambda) : 0;
        free(FtF);
        free(mu);
        if (info)
            return km_error_set(err, KM_EINTERNAL, "eigenvalues of F'F failed (%d)", (int)info);
        *df = t;
        /* the solver's next c-step from a new factor, as after the inverse below (its path
         * does not depend on how the dof was computed) */
        R->factored = 0;
        return KM_OK;
    }
    /* the solver's last factor when it is of this K(d) + lambda I (d unchanged by the last
     * d-step, as at most lambdas of a path): the same bits as a new one */
    if (!(R->factored && R->flam == lambda &&
          !memcmp(R->fw, R->w, (size_t)R->m * sizeof *R->w))) {
        int rc = factor(R, lambda, err);
        if (rc)
            return rc;
    }
    /* tr (K + lambda I)^-1 = tr U^-1 U^-T = ||U^-1||_F^2: the inverse of the triangle only
     * (dpotri's product U^-1 U^-T, a third of its work, is not needed) */
    LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'U', 'N', (lapack_int)l, R->K, (lapack_int)l);
    R->factored = 0;
    double tr = 0;
    for (int64_t j = 0; j < l; j++)
        tr += cblas_ddot((blasint)(j + 1), R->K + j * l, 1, R->K + j * l, 1);
    *df = (double)l - lambda * tr; /* tr K (K + lambda I)^-1 = l - lambda tr (K + lambda I)^-1 */
    return KM_OK;
}
