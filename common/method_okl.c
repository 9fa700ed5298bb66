/* method_okl.c - low-rank output kernel learning (seed 001) as a method: a path of lambdas
 * on multi-output data, the model at the chosen lambda (oklpath.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "oklpath.h"
#include "model.h"
#include "svmlight.h"

static const km_option opt_kernel = {"kernel", "-t", "kernel", KM_OPT_CHOICE, 0, 0, 0,
                                     "linear|poly|rbf|sigmoid|laplacian|expdot|spline|0|1|2|3",
                                     "linear", "the input kernel K"};
static const km_option opt_rank = {"rank", "--rank", "p", KM_OPT_INT, 1, 2147483647, 0, NULL,
                                   NULL, "rank of the output kernel L = BB' (default and cap: "
                                   "min(examples, outputs))"};
static const km_option opt_lambdas = {"lambdas", "-L", "MIN:MAX:N", KM_OPT_RANGE, 0, 0, 0, NULL,
                                      NULL, "lambdas log-spaced in [MIN, MAX], large to small "
                                      "(default 25 in [1e-5 alpha, alpha], alpha = "
                                      "sqrt(||Y'KY||_2))"};
static const km_option opt_valid = {"valid", "--valid", "FILE", KM_OPT_TEXT, 0, 0, 0, NULL, NULL,
                                    "validation data: MSE per lambda; the model takes the best "
                                    "lambda (without it: the smallest)"};
static const km_option opt_csv = {"path_table", "-o", "FILE", KM_OPT_OUTPUT, 0, 0, 0, NULL, NULL,
                                  "the path table (CSV): lambda, objective, rank, iterations, "
                                  "seconds, train_mse, valid_mse, chosen"};
static const km_option opt_identity = {"identity", "--identity", NULL, KM_OPT_SWITCH, 0, 0, 0,
                                       NULL, NULL, "the baseline L = I (independent RLS per "
                                       "output) instead of learning L"};
static const km_option opt_plain = {"plain", "--plain", NULL, KM_OPT_SWITCH, 0, 0, 0, NULL,
                                    NULL, "Algorithm 1 as printed: no Anderson acceleration, "
                                    "no saddle escape"};
static const km_option opt_tol = {"tolerance", "-e", "delta", KM_OPT_NUMBER, 0, INFINITY, 1,
                                  NULL, "1e-6", "stop when ||B - B_prev||_F < delta "
                                  "sqrt(alpha)"};
static const km_option opt_max_iter = {"max_iter", "--max-iter", "N", KM_OPT_INT, 1, 9.2e18, 0,
                                       NULL, "10000", "cap on iterations per lambda"};
static const km_option opt_threads = {"threads", "-n", "threads", KM_OPT_INT, 1, 1024, 0, NULL,
                                      "1", "threads for the kernel matrices"};

static const km_option *const options[] = {&opt_kernel, &km_opt_gamma, &km_opt_degree,
                                           &km_opt_coef0, &opt_rank, &opt_lambdas, &opt_valid,
                                           &opt_csv, &opt_identity, &opt_plain, &opt_tol,
                                           &opt_max_iter, &opt_threads, NULL};
static const km_model_kind *const kinds[] = {&km_kind_okl, NULL};

/* A line per lambda at most once a second goes to the parameters' progress callback. */
static void okl_progress(void *ctx, int t, int nl, const km_okl_info *row, double seconds)
{
    (void)seconds;
    km_param_progress(ctx, "  lambda %d/%d = %.4g: %lld iterations, rank %d", t + 1, nl,
                      row->lambda, (long long)row->iter, row->rank);
}


static int train(const km_problem *P0, const int64_t *rows, int64_t count, const km_params *p,
                 km_model **out, km_report *rep, km_error *err)
{
    km_okl_setup S = {0};
    S.par = km_okl_param_default();
    S.par.p = km_param_is_set(p, "rank") ? (int)km_param_int(p, "rank") : 0;
    S.par.delta = km_param_number(p, "tolerance");
    S.par.max_iter = km_param_int(p, "max_iter");
    S.par.identity = km_param_switch(p, "identity");
    S.par.plain = km_param_switch(p, "plain");
    S.threads = (int)km_param_int(p, "threads");
    if (km_param_is_set(p, "lambdas"))
        km_param_range(p, "lambdas", &S.lmin, &S.lmax, &S.nl);
    S.progress = okl_progress;
    S.ctx = (void *)p;
    const char *valid = km_param_text(p, "valid"), *csv = km_param_text(p, "path_table");
    km_problem *sub = rows ? km_problem_subset(P0, rows, count, err) : NULL, *V = NULL;
    const km_problem *P = rows ? sub : P0;
    if (!P)
        return err->code;
    int rc = km_params_kernel(p, KM_KERNEL_LINEAR, P->n > 0 ? 1.0 / P->n : 1, P->n, &S.kernel,
                              err);
    /* (BLAS runs on one thread, as km_method_train and cross-validation set it: its results
     * depend on its thread count, blas.h, and on 2 it was slower: m = 20,000, rank 50,
     * 2.8-3.1 s wall, 5.5-6.0 s CPU against 2.2-2.3 s) */
    if (rc == KM_OK && valid)
        rc = km_svmlight_read(valid, &V, err);
    km_okl_path path = {0};
    if (rc == KM_OK)
        rc = km_okl_run(P, V, &S, &path, out, err);
    if (rc == KM_OK && csv)
        rc = km_okl_write_csv(&path, csv, err);
    if (rc == KM_OK) {
        int64_t iters = 0, capped = 0;
        km_report_say(rep, "%12s %14s %6s %7s %9s %12s %12s\n", "lambda", "objective", "rank",
                      "iter", "seconds", "train_mse", "valid_mse");
        for (int t = 0; t < path.nl; t++) {
            const km_okl_info *r = &path.row[t];
            iters += r->iter;
            capped += !r->converged;
            km_report_say(rep, "%12.5g %14.8g %6d %7lld %9.4f %12.6g %12.6g%s\n", r->lambda,
                          r->objective, r->rank, (long long)r->iter, path.seconds[t],
                          r->train_mse, r->valid_mse, t == path.chosen ? "  <-" : "");
        }
        if (capped) {
            rep->converged = 0;
            km_report_warn(rep, "%lld lambdas stopped at the cap of %lld iterations; raise "
                           "--max-iter or -e", (long long)capped, (long long)S.par.max_iter);
        }
        const km_okl_info *c = &path.row[path.chosen];
        rep->objective = c->objective;
        km_report_say(rep, "alpha = %.8g; rank p = %d; outputs m = %d; chosen lambda = %.6g "
                      "(%s)\n", path.alpha, path.p, (int)km_problem_nout(P), c->lambda,
                      V ? "least validation MSE" : "the smallest; no --valid");
        if (!S.par.identity && S.par.p > path.p)
            km_report_say(rep, "(--rank %d works as %d = the number of examples: an optimal L "
                          "has no larger rank)\n", S.par.p, path.p);
        if (V)
            km_report_say(rep, "validation MSE = %.8g\n", c->valid_mse);
        km_report_say(rep, "path: %lld iterations, %.3f s (setup %.3f s)\n", (long long)iters,
                      path.path_seconds, path.setup_seconds);
    }
    km_okl_path_free(&path);
    km_problem_free(V);
    km_problem_free(sub);
    return rc;
}

const km_method km_method_okl = {"okl", "low-rank output kernel learning (seed 001), labels "
                                 "y1,...,ym", options, kinds, 0,
                                 "use --valid FILE", train};
