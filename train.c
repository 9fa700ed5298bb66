/* train.c - command-line front end: svmlight data -> a model, by any method of the method
 * table (common/method.c): the losses of thesis Table 2.1 by coordinate descent, low-rank
 * output kernel learning (seed 001), multi-task learning (thesis ch. 5), ... */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "cli.h"
#include "method.h"
#include "metrics.h"
#include "model.h"
#include "search.h"
#include "svmlight.h"


#define DEFAULT_METHOD "l2svm"

/* The general help: the usage, the front end's own options, the methods from the table. */
static void usage(void)
{
    printf("Usage: train [options] data_file [model_file]\n"
           "Trains a model on svmlight/libsvm text (plain or gzip; '-' reads standard input)\n"
           "and writes it to model_file (default: data_file's name + .model).\n"
           "options:\n"
           "  -s method    the method (default %s):\n", DEFAULT_METHOD);
    for (int i = 0; i < km_method_count(); i++)
        printf("                 %-8s %s\n", km_method_name(km_method_at(i)),
               km_method_summary(km_method_at(i)));
    printf("  -v k         k-fold cross-validation: print accuracy or MSE, write no model\n"
           "  --metric M   what -v prints: accuracy, f1, auc (two classes) or mse\n"
           "  -C           search C (from a small C up by factors of 2, warm-started) by\n"
           "               -v k (default 5) cross-validation; print each C and the best\n"
           "  --grid SPEC  search C and gamma: C=LO:HI:N,g=LO:HI:N in log2 (grid.py's\n"
           "               C=-5:15:11,g=3:-15:10 for what is left out; 'default')\n"
           "  --grid-plot FILE  the --grid scores as an SVG heat map with contours\n"
           "  -q           quiet: no progress, warnings or summary\n"
           "  --max-line BYTES  refuse lines longer than this (default 1G; k, M, G)\n"
           "  --save-liblinear FILE  also write the model as a LIBLINEAR model file (linear\n"
           "               models with integer labels; liblinear-predict reads it)\n"
           "  --save-libsvm FILE  also write the model as a LIBSVM model file (kernel\n"
           "               models of two classes or regression; svm-predict reads it)\n"
           "  -h, --help   this help; with -s METHOD: the method's options and defaults\n"
           "The options of the default method (train -s NAME -h for another):\n");
    char *h = km_method_help(km_method_find(DEFAULT_METHOD));
    fputs(h ? h : "", stdout);
    free(h);
}

/* train's own options: --save-liblinear FILE, --save-libsvm FILE */
typedef struct saves {
    const char **liblinear, **libsvm;
} saves;

static int train_only(void *user, int argc, char **argv, int *i)
{
    saves *sv = user;
    if (strcmp(argv[*i], "--save-liblinear") == 0)
        *sv->liblinear = km_cli_value(argc, argv, i);
    else if (strcmp(argv[*i], "--save-libsvm") == 0)
        *sv->libsvm = km_cli_value(argc, argv, i);
    else
        return 0;
    return 1;
}

int main(int argc, char **argv)
{
    km_cli_init("train");
    km_error err = {0};
    const char *save_liblinear = NULL, *save_libsvm = NULL;
    saves sv = {&save_liblinear, &save_libsvm};
    km_cli_train o;
    km_cli_train_parse(argc, argv, DEFAULT_METHOD, &o, train_only, &sv);
    const km_method *m = o.m;
    km_params *par = o.par;
    const char *metric = o.metric, *grid = o.grid, *grid_plot = o.grid_plot, **args = o.args;
    int quiet = o.quiet, folds = o.folds, search = o.search_C || o.grid, nargs = o.nargs;
    if (o.help) {   /* train -h: everything; train -s NAME -h: the method's options */
        char *h = o.have_s ? km_method_help(m) : NULL;
        if (o.have_s)
            fputs(h ? h : "", stdout);
        else
            usage();
        free(h);
        km_params_free(par);
        return 0;
    }
    km_blas_threads(1);   /* the solvers thread by themselves (OpenBLAS's idle
                                      threads spin-yield after every call) */
    double t0 = km_cli_now();
    km_cli_progress prog = {t0, t0, PTHREAD_MUTEX_INITIALIZER};
    if (!quiet)
        km_params_progress(par, km_cli_on_progress, &prog);
    km_problem *P = NULL;
    if (km_svmlight_read_params(par, args[0], o.max_line, &P, &err))
        km_cli_die(err.code, "%s", err.msg);
    double t_read = km_cli_now();
    km_report rep;
    if (search) {
        km_search S;
        int rc = grid ? km_search_grid(m, P, par, folds, metric, grid, &S, &rep, &err)
                      : km_search_C(m, P, par, folds, metric, &S, &rep, &err);
        if (rc)
            km_cli_die(err.code, "%s", err.msg);
        if (!quiet)
            km_cli_print_warnings(&rep);
        fputs(rep.text ? rep.text : "", stdout);
        if (grid_plot && km_search_plot(&S, metric ? metric : km_method_classifies(m)
                                                    ? "accuracy" : "mse", grid_plot, &err))
            km_cli_die(err.code, "%s", err.msg);
        km_search_free(&S);
        km_report_free(&rep);
        km_problem_free(P);
        km_params_free(par);
        km_cli_check_stdout();
        return 0;
    }
    if (folds) {
        double value;
        if (km_method_cv_score(m, P, par, folds, metric, &value, &rep, &err))
            km_cli_die(err.code, "%s", err.msg);
        if (!quiet)
            km_cli_print_warnings(&rep);
        fputs(rep.text ? rep.text : "", stdout);
        km_report_free(&rep);
        km_problem_free(P);
        km_params_free(par);
        km_cli_check_stdout();
        return 0;
    }
    km_model *model = NULL;
    if (km_method_train(m, P, par, &model, &rep, &err))
        km_cli_die(err.code, "%s", err.msg);
    double t_train = km_cli_now();
    if (!quiet) {
        km_cli_print_warnings(&rep);
        fputs(rep.text ? rep.text : "", stdout);
        printf("time = %.3f s (read %.3f s, train %.3f s)\n", t_train - t0, t_read - t0,
               t_train - t_read);
    }
    km_report_free(&rep);
    km_problem_free(P);
    km_params_free(par);
    char *model_path = km_cli_model_path(args[0], nargs == 2 ? args[1] : NULL);
    if (km_model_write(model, model_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (save_liblinear && km_model_write_liblinear(model, save_liblinear, &err))
        km_cli_die(err.code, "--save-liblinear: %s", err.msg);
    if (save_libsvm && km_model_write_libsvm(model, save_libsvm, &err))
        km_cli_die(err.code, "--save-libsvm: %s", err.msg);
    km_model_free(model);
    free(model_path);
    km_cli_check_stdout();   /* the summary */
    return 0;
}
