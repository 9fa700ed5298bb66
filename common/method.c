/* method.c - see method.h: the table of methods, parameter checks, training and
 * cross-validation by the table. */
#include "error.h"
#include "blas.h"
#include "method.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "kernel.h"
#include "metrics.h"
#include "model.h"
#include "rng.h"
#include "tasks.h"

/* The built-in rows: adding a method = its module + a row here. */
static const km_method *const builtin[] = {
    &km_method_l1svm, &km_method_l2svm, &km_method_rls, &km_method_rla, &km_method_svr,
    &km_method_logreg, &km_method_okl, &km_method_mtl, &km_method_mtmkl, &km_method_polymkl,
};
#define NBUILTIN ((int)(sizeof builtin / sizeof *builtin))
#define MAX_REGISTERED 64

static const km_method *registered[MAX_REGISTERED];
static int nregistered;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

int km_method_count(void)
{
    return NBUILTIN + nregistered;
}

const km_method *km_method_at(int i)
{
    return i < 0 ? NULL : i < NBUILTIN ? builtin[i] : i < km_method_count()
                                                      ? registered[i - NBUILTIN] : NULL;
}

const km_method *km_method_find(const char *name)
{
    for (int i = 0; name && i < km_method_count(); i++)
        if (strcmp(km_method_at(i)->name, name) == 0)
            return km_method_at(i);
    return NULL;
}

const char *km_method_name(const km_method *m)
{
    return m->name;
}

const char *km_method_summary(const km_method *m)
{
    return m->help;
}

int km_method_classifies(const km_method *m)
{
    return m->classification;
}

const km_option *km_method_option(const km_method *m, const char *name)
{
    for (const km_option *const *o = m->options; *o; o++)
        if (strcmp((*o)->name, name) == 0 || strcmp((*o)->flag, name) == 0)
            return *o;
    return NULL;
}

const km_option *km_option_find(const char *name)
{
    for (int i = 0; i < km_method_count(); i++) {
        const km_option *o = km_method_option(km_method_at(i), name);
        if (o)
            return o;
    }
    return NULL;
}

/* Kinds made by the tools outside the table: rls2-path. */
static const km_model_kind *const other_kinds[] = {&km_kind_rls2, NULL};

const km_model_kind *km_model_kind_find(const char *name)
{
    for (const km_model_kind *const *k = other_kinds; name && *k; k++)
        if (strcmp((*k)->name, name) == 0)
            return *k;
    for (int i = 0; name && i < km_method_count(); i++)
        for (const km_model_kind *const *k = km_method_at(i)->kinds; *k; k++)
            if (strcmp((*k)->name, name) == 0)
                return *k;
    return NULL;
}

