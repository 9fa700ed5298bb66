/* test_dist.c - the transport of dist.h without MPI: the serial backend and the simulation of
 * R ranks give the collectives' results (reductions in rank order, bit for bit), count the
 * collectives and bytes exactly, agree on errors, and run tasks across ranks with the results
 * of km_tasks_run; train's searches (-C, --grid) on ranks give the serial table and scores. */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "dist.h"
#include "method.h"
#include "model.h"
#include "search.h"
#include "svmlight.h"
#include "test.h"

#define MAXR 64
#define NT 11

typedef struct run {
    int R;
    int bad[MAXR];               /* per rank: its check failed */
    km_dist_stats want[MAXR];    /* the counts each rank expects of itself */
    double out[MAXR][NT];        /* per rank: the task results it ends with */
    int64_t failed[MAXR];
    char msg[MAXR][64];
    int fail_tasks;              /* tasks 3 and 5 fail */
} run;

static double value(int r, int64_t i) { return 1.0 / (3.0 + r) + 1e-3 * (double)i * (r + 1); }

typedef struct tctx {
    double res[NT];
    int fail;
    km_error *errs;
} tctx;

static int task(void *ctx, int64_t t, int worker)
{
    (void)worker;
    tctx *c = ctx;
    c->res[t] = 1.0 / (double)(t + 7);
    if (c->fail && (t == 3 || t == 5))
        return km_error_set(&c->errs[t], KM_EINPUT, "task %d", (int)t);
    return KM_OK;
}
static int64_t t_size(void *ctx, int64_t t) { (void)ctx, (void)t; return 8; }
static void t_pack(void *ctx, int64_t t, void *buf) { memcpy(buf, &((tctx *)ctx)->res[t], 8); }
static int t_unpack(void *ctx, int64_t t, const void *buf, km_error *err)
{
    (void)err;
    memcpy(&((tctx *)ctx)->res[t], buf, 8);
    return KM_OK;
}

static int rank_fn(km_dist *d, void *arg)
{
    run *X = arg;
    int r = d->rank, R = d->size, bad = 0;
    km_error err = {0};
    km_dist_stats want = {0, 0};
    /* allreduce sum and max of doubles: the left fold in rank order, the same bits */
    double v[5], s[5];
    for (int i = 0; i < 5; i++) {
        v[i] = value(r, i);
        s[i] = value(0, i);
        for (int q = 1; q < R; q++)
            s[i] += value(q, i);
    }
    bad |= km_dist_allreduce(d, v, 5, KM_DIST_SUM, &err) != 0;
    bad |= memcmp(v, s, sizeof v) != 0;
    want.collectives++, want.bytes += 40;
    double mx = -(double)r;
    bad |= km_dist_allreduce(d, &mx, 1, KM_DIST_MAX, &err) != 0 || mx != 0;
    want.collectives++, want.bytes += 8;
    int64_t im[2] = {r, 2 * r};
    bad |= km_dist_allreduce_i64(d, im, 2, KM_DIST_SUM, &err) != 0;
    bad |= im[0] != (int64_t)R * (R - 1) / 2 || im[1] != (int64_t)R * (R - 1);
    want.collectives++, want.bytes += 16;
    /* exscan */
    int64_t e = r + 1;
    bad |= km_dist_exscan(d, &e, &err) != 0 || e != (int64_t)r * (r + 1) / 2;
    want.collectives++, want.bytes += 8;
    /* allgatherv: rank q sends q + 1 bytes of value q */
    int64_t rb[MAXR], rd[MAXR], tot = 0;
    for (int q = 0; q < R; q++) {
        rb[q] = q + 1;
        rd[q] = tot;
        tot += q + 1;
    }
    char sb[MAXR + 1], all[MAXR * (MAXR + 1) / 2 + 1];
    memset(sb, 'a' + r % 26, sizeof sb);
    memset(all, 0, sizeof all);
    bad |= km_dist_allgatherv(d, sb, r + 1, all, rb, rd, &err) != 0;
    for (int q = 0; q < R; q++)
        for (int k = 0; k <= q; k++)
            bad |= all[rd[q] + k] != 'a' + q % 26;
    want.collectives++, want.bytes += r + 1;
    memset(all, 0, sizeof all);
    bad |= km_dist_gatherv(d, sb, r + 1, all, rb, rd, &err) != 0;
    for (int q = 0; q < R; q++)
        for (int k = 0; k <= q; k++)
            bad |= all[rd[q] + k] != (r == 0 ? 'a' + q % 26 : 0);
    want.collectives++, want.bytes += r + 1;
    /* alltoallv: r sends to q the 8-byte value 100 r + q */
    int64_t snd[MAXR], rcv[MAXR], b8[MAXR], disp[MAXR];
    for (int q = 0; q < R; q++) {
        snd[q] = 100 * r + q;
        rcv[q] = -1;
        b8[q] = 8;
        disp[q] = 8 * q;
    }
    bad |= km_dist_alltoallv(d, snd, b8, disp, rcv, b8, disp, &err) != 0;
    for (int q = 0; q < R; q++)
        bad |= rcv[q] != 100 * q + r;
    want.collectives++, want.bytes += 8 * (R - 1);
    /* bcast from the last rank */
    int64_t bc[3] = {r, r, r};
    bad |= km_dist_bcast(d, bc, sizeof bc, R - 1, &err) != 0 || bc[0] != R - 1 || bc[2] != R - 1;
    want.collectives++, want.bytes += r == R - 1 ? 24 : 0;
    /* agreement: ranks >= 1 fail (rank 1's message wins), or nobody */
    int rc = r >= 1 ? km_error_set(&err, KM_EINPUT, "f:%d:1: rank %d failed", r, r) : KM_OK;
    rc = km_dist_agree(d, rc, &err);
    bad |= R > 1 ? rc != KM_EINPUT || strcmp(err.msg, "f:1:1: rank 1 failed") != 0 : rc != 0;
    want.collectives += R > 1 ? 2 : 1, want.bytes += 8 + (R > 1 && r == 1 ? (int64_t)sizeof err : 0);
    /* tasks across ranks: every rank ends with every task's result */
    km_error errs[NT] = {{0}};
    tctx c = {{0}, X->fail_tasks, errs};
    km_dist *old = km_dist_tasks_use(d);
    km_task_io io = {t_size, t_pack, t_unpack};
    int64_t failed = -2;
    rc = km_dist_tasks_run(NT, 2, task, &io, &c, errs, &failed);
    km_dist_tasks_use(old);
    X->failed[r] = failed;
    if (rc)
        snprintf(X->msg[r], sizeof X->msg[r], "%s", errs[failed].msg);
    memcpy(X->out[r], c.res, sizeof c.res);
    X->bad[r] = bad;
    X->want[r] = want;
    return KM_OK;
}

