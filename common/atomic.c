/* atomic.c - see atomic.h. */
#include "atomic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int km_write_atomic(const char *path, const char *what, int (*write)(FILE *f, const void *ctx),
                    const void *ctx, km_error *err)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp)
        return km_error_nomem(err, "file name");
    snprintf(tmp, len + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        km_error_set(err, KM_EINPUT, "%s: cannot create temporary file %s: %s", path, tmp,
                     strerror(errno));
        free(tmp);
        return KM_EINPUT;
    }
    FILE *f = fdopen(fd, "w");
    int bad = !f;
    errno = 0;
    if (f) {
        static _Thread_local char buf[1 << 16];
        setvbuf(f, buf, _IOFBF, sizeof buf);
        bad = write(f, ctx) != 0 || ferror(f);
        bad |= fflush(f) != 0;
        bad |= fsync(fileno(f)) != 0;
        int e = errno;
        bad |= fclose(f) != 0;
        if (bad && !errno)
            errno = e;
    } else {
        close(fd);
    }
    if (bad || rename(tmp, path) != 0) {
        km_error_set(err, KM_EINPUT, "%s: cannot write %s: %s", path, what,
                     errno ? strerror(errno) : "write error");
        unlink(tmp);
        free(tmp);
        return KM_EINPUT;
    }
    free(tmp);
    return KM_OK;
}
