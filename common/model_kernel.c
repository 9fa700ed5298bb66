/* model_kernel.c - kernel expansions (model.h): the kernel model kind, and the expansion
 * f(x) = sum_s sv_coef[s] K(sv_s, x) that okl and mtl models build on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "model.h"
#include "numparse.h"
#include "prob.h"
#include "ovo.h"
#include "svmlight.h"

/* A precomputed kernel's support vectors are their serial numbers alone (sv->id): their
 * rows (the kernel values against the training rows) are dropped here. KM_EINTERNAL when
 * sv has no serial numbers. */
static int precomputed_svs(const km_kernel *k, km_problem *sv, km_error *err)
{
    if (k->type != KM_KERNEL_PRECOMPUTED)
        return KM_OK;
    if (!sv->id && sv->l > 0)
        return km_error_set(err, KM_EINTERNAL, "precomputed kernel model: support vectors "
                            "without serial numbers");
    for (int64_t s = 0; s <= sv->l; s++)
        sv->row_ptr[s] = 0;
    sv->nnz = 0;
    free(sv->index);
    free(sv->value);
    sv->index = NULL;
    sv->value = NULL;
    return KM_OK;
}

/* The support vector lines of a precomputed kernel: nr_w coefficients, then " 0:ID". */
static void put_precomputed_svs(FILE *f, const km_problem *S, const double *coef, int nr_w)
{
    for (int64_t s = 0; s < S->l; s++) {
        char tail[32];
        snprintf(tail, sizeof tail, "0:%lld", (long long)S->id[s]);
        km_model_put_line(f, NULL, coef + s * nr_w, nr_w, tail);
    }
}

/* Reads nr_sv lines "c_1 ... c_nr_w 0:ID" (ID in 1..nr_feature) into empty rows with
 * serial numbers. */
static int get_precomputed_svs(km_mio *io, const km_model *m, int nw, int64_t nr_sv,
                               km_problem **sv, double **sv_coef, km_error *err)
{
    int rc = km_mio_count(io, "nr_sv", nr_sv, 2 * (int64_t)nw + 4, "support vector lines");
    if (rc)
        return rc;
    km_problem *S;
    double *coef;
    if ((rc = km_model_svs_new(m->n, nw, nr_sv, 1, &S, &coef, err)))
        return rc;
    char buf[4096];
    for (int64_t s = 0; s < nr_sv && rc == KM_OK; s++) {
        const char *p = km_model_sv_line(io, s, nr_sv, &rc);
        if (!p)
            break;
        const char *sp = strrchr(p, ' ');
        uint64_t id;
        int st;
        const char *e = sp && sp[1] == '0' && sp[2] == ':'
                        ? km_parse_uint(sp + 3, (uint64_t)m->n, &id, &st) : NULL;
        if (!e || st != KM_NUM_OK || *e || id == 0 || (size_t)(sp - p) >= sizeof buf) {
            rc = km_mio_bad(io, "expected nr_w coefficients and 0:ID (a serial number in "
                            "1..nr_feature)");
            break;
        }
        memcpy(buf, p, (size_t)(sp - p));
        buf[sp - p] = '\0';
        if (km_model_parse_numbers(buf, coef + s * nw, nw)) {
            rc = km_mio_bad(io, "expected nr_w coefficients");
            break;
        }
        S->id[s] = (int64_t)id;
    }
    return km_model_svs_end(rc, S, coef, sv, sv_coef);
}

int32_t km_model_precomputed(const km_model *m)
{
    const km_expansion *e = m && (m->kind == &km_kind_kernel || m->kind == &km_kind_kernel_ovo)
                            ? m->body : NULL;
    if (m && m->kind == &km_kind_libsvm)
        return km_libsvm_precomputed(m);
    return e && e->kernel.type == KM_KERNEL_PRECOMPUTED ? (m->n > 0 ? m->n : 1) : 0;
}