/* ---- reading over ranks ---- */

typedef struct rjob {
    const char *path;
    int rc[MAXR];
    char msg[MAXR][1024];
    km_problem *P[MAXR];
    int64_t *line[MAXR];
} rjob;

static int read_fn(km_dist *d, void *arg)
{
    rjob *J = arg;
    km_error err = {0};
    int r = d->rank;
    J->rc[r] = km_dist_read(d, J->path, 0, &J->P[r], &J->line[r], &err);
    snprintf(J->msg[r], sizeof J->msg[r], "%s", J->rc[r] ? err.msg : "");
    return KM_OK;
}

/* Lines of the text: start offsets of every line (1-based line k starts at st[k - 1]). */
static int line_starts(const char *text, int64_t *st)
{
    int n = 0;
    size_t len = strlen(text);
    for (size_t i = 0; i < len; i++)
        if (i == 0 || text[i - 1] == '\n')
            st[n++] = (int64_t)i;
    return n;
}

static void test_read(void)
{
    /* blank and comment lines, a long line, CRLF, and no newline at the end */
    char text[8192] = "";
    strcat(text, "+1 1:0.5 3:2\n\n# comment\n-1 2:1.25\r\n+1 1:1 2:2 3:3 4:4\n");
    for (int i = 0; i < 40; i++) {
        char row[128];
        snprintf(row, sizeof row, "%s %d:%d.5 %d:-1e-3  # c\n", i % 3 ? "-1" : "+1", i % 7 + 1, i,
                 i % 7 + 9);
        strcat(text, row);
    }
    strcat(text, "-1 5:");
    for (int i = 0; i < 300; i++)
        strcat(text, "1");
    strcat(text, " 6:2\n+1 7:7");
    char path[] = "/tmp/km_test_dist_XXXXXX";
    int fd = mkstemp(path);
    int wrote = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    if (fd >= 0)
        close(fd);
    CHECK(wrote, "temporary data file");
    km_problem *S = NULL;
    km_error err;
    CHECK(km_svmlight_read(path, &S, &err) == 0, "serial read");
    int64_t st[256];
    int nl = line_starts(text, st);
    int64_t size = (int64_t)strlen(text);
    static rjob J;
    for (int R = 1; R <= 7 && S; R++) {
        memset(&J, 0, sizeof J);
        J.path = path;
        int rcs[MAXR];
        km_dist_sim_run(R, read_fn, &J, rcs, NULL, &err);
        int ok = 1, same = 1;
        int64_t k = 0;   /* serial row index */
        for (int r = 0; r < R; r++) {
            ok &= J.rc[r] == 0;
            if (J.rc[r])
                continue;
            const km_problem *P = J.P[r];
            int64_t a = size * r / R, b = size * (r + 1) / R;
            for (int64_t i = 0; i < P->l; i++, k++) {
                int64_t ln = J.line[r][i], s0 = st[ln - 1];
                ok &= ln >= 1 && ln <= nl && s0 >= a && s0 < b;   /* it starts in the range */
                same &= k < S->l && P->y[i] == S->y[k] &&
                        P->row_ptr[i + 1] - P->row_ptr[i] == S->row_ptr[k + 1] - S->row_ptr[k] &&
                        memcmp(P->value + P->row_ptr[i], S->value + S->row_ptr[k],
                               (size_t)(P->row_ptr[i + 1] - P->row_ptr[i]) * 8) == 0;
            }
        }
        CHECK(ok && same && k == S->l, "R = %d: each rank reads exactly the rows whose lines "
              "start in its byte range, with their global line numbers; all rows once, as "
              "serial reading", R);
        for (int r = 0; r < R; r++) {
            km_problem_free(J.P[r]);
            free(J.line[r]);
        }
    }
    km_problem_free(S);
    /* a bad line anywhere: the serial message for every R */
    for (int bad = 0; bad < 3; bad++) {
        char t2[8192];
        snprintf(t2, sizeof t2, "%s", text);
        char *at = bad == 0 ? strstr(t2, "2:1.25") : bad == 1 ? strstr(t2, "3:-1e-3")
                                                              : strstr(t2, "7:7");
        at[1] = '@';
        FILE *f = fopen(path, "wb");
        fputs(t2, f);
        fclose(f);
        S = NULL;
        char want[1024];
        km_svmlight_read(path, &S, &err);
        snprintf(want, sizeof want, "%s", err.msg);
        int ok = S == NULL;
        for (int R = 1; R <= 7; R++) {
            memset(&J, 0, sizeof J);
            J.path = path;
            int rcs[MAXR];
            km_dist_sim_run(R, read_fn, &J, rcs, NULL, &err);
            for (int r = 0; r < R; r++) {
                ok &= J.rc[r] == KM_EINPUT && strcmp(J.msg[r], want) == 0;
                if (strcmp(J.msg[r], want) != 0)
                    printf("  R = %d rank %d: '%s' want '%s'\n", R, r, J.msg[r], want);
                km_problem_free(J.P[r]);
                free(J.line[r]);
            }
        }
        CHECK(ok, "bad line %d: every rank of every R in 1..7 reports '%s'", bad, want);
    }
    unlink(path);
}

