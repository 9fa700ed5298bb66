/* prob.c - see prob.h and kmtk.h (km_predict_proba). */
#include "prob.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loss.h"
#include "model.h"

double km_log_sigmoid_neg(double x)
{
    return x > 0 ? -(x + log1p(exp(-x))) : -log1p(exp(x));
}

/* t (A f + B) + log(1 + e^{-(A f + B)}), written with exp of a non-positive argument. */
static double platt_term(double t, double fApB)
{
    return fApB >= 0 ? t * fApB + log1p(exp(-fApB)) : (t - 1) * fApB + log1p(exp(fApB));
}

double km_platt_objective(const double *f, const double *y, int64_t l, double A, double B)
{
    double np = 0, nn = 0, F = 0;
    for (int64_t i = 0; i < l; i++)
        np += y[i] > 0, nn += !(y[i] > 0);
    double hi = (np + 1) / (np + 2), lo = 1 / (nn + 2);
    for (int64_t i = 0; i < l; i++)
        F += platt_term(y[i] > 0 ? hi : lo, A * f[i] + B);
    return F;
}

int km_platt_fit(const double *f, const double *y, int64_t l, double *A, double *B)
{
    const int max_iter = 100;
    const double min_step = 1e-10, sigma = 1e-12, eps = 1e-5;
    double np = 0, nn = 0;
    for (int64_t i = 0; i < l; i++)
        np += y[i] > 0, nn += !(y[i] > 0);
    double hi = (np + 1) / (np + 2), lo = 1 / (nn + 2);   /* the smoothed targets t_i */
    double a = 0, b = log((nn + 1) / (np + 1));
    double fval = km_platt_objective(f, y, l, a, b);
    int iter;
    for (iter = 0; iter < max_iter; iter++) {
        /* gradient and Hessian (+ sigma I) of F at (a, b) */
        double h11 = sigma, h22 = sigma, h21 = 0, g1 = 0, g2 = 0;
        for (int64_t i = 0; i < l; i++) {
            double fApB = f[i] * a + b, p, q;   /* p = 1/(1 + e^{fApB}), q = 1 - p */
            if (fApB >= 0) {
                double e = exp(-fApB);
                p = e / (1 + e);
                q = 1 / (1 + e);
            } else {
                double e = exp(fApB);
                p = 1 / (1 + e);
                q = e / (1 + e);
            }
            double d2 = p * q, d1 = (y[i] > 0 ? hi : lo) - p;
            h11 += f[i] * f[i] * d2;
            h22 += d2;
            h21 += f[i] * d2;
            g1 += f[i] * d1;
            g2 += d1;
        }
        if (fabs(g1) < eps && fabs(g2) < eps)
            break;
        double det = h11 * h22 - h21 * h21;   /* Newton direction -H^{-1} g */
        double dA = -(h22 * g1 - h21 * g2) / det, dB = -(-h21 * g1 + h11 * g2) / det;
        double gd = g1 * dA + g2 * dB, step = 1;
        while (step >= min_step) {   /* backtracking: sufficient decrease (Armijo, 1e-4) */
            double na = a + step * dA, nb = b + step * dB;
            double nf = km_platt_objective(f, y, l, na, nb);
            if (nf < fval + 1e-4 * step * gd) {
                a = na;
                b = nb;
                fval = nf;
                break;
            }
            step /= 2;
        }
        if (step < min_step) {
            *A = a;
            *B = b;
            return -1;
        }
    }
    *A = a;
    *B = b;
    return iter;
}

void km_prob_write_keys(const km_model *m, FILE *f)
{
    if (!m->prob_A || !m->prob_B)
        return;
    km_model_put_line(f, "probA", m->prob_A, m->nr_w, NULL);
    km_model_put_line(f, "probB", m->prob_B, m->nr_w, NULL);
}

