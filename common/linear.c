/* linear.c - see linear.h. */
#include "linear.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cocoa.h"
#include "dist.h"
#include "kcd.h"
#include "sizelimit.h"
#include "rng.h"
#include "tasks.h"

void km_train_info_free(km_train_info *info)
{
    if (!info)
        return;
    free(info->objective);
    free(info->primal);
    free(info->gap);
    free(info->max_h);
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
    if (!par->use_kernel && (cd->rule == KM_RULE_GRADIENT || cd->rule == KM_RULE_GREEDY))
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

double km_start_coef(km_loss loss, double y, double z, double C, double eps)
{
    switch (loss) {
    case KM_LOSS_L1SVM:   /* max(0, 1 - yz) */
        return y * z < 1 ? y * C : 0;
    case KM_LOSS_L2SVM:   /* max(0, 1 - yz)^2 */
        return y * z < 1 ? 2 * C * y * (1 - y * z) : 0;
    case KM_LOSS_RLS:     /* (y - z)^2 / 2 */
        return C * (y - z);
    case KM_LOSS_RLA:     /* |y - z| */
        return y > z ? C : y < z ? -C : 0;
    case KM_LOSS_SVR:     /* max(0, |y - z| - eps) */
        return y - z > eps ? C : z - y > eps ? -C : 0;
    default:
        return 0;
    }
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
    if (P->id && !(S->id = malloc(((size_t)nsv + 1) * sizeof *S->id))) {   /* -t precomputed */
        km_problem_free(S);
        free(coef);
        return km_error_nomem(err, "support vectors");
    }
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
        if (S->id)
            S->id[s] = P->id[r];
        S->row_ptr[++s] = t;
    }
    S->nnz = t;
    return km_model_set_kernel(model, kernel, S, coef, err);
}

/* The progress callback of classes trained on several threads: one call at a time. */
typedef struct locked_progress {
    void (*progress)(void *user, int64_t iter, double max_h, int64_t active);
    void *user;
    pthread_mutex_t mu;
} locked_progress;

static void progress_locked(void *user, int64_t iter, double max_h, int64_t active)
{
    locked_progress *lp = user;
    pthread_mutex_lock(&lp->mu);
    lp->progress(lp->user, iter, max_h, active);
    pthread_mutex_unlock(&lp->mu);
}

/* Everything the problems of one model share; each problem (class) is one task. */
typedef struct train_job {
    const km_problem *P;
    const int64_t *rows;
    int64_t m;
    const km_train_param *par;
    km_cd_param cd;          /* par->cd, with a locked progress callback on threads */
    km_linear_data data;
    km_kmatrix *K;
    km_kcd *G;               /* the greedy kernel solver's state (greedy rules) */
    km_model *model;
    const int *cls;          /* class index of each row (classification) */
    int nc, nr_w;
    double *c_all;           /* kernel: nr_w blocks of m coefficients */
    double *buf;             /* per worker: y, C, z (m each), w (dim), c (m, linear) */
    size_t per_worker;
    double *delta;           /* per problem: the tolerance used */
    km_train_info *info;
    km_error *errs;          /* per problem */
    double *init_dec;        /* NULL, or m * nr_w decision values of par->init */
    double *init_c;          /* NULL, or m * nr_w coefficients of par->init's own rows */
} train_job;

