/* dist.c - see dist.h: the counted collectives, the serial backend, the in-process simulation
 * of R ranks, error agreement and tasks across ranks. */
#include "dist.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "svmlight.h"
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

/* t = op(t, x) for one element: the sum and the max, for doubles and for int64s. */
typedef void elem_op(void *t, const void *x);

static void sum_d(void *t, const void *x)
{
    *(double *)t += *(const double *)x;
}

static void max_d(void *t, const void *x)
{
    if (*(const double *)x > *(double *)t)
        *(double *)t = *(const double *)x;
}

static void sum_i(void *t, const void *x)
{
    *(int64_t *)t += *(const int64_t *)x;
}

static void max_i(void *t, const void *x)
{
    if (*(const int64_t *)x > *(int64_t *)t)
        *(int64_t *)t = *(const int64_t *)x;
}

/* Reduces the R vectors of n elements of size bytes by f in rank order 0, 1, ..., R-1 (the
 * same bits on every rank). */
static int sim_reduce(void *impl, void *buf, int64_t n, size_t size, elem_op *f)
{
    sim_rank *me = impl;
    sim_shared *S = me->S;
    S->send[me->rank] = buf;
    sim_wait(S);
    char *t = malloc((size_t)(n > 0 ? n : 1) * size);
    if (t) {
        memcpy(t, S->send[0], (size_t)n * size);
        for (int r = 1; r < S->R; r++)
            for (int64_t i = 0; i < n; i++)
                f(t + (size_t)i * size, (const char *)S->send[r] + (size_t)i * size);
    }
    sim_wait(S);
    if (t)
        memcpy(buf, t, (size_t)n * size);
    free(t);
    return t ? KM_OK : KM_EINTERNAL;
}

static int sim_reduce_d(void *impl, double *buf, int64_t n, km_dist_op op)
{
    return sim_reduce(impl, buf, n, sizeof *buf, op == KM_DIST_SUM ? sum_d : max_d);
}

