/* binding.c - see kmtk.h: what bindings such as python/kmtk need beyond the method table:
 * predictions of many rows at once with the predict tool's blocks (predict's bits without
 * streaming a file), and RLS2 as the rls2-path tool trains it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "model.h"
#include "rls2path.h"
#include "sizelimit.h"
#include "tasks.h"

/* The predict tool's rows per block: 1024; a multi-output model fewer, about 64 MB of
 * outputs and codes per block (predict.c, BLOCK_ROWS and block_init). */
static int64_t block_rows(const km_model *m)
{
    if (m->nr_output == 0)
        return 1024;
    int64_t fit = ((int64_t)8 << 20) / (m->nr_output + m->nr_w);
    return fit < 1 ? 1 : fit < 1024 ? fit : 1024;
}

/* Rows [a0, a0 + nb) of X as a problem of their own, sharing X's arrays. */
static km_problem rows_view(const km_problem *X, int64_t a0, int64_t nb)
{
    km_problem B = *X;
    B.l = nb;
    B.row_ptr = X->row_ptr + a0;
    B.nnz = X->row_ptr[a0 + nb];
    B.y = X->y ? X->y + a0 * km_problem_nout(X) : NULL;
    B.qid = X->qid ? X->qid + a0 : NULL;
    return B;
}

typedef struct predict_job {
    const km_model *m;
    const km_problem *X;
    int64_t bs;
    double *dec, *pred;
    km_error *errs;   /* one per block */
} predict_job;

/* One block of a single-output model: its decision values (on one thread, as predict's
 * blocks) and labels. */
static int predict_block(void *ctx, int64_t t, int worker)
{
    predict_job *J = ctx;
    int64_t a0 = t * J->bs, nb = J->X->l - a0 < J->bs ? J->X->l - a0 : J->bs;
    int nw = J->m->nr_w;
    km_problem B = rows_view(J->X, a0, nb);
    (void)worker;
    int rc = km_model_decision_rows(J->m, &B, NULL, nb, J->dec + a0 * nw, 1, &J->errs[t]);
    for (int64_t a = 0; rc == KM_OK && J->pred && a < nb; a++)
        J->pred[a0 + a] = km_model_predict_label(J->m, J->dec + (a0 + a) * nw);
    return rc;
}

int km_model_predict_all(const km_model *m, const km_problem *X, double *dec, double *pred,
                         double *out, int threads, km_error *err)
{
    int64_t l = X->l, nw = m->nr_w, bs = block_rows(m), nblocks = (l + bs - 1) / bs;
    int64_t no = m->nr_output;
    if (threads <= 0)
        threads = km_threads_default();
    double *own = dec ? NULL : malloc((size_t)(l > 0 ? l : 1) * (size_t)nw * sizeof *own);
    double *row_out = no > 0 && !out ? malloc((size_t)no * sizeof *row_out) : NULL;
    km_error *errs = no == 0 ? calloc((size_t)(nblocks > 0 ? nblocks : 1), sizeof *errs) : NULL;
    int rc = (dec || own) && (no == 0 || out || row_out) && (no > 0 || errs)
             ? KM_OK : km_error_nomem(err, "predictions");
    if (!dec)
        dec = own;
    if (rc == KM_OK && no == 0) {   /* predict's batches: blocks on threads */
        predict_job J = {m, X, bs, dec, pred, errs};
        int64_t failed;
        if ((rc = km_tasks_run(nblocks, threads, predict_block, &J, &failed)) && err)
            *err = errs[failed];
    }
    /* multi-output: one block at a time, its kernel block and products on threads */
    for (int64_t a0 = 0; rc == KM_OK && no > 0 && a0 < l; a0 += bs) {
        int64_t nb = l - a0 < bs ? l - a0 : bs;
        km_problem B = rows_view(X, a0, nb);
        if ((rc = km_model_decision_rows(m, &B, NULL, nb, dec + a0 * nw, threads, err)))
            break;
        for (int64_t a = a0; a < a0 + nb; a++) {
            double *o = out ? out + a * no : row_out;
            km_model_outputs(m, dec + a * nw, o);
            if (pred)
                pred[a] = o[0];
        }
    }
    free(own);
    free(row_out);
    free(errs);
    return rc;
}

/* ---- RLS2 (rls2-path.c's steps for a training file alone) ---- */

