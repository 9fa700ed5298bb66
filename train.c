/* train.c - command-line front end: svmlight data -> a model, by any method of the method
 * table (common/method.c): the losses of thesis Table 2.1 by coordinate descent, low-rank
 * output kernel learning (seed 001), multi-task learning (thesis ch. 5), ... */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "method.h"
#include "metrics.h"
#include "model.h"
#include "search.h"
#include "svmlight.h"

void openblas_set_num_threads(int);

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

typedef struct progress {
    double start, last;
    pthread_mutex_t lock;   /* cross-validation folds report from several threads */
} progress;

/* Prints a progress line on stderr at most once a second. */
static void on_progress(void *user, const char *line)
{
    progress *p = user;
    pthread_mutex_lock(&p->lock);
    double t = km_cli_now();
    if (t - p->last >= 1) {
        p->last = t;
        fprintf(stderr, "%s (%.1f s)\n", line, t - p->start);
    }
    pthread_mutex_unlock(&p->lock);
}

/* Cross-validation names at most this many problems that stopped at the cap. */
#define MAX_WARNINGS 12

static void print_warnings(const km_report *rep)
{
    for (int w = 0; w < rep->nr_warnings && w < MAX_WARNINGS; w++)
        km_cli_warn("%s", rep->warnings[w]);
    if (rep->nr_warnings > MAX_WARNINGS)
        km_cli_warn("%d warnings in all (folds x classes)", rep->nr_warnings);
}

int main(int argc, char **argv)
{
    km_cli_init("train");
    km_error err = {0};
    km_params *par = km_params_new();
    if (!par)
        km_cli_die(3, "out of memory");
    const char *method_name = DEFAULT_METHOD, *args[2] = {0}, *save_liblinear = NULL;
    const char *save_libsvm = NULL;
    const char *metric = NULL, *grid = NULL, *grid_plot = NULL;
    int search_C = 0;
    int quiet = 0, folds = 0, help = 0, nargs = 0, have_s = 0;
    size_t max_line = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (km_cli_die(1, "option %s needs a value", a), ""))
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help = 1;
        } else if (strcmp(a, "-s") == 0) {
            method_name = NEXT();
            have_s = 1;
        } else if (strcmp(a, "-v") == 0) {
            folds = (int)km_cli_integer(a, NEXT(), 2, 1000000);
        } else if (strcmp(a, "--metric") == 0) {
            metric = NEXT();
        } else if (strcmp(a, "-C") == 0) {
            search_C = 1;
        } else if (strcmp(a, "--grid") == 0) {
            grid = NEXT();
        } else if (strcmp(a, "--grid-plot") == 0) {
            grid_plot = NEXT();
        } else if (strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--max-line") == 0) {
            max_line = (size_t)km_cli_size(a, NEXT());
        } else if (strcmp(a, "--save-liblinear") == 0) {
            save_liblinear = NEXT();
        } else if (strcmp(a, "--save-libsvm") == 0) {
            save_libsvm = NEXT();
        } else if (strncmp(a, "-w", 2) == 0 && a[2]) {   /* -wLABEL W */
            char v[256];
            snprintf(v, sizeof v, "%s:%s", a + 2, NEXT());
            if (km_params_set(par, "weight", v, &err))
                km_cli_die(err.code, "%s", err.msg);
        } else if (a[0] == '-' && a[1]) {
            const km_option *o = km_option_find(a);
            if (!o)
                km_cli_die(1, "unknown option '%s'", a);
            const char *v = o->type == KM_OPT_SWITCH ? "" : NEXT();
            if (strcmp(a, "--alpha") == 0 && (strcmp(v, "trace") == 0 ||
                                              strcmp(v, "norm2") == 0)) {
                km_cli_warn("--alpha %s is deprecated: use --fp-step %s (--alpha is mtl's "
                            "weight of K)", v, v);
                a = "--fp-step";
            }
            if (km_params_set(par, a, v, &err))
                km_cli_die(err.code, "%s", err.msg);
        } else {
            if (nargs == 2)
                km_cli_die(1, "too many arguments");
            args[nargs++] = a;
        }
#undef NEXT
    }
    const km_method *m = km_method_find(method_name);
    if (!m) {
        char names[512] = "";
        for (int i = 0; i < km_method_count(); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     km_method_name(km_method_at(i)));
        km_cli_die(1, "-s: unknown method '%s' (%s)", method_name, names);
    }
    if (help) {   /* train -h: everything; train -s NAME -h: the method's options */
        char *h = have_s ? km_method_help(m) : NULL;
        if (have_s)
            fputs(h ? h : "", stdout);
        else
            usage();
        free(h);
        km_params_free(par);
        return 0;
    }
    if (km_method_check(m, par, &err))   /* before the count: "-c FILE" says what is wrong */
        km_cli_die(err.code, "%s", err.msg);
    if (nargs < 1)
        km_cli_die(1, "no data file given");
    if (folds && m->no_cv)
        km_cli_die(1, "-v does not apply to -s %s (%s)", m->name, m->no_cv);
    if (search_C && grid)
        km_cli_die(1, "-C and --grid: one search at a time");
    if (grid_plot && !grid)
        km_cli_die(1, "--grid-plot needs --grid");
    int search = search_C || grid;
    if (search && !folds)
        folds = 5;
    if (search && nargs == 2)
        km_cli_die(1, "%s reports and writes no model (train again with the best values)",
                   grid ? "--grid" : "-C");
    if (metric && !folds)
        km_cli_die(1, "--metric needs -v");
    if (km_metric_check(m, metric, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (!folds && !search)
        km_cli_check_model_path(args[0], nargs == 2 ? args[1] : NULL);
    openblas_set_num_threads(1);   /* the solvers thread by themselves (OpenBLAS's idle
                                      threads spin-yield after every call) */
    double t0 = km_cli_now();
    progress prog = {t0, t0, PTHREAD_MUTEX_INITIALIZER};
    if (!quiet)
        km_params_progress(par, on_progress, &prog);
    km_problem *P = NULL;
    if (km_svmlight_read_params(par, args[0], max_line, &P, &err))
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
            print_warnings(&rep);
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
            print_warnings(&rep);
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
        print_warnings(&rep);
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
