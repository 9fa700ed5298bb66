/* test_journal.c - the mtl-server journal (format version 2) and snapshots:
 * - a small journal with every byte flipped (4 masks) and cut at every length, read back:
 *   refused, or replayed exactly (every record whole in the file, none dropped); only a
 *   torn tail is ever cut off; zeros after the last record are a torn tail, garbage is not;
 * - an empty file, another header, a second opener (the lock), a version-1 journal
 *   (converted, kept as .v1; a bad last record refused), replay from a mark, a stop;
 * - km_mtl_save / km_mtl_load: a state saved after k triples, loaded and fed the rest equals
 *   the state fed everything, byte for byte (every task's R_j too); truncated snapshots are
 *   refused;
 * - the mtl-server binary: every byte of a small journal flipped: refused; snapshot plus
 *   the journal after it = the whole journal replayed (disclosure and every task's counts,
 *   bit for bit); SIGTERM during a long replay ends it, writes a snapshot, and the next start
 *   goes on from there. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#include <zlib.h>

#include "blas.h"
#include "journal.h"
#include "mtl.h"
#include "mtlproto.h"
#include "rng.h"
#include "server.h"
#include "test.h"
#include "testutil.h"

static char dir[256], server_bin[4096];

static void path_of(char *p, size_t n, const char *name)
{
    snprintf(p, n, "%s/%s", dir, name);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)n + 1);
    *len = fread(p, 1, (size_t)n, f);
    fclose(f);
    return p;
}

static void spit(const char *path, const unsigned char *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, len, f) != len)
        printf("# cannot write %s\n", path);
    if (f)
        fclose(f);
}

/* ---- the reader ---- */

#define NREC 7

typedef struct rec {
    unsigned type;
    size_t len;
    unsigned char body[64];
} rec;

static rec recs[NREC];
static const char hdr[] = "parameters: alpha 0.5";

typedef struct seen {
    int n;
    rec r[NREC + 4];
    int stop_at;   /* return KM_JOURNAL_STOP at this record (-1: never) */
} seen;

static int collect(void *ctx, unsigned type, const unsigned char *body, size_t len,
                   km_error *err)
{
    (void)err;
    seen *s = ctx;
    if (s->n == s->stop_at)
        return KM_JOURNAL_STOP;
    if (s->n < NREC + 4 && len <= sizeof s->r[0].body) {
        s->r[s->n].type = type;
        s->r[s->n].len = len;
        memcpy(s->r[s->n].body, body, len);
    }
    s->n++;
    return 0;
}

/* Opens and replays path: 0 with the records in *s, or the error code (message in err). */
static int read_journal(const char *path, const km_journal_mark *from, seen *s,
                        int64_t *dropped, km_error *err)
{
    memset(s, 0, sizeof *s);
    s->stop_at = -1;
    *dropped = 0;
    km_journal *j = km_journal_open(path, hdr, sizeof hdr, NULL, err);
    if (!j)
        return err->code ? err->code : KM_EINPUT;
    int rc = km_journal_replay(j, from, collect, s, dropped, err);
    km_journal_close(j);
    return rc;
}

/* 1 when s holds recs[first..first+n) exactly. */
static int same_records(const seen *s, int first, int n)
{
    if (s->n != n)
        return 0;
    for (int k = 0; k < n; k++) {
        const rec *a = &s->r[k], *b = &recs[first + k];
        if (a->type != b->type || a->len != b->len || memcmp(a->body, b->body, a->len))
            return 0;
    }
    return 1;
}

/* Writes recs to a new journal at path; ends[k]: the byte where record k ends. */
static int make_journal(const char *path, int64_t *ends, km_journal_mark *marks)
{
    km_error err;
    unlink(path);
    unsigned how;
    km_journal *j = km_journal_open(path, hdr, sizeof hdr, &how, &err);
    int64_t dropped;
    if (!j || how != KM_JOURNAL_CREATED ||
        km_journal_replay(j, NULL, collect, &(seen){.stop_at = -1}, &dropped, &err)) {
        printf("# create: %s\n", err.msg);
        km_journal_close(j);
        return -1;
    }
    for (int k = 0; k < NREC; k++) {
        /* two commits: records queued together and alone */
        if (km_journal_append(j, recs[k].type, recs[k].body, recs[k].len, &err) ||
            ((k == 2 || k >= 4) && km_journal_commit(j, 1, &err))) {
            printf("# append: %s\n", err.msg);
            km_journal_close(j);
            return -1;
        }
        if (k == 2 || k >= 4) {
            marks[k] = km_journal_end(j);
            ends[k] = marks[k].offset;
        }
    }
    km_journal_close(j);
    return 0;
}

