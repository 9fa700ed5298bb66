/* rls2lin.c - see rls2lin.h. */
#include "rls2lin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "report.h"

/* Residuals remembered for the bounds of check(); more checks start the history anew. */
#define HISTORY 64

struct km_rls2lin {
    int64_t l;
    int m;
    const double *const *x;  /* x^k */
    double *rs;              /* sqrt(s_k); 0: kernel left out */
    double *q, *an;          /* a_k'a_k = s_k ||x^k||^2 and ||a_k|| */
    double *y, *ay;          /* y and a_k'y */
    double *b;               /* b_k = w_k / sqrt(s_k) */
    double *r;               /* y - A b */
    double T;                /* ||b||_1 */
    double *g;               /* g_k = a_k'h_s, h_s = hist[stamp[k]]: exact at that residual */
    unsigned char *stamp;
    double *hist;            /* residuals at the last checks (l x HISTORY) */
    int nh;
    double *alpha, *e;       /* r = alpha_s h_s + e_s at the last check: alpha_s, ||e_s|| */
    int *W, nw;              /* the working set: the coordinates descent visits */
    int *list;               /* kernels check() computes exactly */
    unsigned char *inW;
    int first;               /* Lemma 6's kernel: the largest |a_k'y| */
    int *fac, nf;            /* Newton step: the kernels of the factor, in its order */
    int *at;                 /* at[k]: kernel k's column in the factor, or -1 */
    double *AS, *R;          /* their a_k (l x cap) and R'R = A_S'A_S (R upper, cap x cap) */
    double *u, *v, *bN;      /* solves and the step (cap) */
    int cap;
    int started;
};


void km_rls2lin_free(km_rls2lin *L)
{
    if (!L)
        return;
    double *v[] = {L->rs, L->q, L->an, L->y, L->ay, L->b, L->r, L->g, L->hist, L->alpha,
                   L->e, L->AS, L->R, L->u, L->v, L->bN};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
    free(L->stamp);
    free(L->W);
    free(L->inW);
    free(L->fac);
    free(L->at);
    free(L->list);
    free(L);
}

km_rls2lin *km_rls2lin_new(int64_t l, int m, const double *const *x, const double *s,
                           const double *y, km_error *err)
{
    km_rls2lin *L = calloc(1, sizeof *L);
    size_t M = (size_t)(m > 0 ? m : 1), N = (size_t)(l > 0 ? l : 1);
    if (L) {
        L->rs = malloc(M * sizeof *L->rs);
        L->q = malloc(M * sizeof *L->q);
        L->an = malloc(M * sizeof *L->an);
        L->y = malloc(N * sizeof *L->y);
        L->ay = malloc(M * sizeof *L->ay);
        L->b = calloc(M, sizeof *L->b);
        L->r = malloc(N * sizeof *L->r);
        L->g = calloc(M, sizeof *L->g);
        L->stamp = calloc(M, 1);
        L->hist = malloc(N * HISTORY * sizeof *L->hist);
        L->alpha = malloc(HISTORY * sizeof *L->alpha);
        L->e = malloc(HISTORY * sizeof *L->e);
        L->W = malloc(M * sizeof *L->W);
        L->inW = calloc(M, 1);
        L->at = malloc(M * sizeof *L->at);
        L->list = malloc(M * sizeof *L->list);
    }
    if (!L || !L->rs || !L->q || !L->an || !L->y || !L->ay || !L->b || !L->r || !L->g ||
        !L->stamp || !L->hist || !L->alpha || !L->e || !L->W || !L->inW || !L->at ||
        !L->list) {
        km_rls2lin_free(L);
        km_error_nomem(err, "linear RLS2");
        return NULL;
    }
    L->l = l;
    L->m = m;
    L->x = x;
    for (int k = 0; k < m; k++) {
        L->rs[k] = sqrt(s[k]);
        L->q[k] = s[k] * cblas_ddot((blasint)l, x[k], 1, x[k], 1);
        L->an[k] = sqrt(L->q[k]);
        if (!(L->q[k] > 0))
            L->rs[k] = 0; /* x^k = 0: a zero kernel never enters */
        L->at[k] = -1;
    }
    memcpy(L->y, y, (size_t)l * sizeof *L->y);
    return L;
}

