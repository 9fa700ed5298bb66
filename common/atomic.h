/* atomic.h - files written whole or not at all: a temporary file in the same directory,
 * flushed and fsync'ed, then renamed over the target (models, path tables, figures). */
#ifndef KM_ATOMIC_H
#define KM_ATOMIC_H

#include <stdio.h>

#include "error.h"

/* Calls write(f, ctx) on a temporary file and renames it to path when write returned 0 and
 * every byte reached the disk; otherwise removes it and fails with
 * "PATH: cannot write WHAT: reason" (KM_EINPUT). A path that exists and is not a regular
 * file (/dev/stdout, a named pipe) is written in place. */
int km_write_atomic(const char *path, const char *what, int (*write)(FILE *f, const void *ctx),
                    const void *ctx, km_error *err);

#endif
