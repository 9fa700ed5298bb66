/* model_libsvm.c - LIBSVM's model files (svm.cpp svm_save_model/svm_load_model, 3.x) read as
 * a model kind (doc/model-format.md).
 *
 *   svm_type c_svc | nu_svc | one_class | epsilon_svr | nu_svr
 *   kernel_type linear | polynomial | rbf | sigmoid | precomputed
 *   degree D, gamma G, coef0 R                           (as the kernel uses them)
 *   nr_class k                                           (2 for one-class and regression)
 *   total_sv l
 *   rho r_1 .. r_{k(k-1)/2}                              (one per pair i < j, in order)
 *   label L_1 .. L_k, nr_sv n_1 .. n_k                   (classification)
 *   probA, probB, prob_density_marks                     (read and ignored)
 *   SV
 *   l lines "a_1 .. a_{k-1} idx:val ...", the support vectors grouped by class
 *   (precomputed: "a_1 .. a_{k-1} 0:ID", the training row's serial number; K(sv, x) is the
 *   test row's value at column ID)
 *
 * LIBSVM's decision (svm_predict_values): for the pair (i, j), i < j,
 *   d_ij(x) = sum_{s in class i} a_{j-1}[s] K(sv_s, x) + sum_{s in class j} a_i[s] K(sv_s, x)
 *             - rho_ij,
 * a vote for class i when d_ij > 0, else for class j; the first class with the most votes
 * wins. Two classes: d_01 > 0 means L_1. Regression: d(x) = sum_s a[s] K(sv_s, x) - rho;
 * one-class: +1 when d(x) > 0, else -1.
 * kmtk's decision values: d_01 for two classes, d for one-class and regression; for k > 2
 * classes the k vote counts (km_model_predict_label then picks LIBSVM's class: labels in
 * the file's order, the first of the most votes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "dtoa.h"
#include "model.h"
#include "model_foreign.h"
#include "numparse.h"

enum { C_SVC, NU_SVC, ONE_CLASS, EPSILON_SVR, NU_SVR };
static const char *const svm_types[] = {"c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"};

typedef struct svm_body {
    int svm_type;
    int k;                /* classes of the file (1 for one-class and regression) */
    km_kernel kernel;
    km_problem *sv;       /* the l support vectors, grouped by class */
    km_kdata *sv_data;
    double *coef;         /* (k - 1) x l: coef[q * l + s] = a_q[s] (1 x l when k = 1) */
    double *rho;          /* k (k - 1) / 2 (1 when k = 1) */
    int64_t *start;       /* k + 1: class c's support vectors are start[c] .. start[c + 1] */
} svm_body;

static void free_body(km_model *m)
{
    svm_body *b = m->body;
    if (b) {
        km_kdata_free(b->sv_data);
        km_problem_free(b->sv);
        free(b->coef);
        free(b->rho);
        free(b->start);
        free(b);
    }
    m->body = NULL;
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    const svm_body *b = m->body;
    int64_t nsv = b->sv->l, k = b->k;
    int nw = m->nr_w;
    int64_t bs = (int64_t)((64 << 20) / 8) / (nsv > 0 ? nsv : 1);   /* 64 MB of K values */
    bs = bs < 1 ? 1 : bs > 1024 ? 1024 : bs;
    km_problem B = {0};
    int64_t cap = 0;
    double *Kb = malloc(((size_t)(bs * nsv) + 1) * sizeof *Kb);
    int *vote = malloc(((size_t)k + 1) * sizeof *vote);
    B.row_ptr = malloc((size_t)(bs + 1) * sizeof *B.row_ptr);
    int rc = Kb && vote && B.row_ptr ? KM_OK : km_error_nomem(err, "prediction block");
    for (int64_t a0 = 0; a0 < count && rc == KM_OK; a0 += bs) {
        int64_t nb = count - a0 < bs ? count - a0 : bs;
        if (nsv > 0) {   /* K(block, sv) over the support vectors' features */
            if ((rc = km_model_copy_block(X, rows, a0, nb, b->sv->n, &B, &cap, err)))
                break;
            km_kdata *T = km_kdata_new(&B, NULL, nb, err);
            if (!T) {
                rc = err->code;
                break;
            }
            rc = km_kernel_block(&b->kernel, T, NULL, nb, b->sv_data, NULL, nsv, Kb, threads,
                                 err);
            km_kdata_free(T);
            if (rc)
                break;
        }
        for (int64_t a = 0; a < nb; a++) {
            double *K = Kb + a * nsv, *d = dec + (a0 + a) * nw;
            if (b->kernel.type == KM_KERNEL_RBF && nsv > 0) {
                /* features beyond the support vectors' count in ||x - sv||^2, as in LIBSVM:
                 * K(x, sv) = K(x restricted, sv) exp(-gamma ||x beyond||^2) */
                int64_t i = rows ? rows[a0 + a] : a0 + a, sq_n = 0;
                double sq = 0;
                for (int64_t t = X->row_ptr[i]; t < X->row_ptr[i + 1]; t++)
                    if (X->index[t] >= b->sv->n)
                        sq += X->value[t] * X->value[t], sq_n++;
                if (sq_n > 0) {
                    double f = exp(-b->kernel.gamma * sq);
                    for (int64_t s = 0; s < nsv; s++)
                        K[s] *= f;
                }
            }
            if (k == 1 || k == 2) {   /* one decision value d = sum_s a[s] K(sv_s, x) - rho */
                double sum = 0;
                for (int64_t s = 0; s < nsv; s++)
                    sum += b->coef[s] * K[s];
                d[0] = sum - b->rho[0];
                continue;
            }
            for (int64_t c = 0; c < k; c++)
                vote[c] = 0;
            for (int64_t i = 0, p = 0; i < k; i++)
                for (int64_t j = i + 1; j < k; j++, p++) {
                    double sum = 0;
                    const double *ci = b->coef + (j - 1) * nsv, *cj = b->coef + i * nsv;
                    for (int64_t s = b->start[i]; s < b->start[i + 1]; s++)
                        sum += ci[s] * K[s];
                    for (int64_t s = b->start[j]; s < b->start[j + 1]; s++)
                        sum += cj[s] * K[s];
                    vote[sum - b->rho[p] > 0 ? i : j]++;
                }
            for (int64_t c = 0; c < k; c++)
                d[c] = vote[c];
        }
    }
    free(Kb);
    free(vote);
    free(B.row_ptr);
    free(B.index);
    free(B.value);
    return rc;
}

