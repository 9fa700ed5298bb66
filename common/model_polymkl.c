/* model_polymkl.c - the polymkl model kind (seed 002, polymkl.h): base kernels in
 * kernel-list syntax, the tuples' weights theta_t, rho^2, the feature standardization, y's
 * mean and scale, the (standardized) support vectors and c.
 * Header keys: degree, lambda, y_mean, y_scale, then nr_w, nr_basis, nr_tuple, nr_sv; after
 * the section line "basis": nr_basis kernel lines; "rho2 R0 .. RD"; "shift ..." and
 * "scale ..." (nr_feature numbers each); nr_tuple lines "THETA R1 .. Rd" (base kernels
 * 1-based; "THETA" alone: the constant tuple); with the optional header key "poly_form 1"
 * (linear base kernels on one feature each), nr_tuple lines "P_t": the coefficient of the
 * tuple's monomial in the explicit polynomial form; the nr_sv support vector lines "C
 * IDX:VAL". A file without poly_form (the previous release's) predicts with the support
 * vector form and is written back as it was. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "numparse.h"
#include "polymkl.h"

/* rho_t^2 of tuple t: rho_d^2, times sqrt(m_t) in a model with rho_monomial 1. */
static double tuple_rho2(const km_polymkl_body *b, int64_t t)
{
    int Dm = b->D > 0 ? b->D : 1;
    double r2 = b->rho2[b->td[t]];
    return b->mono ? r2 * sqrt(km_polymkl_orderings(b->td[t], b->tidx + t * Dm)) : r2;
}

static void body_free(km_polymkl_body *b)
{
    km_basis_set_free(&b->basis);
    free(b->rho2);
    free(b->shift);
    free(b->scale);
    free(b->td);
    free(b->tidx);
    free(b->theta);
    km_problem_free(b->sv);
    free(b->c);
    free(b->feat);
    free(b->poly);
}

/* 1 when every base kernel is linear on one feature: then feat[j] (allocated) is the
 * feature of base kernel j; 0 otherwise; -1 when out of memory. */
static int linear_features(km_polymkl_body *b, int32_t n)
{
    int r = b->basis.m;
    for (int j = 0; j < r; j++)
        if (b->basis.b[j].kernel.type != KM_KERNEL_LINEAR ||
            !(b->basis.b[j].nfeat == 1 || (b->basis.b[j].nfeat == 0 && n == 1)))
            return 0;
    if (!b->feat && !(b->feat = malloc((size_t)r * sizeof *b->feat)))
        return -1;
    for (int j = 0; j < r; j++)
        b->feat[j] = b->basis.b[j].nfeat ? b->basis.b[j].feat[0] : 0;
    return 1;
}

/* The explicit polynomial form when every base kernel is linear on one feature (and the
 * dense support vectors fit in 10^8 values); else nothing. */
static int build_poly(km_polymkl_body *b, int32_t n, km_error *err)
{
    int Dm = b->D > 0 ? b->D : 1, lin = linear_features(b, n);
    if (lin < 0)
        return km_error_nomem(err, "polymkl model");
    int64_t nsv = b->sv->l;
    if (!lin || (double)nsv * n > 1e8)
        return KM_OK;
    double *dense = calloc((size_t)(nsv > 0 ? nsv : 1) * (size_t)n, sizeof *dense);
    if (!(b->poly = malloc((size_t)(b->nt + 1) * sizeof *b->poly)) || !dense) {
        free(dense);
        return km_error_nomem(err, "polymkl model");
    }
    for (int64_t i = 0; i < nsv; i++)
        for (int64_t q = b->sv->row_ptr[i]; q < b->sv->row_ptr[i + 1]; q++)
            dense[i * n + b->sv->index[q]] = b->sv->value[q];
    for (int64_t t = 0; t < b->nt; t++) {
        double a = 0;
        for (int64_t i = 0; i < nsv; i++) {
            double p = b->c[i];
            for (int q = 0; q < b->td[t]; q++)
                p *= dense[i * n + b->feat[b->tidx[t * Dm + q]]];
            a += p;
        }
        b->poly[t] = b->theta[t] / tuple_rho2(b, t) * a;
    }
    free(dense);
    return KM_OK;
}

