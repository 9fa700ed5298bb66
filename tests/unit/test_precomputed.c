/* test_precomputed.c - precomputed kernels (-t precomputed, LIBSVM's 0:ID convention): the
 * reader's 0:ID rows and their faults, the kernel K(a, b) = row a at column ID_b, and the
 * same problem trained with -t rbf and with -t precomputed on a file of kmtk's own RBF
 * values (written with %.17g) giving the same coefficients and decision values. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "testutil.h"

#include "kernel.h"
#include "method.h"
#include "model.h"
#include "svmlight.h"

static char dir[64];

static const char *path_of(const char *name)
{
    static char buf[4][128];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 128, "%s/%s", dir, name);
    return p;
}

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "w");
    fputs(text, f);
    fclose(f);
}

/* The kernel values of the rows of A against the l training rows of Tr (rbf, gamma g):
 * training rows (A == Tr) from the kernel matrix, other rows from a kernel block. */
static double *kernel_values(const km_kernel *k, const km_problem *A, const km_problem *Tr,
                             int train)
{
    km_error err;
    int64_t l = Tr->l, m = A->l;
    double *V = malloc((size_t)(m * l) * sizeof *V);
    km_kdata *Dt = km_kdata_new(Tr, NULL, l, &err);
    if (train) {
        km_kmatrix *K = km_kmatrix_new(k, Dt, (size_t)1 << 30, 1, &err);
        for (int64_t i = 0; i < l; i++)
            memcpy(V + i * l, km_kmatrix_row(K, i, &err), (size_t)l * sizeof *V);
        km_kmatrix_free(K);
    } else {
        km_kdata *Da = km_kdata_new(A, NULL, m, &err);
        km_kernel_block(k, Da, NULL, m, Dt, NULL, l, V, 1, &err);
        km_kdata_free(Da);
    }
    km_kdata_free(Dt);
    return V;
}

/* Writes rows "y 0:ID 1:v ... l:v" (order[a]: the instance on line a; test rows "0:?"). */
static void write_precomputed(const char *name, const km_problem *A, const double *V,
                              int64_t l, const int64_t *order, int train)
{
    FILE *f = fopen(path_of(name), "w");
    for (int64_t a = 0; a < A->l; a++) {
        int64_t i = order ? order[a] : a;
        fprintf(f, "%.17g", A->y[i]);
        if (train)
            fprintf(f, " 0:%lld", (long long)i + 1);
        else
            fprintf(f, " 0:?");
        for (int64_t j = 0; j < l; j++)
            fprintf(f, " %lld:%.17g", (long long)j + 1, V[i * l + j]);
        fputc('\n', f);
    }
    fclose(f);
}

static km_model *train_with(const char *method, const km_problem *P, ...)
{
    km_error err;
    km_params *p = km_params_new();
    va_list ap;
    va_start(ap, P);
    for (const char *name; (name = va_arg(ap, const char *));)
        km_params_set(p, name, va_arg(ap, const char *), &err);
    va_end(ap);
    km_model *M = NULL;
    km_report rep;
    int rc = km_method_train(km_method_find(method), P, p, &M, &rep, &err);
    if (rc)
        printf("  train %s: %s\n", method, err.msg);
    else
        km_report_free(&rep);
    km_params_free(p);
    return M;
}

/* The coefficient of every training instance (0 when not a support vector): by row for a
 * feature model, by serial number for a precomputed one. */
static double *coefficients(const km_model *M, int64_t l)
{
    const km_expansion *e = km_model_expansion(M);
    double *c = calloc((size_t)l, sizeof *c);
    for (int64_t s = 0; s < e->sv->l && e->sv->id; s++)
        if (e->sv->id[s] >= 1 && e->sv->id[s] <= l)
            c[e->sv->id[s] - 1] = e->sv_coef[s];
    return c;
}

/* The same for a feature model whose support vectors are the rows of Tr with c != 0, in
 * order (matched by content). */
static double *coefficients_rows(const km_model *M, const km_problem *Tr)
{
    const km_expansion *e = km_model_expansion(M);
    double *c = calloc((size_t)Tr->l, sizeof *c);
    int64_t s = 0;
    for (int64_t i = 0; i < Tr->l && s < e->sv->l; i++) {
        int64_t a = Tr->row_ptr[i], n = Tr->row_ptr[i + 1] - a, b = e->sv->row_ptr[s];
        if (e->sv->row_ptr[s + 1] - b == n &&
            memcmp(Tr->value + a, e->sv->value + b, (size_t)n * sizeof *Tr->value) == 0)
            c[i] = e->sv_coef[s++];
    }
    return c;
}

