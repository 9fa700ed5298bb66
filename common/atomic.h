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

/* The same for a file written as it goes (predictions): *o gets f, a temporary file in the
 * same directory (or path itself, opened in place, when it exists and is not a regular
 * file); km_atomic_commit puts it in place, km_atomic_discard removes it. */
typedef struct km_atomic_out {
    FILE *f;
    char *tmp;    /* the temporary file's name; NULL when written in place */
} km_atomic_out;

int km_atomic_open(const char *path, km_atomic_out *o, km_error *err);

/* Flushes, fsyncs and closes o->f and renames the temporary file to path; on any failure
 * removes it: "PATH: cannot write WHAT: reason" (KM_EINPUT). */
int km_atomic_commit(km_atomic_out *o, const char *path, const char *what, km_error *err);

/* Closes o->f and removes the temporary file (path is left as it was); NULL-safe. */
void km_atomic_discard(km_atomic_out *o);

/* Removes every temporary file of the functions above that exists now (up to 16 at once);
 * async-signal-safe: for a handler of SIGINT/SIGTERM (km_cli_init installs one). */
void km_atomic_unlink_pending(void);

#endif
