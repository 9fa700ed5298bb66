/* dist.c - see dist.h: the counted collectives, the serial backend, the in-process simulation
 * of R ranks, error agreement and tasks across ranks. */
#include "dist.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tasks.h"

/* ---- the counted wrappers ---- */

static void count(km_dist *d, int64_t bytes)
{
    d->stats.collectives++;
    d->stats.bytes += bytes;
}

static int backend_rc(int rc, km_error *err, const char *what)
{
    if (rc == KM_OK)
        return KM_OK;
    return km_error_set(err, rc, "%s failed (out of memory or the transport)", what);
}

int km_dist_allreduce(km_dist *d, double *buf, int64_t n, km_dist_op op, km_error *err)
{
    count(d, 8 * n);
    return backend_rc(d->ops->allreduce_d(d->impl, buf, n, op), err, "allreduce");
}

int km_dist_allreduce_i64(km_dist *d, int64_t *buf, int64_t n, km_dist_op op, km_error *err)
{
    count(d, 8 * n);
    return backend_rc(d->ops->allreduce_i(d->impl, buf, n, op), err, "allreduce");
}

int km_dist_exscan(km_dist *d, int64_t *value, km_error *err)
{
    count(d, 8);
    return backend_rc(d->ops->exscan_i(d->impl, value), err, "exscan");
}

int km_dist_allgatherv(km_dist *d, const void *send, int64_t sbytes, void *recv,
                       const int64_t *rbytes, const int64_t *rdispl, km_error *err)
{
    count(d, sbytes);
    return backend_rc(d->ops->allgatherv(d->impl, send, sbytes, recv, rbytes, rdispl), err,
                      "allgatherv");
}

int km_dist_gatherv(km_dist *d, const void *send, int64_t sbytes, void *recv,
                    const int64_t *rbytes, const int64_t *rdispl, km_error *err)
{
    count(d, sbytes);
    return backend_rc(d->ops->gatherv(d->impl, send, sbytes, recv, rbytes, rdispl), err,
                      "gatherv");
}

int km_dist_alltoallv(km_dist *d, const void *send, const int64_t *sbytes, const int64_t *sdispl,
                      void *recv, const int64_t *rbytes, const int64_t *rdispl, km_error *err)
{
    int64_t out = 0;
    for (int r = 0; r < d->size; r++)
        out += r == d->rank ? 0 : sbytes[r];
    count(d, out);
    return backend_rc(d->ops->alltoallv(d->impl, send, sbytes, sdispl, recv, rbytes, rdispl),
                      err, "alltoallv");
}

int km_dist_bcast(km_dist *d, void *buf, int64_t bytes, int root, km_error *err)
{
    count(d, d->rank == root ? bytes : 0);
    return backend_rc(d->ops->bcast(d->impl, buf, bytes, root), err, "bcast");
}

int km_dist_allgather_count(km_dist *d, int64_t mine, int64_t *out, km_error *err)
{
    int R = d->size;
    int64_t *rb = malloc((size_t)R * 2 * sizeof *rb);
    if (!rb)
        return km_error_nomem(err, "allgather");
    for (int r = 0; r < R; r++) {
        rb[r] = 8;
        rb[R + r] = 8 * (int64_t)r;
    }
    int rc = km_dist_allgatherv(d, &mine, 8, out, rb, rb + R, err);
    free(rb);
    return rc;
}

int km_dist_agree(km_dist *d, int rc, km_error *err)
{
    int64_t v = rc ? (int64_t)(d->size - d->rank) : 0;   /* the lowest failing rank wins */
    km_error e2;
    if (km_dist_allreduce_i64(d, &v, 1, KM_DIST_MAX, &e2))
        return rc ? rc : km_error_set(err, e2.code, "%s", e2.msg);
    if (v == 0)
        return KM_OK;
    int root = d->size - (int)v;
    km_error e = {0};
    if (d->rank == root)
        e = *err;
    if (km_dist_bcast(d, &e, (int64_t)sizeof e, root, &e2))
        return rc ? rc : km_error_set(err, e2.code, "%s", e2.msg);
    *err = e;
    return e.code ? e.code : KM_EINTERNAL;
}

/* ---- serial ---- */

static int ser_reduce_d(void *impl, double *buf, int64_t n, km_dist_op op)
{
    (void)impl, (void)buf, (void)n, (void)op;
    return KM_OK;
}

static int ser_reduce_i(void *impl, int64_t *buf, int64_t n, km_dist_op op)
{
    (void)impl, (void)buf, (void)n, (void)op;
    return KM_OK;
}

