/* test_numparse.c - the number parsers against strtod in the C locale: fixed cases,
 * random decimal strings (long mantissas, subnormals, near-halfway), integers, locale. */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "test.h"

static locale_t cloc; /* the test's own reference locale */

/* xorshift64* generator: reproducible random numbers without global libc state. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Uniform integer in [0, n). */
static int rng_int(uint64_t *s, int n)
{
    return (int)(rng_next(s) % (uint64_t)n);
}

/* Bit-exact comparison of two doubles (distinguishes -0 and 0). */
static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Parses text (followed by a blank) with km_parse_double and with strtod_l; returns 1
 * when value bits, end and status agree. Prints the first few mismatches. */
static int agrees(const char *text, int *shown)
{
    char buf[1200];
    size_t n = strlen(text);
    memcpy(buf, text, n);
    buf[n] = ' ';
    buf[n + 1] = '\0';
    double got = -12345, want;
    int st;
    const char *end = km_parse_double(buf, &got, &st);
    char *wend;
    want = strtod_l(buf, &wend, cloc);
    int ok;
    if (isinf(want))
        ok = st == KM_NUM_NONFINITE && end == wend;
    else
        ok = st == KM_NUM_OK && end == wend && same_bits(got, want);
    if (!ok && (*shown)++ < 5)
        printf("  mismatch on '%s': got %.17g (status %d, end +%d), want %.17g (end +%d)\n",
               text, got, st, (int)(end - buf), want, (int)(wend - buf));
    return ok;
}

/* Writes a random digit string of length n (first digit nonzero when lead). */
static void rand_digits(uint64_t *s, char *out, int n, int lead)
{
    for (int i = 0; i < n; i++)
        out[i] = (char)('0' + (i == 0 && lead ? 1 + rng_int(s, 9) : rng_int(s, 10)));
    out[n] = '\0';
}

/* Random decimal text of many shapes: digits 1..40, point anywhere, exponent. */
static void rand_decimal(uint64_t *s, char *out)
{
    char dig[64];
    int nd = 1 + rng_int(s, rng_int(s, 4) == 0 ? 40 : 20);
    rand_digits(s, dig, nd, rng_int(s, 8) != 0);
    char *o = out;
    int r = rng_int(s, 4);
    if (r == 0)
        *o++ = '-';
    else if (r == 1)
        *o++ = '+';
    int point = rng_int(s, nd + 2) - 1; /* -1: no point */
    for (int i = 0; i < nd; i++) {
        if (i == point)
            *o++ = '.';
        *o++ = dig[i];
    }
    if (point == nd)
        *o++ = '.';
    if (rng_int(s, 3) != 0) {
        int range = rng_int(s, 2) ? 30 : 700;
        *o++ = rng_int(s, 2) ? 'e' : 'E';
        o += sprintf(o, "%+d", rng_int(s, 2 * range + 1) - range);
    }
    *o = '\0';
}

/* Fixed cases: syntax, status codes and ends. */
static void test_fixed(void)
{
    static const char *const good[] = {
        "0", "-0", "+0", "1", "-1", "+1", "0.5", ".5", "5.", "-.5", "1e3", "1E+3", "1e-3",
        "1.5e10", "123456789012345678", "1234567890123456789", "12345678901234567890",
        "9007199254740992", "9007199254740993", "9007199254740993e-5", "1e22", "1e23",
        "123e20", "9e30", "1e-22", "1e-23", "0.1", "0.2", "0.3", "3.141592653589793",
        "2.718281828459045235360287", "1.7976931348623157e308", "2.2250738585072014e-308",
        "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400",
        "0.000000000000000000000000000001", "00000000000000000000000001.5",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126",
        "9.86899159742946E-02", "0.164264961410291", "1e0000000000000000000001",
        "0e999999", "1.e5", "-0.0e-5", "7e-10", "8.5e-7", "1e308", "0.0000001e-300"};
    int shown = 0;
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        CHECK(agrees(good[i], &shown), "parse '%s' as strtod_l does", good[i]);

    static const struct {
        const char *text;
        int status;
        int end;
    } odd[] = {
        {"nan", KM_NUM_NONFINITE, 3},  {"NaN", KM_NUM_NONFINITE, 3},
        {"-inf", KM_NUM_NONFINITE, 4}, {"Infinity", KM_NUM_NONFINITE, 8},
        {"1e400", KM_NUM_NONFINITE, 5}, {"-1e999", KM_NUM_NONFINITE, 6},
        {"123456789012345678901234567890e300", KM_NUM_NONFINITE, 34},
        {"abc", KM_NUM_NONE, 0},       {".", KM_NUM_NONE, 0},
        {"-", KM_NUM_NONE, 0},         {"+.", KM_NUM_NONE, 0},
        {"", KM_NUM_NONE, 0},          {"e5", KM_NUM_NONE, 0},
        {"0x10", KM_NUM_OK, 1},        {"1e", KM_NUM_OK, 1},
        {"1e+", KM_NUM_OK, 1},         {"1.5x", KM_NUM_OK, 3},
        {"2:3", KM_NUM_OK, 1},         {"1,5", KM_NUM_OK, 1},
    };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s\n", odd[i].text);
        double v;
        int st;
        const char *end = km_parse_double(buf, &v, &st);
        CHECK(st == odd[i].status && end - buf == odd[i].end,
              "'%s' gives status %d, end %d (got %d, %d)", odd[i].text, odd[i].status,
              odd[i].end, st, (int)(end - buf));
    }
    double v;
    int st;
    km_parse_double("-0 ", &v, &st);
    CHECK(st == KM_NUM_OK && v == 0 && signbit(v), "-0 keeps its sign");
    km_parse_double("0x1p3 ", &v, &st);
    CHECK(st == KM_NUM_OK && v == 0, "hex float is read only up to the x (caller rejects)");
}

