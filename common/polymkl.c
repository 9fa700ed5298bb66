/* polymkl.c - see polymkl.h: randomized mirror-descent MKL for polynomial kernels (seed 002,
 * Algorithms 2 and 3 as corrected in issue 15), Kloft's closed form and UCD beside it. */
#include "polymkl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#include <lapacke.h>

#define PEND 32   /* rank-one steps of K~ kept apart before one dsyrk */

struct km_polymkl {
    int64_t n;
    int r, D, Dm;          /* Dm = max(D, 1): the stride of tuple index arrays */
    double lambda;
    double *rho2;          /* D + 1 */
    double *X;             /* rank-one base kernels: n x r, or NULL */
    double **K;            /* dense base kernels: r matrices n x n, or NULL */
    double *y;
    double **Spow;         /* S^{o m}, m = 0..D, n x n, all entries */
    double **Z;            /* rank-one: Z[m] (n x q[m]), Z_m Z_m' = S^{o m} = (XX')^{o m}, one
                              column per multiset of m features, sqrt(m! / prod k_j!) prod
                              x_j; for 2 <= m < D where q[m] < n, else NULL */
    int64_t *q;
    double *Kt;            /* K~ (lower triangle): K_theta = scale K~ = scale (Kt + U diag(uw)
                              U'), the last rank-one steps pending in U (n x PEND) */
    double *U, *uw;
    int npend;
    double scale;
    double *A;             /* K_theta + lambda I, then its Cholesky factor L (lower) */
    int have_factor;       /* A holds the factor L of B = s0 K~ + lambda I, kept current
                              under rank-one steps of K~ (the scale drifts: s0 >= scale) */
    double s0;
    int exact_factor;      /* L is the factor of B (not stale) */
    double *kc;            /* K~ c, while kcvalid */
    int kcvalid;
    int64_t nfactor, ncg;  /* Cholesky factorizations, CG steps */
    double *c, J;
    /* theta~ per tuple: a hash map over the tuples seen */
    int64_t nt, cap;
    int *td;
    int32_t *tidx;         /* cap * Dm */
    double *th, *acc, *lastP;
    int64_t *slot, nslot;  /* slot[h] = tuple + 1, or 0 */
    double norm2;          /* ||theta~||^2 */
    double *work;          /* n (2 max(r, D + 2) + 2) + max(r, D + 2) */
    double *G;             /* rank-one: r x r, X'W in Algorithm 3 */
    /* at the current c (valid while cvalid): delta[0..D] and, for rank-one base kernels
     * and D >= 2, W = diag(c) X and P = S^{o(D-1)} W (Algorithm 3's first step at d = D,
     * whose weights sum to c'S^{o D}c) */
    int mono;              /* rho_t^2 = rho_d^2 sqrt(m_t) (km_polymkl_set_monomial) */
    int cvalid;
    double cdelta[65], *cW, *cP, *cnum;
};

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void km_polymkl_free(km_polymkl *S)
{
    if (!S)
        return;
    free(S->rho2);
    free(S->X);
    if (S->K)
        for (int j = 0; j < S->r; j++)
            free(S->K[j]);
    free(S->K);
    free(S->y);
    if (S->Spow)
        for (int m = 0; m <= S->D; m++)
            free(S->Spow[m]);
    free(S->Spow);
    if (S->Z)
        for (int m = 0; m <= S->D; m++)
            free(S->Z[m]);
    free(S->Z);
    free(S->q);
    free(S->Kt);
    free(S->U);
    free(S->uw);
    free(S->A);
    free(S->c);
    free(S->td);
    free(S->tidx);
    free(S->th);
    free(S->acc);
    free(S->lastP);
    free(S->slot);
    free(S->work);
    free(S->G);
    free(S->cW);
    free(S->cP);
    free(S->cnum);
    free(S->kc);
    free(S);
}

/* Z[m] for 2 <= m < D where the multisets of m of the r features are fewer than n; 1 when
 * out of memory. */
static int build_monomials(km_polymkl *S)
{
    int64_t n = S->n;
    int r = S->r;
    if (!(S->Z = calloc((size_t)S->D + 1, sizeof *S->Z)) ||
        !(S->q = calloc((size_t)S->D + 1, sizeof *S->q)))
        return 1;
    for (int m = 2; m < S->D; m++) {
        double q = 1;   /* C(r + m - 1, m) */
        for (int i = 1; i <= m && q < (double)n; i++)
            q = q * (double)(r - 1 + i) / i;
        if (!(q < (double)n))
            continue;
        S->q[m] = (int64_t)llround(q);
        if (!(S->Z[m] = malloc((size_t)n * (size_t)S->q[m] * sizeof **S->Z)))
            return 1;
        int j[64] = {0};   /* j_1 <= .. <= j_m, in lexicographic order */
        for (int64_t col = 0; col < S->q[m]; col++) {
            double w = 1;   /* m! / prod k!: the orderings of the multiset */
            for (int i = 1, run = 1; i <= m; i++) {
                w *= i;
                run = i > 1 && j[i - 1] == j[i - 2] ? run + 1 : 1;
                w /= run;
            }
            double *z = S->Z[m] + col * n, sw = sqrt(w);
            for (int64_t a = 0; a < n; a++) {
                double p = sw;
                for (int i = 0; i < m; i++)
                    p *= S->X[(int64_t)j[i] * n + a];
                z[a] = p;
            }
            int i = m - 1;   /* the next multiset */
            while (i >= 0 && j[i] == r - 1)
                i--;
            if (i < 0)
                break;
            j[i]++;
            for (int k = i + 1; k < m; k++)
                j[k] = j[i];
        }
    }
    return 0;
}

