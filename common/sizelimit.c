/* sizelimit.c - see sizelimit.h. */
#include "sizelimit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nonzeros of the listed rows. */
static int64_t rows_nnz(const km_problem *P, const int64_t *rows, int64_t m)
{
    if (!rows)
        return P->nnz;
    int64_t nnz = 0;
    for (int64_t a = 0; a < m; a++)
        nnz += P->row_ptr[rows[a] + 1] - P->row_ptr[rows[a]];
    return nnz;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int64_t km_features_present(const km_problem *P, const int64_t *rows, int64_t m)
{
    if (!rows)
        m = P->l;
    int64_t nnz = rows_nnz(P, rows, m), n = P->n > 0 ? P->n : 0, count = 0;
    if (nnz == 0)
        return 0;
    if (n <= KM_DENSE_SPREAD * nnz) {   /* a bitmap of the index range: at most 8 nnz bytes */
        uint8_t *seen = calloc((size_t)n / 8 + 1, 1);
        if (!seen)
            return -1;
        for (int64_t a = 0; a < m; a++) {
            int64_t i = rows ? rows[a] : a;
            for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++) {
                int32_t f = P->index[t];
                count += !(seen[f >> 3] & (1u << (f & 7)));
                seen[f >> 3] |= (uint8_t)(1u << (f & 7));
            }
        }
        free(seen);
        return count;
    }
    int32_t *ix = malloc((size_t)nnz * sizeof *ix);   /* a sparse range: sort the indices */
    if (!ix)
        return -1;
    int64_t k = 0;
    for (int64_t a = 0; a < m; a++) {
        int64_t i = rows ? rows[a] : a;
        memcpy(ix + k, P->index + P->row_ptr[i],
               (size_t)(P->row_ptr[i + 1] - P->row_ptr[i]) * sizeof *ix);
        k += P->row_ptr[i + 1] - P->row_ptr[i];
    }
    qsort(ix, (size_t)nnz, sizeof *ix, cmp_i32);
    for (int64_t t = 0; t < nnz; t++)
        count += t == 0 || ix[t] != ix[t - 1];
    free(ix);
    return count;
}

const char *km_size_text(int64_t bytes, char *buf)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    double x = (double)bytes;
    while (x >= 1024 && u < 6) {
        x /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, 32, "%" PRId64 " bytes", bytes);
    else if (x == (double)(int64_t)x)
        snprintf(buf, 32, "%" PRId64 " %s", (int64_t)x, unit[u]);
    else
        snprintf(buf, 32, "%.1f %s", x, unit[u]);
    return buf;
}

int km_dense_ok(int64_t n, int64_t nnz)
{
    return n <= KM_DENSE_FREE || n / KM_DENSE_SPREAD <= nnz;
}

/* n * per, saturated at INT64_MAX. */
static int64_t entries(int64_t n, int64_t per)
{
    int64_t e;
    return __builtin_mul_overflow(n, per, &e) ? INT64_MAX : e;
}

int km_limit_features(const km_problem *P, const int64_t *rows, int64_t m, int64_t n,
                      int64_t per, const char *what, km_error *err)
{
    if (per < 1)
        per = 1;
    if (entries(n, per) <= KM_DENSE_FREE)
        return KM_OK;
    if (!rows)
        m = P->l;
    int64_t distinct = km_features_present(P, rows, m);
    if (distinct < 0)
        return km_error_nomem(err, "distinct features");
    if (n <= KM_DENSE_SPREAD * distinct)
        return KM_OK;
    int64_t fit = KM_DENSE_SPREAD * distinct;   /* the features the data justify */
    if (fit < KM_DENSE_FREE / per)
        fit = KM_DENSE_FREE / per;
    char need[32];
    return km_error_set(err, KM_EINPUT,
                        "feature index %" PRId32 " would need dense arrays of %" PRId64 " x %"
                        PRId64 " entries (%s) for %s; the data have %" PRId64 " non-zeros in %"
                        PRId64 " distinct features, which justify indices up to %" PRId64
                        " (2^24 entries, or %d indices per distinct feature): number the "
                        "features densely (1..%" PRId64 ")",
                        P->n, n, per, km_size_text(entries(entries(n, per), 8), need), what,
                        rows_nnz(P, rows, m), distinct, fit, KM_DENSE_SPREAD, distinct);
}
