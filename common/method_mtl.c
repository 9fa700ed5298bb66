/* method_mtl.c - multi-task learning with a mixed-effect kernel (thesis ch. 5, Algorithm
 * 4) as a method: the tasks are the rows' qid:. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "model.h"
#include "mtl.h"

#define KERNELS "linear|poly|rbf|sigmoid|laplacian|expdot|spline|0|1|2|3"

static const km_option opt_kernel = {"kernel", "-t", "kernel", KM_OPT_CHOICE, 0, 0, 0, KERNELS,
                                     "linear", "the common kernel K"};
static const km_option opt_alpha = {"alpha", "--alpha", "A", KM_OPT_NUMBER, 0, 1, 0, NULL, "0.5",
                                    "weight of K in alpha K + (1 - alpha) [t1 = t2] K~"};
static const km_option opt_lambda = {"lambda", "--lambda", "L", KM_OPT_NUMBER, 0, INFINITY, 1,
                                     NULL, "1", "regularization parameter"};
static const km_option opt_tkernel = {"task_kernel", "--task-kernel", "K", KM_OPT_CHOICE, 0, 0,
                                      0, KERNELS, "linear", "the individual kernel K~"};
static const km_option opt_tgamma = {"task_gamma", "--task-gamma", "G", KM_OPT_NUMBER, 0,
                                     INFINITY, 1, NULL, NULL, "gamma of K~ (default "
                                     "1/features)"};
static const km_option opt_tcoef0 = {"task_coef0", "--task-coef0", "C", KM_OPT_NUMBER,
                                     -INFINITY, INFINITY, 0, NULL, "0", "coef0 of K~"};
static const km_option opt_tdegree = {"task_degree", "--task-degree", "D", KM_OPT_INT, 1, 1000,
                                      0, NULL, "3", "degree of K~"};
static const km_option opt_tkernels = {"task_kernels", "--task-kernels", "FILE", KM_OPT_TEXT, 0,
                                       0, 0, NULL, NULL, "tasks with their own K~_j: lines "
                                       "'TASK KERNEL' (doc/kernel-list.md), e.g. '7 rbf "
                                       "gamma=0.5'"};
static const km_option opt_threads = {"threads", "-n", "threads", KM_OPT_INT, 1, 1024, 0, NULL,
                                      NULL, "threads: -v folds in parallel (default: the "
                                      "online cores)"};

static const km_option *const options[] = {&opt_kernel, &km_opt_gamma, &km_opt_degree,
                                           &km_opt_coef0, &opt_alpha, &opt_lambda, &opt_tkernel,
                                           &opt_tgamma, &opt_tcoef0, &opt_tdegree,
                                           &opt_tkernels, &km_opt_seed, &opt_threads, NULL};
static const km_model_kind *const kinds[] = {&km_kind_mtl, NULL};

static int train(const km_problem *P0, const int64_t *rows, int64_t count, const km_params *p,
                 km_model **out, km_report *rep, km_error *err)
{
    km_problem *sub = rows ? km_problem_subset(P0, rows, count, err) : NULL;
    const km_problem *P = rows ? sub : P0;
    if (!P)
        return err->code;
    km_mtl_param mp = km_mtl_param_default();   /* the defaults of mtl-server too */
    if (km_param_is_set(p, "alpha"))
        mp.alpha = km_param_number(p, "alpha");
    if (km_param_is_set(p, "lambda"))
        mp.lambda = km_param_number(p, "lambda");
    double g = P->n > 0 ? 1.0 / P->n : 1;
    km_mtl_tkernel *tk = NULL;
    const char *tkfile = km_param_text(p, "task_kernels");
    km_mtl *s = NULL;
    int rc = km_problem_single(P, "the data", err);
    if (rc == KM_OK && !P->qid)
        rc = km_error_set(err, KM_EINPUT, "-s mtl needs task ids (qid:) on the rows");
    if (rc == KM_OK)
        rc = km_params_kernel(p, (int)mp.K.type, g, P->n, &mp.K, err);
    if (rc == KM_OK) {
        if (km_param_is_set(p, "task_kernel"))
            mp.Kt.type = (km_kernel_type)km_kernel_from_name(km_param_text(p, "task_kernel"));
        mp.Kt.gamma = km_param_is_set(p, "task_gamma") ? km_param_number(p, "task_gamma") : g;
        mp.Kt.coef0 = km_param_number(p, "task_coef0");
        mp.Kt.degree = (int)km_param_int(p, "task_degree");
    }
    if (rc == KM_OK && tkfile)
        rc = km_mtl_read_task_kernels(tkfile, &tk, &mp.ntk, err);
    mp.tk = tk;
    if (rc == KM_OK)
        rc = km_mtl_param_check(&mp, P->n, err);
    if (rc == KM_OK)
        rc = km_mtl_offline(&mp, P, NULL, &s, err);
    if (rc == KM_OK)
        rc = km_mtl_model(s, NULL, 0, P->n, out, err);
    if (rc == KM_OK) {
        km_mtl_body *b = km_model_mtl(*out);
        km_report_say(rep, "mtl: %lld examples, %lld tasks, %lld unique inputs; alpha %g, "
                      "lambda %g\n", (long long)P->l, (long long)b->nr_task,
                      (long long)km_mtl_n(s), mp.alpha, mp.lambda);
    }
    km_mtl_free(s);
    free(tk);
    km_problem_free(sub);
    return rc;
}

const km_method km_method_mtl = {"mtl", "multi-task learning with a mixed-effect kernel "
                                 "(thesis ch. 5; task = qid:)", options, kinds, 0, NULL, train};
