/* test_sizelimit.c - the allocation policy for sizes from input (common/sizelimit.h):
 * distinct features counted on both paths, the rule at its edges, the message. */
#include <stdlib.h>
#include <string.h>

#include "sizelimit.h"
#include "test.h"

/* Rows of one feature each: the features idx[0..l), n the largest index + 1 (or given). */
static km_problem *one_per_row(int64_t l, const int32_t *idx, int32_t n)
{
    int64_t rp[64];
    double val[64], y[64];
    for (int64_t i = 0; i <= l; i++)
        rp[i] = i;
    for (int64_t i = 0; i < l; i++) {
        val[i] = 1;
        y[i] = i % 2 ? 1 : -1;
    }
    km_problem *P = NULL;
    km_error err;
    if (km_problem_from_csr(l, n, rp, idx, val, y, NULL, &P, &err))
        return NULL;
    return P;
}

int main(void)
{
    km_error err;
    /* distinct features: a bitmap when the range is within 64 nnz, else a sort */
    int32_t few[6] = {3, 3, 7, 1, 7, 3};
    km_problem *P = one_per_row(6, few, 8);
    CHECK(P && km_features_present(P, NULL, 0) == 3, "3 distinct features of 6 (bitmap)");
    int64_t rows[2] = {1, 3};
    CHECK(km_features_present(P, rows, 2) == 2, "2 distinct features in rows 1 and 3");
    km_problem_free(P);
    int32_t far[4] = {5, 2000000000, 5, 1000000000};
    P = one_per_row(4, far, 2000000001);
    CHECK(P && km_features_present(P, NULL, 0) == 3, "3 distinct of 4 over 2e9 (sorted)");

    /* the rule: 2^24 entries free, else the range within 64 per distinct feature */
    CHECK(km_limit_features(P, NULL, 0, KM_DENSE_FREE, 1, "w", &err) == KM_OK,
          "2^24 entries are free whatever the data");
    CHECK(km_limit_features(P, NULL, 0, KM_DENSE_FREE / 4, 4, "w", &err) == KM_OK,
          "... counted as entries: 2^22 features x 4");
    CHECK(km_limit_features(P, NULL, 0, KM_DENSE_FREE / 4 + 1, 4, "w", &err) == KM_EINPUT,
          "... one feature more is refused (3 features present)");
    int rc = km_limit_features(P, NULL, 0, (int64_t)P->n + 1, 1, "the weights w", &err);
    CHECK(rc == KM_EINPUT && strstr(err.msg, "feature index 2000000001 would need dense "
                                    "arrays of 2000000002 x 1 entries (14.9 GiB) for the "
                                    "weights w; the data have 4 non-zeros in 3 distinct "
                                    "features, which justify indices up to 16777216"),
          "the message names the index, the size and what the data justify (%s)", err.msg);
    km_problem_free(P);

    /* 300,000 distinct features over 2^24 * 1.1: within 64 per feature, allowed */
    int64_t l = 300000, n = (int64_t)(KM_DENSE_FREE * 1.1);
    km_problem *Q = calloc(1, sizeof *Q);
    Q->l = l;
    Q->n = (int32_t)n;
    Q->nnz = l;
    Q->row_ptr = malloc((size_t)(l + 1) * sizeof *Q->row_ptr);
    Q->index = malloc((size_t)l * sizeof *Q->index);
    Q->value = malloc((size_t)l * sizeof *Q->value);
    Q->y = malloc((size_t)l * sizeof *Q->y);
    for (int64_t i = 0; i <= l; i++)
        Q->row_ptr[i] = i;
    for (int64_t i = 0; i < l; i++) {
        Q->index[i] = (int32_t)(i * (n / l));
        Q->value[i] = 1;
        Q->y[i] = 1;
    }
    Q->index[l - 1] = (int32_t)(n - 1);
    CHECK(km_features_present(Q, NULL, 0) == l, "300000 distinct features");
    CHECK(km_limit_features(Q, NULL, 0, n, 1, "w", &err) == KM_OK,
          "1.1 x 2^24 indices, 300000 present (1 in 62): justified");
    CHECK(km_limit_features(Q, NULL, 0, 64 * l + 1, 1, "w", &err) == KM_EINPUT,
          "64 x 300000 + 1 indices: refused");
    km_problem_free(Q);

    CHECK(km_dense_ok(KM_DENSE_FREE, 0) && !km_dense_ok(KM_DENSE_FREE + 64, 1) &&
          km_dense_ok(64 * 1000000, 1000000), "km_dense_ok: the quick form of the rule");
    char b[32];
    CHECK(strcmp(km_size_text((int64_t)16 << 30, b), "16 GiB") == 0 &&
          strcmp(km_size_text(1000, b), "1000 bytes") == 0 &&
          strcmp(km_size_text(1536, b), "1.5 KiB") == 0, "sizes for messages");
    TEST_EXIT();
}