int km_method_register(const km_method *m, km_error *err)
{
    if (!m || !m->name || !m->options || !m->kinds || !m->train)
        return km_error_set(err, KM_EUSAGE, "a method needs a name, options, kinds and train");
    pthread_mutex_lock(&reg_lock);
    int rc = KM_OK;
    if (km_method_find(m->name))
        rc = km_error_set(err, KM_EUSAGE, "method '%s' exists already", m->name);
    for (const km_option *const *o = m->options; rc == KM_OK && *o; o++) {
        const km_option *same = km_option_find((*o)->flag);
        if (same && strcmp(same->name, (*o)->name) != 0)
            rc = km_error_set(err, KM_EUSAGE, "method '%s': option %s means '%s' elsewhere, "
                              "not '%s'", m->name, (*o)->flag, same->name, (*o)->name);
    }
    for (const km_model_kind *const *k = m->kinds; rc == KM_OK && *k; k++) {
        const km_model_kind *same = km_model_kind_find((*k)->name);
        if (same && same != *k)
            rc = km_error_set(err, KM_EUSAGE, "method '%s': model kind '%s' exists already",
                              m->name, (*k)->name);
    }
    if (rc == KM_OK && nregistered == MAX_REGISTERED)
        rc = km_error_set(err, KM_EUSAGE, "too many methods registered");
    if (rc == KM_OK)
        registered[nregistered++] = m;
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

int km_method_check(const km_method *m, const km_params *p, km_error *err)
{
    const char *name, *value;
    for (int i = 0; km_params_each(p, i, &name, &value); i++) {
        const km_option *o = km_method_option(m, name);
        if (!o) {
            const km_option *any = km_option_find(name);
            return km_error_set(err, KM_EUSAGE, "%s (%s) does not apply to -s %s; see train "
                                "-s %s -h", any ? any->flag : name, name, m->name, m->name);
        }
        int rc = km_option_check(o, value, err);
        if (rc)
            return rc;
    }
    return KM_OK;
}

/* Appends text to the growing buffer *t (length *len); -1 when out of memory. */
static int put_text(char **t, size_t *len, const char *text)
{
    size_t n = strlen(text);
    char *g = realloc(*t, *len + n + 1);
    if (!g)
        return -1;
    memcpy(g + *len, text, n + 1);
    *t = g;
    *len += n;
    return 0;
}

/* Appends "  HEAD  text" with text wrapped at 88 columns, continuation lines indented. */
static int put_wrapped(char **t, size_t *len, const char *head, const char *text)
{
    enum { INDENT = 19, WIDTH = 88 };
    char line[WIDTH + 64];
    int n = snprintf(line, sizeof line, "  %-*s", INDENT - 3, head);
    if (strlen(head) > INDENT - 4) {   /* a long head: the text starts on the next line */
        if (put_text(t, len, line) || put_text(t, len, "\n"))
            return -1;
        n = snprintf(line, sizeof line, "%*s", INDENT - 1, "");
    }
    const char *p = text;
    while (*p) {
        size_t room = (size_t)(WIDTH - n - 1), k = strlen(p);
        if (k > room) {   /* break at the last space that fits */
            k = room;
            while (k > 0 && p[k] != ' ')
                k--;
            if (k == 0)
                k = strcspn(p, " ");
        }
        snprintf(line + n, sizeof line - (size_t)n, " %.*s\n", (int)k, p);
        if (put_text(t, len, line))
            return -1;
        p += k;
        while (*p == ' ')
            p++;
        n = snprintf(line, sizeof line, "%*s", INDENT - 1, "");
    }
    return 0;
}

char *km_method_help(const km_method *m)
{
    char *t = NULL, buf[1024];
    size_t len = 0;
    int bad = put_text(&t, &len, "");
    snprintf(buf, sizeof buf, "-s %s: %s\n", m->name, m->help);
    bad |= put_text(&t, &len, buf);
    for (const km_option *const *o = m->options; *o && !bad; o++) {
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", (*o)->flag, (*o)->arg ? " " : "",
                 (*o)->arg ? (*o)->arg : "");
        snprintf(buf, sizeof buf, "%s%s%s%s", (*o)->help, (*o)->def ? " (default " : "",
                 (*o)->def ? (*o)->def : "", (*o)->def ? ")" : "");
        bad |= put_wrapped(&t, &len, head, buf);
    }
    if (m->no_cv && !bad) {
        snprintf(buf, sizeof buf, "-v does not apply: %s", m->no_cv);
        bad |= put_wrapped(&t, &len, "", buf);
    }
    if (bad) {
        free(t);
        return NULL;
    }
    return t;
}

/* ---- reports ---- */

