/* model_rls2.c - the rls2 model kind (model.h; thesis ch. 4): basis kernels with scales and
 * weights, intercepts and support vectors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "model.h"
#include "numparse.h"

/* The support vectors on one feature subset of an RLS2 model and the kernels on it. */
typedef struct mkl_group {
    const km_basis *subset;   /* a kernel on the subset (its nfeat, feat) */
    km_problem *sv;           /* the projected support vectors; NULL: all features, b->sv */
    km_kdata *data;           /* sv (or b->sv) prepared for kernel blocks */
    int first, count;         /* the kernels order[first .. first + count) */
} mkl_group;

struct km_mkl_cache {
    int ngroups;
    mkl_group *g;
    int *order;               /* basis indices, grouped by feature subset */
};

static void mkl_cache_free(km_mkl_cache *c)
{
    if (!c)
        return;
    for (int g = 0; g < c->ngroups; g++) {
        km_kdata_free(c->g[g].data);
        km_problem_free(c->g[g].sv);
    }
    free(c->g);
    free(c->order);
    free(c);
}

/* Orders pointers to basis kernels by feature subset (0: the same subset). */
static int subset_cmp(const void *a, const void *b)
{
    const km_basis *x = *(const km_basis *const *)a, *y = *(const km_basis *const *)b;
    if (x->nfeat != y->nfeat)
        return x->nfeat < y->nfeat ? -1 : 1;
    for (int32_t t = 0; t < x->nfeat; t++)
        if (x->feat[t] != y->feat[t])
            return x->feat[t] < y->feat[t] ? -1 : 1;
    return 0;
}

/* Orders pointers to basis kernels by feature subset, then position: a fixed order. */
static int kernel_cmp(const void *a, const void *b)
{
    const km_basis *x = *(const km_basis *const *)a, *y = *(const km_basis *const *)b;
    int c = subset_cmp(a, b);
    return c ? c : (x > y) - (x < y);
}

/* Groups the basis kernels by feature subset and projects the support vectors on each. */
static int mkl_cache_build(km_rls2_body *b, km_error *err)
{
    int nb = b->basis.m;
    km_mkl_cache *c = calloc(1, sizeof *c);
    const km_basis **by = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *by);
    if (!c || !by || !(c->order = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *c->order)) ||
        !(c->g = calloc((size_t)(nb > 0 ? nb : 1), sizeof *c->g))) {
        free(by);
        mkl_cache_free(c);
        return km_error_nomem(err, "rls2 model");
    }
    b->mkl = c;
    for (int k = 0; k < nb; k++)
        by[k] = &b->basis.b[k];
    qsort(by, (size_t)nb, sizeof *by, kernel_cmp);
    for (int k = 0; k < nb; k++) {
        c->order[k] = (int)(by[k] - b->basis.b);
        if (k > 0 && subset_cmp(&by[k], &by[k - 1]) == 0) {
            c->g[c->ngroups - 1].count++;
            continue;
        }
        mkl_group *g = &c->g[c->ngroups++];
        g->subset = by[k];
        g->first = k;
        g->count = 1;
    }
    free(by);
    for (int q = 0; q < c->ngroups; q++) {
        mkl_group *g = &c->g[q];
        if (g->subset->nfeat && !(g->sv = km_basis_project(g->subset, b->sv, NULL, 0, err)))
            return err->code;
        if (!(g->data = km_kdata_new(g->sv ? g->sv : b->sv, NULL, b->sv->l, err)))
            return err->code;
    }
    return KM_OK;
}

static void free_body(km_model *m)
{
    km_rls2_body *b = m->body;
    mkl_cache_free(b->mkl);
    km_problem_free(b->sv);
    free(b->sv_coef);
    km_basis_set_free(&b->basis);
    free(b->basis_s);
    free(b->basis_d);
    free(b->intercept);
    free(b);
    m->body = NULL;
}


