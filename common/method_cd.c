/* method_cd.c - the losses of thesis Table 2.1 as methods (l1svm, l2svm, rls, rla, svr),
 * and the logistic loss (logreg):
 * linear (Algorithm 2) or kernel (Algorithm 1, fixed point (2.10)) coordinate descent, by
 * km_train (linear.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linear.h"
#include "method.h"
#include "model.h"
#include "prob.h"
#include "rng.h"
#include "ovo.h"
#include "tasks.h"
#include "weights.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const km_option opt_C = {"C", "-c", "C", KM_OPT_NUMBER, 0, INFINITY, 1, NULL, "1",
                                "cost: minimizes C sum_i L(y_i, z_i) + ||w||^2/2"};
static const km_option opt_eps = {"epsilon", "-p", "epsilon", KM_OPT_NUMBER, 0, INFINITY, 0,
                                  NULL, "0.1", "epsilon of the eps-insensitive loss"};
static const km_option opt_stop = {"stop", "--stop", "RULE", KM_OPT_CHOICE, 0, 0, 0, "gap|step",
                                   "gap", "stopping rule: the relative duality gap (P - D)/P, "
                                   "or the thesis' max_i |h_i| (step)"};
static const km_option opt_tol = {"tolerance", "-e", "delta", KM_OPT_NUMBER, 0, INFINITY, 1,
                                  NULL, NULL, "tolerance of the stopping rule (default gap: "
                                  STR(KM_CD_DEFAULT_GAP) ", scale-free; step: "
                                  STR(KM_CD_DEFAULT_TOL) " / mean_i k(x_i, x_i))"};
static const km_option opt_bias = {"bias", "-B", "bias", KM_OPT_NUMBER, -INFINITY, INFINITY, 0,
                                   NULL, "-1", "a constant feature of this value (< 0: none); "
                                   "with -t: the kernel K + bias^2, an offset b = bias^2 "
                                   "sum_i c_i, regularized like LIBLINEAR's -B"};
static const km_option opt_weight = {"weight", "-w", "LABEL W", KM_OPT_WEIGHT, 0, 0, 0, NULL,
                                     NULL, "-wLABEL W: multiply C of class LABEL by W"};
static const km_option opt_threads = {"threads", "-n", "threads", KM_OPT_INT, 1, 1024, 0, NULL,
                                      NULL, "threads: one-versus-all classes and -v folds in "
                                      "parallel; kernels: a team on the columns of K; the "
                                      "model of -n 1 (default: the online cores, at most "
                                      STR(KM_THREADS_DEFAULT_MAX) ")"};
static const km_option opt_kernel = {"kernel", "-t", "kernel", KM_OPT_CHOICE, 0, 0, 0,
                                     "linear|poly|rbf|sigmoid|laplacian|expdot|spline|precomputed|0|1|2|3|4",
                                     NULL, "the kernel solver (Algorithm 1) on c, model = "
                                     "expansion (default: none, the linear solver on w)"};
static const km_option opt_cache = {"cache", "-m", "MB", KM_OPT_NUMBER, 1, 1e9, 0, NULL, "200",
                                    "kernel row cache in MB"};
static const km_option opt_solver = {"solver", "-a", "solver", KM_OPT_CHOICE, 0, 0, 0,
                                     "cd|fixedpoint", "cd", "kernels: coordinate descent or "
                                     "the fixed-point iteration (2.10)"};
static const km_option opt_fpstep = {"fp_step", "--fp-step", "RULE", KM_OPT_CHOICE, 0, 0, 0,
                                     "trace|norm2", "trace", "fixed-point step 1/tr(K) or "
                                     "1/||K||_2"};
static const km_option opt_rule = {"rule", "--rule", "RULE", KM_OPT_CHOICE, 0, 0, 0,
                                   "auto|random|cyclic|aitken|gradient|greedy", "auto",
                                   "index rule; gradient, greedy: kernels only; auto: random "
                                   "(linear), greedy (kernels)"};
static const km_option opt_max_iter = {"max_iter", "--max-iter", "N", KM_OPT_INT, 1, 9.2e18, 0,
                                       NULL, STR(KM_CD_DEFAULT_MAX_ITER),
                                       "cap on macro-iterations"};
static const km_option opt_noshrink = {"no_shrinking", "--no-shrinking", NULL, KM_OPT_SWITCH, 0,
                                       0, 0, NULL, NULL, "visit every coefficient in every "
                                       "macro-iteration"};

static const km_option opt_nowalk = {"no_walk", "--no-walk", NULL, KM_OPT_SWITCH, 0, 0, 0, NULL,
                                    NULL, "no active-set walk (Newton steps on the free "
                                    "coefficients) when the duality gap stalls"};

static const km_option opt_prob = {"probability", "-b", "0|1", KM_OPT_CHOICE, 0, 0, 0, "0|1",
                                   "0", "1: also fit class probabilities (Platt's sigmoid "
                                   "on 5-fold cross-validated decision values, for predict "
                                   "-b 1); logreg has its own"};

static const km_option opt_row_weights = {"weights", "--weights", "FILE", KM_OPT_TEXT, 0, 0, 0,
                                          NULL, NULL, "instance weights: one number >= 0 a "
                                          "line, one per row, multiplying the row's C (0 "
                                          "drops the row)"};

static const km_option opt_init = {"init", "--init", "MODEL", KM_OPT_TEXT, 0, 0, 0, NULL, NULL,
                                   "warm start: from a kernel model's own coefficients, "
                                   "else its decision values (the same optimum, fewer "
                                   "sweeps near it)"};

#define KERNEL_OPTS &opt_kernel, &km_opt_gamma, &km_opt_degree, &km_opt_coef0, &opt_cache, \
    &opt_solver, &opt_fpstep
#define SOLVER_OPTS &opt_stop, &opt_tol, &opt_rule, &km_opt_seed, &opt_max_iter, &opt_noshrink, \
    &opt_nowalk, &opt_threads, &opt_row_weights, &opt_init

static const km_option opt_multiclass = {"multiclass", "--multiclass", "RULE", KM_OPT_CHOICE,
                                         0, 0, 0, "ova|ovo", "ova", "more than two classes: "
                                         "one-versus-all, or one-versus-one with LIBSVM's "
                                         "votes (kernels only)"};

static const km_option *const classification_opts[] = {&opt_C, &opt_bias, &opt_weight,
                                                       &opt_prob, KERNEL_OPTS, SOLVER_OPTS,
                                                       &opt_multiclass, NULL};
static const km_option *const regression_opts[] = {&opt_C, &opt_bias, KERNEL_OPTS, SOLVER_OPTS,
                                                   NULL};
static const km_option *const svr_opts[] = {&opt_C, &opt_eps, &opt_bias, KERNEL_OPTS,
                                            SOLVER_OPTS, NULL};
static const km_model_kind *const kinds[] = {&km_kind_linear, &km_kind_kernel,
                                             &km_kind_kernel_ovo, NULL};

/* The progress of a macro-iteration, to the parameters' callback. */
static void on_progress(void *user, int64_t iter, double max_h, int64_t active)
{
    km_param_progress(user, "  macro-iteration %lld: max|h| = %.3g, active = %lld",
                      (long long)iter, max_h, (long long)active);
}

