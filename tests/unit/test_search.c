/* test_search.c - cross-validation metrics (accuracy, F1, AUC, MSE) checked against
 * independent counts in the test: leave-one-out models trained here give the AUC by pairs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtk.h"
#include "metrics.h"
#include "test.h"

static uint64_t lcg = 12345;
static double unif(void)
{
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg >> 11) / 9007199254740992.0;
}

/* l dense rows of n features; labels: classes (1..nc) by the nearest of nc centres with
 * noise, or a noisy linear value (nc = 0). */
static km_problem *make_problem(int64_t l, int32_t n, int nc)
{
    int64_t *rp = malloc((size_t)(l + 1) * sizeof *rp);
    int32_t *idx = malloc((size_t)(l * n) * sizeof *idx);
    double *val = malloc((size_t)(l * n) * sizeof *val), *y = malloc((size_t)l * sizeof *y);
    rp[0] = 0;
    for (int64_t i = 0; i < l; i++) {
        int c = (int)(i % (nc ? nc : 1));
        double s = 0;
        for (int32_t j = 0; j < n; j++) {
            double x = unif() * 2 - 1 + (nc ? 0.8 * ((j % (nc > 2 ? nc : 2)) == c) : 0);
            idx[i * n + j] = j;
            val[i * n + j] = x;
            s += (j + 1) * x;
        }
        rp[i + 1] = (i + 1) * n;
        y[i] = nc ? (nc == 2 ? (c ? 1 : -1) : c + 1) : s + 0.3 * (unif() - 0.5);
    }
    km_problem *P = NULL;
    km_error err;
    if (km_problem_from_csr(l, n, rp, idx, val, y, NULL, &P, &err))
        printf("problem: %s\n", err.msg);
    free(rp);
    free(idx);
    free(val);
    free(y);
    return P;
}

/* The rows of P but row skip. */
static km_problem *without_row(const km_problem *P, int64_t skip)
{
    int64_t l = P->l - 1, *rp = malloc((size_t)(l + 1) * sizeof *rp), t = 0, r = 0;
    int32_t *idx = malloc((size_t)P->nnz * sizeof *idx);
    double *val = malloc((size_t)P->nnz * sizeof *val), *y = malloc((size_t)l * sizeof *y);
    rp[0] = 0;
    for (int64_t i = 0; i < P->l; i++) {
        if (i == skip)
            continue;
        for (int64_t q = P->row_ptr[i]; q < P->row_ptr[i + 1]; q++, t++) {
            idx[t] = P->index[q];
            val[t] = P->value[q];
        }
        y[r] = P->y[i];
        rp[++r] = t;
    }
    km_problem *S = NULL;
    km_problem_from_csr(l, P->n, rp, idx, val, y, NULL, &S, NULL);
    free(rp);
    free(idx);
    free(val);
    free(y);
    return S;
}

static void test_metrics(void)
{
    double y[] = {1, 1, 1, -1, -1, 2, 2}, p[] = {1, -1, 1, 1, -1, 2, 1};
    /* class 1: TP 2, FP 2, FN 1 -> 4/7; class -1: TP 1, FP 1, FN 1 -> 1/2; class 2: TP 1,
     * FN 1 -> 2/3 */
    CHECK_CLOSE(km_metrics_f1(y, p, 7, 1), 4.0 / 7, 1e-15, "F1 of class 1 = 2TP/(2TP+FP+FN)");
    CHECK_CLOSE(km_metrics_f1_classes(y, p, 7), (4.0 / 7 + 0.5 + 2.0 / 3) / 3, 1e-15,
                "macro-F1 = the mean over the classes");
    CHECK_CLOSE(km_metrics_f1_classes(y, p, 5), 2.0 / 3, 1e-15,   /* TP 2, FP 1, FN 1 */
                "two classes: the F1 of the larger label");
    CHECK(isnan(km_metrics_f1_classes(y, p, 3)), "one class: NaN");
}

