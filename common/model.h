/* model.h - trained models and their text file format (doc/model-format.md). */
#ifndef KM_MODEL_H
#define KM_MODEL_H

#include <stdint.h>

#include "basis.h"
#include "error.h"
#include "kernel.h"
#include "loss.h"
#include "problem.h"

#define KM_MODEL_FORMAT "kmtk-model"
#define KM_MODEL_VERSION 1

/*
 * A model is linear (w) or a kernel expansion (has_kernel). Both have nr_w decision
 * functions. Linear: nr_w weight vectors of dimension n (+1 bias weight when bias >= 0),
 * stored row-major, w[j * nr_w + k] = weight of feature j (0-based) in vector k; row n
 * holds the bias weights. Classification (nr_class >= 2, labels ascending): nr_w = 1 when
 * nr_class = 2 (decision > 0 means labels[1]), else one-versus-all with nr_w = nr_class.
 * Regression: nr_class = 0, nr_w = 1.
 * Kernel: f_k(x) = sum_s sv_coef[s * nr_w + k] K(sv_s, x) over the training vectors with a
 * non-zero coefficient in some f_k (thesis (2.2): only c_i != 0 are kept); w is NULL.
 * RLS2 (has_mkl, thesis ch. 4): a learned combination of basis kernels,
 * f_j(x) = intercept[j] + sum_k s_kj d_kj sum_i sv_coef[i * nr_w + j] K~^k(sv_i, x),
 * with s_kj = basis_s[k * nr_w + j] and d_kj = basis_d[k * nr_w + j]; w is NULL.
 * MTL (has_mtl, thesis ch. 5, train -s mtl): a kernel model over the unique inputs (sv,
 * sv_coef = cbar, kernel K, nr_w 1) and per task the rows task_row[task_ptr[t] ..
 * task_ptr[t + 1]) of sv with coefficients task_coef:
 * g_t(x) = alpha sum_i cbar_i K(sv_i, x)
 *          + (1 - alpha) sum_k task_coef[k] K~_t(sv_task_row[k], x)
 * for the task with id task_id[t], K~_t = task_kern[t] (task_kernel when task_kern is NULL). A row's task is its qid; a row of a task the model does
 * not have gets the average task alpha sum_i cbar_i K(sv_i, x), a row without qid the
 * model's task when it has exactly one, else the average task.
 * OKL (has_okl, low-rank output kernel learning, seed 001): a kernel model (nr_class 0,
 * loss rls) whose nr_w = p decision values are the codes g1(x) = A'k(x) (A = sv_coef),
 * decoded into nr_output outputs g(x) = B g1(x) by output_map B (nr_output x nr_w,
 * row-major), or by the identity when output_map is NULL (the baseline L = I).
 */
typedef struct km_mkl_cache km_mkl_cache;

typedef struct km_model {
    km_loss loss;
    double C;
    double eps;
    double bias;          /* < 0: no bias feature */
    int32_t n;            /* number of features */
    int nr_class;
    double *labels;       /* nr_class labels, ascending */
    double *label_weight; /* nr_class C multipliers (-wLABEL) */
    int nr_w;
    double *w;            /* (n + 1) * nr_w; row n = bias weights (0 when bias < 0) */
    int has_kernel;
    km_kernel kernel;
    km_problem *sv;       /* support vectors (CSR rows; y unused) */
    double *sv_coef;      /* sv->l * nr_w */
    km_kdata *sv_data;    /* sv prepared for kernel blocks */
    int has_mkl;          /* solver rls2: f_j as above */
    km_basis_set basis;   /* the basis kernels kept (d_k > 0 in some decision function) */
    double *basis_s;      /* basis.m * nr_w scales s_k, [k * nr_w + j] */
    double *basis_d;      /* basis.m * nr_w kernel weights d_k */
    double *intercept;    /* nr_w values added to the decision values (0 for classification) */
    double lambda;        /* regularization parameter the model was trained with */
    km_mkl_cache *mkl;    /* sv projected on each feature subset of the basis (model.c) */
    int has_mtl;          /* solver mtl: g_t as above */
    double alpha;         /* weight of the common kernel */
    km_kernel task_kernel;   /* the default K~ */
    km_kernel *task_kern;    /* nr_task kernels K~_t, or NULL: task_kernel for every task */
    int64_t nr_task;
    int64_t *task_id;     /* nr_task ids, increasing (never INT64_MIN: no task) */
    int64_t *task_ptr;    /* nr_task + 1 offsets into task_row / task_coef */
    int64_t *task_row;    /* 0-based rows of sv */
    double *task_coef;
    int has_okl;          /* solver okl: outputs = output_map * decision values */
    int64_t nr_output;    /* outputs m of an okl model */
    double *output_map;   /* nr_output * nr_w (B), or NULL: the identity (nr_w = nr_output) */
} km_model;