void km_report_free(km_report *r)
{
    if (!r)
        return;
    free(r->text);
    for (int i = 0; i < r->nr_warnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    memset(r, 0, sizeof *r);
}

static void report_init(km_report *r)
{
    memset(r, 0, sizeof *r);
    r->objective = NAN;
    r->gap = NAN;
    r->converged = 1;
}

int km_report_warn(km_report *rep, const char *fmt, ...)
{
    if (!rep)
        return KM_OK;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char **grown = realloc(rep->warnings, (size_t)(rep->nr_warnings + 1) * sizeof *grown);
    if (!grown)
        return KM_EINTERNAL;
    rep->warnings = grown;
    if (!(grown[rep->nr_warnings] = strdup(line)))
        return KM_EINTERNAL;
    rep->nr_warnings++;
    return KM_OK;
}

int km_report_say(km_report *rep, const char *fmt, ...)
{
    if (!rep)
        return KM_OK;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t len = rep->text ? strlen(rep->text) : 0;
    char *t = realloc(rep->text, len + (size_t)n + 1);
    if (!t)
        return KM_EINTERNAL;
    va_start(ap, fmt);
    vsnprintf(t + len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    rep->text = t;
    return KM_OK;
}

/* ---- training ---- */

int km_method_train(const km_method *m, const km_problem *P, const km_params *p,
                    km_model **out, km_report *rep, km_error *err)
{
    km_report local;
    km_params *empty = NULL;
    *out = NULL;
    if (!rep)
        rep = &local;
    report_init(rep);
    if (!m)
        return km_error_set(err, KM_EUSAGE, "no method");
    if (!p && !(p = empty = km_params_new()))
        return km_error_nomem(err, "parameters");
    int rc = km_method_check(m, p, err);
    if (rc == KM_OK) {
        km_params_use(p, m);
        km_blas_serial();   /* the same bits for any thread count (blas.h) */
        rc = m->train(P, NULL, P->l, p, out, rep, err);
    }
    km_params_free(empty);
    if (rep == &local)
        km_report_free(&local);
    return rc;
}

/* Cross-validation: every fold is one task. */
typedef struct cv_job {
    const km_method *m;
    const km_problem *P;
    const km_params *p;      /* the caller's, with the threads of each fold */
    const int *fold;
    int64_t *train;          /* per worker: l row indices */
    double *pred;
    km_report *rep;          /* per fold */
    km_error *errs;          /* per fold */
    int threads;             /* per fold */
    double *score;           /* NULL, or l decision values for the class pos (AUC) */
    double pos;
    km_model **models;       /* NULL, or k: in, each fold's warm start (NULL: none); out,
                                each fold's model (a C path's next step starts from it) */
} cv_job;

/* The decision value of a fold's model for class pos (binary: the sign of w'x for the larger
 * label; one-versus-all: pos's own; -inf when the fold had no row of pos); regression: the
 * value. */
static double cv_score(const km_model *model, const double *dec, double pos)
{
    if (model->nr_class == 0)
        return dec[0];
    if (model->nr_class == 2 && model->nr_w == 1)
        return model->labels[1] == pos ? dec[0] : model->labels[0] == pos ? -dec[0] : -INFINITY;
    for (int k = 0; k < model->nr_class && k < model->nr_w; k++)
        if (model->labels[k] == pos)
            return dec[k];
    return -INFINITY;
}

/* Trains on every fold but f, predicts fold f. */
static int cv_fold(void *ctx, int64_t ff, int worker)
{
    cv_job *J = ctx;
    const km_problem *P = J->P;
    int f = (int)ff;
    int64_t l = P->l, m = 0, nt = 0;
    int64_t *train = J->train + (size_t)worker * (size_t)l;
    km_error *err = &J->errs[f];
    for (int64_t i = 0; i < l; i++)
        if (J->fold[i] != f)
            train[m++] = i;
    km_model *model = NULL;
    report_init(&J->rep[f]);
    km_params *warm = NULL;   /* this fold's warm start: its model of the last C */
    if (J->models && J->models[f]) {
        if (!(warm = km_params_copy(J->p, err)))
            return err->code;
        km_params_set_init(warm, J->models[f]);
    }
    int rc = J->m->train(P, train, m, warm ? warm : J->p, &model, &J->rep[f], err);
    km_params_free(warm);
    if (rc)
        return rc;
    for (int64_t i = 0; i < l; i++)   /* the held-out rows reuse the tail of train[] */
        if (J->fold[i] == f)
            train[m + nt++] = i;
    int nw = model->nr_w;
    int64_t no = model->nr_output > 0 ? model->nr_output : 1;
    double *dec = malloc((size_t)(nt * nw + 1) * sizeof *dec);
    double *out = malloc((size_t)no * sizeof *out);
    if (!dec || !out)
        rc = km_error_nomem(err, "cross-validation");
    else
        rc = km_model_decision_rows(model, P, train + m, nt, dec, J->threads, err);
    for (int64_t a = 0; a < nt && rc == KM_OK; a++) {
        km_model_outputs(model, dec + a * nw, out);
        J->pred[train[m + a]] = out[0];
        if (J->score)
            J->score[train[m + a]] = cv_score(model, dec + a * nw, J->pos);
    }
    free(dec);
    free(out);
    if (J->models && rc == KM_OK) {
        km_model_free(J->models[f]);
        J->models[f] = model;
        model = NULL;
    }
    km_model_free(model);
    return rc;
}

/* A fold's result for km_dist_tasks_run (folds on ranks): the predictions of its rows in row
 * order, then its report's gap, converged and warnings. */
static int64_t cv_size(void *ctx, int64_t f)
{
    cv_job *J = ctx;
    const km_report *r = &J->rep[f];
    int64_t s = 8 + 8 + 8;   /* gap, converged, the number of warnings */
    for (int64_t i = 0; i < J->P->l; i++)
        s += J->fold[i] == f ? (J->score ? 16 : 8) : 0;   /* --metric auc: the scores too */
    for (int w = 0; w < r->nr_warnings; w++)
        s += 8 + (int64_t)strlen(r->warnings[w]);
    return s;
}

static void cv_pack(void *ctx, int64_t f, void *buf)
{
    cv_job *J = ctx;
    const km_report *r = &J->rep[f];
    int64_t pos = 0, conv = r->converged, nw = r->nr_warnings;
    for (int64_t i = 0; i < J->P->l; i++)
        if (J->fold[i] == f) {
            km_dist_put(buf, &pos, &J->pred[i], 8);
            if (J->score)
                km_dist_put(buf, &pos, &J->score[i], 8);
        }
    km_dist_put(buf, &pos, &r->gap, 8);
    km_dist_put(buf, &pos, &conv, 8);
    km_dist_put(buf, &pos, &nw, 8);
    for (int w = 0; w < r->nr_warnings; w++) {
        int64_t len = (int64_t)strlen(r->warnings[w]);
        km_dist_put(buf, &pos, &len, 8);
        km_dist_put(buf, &pos, r->warnings[w], len);
    }
}

static int cv_unpack(void *ctx, int64_t f, const void *buf, km_error *err)
{
    cv_job *J = ctx;
    km_report *r = &J->rep[f];
    int64_t pos = 0, conv, nw;
    report_init(r);
    for (int64_t i = 0; i < J->P->l; i++)
        if (J->fold[i] == f) {
            km_dist_get(buf, &pos, &J->pred[i], 8);
            if (J->score)
                km_dist_get(buf, &pos, &J->score[i], 8);
        }
    km_dist_get(buf, &pos, &r->gap, 8);
    km_dist_get(buf, &pos, &conv, 8);
    km_dist_get(buf, &pos, &nw, 8);
    r->converged = (int)conv;
    for (int64_t w = 0; w < nw; w++) {
        int64_t len;
        km_dist_get(buf, &pos, &len, 8);
        const char *text = (const char *)buf + pos;
        pos += len;
        if (km_report_warn(r, "%.*s", (int)len, text))
            return km_error_nomem(err, "cross-validation");
    }
    return KM_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* km_method_cross_validate; score (may be NULL) gets the decision values for class pos. */
static int cv_run(const km_method *m, const km_problem *P, const km_params *p, int k,
                  double *pred, double *score, double pos, km_model **models, km_report *rep,
                  km_error *err)
{
    int64_t l = P->l;
    km_report local;
    if (!rep)
        rep = &local;
    report_init(rep);
    if (m->no_cv)
        return km_error_set(err, KM_EUSAGE, "-v does not apply to -s %s: %s", m->name,
                            m->no_cv);
    if (k < 2 || k > l)
        return km_error_set(err, KM_EUSAGE, "the number of folds must be between 2 and the "
                            "number of examples (%lld)", (long long)l);
    int rc = km_method_check(m, p, err);
    if (rc)
        return rc;
    km_params_use(p, m);
    km_blas_serial();   /* before the folds' threads start (blas.h) */
    /* folds on threads; a fold's training gets the threads left over (the same bits) */
    int threads = km_param_is_set(p, "threads") ? (int)km_param_int(p, "threads")
                  : km_threads_default();
    int workers = km_tasks_workers(k, threads);
    char per_fold[32];
    snprintf(per_fold, sizeof per_fold, "%d", threads / workers > 1 ? threads / workers : 1);
    km_params *fp = km_params_copy(p, err);
    cv_job J = {m, P, fp, NULL, NULL, pred, NULL, NULL, threads / workers > 1 ? threads / workers
                                                                              : 1, score, pos,
                models};
    int64_t *order = malloc((size_t)l * sizeof *order);
    int *fold = malloc((size_t)l * sizeof *fold);
    double *labels = NULL;
    J.fold = fold;
    J.train = malloc((size_t)l * (size_t)workers * sizeof *J.train);
    J.rep = calloc((size_t)k, sizeof *J.rep);
    J.errs = calloc((size_t)k, sizeof *J.errs);
    if (!fp || !order || !fold || !J.train || !J.rep || !J.errs ||
        (km_method_option(m, "threads") && km_params_set(fp, "threads", per_fold, err))) {
        rc = km_error_nomem(err, "cross-validation");
        goto done;
    }
    km_rng rng;
    km_rng_seed(&rng, (uint64_t)(km_method_option(m, "seed") ? km_param_int(p, "seed") : 1) ^
                          0x5bd1e995u);
    for (int64_t i = 0; i < l; i++)
        order[i] = i;
    km_rng_shuffle(&rng, order, l);
    if (m->classification) {
        /* stratified: deal each class's shuffled members round-robin into the folds */
        if (!(labels = malloc((size_t)l * sizeof *labels))) {
            rc = km_error_nomem(err, "cross-validation");
            goto done;
        }
        memcpy(labels, P->y, (size_t)l * sizeof *labels);
        qsort(labels, (size_t)l, sizeof *labels, cmp_double);
        int64_t nc = 0, next = 0;
        for (int64_t i = 0; i < l; i++)
            if (i == 0 || labels[i] != labels[nc - 1])
                labels[nc++] = labels[i];
        for (int64_t q = 0; q < nc; q++)
            for (int64_t t = 0; t < l; t++)
                if (P->y[order[t]] == labels[q])
                    fold[order[t]] = (int)(next++ % k);
    } else {
        for (int64_t t = 0; t < l; t++)
            fold[order[t]] = (int)(t % k);
    }
    int64_t failed;
    static const km_task_io cv_io = {cv_size, cv_pack, cv_unpack};   /* folds on ranks */
    if ((rc = km_dist_tasks_run(k, workers, cv_fold, &cv_io, &J, J.errs, &failed))) {
        *err = J.errs[failed];
        goto done;
    }
    for (int f = 0; f < k && rc == KM_OK; f++) {
        const km_report *r = &J.rep[f];
        if (!(r->gap <= rep->gap) && !isnan(r->gap))
            rep->gap = r->gap;
        rep->converged &= r->converged;
        for (int w = 0; w < r->nr_warnings && rc == KM_OK; w++)
            if (km_report_warn(rep, "fold %d: %s", f + 1, r->warnings[w]))
                rc = km_error_nomem(err, "cross-validation");
    }
done:
    for (int f = 0; J.rep && f < k; f++)
        km_report_free(&J.rep[f]);
    free(J.rep);
    free(J.errs);
    free(J.train);
    free(order);
    free(fold);
    free(labels);
    km_params_free(fp);
    if (rep == &local || rc)
        km_report_free(rep);
    return rc;
}

int km_method_cross_validate(const km_method *m, const km_problem *P, const km_params *p,
                             int k, double *pred, km_report *rep, km_error *err)
{
    return cv_run(m, P, p, k, pred, NULL, 0, NULL, rep, err);
}

int km_metric_check(const km_method *m, const char *metric, km_error *err)
{
    int cls = m->classification;
    if (!metric)
        return KM_OK;
    if (strcmp(metric, "accuracy") == 0 || strcmp(metric, "f1") == 0 ||
        strcmp(metric, "auc") == 0)
        return cls ? KM_OK : km_error_set(err, KM_EUSAGE, "--metric %s: -s %s is a regression "
                                          "method (use mse)", metric, m->name);
    if (strcmp(metric, "mse") == 0)
        return !cls ? KM_OK : km_error_set(err, KM_EUSAGE, "--metric mse: -s %s classifies "
                                           "(use accuracy, f1 or auc)", m->name);
    return km_error_set(err, KM_EUSAGE, "--metric: unknown metric '%s' (accuracy|f1|auc|mse)",
                        metric);
}

int km_metric_higher_is_better(const char *metric)
{
    return !metric || strcmp(metric, "mse") != 0;
}

int km_method_cv_score(const km_method *m, const km_problem *P, const km_params *p, int folds,
                       const char *metric, double *value, km_report *rep, km_error *err)
{
    return km_cv_score_warm(m, P, p, folds, metric, NULL, value, rep, err);
}

int km_cv_score_warm(const km_method *m, const km_problem *P, const km_params *p, int folds,
                     const char *metric, km_model **models, double *value, km_report *rep,
                     km_error *err)
{
    km_report local;
    if (!rep)
        rep = &local;
    report_init(rep);
    int rc = km_metric_check(m, metric, err);
    if (rc)
        return rc;
    if (!metric)
        metric = m->classification ? "accuracy" : "mse";
    int64_t l = P->l, nout = P->nout > 0 ? P->nout : 1;
    int auc = strcmp(metric, "auc") == 0;
    double *pred = malloc(((size_t)l + 1) * sizeof *pred), *y = NULL, pos = -INFINITY;
    double *score = auc ? malloc(((size_t)l + 1) * sizeof *score) : NULL;
    km_scored *sc = NULL;
    if (!pred || (auc && !score) || !(y = malloc(((size_t)l + 1) * sizeof *y))) {
        rc = km_error_nomem(err, "cross-validation");
        goto done;
    }
    for (int64_t i = 0; i < l; i++)
        y[i] = P->y[i * nout];
    if (auc) {
        int64_t classes = 0;
        double seen[3];
        for (int64_t i = 0; i < l && classes < 3; i++) {
            int64_t q = 0;
            while (q < classes && seen[q] != y[i])
                q++;
            if (q == classes)
                seen[classes++] = y[i];
        }
        if (classes != 2) {
            rc = km_error_set(err, KM_EUSAGE, "--metric auc needs two classes; the data has "
                              "%s", classes < 2 ? "one" : "more");
            goto done;
        }
        pos = seen[0] > seen[1] ? seen[0] : seen[1];   /* positive: the larger label */
    }
    if ((rc = cv_run(m, P, p, folds, pred, score, pos, models, rep, err)))
        goto done;
    km_metrics mt = {0};
    for (int64_t i = 0; i < l; i++)
        km_metrics_add(&mt, y[i], pred[i]);
    if (strcmp(metric, "accuracy") == 0) {
        *value = km_metrics_accuracy(&mt);
        rc = km_report_say(rep, "Cross Validation Accuracy = %g%%\n", *value);
    } else if (strcmp(metric, "mse") == 0) {
        *value = km_metrics_mse(&mt);
        rc = km_report_say(rep, "Cross Validation Mean squared error = %g\n"
                           "Cross Validation Squared correlation coefficient = %g\n", *value,
                           km_metrics_scc(&mt));
    } else if (strcmp(metric, "f1") == 0) {
        *value = km_metrics_f1_classes(y, pred, l);
        rc = *value < 0 ? km_error_nomem(err, "cross-validation")
                        : km_report_say(rep, "Cross Validation F1 = %g\n", *value);
    } else {
        if (!(sc = malloc((size_t)l * sizeof *sc))) {
            rc = km_error_nomem(err, "cross-validation");
            goto done;
        }
        for (int64_t i = 0; i < l; i++)
            sc[i] = (km_scored){score[i], y[i] == pos};
        *value = km_metrics_auc(sc, l);
        rc = km_report_say(rep, "Cross Validation AUC = %g\n", *value);
    }
    if (rc && rc != KM_EUSAGE)
        rc = km_error_nomem(err, "cross-validation");
done:
    free(pred);
    free(score);
    free(y);
    free(sc);
    if (rep == &local || rc)
        km_report_free(rep);
    return rc;
}

/* ---- shared options ---- */

const km_option km_opt_gamma = {"gamma", "-g", "gamma", KM_OPT_NUMBER, 0, INFINITY, 1, NULL,
                                NULL, "gamma of poly, rbf, sigmoid, laplacian, expdot (default "
                                "1/features)"};
const km_option km_opt_degree = {"degree", "-d", "degree", KM_OPT_INT, 1, 1000, 0, NULL, "3",
                                 "degree of poly"};
const km_option km_opt_coef0 = {"coef0", "-r", "coef0", KM_OPT_NUMBER, -INFINITY, INFINITY, 0,
                                NULL, "0", "coef0 of poly and sigmoid"};
const km_option km_opt_seed = {"seed", "--seed", "N", KM_OPT_INT, 0, 9.2e18, 0, NULL, "1",
                               "seed of the random choices (and of the -v folds)"};

int km_params_kernel(const km_params *p, int def_type, double def_gamma, int32_t n,
                     km_kernel *k, km_error *err)
{
    const char *t = km_params_get(p, "kernel");
    k->type = (km_kernel_type)(t ? km_kernel_from_name(t) : def_type);
    k->gamma = km_param_is_set(p, "gamma") ? km_param_number(p, "gamma") : def_gamma;
    k->coef0 = km_param_number(p, "coef0");
    k->degree = (int)km_param_int(p, "degree");
    k->offset = 0;   /* a method that takes -B with a kernel sets it after */
    return km_kernel_check(k, n, err);
}
