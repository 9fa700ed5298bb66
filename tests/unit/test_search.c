/* test_search.c - cross-validation metrics (accuracy, F1, AUC, MSE) checked against
 * independent counts in the test: leave-one-out models trained here give the AUC by pairs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmtk.h"
#include "kernel.h"
#include "method.h"
#include "model.h"
#include "ovo.h"
#include "plot.h"
#include "metrics.h"
#include "search.h"
#include "test.h"
#include "testutil.h"

static uint64_t lcg = 12345;

/* l dense rows of n features; labels: classes (1..nc) by the nearest of nc centres with
 * noise, or a noisy linear value (nc = 0). */
static km_problem *make_problem(int64_t l, int32_t n, int nc)
{
    double *x = malloc((size_t)(l * n) * sizeof *x), *y = malloc((size_t)l * sizeof *y);
    for (int64_t i = 0; i < l; i++) {
        int c = (int)(i % (nc ? nc : 1));
        double s = 0;
        for (int32_t j = 0; j < n; j++) {
            double near = nc ? 0.8 * ((j % (nc > 2 ? nc : 2)) == c) : 0;
            x[i * n + j] = lcg_unif(&lcg) * 2 - 1 + near;
            s += (j + 1) * x[i * n + j];
        }
        y[i] = nc ? (nc == 2 ? (c ? 1 : -1) : c + 1) : s + 0.3 * (lcg_unif(&lcg) - 0.5);
    }
    km_problem *P = problem_from_dense(l, n, x, y);
    free(x);
    free(y);
    return P;
}

