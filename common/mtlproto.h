/* mtlproto.h - the wire format of mtl-server (doc/mtl-protocol.md): frames, the requests and
 * replies encoded and decoded with bounds checks, and a blocking client connection. */
#ifndef KM_MTLPROTO_H
#define KM_MTLPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "mtl.h"

/* A frame: u32 length of what follows (type + body), u8 type, body. Little-endian. */
#define KM_MTLP_HEADER 5
/* Longest and shortest secret (and admin token), in bytes. */
#define KM_MTLP_SECRET_MAX 64
#define KM_MTLP_SECRET_MIN 16

enum {                      /* requests */
    KM_MTLP_REGISTER = 1,   /* i64 task, admin token -> SECRET */
    KM_MTLP_SEND = 2,       /* i64 task, secret, u64 seq, u32 count, triples -> ACK */
    KM_MTLP_GET = 3,        /* i64 task, secret, u64 have_version, u64 have_n -> DISCLOSED */
    KM_MTLP_STATUS = 4,     /* i64 task, secret -> STATUS */
    /* replies */
    KM_MTLP_SECRET = 0x81,     /* u16 length, bytes */
    KM_MTLP_ACK = 0x82,        /* u64 version, u32 count accepted */
    KM_MTLP_DISCLOSED = 0x83,  /* u64 version, u64 n, u64 first, rows, ybar, H */
    KM_MTLP_UNCHANGED = 0x84,  /* u64 version */
    KM_MTLP_STATUSR = 0x85,    /* see km_mtlp_status */
    KM_MTLP_ERROR = 0xff       /* u32 code, u16 length, message */
};

enum {                      /* error codes of ERROR replies */
    KM_MTLP_EMALFORMED = 1, /* the frame does not decode; the connection is closed */
    KM_MTLP_ETOOBIG = 2,    /* the frame is longer than the server accepts; closed */
    KM_MTLP_EAUTH = 3,      /* wrong secret, or a task without a secret */
    KM_MTLP_EINPUT = 4,     /* a bad triple (dimension, non-finite value, w <= 0, order) */
    KM_MTLP_EREFUSED = 5,   /* registration refused (off, wrong token, limit), server full */
    KM_MTLP_EINTERNAL = 6,  /* out of memory, journal I/O failure */
    KM_MTLP_EBUSY = 7,      /* a limit of the server (connections, memory): try later */
    KM_MTLP_ETIMEOUT = 8    /* a frame not complete in time; the connection is closed */
};

/* A growable byte buffer. */
typedef struct km_buf {
    unsigned char *p;
    size_t len, cap;
    int failed;            /* an allocation failed: contents incomplete */
} km_buf;

void km_buf_free(km_buf *b);
void km_buf_u8(km_buf *b, unsigned v);
void km_buf_u16(km_buf *b, unsigned v);
void km_buf_u32(km_buf *b, uint32_t v);
void km_buf_u64(km_buf *b, uint64_t v);
void km_buf_f64(km_buf *b, double v);
void km_buf_bytes(km_buf *b, const void *p, size_t n);
/* Starts a frame of the given type; km_buf_end fills its length. Returns its offset. */
size_t km_buf_begin(km_buf *b, unsigned type);
void km_buf_end(km_buf *b, size_t frame);

/* A bounds-checked reader; a read past the end sets bad and returns 0. */
typedef struct km_rd {
    const unsigned char *p, *end;
    int bad;
} km_rd;

unsigned km_rd_u8(km_rd *r);
unsigned km_rd_u16(km_rd *r);
uint32_t km_rd_u32(km_rd *r);
uint64_t km_rd_u64(km_rd *r);
double km_rd_f64(km_rd *r);
const unsigned char *km_rd_bytes(km_rd *r, size_t n);

/* One triple as sent: a sparse x (0-based indices) that points into the message. */
typedef struct km_mtlp_triple {
    double y, w;
    uint32_t nnz;
    const unsigned char *pairs;   /* nnz (u32 index, f64 value) pairs, unaligned */
} km_mtlp_triple;

/* Appends one triple to a SEND body. */
void km_mtlp_put_triple(km_buf *b, double y, double w, const int32_t *index,
                        const double *value, int64_t nnz);

/* Reads the next triple of a SEND body; 0 or -1 (malformed). */
int km_mtlp_get_triple(km_rd *r, km_mtlp_triple *t);

