/* train.c - command-line front end: svmlight data -> a model: linear or kernel by
 * coordinate descent (thesis ch. 2), or low-rank output kernel learning (-s okl, seed 001). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "linear.h"
#include "metrics.h"
#include "model.h"
#include "mtl.h"
#include "oklpath.h"
#include "svmlight.h"
#include "tasks.h"

void openblas_set_num_threads(int);

static const char usage[] =
    "Usage: train [options] data_file [model_file]\n"
    "Trains a linear model by coordinate descent (Dinuzzo's thesis, Algorithm 2).\n"
    "data_file is svmlight/libsvm text, plain or gzip; '-' reads standard input.\n"
    "options:\n"
    "  -s loss      l1svm  hinge loss, L1-SVM            (= liblinear -s 3)\n"
    "               l2svm  squared hinge, L2-SVM         (= liblinear -s 1; default)\n"
    "               rls    square loss (y-z)^2/2, regularized least squares\n"
    "               rla    absolute loss |y-z|, regularized least absolute deviations\n"
    "               svr    eps-insensitive loss, support vector regression (= liblinear -s 13)\n"
    "               minimizes C sum_i L(y_i, w'x_i) + ||w||^2/2\n"
    "               okl    low-rank output kernel learning on multi-output data (labels\n"
    "                      y1,y2,...,ym): a path of lambdas, see 'output kernel' below\n"
    "               mtl    multi-task learning with a mixed-effect kernel (task = qid:),\n"
    "                      see 'multi-task' below\n"
    "  -c C         cost (default 1)\n"
    "  -p epsilon   epsilon of svr (default 0.1)\n"
    "  --stop R     stopping rule: gap (default) or step\n"
    "  -e delta     the tolerance of the stopping rule: gap: stop when the relative duality\n"
    "               gap (primal - dual) / primal <= delta (default %g; scale-free);\n"
    "               step: stop when max_i |h_i| < delta over a macro-iteration, h_i the\n"
    "               change of coefficient c_i (default %g / mean_i k(x_i, x_i))\n"
    "  -B bias      add a constant feature of value bias (default -1: none)\n"
    "  -wLABEL w    multiply C of class LABEL by w (default 1)\n"
    "  -v k         k-fold cross-validation: print accuracy or MSE, write no model\n"
    "  -q           quiet: no progress or summary\n"
    "  -n threads   threads: the linear solver trains one-versus-all classes and -v\n"
    "               folds in parallel; kernels: a team splitting the columns of K (the\n"
    "               model bits of -n 1 either way; default: the online cores, at most %d)\n"
    "kernels (without -t: the linear solver on w, thesis Algorithm 2):\n"
    "  -t kernel    linear, poly, rbf, sigmoid (or svm-train's 0..3), laplacian, expdot,\n"
    "               spline: the kernel solver (Algorithm 1) on c, model = expansion\n"
    "  -g gamma     gamma of poly, rbf, sigmoid, laplacian, expdot (default 1/features)\n"
    "  -d degree    degree of poly (default 3)\n"
    "  -r coef0     coef0 of poly and sigmoid (default 0)\n"
    "  -m MB        kernel row cache (default 200)\n"
    "  -a solver    cd (coordinate descent, default) or fixedpoint (iteration (2.10))\n"
    "  --alpha A    fixed-point step: trace (1/tr(K), default) or norm2 (1/||K||_2)\n"
    "  --rule R     index rule: random (randomized cyclic), cyclic, aitken; kernel only:\n"
    "               gradient (greedy, largest |h_i|), greedy (largest dual decrease);\n"
    "               auto (default): random for the linear solver, greedy for kernels\n"
    "  --seed N     seed of the random choices (default 1)\n"
    "  --max-iter N cap on macro-iterations (default %lld)\n"
    "  --no-shrinking  visit every coefficient in every macro-iteration\n"
    "  -h, --help   this help\n"
    "output kernel learning (-s okl; Dinuzzo and Fukumizu, Algorithm 1; kernel default\n"
    "linear, or any -t above):\n"
    "  --rank p     rank of the output kernel L = BB' (default and cap: min(examples,\n"
    "               outputs); above the number of examples it cannot change the result)\n"
    "  -L MIN:MAX:N lambdas log-spaced in [MIN, MAX], from large to small (default 25 in\n"
    "               [1e-5 alpha, alpha], alpha = sqrt(||Y'KY||_2): above it L = 0)\n"
    "  --valid FILE validation data: MSE per lambda; the model takes the best lambda\n"
    "               (without it: the smallest lambda)\n"
    "  -o FILE      the path table (CSV): lambda, objective, rank, iterations, seconds,\n"
    "               train_mse, valid_mse, chosen\n"
    "  --identity   the baseline L = I (independent RLS per output) instead of learning L\n"
    "  --plain      Algorithm 1 as printed: no Anderson acceleration, no saddle escape\n"
    "  -e delta     stop when ||B - B_prev||_F < delta sqrt(alpha) (default 1e-6)\n"
    "  --max-iter N cap on iterations per lambda (default 10000)\n"
    "  -n threads   BLAS threads (default 1)\n"
    "multi-task learning (-s mtl; Dinuzzo's thesis ch. 5, Algorithm 4): the tasks are the\n"
    "rows' qid:, the model solves (K + lambda W) c = y with the kernel\n"
    "alpha K(x1, x2) + (1 - alpha) [t1 = t2] K~_t1(x1, x2), K from -t -g -d -r (default\n"
    "linear), weights 1:\n"
    "  --alpha A    weight of K, in [0, 1] (default 0.5)\n"
    "  --lambda L   regularization parameter (default 1)\n"
    "  --task-kernel K, --task-gamma G, --task-coef0 C, --task-degree D\n"
    "               the individual kernel K~ (default linear; gamma default 1/features)\n"
    "  --task-kernels FILE  tasks with their own K~_j: lines 'TASK KERNEL', KERNEL as in a\n"
    "               kernel-list file (doc/kernel-list.md; gamma default 1), e.g.\n"
    "               '7 rbf gamma=0.5'; the other tasks use --task-kernel\n"
    "The model goes to model_file (default: data_file's name + .model).\n";

typedef struct progress {
    double start, last;
} progress;

/* Prints a progress line on stderr at most once a second. */
static void on_progress(void *user, int64_t iter, double max_h, int64_t active)
{
    progress *p = user;
    double t = km_cli_now();
    if (t - p->last < 1)
        return;
    p->last = t;
    fprintf(stderr, "  macro-iteration %lld: max|h| = %.3g, active = %lld (%.1f s)\n",
            (long long)iter, max_h, (long long)active, t - p->start);
}

