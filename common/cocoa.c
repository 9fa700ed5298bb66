/* cocoa.c - see cocoa.h. */
#include "cocoa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linear.h"
#include "method.h"
#include "model.h"
#include "rng.h"

/* sum_k value[k] u[index[k]] + bias u[n] over the row [b, e). */
static double row_dot(const km_problem *P, int64_t b, int64_t e, const double *u, int32_t n,
                      double bias)
{
    double z = 0;
    for (int64_t k = b; k < e; k++)
        z += P->value[k] * u[P->index[k]];
    return z + bias * u[n];
}

static void row_axpy(const km_problem *P, int64_t b, int64_t e, double h, double *u, int32_t n,
                     double bias)
{
    for (int64_t k = b; k < e; k++)
        u[P->index[k]] += h * P->value[k];
    u[n] += h * bias;
}

int km_cocoa_linear(km_dist *d, const km_problem *P, int32_t n, const double *y,
                    const double *C, const km_cocoa_param *par, double *w, double *c,
                    km_cocoa_result *res, km_error *err)
{
    int64_t m = P->l, dim = (int64_t)n + 1;
    km_loss loss = par->cd.loss;
    double eps = par->cd.eps, bias = par->bias >= 0 ? par->bias : 0;
    double sigma = par->sigma > 0 ? par->sigma : (double)d->size;   /* sigma' = R */
    km_dist_stats st0 = d->stats;
    memset(res, 0, sizeof *res);
    res->delta = par->cd.delta > 0 ? par->cd.delta : KM_CD_DEFAULT_GAP;
    if (P->n > n)
        return km_error_set(err, KM_EINTERNAL, "cocoa: local features beyond n");
    if (d->size == 1 && !par->rounds_at_1) {   /* sigma' = 1, one subproblem: serial CD */
        km_linear_data ld = {P, NULL, m, par->bias};
        km_cd_param cp = par->cd;
        km_cd_result r;
        double *wl = malloc((size_t)km_linear_dim(&ld) * sizeof *wl);
        if (!wl)
            return km_error_nomem(err, "cocoa");
        int rc = km_cd_linear(&ld, y, C, &cp, wl, c, &r, err);
        for (int64_t j = 0; j < dim; j++)
            w[j] = j < P->n ? wl[j] : 0;
        w[n] = wl[P->n];
        free(wl);
        res->rounds = r.iter;
        res->converged = r.converged;
        res->primal = r.primal;
        res->gap = r.gap;
        res->delta = r.delta;
        return rc;
    }
    size_t len = (size_t)(m > 0 ? m : 1);
    double *q = malloc(len * sizeof *q);             /* k_ii */
    double *cc = malloc(len * sizeof *cc);           /* c */
    double *c0 = malloc(len * sizeof *c0);           /* c at the round's start */
    double *z = malloc(len * sizeof *z);             /* x_i'w at the round's start */
    int64_t *perm = malloc(len * sizeof *perm);
    double *u = malloc((size_t)dim * sizeof *u);                /* w + sigma' dw */
    double *buf = malloc((size_t)(dim + 2) * sizeof *buf);      /* dw, then F and F - D */
    int rc = KM_OK;
    if (!q || !cc || !c0 || !z || !perm || !u || !buf) {
        rc = km_error_nomem(err, "cocoa");
        goto done;
    }
    int64_t nvis = 0;
    for (int64_t i = 0; i < m; i++) {
        double s = bias * bias;
        for (int64_t k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++)
            s += P->value[k] * P->value[k];
        q[i] = s;
        z[i] = 0;
        /* a zero row (k_ii = 0): c_i at the minimizer of its conjugate term (cd.c's rule) */
        cc[i] = s > 0 ? 0 : km_loss_dual_argmin(loss, y[i], C[i], eps);
        if (s > 0)
            perm[nvis++] = i;
    }
    memset(w, 0, (size_t)dim * sizeof *w);
    km_rng rng;   /* each rank its own stream, from (seed, rank) */
    km_rng_seed(&rng, par->cd.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(d->rank + 1)));
    for (int64_t t = 1; t <= par->cd.max_iter; t++) {
        memcpy(u, w, (size_t)dim * sizeof *u);
        memset(buf, 0, (size_t)(dim + 2) * sizeof *buf);
        memcpy(c0, cc, len * sizeof *c0);
        km_rng_shuffle(&rng, perm, nvis);
        for (int64_t a = 0; a < nvis; a++) {
            int64_t i = perm[a], b = P->row_ptr[i], e = P->row_ptr[i + 1];
            z[i] = row_dot(P, b, e, w, n, bias);        /* for the gap of w */
            /* the local subproblem: curvature sigma' k_ii, its gradient at u = w + sigma' dw */
            double zu = row_dot(P, b, e, u, n, bias);
            double alpha = 1 / (sigma * q[i]);          /* alpha_i = 1/(sigma' k_ii) */
            double v = alpha * zu - cc[i], stuck;       /* v_i = z_i/(sigma' k_ii) - c_i */
            double ci = km_loss_resolvent(loss, y[i], v, alpha, C[i], eps, &stuck);
            double h = ci - cc[i];
            if (h != 0) {
                row_axpy(P, b, e, sigma * h, u, n, bias);
                row_axpy(P, b, e, h, buf, n, bias);     /* dw_k += h x_i */
                cc[i] = ci;
            }
        }
        /* the gap terms of (c, w) at the round's start: F, F - D (Fenchel-Young) */
        km_cd_gap_terms(loss, eps, y, C, c0, z, 0, m, buf + dim);
        if ((rc = km_dist_allreduce(d, buf, dim + 2, KM_DIST_SUM, err)))
            goto done;
        double F = buf[dim], G = buf[dim + 1];
        double rel = !isfinite(F) || !isfinite(G) ? NAN : F > 0 ? (G > 0 ? G : 0) / F : 0;
        res->primal = F;
        res->gap = rel;
        if (t > 1 && rel <= res->delta) {   /* w of round t's start is certified: keep it */
            res->converged = 1;
            memcpy(cc, c0, len * sizeof *cc);
            break;
        }
        for (int64_t j = 0; j < dim; j++)   /* gamma = 1: add the changes */
            w[j] += buf[j];
        res->rounds = t;
        if (par->cd.progress)
            par->cd.progress(par->cd.user, t, rel, nvis);
    }
    if (!res->converged) {   /* at the cap: the terms of the last w */
        double g[2] = {0, 0};
        for (int64_t a = 0; a < nvis; a++) {
            int64_t i = perm[a];
            z[i] = row_dot(P, P->row_ptr[i], P->row_ptr[i + 1], w, n, bias);
        }
        km_cd_gap_terms(loss, eps, y, C, cc, z, 0, m, g);
        if ((rc = km_dist_allreduce(d, g, 2, KM_DIST_SUM, err)))
            goto done;
        res->primal = g[0];
        res->gap = !isfinite(g[0]) || !isfinite(g[1]) ? NAN
                   : g[0] > 0 ? (g[1] > 0 ? g[1] : 0) / g[0] : 0;
    }
    if (c)
        memcpy(c, cc, len * sizeof *c);
