/* kernel.h - kernel functions, kernel blocks with BLAS, and the kernel matrix with its
 * row cache (thesis ch. 2, section 1.6 on kernel matrices that do not fit in memory). */
#ifndef KM_KERNEL_H
#define KM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "problem.h"

typedef enum {
    KM_KERNEL_LINEAR,     /* x'y                                  (svm-train -t 0) */
    KM_KERNEL_POLY,       /* (gamma x'y + coef0)^degree           (-t 1) */
    KM_KERNEL_RBF,        /* exp(-gamma ||x - y||^2)              (-t 2) */
    KM_KERNEL_SIGMOID,    /* tanh(gamma x'y + coef0), indefinite  (-t 3) */
    KM_KERNEL_LAPLACIAN,  /* exp(-gamma ||x - y||_1) */
    KM_KERNEL_EXPDOT,     /* exp(gamma x'y)                       (thesis 5.4) */
    KM_KERNEL_SPLINE,     /* 1 + min(x, y), 1-D inputs            (thesis 5.5) */
    KM_KERNEL_COUNT,      /* the number of kernels of two feature vectors (above) */
    /* not a function of two rows: the rows are kernel values, K(a, b) = row a at column
     * id_b, the row of the smaller serial number giving K(a, b) = K(b, a) (km_problem.id,
     * svmlight 0:ID; svm-train -t 4) */
    KM_KERNEL_PRECOMPUTED = KM_KERNEL_COUNT
} km_kernel_type;

typedef struct km_kernel {
    km_kernel_type type;
    double gamma;
    double coef0;
    int degree;
    double offset;        /* added to every value: K + offset (-B b with a kernel: the
                             thesis' no-offset solver on K + b^2, a regularized offset);
                             0: none */
} km_kernel;

/* The kernel called name ("rbf", ...) or svm-train's number ("0".."4"); -1 if none. */
int km_kernel_from_name(const char *name);
const char *km_kernel_name(km_kernel_type type);

/* Checks parameters against the data (n = number of features): gamma > 0 where used,
 * degree >= 1, spline only on 1-D data. KM_EUSAGE with a one-line reason otherwise. */
int km_kernel_check(const km_kernel *k, int32_t n, km_error *err);

/* K(x, y) of two sparse rows (0-based increasing indices); sqx, sqy their squared norms
 * (used by rbf only). The reference evaluation every faster path must agree with. */
double km_kernel_eval(const km_kernel *k, const int32_t *ix, const double *vx, int64_t nx,
                      double sqx, const int32_t *iy, const double *vy, int64_t ny, double sqy);

/* out[a] = K(x[a], y) for a < n on a single feature (x[a], y its values, 0 where missing):
 * km_kernel_eval on one-entry rows, bit for bit, vectorised for the exp-based kernels. */
void km_kernel_1d(const km_kernel *k, const double *x, int64_t n, double y, double *out);

/*
 * A set of rows prepared for kernel evaluation: the rows of P listed in rows[0..m) (rows
 * 0..m-1 if rows is NULL), their squared norms, a column copy, dense copies of the frequent
 * columns, and a dense copy of all columns when the rows are dense enough for dgemm to pay
 * (decided inside, by measured density, overlap and size rules; see kernel.c).
 * It borrows P: P must outlive it.
 */
typedef struct km_kdata km_kdata;

km_kdata *km_kdata_new(const km_problem *P, const int64_t *rows, int64_t m, km_error *err);
void km_kdata_free(km_kdata *d);
int64_t km_kdata_size(const km_kdata *d);

/* 1 when the row set has a dense copy (so km_kernel_block can use dgemm on it), else 0. */
int km_kdata_dense(const km_kdata *d);

/* Row i of the set (0 <= i < km_kdata_size): its entries in P (0-based increasing indices,
 * borrowed), and their number; and the number of features (every index is below it). */
int64_t km_kdata_row(const km_kdata *d, int64_t i, const int32_t **index, const double **value);
int32_t km_kdata_features(const km_kdata *d);

/*
 * out[a * nb + b] = K(A row ia[a], B row ib[b]) for a < na, b < nb (ia/ib NULL: rows
 * 0..na-1 / 0..nb-1). Dot products in blocks by dgemm on the dense copies when both have
 * one, sparse otherwise; then the kernel's transform. Results agree with km_kernel_eval
 * to rounding. threads > 1 splits the work.
 */
int km_kernel_block(const km_kernel *k, const km_kdata *A, const int64_t *ia, int64_t na,
                    const km_kdata *B, const int64_t *ib, int64_t nb, double *out,
                    int threads, km_error *err);

