/* fuzz_wire.c - the mtl-server wire protocol (common/mtlproto.c) and the server's dispatch
 * (common/mtlserver.c), chosen by the first byte of the input:
 *   0  km_mtlp_get_disclosed on two bodies (u16 length of the first, first, second), their
 *      merge, and a client state built from the first (km_mtl_from_disclosed)
 *   1  a SEND body as the server checks it after the auth: u64 seq, u32 count, triples
 *      (km_mtlp_get_triple, km_mtlp_triple_x, km_mtl_check_triple)
 *   2  km_mtlp_get_auth, then km_mtlp_get_param, on the rest
 *   3  the client library reading replies: a fake server sends the rest of the input as its
 *      reply bytes to km_mtlp_register, km_mtlp_get_status or two km_mtlp_get (merge)
 *   4, 5  a real server (km_mtl_server_run on 127.0.0.1, a thread, a journal in the temporary
 *      directory; any feature index (4) or 8 features (5)): one connection sends the rest
 *      of the input (frames), half-closes and reads every reply until the server closes it;
 *      the replies must be whole frames; then the server stops, and a server started again
 *      on its journal must replay it. Tasks 1 and 2 have secrets SECRET1 and SECRET2,
 *      REGISTER takes ADMIN_TOKEN (protocol version 2: 16 to 64 characters each). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>

#include "fuzz_util.h"
#include "mtl.h"
#include "mtlproto.h"
#include "mtlserver.h"

#define SECRET1 "fuzz-secret-of-1"
#define SECRET2 "fuzz-secret-of-2"
#define ADMIN_TOKEN "fuzz-admin-token"

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- 0: disclosures ---- */

static void check_disclosed(const km_mtl_disclosed *d)
{
    FZ_CHECK(d->n >= 0 && d->first >= 0 && d->first <= d->n && d->X &&
                 d->X->l == d->n - d->first && d->X->row_ptr[d->X->l] == d->X->nnz,
             "disclosure shape");
    for (int64_t i = 0; i < d->X->l; i++)   /* regressions/fuzz_wire/disclosed_rows_half_read */
        FZ_CHECK(d->X->row_ptr[i] <= d->X->row_ptr[i + 1], "disclosure row_ptr[%lld]",
                 (long long)i + 1);
    for (int64_t i = 0; i < d->X->l; i++)
        for (int64_t k = d->X->row_ptr[i]; k < d->X->row_ptr[i + 1]; k++)
            FZ_CHECK(d->X->index[k] >= 0 && d->X->index[k] < d->X->n &&
                         (k == d->X->row_ptr[i] || d->X->index[k] > d->X->index[k - 1]),
                     "disclosure row %lld", (long long)i);
}

static void disclosures(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    size_t na = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2, size -= 2;
    if (na > size)
        na = size;
    km_rd ra = {data, data + na, 0}, rb = {data + na, data + size, 0};
    km_mtl_disclosed d, upd;
    km_error err;
    if (km_mtlp_get_disclosed(&ra, &d, &err))
        return;
    check_disclosed(&d);
    if (d.first == 0 && d.n <= 64) {
        km_mtl_param p = km_mtl_param_default();
        km_mtl *s = km_mtl_from_disclosed(&p, &d, &err);
        km_mtl_free(s);
    }
    if (km_mtlp_get_disclosed(&rb, &upd, &err) == KM_OK) {
        check_disclosed(&upd);
        if (km_mtl_disclosed_merge(&d, &upd, &err) == KM_OK)
            check_disclosed(&d);
        km_mtl_disclosed_free(&upd);
    }
    km_mtl_disclosed_free(&d);
}

/* ---- 1, 2: request bodies ---- */

static void send_body(const uint8_t *data, size_t size)
{
    km_rd r = {data, data + size, 0};
    km_rd_u64(&r);   /* seq */
    uint32_t count = km_rd_u32(&r);
    if (r.bad || count > size / 20)
        return;
    for (uint32_t k = 0; k < count; k++) {
        km_mtlp_triple t;
        if (km_mtlp_get_triple(&r, &t))
            return;
        int32_t *xi = malloc(((size_t)t.nnz + 1) * sizeof *xi);
        double *xv = malloc(((size_t)t.nnz + 1) * sizeof *xv);
        FZ_CHECK(xi && xv, "out of memory");
        km_mtlp_triple_x(&t, xi, xv);
        km_error err;
        km_mtl_check_triple(xi, xv, t.nnz, t.y, t.w, 0, &err);
        km_mtl_check_triple(xi, xv, t.nnz, t.y, t.w, 8, &err);
        free(xi);
        free(xv);
    }
}

