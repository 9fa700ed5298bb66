/* model_liblinear.c - LIBLINEAR's model files (linear.cpp save_model/load_model, 2.x) read as
 * a model kind, and kmtk's linear models written in that format (doc/model-format.md).
 *
 *   solver_type L2R_LR           the solver (names of linear.cpp's solver_type_table)
 *   nr_class 2                   2 for regression and one-class too
 *   label 1 -1                   classification only: the classes, in LIBLINEAR's order
 *   nr_feature 13
 *   bias 1                       < 0: no bias feature
 *   rho 0.5                      one-class (ONECLASS_SVM, LIBLINEAR >= 2.40) only
 *   w
 *   nr_feature (+1 with a bias) lines of nr_w weights, each followed by a blank
 *
 * nr_w is 1 for two classes (except MCSVM_CS), regression and one-class, else nr_class;
 * w[j * nr_w + k] as in kmtk's linear kind. LIBLINEAR predicts the first label when the
 * decision value w'x is > 0 (two classes), the first class of largest w_k'x (more),
 * w'x (regression), +1 when w'x - rho > 0 (one-class). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "dtoa.h"
#include "model.h"
#include "model_foreign.h"

/* linear.cpp's solver_type_table (its index is the -s number). */
static const char *const solver_names[] = {
    [0] = "L2R_LR",               [1] = "L2R_L2LOSS_SVC_DUAL", [2] = "L2R_L2LOSS_SVC",
    [3] = "L2R_L1LOSS_SVC_DUAL",  [4] = "MCSVM_CS",            [5] = "L1R_L2LOSS_SVC",
    [6] = "L1R_LR",               [7] = "L2R_LR_DUAL",         [11] = "L2R_L2LOSS_SVR",
    [12] = "L2R_L2LOSS_SVR_DUAL", [13] = "L2R_L1LOSS_SVR_DUAL", [21] = "ONECLASS_SVM",
};
enum { NSOLVER = (int)(sizeof solver_names / sizeof *solver_names) };

static int solver_from_name(const char *s)
{
    for (int t = 0; t < NSOLVER; t++)
        if (solver_names[t] && strcmp(solver_names[t], s) == 0)
            return t;
    return -1;
}

static int is_regression(int solver)
{
    return solver == 11 || solver == 12 || solver == 13;
}

/* The logistic loss when this kmtk has one (by name), else squared hinge: the labels and
 * decision values do not depend on it. */
static int logistic_loss(void)
{
    int l = km_loss_from_name("logreg");
    if (l < 0)
        l = km_loss_from_name("logistic");
    return l >= 0 ? l : KM_LOSS_L2SVM;
}

static int loss_of(int solver)
{
    switch (solver) {
    case 0: case 6: case 7: return logistic_loss();
    case 3: case 4: case 21: return KM_LOSS_L1SVM;
    case 11: case 12: case 13: return KM_LOSS_SVR;
    default: return KM_LOSS_L2SVM;
    }
}

/* The body is the weight array itself, as the linear kind's: (n + 1) * nr_w doubles. */
static void free_body(km_model *m)
{
    free(m->body);
    m->body = NULL;
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    (void)threads;
    (void)err;
    int nw = m->nr_w;
    const double *w = m->body;
    for (int64_t a = 0; a < count; a++) {   /* in linear.cpp's order: the bias feature last */
        int64_t i = rows ? rows[a] : a;
        double *d = dec + a * nw;
        for (int k = 0; k < nw; k++)
            d[k] = 0;
        for (int64_t t = X->row_ptr[i]; t < X->row_ptr[i + 1]; t++) {
            if (X->index[t] >= m->n)
                continue;   /* features beyond nr_feature are not used, as in LIBLINEAR */
            const double *wj = w + (int64_t)X->index[t] * nw;
            for (int k = 0; k < nw; k++)
                d[k] += wj[k] * X->value[t];
        }
        if (m->bias >= 0)
            for (int k = 0; k < nw; k++)
                d[k] += w[(int64_t)m->n * nw + k] * m->bias;
    }
    return KM_OK;
}

const km_model_kind km_kind_liblinear = {
    .name = "liblinear",
    .body_name = "weights",
    .section = "w",
    .write_body = km_foreign_write_body,   /* refused: km_model_write_liblinear instead */
    .read = km_foreign_read_kmtk,
    .free_body = free_body,
    .decision_rows = decision_rows,
};

