/* test_train.c - training glue: coarse tasks, one-versus-all and cross-validation on threads
 * (the bits of one thread), per-problem gaps, capped folds and classes named. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linear.h"
#include "method.h"
#include "tasks.h"
#include "test.h"
#include "testutil.h"

typedef struct task_probe {
    atomic_int runs[200];
    atomic_int busy[8];     /* per worker: tasks running on it now */
    atomic_int overlap;     /* a worker ran two tasks at once */
    atomic_int bad_worker;
    int workers;
    int64_t fail_a, fail_b;
} task_probe;

static int probe_task(void *ctx, int64_t t, int worker)
{
    task_probe *p = ctx;
    if (worker < 0 || worker >= p->workers) {
        atomic_fetch_add(&p->bad_worker, 1);
        return 0;
    }
    if (atomic_fetch_add(&p->busy[worker], 1) != 0)
        atomic_fetch_add(&p->overlap, 1);
    atomic_fetch_add(&p->runs[t], 1);
    if (t % 7 == 0)
        usleep(200);   /* uneven tasks */
    atomic_fetch_sub(&p->busy[worker], 1);
    return t == p->fail_a ? 5 : t == p->fail_b ? 6 : 0;
}

static void test_tasks(void)
{
    for (int threads = 1; threads <= 4; threads++) {
        task_probe p;
        memset(&p, 0, sizeof p);
        p.workers = km_tasks_workers(200, threads);
        p.fail_a = p.fail_b = -1;
        int64_t failed = 7;
        int rc = km_tasks_run(200, threads, probe_task, &p, &failed);
        int once = 1;
        for (int t = 0; t < 200; t++)
            once &= atomic_load(&p.runs[t]) == 1;
        CHECK(rc == 0 && failed == -1 && once && p.workers == threads && !p.overlap &&
              !p.bad_worker, "%d threads: 200 tasks run once each, one at a time per worker "
              "id in [0, %d)", threads, p.workers);
        memset(&p, 0, sizeof p);
        p.workers = km_tasks_workers(200, threads);
        p.fail_a = 80;
        p.fail_b = 37;
        rc = km_tasks_run(200, threads, probe_task, &p, &failed);
        int lower = 1;
        for (int t = 0; t <= 37; t++)
            lower &= atomic_load(&p.runs[t]) == 1;
        CHECK(rc == 6 && failed == 37 && lower, "%d threads: tasks 37 and 80 fail: the code "
              "of 37, every task below it ran", threads);
    }
    CHECK(km_tasks_workers(3, 8) == 3 && km_tasks_workers(10, 0) == 1 &&
          km_tasks_workers(0, 4) == 1, "workers = min(tasks, threads), at least 1");
    int d = km_threads_default();
    long on = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(d >= 1 && d <= KM_THREADS_DEFAULT_MAX && (on < 1 || d == (on < KM_THREADS_DEFAULT_MAX
          ? on : KM_THREADS_DEFAULT_MAX)), "default threads = online cores (%ld), capped: %d",
          on, d);
}

/* The bytes of a model file. */
static char *model_bytes(const km_model *m, const char *path, size_t *len)
{
    km_error err = {0};
    if (km_model_write(m, path, &err))
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 22);
    *len = fread(buf, 1, 1 << 22, f);
    fclose(f);
    remove(path);
    return buf;
}

typedef struct count_progress {
    int64_t calls;   /* not atomic: the library serialises the calls */
} count_progress;

static void on_progress(void *user, int64_t iter, double max_h, int64_t active)
{
    (void)iter, (void)max_h, (void)active;
    count_progress *c = user;
    int64_t v = c->calls;
    for (volatile int spin = 0; spin < 50; spin++)   /* widen a race if there were one */
        ;
    c->calls = v + 1;
}

/* A five-class problem (labels 1..5 by the value of a random linear function). */
static km_problem *five_classes(uint64_t seed)
{
    km_problem *P = random_problem(600, 12, 0.5, 0, seed);
    for (int64_t i = 0; i < P->l; i++) {
        double v = P->y[i];
        P->y[i] = v < -0.6 ? 1 : v < -0.2 ? 2 : v < 0.2 ? 3 : v < 0.6 ? 4 : 5;
    }
    return P;
}

