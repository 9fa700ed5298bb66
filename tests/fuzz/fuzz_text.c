/* fuzz_text.c - the text parsers outside the svmlight reader, chosen by the first byte:
 *   0  km_parse_double (inline fast path and slow path) against strtod in the C locale, on a
 *      NUL-terminated copy and on a buffer ending in '\n' with no NUL after it
 *   1  km_parse_uint against strtoull
 *   2  km_basis_parse (n from the second byte), then km_basis_format and parse again: the
 *      same kernel bit for bit
 *   3  km_basis_read_list on a file (n from the second byte)
 *   4  km_mtl_read_task_kernels on a file
 *   5  km_kernel_from_name */
#include <errno.h>
#include <locale.h>
#include <math.h>

#include "basis.h"
#include "fuzz_util.h"
#include "mtl.h"
#include "numparse.h"

static locale_t c_loc;

static int num_byte(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
}

static void check_double(const char *s)
{
    double v = 0, w = 0;
    int st, st2;
    const char *e = km_parse_double(s, &v, &st);
    const char *e2 = km_parse_double_slow(s, &w, &st2);
    FZ_CHECK(e == e2 && st == st2 && (st != KM_NUM_OK || !memcmp(&v, &w, sizeof v)),
             "fast and slow paths differ on '%.60s': %d %.17g / %d %.17g", s, st, v, st2, w);
    if (st == KM_NUM_NONE) {
        FZ_CHECK(e == s, "no number but end moved");
        const char *p = s + (*s == '+' || *s == '-');
        FZ_CHECK(!(*p >= '0' && *p <= '9') && !(*p == '.' && p[1] >= '0' && p[1] <= '9'),
                 "'%.60s' starts with a number but was refused", s);
        return;
    }
    FZ_CHECK(st == KM_NUM_OK || st == KM_NUM_NONFINITE, "status %d", st);
    char *sub = strndup(s, (size_t)(e - s)), *end;
    FZ_CHECK(sub, "out of memory");
    double r = strtod_l(sub, &end, c_loc);
    FZ_CHECK(*end == '\0', "'%s': strtod stops early", sub);
    if (st == KM_NUM_OK)
        FZ_CHECK(!memcmp(&v, &r, sizeof v) && isfinite(v),
                 "'%.60s': %.17g, strtod %.17g", sub, v, r);
    else
        FZ_CHECK(!isfinite(r), "'%.60s' called non-finite, strtod %.17g", sub, r);
    free(sub);
}

static void check_uint(const char *s)
{
    uint64_t v = 0;
    int st;
    const char *e = km_parse_uint(s, INT64_MAX, &v, &st);
    if (st == KM_NUM_NONE) {
        FZ_CHECK(e == s && !(*s >= '0' && *s <= '9'), "'%.60s' refused", s);
        return;
    }
    char *sub = strndup(s, (size_t)(e - s)), *end;
    FZ_CHECK(sub, "out of memory");
    errno = 0;
    unsigned long long r = strtoull(sub, &end, 10);
    FZ_CHECK(*end == '\0', "'%s': strtoull stops early", sub);
    if (st == KM_NUM_OK)
        FZ_CHECK(errno == 0 && r == v && r <= INT64_MAX, "'%s': %llu, strtoull %llu", sub,
                 (unsigned long long)v, r);
    else
        FZ_CHECK(st == KM_NUM_RANGE && (errno == ERANGE || r > INT64_MAX),
                 "'%s' out of range, strtoull %llu", sub, r);
    uint64_t small;
    km_parse_uint(s, 1000, &small, &st);
    FZ_CHECK(st == (r <= 1000 && errno == 0 ? KM_NUM_OK : KM_NUM_RANGE), "max 1000: '%s'", sub);
    free(sub);
}

/* n for the basis parsers: mostly small, sometimes the largest. */
static int32_t pick_n(uint8_t b)
{
    return b == 255 ? INT32_MAX : b == 254 ? 0 : (int32_t)b % 50 + 1;
}

