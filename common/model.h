/* model.h - trained models: the envelope every model file has (kmtk.h's km_model) and the
 * kinds of body the methods make (doc/model-format.md). model.c keeps the envelope, the
 * kind dispatch and the shared pieces (support-vector blocks, number formatting); each
 * kind is a module (model_linear.c, model_kernel.c, model_rls2.c, model_okl.c,
 * model_mtl.c) behind km_model_kind. */
#ifndef KM_MODEL_H
#define KM_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "basis.h"
#include "error.h"
#include "kernel.h"
#include "kmtk.h"
#include "loss.h"
#include "problem.h"

#define KM_MODEL_FORMAT "kmtk-model"
#define KM_MODEL_VERSION 1

/* ---- the kinds ---- */

/* linear: nr_w weight vectors of dimension n (+1 bias weight when bias >= 0), row-major,
 * w[j * nr_w + k] = weight of feature j (0-based) in vector k; row n holds the bias
 * weights. Classification (nr_class >= 2, labels ascending): nr_w = 1 when nr_class = 2
 * (decision > 0 means labels[1]), else one-versus-all with nr_w = nr_class. Regression:
 * nr_class = 0, nr_w = 1. */
extern const km_model_kind km_kind_linear;

/* kernel: f_k(x) = sum_s sv_coef[s * nr_w + k] K(sv_s, x) over the training vectors with a
 * non-zero coefficient in some f_k (thesis (2.2): only c_i != 0 are kept). okl and mtl
 * models are kernel expansions too, with this body first in theirs. */
extern const km_model_kind km_kind_kernel;
typedef struct km_expansion {
    km_kernel kernel;
    km_problem *sv;       /* support vectors (CSR rows; y unused) */
    double *sv_coef;      /* sv->l * nr_w */
    km_kdata *sv_data;    /* sv prepared for kernel blocks */
} km_expansion;

/* rls2 (thesis ch. 4): a learned combination of basis kernels,
 * f_j(x) = intercept[j] + sum_k s_kj d_kj sum_i sv_coef[i * nr_w + j] K~^k(sv_i, x),
 * s_kj = basis_s[k * nr_w + j], d_kj = basis_d[k * nr_w + j]. */
extern const km_model_kind km_kind_rls2;
typedef struct km_mkl_cache km_mkl_cache;
typedef struct km_rls2_body {
    km_basis_set basis;   /* the basis kernels kept (d_k > 0 in some decision function) */
    double *basis_s;      /* basis.m * nr_w scales s_k, [k * nr_w + j] */
    double *basis_d;      /* basis.m * nr_w kernel weights d_k */
    double *intercept;    /* nr_w values added to the decision values */
    double lambda;        /* the regularization parameter of the model */
    km_problem *sv;
    double *sv_coef;      /* sv->l * nr_w */
    km_mkl_cache *mkl;    /* sv projected on each feature subset of the basis */
} km_rls2_body;

/* okl (low-rank output kernel learning, seed 001): a kernel expansion (nr_class 0, loss
 * rls) whose nr_w = p decision values are the codes g1(x) = A'k(x) (A = sv_coef), decoded
 * into nr_output outputs g(x) = B g1(x) by output_map B (nr_output x nr_w, row-major), or
 * by the identity when output_map is NULL (the baseline L = I). */
extern const km_model_kind km_kind_okl;
typedef struct km_okl_body {
    km_expansion e;
    double lambda;
    double *output_map;
} km_okl_body;

/* mtl (thesis ch. 5): a kernel expansion over the unique inputs (sv, sv_coef = cbar, nr_w
 * 1) and per task the rows task_row[task_ptr[t] .. task_ptr[t + 1]) of sv with
 * coefficients task_coef: g_t(x) = alpha sum_i cbar_i K(sv_i, x)
 *   + (1 - alpha) sum_k task_coef[k] K~_t(sv_task_row[k], x)
 * for the task with id task_id[t], K~_t = task_kern[t] (task_kernel when task_kern is
 * NULL). A row's task is its qid; a row of a task the model does not have gets the average
 * task alpha sum_i cbar_i K(sv_i, x), a row without qid the model's task when it has
 * exactly one, else the average task. */
extern const km_model_kind km_kind_mtl;
typedef struct km_mtl_body {
    km_expansion e;
    double alpha, lambda;
    km_kernel task_kernel;   /* the default K~ */
    km_kernel *task_kern;    /* nr_task kernels K~_t, or NULL */
    int64_t nr_task;
    int64_t *task_id;        /* nr_task ids, increasing (never INT64_MIN: no task) */
    int64_t *task_ptr;       /* nr_task + 1 offsets into task_row / task_coef */
    int64_t *task_row;       /* 0-based rows of sv */
    double *task_coef;
} km_mtl_body;

/* mtmkl (seed 004, mtmkl.h): the task kernels' factors, theta and the vectors g_k. */
extern const km_model_kind km_kind_mtmkl;
struct km_mtmkl_tasks;
/* Turns m (nr_class 2, nr_w 1) into an mtmkl model: the tasks k (moved: the caller's struct
 * is zeroed), theta (M) and g (nr_factor * n), owned by m from now on, also on failure. */
