/* oklpath.c - see oklpath.h. */
#include "oklpath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "report.h"

/* Kernel values between all rows of A and all rows of B (na x nb, row-major). */
static double *kernel_matrix(const km_kernel *k, const km_problem *A, const km_problem *B,
                             int threads, km_error *err)
{
    double *K = malloc((size_t)(A->l * B->l) * sizeof *K);
    if (!K)
        return km_error_nomem(err, "kernel matrix"), NULL;
    km_kdata *DA = km_kdata_new(A, NULL, A->l, err);
    km_kdata *DB = DA && B != A ? km_kdata_new(B, NULL, B->l, err) : NULL;
    int rc = DA && (DB || B == A) ? km_kernel_block(k, DA, NULL, A->l, DB ? DB : DA, NULL, B->l,
                                                    K, threads, err)
                                  : err->code;
    km_kdata_free(DA);
    km_kdata_free(DB);
    if (rc != KM_OK) {
        free(K);
        return NULL;
    }
    return K;
}

/* A copy of P's rows without labels (the model's expansion vectors). */
static km_problem *inputs_of(const km_problem *P)
{
    km_problem *S = calloc(1, sizeof *S);
    if (!S)
        return NULL;
    S->l = P->l;
    S->n = P->n;
    S->nnz = P->nnz;
    S->row_ptr = malloc((size_t)(P->l + 1) * sizeof *S->row_ptr);
    S->index = malloc((size_t)(P->nnz > 0 ? P->nnz : 1) * sizeof *S->index);
    S->value = malloc((size_t)(P->nnz > 0 ? P->nnz : 1) * sizeof *S->value);
    S->y = calloc((size_t)P->l, sizeof *S->y);
    if (!S->row_ptr || !S->index || !S->value || !S->y) {
        km_problem_free(S);
        return NULL;
    }
    memcpy(S->row_ptr, P->row_ptr, (size_t)(P->l + 1) * sizeof *S->row_ptr);
    memcpy(S->index, P->index, (size_t)P->nnz * sizeof *S->index);
    memcpy(S->value, P->value, (size_t)P->nnz * sizeof *S->value);
    return S;
}

/* The OKL model of O's current solution. */
static int make_model(km_okl *O, const km_problem *P, const km_okl_setup *S, double lambda,
                      km_model **model, km_error *err)
{
    int64_t l = P->l, m = km_problem_nout(P), nc = km_okl_ncodes(O);
    if (nc > INT32_MAX / 2)
        return km_error_set(err, KM_EUSAGE, "okl: %lld codes are too many for a model",
                            (long long)nc);
    km_model *md = km_model_alloc(&km_kind_okl, KM_LOSS_RLS, P->n, 0, (int)nc, err);
    km_problem *sv = inputs_of(P);
    double *A = malloc((size_t)(l * nc) * sizeof *A);
    double *B = S->par.identity ? NULL : malloc((size_t)(m * nc) * sizeof *B);
    int rc = md ? KM_OK : err->code;
    if (rc == KM_OK && (!sv || !A || (!S->par.identity && !B)))
        rc = km_error_nomem(err, "okl model");
    if (rc == KM_OK) {
        km_okl_A(O, A);
        if (B)
            rc = km_okl_B(O, B, err);
    }
    if (rc == KM_OK) {
        rc = km_model_set_okl(md, &S->kernel, sv, A, m, B, lambda, err);
        sv = NULL, A = B = NULL; /* owned by the model now */
    }
    km_problem_free(sv);
    free(A);
    free(B);
    if (rc != KM_OK) {
        km_model_free(md);
        return rc;
    }
    *model = md;
    return KM_OK;
}

