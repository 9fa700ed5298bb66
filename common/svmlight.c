/* svmlight.c - see svmlight.h. One line parser (parse_line) serves both the row stream
 * (km_svmlight_next, pairs into reusable buffers) and km_svmlight_read (pairs appended
 * straight into the growing problem arrays, so nothing is copied twice). */
#include "svmlight.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "numparse.h"
#include "sizelimit.h"
#include "stream.h"

#define KM_LINEBUF_INIT (256 * 1024) /* initial text buffer; doubles for longer lines */

struct km_svmlight_reader {
    km_stream *st;
    const char *name;     /* for messages (owned by st) */
    char *buf;            /* text; buf[cap] is spare room for a sentinel '\n' */
    size_t cap;
    size_t pos, end;      /* unparsed text is buf[pos, end) */
    size_t scan;          /* buf[pos, scan) is known to hold no '\n' */
    int eof;              /* the stream has no more bytes */
    int64_t line;         /* number of the line last returned by next_line */
    int qid_mode;         /* 0: no data row yet; 1: rows carry qid; -1: rows do not */
    int64_t first_line;   /* line of the first data row */
    double *ys;           /* the current row's outputs, nys used, ycap allocated */
    int64_t nys, ycap;
    int64_t nout;         /* outputs per row, set by the first data row (0: none yet) */
    int32_t *idx;         /* pairs: 0-based index and value, nnz used, pcap allocated */
    double *val;
    int64_t nnz, pcap;
    int32_t max_index;    /* largest 1-based index seen */
    int failed;           /* sticky error state for km_svmlight_next */
    km_error saved;
    size_t max_line;      /* longest line accepted (bytes before its '\n') */
    int ids;              /* KM_IDS_*: what a leading 0: means (precomputed kernels) */
    int64_t columns;      /* precomputed rows: kernel values per row (0: the first row's) */
    int64_t columns_line; /* the line that set columns (0: given by km_svmlight_set_ids) */
    int64_t min_columns;  /* ... at least this many (a LIBSVM model's largest serial number) */
    int64_t id;           /* the current row's serial number (KM_IDS_TRAIN), else 0 */
    int64_t *id_line;     /* KM_IDS_TRAIN: columns + 1 lines, where each ID was (0: not yet) */
};

/* Geometric capacity for at least need elements of size elem; -1 when impossible. */
static int64_t grown_cap(int64_t cap, int64_t need, size_t elem)
{
    int64_t limit = (int64_t)(PTRDIFF_MAX / (ptrdiff_t)elem);
    if (need > limit)
        return -1;
    int64_t nc = cap > limit - cap / 2 ? limit : cap + cap / 2;
    if (nc < need)
        nc = need;
    if (nc < 1024)
        nc = 1024 < limit ? 1024 : limit;
    return nc;
}

/* Grows the row's output buffer by half (labels with many outputs). */
static int grow_outputs(km_svmlight_reader *r, km_error *err)
{
    int64_t nc = grown_cap(r->ycap, r->ycap + 1, sizeof(double));
    if (nc > INT32_MAX)
        nc = r->ycap < INT32_MAX ? INT32_MAX : -1;
    double *y = nc < 0 ? NULL : realloc(r->ys, (size_t)nc * sizeof *y);
    if (!y)
        return km_error_nomem(err, "label outputs");
    r->ys = y;
    r->ycap = nc;
    return KM_OK;
}

/* Grows the pair buffers to hold at least need pairs. */
static int grow_pairs(km_svmlight_reader *r, int64_t need, km_error *err)
{
    int64_t nc = grown_cap(r->pcap, need, sizeof(double));
    if (nc < 0)
        return km_error_nomem(err, "feature arrays too large");
    int32_t *i = realloc(r->idx, (size_t)nc * sizeof *i);
    if (!i)
        return km_error_nomem(err, "feature indices");
    r->idx = i;
    double *v = realloc(r->val, (size_t)nc * sizeof *v);
    if (!v)
        return km_error_nomem(err, "feature values");
    r->val = v;
    r->pcap = nc;
    return KM_OK;
}

