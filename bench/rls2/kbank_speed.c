/* bench/rls2/kbank_speed.c - the time km_kbank_new takes to build the paper's basis
 * kernels (13 per feature and 13 on all features) on a data file: median wall and CPU
 * seconds over the repeats, and the bank's size. Build it against two trees to compare.
 * OpenBLAS runs on one thread, as in rls2-path (its idle threads' spinning counted as CPU
 * time: 0.38 s CPU for 0.17 s of work on the paper set on 500 x 10).
 * Usage: bench/rls2/kbank_speed DATA [REPEATS]   (default 7 repeats) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "basis.h"
#include "blas.h"
#include "kbank.h"
#include "svmlight.h"
#include "../benchutil.h"


int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kbank_speed DATA [REPEATS]\n");
        return 1;
    }
    km_blas_threads(1);
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    if (reps < 1 || reps > 99)
        return 1;
    km_error err = {0};
    km_problem *X = NULL;
    km_basis_set basis = {0};
    if (km_svmlight_read(argv[1], &X, &err) || km_basis_paper(X->n, &basis, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    double w[99], c[99];
    int64_t doubles = 0;
    int dense = 0, factored = 0;
    for (int r = 0; r < reps; r++) {
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        km_kbank *B = km_kbank_new(X, &basis, 1, &err);
        w[r] = now(CLOCK_MONOTONIC) - w0;
        c[r] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (!B) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
        km_kbank_stats(B, &doubles, &dense, &factored);
        km_kbank_free(B);
    }
    qsort(w, (size_t)reps, sizeof *w, cmp_d);
    qsort(c, (size_t)reps, sizeof *c, cmp_d);
    printf("%s: %lld x %d, %d kernels (%d dense, %d factored, %.1f MB): %.4f s wall, "
           "%.4f s CPU (median of %d; min %.4f / %.4f)\n", argv[1], (long long)X->l, (int)X->n,
           basis.m, dense, factored, (double)doubles * 8 / 1048576, w[reps / 2], c[reps / 2],
           reps, w[0], c[0]);
    km_basis_set_free(&basis);
    km_problem_free(X);
    return 0;
}
