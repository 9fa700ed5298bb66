/* method_polymkl.c - randomized mirror-descent MKL for polynomial kernels (seed 002, issue
 * 15) as a method: features and y standardized on the training rows, base kernels (one
 * linear kernel per feature, or a kernel-list file), the solvers of polymkl.c, the polymkl
 * model kind (model_polymkl.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"
#include "method.h"
#include "model.h"
#include "polymkl.h"
#include "svmlight.h"

static const km_option opt_degree = {"degree", "-d", "D", KM_OPT_INT, 0, 20, 0, NULL, "3",
                                     "the largest degree D of the product kernels"};
static const km_option opt_rho2 = {"rho2", "--rho2", "LIST", KM_OPT_TEXT, 0, 0, 0, NULL, "1",
                                   "rho_d^2 for d = 0..D, comma-separated (one value: all d; "
                                   "the paper's prior: 1,1,1,4)"};
static const km_option opt_kernels = {"kernels", "--kernels", "linear|FILE", KM_OPT_TEXT, 0, 0,
                                      0, NULL, "linear", "base kernels: one linear kernel per "
                                      "feature, or a kernel-list file (doc/kernel-list.md)"};
static const km_option opt_lambda = {"lambda", "--lambda", "L", KM_OPT_NUMBER, 0, INFINITY, 1,
                                     NULL, "1e-5", "lambda of J (on standardized y)"};
static const km_option opt_iters = {"iters", "--iters", "T", KM_OPT_INT, 0, 9.2e18, 0, NULL,
                                    "1000", "iterations (Kloft: of the closed form)"};
static const km_option opt_time = {"time_limit", "--time", "S", KM_OPT_NUMBER, 0, INFINITY, 0,
                                   NULL, "0", "also stop after S CPU seconds (0: no limit)"};
static const km_option opt_step = {"step", "--step", "G0", KM_OPT_NUMBER, 0, INFINITY, 1, NULL,
                                   "1", "gamma_0: step gamma_k = G0 / sqrt(k)"};
static const km_option opt_step_rule = {"step_rule", "--step-rule", "R", KM_OPT_CHOICE, 0, 0, 0,
                                        "unit|scaled|literal", "unit", "unit: theta_t "
                                        "+= gamma_k (the estimate's direction); scaled: "
                                        "gamma_k ||g||_1 / C_0, C_0 = ||g||_1 at theta = 0; "
                                        "literal: gamma_k ||g||_1 (issue 15 as written)"};
static const km_option opt_sampler = {"sampler", "--sampler", "S", KM_OPT_CHOICE, 0, 0, 0,
                                      "alg3|uniform|full", "alg3", "the tuple of a step: "
                                      "Algorithm 3, uniform (UCD), or |g|/||g||_1 by "
                                      "enumeration"};
static const km_option opt_solver = {"solver", "-a", "A", KM_OPT_CHOICE, 0, 0, 0, "stoch|kloft",
                                     "stoch", "stoch: Algorithm 2; kloft: Kloft's closed form "
                                     "over all tuples"};
static const km_option opt_average = {"average", "--average", NULL, KM_OPT_SWITCH, 0, 0, 0, NULL,
                                      NULL, "the model takes the averaged iterate"};
static const km_option opt_tol = {"tolerance", "-e", "delta", KM_OPT_NUMBER, 0, INFINITY, 1,
                                  NULL, "1e-10", "Kloft: stop when the relative gap is <= "
                                  "delta"};
static const km_option opt_raw = {"no_standardize", "--no-standardize", NULL, KM_OPT_SWITCH, 0,
                                  0, 0, NULL, NULL, "features and y as they are (no centering "
                                  "or scaling)"};
static const km_option opt_trace = {"path_table", "-o", "FILE", KM_OPT_OUTPUT, 0, 0, 0, NULL,
                                    NULL, "the trace (CSV): iteration, seconds, J, active, "
                                    "g1, gap; with -L the path: lambda, iterations, seconds, "
                                    "J, gap, active, valid_mse, chosen"};
static const km_option opt_sv_form = {"sv_form", "--sv-form", NULL, KM_OPT_SWITCH, 0, 0, 0, NULL,
                                      NULL, "the model without the explicit polynomial form "
                                      "(linear base kernels): predict evaluates the support "
                                      "vector form"};
static const km_option opt_rho_mono = {"rho_monomial", "--rho-monomial", NULL, KM_OPT_SWITCH, 0,
                                       0, 0, NULL, NULL, "rho_t^2 = rho_d^2 sqrt(m_t), m_t the "
                                       "orderings of the tuple: the problem over distinct "
                                       "monomials with weight rho_d^2 each"};
static const km_option opt_lambdas = {"lambdas", "-L", "MIN:MAX:N", KM_OPT_RANGE, 0, 0, 0, NULL,
                                      NULL, "a path of N lambdas log-spaced from MAX down to "
                                      "MIN, theta warm-started along it; needs --valid"};
static const km_option opt_valid = {"valid", "--valid", "FILE", KM_OPT_TEXT, 0, 0, 0, NULL, NULL,
                                    "validation data for -L: the model takes the lambda of the "
                                    "least validation MSE"};

static const km_option *const options[] = {&opt_degree, &opt_rho2, &opt_kernels, &opt_lambda,
                                           &opt_iters, &opt_time, &opt_step, &opt_step_rule, &opt_sampler,
                                           &opt_solver, &opt_average, &opt_tol, &opt_raw,
                                           &km_opt_seed, &opt_trace, &opt_lambdas, &opt_valid,
                                           &opt_sv_form, &opt_rho_mono, NULL};
static const km_model_kind *const kinds[] = {&km_kind_polymkl, NULL};

static void on_trace(void *user, int64_t k, double sec, double J, int64_t active, double g1,
                     double gap)
{
    fprintf(user, "%lld,%.6g,%.17g,%lld,%.17g,%.6g\n", (long long)k, sec, J, (long long)active,
            g1, gap);
}

/* rho2[0..D] from "a,b,c" (one value: all degrees). */
static int parse_rho2(const char *s, int D, double *rho2, km_error *err)
{
    int k = 0;
    for (const char *p = s; *p && k <= D + 1;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v > 0) || !isfinite(v) || (*end && *end != ','))
            return km_error_set(err, KM_EUSAGE, "--rho2 %s: expected positive numbers "
                                "separated by commas", s);
        if (k <= D)
            rho2[k] = v;
        k++;
        p = *end ? end + 1 : end;
    }
    if (k == 1)
        for (int d = 1; d <= D; d++)
            rho2[d] = rho2[0];
    else if (k != D + 1)
        return km_error_set(err, KM_EUSAGE, "--rho2 %s: need 1 or D + 1 = %d values", s, D + 1);
    return KM_OK;
}

