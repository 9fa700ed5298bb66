/* music.c - the music recommendation experiment of Dinuzzo's thesis, section 5.4, on the
 * data of datasets/gen_music: RMSE and TOP20HITS of every user's estimate against the true
 * preferences g_j on all items.
 *
 *   music grid PREFIX      Algorithm 4 (offline) for every (alpha, lambda) of the grid:
 *                          15 alphas in [0, 1] x 15 lambdas log-spaced in [1e-7, 1]
 *   music clients PREFIX   every user as an active client of a running mtl-server (one
 *                          download; each user's R_j from its own ratings only): the time
 *                          for all estimates, their RMSE and TOP20HITS, and their largest
 *                          difference from Algorithm 4 at the server's parameters
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <omp.h>

#include "blas.h"
#include "cli.h"
#include "mtl.h"
#include "mtlproto.h"
#include "svmlight.h"

static const char usage[] =
    "Usage: music grid PREFIX [--alphas N] [--lambdas MIN:MAX:N] [-n THREADS]\n"
    "       music clients PREFIX [--host H] [-p PORT] [-k SECRET]\n"
    "Thesis 5.4 on datasets/gen_music's PREFIX.{items,train,users}: RMSE and TOP20HITS of\n"
    "the users' estimates. grid: Algorithm 4 over alphas x lambdas (default 15 x\n"
    "1e-7:1:15); clients: every user an active client of mtl-server (task 1's secret -k,\n"
    "default s1), compared with Algorithm 4 at the server's parameters.\n";

typedef struct music {
    km_problem *items;   /* labels h(x_i) */
    km_problem *train;   /* qid = user 1..m */
    int64_t m;           /* users */
    int32_t d;
    double *G;           /* true g_j(x_i), m x n_items */
    int *top;            /* true top 20 of each user */
} music;

#define TOPK 20

/* The TOPK largest of g[0..n) as indices (any order). */
static void top20(const double *g, int n, int *out)
{
    /* a min-heap of the TOPK largest so far, by value */
    for (int i = 0; i < n; i++) {
        int at;
        if (i < TOPK) {
            at = i;
            while (at > 0 && g[i] < g[out[(at - 1) / 2]]) {
                out[at] = out[(at - 1) / 2];
                at = (at - 1) / 2;
            }
        } else if (g[i] > g[out[0]]) {
            at = 0;
            for (;;) {
                int c = 2 * at + 1;
                if (c >= TOPK)
                    break;
                if (c + 1 < TOPK && g[out[c + 1]] < g[out[c]])
                    c++;
                if (g[out[c]] >= g[i])
                    break;
                out[at] = out[c];
                at = c;
            }
        } else {
            continue;
        }
        out[at] = i;
    }
}

