/* model.c - see model.h. Text format: "kmtk-model 1", "key value" header lines, "w",
 * then n (+1) lines of nr_w numbers, then "end". Numbers are written %.17g (round-trip). */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numparse.h"

km_model *km_model_new(km_loss loss, int32_t n, int nr_class, int nr_w, km_error *err)
{
    km_model *m = calloc(1, sizeof *m);
    if (!m) {
        km_error_nomem(err, "model");
        return NULL;
    }
    m->loss = loss;
    m->bias = -1;
    m->n = n;
    m->nr_class = nr_class;
    m->nr_w = nr_w;
    m->labels = calloc((size_t)nr_class + 1, sizeof *m->labels);
    m->label_weight = calloc((size_t)nr_class + 1, sizeof *m->label_weight);
    m->w = calloc(((size_t)n + 1) * (size_t)nr_w, sizeof *m->w);
    if (!m->labels || !m->label_weight || !m->w) {
        km_model_free(m);
        km_error_nomem(err, "model weights");
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
    free(m->labels);
    free(m->label_weight);
    free(m->w);
    free(m);
}

/* Writes the whole model text to f; returns 0 or -1 on a write error. */
static int write_text(const km_model *m, FILE *f)
{
    fprintf(f, "%s %d\n", KM_MODEL_FORMAT, KM_MODEL_VERSION);
    fprintf(f, "solver linear\nloss %s\n", km_loss_name(m->loss));
    fprintf(f, "C %.17g\nepsilon %.17g\nbias %.17g\n", m->C, m->eps, m->bias);
    fprintf(f, "nr_feature %d\nnr_class %d\n", (int)m->n, m->nr_class);
    if (m->nr_class > 0) {
        fputs("labels", f);
        for (int k = 0; k < m->nr_class; k++)
            fprintf(f, " %.17g", m->labels[k]);
        fputs("\nlabel_weights", f);
        for (int k = 0; k < m->nr_class; k++)
            fprintf(f, " %.17g", m->label_weight[k]);
        fputc('\n', f);
    }
    fprintf(f, "nr_w %d\nw\n", m->nr_w);
    int64_t rows = (int64_t)m->n + (m->bias >= 0);
    for (int64_t j = 0; j < rows; j++) {
        for (int k = 0; k < m->nr_w; k++)
            fprintf(f, k ? " %.17g" : "%.17g", m->w[j * m->nr_w + k]);
        fputc('\n', f);
    }
    fputs("end\n", f);
    return ferror(f) ? -1 : 0;
}

int km_model_write(const km_model *m, const char *path, km_error *err)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp)
        return km_error_nomem(err, "model file name");
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
    if (f) {
        static char buf[1 << 16];
        setvbuf(f, buf, _IOFBF, sizeof buf);
        bad = write_text(m, f) != 0;
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
        km_error_set(err, KM_EINPUT, "%s: cannot write model: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return KM_EINPUT;
    }
    free(tmp);
    return KM_OK;
}

/* ---- reading ---- */

typedef struct mreader {
    FILE *f;
    const char *path;
    char *line;
    size_t cap;
    int64_t lineno;
    km_error *err;
} mreader;

/* Reads the next line without its newline; returns 0 at end of file. */
static int next_line(mreader *r)
{
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0)
        return 0;
    r->lineno++;
    while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
        r->line[--n] = '\0';
    return 1;
}

static int bad(mreader *r, const char *what)
{
    return km_error_set(r->err, KM_EINPUT, "%s:%lld: %s", r->path, (long long)r->lineno,
                        what);
}

/* Parses count numbers separated by single spaces from s; 0 on success. */
static int parse_numbers(const char *s, double *out, int64_t count)
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

