/* basis.c - see basis.h; the kernel-list syntax is described in doc/kernel-list.md. */
#include "basis.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtoa.h"
#include "numparse.h"

void km_basis_set_free(km_basis_set *set)
{
    if (!set)
        return;
    for (int k = 0; k < set->m; k++)
        free(set->b[k].feat);
    free(set->b);
    set->m = 0;
    set->b = NULL;
}

/* The parameters a kernel type uses: bits 1 gamma, 2 coef0, 4 degree. */
enum { USES_GAMMA = 1, USES_COEF0 = 2, USES_DEGREE = 4 };

static int kernel_uses(km_kernel_type t)
{
    switch (t) {
    case KM_KERNEL_POLY: return USES_GAMMA | USES_COEF0 | USES_DEGREE;
    case KM_KERNEL_SIGMOID: return USES_GAMMA | USES_COEF0;
    case KM_KERNEL_RBF:
    case KM_KERNEL_LAPLACIAN:
    case KM_KERNEL_EXPDOT: return USES_GAMMA;
    default: return 0;
    }
}

/* The kernel with the defaults of km_basis_parse (also the values of unused parameters). */
static km_kernel default_kernel(km_kernel_type t)
{
    km_kernel k = {t, 1, 0, 3, 0};
    return k;
}

/* Allocates set->b for m kernels with no feature lists yet. */
static int set_alloc(km_basis_set *set, int m, km_error *err)
{
    set->m = 0;
    set->b = calloc((size_t)(m > 0 ? m : 1), sizeof *set->b);
    if (!set->b)
        return km_error_nomem(err, "basis kernels");
    set->m = m;
    return KM_OK;
}

/* Makes b look at the single 0-based feature f. */
static int single_feature(km_basis *b, int32_t f, km_error *err)
{
    if (!(b->feat = malloc(sizeof *b->feat)))
        return km_error_nomem(err, "basis kernels");
    b->feat[0] = f;
    b->nfeat = 1;
    return KM_OK;
}

int km_basis_paper(int32_t n, km_basis_set *out, km_error *err)
{
    out->m = 0;
    out->b = NULL;
    if (n < 0 || n > INT_MAX / 13 - 1)
        return km_error_set(err, KM_EUSAGE, "paper basis set: %d features is out of range",
                            (int)n);
    km_basis_set set;
    if (set_alloc(&set, 13 * (n + 1), err))
        return err->code;
    for (int32_t g = 0; g <= n; g++) {   /* g = 0: all features; g > 0: feature g - 1 */
        km_basis *b = set.b + 13 * (int64_t)g;
        for (int t = 0; t < 13; t++) {
            if (t < 3) {
                b[t].kernel = default_kernel(KM_KERNEL_POLY);
                b[t].kernel.coef0 = 1;
                b[t].kernel.degree = t + 1;
            } else {
                b[t].kernel = default_kernel(KM_KERNEL_RBF);
                b[t].kernel.gamma = pow(10, -3 + 6.0 * (t - 3) / 9);
            }
            if (g > 0 && single_feature(&b[t], g - 1, err)) {
                km_basis_set_free(&set);
                return err->code;
            }
        }
    }
    *out = set;
    return KM_OK;
}

int km_basis_linear(int32_t n, km_basis_set *out, km_error *err)
{
    out->m = 0;
    out->b = NULL;
    if (n < 1)
        return km_error_set(err, KM_EINPUT, "linear basis set: the data have no features");
    km_basis_set set;
    if (set_alloc(&set, n, err))
        return err->code;
    for (int32_t f = 0; f < n; f++) {
        set.b[f].kernel = default_kernel(KM_KERNEL_LINEAR);
        if (single_feature(&set.b[f], f, err)) {
            km_basis_set_free(&set);
            return err->code;
        }
    }
    *out = set;
    return KM_OK;
}

/* ---- parsing ---- */

static int is_space(char c) { return c == ' ' || c == '\t'; }

/* A closed range lo..hi of 1-based feature indices. */
typedef struct range {
    int64_t lo, hi;
} range;