km_polymkl *km_polymkl_new(int64_t n, int r, const double *X, const double *const *K,
                           const double *y, int D, const double *rho2, double lambda,
                           km_error *err)
{
    if (n < 1 || r < 1 || D < 0 || D > 64 || !(lambda > 0) || (!X && !K)) {
        km_error_set(err, KM_EUSAGE, "polymkl: need rows, base kernels, D in 0..64 and "
                     "lambda > 0");
        return NULL;
    }
    for (int d = 0; d <= D; d++)
        if (!(rho2[d] > 0) || !isfinite(rho2[d])) {
            km_error_set(err, KM_EUSAGE, "polymkl: rho_%d^2 must be positive", d);
            return NULL;
        }
    km_polymkl *S = calloc(1, sizeof *S);
    size_t nn = (size_t)n * (size_t)n;
    if (!S)
        goto nomem;
    S->n = n;
    S->r = r;
    S->D = D;
    S->Dm = D > 0 ? D : 1;
    S->lambda = lambda;
    S->scale = 1;
    int wcols = r > D + 2 ? r : D + 2;
    if (!(S->rho2 = malloc((size_t)(D + 1) * sizeof *S->rho2)) ||
        !(S->y = malloc((size_t)n * sizeof *S->y)) || !(S->c = malloc((size_t)n * sizeof *S->c)) ||
        !(S->kc = malloc((size_t)n * sizeof *S->kc)) ||
        !(S->Spow = calloc((size_t)(D + 1), sizeof *S->Spow)) ||
        !(S->Kt = calloc(nn, sizeof *S->Kt)) ||
        !(S->U = malloc((size_t)n * PEND * sizeof *S->U)) ||
        !(S->uw = malloc(PEND * sizeof *S->uw)) || !(S->A = malloc(nn * sizeof *S->A)) ||
        !(S->work = malloc(((size_t)n * (size_t)(2 * wcols + 2) + (size_t)wcols) *
                                  sizeof *S->work)))
        goto nomem;
    memcpy(S->rho2, rho2, (size_t)(D + 1) * sizeof *rho2);
    memcpy(S->y, y, (size_t)n * sizeof *y);
    for (int m = 0; m <= D; m++)
        if (!(S->Spow[m] = malloc(nn * sizeof **S->Spow)))
            goto nomem;
    double *Sm = D >= 1 ? S->Spow[1] : malloc(nn * sizeof *Sm);   /* S itself */
    if (!Sm)
        goto nomem;
    if (X) {
        if (!(S->X = malloc((size_t)n * (size_t)r * sizeof *S->X)) ||
            !(S->G = malloc((size_t)r * (size_t)r * sizeof *S->G)) ||
            !(S->cW = malloc((size_t)n * (size_t)r * sizeof *S->cW)) ||
            !(S->cP = malloc((size_t)n * (size_t)r * sizeof *S->cP)) ||
            !(S->cnum = malloc((size_t)r * sizeof *S->cnum)))
            goto nomem;
        memcpy(S->X, X, (size_t)n * (size_t)r * sizeof *X);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, r, 1, X, (int)n,
                    X, (int)n, 0, Sm, (int)n);
    } else {
        if (!(S->K = calloc((size_t)r, sizeof *S->K)))
            goto nomem;
        memset(Sm, 0, nn * sizeof *Sm);
        for (int j = 0; j < r; j++) {
            if (!(S->K[j] = malloc(nn * sizeof **S->K)))
                goto nomem;
            memcpy(S->K[j], K[j], nn * sizeof **K);
            for (size_t a = 0; a < nn; a++)
                Sm[a] += K[j][a];
        }
    }
    for (size_t a = 0; a < nn; a++)
        S->Spow[0][a] = 1;
    for (int m = 2; m <= D; m++)
        for (size_t a = 0; a < nn; a++)
            S->Spow[m][a] = S->Spow[m - 1][a] * Sm[a];
    if (D < 1)
        free(Sm);
    if (X && build_monomials(S))
        goto nomem;
    if (km_polymkl_solve(S, err)) {
        km_polymkl_free(S);
        return NULL;
    }
    return S;
nomem:
    km_polymkl_free(S);
    km_error_nomem(err, "polymkl");
    return NULL;
}

int64_t km_polymkl_count(const km_polymkl *S)
{
    int64_t total = 0, p = 1;
    for (int d = 0; d <= S->D; d++) {
        total += p;
        if (d < S->D && p > ((int64_t)1 << 62) / S->r)
            return -1;
        p *= S->r;
    }
    return total;
}

void km_polymkl_tuple(const km_polymkl *S, int64_t index, int *d, int32_t *idx)
{
    int64_t p = 1;
    int e = 0;
    while (index >= p) {
        index -= p;
        p *= S->r;
        e++;
    }
    *d = e;
    for (int i = e - 1; i >= 0; i--) {
        idx[i] = (int32_t)(index % S->r);
        index /= S->r;
    }
}

static void clear_theta(km_polymkl *S);

double km_polymkl_orderings(int d, const int32_t *idx)
{
    int32_t s[64];
    memcpy(s, idx, (size_t)d * sizeof *s);
    for (int i = 1; i < d; i++)   /* insertion sort: d <= 64 */
        for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
            int32_t t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    double m = 1;   /* d! / prod k_j! */
    for (int i = 1, run = 1; i <= d; i++) {
        run = i > 1 && s[i - 1] == s[i - 2] ? run + 1 : 1;
        m = m * i / run;
    }
    return m;
}

/* rho_t^2: rho_d^2, times sqrt(m_t) under the monomial adjustment. */
static double rho2_t(const km_polymkl *S, int d, const int32_t *idx)
{
    return S->mono ? S->rho2[d] * sqrt(km_polymkl_orderings(d, idx)) : S->rho2[d];
}

int km_polymkl_set_monomial(km_polymkl *S, int on, km_error *err)
{
    S->mono = on != 0;
    clear_theta(S);
    return km_polymkl_solve(S, err);
}

/* ---- the hash map of theta~ ---- */

static uint64_t tuple_hash(int d, const int32_t *idx)
{
    uint64_t h = 0x9E3779B97F4A7C15ull * (uint64_t)(d + 1);
    for (int i = 0; i < d; i++)
        h = (h ^ (uint64_t)(uint32_t)idx[i]) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

static int tuple_eq(const km_polymkl *S, int64_t k, int d, const int32_t *idx)
{
    return S->td[k] == d && memcmp(S->tidx + k * S->Dm, idx, (size_t)d * sizeof *idx) == 0;
}

/* The tuple's slot in the map, added (theta~ 0) when new; -1 when out of memory. */
static int64_t tuple_find(km_polymkl *S, int d, const int32_t *idx)
{
    if (2 * (S->nt + 1) > S->nslot) {   /* grow the table and the arrays */
        int64_t ns = S->nslot ? 2 * S->nslot : 1024;
        int64_t *slot = calloc((size_t)ns, sizeof *slot);
        int64_t cap = ns / 2;
        int *td = realloc(S->td, (size_t)cap * sizeof *td);
        if (td)
            S->td = td;
        int32_t *ti = realloc(S->tidx, (size_t)cap * (size_t)S->Dm * sizeof *ti);
        if (ti)
            S->tidx = ti;
        double *th = realloc(S->th, (size_t)cap * sizeof *th);
        if (th)
            S->th = th;
        double *acc = realloc(S->acc, (size_t)cap * sizeof *acc);
        if (acc)
            S->acc = acc;
        double *lp = realloc(S->lastP, (size_t)cap * sizeof *lp);
        if (lp)
            S->lastP = lp;
        if (!slot || !td || !ti || !th || !acc || !lp) {
            free(slot);
            return -1;
        }
        for (int64_t k = 0; k < S->nt; k++) {
            uint64_t h = tuple_hash(S->td[k], S->tidx + k * S->Dm) & (uint64_t)(ns - 1);
            while (slot[h])
                h = (h + 1) & (uint64_t)(ns - 1);
            slot[h] = k + 1;
        }
        free(S->slot);
        S->slot = slot;
        S->nslot = ns;
        S->cap = cap;
    }
    uint64_t h = tuple_hash(d, idx) & (uint64_t)(S->nslot - 1);
    while (S->slot[h]) {
        if (tuple_eq(S, S->slot[h] - 1, d, idx))
            return S->slot[h] - 1;
        h = (h + 1) & (uint64_t)(S->nslot - 1);
    }
    int64_t k = S->nt++;
    S->slot[h] = k + 1;
    S->td[k] = d;
    memset(S->tidx + k * S->Dm, 0, (size_t)S->Dm * sizeof *S->tidx);
    memcpy(S->tidx + k * S->Dm, idx, (size_t)d * sizeof *idx);
    S->th[k] = S->acc[k] = S->lastP[k] = 0;
    return k;
}

/* Kt += U diag(uw) U' (the pending rank-one steps, one dsyrk). */
static void kt_flush(km_polymkl *S)
{
    int n = (int)S->n;
    for (int k = 0; k < S->npend; k++)
        cblas_dscal(n, sqrt(S->uw[k]), S->U + (int64_t)k * n, 1);
    if (S->npend)
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, S->npend, 1, S->U, n, 1, S->Kt,
                    n);
    S->npend = 0;
}

