/* atomic.c - see atomic.h. */
#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A target that exists and is not a regular file (/dev/stdout, a fifo) is written in
 * place: renaming over it would replace the device. */
static int write_in_place(const char *path, const char *what,
                          int (*write)(FILE *f, const void *ctx), const void *ctx,
                          km_error *err)
{
    FILE *f = fopen(path, "w");
    int e = f ? 0 : errno;
    if (f) {
        errno = 0;
        if (write(f, ctx) != 0 || ferror(f) || fflush(f) != 0)
            e = errno ? errno : EIO;
        if (fclose(f) != 0 && !e)
            e = errno ? errno : EIO;
    }
    if (e)
        return km_error_set(err, KM_EINPUT, "%s: cannot write %s: %s", path, what,
                            strerror(e));
    return KM_OK;
}

/* The temporary files that exist now, for km_atomic_unlink_pending (a signal's cleanup):
 * a slot holds a name from its creation until it is renamed or removed. */
#define KM_ATOMIC_SLOTS 16
static char *_Atomic pending_tmp[KM_ATOMIC_SLOTS];

static void track(char *tmp)
{
    for (int i = 0; i < KM_ATOMIC_SLOTS; i++) {
        char *none = NULL;
        if (atomic_compare_exchange_strong(&pending_tmp[i], &none, tmp))
            return;
    }   /* more than 16 at once: this one is not removed on a signal */
}

static void untrack(char *tmp)
{
    for (int i = 0; i < KM_ATOMIC_SLOTS; i++) {
        char *mine = tmp;
        if (atomic_compare_exchange_strong(&pending_tmp[i], &mine, NULL))
            return;
    }
}

void km_atomic_unlink_pending(void)
{
    for (int i = 0; i < KM_ATOMIC_SLOTS; i++) {
        char *tmp = atomic_load(&pending_tmp[i]);
        if (tmp)
            unlink(tmp);   /* async-signal-safe */
    }
}

int km_atomic_open(const char *path, km_atomic_out *o, km_error *err)
{
    struct stat sb;
    o->f = NULL;
    o->tmp = NULL;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (!(o->f = fopen(path, "w")))
            return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
        return KM_OK;
    }
    static atomic_uint counter;
    size_t size = strlen(path) + 48;
    char *tmp = malloc(size);
    if (!tmp)
        return km_error_nomem(err, "file name");
    /* a new name in the same directory (so rename is atomic), mode 0666 less the umask */
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(tmp, size, "%s.tmp%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd >= 0)
        track(tmp);
    if (fd < 0) {
        km_error_set(err, KM_EINPUT, "%s: cannot create temporary file %s: %s", path, tmp,
                     strerror(errno));
        free(tmp);
        return KM_EINPUT;
    }
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(tmp);
        untrack(tmp);
        free(tmp);
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(e));
    }
    o->tmp = tmp;
    return KM_OK;
}

int km_atomic_commit(km_atomic_out *o, const char *path, const char *what, km_error *err)
{
    int e = 0;
    errno = 0;
    if (ferror(o->f) || fflush(o->f) != 0 || (o->tmp && fsync(fileno(o->f)) != 0))
        e = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (!e && o->tmp && rename(o->tmp, path) != 0)
        e = errno;
    if (e && o->tmp)
        unlink(o->tmp);
    if (o->tmp)
        untrack(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    if (e)
        return km_error_set(err, KM_EINPUT, "%s: cannot write %s: %s", path, what, strerror(e));
    return KM_OK;
}

void km_atomic_discard(km_atomic_out *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    if (o->tmp) {
        unlink(o->tmp);
        untrack(o->tmp);
    }
    free(o->tmp);
    o->f = NULL;
    o->tmp = NULL;
}

int km_write_atomic(const char *path, const char *what, int (*write)(FILE *f, const void *ctx),
                    const void *ctx, km_error *err)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return write_in_place(path, what, write, ctx, err);
    km_atomic_out o;
    int rc = km_atomic_open(path, &o, err);
    if (rc)
        return rc;
    static _Thread_local char buf[1 << 16];
    setvbuf(o.f, buf, _IOFBF, sizeof buf);
    errno = 0;
    if (write(o.f, ctx) != 0) {
        int e = errno ? errno : EIO;
        km_atomic_discard(&o);
        return km_error_set(err, KM_EINPUT, "%s: cannot write %s: %s", path, what,
                            strerror(e));
    }
    return km_atomic_commit(&o, path, what, err);
}