/* ---- folds and classes on ranks: the serial bits ---- */

typedef struct tjob {
    const km_problem *P3;          /* 3 classes */
    double *pred[MAXR];
    km_model *model[MAXR];
    int rc[MAXR];
} tjob;

static int tasks_fn(km_dist *d, void *arg)
{
    tjob *J = arg;
    km_error err;
    int r = d->rank;
    km_params *p = km_params_new();
    km_dist *old = km_dist_tasks_use(d);
    km_report rep;
    J->rc[r] = km_params_set(p, "-n", "1", &err) ||
               km_method_cross_validate(km_method_find("l1svm"), J->P3, p, 5, J->pred[r], &rep,
                                        &err);
    if (!J->rc[r])
        km_report_free(&rep);
    J->rc[r] |= km_method_train(km_method_find("l2svm"), J->P3, p, &J->model[r], &rep, &err);
    if (J->model[r])
        km_report_free(&rep);
    km_dist_tasks_use(old);
    km_params_free(p);
    return 0;
}

static void test_tasks(void)
{
    km_problem *P = NULL;
    km_error err;
    if (km_svmlight_read("data/heart_scale", &P, &err)) {
        CHECK(0, "read data/heart_scale: %s", err.msg);
        return;
    }
    for (int64_t i = 0; i < P->l; i++)   /* 3 classes: one-versus-all inside every fold */
        P->y[i] = (double)(i % 3 + 1);
    static tjob J;
    memset(&J, 0, sizeof J);
    J.P3 = P;
    double *pred0 = malloc((size_t)P->l * sizeof *pred0);
    km_model *m0 = NULL;
    km_params *p = km_params_new();
    km_report rep;
    km_params_set(p, "-n", "1", &err);
    km_method_cross_validate(km_method_find("l1svm"), P, p, 5, pred0, &rep, &err);
    km_report_free(&rep);
    km_method_train(km_method_find("l2svm"), P, p, &m0, &rep, &err);
    km_report_free(&rep);
    km_params_free(p);
    int64_t nw = (int64_t)(P->n + 0) * 3;
    for (int R = 2; R <= 4 && m0; R++) {
        for (int r = 0; r < R; r++)
            J.pred[r] = malloc((size_t)P->l * sizeof(double));
        int rcs[MAXR];
        km_dist_sim_run(R, tasks_fn, &J, rcs, NULL, &err);
        int cv = 1, ova = 1;
        for (int r = 0; r < R; r++) {
            cv &= J.rc[r] == 0 && memcmp(J.pred[r], pred0, (size_t)P->l * sizeof *pred0) == 0;
            ova &= J.model[r] && memcmp(km_model_w(J.model[r]), km_model_w(m0),
                                        (size_t)nw * sizeof(double)) == 0;
            free(J.pred[r]);
            km_model_free(J.model[r]);
            J.model[r] = NULL;
        }
        CHECK(cv, "R = %d: -v 5 folds on ranks (one-versus-all inside): every prediction has "
              "the serial bits on every rank", R);
        CHECK(ova, "R = %d: one-versus-all classes on ranks: w has the serial bits on every "
              "rank", R);
    }
    km_model_free(m0);
    free(pred0);
    km_problem_free(P);
}

