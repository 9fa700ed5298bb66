/* model.c - see model.h. The envelope of every model file (doc/model-format.md):
 * "kmtk-model 1", "key value" header lines (the kind's among them), the kind's section line
 * and body, then "end". Numbers are written by km_dtoa: the shortest decimal that reads
 * back bit for bit. The kinds live in model_*.c; this file dispatches to them. */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "dtoa.h"
#include "numparse.h"

km_model *km_model_alloc(const km_model_kind *kind, int loss, int32_t n, int nr_class,
                         int nr_w, km_error *err)
{
    km_model *m = calloc(1, sizeof *m);
    if (m) {
        m->kind = kind;
        m->loss = loss;
        m->bias = -1;
        m->n = n;
        m->nr_class = nr_class;
        m->nr_w = nr_w;
        m->labels = calloc((size_t)nr_class + 1, sizeof *m->labels);
        m->label_weight = calloc((size_t)nr_class + 1, sizeof *m->label_weight);
    }
    if (!m || !m->labels || !m->label_weight) {
        km_model_free(m);
        km_error_nomem(err, "model");
        return NULL;
    }
    for (int k = 0; k < nr_class; k++)
        m->label_weight[k] = 1;
    return m;
}

void km_model_free(km_model *m)
{
    if (!m)
        return;
    if (m->body && m->kind->free_body)
        m->kind->free_body(m);
    free(m->labels);
    free(m->label_weight);
    free(m->prob_A);
    free(m->prob_B);
    free(m);
}

void km_model_set_body(km_model *m, const km_model_kind *kind, void *body)
{
    if (m->body && m->kind->free_body)
        m->kind->free_body(m);
    m->kind = kind;
    m->body = body;
}

int km_model_decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                           int64_t count, double *dec, int threads, km_error *err)
{
    return m->kind->decision_rows(m, X, rows, rows ? count : X->l, dec, threads, err);
}

void km_model_outputs(const km_model *m, const double *dec, double *out)
{
    if (m->kind->outputs)
        m->kind->outputs(m, dec, out);
    else
        out[0] = km_model_predict_label(m, dec);
}

double km_model_predict_label(const km_model *m, const double *dec)
{
    if (m->nr_class == 0)
        return dec[0];
    if (m->nr_class == 2)
        return dec[0] > 0 ? m->labels[1] : m->labels[0];
    int best = 0;
    for (int k = 1; k < m->nr_w; k++)
        if (dec[k] > dec[best])
            best = k;
    return m->labels[best];
}

int km_model_each_decision(const km_model *m, const km_problem *X,
                            void (*row)(void *ctx, const km_model *m, int64_t i,
                                        const double *dec),
                            void *ctx, const char *what, km_error *err)
{
    int64_t nw = m->nr_w, bs = 1024;
    double *dec = malloc((size_t)(bs * nw) * sizeof *dec);
    int64_t *rows = malloc((size_t)bs * sizeof *rows);
    int rc = dec && rows ? KM_OK : km_error_nomem(err, what);
    for (int64_t a0 = 0; a0 < X->l && rc == KM_OK; a0 += bs) {
        int64_t nb = X->l - a0 < bs ? X->l - a0 : bs;
        for (int64_t a = 0; a < nb; a++)
            rows[a] = a0 + a;
        if ((rc = km_model_decision_rows(m, X, rows, nb, dec, 1, err)))
            break;
        for (int64_t a = 0; a < nb; a++)
            row(ctx, m, a0 + a, dec + a * nw);
    }
    free(dec);
    free(rows);
    return rc;
}

typedef struct pred_ctx {
    double *pred, *out;
} pred_ctx;

static void pred_row(void *ctx, const km_model *m, int64_t i, const double *dec)
{
    pred_ctx *c = ctx;
    km_model_outputs(m, dec, c->out);
    c->pred[i] = c->out[0];
}

int km_predict(const km_model *m, const km_problem *X, double *pred, km_error *err)
{
    int64_t no = m->nr_output > 0 ? m->nr_output : 1;
    pred_ctx c = {pred, malloc((size_t)no * sizeof *c.out)};
    if (!c.out)
        return km_error_nomem(err, "predictions");
    int rc = km_model_each_decision(m, X, pred_row, &c, "predictions", err);
    free(c.out);
    return rc;
}

/* ---- writing ---- */