int km_expansion_init(km_expansion *e, const km_kernel *k, km_problem *sv, double *sv_coef,
                      km_error *err)
{
    e->kernel = *k;
    e->sv = sv;
    e->sv_coef = sv_coef;
    if (k->type == KM_KERNEL_PRECOMPUTED && !sv->id)   /* e.g. an okl or mtl model file */
        return km_error_set(err, KM_EINPUT, "a precomputed kernel needs support vectors given "
                            "by serial numbers (0:ID): kernel models only (train -s l1svm, "
                            "...)");
    e->sv_data = km_kdata_new(sv, NULL, sv->l, err);
    return e->sv_data ? KM_OK : err->code;
}

void km_expansion_free(km_expansion *e)
{
    km_kdata_free(e->sv_data);
    km_problem_free(e->sv);
    free(e->sv_coef);
    memset(e, 0, sizeof *e);
}

int km_expansion_rows(const km_model *m, const km_expansion *e, const km_problem *X,
                      const int64_t *rows, int64_t count, double *dec, int threads,
                      km_error *err)
{
    return km_expansion_cols(e, m->n, m->nr_w, X, rows, count, dec, threads, err);
}

int km_expansion_cols(const km_expansion *e, int32_t n, int nw, const km_problem *X,
                      const int64_t *rows, int64_t count, double *dec, int threads,
                      km_error *err)
{
    int64_t nsv = e->sv->l;
    if (nsv == 0) {
        memset(dec, 0, (size_t)(count * nw) * sizeof *dec);
        return KM_OK;
    }
    /* a block of kernel values of at most 2 MB, no more rows than asked for: the kernel
     * products, exp and the product with sv_coef then run in the core's cache (a9a.t and
     * ijcnn1.t: a third less CPU than 16 MB blocks), and glibc keeps the buffer in its heap
     * from call to call (a 64 MB one was mapped and faulted in afresh at every 1,024-row
     * batch: 40% of predict's time) */
    int64_t bs = (int64_t)((2 << 20) / 8) / nsv;
    bs = bs < 1 ? 1 : bs > 1024 ? 1024 : bs;
    bs = bs < count ? bs : count;
    km_problem B = {0};
    int64_t cap = 0;
    double *Kb = malloc((size_t)(bs * nsv) * sizeof *Kb);
    B.row_ptr = malloc((size_t)(bs + 1) * sizeof *B.row_ptr);
    int rc = Kb && B.row_ptr ? KM_OK : km_error_nomem(err, "prediction block");
    for (int64_t a0 = 0; a0 < count && rc == KM_OK; a0 += bs) {
        int64_t nb = count - a0 < bs ? count - a0 : bs;
        if ((rc = km_model_copy_block(X, rows, a0, nb, n, &B, &cap, err)))
            break;
        km_kdata *T = km_kdata_new(&B, NULL, nb, err);
        if (!T) {
            rc = err->code;
            break;
        }
        rc = km_kernel_block(&e->kernel, T, NULL, nb, e->sv_data, NULL, nsv, Kb, threads, err);
        km_kdata_free(T);
        if (rc == KM_OK)   /* dec = K(block, sv) * sv_coef */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, nw, (int)nsv, 1, Kb,
                        (int)nsv, e->sv_coef, nw, 0, dec + a0 * nw, nw);
    }
    free(Kb);
    free(B.row_ptr);
    free(B.index);
    free(B.value);
    return rc;
}

static int write_head(const km_model *m, FILE *f)
{
    const km_kernel *k = &((const km_expansion *)m->body)->kernel;
    km_model_put_kernel(f, "", k);
    if (k->offset != 0)   /* -B b: K + b^2; absent in models without it (older files) */
        km_mio_put(f, "kernel_offset", k->offset);
    km_prob_write_keys(m, f);   /* optional (prob.h) */
    return 0;
}

