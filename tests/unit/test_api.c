/* test_api.c - the public C API (kmtk.h) as a program outside the library uses it: only
 * kmtk.h is included. A new method, "mean" with its own model kind, is registered from
 * here and trains, saves, loads, predicts and cross-validates through the API without a
 * change to train.c, predict.c or model.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmtk.h"
#include "test.h"

/* ---- the "mean" method: predicts (1 - shrink) * the mean label ---- */

static int mean_write_body(const km_model *m, FILE *f)
{
    fprintf(f, "nr_w %d\nmean\n", m->nr_w);
    km_mio_put(f, "value", *(const double *)m->body);
    return 0;
}

static int mean_read(km_mio *io, km_model *m, km_error *err)
{
    double *v = malloc(sizeof *v);
    if (!v) {
        err->code = KM_EINTERNAL;
        return KM_EINTERNAL;
    }
    m->body = v;
    const char *line = km_mio_line(io);
    if (!line)
        return km_mio_truncated(io, "no value line");
    if (strncmp(line, "value ", 6) != 0 || km_mio_number(line + 6, v))
        return km_mio_bad(io, "expected 'value X'");
    return KM_OK;
}

static void mean_free(km_model *m)
{
    free(m->body);
    m->body = NULL;
}

static int mean_decision(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    (void)X, (void)rows, (void)threads, (void)err;
    for (int64_t a = 0; a < count; a++)
        dec[a] = *(const double *)m->body;
    return KM_OK;
}

static const km_model_kind mean_kind = {
    .name = "mean",
    .section = "mean",
    .body_name = "value",
    .write_body = mean_write_body,
    .read = mean_read,
    .free_body = mean_free,
    .decision_rows = mean_decision,
};

static const km_option opt_shrink = {"shrink", "--shrink", "S", KM_OPT_NUMBER, 0, 1, 0, NULL,
                                     "0", "shrink the mean towards 0 by this fraction"};
static const km_option *const mean_options[] = {&opt_shrink, NULL};
static const km_model_kind *const mean_kinds[] = {&mean_kind, NULL};

static int mean_train(const km_problem *P, const int64_t *rows, int64_t count,
                      const km_params *p, km_model **out, km_report *rep, km_error *err)
{
    double sum = 0;
    int64_t l = rows ? count : P->l;
    for (int64_t a = 0; a < l; a++)
        sum += P->y[rows ? rows[a] : a];
    km_model *m = km_model_alloc(&mean_kind, 2 /* rls */, P->n, 0, 1, err);
    double *v = m ? malloc(sizeof *v) : NULL;
    if (!v) {
        free(m);
        return KM_EINTERNAL;
    }
    *v = (1 - km_param_number(p, "shrink")) * sum / (double)l;
    m->body = v;
    *out = m;
    rep->objective = *v;
    return KM_OK;
}

static const km_method mean_method = {"mean", "the mean label (a test method)", mean_options,
                                      mean_kinds, 0, NULL, mean_train};

/* ---- a problem from arrays: two Gaussian clouds, labels -1 and +1 ---- */

static km_problem *clouds(int64_t l, unsigned seed)
{
    int64_t *row_ptr = malloc((size_t)(l + 1) * sizeof *row_ptr);
    int32_t *index = malloc((size_t)(2 * l) * sizeof *index);
    double *value = malloc((size_t)(2 * l) * sizeof *value), *y = malloc((size_t)l * sizeof *y);
    srand(seed);
    row_ptr[0] = 0;
    for (int64_t i = 0; i < l; i++) {
        y[i] = i % 2 ? 1 : -1;
        for (int j = 0; j < 2; j++) {
            double u = (rand() + 1.0) / (RAND_MAX + 2.0), w = (rand() + 1.0) / (RAND_MAX + 2.0);
            index[2 * i + j] = j;
            value[2 * i + j] = 1.5 * y[i] + sqrt(-2 * log(u)) * cos(6.283185307179586 * w);
        }
        row_ptr[i + 1] = 2 * (i + 1);
    }
    km_problem *P = NULL;
    km_error err;
    int rc = km_problem_from_csr(l, 2, row_ptr, index, value, y, NULL, &P, &err);
    CHECK(rc == KM_OK, "km_problem_from_csr: %lld rows (%s)", (long long)l, rc ? err.msg : "ok");
    free(row_ptr);
    free(index);
    free(value);
    free(y);
    return P;
}