/* Text on its way to a FILE: numbers are formatted straight into b and written in 16 KB
 * pieces (one stdio call a piece, not one a number). */
typedef struct obuf {
    FILE *f;
    size_t n;
    char b[16384];
} obuf;

enum { OB_ROOM = 96 }; /* the most one ob_ call writes at a time (index, ':', km_dtoa) */

static void ob_flush(obuf *o)
{
    fwrite_unlocked(o->b, 1, o->n, o->f);
    o->n = 0;
}

static inline char *ob_room(obuf *o)
{
    if (o->n > sizeof o->b - OB_ROOM)
        ob_flush(o);
    return o->b + o->n;
}

/* sep (when not '\0'), then x, shortest round trip (km_dtoa). */
static inline void ob_num(obuf *o, char sep, double x)
{
    char *p = ob_room(o);
    *p = sep;
    p += sep != '\0';
    p += km_dtoa(x, p);
    o->n = (size_t)(p - o->b);
}

static inline void ob_char(obuf *o, char c)
{
    *ob_room(o) = c;
    o->n++;
}

/* " idx:x" (idx >= 1). */
static inline void ob_pair(obuf *o, long long idx, double x)
{
    char d[24], *q = d + sizeof d;
    do
        *--q = (char)('0' + idx % 10);
    while (idx /= 10);
    char *p = ob_room(o);
    *p++ = ' ';
    memcpy(p, q, (size_t)(d + sizeof d - q));
    p += d + sizeof d - q;
    *p++ = ':';
    p += km_dtoa(x, p);
    o->n = (size_t)(p - o->b);
}

void km_mio_put(FILE *f, const char *key, double x)
{
    char b[KM_DTOA_SIZE];
    km_dtoa(x, b);
    fprintf(f, "%s %s\n", key, b);
}

void km_model_put_kernel(FILE *f, const char *prefix, const km_kernel *k)
{
    char key[32];
    fprintf(f, "%skernel %s\n", prefix, km_kernel_name(k->type));
    snprintf(key, sizeof key, "%sgamma", prefix);
    km_mio_put(f, key, k->gamma);
    snprintf(key, sizeof key, "%scoef0", prefix);
    km_mio_put(f, key, k->coef0);
    fprintf(f, "%sdegree %d\n", prefix, k->degree);
}

void km_model_put_svs(FILE *f, const km_problem *S, const double *coef, int nr_w)
{
    obuf o = {.f = f};
    for (int64_t s = 0; s < S->l; s++) {
        for (int k = 0; k < nr_w; k++)
            ob_num(&o, k ? ' ' : '\0', coef[s * nr_w + k]);
        for (int64_t t = S->row_ptr[s]; t < S->row_ptr[s + 1]; t++)
            ob_pair(&o, (long long)S->index[t] + 1, S->value[t]);
        ob_char(&o, '\n');
    }
    ob_flush(&o);
}

void km_model_put_pairs(FILE *f, const int64_t *idx, const double *val, int64_t count)
{
    obuf o = {.f = f};
    for (int64_t t = 0; t < count; t++)
        ob_pair(&o, (long long)idx[t] + 1, val[t]);
    ob_char(&o, '\n');
    ob_flush(&o);
}

void km_model_put_line(FILE *f, const char *head, const double *x, int64_t count,
                       const char *tail)
{
    obuf o = {.f = f};
    if (head)
        fputs(head, f);
    for (int64_t k = 0; k < count; k++)
        ob_num(&o, head || k ? ' ' : '\0', x[k]);
    ob_flush(&o);
    if (tail)
        fprintf(f, " %s", tail);
    fputc('\n', f);
}

void km_model_put_rows(FILE *f, const double *x, int64_t rows, int64_t cols)
{
    obuf o = {.f = f};
    for (int64_t j = 0; j < rows; j++) {
        for (int64_t k = 0; k < cols; k++)
            ob_num(&o, k ? ' ' : '\0', x[j * cols + k]);
        ob_char(&o, '\n');
    }
    ob_flush(&o);
}

/* The whole model text: the envelope's header with the kind's keys after "loss", the
 * labels, the kind's body, "end"; 0 or -1 on a write error. */
