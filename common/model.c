/* model.c - see model.h. Text format: "kmtk-model 1", "key value" header lines, "w",
 * then n (+1) lines of nr_w numbers, then "end". Numbers are written %.17g (round-trip). */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

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
    km_kdata_free(m->sv_data);
    km_problem_free(m->sv);
    free(m->sv_coef);
    free(m);
}

int km_model_set_kernel(km_model *m, const km_kernel *k, km_problem *sv, double *sv_coef,
                        km_error *err)
{
    free(m->w);
    m->w = NULL;
    m->has_kernel = 1;
    m->kernel = *k;
    m->sv = sv;
    m->sv_coef = sv_coef;
    m->bias = -1;
    m->sv_data = km_kdata_new(sv, NULL, sv->l, err);
    return m->sv_data ? KM_OK : err->code;
}

/* Writes the whole model text to f; returns 0 or -1 on a write error. */
static int write_text(const km_model *m, FILE *f)
{
    fprintf(f, "%s %d\n", KM_MODEL_FORMAT, KM_MODEL_VERSION);
    fprintf(f, "solver %s\nloss %s\n", m->has_kernel ? "kernel" : "linear",
            km_loss_name(m->loss));
    if (m->has_kernel)
        fprintf(f, "kernel %s\ngamma %.17g\ncoef0 %.17g\ndegree %d\n",
                km_kernel_name(m->kernel.type), m->kernel.gamma, m->kernel.coef0,
                m->kernel.degree);
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
    if (m->has_kernel) {
        const km_problem *S = m->sv;
        fprintf(f, "nr_w %d\nnr_sv %lld\nsv\n", m->nr_w, (long long)S->l);
        for (int64_t s = 0; s < S->l; s++) {
            for (int k = 0; k < m->nr_w; k++)
                fprintf(f, k ? " %.17g" : "%.17g", m->sv_coef[s * m->nr_w + k]);
            for (int64_t t = S->row_ptr[s]; t < S->row_ptr[s + 1]; t++)
                fprintf(f, " %d:%.17g", (int)S->index[t] + 1, S->value[t]);
            fputc('\n', f);
        }
        fputs("end\n", f);
        return ferror(f) ? -1 : 0;
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

/* Reads nr_sv lines "coef_1 .. coef_nr_w idx:val ..." after "sv" and makes m a kernel
 * model with them. */
static int read_svs(mreader *r, km_model *m, const km_kernel *k, int64_t nr_sv)
{
    km_problem *S = calloc(1, sizeof *S);
    double *coef = malloc(((size_t)nr_sv * (size_t)m->nr_w + 1) * sizeof *coef);
    int64_t cap = 0;
    if (!S || !coef || !(S->row_ptr = calloc((size_t)nr_sv + 1, sizeof *S->row_ptr)) ||
        !(S->y = calloc((size_t)nr_sv + 1, sizeof *S->y))) {
        km_problem_free(S);
        free(coef);
        return km_error_nomem(r->err, "support vectors");
    }
    S->l = nr_sv;
    S->n = m->n;
    int rc = KM_OK;
    for (int64_t s = 0; s < nr_sv && rc == KM_OK; s++) {
        if (!next_line(r)) {
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (%lld of %lld support "
                              "vectors)", r->path, (long long)s, (long long)nr_sv);
            break;
        }
        const char *p = r->line;
        int status;
        for (int q = 0; q < m->nr_w && rc == KM_OK; q++) {
            if (q > 0 && *p++ != ' ')
                rc = bad(r, "expected nr_w coefficients");
            else if (p = km_parse_double(p, &coef[s * m->nr_w + q], &status), status != KM_NUM_OK)
                rc = bad(r, "expected nr_w coefficients");
        }
        int64_t prev = 0;
        while (rc == KM_OK && *p == ' ') {
            uint64_t idx;
            double v;
            p = km_parse_uint(p + 1, (uint64_t)m->n, &idx, &status);
            if (status != KM_NUM_OK || idx == 0 || (int64_t)idx <= prev || *p++ != ':') {
                rc = bad(r, "expected increasing index:value pairs within nr_feature");
                break;
            }
            p = km_parse_double(p, &v, &status);
            if (status != KM_NUM_OK) {
                rc = bad(r, "expected a finite feature value");
                break;
            }
            if (km_problem_reserve(S, &cap, S->nnz + 1)) {
                rc = km_error_nomem(r->err, "support vectors");
                break;
            }
            S->index[S->nnz] = (int32_t)(idx - 1);
            S->value[S->nnz] = v;
            S->nnz++;
            prev = (int64_t)idx;
        }
        if (rc == KM_OK && *p != '\0')
            rc = bad(r, "unexpected text in a support vector line");
        S->row_ptr[s + 1] = S->nnz;
    }
    if (rc != KM_OK) {
        km_problem_free(S);
        free(coef);
        return rc;
    }
    return km_model_set_kernel(m, k, S, coef, r->err);
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
    int loss = -1, have_C = 0, have_eps = 0, have_bias = 0, kernel_solver = 0;
    long long n = -1, nr_class = -1, nr_w = -1, nr_sv = -1, degree = 3;
    int ktype = -1;
    double gamma = 0, coef0 = 0;
    double C = 0, eps = 0, bias = -1;
    double *labels = NULL, *lw = NULL;
    int rc = KM_OK;
    for (;;) {
        if (!next_line(r)) {
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (no 'w' line)", r->path);
            break;
        }
        if (strcmp(r->line, kernel_solver ? "sv" : "w") == 0)
            break;
        char *sp = strchr(r->line, ' ');
        if (!sp) {
            rc = bad(r, "expected 'key value'");
            break;
        }
        *sp = '\0';
        const char *key = r->line, *val = sp + 1;
        if (strcmp(key, "solver") == 0) {
            if (strcmp(val, "linear") != 0 && strcmp(val, "kernel") != 0) {
                rc = bad(r, "unknown solver (expected 'linear' or 'kernel')");
                break;
            }
            kernel_solver = strcmp(val, "kernel") == 0;
        } else if (strcmp(key, "kernel") == 0) {
            if ((ktype = km_kernel_from_name(val)) < 0) {
                rc = bad(r, "unknown kernel");
                break;
            }
        } else if (strcmp(key, "gamma") == 0 || strcmp(key, "coef0") == 0) {
            if (parse_numbers(val, key[0] == 'g' ? &gamma : &coef0, 1)) {
                rc = bad(r, "expected a number");
                break;
            }
        } else if (strcmp(key, "degree") == 0) {
            if (parse_int(val, 1, 1000, &degree)) {
                rc = bad(r, "bad degree");
                break;
            }
        } else if (strcmp(key, "nr_sv") == 0) {
            if (parse_int(val, 0, INT64_MAX / 2, &nr_sv)) {
                rc = bad(r, "bad nr_sv");
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
        else if (kernel_solver && (ktype < 0 || nr_sv < 0))
            rc = bad(r, "kernel model header incomplete (need kernel, nr_sv)");
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
        if (kernel_solver) {
            km_kernel k = {(km_kernel_type)ktype, gamma, coef0, (int)degree};
            rc = read_svs(r, m, &k, nr_sv);
        }
        int64_t rows = kernel_solver ? 0 : n + (bias >= 0);
        for (int64_t j = 0; j < rows && rc == KM_OK; j++) {
            if (!next_line(r))
                rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (%lld of %lld "
                                  "weight lines)", r->path, (long long)j, (long long)rows);
            else if (parse_numbers(r->line, m->w + j * nr_w, nr_w))
                rc = bad(r, "expected nr_w weights");
        }
        if (rc == KM_OK && (!next_line(r) || strcmp(r->line, "end") != 0))
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated or damaged model (no 'end' "
                              "after the %s)", r->path, kernel_solver ? "support vectors"
                              : "weights");
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

/* Copies rows[a0..a0+nb) of X into B with the features >= n dropped (as LIBLINEAR's predict
 * ignores them); B's arrays are reused across calls. */
static int copy_block(const km_problem *X, const int64_t *rows, int64_t a0, int64_t nb,
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

int km_model_decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                           int64_t count, double *dec, int threads, km_error *err)
{
    int nw = m->nr_w;
    if (!rows)
        count = X->l;
    if (!m->has_kernel || m->sv->l == 0) {
        for (int64_t a = 0; a < count; a++) {
            int64_t i = rows ? rows[a] : a, b = X->row_ptr[i];
            if (m->has_kernel)
                memset(dec + a * nw, 0, (size_t)nw * sizeof *dec);
            else
                km_model_decision(m, X->index + b, X->value + b, X->row_ptr[i + 1] - b,
                                  dec + a * nw);
        }
        return KM_OK;
    }
    int64_t nsv = m->sv->l;
    int64_t bs = (int64_t)((64 << 20) / 8) / nsv;   /* a 64 MB block of kernel values */
    bs = bs < 1 ? 1 : bs > 1024 ? 1024 : bs;
    km_problem B = {0};
    int64_t cap = 0;
    double *Kb = malloc((size_t)(bs * nsv) * sizeof *Kb);
    B.row_ptr = malloc((size_t)(bs + 1) * sizeof *B.row_ptr);
    int rc = Kb && B.row_ptr ? KM_OK : km_error_nomem(err, "prediction block");
    for (int64_t a0 = 0; a0 < count && rc == KM_OK; a0 += bs) {
        int64_t nb = count - a0 < bs ? count - a0 : bs;
        if ((rc = copy_block(X, rows, a0, nb, m->n, &B, &cap, err)))
            break;
        km_kdata *T = km_kdata_new(&B, NULL, nb, err);
        if (!T) {
            rc = err->code;
            break;
        }
        rc = km_kernel_block(&m->kernel, T, NULL, nb, m->sv_data, NULL, nsv, Kb, threads, err);
        km_kdata_free(T);
        if (rc == KM_OK)   /* dec = K(block, sv) * sv_coef */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, nw, (int)nsv, 1, Kb,
                        (int)nsv, m->sv_coef, nw, 0, dec + a0 * nw, nw);
    }
    free(Kb);
    free(B.row_ptr);
    free(B.index);
    free(B.value);
    return rc;
}
