/* test_dtoa.c - km_dtoa: every output reads back to the same double (strtod in the C
 * locale and km_parse_double), is the shortest such decimal (checked against printf's
 * correctly rounded %.*e for every shorter precision, and with directed rounding for one
 * digit fewer), and is the nearest of that length; random bit patterns, subnormals,
 * +-0, extremes, powers of 2 and 10, integers, inf/nan. */
#include <fenv.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtoa.h"
#include "numparse.h"
#include "test.h"


static locale_t cloc;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static double from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint64_t to_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* Significant digits of a decimal text (sign, leading zeros, point, exponent not counted;
 * trailing zeros of the integer part are counted only up to the last non-zero digit). */
static int sig_digits(const char *s)
{
    int n = 0, zeros = 0, started = 0;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9')
            continue;
        if (*s == '0' && !started)
            continue;
        started = 1;
        if (*s == '0') {
            zeros++;
        } else {
            n += zeros + 1;
            zeros = 0;
        }
    }
    return n;
}

/* Stats over the checks of one class of values. */
typedef struct {
    long n, bad_trip, bad_parse, bad_len, longer, shorter_asym, shorter_other, not_nearest,
        not_min;
    int shown;
} stats;

static int reads_back(const char *s, double x)
{
    return to_bits(strtod_l(s, NULL, cloc)) == to_bits(x);
}

/* Round trip through strtod_l and km_parse_double (which must take the whole text), the
 * returned length, and %.17g's value. */
static void check_trip(double x, stats *S, char *buf)
{
    int len = km_dtoa(x, buf);
    S->n++;
    if (len != (int)strlen(buf) || len >= KM_DTOA_SIZE)
        S->bad_len++;
    char g17[40];
    snprintf(g17, sizeof g17, "%.17g", x);
    double a = strtod_l(buf, NULL, cloc), b = strtod_l(g17, NULL, cloc);
    if (to_bits(a) != to_bits(x) || to_bits(b) != to_bits(a)) {
        if (S->shown++ < 5)
            printf("  %s (%.17g): reads back as %.17g\n", buf, x, a);
        S->bad_trip++;
    }
    char tail[KM_DTOA_SIZE + 1];
    memcpy(tail, buf, (size_t)len);
    tail[len] = ' ';
    double v = -1;
    int st;
    const char *end = km_parse_double(tail, &v, &st);
    if (st != KM_NUM_OK || end != tail + len || to_bits(v) != to_bits(x)) {
        if (S->shown++ < 5)
            printf("  %s: km_parse_double status %d, %d of %d bytes, %.17g\n", buf, st,
                   (int)(end - tail), len, v);
        S->bad_parse++;
    }
}

/* Shortness and nearness of km_dtoa(x) (finite, non-zero): p0 = the first precision at
 * which printf's correctly rounded %.{p0}e reads back. Ours must not be longer; of equal
 * length it must be that value (the nearest); shorter only at a power of two, where the
 * interval is lopsided and the nearest p-digit decimal may fall outside it. And no decimal
 * of one digit fewer reads back: rounding down and up to n - 1 digits both fail. */
static void check_short(double x, stats *S)
{
    char buf[KM_DTOA_SIZE], e[48];
    check_trip(x, S, buf);
    int n = sig_digits(buf), p0 = 17;
    for (int p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, x);
        if (reads_back(e, x)) {
            p0 = p;
            break;
        }
    }
    if (n > p0) {
        S->longer++;
        if (S->shown++ < 5)
            printf("  %s (%.17g): %d digits, %%.%de reads back\n", buf, x, n, p0);
    } else if (n < p0) {
        if ((to_bits(x) & ((1ull << 52) - 1)) == 0)
            S->shorter_asym++;
        else
            S->shorter_other++;
    } else {
        snprintf(e, sizeof e, "%.*e", p0 - 1, x);
        if (to_bits(strtod_l(e, NULL, cloc)) != to_bits(strtod_l(buf, NULL, cloc)) ||
            sig_digits(e) > n) /* (equal value, so equal text up to the notation) */
            S->not_nearest++;
    }
    if (n > 1) {
        int bad = 0;
        int modes[2] = {FE_DOWNWARD, FE_UPWARD};
        for (int r = 0; r < 2; r++) {
            fesetround(modes[r]);
            snprintf(e, sizeof e, "%.*e", n - 2, x);
            fesetround(FE_TONEAREST);
            bad |= reads_back(e, x);
        }
        if (bad) {
            S->not_min++;
            if (S->shown++ < 5)
                printf("  %s (%.17g): a %d-digit decimal reads back\n", buf, x, n - 1);
        }
    }
}