/* q = K~ x */
static void kt_symv(const km_polymkl *S, const double *x, double *q)
{
    int n = (int)S->n;
    cblas_dsymv(CblasColMajor, CblasLower, n, 1, S->Kt, n, x, 1, 0, q, 1);
    if (S->npend) {
        double t[PEND];
        cblas_dgemv(CblasColMajor, CblasTrans, n, S->npend, 1, S->U, n, x, 1, 0, t, 1);
        for (int k = 0; k < S->npend; k++)
            t[k] *= S->uw[k];
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, S->npend, 1, S->U, n, t, 1, 1, q, 1);
    }
}

static void clear_theta(km_polymkl *S)
{
    S->nt = 0;
    if (S->slot)
        memset(S->slot, 0, (size_t)S->nslot * sizeof *S->slot);
    S->norm2 = 0;
    S->scale = 1;
    S->have_factor = 0;
    S->kcvalid = 0;
    S->npend = 0;
    memset(S->Kt, 0, (size_t)S->n * (size_t)S->n * sizeof *S->Kt);
}

/* L L' + x x' = L~ L~' (L lower, column-major n x n; x destroyed): the rotations of
 * LINPACK's dchud, column by column, O(n^2). */
static void chol_update(double *L, int64_t n, double *x)
{
    for (int64_t k = 0; k < n; k++) {
        double *col = L + k * n, lkk = col[k], xk = x[k];
        if (xk == 0)
            continue;
        double rr = hypot(lkk, xk);
        col[k] = rr;   /* [col; x] <- [cs sn; -sn cs] [col; x] below the diagonal */
        if (k + 1 < n)
            cblas_drot((int)(n - k - 1), col + k + 1, 1, x + k + 1, 1, lkk / rr, xk / rr);
    }
}

/* K~ += w K_t (lower triangle), and the factor of B along (rank-one base kernels); u: n
 * work values. */
static void add_kernel(km_polymkl *S, int d, const int32_t *idx, double w, double *u)
{
    int64_t n = S->n;
    if (S->X) {
        for (int64_t a = 0; a < n; a++)
            u[a] = 1;
        for (int i = 0; i < d; i++)
            for (int64_t a = 0; a < n; a++)
                u[a] *= S->X[(int64_t)idx[i] * n + a];
        if (S->npend == PEND)
            kt_flush(S);
        memcpy(S->U + (int64_t)S->npend * n, u, (size_t)n * sizeof *u);
        S->uw[S->npend++] = w;
        if (S->kcvalid)   /* K~c moves along: + w u (u'c) */
            cblas_daxpy((int)n, w * cblas_ddot((int)n, u, 1, S->c, 1), u, 1, S->kc, 1);
        if (S->have_factor && w > 0) {   /* B += s0 w u u': L updated, O(n^2) */
            double sw = sqrt(S->s0 * w);
            for (int64_t a = 0; a < n; a++)
                u[a] *= sw;
            chol_update(S->A, n, u);
        }
        return;
    }
    kt_flush(S);
    for (int64_t b = 0; b < n; b++)
        for (int64_t a = b; a < n; a++) {
            double p = w;
            for (int i = 0; i < d; i++)
                p *= S->K[idx[i]][b * n + a];
            S->Kt[b * n + a] += p;
        }
    S->kcvalid = 0;
    S->exact_factor = 0;   /* L is a stale preconditioner from now on */
}

/* The index of a tuple (km_polymkl_tuple's inverse). */
static int64_t tuple_index(const km_polymkl *S, int d, const int32_t *idx)
{
    int64_t off = 0, p = 1, w = 0;
    for (int e = 0; e < d; e++) {
        off += p;
        p *= S->r;
    }
    for (int i = 0; i < d; i++)
        w = w * S->r + idx[i];
    return off + w;
}

int km_polymkl_set_lambda(km_polymkl *S, double lambda, km_error *err)
{
    if (!(lambda > 0) || !isfinite(lambda))
        return km_error_set(err, KM_EUSAGE, "polymkl: lambda must be positive");
    S->lambda = lambda;
    S->have_factor = 0;   /* B's lambda is the old one */
    return km_polymkl_solve(S, err);
}

int km_polymkl_set_theta(km_polymkl *S, int64_t count, const int *d, const int32_t *idx,
                         const double *w, km_error *err)
{
    clear_theta(S);
    for (int64_t q = 0; q < count; q++) {
        if (d[q] < 0 || d[q] > S->D || !(w[q] > 0))
            return km_error_set(err, KM_EUSAGE, "polymkl: tuple %lld: degree above D or "
                                "weight not positive", (long long)q);
        for (int i = 0; i < d[q]; i++)
            if (idx[q * S->Dm + i] < 0 || idx[q * S->Dm + i] >= S->r)
                return km_error_set(err, KM_EUSAGE, "polymkl: tuple %lld: base kernel out "
                                    "of range", (long long)q);
        int64_t k = tuple_find(S, d[q], idx + q * S->Dm);
        if (k < 0)
            return km_error_nomem(err, "polymkl theta");
        S->norm2 += (S->th[k] + w[q]) * (S->th[k] + w[q]) - S->th[k] * S->th[k];
        S->th[k] += w[q];
        add_kernel(S, d[q], idx + q * S->Dm, w[q] / rho2_t(S, d[q], idx + q * S->Dm), S->work);
    }
    return km_polymkl_solve(S, err);
}