static int range_cmp(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Parses a 1-based feature index in 1..n at p; messages quote list[0..len). */
static const char *parse_index(const char *list, int len, const char *p, int32_t n,
                               int64_t *out, km_error *err)
{
    uint64_t v;
    int status;
    const char *e = km_parse_uint(p, INT32_MAX, &v, &status);
    if (status == KM_NUM_NONE) {
        km_error_set(err, KM_EINPUT, "features=%.*s: expected 'all' or indices and ranges "
                     "such as 1,3,5-9", len, list);
        return NULL;
    }
    if (status == KM_NUM_OK && v == 0) {
        km_error_set(err, KM_EINPUT, "features=%.*s: index 0 (feature indices start at 1)",
                     len, list);
        return NULL;
    }
    if (status != KM_NUM_OK || v > (uint64_t)n) {
        km_error_set(err, KM_EINPUT, "features=%.*s: index %.*s exceeds the number of "
                     "features (%d)", len, list, (int)(e - p), p, (int)n);
        return NULL;
    }
    *out = (int64_t)v;
    return e;
}

/* Parses the features value list[0..len) ("all" or indices and ranges) into b. */
static int parse_features(const char *list, int len, int32_t n, km_basis *b, km_error *err)
{
    if (len == 3 && memcmp(list, "all", 3) == 0)
        return KM_OK;
    int show = len > 60 ? 60 : len;   /* how much of the list messages quote */
    int nr = 1;
    for (int t = 0; t < len; t++)
        nr += list[t] == ',';
    range *r = malloc((size_t)nr * sizeof *r);
    if (!r)
        return km_error_nomem(err, "feature list");
    const char *p = list, *end = list + len;
    int rc = KM_OK;
    for (int q = 0; q < nr && rc == KM_OK; q++) {
        if (!(p = parse_index(list, show, p, n, &r[q].lo, err))) {
            rc = KM_EINPUT;
            break;
        }
        r[q].hi = r[q].lo;
        if (p < end && *p == '-' && !(p = parse_index(list, show, p + 1, n, &r[q].hi, err))) {
            rc = KM_EINPUT;
            break;
        }
        if (r[q].hi < r[q].lo)
            rc = km_error_set(err, KM_EINPUT, "features=%.*s: decreasing range %lld-%lld",
                              show, list, (long long)r[q].lo, (long long)r[q].hi);
        else if (p < end && *p == ',')
            p++;
        else if (p != end)
            rc = km_error_set(err, KM_EINPUT, "features=%.*s: expected 'all' or indices and "
                              "ranges such as 1,3,5-9", show, list);
    }
    int64_t total = 0;
    if (rc == KM_OK) {
        qsort(r, (size_t)nr, sizeof *r, range_cmp);
        for (int q = 0; q < nr && rc == KM_OK; q++) {
            if (q > 0 && r[q].lo <= r[q - 1].hi)
                rc = km_error_set(err, KM_EINPUT, "features=%.*s: feature %lld listed twice",
                                  show, list, (long long)r[q].lo);
            total += r[q].hi - r[q].lo + 1;
        }
    }
    if (rc == KM_OK && total > KM_BASIS_MAX_SUBSET)   /* "1-2147483647": 8 GB otherwise */
        rc = km_error_set(err, KM_EINPUT, "features=%.*s: %lld features; a subset lists at "
                          "most %d (features=all takes any number)", show, list,
                          (long long)total, KM_BASIS_MAX_SUBSET);
    if (rc == KM_OK && !(b->feat = malloc((size_t)total * sizeof *b->feat)))
        rc = km_error_nomem(err, "feature list");
    if (rc == KM_OK) {
        for (int q = 0; q < nr; q++)
            for (int64_t f = r[q].lo; f <= r[q].hi; f++)
                b->feat[b->nfeat++] = (int32_t)(f - 1);
    }
    free(r);
    return rc;
}

/* Parses a finite number filling the whole of val[0..len). */
static int parse_real(const char *key, const char *val, int len, double *out, km_error *err)
{
    int status;
    const char *e = km_parse_double(val, out, &status);
    if (status != KM_NUM_OK || e != val + len)
        return km_error_set(err, KM_EINPUT, "%s=%.*s: expected a finite number", key, len,
                            val);
    return KM_OK;
}

int km_basis_parse(const char *text, int32_t n, km_basis *b, km_error *err)
{
    b->nfeat = 0;
    b->feat = NULL;
    const char *p = text;
    while (is_space(*p))
        p++;
    const char *name = p;
    while (*p && !is_space(*p))
        p++;
    int nlen = (int)(p - name);
    char buf[16];
    int type = -1;
    if (nlen == 0)
        return km_error_set(err, KM_EINPUT, "empty kernel specification");
    if (nlen < (int)sizeof buf) {
        memcpy(buf, name, (size_t)nlen);
        buf[nlen] = '\0';
        type = km_kernel_from_name(buf);
    }
    if (type == KM_KERNEL_PRECOMPUTED)   /* values looked up by 0:ID, not a kernel of rows */
        type = -1;
    if (type < 0)
        return km_error_set(err, KM_EINPUT, "unknown kernel '%.*s' (expected linear, poly, "
                            "rbf, sigmoid, laplacian, expdot or spline)", nlen > 40 ? 40 : nlen,
                            name);
    km_kernel k = default_kernel((km_kernel_type)type);
    int uses = kernel_uses(k.type), seen = 0, rc = KM_OK;
    static const char *const keys[] = {"gamma", "coef0", "degree", "features"};
    for (;;) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        const char *tok = p, *eq = NULL;
        while (*p && !is_space(*p)) {
            if (*p == '=' && !eq)
                eq = p;
            p++;
        }
        int tlen = (int)(p - tok), klen = eq ? (int)(eq - tok) : 0, q = 0;
        if (!eq) {
            rc = km_error_set(err, KM_EINPUT, "expected KEY=VALUE, got '%.*s'",
                              tlen > 40 ? 40 : tlen, tok);
            break;
        }
        while (q < 4 && !((int)strlen(keys[q]) == klen && memcmp(tok, keys[q], (size_t)klen) == 0))
            q++;
        if (q == 4) {
            rc = km_error_set(err, KM_EINPUT, "unknown parameter '%.*s' (expected gamma, "
                              "coef0, degree or features)", klen > 40 ? 40 : klen, tok);
            break;
        }
        if (seen & 1 << q) {
            rc = km_error_set(err, KM_EINPUT, "%s given twice", keys[q]);
            break;
        }
        seen |= 1 << q;
        if (q < 3 && !(uses & 1 << q)) {
            rc = km_error_set(err, KM_EINPUT, "the %s kernel has no parameter %s",
                              km_kernel_name(k.type), keys[q]);
            break;
        }
        const char *val = eq + 1;
        int vlen = (int)(p - val);
        if (q == 0) {
            rc = parse_real("gamma", val, vlen, &k.gamma, err);
        } else if (q == 1) {
            rc = parse_real("coef0", val, vlen, &k.coef0, err);
        } else if (q == 2) {
            uint64_t d;
            int status;
            const char *e = km_parse_uint(val, 1000, &d, &status);
            if (status != KM_NUM_OK || e != p || d < 1)
                rc = km_error_set(err, KM_EINPUT, "degree=%.*s: expected an integer in 1..1000",
                                  vlen, val);
            else
                k.degree = (int)d;
        } else {
            rc = parse_features(val, vlen, n, b, err);
        }
        if (rc != KM_OK)
            break;
    }
    km_error kerr;
    if (rc == KM_OK && k.type == KM_KERNEL_SPLINE && b->nfeat > 1)
        rc = km_error_set(err, KM_EINPUT, "spline kernel: needs 1-D inputs, features= lists "
                          "%d features", (int)b->nfeat);
    else if (rc == KM_OK && km_kernel_check(&k, b->nfeat ? b->nfeat : n, &kerr))
        rc = km_error_set(err, KM_EINPUT, "%s", kerr.msg);
    if (rc != KM_OK) {
        free(b->feat);
        b->feat = NULL;
        b->nfeat = 0;
        return rc;
    }
    b->kernel = k;
    return KM_OK;
}