static void report(const char *what, const stats *S, int allow_asym)
{
    CHECK(S->bad_trip == 0 && S->bad_parse == 0 && S->bad_len == 0,
          "%s: %ld values read back bit for bit by strtod and km_parse_double, = %%.17g's "
          "value (%ld, %ld, %ld wrong)", what, S->n, S->bad_trip, S->bad_parse, S->bad_len);
    if (S->longer + S->not_nearest + S->not_min + S->shorter_other + S->shorter_asym ||
        allow_asym >= 0)
        CHECK(S->longer == 0 && S->not_nearest == 0 && S->not_min == 0 &&
                  S->shorter_other == 0 && (allow_asym || S->shorter_asym == 0),
              "%s: shortest (%ld longer than the first round-tripping %%.*e, %ld of fewer "
              "digits at a lopsided power of 2 and %ld elsewhere, %ld with a round-tripping "
              "decimal one digit shorter), nearest (%ld not)", what, S->longer,
              S->shorter_asym, S->shorter_other, S->not_min, S->not_nearest);
}

static void fixed_cases(void)
{
    struct { double x; const char *want; } cases[] = {
        {0.0, "0"}, {-0.0, "-0"}, {1.0, "1"}, {-1.5, "-1.5"}, {0.1, "0.1"}, {0.3, "0.3"},
        {1.0 / 3, "0.3333333333333333"}, {2.0 / 3, "0.6666666666666666"}, {100, "100"},
        {1000, "1000"}, {1e5, "1e5"}, {12345678, "12345678"}, {123456789, "123456789"}, {1e15, "1e15"}, {1e23, "1e23"},
        {1e-3, "0.001"}, {0.0123, "0.0123"}, {1e-4, "0.0001"}, {1e-5, "1e-5"}, {1.25e-5, "1.25e-5"}, {3e-4, "0.0003"}, {1.5e-7, "1.5e-7"}, {0.25, "0.25"},
        {12345.678, "12345.678"}, {DBL_MAX, "1.7976931348623157e308"},
        {DBL_MIN, "2.2250738585072014e-308"}, {DBL_TRUE_MIN, "5e-324"},
        {2 * DBL_TRUE_MIN, "1e-323"}, {-DBL_TRUE_MIN, "-5e-324"},
        {9007199254740992.0, "9007199254740992"}, {5e-324 * 4, "2e-323"},
        {INFINITY, "inf"}, {-INFINITY, "-inf"}, {NAN, "nan"},
        {0.1 + 0.2, "0.30000000000000004"}, {-2.5e-300, "-2.5e-300"}};
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[KM_DTOA_SIZE];
        int len = km_dtoa(cases[i].x, buf);
        if (strcmp(buf, cases[i].want) || len != (int)strlen(cases[i].want)) {
            printf("  %.17g: got '%s', want '%s'\n", cases[i].x, buf, cases[i].want);
            bad++;
        }
    }
    CHECK(bad == 0, "%d fixed values written as expected (+-0, extremes, inf/nan, notation)",
          (int)(sizeof cases / sizeof cases[0]));
    char buf[KM_DTOA_SIZE];
    km_dtoa(-NAN, buf);
    char ref[16];
    snprintf(ref, sizeof ref, "%g", -NAN);
    CHECK(strcmp(buf, ref) == 0, "-nan written as printf does ('%s', printf '%s')", buf, ref);
}

