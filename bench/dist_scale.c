/* dist_scale.c - the inputs of doc/scale.md's model T(R) = rounds(R) x [compute/R + latency +
 * bytes/bandwidth] for CoCoA+ (cocoa.h), measured without MPI:
 *
 *   dist_scale DATA LOSS DELTA R1 R2 ...
 *
 * For each R, runs CoCoA+ on R simulated ranks (dist.h; rows by hash) to the relative gap
 * DELTA and prints the rounds and the exact communication per round and rank (collectives,
 * bytes); first, the CPU seconds of one round's local work over all rows (an epoch: two
 * sparse dots and up to two updates per row, the gap terms), measured on one rank over 20
 * rounds. Simulated ranks share the machine's cores: their wall time is not the model's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cocoa.h"
#include "svmlight.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct job {
    const km_problem *P;
    km_loss loss;
    double delta;
    int64_t max_rounds;
    km_cocoa_result res;
    int rc;
    char msg[1024];
} job;

static int rank_fn(km_dist *d, void *arg)
{
    job *J = arg;
    const km_problem *P = J->P;
    km_error err = {0};
    int64_t lo = P->l * d->rank / d->size, hi = P->l * (d->rank + 1) / d->size;
    int64_t *rows = malloc((size_t)(hi - lo + 1) * sizeof *rows);
    int64_t *line = malloc((size_t)(hi - lo + 1) * sizeof *line);
    for (int64_t i = lo; i < hi; i++) {
        rows[i - lo] = i;
        line[i - lo] = i + 1;
    }
    km_problem *B = km_problem_subset(P, rows, hi - lo, &err), *S = NULL;
    int rc = B ? km_dist_partition(d, B, line, KM_PART_HASH, 1, &S, NULL, &err) : err.code;
    if (rc == KM_OK) {
        double *y = malloc((size_t)(S->l + 1) * sizeof *y);
        double *C = malloc((size_t)(S->l + 1) * sizeof *C);
        double *w = malloc((size_t)(P->n + 1) * sizeof *w);
        for (int64_t i = 0; i < S->l; i++) {
            y[i] = km_loss_is_classification(J->loss) ? (S->y[i] > 0 ? 1 : -1) : S->y[i];
            C[i] = 1;
        }
        km_cocoa_param par = {km_cd_param_default(), -1, 0, 1};
        par.cd.loss = J->loss;
        par.cd.delta = J->delta;
        par.cd.max_iter = J->max_rounds;
        par.cd.progress = NULL;
        km_cocoa_result res;
        rc = km_cocoa_linear(d, S, P->n, y, C, &par, w, NULL, &res, &err);
        if (d->rank == 0)
            J->res = res;
        free(y);
        free(C);
        free(w);
    }
    if (d->rank == 0) {
        J->rc = rc;
        snprintf(J->msg, sizeof J->msg, "%s", rc ? err.msg : "");
    }
    km_problem_free(B);
    km_problem_free(S);
    free(rows);
    free(line);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: dist_scale DATA LOSS DELTA R1 [R2 ...]\n");
        return 1;
    }
    km_problem *P = NULL;
    km_error err;
    if (km_svmlight_read(argv[1], &P, &err)) {
        fprintf(stderr, "dist_scale: %s\n", err.msg);
        return 2;
    }
    int loss = km_loss_from_name(argv[2]);
    if (loss < 0) {
        fprintf(stderr, "dist_scale: unknown loss %s\n", argv[2]);
        return 1;
    }
    job J = {P, (km_loss)loss, 1e-300, 20, {0}, 0, ""};
    int rc1;
    double t0 = cpu_now();
    km_dist_sim_run(1, rank_fn, &J, &rc1, NULL, &err);
    double epoch = (cpu_now() - t0) / (double)J.res.rounds;
    printf("# %s: l = %lld, n = %d, nnz = %lld; %s; one epoch (all rows, one rank) = %.6f s "
           "CPU\n", argv[1], (long long)P->l, P->n, (long long)P->nnz, argv[2], epoch);
    printf("R,rounds,gap,collectives_per_round,bytes_per_round_per_rank\n");
    for (int a = 4; a < argc; a++) {
        int R = atoi(argv[a]);
        int *rcs = calloc((size_t)(R > 0 ? R : 1), sizeof *rcs);
        job K = {P, (km_loss)loss, atof(argv[3]), 100000, {0}, 0, ""};
        if (km_dist_sim_run(R, rank_fn, &K, rcs, NULL, &err) || K.rc) {
            fprintf(stderr, "dist_scale: R = %d: %s\n", R, K.rc ? K.msg : err.msg);
            free(rcs);
            return 3;
        }
        int64_t rounds = K.res.rounds + K.res.converged;   /* the certifying round too */
        printf("%d,%lld,%.3g,%.4f,%.1f\n", R, (long long)K.res.rounds, K.res.gap,
               (double)K.res.comm.collectives / (double)rounds,
               (double)K.res.comm.bytes / (double)rounds);
        fflush(stdout);
        free(rcs);
    }
    km_problem_free(P);
    return 0;
}
