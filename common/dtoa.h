/* dtoa.h - shortest round-trip formatting of doubles for the model writers. */
#ifndef KM_DTOA_H
#define KM_DTOA_H

#include <stdio.h>

/* Bytes km_dtoa may write, including the terminating NUL ("-2.2250738585072014e-308"). */
#define KM_DTOA_SIZE 32

/*
 * Writes x to buf (at least KM_DTOA_SIZE bytes) as the shortest decimal that reads back
 * to x (strtod, km_parse_double); of several such decimals of that length, the one nearest
 * x (ties: even last digit). Written as a plain decimal ("0.25", "-3", "120") or as
 * "d.ddde-x" ("1e-7", "1.5e300"), whichever is shorter (plain on a tie); "-0" for
 * negative zero; "inf", "-inf", "nan", "-nan" as printf writes them. Returns the length
 * (no NUL counted); buf is NUL-terminated. Schubfach (R. Giulietti, "The Schubfach way to
 * render doubles", 2020): the digits come from one 126-bit product per bound.
 */
int km_dtoa(double x, char *buf);

/* Writes km_dtoa(x) to f (unlocked stdio: for a stream only this thread uses). */
static inline void km_dtoa_put(double x, FILE *f)
{
    char b[KM_DTOA_SIZE];
    fwrite_unlocked(b, 1, (size_t)km_dtoa(x, b), f);
}

#endif
