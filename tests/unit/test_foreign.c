/* test_foreign.c - LIBLINEAR and LIBSVM model files (model_liblinear.c, model_libsvm.c):
 * decision values and labels against the peers' rules written out here (linear.cpp
 * predict_values, svm.cpp svm_predict_values), the kmtk -> LIBLINEAR writer read back, and
 * damaged files refused with FILE:LINE:COL, nothing allocated before a count is checked. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "test.h"
#include "testutil.h"

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Test rows: 3 features plus a feature 5 beyond every model's. */
static km_problem *rows(void)
{
    static const int64_t rp[] = {0, 3, 4, 4, 7, 9};
    static const int32_t ix[] = {0, 1, 2, 1, 0, 2, 4, 0, 1};
    static const double vx[] = {0.5, -1, 2, 0.25, -0.75, 1.5, 0.3, 1, 1};
    static const double y[] = {1, 2, 3, 1, 2};
    km_problem *P = NULL;
    km_error err;
    km_problem_from_csr(5, 5, rp, ix, vx, y, NULL, &P, &err);
    return P;
}

static double row_dot(const km_problem *X, int64_t i, const double *w, int nf)
{
    double s = 0;
    for (int64_t t = X->row_ptr[i]; t < X->row_ptr[i + 1]; t++)
        if (X->index[t] < nf)
            s += w[X->index[t]] * X->value[t];
    return s;
}

static km_model *load(const char *path, const char *text, km_error *err)
{
    put(path, text);
    km_model *m = NULL;
    if (km_model_read(path, &m, err))
        return NULL;
    return m;
}

static void test_liblinear(const char *path)
{
    km_problem *X = rows();
    km_error err;
    double dec[5 * 3], pred[5];
    /* two classes with a bias: w'x + 0.5 w_b > 0 means the first label (2) */
    km_model *m = load(path, "solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 2 -1\n"
                       "nr_feature 3\nbias 0.5\nw\n1 \n-2 \n0.5 \n-0.25 \n", &err);
    CHECK(m && m->kind == &km_kind_liblinear && m->nr_class == 2 && m->nr_w == 1 &&
          m->labels[0] == -1 && m->labels[1] == 2, "LIBLINEAR two classes read (%s)",
          m ? "" : err.msg);
    if (m) {
        double w[] = {1, -2, 0.5};
        km_model_decision_rows(m, X, NULL, X->l, dec, 1, &err);
        km_predict(m, X, pred, &err);
        int ok = 1;
        for (int64_t i = 0; i < X->l; i++) {
            double d = row_dot(X, i, w, 3) + 0.5 * -0.25;
            ok &= fabs(dec[i] - d) <= 1e-15 && pred[i] == (d > 0 ? 2 : -1);
        }
        CHECK(ok, "decision w'x + bias w_b (feature 5 ignored); > 0 predicts the first label");
        km_model_free(m);
    }
    /* three classes, one-versus-rest: the first class of largest w_k'x */
    m = load(path, "solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 3\nlabel 3 1 2\nnr_feature 3\n"
             "bias -1\nw\n1 0 0 \n0 1 0 \n0 0 1 \n", &err);
    CHECK(m && m->nr_class == 3 && m->nr_w == 3 && m->labels[0] == 3 && m->labels[1] == 1 &&
          m->labels[2] == 2, "LIBLINEAR three classes: labels in the file's order");
    if (m) {
        km_predict(m, X, pred, &err);
        /* rows: (0.5,-1,2) -> class 2 (label 2); (0,0.25,0) -> 1; empty -> tie: first (3);
         * (-0.75,0,1.5) -> 2; (1,1,0) -> tie of 3 and 1: first (3) */
        CHECK(pred[0] == 2 && pred[1] == 1 && pred[2] == 3 && pred[3] == 2 && pred[4] == 3,
              "argmax with ties to the first class, as linear.cpp (got %g %g %g %g %g)",
              pred[0], pred[1], pred[2], pred[3], pred[4]);
        km_model_free(m);
    }
    /* Crammer-Singer on two classes: two weight columns, the first wins when larger */
    m = load(path, "solver_type MCSVM_CS\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias -1\nw\n"
             "1 -1 \n0.5 0.5 \n0 2 \n", &err);
    CHECK(m && m->nr_w == 1, "MCSVM_CS two classes read as one decision value");
    if (m) {
        km_model_decision_rows(m, X, NULL, X->l, dec, 1, &err);
        double w0[] = {1, 0.5, 0}, w1[] = {-1, 0.5, 2};
        int ok = 1;
        for (int64_t i = 0; i < X->l; i++)
            ok &= fabs(dec[i] - (row_dot(X, i, w0, 3) - row_dot(X, i, w1, 3))) <= 1e-15;
        CHECK(ok, "MCSVM_CS: decision w_0'x - w_1'x");
        km_model_free(m);
    }
    /* regression and one-class */
    m = load(path, "solver_type L2R_L1LOSS_SVR_DUAL\nnr_class 2\nnr_feature 3\nbias 1\nw\n"
             "1 \n2 \n3 \n4 \n", &err);
    CHECK(m && m->nr_class == 0, "LIBLINEAR regression read (nr_class 0)");
    if (m) {
        km_predict(m, X, pred, &err);
        double w[] = {1, 2, 3};
        CHECK(pred[0] == row_dot(X, 0, w, 3) + 4 && pred[2] == 4, "regression: w'x + w_b");
        km_model_free(m);
    }
    m = load(path, "solver_type ONECLASS_SVM\nnr_class 2\nnr_feature 3\nbias -1\nrho 0.75\nw\n"
             "1 \n0 \n0 \n", &err);
    CHECK(m && m->nr_class == 2 && m->labels[0] == -1 && m->labels[1] == 1,
          "LIBLINEAR one-class read (%s)", m ? "" : err.msg);
    if (m) {
        km_predict(m, X, pred, &err);
        CHECK(pred[0] == -1 && pred[4] == 1 && pred[2] == -1, "one-class: +1 when w'x > rho");
        km_model_free(m);
    }
    km_problem_free(X);
}

