/* table43.c - the protocol of Tables 4.3 and 4.4 of Dinuzzo's thesis (section 4.5.2) on one
 * dataset: RLS2 with the paper's basis kernels along a path of 30 lambdas in [1e-6, 1e6],
 * on R random training/test splits, kernels computed once, transductive trace scaling.
 *
 *   table43 [options] FILE
 *
 * Per split and lambda it records the test metric (accuracy % or RMSE), the number of
 * selected kernels, the iterations of Algorithm 3 and the solver's seconds; per split the
 * wall and thread-CPU time of the whole path (km_rls2_run: slicing the bank, the 30 lambdas,
 * the test predictions). lambda* is the lambda with the best AVERAGE test metric over
 * the splits (ties: the larger lambda), as the thesis' "in correspondence with the best
 * value of lambda" (the dotted line of Figures 4.4-4.8). The summary line gives mean(sd)
 * over splits of: the test metric and the selected kernels at lambda* (Tables 4.3, 4.4),
 * the iterations and the seconds of a whole path (Table 4.4).
 *
 * Scaling: every split's training + test rows are the whole dataset, so the transductive
 * trace scales (4.14) are the same for every split: computed once over all rows and passed
 * to km_rls2_run as setup.scales. Splits run in parallel (-n threads, one path per thread,
 * each single-threaded); the results do not depend on -n: split r draws its rows from its
 * own generator seeded by (--seed, r) (xoshiro256** of common/rng.h seeded with
 * seed * 0x9E3779B97F4A7C15 + r, Fisher-Yates over the rows, the first round(F l) train;
 * bench/rls2/rls2_numpy.py draws the same splits). --first K runs splits K.. (one split
 * alone: -r 1 --first K).
 *
 * MPI mode (issue 17): `make mpi` also builds bench/rls2/table43-mpi from this file
 * (KM_TABLE43_MPI; `mpirun -np P table43-mpi [options] FILE`, bench/rls2/table43.sh with
 * MPI=P). Every rank reads the file and builds the bank; split r runs on rank r mod P (-n
 * threads there); the per-split results are gathered to rank 0 (common/dist.h), which
 * prints and writes: every result (the summary's metrics, kernels, iterations, lambda*;
 * the curves, the per-split table, the figure) is the serial driver's, byte for byte, for
 * every P; only the timings differ (they are measured where the paths ran).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "atomic.h"
#include "blas.h"
#include "cli.h"
#include "dist.h"
#include "plot.h"
#include "rls2path.h"
#include "rng.h"
#include "svmlight.h"
#ifdef KM_TABLE43_MPI
#include <unistd.h>

#include "dist_mpi.h"
static int dist_done;
#define DIST_DONE() (dist_done = 1, km_dist_mpi_finalize())
/* An error exit (km_cli_die) happens on every rank at once; the ranks that do not print wait
 * so that rank 0 reports it before mpirun stops the job at the first non-zero exit. */
static void rank_exit(void)
{
    if (!dist_done)
        sleep(10);
}
#else
#define DIST_DONE() ((void)0)
#endif

static const char usage[] =
    "Usage: table43 [options] FILE\n"
    "Thesis Tables 4.3/4.4 protocol on one svmlight file: RLS2 paths (paper basis set,\n"
    "transductive trace scaling, no cross-validation) on R random training/test splits.\n"
    "options:\n"
    "  --task T           class (labels +-1, accuracy) or reg (RMSE); default: class when\n"
    "                     every label is +1 or -1\n"
    "  --standardize      features to zero mean, unit sample sd over all rows\n"
    "  --drop-constant    remove features constant over all rows (before the basis set)\n"
    "  --train-fraction F training share of each split (default 0.7)\n"
    "  -r R               splits (default 100)\n"
    "  --seed N           seed of the splits (default 1)\n"
    "  --first K          run splits K .. K+R-1 (default 0; split r is the same whatever\n"
    "                     K, R and -n: to rerun one split alone)\n"
    "  -L MIN:MAX:N       lambdas (default 1e-6:1e6:30)\n"
    "  -e delta           stopping tolerance of Algorithm 3 (default 1e-2)\n"
    "  --smo-eps EPS      tolerance of the d-step (default 0: the library's, delta * 1e-4)\n"
    "  -n threads         splits run in parallel (default 2)\n"
    "  --blas-threads N   OpenBLAS threads inside each path (default 1)\n"
    "  --name NAME        dataset name in the summary (default: the file's base name)\n"
    "  -o FILE            per-lambda means and sds over splits as CSV\n"
    "  --raw FILE         per split and lambda: test, kernels, iterations, seconds (CSV)\n"
    "  --plot FILE        SVG: mean test metric, kernels, iterations vs lambda\n"
    "  -q                 no progress on stderr\n"
    "Prints one summary line of key=value fields (see bench/rls2/table43.sh).\n";