/* Many random decimal strings, bit-identical to strtod_l. */
static void test_random(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int shown = 0, bad = 0, n = 200000;
    char text[128];
    for (int i = 0; i < n; i++) {
        rand_decimal(&s, text);
        bad += !agrees(text, &shown);
    }
    CHECK(bad == 0, "%d random decimal strings agree with strtod_l (%d differ)", n, bad);

    /* The fast-path domain: <= 19 digits, exponent within +-22, all shapes. */
    bad = 0;
    for (int i = 0; i < n; i++) {
        char dig[32];
        int nd = 1 + rng_int(&s, 19);
        rand_digits(&s, dig, nd, 0);
        int point = rng_int(&s, nd + 1);
        snprintf(text, sizeof text, "%.*s.%se%d", point, dig, dig + point,
                 rng_int(&s, 45) - 22);
        bad += !agrees(text, &shown);
    }
    CHECK(bad == 0, "%d fast-path-sized strings agree with strtod_l (%d differ)", n, bad);

    /* Round trips of random bit patterns (all exponents, subnormals included). */
    bad = 0;
    for (int i = 0; i < n; i++) {
        uint64_t bits = rng_next(&s);
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x))
            continue;
        snprintf(text, sizeof text, i % 3 == 0 ? "%.17g" : i % 3 == 1 ? "%.15g" : "%.25e",
                 x);
        bad += !agrees(text, &shown);
    }
    CHECK(bad == 0, "%d printed random doubles agree with strtod_l (%d differ)", n, bad);

    /* Subnormals: printed with 1..30 significant digits. */
    bad = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = rng_next(&s) & ((1ull << 52) - 1);
        double x;
        memcpy(&x, &bits, sizeof x);
        snprintf(text, sizeof text, "%.*e", rng_int(&s, 30), x);
        bad += !agrees(text, &shown);
    }
    CHECK(bad == 0, "20000 subnormal strings agree with strtod_l (%d differ)", bad);

    /* Near-halfway: the exact midpoint of two neighbouring doubles, and that midpoint
     * cut to 16..40 significant digits (just below or above it). */
    bad = 0;
    int tries = 0;
    for (int i = 0; i < 20000; i++) {
        double x = ldexp((double)(rng_next(&s) >> 11), rng_int(&s, 200) - 150);
        if (x == 0)
            continue;
        long double mid = ((long double)x + (long double)nextafter(x, INFINITY)) / 2;
        char exact[1100];
        snprintf(exact, sizeof exact, "%.400Le", mid);
        bad += !agrees(exact, &shown);
        int keep = 16 + rng_int(&s, 25);
        char cut[128];
        char *e = strchr(exact, 'e');
        snprintf(cut, sizeof cut, "%.*s%s", keep + 1, exact, e); /* "d." + keep-1 digits */
        bad += !agrees(cut, &shown);
        tries += 2;
    }
    CHECK(bad == 0, "%d near-halfway strings agree with strtod_l (%d differ)", tries, bad);

    /* Exact halfway cases that fit 19 digits: integers just above 2^53. */
    bad = 0;
    for (uint64_t k = 0; k < 2000; k++) {
        snprintf(text, sizeof text, "%llu", (unsigned long long)((1ull << 53) + k));
        bad += !agrees(text, &shown);
        snprintf(text, sizeof text, "%llue-3", (unsigned long long)((1ull << 53) - k));
        bad += !agrees(text, &shown);
    }
    CHECK(bad == 0, "integers around 2^53 agree with strtod_l (%d differ)", bad);
}