int km_liblinear_read(km_mio *io, const char *first, km_model **out, km_error *err)
{
    int solver = -1, have_bias = 0, have_rho = 0;
    long long nr_class = -1, nr_feature = -1;
    double bias = -1, rho = 0;
    double *label = NULL;
    int64_t label_line = 0;
    km_model *m = NULL;
    const char *line = first;
    int rc = KM_OK;
    /* the header, "key value" lines in any order up to "w" (load_model's tokens) */
    enum { K_SOLVER, K_NR_CLASS, K_LABEL, K_NR_FEATURE, K_BIAS, K_RHO };
    static const char *const keys[] = {"solver_type", "nr_class", "label", "nr_feature", "bias", "rho"};
    km_foreign_header h = {.format = "LIBLINEAR", .end = "w", .keys = keys,
                           .nkeys = (int)(sizeof keys / sizeof *keys), .io = io, .line = first};
    int key;
    const char *v;
    while ((rc = km_foreign_key(&h, &key, &v)) == KM_OK && key >= 0) {
        line = h.line;
        switch (key) {
        case K_SOLVER:
            if ((solver = solver_from_name(v)) < 0)
                rc = km_mio_bad_col(io, v - line + 1, "unknown LIBLINEAR solver_type '%.40s'", v);
            break;
        case K_NR_CLASS:
            if (km_model_parse_int(v, 2, 1 << 24, &nr_class))
                rc = km_mio_bad_col(io, v - line + 1, "bad nr_class (2 to 16777216)");
            break;
        case K_NR_FEATURE:
            if (km_model_parse_int(v, 0, INT32_MAX - 1, &nr_feature))
                rc = km_mio_bad_col(io, v - line + 1, "bad nr_feature");
            break;
        case K_BIAS:
            have_bias = 1;
            if (km_mio_number(v, &bias))
                rc = km_mio_bad_col(io, v - line + 1, "expected a number");
            break;
        case K_RHO:
            have_rho = 1;
            if (km_mio_number(v, &rho))
                rc = km_mio_bad_col(io, v - line + 1, "expected a number");
            break;
        case K_LABEL:
            /* nr_class numbers take at least 2 nr_class - 1 characters: checked first */
            if (nr_class >= 0 && (long long)strlen(v) < 2 * nr_class - 1)
                rc = km_mio_bad_col(io, v - line + 1, "expected nr_class (%lld) labels",
                                    nr_class);
            else
                rc = km_foreign_list(io, line, v, nr_class, &label, "label", "nr_class labels",
                                     err);
            label_line = km_mio_lineno(io);
            break;
        }
        if (rc)
            goto fail;
    }
    if (rc)
        goto fail;
    if (solver < 0 || nr_class < 0 || nr_feature < 0 || !have_bias) {
        rc = km_mio_bad(io, "LIBLINEAR header incomplete (need solver_type, nr_class, "
                        "nr_feature, bias before 'w')");
        goto fail;
    }
    int regression = is_regression(solver), oneclass = solver == 21;
    if (!regression && !oneclass && !label) {
        rc = km_mio_bad(io, "a LIBLINEAR classifier needs a 'label' line");
        goto fail;
    }
    if ((regression || oneclass) && (label || nr_class != 2)) {
        km_mio_set_lineno(io, label_line ? label_line : km_mio_lineno(io));
        rc = km_mio_bad(io, "a LIBLINEAR %s model has nr_class 2 and no labels",
                        regression ? "regression" : "one-class");
        goto fail;
    }
    if (oneclass != have_rho || (oneclass && bias >= 0)) {
        rc = km_mio_bad(io, "%s", oneclass ? "a LIBLINEAR one-class model needs 'rho' and bias -1"
                                           : "'rho' belongs to one-class models only");
        goto fail;
    }
    int fw = (nr_class == 2 && solver != 4) ? 1 : (int)nr_class;   /* nr_w of the file */
    int64_t rows = nr_feature + (bias >= 0);
    /* a weight line has at least 2 fw characters */
    if ((rc = km_mio_count(io, "nr_feature", rows, 2 * (int64_t)fw, "weight lines")))
        goto fail;
    int kclass = regression ? 0 : (int)nr_class;
    int nw = fw == 2 && nr_class == 2 ? 1 : fw;   /* MCSVM_CS on two classes: w_0 - w_1 */
    m = km_model_alloc(&km_kind_liblinear, loss_of(solver), (int32_t)nr_feature, kclass, nw, err);
    double *w = m ? calloc(((size_t)nr_feature + 2) * (size_t)fw, sizeof *w) : NULL;
    if (!w) {
        rc = m ? km_error_nomem(err, "model weights") : err->code;
        goto fail;
    }
    m->body = w;
    m->bias = bias;
    for (int64_t j = 0; j < rows; j++) {
        if (!(line = km_mio_line(io))) {
            rc = km_mio_truncated(io, "%lld of %lld weight lines", (long long)j, (long long)rows);
            goto fail;
        }
        if ((rc = km_foreign_numbers(io, line, line, w + j * fw, fw, "nr_w weights")))
            goto fail;
    }
    if ((rc = km_foreign_end(io, "weights")))
        goto fail;
    if (fw == 2 && nw == 1)   /* two classes by Crammer and Singer: the first wins when > */
        for (int64_t j = 0; j < rows; j++)
            w[j] = w[2 * j] - w[2 * j + 1];
    if (oneclass) {   /* w'x - rho as a bias feature of value 1 */
        m->bias = 1;
        w[nr_feature] = -rho;
    }
    km_foreign_labels(m, oneclass, kclass, label);
    free(label);
    *out = m;
    return KM_OK;
fail:
    free(label);
    km_model_free(m);
    return rc;
}