static double max_diff(const double *a, const double *b, int64_t n)
{
    double d = 0;
    for (int64_t i = 0; i < n; i++)
        d = fabs(a[i] - b[i]) > d ? fabs(a[i] - b[i]) : d;
    return d;
}

static int same_file(const char *a, const char *b)
{
    FILE *f = fopen(a, "rb"), *g = fopen(b, "rb");
    int same = f && g;
    for (int x, y; same;) {
        x = fgetc(f);
        y = fgetc(g);
        same = x == y;
        if (x == EOF || y == EOF)
            break;
    }
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    return same;
}

/* rbf vs precomputed on one problem: coefficients and decision values; lines in a shuffled
 * order (IDs are not line numbers) agree to the solver's tolerance. */
static void test_same_as_rbf(const char *method, int classify)
{
    km_error err;
    km_problem *All = random_problem(110, 6, 0.8, classify, classify ? 11 : 12);
    int64_t l = 80, tr_rows[110], te_rows[30];
    for (int64_t i = 0; i < 110; i++)
        *(i < l ? &tr_rows[i] : &te_rows[i - l]) = i;
    km_problem *Tr = km_problem_subset(All, tr_rows, l, &err);
    km_problem *Te = km_problem_subset(All, te_rows, 30, &err);
    km_kernel k = {KM_KERNEL_RBF, 0.4, 0, 3, 0};
    double *Vt = kernel_values(&k, Tr, Tr, 1), *Vs = kernel_values(&k, Te, Tr, 0);
    write_precomputed("tr.pc", Tr, Vt, l, NULL, 1);
    write_precomputed("te.pc", Te, Vs, l, NULL, 0);
    km_problem *Ptr = NULL, *Pte = NULL;
    int rc = km_svmlight_read_ids(path_of("tr.pc"), 0, KM_IDS_TRAIN, &Ptr, &err);
    CHECK(rc == KM_OK && Ptr->l == l && Ptr->n == l && Ptr->id, "%s: the precomputed file "
          "reads (%s)", method, rc ? err.msg : "");
    int ids_ok = Ptr && Ptr->id;
    for (int64_t i = 0; ids_ok && i < l; i++)
        ids_ok = Ptr->id[i] == i + 1 && Ptr->row_ptr[i + 1] - Ptr->row_ptr[i] == l;
    CHECK(ids_ok, "%s: each row's 0:ID and all %lld values", method, (long long)l);
    rc = km_svmlight_read_ids(path_of("te.pc"), 0, KM_IDS_TEST, &Pte, &err);
    CHECK(rc == KM_OK && Pte->l == 30 && !Pte->id, "%s: test rows with 0:? read (%s)", method,
          rc ? err.msg : "");
    if (!Ptr || !Pte)
        return;

    km_model *Mr = train_with(method, Tr, "kernel", "rbf", "gamma", "0.4", "tolerance",
                              "1e-10", NULL);
    km_model *Mp = train_with(method, Ptr, "kernel", "precomputed", "tolerance", "1e-10",
                              NULL);
    CHECK(Mr && Mp, "%s: both train", method);
    if (!Mr || !Mp)
        return;
    double *cr = coefficients_rows(Mr, Tr), *cp = coefficients(Mp, l);
    CHECK(max_diff(cr, cp, l) <= 1e-12, "%s: the same coefficients (max diff %.3g)", method,
          max_diff(cr, cp, l));
    CHECK(km_model_expansion(Mp)->sv->l == km_model_expansion(Mr)->sv->l,
          "%s: the same support vectors (%lld)", method,
          (long long)km_model_expansion(Mp)->sv->l);
    double dr[30], dp[30], dp2[30];
    CHECK(km_model_decision_rows(Mr, Te, NULL, 30, dr, 1, &err) == KM_OK &&
          km_model_decision_rows(Mp, Pte, NULL, 30, dp, 1, &err) == KM_OK,
          "%s: decision values", method);
    CHECK(max_diff(dr, dp, 30) <= 1e-12, "%s: the same decision values on test rows (max "
          "diff %.3g)", method, max_diff(dr, dp, 30));
    /* an independent evaluation: f(x) = sum_i c_i K(x, x_i) from the file's values */
    double worst = 0;
    for (int64_t a = 0; a < 30; a++) {
        double f = 0;
        for (int64_t i = 0; i < l; i++)
            f += cp[i] * Vs[a * l + i];
        worst = fabs(f - dp[a]) > worst ? fabs(f - dp[a]) : worst;
    }
    CHECK(worst <= 1e-12, "%s: f(x) = sum_s c_s row[ID_s] (max diff %.3g)", method, worst);
    /* training rows as test rows (their 0:ID ignored): the training decision values */
    double zt[80], zr[80];
    km_model_decision_rows(Mp, Ptr, NULL, l, zt, 1, &err);
    km_model_decision_rows(Mr, Tr, NULL, l, zr, 1, &err);
    CHECK(max_diff(zt, zr, l) <= 1e-12, "%s: decision values of the training rows", method);

    /* the model file: written, read back, written again byte for byte; same predictions */
    km_model *M2 = NULL;
    rc = km_model_write(Mp, path_of("m1"), &err);
    if (rc == KM_OK)
        rc = km_model_read(path_of("m1"), &M2, &err);
    if (rc == KM_OK)
        rc = km_model_write(M2, path_of("m2"), &err);
    CHECK(rc == KM_OK && same_file(path_of("m1"), path_of("m2")), "%s: the precomputed model "
          "round-trips byte for byte (%s)", method, rc ? err.msg : "");
    CHECK(M2 && km_model_precomputed(M2) == l, "%s: the model read says precomputed, L = %lld",
          method, (long long)l);
    if (M2) {
        km_model_decision_rows(M2, Pte, NULL, 30, dp2, 1, &err);
        CHECK(memcmp(dp, dp2, sizeof dp) == 0, "%s: the model read predicts the same bits",
              method);
    }
    CHECK(km_model_precomputed(Mr) == 0, "%s: an rbf model is not precomputed", method);

    /* the lines shuffled (and a subset of the columns' instances: LIBSVM allows both) */
    int64_t order[80];
    for (int64_t i = 0; i < l; i++)
        order[i] = (i * 37 + 5) % l;
    write_precomputed("tr2.pc", Tr, Vt, l, order, 1);
    km_problem *Psh = NULL;
    km_svmlight_read_ids(path_of("tr2.pc"), 0, KM_IDS_TRAIN, &Psh, &err);
    km_model *Ms = Psh ? train_with(method, Psh, "kernel", "4", "tolerance", "1e-13",
                                    "max_iter", "100000", NULL) : NULL;
    km_model *Mr2 = train_with(method, Tr, "kernel", "rbf", "gamma", "0.4", "tolerance",
                               "1e-13", "max_iter", "100000", NULL);
    if (Ms && Mr2) {
        double *cs = coefficients(Ms, l), *cr2 = coefficients_rows(Mr2, Tr), ds[30];
        km_model_decision_rows(Ms, Pte, NULL, 30, ds, 1, &err);
        km_model_decision_rows(Mr2, Te, NULL, 30, dr, 1, &err);
        CHECK(max_diff(cs, cr2, l) <= 1e-6 && max_diff(ds, dr, 30) <= 1e-6,
              "%s: shuffled lines (IDs not line numbers): the same optimum (coefficients %.2g, "
              "decision values %.2g)", method, max_diff(cs, cr2, l), max_diff(ds, dr, 30));
        free(cs);
        free(cr2);
    } else {
        CHECK(0, "%s: shuffled lines train", method);
    }
    /* cross-validation runs on row subsets: their IDs travel */
    km_params *p = km_params_new();
    km_params_set(p, "kernel", "precomputed", &err);
    double cv_pc = 0, cv_rbf = 0;
    km_report rep;
    rc = km_method_cv_score(km_method_find(method), Ptr, p, 5, NULL, &cv_pc, &rep, &err);
    if (rc == KM_OK)
        km_report_free(&rep);
    km_params_set(p, "kernel", "rbf", &err);
    km_params_set(p, "gamma", "0.4", &err);
    int rc2 = km_method_cv_score(km_method_find(method), Tr, p, 5, NULL, &cv_rbf, &rep, &err);
    if (rc2 == KM_OK)
        km_report_free(&rep);
    CHECK(rc == KM_OK && rc2 == KM_OK && fabs(cv_pc - cv_rbf) <= 1e-9 * (1 + fabs(cv_rbf)),
          "%s: 5-fold cross-validation the same (%g, %g)", method, cv_pc, cv_rbf);
    km_params_free(p);

    km_model_free(Ms);
    km_model_free(Mr2);
    km_problem_free(Psh);
    km_model_free(M2);
    free(cr);
    free(cp);
    km_model_free(Mr);
    km_model_free(Mp);
    km_problem_free(Ptr);
    km_problem_free(Pte);
    free(Vt);
    free(Vs);
    km_problem_free(Tr);
    km_problem_free(Te);
    km_problem_free(All);
}

