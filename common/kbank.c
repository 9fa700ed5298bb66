/* kbank.c - see kbank.h. */
#include "kbank.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "sizelimit.h"

/* A group: the rows' distinct values on one feature subset. */
typedef struct kgroup {
    int64_t u;       /* distinct values */
    int32_t *map;    /* l: row -> distinct value */
    int first, count; /* its kernels are order[first .. first + count) */
    int ident;        /* map[i] = i: every row distinct, numbered in row order */
} kgroup;

/* One kernel on its group's distinct values: dense (r < 0: the upper triangle of K_u packed
 * by columns, u (u + 1) / 2 values, LAPACK's 'U' packed storage) or G (u x r), K_u = G G'. */
typedef struct kentry {
    int g;
    int64_t r;
    double *M;
    double norm;     /* an upper bound on ||P K_u P'||_2 over the bank's rows */
    int shared;      /* M lies in the bank's block */
} kentry;

struct km_kbank {
    int64_t l;
    int m, ng;
    kgroup *grp;
    kentry *ent;
    int *order;      /* kernels sorted by group */
    double *block;   /* the rank-one factors of groups with distinct rows, l values each, in
                        kernel order: linear RLS2's matrix X, read in one stream */
};

/* Position of K_u[a, b], a <= b, in the packed upper triangle. */
static inline int64_t pk(int64_t a, int64_t b) { return a + b * (b + 1) / 2; }

/* K_u[a, b] of a packed upper triangle, any a, b. */
static inline double pk_get(const double *P, int64_t a, int64_t b)
{
    return a <= b ? P[pk(a, b)] : P[pk(b, a)];
}

/* The packed upper triangle of the u x u column-major M (whose upper triangle is read). */
static double *pack_upper(const double *M, int64_t u)
{
    double *P = malloc((size_t)(u * (u + 1) / 2 > 0 ? u * (u + 1) / 2 : 1) * sizeof *P);
    if (P)
        for (int64_t b = 0; b < u; b++)
            memcpy(P + pk(0, b), M + b * u, (size_t)(b + 1) * sizeof *P);
    return P;
}

void km_kbank_free(km_kbank *B)
{
    if (!B)
        return;
    for (int g = 0; g < B->ng; g++)
        free(B->grp[g].map);
    for (int k = 0; k < B->m; k++)
        if (!B->ent[k].shared)
            free(B->ent[k].M);
    free(B->block);
    free(B->grp);
    free(B->ent);
    free(B->order);
    free(B);
}

int64_t km_kbank_rows(const km_kbank *B) { return B->l; }
int km_kbank_size(const km_kbank *B) { return B->m; }

static km_kbank *bank_alloc(int64_t l, int m, int ng, km_error *err)
{
    km_kbank *B = calloc(1, sizeof *B);
    if (B) {
        B->l = l;
        B->m = m;
        B->ng = ng;
        B->grp = calloc((size_t)(ng > 0 ? ng : 1), sizeof *B->grp);
        B->ent = calloc((size_t)(m > 0 ? m : 1), sizeof *B->ent);
        B->order = malloc((size_t)(m > 0 ? m : 1) * sizeof *B->order);
    }
    if (!B || !B->grp || !B->ent || !B->order) {
        km_kbank_free(B);
        km_error_nomem(err, "kernel bank");
        return NULL;
    }
    return B;
}

static int set_norms(km_kbank *B);

/* Kernel k goes to the block: a rank-one factor on distinct rows. */
static int in_block(const km_kbank *B, int k)
{
    return B->ent[k].r == 1 && B->grp[B->ent[k].g].ident;
}

/* B->block for the kernels in_block (by the groups' ident and the entries' r); *pos gets
 * each one's column (m values). 0, or -1 when out of memory. */
static int block_alloc(km_kbank *B, int64_t *pos)
{
    int64_t n = 0;
    for (int k = 0; k < B->m; k++)
        pos[k] = in_block(B, k) ? n++ : -1;
    if (n > 0 && !(B->block = malloc((size_t)n * (size_t)B->l * sizeof *B->block)))
        return -1;
    return 0;
}

/* ---- building ---- */


static int cmp_subset(const km_basis *a, const km_basis *b)
{
    if (a->nfeat != b->nfeat)
        return a->nfeat < b->nfeat ? -1 : 1;
    for (int32_t t = 0; t < a->nfeat; t++)
        if (a->feat[t] != b->feat[t])
            return a->feat[t] < b->feat[t] ? -1 : 1;
    return 0;
}

static int cmp_kernel_index(const void *pa, const void *pb, void *ctx)
{
    const km_basis_set *basis = ctx;
    int a = *(const int *)pa, b = *(const int *)pb;
    int c = cmp_subset(&basis->b[a], &basis->b[b]);
    return c ? c : (a > b) - (a < b);
}

typedef struct vrow {
    double v;
    int64_t i;
} vrow;

static int cmp_vrow(const void *pa, const void *pb)
{
    const vrow *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}


static int cmp_row(const void *pa, const void *pb, void *ctx)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    const km_problem *P = ctx;
    int64_t na = P->row_ptr[a + 1] - P->row_ptr[a], nb = P->row_ptr[b + 1] - P->row_ptr[b];
    const int32_t *ia = P->index + P->row_ptr[a], *ib = P->index + P->row_ptr[b];
    const double *va = P->value + P->row_ptr[a], *vb = P->value + P->row_ptr[b];
    for (int64_t t = 0; t < na && t < nb; t++) {
        if (ia[t] != ib[t])
            return ia[t] < ib[t] ? -1 : 1;
        if (va[t] != vb[t])
            return va[t] < vb[t] ? -1 : 1;
    }
    if (na != nb)
        return na < nb ? -1 : 1;
    return (a > b) - (a < b);
}

static int same_row(const km_problem *P, int64_t a, int64_t b)
{
    int64_t na = P->row_ptr[a + 1] - P->row_ptr[a], nb = P->row_ptr[b + 1] - P->row_ptr[b];
    return na == nb &&
           !memcmp(P->index + P->row_ptr[a], P->index + P->row_ptr[b], (size_t)na * 4) &&
           !memcmp(P->value + P->row_ptr[a], P->value + P->row_ptr[b], (size_t)na * 8);
}