static int ser_exscan(void *impl, int64_t *value)
{
    (void)impl;
    *value = 0;
    return KM_OK;
}

static int ser_gather(void *impl, const void *send, int64_t sbytes, void *recv,
                      const int64_t *rbytes, const int64_t *rdispl)
{
    (void)impl, (void)rbytes;
    if (sbytes > 0 && (const char *)recv + rdispl[0] != send)
        memmove((char *)recv + rdispl[0], send, (size_t)sbytes);
    return KM_OK;
}

static int ser_alltoallv(void *impl, const void *send, const int64_t *sbytes,
                         const int64_t *sdispl, void *recv, const int64_t *rbytes,
                         const int64_t *rdispl)
{
    (void)impl, (void)rbytes;
    if (sbytes[0] > 0)
        memmove((char *)recv + rdispl[0], (const char *)send + sdispl[0], (size_t)sbytes[0]);
    return KM_OK;
}

static int ser_bcast(void *impl, void *buf, int64_t bytes, int root)
{
    (void)impl, (void)buf, (void)bytes, (void)root;
    return KM_OK;
}

static const km_dist_ops serial_ops = {ser_reduce_d, ser_reduce_i, ser_exscan, ser_gather,
                                       ser_gather, ser_alltoallv, ser_bcast};

void km_dist_serial(km_dist *d)
{
    memset(d, 0, sizeof *d);
    d->rank = 0;
    d->size = 1;
    d->ops = &serial_ops;
}

/* ---- the simulation: R threads, each collective between two barriers ---- */

typedef struct sim_shared {
    int R;
    pthread_barrier_t bar;
    const void **send;        /* per rank: its send buffer of the current collective */
    const int64_t **sdispl;   /* per rank (alltoallv) */
    int64_t *val;             /* per rank (exscan) */
} sim_shared;

typedef struct sim_rank {
    sim_shared *S;
    int rank;
    km_dist d;
    int (*fn)(km_dist *d, void *arg);
    void *arg;
    int rc;
} sim_rank;

static void sim_wait(sim_shared *S)
{
    pthread_barrier_wait(&S->bar);
}

/* Reduces the R vectors in rank order 0, 1, ..., R-1 (the same bits on every rank). */
static int sim_reduce_d(void *impl, double *buf, int64_t n, km_dist_op op)
{
    sim_rank *me = impl;
    sim_shared *S = me->S;
    S->send[me->rank] = buf;
    sim_wait(S);
    double *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
    if (t) {
        memcpy(t, S->send[0], (size_t)n * sizeof *t);
        for (int r = 1; r < S->R; r++) {
            const double *x = S->send[r];
            for (int64_t i = 0; i < n; i++)
                t[i] = op == KM_DIST_SUM ? t[i] + x[i] : (x[i] > t[i] ? x[i] : t[i]);
        }
    }
    sim_wait(S);
    if (t)
        memcpy(buf, t, (size_t)n * sizeof *t);
    free(t);
    return t ? KM_OK : KM_EINTERNAL;
}

static int sim_reduce_i(void *impl, int64_t *buf, int64_t n, km_dist_op op)
{
    sim_rank *me = impl;
    sim_shared *S = me->S;
    S->send[me->rank] = buf;
    sim_wait(S);
    int64_t *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
    if (t) {
        memcpy(t, S->send[0], (size_t)n * sizeof *t);
        for (int r = 1; r < S->R; r++) {
            const int64_t *x = S->send[r];
            for (int64_t i = 0; i < n; i++)
                t[i] = op == KM_DIST_SUM ? t[i] + x[i] : (x[i] > t[i] ? x[i] : t[i]);
        }
    }
    sim_wait(S);
    if (t)
        memcpy(buf, t, (size_t)n * sizeof *t);
    free(t);
    return t ? KM_OK : KM_EINTERNAL;
}

static int sim_exscan(void *impl, int64_t *value)
{
    sim_rank *me = impl;
    sim_shared *S = me->S;
    S->val[me->rank] = *value;
    sim_wait(S);
    int64_t s = 0;
    for (int r = 0; r < me->rank; r++)
        s += S->val[r];
    sim_wait(S);
    *value = s;
    return KM_OK;
}

static int sim_gather(sim_rank *me, const void *send, void *recv, const int64_t *rbytes,
                      const int64_t *rdispl, int all)
{
    sim_shared *S = me->S;
    S->send[me->rank] = send;
    sim_wait(S);
    if (all || me->rank == 0)
        for (int r = 0; r < S->R; r++)
            if (rbytes[r] > 0)
                memcpy((char *)recv + rdispl[r], S->send[r], (size_t)rbytes[r]);
    sim_wait(S);
    return KM_OK;
}