static void check_basis(const char *s, int32_t n)
{
    km_basis b, b2;
    km_error err;
    if (km_basis_parse(s, n, &b, &err)) {
        FZ_CHECK(!b.feat && !b.nfeat, "features left on error");
        return;
    }
    char buf[64];
    int need = km_basis_format(&b, buf, sizeof buf);
    FZ_CHECK(need >= 0, "format");
    char *t = malloc((size_t)need + 1);
    FZ_CHECK(t, "out of memory");
    FZ_CHECK(km_basis_format(&b, t, (size_t)need + 1) == need, "format length");
    int rc = km_basis_parse(t, n, &b2, &err);
    FZ_CHECK(rc == KM_OK, "'%s' (from '%.60s') does not parse: %s", t, s, err.msg);
    FZ_CHECK(b.kernel.type == b2.kernel.type && b.nfeat == b2.nfeat &&
                 (b.kernel.type == KM_KERNEL_LINEAR || b.kernel.type == KM_KERNEL_SPLINE ||
                  (!memcmp(&b.kernel.gamma, &b2.kernel.gamma, sizeof(double)) &&
                   (b.kernel.type == KM_KERNEL_RBF || b.kernel.type == KM_KERNEL_LAPLACIAN ||
                    b.kernel.type == KM_KERNEL_EXPDOT ||
                    (!memcmp(&b.kernel.coef0, &b2.kernel.coef0, sizeof(double)) &&
                     (b.kernel.type == KM_KERNEL_SIGMOID ||
                      b.kernel.degree == b2.kernel.degree))))) &&
                 (!b.nfeat || !memcmp(b.feat, b2.feat, (size_t)b.nfeat * sizeof *b.feat)),
             "'%s' does not give back '%.60s'", t, s);
    free(t);
    free(b.feat);
    free(b2.feat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!c_loc && !(c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0)))
        abort();
    if (size < 1)
        return 0;
    unsigned mode = data[0] % 6;
    data++, size--;
    char path[512];
    km_error err;
    if (mode == 0) {
        char *s = fz_str(data, size);
        check_double(s);
        free(s);
        /* the same bytes with a '\n' after them and no NUL: only number bytes are read */
        size_t k = 0;
        while (k < size && k < 400 && data[k] && data[k] != '\n')
            k++;
        char *b = malloc(k + 1);
        FZ_CHECK(b, "out of memory");
        memcpy(b, data, k);
        b[k] = '\n';
        double v;
        int st;
        const char *e = km_parse_double(b, &v, &st);
        FZ_CHECK(e >= b && e <= b + k, "end out of range");
        for (const char *q = b; q < e; q++)
            FZ_CHECK(num_byte(*q) || st == KM_NUM_NONFINITE, "read a non-number byte");
        free(b);
    } else if (mode == 1) {
        char *s = fz_str(data, size);
        check_uint(s);
        free(s);
    } else if (mode == 2) {
        if (size < 1)
            return 0;
        char *s = fz_str(data + 1, size - 1);
        check_basis(s, pick_n(data[0]));
        free(s);
    } else if (mode == 3) {
        if (size < 1)
            return 0;
        km_basis_set set;
        fz_write(path, "kernels.txt", data + 1, size - 1);
        if (km_basis_read_list(path, pick_n(data[0]), &set, &err) == KM_OK) {
            FZ_CHECK(set.m >= 1, "empty set accepted");
            km_basis_set_free(&set);
        } else {
            FZ_CHECK(set.m == 0 && !set.b, "set left on error");
        }
    } else if (mode == 4) {
        km_mtl_tkernel *tk = NULL;
        int64_t ntk = 0;
        fz_write(path, "tasks.txt", data, size);
        if (km_mtl_read_task_kernels(path, &tk, &ntk, &err) == KM_OK) {
            for (int64_t k = 1; k < ntk; k++)
                FZ_CHECK(tk[k].task > tk[k - 1].task, "task ids not increasing");
            FZ_CHECK(!ntk == !tk, "ntk %lld", (long long)ntk);
        } else {
            FZ_CHECK(!tk && !ntk, "kernels left on error");
        }
        free(tk);
    } else {
        char *s = fz_str(data, size);
        int t = km_kernel_from_name(s);
        FZ_CHECK(t >= -1 && t <= KM_KERNEL_PRECOMPUTED, "type %d", t);   /* "4": precomputed */
        free(s);
    }
    return 0;
}
