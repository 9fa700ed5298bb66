/* prob.h - class probabilities: logistic regression's own, and Platt scaling of SVM decision
 * values (Platt 1999, with the improved algorithm of Lin, Lin and Weng 2007, "A note on
 * Platt's probabilistic outputs for support vector machines"). See doc/model-format.md and
 * kmtk-predict(1) -b. */
#ifndef KM_PROB_H
#define KM_PROB_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "kmtk.h"

/*
 * Platt's sigmoid P(y = 1 | f) = 1/(1 + exp(A f + B)) fitted to decision values f[0..l) with
 * labels y[i] > 0 (positive) or not, by Lin, Lin and Weng's Algorithm 1: minimizes the
 * cross-entropy
 *   F(A, B) = sum_i t_i (A f_i + B) + log(1 + exp(-(A f_i + B))),
 *   t_i = (N+ + 1)/(N+ + 2) for positives, 1/(N- + 2) for negatives (the smoothed targets),
 * by Newton's method on (A, B) with H + 1e-12 I and a backtracking (Armijo) line search,
 * from A = 0, B = log((N- + 1)/(N+ + 1)); every exp is taken of a non-positive argument.
 * Returns the Newton iterations (at most 100), or -1 when the line search failed (A, B are
 * then the last point reached, still a decrease of F).
 */
int km_platt_fit(const double *f, const double *y, int64_t l, double *A, double *B);

/* F(A, B) above (what km_platt_fit minimizes), for tests. */
double km_platt_objective(const double *f, const double *y, int64_t l, double A, double B);

/* log(1/(1 + e^x)) = -log(1 + e^x) without overflow. */
double km_log_sigmoid_neg(double x);

/* The optional header keys "probA" and "probB" (nr_w values each) of a classification model
 * kind (linear, kernel): written only when m has them, so models without them keep their
 * bytes; read when present (KM_EINPUT for a wrong count or a value that is not finite). */
void km_prob_write_keys(const km_model *m, FILE *f);
int km_prob_read_keys(km_mio *io, km_model *m, km_error *err);

/* Sets m's Platt parameters (nr_w each, copied). */
int km_model_set_platt(km_model *m, const double *A, const double *B, km_error *err);

#endif
