/* test_cocoa.c - CoCoA+ linear CD on the simulated ranks of dist.h: for the five losses and
 * R in {1, 2, 3, 4} the objective of the returned w, computed here over all rows, is within
 * 2e-3 (relative) of a tight serial optimum and below its certified gap; the same R twice
 * gives the same bits; every rank has the same w; the communication is one allreduce of
 * 8 (n + 3) bytes per round, counted exactly; hash partitioning keeps every row once. */
#include <stdlib.h>
#include <string.h>

#include "cocoa.h"
#include "kernel.h"
#include "svmlight.h"
#include "test.h"
#include "testutil.h"

#define MAXR 8

typedef struct job {
    const km_problem *P;       /* all rows (each rank keeps its share) */
    km_loss loss;
    double delta;
    int rounds_at_1;
    double w[MAXR][64];
    km_cocoa_result res[MAXR];
    int64_t rows[MAXR];
    int64_t linesum[MAXR];
    int rc[MAXR];
} job;

static int rank_fn(km_dist *d, void *arg)
{
    job *J = arg;
    const km_problem *P = J->P;
    int r = d->rank;
    km_error err;
    /* the rows whose line (here: index + 1) hashes to this rank; "read" = block of rows */
    int64_t lo = P->l * r / d->size, hi = P->l * (r + 1) / d->size;
    int64_t *rows = calloc((size_t)(hi - lo + 1), sizeof *rows), *line = NULL;
    for (int64_t i = lo; i < hi; i++)
        rows[i - lo] = i;
    km_problem *B = km_problem_subset(P, rows, hi - lo, &err), *S = NULL;
    int64_t *lines = malloc((size_t)(hi - lo + 1) * sizeof *lines);
    for (int64_t i = lo; i < hi; i++)
        lines[i - lo] = i + 1;
    int rc = km_dist_partition(d, B, lines, KM_PART_HASH, 7, &S, &line, &err);
    if (rc == KM_OK) {
        double *y = malloc((size_t)S->l * sizeof *y + 8), *C = malloc((size_t)S->l * sizeof *C + 8);
        J->rows[r] = S->l;
        J->linesum[r] = 0;
        for (int64_t i = 0; i < S->l; i++) {
            J->linesum[r] += line[i];
            y[i] = km_loss_is_classification(J->loss) ? (S->y[i] > 0 ? 1 : -1) : S->y[i];
            C[i] = 1;
        }
        km_cocoa_param par = {km_cd_param_default(), 1, 0, J->rounds_at_1};
        par.cd.loss = J->loss;
        par.cd.delta = J->delta;
        par.cd.max_iter = 20000;
        par.cd.progress = NULL;
        rc = km_cocoa_linear(d, S, P->n, y, C, &par, J->w[r], NULL, &J->res[r], &err);
        free(y);
        free(C);
    }
    J->rc[r] = rc;
    km_problem_free(B);
    km_problem_free(S);
    free(rows);
    free(lines);
    free(line);
    return rc;
}

/* ---- the fixed point with the rows of K over ranks ---- */

typedef struct fpjob {
    const km_problem *P;
    const double *y, *C;
    km_cd_param par;
    double *c[MAXR];
    km_cd_result res[MAXR];
    km_dist_stats st[MAXR];
    int64_t computed[MAXR];
    int rc[MAXR];
} fpjob;