/* What a group is built from: one feature's values (xs, u of them) or the distinct rows. */
typedef struct gsrc {
    double *xs;        /* single feature: the u distinct values, ascending */
    km_problem *rows;  /* otherwise: the u distinct projected rows */
} gsrc;

/* The single-feature columns of X, transposed once (CSC). */
typedef struct csc {
    int64_t *ptr;
    int64_t *row;
    double *val;
} csc;

static int csc_build(const km_problem *X, csc *T)
{
    int32_t n = X->n;
    T->ptr = calloc((size_t)n + 2, sizeof *T->ptr);
    T->row = malloc((size_t)(X->nnz > 0 ? X->nnz : 1) * sizeof *T->row);
    T->val = malloc((size_t)(X->nnz > 0 ? X->nnz : 1) * sizeof *T->val);
    if (!T->ptr || !T->row || !T->val)
        return -1;
    for (int64_t p = 0; p < X->nnz; p++)
        T->ptr[X->index[p] + 2]++;
    for (int32_t j = 0; j < n; j++)
        T->ptr[j + 2] += T->ptr[j + 1];
    for (int64_t i = 0; i < X->l; i++)
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            int64_t q = T->ptr[X->index[p] + 1]++;
            T->row[q] = i;
            T->val[q] = X->value[p];
        }
    return 0;
}

static void csc_free(csc *T)
{
    free(T->ptr);
    free(T->row);
    free(T->val);
}

/* Renumbers the distinct values in the order rows first show them (so a group of distinct
 * rows gets map[i] = i), permuting xs or rep along; sets G->ident. 0, or -1 when out of
 * memory. */
static int first_appearance(kgroup *G, int64_t l, double *xs, int64_t *rep)
{
    int64_t u = G->u, next = 0;
    int32_t *id = malloc((size_t)(u > 0 ? u : 1) * sizeof *id);
    int64_t *old = malloc((size_t)(u > 0 ? u : 1) * 8);
    if (!id || !old) {
        free(id);
        free(old);
        return -1;
    }
    memcpy(old, xs ? (void *)xs : (void *)rep, (size_t)u * 8);
    for (int64_t a = 0; a < u; a++)
        id[a] = -1;
    G->ident = u == l;
    for (int64_t i = 0; i < l; i++) {
        int32_t a = G->map[i];
        if (id[a] < 0) {
            if (xs)
                memcpy(&xs[next], &old[a], 8);
            else
                rep[next] = old[a];
            id[a] = (int32_t)next++;
        }
        G->map[i] = id[a];
        G->ident &= G->map[i] == i;
    }
    free(id);
    free(old);
    return 0;
}

/* Distinct values of feature f: G->map, G->u, src->xs. */
static int group_feature(const km_problem *X, const csc *T, int32_t f, kgroup *G, gsrc *src)
{
    int64_t l = X->l;
    vrow *v = malloc((size_t)(l > 0 ? l : 1) * sizeof *v);
    G->map = malloc((size_t)(l > 0 ? l : 1) * sizeof *G->map);
    src->xs = malloc((size_t)(l > 0 ? l : 1) * sizeof *src->xs);
    if (!v || !G->map || !src->xs) {
        free(v);
        return -1;
    }
    for (int64_t i = 0; i < l; i++)
        v[i] = (vrow){0, i};
    if (f < X->n)
        for (int64_t q = T->ptr[f]; q < T->ptr[f + 1]; q++)
            v[T->row[q]].v = T->val[q];
    qsort(v, (size_t)l, sizeof *v, cmp_vrow);
    int64_t u = 0;
    for (int64_t t = 0; t < l; t++) {
        if (t == 0 || v[t].v != v[t - 1].v)
            src->xs[u++] = v[t].v;
        G->map[v[t].i] = (int32_t)(u - 1);
    }
    G->u = u;
    free(v);
    return first_appearance(G, l, src->xs, NULL);
}

/* Distinct rows of X restricted to b's features: G->map, G->u, src->rows. */
static int group_rows(const km_problem *X, const km_basis *b, kgroup *G, gsrc *src,
                      km_error *err)
{
    int64_t l = X->l;
    km_basis all = {b->kernel, 0, NULL};
    km_problem *P = km_basis_project(b, X, NULL, l, err);
    int64_t *idx = malloc((size_t)(l > 0 ? l : 1) * sizeof *idx);
    int64_t *rep = malloc((size_t)(l > 0 ? l : 1) * sizeof *rep);
    G->map = malloc((size_t)(l > 0 ? l : 1) * sizeof *G->map);
    if (!P || !idx || !rep || !G->map) {
        km_problem_free(P);
        free(idx);
        free(rep);
        if (P)
            km_error_nomem(err, "kernel bank groups");
        return err->code;
    }
    for (int64_t i = 0; i < l; i++)
        idx[i] = i;
    qsort_r(idx, (size_t)l, sizeof *idx, cmp_row, P);
    int64_t u = 0;
    for (int64_t t = 0; t < l; t++) {
        if (t == 0 || !same_row(P, idx[t], idx[t - 1]))
            rep[u++] = idx[t];
        G->map[idx[t]] = (int32_t)(u - 1);
    }
    G->u = u;
    if (first_appearance(G, l, NULL, rep)) {
        km_problem_free(P);
        free(idx);
        free(rep);
        return km_error_nomem(err, "kernel bank groups");
    }
    src->rows = km_basis_project(&all, P, rep, u, err);
    km_problem_free(P);
    free(idx);
    free(rep);
    return src->rows ? KM_OK : err->code;
}

static int psd_kernel(const km_kernel *k)
{
    switch (k->type) {
    case KM_KERNEL_SIGMOID:
        return 0;
    case KM_KERNEL_POLY:
        return k->coef0 >= 0;
    default:
        return 1;
    }
}