int main(void)
{
    km_error err;
    char dir[] = "/tmp/kmtk-api-XXXXXX", path[96];
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    snprintf(path, sizeof path, "%s/m.model", dir);

    /* problems: copies are checked */
    int64_t rp[] = {0, 2};
    int32_t ix[] = {1, 0};
    double val[] = {1, 2}, y1[] = {1};
    km_problem *bad = NULL;
    CHECK(km_problem_from_csr(1, 2, rp, ix, val, y1, NULL, &bad, &err) == KM_EUSAGE && !bad &&
          strstr(err.msg, "increase"), "km_problem_from_csr refuses decreasing indices (%s)",
          err.msg);

    /* a built-in method by name, parameters by name, train, save, load, predict */
    km_problem *P = clouds(400, 7), *X = clouds(200, 8);
    const km_method *l1 = km_method_find("l1svm");
    km_params *par = km_params_new();
    CHECK(l1 && par && km_params_set(par, "kernel", "rbf", &err) == KM_OK &&
          km_params_set(par, "-c", "4", &err) == KM_OK && km_params_set(par, "gamma", "0.5",
                                                                         &err) == KM_OK,
          "l1svm found; kernel, C (by its flag) and gamma set");
    CHECK(strcmp(km_params_get(par, "C"), "4") == 0, "a flag sets the option's API name");
    CHECK(km_params_set(par, "colour", "red", &err) == KM_EUSAGE &&
          strstr(err.msg, "unknown option 'colour'"), "unknown option names refused (%s)",
          err.msg);
    km_model *M = NULL;
    km_report rep;
    int rc = km_method_train(l1, P, par, &M, &rep, &err);
    CHECK(rc == KM_OK && M && rep.converged && rep.gap >= 0 && rep.gap <= 1e-5 &&
          rep.objective > 0 && rep.text && strstr(rep.text, "objective = "),
          "l1svm rbf trains to gap %.3g <= 1e-5 (%s)", rep.gap, rc ? err.msg : "ok");
    km_report_free(&rep);
    double *pred = malloc((size_t)X->l * sizeof *pred), *pred2 = malloc((size_t)X->l *
                                                                         sizeof *pred2);
    int correct = 0;
    CHECK(km_predict(M, X, pred, &err) == KM_OK, "km_predict");
    for (int64_t i = 0; i < X->l; i++)
        correct += pred[i] == X->y[i];
    CHECK(correct > 180, "test accuracy %d/200 > 90%% on two clouds 3 sd apart", correct);
    km_model *back = NULL;
    CHECK(km_model_write(M, path, &err) == KM_OK && km_model_read(path, &back, &err) == KM_OK &&
          km_predict(back, X, pred2, &err) == KM_OK &&
          memcmp(pred, pred2, (size_t)X->l * sizeof *pred) == 0,
          "saved, loaded: the same predictions");
    km_model_free(back);
    km_model_free(M);

    /* options the method does not take are refused, naming both */
    km_params_set(par, "rank", "2", &err);
    rc = km_method_train(l1, P, par, &M, NULL, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "--rank (rank) does not apply to -s l1svm"),
          "rank refused for l1svm (%s)", err.msg);
    km_params_free(par);
    par = km_params_new();
    km_params_set(par, "gamma", "0.5", &err);
    rc = km_method_train(l1, P, par, &M, NULL, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "-g needs a kernel (-t)"),
          "gamma without a kernel refused (%s)", err.msg);
    km_params_free(par);

    /* a method registered here: one module (above) and one row (this call) */
    int before = km_method_count();
    CHECK(km_method_register(&mean_method, &err) == KM_OK && km_method_count() == before + 1 &&
          km_method_find("mean") == &mean_method, "the mean method is registered");
    CHECK(km_method_register(&mean_method, &err) == KM_EUSAGE, "registered once only (%s)",
          err.msg);
    static const km_option clash = {"cost", "-c", "C", KM_OPT_NUMBER, 0, 1, 0, NULL, "1", "x"};
    static const km_option *const clash_opts[] = {&clash, NULL};
    static const km_method clashing = {"clash", "x", clash_opts, mean_kinds, 0, NULL,
                                       mean_train};
    CHECK(km_method_register(&clashing, &err) == KM_EUSAGE && strstr(err.msg, "-c means 'C'"),
          "a flag that means another option elsewhere is refused (%s)", err.msg);
    char *help = km_method_help(&mean_method);
    CHECK(help && strstr(help, "--shrink S") && strstr(help, "(default 0)"),
          "its help lists its option with the default");
    free(help);
    par = km_params_new();
    km_params_set(par, "shrink", "0.5", &err);
    int64_t rp4[] = {0, 1, 2, 3, 4};
    int32_t ix4[] = {0, 0, 0, 0};
    double v4[] = {1, 1, 1, 1}, y4[] = {1, 2, 6, 7};
    km_problem *Q = NULL;
    km_problem_from_csr(4, 1, rp4, ix4, v4, y4, NULL, &Q, &err);
    rc = km_method_train(&mean_method, Q, par, &M, &rep, &err);
    CHECK(rc == KM_OK && rep.objective == 2, "mean trains: (1 - 0.5) * 4 = %g", rep.objective);
    km_report_free(&rep);
    double mean = 2;
    CHECK(km_model_write(M, path, &err) == KM_OK && km_model_read(path, &back, &err) == KM_OK &&
          back->kind == &mean_kind && km_predict(back, X, pred, &err) == KM_OK &&
          pred[0] == mean && pred[X->l - 1] == mean,
          "saved, loaded by its kind, predicts its value (%s)", err.msg);
    km_model_free(back);
    km_model_free(M);
    FILE *f = fopen(path, "r");
    char text[1024] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    CHECK(strstr(text, "kmtk-model 1\nsolver mean\n") && strstr(text, "\nmean\nvalue ") &&
          strstr(text, "\nend\n"), "the file has the envelope and the kind's body");
    f = fopen(path, "w");
    fputs("kmtk-model 1\nsolver mean\nloss rls\nC 0\nepsilon 0\nbias -1\nnr_feature 2\n"
          "nr_class 0\nnr_w 1\nshrink 3\nmean\nvalue 1\nend\n", f);
    fclose(f);
    CHECK(km_model_read(path, &back, &err) == KM_EINPUT &&
          strstr(err.msg, ":10: unknown header key 'shrink' (not one of a mean model)"),
          "a key the kind does not take is refused at its line (%s)", err.msg);
    f = fopen(path, "w");
    fputs("kmtk-model 1\nsolver mean\nloss rls\nC 0\nepsilon 0\nbias -1\nnr_feature 2\n"
          "nr_class 0\nnr_w 1\nmean\n", f);
    fclose(f);
    CHECK(km_model_read(path, &back, &err) == KM_EINPUT &&
          strstr(err.msg, "truncated model (no value line)"), "a truncated body (%s)",
          err.msg);
    double cv[4];
    rc = km_method_cross_validate(&mean_method, Q, par, 4, cv, &rep, &err);
    int loo = rc == KM_OK;
    for (int i = 0; i < 4 && loo; i++)   /* leave one out: half the mean of the others */
        loo = fabs(cv[i] - 0.5 * (16 - y4[i]) / 3) < 1e-15;
    CHECK(loo, "the new method cross-validates through the table: 4 folds of 4 rows = "
          "leave-one-out means (%s)", rc ? err.msg : "ok");
    km_report_free(&rep);
    km_params_free(par);
    km_problem_free(Q);
    free(pred);
    free(pred2);
    km_problem_free(P);
    km_problem_free(X);
    unlink(path);
    rmdir(dir);
    TEST_EXIT();
}
