/* problem.h - the sparse problem: labels, optional task ids (qid) and CSR rows. */
#ifndef KM_PROBLEM_H
#define KM_PROBLEM_H

#include <stdint.h>

#include "error.h"
#include "kmtk.h"   /* km_problem: CSR rows, labels, task ids */

/* The number of outputs per row (1 for ordinary single-label data). */
static inline int32_t km_problem_nout(const km_problem *P)
{
    return P->nout > 1 ? P->nout : 1;
}

/* KM_OK when P has one label per row; else KM_EINPUT "WHAT: N outputs per row (labels
 * like 0.3,-1.2); only -s okl learns multi-output data" (what: the file name). */
int km_problem_single(const km_problem *P, const char *what, km_error *err);

/* Grows P's index and value arrays (capacity *cap entries) to hold at least need entries,
 * geometrically; 0, or -1 when out of memory (P unchanged but for a partial growth). */
int km_problem_reserve(km_problem *P, int64_t *cap, int64_t need);

/* A new problem with the rows of a, then those of b (n: the larger; qid kept only when both
 * have it); NULL when out of memory or when their outputs per row differ. */
km_problem *km_problem_concat(const km_problem *a, const km_problem *b);

/* A new problem with the rows of P listed in rows[0..m) (all rows if rows is NULL), their
 * labels, outputs and task ids; NULL (err set) when out of memory. */
km_problem *km_problem_subset(const km_problem *P, const int64_t *rows, int64_t m,
                              km_error *err);

#endif
