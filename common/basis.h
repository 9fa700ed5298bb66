/* basis.h - basis kernels for multiple kernel learning (thesis ch. 3-4): a kernel, its
 * parameters and the feature subset it looks at; the standard sets (`-k paper`, `-k linear`)
 * and the kernel-list file (doc/kernel-list.md). */
#ifndef KM_BASIS_H
#define KM_BASIS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kernel.h"
#include "problem.h"

/*
 * Basis kernel K~^k(x1, x2) = kernel(x1|F, x2|F), where x|F keeps the features in F only.
 * nfeat = 0 and feat = NULL: F = all features. Otherwise feat holds nfeat 0-based,
 * strictly increasing feature indices (owned by the set the basis belongs to).
 */
typedef struct km_basis {
    km_kernel kernel;
    int32_t nfeat;
    int32_t *feat;
} km_basis;

/* The most features a subset may list (features=a-b expands to b-a+1 indices, 4 bytes each:
 * a range from a short line would otherwise allocate up to 8 GB). */
#define KM_BASIS_MAX_SUBSET (1 << 24)

/* A list of basis kernels; free with km_basis_set_free. */
typedef struct km_basis_set {
    int m;
    km_basis *b;
} km_basis_set;

/* Frees the kernels and their feature lists and empties *set; NULL is fine. */
void km_basis_set_free(km_basis_set *set);

/* The paper's set (thesis 4.5.2) for n features: on all features, then on feature 1, 2, ...,
 * n, each the polynomials (1 + x'y)^d, d = 1, 2, 3 (poly gamma=1 coef0=1), then Gaussian RBF
 * exp(-gamma||x-y||^2) with gamma = 10^(-3 + 6t/9), t = 0..9: m = 13 (n + 1). KM_EUSAGE if
 * n < 0 or m would overflow an int. */
int km_basis_paper(int32_t n, km_basis_set *out, km_error *err);

/* One linear kernel x^k y^k per feature, k = 1..n (linear RLS2, (4.5)): m = n (KM_EINPUT
 * if n < 1). */
int km_basis_linear(int32_t n, km_basis_set *out, km_error *err);

/* Reads a kernel-list file: one basis kernel per line, in the syntax of km_basis_parse;
 * blank lines and lines whose first non-blank character is '#' are skipped; at least one
 * kernel. Errors name "PATH:LINE:". Feature indices above n are rejected (n = number of
 * features of the data). */
int km_basis_read_list(const char *path, int32_t n, km_basis_set *out, km_error *err);

/*
 * Parses one basis kernel from text such as
 *     rbf gamma=0.1 features=all
 *     poly gamma=1 coef0=1 degree=2 features=1,3,5-9
 * (kernel names as in km_kernel_from_name; words separated by blanks or tabs; parameters
 * not given take the defaults gamma=1 coef0=0 degree=3, and a parameter the kernel does not
 * use is an error; features are 1-based indices <= n and ranges a-b, in any order but none
 * twice, at most KM_BASIS_MAX_SUBSET of them, "all" by default). Fills *b (b->feat
 * malloc'ed, NULL for all features). Returns KM_EINPUT with a reason (no file:line; the
 * caller prefixes it); *b is then empty.
 */
int km_basis_parse(const char *text, int32_t n, km_basis *b, km_error *err);

/* Writes b in the syntax km_basis_parse reads (the parameters its kernel uses, numbers
 * shortest round-trip, km_dtoa; features as runs a-b) into buf of size len; returns the length it needed
 * (snprintf convention). Parsing the text gives b back bit for bit. */
int km_basis_format(const km_basis *b, char *buf, size_t len);

/* K~(x1, x2) of two sparse rows through the basis kernel's feature subset (reference
 * evaluation; sqx, sqy are not needed: they are recomputed over the subset). */
double km_basis_eval(const km_basis *b, const int32_t *ix, const double *vx, int64_t nx,
                     const int32_t *iy, const double *vy, int64_t ny);

/* A new problem with the rows of P listed in rows[0..l) (all if rows is NULL) restricted to
 * the features of b, re-indexed 0..nfeat-1, n = nfeat (all features: a plain copy, n = P->n);
 * y copied (zeros when P->y is NULL), qid NULL. */
km_problem *km_basis_project(const km_basis *b, const km_problem *P, const int64_t *rows,
                             int64_t l, km_error *err);

#endif
