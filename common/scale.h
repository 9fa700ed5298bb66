/* scale.h - feature scaling with saved parameters, LIBSVM's svm-scale habits
 * (doc/kmtk-scale.1): each feature onto [lower, upper] by its minimum and maximum, or
 * standardized by its mean and standard deviation; labels optionally onto [y_lower, y_upper].
 *
 * Range mode, exactly svm-scale's arithmetic (so its output is reproduced bit for bit):
 *   x' = lower                                           if x == min_j
 *      = upper                                           if x == max_j
 *      = lower + (upper - lower) * (x - min_j) / (max_j - min_j)   otherwise,
 * min_j and max_j over all rows, absent entries counting as 0 (unless every row has
 * feature j). A zero that maps to a non-zero value is written (svm-scale does too: -l 0 keeps
 * non-negative sparse data sparse).
 * Standardize mode: x' = (x - mean_j) / sd_j with --center, else x' = x / sd_j (zeros stay
 * zeros: sparse data stay sparse), mean_j = sum_i x_ij / l, sd_j^2 = sum_i (x_ij - mean_j)^2
 * / (l - 1) (the sample standard deviation, as datasets/standardize and R's scale()).
 * A constant feature (min_j == max_j, absent entries counting as 0) has no parameters and
 * is dropped from the output (scaled to 0, as svm-scale does); so is a feature that has no
 * parameters in a restored file. */
#ifndef KM_SCALE_H
#define KM_SCALE_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "problem.h"

#define KM_SCALE_FORMAT "kmtk-scale"
#define KM_SCALE_VERSION 1

typedef struct km_scale {
    int standardize;          /* 0: range [lower, upper]; 1: mean and standard deviation */
    int center;               /* standardize: subtract the mean (dense output) */
    double lower, upper;      /* range mode: the target range of the features */
    int y_scaling;            /* labels onto [y_lower, y_upper] by their y_min, y_max */
    double y_lower, y_upper, y_min, y_max;
    int64_t k;                /* features with parameters */
    int32_t *feature;         /* k 0-based indices, increasing */
    double *a, *b;            /* range: min_j, max_j; standardize: mean_j, sd_j */
    int64_t kz;               /* the features whose 0 maps to a non-zero value (written */
    int32_t *zslot;           /* for every row that lacks them): their slots in feature[] */
    double *zval;             /* and their scaled zero */
} km_scale;

/* Computes s's parameters from P (s->standardize, center, lower, upper, y_scaling, y_lower,
 * y_upper set by the caller). KM_EUSAGE when y_scaling is asked of multi-output data or a
 * range is empty; KM_EINTERNAL when out of memory. */
int km_scale_fit(km_scale *s, const km_problem *P, km_error *err);

/* x' of value v of the feature in slot t of s->feature. */
double km_scale_value(const km_scale *s, int64_t t, double v);

/* The scaled label (y itself when s->y_scaling is 0). */
double km_scale_label(const km_scale *s, double y);

/* The slot of 0-based feature j in s->feature, or -1 when it has no parameters. */
int64_t km_scale_slot(const km_scale *s, int32_t j);

/* One row scaled: out_index/out_value (room for nnz + s->kz entries) get the non-zero
 * results, increasing; returns their count. *dropped gets the number of the row's entries
 * whose feature has no parameters. */
int64_t km_scale_row(const km_scale *s, const int32_t *index, const double *value, int64_t nnz,
                     int32_t *out_index, double *out_value, int64_t *dropped);

/* Writes P scaled as svmlight text to f (labels, multi-output labels and qid: kept):
 * *nnz_out gets the number of entries written, *dropped / *first_dropped (0-based, -1 if
 * none) the entries whose feature has no parameters. 0, or -1 on a write error (errno) or
 * when out of memory (err set). */
int km_scale_write_data(const km_scale *s, const km_problem *P, FILE *f, int64_t *nnz_out,
                        int64_t *dropped, int32_t *first_dropped, km_error *err);

/* Writes the parameters (the format "kmtk-scale 1", doc/kmtk-scale.1), atomically. */
int km_scale_save(const km_scale *s, const char *path, km_error *err);

/* Reads parameters written by km_scale_save, or by LIBSVM's svm-scale -s (first line "x" or
 * "y"). Errors are KM_EINPUT "FILE:LINE:COL: what". *s is zeroed first; freed on error. */
int km_scale_load(const char *path, km_scale *s, km_error *err);

/* Frees s's arrays (the struct itself is the caller's); NULL-safe. */
void km_scale_free(km_scale *s);

#endif