/* ---- the searches on simulated ranks: the serial report and scores, bit for bit ---- */
typedef struct sjob {
    const km_problem *P;
    int grid;                 /* 1: --grid over C x gamma (rbf), 0: -C --metric auc */
    char *text[MAXR];
    double score[MAXR][64];
    int npoints[MAXR], best[MAXR], nwarn[MAXR], rc[MAXR];
} sjob;

static int search_run(const km_problem *P, int grid, char **text, double *score, int *npoints,
                      int *best, int *nwarn)
{
    km_error err;
    km_params *p = km_params_new();
    km_report rep;
    km_search S;
    const km_method *m = km_method_find(grid ? "l1svm" : "l2svm");
    int rc = km_params_set(p, "-n", "1", &err);
    if (grid)   /* --max-iter 3: warnings, which must travel with their columns */
        rc = rc || km_params_set(p, "-t", "rbf", &err) || km_params_set(p, "--max-iter", "3", &err);
    rc = rc || (grid ? km_search_grid(m, P, p, 3, NULL, "C=-2:2:3,g=-4:-2:3", &S, &rep, &err)
                     : km_search_C(m, P, p, 4, "auc", &S, &rep, &err));
    km_params_free(p);
    if (rc)
        return rc;
    *text = strdup(rep.text ? rep.text : "");
    *npoints = S.npoints < 64 ? S.npoints : 64;
    for (int i = 0; i < *npoints; i++)
        score[i] = S.points[i].score;
    *best = S.best;
    *nwarn = rep.nr_warnings;
    km_report_free(&rep);
    km_search_free(&S);
    return 0;
}

static int search_fn(km_dist *d, void *arg)
{
    sjob *J = arg;
    int r = d->rank;
    km_dist *old = km_dist_tasks_use(d);
    J->rc[r] = search_run(J->P, J->grid, &J->text[r], J->score[r], &J->npoints[r], &J->best[r],
                          &J->nwarn[r]);
    km_dist_tasks_use(old);
    return 0;
}

