/* read_speed.c - times km_svmlight_read on a file and prints rows, nnz, seconds, MB/s.
 * Usage: bench/read_speed FILE [REPEATS]   (FILE may be gzip or "-"; with REPEATS > 1
 * the fastest run counts). MB/s = uncompressed text bytes / seconds (1 MB = 10^6 B). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream.h"
#include "svmlight.h"

/* Monotonic wall-clock seconds. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Counts the uncompressed bytes of path (also warms the page cache); -1 on error. */
static long long text_bytes(const char *path, km_error *err)
{
    km_stream *s = km_stream_open(path, err);
    if (!s)
        return -1;
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    ptrdiff_t n = buf ? 1 : -1;
    while (n > 0)
        n = km_stream_read(s, buf, cap, err);
    long long total = km_stream_bytes(s);
    free(buf);
    km_stream_close(s);
    return n < 0 ? -1 : total;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || !strcmp(argv[1], "-h")) {
        fprintf(stderr, "usage: %s FILE [REPEATS]\n", argv[0]);
        return 1;
    }
    int reps = argc == 3 ? atoi(argv[2]) : 1;
    if (reps < 1)
        reps = 1;
    km_error err;
    long long bytes = 0;
    if (strcmp(argv[1], "-") != 0) {
        bytes = text_bytes(argv[1], &err);
        if (bytes < 0) {
            fprintf(stderr, "read_speed: %s\n", err.msg);
            return err.code;
        }
    } else {
        reps = 1; /* standard input can be read once; bytes are counted by the reader */
    }
    double best = 1e300;
    km_problem *p = NULL;
    for (int i = 0; i < reps; i++) {
        km_problem_free(p);
        double t0 = now();
        int rc = km_svmlight_read(argv[1], &p, &err);
        double t = now() - t0;
        if (rc) {
            fprintf(stderr, "read_speed: %s\n", err.msg);
            return rc;
        }
        if (t < best)
            best = t;
    }
    if (bytes == 0) { /* stdin: estimate text size is unknown; report rows and nnz only */
        printf("rows %lld nnz %lld n %d seconds %.6f\n", (long long)p->l, (long long)p->nnz,
               (int)p->n, best);
    } else {
        printf("rows %lld nnz %lld n %d bytes %lld seconds %.6f MB/s %.1f\n", (long long)p->l,
               (long long)p->nnz, (int)p->n, bytes, best, (double)bytes / best / 1e6);
    }
    km_problem_free(p);
    return 0;
}
