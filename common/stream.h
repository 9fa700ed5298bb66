/* stream.h - bytes in: a plain file, a gzip file (zlib, detected by content) or standard
 * input ("-"), read once from front to back so pipes work. */
#ifndef KM_STREAM_H
#define KM_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct km_stream km_stream;

/* Opens path ("-" = standard input, which is not closed by km_stream_close). Gzip is
 * recognised by its magic bytes 1f 8b; concatenated members are read as one stream.
 * NULL + err ("FILE: strerror" or out of memory) on failure. */
km_stream *km_stream_open(const char *path, km_error *err);

/* Reads up to cap (> 0) uncompressed bytes into buf. Returns the count (> 0), 0 at the
 * end of the input, or -1 with err set (KM_EINPUT: I/O error, truncated or corrupt
 * gzip; KM_EINTERNAL: out of memory). */
ptrdiff_t km_stream_read(km_stream *s, char *buf, size_t cap, km_error *err);

/* The name for messages: the path as given, or "<stdin>" for "-". */
const char *km_stream_name(const km_stream *s);

/* 1 when the input is gzip-compressed, else 0. */
int km_stream_is_gzip(const km_stream *s);

/* Uncompressed bytes delivered so far. */
int64_t km_stream_bytes(const km_stream *s);

/* Closes the stream (and its file unless it is standard input); NULL is fine. */
void km_stream_close(km_stream *s);

#endif