/* Parses an integer value in [lo, hi]; 0 on success. */
static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Reads the header and weights into *out. */
static int read_model(mreader *r, km_model **out)
{
    char msg[160];
    if (!next_line(r))
        return km_error_set(r->err, KM_EINPUT, "%s: empty file, not a kmtk model", r->path);
    size_t fl = strlen(KM_MODEL_FORMAT);
    if (strncmp(r->line, KM_MODEL_FORMAT " ", fl + 1) != 0)
        return bad(r, "not a kmtk model file (expected first line 'kmtk-model VERSION')");
    long long version;
    if (parse_int(r->line + fl + 1, 0, 1000000, &version))
        return bad(r, "bad format version");
    if (version != KM_MODEL_VERSION) {
        snprintf(msg, sizeof msg, "model format version %lld is not supported (this kmtk "
                 "reads version %d)", version, KM_MODEL_VERSION);
        return bad(r, msg);
    }
    int loss = -1, have_C = 0, have_eps = 0, have_bias = 0;
    long long n = -1, nr_class = -1, nr_w = -1;
    double C = 0, eps = 0, bias = -1;
    double *labels = NULL, *lw = NULL;
    int rc = KM_OK;
    for (;;) {
        if (!next_line(r)) {
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (no 'w' line)", r->path);
            break;
        }
        if (strcmp(r->line, "w") == 0)
            break;
        char *sp = strchr(r->line, ' ');
        if (!sp) {
            rc = bad(r, "expected 'key value'");
            break;
        }
        *sp = '\0';
        const char *key = r->line, *val = sp + 1;
        if (strcmp(key, "solver") == 0) {
            if (strcmp(val, "linear") != 0) {
                rc = bad(r, "unknown solver (expected 'linear')");
                break;
            }
        } else if (strcmp(key, "loss") == 0) {
            if ((loss = km_loss_from_name(val)) < 0) {
                rc = bad(r, "unknown loss");
                break;
            }
        } else if (strcmp(key, "C") == 0) {
            have_C = !parse_numbers(val, &C, 1);
        } else if (strcmp(key, "epsilon") == 0) {
            have_eps = !parse_numbers(val, &eps, 1);
        } else if (strcmp(key, "bias") == 0) {
            have_bias = !parse_numbers(val, &bias, 1);
        } else if (strcmp(key, "nr_feature") == 0) {
            if (parse_int(val, 0, INT32_MAX - 1, &n)) {
                rc = bad(r, "bad nr_feature");
                break;
            }
        } else if (strcmp(key, "nr_class") == 0) {
            if (parse_int(val, 0, 1 << 24, &nr_class) || nr_class == 1) {
                rc = bad(r, "bad nr_class");
                break;
            }
        } else if (strcmp(key, "nr_w") == 0) {
            if (parse_int(val, 1, 1 << 24, &nr_w)) {
                rc = bad(r, "bad nr_w");
                break;
            }
        } else if (strcmp(key, "labels") == 0 || strcmp(key, "label_weights") == 0) {
            double **dst = strcmp(key, "labels") == 0 ? &labels : &lw;
            if (nr_class < 0 || *dst) {
                rc = bad(r, "labels given before nr_class, or twice");
                break;
            }
            *dst = malloc(((size_t)nr_class + 1) * sizeof **dst);
            if (!*dst) {
                rc = km_error_nomem(r->err, "model labels");
                break;
            }
            if (parse_numbers(val, *dst, nr_class)) {
                rc = bad(r, "expected nr_class numbers");
                break;
            }
        } else {
            snprintf(msg, sizeof msg, "unknown header key '%.60s'", key);
            rc = bad(r, msg);
            break;
        }
    }
    if (rc == KM_OK) {
        if (loss < 0 || !have_C || !have_eps || !have_bias || n < 0 || nr_class < 0 ||
            nr_w < 0 || (nr_class > 0 && (!labels || !lw)))
            rc = bad(r, "header incomplete or has a bad value (need loss, C, epsilon, bias, "
                        "nr_feature, nr_class, labels, label_weights, nr_w)");
        else if (nr_w != (nr_class > 2 ? nr_class : 1))
            rc = bad(r, "nr_w does not match nr_class");
    }
    km_model *m = NULL;
    if (rc == KM_OK && !(m = km_model_new(loss, (int32_t)n, (int)nr_class, (int)nr_w, r->err)))
        rc = KM_EINTERNAL;
    if (rc == KM_OK) {
        m->C = C;
        m->eps = eps;
        m->bias = bias;
        if (nr_class > 0) {
            memcpy(m->labels, labels, (size_t)nr_class * sizeof *labels);
            memcpy(m->label_weight, lw, (size_t)nr_class * sizeof *lw);
        }
        int64_t rows = n + (bias >= 0);
        for (int64_t j = 0; j < rows && rc == KM_OK; j++) {
            if (!next_line(r))
                rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (%lld of %lld "
                                  "weight lines)", r->path, (long long)j, (long long)rows);
            else if (parse_numbers(r->line, m->w + j * nr_w, nr_w))
                rc = bad(r, "expected nr_w weights");
        }
        if (rc == KM_OK && (!next_line(r) || strcmp(r->line, "end") != 0))
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated or damaged model (no 'end' "
                              "after the weights)", r->path);
        if (rc == KM_OK && next_line(r))
            rc = bad(r, "unexpected data after 'end'");
    }
    free(labels);
    free(lw);
    if (rc != KM_OK) {
        km_model_free(m);
        return rc;
    }
    *out = m;
    return KM_OK;
}

int km_model_read(const char *path, km_model **out, km_error *err)
{
    mreader r = {0};
    r.path = path;
    r.err = err;
    r.f = fopen(path, "r");
    if (!r.f)
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    int rc = read_model(&r, out);
    if (rc == KM_OK && ferror(r.f))
        rc = km_error_set(err, KM_EINPUT, "%s: read error", path);
    free(r.line);
    fclose(r.f);
    return rc;
}

void km_model_decision(const km_model *m, const int32_t *index, const double *value,
                       int64_t nnz, double *dec)
{
    int nw = m->nr_w;
    for (int k = 0; k < nw; k++)
        dec[k] = m->bias >= 0 ? m->bias * m->w[(int64_t)m->n * nw + k] : 0;
    for (int64_t t = 0; t < nnz; t++) {
        if (index[t] >= m->n)
            continue;   /* features the model never saw, as LIBLINEAR */
        const double *wj = m->w + (int64_t)index[t] * nw;
        for (int k = 0; k < nw; k++)
            dec[k] += value[t] * wj[k];
    }
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