int km_model_set_mkl(km_model *m, km_basis_set *basis, double *s, double *d, double *intercept,
                     double lambda, km_problem *sv, double *sv_coef, km_error *err)
{
    km_rls2_body *b = calloc(1, sizeof *b);
    if (!b) {
        km_basis_set_free(basis);
        free(s);
        free(d);
        free(intercept);
        km_problem_free(sv);
        free(sv_coef);
        return km_error_nomem(err, "rls2 model");
    }
    km_model_set_body(m, &km_kind_rls2, b);
    m->loss = KM_LOSS_RLS;
    m->bias = -1;
    b->basis = *basis;
    basis->m = 0;
    basis->b = NULL;
    b->basis_s = s;
    b->basis_d = d;
    b->intercept = intercept;
    b->lambda = lambda;
    b->sv = sv;
    b->sv_coef = sv_coef;
    for (int k = 0; k < b->basis.m; k++) {
        const km_basis *bk = &b->basis.b[k];
        km_error kerr;
        if (km_kernel_check(&bk->kernel, bk->nfeat ? bk->nfeat : m->n, &kerr))
            return km_error_set(err, KM_EUSAGE, "rls2 model: basis kernel %d: %s", k + 1,
                                kerr.msg);
        for (int32_t t = 0; t < bk->nfeat; t++)
            if (bk->feat[t] < 0 || bk->feat[t] >= m->n ||
                (t > 0 && bk->feat[t] <= bk->feat[t - 1]))
                return km_error_set(err, KM_EUSAGE, "rls2 model: basis kernel %d: feature "
                                    "indices must increase within 1..%d", k + 1, (int)m->n);
        for (int64_t j = (int64_t)k * m->nr_w; j < (int64_t)(k + 1) * m->nr_w; j++) {
            double sk = s[j], dk = d[j];
            if (!(sk >= 0 && dk >= 0 && isfinite(sk) && isfinite(dk)))
                return km_error_set(err, KM_EUSAGE, "rls2 model: basis kernel %d: scale and "
                                    "weight must be finite and non-negative", k + 1);
        }
    }
    return mkl_cache_build(b, err);
}

km_rls2_body *km_model_rls2(const km_model *m)
{
    return m->kind == &km_kind_rls2 ? m->body : NULL;
}

static int write_head(const km_model *m, FILE *f)
{
    km_mio_put(f, "lambda", ((const km_rls2_body *)m->body)->lambda);
    return 0;
}

/* The basis section (a line per kernel: its nr_w scales, nr_w weights and the kernel), the
 * intercepts and the support vectors; -1 when out of memory. */
static int write_body(const km_model *m, FILE *f)
{
    const km_rls2_body *b = m->body;
    int nw = m->nr_w;
    char *spec = NULL;
    size_t cap = 0;
    fprintf(f, "nr_w %d\nnr_basis %d\nbasis\n", nw, b->basis.m);
    double *row = malloc((size_t)(2 * nw) * sizeof *row);
    if (!row)
        return -1;
    for (int k = 0; k < b->basis.m; k++) {
        size_t need = (size_t)km_basis_format(&b->basis.b[k], spec, cap) + 1;
        if (need > cap) {
            char *grown = realloc(spec, need);
            if (!grown) {
                free(spec);
                free(row);
                return -1;
            }
            spec = grown;
            cap = need;
            km_basis_format(&b->basis.b[k], spec, cap);
        }
        memcpy(row, b->basis_s + (int64_t)k * nw, (size_t)nw * sizeof *row);
        memcpy(row + nw, b->basis_d + (int64_t)k * nw, (size_t)nw * sizeof *row);
        km_model_put_line(f, NULL, row, 2 * nw, spec);
    }
    free(spec);
    free(row);
    km_model_put_line(f, "intercept", b->intercept, nw, NULL);
    fprintf(f, "nr_sv %lld\nsv\n", (long long)b->sv->l);
    km_model_put_svs(f, b->sv, b->sv_coef, nw);
    return 0;
}

