/* sizelimit.h - one allocation policy for sizes that come from input (a feature index in the
 * data, a count in a model file): nothing is allocated that the input does not justify,
 * so a 30-byte file cannot ask for 16 GiB. Refusals are KM_EINPUT errors that name the
 * size, where it comes from and what the input justifies.
 *
 * The rule: a dense array indexed by feature (n = the largest index, per entries a feature)
 * is justified when it has at most KM_DENSE_FREE entries, or when the index range is at
 * most KM_DENSE_SPREAD times the number of distinct features present (the data fill at
 * least 1/64 of it). A count read from a file is justified when the bytes the file has
 * left can hold that many of the smallest item it counts. */
#ifndef KM_SIZELIMIT_H
#define KM_SIZELIMIT_H

#include <stdint.h>

#include "error.h"
#include "problem.h"

/* Entries (2^24: 128 MiB of doubles) any dense array may have whatever the data. */
#define KM_DENSE_FREE ((int64_t)1 << 24)
/* How sparse a feature index range may be: at most this many indices per distinct
 * feature present. */
#define KM_DENSE_SPREAD 64

/* The distinct features (indices) of the rows of P listed in rows[0..m) (all rows when rows
 * is NULL); -1 when out of memory. */
int64_t km_features_present(const km_problem *P, const int64_t *rows, int64_t m);

/* Whether dense arrays of per entries for each of the n features 0..n-1 of P (n = P->n, or
 * more: a bias row) are justified by the rows of P listed in rows[0..m) (all rows when
 * rows is NULL): KM_OK, or KM_EINPUT "feature index N would need ... for WHAT; the data
 * have ... which justify ..." (what: "the weights w"), KM_EINTERNAL when out of memory. */
int km_limit_features(const km_problem *P, const int64_t *rows, int64_t m, int64_t n,
                      int64_t per, const char *what, km_error *err);

/* The quick form for callers that may fall back to a sparse path: 1 when n dense entries
 * are justified by nnz non-zeros (n <= KM_DENSE_FREE or n <= KM_DENSE_SPREAD * nnz, the
 * distinct features being at most nnz), else 0. */
int km_dense_ok(int64_t n, int64_t nnz);

/* "16 GiB", "1 MiB", "1000 bytes": a size in bytes for messages, into buf[32]. */
const char *km_size_text(int64_t bytes, char *buf);

#endif