/* The parameters of loss as km_train takes them; weights gets the class weights (freed by
 * the caller). */
static int make_param(km_loss loss, const km_params *p, km_train_param *par,
                      km_class_weight **weights, int32_t n, km_error *err)
{
    *par = (km_train_param){0};
    par->cd = km_cd_param_default();
    par->cd.loss = loss;
    par->C = km_param_number(p, "C");
    par->cd.eps = loss == KM_LOSS_SVR ? km_param_number(p, "epsilon") : 0.1;
    par->cd.stop = strcmp(km_param_text(p, "stop"), "step") == 0 ? KM_STOP_STEP : KM_STOP_GAP;
    par->cd.delta = km_param_is_set(p, "tolerance") ? km_param_number(p, "tolerance") : 0;
    par->cd.rule = (km_rule)km_rule_from_name(km_param_text(p, "rule"));
    /* logreg: auto is random for kernels too. The greedy rules solve every coefficient's
     * sub-problem each step, a Newton solve for the logistic loss (5,000 rows of a9a, RBF:
     * 8.2 s CPU greedy, 0.19 s random) */
    if (loss == KM_LOSS_LOGISTIC && par->cd.rule == KM_RULE_AUTO)
        par->cd.rule = KM_RULE_RANDOM;
    par->cd.seed = (uint64_t)km_param_int(p, "seed");
    par->cd.max_iter = km_param_int(p, "max_iter");
    par->cd.shrinking = !km_param_switch(p, "no_shrinking");
    par->cd.no_walk = km_param_switch(p, "no_walk");
    par->cd.progress = on_progress;
    par->cd.user = (void *)p;
    par->bias = km_param_number(p, "bias");
    par->threads = km_param_is_set(p, "threads") ? (int)km_param_int(p, "threads")
                   : km_threads_default();
    par->use_kernel = km_param_is_set(p, "kernel");
    static const char *const kernel_only[] = {"gamma", "degree", "coef0", "cache", "solver",
                                              "fp_step"};
    for (size_t q = 0; q < sizeof kernel_only / sizeof *kernel_only && !par->use_kernel; q++)
        if (km_param_is_set(p, kernel_only[q]))
            return km_error_set(err, KM_EUSAGE, "%s needs a kernel (-t); without -t the linear "
                                "solver runs", km_option_find(kernel_only[q])->flag);
    par->cache_bytes = (size_t)(km_param_number(p, "cache") * 1048576);
    par->fixedpoint = strcmp(km_param_text(p, "solver"), "fixedpoint") == 0;
    par->alpha_rule = strcmp(km_param_text(p, "fp_step"), "norm2") == 0 ? KM_ALPHA_NORM2
                      : KM_ALPHA_TRACE;
    if (par->use_kernel &&
        km_params_kernel(p, KM_KERNEL_LINEAR, n > 0 ? 1.0 / n : 1, n, &par->kernel, err))
        return err->code;
    if (par->use_kernel && par->bias >= 0 && isfinite(par->bias)) {
        par->kernel.offset = par->bias * par->bias;   /* K + b^2: a regularized offset */
        par->bias = -1;
    }
    int nw = 0;
    while (km_param_value_at(p, "weight", nw))
        nw++;
    *weights = malloc((size_t)(nw + 1) * sizeof **weights);
    if (!*weights)
        return km_error_nomem(err, "class weights");
    for (int q = 0; q < nw; q++) {
        const char *v = km_param_value_at(p, "weight", q), *colon = strrchr(v, ':');
        (*weights)[q].label = strtod(v, NULL);
        (*weights)[q].weight = strtod(colon + 1, NULL);
    }
    par->weights = *weights;
    par->nr_weight = nw;
    return km_train_check(par, err);
}

