/* mtlserver.c - see mtlserver.h. Each round of the loop: read what the sockets have; parse
 * the complete frames, check them (authentication, triples) and queue the accepted SEND and
 * REGISTER requests as journal records; commit the journal (fdatasync by policy); then
 * apply the requests in arrival order and write the replies. Nothing reaches the state
 * before it is in the journal, and no reply leaves before the journal holds what it
 * acknowledges. Memory per connection: one request frame (at most max_message bytes) and
 * the replies to one round's requests, at most one of them a disclosure (a connection with
 * replies still unsent is not read). */
#include "mtlserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "atomic.h"
#include "imap.h"
#include "journal.h"

enum { REC_TRIPLES = 1, REC_SECRET = 2 };   /* journal record types */

#define READ_CHUNK 65536

typedef struct conn {
    int fd;
    unsigned char *in;
    size_t inlen, incap;
    size_t used;       /* bytes of in taken by this round's frames */
    km_buf out;
    size_t outoff;
    int eof;           /* the peer sent everything */
    int closing;       /* close once out is written */
} conn;

typedef struct op {    /* one request of the round, in arrival order */
    int ci;
    unsigned type;
    int64_t task;
    const unsigned char *body;   /* SEND: count and triples */
    size_t len;
    uint64_t have_version, have_n;
    int journaled;
    unsigned ecode;    /* non-zero: reply ERROR */
    char msg[200];
} op;

typedef struct server {
    const km_mtl_server_config *cfg;
    km_mtl *mtl;
    km_journal *jn;
    km_imap secret_of;   /* task -> index in secrets */
    char **secrets;
    int64_t nsec, capsec;
    conn *conns;
    int nconn;
    op *ops;
    int nops, capops;
    int32_t *xi;         /* scratch for one triple */
    double *xv;
    size_t xcap;
    km_mtl_disclosed disc;   /* the full disclosure at disc.version (X NULL: none) */
    int64_t triples;
    int replaying;       /* in the journal replay: *cfg->stop ends it */
    int partial;         /* the replay stopped inside a record: no snapshot of that */
    int64_t snap_records, snap_triples;   /* at the last snapshot written or loaded */
} server;

