/* train-mpi.c - train on R ranks (issue 17): `mpirun -np R train-mpi [train options] data
 * [model]`. Without --cocoa every rank reads the data and the independent problems are
 * spread over ranks (the -v folds, the one-versus-all classes; km_dist_tasks_run): the output
 * is train's, byte for byte, for every R. With --cocoa the rows are read in byte ranges,
 * spread by hash and the linear solver runs as CoCoA+ (cocoa.h). --simulate R runs R ranks as
 * threads of one process (dist.h's simulation; no mpirun). Only rank 0 prints and writes the
 * model. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas.h"
#include "cli.h"
#include "cocoa.h"
#include "dist.h"
#include "dist_mpi.h"
#include "method.h"
#include "metrics.h"
#include "search.h"
#include "svmlight.h"


typedef struct opts {
    km_cli_train t;                /* train's options (cli.h) */
    int cocoa, comm_stats;
    km_partition part;
} opts;

static void usage(void)
{
    printf("Usage: mpirun -np R train-mpi [options] data_file [model_file]\n"
           "       train-mpi --simulate R [options] data_file [model_file]\n"
           "train on R ranks: the options of train (train -h), and\n"
           "  --cocoa            the linear solver as CoCoA+ over the ranks' rows (-s l1svm, "
           "l2svm, rls,\n"
           "                     rla, svr; stops on the global relative duality gap -e)\n"
           "  --partition hash|bytes  --cocoa: rows to ranks by a hash of (seed, line) "
           "(default) or\n"
           "                     as read (the lines that start in each rank's byte range)\n"
           "  --comm-stats       print each rank's collectives and bytes (stderr)\n"
           "  --simulate R       R ranks as threads of this process (no MPI)\n"
           "  -C, --grid SPEC, --grid-plot FILE, --metric M  as train's, spread over ranks\n"
           "Without --cocoa every rank reads the data; -v folds, one-versus-all classes and "
           "the searches\n(-C: each C's folds; --grid: the gamma columns, or each point's "
           "folds when there are\nfewer columns than ranks) run on the ranks; the output is "
           "train's for every R.\n");
}

/* One rank's work; rank 0 prints. Returns an exit status (0, 2 input, 3 internal...) with
 * the error printed by rank 0. */