/* ---- the c-step ---- */

#define PCG_TOL 1e-14   /* ||r|| / (||A||_F ||c|| + ||y||), ||A||_F bounded by the trace */
#define PCG_MAX 25      /* steps before the matrix is factored afresh */
#define PCG_STALE 8     /* a solve that took more steps: the next one factors afresh */

/* q = (scale K~ + lambda I) x */
static void apply(const km_polymkl *S, const double *x, double *q)
{
    kt_symv(S, x, q);
    cblas_dscal((int)S->n, S->scale, q, 1);
    cblas_daxpy((int)S->n, S->lambda, x, 1, q, 1);
}

/* Conjugate gradient on A c = y, A = scale K~ + lambda I, from the last c, preconditioned
 * by the factor L of B = s0 K~ + lambda I. When L is current (rank-one base kernels: every
 * step of K~ is also applied to L), A = rho B + sigma I with rho = scale / s0 and sigma =
 * lambda (1 - rho), so that A p = rho B p + sigma p with B p from the recurrence B p_k =
 * r_k + beta B p_{k-1} (B z = r): a step costs the two triangular solves, and K~ is read
 * once, to confirm the residual at the end (K~c is kept, and moved along each step of K~).
 * Otherwise (a stale L: dense base kernels) A p is a product with K~. 1 when the backward
 * error ||y - A c|| / (||A||_F ||c|| + ||y||) reaches PCG_TOL within PCG_MAX steps. */
static int pcg(km_polymkl *S)
{
    int n = (int)S->n;
    double *r = S->work, *z = r + n, *p = z + n, *q = p + n, *bp = q + n, tr = 0;
    for (int b = 0; b < n; b++)   /* ||A||_F <= scale tr K~ + lambda sqrt(n) (K~ is PSD) */
        tr += S->Kt[(int64_t)b * n + b];
    for (int k = 0; k < S->npend; k++)
        tr += S->uw[k] * cblas_ddot(n, S->U + (int64_t)k * n, 1, S->U + (int64_t)k * n, 1);
    double fro = S->scale * tr + S->lambda * sqrt((double)n);
    double ny = cblas_dnrm2(n, S->y, 1), rz = 0;
    double rho = S->scale / S->s0, sigma = S->lambda * (1 - rho);
    int verified = 0, first = 1;
    if (!S->kcvalid) {   /* kc = K~ c */
        kt_symv(S, S->c, S->kc);
        S->kcvalid = verified = 1;
    }
    for (int a = 0; a < n; a++)
        r[a] = S->y[a] - S->scale * S->kc[a] - S->lambda * S->c[a];
    for (int it = 0; it <= PCG_MAX; it++) {
        if (cblas_dnrm2(n, r, 1) <= PCG_TOL * (fro * cblas_dnrm2(n, S->c, 1) + ny)) {
            if (!verified) {   /* the residual from K~ itself */
                kt_symv(S, S->c, S->kc);
                for (int a = 0; a < n; a++)
                    r[a] = S->y[a] - S->scale * S->kc[a] - S->lambda * S->c[a];
                S->kcvalid = verified = 1;
                first = 1;
                if (cblas_dnrm2(n, r, 1) > PCG_TOL * (fro * cblas_dnrm2(n, S->c, 1) + ny))
                    goto step;
            }
            if (it > PCG_STALE)
                S->have_factor = 0;
            return 1;
        }
    step:
        if (it == PCG_MAX)
            break;
        memcpy(z, r, (size_t)n * sizeof *z);   /* z = (LL')^-1 r */
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, S->A, n, z, 1);
        cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, n, S->A, n, z, 1);
        double rz1 = cblas_ddot(n, r, 1, z, 1);
        if (first) {
            memcpy(p, z, (size_t)n * sizeof *p);
            memcpy(bp, r, (size_t)n * sizeof *bp);
        } else {
            for (int a = 0; a < n; a++) {
                p[a] = z[a] + rz1 / rz * p[a];
                bp[a] = r[a] + rz1 / rz * bp[a];
            }
        }
        first = 0;
        rz = rz1;
        if (S->exact_factor)
            for (int a = 0; a < n; a++)
                q[a] = rho * bp[a] + sigma * p[a];
        else
            apply(S, p, q);
        double pq = cblas_ddot(n, p, 1, q, 1);
        if (!(pq > 0) || !(rz > 0))
            return 0;
        double alpha = rz / pq;
        S->ncg++;
        cblas_daxpy(n, alpha, p, 1, S->c, 1);
        cblas_daxpy(n, -alpha, q, 1, r, 1);
        verified = 0;
        S->kcvalid = 0;
    }
    return 0;
}

int km_polymkl_solve(km_polymkl *S, km_error *err)
{
    int64_t n = S->n;
    S->cvalid = 0;
    if (S->have_factor) {
        if (pcg(S)) {
            S->J = 0.5 * S->lambda * cblas_ddot((int)n, S->y, 1, S->c, 1);
            return KM_OK;
        }
    }
    S->have_factor = 0;
    S->nfactor++;
    kt_flush(S);
    for (int64_t b = 0; b < n; b++) {
        for (int64_t a = b; a < n; a++)
            S->A[b * n + a] = S->scale * S->Kt[b * n + a];
        S->A[b * n + b] += S->lambda;
    }
    memcpy(S->c, S->y, (size_t)n * sizeof *S->c);
    S->kcvalid = 0;
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, S->A,
                                          (lapack_int)n);
    if (info == 0)
        info = LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, S->A,
                                   (lapack_int)n, S->c, (lapack_int)n);
    if (info > 0) {   /* rounding made K_theta + lambda I indefinite: eigenvalues >= lambda */
        for (int64_t b = 0; b < n; b++)
            for (int64_t a = b; a < n; a++)
                S->A[b * n + a] = S->scale * S->Kt[b * n + a];
        double *ev = malloc((size_t)n * sizeof *ev), *t = S->work;
        if (!ev)
            return km_error_nomem(err, "polymkl c-step");
        info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', (lapack_int)n, S->A, (lapack_int)n,
                              ev);
        if (info == 0) {   /* c = V (max(ev, 0) + lambda)^-1 V'y */
            cblas_dgemv(CblasColMajor, CblasTrans, (int)n, (int)n, 1, S->A, (int)n, S->y, 1, 0,
                        t, 1);
            for (int64_t a = 0; a < n; a++)
                t[a] /= fmax(ev[a], 0) + S->lambda;
            cblas_dgemv(CblasColMajor, CblasNoTrans, (int)n, (int)n, 1, S->A, (int)n, t, 1, 0,
                        S->c, 1);
        }
        free(ev);
    }
    else if (info == 0) {   /* A holds the factor of B = K_theta + lambda I */
        S->have_factor = 1;
        S->exact_factor = 1;
        S->s0 = S->scale;
    }
    if (info != 0)
        return km_error_set(err, KM_EINTERNAL, "polymkl: the c-step failed (LAPACK info %d)",
                            (int)info);
    S->J = 0.5 * S->lambda * cblas_ddot((int)n, S->y, 1, S->c, 1);
    return KM_OK;
}

