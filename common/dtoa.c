/* dtoa.c - see dtoa.h. Schubfach (Giulietti 2020), written from the paper's description:
 * for v = c 2^q with rounding interval R_v = [v - ulp_lo/2, v + ulp/2] (closed when c is
 * even), pick k = floor(log10 of the interval's width) so that R_v scaled by 10^-k has
 * width in [1, 10). Then among the integers s = floor(v 10^-k) and s + 1, and the multiple
 * of ten just below and above them, the shortest in R_v (nearest v) is the answer. The
 * scaled bounds come from a 126-bit upper approximation g of 10^-k (dtoa_table.h) times
 * 4c 2^h, rounded down with a sticky bit, which the paper proves exact enough. */
#include "dtoa.h"

#include <stdint.h>
#include <string.h>

#include "dtoa_table.h"

/* floor(e log10 2), floor(e log10 2 + log10 3/4), floor(e log2 10): exact for |e| <= 1200
 * (respectively |e| <= 400), checked by gen_dtoa_table.py. The offsets keep the shifted
 * value non-negative (a right shift of a negative number is implementation-defined). */
static inline int flog10pow2(int e)
{
    return (int)((uint64_t)((int64_t)e * 661971961083 + ((int64_t)1000 << 41)) >> 41) - 1000;
}

static inline int flog10_34pow2(int e)
{
    return (int)((uint64_t)((int64_t)e * 661971961083 - 274743187321 + ((int64_t)1000 << 41)) >>
                 41) - 1000;
}

static inline int flog2pow10(int e)
{
    return (int)((uint64_t)((int64_t)e * 913124641741 + ((int64_t)2000 << 38)) >> 38) - 2000;
}

static inline uint64_t mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* floor(g cp / 2^127) with its last bit set when the product is not exact (sticky), for
 * g = g1 2^63 + g0. */
static inline uint64_t round_odd(uint64_t g1, uint64_t g0, uint64_t cp)
{
    unsigned __int128 y = (unsigned __int128)g1 * cp;
    uint64_t x1 = mulhi(g0, cp);
    uint64_t z = ((uint64_t)y >> 1) + x1;
    uint64_t vbp = (uint64_t)(y >> 64) + (z >> 63);
    return vbp | (((z & 0x7fffffffffffffffu) + 0x7fffffffffffffffu) >> 63);
}

static const char digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u,
    10000000u, 100000000u, 1000000000u, 10000000000u, 100000000000u, 1000000000000u,
    10000000000000u, 100000000000000u, 1000000000000000u, 10000000000000000u,
    100000000000000000u, 1000000000000000000u, 10000000000000000000u};

/* Number of decimal digits of f (f >= 1): from its bit length, log10 2 ~ 1233 / 4096. */
static inline int ndigits(uint64_t f)
{
    int n = ((64 - __builtin_clzll(f)) * 1233 >> 12) + 1;
    return n - (f < pow10_u64[n - 1]);
}

/* Writes the 8 digits of v < 10^8 into out[0..8). */
static inline void put8(uint32_t v, char *out)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(out, digits2 + 2 * (hi / 100), 2);
    memcpy(out + 2, digits2 + 2 * (hi % 100), 2);
    memcpy(out + 4, digits2 + 2 * (lo / 100), 2);
    memcpy(out + 6, digits2 + 2 * (lo % 100), 2);
}

/* Writes f 10^e (0 < f < 10^18) after the sign at p, trailing zeros of f removed first;
 * returns the end. The digits are made once, right-aligned in a scratch buffer, and moved
 * with fixed-size copies: buf[0..KM_DTOA_SIZE) may be written past the NUL. */