static void load(const char *prefix, music *M)
{
    km_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s.items", prefix);
    if (km_svmlight_read(path, &M->items, &err))
        km_cli_die(err.code, "%s", err.msg);
    snprintf(path, sizeof path, "%s.train", prefix);
    if (km_svmlight_read(path, &M->train, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (!M->train->qid)
        km_cli_die(2, "%s: no qid: (user ids)", path);
    M->d = M->items->n > M->train->n ? M->items->n : M->train->n;
    snprintf(path, sizeof path, "%s.users", prefix);
    FILE *f = fopen(path, "r");
    if (!f)
        km_cli_die(2, "%s: cannot open", path);
    int64_t ni = M->items->l, cap = 1024;
    double *theta = malloc((size_t)cap * M->d * sizeof *theta);
    long long j;
    while (theta && fscanf(f, "%lld", &j) == 1) {
        if (j != M->m + 1)
            km_cli_die(2, "%s: user %lld out of order", path, j);
        if (M->m == cap) {
            cap *= 2;
            theta = realloc(theta, (size_t)cap * M->d * sizeof *theta);
        }
        for (int32_t t = 0; theta && t < M->d; t++)
            if (fscanf(f, "%lf", &theta[M->m * M->d + t]) != 1)
                km_cli_die(2, "%s: user %lld: %d numbers expected", path, j, (int)M->d);
        M->m++;
    }
    fclose(f);
    /* G = 0.25 h + 0.75 Theta X' (the generator's users) */
    double *Xd = calloc((size_t)(ni * M->d), sizeof *Xd);
    M->G = malloc((size_t)(M->m * ni) * sizeof *M->G);
    M->top = malloc((size_t)(M->m * TOPK) * sizeof *M->top);
    if (!theta || !Xd || !M->G || !M->top)
        km_cli_die(3, "out of memory");
    for (int64_t i = 0; i < ni; i++)
        for (int64_t k = M->items->row_ptr[i]; k < M->items->row_ptr[i + 1]; k++)
            Xd[i * M->d + M->items->index[k]] = M->items->value[k];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M->m, (int)ni, M->d, 0.75,
                theta, M->d, Xd, M->d, 0.0, M->G, (int)ni);
    for (int64_t u = 0; u < M->m; u++) {
        for (int64_t i = 0; i < ni; i++)
            M->G[u * ni + i] += 0.25 * M->items->y[i];
        top20(M->G + u * ni, (int)ni, M->top + u * TOPK);
    }
    free(Xd);
    free(theta);
}

/* kernel matrix of the state's unique inputs (rows) against the items (columns): n x n_items */
static double *item_kernel(const music *M, const km_kernel *k, const km_mtl_estimate *e)
{
    int64_t ni = M->items->l, n = e->X->l;
    double *A = malloc((size_t)(ni * n) * sizeof *A);
    if (!A)
        km_cli_die(3, "out of memory");
    const km_problem *It = M->items, *X = e->X;
    for (int64_t i = 0; i < ni; i++) {
        int64_t a = It->row_ptr[i], na = It->row_ptr[i + 1] - a;
        double sa = 0;
        for (int64_t q = a; q < a + na; q++)
            sa += It->value[q] * It->value[q];
        for (int64_t r = 0; r < n; r++) {
            int64_t b = X->row_ptr[r];
            A[r * ni + i] = km_kernel_eval(k, It->index + a, It->value + a, na, sa, X->index + b,
                                          X->value + b, X->row_ptr[r + 1] - b, e->sq[r]);
        }
    }
    return A;
}

typedef struct score {
    double rmse, hits;
    double *g;   /* optional: all estimates, m x n_items */
} score;

/* RMSE and TOP20HITS (thesis 5.4) of every user's estimate in state s. */
static score evaluate(const music *M, km_mtl *s, int keep)
{
    km_error err;
    km_mtl_estimate *e;
    if (km_mtl_estimate_task(s, INT64_MIN, &e, &err))   /* the average task: cbar, Xbar */
        km_cli_die(err.code, "%s", err.msg);
    const km_mtl_param *p = &e->param;
    int64_t ni = M->items->l, n = e->X->l;
    double *Kx = item_kernel(M, &p->K, e), *Ktx = item_kernel(M, &p->Kt, e);
    double *gbar = malloc((size_t)ni * sizeof *gbar), *g = malloc((size_t)ni * sizeof *g);
    double *c = malloc((size_t)(n + 1) * sizeof *c);
    score sc = {0, 0, keep ? malloc((size_t)(M->m * ni) * sizeof(double)) : NULL};
    if (!gbar || !g || !c || (keep && !sc.g))
        km_cli_die(3, "out of memory");
    cblas_dgemv(CblasRowMajor, CblasTrans, (int)n, (int)ni, p->alpha, Kx, (int)ni, e->cbar, 1,
                0.0, gbar, 1);
    for (int64_t u = 0; u < M->m; u++) {
        const int64_t *h;
        const double *cbar;
        int64_t l;
        if (km_mtl_task_coef(s, u + 1, &h, c, &l, &cbar, &err))
            km_cli_die(err.code, "%s", err.msg);
        double se = 0;
        memcpy(g, gbar, (size_t)ni * sizeof *g);
        for (int64_t k = 0; k < l; k++)
            cblas_daxpy((int)ni, (1 - p->alpha) * c[k], Ktx + h[k] * ni, 1, g, 1);
        for (int64_t i = 0; i < ni; i++) {
            double dd = g[i] - M->G[u * ni + i];
            se += dd * dd;
        }
        if (keep)
            memcpy(sc.g + u * ni, g, (size_t)ni * sizeof *g);
        sc.rmse += sqrt(se / (double)ni);
        int mine[TOPK], hits = 0;
        top20(g, (int)ni, mine);
        for (int a = 0; a < TOPK; a++)
            for (int b = 0; b < TOPK; b++)
                hits += mine[a] == M->top[u * TOPK + b];
        sc.hits += hits;
    }
    sc.rmse /= (double)M->m;
    sc.hits /= (double)M->m;
    km_mtl_estimate_free(e);
    free(Kx);
    free(Ktx);
    free(gbar);
    free(g);
    free(c);
    return sc;
}

static km_mtl_param thesis_param(double alpha, double lambda)
{
    km_mtl_param p = {alpha, lambda, {KM_KERNEL_EXPDOT, 1, 0, 3, 0}, {KM_KERNEL_LINEAR, 1, 0, 3, 0},
                      0, NULL};
    return p;
}

static int grid(const music *M, int na, double lmin, double lmax, int nl, int threads)
{
    int total = na * nl;
    score *sc = calloc((size_t)total, sizeof *sc);
    double *secs = calloc((size_t)total, sizeof *secs);
    if (!sc || !secs)
        km_cli_die(3, "out of memory");
    int failed = 0;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
    for (int k = 0; k < total; k++) {
        double alpha = na > 1 ? (double)(k / nl) / (na - 1) : 1;
        double lambda = nl > 1 ? lmin * pow(lmax / lmin, (double)(k % nl) / (nl - 1)) : lmin;
        km_mtl_param p = thesis_param(alpha, lambda);
        km_mtl *s;
        km_error err;
        double t0 = km_cli_now();
        if (km_mtl_offline(&p, M->train, NULL, &s, &err)) {
#pragma omp critical
            {
                fprintf(stderr, "music: alpha %g lambda %g: %s\n", alpha, lambda, err.msg);
                failed = 1;
            }
            continue;
        }
        sc[k] = evaluate(M, s, 0);
        secs[k] = km_cli_now() - t0;
        km_mtl_free(s);
    }
    if (failed)
        return 3;
    printf("alpha,lambda,rmse,top20hits,seconds\n");
    int best = 0;
    for (int k = 0; k < total; k++) {
        double alpha = na > 1 ? (double)(k / nl) / (na - 1) : 1;
        double lambda = nl > 1 ? lmin * pow(lmax / lmin, (double)(k % nl) / (nl - 1)) : lmin;
        printf("%.6g,%.6g,%.6g,%.6g,%.3f\n", alpha, lambda, sc[k].rmse, sc[k].hits, secs[k]);
        if (sc[k].rmse < sc[best].rmse)
            best = k;
    }
    /* the best lambda at alpha = 0 and alpha = 1 (separate and pooled) */
    int b0 = 0, b1 = (na - 1) * nl;
    for (int k = 0; k < nl; k++) {
        if (sc[k].rmse < sc[b0].rmse)
            b0 = k;
        if (sc[(na - 1) * nl + k].rmse < sc[b1].rmse)
            b1 = (na - 1) * nl + k;
    }
    int ks[3] = {best, b0, b1};
    const char *name[3] = {"best", "separate (alpha 0)", "pooled (alpha 1)"};
    for (int q = 0; q < 3; q++) {
        int k = ks[q];
        double alpha = na > 1 ? (double)(k / nl) / (na - 1) : 1;
        double lambda = nl > 1 ? lmin * pow(lmax / lmin, (double)(k % nl) / (nl - 1)) : lmin;
        fprintf(stderr, "music: %-19s alpha %.4g lambda %.3g: RMSE %.4f TOP20HITS %.4f\n",
                name[q], alpha, lambda, sc[k].rmse, sc[k].hits);
    }
    free(sc);
    free(secs);
    return 0;
}

static int clients(const music *M, const char *host, int port, const char *secret)
{
    km_error err;
    double t0 = km_cli_now();
    km_mtlp_conn *c = km_mtlp_connect(host, port, &err);
    km_mtlp_status st;
    km_mtl_disclosed d = {0};
    int changed;
    if (!c || km_mtlp_get_status(c, 1, secret, &st, &err) ||
        km_mtlp_get(c, 1, secret, &d, &changed, &err))
        km_cli_die(2, "%s", err.msg);
    km_mtlp_close(c);
    double t1 = km_cli_now();
    km_mtl *s = km_mtl_from_disclosed(&st.param, &d, &err);   /* Algorithm 9 lines 1-7 */
    if (!s)
        km_cli_die(err.code, "%s", err.msg);
    const km_problem *P = M->train;
    for (int64_t i = 0; i < P->l; i++) {   /* each user's own R_j from its own ratings */
        int64_t a = P->row_ptr[i];
        if (km_mtl_update_private(s, P->qid[i], P->index + a, P->value + a,
                                  P->row_ptr[i + 1] - a, P->y[i], 1, &err))
            km_cli_die(err.code, "row %lld: %s", (long long)i + 1, err.msg);
    }
    double t2 = km_cli_now();
    score sc = evaluate(M, s, 1);   /* lines 13-15 for every user, then the scores */
    double t3 = km_cli_now();
    km_mtl *off;
    if (km_mtl_offline(&st.param, P, NULL, &off, &err))
        km_cli_die(err.code, "%s", err.msg);
    score so = evaluate(M, off, 1);
    int64_t total = M->m * M->items->l;
    double num = 0, den = 0;
    for (int64_t k = 0; k < total; k++) {
        num = fmax(num, fabs(sc.g[k] - so.g[k]));
        den = fmax(den, fabs(so.g[k]));
    }
    printf("server version %llu, n %llu, alpha %g, lambda %g\n",
           (unsigned long long)st.version, (unsigned long long)st.n, st.param.alpha,
           st.param.lambda);
    printf("download %.3f s, factor and %lld users' R_j %.3f s, %lld estimates and scores "
           "%.3f s\n", t1 - t0, (long long)M->m, t2 - t1, (long long)M->m, t3 - t2);
    printf("clients: RMSE %.6f TOP20HITS %.4f\n", sc.rmse, sc.hits);
    printf("offline (Algorithm 4): RMSE %.6f TOP20HITS %.4f\n", so.rmse, so.hits);
    printf("largest |g_client - g_offline| / largest |g_offline| over all users and items: "
           "%.3g\n", den > 0 ? num / den : num);
    free(sc.g);
    free(so.g);
    km_mtl_free(off);
    km_mtl_free(s);
    km_mtl_disclosed_free(&d);
    return 0;
}

int main(int argc, char **argv)
{
    km_cli_init("music");
    const char *mode = NULL, *prefix = NULL, *host = "127.0.0.1", *secret = "s000000000000001";
    int na = 15, nl = 15, threads = 1, port = 7353;
    double lmin = 1e-7, lmax = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() km_cli_value(argc, argv, &i)
        if (!strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--alphas")) {
            na = (int)km_cli_integer(a, NEXT(), 1, 1000);
        } else if (!strcmp(a, "--lambdas")) {
            km_cli_range(a, NEXT(), &lmin, &lmax, &nl);
        } else if (!strcmp(a, "-n")) {
            threads = (int)km_cli_integer(a, NEXT(), 1, 256);
        } else if (!strcmp(a, "--host")) {
            host = NEXT();
        } else if (!strcmp(a, "-p")) {
            port = (int)km_cli_integer(a, NEXT(), 1, 65535);
        } else if (!strcmp(a, "-k")) {
            secret = NEXT();
        } else if (a[0] == '-') {
            km_cli_die(1, "unknown option '%s'", a);
        } else if (!mode) {
            mode = a;
        } else if (!prefix) {
            prefix = a;
        } else {
            km_cli_die(1, "too many arguments");
        }
#undef NEXT
    }
    if (!mode || !prefix || (strcmp(mode, "grid") && strcmp(mode, "clients")))
        km_cli_die(1, "expected 'grid PREFIX' or 'clients PREFIX'");
    km_blas_threads(1);
    music M = {0};
    load(prefix, &M);
    int rc = !strcmp(mode, "grid") ? grid(&M, na, lmin, lmax, nl, threads)
                                   : clients(&M, host, port, secret);
    km_problem_free(M.items);
    km_problem_free(M.train);
    free(M.G);
    free(M.top);
    return rc;
}
