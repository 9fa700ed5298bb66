/* error.h - the error value every library function returns (DESIGN: library code never exits). */
#ifndef KM_ERROR_H
#define KM_ERROR_H

#include "kmtk.h"   /* km_error and the codes KM_OK, KM_EUSAGE, KM_EINPUT, KM_EINTERNAL */

/* Sets err (if non-NULL) to code and a printf-style message; returns code. */
int km_error_set(km_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets KM_EINTERNAL "out of memory (what)"; returns KM_EINTERNAL. */
int km_error_nomem(km_error *err, const char *what);

/* Clears err to KM_OK and an empty message. */
void km_error_clear(km_error *err);

#endif
