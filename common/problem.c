/* problem.c - see problem.h. */
#include "problem.h"

#include <stdlib.h>

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
