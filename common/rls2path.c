/* rls2path.c - see rls2path.h. */
#include "rls2path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "report.h"
#include "rng.h"

void km_rls2_path_free(km_rls2_path *p)
{
    free(p->row);
    free(p->labels);
    free(p->s);
    free(p->d);
    free(p->c);
    free(p->intercept);
    free(p->sel_start);
    free(p->sel_k);
    free(p->sel_d);
    memset(p, 0, sizeof *p);
}

void km_rls2_lambdas(double lo, double hi, int n, double *lambda)
{
    for (int t = 0; t < n; t++)
        lambda[t] = n == 1 ? hi : exp(log(hi) + (log(lo) - log(hi)) * t / (n - 1));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Target of row i in decision function j: +-1 for classes, the output for regression. */
static double target(const km_rls2_path *p, double yi, int j)
{
    if (!p->classification)
        return yi;
    double pos = p->nr_class == 2 ? p->labels[1] : p->labels[j];
    return yi == pos ? 1 : -1;
}

/* Accuracy (%) or RMSE of decision values dec[i * nr_w + j] against labels y[rows[i]]. */
static double metric(const km_rls2_path *p, const double *dec, const double *y,
                     const int64_t *rows, int64_t n)
{
    double acc = 0;
    for (int64_t i = 0; i < n; i++) {
        double yi = y[rows[i]];
        const double *z = dec + i * p->nr_w;
        if (!p->classification) {
            acc += (z[0] - yi) * (z[0] - yi);
        } else if (p->nr_w == 1) {
            acc += (z[0] > 0 ? p->labels[1] : p->labels[0]) == yi;
        } else {
            int best = 0;
            for (int j = 1; j < p->nr_w; j++)
                if (z[j] > z[best])
                    best = j;
            acc += p->labels[best] == yi;
        }
    }
    if (n == 0)
        return NAN;
    return p->classification ? 100 * acc / (double)n : sqrt(acc / (double)n);
}

/* Fold of each training position: stratified by class (each class's shuffled members dealt
 * round-robin) for classification, a shuffled deal for regression. */
static int assign_folds(const km_rls2_task *T, const km_rls2_path *p, int k, uint64_t seed,
                        int *fold, km_error *err)
{
    int64_t n = T->ntrain;
    int64_t *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return km_error_nomem(err, "cross-validation folds");
    km_rng rng;
    km_rng_seed(&rng, seed ^ 0x5bd1e995u);
    for (int64_t t = 0; t < n; t++)
        order[t] = t;
    km_rng_shuffle(&rng, order, n);
    int64_t next = 0;
    if (p->classification) {
        for (int q = 0; q < p->nr_class; q++)
            for (int64_t t = 0; t < n; t++)
                if (T->y[T->train[order[t]]] == p->labels[q])
                    fold[order[t]] = (int)(next++ % k);
    } else {
        for (int64_t t = 0; t < n; t++)
            fold[order[t]] = (int)(t % k);
    }
    free(order);
    return KM_OK;
}

/* Scales of decision function j into s (m values). */
static int scales(const km_rls2_task *T, const km_rls2_setup *S, km_rls2_path *p, int j,
                  double *s, km_error *err)
{
    if (S->scales) {
        memcpy(s, S->scales, (size_t)p->m * sizeof *s);
        return KM_OK;
    }
    int by_class = S->scale == KM_SCALE_CLASS || S->scale == KM_SCALE_MICROARRAY;
    if (by_class && !T->classification)
        return km_error_set(err, KM_EUSAGE, "scaling '%s' needs class labels",
                            km_scale_name(S->scale));
    int64_t n = T->ntrain + (S->transductive && !by_class ? T->ntest : 0);
    int64_t *rows = malloc((size_t)(n > 0 ? n : 1) * sizeof *rows);
    double *y = malloc((size_t)(n > 0 ? n : 1) * sizeof *y);
    if (!rows || !y) {
        free(rows);
        free(y);
        return km_error_nomem(err, "scales");
    }
    for (int64_t i = 0; i < n; i++) {
        rows[i] = i < T->ntrain ? T->train[i] : T->test[i - T->ntrain];
        y[i] = by_class ? target(p, T->y[rows[i]], j) : 1;
    }
    int zero = 0;
    int rc = km_kbank_scales(T->bank, S->scale, S->center, rows, n, y, s, &zero, err);
    p->scale_zero = zero > p->scale_zero ? zero : p->scale_zero;
    free(rows);
    free(y);
    return rc;
}

/* Every lambda's solution on all training rows, when the model's lambda is known only after
 * the path (validation or test rows): c of each (t, j) dense, the support of d sparse, entry
 * j * nl + t at k[start[e] .. start[e + 1]), in the order the paths are run. */
typedef struct saved {
    double *c;           /* nl * n * nw: [(t * n + i) * nw + j] */
    int64_t *start;      /* nl * nw + 1 */
    int *k;
    double *v;
    int64_t len, cap;
} saved;

static void saved_free(saved *sv)
{
    free(sv->c);
    free(sv->start);
    free(sv->k);
    free(sv->v);
}

/* Appends the support of d (m values) as entry e of sv. */
static int saved_put(saved *sv, int64_t e, const double *d, int m, km_error *err)
{
    sv->start[e] = sv->len;
    for (int k = 0; k < m; k++) {
        if (!(d[k] > 0))
            continue;
        if (sv->len == sv->cap) {
            int64_t cap = sv->cap ? 2 * sv->cap : 256;
            int *nk = realloc(sv->k, (size_t)cap * sizeof *nk);
            if (nk)
                sv->k = nk;
            double *nv = nk ? realloc(sv->v, (size_t)cap * sizeof *nv) : NULL;
            if (!nv)
                return km_error_nomem(err, "RLS2 path");
            sv->v = nv;
            sv->cap = cap;
        }
        sv->k[sv->len] = k;
        sv->v[sv->len++] = d[k];
    }
    sv->start[e + 1] = sv->len;
    return KM_OK;
}

typedef struct ranked {
    double w;
    int k;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? 1 : -1;
    return (x->k > y->k) - (x->k < y->k);
}

/* p->sel_*: the kernels of each lambda with their summed weights wsum[t * m + k] > 0. */
static int selected_lists(km_rls2_path *p, const double *wsum, int nl, km_error *err)
{
    int m = p->m;
    int64_t total = 0;
    for (size_t e = 0; e < (size_t)nl * (size_t)m; e++)
        total += wsum[e] > 0;
    p->sel_start = malloc((size_t)(nl + 1) * sizeof *p->sel_start);
    p->sel_k = malloc((size_t)(total > 0 ? total : 1) * sizeof *p->sel_k);
    p->sel_d = malloc((size_t)(total > 0 ? total : 1) * sizeof *p->sel_d);
    ranked *r = malloc((size_t)(m > 0 ? m : 1) * sizeof *r);
    if (!p->sel_start || !p->sel_k || !p->sel_d || !r) {
        free(r);
        return km_error_nomem(err, "RLS2 path");
    }
    int64_t q = 0;
    for (int t = 0; t < nl; t++) {
        p->sel_start[t] = q;
        int c = 0;
        for (int k = 0; k < m; k++)
            if (wsum[(size_t)t * (size_t)m + (size_t)k] > 0)
                r[c++] = (ranked){wsum[(size_t)t * (size_t)m + (size_t)k] / p->nr_w, k};
        qsort(r, (size_t)c, sizeof *r, cmp_ranked);
        for (int a = 0; a < c; a++, q++) {
            p->sel_k[q] = r[a].k;
            p->sel_d[q] = r[a].w;
        }
    }
    p->sel_start[nl] = q;
    free(r);
    return KM_OK;
}

/*
 * The paths of every decision function on training rows train[0..n) (bank rows), with
 * decision values at the rows eval[0..ne) stored in dec[(t * ne + i) * nr_w + j]; the
 * training fit too when fit != NULL (fit[(t * n + i) * nr_w + j]). With rows != NULL the
 * path statistics are added up there and the selected kernels listed in p; the solution at
 * lambda index keep is saved in p, and every lambda's in sv when sv != NULL.
 */
static int run_paths(const km_rls2_task *T, const km_rls2_setup *S, km_rls2_path *p,
                     const double *s_all, const int64_t *train, int64_t n,
                     const int64_t *eval, int64_t ne, double *dec, double *fit,
                     km_rls2_row *rows, int keep, saved *sv, int *done, int total,
                     km_error *err)
{
    int m = p->m, nw = p->nr_w, rc = KM_OK;
    km_kbank *B = km_kbank_slice(T->bank, train, n, err);
    double *y = malloc((size_t)(n > 0 ? n : 1) * sizeof *y);
    double *w = malloc((size_t)m * sizeof *w);
    double *out = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *out);
    double *sel = rows ? calloc((size_t)S->nl * (size_t)m, sizeof *sel) : NULL;
    if (!B || !y || !w || !out || (rows && !sel)) {
        rc = B ? km_error_nomem(err, "RLS2 path") : err->code;
        goto done;
    }
    for (int j = 0; j < nw && rc == KM_OK; j++) {
        const double *s = s_all + (size_t)j * (size_t)m;
        double mean = 0;
        for (int64_t i = 0; i < n; i++)
            mean += (y[i] = target(p, T->y[train[i]], j));
        mean = p->classification || S->no_intercept || n == 0 ? 0 : mean / (double)n;
        for (int64_t i = 0; i < n; i++)
            y[i] -= mean;
        km_rls2 *R = km_rls2_new(B, s, y, &S->solver, err);
        if (!R) {
            rc = err->code;
            break;
        }
        for (int t = 0; t < S->nl && rc == KM_OK; t++) {
            km_rls2_info info;
            if ((rc = km_rls2_solve(R, S->lambda[t], &info, err)))
                break;
            const double *d = km_rls2_d(R), *c = km_rls2_c(R);
            for (int k = 0; k < m; k++)
                w[k] = d[k] * s[k];
            if (ne > 0 && (rc = km_kbank_cross(T->bank, eval, ne, train, n, w, c, out, err)))
                break;
            for (int64_t i = 0; i < ne; i++)
                dec[((size_t)t * (size_t)ne + (size_t)i) * (size_t)nw + (size_t)j] =
                    out[i] + mean;
            if (fit) {
                const double *f = km_rls2_fit(R);
                for (int64_t i = 0; i < n; i++)
                    fit[((size_t)t * (size_t)n + (size_t)i) * (size_t)nw + (size_t)j] =
                        f[i] + mean;
            }
            if (rows) {
                km_rls2_row *r = &rows[t];
                r->objective += info.objective;
                r->iter += info.iter;
                r->converged &= info.converged;
                r->seconds += info.seconds;
                for (int k = 0; k < m; k++)
                    if (d[k] > 0)
                        sel[(size_t)t * (size_t)m + (size_t)k] += d[k];
                if (S->dof) {
                    double df;
                    if ((rc = km_rls2_dof(R, S->lambda[t], &df, err)))
                        break;
                    r->df += df;
                }
            }
            if (sv) {
                if ((rc = saved_put(sv, (int64_t)j * S->nl + t, d, m, err)))
                    break;
                for (int64_t i = 0; i < n; i++)
                    sv->c[((size_t)t * (size_t)n + (size_t)i) * (size_t)nw + (size_t)j] = c[i];
                if (t == 0) {
                    for (int k = 0; k < m; k++)
                        p->s[(size_t)k * (size_t)nw + (size_t)j] = s[k];
                    p->intercept[j] = mean;
                }
            }
            if (t == keep) {
                for (int k = 0; k < m; k++) {
                    p->d[(size_t)k * (size_t)nw + (size_t)j] = d[k];
                    p->s[(size_t)k * (size_t)nw + (size_t)j] = s[k];
                }
                for (int64_t i = 0; i < n; i++)
                    p->c[(size_t)i * (size_t)nw + (size_t)j] = c[i];
                p->intercept[j] = mean;
            }
            (*done)++;
            if (S->progress)
                S->progress(S->ctx, *done, total, S->lambda[t]);
        }
        km_rls2_free(R);
    }
    if (rows && rc == KM_OK) {
        for (int t = 0; t < S->nl; t++) {
            rows[t].kernels = 0;
            for (int k = 0; k < m; k++)
                rows[t].kernels += sel[(size_t)t * (size_t)m + (size_t)k] > 0;
        }
        rc = selected_lists(p, sel, S->nl, err);
    }
done:
    km_kbank_free(B);
    free(y);
    free(w);
    free(out);
    free(sel);
    return rc;
}

