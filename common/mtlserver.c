/* mtlserver.c - see mtlserver.h. Each round of the loop: read what the sockets have; parse
 * the complete frames in arrival order: a SEND is checked, applied as one transaction of the
 * state (all or nothing: a bad or unsafe triple rolls it back) and queued as a journal record;
 * commit the journal (fdatasync by policy); then answer GET and STATUS and write every reply.
 * No reply leaves before the journal holds what it acknowledges (and no disclosure leaves
 * with triples the journal does not hold). Memory: each connection's buffers are bounded by
 * conn_memory and all of them by total_memory; a connection with replies still unsent is not
 * read; idle and stalled connections are closed after their timeouts. */
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

/* journal record types: 1 task + SEND body without a sequence number (journals of before),
 * 2 task + secret, 3 task + u64 seq + SEND body */
enum { REC_TRIPLES = 1, REC_SECRET = 2, REC_SEND = 3 };

#define READ_CHUNK 65536   /* a connection's input buffer above this is freed when empty */
#define READ_FIRST 4096    /* and starts at this, doubling as a frame arrives */

typedef struct conn {
    int fd;
    int peer;          /* index in the peer table */
    unsigned char *in;
    size_t inlen, incap;
    size_t used;       /* bytes of in taken by this round's frames */
    km_buf out;
    size_t outoff;
    int eof;           /* the peer sent everything */
    int closing;       /* close once out is written */
    int64_t active;    /* ms: last byte read or written */
    int64_t frame0;    /* ms: the first byte of the incomplete frame (0: none) */
    int64_t hold;      /* ms: a failed authentication's reply waits until then */
} conn;

typedef struct peer {   /* an address: its connections and failed authentications */
    unsigned char addr[16];
    int family, nconn, fails;
    int64_t window;     /* ms: start of the failure window */
} peer;

typedef struct op {    /* one request of the round, in arrival order */
    int ci;
    unsigned type;
    int64_t task;
    uint64_t have_version, have_n;
    uint64_t version;  /* SEND: the version after it */
    uint32_t count;    /* SEND: triples applied (0: a duplicate sequence number) */
    unsigned ecode;    /* non-zero: reply ERROR */
    char msg[240];
} op;

typedef struct server {
    const km_mtl_server_config *cfg;
    km_mtl *mtl;
    km_journal *jn;
    km_imap secret_of;   /* task -> index in secrets */
    char **secrets;
    int64_t nsec, capsec, issued;
    km_imap seq_of;      /* task -> the last sequence number applied */
    conn *conns;
    int nconn;
    peer *peers;
    int npeer, cappeer;
    size_t memory;       /* all connections' buffers (capacities) */
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
    int64_t now;         /* ms, CLOCK_MONOTONIC, this round */
} server;

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void km_mtl_server_config_default(km_mtl_server_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->param = km_mtl_param_default();
    cfg->bind = "127.0.0.1";
    cfg->port = 7353;
    cfg->fsync_policy = KM_FSYNC_BATCH;
    cfg->max_features = KM_MTLS_MAX_FEATURES;
    cfg->max_inputs = KM_MTLS_MAX_INPUTS;
    cfg->max_secrets = KM_MTLS_MAX_SECRETS;
    cfg->max_message = 16u << 20;
    cfg->max_clients = 256;
    cfg->max_per_peer = 32;
    cfg->idle_timeout_ms = 300000;
    cfg->io_timeout_ms = 30000;
    cfg->conn_memory = (size_t)256 << 20;
    cfg->total_memory = (size_t)1 << 30;
    cfg->auth_delay_ms = 1000;
    cfg->max_auth_failures = 20;
    cfg->auth_window_ms = 60000;
    cfg->wake_fd = -1;
}

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
static int same_secret(const char *want, const char *given)
{
    size_t nw = strlen(want), ng = strlen(given);
    unsigned d = nw != ng || !nw;
    for (size_t i = 0; i < nw; i++)
        d |= (unsigned)(want[i] ^ given[i < ng ? i : 0]);
    return d == 0;
}

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