/* km_parse_uint: limits, leading zeros, rejection of signs. */
static void test_uint(void)
{
    static const struct {
        const char *text;
        uint64_t max;
        int status;
        uint64_t value;
        int end;
    } cases[] = {
        {"0", 100, KM_NUM_OK, 0, 1},
        {"42:", 100, KM_NUM_OK, 42, 2},
        {"2147483647", INT32_MAX, KM_NUM_OK, 2147483647, 10},
        {"2147483648", INT32_MAX, KM_NUM_RANGE, 0, 10},
        {"000000000000000000000000000007", INT32_MAX, KM_NUM_OK, 7, 30},
        {"9223372036854775807", INT64_MAX, KM_NUM_OK, INT64_MAX, 19},
        {"9223372036854775808", INT64_MAX, KM_NUM_RANGE, 0, 19},
        {"18446744073709551617", INT64_MAX, KM_NUM_RANGE, 0, 20},
        {"99999999999999999999999999", INT32_MAX, KM_NUM_RANGE, 0, 26},
        {"-1", INT32_MAX, KM_NUM_NONE, 0, 0},
        {"+1", INT32_MAX, KM_NUM_NONE, 0, 0},
        {"x", INT32_MAX, KM_NUM_NONE, 0, 0},
        {"", INT32_MAX, KM_NUM_NONE, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t v = 0;
        int st;
        const char *end = km_parse_uint(cases[i].text, cases[i].max, &v, &st);
        int ok = st == cases[i].status && end - cases[i].text == cases[i].end &&
                 (st != KM_NUM_OK || v == cases[i].value);
        CHECK(ok, "uint '%s' (max %llu): status %d end %d", cases[i].text,
              (unsigned long long)cases[i].max, st, (int)(end - cases[i].text));
    }
}

/* Results must not depend on LC_NUMERIC: under a decimal-comma locale, both the fast
 * path and the strtod_l fallback still read '.' as the decimal point. */
static void test_locale(void)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE", "fr_FR.UTF-8",
                                        "fr_FR.utf8", "ru_RU.UTF-8", "nl_NL.UTF-8"};
    const char *found = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !found; i++)
        if (setlocale(LC_NUMERIC, names[i]))
            found = names[i];
    /* In any locale: the fallback is exercised (>19 digits, big exponents). */
    const char *slow[] = {"1.2345678901234567890123", "2.5e-300", "1.7976931348623157e308",
                          "0.30000000000000000000000000001"};
    int shown = 0, bad = 0;
    uint64_t s = 12345;
    char text[128];
    for (int i = 0; i < 20000; i++) {
        rand_decimal(&s, text);
        bad += !agrees(text, &shown);
    }
    CHECK(bad == 0, "20000 random strings under LC_NUMERIC=%s agree with the C locale "
          "(%d differ)", found ? found : "C", bad);
    for (int i = 0; i < 4; i++)
        CHECK(agrees(slow[i], &shown), "fallback path under LC_NUMERIC=%s: '%s'",
              found ? found : "C", slow[i]);
    int ok;
    char *end;
    double v = km_strtod_c("2.5 ", &end, &ok);
    CHECK(ok && v == 2.5 && *end == ' ', "km_strtod_c reads '.' whatever the locale");
    if (!found) {
        printf("skip - no decimal-comma locale installed (tried de_DE, fr_FR, ru_RU, "
               "nl_NL); locale independence only checked in the C locale\n");
        return;
    }
    char *cend;
    double cv = strtod("1.5", &cend);
    CHECK(cv == 1 && *cend == '.', "plain strtod stops at '.' under %s (the check works)",
          found);
    setlocale(LC_NUMERIC, "C");
}

int main(void)
{
    cloc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    CHECK(cloc != (locale_t)0, "C locale for the reference strtod_l");
    if (!cloc)
        TEST_EXIT();
    test_fixed();
    test_uint();
    test_random();
    test_locale();
    freelocale(cloc);
    TEST_EXIT();
}