/* Solves problem k (class k of one-versus-all, else the only one) on the worker's buffers. */
static int train_problem(void *ctx, int64_t kk, int worker)
{
    train_job *J = ctx;
    const km_train_param *par = J->par;
    int k = (int)kk, nc = J->nc, nr_w = J->nr_w;
    int64_t m = J->m;
    km_loss loss = par->cd.loss;
    int classify = km_loss_is_classification(loss);
    double *y = J->buf + J->per_worker * (size_t)worker, *C = y + m, *z = C + m, *w = z + m;
    double *ck = par->use_kernel ? J->c_all + (size_t)k * (size_t)m : w + J->P->n + 1;
    km_error *err = &J->errs[k];
    for (int64_t i = 0; i < m; i++) {
        if (!classify) {
            y[i] = J->P->y[J->rows ? J->rows[i] : i];
            C[i] = par->C;
        } else if (nc == 2) {    /* binary: +1 is the larger label, each class its C */
            y[i] = J->cls[i] == 1 ? 1 : -1;
            C[i] = par->C * J->model->label_weight[J->cls[i]];
        } else {                 /* one-versus-all for class k */
            y[i] = J->cls[i] == k ? 1 : -1;
            C[i] = J->cls[i] == k ? par->C * J->model->label_weight[k] : par->C;
        }
        if (par->row_weight)     /* instance weights: C_i = C * class weight * w_i */
            C[i] *= par->row_weight[J->rows ? J->rows[i] : i];
    }
    km_cd_param cd = J->cd;
    double *c0 = NULL;
    if (J->init_dec) {           /* warm start: c from the init model's decision values */
        if (!(c0 = malloc((size_t)(m > 0 ? m : 1) * sizeof *c0)))
            return km_error_nomem(err, "warm start");
        for (int64_t i = 0; i < m; i++)
            c0[i] = km_start_coef(loss, y[i], J->init_dec[i * nr_w + k], C[i], par->cd.eps);
        cd.c_init = c0;
    } else if (J->init_c) {      /* warm start: the kernel model's own coefficients */
        if (!(c0 = malloc((size_t)(m > 0 ? m : 1) * sizeof *c0)))
            return km_error_nomem(err, "warm start");
        for (int64_t i = 0; i < m; i++)
            c0[i] = km_clip_coef(loss, y[i], J->init_c[i * nr_w + k], C[i]);
        cd.c_init = c0;
    }
    km_cd_result res = {0};
    int rc;
    if (!par->use_kernel)
        rc = km_cd_linear(&J->data, y, C, &cd, w, ck, &res, err);
    else if (J->G)
        rc = km_kcd_solve(J->G, y, C, &cd, ck, z, &res, err);
    else if (par->fixedpoint)
        rc = km_dist_fixedpoint(J->K, y, C, &cd, par->alpha_rule, par->threads, ck, z, &res,
                                err);   /* rows of K over ranks, if any (cocoa.h) */
    else
        rc = km_cd_kernel(J->K, y, C, &cd, ck, z, &res, err);
    free(c0);
    if (rc)
        return rc;
    if (!par->use_kernel) {
        int64_t rows_w = (int64_t)J->P->n + (par->bias >= 0);
        for (int64_t j = 0; j < rows_w; j++)
            km_model_w(J->model)[j * nr_w + k] = w[j];
    }
    J->delta[k] = res.delta;
    /* feature values so large that the kernel or w'x overflows: an error, not a model of
     * NaN that claims a gap of 0 (every solver returns its exact primal and gap) */
    double primal = res.primal, gap = res.gap;
    if (!isfinite(primal) || !(gap >= 0))
        return km_error_set(err, KM_EINPUT, "the objective is not finite (%g): the feature "
                            "values are too large for %s%s; scale them (e.g. "
                            "datasets/standardize)", primal,
                            par->use_kernel ? km_kernel_name(par->kernel.type) : "w'x",
                            par->use_kernel ? " kernel values" : "");
    km_train_info *info = J->info;
    if (info) {
        info->objective[k] = par->use_kernel
            ? km_kernel_objective(y, C, loss, par->cd.eps, ck, z, m)
            : km_linear_objective(&J->data, y, C, loss, par->cd.eps, w);
        info->gap[k] = gap;
        info->primal[k] = primal;
        info->max_h[k] = res.max_h;
        info->iter[k] = res.iter;
        info->converged[k] = res.converged;
        for (int64_t i = 0; i < m; i++)
            info->nnz_c[k] += ck[i] != 0;
    }
    return KM_OK;
}

