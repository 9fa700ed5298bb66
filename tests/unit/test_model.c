/* test_model.c - model files round-trip exactly and damaged ones are rejected; RLS2
 * models: decision values against a direct sum of basis kernel values, files bit for bit,
 * damaged files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basis.h"
#include "model.h"
#include "rng.h"
#include "test.h"
#include "testutil.h"

/* Writes text to path. */
static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Basis kernels of the RLS2 test models (n = 12): two groups of kernels share a subset. */
static const char *const rls2_specs[] = {
    "rbf gamma=0.5 features=all",
    "poly gamma=1 coef0=1 degree=2 features=all",
    "linear features=3",
    "rbf gamma=2 features=1-4,9",
    "laplacian gamma=0.29999999999999999 features=9,1-4",
    "sigmoid gamma=0.10000000000000001 coef0=-0.20000000000000001 features=2,5",
    "expdot gamma=0.20000000000000001 features=6-8",
    "spline features=3",
    "poly gamma=0.5 coef0=0.5 degree=3 features=10-12",
};
#define RLS2_N 12
#define RLS2_K 9

/* An RLS2 model with nc classes (0: regression) and nsv random support vectors. */
static km_model *random_rls2(int nc, int64_t nsv, uint64_t seed)
{
    km_error err;
    km_rng r;
    km_rng_seed(&r, seed);
    int nw = nc > 2 ? nc : 1;
    km_model *m = km_model_new(KM_LOSS_RLS, RLS2_N, nc, nw, &err);
    for (int k = 0; k < nc; k++)
        m->labels[k] = k + 1;
    km_basis_set set = {RLS2_K, calloc(RLS2_K, sizeof *set.b)};
    for (int k = 0; k < RLS2_K; k++)
        km_basis_parse(rls2_specs[k], RLS2_N, &set.b[k], &err);
    double *s = malloc(RLS2_K * (size_t)nw * sizeof *s);
    double *d = malloc(RLS2_K * (size_t)nw * sizeof *d);
    double *icpt = malloc((size_t)nw * sizeof *icpt);
    for (int k = 0; k < RLS2_K * nw; k++) {
        s[k] = 0.5 + unif(&r);
        d[k] = nw > 1 && k % 4 == 1 ? 0 : unif(&r) / RLS2_K;   /* some d_kj = 0 */
    }
    for (int j = 0; j < nw; j++)
        icpt[j] = 2 * unif(&r) - 1;
    km_problem *sv = random_problem(nsv, RLS2_N, 0.5, 0, seed + 1);
    double *coef = malloc((size_t)(nsv * nw + 1) * sizeof *coef);
    for (int64_t i = 0; i < nsv * nw; i++)
        coef[i] = 2 * unif(&r) - 1;
    int rc = km_model_set_mkl(m, &set, s, d, icpt, 1.0 / 3, sv, coef, &err);
    CHECK(rc == KM_OK && set.m == 0 && set.b == NULL && km_model_rls2(m) && !km_model_w(m) &&
          km_model_rls2(m)->basis.m == RLS2_K, "RLS2 model built (nr_class %d, %lld support vectors; %s)", nc,
          (long long)nsv, rc ? err.msg : "basis moved");
    return m;
}

/* f_j(x) by the definition: a double loop of km_basis_eval over kernels and support vectors
 * on x without its features >= n; mag[j] gets the sum of the terms' magnitudes. */