int km_rls2_run(const km_rls2_task *T, const km_rls2_setup *S, km_rls2_path *p,
                km_error *err)
{
    memset(p, 0, sizeof *p);
    int nl = S->nl, m = km_kbank_size(T->bank), rc = KM_OK;
    if (nl < 1)
        return km_error_set(err, KM_EUSAGE, "the path needs at least one lambda");
    for (int t = 0; t < nl; t++)
        if (!(S->lambda[t] > 0) || (t > 0 && !(S->lambda[t] < S->lambda[t - 1])))
            return km_error_set(err, KM_EUSAGE, "lambdas must be > 0 and decreasing");
    if (T->ntrain < 1)
        return km_error_set(err, KM_EINPUT, "no training examples");
    if (S->folds == 1 || S->folds > T->ntrain)
        return km_error_set(err, KM_EUSAGE, "the number of folds must be between 2 and the "
                            "number of examples (%lld)", (long long)T->ntrain);
    if (S->folds && S->nvalid > 0)
        return km_error_set(err, KM_EUSAGE, "validation rows and cross-validation folds: the "
                            "lambda is chosen one way");
    p->nl = nl;
    p->m = m;
    p->ntrain = T->ntrain;
    p->classification = T->classification;
    p->row = calloc((size_t)nl, sizeof *p->row);
    p->labels = malloc((size_t)T->ntrain * sizeof *p->labels);
    if (!p->row || !p->labels) {
        km_rls2_path_free(p);
        return km_error_nomem(err, "RLS2 path");
    }
    if (T->classification) {
        for (int64_t i = 0; i < T->ntrain; i++)
            p->labels[i] = T->y[T->train[i]];
        qsort(p->labels, (size_t)T->ntrain, sizeof *p->labels, cmp_double);
        int nc = 0;
        for (int64_t i = 0; i < T->ntrain; i++)
            if (i == 0 || p->labels[i] != p->labels[nc - 1])
                p->labels[nc++] = p->labels[i];
        if (nc < 2) {
            km_rls2_path_free(p);
            return km_error_set(err, KM_EINPUT, "the training data have one class only");
        }
        p->nr_class = nc;
        p->nr_w = nc == 2 ? 1 : nc;
    } else {
        p->nr_w = 1;
    }
    int nw = p->nr_w;
    p->s = malloc((size_t)m * (size_t)nw * sizeof *p->s);
    p->d = calloc((size_t)m * (size_t)nw, sizeof *p->d);
    p->c = calloc((size_t)T->ntrain * (size_t)nw, sizeof *p->c);
    p->intercept = calloc((size_t)nw, sizeof *p->intercept);
    double *s_all = malloc((size_t)m * (size_t)nw * sizeof *s_all);
    double *s_tmp = malloc((size_t)m * sizeof *s_tmp);
    int *fold = malloc((size_t)T->ntrain * sizeof *fold);
    int64_t nev = T->ntest + S->nvalid;
    int64_t *rows = malloc((size_t)(T->ntrain + nev) * sizeof *rows);
    int64_t ne_max = T->ntrain + nev;
    double *dec = malloc((size_t)nl * (size_t)(ne_max > 0 ? ne_max : 1) * (size_t)nw *
                         sizeof *dec);
    double *fit = malloc((size_t)nl * (size_t)T->ntrain * (size_t)nw * sizeof *fit);
    double *vm = calloc((size_t)nl * (size_t)(S->folds > 0 ? S->folds : 1), sizeof *vm);
    saved sv = {0};
    if (!p->s || !p->d || !p->c || !p->intercept || !s_all || !s_tmp || !fold || !rows ||
        !dec || !fit || !vm) {
        rc = km_error_nomem(err, "RLS2 path");
        goto done;
    }
    /* s_all[j * m + k]: the scales of decision function j */
    for (int j = 0; j < nw && rc == KM_OK; j++)
        if ((rc = scales(T, S, p, j, s_tmp, err)) == KM_OK)
            memcpy(s_all + (size_t)j * (size_t)m, s_tmp, (size_t)m * sizeof *s_tmp);
    if (rc)
        goto done;
    int folds = S->folds, done = 0, total = (folds + 1) * nw * nl;
    for (int t = 0; t < nl; t++) {
        p->row[t].lambda = S->lambda[t];
        p->row[t].converged = 1;
        p->row[t].df = S->dof ? 0 : NAN;
        p->row[t].valid = p->row[t].valid_se = p->row[t].test = NAN;
    }

    /* cross-validation: metric of each lambda on each held-out fold */
    if (folds >= 2) {
        if ((rc = assign_folds(T, p, folds, S->seed, fold, err)))
            goto done;
        for (int f = 0; f < folds && rc == KM_OK; f++) {
            int64_t n = 0, ne = 0;
            for (int64_t i = 0; i < T->ntrain; i++)
                if (fold[i] != f)
                    rows[n++] = T->train[i];
            for (int64_t i = 0; i < T->ntrain; i++)
                if (fold[i] == f)
                    rows[n + ne++] = T->train[i];
            rc = run_paths(T, S, p, s_all, rows, n, rows + n, ne, dec, NULL, NULL, -1, NULL,
                           &done, total, err);
            for (int t = 0; t < nl && rc == KM_OK; t++)
                vm[(size_t)t * (size_t)folds + (size_t)f] =
                    metric(p, dec + (size_t)t * (size_t)ne * (size_t)nw, T->y, rows + n, ne);
        }
        if (rc)
            goto done;
        for (int t = 0; t < nl; t++) {
            double mean = 0, var = 0;
            for (int f = 0; f < folds; f++)
                mean += vm[(size_t)t * (size_t)folds + (size_t)f];
            mean /= folds;
            for (int f = 0; f < folds; f++) {
                double e = vm[(size_t)t * (size_t)folds + (size_t)f] - mean;
                var += e * e;
            }
            p->row[t].valid = mean;
            p->row[t].valid_se = sqrt(var / (folds - 1) / folds);
        }
        /* best validation (ties: the larger lambda, the earlier row) */
        int best = 0, sign = T->classification ? 1 : -1;
        for (int t = 1; t < nl; t++)
            if (sign * p->row[t].valid > sign * p->row[best].valid)
                best = t;
        p->chosen = best;
        p->choice = KM_RLS2_CV;
        if (S->one_se) {
            p->choice = KM_RLS2_CV_ONE_SE;
            double bound = p->row[best].valid - sign * p->row[best].valid_se;
            for (int t = 0; t < best; t++)
                if (sign * p->row[t].valid >= sign * bound) {
                    p->chosen = t;
                    break;
                }
        }
    } else if (S->nvalid > 0) {
        p->choice = KM_RLS2_VALID;
    } else if (T->ntest > 0 && S->select_test) {
        p->choice = KM_RLS2_TEST;
    } else {
        p->choice = KM_RLS2_LAST;
        p->chosen = nl - 1;
    }
    int after = p->choice == KM_RLS2_VALID || p->choice == KM_RLS2_TEST;
    if (after) {   /* the model's lambda is known after the path: keep every lambda's */
        sv.c = malloc((size_t)nl * (size_t)T->ntrain * (size_t)nw * sizeof *sv.c);
        sv.start = malloc(((size_t)nl * (size_t)nw + 1) * sizeof *sv.start);
        if (!sv.c || !sv.start) {
            rc = km_error_nomem(err, "RLS2 path");
            goto done;
        }
    }

    /* the path on all training rows: statistics, training fit, test and validation
     * metrics, the model */
    for (int64_t i = 0; i < T->ntest; i++)
        rows[i] = T->test[i];
    for (int64_t i = 0; i < S->nvalid; i++)
        rows[T->ntest + i] = S->valid[i];
    rc = run_paths(T, S, p, s_all, T->train, T->ntrain, rows, nev, dec, fit, p->row,
                   after ? -1 : p->chosen, after ? &sv : NULL, &done, total, err);
    for (int t = 0; t < nl && rc == KM_OK; t++) {
        p->row[t].train = metric(p, fit + (size_t)t * (size_t)T->ntrain * (size_t)nw, T->y,
                                 T->train, T->ntrain);
        if (T->ntest > 0)
            p->row[t].test = metric(p, dec + (size_t)t * (size_t)nev * (size_t)nw, T->y,
                                    T->test, T->ntest);
        if (S->nvalid > 0)
            p->row[t].valid = metric(p, dec + ((size_t)t * (size_t)nev + (size_t)T->ntest) *
                                     (size_t)nw, T->y, S->valid, S->nvalid);
    }
    if (rc == KM_OK && after) {
        /* the best validation or test metric (ties: the larger lambda, the earlier row) */
        int best = 0, sign = T->classification ? 1 : -1;
        for (int t = 1; t < nl; t++) {
            double a = p->choice == KM_RLS2_VALID ? p->row[t].valid : p->row[t].test;
            double b = p->choice == KM_RLS2_VALID ? p->row[best].valid : p->row[best].test;
            if (sign * a > sign * b || (isnan(b) && !isnan(a)))
                best = t;
        }
        p->chosen = best;
        for (int j = 0; j < nw; j++) {
            int64_t e = (int64_t)j * nl + best;
            for (int k = 0; k < m; k++)
                p->d[(size_t)k * (size_t)nw + (size_t)j] = 0;
            for (int64_t q = sv.start[e]; q < sv.start[e + 1]; q++)
                p->d[(size_t)sv.k[q] * (size_t)nw + (size_t)j] = sv.v[q];
        }
        memcpy(p->c, sv.c + (size_t)best * (size_t)T->ntrain * (size_t)nw,
               (size_t)T->ntrain * (size_t)nw * sizeof *p->c);
    }
done:
    saved_free(&sv);
    free(s_all);
    free(s_tmp);
    free(fold);
    free(rows);
    free(dec);
    free(fit);
    free(vm);
    if (rc)
        km_rls2_path_free(p);
    return rc;
}

