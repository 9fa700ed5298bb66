/* fuzz_journal.c - journal open + replay (common/journal.c, version 2, and the server's
 * replay in common/mtlserver.c) on a file of the input. First byte 0: the rest is the whole
 * file (a version-1 file is converted);
 * 1: the rest follows a valid header (that of mtl-server with the default parameters and
 * --features 8, as written by the server itself, so the harness does not depend on the
 * format); 2: the rest is records (u8 type, u16 length, body), appended to a new journal
 * through the API, so that their checksums hold and the server's replay sees the bodies.
 * Then:
 *   - km_journal_open + km_journal_replay with that header: if either refuses, the file
 *     must be unchanged (a version-1 file converted before: kept whole as PATH.v1); if the
 *     replay cuts a torn tail, the file must be a prefix of what it was (converted: PATH.v1
 *     is what it was); a journal it opened takes one more record and reopens with exactly
 *     the records it replayed plus that one;
 *   - the same bytes replayed by a server (km_mtl_server_run with stop already set). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <zlib.h>

#include "fuzz_util.h"
#include "journal.h"
#include "mtl.h"
#include "mtlproto.h"
#include "mtlserver.h"

#define NFEAT 8

static unsigned char *head;   /* a journal with no records, as the server writes it */
static size_t headlen;
static km_buf hdr;            /* the server's header bytes (km_journal_open's hdr) */

static int run_server(const char *journal, km_error *err)
{
    volatile sig_atomic_t stop = 1;
    km_mtl_server_config cfg;
    km_mtl_server_config_default(&cfg);
    cfg.n_features = NFEAT;
    cfg.port = 0;
    cfg.journal = journal;
    cfg.fsync_policy = KM_FSYNC_NONE;
    cfg.max_message = 4096;
    cfg.max_clients = 1;
    cfg.stop = &stop;
    return km_mtl_server_run(&cfg, err);
}

static void drop_head(void)
{
    free(head);
    km_buf_free(&hdr);
}

static void init(void)
{
    char path[512];
    km_error err;
    fz_path(path, "head");
    unlink(path);
    FZ_CHECK(run_server(path, &err) == KM_OK, "a new journal: %s", err.msg);
    head = fz_slurp(path, &headlen);
    km_mtl_param p = km_mtl_param_default();
    km_mtlp_put_param(&hdr, &p, NFEAT);
    atexit(drop_head);
}

/* Replayed records: their count and a running CRC of (type, length, body). */
typedef struct seen {
    int64_t n;
    uint32_t crc;
} seen;

static int count(void *ctx, unsigned type, const unsigned char *body, size_t len, km_error *err)
{
    (void)err;
    seen *s = ctx;
    unsigned char t[9] = {(unsigned char)type};
    for (int i = 0; i < 8; i++)
        t[1 + i] = (unsigned char)((uint64_t)len >> (8 * i));
    s->crc = (uint32_t)crc32(s->crc, t, 9);
    if (len)
        s->crc = (uint32_t)crc32(s->crc, body, (uInt)len);
    s->n++;
    return 0;
}

