/* metrics.c - see metrics.h. */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>

void km_metrics_add(km_metrics *m, double y, double pred)
{
    m->n++;
    m->correct += pred == y;
    m->se += (pred - y) * (pred - y);
    m->sy += y;
    m->sp += pred;
    m->syy += y * y;
    m->spp += pred * pred;
    m->syp += y * pred;
}

double km_metrics_accuracy(const km_metrics *m)
{
    return m->n ? 100.0 * (double)m->correct / (double)m->n : 0;
}

double km_metrics_mse(const km_metrics *m)
{
    return m->n ? m->se / (double)m->n : 0;
}

double km_metrics_scc(const km_metrics *m)
{
    double n = (double)m->n;
    double num = n * m->syp - m->sp * m->sy;
    double den = (n * m->spp - m->sp * m->sp) * (n * m->syy - m->sy * m->sy);
    return den > 0 ? num * num / den : 0;
}

static int by_score(const void *a, const void *b)
{
    double x = ((const km_scored *)a)->score, y = ((const km_scored *)b)->score;
    return (x > y) - (x < y);
}

double km_metrics_auc(km_scored *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, by_score);
    double rank_sum = 0;
    int64_t np = 0;
    for (int64_t a = 0; a < n;) {   /* ranks from 1, ties share their mean rank */
        int64_t b = a;
        while (b + 1 < n && v[b + 1].score == v[a].score)
            b++;
        double mean_rank = (double)(a + b) / 2 + 1;
        for (int64_t q = a; q <= b; q++)
            if (v[q].pos) {
                rank_sum += mean_rank;
                np++;
            }
        a = b + 1;
    }
    int64_t nn = n - np;
    if (np == 0 || nn == 0)
        return NAN;
    return (rank_sum - (double)np * (double)(np + 1) / 2) / ((double)np * (double)nn);
}

double km_metrics_f1(const double *y, const double *pred, int64_t n, double pos)
{
    int64_t tp = 0, fp = 0, fn = 0;
    for (int64_t i = 0; i < n; i++) {
        tp += y[i] == pos && pred[i] == pos;
        fp += y[i] != pos && pred[i] == pos;
        fn += y[i] == pos && pred[i] != pos;
    }
    return tp ? 2.0 * (double)tp / (double)(2 * tp + fp + fn) : 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double km_metrics_f1_classes(const double *y, const double *pred, int64_t n)
{
    double *labels = malloc(((size_t)n + 1) * sizeof *labels);
    if (!labels)
        return -1;
    for (int64_t i = 0; i < n; i++)
        labels[i] = y[i];
    qsort(labels, (size_t)n, sizeof *labels, by_value);
    int64_t nc = 0;
    for (int64_t i = 0; i < n; i++)
        if (nc == 0 || labels[i] != labels[nc - 1])
            labels[nc++] = labels[i];
    double f1 = NAN;
    if (nc == 2) {
        f1 = km_metrics_f1(y, pred, n, labels[1]);
    } else if (nc > 2) {
        f1 = 0;
        for (int64_t k = 0; k < nc; k++)
            f1 += km_metrics_f1(y, pred, n, labels[k]);
        f1 /= (double)nc;
    }
    free(labels);
    return f1;
}
