/* test_mtl.c - thesis ch. 5 against a direct solution: after random interleavings of triples
 * (repeated inputs within a task, inputs shared between tasks, new inputs), the server's
 * incremental state (Algorithms 5-8), the offline solver (Algorithm 4) and passive and active
 * clients (Algorithm 9) give every task's coefficients and predictions of (K + lambda W) c = y
 * (5.4) solved by LAPACK on all examples, to 1e-8 relative. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lapacke.h>

#include "imap.h"
#include "model.h"
#include "mtl.h"
#include "rng.h"
#include "test.h"
#include "testutil.h"

#define TOL 1e-8

/* A stream of triples: input k of a pool, task t, output y, weight w. */
typedef struct stream {
    int32_t d;          /* features */
    int64_t npool;
    km_problem *pool;   /* candidate inputs (distinct) */
    int64_t l;
    int64_t *x, *t;
    double *y, *w;
} stream;

/* npool distinct sparse inputs in d dimensions (unit norm when sphere), l triples over m tasks
 * with inputs drawn from a pool: a task repeats its own inputs, shares others' or meets new
 * ones, in random order. */
static stream make_stream(uint64_t seed, int32_t d, int64_t npool, int64_t l, int64_t m,
                          int sphere, int unit_w)
{
    km_rng r;
    km_rng_seed(&r, seed);
    stream S = {d, npool, calloc(1, sizeof(km_problem)), l, malloc(l * sizeof(int64_t)),
                malloc(l * sizeof(int64_t)), malloc(l * sizeof(double)),
                malloc(l * sizeof(double))};
    km_problem *P = S.pool;
    P->l = npool;
    P->n = d;
    P->row_ptr = calloc(npool + 1, sizeof *P->row_ptr);
    P->index = malloc(npool * d * sizeof *P->index);
    P->value = malloc(npool * d * sizeof *P->value);
    int64_t q = 0;
    for (int64_t i = 0; i < npool; i++) {
        double nrm = 0;
        int64_t a = q;
        for (int32_t j = 0; j < d; j++) {
            if (unif(&r) < 0.25 && j != (int32_t)(i % d))
                continue;
            P->index[q] = j;
            P->value[q] = sphere ? unif(&r) : 2 * unif(&r) - 1;
            nrm += P->value[q] * P->value[q];
            q++;
        }
        for (int64_t k = a; sphere && k < q; k++)
            P->value[k] /= sqrt(nrm);
        P->row_ptr[i + 1] = q;
    }
    for (int64_t i = 0; i < l; i++) {
        S.t[i] = (int64_t)km_rng_below(&r, m) * 7 - 3;   /* ids need not be 0..m-1 */
        /* a small pool region per task makes repeats likely, the rest shares */
        S.x[i] = unif(&r) < 0.4 ? (S.t[i] + 3) / 7 % npool
                                : (int64_t)km_rng_below(&r, npool);
        S.y[i] = 2 * unif(&r) - 1;
        S.w[i] = unit_w ? 1 : 0.5 + 1.5 * unif(&r);
    }
    return S;
}

static void stream_free(stream *S)
{
    km_problem_free(S->pool);
    free(S->x);
    free(S->t);
    free(S->y);
    free(S->w);
}

static double kval(const km_kernel *k, const km_problem *A, int64_t a, const km_problem *B,
                   int64_t b)
{
    int64_t pa = A->row_ptr[a], pb = B->row_ptr[b];
    int64_t na = A->row_ptr[a + 1] - pa, nb = B->row_ptr[b + 1] - pb;
    double sa = 0, sb = 0;
    for (int64_t i = 0; i < na; i++)
        sa += A->value[pa + i] * A->value[pa + i];
    for (int64_t i = 0; i < nb; i++)
        sb += B->value[pb + i] * B->value[pb + i];
    return km_kernel_eval(k, A->index + pa, A->value + pa, na, sa, B->index + pb,
                          B->value + pb, nb, sb);
}

/* Task t's individual kernel K~_t (5.2): its entry in p->tk (a plain scan), else p->Kt. */
static const km_kernel *tkern(const km_mtl_param *p, int64_t t)
{
    for (int64_t k = 0; k < p->ntk; k++)
        if (p->tk[k].task == t)
            return &p->tk[k].kernel;
    return &p->Kt;
}

/* The direct solution of (5.4) over the first l triples: c (l values). */
static double *direct(const km_mtl_param *p, const stream *S, int64_t l)
{
    double *A = malloc(l * l * sizeof *A), *c = malloc(l * sizeof *c);
    for (int64_t a = 0; a < l; a++) {
        for (int64_t b = 0; b < l; b++)
            A[a + b * l] = p->alpha * kval(&p->K, S->pool, S->x[a], S->pool, S->x[b]) +
                           (S->t[a] == S->t[b] ? (1 - p->alpha) *
                            kval(tkern(p, S->t[a]), S->pool, S->x[a], S->pool, S->x[b]) : 0);
        A[a + a * l] += p->lambda * S->w[a];
        c[a] = S->y[a];
    }
    int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', (int)l, 1, A, (int)l, c, (int)l);
    if (info)
        printf("# dposv info %d\n", info);
    free(A);
    return c;
}

static int same_row(const km_problem *A, int64_t a, const km_problem *B, int64_t b)
{
    int64_t pa = A->row_ptr[a], pb = B->row_ptr[b], n = A->row_ptr[a + 1] - pa;
    return n == B->row_ptr[b + 1] - pb &&
           !memcmp(A->index + pa, B->index + pb, n * sizeof *A->index) &&
           !memcmp(A->value + pa, B->value + pb, n * sizeof *A->value);
}

