/* metrics.h - accuracy, mean squared error and squared correlation, accumulated row by row. */
#ifndef KM_METRICS_H
#define KM_METRICS_H

#include <stdint.h>

typedef struct km_metrics {
    int64_t n, correct;
    double se, sy, sp, syy, spp, syp;
} km_metrics;

/* Adds one (true value, prediction) pair. */
void km_metrics_add(km_metrics *m, double y, double pred);

/* Percentage of exact matches (classification). */
double km_metrics_accuracy(const km_metrics *m);

/* Mean squared error (regression). */
double km_metrics_mse(const km_metrics *m);

/* Squared correlation coefficient of predictions and true values, as LIBLINEAR prints. */
double km_metrics_scc(const km_metrics *m);

/* A scored row for the AUC: its score and whether it is of the positive class. */
typedef struct km_scored {
    double score;
    int pos;
} km_scored;

/* The area under the ROC curve of the rows v[0..n), positives against the others
 * (Mann-Whitney U / (n+ n-), ties counted half); NaN when a class is empty. Sorts v. */
double km_metrics_auc(km_scored *v, int64_t n);

/* F1 = 2 TP / (2 TP + FP + FN) of class pos among the pairs (y[i], pred[i]), i < n: the
 * harmonic mean of precision and recall; 0 when TP = 0. */
double km_metrics_f1(const double *y, const double *pred, int64_t n, double pos);

/* The F1 of the classes: two classes (the labels of y): the F1 of the larger label (+1 of
 * -1/+1); more: the mean over the classes of y of their F1 (macro-F1). NaN when y has one
 * class or none; -1 when out of memory. */
double km_metrics_f1_classes(const double *y, const double *pred, int64_t n);

#endif
