/* journal.c - see journal.h. */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAGIC "KMTKJNL1"

struct km_journal {
    char *path;
    int fd;
    off_t size;          /* bytes in the file */
    int64_t records;
    unsigned char *q;    /* queued records */
    size_t qlen, qcap;
    int64_t qrecords;
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

void km_journal_close(km_journal *j)
{
    if (!j)
        return;
    if (j->fd >= 0)
        close(j->fd);
    free(j->path);
    free(j->q);
    free(j);
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

km_journal *km_journal_open(const char *path, const void *hdr, size_t hdrlen,
                            km_journal_replay replay, void *ctx, int64_t *dropped,
                            km_error *err)
{
    *dropped = 0;
    km_journal *j = calloc(1, sizeof *j);
    if (!j || !(j->path = strdup(path))) {
        free(j);
        km_error_nomem(err, "journal");
        return NULL;
    }
    j->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    struct stat sb;
    if (j->fd < 0 || fstat(j->fd, &sb) != 0) {
        km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
        km_journal_close(j);
        return NULL;
    }
    size_t size = (size_t)sb.st_size, head = 8 + 4 + hdrlen + 4;
    size_t pcap = head > 4096 ? head : 4096;
    unsigned char *p = malloc(pcap);   /* the header, then one record at a time */
    if (!p) {
        km_error_nomem(err, "journal");
        km_journal_close(j);
        return NULL;
    }
    int rc = KM_OK;
    size_t stored = head;   /* the file's header, which may be longer or shorter than hdr */
    if (size >= 12 && !read_at(j->fd, p, 12, 0) && !memcmp(p, MAGIC, 8))
        stored = 8 + 4 + (size_t)le32(p + 8) + 4;
    if (stored > pcap && size >= stored) {
        unsigned char *q = realloc(p, stored);
        if (!q) {
            free(p);
            km_error_nomem(err, "journal");
            km_journal_close(j);
            return NULL;
        }
        p = q;
        pcap = stored;
    }
    if (size < stored) {
        /* new, or a header torn before anything could be acknowledged: start over */
        memcpy(p, MAGIC, 8);
        put32(p + 8, (uint32_t)hdrlen);
        memcpy(p + 12, hdr, hdrlen);
        put32(p + 12 + hdrlen, crc(hdr, hdrlen));
        *dropped = (int64_t)size;
        if (ftruncate(j->fd, 0) != 0 || write_all(j->fd, p, head) || fsync(j->fd) != 0)
            rc = km_error_set(err, KM_EINPUT, "%s: cannot write: %s", path, strerror(errno));
        j->size = (off_t)head;
    } else if (read_at(j->fd, p, stored, 0)) {
        rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    } else if (memcmp(p, MAGIC, 8) || le32(p + stored - 4) != crc(p + 12, stored - 16)) {
        rc = km_error_set(err, KM_EINPUT, "%s: not a kmtk mtl journal (or its header is "
                          "damaged)", path);
    } else if (stored != head || memcmp(p + 12, hdr, hdrlen)) {
        rc = km_error_set(err, KM_EINPUT, "%s: written with other parameters (alpha, lambda, "
                          "kernels or features): start with those or another journal", path);
    } else {   /* records, one at a time: memory for the longest only */
        size_t at = head;
        while (!rc && at < size) {
            size_t left = size - at;
            unsigned char h8[8];
            uint32_t len = 0;
            if (left >= 8 && read_at(j->fd, h8, 8, (off_t)at)) {
                rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
                break;
            }
            if (left >= 8)
                len = le32(h8);
            int whole = left >= 8 && len >= 1 && len <= left - 8;
            if (whole && len > pcap) {
                unsigned char *q = realloc(p, len);
                if (!q) {
                    rc = km_error_nomem(err, "journal record");
                    break;
                }
                p = q;
                pcap = len;
            }
            if (whole && read_at(j->fd, p, len, (off_t)(at + 8))) {
                rc = km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
                break;
            }
            if (whole && le32(h8 + 4) == crc(p, len)) {
                rc = replay(ctx, p[0], p + 1, len - 1, err);
                j->records++;
                at += 8 + (size_t)len;
            } else if (!whole || at + 8 + len == size) {
                *dropped = (int64_t)left;   /* torn last record */
                if (ftruncate(j->fd, (off_t)at) != 0 || fsync(j->fd) != 0)
                    rc = km_error_set(err, KM_EINPUT, "%s: cannot cut the torn last record: "
                                      "%s", path, strerror(errno));
                size = at;
            } else {
                rc = km_error_set(err, KM_EINPUT, "%s: damaged record at byte %zu (%zu bytes "
                                  "follow it)", path, at, left);
            }
        }
        j->size = (off_t)size;
    }
    free(p);
    if (rc) {
        km_journal_close(j);
        return NULL;
    }
    return j;
}

int km_journal_append2(km_journal *j, unsigned type, const void *a, size_t alen,
                       const void *b, size_t blen, km_error *err)
{
    size_t len = 1 + alen + blen;
    if (len > UINT32_MAX)
        return km_error_set(err, KM_EINPUT, "%s: record of %zu bytes too long", j->path, len);
    if (j->qlen + 8 + len > j->qcap) {
        size_t cap = j->qcap ? j->qcap : 4096;
        while (cap < j->qlen + 8 + len)
            cap *= 2;
        unsigned char *q = realloc(j->q, cap);
        if (!q)
            return km_error_nomem(err, "journal");
        j->q = q;
        j->qcap = cap;
    }
    unsigned char *r = j->q + j->qlen;
    put32(r, (uint32_t)len);
    r[8] = (unsigned char)type;
    if (alen)
        memcpy(r + 9, a, alen);
    if (blen)
        memcpy(r + 9 + alen, b, blen);
    put32(r + 4, crc(r + 8, len));
    j->qlen += 8 + len;
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
    if (lseek(j->fd, j->size, SEEK_SET) < 0 ||
        write_all(j->fd, j->q, j->qlen) || (sync && fdatasync(j->fd) != 0)) {
        rc = km_error_set(err, KM_EINPUT, "%s: cannot append: %s", j->path, strerror(errno));
        if (ftruncate(j->fd, j->size) != 0)
            km_error_set(err, KM_EINPUT, "%s: cannot append (%s) nor cut back", j->path,
                         strerror(errno));
    } else {
        j->size += (off_t)j->qlen;
        j->records += j->qrecords;
    }
    j->qlen = 0;
    j->qrecords = 0;
    return rc;
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
