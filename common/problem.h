/* problem.h - the sparse problem: labels, optional task ids (qid) and CSR rows. */
#ifndef KM_PROBLEM_H
#define KM_PROBLEM_H

#include <stdint.h>

#include "error.h"

/*
 * Rows are stored in compressed sparse row form. Feature indices are 0-based here
 * (file index - 1), strictly increasing within a row. Counts of rows and non-zeros
 * are 64-bit; a feature index fits in 32 bits (the reader rejects larger ones).
 */
typedef struct km_problem {
    int64_t l;          /* number of rows (examples) */
    int64_t nnz;        /* number of stored index:value pairs */
    int32_t n;          /* number of features = largest 1-based index seen */
    int64_t *row_ptr;   /* l + 1 offsets into index/value */
    int32_t *index;     /* nnz 0-based feature indices */
    double *value;      /* nnz values */
    double *y;          /* l * nout labels, row-major: y[i * nout + j] = output j of row i */
    int32_t nout;       /* outputs per row (svmlight "0.3,-1.2,0.7" labels); 0 means 1 */
    int64_t *qid;       /* l task ids, or NULL when no line had qid: */
} km_problem;

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

/* Frees everything a problem owns, including the struct; NULL is fine. */
void km_problem_free(km_problem *p);

#endif