/* The feature limit of triples: --features, else max_features. */
static int32_t feature_limit(const server *S)
{
    return S->cfg->n_features > 0 ? S->cfg->n_features : S->cfg->max_features;
}

enum { CHECK_ONLY, APPLY_REPLAY, APPLY_LIVE };

/* Checks (CHECK_ONLY) or applies the triples of a SEND body for task as one transaction of
 * the state (APPLY_*: all or nothing; APPLY_LIVE also refuses more than max_inputs unique
 * inputs). KM_EINPUT: refused, nothing applied; KM_EINTERNAL: out of memory. */
static int triples(server *S, int64_t task, const unsigned char *body, size_t len, int mode,
                   uint32_t *count, km_error *err)
{
    km_rd r = {body, body + len, 0};
    *count = km_rd_u32(&r);
    if (r.bad || *count > len / 20)
        return km_error_set(err, KM_EINPUT, "malformed triple count");
    int rc = mode == CHECK_ONLY ? KM_OK : km_mtl_begin(S->mtl, err);
    for (uint32_t k = 0; k < *count && !rc; k++) {
        /* SIGTERM during the replay: a record of a few triples is finished (a snapshot can
         * then be taken at its end), a long one left after its 16th triple and rolled back
         * (no snapshot is taken of it) */
        if (mode == APPLY_REPLAY && S->replaying && k >= 16 && *S->cfg->stop) {
            S->partial = 1;
            rc = KM_JOURNAL_STOP;
            break;
        }
        km_mtlp_triple t;
        if (km_mtlp_get_triple(&r, &t)) {
            rc = km_error_set(err, KM_EINPUT, "triple %u: malformed", k + 1);
            break;
        }
        if (reserve_x(S, (size_t)t.nnz + 1)) {
            rc = km_error_nomem(err, "triple");
            break;
        }
        km_mtlp_triple_x(&t, S->xi, S->xv);
        rc = mode != CHECK_ONLY ? km_mtl_update(S->mtl, task, S->xi, S->xv, t.nnz, t.y, t.w, err)
             : km_mtl_check_triple(S->xi, S->xv, t.nnz, t.y, t.w, feature_limit(S), err)
                 ? KM_EINPUT
                 : km_mtl_check_kernels(km_mtl_param_of(S->mtl), task, S->xi, S->xv, t.nnz,
                                        err);
        if (rc) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            km_error_set(err, rc, "triple %u: %s", k + 1, m);
        }
    }
    if (!rc && r.p != r.end)
        rc = km_error_set(err, KM_EINPUT, "%zu bytes after the last triple",
                          (size_t)(r.end - r.p));
    if (!rc && mode == APPLY_LIVE && km_mtl_n(S->mtl) > S->cfg->max_inputs)
        rc = km_error_set(err, KM_EINPUT, "the server holds at most %lld unique inputs "
                          "(mtl-server --max-inputs)", (long long)S->cfg->max_inputs);
    if (mode == CHECK_ONLY)
        return rc;
    if (rc) {
        km_mtl_rollback(S->mtl);
        return rc;
    }
    return km_mtl_commit(S->mtl, err);
}

static int replay(void *ctx, unsigned type, const unsigned char *body, size_t len,
                  km_error *err)
{
    server *S = ctx;
    if (*S->cfg->stop)
        return KM_JOURNAL_STOP;
    km_rd r = {body, body + len, 0};
    int64_t task = (int64_t)km_rd_u64(&r);
    uint64_t seq = type == REC_SEND ? km_rd_u64(&r) : 0;
    if ((type == REC_TRIPLES || type == REC_SEND) && !r.bad && seq <= INT64_MAX) {
        uint32_t count;
        int rc = triples(S, task, r.p, (size_t)(r.end - r.p), APPLY_REPLAY, &count, err);
        if (rc == KM_JOURNAL_STOP)
            return rc;
        if (!rc && seq && km_imap_put(&S->seq_of, task, (int64_t)seq))
            rc = km_error_nomem(err, "sequence numbers");
        S->triples += count;
        return rc ? km_error_set(err, KM_EINPUT, "journal: %s", err->msg) : KM_OK;
    }
    char secret[KM_MTLP_SECRET_MAX + 1];
    r.p = body;
    if (type == REC_SECRET && !km_mtlp_get_auth(&r, &task, secret) && r.p == r.end) {
        S->issued++;
        return add_secret(S, task, secret) ? km_error_nomem(err, "secrets") : KM_OK;
    }
    return km_error_set(err, KM_EINPUT, "journal: record of unknown type %u", type);
}