void km_rls2lin_restart(km_rls2lin *L)
{
    L->started = 0;
}

/* a_k'v */
static double dot(const km_rls2lin *L, int k, const double *v)
{
    return L->rs[k] * cblas_ddot((blasint)L->l, L->x[k], 1, v, 1);
}

static void add(km_rls2lin *L, int k)
{
    if (!L->inW[k]) {
        L->inW[k] = 1;
        L->W[L->nw++] = k;
    }
}

/* P(b) = ||r||^2 / (2 lambda) + T^2 / 2  (4.9) */
static double primal(const km_rls2lin *L, double lambda)
{
    double rr = cblas_ddot((blasint)L->l, L->r, 1, L->r, 1);
    return rr / (2 * lambda) + L->T * L->T / 2;
}

/* D at c = t r / lambda, the best t, given U >= max_k |a_k'r| (rls2lin.h; with U above the
 * maximum it is still a lower bound on the optimum). */
static double dual(const km_rls2lin *L, double lambda, double U)
{
    double rr = cblas_ddot((blasint)L->l, L->r, 1, L->r, 1);
    double yr = cblas_ddot((blasint)L->l, L->y, 1, L->r, 1);
    double den = 2 * (lambda * rr + U * U);
    return den > 0 ? yr * yr / den : 0;
}

/* r = y - A b afresh (no drift from the updates; b != 0 only on the working set). */
static void residual(km_rls2lin *L)
{
    memcpy(L->r, L->y, (size_t)L->l * sizeof *L->r);
    for (int t = 0; t < L->nw; t++) {
        int k = L->W[t];
        if (L->b[k] != 0)
            cblas_daxpy((blasint)L->l, -L->rs[k] * L->b[k], L->x[k], 1, L->r, 1);
    }
}

/* Room for n columns in the factor. 0, or -1 when out of memory. */
static int fac_room(km_rls2lin *L, int n)
{
    if (n <= L->cap)
        return 0;
    int cap = n + n / 2 + 8;
    double *R = malloc((size_t)cap * (size_t)cap * sizeof *R);
    double *AS = realloc(L->AS, (size_t)L->l * (size_t)cap * sizeof *AS);
    if (AS)
        L->AS = AS;
    int *fac = realloc(L->fac, (size_t)cap * sizeof *fac);
    if (fac)
        L->fac = fac;
    free(L->u);
    free(L->v);
    free(L->bN);
    L->u = malloc((size_t)cap * sizeof *L->u);
    L->v = malloc((size_t)cap * sizeof *L->v);
    L->bN = malloc((size_t)cap * sizeof *L->bN);
    if (!R || !AS || !fac || !L->u || !L->v || !L->bN) {
        free(R);
        return -1;
    }
    for (int c = 0; c < L->nf; c++)
        memcpy(R + (size_t)c * (size_t)cap, L->R + (size_t)c * (size_t)L->cap,
               (size_t)(c + 1) * sizeof *R);
    free(L->R);
    L->R = R;
    L->cap = cap;
    return 0;
}

/* Column j leaves the factor: the columns after it move left and Givens rotations make R
 * triangular again. */
static void fac_remove(km_rls2lin *L, int j)
{
    int n = L->nf, cap = L->cap;
    double *R = L->R;
    L->at[L->fac[j]] = -1;
    for (int c = j; c < n - 1; c++) {
        memcpy(R + (size_t)c * cap, R + (size_t)(c + 1) * cap, (size_t)(c + 2) * sizeof *R);
        memcpy(L->AS + (size_t)c * L->l, L->AS + (size_t)(c + 1) * L->l,
               (size_t)L->l * sizeof *L->AS);
        L->fac[c] = L->fac[c + 1];
        L->at[L->fac[c]] = c;
    }
    for (int c = j; c < n - 1; c++) {
        double a = R[c + (size_t)c * cap], b = R[c + 1 + (size_t)c * cap], h = hypot(a, b);
        R[c + (size_t)c * cap] = h;
        R[c + 1 + (size_t)c * cap] = 0;
        if (c + 1 < n - 1)
            cblas_drot(n - 2 - c, R + c + (size_t)(c + 1) * cap, cap,
                       R + c + 1 + (size_t)(c + 1) * cap, cap, a / h, b / h);
    }
    L->nf--;
}

