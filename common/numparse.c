/* numparse.c - see numparse.h. */
#include "numparse.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* Clinger's fast path needs every double operation rounded once to 53 bits. */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define KM_FAST_PATH 1
#else
#define KM_FAST_PATH 0
#endif

/* 10^0 .. 10^22: every one is exactly representable in a double. */
const double km_pow10_exact[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* 10^0 .. 10^15 as integers, to fold part of a large exponent into the mantissa. */
static const uint64_t pow10_int[16] = {
    1ull,           10ull,           100ull,           1000ull,
    10000ull,       100000ull,       1000000ull,       10000000ull,
    100000000ull,   1000000000ull,   10000000000ull,   100000000000ull,
    1000000000000ull, 10000000000000ull, 100000000000000ull, 1000000000000000ull};

#define KM_TWO53 9007199254740992ull

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale; /* written once under pthread_once, read-only afterwards */

/* Creates the C locale used by every fallback conversion (runs once per process). */
static void c_locale_init(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

double km_strtod_c(const char *s, char **end, int *ok)
{
    pthread_once(&c_locale_once, c_locale_init);
    if (!c_locale) {
        *ok = 0;
        if (end)
            *end = (char *)s;
        return 0;
    }
    *ok = 1;
    return strtod_l(s, end, c_locale);
}

/* Matches "nan", "inf" or "infinity" (any case) at p; returns its end or NULL. */
static const char *match_nonfinite(const char *p)
{
    static const char *const words[] = {"infinity", "inf", "nan"};
    for (int w = 0; w < 3; w++) {
        const char *q = p, *t = words[w];
        while (*t && (*q | 0x20) == *t)
            q++, t++;
        if (!*t)
            return q;
    }
    return NULL;
}

const char *km_parse_double_slow(const char *p, double *out, int *status)
{
    const char *s = p;
    int neg = 0;
    if (*p == '-' || *p == '+') {
        neg = *p == '-';
        p++;
    }
    uint64_t m = 0;    /* first (up to 19) significant digits */
    int nd = 0;        /* number of digits in m */
    unsigned lost = 0; /* nonzero when a nonzero digit did not fit in m */
    int64_t e10 = 0;   /* value = m * 10^e10 when lost == 0 */
    int digits = 0;    /* some digit seen */
    unsigned d;

    while (*p == '0')
        p++, digits = 1;
    while ((d = (unsigned)(unsigned char)*p - '0') < 10) {
        if (nd < 19)
            m = m * 10 + d, nd++;
        else
            e10++, lost |= d;
        p++, digits = 1;
    }
    if (*p == '.') {
        const char *f = p + 1;
        while ((d = (unsigned)(unsigned char)*f - '0') < 10) {
            if (nd == 0 && d == 0)
                e10--;
            else if (nd < 19)
                m = m * 10 + d, nd++, e10--;
            else
                lost |= d;
            f++;
        }
        if (digits || f > p + 1) {
            digits = 1;
            p = f;
        }
    }
    if (!digits) {
        const char *q = match_nonfinite(p);
        *status = q ? KM_NUM_NONFINITE : KM_NUM_NONE;
        return q ? q : s;
    }
    int huge_exp = 0;
    if ((*p | 0x20) == 'e') {
        const char *q = p + 1;
        int eneg = 0;
        if (*q == '-' || *q == '+')
            eneg = *q++ == '-';
        if ((unsigned)(unsigned char)*q - '0' < 10) {
            int64_t ev = 0;
            while ((d = (unsigned)(unsigned char)*q - '0') < 10) {
                if (ev < 100000000)
                    ev = ev * 10 + d;
                else
                    huge_exp = 1;
                q++;
            }
            e10 += eneg ? -ev : ev;
            p = q;
        }
    }
    *status = KM_NUM_OK;
    if (m == 0) { /* every digit was zero, whatever the exponent */
        *out = neg ? -0.0 : 0.0;
        return p;
    }
    if (KM_FAST_PATH && !lost && !huge_exp && m <= KM_TWO53) {
        if (e10 >= -22 && e10 <= 22) {
            /* Clinger: m and 10^|e10| are exact, so one operation rounds correctly. */
            double v = (double)m;
            v = e10 < 0 ? v / km_pow10_exact[-e10] : v * km_pow10_exact[e10];
            *out = neg ? -v : v;
            return p;
        }
        if (e10 > 22 && e10 <= 22 + 15 && m <= KM_TWO53 / pow10_int[e10 - 22]) {
            /* m * 10^(e10-22) is still an exact integer <= 2^53. */
            double v = (double)(m * pow10_int[e10 - 22]) * km_pow10_exact[22];
            *out = neg ? -v : v;
            return p;
        }
    }
    char *end;
    int ok;
    double v = km_strtod_c(s, &end, &ok);
    if (!ok) {
        *status = KM_NUM_INTERNAL;
        return s;
    }
    if (end != p) { /* cannot happen for the grammar above; refuse rather than guess */
        *status = KM_NUM_NONE;
        return s;
    }
    if (isinf(v))
        *status = KM_NUM_NONFINITE;
    *out = v;
    return p;
}