/* A copy of a basis set (each kernel formatted and parsed back: the same bits). */
static int basis_copy(const km_basis_set *src, int32_t nf, km_basis_set *dst, km_error *err)
{
    dst->m = 0;
    if (!(dst->b = calloc((size_t)src->m, sizeof *dst->b)))
        return km_error_nomem(err, "polymkl model");
    for (; dst->m < src->m; dst->m++) {
        char spec[4096];
        if ((size_t)km_basis_format(&src->b[dst->m], spec, sizeof spec) >= sizeof spec)
            return km_error_set(err, KM_EINTERNAL, "polymkl: a base kernel too long to copy");
        int rc = km_basis_parse(spec, nf, &dst->b[dst->m], err);
        if (rc)
            return rc;
    }
    return KM_OK;
}

/* The model of S's theta and c: the tuples with theta_t > 0, the rows with c_i != 0 (Z:
 * n standardized rows of nf features, row-major); b0 gives the basis, rho2, shift, scale,
 * y_mean, y_scale (copied). */
static int make_model(const km_polymkl *S, const km_polymkl_body *b0, const double *Z,
                      int64_t n, int32_t nf, double lambda, km_model **out, km_error *err)
{
    int D = b0->D, Dm = D > 0 ? D : 1;
    int64_t nt = km_polymkl_active(S), nsv = 0;
    km_polymkl_body b = {0};
    b.D = D;
    b.lambda = lambda;
    b.nt = nt;
    b.y_mean = b0->y_mean;
    b.y_scale = b0->y_scale;
    b.use_sv = b0->use_sv;
    b.mono = b0->mono;
    const double *c = km_polymkl_c(S);
    int64_t *rp = malloc((size_t)(n + 1) * sizeof *rp);
    int32_t *ix = malloc(((size_t)n * (size_t)nf + 1) * sizeof *ix);
    double *val = malloc(((size_t)n * (size_t)nf + 1) * sizeof *val);
    double *cs = malloc((size_t)n * sizeof *cs);
    km_model *m = km_model_alloc(&km_kind_polymkl, KM_LOSS_RLS, nf, 0, 1, err);
    int rc = m ? KM_OK : KM_EINTERNAL;
    if (rc == KM_OK && (!(b.rho2 = malloc((size_t)(D + 1) * sizeof *b.rho2)) ||
                        !(b.shift = malloc((size_t)nf * sizeof *b.shift)) ||
                        !(b.scale = malloc((size_t)nf * sizeof *b.scale)) ||
                        !(b.td = malloc((size_t)(nt + 1) * sizeof *b.td)) ||
                        !(b.tidx = calloc((size_t)(nt + 1) * (size_t)Dm, sizeof *b.tidx)) ||
                        !(b.theta = malloc((size_t)(nt + 1) * sizeof *b.theta)) || !rp || !ix ||
                        !val || !cs))
        rc = km_error_nomem(err, "polymkl model");
    if (rc == KM_OK)
        rc = basis_copy(&b0->basis, nf, &b.basis, err);
    if (rc == KM_OK) {
        memcpy(b.rho2, b0->rho2, (size_t)(D + 1) * sizeof *b.rho2);
        memcpy(b.shift, b0->shift, (size_t)nf * sizeof *b.shift);
        memcpy(b.scale, b0->scale, (size_t)nf * sizeof *b.scale);
        for (int64_t t = 0; t < nt; t++)
            b.theta[t] = km_polymkl_theta_at(S, t, &b.td[t], b.tidx + t * Dm);
        int64_t nnz = 0;
        rp[0] = 0;
        for (int64_t i = 0; i < n; i++)
            if (c[i] != 0) {
                for (int32_t j = 0; j < nf; j++)
                    if (Z[i * nf + j] != 0) {
                        ix[nnz] = j;
                        val[nnz++] = Z[i * nf + j];
                    }
                cs[nsv++] = c[i];
                rp[nsv] = nnz;
            }
        rc = km_problem_from_csr(nsv, nf, rp, ix, val, cs, NULL, &b.sv, err);
    }
    free(rp);
    free(ix);
    free(val);
    if (rc == KM_OK) {
        b.c = cs;
        cs = NULL;
        rc = km_model_set_polymkl(m, &b, err);   /* owns b's arrays from here on */
    }
    free(cs);
    km_basis_set_free(&b.basis);
    free(b.rho2);
    free(b.shift);
    free(b.scale);
    free(b.td);
    free(b.tidx);
    free(b.theta);
    km_problem_free(b.sv);
    if (rc == KM_OK)
        *out = m;
    else
        km_model_free(m);
    return rc;
}