void km_rls2_options_default(km_rls2_options *o)
{
    *o = (km_rls2_options){"paper", "trace", 0, 1e-6, 1e6, 30, 1e-2, 1000, -1, 0, 0, 0, 1,
                           1};
}

int km_rls2_train(const km_problem *P, const km_rls2_options *o, km_model **out,
                  km_error *err)
{
    *out = NULL;
    km_rls2_setup S = {0};
    km_rls2_param_default(&S.solver);
    int scale = km_scale_from_name(o->scale ? o->scale : "trace");
    if (scale < 0)
        return km_error_set(err, KM_EUSAGE, "scale: unknown scaling '%s' (trace, class, "
                            "microarray, none)", o->scale);
    if (!(o->tolerance > 0) || o->max_iter < 1 || o->lambdas < 1 || !(o->lambda_min > 0) ||
        !(o->lambda_max >= o->lambda_min) || !isfinite(o->lambda_max) || o->threads < 1 ||
        o->threads > 1024 || o->folds < 0 || o->folds == 1 || (o->one_se && !o->folds) ||
        o->seed < 0)
        return km_error_set(err, KM_EUSAGE, "rls2: need tolerance > 0, max_iter >= 1, "
                            "0 < lambda_min <= lambda_max, lambdas >= 1, threads 1..1024, "
                            "folds 0 or >= 2 (one_se needs folds), seed >= 0");
    int rc = km_problem_single(P, "rls2", err);
    if (rc)
        return rc;
    S.scale = (km_scale_rule)scale;
    S.center = o->center;
    S.solver.delta = o->tolerance;
    S.solver.max_iter = o->max_iter;
    S.solver.threads = o->threads;
    S.folds = o->folds;
    S.one_se = o->one_se;
    S.seed = (uint64_t)o->seed;
    S.no_intercept = o->no_intercept;
    S.nl = o->lambdas;
    int task = o->task < 0 ? km_rls2_looks_like_classes(P) : o->task > 0;
    const char *kset = o->kernels ? o->kernels : "paper";
    km_basis_set basis = {0};
    /* the paper and linear sets have kernels per feature: the data must justify them */
    if (!strcmp(kset, "paper") || !strcmp(kset, "linear"))
        rc = km_limit_features(P, NULL, 0, (int64_t)P->n + 1, strcmp(kset, "paper") ? 8 : 104,
                               "the basis kernels", err);
    if (rc)
        return rc;
    if (!strcmp(kset, "paper"))
        rc = km_basis_paper(P->n, &basis, err);
    else if (!strcmp(kset, "linear"))
        rc = km_basis_linear(P->n, &basis, err);
    else
        rc = km_basis_read_list(kset, P->n, &basis, err);
    if (rc == KM_OK && basis.m < 1)
        rc = km_error_set(err, KM_EINPUT, "no basis kernels (the data have no features?)");
    km_kbank *bank = rc ? NULL : km_kbank_new(P, &basis, S.solver.threads, err);
    int64_t *train = malloc((size_t)(P->l > 0 ? P->l : 1) * sizeof *train);
    double *lambda = malloc((size_t)S.nl * sizeof *lambda);
    if (rc == KM_OK && !bank)
        rc = err->code;
    if (rc == KM_OK && (!train || !lambda))
        rc = km_error_nomem(err, "rls2");
    km_rls2_path path = {0};
    int have_path = 0;
    if (rc == KM_OK) {
        for (int64_t i = 0; i < P->l; i++)
            train[i] = i;
        km_rls2_lambdas(o->lambda_min, o->lambda_max, S.nl, lambda);
        S.lambda = lambda;
        S.dof = 1;   /* as rls2-path: computing the dof restarts the next c-step from a new
                        factor (rls2.c, km_rls2_dof), so --no-dof gives other bits */
        S.valid = train + P->l;
        km_rls2_task T = {bank, P->y, train, P->l, train + P->l, 0, task};
        rc = km_rls2_run(&T, &S, &path, err);
        have_path = rc == KM_OK;
    }
    if (rc == KM_OK)
        rc = km_rls2_model(&path, &basis, P, train, out, err);
    if (have_path)
        km_rls2_path_free(&path);
    km_kbank_free(bank);
    km_basis_set_free(&basis);
    free(train);
    free(lambda);
    return rc;
}