/* Kernel k joins the factor: R'w = A_S'a_k, new diagonal sqrt(a_k'a_k - w'w). 1, or 0
 * when a_k is (numerically) a combination of the others; -1 when out of memory. */
static int fac_add(km_rls2lin *L, int k)
{
    int n = L->nf;
    if (fac_room(L, n + 1))
        return -1;
    int64_t l = L->l;
    double *a = L->AS + (size_t)n * (size_t)l, *w = L->R + (size_t)n * (size_t)L->cap;
    for (int64_t i = 0; i < l; i++)
        a[i] = L->rs[k] * L->x[k][i];
    if (n > 0) {
        cblas_dgemv(CblasColMajor, CblasTrans, (blasint)l, n, 1.0, L->AS, (blasint)l, a, 1,
                    0.0, w, 1);
        cblas_dtrsv(CblasColMajor, CblasUpper, CblasTrans, CblasNonUnit, n, L->R, L->cap, w,
                    1);
    }
    double d2 = L->q[k] - (n > 0 ? cblas_ddot(n, w, 1, w, 1) : 0);
    if (!(d2 > 1e-10 * L->q[k]))
        return 0;
    w[n] = sqrt(d2);
    L->fac[n] = k;
    L->at[k] = n;
    L->nf++;
    return 1;
}

/*
 * Kernel k of the support that fac_add could not take: a_k = A_F u with F the factor's
 * kernels (u = R^-1 w, w as fac_add left it), so moving b_k by -t s and b_F by t s u leaves
 * A b unchanged and changes T = ||b||_1 at the rate s (sigma_F'u - sigma_k). With s against
 * that rate the move does not increase P; it goes until a coordinate reaches 0, which
 * leaves the support (a support never needs more kernels than the rows tell apart).
 */
static void pivot(km_rls2lin *L, int k)
{
    int n = L->nf;
    double *u = L->u, bk = L->b[k], sk = copysign(1, bk), rate = -sk;
    memcpy(u, L->R + (size_t)n * (size_t)L->cap, (size_t)n * sizeof *u);
    cblas_dtrsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, n, L->R, L->cap, u, 1);
    for (int a = 0; a < n; a++)
        rate += copysign(1, L->b[L->fac[a]]) * u[a];
    double s = rate > 0 ? -1 : rate < 0 ? 1 : sk, t = s == sk ? fabs(bk) : INFINITY;
    for (int a = 0; a < n; a++) {
        double ba = L->b[L->fac[a]];
        if (s * u[a] * ba < 0)
            t = fmin(t, fabs(ba / u[a]));
    }
    if (!isfinite(t))
        return;
    double T = 0;
    L->b[k] = s == sk && t == fabs(bk) ? 0 : bk - t * s;
    for (int a = 0; a < n; a++) {
        double ba = L->b[L->fac[a]], e = ba + t * s * u[a];
        L->b[L->fac[a]] = e * ba > 0 ? e : 0;
        T += fabs(L->b[L->fac[a]]);
    }
    for (int t2 = 0; t2 < L->nw; t2++)
        if (L->at[L->W[t2]] < 0)
            T += fabs(L->b[L->W[t2]]);
    L->T = T;
    residual(L);
}

/*
 * Newton step on the support S with its signs sigma: on that orthant P is the quadratic
 * ||y - A_S b_S||^2 / (2 lambda) + (sigma'b_S)^2 / 2, least at the solution bN of
 * (A_S'A_S + lambda sigma sigma') bN = A_S'y: with the Cholesky factor R'R = A_S'A_S (kept
 * from step to step, updated as kernels join and leave) and Sherman-Morrison,
 * bN = u - lambda (sigma'u) / (1 + lambda sigma'v) v, u = (R'R)^-1 A_S'y, v = (R'R)^-1 sigma.
 * P is convex along the segment from b_S to bN and decreases towards bN: the step goes to
 * bN, or to the first point where a coordinate reaches 0 (it leaves the support); none when
 * P would increase beyond rounding (an ill-conditioned factor). A kernel of the support
 * that the factor cannot take is pivoted out first (pivot()). Returns 2 after a full step
 * (b_S is then the minimizer on its orthant), 1 after a step or pivot that brought a
 * coordinate to 0, 0 otherwise, -1 when out of memory.
 */