const double *km_polymkl_c(const km_polymkl *S)
{
    return S->c;
}

double km_polymkl_J(const km_polymkl *S)
{
    return S->J;
}

/* Rank-one base kernels: the weights of a step of Algorithm 3 from v (M = vv'),
 * num_j = (v o x_j)' S^{o m} (v o x_j), through W = diag(v) X and P = S^{o m} W (n x r); G
 * = X'W for m = 1. Returns their sum. */
static double rank_one_weights(km_polymkl *S, const double *v, int m, double *W, double *P,
                               double *num)
{
    int64_t n = S->n;
    int r = S->r;
    double den = 0;
    for (int j = 0; j < r; j++)
        for (int64_t a = 0; a < n; a++)
            W[(int64_t)j * n + a] = v[a] * S->X[(int64_t)j * n + a];
    if (m == 0) {          /* S^{o 0} = 11': num_j = (1'W_j)^2 */
        for (int j = 0; j < r; j++) {
            double sj = 0;
            for (int64_t a = 0; a < n; a++)
                sj += W[(int64_t)j * n + a];
            den += num[j] = sj * sj;
        }
        return den;
    }
    if (S->Z[m]) {         /* num_j = ||Z_m' W_j||^2, O(n q_m r) */
        int q = (int)S->q[m];
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, q, r, (int)n, 1, S->Z[m], (int)n, W,
                    (int)n, 0, P, q);
        for (int j = 0; j < r; j++)
            den += num[j] = cblas_ddot(q, P + (int64_t)j * q, 1, P + (int64_t)j * q, 1);
        return den;
    }
    if (m == 1) {          /* S = XX': P = X (X'W), O(n r^2) */
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, r, r, (int)n, 1, S->X, (int)n, W,
                    (int)n, 0, S->G, r);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, r, r, 1, S->X, (int)n,
                    S->G, r, 0, P, (int)n);
    } else {               /* S^{o m} W, all entries of S^{o m} stored: O(n^2 r) */
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, r, (int)n, 1, S->Spow[m],
                    (int)n, W, (int)n, 0, P, (int)n);
    }
    for (int j = 0; j < r; j++)
        den += num[j] = fmax(0, cblas_ddot((int)n, W + (int64_t)j * n, 1, P + (int64_t)j * n, 1));
    return den;
}

double km_polymkl_delta(km_polymkl *S, double *delta)
{
    int64_t n = S->n;
    double *t = S->work, sum = 0;
    int D = S->D;
    if (S->cvalid) {
        for (int d = 0; d <= D; d++)
            sum += delta[d] = S->cdelta[d];
        return 0.5 * S->lambda * sum;
    }
    if (S->X && D >= 2)   /* c'S^{o D}c = sum_j of the first step's weights at d = D */
        S->cdelta[D] = rank_one_weights(S, S->c, D - 1, S->cW, S->cP, S->cnum);
    for (int d = 0; d <= D; d++) {
        double q;
        if (d == 0) {                 /* c'11'c */
            q = 0;
            for (int64_t a = 0; a < n; a++)
                q += S->c[a];
            q *= q;
        } else if (d == 1 && S->X) {  /* c'XX'c */
            cblas_dgemv(CblasColMajor, CblasTrans, (int)n, S->r, 1, S->X, (int)n, S->c, 1, 0,
                        t, 1);
            q = cblas_ddot(S->r, t, 1, t, 1);
        } else if (d == D && S->X) {
            q = S->cdelta[D];
        } else if (d == 2 && S->X) {  /* c'(XX')^{o 2}c = ||X' diag(c) X||_F^2 */
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, S->r, S->r, (int)n, 1, S->X,
                        (int)n, S->cW, (int)n, 0, S->G, S->r);
            q = cblas_ddot(S->r * S->r, S->G, 1, S->G, 1);
        } else {
            cblas_dsymv(CblasColMajor, CblasLower, (int)n, 1, S->Spow[d], (int)n, S->c, 1, 0, t,
                        1);
            q = cblas_ddot((int)n, S->c, 1, t, 1);
        }
        S->cdelta[d] = delta[d] = fmax(0, q) / S->rho2[d];
        sum += delta[d];
    }
    S->cvalid = 1;
    return 0.5 * S->lambda * sum;
}

/* ---- Algorithm 3 ---- */

/* An index drawn from weights w[0..m) (total > 0), or given (*pick >= 0): its probability. */
static double draw(km_rng *rng, const double *w, int m, double total, int *pick)
{
    if (*pick < 0) {
        double u = km_rng_uniform(rng) * total, s = 0;
        int j = 0, last = -1;
        for (; j < m; j++) {
            if (w[j] > 0)
                last = j;
            s += w[j];
            if (u < s && w[j] > 0)
                break;
        }
        *pick = j < m ? j : last;
    }
    return w[*pick] / total;
}