static void free_body(km_model *m)
{
    body_free(m->body);
    free(m->body);
    m->body = NULL;
}

static int write_head(const km_model *m, FILE *f)
{
    const km_polymkl_body *b = m->body;
    fprintf(f, "degree %d\n", b->D);
    km_mio_put(f, "lambda", b->lambda);
    km_mio_put(f, "y_mean", b->y_mean);
    km_mio_put(f, "y_scale", b->y_scale);
    return 0;
}

static int write_body(const km_model *m, FILE *f)
{
    const km_polymkl_body *b = m->body;
    int Dm = b->D > 0 ? b->D : 1;
    fprintf(f, "nr_w 1\nnr_basis %d\nnr_tuple %lld\nnr_sv %lld\n%s%sbasis\n", b->basis.m,
            (long long)b->nt, (long long)b->sv->l, b->mono ? "rho_monomial 1\n" : "",
            b->poly ? "poly_form 1\n" : "");
    for (int k = 0; k < b->basis.m; k++) {
        char spec[4096];
        if ((size_t)km_basis_format(&b->basis.b[k], spec, sizeof spec) >= sizeof spec)
            return -1;
        fprintf(f, "%s\n", spec);
    }
    km_model_put_line(f, "rho2", b->rho2, b->D + 1, NULL);
    km_model_put_line(f, "shift", b->shift, m->n, NULL);
    km_model_put_line(f, "scale", b->scale, m->n, NULL);
    for (int64_t t = 0; t < b->nt; t++) {
        char tail[64 * 12] = "", *p = tail;
        for (int i = 0; i < b->td[t]; i++)
            p += sprintf(p, i ? " %d" : "%d", (int)b->tidx[t * Dm + i] + 1);
        km_model_put_line(f, NULL, &b->theta[t], 1, b->td[t] ? tail : NULL);
    }
    for (int64_t t = 0; b->poly && t < b->nt; t++)
        km_model_put_line(f, NULL, &b->poly[t], 1, NULL);
    km_model_put_svs(f, b->sv, b->c, 1);
    return 0;
}

/* "KEY v1 .. vcount" into x; count -1: a line of one number alone. */
static int read_numbers(km_mio *io, const char *key, double *x, int64_t count)
{
    const char *line = km_mio_line(io);
    if (count < 0) {
        int status;
        if (!line)
            return km_mio_truncated(io, "no polynomial coefficient line");
        const char *e = km_parse_double(line, x, &status);
        if (status != KM_NUM_OK || *e || !isfinite(*x))
            return km_mio_bad(io, "expected one polynomial coefficient");
        return KM_OK;
    }
    size_t k = strlen(key);
    if (!line)
        return km_mio_truncated(io, "no '%s' line", key);
    if (strncmp(line, key, k) != 0 || (count > 0 && line[k] != ' ') ||
        (count == 0 && line[k] != '\0') ||
        (count > 0 && km_model_parse_numbers(line + k + 1, x, count)))
        return km_mio_bad(io, "expected '%s' and %lld numbers", key, (long long)count);
    return KM_OK;
}

