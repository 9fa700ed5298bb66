/* test_weights.c - instance weights (--weights, km_params_set_weights): an integer weight k
 * trains as k copies of the row (the same objective and decision function, linear and
 * kernel, to 1e-8 at a tight tolerance), weight 0 removes the row, a uniform weight a is C
 * times a bit for bit; files with bad values are refused with FILE:LINE. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmtk.h"
#include "test.h"
#include "testutil.h"

static uint64_t lcg = 777;

/* l rows of n dense features; classes 1..nc (nc >= 2, nearest centre with noise) or a
 * noisy linear target (nc = 0). */
static km_problem *make_problem(int64_t l, int32_t n, int nc)
{
    double *x = malloc((size_t)(l * n) * sizeof *x), *y = malloc((size_t)l * sizeof *y);
    for (int64_t i = 0; i < l; i++) {
        int c = (int)(lcg_unif(&lcg) * (nc ? nc : 1));
        double s = 0;
        for (int32_t j = 0; j < n; j++) {
            x[i * n + j] = lcg_unif(&lcg) * 2 - 1 + (nc ? 0.6 * (j % nc == c) : 0);
            s += (j + 1) * x[i * n + j];
        }
        y[i] = nc == 2 ? (c ? 1 : -1) : nc ? c + 1 : s + (lcg_unif(&lcg) - 0.5);
    }
    km_problem *P = problem_from_dense(l, n, x, y);
    free(x);
    free(y);
    return P;
}

/* Weighted (integer weights with zeros) against the rows repeated. */
static void test_repeat(const char *method, const char *kernel, int nc)
{
    km_error err;
    km_problem *P = make_problem(40, 4, nc);
    int k[40];
    double w[40];
    for (int i = 0; i < 40; i++) {
        k[i] = i % 5 == 0 ? 0 : 1 + (int)(lcg_unif(&lcg) * 3);   /* 0, 1, 2, 3 */
        w[i] = k[i];
    }
    km_problem *R = repeat_rows(P, k);
    km_params *pw = km_params_new(), *pr = km_params_new();
    for (km_params *q = pw; q; q = q == pw ? pr : NULL) {
        km_params_set(q, "--stop", "step", &err);
        km_params_set(q, "-e", "1e-14", &err);
        km_params_set(q, "--max-iter", "1000000", &err);
        km_params_set(q, "-c", "0.7", &err);
        if (kernel) {
            km_params_set(q, "-t", kernel, &err);
            km_params_set(q, "-g", "0.5", &err);
        }
    }
    int rc = km_params_set_weights(pw, w, P->l, &err);
    const km_method *m = km_method_find(method);
    km_model *A = NULL, *B = NULL;
    km_report ra, rb;
    rc |= km_method_train(m, P, pw, &A, &ra, &err);
    rc |= km_method_train(m, R, pr, &B, &rb, &err);
    CHECK(rc == KM_OK, "%s%s%s %d classes: weighted and repeated train (%s)", method,
          kernel ? " -t " : "", kernel ? kernel : "", nc, rc ? err.msg : "");
    if (rc == KM_OK) {
        CHECK_CLOSE(ra.objective, rb.objective, 1e-8, "%s%s: objective of weights = of repeated "
                    "rows (%.12g)", method, kernel ? " kernel" : "", rb.objective);
        double d = dec_diff(A, B, P, A->nr_w);
        CHECK(d <= 1e-8, "%s%s: decision values of weights = of repeated rows (rel. diff %.2g)",
              method, kernel ? " kernel" : "", d);
    }
    km_report_free(&ra);
    km_report_free(&rb);
    km_model_free(A);
    km_model_free(B);
    km_params_free(pw);
    km_params_free(pr);
    km_problem_free(R);
    km_problem_free(P);
}

