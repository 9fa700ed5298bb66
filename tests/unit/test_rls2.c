/* test_rls2.c - the kernel bank against dense kernel matrices, the simplex sub-solver
 * against enumeration, Algorithm 3 against an independent minimisation of (4.3), linear
 * RLS2 against the scaled-l1 problem (4.9), warm against cold starts, the path driver. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>
#include <lapacke.h>

#include "basis.h"
#include "blas.h"
#include "kbank.h"
#include "rls2.h"
#include "rls2path.h"
#include "rls2_ref.h"
#include "test.h"
#include "testutil.h"

/* A dense problem whose features take few distinct values (so groups compress), some
 * continuous, one constant. y = a sparse combination + noise. */
static km_problem *toy(int64_t l, int32_t n, uint64_t seed, int classify)
{
    km_rng r;
    km_rng_seed(&r, seed);
    km_problem *P = problem_alloc(l, n, l * n);
    int64_t q = 0;
    for (int64_t i = 0; i < l; i++) {
        double z = 0;
        for (int32_t j = 0; j < n; j++) {
            double v = j % 3 == 0 ? floor(4 * unif(&r)) / 2   /* 4 values, 0 among them */
                     : j % 3 == 1 ? 2 * unif(&r) - 1          /* continuous */
                                  : (j == 2 ? 0.5 : (unif(&r) < 0.5)); /* constant, binary */
            if (j == 1 || j == 3)
                z += (j == 1 ? 1.5 : -1) * v;
            if (v != 0) {
                P->index[q] = j;
                P->value[q++] = v;
            }
        }
        P->row_ptr[i + 1] = q;
        double noise = 0.2 * (2 * unif(&r) - 1);
        P->y[i] = classify ? (z + noise > 0 ? 1 : -1) : z + noise;
    }
    P->nnz = q;
    return P;
}

/* Dense K~^k over rows[0..n) x cols[0..nc) (all rows when NULL), by km_basis_eval. */
static double *dense_kernel(const km_basis *b, const km_problem *P, const int64_t *rows,
                            int64_t n, const int64_t *cols, int64_t nc)
{
    double *K = malloc((size_t)(n * nc) * sizeof *K);
    for (int64_t a = 0; a < n; a++)
        for (int64_t c = 0; c < nc; c++) {
            int64_t i = rows ? rows[a] : a, j = cols ? cols[c] : c;
            const int64_t *rp = P->row_ptr;
            K[a + c * n] = km_basis_eval(b, P->index + rp[i], P->value + rp[i], rp[i + 1] - rp[i],
                                         P->index + rp[j], P->value + rp[j], rp[j + 1] - rp[j]);
        }
    return K;
}

