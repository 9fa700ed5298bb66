/* search.c - see search.h. */
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "error.h"
#include "kernel.h"
#include "method.h"
#include "plot.h"

void km_search_free(km_search *s)
{
    if (!s)
        return;
    free(s->points);
    free(s->log2C);
    free(s->log2g);
    memset(s, 0, sizeof *s);
}

static const char *metric_of(const km_method *m, const char *metric)
{
    return metric ? metric : m->classification ? "accuracy" : "mse";
}

/* "CV accuracy = 84.07407407%" and the like. */
static void put_score(char *buf, size_t size, const char *metric, double v)
{
    if (strcmp(metric, "accuracy") == 0)
        snprintf(buf, size, "CV accuracy = %.10g%%", v);
    else if (strcmp(metric, "f1") == 0)
        snprintf(buf, size, "CV F1 = %.10g", v);
    else if (strcmp(metric, "auc") == 0)
        snprintf(buf, size, "CV AUC = %.10g", v);
    else
        snprintf(buf, size, "CV MSE = %.10g", v);
}

/* 1 when score a is better than b (NaN is never better). */
static int better(const char *metric, double a, double b)
{
    if (isnan(a))
        return 0;
    if (isnan(b))
        return 1;
    return km_metric_higher_is_better(metric) ? a > b : a < b;
}

static int add_point(km_search *s, double C, double gamma, double score, km_error *err)
{
    km_search_point *g = realloc(s->points, (size_t)(s->npoints + 1) * sizeof *g);
    if (!g)
        return km_error_nomem(err, "search");
    s->points = g;
    g[s->npoints++] = (km_search_point){C, gamma, score};
    return KM_OK;
}

/* LIBLINEAR's start of the C path: 2^floor(log2(1 / (l max_i k(x_i, x_i)))), k the kernel of
 * p (-t) or the linear one with the bias feature (-B). */
static double start_C(const km_method *m, const km_problem *P, const km_params *p)
{
    double kmax = 0;
    km_kernel k;
    km_error e;
    int kern = km_method_option(m, "kernel") && km_param_is_set(p, "kernel") &&
               km_params_kernel(p, KM_KERNEL_LINEAR, P->n > 0 ? 1.0 / P->n : 1, P->n, &k,
                                &e) == KM_OK;
    double bias = km_method_option(m, "bias") ? km_param_number(p, "bias") : -1;
    for (int64_t i = 0; i < P->l; i++) {
        int64_t b = P->row_ptr[i], n = P->row_ptr[i + 1] - b;
        double sq = 0;
        for (int64_t q = b; q < b + n; q++)
            sq += P->value[q] * P->value[q];
        double kii = kern ? km_kernel_eval(&k, P->index + b, P->value + b, n, sq,
                                           P->index + b, P->value + b, n, sq)
                          : sq + (bias >= 0 ? bias * bias : 0);
        kmax = kii > kmax ? kii : kmax;
    }
    if (!(kmax > 0) || !isfinite(kmax) || P->l < 1)
        return 1.0 / 1024;
    double c = pow(2, floor(log2(1 / ((double)P->l * kmax))));
    return c > 0 ? c : 1.0 / 1024;
}

/* One point: p with C (and gamma when finite), cross-validated, warm from models. */
static int run_point(const km_method *m, const km_problem *P, const km_params *p, int folds,
                     const char *metric, double C, double gamma, km_model **models,
                     double *score, km_report *rep, km_error *err)
{
    km_params *q = km_params_copy(p, err);
    if (!q)
        return err->code;
    char v[64];
    snprintf(v, sizeof v, "%.17g", C);
    int rc = km_params_set(q, "C", v, err);
    if (rc == KM_OK && isfinite(gamma)) {
        snprintf(v, sizeof v, "%.17g", gamma);
        rc = km_params_set(q, "gamma", v, err);
    }
    km_report r;
    if (rc == KM_OK)
        rc = km_cv_score_warm(m, P, q, folds, metric, models, score, &r, err);
    for (int w = 0; rc == KM_OK && w < r.nr_warnings; w++)
        if (isfinite(gamma) ? km_report_warn(rep, "C = %g gamma = %g: %s", C, gamma,
                                             r.warnings[w])
                            : km_report_warn(rep, "C = %g: %s", C, r.warnings[w]))
            rc = km_error_nomem(err, "search");
    if (rc == KM_OK)
        km_report_free(&r);
    km_params_free(q);
    return rc;
}

