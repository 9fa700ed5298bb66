/* oklpath.h - low-rank output kernel learning along a regularization path (seed 001,
 * section 5.3): kernel matrices from the data, the path, selection on validation data,
 * the path table and the model at the chosen lambda. */
#ifndef KM_OKLPATH_H
#define KM_OKLPATH_H

#include <stdint.h>

#include "error.h"
#include "kernel.h"
#include "model.h"
#include "okl.h"
#include "problem.h"

#define KM_OKL_DEFAULT_NL 25       /* lambdas of the default grid */
#define KM_OKL_DEFAULT_SPAN 1e-5   /* the default grid is [1e-5 alpha, alpha] (section 6.1) */

typedef struct km_okl_setup {
    km_kernel kernel;       /* input kernel K */
    km_okl_param par;       /* rank p (0: min(l, m)), delta, max_iter, identity */
    double lmin, lmax;      /* lambdas log-spaced in [lmin, lmax]; 0, 0: [1e-5 alpha, alpha] */
    int nl;                 /* number of lambdas (0: 25) */
    int threads;            /* threads for the kernel matrices */
    /* called after each lambda, when set */
    void (*progress)(void *ctx, int t, int nl, const km_okl_info *row, double seconds);
    void *ctx;
} km_okl_setup;

typedef struct km_okl_path {
    int nl;
    km_okl_info *row;       /* per lambda, from large to small */
    double *seconds;        /* per lambda: time of its solve */
    int chosen;             /* least validation MSE (ties: the larger lambda); without
                             * validation data the last (smallest) lambda */
    double alpha;           /* sqrt(||Y'KY||_2) */
    int p;                  /* the rank used: min(p, l) (m for the baseline L = I) */
    int has_valid;
    double setup_seconds;   /* kernel matrices, eigendecomposition and products */
    double path_seconds;    /* all the solves */
} km_okl_path;

/* Runs the path on training data P (multi-output labels, P->nout = m) with optional
 * validation data V (same m, or NULL); fills *path and, when model is not NULL, the OKL
 * model at the chosen lambda (all training rows as expansion vectors). */
int km_okl_run(const km_problem *P, const km_problem *V, const km_okl_setup *S,
               km_okl_path *path, km_model **model, km_error *err);
void km_okl_path_free(km_okl_path *path);

/* Writes the path table (CSV): lambda, objective, rank, iterations, seconds, train_mse,
 * valid_mse, chosen. */
int km_okl_write_csv(const km_okl_path *path, const char *file, km_error *err);

#endif