void km_expansion_write(FILE *f, const km_model *m, const km_expansion *e)
{
    fprintf(f, "nr_w %d\nnr_sv %lld\nsv\n", m->nr_w, (long long)e->sv->l);
    if (e->kernel.type == KM_KERNEL_PRECOMPUTED)
        put_precomputed_svs(f, e->sv, e->sv_coef, m->nr_w);
    else
        km_model_put_svs(f, e->sv, e->sv_coef, m->nr_w);
}

int km_expansion_read_head(km_mio *io, km_kernel *k, long long *nr_sv, km_error *err)
{
    const char *v;
    int rc = km_model_get_kernel(io, "", k, err);
    if (rc)
        return rc;
    if (!(v = km_mio_key(io, "nr_sv")) || km_model_parse_int(v, 0, INT64_MAX / 2, nr_sv))
        return km_mio_bad(io, "kernel model header incomplete or bad (need nr_sv COUNT)");
    return KM_OK;
}

static int write_body(const km_model *m, FILE *f)
{
    km_expansion_write(f, m, m->body);
    return 0;
}

static int read_body(km_mio *io, km_model *m, km_error *err)
{
    km_kernel k;
    long long nr_sv;
    int rc = km_expansion_read_head(io, &k, &nr_sv, err);
    if (rc || (rc = km_model_check_nr_w(io, m)) || (rc = km_prob_read_keys(io, m, err)))
        return rc;
    const char *v = km_mio_key(io, "kernel_offset");
    if (v && (km_mio_number(v, &k.offset) || !isfinite(k.offset) || k.offset < 0))
        return km_mio_bad(io, "kernel_offset must be a finite number >= 0");
    km_problem *sv;
    double *coef;
    if ((rc = k.type == KM_KERNEL_PRECOMPUTED
              ? get_precomputed_svs(io, m, m->nr_w, nr_sv, &sv, &coef, err)
              : km_model_get_svs(io, m, nr_sv, &sv, &coef, err)))
        return rc;
    return km_model_set_kernel(m, &k, sv, coef, err);
}

static void free_body(km_model *m)
{
    km_expansion_free(m->body);
    free(m->body);
    m->body = NULL;
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    return km_expansion_rows(m, m->body, X, rows, count, dec, threads, err);
}

const km_model_kind km_kind_kernel = {
    .name = "kernel",
    .body_name = "support vectors",
    .section = "sv",
    .write_head = write_head,
    .write_body = write_body,
    .read = read_body,
    .free_body = free_body,
    .decision_rows = decision_rows,
};

/* m's body: an expansion of kind (kernel or kernel_ovo) taking sv and sv_coef (freed on an
 * error; what names the model in an out-of-memory message). */
static int set_expansion(km_model *m, const km_model_kind *kind, const km_kernel *k,
                         km_problem *sv, double *sv_coef, const char *what, km_error *err)
{
    km_expansion *e = calloc(1, sizeof *e);
    if (!e) {
        km_problem_free(sv);
        free(sv_coef);
        return km_error_nomem(err, what);
    }
    km_model_set_body(m, kind, e);
    m->bias = -1;
    int rc = precomputed_svs(k, sv, err);
    if (rc) {
        e->sv = sv;
        e->sv_coef = sv_coef;
        return rc;
    }
    return km_expansion_init(e, k, sv, sv_coef, err);
}

int km_model_set_kernel(km_model *m, const km_kernel *k, km_problem *sv, double *sv_coef,
                        km_error *err)
{
    return set_expansion(m, &km_kind_kernel, k, sv, sv_coef, "kernel model", err);
}

km_expansion *km_model_expansion(const km_model *m)
{
    /* okl and mtl bodies start with their expansion */
    return m->kind == &km_kind_kernel || m->kind == &km_kind_okl || m->kind == &km_kind_mtl
           ? m->body : NULL;
}

/* ---- one-versus-one (ovo.h) ---- */