double km_clip_coef(km_loss loss, double y, double c, double C)
{
    switch (loss) {
    case KM_LOSS_L1SVM:   /* y c in [0, C] */
        return y * c <= 0 ? 0 : y * c > C ? y * C : c;
    case KM_LOSS_L2SVM:   /* y c >= 0 */
        return y * c <= 0 ? 0 : c;
    case KM_LOSS_RLA:
    case KM_LOSS_SVR:     /* |c| <= C */
        return c > C ? C : c < -C ? -C : c;
    case KM_LOSS_RLS:
        return c;
    default:
        return 0;
    }
}

static uint64_t row_hash(const int32_t *ix, const double *v, int64_t n)
{
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *a = (const unsigned char *)ix, *b = (const unsigned char *)v;
    for (size_t q = 0; q < (size_t)n * sizeof *ix; q++)
        h = (h ^ a[q]) * 1099511628211ULL;
    for (size_t q = 0; q < (size_t)n * sizeof *v; q++)
        h = (h ^ b[q]) * 1099511628211ULL;
    return h;
}

/* A kernel init model of the same kernel: its coefficients on the training rows that are
 * its support vectors (matched by content, each support vector used once), 0 elsewhere;
 * *out stays NULL when the model is not such a model. */
static int init_coefficients(const km_train_param *par, const km_problem *P,
                             const int64_t *rows, int64_t m, int nr_w, double **out,
                             km_error *err)
{
    const km_model *I = par->init;
    const km_expansion *e = I->kind == &km_kind_kernel ? km_model_expansion(I) : NULL;
    *out = NULL;
    if (!par->use_kernel || !e || I->nr_w != nr_w || e->kernel.type != par->kernel.type ||
        e->kernel.gamma != par->kernel.gamma || e->kernel.coef0 != par->kernel.coef0 ||
        e->kernel.degree != par->kernel.degree || e->kernel.offset != par->kernel.offset ||
        e->kernel.type == KM_KERNEL_PRECOMPUTED)   /* its support vectors have no rows */
        return KM_OK;
    const km_problem *S = e->sv;
    int64_t cap = 2;
    while (cap < 2 * S->l + 2)
        cap *= 2;
    int64_t *slot = malloc((size_t)cap * sizeof *slot);
    char *used = calloc((size_t)S->l + 1, 1);
    double *c = calloc((size_t)m * (size_t)nr_w + 1, sizeof *c);
    if (!slot || !used || !c) {
        free(slot);
        free(used);
        free(c);
        return km_error_nomem(err, "warm start");
    }
    for (int64_t q = 0; q < cap; q++)
        slot[q] = -1;
    for (int64_t s = 0; s < S->l; s++) {
        int64_t b = S->row_ptr[s], n = S->row_ptr[s + 1] - b;
        uint64_t q = row_hash(S->index + b, S->value + b, n) & (uint64_t)(cap - 1);
        while (slot[q] >= 0)
            q = (q + 1) & (uint64_t)(cap - 1);
        slot[q] = s;
    }
    for (int64_t a = 0; a < m; a++) {
        int64_t r = rows ? rows[a] : a, b = P->row_ptr[r], n = P->row_ptr[r + 1] - b;
        uint64_t q = row_hash(P->index + b, P->value + b, n) & (uint64_t)(cap - 1);
        for (; slot[q] >= 0; q = (q + 1) & (uint64_t)(cap - 1)) {
            int64_t s = slot[q], sb = S->row_ptr[s];
            if (used[s] || S->row_ptr[s + 1] - sb != n ||
                memcmp(S->index + sb, P->index + b, (size_t)n * sizeof *P->index) ||
                memcmp(S->value + sb, P->value + b, (size_t)n * sizeof *P->value))
                continue;
            used[s] = 1;
            memcpy(c + a * nr_w, e->sv_coef + s * nr_w, (size_t)nr_w * sizeof *c);
            break;
        }
    }
    free(slot);
    free(used);
    *out = c;
    return KM_OK;
}

/* The warm start's decision values on the rows (m * nr_w); KM_EUSAGE when the init model's
 * classes or outputs are not those of the model being trained. */