static double relerr(const double *a, const double *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num = fmax(num, fabs(a[i] - b[i]));
        den = fmax(den, fabs(b[i]));
    }
    return den > 0 ? num / den : num;
}

/* Compares the estimate of task `task` with the direct solution c over the first l triples:
 * cbar = P'c (when Kbar is non-singular), gbar and g_j on every pool input and the task's
 * merged coefficients. Returns the
 * largest relative error. */
static double compare(const km_mtl_param *p, const stream *S, int64_t l, const double *c,
                      const km_mtl_estimate *e, int64_t task, int full_rank)
{
    const km_problem *X = e->X;
    double *want = calloc(X->l + e->l, sizeof *want);
    int64_t *row = malloc(S->npool * sizeof *row);
    for (int64_t k = 0; k < S->npool; k++) {
        row[k] = -1;
        for (int64_t i = 0; i < X->l && row[k] < 0; i++)
            if (same_row(S->pool, k, X, i))
                row[k] = i;
    }
    for (int64_t a = 0; a < l; a++) {
        int64_t i = row[S->x[a]];
        want[i] += c[a];
        for (int64_t k = 0; k < e->l && S->t[a] == task; k++)
            if (e->h[k] == i)
                want[X->l + k] += c[a];
    }
    /* cbar itself is unique only when Kbar is non-singular; alpha Kbar cbar always is (gbar) */
    double err = fmax(full_rank ? relerr(e->cbar, want, X->l) : 0,
                      relerr(e->c, want + X->l, e->l));
    double *gb = calloc(2 * S->npool, sizeof *gb);
    for (int64_t k = 0; k < S->npool; k++) {
        for (int64_t i = 0; i < X->l; i++)
            gb[k] += e->cbar[i] * kval(&p->K, X, i, S->pool, k);
        for (int64_t a = 0; a < l; a++)
            gb[S->npool + k] += c[a] * kval(&p->K, S->pool, S->x[a], S->pool, k);
    }
    if (p->alpha > 0)
        err = fmax(err, relerr(gb, gb + S->npool, S->npool));
    free(gb);
    double *g = malloc(S->npool * sizeof *g), *gw = calloc(S->npool, sizeof *gw);
    for (int64_t k = 0; k < S->npool; k++) {
        const km_problem *P = S->pool;
        int64_t a0 = P->row_ptr[k];
        g[k] = km_mtl_estimate_eval(e, P->index + a0, P->value + a0, P->row_ptr[k + 1] - a0);
        for (int64_t a = 0; a < l; a++)
            gw[k] += c[a] * (p->alpha * kval(&p->K, P, S->x[a], P, k) +
                             (S->t[a] == task ? (1 - p->alpha) *
                                                kval(tkern(p, task), P, S->x[a], P, k) : 0));
    }
    err = fmax(err, relerr(g, gw, S->npool));
    free(g);
    free(gw);
    free(want);
    free(row);
    return err;
}

static int feed(km_mtl *s, const stream *S, int64_t from, int64_t to, int64_t skip_task,
                int private_)
{
    for (int64_t a = from; a < to; a++) {
        if (S->t[a] == skip_task)
            continue;
        const km_problem *P = S->pool;
        int64_t a0 = P->row_ptr[S->x[a]];
        km_error err;
        int rc = (private_ ? km_mtl_update_private : km_mtl_update)(
            s, S->t[a], P->index + a0, P->value + a0, P->row_ptr[S->x[a] + 1] - a0, S->y[a],
            S->w[a], &err);
        if (rc) {
            printf("# update %lld: %s\n", (long long)a, err.msg);
            return rc;
        }
    }
    return 0;
}

/* Worst relative error over every task of the stream's first l triples. */
static double all_tasks(km_mtl *s, const km_mtl_param *p, const stream *S, int64_t l,
                        const double *c, int full_rank)
{
    double worst = 0;
    for (int64_t a = 0; a < l; a++) {
        int first = 1;
        for (int64_t b = 0; b < a && first; b++)
            first = S->t[b] != S->t[a];
        if (!first)
            continue;
        km_mtl_estimate *e;
        km_error err;
        if (km_mtl_estimate_task(s, S->t[a], &e, &err)) {
            printf("# estimate: %s\n", err.msg);
            return INFINITY;
        }
        worst = fmax(worst, compare(p, S, l, c, e, S->t[a], full_rank));
        km_mtl_estimate_free(e);
    }
    return worst;
}

typedef struct config {
    const char *name;
    km_kernel K, Kt;
    double alpha, lambda;
    int32_t d;
    int64_t npool, l, m;
    int sphere, unit_w, full_rank;
    int64_t ntk;                /* tasks with their own K~_j */
    const km_mtl_tkernel *tk;
} config;