/* 1 when option name is set to value (or its default is value). */
static int km_method_option_is(const km_params *p, const char *name, const char *value)
{
    const char *v = km_param_text(p, name);
    return v && strcmp(v, value) == 0;
}

/* Why a problem that stopped at the cap did not stop earlier (into buf). */
static const char *stop_reason(const km_train_param *par, double gap, double max_h,
                               double delta, char *buf, size_t size)
{
    if (par->cd.stop == KM_STOP_STEP)
        snprintf(buf, size, "max|h| %.2g >= %.2g, gap %.2g", max_h, delta, gap);
    else
        snprintf(buf, size, "gap %.2g > %.2g", gap, delta);
    return buf;
}

/* Platt scaling as LIBSVM's -b 1 (svm_binary_svc_probability): decision values of every
 * training row from the model of the other folds (PLATT_FOLDS, stratified by class, drawn
 * with the seed), then each decision function's sigmoid fitted to them (km_platt_fit;
 * one-versus-all: class k against the rest). A class missing from a fold's training rows
 * gets the decision value -1 there (LIBSVM's convention for a one-class fold). */
#define PLATT_FOLDS 5
static int fit_platt(const km_problem *P, const int64_t *rows, int64_t count,
                     const km_train_param *par, km_model *model, km_report *rep, km_error *err)
{
    int64_t m = rows ? count : P->l;
    int nw = model->nr_w, nc = model->nr_class;
    int64_t *order = malloc((size_t)m * sizeof *order), *sub = malloc((size_t)m * sizeof *sub);
    int *fold = malloc((size_t)m * sizeof *fold), *cls = malloc((size_t)m * sizeof *cls);
    double *f = malloc((size_t)m * (size_t)nw * sizeof *f), *fk = malloc((size_t)m * sizeof *fk);
    double *yk = malloc((size_t)m * sizeof *yk), *A = malloc((size_t)nw * sizeof *A);
    double *B = malloc((size_t)nw * sizeof *B), *dec = malloc((size_t)nw * sizeof *dec);
    char *present = malloc((size_t)nc);   /* the classes of a fold's training rows */
    km_class_weight *wq = malloc((size_t)(par->nr_weight + 1) * sizeof *wq);
    int rc = order && sub && fold && cls && f && fk && yk && A && B && dec && present && wq
             ? KM_OK : km_error_nomem(err, "probability estimates");
    km_train_param fp = *par;
    fp.cd.progress = NULL;   /* the folds' sweeps are not the model's */
    for (int64_t i = 0; rc == KM_OK && i < m; i++) {
        double y = P->y[rows ? rows[i] : i];
        int k = 0;
        while (k < nc && model->labels[k] != y)
            k++;
        cls[i] = k;
        order[i] = i;
    }
    if (rc == KM_OK) {   /* stratified: each class's shuffled rows dealt round-robin */
        km_rng rng;
        km_rng_seed(&rng, par->cd.seed ^ 0x9e3779b97f4a7c15u);
        km_rng_shuffle(&rng, order, m);
        int64_t next = 0;
        for (int k = 0; k < nc; k++)
            for (int64_t t = 0; t < m; t++)
                if (cls[order[t]] == k)
                    fold[order[t]] = (int)(next++ % PLATT_FOLDS);
    }
    for (int q = 0; q < PLATT_FOLDS && rc == KM_OK; q++) {
        int64_t ns = 0;
        for (int64_t i = 0; i < m; i++)
            if (fold[i] != q)
                sub[ns++] = rows ? rows[i] : i;
        int first = -1, two = 0;   /* the fold's training rows: two classes or more? */
        memset(present, 0, (size_t)nc);
        for (int64_t i = 0; i < m; i++)
            if (fold[i] != q) {
                two |= first >= 0 && cls[i] != first;
                first = first < 0 ? cls[i] : first;
                present[cls[i]] = 1;
            }
        fp.nr_weight = 0;   /* -w of the classes the fold has (km_train refuses others) */
        fp.weights = wq;
        for (int t = 0; t < par->nr_weight; t++)
            for (int k = 0; k < nc; k++)
                if (present[k] && model->labels[k] == par->weights[t].label)
                    wq[fp.nr_weight++] = par->weights[t];
        km_model *fm = NULL;
        if (two && (rc = km_train(P, sub, ns, &fp, &fm, NULL, err)))
            break;
        for (int64_t i = 0; i < m; i++) {
            if (fold[i] != q)
                continue;
            double *fi = f + i * nw;
            if (!fm) {   /* one class only: +1 for it, -1 for the others */
                for (int k = 0; k < nw; k++)
                    fi[k] = (nw == 1 ? first == 1 : first == k) ? 1 : -1;
                continue;
            }
            int64_t r = rows ? rows[i] : i;
            if ((rc = km_model_decision_rows(fm, P, &r, 1, dec, 1, err)))
                break;
            for (int k = 0; k < nw; k++) {   /* the fold model's value for class k */
                double lab = model->labels[nw == 1 ? 1 : k];
                int kk = 0;
                while (kk < fm->nr_class && fm->labels[kk] != lab)
                    kk++;
                if (kk == fm->nr_class)
                    fi[k] = -1;
                else if (fm->nr_w == 1)
                    fi[k] = kk == 1 ? dec[0] : -dec[0];
                else
                    fi[k] = dec[kk];
            }
        }
        km_model_free(fm);
    }
    for (int k = 0; k < nw && rc == KM_OK; k++) {
        int pos = nw == 1 ? 1 : k;
        for (int64_t i = 0; i < m; i++) {
            fk[i] = f[i * nw + k];
            yk[i] = cls[i] == pos ? 1 : -1;
        }
        if (km_platt_fit(fk, yk, m, &A[k], &B[k]) < 0)
            km_report_warn(rep, "probability estimates: the line search of Platt's fit "
                           "failed for class %g (its last A, B are kept)", model->labels[pos]);
    }
    if (rc == KM_OK && (rc = km_model_set_platt(model, A, B, err)) == KM_OK)
        km_report_say(rep, "probability: Platt's sigmoid on %d-fold cross-validated decision "
                      "values (probA %g, probB %g%s)\n", PLATT_FOLDS, A[0], B[0],
                      nw > 1 ? " for the first class" : "");
    free(order);
    free(sub);
    free(fold);
    free(cls);
    free(f);
    free(fk);
    free(yk);
    free(A);
    free(B);
    free(dec);
    free(present);
    free(wq);
    return rc;
}