static void reader_every_byte(void)
{
    km_rng r;
    km_rng_seed(&r, 13);
    for (int k = 0; k < NREC; k++) {
        recs[k].type = 1 + (unsigned)km_rng_below(&r, 2);
        recs[k].len = k == 1 ? 0 : 1 + km_rng_below(&r, 30);
        for (size_t i = 0; i < recs[k].len; i++)
            recs[k].body[i] = (unsigned char)km_rng_below(&r, 256);
    }
    char path[512], work[512];
    path_of(path, sizeof path, "small.jnl");
    path_of(work, sizeof work, "work.jnl");
    int64_t ends[NREC] = {0};
    km_journal_mark marks[NREC];
    if (make_journal(path, ends, marks))
        return;
    /* records committed together: their ends from the lengths */
    size_t len;
    unsigned char *orig = slurp(path, &len);
    int64_t head = (int64_t)(32 + sizeof hdr + 4), e = head;
    int agree = 1;
    for (int k = 0; k < NREC; k++) {
        e += 12 + 1 + (int64_t)recs[k].len;
        agree &= !ends[k] || ends[k] == e;
        ends[k] = e;
    }
    CHECK(agree && ends[NREC - 1] == (int64_t)len, "a journal of %d records, %zu bytes "
          "(header %lld)", NREC, len, (long long)head);
    seen s;
    int64_t dropped;
    km_error err;
    CHECK(read_journal(path, NULL, &s, &dropped, &err) == 0 && same_records(&s, 0, NREC) &&
          dropped == 0, "read back: the %d records", NREC);

    /* every byte flipped, 4 ways: refused, or (never expected) every record */
    static const unsigned masks[] = {0x01, 0x80, 0xff, 0};   /* 0: the byte set to 0 */
    int flips = 0, refused = 0, exact = 0, lost = 0;
    char first_msg[sizeof err.msg] = "";
    for (size_t at = 0; at < len; at++)
        for (int m = 0; m < 4; m++) {
            unsigned char *p = malloc(len);
            memcpy(p, orig, len);
            if (masks[m])
                p[at] ^= (unsigned char)masks[m];
            else if (p[at])
                p[at] = 0;
            else
                p[at] = 0x5a;
            spit(work, p, len);
            free(p);
            flips++;
            int rc = read_journal(work, NULL, &s, &dropped, &err);
            if (rc) {
                refused++;
                if (!first_msg[0] && at > (size_t)head)
                    snprintf(first_msg, sizeof first_msg, "%s", err.msg);
                if (!strstr(err.msg, "refusing to start") && !strstr(err.msg, "other parameters"))
                    printf("# byte %zu: refused without saying so: %s\n", at, err.msg);
            } else if (same_records(&s, 0, NREC) && dropped == 0) {
                exact++;
            } else {
                lost++;
                printf("# byte %zu mask %u: %d records replayed, %lld bytes dropped\n", at,
                       masks[m], s.n, (long long)dropped);
            }
        }
    CHECK(lost == 0 && refused + exact == flips, "every byte flipped (%d cases): %d refused, %d "
          "replayed exactly, %d replayed with a record missing", flips, refused, exact, lost);
    CHECK(refused == flips, "... in fact every one refused (header and record checksums)");
    printf("# e.g. %s\n", first_msg);

    /* cut at every length: refused (no whole header), or exactly the whole records */
    int cuts = 0, ok = 0, bad = 0;
    for (size_t n = 0; n <= len; n++) {
        spit(work, orig, n);
        int rc = read_journal(work, NULL, &s, &dropped, &err);
        int whole = 0;
        while (whole < NREC && ends[whole] <= (int64_t)n)
            whole++;
        int64_t keep = whole ? ends[whole - 1] : head;
        struct stat sb;
        stat(work, &sb);
        cuts++;
        if (rc)
            ok += (int64_t)n < head;   /* only a file without a whole header is refused */
        else
            ok += same_records(&s, 0, whole) && sb.st_size == keep &&
                  dropped == (int64_t)n - keep;
        if (rc ? (int64_t)n >= head : !same_records(&s, 0, whole)) {
            bad++;
            printf("# cut at %zu: rc %d, %d records (%d whole): %s\n", n, rc, s.n, whole,
                   rc ? err.msg : "");
        }
    }
    CHECK(ok == cuts && bad == 0, "cut at every length 0..%zu: below the header refused, else "
          "every whole record replayed and the torn rest cut off the file", len);

    /* zeros after the last record (space allocated, never written): a torn tail */
    unsigned char *z = calloc(len + 100, 1);
    memcpy(z, orig, len);
    spit(work, z, len + 100);
    struct stat sb;
    int rc = read_journal(work, NULL, &s, &dropped, &err);
    stat(work, &sb);
    CHECK(!rc && same_records(&s, 0, NREC) && dropped == 100 && sb.st_size == (off_t)len,
          "100 zero bytes after the last record: cut off, every record replayed");
    /* zeros from the last record's start on: the same (the record was being written) */
    memset(z + ends[NREC - 2], 0, len + 100 - (size_t)ends[NREC - 2]);
    spit(work, z, len + 100);
    rc = read_journal(work, NULL, &s, &dropped, &err);
    CHECK(!rc && same_records(&s, 0, NREC - 1), "zeros from the last record's start on: a "
          "torn tail, the records before it replayed");
    /* zeros from inside the last record's header on are damage (no page boundary there) */
    memcpy(z, orig, len);
    memset(z + ends[NREC - 2] + 3, 0, len + 100 - (size_t)ends[NREC - 2] - 3);
    spit(work, z, len + 100);
    rc = read_journal(work, NULL, &s, &dropped, &err);
    CHECK(rc == KM_EINPUT, "zeros from inside the last record's header on (not at a page "
          "boundary): refused");
    /* garbage after the last record is damage, not a torn write */
    memcpy(z, orig, len);
    memcpy(z + len, "\x40\x00\x00\x00\x12\x34\x56\x78\x02garbage", 16);
    spit(work, z, len + 16);
    rc = read_journal(work, NULL, &s, &dropped, &err);
    CHECK(rc == KM_EINPUT && strstr(err.msg, "record 8 at byte") &&
          strstr(err.msg, "refusing to start"), "16 bytes of garbage after the last record: "
          "refused (%s)", err.msg);
    free(z);

    /* an empty file and a short one are refused, never overwritten */
    spit(work, orig, 0);
    rc = read_journal(work, NULL, &s, &dropped, &err);
    stat(work, &sb);
    CHECK(rc == KM_EINPUT && sb.st_size == 0 && strstr(err.msg, "empty"),
          "an empty file: refused and left alone (%s)", err.msg);
    spit(work, orig, 20);
    rc = read_journal(work, NULL, &s, &dropped, &err);
    stat(work, &sb);
    CHECK(rc == KM_EINPUT && sb.st_size == 20, "20 bytes of a header: refused and left alone");
    /* another header */
    km_journal *j = km_journal_open(path, "other", 5, NULL, &err);
    CHECK(!j && strstr(err.msg, "other parameters"), "another header: 'written with other "
          "parameters'");
    km_journal_close(j);

    /* the lock: a second opener is refused while the first holds the journal */
    km_journal *j1 = km_journal_open(path, hdr, sizeof hdr, NULL, &err);
    km_journal *j2 = km_journal_open(path, hdr, sizeof hdr, NULL, &err);
    CHECK(j1 && !j2 && strstr(err.msg, "locked by another process"),
          "a second opener of the same journal is refused: %s", err.msg);
    km_journal_close(j1);
    j2 = km_journal_open(path, hdr, sizeof hdr, NULL, &err);
    CHECK(j2 != NULL, "... and opens it once the first has closed it");
    km_journal_close(j2);

    /* a mark: the records after it only; a mark that does not fit is an error */
    rc = read_journal(path, &marks[4], &s, &dropped, &err);
    CHECK(!rc && same_records(&s, 5, NREC - 5), "replay from the mark after record 5: records "
          "6..%d only (the ones before verified)", NREC);
    km_journal_mark bad_mark = marks[4];
    bad_mark.crc ^= 1;
    rc = read_journal(path, &bad_mark, &s, &dropped, &err);
    CHECK(rc == KM_EINPUT && strstr(err.msg, "does not match"), "a mark with another CRC: "
          "refused (%s)", err.msg);
    bad_mark = marks[4];
    bad_mark.offset += 3;
    rc = read_journal(path, &bad_mark, &s, &dropped, &err);
    CHECK(rc == KM_EINPUT && strstr(err.msg, "does not match"), "a mark inside a record: "
          "refused");
    spit(work, orig, (size_t)ends[3] + 5);   /* the journal lost records 5..7 */
    rc = read_journal(work, &marks[5], &s, &dropped, &err);
    stat(work, &sb);
    CHECK(rc == KM_EINPUT && strstr(err.msg, "acknowledged records are missing") &&
          sb.st_size == ends[3] + 5, "a journal cut before the mark: refused, file untouched "
          "(%s)", err.msg);
    /* a stop */
    memset(&s, 0, sizeof s);
    s.stop_at = 3;
    j = km_journal_open(path, hdr, sizeof hdr, NULL, &err);
    rc = j ? km_journal_replay(j, NULL, collect, &s, &dropped, &err) : -1;
    km_journal_mark end = j ? km_journal_end(j) : (km_journal_mark){0, 0, 0};
    CHECK(rc == KM_JOURNAL_STOP && end.records == 3 && end.offset == ends[2],
          "a stop at record 4: replay returns KM_JOURNAL_STOP, the end after record 3");
    km_journal_close(j);
    /* appended after a replay, read back with the rest */
    j = km_journal_open(path, hdr, sizeof hdr, NULL, &err);
    seen s0 = {.stop_at = -1};
    rc = j ? km_journal_replay(j, NULL, collect, &s0, &dropped, &err) : -1;
    rc = rc || km_journal_append(j, recs[0].type, recs[0].body, recs[0].len, &err) ||
         km_journal_commit(j, 0, &err);
    km_journal_close(j);
    rc = rc || read_journal(path, NULL, &s, &dropped, &err);
    CHECK(!rc && s.n == NREC + 1 && same_records(&(seen){.n = 1, .r = {s.r[NREC]}}, 0, 1),
          "a record appended after the replay reads back after the others");

    /* a last record of 6000 bytes over the page boundary at 4096, zero from there on (the
     * crash wrote its first page only): cut off; with a non-zero byte after: refused */
    {
        char big[512];
        path_of(big, sizeof big, "big.jnl");
        unlink(big);
        km_journal *jb = km_journal_open(big, hdr, sizeof hdr, NULL, &err);
        seen s1 = {.stop_at = -1};
        unsigned char body[6000];
        for (size_t i = 0; i < sizeof body; i++)
            body[i] = (unsigned char)(i * 7 + 1);
        int brc = !jb || km_journal_replay(jb, NULL, collect, &s1, &dropped, &err);
        for (int k = 0; k < 3 && !brc; k++)
            brc = km_journal_append(jb, recs[k].type, recs[k].body, recs[k].len, &err);
        brc = brc || km_journal_append(jb, 1, body, sizeof body, &err) ||
              km_journal_commit(jb, 1, &err);
        km_journal_close(jb);
        size_t nb;
        unsigned char *pb = slurp(big, &nb);
        memset(pb + 4096, 0, nb - 4096);
        spit(work, pb, nb);
        rc = read_journal(work, NULL, &s, &dropped, &err);
        stat(work, &sb);
        CHECK(!brc && !rc && same_records(&s, 0, 3) && sb.st_size == ends[2],
              "a 6000-byte last record zero from the page boundary at 4096 on: a torn tail, "
              "cut off (%s)", rc ? err.msg : "");
        pb[nb - 1] = 1;
        spit(work, pb, nb);
        rc = read_journal(work, NULL, &s, &dropped, &err);
        CHECK(rc == KM_EINPUT && strstr(err.msg, "record 4 at byte"), "... with its last byte "
              "not zero: refused (%s)", err.msg);
        free(pb);
    }

    /* version 1: converted on open, kept as .v1; a bad last record refused */
    unsigned char *v1 = malloc(4096);
    size_t n1 = 0;
    memcpy(v1, "KMTKJNL1", 8);
    n1 = 8;
    v1[n1++] = sizeof hdr;
    for (int i = 0; i < 3; i++)
        v1[n1++] = 0;
    memcpy(v1 + n1, hdr, sizeof hdr);
    n1 += sizeof hdr;
    uint32_t c = (uint32_t)crc32(0, (const unsigned char *)hdr, sizeof hdr);
    for (int i = 0; i < 4; i++)
        v1[n1++] = (unsigned char)(c >> (8 * i));
    for (int k = 0; k < NREC; k++) {
        uint32_t l = 1 + (uint32_t)recs[k].len;
        unsigned char pay[65];
        pay[0] = (unsigned char)recs[k].type;
        memcpy(pay + 1, recs[k].body, recs[k].len);
        c = (uint32_t)crc32(0, pay, l);
        for (int i = 0; i < 4; i++)
            v1[n1++] = (unsigned char)(l >> (8 * i));
        for (int i = 0; i < 4; i++)
            v1[n1++] = (unsigned char)(c >> (8 * i));
        memcpy(v1 + n1, pay, l);
        n1 += l;
    }
    char old[600];
    snprintf(old, sizeof old, "%s.v1", work);
    unlink(old);
    spit(work, v1, n1);
    unsigned how = 0;
    memset(&s, 0, sizeof s);
    s.stop_at = -1;
    j = km_journal_open(work, hdr, sizeof hdr, &how, &err);
    rc = j ? km_journal_replay(j, NULL, collect, &s, &dropped, &err) : -1;
    km_journal_close(j);
    size_t nk;
    unsigned char *kept = slurp(old, &nk);
    CHECK(!rc && how == KM_JOURNAL_CONVERTED && same_records(&s, 0, NREC) && kept &&
          nk == n1 && !memcmp(kept, v1, n1), "a version-1 journal: converted, the same %d "
          "records, the original kept as .v1 byte for byte", NREC);
    free(kept);
    rc = read_journal(work, NULL, &s, &dropped, &err);
    unsigned char *conv = slurp(work, &nk);
    CHECK(!rc && same_records(&s, 0, NREC) && conv && !memcmp(conv, "KMTKJNL2", 8),
          "... and reopens as version 2");
    free(conv);
    unlink(old);
    v1[n1 - 1] ^= 0x10;   /* the last record damaged (or torn: version 1 cannot tell) */
    spit(work, v1, n1);
    rc = read_journal(work, NULL, &s, &dropped, &err);
    size_t after;
    unsigned char *same = slurp(work, &after);
    CHECK(rc == KM_EINPUT && strstr(err.msg, "truncate -s") && after == n1 &&
          !memcmp(same, v1, n1) && access(old, F_OK) != 0, "a version-1 journal whose last "
          "record does not verify: refused, untouched, the way to cut it named (%s)", err.msg);
    free(same);
    free(v1);
    free(orig);
}

