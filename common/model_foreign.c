/* model_foreign.c - the pieces LIBLINEAR's and LIBSVM's model readers share
 * (model_foreign.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_foreign.h"
#include "numparse.h"

int km_foreign_key(km_foreign_header *h, int *key, const char **v)
{
    km_mio *io = h->io;
    if (h->started && !(h->line = km_mio_line(io)))
        return km_mio_truncated(io, "no '%s' line", h->end);
    h->started = 1;
    const char *line = h->line;
    *key = -1;
    if (strcmp(line, h->end) == 0)
        return KM_OK;
    const char *sp = strchr(line, ' ');
    size_t kl = sp ? (size_t)(sp - line) : strlen(line);
    *v = sp ? sp + 1 : line + kl;
    int twice = 0;
    for (int q = 0; q < h->nkeys; q++)
        if (kl == strlen(h->keys[q]) && strncmp(line, h->keys[q], kl) == 0) {
            *key = q;
            twice = h->seen >> q & 1;
            h->seen |= 1u << q;
        }
    if (twice)   /* (a second nr_class would not match the lists read for the first) */
        return km_mio_bad_col(io, 1, "header key '%.*s' given twice", (int)kl, line);
    if (!sp)
        return km_mio_bad_col(io, 1, "expected 'key value' or '%s' (a %s model)", h->end,
                              h->format);
    if (*key < 0)
        return km_mio_bad_col(io, 1, "unknown %s header key '%.*s'", h->format,
                              (int)(kl < 60 ? kl : 60), line);
    return KM_OK;
}

int km_foreign_numbers(km_mio *io, const char *line, const char *p, double *x, int64_t n,
                       const char *what)
{
    for (int64_t q = 0; q < n; q++) {
        const char *s = p;
        while (*s == ' ' || *s == '\t')
            s++;
        if (q > 0 && s == p)
            return km_mio_bad_col(io, p - line + 1, "expected %s", what);
        int st;
        p = km_parse_double(s, &x[q], &st);
        if (st != KM_NUM_OK || (*p && *p != ' ' && *p != '\t'))
            return km_mio_bad_col(io, s - line + 1, "expected %s", what);
    }
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p)
        return km_mio_bad_col(io, p - line + 1, "unexpected text after %lld numbers",
                              (long long)n);
    return KM_OK;
}

int km_foreign_list(km_mio *io, const char *line, const char *v, int64_t count, double **out,
                    const char *key, const char *what, km_error *err)
{
    if (*out)
        return km_mio_bad_col(io, 1, "'%s' given twice", key);
    if (count < 0)
        return km_mio_bad_col(io, 1, "'%s' before 'nr_class'", key);
    if ((int64_t)strlen(v) < 2 * count - 1)
        return km_mio_bad_col(io, v - line + 1, "expected %lld numbers (%s)", (long long)count,
                              key);
    if (!(*out = malloc(((size_t)count + 1) * sizeof **out)))
        return km_error_nomem(err, "model header");
    return km_foreign_numbers(io, line, v, *out, count, what);
}

int km_foreign_end(km_mio *io, const char *what)
{
    const char *line;
    while ((line = km_mio_line(io)))
        if (line[strspn(line, " \t")])
            return km_mio_bad_col(io, 1, "unexpected text after the %s", what);
    return KM_OK;
}

void km_foreign_labels(km_model *m, int oneclass, int kclass, const double *label)
{
    if (oneclass) {
        m->labels[0] = -1;
        m->labels[1] = 1;
    } else if (kclass == 2) {   /* a decision value > 0 means the file's first label */
        m->labels[0] = label[1];
        m->labels[1] = label[0];
    } else if (kclass > 2) {
        memcpy(m->labels, label, (size_t)kclass * sizeof *label);
    }
}

int km_foreign_write_body(const km_model *m, FILE *f)
{
    (void)m;
    (void)f;
    errno = ENOTSUP;
    return -1;
}

int km_foreign_read_kmtk(km_mio *io, km_model *m, km_error *err)
{
    (void)err;
    char peer[16];   /* the kind's name in capitals: the peer's */
    size_t q = 0;
    for (const char *c = m->kind->name; *c && q + 1 < sizeof peer; c++)
        peer[q++] = (char)toupper((unsigned char)*c);
    peer[q] = 0;
    return km_mio_bad(io, "%s models are read from %s's own files", m->kind->name, peer);
}