done:
    res->comm.collectives = d->stats.collectives - st0.collectives;
    res->comm.bytes = d->stats.bytes - st0.bytes;
    free(q);
    free(cc);
    free(c0);
    free(z);
    free(perm);
    free(u);
    free(buf);
    return rc;
}

/* ---- rows over ranks ---- */

static uint64_t mix64(uint64_t x)   /* splitmix64's finalizer */
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int km_dist_partition(km_dist *d, const km_problem *P, const int64_t *line, km_partition part,
                      uint64_t seed, km_problem **out, int64_t **out_line, km_error *err)
{
    int R = d->size;
    int64_t l = P->l;
    *out = NULL;
    if (out_line)
        *out_line = NULL;
    if (km_problem_nout(P) != 1)
        return km_error_set(err, KM_EINPUT, "multi-output rows cannot be spread over ranks");
    int *dest = malloc((size_t)(l > 0 ? l : 1) * sizeof *dest);
    int64_t *sb = calloc((size_t)R * 4, sizeof *sb), *sd = sb + R, *rb = sb + 2 * R,
            *rd = sb + 3 * R;
    int64_t *cnt = calloc((size_t)R * 2, sizeof *cnt), *cd8 = NULL;
    char *send = NULL, *recv = NULL;
    int64_t *lines = NULL;
    km_problem *S = NULL;
    int rc = !dest || !sb || !cnt || !(cd8 = malloc((size_t)R * sizeof *cd8))
             ? km_error_nomem(err, "partition") : KM_OK;
    if ((rc = km_dist_agree(d, rc, err)))   /* every rank takes the same collectives */
        goto out;
    /* a row travels as: line, y, nnz (8 bytes each), nnz indices (4), nnz values (8) */
    for (int64_t i = 0; i < l; i++) {
        int64_t nz = P->row_ptr[i + 1] - P->row_ptr[i];
        dest[i] = part == KM_PART_HASH ? (int)(mix64(seed ^ mix64((uint64_t)line[i])) %
                                               (uint64_t)R) : d->rank;
        sb[dest[i]] += 24 + 12 * nz;
    }
    int64_t tot = 0;
    for (int r = 0; r < R; r++) {
        sd[r] = tot;
        tot += sb[r];
    }
    /* the byte counts, each rank to each rank (8 bytes apiece) */
    for (int r = 0; r < R; r++) {
        cnt[r] = 8;
        cd8[r] = 8 * (int64_t)r;
    }
    rc = km_dist_alltoallv(d, sb, cnt, cd8, rb, cnt, cd8, err);
    int64_t rtot = 0;
    for (int r = 0; rc == KM_OK && r < R; r++) {
        rd[r] = rtot;
        rtot += rb[r];
    }
    if (rc == KM_OK && (!(send = malloc((size_t)(tot > 0 ? tot : 1))) ||
                        !(recv = malloc((size_t)(rtot > 0 ? rtot : 1)))))
        rc = km_error_nomem(err, "partition");
    if ((rc = km_dist_agree(d, rc, err)))
        goto out;
    int64_t *pos = cnt + R;
    for (int r = 0; r < R; r++)
        pos[r] = sd[r];
    for (int64_t i = 0; i < l; i++) {
        int64_t b = P->row_ptr[i], nz = P->row_ptr[i + 1] - b, *p = &pos[dest[i]];
        km_dist_put(send, p, &line[i], 8);
        km_dist_put(send, p, &P->y[i], 8);
        km_dist_put(send, p, &nz, 8);
        km_dist_put(send, p, P->index + b, 4 * nz);
        km_dist_put(send, p, P->value + b, 8 * nz);
    }
    if ((rc = km_dist_alltoallv(d, send, sb, sd, recv, rb, rd, err)))
        goto out;
    /* count, then build: from ranks in order (each sent its rows in line order) */
    int64_t m = 0, nnz = 0;
    for (int64_t p = 0; p < rtot; m++) {
        int64_t nz;
        memcpy(&nz, recv + p + 16, 8);
        nnz += nz;
        p += 24 + 12 * nz;
    }
    S = calloc(1, sizeof *S);
    lines = malloc((size_t)(m > 0 ? m : 1) * sizeof *lines);
    if (S) {
        S->row_ptr = malloc((size_t)(m + 1) * sizeof *S->row_ptr);
        S->index = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *S->index);
        S->value = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *S->value);
        S->y = malloc((size_t)(m > 0 ? m : 1) * sizeof *S->y);
    }
    if (!S || !lines || !S->row_ptr || !S->index || !S->value || !S->y) {
        rc = km_error_nomem(err, "partition");
        goto done;
    }
    S->l = m;
    S->nnz = nnz;
    S->row_ptr[0] = 0;
    int64_t p = 0;
    for (int64_t a = 0; a < m; a++) {
        int64_t nz, k = S->row_ptr[a];
        km_dist_get(recv, &p, &lines[a], 8);
        km_dist_get(recv, &p, &S->y[a], 8);
        km_dist_get(recv, &p, &nz, 8);
        km_dist_get(recv, &p, S->index + k, 4 * nz);
        km_dist_get(recv, &p, S->value + k, 8 * nz);
        S->row_ptr[a + 1] = k + nz;
        for (int64_t j = k; j < k + nz; j++)
            if (S->index[j] + 1 > S->n)
                S->n = S->index[j] + 1;
    }
