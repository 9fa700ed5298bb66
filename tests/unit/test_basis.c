/* test_basis.c - basis kernels: the kernel-list syntax (round-trip, defaults, every error),
 * the paper and linear sets, evaluation on a feature subset against km_kernel_eval on rows
 * projected by hand, projection of random sparse problems, kernel-list files. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basis.h"
#include "test.h"
#include "testutil.h"

/* A random finite double from random bits (subnormals, huge and tiny values included). */
static double any_double(km_rng *r)
{
    for (;;) {
        uint64_t bits = km_rng_next(r);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (isfinite(v))
            return v;
    }
}

/* A random basis kernel valid for n >= 1 features (feat malloc'ed, or all features). */
static km_basis random_basis(km_rng *r, int32_t n)
{
    km_basis b = {{KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0, NULL};
    b.kernel.type = (km_kernel_type)km_rng_below(r, KM_KERNEL_COUNT);
    if (b.kernel.type != KM_KERNEL_LINEAR && b.kernel.type != KM_KERNEL_SPLINE)
        b.kernel.gamma = km_rng_below(r, 2) ? fabs(any_double(r)) + 0x1p-1074
                                            : (double)(km_rng_below(r, 1000) + 1) / 7;
    if (b.kernel.type == KM_KERNEL_POLY || b.kernel.type == KM_KERNEL_SIGMOID)
        b.kernel.coef0 = km_rng_below(r, 2) ? any_double(r) : -(double)km_rng_below(r, 5);
    if (b.kernel.type == KM_KERNEL_POLY)
        b.kernel.degree = 1 + (int)km_rng_below(r, 1000);
    int all = b.kernel.type == KM_KERNEL_SPLINE ? n == 1 && km_rng_below(r, 2)
                                                 : km_rng_below(r, 4) == 0;
    if (all)
        return b;
    b.feat = malloc((size_t)n * sizeof *b.feat);
    if (b.kernel.type == KM_KERNEL_SPLINE) {
        b.feat[b.nfeat++] = (int32_t)km_rng_below(r, (uint64_t)n);
        return b;
    }
    double keep = unif(r);
    for (int32_t f = 0; f < n; f++)
        if (unif(r) < keep)
            b.feat[b.nfeat++] = f;
    if (b.nfeat == 0)
        b.feat[b.nfeat++] = (int32_t)km_rng_below(r, (uint64_t)n);
    return b;
}

/* 1 when a and b are the same basis kernel, bit for bit. */
static int same_basis(const km_basis *a, const km_basis *b)
{
    return a->kernel.type == b->kernel.type &&
           memcmp(&a->kernel.gamma, &b->kernel.gamma, sizeof(double)) == 0 &&
           memcmp(&a->kernel.coef0, &b->kernel.coef0, sizeof(double)) == 0 &&
           a->kernel.degree == b->kernel.degree && a->nfeat == b->nfeat &&
           (a->nfeat == 0 || memcmp(a->feat, b->feat, (size_t)a->nfeat * sizeof *a->feat) == 0);
}

static void test_round_trip(void)
{
    km_rng r;
    km_rng_seed(&r, 11);
    km_error err;
    int ok = 0, ok_again = 0, ok_spaces = 0, trials = 2000;
    char text[4096], again[4096], spaced[4200];
    for (int t = 0; t < trials; t++) {
        int32_t n = 1 + (int32_t)km_rng_below(&r, 60);
        km_basis b = random_basis(&r, n), p = {{0, 0, 0, 0, 0}, 0, NULL}, q = p;
        int len = km_basis_format(&b, text, sizeof text);
        if (len < (int)sizeof text && km_basis_parse(text, n, &p, &err) == KM_OK &&
            same_basis(&b, &p))
            ok++;
        else
            printf("  round trip failed: '%s' (%s)\n", text, err.msg);
        km_basis_format(&p, again, sizeof again);
        ok_again += strcmp(text, again) == 0;
        /* tabs and repeated blanks between the words, around the line */
        size_t k = 0;
        spaced[k++] = '\t';
        for (const char *c = text; *c; c++) {
            if (*c == ' ')
                spaced[k++] = '\t';
            spaced[k++] = *c;
        }
        spaced[k++] = ' ';
        spaced[k] = '\0';
        ok_spaces += km_basis_parse(spaced, n, &q, &err) == KM_OK && same_basis(&b, &q);
        free(b.feat);
        free(p.feat);
        free(q.feat);
    }
    CHECK(ok == trials, "format then parse gives the same kernel bit for bit (%d of %d)", ok,
          trials);
    CHECK(ok_again == trials, "formatting the parsed kernel gives the same text (%d of %d)",
          ok_again, trials);
    CHECK(ok_spaces == trials, "tabs and blanks between words are accepted (%d of %d)",
          ok_spaces, trials);

    km_basis b = {{KM_KERNEL_RBF, 0.1, 0, 3, 0}, 0, NULL};
    int32_t feat[] = {0, 1, 2, 4, 6, 7};
    b.feat = feat;
    b.nfeat = 6;
    int need = km_basis_format(&b, text, sizeof text);
    CHECK(strcmp(text, "rbf gamma=0.1 features=1-3,5,7-8") == 0,
          "format writes ranges and the shortest round-trip number (got '%s')", text);
    char small[10];
    int need2 = km_basis_format(&b, small, sizeof small);
    CHECK(need2 == need && need == (int)strlen(text) && strlen(small) == 9 &&
          strncmp(small, text, 9) == 0, "format follows the snprintf convention (%d)", need2);
    CHECK(km_basis_format(&b, NULL, 0) == need, "format with no buffer returns the length");
}

static void test_parse(void)
{
    km_error err;
    km_basis b;
    CHECK(km_basis_parse("rbf", 5, &b, &err) == KM_OK && b.kernel.type == KM_KERNEL_RBF &&
          b.kernel.gamma == 1 && b.nfeat == 0 && !b.feat, "defaults: gamma 1, all features");
    CHECK(km_basis_parse("Polynomial", 5, &b, &err) == KM_OK && b.kernel.type == KM_KERNEL_POLY
          && b.kernel.gamma == 1 && b.kernel.coef0 == 0 && b.kernel.degree == 3,
          "defaults: poly gamma 1 coef0 0 degree 3, names in any case");
    CHECK(km_basis_parse("2 gamma=0.25 features=all", 5, &b, &err) == KM_OK &&
          b.kernel.type == KM_KERNEL_RBF && b.kernel.gamma == 0.25 && b.nfeat == 0,
          "svm-train kernel numbers are accepted");
    CHECK(km_basis_parse("linear features=9-10,1,5-6", 10, &b, &err) == KM_OK &&
          b.nfeat == 5 && b.feat[0] == 0 && b.feat[1] == 4 && b.feat[2] == 5 && b.feat[3] == 8
          && b.feat[4] == 9, "unordered ranges are sorted, 0-based");
    free(b.feat);
    CHECK(km_basis_parse("poly gamma=2e-3 coef0=-1.5 degree=7 features=4", 4, &b, &err) ==
          KM_OK && b.kernel.gamma == 2e-3 && b.kernel.coef0 == -1.5 && b.kernel.degree == 7 &&
          b.nfeat == 1 && b.feat[0] == 3, "all poly parameters and a single feature");
    free(b.feat);
    CHECK(km_basis_parse("spline features=3", 5, &b, &err) == KM_OK && b.nfeat == 1,
          "spline on one feature of many");
    free(b.feat);

    struct { const char *text; int32_t n; const char *want; } bad[] = {
        {"", 5, "empty kernel"},
        {"   \t ", 5, "empty kernel"},
        {"rbg gamma=1", 5, "unknown kernel 'rbg'"},
        {"4", 5, "unknown kernel '4'"},
        {"averyveryverylongkernelname", 5, "unknown kernel"},
        {"rbf gamma", 5, "expected KEY=VALUE"},
        {"rbf sigma=1", 5, "unknown parameter 'sigma'"},
        {"rbf gamma=1 gamma=2", 5, "gamma given twice"},
        {"rbf features=1 features=2", 5, "features given twice"},
        {"rbf degree=2", 5, "the rbf kernel has no parameter degree"},
        {"linear gamma=1", 5, "the linear kernel has no parameter gamma"},
        {"laplacian coef0=1", 5, "no parameter coef0"},
        {"rbf gamma=abc", 5, "gamma=abc: expected a finite number"},
        {"rbf gamma=1x", 5, "gamma=1x: expected a finite number"},
        {"rbf gamma=", 5, "gamma=: expected a finite number"},
        {"rbf gamma=nan", 5, "gamma=nan: expected a finite number"},
        {"rbf gamma=inf", 5, "expected a finite number"},
        {"rbf gamma=1e999", 5, "expected a finite number"},
        {"poly coef0=-infinity", 5, "coef0=-infinity: expected a finite number"},
        {"rbf gamma=0", 5, "gamma must be a positive number"},
        {"rbf gamma=-1", 5, "gamma must be a positive number"},
        {"poly degree=0", 5, "degree=0: expected an integer in 1..1000"},
        {"poly degree=1.5", 5, "degree=1.5: expected an integer"},
        {"poly degree=-2", 5, "degree=-2: expected an integer"},
        {"poly degree=1001", 5, "degree=1001: expected an integer in 1..1000"},
        {"rbf features=0", 5, "index 0 (feature indices start at 1)"},
        {"rbf features=0-3", 5, "index 0"},
        {"rbf features=6", 5, "index 6 exceeds the number of features (5)"},
        {"rbf features=2-6", 5, "index 6 exceeds"},
        {"rbf features=99999999999999999999", 5, "exceeds the number of features"},
        {"rbf features=1,2,2", 5, "feature 2 listed twice"},
        {"rbf features=1-3,3-4", 5, "feature 3 listed twice"},
        {"rbf features=4,1-5", 5, "feature 4 listed twice"},
        {"rbf features=5-3", 5, "decreasing range 5-3"},
        {"rbf features=", 5, "features=: expected 'all' or indices"},
        {"rbf features=1,", 5, "expected 'all' or indices"},
        {"rbf features=,1", 5, "expected 'all' or indices"},
        {"rbf features=1,,2", 5, "expected 'all' or indices"},
        {"rbf features=1-", 5, "expected 'all' or indices"},
        {"rbf features=1-2-3", 5, "expected 'all' or indices"},
        {"rbf features=a", 5, "expected 'all' or indices"},
        {"rbf features=ALL", 5, "expected 'all' or indices"},
        {"rbf features=+1", 5, "expected 'all' or indices"},
        {"rbf features=1", 0, "index 1 exceeds the number of features (0)"},
        {"spline features=1-2", 5, "spline kernel: needs 1-D inputs"},
        {"spline", 3, "spline kernel: needs 1-D inputs"},
        /* issue 13 (tests/fuzz/regressions/fuzz_text): 8 GB for a 30-byte line */
        {"linear features=1-2147483647", INT32_MAX, "2147483647 features; a subset lists at "
         "most 16777216"},
        {"rbf features=1,3-16777218", INT32_MAX, "16777217 features; a subset lists at most"},
        {"rbf features=1,3-16777217", 5, "index 16777217 exceeds"},
    };
    int nbad = (int)(sizeof bad / sizeof *bad);
    for (int t = 0; t < nbad; t++) {
        km_basis q = {{KM_KERNEL_LINEAR, 1, 0, 3, 0}, 7, NULL};
        km_error_clear(&err);
        int rc = km_basis_parse(bad[t].text, bad[t].n, &q, &err);
        CHECK(rc == KM_EINPUT && err.code == KM_EINPUT && strstr(err.msg, bad[t].want) &&
              q.feat == NULL && q.nfeat == 0,
              "'%s' rejected with '%s' (got %d '%s')", bad[t].text, bad[t].want, rc, err.msg);
    }
}

static void test_sets(void)
{
    km_error err;
    km_basis_set set;
    double want_gamma[10];
    for (int t = 0; t < 10; t++)
        want_gamma[t] = pow(10, -3 + 6.0 * t / 9);
    CHECK(want_gamma[0] == 1e-3 && want_gamma[3] == 1e-1 && want_gamma[6] == 10 &&
          want_gamma[9] == 1e3, "paper gammas hit the decades exactly");
    for (int32_t n = 0; n <= 6; n += 3) {
        CHECK(km_basis_paper(n, &set, &err) == KM_OK && set.m == 13 * (n + 1),
              "paper set for n = %d has 13(n+1) = %d kernels (%d)", (int)n, 13 * (n + 1), set.m);
        int ok = 1;
        for (int k = 0; k < set.m; k++) {
            const km_basis *b = &set.b[k];
            int g = k / 13, t = k % 13;
            ok &= g == 0 ? b->nfeat == 0 && b->feat == NULL
                         : b->nfeat == 1 && b->feat[0] == g - 1;
            if (t < 3)
                ok &= b->kernel.type == KM_KERNEL_POLY && b->kernel.gamma == 1 &&
                      b->kernel.coef0 == 1 && b->kernel.degree == t + 1;
            else
                ok &= b->kernel.type == KM_KERNEL_RBF && b->kernel.gamma == want_gamma[t - 3];
            ok &= km_kernel_check(&b->kernel, b->nfeat ? b->nfeat : n, &err) == KM_OK;
        }
        CHECK(ok, "paper set for n = %d: all features then each feature, (1+x'y)^1..3 then "
              "rbf 1e-3..1e3", (int)n);
        char text[256], want[64];
        km_basis_format(&set.b[set.m - 1], text, sizeof text);
        snprintf(want, sizeof want, n ? "rbf gamma=1000 features=%d" : "rbf gamma=1000 "
                 "features=all", (int)n);
        CHECK(strcmp(text, want) == 0, "last paper kernel is '%s' (got '%s')", want, text);
        km_basis_set_free(&set);
        CHECK(set.m == 0 && set.b == NULL, "km_basis_set_free empties the set");
    }
    CHECK(km_basis_paper(-1, &set, &err) == KM_EUSAGE && set.m == 0, "paper set: n < 0 rejected");
    CHECK(km_basis_paper(INT32_MAX, &set, &err) == KM_EUSAGE && set.m == 0,
          "paper set: 13(n+1) overflowing an int rejected");
    CHECK(km_basis_linear(7, &set, &err) == KM_OK && set.m == 7, "linear set has n kernels");
    int ok = 1;
    for (int k = 0; k < set.m; k++)
        ok &= set.b[k].kernel.type == KM_KERNEL_LINEAR && set.b[k].nfeat == 1 &&
              set.b[k].feat[0] == k;
    CHECK(ok, "linear set: x^k y^k for k = 1..n in order");
    km_basis_set_free(&set);
    CHECK(km_basis_linear(0, &set, &err) == KM_EINPUT && strstr(err.msg, "no features"),
          "linear set of no features rejected");
    km_basis_set_free(NULL);
}

/* Row i of P restricted to b's features and re-indexed, by hand (features >= limit dropped
 * for all-features kernels). Returns the count. */
static int64_t project_row(const km_basis *b, const km_problem *P, int64_t i, int32_t *ix,
                           double *vx)
{
    int64_t k = 0;
    for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++) {
        if (b->nfeat == 0) {
            ix[k] = P->index[t];
            vx[k++] = P->value[t];
            continue;
        }
        for (int32_t s = 0; s < b->nfeat; s++)
            if (b->feat[s] == P->index[t]) {
                ix[k] = s;
                vx[k++] = P->value[t];
            }
    }
    return k;
}