/* Cross-validation names at most this many problems that stopped at the cap. */
#define MAX_CAP_WARNINGS 12

/* Why a problem that stopped at the cap did not stop earlier: its gap or step against the
 * tolerance (a static buffer: one warning at a time). */
static const char *stop_reason(const km_train_param *par, double gap, double max_h,
                               double delta)
{
    static char buf[96];
    if (par->cd.stop == KM_STOP_STEP)
        snprintf(buf, sizeof buf, "max|h| %.2g >= %.2g, gap %.2g", max_h, delta, gap);
    else
        snprintf(buf, sizeof buf, "gap %.2g > %.2g", gap, delta);
    return buf;
}

/* Prints a line per lambda on stderr at most once a second (long paths). */
static void okl_progress(void *ctx, int t, int nl, const km_okl_info *row, double seconds)
{
    progress *p = ctx;
    double now = km_cli_now();
    (void)seconds;
    if (now - p->last < 1)
        return;
    p->last = now;
    fprintf(stderr, "  lambda %d/%d = %.4g: %lld iterations, rank %d (%.1f s)\n", t + 1, nl,
            row->lambda, (long long)row->iter, row->rank, now - p->start);
}

/* -s mtl: reads the data, runs Algorithm 4, writes the model of every task. */
static int train_mtl(km_mtl_param *p, int have_gamma, int have_tgamma, const char *data,
                     const char *model_arg, const char *task_kernels, int quiet)
{
    km_error err = {0};
    km_cli_check_model_path(data, model_arg);
    double t0 = km_cli_now();
    km_mtl_tkernel *tk = NULL;
    if (task_kernels && km_mtl_read_task_kernels(task_kernels, &tk, &p->ntk, &err))
        km_cli_die(err.code, "%s", err.msg);
    p->tk = tk;
    km_problem *P = NULL;
    if (km_svmlight_read(data, &P, &err) || km_problem_single(P, data, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (!P->qid)
        km_cli_die(2, "%s: -s mtl needs task ids (qid:) on the rows", data);
    double g = P->n > 0 ? 1.0 / P->n : 1;
    if (!have_gamma)
        p->K.gamma = g;
    if (!have_tgamma)
        p->Kt.gamma = g;
    if (km_mtl_param_check(p, P->n, &err))
        km_cli_die(1, "%s", err.msg);
    km_mtl *s;
    km_model *model;
    if (km_mtl_offline(p, P, NULL, &s, &err) || km_mtl_model(s, NULL, 0, P->n, &model, &err))
        km_cli_die(err.code, "%s", err.msg);
    /* the path made only now: an input error above exits holding no allocation of ours */
    char *model_path = km_cli_model_path(data, model_arg);
    if (km_model_write(model, model_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (!quiet)
        printf("mtl: %lld examples, %lld tasks, %lld unique inputs; alpha %g, lambda %g "
               "(%.2f s)\n", (long long)P->l, (long long)model->nr_task,
               (long long)km_mtl_n(s), p->alpha, p->lambda, km_cli_now() - t0);
    km_model_free(model);
    km_mtl_free(s);
    km_problem_free(P);
    free(tk);
    free(model_path);
    return 0;
}

/* -s okl: reads the data, runs the path, prints the table, writes the model (and CSV). */
static int train_okl(km_okl_setup *S, int have_gamma, const char *data, const char *model_arg,
                     const char *valid_path, const char *csv_path, int quiet)
{
    km_error err = {0};
    km_cli_check_model_path(data, model_arg);
    double t0 = km_cli_now();
    progress prog = {t0, t0};
    if (!quiet) {
        S->progress = okl_progress;
        S->ctx = &prog;
    }
    openblas_set_num_threads(S->threads);
    km_problem *P = NULL, *V = NULL;
    if (km_svmlight_read(data, &P, &err) ||
        (valid_path && km_svmlight_read(valid_path, &V, &err)))
        km_cli_die(err.code, "%s", err.msg);
    if (!have_gamma)   /* svm-train's default */
        S->kernel.gamma = P->n > 0 ? 1.0 / P->n : 1;
    if (km_kernel_check(&S->kernel, P->n, &err))
        km_cli_die(err.code, "%s", err.msg);
    double t_read = km_cli_now();
    km_okl_path path;
    km_model *model = NULL;
    if (km_okl_run(P, V, S, &path, &model, &err))
        km_cli_die(err.code, "%s", err.msg);
    double t_train = km_cli_now();
    int64_t iters = 0, capped = 0;
    if (!quiet)
        printf("%12s %14s %6s %7s %9s %12s %12s\n", "lambda", "objective", "rank", "iter",
               "seconds", "train_mse", "valid_mse");
    for (int t = 0; t < path.nl; t++) {
        const km_okl_info *r = &path.row[t];
        iters += r->iter;
        capped += !r->converged;
        if (!quiet)
            printf("%12.5g %14.8g %6d %7lld %9.4f %12.6g %12.6g%s\n", r->lambda, r->objective,
                   r->rank, (long long)r->iter, path.seconds[t], r->train_mse, r->valid_mse,
                   t == path.chosen ? "  <-" : "");
    }
    if (!quiet) {
        if (capped)
            km_cli_warn("%lld lambdas stopped at the cap of %lld iterations; raise --max-iter "
                        "or -e", (long long)capped, (long long)S->par.max_iter);
        const km_okl_info *c = &path.row[path.chosen];
        printf("alpha = %.8g; rank p = %d; outputs m = %d; chosen lambda = %.6g (%s)\n",
               path.alpha, path.p, (int)km_problem_nout(P), c->lambda,
               V ? "least validation MSE" : "the smallest; no --valid");
        if (!S->par.identity && S->par.p > path.p)
            printf("(--rank %d works as %d = the number of examples: an optimal L has no "
                   "larger rank)\n", S->par.p, path.p);
        if (V)
            printf("validation MSE = %.8g\n", c->valid_mse);
        printf("path: %lld iterations, %.3f s (setup %.3f s); total %.3f s (read %.3f s)\n",
               (long long)iters, path.path_seconds, path.setup_seconds, t_train - t0,
               t_read - t0);
    }
    if (csv_path && km_okl_write_csv(&path, csv_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    km_okl_path_free(&path);
    km_problem_free(P);
    km_problem_free(V);
    char *model_path = km_cli_model_path(data, model_arg);
    if (km_model_write(model, model_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    km_model_free(model);
    free(model_path);
    return 0;
}

int main(int argc, char **argv)
{
    km_cli_init("train");
    km_train_param par = {0};
    par.cd = km_cd_param_default();
    par.C = 1;
    par.bias = -1;
    par.kernel.degree = 3;
    par.cache_bytes = (size_t)200 << 20;
    par.threads = km_threads_default();
    int have_gamma = 0, okl = 0, mtl = 0, have_tgamma = 0, have_threads = 0;
    km_mtl_param mp = {0.5, 1.0, {KM_KERNEL_LINEAR, 1, 0, 3}, {KM_KERNEL_LINEAR, 1, 0, 3}, 0,
                       NULL};
    const char *alpha_arg = NULL, *mtl_only = NULL, *task_kernels = NULL;
    km_okl_setup ok = {0};
    ok.par = km_okl_param_default();
    ok.par.p = 0;
    const char *okl_only = NULL, *valid_path = NULL, *csv_path = NULL;
    km_class_weight weights[256];
    int quiet = 0, folds = 0;
    const char *args[2] = {0};
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (km_cli_die(1, "option %s needs a value", a), ""))
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf(usage, KM_CD_DEFAULT_GAP, KM_CD_DEFAULT_TOL, KM_THREADS_DEFAULT_MAX,
                   (long long)KM_CD_DEFAULT_MAX_ITER);
            return 0;
        } else if (strcmp(a, "-s") == 0) {
            const char *s = NEXT();
            if (strcmp(s, "okl") == 0) {
                okl = 1;
                continue;
            }
            if (strcmp(s, "mtl") == 0) {
                mtl = 1;
                continue;
            }
            int loss = km_loss_from_name(s);
            if (loss < 0)
                km_cli_die(1, "-s: unknown loss '%s' (l1svm, l2svm, rls, rla, svr, okl, mtl)",
                           s);
            par.cd.loss = (km_loss)loss;
        } else if (strcmp(a, "-c") == 0) {
            par.C = km_cli_number(a, NEXT());
        } else if (strcmp(a, "-p") == 0) {
            par.cd.eps = km_cli_number(a, NEXT());
        } else if (strcmp(a, "-e") == 0) {
            par.cd.delta = ok.par.delta = km_cli_number(a, NEXT());
            if (!(par.cd.delta > 0))
                km_cli_die(1, "-e: the stopping tolerance must be > 0");
        } else if (strcmp(a, "--rank") == 0) {
            ok.par.p = (int)km_cli_integer(a, NEXT(), 1, INT32_MAX);
            okl_only = a;
        } else if (strcmp(a, "-L") == 0) {
            km_cli_range(a, NEXT(), &ok.lmin, &ok.lmax, &ok.nl);
            okl_only = a;
        } else if (strcmp(a, "--valid") == 0) {
            valid_path = NEXT();
            okl_only = a;
        } else if (strcmp(a, "-o") == 0) {
            csv_path = NEXT();
            okl_only = a;
        } else if (strcmp(a, "--identity") == 0) {
            ok.par.identity = 1;
            okl_only = a;
        } else if (strcmp(a, "--plain") == 0) {
            ok.par.plain = 1;
            okl_only = a;
        } else if (strcmp(a, "-B") == 0) {
            par.bias = km_cli_number(a, NEXT());
        } else if (strncmp(a, "-w", 2) == 0 && a[2]) {
            if (par.nr_weight == (int)(sizeof weights / sizeof *weights))
                km_cli_die(1, "too many -w options");
            weights[par.nr_weight].label = km_cli_number("-w", a + 2);
            weights[par.nr_weight].weight = km_cli_number(a, NEXT());
            par.nr_weight++;
        } else if (strcmp(a, "-v") == 0) {
            folds = (int)km_cli_integer(a, NEXT(), 2, 1000000);
        } else if (strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (strcmp(a, "-t") == 0) {
            const char *s = NEXT();
            int t = km_kernel_from_name(s);
            if (t < 0)
                km_cli_die(1, "-t: unknown kernel '%s' (linear, poly, rbf, sigmoid, laplacian, "
                           "expdot, spline or 0..3)", s);
            par.use_kernel = 1;
            par.kernel.type = (km_kernel_type)t;
        } else if (strcmp(a, "-g") == 0) {
            par.kernel.gamma = km_cli_number(a, NEXT());
            have_gamma = 1;
        } else if (strcmp(a, "-d") == 0) {
            par.kernel.degree = (int)km_cli_integer(a, NEXT(), 1, 1000);
        } else if (strcmp(a, "-r") == 0) {
            par.kernel.coef0 = km_cli_number(a, NEXT());
        } else if (strcmp(a, "-m") == 0) {
            double mb = km_cli_number(a, NEXT());
            if (!(mb >= 1) || mb > 1e9)
                km_cli_die(1, "-m: the cache size must be >= 1 MB");
            par.cache_bytes = (size_t)(mb * 1048576);
        } else if (strcmp(a, "-n") == 0) {
            par.threads = (int)km_cli_integer(a, NEXT(), 1, 1024);
            have_threads = 1;
        } else if (strcmp(a, "-a") == 0) {
            const char *s = NEXT();
            if (strcmp(s, "cd") != 0 && strcmp(s, "fixedpoint") != 0)
                km_cli_die(1, "-a: unknown solver '%s' (cd, fixedpoint)", s);
            par.fixedpoint = strcmp(s, "fixedpoint") == 0;
        } else if (strcmp(a, "--alpha") == 0) {
            alpha_arg = NEXT();   /* -s mtl: a number; else the fixed-point step rule */
        } else if (strcmp(a, "--lambda") == 0) {
            mp.lambda = km_cli_number(a, NEXT());
            mtl_only = a;
        } else if (strcmp(a, "--task-kernel") == 0) {
            const char *s = NEXT();
            int t = km_kernel_from_name(s);
            if (t < 0)
                km_cli_die(1, "--task-kernel: unknown kernel '%s'", s);
            mp.Kt.type = (km_kernel_type)t;
            mtl_only = a;
        } else if (strcmp(a, "--task-kernels") == 0) {
            task_kernels = NEXT();
            mtl_only = a;
        } else if (strcmp(a, "--task-gamma") == 0) {
            mp.Kt.gamma = km_cli_number(a, NEXT());
            have_tgamma = 1;
            mtl_only = a;
        } else if (strcmp(a, "--task-coef0") == 0) {
            mp.Kt.coef0 = km_cli_number(a, NEXT());
            mtl_only = a;
        } else if (strcmp(a, "--task-degree") == 0) {
            mp.Kt.degree = (int)km_cli_integer(a, NEXT(), 1, 1000);
            mtl_only = a;
        } else if (strcmp(a, "--rule") == 0) {
            const char *s = NEXT();
            int r = km_rule_from_name(s);
            if (r < 0)
                km_cli_die(1, "--rule: unknown index rule '%s' (random, cyclic, aitken, gradient, "
                           "greedy, auto)", s);
            par.cd.rule = (km_rule)r;
        } else if (strcmp(a, "--stop") == 0) {
            const char *s = NEXT();
            if (strcmp(s, "gap") != 0 && strcmp(s, "step") != 0)
                km_cli_die(1, "--stop: unknown stopping rule '%s' (gap, step)", s);
            par.cd.stop = strcmp(s, "step") == 0 ? KM_STOP_STEP : KM_STOP_GAP;
        } else if (strcmp(a, "--seed") == 0) {
            par.cd.seed = (uint64_t)km_cli_integer(a, NEXT(), 0, INT64_MAX);
        } else if (strcmp(a, "--max-iter") == 0) {
            par.cd.max_iter = ok.par.max_iter = km_cli_integer(a, NEXT(), 1, INT64_MAX);
        } else if (strcmp(a, "--no-shrinking") == 0) {
            par.cd.shrinking = 0;
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else {
            if (nargs == 2)
                km_cli_die(1, "too many arguments");
            args[nargs++] = a;
        }
#undef NEXT
    }
    if (nargs < 1)
        km_cli_die(1, "no data file given");
    if (okl_only && !okl)
        km_cli_die(1, "%s belongs to -s okl", okl_only);
    if (mtl_only && !mtl)
        km_cli_die(1, "%s belongs to -s mtl", mtl_only);
    if (mtl) {
        if (folds)
            km_cli_die(1, "-v is not available with -s mtl");
        if (alpha_arg)
            mp.alpha = km_cli_number("--alpha", alpha_arg);
        mp.K = par.kernel;
        if (!par.use_kernel)
            mp.K.type = KM_KERNEL_LINEAR;
        return train_mtl(&mp, have_gamma, have_tgamma, args[0], nargs == 2 ? args[1] : NULL,
                         task_kernels, quiet);
    }
    if (alpha_arg) {
        if (strcmp(alpha_arg, "trace") != 0 && strcmp(alpha_arg, "norm2") != 0)
            km_cli_die(1, "--alpha: expected trace or norm2, got '%s'", alpha_arg);
        par.alpha_rule = strcmp(alpha_arg, "norm2") == 0 ? KM_ALPHA_NORM2 : KM_ALPHA_TRACE;
    }
    if (okl) {
        if (folds)
            km_cli_die(1, "-v is not available with -s okl (use --valid FILE)");
        ok.kernel = par.kernel;
        if (!par.use_kernel)
            ok.kernel.type = KM_KERNEL_LINEAR;
        ok.threads = have_threads ? par.threads : 1;
        return train_okl(&ok, have_gamma, args[0], nargs == 2 ? args[1] : NULL, valid_path,
                         csv_path, quiet);
    }
    par.weights = weights;
    km_error err = {0};
    openblas_set_num_threads(1);   /* the solvers thread by themselves (OpenBLAS's idle
                                      threads spin-yield after every call) */
    if (km_train_check(&par, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (!folds)
        km_cli_check_model_path(args[0], nargs == 2 ? args[1] : NULL);

    double t0 = km_cli_now();
    progress prog = {t0, t0};
    if (!quiet) {
        par.cd.progress = on_progress;
        par.cd.user = &prog;
    }
    km_problem *P = NULL;
    if (km_svmlight_read(args[0], &P, &err) || km_problem_single(P, args[0], &err))
        km_cli_die(err.code, "%s", err.msg);
    double t_read = km_cli_now();
    if (par.use_kernel && !have_gamma)   /* svm-train's default */
        par.kernel.gamma = P->n > 0 ? 1.0 / P->n : 1;

    if (folds) {
        double *pred = malloc((size_t)P->l * sizeof *pred);
        if (!pred)
            km_cli_die(3, "out of memory");
        km_cv_info cv = {0};
        if (km_cross_validate(P, &par, folds, pred, &cv, &err))
            km_cli_die(err.code, "%s", err.msg);
        for (int q = 0; q < cv.nr_capped && q < MAX_CAP_WARNINGS && !quiet; q++) {
            const km_cv_capped *f = &cv.capped[q];
            char cls[64] = "";
            if (f->nr_w > 1)
                snprintf(cls, sizeof cls, " (class %g)", f->label);
            km_cli_warn("fold %d%s stopped at the cap of %lld macro-iterations (%s); raise "
                        "--max-iter or -e", f->fold + 1, cls, (long long)par.cd.max_iter,
                        stop_reason(&par, f->gap, f->max_h, f->delta));
        }
        if (cv.nr_capped > MAX_CAP_WARNINGS && !quiet)
            km_cli_warn("%d problems in all (folds x classes) stopped at the cap", cv.nr_capped);
        km_cv_info_free(&cv);
        km_metrics mt = {0};
        for (int64_t i = 0; i < P->l; i++)
            km_metrics_add(&mt, P->y[i], pred[i]);
        if (km_loss_is_classification(par.cd.loss)) {
            printf("Cross Validation Accuracy = %g%%\n", km_metrics_accuracy(&mt));
        } else {
            printf("Cross Validation Mean squared error = %g\n", km_metrics_mse(&mt));
            printf("Cross Validation Squared correlation coefficient = %g\n",
                   km_metrics_scc(&mt));
        }
        free(pred);
        km_problem_free(P);
        return 0;
    }

    km_model *model = NULL;
    km_train_info info = {0};
    if (km_train(P, NULL, 0, &par, &model, &info, &err))
        km_cli_die(err.code, "%s", err.msg);
    double t_train = km_cli_now();
    double F = 0, gap = 0;
    int64_t iters = 0, nnz = 0;
    for (int k = 0; k < info.nr_w; k++) {
        F += info.objective[k];
        gap = info.gap[k] > gap ? info.gap[k] : gap;
        iters = info.iter[k] > iters ? info.iter[k] : iters;
        nnz += info.nnz_c[k];
        if (!quiet && info.nr_w > 1)
            printf("class %g: macro-iterations = %lld, objective = %.17g, gap = %.3g, nonzero "
                   "coefficients = %lld\n", model->labels[k], (long long)info.iter[k],
                   info.objective[k], info.gap[k], (long long)info.nnz_c[k]);
    }
    if (!quiet) {
        for (int k = 0; k < info.nr_w; k++) {
            if (info.converged[k])
                continue;
            char cls[64] = "";
            if (info.nr_w > 1)
                snprintf(cls, sizeof cls, "class %g ", model->labels[k]);
            /* a gap still above 10% after the cap: badly conditioned data (unscaled
             * features), which more sweeps will not fix */
            km_cli_warn("%sstopped at the cap of %lld macro-iterations (%s); raise --max-iter "
                        "or -e%s", cls, (long long)par.cd.max_iter,
                        stop_reason(&par, info.gap[k], info.max_h[k], info.delta),
                        info.gap[k] > 0.1 ? ", or scale the features (datasets/standardize): "
                                            "coordinate descent crawls on unscaled data" : "");
        }
        printf("macro-iterations = %lld (%s %.3g)\n", (long long)iters,
               par.cd.stop == KM_STOP_STEP ? "stop: max|h| <" : "stop: gap <=", info.delta);
        printf("objective = %.17g\n", F);
        printf("gap = %.3g (relative duality gap (primal - dual) / primal%s)\n", gap,
               info.nr_w > 1 ? ", the largest of all classes" : "");
        printf("nonzero coefficients = %lld (of %lld%s)\n", (long long)nnz,
               (long long)(P->l * info.nr_w), info.nr_w > 1 ? ", all classes" : "");
        printf("time = %.3f s (read %.3f s, train %.3f s)\n", t_train - t0, t_read - t0,
               t_train - t_read);
    }
    km_train_info_free(&info);
    km_problem_free(P);
    char *model_path = km_cli_model_path(args[0], nargs == 2 ? args[1] : NULL);
    if (km_model_write(model, model_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    km_model_free(model);
    free(model_path);
    return 0;
}