/* Allocates a model with zero weights; labels/label_weight left for the caller to fill. */
km_model *km_model_new(km_loss loss, int32_t n, int nr_class, int nr_w, km_error *err);
void km_model_free(km_model *m);

/* Turns m into a kernel model with these support vectors and coefficients (owned by m
 * from now on, also on failure); frees w. */
int km_model_set_kernel(km_model *m, const km_kernel *k, km_problem *sv, double *sv_coef,
                        km_error *err);

/* Turns m into an RLS2 model (loss rls, no bias feature) with these basis kernels, their
 * scales s and weights d (basis->m * nr_w each), intercepts (nr_w), support vectors and
 * coefficients (sv->l * nr_w): all owned by m from now on, also on failure (*basis is
 * moved: the caller's struct is zeroed); frees w. Projects the support vectors on each
 * distinct feature subset once, for km_model_decision_rows. KM_EUSAGE if a kernel or
 * feature index is invalid for m->n or an s or d is negative or not finite. */
int km_model_set_mkl(km_model *m, km_basis_set *basis, double *s, double *d, double *intercept,
                     km_problem *sv, double *sv_coef, km_error *err);

/* Turns m (made with nr_class 0 and nr_w = p codes) into an OKL model: kernel k, support
 * vectors sv with coefficients A (sv->l * nr_w), output map B (nr_output * nr_w, or NULL
 * for the identity, then nr_output must equal nr_w), all owned by m from now on, also on
 * failure. */
int km_model_set_okl(km_model *m, const km_kernel *k, km_problem *sv, double *A,
                     int64_t nr_output, double *B, double lambda, km_error *err);

/* The nr_output outputs of an OKL model from its nr_w decision values (the codes). */
void km_model_outputs(const km_model *m, const double *codes, double *out);

/* Turns m into an MTL model (loss rls, regression, nr_w 1, no bias): kernels K and the
 * default K~, alpha in [0, 1], lambda, the unique inputs sv with cbar, and the tasks (arrays
 * as in km_model, task_kern may be NULL; all owned by m from now on, also on failure).
 * KM_EUSAGE if alpha, a kernel, a task id (increasing, not INT64_MIN), an offset, a row or a
 * coefficient is invalid. */
int km_model_set_mtl(km_model *m, const km_kernel *K, const km_kernel *Kt, double alpha,
                     double lambda, km_problem *sv, double *cbar, int64_t nr_task,
                     int64_t *task_id, int64_t *task_ptr, int64_t *task_row, double *task_coef,
                     km_kernel *task_kern, km_error *err);

/* Writes the model atomically (temp file in the same directory + rename). */
int km_model_write(const km_model *m, const char *path, km_error *err);

/* Reads a model; rejects other formats, unknown versions and damaged files with
 * "PATH:LINE: ..." messages. */
int km_model_read(const char *path, km_model **out, km_error *err);

/* Decision values of a linear model on one sparse row (index 0-based, features >= n
 * ignored): dec gets nr_w values. */
void km_model_decision(const km_model *m, const int32_t *index, const double *value,
                       int64_t nnz, double *dec);

/* Decision values of any model for rows[0..count) of X (all rows if rows is NULL, count =
 * X->l): dec gets count * nr_w values, row-major. Kernel models evaluate blocks of rows
 * against the support vectors with km_kernel_block and one dgemm per block; RLS2 models
 * project a block once per feature subset and add one block and dgemm per basis kernel.
 * MTL models take each row's task from X->qid (no qid array, or INT64_MIN: no qid). */
int km_model_decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                           int64_t count, double *dec, int threads, km_error *err);

/* The predicted label (classification) or value (regression) from decision values. */
double km_model_predict_label(const km_model *m, const double *dec);

#endif