static int init_check(const km_train_param *par, const km_model *model, km_error *err)
{
    const km_model *I = par->init;
    int same = I->nr_class == model->nr_class && I->nr_w == model->nr_w && I->nr_output == 0;
    for (int k = 0; same && k < model->nr_class; k++)
        same = I->labels[k] == model->labels[k];
    if (!same)
        return km_error_set(err, KM_EUSAGE, "--init: the model's %s (%d, %d decision values) "
                            "are not those of the data (%d, %d)", model->nr_class ? "classes"
                            : "outputs", I->nr_class, I->nr_w, model->nr_class, model->nr_w);
    return KM_OK;
}

static int init_decisions(const km_train_param *par, const km_problem *P, const int64_t *rows,
                          int64_t m, const km_model *model, double **out, km_error *err)
{
    const km_model *I = par->init;
    if (!(*out = malloc(((size_t)m * (size_t)model->nr_w + 1) * sizeof **out)))
        return km_error_nomem(err, "warm start");
    return km_model_decision_rows(I, P, rows, m, *out, par->threads, err);
}

/* A class's result for km_dist_tasks_run (classes on ranks): its column of w (linear) or its
 * coefficients (kernel), its tolerance and its info. */
static int64_t problem_size(void *ctx, int64_t k)
{
    (void)k;
    train_job *J = ctx;
    int64_t s = J->par->use_kernel ? J->m : (int64_t)J->P->n + (J->par->bias >= 0);
    return 8 * (s + 1 + (J->info ? 7 : 0));
}

static void problem_io(train_job *J, int64_t k, void *buf, int put)
{
    int64_t pos = 0, nr_w = J->nr_w;
#define IO(p) (put ? km_dist_put(buf, &pos, (p), 8) : km_dist_get(buf, &pos, (p), 8))
    if (J->par->use_kernel)
        for (int64_t i = 0; i < J->m; i++)
            IO(&J->c_all[k * J->m + i]);
    else
        for (int64_t j = 0; j < (int64_t)J->P->n + (J->par->bias >= 0); j++)
            IO(&km_model_w(J->model)[j * nr_w + k]);
    IO(&J->delta[k]);
    if (J->info) {
        int64_t conv = J->info->converged[k];
        IO(&J->info->objective[k]);
        IO(&J->info->primal[k]);
        IO(&J->info->gap[k]);
        IO(&J->info->max_h[k]);
        IO(&J->info->iter[k]);
        IO(&conv);
        IO(&J->info->nnz_c[k]);
        J->info->converged[k] = (int)conv;
    }
#undef IO
}

static void problem_pack(void *ctx, int64_t k, void *buf)
{
    problem_io(ctx, k, buf, 1);
}

static int problem_unpack(void *ctx, int64_t k, const void *buf, km_error *err)
{
    (void)err;
    problem_io(ctx, k, (void *)buf, 0);
    return KM_OK;
}

/* The cache of K: a fixed point split over ranks (cocoa.h) needs only this rank's rows of K
 * (its values do not depend on the cache). */