static int fp_fn(km_dist *d, void *arg)
{
    fpjob *J = arg;
    km_error err;
    km_kernel k = {KM_KERNEL_RBF, 0.2, 0, 3, 0};
    km_kdata *X = km_kdata_new(J->P, NULL, J->P->l, &err);
    /* a cache of 140 rows: K (270 rows) is not held; R > 1: each rank computes its own rows;
     * R = 1 runs km_fixedpoint itself, its matvec over cached and uncached columns */
    size_t cache = 140 * 270 * 8;
    km_kmatrix *K = X ? km_kmatrix_new(&k, X, cache, 1, &err) : NULL;
    double *z = malloc((size_t)J->P->l * sizeof *z);
    km_dist *old = km_dist_tasks_use(d);
    km_dist_stats s0 = d->stats;
    J->rc[d->rank] = K && z ? km_dist_fixedpoint(K, J->y, J->C, &J->par, KM_ALPHA_TRACE, 1,
                                                  J->c[d->rank], z, &J->res[d->rank], &err)
                            : -1;
    km_kmatrix_stats(K, NULL, &J->computed[d->rank]);
    J->st[d->rank].collectives = d->stats.collectives - s0.collectives;
    J->st[d->rank].bytes = d->stats.bytes - s0.bytes;
    km_dist_tasks_use(old);
    km_kmatrix_free(K);
    km_kdata_free(X);
    free(z);
    return 0;
}

static void test_fixedpoint(const km_problem *P, const double *y, const double *C)
{
    int64_t m = P->l;
    km_error err;
    km_kernel k = {KM_KERNEL_RBF, 0.2, 0, 3, 0};
    km_kdata *X = km_kdata_new(P, NULL, m, &err);
    km_kmatrix *K = km_kmatrix_new(&k, X, 200 << 20, 1, &err);   /* all of K in memory */
    double *c0 = malloc((size_t)m * sizeof *c0), *z0 = malloc((size_t)m * sizeof *z0);
    static fpjob J;
    memset(&J, 0, sizeof J);
    J.P = P;
    J.y = y;
    J.C = C;
    J.par = km_cd_param_default();
    J.par.loss = KM_LOSS_L1SVM;
    J.par.delta = 1e-4;
    km_cd_result r0;
    km_fixedpoint(K, y, C, &J.par, KM_ALPHA_TRACE, 1, c0, z0, &r0, &err);
    for (int R = 1; R <= 4; R++) {
        for (int r = 0; r < R; r++)
            J.c[r] = malloc((size_t)m * sizeof(double));
        int rcs[MAXR];
        km_dist_sim_run(R, fp_fn, &J, rcs, NULL, &err);
        int same = 1, counts = 1;
        for (int r = 0; r < R; r++) {
            same &= (R == 1 || J.computed[r] == m * (r + 1) / R - m * r / R) && J.rc[r] == 0 && memcmp(J.c[r], c0, (size_t)m * sizeof *c0) == 0 &&
                    J.res[r].iter == r0.iter && J.res[r].gap == r0.gap;
            /* a step: the agreement (8 bytes) and this rank's block of z; z of the start
             * and of the end: iterations + 1 (converged on the gap rule) */
            int64_t steps = r0.iter + 1, rows = m * (r + 1) / R - m * r / R;
            counts &= R == 1 || (J.st[r].collectives == 1 + 2 * steps &&
                                 J.st[r].bytes == 8 + steps * (8 + 8 * rows));
            free(J.c[r]);
        }
        CHECK(same, "fixed point, rows of K over R = %d simulated ranks (each computing only its "
              "rows of K; R = 1: K not in the cache): the bits of km_fixedpoint with K in memory "
              "(%lld iterations)", R,
              (long long)r0.iter);
        CHECK(counts, "fixed point R = %d: 2 collectives and 8 + 8 (rows) bytes per step", R);
    }
    km_kmatrix_free(K);
    km_kdata_free(X);
    free(c0);
    free(z0);
}

/* ---- z = K c: one summation order whatever the cache holds ---- */

/* km_kmatrix_matvec gives the bits of z_i = sum over j increasing of c_j K_ij, one term at a
 * time from 0, with K_ij the bits of the kernel matrix's rows (all of K in memory), for
 * every cache size (none of K, part of it with some rows cached, all), threads 1 and 2,
 * dense data (where kernel blocks could take dgemm) and sparse: train's fixed point has the
 * same bits whatever -m, and train-mpi's rows of Kc (cocoa.c) are the same sums. */