static void free_models(km_model **models, int k)
{
    for (int f = 0; models && f < k; f++) {
        km_model_free(models[f]);
        models[f] = NULL;
    }
}

static int check_search(const km_method *m, const km_params *p, int folds, const char *metric,
                        km_error *err)
{
    if (!km_method_option(m, "C"))
        return km_error_set(err, KM_EUSAGE, "-s %s has no C to search", m->name);
    if (m->no_cv)
        return km_error_set(err, KM_EUSAGE, "-s %s has no cross-validation: %s", m->name,
                            m->no_cv);
    if (folds < 2)
        return km_error_set(err, KM_EUSAGE, "a search needs -v k with k >= 2");
    int rc = km_metric_check(m, metric, err);
    return rc ? rc : km_method_check(m, p, err);
}

static void report_init_nan(km_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->objective = NAN;
    rep->gap = NAN;
    rep->converged = 1;
}

int km_search_C(const km_method *m, const km_problem *P, const km_params *p, int folds,
                const char *metric, km_search *out, km_report *rep, km_error *err)
{
    memset(out, 0, sizeof *out);
    report_init_nan(rep);
    int rc = check_search(m, p, folds, metric, err);
    if (rc)
        return rc;
    km_params_use(p, m);
    metric = metric_of(m, metric);
    double C = km_param_is_set(p, "C") ? km_param_number(p, "C") : start_C(m, P, p);
    km_model **models = calloc((size_t)folds, sizeof *models);
    if (!models)
        return km_error_nomem(err, "search");
    int since_best = 0, moved = 0;
    char line[128];
    for (; rc == KM_OK && C <= KM_SEARCH_MAX_C && since_best < KM_SEARCH_PATIENCE; C *= 2) {
        double score;
        if ((rc = run_point(m, P, p, folds, metric, C, NAN, models, &score, rep, err)) ||
            (rc = add_point(out, C, NAN, score, err)))
            break;
        int k = out->npoints - 1;
        moved |= score != out->points[0].score;
        if (k == 0 || better(metric, score, out->points[out->best].score)) {
            out->best = k;
            since_best = 0;
        } else if (moved) {   /* a plateau at the start (small C: the majority class) waits */
            since_best++;
        }
        put_score(line, sizeof line, metric, score);
        km_param_progress(p, "C = %g  %s", C, line);
        if (km_report_say(rep, "log2c = %6.2f  C = %-12.10g  %s\n", log2(C), C, line))
            rc = km_error_nomem(err, "search");
    }
    free_models(models, folds);
    free(models);
    if (rc == KM_OK && out->npoints == 0)
        rc = km_error_set(err, KM_EUSAGE, "-C: the start C = %g is above the largest, %g", C,
                          KM_SEARCH_MAX_C);
    if (rc == KM_OK) {
        const km_search_point *b = &out->points[out->best];
        put_score(line, sizeof line, metric, b->score);
        if (km_report_say(rep, "Best C = %.10g  %s\n", b->C, line))
            rc = km_error_nomem(err, "search");
    }
    if (rc) {
        km_search_free(out);
        km_report_free(rep);
    }
    return rc;
}

