/* problem.c - see problem.h. */
#include "problem.h"

#include <stdlib.h>
#include <string.h>

void km_problem_free(km_problem *p)
{
    if (!p)
        return;
    free(p->row_ptr);
    free(p->index);
    free(p->value);
    free(p->y);
    free(p->qid);
    free(p);
}

int km_problem_reserve(km_problem *P, int64_t *cap, int64_t need)
{
    if (need <= *cap)
        return 0;
    int64_t nc = need + need / 2 + 1024;
    int32_t *ix = realloc(P->index, (size_t)nc * sizeof *ix);
    if (!ix)
        return -1;
    P->index = ix;
    double *vx = realloc(P->value, (size_t)nc * sizeof *vx);
    if (!vx)
        return -1;
    P->value = vx;
    *cap = nc;
    return 0;
}

int km_problem_single(const km_problem *P, const char *what, km_error *err)
{
    if (km_problem_nout(P) == 1)
        return KM_OK;
    return km_error_set(err, KM_EINPUT,
                        "%s: %d outputs per row (labels like 0.3,-1.2); only -s okl learns "
                        "multi-output data", what, (int)P->nout);
}

km_problem *km_problem_concat(const km_problem *a, const km_problem *b)
{
    km_problem *P = calloc(1, sizeof *P);
    if (!P)
        return NULL;
    int64_t l = a->l + b->l, nnz = a->nnz + b->nnz;
    P->l = l;
    P->nnz = nnz;
    P->n = a->n > b->n ? a->n : b->n;
    P->row_ptr = malloc((size_t)(l + 1) * sizeof *P->row_ptr);
    P->index = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *P->index);
    P->value = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *P->value);
    int32_t nout = km_problem_nout(a);
    if (km_problem_nout(b) != nout) {
        free(P);
        return NULL;
    }
    P->nout = nout;
    P->y = malloc((size_t)(l > 0 ? l : 1) * (size_t)nout * sizeof *P->y);
    if (a->qid && b->qid)
        P->qid = malloc((size_t)(l > 0 ? l : 1) * sizeof *P->qid);
    if (!P->row_ptr || !P->index || !P->value || !P->y || (a->qid && b->qid && !P->qid)) {
        km_problem_free(P);
        return NULL;
    }
    memcpy(P->index, a->index, (size_t)a->nnz * sizeof *P->index);
    memcpy(P->index + a->nnz, b->index, (size_t)b->nnz * sizeof *P->index);
    memcpy(P->value, a->value, (size_t)a->nnz * sizeof *P->value);
    memcpy(P->value + a->nnz, b->value, (size_t)b->nnz * sizeof *P->value);
    memcpy(P->y, a->y, (size_t)a->l * (size_t)nout * sizeof *P->y);
    memcpy(P->y + (size_t)a->l * (size_t)nout, b->y, (size_t)b->l * (size_t)nout * sizeof *P->y);
    if (P->qid) {
        memcpy(P->qid, a->qid, (size_t)a->l * sizeof *P->qid);
        memcpy(P->qid + a->l, b->qid, (size_t)b->l * sizeof *P->qid);
    }
    for (int64_t i = 0; i <= a->l; i++)
        P->row_ptr[i] = a->row_ptr[i];
    for (int64_t i = 1; i <= b->l; i++)
        P->row_ptr[a->l + i] = a->nnz + b->row_ptr[i];
    return P;
}