static void auth_param(const uint8_t *data, size_t size)
{
    km_rd r = {data, data + size, 0};
    int64_t task;
    char secret[KM_MTLP_SECRET_MAX + 1];
    if (km_mtlp_get_auth(&r, &task, secret) == 0)
        FZ_CHECK(strlen(secret) <= KM_MTLP_SECRET_MAX, "secret length");
    km_mtl_param p;
    int32_t nf;
    if (km_mtlp_get_param(&r, &p, &nf) == 0) {
        km_error err;
        km_mtl *s = km_mtl_new(&p, &err);
        FZ_CHECK(s, "parameters accepted but refused by km_mtl_new: %s", err.msg);
        km_mtl_free(s);
    }
}

/* ---- 3: the client against a fake server ---- */

static int listen_fd = -1, listen_port;

static void listen_once(void)
{
    if (listen_fd >= 0)
        return;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof a) ||
        listen(listen_fd, 4) || getsockname(listen_fd, (struct sockaddr *)&a, &al)) {
        perror("fuzz_wire: listen");
        abort();
    }
    listen_port = ntohs(a.sin_port);
}

static void client(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    unsigned what = data[0] % 3;
    data++, size--;
    listen_once();
    km_error err;
    km_mtlp_conn *c = km_mtlp_connect("127.0.0.1", listen_port, &err);
    FZ_CHECK(c, "connect: %s", err.msg);
    int fd;
    while ((fd = accept(listen_fd, NULL, NULL)) < 0 && errno == EINTR)
        ;   /* libFuzzer's SIGALRM (its -timeout watchdog) interrupts any blocking call */
    FZ_CHECK(fd >= 0, "accept: %s", strerror(errno));
    size_t off = 0;
    while (off < size) {
        ssize_t k = send(fd, data + off, size - off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        FZ_CHECK(k > 0, "send: %s", strerror(errno));
        off += (size_t)k;
    }
    shutdown(fd, SHUT_WR);
    if (what == 0) {
        char secret[KM_MTLP_SECRET_MAX + 1];
        if (km_mtlp_register(c, 1, ADMIN_TOKEN, secret, &err) == KM_OK)
            FZ_CHECK(strlen(secret) <= KM_MTLP_SECRET_MAX, "secret");
    } else if (what == 1) {
        km_mtlp_status st;
        km_mtlp_get_status(c, 1, SECRET1, &st, &err);
    } else {
        km_mtl_disclosed d = {0};
        int changed;
        if (km_mtlp_get(c, 1, SECRET1, &d, &changed, &err) == KM_OK && d.X) {
            check_disclosed(&d);
            if (km_mtlp_get(c, 1, SECRET1, &d, &changed, &err) == KM_OK)
                check_disclosed(&d);
        }
        km_mtl_disclosed_free(&d);
    }
    km_mtlp_close(c);
    close(fd);
}

/* ---- 4, 5: the server ---- */

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

typedef struct srv {
    km_mtl_server_config cfg;
    volatile sig_atomic_t stop;
    int wake[2];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready, port, rc;
    km_error err;
} srv;

static void on_ready(void *ctx, int port)
{
    srv *s = ctx;
    pthread_mutex_lock(&s->mu);
    s->port = port;
    s->ready = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *serve(void *arg)
{
    srv *s = arg;
    s->rc = km_mtl_server_run(&s->cfg, &s->err);
    on_ready(s, 0);   /* in case it failed before listening */
    return NULL;
}

static const int64_t secret_task[] = {1, 2};
static char s1[] = SECRET1, s2[] = SECRET2;
static char *const secrets[] = {s1, s2};

static void server_config(srv *s, const char *journal, int32_t nfeat)
{
    memset(s, 0, sizeof *s);
    km_mtl_server_config_default(&s->cfg);
    s->cfg.n_features = nfeat;
    s->cfg.max_features = INT32_MAX;     /* without nfeat: any index (mode 4) */
    s->cfg.port = 0;
    s->cfg.journal = journal;
    s->cfg.fsync_policy = KM_FSYNC_NONE;
    s->cfg.allow_register = 1;
    s->cfg.admin_token = ADMIN_TOKEN;
    s->cfg.max_message = 4096;
    s->cfg.max_clients = 4;
    s->cfg.max_inputs = 256;             /* a state of at most about 1.3 MB */
    s->cfg.auth_delay_ms = 0;            /* a wrong secret must not stall the run */
    s->cfg.max_auth_failures = 1 << 30;
    s->cfg.io_timeout_ms = 3000;         /* below the 10 s the harness waits */
    s->cfg.nsecrets = 2;
    s->cfg.secret_task = secret_task;
    s->cfg.secret = secrets;
    s->cfg.ready = on_ready;
    s->cfg.ctx = s;
    s->cfg.stop = &s->stop;
    if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC))   /* the server drains it to EAGAIN */
        abort();
    s->cfg.wake_fd = s->wake[0];
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
}