double km_polymkl_sample(km_polymkl *S, km_rng *rng, int *d, int32_t *idx, km_error *err)
{
    int64_t n = S->n;
    int r = S->r, D = S->D;
    double delta[65];
    km_polymkl_delta(S, delta);
    double total = 0;
    for (int e = 0; e <= D; e++)
        total += delta[e];
    if (!(total > 0)) {
        km_error_set(err, KM_EINTERNAL, "polymkl: ||g||_1 = 0 (c = 0?)");
        return -1;
    }
    int pick = rng ? -1 : *d;
    double prob = draw(rng, delta, D + 1, total, &pick);
    *d = pick;
    double *num = S->work, *v = S->work + r;   /* r weights; then n (rank-one) */
    double *M = NULL, *T = NULL;
    if (S->X) {
        memcpy(v, S->c, (size_t)n * sizeof *v);
    } else {
        size_t nn = (size_t)n * (size_t)n;
        if (!(M = malloc(nn * sizeof *M)) || !(T = malloc(nn * sizeof *T))) {
            free(M);
            km_error_nomem(err, "polymkl sampler");
            return -1;
        }
        for (int64_t b = 0; b < n; b++)
            for (int64_t a = 0; a < n; a++)
                M[b * n + a] = S->c[a] * S->c[b];
    }
    double *W = v + n, *P = W + n * r;
    for (int i = 1; i <= *d; i++) {
        int m = *d - i;
        double den = 0;
        if (S->X) {   /* num_j = (v o x_j)' S^{o m} (v o x_j) */
            if (i == 1 && *d == D && D >= 2) {   /* computed with delta */
                memcpy(num, S->cnum, (size_t)r * sizeof *num);
                for (int j = 0; j < r; j++)
                    den += num[j];
            } else {
                den = rank_one_weights(S, v, m, W, P, num);
            }
        } else {      /* num_j = <M o K_j, S^{o m}> */
            size_t nn = (size_t)n * (size_t)n;
            for (size_t a = 0; a < nn; a++)
                T[a] = M[a] * S->Spow[m][a];
            for (int j = 0; j < r; j++)
                den += num[j] = fmax(0, cblas_ddot((int)nn, T, 1, S->K[j], 1));
        }
        if (!(den > 0)) {
            free(M);
            free(T);
            km_error_set(err, KM_EINTERNAL, "polymkl: Algorithm 3 step %d: zero weights", i);
            return -1;
        }
        int z = rng ? -1 : idx[i - 1];
        prob *= draw(rng, num, r, den, &z);
        idx[i - 1] = z;
        if (S->X) {
            for (int64_t a = 0; a < n; a++)
                v[a] *= S->X[(int64_t)z * n + a];
        } else {
            size_t nn = (size_t)n * (size_t)n;
            for (size_t a = 0; a < nn; a++)
                M[a] *= S->K[z][a];
        }
    }
    free(M);
    free(T);
    return prob;
}

/* ---- enumeration of all tuples (depth-first) ---- */

typedef struct enum_ctx {
    km_polymkl *S;
    double *beta;          /* beta mode: out */
    const double *w;       /* form mode: theta_t per tuple, K~ += theta_t / rho_d^2 K_t */
    double *blk;           /* form mode, rank-one: a block of columns sqrt(w) u_t */
    int nblk;
    double **lev;          /* D + 1 vectors (n) or matrices (n x n) */
    int32_t idx[64];
} enum_ctx;

#define BLOCK 64

static void flush_block(enum_ctx *e)
{
    if (e->nblk)
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)e->S->n, e->nblk, 1, e->blk,
                    (int)e->S->n, 1, e->S->Kt, (int)e->S->n);
    e->nblk = 0;
}

static void visit(enum_ctx *e, int d, int64_t index)
{
    km_polymkl *S = e->S;
    int64_t n = S->n;
    size_t nn = (size_t)n * (size_t)n;
    const double *L = e->lev[d];
    if (e->beta) {
        double s = 0;
        if (S->X) {
            for (int64_t a = 0; a < n; a++)
                s += L[a];
            s *= s;
        } else {
            for (size_t a = 0; a < nn; a++)
                s += L[a];
        }
        e->beta[index] = fmax(0, s) / rho2_t(S, d, e->idx);
    } else if (e->w[index] > 0) {
        double w = e->w[index] / rho2_t(S, d, e->idx);
        if (S->X) {
            double sw = sqrt(w);
            for (int64_t a = 0; a < n; a++)
                e->blk[(int64_t)e->nblk * n + a] = sw * L[a];
            if (++e->nblk == BLOCK)
                flush_block(e);
        } else {
            for (size_t a = 0; a < nn; a++)
                S->Kt[a] += w * L[a];
        }
    }
    if (d == S->D)
        return;
    /* children: index of (t, j) = offset_{d+1} + (index - offset_d) r + j */
    int64_t off = 0, p = 1;
    for (int q = 0; q < d; q++) {
        off += p;
        p *= S->r;
    }
    int64_t child0 = off + p + (index - off) * S->r;
    for (int j = 0; j < S->r; j++) {
        double *C = e->lev[d + 1];
        if (S->X)
            for (int64_t a = 0; a < n; a++)
                C[a] = L[a] * S->X[(int64_t)j * n + a];
        else
            for (size_t a = 0; a < nn; a++)
                C[a] = L[a] * S->K[j][a];
        e->idx[d] = j;
        visit(e, d + 1, child0 + j);
    }
}

/* beta (beta != NULL) or K~ = sum_t w_t rho_d^-2 K_t (w != NULL) over all tuples. */
static int enumerate(km_polymkl *S, double *beta, const double *w, km_error *err)
{
    int64_t n = S->n;
    size_t len = S->X ? (size_t)n : (size_t)n * (size_t)n;
    enum_ctx e = {S, beta, w, NULL, 0, NULL, {0}};
    if (!(e.lev = calloc((size_t)S->D + 1, sizeof *e.lev)))
        return km_error_nomem(err, "polymkl enumeration");
    int rc = KM_OK;
    for (int d = 0; d <= S->D && rc == KM_OK; d++)
        if (!(e.lev[d] = malloc(len * sizeof **e.lev)))
            rc = km_error_nomem(err, "polymkl enumeration");
    if (rc == KM_OK && w && S->X && !(e.blk = malloc((size_t)n * BLOCK * sizeof *e.blk)))
        rc = km_error_nomem(err, "polymkl enumeration");
    if (rc == KM_OK) {
        if (S->X)
            for (int64_t a = 0; a < n; a++)
                e.lev[0][a] = beta ? S->c[a] : 1;
        else
            for (int64_t b = 0; b < n; b++)
                for (int64_t a = 0; a < n; a++)
                    e.lev[0][b * n + a] = beta ? S->c[a] * S->c[b] : 1;
        if (w)
            kt_flush(S);
        visit(&e, 0, 0);
        if (w && S->X)
            flush_block(&e);
    }
    if (w) {   /* K~ changed outside add_kernel */
        S->kcvalid = 0;
        S->have_factor = 0;
    }
    for (int d = 0; d <= S->D; d++)
        free(e.lev[d]);
    free(e.lev);
    free(e.blk);
    return rc;
}

double km_polymkl_beta(km_polymkl *S, double *beta, km_error *err)
{
    if (enumerate(S, beta, NULL, err))
        return -1;
    int64_t m = km_polymkl_count(S);
    double s = 0;
    for (int64_t t = 0; t < m; t++)
        s += beta[t] * beta[t];
    return sqrt(s);
}

double km_polymkl_dual(const km_polymkl *S, double beta_norm)
{
    int n = (int)S->n;
    double lam = S->lambda;
    return lam * (cblas_ddot(n, S->y, 1, S->c, 1) - 0.5 * lam * cblas_ddot(n, S->c, 1, S->c, 1))
           - 0.5 * lam * beta_norm;
}