/* ---- snapshots: the state at a place in the journal ----
 * File: "KMTKSNP1", the journal's id (16 bytes), the place (u64 offset, u64 records, u32 CRC:
 * km_journal_mark), u64 triples, u64 count of issued secrets (REGISTER) and each as an auth
 * (i64 task, u16 length, bytes), u64 count of tasks with a SEND sequence number and each as
 * (i64 task, u64 seq) in increasing task order, the state (km_mtl_save), u32 CRC-32 of
 * everything before.
 * Written atomically (temporary file, fsync, rename) after the journal is synced; a snapshot
 * is only a shortcut: the journal keeps every record. */

#define SNAP_MAGIC "KMTKSNP2"   /* SNP1 (without the sequence numbers) is ignored */

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
    /* each task's last SEND sequence number: a retry after the restart is still a retry */
    int64_t nseq = 0, *seq = malloc((size_t)(S->seq_of.count + 1) * 2 * sizeof *seq);
    if (!seq) {
        km_buf_free(&b);
        return km_error_nomem(&w->err, "snapshot");
    }
    for (int64_t k = 0; k < S->seq_of.size; k++)
        if (S->seq_of.val[k] != 0) {
            seq[2 * nseq + 1] = S->seq_of.key[k];   /* sorted on [1] by id_cmp */
            seq[2 * nseq++] = S->seq_of.val[k] - 1;
        }
    qsort(seq, (size_t)nseq, 2 * sizeof *seq, id_cmp);
    km_buf_u64(&b, (uint64_t)nseq);
    for (int64_t k = 0; k < nseq; k++) {
        km_buf_u64(&b, (uint64_t)seq[2 * k + 1]);
        km_buf_u64(&b, (uint64_t)seq[2 * k]);
    }
    free(seq);
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
    int64_t nseq = why ? 0 : (int64_t)km_rd_u64(&r);
    const unsigned char *seqs = r.p;
    if (!why && (r.bad || nseq < 0 || (uint64_t)nseq > (uint64_t)(r.end - r.p) / 16))
        why = "malformed sequence numbers";
    for (int64_t k = 0; !why && k < nseq; k++) {
        int64_t task = (int64_t)km_rd_u64(&r), sq = (int64_t)km_rd_u64(&r);
        if (r.bad || sq < 0)
            why = "malformed sequence numbers";
        (void)task;
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
    r.p = seqs;
    for (int64_t k = 0; k < nseq; k++) {
        int64_t task = (int64_t)km_rd_u64(&r), sq = (int64_t)km_rd_u64(&r);
        if (km_imap_put(&S->seq_of, task, sq)) {
            free(p);
            return km_error_nomem(err, "sequence numbers");
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

/* Whether connection ci's address has used up its failed authentications. */
static int peer_blocked(server *S, int ci)
{
    peer *p = &S->peers[S->conns[ci].peer];
    if (S->now - p->window >= S->cfg->auth_window_ms) {
        p->window = S->now;
        p->fails = 0;
    }
    return p->fails >= S->cfg->max_auth_failures;
}

/* A failed authentication: counted for the address; the reply (and the connection) waits
 * auth_delay_ms. */
static void auth_failed(server *S, int ci)
{
    peer *p = &S->peers[S->conns[ci].peer];
    if (p->fails < INT32_MAX)
        p->fails++;
    S->conns[ci].hold = S->now + S->cfg->auth_delay_ms;
}

/* Parses, checks and (SEND) applies one request frame (type, body); queues its op. Returns
 * -1 when out of memory or the journal fails, 1 when the connection is to be closed after
 * the reply, else 0. */
static int parse(server *S, int ci, unsigned type, const unsigned char *body, size_t len,
                 km_error *err)
{
    op *o = new_op(S, ci, type);
    if (!o)
        return -1;
    km_rd r = {body, body + len, 0};
    char secret[KM_MTLP_SECRET_MAX + 1];
    if (type != KM_MTLP_REGISTER && type != KM_MTLP_SEND && type != KM_MTLP_GET &&
        type != KM_MTLP_STATUS) {
        refuse(o, KM_MTLP_EMALFORMED, "unknown request type %u", type);
        return 1;
    }
    if (km_mtlp_get_auth(&r, &o->task, secret)) {
        refuse(o, KM_MTLP_EMALFORMED, "malformed task and secret");
        return 1;
    }
    if (type == KM_MTLP_REGISTER) {
        if (r.p != r.end) {
            refuse(o, KM_MTLP_EMALFORMED, "malformed REGISTER");
            return 1;
        }
        /* one answer for registration off, a wrong token and a blocked address */
        if (!S->cfg->allow_register || !S->cfg->admin_token || peer_blocked(S, ci) ||
            !same_secret(S->cfg->admin_token, secret)) {
            auth_failed(S, ci);
            refuse(o, KM_MTLP_EREFUSED, "registration refused");
            return 0;
        }
        if (km_imap_get(&S->secret_of, o->task) >= 0) {   /* told to the admin only */
            refuse(o, KM_MTLP_EREFUSED, "task %lld already has a secret", (long long)o->task);
            return 0;
        }
        if (S->issued >= S->cfg->max_secrets) {
            refuse(o, KM_MTLP_EREFUSED, "registration limit reached (%lld secrets issued; "
                   "mtl-server --max-secrets)", (long long)S->issued);
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
        S->issued++;
        return 0;
    }
    uint64_t seq = 0;
    if (type == KM_MTLP_GET) {
        o->have_version = km_rd_u64(&r);
        o->have_n = km_rd_u64(&r);
    } else if (type == KM_MTLP_SEND) {
        seq = km_rd_u64(&r);
    }
    if (r.bad || (type != KM_MTLP_SEND && r.p != r.end)) {
        refuse(o, KM_MTLP_EMALFORMED, "malformed request");
        return 1;
    }
    /* one answer for a wrong secret, an unknown task and a blocked address */
    if (peer_blocked(S, ci) || !secret_ok(S, o->task, secret)) {
        auth_failed(S, ci);
        refuse(o, KM_MTLP_EAUTH, "task %lld: wrong secret or unknown task", (long long)o->task);
        return 0;
    }
    if (type != KM_MTLP_SEND)
        return 0;
    const unsigned char *tb = r.p;
    size_t tlen = (size_t)(r.end - r.p);
    uint32_t count;
    km_error e;
    int rc = seq > INT64_MAX ? km_error_set(&e, KM_EINPUT, "sequence number beyond 2^63 - 1")
                             : triples(S, o->task, tb, tlen, CHECK_ONLY, &count, &e);
    if (rc) {
        refuse(o, KM_MTLP_EINPUT, "%s", e.msg);
        return 0;
    }
    int64_t last = km_imap_get(&S->seq_of, o->task);
    o->version = (uint64_t)km_mtl_version(S->mtl);
    if (seq && (int64_t)seq <= last)   /* a retry of a request already applied */
        return 0;
    rc = triples(S, o->task, tb, tlen, APPLY_LIVE, &count, &e);
    if (rc == KM_EINTERNAL)
        return -1;
    if (rc) {
        refuse(o, KM_MTLP_EINPUT, "%s", e.msg);
        return 0;
    }
    unsigned char h[16];
    for (int i = 0; i < 8; i++) {
        h[i] = (unsigned char)((uint64_t)o->task >> (8 * i));
        h[8 + i] = (unsigned char)(seq >> (8 * i));
    }
    if ((S->jn && km_journal_append2(S->jn, REC_SEND, h, 16, tb, tlen, err)) ||
        (seq && km_imap_put(&S->seq_of, o->task, (int64_t)seq)))
        return -1;   /* applied, not acknowledged: the server stops */
    S->triples += count;
    o->count = count;
    o->version = (uint64_t)km_mtl_version(S->mtl);
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

/* Bytes of a DISCLOSED reply of S->disc from input first on. */
static size_t disclosed_size(const server *S, int64_t first)
{
    const km_problem *X = S->disc.X;
    size_t n = (size_t)S->disc.n, rows = (size_t)(X->l - first);
    size_t nnz = (size_t)(X->row_ptr[X->l] - X->row_ptr[first]);
    return KM_MTLP_HEADER + 24 + 4 * rows + 12 * nnz + 8 * n + 8 * n * n;
}

/* Writes one op's reply (SEND was applied in parse). KM_EINTERNAL when out of memory. */
static int answer(server *S, op *o, size_t *memory, km_error *err)
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
        f = km_buf_begin(b, KM_MTLP_ACK);
        km_buf_u64(b, o->version);
        km_buf_u32(b, o->count);
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
            int64_t first = o->have_n <= (uint64_t)n && o->have_version <= (uint64_t)version
                                ? (int64_t)o->have_n : 0;
            size_t size = disclosed_size(S, first), mine = c->incap + b->cap;
            if (size > UINT32_MAX || size + mine > S->cfg->conn_memory) {
                char m[160];
                snprintf(m, sizeof m, "a disclosure of %zu bytes is beyond the connection's "
                         "memory budget (mtl-server --conn-memory %zu)", size,
                         S->cfg->conn_memory);
                reply_error(c, KM_MTLP_EBUSY, m);
                return KM_OK;
            }
            if (*memory + size > S->cfg->total_memory) {
                reply_error(c, KM_MTLP_EBUSY, "server busy (memory budget of all connections "
                            "in use): retry later");
                return KM_OK;
            }
            *memory += size;
            f = km_buf_begin(b, KM_MTLP_DISCLOSED);
            km_mtlp_put_disclosed(b, &S->disc, first);
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
    S->peers[c->peer].nconn--;
    S->conns[ci] = S->conns[--S->nconn];
}

/* All connections' buffers, by capacity. */
static size_t conn_memory(const server *S)
{
    size_t m = 0;
    for (int i = 0; i < S->nconn; i++)
        m += S->conns[i].incap + S->conns[i].out.cap;
    return m;
}

static uint64_t frame_len(const unsigned char *h)
{
    return (uint64_t)h[0] | (uint64_t)h[1] << 8 | (uint64_t)h[2] << 16 | (uint64_t)h[3] << 24;
}

static int frame_waiting(const server *S, const conn *c);

/* Refuses what the connection sent with an ERROR and closes it once that is written. */
static void close_with(conn *c, unsigned code, const char *msg)
{
    reply_error(c, code, msg);
    c->closing = 1;
    c->inlen = c->used = 0;
}

/* Reads what the socket has. The buffer grows with the bytes that arrive (at most the frame
 * being received), within the connection's and the server's memory budgets. */
static void read_conn(server *S, conn *c)
{
    size_t want = c->incap;
    if (frame_waiting(S, c))   /* parsed first: pipelined frames do not grow the buffer */
        return;
    if (c->inlen == c->incap) {   /* full: double, up to the end of the current frame */
        want = c->incap ? 2 * c->incap : READ_FIRST;
        if (c->inlen - c->used >= KM_MTLP_HEADER) {
            uint64_t end = c->used + frame_len(c->in + c->used) + 4;
            if (end <= c->used + S->cfg->max_message + 4 && end > c->inlen && end < want)
                want = (size_t)end;
        }
    }
    if (want > c->incap) {
        size_t grow = want - c->incap;
        if (want + c->out.cap > S->cfg->conn_memory ||
            S->memory + grow > S->cfg->total_memory) {
            close_with(c, KM_MTLP_EBUSY, "server busy (memory budget): retry later");
            return;
        }
        unsigned char *p = realloc(c->in, want);
        if (!p) {
            c->closing = 1;
            return;
        }
        c->in = p;
        c->incap = want;
        S->memory += grow;
    }
    ssize_t k = recv(c->fd, c->in + c->inlen, c->incap - c->inlen, 0);
    if (k > 0) {
        c->inlen += (size_t)k;
        c->active = S->now;
        if (!c->frame0)
            c->frame0 = S->now;
    } else if (k == 0) {
        c->eof = 1;
    } else if (errno != EAGAIN && errno != EINTR) {
        c->closing = 1;
    }
}

/* 1 when c holds a whole frame not yet parsed (or a header with an impossible length). */
static int frame_waiting(const server *S, const conn *c)
{
    if (c->closing || c->inlen - c->used < KM_MTLP_HEADER)
        return 0;
    uint64_t len = frame_len(c->in + c->used);
    return len < 1 || len > S->cfg->max_message || c->inlen - c->used >= len + 4;
}

/* Parses the complete frames of connection ci (up to one GET: its reply may be large; none
 * after a failed authentication, whose reply waits). */
static int parse_conn(server *S, int ci, km_error *err)
{
    conn *c = &S->conns[ci];
    while (!c->closing && c->hold <= S->now && c->inlen - c->used >= KM_MTLP_HEADER) {
        uint64_t len = frame_len(c->in + c->used);
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
        const unsigned char *h = c->in + c->used;
        unsigned type = h[4];
        int rc = parse(S, ci, type, h + KM_MTLP_HEADER, (size_t)len - 1, err);
        if (rc < 0)
            return -1;
        c->used += (size_t)len + 4;
        if (rc > 0)
            c->closing = 1;
        if (S->jn && S->cfg->fsync_policy == KM_FSYNC_ALWAYS &&
            (type == KM_MTLP_SEND || type == KM_MTLP_REGISTER) && km_journal_commit(S->jn, 1, err))
            return -2;
        if (type == KM_MTLP_GET && !rc)
            break;
    }
    return 0;
}

/* The peer-table entry of an address (new or reused); -1 when out of memory. */
static int peer_of(server *S, const struct sockaddr_storage *sa)
{
    unsigned char a[16] = {0};
    int fam = sa->ss_family;
    if (fam == AF_INET)
        memcpy(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    else if (fam == AF_INET6)
        memcpy(a, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    int freei = -1;
    for (int i = 0; i < S->npeer; i++) {
        peer *p = &S->peers[i];
        if (p->family == fam && !memcmp(p->addr, a, 16))
            return i;
        if (freei < 0 && !p->nconn &&
            (!p->fails || S->now - p->window >= S->cfg->auth_window_ms))
            freei = i;
    }
    if (freei < 0) {
        if (S->npeer == S->cappeer) {
            int cap = S->cappeer ? 2 * S->cappeer : 64;
            peer *np = realloc(S->peers, (size_t)cap * sizeof *np);
            if (!np)
                return -1;
            S->peers = np;
            S->cappeer = cap;
        }
        freei = S->npeer++;
    }
    peer *p = &S->peers[freei];
    memset(p, 0, sizeof *p);
    memcpy(p->addr, a, 16);
    p->family = fam;
    p->window = S->now;
    return freei;
}

/* A refusal written straight to a new socket, which is then closed. */
static void refuse_fd(int fd, const char *msg)
{
    conn c = {.fd = fd};
    reply_error(&c, KM_MTLP_EBUSY, msg);
    if (!c.out.failed && send(fd, c.out.p, c.out.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* nothing to do: it is closed either way */
    }
    km_buf_free(&c.out);
    close(fd);
}

/* Closes connections past their timeouts; the poll timeout until the next deadline (ms,
 * -1: none). */
static int timeouts(server *S)
{
    const km_mtl_server_config *cfg = S->cfg;
    int64_t next = INT64_MAX;
    int closed = 0;
    for (int i = 0; i < S->nconn; i++) {
        conn *c = &S->conns[i];
        if (c->closing)
            continue;
        int pending_out = c->out.len > c->outoff, pending_in = c->inlen > 0;
        if (c->hold > S->now) {
            next = c->hold < next ? c->hold : next;
            continue;
        }
        if (pending_in && c->frame0 && S->now - c->frame0 >= cfg->io_timeout_ms) {
            char m[120];
            snprintf(m, sizeof m, "request frame not complete within %d ms", cfg->io_timeout_ms);
            close_with(c, KM_MTLP_ETIMEOUT, m);
            continue;
        }
        if (pending_out && S->now - c->active >= cfg->io_timeout_ms) {
            c->closing = closed = 1;   /* a reader that does not read: replies dropped */
            c->outoff = c->out.len = 0;
            continue;
        }
        if (!pending_in && !pending_out && S->now - c->active >= cfg->idle_timeout_ms) {
            c->closing = closed = 1;
            continue;
        }
        int64_t d = pending_in && c->frame0 ? c->frame0 + cfg->io_timeout_ms
                    : pending_out            ? c->active + cfg->io_timeout_ms
                                             : c->active + cfg->idle_timeout_ms;
        if (pending_in && !pending_out && c->active + cfg->idle_timeout_ms < d)
            d = c->active + cfg->idle_timeout_ms;
        next = d < next ? d : next;
    }
    if (closed)
        return 0;   /* dropped after this round's poll */
    if (next == INT64_MAX)
        return -1;
    return next <= S->now ? 0 : next - S->now > 60000 ? 60000 : (int)(next - S->now);
}

int km_mtl_server_run(const km_mtl_server_config *cfg, km_error *err)
{
    server S = {0};
    S.cfg = cfg;
    S.now = now_ms();
    int lfd = -1, rc = KM_OK;
    struct pollfd *pfd = NULL;
    if (cfg->allow_register && (!cfg->admin_token ||
                                strlen(cfg->admin_token) < KM_MTLP_SECRET_MIN ||
                                strlen(cfg->admin_token) > KM_MTLP_SECRET_MAX))
        return km_error_set(err, KM_EUSAGE, "registration needs an admin token of %d to %d "
                            "characters", KM_MTLP_SECRET_MIN, KM_MTLP_SECRET_MAX);
    if (cfg->max_clients < 1 || cfg->max_per_peer < 1 || cfg->io_timeout_ms < 1 ||
        cfg->idle_timeout_ms < 1 || cfg->auth_window_ms < 1 || cfg->max_auth_failures < 1 ||
        cfg->auth_delay_ms < 0 || cfg->max_message < 64 || cfg->conn_memory < 65536 ||
        cfg->total_memory < cfg->conn_memory || cfg->max_inputs < 1 ||
        (!cfg->n_features && cfg->max_features < 1))
        return km_error_set(err, KM_EUSAGE, "mtl server: a limit out of range");
    if (!(S.mtl = km_mtl_new(&cfg->param, err)))
        return err ? err->code : KM_EUSAGE;
    for (int64_t k = 0; k < cfg->nsecrets && !rc; k++)
        if (km_imap_get(&S.secret_of, cfg->secret_task[k]) >= 0)
            rc = km_error_set(err, KM_EINPUT, "task %lld has two secrets",
                              (long long)cfg->secret_task[k]);
        else if (strlen(cfg->secret[k]) < KM_MTLP_SECRET_MIN ||
                 strlen(cfg->secret[k]) > KM_MTLP_SECRET_MAX)
            rc = km_error_set(err, KM_EINPUT, "task %lld: a secret has %d to %d characters",
                              (long long)cfg->secret_task[k], KM_MTLP_SECRET_MIN,
                              KM_MTLP_SECRET_MAX);
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
        S.now = now_ms();
        int wait = timeouts(&S);
        int np = 0;
        pfd[np++] = (struct pollfd){lfd, POLLIN, 0};
        pfd[np++] = (struct pollfd){cfg->wake_fd, POLLIN, 0};   /* fd -1: ignored */
        for (int i = 0; i < S.nconn; i++) {
            conn *c = &S.conns[i];
            short ev = c->hold > S.now                ? 0
                       : c->out.len > c->outoff       ? POLLOUT
                       : c->closing || c->eof         ? 0
                                                      : POLLIN;
            pfd[np++] = (struct pollfd){c->fd, ev, 0};
        }
        int k = poll(pfd, (nfds_t)np, again ? 0 : wait);
        again = 0;
        if (k < 0) {
            if (errno == EINTR)
                continue;
            rc = km_error_set(err, KM_EINTERNAL, "poll: %s", strerror(errno));
            break;
        }
        S.now = now_ms();
        /* read, then parse every connection's complete frames in arrival order */
        int nc = S.nconn;
        if (pfd[1].revents & POLLIN) {   /* a signal: drain the pipe; *stop is set */
            char sink[64];
            while (read(cfg->wake_fd, sink, sizeof sink) > 0)
                ;
        }
        S.memory = conn_memory(&S);
        for (int i = 0; i < nc; i++)
            if (pfd[i + 2].revents & (POLLIN | POLLHUP | POLLERR) && S.conns[i].hold <= S.now)
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
            if (frame_waiting(&S, c) && c->hold <= S.now)
                again = 1;        /* parsed next round without waiting for input */
        }
        /* commit, then answer in arrival order */
        if (!rc && S.jn && cfg->fsync_policy != KM_FSYNC_ALWAYS &&
            km_journal_commit(S.jn, cfg->fsync_policy == KM_FSYNC_BATCH, err))
            rc = KM_EINPUT;   /* fatal: nothing of this round is acknowledged */
        size_t memory = conn_memory(&S);
        for (int i = 0; i < S.nops && !rc; i++)
            rc = answer(&S, &S.ops[i], &memory, err);
        /* compact inputs, write outputs (not while a failed authentication waits), close
         * finished connections */
        for (int i = 0; i < S.nconn; i++) {
            conn *c = &S.conns[i];
            if (c->used) {
                memmove(c->in, c->in + c->used, c->inlen - c->used);
                c->inlen -= c->used;
                c->used = 0;
                c->frame0 = c->inlen ? S.now : 0;
            }
            if (!c->inlen && c->incap > 2 * READ_CHUNK) {   /* give a large frame's room back */
                free(c->in);
                c->in = NULL;
                c->incap = 0;
            }
            while (c->out.len > c->outoff && c->hold <= S.now) {
                ssize_t w = send(c->fd, c->out.p + c->outoff, c->out.len - c->outoff,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0) {
                    c->outoff += (size_t)w;
                    c->active = S.now;
                    continue;
                }
                if (w < 0 && (errno == EAGAIN || errno == EINTR))
                    break;
                c->closing = 1;
                c->outoff = c->out.len;
            }
            if (c->out.len == c->outoff) {
                c->out.len = c->outoff = 0;
                if (c->out.cap > (1u << 20))   /* give a large reply's buffer back */
                    km_buf_free(&c->out);
            }
        }
        for (int i = S.nconn - 1; i >= 0; i--)
            if (S.conns[i].closing && S.conns[i].out.len == 0)
                drop_conn(&S, i);
        /* every journaled request of the round is applied and its reply sent (or queued) */
        if (!rc && cfg->snapshot_every > 0 && S.triples - S.snap_triples >= cfg->snapshot_every)
            snapshot_save(&S);
        /* new connections, within the limits of all and of each address */
        if (pfd[0].revents & POLLIN) {
            int fd;
            struct sockaddr_storage sa;
            socklen_t sl = sizeof sa;
            while ((fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
                   0) {
                sl = sizeof sa;
                int pi = peer_of(&S, &sa);
                if (pi < 0 || S.nconn == cfg->max_clients) {
                    refuse_fd(fd, "server busy (mtl-server --max-clients): retry later");
                    continue;
                }
                if (S.peers[pi].nconn >= cfg->max_per_peer) {
                    refuse_fd(fd, "too many connections from this address "
                              "(mtl-server --max-per-peer)");
                    continue;
                }
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                S.peers[pi].nconn++;
                S.conns[S.nconn++] = (conn){.fd = fd, .peer = pi, .active = S.now};
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
    free(S.peers);
    free(S.ops);
    free(S.xi);
    free(S.xv);
    for (int64_t k = 0; k < S.nsec; k++)
        free(S.secrets[k]);
    free(S.secrets);
    km_imap_free(&S.secret_of);
    km_imap_free(&S.seq_of);
    km_mtl_disclosed_free(&S.disc);
    km_journal_close(S.jn);
    km_mtl_free(S.mtl);
    return rc;
}
