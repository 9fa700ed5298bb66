/* tasks.h - coarse-grained parallel tasks (one-versus-all classes, CV folds, blocks of rows)
 * on plain POSIX threads: idle workers block instead of spinning, so a loaded machine loses
 * nothing to waiting threads, and a helper that finds the process getting no more CPU from
 * it (cores shared with other work) stops taking tasks. */
#ifndef KM_TASKS_H
#define KM_TASKS_H

#include <stdint.h>

/* One task: returns 0 on success or an error code. worker in [0, workers) tells which of the
 * caller's per-worker buffers the task may use; no two running tasks share a worker. */
typedef int (*km_task_fn)(void *ctx, int64_t task, int worker);

/*
 * Runs fn(ctx, t, worker) for t = 0..ntasks-1 on min(threads, ntasks) workers (the calling
 * thread is worker 0); tasks are taken in increasing order as workers become free. After a
 * task fails, tasks of higher index are skipped, the lower ones still run; returns the code
 * of the failed task of lowest index (*failed gets its index, may be NULL), or 0 (*failed
 * -1). If a thread cannot be started, the workers that started run every task. Which
 * worker runs a task never changes the result: tasks must not depend on it.
 */
int km_tasks_run(int64_t ntasks, int threads, km_task_fn fn, void *ctx, int64_t *failed);

/* Workers km_tasks_run will use for ntasks tasks and threads threads. */
int km_tasks_workers(int64_t ntasks, int threads);

/* The CPUs this process may run on (its affinity mask: taskset, a container's cpuset),
 * else the online ones; at least 1. */
int km_cores(void);

/* The default number of threads: km_cores(), at most KM_THREADS_DEFAULT_MAX. */
#define KM_THREADS_DEFAULT_MAX 16
int km_threads_default(void);

#endif