static void rls2_reference(const km_model *m, const km_problem *X, int64_t i, double *dec,
                           double *mag)
{
    int nw = m->nr_w;
    const km_rls2_body *b = km_model_rls2(m);
    const int32_t *ix = X->index + X->row_ptr[i];
    const double *vx = X->value + X->row_ptr[i];
    int64_t nx = 0;
    while (X->row_ptr[i] + nx < X->row_ptr[i + 1] && ix[nx] < m->n)
        nx++;
    for (int j = 0; j < nw; j++) {
        dec[j] = b->intercept[j];
        mag[j] = fabs(b->intercept[j]);
    }
    const km_problem *S = b->sv;
    for (int k = 0; k < b->basis.m; k++)
        for (int64_t t = 0; t < S->l; t++) {
            int64_t p = S->row_ptr[t];
            double kv = km_basis_eval(&b->basis.b[k], S->index + p, S->value + p,
                                      S->row_ptr[t + 1] - p, ix, vx, nx);
            for (int j = 0; j < nw; j++) {
                double term = b->basis_s[k * nw + j] * b->basis_d[k * nw + j] *
                              b->sv_coef[t * nw + j] * kv;
                dec[j] += term;
                mag[j] += fabs(term);
            }
        }
}

/* Reads path into a new string. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *text = malloc((size_t)len + 1);
    text[fread(text, 1, (size_t)len, f)] = '\0';
    fclose(f);
    return text;
}

/* The 1-based number of the first line of text starting with prefix (0 if none). */
static int line_of(const char *text, const char *prefix)
{
    int line = 1;
    for (const char *p = text; *p; line++) {
        if (strncmp(p, prefix, strlen(prefix)) == 0)
            return line;
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    return 0;
}

/* text with line `line` (1-based) replaced by repl (NULL: deleted); a new string. */
static char *with_line(const char *text, int line, const char *repl)
{
    const char *p = text;
    for (int k = 1; k < line && p; k++)
        if ((p = strchr(p, '\n')))
            p++;
    const char *e = p ? strchr(p, '\n') : NULL;
    size_t len = strlen(text) + (repl ? strlen(repl) : 0) + 2;
    char *out = malloc(len);
    if (!p || !e) {
        snprintf(out, len, "%s", text);
        return out;
    }
    snprintf(out, len, "%.*s%s%s%s", (int)(p - text), text, repl ? repl : "", repl ? "\n" : "",
             e + 1);
    return out;
}

/* Decision values of m on X (all rows, or rows[0..count)) with threads. */
static double *decide(const km_model *m, const km_problem *X, const int64_t *rows,
                      int64_t count, int threads)
{
    km_error err;
    int64_t c = rows ? count : X->l;
    double *dec = malloc((size_t)(c * m->nr_w + 1) * sizeof *dec);
    int rc = km_model_decision_rows(m, X, rows, count, dec, threads, &err);
    CHECK(rc == KM_OK, "decision values computed (%s)", rc ? err.msg : "ok");
    return dec;
}

static void test_rls2(const char *dir)
{
    char path[256], path2[256];
    snprintf(path, sizeof path, "%s/r.model", dir);
    snprintf(path2, sizeof path2, "%s/r2.model", dir);
    km_error err;
    km_problem *X = random_problem(1500, RLS2_N + 3, 0.4, 0, 77);   /* features past n too */
    int64_t rows[] = {1499, 3, 3, 700, 0, 1024, 1023};
    int64_t nrows = (int64_t)(sizeof rows / sizeof *rows);
    for (int shape = 0; shape < 3; shape++) {
        int nc = shape == 0 ? 0 : shape == 1 ? 2 : 3;
        km_model *m = random_rls2(nc, 300, 40 + (uint64_t)shape);
        int nw = m->nr_w;
        double *dec = decide(m, X, NULL, 0, 1), *want = malloc((size_t)nw * sizeof *want);
        double *mag = malloc((size_t)nw * sizeof *mag), worst = 0;
        for (int64_t i = 0; i < X->l; i++) {
            rls2_reference(m, X, i, want, mag);
            for (int j = 0; j < nw; j++) {
                double e = fabs(dec[i * nw + j] - want[j]) / mag[j];
                worst = e > worst ? e : worst;
            }
        }
        CHECK(worst <= 1e-12, "RLS2 decision values (%d functions, 2 blocks of rows) agree "
              "with the double loop of km_basis_eval (relative error %.2g)", nw, worst);
        double *dr = decide(m, X, rows, nrows, 3);
        worst = 0;
        for (int64_t a = 0; a < nrows; a++) {
            rls2_reference(m, X, rows[a], want, mag);
            for (int j = 0; j < nw; j++) {
                double e = fabs(dr[a * nw + j] - want[j]) / mag[j];
                worst = e > worst ? e : worst;
            }
        }
        CHECK(worst <= 1e-12, "RLS2 decision values of a row list on 3 threads agree "
              "(relative error %.2g)", worst);
        int labels_ok = 1;
        for (int64_t i = 0; i < X->l; i++) {
            const double *z = dec + i * nw;
            double p = km_model_predict_label(m, z);
            int best = 0;
            for (int j = 1; j < nw; j++)
                best = z[j] > z[best] ? j : best;
            labels_ok &= nc == 0 ? p == z[0] : nc == 2 ? p == (z[0] > 0 ? 2 : 1) : p == best + 1;
        }
        CHECK(labels_ok, "km_model_predict_label reads RLS2 decision values as other models'");

        CHECK(km_model_write(m, path, &err) == KM_OK, "RLS2 model written");
        km_model *q = NULL;
        int rc = km_model_read(path, &q, &err);
        CHECK(rc == KM_OK, "RLS2 model read back (%s)", rc ? err.msg : "ok");
        if (rc == KM_OK) {
            const km_rls2_body *bm = km_model_rls2(m), *bq = km_model_rls2(q);
            int same = bq && q->loss == KM_LOSS_RLS && q->bias < 0 &&
                       q->nr_w == nw && q->nr_class == nc && q->n == RLS2_N &&
                       memcmp(&bq->lambda, &bm->lambda, sizeof bq->lambda) == 0 &&
                       bq->basis.m == RLS2_K && bq->sv->l == bm->sv->l &&
                       bq->sv->nnz == bm->sv->nnz;
            size_t kw = (size_t)RLS2_K * (size_t)nw * sizeof(double);
            same = same && memcmp(bq->basis_s, bm->basis_s, kw) == 0 &&
                   memcmp(bq->basis_d, bm->basis_d, kw) == 0 &&
                   memcmp(bq->intercept, bm->intercept, (size_t)nw * sizeof(double)) == 0 &&
                   memcmp(bq->sv_coef, bm->sv_coef, (size_t)(bm->sv->l * nw) * sizeof(double))
                   == 0 && memcmp(bq->sv->index, bm->sv->index,
                                  (size_t)bm->sv->nnz * sizeof(int32_t)) == 0
                   && memcmp(bq->sv->value, bm->sv->value, (size_t)bm->sv->nnz * sizeof(double))
                   == 0 && memcmp(bq->sv->row_ptr, bm->sv->row_ptr,
                                  (size_t)(bm->sv->l + 1) * sizeof(int64_t)) == 0;
            for (int k = 0; same && k < RLS2_K; k++) {
                char a[256], b[256];
                km_basis_format(&bm->basis.b[k], a, sizeof a);
                km_basis_format(&bq->basis.b[k], b, sizeof b);
                same = strcmp(a, b) == 0;
            }
            CHECK(same, "RLS2 model round-trips bit for bit (nr_class %d)", nc);
            double *dq = decide(q, X, NULL, 0, 1);
            CHECK(memcmp(dq, dec, (size_t)(X->l * nw) * sizeof *dq) == 0,
                  "decision values identical after reloading (nr_class %d)", nc);
            CHECK(km_model_write(q, path2, &err) == KM_OK, "reloaded model written again");
            char *t1 = slurp(path), *t2 = slurp(path2);
            CHECK(strcmp(t1, t2) == 0 && line_of(t1, "solver rls2") == 2 &&
                  line_of(t1, "basis") > 0 && line_of(t1, "intercept ") ==
                  line_of(t1, "basis") + RLS2_K + 1, "the rewritten file is identical");
            free(t1);
            free(t2);
            free(dq);
            km_model_free(q);
        }
        free(dec);
        free(dr);
        free(want);
        free(mag);
        km_model_free(m);
    }

    /* no support vectors: the intercepts alone */
    km_model *m = random_rls2(3, 0, 5);
    double *dec = decide(m, X, NULL, 0, 1);
    int ok = 1;
    for (int64_t i = 0; i < X->l; i++)
        ok &= memcmp(dec + i * 3, km_model_rls2(m)->intercept, 3 * sizeof *dec) == 0;
    CHECK(ok, "an RLS2 model without support vectors predicts its intercepts");
    free(dec);
    km_model_free(m);

    /* invalid arguments are refused, and everything given is freed (ASan checks) */
    for (int t = 0; t < 3; t++) {
        m = km_model_new(KM_LOSS_RLS, 4, 0, 1, &err);
        km_basis_set set = {1, calloc(1, sizeof *set.b)};
        km_basis_parse("rbf features=2-3", 4, &set.b[0], &err);
        double *s = malloc(sizeof *s), *d = malloc(sizeof *d), *icpt = calloc(1, sizeof *icpt);
        *s = t == 0 ? -1 : 1;
        *d = t == 1 ? NAN : 0.5;
        if (t == 2)
            set.b[0].feat[1] = 7;   /* beyond n = 4 */
        km_problem *sv = random_problem(3, 4, 1, 0, 2);
        double *coef = calloc(3, sizeof *coef);
        int rc = km_model_set_mkl(m, &set, s, d, icpt, 1, sv, coef, &err);
        CHECK(rc == KM_EUSAGE && set.m == 0 && strstr(err.msg, "rls2 model: basis kernel 1"),
              "km_model_set_mkl refuses a bad %s (%s)", t == 0 ? "scale" : t == 1 ? "weight"
              : "feature index", err.msg);
        km_model_free(m);
    }

    /* damaged files: every truncation, and each kind of bad line */
    m = random_rls2(3, 4, 8);
    km_model_write(m, path, &err);
    km_model_free(m);
    char *text = slurp(path);
    int nlines = 0;
    for (const char *c = text; *c; c++)
        nlines += *c == '\n';
    int trunc_ok = 1;
    for (int k = 1; k < nlines; k++) {
        char *cut = strdup(text), *p = cut;
        for (int j = 0; j < k; j++)
            p = strchr(p, '\n') + 1;
        *p = '\0';
        put(path2, cut);
        km_model *q = NULL;
        int rc = km_model_read(path2, &q, &err);
        if (rc != KM_EINPUT || !strstr(err.msg, path2) || q) {
            printf("  truncated after %d lines: %d '%s'\n", k, rc, err.msg);
            trunc_ok = 0;
        }
        free(cut);
    }
    CHECK(trunc_ok, "the RLS2 model truncated after each of its %d lines is rejected", nlines - 1);
    int basis = line_of(text, "basis"), icpt = line_of(text, "intercept "),
        nsv = line_of(text, "nr_sv "), sv = line_of(text, "sv"), end = line_of(text, "end");
    char line[600];
    struct { int line; const char *repl; int at; const char *want; } bad[] = {
        {2, "solver rls3", 2, "unknown solver"},
        {line_of(text, "lambda"), "lambda nan", line_of(text, "lambda"), "bad lambda"},
        {line_of(text, "lambda"), "lambda -1", line_of(text, "lambda"), "bad lambda"},
        {line_of(text, "lambda"), NULL, basis - 1, "rls2 model header incomplete"},
        {line_of(text, "nr_basis"), NULL, basis - 1, "rls2 model header incomplete"},
        {line_of(text, "loss"), "loss l2svm", line_of(text, "loss"),
         "rls2 models have loss rls and bias -1"},
        {line_of(text, "bias"), "bias 1", line_of(text, "bias"),
         "rls2 models have loss rls and bias -1"},
        {line_of(text, "loss"), "loss rls\nkernel rbf", line_of(text, "loss") + 1,
         "unknown header key 'kernel' (not one of a rls2 model)"},
        {line_of(text, "loss"), "loss rls\nnr_sv 4", line_of(text, "loss") + 1,
         "unknown header key 'nr_sv' (not one of a rls2 model)"},
        {line_of(text, "nr_basis"), "nr_basis 10", icpt, "expected nr_w scales and nr_w kernel"},
        {line_of(text, "nr_basis"), "nr_basis 8", basis + RLS2_K, "expected 'intercept'"},
        {line_of(text, "nr_basis"), "nr_basis -1", line_of(text, "nr_basis"), "bad nr_basis"},
        {icpt, "intercept 1 2", icpt, "expected 'intercept' and nr_w numbers"},
        {icpt, "intercept 1 2 inf", icpt, "expected 'intercept' and nr_w numbers"},
        {icpt, "intercept 1 2 3 4", icpt, "expected 'intercept' and nr_w numbers"},
        {nsv, "nr_sv 5", end, "expected nr_w coefficients"},
        {nsv, "nr_sv 3", end - 1, "expected 'end' after the support vectors"},
        {nsv, "nr_sv x", nsv, "expected 'nr_sv COUNT'"},
        {nsv, NULL, nsv, "expected 'nr_sv COUNT'"},
        {sv, "sx", sv, "expected 'sv'"},
        {basis + 1, "1 1 1 1 1 1", basis + 1, "weights (finite, non-negative), then the kernel"},
        {basis + 1, "1 1 1 1 1 1 ", basis + 1, "bad basis kernel: empty kernel"},
        {basis + 1, "1 1 1 1 1 1 rbx features=all", basis + 1,
         "bad basis kernel: unknown kernel 'rbx'"},
        {basis + 1, "1 1 1 1 1 1 rbf features=13", basis + 1,
         "bad basis kernel: features=13: index 13 exceeds the number of features (12)"},
        {basis + 1, "1 1 1 1 1 1 rbf gamma=0 features=1", basis + 1, "gamma must be a positive"},
        {basis + 1, "1 1 1 -1 1 1 rbf features=1", basis + 1, "expected nr_w scales"},
        {basis + 1, "1 1 1 1 nan 1 rbf features=1", basis + 1, "expected nr_w scales"},
        {basis + 1, "1 1 1 1 1 1e999 rbf features=1", basis + 1, "expected nr_w scales"},
        {basis + 1, "1 1 1 1 1 rbf features=1", basis + 1, "expected nr_w scales"},
        {basis + 1, "1  1 1 1 1 1 rbf features=1", basis + 1, "expected nr_w scales"},
        {basis + 5, "1 1 1 1 1 1 spline features=1-2", basis + 5, "spline kernel: needs 1-D"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        char *damaged = with_line(text, bad[t].line, bad[t].repl);
        put(path2, damaged);
        free(damaged);
        snprintf(line, sizeof line, "%s:%d: ", path2, bad[t].at);
        km_model *q = NULL;
        int rc = km_model_read(path2, &q, &err);
        CHECK(rc == KM_EINPUT && !q && strstr(err.msg, line) && strstr(err.msg, bad[t].want),
              "damaged RLS2 model %zu rejected with '%s%s' (got '%s')", t, line, bad[t].want,
              err.msg);
    }
    put(path2, text);
    CHECK(km_model_read(path2, &m, &err) == KM_OK, "the undamaged file reads");
    km_model_free(m);
    free(text);

    km_model *lin = km_model_new(KM_LOSS_RLS, 1, 0, 1, &err);
    km_model_write(lin, path2, &err);
    km_model_free(lin);
    text = slurp(path2);
    char *damaged = with_line(text, 2, "lambda 1");
    put(path2, damaged);
    CHECK(km_model_read(path2, &lin, &err) == KM_EINPUT &&
          strstr(err.msg, ":2: unknown header key 'lambda' (not one of a linear model)"),
          "a linear model with lambda is rejected (%s)", err.msg);
    free(damaged);
    free(text);
    km_problem_free(X);
    unlink(path);
    unlink(path2);
}

/* OKL models (solver okl): any doubles in A and B round-trip bit for bit, the file too;
 * outputs = B times the decision values (the codes); the identity map; damaged files. */
static void test_okl(const char *dir)
{
    char path[256], path2[256];
    snprintf(path, sizeof path, "%s/okl.model", dir);
    snprintf(path2, sizeof path2, "%s/okl2.model", dir);
    km_error err;
    km_rng r;
    km_rng_seed(&r, 9);
    for (int ident = 0; ident < 2; ident++) {
        int64_t m_out = 7, nsv = 6;
        int p = ident ? 7 : 3;
        km_model *m = km_model_new(KM_LOSS_RLS, 4, 0, p, &err);
        km_problem *sv = random_problem(nsv, 4, 0.7, 0, 4);
        double *A = malloc((size_t)(nsv * p) * sizeof *A);
        double *B = ident ? NULL : malloc((size_t)(m_out * p) * sizeof *B);
        for (int64_t k = 0; k < nsv * p; k++)
            A[k] = 2 * unif(&r) - 1;
        for (int64_t k = 0; B && k < m_out * p; k++)
            B[k] = (2 * unif(&r) - 1) / 3;
        km_kernel kern = {KM_KERNEL_LAPLACIAN, 0.7, 0, 3, 0};
        int rc = km_model_set_okl(m, &kern, sv, A, m_out, B, 0.125, &err);
        CHECK(rc == KM_OK && km_model_okl(m), "okl model built (%s map)", ident ? "identity" : "B");
        km_model *q = NULL;
        rc = km_model_write(m, path, &err) || km_model_read(path, &q, &err) ||
             km_model_write(q, path2, &err);
        const km_okl_body *oq = rc == KM_OK ? km_model_okl(q) : NULL;
        CHECK(rc == KM_OK && oq && q->nr_output == m_out && q->nr_w == p &&
              oq->lambda == 0.125 && !memcmp(oq->e.sv_coef, A, (size_t)(nsv * p) * sizeof *A) &&
              (ident ? oq->output_map == NULL
                     : !memcmp(oq->output_map, B, (size_t)(m_out * p) * sizeof *B)),
              "okl model (%s map) round-trips bit for bit", ident ? "identity" : "B");
        char *t1 = NULL, *t2 = NULL;
        size_t n1 = 0, n2 = 0;
        FILE *f1 = fopen(path, "r"), *f2 = fopen(path2, "r");
        getdelim(&t1, &n1, '\0', f1);
        getdelim(&t2, &n2, '\0', f2);
        fclose(f1), fclose(f2);
        CHECK(strcmp(t1, t2) == 0, "okl model file rewritten identically");
        /* outputs = B * codes, codes = sum_s A_s K(sv_s, x): check on the first sv row */
        double codes[8], out[8];
        int64_t first = 0;
        CHECK(km_model_decision_rows(q, sv, &first, 1, codes, 1, &err) == KM_OK, "codes");
        km_model_outputs(q, codes, out);
        double worst = 0;
        for (int64_t j = 0; j < m_out; j++) {
            double want = 0;
            for (int k = 0; k < p; k++) {
                double c = 0;
                for (int64_t s = 0; s < nsv; s++) {
                    int64_t a = sv->row_ptr[0], b = sv->row_ptr[s];
                    double d = 0; /* ||x_0 - x_s||_1 over the union of indices */
                    double x0[4] = {0}, xs[4] = {0};
                    for (int64_t t = a; t < sv->row_ptr[1]; t++)
                        x0[sv->index[t]] = sv->value[t];
                    for (int64_t t = b; t < sv->row_ptr[s + 1]; t++)
                        xs[sv->index[t]] = sv->value[t];
                    for (int i = 0; i < 4; i++)
                        d += fabs(x0[i] - xs[i]);
                    c += A[s * p + k] * exp(-0.7 * d);
                }
                want += (ident ? (j == k) : B[j * p + k]) * c;
            }
            worst = fmax(worst, fabs(out[j] - want));
        }
        CHECK(worst < 1e-13, "outputs = output map x codes, by the definition (%.2g)", worst);
        km_model_free(q);
        free(t1), free(t2);
        km_model_free(m);
        if (!ident) { /* damaged: a short output map row */
            FILE *f = fopen(path, "r");
            char *line = NULL;
            size_t cap = 0;
            FILE *o = fopen(path2, "w");
            int in_map = 0, rows = 0;
            while (getline(&line, &cap, f) > 0) {
                if (in_map && rows++ == 2) {
                    fputs("0.5 0.25\n", o); /* 2 of 3 numbers */
                    continue;
                }
                in_map |= strcmp(line, "output_map\n") == 0;
                fputs(line, o);
            }
            fclose(f), fclose(o), free(line);
            CHECK(km_model_read(path2, &q, &err) == KM_EINPUT &&
                  strstr(err.msg, "expected nr_w numbers (a row of the output map)"),
                  "okl model with a short output map row rejected: %s", err.msg);
        }
    }
    unlink(path);
    unlink(path2);
}

/* The models of the previous release (tests/models, one per kind): read, written again,
 * the same bytes; the reader and the writer of every kind agree with that release's. */
static void test_previous_release(const char *dir)
{
    static const char *const names[] = {"linear", "linear_ova", "kernel", "kernel_svr", "rls2",
                                        "okl", "mtl"};
    char models[512], path[600], again[600];
    snprintf(models, sizeof models, "%.*smodels", (int)(strstr(__FILE__, "unit/") - __FILE__),
             __FILE__);
    for (size_t t = 0; t < sizeof names / sizeof *names; t++) {
        km_error err;
        km_model *m = NULL;
        snprintf(path, sizeof path, "%s/%s.model", models, names[t]);
        snprintf(again, sizeof again, "%s/again.model", dir);
        int rc = km_model_read(path, &m, &err);
        if (rc == KM_OK)
            rc = km_model_write(m, again, &err);
        char *a = rc == KM_OK ? slurp(path) : NULL, *b = rc == KM_OK ? slurp(again) : NULL;
        CHECK(a && b && strcmp(a, b) == 0 && strcmp(m->kind->name, strncmp(names[t], "linear", 6)
              == 0 ? "linear" : strncmp(names[t], "kernel", 6) == 0 ? "kernel" : names[t]) == 0,
              "%s.model of the previous release: read as a %s model, written again byte for "
              "byte (%s)", names[t], m ? m->kind->name : "?", rc ? err.msg : "ok");
        free(a);
        free(b);
        km_model_free(m);
    }
}

int main(void)
{
    char dir[] = "/tmp/kmtk-model-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    char path[256];
    snprintf(path, sizeof path, "%s/m.model", dir);
    km_error err;
    km_rng r;
    km_rng_seed(&r, 3);
    for (int shape = 0; shape < 3; shape++) {
        int nc = shape == 0 ? 0 : shape == 1 ? 2 : 4, nw = nc > 2 ? nc : 1;
        km_model *m = km_model_new(shape ? KM_LOSS_L1SVM : KM_LOSS_SVR, 50, nc, nw, &err);
        m->C = 0.1;
        m->eps = 1.0 / 3;
        m->bias = shape == 2 ? 1 : -1;
        for (int k = 0; k < nc; k++) {
            m->labels[k] = k * 2.5 - 1;
            m->label_weight[k] = 1 + k / 7.0;
        }
        for (int64_t j = 0; j < 51 * nw; j++) {
            uint64_t bits = km_rng_next(&r);
            double v;
            memcpy(&v, &bits, sizeof v);
            km_model_w(m)[j] = isfinite(v) ? v : 1e-310;   /* any finite double, subnormals too */
        }
        if (shape == 0)
            km_model_w(m)[3] = -0.0;
        CHECK(km_model_write(m, path, &err) == KM_OK, "write model shape %d", shape);
        km_model *q = NULL;
        int rc = km_model_read(path, &q, &err);
        CHECK(rc == KM_OK, "read model shape %d back (%s)", shape, rc ? err.msg : "");
        if (rc == KM_OK) {
            int64_t rows = 50 + (m->bias >= 0);
            CHECK(q->loss == m->loss && q->C == m->C && q->eps == m->eps && q->bias == m->bias
                  && q->n == m->n && q->nr_class == nc && q->nr_w == nw,
                  "header round-trips exactly (shape %d)", shape);
            CHECK(memcmp(km_model_w(q), km_model_w(m), (size_t)(rows * nw) * sizeof(double))
                  == 0 &&
                  (nc == 0 || (memcmp(q->labels, m->labels, (size_t)nc * sizeof(double)) == 0 &&
                   memcmp(q->label_weight, m->label_weight, (size_t)nc * sizeof(double)) == 0)),
                  "weights and labels round-trip bit for bit (shape %d)", shape);
            km_model_free(q);
        }
        km_model_free(m);
    }
    struct { const char *text, *want; } bad[] = {
        {"", "empty file"},
        {"libsvm-model 1\n", ":1: not a kmtk model"},
        {"kmtk-model 2\n", ":1: model format version 2 is not supported"},
        {"kmtk-model 1\nsolver linear\nloss hinge\nw\n", ":3: unknown loss"},
        {"kmtk-model 1\nsolver linear\nloss rls\ncolor blue\nC 1\nepsilon 0\nbias -1\n"
         "nr_feature 1\nnr_class 0\nnr_w 1\nw\n", ":4: unknown header key 'color'"},
        {"kmtk-model 1\nsolver linear\nloss rls\nloss rls\nw\n", ":4: header key 'loss' "
         "given twice"},
        {"kmtk-model 1\nsolver kernal\nw\n", ":2: unknown solver 'kernal'"},
        {"kmtk-model 1\nsolver kernel\nw\n", ":3: expected 'key value' or 'sv'"},
        {"kmtk-model 1\nsolver linear\nloss l1svm\n", "truncated model (no 'w' line)"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 0\nnr_w 1\n"
         "w\n0.5\n", "truncated model (1 of 2 weight lines)"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 0\nnr_w 1\n"
         "w\n0.5\nnan\n", ":11: expected nr_w weights"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 0\nnr_w 1\n"
         "w\n0.5\n1\n", "no 'end'"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 0\nnr_w 1\n"
         "w\n0.5\n1\nend\nmore\n", ":13: unexpected data after 'end'"},
        {"kmtk-model 1\nloss rls\nC 1\nepsilon 0\nbias -1\nnr_feature 2\nnr_class 3\nnr_w 1\n"
         "w\n", "header incomplete"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        put(path, bad[t].text);
        km_model *q = NULL;
        int rc = km_model_read(path, &q, &err);
        CHECK(rc == KM_EINPUT && strstr(err.msg, bad[t].want) && strstr(err.msg, path),
              "damaged model %zu rejected with '%s' (got '%s')", t, bad[t].want, err.msg);
    }
    snprintf(path, sizeof path, "%s/no/such/dir/m.model", dir);
    km_model *m = km_model_new(KM_LOSS_RLS, 1, 0, 1, &err);
    CHECK(km_model_write(m, path, &err) == KM_EINPUT && strstr(err.msg, "cannot create"),
          "unwritable path reported");
    km_model_free(m);
    snprintf(path, sizeof path, "%s/m.model", dir);
    unlink(path);
    test_rls2(dir);
    test_okl(dir);
    test_previous_release(dir);
    snprintf(path, sizeof path, "%s/again.model", dir);
    unlink(path);
    rmdir(dir);
    TEST_EXIT();
}