done:
    if ((rc = km_dist_agree(d, rc, err)) == KM_OK) {
        *out = S;
        S = NULL;
        if (out_line) {
            *out_line = lines;
            lines = NULL;
        }
    }
out:
    km_problem_free(S);
    free(lines);
    free(dest);
    free(sb);
    free(cnt);
    free(cd8);
    free(send);
    free(recv);
    return rc;
}

/* ---- training a model ---- */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts and drops repeats; returns the count. */
static int64_t unique(double *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (k == 0 || v[i] != v[k - 1])
            v[k++] = v[i];
    return k;
}

/* The distinct labels over all ranks, ascending (collective). */
static int global_labels(km_dist *d, const km_problem *P, double **out, int64_t *nc,
                         km_error *err)
{
    int R = d->size;
    double *mine = malloc((size_t)(P->l > 0 ? P->l : 1) * sizeof *mine), *all = NULL;
    int64_t *rb = malloc((size_t)R * 2 * sizeof *rb), k = 0, tot = 0;
    int rc = mine && rb ? KM_OK : km_error_nomem(err, "labels");
    if (rc == KM_OK) {
        memcpy(mine, P->y, (size_t)P->l * sizeof *mine);
        k = unique(mine, P->l);
    }
    if ((rc = km_dist_agree(d, rc, err)) || (rc = km_dist_allgather_count(d, 8 * k, rb, err)))
        goto done;
    for (int r = 0; r < R; r++) {
        rb[R + r] = tot;
        tot += rb[r];
    }
    all = malloc((size_t)(tot > 0 ? tot : 1));
    if ((rc = km_dist_agree(d, all ? KM_OK : km_error_nomem(err, "labels"), err)) ||
        (rc = km_dist_allgatherv(d, mine, 8 * k, all, rb, rb + R, err)))
        goto done;
    *nc = unique(all, tot / 8);
    *out = all;
    all = NULL;
done:
    free(mine);
    free(all);
    free(rb);
    return rc;
}