static int npairs_of(const km_model *m)
{
    return m->nr_class * (m->nr_class - 1) / 2;
}

int km_ovo_pair_decisions(const km_model *m, const km_problem *X, const int64_t *rows,
                          int64_t count, double *dec, int threads, km_error *err)
{
    return km_expansion_cols(m->body, m->n, npairs_of(m), X, rows, count, dec, threads, err);
}

static int ovo_decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                             int64_t count, double *dec, int threads, km_error *err)
{
    int nc = m->nr_class, np = npairs_of(m);
    double *pd = malloc(((size_t)count * (size_t)np + 1) * sizeof *pd);
    if (!pd)
        return km_error_nomem(err, "one-versus-one");
    int rc = km_ovo_pair_decisions(m, X, rows, count, pd, threads, err);
    for (int64_t a = 0; a < count && rc == KM_OK; a++) {
        double *votes = dec + a * nc;
        for (int k = 0; k < nc; k++)
            votes[k] = 0;
        int p = 0;
        for (int i = 0; i < nc; i++)
            for (int j = i + 1; j < nc; j++, p++)
                votes[pd[a * np + p] > 0 ? j : i] += 1;   /* > 0: the larger label */
    }
    free(pd);
    return rc;
}

static int ovo_write_head(const km_model *m, FILE *f)
{
    return write_head(m, f);
}

static int ovo_write_body(const km_model *m, FILE *f)
{
    const km_expansion *e = m->body;
    fprintf(f, "nr_w %d\nnr_pair %d\nnr_sv %lld\nsv\n", m->nr_w, npairs_of(m),
            (long long)e->sv->l);
    if (e->kernel.type == KM_KERNEL_PRECOMPUTED)
        put_precomputed_svs(f, e->sv, e->sv_coef, npairs_of(m));
    else
        km_model_put_svs(f, e->sv, e->sv_coef, npairs_of(m));
    return 0;
}

static int ovo_read(km_mio *io, km_model *m, km_error *err)
{
    km_kernel k;
    long long nr_sv, np;
    int rc = km_expansion_read_head(io, &k, &nr_sv, err);
    if (rc || (rc = km_model_check_nr_w(io, m)))
        return rc;
    const char *v = km_mio_key(io, "kernel_offset");
    if (v && (km_mio_number(v, &k.offset) || !isfinite(k.offset) || k.offset < 0))
        return km_mio_bad(io, "kernel_offset must be a finite number >= 0");
    if (m->nr_class < 3 || !(v = km_mio_key(io, "nr_pair")) ||
        km_model_parse_int(v, 0, INT32_MAX, &np) || np != npairs_of(m))
        return km_mio_bad(io, "one-versus-one model: needs nr_class >= 3 and nr_pair = "
                          "nr_class (nr_class - 1) / 2");
    km_model pairs = *m;   /* the lines carry nr_pair coefficients */
    pairs.nr_w = (int)np;
    km_problem *sv;
    double *coef;
    if ((rc = k.type == KM_KERNEL_PRECOMPUTED
              ? get_precomputed_svs(io, m, (int)np, nr_sv, &sv, &coef, err)
              : km_model_get_svs(io, &pairs, nr_sv, &sv, &coef, err)))
        return rc;
    return km_model_set_ovo(m, &k, sv, coef, err);
}

const km_model_kind km_kind_kernel_ovo = {
    .name = "kernel_ovo",
    .body_name = "support vectors",
    .section = "sv",
    .write_head = ovo_write_head,
    .write_body = ovo_write_body,
    .read = ovo_read,
    .free_body = free_body,
    .decision_rows = ovo_decision_rows,
};

int km_model_set_ovo(km_model *m, const km_kernel *k, km_problem *sv, double *coef,
                     km_error *err)
{
    return set_expansion(m, &km_kind_kernel_ovo, k, sv, coef, "one-versus-one model", err);
}