/* ---- outputs ---- */

static int write_csv(FILE *f, const void *ctx)
{
    const km_rls2_path *p = ctx;
    const char *mt = p->classification ? "accuracy" : "rmse";
    fprintf(f, "lambda,objective,kernels,iterations,seconds,dof,train_%s,valid_%s,"
            "valid_%s_se,test_%s,chosen\n", mt, mt, mt, mt);
    for (int t = 0; t < p->nl; t++) {
        const km_rls2_row *r = &p->row[t];
        fprintf(f, "%.10g", r->lambda);
        km_csv_number(f, r->objective);
        fprintf(f, ",%d,%d", r->kernels, r->iter);
        km_csv_number(f, r->seconds);
        km_csv_number(f, r->df);
        km_csv_number(f, r->train);
        km_csv_number(f, r->valid);
        km_csv_number(f, r->valid_se);
        km_csv_number(f, r->test);
        fprintf(f, ",%d\n", t == p->chosen);
    }
    return 0;
}

int km_rls2_write_csv(const km_rls2_path *p, const char *path, km_error *err)
{
    return km_write_atomic(path, "path table", write_csv, p, err);
}

int km_rls2_kernel_name(const km_basis_set *basis, int k, char *buf, size_t len)
{
    const km_basis *b = &basis->b[k];
    const km_kernel *K = &b->kernel;
    char text[160];
    int n = snprintf(text, sizeof text, "%s", km_kernel_name(K->type));
    if (K->type != KM_KERNEL_LINEAR && K->type != KM_KERNEL_SPLINE && K->gamma != 1)
        n += snprintf(text + n, sizeof text - (size_t)n, " gamma=%.3g", K->gamma);
    if ((K->type == KM_KERNEL_POLY || K->type == KM_KERNEL_SIGMOID) && K->coef0 != 0)
        n += snprintf(text + n, sizeof text - (size_t)n, " coef0=%.3g", K->coef0);
    if (K->type == KM_KERNEL_POLY && K->degree != 3)
        snprintf(text + n, sizeof text - (size_t)n, " degree=%d", K->degree);
    if (!b->nfeat)
        return snprintf(buf, len, "%s", text);
    /* the feature runs as km_basis_format writes them */
    int need = km_basis_format(b, NULL, 0);
    char *full = need >= 0 ? malloc((size_t)need + 1) : NULL;
    if (!full)
        return snprintf(buf, len, "%s features=...", text);
    km_basis_format(b, full, (size_t)need + 1);
    const char *f = strstr(full, " features=");
    int r = snprintf(buf, len, "%s%s", text, f ? f : "");
    free(full);
    return r;
}

