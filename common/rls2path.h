/* rls2path.h - RLS2 along a regularization path (thesis 4.5): warm starts from large to small
 * lambda, one-versus-all for several classes (4.5.3), k-fold cross-validation with the
 * one-standard-error rule (4.5.1), test evaluation, the path table, the chosen model. */
#ifndef KM_RLS2PATH_H
#define KM_RLS2PATH_H

#include <stdint.h>

#include "basis.h"
#include "error.h"
#include "kbank.h"
#include "model.h"
#include "problem.h"
#include "rls2.h"

/* The data: basis kernels over all rows (training, test and the setup's validation rows),
 * the rows' labels (class labels or real outputs), which rows train and which test (ntest
 * may be 0). */
typedef struct km_rls2_task {
    const km_kbank *bank;
    const double *y;
    const int64_t *train;
    int64_t ntrain;
    const int64_t *test;
    int64_t ntest;
    int classification;  /* labels are classes: accuracy, one-versus-all for > 2 classes;
                            else regression: outputs centered by the training mean, RMSE */
} km_rls2_task;

/* How the lambda of the model was chosen (km_rls2_path.choice). */
typedef enum km_rls2_choice {
    KM_RLS2_LAST,        /* the last (smallest) lambda: no folds, validation or test rows */
    KM_RLS2_CV,          /* the best mean over the folds (ties: the larger lambda) */
    KM_RLS2_CV_ONE_SE,   /* the largest lambda within one standard error of that best */
    KM_RLS2_VALID,       /* the best on the validation rows (ties: the larger lambda) */
    KM_RLS2_TEST         /* the best on the test rows (ties: the larger lambda); with
                            select_test only, and then the test metric is not held out */
} km_rls2_choice;

/* Called after each lambda of each path (done of total); may print. */
typedef void (*km_rls2_progress)(void *ctx, int done, int total, double lambda);

typedef struct km_rls2_setup {
    km_rls2_param solver;
    km_scale_rule scale;
    int center;          /* scales from the centered kernels */
    int transductive;    /* trace rules over training and test rows */
    const double *scales; /* m scales to use as given (NULL: from the rule) */
    const double *lambda; /* nl values, decreasing */
    int nl;
    int folds;           /* cross-validation folds (0: none) */
    uint64_t seed;       /* fold assignment */
    int one_se;          /* the largest lambda within one standard error of the best */
    int dof;             /* degrees of freedom per lambda (one l^3 inverse each) */
    int no_intercept;    /* regression: fit the outputs as they are, not centered */
    const int64_t *valid; /* validation rows of the task's bank (nvalid may be 0): the valid
                             column, and the lambda of the model when there are no folds */
    int64_t nvalid;
    int select_test;     /* without folds and validation rows: the model at the best test
                            lambda (else the last lambda) */
    km_rls2_progress progress;
    void *ctx;
} km_rls2_setup;

/* One lambda of the path. Sums over the one-versus-all problems (kernels: the union of
 * the kernels they select). Metrics: accuracy in % or RMSE; NaN when not computed. */
typedef struct km_rls2_row {
    double lambda;
    double objective;    /* (4.1) */
    int kernels;         /* d_k > 0 */
    int iter;            /* iterations of Algorithm 3 */
    int converged;       /* every problem met the stopping test */
    double seconds;
    double df;           /* tr K(d) (K(d) + lambda I)^-1 ((4.11) for linear kernels) */
    double train, valid, valid_se, test;
} km_rls2_row;

typedef struct km_rls2_path {
    int nl;
    km_rls2_row *row;
    int chosen;          /* the row of the model, picked as `choice` says: the folds' best
                            validation mean (ties: larger lambda), or with one_se the largest
                            lambda within one standard error; else the best on the
                            validation rows; else with select_test the best on the test
                            rows; else the last row */
    km_rls2_choice choice;
    int64_t *sel_start;  /* nl + 1: the kernels of row t (d_k > 0 in some decision function)
                            are sel_k[sel_start[t] .. sel_start[t + 1]) */
    int *sel_k;          /* kernel indices (basis order), largest weight first (ties: the
                            smaller index) */
    double *sel_d;       /* their weight: d_k averaged over the decision functions */
    int classification, nr_class, nr_w;
    double *labels;      /* nr_class, ascending */
    int m;
    int64_t ntrain;
    double *s, *d;       /* m * nr_w at the chosen lambda, [k * nr_w + j] */
    double *c;           /* ntrain * nr_w */
    double *intercept;   /* nr_w */
    int scale_zero;      /* kernels left out with s_k = 0 */
} km_rls2_path;

void km_rls2_path_free(km_rls2_path *p);

int km_rls2_run(const km_rls2_task *task, const km_rls2_setup *setup, km_rls2_path *out,
                km_error *err);

/* The path table as CSV (header line, then one line per lambda), written atomically. */
int km_rls2_write_csv(const km_rls2_path *p, const char *path, km_error *err);

/* The selected kernels of every lambda as CSV, written atomically: a header line
 * "lambda,rank,weight,kernel", then one line per kernel with d_k > 0, largest weight first
 * (weight: d_k averaged over the decision functions; kernel: basis->b[k] in kernel-list
 * syntax, km_basis_format, in double quotes). */
int km_rls2_write_selected(const km_rls2_path *p, const km_basis_set *basis, const char *path,
                           km_error *err);

/* A short name of basis kernel k for tables: the kernel-list syntax (doc/kernel-list.md)
 * without the parameters that equal its defaults (gamma=1 coef0=0 degree=3) and without
 * "features=all", numbers to 3 significant digits; snprintf convention. */
int km_rls2_kernel_name(const km_basis_set *basis, int k, char *buf, size_t len);

/* The model at the chosen lambda: the basis kernels with d_k > 0 in some decision function,
 * the training rows of X (train[] as in the task) with their coefficients. */
int km_rls2_model(const km_rls2_path *p, const km_basis_set *basis, const km_problem *X,
                  const int64_t *train, km_model **out, km_error *err);

/* n values log-spaced from hi down to lo (n = 1: hi). */
void km_rls2_lambdas(double lo, double hi, int n, double *lambda);

/* rls2-path's guess of the task: 1 (classes) when every label of P is an integer and there
 * are at most 32 distinct ones, else 0 (regression). */
int km_rls2_looks_like_classes(const km_problem *P);

#endif