int main(int argc, char **argv)
{
    cloc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!cloc)
        return 3;
    long scale = argc > 1 ? atol(argv[1]) : 1; /* more values: test_dtoa 10 */
    fixed_cases();

    /* directed rounding in printf (the one-digit-shorter check needs it) */
    char d[16], u[16];
    fesetround(FE_DOWNWARD);
    snprintf(d, sizeof d, "%.0e", 0.19);
    fesetround(FE_UPWARD);
    snprintf(u, sizeof u, "%.0e", 0.11);
    fesetround(FE_TONEAREST);
    CHECK(strcmp(d, "1e-01") == 0 && strcmp(u, "2e-01") == 0,
          "printf honours the rounding mode (%s, %s)", d, u);

    uint64_t seed = 0x9e3779b97f4a7c15ull;
    stats S = {0};
    char buf[KM_DTOA_SIZE];
    for (long i = 0; i < 2000000 * scale; i++) {
        uint64_t b = rng_next(&seed);
        if (((b >> 52) & 0x7ff) == 0x7ff)
            continue;
        check_trip(from_bits(b), &S, buf);
    }
    report("random bit patterns", &S, -1);

    S = (stats){0};
    for (long i = 0; i < 100000 * scale; i++) {
        uint64_t b = rng_next(&seed);
        if (((b >> 52) & 0x7ff) != 0x7ff)
            check_short(from_bits(b), &S);
    }
    report("random bit patterns (shortness)", &S, 0);

    S = (stats){0};
    for (uint64_t t = 1; t < 5000; t++)
        check_short(from_bits(t), &S);
    for (long i = 0; i < 20000 * scale; i++)
        check_short(from_bits(rng_next(&seed) & ((1ull << 52) - 1)), &S);
    for (uint64_t t = 1; t < (1u << 18); t++)
        check_trip(from_bits(t), &S, buf);
    report("subnormals (the first 2^18 exhaustively, random)", &S, 0);

    S = (stats){0};
    uint64_t ext[] = {to_bits(DBL_MAX), to_bits(DBL_MIN), to_bits(DBL_TRUE_MIN),
                      to_bits(DBL_MIN) - 1, to_bits(DBL_MAX) - 1, to_bits(DBL_MIN) + 1,
                      to_bits(1.0) - 1, to_bits(1.0) + 1};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        check_short(from_bits(ext[i]), &S);
        check_short(-from_bits(ext[i]), &S);
    }
    report("extremes and neighbours", &S, 0);

    S = (stats){0};
    for (int e = -1074; e <= 1023; e++) { /* every power of two: the lopsided intervals */
        check_short(ldexp(1.0, e), &S);
        check_short(-ldexp(1.0, e), &S);
        check_short(nextafter(ldexp(1.0, e), 0), &S);
    }
    report("powers of 2 and their lower neighbours", &S, 1);
    CHECK(S.shorter_asym > 0 && S.shorter_asym < 200,
          "at %ld powers of 2 ours is shorter than the nearest %%.*e that reads back "
          "(a decimal of that length is inside the lopsided interval)", S.shorter_asym);

    S = (stats){0};
    int pow10_bad = 0;
    for (int e = -323; e <= 308; e++) {
        char t[16];
        snprintf(t, sizeof t, "1e%d", e);
        double x = strtod_l(t, NULL, cloc);
        check_short(x, &S);
        km_dtoa(x, buf);
        pow10_bad += sig_digits(buf) != 1;
        check_short(nextafter(x, INFINITY), &S);
        check_short(nextafter(x, 0), &S);
    }
    report("powers of 10 and their neighbours", &S, 0);
    CHECK(pow10_bad == 0, "every power of 10 1e-323..1e308 in one digit (%d not)", pow10_bad);

    S = (stats){0};
    int int_bad = 0;
    for (long v = -100000; v <= 1000000; v++) {
        km_dtoa((double)v, buf);
        char want[32];
        snprintf(want, sizeof want, "%ld", v);
        int_bad += sig_digits(buf) != sig_digits(want);
        check_trip((double)v, &S, buf);
    }
    for (long i = 0; i < 50000 * scale; i++) {
        double v = (double)(int64_t)(rng_next(&seed) >> (11 + i % 40));
        check_short(v, &S);
    }
    report("integers (-1e5..1e6 all, random below 2^53)", &S, 0);
    CHECK(int_bad == 0, "integers -1e5..1e6 keep their digits (%d do not)", int_bad);

    S = (stats){0};
    for (long i = 0; i < 100000 * scale; i++) { /* short decimals: d.ddd e k */
        char t[40];
        snprintf(t, sizeof t, "%lde%d", (long)(rng_next(&seed) % 1000000),
                 (int)(rng_next(&seed) % 600) - 300);
        double x = strtod_l(t, NULL, cloc);
        if (x != 0 && isfinite(x))
            check_short(x, &S);
    }
    report("short decimals (<= 6 digits, random exponents)", &S, 0);
    TEST_EXIT();
}
