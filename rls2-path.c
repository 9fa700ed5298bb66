/* rls2-path.c - command-line front end: RLS2 multiple kernel learning along a regularization
 * path (thesis ch. 4, Algorithm 3), model selection, path table, figure and model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "blas.h"
#include "cli.h"
#include "plot.h"
#include "rls2path.h"
#include "sizelimit.h"
#include "svmlight.h"

static const char usage[] =
    "Usage: rls2-path [options] training_file [model_file]\n"
    "Learns a convex combination of basis kernels with regularized least squares (RLS2,\n"
    "Dinuzzo's thesis ch. 4, Algorithm 3) along a path of lambdas, from large to small.\n"
    "training_file is svmlight/libsvm text, plain or gzip; '-' reads standard input.\n"
    "options:\n"
    "  --kernels SET  basis kernels: paper (default: (1+x'y)^d, d = 1..3, and 10 Gaussian\n"
    "                 gammas in [1e-3, 1e3], on all features and on each feature), linear\n"
    "                 (x^k y^k per feature: linear RLS2, feature selection), or a kernel-list\n"
    "                 file (doc/kernel-list.md)\n"
    "  -S RULE        scales s_k: trace (1/tr K^k, default), class (within-class variances,\n"
    "                 (4.13)), microarray ((sigma+^2 + sigma-^2)^-1/2), none\n"
    "  --center       scales from kernels centered in feature space\n"
    "  --transductive trace scaling over the training and --test inputs\n"
    "  -L MIN:MAX:N   N lambdas log-spaced in [MIN, MAX] (default 1e-6:1e6:30)\n"
    "  -e delta       stop when ||(K + lambda I)c - y|| <= delta ||y|| (default 1e-2);\n"
    "                 -k linear: when the duality gap of (4.9) <= delta^2 of the objective\n"
    "  --max-iter N   iterations per lambda (default 1000; -k linear: sweeps)\n"
    "  --task T       class or reg (default: class when the labels are integers with at\n"
    "                 most 32 values, else reg); classes: +-1 targets, one-versus-all for\n"
    "                 more than two; reg: outputs centered by their mean\n"
    "  --no-intercept regression: fit the outputs as they are (default: subtract their\n"
    "                 training mean, and add it back in predictions)\n"
    "  -v k           k-fold cross-validation (stratified by class); the model is the\n"
    "                 lambda with the best mean validation metric (ties: the larger)\n"
    "  --one-se       ... or the largest lambda within one standard error of the best\n"
    "  --seed N       seed of the folds (default 1)\n"
    "  --valid FILE   evaluate every lambda on FILE (the valid column); without -v the\n"
    "                 model is the lambda best on FILE (ties: the larger)\n"
    "  --test FILE    evaluate every lambda on FILE; without -v and --valid the model is\n"
    "                 the lambda best on FILE (then its test metric is not held out)\n"
    "  -o FILE        the path table as CSV (lambda, objective, kernels, iterations, seconds,\n"
    "                 dof, train/valid/test accuracy or RMSE)\n"
    "  --selected FILE  the selected kernels of every lambda as CSV (lambda, rank, weight,\n"
    "                 kernel in kernel-list syntax); the table on stdout names the 3 with\n"
    "                 the largest weights d_k\n"
    "  --plot FILE    the path as an SVG figure (metric, kernels, iterations vs lambda)\n"
    "  --no-dof       skip the degrees of freedom (an l^3 inverse per lambda)\n"
    "  -n threads     threads for kernel products (default 1)\n"
    "  -q             quiet: no progress or table\n"
    "  --max-line BYTES  refuse lines longer than this (default 1G; k, M, G)\n"
    "  -h, --help     this help\n"
    "The model is at the lambda -v chooses; without -v, the best on --valid, else the\n"
    "best on --test, else the last (smallest) lambda. It goes to model_file (default:\n"
    "training_file's name + .model); predict applies it.\n"
    "Spelling of the previous release, accepted with a warning until the next one:\n"
    "-k (--kernels).\n";

typedef struct progress {
    double start, last;
    int quiet;
} progress;

static void on_progress(void *ctx, int done, int total, double lambda)
{
    progress *p = ctx;
    double t = km_cli_now();
    if (p->quiet || (t - p->last < 1 && done < total))
        return;
    p->last = t;
    fprintf(stderr, "  %d/%d paths x lambdas done (lambda %.3g, %.1f s)\n", done, total, lambda,
            t - p->start);
}

/* The names of row t's 3 kernels with the largest weights, then "+N more". */
static void print_names(const km_rls2_path *p, const km_basis_set *basis, int t)
{
    int64_t a = p->sel_start[t], b = p->sel_start[t + 1];
    for (int64_t q = a; q < b && q < a + 3; q++) {
        char name[96];
        int need = km_rls2_kernel_name(basis, p->sel_k[q], name, sizeof name);
        if (need >= (int)sizeof name)
            strcpy(name + sizeof name - 4, "...");
        printf("%s%s", q > a ? ", " : "", name);
    }
    if (b - a > 3)
        printf(" +%lld more", (long long)(b - a - 3));
    putchar('\n');
}