static int job(km_dist *d, void *arg)
{
    const opts *mo = arg;
    const km_cli_train *o = &mo->t;
    int root = d->rank == 0;
    km_error err = {0};
    km_params *par = km_params_copy(o->par, &err);   /* km_params_use writes to it */
    km_problem *P = NULL, *S = NULL;
    int64_t *line = NULL;
    km_report rep = {0};
    km_model *model = NULL;
    double *pred = NULL;
    km_cli_progress prog = {km_cli_now(), km_cli_now(), PTHREAD_MUTEX_INITIALIZER};
    int rc = par ? KM_OK : KM_EINTERNAL;
    /* the method's own output files (KM_OPT_OUTPUT options: a path table) are rank 0's; the
     * other ranks, which train the same, write theirs apart and remove them */
    enum { MAX_OUT = 8 };
    char scratch[MAX_OUT][4200];
    int nscratch = 0;
    for (int k = 0; rc == KM_OK && d->rank != 0 && o->m->options[k]; k++) {
        const km_option *opt = o->m->options[k];
        if (opt->type != KM_OPT_OUTPUT || !km_param_is_set(par, opt->name))
            continue;
        if (nscratch == MAX_OUT) {
            rc = km_error_set(&err, KM_EINTERNAL, "more than %d output options", MAX_OUT);
            break;
        }
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch[nscratch], sizeof scratch[nscratch], "%s/kmtk-train-mpi.%ld.%d.%d",
                 tmp && *tmp ? tmp : "/tmp", (long)getpid(), d->rank, k);
        rc = km_params_set(par, opt->name, scratch[nscratch++], &err);
    }
    rc = km_dist_agree(d, rc, &err);
    if (rc)
        goto out;
    if (root && !o->quiet)
        km_params_progress(par, km_cli_on_progress, &prog);
    km_dist *old = km_dist_tasks_use(d);
    double t0 = km_cli_now();
    if (mo->cocoa) {
        rc = km_dist_read(d, o->args[0], o->max_line, &P, &line, &err);
        if (rc == KM_OK && d->size > 1)   /* one rank: the rows in file order, as train */
            rc = km_dist_partition(d, P, line, mo->part, (uint64_t)km_param_int(par, "seed"),
                                   &S, NULL, &err);
    } else {
        rc = km_dist_read_all(d, o->args[0], o->max_line, &P, &err);
    }
    const km_problem *Q = S ? S : P;
    double t_read = km_cli_now();
    if (rc == KM_OK && (o->search_C || o->grid)) {   /* train's search, spread by the hook */
        km_search sr;
        rc = o->grid ? km_search_grid(o->m, P, par, o->folds, o->metric, o->grid, &sr, &rep, &err)
                     : km_search_C(o->m, P, par, o->folds, o->metric, &sr, &rep, &err);
        if (rc == KM_OK && root) {
            if (!o->quiet)
                km_cli_print_warnings(&rep);
            fputs(rep.text ? rep.text : "", stdout);
            if (o->grid_plot)
                rc = km_search_plot(&sr, o->metric ? o->metric : km_method_classifies(o->m)
                                                              ? "accuracy" : "mse",
                                    o->grid_plot, &err);
        }
        if (rc == KM_OK)
            km_search_free(&sr);
        rc = km_dist_agree(d, rc, &err);
    } else if (rc == KM_OK && o->metric) {   /* -v --metric: train's score line */
        double value;
        rc = km_method_cv_score(o->m, P, par, o->folds, o->metric, &value, &rep, &err);
        if (rc == KM_OK && root) {
            if (!o->quiet)
                km_cli_print_warnings(&rep);
            fputs(rep.text ? rep.text : "", stdout);
        }
    } else if (rc == KM_OK && o->folds) {
        pred = malloc((size_t)P->l * sizeof *pred);
        rc = km_dist_agree(d, pred ? KM_OK : km_error_nomem(&err, "predictions"), &err);
        if (rc == KM_OK)
            rc = km_method_cross_validate(o->m, P, par, o->folds, pred, &rep, &err);
        if (rc == KM_OK && root) {
            if (!o->quiet)
                km_cli_print_warnings(&rep);
            km_metrics mt = {0};
            for (int64_t i = 0; i < P->l; i++)
                km_metrics_add(&mt, P->y[i * km_problem_nout(P)], pred[i]);
            if (km_method_classifies(o->m)) {
                printf("Cross Validation Accuracy = %g%%\n", km_metrics_accuracy(&mt));
            } else {
                printf("Cross Validation Mean squared error = %g\n", km_metrics_mse(&mt));
                printf("Cross Validation Squared correlation coefficient = %g\n",
                       km_metrics_scc(&mt));
            }
        }
    } else if (rc == KM_OK) {
        if (mo->cocoa)
            rc = km_cocoa_train(d, o->m, Q, par, 0, &model, &rep, &err);
        else
            rc = km_method_train(o->m, P, par, &model, &rep, &err);
        double t_train = km_cli_now();
        if (rc == KM_OK && root && !o->quiet) {
            km_cli_print_warnings(&rep);
            fputs(rep.text ? rep.text : "", stdout);
            printf("time = %.3f s (read %.3f s, train %.3f s)\n", t_train - t0, t_read - t0,
                   t_train - t_read);
        }
        if (rc == KM_OK && root) {
            char *model_path = km_cli_model_path(o->args[0], o->nargs == 2 ? o->args[1] : NULL);
            rc = km_model_write(model, model_path, &err);
            free(model_path);
        }
        rc = km_dist_agree(d, rc, &err);
    }
    km_dist_tasks_use(old);
    if (mo->comm_stats) {   /* every rank's counts so far, gathered to rank 0 */
        km_dist_stats st = d->stats;
        int64_t *all = malloc((size_t)d->size * 2 * sizeof *all);
        km_error e2;
        int rc2 = km_dist_agree(d, all ? KM_OK : km_error_nomem(&e2, "stats"), &e2);
        if (rc2 == KM_OK && !km_dist_allgather_count(d, st.collectives, all, &e2) &&
            !km_dist_allgather_count(d, st.bytes, all + d->size, &e2) && root) {
            int64_t tc = 0, tb = 0;
            for (int r = 0; r < d->size; r++) {
                fprintf(stderr, "comm rank %d: %lld collectives, %lld bytes\n", r,
                        (long long)all[r], (long long)all[d->size + r]);
                tc += all[r];
                tb += all[d->size + r];
            }
            fprintf(stderr, "comm total: %d ranks, %lld collectives, %lld bytes\n", d->size,
                    (long long)tc, (long long)tb);
        }
        free(all);
    }
