/* method_mtmkl.c - multi-task multiple kernel learning (seed 004) as a method: the task
 * kernels from a groups file, a similarity file or the defaults, Algorithm E.1 (mtmkl.c),
 * the model kind of model_mtmkl.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "model.h"
#include "mtmkl.h"

static const km_option opt_C = {"C", "-c", "C", KM_OPT_NUMBER, 0, INFINITY, 1, NULL, "1",
                                "cost of the hinge loss"};
static const km_option opt_norm = {"mkl_norm", "--mkl-norm", "P", KM_OPT_NUMBER, 1, INFINITY, 0,
                                   NULL, "2", "theta in the l_P ball, P >= 1 (P = 1 converges "
                                   "slowly: multiplicative updates)"};
static const km_option opt_groups = {"task_groups", "--task-groups", "FILE", KM_OPT_TEXT, 0, 0, 0,
                                     NULL, NULL, "one task kernel 1_S 1_S' per line: the task "
                                     "ids of group S (ranges A-B allowed); default: all tasks "
                                     "together, then each task alone"};
static const km_option opt_sim = {"task_sim", "--task-sim", "FILE", KM_OPT_TEXT, 0, 0, 0, NULL,
                                  NULL, "general PSD task kernels: lines 'KERNEL TASK TASK "
                                  "VALUE' (KERNEL from 1; symmetric)"};
static const km_option opt_baseline = {"baseline", "--baseline", "B", KM_OPT_CHOICE, 0, 0, 0,
                                       "individual|union", NULL, "one task kernel: individual "
                                       "(G = I, a model per task) or union (G = 11', one model)"};
static const km_option opt_fixed = {"fixed_weights", "--fixed-weights", NULL, KM_OPT_SWITCH, 0,
                                    0, 0, NULL, NULL, "theta = M^(-1/P) fixed, no theta step "
                                    "(the paper's Vanilla)"};
static const km_option opt_tol = {"tolerance", "-e", "delta", KM_OPT_NUMBER, 0, INFINITY, 1,
                                  NULL, "1e-5", "stop when the relative duality gap of Problem "
                                  "3 is <= delta"};
static const km_option opt_max_iter = {"max_iter", "--max-iter", "N", KM_OPT_INT, 1, 9.2e18, 0,
                                       NULL, "10000", "cap on passes"};
static const km_option opt_threads = {"threads", "-n", "threads", KM_OPT_INT, 1, 1024, 0, NULL,
                                      NULL, "threads: -v folds in parallel (default: the online "
                                      "cores)"};

static const km_option opt_kernel = {"kernel", "-t", "kernel", KM_OPT_CHOICE, 0, 0, 0,
                                     "linear|poly|rbf|sigmoid|laplacian|expdot|spline|0|1|2|3",
                                     NULL, "the kernel on the inputs: the kernel mode, a "
                                     "vector K(q_k o c) per factor from the rows of K (default: "
                                     "none, the linear mode on w)"};
static const km_option opt_cache = {"cache", "-m", "MB", KM_OPT_NUMBER, 1, 1e9, 0, NULL, "200",
                                    "kernel row cache in MB"};

static const km_option *const options[] = {&opt_C, &opt_norm, &opt_groups, &opt_sim,
                                           &opt_baseline, &opt_fixed, &opt_kernel,
                                           &km_opt_gamma, &km_opt_degree, &km_opt_coef0,
                                           &opt_cache, &opt_tol, &opt_max_iter, &km_opt_seed,
                                           &opt_threads, NULL};
static const km_model_kind *const kinds[] = {&km_kind_mtmkl, NULL};

static void on_progress(void *user, int64_t pass, double primal, double gap)
{
    km_param_progress(user, "  pass %lld: primal %.8g, gap %.3g", (long long)pass, primal, gap);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The task kernels the parameters ask for, over the tasks of P and of the files. */