int km_model_set_mtmkl(km_model *m, struct km_mtmkl_tasks *k, double p, double *theta,
                       double *g, km_error *err);
/* The kernel mode: the rows with c_j != 0 (sv), their c and task indices, owned by m from now
 * on, also on failure. */
int km_model_set_mtmkl_kernel(km_model *m, struct km_mtmkl_tasks *k, double p, double *theta,
                              const km_kernel *kern, km_problem *sv, double *c,
                              int32_t *sv_task, km_error *err);

/* The body of m when it is of that kind, else NULL. */
double *km_model_w(const km_model *m);
km_expansion *km_model_expansion(const km_model *m);   /* kernel, okl and mtl models */
km_rls2_body *km_model_rls2(const km_model *m);
km_okl_body *km_model_okl(const km_model *m);
km_mtl_body *km_model_mtl(const km_model *m);

/* ---- making models ---- */

/* A linear model with zero weights; labels/label_weight left for the caller to fill. */
km_model *km_model_new(km_loss loss, int32_t n, int nr_class, int nr_w, km_error *err);

/* Turns m into a kernel model with these support vectors and coefficients (owned by m
 * from now on, also on failure). */
int km_model_set_kernel(km_model *m, const km_kernel *k, km_problem *sv, double *sv_coef,
                        km_error *err);

/* Turns m into an RLS2 model (loss rls, no bias feature) with these basis kernels, their
 * scales s and weights d (basis->m * nr_w each), intercepts (nr_w), support vectors and
 * coefficients (sv->l * nr_w), all owned by m from now on, also on failure (*basis is
 * moved: the caller's struct is zeroed). KM_EUSAGE if a kernel or feature index is invalid
 * for m->n or an s or d is negative or not finite. */
int km_model_set_mkl(km_model *m, km_basis_set *basis, double *s, double *d, double *intercept,
                     double lambda, km_problem *sv, double *sv_coef, km_error *err);

/* Turns m (made with nr_class 0 and nr_w = p codes) into an OKL model: kernel k, support
 * vectors sv with coefficients A (sv->l * nr_w), output map B (nr_output * nr_w, or NULL
 * for the identity, then nr_output must equal nr_w), all owned by m from now on, also on
 * failure. */
int km_model_set_okl(km_model *m, const km_kernel *k, km_problem *sv, double *A,
                     int64_t nr_output, double *B, double lambda, km_error *err);

/* Turns m into an MTL model (loss rls, regression, nr_w 1, no bias): kernels K and the
 * default K~, alpha in [0, 1], lambda, the unique inputs sv with cbar, and the tasks (arrays
 * as in km_mtl_body, task_kern may be NULL; all owned by m from now on, also on failure).
 * KM_EUSAGE if alpha, a kernel, a task id (increasing, not INT64_MIN), an offset, a row or a
 * coefficient is invalid. */
int km_model_set_mtl(km_model *m, const km_kernel *K, const km_kernel *Kt, double alpha,
                     double lambda, km_problem *sv, double *cbar, int64_t nr_task,
                     int64_t *task_id, int64_t *task_ptr, int64_t *task_row, double *task_coef,
                     km_kernel *task_kern, km_error *err);

/* Replaces m's body by body of kind (the old one freed). */
void km_model_set_body(km_model *m, const km_model_kind *kind, void *body);

/* Decision values of a linear model on one sparse row (index 0-based, features >= n
 * ignored): dec gets nr_w values. */
void km_model_decision(const km_model *m, const int32_t *index, const double *value,
                       int64_t nnz, double *dec);

/* ---- shared pieces of the kinds ---- */

/* The kinds of every registered method, for the reader (method.c). */
const km_model_kind *km_model_kind_find(const char *name);

/* Foreign model files, known by their first line (first, already read from io; io then
 * gives the lines after it): LIBLINEAR's ("solver_type ...", model_liblinear.c) and LIBSVM's
 * ("svm_type ...", model_libsvm.c), read into models of kind km_kind_liblinear and
 * km_kind_libsvm. Their labels are in the order that makes km_model_predict_label give
 * the peer's prediction (not always ascending): two classes {label 1, label 0} of the file
 * (a decision value > 0 means the file's first label), more classes in the file's order. */
extern const km_model_kind km_kind_liblinear, km_kind_libsvm;
int km_liblinear_read(km_mio *io, const char *first, km_model **out, km_error *err);
int km_libsvm_read(km_mio *io, const char *first, km_model **out, km_error *err);
/* Writes a linear model (km_kind_linear or km_kind_liblinear) as a LIBLINEAR model file
 * (atomically); KM_EUSAGE when the model does not fit that format (a kernel model, labels
 * that are not integers, a loss LIBLINEAR has no solver for). */