static void run_config(const config *cf, uint64_t seed)
{
    km_mtl_param p = {cf->alpha, cf->lambda, cf->K, cf->Kt, cf->ntk, cf->tk};
    stream S = make_stream(seed, cf->d, cf->npool, cf->l, cf->m, cf->sphere, cf->unit_w);
    km_error err;

    /* the server after each of several prefixes (queued H terms and flushed ones) */
    km_mtl *s = km_mtl_new(&p, &err);
    int64_t cuts[] = {1, 7, KM_MTL_BATCH, KM_MTL_BATCH + 5, cf->l};
    int64_t done = 0;
    double worst = 0;
    for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
        int64_t to = cuts[k] < cf->l ? cuts[k] : cf->l;
        if (to <= done)
            continue;
        feed(s, &S, done, to, INT64_MIN, 0);
        done = to;
        double *c = direct(&p, &S, to);
        worst = fmax(worst, all_tasks(s, &p, &S, to, c, cf->full_rank));
        free(c);
    }
    CHECK(worst <= TOL, "%s: server (Algorithm 5) after 5 prefixes of %lld triples, %lld unique "
          "inputs: every task's cbar, c_j and g_j = direct (5.4) (rel err %.2g)", cf->name,
          (long long)cf->l, (long long)km_mtl_n(s), worst);

    /* offline (Algorithm 4) */
    double *c = direct(&p, &S, cf->l);
    km_problem *P = calloc(1, sizeof *P);
    P->l = cf->l;
    P->n = cf->d;
    P->row_ptr = calloc(cf->l + 1, sizeof *P->row_ptr);
    P->index = malloc(S.pool->nnz + cf->l * cf->d * sizeof *P->index);
    P->value = malloc(cf->l * cf->d * sizeof *P->value);
    P->y = malloc(cf->l * sizeof *P->y);
    P->qid = malloc(cf->l * sizeof *P->qid);
    for (int64_t a = 0; a < cf->l; a++) {
        int64_t a0 = S.pool->row_ptr[S.x[a]], nz = S.pool->row_ptr[S.x[a] + 1] - a0;
        memcpy(P->index + P->row_ptr[a], S.pool->index + a0, nz * sizeof *P->index);
        memcpy(P->value + P->row_ptr[a], S.pool->value + a0, nz * sizeof *P->value);
        P->row_ptr[a + 1] = P->row_ptr[a] + nz;
        P->y[a] = S.y[a];
        P->qid[a] = S.t[a];
    }
    P->nnz = P->row_ptr[cf->l];
    km_mtl *off = NULL;
    int rc = km_mtl_offline(&p, P, S.w, &off, &err);
    CHECK(rc == 0, "%s: offline runs (%s)", cf->name, rc ? err.msg : "ok");
    if (!rc) {
        double e = all_tasks(off, &p, &S, cf->l, c, cf->full_rank);
        CHECK(e <= TOL, "%s: offline (Algorithm 4) = direct (rel err %.2g)", cf->name, e);
    }

    /* a passive client: the server never sees task T0 (one with its own K~_j if any); the
     * client adds it locally, knowing K~_T0 alone, as the server's STATUS tells it */
    int64_t T0 = p.ntk ? p.tk[0].task : S.t[0];
    km_mtl_param pc = p;
    pc.Kt = *tkern(&p, T0);
    pc.ntk = 0;
    pc.tk = NULL;
    km_mtl *srv = km_mtl_new(&p, &err);
    feed(srv, &S, 0, cf->l, T0, 0);
    km_mtl_disclosed d;
    if (km_mtl_disclose(srv, 0, &d, &err))
        printf("# disclose: %s\n", err.msg);
    km_mtl *pas = km_mtl_from_disclosed(&pc, &d, &err);
    rc = !pas;
    for (int64_t a = 0; a < cf->l && !rc; a++)
        if (S.t[a] == T0)
            rc = feed(pas, &S, a, a + 1, INT64_MIN, 0);
    km_mtl_estimate *ep = NULL, *ea = NULL, *es = NULL;
    if (!rc)
        rc = km_mtl_estimate_task(pas, T0, &ep, &err);
    double e = rc ? INFINITY : compare(&p, &S, cf->l, c, ep, T0, cf->full_rank);
    CHECK(e <= TOL, "%s: passive client (Algorithm 9, local Algorithm 5 on its own data) = "
          "direct (rel err %.2g)", cf->name, e);
    km_mtl_disclosed_free(&d);

    /* an active client: the server has everything; the client rebuilds R_j from its own data */
    km_mtl_disclose(s, 0, &d, &err);
    km_mtl *act = km_mtl_from_disclosed(&pc, &d, &err);
    rc = !act;
    for (int64_t a = 0; a < cf->l && !rc; a++)
        if (S.t[a] == T0)
            rc = feed(act, &S, a, a + 1, INT64_MIN, 1);
    if (!rc)
        rc = km_mtl_estimate_task(act, T0, &ea, &err) || km_mtl_estimate_task(s, T0, &es, &err);
    CHECK(!rc && ea->l == es->l && !memcmp(ea->c, es->c, ea->l * sizeof *ea->c) &&
          !memcmp(ea->cbar, es->cbar, ea->X->l * sizeof *ea->cbar),
          "%s: active client's c_j and cbar = the server's, bit for bit", cf->name);
    e = INFINITY;
    if (!rc) {   /* their inputs come in other orders: compare g_j on the pool */
        double *ga = malloc(S.npool * sizeof *ga), *gp = malloc(S.npool * sizeof *gp);
        for (int64_t k = 0; k < S.npool; k++) {
            const km_problem *Q = S.pool;
            int64_t a0 = Q->row_ptr[k], nz = Q->row_ptr[k + 1] - a0;
            ga[k] = km_mtl_estimate_eval(ea, Q->index + a0, Q->value + a0, nz);
            gp[k] = km_mtl_estimate_eval(ep, Q->index + a0, Q->value + a0, nz);
        }
        e = relerr(ga, gp, S.npool);
        free(ga);
        free(gp);
    }
    CHECK(e <= TOL, "%s: active and passive clients' g_j agree (rel err %.2g)", cf->name, e);
    km_mtl_disclosed_free(&d);

    km_mtl_estimate_free(ep);
    km_mtl_estimate_free(ea);
    km_mtl_estimate_free(es);
    km_mtl_free(pas);
    km_mtl_free(act);
    km_mtl_free(srv);
    km_mtl_free(off);
    km_mtl_free(s);
    km_problem_free(P);
    free(c);
    stream_free(&S);
}