/* The instance weights of p (--weights FILE, or km_params_set_weights) for the rows of P:
 * par->row_weight (NULL: none; *owned: read from the file); the rows of weight 0 leave
 * *rows[0..*count) (*kept: the rows that stay). */
static int instance_weights(const km_problem *P, const int64_t **rows, int64_t *count,
                            const km_params *p, km_train_param *par, double **owned,
                            int64_t **kept, km_error *err)
{
    int64_t nw;
    const double *w = km_params_weights(p, &nw);
    const char *file = km_param_text(p, "weights");
    if (w && file)
        return km_error_set(err, KM_EUSAGE, "instance weights given twice (--weights %s and "
                            "km_params_set_weights)", file);
    if (file) {
        int rc = km_weights_read(file, P->l, owned, err);
        if (rc)
            return rc;
        w = *owned;
    } else if (w && nw != P->l) {
        return km_error_set(err, KM_EUSAGE, "%lld instance weights for %lld rows", (long long)nw,
                            (long long)P->l);
    }
    if (!w)
        return KM_OK;
    int64_t m = *rows ? *count : P->l, t = 0;
    if (!(*kept = malloc(((size_t)m + 1) * sizeof **kept)))
        return km_error_nomem(err, "weights");
    for (int64_t a = 0; a < m; a++) {   /* C_i = 0 forces c_i = 0: the row drops out */
        int64_t r = *rows ? (*rows)[a] : a;
        if (w[r] > 0)
            (*kept)[t++] = r;
    }
    *rows = *kept;
    *count = t;
    par->row_weight = w;
    return KM_OK;
}