/* One faulty file: KM_EINPUT with "FILE:LINE:COL: " and the words expected. */
static void expect_fault(int mode, int64_t columns, const char *text, int line, int col,
                         const char *words, const char *what)
{
    write_text("bad", text);
    km_error err = {0};
    km_problem *P = NULL;
    int rc;
    if (columns) {   /* the streaming reader, set up as for a model of L = columns */
        km_svmlight_reader *r = km_svmlight_open(path_of("bad"), &err);
        km_svmlight_set_ids(r, mode, columns);
        km_row row;
        while ((rc = km_svmlight_next(r, &row, &err)) > 0)
            ;
        rc = rc < 0 ? err.code : KM_OK;
        km_svmlight_close(r);
    } else {
        rc = km_svmlight_read_ids(path_of("bad"), 0, mode, &P, &err);
    }
    char where[160];
    snprintf(where, sizeof where, "%s:%d:%d: ", path_of("bad"), line, col);
    int ok = rc == KM_EINPUT && strncmp(err.msg, where, strlen(where)) == 0 &&
             strstr(err.msg, words);
    CHECK(ok, "%s: %s", what, err.msg);
    if (!ok)
        printf("  want '%s...%s'\n", where, words);
    km_problem_free(P);
}

static void test_faults(void)
{
    enum { T = KM_IDS_TRAIN };
    static const struct {
        int mode;
        int64_t columns;
        const char *text;
        int line, col;
        const char *words, *what;
    } faults[] = {
        {T, 0, "1 1:1 2:0.5\n", 1, 3, "expected '0:ID' first", "missing 0:"},
        {T, 0, "1 0:1 1:1 2:0.5\n-1 1:0.5 2:1\n", 2, 4, "expected '0:ID' first",
         "missing 0: on the second row"},
        {T, 0, "1 0:1 1:1 2:0.5\n-1 0:3 1:0.5 2:1\n", 2, 6, "1..2",
         "ID beyond the kernel values"},
        {T, 0, "1 0:1.5 1:1\n", 1, 5, "serial number", "ID not an integer"},
        {T, 0, "1 0:0 1:1\n", 1, 5, "serial number", "ID 0"},
        {T, 0, "1 0:-2 1:1\n", 1, 5, "serial number", "negative ID"},
        {T, 0, "1 0:x 1:1\n", 1, 5, "serial number", "ID not a number"},
        {T, 0, "1 0:1 1:1 2:0.5\n-1 0:1 1:0.5 2:1\n", 2, 6, "1 again (line 1",
         "duplicate ID"},
        {T, 0, "1 0:1 1:1 2:0.5 3:0.2\n-1 0:2 1:0.5 2:1\n", 2, 17,
         "expected 3 kernel values", "a short row"},
        {T, 0, "1 0:1 1:1 2:0.5\n-1 0:2 1:0.5 2:1 3:0\n", 2, 18, "got more",
         "a long row"},
        {T, 0, "1 0:1 1:1 3:0.5\n", 1, 11, "kernel value 2: next", "a gap"},
        {T, 0, "1 0:1 1:1 2:1 0:3\n", 1, 15, "'0:' only first", "0: not first"},
        {T, 0, "1 0:1\n", 1, 6, "expected kernel values", "no kernel values"},
        {T, 0, "1 0:1 1:1 2:x\n", 1, 13, "a number", "a bad value"},
        /* test rows: 0: optional and ignored, all L values */
        {KM_IDS_TEST, 3, "1 0:? 1:1 2:0.5\n", 1, 16, "expected 3 kernel values",
         "a short test row"},
        {KM_IDS_TEST, 2, "1 0:? 1:1 2:0.5 3:1\n", 1, 17, "the model's",
         "a long test row"},
        {KM_IDS_NONE, 0, "1 0:1 1:1\n", 1, 3, "index >= 1",
         "without -t precomputed, index 0 is refused as before"},
    };
    for (size_t t = 0; t < sizeof faults / sizeof *faults; t++)
        expect_fault(faults[t].mode, faults[t].columns, faults[t].text, faults[t].line,
                     faults[t].col, faults[t].words, faults[t].what);

    write_text("ok", "1 0:? 1:1 2:0.5\n-1 1:0.5 2:1 # no 0:\n1 0:7 1:2 2:3\n");
    km_svmlight_reader *r = km_svmlight_open(path_of("ok"), NULL);
    km_svmlight_set_ids(r, KM_IDS_TEST, 2);
    km_row row;
    int n = 0, good = 1;
    while (km_svmlight_next(r, &row, NULL) > 0)
        good &= row.nnz == 2 && row.index[0] == 0 && row.index[1] == 1 && row.id == 0, n++;
    km_svmlight_close(r);
    CHECK(n == 3 && good, "test rows: 0:? or 0:ANY or no 0: at all, the values as columns "
          "1..L");
}

