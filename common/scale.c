/* scale.c - see scale.h. The parameter file (doc/kmtk-scale.1):
 *   kmtk-scale 1
 *   mode range | mode standardize
 *   x LOWER UPPER                      (range mode)
 *   center 0|1                         (standardize mode)
 *   y Y_LOWER Y_UPPER Y_MIN Y_MAX      (optional: labels scaled)
 *   features K
 *   INDEX A B                          (K lines, INDEX 1-based increasing; range: min max,
 *   ...                                 standardize: mean sd)
 *   end
 * svm-scale's own files ("y" / "x" sections, "INDEX MIN MAX" lines) are read too. */
#include "scale.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic.h"
#include "dtoa.h"
#include "numparse.h"
#include "sizelimit.h"

void km_scale_free(km_scale *s)
{
    if (!s)
        return;
    free(s->feature);
    free(s->a);
    free(s->b);
    free(s->zslot);
    free(s->zval);
    s->feature = s->zslot = NULL;
    s->a = s->b = s->zval = NULL;
    s->k = s->kz = 0;
}

double km_scale_value(const km_scale *s, int64_t t, double v)
{
    double a = s->a[t], b = s->b[t];
    if (s->standardize)   /* x' = (x - mean_j) / sd_j, or x / sd_j without centring */
        return s->center ? (v - a) / b : v / b;
    if (v == a)           /* svm-scale's output(): the ends exactly, else the affine map */
        return s->lower;
    if (v == b)
        return s->upper;
    return s->lower + (s->upper - s->lower) * (v - a) / (b - a);
}

double km_scale_label(const km_scale *s, double y)
{
    if (!s->y_scaling)
        return y;
    if (y == s->y_min)
        return s->y_lower;
    if (y == s->y_max)
        return s->y_upper;
    return s->y_lower + (s->y_upper - s->y_lower) * (y - s->y_min) / (s->y_max - s->y_min);
}