km_svmlight_reader *km_svmlight_open(const char *path, km_error *err)
{
    km_svmlight_reader *r = calloc(1, sizeof *r);
    if (!r) {
        km_error_nomem(err, "reader");
        return NULL;
    }
    r->cap = KM_LINEBUF_INIT;
    r->max_line = KM_MAX_LINE;
    r->buf = malloc(r->cap + 1);
    if (!r->buf) {
        km_error_nomem(err, "line buffer");
        free(r);
        return NULL;
    }
    r->st = km_stream_open(path, err);
    if (!r->st) {
        free(r->buf);
        free(r);
        return NULL;
    }
    r->name = km_stream_name(r->st);
    return r;
}

void km_svmlight_close(km_svmlight_reader *r)
{
    if (!r)
        return;
    km_stream_close(r->st);
    free(r->buf);
    free(r->ys);
    free(r->idx);
    free(r->val);
    free(r->id_line);
    free(r);
}

void km_svmlight_set_max_line(km_svmlight_reader *r, size_t bytes)
{
    r->max_line = bytes ? bytes : KM_MAX_LINE;
}

void km_svmlight_set_ids(km_svmlight_reader *r, int mode, int64_t columns)
{
    r->ids = mode == KM_IDS_TRAIN || mode == KM_IDS_TEST ? mode : KM_IDS_NONE;
    r->columns = r->ids && columns > 0 ? columns : 0;
    r->min_columns = r->ids && columns < 0 ? -columns : 0;
    r->columns_line = 0;
}

/* The error for a line longer than r->max_line (the line after r->line); returns -1. */
__attribute__((cold, noinline)) static int line_too_long(const km_svmlight_reader *r,
                                                          km_error *err)
{
    char cap[32];
    km_error_set(err, KM_EINPUT, "%s:%lld: a line longer than %s; --max-line raises the cap",
                 r->name, (long long)r->line + 1, km_size_text((int64_t)r->max_line, cap));
    return -1;
}

/* Finds the next line: *ls is its start, *le its '\n' (or a sentinel '\n' after a last
 * line without one). Returns 1, 0 at end of input, -1 on error. The buffer doubles until
 * the line fits, up to r->max_line bytes (a gzip bomb of zeros is not a line). */
static int next_line(km_svmlight_reader *r, char **ls, char **le, km_error *err)
{
    for (;;) {
        char *nl = memchr(r->buf + r->scan, '\n', r->end - r->scan);
        if (nl && (size_t)(nl - r->buf) - r->pos > r->max_line)
            return line_too_long(r, err);
        if (nl) {
            *ls = r->buf + r->pos;
            *le = nl;
            r->pos = r->scan = (size_t)(nl - r->buf) + 1;
            r->line++;
            return 1;
        }
        r->scan = r->end;
        if (r->end - r->pos > r->max_line)
            return line_too_long(r, err);
        if (r->eof) {
            if (r->pos == r->end)
                return 0;
            r->buf[r->end] = '\n';
            *ls = r->buf + r->pos;
            *le = r->buf + r->end;
            r->pos = r->scan = r->end;
            r->line++;
            return 1;
        }
        if (r->pos > 0) { /* keep only the unfinished line, at the front */
            memmove(r->buf, r->buf + r->pos, r->end - r->pos);
            r->end -= r->pos;
            r->scan -= r->pos;
            r->pos = 0;
        }
        if (r->end == r->cap) {   /* here cap <= max_line: grow to at most max_line + 1 */
            if (r->cap > (SIZE_MAX - 1) / 2 || r->cap > (size_t)PTRDIFF_MAX / 2)
                return km_error_nomem(err, "line too long"), -1;
            size_t nc = r->cap > r->max_line / 2 ? r->max_line + 1 : 2 * r->cap;
            char *b = realloc(r->buf, nc + 1);
            if (!b)
                return km_error_nomem(err, "line buffer"), -1;
            r->buf = b;
            r->cap = nc;
        }
        ptrdiff_t n = km_stream_read(r->st, r->buf + r->end, r->cap - r->end, err);
        if (n < 0)
            return -1;
        if (n == 0)
            r->eof = 1;
        r->end += (size_t)n;
    }
}