/* CPU seconds of the calling thread (a path runs in one thread: robust to a busy machine). */
static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --task default: every label +-1. */
static int labels_pm1(const km_problem *P)
{
    for (int64_t i = 0; i < P->l; i++)
        if (P->y[i] != 1 && P->y[i] != -1)
            return 0;
    return 1;
}

/* A dense copy of P (exact zeros omitted): features constant over all rows removed when
 * drop (the others renumbered in order), then standardized (x - mean) / sd with the sample
 * sd when standardize (a constant feature that is kept becomes 0). *nconst gets the number
 * of constant features. */
static km_problem *preprocess(const km_problem *P, int standardize, int drop, int *nconst)
{
    int32_t n = P->n;
    int64_t l = P->l;
    double *X = calloc((size_t)l * (size_t)(n > 0 ? n : 1), sizeof *X);
    double *mean = calloc((size_t)(n > 0 ? n : 1), sizeof *mean);
    double *sd = calloc((size_t)(n > 0 ? n : 1), sizeof *sd);
    int32_t *newj = malloc((size_t)(n > 0 ? n : 1) * sizeof *newj);
    km_problem *Q = calloc(1, sizeof *Q);
    if (!X || !mean || !sd || !newj || !Q)
        km_cli_die(3, "out of memory");
    for (int64_t i = 0; i < l; i++)
        for (int64_t p = P->row_ptr[i]; p < P->row_ptr[i + 1]; p++)
            X[(size_t)i * (size_t)n + (size_t)P->index[p]] = P->value[p];
    int32_t nn = 0;
    *nconst = 0;
    for (int32_t j = 0; j < n; j++) {
        int constant = 1;
        double s = 0;
        for (int64_t i = 0; i < l; i++) {
            s += X[(size_t)i * (size_t)n + (size_t)j];
            constant &= X[(size_t)i * (size_t)n + (size_t)j] == X[j];
        }
        mean[j] = s / (double)l;
        double v = 0;
        for (int64_t i = 0; i < l; i++) {
            double e = X[(size_t)i * (size_t)n + (size_t)j] - mean[j];
            v += e * e;
        }
        sd[j] = l > 1 ? sqrt(v / (double)(l - 1)) : 0;
        *nconst += constant;
        newj[j] = drop && constant ? -1 : nn++;
    }
    Q->l = l;
    Q->n = nn;
    Q->row_ptr = malloc((size_t)(l + 1) * sizeof *Q->row_ptr);
    Q->index = malloc((size_t)(l * nn > 0 ? l * nn : 1) * sizeof *Q->index);
    Q->value = malloc((size_t)(l * nn > 0 ? l * nn : 1) * sizeof *Q->value);
    Q->y = malloc((size_t)(l > 0 ? l : 1) * sizeof *Q->y);
    if (!Q->row_ptr || !Q->index || !Q->value || !Q->y)
        km_cli_die(3, "out of memory");
    int64_t q = 0;
    for (int64_t i = 0; i < l; i++) {
        Q->row_ptr[i] = q;
        Q->y[i] = P->y[i];
        for (int32_t j = 0; j < n; j++) {
            if (newj[j] < 0)
                continue;
            double x = X[(size_t)i * (size_t)n + (size_t)j];
            if (standardize)
                x = sd[j] > 0 ? (x - mean[j]) / sd[j] : 0;
            if (x != 0) {
                Q->index[q] = newj[j];
                Q->value[q++] = x;
            }
        }
    }
    Q->row_ptr[l] = q;
    Q->nnz = q;
    free(X);
    free(mean);
    free(sd);
    free(newj);
    return Q;
}