int64_t km_scale_slot(const km_scale *s, int32_t j)
{
    int64_t lo = 0, hi = s->k;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->feature[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->k && s->feature[lo] == j ? lo : -1;
}

/* The features whose zero maps to a non-zero value (zslot, zval). */
static int prepare(km_scale *s, km_error *err)
{
    free(s->zslot);
    free(s->zval);
    s->kz = 0;
    s->zslot = malloc(((size_t)s->k + 1) * sizeof *s->zslot);
    s->zval = malloc(((size_t)s->k + 1) * sizeof *s->zval);
    if (!s->zslot || !s->zval)
        return km_error_nomem(err, "scaling parameters");
    for (int64_t t = 0; t < s->k; t++) {
        double z = km_scale_value(s, t, 0);
        if (z != 0) {
            s->zslot[s->kz] = (int32_t)t;
            s->zval[s->kz++] = z;
        }
    }
    return KM_OK;
}

int64_t km_scale_row(const km_scale *s, const int32_t *index, const double *value, int64_t nnz,
                     int32_t *out_index, double *out_value, int64_t *dropped)
{
    int64_t o = 0, q = 0, lost = 0;
    for (int64_t t = 0; t <= nnz; t++) {
        int32_t j = t < nnz ? index[t] : INT32_MAX;
        /* the zeros before j that map to non-zero values */
        while (q < s->kz && s->feature[s->zslot[q]] < j) {
            out_index[o] = s->feature[s->zslot[q]];
            out_value[o++] = s->zval[q++];
        }
        if (t == nnz)
            break;
        if (q < s->kz && s->feature[s->zslot[q]] == j)
            q++;   /* present: its own value below */
        int64_t slot = km_scale_slot(s, j);
        if (slot < 0) {
            lost++;
            continue;
        }
        double v = km_scale_value(s, slot, value[t]);
        if (v != 0) {
            out_index[o] = j;
            out_value[o++] = v;
        }
    }
    if (dropped)
        *dropped = lost;
    return o;
}

/* ---- fitting ---- */

static int cmp_int32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* The distinct features of P (0-based, increasing) into *feat (count *k). */
static int distinct_features(const km_problem *P, int32_t **feat, int64_t *k, km_error *err)
{
    *feat = NULL;
    *k = 0;
    if (P->nnz == 0)
        return KM_OK;
    if (km_dense_ok(P->n, P->nnz)) {   /* a mark per feature */
        unsigned char *seen = calloc((size_t)P->n + 1, 1);
        if (!seen)
            return km_error_nomem(err, "scaling parameters");
        int64_t c = 0;
        for (int64_t t = 0; t < P->nnz; t++)
            c += !seen[P->index[t]], seen[P->index[t]] = 1;
        int32_t *f = malloc((size_t)c * sizeof *f);
        if (!f) {
            free(seen);
            return km_error_nomem(err, "scaling parameters");
        }
        c = 0;
        for (int32_t j = 0; j < P->n; j++)
            if (seen[j])
                f[c++] = j;
        free(seen);
        *feat = f;
        *k = c;
        return KM_OK;
    }
    int32_t *f = malloc((size_t)P->nnz * sizeof *f);   /* few features spread wide: sort */
    if (!f)
        return km_error_nomem(err, "scaling parameters");
    memcpy(f, P->index, (size_t)P->nnz * sizeof *f);
    qsort(f, (size_t)P->nnz, sizeof *f, cmp_int32);
    int64_t c = 0;
    for (int64_t t = 0; t < P->nnz; t++)
        if (c == 0 || f[c - 1] != f[t])
            f[c++] = f[t];
    *feat = f;
    *k = c;
    return KM_OK;
}

int km_scale_fit(km_scale *s, const km_problem *P, km_error *err)
{
    int64_t l = P->l;
    int nout = km_problem_nout(P);
    if (!s->standardize && !(s->upper > s->lower))
        return km_error_set(err, KM_EUSAGE, "inconsistent lower/upper specification "
                            "(need lower < upper)");
    if (s->y_scaling && !(s->y_upper > s->y_lower))
        return km_error_set(err, KM_EUSAGE, "inconsistent -y lower/upper specification "
                            "(need lower < upper)");
    if (s->y_scaling && nout > 1)
        return km_error_set(err, KM_EUSAGE, "-y scales single labels; the data have %d "
                            "outputs per row", nout);
    s->feature = NULL;
    s->a = s->b = NULL;
    s->zslot = NULL;
    s->zval = NULL;
    s->k = s->kz = 0;
    if (s->y_scaling) {
        s->y_min = INFINITY;
        s->y_max = -INFINITY;
        for (int64_t i = 0; i < l; i++) {
            s->y_min = P->y[i] < s->y_min ? P->y[i] : s->y_min;
            s->y_max = P->y[i] > s->y_max ? P->y[i] : s->y_max;
        }
    }
    int32_t *feat;
    int64_t k;
    int rc = distinct_features(P, &feat, &k, err);
    if (rc)
        return rc;
    double *mn = malloc(((size_t)k + 1) * sizeof *mn), *mx = malloc(((size_t)k + 1) * sizeof *mx);
    double *sum = calloc((size_t)k + 1, sizeof *sum), *ss = calloc((size_t)k + 1, sizeof *ss);
    int64_t *cnt = calloc((size_t)k + 1, sizeof *cnt);
    int32_t *map = km_dense_ok(P->n, P->nnz) ? malloc(((size_t)P->n + 1) * sizeof *map) : NULL;
    if (!mn || !mx || !sum || !ss || !cnt || (km_dense_ok(P->n, P->nnz) && !map)) {
        rc = km_error_nomem(err, "scaling parameters");
        goto done;
    }
    for (int64_t t = 0; t < k; t++) {
        mn[t] = INFINITY;
        mx[t] = -INFINITY;
        if (map)
            map[feat[t]] = (int32_t)t;
    }
    s->feature = feat;
    s->k = k;
#define SLOT(j) (map ? (int64_t)map[j] : km_scale_slot(s, j))
    for (int64_t t = 0; t < P->nnz; t++) {
        int64_t q = SLOT(P->index[t]);
        double v = P->value[t];
        mn[q] = v < mn[q] ? v : mn[q];
        mx[q] = v > mx[q] ? v : mx[q];
        sum[q] += v;
        cnt[q]++;
    }
    for (int64_t t = 0; t < k; t++) {
        if (cnt[t] < l) {   /* absent entries are zeros */
            mn[t] = mn[t] < 0 ? mn[t] : 0;
            mx[t] = mx[t] > 0 ? mx[t] : 0;
        }
        sum[t] /= (double)l;   /* mean_j = sum_i x_ij / l */
    }
    if (s->standardize) {   /* sd_j^2 = sum_i (x_ij - mean_j)^2 / (l - 1), zeros included */
        for (int64_t t = 0; t < P->nnz; t++) {
            int64_t q = SLOT(P->index[t]);
            double d = P->value[t] - sum[q];
            ss[q] += d * d;
        }
        for (int64_t t = 0; t < k; t++)
            ss[t] = l > 1 ? sqrt((ss[t] + (double)(l - cnt[t]) * sum[t] * sum[t]) / (double)(l - 1))
                          : 0;
    }
#undef SLOT
    /* constant features (min == max) keep no parameters */
    int64_t c = 0;
    for (int64_t t = 0; t < k; t++) {
        if (mn[t] == mx[t] || (s->standardize && !(ss[t] > 0)))
            continue;
        feat[c] = feat[t];
        mn[c] = s->standardize ? sum[t] : mn[t];
        mx[c] = s->standardize ? ss[t] : mx[t];
        c++;
    }
    s->k = c;
    s->a = mn;
    s->b = mx;
    mn = mx = NULL;
    rc = prepare(s, err);
done:
    free(mn);
    free(mx);
    free(sum);
    free(ss);
    free(cnt);
    free(map);
    if (rc) {
        if (!s->feature)
            free(feat);
        km_scale_free(s);
    }
    return rc;
}

/* ---- writing data ---- */

int km_scale_write_data(const km_scale *s, const km_problem *P, FILE *f, int64_t *nnz_out,
                        int64_t *dropped, int32_t *first_dropped, km_error *err)
{
    int64_t width = 0, total = 0, lost = 0;
    int32_t first = -1;
    int nout = km_problem_nout(P);
    for (int64_t i = 0; i < P->l; i++)
        if (P->row_ptr[i + 1] - P->row_ptr[i] > width)
            width = P->row_ptr[i + 1] - P->row_ptr[i];
    int32_t *oi = malloc(((size_t)(width + s->kz) + 1) * sizeof *oi);
    double *ov = malloc(((size_t)(width + s->kz) + 1) * sizeof *ov);
    if (!oi || !ov) {
        free(oi);
        free(ov);
        km_error_nomem(err, "scaled rows");
        return -1;
    }
    char num[KM_DTOA_SIZE];
    for (int64_t i = 0; i < P->l; i++) {
        for (int q = 0; q < nout; q++) {
            km_dtoa(km_scale_label(s, P->y[i * nout + q]), num);
            fputs(num, f);
            if (q + 1 < nout)
                fputc(',', f);
        }
        if (P->qid && P->qid[i] != INT64_MIN)
            fprintf(f, " qid:%lld", (long long)P->qid[i]);
        int64_t b = P->row_ptr[i], nnz = P->row_ptr[i + 1] - b, gone;
        int64_t o = km_scale_row(s, nnz ? P->index + b : NULL, nnz ? P->value + b : NULL, nnz,
                                 oi, ov, &gone);
        if (gone && first < 0)
            for (int64_t t = b; t < b + nnz && first < 0; t++)
                if (km_scale_slot(s, P->index[t]) < 0)
                    first = P->index[t];
        lost += gone;
        total += o;
        for (int64_t t = 0; t < o; t++) {
            km_dtoa(ov[t], num);
            fprintf(f, " %lld:%s", (long long)oi[t] + 1, num);
        }
        if (fputc('\n', f) == EOF)
            break;
    }
    free(oi);
    free(ov);
    if (nnz_out)
        *nnz_out = total;
    if (dropped)
        *dropped = lost;
    if (first_dropped)
        *first_dropped = first;
    return ferror(f) ? -1 : 0;
}

/* ---- the parameter file ---- */

static int save_text(FILE *f, const void *ctx)
{
    const km_scale *s = ctx;
    char a[KM_DTOA_SIZE], b[KM_DTOA_SIZE], c[KM_DTOA_SIZE], d[KM_DTOA_SIZE];
    fprintf(f, "%s %d\nmode %s\n", KM_SCALE_FORMAT, KM_SCALE_VERSION,
            s->standardize ? "standardize" : "range");
    if (s->standardize) {
        fprintf(f, "center %d\n", s->center ? 1 : 0);
    } else {
        km_dtoa(s->lower, a);
        km_dtoa(s->upper, b);
        fprintf(f, "x %s %s\n", a, b);
    }
    if (s->y_scaling) {
        km_dtoa(s->y_lower, a);
        km_dtoa(s->y_upper, b);
        km_dtoa(s->y_min, c);
        km_dtoa(s->y_max, d);
        fprintf(f, "y %s %s %s %s\n", a, b, c, d);
    }
    fprintf(f, "features %lld\n", (long long)s->k);
    for (int64_t t = 0; t < s->k; t++) {
        km_dtoa(s->a[t], a);
        km_dtoa(s->b[t], b);
        fprintf(f, "%lld %s %s\n", (long long)s->feature[t] + 1, a, b);
    }
    fputs("end\n", f);
    return ferror(f) ? -1 : 0;
}

int km_scale_save(const km_scale *s, const char *path, km_error *err)
{
    return km_write_atomic(path, "scaling parameters", save_text, s, err);
}

/* A parameter file being read: its lines, the current one and where a token starts. */
typedef struct sreader {
    FILE *f;
    const char *path;
    char *line;
    size_t cap;
    int64_t lineno;
    int64_t size;
    km_error *err;
} sreader;

static int next(sreader *r)
{
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0)
        return 0;
    r->lineno++;
    while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
        r->line[--n] = '\0';
    return 1;
}

