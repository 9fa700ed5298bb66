/* problem.c - see problem.h. */
#include "problem.h"

#include <math.h>
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
    free(p->id);
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
    if (a->id && b->id)
        P->id = malloc((size_t)(l > 0 ? l : 1) * sizeof *P->id);
    if (!P->row_ptr || !P->index || !P->value || !P->y || (a->qid && b->qid && !P->qid) ||
        (a->id && b->id && !P->id)) {
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
    if (P->id) {
        memcpy(P->id, a->id, (size_t)a->l * sizeof *P->id);
        memcpy(P->id + a->l, b->id, (size_t)b->l * sizeof *P->id);
    }
    for (int64_t i = 0; i <= a->l; i++)
        P->row_ptr[i] = a->row_ptr[i];
    for (int64_t i = 1; i <= b->l; i++)
        P->row_ptr[a->l + i] = a->nnz + b->row_ptr[i];
    return P;
}

km_problem *km_problem_subset(const km_problem *P, const int64_t *rows, int64_t m,
                              km_error *err)
{
    if (!rows)
        m = P->l;
    int32_t nout = km_problem_nout(P);
    int64_t nnz = 0;
    for (int64_t a = 0; a < m; a++) {
        int64_t i = rows ? rows[a] : a;
        nnz += P->row_ptr[i + 1] - P->row_ptr[i];
    }
    km_problem *S = calloc(1, sizeof *S);
    if (S) {
        S->l = m;
        S->nnz = nnz;
        S->n = P->n;
        S->nout = P->nout;
        S->row_ptr = malloc((size_t)(m + 1) * sizeof *S->row_ptr);
        S->index = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *S->index);
        S->value = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *S->value);
        S->y = malloc((size_t)(m > 0 ? m : 1) * (size_t)nout * sizeof *S->y);
        S->qid = P->qid ? malloc((size_t)(m > 0 ? m : 1) * sizeof *S->qid) : NULL;
        S->id = P->id ? malloc((size_t)(m > 0 ? m : 1) * sizeof *S->id) : NULL;
    }
    if (!S || !S->row_ptr || !S->index || !S->value || !S->y || (P->qid && !S->qid) ||
        (P->id && !S->id)) {
        km_problem_free(S);
        km_error_nomem(err, "row subset");
        return NULL;
    }
    S->row_ptr[0] = 0;
    for (int64_t a = 0, k = 0; a < m; a++) {
        int64_t i = rows ? rows[a] : a, b = P->row_ptr[i], len = P->row_ptr[i + 1] - b;
        memcpy(S->index + k, P->index + b, (size_t)len * sizeof *S->index);
        memcpy(S->value + k, P->value + b, (size_t)len * sizeof *S->value);
        memcpy(S->y + a * nout, P->y + i * nout, (size_t)nout * sizeof *S->y);
        if (S->qid)
            S->qid[a] = P->qid[i];
        if (S->id)
            S->id[a] = P->id[i];
        S->row_ptr[a + 1] = k += len;
    }
    return S;
}

int km_problem_check(const km_problem *P, km_error *err)
{
    int64_t l = P->l, nout = km_problem_nout(P);
    if (l < 0 || P->n < 0 || P->nout < 0 || !P->row_ptr || (l > 0 && !P->y) ||
        P->row_ptr[0] != 0 || P->row_ptr[l] != P->nnz)
        return km_error_set(err, KM_EUSAGE, "a problem needs l >= 0, n >= 0, row_ptr[0] = 0, "
                            "row_ptr[l] = nnz and labels");
    for (int64_t i = 0; i < l; i++) {
        if (P->row_ptr[i + 1] < P->row_ptr[i])
            return km_error_set(err, KM_EUSAGE, "row %lld: row_ptr decreases", (long long)i);
        for (int64_t j = 0; j < nout; j++)
            if (!isfinite(P->y[i * nout + j]))
                return km_error_set(err, KM_EUSAGE, "row %lld: the label is not finite",
                                    (long long)i);
        for (int64_t t = P->row_ptr[i]; t < P->row_ptr[i + 1]; t++)
            if (P->index[t] < 0 || P->index[t] >= P->n ||
                (t > P->row_ptr[i] && P->index[t] <= P->index[t - 1]) || !isfinite(P->value[t]))
                return km_error_set(err, KM_EUSAGE, "row %lld: feature indices must increase "
                                    "within 0..n-1 = %d and values be finite", (long long)i,
                                    (int)P->n - 1);
        if (P->qid && P->qid[i] < 0 && P->qid[i] != INT64_MIN)
            return km_error_set(err, KM_EUSAGE, "row %lld: task id %lld is negative (0.."
                                "INT64_MAX, or INT64_MIN for none)", (long long)i,
                                (long long)P->qid[i]);
        if (P->id && (P->id[i] < 1 || P->id[i] > P->n))
            return km_error_set(err, KM_EUSAGE, "row %lld: precomputed kernel serial number "
                                "%lld outside 1..n = %d", (long long)i, (long long)P->id[i],
                                (int)P->n);
    }
    return KM_OK;
}

int km_problem_from_csr(int64_t l, int32_t n, const int64_t *row_ptr, const int32_t *index,
                        const double *value, const double *y, const int64_t *qid,
                        km_problem **out, km_error *err)
{
    *out = NULL;
    if (l < 0 || n < 0 || !row_ptr || (l > 0 && !y) || row_ptr[0] != 0)
        return km_error_set(err, KM_EUSAGE, "km_problem_from_csr: need l >= 0, n >= 0, "
                            "row_ptr[0] = 0 and labels");
    km_problem whole = {l, row_ptr[l], n, (int64_t *)row_ptr, (int32_t *)index,
                        (double *)value, (double *)y, 1, (int64_t *)qid, NULL};
    int rc = km_problem_check(&whole, err);
    if (rc)
        return rc;
    *out = km_problem_subset(&whole, NULL, l, err);
    return *out ? KM_OK : KM_EINTERNAL;
}