static void logf_(server *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(server *S, const char *fmt, ...)
{
    if (!S->cfg->log)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    S->cfg->log(S->cfg->ctx, msg);
}

/* ---- secrets ---- */

static int add_secret(server *S, int64_t task, const char *secret)
{
    if (S->nsec == S->capsec) {
        int64_t cap = S->capsec ? 2 * S->capsec : 64;
        char **p = realloc(S->secrets, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        S->secrets = p;
        S->capsec = cap;
    }
    char *s = strdup(secret);
    if (!s || km_imap_put(&S->secret_of, task, S->nsec)) {
        free(s);
        return -1;
    }
    S->secrets[S->nsec++] = s;
    return 0;
}

/* Constant-time in the secret's content. */
static int secret_ok(const server *S, int64_t task, const char *given)
{
    int64_t k = km_imap_get(&S->secret_of, task);
    if (k < 0 || !S->secrets[k])
        return 0;
    const char *want = S->secrets[k];
    size_t nw = strlen(want), ng = strlen(given);
    unsigned d = nw != ng;
    for (size_t i = 0; i < nw; i++)
        d |= (unsigned)(want[i] ^ given[i < ng ? i : 0]);
    return d == 0;
}

/* ---- applying triples (live and in replay) ---- */

static int reserve_x(server *S, size_t n)
{
    if (n <= S->xcap)
        return 0;
    size_t cap = S->xcap ? S->xcap : 64;
    while (cap < n)
        cap *= 2;
    int32_t *xi = realloc(S->xi, cap * sizeof *xi);
    if (xi)
        S->xi = xi;
    double *xv = realloc(S->xv, cap * sizeof *xv);
    if (xv)
        S->xv = xv;
    if (!xi || !xv)
        return -1;
    S->xcap = cap;
    return 0;
}

/* Checks (apply = 0) or applies (apply = 1) the triples of a SEND body for task. */
static int triples(server *S, int64_t task, const unsigned char *body, size_t len, int apply,
                   uint32_t *count, km_error *err)
{
    km_rd r = {body, body + len, 0};
    *count = km_rd_u32(&r);
    if (r.bad || *count > len / 20)
        return km_error_set(err, KM_EINPUT, "malformed triple count");
    for (uint32_t k = 0; k < *count; k++) {
        /* SIGTERM during the replay: a record of a few triples is finished (a snapshot can
         * then be taken at its end), a long one left after its 16th triple */
        if (apply && S->replaying && k >= 16 && *S->cfg->stop) {
            S->partial = 1;
            return KM_JOURNAL_STOP;
        }
        km_mtlp_triple t;
        if (km_mtlp_get_triple(&r, &t))
            return km_error_set(err, KM_EINPUT, "triple %u: malformed", k + 1);
        if (reserve_x(S, (size_t)t.nnz + 1))
            return km_error_nomem(err, "triple");
        km_mtlp_triple_x(&t, S->xi, S->xv);
        int rc = apply ? km_mtl_update(S->mtl, task, S->xi, S->xv, t.nnz, t.y, t.w, err)
                       : km_mtl_check_triple(S->xi, S->xv, t.nnz, t.y, t.w,
                                             S->cfg->n_features, err);
        if (rc) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            return km_error_set(err, rc, "triple %u: %s", k + 1, m);
        }
    }
    if (r.p != r.end)
        return km_error_set(err, KM_EINPUT, "%zu bytes after the last triple",
                            (size_t)(r.end - r.p));
    return KM_OK;
}

static int replay(void *ctx, unsigned type, const unsigned char *body, size_t len,
                  km_error *err)
{
    server *S = ctx;
    if (*S->cfg->stop)
        return KM_JOURNAL_STOP;
    km_rd r = {body, body + len, 0};
    int64_t task = (int64_t)km_rd_u64(&r);
    if (type == REC_TRIPLES && !r.bad) {
        uint32_t count;
        int64_t v0 = km_mtl_version(S->mtl);
        int rc = triples(S, task, r.p, (size_t)(r.end - r.p), 1, &count, err);
        if (rc == KM_JOURNAL_STOP) {
            S->triples += km_mtl_version(S->mtl) - v0;
            return rc;
        }
        S->triples += count;
        return rc ? km_error_set(err, KM_EINPUT, "journal: %s", err->msg) : KM_OK;
    }
    char secret[KM_MTLP_SECRET_MAX + 1];
    r.p = body;
    if (type == REC_SECRET && !km_mtlp_get_auth(&r, &task, secret) && r.p == r.end)
        return add_secret(S, task, secret) ? km_error_nomem(err, "secrets") : KM_OK;
    return km_error_set(err, KM_EINPUT, "journal: record of unknown type %u", type);
}


/* ---- snapshots: the state at a place in the journal ----
 * File: "KMTKSNP1", the journal's id (16 bytes), the place (u64 offset, u64 records, u32 CRC:
 * km_journal_mark), u64 triples, u64 count of issued secrets (REGISTER) and each as an auth
 * (i64 task, u16 length, bytes), the state (km_mtl_save), u32 CRC-32 of everything before.
 * Written atomically (temporary file, fsync, rename) after the journal is synced; a snapshot
 * is only a shortcut: the journal keeps every record. */

#define SNAP_MAGIC "KMTKSNP1"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct snap_writer {
    FILE *f;
    uLong crc;
    server *S;
    km_journal_mark mark;
    km_error err;
} snap_writer;

static int snap_bytes(void *ctx, const void *p, size_t n)
{
    snap_writer *w = ctx;
    w->crc = crc32_z(w->crc, p, n);
    return fwrite(p, 1, n, w->f) != n;
}

static int id_cmp(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[1], y = ((const int64_t *)b)[1];
    return (x > y) - (x < y);
}

static int snap_write(FILE *f, const void *ctx)
{
    snap_writer *w = (snap_writer *)ctx;
    server *S = w->S;
    w->f = f;
    w->crc = crc32(0L, Z_NULL, 0);
    /* the issued secrets (the configured ones come from --secrets), in the order issued */
    int64_t nreg = 0, *reg = malloc((size_t)(S->nsec + 1) * 2 * sizeof *reg);
    if (!reg)
        return km_error_nomem(&w->err, "snapshot");
    for (int64_t k = 0; k < S->secret_of.size; k++) {
        int64_t v = S->secret_of.val[k] - 1;
        if (v >= S->cfg->nsecrets) {
            reg[2 * nreg] = S->secret_of.key[k];
            reg[2 * nreg++ + 1] = v;
        }
    }
    qsort(reg, (size_t)nreg, 2 * sizeof *reg, id_cmp);
    km_buf b = {0};
    km_buf_bytes(&b, SNAP_MAGIC, 8);
    km_buf_bytes(&b, km_journal_id(S->jn), KM_JOURNAL_ID);
    km_buf_u64(&b, (uint64_t)w->mark.offset);
    km_buf_u64(&b, (uint64_t)w->mark.records);
    km_buf_u32(&b, w->mark.crc);
    km_buf_u64(&b, (uint64_t)S->triples);
    km_buf_u64(&b, (uint64_t)nreg);
    for (int64_t k = 0; k < nreg; k++)
        km_mtlp_put_auth(&b, reg[2 * k], S->secrets[reg[2 * k + 1]]);
    free(reg);
    int rc = b.failed ? km_error_nomem(&w->err, "snapshot") : snap_bytes(w, b.p, b.len);
    km_buf_free(&b);
    if (!rc)
        rc = km_mtl_save(S->mtl, snap_bytes, w, &w->err);
    unsigned char t[4];
    for (int i = 0; i < 4; i++)
        t[i] = (unsigned char)(w->crc >> (8 * i));
    return rc || fwrite(t, 1, 4, f) != 4;
}