static int write_text(FILE *f, const void *ctx)
{
    const km_model *m = ctx;
    fprintf(f, "%s %d\nsolver %s\nloss %s\n", KM_MODEL_FORMAT, KM_MODEL_VERSION, m->kind->name,
            km_loss_name((km_loss)m->loss));
    if (m->kind->write_head && m->kind->write_head(m, f))
        return -1;
    km_mio_put(f, "C", m->C);
    km_mio_put(f, "epsilon", m->eps);
    km_mio_put(f, "bias", m->bias);
    fprintf(f, "nr_feature %d\nnr_class %d\n", (int)m->n, m->nr_class);
    if (m->nr_class > 0) {
        km_model_put_line(f, "labels", m->labels, m->nr_class, NULL);
        km_model_put_line(f, "label_weights", m->label_weight, m->nr_class, NULL);
    }
    if (m->kind->write_body(m, f))
        return -1;
    fputs("end\n", f);
    return ferror(f) ? -1 : 0;
}

int km_model_write(const km_model *m, const char *path, km_error *err)
{
    return km_write_atomic(path, "model", write_text, m, err);
}

/* ---- reading ---- */

/* One header line "key value". */
typedef struct mkey {
    char *key, *val;
    int64_t line;
    int used;
} mkey;

struct km_mio {
    FILE *f;
    const char *path;
    char *line;
    size_t cap;
    int64_t lineno;
    km_error *err;
    const km_model_kind *kind;
    mkey *keys;
    int nkeys;
    int64_t section_line;  /* the line that ended the header */
    int body;              /* the kind's keys were checked: lines are its body */
    int64_t size;          /* the file's bytes (counts are checked against those left) */
};

/* Reads the next line without its newline; returns 0 at end of file. */
static int next_line(km_mio *io)
{
    ssize_t n = getline(&io->line, &io->cap, io->f);
    if (n < 0)
        return 0;
    io->lineno++;
    while (n > 0 && (io->line[n - 1] == '\n' || io->line[n - 1] == '\r'))
        io->line[--n] = '\0';
    return 1;
}

/* KM_EINPUT "PATH:LINE: what", or with has_col "PATH:LINE:COL: what". */
static int mio_vbad(km_mio *io, int has_col, int64_t col, const char *fmt, va_list ap)
{
    char what[768], at[32] = "";
    vsnprintf(what, sizeof what, fmt, ap);
    if (has_col)
        snprintf(at, sizeof at, ":%lld", (long long)col);
    return km_error_set(io->err, KM_EINPUT, "%s:%lld%s: %s", io->path, (long long)io->lineno,
                        at, what);
}

int km_mio_bad(km_mio *io, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mio_vbad(io, 0, 0, fmt, ap);
    va_end(ap);
    return rc;
}

int km_mio_bad_col(km_mio *io, int64_t col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mio_vbad(io, 1, col, fmt, ap);
    va_end(ap);
    return rc;
}

const char *km_mio_path(const km_mio *io)
{
    return io->path;
}

int64_t km_mio_lineno(const km_mio *io)
{
    return io->lineno;
}

void km_mio_set_lineno(km_mio *io, int64_t line)
{
    io->lineno = line;
}

/* The header entry of key, or NULL. */
static mkey *find_key(km_mio *io, const char *key)
{
    for (int q = 0; q < io->nkeys; q++)
        if (strcmp(io->keys[q].key, key) == 0)
            return &io->keys[q];
    return NULL;
}

const char *km_mio_key(km_mio *io, const char *key)
{
    mkey *k = find_key(io, key);
    if (!k) {
        io->lineno = io->section_line;   /* a missing key: said at the header's end */
        return NULL;
    }
    k->used = 1;
    io->lineno = k->line;   /* km_mio_bad on this value names its line */
    return k->val;
}

/* After the kind took its keys, any key left is not one of its. */
static int check_keys(km_mio *io)
{
    io->body = 1;
    io->lineno = io->section_line;
    for (int q = 0; q < io->nkeys; q++)
        if (!io->keys[q].used) {
            io->lineno = io->keys[q].line;
            return km_mio_bad(io, "unknown header key '%.60s' (not one of a %s model)",
                              io->keys[q].key, io->kind->name);
        }
    return KM_OK;
}

