/* metrics.c - see metrics.h. */
#include "metrics.h"

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
