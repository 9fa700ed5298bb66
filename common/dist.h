/* dist.h - the transport the distributed algorithms run on (issue 17): rank, size and the few
 * collectives they need, behind three backends: serial (one rank), a deterministic
 * in-process simulation of R ranks on threads (unit tests, exact communication counts without
 * MPI), and MPI (mpi/dist_mpi.c, built only by `make mpi` into train-mpi). */
#ifndef KM_DIST_H
#define KM_DIST_H

#include <stdint.h>

#include "error.h"

/* Communication counted by the wrappers below (so every backend counts the same): per rank,
 * the collectives called and the payload bytes this rank hands to them: allreduce 8 n
 * (its vector), exscan 8, allgatherv and gatherv its own block, alltoallv its blocks to
 * the other ranks, bcast the bytes at the root (0 elsewhere). */
typedef struct km_dist_stats {
    int64_t collectives;
    int64_t bytes;
} km_dist_stats;

typedef enum { KM_DIST_SUM, KM_DIST_MAX } km_dist_op;

/* A backend. Counts are in bytes for the byte-moving collectives. The reductions of doubles
 * must give every rank the same bits, and the same bits at every call with the same inputs
 * (serial and simulation: summed in rank order 0, 1, ..., R-1). */
typedef struct km_dist_ops {
    int (*allreduce_d)(void *impl, double *buf, int64_t n, km_dist_op op);
    int (*allreduce_i)(void *impl, int64_t *buf, int64_t n, km_dist_op op);
    int (*exscan_i)(void *impl, int64_t *value);   /* sum over ranks < rank; 0 at rank 0 */
    int (*allgatherv)(void *impl, const void *send, int64_t sbytes, void *recv,
                      const int64_t *rbytes, const int64_t *rdispl);
    int (*gatherv)(void *impl, const void *send, int64_t sbytes, void *recv,
                   const int64_t *rbytes, const int64_t *rdispl);   /* to rank 0 */
    int (*alltoallv)(void *impl, const void *send, const int64_t *sbytes,
                     const int64_t *sdispl, void *recv, const int64_t *rbytes,
                     const int64_t *rdispl);
    int (*bcast)(void *impl, void *buf, int64_t bytes, int root);
} km_dist_ops;

typedef struct km_dist {
    int rank, size;
    const km_dist_ops *ops;
    void *impl;
    km_dist_stats stats;
} km_dist;

/* The serial backend: rank 0 of 1 (every collective a copy or nothing). */
void km_dist_serial(km_dist *d);

/*
 * Runs fn(d_r, arg) for r = 0..R-1, each on its own thread with its own km_dist of rank r of
 * R, the collectives synchronised by barriers and reduced in rank order: deterministic, and
 * the same counts as MPI would see. rcs[r] gets rank r's return value, stats[r] (may be NULL)
 * its counts. Returns KM_OK, or an error when the threads cannot be started (err set).
 */
int km_dist_sim_run(int R, int (*fn)(km_dist *d, void *arg), void *arg, int *rcs,
                    km_dist_stats *stats, km_error *err);

/* The collectives, counted in d->stats (see km_dist_stats); each returns KM_OK or an error
 * code of the backend (the message in err). Every rank must call them in the same order. */
int km_dist_allreduce(km_dist *d, double *buf, int64_t n, km_dist_op op, km_error *err);
int km_dist_allreduce_i64(km_dist *d, int64_t *buf, int64_t n, km_dist_op op, km_error *err);
int km_dist_exscan(km_dist *d, int64_t *value, km_error *err);
int km_dist_allgatherv(km_dist *d, const void *send, int64_t sbytes, void *recv,
                       const int64_t *rbytes, const int64_t *rdispl, km_error *err);
int km_dist_gatherv(km_dist *d, const void *send, int64_t sbytes, void *recv,
                    const int64_t *rbytes, const int64_t *rdispl, km_error *err);
int km_dist_alltoallv(km_dist *d, const void *send, const int64_t *sbytes, const int64_t *sdispl,
                      void *recv, const int64_t *rbytes, const int64_t *rdispl, km_error *err);