typedef struct round_progress {
    const km_params *p;
    int cls;
} round_progress;

static void on_round(void *user, int64_t t, double gap, int64_t active)
{
    (void)active;
    const round_progress *rp = user;
    km_param_progress(rp->p, "  round %lld%s: gap = %.3g", (long long)t, rp->cls ? " (class)"
                      : "", gap);
}

int km_cocoa_train(km_dist *d, const km_method *m, const km_problem *P, const km_params *p,
                   int rounds_at_1, km_model **out, km_report *rep, km_error *err)
{
    *out = NULL;
    int li = km_loss_from_name(km_method_name(m));
    if (li < 0)
        return km_error_set(err, KM_EUSAGE, "--cocoa: -s %s is not a loss of the linear "
                            "solver (l1svm, l2svm, rls, rla, svr)", km_method_name(m));
    km_loss loss = (km_loss)li;
    int rc = km_method_check(m, p, err);
    if (rc)
        return rc;
    km_params_use(p, m);
    if (km_param_is_set(p, "kernel") || km_param_is_set(p, "solver"))
        return km_error_set(err, KM_EUSAGE, "--cocoa: the linear solver only (no -t, -a)");
    if (strcmp(km_param_text(p, "stop"), "step") == 0)
        return km_error_set(err, KM_EUSAGE, "--cocoa stops on the relative duality gap only "
                            "(--stop gap)");
    if (d->size == 1 && !rounds_at_1)   /* one rank: the serial solver, the serial model */
        return km_method_train(m, P, p, out, rep, err);
    memset(rep, 0, sizeof *rep);
    rep->converged = 1;
    int classify = km_loss_is_classification(loss);
    int64_t n = P->n, nc = 0;
    double *labels = NULL;
    if ((rc = km_dist_allreduce_i64(d, &n, 1, KM_DIST_MAX, err)))
        return rc;
    if (classify && (rc = global_labels(d, P, &labels, &nc, err)))
        return rc;
    if (classify && nc < 2) {
        free(labels);
        return km_error_set(err, KM_EINPUT, "the training data has only one class; %s needs "
                            "at least two", km_loss_name(loss));
    }
    int nr_w = nc > 2 ? (int)nc : 1;
    km_cocoa_param cp = {km_cd_param_default(), km_param_number(p, "bias"), 0, rounds_at_1};
    round_progress rp = {p, nr_w > 1};
    cp.cd.loss = loss;
    cp.cd.eps = loss == KM_LOSS_SVR ? km_param_number(p, "epsilon") : 0.1;
    cp.cd.delta = km_param_is_set(p, "tolerance") ? km_param_number(p, "tolerance") : 0;
    cp.cd.seed = (uint64_t)km_param_int(p, "seed");
    cp.cd.max_iter = km_param_int(p, "max_iter");
    cp.cd.progress = on_round;
    cp.cd.user = &rp;
    double Cval = km_param_number(p, "C");
    km_model *model = km_model_new(loss, (int32_t)n, (int)nc, nr_w, err);
    int64_t l = P->l, dim = n + 1;
    double *y = malloc((size_t)(l > 0 ? l : 1) * sizeof *y);
    double *C = malloc((size_t)(l > 0 ? l : 1) * sizeof *C);
    double *w = malloc((size_t)dim * sizeof *w);
    int *cls = malloc((size_t)(l > 0 ? l : 1) * sizeof *cls);
    rc = model && y && C && w && cls ? KM_OK : model ? km_error_nomem(err, "cocoa") : err->code;
    if (rc == KM_OK) {
        model->C = Cval;
        model->eps = cp.cd.eps;
        model->bias = cp.bias >= 0 ? cp.bias : -1;
        for (int k = 0; k < nc; k++)
            model->labels[k] = labels[k];
        for (int q = 0; km_param_value_at(p, "weight", q); q++) {
            const char *v = km_param_value_at(p, "weight", q), *colon = strrchr(v, ':');
            double lab = strtod(v, NULL);
            int found = 0;
            for (int k = 0; k < nc; k++)
                if (labels[k] == lab) {
                    model->label_weight[k] = strtod(colon + 1, NULL);
                    found = 1;
                }
            if (!found) {
                rc = km_error_set(err, KM_EUSAGE, "-w%g: no class with label %g in the "
                                  "training data", lab, lab);
                break;
            }
        }
    }
    for (int64_t i = 0; rc == KM_OK && classify && i < l; i++) {
        int k = 0;
        while (labels[k] != P->y[i])
            k++;
        cls[i] = k;
    }
    double F = 0, gap = 0;
    int64_t rounds = 0;
    km_dist_stats comm = {0, 0};
    rc = km_dist_agree(d, rc, err);
    for (int k = 0; rc == KM_OK && k < nr_w; k++) {
        for (int64_t i = 0; i < l; i++) {   /* as km_train (linear.c) */
            if (!classify) {
                y[i] = P->y[i];
                C[i] = Cval;
            } else if (nc == 2) {
                y[i] = cls[i] == 1 ? 1 : -1;
                C[i] = Cval * model->label_weight[cls[i]];
            } else {
                y[i] = cls[i] == k ? 1 : -1;
                C[i] = cls[i] == k ? Cval * model->label_weight[k] : Cval;
            }
        }
        km_cocoa_result res;
        if ((rc = km_cocoa_linear(d, P, (int32_t)n, y, C, &cp, w, NULL, &res, err)))
            break;
        if (!isfinite(res.primal) || !(res.gap >= 0)) {
            rc = km_error_set(err, KM_EINPUT, "the objective is not finite (%g): the feature "
                              "values are too large for w'x; scale them", res.primal);
            break;
        }
        int64_t rows_w = n + (cp.bias >= 0);
        for (int64_t j = 0; j < rows_w; j++)
            km_model_w(model)[j * nr_w + k] = w[j];
        F += res.primal;
        gap = res.gap > gap ? res.gap : gap;
        rounds += res.rounds;
        comm.collectives += res.comm.collectives;
        comm.bytes += res.comm.bytes;
        rep->converged &= res.converged;
        if (!res.converged)
            km_report_warn(rep, "%sstopped at the cap of %lld rounds (gap %.2g > %.2g); raise "
                           "--max-iter or -e", nr_w > 1 ? "a class " : "",
                           (long long)cp.cd.max_iter, res.gap, res.delta);
        if (nr_w > 1)
            km_report_say(rep, "class %g: rounds = %lld, objective = %.17g, gap = %.3g\n",
                          labels[k], (long long)res.rounds, res.primal, res.gap);
        if (k == 0)
            rep->gap = res.delta;   /* the tolerance, reported below */
    }
    if (rc == KM_OK) {
        double delta = rep->gap;
        km_report_say(rep, "rounds = %lld (CoCoA+, %d ranks, sigma' = %d; stop: gap <= %.3g)\n",
                      (long long)rounds, d->size, d->size, delta);
        km_report_say(rep, "objective = %.17g\n", F);
        km_report_say(rep, "gap = %.3g (relative duality gap (primal - dual) / primal%s)\n", gap,
                      nr_w > 1 ? ", the largest of all classes" : "");
        km_report_say(rep, "solver communication (rank %d) = %lld collectives, %lld bytes "
                      "(%lld per round)\n", d->rank, (long long)comm.collectives,
                      (long long)comm.bytes, (long long)(8 * (n + 3)));
        rep->objective = F;
        rep->gap = gap;
        *out = model;
        model = NULL;
    }
    km_model_free(model);
    free(labels);
    free(y);
    free(C);
    free(w);
    free(cls);
    return rc;
}