static void test_search(void)
{
    km_problem *P = NULL;
    km_error err;
    if (km_svmlight_read("data/heart_scale", &P, &err)) {
        CHECK(0, "read data/heart_scale: %s", err.msg);
        return;
    }
    for (int grid = 0; grid < 2; grid++) {
        char *text0 = NULL;
        double score0[64];
        int n0 = 0, best0 = -1, w0 = 0;
        int rc0 = search_run(P, grid, &text0, score0, &n0, &best0, &w0);
        CHECK(rc0 == 0 && n0 == (grid ? 9 : n0) && n0 > 1, "%s: the serial search ran (%d "
              "points)", grid ? "--grid" : "-C", n0);
        if (grid)
            CHECK(w0 > 0, "--grid --max-iter 3: warnings to carry (%d)", w0);
        for (int R = 2; R <= 5 && rc0 == 0; R++) {   /* 3 columns: on ranks at R <= 3 */
            static sjob J;
            memset(&J, 0, sizeof J);
            J.P = P;
            J.grid = grid;
            int rcs[MAXR], same = 1;
            km_dist_sim_run(R, search_fn, &J, rcs, NULL, &err);
            for (int r = 0; r < R; r++) {
                same &= J.rc[r] == 0 && J.text[r] && strcmp(J.text[r], text0) == 0 &&
                        J.npoints[r] == n0 && J.best[r] == best0 && J.nwarn[r] == w0 &&
                        memcmp(J.score[r], score0, (size_t)n0 * sizeof *score0) == 0;
                free(J.text[r]);
            }
            CHECK(same, "R = %d: %s on ranks: every rank has the serial table, scores (bits), "
                  "best point and warnings", R, grid ? "--grid (C x gamma columns)" :
                  "-C --metric auc (folds)");
        }
        free(text0);
    }
    km_problem_free(P);
}

int main(void)
{
    test_read();
    test_tasks();
    test_search();
    static run X;
    int Rs[] = {1, 2, 3, 4, 7, 64};
    for (size_t q = 0; q < sizeof Rs / sizeof *Rs; q++) {
        for (int fail = 0; fail < 2; fail++) {
            int R = Rs[q], rcs[MAXR];
            km_dist_stats st[MAXR];
            km_error err;
            memset(&X, 0, sizeof X);
            X.R = R;
            X.fail_tasks = fail;
            CHECK(km_dist_sim_run(R, rank_fn, &X, rcs, st, &err) == 0, "R = %d runs", R);
            int bad = 0, stats_ok = 1, tasks_ok = 1;
            for (int r = 0; r < R; r++) {
                bad |= X.bad[r] || rcs[r];
                /* the tasks: 1 allreduce, then (no failure) the count allgather, the
                 * agreement's allreduce and the results' allgatherv; failure: a bcast */
                km_dist_stats w = X.want[r];
                if (R > 1 && fail) {
                    w.collectives += 2;
                    w.bytes += 8 + (r == 3 % R ? (int64_t)sizeof(km_error) : 0);
                } else if (R > 1) {
                    int64_t mine = 0;
                    for (int t = r; t < NT; t += R)
                        mine += 16;
                    w.collectives += 4;
                    w.bytes += 8 + 8 + 8 + mine;
                }
                stats_ok &= st[r].collectives == w.collectives && st[r].bytes == w.bytes;
                for (int t = 0; t < NT; t++)
                    if (!fail)   /* a failure discards the results */
                        tasks_ok &= X.out[r][t] == 1.0 / (double)(t + 7);
                tasks_ok &= fail ? X.failed[r] == 3 && strcmp(X.msg[r], "task 3") == 0
                                 : X.failed[r] == -1;
            }
            CHECK(!bad, "R = %d: reductions in rank order, gathers, alltoallv, bcast, exscan, "
                  "agreement", R);
            CHECK(stats_ok, "R = %d%s: collectives and bytes counted exactly", R,
                  fail ? " (failing tasks)" : "");
            if (!tasks_ok)
                for (int r = 0; r < R; r++)
                    printf("  rank %d: failed %lld '%s'\n", r, (long long)X.failed[r], X.msg[r]);
            CHECK(tasks_ok, "R = %d: tasks %s", R,
                  fail ? "3 and 5 fail: task 3's error on every rank"
                       : "on ranks: every rank has every result");
        }
    }
    /* serial backend */
    km_dist d;
    km_dist_serial(&d);
    km_error err;
    double v[2] = {1.5, 2.5};
    int64_t e = 5;
    char buf[4] = "abc", out[4] = "";
    int64_t b3 = 3, z = 0;
    CHECK(d.rank == 0 && d.size == 1 && km_dist_allreduce(&d, v, 2, KM_DIST_SUM, &err) == 0 &&
          v[0] == 1.5 && km_dist_exscan(&d, &e, &err) == 0 && e == 0 &&
          km_dist_allgatherv(&d, buf, 3, out, &b3, &z, &err) == 0 && memcmp(out, "abc", 3) == 0,
          "serial backend");
    CHECK(d.stats.collectives == 3 && d.stats.bytes == 16 + 8 + 3, "serial counts");
    TEST_EXIT();
}