int km_mio_count(km_mio *io, const char *name, int64_t count, int64_t bytes_each,
                 const char *what)
{
    if (!io->body && check_keys(io))   /* a key the kind does not take is said first */
        return io->err->code;
    off_t pos = ftello(io->f);
    int64_t left = pos < 0 || pos > io->size ? 0 : io->size - (int64_t)pos;
    if (bytes_each < 1)
        bytes_each = 1;
    if (count >= 0 && count <= left / bytes_each)
        return KM_OK;
    int64_t at = io->lineno;
    mkey *k = find_key(io, name);
    if (k)
        io->lineno = k->line;   /* a header count: said at its line */
    int rc = km_mio_bad(io, "%s %lld needs at least %lld bytes of %s; the file has %lld left",
                        name, (long long)count,
                        count > INT64_MAX / bytes_each ? (long long)INT64_MAX
                                                       : (long long)(count * bytes_each),
                        what, (long long)left);
    io->lineno = at;
    return rc;
}

const char *km_mio_line(km_mio *io)
{
    if (!io->body && check_keys(io))
        return NULL;
    return next_line(io) ? io->line : NULL;
}

int km_mio_truncated(km_mio *io, const char *fmt, ...)
{
    if (io->err->code != KM_OK)   /* a header key that is not the kind's */
        return io->err->code;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return km_error_set(io->err, KM_EINPUT, "%s: truncated model (%s)", io->path, what);
}

int km_mio_number(const char *s, double *x)
{
    return km_model_parse_numbers(s, x, 1);
}

int km_model_parse_numbers(const char *s, double *out, int64_t count)
{
    for (int64_t k = 0; k < count; k++) {
        if (k > 0) {
            if (*s != ' ')
                return -1;
            s++;
        }
        int status;
        const char *end = km_parse_double(s, &out[k], &status);
        if (status != KM_NUM_OK)
            return -1;
        s = end;
    }
    return *s == '\0' ? 0 : -1;
}

int km_model_parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int km_model_get_kernel(km_mio *io, const char *prefix, km_kernel *k, km_error *err)
{
    char key[32];
    const char *v;
    long long degree = 3;
    (void)err;
    *k = (km_kernel){KM_KERNEL_LINEAR, 0, 0, 3, 0};
    snprintf(key, sizeof key, "%skernel", prefix);
    if (!(v = km_mio_key(io, key)))
        return km_mio_bad(io, "kernel model header incomplete (need %s)", key);
    int t = km_kernel_from_name(v);
    if (t < 0)
        return km_mio_bad(io, "unknown %s", key);
    k->type = (km_kernel_type)t;
    snprintf(key, sizeof key, "%sgamma", prefix);
    if ((v = km_mio_key(io, key)) && km_mio_number(v, &k->gamma))
        return km_mio_bad(io, "expected a number");
    snprintf(key, sizeof key, "%scoef0", prefix);
    if ((v = km_mio_key(io, key)) && km_mio_number(v, &k->coef0))
        return km_mio_bad(io, "expected a number");
    snprintf(key, sizeof key, "%sdegree", prefix);
    if ((v = km_mio_key(io, key)) && km_model_parse_int(v, 1, 1000, &degree))
        return km_mio_bad(io, "bad %s", key);
    k->degree = (int)degree;
    return KM_OK;
}

int km_model_check_nr_w(km_mio *io, const km_model *m)
{
    if (m->nr_w != (m->nr_class > 2 ? m->nr_class : 1)) {
        km_mio_key(io, "nr_w");
        return km_mio_bad(io, "nr_w does not match nr_class");
    }
    return KM_OK;
}

int km_model_svs_new(int32_t n, int nw, int64_t nr_sv, int ids, km_problem **sv,
                     double **sv_coef, km_error *err)
{
    *sv = NULL;
    *sv_coef = NULL;
    km_problem *S = calloc(1, sizeof *S);
    double *coef = malloc(((size_t)nr_sv * (size_t)nw + 1) * sizeof *coef);
    if (!S || !coef || !(S->row_ptr = calloc((size_t)nr_sv + 1, sizeof *S->row_ptr)) ||
        !(S->y = calloc((size_t)nr_sv + 1, sizeof *S->y)) ||
        (ids && !(S->id = malloc(((size_t)nr_sv + 1) * sizeof *S->id)))) {
        km_problem_free(S);
        free(coef);
        return km_error_nomem(err, "support vectors");
    }
    S->l = nr_sv;
    S->n = n;
    *sv = S;
    *sv_coef = coef;
    return KM_OK;
}

const char *km_model_sv_line(km_mio *io, int64_t s, int64_t nr_sv, int *rc)
{
    const char *p = km_mio_line(io);
    if (!p)
        *rc = km_mio_truncated(io, "%lld of %lld support vectors", (long long)s,
                               (long long)nr_sv);
    return p;
}