out:
    for (int k = 0; k < nscratch; k++)
        unlink(scratch[k]);
    if (rc && root)
        fprintf(stderr, "train-mpi: %s\n", err.msg);
    km_report_free(&rep);
    km_model_free(model);
    km_problem_free(P);
    km_problem_free(S);
    km_params_free(par);
    free(line);
    free(pred);
    return rc == KM_OK ? 0 : rc == KM_EUSAGE ? 1 : rc == KM_EINPUT ? 2 : 3;
}

/* train-mpi's own options: --cocoa, --comm-stats, --simulate R (read before MPI starts),
 * --partition hash|bytes */
static int mpi_only(void *user, int argc, char **argv, int *i)
{
    opts *o = user;
    const char *a = argv[*i];
    if (strcmp(a, "--cocoa") == 0) {
        o->cocoa = 1;
    } else if (strcmp(a, "--comm-stats") == 0) {
        o->comm_stats = 1;
    } else if (strcmp(a, "--simulate") == 0) {
        km_cli_value(argc, argv, i);
    } else if (strcmp(a, "--partition") == 0) {
        const char *v = km_cli_value(argc, argv, i);
        if (strcmp(v, "hash") != 0 && strcmp(v, "bytes") != 0)
            km_cli_die(1, "--partition: hash or bytes, not '%s'", v);
        o->part = strcmp(v, "hash") == 0 ? KM_PART_HASH : KM_PART_BYTES;
    } else {
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    km_cli_init("train-mpi");
    int simulate = 0;
    for (int i = 1; i + 1 < argc; i++)   /* before MPI: --simulate needs none */
        if (strcmp(argv[i], "--simulate") == 0)
            simulate = (int)km_cli_integer("--simulate", argv[i + 1], 1, 4096);
    km_dist d;
    if (!simulate) {
        km_dist_mpi_init(&argc, &argv, &d);
        if (d.rank != 0) {   /* only rank 0 prints */
            if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
                km_dist_mpi_abort(3);
        }
    }
    opts o = {0};
    km_cli_train_parse(argc, argv, "l2svm", &o.t, mpi_only, &o);
    if (o.t.help) {
        char *h = o.t.have_s ? km_method_help(o.t.m) : NULL;
        if (o.t.have_s)
            fputs(h ? h : "", stdout);
        else
            usage();
        free(h);
        km_params_free(o.t.par);
        if (!simulate)
            km_dist_mpi_finalize();
        return 0;
    }
    if (o.t.folds && o.cocoa)
        km_cli_die(1, "--cocoa trains one model; -v, -C and --grid spread over the ranks "
                   "without it");
    km_blas_threads(1);
    int status;
    if (simulate) {
        int *rcs = calloc((size_t)simulate, sizeof *rcs);
        if (!rcs)
            km_cli_die(3, "out of memory");
        km_error err;
        if (km_dist_sim_run(simulate, job, &o, rcs, NULL, &err))
            km_cli_die(err.code, "%s", err.msg);
        status = rcs[0];
        free(rcs);
    } else {
        status = job(&d, &o);
    }
    km_params_free(o.t.par);
    if (status == 0)
        km_cli_check_stdout();
    if (!simulate)
        km_dist_mpi_finalize();
    return status;
}