static char *put_decimal(uint64_t f, int e, char *p)
{
    while (f % 100000000 == 0) /* trailing zeros off, 8, 4, 2, 1 at a time; f > 0 */
        f /= 100000000, e += 8;
    if (f % 10000 == 0)
        f /= 10000, e += 4;
    if (f % 100 == 0)
        f /= 100, e += 2;
    if (f % 10 == 0)
        f /= 10, e++;
    int n = ndigits(f);
    int E = e + n - 1; /* the exponent of the leading digit */
    int ae = E < 0 ? -E : E;
    int sci = n + (n > 1) + 1 + (E < 0) + (ae >= 100 ? 3 : ae >= 10 ? 2 : 1);
    int fix = E >= n - 1 ? E + 1 : E >= 0 ? n + 1 : n + 1 - E;
    char tmp[56]; /* digits of f in tmp[0..18), then zeros */
    uint64_t top = f / 10000000000000000u, mid = f / 100000000 % 100000000;
    memcpy(tmp, digits2 + 2 * top, 2);
    put8((uint32_t)mid, tmp + 2);
    put8((uint32_t)(f % 100000000), tmp + 10);
    memset(tmp + 18, '0', 24);
    const char *d = tmp + 18 - n; /* the n digits, then zeros */
    if (E >= -4 && fix <= sci + 2) {
        if (E >= n - 1) { /* an integer: digits, then zeros (at most 4: see the rule) */
            memcpy(p, d, 24);
            return p + E + 1;
        }
        if (E >= 0) { /* d..d.d..d */
            memcpy(p, d, 16);
            p[E + 1] = '.';
            memcpy(p + E + 2, d + E + 1, 16);
            return p + n + 1;
        }
        memcpy(p, "0.000", 5); /* 0.0..0d..d, at most 3 zeros */
        memcpy(p + 1 - E, d, 24);
        return p + n + 1 - E;
    }
    p[0] = d[0];
    p[1] = '.';
    memcpy(p + 2, d + 1, 16);
    p += n > 1 ? n + 1 : 1;
    *p++ = 'e';
    if (E < 0)
        *p++ = '-';
    if (ae >= 100) {
        *p++ = (char)('0' + ae / 100);
        ae %= 100;
        memcpy(p, digits2 + 2 * ae, 2);
        return p + 2;
    }
    if (ae >= 10) {
        memcpy(p, digits2 + 2 * ae, 2);
        return p + 2;
    }
    *p++ = (char)('0' + ae);
    return p;
}

/* Writes the shortest decimal in R_v for v = c 2^q (c >= 3) at p; returns the end.
 * Schubfach's main step. */
static char *shortest(uint64_t c, int q, char *p)
{
    uint64_t out = c & 1;
    uint64_t cb = c << 2, cbr = cb + 2, cbl;
    int k;
    if (c != ((uint64_t)1 << 52) || q == -1074) {
        cbl = cb - 2;
        k = flog10pow2(q);
    } else { /* at a power of two the gap below is half the gap above */
        cbl = cb - 1;
        k = flog10_34pow2(q);
    }
    int h = q + flog2pow10(-k) + 2;
    const uint64_t *g = km_dtoa_g[k - KM_DTOA_K_MIN];
    uint64_t vb = round_odd(g[0], g[1], cb << h);
    uint64_t vbl = round_odd(g[0], g[1], cbl << h);
    uint64_t vbr = round_odd(g[0], g[1], cbr << h);
    uint64_t s = vb >> 2;
    if (s >= 10) { /* (the paper asks s >= 100: two digits at least) */
        uint64_t sp10 = s / 10 * 10, tp10 = sp10 + 10;
        int upin = vbl + out <= sp10 << 2;
        int wpin = (tp10 << 2) + out <= vbr;
        if (upin != wpin)
            return put_decimal(upin ? sp10 : tp10, k, p);
    }
    uint64_t t = s + 1;
    int uin = vbl + out <= s << 2;
    int win = (t << 2) + out <= vbr;
    if (uin != win)
        return put_decimal(uin ? s : t, k, p);
    /* both in R_v: the nearer, ties to even */
    int64_t cmp = (int64_t)(vb - ((s + t) << 1));
    return put_decimal(cmp < 0 || (cmp == 0 && (s & 1) == 0) ? s : t, k, p);
}

int km_dtoa(double x, char *buf)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    char *p = buf;
    if (bits >> 63)
        *p++ = '-';
    int be = (int)(bits >> 52) & 0x7ff;
    uint64_t t = bits & (((uint64_t)1 << 52) - 1);
    if (be == 0x7ff) {
        memcpy(p, t ? "nan" : "inf", 4);
        return (int)(p - buf) + 3;
    }
    if (be == 0) {
        if (t == 0) {
            memcpy(p, "0", 2);
            return (int)(p - buf) + 1;
        }
        /* subnormal: c = t, q = -1074. The proof needs c >= 3: the two below are 1 digit */
        if (t < 3) {
            memcpy(p, t == 1 ? "5e-324" : "1e-323", 7);
            return (int)(p - buf) + 6;
        }
        p = shortest(t, -1074, p);
    } else {
        uint64_t c = t | ((uint64_t)1 << 52);
        int q = be - 1075;
        if (q <= 0 && q > -53 && ((c >> -q) << -q) == c) /* an integer below 2^53: exact */
            p = put_decimal(c >> -q, 0, p);
        else
            p = shortest(c, q, p);
    }
    *p = '\0';
    return (int)(p - buf);
}
