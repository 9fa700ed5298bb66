/* testutil.h - random problems, problems from dense arrays or from the rows of another, a
 * dense reference K, the conjugates written out and the optimality check shared by the
 * solver tests. */
#ifndef KM_TESTUTIL_H
#define KM_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cd.h"
#include "kcd.h"
#include "kernel.h"
#include "kmtk.h"
#include "loss.h"
#include "problem.h"
#include "rng.h"

static inline double unif(km_rng *r) { return (double)(km_rng_next(r) >> 11) * 0x1p-53; }

/* A uniform number in [0, 1) from a 64-bit LCG (Knuth's MMIX constants) of state *s. */
static inline double lcg_unif(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* The "dual never decreases" tests: the dual D of a run capped one step later against the
 * last (*prev); a fall beyond rounding counts in *bad, its size in *worst. */
static inline void dual_step(double D, double *prev, int *bad, double *worst)
{
    if (D < *prev - 1e-12 * fabs(*prev)) {
        ++*bad;
        *worst = fmax(*worst, *prev - D);
    }
    *prev = D;
}

/* A problem of l rows and n features with room for nnz entries (row_ptr zeroed; the caller
 * fills the rows, y and P->nnz). */
static inline km_problem *problem_alloc(int64_t l, int32_t n, int64_t nnz)
{
    km_problem *P = calloc(1, sizeof *P);
    P->l = l;
    P->n = n;
    P->row_ptr = calloc((size_t)l + 1, sizeof *P->row_ptr);
    P->index = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *P->index);
    P->value = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *P->value);
    P->y = malloc((size_t)(l > 0 ? l : 1) * sizeof *P->y);
    return P;
}

/* A random sparse problem: l rows, n features, about density*n non-zeros per row. */
static inline km_problem *random_problem(int64_t l, int32_t n, double density, int classify,
                                  uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    km_problem *P = problem_alloc(l, n, l * n);
    double *wtrue = malloc((size_t)n * sizeof *wtrue);
    for (int32_t j = 0; j < n; j++)
        wtrue[j] = 2 * unif(&r) - 1;
    int64_t k = 0;
    for (int64_t i = 0; i < l; i++) {
        double z = 0;
        for (int32_t j = 0; j < n; j++) {
            if (unif(&r) >= density)
                continue;
            P->index[k] = j;
            P->value[k] = 2 * unif(&r) - 1;
            z += P->value[k] * wtrue[j];
            k++;
        }
        P->row_ptr[i + 1] = k;
        double noise = 0.3 * (2 * unif(&r) - 1);
        P->y[i] = classify ? (z + noise > 0 ? 1 : -1) : z + noise;
    }
    P->nnz = k;
    free(wtrue);
    return P;
}

/* A problem of l rows of n dense features (x row-major, every value stored) and labels y;
 * NULL when km_problem_from_csr refuses them (said on stdout). */
static inline km_problem *problem_from_dense(int64_t l, int32_t n, const double *x, const double *y)
{
    int64_t *rp = malloc((size_t)(l + 1) * sizeof *rp);
    int32_t *idx = malloc((size_t)(l * n + 1) * sizeof *idx);
    rp[0] = 0;
    for (int64_t i = 0; i < l; i++) {
        for (int32_t j = 0; j < n; j++)
            idx[i * n + j] = j;
        rp[i + 1] = (i + 1) * n;
    }
    km_problem *P = NULL;
    km_error err;
    if (km_problem_from_csr(l, n, rp, idx, x, y, NULL, &P, &err))
        printf("problem: %s\n", err.msg);
    free(rp);
    free(idx);
    return P;
}

/* The rows of P in order, row i times[i] times (0: left out). */
static inline km_problem *repeat_rows(const km_problem *P, const int *times)
{
    int64_t l = 0, nnz = 0;
    for (int64_t i = 0; i < P->l; i++) {
        l += times[i];
        nnz += times[i] * (P->row_ptr[i + 1] - P->row_ptr[i]);
    }
    int64_t *rp = malloc((size_t)(l + 1) * sizeof *rp), r = 0, t = 0;
    int32_t *idx = malloc((size_t)(nnz + 1) * sizeof *idx);
    double *val = malloc((size_t)(nnz + 1) * sizeof *val), *y = malloc((size_t)(l + 1) * sizeof *y);
    rp[0] = 0;
    for (int64_t i = 0; i < P->l; i++)
        for (int c = 0; c < times[i]; c++) {
            for (int64_t q = P->row_ptr[i]; q < P->row_ptr[i + 1]; q++, t++) {
                idx[t] = P->index[q];
                val[t] = P->value[q];
            }
            y[r] = P->y[i];
            rp[++r] = t;
        }
    km_problem *S = NULL;
    km_problem_from_csr(l, P->n, rp, idx, val, y, NULL, &S, NULL);
    free(rp);
    free(idx);
    free(val);
    free(y);
    return S;
}