static void test_one_versus_all(void)
{
    km_problem *P = five_classes(3);
    char path[64];
    snprintf(path, sizeof path, "/tmp/kmtk-test-train-%d.model", (int)getpid());
    km_train_param par = {0};
    par.cd = km_cd_param_default();
    par.cd.loss = KM_LOSS_L1SVM;
    par.C = 2;
    par.bias = 1;
    km_class_weight cw = {4, 2.5};
    par.weights = &cw;
    par.nr_weight = 1;
    char *ref = NULL;
    size_t ref_len = 0;
    km_train_info ref_info = {0};
    for (int threads = 1; threads <= 4; threads++) {
        par.threads = threads;
        count_progress cp = {0};
        par.cd.progress = on_progress;
        par.cd.user = &cp;
        km_model *m = NULL;
        km_train_info info;
        km_error err = {0};
        int rc = km_train(P, NULL, 0, &par, &m, &info, &err);
        size_t len = 0;
        char *bytes = rc ? NULL : model_bytes(m, path, &len);
        CHECK(rc == KM_OK && m->nr_w == 5 && bytes, "%d threads: five classes train", threads);
        if (rc || !bytes) {
            free(bytes);
            continue;
        }
        int64_t iters = 0;
        for (int k = 0; k < 5; k++)
            iters += info.iter[k];
        CHECK(cp.calls == iters, "%d threads: progress called once per macro-iteration of "
              "every class, one call at a time (%lld calls, %lld iterations)", threads,
              (long long)cp.calls, (long long)iters);
        int gaps_ok = 1;
        for (int k = 0; k < 5; k++)
            gaps_ok &= info.gap[k] >= -1e-12 && info.gap[k] < 0.5 &&
                       fabs(info.primal[k] - info.objective[k]) <= 1e-9 * info.objective[k];
        CHECK(gaps_ok, "%d threads: every class has a gap in [0, 0.5) and primal = objective",
              threads);
        if (threads == 1) {
            ref = bytes;
            ref_len = len;
            ref_info = info;
        } else {
            CHECK(len == ref_len && memcmp(bytes, ref, len) == 0, "%d threads: the model "
                  "file of 1 thread, byte for byte (%zu bytes)", threads, len);
            CHECK(memcmp(info.objective, ref_info.objective, 5 * sizeof(double)) == 0 &&
                  memcmp(info.gap, ref_info.gap, 5 * sizeof(double)) == 0 &&
                  memcmp(info.iter, ref_info.iter, 5 * sizeof(int64_t)) == 0 &&
                  memcmp(info.nnz_c, ref_info.nnz_c, 5 * sizeof(int64_t)) == 0,
                  "%d threads: objectives, gaps, iterations, support vectors of 1 thread",
                  threads);
            km_train_info_free(&info);
            free(bytes);
        }
        km_model_free(m);
    }
    /* a tight solve: the gap at the returned coefficients is small */
    par.threads = 2;
    par.cd.progress = NULL;
    par.cd.stop = KM_STOP_STEP;
    par.cd.delta = 1e-10;
    par.cd.max_iter = 100000;
    km_model *m = NULL;
    km_train_info info;
    km_error err = {0};
    int rc = km_train(P, NULL, 0, &par, &m, &info, &err);
    double worst = 0;
    for (int k = 0; rc == KM_OK && k < 5; k++)
        worst = fmax(worst, fabs(info.gap[k]));
    CHECK(rc == KM_OK && worst < 1e-6, "max|h| < 1e-10: every class's relative gap < 1e-6 "
          "(%.3g)", worst);
    if (rc == KM_OK) {
        km_train_info_free(&info);
        km_model_free(m);
    }
    km_train_info_free(&ref_info);
    free(ref);
    km_problem_free(P);
}

/* Parameters from "name value" pairs, ended by NULL. */
static km_params *params(const char *first, ...)
{
    km_params *p = km_params_new();
    km_error err = {0};   /* its message is printed on success too */
    va_list ap;
    va_start(ap, first);
    for (const char *name = first; name; name = va_arg(ap, const char *))
        CHECK(km_params_set(p, name, va_arg(ap, const char *), &err) == KM_OK, "set %s (%s)",
              name, err.msg);
    va_end(ap);
    return p;
}