/* Writes a snapshot of the state at the end of the journal (unless it is the last one
 * written or loaded). A failure is logged, not fatal: the journal has everything. */
static void snapshot_save(server *S)
{
    const km_mtl_server_config *cfg = S->cfg;
    if (!S->jn || !cfg->snapshot || S->partial)
        return;
    km_journal_mark m = km_journal_end(S->jn);
    if (m.records == S->snap_records)
        return;
    double t0 = now_s();
    snap_writer w = {.S = S, .mark = m};
    km_error e;
    km_error_clear(&w.err);
    if (km_journal_sync(S->jn, &e) ||
        km_write_atomic(cfg->snapshot, "snapshot", snap_write, &w, &e)) {
        logf_(S, "snapshot not written (the journal has every record): %s%s%s", e.msg,
              w.err.msg[0] ? ": " : "", w.err.msg);
        S->snap_triples = S->triples;   /* tried again after as many triples */
        return;
    }
    S->snap_records = m.records;
    S->snap_triples = S->triples;
    logf_(S, "snapshot %s at version %lld (journal record %lld): %.3f s", cfg->snapshot,
          (long long)km_mtl_version(S->mtl), (long long)m.records, now_s() - t0);
}

/* Loads cfg->snapshot into S: *loaded 1 (the journal is to be replayed after *mark) or 0 (no
 * usable snapshot: none, or damaged or of another journal, logged; the whole journal is
 * replayed). KM_EINPUT when it cannot be read, KM_EINTERNAL when out of memory. */
static int snapshot_load(server *S, km_journal_mark *mark, int *loaded, km_error *err)
{
    const char *path = S->cfg->snapshot;
    *loaded = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? KM_OK : km_error_set(err, KM_EINPUT, "%s: %s", path,
                                                       strerror(errno));
    struct stat sb;
    unsigned char *p = NULL;
    size_t size = 0, got = 0;
    int rc = fstat(fd, &sb) != 0 ? -1 : 0;
    if (!rc) {
        size = (size_t)sb.st_size;
        if (!(p = malloc(size ? size : 1))) {
            close(fd);
            return km_error_nomem(err, "snapshot");
        }
    }
    while (!rc && got < size) {
        ssize_t k = read(fd, p + got, size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            rc = -1;
        else
            got += (size_t)k;
    }
    close(fd);
    if (rc) {
        free(p);
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno ? errno : EIO));
    }
    const char *why = NULL;
    km_rd r = {p, p + (size >= 4 ? size - 4 : 0), 0};
    km_journal_mark m = {0, 0, 0};
    int64_t triples = 0, nreg = 0;
    if (size < 8 + KM_JOURNAL_ID + 4 || memcmp(p, SNAP_MAGIC, 8))
        why = "not a snapshot";
    else if ((uint32_t)crc32_z(crc32(0L, Z_NULL, 0), p, size - 4) !=
             ((uint32_t)p[size - 4] | (uint32_t)p[size - 3] << 8 |
              (uint32_t)p[size - 2] << 16 | (uint32_t)p[size - 1] << 24))
        why = "checksum mismatch";
    else if (memcmp(p + 8, km_journal_id(S->jn), KM_JOURNAL_ID))
        why = "taken of another journal (its id differs)";
    if (!why) {
        r.p = p + 8 + KM_JOURNAL_ID;
        m.offset = (int64_t)km_rd_u64(&r);
        m.records = (int64_t)km_rd_u64(&r);
        m.crc = km_rd_u32(&r);
        triples = (int64_t)km_rd_u64(&r);
        nreg = (int64_t)km_rd_u64(&r);
        if (r.bad || m.offset < 0 || m.records < 0 || triples < 0 || nreg < 0 ||
            (uint64_t)nreg > (uint64_t)(r.end - r.p) / 10)
            why = "malformed";
    }
    int64_t at_reg = 0;
    const unsigned char *reg = r.p;
    for (int64_t k = 0; !why && k < nreg; k++) {
        int64_t task;
        char secret[KM_MTLP_SECRET_MAX + 1];
        if (km_mtlp_get_auth(&r, &task, secret))
            why = "malformed secrets";
    }
    km_mtl *mtl = NULL;
    char whybuf[sizeof err->msg];
    if (!why) {
        size_t used = 0;
        km_error e;
        mtl = km_mtl_load(&S->cfg->param, r.p, (size_t)(r.end - r.p), &used, &e);
        if (!mtl && e.code == KM_EINTERNAL) {
            free(p);
            return km_error_set(err, KM_EINTERNAL, "%s: %s", path, e.msg);
        }
        if (!mtl || used != (size_t)(r.end - r.p)) {
            snprintf(whybuf, sizeof whybuf, "%s", mtl ? "bytes after the state" : e.msg);
            why = whybuf;
        }
    }
    if (why) {
        logf_(S, "snapshot %s: %s; ignored: the whole journal is replayed", path, why);
        km_mtl_free(mtl);
        free(p);
        return KM_OK;
    }
    km_mtl_free(S->mtl);
    S->mtl = mtl;
    r.p = reg;
    for (at_reg = 0; at_reg < nreg; at_reg++) {
        int64_t task;
        char secret[KM_MTLP_SECRET_MAX + 1];
        km_mtlp_get_auth(&r, &task, secret);
        if (add_secret(S, task, secret)) {
            free(p);
            return km_error_nomem(err, "secrets");
        }
    }
    free(p);
    S->triples = triples;
    S->snap_records = m.records;
    S->snap_triples = triples;
    *mark = m;
    *loaded = 1;
    return KM_OK;
}

