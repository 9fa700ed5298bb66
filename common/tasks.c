/* tasks.c - see tasks.h. */
#include "tasks.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* A helper stops taking tasks when, after KM_TASKS_WINDOW seconds, the process has used
 * less than (active workers - 1 + KM_TASKS_GAIN) CPUs: the threads then share cores (a
 * loaded machine, or the scheduler's fair share per session) and one fewer saves the
 * switching and cache misses of time-slicing. The results do not depend on it. */
#define KM_TASKS_WINDOW 0.03
#define KM_TASKS_GAIN 0.25

typedef struct pool {
    km_task_fn fn;
    void *ctx;
    int64_t ntasks;
    atomic_llong next;     /* the next task to take */
    atomic_llong failed;   /* lowest failed task so far (ntasks: none) */
    int *rcs;              /* per worker: the code of its lowest failed task */
    int64_t *fail_task;    /* per worker: that task, or -1 */
    atomic_int active;     /* workers still taking tasks */
    double wall0, cpu0;    /* when the pool started */
} pool;

static double clock_seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 1 if helper worker id should stop taking tasks (see KM_TASKS_GAIN). */
static int should_retire(pool *p, int id)
{
    if (id == 0)
        return 0;
    double wall = clock_seconds(CLOCK_MONOTONIC) - p->wall0;
    if (wall < KM_TASKS_WINDOW)
        return 0;
    double cpus = (clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - p->cpu0) / wall;
    int a = atomic_load(&p->active);
    if (a <= 1 || cpus >= a - 1 + KM_TASKS_GAIN)
        return 0;
    return atomic_compare_exchange_strong(&p->active, &a, a - 1);
}

typedef struct worker_arg {
    pool *p;
    int id;
} worker_arg;

static void *work(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    for (;;) {
        if (should_retire(p, w->id))
            break;
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
    atomic_init(&p.active, nw);
    p.wall0 = clock_seconds(CLOCK_MONOTONIC);
    p.cpu0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
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

int km_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 1)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1 << 20 ? 1 << 20 : (int)n;
}

int km_threads_default(void)
{
    int n = km_cores();
    return n > KM_THREADS_DEFAULT_MAX ? KM_THREADS_DEFAULT_MAX : n;
}