/* The mean squared error of m's predictions on V. */
static int valid_mse(const km_model *m, const km_problem *V, double *mse, km_error *err)
{
    double *pred = malloc((size_t)(V->l > 0 ? V->l : 1) * sizeof *pred);
    if (!pred)
        return km_error_nomem(err, "polymkl validation");
    int rc = km_predict(m, V, pred, err);
    double s = 0;
    for (int64_t i = 0; rc == KM_OK && i < V->l; i++)
        s += (pred[i] - V->y[i]) * (pred[i] - V->y[i]);
    *mse = s / (double)V->l;
    free(pred);
    return rc;
}

static int train(const km_problem *P0, const int64_t *rows, int64_t count, const km_params *p,
                 km_model **out, km_report *rep, km_error *err)
{
    km_problem *sub = rows ? km_problem_subset(P0, rows, count, err) : NULL;
    const km_problem *P = rows ? sub : P0;
    if (!P)
        return err->code;
    int64_t n = P->l;
    int32_t nf = P->n;
    int D = (int)km_param_int(p, "degree"), rc = km_problem_single(P, "the data", err);
    double rho2[21];
    if (rc == KM_OK && (n < 1 || nf < 1))
        rc = km_error_set(err, KM_EINPUT, "-s polymkl needs rows and features");
    if (rc == KM_OK)
        rc = parse_rho2(km_param_text(p, "rho2"), D, rho2, err);
    km_polymkl_body b = {0};
    double *Z = NULL, *y = NULL, *X = NULL, **K = NULL;
    km_polymkl *S = NULL;
    FILE *trace = NULL;
    const char *kspec = km_param_text(p, "kernels"), *tpath = km_param_text(p, "path_table");
    if (rc == KM_OK) {
        if (strcmp(kspec, "linear") == 0)
            rc = km_basis_linear(nf, &b.basis, err);
        else
            rc = km_basis_read_list(kspec, nf, &b.basis, err);
    }
    int r = b.basis.m, raw = km_param_switch(p, "no_standardize");
    if (rc == KM_OK && (!(Z = calloc((size_t)n * (size_t)nf, sizeof *Z)) ||
                        !(y = malloc((size_t)n * sizeof *y)) ||
                        !(b.shift = calloc((size_t)nf, sizeof *b.shift)) ||
                        !(b.scale = malloc((size_t)nf * sizeof *b.scale))))
        rc = km_error_nomem(err, "polymkl");
    if (rc == KM_OK) {   /* Z = standardized rows (row-major), y standardized */
        for (int64_t i = 0; i < n; i++)
            for (int64_t q = P->row_ptr[i]; q < P->row_ptr[i + 1]; q++)
                Z[i * nf + P->index[q]] = P->value[q];
        double ys = 0, ym = 0;
        for (int64_t i = 0; i < n; i++)
            ym += P->y[i];
        ym = raw ? 0 : ym / (double)n;
        for (int64_t i = 0; i < n; i++)
            ys += (P->y[i] - ym) * (P->y[i] - ym);
        ys = raw || !(ys > 0) ? 1 : sqrt(ys / (double)n);
        b.y_mean = ym;
        b.y_scale = ys;
        for (int64_t i = 0; i < n; i++)
            y[i] = (P->y[i] - ym) / ys;
        for (int32_t j = 0; j < nf; j++) {
            double mu = 0, sd = 0;
            for (int64_t i = 0; i < n; i++)
                mu += Z[i * nf + j];
            mu = raw ? 0 : mu / (double)n;
            for (int64_t i = 0; i < n; i++)
                sd += (Z[i * nf + j] - mu) * (Z[i * nf + j] - mu);
            sd = raw || !(sd > 0) ? 1 : sqrt(sd / (double)n);
            b.shift[j] = mu;
            b.scale[j] = sd;
            for (int64_t i = 0; i < n; i++)
                Z[i * nf + j] = (Z[i * nf + j] - mu) / sd;
        }
    }
    int rank_one = rc == KM_OK;
    for (int j = 0; rank_one && j < r; j++)   /* linear kernels on one feature each */
        rank_one = b.basis.b[j].kernel.type == KM_KERNEL_LINEAR &&
                   (b.basis.b[j].nfeat == 1 || (b.basis.b[j].nfeat == 0 && nf == 1));
    int32_t *zi = NULL;
    if (rc == KM_OK && !(zi = malloc((size_t)nf * sizeof *zi)))
        rc = km_error_nomem(err, "polymkl");
    for (int32_t j = 0; rc == KM_OK && j < nf; j++)
        zi[j] = j;
    if (rc == KM_OK && rank_one) {
        if (!(X = malloc((size_t)n * (size_t)r * sizeof *X)))
            rc = km_error_nomem(err, "polymkl");
        for (int j = 0; rc == KM_OK && j < r; j++) {
            int32_t f = b.basis.b[j].nfeat ? b.basis.b[j].feat[0] : 0;
            for (int64_t i = 0; i < n; i++)
                X[(int64_t)j * n + i] = Z[i * nf + f];
        }
    } else if (rc == KM_OK) {   /* dense base kernel matrices */
        if (!(K = calloc((size_t)r, sizeof *K)))
            rc = km_error_nomem(err, "polymkl");
        for (int j = 0; rc == KM_OK && j < r; j++) {
            if (!(K[j] = malloc((size_t)n * (size_t)n * sizeof **K))) {
                rc = km_error_nomem(err, "polymkl base kernels");
                break;
            }
            for (int64_t a = 0; a < n; a++)
                for (int64_t c = 0; c <= a; c++)
                    K[j][a * n + c] = K[j][c * n + a] =
                        km_basis_eval(&b.basis.b[j], zi, Z + a * nf, nf, zi, Z + c * nf, nf);
        }
    }
    /* lambda, or the path: nl lambdas from lmax down to lmin */
    double lam0 = km_param_number(p, "lambda"), lmin = lam0, lmax = lam0;
    int nl = 1, path = km_param_is_set(p, "lambdas");
    const char *vpath = km_param_text(p, "valid");
    km_problem *V = NULL;
    if (path)
        km_param_range(p, "lambdas", &lmin, &lmax, &nl);
    if (rc == KM_OK && path && !vpath)
        rc = km_error_set(err, KM_EUSAGE, "-L needs --valid FILE (the lambda is chosen on it)");
    if (rc == KM_OK && path && km_param_is_set(p, "lambda"))
        rc = km_error_set(err, KM_EUSAGE, "--lambda or -L, not both");
    if (rc == KM_OK && vpath && !path)
        rc = km_error_set(err, KM_EUSAGE, "--valid goes with -L MIN:MAX:N");
    if (rc == KM_OK && vpath && (rc = km_svmlight_read(vpath, &V, err)) == KM_OK && V->l < 1)
        rc = km_error_set(err, KM_EINPUT, "%s: no rows", vpath);
    if (rc == KM_OK)
        S = km_polymkl_new(n, r, X, (const double *const *)K, y, D, rho2, lmax, err);
    if (rc == KM_OK && !S)
        rc = err->code;
    if (rc == KM_OK && tpath) {
        if (!(trace = fopen(tpath, "w")))
            rc = km_error_set(err, KM_EINPUT, "%s: cannot write the %s", tpath,
                              path ? "path" : "trace");
        else
            fputs(path ? "lambda,iterations,seconds,J,gap,active,valid_mse,chosen\n" :
                  "iteration,seconds,J,active,g1,gap\n", trace);
    }
    const char *smp = km_param_text(p, "sampler"), *sol = km_param_text(p, "solver");
    km_polymkl_param par = {
        .iters = km_param_int(p, "iters"), .seconds = km_param_number(p, "time_limit"),
        .step = km_param_number(p, "step"),
        .literal_step = strcmp(km_param_text(p, "step_rule"), "literal") == 0 ? 1 :
                        strcmp(km_param_text(p, "step_rule"), "unit") == 0 ? 2 : 0,
        .sampler = strcmp(smp, "alg3") == 0 ? KM_POLY_ALG3 : strcmp(smp, "uniform") == 0 ?
                   KM_POLY_UNIFORM : KM_POLY_FULL,
        .solver = strcmp(sol, "kloft") == 0 ? KM_POLY_KLOFT : KM_POLY_STOCH,
        .average = km_param_switch(p, "average"), .seed = (uint64_t)km_param_int(p, "seed"),
        .tol = km_param_number(p, "tolerance"), .gap_work = 1e8,
        .trace = trace && !path ? on_trace : NULL, .user = trace};
    km_polymkl_info info = {0};
    km_model *m = NULL;
    b.D = D;
    b.rho2 = rho2;
    b.use_sv = km_param_switch(p, "sv_form");
    b.mono = km_param_switch(p, "rho_monomial");
    if (rc == KM_OK && b.mono)
        rc = km_polymkl_set_monomial(S, 1, err);
    int chosen = -1;
    double best = INFINITY, best_lambda = lmax;
    km_polymkl_info best_info = {0};
    typedef struct { double lambda, J, gap, seconds, mse; int64_t iters, active; } path_row;
    path_row *rows_out = calloc((size_t)nl, sizeof *rows_out);
    if (rc == KM_OK && !rows_out)
        rc = km_error_nomem(err, "polymkl path");
    for (int k = 0; rc == KM_OK && k < nl; k++) {
        double lam = nl > 1 ? pow(10, log10(lmax) + (log10(lmin) - log10(lmax)) * k / (nl - 1))
                            : lmax;   /* log-spaced, decades exact */
        if (k > 0)
            rc = km_polymkl_set_lambda(S, lam, err);
        par.warm = k > 0;
        if (rc == KM_OK)
            rc = km_polymkl_run(S, &par, &info, err);
        par.k0 += info.iters;
        km_model *mk = NULL;
        if (rc == KM_OK)
            rc = make_model(S, &b, Z, n, nf, lam, &mk, err);
        double mse = NAN;
        if (rc == KM_OK && path)
            rc = valid_mse(mk, V, &mse, err);
        if (rc == KM_OK && path) {
            km_report_say(rep, "lambda %.6g: %lld iterations, J = %.10g, gap %.3g, %lld "
                          "tuples, validation MSE %.10g\n", lam, (long long)info.iters, info.J,
                          info.gap, (long long)km_polymkl_active(S), mse);
            rows_out[k] = (path_row){lam, info.J, info.gap, info.seconds, mse, info.iters,
                                     km_polymkl_active(S)};
        }
        if (rc == KM_OK && (!path || mse < best || chosen < 0)) {
            km_model_free(m);
            m = mk;
            mk = NULL;
            best = mse;
            best_lambda = lam;
            best_info = info;
            chosen = k;
        }
        km_model_free(mk);
    }
    b.rho2 = NULL;
    for (int k = 0; rc == KM_OK && path && trace && k < nl; k++)
        fprintf(trace, "%.17g,%lld,%.6g,%.17g,%.6g,%lld,%.17g,%d\n", rows_out[k].lambda,
                (long long)rows_out[k].iters, rows_out[k].seconds, rows_out[k].J,
                rows_out[k].gap, (long long)rows_out[k].active, rows_out[k].mse, k == chosen);
    free(rows_out);
    if (trace && fclose(trace) && rc == KM_OK)
        rc = km_error_set(err, KM_EINPUT, "%s: write error", tpath);
    if (rc == KM_OK) {
        const km_polymkl_body *mb = m->body;
        rep->objective = best_info.J;
        rep->gap = best_info.gap;
        rep->converged = best_info.converged;
        km_report_say(rep, "polymkl: %lld rows, %d base kernels (%s), D = %d, |I| = %lld, "
                      "%s%s\n", (long long)n, r, rank_one ? "rank one" : "dense", D,
                      (long long)km_polymkl_count(S), par.solver == KM_POLY_KLOFT ?
                      "Kloft's closed form" : par.sampler == KM_POLY_ALG3 ?
                      "Algorithm 3" : par.sampler == KM_POLY_UNIFORM ? "UCD" :
                      "sampling by enumeration", par.average ? ", averaged" : "");
        if (path)
            km_report_say(rep, "chosen lambda = %.17g (validation MSE %.17g)\n", best_lambda,
                          best);
        km_report_say(rep, "c-steps: %lld Cholesky factorizations, %lld CG steps\n",
                      (long long)info.factorizations, (long long)info.cg_steps);
        km_report_say(rep, "iterations = %lld\nJ = %.17g\ngap = %.3g\nactive tuples = "
                      "%lld, ||theta|| = %.6g\ntime = %.3f s CPU\n", (long long)best_info.iters,
                      best_info.J, best_info.gap, (long long)mb->nt,
                      km_polymkl_theta_norm(S), best_info.seconds);
        if (par.solver == KM_POLY_KLOFT && !best_info.converged)
            km_report_warn(rep, "Kloft: stopped at %lld iterations, gap %.2g > %.2g",
                           (long long)best_info.iters, best_info.gap, par.tol);
    }
    if (rc == KM_OK)
        *out = m;
    else
        km_model_free(m);
    km_problem_free(V);
    km_basis_set_free(&b.basis);
    free(b.shift);
    free(b.scale);
    km_polymkl_free(S);
    free(zi);
    free(Z);
    free(y);
    free(X);
    if (K)
        for (int j = 0; j < r; j++)
            free(K[j]);
    free(K);
    km_problem_free(sub);
    return rc;
}

const km_method km_method_polymkl = {"polymkl", "randomized MKL of polynomial kernels (seed 002; "
                                     "squared loss)", options, kinds, 0, NULL, train};
