/* kbank.h - the basis kernel matrices K~^1..K~^m of multiple kernel learning over a set of
 * rows, kept in the compact forms their structure allows (thesis 4.5.2; the unique-inputs
 * trick of section 5.2), and the products RLS2 needs from them. */
#ifndef KM_KBANK_H
#define KM_KBANK_H

#include <stdint.h>

#include "basis.h"
#include "error.h"
#include "problem.h"

/*
 * Kernels that look at the same feature subset form a group. A group maps each row i to
 * its distinct value (the row restricted to the subset) map[i] < u, so every kernel of the
 * group is K~ = P K_u P' with K_u the u x u matrix on the distinct values: a kernel on one
 * binary feature is 2 x 2 whatever the number of rows. K_u is stored dense (its upper
 * triangle packed, products by dspmv) or, when its rank r is below u / 3, as a factor K_u = G G' (u x r):
 * exactly for a linear or polynomial kernel on one feature (ranks 1 and degree + 1), and by
 * pivoted Cholesky (LAPACK dpstrf, its default tolerance u eps max_a K_u[a,a]) for the
 * other positive semi-definite kernels (a Gaussian kernel with a small gamma on one feature
 * has numerical rank ~10). Indefinite kernels (sigmoid, polynomial with coef0 < 0) stay
 * dense.
 */
typedef struct km_kbank km_kbank;

/* The kernels of basis over all rows of X. threads > 1 builds groups in parallel. */
km_kbank *km_kbank_new(const km_problem *X, const km_basis_set *basis, int threads,
                       km_error *err);

/* The same kernels over rows[0..n) of B (in that order; repeats allowed): values are
 * gathered, never recomputed, so a slice equals a bank built on those rows up to the
 * factor's rounding. When rows are all of B's in order, the slice shares B's matrices
 * (the same values, no copy): free it before B. */
km_kbank *km_kbank_slice(const km_kbank *B, const int64_t *rows, int64_t n, km_error *err);

/* F (l x R, column-major) with F F' = sum_k w_k K~^k (w_k >= 0) when every kernel with
 * w_k != 0 is stored as a factor and their ranks add up to R <= rmax; returns R, or -1
 * (F untouched) when a dense kernel has w_k != 0 or R > rmax. F holds l rmax values. */
int64_t km_kbank_lowrank(const km_kbank *B, const double *w, int64_t rmax, double *F);

void km_kbank_free(km_kbank *B);

int64_t km_kbank_rows(const km_kbank *B);
int km_kbank_size(const km_kbank *B);

/* V[k * l + i] = (K~^k c)_i for every kernel k with active == NULL or active[k] != 0
 * (other columns are left alone); l = km_kbank_rows(B). */
int km_kbank_products(const km_kbank *B, const double *c, const unsigned char *active,
                      double *V, int threads, km_error *err);

/* 1 when every kernel is stored as a factor of rank <= 1, K~^k = x^k x^k' (a linear kernel
 * on one feature: linear RLS2, thesis (4.5)); 0 otherwise. */
int km_kbank_rank_one(const km_kbank *B);

/* For such a bank, x[k] = x^k over the bank's rows (l values; zeros for rank 0): a pointer
 * into the bank when the kernel's rows are all distinct, else into *own, allocated here
 * (the caller frees it; NULL when nothing had to be gathered). */
int km_kbank_vectors(const km_kbank *B, const double **x, double **own, km_error *err);

/* K += sum_k w_k K~^k over the kernels with w_k != 0 (K l x l, column-major; the upper
 * triangle only). */
int km_kbank_combine(const km_kbank *B, const double *w, double *K, km_error *err);

/* out[j] = sum_k w_k sum_i K~^k(rows_out[j], rows_in[i]) c_i: predictions at rows of B
 * (test or validation rows) of a model trained on other rows of B. rows_in / rows_out
 * NULL: all rows in order (then out = K(w) c over B). */
int km_kbank_cross(const km_kbank *B, const int64_t *rows_out, int64_t nout,
                   const int64_t *rows_in, int64_t nin, const double *w, const double *c,
                   double *out, km_error *err);

typedef enum {
    KM_SCALE_TRACE,      /* s_k = 1 / tr K~^k                             (4.14), (4.12) */
    KM_SCALE_CLASS,      /* s_k = 1 / (sigma+^2 + sigma-^2)                        (4.13) */
    KM_SCALE_MICROARRAY, /* s_k = (sigma+^2 + sigma-^2)^(-1/2)            (thesis 4.5.3) */
    KM_SCALE_NONE        /* s_k = 1 */
} km_scale_rule;

/* The rule called name ("trace", "class", "microarray", "none"); -1 if none. */
int km_scale_from_name(const char *name);
const char *km_scale_name(km_scale_rule rule);

/*
 * Scales s[0..m) from the kernels over rows[0..n) of B (all rows if rows is NULL; for
 * transductive scaling pass training and test rows). center: the trace of the centered
 * kernel, tr K - (1/n) sum_ij K_ij (normalisation in feature space, thesis 4.4). The class
 * rules read y[j] = +1 / -1 of rows[j] and use the within-class variances in feature
 * space (the kernel generalisation of (4.13)). A kernel whose denominator is zero (a
 * constant feature) gets s_k = 0: it can never be selected; *zero counts them.
 */
int km_kbank_scales(const km_kbank *B, km_scale_rule rule, int center, const int64_t *rows,
                    int64_t n, const double *y, double *s, int *zero, km_error *err);

/* norm[k] >= ||K~^k||_2 over the bank's rows (the largest absolute row sum, or the trace of
 * a factored kernel). */
void km_kbank_norms(const km_kbank *B, double *norm);

/* Doubles stored, and kernels stored dense / as factors. */
void km_kbank_stats(const km_kbank *B, int64_t *doubles, int *dense, int *factored);

#endif