/* Mode 2: the journal made through the API from (type, length, body) records. */
static unsigned char *build(const char *path, const uint8_t *data, size_t size, size_t *flen)
{
    km_error err;
    int64_t dropped;
    unsigned how;
    unlink(path);
    km_journal *j = km_journal_open(path, hdr.p, hdr.len, &how, &err);
    FZ_CHECK(j && how == KM_JOURNAL_CREATED, "new journal: %s", j ? "not created" : err.msg);
    FZ_CHECK(km_journal_replay(j, NULL, count, &(seen){0, 0}, &dropped, &err) == KM_OK,
             "new journal: %s", err.msg);
    for (size_t off = 0; off + 3 <= size;) {
        unsigned type = data[off];
        size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
        off += 3;
        if (len > size - off)
            len = size - off;
        FZ_CHECK(km_journal_append(j, type, data + off, len, &err) == KM_OK, "append: %s",
                 err.msg);
        off += len;
    }
    FZ_CHECK(km_journal_commit(j, 0, &err) == KM_OK, "commit: %s", err.msg);
    km_journal_close(j);
    return fz_slurp(path, flen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!head)
        init();
    if (size < 1)
        return 0;
    unsigned mode = data[0] % 3;
    data++, size--;
    char path[512], v1[512];
    fz_path(path, "journal");
    fz_path(v1, "journal.v1");
    unlink(v1);
    size_t flen;
    unsigned char *file;
    if (mode == 2) {
        file = build(path, data, size, &flen);
    } else {
        flen = (mode == 1 ? headlen : 0) + size;
        file = malloc(flen + 1);
        FZ_CHECK(file, "out of memory");
        if (mode == 1)
            memcpy(file, head, headlen);
        if (size)
            memcpy(file + flen - size, data, size);
        fz_write(path, "journal", file, flen);
    }

    seen s1 = {0, 0}, s2 = {0, 0};
    int64_t dropped = -1, dropped2 = -1;
    unsigned how = 0;
    km_error err;
    km_journal *j = km_journal_open(path, hdr.p, hdr.len, &how, &err);
    int rc = j ? km_journal_replay(j, NULL, count, &s1, &dropped, &err) : KM_EINPUT;
    FZ_CHECK(!j || how == 0 || how == KM_JOURNAL_CONVERTED, "how %u of an existing file", how);
    if (how == KM_JOURNAL_CONVERTED) {   /* the original is kept whole */
        size_t vlen;
        unsigned char *orig = fz_slurp(v1, &vlen);
        FZ_CHECK(vlen == flen && !memcmp(orig, file, flen), "PATH.v1 is not the original");
        free(orig);
    }
    size_t after;
    unsigned char *now = fz_slurp(path, &after);
    if (rc) {
        km_journal_close(j);
        FZ_CHECK(how == KM_JOURNAL_CONVERTED || (after == flen && !memcmp(now, file, flen)),
                 "a journal refused (%s) was changed", err.msg);
        FZ_CHECK(how == KM_JOURNAL_CONVERTED || access(v1, F_OK) != 0,
                 "a journal refused (%s) left PATH.v1", err.msg);
    } else {
        FZ_CHECK(dropped >= 0 && (size_t)dropped <= flen, "dropped %lld", (long long)dropped);
        FZ_CHECK(km_journal_records(j) == s1.n, "records %lld, replayed %lld",
                 (long long)km_journal_records(j), (long long)s1.n);
        FZ_CHECK(how == KM_JOURNAL_CONVERTED ||
                     (after == flen - (size_t)dropped && !memcmp(now, file, after)),
                 "opening kept %zu of %zu bytes, dropped %lld", after, flen, (long long)dropped);
        static const unsigned char rec[] = "one more record";
        FZ_CHECK(km_journal_append(j, 7, rec, sizeof rec, &err) == KM_OK &&
                     km_journal_commit(j, 0, &err) == KM_OK,
                 "append: %s", err.msg);
        km_journal_close(j);
        count(&s1, 7, rec, sizeof rec, NULL);
        j = km_journal_open(path, hdr.p, hdr.len, &how, &err);
        FZ_CHECK(j, "a journal it wrote does not reopen: %s", err.msg);
        FZ_CHECK(how == 0, "reopened: how %u", how);
        FZ_CHECK(km_journal_replay(j, NULL, count, &s2, &dropped2, &err) == KM_OK,
                 "a journal it wrote does not replay: %s", err.msg);
        FZ_CHECK(dropped2 == 0 && s2.n == s1.n && s2.crc == s1.crc,
                 "reopened: %lld records (dropped %lld), %lld expected", (long long)s2.n,
                 (long long)dropped2, (long long)s1.n);
        km_journal_close(j);
    }
    free(now);

    /* the server's replay of the same bytes */
    unlink(v1);
    fz_write(path, "journal", file, flen);
    rc = run_server(path, &err);
    FZ_CHECK(rc == KM_OK || rc == KM_EINPUT, "server: %d %s", rc, err.msg);
    free(file);
    return 0;
}