/* The rows of P but row skip. */
static km_problem *without_row(const km_problem *P, int64_t skip)
{
    int *times = malloc((size_t)P->l * sizeof *times);
    for (int64_t i = 0; i < P->l; i++)
        times[i] = i != skip;
    km_problem *S = repeat_rows(P, times);
    free(times);
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

/* The macro-iterations a report names. */
static long long iterations(const km_report *r)
{
    const char *t = r->text ? strstr(r->text, "macro-iterations = ") : NULL;
    return t ? atoll(t + 19) : -1;
}

/* Warm starts: from the optimum at C = 1 to C = 2 the same optimum as a cold start; from
 * the optimum at C = 2 itself, fewer sweeps. */
static void test_warm(const char *method, int nc, const char *const *opts)
{
    km_error err;
    km_problem *P = make_problem(120, 5, nc);
    const km_method *m = km_method_find(method);
    km_params *p = km_params_new();
    for (int q = 0; opts[q]; q += 2)
        km_params_set(p, opts[q], opts[q + 1], &err);
    km_params_set(p, "-e", "1e-11", &err);
    km_params_set(p, "--max-iter", "1000000", &err);
    km_model *M1 = NULL, *M2 = NULL, *W2 = NULL, *S2 = NULL;
    km_report r1, r2, w2, s2;
    km_params_set(p, "-c", "1", &err);
    int rc = km_method_train(m, P, p, &M1, &r1, &err);
    km_params_set(p, "-c", "2", &err);
    rc |= km_method_train(m, P, p, &M2, &r2, &err);
    km_params_set_init(p, M1);
    rc |= km_method_train(m, P, p, &W2, &w2, &err);
    km_params_set_init(p, M2);
    rc |= km_method_train(m, P, p, &S2, &s2, &err);
    char what[128] = "";
    for (int q = 0; opts[q]; q += 2)
        snprintf(what + strlen(what), sizeof what - strlen(what), " %s %s", opts[q], opts[q + 1]);
    CHECK(rc == KM_OK, "%s%s: cold and warm runs (%s)", method, what, rc ? err.msg : "");
    if (rc == KM_OK) {
        CHECK_CLOSE(w2.objective, r2.objective, 1e-9, "%s%s: warm from C = 1 reaches C = 2's "
                    "objective (%lld sweeps; cold %lld)", method, what, iterations(&w2),
                    iterations(&r2));
        double d = dec_diff(W2, M2, P, W2->nr_w);
        CHECK(d < 1e-5, "%s%s: warm and cold decision values agree (rel. diff %.2g)", method,
              what, d);
        /* kernel models start from their own coefficients (matched by row): at most one
         * sweep; linear ones from c = -C dL(y, z) of their decision values, exact for the
         * differentiable losses (l2svm, rls); at the kinks of l1svm and svr the start
         * takes the end of the subdifferential nearest 0, which can cost more sweeps than
         * the cold start's active-set walk (doc/kmtk-train.1 --init) */
        int kinks = !opts[0] && (strcmp(method, "l1svm") == 0 || strcmp(method, "svr") == 0);
        CHECK(kinks || (iterations(&s2) < iterations(&r2) && (!opts[0] || iterations(&s2) <= 1)),
              "%s%s: from its own optimum: %lld sweeps, cold %lld%s", method, what,
              iterations(&s2), iterations(&r2), kinks ? " (not asserted: kinks)" : "");
    }
    km_report_free(&r1);
    km_report_free(&r2);
    km_report_free(&w2);
    km_report_free(&s2);
    km_model_free(M1);
    km_model_free(M2);
    km_model_free(W2);
    km_model_free(S2);
    km_params_free(p);
    km_problem_free(P);
}

static void test_warm_all(void)
{
    static const char *const none[] = {NULL};
    static const char *const rbf[] = {"-t", "rbf", "-g", "0.3", NULL};
    static const char *const rbf_cyc[] = {"-t", "rbf", "-g", "0.3", "--rule", "cyclic", NULL};
    static const char *const fixp[] = {"-t", "rbf", "-g", "0.3", "-a", "fixedpoint", NULL};
    test_warm("l1svm", 2, none);
    test_warm("l2svm", 2, none);
    test_warm("l2svm", 3, none);
    test_warm("rls", 0, none);
    test_warm("svr", 0, none);
    test_warm("l1svm", 2, rbf);
    test_warm("l2svm", 3, rbf);
    test_warm("rls", 0, rbf);
    test_warm("l1svm", 2, rbf_cyc);
    test_warm("svr", 0, rbf_cyc);
    test_warm("rls", 0, fixp);
    /* the init model must have the data's classes */
    km_error err;
    km_problem *P2 = make_problem(30, 3, 2), *P3 = make_problem(30, 3, 3);
    km_model *M = NULL, *N = NULL;
    km_params *p = km_params_new();
    int rc = km_method_train(km_method_find("l2svm"), P2, p, &M, NULL, &err);
    km_params_set_init(p, M);
    rc |= !km_method_train(km_method_find("l2svm"), P3, p, &N, NULL, &err);
    CHECK(rc == KM_OK && strstr(err.msg, "--init: the model's classes"), "--init of another "
          "problem's classes: %s", err.msg);
    km_model_free(M);
    km_params_free(p);
    km_problem_free(P2);
    km_problem_free(P3);
}

/* A search's points against cold cross-validation at each point, its best against the
 * argmax, and its text for -n 1 against -n 2. */
static void check_search(const char *name, const km_method *m, const km_problem *P,
                         km_params *p, const char *metric, const char *grid)
{
    km_error err;
    km_search S, S2;
    km_report rep, rep2;
    km_params_set(p, "-n", "1", &err);
    int rc = grid ? km_search_grid(m, P, p, 5, metric, grid, &S, &rep, &err)
                  : km_search_C(m, P, p, 5, metric, &S, &rep, &err);
    CHECK(rc == KM_OK && S.npoints > 2, "%s: runs (%d points) %s", name, rc ? 0 : S.npoints,
          rc ? err.msg : "");
    if (rc)
        return;
    km_params_set(p, "-n", "2", &err);
    rc = grid ? km_search_grid(m, P, p, 5, metric, grid, &S2, &rep2, &err)
              : km_search_C(m, P, p, 5, metric, &S2, &rep2, &err);
    CHECK(rc == KM_OK && strcmp(rep.text, rep2.text) == 0 && S2.npoints == S.npoints &&
          memcmp(S.points, S2.points, (size_t)S.npoints * sizeof *S.points) == 0,
          "%s: -n 2 gives the bits of -n 1", name);
    int hi = km_metric_higher_is_better(metric), argmax = 0, same = 1;
    for (int k = 1; k < S.npoints; k++)
        if (hi ? S.points[k].score > S.points[argmax].score
               : S.points[k].score < S.points[argmax].score)
            argmax = k;
    CHECK(S.best == argmax, "%s: the best is the first argmax of the table (C = %g)", name,
          S.points[argmax].C);
    for (int k = 0; k < S.npoints; k++) {   /* cold: each point on its own */
        km_params *q = km_params_copy(p, &err);
        char v[64];
        snprintf(v, sizeof v, "%.17g", S.points[k].C);
        km_params_set(q, "C", v, &err);
        if (!isnan(S.points[k].gamma)) {
            snprintf(v, sizeof v, "%.17g", S.points[k].gamma);
            km_params_set(q, "gamma", v, &err);
        }
        double cold = NAN;
        km_method_cv_score(m, P, q, 5, metric, &cold, NULL, &err);
        /* counts (accuracy, F1, AUC) exactly; the MSE to the solvers' tolerance (a relative
         * gap of 1e-10 moves decision values by about sqrt(2e-10 F)) */
        double tol = metric && strcmp(metric, "mse") == 0 ? 1e-4 : 0;
        if (!(fabs(cold - S.points[k].score) <= tol * fabs(cold))) {
            same = 0;
            printf("  C = %g gamma = %g: warm %.17g, cold %.17g\n", S.points[k].C,
                   S.points[k].gamma, S.points[k].score, cold);
        }
        km_params_free(q);
    }
    CHECK(same, "%s: the warm-started path's CV scores = cold runs at every point", name);
    /* the text: a line per point and the best */
    int lines = 0;
    for (const char *t = rep.text; (t = strchr(t, '\n')); t++)
        lines++;
    CHECK(lines == S.npoints + 1 && strstr(rep.text, "Best C = "), "%s: a line per point and "
          "the best", name);
    km_report_free(&rep);
    km_report_free(&rep2);
    km_search_free(&S);
    km_search_free(&S2);
}

static void test_search(void)
{
    km_error err;
    km_problem *P = make_problem(150, 6, 2);
    km_params *p = km_params_new();
    km_params_set(p, "-e", "1e-10", &err);
    km_params_set(p, "--max-iter", "1000000", &err);
    check_search("-C l2svm linear", km_method_find("l2svm"), P, p, NULL, NULL);
    check_search("-C l1svm linear auc", km_method_find("l1svm"), P, p, "auc", NULL);
    km_params *k = km_params_copy(p, &err);
    km_params_set(k, "-t", "rbf", &err);
    check_search("-C l1svm rbf", km_method_find("l1svm"), P, k, NULL, NULL);
    check_search("--grid l2svm rbf", km_method_find("l2svm"), P, k, "f1",
                 "C=-3:5:5,g=1:-5:4");
    km_problem *R = make_problem(120, 4, 0);
    check_search("-C rls rbf mse", km_method_find("rls"), R, k, "mse", NULL);
    check_search("--grid svr linear", km_method_find("svr"), R, p, "mse", "C=-4:4:5");
    km_search S;
    int rc = km_search_grid_parse(km_method_find("l2svm"), "C=1:2", &S, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "C=LO:HI:N"), "--grid C=1:2: %s", err.msg);
    rc = km_search_grid_parse(km_method_find("okl"), "g=1:2:2", &S, &err);
    CHECK(rc == KM_OK || rc == KM_EUSAGE, "--grid for okl parses or refuses");
    if (rc == KM_OK)
        km_search_free(&S);
    rc = km_search_grid_parse(km_method_find("l2svm"), "default", &S, &err);
    CHECK(rc == KM_OK && S.nC == 11 && S.ng == 10 && S.log2C[0] == -5 && S.log2C[10] == 15 &&
          S.log2g[0] == 3 && S.log2g[9] == -15, "--grid default = grid.py's C 2^-5..2^15 by "
          "4, gamma 2^3..2^-15 by 1/4");
    km_search_free(&S);
    km_report rep;
    rc = km_search_grid(km_method_find("l2svm"), P, p, 5, NULL, "C=0:1:2,g=0:1:2", &S, &rep,
                        &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "needs a kernel"), "gamma without -t: %s",
          err.msg);
    km_params_free(k);
    km_params_free(p);
    km_problem_free(P);
    km_problem_free(R);
}

