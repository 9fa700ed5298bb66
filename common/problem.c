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
