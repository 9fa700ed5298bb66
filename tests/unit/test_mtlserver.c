/* test_mtlserver.c - mtl-server over loopback (the binary beside this test's directory):
 * concurrent clients' interleaved triples give every task the direct solution of (5.4);
 * SIGTERM and restart replay the journal to the same bits; kill -9 loses no acknowledged
 * triple; a torn last journal record is dropped, a damaged one in the middle refused; a
 * task's secret gets an error for every request about another task; malformed, oversized
 * and random frames get errors and never stop the server. Bounded: a few seconds. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#include <lapacke.h>

#include "blas.h"
#include "mtl.h"
#include "mtlproto.h"
#include "rng.h"
#include "server.h"
#include "test.h"
#include "testutil.h"

static char server_bin[4096], dir[256];
static pid_t server_pid = -1;
static int port;

static void cleanup(void)
{
    server_kill(&server_pid);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

/* Starts mtl-server with the common options plus extra; returns 0 once it listens. */
static int start_server(const char *extra)
{
    char pf[512], cmd[8192];
    snprintf(pf, sizeof pf, "%s/port", dir);
    unlink(pf);
    snprintf(cmd, sizeof cmd, "exec '%s' -q --port 0 --port-file '%s' --secrets '%s/secrets' "
             "--journal '%s/journal' -t rbf -g 0.5 --task-kernel linear --alpha 0.5 "
             "--lambda 0.5 --features 5 --auth-delay 0 --max-auth-failures 1000000 "
             "--max-message 100000 %s 2>>'%s/server.log'", server_bin, pf, dir, dir, extra,
             dir);
    server_spawn(cmd, &server_pid);
    return server_wait_port(pf, &server_pid, &port, 500);   /* up to 10 s */
}

/* SIGTERM; the exit status (or -1 if it had to be killed after 10 s). */
static int stop_server(void)
{
    return server_stop(&server_pid, SIGTERM, 500);
}

/* 127.0.0.1 at port p. */
static struct sockaddr_in local_addr(int p)
{
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)p);
    sa.sin_addr.s_addr = htonl(0x7f000001);
    return sa;
}

static km_mtlp_conn *conn(void)
{
    km_error err;
    km_mtlp_conn *c = km_mtlp_connect("127.0.0.1", port, &err);
    if (!c)
        printf("# connect: %s\n", err.msg);
    return c;
}

/* ---- the data: tasks 0..M-1 over a pool of inputs in 5 dimensions ---- */

#define D 5
#define NPOOL 40
#define M 5
#define L 240

typedef struct triple {
    int64_t task;
    int x;
    double y, w;
} triple;

static double pool[NPOOL][D];
static triple data[L];
static const char *secret[M] = {"alpha0-secret-000", "b-1-secret-one-1", "c.2.secret.two.2",
                                "d_3_secret_three", "e4e4e4e4e4e4e4e4e4"};

/* count GET requests of task 1 (every version from 0) appended to b. */
static void put_gets(km_buf *b, int count)
{
    for (int k = 0; k < count; k++) {
        size_t fr = km_buf_begin(b, KM_MTLP_GET);
        km_mtlp_put_auth(b, 1, secret[1]);
        km_buf_u64(b, UINT64_MAX);
        km_buf_u64(b, 0);
        km_buf_end(b, fr);
    }
}

static void make_data(uint64_t seed)
{
    km_rng r;
    km_rng_seed(&r, seed);
    for (int i = 0; i < NPOOL; i++)
        for (int j = 0; j < D; j++)
            pool[i][j] = unif(&r) < 0.2 ? 0 : 2 * unif(&r) - 1;
    for (int i = 0; i < L; i++) {
        data[i].task = (int64_t)km_rng_below(&r, M);
        /* task 4 (the passive one) alone has the last 5 inputs */
        data[i].x = data[i].task == 4 ? NPOOL - 5 + (int)km_rng_below(&r, 5)
                    : unif(&r) < 0.3  ? (int)data[i].task
                                      : (int)km_rng_below(&r, NPOOL - 5);
        data[i].y = 2 * unif(&r) - 1;
        data[i].w = 0.5 + unif(&r);
    }
}

static int64_t x_sparse(int k, int32_t *ix, double *v)
{
    int64_t n = 0;
    for (int j = 0; j < D; j++)
        if (pool[k][j] != 0) {
            ix[n] = j;
            v[n++] = pool[k][j];
        }
    return n;
}

static void put_send(km_buf *b, int64_t task, const char *sec, const triple *t, int count)
{
    size_t f = km_buf_begin(b, KM_MTLP_SEND);
    km_mtlp_put_auth(b, task, sec);
    km_buf_u64(b, 0);   /* no sequence number */
    km_buf_u32(b, (uint32_t)count);
    for (int k = 0; k < count; k++) {
        int32_t ix[D];
        double v[D];
        int64_t n = x_sparse(t[k].x, ix, v);
        km_mtlp_put_triple(b, t[k].y, t[k].w, ix, v, n);
    }
    km_buf_end(b, f);
}

typedef struct ack {
    uint64_t version;
    uint32_t count;
} ack;

static int on_ack(void *ctx, unsigned type, km_rd *r, km_error *err)
{
    ack *a = ctx;
    a->version = km_rd_u64(r);
    a->count = km_rd_u32(r);
    return type == KM_MTLP_ACK && !r->bad ? 0 : km_error_set(err, KM_EINPUT, "not an ACK");
}

/* Sends triples idx[0..n) (all of one task per request, random request sizes). */
static int send_list(km_mtlp_conn *c, const int *idx, int n, km_rng *r)
{
    km_error err;
    for (int a = 0; a < n;) {
        triple t[8];
        int k = 0, lim = 1 + (int)km_rng_below(r, 8);
        int64_t task = data[idx[a]].task;
        while (a < n && k < lim && data[idx[a]].task == task)
            t[k++] = data[idx[a++]];
        km_buf b = {0};
        put_send(&b, task, secret[task], t, k);
        ack ak;
        int rc = km_mtlp_call(c, &b, 1, on_ack, &ak, &err);
        km_buf_free(&b);
        if (rc) {
            printf("# send: %s\n", err.msg);
            return -1;
        }
    }
    return 0;
}