/* Writes token text starting at p for a message (up to a blank, the line end, or ':'
 * when stop_colon), shortened and with unprintable bytes escaped. */
static const char *show(char out[96], const char *p, const char *le, int stop_colon)
{
    size_t k = 0;
    for (; p < le && *p != ' ' && *p != '\t' && !(stop_colon && *p == ':'); p++) {
        if (k > 60) {
            memcpy(out + k, "...", 4);
            return out;
        }
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c < 0x7f && c != '\'')
            out[k++] = (char)c;
        else
            k += (size_t)snprintf(out + k, 8, "\\x%02x", c);
    }
    out[k] = '\0';
    return out;
}

/* Sets the input error "NAME:LINE:COL: <message>" for the byte at in the current line;
 * returns -1. */
__attribute__((format(printf, 5, 6))) static int
in_error(const km_svmlight_reader *r, const char *ls, const char *at, km_error *err,
         const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    km_error_set(err, KM_EINPUT, "%s:%lld:%lld: %s", r->name, (long long)r->line,
                 (long long)(at - ls + 1), msg);
    return -1;
}

/* Skips spaces and tabs (the line's terminator is neither, so this stops). */
static inline const char *skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Is p a valid end of a token: a blank, the line end or the start of a comment? */
static inline int token_end(const char *p, const char *le)
{
    return *p == ' ' || *p == '\t' || p == le || *p == '#';
}

/* The slow, exact look at a feature token the fast scan did not accept: returns the
 * position of its ':' with *ix set when it is valid after all (leading zeros), else
 * NULL with the input error set. */
__attribute__((cold, noinline)) static const char *
pair_error(const km_svmlight_reader *r, const char *ls, const char *le, const char *tok,
           uint64_t last, uint64_t *ix, km_error *err)
{
    char t[96];
    int st;
    const char *p = km_parse_uint(tok, INT32_MAX, ix, &st);
    if (st == KM_NUM_RANGE)
        return in_error(r, ls, tok, err, "expected a feature index <= 2147483647, got '%s'",
                        show(t, tok, le, 1)), NULL;
    if (st == KM_NUM_NONE) {
        if (*tok == '-' && (unsigned)(unsigned char)tok[1] - '0' < 10)
            return in_error(r, ls, tok, err, "expected a feature index >= 1, got '%s'",
                            show(t, tok, le, 1)), NULL;
        if (le - tok >= 4 && memcmp(tok, "qid:", 4) == 0)
            return in_error(r, ls, tok, err,
                            last ? "expected qid right after the label, got '%s' after "
                                   "features"
                                 : "expected one qid per row, got a second '%s'",
                            show(t, tok, le, 0)), NULL;
        return in_error(r, ls, tok, err, "expected a feature index (integer >= 1), got '%s'",
                        show(t, tok, le, 0)), NULL;
    }
    if (*p != ':')
        return in_error(r, ls, tok, err, "expected ':' after feature index %llu",
                        (unsigned long long)*ix), NULL;
    if (*ix == 0)
        return in_error(r, ls, tok, err, r->ids ? "expected '0:' only first in the row, got "
                        "another 0: after the kernel values" : "expected a feature index >= 1, "
                        "got 0"), NULL;
    if (*ix <= last)
        return in_error(r, ls, tok, err,
                        "expected a feature index > %llu (indices must increase), got %llu",
                        (unsigned long long)last, (unsigned long long)*ix), NULL;
    return p;
}

/* Sets the error for a bad value token at vt (number status st, scan end p); -1. */
__attribute__((cold, noinline)) static int
value_error(const km_svmlight_reader *r, const char *ls, const char *le, const char *vt,
            const char *p, uint64_t ix, int st, km_error *err)
{
    char t[96];
    if (st == KM_NUM_INTERNAL)
        return km_error_set(err, KM_EINTERNAL, "cannot create the C locale"), -1;
    if (st == KM_NUM_NONFINITE && token_end(p, le))
        return in_error(r, ls, vt, err, "expected a finite value for feature %llu, got '%s'",
                        (unsigned long long)ix, show(t, vt, le, 0));
    if (token_end(vt, le))
        return in_error(r, ls, vt, err, "expected a value after '%llu:'",
                        (unsigned long long)ix);
    return in_error(r, ls, vt, err, "expected a number as value of feature %llu, got '%s'",
                    (unsigned long long)ix, show(t, vt, le, 0));
}