/* The exact factor of a linear or polynomial kernel on one feature: (gamma x y + r)^d =
 * sum_t binom(d, t) gamma^t r^(d-t) (x y)^t, one column per non-zero term; NULL if the
 * kernel has no such form. */
static double *exact_factor(const km_kernel *k, const double *xs, int64_t u, int64_t *rank)
{
    int d;
    double gamma, r;
    if (k->type == KM_KERNEL_LINEAR) {
        d = 1, gamma = 1, r = 0;
    } else if (k->type == KM_KERNEL_POLY && k->coef0 >= 0) {
        d = k->degree, gamma = k->gamma, r = k->coef0;
    } else {
        return NULL;
    }
    double *G = malloc((size_t)u * (size_t)(d + 1) * sizeof *G);
    if (!G)
        return NULL;
    int64_t cols = 0;
    double binom = 1;
    for (int t = 0; t <= d; t++) {
        double w = binom * pow(gamma, t) * pow(r, d - t);
        binom = binom * (d - t) / (t + 1);
        if (w == 0)
            continue;
        double sw = sqrt(w);
        for (int64_t a = 0; a < u; a++)
            G[a + cols * u] = sw * pow(xs[a], t);
        cols++;
    }
    *rank = cols;
    return G;
}

/* Scratch of one thread for the factors: a cap x cap matrix, pivots and dpstrf's work,
 * grown on demand. */
typedef struct kscratch {
    int64_t cap;
    double *A;
    lapack_int *piv;
    double *work;
} kscratch;

static void scratch_free(kscratch *ws)
{
    free(ws->A);
    free(ws->piv);
    free(ws->work);
    *ws = (kscratch){0};
}

/* Room for a u x u factorization; 0, or -1 when out of memory (the scratch then empty:
 * the caller keeps the kernel dense, as without memory for a factor). */
static int scratch_reserve(kscratch *ws, int64_t u)
{
    if (u <= ws->cap)
        return 0;
    scratch_free(ws);
    ws->A = malloc((size_t)u * (size_t)u * sizeof *ws->A);
    ws->piv = malloc((size_t)u * sizeof *ws->piv);
    ws->work = malloc(2 * (size_t)u * sizeof *ws->work);
    if (ws->A && ws->piv && ws->work) {
        ws->cap = u;
        return 0;
    }
    scratch_free(ws);
    return -1;
}

/* The columns M[a + b u] = K(xs[a], xs[b]) of a kernel on one feature's distinct values for
 * a >= from(b) (from(b) = b: the lower triangle; 0: the whole matrix), by km_kernel_1d
 * (km_kernel_eval's bits, and K(x, y) = K(y, x) bit for bit). Returns 0, or -1 when a value
 * is not finite (never for rbf and laplacian: exp of a finite x <= 0). */
static int fill_1d(const km_kernel *k, const double *xs, int64_t u, int lower, double *M)
{
    int check = k->type != KM_KERNEL_RBF && k->type != KM_KERNEL_LAPLACIAN;
    double bad = 0;
    for (int64_t b = 0; b < u; b++) {
        int64_t a0 = lower ? b : 0;
        double *col = M + a0 + b * u;
        km_kernel_1d(k, xs + a0, u - a0, xs[b], col);
        for (int64_t a = 0; check && a < u - a0; a++)
            bad += col[a] - col[a]; /* NaN when a value is infinite or NaN */
    }
    return bad == 0 ? 0 : -1;
}

/* K_u of a kernel on one feature, packed upper: column b is K(xs[a], xs[b]), a <= b (the
 * values of fill_1d: km_kernel_1d is symmetric bit for bit). */
static double *packed_1d(const km_kernel *k, const double *xs, int64_t u, km_error *err)
{
    double *P = malloc((size_t)(u * (u + 1) / 2 > 0 ? u * (u + 1) / 2 : 1) * sizeof *P);
    if (!P) {
        km_error_nomem(err, "kernel bank matrix");
        return NULL;
    }
    for (int64_t b = 0; b < u; b++)
        km_kernel_1d(k, xs, b + 1, xs[b], P + pk(0, b));
    return P;
}

/* K_u of a kernel on several features (dense, symmetric, column-major). */
static double *dense_matrix(const km_kernel *k, const gsrc *src, int64_t u, km_error *err)
{
    double *M = malloc((size_t)u * (size_t)u * sizeof *M);
    if (!M) {
        km_error_nomem(err, "kernel bank matrix");
        return NULL;
    }
    km_kdata *D = km_kdata_new(src->rows, NULL, u, err);
    if (!D || km_kernel_block(k, D, NULL, u, D, NULL, u, M, 1, err) != KM_OK) {
        km_kdata_free(D);
        free(M);
        return NULL;
    }
    km_kdata_free(D);
    for (int64_t b = 0; b < u; b++)
        for (int64_t a = 0; a < b; a++)
            M[b + a * u] = M[a + b * u];
    return M;
}

/* Pivoted Cholesky K_u = G G' (LAPACK dpstrf, its default tolerance) of the lower triangle
 * in ws->A, overwritten; G when the numerical rank is below u / 3, else NULL. */
/*
 * A certificate, far cheaper than dpstrf itself, that dpstrf would run past u/3 steps (so
 * that the kernel ends dense) on the lower triangle A (u x u): with S every third value
 * (q = ceil(u/3) of them), if K_SS - tau I is positive definite (dpotrf succeeds), then
 * after any j < q pivoted steps the Schur complement restricted to S (K_SS less a rank-j
 * term) keeps q - j eigenvalues >= tau, so a diagonal >= tau / q: with tau = 1e3 q u eps
 * max K_aa, 1e3 times dpstrf's stop u eps max K_aa (its rounding, j eps max K_aa, and
 * dpotrf's, q^2 eps max K_aa, far below), so dpstrf finds rank >= q.
 * 1 when certified; 0 otherwise (or out of memory: dpstrf decides, as before).
 */