int km_basis_read_list(const char *path, int32_t n, km_basis_set *out, km_error *err)
{
    out->m = 0;
    out->b = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    km_basis_set set = {0, NULL};
    int cap = 0, rc = KM_OK;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    long long lineno = 0;
    while (rc == KM_OK && (len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        const char *p = line;
        while (is_space(*p))
            p++;
        if (!*p || *p == '#')
            continue;
        if ((size_t)len != strlen(line)) {
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: NUL byte in a kernel line", path,
                              lineno);
            break;
        }
        if (set.m == cap) {
            if (cap > INT_MAX / 2) {
                rc = km_error_set(err, KM_EINPUT, "%s:%lld: too many basis kernels", path,
                                  lineno);
                break;
            }
            int nc = cap ? 2 * cap : 16;
            km_basis *nb = realloc(set.b, (size_t)nc * sizeof *nb);
            if (!nb) {
                rc = km_error_nomem(err, "basis kernels");
                break;
            }
            set.b = nb;
            cap = nc;
        }
        if (km_basis_parse(p, n, &set.b[set.m], err) != KM_OK) {
            char reason[sizeof err->msg];
            snprintf(reason, sizeof reason, "%s", err->msg);
            rc = km_error_set(err, err->code, "%s:%lld: %s", path, lineno, reason);
            break;
        }
        set.m++;
    }
    if (rc == KM_OK && ferror(f))
        rc = km_error_set(err, KM_EINPUT, "%s: read error", path);
    if (rc == KM_OK && set.m == 0)
        rc = km_error_set(err, KM_EINPUT, "%s: no basis kernels in the file", path);
    free(line);
    fclose(f);
    if (rc != KM_OK) {
        km_basis_set_free(&set);
        return rc;
    }
    *out = set;
    return KM_OK;
}