/* The heat map: cells, the ring, and a contour of z = x at the level 1.5 (the midpoint of
 * 0..3 with one level): a vertical line halfway between the centres of columns 1 and 2. */
static void test_heatmap(void)
{
    km_error err;
    double x[4] = {-1, 0, 1, 2}, y[3] = {0, 1, 2}, z[12];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 4; i++)
            z[j * 4 + i] = i;
    char path[] = "/tmp/kmtk_heatXXXXXX";
    int fd = mkstemp(path);
    close(fd);
    km_heatmap h = {"t", "log2(C)", "log2(gamma)", "CV accuracy", x, 4, y, 3, z, 11, 1};
    int rc = km_plot_heatmap_svg(&h, path, &err);
    FILE *f = fopen(path, "r");
    char buf[1 << 15];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    int cells = 0;
    for (const char *t = buf; (t = strstr(t, "class=\"cell\"")); t++)
        cells++;
    CHECK(rc == KM_OK && cells == 12 && strstr(buf, "class=\"best\""), "heat map: 12 cells and "
          "a ring (%s)", rc ? err.msg : "written");
    /* the contour's x coordinates: all equal, halfway between columns 1 and 2 */
    const char *d = strstr(buf, "class=\"contour\"");
    d = d ? strstr(d, " d=\"") : NULL;
    double xs = NAN, x0 = NAN, cell_x[2] = {NAN, NAN};
    int same = d != NULL, pts = 0;
    for (const char *t = d; t && (t = strpbrk(t + 1, "ML")) && t < strchr(d + 4, '"'); pts++) {
        xs = strtod(t + 1, NULL);
        if (pts == 0)
            x0 = xs;
        same &= fabs(xs - x0) < 0.01;
    }
    for (int i = 1; i <= 2; i++) {   /* the centres of cells (1, 0) and (2, 0) */
        char key[64];
        snprintf(key, sizeof key, "data-i=\"%d\" data-j=\"0\" x=\"", i);
        const char *c = strstr(buf, key);
        cell_x[i - 1] = c ? strtod(c + strlen(key), NULL) : NAN;
    }
    double want = (cell_x[0] + cell_x[1]) / 2 + (cell_x[1] - cell_x[0]) / 2;
    CHECK(same && pts == 4 && fabs(x0 - want) < 0.01, "heat map: the contour z = 1.5 of z = x "
          "is the vertical halfway between the columns' centres (%d points at %g, want %g)",
          pts, x0, want);
    double bad[2] = {1, 0};
    km_heatmap hb = {NULL, NULL, NULL, NULL, bad, 2, y, 1, z, -1, 0};
    CHECK(km_plot_heatmap_svg(&hb, path, &err) == KM_EUSAGE, "heat map: x not increasing: %s",
          err.msg);
    unlink(path);
}

