/* test_rls2_ref.c - proves the RLS2 reference solvers of tests/rls2_ref.h right: the
 * simplex least squares (4.4) against grids, random search and its KKT conditions; the
 * reduced problem (4.3) against random and vertex points, its KKT/Frank-Wolfe gaps, the
 * d-step (4.4) (Lemma 5) and the large-lambda vertex (Lemma 6); linear RLS2 against the
 * independently solved (4.9) (Lemma 7: equal optimal values, w_k = d_k s_k z_k). */
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "rls2_ref.h"
#include "test.h"
#include "testutil.h"

static double nrm(km_rng *r) { return km_rng_normal(r); }

/* A random point of the simplex: uniform (Dirichlet(1)) on a random face (all of it half
 * the time). */
static void rand_simplex(km_rng *r, int m, double *d)
{
    int face = unif(r) < .5;
    double s = 0;
    for (int k = 0; k < m; k++) {
        d[k] = (face && unif(r) < .5) ? 0 : -log(km_rng_uniform(r));
        s += d[k];
    }
    if (s == 0) {
        d[km_rng_below(r, (uint64_t)m)] = s = 1;
    }
    for (int k = 0; k < m; k++)
        d[k] /= s;
}

static int on_simplex(const double *d, int m)
{
    double s = 0;
    for (int k = 0; k < m; k++) {
        if (!(d[k] >= 0))
            return 0;
        s += d[k];
    }
    return fabs(s - 1) <= 1e-14;
}

/* ---------------------------------------------------------------- (4.4) */

/* Gradient 2V'(Vd - u) of ||Vd - u||^2, and the simplex KKT gap relative to max |g|. */
static double ls_kkt_rel(const double *V, int l, int m, const double *u, const double *d)
{
    double *r = malloc((size_t)l * sizeof *r), g[REF_SIMPLEX_LS_MAX_M], gs = 0;
    for (int i = 0; i < l; i++) {
        r[i] = -u[i];
        for (int k = 0; k < m; k++)
            r[i] += V[k * l + i] * d[k];
    }
    for (int k = 0; k < m; k++) {
        g[k] = 0;
        for (int i = 0; i < l; i++)
            g[k] += 2 * V[k * l + i] * r[i];
        gs = fmax(gs, fabs(g[k]));
    }
    free(r);
    return ref_simplex_kkt(g, d, m) / fmax(gs, 1e-300);
}

static void test_simplex_ls_grid(void)
{
    km_rng r;
    km_rng_seed(&r, 401);
    const int l = 5, m = 3, N = 300;
    double V[15], u[5], d[3], e[3], worst = 0, near = 0, kk = 0;
    int feas = 1, val = 1;
    for (int t = 0; t < 12; t++) {
        for (int i = 0; i < l * m; i++)
            V[i] = nrm(&r);
        for (int i = 0; i < l; i++)
            u[i] = 2 * nrm(&r);
        double best = ref_simplex_ls(V, l, m, u, d);
        feas &= on_simplex(d, m);
        val &= fabs(best - ref_ls_value(V, l, m, u, d)) <= 1e-14 * fmax(1, best);
        double gmin = INFINITY;
        for (int a = 0; a <= N; a++)
            for (int b = 0; a + b <= N; b++) {
                e[0] = (double)a / N;
                e[1] = (double)b / N;
                e[2] = (double)(N - a - b) / N;
                gmin = fmin(gmin, ref_ls_value(V, l, m, u, e));
            }
        worst = fmax(worst, (best - gmin) / fmax(1, gmin));
        near = fmax(near, (gmin - best) / fmax(1, best));
        kk = fmax(kk, ls_kkt_rel(V, l, m, u, d));
    }
    CHECK(feas && val, "simplex LS, m = 3: d on the simplex, returned value = ||Vd - u||^2");
    CHECK(worst <= 1e-13, "simplex LS, m = 3: never beaten on a grid of step 1/%d "
          "(max excess %.2g)", N, worst);
    CHECK(near <= 1e-3, "simplex LS, m = 3: the grid's best is within O(step) of it (%.2g)", near);
    CHECK(kk <= 1e-12, "simplex LS, m = 3: KKT gap / max|grad| = %.2g", kk);
}