static int make_kernels(const km_problem *P, const km_params *p, km_mtmkl_tasks *k,
                        km_error *err)
{
    const char *groups = km_param_text(p, "task_groups"), *sim = km_param_text(p, "task_sim");
    const char *base = km_param_text(p, "baseline");
    if (!!groups + !!sim + !!base > 1)
        return km_error_set(err, KM_EUSAGE, "--task-groups, --task-sim and --baseline exclude "
                            "each other");
    int64_t *ids = NULL, *ptr = NULL, nl = 0, nids = 0;
    double *trip = NULL;
    int64_t ntrip = 0;
    int M = 0, rc = KM_OK;
    if (groups && (rc = km_mtmkl_read_groups(groups, &ids, &ptr, &nl, err)))
        return rc;
    if (sim && (rc = km_mtmkl_read_sim(sim, &trip, &ntrip, &M, err)))
        return rc;
    if (groups)
        nids = ptr[nl];
    if (sim) {   /* the ids of the similarity file, as a list for the task set */
        if (!(ids = malloc((size_t)(2 * ntrip) * sizeof *ids)))
            rc = km_error_nomem(err, "task kernels");
        for (int64_t a = 0; rc == KM_OK && a < ntrip; a++) {
            ids[nids++] = (int64_t)trip[4 * a + 1];
            ids[nids++] = (int64_t)trip[4 * a + 2];
        }
    }
    if (rc == KM_OK)
        rc = km_mtmkl_tasks_init(k, P, ids, nids, err);
    char name[64];
    if (rc == KM_OK && groups) {
        for (int64_t g = 0; g < nl && rc == KM_OK; g++) {
            snprintf(name, sizeof name, "group%lld", (long long)g + 1);
            rc = km_mtmkl_add_group(k, ids + ptr[g], ptr[g + 1] - ptr[g], name, err);
        }
    } else if (rc == KM_OK && sim) {
        int32_t T = k->T;
        double *G = malloc((size_t)T * (size_t)T * sizeof *G);
        if (!G)
            rc = km_error_nomem(err, "task kernels");
        for (int m = 0; m < M && rc == KM_OK; m++) {
            memset(G, 0, (size_t)T * (size_t)T * sizeof *G);
            for (int64_t a = 0; a < ntrip; a++)
                if ((int)trip[4 * a] == m) {
                    int32_t s = km_mtmkl_task(k, (int64_t)trip[4 * a + 1]);
                    int32_t t = km_mtmkl_task(k, (int64_t)trip[4 * a + 2]);
                    G[(int64_t)s * T + t] = G[(int64_t)t * T + s] = trip[4 * a + 3];
                }
            snprintf(name, sizeof name, "kernel%d", m + 1);
            rc = km_mtmkl_add_matrix(k, G, name, err);
        }
        free(G);
    } else if (rc == KM_OK && base && strcmp(base, "individual") == 0) {
        rc = km_mtmkl_add_identity(k, "individual", err);
    } else if (rc == KM_OK) {   /* union, or the default: all tasks, then each task alone */
        rc = km_mtmkl_add_group(k, k->task_id, k->T, "all", err);
        for (int32_t t = 0; rc == KM_OK && !base && t < k->T; t++) {
            snprintf(name, sizeof name, "task%lld", (long long)k->task_id[t]);
            rc = km_mtmkl_add_group(k, &k->task_id[t], 1, name, err);
        }
    }
    free(ids);
    free(ptr);
    free(trip);
    return rc;
}