static int sim_allgatherv(void *impl, const void *send, int64_t sbytes, void *recv,
                          const int64_t *rbytes, const int64_t *rdispl)
{
    (void)sbytes;
    return sim_gather(impl, send, recv, rbytes, rdispl, 1);
}

static int sim_gatherv(void *impl, const void *send, int64_t sbytes, void *recv,
                       const int64_t *rbytes, const int64_t *rdispl)
{
    (void)sbytes;
    return sim_gather(impl, send, recv, rbytes, rdispl, 0);
}

static int sim_alltoallv(void *impl, const void *send, const int64_t *sbytes,
                         const int64_t *sdispl, void *recv, const int64_t *rbytes,
                         const int64_t *rdispl)
{
    (void)sbytes;
    sim_rank *me = impl;
    sim_shared *S = me->S;
    S->send[me->rank] = send;
    S->sdispl[me->rank] = sdispl;
    sim_wait(S);
    for (int r = 0; r < S->R; r++)
        if (rbytes[r] > 0)
            memcpy((char *)recv + rdispl[r], (const char *)S->send[r] + S->sdispl[r][me->rank],
                   (size_t)rbytes[r]);
    sim_wait(S);
    return KM_OK;
}

static int sim_bcast(void *impl, void *buf, int64_t bytes, int root)
{
    sim_rank *me = impl;
    sim_shared *S = me->S;
    S->send[me->rank] = buf;
    sim_wait(S);
    if (me->rank != root && bytes > 0)
        memcpy(buf, S->send[root], (size_t)bytes);
    sim_wait(S);
    return KM_OK;
}

static const km_dist_ops sim_ops = {sim_reduce_d, sim_reduce_i, sim_exscan, sim_allgatherv,
                                    sim_gatherv, sim_alltoallv, sim_bcast};

static void *sim_thread(void *arg)
{
    sim_rank *me = arg;
    me->rc = me->fn(&me->d, me->arg);
    return NULL;
}

int km_dist_sim_run(int R, int (*fn)(km_dist *d, void *arg), void *arg, int *rcs,
                    km_dist_stats *stats, km_error *err)
{
    if (R < 1 || R > 4096)
        return km_error_set(err, KM_EUSAGE, "the number of simulated ranks must be 1..4096");
    sim_shared S = {R, {{0}}, NULL, NULL, NULL};
    sim_rank *ranks = calloc((size_t)R, sizeof *ranks);
    pthread_t *th = calloc((size_t)R, sizeof *th);
    S.send = calloc((size_t)R, sizeof *S.send);
    S.sdispl = calloc((size_t)R, sizeof *S.sdispl);
    S.val = calloc((size_t)R, sizeof *S.val);
    int rc = KM_OK;
    if (!ranks || !th || !S.send || !S.sdispl || !S.val) {
        rc = km_error_nomem(err, "rank simulation");
        goto done;
    }
    if (pthread_barrier_init(&S.bar, NULL, (unsigned)R)) {
        rc = km_error_set(err, KM_EINTERNAL, "cannot make a barrier for %d ranks", R);
        goto done;
    }
    int started = 0;
    for (int r = 0; r < R; r++) {
        sim_rank *me = &ranks[r];
        me->S = &S;
        me->rank = r;
        me->d = (km_dist){r, R, &sim_ops, me, {0, 0}};
        me->fn = fn;
        me->arg = arg;
        if (pthread_create(&th[r], NULL, sim_thread, me))
            break;
        started++;
    }
    if (started < R) {
        /* the started ranks wait at a barrier for ever: nothing to do but say so */
        rc = km_error_set(err, KM_EINTERNAL, "cannot start %d threads for the simulated ranks",
                          R);
        for (int r = 0; r < started; r++)
            pthread_detach(th[r]);
        ranks = NULL;   /* still in use by the detached threads */
        goto done;
    }
    for (int r = 0; r < R; r++)
        pthread_join(th[r], NULL);
    pthread_barrier_destroy(&S.bar);
    for (int r = 0; r < R; r++) {
        if (rcs)
            rcs[r] = ranks[r].rc;
        if (stats)
            stats[r] = ranks[r].d.stats;
    }
done:
    if (rc == KM_OK || ranks) {
        free(S.send);
        free(S.sdispl);
        free(S.val);
        free(ranks);
    }
    free(th);
    return rc;
}

/* ---- tasks across ranks ---- */

