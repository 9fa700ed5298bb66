/* report.h - what path tables and progress lines share: a monotonic clock and CSV cells. */
#ifndef KM_REPORT_H
#define KM_REPORT_H

#include <stdio.h>

/* Seconds on a monotonic clock (differences only). */
double km_seconds(void);

/* Writes ",x" (%.10g) to f, or "," alone when x is NaN (an empty cell). */
void km_csv_number(FILE *f, double x);

#endif