/* Opens (or creates) the journal, loads the snapshot and replays the journal after it.
 * *stopped: *cfg->stop ended the replay. */
static int open_journal(server *S, const void *hdr, size_t hdrlen, int *stopped,
                        km_error *err)
{
    const km_mtl_server_config *cfg = S->cfg;
    struct stat sb;
    if (cfg->snapshot && stat(cfg->journal, &sb) != 0 && errno == ENOENT &&
        stat(cfg->snapshot, &sb) == 0)
        return km_error_set(err, KM_EINPUT, "%s: a snapshot without its journal %s (moved or "
                            "deleted?); refusing to start a new journal beside it (remove the "
                            "snapshot to start over)", cfg->snapshot, cfg->journal);
    unsigned how = 0;
    double t0 = now_s();
    if (!(S->jn = km_journal_open(cfg->journal, hdr, hdrlen, &how, err)))
        return err ? err->code : KM_EINPUT;
    if (how == KM_JOURNAL_CONVERTED)
        logf_(S, "journal %s: converted from version 1 to version 2 (the original kept as "
              "%s.v1)", cfg->journal, cfg->journal);
    km_journal_mark mark;
    int have = 0, rc;
    if (cfg->snapshot && how != KM_JOURNAL_CREATED &&
        (rc = snapshot_load(S, &mark, &have, err)))
        return rc;
    double t1 = now_s();
    int64_t dropped = 0;
    if (have)
        logf_(S, "snapshot %s loaded (version %lld, journal record %lld, %.3f s); replaying "
              "the journal after it", cfg->snapshot, (long long)km_mtl_version(S->mtl),
              (long long)mark.records, t1 - t0);
    else if (how != KM_JOURNAL_CREATED)
        logf_(S, "replaying the journal %s", cfg->journal);
    S->replaying = 1;
    rc = km_journal_replay(S->jn, have ? &mark : NULL, replay, S, &dropped, err);
    S->replaying = 0;
    if (rc == KM_JOURNAL_STOP) {
        *stopped = 1;
        logf_(S, "journal %s: stopped by a signal during the replay, after record %lld "
              "(version %lld)%s", cfg->journal, (long long)km_journal_records(S->jn),
              (long long)km_mtl_version(S->mtl), S->partial ? ", inside a record" : "");
        S->replaying = 0;
        return KM_OK;
    }
    if (rc) {
        if (have && err && strstr(err->msg, "the snapshot")) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            km_error_set(err, rc, "%s (%s; remove it to replay the whole journal)", m,
                         cfg->snapshot);
        }
        return rc;
    }
    km_journal_mark end = km_journal_end(S->jn);
    logf_(S, "journal %s: %lld records, %lld replayed%s (%lld triples in all, %lld unique "
          "inputs, version %lld): snapshot %.3f s, replay %.3f s%s", cfg->journal,
          (long long)end.records, (long long)(end.records - (have ? mark.records : 0)),
          have ? " after the snapshot" : "", (long long)S->triples,
          (long long)km_mtl_n(S->mtl), (long long)km_mtl_version(S->mtl), t1 - t0,
          now_s() - t1, dropped ? "; a torn last record cut off" : "");
    return KM_OK;
}