static void test_matvec_order(void)
{
    const int64_t m = 300;
    const double dens[] = {0.9, 0.08};
    const km_kernel_type types[] = {KM_KERNEL_RBF, KM_KERNEL_POLY, KM_KERNEL_LINEAR,
                                    KM_KERNEL_LAPLACIAN};
    km_error err;
    for (int dd = 0; dd < 2; dd++)
        for (int t = 0; t < 4; t++) {
            km_problem *P = random_problem(m, 30, dens[dd], 0, 90 + (uint64_t)t);
            km_kernel k = {types[t], 0.1, 0.5, 3, 0};
            km_kdata *X = km_kdata_new(P, NULL, m, &err);
            km_kmatrix *F = X ? km_kmatrix_new(&k, X, 200 << 20, 1, &err) : NULL;
            double *c = malloc((size_t)m * sizeof *c), *want = malloc((size_t)m * sizeof *want),
                   *naive = malloc((size_t)m * sizeof *naive), *z = malloc((size_t)m * sizeof *z);
            km_rng r;
            km_rng_seed(&r, 5);
            for (int64_t j = 0; j < m; j++)
                c[j] = km_rng_uniform(&r) < 0.3 ? 0 : 2 * km_rng_uniform(&r) - 1;
            int ok = F && km_kmatrix_matvec(F, c, want, 1, &err) == KM_OK;
            for (int64_t i = 0; ok && i < m; i++) {   /* the order, written out */
                const double *row = km_kmatrix_row(F, i, &err);
                double s = 0;
                for (int64_t j = 0; row && j < m; j++)
                    if (c[j] != 0)
                        s += c[j] * row[j];
                ok &= row != NULL;
                naive[i] = s;
            }
            ok &= memcmp(naive, want, (size_t)m * sizeof *z) == 0;
            const size_t caches[] = {0, 40 * 300 * 8, 140 * 300 * 8};
            int same = 1;
            for (int ci = 0; ci < 3; ci++)
                for (int threads = 1; threads <= 2; threads++) {
                    km_kmatrix *K = km_kmatrix_new(&k, X, caches[ci], threads, &err);
                    for (int64_t i = 0; K && i < m && ci > 0; i += 7)   /* some rows cached */
                        same &= km_kmatrix_row(K, i, &err) != NULL;
                    for (int rep = 0; rep < 2; rep++) {   /* again, with what the cache kept */
                        same &= K && km_kmatrix_matvec(K, c, z, threads, &err) == KM_OK &&
                                memcmp(z, want, (size_t)m * sizeof *z) == 0;
                    }
                    km_kmatrix_free(K);
                }
            CHECK(ok, "%s, %.0f%% dense: matvec with K in memory sums c_j K_ij over j in order",
                  km_kernel_name(k.type), 100 * dens[dd]);
            CHECK(same, "%s, %.0f%% dense: matvec with no cache, 40 or 140 of 300 rows cached "
                  "(threads 1, 2): the bits of K in memory", km_kernel_name(k.type),
                  100 * dens[dd]);
            km_kmatrix_free(F);
            km_kdata_free(X);
            km_problem_free(P);
            free(c);
            free(want);
            free(naive);
            free(z);
        }
}

