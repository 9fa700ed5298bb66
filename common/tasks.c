/* tasks.c - see tasks.h. */
#include "tasks.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct pool {
    km_task_fn fn;
    void *ctx;
    int64_t ntasks;
    atomic_llong next;     /* the next task to take */
    atomic_llong failed;   /* lowest failed task so far (ntasks: none) */
    int *rcs;              /* per worker: the code of its lowest failed task */
    int64_t *fail_task;    /* per worker: that task, or -1 */
} pool;

typedef struct worker_arg {
    pool *p;
    int id;
} worker_arg;

static void *work(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    for (;;) {
        int64_t t = atomic_fetch_add(&p->next, 1);
        if (t >= p->ntasks)
            break;
        if (t > atomic_load(&p->failed))
            continue;   /* a lower task failed: skip */
        int rc = p->fn(p->ctx, t, w->id);
        if (rc) {
            if (p->fail_task[w->id] < 0 || t < p->fail_task[w->id]) {
                p->fail_task[w->id] = t;
                p->rcs[w->id] = rc;
            }
            long long f = atomic_load(&p->failed);
            while (t < f && !atomic_compare_exchange_weak(&p->failed, &f, t))
                ;
        }
    }
    return NULL;
}

int km_tasks_workers(int64_t ntasks, int threads)
{
    if (threads < 1 || ntasks < 1)
        return 1;
    return ntasks < threads ? (int)ntasks : threads;
}

int km_tasks_run(int64_t ntasks, int threads, km_task_fn fn, void *ctx, int64_t *failed)
{
    int nw = km_tasks_workers(ntasks, threads);
    if (failed)
        *failed = -1;
    if (ntasks < 1)
        return 0;
    if (nw == 1) {   /* no threads, no allocation */
        for (int64_t t = 0; t < ntasks; t++) {
            int rc = fn(ctx, t, 0);
            if (rc) {
                if (failed)
                    *failed = t;
                return rc;
            }
        }
        return 0;
    }
    int rcs[64];
    int64_t fail_task[64];
    pthread_t tid[64];
    worker_arg args[64];
    if (nw > 64)
        nw = 64;
    pool p = {.fn = fn, .ctx = ctx, .ntasks = ntasks, .rcs = rcs, .fail_task = fail_task};
    atomic_init(&p.next, 0);
    atomic_init(&p.failed, ntasks);
    int started = 1;
    for (int k = 0; k < nw; k++) {
        rcs[k] = 0;
        fail_task[k] = -1;
        args[k].p = &p;
        args[k].id = k;
    }
    for (int k = 1; k < nw; k++, started++)
        if (pthread_create(&tid[k], NULL, work, &args[k]) != 0)
            break;
    work(&args[0]);
    for (int k = 1; k < started; k++)
        pthread_join(tid[k], NULL);
    int rc = 0;
    int64_t first = -1;
    for (int k = 0; k < started; k++)
        if (fail_task[k] >= 0 && (first < 0 || fail_task[k] < first)) {
            first = fail_task[k];
            rc = rcs[k];
        }
    if (failed)
        *failed = first;
    return rc;
}

int km_threads_default(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > KM_THREADS_DEFAULT_MAX ? KM_THREADS_DEFAULT_MAX : (int)n;
}