/* Mean and sample sd of x[0], x[stride], ... (n values). */
static void mean_sd(const double *x, int n, size_t stride, double *mean, double *sd)
{
    double s = 0, v = 0;
    for (int r = 0; r < n; r++)
        s += x[(size_t)r * stride];
    s /= n;
    for (int r = 0; r < n; r++) {
        double e = x[(size_t)r * stride] - s;
        v += e * e;
    }
    *mean = s;
    *sd = n > 1 ? sqrt(v / (n - 1)) : 0;
}

typedef struct results {
    int R, nl, classification, best, first; /* splits first .. first + R - 1 */
    const double *lambda;
    double *test, *kern, *iter, *secs; /* [r * nl + t] */
    double *path_secs, *path_cpu, *path_iter; /* [r] */
} results;

static int write_curves(FILE *f, const void *ctx)
{
    const results *S = ctx;
    const char *mt = S->classification ? "accuracy" : "rmse";
    fprintf(f, "lambda,%s_mean,%s_sd,kernels_mean,kernels_sd,iterations_mean,iterations_sd,"
            "seconds_mean,best\n", mt, mt);
    for (int t = 0; t < S->nl; t++) {
        double a, as, k, ks, it, is, sc, scs;
        mean_sd(S->test + t, S->R, (size_t)S->nl, &a, &as);
        mean_sd(S->kern + t, S->R, (size_t)S->nl, &k, &ks);
        mean_sd(S->iter + t, S->R, (size_t)S->nl, &it, &is);
        mean_sd(S->secs + t, S->R, (size_t)S->nl, &sc, &scs);
        fprintf(f, "%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.6g,%d\n", S->lambda[t], a, as,
                k, ks, it, is, sc, t == S->best);
    }
    return 0;
}

static int write_raw(FILE *f, const void *ctx)
{
    const results *S = ctx;
    fprintf(f, "split,lambda,%s,kernels,iterations,seconds\n",
            S->classification ? "accuracy" : "rmse");
    for (int r = 0; r < S->R; r++)
        for (int t = 0; t < S->nl; t++) {
            size_t i = (size_t)r * (size_t)S->nl + (size_t)t;
            fprintf(f, "%d,%.10g,%.10g,%.0f,%.0f,%.6g\n", S->first + r, S->lambda[t], S->test[i],
                    S->kern[i], S->iter[i], S->secs[i]);
        }
    return 0;
}

static void plot_curves(const results *S, const char *name, const char *path)
{
    int n = S->nl;
    double *v = malloc((size_t)n * 9 * sizeof *v);
    if (!v)
        km_cli_die(3, "out of memory");
    double *a = v, *alo = a + n, *ahi = alo + n, *k = ahi + n, *klo = k + n, *khi = klo + n,
           *it = khi + n, *ilo = it + n, *ihi = ilo + n;
    for (int t = 0; t < n; t++) {
        double m, s;
        mean_sd(S->test + t, S->R, (size_t)n, &m, &s);
        a[t] = m, alo[t] = m - s, ahi[t] = m + s;
        mean_sd(S->kern + t, S->R, (size_t)n, &m, &s);
        k[t] = m, klo[t] = m - s, khi[t] = m + s;
        mean_sd(S->iter + t, S->R, (size_t)n, &m, &s);
        it[t] = m, ilo[t] = m - s, ihi[t] = m + s;
    }
    char title[256];
    snprintf(title, sizeof title, "%s: RLS2 path, mean +- sd over %d splits", name, S->R);
    km_plot_series as = {"test (mean +- sd)", a, alo, ahi};
    km_plot_series ks = {"kernels (mean +- sd)", k, klo, khi};
    km_plot_series is = {"iterations (mean +- sd)", it, ilo, ihi};
    double mark = S->lambda[S->best];
    km_plot_panel panels[3] = {
        {S->classification ? "Test accuracy" : "Test RMSE",
         S->classification ? "accuracy (%)" : "RMSE", 0, &as, 1, mark},
        {"Selected kernels", "kernels with d_k > 0", 0, &ks, 1, mark},
        {"Iterations of Algorithm 3", "iterations", 0, &is, 1, mark},
    };
    km_plot fig = {title, "lambda", 1, S->lambda, n, panels, 3};
    km_error err = {0};
    if (km_plot_svg(&fig, path, &err))
        km_cli_die(err.code, "%s", err.msg);
    free(v);
}