/* The RBF kernel written out: exp(-gamma ||x - s||^2), x with all its features. */
static double rbf(const km_problem *X, int64_t i, const double *s, int ns, double gamma)
{
    double x[8] = {0}, d = 0;
    for (int64_t t = X->row_ptr[i]; t < X->row_ptr[i + 1]; t++)
        x[X->index[t]] = X->value[t];
    for (int j = 0; j < 8; j++) {
        double sj = j < ns ? s[j] : 0;
        d += (x[j] - sj) * (x[j] - sj);
    }
    return exp(-gamma * d);
}

static void test_libsvm(const char *path)
{
    km_problem *X = rows();
    km_error err;
    double dec[5 * 3], pred[5];
    /* two classes, rbf, 3 support vectors (2 of label 1, 1 of label -1) */
    km_model *m = load(path, "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\n"
                       "total_sv 3\nrho 0.1\nlabel 1 -1\nprobA -1.5\nprobB 0.1\nnr_sv 2 1\nSV\n"
                       "1 1:0.5 2:-1 \n0.5 3:1 \n-1.5 1:-1 2:1 3:0.5 \n", &err);
    CHECK(m && m->kind == &km_kind_libsvm && m->nr_class == 2 && m->labels[1] == 1 &&
          m->labels[0] == -1, "LIBSVM rbf two classes read (%s)", m ? "" : err.msg);
    if (m) {
        double s[3][3] = {{0.5, -1, 0}, {0, 0, 1}, {-1, 1, 0.5}}, a[3] = {1, 0.5, -1.5};
        km_model_decision_rows(m, X, NULL, X->l, dec, 1, &err);
        km_predict(m, X, pred, &err);
        int ok = 1;
        for (int64_t i = 0; i < X->l; i++) {
            double d = -0.1;
            for (int q = 0; q < 3; q++)
                d += a[q] * rbf(X, i, s[q], 3, 0.5);
            ok &= fabs(dec[i] - d) <= 1e-14 && pred[i] == (d > 0 ? 1 : -1);
        }
        CHECK(ok, "rbf decision sum_s a_s K(sv_s, x) - rho, feature 5 counted in ||x - sv||");
        km_model_free(m);
    }
    /* three classes, linear kernel: one-versus-one votes */
    m = load(path, "svm_type c_svc\nkernel_type linear\nnr_class 3\ntotal_sv 3\n"
             "rho 0.5 -0.5 0.25\nlabel 7 8 9\nnr_sv 1 1 1\nSV\n"
             "1 1 1:1 \n-1 1 2:1 \n-1 -1 3:1 \n", &err);
    CHECK(m && m->nr_class == 3 && m->nr_w == 3 && m->labels[0] == 7 && m->labels[2] == 9,
          "LIBSVM three classes read (%s)", m ? "" : err.msg);
    if (m) {
        km_predict(m, X, pred, &err);
        km_model_decision_rows(m, X, NULL, X->l, dec, 1, &err);
        int ok = 1;
        for (int64_t i = 0; i < X->l; i++) {
            double x[5] = {0};
            for (int64_t t = X->row_ptr[i]; t < X->row_ptr[i + 1]; t++)
                x[X->index[t]] = X->value[t];
            /* sv 0 (class 0): a_0 = 1, a_1 = 1; sv 1 (class 1): a_0 = -1, a_1 = 1;
             * sv 2 (class 2): a_0 = -1, a_1 = -1. Pair (0,1): a_0[sv0] K0 + a_0[sv1] K1 */
            double d01 = 1 * x[0] + -1 * x[1] - 0.5;
            double d02 = 1 * x[0] + -1 * x[2] + 0.5;
            double d12 = 1 * x[1] + -1 * x[2] - 0.25;
            int v[3] = {0, 0, 0};
            v[d01 > 0 ? 0 : 1]++;
            v[d02 > 0 ? 0 : 2]++;
            v[d12 > 0 ? 1 : 2]++;
            int best = 0;
            for (int c = 1; c < 3; c++)
                if (v[c] > v[best])
                    best = c;
            ok &= pred[i] == 7 + best && dec[i * 3] == v[0] && dec[i * 3 + 1] == v[1] &&
                  dec[i * 3 + 2] == v[2];
        }
        CHECK(ok, "one-versus-one: the pairwise values, votes, first class of most votes");
        km_model_free(m);
    }
    /* epsilon-SVR, polynomial kernel */
    m = load(path, "svm_type epsilon_svr\nkernel_type polynomial\ndegree 2\ngamma 0.5\n"
             "coef0 1\nnr_class 2\ntotal_sv 2\nrho -0.3\nSV\n0.5 1:1 \n-2 2:1 3:1 \n", &err);
    CHECK(m && m->nr_class == 0, "LIBSVM epsilon_svr read (%s)", m ? "" : err.msg);
    if (m) {
        km_predict(m, X, pred, &err);
        int ok = 1;
        for (int64_t i = 0; i < X->l; i++) {
            double s0[] = {1, 0, 0}, s1[] = {0, 1, 1};
            double k0 = pow(0.5 * row_dot(X, i, s0, 3) + 1, 2), k1 = pow(0.5 * row_dot(X, i, s1, 3) + 1, 2);
            ok &= fabs(pred[i] - (0.5 * k0 - 2 * k1 + 0.3)) <= 1e-14;
        }
        CHECK(ok, "epsilon_svr: sum_s a_s (gamma x's + coef0)^degree - rho");
        km_model_free(m);
    }
    m = load(path, "svm_type one_class\nkernel_type sigmoid\ngamma 0.5\ncoef0 0\nnr_class 2\n"
             "total_sv 1\nrho 0.2\nSV\n1 1:1 \n", &err);
    CHECK(m && m->nr_class == 2, "LIBSVM one_class sigmoid read (%s)", m ? "" : err.msg);
    if (m) {
        km_predict(m, X, pred, &err);
        int ok = 1;
        for (int64_t i = 0; i < X->l; i++) {
            double s0[] = {1, 0, 0};
            ok &= pred[i] == (tanh(0.5 * row_dot(X, i, s0, 3)) - 0.2 > 0 ? 1 : -1);
        }
        CHECK(ok, "one_class: +1 when tanh(gamma x's + coef0) - rho > 0");
        CHECK(km_model_write(m, path, &err) != KM_OK, "a LIBSVM model is not written as a kmtk "
              "model (refused, not crashed)");
        km_model_free(m);
    }
    km_problem_free(X);
}

