/* mtlproto.c - see mtlproto.h. */
#include "mtlproto.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- buffers ---- */

void km_buf_free(km_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static unsigned char *buf_room(km_buf *b, size_t n)
{
    if (b->failed)
        return NULL;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) {
            if (cap > SIZE_MAX / 2) {
                b->failed = 1;
                return NULL;
            }
            cap *= 2;
        }
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    unsigned char *q = b->p + b->len;
    b->len += n;
    return q;
}

static void put_le(km_buf *b, uint64_t v, int n)
{
    unsigned char *q = buf_room(b, (size_t)n);
    for (int i = 0; q && i < n; i++)
        q[i] = (unsigned char)(v >> (8 * i));
}

void km_buf_u8(km_buf *b, unsigned v) { put_le(b, v, 1); }
void km_buf_u16(km_buf *b, unsigned v) { put_le(b, v, 2); }
void km_buf_u32(km_buf *b, uint32_t v) { put_le(b, v, 4); }
void km_buf_u64(km_buf *b, uint64_t v) { put_le(b, v, 8); }

void km_buf_f64(km_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_le(b, u, 8);
}

void km_buf_bytes(km_buf *b, const void *p, size_t n)
{
    unsigned char *q = buf_room(b, n);
    if (q && n)
        memcpy(q, p, n);
}

size_t km_buf_begin(km_buf *b, unsigned type)
{
    size_t at = b->len;
    km_buf_u32(b, 0);
    km_buf_u8(b, type);
    return at;
}

void km_buf_end(km_buf *b, size_t frame)
{
    if (b->failed)
        return;
    uint64_t len = b->len - frame - 4;
    if (len > UINT32_MAX) {
        b->failed = 1;
        return;
    }
    for (int i = 0; i < 4; i++)
        b->p[frame + i] = (unsigned char)(len >> (8 * i));
}

/* ---- reader ---- */