/* ---- requests ---- */

static op *new_op(server *S, int ci, unsigned type)
{
    if (S->nops == S->capops) {
        int cap = S->capops ? 2 * S->capops : 64;
        op *p = realloc(S->ops, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        S->ops = p;
        S->capops = cap;
    }
    op *o = &S->ops[S->nops++];
    memset(o, 0, sizeof *o);
    o->ci = ci;
    o->type = type;
    return o;
}

static void refuse(op *o, unsigned code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refuse(op *o, unsigned code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->msg, sizeof o->msg, fmt, ap);
    va_end(ap);
    o->ecode = code;
}

/* Parses and checks one request frame (type, body); queues its op. Returns -1 when out of
 * memory, 1 when the connection is to be closed after the reply, else 0. */
static int parse(server *S, int ci, unsigned type, const unsigned char *body, size_t len,
                 km_error *err)
{
    op *o = new_op(S, ci, type);
    if (!o)
        return -1;
    km_rd r = {body, body + len, 0};
    char secret[KM_MTLP_SECRET_MAX + 1];
    if (type == KM_MTLP_REGISTER) {
        o->task = (int64_t)km_rd_u64(&r);
        if (r.bad || r.p != r.end) {
            refuse(o, KM_MTLP_EMALFORMED, "malformed REGISTER");
            return 1;
        }
        if (!S->cfg->allow_register) {
            refuse(o, KM_MTLP_EREFUSED, "registration is off (mtl-server --register)");
            return 0;
        }
        if (km_imap_get(&S->secret_of, o->task) >= 0) {
            refuse(o, KM_MTLP_EREFUSED, "task %lld already has a secret", (long long)o->task);
            return 0;
        }
        unsigned char rnd[16];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
            refuse(o, KM_MTLP_EINTERNAL, "no random bytes for a secret");
            return 0;
        }
        for (int i = 0; i < 16; i++)
            snprintf(secret + 2 * i, 3, "%02x", rnd[i]);
        km_buf rec = {0};
        km_mtlp_put_auth(&rec, o->task, secret);
        int rc = rec.failed || add_secret(S, o->task, secret) ||
                 (S->jn && km_journal_append(S->jn, REC_SECRET, rec.p, rec.len, err));
        km_buf_free(&rec);
        if (rc)
            return -1;
        o->journaled = 1;
        return 0;
    }
    if (type != KM_MTLP_SEND && type != KM_MTLP_GET && type != KM_MTLP_STATUS) {
        refuse(o, KM_MTLP_EMALFORMED, "unknown request type %u", type);
        return 1;
    }
    if (km_mtlp_get_auth(&r, &o->task, secret)) {
        refuse(o, KM_MTLP_EMALFORMED, "malformed task and secret");
        return 1;
    }
    if (type == KM_MTLP_GET) {
        o->have_version = km_rd_u64(&r);
        o->have_n = km_rd_u64(&r);
    }
    if (r.bad || (type != KM_MTLP_SEND && r.p != r.end)) {
        refuse(o, KM_MTLP_EMALFORMED, "malformed request");
        return 1;
    }
    if (!secret_ok(S, o->task, secret)) {
        refuse(o, KM_MTLP_EAUTH, "task %lld: wrong secret or unknown task", (long long)o->task);
        return 0;
    }
    if (type != KM_MTLP_SEND)
        return 0;
    o->body = r.p;
    o->len = (size_t)(r.end - r.p);
    uint32_t count;
    km_error e;
    int rc = triples(S, o->task, o->body, o->len, 0, &count, &e);
    if (rc == KM_EINTERNAL)
        return -1;
    if (rc) {
        refuse(o, KM_MTLP_EINPUT, "%s", e.msg);
        return 0;
    }
    unsigned char t[8];
    for (int i = 0; i < 8; i++)
        t[i] = (unsigned char)((uint64_t)o->task >> (8 * i));
    if (S->jn && km_journal_append2(S->jn, REC_TRIPLES, t, 8, o->body, o->len, err))
        return -1;
    o->journaled = 1;
    return 0;
}