static double maxabs(const double *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

static void test_bank(void)
{
    km_error err = {0};
    km_problem *P = toy(40, 6, 7, 0);
    km_basis_set set;
    CHECK(km_basis_paper(P->n, &set, &err) == KM_OK && set.m == 13 * 7, "paper set: 13(n+1)");
    km_kbank *B = km_kbank_new(P, &set, 2, &err);
    CHECK(B != NULL, "bank built: %s", err.msg);
    int64_t doubles;
    int dense, factored;
    km_kbank_stats(B, &doubles, &dense, &factored);
    CHECK(factored > 0 && dense > 0 && doubles < 91 * 40 * 40 / 2,
          "structure used: %d dense, %d factored, %lld doubles (dense would be %d)", dense,
          factored, (long long)doubles, 91 * 1600);
    int64_t l = P->l;
    int m = set.m;
    double *c = malloc((size_t)l * sizeof *c), *V = malloc((size_t)(l * m) * sizeof *V);
    km_rng r;
    km_rng_seed(&r, 3);
    for (int64_t i = 0; i < l; i++)
        c[i] = 2 * unif(&r) - 1;
    CHECK(km_kbank_products(B, c, NULL, V, 2, &err) == KM_OK, "products");
    double worst = 0;
    double *v = malloc((size_t)l * sizeof *v);
    double **Kd = malloc((size_t)m * sizeof *Kd);
    for (int k = 0; k < m; k++) {
        Kd[k] = dense_kernel(&set.b[k], P, NULL, l, NULL, l);
        cblas_dgemv(CblasColMajor, CblasNoTrans, (blasint)l, (blasint)l, 1, Kd[k], (blasint)l,
                    c, 1, 0, v, 1);
        for (int64_t i = 0; i < l; i++)
            v[i] -= V[k * l + i];
        double e = maxabs(v, l) / (1e-300 + maxabs(V + k * l, l));
        worst = e > worst ? e : worst;
    }
    CHECK(worst < 1e-11, "K~^k c of every kernel (dense, factored, exact) = dense product "
          "(worst relative error %.2g)", worst);

    /* combine */
    double *w = calloc((size_t)m, sizeof *w);
    for (int k = 0; k < m; k += 7)
        w[k] = unif(&r);
    double *K = calloc((size_t)(l * l), sizeof *K), *Kref = calloc((size_t)(l * l), sizeof *K);
    km_kbank_combine(B, w, K, &err);
    for (int k = 0; k < m; k++)
        if (w[k])
            cblas_daxpy((blasint)(l * l), w[k], Kd[k], 1, Kref, 1);
    for (int64_t j = 0; j < l; j++)
        for (int64_t i = 0; i < l; i++)
            K[i + j * l] = i <= j ? K[i + j * l] - Kref[i + j * l] : 0;
    CHECK(maxabs(K, l * l) < 1e-11 * maxabs(Kref, l * l),
          "sum_k w_k K~^k = dense sum, upper triangle (%.2g)", maxabs(K, l * l));

    /* slice (with a repeated row) and cross products */
    int64_t rows[15], out[10];
    for (int t = 0; t < 15; t++)
        rows[t] = (t * 7 + 3) % l;
    rows[14] = rows[2];
    for (int t = 0; t < 10; t++)
        out[t] = (t * 11 + 1) % l;
    km_kbank *S = km_kbank_slice(B, rows, 15, &err);
    CHECK(S && km_kbank_rows(S) == 15, "slice");
    double *Vs = malloc((size_t)(15 * m) * sizeof *Vs), o[10], oref[10];
    km_kbank_products(S, c, NULL, Vs, 1, &err);
    worst = 0;
    double werr = 0;
    for (int k = 0; k < m; k++) {
        double *Ks = dense_kernel(&set.b[k], P, rows, 15, rows, 15);
        cblas_dgemv(CblasColMajor, CblasNoTrans, 15, 15, 1, Ks, 15, c, 1, 0, v, 1);
        for (int t = 0; t < 15; t++)
            v[t] -= Vs[k * 15 + t];
        double e = maxabs(v, 15) / (1e-300 + maxabs(Vs + k * 15, 15));
        worst = e > worst ? e : worst;
        free(Ks);
    }
    CHECK(worst < 1e-11, "slice products = dense submatrix products (%.2g)", worst);
    /* all rows in order: a slice sharing B's matrices, the same products bit for bit */
    {
        int64_t *all = malloc((size_t)l * sizeof *all);
        double *V1 = malloc((size_t)(l * m) * sizeof *V1), *V2 = malloc((size_t)(l * m) * sizeof *V2);
        for (int64_t i = 0; i < l; i++)
            all[i] = i;
        km_kbank *Wb = km_kbank_slice(B, all, l, &err);
        km_kbank_products(B, c, NULL, V1, 1, &err);
        if (Wb)
            km_kbank_products(Wb, c, NULL, V2, 1, &err);
        /* bit for bit but for the factors of too high a rank on few values, which a slice
         * makes dense (rounding) */
        int same = 0;
        double e = 0;
        for (int k = 0; k < m; k++) {
            same += !memcmp(V1 + k * l, V2 + k * l, (size_t)l * sizeof *V1);
            for (int64_t i = 0; i < l; i++)
                e = fmax(e, fabs(V1[k * l + i] - V2[k * l + i]) /
                                (1e-300 + maxabs(V1 + k * l, l)));
        }
        CHECK(Wb && km_kbank_rows(Wb) == l && 2 * same > m && e < 1e-13,
              "slice of all rows in order: %d of %d kernels' products the same bits (the "
              "rest: %.2g)", same, m, e);
        km_kbank_free(Wb);
        free(all);
        free(V1);
        free(V2);
    }
    km_kbank_cross(B, out, 10, rows, 15, w, c, o, &err);
    memset(oref, 0, sizeof oref);
    for (int k = 0; k < m; k++) {
        if (!w[k])
            continue;
        double *Kc = dense_kernel(&set.b[k], P, out, 10, rows, 15);
        cblas_dgemv(CblasColMajor, CblasNoTrans, 10, 15, w[k], Kc, 10, c, 1, 1, oref, 1);
        free(Kc);
    }
    for (int t = 0; t < 10; t++)
        werr = fmax(werr, fabs(o[t] - oref[t]));
    CHECK(werr < 1e-11 * maxabs(oref, 10), "cross products = dense block product (%.2g)", werr);

    /* scales against their definitions on the dense matrices */
    double *s = malloc((size_t)m * sizeof *s), *y = malloc((size_t)l * sizeof *y);
    for (int64_t i = 0; i < l; i++)
        y[i] = i % 3 ? 1 : -1;
    double e_tr = 0, e_ce = 0, e_cl = 0;
    int z_tr, z_ce, z_cl;
    km_kbank_scales(B, KM_SCALE_TRACE, 0, NULL, l, NULL, s, &z_tr, &err);
    for (int k = 0; k < m; k++) {
        double tr = 0;
        for (int64_t i = 0; i < l; i++)
            tr += Kd[k][i + i * l];
        if (s[k] > 0)
            e_tr = fmax(e_tr, fabs(s[k] * tr - 1));
    }
    km_kbank_scales(B, KM_SCALE_TRACE, 1, NULL, l, NULL, s, &z_ce, &err);
    for (int k = 0; k < m; k++) {
        double tr = 0, all = 0;
        for (int64_t i = 0; i < l; i++) {
            tr += Kd[k][i + i * l];
            for (int64_t j = 0; j < l; j++)
                all += Kd[k][i + j * l];
        }
        if (s[k] > 0)
            e_ce = fmax(e_ce, fabs(s[k] * (tr - all / l) - 1));
    }
    km_kbank_scales(B, KM_SCALE_CLASS, 0, NULL, l, y, s, &z_cl, &err);
    for (int k = 0; k < m; k++) {
        double var[2] = {0, 0};
        for (int side = 0; side < 2; side++) {
            double cnt = 0, dg = 0, all = 0;
            for (int64_t i = 0; i < l; i++) {
                if ((y[i] > 0) != side)
                    continue;
                cnt++;
                dg += Kd[k][i + i * l];
                for (int64_t j = 0; j < l; j++)
                    if ((y[j] > 0) == side)
                        all += Kd[k][i + j * l];
            }
            var[side] = dg / cnt - all / (cnt * cnt);
        }
        if (s[k] > 0)
            e_cl = fmax(e_cl, fabs(s[k] * (var[0] + var[1]) - 1));
    }
    CHECK(e_tr < 1e-12 && e_ce < 1e-9 && e_cl < 1e-9,
          "scales: trace %.2g, centered trace %.2g, class %.2g (relative errors)", e_tr, e_ce,
          e_cl);
    /* feature 3 (index 2) is constant: linear and poly on it are not, but every Gaussian on
     * it is constant, so centered and class rules zero them out (10 each) */
    CHECK(z_tr == 0 && z_ce == 13 && z_cl == 13,
          "zero scales: trace %d, centered %d, class %d (constant feature: 13)", z_tr, z_ce,
          z_cl);

    for (int k = 0; k < m; k++)
        free(Kd[k]);
    free(Kd);
    free(c);
    free(V);
    free(v);
    free(w);
    free(K);
    free(Kref);
    free(Vs);
    free(s);
    free(y);
    km_kbank_free(S);
    km_kbank_free(B);
    km_basis_set_free(&set);
    km_problem_free(P);
}

/* The per-feature fast path: km_kernel_1d = km_kernel_eval on one-entry rows bit for bit,
 * for the paper set's kernels and the other types, on values with missing entries (0) and
 * magnitudes up to 40 (exp underflowing, through libm's range and below it); then a bank on
 * sparse columns with many distinct values (factors from the scratch, dense kernels made
 * once) against dense products by km_basis_eval, with one and two threads. */
static void test_bank_1d(void)
{
    km_rng r;
    km_rng_seed(&r, 11);
    int64_t n = 400;
    double *x = malloc((size_t)n * sizeof *x), *col = malloc((size_t)n * sizeof *col);
    for (int64_t a = 0; a < n; a++) {
        double t = unif(&r);
        x[a] = t < 0.3 ? 0 : (2 * unif(&r) - 1) * (t < 0.6 ? 1 : t < 0.9 ? 10 : 40);
    }
    km_basis_set set;
    km_error err = {0};
    km_basis_paper(1, &set, &err);
    km_kernel extra[] = {{KM_KERNEL_LINEAR, 1, 0, 1, 0},    {KM_KERNEL_POLY, 0.5, 2, 3, 0},
                         {KM_KERNEL_SIGMOID, 0.1, -1, 1, 0}, {KM_KERNEL_LAPLACIAN, 3, 0, 1, 0},
                         {KM_KERNEL_LAPLACIAN, 0.01, 0, 1, 0}, {KM_KERNEL_EXPDOT, 0.2, 0, 1, 0},
                         {KM_KERNEL_SPLINE, 1, 0, 1, 0},    {KM_KERNEL_RBF, 0.45, 0, 1, 0}};
    int nk = 13 + (int)(sizeof extra / sizeof extra[0]), bad = 0, types = 0, zeros = 0, subn = 0;
    for (int t = 0; t < nk; t++) {
        const km_kernel *k = t < 13 ? &set.b[t].kernel : &extra[t - 13];
        types |= 1 << k->type;
        for (int64_t b = 0; b < n; b++) {
            km_kernel_1d(k, x, n, x[b], col);
            int32_t zero = 0;
            for (int64_t a = 0; a < n; a++) {
                double want = km_kernel_eval(k, &zero, &x[a], x[a] != 0, x[a] * x[a], &zero,
                                             &x[b], x[b] != 0, x[b] * x[b]);
                if (memcmp(&want, &col[a], sizeof want)) {
                    if (bad++ < 3)
                        printf("  %s: K(%.17g, %.17g) = %.17g, km_kernel_eval %.17g\n",
                               km_kernel_name(k->type), x[a], x[b], col[a], want);
                }
                zeros += want == 0;
                subn += want != 0 && fabs(want) < DBL_MIN;
            }
        }
    }
    CHECK(bad == 0 && types == (1 << KM_KERNEL_COUNT) - 1 && zeros > 0 && subn > 0,
          "km_kernel_1d = km_kernel_eval bit for bit: %d kernels (the paper set's 13 and every "
          "type) x %lld^2 values, 30%% missing (%d differ; %d underflow to 0, %d subnormal)",
          nk, (long long)n, bad, zeros, subn);
    km_basis_set_free(&set);
    free(x);
    free(col);

    /* a bank on 300 rows x 4 sparse features (40% missing), continuous values */
    km_problem *P = random_problem(300, 4, 0.6, 0, 5);
    for (int64_t q = 0; q < P->nnz; q++)
        P->value[q] *= 3;
    CHECK(km_basis_paper(P->n, &set, &err) == KM_OK, "paper set on 4 features");
    int64_t l = P->l;
    int m = set.m;
    double *c = malloc((size_t)l * sizeof *c), *v = malloc((size_t)l * sizeof *v);
    double *V1 = malloc((size_t)(l * m) * sizeof *V1), *V2 = malloc((size_t)(l * m) * sizeof *V2);
    for (int64_t i = 0; i < l; i++)
        c[i] = 2 * unif(&r) - 1;
    km_kbank *B1 = km_kbank_new(P, &set, 1, &err), *B2 = km_kbank_new(P, &set, 2, &err);
    int64_t doubles;
    int dense = 0, factored = 0;
    if (B1)
        km_kbank_stats(B1, &doubles, &dense, &factored);
    CHECK(B1 && B2 && dense > 0 && factored > 0 &&
              km_kbank_products(B1, c, NULL, V1, 1, &err) == KM_OK &&
              km_kbank_products(B2, c, NULL, V2, 1, &err) == KM_OK,
          "banks built with 1 and 2 threads (%d dense, %d factored)", dense, factored);
    double worst = 0;
    for (int k = 0; k < m && B1 && B2; k++) {
        double *Kd = dense_kernel(&set.b[k], P, NULL, l, NULL, l);
        cblas_dgemv(CblasColMajor, CblasNoTrans, (blasint)l, (blasint)l, 1, Kd, (blasint)l, c,
                    1, 0, v, 1);
        for (int64_t i = 0; i < l; i++)
            v[i] -= V1[k * l + i];
        double e = maxabs(v, l) / (1e-300 + maxabs(V1 + k * l, l));
        worst = e > worst ? e : worst;
        free(Kd);
    }
    CHECK(worst < 1e-11, "sparse columns: K~^k c of all %d kernels = dense km_basis_eval "
          "product (worst relative error %.2g)", m, worst);
    CHECK(B1 && B2 && !memcmp(V1, V2, (size_t)(l * m) * sizeof *V1),
          "1 and 2 threads build the same bank (products bit for bit)");
    km_kbank_free(B1);
    km_kbank_free(B2);
    km_basis_set_free(&set);
    km_problem_free(P);
    free(c);
    free(v);
    free(V1);
    free(V2);
}

static void test_simplex(void)
{
    km_rng r;
    km_rng_seed(&r, 11);
    km_error err = {0};
    int worst_ok = 1;
    double worst = 0;
    for (int trial = 0; trial < 60; trial++) {
        int l = trial % 3 == 0 ? 3 : 9, m = 2 + trial % 8;
        double V[9 * 10], u[9], d[10], dref[10];
        for (int i = 0; i < l * m; i++)
            V[i] = 2 * unif(&r) - 1;
        if (trial % 5 == 0)
            memcpy(V + l, V, (size_t)l * sizeof *V); /* a repeated column */
        for (int i = 0; i < l; i++)
            u[i] = 2 * unif(&r) - 1;
        memset(d, 0, sizeof d);
        d[trial % m] = 1;
        int64_t steps;
        if (km_simplex_ls(V, l, m, u, NULL, NULL, 1e-13, d, NULL, &steps, &err) != KM_OK)
            worst_ok = 0;
        double fref = ref_simplex_ls(V, l, m, u, dref), f = ref_ls_value(V, l, m, u, d);
        double sum = 0;
        for (int k = 0; k < m; k++) {
            sum += d[k];
            worst_ok &= d[k] >= 0;
        }
        worst_ok &= fabs(sum - 1) < 1e-14;
        worst = fmax(worst, (f - fref) / fmax(1, fref));
    }
    CHECK(worst_ok && worst < 1e-11,
          "SMO on 60 random (4.4) problems (rank-deficient, repeated columns) = enumeration "
          "(worst excess %.2g)", worst);
    /* many kernels tied at the active set's cut (identical columns: more ties than room)
     * and the best one after them in index order: SMO must still reach optimality */
    {
        int l = 6, m = 400;
        double *V = malloc((size_t)(l * m) * sizeof *V), u[6], *d = calloc((size_t)m, sizeof *d);
        for (int k = 0; k < m; k++)
            for (int i = 0; i < l; i++)
                V[k * l + i] = k < 300 ? (i == 0 ? 1 : 0) : k == m - 1 ? (i == 1 ? 2 : 0)
                                                              : 0.1 * unif(&r);
        for (int i = 0; i < l; i++)
            u[i] = i < 2 ? 1.5 : 0;
        d[350] = 1;
        int64_t steps;
        int rc = km_simplex_ls(V, l, m, u, NULL, NULL, 1e-12, d, NULL, &steps, &err);
        double rr[6], g, gmin = INFINITY, gsup = -INFINITY;
        for (int i = 0; i < l; i++) {
            rr[i] = -u[i];
            for (int k = 0; k < m; k++)
                rr[i] += V[k * l + i] * d[k];
        }
        for (int k = 0; k < m; k++) {
            g = 0;
            for (int i = 0; i < l; i++)
                g += V[k * l + i] * rr[i];
            gmin = fmin(gmin, g);
            if (d[k] > 0)
                gsup = fmax(gsup, g);
        }
        CHECK(rc == KM_OK && gsup - gmin < 1e-9,
              "SMO with 300 tied columns: optimal (gap %.2g, %lld steps)", gsup - gmin,
              (long long)steps);
        free(V);
        free(d);
    }
}

/* Algorithm 3 run to (near) exact optimality: the default delta 1e-2 is the thesis' loose
 * test, far from optimal at small lambda. */
static km_rls2_param tight(void)
{
    km_rls2_param par;
    km_rls2_param_default(&par);
    par.delta = 1e-12;
    par.max_iter = 200000;
    par.smo_eps = 1e-14;
    return par;
}

/* Dense scaled kernels K^k = s_k K~^k of a bank's basis over P. */
static double **scaled_dense(const km_basis_set *set, const km_problem *P, const double *s)
{
    double **K = malloc((size_t)set->m * sizeof *K);
    for (int k = 0; k < set->m; k++) {
        K[k] = dense_kernel(&set->b[k], P, NULL, P->l, NULL, P->l);
        cblas_dscal((blasint)(P->l * P->l), s[k], K[k], 1);
    }
    return K;
}

static void test_algorithm3(void)
{
    km_error err = {0};
    km_problem *P = toy(30, 4, 21, 0);
    km_basis_set set;
    /* a small list: on all features and on single features */
    const char *spec[] = {"rbf gamma=0.5 features=all", "poly gamma=1 coef0=1 degree=2 features=all",
                          "linear features=1", "linear features=2", "rbf gamma=3 features=2",
                          "poly gamma=1 coef0=1 degree=3 features=4", "rbf gamma=0.1 features=1,4",
                          "laplacian gamma=1 features=2,3"};
    int m = (int)(sizeof spec / sizeof *spec);
    set.m = m;
    set.b = calloc((size_t)m, sizeof *set.b);
    for (int k = 0; k < m; k++)
        CHECK(km_basis_parse(spec[k], P->n, &set.b[k], &err) == KM_OK, "parse %s", spec[k]);
    km_kbank *B = km_kbank_new(P, &set, 1, &err);
    double s[8];
    int zero;
    km_kbank_scales(B, KM_SCALE_TRACE, 0, NULL, P->l, NULL, s, &zero, &err);
    double **K = scaled_dense(&set, P, s);
    km_rls2_param par = tight();
    km_rls2 *R = km_rls2_new(B, s, P->y, &par, &err);
    km_rls2 *Rc = km_rls2_new(B, s, P->y, &par, &err);
    double lambdas[] = {30, 3, 0.3, 0.03};
    double dref[8], cref[30];
    for (int t = 0; t < 4; t++) {
        km_rls2_info info, ic;
        int rc = km_rls2_solve(R, lambdas[t], &info, &err);
        double fref = ref_rls2((const double *const *)K, m, (int)P->l, P->y, lambdas[t], dref,
                               cref);
        /* f(d) of our d, evaluated independently */
        double cc[30], g[8];
        double f = ref_rls2_eval((const double *const *)K, m, (int)P->l, P->y, lambdas[t],
                                 km_rls2_d(R), cc, g);
        CHECK(rc == KM_OK && info.converged && fabs(f - fref) <= 1e-9 * fabs(fref),
              "lambda %g: y'c*(d)/2 = %.12g, reference %.12g (%d iterations)", lambdas[t], f,
              fref, info.iter);
        CHECK(fabs(info.objective - fref) <= 1e-8 * fabs(fref),
              "lambda %g: (4.1) at (c, d) = %.12g = optimum", lambdas[t], info.objective);
        CHECK(ref_simplex_kkt(g, km_rls2_d(R), m) <= 1e-7 * maxabs(g, m),
              "lambda %g: d is optimal for (4.3) (KKT gap %.2g)", lambdas[t],
              ref_simplex_kkt(g, km_rls2_d(R), m));
        /* the same from a cold start (Lemma 6) */
        km_rls2_restart(Rc);
        km_rls2_solve(Rc, lambdas[t], &ic, &err);
        double fc = ref_rls2_eval((const double *const *)K, m, (int)P->l, P->y, lambdas[t],
                                  km_rls2_d(Rc), cc, g);
        CHECK(fabs(fc - f) <= 1e-9 * fabs(f), "lambda %g: cold start %.12g = warm start",
              lambdas[t], fc);
        /* degrees of freedom = sum mu/(mu + lambda) over the eigenvalues of K(d) */
        double df, *Kd = calloc(900, sizeof *Kd), ev[30];
        for (int k = 0; k < m; k++)
            cblas_daxpy(900, km_rls2_d(R)[k], K[k], 1, Kd, 1);
        LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', 30, Kd, 30, ev);
        double dfref = 0;
        for (int i = 0; i < 30; i++)
            dfref += ev[i] / (ev[i] + lambdas[t]);
        km_rls2_dof(R, lambdas[t], &df, &err);
        CHECK(fabs(df - dfref) < 1e-8 * fmax(1, dfref), "lambda %g: dof %.10g = eigenvalue "
              "formula %.10g", lambdas[t], df, dfref);
        /* again, now from a new factorization (the first may reuse the solver's): the
         * same bits */
        double df2 = -1;
        km_rls2_dof(R, lambdas[t], &df2, &err);
        CHECK(df2 == df, "lambda %g: dof from a new factor %.17g = the first %.17g",
              lambdas[t], df2, df);
        free(Kd);
    }
    /* only the factored kernels (linear on features 1 and 2, the cubic on feature 4: rank
     * <= 6 <= l/4): the dof from the eigenvalues of F'F = the formula on dense K(d) */
    {
        double s2[8] = {0};
        s2[2] = s[2], s2[3] = s[3], s2[5] = s[5];
        km_rls2 *Rf = km_rls2_new(B, s2, P->y, &par, &err);
        for (int t = 0; t < 4 && Rf; t++) {
            km_rls2_info info;
            double df = -1, *Kd = calloc(900, sizeof *Kd), ev[30], dfref = 0;
            km_rls2_solve(Rf, lambdas[t], &info, &err);
            km_rls2_dof(Rf, lambdas[t], &df, &err);
            for (int k = 0; k < m; k++)
                cblas_daxpy(900, km_rls2_d(Rf)[k], K[k], 1, Kd, 1);
            LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', 30, Kd, 30, ev);
            for (int i = 0; i < 30; i++)
                dfref += ev[i] > 0 ? ev[i] / (ev[i] + lambdas[t]) : 0;
            CHECK(fabs(df - dfref) < 1e-10 * fmax(1, dfref),
                  "factored kernels only, lambda %g: dof %.12g = eigenvalue formula %.12g",
                  lambdas[t], df, dfref);
            free(Kd);
        }
        CHECK(Rf != NULL, "RLS2 on the factored kernels only");
        km_rls2_free(Rf);
    }
    /* Lemma 6: a huge lambda keeps the kernel with the largest alignment */
    double a[8];
    km_rls2_alignment(R, a, &err);
    int best = 0;
    for (int k = 1; k < m; k++)
        best = a[k] > a[best] ? k : best;
    km_rls2_restart(R);
    km_rls2_info info;
    km_rls2_solve(R, 1e9, &info, &err);
    CHECK(km_rls2_d(R)[best] == 1 && info.iter == 1,
          "lambda 1e9: d = e_%d (Lemma 6) after one iteration", best + 1);
    for (int k = 0; k < m; k++)
        free(K[k]);
    free(K);
    km_rls2_free(R);
    km_rls2_free(Rc);
    km_kbank_free(B);
    km_basis_set_free(&set);
    km_problem_free(P);
}

/* Linear RLS2 is the scaled-l1 problem (4.9) with w_k = d_k s_k z_k, z = X'c (Lemma 7). */
static void test_linear(void)
{
    km_error err = {0};
    km_problem *P = toy(25, 9, 5, 0);
    km_basis_set set;
    km_basis_linear(P->n, &set, &err);
    km_kbank *B = km_kbank_new(P, &set, 1, &err);
    int m = set.m, l = (int)P->l;
    double s[9];
    int zero;
    km_kbank_scales(B, KM_SCALE_TRACE, 0, NULL, l, NULL, s, &zero, &err);
    double X[25 * 9] = {0};
    for (int i = 0; i < l; i++)
        for (int64_t q = P->row_ptr[i]; q < P->row_ptr[i + 1]; q++)
            X[i + P->index[q] * l] = P->value[q];
    km_rls2_param par = tight();
    km_rls2 *R = km_rls2_new(B, s, P->y, &par, &err);
    double lambdas[] = {5, 0.5, 0.05};
    for (int t = 0; t < 3; t++) {
        km_rls2_info info;
        km_rls2_solve(R, lambdas[t], &info, &err);
        double w[9], wref[9], z[9], Xw[25];
        cblas_dgemv(CblasColMajor, CblasTrans, l, m, 1, X, l, km_rls2_c(R), 1, 0, z, 1);
        for (int k = 0; k < m; k++)
            w[k] = km_rls2_d(R)[k] * s[k] * z[k];
        double sf[9];
        for (int k = 0; k < m; k++)
            sf[k] = s[k] > 0 ? s[k] : 1;
        double Fref = ref_sql1(X, l, m, P->y, sf, lambdas[t], wref);
        double F = ref_sql1_objective(X, l, m, P->y, sf, lambdas[t], w);
        cblas_dgemv(CblasColMajor, CblasNoTrans, l, m, 1, X, l, w, 1, 0, Xw, 1);
        double e = 0;
        for (int i = 0; i < l; i++)
            e = fmax(e, fabs(Xw[i] - km_rls2_fit(R)[i]));
        CHECK(fabs(F - Fref) <= 1e-8 * Fref && fabs(info.objective - Fref) <= 1e-8 * Fref,
              "lambda %g: (4.9) at w = d s z is %.12g, optimum %.12g, RLS2 objective %.12g",
              lambdas[t], F, Fref, info.objective);
        CHECK(e < 1e-10, "lambda %g: X w = K(d) c (%.2g)", lambdas[t], e);
    }
    km_rls2_free(R);
    km_kbank_free(B);
    km_basis_set_free(&set);
    km_problem_free(P);
}

/* The solver km_rls2 picks for rank-one kernels (rls2lin.h) against Algorithm 3 run tight
 * (par.general) and the independent solver of (4.9): the same path. Features with few
 * values (their vectors gathered from the bank), continuous ones (read in place from the
 * bank's block), a constant one (s_k = 0 when centered), more features than rows (supports
 * up to l), 80 lambdas (more optimality checks than the remembered residuals: the history
 * restarts). Algorithm 3 crawls at small lambda: it is compared down to lambda 3e-3, the
 * reference (4.9) solver at the smallest lambdas. */
static void test_linear_solver(void)
{
    km_error err = {0};
    km_problem *P = toy(30, 45, 11, 0);
    km_basis_set set;
    km_basis_linear(P->n, &set, &err);
    km_kbank *A = km_kbank_new(P, &set, 1, &err);
    int64_t rows[30];
    for (int i = 0; i < 30; i++)
        rows[i] = i;
    /* training rows 0..23, in a shuffled order (a slice); 24..29 held out */
    for (int i = 0; i < 24; i++) {
        int64_t t = rows[i];
        rows[i] = rows[(i * 7) % 24];
        rows[(i * 7) % 24] = t;
    }
    int l = 24, m = set.m;
    km_kbank *B = km_kbank_slice(A, rows, l, &err);
    CHECK(km_kbank_rank_one(B), "a linear bank is rank one");
    /* the vectors: x^k x^k' = the dense kernel */
    const double **x = malloc((size_t)m * sizeof *x);
    double *own = NULL, worst = 0, X[24 * 45];
    CHECK(km_kbank_vectors(B, x, &own, &err) == KM_OK && own != NULL, "vectors: %s", err.msg);
    for (int k = 0; k < m; k++) {
        double *K = dense_kernel(&set.b[k], P, rows, l, rows, l);
        for (int i = 0; i < l; i++)
            for (int j = 0; j < l; j++)
                worst = fmax(worst, fabs(x[k][i] * x[k][j] - K[i + j * l]));
        free(K);
    }
    CHECK(worst < 1e-14, "x^k x^k' = K~^k on the slice's rows (%.2g)", worst);
    double s[45], y[24], ones[45];
    int zero;
    km_kbank_scales(B, KM_SCALE_TRACE, 1, NULL, l, NULL, s, &zero, &err);
    CHECK(zero == 1, "centered: the constant feature has scale 0");
    for (int i = 0; i < l; i++)
        y[i] = P->y[rows[i]];
    { /* Lemma 6's alignments y'K^k y = s_k y'K~^k y, against dense kernels */
        km_rls2_param p0;
        km_rls2_param_default(&p0);
        km_rls2 *R0 = km_rls2_new(B, s, y, &p0, &err);
        double al[45], ea = 0, Ky[24];
        km_rls2_alignment(R0, al, &err);
        for (int k = 0; k < m; k++) {
            if (s[k] == 0) {
                ea = fmax(ea, al[k] == -INFINITY ? 0 : 1);
                continue;
            }
            double *K = dense_kernel(&set.b[k], P, rows, l, rows, l);
            cblas_dgemv(CblasColMajor, CblasNoTrans, l, l, 1, K, l, y, 1, 0, Ky, 1);
            double ref = s[k] * cblas_ddot(l, y, 1, Ky, 1);
            ea = fmax(ea, fabs(al[k] - ref) / fmax(ref, 1e-300));
            free(K);
        }
        CHECK(ea < 1e-12, "alignments y'K^k y of the linear solver = dense (%.2g)", ea);
        km_rls2_free(R0);
    }
    for (int k = 0; k < m; k++) { /* (4.9) without the left-out kernel */
        ones[k] = 1;
        for (int i = 0; i < l; i++)
            X[i + k * l] = sqrt(s[k]) * x[k][i];
    }
    km_rls2_param par = tight(), gen = tight(), loose;
    gen.general = 1;
    km_rls2_param_default(&loose);
    km_rls2 *R = km_rls2_new(B, s, y, &par, &err), *G = km_rls2_new(B, s, y, &gen, &err);
    km_rls2 *D = km_rls2_new(B, s, y, &loose, &err), *C = km_rls2_new(B, s, y, &par, &err);
    double lambda[80];
    km_rls2_lambdas(1e-4, 1e2, 80, lambda);
    double eobj = 0, ed = 0, ec = 0, efit = 0, epred = 0, ecold = 0, eloose = 0, eref = 0;
    int64_t smo_lin = 0, smo_gen = 0;
    int conv = 1, maxk = 0;
    for (int t = 0; t < 80; t++) {
        km_rls2_info a, b, c3, d3;
        km_rls2_solve(R, lambda[t], &a, &err);
        km_rls2_solve(D, lambda[t], &d3, &err);
        conv &= a.converged && d3.converged;
        smo_lin += a.smo_steps;
        maxk = a.kernels > maxk ? a.kernels : maxk;
        eloose = fmax(eloose, (d3.objective - a.objective) / a.objective);
        if (t >= 70) {
            double w[45];
            double Fref = ref_sql1(X, l, m, y, ones, lambda[t], w);
            eref = fmax(eref, fabs(a.objective - Fref) / Fref);
        }
        if (t % 8 != 7)
            continue;
        km_rls2_restart(C);
        km_rls2_solve(C, lambda[t], &c3, &err);
        conv &= c3.converged;
        ecold = fmax(ecold, fabs(c3.objective - a.objective) / a.objective);
        if (lambda[t] < 3e-3)
            continue;
        km_rls2_solve(G, lambda[t], &b, &err);
        conv &= b.converged;
        smo_gen += b.smo_steps;
        eobj = fmax(eobj, fabs(a.objective - b.objective) / b.objective);
        const double *da = km_rls2_d(R), *db = km_rls2_d(G);
        for (int k = 0; k < m; k++)
            ed = fmax(ed, fabs(da[k] - db[k]));
        const double *ca = km_rls2_c(R), *cb = km_rls2_c(G);
        const double *fa = km_rls2_fit(R), *fb = km_rls2_fit(G);
        for (int i = 0; i < l; i++) {
            ec = fmax(ec, fabs(ca[i] - cb[i]) / maxabs(cb, l));
            efit = fmax(efit, fabs(fa[i] - fb[i]) / maxabs(fb, l));
        }
        /* predictions on the held-out rows from (d, s, c), as the model computes them */
        double wa[45], wb[45], pa[6], pb[6];
        for (int k = 0; k < m; k++) {
            wa[k] = da[k] * s[k];
            wb[k] = db[k] * s[k];
        }
        km_kbank_cross(A, rows + 24, 6, rows, l, wa, ca, pa, &err);
        km_kbank_cross(A, rows + 24, 6, rows, l, wb, cb, pb, &err);
        for (int i = 0; i < 6; i++)
            epred = fmax(epred, fabs(pa[i] - pb[i]) / maxabs(pb, 6));
    }
    CHECK(conv, "80 lambdas: every solve converged");
    CHECK(smo_lin == 0 && smo_gen > 0, "rank-one kernels: the linear solver was chosen (no "
          "SMO steps), Algorithm 3 with par.general (%lld)", (long long)smo_gen);
    CHECK(maxk >= 22, "supports up to %d kernels on %d rows", maxk, l);
    CHECK(eobj < 1e-9, "(4.1) = Algorithm 3's (worst relative difference %.2g)", eobj);
    CHECK(ed < 1e-6 && ec < 1e-6, "d and c = Algorithm 3's (worst %.2g, %.2g)", ed, ec);
    CHECK(efit < 1e-6 && epred < 1e-6, "training fit K(d)c and held-out predictions = "
          "Algorithm 3's (worst %.2g, %.2g)", efit, epred);
    CHECK(eref < 1e-9, "the 10 smallest lambdas: (4.1) = the reference optimum of (4.9) (worst "
          "%.2g)", eref);
    CHECK(ecold < 1e-12, "cold starts give the warm path (%.2g)", ecold);
    CHECK(eloose >= -1e-12 && eloose <= 1e-4, "default delta 1e-2: objective within delta^2 "
          "of the optimum (worst %.2g)", eloose);
    km_rls2_free(R);
    km_rls2_free(G);
    km_rls2_free(D);
    km_rls2_free(C);
    /* 8 rows: supports reach the rank at small lambda and kernels that are combinations of
     * the others get pivoted out */
    km_kbank *B8 = km_kbank_slice(A, rows, 8, &err);
    double X8[8 * 45], s8[45];
    km_kbank_scales(B8, KM_SCALE_TRACE, 0, NULL, 8, NULL, s8, &zero, &err);
    free(own);
    km_kbank_vectors(B8, x, &own, &err);
    for (int k = 0; k < m; k++)
        for (int i = 0; i < 8; i++)
            X8[i + k * 8] = s8[k] > 0 ? sqrt(s8[k]) * x[k][i] : 0;
    R = km_rls2_new(B8, s8, y, &par, &err);
    double e8 = 0;
    conv = 1;
    maxk = 0;
    for (int t = 0; t < 80; t++) {
        km_rls2_info a;
        km_rls2_solve(R, lambda[t], &a, &err);
        conv &= a.converged;
        maxk = a.kernels > maxk ? a.kernels : maxk;
        if (t % 10 == 9) {
            double w[45];
            double Fref = ref_sql1(X8, 8, m, y, ones, lambda[t], w);
            e8 = fmax(e8, fabs(a.objective - Fref) / Fref);
        }
    }
    CHECK(conv && maxk >= 7 && e8 < 1e-9, "8 rows, 45 kernels: every solve converged, supports "
          "up to %d, (4.1) = the reference optimum of (4.9) (worst %.2g)", maxk, e8);
    km_rls2_free(R);
    km_kbank_free(B8);
    free(x);
    free(own);
    km_kbank_free(A);
    km_kbank_free(B);
    km_basis_set_free(&set);
    km_problem_free(P);
}

/* The path driver: one-versus-all, cross-validation, the model, the table. */
static void test_path(void)
{
    km_error err = {0};
    km_problem *P = toy(60, 5, 9, 0);
    for (int64_t i = 0; i < P->l; i++) /* three classes */
        P->y[i] = P->y[i] < -0.5 ? 1 : P->y[i] < 0.5 ? 2 : 3;
    km_basis_set set;
    km_basis_paper(P->n, &set, &err);
    km_kbank *B = km_kbank_new(P, &set, 1, &err);
    int64_t rows[60];
    for (int i = 0; i < 60; i++)
        rows[i] = i;
    double lambda[8];
    km_rls2_lambdas(1e-3, 1e2, 8, lambda);
    km_rls2_setup S = {0};
    km_rls2_param_default(&S.solver);
    S.scale = KM_SCALE_TRACE;
    S.lambda = lambda;
    S.nl = 8;
    S.folds = 4;
    S.seed = 3;
    S.dof = 1;
    km_rls2_task T = {B, P->y, rows, 45, rows + 45, 15, 1};
    km_rls2_path p, q;
    CHECK(km_rls2_run(&T, &S, &p, &err) == KM_OK && p.nr_w == 3 && p.nr_class == 3,
          "three classes: one-versus-all (%s)", err.msg);
    CHECK(km_rls2_run(&T, &S, &q, &err) == KM_OK && !memcmp(p.d, q.d, sizeof(double) * 3 *
          (size_t)p.m) && p.row[2].valid == q.row[2].valid, "same seed, same path");
    int best = 0;
    for (int t = 1; t < 8; t++)
        best = p.row[t].valid > p.row[best].valid ? t : best;
    CHECK(p.chosen == best, "chosen = best validation accuracy (row %d)", best);
    S.one_se = 1;
    km_rls2_path_free(&q);
    km_rls2_run(&T, &S, &q, &err);
    CHECK(q.chosen <= best && q.row[q.chosen].valid >= p.row[best].valid - p.row[best].valid_se,
          "--one-se: row %d (lambda %g) within one se of the best", q.chosen, lambda[q.chosen]);
    km_model *model = NULL;
    CHECK(km_rls2_model(&p, &set, P, rows, &model, &err) == KM_OK, "model: %s", err.msg);
    char dir[] = "/tmp/kmtk-rls2-XXXXXX", path[128];
    mkdtemp(dir);
    snprintf(path, sizeof path, "%s/m", dir);
    km_model *back = NULL;
    CHECK(km_model_write(model, path, &err) == KM_OK && km_model_read(path, &back, &err) == KM_OK,
          "model round-trip");
    /* the model's test accuracy = the path's at the chosen lambda */
    double dec[15 * 3];
    km_model_decision_rows(back, P, rows + 45, 15, dec, 1, &err);
    int right = 0;
    for (int i = 0; i < 15; i++)
        right += km_model_predict_label(back, dec + 3 * i) == P->y[45 + i];
    CHECK(fabs(100.0 * right / 15 - p.row[p.chosen].test) < 1e-9,
          "predict on the test rows: %d/15 = the path's test accuracy %.4g", right,
          p.row[p.chosen].test);
    snprintf(path, sizeof path, "%s/p.csv", dir);
    CHECK(km_rls2_write_csv(&p, path, &err) == KM_OK, "csv written");
    FILE *f = fopen(path, "r");
    char line[1024];
    int lines = 0, chosen_rows = 0;
    while (f && fgets(line, sizeof line, f)) {
        lines++;
        double lam;
        if (lines > 1 && sscanf(line, "%lf", &lam) == 1) {
            CHECK(lam == p.row[lines - 2].lambda || fabs(lam / p.row[lines - 2].lambda - 1) < 1e-9,
                  "csv row %d lambda", lines - 1);
            chosen_rows += line[strlen(line) - 2] == '1';
        }
    }
    if (f)
        fclose(f);
    CHECK(lines == 9 && chosen_rows == 1, "csv: header + 8 rows, one chosen");
    unlink(path);
    snprintf(path, sizeof path, "%s/m", dir);
    unlink(path);
    rmdir(dir);
    km_model_free(model);
    km_model_free(back);
    km_rls2_path_free(&p);
    km_rls2_path_free(&q);
    km_kbank_free(B);
    km_basis_set_free(&set);
    km_problem_free(P);
}

int main(void)
{
    km_blas_threads(1); /* small matrices: BLAS threads only spin */
    test_bank();
    test_bank_1d();
    test_simplex();
    test_algorithm3();
    test_linear();
    test_linear_solver();
    test_path();
    TEST_EXIT();
}