/* ---- the solvers ---- */

int64_t km_polymkl_active(const km_polymkl *S)
{
    return S->nt;
}

double km_polymkl_theta_at(const km_polymkl *S, int64_t k, int *d, int32_t *idx)
{
    *d = S->td[k];
    memcpy(idx, S->tidx + k * S->Dm, (size_t)S->td[k] * sizeof *idx);
    return S->scale * S->th[k];
}

double km_polymkl_theta_norm(const km_polymkl *S)
{
    return S->scale * sqrt(S->norm2);
}

/* A trace row at k in 0..10, then 1-2-5 steps, and at the last iteration. */
static int trace_at(int64_t k, int64_t last)
{
    if (k <= 10 || k == last)
        return 1;
    while (k % 10 == 0)
        k /= 10;
    return k == 1 || k == 2 || k == 5;
}

/* The relative gap at the current c, or NaN when enumeration costs more than par allows. */
static double gap_now(km_polymkl *S, const km_polymkl_param *par, double *beta, km_error *err,
                      int *rc)
{
    if (!beta)
        return NAN;
    double nb = km_polymkl_beta(S, beta, err);
    if (nb < 0) {
        *rc = err->code;
        return NAN;
    }
    (void)par;
    return (S->J - km_polymkl_dual(S, nb)) / S->J;
}

static int run_kloft(km_polymkl *S, const km_polymkl_param *par, double *beta,
                     km_polymkl_info *info, km_error *err)
{
    int64_t m = km_polymkl_count(S);
    double *theta = m > 0 ? malloc((size_t)m * sizeof *theta) : NULL, t0 = cpu_seconds();
    if (!theta || !beta) {
        free(theta);
        return beta ? km_error_nomem(err, "polymkl Kloft") :
            km_error_set(err, KM_EUSAGE, "-a kloft: |I| = %lld tuples are too many to "
                         "enumerate (raise the limit or lower -d)", (long long)m);
    }
    int warm = par->warm && S->nt == m;   /* from the last theta when it has every tuple */
    for (int64_t t = 0; t < m; t++)
        theta[t] = warm ? 0 : 1 / sqrt((double)m);
    for (int64_t q = 0; warm && q < S->nt; q++)
        theta[tuple_index(S, S->td[q], S->tidx + q * S->Dm)] = S->scale * S->th[q];
    for (int64_t t = 0; warm && t < m; t++)
        if (!(theta[t] > 0))
            warm = 0;
    for (int64_t t = 0; !warm && t < m; t++)
        theta[t] = 1 / sqrt((double)m);
    int rc = KM_OK;
    info->converged = 0;
    int64_t k;
    for (k = 0; rc == KM_OK; k++) {
        clear_theta(S);
        if ((rc = enumerate(S, NULL, theta, err)) || (rc = km_polymkl_solve(S, err)))
            break;
        double nb = km_polymkl_beta(S, beta, err);
        if (nb < 0) {
            rc = err->code;
            break;
        }
        double gap = (S->J - km_polymkl_dual(S, nb)) / S->J, sec = cpu_seconds() - t0;
        info->J = S->J;
        info->gap = gap;
        int stop = gap <= par->tol || k >= par->iters ||
                   (par->seconds > 0 && sec >= par->seconds);
        if (par->trace && (trace_at(k, -1) || stop))
            {
            double g1 = 0;
            for (int64_t t = 0; t < m; t++)
                g1 += beta[t];
            par->trace(par->user, k, sec, S->J, m, 0.5 * S->lambda * g1, gap);
        }
        if (gap <= par->tol)
            info->converged = 1;
        if (stop)
            break;
        double s = 0;   /* theta_t <- (theta_t^2 beta_t)^(1/3), normalised in l2 */
        for (int64_t t = 0; t < m; t++) {
            theta[t] = cbrt(theta[t] * theta[t] * beta[t]);
            s += theta[t] * theta[t];
        }
        s = sqrt(s);
        for (int64_t t = 0; t < m; t++)
            theta[t] = s > 0 ? theta[t] / s : 1 / sqrt((double)m);
    }
    info->iters = k;
    info->seconds = cpu_seconds() - t0;
    info->factorizations = S->nfactor;
    info->cg_steps = S->ncg;
    /* keep theta in the map for the model */
    int32_t idx[64];
    int d;
    for (int64_t t = 0; rc == KM_OK && t < m; t++)
        if (theta[t] > 0) {
            km_polymkl_tuple(S, t, &d, idx);
            int64_t q = tuple_find(S, d, idx);
            if (q < 0)
                rc = km_error_nomem(err, "polymkl theta");
            else {
                S->th[q] = theta[t];
                S->norm2 += theta[t] * theta[t];
            }
        }
    free(theta);
    return rc;
}