/* KM_EINPUT "PATH:LINE:COL: what", COL the 1-based column of at in the current line. */
static int bad(sreader *r, const char *at, const char *what)
{
    return km_error_set(r->err, KM_EINPUT, "%s:%lld:%lld: %s", r->path, (long long)r->lineno,
                        (long long)(at - r->line) + 1, what);
}

static const char *skip_blank(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* n numbers separated by blanks, then the end of the line. */
static int numbers(sreader *r, const char *p, double *x, int n, const char *what)
{
    for (int q = 0; q < n; q++) {
        const char *s = skip_blank(p);
        if (q > 0 && s == p)
            return bad(r, p, what);
        int st;
        p = km_parse_double(s, &x[q], &st);
        if (st != KM_NUM_OK || (*p && *p != ' ' && *p != '\t'))
            return bad(r, s, what);
    }
    p = skip_blank(p);
    if (*p)
        return bad(r, p, "unexpected text at the end of the line");
    return KM_OK;
}

/* Appends a feature line "INDEX A B" (INDEX 1-based, above *prev) to s. */
static int feature_line(sreader *r, km_scale *s, int64_t *cap, int64_t *prev, int libsvm)
{
    const char *p = skip_blank(r->line);
    uint64_t idx;
    int st;
    const char *e = km_parse_uint(p, INT32_MAX, &idx, &st);
    if (st != KM_NUM_OK || idx == 0 || (*e != ' ' && *e != '\t'))
        return bad(r, p, "expected a feature index (1 to 2147483647), then two numbers");
    if ((int64_t)idx <= *prev)
        return bad(r, p, "feature indices must increase");
    double ab[2];
    if (numbers(r, e, ab, 2, libsvm ? "expected INDEX MIN MAX"
                             : s->standardize ? "expected INDEX MEAN SD" : "expected INDEX MIN MAX"))
        return r->err->code;
    if (s->standardize && !(ab[1] > 0))
        return bad(r, e, "the standard deviation must be positive");
    if (!s->standardize && !(ab[0] <= ab[1]))
        return bad(r, e, "the minimum is above the maximum");
    *prev = (int64_t)idx;
    if (!s->standardize && ab[0] == ab[1])
        return KM_OK;   /* a constant feature: dropped, as svm-scale does */
    if (s->k == *cap) {
        int64_t nc = *cap ? 2 * *cap : 64;
        int32_t *f = realloc(s->feature, (size_t)nc * sizeof *f);
        if (f)
            s->feature = f;
        double *a = f ? realloc(s->a, (size_t)nc * sizeof *a) : NULL;
        if (a)
            s->a = a;
        double *b = a ? realloc(s->b, (size_t)nc * sizeof *b) : NULL;
        if (!b)
            return km_error_nomem(r->err, "scaling parameters");
        s->b = b;
        *cap = nc;
    }
    s->feature[s->k] = (int32_t)(idx - 1);
    s->a[s->k] = ab[0];
    s->b[s->k++] = ab[1];
    return KM_OK;
}

/* svm-scale's file: ["y", "YLO YHI", "YMIN YMAX"], "x", "LO HI", "INDEX MIN MAX"... */
static int load_libsvm(sreader *r, km_scale *s)
{
    double x[2];
    int64_t cap = 0, prev = 0;
    if (strcmp(skip_blank(r->line), "y") == 0) {
        if (!next(r))
            return km_error_set(r->err, KM_EINPUT, "%s: truncated (no y range)", r->path);
        if (numbers(r, r->line, x, 2, "expected Y_LOWER Y_UPPER"))
            return r->err->code;
        s->y_lower = x[0];
        s->y_upper = x[1];
        if (!next(r))
            return km_error_set(r->err, KM_EINPUT, "%s: truncated (no y minimum and maximum)",
                                r->path);
        if (numbers(r, r->line, x, 2, "expected Y_MIN Y_MAX"))
            return r->err->code;
        s->y_min = x[0];
        s->y_max = x[1];
        if (!(s->y_lower < s->y_upper) || !(s->y_min <= s->y_max))
            return bad(r, r->line, "the y range is empty");
        s->y_scaling = 1;
        if (!next(r))
            return km_error_set(r->err, KM_EINPUT, "%s: truncated (no 'x' line)", r->path);
    }
    if (strcmp(skip_blank(r->line), "x") != 0)
        return bad(r, r->line, "expected 'x' (svm-scale's feature section)");
    if (!next(r))
        return km_error_set(r->err, KM_EINPUT, "%s: truncated (no x range)", r->path);
    if (numbers(r, r->line, x, 2, "expected LOWER UPPER"))
        return r->err->code;
    if (!(x[0] < x[1]))
        return bad(r, r->line, "the range is empty (need LOWER < UPPER)");
    s->lower = x[0];
    s->upper = x[1];
    while (next(r)) {
        if (*skip_blank(r->line) == '\0')
            continue;
        if (feature_line(r, s, &cap, &prev, 1))
            return r->err->code;
    }
    return KM_OK;
}

/* The value after "KEY " on the current line, or NULL (error set) when the line is not it. */
static const char *keyed(sreader *r, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(r->line, key, n) != 0 || r->line[n] != ' ') {
        char what[96];
        snprintf(what, sizeof what, "expected '%s ...'", key);
        bad(r, r->line, what);
        return NULL;
    }
    return r->line + n + 1;
}

