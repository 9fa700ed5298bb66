/* stream.c - see stream.h. Gzip is inflated directly (no gzFile): one input buffer,
 * output straight into the caller's buffer, members chained with inflateReset. */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define KM_STREAM_INBUF (256 * 1024) /* raw (compressed) bytes read per read(2) */

struct km_stream {
    int fd;
    int own_fd;        /* close fd on km_stream_close (not for stdin) */
    int gzip;
    int eof_in;        /* read(2) returned 0 */
    int done;          /* logical end of the data reached */
    int z_ready;       /* z was initialised by inflateInit2 */
    int member_end;    /* the last inflate ended a gzip member */
    unsigned char *in; /* raw bytes [in_pos, in_len) not yet consumed */
    size_t in_pos, in_len;
    z_stream z;
    int64_t bytes;
    char name[];
};

/* Sets err to "NAME: strerror(e)" (KM_EINPUT); returns -1. */
static int io_error(const km_stream *s, int e, km_error *err)
{
    char buf[256];
    km_error_set(err, KM_EINPUT, "%s: %s", s->name, strerror_r(e, buf, sizeof buf));
    return -1;
}

/* read(2) retried on EINTR; returns the count, 0 at end, -1 with err set. */
static ptrdiff_t raw_read(km_stream *s, void *buf, size_t cap, km_error *err)
{
    if (cap > (size_t)SSIZE_MAX)
        cap = (size_t)SSIZE_MAX;
    for (;;) {
        ssize_t n = read(s->fd, buf, cap);
        if (n >= 0) {
            if (n == 0)
                s->eof_in = 1;
            return n;
        }
        if (errno != EINTR)
            return io_error(s, errno, err);
    }
}

/* Appends raw bytes to the input buffer (which must have room); returns as raw_read. */
static ptrdiff_t fill_in(km_stream *s, km_error *err)
{
    ptrdiff_t n = raw_read(s, s->in + s->in_len, KM_STREAM_INBUF - s->in_len, err);
    if (n > 0)
        s->in_len += (size_t)n;
    return n;
}

km_stream *km_stream_open(const char *path, km_error *err)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    size_t len = strlen(name);
    km_stream *s = calloc(1, sizeof *s + len + 1);
    if (!s) {
        km_error_nomem(err, "stream");
        return NULL;
    }
    memcpy(s->name, name, len + 1);
    if (is_stdin) {
        s->fd = 0;
    } else {
        s->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            io_error(s, errno, err);
            free(s);
            return NULL;
        }
        s->own_fd = 1;
    }
    s->in = malloc(KM_STREAM_INBUF);
    if (!s->in) {
        km_error_nomem(err, "stream buffer");
        km_stream_close(s);
        return NULL;
    }
    /* Look at the first two bytes (a pipe may deliver them one at a time). */
    while (s->in_len < 2 && !s->eof_in) {
        if (fill_in(s, err) < 0) {
            km_stream_close(s);
            return NULL;
        }
    }
    if (s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b) {
        s->gzip = 1;
        int rc = inflateInit2(&s->z, 16 + MAX_WBITS); /* gzip wrapper only */
        if (rc != Z_OK) {
            if (rc == Z_MEM_ERROR)
                km_error_nomem(err, "zlib");
            else
                km_error_set(err, KM_EINTERNAL, "%s: zlib initialisation failed", s->name);
            km_stream_close(s);
            return NULL;
        }
        s->z_ready = 1;
    }
    return s;
}

/* Sets the "truncated or corrupt" error for a gzip stream; returns -1. */
static int gz_error(const km_stream *s, const char *why, km_error *err)
{
    km_error_set(err, KM_EINPUT, "%s: gzip stream is truncated or corrupt (%s)", s->name,
                 why);
    return -1;
}

/* Inflates into buf: members follow one another until the raw input ends. */
static ptrdiff_t gz_read(km_stream *s, char *buf, size_t cap, km_error *err)
{
    if (cap > (1u << 30))
        cap = 1u << 30;
    s->z.next_out = (unsigned char *)buf;
    s->z.avail_out = (unsigned)cap;
    while (s->z.avail_out == cap && !s->done) {
        if (s->in_pos == s->in_len && !s->eof_in) {
            s->in_pos = s->in_len = 0;
            if (fill_in(s, err) < 0)
                return -1;
        }
        if (s->in_pos == s->in_len) { /* raw input exhausted */
            if (s->member_end) {
                s->done = 1;
                break;
            }
            return gz_error(s, "unexpected end of file", err);
        }
        if (s->member_end) { /* another member follows */
            if (inflateReset(&s->z) != Z_OK)
                return gz_error(s, "cannot restart inflate", err);
            s->member_end = 0;
        }
        s->z.next_in = s->in + s->in_pos;
        s->z.avail_in = (unsigned)(s->in_len - s->in_pos);
        int rc = inflate(&s->z, Z_NO_FLUSH);
        s->in_pos = s->in_len - s->z.avail_in;
        if (rc == Z_STREAM_END) {
            s->member_end = 1;
        } else if (rc == Z_MEM_ERROR) {
            km_error_nomem(err, "zlib");
            return -1;
        } else if (rc != Z_OK) {
            return gz_error(s, s->z.msg ? s->z.msg : "invalid compressed data", err);
        }
    }
    return (ptrdiff_t)(cap - s->z.avail_out);
}

ptrdiff_t km_stream_read(km_stream *s, char *buf, size_t cap, km_error *err)
{
    ptrdiff_t n;
    if (s->gzip) {
        n = gz_read(s, buf, cap, err);
    } else if (s->in_pos < s->in_len) { /* bytes read while sniffing for gzip */
        size_t k = s->in_len - s->in_pos;
        n = (ptrdiff_t)(k < cap ? k : cap);
        memcpy(buf, s->in + s->in_pos, (size_t)n);
        s->in_pos += (size_t)n;
    } else {
        n = s->eof_in ? 0 : raw_read(s, buf, cap, err);
    }
    if (n > 0)
        s->bytes += n;
    return n;
}

const char *km_stream_name(const km_stream *s)
{
    return s->name;
}

int km_stream_is_gzip(const km_stream *s)
{
    return s->gzip;
}

int64_t km_stream_bytes(const km_stream *s)
{
    return s->bytes;
}

void km_stream_close(km_stream *s)
{
    if (!s)
        return;
    if (s->z_ready)
        inflateEnd(&s->z);
    if (s->own_fd)
        close(s->fd);
    free(s->in);
    free(s);
}
