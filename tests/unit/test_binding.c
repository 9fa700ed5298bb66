/* test_binding.c - what bindings use beyond the method table (kmtk.h, common/binding.c):
 * km_problem_check on caller-built problems, km_model_predict_all (the decision values and
 * labels of each row as the per-row functions give them, on any number of threads, and a
 * multi-output model's outputs), km_rls2_train's option checks and its model against the
 * rls2 path run by hand. Only kmtk.h is included, as a binding would. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmtk.h"
#include "test.h"

/* A 3 x 4 problem over the caller's arrays. */
static int64_t rp[] = {0, 2, 2, 5};
static int32_t ix[] = {0, 3, 0, 1, 2};
static double vx[] = {1.5, -2, 0.25, 4, 1};
static double ys[] = {1, -1, 1};

static km_problem view(void)
{
    return (km_problem){3, 5, 4, rp, ix, vx, ys, 0, NULL, NULL};
}

static void test_check(void)
{
    km_error err;
    km_problem P = view();
    CHECK(km_problem_check(&P, &err) == KM_OK, "a well-formed view passes (an empty row too)");
    P.n = 3;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE && strstr(err.msg, "row 0"),
          "an index beyond n - 1 fails naming the row: %s", err.msg);
    P = view();
    P.nnz = 4;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE, "row_ptr[l] != nnz fails");
    int32_t unsorted[] = {3, 0, 0, 1, 2};
    P = view();
    P.index = unsorted;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE, "indices that do not increase fail");
    int32_t twice[] = {0, 3, 1, 1, 2};
    P.index = twice;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE && strstr(err.msg, "row 2"),
          "a repeated index fails: %s", err.msg);
    double nan_value[] = {1.5, -2, NAN, 4, 1};
    P = view();
    P.value = nan_value;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE && strstr(err.msg, "finite"),
          "a NaN value fails");
    double inf_label[] = {1, INFINITY, 1};
    P = view();
    P.y = inf_label;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE && strstr(err.msg, "label"),
          "an infinite label fails");
    double two[] = {1, 2, 3, 4, 5, NAN};
    P = view();
    P.y = two;
    P.nout = 2;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE && strstr(err.msg, "row 2"),
          "each of the l x nout labels is checked: %s", err.msg);
    int64_t tasks[] = {4, INT64_MIN, 0}, bad_task[] = {4, -1, 0};
    P = view();
    P.qid = tasks;
    CHECK(km_problem_check(&P, &err) == KM_OK, "task ids 0.. and INT64_MIN (none) pass");
    P.qid = bad_task;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE && strstr(err.msg, "task id -1"),
          "a negative task id fails: %s", err.msg);
    int64_t back[] = {0, 2, 1, 5};
    P = view();
    P.row_ptr = back;
    CHECK(km_problem_check(&P, &err) == KM_EUSAGE && strstr(err.msg, "decreases"),
          "decreasing row pointers fail");
}

/* Rows with a pseudo-random pattern: l rows, n features, labels by the sign of a linear
 * score (classes 1..k by its range when k > 2). */
static km_problem *make(int64_t l, int32_t n, int k, uint64_t seed)
{
    int64_t *row_ptr = malloc((size_t)(l + 1) * sizeof *row_ptr);
    int32_t *index = malloc((size_t)(l * n) * sizeof *index);
    double *value = malloc((size_t)(l * n) * sizeof *value), *y = malloc((size_t)l * sizeof *y);
    int64_t t = 0;
    row_ptr[0] = 0;
    for (int64_t i = 0; i < l; i++) {
        double s = 0;
        for (int32_t j = 0; j < n; j++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            if ((seed >> 60) < 9) {
                double v = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
                index[t] = j;
                value[t++] = v;
                s += (j % 3 - 1) * v;
            }
        }
        row_ptr[i + 1] = t;
        y[i] = k == 2 ? (s > 0 ? 1 : -1) : s < -0.3 ? 1 : s < 0.3 ? 2 : 3;
    }
    km_problem *P = NULL;
    km_error err;
    km_problem_from_csr(l, n, row_ptr, index, value, y, NULL, &P, &err);
    free(row_ptr);
    free(index);
    free(value);
    free(y);
    return P;
}

/* km_model_predict_all against km_model_decision_rows on predict's blocks of 1024 rows
 * (kernel models evaluate a block with one dgemm, whose sums depend on the block's size:
 * hence predict's blocks, exactly) and km_model_predict_label, on 1 and 3 threads; and
 * within 1e-12 of the rows one at a time. */