/* The direct solution of (5.4) over triples idx[0..n): c. */
static double *direct(const km_mtl_param *p, const int *idx, int n)
{
    double *A = malloc((size_t)n * n * sizeof *A), *c = malloc((size_t)n * sizeof *c);
    for (int a = 0; a < n; a++) {
        const triple *ta = &data[idx[a]];
        for (int b = 0; b < n; b++) {
            const triple *tb = &data[idx[b]];
            double dot = 0, d2 = 0;
            for (int j = 0; j < D; j++) {
                dot += pool[ta->x][j] * pool[tb->x][j];
                d2 += (pool[ta->x][j] - pool[tb->x][j]) * (pool[ta->x][j] - pool[tb->x][j]);
            }
            A[a + b * n] = p->alpha * exp(-p->K.gamma * d2) +
                           (ta->task == tb->task ? (1 - p->alpha) * dot : 0);
        }
        A[a + a * n] += p->lambda * ta->w;
        c[a] = ta->y;
    }
    LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, 1, A, n, c, n);
    free(A);
    return c;
}

/* Largest relative error of g_task on the pool: estimate e against the direct c. */
static double pool_error(const km_mtl_param *p, const km_mtl_estimate *e, int64_t task,
                         const int *idx, int n, const double *c)
{
    double num = 0, den = 0;
    for (int k = 0; k < NPOOL; k++) {
        int32_t ix[D];
        double v[D];
        int64_t nz = x_sparse(k, ix, v);
        double g = km_mtl_estimate_eval(e, ix, v, nz), want = 0;
        for (int a = 0; a < n; a++) {
            const triple *t = &data[idx[a]];
            double dot = 0, d2 = 0;
            for (int j = 0; j < D; j++) {
                dot += pool[t->x][j] * pool[k][j];
                d2 += (pool[t->x][j] - pool[k][j]) * (pool[t->x][j] - pool[k][j]);
            }
            want += c[a] * (p->alpha * exp(-p->K.gamma * d2) +
                            (t->task == task ? (1 - p->alpha) * dot : 0));
        }
        num = fmax(num, fabs(g - want));
        den = fmax(den, fabs(want));
    }
    return num / den;
}

/* The estimate of task from the server's disclosure, adding the task's triples idx as an
 * active (private = 1) or passive client. */
static km_mtl_estimate *client_estimate(const km_mtl_param *p, const km_mtl_disclosed *d,
                                        int64_t task, const int *idx, int n, int private_)
{
    km_error err;
    km_mtl *s = km_mtl_from_disclosed(p, d, &err);
    km_mtl_estimate *e = NULL;
    for (int a = 0; s && a < n; a++) {
        if (data[idx[a]].task != task)
            continue;
        int32_t ix[D];
        double v[D];
        int64_t nz = x_sparse(data[idx[a]].x, ix, v);
        if ((private_ ? km_mtl_update_private : km_mtl_update)(s, task, ix, v, nz,
                                                                 data[idx[a]].y,
                                                                 data[idx[a]].w, &err))
            printf("# client update: %s\n", err.msg);
    }
    if (s && km_mtl_estimate_task(s, task, &e, &err))
        printf("# estimate: %s\n", err.msg);
    km_mtl_free(s);
    return e;
}

static int get(km_mtlp_conn *c, int64_t task, km_mtl_disclosed *d)
{
    km_error err;
    int changed;
    memset(d, 0, sizeof *d);
    int rc = km_mtlp_get(c, task, secret[task], d, &changed, &err);
    if (rc)
        printf("# get: %s\n", err.msg);
    return rc;
}

static int same_disclosed(const km_mtl_disclosed *a, const km_mtl_disclosed *b)
{
    return a->version == b->version && a->n == b->n && a->X->nnz == b->X->nnz &&
           !memcmp(a->X->value, b->X->value, a->X->nnz * sizeof *a->X->value) &&
           !memcmp(a->ybar, b->ybar, a->n * sizeof *a->ybar) &&
           !memcmp(a->H, b->H, a->n * a->n * sizeof *a->H);
}

/* An error reply's code, or 0 for another reply, -1 for a closed connection. */
static int on_any(void *ctx, unsigned type, km_rd *r, km_error *err)
{
    (void)r;
    (void)err;
    *(unsigned *)ctx = type;
    return 0;
}

static int request_code(km_mtlp_conn *c, const km_buf *b)
{
    km_error err;
    unsigned type = 0;
    int rc = km_mtlp_call(c, b, 1, on_any, &type, &err);
    if (!rc)
        return 0;
    unsigned code;
    return sscanf(err.msg, "server: error %u", &code) == 1 ? (int)code : -1;
}