static int surely_dense(const double *A, int64_t u)
{
    int64_t q = (u + 2) / 3;
    if (u < 60)
        return 0;
    double dmax = 0;
    for (int64_t a = 0; a < u; a++)
        dmax = A[a + a * u] > dmax ? A[a + a * u] : dmax;
    if (!(dmax > 0) || !isfinite(dmax))
        return 0;
    double *W = malloc((size_t)q * (size_t)q * sizeof *W),
           tau = 1e3 * (double)q * (double)u * DBL_EPSILON * dmax;
    if (!W)
        return 0;
    for (int64_t j = 0; j < q; j++) /* the lower triangle of K_SS */
        for (int64_t i = j; i < q; i++)
            W[i + j * q] = A[3 * i + 3 * j * u] - (i == j ? tau : 0);
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)q, W,
                                          (lapack_int)q);
    free(W);
    return info == 0 && (q - 1) * 3 < u && 3 * q >= u;
}

static double *factor_lower(kscratch *ws, int64_t u, int64_t *rank)
{
    double *A = ws->A;
    if (surely_dense(A, u))
        return NULL; /* what dpstrf would conclude after u^3/3 flops */
    lapack_int r = 0;
    lapack_int info = LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)u, A,
                                          (lapack_int)u, ws->piv, &r, -1.0, ws->work);
    double *G = NULL;
    if (info >= 0 && r * 3 < u) {
        G = calloc((size_t)u * (size_t)(r > 0 ? r : 1), sizeof *G);
        if (G)
            for (lapack_int t = 0; t < r; t++)
                for (lapack_int i = t; i < (lapack_int)u; i++)
                    G[(ws->piv[i] - 1) + t * u] = A[i + t * u];
        *rank = r;
    }
    return G;
}

/* factor_lower of a dense K_u (copied into the scratch); NULL when u < 6 or a value is not
 * finite as well. */
static double *cholesky_factor(const double *M, int64_t u, kscratch *ws, int64_t *rank)
{
    if (u < 6 || scratch_reserve(ws, u))
        return NULL;
    double bad = 0;
    for (int64_t b = 0; b < u; b++) { /* the lower triangle is all dpstrf reads */
        const double *col = M + b + b * u;
        memcpy(ws->A + b + b * u, col, (size_t)(u - b) * sizeof *M);
        for (int64_t a = 0; a < u - b; a++)
            bad += col[a] - col[a]; /* NaN when a value is infinite or NaN */
    }
    return bad == 0 ? factor_lower(ws, u, rank) : NULL;
}

/* Kernel b on its group's u distinct values: an exact factor (linear, polynomial on one
 * feature), a pivoted Cholesky factor of low rank, or the dense K_u. A PSD kernel on one
 * feature is factored from its lower triangle made in the scratch, and made dense (written
 * once) only when its rank is too high. */
static int build_entry(const km_basis *b, const gsrc *src, int64_t u, kentry *E, kscratch *ws,
                       km_error *err)
{
    E->r = -1;
    if (src->xs && (E->M = exact_factor(&b->kernel, src->xs, u, &E->r)) != NULL)
        return KM_OK;
    E->r = -1;
    int psd = psd_kernel(&b->kernel);
    if (src->xs && psd && u >= 6 && !scratch_reserve(ws, u)) {
        if (!fill_1d(&b->kernel, src->xs, u, 1, ws->A) &&
            (E->M = factor_lower(ws, u, &E->r)) != NULL)
            return KM_OK;
        E->r = -1;
        psd = 0; /* too high a rank (or not finite): dense, as below without a factor */
    }
    if (src->xs) { /* one feature: dense (a factor, when there was one, was taken above) */
        E->M = packed_1d(&b->kernel, src->xs, u, err);
        return E->M ? KM_OK : err->code;
    }
    double *M = dense_matrix(&b->kernel, src, u, err);
    if (!M)
        return err->code;
    double *G = psd ? cholesky_factor(M, u, ws, &E->r) : NULL;
    if (G) {
        E->M = G;
    } else {
        E->r = -1;
        E->M = pack_upper(M, u);
    }
    free(M);
    if (!E->M)
        return km_error_nomem(err, "kernel bank matrix");
    return KM_OK;
}

km_kbank *km_kbank_new(const km_problem *X, const km_basis_set *basis, int threads,
                       km_error *err)
{
    int m = basis->m;
    /* the single-feature columns are indexed by feature: the data must justify them */
    if (km_limit_features(X, NULL, 0, (int64_t)X->n + 2, 1, "the kernel bank's columns", err))
        return NULL;
    int *order = malloc((size_t)(m > 0 ? m : 1) * sizeof *order);
    if (!order) {
        km_error_nomem(err, "kernel bank");
        return NULL;
    }
    for (int k = 0; k < m; k++)
        order[k] = k;
    qsort_r(order, (size_t)m, sizeof *order, cmp_kernel_index, (void *)basis);
    int ng = 0;
    for (int t = 0; t < m; t++)
        if (t == 0 || cmp_subset(&basis->b[order[t]], &basis->b[order[t - 1]]))
            ng++;
    km_kbank *B = bank_alloc(X->l, m, ng, err);
    gsrc *src = calloc((size_t)(ng > 0 ? ng : 1), sizeof *src);
    csc T = {0};
    if (!B || !src || csc_build(X, &T)) {
        free(order);
        free(src);
        csc_free(&T);
        if (B)
            km_error_nomem(err, "kernel bank");
        km_kbank_free(B);
        return NULL;
    }
    memcpy(B->order, order, (size_t)m * sizeof *order);
    free(order);
    for (int t = 0, g = -1; t < m; t++) {
        if (t == 0 || cmp_subset(&basis->b[B->order[t]], &basis->b[B->order[t - 1]]))
            B->grp[++g].first = t;
        B->grp[g].count++;
        B->ent[B->order[t]].g = g;
    }

    int failed = 0;
    km_error first = {0};
#pragma omp parallel for schedule(dynamic) num_threads(threads > 1 ? threads : 1)
    for (int g = 0; g < ng; g++) {
        if (failed)
            continue;
        km_error e = {0};
        const km_basis *b = &basis->b[B->order[B->grp[g].first]];
        int rc = b->nfeat == 1 ? (group_feature(X, &T, b->feat[0], &B->grp[g], &src[g])
                                      ? km_error_nomem(&e, "kernel bank groups")
                                      : KM_OK)
                               : group_rows(X, b, &B->grp[g], &src[g], &e);
        if (rc != KM_OK) {
#pragma omp critical(kbank_error)
            if (!failed++)
                first = e;
        }
    }
#pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        kscratch ws = {0};
#pragma omp for schedule(dynamic)
        for (int t = 0; t < m; t++) {
            if (failed)
                continue;
            km_error e = {0};
            int k = B->order[t];
            kentry *E = &B->ent[k];
            if (build_entry(&basis->b[k], &src[E->g], B->grp[E->g].u, E, &ws, &e) != KM_OK) {
#pragma omp critical(kbank_error)
                if (!failed++)
                    first = e;
            }
        }
        scratch_free(&ws);
    }
    for (int g = 0; g < ng; g++) {
        free(src[g].xs);
        km_problem_free(src[g].rows);
    }
    free(src);
    csc_free(&T);
    int64_t *pos = failed ? NULL : malloc((size_t)(m > 0 ? m : 1) * sizeof *pos);
    if (!failed && (!pos || block_alloc(B, pos))) {
        failed = 1;
        km_error_nomem(&first, "kernel bank");
    }
    for (int k = 0; k < m && !failed; k++) /* the rank-one factors into the block */
        if (pos[k] >= 0) {
            double *v = B->block + pos[k] * B->l;
            memcpy(v, B->ent[k].M, (size_t)B->l * sizeof *v);
            free(B->ent[k].M);
            B->ent[k].M = v;
            B->ent[k].shared = 1;
        }
    free(pos);
    if (!failed && set_norms(B)) {
        failed = 1;
        km_error_nomem(&first, "kernel bank");
    }
    if (failed) {
        *err = first;
        km_kbank_free(B);
        return NULL;
    }
    return B;
}