/* ---- km_mtl_save / km_mtl_load ---- */

typedef struct buf {
    unsigned char *p;
    size_t len, cap;
} buf;

static int to_buf(void *ctx, const void *p, size_t n)
{
    buf *b = ctx;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

#define TD 4
#define TPOOL 30
#define TL 300
#define TM 9

static double tpool[TPOOL][TD];
static struct {
    int64_t task;
    int x;
    double y, w;
} tdata[TL];

static int feed(km_mtl *s, int from, int to)
{
    km_error err;
    for (int a = from; a < to; a++) {
        int32_t ix[TD];
        double v[TD];
        int64_t nz = 0;
        for (int j = 0; j < TD; j++)
            if (tpool[tdata[a].x][j] != 0) {
                ix[nz] = j;
                v[nz++] = tpool[tdata[a].x][j];
            }
        if (km_mtl_update(s, tdata[a].task, ix, v, nz, tdata[a].y, tdata[a].w, &err)) {
            printf("# update: %s\n", err.msg);
            return -1;
        }
    }
    return 0;
}

static int same_state(km_mtl *a, km_mtl *b)
{
    buf x = {0}, y = {0};
    km_error err;
    int ok = !km_mtl_save(a, to_buf, &x, &err) && !km_mtl_save(b, to_buf, &y, &err) &&
             x.len == y.len && !memcmp(x.p, y.p, x.len);
    free(x.p);
    free(y.p);
    /* and what a reader sees: the disclosure and every task's coefficients */
    km_mtl_disclosed da, db;
    ok = ok && !km_mtl_disclose(a, 0, &da, &err) && !km_mtl_disclose(b, 0, &db, &err) &&
         da.n == db.n && !memcmp(da.ybar, db.ybar, (size_t)da.n * sizeof *da.ybar) &&
         !memcmp(da.H, db.H, (size_t)(da.n * da.n) * sizeof *da.H);
    if (ok) {
        km_mtl_disclosed_free(&da);
        km_mtl_disclosed_free(&db);
    }
    for (int64_t t = 0; ok && t < TM; t++) {
        double ca[TL], cb[TL];
        const int64_t *ha, *hb;
        const double *cba, *cbb;
        int64_t la, lb;
        ok = !km_mtl_task_coef(a, t, &ha, ca, &la, &cba, &err) &&
             !km_mtl_task_coef(b, t, &hb, cb, &lb, &cbb, &err) && la == lb &&
             !memcmp(ca, cb, (size_t)la * sizeof *ca) &&
             !memcmp(cba, cbb, (size_t)km_mtl_n(a) * sizeof *cba);
    }
    return ok;
}

static void state_snapshots(void)
{
    km_rng r;
    km_rng_seed(&r, 21);
    for (int i = 0; i < TPOOL; i++)
        for (int j = 0; j < TD; j++)
            tpool[i][j] = unif(&r) < 0.25 ? 0 : 2 * unif(&r) - 1;
    for (int a = 0; a < TL; a++) {
        tdata[a].task = (int64_t)km_rng_below(&r, TM);
        tdata[a].x = unif(&r) < 0.3 ? (int)tdata[a].task : (int)km_rng_below(&r, TPOOL);
        tdata[a].y = 2 * unif(&r) - 1;
        tdata[a].w = 0.5 + unif(&r);
    }
    km_mtl_tkernel tk[] = {{2, {KM_KERNEL_RBF, 0.7, 0, 3, 0}}, {5, {KM_KERNEL_POLY, 1, 1, 2, 0}}};
    struct {
        const char *name;
        km_mtl_param p;
    } cfg[] = {
        {"rbf/linear alpha 0.5", {0.5, 0.5, {KM_KERNEL_RBF, 0.5, 0, 3, 0},
                                  {KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0, NULL}},
        {"expdot/laplacian alpha 0.3, two task kernels",
         {0.3, 0.1, {KM_KERNEL_EXPDOT, 0.5, 0, 3, 0}, {KM_KERNEL_LAPLACIAN, 0.5, 0, 3, 0}, 2, tk}},
        {"linear of rank 4 (pivots dropped) alpha 0.7", {0.7, 1, {KM_KERNEL_LINEAR, 1, 0, 3, 0},
                                                          {KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0,
                                                          NULL}},
        {"alpha 0", {0, 0.5, {KM_KERNEL_RBF, 0.5, 0, 3, 0}, {KM_KERNEL_RBF, 1, 0, 3, 0}, 0, NULL}},
        {"alpha 1", {1, 0.5, {KM_KERNEL_RBF, 0.5, 0, 3, 0}, {KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0, NULL}},
    };
    static const int cuts[] = {0, 1, 17, 64, 100, 129, 250, TL};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        km_error err;
        km_mtl *full = km_mtl_new(&cfg[c].p, &err);
        if (!full || feed(full, 0, TL)) {
            CHECK(0, "%s: the reference state", cfg[c].name);
            km_mtl_free(full);
            continue;
        }
        int all = 1, nc = 0;
        size_t bytes = 0;
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            km_mtl *s = km_mtl_new(&cfg[c].p, &err);
            buf b = {0};
            size_t used = 0;
            feed(s, 0, cuts[k]);
            if (cuts[k] == 100) {   /* a reader in between (H's pending terms on a copy) */
                km_mtl_disclosed d;
                if (!km_mtl_disclose(s, 0, &d, &err))
                    km_mtl_disclosed_free(&d);
            }
            int ok = !km_mtl_save(s, to_buf, &b, &err);
            km_mtl *t = ok ? km_mtl_load(&cfg[c].p, b.p, b.len, &used, &err) : NULL;
            ok = t && used == b.len && km_mtl_version(t) == cuts[k] && same_state(s, t) &&
                 !feed(t, cuts[k], TL) && same_state(full, t);
            if (!ok)
                printf("# %s: cut at %d: %s\n", cfg[c].name, cuts[k], t ? "differs" : err.msg);
            all &= ok;
            nc++;
            bytes = b.len;
            km_mtl_free(t);
            km_mtl_free(s);
            free(b.p);
        }
        CHECK(all, "%s: saved after k of %d triples (%d cuts), loaded and fed the rest: the "
              "same state byte for byte as fed everything (disclosure, every task's c_j and "
              "cbar too); %zu bytes at the end", cfg[c].name, TL, nc, bytes);
        km_mtl_free(full);
    }
    /* other parameters, and a snapshot cut at every length */
    km_error err;
    km_mtl *s = km_mtl_new(&cfg[0].p, &err);
    feed(s, 0, 40);
    buf b = {0};
    km_mtl_save(s, to_buf, &b, &err);
    size_t used;
    km_mtl *t = km_mtl_load(&cfg[1].p, b.p, b.len, &used, &err);
    CHECK(!t && strstr(err.msg, "other parameters"), "loaded with other parameters: %s",
          err.msg);
    km_mtl_free(t);
    int refused = 0;
    for (size_t n = 0; n < b.len; n++) {
        unsigned char *p = malloc(n ? n : 1);   /* exactly n bytes: ASan sees overreads */
        memcpy(p, b.p, n);
        t = km_mtl_load(&cfg[0].p, p, n, &used, &err);
        refused += !t && err.code == KM_EINPUT;
        km_mtl_free(t);
        free(p);
    }
    CHECK(refused == (int)b.len, "a snapshot of 40 triples cut at every length 0..%zu: "
          "refused every time", b.len - 1);
    km_mtl_free(s);
    free(b.p);
}

/* ---- the mtl-server binary ---- */

static pid_t spid = -1;
static int port;

static void cleanup(void)
{
    server_kill(&spid);
    if (getenv("KMTK_KEEP_TMP")) {   /* for a look at the servers' logs */
        fprintf(stderr, "kept %s\n", dir);
        return;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

#define SERVER_PARAMS "-t rbf -g 0.5 --task-kernel linear --alpha 0.5 --lambda 0.5 --features 5"

/* Starts mtl-server on journal `jname` with extra options, stderr to `log`. wait: until it
 * listens (0), or exits (its status). Without wait, returns 0 at once. */
static int start(const char *jname, const char *extra, const char *log, int wait)
{
    char pf[512], cmd[8192];
    path_of(pf, sizeof pf, "port");
    unlink(pf);
    snprintf(cmd, sizeof cmd, "exec '%s' --port 0 --port-file '%s' --secrets '%s/secrets' "
             "--journal '%s/%s' " SERVER_PARAMS " %s 2>'%s/%s'", server_bin, pf, dir, dir,
             jname, extra, dir, log);
    server_spawn(cmd, &spid);
    /* up to 60 s (a sanitizer build replays slowly) */
    return wait ? server_wait_port(pf, &spid, &port, 3000) : 0;
}

/* Sends sig and waits (up to 60 s, then SIGKILL: -1); the exit status. */
static int stop(int sig)
{
    return server_stop(&spid, sig, 3000);
}

static int log_has(const char *log, const char *what)
{
    char p[512];
    path_of(p, sizeof p, log);
    size_t n;
    unsigned char *s = slurp(p, &n);
    int has = s && (s[n] = 0, strstr((char *)s, what) != NULL);
    free(s);
    return has;
}

/* secrets of 16 characters or more (the server's minimum) */
static const char *secret[TM] = {"task-0-secret-000", "task-1-secret-111", "task-2-secret-222",
                                 "task-3-secret-333", "task-4-secret-444", "task-5-secret-555",
                                 "task-6-secret-666", "task-7-secret-777", "task-8-secret-888"};

static int x_of(int k, int32_t *ix, double *v)
{
    int n = 0;
    for (int j = 0; j < TD; j++)
        if (tpool[k][j] != 0) {
            ix[n] = j;
            v[n++] = tpool[k][j];
        }
    return n;
}

static int on_ack(void *ctx, unsigned type, km_rd *r, km_error *err)
{
    (void)ctx;
    km_rd_u64(r);
    km_rd_u32(r);
    return type == KM_MTLP_ACK && !r->bad ? 0 : km_error_set(err, KM_EINPUT, "not an ACK");
}

/* Sends tdata[from..to) in requests of 1-5 triples of one task. */
static int send_range(int from, int to, km_rng *r)
{
    km_error err;
    km_mtlp_conn *c = km_mtlp_connect("127.0.0.1", port, &err);
    if (!c)
        return -1;
    int rc = 0;
    for (int a = from; a < to && !rc;) {
        int64_t task = tdata[a].task;
        int k = 0, lim = 1 + (int)km_rng_below(r, 5);
        km_buf b = {0};
        size_t f = km_buf_begin(&b, KM_MTLP_SEND);
        km_mtlp_put_auth(&b, task, secret[task]);
        km_buf_u64(&b, 0);   /* seq 0: no sequence number (protocol version 2) */
        size_t at = b.len;
        km_buf_u32(&b, 0);
        while (a < to && k < lim && tdata[a].task == task) {
            int32_t ix[TD];
            double v[TD];
            int nz = x_of(tdata[a].x, ix, v);
            km_mtlp_put_triple(&b, tdata[a].y, tdata[a].w, ix, v, nz);
            a++;
            k++;
        }
        for (int i = 0; i < 4; i++)
            b.p[at + i] = (unsigned char)((unsigned)k >> (8 * i));
        km_buf_end(&b, f);
        rc = km_mtlp_call(c, &b, 1, on_ack, NULL, &err);
        km_buf_free(&b);
    }
    km_mtlp_close(c);
    return rc;
}

/* The disclosure and every task's (l_j, triples_j). */
typedef struct view {
    km_mtl_disclosed d;
    uint64_t l[TM], tr[TM];
} view;

static int look(view *v)
{
    km_error err;
    memset(v, 0, sizeof *v);
    km_mtlp_conn *c = km_mtlp_connect("127.0.0.1", port, &err);
    int changed, rc = !c || km_mtlp_get(c, 0, secret[0], &v->d, &changed, &err);
    for (int t = 0; t < TM && !rc; t++) {
        km_mtlp_status st;
        rc = km_mtlp_get_status(c, t, secret[t], &st, &err);
        v->l[t] = st.l;
        v->tr[t] = st.triples;
    }
    if (rc)
        printf("# look: %s\n", err.msg);
    km_mtlp_close(c);
    return rc;
}

static int same_view(const view *a, const view *b)
{
    const km_mtl_disclosed *x = &a->d, *y = &b->d;
    return x->version == y->version && x->n == y->n && x->X->nnz == y->X->nnz &&
           !memcmp(x->X->value, y->X->value, (size_t)x->X->nnz * sizeof *x->X->value) &&
           !memcmp(x->ybar, y->ybar, (size_t)x->n * sizeof *x->ybar) &&
           !memcmp(x->H, y->H, (size_t)(x->n * x->n) * sizeof *x->H) &&
           !memcmp(a->l, b->l, sizeof a->l) && !memcmp(a->tr, b->tr, sizeof a->tr);
}

static void server_snapshots(void)
{
    km_rng r;
    km_rng_seed(&r, 5);
    /* snapshots every 40 triples, kill -9 after 250: the snapshot and the journal after it */
    if (start("j1", "--snapshot-every 40", "log1", 1)) {
        CHECK(0, "server starts");
        return;
    }
    int sent = !send_range(0, 250, &r);
    int killed = stop(SIGKILL) == 128 + SIGKILL;
    char snap[512];
    path_of(snap, sizeof snap, "j1.snap");
    CHECK(sent && killed && access(snap, F_OK) == 0, "250 triples sent with --snapshot-every "
          "40, a snapshot on disk, the server killed (-9)");
    view a, b, c2;
    int up = !start("j1", "", "log2", 1);
    int ok = up && !look(&a);
    CHECK(ok && a.d.version == 250 && log_has("log2", "replayed after the snapshot"),
          "restart: the snapshot loaded, only the journal after it replayed; version %lld",
          (long long)a.d.version);
    CHECK(stop(SIGTERM) == 0 && log_has("log2", "snapshot") , "SIGTERM: exit 0, a snapshot "
          "written at exit");
    up = !start("j1", "", "log3", 1);
    ok = up && !look(&c2);
    CHECK(ok && same_view(&a, &c2) && log_has("log3", "0 replayed after the snapshot"),
          "restart from the snapshot of the exit: nothing to replay, the same bits");
    stop(SIGTERM);
    up = !start("j1", "--snapshot none", "log4", 1);
    ok = up && !look(&b);
    CHECK(ok && same_view(&a, &b), "the whole journal replayed without the snapshot: the same "
          "disclosure (Xbar, ybar, H) and every task's counts, bit for bit, as snapshot + "
          "journal after it");
    stop(SIGTERM);
    km_mtl_disclosed_free(&a.d);
    km_mtl_disclosed_free(&b.d);
    km_mtl_disclosed_free(&c2.d);
    /* a damaged snapshot is ignored (the journal has everything): the same state */
    size_t n;
    unsigned char *p = slurp(snap, &n);
    if (p) {
        p[n / 2] ^= 0x20;
        spit(snap, p, n);
        free(p);
    }
    up = !start("j1", "", "log5", 1);
    ok = up && !look(&a);
    stop(SIGTERM);
    CHECK(ok && a.d.version == 250 && log_has("log5", "checksum mismatch; ignored"),
          "a damaged snapshot: logged, ignored, the whole journal replayed (version %lld)",
          (long long)a.d.version);
    km_mtl_disclosed_free(&a.d);
    /* a snapshot whose journal is gone: refused */
    char jp[512];
    path_of(jp, sizeof jp, "j1");
    char moved[600];
    snprintf(moved, sizeof moved, "%s.moved", jp);
    rename(jp, moved);
    int st = start("j1", "", "log6", 1);
    CHECK(st == 2 && log_has("log6", "a snapshot without its journal"), "a snapshot whose "
          "journal is missing: refused (exit %d), no new journal started", st);
    rename(moved, jp);

    /* every byte of a small server journal flipped: the server refuses to start */
    if (start("j2", "--register", "log7", 1))
        return;
    send_range(0, 6, &r);
    stop(SIGTERM);
    char j2[512];
    path_of(j2, sizeof j2, "j2");
    unsigned char *orig = slurp(j2, &n);
    int refused = 0, said = 0;
    for (size_t at = 0; orig && at < n; at++) {
        orig[at] ^= 0x04;
        spit(j2, orig, n);
        orig[at] ^= 0x04;
        st = start("j2", "--snapshot none", "log8", 1);
        if (st == 0)
            stop(SIGTERM);
        refused += st == 2;
        said += st == 2 && log_has("log8", "refusing to start");
    }
    CHECK(orig && refused == (int)n && said == (int)n, "every byte of a %zu-byte journal "
          "flipped: the server refuses to start, and says so, %d times", n, said);
    free(orig);
}

/* A journal of one long replay written directly: 600 distinct inputs shared by many tasks
 * (each triple costs O(n^2) to apply). */
static int long_journal(const char *name, int records)
{
    char p[512];
    path_of(p, sizeof p, name);
    km_mtl_param prm = {0.5, 0.5, {KM_KERNEL_RBF, 0.5, 0, 3, 0}, {KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0,
                        NULL};
    km_buf h = {0};
    km_mtlp_put_param(&h, &prm, 5);
    km_error err;
    unlink(p);
    km_journal *j = km_journal_open(p, h.p, h.len, NULL, &err);
    int64_t dropped;
    int rc = !j || km_journal_replay(j, NULL, collect, &(seen){.stop_at = -1}, &dropped, &err);
    km_buf_free(&h);
    km_rng r;
    km_rng_seed(&r, 99);
    for (int k = 0; k < records && !rc; k++) {
        km_buf b = {0};
        km_buf_u64(&b, (uint64_t)(k % 5));   /* the task */
        km_buf_u32(&b, 5);
        for (int t = 0; t < 5; t++) {
            int32_t ix[5] = {0, 1, 2, 3, 4};
            double v[5];
            uint64_t x = (uint64_t)(k * 5 + t) % 600;   /* input x: a point of a grid */
            for (int i = 0, d = 1; i < 5; i++, d *= 5)
                v[i] = 0.1 + 0.2 * (double)((x / (uint64_t)d) % 5);
            km_mtlp_put_triple(&b, 2 * unif(&r) - 1, 1, ix, v, 5);
        }
        rc = km_journal_append(j, 1, b.p, b.len, &err);
        km_buf_free(&b);
    }
    rc = rc || km_journal_commit(j, 0, &err);
    if (rc)
        printf("# long journal: %s\n", err.msg);
    km_journal_close(j);
    return rc;
}

static long long stopped_version(const char *log)
{
    char p[512];
    path_of(p, sizeof p, log);
    size_t n;
    unsigned char *s = slurp(p, &n);
    long long v = -1;
    if (s) {
        s[n] = 0;
        const char *at = strstr((char *)s, "stopped by a signal during the replay");
        if (at && (at = strstr(at, "(version ")))
            v = atoll(at + 9);
    }
    free(s);
    return v;
}

static void sigterm_in_replay(void)
{
    if (long_journal("j3", 40000))
        return;
    char pf[512];
    path_of(pf, sizeof pf, "port");
    /* twice: each run stops inside the replay and leaves a snapshot the next goes on from */
    long long v[2] = {-1, -1};
    int ok = 1;
    for (int run = 0; run < 2; run++) {
        const char *log = run ? "log10" : "log9";
        start("j3", "", log, 0);
        for (int k = 0; k < 3000 && !log_has(log, "replaying"); k++)   /* the replay began */
            sleep_ms(20);
        sleep_ms(300);
        int st = stop(SIGTERM);
        v[run] = stopped_version(run ? "log10" : "log9");
        ok &= st == 0 && access(pf, F_OK) != 0 && v[run] > 0;
        if (st != 0 || v[run] <= 0)
            printf("# run %d: exit %d, stopped at version %lld\n", run, st, v[run]);
    }
    CHECK(ok, "SIGTERM during the replay of 200,000 triples: exit 0 before listening "
          "(stopped at version %lld)", v[0]);
    CHECK(ok && v[1] > v[0] && log_has("log9", "snapshot") &&
          log_has("log10", "loaded (version"), "the snapshot written at that stop: the next "
          "start loads it and goes on (stopped again at version %lld)", v[1]);
}

int main(int argc, char **argv)
{
    (void)argc;
    km_blas_threads(1);
    find_server_bin(argv[0], server_bin, sizeof server_bin);
    snprintf(dir, sizeof dir, "/tmp/kmtk-journal-XXXXXX");
    if (!mkdtemp(dir)) {
        printf("FAIL - mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    atexit(cleanup);
    signal(SIGPIPE, SIG_IGN);
    reader_every_byte();
    state_snapshots();
    char p[512];
    path_of(p, sizeof p, "secrets");
    FILE *f = fopen(p, "w");
    for (int t = 0; t < TM; t++)
        fprintf(f, "%d %s\n", t, secret[t]);
    fclose(f);
    for (int a = 0; a < TL; a++)   /* the server takes 5 features */
        tdata[a].x = tdata[a].x % TPOOL;
    fflush(stdout);
    if (!getenv("KMTK_ONLY_SIGTERM")) server_snapshots();
    fflush(stdout);
    sigterm_in_replay();
    TEST_EXIT();
}