/* The checks of a precomputed row after its pairs (the last at index last; p: where they
 * ended; idt: the ID's text or NULL): L values on every row (the first row's number, or the
 * model's), each serial number in 1..L and on one row only. 0, or -1 with err set. */
__attribute__((noinline)) static int
precomputed_row(km_svmlight_reader *r, const char *ls, const char *le, const char *p,
                const char *idt, int64_t last, km_error *err)
{
    if (last == 0)
        return in_error(r, ls, p, err, "expected kernel values 1:K(x,x_1) ... L:K(x,x_L) "
                        "(-t precomputed)");
    if (r->columns == 0) {
        if (last < r->min_columns)
            return in_error(r, ls, p < le && *p != '#' ? p : le, err, "expected at least %lld "
                            "kernel values (the model's largest support vector serial number), "
                            "got %lld", (long long)r->min_columns, (long long)last);
        r->columns = last;
        r->columns_line = r->line;
        if (r->ids == KM_IDS_TRAIN &&
            !(r->id_line = calloc((size_t)last + 1, sizeof *r->id_line)))
            return km_error_nomem(err, "serial numbers"), -1;
    } else if (last != r->columns) {
        return in_error(r, ls, p < le && *p != '#' ? p : le, err, "expected %lld kernel "
                        "values (1:..%lld:%s), got %lld", (long long)r->columns,
                        (long long)r->columns, r->columns_line ? ", as on the first row"
                        : ", the model's", (long long)last);
    }
    if (r->ids != KM_IDS_TRAIN)
        return 0;
    if (r->id > r->columns)
        return in_error(r, ls, idt, err, "expected a serial number in 1..%lld (a column of "
                        "the kernel values), got %lld", (long long)r->columns,
                        (long long)r->id);
    if (r->id_line[r->id])
        return in_error(r, ls, idt, err, "expected a new serial number, got %lld again (line "
                        "%lld has it)", (long long)r->id, (long long)r->id_line[r->id]);
    r->id_line[r->id] = r->line;
    return 0;
}

/* Parses the line [ls, le) (*le is '\n'): label into *y, task id into *qid and *has_qid,
 * pairs appended to r->idx/r->val at r->nnz. Returns 1 for a data row, 0 for a blank or
 * comment-only line, -1 on error (err set). The one svmlight line grammar of kmtk. */