/* The largest |difference| of two models' decision values (nw a row) on the rows of X,
 * relative to the largest |value| (at least 1). */
static inline double dec_diff(const km_model *A, const km_model *B, const km_problem *X, int nw)
{
    double *a = malloc((size_t)(X->l * nw) * sizeof *a), *b = malloc((size_t)(X->l * nw) * sizeof *b);
    km_model_decision_rows(A, X, NULL, X->l, a, 1, NULL);
    km_model_decision_rows(B, X, NULL, X->l, b, 1, NULL);
    double d = 0, s = 1;
    for (int64_t i = 0; i < X->l * nw; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    free(a);
    free(b);
    return d / s;
}

/* Optimality (2.8) in subdifferential form: -c_i in C dL(y_i, z_i), with tolerance tol. */
static inline int kkt_ok(km_loss loss, double y, double z, double c, double C, double eps, double tol)
{
    switch (loss) {
    case KM_LOSS_L1SVM: {
        double b = y * c, m = y * z;
        if (b < -tol || b > C + tol) return 0;
        if (m > 1 + tol) return fabs(b) <= tol;
        if (m < 1 - tol) return fabs(b - C) <= tol;
        return 1;
    }
    case KM_LOSS_L2SVM:
        return fabs(y * c - 2 * C * km_pos(1 - y * z)) <= tol;
    case KM_LOSS_RLS:
        return fabs(c - C * (y - z)) <= tol;
    case KM_LOSS_LOGISTIC:   /* -c = C dL = -C y / (1 + e^{y z}) */
        return fabs(y * c - C / (1 + exp(y * z))) <= tol;
    case KM_LOSS_RLA:
        if (fabs(c) > C + tol) return 0;
        if (y - z > tol) return fabs(c - C) <= tol;
        if (y - z < -tol) return fabs(c + C) <= tol;
        return 1;
    default: {
        double r = y - z;
        if (fabs(c) > C + tol) return 0;
        if (fabs(r) < eps - tol) return fabs(c) <= tol;
        if (r > eps + tol) return fabs(c - C) <= tol;
        if (r < -eps - tol) return fabs(c + C) <= tol;
        return 1;
    }
    }
}

/* Dense K over all rows of P by the reference evaluation. */
static inline double *dense_K(const km_kernel *k, const km_problem *P)
{
    int64_t l = P->l;
    double *K = malloc((size_t)(l * l) * sizeof *K), *sq = calloc((size_t)l, sizeof *sq);
    for (int64_t i = 0; i < l; i++)
        for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++)
            sq[i] += P->value[t] * P->value[t];
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < l; j++) {
            int64_t a = P->row_ptr[i], b = P->row_ptr[j];
            K[i * l + j] = km_kernel_eval(k, P->index + a, P->value + a, P->row_ptr[i + 1] - a,
                                          sq[i], P->index + b, P->value + b,
                                          P->row_ptr[j + 1] - b, sq[j]);
        }
    free(sq);
    return K;
}

/* C L*(y, -c/C) written out per loss (not km_loss_conj); +inf outside its domain. */
static inline double conj_by_hand(km_loss loss, double y, double c, double C, double eps)
{
    double tol = 1e-12 * C;
    switch (loss) {
    case KM_LOSS_L1SVM: return y * c < -tol || y * c > C + tol ? INFINITY : -y * c;
    case KM_LOSS_L2SVM: return y * c < -tol ? INFINITY : -y * c + c * c / (4 * C);
    case KM_LOSS_RLS: return -y * c + c * c / (2 * C);
    case KM_LOSS_RLA: return fabs(c) > C + tol ? INFINITY : -y * c;
    case KM_LOSS_LOGISTIC: {   /* C (a log a + (1 - a) log(1 - a)), a = y c/C in [0, 1] */
        double a = y * c / C;
        if (a < -tol / C || a > 1 + tol / C)
            return INFINITY;
        return C * ((a > 0 ? a * log(a) : 0) + (a < 1 ? (1 - a) * log(1 - a) : 0));
    }
    default: return fabs(c) > C + tol ? INFINITY : -y * c + eps * fabs(c);
    }
}

/* The loss L(y, z) written out per loss (not km_loss_value). */
static inline double loss_value_by_hand(km_loss loss, double y, double z, double eps)
{
    double m;
    switch (loss) {
    case KM_LOSS_L1SVM: m = 1 - y * z; return m > 0 ? m : 0;
    case KM_LOSS_L2SVM: m = 1 - y * z; return m > 0 ? m * m : 0;
    case KM_LOSS_RLS: return (y - z) * (y - z) / 2;
    case KM_LOSS_RLA: return fabs(y - z);
    case KM_LOSS_LOGISTIC: m = -y * z; return m > 0 ? m + log(1 + exp(-m)) : log(1 + exp(m));
    default: m = fabs(y - z) - eps; return m > 0 ? m : 0;
    }
}