static int newton(km_rls2lin *L, double lambda)
{
    int64_t l = L->l;
    for (int j = L->nf - 1; j >= 0; j--)
        if (L->b[L->fac[j]] == 0)
            fac_remove(L, j);
    for (int t = 0; t < L->nw; t++) {
        int k = L->W[t], rc;
        if (L->b[k] == 0 || L->at[k] >= 0)
            continue;
        if ((rc = fac_add(L, k)) < 0)
            return -1;
        if (rc == 0) {
            pivot(L, k);
            return 1;
        }
    }
    int n = L->nf;
    if (n == 0)
        return 0;
    double *u = L->u, *v = L->v, *bN = L->bN, su = 0, sv = 0, t = 1, P0 = primal(L, lambda);
    for (int a = 0; a < n; a++) {
        u[a] = L->ay[L->fac[a]];
        v[a] = copysign(1, L->b[L->fac[a]]);
    }
    for (int pass = 0; pass < 2; pass++) {
        double *z = pass ? v : u;
        cblas_dtrsv(CblasColMajor, CblasUpper, CblasTrans, CblasNonUnit, n, L->R, L->cap, z, 1);
        cblas_dtrsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, n, L->R, L->cap, z,
                    1);
    }
    for (int a = 0; a < n; a++) {
        double sa = copysign(1, L->b[L->fac[a]]);
        su += sa * u[a];
        sv += sa * v[a];
    }
    double f = lambda * su / (1 + lambda * sv);
    for (int a = 0; a < n; a++) {
        double ba = L->b[L->fac[a]];
        bN[a] = u[a] - f * v[a];
        if (!(bN[a] * ba > 0))
            t = fmin(t, ba / (ba - bN[a]));
    }
    if (!(t > 0))
        return 0;
    double T = 0, Told = L->T;
    for (int a = 0; a < n; a++) { /* bN becomes the step's end point */
        double ba = L->b[L->fac[a]], e = ba + t * (bN[a] - ba);
        bN[a] = e * ba > 0 ? e : 0;
        T += fabs(bN[a]);
    }
    memcpy(L->r, L->y, (size_t)l * sizeof *L->r);
    cblas_dgemv(CblasColMajor, CblasNoTrans, (blasint)l, n, -1.0, L->AS, (blasint)l, bN, 1,
                1.0, L->r, 1);
    L->T = T;
    if (primal(L, lambda) <= P0 * (1 + 1e-13)) {
        for (int a = 0; a < n; a++)
            L->b[L->fac[a]] = bN[a];
        return t < 1 ? 1 : 2;
    }
    L->T = Told; /* no decrease: back to b */
    residual(L);
    return 0;
}

/*
 * The optimality check over every kernel, |a_k'r| <= lambda T, without a pass over all of
 * them: r (afresh, no drift from the updates) is remembered as h_s, and a kernel whose last
 * exact value g_k = a_k'h_t is that of an earlier residual is bounded by
 * |a_k'r| <= |alpha_t g_k| + ||a_k|| ||r - alpha_t h_t||, alpha_t = r'h_t / h_t'h_t (r
 * mostly shrinks along a path, so the second term stays small). Kernels of the working set,
 * and those the bound cannot keep at or below lambda T, get g_k = a_k'r exactly; with join,
 * the ones that violate optimality join the working set (their number is returned). *U gets
 * a bound U >= max_k |a_k'r| for the dual.
 */