/* K(a, b) = K(b, a) by construction (the row of the smaller ID gives it), whatever the file;
 * a kernel matrix over rows without serial numbers is refused. */
static void test_kernel(void)
{
    km_error err;
    write_text("asym", "1 0:2 1:0.5 2:4 3:0.25\n-1 0:1 1:1 2:0.75 3:0.5\n1 0:3 1:0.125 "
               "2:0.375 3:9\n");
    km_problem *P = NULL;
    km_svmlight_read_ids(path_of("asym"), 0, KM_IDS_TRAIN, &P, &err);
    km_kernel k = {KM_KERNEL_PRECOMPUTED, 0, 0, 3, 0};
    km_kdata *D = km_kdata_new(P, NULL, 3, &err);
    km_kmatrix *K = km_kmatrix_new(&k, D, 1 << 20, 1, &err);
    /* ids 2, 1, 3: K(row0,row1) = row1 (ID 1) at column 2 = 0.75; K(row0,row2) = row0 (ID
     * 2) at column 3 = 0.25; K(row1,row2) = row1 at column 3 = 0.5; diagonal: 4, 1, 9 */
    double want[9] = {4, 0.75, 0.25, 0.75, 1, 0.5, 0.25, 0.5, 9}, got[9];
    for (int i = 0; i < 3; i++)
        memcpy(got + 3 * i, km_kmatrix_row(K, i, &err), 3 * sizeof *got);
    CHECK(memcmp(want, got, sizeof got) == 0 && km_kmatrix_diag(K, 0) == 4 &&
          km_kmatrix_diag(K, 2) == 9, "K(a, b) = the value at column ID_b of the row of the "
          "smaller ID: symmetric");
    double blk[9];
    km_kernel_block(&k, D, NULL, 3, D, NULL, 3, blk, 1, &err);
    CHECK(memcmp(want, blk, sizeof blk) == 0, "kernel blocks give the same values");
    km_kmatrix_free(K);
    km_kdata_free(D);
    free(P->id);
    P->id = NULL;
    D = km_kdata_new(P, NULL, 3, &err);
    K = km_kmatrix_new(&k, D, 1 << 20, 1, &err);
    CHECK(!K && err.code == KM_EUSAGE && strstr(err.msg, "serial numbers"),
          "rows without serial numbers: %s", err.msg);
    km_kmatrix_free(K);
    km_kdata_free(D);
    km_problem_free(P);
}