/* Rows 0..l-1 in order and every group's values numbered in row order (as built): the
 * slice would copy B's matrices unchanged. */
static int whole(const km_kbank *B, const int64_t *rows, int64_t n)
{
    if (n != B->l)
        return 0;
    for (int64_t j = 0; j < n; j++)
        if (rows[j] != j)
            return 0;
    for (int g = 0; g < B->ng; g++) {
        int64_t next = 0;
        for (int64_t j = 0; j < n; j++) {
            if (B->grp[g].map[j] > next)
                return 0;
            next += B->grp[g].map[j] == next;
        }
        if (next != B->grp[g].u)
            return 0;
    }
    return 1;
}

/* K_u = G G' of a factor no longer worth it (upper by dsyrk), packed. */
static double *densify(const double *G, int64_t u, int64_t r)
{
    double *M = malloc((size_t)u * (size_t)u * sizeof *M);
    if (!M)
        return NULL;
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, (blasint)u, (blasint)r, 1.0, G,
                (blasint)u, 0.0, M, (blasint)u);
    double *P = pack_upper(M, u);
    free(M);
    return P;
}

km_kbank *km_kbank_slice(const km_kbank *B, const int64_t *rows, int64_t n, km_error *err)
{
    if (whole(B, rows, n)) {
        /* B's own matrices shared (not copied: 70 MB for the paper set on 500 rows); only
         * the factors the slice makes dense are made */
        km_kbank *S = bank_alloc(n, B->m, B->ng, err);
        if (!S)
            return NULL;
        memcpy(S->order, B->order, (size_t)B->m * sizeof *B->order);
        memcpy(S->ent, B->ent, (size_t)B->m * sizeof *B->ent);
        int fail = 0;
        for (int k = 0; k < B->m; k++) {
            kentry *F = &S->ent[k];
            int64_t u = B->grp[F->g].u;
            F->shared = 1;
            if (F->r > 1 && F->r * 3 >= u) {
                F->M = densify(B->ent[k].M, u, F->r);
                F->r = -1;
                F->shared = 0;
                fail |= !F->M;
            }
        }
        for (int g = 0; g < B->ng; g++) {
            S->grp[g] = B->grp[g];
            S->grp[g].map = malloc((size_t)(n > 0 ? n : 1) * sizeof *S->grp[g].map);
            if (!S->grp[g].map)
                fail = 1;
            else
                memcpy(S->grp[g].map, B->grp[g].map, (size_t)n * sizeof *S->grp[g].map);
        }
        if (fail || set_norms(S)) {
            km_kbank_free(S);
            km_error_nomem(err, "kernel bank slice");
            return NULL;
        }
        return S;
    }
    km_kbank *S = bank_alloc(n, B->m, B->ng, err);
    int64_t umax = 0;
    for (int g = 0; g < B->ng; g++)
        umax = B->grp[g].u > umax ? B->grp[g].u : umax;
    int64_t *newidx = malloc((size_t)(umax > 0 ? umax : 1) * sizeof *newidx);
    int64_t *sel = malloc((size_t)(umax > 0 ? umax : 1) * sizeof *sel);
    int64_t *pos = malloc((size_t)(B->m > 0 ? B->m : 1) * sizeof *pos);
    if (!S || !newidx || !sel || !pos)
        goto nomem;
    memcpy(S->order, B->order, (size_t)B->m * sizeof *B->order);
    /* the groups' maps first (which kernels go to the block depends on them) */
    for (int g = 0; g < B->ng; g++) {
        const kgroup *G = &B->grp[g];
        kgroup *H = &S->grp[g];
        H->first = G->first;
        H->count = G->count;
        H->map = malloc((size_t)(n > 0 ? n : 1) * sizeof *H->map);
        if (!H->map)
            goto nomem;
        for (int64_t a = 0; a < G->u; a++)
            newidx[a] = -1;
        int64_t u = 0;
        for (int64_t j = 0; j < n; j++) {
            int32_t a = G->map[rows[j]];
            if (newidx[a] < 0)
                newidx[a] = u++;
            H->map[j] = (int32_t)newidx[a];
        }
        H->u = u;
        H->ident = u == n;
        for (int64_t j = 0; j < n && H->ident; j++)
            H->ident = H->map[j] == j;
        for (int t = G->first; t < G->first + G->count; t++) {
            int k = B->order[t];
            S->ent[k].g = g;
            /* a factor of rank <= 1 never gets denser; others while r < u / 3 */
            S->ent[k].r = B->ent[k].r >= 0 && (B->ent[k].r <= 1 || B->ent[k].r * 3 < u)
                              ? B->ent[k].r : -1;
        }
    }
    if (block_alloc(S, pos))
        goto nomem;
    for (int g = 0; g < B->ng; g++) {
        const kgroup *G = &B->grp[g];
        const kgroup *H = &S->grp[g];
        int64_t u = H->u, Gu = G->u;
        for (int64_t j = 0; j < n; j++)
            sel[H->map[j]] = G->map[rows[j]];
        for (int t = G->first; t < G->first + G->count; t++) {
            int k = B->order[t];
            const kentry *E = &B->ent[k];
            kentry *F = &S->ent[k];
            if (F->r >= 0) {
                F->shared = pos[k] >= 0;
                F->M = F->shared ? S->block + pos[k] * n
                                 : malloc((size_t)u * (size_t)(F->r > 0 ? F->r : 1) *
                                          sizeof *F->M);
                if (!F->M)
                    goto nomem;
                for (int64_t c = 0; c < F->r; c++)
                    for (int64_t a = 0; a < u; a++)
                        F->M[a + c * u] = E->M[sel[a] + c * Gu];
                continue;
            }
            if (E->r < 0) {
                F->M = malloc((size_t)(u * (u + 1) / 2 > 0 ? u * (u + 1) / 2 : 1) *
                              sizeof *F->M);
                if (!F->M)
                    goto nomem;
                for (int64_t b = 0; b < u; b++)
                    for (int64_t a = 0; a <= b; a++)
                        F->M[pk(a, b)] = pk_get(E->M, sel[a], sel[b]);
            } else {
                /* a factor no longer worth it on fewer values: K_u = G G' (packed) */
                double *Gs = malloc((size_t)u * (size_t)(E->r > 0 ? E->r : 1) * sizeof *Gs);
                if (!Gs)
                    goto nomem;
                for (int64_t c = 0; c < E->r; c++)
                    for (int64_t a = 0; a < u; a++)
                        Gs[a + c * u] = E->M[sel[a] + c * Gu];
                F->M = densify(Gs, u, E->r);
                free(Gs);
                if (!F->M)
                    goto nomem;
            }
        }
    }
    free(newidx);
    free(sel);
    free(pos);
    newidx = NULL;
    sel = NULL;
    pos = NULL;
    if (set_norms(S))
        goto nomem;
    return S;
nomem:
    free(newidx);
    free(sel);
    free(pos);
    km_kbank_free(S);
    km_error_nomem(err, "kernel bank slice");
    return NULL;
}