typedef struct selected_ctx {
    const km_rls2_path *p;
    const km_basis_set *basis;
} selected_ctx;

static int write_selected(FILE *f, const void *ctx)
{
    const selected_ctx *sc = ctx;
    const km_rls2_path *p = sc->p;
    char *buf = NULL;
    size_t cap = 0;
    fprintf(f, "lambda,rank,weight,kernel\n");
    for (int t = 0; t < p->nl; t++)
        for (int64_t q = p->sel_start[t]; q < p->sel_start[t + 1]; q++) {
            const km_basis *b = &sc->basis->b[p->sel_k[q]];
            size_t need = (size_t)km_basis_format(b, NULL, 0) + 1;
            if (need > cap) {
                char *nb = realloc(buf, need);
                if (!nb) {
                    free(buf);
                    return -1;
                }
                buf = nb;
                cap = need;
            }
            km_basis_format(b, buf, cap);
            fprintf(f, "%.10g,%lld", p->row[t].lambda, (long long)(q - p->sel_start[t] + 1));
            km_csv_number(f, p->sel_d[q]);
            fprintf(f, ",\"%s\"\n", buf);
        }
    free(buf);
    return 0;
}

int km_rls2_write_selected(const km_rls2_path *p, const km_basis_set *basis, const char *path,
                           km_error *err)
{
    if (!p->sel_start)
        return km_error_set(err, KM_EUSAGE, "the path has no selected kernels");
    for (int64_t q = 0; q < p->sel_start[p->nl]; q++)
        if (p->sel_k[q] >= basis->m)
            return km_error_set(err, KM_EUSAGE, "the path's kernels are not those of the set");
    selected_ctx sc = {p, basis};
    return km_write_atomic(path, "selected kernels", write_selected, &sc, err);
}