static int sim_reduce_i(void *impl, int64_t *buf, int64_t n, km_dist_op op)
{
    return sim_reduce(impl, buf, n, sizeof *buf, op == KM_DIST_SUM ? sum_i : max_i);
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

km_dist *km_dist_current(void)
{
    return in_task ? NULL : task_comm;
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
    if (!d || in_task || d->size == 1 || !io || ntasks == 1)   /* one task: every rank runs */
        return km_tasks_run(ntasks, threads, fn, ctx, failed);  /* it (it may be distributed) */
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

/* ---- reading ---- */

typedef struct rows_buf {
    km_problem *P;
    int64_t cap_rows, cap_nnz;
    int64_t *line;
} rows_buf;

static int rows_add(rows_buf *B, const km_row *row, int64_t line, km_error *err)
{
    km_problem *P = B->P;
    if (P->l == B->cap_rows) {
        int64_t cap = 2 * B->cap_rows + 1024;
        int64_t *rp = realloc(P->row_ptr, (size_t)(cap + 1) * sizeof *rp);
        if (rp)
            P->row_ptr = rp;
        double *y = rp ? realloc(P->y, (size_t)cap * sizeof *y) : NULL;
        if (y)
            P->y = y;
        int64_t *ln = y ? realloc(B->line, (size_t)cap * sizeof *ln) : NULL;
        if (!ln)
            return km_error_nomem(err, "rows");
        B->line = ln;
        B->cap_rows = cap;
    }
    if (km_problem_reserve(P, &B->cap_nnz, P->nnz + row->nnz))
        return km_error_nomem(err, "rows");
    memcpy(P->index + P->nnz, row->index, (size_t)row->nnz * sizeof *P->index);
    memcpy(P->value + P->nnz, row->value, (size_t)row->nnz * sizeof *P->value);
    for (int64_t k = 0; k < row->nnz; k++)
        if (row->index[k] + 1 > P->n)
            P->n = row->index[k] + 1;
    P->nnz += row->nnz;
    P->y[P->l] = row->y;
    B->line[P->l] = line;
    P->row_ptr[++P->l] = P->nnz;
    return KM_OK;
}

/* err's "NAME:LINE..." with NAME:LINE+offset written as path:LINE. */
static void rename_error(km_error *err, const char *name, const char *path, int64_t offset)
{
    size_t k = strlen(name);
    if (strncmp(err->msg, name, k) != 0 || err->msg[k] != ':')
        return;
    char *end;
    long long ln = strtoll(err->msg + k + 1, &end, 10);
    const char *rest = end == err->msg + k + 1 ? err->msg + k : end;
    char *full = NULL;
    int n = end != err->msg + k + 1 ? asprintf(&full, "%s:%lld%s", path, ln + (long long)offset, rest)
                                   : asprintf(&full, "%s%s", path, rest);
    if (n < 0)
        return;
    size_t len = strlen(full) < sizeof err->msg - 1 ? strlen(full) : sizeof err->msg - 1;
    memcpy(err->msg, full, len);
    err->msg[len] = 0;
    free(full);
}

/* Parses the file name (a path; offset added to its line numbers, messages naming path) into
 * B. */
static int parse_rows(const char *name, const char *path, int64_t offset, size_t max_line,
                      rows_buf *B, km_error *err)
{
    km_svmlight_reader *r = km_svmlight_open(name, err);
    if (!r) {
        rename_error(err, name, path, 0);
        return err->code;
    }
    km_svmlight_set_max_line(r, max_line);
    km_row row;
    int st, rc = KM_OK;
    while ((st = km_svmlight_next(r, &row, err)) == 1) {
        if (row.nout > 1) {
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: %d outputs per row; train-mpi reads "
                              "single-label data", path, (long long)(row.line + offset),
                              (int)row.nout);
            break;
        }
        if ((rc = rows_add(B, &row, row.line + offset, err)))
            break;
    }
    if (st < 0) {
        rc = err->code;
        rename_error(err, name, path, offset);
    }
    km_svmlight_close(r);
    return rc;
}

/* This rank's lines of the plain file f (size bytes) into a memory file: *fd, *lines (the
 * lines in it). */
static int range_to_memfd(FILE *f, int64_t size, int rank, int R, int *fd, int64_t *lines,
                          const char *path, km_error *err)
{
    int64_t a = (int64_t)((__int128)size * rank / R), b = (int64_t)((__int128)size * (rank + 1) / R);
    int64_t s = a, pos;
    int ch;
    *lines = 0;
    *fd = memfd_create("km_dist_read", 0);
    if (*fd < 0)
        return km_error_set(err, KM_EINTERNAL, "%s: cannot make a memory file", path);
    if (a > 0) {   /* the first line that starts at or after a */
        if (fseeko(f, (off_t)(a - 1), SEEK_SET))
            return km_error_set(err, KM_EINPUT, "%s: cannot seek", path);
        s = a - 1;
        while ((ch = getc(f)) != EOF) {
            s++;
            if (ch == '\n')
                break;
        }
        if (ch == EOF)
            s = size;
    }
    if (s >= b)
        return KM_OK;   /* no line starts in [a, b) */
    if (fseeko(f, (off_t)s, SEEK_SET))
        return km_error_set(err, KM_EINPUT, "%s: cannot seek", path);
    char *buf = malloc(1 << 20);
    if (!buf)
        return km_error_nomem(err, "reading");
    pos = s;
    int done = 0, last = '\n';
    while (!done) {
        size_t want = 1 << 20, got = fread(buf, 1, want, f), keep = got;
        if (got == 0)
            break;
        for (size_t k = 0; k < got; k++) {
            if (buf[k] == '\n') {
                (*lines)++;
                if (pos + (int64_t)k + 1 >= b) {   /* the line that holds byte b - 1 ends */
                    keep = k + 1;
                    done = 1;
                    break;
                }
            }
        }
        if (keep > 0)
            last = buf[keep - 1];
        if (write(*fd, buf, keep) != (ssize_t)keep) {
            free(buf);
            return km_error_set(err, KM_EINTERNAL, "%s: cannot write a memory file", path);
        }
        pos += (int64_t)keep;
    }
    if (ferror(f)) {
        free(buf);
        return km_error_set(err, KM_EINPUT, "%s: read error", path);
    }
    if (last != '\n')   /* the file's last line, with no newline */
        (*lines)++;
    free(buf);
    return KM_OK;
}

int km_dist_read(km_dist *d, const char *path, size_t max_line, km_problem **out,
                 int64_t **line, km_error *err)
{
    *out = NULL;
    *line = NULL;
    rows_buf B = {calloc(1, sizeof(km_problem)), 0, 0, NULL};
    int rc = B.P ? KM_OK : km_error_nomem(err, "rows");
    int plain = 0, fd = -1;
    FILE *f = NULL;
    int64_t size = 0, lines = 0;
    if (rc == KM_OK && !(B.P->row_ptr = calloc(1, sizeof *B.P->row_ptr)))
        rc = km_error_nomem(err, "rows");
    /* rank 0 decides: a plain regular file (and its size), or not */
    int64_t kind[2] = {0, 0};
    if (d->rank == 0 && strcmp(path, "-") != 0 && (f = fopen(path, "rb"))) {
        struct stat sb;
        int c0 = getc(f), c1 = getc(f);
        kind[0] = !(c0 == 0x1f && c1 == 0x8b) && fstat(fileno(f), &sb) == 0 &&
                  S_ISREG(sb.st_mode);
        kind[1] = kind[0] ? (int64_t)sb.st_size : 0;
        fclose(f);
        f = NULL;
    }
    km_error e2;
    if (km_dist_bcast(d, kind, sizeof kind, 0, &e2)) {
        km_problem_free(B.P);
        return km_error_set(err, e2.code, "%s", e2.msg);
    }
    plain = (int)kind[0];
    size = kind[1];
    if (plain && rc == KM_OK && !(f = fopen(path, "rb")))
        rc = km_error_set(err, KM_EINPUT, "%s: cannot open on rank %d", path, d->rank);
    if (plain && rc == KM_OK)
        rc = range_to_memfd(f, size, d->rank, d->size, &fd, &lines, path, err);
    if (f)
        fclose(f);
    /* the first line of each range: an exclusive scan of the lines before it */
    int64_t offset = lines;
    if (plain && km_dist_exscan(d, &offset, &e2) && rc == KM_OK)
        rc = km_error_set(err, e2.code, "%s", e2.msg);
    if (rc == KM_OK && plain && lines > 0) {
        char name[64];
        snprintf(name, sizeof name, "/dev/fd/%d", fd);
        if (lseek(fd, 0, SEEK_SET) != 0)
            rc = km_error_set(err, KM_EINTERNAL, "%s: cannot rewind a memory file", path);
        else
            rc = parse_rows(name, path, offset, max_line, &B, err);
    } else if (rc == KM_OK && !plain && d->rank == 0) {   /* gzip, stdin: rank 0 reads */
        rc = parse_rows(path, path, 0, max_line, &B, err);
    }
    if (fd >= 0)
        close(fd);
    rc = km_dist_agree(d, rc, err);
    int64_t total = B.P ? B.P->l : 0;
    if (rc == KM_OK && (rc = km_dist_allreduce_i64(d, &total, 1, KM_DIST_SUM, err)) == KM_OK &&
        total == 0)
        rc = km_error_set(err, KM_EINPUT, "%s: no data", strcmp(path, "-") ? path : "<stdin>");
    if (rc) {
        km_problem_free(B.P);
        free(B.line);
        return rc;
    }
    *out = B.P;
    *line = B.line ? B.line : calloc(1, sizeof **line);
    return *line ? KM_OK : km_error_nomem(err, "rows");
}

int km_dist_read_all(km_dist *d, const char *path, size_t max_line, km_problem **out,
                     km_error *err)
{
    *out = NULL;
    if (strcmp(path, "-") != 0)   /* a file: every rank reads it */
        return km_dist_agree(d, km_svmlight_read_max(path, max_line, out, err), err);
    km_problem *P = NULL;
    int rc = d->rank == 0 ? km_svmlight_read_max(path, max_line, &P, err) : KM_OK;
    if ((rc = km_dist_agree(d, rc, err)))
        return rc;
    int64_t h[5] = {0, 0, 0, 0, 0};   /* l, nnz, n, nout, has qid */
    if (d->rank == 0) {
        h[0] = P->l;
        h[1] = P->nnz;
        h[2] = P->n;
        h[3] = P->nout;
        h[4] = P->qid != NULL;
    }
    if ((rc = km_dist_bcast(d, h, sizeof h, 0, err)))
        goto done;
    int64_t l = h[0], nnz = h[1], nout = h[3] > 1 ? h[3] : 1;
    if (d->rank != 0) {
        P = calloc(1, sizeof *P);
        if (P) {
            P->l = l;
            P->nnz = nnz;
            P->n = (int32_t)h[2];
            P->nout = (int32_t)h[3];
            P->row_ptr = malloc((size_t)(l + 1) * sizeof *P->row_ptr);
            P->index = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *P->index);
            P->value = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *P->value);
            P->y = malloc((size_t)(l > 0 ? l : 1) * (size_t)nout * sizeof *P->y);
            P->qid = h[4] ? malloc((size_t)(l > 0 ? l : 1) * sizeof *P->qid) : NULL;
        }
        rc = !P || !P->row_ptr || !P->index || !P->value || !P->y || (h[4] && !P->qid)
             ? km_error_nomem(err, "rows") : KM_OK;
    }
    if ((rc = km_dist_agree(d, rc, err)) ||
        (rc = km_dist_bcast(d, P->row_ptr, 8 * (l + 1), 0, err)) ||
        (rc = km_dist_bcast(d, P->index, 4 * nnz, 0, err)) ||
        (rc = km_dist_bcast(d, P->value, 8 * nnz, 0, err)) ||
        (rc = km_dist_bcast(d, P->y, 8 * l * nout, 0, err)) ||
        (h[4] && (rc = km_dist_bcast(d, P->qid, 8 * l, 0, err))))
        goto done;
    *out = P;
    P = NULL;
done:
    km_problem_free(P);
    return rc;
}