static int parse_line(km_svmlight_reader *r, const char *ls, const char *le, double *y,
                      int *has_qid, int64_t *qid, km_error *err)
{
    char t[96];
    int st;
    double v;
    if (le > ls && le[-1] == '\r') /* CRLF: the '\r' becomes the terminator */
        le--;
    const char *p = skip_blanks(ls);
    if (p == le || *p == '#')
        return 0;

    /* label: one real, or a comma-separated list of outputs */
    const char *tok = p;
    int64_t k = 0;
    for (;;) {
        const char *vt = p;
        p = km_parse_double(p, &v, &st);
        if (st == KM_NUM_INTERNAL)
            return km_error_set(err, KM_EINTERNAL, "cannot create the C locale"), -1;
        if (k == 0 && st == KM_NUM_OK && *p == ':')
            return in_error(r, ls, tok, err, "expected a label before the features, got '%s'",
                            show(t, tok, le, 0));
        if (st == KM_NUM_NONFINITE && (token_end(p, le) || *p == ','))
            return in_error(r, ls, vt, err, "expected a finite label, got '%s'",
                            show(t, vt, le, 0));
        if (st != KM_NUM_OK || !(token_end(p, le) || *p == ','))
            return k ? in_error(r, ls, vt, err, "expected a real number as output %lld of the "
                                "label, got '%s'", (long long)k + 1, show(t, vt, le, 0))
                     : in_error(r, ls, vt, err, "expected a label (a real number), got '%s'",
                                show(t, vt, le, 0));
        if (k == r->ycap && grow_outputs(r, err))
            return -1;
        r->ys[k++] = v;
        if (*p != ',')
            break;
        p++;
    }
    if (r->nout == 0) {
        r->nout = k;
    } else if (k != r->nout) {
        return in_error(r, ls, tok, err,
                        "expected %lld output%s in the label (as on line %lld), got %lld",
                        (long long)r->nout, r->nout > 1 ? "s" : "", (long long)r->first_line,
                        (long long)k);
    }
    r->nys = k;
    *y = r->ys[0];
    p = skip_blanks(p);

    /* optional task id, only right after the label, on every row or on none */
    int hq = le - p >= 4 && memcmp(p, "qid:", 4) == 0;
    if (r->qid_mode == 0) {
        r->qid_mode = hq ? 1 : -1;
        r->first_line = r->line;
    } else if (hq && r->qid_mode < 0) {
        return in_error(r, ls, p, err,
                        "expected no qid (the first data row, line %lld, has none), got '%s'",
                        (long long)r->first_line, show(t, p, le, 0));
    } else if (!hq && r->qid_mode > 0) {
        return in_error(r, ls, p, err,
                        "expected 'qid:N' after the label (the first data row, line %lld, "
                        "has one)", (long long)r->first_line);
    }
    if (hq) {
        uint64_t q;
        const char *qt = p + 4;
        p = km_parse_uint(qt, INT64_MAX, &q, &st);
        if (st != KM_NUM_OK || !token_end(p, le))
            return in_error(r, ls, qt, err,
                            "expected a task id (integer 0..%lld) after 'qid:', got '%s'",
                            (long long)INT64_MAX, show(t, qt, le, 0));
        *qid = (int64_t)q;
    }
    *has_qid = hq;

    /* precomputed kernels: a leading 0:ID (training: the row's serial number; test: any
     * value, '?' too, ignored) */
    const char *idt = NULL;
    r->id = 0;
    if (r->ids) {
        p = skip_blanks(p);
        if (le - p >= 2 && p[0] == '0' && p[1] == ':') {
            idt = p + 2;
            p = idt;
            if (r->ids == KM_IDS_TRAIN) {
                p = km_parse_double(idt, &v, &st);
                if (st == KM_NUM_INTERNAL)
                    return km_error_set(err, KM_EINTERNAL, "cannot create the C locale"), -1;
                if (st != KM_NUM_OK || !token_end(p, le) || v != floor(v) || v < 1 ||
                    v > INT32_MAX)
                    return in_error(r, ls, idt, err, "expected the row's serial number (an "
                                    "integer >= 1) after '0:', got '%s'", show(t, idt, le, 0));
                r->id = (int64_t)v;
            } else {
                while (!token_end(p, le))
                    p++;
            }
        } else if (r->ids == KM_IDS_TRAIN) {
            return in_error(r, ls, p, err, "expected '0:ID' first (-t precomputed: the row's "
                            "serial number, then its kernel values 1:K(x_ID,x_1) ... "
                            "L:K(x_ID,x_L))");
        }
    }

    /* index:value pairs; faults leave through the cold pair_error/value_error */
    int32_t *idx = r->idx;
    double *val = r->val;
    int64_t nnz = r->nnz, cap = r->pcap;
    uint64_t last = 0;
    p = skip_blanks(p);
    while (p != le && *p != '#') {
        tok = p;
        uint64_t ix = 0;
        unsigned d;
        while ((d = (unsigned)(unsigned char)*p - '0') < 10)
            ix = ix * 10 + d, p++;
        /* 1..10 digits, then ':', and last < ix <= INT32_MAX (one unsigned compare);
         * else pair_error sorts it out (it also accepts leading zeros beyond 10 digits) */
        if ((size_t)(p - tok) - 1 >= 10 || *p != ':' || ix - last - 1 >= INT32_MAX - last) {
            p = pair_error(r, ls, le, tok, last, &ix, err);
            if (!p) {
                r->nnz = nnz;
                return -1;
            }
        }
        if (r->ids && (ix != last + 1 || (r->columns && (int64_t)ix > r->columns))) {
            r->nnz = nnz;
            return ix != last + 1
                   ? in_error(r, ls, tok, err, "expected the kernel value %llu: next "
                              "(precomputed rows give every value 1:..L:, in order), got %llu:",
                              (unsigned long long)last + 1, (unsigned long long)ix)
                   : in_error(r, ls, tok, err, "expected %lld kernel values (1:..%lld:%s), got "
                              "more", (long long)r->columns, (long long)r->columns,
                              r->columns_line ? ", as on the first row" : ", the model's");
        }
        const char *vt = ++p;
        p = km_parse_double(p, &v, &st);
        int blank = *p == ' ' || *p == '\t';
        if (st != KM_NUM_OK || !(blank || p == le || *p == '#')) {
            r->nnz = nnz;
            return value_error(r, ls, le, vt, p, ix, st, err);
        }
        if (nnz == cap) {
            r->nnz = nnz;
            if (grow_pairs(r, nnz + 1, err))
                return -1;
            idx = r->idx;
            val = r->val;
            cap = r->pcap;
        }
        idx[nnz] = (int32_t)(ix - 1);
        val[nnz] = v;
        nnz++;
        last = ix;
        if (!blank)
            break;
        p = skip_blanks(p + 1);
    }
    r->nnz = nnz;
    if (r->ids && precomputed_row(r, ls, le, p, idt, (int64_t)last, err))
        return -1;
    if ((int64_t)last > r->max_index)
        r->max_index = (int32_t)last;
    return 1;
}