/* ---- products ---- */

/* vu = K_u cu for entry E (u values). tmp holds r values for factors. */
static void entry_apply(const kentry *E, int64_t u, double alpha, const double *cu,
                        double beta, double *vu, double *tmp)
{
    if (E->r < 0) {
        /* packed: half the bytes of a full matrix, read in one stream (31 dense 500 x 500
         * kernels of the paper set do not stay in cache from one pass to the next) */
        cblas_dspmv(CblasColMajor, CblasUpper, (blasint)u, alpha, E->M, cu, 1, beta, vu, 1);
    } else if (E->r == 0) {
        if (beta == 0)
            memset(vu, 0, (size_t)u * sizeof *vu);
    } else if (E->r == 1) {
        /* one column (linear RLS2: 16,063 of them a pass): no BLAS call overhead */
        const double *G = E->M;
        double t = 0;
        for (int64_t a = 0; a < u; a++)
            t += G[a] * cu[a];
        t *= alpha;
        if (beta == 0)
            for (int64_t a = 0; a < u; a++)
                vu[a] = t * G[a];
        else
            for (int64_t a = 0; a < u; a++)
                vu[a] = beta * vu[a] + t * G[a];
    } else {
        cblas_dgemv(CblasColMajor, CblasTrans, (blasint)u, (blasint)E->r, 1.0, E->M,
                    (blasint)u, cu, 1, 0.0, tmp, 1);
        cblas_dgemv(CblasColMajor, CblasNoTrans, (blasint)u, (blasint)E->r, alpha, E->M,
                    (blasint)u, tmp, 1, beta, vu, 1);
    }
}

static int64_t max_u(const km_kbank *B, int64_t *rmax)
{
    int64_t umax = 1;
    *rmax = 1;
    for (int g = 0; g < B->ng; g++)
        umax = B->grp[g].u > umax ? B->grp[g].u : umax;
    for (int k = 0; k < B->m; k++)
        *rmax = B->ent[k].r > *rmax ? B->ent[k].r : *rmax;
    return umax;
}

int km_kbank_products(const km_kbank *B, const double *c, const unsigned char *active,
                      double *V, int threads, km_error *err)
{
    int64_t l = B->l, rmax, umax = max_u(B, &rmax);
    int nt = threads > 1 ? threads : 1, failed = 0;
    int *list = malloc((size_t)(B->m > 0 ? B->m : 1) * sizeof *list), n = 0;
    if (!list)
        return km_error_nomem(err, "kernel products");
    for (int t = 0; t < B->m; t++)
        if (!active || active[B->order[t]])
            list[n++] = B->order[t];
#pragma omp parallel num_threads(nt)
    {
        /* per thread: the coefficients summed per distinct value of the last group seen */
        double *cu = malloc((size_t)(2 * umax + rmax) * sizeof *cu), *vu = cu + umax,
               *tmp = vu + umax;
        int g_cu = -1;
        if (!cu) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic)
        for (int t = 0; t < n; t++) {
            if (!cu)
                continue;
            int k = list[t];
            const kentry *E = &B->ent[k];
            const kgroup *G = &B->grp[E->g];
            double *v = V + (size_t)k * (size_t)l;
            if (G->ident) {
                entry_apply(E, l, 1.0, c, 0.0, v, tmp);
                continue;
            }
            if (g_cu != E->g) {
                memset(cu, 0, (size_t)G->u * sizeof *cu);
                for (int64_t i = 0; i < l; i++)
                    cu[G->map[i]] += c[i];
                g_cu = E->g;
            }
            entry_apply(E, G->u, 1.0, cu, 0.0, vu, tmp);
            for (int64_t i = 0; i < l; i++)
                v[i] = vu[G->map[i]];
        }
        free(cu);
    }
    free(list);
    return failed ? km_error_nomem(err, "kernel products") : KM_OK;
}

