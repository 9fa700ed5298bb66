/* bench/model_write_speed.c - the time km_model_write takes for a model that km_model_read
 * loaded: median (and least) wall and CPU seconds over the repeats, and the file's size. Build it
 * against two trees to compare their writers.
 * Usage: bench/model_write_speed MODEL OUT [REPEATS]   (default 5 repeats) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "model.h"
#include "benchutil.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: model_write_speed MODEL OUT [REPEATS]\n");
        return 1;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (reps < 1 || reps > 99)
        return 1;
    km_error err = {0};
    km_model *m;
    if (km_model_read(argv[1], &m, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    double w[99], c[99];
    for (int r = 0; r < reps; r++) {
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        if (km_model_write(m, argv[2], &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 2;
        }
        w[r] = now(CLOCK_MONOTONIC) - w0;
        c[r] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
    qsort(w, (size_t)reps, sizeof *w, cmp_d);
    qsort(c, (size_t)reps, sizeof *c, cmp_d);
    struct stat st;
    long long size = stat(argv[2], &st) ? -1 : (long long)st.st_size;
    printf("%s: write %.4f s wall, %.4f s CPU (median of %d; min %.4f / %.4f), %lld bytes\n",
           argv[1], w[reps / 2], c[reps / 2], reps, w[0], c[0], size);
    km_model_free(m);
    return 0;
}