int km_dist_bcast(km_dist *d, void *buf, int64_t bytes, int root, km_error *err);

/* Every rank's bytes (out[r], R entries) from each rank's own count (an allgather of 8
 * bytes). */
int km_dist_allgather_count(km_dist *d, int64_t mine, int64_t *out, km_error *err);

/*
 * Error agreement: every rank passes its own result rc (err set when rc != 0); returns on
 * every rank the code of the lowest failing rank with that rank's message in err, or KM_OK.
 * Collective: lets a rank that failed (a bad input line) stop all ranks without deadlock.
 */
int km_dist_agree(km_dist *d, int rc, km_error *err);

/* ---- tasks across ranks (CV folds, one-versus-all classes) ---- */

/* How the result of one task travels: its size in bytes, written to / read from a buffer
 * (ctx as given to the runner). */
typedef struct km_task_io {
    int64_t (*size)(void *ctx, int64_t task);
    void (*pack)(void *ctx, int64_t task, void *buf);
    int (*unpack)(void *ctx, int64_t task, const void *buf, km_error *err);
} km_task_io;

typedef int (*km_dist_task_fn)(void *ctx, int64_t task, int worker);

/*
 * Runs tasks 0..ntasks-1 like km_tasks_run (tasks.h): with no communicator installed (the
 * default), exactly km_tasks_run. With one installed (km_dist_tasks_use), task t runs on
 * rank t mod R (on up to threads local workers), then every task's result travels from its
 * rank to every rank (io; allgatherv), so every rank ends with what km_tasks_run would have
 * left: the same bits for every R. errs[t] (stride err_stride bytes from errs) holds task
 * t's error; a failure (the lowest failed task, as km_tasks_run) is returned on every rank
 * with its message copied into errs[*failed]. Calls from inside a task run locally. A single
 * task runs on every rank (outside any task: a solver inside may distribute itself).
 */
int km_dist_tasks_run(int64_t ntasks, int threads, km_dist_task_fn fn, const km_task_io *io,
                      void *ctx, km_error *errs, int64_t *failed);

/* Installs d (NULL: none) as the communicator of km_dist_tasks_run for the calling thread
 * (each simulated rank is a thread); returns the previous one. */
km_dist *km_dist_tasks_use(km_dist *d);

/* The communicator installed for this thread, NULL when there is none or inside a task of
 * km_dist_tasks_run (a solver distributes itself only when this is not NULL). */
km_dist *km_dist_current(void);

/* The buffers of km_dist_tasks_run's io: appends/reads bytes at *pos. */
void km_dist_put(void *buf, int64_t *pos, const void *src, int64_t bytes);
void km_dist_get(const void *buf, int64_t *pos, void *dst, int64_t bytes);

#endif

/* ---- reading ---- */

/*
 * Reads svmlight text over ranks (collective). A plain file: rank r parses the lines that
 * start in its byte range [r size/R, (r+1) size/R) of the file; the line numbers are global
 * (an exclusive scan of the lines per range), so an error names the FILE:LINE:COL serial
 * reading names (the lowest rank's error wins: the first bad line of the file). Gzip or
 * standard input ("-"): rank 0 reads every row (the others none; km_dist_partition then
 * scatters them). *out gets this rank's rows (single-output; qid dropped; P->n the largest
 * index of these rows), *line their 1-based line numbers, increasing. No rows anywhere is
 * the error "FILE: no data". max_line as km_svmlight_read_max.
 */
int km_dist_read(km_dist *d, const char *path, size_t max_line, km_problem **out,
                 int64_t **line, km_error *err);

/* Every rank gets all rows (collective): a file is read by every rank; standard input ("-",
 * which MPI gives rank 0 only) by rank 0, then broadcast. Errors as km_svmlight_read_max,
 * on every rank. */
int km_dist_read_all(km_dist *d, const char *path, size_t max_line, km_problem **out,
                     km_error *err);