/* -B b with a kernel: the solver on K + b^2. (1) rls: the optimality condition
 * (K + b^2 11' + I/C) c = y holds for the model's c, with K evaluated here; (2) the linear
 * kernel with -B b is the linear solver with the bias feature b (the same decision values);
 * (3) the model file keeps kernel_offset and reads back to the same bytes. */
static void test_offset(void)
{
    km_error err;
    km_problem *P = make_problem(60, 4, 0);
    km_params *p = km_params_new();
    km_params_set(p, "-t", "rbf", &err);
    km_params_set(p, "-g", "0.4", &err);
    km_params_set(p, "-B", "1.5", &err);
    km_params_set(p, "-c", "2", &err);
    km_params_set(p, "-e", "1e-13", &err);
    km_params_set(p, "--max-iter", "1000000", &err);
    km_model *M = NULL;
    int rc = km_method_train(km_method_find("rls"), P, p, &M, NULL, &err);
    const km_expansion *e = M ? km_model_expansion(M) : NULL;
    CHECK(rc == KM_OK && e && e->sv->l == P->l && e->kernel.offset == 2.25,
          "rls -t rbf -B 1.5: a kernel model with offset 2.25 over every row (%s)",
          rc ? err.msg : "");
    if (rc == KM_OK && e && e->sv->l == P->l) {
        km_kernel k = {KM_KERNEL_RBF, 0.4, 0, 3, 0};
        double worst = 0, sum_c = 0, *sq = calloc((size_t)P->l, sizeof *sq);
        for (int64_t i = 0; i < P->l; i++)
            for (int64_t q = P->row_ptr[i]; q < P->row_ptr[i + 1]; q++)
                sq[i] += P->value[q] * P->value[q];
        for (int64_t i = 0; i < P->l; i++) {   /* the SVs are the rows, in order */
            double r = e->sv_coef[i] / 2 - P->y[i];
            sum_c += e->sv_coef[i];
            for (int64_t j = 0; j < P->l; j++) {
                int64_t a = P->row_ptr[i], b = P->row_ptr[j];
                double kij = km_kernel_eval(&k, P->index + a, P->value + a,
                                            P->row_ptr[i + 1] - a, sq[i], P->index + b,
                                            P->value + b, P->row_ptr[j + 1] - b, sq[j]);
                r += e->sv_coef[j] * (kij + 2.25);
            }
            worst = fmax(worst, fabs(r));
        }
        CHECK(worst < 1e-6, "rls -B 1.5: (K + b^2 11' + I/C) c = y to %.2g", worst);
        CHECK(fabs(sum_c) > 1e-3, "the offset b^2 sum c = %g is not trivial", 2.25 * sum_c);
        free(sq);
        /* the file: kernel_offset written, read back to the same bytes */
        char a[] = "/tmp/kmtk_offAXXXXXX", b[] = "/tmp/kmtk_offBXXXXXX";
        close(mkstemp(a));
        close(mkstemp(b));
        km_model *R = NULL;
        rc = km_model_write(M, a, &err) || km_model_read(a, &R, &err) ||
             km_model_write(R, b, &err);
        char ta[1 << 16], tb[1 << 16];
        FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
        size_t na = fa ? fread(ta, 1, sizeof ta - 1, fa) : 0, nb = fb ? fread(tb, 1, sizeof tb - 1, fb) : 0;
        ta[na] = 0;
        if (fa)
            fclose(fa);
        if (fb)
            fclose(fb);
        CHECK(rc == 0 && na == nb && memcmp(ta, tb, na) == 0 && strstr(ta, "\nkernel_offset 2.25\n"),
              "kernel_offset written and read back byte for byte");
        /* a damaged offset */
        char *o = strstr(ta, "kernel_offset 2.25");
        if (o) {
            memcpy(o, "kernel_offset -2.5", 18);
            FILE *f = fopen(a, "w");
            fwrite(ta, 1, na, f);
            fclose(f);
            km_model *D = NULL;
            rc = km_model_read(a, &D, &err);
            CHECK(rc == KM_EINPUT && strstr(err.msg, "kernel_offset"), "kernel_offset -2.5: %s",
                  err.msg);
            km_model_free(D);
        }
        km_model_free(R);
        unlink(a);
        unlink(b);
    }
    km_model_free(M);
    /* the linear kernel + b^2 = the linear solver with the bias feature b */
    km_problem *Q = make_problem(80, 5, 2);
    km_params *pk = km_params_new(), *pl = km_params_new();
    const char *common[] = {"-B", "0.7", "-c", "0.5", "-e", "1e-12", "--max-iter", "1000000"};
    for (int q = 0; q < 8; q += 2) {
        km_params_set(pk, common[q], common[q + 1], &err);
        km_params_set(pl, common[q], common[q + 1], &err);
    }
    km_params_set(pk, "-t", "linear", &err);
    km_model *K = NULL, *L = NULL;
    rc = km_method_train(km_method_find("l2svm"), Q, pk, &K, NULL, &err) |
         km_method_train(km_method_find("l2svm"), Q, pl, &L, NULL, &err);
    double d = rc ? 1 : dec_diff(K, L, Q, K->nr_w);
    CHECK(rc == KM_OK && d < 1e-5, "l2svm -t linear -B 0.7 = the linear solver's -B 0.7 (rel. "
          "diff %.2g)", d);
    km_model_free(K);
    km_model_free(L);
    km_params_free(pk);
    km_params_free(pl);
    km_problem_free(Q);
    km_params_free(p);
    km_problem_free(P);
}