static _Thread_local km_dist *task_comm;
static _Thread_local int in_task;

km_dist *km_dist_tasks_use(km_dist *d)
{
    km_dist *old = task_comm;
    task_comm = d;
    return old;
}

void km_dist_put(void *buf, int64_t *pos, const void *src, int64_t bytes)
{
    if (bytes > 0)
        memcpy((char *)buf + *pos, src, (size_t)bytes);
    *pos += bytes;
}

void km_dist_get(const void *buf, int64_t *pos, void *dst, int64_t bytes)
{
    if (bytes > 0)
        memcpy(dst, (const char *)buf + *pos, (size_t)bytes);
    *pos += bytes;
}

typedef struct local_job {
    km_dist_task_fn fn;
    void *ctx;
    int rank, R;
} local_job;

/* Local task j is global task rank + j R; it runs with nested task runs kept local. */
static int local_task(void *ctx, int64_t j, int worker)
{
    local_job *L = ctx;
    int was = in_task;
    in_task = 1;
    int rc = L->fn(L->ctx, L->rank + j * L->R, worker);
    in_task = was;
    return rc;
}

int km_dist_tasks_run(int64_t ntasks, int threads, km_dist_task_fn fn, const km_task_io *io,
                      void *ctx, km_error *errs, int64_t *failed)
{
    km_dist *d = task_comm;
    if (!d || in_task || d->size == 1 || !io)
        return km_tasks_run(ntasks, threads, fn, ctx, failed);
    int R = d->size, rank = d->rank;
    int64_t nl = ntasks > rank ? (ntasks - rank + R - 1) / R : 0, lf = -1;
    local_job L = {fn, ctx, rank, R};
    int rc = nl > 0 ? km_tasks_run(nl, km_tasks_workers(nl, threads), local_task, &L, &lf) : 0;
    /* the lowest failed task over all ranks (every task below it ran, as in km_tasks_run) */
    int64_t worst = rc ? ntasks - (rank + lf * R) : 0;
    km_error e2;
    if (failed)
        *failed = -1;
    if (km_dist_allreduce_i64(d, &worst, 1, KM_DIST_MAX, &e2)) {
        errs[0] = e2;
        if (failed)
            *failed = 0;
        return e2.code;
    }
    if (worst > 0) {
        int64_t t = ntasks - worst;
        if (km_dist_bcast(d, &errs[t], (int64_t)sizeof *errs, (int)(t % R), &e2))
            errs[t] = e2;
        if (failed)
            *failed = t;
        return errs[t].code ? errs[t].code : KM_EINTERNAL;
    }
    /* every task's result to every rank: [size, bytes] per local task, in task order */
    int64_t mine = 0;
    for (int64_t j = 0; j < nl; j++)
        mine += 8 + io->size(ctx, rank + j * R);
    int64_t *rb = malloc((size_t)R * 2 * sizeof *rb);
    char *send = malloc((size_t)(mine > 0 ? mine : 1)), *recv = NULL;
    int64_t pos = 0, total = 0;
    rc = rb && send ? KM_OK : km_error_nomem(&e2, "task results");
    if (rc == KM_OK)
        rc = km_dist_allgather_count(d, mine, rb, &e2);
    if (rc == KM_OK) {
        for (int r = 0; r < R; r++) {
            rb[R + r] = total;
            total += rb[r];
        }
        if (!(recv = malloc((size_t)(total > 0 ? total : 1))))
            rc = km_error_nomem(&e2, "task results");
    }
    for (int64_t j = 0; rc == KM_OK && j < nl; j++) {
        int64_t t = rank + j * R, sz = io->size(ctx, t);
        km_dist_put(send, &pos, &sz, 8);
        io->pack(ctx, t, send + pos);
        pos += sz;
    }
    rc = km_dist_agree(d, rc, &e2);
    if (rc == KM_OK)
        rc = km_dist_allgatherv(d, send, mine, recv, rb, rb + R, &e2);
    for (int r = 0; rc == KM_OK && r < R; r++) {
        if (r == rank)
            continue;
        pos = rb[R + r];
        for (int64_t t = r; rc == KM_OK && t < ntasks; t += R) {
            int64_t sz;
            km_dist_get(recv, &pos, &sz, 8);
            rc = io->unpack(ctx, t, recv + pos, &errs[t]);
            if (rc && failed)
                *failed = t;
            pos += sz;
        }
    }
    if (rc && (!failed || *failed < 0)) {
        errs[0] = e2;
        if (failed)
            *failed = 0;
    }
    free(rb);
    free(send);
    free(recv);
    return rc;
}
