/* linear.h - training models: classes, one-versus-all, class weights, the linear or kernel
 * solver, cross-validation. */
#ifndef KM_LINEAR_H
#define KM_LINEAR_H

#include <stdint.h>

#include "cd.h"
#include "error.h"
#include "model.h"
#include "problem.h"

typedef struct km_class_weight {
    double label;
    double weight;   /* C of this class = C * weight (-wLABEL weight) */
} km_class_weight;

typedef struct km_train_param {
    km_cd_param cd;                  /* loss, epsilon, delta, rule, seed, cap, shrinking */
    double C;
    double bias;                     /* < 0: none (linear solver only) */
    const km_class_weight *weights;  /* nr_weight entries */
    int nr_weight;
    int use_kernel;                  /* 0: linear solver (Algorithm 2) on w; 1: kernel */
    km_kernel kernel;
    size_t cache_bytes;              /* kernel row cache */
    int threads;                     /* kernel: blocks and K c; linear: one-versus-all
                                        classes and cross-validation folds in parallel
                                        (results bit-identical to 1 thread) */
    int fixedpoint;                  /* kernel: 1 = fixed-point iteration (2.10), 0 = CD */
    km_alpha_rule alpha_rule;        /* fixed point: 1/tr(K) or 1/||K||_2 */
    const double *row_weight;        /* NULL, or P->l instance weights > 0 multiplying C_i
                                        (indexed by P's rows; callers drop weight-0 rows) */
    const km_model *init;            /* NULL, or a warm start (--init): the coefficients
                                        c_i = km_start_coef(loss, y_i, z_i, C_i) from this
                                        model's decision values z_i on the rows; its classes
                                        must be the data's */
} km_train_param;

/* A feasible starting coefficient from a decision value z: c = -C dL(y, z) (the optimality
 * condition (2.8) with z fixed; at kinks the end of the subdifferential nearest 0), so a
 * model's own decision values give back its coefficients. 0 for losses without a rule. */
double km_start_coef(km_loss loss, double y, double z, double C, double eps);

/* c moved into the feasible set of the loss's dual at C (l1svm: y c in [0, C]; l2svm: y c
 * >= 0; rla, svr: |c| <= C): a kernel model's own coefficient as a warm start at another
 * C. */
double km_clip_coef(km_loss loss, double y, double c, double C);

/* What training did, one entry per weight vector of the model. */
typedef struct km_train_info {
    int nr_w;
    double *objective;    /* F(w) of each (one-versus-all) problem */
    double *primal;       /* F at the returned coefficients, from c and z = Kc (or w'x_i) */
    double *gap;          /* its relative duality gap (F - D) / F, whatever the stopping rule */
    double *max_h;        /* max |h_i| of the last macro-iteration */
    int64_t *iter;        /* macro-iterations */
    int *converged;       /* 0 if the iteration cap stopped it */
    int64_t *nnz_c;       /* coefficients c_i != 0 (support vectors) */
    double delta;         /* the stopping tolerance used (the default depends on the data) */
} km_train_info;

void km_train_info_free(km_train_info *info);

/* Checks parameters; returns KM_EUSAGE with a one-line reason when one is out of range. */
int km_train_check(const km_train_param *par, km_error *err);

/*
 * Trains a model on the rows of P listed in rows[0..m) (all rows if rows is NULL): linear
 * (w, by Algorithm 2) or, with use_kernel, a kernel expansion over the rows with c_i != 0
 * (by Algorithm 1 or the fixed-point iteration (2.10)).
 * Classification losses: labels are classes; 2 classes give one w (decision > 0 means the
 * larger label), more give one-versus-all. Class weights scale C per class as in
 * LIBLINEAR (binary: each class its own C; one-versus-all: the positive class of each
 * problem gets C * weight, the rest C). info (may be NULL) is filled; free it with
 * km_train_info_free.
 */
int km_train(const km_problem *P, const int64_t *rows, int64_t m,
                    const km_train_param *par, km_model **out, km_train_info *info,
                    km_error *err);

#endif