static void concurrent_and_restart(const km_mtl_param *p)
{
    /* task 4 stays passive: the server never sees it */
    int idx[L], n = 0, passive[L], np = 0;
    for (int i = 0; i < L; i++) {
        if (data[i].task == 4)
            passive[np++] = i;
        else
            idx[n++] = i;
    }
    CHECK(start_server("") == 0, "server starts on a free loopback port");
    /* three clients at once, each with the triples of some tasks in random request sizes */
    pid_t kids[3];
    for (int k = 0; k < 3; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            km_rng r;
            km_rng_seed(&r, 77 + k);
            int mine[L], m = 0;
            for (int a = 0; a < n; a++)
                if (data[idx[a]].task % 3 == k)
                    mine[m++] = idx[a];
            km_mtlp_conn *c = conn();
            _exit(!c || send_list(c, mine, m, &r));
        }
    }
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        int st;
        waitpid(kids[k], &st, 0);
        ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    CHECK(ok, "three clients send %d triples of 4 tasks at once, every request acknowledged", n);
    km_mtlp_conn *c = conn();
    km_mtl_disclosed d;
    get(c, 0, &d);
    double *cd = direct(p, idx, n);
    double worst = 0;
    for (int64_t t = 0; t < 4; t++) {
        km_mtl_estimate *e = client_estimate(p, &d, t, idx, n, 1);
        worst = fmax(worst, e ? pool_error(p, e, t, idx, n, cd) : INFINITY);
        km_mtl_estimate_free(e);
    }
    CHECK(worst <= 1e-8, "after the interleaving, each active client's g_j = direct (5.4) on "
          "all triples (rel err %.2g)", worst);
    /* the passive client adds task 4 locally: the direct solution over everything */
    int all[L];
    memcpy(all, idx, n * sizeof *idx);
    memcpy(all + n, passive, np * sizeof *passive);
    double *ca = direct(p, all, n + np);
    km_mtl_estimate *e = client_estimate(p, &d, 4, passive, np, 0);
    double err4 = e ? pool_error(p, e, 4, all, n + np, ca) : INFINITY;
    CHECK(err4 <= 1e-8, "a passive client's g_j = direct (5.4) with its %d private triples "
          "(rel err %.2g)", np, err4);
    km_mtl_estimate_free(e);
    free(ca);
    free(cd);
    /* a delta download equals the full one */
    km_mtlp_status st;
    km_error err;
    km_mtlp_get_status(c, 2, secret[2], &st, &err);
    int64_t l2 = 0;
    for (int a = 0; a < n; a++)
        l2 += data[idx[a]].task == 2;
    CHECK(st.version == (uint64_t)n && st.triples == (uint64_t)l2 && st.n == (uint64_t)d.n &&
          st.param.alpha == p->alpha, "STATUS: version %llu, task 2's %llu triples, n %llu",
          (unsigned long long)st.version, (unsigned long long)st.triples,
          (unsigned long long)st.n);
    int changed = 1;
    km_mtlp_get(c, 0, secret[0], &d, &changed, &err);
    CHECK(!changed, "GET at the version held: UNCHANGED");
    /* task 4's triples arrive with its 5 new inputs: a GET with what the client holds
     * brings only those, and the result equals a full download */
    km_mtl_disclosed full;
    int64_t n_before = d.n, v_before = d.version;
    km_rng r;
    km_rng_seed(&r, 9);
    send_list(c, passive, np, &r);
    get(c, 3, &full);
    changed = 0;
    int rc = km_mtlp_get(c, 0, secret[0], &d, &changed, &err);
    CHECK(!rc && changed && same_disclosed(&d, &full) && full.n == n_before + 5,
          "GET from version %lld (n %lld): the inputs after n merged = a full download "
          "(version %lld, n %lld)", (long long)v_before, (long long)n_before,
          (long long)full.version, (long long)full.n);
    km_mtl_disclosed_free(&full);
    km_mtlp_close(c);
    /* SIGTERM, restart: the journal replays to the same bits */
    int sst = stop_server();
    CHECK(sst == 0, "SIGTERM: clean exit 0");
    CHECK(start_server("") == 0, "restart on the journal");
    c = conn();
    km_mtl_disclosed d2;
    get(c, 1, &d2);
    CHECK(same_disclosed(&d, &d2), "replay: version %lld, Xbar, ybar and H the same bits as "
          "before the restart", (long long)d2.version);
    km_mtl_disclosed_free(&d2);
    km_mtlp_close(c);
    CHECK(stop_server() == 0, "second SIGTERM: clean exit");
    /* a torn last record is dropped (one more triple, its record cut short, no snapshot);
     * a damaged one inside is refused */
    char jp[512];
    snprintf(jp, sizeof jp, "%s/journal", dir);
    struct stat sb;
    stat(jp, &sb);
    CHECK(start_server("--snapshot none") == 0, "restart without snapshots");
    c = conn();
    km_rng_seed(&r, 10);
    send_list(c, passive, 1, &r);
    km_mtlp_close(c);
    stop_server();
    if (truncate(jp, sb.st_size + 10) != 0)
        printf("# truncate failed\n");
    CHECK(start_server("--snapshot none") == 0, "restart after a torn last record");
    c = conn();
    get(c, 1, &d2);
    CHECK(same_disclosed(&d, &d2), "the torn record dropped, the state intact");
    km_mtl_disclosed_free(&d2);
    km_mtlp_close(c);
    stop_server();
    struct stat sb2;
    stat(jp, &sb2);
    CHECK(sb2.st_size == sb.st_size, "the journal cut back to its %lld good bytes",
          (long long)sb.st_size);
    int fd = open(jp, O_RDWR);
    unsigned char byte;
    off_t mid = sb.st_size / 2;
    if (pread(fd, &byte, 1, mid) == 1) {
        byte ^= 0x55;
        if (pwrite(fd, &byte, 1, mid) != 1)
            printf("# pwrite failed\n");
    }
    CHECK(start_server("") == 2, "a damaged record inside the journal: the server refuses to "
          "start (exit 2), with its snapshot too");
    CHECK(start_server("--snapshot none") == 2, "... and without it");
    byte ^= 0x55;
    if (pwrite(fd, &byte, 1, mid) != 1)
        printf("# pwrite failed\n");
    close(fd);
    km_mtl_disclosed_free(&d);
}

static void kill9(const km_mtl_param *p)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -f '%s/journal' '%s/journal.snap'", dir, dir);
    if (system(cmd) != 0)
        return;
    int worst_lost = 0, rounds = 3, same = 1;
    uint64_t acked_total = 0;
    for (int round = 0; round < rounds; round++) {
        if (start_server(round == 1 ? "--fsync none" : round == 2 ? "--fsync always" : ""))
            break;
        km_mtlp_conn *c = conn();
        km_mtlp_status st;
        km_error err;
        km_mtlp_get_status(c, 0, secret[0], &st, &err);
        uint64_t from = st.version, acked = from;
        /* one triple per request, acknowledgements read 3 requests late; killed mid-way */
        int upto = (int)from + 40 + 20 * round;
        if (upto > L)
            upto = L;
        int inflight = 0;
        for (int a = (int)from; a < upto; a++) {
            km_buf b = {0};
            put_send(&b, data[a].task, secret[data[a].task], &data[a], 1);
            km_mtlp_write(c, &b, &err);
            km_buf_free(&b);
            if (++inflight > 3) {
                ack ak;
                if (km_mtlp_read(c, on_ack, &ak, &err))
                    break;
                acked = ak.version;
                inflight--;
            }
        }
        server_kill(&server_pid);
        km_mtlp_close(c);
        if (start_server(""))
            break;
        c = conn();
        km_mtl_disclosed d;
        get(c, 0, &d);
        km_mtlp_close(c);
        if ((uint64_t)d.version < acked)
            worst_lost = (int)(acked - (uint64_t)d.version);
        acked_total = (uint64_t)d.version;
        /* the state = the first d.version triples fed in order, bit for bit */
        km_error e2;
        km_mtl *s = km_mtl_new(p, &e2);
        for (int a = 0; a < d.version; a++) {
            int32_t ix[D];
            double v[D];
            int64_t nz = x_sparse(data[a].x, ix, v);
            km_mtl_update(s, data[a].task, ix, v, nz, data[a].y, data[a].w, &e2);
        }
        km_mtl_disclosed ref;
        km_mtl_disclose(s, 0, &ref, &e2);
        same &= same_disclosed(&d, &ref);
        km_mtl_disclosed_free(&ref);
        km_mtl_free(s);
        km_mtl_disclosed_free(&d);
        stop_server();
    }
    CHECK(worst_lost == 0, "kill -9 mid-stream (fsync batch, none, always), restart: no "
          "acknowledged triple lost (%llu kept)", (unsigned long long)acked_total);
    CHECK(same, "after each kill -9 the replayed state = the acknowledged prefix fed in order, "
          "bit for bit");
}