/* The rows of X listed in rows[0..n) with only the features some kernel of keep looks at
 * (indices unchanged): a linear RLS2 model keeps its selected features, not all 16,063. */
static km_problem *kept_features(const km_basis_set *keep, const km_problem *X,
                                 const int64_t *rows, int64_t n, km_error *err)
{
    unsigned char *use = calloc((size_t)X->n + 1, 1);
    km_problem *Q = calloc(1, sizeof *Q);
    if (!use || !Q)
        goto nomem;
    for (int k = 0; k < keep->m; k++) {
        const km_basis *b = &keep->b[k];
        if (!b->nfeat)
            memset(use, 1, (size_t)X->n);
        for (int32_t t = 0; t < b->nfeat; t++)
            if (b->feat[t] < X->n)
                use[b->feat[t]] = 1;
    }
    int64_t nnz = 0;
    for (int64_t a = 0; a < n; a++)
        for (int64_t p = X->row_ptr[rows[a]]; p < X->row_ptr[rows[a] + 1]; p++)
            nnz += use[X->index[p]];
    Q->l = n;
    Q->n = X->n;
    Q->row_ptr = malloc((size_t)(n + 1) * sizeof *Q->row_ptr);
    Q->y = malloc((size_t)(n > 0 ? n : 1) * sizeof *Q->y);
    Q->index = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *Q->index);
    Q->value = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *Q->value);
    if (!Q->row_ptr || !Q->y || !Q->index || !Q->value)
        goto nomem;
    Q->row_ptr[0] = 0;
    for (int64_t a = 0; a < n; a++) {
        int64_t q = Q->row_ptr[a];
        for (int64_t p = X->row_ptr[rows[a]]; p < X->row_ptr[rows[a] + 1]; p++)
            if (use[X->index[p]]) {
                Q->index[q] = X->index[p];
                Q->value[q++] = X->value[p];
            }
        Q->row_ptr[a + 1] = q;
        Q->y[a] = X->y[rows[a]];
    }
    Q->nnz = nnz;
    free(use);
    return Q;