const km_model_kind km_kind_libsvm = {
    .name = "libsvm",
    .body_name = "support vectors",
    .section = "SV",
    .write_body = km_foreign_write_body,   /* refused: km_model_write_libsvm instead */
    .read = km_foreign_read_kmtk,
    .free_body = free_body,
    .decision_rows = decision_rows,
};

static int kernel_from_libsvm(const char *s)
{
    static const char *const names[] = {"linear", "polynomial", "rbf", "sigmoid",
                                        "precomputed"};
    static const km_kernel_type types[] = {KM_KERNEL_LINEAR, KM_KERNEL_POLY, KM_KERNEL_RBF,
                                           KM_KERNEL_SIGMOID, KM_KERNEL_PRECOMPUTED};
    for (int t = 0; t < 5; t++)
        if (strcmp(s, names[t]) == 0)
            return (int)types[t];
    return -1;
}

int km_libsvm_read(km_mio *io, const char *first, km_model **out, km_error *err)
{
    int svm_type = -1, ktype = -1, have_gamma = 0;
    long long nr_class = -1, total_sv = -1, degree = 3;
    double gamma = 0, coef0 = 0;
    double *rho = NULL, *label = NULL, *nsv = NULL, *ignored = NULL;
    int64_t *start = NULL;
    km_problem *S = NULL;
    double *coef = NULL;
    km_model *m = NULL;
    svm_body *body = NULL;
    const char *line = first;
    int rc = KM_OK;
    /* "key value" lines up to "SV" (svm_load_model's read_model_header) */
    enum { K_SVM_TYPE, K_KERNEL_TYPE, K_DEGREE, K_GAMMA, K_COEF0, K_NR_CLASS, K_TOTAL_SV, K_RHO,
           K_LABEL, K_NR_SV, K_PROBA, K_PROBB, K_PROB_DENSITY_MARKS };
    static const char *const keys[] = {"svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv", "rho", "label", "nr_sv", "probA", "probB", "prob_density_marks"};
    km_foreign_header h = {.format = "LIBSVM", .end = "SV", .keys = keys,
                           .nkeys = (int)(sizeof keys / sizeof *keys), .io = io, .line = first};
    int key;
    const char *v;
    while ((rc = km_foreign_key(&h, &key, &v)) == KM_OK && key >= 0) {
        line = h.line;
        int64_t npair = nr_class < 0 ? -1 : nr_class * (nr_class - 1) / 2;
        switch (key) {
        case K_SVM_TYPE:
            for (int t = 0; t < 5; t++)
                if (strcmp(v, svm_types[t]) == 0)
                    svm_type = t;
            if (svm_type < 0)
                rc = km_mio_bad_col(io, v - line + 1, "unknown svm_type '%.40s'", v);
            break;
        case K_KERNEL_TYPE:
            if ((ktype = kernel_from_libsvm(v)) < 0)
                rc = km_mio_bad_col(io, v - line + 1, "unknown kernel_type '%.40s'", v);
            break;
        case K_DEGREE:
            if (km_model_parse_int(v, 1, 1000, &degree))
                rc = km_mio_bad_col(io, v - line + 1, "bad degree (kmtk takes 1 to 1000)");
            break;
        case K_GAMMA:
            have_gamma = 1;
            if (km_mio_number(v, &gamma))
                rc = km_mio_bad_col(io, v - line + 1, "expected a number");
            break;
        case K_COEF0:
            if (km_mio_number(v, &coef0))
                rc = km_mio_bad_col(io, v - line + 1, "expected a number");
            break;
        case K_NR_CLASS:
            if (km_model_parse_int(v, 2, 1 << 16, &nr_class))
                rc = km_mio_bad_col(io, v - line + 1, "bad nr_class (2 to 65536)");
            break;
        case K_TOTAL_SV:
            if (km_model_parse_int(v, 0, INT64_MAX / 16, &total_sv))
                rc = km_mio_bad_col(io, v - line + 1, "bad total_sv");
            break;
        case K_RHO:
            rc = km_foreign_list(io, line, v, npair, &rho, "rho", "rho", err);
            break;
        case K_LABEL:
            rc = km_foreign_list(io, line, v, nr_class, &label, "label", "label", err);
            break;
        case K_NR_SV:
            rc = km_foreign_list(io, line, v, nr_class, &nsv, "nr_sv", "nr_sv", err);
            break;
        default: {   /* probA, probB, prob_density_marks: probability estimates, not used by
                      * kmtk (checked as numbers, then dropped) */
            int64_t cnt = 1;
            for (const char *p = v; *p; p++)
                cnt += *p == ' ' && p[1] && p[1] != ' ';
            rc = km_foreign_list(io, line, v, cnt, &ignored, "probability numbers",
                                 "probability numbers", err);
            free(ignored);
            ignored = NULL;
            break;
        }
        }
        if (rc)
            goto fail;
    }
    if (rc)
        goto fail;
    int classify = svm_type == C_SVC || svm_type == NU_SVC;
    if (svm_type < 0 || ktype < 0 || nr_class < 0 || total_sv < 0 || !rho ||
        (classify && (!label || !nsv))) {
        rc = km_mio_bad(io, "LIBSVM header incomplete (need svm_type, kernel_type, nr_class, "
                        "total_sv, rho%s before 'SV')", classify ? ", label, nr_sv" : "");
        goto fail;
    }
    if (!classify && nr_class != 2) {
        rc = km_mio_bad(io, "a LIBSVM %s model has nr_class 2", svm_types[svm_type]);
        goto fail;
    }
    km_kernel kern = {(km_kernel_type)ktype, gamma, coef0, (int)degree, 0};
    if (ktype != KM_KERNEL_LINEAR && ktype != KM_KERNEL_PRECOMPUTED && !have_gamma) {
        rc = km_mio_bad(io, "a %s kernel needs 'gamma'", km_kernel_name(kern.type));
        goto fail;
    }
    if (km_kernel_check(&kern, 0, err)) {
        rc = km_mio_bad(io, "%s", err->msg);
        goto fail;
    }
    int64_t k = classify ? nr_class : 1, ncoef = k > 1 ? k - 1 : 1;
    if (!(start = malloc(((size_t)k + 1) * sizeof *start))) {
        rc = km_error_nomem(err, "model header");
        goto fail;
    }
    start[0] = 0;
    for (int64_t c = 0; c < k; c++) {
        double n_c = classify ? nsv[c] : (double)total_sv;
        if (!(n_c >= 0 && n_c <= (double)total_sv && n_c == floor(n_c)) ||
            start[c] + (int64_t)n_c > total_sv) {
            rc = km_mio_bad(io, "nr_sv does not add up to total_sv");
            goto fail;
        }
        start[c + 1] = start[c] + (int64_t)n_c;
    }
    if (start[k] != total_sv) {
        rc = km_mio_bad(io, "nr_sv does not add up to total_sv");
        goto fail;
    }
    /* a support vector line has at least 2 (k - 1) characters */
    if ((rc = km_mio_count(io, "total_sv", total_sv, 2 * ncoef, "support vector lines")))
        goto fail;
    /* n grows with the indices read */
    if ((rc = km_model_svs_new(0, (int)ncoef, total_sv, ktype == KM_KERNEL_PRECOMPUTED, &S,
                               &coef, err)))
        goto fail;
    int64_t cap = 0;
    for (int64_t s = 0; s < total_sv; s++) {
        if (!(line = km_model_sv_line(io, s, total_sv, &rc)))
            goto fail;
        const char *p = line;
        int st;
        for (int64_t q = 0; q < ncoef; q++) {
            while (*p == ' ' || *p == '\t')
                p++;
            const char *at = p;
            p = km_parse_double(p, &coef[q * total_sv + s], &st);
            if (st != KM_NUM_OK || (*p != ' ' && *p != '\t' && *p))
                rc = km_mio_bad_col(io, at - line + 1, "expected %lld coefficients",
                                    (long long)ncoef);
            if (rc)
                goto fail;
        }
        if (ktype == KM_KERNEL_PRECOMPUTED) {   /* "0:ID": the serial number alone */
            while (*p == ' ' || *p == '\t')
                p++;
            const char *at = p;
            double id = 0;
            if (p[0] == '0' && p[1] == ':')
                p = km_parse_double(p + 2, &id, &st);
            else
                st = KM_NUM_NONE;
            while (*p == ' ' || *p == '\t')
                p++;
            if (st != KM_NUM_OK || *p || !(id >= 1 && id <= INT32_MAX) || id != floor(id)) {
                rc = km_mio_bad_col(io, at - line + 1, "expected 0:ID (a precomputed "
                                    "kernel's serial number, an integer >= 1)");
                goto fail;
            }
            S->id[s] = (int64_t)id;
            S->n = (int32_t)id > S->n ? (int32_t)id : S->n;
            S->row_ptr[s + 1] = 0;
            continue;
        }
        int64_t prev = 0;
        for (;;) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (!*p)
                break;
            const char *at = p;
            uint64_t idx;
            double val;
            p = km_parse_uint(p, INT32_MAX, &idx, &st);
            if (st != KM_NUM_OK || idx == 0 || (int64_t)idx <= prev || *p++ != ':') {
                rc = km_mio_bad_col(io, at - line + 1, "expected increasing index:value pairs "
                                    "(indices 1 to 2147483647)");
                goto fail;
            }
            at = p;
            p = km_parse_double(p, &val, &st);
            if (st != KM_NUM_OK || (*p != ' ' && *p != '\t' && *p)) {
                rc = km_mio_bad_col(io, at - line + 1, "expected a finite feature value");
                goto fail;
            }
            if (km_problem_reserve(S, &cap, S->nnz + 1)) {
                rc = km_error_nomem(err, "support vectors");
                goto fail;
            }
            S->index[S->nnz] = (int32_t)(idx - 1);
            S->value[S->nnz++] = val;
            prev = (int64_t)idx;
            if ((int32_t)idx > S->n)
                S->n = (int32_t)idx;
        }
        S->row_ptr[s + 1] = S->nnz;
    }
    if ((rc = km_foreign_end(io, "support vectors")))
        goto fail;
    int kclass = svm_type == ONE_CLASS ? 2 : classify ? (int)nr_class : 0;
    int nw = kclass > 2 ? kclass : 1;
    int loss = classify || svm_type == ONE_CLASS ? KM_LOSS_L1SVM : KM_LOSS_SVR;
    /* rbf: features beyond the support vectors' still count (decision_rows): n unbounded */
    int32_t n = kern.type == KM_KERNEL_RBF ? INT32_MAX : S->n;
    if (!(m = km_model_alloc(&km_kind_libsvm, loss, n, kclass, nw, err)) ||
        !(body = calloc(1, sizeof *body))) {
        rc = m ? km_error_nomem(err, "model") : err->code;
        goto fail;
    }
    body->svm_type = svm_type;
    body->k = (int)k;
    body->kernel = kern;
    if (!(body->sv_data = km_kdata_new(S, NULL, S->l, err))) {
        rc = err->code;
        goto fail;
    }
    body->sv = S;
    body->coef = coef;
    body->rho = rho;
    body->start = start;
    m->body = body;
    S = NULL;
    coef = rho = NULL;
    start = NULL;
    body = NULL;
    km_foreign_labels(m, svm_type == ONE_CLASS, kclass, label);   /* d_01 > 0: the first label */
    free(label);
    free(nsv);
    *out = m;
    return KM_OK;