int km_model_write_liblinear(const km_model *m, const char *path, km_error *err);
/* Writes a kernel model of two classes or regression (km_kind_kernel; kernels linear, poly,
 * rbf, sigmoid) as a LIBSVM model file (c_svc or epsilon_svr, rho 0: kmtk's kernel models
 * have no offset), atomically; KM_EUSAGE when it does not fit (another kind or kernel,
 * one-versus-all classes, labels that are not integers). */
int km_model_write_libsvm(const km_model *m, const char *path, km_error *err);

/* KM_EINPUT "PATH:LINE:COL: what" at the last line read (col 1-based); returns the code. */
int km_mio_bad_col(km_mio *io, int64_t col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The path of the file being read. */
const char *km_mio_path(const km_mio *io);

/* The line number km_mio_bad reports, and setting it (an error about an earlier line). */
int64_t km_mio_lineno(const km_mio *io);
void km_mio_set_lineno(km_mio *io, int64_t line);

/* Header keys "kernel", "gamma", "coef0", "degree" of k: write, and read (from io). */
void km_model_put_kernel(FILE *f, const char *prefix, const km_kernel *k);
int km_model_get_kernel(km_mio *io, const char *prefix, km_kernel *k, km_error *err);

/* The nr_sv support-vector lines "coef_1 .. coef_nr_w idx:val ...": write and read. */
void km_model_put_svs(FILE *f, const km_problem *S, const double *coef, int nr_w);
int km_model_get_svs(km_mio *io, const km_model *m, int64_t nr_sv, km_problem **sv,
                     double **coef, km_error *err);

/* The pieces of such readers: an empty S of nr_sv rows and n features (S->id too when ids)
 * and its nr_sv x nw coefficients (both NULL on an error); support vector line s of nr_sv (NULL with *rc the
 * "truncated" error at the end of the file); the end, which frees both on an error rc and
 * else hands them over. */
int km_model_svs_new(int32_t n, int nw, int64_t nr_sv, int ids, km_problem **sv,
                     double **sv_coef, km_error *err);
const char *km_model_sv_line(km_mio *io, int64_t s, int64_t nr_sv, int *rc);
int km_model_svs_end(int rc, km_problem *S, double *coef, km_problem **sv, double **sv_coef);

/* " idx:val" pairs (idx 0-based, written 1-based), then a newline. */
void km_model_put_pairs(FILE *f, const int64_t *idx, const double *val, int64_t count);

/* One line: head (when not NULL), count numbers separated by spaces, " tail" (when not
 * NULL). */
void km_model_put_line(FILE *f, const char *head, const double *x, int64_t count,
                       const char *tail);

/* Lines of nr_w numbers: write rows of them, parse one ("a b c", single spaces). */
void km_model_put_rows(FILE *f, const double *x, int64_t rows, int64_t cols);
int km_model_parse_numbers(const char *s, double *out, int64_t count);
/* An integer header value in [lo, hi]; 0 on success. */
int km_model_parse_int(const char *s, long long lo, long long hi, long long *out);
/* The number of classes implied by nr_w for single-output kinds: KM_EINPUT when nr_w does
 * not match nr_class (1 for two classes and regression, nr_class for one-versus-all). */
int km_model_check_nr_w(km_mio *io, const km_model *m);

/* X's decision values in blocks of rows (km_model_decision_rows, one thread), each row's
 * (nr_w values) handed to row(ctx, m, i, dec) in order; KM_OK or the error (what names the
 * buffers in an out-of-memory message). */
int km_model_each_decision(const km_model *m, const km_problem *X,
                            void (*row)(void *ctx, const km_model *m, int64_t i,
                                        const double *dec),
                            void *ctx, const char *what, km_error *err);

/* Copies rows[a0..a0+nb) of X into B with the features >= n dropped; B's arrays are reused
 * across calls (capacity *cap). */
int km_model_copy_block(const km_problem *X, const int64_t *rows, int64_t a0, int64_t nb,
                        int32_t n, km_problem *B, int64_t *cap, km_error *err);

/* Decision values of a kernel expansion: dec = K(rows, sv) sv_coef in blocks. */
int km_expansion_rows(const km_model *m, const km_expansion *e, const km_problem *X,
                      const int64_t *rows, int64_t count, double *dec, int threads,
                      km_error *err);
/* The same for a coefficient matrix of nw columns (sv_coef: sv->l * nw), features >= n of
 * the rows ignored: dec gets count * nw values. */
int km_expansion_cols(const km_expansion *e, int32_t n, int nw, const km_problem *X,
                      const int64_t *rows, int64_t count, double *dec, int threads,
                      km_error *err);
/* An expansion's file pieces, shared by the kinds built on one: the lines "nr_w", "nr_sv",
 * "sv" and the support vectors; the header keys of its kernel and nr_sv. */
void km_expansion_write(FILE *f, const km_model *m, const km_expansion *e);
int km_expansion_read_head(km_mio *io, km_kernel *k, long long *nr_sv, km_error *err);
int km_expansion_init(km_expansion *e, const km_kernel *k, km_problem *sv, double *sv_coef,
                      km_error *err);
void km_expansion_free(km_expansion *e);

#endif