/* ---- writing ---- */

typedef struct ll_out {
    const km_model *m;
    const char *solver;
} ll_out;

static int write_text(FILE *f, const void *ctx)
{
    const ll_out *o = ctx;
    const km_model *m = o->m;
    char b[KM_DTOA_SIZE];
    fprintf(f, "solver_type %s\nnr_class %d\n", o->solver, m->nr_class > 0 ? m->nr_class : 2);
    if (m->nr_class == 2) {   /* LIBLINEAR: w'x > 0 means its first label; kmtk: labels[1] */
        fprintf(f, "label %.0f %.0f\n", m->labels[1], m->labels[0]);
    } else if (m->nr_class > 2) {
        fputs("label", f);
        for (int k = 0; k < m->nr_class; k++)
            fprintf(f, " %.0f", m->labels[k]);
        fputc('\n', f);
    }
    km_dtoa(m->bias, b);
    fprintf(f, "nr_feature %d\nbias %s\nw\n", (int)m->n, b);
    const double *w = m->body;
    for (int64_t j = 0, rows = (int64_t)m->n + (m->bias >= 0); j < rows; j++) {
        for (int k = 0; k < m->nr_w; k++) {
            km_dtoa(w[j * m->nr_w + k], b);
            fputs(b, f);
            fputc(' ', f);
        }
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

int km_model_write_liblinear(const km_model *m, const char *path, km_error *err)
{
    if (m->kind != &km_kind_linear && m->kind != &km_kind_liblinear)
        return km_error_set(err, KM_EUSAGE, "a %s model does not fit LIBLINEAR's format (linear "
                            "models only: train -s l1svm, l2svm, rls, rla, svr without -t)",
                            m->kind->name);
    if (m->nr_output > 0)
        return km_error_set(err, KM_EUSAGE, "a multi-output model does not fit LIBLINEAR's "
                            "format");
    for (int k = 0; k < m->nr_class; k++)
        if (!(fabs(m->labels[k]) <= 2147483647.0) || m->labels[k] != floor(m->labels[k]))
            return km_error_set(err, KM_EUSAGE, "label %g does not fit LIBLINEAR's format "
                                "(its labels are integers)", m->labels[k]);
    const char *name = km_loss_name((km_loss)m->loss), *solver = NULL;
    if (m->nr_class == 0)   /* regression: rls is L2-loss SVR with p = 0, rla L1-loss */
        solver = m->loss == KM_LOSS_RLS ? "L2R_L2LOSS_SVR" : "L2R_L1LOSS_SVR_DUAL";
    else if (name && (strcmp(name, "logreg") == 0 || strcmp(name, "logistic") == 0))
        solver = "L2R_LR";
    else if (m->loss == KM_LOSS_L1SVM)
        solver = "L2R_L1LOSS_SVC_DUAL";
    else if (m->loss == KM_LOSS_L2SVM)
        solver = "L2R_L2LOSS_SVC_DUAL";
    if (!solver)
        return km_error_set(err, KM_EUSAGE, "loss %s has no LIBLINEAR solver", name ? name : "?");
    ll_out o = {m, solver};
    return km_write_atomic(path, "LIBLINEAR model", write_text, &o, err);
}