/* ---- the fixed point (2.10) with the rows of K over ranks ---- */

/* z[lo..hi) = rows lo..hi-1 of K times c: each z_i summed over j increasing, c_j = 0
 * skipped, z_i + c_j k_ij one term at a time: the order and bits of km_kmatrix_matvec
 * (whatever its cache holds). */
static int matvec_block(km_kmatrix *K, const double *c, int64_t lo, int64_t hi, double *z,
                        km_error *err)
{
    enum { T = 8 };   /* 8 rows at a time: 8 independent chains of additions, each in order */
    int64_t m = km_kmatrix_size(K);
    double *tile = malloc((size_t)T * (size_t)(m > 0 ? m : 1) * sizeof *tile);
    if (!tile)
        return km_error_nomem(err, "fixed point");
    for (int64_t i0 = lo; i0 < hi; i0 += T) {
        int nt = hi - i0 < T ? (int)(hi - i0) : T;
        const double *row[T];
        double s[T] = {0};
        for (int t = 0; t < nt; t++) {   /* copied: a row pointer lasts until the next call */
            const double *r = km_kmatrix_row(K, i0 + t, err);
            if (!r) {
                free(tile);
                return err->code;
            }
            memcpy(tile + (size_t)t * (size_t)m, r, (size_t)m * sizeof *tile);
            row[t] = tile + (size_t)t * (size_t)m;
        }
        for (int t = nt; t < T; t++)
            row[t] = row[0];
        for (int64_t j = 0; j < m; j++) {
            double cj = c[j];
            if (cj == 0)
                continue;
            for (int t = 0; t < T; t++)
                s[t] += cj * row[t][j];
        }
        for (int t = 0; t < nt; t++)
            z[i0 + t] = s[t];
    }
    free(tile);
    return KM_OK;
}