static void test_simplex_ls_random(void)
{
    km_rng r;
    km_rng_seed(&r, 402);
    double worst = 0, kk = 0, pert = 0;
    int feas = 1, count = 0;
    for (int t = 0; t < 30; t++) {
        int m = 2 + (int)km_rng_below(&r, 7), l = 3 + (int)km_rng_below(&r, 8);
        int deg = t % 3 == 2;   /* degenerate: a repeated column and l may be < m */
        double *V = malloc((size_t)(l * m) * sizeof *V), *u = malloc((size_t)l * sizeof *u);
        double d[REF_SIMPLEX_LS_MAX_M], e[REF_SIMPLEX_LS_MAX_M], tmp[REF_SIMPLEX_LS_MAX_M];
        for (int i = 0; i < l * m; i++)
            V[i] = nrm(&r);
        if (deg)
            memcpy(V + (m - 1) * l, V, (size_t)l * sizeof *V);
        for (int i = 0; i < l; i++)
            u[i] = 2 * nrm(&r) + V[i];
        double best = ref_simplex_ls(V, l, m, u, d);
        feas &= on_simplex(d, m);
        kk = fmax(kk, ls_kkt_rel(V, l, m, u, d));
        for (int s = 0; s < 3000; s++) {
            rand_simplex(&r, m, e);
            worst = fmax(worst, (best - ref_ls_value(V, l, m, u, e)) / fmax(1, best));
        }
        for (int s = 0; s < 300; s++) {
            double eps = s % 2 ? 1e-3 : 1e-6;
            for (int k = 0; k < m; k++)
                e[k] = d[k] + eps * nrm(&r);
            ref_proj_simplex(e, m, e, tmp);
            pert = fmax(pert, (best - ref_ls_value(V, l, m, u, e)) / fmax(1, best));
        }
        count++;
        free(V); free(u);
    }
    CHECK(feas, "simplex LS: %d random problems (m = 2..8, some with l < m or a repeated "
          "column): d on the simplex", count);
    CHECK(worst <= 1e-13, "simplex LS: never beaten by 3000 random simplex points each "
          "(max excess %.2g)", worst);
    CHECK(pert <= 1e-13, "simplex LS: never beaten by projected perturbations of d "
          "(max excess %.2g)", pert);
    CHECK(kk <= 1e-11, "simplex LS: KKT gap / max|grad| = %.2g (optimality of a convex "
          "problem, ties included)", kk);
}

/* ---------------------------------------------------------------- (4.3) */

/* m random PSD kernels l x l: low-rank Gram matrices G G'/r and Gaussian RBF on 1-D points. */
static double **random_kernels(km_rng *r, int m, int l)
{
    double **K = malloc((size_t)m * sizeof *K);
    double *x = malloc((size_t)l * sizeof *x);
    for (int i = 0; i < l; i++)
        x[i] = nrm(r);
    for (int k = 0; k < m; k++) {
        K[k] = calloc((size_t)(l * l), sizeof **K);
        if (k % 3 == 2) {
            double gam = 0.1 + 3 * unif(r);
            for (int i = 0; i < l; i++)
                for (int j = 0; j < l; j++)
                    K[k][j * l + i] = exp(-gam * (x[i] - x[j]) * (x[i] - x[j]));
        } else {
            int rank = 1 + (int)km_rng_below(r, (uint64_t)l);
            double *G = malloc((size_t)(l * rank) * sizeof *G), sc = 0.3 + 2 * unif(r);
            for (int i = 0; i < l * rank; i++)
                G[i] = nrm(r);
            for (int i = 0; i < l; i++)
                for (int j = 0; j < l; j++) {
                    double s = 0;
                    for (int q = 0; q < rank; q++)
                        s += G[q * l + i] * G[q * l + j];
                    K[k][j * l + i] = sc * s / rank;
                }
            free(G);
        }
    }
    free(x);
    return K;
}

static void free_kernels(double **K, int m)
{
    for (int k = 0; k < m; k++)
        free(K[k]);
    free(K);
}