static uint64_t get_le(km_rd *r, int n)
{
    if (r->bad || r->end - r->p < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

unsigned km_rd_u8(km_rd *r) { return (unsigned)get_le(r, 1); }
unsigned km_rd_u16(km_rd *r) { return (unsigned)get_le(r, 2); }
uint32_t km_rd_u32(km_rd *r) { return (uint32_t)get_le(r, 4); }
uint64_t km_rd_u64(km_rd *r) { return get_le(r, 8); }

double km_rd_f64(km_rd *r)
{
    uint64_t u = get_le(r, 8);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

const unsigned char *km_rd_bytes(km_rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *q = r->p;
    r->p += n;
    return q;
}

/* ---- triples, auth, parameters ---- */

void km_mtlp_put_triple(km_buf *b, double y, double w, const int32_t *index,
                        const double *value, int64_t nnz)
{
    km_buf_f64(b, y);
    km_buf_f64(b, w);
    km_buf_u32(b, (uint32_t)nnz);
    for (int64_t k = 0; k < nnz; k++) {
        km_buf_u32(b, (uint32_t)index[k]);
        km_buf_f64(b, value[k]);
    }
}

int km_mtlp_get_triple(km_rd *r, km_mtlp_triple *t)
{
    t->y = km_rd_f64(r);
    t->w = km_rd_f64(r);
    t->nnz = km_rd_u32(r);
    t->pairs = r->bad ? NULL : km_rd_bytes(r, (size_t)t->nnz * 12);
    return r->bad ? -1 : 0;
}

void km_mtlp_triple_x(const km_mtlp_triple *t, int32_t *index, double *value)
{
    km_rd r = {t->pairs, t->pairs + (size_t)t->nnz * 12, 0};
    for (uint32_t k = 0; k < t->nnz; k++) {
        uint32_t i = km_rd_u32(&r);
        index[k] = i > INT32_MAX ? -1 : (int32_t)i;   /* -1: refused by the triple check */
        value[k] = km_rd_f64(&r);
    }
}

void km_mtlp_put_auth(km_buf *b, int64_t task, const char *secret)
{
    size_t n = strlen(secret);
    km_buf_u64(b, (uint64_t)task);
    km_buf_u16(b, (unsigned)n);
    km_buf_bytes(b, secret, n);
}

int km_mtlp_get_auth(km_rd *r, int64_t *task, char secret[KM_MTLP_SECRET_MAX + 1])
{
    *task = (int64_t)km_rd_u64(r);
    unsigned n = km_rd_u16(r);
    const unsigned char *s = n > KM_MTLP_SECRET_MAX ? NULL : km_rd_bytes(r, n);
    if (!s)
        return -1;
    memcpy(secret, s, n);
    secret[n] = '\0';
    return memchr(secret, '\0', n) ? -1 : 0;
}

static void put_kernel(km_buf *b, const km_kernel *k)
{
    km_buf_u8(b, (unsigned)k->type);
    km_buf_f64(b, k->gamma);
    km_buf_f64(b, k->coef0);
    km_buf_u32(b, (uint32_t)k->degree);
}

static void get_kernel(km_rd *r, km_kernel *k)
{
    k->type = (km_kernel_type)km_rd_u8(r);
    k->gamma = km_rd_f64(r);
    k->coef0 = km_rd_f64(r);
    k->degree = (int)(int32_t)km_rd_u32(r);
    k->offset = 0;   /* not on the wire: the mtl kernels have none */
}

void km_mtlp_put_param(km_buf *b, const km_mtl_param *p, int32_t n_features)
{
    km_buf_f64(b, p->alpha);
    km_buf_f64(b, p->lambda);
    put_kernel(b, &p->K);
    put_kernel(b, &p->Kt);
    km_buf_u32(b, (uint32_t)n_features);
}

void km_mtlp_put_task_kernels(km_buf *b, const km_mtl_param *p)
{
    km_buf_u64(b, (uint64_t)p->ntk);
    for (int64_t k = 0; k < p->ntk; k++) {
        km_buf_u64(b, (uint64_t)p->tk[k].task);
        put_kernel(b, &p->tk[k].kernel);
    }
}

int km_mtlp_get_param(km_rd *r, km_mtl_param *p, int32_t *n_features)
{
    p->alpha = km_rd_f64(r);
    p->lambda = km_rd_f64(r);
    get_kernel(r, &p->K);
    get_kernel(r, &p->Kt);
    p->ntk = 0;
    p->tk = NULL;
    *n_features = (int32_t)km_rd_u32(r);
    return r->bad || km_mtl_param_check(p, 0, NULL) ? -1 : 0;
}

/* ---- disclosed data ---- */

void km_mtlp_put_disclosed(km_buf *b, const km_mtl_disclosed *d, int64_t first)
{
    km_buf_u64(b, (uint64_t)d->version);
    km_buf_u64(b, (uint64_t)d->n);
    km_buf_u64(b, (uint64_t)first);
    const km_problem *X = d->X;
    for (int64_t i = first - d->first; i < X->l; i++) {
        int64_t a = X->row_ptr[i], nnz = X->row_ptr[i + 1] - a;
        km_buf_u32(b, (uint32_t)nnz);
        for (int64_t k = a; k < a + nnz; k++) {
            km_buf_u32(b, (uint32_t)X->index[k]);
            km_buf_f64(b, X->value[k]);
        }
    }
    for (int64_t i = 0; i < d->n; i++)
        km_buf_f64(b, d->ybar[i]);
    unsigned char *q = buf_room(b, (size_t)(d->n * d->n) * 8);
    for (int64_t i = 0; q && i < d->n * d->n; i++) {
        uint64_t u;
        memcpy(&u, &d->H[i], 8);
        for (int k = 0; k < 8; k++)
            q[8 * i + k] = (unsigned char)(u >> (8 * k));
    }
}

/* Walks the m rows of a disclosure without storing them: every row's nnz against the
 * bytes left, indices increasing and below KM_MTL_MAX_INDEX, values finite. Their total
 * nnz, or -1 when malformed. */
static int64_t check_rows(km_rd r, uint64_t m)
{
    int64_t total = 0;
    for (uint64_t i = 0; i < m; i++) {
        uint32_t nnz = km_rd_u32(&r);
        if (r.bad || nnz > (size_t)(r.end - r.p) / 12)
            return -1;
        int64_t last = -1;
        for (uint32_t k = 0; k < nnz; k++) {
            uint32_t ix = km_rd_u32(&r);
            double v = km_rd_f64(&r);
            if (ix >= KM_MTL_MAX_INDEX || (int64_t)ix <= last || !isfinite(v) || v == 0)
                return -1;
            last = ix;
        }
        total += nnz;
    }
    return total;
}

int km_mtlp_get_disclosed(km_rd *r, km_mtl_disclosed *d, km_error *err)
{
    memset(d, 0, sizeof *d);
    uint64_t version = km_rd_u64(r), n = km_rd_u64(r), first = km_rd_u64(r);
    size_t left = r->bad ? 0 : (size_t)(r->end - r->p);
    /* every count against the bytes present before anything is allocated: rows take at
     * least 4 bytes each, ybar and H exactly 8 (n + n^2) at the end */
    if (r->bad || first > n || version > INT64_MAX || n > left / 8 || n * n > left / 8 ||
        8 * n + 8 * n * n > left || n - first > (left - 8 * n - 8 * n * n) / 4)
        return km_error_set(err, KM_EINPUT, "malformed disclosure (version, n, first)");
    uint64_t m = n - first;
    size_t tail = (size_t)(8 * n + 8 * n * n);
    km_rd rows = {r->p, r->end - tail, 0};
    int64_t total = check_rows(rows, m);
    if (total < 0)
        return km_error_set(err, KM_EINPUT, "malformed disclosure (inputs)");
    km_problem *X = calloc(1, sizeof *X);
    d->X = X;
    d->version = (int64_t)version;
    d->n = (int64_t)n;
    d->first = (int64_t)first;
    if (!X || !(X->row_ptr = calloc((size_t)m + 1, sizeof *X->row_ptr)) ||
        !(X->index = malloc((size_t)(total + 1) * sizeof *X->index)) ||
        !(X->value = malloc((size_t)(total + 1) * sizeof *X->value)) ||
        !(d->ybar = malloc((size_t)(n ? n : 1) * 8)) ||
        !(d->H = malloc((size_t)(n ? n * n : 1) * 8))) {
        km_mtl_disclosed_free(d);
        return km_error_nomem(err, "disclosure");
    }
    X->l = (int64_t)m;
    for (uint64_t i = 0; i < m; i++) {   /* checked above: no read can fail */
        uint32_t nnz = km_rd_u32(r);
        for (uint32_t k = 0; k < nnz; k++) {
            int32_t ix = (int32_t)km_rd_u32(r);
            X->index[X->nnz] = ix;
            X->value[X->nnz++] = km_rd_f64(r);
            if (ix >= X->n)
                X->n = ix + 1;   /* ix < INT32_MAX */
        }
        X->row_ptr[i + 1] = X->nnz;
    }
    for (uint64_t i = 0; i < n; i++)
        d->ybar[i] = km_rd_f64(r);
    for (uint64_t i = 0; i < n * n; i++)
        d->H[i] = km_rd_f64(r);
    if (r->bad || r->p != r->end) {
        km_mtl_disclosed_free(d);
        return km_error_set(err, KM_EINPUT, "malformed disclosure");
    }
    return KM_OK;
}

/* ---- client connection ---- */

struct km_mtlp_conn {
    int fd;
    size_t max_reply;
    int retryable;   /* the last failure: see km_mtlp_retryable */
};

int km_mtlp_retryable(const km_mtlp_conn *c)
{
    return c->retryable;
}

void km_mtlp_set_max_reply(km_mtlp_conn *c, size_t bytes)
{
    c->max_reply = bytes;
}

/* A connect(2) a signal interrupted goes on in the background: wait for it (0 when it
 * connected; else -1 with errno set). */
static int connect_finish(int fd)
{
    struct pollfd p = {fd, POLLOUT, 0};
    int k, e = 0;
    socklen_t el = sizeof e;
    while ((k = poll(&p, 1, -1)) < 0 && errno == EINTR)
        ;
    if (k < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el))
        return -1;
    errno = e;
    return e ? -1 : 0;
}

km_mtlp_conn *km_mtlp_connect(const char *host, int port, km_error *err)
{
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc) {
        km_error_set(err, KM_EINPUT, "%s:%d: %s", host, port, gai_strerror(rc));
        return NULL;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0 &&
            (errno != EINTR || connect_finish(fd))) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    km_mtlp_conn *c = fd < 0 ? NULL : malloc(sizeof *c);
    if (!c) {
        if (fd >= 0)
            close(fd);
        km_error_set(err, KM_EINPUT, "%s:%d: cannot connect: %s", host, port,
                     strerror(e ? e : ENOMEM));
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    c->max_reply = UINT32_MAX;
    c->retryable = 0;
    return c;
}

void km_mtlp_close(km_mtlp_conn *c)
{
    if (c) {
        close(c->fd);
        free(c);
    }
}

/* All n bytes at p sent (out) or received on the socket fd, retried on EINTR and short
 * counts; 0, or -1 (an error, errno, or the peer gone). */
static int transfer_all(int fd, unsigned char *p, size_t n, int out)
{
    while (n) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int km_mtlp_write(km_mtlp_conn *c, const km_buf *req, km_error *err)
{
    c->retryable = 0;
    if (req->failed)
        return km_error_nomem(err, "request");
    if (transfer_all(c->fd, req->p, req->len, 1) && (c->retryable = 1))
        return km_error_set(err, KM_EINPUT, "server: send failed: %s",
                            errno ? strerror(errno) : "connection closed");
    return KM_OK;
}

int km_mtlp_read(km_mtlp_conn *c, int (*reply)(void *ctx, unsigned type, km_rd *body,
                                                km_error *err),
                 void *ctx, km_error *err)
{
    unsigned char h[KM_MTLP_HEADER];
    c->retryable = 0;
    if (transfer_all(c->fd, h, sizeof h, 0) && (c->retryable = 1))
        return km_error_set(err, KM_EINPUT, "server closed the connection");
    uint32_t len = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 |
                   (uint32_t)h[3] << 24;
    if (len < 1)
        return km_error_set(err, KM_EINPUT, "server sent an empty frame");
    if (len - 1 > c->max_reply)
        return km_error_set(err, KM_EINPUT, "server: a reply of %lu bytes (at most %zu "
                            "accepted)", (unsigned long)len, c->max_reply);
    /* the buffer grows with the bytes that arrive, not with the length the frame claims */
    size_t want = len - 1, have = 0, cap = want < 65536 ? want + 1 : 65536;
    unsigned char *body = malloc(cap);
    while (body && have < want) {
        if (have == cap) {
            size_t nc = cap > want / 2 ? want : 2 * cap;
            unsigned char *nb = realloc(body, nc);
            if (!nb) {
                free(body);
                return km_error_nomem(err, "reply");
            }
            body = nb;
            cap = nc;
        }
        size_t k = cap - have < want - have ? cap - have : want - have;
        if (transfer_all(c->fd, body + have, k, 0)) {
            free(body);
            c->retryable = 1;
            return km_error_set(err, KM_EINPUT, "server closed the connection");
        }
        have += k;
    }
    if (!body)
        return km_error_nomem(err, "reply");
    km_rd r = {body, body + len - 1, 0};
    int rc = KM_OK;
    if (h[4] == KM_MTLP_ERROR) {
        unsigned code = km_rd_u32(&r), n = km_rd_u16(&r);
        const unsigned char *m = km_rd_bytes(&r, n);
        c->retryable = code == KM_MTLP_EBUSY || code == KM_MTLP_ETIMEOUT;
        rc = km_error_set(err, KM_EINPUT, "server: error %u: %.*s", code, m ? (int)n : 0,
                          m ? (const char *)m : "");
    } else if (reply) {
        rc = reply(ctx, h[4], &r, err);
    }
    free(body);
    return rc;
}

int km_mtlp_call(km_mtlp_conn *c, const km_buf *req, int replies,
                 int (*reply)(void *ctx, unsigned type, km_rd *body, km_error *err), void *ctx,
                 km_error *err)
{
    int rc = km_mtlp_write(c, req, err);
    for (int k = 0; k < replies && !rc; k++)
        rc = km_mtlp_read(c, reply, ctx, err);
    return rc;
}

/* ---- convenience requests ---- */

static int expect(unsigned type, unsigned want, km_rd *r, km_error *err)
{
    if (type != want)
        return km_error_set(err, KM_EINPUT, "server: reply of type 0x%x where 0x%x was due",
                            type, want);
    return r->bad ? km_error_set(err, KM_EINPUT, "server: malformed reply") : KM_OK;
}

static int on_secret(void *ctx, unsigned type, km_rd *r, km_error *err)
{
    unsigned n = km_rd_u16(r);
    const unsigned char *s = n > KM_MTLP_SECRET_MAX ? NULL : km_rd_bytes(r, n);
    if (!s || n < KM_MTLP_SECRET_MIN || memchr(s, '\0', n) || r->p != r->end)
        r->bad = 1;
    int rc = expect(type, KM_MTLP_SECRET, r, err);
    if (!rc) {
        memcpy(ctx, s, n);
        ((char *)ctx)[n] = '\0';
    }
    return rc;
}

int km_mtlp_register(km_mtlp_conn *c, int64_t task, const char *token,
                     char secret[KM_MTLP_SECRET_MAX + 1], km_error *err)
{
    km_buf b = {0};
    size_t f = km_buf_begin(&b, KM_MTLP_REGISTER);
    km_mtlp_put_auth(&b, task, token);
    km_buf_end(&b, f);
    int rc = km_mtlp_call(c, &b, 1, on_secret, secret, err);
    km_buf_free(&b);
    return rc;
}

static int on_status(void *ctx, unsigned type, km_rd *r, km_error *err)
{
    km_mtlp_status *st = ctx;
    st->version = km_rd_u64(r);
    st->n = km_rd_u64(r);
    st->l = km_rd_u64(r);
    st->triples = km_rd_u64(r);
    if (km_mtlp_get_param(r, &st->param, &st->n_features) || r->p != r->end)
        r->bad = 1;
    return expect(type, KM_MTLP_STATUSR, r, err);
}

int km_mtlp_get_status(km_mtlp_conn *c, int64_t task, const char *secret, km_mtlp_status *st,
                   km_error *err)
{
    km_buf b = {0};
    size_t f = km_buf_begin(&b, KM_MTLP_STATUS);
    km_mtlp_put_auth(&b, task, secret);
    km_buf_end(&b, f);
    int rc = km_mtlp_call(c, &b, 1, on_status, st, err);
    km_buf_free(&b);
    return rc;
}

typedef struct get_ctx {
    km_mtl_disclosed *d;
    int changed;
} get_ctx;

static int on_disclosed(void *ctx, unsigned type, km_rd *r, km_error *err)
{
    get_ctx *g = ctx;
    if (type == KM_MTLP_UNCHANGED) {
        km_rd_u64(r);
        if (r->p != r->end)
            r->bad = 1;
        return expect(type, KM_MTLP_UNCHANGED, r, err);
    }
    int rc = expect(type, KM_MTLP_DISCLOSED, r, err);
    km_mtl_disclosed upd;
    if (!rc)
        rc = km_mtlp_get_disclosed(r, &upd, err);
    if (rc)
        return rc;
    g->changed = 1;
    if (!g->d->X) {
        *g->d = upd;
        return KM_OK;
    }
    rc = km_mtl_disclosed_merge(g->d, &upd, err);
    km_mtl_disclosed_free(&upd);
    return rc;
}

int km_mtlp_get(km_mtlp_conn *c, int64_t task, const char *secret, km_mtl_disclosed *d,
                int *changed, km_error *err)
{
    km_buf b = {0};
    size_t f = km_buf_begin(&b, KM_MTLP_GET);
    km_mtlp_put_auth(&b, task, secret);
    km_buf_u64(&b, d->X ? (uint64_t)d->version : UINT64_MAX);
    km_buf_u64(&b, d->X ? (uint64_t)d->n : 0);
    km_buf_end(&b, f);
    get_ctx g = {d, 0};
    int rc = km_mtlp_call(c, &b, 1, on_disclosed, &g, err);
    km_buf_free(&b);
    *changed = g.changed;
    return rc;
}
