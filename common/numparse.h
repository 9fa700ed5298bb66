/* numparse.h - hand-written number parsers for the readers: integers for indices and
 * task ids, correctly rounded doubles (Clinger fast path + C-locale strtod_l fallback). */
#ifndef KM_NUMPARSE_H
#define KM_NUMPARSE_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

/* Status of a parse (the *status out-parameter of the functions below). */
enum {
    KM_NUM_OK = 0,        /* a number was parsed */
    KM_NUM_NONE = 1,      /* no number starts here (end == start) */
    KM_NUM_NONFINITE = 2, /* nan/inf literal, or a value that overflows a double */
    KM_NUM_RANGE = 3,     /* integer larger than the allowed maximum */
    KM_NUM_INTERNAL = 4   /* the C locale could not be created (out of memory) */
};

/*
 * Parses a decimal real at p:  [+-]? (D+ [. D*] | . D+) ([eE] [+-]? D+)?   (D = 0-9)
 * The longest such prefix is taken (an 'e' not followed by digits is not consumed).
 * Hex floats, "nan", "inf" and "infinity" are not accepted as numbers: the latter three
 * (any case, optional sign) give KM_NUM_NONFINITE, as does a finite text whose value
 * overflows; underflow rounds to a subnormal or zero as strtod does. Results are
 * correctly rounded (bit-identical to strtod in the C locale) whatever LC_NUMERIC is.
 * Reads only characters that can belong to a number, so the text needs no NUL as long
 * as some non-number byte follows it. Returns the end of the number (p on KM_NUM_NONE).
 * km_parse_double handles the common short forms inline and calls
 * km_parse_double_slow (same contract) for the rest.
 */
static inline const char *km_parse_double(const char *p, double *out, int *status);
const char *km_parse_double_slow(const char *p, double *out, int *status);

/* 10^0 .. 10^22, each exact in a double (the Clinger fast path's table). */
extern const double km_pow10_exact[23];

/* strtod in the C locale (made once with newlocale), independent of LC_NUMERIC; for
 * text that is not a decimal svmlight number too (model files, options). Sets *ok to 0
 * when the C locale could not be created (then returns 0 and *end = s). */
double km_strtod_c(const char *s, char **end, int *ok);

/*
 * Parses an unsigned decimal integer D+ at p (no sign) that must be <= max
 * (max < 2^63). Returns the end of the digits; *status is KM_NUM_OK, KM_NUM_NONE (no
 * digit at p) or KM_NUM_RANGE (value > max; *out is then unspecified).
 */
static inline const char *km_parse_uint(const char *p, uint64_t max, uint64_t *out,
                                        int *status)
{
    const char *s = p;
    while (*p == '0')
        p++;
    const char *first = p;
    uint64_t v = 0; /* may wrap past 19 digits; then the count below rejects it */
    unsigned d;
    while ((d = (unsigned)(unsigned char)*p - '0') < 10)
        v = v * 10 + d, p++;
    if (p == s) {
        *status = KM_NUM_NONE;
        return p;
    }
    *status = (p - first > 19 || v > max) ? KM_NUM_RANGE : KM_NUM_OK;
    *out = v;
    return p;
}

/* The out-of-line part of km_parse_double, through locals so that the inline fast path
 * keeps the caller's value and status in registers. */
static inline const char *km_parse_double_call_slow(const char *s, double *out, int *status)
{
    double v;
    int st;
    const char *end = km_parse_double_slow(s, &v, &st);
    *out = v;
    *status = st;
    return end;
}

static inline __attribute__((always_inline)) const char *
km_parse_double(const char *p, double *out, int *status)
{
    /* Fast path: at most 19 digits in all, exponent within +-22 after the decimal
     * point shift, mantissa <= 2^53 (Clinger): one exact division or multiplication. */
    const char *s = p;
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
    return km_parse_double_call_slow(s, out, status); /* excess precision: no fast path */
#endif
    unsigned char c = (unsigned char)*p;
    int neg = c == '-';
    p += c == '-' || c == '+';
    const char *ds = p;
    uint64_t m = 0;
    unsigned d;
    while ((d = (unsigned)(unsigned char)*p - '0') < 10)
        m = m * 10 + d, p++;
    ptrdiff_t nd = p - ds, nf = 0;
    c = (unsigned char)*p;
    if (c != '.' && (c | 0x20) != 'e') { /* an integer: exact when <= 2^53 */
        if ((size_t)nd - 1 >= 19 || m > 9007199254740992ull)
            return km_parse_double_call_slow(s, out, status);
        double v = (double)m;
        *out = neg ? -v : v;
        *status = KM_NUM_OK;
        return p;
    }
    if (c == '.') {
        const char *fs = ++p;
        while ((d = (unsigned)(unsigned char)*p - '0') < 10)
            m = m * 10 + d, p++;
        nf = p - fs;
    }
    if ((size_t)(nd + nf) - 1 >= 19 || m > 9007199254740992ull)
        return km_parse_double_call_slow(s, out, status);
    ptrdiff_t e10 = -nf;
    if ((*p | 0x20) == 'e') {
        const char *q = p + 1;
        int eneg = *q == '-';
        q += *q == '-' || *q == '+';
        const char *es = q;
        unsigned ev = 0;
        while ((d = (unsigned)(unsigned char)*q - '0') < 10)
            ev = ev * 10 + d, q++;
        if (q - es > 4)
            return km_parse_double_call_slow(s, out, status);
        if (q > es) {
            e10 += eneg ? -(ptrdiff_t)ev : (ptrdiff_t)ev;
            p = q;
        }
    }
    if ((size_t)(e10 + 22) > 44)
        return km_parse_double_call_slow(s, out, status);
    double v = (double)m;
    if (e10 < 0)
        v /= km_pow10_exact[-e10];
    else
        v *= km_pow10_exact[e10];
    *out = neg ? -v : v;
    *status = KM_NUM_OK;
    return p;
}

#endif