/* LO:HI:N of log2 exponents into n values from lo to hi. */
static int parse_axis(const char *s, size_t len, double **vals, int *n)
{
    char buf[128], *end;
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    double lo = strtod(buf, &end), hi;
    if (end == buf || *end != ':')
        return -1;
    char *s2 = end + 1;
    hi = strtod(s2, &end);
    if (end == s2 || *end != ':')
        return -1;
    char *s3 = end + 1;
    long cnt = strtol(s3, &end, 10);
    if (end == s3 || *end || cnt < 1 || cnt > 1000 || !isfinite(lo) || !isfinite(hi) ||
        fabs(lo) > 100 || fabs(hi) > 100 || (cnt == 1 && lo != hi) || (cnt > 1 && lo == hi))
        return -1;
    double *v = malloc((size_t)cnt * sizeof *v);
    if (!v)
        return -2;
    for (long i = 0; i < cnt; i++)
        v[i] = cnt == 1 ? lo : lo + (hi - lo) * (double)i / (double)(cnt - 1);
    free(*vals);
    *vals = v;
    *n = (int)cnt;
    return 0;
}

static int cmp_up(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int km_search_grid_parse(const km_method *m, const char *spec, km_search *out, km_error *err)
{
    memset(out, 0, sizeof *out);
    int has_g = km_method_option(m, "gamma") != NULL, rc = KM_OK;
    int setC = 0, setg = 0;
    if (strcmp(spec, "default") != 0) {
        for (const char *s = spec; rc == KM_OK && *s;) {
            size_t len = strcspn(s, ",");
            int isC = strncmp(s, "C=", 2) == 0 || strncmp(s, "c=", 2) == 0;
            int isg = strncmp(s, "g=", 2) == 0 || strncmp(s, "gamma=", 6) == 0;
            size_t key = isC || strncmp(s, "g=", 2) == 0 ? 2 : isg ? 6 : 0;
            int r = -1;
            if (isC && !setC)
                r = parse_axis(s + key, len - key, &out->log2C, &out->nC), setC = 1;
            else if (isg && !setg && has_g)
                r = parse_axis(s + key, len - key, &out->log2g, &out->ng), setg = 1;
            else if (isg && !has_g)
                rc = km_error_set(err, KM_EUSAGE, "--grid: -s %s has no gamma", m->name);
            if (r == -2)
                rc = km_error_nomem(err, "grid");
            else if (rc == KM_OK && r)
                rc = km_error_set(err, KM_EUSAGE, "--grid: expected C=LO:HI:N,g=LO:HI:N "
                                  "(log2 exponents in [-100, 100], 1 <= N <= 1000, LO = HI "
                                  "only with N = 1), got '%.*s'", (int)len, s);
            s += len + (s[len] == ',');
        }
    }
    if (rc == KM_OK && !setC && parse_axis("-5:15:11", 8, &out->log2C, &out->nC))
        rc = km_error_nomem(err, "grid");
    if (rc == KM_OK && !setg && has_g && parse_axis("3:-15:10", 8, &out->log2g, &out->ng))
        rc = km_error_nomem(err, "grid");
    if (rc == KM_OK)   /* C upward: the warm starts go from small C to large */
        qsort(out->log2C, (size_t)out->nC, sizeof *out->log2C, cmp_up);
    if (rc)
        km_search_free(out);
    return rc;
}

/* The grid's gamma columns as tasks (km_dist_tasks_run: columns on ranks): column gi's
 * scores at score[gi nC ..], its warnings in rep[gi]. */
typedef struct grid_job {
    const km_method *m;
    const km_problem *P;
    const km_params *p;
    int folds;
    const char *metric;
    const km_search *s;
    double *score;
    km_report *rep;
    km_error *errs;
} grid_job;

/* One gamma column: C upward, every fold warm-started from its model of the previous C. */
static int grid_column(void *ctx, int64_t gi, int worker)
{
    (void)worker;
    grid_job *G = ctx;
    const km_search *s = G->s;
    km_report *rep = &G->rep[gi];
    km_error *err = &G->errs[gi];
    report_init_nan(rep);
    km_model **models = calloc((size_t)G->folds, sizeof *models);
    if (!models)
        return km_error_nomem(err, "search");
    double lg = s->ng ? s->log2g[gi] : NAN, gamma = s->ng ? pow(2, lg) : NAN;
    char line[128];
    int rc = KM_OK;
    for (int ci = 0; ci < s->nC && rc == KM_OK; ci++) {
        double C = pow(2, s->log2C[ci]), *score = &G->score[gi * s->nC + ci];
        if ((rc = run_point(G->m, G->P, G->p, G->folds, G->metric, C, gamma, models, score, rep,
                            err)))
            break;
        put_score(line, sizeof line, G->metric, *score);
        if (s->ng)
            km_param_progress(G->p, "C = %g gamma = %g  %s", C, gamma, line);
        else
            km_param_progress(G->p, "C = %g  %s", C, line);
    }
    free_models(models, G->folds);
    free(models);
    return rc;
}

/* A column's result on the wire: its nC scores, then its warnings (count, then length and
 * bytes each). */
static int64_t column_size(void *ctx, int64_t gi)
{
    grid_job *G = ctx;
    int64_t sz = 8 * (int64_t)G->s->nC + 8;
    for (int w = 0; w < G->rep[gi].nr_warnings; w++)
        sz += 8 + (int64_t)strlen(G->rep[gi].warnings[w]);
    return sz;
}

static void column_pack(void *ctx, int64_t gi, void *buf)
{
    grid_job *G = ctx;
    const km_report *r = &G->rep[gi];
    int64_t pos = 0, nw = r->nr_warnings;
    km_dist_put(buf, &pos, &G->score[gi * G->s->nC], 8 * (int64_t)G->s->nC);
    km_dist_put(buf, &pos, &nw, 8);
    for (int w = 0; w < r->nr_warnings; w++) {
        int64_t len = (int64_t)strlen(r->warnings[w]);
        km_dist_put(buf, &pos, &len, 8);
        km_dist_put(buf, &pos, r->warnings[w], len);
    }
}

static int column_unpack(void *ctx, int64_t gi, const void *buf, km_error *err)
{
    grid_job *G = ctx;
    km_report *r = &G->rep[gi];
    int64_t pos = 0, nw;
    report_init_nan(r);
    km_dist_get(buf, &pos, &G->score[gi * G->s->nC], 8 * (int64_t)G->s->nC);
    km_dist_get(buf, &pos, &nw, 8);
    for (int64_t w = 0; w < nw; w++) {
        int64_t len;
        km_dist_get(buf, &pos, &len, 8);
        if (km_report_warn(r, "%.*s", (int)len, (const char *)buf + pos))
            return km_error_nomem(err, "search");
        pos += len;
    }
    return KM_OK;
}

int km_search_grid(const km_method *m, const km_problem *P, const km_params *p, int folds,
                   const char *metric, const char *spec, km_search *out, km_report *rep,
                   km_error *err)
{
    report_init_nan(rep);
    int rc = check_search(m, p, folds, metric, err);
    if (rc == KM_OK)
        rc = km_search_grid_parse(m, spec, out, err);
    if (rc)
        return rc;
    if (out->ng > 0 && !km_param_is_set(p, "kernel")) {   /* the linear solver: C only */
        if (strncmp(spec, "g=", 2) == 0 || strstr(spec, ",g=") || strstr(spec, "gamma=")) {
            km_search_free(out);
            return km_error_set(err, KM_EUSAGE, "--grid over gamma needs a kernel (-t)");
        }
        free(out->log2g);
        out->log2g = NULL;
        out->ng = 0;
    }
    km_params_use(p, m);
    metric = metric_of(m, metric);
    int ng = out->ng > 0 ? out->ng : 1;
    grid_job G = {m, P, p, folds, metric, out, NULL, NULL, NULL};
    G.score = malloc((size_t)ng * (size_t)out->nC * sizeof *G.score);
    G.rep = calloc((size_t)ng, sizeof *G.rep);
    G.errs = calloc((size_t)ng, sizeof *G.errs);
    if (!G.score || !G.rep || !G.errs) {
        rc = km_error_nomem(err, "search");
    } else {
        /* the gamma columns on ranks (each rank its columns, every fold, warm along C), or,
         * with fewer columns than ranks, the columns in turn and each point's folds on ranks
         * (km_cv_score_warm); without ranks, the columns in turn: the same bits either way */
        km_dist *d = km_dist_current();
        int64_t failed = -1;
        if (d && d->size > 1 && ng < d->size) {
            for (int gi = 0; gi < ng && rc == KM_OK; gi++)
                if ((rc = grid_column(&G, gi, 0)))
                    *err = G.errs[gi];
        } else {
            static const km_task_io column_io = {column_size, column_pack, column_unpack};
            if ((rc = km_dist_tasks_run(ng, 1, grid_column, &column_io, &G, G.errs, &failed)))
                *err = G.errs[failed >= 0 ? failed : 0];
        }
    }
    char line[128];
    for (int gi = 0; gi < ng && rc == KM_OK; gi++) {   /* the points in run order */
        double lg = out->ng ? out->log2g[gi] : NAN, gamma = out->ng ? pow(2, lg) : NAN;
        for (int w = 0; w < G.rep[gi].nr_warnings && rc == KM_OK; w++)
            if (km_report_warn(rep, "%s", G.rep[gi].warnings[w]))
                rc = km_error_nomem(err, "search");
        for (int ci = 0; ci < out->nC && rc == KM_OK; ci++) {
            double C = pow(2, out->log2C[ci]), score = G.score[gi * out->nC + ci];
            if ((rc = add_point(out, C, gamma, score, err)))
                break;
            int k = out->npoints - 1;
            if (k == 0 || better(metric, score, out->points[out->best].score))
                out->best = k;
            put_score(line, sizeof line, metric, score);
            if (out->ng)
                rc = km_report_say(rep, "log2c = %6.2f  log2g = %6.2f  C = %-12.10g  gamma = "
                                   "%-12.10g  %s\n", out->log2C[ci], lg, C, gamma, line);
            else
                rc = km_report_say(rep, "log2c = %6.2f  C = %-12.10g  %s\n", out->log2C[ci], C,
                                   line);
            if (rc)
                rc = km_error_nomem(err, "search");
        }
    }
    for (int gi = 0; G.rep && gi < ng; gi++)
        km_report_free(&G.rep[gi]);
    free(G.rep);
    free(G.errs);
    free(G.score);
    if (rc == KM_OK) {
        const km_search_point *b = &out->points[out->best];
        put_score(line, sizeof line, metric, b->score);
        if (out->ng)
            rc = km_report_say(rep, "Best C = %.10g  gamma = %.10g  %s\n", b->C, b->gamma,
                               line);
        else
            rc = km_report_say(rep, "Best C = %.10g  %s\n", b->C, line);
        if (rc)
            rc = km_error_nomem(err, "search");
    }
    if (rc) {
        km_search_free(out);
        km_report_free(rep);
    }
    return rc;
}

int km_search_plot(const km_search *s, const char *metric, const char *path, km_error *err)
{
    int nx = s->nC, ny = s->ng > 0 ? s->ng : 1;
    if (!s->points || s->npoints != nx * ny)
        return km_error_set(err, KM_EUSAGE, "--grid-plot needs a whole grid");
    double *y = malloc((size_t)ny * sizeof *y), *z = malloc((size_t)(nx * ny) * sizeof *z);
    if (!y || !z) {
        free(y);
        free(z);
        return km_error_nomem(err, "plot");
    }
    /* rows upward in log2 gamma: the run order may be downward (grid.py's 3 .. -15) */
    int down = ny > 1 && s->log2g[1] < s->log2g[0], best = -1;
    for (int j = 0; j < ny; j++) {
        int gi = down ? ny - 1 - j : j;
        y[j] = s->ng ? s->log2g[gi] : 0;
        for (int i = 0; i < nx; i++) {
            z[j * nx + i] = s->points[gi * nx + i].score;
            if (gi * nx + i == s->best)
                best = j * nx + i;
        }
    }
    char zl[64];
    snprintf(zl, sizeof zl, "CV %s", metric ? metric : "score");
    km_heatmap h = {"cross-validation over the grid", "log2(C)", s->ng ? "log2(gamma)" : NULL,
                    zl, s->log2C, nx, y, ny, z, best, 5};
    int rc = km_plot_heatmap_svg(&h, path, err);
    free(y);
    free(z);
    return rc;
}
