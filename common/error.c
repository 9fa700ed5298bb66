/* error.c - see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int km_error_set(km_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int km_error_nomem(km_error *err, const char *what)
{
    return km_error_set(err, KM_EINTERNAL, "out of memory (%s)", what);
}

void km_error_clear(km_error *err)
{
    if (err) {
        err->code = KM_OK;
        err->msg[0] = '\0';
    }
}