static void test_cv_metrics(void)
{
    km_error err;
    const km_method *m = km_method_find("l2svm");
    km_problem *P = make_problem(36, 3, 2);
    km_params *par = km_params_new();
    km_params_set(par, "tolerance", "1e-12", &err);
    int64_t l = P->l;
    /* AUC over leave-one-out folds (k = l: every row is its own fold), by pairs */
    double *dec = malloc((size_t)l * sizeof *dec), value = 0;
    for (int64_t i = 0; i < l; i++) {
        km_problem *S = without_row(P, i);
        km_model *M = NULL;
        int rc = km_method_train(m, S, par, &M, NULL, &err);
        rc |= km_model_decision_rows(M, P, &i, 1, &dec[i], 1, &err);
        if (rc)
            printf("loo: %s\n", err.msg);
        km_model_free(M);
        km_problem_free(S);
    }
    double pairs = 0, won = 0;
    for (int64_t i = 0; i < l; i++)
        for (int64_t j = 0; j < l; j++)
            if (P->y[i] > 0 && P->y[j] < 0) {
                pairs++;
                won += dec[i] > dec[j] ? 1 : dec[i] == dec[j] ? 0.5 : 0;
            }
    km_report rep;
    int rc = km_method_cv_score(m, P, par, (int)l, "auc", &value, &rep, &err);
    CHECK(rc == KM_OK && rep.text && strncmp(rep.text, "Cross Validation AUC = ", 23) == 0,
          "-v l --metric auc: %s", rc ? err.msg : rep.text);
    CHECK_CLOSE(value, won / pairs, 1e-15, "CV AUC = the pair count of leave-one-out decision "
                "values (%g)", won / pairs);
    CHECK(won / pairs > 0.5 && won / pairs < 1, "the AUC is informative, not trivial");
    km_report_free(&rep);
    /* accuracy and F1 from the predictions of the same folds */
    double *pred = malloc((size_t)l * sizeof *pred), acc = 0, f1 = 0;
    rc = km_method_cross_validate(m, P, par, 5, pred, NULL, &err);
    rc |= km_method_cv_score(m, P, par, 5, "accuracy", &acc, NULL, &err);
    rc |= km_method_cv_score(m, P, par, 5, "f1", &f1, NULL, &err);
    int64_t tp = 0, fp = 0, fn = 0, right = 0;
    for (int64_t i = 0; i < l; i++) {
        right += pred[i] == P->y[i];
        tp += pred[i] == 1 && P->y[i] == 1;
        fp += pred[i] == 1 && P->y[i] == -1;
        fn += pred[i] == -1 && P->y[i] == 1;
    }
    CHECK(rc == KM_OK, "cross-validation runs");
    CHECK_CLOSE(acc, 100.0 * (double)right / (double)l, 1e-15, "CV accuracy = the count");
    CHECK_CLOSE(f1, 2.0 * (double)tp / (double)(2 * tp + fp + fn), 1e-15,
                "CV F1 = 2TP/(2TP+FP+FN) of +1 (TP %lld)", (long long)tp);
    rc = km_method_cv_score(m, P, par, 5, "mse", &value, NULL, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "mse"), "mse for a classifier: %s", err.msg);
    rc = km_method_cv_score(m, P, par, 5, "recall", &value, NULL, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "unknown metric"), "unknown metric: %s", err.msg);
    free(pred);
    free(dec);
    km_problem_free(P);
    /* three classes: macro-F1; AUC refused */
    P = make_problem(45, 4, 3);
    l = P->l;
    pred = malloc((size_t)l * sizeof *pred);
    rc = km_method_cross_validate(m, P, par, 3, pred, NULL, &err);
    rc |= km_method_cv_score(m, P, par, 3, "f1", &f1, NULL, &err);
    double want = 0;
    for (int c = 1; c <= 3; c++) {
        tp = fp = fn = 0;
        for (int64_t i = 0; i < l; i++) {
            tp += pred[i] == c && P->y[i] == c;
            fp += pred[i] == c && P->y[i] != c;
            fn += pred[i] != c && P->y[i] == c;
        }
        want += tp ? 2.0 * (double)tp / (double)(2 * tp + fp + fn) / 3 : 0;
    }
    CHECK(rc == KM_OK, "three classes cross-validate");
    CHECK_CLOSE(f1, want, 1e-15, "three classes: CV F1 = the mean of the classes' F1");
    rc = km_method_cv_score(m, P, par, 3, "auc", &value, NULL, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "two classes"), "AUC of three classes: %s",
          err.msg);
    free(pred);
    km_problem_free(P);
    /* regression: mse = the mean of squared CV errors; the classifiers' metrics refused */
    P = make_problem(40, 3, 0);
    l = P->l;
    m = km_method_find("rls");
    pred = malloc((size_t)l * sizeof *pred);
    rc = km_method_cross_validate(m, P, par, 4, pred, NULL, &err);
    rc |= km_method_cv_score(m, P, par, 4, NULL, &value, &rep, &err);
    want = 0;
    for (int64_t i = 0; i < l; i++)
        want += (pred[i] - P->y[i]) * (pred[i] - P->y[i]) / (double)l;
    CHECK(rc == KM_OK && strstr(rep.text, "Squared correlation"), "rls: default metric mse");
    CHECK_CLOSE(value, want, 1e-12, "CV MSE = the mean squared error of the CV predictions");
    km_report_free(&rep);
    rc = km_method_cv_score(m, P, par, 4, "f1", &value, NULL, &err);
    CHECK(rc == KM_EUSAGE, "f1 for regression: %s", err.msg);
    free(pred);
    km_problem_free(P);
    km_params_free(par);
}

int main(void)
{
    test_metrics();
    test_cv_metrics();
    TEST_EXIT();
}