/* Every weight a: the model of C * a, bit for bit (the same C_i products). */
static void test_uniform(void)
{
    km_error err;
    km_problem *P = make_problem(50, 3, 2);
    double w[50];
    for (int i = 0; i < 50; i++)
        w[i] = 0.25;
    km_params *pw = km_params_new(), *pc = km_params_new(), *pc0 = km_params_new();
    km_params_set(pc, "C", "0.25", &err);
    km_params_set_weights(pw, w, 50, &err);
    const km_method *m = km_method_find("l1svm");
    km_model *A = NULL, *B = NULL;
    int rc = km_method_train(m, P, pw, &A, NULL, &err) | km_method_train(m, P, pc, &B, NULL, &err);
    CHECK(rc == KM_OK && dec_diff(A, B, P, 1) == 0, "weights 0.25 = -c 0.25, bit for bit");
    km_model_free(A);
    A = NULL;
    /* cross-validation: weights of the whole problem follow the folds' rows */
    double pa[50], pb[50];
    for (int i = 0; i < 50; i++)
        w[i] = 1;
    km_params_set_weights(pw, w, 50, &err);
    rc = km_method_cross_validate(m, P, pw, 5, pa, NULL, &err) |
         km_method_cross_validate(m, P, pc0, 5, pb, NULL, &err);
    CHECK(rc == KM_OK && memcmp(pa, pb, sizeof pa) == 0, "-v 5 with weights 1 = without");
    rc = km_params_set_weights(pw, w, 49, &err) ||
         km_method_train(m, P, pw, &A, NULL, &err);   /* A is set to NULL on failure */
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "49 instance weights for 50 rows"),
          "a count that differs from the rows: %s", err.msg);
    w[3] = -1;
    rc = km_params_set_weights(pw, w, 50, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "row 4"), "a negative weight: %s", err.msg);
    w[3] = NAN;
    rc = km_params_set_weights(pw, w, 50, &err);
    CHECK(rc == KM_EUSAGE, "a NaN weight: %s", err.msg);
    km_model_free(B);
    km_params_free(pw);
    km_params_free(pc);
    km_params_free(pc0);
    km_problem_free(P);
}

/* The file: FILE:LINE errors. */
static void test_file(void)
{
    km_error err;
    km_problem *P = make_problem(4, 2, 2);
    const km_method *m = km_method_find("l2svm");
    char path[] = "/tmp/kmtk_weightsXXXXXX";
    int fd = mkstemp(path);
    close(fd);
    struct {
        const char *text, *want;
        int code;
    } cases[] = {
        {"1\n2\n0.5\n3", NULL, KM_OK},
        {"1\n2\n0.5\n3\n", NULL, KM_OK},
        {" 1 \r\n2\t\n0\n3\n", NULL, KM_OK},
        {"1\n2\nx\n3\n", ":3: expected a weight", KM_EINPUT},
        {"1\n2\n-1\n3\n", ":3: expected a weight", KM_EINPUT},
        {"1\n2\nnan\n3\n", ":3: expected a weight", KM_EINPUT},
        {"1\n2\n1e999\n3\n", ":3: expected a weight", KM_EINPUT},
        {"1\n\n2\n3\n", ":2: expected a weight", KM_EINPUT},
        {"1\n2\n3\n", ": 3 weights for 4 rows", KM_EINPUT},
        {"1\n2\n3\n4\n5\n", ":5: more weights than the 4 rows", KM_EINPUT},
        {"", ": 0 weights for 4 rows", KM_EINPUT},
        {"0\n0\n0\n0\n", "no training examples", KM_EINPUT},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        FILE *f = fopen(path, "w");
        fputs(cases[c].text, f);
        fclose(f);
        km_params *p = km_params_new();
        km_params_set(p, "--weights", path, &err);
        km_model *M = NULL;
        err.msg[0] = 0;
        int rc = km_method_train(m, P, p, &M, NULL, &err);
        CHECK(rc == cases[c].code && (!cases[c].want || strstr(err.msg, cases[c].want)),
              "weights file case %zu: %s", c, rc ? err.msg : "trains");
        km_model_free(M);
        km_params_free(p);
    }
    double w[4] = {1, 1, 1, 1};
    km_params *p = km_params_new();
    km_params_set(p, "--weights", path, &err);
    km_params_set_weights(p, w, 4, &err);
    km_model *M = NULL;
    int rc = km_method_train(m, P, p, &M, NULL, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "twice"), "weights twice: %s", err.msg);
    km_params_free(p);
    unlink(path);
    km_problem_free(P);
}

int main(void)
{
    test_repeat("l1svm", NULL, 2);
    test_repeat("l2svm", NULL, 2);
    test_repeat("l2svm", NULL, 3);
    test_repeat("rls", NULL, 0);
    test_repeat("svr", NULL, 0);
    test_repeat("rla", NULL, 0);
    test_repeat("l1svm", "rbf", 2);
    test_repeat("l2svm", "rbf", 3);
    test_repeat("rls", "rbf", 0);
    test_repeat("svr", "poly", 0);
    test_uniform();
    test_file();
    TEST_EXIT();
}