int km_kbank_rank_one(const km_kbank *B)
{
    for (int k = 0; k < B->m; k++)
        if (B->ent[k].r < 0 || B->ent[k].r > 1)
            return 0;
    return 1;
}

int km_kbank_vectors(const km_kbank *B, const double **x, double **own, km_error *err)
{
    int64_t l = B->l, n = 0;
    *own = NULL;
    if (!km_kbank_rank_one(B))
        return km_error_set(err, KM_EINTERNAL, "kernel vectors of a bank not of rank one");
    for (int k = 0; k < B->m; k++)
        n += !(B->grp[B->ent[k].g].ident && B->ent[k].r == 1);
    if (n > 0 && !(*own = malloc((size_t)n * (size_t)(l > 0 ? l : 1) * sizeof **own)))
        return km_error_nomem(err, "kernel vectors");
    double *next = *own;
    for (int k = 0; k < B->m; k++) {
        const kentry *E = &B->ent[k];
        const kgroup *G = &B->grp[E->g];
        if (G->ident && E->r == 1) {
            x[k] = E->M;
            continue;
        }
        for (int64_t i = 0; i < l; i++)
            next[i] = E->r == 1 ? E->M[G->map[i]] : 0;
        x[k] = next;
        next += l;
    }
    return KM_OK;
}

int km_kbank_combine(const km_kbank *B, const double *w, double *K, km_error *err)
{
    int64_t l = B->l, rmax, umax = max_u(B, &rmax);
    double *Ku = malloc((size_t)umax * (size_t)umax * sizeof *Ku);
    if (!Ku)
        return km_error_nomem(err, "combined kernel");
    for (int g = 0; g < B->ng; g++) {
        const kgroup *G = &B->grp[g];
        int64_t u = G->u;
        /* distinct rows: added straight into K; otherwise summed on the distinct values */
        double *T = G->ident ? K : Ku;
        int any = 0;
        for (int t = G->first; t < G->first + G->count; t++) {
            int k = B->order[t];
            const kentry *E = &B->ent[k];
            if (w[k] == 0 || E->r == 0)
                continue;
            if (!any && !G->ident)
                memset(Ku, 0, (size_t)u * (size_t)u * sizeof *Ku);
            any = 1;
            if (E->r < 0)
                for (int64_t b = 0; b < u; b++)
                    cblas_daxpy((blasint)(b + 1), w[k], E->M + pk(0, b), 1, T + b * u, 1);
            else
                cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, (blasint)u,
                            (blasint)E->r, w[k], E->M, (blasint)u, 1.0, T, (blasint)u);
        }
        if (!any || G->ident)
            continue;
        for (int64_t b = 0; b < u; b++) /* mirror, then gather column by column */
            for (int64_t a = 0; a < b; a++)
                Ku[b + a * u] = Ku[a + b * u];
        for (int64_t j = 0; j < l; j++) {
            const double *Kub = Ku + (int64_t)G->map[j] * u;
            double *Kj = K + j * l;
            for (int64_t i = 0; i <= j; i++)
                Kj[i] += Kub[G->map[i]];
        }
    }
    free(Ku);
    return KM_OK;
}

int64_t km_kbank_lowrank(const km_kbank *B, const double *w, int64_t rmax, double *F)
{
    int64_t l = B->l, R = 0;
    for (int k = 0; k < B->m; k++) {
        if (w[k] == 0)
            continue;
        if (B->ent[k].r < 0)
            return -1;
        R += B->ent[k].r;
        if (R > rmax)
            return -1;
    }
    double *f = F;
    for (int k = 0; k < B->m; k++) {
        const kentry *E = &B->ent[k];
        const kgroup *G = &B->grp[E->g];
        if (w[k] == 0 || E->r == 0)
            continue;
        double a = sqrt(w[k]);
        for (int64_t c = 0; c < E->r; c++, f += l)
            for (int64_t i = 0; i < l; i++)
                f[i] = a * E->M[(G->ident ? i : G->map[i]) + c * G->u];
    }
    return R;
}

int km_kbank_cross(const km_kbank *B, const int64_t *rows_out, int64_t nout,
                   const int64_t *rows_in, int64_t nin, const double *w, const double *c,
                   double *out, km_error *err)
{
    int64_t rmax, umax = max_u(B, &rmax);
    double *buf = malloc((size_t)(2 * umax + rmax) * sizeof *buf);
    if (!buf)
        return km_error_nomem(err, "kernel cross products");
    double *cu = buf, *tu = buf + umax, *tmp = tu + umax;
    memset(out, 0, (size_t)nout * sizeof *out);
    for (int g = 0; g < B->ng; g++) {
        const kgroup *G = &B->grp[g];
        int any = 0;
        for (int t = G->first; t < G->first + G->count; t++) {
            int k = B->order[t];
            if (w[k] == 0)
                continue;
            if (!any) {
                memset(cu, 0, (size_t)G->u * sizeof *cu);
                for (int64_t i = 0; i < nin; i++)
                    cu[G->map[rows_in ? rows_in[i] : i]] += c[i];
            }
            entry_apply(&B->ent[k], G->u, w[k], cu, any ? 1.0 : 0.0, tu, tmp);
            any = 1;
        }
        if (any)
            for (int64_t j = 0; j < nout; j++)
                out[j] += tu[G->map[rows_out ? rows_out[j] : j]];
    }
    free(buf);
    return KM_OK;
}

/* ---- scaling ---- */

int km_scale_from_name(const char *name)
{
    static const char *names[] = {"trace", "class", "microarray", "none"};
    for (int r = 0; r < 4; r++)
        if (!strcmp(name, names[r]))
            return r;
    return -1;
}