/* One basis line "s_1 .. s_nr_w d_1 .. d_nr_w KERNEL-SPEC" into s, d and *bk. */
static int read_basis_line(km_mio *io, const char *p, const km_model *m, double *s, double *d,
                           km_basis *bk)
{
    for (int q = 0; q < 2 * m->nr_w; q++) {
        double *v = q < m->nr_w ? &s[q] : &d[q - m->nr_w];
        int status;
        p = km_parse_double(p, v, &status);
        if (status != KM_NUM_OK || *v < 0 || *p++ != ' ')
            return km_mio_bad(io, "expected nr_w scales and nr_w kernel weights (finite, "
                              "non-negative), then the kernel");
    }
    km_error kerr;
    if (km_basis_parse(p, m->n, bk, &kerr))
        return km_mio_bad(io, "bad basis kernel: %s", kerr.msg);
    return KM_OK;
}

/* The header's lambda and nr_basis; after "basis": nr_basis basis lines, "intercept ...",
 * "nr_sv N", "sv" and the support vectors. */
static int read_body(km_mio *io, km_model *m, km_error *err)
{
    const char *v;
    double lambda;
    long long nr_basis, nr_sv;
    const char *vl = km_mio_key(io, "lambda"), *vn = km_mio_key(io, "nr_basis");
    if (!vl || !vn) {
        km_mio_key(io, !vl ? "lambda" : "nr_basis");   /* the line: the header's end */
        return km_mio_bad(io, "rls2 model header incomplete (need lambda, nr_basis)");
    }
    if ((v = km_mio_key(io, "lambda")) && (km_mio_number(v, &lambda) || lambda < 0))
        return km_mio_bad(io, "bad lambda (expected a finite number >= 0)");
    if ((v = km_mio_key(io, "nr_basis")) && km_model_parse_int(v, 0, INT32_MAX / 2, &nr_basis))
        return km_mio_bad(io, "bad nr_basis");
    if (m->loss != KM_LOSS_RLS || m->bias >= 0) {
        km_mio_key(io, m->loss != KM_LOSS_RLS ? "loss" : "bias");
        return km_mio_bad(io, "rls2 models have loss rls and bias -1");
    }
    int rc = km_model_check_nr_w(io, m);
    if (rc)
        return rc;
    size_t nw = (size_t)m->nr_w;
    /* a basis line: 2 nr_w numbers and a kernel, at least 4 nr_w + 1 characters */
    if ((rc = km_mio_count(io, "nr_basis", nr_basis, 4 * (int64_t)nw + 1, "basis lines")))
        return rc;
    km_basis_set set = {0, calloc((size_t)nr_basis + 1, sizeof *set.b)};
    double *s = malloc(((size_t)nr_basis * nw + 1) * sizeof *s);
    double *d = malloc(((size_t)nr_basis * nw + 1) * sizeof *d);
    double *icpt = malloc(nw * sizeof *icpt);
    km_problem *sv = NULL;
    double *coef = NULL;
    const char *line = NULL;
    rc = set.b && s && d && icpt ? KM_OK : km_error_nomem(err, "rls2 model");
    while (rc == KM_OK && set.m < nr_basis) {
        if (!(line = km_mio_line(io)))
            rc = km_mio_truncated(io, "%d of %lld basis kernels", set.m, nr_basis);
        else if (!(rc = read_basis_line(io, line, m, s + set.m * nw, d + set.m * nw,
                                        &set.b[set.m])))
            set.m++;
    }
    if (rc == KM_OK && !(line = km_mio_line(io)))
        rc = km_mio_truncated(io, "no 'intercept' line");
    else if (rc == KM_OK && (strncmp(line, "intercept ", 10) != 0 ||
                             km_model_parse_numbers(line + 10, icpt, (int64_t)nw)))
        rc = km_mio_bad(io, "expected 'intercept' and nr_w numbers");
    if (rc == KM_OK && !(line = km_mio_line(io)))
        rc = km_mio_truncated(io, "no 'nr_sv' line");
    else if (rc == KM_OK && (strncmp(line, "nr_sv ", 6) != 0 ||
                             km_model_parse_int(line + 6, 0, INT64_MAX / 2, &nr_sv)))
        rc = km_mio_bad(io, "expected 'nr_sv COUNT'");
    else if (rc == KM_OK)
        rc = km_mio_count(io, "nr_sv", nr_sv, 2 * (int64_t)nw, "support vector lines");
    if (rc == KM_OK && !(line = km_mio_line(io)))
        rc = km_mio_truncated(io, "no 'sv' line");
    else if (rc == KM_OK && strcmp(line, "sv") != 0)
        rc = km_mio_bad(io, "expected 'sv'");
    if (rc == KM_OK)
        rc = km_model_get_svs(io, m, nr_sv, &sv, &coef, err);
    if (rc != KM_OK) {
        km_basis_set_free(&set);
        free(s);
        free(d);
        free(icpt);
        return rc;
    }
    return km_model_set_mkl(m, &set, s, d, icpt, lambda, sv, coef, err);
}