static void plot_path(const km_rls2_path *p, const char *path, km_error *err)
{
    int n = p->nl;
    double *x = malloc((size_t)n * 8 * sizeof *x);
    if (!x)
        km_cli_die(3, "out of memory");
    double *kern = x + n, *iter = kern + n, *lo = iter + n, *hi = lo + n, *tr = hi + n,
           *va = tr + n, *test = va + n;
    for (int t = 0; t < n; t++) {
        x[t] = p->row[t].lambda;
        kern[t] = p->row[t].kernels;
        iter[t] = p->row[t].iter;
        tr[t] = p->row[t].train;
        va[t] = p->row[t].valid;
        lo[t] = va[t] - p->row[t].valid_se;
        hi[t] = va[t] + p->row[t].valid_se;
    }
    km_plot_series ms[3];
    int nm = 0;
    ms[nm++] = (km_plot_series){"training", tr, NULL, NULL};
    if (!isnan(va[0]) && !isnan(p->row[0].valid_se))
        ms[nm++] = (km_plot_series){"validation (mean +- se)", va, lo, hi};
    else if (!isnan(va[0]))
        ms[nm++] = (km_plot_series){"validation", va, NULL, NULL};
    if (!isnan(p->row[0].test)) {
        for (int t = 0; t < n; t++)
            test[t] = p->row[t].test;
        ms[nm++] = (km_plot_series){"test", test, NULL, NULL};
    }
    km_plot_series ks = {"kernels", kern, NULL, NULL}, is = {"iterations", iter, NULL, NULL};
    double mark = p->row[p->chosen].lambda;
    km_plot_panel panels[3] = {
        {p->classification ? "Accuracy" : "RMSE", p->classification ? "accuracy (%)" : "RMSE",
         0, ms, nm, mark},
        {"Selected kernels", "kernels with d_k > 0", 0, &ks, 1, mark},
        {"Iterations per lambda", "iterations", 0, &is, 1, mark},
    };
    km_plot fig = {"RLS2 regularization path", "lambda", 1, x, n, panels, 3};
    if (km_plot_svg(&fig, path, err))
        km_cli_die(err->code, "%s", err->msg);
    free(x);
}