/* The rows of P whose label is a or b. */
static km_problem *pair_rows(const km_problem *P, double a, double b)
{
    int *times = malloc((size_t)P->l * sizeof *times);
    for (int64_t i = 0; i < P->l; i++)
        times[i] = P->y[i] == a || P->y[i] == b;
    km_problem *S = repeat_rows(P, times);
    free(times);
    return S;
}

/* One-versus-one against the binary models of the pairs trained here and votes counted
 * here (pair (a, b) votes b when its decision value is > 0; the first class with the most
 * votes wins). */
static void test_ovo_votes(int nc, const char *method)
{
    km_error err;
    km_problem *P = make_problem(20 * nc, 4, nc), *T = make_problem(60, 4, nc);
    km_params *p = km_params_new();
    km_params_set(p, "-t", "rbf", &err);
    km_params_set(p, "-g", "0.5", &err);
    km_params_set(p, "-c", "2", &err);
    km_params_set(p, "weight", "2:1.5", &err);
    const km_method *m = km_method_find(method);
    km_params *po = km_params_copy(p, &err);
    km_params_set(po, "--multiclass", "ovo", &err);
    km_model *O = NULL;
    km_report rep;
    int rc = km_method_train(m, P, po, &O, &rep, &err);
    CHECK(rc == KM_OK && O->nr_w == nc && strcmp(O->kind->name, "kernel_ovo") == 0,
          "%s --multiclass ovo, %d classes: a kernel_ovo model (%s)", method, nc,
          rc ? err.msg : "");
    if (rc) {
        km_params_free(p);
        km_params_free(po);
        km_problem_free(P);
        km_problem_free(T);
        return;
    }
    km_report_free(&rep);
    int np = nc * (nc - 1) / 2;
    double *pd = malloc((size_t)(T->l * np) * sizeof *pd), *want = malloc((size_t)T->l * sizeof *want);
    double *got = malloc((size_t)T->l * sizeof *got), diff = 0;
    int *votes = calloc((size_t)(T->l * nc), sizeof *votes);
    rc = km_ovo_pair_decisions(O, T, NULL, T->l, pd, 1, &err);
    for (int i = 0, q = 0; i < nc; i++)
        for (int j = i + 1; j < nc; j++, q++) {
            km_problem *S = pair_rows(P, i + 1, j + 1);
            km_model *B = NULL;
            km_params *pp = km_params_new();   /* -w2 1.5 where the pair has class 2 */
            km_params_set(pp, "-t", "rbf", &err);
            km_params_set(pp, "-g", "0.5", &err);
            km_params_set(pp, "-c", "2", &err);
            if (i == 1 || j == 1)
                km_params_set(pp, "weight", "2:1.5", &err);
            rc |= km_method_train(m, S, pp, &B, NULL, &err);
            km_params_free(pp);
            double *d = calloc((size_t)T->l, sizeof *d);
            if (B)
                rc |= km_model_decision_rows(B, T, NULL, T->l, d, 1, &err);
            for (int64_t a = 0; a < T->l; a++) {
                diff = fmax(diff, fabs(d[a] - pd[a * np + q]));
                votes[a * nc + (d[a] > 0 ? j : i)]++;
            }
            free(d);
            km_model_free(B);
            km_problem_free(S);
        }
    int ties = 0;
    for (int64_t a = 0; a < T->l; a++) {
        int best = 0, nbest = 1;
        for (int k = 1; k < nc; k++)
            if (votes[a * nc + k] > votes[a * nc + best]) {
                best = k;
                nbest = 1;
            } else if (votes[a * nc + k] == votes[a * nc + best]) {
                nbest++;
            }
        ties += nbest > 1;
        want[a] = best + 1;
    }
    rc |= km_predict(O, T, got, &err);
    CHECK(rc == KM_OK && diff < 1e-12, "%d classes: the pairs' decision values = binary models "
          "trained on the pairs' rows (%.2g)", nc, diff);
    CHECK(rc == KM_OK && memcmp(got, want, (size_t)T->l * sizeof *got) == 0, "%d classes: "
          "predictions = the votes counted by hand (%d ties to the smaller label)", nc, ties);
    /* the file: read back, the same bytes and predictions */
    char a[] = "/tmp/kmtk_ovoAXXXXXX", b[] = "/tmp/kmtk_ovoBXXXXXX";
    close(mkstemp(a));
    close(mkstemp(b));
    km_model *R = NULL;
    rc = km_model_write(O, a, &err) || km_model_read(a, &R, &err) || km_model_write(R, b, &err);
    double *again = malloc((size_t)T->l * sizeof *again);
    rc = rc || km_predict(R, T, again, &err);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    CHECK(rc == 0 && system(cmd) == 0 && memcmp(got, again, (size_t)T->l * sizeof *got) == 0,
          "%d classes: the ovo model reads back byte for byte, same predictions", nc);
    unlink(a);
    unlink(b);
    km_model_free(R);
    free(again);
    free(pd);
    free(want);
    free(got);
    free(votes);
    km_model_free(O);
    km_params_free(p);
    km_params_free(po);
    km_problem_free(P);
    km_problem_free(T);
}