static int cmp_label(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The classes of rows[0..m) (all rows when rows is NULL), ascending, into *labels. */
static int row_labels(const km_problem *P, const int64_t *rows, int64_t m, double **labels,
                      int *nc, km_error *err)
{
    double *v = malloc(((size_t)m + 1) * sizeof *v);
    if (!v)
        return km_error_nomem(err, "labels");
    for (int64_t a = 0; a < m; a++)
        v[a] = P->y[rows ? rows[a] : a];
    qsort(v, (size_t)m, sizeof *v, cmp_label);
    int64_t k = 0;
    for (int64_t a = 0; a < m; a++)
        if (k == 0 || v[a] != v[k - 1])
            v[k++] = v[a];
    *labels = v;
    *nc = k > INT32_MAX ? INT32_MAX : (int)k;
    return KM_OK;
}

/* Row r of P equals row s of S (indices and values). */
static int same_row(const km_problem *P, int64_t r, const km_problem *S, int64_t s)
{
    if (P->id && S->id)   /* -t precomputed: support vectors are serial numbers */
        return P->id[r] == S->id[s];
    int64_t a = P->row_ptr[r], na = P->row_ptr[r + 1] - a, b = S->row_ptr[s];
    if (S->row_ptr[s + 1] - b != na)
        return 0;
    return memcmp(P->index + a, S->index + b, (size_t)na * sizeof *P->index) == 0 &&
           memcmp(P->value + a, S->value + b, (size_t)na * sizeof *P->value) == 0;
}

/* One-versus-one (--multiclass ovo, nc >= 3 classes): the binary kernel problem of every
 * pair of classes a < b on their rows (each class its C, as LIBSVM), the coefficients
 * gathered over the union of their support vectors. */
static int train_ovo(const km_problem *P, const int64_t *rows, int64_t count,
                     const km_train_param *par, const double *labels, int nc, km_model **out,
                     km_report *rep, km_error *err)
{
    int64_t m = rows ? count : P->l;
    int np = nc * (nc - 1) / 2;
    double *coef = calloc((size_t)m * (size_t)np + 1, sizeof *coef), F = 0, gap = 0;
    int64_t *sub = malloc(((size_t)m + 1) * sizeof *sub), *pos = malloc(((size_t)m + 1) *
                                                                          sizeof *pos);
    int64_t iters = 0, nsv = 0, nnz = 0;
    int rc = coef && sub && pos ? KM_OK : km_error_nomem(err, "one-versus-one");
    for (int i = 0, p = 0; i < nc && rc == KM_OK; i++)
        for (int j = i + 1; j < nc && rc == KM_OK; j++, p++) {
            int64_t t = 0;
            for (int64_t a = 0; a < m; a++) {
                int64_t r = rows ? rows[a] : a;
                if (P->y[r] == labels[i] || P->y[r] == labels[j]) {
                    sub[t] = r;
                    pos[t++] = a;
                }
            }
            km_model *bm = NULL;
            km_train_info info = {0};
            km_train_param pp = *par;   /* the class weights of the pair's two classes */
            km_class_weight w2[2];
            pp.weights = w2;
            pp.nr_weight = 0;
            for (int q = 0; q < par->nr_weight; q++)
                if (par->weights[q].label == labels[i] || par->weights[q].label == labels[j])
                    w2[pp.nr_weight < 2 ? pp.nr_weight++ : 1] = par->weights[q];
            if ((rc = km_train(P, sub, t, &pp, &bm, &info, err)))
                break;
            const km_expansion *e = km_model_expansion(bm);
            int64_t s = 0;   /* the SVs are the rows with c != 0, in order */
            for (int64_t q = 0; q < t && s < e->sv->l; q++)
                if (same_row(P, sub[q], e->sv, s))
                    coef[pos[q] * np + p] = e->sv_coef[s++];
            if (s != e->sv->l)
                rc = km_error_set(err, KM_EINTERNAL, "one-versus-one: support vectors out of "
                                  "order");
            F += info.objective[0];
            gap = info.gap[0] > gap ? info.gap[0] : gap;
            iters = info.iter[0] > iters ? info.iter[0] : iters;
            nnz += info.nnz_c[0];
            rep->converged &= info.converged[0];
            if (!info.converged[0])
                km_report_warn(rep, "classes %g and %g stopped at the cap of %lld "
                               "macro-iterations (gap %.2g); raise --max-iter or -e",
                               labels[i], labels[j], (long long)par->cd.max_iter, info.gap[0]);
            km_report_say(rep, "classes %g, %g: macro-iterations = %lld, objective = %.17g, "
                          "gap = %.3g, nonzero coefficients = %lld\n", labels[i], labels[j],
                          (long long)info.iter[0], info.objective[0], info.gap[0],
                          (long long)info.nnz_c[0]);
            km_train_info_free(&info);
            km_model_free(bm);
        }
    km_problem *S = NULL;
    double *sc = NULL;
    for (int64_t a = 0; a < m && rc == KM_OK; a++) {
        int keep = 0;
        for (int p = 0; p < np; p++)
            keep |= coef[a * np + p] != 0;
        if (keep)
            pos[nsv++] = a;   /* pos is free now: the rows of the support vectors */
    }
    int64_t nz = 0;
    for (int64_t s = 0; s < nsv && rc == KM_OK; s++) {
        int64_t r = rows ? rows[pos[s]] : pos[s];
        nz += P->row_ptr[r + 1] - P->row_ptr[r];
    }
    if (rc == KM_OK &&
        (!(S = calloc(1, sizeof *S)) || !(sc = malloc(((size_t)nsv * (size_t)np + 1) *
                                                       sizeof *sc)) ||
         !(S->row_ptr = calloc((size_t)nsv + 1, sizeof *S->row_ptr)) ||
         !(S->index = malloc(((size_t)nz + 1) * sizeof *S->index)) ||
         !(S->value = malloc(((size_t)nz + 1) * sizeof *S->value)) ||
         !(S->y = calloc((size_t)nsv + 1, sizeof *S->y)) ||
         (P->id && !(S->id = malloc(((size_t)nsv + 1) * sizeof *S->id)))))
        rc = km_error_nomem(err, "one-versus-one");
    if (rc == KM_OK) {
        S->l = nsv;
        S->n = P->n;
        int64_t t = 0;
        for (int64_t s = 0; s < nsv; s++) {
            int64_t a = pos[s], r = rows ? rows[a] : a;
            for (int64_t q = P->row_ptr[r]; q < P->row_ptr[r + 1]; q++, t++) {
                S->index[t] = P->index[q];
                S->value[t] = P->value[q];
            }
            S->row_ptr[s + 1] = t;
            if (S->id)   /* -t precomputed: the serial numbers */
                S->id[s] = P->id[r];
            memcpy(sc + s * np, coef + a * np, (size_t)np * sizeof *sc);
        }
        S->nnz = t;
    }
    km_model *model = NULL;
    if (rc == KM_OK && !(model = km_model_alloc(&km_kind_kernel_ovo, par->cd.loss, P->n, nc, nc,
                                                err)))
        rc = KM_EINTERNAL;
    if (rc == KM_OK) {
        model->C = par->C;
        model->eps = par->cd.eps;
        for (int k = 0; k < nc; k++) {
            model->labels[k] = labels[k];
            for (int q = 0; q < par->nr_weight; q++)
                if (par->weights[q].label == labels[k])
                    model->label_weight[k] = par->weights[q].weight;
        }
        rc = km_model_set_ovo(model, &par->kernel, S, sc, err);
        S = NULL;
        sc = NULL;
    }
    km_problem_free(S);
    free(sc);
    free(coef);
    free(sub);
    free(pos);
    if (rc) {
        km_model_free(model);
        return rc;
    }
    rep->objective = F;
    rep->gap = gap;
    km_report_say(rep, "macro-iterations = %lld (the largest of %d pairs)\n", (long long)iters,
                  np);
    km_report_say(rep, "objective = %.17g (the sum of the pairs')\n", F);
    km_report_say(rep, "gap = %.3g (relative duality gap, the largest of all pairs)\n", gap);
    km_report_say(rep, "nonzero coefficients = %lld (over %lld support vectors, all pairs)\n",
                  (long long)nnz, (long long)nsv);
    *out = model;
    return KM_OK;
}

static int train(km_loss loss, const km_problem *P, const int64_t *rows, int64_t count,
                 const km_params *p, km_model **out, km_report *rep, km_error *err)
{
    km_train_param par;
    km_class_weight *weights = NULL;
    km_train_info info = {0};
    double *row_w = NULL;
    int64_t *kept = NULL;
    int rc = km_problem_single(P, "the data", err);
    if (rc == KM_OK)
        rc = make_param(loss, p, &par, &weights, P->n, err);
    if (rc == KM_OK)
        rc = instance_weights(P, &rows, &count, p, &par, &row_w, &kept, err);
    km_model *init_read = NULL;   /* --init FILE */
    par.init = km_params_init(p);
    if (rc == KM_OK && km_param_is_set(p, "init")) {
        if (par.init)
            rc = km_error_set(err, KM_EUSAGE, "a warm start given twice (--init and "
                              "km_params_set_init)");
        else if ((rc = km_model_read(km_param_text(p, "init"), &init_read, err)) == KM_OK)
            par.init = init_read;
    }
    double *labels = NULL;
    int nc = 0, ovo = rc == KM_OK && km_method_option_is(p, "multiclass", "ovo");
    if (ovo && !par.use_kernel)
        rc = km_error_set(err, KM_EUSAGE, "--multiclass ovo: kernels only (-t)");
    else if (ovo && par.init)
        rc = km_error_set(err, KM_EUSAGE, "--multiclass ovo does not take --init");
    else if (ovo && km_method_option_is(p, "probability", "1"))
        rc = km_error_set(err, KM_EUSAGE, "--multiclass ovo does not take -b 1 (Platt's "
                          "sigmoid is fitted per one-versus-all class)");
    if (ovo && rc == KM_OK && (rc = row_labels(P, rows, rows ? count : P->l, &labels, &nc,
                                               err)) == KM_OK && nc > 2) {
        rc = train_ovo(P, rows, count, &par, labels, nc, out, rep, err);
        free(labels);
        free(weights);
        free(row_w);
        km_model_free(init_read);
        free(kept);
        return rc;
    }
    free(labels);
    if (rc == KM_OK)
        rc = km_train(P, rows, count, &par, out, &info, err);
    /* -b 1: Platt's sigmoid for the SVMs (logreg's decision values are log-odds already) */
    const char *pb = km_param_text(p, "probability");   /* NULL: not a classifier's option */
    if (rc == KM_OK && loss != KM_LOSS_LOGISTIC && pb && strcmp(pb, "1") == 0 &&
        (rc = fit_platt(P, rows, count, &par, *out, rep, err))) {
        km_model_free(*out);
        *out = NULL;
        km_train_info_free(&info);
    }
    free(weights);
    free(row_w);
    km_model_free(init_read);
    int64_t trained = rows ? count : P->l;
    free(kept);
    if (rc)
        return rc;
    const km_model *model = *out;
    double F = 0, gap = 0;
    int64_t iters = 0, nnz = 0;
    for (int k = 0; k < info.nr_w; k++) {
        F += info.objective[k];
        gap = info.gap[k] > gap ? info.gap[k] : gap;
        iters = info.iter[k] > iters ? info.iter[k] : iters;
        nnz += info.nnz_c[k];
        rep->converged &= info.converged[k];
        if (info.nr_w > 1)
            km_report_say(rep, "class %g: macro-iterations = %lld, objective = %.17g, gap = "
                          "%.3g, nonzero coefficients = %lld\n", model->labels[k],
                          (long long)info.iter[k], info.objective[k], info.gap[k],
                          (long long)info.nnz_c[k]);
    }
    for (int k = 0; k < info.nr_w; k++) {
        if (info.converged[k])
            continue;
        char cls[64] = "", why[96];
        if (info.nr_w > 1)
            snprintf(cls, sizeof cls, "class %g ", model->labels[k]);
        /* a gap still above 10% after the cap: badly conditioned data (unscaled features),
         * which more sweeps will not fix */
        km_report_warn(rep, "%sstopped at the cap of %lld macro-iterations (%s); raise "
                       "--max-iter or -e%s", cls, (long long)par.cd.max_iter,
                       stop_reason(&par, info.gap[k], info.max_h[k], info.delta, why,
                                   sizeof why),
                       info.gap[k] > 0.1 ? ", or scale the features (kmtk-scale): coordinate "
                                           "descent crawls on badly conditioned data" : "");
    }
    rep->objective = F;
    rep->gap = gap;
    km_report_say(rep, "macro-iterations = %lld (%s %.3g)\n", (long long)iters,
                  par.cd.stop == KM_STOP_STEP ? "stop: max|h| <" : "stop: gap <=", info.delta);
    km_report_say(rep, "objective = %.17g\n", F);
    km_report_say(rep, "gap = %.3g (relative duality gap (primal - dual) / primal%s)\n", gap,
                  info.nr_w > 1 ? ", the largest of all classes" : "");
    km_report_say(rep, "nonzero coefficients = %lld (of %lld%s)\n", (long long)nnz,
                  (long long)(trained * info.nr_w),
                  info.nr_w > 1 ? ", all classes" : "");
    km_train_info_free(&info);
    return KM_OK;
}

#define LOSS_TRAIN(name, LOSS)                                                                 \
    static int train_##name(const km_problem *P, const int64_t *rows, int64_t count,          \
                            const km_params *p, km_model **out, km_report *rep,               \
                            km_error *err)                                                    \
    {                                                                                         \
        return train(LOSS, P, rows, count, p, out, rep, err);                                 \
    }