static void server_done(srv *s)
{
    close(s->wake[0]);
    close(s->wake[1]);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

/* The replies in buf[0..len) are whole frames of reply types. */
static void check_replies(const unsigned char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        FZ_CHECK(len - off >= KM_MTLP_HEADER, "a torn reply frame");
        uint32_t n = le32(buf + off);
        unsigned type = buf[off + 4];
        FZ_CHECK(n >= 1 && n <= len - off - 4, "reply frame of %u bytes, %zu left", n,
                 len - off - 4);
        FZ_CHECK(type >= KM_MTLP_SECRET, "reply of request type %u", type);
        off += 4 + (size_t)n;
    }
}

static void server(const uint8_t *data, size_t size, int32_t nfeat)
{
    char journal[512];
    fz_path(journal, "journal");
    unlink(journal);
    srv s;
    server_config(&s, journal, nfeat);
    pthread_t th;
    if (pthread_create(&th, NULL, serve, &s))
        abort();
    pthread_mutex_lock(&s.mu);
    while (!s.ready)
        pthread_cond_wait(&s.cv, &s.mu);
    pthread_mutex_unlock(&s.mu);
    FZ_CHECK(s.port > 0, "server did not start: %s", s.err.msg);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)s.port);
    FZ_CHECK(fd >= 0, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {   /* EINTR: it goes on; wait */
        FZ_CHECK(errno == EINTR, "connect: %s", strerror(errno));
        struct pollfd p = {fd, POLLOUT, 0};
        int e = 0;
        socklen_t el = sizeof e;
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
        FZ_CHECK(!getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) && !e, "connect: %s",
                 strerror(e));
    }
    size_t off = 0, got = 0, cap = 1 << 16;
    unsigned char *in = malloc(cap);
    FZ_CHECK(in, "out of memory");
    if (!size)
        shutdown(fd, SHUT_WR);
    int64_t quiet_since = now_ms();
    for (;;) {
        struct pollfd p = {fd, (short)(POLLIN | (off < size ? POLLOUT : 0)), 0};
        int k = poll(&p, 1, 1000);
        /* EINTR: libFuzzer's SIGALRM watchdog lands here now and then; it is not silence */
        FZ_CHECK(k >= 0 || errno == EINTR, "poll: %s", strerror(errno));
        if (k <= 0) {
            FZ_CHECK(now_ms() - quiet_since < 10000,
                     "the server neither reads nor answers for 10 s");
            continue;
        }
        quiet_since = now_ms();
        if (p.revents & POLLOUT) {
            ssize_t w = send(fd, data + off, size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0 && (off += (size_t)w) == size)
                shutdown(fd, SHUT_WR);
            else if (w < 0 && errno != EAGAIN)
                off = size;   /* the server closed the connection */
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            if (got == cap) {
                unsigned char *q = realloc(in, cap *= 2);
                FZ_CHECK(q, "out of memory");
                in = q;
            }
            ssize_t r = recv(fd, in + got, cap - got, MSG_DONTWAIT);
            if (r > 0)
                got += (size_t)r;
            else if (r == 0 || errno != EAGAIN)
                break;
        }
    }
    close(fd);
    check_replies(in, got);
    free(in);
    s.stop = 1;
    if (write(s.wake[1], "x", 1) != 1)
        abort();
    pthread_join(th, NULL);
    FZ_CHECK(s.rc == KM_OK, "server failed: %s", s.err.msg);
    server_done(&s);
    if (s.rc != KM_OK)
        return;
    /* the journal it wrote replays */
    server_config(&s, journal, nfeat);
    s.stop = 1;
    s.rc = km_mtl_server_run(&s.cfg, &s.err);
    FZ_CHECK(s.rc == KM_OK, "its journal does not replay: %s", s.err.msg);
    server_done(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fz_tmpdir();
    unsigned mode = data[0] % 6;
    data++, size--;
    if (mode == 0) {
        disclosures(data, size);
    } else if (mode == 1) {
        send_body(data, size);
    } else if (mode == 2) {
        auth_param(data, size);
    } else if (mode == 3) {
        client(data, size);
    } else {
        server(data, size, mode == 4 ? 0 : 8);
    }
    return 0;
}