static void check_predict_all(const km_model *m, const km_problem *X, const char *what)
{
    km_error err;
    int64_t l = X->l, nw = m->nr_w;
    double *dec1 = malloc((size_t)(l * nw) * sizeof *dec1), *dec3 = malloc((size_t)(l * nw) * sizeof *dec3);
    double *pred1 = malloc((size_t)l * sizeof *pred1), *pred3 = malloc((size_t)l * sizeof *pred3);
    double *ref = malloc((size_t)(l * nw) * sizeof *ref);
    int64_t *rows = malloc((size_t)l * sizeof *rows);
    int rc1 = km_model_predict_all(m, X, dec1, pred1, NULL, 1, &err);
    int rc3 = km_model_predict_all(m, X, dec3, pred3, NULL, 3, &err);
    CHECK(rc1 == KM_OK && rc3 == KM_OK, "%s: km_model_predict_all succeeds", what);
    for (int64_t i = 0; i < l; i++)
        rows[i] = i;
    for (int64_t a0 = 0; a0 < l; a0 += 1024)
        km_model_decision_rows(m, X, rows + a0, l - a0 < 1024 ? l - a0 : 1024, ref + a0 * nw, 1,
                               &err);
    int same = memcmp(ref, dec1, (size_t)(l * nw) * sizeof *ref) == 0, close = 1;
    for (int64_t i = 0; i < l; i++) {
        double one[64];
        same &= km_model_predict_label(m, ref + i * nw) == pred1[i];
        km_model_decision_rows(m, X, &i, 1, one, 1, &err);
        for (int64_t k = 0; k < nw; k++)
            close &= fabs(one[k] - dec1[i * nw + k]) <= 1e-12 * (1 + fabs(one[k]));
    }
    CHECK(same, "%s: decision values and labels = those of predict's blocks (%lld rows)", what,
          (long long)l);
    CHECK(close, "%s: decision values within 1e-12 of each row's alone", what);
    CHECK(memcmp(dec1, dec3, (size_t)(l * nw) * sizeof *dec1) == 0 &&
          memcmp(pred1, pred3, (size_t)l * sizeof *pred1) == 0,
          "%s: 3 threads give the bits of 1", what);
    double *pred_only = malloc((size_t)l * sizeof *pred_only);
    CHECK(km_model_predict_all(m, X, NULL, pred_only, NULL, 2, &err) == KM_OK &&
          memcmp(pred_only, pred1, (size_t)l * sizeof *pred1) == 0,
          "%s: labels alone (dec NULL) are the same", what);
    free(pred_only);
    free(dec1);
    free(dec3);
    free(pred1);
    free(pred3);
    free(ref);
    free(rows);
}

static void test_predict_all(void)
{
    km_error err;
    km_report rep;
    km_problem *P = make(2500, 12, 2, 7), *M = make(700, 9, 3, 11);
    km_params *par = km_params_new();
    km_model *lin = NULL, *rbf = NULL, *ova = NULL;
    int rc = km_method_train(km_method_find("l1svm"), P, par, &lin, &rep, &err);
    km_report_free(&rep);
    km_params_set(par, "kernel", "rbf", &err);
    km_params_set(par, "gamma", "0.3", &err);
    rc |= km_method_train(km_method_find("l2svm"), P, par, &rbf, &rep, &err);
    km_report_free(&rep);
    rc |= km_method_train(km_method_find("l2svm"), M, par, &ova, &rep, &err);
    km_report_free(&rep);
    CHECK(rc == KM_OK, "three models trained");
    if (rc == KM_OK) {   /* 2500 rows: three blocks of predict's 1024 */
        check_predict_all(lin, P, "linear");
        check_predict_all(rbf, P, "rbf kernel");
        check_predict_all(ova, M, "3 classes, one versus all");
    }
    km_model_free(lin);
    km_model_free(rbf);
    km_model_free(ova);
    km_params_free(par);
    km_problem_free(P);
    km_problem_free(M);
}

