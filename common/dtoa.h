/* dtoa.h - shortest round-trip formatting of doubles for the model writers. */
#ifndef KM_DTOA_H
#define KM_DTOA_H

/* The buffer km_dtoa needs: the longest text is 24 bytes and its NUL
 * ("-2.2250738585072014e-308"), but it copies digits in fixed-size blocks past the end. */
#define KM_DTOA_SIZE 40

/*
 * Writes x to buf (KM_DTOA_SIZE bytes) as the shortest decimal that reads back
 * to x (strtod, km_parse_double); of several such decimals of that length, the one nearest
 * x (ties: even last digit). Written as a plain decimal ("0.25", "-3", "1000", "0.0001")
 * when its leading digit is at 10^-4 or above and it is at most 2 characters longer than
 * "d.ddde-x" ("1e5", "1.25e-5", "1.5e300"), else in that form; "-0" for
 * negative zero; "inf", "-inf", "nan", "-nan" as printf writes them. Returns the length
 * (no NUL counted); buf is NUL-terminated. Schubfach (R. Giulietti, "The Schubfach way to
 * render doubles", 2020): the digits come from one 126-bit product per bound.
 */
int km_dtoa(double x, char *buf);

#endif