/* z = Kc on every rank: this rank's rows, then gathered. */
static int kc_gathered(km_dist *d, km_kmatrix *K, const double *c, int64_t lo, int64_t hi,
                       double *z, const int64_t *rb, km_error *err)
{
    int rc = km_dist_agree(d, matvec_block(K, c, lo, hi, z, err), err);
    return rc ? rc : km_dist_allgatherv(d, z + lo, 8 * (hi - lo), z, rb, rb + d->size, err);
}

int km_dist_fixedpoint(km_kmatrix *K, const double *y, const double *C, const km_cd_param *par,
                       km_alpha_rule rule, int threads, double *c, double *z, km_cd_result *res,
                       km_error *err)
{
    km_dist *d = km_dist_current();
    if (!d || d->size == 1 || rule == KM_ALPHA_NORM2)   /* norm2: every rank, serially */
        return km_fixedpoint(K, y, C, par, rule, threads, c, z, res, err);
    int R = d->size;
    int64_t m = km_kmatrix_size(K), lo = m * d->rank / R, hi = m * (d->rank + 1) / R;
    int64_t *rb = malloc((size_t)R * 2 * sizeof *rb);
    int rc = km_dist_agree(d, rb ? KM_OK : km_error_nomem(err, "fixed point"), err);
    if (rc) {
        free(rb);
        return rc;
    }
    for (int r = 0; r < R; r++) {   /* rank r's rows [m r/R, m (r+1)/R) of z */
        rb[R + r] = 8 * (m * r / R);
        rb[r] = 8 * (m * (r + 1) / R) - rb[R + r];
    }
    double scale = 0;   /* as km_fixedpoint (cd.c): tr(K), alpha = 1/scale (2.11) */
    for (int64_t i = 0; i < m; i++)
        scale += fabs(km_kmatrix_diag(K, i));
    double alpha = scale > 0 ? 1 / scale : 1;
    int gap_rule = par->stop != KM_STOP_STEP;
    double delta = par->delta > 0 ? par->delta
                   : gap_rule ? KM_CD_DEFAULT_GAP : KM_CD_DEFAULT_TOL * alpha;
    res->iter = 0;
    res->converged = 0;
    res->max_h = 0;
    res->delta = delta;
    for (int64_t i = 0; i < m; i++)
        c[i] = 0;
    /* step 1, z = K c: this rank's rows, then z gathered (8 m bytes a step over all ranks) */
#define KC() ((rc = kc_gathered(d, K, c, lo, hi, z, rb, err)) != KM_OK)
    for (int64_t iter = 1; iter <= par->max_iter; iter++) {
        if (KC())
            break;
        if (gap_rule && iter > 1 &&   /* every rank has z: the serial gap, the same bits */
            km_cd_relative_gap(par->loss, par->eps, y, C, c, z, m, NULL) <= delta) {
            res->converged = 1;
            break;
        }
        double max_h = 0;
        for (int64_t i = 0; i < m; i++) {   /* steps 2 and 3 on every rank (O(m)) */
            double v = alpha * z[i] - c[i], stuck;
            double ci = km_loss_resolvent(par->loss, y[i], v, alpha, C[i], par->eps, &stuck);
            double h = fabs(ci - c[i]);
            max_h = h > max_h ? h : max_h;
            c[i] = ci;
        }
        res->iter = iter;
        res->max_h = max_h;
        if (par->progress)
            par->progress(par->user, iter, max_h, m);
        if (!gap_rule && max_h < delta) {
            res->converged = 1;
            break;
        }
    }
    if (rc == KM_OK && (!res->converged || !gap_rule))
        rc = kc_gathered(d, K, c, lo, hi, z, rb, err);   /* z of the final c */
#undef KC
    if (rc == KM_OK)
        res->gap = km_cd_relative_gap(par->loss, par->eps, y, C, c, z, m, &res->primal);
    free(rb);
    return rc;
}