/* The front ends' hook: the reader options from the parameters, only for -t precomputed. */
static void test_read_params(void)
{
    km_error err;
    write_text("pc", "1 0:1 1:1 2:0.5\n-1 0:2 1:0.5 2:1\n");
    km_params *p = km_params_new();
    km_problem *P = NULL;
    int rc = km_svmlight_read_params(p, path_of("pc"), 0, &P, &err);
    CHECK(rc == KM_EINPUT && strstr(err.msg, ":1:3: expected a feature index >= 1, got 0"),
          "no -t: 0: refused (%s)", err.msg);
    km_params_set(p, "kernel", "rbf", &err);
    rc = km_svmlight_read_params(p, path_of("pc"), 0, &P, &err);
    CHECK(rc == KM_EINPUT, "-t rbf: 0: refused");
    km_params_set(p, "kernel", "precomputed", &err);
    rc = km_svmlight_read_params(p, path_of("pc"), 0, &P, &err);
    CHECK(rc == KM_OK && P->id && P->id[1] == 2, "-t precomputed: 0:ID read");
    km_problem_free(P);
    km_params_free(p);
}

int main(void)
{
    strcpy(dir, "/tmp/kmtk-precomputed-XXXXXX");
    if (!mkdtemp(dir)) {
        printf("FAIL - mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_faults();
    test_kernel();
    test_read_params();
    test_same_as_rbf("l1svm", 1);
    test_same_as_rbf("rls", 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("(could not remove %s)\n", dir);
    TEST_EXIT();
}