int km_model_svs_end(int rc, km_problem *S, double *coef, km_problem **sv, double **sv_coef)
{
    if (rc != KM_OK) {
        km_problem_free(S);
        free(coef);
        return rc;
    }
    *sv = S;
    *sv_coef = coef;
    return KM_OK;
}

int km_model_get_svs(km_mio *io, const km_model *m, int64_t nr_sv, km_problem **sv,
                     double **sv_coef, km_error *err)
{
    /* a line of nr_w coefficients has at least 2 nr_w characters */
    int rc = km_mio_count(io, "nr_sv", nr_sv, 2 * (int64_t)m->nr_w, "support vector lines");
    if (rc)
        return rc;
    km_problem *S;
    double *coef;
    if ((rc = km_model_svs_new(m->n, m->nr_w, nr_sv, 0, &S, &coef, err)))
        return rc;
    int64_t cap = 0;
    for (int64_t s = 0; s < nr_sv && rc == KM_OK; s++) {
        const char *p = km_model_sv_line(io, s, nr_sv, &rc);
        if (!p)
            break;
        int status;
        for (int q = 0; q < m->nr_w && rc == KM_OK; q++) {
            if (q > 0 && *p++ != ' ')
                rc = km_mio_bad(io, "expected nr_w coefficients");
            else if (p = km_parse_double(p, &coef[s * m->nr_w + q], &status), status != KM_NUM_OK)
                rc = km_mio_bad(io, "expected nr_w coefficients");
        }
        int64_t prev = 0;
        while (rc == KM_OK && *p == ' ') {
            uint64_t idx;
            double v;
            p = km_parse_uint(p + 1, (uint64_t)m->n, &idx, &status);
            if (status != KM_NUM_OK || idx == 0 || (int64_t)idx <= prev || *p++ != ':') {
                rc = km_mio_bad(io, "expected increasing index:value pairs within nr_feature");
                break;
            }
            p = km_parse_double(p, &v, &status);
            if (status != KM_NUM_OK) {
                rc = km_mio_bad(io, "expected a finite feature value");
                break;
            }
            if (km_problem_reserve(S, &cap, S->nnz + 1)) {
                rc = km_error_nomem(err, "support vectors");
                break;
            }
            S->index[S->nnz] = (int32_t)(idx - 1);
            S->value[S->nnz] = v;
            S->nnz++;
            prev = (int64_t)idx;
        }
        if (rc == KM_OK && *p != '\0')
            rc = km_mio_bad(io, "unexpected text in a support vector line");
        S->row_ptr[s + 1] = S->nnz;
    }
    return km_model_svs_end(rc, S, coef, sv, sv_coef);
}

/* Parses the envelope's keys into m (allocated here with the kind). */
static int read_envelope(km_mio *io, km_model **out)
{
    const char *v;
    long long n = -1, nr_class = -1, nr_w = -1;
    double C = 0, eps = 0, bias = -1;
    int loss = -1;
    if ((v = km_mio_key(io, "loss")) && (loss = km_loss_from_name(v)) < 0)
        return km_mio_bad(io, "unknown loss");
    if ((v = km_mio_key(io, "nr_feature")) && km_model_parse_int(v, 0, INT32_MAX, &n))
        return km_mio_bad(io, "bad nr_feature");
    if ((v = km_mio_key(io, "nr_class")) &&
        (km_model_parse_int(v, 0, 1 << 24, &nr_class) || nr_class == 1))
        return km_mio_bad(io, "bad nr_class");
    if ((v = km_mio_key(io, "nr_w")) && km_model_parse_int(v, 1, 1 << 24, &nr_w))
        return km_mio_bad(io, "bad nr_w");
    const char *vc = km_mio_key(io, "C"), *ve = km_mio_key(io, "epsilon");
    const char *vb = km_mio_key(io, "bias");
    const char *vl = km_mio_key(io, "labels"), *vw = km_mio_key(io, "label_weights");
    if (loss < 0 || !vc || km_mio_number(vc, &C) || !ve || km_mio_number(ve, &eps) || !vb ||
        km_mio_number(vb, &bias) || n < 0 || nr_class < 0 || nr_w < 0 ||
        (nr_class > 0 && (!vl || !vw))) {
        io->lineno = io->section_line;
        return km_mio_bad(io, "header incomplete or has a bad value (need loss, C, epsilon, "
                          "bias, nr_feature, nr_class, labels, label_weights, nr_w)");
    }
    if (nr_class == 0 && (vl || vw)) {
        km_mio_key(io, vl ? "labels" : "label_weights");
        return km_mio_bad(io, "labels given with nr_class 0");
    }
    /* nr_class numbers take at least 2 nr_class - 1 characters: no allocation before */
    if (nr_class > 0 && ((int64_t)strlen(vl) < 2 * nr_class - 1 ||
                         (int64_t)strlen(vw) < 2 * nr_class - 1)) {
        km_mio_key(io, (int64_t)strlen(vl) < 2 * nr_class - 1 ? "labels" : "label_weights");
        return km_mio_bad(io, "expected nr_class numbers");
    }
    km_model *m = km_model_alloc(io->kind, loss, (int32_t)n, (int)nr_class, (int)nr_w, io->err);
    if (!m)
        return KM_EINTERNAL;
    m->C = C;
    m->eps = eps;
    m->bias = bias;
    if (nr_class > 0 && (km_model_parse_numbers(vl, m->labels, nr_class) ||
                         km_model_parse_numbers(vw, m->label_weight, nr_class))) {
        km_mio_key(io, km_model_parse_numbers(vl, m->labels, nr_class) ? "labels"
                                                                          : "label_weights");
        km_model_free(m);
        return km_mio_bad(io, "expected nr_class numbers");
    }
    *out = m;
    return KM_OK;
}