/* Copies the sticky error of a failed reader into err; returns -1. */
static int fail(km_svmlight_reader *r, km_error *err)
{
    if (!r->failed) {
        r->failed = 1;
        r->saved = *err;
    } else if (err) {
        *err = r->saved;
    }
    return -1;
}

int km_svmlight_next(km_svmlight_reader *r, km_row *row, km_error *err)
{
    km_error local;
    if (!err)
        err = &local;
    if (r->failed)
        return fail(r, err);
    double y = 0;
    int has_qid = 0;
    int64_t qid = 0;
    for (;;) {
        char *ls, *le;
        int rc = next_line(r, &ls, &le, err);
        if (rc == 0)
            return 0;
        r->nnz = 0;
        if (rc > 0)
            rc = parse_line(r, ls, le, &y, &has_qid, &qid, err);
        if (rc < 0)
            return fail(r, err);
        if (rc > 0)
            break;
    }
    row->y = y;
    row->nout = (int32_t)r->nys;
    row->ys = r->ys;
    row->has_qid = has_qid;
    row->qid = has_qid ? qid : 0;
    row->nnz = r->nnz;
    row->index = r->idx;
    row->value = r->val;
    row->line = r->line;
    row->id = r->id;
    return 1;
}

/* Reallocates p to n elements of size elem (n > 0); keeps the old block if that fails. */
static void *shrunk(void *p, int64_t n, size_t elem)
{
    void *q = realloc(p, (size_t)n * elem);
    return q ? q : p;
}

int km_svmlight_read(const char *path, km_problem **out, km_error *err)
{
    return km_svmlight_read_max(path, 0, out, err);
}

int km_svmlight_read_max(const char *path, size_t max_line, km_problem **out, km_error *err)
{
    return km_svmlight_read_ids(path, max_line, KM_IDS_NONE, out, err);
}

int km_svmlight_read_params(const km_params *p, const char *path, size_t max_line,
                            km_problem **out, km_error *err)
{
    const char *k = p ? km_params_get(p, "kernel") : NULL;
    int pre = k && km_kernel_from_name(k) == KM_KERNEL_PRECOMPUTED;
    return km_svmlight_read_ids(path, max_line, pre ? KM_IDS_TRAIN : KM_IDS_NONE, out, err);
}

void km_svmlight_for_model(km_svmlight_reader *r, const km_model *m)
{
    int32_t L = km_model_precomputed(m);
    if (L != 0)
        km_svmlight_set_ids(r, KM_IDS_TEST, L);
}