static void reply_error(conn *c, unsigned code, const char *msg)
{
    size_t f = km_buf_begin(&c->out, KM_MTLP_ERROR), n = strlen(msg);
    km_buf_u32(&c->out, code);
    km_buf_u16(&c->out, (unsigned)n);
    km_buf_bytes(&c->out, msg, n);
    km_buf_end(&c->out, f);
}

/* Applies one op and writes its reply. KM_EINTERNAL when out of memory (fatal). */
static int answer(server *S, op *o, km_error *err)
{
    conn *c = &S->conns[o->ci];
    km_buf *b = &c->out;
    if (o->ecode) {
        reply_error(c, o->ecode, o->msg);
        return KM_OK;
    }
    size_t f;
    if (o->type == KM_MTLP_REGISTER) {
        const char *s = S->secrets[km_imap_get(&S->secret_of, o->task)];
        f = km_buf_begin(b, KM_MTLP_SECRET);
        km_buf_u16(b, (unsigned)strlen(s));
        km_buf_bytes(b, s, strlen(s));
    } else if (o->type == KM_MTLP_SEND) {
        uint32_t count;
        int rc = triples(S, o->task, o->body, o->len, 1, &count, err);
        if (rc)
            return rc;
        S->triples += count;
        f = km_buf_begin(b, KM_MTLP_ACK);
        km_buf_u64(b, (uint64_t)km_mtl_version(S->mtl));
        km_buf_u32(b, count);
    } else if (o->type == KM_MTLP_STATUS) {
        int64_t l, tr;
        km_mtl_task_size(S->mtl, o->task, &l, &tr);
        km_mtl_param p = *km_mtl_param_of(S->mtl);   /* K~: the task's own K~_j (5.2) */
        p.Kt = *km_mtl_task_kernel(&p, o->task);
        f = km_buf_begin(b, KM_MTLP_STATUSR);
        km_buf_u64(b, (uint64_t)km_mtl_version(S->mtl));
        km_buf_u64(b, (uint64_t)km_mtl_n(S->mtl));
        km_buf_u64(b, (uint64_t)l);
        km_buf_u64(b, (uint64_t)tr);
        km_mtlp_put_param(b, &p, S->cfg->n_features);
    } else {   /* GET */
        int64_t version = km_mtl_version(S->mtl), n = km_mtl_n(S->mtl);
        if (o->have_version == (uint64_t)version && o->have_n == (uint64_t)n) {
            f = km_buf_begin(b, KM_MTLP_UNCHANGED);
            km_buf_u64(b, (uint64_t)version);
        } else {
            if (!S->disc.X || S->disc.version != version) {
                km_mtl_disclosed_free(&S->disc);
                int rc = km_mtl_disclose(S->mtl, 0, &S->disc, err);
                if (rc)
                    return rc;
            }
            f = km_buf_begin(b, KM_MTLP_DISCLOSED);
            km_mtlp_put_disclosed(b, &S->disc,
                                  o->have_n <= (uint64_t)n && o->have_version <= (uint64_t)version
                                      ? (int64_t)o->have_n : 0);
        }
    }
    km_buf_end(b, f);
    return b->failed ? km_error_nomem(err, "reply") : KM_OK;
}

/* ---- sockets ---- */

static int listen_on(const char *host, int port, int *bound, km_error *err)
{
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc)
        return km_error_set(err, KM_EINPUT, "%s: %s", host, gai_strerror(rc));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        rc = km_error_set(err, KM_EINPUT, "%s:%d: cannot listen: %s", host, port,
                          strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return rc;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    *bound = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                            : ((struct sockaddr_in *)&sa)->sin_port);
    return fd;
}

static void drop_conn(server *S, int ci)
{
    conn *c = &S->conns[ci];
    close(c->fd);
    free(c->in);
    km_buf_free(&c->out);
    S->conns[ci] = S->conns[--S->nconn];
}

/* Reads what the socket has (up to the frame being received, at least READ_CHUNK). */
static void read_conn(server *S, conn *c)
{
    size_t want = c->inlen + READ_CHUNK;
    if (c->inlen >= KM_MTLP_HEADER) {
        uint64_t len = (uint64_t)c->in[0] | (uint64_t)c->in[1] << 8 |
                       (uint64_t)c->in[2] << 16 | (uint64_t)c->in[3] << 24;
        if (len + 4 <= S->cfg->max_message + 4 && len + 4 > want)
            want = (size_t)len + 4;
    }
    if (want > c->incap) {
        unsigned char *p = realloc(c->in, want);
        if (!p) {
            c->closing = 1;
            return;
        }
        c->in = p;
        c->incap = want;
    }
    ssize_t k = recv(c->fd, c->in + c->inlen, c->incap - c->inlen, 0);
    if (k > 0)
        c->inlen += (size_t)k;
    else if (k == 0)
        c->eof = 1;
    else if (errno != EAGAIN && errno != EINTR)
        c->closing = 1;
}

