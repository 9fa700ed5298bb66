/* model_linear.c - the linear model kind (model.h): nr_w weight vectors, "w" section. */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "prob.h"

/* The body is the weight array itself: (n + 1) * nr_w doubles, row n = bias weights. */
static int64_t weight_rows(const km_model *m)
{
    return (int64_t)m->n + (m->bias >= 0);
}

/* The optional probability keys (prob.h): the only header keys of the kind. */
static int write_head(const km_model *m, FILE *f)
{
    km_prob_write_keys(m, f);
    return 0;
}

static int write_body(const km_model *m, FILE *f)
{
    fprintf(f, "nr_w %d\nw\n", m->nr_w);
    km_model_put_rows(f, m->body, weight_rows(m), m->nr_w);
    return 0;
}

static int read_body(km_mio *io, km_model *m, km_error *err)
{
    int rc = km_model_check_nr_w(io, m);
    if (rc || (rc = km_prob_read_keys(io, m, err)))
        return rc;
    /* a line of nr_w weights has at least 2 nr_w characters */
    if ((rc = km_mio_count(io, "nr_feature", weight_rows(m), 2 * (int64_t)m->nr_w,
                           "weight lines")))
        return rc;
    double *w = calloc(((size_t)m->n + 1) * (size_t)m->nr_w, sizeof *w);
    if (!w)
        return km_error_nomem(err, "model weights");
    m->body = w;
    for (int64_t j = 0, rows = weight_rows(m); j < rows; j++) {
        const char *line = km_mio_line(io);
        if (!line)
            return km_mio_truncated(io, "%lld of %lld weight lines", (long long)j,
                                    (long long)rows);
        if (km_model_parse_numbers(line, w + j * m->nr_w, m->nr_w))
            return km_mio_bad(io, "expected nr_w weights");
    }
    return KM_OK;
}

static void free_body(km_model *m)
{
    free(m->body);
    m->body = NULL;
}

void km_model_decision(const km_model *m, const int32_t *index, const double *value,
                       int64_t nnz, double *dec)
{
    int nw = m->nr_w;
    const double *w = m->body;
    for (int k = 0; k < nw; k++)
        dec[k] = m->bias >= 0 ? m->bias * w[(int64_t)m->n * nw + k] : 0;
    for (int64_t t = 0; t < nnz; t++) {
        if (index[t] >= m->n)
            continue;   /* features the model never saw, as LIBLINEAR */
        const double *wj = w + (int64_t)index[t] * nw;
        for (int k = 0; k < nw; k++)
            dec[k] += value[t] * wj[k];
    }
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    (void)threads;
    (void)err;
    for (int64_t a = 0; a < count; a++) {
        int64_t i = rows ? rows[a] : a, b = X->row_ptr[i], nnz = X->row_ptr[i + 1] - b;
        km_model_decision(m, nnz ? X->index + b : NULL, nnz ? X->value + b : NULL, nnz,
                          dec + a * m->nr_w);   /* (empty rows may have no arrays) */
    }
    return KM_OK;
}

const km_model_kind km_kind_linear = {
    .name = "linear",
    .body_name = "weights",
    .section = "w",
    .write_head = write_head,
    .write_body = write_body,
    .read = read_body,
    .free_body = free_body,
    .decision_rows = decision_rows,
};

km_model *km_model_new(km_loss loss, int32_t n, int nr_class, int nr_w, km_error *err)
{
    km_model *m = km_model_alloc(&km_kind_linear, loss, n, nr_class, nr_w, err);
    if (m && !(m->body = calloc(((size_t)n + 1) * (size_t)nr_w, sizeof(double)))) {
        km_model_free(m);
        km_error_nomem(err, "model weights");
        return NULL;
    }
    return m;
}

double *km_model_w(const km_model *m)
{
    return m->kind == &km_kind_linear ? m->body : NULL;
}
