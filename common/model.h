/* model.h - trained models and their text file format (doc/model-format.md). */
#ifndef KM_MODEL_H
#define KM_MODEL_H

#include <stdint.h>

#include "error.h"
#include "loss.h"

#define KM_MODEL_FORMAT "kmtk-model"
#define KM_MODEL_VERSION 1

/*
 * A linear model: nr_w weight vectors of dimension n (+1 bias weight when bias >= 0),
 * stored row-major, w[j * nr_w + k] = weight of feature j (0-based) in vector k; row n
 * holds the bias weights. Classification (nr_class >= 2, labels ascending): nr_w = 1 when
 * nr_class = 2 (decision > 0 means labels[1]), else one-versus-all with nr_w = nr_class.
 * Regression: nr_class = 0, nr_w = 1.
 */
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
} km_model;

/* Allocates a model with zero weights; labels/label_weight left for the caller to fill. */
km_model *km_model_new(km_loss loss, int32_t n, int nr_class, int nr_w, km_error *err);
void km_model_free(km_model *m);

/* Writes the model atomically (temp file in the same directory + rename). */
int km_model_write(const km_model *m, const char *path, km_error *err);

/* Reads a model; rejects other formats, unknown versions and damaged files with
 * "PATH:LINE: ..." messages. */
int km_model_read(const char *path, km_model **out, km_error *err);

/* Decision values of the model on one sparse row (index 0-based, features >= n ignored):
 * dec gets nr_w values. */
void km_model_decision(const km_model *m, const int32_t *index, const double *value,
                       int64_t nnz, double *dec);

/* The predicted label (classification) or value (regression) from decision values. */
double km_model_predict_label(const km_model *m, const double *dec);

#endif
