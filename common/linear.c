/* linear.c - see linear.h. */
#include "linear.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kcd.h"
#include "rng.h"

void km_train_info_free(km_train_info *info)
{
    if (!info)
        return;
    free(info->objective);
    free(info->iter);
    free(info->converged);
    free(info->nnz_c);
    memset(info, 0, sizeof *info);
}

int km_train_check(const km_train_param *par, km_error *err)
{
    const km_cd_param *cd = &par->cd;
    if (!(par->C > 0) || !isfinite(par->C))
        return km_error_set(err, KM_EUSAGE, "C must be a positive number (-c)");
    if (!(cd->eps >= 0) || !isfinite(cd->eps))
        return km_error_set(err, KM_EUSAGE, "epsilon must be >= 0 (-p)");
    if (!(cd->delta >= 0) || !isfinite(cd->delta))   /* 0 = the default */
        return km_error_set(err, KM_EUSAGE, "the stopping tolerance must be > 0 (-e)");
    if (cd->max_iter < 1)
        return km_error_set(err, KM_EUSAGE, "the iteration cap must be >= 1");
    if (!isfinite(par->bias))
        return km_error_set(err, KM_EUSAGE, "bias must be a finite number (-B)");
    if (par->use_kernel && par->bias >= 0)
        return km_error_set(err, KM_EUSAGE, "-B applies to the linear solver only (a kernel "
                            "model has no bias feature; add a constant to the kernel instead)");
    if (!par->use_kernel && (cd->rule == KM_RULE_GRADIENT || cd->rule == KM_RULE_GREEDY ||
                             cd->rule == KM_RULE_PAIR))
        return km_error_set(err, KM_EUSAGE, "--rule %s needs a kernel (-t)",
                            km_rule_name(cd->rule));
    if (par->fixedpoint && !par->use_kernel)
        return km_error_set(err, KM_EUSAGE, "the fixed-point solver needs a kernel (-t)");
    if (par->use_kernel && par->threads < 1)
        return km_error_set(err, KM_EUSAGE, "the number of threads must be >= 1 (-n)");
    for (int k = 0; k < par->nr_weight; k++)
        if (!(par->weights[k].weight > 0) || !isfinite(par->weights[k].weight))
            return km_error_set(err, KM_EUSAGE, "class weight for label %g must be > 0 (-w)",
                                par->weights[k].label);
    return KM_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Index of label y in the sorted labels[0..nc), or -1. */
static int find_label(const double *labels, int nc, double y)
{
    int lo = 0, hi = nc - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (labels[mid] == y)
            return mid;
        if (labels[mid] < y)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* The distinct labels of the listed rows, ascending; *out is malloc'ed. */
static int collect_labels(const km_problem *P, const int64_t *rows, int64_t m, double **out,
                          int *nc_out, km_error *err)
{
    int nc = 0, cap = 16;
    double *labels = malloc((size_t)cap * sizeof *labels);
    if (!labels)
        return km_error_nomem(err, "labels");
    for (int64_t i = 0; i < m; i++) {
        double y = P->y[rows ? rows[i] : i];
        if (nc > 0 && find_label(labels, nc, y) >= 0)
            continue;
        if (nc == cap) {
            double *t = realloc(labels, (size_t)(cap *= 2) * sizeof *labels);
            if (!t) {
                free(labels);
                return km_error_nomem(err, "labels");
            }
            labels = t;
        }
        labels[nc++] = y;
        qsort(labels, (size_t)nc, sizeof *labels, cmp_double);
    }
    *out = labels;
    *nc_out = nc;
    return KM_OK;
}

/* F(c) = sum_i C_i L(y_i, z_i) + c'z/2 with z = Kc (problem (2.2)). */
static double km_kernel_objective(const double *y, const double *C, km_loss loss, double eps,
                                  const double *c, const double *z, int64_t m)
{
    double F = 0;
    for (int64_t i = 0; i < m; i++)
        F += C[i] * km_loss_value(loss, y[i], z[i], eps) + c[i] * z[i] / 2;
    return F;
}

/* Makes model a kernel model over the rows whose coefficient is non-zero in some decision
 * function; c holds nr_w blocks of m coefficients. */
static int keep_support_vectors(km_model *model, const km_problem *P, const int64_t *rows,
                                int64_t m, const double *c, const km_kernel *kernel,
                                km_error *err)
{
    int nw = model->nr_w;
    int64_t nsv = 0, nnz = 0;
    for (int64_t i = 0; i < m; i++) {
        int keep = 0;
        for (int k = 0; k < nw; k++)
            keep |= c[(size_t)k * (size_t)m + (size_t)i] != 0;
        if (keep) {
            int64_t r = rows ? rows[i] : i;
            nsv++;
            nnz += P->row_ptr[r + 1] - P->row_ptr[r];
        }
    }
    km_problem *S = calloc(1, sizeof *S);
    double *coef = malloc(((size_t)nsv * (size_t)nw + 1) * sizeof *coef);
    if (!S || !coef || !(S->row_ptr = calloc((size_t)nsv + 1, sizeof *S->row_ptr)) ||
        !(S->index = malloc(((size_t)nnz + 1) * sizeof *S->index)) ||
        !(S->value = malloc(((size_t)nnz + 1) * sizeof *S->value)) ||
        !(S->y = calloc((size_t)nsv + 1, sizeof *S->y))) {
        km_problem_free(S);
        free(coef);
        return km_error_nomem(err, "support vectors");
    }
    S->l = nsv;
    S->n = P->n;
    int64_t s = 0, t = 0;
    for (int64_t i = 0; i < m; i++) {
        int keep = 0;
        for (int k = 0; k < nw; k++)
            keep |= c[(size_t)k * (size_t)m + (size_t)i] != 0;
        if (!keep)
            continue;
        int64_t r = rows ? rows[i] : i;
        for (int64_t q = P->row_ptr[r]; q < P->row_ptr[r + 1]; q++, t++) {
            S->index[t] = P->index[q];
            S->value[t] = P->value[q];
        }
        for (int k = 0; k < nw; k++)
            coef[s * nw + k] = c[(size_t)k * (size_t)m + (size_t)i];
        S->row_ptr[++s] = t;
    }
    S->nnz = t;
    return km_model_set_kernel(model, kernel, S, coef, err);
}

int km_train(const km_problem *P, const int64_t *rows, int64_t m,
                    const km_train_param *par, km_model **out, km_train_info *info,
                    km_error *err)
{
    int rc = km_train_check(par, err);
    if (rc)
        return rc;
    if (!rows)
        m = P->l;
    if (m < 1)
        return km_error_set(err, KM_EINPUT, "no training examples");
    km_loss loss = par->cd.loss;
    int classify = km_loss_is_classification(loss);
    double *labels = NULL;
    int nc = 0;
    if (classify) {
        if ((rc = collect_labels(P, rows, m, &labels, &nc, err)))
            return rc;
        if (nc < 2) {
            free(labels);
            return km_error_set(err, KM_EINPUT, "the training data has only one class "
                                "(label %g); %s needs at least two", P->y[rows ? rows[0] : 0],
                                km_loss_name(loss));
        }
    }
    if (par->use_kernel && (rc = km_kernel_check(&par->kernel, P->n, err))) {
        free(labels);
        return rc;
    }
    int nr_w = nc > 2 ? nc : 1;
    km_model *model = km_model_new(loss, P->n, nc, nr_w, err);
    int64_t dim = (int64_t)P->n + 1;
    km_linear_data data = {P, rows, m, par->bias};
    km_kdata *X = NULL;
    km_kmatrix *K = NULL;
    km_kcd *G = NULL;   /* the greedy kernel solver's state */
    int greedy = par->use_kernel && !par->fixedpoint && km_rule_is_greedy(par->cd.rule);
    double *y = malloc((size_t)m * sizeof *y);
    double *C = malloc((size_t)m * sizeof *C);
    double *w = malloc((size_t)dim * sizeof *w);
    double *z = malloc((size_t)m * sizeof *z);
    /* the coefficients of every decision function: kernel models keep them all */
    double *c = malloc((size_t)m * (par->use_kernel ? (size_t)nr_w : 1) * sizeof *c);
    int *cls = classify ? malloc((size_t)m * sizeof *cls) : NULL;
    if (info) {
        memset(info, 0, sizeof *info);
        info->nr_w = nr_w;
        info->objective = calloc((size_t)nr_w, sizeof *info->objective);
        info->iter = calloc((size_t)nr_w, sizeof *info->iter);
        info->converged = calloc((size_t)nr_w, sizeof *info->converged);
        info->nnz_c = calloc((size_t)nr_w, sizeof *info->nnz_c);
    }
    if (!model || !y || !C || !w || !z || !c || (classify && !cls) ||
        (info && (!info->objective || !info->iter || !info->converged || !info->nnz_c))) {
        rc = model ? km_error_nomem(err, "training") : KM_EINTERNAL;
        goto done;
    }
    model->C = par->C;
    model->eps = par->cd.eps;
    model->bias = par->bias >= 0 ? par->bias : -1;
    for (int k = 0; k < nc; k++) {
        model->labels[k] = labels[k];
        for (int q = 0; q < par->nr_weight; q++)
            if (par->weights[q].label == labels[k])
                model->label_weight[k] = par->weights[q].weight;
    }
    for (int q = 0; q < par->nr_weight; q++)
        if (!classify || find_label(labels, nc, par->weights[q].label) < 0) {
            rc = km_error_set(err, KM_EUSAGE, "-w%g: no class with label %g in the training "
                              "data", par->weights[q].label, par->weights[q].label);
            goto done;
        }
    if (par->use_kernel) {
        if (!(X = km_kdata_new(P, rows, m, err)) ||
            (greedy && !(G = km_kcd_new(&par->kernel, X, par->cache_bytes, par->threads, err))) ||
            (!greedy &&
             !(K = km_kmatrix_new(&par->kernel, X, par->cache_bytes, par->threads, err)))) {
            rc = err->code;
            goto done;
        }
    }
    for (int64_t i = 0; i < m; i++) {
        double yi = P->y[rows ? rows[i] : i];
        if (classify)
            cls[i] = find_label(labels, nc, yi);
        else
            y[i] = yi;
    }
    for (int k = 0; k < nr_w; k++) {
        for (int64_t i = 0; classify && i < m; i++) {
            if (nc == 2) {           /* binary: +1 is the larger label, each class its C */
                y[i] = cls[i] == 1 ? 1 : -1;
                C[i] = par->C * model->label_weight[cls[i]];
            } else {                 /* one-versus-all for class k */
                y[i] = cls[i] == k ? 1 : -1;
                C[i] = cls[i] == k ? par->C * model->label_weight[k] : par->C;
            }
        }
        for (int64_t i = 0; !classify && i < m; i++)
            C[i] = par->C;
        km_cd_result res;
        double *ck = par->use_kernel ? c + (size_t)k * (size_t)m : c;
        if (!par->use_kernel)
            rc = km_cd_linear(&data, y, C, &par->cd, w, ck, &res, err);
        else if (greedy)
            rc = km_kcd_solve(G, y, C, &par->cd, ck, z, &res, err);
        else if (par->fixedpoint)
            rc = km_fixedpoint(K, y, C, &par->cd, par->alpha_rule, par->threads, ck, z, &res,
                               err);
        else
            rc = km_cd_kernel(K, y, C, &par->cd, ck, z, &res, err);
        if (rc)
            goto done;
        if (!par->use_kernel) {
            int64_t rows_w = (int64_t)P->n + (par->bias >= 0);
            for (int64_t j = 0; j < rows_w; j++)
                model->w[j * nr_w + k] = w[j];
        }
        if (info) {
            info->objective[k] = par->use_kernel
                ? km_kernel_objective(y, C, loss, par->cd.eps, ck, z, m)
                : km_linear_objective(&data, y, C, loss, par->cd.eps, w);
            info->iter[k] = res.iter;
            info->converged[k] = res.converged;
            info->delta = res.delta;
            for (int64_t i = 0; i < m; i++)
                info->nnz_c[k] += ck[i] != 0;
        }
    }
    if (par->use_kernel)
        rc = keep_support_vectors(model, P, rows, m, c, &par->kernel, err);
done:
    km_kcd_free(G);
    km_kmatrix_free(K);
    km_kdata_free(X);
    free(z);
    free(labels);
    free(y);
    free(C);
    free(w);
    free(c);
    free(cls);
    if (rc) {
        km_model_free(model);
        if (info)
            km_train_info_free(info);
        return rc;
    }
    *out = model;
    return KM_OK;
}

int km_cross_validate(const km_problem *P, const km_train_param *par, int k, double *pred,
                      km_error *err)
{
    int64_t l = P->l;
    if (k < 2 || k > l)
        return km_error_set(err, KM_EUSAGE, "the number of folds must be between 2 and the "
                            "number of examples (%lld)", (long long)l);
    int64_t *order = malloc((size_t)l * sizeof *order);
    int *fold = malloc((size_t)l * sizeof *fold);
    int64_t *train = malloc((size_t)l * sizeof *train);
    double *labels = NULL;
    int nc = 0, rc = KM_OK;
    if (!order || !fold || !train) {
        rc = km_error_nomem(err, "cross-validation");
        goto done;
    }
    km_rng rng;
    km_rng_seed(&rng, par->cd.seed ^ 0x5bd1e995u);
    for (int64_t i = 0; i < l; i++)
        order[i] = i;
    km_rng_shuffle(&rng, order, l);
    if (km_loss_is_classification(par->cd.loss)) {
        /* stratified: deal each class's shuffled members round-robin into the folds */
        if ((rc = collect_labels(P, NULL, l, &labels, &nc, err)))
            goto done;
        int64_t next = 0;
        for (int q = 0; q < nc; q++)
            for (int64_t t = 0; t < l; t++)
                if (P->y[order[t]] == labels[q])
                    fold[order[t]] = (int)(next++ % k);
    } else {
        for (int64_t t = 0; t < l; t++)
            fold[order[t]] = (int)(t % k);
    }
    for (int f = 0; f < k && rc == KM_OK; f++) {
        int64_t m = 0;
        for (int64_t i = 0; i < l; i++)
            if (fold[i] != f)
                train[m++] = i;
        km_model *model = NULL;
        if ((rc = km_train(P, train, m, par, &model, NULL, err)))
            break;
        int64_t nt = 0;
        for (int64_t i = 0; i < l; i++)   /* the held-out rows reuse the tail of train[] */
            if (fold[i] == f)
                train[m + nt++] = i;
        int nw = model->nr_w;
        double *dec = malloc((size_t)(nt * nw + 1) * sizeof *dec);
        if (!dec) {
            km_model_free(model);
            rc = km_error_nomem(err, "cross-validation");
            break;
        }
        rc = km_model_decision_rows(model, P, train + m, nt, dec, par->threads > 0 ?
                                    par->threads : 1, err);
        for (int64_t a = 0; a < nt && rc == KM_OK; a++)
            pred[train[m + a]] = km_model_predict_label(model, dec + a * nw);
        free(dec);
        km_model_free(model);
    }
done:
    free(order);
    free(fold);
    free(train);
    free(labels);
    return rc;
}