int main(int argc, char **argv)
{
    km_cli_init("rls2-path");
    /* the matrices are a few hundred rows: BLAS threads cost more than they give (dpotrf at
     * l = 537 takes 10 ms on 2 threads, 5 ms on 1); -n parallelizes over kernels instead */
    km_blas_threads(1);
    km_rls2_setup S = {0};
    km_rls2_param_default(&S.solver);
    S.scale = KM_SCALE_TRACE;
    S.seed = 1;
    S.dof = 1;
    double lmin = 1e-6, lmax = 1e6;
    int nl = 30, quiet = 0, task = -1;
    size_t max_line = 0;
    const char *kset = "paper", *test_path = NULL, *csv_path = NULL, *svg_path = NULL;
    const char *valid_path = NULL, *sel_path = NULL;
    const char *args[2] = {0};
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() km_cli_value(argc, argv, &i)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (km_cli_option(a, "--kernels", "-k")) {
            kset = NEXT();
        } else if (!strcmp(a, "-S")) {
            const char *s = NEXT();
            int r = km_scale_from_name(s);
            if (r < 0)
                km_cli_die(1, "-S: unknown scaling '%s' (trace, class, microarray, none)", s);
            S.scale = (km_scale_rule)r;
        } else if (!strcmp(a, "--center")) {
            S.center = 1;
        } else if (!strcmp(a, "--transductive")) {
            S.transductive = 1;
        } else if (!strcmp(a, "-L")) {
            km_cli_range(a, NEXT(), &lmin, &lmax, &nl);
        } else if (!strcmp(a, "-e")) {
            S.solver.delta = km_cli_number(a, NEXT());
            if (!(S.solver.delta > 0))
                km_cli_die(1, "-e: the stopping tolerance must be > 0");
        } else if (!strcmp(a, "--max-iter")) {
            S.solver.max_iter = (int)km_cli_integer(a, NEXT(), 1, 1000000000);
        } else if (!strcmp(a, "--task")) {
            const char *s = NEXT();
            if (strcmp(s, "class") && strcmp(s, "reg"))
                km_cli_die(1, "--task: expected class or reg, got '%s'", s);
            task = !strcmp(s, "class");
        } else if (!strcmp(a, "--no-intercept")) {
            S.no_intercept = 1;
        } else if (!strcmp(a, "-v")) {
            S.folds = (int)km_cli_integer(a, NEXT(), 2, 1000000);
        } else if (!strcmp(a, "--one-se")) {
            S.one_se = 1;
        } else if (!strcmp(a, "--seed")) {
            S.seed = (uint64_t)km_cli_integer(a, NEXT(), 0, INT64_MAX);
        } else if (!strcmp(a, "--test")) {
            test_path = NEXT();
        } else if (!strcmp(a, "--valid")) {
            valid_path = NEXT();
        } else if (!strcmp(a, "--selected")) {
            sel_path = NEXT();
        } else if (!strcmp(a, "-o")) {
            csv_path = NEXT();
        } else if (!strcmp(a, "--plot")) {
            svg_path = NEXT();
        } else if (!strcmp(a, "--no-dof")) {
            S.dof = 0;
        } else if (!strcmp(a, "-n")) {
            S.solver.threads = (int)km_cli_integer(a, NEXT(), 1, 1024);
        } else if (!strcmp(a, "-q")) {
            quiet = 1;
        } else if (!strcmp(a, "--max-line")) {
            max_line = (size_t)km_cli_size(a, NEXT());
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
        km_cli_die(1, "no training file given");
    if (S.one_se && !S.folds)
        km_cli_die(1, "--one-se needs -v");
    if (S.transductive && !test_path)
        km_cli_die(1, "--transductive needs --test");
    if (valid_path && S.folds)
        km_cli_die(1, "--valid and -v: the lambda is chosen one way (give one of them)");
    S.select_test = test_path && !valid_path && !S.folds;
    char *model_path = km_cli_model_path(args[0], nargs == 2 ? args[1] : NULL);

    double t0 = km_cli_now();
    km_error err = {0};
    km_problem *P = NULL, *Q = NULL, *V = NULL, *X, *PQ;
    if (km_svmlight_read_max(args[0], max_line, &P, &err) ||
        km_problem_single(P, args[0], &err))
        km_cli_die(err.code, "%s", err.msg);
    PQ = X = P;
    if (test_path) {   /* rows: training, then test, then validation */
        if (km_svmlight_read_max(test_path, max_line, &Q, &err) ||
            km_problem_single(Q, test_path, &err))
            km_cli_die(err.code, "%s", err.msg);
        if (!(PQ = X = km_problem_concat(P, Q)))
            km_cli_die(3, "out of memory");
    }
    if (valid_path) {
        if (km_svmlight_read_max(valid_path, max_line, &V, &err) ||
            km_problem_single(V, valid_path, &err))
            km_cli_die(err.code, "%s", err.msg);
        if (!(X = km_problem_concat(PQ, V)))
            km_cli_die(3, "out of memory");
    }
    if (task < 0)
        task = km_rls2_looks_like_classes(P);

    km_basis_set basis = {0};
    int rc = KM_OK;
    /* the paper and linear sets have kernels per feature (13 and 1, about 8 doubles each):
     * the data must justify their index range */
    if (!strcmp(kset, "paper") || !strcmp(kset, "linear"))
        rc = km_limit_features(X, NULL, 0, (int64_t)X->n + 1, strcmp(kset, "paper") ? 8 : 104,
                               "the basis kernels", &err);
    if (rc)
        ;
    else if (!strcmp(kset, "paper"))
        rc = km_basis_paper(X->n, &basis, &err);
    else if (!strcmp(kset, "linear"))
        rc = km_basis_linear(X->n, &basis, &err);
    else
        rc = km_basis_read_list(kset, X->n, &basis, &err);
    if (rc)
        km_cli_die(err.code, "%s", err.msg);
    if (basis.m < 1)
        km_cli_die(2, "no basis kernels (the data have no features?)");
    km_kbank *bank = km_kbank_new(X, &basis, S.solver.threads, &err);
    if (!bank)
        km_cli_die(err.code, "%s", err.msg);
    double t_bank = km_cli_now();
    if (!quiet) {
        int64_t doubles;
        int dense, factored;
        km_kbank_stats(bank, &doubles, &dense, &factored);
        fprintf(stderr, "%s: %lld training rows%s, %d features, %d basis kernels (%d dense, "
                "%d factored, %.1f MB) in %.2f s\n", task ? "classification" : "regression",
                (long long)P->l, Q ? (V ? " + test + validation" : " + test") :
                V ? " + validation" : "", (int)X->n, basis.m, dense, factored,
                (double)doubles * 8 / 1048576, t_bank - t0);
    }

    int64_t *train = malloc((size_t)X->l * sizeof *train);
    double *lambda = malloc((size_t)nl * sizeof *lambda);
    if (!train || !lambda)
        km_cli_die(3, "out of memory");
    for (int64_t i = 0; i < X->l; i++)
        train[i] = i;
    km_rls2_lambdas(lmin, lmax, nl, lambda);
    S.lambda = lambda;
    S.nl = nl;
    progress prog = {t0, t0, quiet};
    S.progress = on_progress;
    S.ctx = &prog;
    int64_t nt = Q ? Q->l : 0;
    km_rls2_task T = {bank, X->y, train, P->l, train + P->l, nt, task};
    S.valid = train + P->l + nt;
    S.nvalid = V ? V->l : 0;
    km_rls2_path path;
    if (km_rls2_run(&T, &S, &path, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (!quiet) {
        if (path.scale_zero)
            km_cli_warn("%d basis kernels have scale 0 (constant on the rows that set the "
                        "scale) and were left out", path.scale_zero);
        const char *mt = task ? "acc%" : "rmse";
        printf("%12s %5s %5s %9s %9s %9s %9s %9s %-15s %s\n", "lambda", "kern", "iter", "dof",
               "train", "valid", "+-se", "test", "", "kernels, largest d_k first");
        for (int t = 0; t < nl; t++) {
            const km_rls2_row *r = &path.row[t];
            printf("%12.4g %5d %5d %9.4g %9.4g %9.4g %9.4g %9.4g %-9s%-6s ", r->lambda,
                   r->kernels, r->iter, r->df, r->train, r->valid, r->valid_se, r->test,
                   t == path.chosen ? "<- model" : "", r->converged ? "" : "(cap)");
            print_names(&path, &basis, t);
        }
        int unconv = 0;
        for (int t = 0; t < nl; t++)
            unconv += !path.row[t].converged;
        if (unconv)
            km_cli_warn("%d lambdas stopped at the cap of %d iterations; raise --max-iter or "
                        "-e", unconv, S.solver.max_iter);
        double secs = 0;
        int iters = 0;
        for (int t = 0; t < nl; t++) {
            secs += path.row[t].seconds;
            iters += path.row[t].iter;
        }
        static const char *why[] = {
            "the last lambda: no -v, --valid or --test",
            "the best mean over the folds",
            "the largest within one standard error of the folds' best",
            "the best on --valid",
            "the best on --test: its test metric is not held out; use --valid or -v for one "
            "that is"};
        printf("metric = %s; chosen lambda = %.6g (%d kernels), %s\n", mt,
               path.row[path.chosen].lambda, path.row[path.chosen].kernels, why[path.choice]);
        printf("path: %d iterations, %.3f s (kernels %.3f s, total %.3f s)\n", iters, secs,
               t_bank - t0, km_cli_now() - t0);
    }
    if (csv_path && km_rls2_write_csv(&path, csv_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (sel_path && km_rls2_write_selected(&path, &basis, sel_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (svg_path)
        plot_path(&path, svg_path, &err);
    km_model *model = NULL;
    if (km_rls2_model(&path, &basis, X, train, &model, &err) ||
        km_model_write(model, model_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    km_model_free(model);
    km_rls2_path_free(&path);
    km_kbank_free(bank);
    km_basis_set_free(&basis);
    if (X != PQ)
        km_problem_free(X);
    if (PQ != P)
        km_problem_free(PQ);
    km_problem_free(P);
    km_problem_free(Q);
    km_problem_free(V);
    free(train);
    free(lambda);
    free(model_path);
    km_cli_check_stdout();   /* the path table */
    return 0;
}
