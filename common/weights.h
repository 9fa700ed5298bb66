/* weights.h - instance weights: one number per row multiplying the row's C_i (--weights). */
#ifndef KM_WEIGHTS_H
#define KM_WEIGHTS_H

#include <stdint.h>

#include "error.h"

/* Reads a weights file (plain or gzip; "-" is standard input): one finite number >= 0 a
 * line, exactly l lines (a last line without newline is fine). *out gets l weights
 * (malloc'ed). Errors: KM_EINPUT "FILE:LINE: ..." for a bad value, more lines than l, or
 * fewer ("FILE: N weights for L rows"). Never allocates more than l values. */
int km_weights_read(const char *path, int64_t l, double **out, km_error *err);

/* KM_OK when w[0..l) are finite and >= 0, else KM_EUSAGE naming the first bad row
 * (1-based). */
int km_weights_check(const double *w, int64_t l, km_error *err);

#endif
