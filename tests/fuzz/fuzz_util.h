/* fuzz_util.h - what the libFuzzer harnesses of tests/fuzz share: one private temporary
 * directory per process (removed at exit; nothing is written anywhere else), the input
 * written to a file in it, and the sanitizer's abort for a broken invariant. */
#ifndef KM_FUZZ_UTIL_H
#define KM_FUZZ_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "blas.h"

/* Known, not yet fixed findings whose reproducers wait in tests/fuzz/pending/: the harnesses
 * step around them (so that a smoke run can find something else) unless built with
 * -DKM_FUZZ_STRICT (make fuzz FUZZ_DEFS=-DKM_FUZZ_STRICT). Each use names its reproducer;
 * delete the guard when the fix is merged. */
#ifdef KM_FUZZ_STRICT
#define KM_FUZZ_KNOWN(cond) ((void)(cond), 0)
#else
#define KM_FUZZ_KNOWN(cond) (cond)
#endif

static char fz_dir[256];

static inline void fz_cleanup(void)
{
    if (!fz_dir[0])
        return;
    DIR *d = opendir(fz_dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", fz_dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(fz_dir);
    fz_dir[0] = '\0';
}

/* The process's temporary directory ($TMPDIR or /tmp), made on first use. */
static inline const char *fz_tmpdir(void)
{
    if (!fz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fz_dir, sizeof fz_dir, "%s/kmtk-fuzz-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(fz_dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(fz_cleanup);
        km_blas_threads(1);   /* deterministic and cheap */
    }
    return fz_dir;
}

/* path gets "DIR/name" (size 512). */
static inline void fz_path(char *path, const char *name)
{
    snprintf(path, 512, "%s/%s", fz_tmpdir(), name);
}

/* Writes data to DIR/name; path gets its name. */
static inline void fz_write(char *path, const char *name, const void *data, size_t size)
{
    fz_path(path, name);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) {
        perror(path);
        abort();
    }
}

/* A NUL-terminated copy of data (caller frees). */
static inline char *fz_str(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A broken contract: report and abort (libFuzzer saves the input). */
#define FZ_CHECK(cond, ...)                                                                  \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "fuzz: %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

/* The whole of a file (caller frees), its length in *n. */
static inline void *fz_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    FZ_CHECK(f, "%s: cannot open", path);
    size_t cap = 4096, len = 0, k;
    unsigned char *s = malloc(cap);
    while (s && (k = fread(s + len, 1, cap - len, f)) > 0)
        if ((len += k) == cap)
            s = realloc(s, cap *= 2);
    FZ_CHECK(s, "out of memory");
    fclose(f);
    *n = len;
    return s;
}

#endif