/* Unpacks t's x into index/value (room for t->nnz). */
void km_mtlp_triple_x(const km_mtlp_triple *t, int32_t *index, double *value);

/* The authentication part shared by requests: i64 task, u16 length, secret bytes. */
void km_mtlp_put_auth(km_buf *b, int64_t task, const char *secret);
int km_mtlp_get_auth(km_rd *r, int64_t *task, char secret[KM_MTLP_SECRET_MAX + 1]);

/* Parameters as STATUS carries them (K~: the asking task's K~_j) and the journal header
 * stores them (K~: the default); p->tk is neither written nor read (ntk = 0). */
void km_mtlp_put_param(km_buf *b, const km_mtl_param *p, int32_t n_features);
int km_mtlp_get_param(km_rd *r, km_mtl_param *p, int32_t *n_features);
/* The tasks' own kernels, after the parameters in a journal header when there are any:
 * u64 count, count x (i64 task, kernel). */
void km_mtlp_put_task_kernels(km_buf *b, const km_mtl_param *p);

/* DISCLOSED body (after the type byte) for d with its inputs from first on (d->first <=
 * first <= d->n). */
void km_mtlp_put_disclosed(km_buf *b, const km_mtl_disclosed *d, int64_t first);
/* Decodes a DISCLOSED body into *d (allocated); KM_EINPUT if malformed. Every count (n,
 * first, each row's nnz) is checked against the bytes present, and the rows (indices
 * increasing and below KM_MTL_MAX_INDEX, values finite and non-zero) walked once, before
 * anything is allocated. */
int km_mtlp_get_disclosed(km_rd *r, km_mtl_disclosed *d, km_error *err);

/* STATUS reply contents. */
typedef struct km_mtlp_status {
    uint64_t version, n, l, triples;
    km_mtl_param param;
    int32_t n_features;
} km_mtlp_status;

/* A blocking client connection. */
typedef struct km_mtlp_conn km_mtlp_conn;

/* Connects to host:port (a numeric address or a name); NULL + err (KM_EINPUT). */
km_mtlp_conn *km_mtlp_connect(const char *host, int port, km_error *err);
void km_mtlp_close(km_mtlp_conn *c);

/* Longest reply body accepted (default UINT32_MAX); the buffer of a reply grows with the
 * bytes received, never to a length the frame merely claims. */
void km_mtlp_set_max_reply(km_mtlp_conn *c, size_t bytes);

/* Sends the frames in req. */
int km_mtlp_write(km_mtlp_conn *c, const km_buf *req, km_error *err);

/* Reads one reply frame and passes its type and body to the callback (NULL: ignored); an
 * ERROR reply becomes err instead (KM_EINPUT "server: error CODE: message"). */
int km_mtlp_read(km_mtlp_conn *c, int (*reply)(void *ctx, unsigned type, km_rd *body,
                                                km_error *err),
                 void *ctx, km_error *err);

/* 1 when the last failure of km_mtlp_write / km_mtlp_read on c may pass if the requests are
 * sent again on a new connection: the connection broke (closed, reset) or the server said
 * it is busy (KM_MTLP_EBUSY) or timed a frame out (KM_MTLP_ETIMEOUT); 0 for a refusal
 * (authentication, a bad triple, ...) or a reply that does not decode. */
int km_mtlp_retryable(const km_mtlp_conn *c);

/* km_mtlp_write, then km_mtlp_read `replies` times. */
int km_mtlp_call(km_mtlp_conn *c, const km_buf *req, int replies,
                 int (*reply)(void *ctx, unsigned type, km_rd *body, km_error *err), void *ctx,
                 km_error *err);

/* Convenience requests. */
/* REGISTER with the server's admin token (mtl-server --register --admin-token-file). */
int km_mtlp_register(km_mtlp_conn *c, int64_t task, const char *token,
                     char secret[KM_MTLP_SECRET_MAX + 1], km_error *err);
int km_mtlp_get_status(km_mtlp_conn *c, int64_t task, const char *secret, km_mtlp_status *st,
                   km_error *err);
/* GET: *d is replaced by a full disclosure, or updated with the inputs after d->n (when
 * d->X is not NULL); *changed tells whether anything did. */
int km_mtlp_get(km_mtlp_conn *c, int64_t task, const char *secret, km_mtl_disclosed *d,
                int *changed, km_error *err);

#endif