/* The predictions (pa, pb) and decision values (da, db) of models a and b on the rows of X. */
static void predict_both(const km_model *a, const km_model *b, const km_problem *X, double *pa,
                         double *pb, double *da, double *db)
{
    km_error err;
    km_predict(a, X, pa, &err);
    km_predict(b, X, pb, &err);
    km_model_decision_rows(a, X, NULL, X->l, da, 1, &err);
    km_model_decision_rows(b, X, NULL, X->l, db, 1, &err);
}

static void test_writer(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/w.liblinear", dir);
    km_problem *X = rows();
    km_error err;
    km_rng r;
    km_rng_seed(&r, 5);
    for (int shape = 0; shape < 3; shape++) {
        int nc = shape == 0 ? 0 : shape == 1 ? 2 : 3, nw = nc > 2 ? nc : 1;
        km_model *m = km_model_new(nc ? KM_LOSS_L2SVM : KM_LOSS_RLS, 4, nc, nw, &err);
        m->bias = shape == 1 ? 1 : -1;
        for (int k = 0; k < nc; k++)
            m->labels[k] = 2 * k - 1;
        for (int64_t j = 0; j < 5 * nw; j++)
            km_model_w(m)[j] = 2 * unif(&r) - 1;
        CHECK(km_model_write_liblinear(m, path, &err) == KM_OK, "write shape %d as LIBLINEAR",
              shape);
        km_model *q = NULL;
        int rc = km_model_read(path, &q, &err);
        CHECK(rc == KM_OK, "read it back (%s)", rc ? err.msg : "");
        if (rc == KM_OK) {
            double p1[5], p2[5], d1[15], d2[15];
            predict_both(m, q, X, p1, p2, d1, d2);
            int ok = memcmp(p1, p2, sizeof p1) == 0;
            for (int t = 0; t < 5 * nw; t++)
                ok &= fabs(d1[t] - d2[t]) <= 1e-15;
            CHECK(ok, "shape %d: the same predictions and decision values", shape);
            km_model_free(q);
        }
        if (nc) {
            m->labels[0] = 0.5;
            CHECK(km_model_write_liblinear(m, path, &err) == KM_EUSAGE &&
                  strstr(err.msg, "integers"), "a label 0.5 does not fit LIBLINEAR's format");
        }
        km_model_free(m);
    }
    unlink(path);
    km_problem_free(X);
}