/* Cross-validation with ovo: leave-one-out (k = l) predictions = ovo models trained here
 * without each row. */
static void test_ovo_cv(void)
{
    km_error err;
    km_problem *P = make_problem(30, 3, 3);
    km_params *p = km_params_new();
    km_params_set(p, "-t", "rbf", &err);
    km_params_set(p, "--multiclass", "ovo", &err);
    const km_method *m = km_method_find("l1svm");
    double *cv = malloc((size_t)P->l * sizeof *cv);
    int rc = km_method_cross_validate(m, P, p, (int)P->l, cv, NULL, &err), same = 1;
    for (int64_t i = 0; i < P->l && rc == KM_OK; i++) {
        km_problem *S = without_row(P, i);
        km_model *M = NULL;
        double pred;
        rc = km_method_train(m, S, p, &M, NULL, &err);
        rc |= km_model_decision_rows(M, P, &i, 1, (double[3]){0}, 1, &err);
        if (rc == KM_OK) {
            km_problem *one = NULL;
            int64_t rp[2] = {0, P->row_ptr[i + 1] - P->row_ptr[i]};
            km_problem_from_csr(1, P->n, rp, P->index + P->row_ptr[i], P->value + P->row_ptr[i],
                                &P->y[i], NULL, &one, NULL);
            rc = km_predict(M, one, &pred, &err);
            same &= pred == cv[i];
            km_problem_free(one);
        }
        km_model_free(M);
        km_problem_free(S);
    }
    CHECK(rc == KM_OK && same, "ovo -v l: the predictions of leave-one-out ovo models (%s)",
          rc ? err.msg : "");
    double acc = 0;
    rc = km_method_cv_score(m, P, p, 5, "f1", &acc, NULL, &err);
    CHECK(rc == KM_OK && acc > 0.5, "ovo -v 5 --metric f1 = %g", acc);
    km_params_free(p);
    p = km_params_new();
    km_params_set(p, "--multiclass", "ovo", &err);
    km_model *M = NULL;
    rc = km_method_train(m, P, p, &M, NULL, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "kernels only"), "ovo without -t: %s", err.msg);
    free(cv);
    km_params_free(p);
    km_problem_free(P);
}

int main(void)
{
    test_ovo_votes(3, "l1svm");
    test_ovo_votes(4, "l2svm");
    test_ovo_votes(5, "l1svm");
    test_ovo_cv();
    test_offset();
    test_heatmap();
    test_metrics();
    test_cv_metrics();
    test_warm_all();
    test_search();
    TEST_EXIT();
}