/* (4.1) written out: ||y - K(d)c||^2/(2 lambda) + c'K(d)c/2. */
static double F41(const double *const *K, int m, int l, const double *y, double lambda,
                  const double *d, const double *c)
{
    double r2 = 0, q = 0;
    for (int i = 0; i < l; i++) {
        double kc = 0;
        for (int k = 0; k < m; k++)
            for (int j = 0; j < l; j++)
                kc += d[k] * K[k][j * l + i] * c[j];
        r2 += (y[i] - kc) * (y[i] - kc);
        q += c[i] * kc;
    }
    return r2 / (2 * lambda) + q / 2;
}

static void test_rls2(void)
{
    static const struct { int l, m; double lambda; } P[] = {
        {20, 5, 0.5}, {30, 8, 0.1}, {40, 12, 1.0}, {25, 15, 0.02}, {40, 6, 0.01},
    };
    km_rng r;
    km_rng_seed(&r, 403);
    for (size_t t = 0; t < sizeof P / sizeof *P; t++) {
        int l = P[t].l, m = P[t].m;
        double lambda = P[t].lambda;
        double **K = random_kernels(&r, m, l);
        const double *const *Kc = (const double *const *)K;
        double *y = malloc((size_t)l * sizeof *y), *c = malloc((size_t)l * sizeof *c);
        double *c2 = malloc((size_t)l * sizeof *c2), *d = malloc((size_t)m * sizeof *d);
        double *e = malloc((size_t)m * sizeof *e), *g = malloc((size_t)m * sizeof *g);
        double *tmp = malloc((size_t)m * sizeof *tmp);
        for (int i = 0; i < l; i++)
            y[i] = nrm(&r);
        double f = ref_rls2(Kc, m, l, y, lambda, d, c);
        double f2 = ref_rls2_eval(Kc, m, l, y, lambda, d, c2, g);
        int supp = 0;
        double cd = 0, gs = 0;
        for (int k = 0; k < m; k++) {
            supp += d[k] > 0;
            gs = fmax(gs, fabs(g[k]));
        }
        for (int i = 0; i < l; i++)
            cd = fmax(cd, fabs(c[i] - c2[i]));
        double kkt = ref_simplex_kkt(g, d, m), fw = ref_simplex_fw_gap(g, d, m);
        CHECK(on_simplex(d, m) && f == f2 && cd == 0,
              "rls2 l=%d m=%d lambda=%g: d on the simplex (support %d), c = c*(d), f = %.12g",
              l, m, lambda, supp, f);
        CHECK_CLOSE(F41(Kc, m, l, y, lambda, d, c), f, 1e-13,
                    "rls2 l=%d m=%d: (4.1) written out at (c, d) equals f = y'c/2", l, m);
        CHECK(kkt <= 1e-9 * gs && fw <= 1e-12 * fabs(f),
              "rls2 l=%d m=%d: KKT gap/max|g| = %.2g, Frank-Wolfe gap/f = %.2g (bounds f - f*)",
              l, m, kkt / gs, fw / fabs(f));
        double worst = -INFINITY, wv = -INFINITY, wp = -INFINITY;
        for (int s = 0; s < 300; s++) {
            rand_simplex(&r, m, e);
            worst = fmax(worst, (f - ref_rls2_eval(Kc, m, l, y, lambda, e, NULL, NULL)) / f);
        }
        for (int k = 0; k < m; k++) {
            memset(e, 0, (size_t)m * sizeof *e);
            e[k] = 1;
            wv = fmax(wv, (f - ref_rls2_eval(Kc, m, l, y, lambda, e, NULL, NULL)) / f);
        }
        for (int s = 0; s < 200; s++) {
            double eps = s % 2 ? 1e-3 : 1e-6;
            for (int k = 0; k < m; k++)
                e[k] = d[k] + eps * nrm(&r);
            ref_proj_simplex(e, m, e, tmp);
            wp = fmax(wp, (f - ref_rls2_eval(Kc, m, l, y, lambda, e, NULL, NULL)) / f);
        }
        CHECK(worst <= 1e-13 && wv <= 1e-13 && wp <= 1e-13,
              "rls2 l=%d m=%d: f(d) <= f at 300 random points, %d vertices, 200 projected "
              "perturbations (max relative excess %.2g, %.2g, %.2g)", l, m, m, worst, wv, wp);
        if (m <= 10) {
            /* Lemma 5: d solves the d-step (4.4) for c = c*(d) */
            double *V = malloc((size_t)(l * m) * sizeof *V), *u = malloc((size_t)l * sizeof *u);
            for (int k = 0; k < m; k++)
                for (int i = 0; i < l; i++) {
                    double s = 0;
                    for (int j = 0; j < l; j++)
                        s += K[k][j * l + i] * c[j];
                    V[k * l + i] = s;
                }
            for (int i = 0; i < l; i++)
                u[i] = y[i] - lambda * c[i] / 2;
            double best = ref_simplex_ls(V, l, m, u, e);
            double at = ref_ls_value(V, l, m, u, d);
            CHECK(at - best <= 1e-10 * best, "rls2 l=%d m=%d: d is the d-step (4.4) at c*(d) "
                  "(Lemma 5): ||Vd-u||^2 = %.12g, min = %.12g", l, m, at, best);
            free(V); free(u);
        }
        free(y); free(c); free(c2); free(d); free(e); free(g); free(tmp);
        free_kernels(K, m);
    }
}