const char *km_scale_name(km_scale_rule rule)
{
    static const char *names[] = {"trace", "class", "microarray", "none"};
    return names[rule];
}

/* sum_a cnt[a] K_aa and cnt' K_u cnt of one entry. */
static void entry_sums(const kentry *E, int64_t u, const double *cnt, double *diag,
                       double *all, double *tmp, double *tu)
{
    double s = 0;
    for (int64_t a = 0; a < u; a++) {
        if (cnt[a] == 0)
            continue;
        double kaa = 0;
        if (E->r < 0)
            kaa = E->M[pk(a, a)];
        else
            for (int64_t t = 0; t < E->r; t++)
                kaa += E->M[a + t * u] * E->M[a + t * u];
        s += cnt[a] * kaa;
    }
    *diag = s;
    entry_apply(E, u, 1.0, cnt, 0.0, tu, tmp);
    *all = cblas_ddot((blasint)u, cnt, 1, tu, 1);
}

int km_kbank_scales(const km_kbank *B, km_scale_rule rule, int center, const int64_t *rows,
                    int64_t n, const double *y, double *s, int *zero, km_error *err)
{
    if (!rows)
        n = B->l;
    int classes = rule == KM_SCALE_CLASS || rule == KM_SCALE_MICROARRAY;
    double np = 0, nm = 0;
    if (classes) {
        for (int64_t j = 0; j < n; j++)
            y[j] > 0 ? np++ : nm++;
        if (np == 0 || nm == 0)
            return km_error_set(err, KM_EUSAGE,
                                "scaling '%s' needs examples of both classes",
                                km_scale_name(rule));
    }
    int64_t rmax, umax = max_u(B, &rmax);
    double *buf = malloc((size_t)(4 * umax + rmax) * sizeof *buf);
    if (!buf)
        return km_error_nomem(err, "kernel scales");
    double *cp = buf, *cm = cp + umax, *tu = cm + umax, *ct = tu + umax, *tmp = ct + umax;
    *zero = 0;
    for (int g = 0; g < B->ng; g++) {
        const kgroup *G = &B->grp[g];
        int64_t u = G->u;
        memset(cp, 0, (size_t)u * sizeof *cp);
        memset(cm, 0, (size_t)u * sizeof *cm);
        for (int64_t j = 0; j < n; j++) {
            int64_t i = rows ? rows[j] : j;
            if (classes && y[j] <= 0)
                cm[G->map[i]] += 1;
            else
                cp[G->map[i]] += 1;
        }
        for (int64_t a = 0; a < u; a++)
            ct[a] = cp[a] + cm[a];
        for (int t = G->first; t < G->first + G->count; t++) {
            int k = B->order[t];
            const kentry *E = &B->ent[k];
            double dt, at, den, ref;
            entry_sums(E, u, ct, &dt, &at, tmp, tu);
            ref = fabs(dt) / (double)n; /* mean diagonal */
            if (rule == KM_SCALE_NONE) {
                s[k] = 1;
                continue;
            }
            if (rule == KM_SCALE_TRACE) {
                den = center ? dt - at / (double)n : dt;
                ref *= (double)n;
            } else {
                double dp, ap, dm, am;
                entry_sums(E, u, cp, &dp, &ap, tmp, tu);
                entry_sums(E, u, cm, &dm, &am, tmp, tu);
                /* within-class variances in feature space (thesis 4.4) */
                den = (dp / np - ap / (np * np)) + (dm / nm - am / (nm * nm));
            }
            if (!(den > 1e-12 * ref)) {
                s[k] = 0;
                (*zero)++;
            } else {
                s[k] = rule == KM_SCALE_MICROARRAY ? 1 / sqrt(den) : 1 / den;
            }
        }
    }
    free(buf);
    return KM_OK;
}

/* ||K~||_2 <= max row sum of |K~| (dense) or tr K~ (factor, positive semi-definite), with
 * K~ = P K_u P' over the rows: row sums and trace weigh value a by its count. */
static int set_norms(km_kbank *B)
{
    int64_t rmax, umax = max_u(B, &rmax);
    double *cnt = malloc((size_t)umax * sizeof *cnt);
    if (!cnt)
        return -1;
    for (int g = 0; g < B->ng; g++) {
        const kgroup *G = &B->grp[g];
        int64_t u = G->u;
        memset(cnt, 0, (size_t)u * sizeof *cnt);
        for (int64_t i = 0; i < B->l; i++)
            cnt[G->map[i]] += 1;
        for (int t = G->first; t < G->first + G->count; t++) {
            kentry *E = &B->ent[B->order[t]];
            double best = 0;
            if (E->r < 0) {
                for (int64_t b = 0; b < u; b++) {
                    double sum = 0;
                    const double *col = E->M + pk(0, b);
                    for (int64_t a = 0; a <= b; a++)
                        sum += cnt[a] * fabs(col[a]);
                    for (int64_t a = b + 1; a < u; a++)
                        sum += cnt[a] * fabs(E->M[pk(b, a)]);
                    best = sum > best ? sum : best;
                }
            } else {
                for (int64_t c = 0; c < E->r; c++)
                    for (int64_t a = 0; a < u; a++)
                        best += cnt[a] * E->M[a + c * u] * E->M[a + c * u];
            }
            E->norm = best;
        }
    }
    free(cnt);
    return 0;
}

void km_kbank_norms(const km_kbank *B, double *norm)
{
    for (int k = 0; k < B->m; k++)
        norm[k] = B->ent[k].norm;
}

void km_kbank_stats(const km_kbank *B, int64_t *doubles, int *dense, int *factored)
{
    *doubles = 0;
    *dense = *factored = 0;
    for (int k = 0; k < B->m; k++) {
        int64_t u = B->grp[B->ent[k].g].u;
        if (B->ent[k].r < 0) {
            *doubles += u * (u + 1) / 2;
            (*dense)++;
        } else {
            *doubles += u * B->ent[k].r;
            (*factored)++;
        }
    }
}
