/* benchutil.h - the clock and the sort order the C timing programs of bench/ share. */
#ifndef KM_BENCHUTIL_H
#define KM_BENCHUTIL_H

#include <time.h>

/* Seconds on clock id (CLOCK_MONOTONIC: wall; CLOCK_PROCESS_CPUTIME_ID: CPU). */
static inline double now(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* qsort order of doubles, for medians. */
static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