static int check(km_rls2lin *L, double lambda, int join, double *U)
{
    int64_t l = L->l;
    residual(L);
    if (L->nh == HISTORY) /* start the history anew: every kernel exactly */
        L->nh = 0;
    int s = L->nh++;
    double *h = L->hist + (size_t)s * (size_t)l, rn = cblas_dnrm2((blasint)l, L->r, 1);
    memcpy(h, L->r, (size_t)l * sizeof *h);
    for (int t = 0; t < s; t++) {
        const double *ht = L->hist + (size_t)t * (size_t)l;
        double hh = cblas_ddot((blasint)l, ht, 1, ht, 1);
        double a = hh > 0 ? cblas_ddot((blasint)l, ht, 1, L->r, 1) / hh : 0, e2 = 0;
        for (int64_t i = 0; i < l; i++)
            e2 += (L->r[i] - a * ht[i]) * (L->r[i] - a * ht[i]);
        L->alpha[t] = a;
        L->e[t] = sqrt(e2) + 1e-12 * (fabs(a) * sqrt(hh) + rn); /* + rounding */
    }
    double thr = lambda * L->T;
    int joined = 0;
    *U = 0;
    int n = 0;
    for (int k = 0; k < L->m; k++) {
        if (!(L->rs[k] > 0))
            continue;
        int t = L->stamp[k];
        if (!L->inW[k] && t < s) {
            double bound = fabs(L->alpha[t] * L->g[k]) + L->an[k] * L->e[t];
            if (bound <= thr) {
                *U = fmax(*U, bound);
                continue;
            }
        }
        L->list[n++] = k;
    }
    /* the exact ones in the order of memory, each x^k fetched while the one before it is
     * read: they are scattered over the kernels */
    for (int j = 0; j < n; j++) {
        int k = L->list[j];
        if (j + 2 < n)
            for (int64_t i = 0; i < l; i += 8)
                __builtin_prefetch(L->x[L->list[j + 2]] + i);
        L->g[k] = dot(L, k, L->r);
        L->stamp[k] = (unsigned char)s;
        *U = fmax(*U, fabs(L->g[k]));
        if (join && !L->inW[k] && fabs(L->g[k]) > thr) {
            add(L, k);
            joined++;
        }
    }
    return joined;
}

/*
 * One sweep of coordinate descent over the working set: b_k minimizes P with the others
 * fixed, b_k = S(rho, lambda T_-k) / (a_k'a_k + lambda), rho = a_k'(r + a_k b_k), T_-k =
 * T - |b_k| (S: soft thresholding). *gw gets max |a_k'r| over the working set, each taken
 * right after its coordinate's update. Returns 1 when a coordinate joined or left the
 * support or changed sign.
 */
static int sweep(km_rls2lin *L, double lambda, double *gw)
{
    int64_t l = L->l;
    int moved = 0;
    *gw = 0;
    for (int t = 0; t < L->nw; t++) {
        int k = L->W[t];
        double bk = L->b[k], rho = dot(L, k, L->r) + L->q[k] * bk;
        double thr = lambda * (L->T - fabs(bk));
        double bn = fabs(rho) > thr ? (rho - copysign(thr, rho)) / (L->q[k] + lambda) : 0;
        if (bn != bk) {
            cblas_daxpy((blasint)l, -L->rs[k] * (bn - bk), L->x[k], 1, L->r, 1);
            L->T += fabs(bn) - fabs(bk);
            L->b[k] = bn;
            moved |= (bn > 0) != (bk > 0) || (bn < 0) != (bk < 0);
        }
        *gw = fmax(*gw, fabs(rho - L->q[k] * bn));
    }
    return moved;
}

/*
 * Newton steps on the support (until one is not cut short by a coordinate reaching 0),
 * then a sweep over the working set, until the duality gap with the maximum over the
 * working set only is <= tol P, or b is exact on the working set (a full Newton step, and
 * the sweep after it left the support as it was: optimal up to rounding); at most *left
 * sweeps. Returns 1 when exact, 0 otherwise, -1 when out of memory.
 */
static int descend(km_rls2lin *L, double lambda, double tol, int *left, int *sweeps)
{
    while (*left > 0) {
        int rc;
        while ((rc = newton(L, lambda)) == 1)
            ;
        if (rc < 0)
            return -1;
        double gw;
        int moved = sweep(L, lambda, &gw);
        double P = primal(L, lambda);
        (*left)--;
        (*sweeps)++;
        if (rc == 2 && !moved)
            return 1;
        if (P - dual(L, lambda, gw) > tol * P)
            continue;
        gw = 0; /* exact, at the current b */
        for (int t = 0; t < L->nw; t++)
            gw = fmax(gw, fabs(dot(L, L->W[t], L->r)));
        if (P - dual(L, lambda, gw) <= tol * P)
            return 0;
    }
    return 0;
}