/* Reads the header lines up to the section line into io->keys and finds the kind. */
static int read_header(km_mio *io)
{
    int kcap = 0;
    for (;;) {
        if (!next_line(io)) {
            mkey *k = find_key(io, "solver");
            const km_model_kind *kind = km_model_kind_find(k ? k->val : "linear");
            return km_error_set(io->err, KM_EINPUT, "%s: truncated model (no '%s' line)",
                                io->path, kind ? kind->section : "section");
        }
        char *sp = strchr(io->line, ' ');
        if (!sp)
            break;
        *sp = '\0';
        if (find_key(io, io->line))
            return km_mio_bad(io, "header key '%.60s' given twice", io->line);
        if (io->nkeys == kcap) {
            kcap = kcap ? 2 * kcap : 32;
            mkey *grown = realloc(io->keys, (size_t)kcap * sizeof *grown);
            if (!grown)
                return km_error_nomem(io->err, "model header");
            io->keys = grown;
        }
        mkey *k = &io->keys[io->nkeys];
        k->key = strdup(io->line);
        k->val = k->key ? strdup(sp + 1) : NULL;
        k->line = io->lineno;
        k->used = 0;
        if (!k->val) {
            free(k->key);
            return km_error_nomem(io->err, "model header");
        }
        io->nkeys++;
    }
    io->section_line = io->lineno;
    const char *solver = km_mio_key(io, "solver");
    if (!(io->kind = km_model_kind_find(solver ? solver : "linear")))
        return km_mio_bad(io, "unknown solver '%.60s'", solver);
    io->lineno = io->section_line;
    if (strcmp(io->line, io->kind->section) != 0)
        return km_mio_bad(io, "expected 'key value' or '%s'", io->kind->section);
    return KM_OK;
}

