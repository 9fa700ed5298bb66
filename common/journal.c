/* journal.c - see journal.h. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAGIC1 "KMTKJNL1"
#define MAGIC2 "KMTKJNL2"
#define HEAD2 32   /* magic, header length, id, CRC: the fixed part of a version-2 header */

struct km_journal {
    char *path;
    int fd;
    off_t size;          /* bytes in the file (valid after replay) */
    off_t head;          /* bytes of the header: the first record starts here */
    int replayed;
    int64_t records;
    uint32_t last_crc;   /* the stored CRC of the last record (0: none) */
    unsigned char id[KM_JOURNAL_ID];
    unsigned char *q;    /* queued records */
    size_t qlen, qcap;
    int64_t qrecords;
    uint32_t qlast_crc;
};

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t crc(const void *p, size_t n)
{
    uLong c = crc32(0L, Z_NULL, 0);
    const unsigned char *b = p;
    while (n) {   /* zlib takes uInt lengths */
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, b, k);
        b += k;
        n -= k;
    }
    return (uint32_t)c;
}

/* The check of a record header: CRC-32 of its length bytes and its record number. */
static uint32_t head_crc(uint32_t len, int64_t number)
{
    unsigned char b[12];
    put32(b, len);
    put32(b + 4, (uint32_t)(uint64_t)number);
    put32(b + 8, (uint32_t)((uint64_t)number >> 32));
    return crc(b, sizeof b);
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads n bytes at offset off; 0, or -1 with errno (EIO for a short read). */
static int read_at(int fd, unsigned char *p, size_t n, off_t off)
{
    while (n) {
        ssize_t k = pread(fd, p, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return -1;
        }
        p += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

/* fsync of the directory holding path (a new name in it must survive a power loss). */
static int sync_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return -1;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

void km_journal_close(km_journal *j)
{
    if (!j)
        return;
    if (j->fd >= 0)
        close(j->fd);   /* releases the flock */
    free(j->path);
    free(j->q);
    free(j);
}

/* ---- a buffered reader over the file (records one after another, few system calls) ---- */

typedef struct rdbuf {
    int fd;
    unsigned char *p;
    size_t cap;
    off_t start;   /* file offset of p[0] */
    size_t len;    /* bytes held */
} rdbuf;

/* Makes bytes [at, at + n) available (the caller knows they are in the file); a pointer to
 * them, or NULL (errno set). */
static const unsigned char *rd_get(rdbuf *b, off_t at, size_t n)
{
    if (at >= b->start && at + (off_t)n <= b->start + (off_t)b->len)
        return b->p + (at - b->start);
    size_t want = n > (1u << 20) ? n : (1u << 20);
    if (want > b->cap) {
        unsigned char *q = realloc(b->p, want);
        if (!q) {
            errno = ENOMEM;
            return NULL;
        }
        b->p = q;
        b->cap = want;
    }
    /* read as much as fits from at on (a short read at the end of the file is fine) */
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(b->fd, b->p + got, b->cap - got, at + (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            b->len = 0;
            return NULL;
        }
        got += (size_t)k;
    }
    b->start = at;
    b->len = got;
    return b->p;
}

/* 1 when the file holds only zero bytes from at to size. */
static int zeros_to_end(rdbuf *b, off_t at, off_t size)
{
    while (at < size) {
        size_t n = size - at > (1 << 16) ? (1 << 16) : (size_t)(size - at);
        const unsigned char *p = rd_get(b, at, n);
        if (!p)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (p[i])
                return 0;
        at += (off_t)n;
    }
    return 1;
}

/* 1 when a record starting at `at` and ending at `end` (as far as is known) was cut by a
 * crash into written bytes and zeros: the file zero from the first page boundary after at
 * (inside the record) to its end, at least 12 bytes of zeros (the size of a record's frame:
 * a flipped byte in a last record that happens to end in zero bytes is not taken for this). */
static int zero_pages_to_end(rdbuf *b, off_t at, off_t end, off_t size)
{
    off_t z = (at / 4096 + 1) * 4096;
    return z < end && size - z >= 12 && zeros_to_end(b, z, size);
}

/* ---- creating, converting and opening ---- */

/* The version-2 header of a journal with id and hdr, in a new malloc'ed buffer. */
static unsigned char *header2(const unsigned char *id, const void *hdr, size_t hdrlen,
                              size_t *len)
{
    unsigned char *p = malloc(HEAD2 + hdrlen + 4);
    if (!p)
        return NULL;
    memcpy(p, MAGIC2, 8);
    put32(p + 8, (uint32_t)hdrlen);
    memcpy(p + 12, id, KM_JOURNAL_ID);
    put32(p + 28, crc(p, 28));
    memcpy(p + HEAD2, hdr, hdrlen);
    put32(p + HEAD2 + hdrlen, crc(hdr, hdrlen));
    *len = HEAD2 + hdrlen + 4;
    return p;
}

static int new_id(unsigned char *id)
{
    size_t got = 0;
    while (got < KM_JOURNAL_ID) {
        ssize_t k = getrandom(id + got, KM_JOURNAL_ID - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

/* A new temporary file beside path (O_EXCL), locked; fd or -1 with err set. *tmp malloc'ed. */
static int temp_beside(const char *path, const char *what, char **tmp, km_error *err)
{
    size_t size = strlen(path) + 48;
    *tmp = malloc(size);
    if (!*tmp) {
        km_error_nomem(err, "journal");
        return -1;
    }
    int fd = -1;
    for (unsigned k = 0; fd < 0 && k < 100; k++) {
        snprintf(*tmp, size, "%s.%s%ld.%u", path, what, (long)getpid(), k);
        fd = open(*tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
        km_error_set(err, KM_EINPUT, "%s: cannot create %s: %s", path, *tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(*tmp);
        }
        free(*tmp);
        *tmp = NULL;
        return -1;
    }
    return fd;
}

/* Creates path with a fresh header: written to a temporary file, synced, locked and linked
 * to path (never replacing a file). The locked fd, -1 with err set, or -2 when path came
 * into existence meanwhile. */
static int create_journal(const char *path, const void *hdr, size_t hdrlen, km_error *err)
{
    unsigned char id[KM_JOURNAL_ID];
    if (new_id(id))
        return km_error_set(err, KM_EINPUT, "%s: no random bytes for the journal id: %s",
                            path, strerror(errno)), -1;
    size_t len;
    unsigned char *h = header2(id, hdr, hdrlen, &len);
    if (!h)
        return km_error_nomem(err, "journal"), -1;
    char *tmp;
    int fd = temp_beside(path, "new", &tmp, err);
    if (fd < 0) {
        free(h);
        return -1;
    }
    int rc = 0;
    if (write_all(fd, h, len) || fsync(fd) != 0) {
        km_error_set(err, KM_EINPUT, "%s: cannot write %s: %s", path, tmp, strerror(errno));
        rc = -1;
    } else if (link(tmp, path) != 0) {
        if (errno == EEXIST)
            rc = -2;
        else
            km_error_set(err, KM_EINPUT, "%s: cannot create: %s", path, strerror(errno)),
                rc = -1;
    } else if (sync_dir(path) != 0) {
        km_error_set(err, KM_EINPUT, "%s: cannot sync its directory: %s", path, strerror(errno));
        rc = -1;
    }
    unlink(tmp);
    free(tmp);
    free(h);
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

/* Converts the version-1 journal open (and locked) on *fd: every record verified, written as
 * version 2 to a temporary file that replaces path (the original kept as PATH.v1); *fd then
 * the new file, locked. */
static int convert_v1(km_journal *j, const void *hdr, size_t hdrlen, off_t size, km_error *err)
{
    const char *path = j->path;
    rdbuf b = {j->fd, NULL, 0, 0, 0};
    int rc = KM_OK, tfd = -1;
    char *tmp = NULL, *old = NULL;
    unsigned char *h = NULL;
    const unsigned char *p;
    if (size < 12 || !(p = rd_get(&b, 0, 12)))
        rc = km_error_set(err, KM_EINPUT, "%s: version-1 header cut short (%lld bytes); the "
                          "journal is damaged; refusing to start", path, (long long)size);
    uint32_t h1 = rc ? 0 : le32(p + 8);
    off_t at = 12 + (off_t)h1 + 4;
    if (!rc && at > size)
        rc = km_error_set(err, KM_EINPUT, "%s: version-1 header of %lu bytes in a file of "
                          "%lld; the journal is damaged; refusing to start", path,
                          (unsigned long)h1, (long long)size);
    if (!rc && !(p = rd_get(&b, 0, (size_t)at)))
        rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    if (!rc && le32(p + at - 4) != crc(p + 12, h1))
        rc = km_error_set(err, KM_EINPUT, "%s: version-1 header checksum mismatch; the journal "
                          "is damaged; refusing to start", path);
    if (!rc && (h1 != hdrlen || memcmp(p + 12, hdr, hdrlen)))
        rc = km_error_set(err, KM_EINPUT, "%s: written with other parameters (alpha, lambda, "
                          "kernels or features): start with those or another journal", path);
    unsigned char id[KM_JOURNAL_ID];
    size_t hlen = 0;
    if (!rc && (new_id(id) || !(h = header2(id, hdr, hdrlen, &hlen))))
        rc = km_error_set(err, KM_EINPUT, "%s: cannot start the conversion: %s", path,
                          strerror(errno));
    if (!rc && (tfd = temp_beside(path, "v2-", &tmp, err)) < 0)
        rc = KM_EINPUT;
    if (!rc && write_all(tfd, h, hlen))
        rc = km_error_set(err, KM_EINPUT, "%s: %s", tmp, strerror(errno));
    unsigned char *out = NULL;
    size_t olen = 0, ocap = 0;
    for (int64_t rec = 0; !rc && at < size; rec++) {
        off_t left = size - at;
        const char *why = NULL;
        uint32_t len = 0;
        if (left < 8)
            why = "a record header cut short";
        else if (!(p = rd_get(&b, at, 8)))
            rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
        else if ((len = le32(p)) < 1 || (off_t)len > left - 8)
            why = "its length does not fit the file";
        uint32_t stored = 0;
        if (!rc && !why) {
            if (!(p = rd_get(&b, at, 8 + (size_t)len)))
                rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
            else if ((stored = le32(p + 4)) != crc(p + 8, len))
                why = "checksum mismatch";
        }
        if (!rc && why)
            rc = km_error_set(err, KM_EINPUT, "%s: version-1 record %lld at byte %lld: %s; "
                              "version 1 cannot tell a torn last record from damage (if the "
                              "server was killed while writing this last record, cut it with "
                              "'truncate -s %lld' and start again); refusing to start", path,
                              (long long)rec + 1, (long long)at, why, (long long)at);
        if (rc)
            break;
        if (olen + 12 + len > ocap || !out) {
            size_t cap = ocap ? ocap : (1u << 20);
            while (cap < olen + 12 + len)
                cap *= 2;
            unsigned char *q = realloc(out, cap);
            if (!q) {
                rc = km_error_nomem(err, "journal conversion");
                break;
            }
            out = q;
            ocap = cap;
        }
        put32(out + olen, len);
        put32(out + olen + 4, head_crc(len, rec));
        memcpy(out + olen + 8, p + 8, len);
        put32(out + olen + 8 + len, stored);
        olen += 12 + (size_t)len;
        at += 8 + (off_t)len;
        if (olen >= (1u << 20) || at >= size) {
            if (write_all(tfd, out, olen))
                rc = km_error_set(err, KM_EINPUT, "%s: %s", tmp, strerror(errno));
            olen = 0;
        }
    }
    free(out);
    free(b.p);
    free(h);
    size_t osize = strlen(path) + 4;
    if (!rc && !(old = malloc(osize)))
        rc = km_error_nomem(err, "journal");
    if (!rc)
        snprintf(old, osize, "%s.v1", path);
    if (!rc && fsync(tfd) != 0)
        rc = km_error_set(err, KM_EINPUT, "%s: %s", tmp, strerror(errno));
    if (!rc && link(path, old) != 0)
        rc = km_error_set(err, KM_EINPUT, "%s: cannot keep the version-1 journal as %s: %s%s",
                          path, old, strerror(errno), errno == EEXIST ? " (move it away)" : "");
    if (!rc && rename(tmp, path) != 0)
        rc = km_error_set(err, KM_EINPUT, "%s: cannot replace it by its conversion: %s", path,
                          strerror(errno));
    if (!rc && sync_dir(path) != 0)
        rc = km_error_set(err, KM_EINPUT, "%s: cannot sync its directory: %s", path,
                          strerror(errno));
    if (rc && tmp)
        unlink(tmp);
    free(tmp);
    free(old);
    if (rc) {
        if (tfd >= 0)
            close(tfd);
        return rc;
    }
    close(j->fd);   /* the old file, now PATH.v1 */
    j->fd = tfd;
    return KM_OK;
}

/* Reads and checks the version-2 header on j->fd; sets j->head and j->id. */
static int read_header2(km_journal *j, const void *hdr, size_t hdrlen, off_t size,
                        km_error *err)
{
    const char *path = j->path;
    unsigned char f[HEAD2];
    if (size < HEAD2)
        return km_error_set(err, KM_EINPUT, "%s: header cut short (%lld bytes); the journal is "
                            "damaged; refusing to start", path, (long long)size);
    if (read_at(j->fd, f, HEAD2, 0))
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    if (le32(f + 28) != crc(f, 28))
        return km_error_set(err, KM_EINPUT, "%s: header checksum mismatch (bytes 0-31); the "
                            "journal is damaged; refusing to start", path);
    uint32_t h = le32(f + 8);
    if ((off_t)HEAD2 + (off_t)h + 4 > size)
        return km_error_set(err, KM_EINPUT, "%s: header of %lu bytes in a file of %lld; the "
                            "journal is damaged; refusing to start", path, (unsigned long)h,
                            (long long)size);
    unsigned char *p = malloc((size_t)h + 4);
    if (!p)
        return km_error_nomem(err, "journal header");
    int rc = KM_OK;
    if (read_at(j->fd, p, (size_t)h + 4, HEAD2))
        rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    else if (le32(p + h) != crc(p, h))
        rc = km_error_set(err, KM_EINPUT, "%s: header checksum mismatch (the parameters); the "
                          "journal is damaged; refusing to start", path);
    else if (h != hdrlen || memcmp(p, hdr, hdrlen))
        rc = km_error_set(err, KM_EINPUT, "%s: written with other parameters (alpha, lambda, "
                          "kernels or features): start with those or another journal", path);
    free(p);
    memcpy(j->id, f + 12, KM_JOURNAL_ID);
    j->head = (off_t)HEAD2 + (off_t)h + 4;
    return rc;
}

km_journal *km_journal_open(const char *path, const void *hdr, size_t hdrlen, unsigned *how,
                            km_error *err)
{
    if (how)
        *how = 0;
    km_journal *j = calloc(1, sizeof *j);
    if (!j || !(j->path = strdup(path))) {
        free(j);
        km_error_nomem(err, "journal");
        return NULL;
    }
    j->fd = -1;
    if (hdrlen > UINT32_MAX - HEAD2 - 4) {
        km_error_set(err, KM_EINPUT, "%s: header too long", path);
        km_journal_close(j);
        return NULL;
    }
    /* open and lock the file that is at path (a converter may rename a new one there) */
    int rc = KM_OK;
    struct stat sb, sp;
    for (int tries = 0;; tries++) {
        if (tries == 20) {
            rc = km_error_set(err, KM_EINPUT, "%s: keeps changing while being opened", path);
            break;
        }
        j->fd = open(path, O_RDWR | O_CLOEXEC);
        if (j->fd < 0 && errno == ENOENT) {
            int fd = create_journal(path, hdr, hdrlen, err);
            if (fd == -1) {
                rc = err ? err->code : KM_EINPUT;
                break;
            }
            if (fd == -2)
                continue;   /* someone else created it: open theirs */
            j->fd = fd;
            if (how)
                *how = KM_JOURNAL_CREATED;
            break;
        }
        if (j->fd < 0) {
            rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
            break;
        }
        if (flock(j->fd, LOCK_EX | LOCK_NB) != 0) {
            rc = errno == EWOULDBLOCK
                     ? km_error_set(err, KM_EINPUT, "%s: locked by another process (another "
                                    "mtl-server on this journal?); refusing to start", path)
                     : km_error_set(err, KM_EINPUT, "%s: cannot lock: %s", path,
                                    strerror(errno));
            break;
        }
        if (fstat(j->fd, &sb) == 0 && stat(path, &sp) == 0 && sb.st_ino == sp.st_ino &&
            sb.st_dev == sp.st_dev)
            break;
        close(j->fd);
        j->fd = -1;
    }
    if (!rc && fstat(j->fd, &sb) != 0)
        rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    if (!rc && !S_ISREG(sb.st_mode))
        rc = km_error_set(err, KM_EINPUT, "%s: not a regular file", path);
    off_t size = rc ? 0 : sb.st_size;
    unsigned char magic[8] = {0};
    if (!rc && size == 0)
        rc = km_error_set(err, KM_EINPUT, "%s: an empty file, not a journal (a journal is "
                          "created where no file is: remove it to start a new one); refusing "
                          "to start", path);
    if (!rc && (size < 8 || read_at(j->fd, magic, 8, 0) ||
                (memcmp(magic, MAGIC1, 8) && memcmp(magic, MAGIC2, 8))))
        rc = km_error_set(err, KM_EINPUT, "%s: not a kmtk mtl journal (or its first bytes are "
                          "damaged); refusing to start", path);
    if (!rc && !memcmp(magic, MAGIC1, 8)) {
        rc = convert_v1(j, hdr, hdrlen, size, err);
        if (!rc && fstat(j->fd, &sb) != 0)
            rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
        size = sb.st_size;
        if (!rc && how)
            *how = KM_JOURNAL_CONVERTED;
    }
    if (!rc)
        rc = read_header2(j, hdr, hdrlen, size, err);
    if (rc) {
        km_journal_close(j);
        return NULL;
    }
    j->size = j->head;
    return j;
}

/* ---- replay ---- */

int km_journal_replay(km_journal *j, const km_journal_mark *from, km_journal_replay_fn fn,
                      void *ctx, int64_t *dropped, km_error *err)
{
    const char *path = j->path;
    *dropped = 0;
    struct stat sb;
    if (fstat(j->fd, &sb) != 0)
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    off_t size = sb.st_size, at = j->head;
    rdbuf b = {j->fd, NULL, 0, 0, 0};
    int64_t rec = 0;
    uint32_t last = 0;
    int rc = KM_OK, reached = !from;
    while (!rc) {
        if (!reached && at == from->offset) {
            if (rec != from->records || last != from->crc) {
                rc = km_error_set(err, KM_EINPUT, "%s: record %lld ends at byte %lld, where the "
                                  "snapshot expects record %lld (CRC %08lx, found %08lx): "
                                  "the snapshot does not match the journal", path,
                                  (long long)rec, (long long)at, (long long)from->records,
                                  (unsigned long)from->crc, (unsigned long)last);
                break;
            }
            reached = 1;
        } else if (!reached && at > from->offset) {
            rc = km_error_set(err, KM_EINPUT, "%s: no record ends at byte %lld, where the "
                              "snapshot was taken (record %lld): the snapshot does not match "
                              "the journal", path, (long long)from->offset,
                              (long long)from->records);
            break;
        }
        if (at >= size)
            break;
        off_t left = size - at;
        const char *torn = NULL;
        const unsigned char *p = NULL;
        uint32_t len = 0;
        if (left < 8) {
            torn = "a record header cut short";
        } else if (!(p = rd_get(&b, at, 8))) {
            rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
            break;
        } else if (le32(p + 4) != head_crc(len = le32(p), rec)) {
            if (zeros_to_end(&b, at, size) || zero_pages_to_end(&b, at, at + 8, size)) {
                torn = "zero bytes to the end of the file";
            } else {
                rc = km_error_set(err, KM_EINPUT, "%s: record %lld at byte %lld: header checksum "
                                  "mismatch (its length reads %lu, %lld bytes follow); the "
                                  "journal is damaged; refusing to start", path,
                                  (long long)rec + 1, (long long)at, (unsigned long)len,
                                  (long long)left);
                break;
            }
        } else if (len < 1) {
            rc = km_error_set(err, KM_EINPUT, "%s: record %lld at byte %lld: empty record; the "
                              "journal is damaged; refusing to start", path,
                              (long long)rec + 1, (long long)at);
            break;
        } else if ((off_t)len + 4 > left - 8) {
            torn = "the last record cut short";
        }
        if (torn) {   /* the tail of an interrupted append */
            if (!reached) {
                rc = km_error_set(err, KM_EINPUT, "%s: ends at record %lld (byte %lld: %s) but "
                                  "the snapshot was taken at record %lld (byte %lld): "
                                  "acknowledged records are missing; refusing to start", path,
                                  (long long)rec, (long long)at, torn,
                                  (long long)from->records, (long long)from->offset);
                break;
            }
            if (ftruncate(j->fd, at) != 0 || fsync(j->fd) != 0) {
                rc = km_error_set(err, KM_EINPUT, "%s: cannot cut the torn last record: %s",
                                  path, strerror(errno));
                break;
            }
            *dropped = (int64_t)left;
            size = at;
            break;
        }
        if (!(p = rd_get(&b, at, 8 + (size_t)len + 4))) {
            rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
            break;
        }
        uint32_t stored = le32(p + 8 + len);
        unsigned type = p[8];
        int good = stored == crc(p + 8, len);
        if (!good && zero_pages_to_end(&b, at, at + 12 + len, size)) {   /* p invalid now */
            if (!reached) {
                rc = km_error_set(err, KM_EINPUT, "%s: ends at record %lld (byte %lld: zero "
                                  "bytes to the end) but the snapshot was taken at record %lld "
                                  "(byte %lld): acknowledged records are missing; refusing to "
                                  "start", path, (long long)rec, (long long)at,
                                  (long long)from->records, (long long)from->offset);
            } else if (ftruncate(j->fd, at) != 0 || fsync(j->fd) != 0) {
                rc = km_error_set(err, KM_EINPUT, "%s: cannot cut the torn last record: %s",
                                  path, strerror(errno));
            } else {
                *dropped = (int64_t)(size - at);
                size = at;
            }
            break;
        }
        if (!good) {
            rc = km_error_set(err, KM_EINPUT, "%s: record %lld at byte %lld: checksum mismatch "
                              "(type %u, %lu bytes); the journal is damaged; refusing to start",
                              path, (long long)rec + 1, (long long)at, type,
                              (unsigned long)len);
            break;
        }
        if (reached) {
            int frc = fn(ctx, p[8], p + 9, (size_t)len - 1, err);
            if (frc == KM_JOURNAL_STOP) {
                rc = frc;
                break;
            }
            if (frc) {
                char m[sizeof err->msg];
                snprintf(m, sizeof m, "%s", err ? err->msg : "");
                rc = km_error_set(err, frc, "%s: record %lld at byte %lld: %s", path,
                                  (long long)rec + 1, (long long)at, m);
                break;
            }
        }
        rec++;
        last = stored;
        at += 8 + (off_t)len + 4;
        j->records = rec;
        j->last_crc = last;
        j->size = at;
    }
    free(b.p);
    if (!rc) {
        j->records = rec;
        j->last_crc = last;
        j->size = size;
        j->replayed = 1;
    }
    return rc;
}

const unsigned char *km_journal_id(const km_journal *j)
{
    return j->id;
}

km_journal_mark km_journal_end(const km_journal *j)
{
    km_journal_mark m = {(int64_t)j->size, j->records, j->last_crc};
    return m;
}

/* ---- appending ---- */

int km_journal_append2(km_journal *j, unsigned type, const void *a, size_t alen,
                       const void *b, size_t blen, km_error *err)
{
    size_t len = 1 + alen + blen;
    if (len > UINT32_MAX - 16)
        return km_error_set(err, KM_EINPUT, "%s: record of %zu bytes too long", j->path, len);
    if (j->qlen + 12 + len > j->qcap) {
        size_t cap = j->qcap ? j->qcap : 4096;
        while (cap < j->qlen + 12 + len)
            cap *= 2;
        unsigned char *q = realloc(j->q, cap);
        if (!q)
            return km_error_nomem(err, "journal");
        j->q = q;
        j->qcap = cap;
    }
    unsigned char *r = j->q + j->qlen;
    put32(r, (uint32_t)len);
    put32(r + 4, head_crc((uint32_t)len, j->records + j->qrecords));
    r[8] = (unsigned char)type;
    if (alen)
        memcpy(r + 9, a, alen);
    if (blen)
        memcpy(r + 9 + alen, b, blen);
    j->qlast_crc = crc(r + 8, len);
    put32(r + 8 + len, j->qlast_crc);
    j->qlen += 12 + len;
    j->qrecords++;
    return KM_OK;
}

int km_journal_append(km_journal *j, unsigned type, const void *body, size_t len,
                      km_error *err)
{
    return km_journal_append2(j, type, body, len, NULL, 0, err);
}

int km_journal_commit(km_journal *j, int sync, km_error *err)
{
    if (!j->qlen)
        return KM_OK;
    int rc = KM_OK;
    if (!j->replayed) {
        rc = km_error_set(err, KM_EINTERNAL, "%s: append before replay", j->path);
    } else if (lseek(j->fd, j->size, SEEK_SET) < 0 || write_all(j->fd, j->q, j->qlen) ||
               (sync && fdatasync(j->fd) != 0)) {
        rc = km_error_set(err, KM_EINPUT, "%s: cannot append: %s", j->path, strerror(errno));
        if (ftruncate(j->fd, j->size) != 0)
            km_error_set(err, KM_EINPUT, "%s: cannot append (%s) nor cut back", j->path,
                         strerror(errno));
    } else {
        j->size += (off_t)j->qlen;
        j->records += j->qrecords;
        j->last_crc = j->qlast_crc;
    }
    j->qlen = 0;
    j->qrecords = 0;
    return rc;
}

int km_journal_sync(km_journal *j, km_error *err)
{
    if (fdatasync(j->fd) != 0)
        return km_error_set(err, KM_EINPUT, "%s: cannot sync: %s", j->path, strerror(errno));
    return KM_OK;
}

void km_journal_discard(km_journal *j)
{
    j->qlen = 0;
    j->qrecords = 0;
}

int64_t km_journal_records(const km_journal *j)
{
    return j->records;
}