fail:
    if (body)
        km_kdata_free(body->sv_data);
    free(body);
    km_model_free(m);
    km_problem_free(S);
    free(coef);
    free(rho);
    free(label);
    free(nsv);
    free(start);
    return rc;
}

/* ---- writing ---- */

static int write_text(FILE *f, const void *ctx)
{
    const km_model *m = ctx;
    const km_expansion *e = km_model_expansion(m);
    static const char *const kname[] = {[KM_KERNEL_LINEAR] = "linear",
                                        [KM_KERNEL_POLY] = "polynomial",
                                        [KM_KERNEL_RBF] = "rbf",
                                        [KM_KERNEL_SIGMOID] = "sigmoid",
                                        [KM_KERNEL_PRECOMPUTED] = "precomputed"};
    char b[KM_DTOA_SIZE];
    fprintf(f, "svm_type %s\nkernel_type %s\n", m->nr_class ? "c_svc" : "epsilon_svr",
            kname[e->kernel.type]);
    if (e->kernel.type == KM_KERNEL_POLY)
        fprintf(f, "degree %d\n", e->kernel.degree);
    if (e->kernel.type != KM_KERNEL_LINEAR && e->kernel.type != KM_KERNEL_PRECOMPUTED) {
        km_dtoa(e->kernel.gamma, b);
        fprintf(f, "gamma %s\n", b);
    }
    if (e->kernel.type == KM_KERNEL_POLY || e->kernel.type == KM_KERNEL_SIGMOID) {
        km_dtoa(e->kernel.coef0, b);
        fprintf(f, "coef0 %s\n", b);
    }
    /* rho: 0, or for K + offset (-B with a kernel) -offset sum_s c_s, since
     * sum_s c_s (K(sv_s, x) + offset) = sum_s c_s K(sv_s, x) - rho; two classes as
     * {labels[1], labels[0]} with every support vector in the first (d_01 > 0 means
     * LIBSVM's first label) */
    double csum = 0;
    for (int64_t s = 0; s < e->sv->l; s++)
        csum += e->sv_coef[s];
    km_dtoa(e->kernel.offset != 0 ? -e->kernel.offset * csum : 0.0, b);
    fprintf(f, "nr_class 2\ntotal_sv %lld\nrho %s\n", (long long)e->sv->l, b);
    if (m->nr_class == 2)
        fprintf(f, "label %.0f %.0f\nnr_sv %lld 0\n", m->labels[1], m->labels[0],
                (long long)e->sv->l);
    fputs("SV\n", f);
    if (e->kernel.type == KM_KERNEL_PRECOMPUTED) {   /* svm_save_model's "coef 0:ID" */
        for (int64_t s = 0; s < e->sv->l; s++) {
            km_dtoa(e->sv_coef[s], b);
            fprintf(f, "%s 0:%lld\n", b, (long long)e->sv->id[s]);
        }
    } else {
        km_model_put_svs(f, e->sv, e->sv_coef, 1);
    }
    return ferror(f) ? -1 : 0;
}

