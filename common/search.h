/* search.h - parameter search by cross-validation: a C path with warm starts (LIBLINEAR's
 * train -C) and a grid over C and gamma (LIBSVM's grid.py), for any method of the table
 * with the option C (and gamma for the grid). */
#ifndef KM_SEARCH_H
#define KM_SEARCH_H

#include "kmtk.h"

/* One point searched: its parameters and CV score. */
typedef struct km_search_point {
    double C, gamma;      /* gamma NaN: not searched */
    double score;
} km_search_point;

typedef struct km_search {
    km_search_point *points;   /* in the order run (= printed) */
    int npoints;
    int best;                  /* index of the best point: the first with the best score */
    int nC, ng;                /* grid: its axes (log2 values), ng = 0 without gamma */
    double *log2C, *log2g;
} km_search;

/* The C path: from the C set in p (else LIBLINEAR's start, 2^floor(log2(1 / (l max_i
 * k(x_i, x_i))))) upward by factors of 2, each C cross-validated (folds, metric as
 * km_method_cv_score) with every fold warm-started from its model of the previous C. Stops
 * when KM_SEARCH_PATIENCE steps in a row did not improve the best score once the score has
 * left the start's value (small C often gives the majority class for several steps), or
 * after C = KM_SEARCH_MAX_C. The best: the first C with the best score (ties: the smaller
 * C). rep->text gets a line per C and the best. */
#define KM_SEARCH_PATIENCE 3
#define KM_SEARCH_MAX_C 1024.0
int km_search_C(const km_method *m, const km_problem *P, const km_params *p, int folds,
                const char *metric, km_search *out, km_report *rep, km_error *err);

/* The grid spec "C=LO:HI:N,g=LO:HI:N" (log2 exponents, N points from LO to HI, either
 * order; a key left out takes grid.py's default: C=-5:15:11, g=3:-15:10; "default": both);
 * g only for methods with gamma (km_search_grid drops the default g without a kernel).
 * KM_EUSAGE naming what is wrong. */
int km_search_grid_parse(const km_method *m, const char *spec, km_search *out, km_error *err);

/* The grid: for each gamma in order, the C values upward with warm starts as in
 * km_search_C (every C, no early stop). rep->text as km_search_C. */
int km_search_grid(const km_method *m, const km_problem *P, const km_params *p, int folds,
                   const char *metric, const char *spec, km_search *out, km_report *rep,
                   km_error *err);

/* A heat map of the grid's scores over log2 C and log2 gamma (the best marked), as an SVG
 * file (km_plot_heatmap_svg). */
int km_search_plot(const km_search *s, const char *metric, const char *path, km_error *err);

void km_search_free(km_search *s);

#endif