/* 1 when c holds a whole frame not yet parsed (or a header with an impossible length). */
static int frame_waiting(const server *S, const conn *c)
{
    if (c->closing || c->inlen - c->used < KM_MTLP_HEADER)
        return 0;
    const unsigned char *h = c->in + c->used;
    uint64_t len = (uint64_t)h[0] | (uint64_t)h[1] << 8 | (uint64_t)h[2] << 16 |
                   (uint64_t)h[3] << 24;
    return len < 1 || len > S->cfg->max_message || c->inlen - c->used >= len + 4;
}

/* Parses the complete frames of connection ci (up to one GET: its reply may be large). */
static int parse_conn(server *S, int ci, km_error *err)
{
    conn *c = &S->conns[ci];
    while (!c->closing && c->inlen - c->used >= KM_MTLP_HEADER) {
        const unsigned char *h = c->in + c->used;
        uint64_t len = (uint64_t)h[0] | (uint64_t)h[1] << 8 | (uint64_t)h[2] << 16 |
                       (uint64_t)h[3] << 24;
        if (len < 1 || len > S->cfg->max_message) {
            op *o = new_op(S, ci, 0);
            if (!o)
                return -1;
            if (len < 1)
                refuse(o, KM_MTLP_EMALFORMED, "empty frame");
            else
                refuse(o, KM_MTLP_ETOOBIG, "frame of %llu bytes; at most %zu accepted",
                       (unsigned long long)len, S->cfg->max_message);
            c->closing = 1;
            break;
        }
        if (c->inlen - c->used < len + 4)
            break;
        unsigned type = h[4];
        int rc = parse(S, ci, type, h + KM_MTLP_HEADER, (size_t)len - 1, err);
        if (rc < 0)
            return -1;
        c->used += (size_t)len + 4;
        if (rc > 0)
            c->closing = 1;
        if (type == KM_MTLP_GET && !rc)
            break;
        if (S->jn && S->cfg->fsync_policy == KM_FSYNC_ALWAYS &&
            S->ops[S->nops - 1].journaled && km_journal_commit(S->jn, 1, err))
            return -2;
    }
    return 0;
}