LOSS_TRAIN(l1svm, KM_LOSS_L1SVM)
LOSS_TRAIN(l2svm, KM_LOSS_L2SVM)
LOSS_TRAIN(rls, KM_LOSS_RLS)
LOSS_TRAIN(rla, KM_LOSS_RLA)
LOSS_TRAIN(svr, KM_LOSS_SVR)
LOSS_TRAIN(logreg, KM_LOSS_LOGISTIC)

const km_method km_method_l1svm = {"l1svm", "hinge loss, L1-SVM (= liblinear -s 3)",
                                   classification_opts, kinds, 1, NULL, train_l1svm};
const km_method km_method_l2svm = {"l2svm", "squared hinge, L2-SVM (= liblinear -s 1)",
                                   classification_opts, kinds, 1, NULL, train_l2svm};
const km_method km_method_rls = {"rls", "square loss (y-z)^2/2, regularized least squares",
                                 regression_opts, kinds, 0, NULL, train_rls};
const km_method km_method_rla = {"rla", "absolute loss |y-z|, least absolute deviations",
                                 regression_opts, kinds, 0, NULL, train_rla};
const km_method km_method_svr = {"svr", "eps-insensitive loss, support vector regression (= "
                                 "liblinear -s 13)", svr_opts, kinds, 0, NULL, train_svr};
const km_method km_method_logreg = {"logreg", "logistic loss log(1 + exp(-y z)), logistic "
                                    "regression (= liblinear -s 0 and -s 7)",
                                    classification_opts, kinds, 1, NULL, train_logreg};