/* Lemma 6: for large lambda the solution is the vertex e_i, i = argmax_k y'K^k y. */
static void test_lemma6(void)
{
    km_rng r;
    km_rng_seed(&r, 404);
    int ok = 1, n = 0;
    for (int t = 0; t < 4; t++) {
        int l = 15 + 5 * t, m = 4 + 2 * t;
        double **K = random_kernels(&r, m, l);
        double *y = malloc((size_t)l * sizeof *y), *c = malloc((size_t)l * sizeof *c);
        double *d = malloc((size_t)m * sizeof *d);
        for (int i = 0; i < l; i++)
            y[i] = nrm(&r);
        int imax = 0;
        double best = -INFINITY, tr = 0;
        for (int k = 0; k < m; k++) {
            double q = 0;
            for (int i = 0; i < l; i++) {
                tr = fmax(tr, K[k][i * l + i]);
                for (int j = 0; j < l; j++)
                    q += y[i] * K[k][j * l + i] * y[j];
            }
            if (q > best) {
                best = q;
                imax = k;
            }
        }
        double lambda = 1e4 * l * tr;
        ref_rls2((const double *const *)K, m, l, y, lambda, d, c);
        int vert = d[imax] == 1;
        for (int k = 0; k < m; k++)
            vert &= k == imax || d[k] == 0;
        ok &= vert;
        n++;
        free(y); free(c); free(d);
        free_kernels(K, m);
    }
    CHECK(ok, "Lemma 6: lambda = 1e4 l max K_ii gives d = e_i, i = argmax y'K^k y, exactly "
          "(%d problems)", n);
}

/* A repeated kernel makes d non-unique (a tie): the optimal value is that of the problem
 * without the copy, and the two copies' weights add up to the original's. */
static void test_rls2_tie(void)
{
    km_rng r;
    km_rng_seed(&r, 407);
    const int l = 25, m = 6;
    double **K = random_kernels(&r, m + 1, l);
    memcpy(K[m], K[1], (size_t)(l * l) * sizeof **K);
    double y[25], c[25], c2[25], d[7], d2[7], g[7];
    for (int i = 0; i < l; i++)
        y[i] = nrm(&r);
    double f = ref_rls2((const double *const *)K, m, l, y, 0.05, d, c);
    double f2 = ref_rls2((const double *const *)K, m + 1, l, y, 0.05, d2, c2);
    ref_rls2_eval((const double *const *)K, m + 1, l, y, 0.05, d2, NULL, g);
    double cd = 0, dd = fabs(d2[1] + d2[m] - d[1]);
    for (int i = 0; i < l; i++)
        cd = fmax(cd, fabs(c[i] - c2[i]));
    for (int k = 0; k < m; k++)
        if (k != 1)
            dd = fmax(dd, fabs(d2[k] - d[k]));
    CHECK(ref_simplex_kkt(g, d2, m + 1) <= 1e-9 * ref_absmax(g, m + 1) && fabs(f2 - f) <= 1e-13 * f
          && cd <= 1e-9 * ref_absmax(c, l) && dd <= 1e-8,
          "rls2 with a repeated kernel (d not unique): KKT holds, same f (%.2g), same c (%.2g), "
          "copies' weights add up (%.2g; split %.3g + %.3g)", fabs(f2 - f) / f, cd, dd, d2[1], d2[m]);
    free_kernels(K, m + 1);
}

