/* test_cocoa.c - CoCoA+ linear CD on the simulated ranks of dist.h: for the five losses and
 * R in {1, 2, 3, 4} the objective of the returned w, computed here over all rows, is within
 * 2e-3 (relative) of a tight serial optimum and below its certified gap; the same R twice
 * gives the same bits; every rank has the same w; the communication is one allreduce of
 * 8 (n + 3) bytes per round, counted exactly; hash partitioning keeps every row once. */
#include <stdlib.h>
#include <string.h>

#include "cocoa.h"
#include "svmlight.h"
#include "test.h"

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

int main(void)
{
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
    free(ys);
    free(Cs);
    km_problem_free(P);
    TEST_EXIT();
}
