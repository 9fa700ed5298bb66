/* binding.c - see kmtk.h: predictions of many rows at once with the predict tool's
 * blocks (bindings such as python/kmtk get predict's bits without streaming a file). */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "model.h"
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