/* ---------------------------------------------------------------- (4.9) */

static void test_prox(void)
{
    km_rng r;
    km_rng_seed(&r, 405);
    double worst = 0, idt = 0;
    for (int t = 0; t < 200; t++) {
        int n = 1 + (int)km_rng_below(&r, 10);
        double v[10], a[10], w[10], e[10], tt = t % 10 == 0 ? 0 : 3 * unif(&r);
        ref_rk_ tmp[10];
        for (int k = 0; k < n; k++) {
            v[k] = 2 * nrm(&r);
            a[k] = 0.3 + 2 * unif(&r);
        }
        ref_prox_sql1(v, a, n, tt, w, tmp);
        if (tt == 0)
            for (int k = 0; k < n; k++)
                idt = fmax(idt, fabs(w[k] - v[k]));
        double h0 = 0, s0 = 0;
        for (int k = 0; k < n; k++) {
            h0 += (w[k] - v[k]) * (w[k] - v[k]) / 2;
            s0 += a[k] * fabs(w[k]);
        }
        h0 += tt / 2 * s0 * s0;
        for (int s = 0; s < 100; s++) {
            double eps = s % 3 == 0 ? 1e-6 : s % 3 == 1 ? 1e-3 : 0.3, h = 0, sa = 0;
            for (int k = 0; k < n; k++) {
                e[k] = w[k] + eps * nrm(&r);
                if (s % 4 == 0 && unif(&r) < .5)
                    e[k] = 0;
                h += (e[k] - v[k]) * (e[k] - v[k]) / 2;
                sa += a[k] * fabs(e[k]);
            }
            h += tt / 2 * sa * sa;
            worst = fmax(worst, (h0 - h) / fmax(1, h0));
        }
    }
    CHECK(idt == 0, "prox of (t/2)(sum a|w|)^2 with t = 0 is the identity");
    CHECK(worst <= 1e-14, "prox of (t/2)(sum a|w|)^2 never beaten by perturbations (max "
          "excess %.2g)", worst);
}

/* Linear RLS2 (K^k = s_k x^k x^k') against (4.9): equal optimal values (Lemma 7, factor 1),
 * w_k = d_k s_k z_k with z = X'c, Xw = K(d)c = y - lambda c. */