/* The same triples with and without disclosures in between give the same bits (the state is
 * a function of the triple sequence: journal replay reproduces it); a disclosure of the
 * inputs after `first` merged into an older one equals a full one. */
static void determinism(void)
{
    km_mtl_param p = {0.6, 0.3, {KM_KERNEL_RBF, 0.5, 0, 3, 0}, {KM_KERNEL_LINEAR, 0, 0, 1, 0}, 0, NULL};
    stream S = make_stream(11, 6, 90, 400, 9, 0, 0);
    km_error err;
    km_mtl *a = km_mtl_new(&p, &err), *b = km_mtl_new(&p, &err);
    km_mtl_disclosed da, db, old;
    feed(a, &S, 0, 150, INT64_MIN, 0);
    km_mtl_disclose(a, 0, &old, &err);
    for (int64_t k = 150; k < S.l; k += 37) {
        feed(a, &S, k, k + 37 < S.l ? k + 37 : S.l, INT64_MIN, 0);
        km_mtl_disclose(a, 0, &da, &err);   /* reads H with queued terms applied */
        km_mtl_disclosed_free(&da);
    }
    feed(b, &S, 0, S.l, INT64_MIN, 0);
    km_mtl_disclose(a, 0, &da, &err);
    km_mtl_disclose(b, 0, &db, &err);
    int64_t n = da.n;
    CHECK(da.version == db.version && n == db.n &&
          !memcmp(da.ybar, db.ybar, n * sizeof *da.ybar) &&
          !memcmp(da.H, db.H, n * n * sizeof *da.H),
          "ybar and H after 400 triples are the same bits with or without 7 reads in between");
    km_mtl_disclosed delta;
    int64_t have = old.n;
    km_mtl_disclose(b, have - 3, &delta, &err);
    int rc = km_mtl_disclosed_merge(&old, &delta, &err);
    CHECK(!rc && old.n == n && old.X->l == n && old.X->nnz == da.X->nnz &&
          !memcmp(old.X->row_ptr, da.X->row_ptr, (n + 1) * sizeof *old.X->row_ptr) &&
          !memcmp(old.X->value, da.X->value, da.X->nnz * sizeof *old.X->value) &&
          !memcmp(old.H, da.H, n * n * sizeof *da.H),
          "a disclosure of the inputs after %lld merged into the one at version 150 = a full "
          "one (%lld inputs)", (long long)(have - 3), (long long)n);
    km_mtl_disclosed_free(&da);
    km_mtl_disclosed_free(&db);
    km_mtl_disclosed_free(&old);

    /* bad triples are refused and change nothing */
    int32_t ix[] = {2, 1};
    double v[] = {1, 2};
    int64_t ver = km_mtl_version(b);
    CHECK(km_mtl_update(b, 1, ix, v, 2, 0, 1, &err) == KM_EINPUT &&
          km_mtl_update(b, 1, ix, v, 1, 0, 0, &err) == KM_EINPUT &&
          km_mtl_update(b, 1, ix, v, 1, NAN, 1, &err) == KM_EINPUT &&
          km_mtl_version(b) == ver, "decreasing indices, w = 0, y = NaN refused, state kept");
    double big[] = {12345.5};
    CHECK(km_mtl_update_private(b, 1, ix, big, 1, 0, 1, &err) == KM_EINPUT,
          "an active client's input that the server does not have is refused: %s", err.msg);
    int64_t l, tr;
    km_mtl_task_size(b, 999999, &l, &tr);
    km_mtl_estimate *e;
    rc = km_mtl_estimate_task(b, 999999, &e, &err);
    CHECK(!rc && l == 0 && e->l == 0, "a task without data gets the average task (l = 0)");
    km_mtl_estimate_free(e);
    km_mtl_free(a);
    km_mtl_free(b);
    stream_free(&S);
}

/* Whether two states disclose the same bits (version, inputs, ybar, H). */
static int same_state(km_mtl *a, km_mtl *b)
{
    km_error err;
    km_mtl_disclosed da, db;
    if (km_mtl_disclose(a, 0, &da, &err) || km_mtl_disclose(b, 0, &db, &err))
        return 0;
    int64_t n = da.n;
    int same = da.version == db.version && n == db.n && da.X->nnz == db.X->nnz &&
               !memcmp(da.X->row_ptr, db.X->row_ptr, (n + 1) * sizeof *da.X->row_ptr) &&
               (!da.X->nnz || !memcmp(da.X->value, db.X->value, da.X->nnz * 8)) &&
               (!n || (!memcmp(da.ybar, db.ybar, n * 8) && !memcmp(da.H, db.H, n * n * 8)));
    km_mtl_disclosed_free(&da);
    km_mtl_disclosed_free(&db);
    return same;
}

/* Issue 13 items 1, 2 and 9: hostile triples are refused before they change anything, an
 * input without features is an input, transactions roll back to the same bits. */