/* Primal P(c) = sum_i C L(y_i, (Kc)_i) + c'Kc/2 and dual D(c) = -c'Kc/2 - sum_i C L*(y_i,
 * -c_i/C), loss and conjugate written out by hand, from a dense K (l x l); z = K c if z is
 * not NULL. */
static inline void primal_dual_dense(km_loss loss, const double *K, const double *y,
                                     const double *c, int64_t l, double C, double eps,
                                     double *P, double *D, double *z)
{
    double quad = 0, Lsum = 0, conj = 0;
    for (int64_t i = 0; i < l; i++) {
        double zi = 0;
        for (int64_t j = 0; j < l; j++)
            zi += K[i * l + j] * c[j];
        if (z)
            z[i] = zi;
        quad += c[i] * zi;
        Lsum += C * loss_value_by_hand(loss, y[i], zi, eps);
        conj += conj_by_hand(loss, y[i], c[i], C, eps);
    }
    *P = Lsum + quad / 2;
    *D = -quad / 2 - conj;
}

/* A solve of the kernel solvers' tests: c, z = K c (malloc'd), the result, the return code
 * and its error, and the primal F where a test computes it. */
typedef struct solved {
    double *c, *z, F;
    km_cd_result res;
    int rc;
    km_error err;
} solved;

static inline void release(solved *s)
{
    free(s->c);
    free(s->z);
}

/* l copies of C. */
static inline double *const_C(int64_t l, double C)
{
    double *Cv = malloc((size_t)(l > 0 ? l : 1) * sizeof *Cv);
    for (int64_t i = 0; i < l; i++)
        Cv[i] = C;
    return Cv;
}

/* km_kcd_solve on all rows of P with a constant C, threads workers sized by team
 * (km_kcd_set_team), a row cache of cache bytes, the parameters par; rc -1 if the solver
 * could not be set up. */
static inline solved kcd_solve_team(const km_problem *P, const km_kernel *k,
                                    const km_cd_param *par, double C, int threads,
                                    size_t cache, km_team_policy team)
{
    solved s = {0};
    int64_t l = P->l;
    km_kdata *X = km_kdata_new(P, NULL, l, &s.err);
    km_kcd *W = X ? km_kcd_new(k, X, cache, threads, &s.err) : NULL;
    if (W)
        km_kcd_set_team(W, team);
    double *Cv = const_C(l, C);
    s.c = malloc((size_t)(l > 0 ? l : 1) * sizeof *s.c);
    s.z = malloc((size_t)(l > 0 ? l : 1) * sizeof *s.z);
    s.rc = W ? km_kcd_solve(W, P->y, Cv, par, s.c, s.z, &s.res, &s.err) : -1;
    km_kcd_free(W);
    km_kdata_free(X);
    free(Cv);
    return s;
}

/* km_cd_linear on all rows of P (bias as train's -B, < 0 none) with a constant C, loss,
 * eps, max_iter and no_walk; converged = -1 when it failed. */
static inline km_cd_result linear_solve(const km_problem *P, km_loss loss, double C, double eps,
                                        double bias, int64_t max_iter, int no_walk, double *w,
                                        double *c)
{
    double *Cv = const_C(P->l, C);
    km_cd_param par = km_cd_param_default();
    par.loss = loss;
    par.eps = eps;
    par.max_iter = max_iter;
    par.no_walk = no_walk;
    km_linear_data d = {P, NULL, P->l, bias};
    km_cd_result res = {0};
    km_error err;
    if (!Cv || km_cd_linear(&d, P->y, Cv, &par, w, c, &res, &err))
        res.converged = -1;
    free(Cv);
    return res;
}

/* kcd_solve_team with the team sizing itself (the default). */
static inline solved kcd_solve(const km_problem *P, const km_kernel *k, const km_cd_param *par,
                               double C, int threads, size_t cache)
{
    return kcd_solve_team(P, k, par, C, threads, cache, KM_TEAM_AUTO);
}

/* The path of mtl-server beside the test binary argv0 (tests/test_x -> ../mtl-server). */
static inline void find_server_bin(const char *argv0, char *buf, size_t size)
{
    const char *slash = strrchr(argv0, '/');
    int len = slash ? (int)(slash - argv0) : 0;
    snprintf(buf, size, "%.*s/../mtl-server", len, argv0);
    if (access(buf, X_OK) != 0)
        snprintf(buf, size, "%s%.*s../mtl-server", slash ? "" : "./", len, argv0);
}

#endif
