/* weights.c - see weights.h. */
#include "weights.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "stream.h"

/* Parses one line (without its newline) into *x; 0 on success. */
static int parse_weight(char *s, size_t len, double *x)
{
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        len--;
    s[len] = '\0';
    while (*s == ' ' || *s == '\t')
        s++;
    char *end;
    int ok;
    *x = km_strtod_c(s, &end, &ok);
    return ok && end != s && *end == '\0' && isfinite(*x) && *x >= 0 ? 0 : -1;
}

int km_weights_read(const char *path, int64_t l, double **out, km_error *err)
{
    *out = NULL;
    km_stream *s = km_stream_open(path, err);
    if (!s)
        return err->code;
    enum { LINE_MAX_BYTES = 256 };   /* a number needs far less */
    double *w = malloc(((size_t)(l > 0 ? l : 0) + 1) * sizeof *w);
    char chunk[65536], line[LINE_MAX_BYTES + 1];
    size_t len = 0;
    int64_t count = 0, lineno = 1;
    int rc = w ? KM_OK : km_error_nomem(err, "weights");
    int eof = 0;
    while (rc == KM_OK && !eof) {
        ptrdiff_t got = km_stream_read(s, chunk, sizeof chunk, err);
        if (got < 0) {
            rc = err->code;
            break;
        }
        eof = got == 0;
        for (ptrdiff_t q = 0; rc == KM_OK && q <= (eof ? 0 : got - 1); q++) {
            int end_line = eof ? len > 0 : chunk[q] == '\n';
            if (!end_line) {
                if (eof)
                    break;
                if (len == LINE_MAX_BYTES) {
                    rc = km_error_set(err, KM_EINPUT, "%s:%lld: a line longer than %d bytes, "
                                      "not a weight", km_stream_name(s), (long long)lineno,
                                      LINE_MAX_BYTES);
                    break;
                }
                line[len++] = chunk[q];
                continue;
            }
            double x;
            if (count == l)
                rc = km_error_set(err, KM_EINPUT, "%s:%lld: more weights than the %lld rows of "
                                  "the data", km_stream_name(s), (long long)lineno,
                                  (long long)l);
            else if (parse_weight(line, len, &x))
                rc = km_error_set(err, KM_EINPUT, "%s:%lld: expected a weight (a finite number "
                                  ">= 0), got '%.40s'", km_stream_name(s), (long long)lineno,
                                  line);
            else
                w[count++] = x;
            len = 0;
            lineno++;
        }
    }
    if (rc == KM_OK && count != l)
        rc = km_error_set(err, KM_EINPUT, "%s: %lld weights for %lld rows (one a line, one per "
                          "row)", km_stream_name(s), (long long)count, (long long)l);
    km_stream_close(s);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return KM_OK;
}

int km_weights_check(const double *w, int64_t l, km_error *err)
{
    for (int64_t i = 0; i < l; i++)
        if (!(w[i] >= 0) || !isfinite(w[i]))
            return km_error_set(err, KM_EUSAGE, "instance weight of row %lld must be a finite "
                                "number >= 0, got %g", (long long)i + 1, w[i]);
    return KM_OK;
}