static void hostile(void)
{
    km_error err;
    /* item 2: expdot gamma 1, x = {1:1}, {1:100}, {1:100}: K(x, x) = exp(10^4) = inf */
    km_mtl_param p = {0.5, 1, {KM_KERNEL_EXPDOT, 1, 0, 3, 0}, {KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0, NULL};
    km_mtl *s = km_mtl_new(&p, &err), *ref = km_mtl_new(&p, &err);
    int32_t i0[] = {0};
    double one[] = {1}, hundred[] = {100}, v27[] = {27}, v15[] = {15.5}, two[] = {0.5};
    km_mtl_update(s, 1, i0, one, 1, 1, 1, &err);
    km_mtl_update(ref, 1, i0, one, 1, 1, 1, &err);
    int r1 = km_mtl_update(s, 1, i0, hundred, 1, 1, 1, &err);
    CHECK(r1 == KM_EINPUT && strstr(err.msg, "K(x, x) = inf"), "expdot, x = {1:100}: refused "
          "(%s)", err.msg);
    int r2 = km_mtl_update(s, 2, i0, v27, 1, 1, 1, &err);
    int r3 = km_mtl_update(s, 2, i0, v15, 1, 1, 1, &err);
    CHECK(r2 == KM_EINPUT && r3 == KM_EINPUT && strstr(err.msg, "beyond 1e+100"),
          "x = {1:27} (inf) and {1:15.5} (exp(240) = 1.6e104 > 1e100) refused too");
    CHECK(same_state(s, ref), "the refused triples left the state as it was, bit for bit");
    for (int k = 0; k < 100; k++) {   /* the same good triples afterwards: the same bits */
        double v = 0.01 * (k % 37) - 0.2;
        int64_t t = k % 5;
        km_mtl_update(s, t, i0, &v, 1, sin(k), 1, &err);
        km_mtl_update(ref, t, i0, &v, 1, sin(k), 1, &err);
    }
    km_mtl_disclosed d;
    km_mtl_disclose(s, 0, &d, &err);
    int finite = 1;
    for (int64_t i = 0; i < d.n * d.n; i++)
        finite &= isfinite(d.H[i]);
    CHECK(same_state(s, ref) && finite, "100 good triples later: the same bits as without the "
          "refused ones, H finite (n = %lld)", (long long)d.n);
    km_mtl_disclosed_free(&d);
    CHECK(km_mtl_update(s, 1, i0, two, 1, INFINITY, 1, &err) == KM_EINPUT &&
          km_mtl_update(s, 1, i0, two, 1, 1e101, 1, &err) == KM_EINPUT &&
          km_mtl_update(s, 1, i0, two, 1, 1, 1e-101, &err) == KM_EINPUT &&
          km_mtl_update(s, 1, i0, two, 1, 1, 1e101, &err) == KM_EINPUT && same_state(s, ref),
          "|y| > 1e100, w < 1e-100 or w > 1e100: refused, state kept");
    km_mtl_free(s);
    km_mtl_free(ref);

    /* item 1: feature index 2^31 - 1 (index + 1 overflows) refused, 2^31 - 2 accepted */
    km_mtl_param lp = km_mtl_param_default();
    s = km_mtl_new(&lp, &err);
    int32_t imax[] = {INT32_MAX}, imax1[] = {INT32_MAX - 1};
    int ra = km_mtl_update(s, 1, imax, one, 1, 1, 1, &err);
    CHECK(ra == KM_EINPUT && km_mtl_version(s) == 0 && strstr(err.msg, "beyond"),
          "feature index 2^31 - 1: refused (%s)", err.msg);
    int rb = km_mtl_update(s, 1, imax1, one, 1, 1, 1, &err);
    km_mtl_disclose(s, 0, &d, &err);
    CHECK(rb == KM_OK && d.X->n == INT32_MAX, "feature index 2^31 - 2: %d features, no "
          "overflow", (int)d.X->n);
    km_mtl_disclosed_free(&d);
    km_mtl_free(s);

    /* item 9: the first unique input without features (memcpy from NULL under UBSan) */
    s = km_mtl_new(&lp, &err);
    int re = km_mtl_update(s, 1, NULL, NULL, 0, 1, 1, &err);
    int rf = km_mtl_update(s, 2, NULL, NULL, 0, 2, 1, &err);
    CHECK(re == KM_OK && rf == KM_OK && km_mtl_n(s) == 1, "an input without features: one "
          "unique input, twice");
    km_mtl_free(s);
    km_problem *P = calloc(1, sizeof *P);
    int64_t rp[] = {0, 0, 1, 2};
    int32_t ix3[] = {0, 1};
    double vx3[] = {1, 2}, y3[] = {1, -1, 1};
    int64_t q3[] = {1, 1, 2};
    P->l = 3;
    P->n = 2;
    P->nnz = 2;
    P->row_ptr = rp;
    P->index = ix3;
    P->value = vx3;
    P->y = y3;
    P->qid = q3;
    km_mtl *off = NULL;
    int ro = km_mtl_offline(&lp, P, NULL, &off, &err);
    CHECK(ro == KM_OK && km_mtl_n(off) == 3, "Algorithm 4: a first row without features");
    km_mtl_free(off);
    /* item 2 offline: expdot gamma 1 on {1:1}, {1:100}: a clear error, no model */
    double vbad[] = {1, 100};
    int32_t ibad[] = {0, 0};
    int64_t rpb[] = {0, 0, 1, 2};
    P->index = ibad;
    P->value = vbad;
    P->row_ptr = rpb;
    ro = km_mtl_offline(&p, P, NULL, &off, &err);
    CHECK(ro == KM_EINPUT && !off && strstr(err.msg, "row 3") && strstr(err.msg, "expdot"),
          "Algorithm 4, expdot on x = {1:100}: refused (%s)", err.msg);
    free(P);

    /* transactions: three tasks' triples across two batches of H rolled back to the bits of
     * km_mtl_begin; committed, the same as the triples one by one within 1e-12 */
    km_mtl_param rp2 = {0.5, 0.3, {KM_KERNEL_RBF, 0.5, 0, 3, 0}, {KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0,
                        NULL};
    stream S = make_stream(21, 4, 60, 300, 4, 0, 0);
    km_mtl *a = km_mtl_new(&rp2, &err), *b = km_mtl_new(&rp2, &err);
    feed(a, &S, 0, 100, INT64_MIN, 0);
    feed(b, &S, 0, 100, INT64_MIN, 0);
    int ok = !km_mtl_begin(a, &err) && km_mtl_begin(a, &err) == KM_EUSAGE;
    ok &= !feed(a, &S, 100, 250, INT64_MIN, 0);
    int64_t mid_n = km_mtl_n(a), mid_v = km_mtl_version(a);
    km_mtl_rollback(a);
    CHECK(ok && mid_v == 250 && mid_n > km_mtl_n(b) && same_state(a, b),
          "150 triples (%lld new inputs, 2 batches of H, new tasks) rolled back: the same bits",
          (long long)(mid_n - km_mtl_n(b)));
    feed(a, &S, 100, 200, INT64_MIN, 0);
    feed(b, &S, 100, 200, INT64_MIN, 0);
    CHECK(same_state(a, b), "and the state goes on as if they never came");
    km_mtl_begin(a, &err);
    feed(a, &S, 200, 300, INT64_MIN, 0);
    int rc = km_mtl_commit(a, &err);
    feed(b, &S, 200, 300, INT64_MIN, 0);
    km_mtl_disclosed da, db;
    km_mtl_disclose(a, 0, &da, &err);
    km_mtl_disclose(b, 0, &db, &err);
    double e = relerr(da.H, db.H, da.n * da.n);
    CHECK(!rc && da.version == 300 && e < 1e-12, "100 triples in one transaction committed = "
          "one by one (H rel err %.2g)", e);
    km_mtl_disclosed_free(&da);
    km_mtl_disclosed_free(&db);
    km_mtl_free(a);
    km_mtl_free(b);
    /* the exact check of H's update at every commit (the cheap bound skips it here): the
     * same state within rounding, and a rollback across it the same bits */
    a = km_mtl_new(&rp2, &err);
    b = km_mtl_new(&rp2, &err);
    km_mtl_exact_checks(a, 1);
    feed(a, &S, 0, 150, INT64_MIN, 0);
    feed(b, &S, 0, 150, INT64_MIN, 0);
    km_mtl *c = km_mtl_new(&rp2, &err);
    km_mtl_exact_checks(c, 1);
    feed(c, &S, 0, 150, INT64_MIN, 0);
    km_mtl_begin(c, &err);
    feed(c, &S, 150, 300, INT64_MIN, 0);
    km_mtl_rollback(c);
    int same_ac = same_state(a, c);
    feed(a, &S, 150, 300, INT64_MIN, 0);
    feed(b, &S, 150, 300, INT64_MIN, 0);
    km_mtl_disclose(a, 0, &da, &err);
    km_mtl_disclose(b, 0, &db, &err);
    e = relerr(da.H, db.H, da.n * da.n);
    double ey = relerr(da.ybar, db.ybar, da.n);
    CHECK(same_ac && e < 1e-12 && ey < 1e-12, "exact checks at every commit: H and ybar = "
          "those of the cheap bound (rel err %.2g, %.2g); a rollback over them: the same bits",
          e, ey);
    km_mtl_disclosed_free(&da);
    km_mtl_disclosed_free(&db);
    km_mtl_free(a);
    km_mtl_free(b);
    km_mtl_free(c);
    stream_free(&S);

    /* the map under deletions (rollback removes tasks and inputs) */
    km_imap m = {0};
    int64_t want[512];
    km_rng r;
    km_rng_seed(&r, 5);
    for (int k = 0; k < 512; k++)
        want[k] = -1;
    int good = 1;
    for (int k = 0; k < 20000; k++) {
        int64_t key = (int64_t)km_rng_below(&r, 512);
        if (km_rng_below(&r, 3)) {
            km_imap_put(&m, key * 64, k);
            want[key] = k;
        } else {
            km_imap_del(&m, key * 64);
            want[key] = -1;
        }
        if (k % 97 == 0)
            for (int j = 0; j < 512; j++)
                good &= km_imap_get(&m, j * 64) == want[j];
    }
    int64_t cnt = 0;
    for (int j = 0; j < 512; j++)
        cnt += want[j] >= 0;
    CHECK(good && m.count == cnt, "hash map: 20,000 random puts and deletions agree with a "
          "table (%lld keys)", (long long)cnt);
    km_imap_free(&m);
}

/* The text of a file (malloc'ed). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *t = calloc(1 << 20, 1);
    if (f) {
        size_t n = fread(t, 1, (1 << 20) - 1, f);
        t[n] = '\0';
        fclose(f);
    }
    return t;
}

/* train -s mtl's model (every task) and mtl-client's (one task) written, read back and
 * applied by km_model_decision_rows with rows' qid: the estimates' values (with each
 * task's own K~_j when p has them: stored as a task_kernels section, the others not). */
static void model_file(const km_mtl_param *pp, const char *name)
{
    km_mtl_param p = *pp;
    stream S = make_stream(21, 6, 50, 200, 7, 1, 0);
    km_error err;
    km_mtl *s = km_mtl_new(&p, &err);
    feed(s, &S, 0, S.l, INT64_MIN, 0);
    const char *path = "test_mtl.tmp.model";
    km_model *m = NULL, *back = NULL;
    int rc = km_mtl_model(s, NULL, 0, 6, &m, &err) || km_model_write(m, path, &err) ||
             km_model_read(path, &back, &err);
    CHECK(!rc && km_model_mtl(back) && km_model_mtl(back)->nr_task == 7 &&
          km_model_mtl(back)->e.sv->l == km_mtl_n(s),
          "%s: an mtl model of 7 tasks is written and read back (%s)", name,
          rc ? err.msg : "ok");
    char *text = slurp(path), *sec = strstr(text, "\ntask_kernels ");
    char want[64];
    snprintf(want, sizeof want, "\ntask_kernels %lld\n", (long long)p.ntk);
    CHECK(p.ntk ? sec && !strncmp(sec, want, strlen(want)) : !sec,
          "%s: the file has %s", name, p.ntk ? want + 1 : "no task_kernels section (the "
          "format of before)");
    if (p.ntk && sec) {   /* the last task_kernels line names a task the model lacks */
        char *line = sec + strlen(want);
        for (int64_t k = 1; k < p.ntk; k++)
            line = strchr(line, '\n') + 1;
        char *sp = strchr(line, ' ');
        int lineno = 1;
        for (char *q = text; q < line; q++)
            lineno += *q == '\n';
        FILE *f = fopen(path, "wb");
        fprintf(f, "%.*s999%s", (int)(line - text), text, sp);
        fclose(f);
        km_model *bad = NULL;
        char where[64];
        snprintf(where, sizeof where, "%s:%d: task_kernels: task 999", path, lineno);
        rc = km_model_read(path, &bad, &err);
        CHECK(rc == KM_EINPUT && !bad && strstr(err.msg, where), "%s: a task kernel for a "
              "task not in the model: %s", name, rc ? err.msg : "read");
        rc = 0;
    }
    free(text);
    /* every task, an unknown task (-> average), and no qid (-> average with 7 tasks) */
    int64_t ids[9];
    for (int t = 0; t < 7; t++)
        ids[t] = t * 7 - 3;
    ids[7] = 12345;
    ids[8] = INT64_MIN;
    km_problem X = *S.pool;
    int64_t *qids = malloc(X.l * sizeof *qids);
    X.qid = qids;
    double *dec = malloc(X.l * sizeof *dec), worst = 0;
    for (int t = 0; t < 9 && !rc; t++) {
        for (int64_t k = 0; k < X.l; k++)
            X.qid[k] = ids[t];
        km_mtl_estimate *e;
        rc = km_model_decision_rows(back, &X, NULL, X.l, dec, 1, &err) ||
             km_mtl_estimate_task(s, ids[t] == 12345 ? INT64_MIN : ids[t], &e, &err);
        for (int64_t k = 0; k < X.l && !rc; k++) {
            int64_t a = X.row_ptr[k];
            double g = km_mtl_estimate_eval(e, X.index + a, X.value + a, X.row_ptr[k + 1] - a);
            worst = fmax(worst, fabs(dec[k] - g) / fmax(1, fabs(g)));
        }
        if (!rc)
            km_mtl_estimate_free(e);
    }
    CHECK(!rc && worst <= 1e-12, "%s: predicting with the model read back = the estimates of "
          "every task, of an unknown task and without qid (the average task) (%.2g)", name,
          worst);
    km_model_free(m);
    km_model_free(back);
    /* one task: rows without qid get that task */
    rc = km_mtl_model(s, &ids[2], 1, 6, &m, &err);
    km_mtl_estimate *e = NULL;
    worst = INFINITY;
    if (!rc && !(rc = km_mtl_estimate_task(s, ids[2], &e, &err))) {
        X.qid = NULL;
        rc = km_model_decision_rows(m, &X, NULL, X.l, dec, 1, &err);
        worst = 0;
        for (int64_t k = 0; k < X.l && !rc; k++) {
            int64_t a = X.row_ptr[k];
            double g = km_mtl_estimate_eval(e, X.index + a, X.value + a, X.row_ptr[k + 1] - a);
            worst = fmax(worst, fabs(dec[k] - g) / fmax(1, fabs(g)));
        }
    }
    CHECK(!rc && worst <= 1e-12, "%s: a one-task model predicts rows without qid with its "
          "task (%.2g)", name, worst);
    km_mtl_estimate_free(e);
    km_model_free(m);
    free(dec);
    free(qids);
    unlink(path);
    km_mtl_free(s);
    stream_free(&S);
}

/* The task-kernel file: 'TASK KERNEL' lines read into a sorted table; errors FILE:LINE. */
static void task_kernel_file(void)
{
    const char *path = "test_mtl.tmp.kernels";
    FILE *f = fopen(path, "w");
    fputs("# per-task K~_j\n\n11 poly gamma=0.5 coef0=1 degree=2\n  -3\tlinear\n"
          "4 rbf gamma=2 features=all\n", f);
    fclose(f);
    km_mtl_tkernel *tk = NULL;
    int64_t n = 0;
    km_error err;
    int rc = km_mtl_read_task_kernels(path, &tk, &n, &err);
    km_mtl_param p = {0.5, 1, {KM_KERNEL_RBF, 1, 0, 3, 0}, {KM_KERNEL_LAPLACIAN, 0.3, 0, 3, 0}, n, tk};
    const km_kernel *k3 = rc ? NULL : km_mtl_task_kernel(&p, -3),
                    *k4 = rc ? NULL : km_mtl_task_kernel(&p, 4),
                    *k11 = rc ? NULL : km_mtl_task_kernel(&p, 11),
                    *k5 = rc ? NULL : km_mtl_task_kernel(&p, 5);
    CHECK(!rc && n == 3 && tk[0].task == -3 && tk[1].task == 4 && tk[2].task == 11 &&
          k3->type == KM_KERNEL_LINEAR && k4->type == KM_KERNEL_RBF && k4->gamma == 2 &&
          k11->type == KM_KERNEL_POLY && k11->gamma == 0.5 && k11->coef0 == 1 &&
          k11->degree == 2 && k5 == &p.Kt && !km_mtl_param_check(&p, 5, &err),
          "a task-kernel file (comments, blank lines, tabs, any order) gives the sorted table; "
          "a task not in it gets the default K~ (%s)", rc ? err.msg : "ok");
    free(tk);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"1 linear\n\n1 rbf\n", ":3: task 1 already has a kernel (line 1)"},
        {"2 rbf gamma=0.1 features=1-3\n", ":1: a task kernel sees all features"},
        {"# x\nrbf gamma=0.1\n", ":2: expected 'TASK KERNEL' with an integer task id"},
        {"3 gauss\n", ":1: unknown kernel 'gauss'"},
        {"3 rbf gamma=0\n", ":1: "},
        {"3 linear gamma=2\n", ":1: the linear kernel has no parameter gamma"},
        {"3 sigmoid\n", ":1: the sigmoid kernel is indefinite"},
        {"3\n", ":1: expected 'TASK KERNEL'"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        f = fopen(path, "w");
        fputs(bad[b].text, f);
        fclose(f);
        char want[160];
        snprintf(want, sizeof want, "%s%s", path, bad[b].want);
        rc = km_mtl_read_task_kernels(path, &tk, &n, &err);
        CHECK(rc == KM_EINPUT && !tk && n == 0 && !strncmp(err.msg, want, strlen(want)),
              "a bad task-kernel file gives FILE:LINE: %s", rc ? err.msg : "accepted");
    }
    /* unsorted tables and a kernel invalid for the data are refused by the parameter check */
    km_mtl_tkernel two[] = {{5, {KM_KERNEL_LINEAR, 1, 0, 3, 0}}, {2, {KM_KERNEL_LINEAR, 1, 0, 3, 0}}};
    km_mtl_tkernel spl[] = {{5, {KM_KERNEL_SPLINE, 1, 0, 3, 0}}};
    p.ntk = 2;
    p.tk = two;
    CHECK(km_mtl_param_check(&p, 0, &err) == KM_EUSAGE && !km_mtl_new(&p, &err),
          "task kernels not sorted by task: %s", err.msg);
    p.ntk = 1;
    p.tk = spl;
    CHECK(km_mtl_param_check(&p, 3, &err) == KM_EUSAGE && strstr(err.msg, "task 5"),
          "a spline K~_j on 3 features: %s", err.msg);
    unlink(path);
}

int main(void)
{
    km_kernel lin = {KM_KERNEL_LINEAR, 0, 0, 1, 0}, rbf = {KM_KERNEL_RBF, 0.5, 0, 3, 0},
              expdot = {KM_KERNEL_EXPDOT, 1, 0, 3, 0}, poly = {KM_KERNEL_POLY, 0.5, 1, 2, 0},
              lap = {KM_KERNEL_LAPLACIAN, 0.3, 0, 3, 0};
    const km_mtl_tkernel tk[] = {{-3, lin}, {4, {KM_KERNEL_RBF, 2, 0, 3, 0}}, {11, poly}};
    config cf[] = {
        {"rbf/linear a=0.5", rbf, lin, 0.5, 0.5, 5, 60, 260, 8, 0, 0, 1, 0, NULL},
        {"expdot/linear sphere (thesis 5.4) a=0.25", expdot, lin, 0.25, 0.05, 8, 70, 300, 12, 1,
         1, 1, 0, NULL},
        {"linear (rank 3 < n: dropped pivots)/rbf a=0.7", lin, rbf, 0.7, 0.2, 3, 40, 200, 6, 0, 0,
         0, 0, NULL},
        {"poly (rank 15 < n)/laplacian a=0.3", poly, lap, 0.3, 1.0, 4, 50, 200, 5, 0, 0, 0, 0, NULL},
        {"alpha=0 (separate)", rbf, lin, 0.0, 0.5, 5, 40, 150, 5, 0, 0, 1, 0, NULL},
        {"alpha=1 (pooled)", rbf, lin, 1.0, 0.5, 5, 40, 150, 5, 0, 0, 1, 0, NULL},
        {"one task, many repeats", lap, rbf, 0.4, 0.3, 3, 12, 180, 1, 0, 0, 1, 0, NULL},
        {"per-task K~_j (linear task -3, rbf task 4, poly task 11, laplacian the rest)", rbf,
         lap, 0.4, 0.3, 5, 50, 260, 7, 0, 0, 1, 3, tk},
        {"per-task K~_j, alpha=0 (separate)", expdot, lap, 0.0, 0.2, 5, 40, 200, 7, 1, 0, 1, 3,
         tk},
    };
    for (size_t k = 0; k < sizeof cf / sizeof *cf; k++)
        run_config(&cf[k], 100 + k);
    determinism();
    hostile();
    km_mtl_param mp = {0.3, 0.2, expdot, lin, 0, NULL};
    model_file(&mp, "one K~");
    mp.ntk = 2;   /* tasks 4 and 11 (ids t * 7 - 3) */
    mp.tk = (const km_mtl_tkernel[]){{4, rbf}, {11, {KM_KERNEL_POLY, 1, 1, 2, 0}}};
    model_file(&mp, "per-task K~_j");
    task_kernel_file();
    TEST_EXIT();
}