/* ---- formatting ---- */

/* Appends to buf[0..len) at *pos like snprintf; *pos counts what would be written. */
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*pos < len ? buf + *pos : NULL, *pos < len ? len - *pos : 0, fmt, ap);
    va_end(ap);
    *pos += w > 0 ? (size_t)w : 0;
}

int km_basis_format(const km_basis *b, char *buf, size_t len)
{
    size_t pos = 0;
    char num[KM_DTOA_SIZE];
    if (len > 0)
        buf[0] = '\0';
    const km_kernel *k = &b->kernel;
    int uses = kernel_uses(k->type);
    put(buf, len, &pos, "%s", km_kernel_name(k->type));
    if (uses & USES_GAMMA)
        put(buf, len, &pos, " gamma=%s", (km_dtoa(k->gamma, num), num));
    if (uses & USES_COEF0)
        put(buf, len, &pos, " coef0=%s", (km_dtoa(k->coef0, num), num));
    if (uses & USES_DEGREE)
        put(buf, len, &pos, " degree=%d", k->degree);
    put(buf, len, &pos, " features=");
    if (b->nfeat == 0)
        put(buf, len, &pos, "all");
    for (int32_t t = 0; t < b->nfeat;) {
        int32_t u = t;   /* feat[t..u] is a run of consecutive indices */
        while (u + 1 < b->nfeat && b->feat[u + 1] == b->feat[u] + 1)
            u++;
        put(buf, len, &pos, t ? ",%d" : "%d", (int)b->feat[t] + 1);
        if (u > t)
            put(buf, len, &pos, "-%d", (int)b->feat[u] + 1);
        t = u + 1;
    }
    return pos > INT_MAX ? INT_MAX : (int)pos;
}

/* ---- evaluation and projection ---- */

/* Position of feature f in the subset feat[0..nf), or -1. */
static int32_t subset_pos(const int32_t *feat, int32_t nf, int32_t f)
{
    int32_t lo = 0, hi = nf;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (feat[mid] < f)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nf && feat[lo] == f ? lo : -1;
}

double km_basis_eval(const km_basis *b, const int32_t *ix, const double *vx, int64_t nx,
                     const int32_t *iy, const double *vy, int64_t ny)
{
    /* The kernel depends on the restricted rows only through their dot product and squared
     * norms (laplacian: their L1 distance; spline: the value of the single feature). These
     * are summed over the subset in increasing feature order, as km_kernel_eval sums over
     * projected rows, and handed to km_kernel_eval as one-feature rows with the same
     * statistic: the same bits as evaluating the projected rows, without a copy. */
    const int32_t *F = b->feat, nf = b->nfeat;
    double dot = 0, sqx = 0, sqy = 0, l1 = 0, fx = 0, fy = 0;
    int64_t p = 0, q = 0;
    while (p < nx || q < ny) {
        int32_t f = q == ny || (p < nx && ix[p] < iy[q]) ? ix[p] : iy[q];
        double a = p < nx && ix[p] == f ? vx[p++] : 0;
        double c = q < ny && iy[q] == f ? vy[q++] : 0;
        int32_t pos = nf ? subset_pos(F, nf, f) : f;
        if (pos < 0)
            continue;
        dot += a * c;   /* a * c = 0 when one is absent: no change to the sum */
        sqx += a * a;
        sqy += c * c;
        l1 += fabs(a - c);
        if (pos == 0)
            fx = a, fy = c;
    }
    static const int32_t zero = 0;
    static const double one = 1;
    const km_kernel *k = &b->kernel;
    switch (k->type) {
    case KM_KERNEL_LAPLACIAN: return km_kernel_eval(k, &zero, &l1, 1, 0, &zero, &one, 0, 0);
    case KM_KERNEL_SPLINE: return km_kernel_eval(k, &zero, &fx, 1, 0, &zero, &fy, 1, 0);
    default: return km_kernel_eval(k, &zero, &dot, 1, sqx, &zero, &one, 1, sqy);
    }
}