nomem:
    free(use);
    km_problem_free(Q);
    km_error_nomem(err, "RLS2 model");
    return NULL;
}

int km_rls2_model(const km_rls2_path *p, const km_basis_set *basis, const km_problem *X,
                  const int64_t *train, km_model **out, km_error *err)
{
    int nw = p->nr_w, m = p->m;
    int64_t nsv = 0;
    int kept = 0;
    for (int k = 0; k < m; k++) {
        int any = 0;
        for (int j = 0; j < nw; j++)
            any |= p->d[(size_t)k * (size_t)nw + (size_t)j] > 0;
        kept += any;
    }
    int64_t *sv_rows = malloc((size_t)p->ntrain * sizeof *sv_rows);
    double *coef = malloc((size_t)p->ntrain * (size_t)nw * sizeof *coef);
    km_basis_set keep = {0, calloc((size_t)(kept > 0 ? kept : 1), sizeof(km_basis))};
    double *s = malloc((size_t)(kept > 0 ? kept : 1) * (size_t)nw * sizeof *s);
    double *d = malloc((size_t)(kept > 0 ? kept : 1) * (size_t)nw * sizeof *d);
    double *icpt = malloc((size_t)nw * sizeof *icpt);
    km_model *model = km_model_alloc(&km_kind_rls2, KM_LOSS_RLS, X->n,
                                     p->classification ? p->nr_class : 0, nw, err);
    if (!model || !sv_rows || !coef || !keep.b || !s || !d || !icpt)
        goto nomem;
    for (int64_t i = 0; i < p->ntrain; i++) {
        int any = 0;
        for (int j = 0; j < nw; j++)
            any |= p->c[(size_t)i * (size_t)nw + (size_t)j] != 0;
        if (!any)
            continue;
        sv_rows[nsv] = train[i];
        memcpy(coef + (size_t)nsv * (size_t)nw, p->c + (size_t)i * (size_t)nw,
               (size_t)nw * sizeof *coef);
        nsv++;
    }
    for (int k = 0; k < m; k++) {
        int any = 0;
        for (int j = 0; j < nw; j++)
            any |= p->d[(size_t)k * (size_t)nw + (size_t)j] > 0;
        if (!any)
            continue;
        km_basis *b = &keep.b[keep.m];
        *b = basis->b[k];
        b->feat = NULL;
        if (b->nfeat) {
            b->feat = malloc((size_t)b->nfeat * sizeof *b->feat);
            if (!b->feat)
                goto nomem;
            memcpy(b->feat, basis->b[k].feat, (size_t)b->nfeat * sizeof *b->feat);
        }
        memcpy(s + (size_t)keep.m * (size_t)nw, p->s + (size_t)k * (size_t)nw,
               (size_t)nw * sizeof *s);
        memcpy(d + (size_t)keep.m * (size_t)nw, p->d + (size_t)k * (size_t)nw,
               (size_t)nw * sizeof *d);
        keep.m++;
    }
    memcpy(icpt, p->intercept, (size_t)nw * sizeof *icpt);
    if (p->classification)
        memcpy(model->labels, p->labels, (size_t)p->nr_class * sizeof *model->labels);
    km_problem *sv = kept_features(&keep, X, sv_rows, nsv, err);
    free(sv_rows);
    if (!sv) {
        km_basis_set_free(&keep);
        free(coef);
        free(s);
        free(d);
        free(icpt);
        km_model_free(model);
        return err->code;
    }
    if (km_model_set_mkl(model, &keep, s, d, icpt, p->row[p->chosen].lambda, sv, coef, err) != KM_OK) {
        km_model_free(model);
        return err->code;
    }
    *out = model;
    return KM_OK;
nomem:
    free(sv_rows);
    free(coef);
    km_basis_set_free(&keep);
    free(s);
    free(d);
    free(icpt);
    km_model_free(model);
    return km_error_nomem(err, "RLS2 model");
}

int km_rls2_looks_like_classes(const km_problem *P)
{
    double seen[32];
    int n = 0;
    for (int64_t i = 0; i < P->l; i++) {
        double y = P->y[i];
        if (y != floor(y))
            return 0;
        int k = 0;
        while (k < n && seen[k] != y)
            k++;
        if (k == n) {
            if (n == 32)
                return 0;
            seen[n++] = y;
        }
    }
    return 1;
}