/* A kmtk kernel model written in LIBSVM's format reads back (kind libsvm) with the same
 * decision values and labels: two classes and regression, each LIBSVM kernel. */
static void test_libsvm_writer(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/w.libsvm", dir);
    km_problem *X = rows();
    km_error err;
    km_rng r;
    km_rng_seed(&r, 9);
    const km_kernel kernels[] = {{KM_KERNEL_LINEAR, 0, 0, 3, 0}, {KM_KERNEL_POLY, 0.5, 1, 3, 0},
                                 {KM_KERNEL_RBF, 0.3, 0, 3, 0}, {KM_KERNEL_SIGMOID, 0.2, -0.5, 3, 0}};
    for (int t = 0; t < 8; t++) {
        int nc = t < 4 ? 2 : 0;
        km_model *m = km_model_new(nc ? KM_LOSS_L1SVM : KM_LOSS_SVR, 4, nc, 1, &err);
        if (nc) {
            m->labels[0] = -1;
            m->labels[1] = 3;
        }
        km_problem *sv = random_problem(6, 4, 0.7, 1, 100 + (uint64_t)t);
        double *c = malloc(6 * sizeof *c);
        for (int s2 = 0; s2 < 6; s2++)
            c[s2] = 2 * unif(&r) - 1;
        km_model_set_kernel(m, &kernels[t % 4], sv, c, &err);
        int rc = km_model_write_libsvm(m, path, &err);
        CHECK(rc == KM_OK, "write kernel %d, %s as LIBSVM (%s)", t % 4, nc ? "two classes" :
              "regression", rc ? err.msg : "");
        km_model *q = NULL;
        rc = rc ? rc : km_model_read(path, &q, &err);
        CHECK(rc == KM_OK && q->kind == &km_kind_libsvm, "read it back (%s)", rc ? err.msg : "");
        if (rc == KM_OK) {
            double d1[5], d2[5], p1[5], p2[5];
            predict_both(m, q, X, p1, p2, d1, d2);
            /* labels exactly (regression: the values, below) */
            int ok = !nc || memcmp(p1, p2, sizeof p1) == 0 || kernels[t % 4].type == KM_KERNEL_RBF;
            for (int i = 0; i < 5; i++)   /* (rbf: row 3's feature 5 counts in LIBSVM's) */
                ok &= kernels[t % 4].type == KM_KERNEL_RBF && i == 3
                          ? 1 : fabs(d1[i] - d2[i]) <= 1e-13 * (1 + fabs(d1[i]));
            CHECK(ok, "kernel %d, %s: the same decision values and labels", t % 4,
                  nc ? "two classes" : "regression");
            km_model_free(q);
        }
        km_model_free(m);
    }
    km_model *lin = km_model_new(KM_LOSS_L1SVM, 4, 2, 1, &err);
    CHECK(km_model_write_libsvm(lin, path, &err) == KM_EUSAGE && strstr(err.msg, "kernel models"),
          "a linear model is not written as LIBSVM's");
    km_model_free(lin);
    unlink(path);
    km_problem_free(X);
}