static double sq(const double *v, int64_t n)
{
    double s = 0;
    for (int64_t t = 0; t < n; t++)
        s += v[t] * v[t];
    return s;
}

static void test_eval(void)
{
    km_rng r;
    km_rng_seed(&r, 5);
    int same = 0, count = 0, types = 0;
    for (int rep = 0; rep < 40; rep++) {
        int32_t n = 1 + (int32_t)km_rng_below(&r, 30);
        km_problem *P = random_problem(12, n, 0.2 + 0.8 * unif(&r), 0, 100 + (uint64_t)rep);
        int32_t *ix = malloc((size_t)n * sizeof *ix), *iy = malloc((size_t)n * sizeof *iy);
        double *vx = malloc((size_t)n * sizeof *vx), *vy = malloc((size_t)n * sizeof *vy);
        for (int kk = 0; kk < 10; kk++) {
            km_basis b = random_basis(&r, n);
            b.kernel.gamma = b.kernel.type == KM_KERNEL_EXPDOT || b.kernel.type ==
                             KM_KERNEL_POLY ? 0.3 : unif(&r) * 2 + 0.01;   /* values in range */
            b.kernel.coef0 = unif(&r) - 0.5;
            b.kernel.degree = 1 + (int)km_rng_below(&r, 4);
            types |= 1 << b.kernel.type;
            for (int64_t i = 0; i < P->l; i++)
                for (int64_t j = 0; j < P->l; j++) {
                    int64_t nx = project_row(&b, P, i, ix, vx), ny = project_row(&b, P, j, iy, vy);
                    double want = km_kernel_eval(&b.kernel, ix, vx, nx, sq(vx, nx), iy, vy, ny,
                                                 sq(vy, ny));
                    int64_t pi = P->row_ptr[i], pj = P->row_ptr[j];
                    double got = km_basis_eval(&b, P->index + pi, P->value + pi,
                                               P->row_ptr[i + 1] - pi, P->index + pj,
                                               P->value + pj, P->row_ptr[j + 1] - pj);
                    same += memcmp(&got, &want, sizeof got) == 0;
                    count++;
                }
            free(b.feat);
        }
        free(ix);
        free(iy);
        free(vx);
        free(vy);
        km_problem_free(P);
    }
    CHECK(types == (1 << KM_KERNEL_COUNT) - 1, "every kernel type was evaluated");
    CHECK(same == count, "km_basis_eval gives the bits of km_kernel_eval on rows projected by "
          "hand (%d of %d)", same, count);

    /* a hand-made case: rbf on features {2, 4} of x = (1, 2, 3, 4), y = (0, 5, 1, 1) */
    km_basis b = {{KM_KERNEL_RBF, 0.5, 0, 3, 0}, 2, (int32_t[]){1, 3}};
    int32_t ia[] = {0, 1, 2, 3}, ib[] = {1, 2, 3};
    double va[] = {1, 2, 3, 4}, vb[] = {5, 1, 1};
    CHECK_CLOSE(km_basis_eval(&b, ia, va, 4, ib, vb, 3), exp(-0.5 * (9 + 9)), 1e-15,
                "rbf on a subset uses the subset's distance only");
    b.kernel.type = KM_KERNEL_LAPLACIAN;
    CHECK_CLOSE(km_basis_eval(&b, ia, va, 4, ib, vb, 3), exp(-0.5 * (3 + 3)), 1e-15,
                "laplacian on a subset");
    b.kernel.type = KM_KERNEL_LINEAR;
    CHECK(km_basis_eval(&b, ia, va, 4, ib, vb, 3) == 2 * 5 + 4 * 1, "linear on a subset");
}