static int train(const km_problem *P0, const int64_t *rows, int64_t count, const km_params *p,
                 km_model **out, km_report *rep, km_error *err)
{
    km_problem *sub = rows ? km_problem_subset(P0, rows, count, err) : NULL;
    const km_problem *P = rows ? sub : P0;
    if (!P)
        return err->code;
    km_mtmkl_tasks k = {0};
    km_mtmkl_result r = {0};
    double *y = malloc((size_t)(P->l > 0 ? P->l : 1) * sizeof *y);
    double *lab = malloc((size_t)(P->l > 0 ? P->l : 1) * sizeof *lab);
    int rc = y && lab ? km_problem_single(P, "the data", err) : km_error_nomem(err, "labels");
    int64_t nc = 0;
    if (rc == KM_OK) {   /* two classes: the larger label is +1 (as l1svm) */
        memcpy(lab, P->y, (size_t)P->l * sizeof *lab);
        qsort(lab, (size_t)P->l, sizeof *lab, cmp_double);
        for (int64_t i = 0; i < P->l; i++)
            if (i == 0 || lab[i] != lab[nc - 1])
                lab[nc++] = lab[i];
        if (nc != 2)
            rc = km_error_set(err, KM_EINPUT, "-s mtmkl needs two classes (found %lld)",
                              (long long)nc);
        for (int64_t i = 0; rc == KM_OK && i < P->l; i++)
            y[i] = P->y[i] == lab[1] ? 1 : -1;
    }
    if (rc == KM_OK)
        rc = make_kernels(P, p, &k, err);
    km_mtmkl_param par = {km_param_number(p, "C"), km_param_number(p, "mkl_norm"),
                          km_param_number(p, "tolerance"), km_param_int(p, "max_iter"),
                          (uint64_t)km_param_int(p, "seed"), km_param_switch(p, "fixed_weights"),
                          on_progress, (void *)p, NULL,
                          (size_t)(km_param_number(p, "cache") * 1048576), 0, 0};
    km_kernel kern;
    int kmode = km_param_is_set(p, "kernel");
    static const char *const kernel_only[] = {"gamma", "degree", "coef0", "cache"};
    for (size_t q = 0; q < sizeof kernel_only / sizeof *kernel_only && !kmode && rc == KM_OK;
         q++)
        if (km_param_is_set(p, kernel_only[q]))
            rc = km_error_set(err, KM_EUSAGE, "%s needs a kernel (-t)",
                              km_option_find(kernel_only[q])->flag);
    if (rc == KM_OK && kmode &&
        !(rc = km_params_kernel(p, KM_KERNEL_LINEAR, P->n > 0 ? 1.0 / P->n : 1, P->n, &kern,
                                err)))
        par.kernel = &kern;
    if (rc == KM_OK)
        rc = km_mtmkl_train(P, y, &k, &par, &r, err);
    km_model *m = NULL;
    if (rc == KM_OK && !(m = km_model_alloc(&km_kind_linear, KM_LOSS_L1SVM, P->n, 2, 1, err)))
        rc = KM_EINTERNAL;
    if (rc == KM_OK) {
        m->C = par.C;
        m->labels[0] = lab[0];
        m->labels[1] = lab[1];
        rep->objective = r.primal;
        rep->gap = r.gap;
        rep->converged = r.converged;
        km_report_say(rep, "mtmkl: %lld rows, %d tasks, %d task kernels (%d factors), p = %g%s\n",
                      (long long)P->l, (int)k.T, k.M, (int)k.nf, par.p,
                      par.fixed ? ", theta fixed" : "");
        km_report_say(rep, "passes = %lld\nobjective = %.17g\ngap = %.3g (relative duality gap "
                      "of Problem 3)\n", (long long)r.passes, r.primal, r.gap);
        int shown = 0;
        km_report_say(rep, "theta:");
        for (int q = 0; q < k.M && shown < 8; q++, shown++)
            km_report_say(rep, " %s %.4g", k.name[q], r.theta[q]);
        km_report_say(rep, "%s\n", k.M > 8 ? " ..." : "");
        if (!r.converged)
            km_report_warn(rep, "stopped at the cap of %lld passes (gap %.2g > %.2g); raise "
                           "--max-iter or -e%s", (long long)par.max_iter, r.gap, par.eps,
                           par.p == 1 && kmode ? " (p = 1 with -t converges slowly)" : "");
        double *theta = r.theta, *g = r.g;
        r.theta = r.g = NULL;
        if (!kmode) {
            rc = km_model_set_mtmkl(m, &k, par.p, theta, g, err);
        } else {   /* the rows with c_j = y_j alpha_j != 0 */
            int64_t nsv = 0, *sv_rows = malloc((size_t)(P->l > 0 ? P->l : 1) * sizeof *sv_rows);
            double *c = malloc((size_t)(P->l > 0 ? P->l : 1) * sizeof *c);
            int32_t *st = malloc((size_t)(P->l > 0 ? P->l : 1) * sizeof *st);
            km_problem *sv = NULL;
            if (sv_rows && c && st) {
                for (int64_t i = 0; i < P->l; i++)
                    if (r.alpha[i] != 0) {
                        c[nsv] = y[i] * r.alpha[i];
                        st[nsv] = km_mtmkl_task(&k, P->qid[i]);
                        sv_rows[nsv++] = i;
                    }
                sv = km_problem_subset(P, sv_rows, nsv, err);
            }
            free(sv_rows);
            if (!sv) {
                free(c);
                free(st);
                free(theta);
                rc = km_error_nomem(err, "mtmkl model");
            } else {
                rc = km_model_set_mtmkl_kernel(m, &k, par.p, theta, &kern, sv, c, st, err);
            }
        }
    }
    if (rc == KM_OK)
        *out = m;
    else
        km_model_free(m);
    km_mtmkl_result_free(&r);
    km_mtmkl_tasks_free(&k);
    free(y);
    free(lab);
    km_problem_free(sub);
    return rc;
}

const km_method km_method_mtmkl = {"mtmkl", "multi-task multiple kernel learning (seed 004; "
                                   "task = qid:)", options, kinds, 1, NULL, train};