int km_svmlight_read_ids(const char *path, size_t max_line, int ids, km_problem **out,
                         km_error *err)
{
    km_error local;
    if (!err)
        err = &local;
    *out = NULL;
    km_svmlight_reader *r = km_svmlight_open(path, err);
    if (!r)
        return err->code;
    km_svmlight_set_max_line(r, max_line);
    km_svmlight_set_ids(r, ids, 0);
    km_problem *pb = calloc(1, sizeof *pb);
    int64_t rcap = 0, ycap = 0, l = 0;
    int rc = pb ? KM_OK : km_error_nomem(err, "problem");
    while (rc == KM_OK) {
        char *ls, *le;
        double y = 0;
        int has_qid = 0;
        int64_t qid = 0;
        int got = next_line(r, &ls, &le, err);
        if (got == 0)
            break;
        if (got > 0)
            got = parse_line(r, ls, le, &y, &has_qid, &qid, err);
        if (got < 0) {
            rc = err->code;
            break;
        }
        if (got == 0)
            continue;
        if (l + 1 >= rcap) { /* room for row l and row_ptr[l + 1] */
            int64_t nc = grown_cap(rcap, l + 2, sizeof(int64_t));
            if (nc < 0) {
                rc = km_error_nomem(err, "too many rows");
                break;
            }
            int64_t *rp = realloc(pb->row_ptr, (size_t)nc * sizeof *rp);
            if (rp)
                pb->row_ptr = rp;
            int64_t *nq = NULL;
            if (rp && has_qid) {
                nq = realloc(pb->qid, (size_t)nc * sizeof *nq);
                if (nq)
                    pb->qid = nq;
            }
            int64_t *ni = NULL;
            if (rp && r->ids == KM_IDS_TRAIN) {
                ni = realloc(pb->id, (size_t)nc * sizeof *ni);
                if (ni)
                    pb->id = ni;
            }
            if (!rp || (has_qid && !nq) || (r->ids == KM_IDS_TRAIN && !ni)) {
                rc = km_error_nomem(err, "rows");
                break;
            }
            rcap = nc;
            pb->row_ptr[0] = 0;
        }
        if ((l + 1) * r->nout > ycap) { /* labels: l * nout outputs */
            int64_t nc = (l + 1) > INT64_MAX / r->nout ? -1
                         : grown_cap(ycap, (l + 1) * r->nout, sizeof(double));
            double *ny = nc < 0 ? NULL : realloc(pb->y, (size_t)nc * sizeof *ny);
            if (!ny) {
                rc = km_error_nomem(err, "labels");
                break;
            }
            pb->y = ny;
            ycap = nc;
        }
        memcpy(pb->y + l * r->nout, r->ys, (size_t)r->nout * sizeof *pb->y);
        if (has_qid)
            pb->qid[l] = qid;
        if (pb->id)
            pb->id[l] = r->id;
        l++;
        pb->row_ptr[l] = r->nnz;
    }
    if (rc == KM_OK && l == 0)
        rc = km_error_set(err, KM_EINPUT, "%s: no data", r->name);
    if (rc != KM_OK) {
        km_problem_free(pb);
        km_svmlight_close(r);
        return rc;
    }
    pb->l = l;
    pb->nnz = r->nnz;
    pb->n = r->max_index;
    pb->index = r->idx;
    pb->value = r->val;
    pb->nout = (int32_t)r->nout;
    r->idx = NULL;
    r->val = NULL;
    km_svmlight_close(r);
    pb->row_ptr = shrunk(pb->row_ptr, l + 1, sizeof *pb->row_ptr);
    pb->y = shrunk(pb->y, l * pb->nout, sizeof *pb->y);
    if (pb->qid)
        pb->qid = shrunk(pb->qid, l, sizeof *pb->qid);
    if (pb->id)
        pb->id = shrunk(pb->id, l, sizeof *pb->id);
    if (pb->nnz > 0) {
        pb->index = shrunk(pb->index, pb->nnz, sizeof *pb->index);
        pb->value = shrunk(pb->value, pb->nnz, sizeof *pb->value);
    }
    *out = pb;
    return KM_OK;
}