int km_okl_run(const km_problem *P, const km_problem *V, const km_okl_setup *S,
               km_okl_path *path, km_model **model, km_error *err)
{
    memset(path, 0, sizeof *path);
    int64_t l = P->l, m = km_problem_nout(P), lv = V ? V->l : 0;
    if (V && km_problem_nout(V) != m)
        return km_error_set(err, KM_EINPUT, "validation data have %d outputs per row, the "
                            "training data %lld", (int)km_problem_nout(V), (long long)m);
    km_okl_param par = S->par;
    if (par.p == 0 && !par.identity)
        par.p = (int)(l < m ? l : m);
    double t0 = km_seconds();
    double *K = kernel_matrix(&S->kernel, P, P, S->threads, err);
    double *Kv = K && V ? kernel_matrix(&S->kernel, V, P, S->threads, err) : NULL;
    km_okl *O = K && (Kv || !V) ? km_okl_new(K, P->y, l, m, Kv, V ? V->y : NULL, lv, &par, err)
                                : NULL;
    free(K);
    free(Kv);
    if (!O)
        return err->code;
    path->alpha = km_okl_alpha(O);
    path->p = (int)km_okl_ncodes(O);
    path->has_valid = V != NULL;
    int nl = path->nl = S->nl > 0 ? S->nl : KM_OKL_DEFAULT_NL;
    double hi = S->lmax > 0 ? S->lmax : path->alpha, lo = S->lmin > 0 ? S->lmin
                                                          : KM_OKL_DEFAULT_SPAN * path->alpha;
    path->row = calloc((size_t)nl, sizeof *path->row);
    path->seconds = calloc((size_t)nl, sizeof *path->seconds);
    int rc = path->row && path->seconds ? KM_OK : km_error_nomem(err, "okl path");
    if (rc == KM_OK && !(hi > 0))
        rc = km_error_set(err, KM_EINPUT, "okl: Y'KY = 0 (all outputs 0, or K = 0): nothing "
                          "to learn; give lambdas with -L");
    path->setup_seconds = km_seconds() - t0;
    double best = INFINITY;
    for (int t = 0; t < nl && rc == KM_OK; t++) {
        double lambda = t == 0 ? hi : t == nl - 1 ? lo  /* the ends exactly */
                        : exp(log(hi) + (log(lo) - log(hi)) * t / (nl - 1));
        double ts = km_seconds();
        rc = km_okl_solve(O, lambda, &path->row[t], err);
        path->seconds[t] = km_seconds() - ts;
        path->path_seconds += path->seconds[t];
        if (rc != KM_OK)
            break;
        double score = V ? path->row[t].valid_mse : -t; /* no validation: the last lambda */
        if (score < best) {
            best = score;
            path->chosen = t;
            km_okl_keep(O);
        }
        if (S->progress)
            S->progress(S->ctx, t, nl, &path->row[t], path->seconds[t]);
    }
    if (rc == KM_OK && model) {
        km_okl_recall(O);
        rc = make_model(O, P, S, path->row[path->chosen].lambda, model, err);
    }
    km_okl_free(O);
    if (rc != KM_OK)
        km_okl_path_free(path);
    return rc;
}

void km_okl_path_free(km_okl_path *path)
{
    free(path->row);
    free(path->seconds);
    memset(path, 0, sizeof *path);
}

static int write_csv(FILE *f, const void *ctx)
{
    const km_okl_path *p = ctx;
    fputs("lambda,objective,rank,iterations,seconds,train_mse,valid_mse,chosen\n", f);
    for (int t = 0; t < p->nl; t++) {
        const km_okl_info *r = &p->row[t];
        fprintf(f, "%.10g", r->lambda);
        km_csv_number(f, r->objective);
        fprintf(f, ",%d,%lld", r->rank, (long long)r->iter);
        km_csv_number(f, p->seconds[t]);
        km_csv_number(f, r->train_mse);
        km_csv_number(f, r->valid_mse);
        fprintf(f, ",%d\n", t == p->chosen);
    }
    return 0;
}

int km_okl_write_csv(const km_okl_path *path, const char *file, km_error *err)
{
    return km_write_atomic(file, "path table", write_csv, path, err);
}