static void test_cross_validation(void)
{
    km_problem *P = five_classes(5);
    const km_method *l2svm = km_method_find("l2svm"), *svr = km_method_find("svr");
    double *ref = malloc((size_t)P->l * sizeof *ref), *pred = malloc((size_t)P->l * sizeof *pred);
    for (int threads = 1; threads <= 3; threads++) {
        char t[16];
        snprintf(t, sizeof t, "%d", threads);
        km_params *par = params("threads", t, NULL);
        km_report rep;
        km_error err = {0};
        int rc = km_method_cross_validate(l2svm, P, par, 4, threads == 1 ? ref : pred, &rep,
                                          &err);
        CHECK(rc == KM_OK && rep.nr_warnings == 0 && rep.converged && rep.gap >= 0 &&
              rep.gap < 0.5, "%d threads: 4-fold CV of five classes converges (largest gap "
              "%.3g)", threads, rep.gap);
        if (threads > 1)
            CHECK(memcmp(ref, pred, (size_t)P->l * sizeof *ref) == 0, "%d threads: the CV "
                  "predictions of 1 thread, bit for bit", threads);
        km_report_free(&rep);
        km_params_free(par);
    }
    /* stopped at the cap: every fold x class named, in order */
    km_params *par = params("max_iter", "1", "stop", "step", "tolerance", "1e-12", "threads",
                            "2", NULL);
    km_report rep;
    km_error err = {0};
    int rc = km_method_cross_validate(l2svm, P, par, 3, pred, &rep, &err);
    int order = rc == KM_OK && rep.nr_warnings == 15 && !rep.converged;
    for (int q = 0; order && q < 15; q++) {
        char want[96];
        snprintf(want, sizeof want, "fold %d: class %d stopped at the cap of 1 "
                 "macro-iterations (max|h| ", q / 5 + 1, q % 5 + 1);
        order = strncmp(rep.warnings[q], want, strlen(want)) == 0 &&
                strstr(rep.warnings[q], ">= 1e-12, gap ");
    }
    CHECK(order, "cap of 1 macro-iteration: 3 folds x 5 classes named in order, with their "
          "gaps, steps and tolerance (%d: %s)", rep.nr_warnings,
          rep.nr_warnings ? rep.warnings[0] : "");
    km_report_free(&rep);
    km_params_free(par);
    km_problem_free(P);
    /* regression: one problem per fold, no class */
    P = random_problem(300, 8, 0.6, 0, 9);
    double *r1 = malloc(300 * sizeof *r1), *r2 = malloc(300 * sizeof *r2);
    par = params("epsilon", "0.05", "max_iter", "1000", "threads", "1", NULL);
    rc = km_method_cross_validate(svr, P, par, 5, r1, NULL, &err);
    km_params_set(par, "threads", "2", &err);
    rc |= km_method_cross_validate(svr, P, par, 5, r2, NULL, &err);
    CHECK(rc == KM_OK && memcmp(r1, r2, 300 * sizeof *r1) == 0, "svr 5-fold CV: 2 threads "
          "predict the bits of 1 (no report asked)");
    km_params_free(par);
    par = params("epsilon", "0.05", "max_iter", "1", "stop", "step", "tolerance", "1e-12",
                 NULL);
    rc = km_method_cross_validate(svr, P, par, 5, r2, &rep, &err);
    order = rc == KM_OK && rep.nr_warnings == 5;
    for (int q = 0; order && q < 5; q++) {
        char want[64];
        snprintf(want, sizeof want, "fold %d: stopped at the cap", q + 1);
        order = strncmp(rep.warnings[q], want, strlen(want)) == 0;
    }
    CHECK(order, "svr at the cap: the 5 folds named, no class label");
    km_report_free(&rep);
    rc = km_method_cross_validate(svr, P, par, 1, r2, &rep, &err);
    CHECK(rc == KM_EUSAGE && rep.nr_warnings == 0 && !rep.warnings, "1 fold: a usage error, "
          "report empty");
    rc = km_method_cross_validate(km_method_find("l1svm"), P, par, 5, r2, &rep, &err);
    CHECK(rc == KM_EUSAGE && strstr(err.msg, "-p (epsilon) does not apply to -s l1svm"),
          "an option the method does not take is refused, naming both (%s)", err.msg);
    km_params_free(par);
    free(r1);
    free(r2);
    free(ref);
    free(pred);
    km_problem_free(P);
}

int main(void)
{
    test_tasks();
    test_one_versus_all();
    test_cross_validation();
    TEST_EXIT();
}