static int load_kmtk(sreader *r, km_scale *s)
{
    const char *v = r->line + strlen(KM_SCALE_FORMAT) + 1;
    long long version;
    char *end;
    errno = 0;
    version = strtoll(v, &end, 10);
    if (errno || end == v || *end || version < 0)
        return bad(r, v, "bad format version");
    if (version != KM_SCALE_VERSION) {
        char what[128];
        snprintf(what, sizeof what, "parameter format version %lld is not supported (this "
                 "kmtk reads version %d)", version, KM_SCALE_VERSION);
        return bad(r, v, what);
    }
#define NEXT(what)                                                                          \
    if (!next(r))                                                                           \
        return km_error_set(r->err, KM_EINPUT, "%s: truncated (no %s line)", r->path, what);
    NEXT("mode");
    if (!(v = keyed(r, "mode")))
        return r->err->code;
    if (strcmp(v, "range") == 0)
        s->standardize = 0;
    else if (strcmp(v, "standardize") == 0)
        s->standardize = 1;
    else
        return bad(r, v, "expected 'range' or 'standardize'");
    NEXT(s->standardize ? "center" : "x");
    double x[4];
    if (s->standardize) {
        if (!(v = keyed(r, "center")))
            return r->err->code;
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return bad(r, v, "expected 0 or 1");
        s->center = *v == '1';
    } else {
        if (!(v = keyed(r, "x")) || numbers(r, v, x, 2, "expected LOWER UPPER"))
            return r->err->code;
        if (!(x[0] < x[1]))
            return bad(r, v, "the range is empty (need LOWER < UPPER)");
        s->lower = x[0];
        s->upper = x[1];
    }
    NEXT("features");
    if (strncmp(r->line, "y ", 2) == 0) {
        if (numbers(r, r->line + 2, x, 4, "expected Y_LOWER Y_UPPER Y_MIN Y_MAX"))
            return r->err->code;
        if (!(x[0] < x[1]) || !(x[2] <= x[3]))
            return bad(r, r->line + 2, "the y range is empty");
        s->y_scaling = 1;
        s->y_lower = x[0];
        s->y_upper = x[1];
        s->y_min = x[2];
        s->y_max = x[3];
        NEXT("features");
    }
    if (!(v = keyed(r, "features")))
        return r->err->code;
    uint64_t count;
    int st;
    const char *e = km_parse_uint(v, INT32_MAX, &count, &st);
    if (st != KM_NUM_OK || *e)
        return bad(r, v, "expected a count of features (0 to 2147483647)");
    /* a feature line has at least 6 bytes ("1 0 1\n"): nothing is allocated for more (a
     * pipe's size is unknown: its arrays grow as the lines come, below) */
    off_t pos = ftello(r->f);
    int64_t left = pos < 0 || pos > r->size ? 0 : r->size - (int64_t)pos;
    if (r->size != INT64_MAX && (int64_t)count > left / 6) {
        char what[160];
        snprintf(what, sizeof what, "features %llu needs at least %llu bytes of feature lines; "
                 "the file has %lld left", (unsigned long long)count,
                 (unsigned long long)count * 6, (long long)left);
        return bad(r, v, what);
    }
    int64_t cap = r->size == INT64_MAX && count > 65536 ? 65536 : (int64_t)count, prev = 0;
    s->feature = malloc(((size_t)cap + 1) * sizeof *s->feature);
    s->a = malloc(((size_t)cap + 1) * sizeof *s->a);
    s->b = malloc(((size_t)cap + 1) * sizeof *s->b);
    if (!s->feature || !s->a || !s->b)
        return km_error_nomem(r->err, "scaling parameters");
    cap = cap ? cap : 1;
    for (uint64_t t = 0; t < count; t++) {
        if (!next(r))
            return km_error_set(r->err, KM_EINPUT, "%s: truncated (%llu of %llu feature lines)",
                                r->path, (unsigned long long)t, (unsigned long long)count);
        if (feature_line(r, s, &cap, &prev, 0))
            return r->err->code;
    }
    NEXT("end");
    if (strcmp(r->line, "end") != 0)
        return bad(r, r->line, "expected 'end' after the feature lines");
    if (next(r))
        return bad(r, r->line, "unexpected text after 'end'");
#undef NEXT
    return KM_OK;
}