static void test_project(void)
{
    km_error err;
    km_rng r;
    km_rng_seed(&r, 9);
    int ok = 1, reps = 60;
    for (int rep = 0; rep < reps; rep++) {
        int32_t n = 1 + (int32_t)km_rng_below(&r, 40);
        int64_t l = (int64_t)km_rng_below(&r, 30);
        km_problem *P = random_problem(l, n, unif(&r), 0, 300 + (uint64_t)rep);
        km_basis b = random_basis(&r, n);
        int64_t nrows = l ? (int64_t)km_rng_below(&r, (uint64_t)(2 * l)) : 0;
        int64_t *rows = malloc((size_t)(nrows + 1) * sizeof *rows);
        for (int64_t a = 0; a < nrows; a++)
            rows[a] = (int64_t)km_rng_below(&r, (uint64_t)l);   /* repeats allowed */
        int use_rows = rep % 2;
        km_problem *Q = km_basis_project(&b, P, use_rows ? rows : NULL, nrows, &err);
        int64_t want_l = use_rows ? nrows : l;
        int32_t *ix = malloc((size_t)n * sizeof *ix);
        double *vx = malloc((size_t)n * sizeof *vx);
        int good = Q && Q->l == want_l && Q->n == (b.nfeat ? b.nfeat : n) && Q->qid == NULL &&
                   Q->row_ptr[0] == 0 && Q->row_ptr[Q->l] == Q->nnz;
        for (int64_t a = 0; good && a < want_l; a++) {
            int64_t i = use_rows ? rows[a] : a, k = project_row(&b, P, i, ix, vx);
            int64_t s = Q->row_ptr[a];
            good = Q->row_ptr[a + 1] - s == k && Q->y[a] == P->y[i] &&
                   memcmp(Q->index + s, ix, (size_t)k * sizeof *ix) == 0 &&
                   memcmp(Q->value + s, vx, (size_t)k * sizeof *vx) == 0;
            for (int64_t t = s; good && t < Q->row_ptr[a + 1]; t++)
                good = Q->index[t] >= 0 && Q->index[t] < Q->n &&
                       (t == s || Q->index[t] > Q->index[t - 1]);
        }
        if (!good)
            printf("  projection %d differs\n", rep);
        ok &= good;
        km_problem_free(Q);
        free(ix);
        free(vx);
        free(rows);
        free(b.feat);
        km_problem_free(P);
    }
    CHECK(ok, "projection keeps the subset's entries, re-indexed 0..nfeat-1, and y (%d random "
          "problems, row lists with repeats)", reps);
    km_problem *P = random_problem(3, 4, 1, 0, 1);
    km_basis b = {{KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0, NULL};
    int64_t rows[] = {0, 3};
    CHECK(km_basis_project(&b, P, rows, 2, &err) == NULL && err.code == KM_EUSAGE &&
          strstr(err.msg, "row 3 out of range"), "projection: a row out of range is refused");
    km_problem_free(P);
    /* rows without entries and no arrays at all (a prediction block of empty rows): no
     * NULL + 0 (issue 13 item 10; clang -fsanitize=undefined sees it) */
    int64_t rp[3] = {0, 0, 0};
    double y2[2] = {1, -1};
    km_problem E = {2, 0, 5, rp, NULL, NULL, y2, 0, NULL, NULL};
    int32_t f2[2] = {1, 3};
    km_basis sub = {{KM_KERNEL_RBF, 1, 0, 3, 0}, 2, f2};
    for (int t = 0; t < 2; t++) {
        km_problem *Q = km_basis_project(t ? &sub : &b, &E, NULL, 0, &err);
        CHECK(Q && Q->l == 2 && Q->nnz == 0 && Q->row_ptr[2] == 0 && Q->y[1] == -1,
              "projection of empty rows without arrays (%s)", t ? "a subset" : "all features");
        km_problem_free(Q);
    }
}

/* Writes text to path. */
static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_list(void)
{
    char dir[] = "/tmp/kmtk-basis-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    char path[256];
    snprintf(path, sizeof path, "%s/kernels.txt", dir);
    km_error err;
    km_basis_set set;
    put(path, "# basis kernels\n\nrbf gamma=0.5 features=all\r\n  # indented comment\n"
              "\tpoly degree=2 coef0=1 features=2-3\n   \nlinear features=4\n");
    int rc = km_basis_read_list(path, 4, &set, &err);
    CHECK(rc == KM_OK && set.m == 3 && set.b[0].kernel.type == KM_KERNEL_RBF &&
          set.b[0].kernel.gamma == 0.5 && set.b[0].nfeat == 0 &&
          set.b[1].kernel.type == KM_KERNEL_POLY && set.b[1].kernel.degree == 2 &&
          set.b[1].nfeat == 2 && set.b[1].feat[0] == 1 && set.b[2].nfeat == 1 &&
          set.b[2].feat[0] == 3, "kernel list read, comments, blank lines and CRLF skipped (%s)",
          rc ? err.msg : "");
    km_basis_set_free(&set);
    struct { const char *text; const char *want; } bad[] = {
        {"rbf\nrbf features=5\n", ":2: features=5: index 5 exceeds the number of features (4)"},
        {"# only comments\n\n", ": no basis kernels"},
        {"", ": no basis kernels"},
        {"rbf\n\n\nsvm\n", ":4: unknown kernel 'svm'"},
        {"rbf gamma=1\nrbf gamma=nan\n", ":2: gamma=nan: expected a finite number"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        put(path, bad[t].text);
        rc = km_basis_read_list(path, 4, &set, &err);
        CHECK(rc == KM_EINPUT && set.m == 0 && set.b == NULL && strstr(err.msg, path) &&
              strstr(err.msg, bad[t].want), "kernel list %zu rejected with '%s' (got '%s')", t,
              bad[t].want, err.msg);
    }
    /* a longer list to exercise growth */
    FILE *f = fopen(path, "w");
    for (int k = 0; k < 100; k++)
        fprintf(f, "rbf gamma=%d features=%d\n", k + 1, k % 4 + 1);
    fclose(f);
    rc = km_basis_read_list(path, 4, &set, &err);
    int ok = rc == KM_OK && set.m == 100;
    for (int k = 0; ok && k < 100; k++)
        ok = set.b[k].kernel.gamma == k + 1 && set.b[k].feat[0] == k % 4;
    CHECK(ok, "100 kernels read in order");
    km_basis_set_free(&set);
    unlink(path);
    rc = km_basis_read_list(path, 4, &set, &err);
    CHECK(rc == KM_EINPUT && strstr(err.msg, path) && strstr(err.msg, "No such file"),
          "missing kernel list reported (%s)", err.msg);
    rmdir(dir);
}

int main(void)
{
    test_round_trip();
    test_parse();
    test_sets();
    test_eval();
    test_project();
    test_list();
    TEST_EXIT();
}