/* Adds the RLS2 decision values of the block B (nb rows) to dec: per feature subset, B
 * projected once; per kernel on it, dec += K(B, sv) * (sv_coef scaled per column by s d). */
static int mkl_block(const km_model *m, const km_problem *B, int64_t nb, double *Kb,
                     double *coef, double *dec, int threads, km_error *err)
{
    const km_rls2_body *b = m->body;
    const km_mkl_cache *c = b->mkl;
    int nw = m->nr_w;
    int64_t nsv = b->sv->l;
    for (int q = 0; q < c->ngroups; q++) {
        const mkl_group *g = &c->g[q];
        km_problem *Q = g->sv ? km_basis_project(g->subset, B, NULL, nb, err) : NULL;
        if (g->sv && !Q)
            return err->code;
        km_kdata *T = km_kdata_new(Q ? Q : B, NULL, nb, err);
        int rc = T ? KM_OK : err->code;
        for (int t = g->first; t < g->first + g->count && rc == KM_OK; t++) {
            int k = c->order[t];
            const double *sk = b->basis_s + (int64_t)k * nw, *dk = b->basis_d + (int64_t)k * nw;
            rc = km_kernel_block(&b->basis.b[k].kernel, T, NULL, nb, g->data, NULL, nsv, Kb,
                                 threads, err);
            if (rc != KM_OK)
                break;
            for (int64_t i = 0; i < nsv; i++)
                for (int j = 0; j < nw; j++)
                    coef[i * nw + j] = sk[j] * dk[j] * b->sv_coef[i * nw + j];
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, nw, (int)nsv, 1, Kb,
                        (int)nsv, coef, nw, 1, dec, nw);
        }
        km_kdata_free(T);
        km_problem_free(Q);
        if (rc != KM_OK)
            return rc;
    }
    return KM_OK;
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    const km_rls2_body *b = m->body;
    int nw = m->nr_w;
    for (int64_t a = 0; a < count; a++)
        memcpy(dec + a * nw, b->intercept, (size_t)nw * sizeof *dec);
    int64_t nsv = b->sv->l;
    if (nsv == 0 || b->basis.m == 0)
        return KM_OK;
    int64_t bs = (int64_t)((64 << 20) / 8) / nsv;   /* a 64 MB block of kernel values */
    bs = bs < 1 ? 1 : bs > 1024 ? 1024 : bs;
    km_problem B = {0};
    int64_t cap = 0;
    double *Kb = malloc((size_t)(bs * nsv) * sizeof *Kb);
    double *coef = malloc((size_t)(nsv * nw) * sizeof *coef);
    B.row_ptr = malloc((size_t)(bs + 1) * sizeof *B.row_ptr);
    int rc = Kb && coef && B.row_ptr ? KM_OK : km_error_nomem(err, "prediction block");
    for (int64_t a0 = 0; a0 < count && rc == KM_OK; a0 += bs) {
        int64_t nb = count - a0 < bs ? count - a0 : bs;
        if ((rc = km_model_copy_block(X, rows, a0, nb, m->n, &B, &cap, err)) == KM_OK)
            rc = mkl_block(m, &B, nb, Kb, coef, dec + a0 * nw, threads, err);
    }
    free(Kb);
    free(coef);
    free(B.row_ptr);
    free(B.index);
    free(B.value);
    return rc;
}

const km_model_kind km_kind_rls2 = {
    .name = "rls2",
    .body_name = "support vectors",
    .section = "basis",
    .write_head = write_head,
    .write_body = write_body,
    .read = read_body,
    .free_body = free_body,
    .decision_rows = decision_rows,
};