static size_t dist_cache(const km_train_param *par, int64_t m, int nr_w)
{
    km_dist *d = km_dist_current();
    if (!d || d->size == 1 || !par->fixedpoint || nr_w > 1 || par->alpha_rule != KM_ALPHA_TRACE)
        return par->cache_bytes;
    size_t rows = (size_t)((m + d->size - 1) / d->size + 2) * (size_t)m * sizeof(double);
    return rows < par->cache_bytes ? rows : par->cache_bytes;
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
    /* w and the model are dense in the features: the data must justify their size (a
     * kernel model has no w) */
    if (!par->use_kernel &&
        (rc = km_limit_features(P, rows, m, (int64_t)P->n + 1, nr_w, "the weights w", err))) {
        free(labels);
        return rc;
    }
    /* the linear solver trains the classes of one-versus-all on threads; the kernel solver
     * shares K (and its cache) between classes and uses the threads inside */
    int workers = par->use_kernel ? 1 : km_tasks_workers(nr_w, par->threads);
    km_model *model = par->use_kernel ? km_model_alloc(&km_kind_kernel, loss, P->n, nc, nr_w, err)
                                      : km_model_new(loss, P->n, nc, nr_w, err);
    size_t dim = par->use_kernel ? 0 : (size_t)P->n + 1;
    locked_progress lp = {par->cd.progress, par->cd.user, PTHREAD_MUTEX_INITIALIZER};
    train_job J = {P, rows, m, par, par->cd, {P, rows, m, par->bias}, NULL, NULL, model, NULL,
                   nc, nr_w, NULL, NULL, 3 * (size_t)m + dim + (size_t)m, NULL, info, NULL,
                   NULL, NULL};
    int greedy = par->use_kernel && !par->fixedpoint && km_rule_is_greedy(par->cd.rule);
    if (workers > 1 && par->cd.progress) {
        J.cd.progress = progress_locked;
        J.cd.user = &lp;
    }
    km_kdata *X = NULL;
    J.buf = malloc(J.per_worker * (size_t)workers * sizeof *J.buf);
    /* the coefficients of every decision function: kernel models keep them all */
    J.c_all = par->use_kernel ? malloc((size_t)m * (size_t)nr_w * sizeof *J.c_all) : NULL;
    int *cls = classify ? malloc((size_t)m * sizeof *cls) : NULL;
    J.cls = cls;
    J.delta = calloc((size_t)nr_w, sizeof *J.delta);
    J.errs = calloc((size_t)nr_w, sizeof *J.errs);
    if (info) {
        memset(info, 0, sizeof *info);
        info->nr_w = nr_w;
        info->objective = calloc((size_t)nr_w, sizeof *info->objective);
        info->primal = calloc((size_t)nr_w, sizeof *info->primal);
        info->gap = calloc((size_t)nr_w, sizeof *info->gap);
        info->max_h = calloc((size_t)nr_w, sizeof *info->max_h);
        info->iter = calloc((size_t)nr_w, sizeof *info->iter);
        info->converged = calloc((size_t)nr_w, sizeof *info->converged);
        info->nnz_c = calloc((size_t)nr_w, sizeof *info->nnz_c);
    }
    if (!model || !J.buf || (par->use_kernel && !J.c_all) || (classify && !cls) || !J.delta ||
        !J.errs || (info && (!info->objective || !info->primal || !info->gap ||
                             !info->max_h || !info->iter || !info->converged ||
                             !info->nnz_c))) {
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
            (greedy && !(J.G = km_kcd_new(&par->kernel, X, par->cache_bytes, par->threads,
                                          err))) ||
            (!greedy &&
             !(J.K = km_kmatrix_new(&par->kernel, X, dist_cache(par, m, nr_w), par->threads,
                                    err)))) {
            rc = err->code;
            goto done;
        }
    }
    for (int64_t i = 0; classify && i < m; i++)
        cls[i] = find_label(labels, nc, P->y[rows ? rows[i] : i]);
    /* a kernel model of the same kernel starts from its own coefficients, any other from
     * its decision values */
    if (par->init && ((rc = init_check(par, model, err)) ||
                      (rc = init_coefficients(par, P, rows, m, nr_w, &J.init_c, err)) ||
                      (!J.init_c &&
                       (rc = init_decisions(par, P, rows, m, model, &J.init_dec, err)))))
        goto done;
    int64_t failed;
    static const km_task_io class_io = {problem_size, problem_pack, problem_unpack};
    if ((rc = km_dist_tasks_run(nr_w, workers, train_problem, &class_io, &J, J.errs,
                                &failed))) {   /* classes on ranks, if any */
        *err = J.errs[failed];
        goto done;
    }
    if (info)
        info->delta = J.delta[0];
    if (par->use_kernel)
        rc = keep_support_vectors(model, P, rows, m, J.c_all, &par->kernel, err);
done:
    km_kcd_free(J.G);
    km_kmatrix_free(J.K);
    km_kdata_free(X);
    free(labels);
    free(J.buf);
    free(J.c_all);
    free(cls);
    free(J.delta);
    free(J.errs);
    free(J.init_dec);
    free(J.init_c);
    if (rc) {
        km_model_free(model);
        if (info)
            km_train_info_free(info);
        return rc;
    }
    *out = model;
    return KM_OK;
}
