/* model_okl.c - the okl model kind (model.h; seed 001): a kernel expansion of p codes and
 * the output map B that decodes them into the outputs. */
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "model.h"

static int write_head(const km_model *m, FILE *f)
{
    const km_okl_body *o = m->body;
    km_mio_put(f, "lambda", o->lambda);
    fprintf(f, "nr_output %lld\n", (long long)m->nr_output);
    km_model_put_kernel(f, "", &o->e.kernel);
    return 0;
}

/* The support vectors, then "output_map identity" or "output_map" and nr_output rows of B. */
static int write_body(const km_model *m, FILE *f)
{
    const km_okl_body *o = m->body;
    km_expansion_write(f, m, &o->e);
    if (!o->output_map) {
        fputs("output_map identity\n", f);
        return 0;
    }
    fputs("output_map\n", f);
    km_model_put_rows(f, o->output_map, m->nr_output, m->nr_w);
    return 0;
}

/* An okl model's "output_map" section: "output_map identity" (map NULL, needs nr_w =
 * nr_output) or "output_map" and nr_output lines of nr_w numbers. */
static int read_output_map(km_mio *io, int64_t nr_output, int64_t nr_w, double **map,
                           km_error *err)
{
    *map = NULL;
    const char *line = km_mio_line(io);
    if (!line)
        return km_mio_truncated(io, "no 'output_map' after the support vectors");
    if (strcmp(line, "output_map identity") == 0)
        return nr_w == nr_output ? KM_OK : km_mio_bad(io, "the identity output map needs "
                                                      "nr_w = nr_output");
    if (strcmp(line, "output_map") != 0)
        return km_mio_bad(io, "expected 'output_map' or 'output_map identity'");
    int rc0 = km_mio_count(io, "nr_output", nr_output, 2 * nr_w, "output map lines");
    if (rc0)
        return rc0;
    double *B = malloc((size_t)(nr_output * nr_w) * sizeof *B);
    if (!B)
        return km_error_nomem(err, "output map");
    for (int64_t j = 0; j < nr_output; j++) {
        int rc = KM_OK;
        if (!(line = km_mio_line(io)))
            rc = km_mio_truncated(io, "%lld of %lld output map lines", (long long)j,
                                  (long long)nr_output);
        else if (km_model_parse_numbers(line, B + j * nr_w, nr_w))
            rc = km_mio_bad(io, "expected nr_w numbers (a row of the output map)");
        if (rc != KM_OK) {
            free(B);
            return rc;
        }
    }
    *map = B;
    return KM_OK;
}

static int read_body(km_mio *io, km_model *m, km_error *err)
{
    km_kernel k;
    long long nr_sv, nr_output;
    double lambda;
    const char *v;
    int rc = km_expansion_read_head(io, &k, &nr_sv, err);
    if (rc)
        return rc;
    if (!(v = km_mio_key(io, "nr_output")) || km_model_parse_int(v, 1, INT32_MAX, &nr_output))
        return km_mio_bad(io, "okl model header incomplete or bad (need nr_output)");
    if (!(v = km_mio_key(io, "lambda")) || km_mio_number(v, &lambda) || lambda < 0)
        return km_mio_bad(io, "okl model header incomplete or bad (need lambda >= 0)");
    if (m->nr_class != 0 || m->loss != KM_LOSS_RLS || m->bias >= 0)
        return km_mio_bad(io, "okl model header inconsistent (need nr_class 0, loss rls, "
                          "bias -1)");
    km_problem *sv;
    double *coef, *map;
    if ((rc = km_model_get_svs(io, m, nr_sv, &sv, &coef, err)))
        return rc;
    if ((rc = read_output_map(io, nr_output, m->nr_w, &map, err))) {
        km_problem_free(sv);
        free(coef);
        return rc;
    }
    return km_model_set_okl(m, &k, sv, coef, nr_output, map, lambda, err);
}

static void free_body(km_model *m)
{
    km_okl_body *o = m->body;
    km_expansion_free(&o->e);
    free(o->output_map);
    free(o);
    m->body = NULL;
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    return km_expansion_rows(m, &((const km_okl_body *)m->body)->e, X, rows, count, dec,
                             threads, err);
}

/* The outputs g(x) = B g1(x) from the codes g1(x) (identity when B is NULL). */
static void outputs(const km_model *m, const double *codes, double *out)
{
    const km_okl_body *o = m->body;
    if (!o->output_map) {
        memcpy(out, codes, (size_t)m->nr_output * sizeof *out);
        return;
    }
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (blasint)m->nr_output, m->nr_w, 1, o->output_map,
                m->nr_w, codes, 1, 0, out, 1);
}

const km_model_kind km_kind_okl = {
    .name = "okl",
    .body_name = "output map",
    .section = "sv",
    .write_head = write_head,
    .write_body = write_body,
    .read = read_body,
    .free_body = free_body,
    .decision_rows = decision_rows,
    .outputs = outputs,
};

int km_model_set_okl(km_model *m, const km_kernel *k, km_problem *sv, double *A,
                     int64_t nr_output, double *B, double lambda, km_error *err)
{
    km_okl_body *o = calloc(1, sizeof *o);
    if (!o) {
        km_problem_free(sv);
        free(A);
        free(B);
        return km_error_nomem(err, "okl model");
    }
    km_model_set_body(m, &km_kind_okl, o);
    m->loss = KM_LOSS_RLS;
    m->bias = -1;
    m->nr_output = nr_output;
    o->output_map = B;
    o->lambda = lambda;
    int rc = km_expansion_init(&o->e, k, sv, A, err);
    if (rc == KM_OK && !B && nr_output != m->nr_w)
        rc = km_error_set(err, KM_EUSAGE, "okl model: the identity output map needs nr_w = "
                          "nr_output");
    return rc;
}

km_okl_body *km_model_okl(const km_model *m)
{
    return m->kind == &km_kind_okl ? m->body : NULL;
}