static int read_body(km_mio *io, km_model *m, km_error *err)
{
    const char *v;
    long long D, nb, nt, nsv, pf = 0, mono = 0;
    double lambda, ym, ys;
    if (!(v = km_mio_key(io, "degree")) || km_model_parse_int(v, 0, 64, &D) ||
        !(v = km_mio_key(io, "lambda")) || km_mio_number(v, &lambda) || !(lambda > 0) ||
        !(v = km_mio_key(io, "y_mean")) || km_mio_number(v, &ym) ||
        !(v = km_mio_key(io, "y_scale")) || km_mio_number(v, &ys) ||
        !(v = km_mio_key(io, "nr_basis")) || km_model_parse_int(v, 1, 1 << 24, &nb) ||
        !(v = km_mio_key(io, "nr_tuple")) || km_model_parse_int(v, 0, INT64_MAX / 1024, &nt) ||
        !(v = km_mio_key(io, "nr_sv")) || km_model_parse_int(v, 0, INT64_MAX / 2, &nsv))
        return km_mio_bad(io, "polymkl model: need degree (0..64), lambda > 0, y_mean, "
                          "y_scale, nr_basis, nr_tuple, nr_sv");
    if ((v = km_mio_key(io, "poly_form")) && km_model_parse_int(v, 1, 1, &pf))
        return km_mio_bad(io, "poly_form: expected 1");
    if ((v = km_mio_key(io, "rho_monomial")) && km_model_parse_int(v, 1, 1, &mono))
        return km_mio_bad(io, "rho_monomial: expected 1");
    if (m->nr_class != 0 || m->nr_w != 1)
        return km_mio_bad(io, "polymkl model: need nr_class 0 and nr_w 1");
    km_polymkl_body *b = calloc(1, sizeof *b);
    if (!b)
        return km_error_nomem(err, "polymkl model");
    m->body = b;
    int Dm = D > 0 ? (int)D : 1;
    b->D = (int)D;
    b->lambda = lambda;
    b->y_mean = ym;
    b->y_scale = ys;
    b->mono = (int)mono;
    size_t nf = (size_t)(m->n > 0 ? m->n : 1);
    if (!(b->basis.b = calloc((size_t)nb, sizeof *b->basis.b)) ||
        !(b->rho2 = malloc((size_t)(D + 1) * sizeof *b->rho2)) ||
        !(b->shift = malloc(nf * sizeof *b->shift)) || !(b->scale = malloc(nf * sizeof *b->scale)) ||
        !(b->td = malloc((size_t)(nt + 1) * sizeof *b->td)) ||
        !(b->tidx = calloc((size_t)(nt + 1) * (size_t)Dm, sizeof *b->tidx)) ||
        !(b->theta = malloc((size_t)(nt + 1) * sizeof *b->theta)))
        return km_error_nomem(err, "polymkl model");
    const char *line;
    for (; b->basis.m < nb; b->basis.m++) {
        km_error kerr;
        if (!(line = km_mio_line(io)))
            return km_mio_truncated(io, "%d of %lld base kernels", b->basis.m, nb);
        if (km_basis_parse(line, m->n, &b->basis.b[b->basis.m], &kerr))
            return km_mio_bad(io, "bad base kernel: %s", kerr.msg);
    }
    int rc;
    if ((rc = read_numbers(io, "rho2", b->rho2, D + 1)) ||
        (rc = read_numbers(io, "shift", b->shift, m->n)) ||
        (rc = read_numbers(io, "scale", b->scale, m->n)))
        return rc;
    for (int d = 0; d <= D; d++)
        if (!(b->rho2[d] > 0))
            return km_mio_bad(io, "rho2 must be positive");
    for (; b->nt < nt; b->nt++) {
        if (!(line = km_mio_line(io)))
            return km_mio_truncated(io, "%lld of %lld tuples", (long long)b->nt, nt);
        int status, d = 0;
        const char *s = km_parse_double(line, &b->theta[b->nt], &status);
        if (status != KM_NUM_OK || !(b->theta[b->nt] >= 0))
            return km_mio_bad(io, "expected 'THETA R1 .. Rd' (theta >= 0)");
        while (*s == ' ') {
            uint64_t j;
            s = km_parse_uint(s + 1, (uint64_t)nb, &j, &status);
            if (status != KM_NUM_OK || j == 0 || d == D)
                return km_mio_bad(io, "expected at most degree base kernel indices in "
                                  "1..nr_basis");
            b->tidx[b->nt * Dm + d++] = (int32_t)j - 1;
        }
        if (*s)
            return km_mio_bad(io, "expected 'THETA R1 .. Rd'");
        b->td[b->nt] = d;
    }
    if (pf) {   /* the stored polynomial form */
        int lin = linear_features(b, m->n);
        if (lin < 0)
            return km_error_nomem(err, "polymkl model");
        if (!lin)
            return km_mio_bad(io, "poly_form needs linear base kernels on one feature each");
        if (!(b->poly = malloc((size_t)(nt + 1) * sizeof *b->poly)))
            return km_error_nomem(err, "polymkl model");
        for (int64_t t = 0; t < nt; t++)
            if ((rc = read_numbers(io, "", b->poly + t, -1)))
                return rc;
    }
    return km_model_get_svs(io, m, nsv, &b->sv, &b->c, err);
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    (void)threads;
    const km_polymkl_body *b = m->body;
    int32_t n = m->n;
    int r = b->basis.m, Dm = b->D > 0 ? b->D : 1;
    size_t nf = (size_t)(n > 0 ? n : 1);
    int32_t *zi = malloc(nf * sizeof *zi);
    double *z = malloc(nf * sizeof *z), *kap = malloc((size_t)r * sizeof *kap);
    if (!zi || !z || !kap) {
        free(zi);
        free(z);
        free(kap);
        return km_error_nomem(err, "polymkl prediction");
    }
    for (int32_t j = 0; j < n; j++)
        zi[j] = j;
    for (int64_t a = 0; a < count; a++) {
        int64_t i = rows ? rows[a] : a;
        for (int32_t j = 0; j < n; j++)
            z[j] = 0;
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++)
            if (X->index[p] < n)
                z[X->index[p]] = X->value[p];
        for (int32_t j = 0; j < n; j++)
            z[j] = (z[j] - b->shift[j]) / b->scale[j];
        double f = 0;
        for (int64_t t = 0; b->poly && !b->use_sv && t < b->nt; t++) {   /* polynomial form */
            double p = b->poly[t];
            for (int q = 0; q < b->td[t]; q++)
                p *= z[b->feat[b->tidx[t * Dm + q]]];
            f += p;
        }
        for (int64_t s = 0; (!b->poly || b->use_sv) && s < b->sv->l; s++) {
            int64_t p0 = b->sv->row_ptr[s], ns = b->sv->row_ptr[s + 1] - p0;
            for (int j = 0; j < r; j++)
                kap[j] = km_basis_eval(&b->basis.b[j], b->sv->index + p0, b->sv->value + p0, ns,
                                       zi, z, n);
            double k = 0;
            for (int64_t t = 0; t < b->nt; t++) {
                double p = b->theta[t] / tuple_rho2(b, t);
                for (int q = 0; q < b->td[t]; q++)
                    p *= kap[b->tidx[t * Dm + q]];
                k += p;
            }
            f += b->c[s] * k;
        }
        dec[a] = b->y_mean + b->y_scale * f;
    }
    free(zi);
    free(z);
    free(kap);
    return KM_OK;
}

const km_model_kind km_kind_polymkl = {
    .name = "polymkl",
    .section = "basis",
    .body_name = "tuples",
    .write_head = write_head,
    .write_body = write_body,
    .read = read_body,
    .free_body = free_body,
    .decision_rows = decision_rows,
};

int km_model_set_polymkl(km_model *m, km_polymkl_body *b, km_error *err)
{
    km_polymkl_body *own = malloc(sizeof *own);
    if (!own) {
        body_free(b);
        memset(b, 0, sizeof *b);
        return km_error_nomem(err, "polymkl model");
    }
    *own = *b;
    memset(b, 0, sizeof *b);
    km_model_set_body(m, &km_kind_polymkl, own);
    m->loss = KM_LOSS_RLS;
    m->bias = -1;
    return own->use_sv ? KM_OK : build_poly(own, m->n, err);
}