int km_model_write_libsvm(const km_model *m, const char *path, km_error *err)
{
    if (m->kind != &km_kind_kernel)
        return km_error_set(err, KM_EUSAGE, "a %s model does not fit LIBSVM's format (kernel "
                            "models only: train -t KERNEL)", m->kind->name);
    const km_expansion *e = m->body;
    if (e->kernel.type != KM_KERNEL_LINEAR && e->kernel.type != KM_KERNEL_POLY &&
        e->kernel.type != KM_KERNEL_RBF && e->kernel.type != KM_KERNEL_SIGMOID &&
        e->kernel.type != KM_KERNEL_PRECOMPUTED)
        return km_error_set(err, KM_EUSAGE, "the %s kernel does not fit LIBSVM's format "
                            "(linear, poly, rbf, sigmoid, precomputed)",
                            km_kernel_name(e->kernel.type));
    if (m->nr_class > 2 || m->nr_w != 1)
        return km_error_set(err, KM_EUSAGE, "a one-versus-all model of %d classes does not "
                            "fit LIBSVM's one-versus-one format", m->nr_class);
    for (int k = 0; k < m->nr_class; k++)
        if (!(fabs(m->labels[k]) <= 2147483647.0) || m->labels[k] != floor(m->labels[k]))
            return km_error_set(err, KM_EUSAGE, "label %g does not fit LIBSVM's format (its "
                                "labels are integers)", m->labels[k]);
    return km_write_atomic(path, "LIBSVM model", write_text, m, err);
}

int32_t km_libsvm_precomputed(const km_model *m)
{
    const svm_body *b = m->kind == &km_kind_libsvm ? m->body : NULL;
    return b && b->kernel.type == KM_KERNEL_PRECOMPUTED ? -(b->sv->n > 0 ? b->sv->n : 1) : 0;
}