/*
 * The kernel matrix K over the rows of X (m x m), with rows computed on demand and kept in
 * a cache of cache_bytes (one block, filled as rows come; at least a few rows always fit),
 * least recently used rows evicted first (see km_kmatrix_pass for sweeps). When all of K
 * fits, it is computed once, in blocks. Values are identical whatever the cache size.
 */
typedef struct km_kmatrix km_kmatrix;

km_kmatrix *km_kmatrix_new(const km_kernel *k, const km_kdata *X, size_t cache_bytes,
                           int threads, km_error *err);
void km_kmatrix_free(km_kmatrix *K);

int64_t km_kmatrix_size(const km_kmatrix *K);

/* k_ii. */
double km_kmatrix_diag(const km_kmatrix *K, int64_t i);

/* Row i of K over the current columns (all m, unless restricted below). The pointer stays
 * valid until the next call on K; NULL with err set on failure (out of memory). */
const double *km_kmatrix_row(km_kmatrix *K, int64_t i, km_error *err);

/*
 * Tells the cache that a new pass over the rows begins, one that asks for each row about
 * once, in an order unrelated to the last pass (a sweep of coordinate descent). Once passes
 * are declared, a full cache evicts a row used in neither this pass nor the previous one,
 * or else the most recently used row but the last: rows used earlier in this pass are not
 * asked for again before the next, so the cache keeps a fixed part of a working set that
 * does not fit instead of cycling all of it (where LRU would keep almost nothing).
 */
void km_kmatrix_pass(km_kmatrix *K);

/*
 * Restricts the rows km_kmatrix_row returns to the columns cols[0..ncols) (increasing), or
 * brings back all m columns (cols NULL). Restricted rows are computed on their columns
 * alone, as fast per value as whole rows, and the cache holds cache_bytes / (8 ncols) of
 * them. Cached rows of coefficients among the new columns are kept: cut down to the new
 * columns, and given the values of columns added (unless that is more than a quarter of
 * the row: then the cache is emptied). The values are those of whole rows, bit for bit.
 */
int km_kmatrix_restrict(km_kmatrix *K, const int64_t *cols, int64_t ncols, km_error *err);

/*
 * Copies into dst the rows src holds in its cache, most recently used first, as many as
 * dst's cache has room for, when dst's columns are a run of src's (a block of them: the
 * kernel solver cutting its one block, kcd.c); dst's rows are then those it would compute,
 * bit for bit. Returns the rows copied (0 when the columns are not such a run, or either
 * matrix keeps all of K).
 */
int64_t km_kmatrix_take_rows(km_kmatrix *dst, const km_kmatrix *src);

/* The number of columns of the rows km_kmatrix_row returns. */
int64_t km_kmatrix_ncols(const km_kmatrix *K);

/* out[t] += coef[r] K(rows[r], cols[t]) for t < ncols (cols NULL: all m columns), for
 * r = 0, 1, ..., nr - 1 in turn: a fixed order, so the same bits whatever the cache. The
 * values are computed afresh (the cache is neither read nor changed); the row set of the
 * columns is kept for the next call with the same columns. */
int km_kmatrix_addmul(km_kmatrix *K, const int64_t *rows, const double *coef, int64_t nr,
                      const int64_t *cols, int64_t ncols, double *out, km_error *err);

/* z[t] += h K(i, column t) over the current columns: the bits of adding h times the row
 * km_kmatrix_row returns. A row not in memory is cached and added, or, when the cache is
 * full of rows still in use (see km_kmatrix_pass), computed piece by piece and added as it
 * goes without being stored. */
int km_kmatrix_axpy(km_kmatrix *K, int64_t i, double h, double *z, km_error *err);

/* z = K c, using only the columns with c_j != 0, split over threads: each z_i summed over j
 * increasing from 0, one term at a time, the values not in memory by the exact path: the
 * same bits whatever the cache holds and the thread count. */
int km_kmatrix_matvec(km_kmatrix *K, const double *c, double *z, int threads, km_error *err);

/* Cache statistics since creation: rows served, rows computed. */
void km_kmatrix_stats(const km_kmatrix *K, int64_t *served, int64_t *computed);

/* Kernel values computed since creation (rows of any length, km_kmatrix_addmul, the whole
 * matrix counted as its upper triangle); matvec blocks are not counted. */
int64_t km_kmatrix_values(const km_kmatrix *K);

#endif