/* A multi-output (okl) model: out = km_model_outputs of each row's codes, pred its first. */
static void test_predict_all_outputs(void)
{
    enum { L = 40, MOUT = 5 };
    int64_t row_ptr[L + 1];
    int32_t index[L];
    double value[L], y[L * MOUT];
    for (int i = 0; i < L; i++) {
        row_ptr[i] = i;
        index[i] = 0;
        value[i] = -1 + 2.0 * i / (L - 1);
        for (int j = 0; j < MOUT; j++)
            y[i * MOUT + j] = sin((j + 1) * value[i]) + 0.1 * cos(7.0 * i * (j + 1));
    }
    row_ptr[L] = L;
    km_problem P = {L, L, 1, row_ptr, index, value, y, MOUT, NULL, NULL};
    km_error err;
    km_report rep;
    km_params *par = km_params_new();
    km_params_set(par, "rank", "2", &err);
    km_params_set(par, "lambdas", "1e-2:1:3", &err);
    km_model *m = NULL;
    int rc = km_problem_check(&P, &err) ||
             km_method_train(km_method_find("okl"), &P, par, &m, &rep, &err);
    CHECK(rc == KM_OK, "okl trained on a caller-built 5-output problem (%s)", rc ? err.msg : "");
    if (rc == KM_OK) {
        km_report_free(&rep);
        double dec[L * 2], out[L * MOUT], pred[L], codes[L * 2], o[MOUT];
        int64_t rows[L];
        for (int64_t i = 0; i < L; i++)
            rows[i] = i;
        rc = km_model_predict_all(m, &P, dec, pred, out, 2, &err);
        /* one block of predict's (L rows): its codes, then the outputs of each row */
        km_model_decision_rows(m, &P, rows, L, codes, 1, &err);
        int same = rc == KM_OK && m->nr_w == 2 && m->nr_output == MOUT &&
                   memcmp(codes, dec, sizeof dec) == 0;
        for (int64_t i = 0; same && i < L; i++) {
            km_model_outputs(m, codes + i * 2, o);
            same &= memcmp(o, out + i * MOUT, sizeof o) == 0 && pred[i] == o[0];
        }
        CHECK(same, "okl: codes, outputs and first outputs = the per-row functions'");
        CHECK(km_model_predict_all(m, &P, NULL, pred, NULL, 1, &err) == KM_OK,
              "okl: the first outputs alone");
    }
    km_model_free(m);
    km_params_free(par);
}

static void test_rls2(void)
{
    km_error err;
    km_rls2_options o;
    km_model *m = NULL;
    km_problem *P = make(60, 4, 2, 3);
    km_rls2_options_default(&o);
    CHECK(!strcmp(o.kernels, "paper") && !strcmp(o.scale, "trace") && o.lambdas == 30 &&
          o.lambda_min == 1e-6 && o.lambda_max == 1e6 && o.tolerance == 1e-2 &&
          o.max_iter == 1000 && o.task == -1 && o.seed == 1 && o.threads == 1,
          "km_rls2_options_default: rls2-path's defaults");
    o.scale = "bogus";
    CHECK(km_rls2_train(P, &o, &m, &err) == KM_EUSAGE && strstr(err.msg, "bogus") && !m,
          "an unknown scaling is a usage error: %s", err.msg);
    km_rls2_options_default(&o);
    o.one_se = 1;
    CHECK(km_rls2_train(P, &o, &m, &err) == KM_EUSAGE && !m, "one_se without folds fails");
    km_rls2_options_default(&o);
    o.kernels = "/nonexistent/list";
    CHECK(km_rls2_train(P, &o, &m, &err) == KM_EINPUT && strstr(err.msg, "/nonexistent/list"),
          "a missing kernel-list file is an input error: %s", err.msg);
    km_rls2_options_default(&o);
    o.kernels = "linear";
    o.lambdas = 5;
    o.lambda_min = 1e-3;
    o.lambda_max = 1e2;
    int rc = km_rls2_train(P, &o, &m, &err);
    CHECK(rc == KM_OK && m && m->nr_class == 2, "linear RLS2 on 5 lambdas trains a classifier");
    if (rc == KM_OK) {   /* its training accuracy is far above chance on separable data */
        double *pred = malloc((size_t)P->l * sizeof *pred);
        int64_t right = 0;
        km_model_predict_all(m, P, NULL, pred, NULL, 1, &err);
        for (int64_t i = 0; i < P->l; i++)
            right += pred[i] == P->y[i];
        CHECK(right >= 50, "linear RLS2 fits the linear labels (%lld of 60)", (long long)right);
        free(pred);
    }
    km_model_free(m);
    km_problem_free(P);
}

int main(void)
{
    test_check();
    test_predict_all();
    test_predict_all_outputs();
    test_rls2();
    TEST_EXIT();
}