static void privacy_and_bad_input(void)
{
    CHECK(start_server("") == 0, "server up for the privacy and bad-input checks");
    km_mtlp_conn *c = conn();
    km_error err;
    km_mtlp_status st0;
    km_mtlp_get_status(c, 0, secret[0], &st0, &err);
    int all_refused = 1;
    for (int j = 0; j < M; j++)
        for (int k = 0; k < M; k++) {
            if (j == k)
                continue;
            km_buf b = {0};
            size_t f = km_buf_begin(&b, KM_MTLP_STATUS);
            km_mtlp_put_auth(&b, k, secret[j]);
            km_buf_end(&b, f);
            f = km_buf_begin(&b, KM_MTLP_GET);
            km_mtlp_put_auth(&b, k, secret[j]);
            km_buf_u64(&b, UINT64_MAX);
            km_buf_u64(&b, 0);
            km_buf_end(&b, f);
            put_send(&b, k, secret[j], &data[0], 1);
            /* three requests, three error replies */
            km_buf one = {0};
            size_t at = 0;
            for (int r = 0; r < 3; r++) {
                uint32_t len = (uint32_t)b.p[at] | (uint32_t)b.p[at + 1] << 8 |
                               (uint32_t)b.p[at + 2] << 16 | (uint32_t)b.p[at + 3] << 24;
                one.len = 0;
                km_buf_bytes(&one, b.p + at, len + 4);
                all_refused &= request_code(c, &one) == KM_MTLP_EAUTH;
                at += len + 4;
            }
            km_buf_free(&one);
            km_buf_free(&b);
        }
    km_mtlp_status st;
    km_mtlp_get_status(c, 0, secret[0], &st, &err);
    CHECK(all_refused && st.version == st0.version, "task j's secret: STATUS, GET and SEND "
          "about every other task k refused (error %d), nothing applied", KM_MTLP_EAUTH);
    km_buf b = {0};
    size_t f = km_buf_begin(&b, KM_MTLP_STATUS);
    km_mtlp_put_auth(&b, 99, "whatever");
    km_buf_end(&b, f);
    CHECK(request_code(c, &b) == KM_MTLP_EAUTH, "an unknown task: authentication error");
    b.len = 0;
    f = km_buf_begin(&b, KM_MTLP_REGISTER);
    km_mtlp_put_auth(&b, 99, "any-token-at-all-here");
    km_buf_end(&b, f);
    CHECK(request_code(c, &b) == KM_MTLP_EREFUSED, "REGISTER without --register: refused");
    /* bad triples: the whole request refused, the connection stays usable */
    triple t = data[0];
    t.w = 0;
    b.len = 0;
    put_send(&b, t.task, secret[t.task], &t, 1);
    int w0 = request_code(c, &b);
    b.len = 0;
    f = km_buf_begin(&b, KM_MTLP_SEND);
    km_mtlp_put_auth(&b, 0, secret[0]);
    km_buf_u64(&b, 0);
    km_buf_u32(&b, 1);
    int32_t ix[] = {D};   /* feature D + 1 > --features 5 */
    double v[] = {1};
    km_mtlp_put_triple(&b, 1, 1, ix, v, 1);
    km_buf_end(&b, f);
    int dim = request_code(c, &b);
    km_mtlp_get_status(c, 0, secret[0], &st, &err);
    CHECK(w0 == KM_MTLP_EINPUT && dim == KM_MTLP_EINPUT && st.version == st0.version,
          "w = 0 and a feature beyond --features refused (error %d), nothing applied",
          KM_MTLP_EINPUT);
    km_mtlp_close(c);
    /* an oversized frame: error, then the connection is closed */
    c = conn();
    b.len = 0;
    km_buf_u32(&b, 200000);
    km_buf_u8(&b, KM_MTLP_SEND);
    CHECK(request_code(c, &b) == KM_MTLP_ETOOBIG, "a frame over --max-message: error %d",
          KM_MTLP_ETOOBIG);
    km_mtlp_close(c);
    /* a client stalled in the middle of a frame, and one that asks for 200 disclosures
     * without reading them, do not hold up a third */
    int stall = socket(AF_INET, SOCK_STREAM, 0), flood = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa0 = local_addr(port);
    int up = connect(stall, (struct sockaddr *)&sa0, sizeof sa0) == 0 &&
             connect(flood, (struct sockaddr *)&sa0, sizeof sa0) == 0 &&
             send(stall, "\x20\x00\x00", 3, MSG_NOSIGNAL) == 3;
    b.len = 0;
    put_gets(&b, 200);
    struct timeval tv0 = {2, 0};
    setsockopt(flood, SOL_SOCKET, SO_SNDTIMEO, &tv0, sizeof tv0);
    up = up && send(flood, b.p, b.len, MSG_NOSIGNAL) > 0;
    c = conn();
    int answered = c && !km_mtlp_get_status(c, 2, secret[2], &st, &err);
    CHECK(up && answered, "a stalled half frame and an unread flood of 200 GETs on two other "
          "connections: a third client is answered");
    km_mtlp_close(c);
    close(stall);
    close(flood);
    /* fuzz: random bytes, random frames, mutated valid frames, cut connections */
    km_rng r;
    km_rng_seed(&r, 2024);
    int sent = 0;
    for (int round = 0; round < 200; round++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = local_addr(port);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            close(fd);
            break;
        }
        b.len = 0;
        int kind = (int)km_rng_below(&r, 4);
        if (kind == 0) {   /* random bytes */
            int n = 1 + (int)km_rng_below(&r, 300);
            for (int k = 0; k < n; k++)
                km_buf_u8(&b, (unsigned)km_rng_below(&r, 256));
        } else if (kind == 1) {   /* a frame of a random type and body */
            int n = (int)km_rng_below(&r, 100);
            size_t fr = km_buf_begin(&b, (unsigned)km_rng_below(&r, 256));
            for (int k = 0; k < n; k++)
                km_buf_u8(&b, (unsigned)km_rng_below(&r, 256));
            km_buf_end(&b, fr);
        } else {   /* a valid request with bytes flipped, or cut short */
            int64_t task = (int64_t)km_rng_below(&r, M);
            put_send(&b, task, secret[task], &data[km_rng_below(&r, L)], 1);
            size_t fr = km_buf_begin(&b, KM_MTLP_GET);
            km_mtlp_put_auth(&b, task, secret[task]);
            km_buf_u64(&b, km_rng_next(&r));
            km_buf_u64(&b, km_rng_next(&r) % 64);
            km_buf_end(&b, fr);
            for (int k = 0; k < 1 + (int)km_rng_below(&r, 4); k++)
                b.p[km_rng_below(&r, b.len)] ^= (unsigned char)(1 + km_rng_below(&r, 255));
            if (kind == 3)
                b.len = km_rng_below(&r, b.len);
        }
        if (send(fd, b.p, b.len, MSG_NOSIGNAL) > 0)
            sent++;
        if (km_rng_below(&r, 2)) {   /* sometimes read what comes back, briefly */
            struct timeval tv = {0, 20000};
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            char sink[4096];
            while (recv(fd, sink, sizeof sink, 0) > 0)
                ;
        }
        close(fd);
    }
    km_buf_free(&b);
    c = conn();
    int alive = c && !km_mtlp_get_status(c, 0, secret[0], &st, &err);
    CHECK(alive, "after %d fuzzed connections the server answers (version %llu)", sent,
          (unsigned long long)st.version);
    km_mtlp_close(c);
    int pid = server_pid;
    CHECK(stop_server() == 0, "and exits cleanly on SIGTERM (pid %d)", pid);
}