/* The entries of one sorted row that fall in the sorted subset F (nf > 0), re-indexed to
 * their positions in F, written to oi/ov when given; returns their count. A short subset
 * is looked up in the row by binary search, a long one merged with it. */
static int64_t project_row(const int32_t *idx, const double *val, int64_t len,
                           const int32_t *F, int32_t nf, int32_t *oi, double *ov)
{
    int64_t k = 0;
    if ((double)nf * 16 < (double)len) {
        for (int32_t t = 0; t < nf; t++) {
            int64_t lo = 0, hi = len;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (idx[mid] < F[t])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < len && idx[lo] == F[t]) {
                if (oi) {
                    oi[k] = t;
                    ov[k] = val[lo];
                }
                k++;
            }
        }
        return k;
    }
    for (int64_t p = 0, t = 0; p < len && t < nf;) {
        if (idx[p] < F[t]) {
            p++;
        } else if (idx[p] > F[t]) {
            t++;
        } else {
            if (oi) {
                oi[k] = (int32_t)t;
                ov[k] = val[p];
            }
            k++;
            p++;
            t++;
        }
    }
    return k;
}

km_problem *km_basis_project(const km_basis *b, const km_problem *P, const int64_t *rows,
                             int64_t l, km_error *err)
{
    if (!rows)
        l = P->l;
    for (int64_t a = 0; a < l; a++)
        if (rows && (rows[a] < 0 || rows[a] >= P->l)) {
            km_error_set(err, KM_EUSAGE, "basis projection: row %lld out of range 0..%lld",
                         (long long)rows[a], (long long)P->l - 1);
            return NULL;
        }
    const int32_t *F = b->feat, nf = b->nfeat;
    int64_t nnz = 0;
    for (int64_t a = 0; a < l; a++) {
        int64_t i = rows ? rows[a] : a, p0 = P->row_ptr[i], len = P->row_ptr[i + 1] - p0;
        if (len > 0)   /* (rows without entries may have no arrays: no NULL + 0) */
            nnz += nf ? project_row(P->index + p0, P->value + p0, len, F, nf, NULL, NULL) : len;
    }
    km_problem *Q = calloc(1, sizeof *Q);
    if (!Q || !(Q->row_ptr = malloc((size_t)(l + 1) * sizeof *Q->row_ptr)) ||
        !(Q->y = malloc((size_t)(l > 0 ? l : 1) * sizeof *Q->y)) ||
        !(Q->index = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *Q->index)) ||
        !(Q->value = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *Q->value))) {
        km_problem_free(Q);
        km_error_nomem(err, "projected rows");
        return NULL;
    }
    Q->l = l;
    Q->nnz = nnz;
    Q->n = nf ? nf : P->n;
    int64_t k = 0;
    Q->row_ptr[0] = 0;
    for (int64_t a = 0; a < l; a++) {
        int64_t i = rows ? rows[a] : a, p0 = P->row_ptr[i], len = P->row_ptr[i + 1] - p0;
        if (len == 0) {
        } else if (nf) {
            k += project_row(P->index + p0, P->value + p0, len, F, nf, Q->index + k,
                             Q->value + k);
        } else {
            memcpy(Q->index + k, P->index + p0, (size_t)len * sizeof *Q->index);
            memcpy(Q->value + k, P->value + p0, (size_t)len * sizeof *Q->value);
            k += len;
        }
        Q->row_ptr[a + 1] = k;
        Q->y[a] = P->y ? P->y[i] : 0;
    }
    return Q;
}