static void test_linear(void)
{
    static const struct { int l, n; double lambda; } P[] = {
        {30, 6, 0.5}, {30, 8, 5}, {40, 10, 40}, {25, 5, 0.01}, {8, 12, 0.3},
    };
    km_rng r;
    km_rng_seed(&r, 406);
    for (size_t t = 0; t < sizeof P / sizeof *P; t++) {
        int l = P[t].l, n = P[t].n;
        double lambda = P[t].lambda;
        double *X = malloc((size_t)(l * n) * sizeof *X), *y = malloc((size_t)l * sizeof *y);
        double *s = malloc((size_t)n * sizeof *s), *w = malloc((size_t)n * sizeof *w);
        double *d = malloc((size_t)n * sizeof *d), *c = malloc((size_t)l * sizeof *c);
        double *e = malloc((size_t)n * sizeof *e);
        double **K = malloc((size_t)n * sizeof *K);
        for (int i = 0; i < l * n; i++)
            X[i] = nrm(&r);
        for (int k = 0; k < n; k++)
            s[k] = 0.5 + 1.5 * unif(&r);
        for (int i = 0; i < l; i++) {
            y[i] = 0.5 * nrm(&r);
            for (int k = 0; k < n; k += 2)   /* half the features relevant */
                y[i] += X[k * l + i] * (k % 4 ? 1.0 : -0.7);
        }
        for (int k = 0; k < n; k++) {
            K[k] = malloc((size_t)(l * l) * sizeof **K);
            for (int i = 0; i < l; i++)
                for (int j = 0; j < l; j++)
                    K[k][j * l + i] = s[k] * X[k * l + i] * X[k * l + j];
        }
        double f = ref_rls2((const double *const *)K, n, l, y, lambda, d, c);
        double F = ref_sql1(X, l, n, y, s, lambda, w);
        ref_rls2_eval((const double *const *)K, n, l, y, lambda, d, NULL, e);
        double gap = ref_simplex_kkt(e, d, n) / ref_absmax(e, n);
        CHECK(gap <= 1e-9, "linear rls2 l=%d n=%d lambda=%g: KKT gap/max|g| = %.2g", l, n,
              lambda, gap);
        int unique = l > n, nz = 0;
        double zs = 0, viol = ref_sql1_kkt(X, l, n, y, s, lambda, w);
        for (int k = 0; k < n; k++)
            zs = fmax(zs, fabs(cblas_ddot(l, X + k * l, 1, y, 1)) / lambda);
        CHECK(viol <= 1e-12 * zs, "sql1 l=%d n=%d lambda=%g: subgradient optimality of (4.9) "
              "(violation/scale %.2g)", l, n, lambda, viol / zs);
        double worst = -INFINITY;
        for (int q = 0; q < 300; q++) {
            double eps = q % 3 == 0 ? 1e-6 : q % 3 == 1 ? 1e-3 : 0.1;
            for (int k = 0; k < n; k++)
                e[k] = (q % 4 == 0 && unif(&r) < .3) ? 0 : w[k] + eps * nrm(&r);
            worst = fmax(worst, (F - ref_sql1_objective(X, l, n, y, s, lambda, e)) / F);
        }
        CHECK(worst <= 1e-14, "sql1 l=%d n=%d: never beaten by 300 perturbations (max "
              "relative excess %.2g)", l, n, worst);
        CHECK(fabs(f - F) <= 1e-12 * F, "linear rls2 l=%d n=%d lambda=%g: optimal value of "
              "(4.3) %.15g = optimal value of (4.9) %.15g (rel diff %.2g)", l, n, lambda, f, F,
              fabs(f - F) / F);
        /* predictions: Xw = K(d)c = y - lambda c, and w_k = d_k s_k z_k */
        double pd = 0, ps = 0, wd = 0, ws = 0, dd = 0, T = 0;
        for (int i = 0; i < l; i++) {
            double xw = 0;
            for (int k = 0; k < n; k++)
                xw += X[k * l + i] * w[k];
            pd = fmax(pd, fabs(xw - (y[i] - lambda * c[i])));
            ps = fmax(ps, fabs(y[i]));
        }
        for (int k = 0; k < n; k++) {
            double z = cblas_ddot(l, X + k * l, 1, c, 1);
            wd = fmax(wd, fabs(w[k] - d[k] * s[k] * z));
            ws = fmax(ws, fabs(w[k]));
            T += fabs(w[k]) / sqrt(s[k]);
            nz += w[k] != 0;
        }
        for (int k = 0; k < n; k++)
            dd = fmax(dd, fabs(d[k] - fabs(w[k]) / sqrt(s[k]) / T));
        CHECK(pd <= 1e-9 * ps, "linear rls2 l=%d n=%d: predictions Xw = K(d)c = y - lambda c "
              "(max diff %.2g)", l, n, pd);
        if (unique) {
            CHECK(wd <= 1e-8 * ws && dd <= 1e-8, "linear rls2 l=%d n=%d: w_k = d_k s_k z_k, "
                  "z = X'c (max diff %.2g) and d_k = (|w_k|/sqrt s_k)/sum (max diff %.2g); "
                  "%d of %d features selected", l, n, wd, dd, nz, n);
        }
        for (int k = 0; k < n; k++)
            free(K[k]);
        free(K); free(X); free(y); free(s); free(w); free(d); free(c); free(e);
    }
}

int main(void)
{
    km_blas_threads(1);   /* tiny matrices: threads only cost */
    test_simplex_ls_grid();
    test_simplex_ls_random();
    test_rls2();
    test_lemma6();
    test_rls2_tie();
    test_prox();
    test_linear();
    TEST_EXIT();
}