int km_polymkl_run(km_polymkl *S, const km_polymkl_param *par, km_polymkl_info *info,
                   km_error *err)
{
    memset(info, 0, sizeof *info);
    info->gap = NAN;
    int64_t m = km_polymkl_count(S), n = S->n;
    double cost = m < 0 ? INFINITY : (double)m * (double)(S->X ? n : n * n);
    double *beta = NULL;
    int need_enum = par->solver == KM_POLY_KLOFT || par->sampler == KM_POLY_FULL;
    if (need_enum && cost > fmax(par->gap_work, 1e9))
        return km_error_set(err, KM_EUSAGE, "polymkl: |I| = %lld tuples: too many to "
                            "enumerate for %s", (long long)m, par->solver == KM_POLY_KLOFT ?
                            "-a kloft" : "--sampler full");
    if ((need_enum || cost <= par->gap_work) &&
        !(beta = m > 0 ? malloc((size_t)m * sizeof *beta) : NULL))
        return km_error_nomem(err, "polymkl");
    int rc = KM_OK;
    if (par->solver == KM_POLY_KLOFT) {
        rc = run_kloft(S, par, beta, info, err);
        free(beta);
        return rc;
    }
    if (par->warm) {   /* from the current theta: the running sums start again */
        for (int64_t t = 0; t < S->nt; t++)
            S->acc[t] = S->lastP[t] = 0;
    } else {
        clear_theta(S);
        if ((rc = km_polymkl_solve(S, err))) {
            free(beta);
            return rc;
        }
    }
    km_rng rng;
    km_rng_seed(&rng, par->seed + (uint64_t)par->k0);
    double t0 = cpu_seconds(), Psum = 0, delta[65], t_trace = 0, C0 = 1;
    int32_t idx[64];
    int64_t k;
    for (k = 1;; k++) {
        double sec = cpu_seconds() - t0 - t_trace;
        int stop = k > par->iters || (par->seconds > 0 && sec >= par->seconds);
        int tracing = par->trace && (trace_at(k - 1, -1) || stop);
        /* ||g||_1: for the step, C_0 and the trace (UCD needs it only for the last two) */
        double g1 = par->sampler != KM_POLY_UNIFORM || k == 1 || tracing ?
                    km_polymkl_delta(S, delta) : NAN;
        if (tracing) {   /* not counted in sec */
            double t1 = cpu_seconds();
            double gap = cost <= par->gap_work ? gap_now(S, par, beta, err, &rc) : NAN;
            if (rc)
                break;
            par->trace(par->user, k - 1, sec, S->J, S->nt, g1, gap);
            t_trace += cpu_seconds() - t1;
        }
        if (stop)
            break;
        int d = 0;
        double amount, adj = 1;   /* the step on theta_t: gamma_k |g^_t| */
        if (par->sampler == KM_POLY_ALG3) {
            if (km_polymkl_sample(S, &rng, &d, idx, err) < 0) {
                rc = err->code;
                break;
            }
            /* importance weight: g_t / q_t with q_t Algorithm 3's (rho_d), g_t with rho_t */
            adj = S->rho2[d] / rho2_t(S, d, idx);
            amount = g1 * adj;
        } else if (par->sampler == KM_POLY_FULL) {
            double nb = km_polymkl_beta(S, beta, err), tot = 0;
            if (nb < 0) {
                rc = err->code;
                break;
            }
            for (int64_t t = 0; t < m; t++)
                tot += beta[t];
            double u = km_rng_uniform(&rng) * tot, s = 0;
            int64_t t = 0;
            for (; t < m - 1; t++)
                if (u < (s += beta[t]) && beta[t] > 0)
                    break;
            km_polymkl_tuple(S, t, &d, idx);
            amount = S->mono ? 0.5 * S->lambda * tot : g1;   /* ||g||_1 with rho_t */
        } else {   /* UCD: a uniform tuple, the estimate g_t |I| */
            int64_t t = (int64_t)km_rng_below(&rng, (uint64_t)m);
            km_polymkl_tuple(S, t, &d, idx);
            double *u = S->work, cu = 0, bt;
            if (S->X) {
                for (int64_t a = 0; a < n; a++)
                    u[a] = S->c[a];
                for (int i = 0; i < d; i++)
                    for (int64_t a = 0; a < n; a++)
                        u[a] *= S->X[(int64_t)idx[i] * n + a];
                for (int64_t a = 0; a < n; a++)
                    cu += u[a];
                bt = cu * cu;
            } else {
                bt = 0;
                for (int64_t b = 0; b < n; b++)
                    for (int64_t a = 0; a < n; a++) {
                        double p = S->c[a] * S->c[b];
                        for (int i = 0; i < d; i++)
                            p *= S->K[idx[i]][b * n + a];
                        bt += p;
                    }
            }
            amount = 0.5 * S->lambda * fmax(0, bt) / rho2_t(S, d, idx) * (double)m;
        }
        if (k == 1)
            C0 = g1 > 0 ? g1 : 1;
        if (par->literal_step == 2)   /* unit: the direction only (relative to Algorithm 3's) */
            amount = adj;
        amount *= par->step / sqrt((double)(par->k0 + k)) / (par->literal_step ? 1 : C0);
        int64_t q = tuple_find(S, d, idx);
        if (q < 0) {
            rc = km_error_nomem(err, "polymkl theta");
            break;
        }
        /* the running sum of theta^(k): flush this tuple's old value up to k - 1 */
        S->acc[q] += S->th[q] * (Psum - S->lastP[q]);
        S->lastP[q] = Psum;
        double dt = amount / S->scale;
        S->norm2 += (S->th[q] + dt) * (S->th[q] + dt) - S->th[q] * S->th[q];
        S->th[q] += dt;
        add_kernel(S, d, idx, dt / rho2_t(S, d, idx), S->work);
        double norm = S->scale * sqrt(S->norm2);
        if (norm > 1)
            S->scale /= norm;
        if (S->scale < 1e-60) {   /* fold the scale into theta~ and K~ */
            for (int64_t t = 0; t < S->nt; t++) {
                S->th[t] *= S->scale;
                S->acc[t] *= S->scale;
            }
            for (int64_t a = 0; a < n * n; a++)
                S->Kt[a] *= S->scale;
            for (int e = 0; e < S->npend; e++)
                S->uw[e] *= S->scale;
            Psum /= S->scale;
            for (int64_t t = 0; t < S->nt; t++)
                S->lastP[t] /= S->scale;
            S->norm2 *= S->scale * S->scale;
            S->s0 /= S->scale;   /* B = s0 K~ + lambda I unchanged */
            for (int64_t a = 0; a < n; a++)
                S->kc[a] *= S->scale;
            S->scale = 1;
        }
        Psum += S->scale;
        if ((rc = km_polymkl_solve(S, err)))
            break;
    }
    info->iters = k - 1;
    info->factorizations = S->nfactor;
    info->cg_steps = S->ncg;
    if (rc == KM_OK && par->average && info->iters > 0) {   /* theta = (1/T) sum_k theta^(k) */
        int64_t T = info->iters;
        double *avg = malloc((size_t)(S->nt > 0 ? S->nt : 1) * sizeof *avg);
        int *dd = malloc((size_t)(S->nt > 0 ? S->nt : 1) * sizeof *dd);
        int32_t *ii = malloc((size_t)(S->nt > 0 ? S->nt : 1) * (size_t)S->Dm * sizeof *ii);
        int64_t cnt = 0;
        if (!avg || !dd || !ii)
            rc = km_error_nomem(err, "polymkl average");
        for (int64_t t = 0; rc == KM_OK && t < S->nt; t++) {
            double a = (S->acc[t] + S->th[t] * (Psum - S->lastP[t])) / (double)T;
            if (a > 0) {
                avg[cnt] = a;
                dd[cnt] = S->td[t];
                memcpy(ii + cnt * S->Dm, S->tidx + t * S->Dm, (size_t)S->Dm * sizeof *ii);
                cnt++;
            }
        }
        if (rc == KM_OK)
            rc = km_polymkl_set_theta(S, cnt, dd, ii, avg, err);
        free(avg);
        free(dd);
        free(ii);
    }
    if (rc == KM_OK) {
        info->J = S->J;
        info->seconds = cpu_seconds() - t0 - t_trace;
        info->gap = cost <= par->gap_work ? gap_now(S, par, beta, err, &rc) : NAN;
        info->converged = 1;
    }
    free(beta);
    return rc;
}