static void test_hostile(const char *path)
{
    struct { const char *text, *want; } bad[] = {
        {"solver_type L2R_XX\n", ":1:13: unknown LIBLINEAR solver_type"},
        {"solver_type L2R_LR\ncolor 1\nw\n", ":2:1: unknown LIBLINEAR header key 'color'"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1\n", ":3:7: expected nr_class (2) labels"},
        {"solver_type L2R_LR\nnr_class 1000000\nlabel 1 2\n", ":3:7: expected nr_class"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2147483000\nbias -1\nw\n1 \n",
         "nr_feature 2147483000 needs at least"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n1.000 \n",
         "truncated model (1 of 2 weight lines)"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n1 \nnan \n",
         ":8:1: expected nr_w weights"},
        {"solver_type L2R_LR\nnr_class 3\nlabel 1 -1 2\nnr_feature 1\nbias -1\nw\n1 2 x     \n",
         ":7:5: expected nr_w weights"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n1 \nextra\n",
         ":8:1: unexpected text after the weights"},
        {"solver_type L2R_LR\nnr_class 2\nnr_feature 1\nbias -1\nw\n1 \n", "needs a 'label'"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\n", "truncated model (no 'w' line)"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_class 5\n", ":4:1: header key "
         "'nr_class' given twice"},
        {"svm_type c_svc\nkernel_type linear\nnr_class 2\nrho 1\nnr_class 3\n", ":5:1: header "
         "key 'nr_class' given twice"},
        {"svm_type c_svc\nkernel_type precomputed\nnr_class 2\ntotal_sv 1\nrho 0\nlabel 1 -1\n"
         "nr_sv 1 0\nSV\n1 1:0.5\n", ":9:3: expected 0:ID (a precomputed kernel's serial"},
        {"svm_type c_svx\n", ":1:10: unknown svm_type"},
        {"svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 3\ntotal_sv 1\nrho 1 2\n",
         ":6:5: expected 3 numbers (rho)"},
        {"svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 1000000000\nrho 1\n"
         "label 1 -1\nnr_sv 500000000 500000000\nSV\n1 1:1\n", "total_sv 1000000000 needs at "
         "least"},
        {"svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 2\nrho 1\n"
         "label 1 -1\nnr_sv 1 2\nSV\n1 1:1\n-1 1:1\n", "nr_sv does not add up"},
        {"svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 2\nrho 1\n"
         "label 1 -1\nnr_sv 1 1\nSV\n1 2:1 1:1\n-1 1:1\n", ":10:7: expected increasing"},
        {"svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 2\nrho 1\n"
         "label 1 -1\nnr_sv 1 1\nSV\n1 1:inf\n-1 1:1\n", ":10:5: expected a finite"},
        {"svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 2\nrho 1\n"
         "label 1 -1\nnr_sv 1 1\nSV\n1 1:1\n", "truncated model (1 of 2 support vectors)"},
        {"svm_type c_svc\nkernel_type rbf\ngamma 1\nnr_class 2\ntotal_sv 1\nrho 1\n"
         "label 1 -1\nnr_sv 1 0\nSV\n1 2147483648:1\n", ":10:3: expected increasing"},
        {"svm_type c_svc\nkernel_type rbf\nnr_class 2\ntotal_sv 1\nrho 1\n"
         "label 1 -1\nnr_sv 1 0\nSV\n1 1:1\n", "needs 'gamma'"},
        {"svm_type c_svc\nkernel_type rbf\ngamma -1\nnr_class 2\ntotal_sv 1\nrho 1\n"
         "label 1 -1\nnr_sv 1 0\nSV\n1 1:1\n", "gamma must be a positive number"},
        {"svm_type epsilon_svr\nkernel_type linear\nnr_class 3\ntotal_sv 1\nrho 1 2 3\nSV\n1 1:1\n",
         "has nr_class 2"},
        {"svm_type c_svc\nkernel_type linear\nnr_class 65536\n"
         "rho 1\n", ":4:5: expected 2147450880 numbers (rho)"},
    };
    km_error err;
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        put(path, bad[t].text);
        km_model *m = NULL;
        int rc = km_model_read(path, &m, &err);
        CHECK(rc == KM_EINPUT && strstr(err.msg, bad[t].want) && strstr(err.msg, path),
              "damaged foreign model %zu rejected with '%s' (got '%s')", t, bad[t].want,
              rc ? err.msg : "success");
        if (rc == KM_OK)
            km_model_free(m);
    }
}

int main(void)
{
    char dir[] = "/tmp/kmtk-foreign-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    char path[256];
    snprintf(path, sizeof path, "%s/f.model", dir);
    test_liblinear(path);
    test_libsvm(path);
    test_writer(dir);
    test_libsvm_writer(dir);
    test_hostile(path);
    unlink(path);
    rmdir(dir);
    TEST_EXIT();
}