/* Split r's results (its nl tests, kernels, iterations, seconds, then the path's seconds,
 * CPU seconds and iterations) put into out at *pos, or (out NULL) got from in. */
static void split_bytes(results *S, int r, void *out, const void *in, int64_t *pos)
{
    size_t o = (size_t)r * (size_t)S->nl;
    int64_t row = 8 * (int64_t)S->nl;
    struct { double *x; int64_t bytes; } f[] = {
        {S->test + o, row}, {S->kern + o, row}, {S->iter + o, row}, {S->secs + o, row},
        {&S->path_secs[r], 8}, {&S->path_cpu[r], 8}, {&S->path_iter[r], 8}};
    for (size_t k = 0; k < sizeof f / sizeof *f; k++) {
        if (out)
            km_dist_put(out, pos, f[k].x, f[k].bytes);
        else
            km_dist_get(in, pos, f[k].x, f[k].bytes);
    }
}

/* MPI mode: the results of rank q's splits (q, q + P, ...) to rank 0, and the capped
 * count summed. Per split: its nl tests, kernels, iterations, seconds, then the path's
 * seconds, CPU seconds and iterations (doubles, as computed). Collective. */
static int gather_results(km_dist *d, results *S, int *capped, km_error *err)
{
    int P = d->size, q = d->rank, R = S->R, nl = S->nl;
    int64_t per = 8 * (4 * (int64_t)nl + 3), c = *capped;
    int64_t mine = (R > q ? (R - q + P - 1) / P : 0) * per;
    int64_t *rb = malloc((size_t)P * 2 * sizeof *rb);
    double *send = malloc((size_t)(mine > 0 ? mine : 8)), *recv = NULL;
    int rc = rb && send ? KM_OK : km_error_nomem(err, "results");
    if ((rc = km_dist_agree(d, rc, err)) == KM_OK && q == 0 &&
        !(recv = malloc((size_t)R * (size_t)per)))
        rc = km_error_nomem(err, "results");
    if ((rc = km_dist_agree(d, rc, err)) == KM_OK)
        rc = km_dist_allreduce_i64(d, &c, 1, KM_DIST_SUM, err);
    if (rc == KM_OK)
        rc = km_dist_allgather_count(d, mine, rb, err);
    if (rc == KM_OK) {
        int64_t pos = 0, total = 0;
        for (int r = q; r < R; r += P)
            split_bytes(S, r, send, NULL, &pos);
        for (int r = 0; r < P; r++) {
            rb[P + r] = total;
            total += rb[r];
        }
        rc = km_dist_gatherv(d, send, mine, recv, rb, rb + P, err);
    }
    if (rc == KM_OK && q == 0) {   /* rank r's block: its splits in order */
        for (int r = 0; r < P; r++) {
            int64_t pos = rb[P + r];
            for (int t = r; t < R; t += P)
                split_bytes(S, t, NULL, recv, &pos);
        }
        *capped = (int)c;
    }
    free(rb);
    free(send);
    free(recv);
    return rc;
}

int main(int argc, char **argv)
{
    km_cli_init("table43");
    km_dist D;   /* the splits' ranks: one (serial), or MPI's in table43-mpi */
    km_dist_serial(&D);
#ifdef KM_TABLE43_MPI
    km_cli_init("table43-mpi");
    km_dist_mpi_init(&argc, &argv, &D);
    if (D.rank != 0 &&   /* only rank 0 prints */
        (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr) ||
         atexit(rank_exit)))
        km_dist_mpi_abort(3);