/* Reads the header and the kind's body into *out. */
static int read_model(km_mio *io, km_model **out)
{
    if (!next_line(io))
        return km_error_set(io->err, KM_EINPUT, "%s: empty file, not a kmtk model", io->path);
    /* LIBLINEAR's and LIBSVM's own files, known by their first line (model_liblinear.c,
     * model_libsvm.c): their readers take the lines from here */
    int foreign = strncmp(io->line, "solver_type ", 12) == 0 ? 1
                  : strncmp(io->line, "svm_type ", 9) == 0 ? 2 : 0;
    if (foreign) {
        io->body = 1;
        return foreign == 1 ? km_liblinear_read(io, io->line, out, io->err)
                            : km_libsvm_read(io, io->line, out, io->err);
    }
    size_t fl = strlen(KM_MODEL_FORMAT);
    if (strncmp(io->line, KM_MODEL_FORMAT " ", fl + 1) != 0)
        return km_mio_bad(io, "not a kmtk model file (expected first line 'kmtk-model "
                          "VERSION', or LIBLINEAR's 'solver_type' or LIBSVM's 'svm_type')");
    long long version;
    if (km_model_parse_int(io->line + fl + 1, 0, 1000000, &version))
        return km_mio_bad(io, "bad format version");
    if (version != KM_MODEL_VERSION)
        return km_mio_bad(io, "model format version %lld is not supported (this kmtk reads "
                          "version %d)", version, KM_MODEL_VERSION);
    km_model *m = NULL;
    int rc = read_header(io);
    if (rc == KM_OK)
        rc = read_envelope(io, &m);
    if (rc == KM_OK)
        rc = io->kind->read(io, m, io->err);
    if (rc == KM_OK && !io->body)
        rc = check_keys(io);
    if (rc == KM_OK && !next_line(io))
        rc = km_error_set(io->err, KM_EINPUT, "%s: truncated model (no 'end' after the %s)",
                          io->path, io->kind->body_name);
    else if (rc == KM_OK && strcmp(io->line, "end") != 0)
        rc = km_mio_bad(io, "expected 'end' after the %s", io->kind->body_name);
    else if (rc == KM_OK && next_line(io))
        rc = km_mio_bad(io, "unexpected data after 'end'");
    if (rc != KM_OK) {
        km_model_free(m);
        return rc;
    }
    *out = m;
    return KM_OK;
}

/* Opens a model file knowing its size (*size): a regular file as it is, anything else (a
 * pipe) read into memory first (*mem, grown as it comes, freed by the caller after
 * fclose). */
static FILE *open_sized(const char *path, int64_t *size, char **mem, km_error *err)
{
    struct stat sb;
    FILE *f = fopen(path, "r");
    if (!f) {
        km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) {
        *size = (int64_t)sb.st_size;
        return f;
    }
    size_t len = 0, cap = 0;
    char *b = NULL;
    for (;;) {
        if (len == cap) {
            size_t nc = cap ? 2 * cap : 65536;
            char *g = nc > cap ? realloc(b, nc) : NULL;
            if (!g) {
                free(b);
                fclose(f);
                km_error_nomem(err, "model file");
                return NULL;
            }
            b = g;
            cap = nc;
        }
        size_t k = fread(b + len, 1, cap - len, f);
        len += k;
        if (k == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        km_error_set(err, KM_EINPUT, "%s: read error", path);
        return NULL;
    }
    FILE *m = len ? fmemopen(b, len, "r") : fopen("/dev/null", "r");
    if (!m) {
        free(b);
        km_error_set(err, KM_EINTERNAL, "%s: %s", path, strerror(errno));
        return NULL;
    }
    *size = (int64_t)len;
    *mem = b;
    return m;
}

int km_model_read(const char *path, km_model **out, km_error *err)
{
    km_error local;
    km_mio io = {0};
    io.path = path;
    io.err = err ? err : &local;
    km_error_clear(io.err);
    char *mem = NULL;
    io.f = open_sized(path, &io.size, &mem, io.err);
    if (!io.f)
        return io.err->code;
    int rc = read_model(&io, out);
    if (rc == KM_OK && ferror(io.f))
        rc = km_error_set(err, KM_EINPUT, "%s: read error", path);
    for (int q = 0; q < io.nkeys; q++) {
        free(io.keys[q].key);
        free(io.keys[q].val);
    }
    free(io.keys);
    free(io.line);
    fclose(io.f);
    free(mem);
    return rc;
}

/* ---- evaluating ---- */

int km_model_copy_block(const km_problem *X, const int64_t *rows, int64_t a0, int64_t nb,
                        int32_t n, km_problem *B, int64_t *cap, km_error *err)
{
    int64_t need = 0;
    for (int64_t a = 0; a < nb; a++) {
        int64_t i = rows ? rows[a0 + a] : a0 + a;
        need += X->row_ptr[i + 1] - X->row_ptr[i];
    }
    if (km_problem_reserve(B, cap, need))
        return km_error_nomem(err, "prediction block");
    int64_t k = 0;
    B->row_ptr[0] = 0;
    for (int64_t a = 0; a < nb; a++) {
        int64_t i = rows ? rows[a0 + a] : a0 + a;
        for (int64_t t = X->row_ptr[i]; t < X->row_ptr[i + 1] && X->index[t] < n; t++) {
            B->index[k] = X->index[t];
            B->value[k++] = X->value[t];
        }
        B->row_ptr[a + 1] = k;
    }
    B->l = nb;
    B->nnz = k;
    B->n = n;
    return KM_OK;
}