int km_scale_load(const char *path, km_scale *s, km_error *err)
{
    memset(s, 0, sizeof *s);
    s->lower = -1;
    s->upper = 1;
    sreader r = {.path = path, .err = err};
    struct stat sb;
    if (!(r.f = fopen(path, "r")))
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    r.size = fstat(fileno(r.f), &sb) == 0 && S_ISREG(sb.st_mode) ? (int64_t)sb.st_size
                                                                 : INT64_MAX;
    int rc;
    if (!next(&r))
        rc = km_error_set(err, KM_EINPUT, "%s: empty file, not scaling parameters", path);
    else if (strncmp(r.line, KM_SCALE_FORMAT " ", strlen(KM_SCALE_FORMAT) + 1) == 0)
        rc = load_kmtk(&r, s);
    else if (strcmp(skip_blank(r.line), "x") == 0 || strcmp(skip_blank(r.line), "y") == 0)
        rc = load_libsvm(&r, s);
    else
        rc = bad(&r, r.line, "not scaling parameters (expected 'kmtk-scale 1', or svm-scale's "
                 "'x' or 'y')");
    if (rc == KM_OK && ferror(r.f))
        rc = km_error_set(err, KM_EINPUT, "%s: read error", path);
    if (rc == KM_OK)
        rc = prepare(s, err);
    free(r.line);
    fclose(r.f);
    if (rc)
        km_scale_free(s);
    return rc;
}