#endif
    int task = -1, standardize = 0, drop = 0, R = 100, nl = 30, threads = 2, blas = 1,
        quiet = 0, first_split = 0;
    double frac = 0.7, lmin = 1e-6, lmax = 1e6, delta = 1e-2, smo_eps = 0;
    uint64_t seed = 1;
    const char *file = NULL, *name = NULL, *csv = NULL, *raw = NULL, *svg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() km_cli_value(argc, argv, &i)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            DIST_DONE();
            return 0;
        } else if (!strcmp(a, "--task")) {
            const char *s = NEXT();
            if (strcmp(s, "class") && strcmp(s, "reg"))
                km_cli_die(1, "--task: expected class or reg, got '%s'", s);
            task = !strcmp(s, "class");
        } else if (!strcmp(a, "--standardize")) {
            standardize = 1;
        } else if (!strcmp(a, "--drop-constant")) {
            drop = 1;
        } else if (!strcmp(a, "--train-fraction")) {
            frac = km_cli_number(a, NEXT());
            if (!(frac > 0 && frac < 1))
                km_cli_die(1, "--train-fraction: expected a number in (0, 1)");
        } else if (!strcmp(a, "-r")) {
            R = (int)km_cli_integer(a, NEXT(), 1, 1000000);
        } else if (!strcmp(a, "--seed")) {
            seed = (uint64_t)km_cli_integer(a, NEXT(), 0, INT64_MAX);
        } else if (!strcmp(a, "--first")) {
            first_split = (int)km_cli_integer(a, NEXT(), 0, 1000000000);
        } else if (!strcmp(a, "-L")) {
            km_cli_range(a, NEXT(), &lmin, &lmax, &nl);
        } else if (!strcmp(a, "-e")) {
            delta = km_cli_number(a, NEXT());
            if (!(delta > 0))
                km_cli_die(1, "-e: the stopping tolerance must be > 0");
        } else if (!strcmp(a, "--smo-eps")) {
            smo_eps = km_cli_number(a, NEXT());
            if (!(smo_eps >= 0))
                km_cli_die(1, "--smo-eps: expected a number >= 0");
        } else if (!strcmp(a, "-n")) {
            threads = (int)km_cli_integer(a, NEXT(), 1, 1024);
        } else if (!strcmp(a, "--blas-threads")) {
            blas = (int)km_cli_integer(a, NEXT(), 1, 1024);
        } else if (!strcmp(a, "--name")) {
            name = NEXT();
        } else if (!strcmp(a, "-o")) {
            csv = NEXT();
        } else if (!strcmp(a, "--raw")) {
            raw = NEXT();
        } else if (!strcmp(a, "--plot")) {
            svg = NEXT();
        } else if (!strcmp(a, "-q")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else {
            if (file)
                km_cli_die(1, "too many arguments");
            file = a;
        }
#undef NEXT
    }
    if (!file)
        km_cli_die(1, "no data file given");
    if (!name) {
        const char *b = strrchr(file, '/');
        name = b ? b + 1 : file;
    }
    km_blas_threads(blas);

    /* data, basis set, the one kernel bank, the scales */
    double t0 = km_cli_now();
    km_error err = {0};
    km_problem *P0 = NULL;
    if (km_svmlight_read(file, &P0, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (task < 0)
        task = labels_pm1(P0);
    if (task && !labels_pm1(P0))
        km_cli_die(2, "%s: --task class needs labels +1 and -1", file);
    int nconst;
    km_problem *X = preprocess(P0, standardize, drop, &nconst);
    int32_t nfeat_file = P0->n;
    km_problem_free(P0);
    double t_read = km_cli_now();
    km_basis_set basis = {0};
    if (km_basis_paper(X->n, &basis, &err))
        km_cli_die(err.code, "%s", err.msg);
    km_kbank *bank = km_kbank_new(X, &basis, threads, &err);
    if (!bank)
        km_cli_die(err.code, "%s", err.msg);
    int m = basis.m;
    double *scales = malloc((size_t)m * sizeof *scales);
    if (!scales)
        km_cli_die(3, "out of memory");
    int zero = 0;
    if (km_kbank_scales(bank, KM_SCALE_TRACE, 0, NULL, X->l, NULL, scales, &zero, &err))
        km_cli_die(err.code, "%s", err.msg);
    double t_bank = km_cli_now();
    if (!quiet && zero)
        km_cli_warn("%s: %d basis kernels have trace 0 and are left out", name, zero);

    int64_t l = X->l, ntrain = (int64_t)floor(frac * (double)l + 0.5);
    if (ntrain < 1 || ntrain >= l)
        km_cli_die(1, "--train-fraction %g leaves no training or no test rows of %lld", frac,
                   (long long)l);
    double *lambda = malloc((size_t)nl * sizeof *lambda);
    results S = {R, nl, task, 0, first_split, lambda, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t cells = (size_t)R * (size_t)nl;
    S.test = malloc(cells * sizeof *S.test);
    S.kern = malloc(cells * sizeof *S.kern);
    S.iter = malloc(cells * sizeof *S.iter);
    S.secs = malloc(cells * sizeof *S.secs);
    S.path_secs = malloc((size_t)R * sizeof *S.path_secs);
    S.path_cpu = malloc((size_t)R * sizeof *S.path_cpu);
    S.path_iter = malloc((size_t)R * sizeof *S.path_iter);
    if (!lambda || !S.test || !S.kern || !S.iter || !S.secs || !S.path_secs || !S.path_cpu ||
        !S.path_iter)
        km_cli_die(3, "out of memory");
    km_rls2_lambdas(lmin, lmax, nl, lambda);

    km_rls2_setup setup = {0};
    km_rls2_param_default(&setup.solver);
    setup.solver.delta = delta;
    if (smo_eps > 0)
        setup.solver.smo_eps = smo_eps;
    setup.solver.threads = 1;
    setup.scale = KM_SCALE_TRACE;
    setup.transductive = 1;
    setup.scales = scales;
    setup.lambda = lambda;
    setup.nl = nl;
    setup.folds = 0;
    setup.dof = 0;

    int failed = 0, done = 0, capped = 0;
    km_error first = {0};
    double t_paths = km_cli_now(), last = t_paths;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int r = 0; r < R; r++) {
        if (failed || r % D.size != D.rank)   /* MPI mode: split r on rank r mod P */
            continue;
        int64_t *perm = malloc((size_t)l * sizeof *perm);
        char *in = calloc((size_t)l, 1);
        km_error e = {0};
        int rc = KM_OK;
        if (!perm || !in) {
            rc = km_error_nomem(&e, "split");
        } else {
            km_rng rng;
            km_rng_seed(&rng, seed * 0x9E3779B97F4A7C15ull + (uint64_t)(first_split + r));
            for (int64_t i = 0; i < l; i++)
                perm[i] = i;
            km_rng_shuffle(&rng, perm, l);
            for (int64_t i = 0; i < ntrain; i++)
                in[perm[i]] = 1;
            int64_t a = 0, b = ntrain; /* training rows, then test rows, each ascending */
            for (int64_t i = 0; i < l; i++)
                perm[in[i] ? a++ : b++] = i;
            km_rls2_task T = {bank, X->y, perm, ntrain, perm + ntrain, l - ntrain, task};
            km_rls2_path path;
            double c0 = thread_cpu(), p0 = km_cli_now();
            rc = km_rls2_run(&T, &setup, &path, &e);
            double p1 = km_cli_now(), c1 = thread_cpu();
            if (rc == KM_OK) {
                int its = 0, cap = 0;
                for (int t = 0; t < nl; t++) {
                    size_t i = (size_t)r * (size_t)nl + (size_t)t;
                    S.test[i] = path.row[t].test;
                    S.kern[i] = path.row[t].kernels;
                    S.iter[i] = path.row[t].iter;
                    S.secs[i] = path.row[t].seconds;
                    its += path.row[t].iter;
                    cap += !path.row[t].converged;
                }
                S.path_secs[r] = p1 - p0;
                S.path_cpu[r] = c1 - c0;
                S.path_iter[r] = its;
                km_rls2_path_free(&path);
#pragma omp atomic
                capped += cap;
            }
        }
        free(perm);
        free(in);
#pragma omp critical(table43_progress)
        {
            if (rc != KM_OK) {
                if (!failed++)
                    first = e;
            } else {
                done++;
                double t = km_cli_now();
                int here = R > D.rank ? (R - D.rank + D.size - 1) / D.size : 0;
                if (!quiet && (t - last >= 5 || done == here)) {
                    last = t;
                    fprintf(stderr, "  %s: %d/%d splits%s, %.1f s\n", name, done, here,
                            D.size > 1 ? " on rank 0" : "", t - t_paths);
                }
            }
        }
    }
    if (D.size > 1) {   /* the lowest failing rank's error on every rank; results to rank 0 */
        int rc = km_dist_agree(&D, failed ? (first.code ? first.code : KM_EINTERNAL) : KM_OK,
                               &first);
        if (rc == KM_OK)
            rc = gather_results(&D, &S, &capped, &first);
        failed = rc != KM_OK;
        if (rc && !first.code)
            first.code = rc;
    }
    if (failed)
        km_cli_die(first.code, "%s", first.msg);
    double t_end = km_cli_now();
    if (capped)
        km_cli_warn("%s: %d paths x lambdas stopped at the iteration cap", name, capped);
    if (D.rank != 0)   /* MPI mode: rank 0 reports and writes */
        goto done;

    /* lambda*: best mean test metric (ties: the larger lambda) */
    int sign = task ? 1 : -1;
    double best_mean = 0;
    for (int t = 0; t < nl; t++) {
        double mu, sd;
        mean_sd(S.test + t, R, (size_t)nl, &mu, &sd);
        if (t == 0 || sign * mu > sign * best_mean) {
            best_mean = mu;
            S.best = t;
        }
    }
    double tm, ts, km, ks, im, is, sm, ss, cm, cs;
    mean_sd(S.test + S.best, R, (size_t)nl, &tm, &ts);
    mean_sd(S.kern + S.best, R, (size_t)nl, &km, &ks);
    mean_sd(S.path_iter, R, 1, &im, &is);
    mean_sd(S.path_secs, R, 1, &sm, &ss);
    mean_sd(S.path_cpu, R, 1, &cm, &cs);
    double solver = 0;
    char ranks[32] = "";   /* MPI mode: the number of ranks (the serial line has no field) */
    if (D.size > 1)
        snprintf(ranks, sizeof ranks, " ranks=%d", D.size);
    for (size_t i = 0; i < cells; i++)
        solver += S.secs[i];
    printf("dataset=%s task=%s ratio=%.0f/%.0f splits=%d rows=%lld train=%lld features=%d "
           "file_features=%d constant=%d m=%d metric=%s test_mean=%.4g test_sd=%.3g "
           "kernels_mean=%.3g kernels_sd=%.3g iter_mean=%.4g iter_sd=%.3g path_s_mean=%.4g "
           "path_s_sd=%.3g path_cpu_mean=%.4g path_cpu_sd=%.3g solver_s_mean=%.4g lambda_best=%.4g bank_s=%.4f read_s=%.4f "
           "paths_wall_s=%.3f total_s=%.3f threads=%d%s\n",
           name, task ? "class" : "reg", 100 * frac, 100 * (1 - frac), R, (long long)l,
           (long long)ntrain, (int)X->n, (int)nfeat_file, nconst, m, task ? "acc" : "rmse", tm,
           ts, km, ks, im, is, sm, ss, cm, cs, solver / R, lambda[S.best], t_bank - t_read,
           t_read - t0, t_end - t_paths, t_end - t0, threads, ranks);
    if (csv && km_write_atomic(csv, "curves", write_curves, &S, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (raw && km_write_atomic(raw, "per-split table", write_raw, &S, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (svg)
        plot_curves(&S, name, svg);
done:

    free(S.test);
    free(S.kern);
    free(S.iter);
    free(S.secs);
    free(S.path_secs);
    free(S.path_cpu);
    free(S.path_iter);
    free(lambda);
    free(scales);
    km_kbank_free(bank);
    km_basis_set_free(&basis);
    km_problem_free(X);
    DIST_DONE();
    return 0;
}