/* ---- issue 13: hostile clients and a hostile server ---- */

/* Starts mtl-server with the test's secrets and only opts (no journal unless given). */
static int start_plain(const char *opts)
{
    char pf[512], cmd[8192];
    snprintf(pf, sizeof pf, "%s/port", dir);
    unlink(pf);
    snprintf(cmd, sizeof cmd, "exec '%s' -q --port 0 --port-file '%s' --secrets '%s/secrets' %s "
             "2>>'%s/server.log'", server_bin, pf, dir, opts, dir);
    server_spawn(cmd, &server_pid);
    return server_wait_port(pf, &server_pid, &port, 500);
}

static int raw_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = local_addr(port);
    struct timeval tv = {20, 0};   /* a safety net only: no test depends on it */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads one frame from fd: its type (ERROR: *code set), -1 on EOF or error. */
static int raw_reply(int fd, unsigned *code)
{
    unsigned char h[5];
    size_t got = 0;
    while (got < 5) {
        ssize_t k = recv(fd, h + got, 5 - got, 0);
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    uint32_t len = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                   (uint32_t)h[3] << 24;
    unsigned char *b = malloc(len ? len : 1);
    got = 0;
    while (got + 1 < len) {
        ssize_t k = recv(fd, b + got, len - 1 - got, 0);
        if (k <= 0) {
            free(b);
            return -1;
        }
        got += (size_t)k;
    }
    if (h[4] == KM_MTLP_ERROR && len >= 5)
        *code = (unsigned)b[0] | (unsigned)b[1] << 8 | (unsigned)b[2] << 16 |
                (unsigned)b[3] << 24;
    free(b);
    return h[4];
}

/* 1 when the server closes fd (EOF or reset) before the safety timeout. */
static int closed_by_server(int fd)
{
    char sink[65536];
    for (;;) {
        ssize_t k = recv(fd, sink, sizeof sink, 0);
        if (k == 0 || (k < 0 && errno == ECONNRESET))
            return 1;
        if (k < 0)
            return 0;
    }
}

/* A SEND of one triple with x given as pairs, sequence number seq. */
static void put_send1(km_buf *b, int64_t task, uint64_t seq, const uint32_t *ix,
                      const double *v, int nnz, double y)
{
    size_t f = km_buf_begin(b, KM_MTLP_SEND);
    km_mtlp_put_auth(b, task, secret[task]);
    km_buf_u64(b, seq);
    km_buf_u32(b, 1);
    km_buf_f64(b, y);
    km_buf_f64(b, 1);
    km_buf_u32(b, (uint32_t)nnz);
    for (int k = 0; k < nnz; k++) {
        km_buf_u32(b, ix[k]);
        km_buf_f64(b, v[k]);
    }
    km_buf_end(b, f);
}

static uint64_t version_of(km_mtlp_conn *c)
{
    km_mtlp_status st;
    km_error err;
    return km_mtlp_get_status(c, 0, secret[0], &st, &err) ? UINT64_MAX : st.version;
}

/* Items 1, 2, 9, 11: feature indices, poisoning triples, empty inputs, retried SENDs. */
static void hostile_triples(void)
{
    char opts[1024];
    snprintf(opts, sizeof opts, "-t expdot -g 1 --max-features 1000 --auth-delay 0 "
             "--journal '%s/journal.h'", dir);
    CHECK(start_plain(opts) == 0, "server (expdot, gamma 1, --max-features 1000, no --features)");
    km_mtlp_conn *c = conn();
    km_buf b = {0};
    uint32_t imax[] = {INT32_MAX}, i1000[] = {1000}, i999[] = {999}, i0[] = {0};
    double one[] = {1};
    put_send1(&b, 1, 0, imax, one, 1, 1);
    int e1 = request_code(c, &b);
    b.len = 0;
    put_send1(&b, 1, 0, i1000, one, 1, 1);
    int e2 = request_code(c, &b);
    b.len = 0;
    put_send1(&b, 1, 0, i999, one, 1, 1);
    int e3 = request_code(c, &b);
    CHECK(e1 == KM_MTLP_EINPUT && e2 == KM_MTLP_EINPUT && e3 == 0 && version_of(c) == 1,
          "item 1: feature index 2^31 - 1 and 1000 refused (error %d) without --features, "
          "999 accepted", e1);
    km_mtl_disclosed d = {0};
    int changed;
    km_error err;
    int rc = km_mtlp_get(c, 1, secret[1], &d, &changed, &err);
    km_mtl_param pp = {0.5, 1, {KM_KERNEL_EXPDOT, 1, 0, 3, 0}, {KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0, NULL};
    km_mtl *cs = rc ? NULL : km_mtl_from_disclosed(&pp, &d, &err);
    CHECK(cs && d.X->n == 1000, "another task's client rebuilds the state (%d features)",
          cs ? (int)d.X->n : -1);
    km_mtl_free(cs);
    km_mtl_disclosed_free(&d);
    /* item 2: {1:1}, then {1:100}, {1:100} in one request */
    b.len = 0;
    put_send1(&b, 2, 0, i0, one, 1, 1);
    int p1 = request_code(c, &b);
    b.len = 0;
    size_t f = km_buf_begin(&b, KM_MTLP_SEND);
    km_mtlp_put_auth(&b, 2, secret[2]);
    km_buf_u64(&b, 0);
    km_buf_u32(&b, 3);
    for (int k = 0; k < 3; k++) {   /* a good triple first: the request is all or nothing */
        km_buf_f64(&b, 1);
        km_buf_f64(&b, 1);
        km_buf_u32(&b, 1);
        km_buf_u32(&b, 0);
        km_buf_f64(&b, k ? 100 : 0.5);
    }
    km_buf_end(&b, f);
    int p2 = request_code(c, &b);
    uint64_t v2 = version_of(c);
    rc = km_mtlp_get(c, 1, secret[1], &d, &changed, &err);
    int finite = !rc;
    for (int64_t i = 0; !rc && i < d.n * d.n; i++)
        finite &= isfinite(d.H[i]);
    CHECK(p1 == 0 && p2 == KM_MTLP_EINPUT && v2 == 2 && finite,
          "item 2: x = {1:100} (expdot: K(x, x) = inf) refused with its request (error %d), "
          "the good triple before it not applied (version %llu), the next GET answered, H "
          "finite", p2, (unsigned long long)v2);
    km_mtl_disclosed_free(&d);
    /* item 9: an empty x */
    b.len = 0;
    put_send1(&b, 3, 0, NULL, NULL, 0, 1);
    int p3 = request_code(c, &b);
    CHECK(p3 == 0 && version_of(c) == 3, "item 9: a SEND with an empty x is applied");
    /* item 11: a retried SEND (same sequence number) is acknowledged, not applied twice */
    uint32_t i5[] = {5};
    double half[] = {0.5};
    b.len = 0;
    put_send1(&b, 4, 77, i5, half, 1, 2);
    ack a1 = {0}, a2 = {0}, a3 = {0};
    int r1 = km_mtlp_call(c, &b, 1, on_ack, &a1, &err);
    int r2 = km_mtlp_call(c, &b, 1, on_ack, &a2, &err);
    km_buf b2 = {0};
    put_send1(&b2, 4, 76, i5, half, 1, 2);
    int r3 = km_mtlp_call(c, &b2, 1, on_ack, &a3, &err);
    CHECK(!r1 && !r2 && !r3 && a1.count == 1 && a2.count == 0 && a3.count == 0 &&
          a2.version == a1.version && version_of(c) == 4, "item 11: SEND seq 77 applied once; "
          "its retry and seq 76 acknowledged with count 0 (version %llu)",
          (unsigned long long)a1.version);
    km_mtlp_close(c);
    CHECK(stop_server() == 0, "SIGTERM");
    CHECK(start_plain(opts) == 0, "restart on the journal");
    c = conn();
    ack a4 = {0}, a5 = {0};
    r1 = km_mtlp_call(c, &b, 1, on_ack, &a4, &err);
    b2.len = 0;
    put_send1(&b2, 4, 78, i5, half, 1, 2);
    r2 = km_mtlp_call(c, &b2, 1, on_ack, &a5, &err);
    CHECK(!r1 && !r2 && a4.count == 0 && a4.version == 4 && a5.count == 1 && a5.version == 5,
          "after a restart: the refused request was not journaled (version 4), seq 77 is "
          "still a retry, seq 78 applied");
    km_buf_free(&b);
    km_buf_free(&b2);
    km_mtlp_close(c);
    stop_server();
}

/* Item 7: connection limits, timeouts and memory budgets. */
static void hostile_connections(void)
{
    CHECK(start_plain("--max-per-peer 3 --idle-timeout 0.3 --io-timeout 0.3 --auth-delay 0 "
                      "--max-message 100000 --conn-memory 150000 --max-memory 250000") == 0,
          "server with --max-per-peer 3, timeouts 0.3 s, --max-memory 250000");
    /* a fourth connection from one address is refused; the idle ones are closed */
    int fds[4];
    for (int k = 0; k < 4; k++)
        fds[k] = raw_connect();
    unsigned code = 0;
    int t4 = raw_reply(fds[3], &code);
    CHECK(t4 == KM_MTLP_ERROR && code == KM_MTLP_EBUSY, "a 4th connection from 127.0.0.1: "
          "ERROR %u (busy), closed", code);
    int idle = 1;
    for (int k = 0; k < 3; k++)
        idle &= closed_by_server(fds[k]);
    CHECK(idle, "3 idle connections closed by the server (--idle-timeout)");
    for (int k = 0; k < 4; k++)
        close(fds[k]);
    /* a frame stalled in the middle: ERROR timeout, closed */
    int st = raw_connect();
    int sent = st >= 0 && send(st, "\x20\x00\x00\x00\x04\x01", 6, MSG_NOSIGNAL) == 6;
    code = 0;
    int tt = raw_reply(st, &code);
    CHECK(sent && tt == KM_MTLP_ERROR && code == KM_MTLP_ETIMEOUT && closed_by_server(st),
          "a frame stalled in the middle: ERROR %u (timeout), closed", code);
    close(st);
    /* frames stalled one byte short hold memory: beyond the budget, refused */
    int big[3], refused = -1;
    unsigned char *junk = calloc(1, 99995);
    junk[0] = 0x9b;   /* length 99995 (type + body), type 0x02 */
    junk[1] = 0x86;
    junk[2] = 0x01;
    junk[3] = 0;
    junk[4] = KM_MTLP_SEND;
    for (int k = 0; k < 3; k++) {
        big[k] = raw_connect();
        if (send(big[k], junk, 99995, MSG_NOSIGNAL) != 99995)
            printf("# short send\n");
        sleep_ms(50);   /* let the server read it before the next one */
    }
    code = 0;
    if (raw_reply(big[2], &code) == KM_MTLP_ERROR)
        refused = (int)code;
    km_mtlp_conn *c = conn();
    int alive = c && version_of(c) != UINT64_MAX;
    km_mtlp_close(c);
    CHECK(refused == KM_MTLP_EBUSY && alive, "3 frames of 100 kB stalled 4 bytes short: the "
          "third is refused (ERROR %d, --max-memory 250000); a small request is answered",
          refused);
    for (int k = 0; k < 3; k++)
        close(big[k]);
    free(junk);
    /* a client that never reads its replies (720 kB each: n = 300) is closed */
    CHECK(stop_server() == 0, "SIGTERM");
    CHECK(start_plain("--io-timeout 0.3 --auth-delay 0") == 0, "server with --io-timeout 0.3");
    c = conn();
    km_buf tb = {0};
    size_t tf = km_buf_begin(&tb, KM_MTLP_SEND);
    km_mtlp_put_auth(&tb, 0, secret[0]);
    km_buf_u64(&tb, 0);
    km_buf_u32(&tb, 300);
    for (int k = 0; k < 300; k++) {
        int32_t ix0[] = {0};
        double v0[] = {0.001 * (k + 1)};
        km_mtlp_put_triple(&tb, 1, 1, ix0, v0, 1);
    }
    km_buf_end(&tb, tf);
    int filled = request_code(c, &tb) == 0 && version_of(c) == 300;
    km_buf_free(&tb);
    km_mtlp_close(c);
    int fl = socket(AF_INET, SOCK_STREAM, 0), rcv = 4096;
    setsockopt(fl, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);   /* the replies back up */
    struct timeval tv20 = {20, 0};
    setsockopt(fl, SOL_SOCKET, SO_RCVTIMEO, &tv20, sizeof tv20);
    struct sockaddr_in sa = local_addr(port);
    if (connect(fl, (struct sockaddr *)&sa, sizeof sa) != 0)
        printf("# connect failed\n");
    km_buf b = {0};
    put_gets(&b, 200);
    int ok = send(fl, b.p, b.len, MSG_NOSIGNAL) == (ssize_t)b.len;
    km_buf_free(&b);
    sleep_ms(1500);   /* not reading, for 5 times --io-timeout */
    int replies = 0;
    while (ok && raw_reply(fl, &code) >= 0)
        replies++;
    CHECK(filled && ok && replies < 200, "200 GETs whose replies are not read: the "
          "connection is closed (%d replies had left)", replies);
    close(fl);
    CHECK(stop_server() == 0, "SIGTERM");
}

/* Item 8: REGISTER only with the admin token, uniform refusals, limits; failed
 * authentications limited per address. */
static void hostile_auth(void)
{
    char opts[1024], tok[512];
    snprintf(tok, sizeof tok, "%s/admin", dir);
    FILE *f = fopen(tok, "w");
    fprintf(f, "the-admin-token-0123\n");
    fclose(f);
    snprintf(opts, sizeof opts, "--register --admin-token-file '%s' --max-secrets 2 "
             "--auth-delay 0 --max-auth-failures 5", tok);
    CHECK(start_plain(opts) == 0, "server with --register and an admin token");
    km_mtlp_conn *c = conn();
    km_error err;
    char s1[KM_MTLP_SECRET_MAX + 1], m1[sizeof err.msg], m2[sizeof err.msg], m3[sizeof err.msg];
    int r1 = km_mtlp_register(c, 100, "not-the-admin-token", s1, &err);
    snprintf(m1, sizeof m1, "%s", err.msg);
    int r2 = km_mtlp_register(c, 0, "not-the-admin-token", s1, &err);   /* task 0 exists */
    snprintf(m2, sizeof m2, "%s", err.msg);
    CHECK(r1 && r2 && !strcmp(m1, m2) && strstr(m1, "error 5: registration refused"),
          "REGISTER with a wrong token: the same refusal for a new and an existing task (%s)",
          m1);
    int r3 = km_mtlp_register(c, 100, "the-admin-token-0123", s1, &err);
    km_mtlp_status st;
    int r4 = r3 ? -1 : km_mtlp_get_status(c, 100, s1, &st, &err);
    CHECK(!r3 && !r4 && strlen(s1) == 32, "with the admin token: a secret that works");
    int r5 = km_mtlp_register(c, 100, "the-admin-token-0123", s1, &err);
    snprintf(m3, sizeof m3, "%s", err.msg);
    int r6 = km_mtlp_register(c, 101, "the-admin-token-0123", s1, &err);
    int r7 = km_mtlp_register(c, 102, "the-admin-token-0123", s1, &err);
    CHECK(r5 && strstr(m3, "already has a secret") && !r6 && r7 &&
          strstr(err.msg, "registration limit"), "the admin is told a task has a secret; "
          "--max-secrets 2: the third refused (%s)", err.msg);
    km_mtlp_close(c);
    /* 5 failed authentications from an address: then even the right secret is refused */
    c = conn();
    int fails = 0;
    for (int k = 0; k < 5; k++)
        fails += km_mtlp_get_status(c, 1, "wrong-secret-0123456", &st, &err) != 0;
    int blocked = km_mtlp_get_status(c, 1, secret[1], &st, &err);
    CHECK(fails == 5 && blocked && strstr(err.msg, "error 3"), "--max-auth-failures 5: after "
          "5 wrong secrets the right one is refused too (%s)", err.msg);
    km_mtlp_close(c);
    CHECK(stop_server() == 0, "SIGTERM");
}

/* Item 6: the client library against a hostile server. */
static void hostile_server(void)
{
    /* decoder: counts against the bytes present */
    km_buf b = {0};
    km_buf_u64(&b, 1);
    km_buf_u64(&b, 1);   /* n */
    km_buf_u64(&b, 0);   /* first */
    km_buf_u32(&b, 1000000);   /* a row of 1,000,000 pairs in a 28-byte body */
    km_buf_f64(&b, 0);
    km_buf_f64(&b, 1);
    km_rd r = {b.p, b.p + b.len, 0};
    km_mtl_disclosed d;
    km_error err;
    int e1 = km_mtlp_get_disclosed(&r, &d, &err);
    b.len = 0;
    km_buf_u64(&b, 1);
    km_buf_u64(&b, (uint64_t)1 << 40);   /* n^2 overflows nothing, the body is 24 bytes */
    km_buf_u64(&b, 0);
    r = (km_rd){b.p, b.p + b.len, 0};
    int e2 = km_mtlp_get_disclosed(&r, &d, &err);
    b.len = 0;
    km_buf_u64(&b, 1);
    km_buf_u64(&b, 2);
    km_buf_u64(&b, 3);   /* first > n */
    r = (km_rd){b.p, b.p + b.len, 0};
    int e3 = km_mtlp_get_disclosed(&r, &d, &err);
    b.len = 0;   /* n = 1, one row with index 2^31 - 1 */
    km_buf_u64(&b, 1);
    km_buf_u64(&b, 1);
    km_buf_u64(&b, 0);
    km_buf_u32(&b, 1);
    km_buf_u32(&b, INT32_MAX);
    km_buf_f64(&b, 1);
    km_buf_f64(&b, 0);
    km_buf_f64(&b, 1);
    r = (km_rd){b.p, b.p + b.len, 0};
    int e4 = km_mtlp_get_disclosed(&r, &d, &err);
    CHECK(e1 == KM_EINPUT && e2 == KM_EINPUT && e3 == KM_EINPUT && e4 == KM_EINPUT,
          "DISCLOSED bodies with a row longer than the body, n^2 beyond it, first > n, "
          "a feature index 2^31 - 1: refused before any allocation");
    /* a fake server answers GET with the first of those (the row's nnz beyond the bytes) */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = local_addr(0);
    socklen_t sl = sizeof sa;
    int up = bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(lfd, 4) == 0 &&
             getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0;
    pid_t kid = up ? fork() : -1;
    if (kid == 0) {
        for (int k = 0; k < 2; k++) {
            int fd = accept(lfd, NULL, NULL);
            unsigned char req[512];
            if (recv(fd, req, sizeof req, 0) <= 0)
                _exit(1);
            km_buf o = {0};
            size_t fr = km_buf_begin(&o, KM_MTLP_DISCLOSED);
            if (k == 0) {
                km_buf_u64(&o, 5);
                km_buf_u64(&o, 2);
                km_buf_u64(&o, 0);
                km_buf_u32(&o, 1);
                km_buf_u32(&o, 0);
                km_buf_f64(&o, 1);
                km_buf_u32(&o, 50);   /* 50 pairs claimed, 48 bytes left */
                for (int i = 0; i < 6; i++)
                    km_buf_f64(&o, 0.5);
                km_buf_end(&o, fr);
            } else {   /* a frame of 4 GiB claimed, 16 bytes sent */
                o.len = 0;
                km_buf_u32(&o, UINT32_MAX);
                km_buf_u8(&o, KM_MTLP_DISCLOSED);
                km_buf_u64(&o, 1);
                km_buf_u64(&o, 1);
            }
            if (send(fd, o.p, o.len, MSG_NOSIGNAL) < 0)
                _exit(1);
            km_buf_free(&o);
            close(fd);
        }
        _exit(0);
    }
    int ok = kid > 0;
    for (int k = 0; k < 2 && ok; k++) {
        km_mtlp_conn *c = km_mtlp_connect("127.0.0.1", ntohs(sa.sin_port), &err);
        km_mtl_disclosed dd = {0};
        int changed;
        ok &= c && km_mtlp_get(c, 1, secret[1], &dd, &changed, &err) == KM_EINPUT && !dd.X;
        km_mtlp_close(c);
    }
    if (kid > 0)
        waitpid(kid, NULL, 0);
    close(lfd);
    km_buf_free(&b);
    CHECK(ok, "a hostile server: a row's nnz beyond the bytes, a 4 GiB frame cut short: "
          "km_mtlp_get fails cleanly (%s)", err.msg);
}

int main(int argc, char **argv)
{
    (void)argc;
    km_blas_threads(1);
    find_server_bin(argv[0], server_bin, sizeof server_bin);
    snprintf(dir, sizeof dir, "/tmp/kmtk-mtlserver-XXXXXX");
    if (!mkdtemp(dir)) {
        printf("FAIL - mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    atexit(cleanup);
    signal(SIGPIPE, SIG_IGN);
    char path[512];
    snprintf(path, sizeof path, "%s/secrets", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "# task secret\n");
    for (int j = 0; j < M; j++)
        fprintf(f, "%d %s\n", j, secret[j]);
    fclose(f);
    make_data(5);
    km_mtl_param p = {0.5, 0.5, {KM_KERNEL_RBF, 0.5, 0, 3, 0}, {KM_KERNEL_LINEAR, 0, 0, 1, 0}, 0, NULL};
    concurrent_and_restart(&p);
    kill9(&p);
    privacy_and_bad_input();
    hostile_triples();
    hostile_connections();
    hostile_auth();
    hostile_server();
    TEST_EXIT();
}
