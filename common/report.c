/* report.c - see report.h. */
#include "report.h"

#include <math.h>
#include <time.h>

double km_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void km_csv_number(FILE *f, double x)
{
    if (isnan(x))
        fputs(",", f);
    else
        fprintf(f, ",%.10g", x);
}