int km_model_set_platt(km_model *m, const double *A, const double *B, km_error *err)
{
    double *a = malloc((size_t)m->nr_w * sizeof *a), *b = malloc((size_t)m->nr_w * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return km_error_nomem(err, "probability parameters");
    }
    memcpy(a, A, (size_t)m->nr_w * sizeof *a);
    memcpy(b, B, (size_t)m->nr_w * sizeof *b);
    free(m->prob_A);
    free(m->prob_B);
    m->prob_A = a;
    m->prob_B = b;
    return KM_OK;
}

int km_prob_read_keys(km_mio *io, km_model *m, km_error *err)
{
    const char *va = km_mio_key(io, "probA"), *vb = km_mio_key(io, "probB");
    if (!va && !vb)
        return KM_OK;
    if (!va || !vb || m->nr_class < 2)
        return km_mio_bad(io, "probA and probB come together, in classification models");
    /* nr_w numbers take at least 2 nr_w - 1 characters: no allocation before */
    if ((int64_t)strlen(va) < 2 * (int64_t)m->nr_w - 1 ||
        (int64_t)strlen(vb) < 2 * (int64_t)m->nr_w - 1)
        return km_mio_bad(io, "probA and probB need nr_w numbers each");
    double *a = malloc((size_t)m->nr_w * sizeof *a), *b = malloc((size_t)m->nr_w * sizeof *b);
    int rc = a && b ? KM_OK : km_error_nomem(err, "probability parameters");
    if (rc == KM_OK && (km_model_parse_numbers(va, a, m->nr_w) ||
                        km_model_parse_numbers(vb, b, m->nr_w)))
        rc = km_mio_bad(io, "probA and probB need nr_w numbers each");
    for (int k = 0; rc == KM_OK && k < m->nr_w; k++)
        if (!isfinite(a[k]) || !isfinite(b[k]))
            rc = km_mio_bad(io, "probA and probB must be finite");
    if (rc == KM_OK)
        rc = km_model_set_platt(m, a, b, err);
    free(a);
    free(b);
    return rc;
}

int km_model_has_probability(const km_model *m)
{
    return m->nr_class >= 2 && m->nr_output == 0 &&
           (m->loss == KM_LOSS_LOGISTIC || (m->prob_A && m->prob_B));
}

/* log P(positive | f) of decision function k: Platt's sigmoid, or logistic regression's own
 * (A = -1, B = 0: 1/(1 + e^{-f})) when the model has no Platt parameters. */
static double log_pos(const km_model *m, int k, double f)
{
    double A = m->prob_A ? m->prob_A[k] : -1, B = m->prob_B ? m->prob_B[k] : 0;
    return km_log_sigmoid_neg(A * f + B);
}

void km_model_probability(const km_model *m, const double *dec, double *prob)
{
    int nc = m->nr_class;
    if (nc == 2) {   /* one decision value, > 0 for labels[1] */
        double A = m->prob_A ? m->prob_A[0] : -1, B = m->prob_B ? m->prob_B[0] : 0;
        double x = A * dec[0] + B;
        prob[1] = exp(km_log_sigmoid_neg(x));
        prob[0] = exp(km_log_sigmoid_neg(-x));   /* 1 - prob[1], without cancellation */
        return;
    }
    /* one-versus-all: p_k proportional to P(k | f_k), normalised (in logs: no underflow) */
    double top = -INFINITY, sum = 0;
    for (int k = 0; k < nc; k++) {
        prob[k] = log_pos(m, k, dec[k]);
        top = prob[k] > top ? prob[k] : top;
    }
    for (int k = 0; k < nc; k++)
        sum += prob[k] = exp(prob[k] - top);
    for (int k = 0; k < nc; k++)
        prob[k] /= sum;
}

static void proba_row(void *prob, const km_model *m, int64_t i, const double *dec)
{
    km_model_probability(m, dec, (double *)prob + i * m->nr_class);
}

int km_predict_proba(const km_model *m, const km_problem *X, double *prob, km_error *err)
{
    if (!km_model_has_probability(m))
        return km_error_set(err, KM_EUSAGE, "the model has no probabilities: train -s logreg, "
                            "or a classifier with -b 1 (Platt scaling)");
    return km_model_each_decision(m, X, proba_row, prob, "probabilities", err);
}