int km_rls2lin_solve(km_rls2lin *L, double lambda, double tol, int max_sweeps, double *d,
                     double *c, double *fit, km_rls2_info *info, km_error *err)
{
    double t0 = km_seconds(), U;
    int64_t l = L->l;
    int m = L->m;
    memset(info, 0, sizeof *info);
    if (!(lambda > 0) || !isfinite(lambda))
        return km_error_set(err, KM_EUSAGE, "lambda must be a finite number > 0, not %g",
                            lambda);
    if (!L->started) { /* b = 0: a_k'y exactly for every kernel */
        memset(L->b, 0, (size_t)m * sizeof *L->b);
        L->T = 0;
        L->nh = 0;
        check(L, lambda, 0, &U);
        memcpy(L->ay, L->g, (size_t)m * sizeof *L->ay);
        L->first = -1;
        for (int k = 0; k < m; k++)
            if (L->rs[k] > 0 && (L->first < 0 || fabs(L->g[k]) > fabs(L->g[L->first])))
                L->first = k;
        if (L->first < 0)
            return km_error_set(err, KM_EINPUT, "every basis kernel has scale 0 or is zero");
        L->started = 1;
    }
    /* the working set: the support, and the kernels the checks find violating */
    int nw = L->nw;
    L->nw = 0;
    for (int t = 0; t < nw; t++)
        L->inW[L->W[t]] = 0;
    for (int t = 0; t < nw; t++)
        if (L->b[L->W[t]] != 0)
            add(L, L->W[t]);
    int k1 = L->first;
    if (L->T == 0 && L->ay[k1] != 0) {
        /* Lemma 6: from b = 0 the kernel with the largest y'K^k y = (a_k'y)^2 enters */
        add(L, k1);
        L->b[k1] = L->ay[k1] / (L->q[k1] + lambda);
        L->T = fabs(L->b[k1]);
        cblas_daxpy((blasint)l, -L->rs[k1] * L->b[k1], L->x[k1], 1, L->r, 1);
    }
    int left = max_sweeps, sweeps = 0, exact, joined;
    double inner = tol / 4, P, D;
    for (;;) {
        if ((exact = descend(L, lambda, inner, &left, &sweeps)) < 0)
            return km_error_nomem(err, "linear RLS2 Newton step");
        joined = check(L, lambda, 1, &U);
        P = primal(L, lambda);
        D = dual(L, lambda, U);
        if (P - D <= tol * P || (exact && !joined) || left <= 0)
            break;
        if (!joined) /* the working set is right: descend further */
            inner /= 10;
    }
    info->iter = sweeps;
    info->converged = P - D <= tol * P || (exact && !joined);

    /* back to (d, c) (4.7): d_k = |b_k| / T, c = r / lambda, K(d)c = sum_k d_k a_k a_k'c
     * (a_k'r exact for the working set) */
    memset(d, 0, (size_t)m * sizeof *d);
    memset(fit, 0, (size_t)l * sizeof *fit);
    if (L->T > 0) {
        for (int t = 0; t < L->nw; t++)
            d[L->W[t]] = fabs(L->b[L->W[t]]) / L->T;
    } else {
        d[k1] = 1;
        L->g[k1] = dot(L, k1, L->r);
    }
    for (int k = 0; k < m; k++)
        if (d[k] > 0) {
            cblas_daxpy((blasint)l, d[k] * L->g[k] / lambda * L->rs[k], L->x[k], 1, fit, 1);
            info->kernels++;
        }
    double loss = 0, pen = 0, res = 0, yy = 0;
    for (int64_t i = 0; i < l; i++) {
        c[i] = L->r[i] / lambda;
        double e = L->y[i] - fit[i];
        loss += e * e;
        pen += c[i] * fit[i];
        double v = fit[i] + L->r[i] - L->y[i]; /* (K(d) + lambda I)c - y */
        res += v * v;
        yy += L->y[i] * L->y[i];
    }
    info->objective = loss / (2 * lambda) + pen / 2; /* (4.1) */
    info->residual = yy > 0 ? sqrt(res / yy) : 0;
    info->seconds = km_seconds() - t0;
    return KM_OK;
}