int main(void)
{
    test_matvec_order();
    km_problem *P = NULL;
    km_error err;
    if (km_svmlight_read("data/heart_scale", &P, &err)) {
        CHECK(0, "read heart_scale: %s", err.msg);
        TEST_EXIT();
    }
    int32_t n = P->n;
    double *ys = malloc((size_t)P->l * sizeof *ys), *Cs = malloc((size_t)P->l * sizeof *Cs);
    static job J, J2;
    for (int li = 0; li < KM_LOSS_COUNT; li++) {
        km_loss loss = (km_loss)li;
        for (int64_t i = 0; i < P->l; i++) {
            ys[i] = km_loss_is_classification(loss) ? (P->y[i] > 0 ? 1 : -1) : P->y[i];
            Cs[i] = 1;
        }
        /* the tight serial optimum */
        km_linear_data ld = {P, NULL, P->l, 1};
        km_cd_param cp = km_cd_param_default();
        cp.loss = loss;
        cp.delta = 1e-10;
        cp.max_iter = 200000;
        double w0[64];
        km_cd_result r0;
        km_cd_linear(&ld, ys, Cs, &cp, w0, NULL, &r0, &err);
        double Fstar = km_linear_objective(&ld, ys, Cs, loss, 0.1, w0);
        for (int R = 1; R <= 4; R++) {
            memset(&J, 0, sizeof J);
            J.P = P;
            J.loss = loss;
            J.delta = 1e-3;
            J.rounds_at_1 = 1;
            int rcs[MAXR];
            km_dist_stats st[MAXR];
            int ok = km_dist_sim_run(R, rank_fn, &J, rcs, st, &err) == 0;
            int same = 1, rowsum = 0, counts = 1;
            int64_t total = 0, lines = 0;
            for (int r = 0; r < R; r++) {
                ok &= J.rc[r] == 0;
                same &= memcmp(J.w[r], J.w[0], (size_t)(n + 1) * sizeof(double)) == 0;
                total += J.rows[r];
                lines += J.linesum[r];
                const km_cocoa_result *res = &J.res[r];
                counts &= res->comm.collectives == res->rounds + 1 &&
                          res->comm.bytes == (res->rounds + 1) * 8 * ((int64_t)n + 3);
            }
            rowsum = total == P->l && lines == P->l * (P->l + 1) / 2;
            CHECK(ok && same, "%s R = %d: runs, the same w on every rank (%lld rounds)",
                  km_loss_name(loss), R, (long long)J.res[0].rounds);
            CHECK(rowsum, "%s R = %d: hash partition keeps every row once", km_loss_name(loss), R);
            double F = km_linear_objective(&ld, ys, Cs, loss, 0.1, J.w[0]);
            CHECK(J.res[0].converged && J.res[0].gap <= 1e-3, "%s R = %d: converged, gap %.2g",
                  km_loss_name(loss), R, J.res[0].gap);
            CHECK_CLOSE(J.res[0].primal, F, 1e-9, "%s R = %d: the primal of the gap terms is "
                        "F(w) over all rows", km_loss_name(loss), R);
            CHECK(F >= Fstar * (1 - 1e-9) && F - Fstar <= 2e-3 * Fstar && F - Fstar <=
                  J.res[0].gap * F * (1 + 1e-9) + 1e-12, "%s R = %d: F = %.10g within 2e-3 of "
                  "F* = %.10g and within the certified gap", km_loss_name(loss), R, F, Fstar);
            CHECK(counts && st[0].collectives >= J.res[0].comm.collectives,
                  "%s R = %d: one allreduce of 8 (n + 3) bytes per round", km_loss_name(loss),
                  R);
            if (R >= 2) {   /* the same R again: the same bits */
                memset(&J2, 0, sizeof J2);
                J2.P = P;
                J2.loss = loss;
                J2.delta = 1e-3;
                J2.rounds_at_1 = 1;
                km_dist_sim_run(R, rank_fn, &J2, rcs, st, &err);
                CHECK(memcmp(J2.w[0], J.w[0], (size_t)(n + 1) * sizeof(double)) == 0 &&
                      J2.res[0].rounds == J.res[0].rounds, "%s R = %d twice: the same bits",
                      km_loss_name(loss), R);
            }
        }
    }
    for (int64_t i = 0; i < P->l; i++) {
        ys[i] = P->y[i] > 0 ? 1 : -1;
        Cs[i] = 1;
    }
    test_fixedpoint(P, ys, Cs);
    free(ys);
    free(Cs);
    km_problem_free(P);
    TEST_EXIT();
}