int km_mtl_server_run(const km_mtl_server_config *cfg, km_error *err)
{
    server S = {0};
    S.cfg = cfg;
    int lfd = -1, rc = KM_OK;
    struct pollfd *pfd = NULL;
    if (!(S.mtl = km_mtl_new(&cfg->param, err)))
        return err ? err->code : KM_EUSAGE;
    for (int64_t k = 0; k < cfg->nsecrets && !rc; k++)
        if (km_imap_get(&S.secret_of, cfg->secret_task[k]) >= 0)
            rc = km_error_set(err, KM_EINPUT, "task %lld has two secrets",
                              (long long)cfg->secret_task[k]);
        else if (add_secret(&S, cfg->secret_task[k], cfg->secret[k]))
            rc = km_error_nomem(err, "secrets");
    km_buf hdr = {0};
    km_mtlp_put_param(&hdr, &cfg->param, cfg->n_features);
    if (cfg->param.ntk)   /* a journal of a server without them has the same header */
        km_mtlp_put_task_kernels(&hdr, &cfg->param);
    int stopped = 0;
    if (!rc && cfg->journal)
        rc = open_journal(&S, hdr.p, hdr.len, &stopped, err);
    km_buf_free(&hdr);
    int port = 0;
    if (stopped)
        ;   /* a signal during the replay: a snapshot of what was replayed, and exit */
    else if (!rc && (lfd = listen_on(cfg->bind, cfg->port, &port, err)) < 0)
        rc = err ? err->code : KM_EINPUT;
    if (!rc && !(pfd = malloc((size_t)(cfg->max_clients + 2) * sizeof *pfd)))
        rc = km_error_nomem(err, "poll set");
    if (!rc && !(S.conns = calloc((size_t)cfg->max_clients, sizeof *S.conns)))
        rc = km_error_nomem(err, "connections");
    if (!rc && !stopped) {
        logf_(&S, "listening on %s:%d", cfg->bind, port);
        if (cfg->ready)
            cfg->ready(cfg->ctx, port);
    }
    int again = 0;
    while (!rc && !stopped && !*cfg->stop) {
        int np = 0;
        pfd[np++] = (struct pollfd){lfd, POLLIN, 0};
        pfd[np++] = (struct pollfd){cfg->wake_fd, POLLIN, 0};   /* fd -1: ignored */
        for (int i = 0; i < S.nconn; i++) {
            conn *c = &S.conns[i];
            short ev = c->out.len > c->outoff ? POLLOUT : (c->closing || c->eof ? 0 : POLLIN);
            pfd[np++] = (struct pollfd){c->fd, ev, 0};
        }
        int k = poll(pfd, (nfds_t)np, again ? 0 : -1);
        again = 0;
        if (k < 0) {
            if (errno == EINTR)
                continue;
            rc = km_error_set(err, KM_EINTERNAL, "poll: %s", strerror(errno));
            break;
        }
        /* read, then parse every connection's complete frames */
        int nc = S.nconn;
        if (pfd[1].revents & POLLIN) {   /* a signal: drain the pipe; *stop is set */
            char sink[64];
            while (read(cfg->wake_fd, sink, sizeof sink) > 0)
                ;
        }
        for (int i = 0; i < nc; i++)
            if (pfd[i + 2].revents & (POLLIN | POLLHUP | POLLERR))
                read_conn(&S, &S.conns[i]);
        S.nops = 0;
        for (int i = 0; i < nc && !rc; i++) {
            conn *c = &S.conns[i];
            if (c->out.len > c->outoff)
                continue;
            if (parse_conn(&S, i, err))
                rc = err && err->code ? err->code : KM_EINTERNAL;
            if (c->eof && !frame_waiting(&S, c))
                c->closing = 1;   /* all it sent is answered (or incomplete) */
            if (frame_waiting(&S, c))
                again = 1;        /* parsed next round without waiting for input */
        }
        /* commit, then apply and answer in arrival order */
        if (!rc && S.jn && cfg->fsync_policy != KM_FSYNC_ALWAYS &&
            km_journal_commit(S.jn, cfg->fsync_policy == KM_FSYNC_BATCH, err))
            rc = KM_EINPUT;   /* fatal: nothing of this round is acknowledged */
        for (int i = 0; i < S.nops && !rc; i++)
            rc = answer(&S, &S.ops[i], err);
        /* compact inputs, write outputs, close finished connections */
        for (int i = 0; i < S.nconn; i++) {
            conn *c = &S.conns[i];
            if (c->used) {
                memmove(c->in, c->in + c->used, c->inlen - c->used);
                c->inlen -= c->used;
                c->used = 0;
            }
            while (c->out.len > c->outoff) {
                ssize_t w = send(c->fd, c->out.p + c->outoff, c->out.len - c->outoff,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0) {
                    c->outoff += (size_t)w;
                    continue;
                }
                if (w < 0 && (errno == EAGAIN || errno == EINTR))
                    break;
                c->closing = 1;
                c->outoff = c->out.len;
            }
            if (c->out.len == c->outoff) {
                c->out.len = c->outoff = 0;
                if (c->out.cap > (1u << 20)) {   /* give a large reply's buffer back */
                    km_buf_free(&c->out);
                }
            }
        }
        for (int i = S.nconn - 1; i >= 0; i--)
            if (S.conns[i].closing && S.conns[i].out.len == 0)
                drop_conn(&S, i);
        /* every journaled request of the round is applied and its reply sent (or queued) */
        if (!rc && cfg->snapshot_every > 0 && S.triples - S.snap_triples >= cfg->snapshot_every)
            snapshot_save(&S);
        /* new connections */
        if (pfd[0].revents & POLLIN) {
            int fd;
            while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                if (S.nconn == cfg->max_clients) {
                    close(fd);
                    continue;
                }
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                S.conns[S.nconn++] = (conn){.fd = fd};
            }
        }
    }
    if (rc == KM_OK) {
        rc = S.jn ? km_journal_commit(S.jn, 1, err) : KM_OK;
        if (rc == KM_OK)
            snapshot_save(&S);
        logf_(&S, "stopped at version %lld (%lld unique inputs, %lld triples)",
              (long long)km_mtl_version(S.mtl), (long long)km_mtl_n(S.mtl),
              (long long)S.triples);
    }
    while (S.nconn)
        drop_conn(&S, S.nconn - 1);
    if (lfd >= 0)
        close(lfd);
    free(pfd);
    free(S.conns);
    free(S.ops);
    free(S.xi);
    free(S.xv);
    for (int64_t k = 0; k < S.nsec; k++)
        free(S.secrets[k]);
    free(S.secrets);
    km_imap_free(&S.secret_of);
    km_mtl_disclosed_free(&S.disc);
    km_journal_close(S.jn);
    km_mtl_free(S.mtl);
    return rc;
}
