/* model.c - see model.h. Text format (doc/model-format.md): "kmtk-model 1", "key value"
 * header lines, then the weights ("w"), the support vectors ("sv") or the basis kernels,
 * intercepts and support vectors (rls2), then "end". Numbers are written by km_dtoa: the
 * shortest decimal that reads back bit for bit. */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "atomic.h"
#include "dtoa.h"
#include "numparse.h"

/* The support vectors on one feature subset of an RLS2 model and the kernels on it. */
typedef struct mkl_group {
    const km_basis *subset;   /* a kernel on the subset (its nfeat, feat) */
    km_problem *sv;           /* the projected support vectors; NULL: all features, m->sv */
    km_kdata *data;           /* sv (or m->sv) prepared for kernel blocks */
    int first, count;         /* the kernels order[first .. first + count) */
} mkl_group;

struct km_mkl_cache {
    int ngroups;
    mkl_group *g;
    int *order;               /* basis indices, grouped by feature subset */
};

static void mkl_cache_free(km_mkl_cache *c)
{
    if (!c)
        return;
    for (int g = 0; g < c->ngroups; g++) {
        km_kdata_free(c->g[g].data);
        km_problem_free(c->g[g].sv);
    }
    free(c->g);
    free(c->order);
    free(c);
}

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
    mkl_cache_free(m->mkl);
    km_problem_free(m->sv);
    free(m->sv_coef);
    km_basis_set_free(&m->basis);
    free(m->basis_s);
    free(m->basis_d);
    free(m->intercept);
    free(m->output_map);
    free(m->task_id);
    free(m->task_ptr);
    free(m->task_row);
    free(m->task_coef);
    free(m->task_kern);
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

int km_model_set_okl(km_model *m, const km_kernel *k, km_problem *sv, double *A,
                     int64_t nr_output, double *B, double lambda, km_error *err)
{
    m->has_okl = 1;
    m->loss = KM_LOSS_RLS;
    m->nr_output = nr_output;
    m->output_map = B;
    m->lambda = lambda;
    int rc = km_model_set_kernel(m, k, sv, A, err);
    if (rc == KM_OK && !B && nr_output != m->nr_w)
        rc = km_error_set(err, KM_EUSAGE, "okl model: the identity output map needs nr_w = "
                          "nr_output");
    return rc;
}

int km_model_set_mtl(km_model *m, const km_kernel *K, const km_kernel *Kt, double alpha,
                     double lambda, km_problem *sv, double *cbar, int64_t nr_task,
                     int64_t *task_id, int64_t *task_ptr, int64_t *task_row, double *task_coef,
                     km_kernel *task_kern, km_error *err)
{
    m->has_mtl = 1;
    m->loss = KM_LOSS_RLS;
    m->alpha = alpha;
    m->lambda = lambda;
    m->task_kernel = *Kt;
    m->nr_task = nr_task;
    m->task_id = task_id;
    m->task_ptr = task_ptr;
    m->task_row = task_row;
    m->task_coef = task_coef;
    m->task_kern = task_kern;
    int rc = km_model_set_kernel(m, K, sv, cbar, err);
    if (rc)
        return rc;
    if (!(alpha >= 0 && alpha <= 1) || m->nr_w != 1 || m->nr_class != 0)
        return km_error_set(err, KM_EUSAGE, "mtl model: alpha must be in [0, 1] (got %g), "
                            "nr_w 1, nr_class 0", alpha);
    if (km_kernel_check(K, m->n, err) || km_kernel_check(Kt, m->n, err))
        return err ? err->code : KM_EUSAGE;
    if (task_ptr[0] != 0)
        return km_error_set(err, KM_EUSAGE, "mtl model: task offsets start at 0");
    for (int64_t t = 0; t < nr_task; t++) {
        if (task_kern && km_kernel_check(&task_kern[t], m->n, err)) {   /* K~_t of (5.3) */
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            return km_error_set(err, KM_EUSAGE, "mtl model: task %lld's kernel: %s",
                                (long long)task_id[t], msg);
        }
        if (task_id[t] == INT64_MIN || (t && task_id[t] <= task_id[t - 1]) ||
            task_ptr[t + 1] < task_ptr[t])
            return km_error_set(err, KM_EUSAGE, "mtl model: task %lld: ids must increase and "
                                "offsets not decrease", (long long)t + 1);
        for (int64_t k = task_ptr[t]; k < task_ptr[t + 1]; k++)
            if (task_row[k] < 0 || task_row[k] >= sv->l || !isfinite(task_coef[k]))
                return km_error_set(err, KM_EUSAGE, "mtl model: task %lld: row %lld outside "
                                    "1..%lld or coefficient not finite", (long long)task_id[t],
                                    (long long)task_row[k] + 1, (long long)sv->l);
    }
    return KM_OK;
}

void km_model_outputs(const km_model *m, const double *codes, double *out)
{
    if (!m->output_map) {
        memcpy(out, codes, (size_t)m->nr_output * sizeof *out);
        return;
    }
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (blasint)m->nr_output, m->nr_w, 1, m->output_map,
                m->nr_w, codes, 1, 0, out, 1);
}

/* Orders pointers to basis kernels by feature subset (0: the same subset). */
static int subset_cmp(const void *a, const void *b)
{
    const km_basis *x = *(const km_basis *const *)a, *y = *(const km_basis *const *)b;
    if (x->nfeat != y->nfeat)
        return x->nfeat < y->nfeat ? -1 : 1;
    for (int32_t t = 0; t < x->nfeat; t++)
        if (x->feat[t] != y->feat[t])
            return x->feat[t] < y->feat[t] ? -1 : 1;
    return 0;
}

/* Orders pointers to basis kernels by feature subset, then position: a fixed order. */
static int kernel_cmp(const void *a, const void *b)
{
    const km_basis *x = *(const km_basis *const *)a, *y = *(const km_basis *const *)b;
    int c = subset_cmp(a, b);
    return c ? c : (x > y) - (x < y);
}

/* Groups m's basis kernels by feature subset and projects the support vectors on each. */
static int mkl_cache_build(km_model *m, km_error *err)
{
    int nb = m->basis.m;
    km_mkl_cache *c = calloc(1, sizeof *c);
    const km_basis **by = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *by);
    if (!c || !by || !(c->order = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *c->order)) ||
        !(c->g = calloc((size_t)(nb > 0 ? nb : 1), sizeof *c->g))) {
        free(by);
        mkl_cache_free(c);
        return km_error_nomem(err, "rls2 model");
    }
    m->mkl = c;
    for (int k = 0; k < nb; k++)
        by[k] = &m->basis.b[k];
    qsort(by, (size_t)nb, sizeof *by, kernel_cmp);
    for (int k = 0; k < nb; k++) {
        c->order[k] = (int)(by[k] - m->basis.b);
        if (k > 0 && subset_cmp(&by[k], &by[k - 1]) == 0) {
            c->g[c->ngroups - 1].count++;
            continue;
        }
        mkl_group *g = &c->g[c->ngroups++];
        g->subset = by[k];
        g->first = k;
        g->count = 1;
    }
    free(by);
    for (int q = 0; q < c->ngroups; q++) {
        mkl_group *g = &c->g[q];
        if (g->subset->nfeat && !(g->sv = km_basis_project(g->subset, m->sv, NULL, 0, err)))
            return err->code;
        if (!(g->data = km_kdata_new(g->sv ? g->sv : m->sv, NULL, m->sv->l, err)))
            return err->code;
    }
    return KM_OK;
}

int km_model_set_mkl(km_model *m, km_basis_set *basis, double *s, double *d, double *intercept,
                     km_problem *sv, double *sv_coef, km_error *err)
{
    free(m->w);
    m->w = NULL;
    m->has_mkl = 1;
    m->loss = KM_LOSS_RLS;
    m->bias = -1;
    m->basis = *basis;
    basis->m = 0;
    basis->b = NULL;
    m->basis_s = s;
    m->basis_d = d;
    m->intercept = intercept;
    m->sv = sv;
    m->sv_coef = sv_coef;
    for (int k = 0; k < m->basis.m; k++) {
        const km_basis *b = &m->basis.b[k];
        km_error kerr;
        if (km_kernel_check(&b->kernel, b->nfeat ? b->nfeat : m->n, &kerr))
            return km_error_set(err, KM_EUSAGE, "rls2 model: basis kernel %d: %s", k + 1,
                                kerr.msg);
        for (int32_t t = 0; t < b->nfeat; t++)
            if (b->feat[t] < 0 || b->feat[t] >= m->n || (t > 0 && b->feat[t] <= b->feat[t - 1]))
                return km_error_set(err, KM_EUSAGE, "rls2 model: basis kernel %d: feature "
                                    "indices must increase within 1..%d", k + 1, (int)m->n);
        for (int64_t j = (int64_t)k * m->nr_w; j < (int64_t)(k + 1) * m->nr_w; j++) {
            double sk = s[j], dk = d[j];
            if (!(sk >= 0 && dk >= 0 && isfinite(sk) && isfinite(dk)))
                return km_error_set(err, KM_EUSAGE, "rls2 model: basis kernel %d: scale and "
                                    "weight must be finite and non-negative", k + 1);
        }
    }
    return mkl_cache_build(m, err);
}

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

static void ob_str(obuf *o, const char *s)
{
    size_t len = strlen(s);
    if (len > sizeof o->b - OB_ROOM) {
        ob_flush(o);
        fwrite_unlocked(s, 1, len, o->f);
        return;
    }
    if (o->n + len > sizeof o->b)
        ob_flush(o);
    memcpy(o->b + o->n, s, len);
    o->n += len;
}

/* The decimal digits of v written before end; returns where they start. */
static char *int_text(unsigned long long v, char *end)
{
    do
        *--end = (char)('0' + v % 10);
    while (v /= 10);
    return end;
}

/* sep, then the integer v. */
static inline void ob_int(obuf *o, char sep, long long v)
{
    char d[24], *q = int_text(v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v,
                              d + sizeof d);
    if (v < 0)
        *--q = '-';
    char *p = ob_room(o);
    *p = sep;
    p += sep != '\0';
    memcpy(p, q, (size_t)(d + sizeof d - q));
    o->n = (size_t)(p + (d + sizeof d - q) - o->b);
}

/* " idx:x" (idx >= 0). */
static inline void ob_pair(obuf *o, long long idx, double x)
{
    ob_int(o, ' ', idx);
    char *p = o->b + o->n;
    *p++ = ':';
    p += km_dtoa(x, p);
    o->n = (size_t)(p - o->b);
}

/* Writes "key x\n" to f. */
static void put_key(FILE *f, const char *key, double x)
{
    char b[KM_DTOA_SIZE];
    km_dtoa(x, b);
    fprintf(f, "%s %s\n", key, b);
}

/* Writes the support vector lines "coef_1 .. coef_nr_w idx:val ..." of m to f. */
static void write_svs(const km_model *m, FILE *f)
{
    const km_problem *S = m->sv;
    obuf o = {.f = f};
    for (int64_t s = 0; s < S->l; s++) {
        for (int k = 0; k < m->nr_w; k++)
            ob_num(&o, k ? ' ' : '\0', m->sv_coef[s * m->nr_w + k]);
        for (int64_t t = S->row_ptr[s]; t < S->row_ptr[s + 1]; t++)
            ob_pair(&o, (long long)S->index[t] + 1, S->value[t]);
        ob_char(&o, '\n');
    }
    ob_flush(&o);
}

/* Writes the basis section, intercepts and support vectors of an RLS2 model; -1 when out
 * of memory (errno ENOMEM). */
static int write_mkl(const km_model *m, FILE *f)
{
    int nw = m->nr_w;
    char *spec = NULL;
    size_t cap = 0;
    fprintf(f, "nr_w %d\nnr_basis %d\nbasis\n", nw, m->basis.m);
    obuf o = {.f = f};
    for (int k = 0; k < m->basis.m; k++) {
        size_t need = (size_t)km_basis_format(&m->basis.b[k], spec, cap) + 1;
        if (need > cap) {
            char *grown = realloc(spec, need);
            if (!grown) {
                free(spec);
                ob_flush(&o);
                return -1;
            }
            spec = grown;
            cap = need;
            km_basis_format(&m->basis.b[k], spec, cap);
        }
        for (int j = 0; j < nw; j++)
            ob_num(&o, j ? ' ' : '\0', m->basis_s[(int64_t)k * nw + j]);
        for (int j = 0; j < nw; j++)
            ob_num(&o, ' ', m->basis_d[(int64_t)k * nw + j]);
        ob_char(&o, ' ');
        ob_str(&o, spec);
        ob_char(&o, '\n');
    }
    free(spec);
    ob_str(&o, "intercept");
    for (int j = 0; j < nw; j++)
        ob_num(&o, ' ', m->intercept[j]);
    ob_flush(&o);
    fprintf(f, "\nnr_sv %lld\nsv\n", (long long)m->sv->l);
    write_svs(m, f);
    return 0;
}

/* Writes the "output_map" section of an OKL model: "identity", or nr_output rows of B. */
static void write_output_map(const km_model *m, FILE *f)
{
    if (!m->output_map) {
        fputs("output_map identity\n", f);
        return;
    }
    fputs("output_map\n", f);
    obuf o = {.f = f};
    for (int64_t j = 0; j < m->nr_output; j++) {
        const double *b = m->output_map + j * m->nr_w;
        for (int k = 0; k < m->nr_w; k++)
            ob_num(&o, k ? ' ' : '\0', b[k]);
        ob_char(&o, '\n');
    }
    ob_flush(&o);
}

/* Task t's kernel K~_t in the syntax of km_basis_parse (features=all) into buf[160]. */
static void task_kernel_text(const km_model *m, int64_t t, char *buf)
{
    km_basis b = {t < 0 || !m->task_kern ? m->task_kernel : m->task_kern[t], 0, NULL};
    km_basis_format(&b, buf, 160);
}

/* The tasks whose kernel K~_t differs from the default (as written). */
static int64_t task_kernels_differ(const km_model *m)
{
    char d[160], k[160];
    int64_t cnt = 0;
    task_kernel_text(m, -1, d);
    for (int64_t t = 0; t < m->nr_task && m->task_kern; t++) {
        task_kernel_text(m, t, k);
        cnt += strcmp(d, k) != 0;
    }
    return cnt;
}

/* Writes the "tasks" section of an MTL model: the tasks with their own kernel (when any)
 * "task_kernels K" and K lines "ID KERNEL"; "nr_task M", "tasks", then per task
 * "ID L row:coef ..." (rows 1-based). */
static void write_tasks(const km_model *m, FILE *f)
{
    int64_t nk = task_kernels_differ(m);
    char d[160], kt[160];
    task_kernel_text(m, -1, d);
    if (nk)
        fprintf(f, "task_kernels %lld\n", (long long)nk);
    for (int64_t t = 0; t < m->nr_task && nk; t++) {
        task_kernel_text(m, t, kt);
        if (strcmp(d, kt))
            fprintf(f, "%lld %s\n", (long long)m->task_id[t], kt);
    }
    fprintf(f, "nr_task %lld\ntasks\n", (long long)m->nr_task);
    obuf o = {.f = f};
    for (int64_t t = 0; t < m->nr_task; t++) {
        ob_int(&o, '\0', (long long)m->task_id[t]);
        ob_int(&o, ' ', (long long)(m->task_ptr[t + 1] - m->task_ptr[t]));
        for (int64_t k = m->task_ptr[t]; k < m->task_ptr[t + 1]; k++)
            ob_pair(&o, (long long)m->task_row[k] + 1, m->task_coef[k]);
        ob_char(&o, '\n');
    }
    ob_flush(&o);
}

/* Writes the whole model text to f; returns 0 or -1 on a write error. */
static int write_text(const km_model *m, FILE *f)
{
    fprintf(f, "%s %d\n", KM_MODEL_FORMAT, KM_MODEL_VERSION);
    fprintf(f, "solver %s\nloss %s\n", m->has_mkl ? "rls2" : m->has_okl ? "okl"
            : m->has_mtl ? "mtl" : m->has_kernel ? "kernel" : "linear", km_loss_name(m->loss));
    if (m->has_mkl || m->has_okl || m->has_mtl)
        put_key(f, "lambda", m->lambda);
    if (m->has_mtl) {
        put_key(f, "alpha", m->alpha);
        fprintf(f, "task_kernel %s\n", km_kernel_name(m->task_kernel.type));
        put_key(f, "task_gamma", m->task_kernel.gamma);
        put_key(f, "task_coef0", m->task_kernel.coef0);
        fprintf(f, "task_degree %d\n", m->task_kernel.degree);
    }
    if (m->has_okl)
        fprintf(f, "nr_output %lld\n", (long long)m->nr_output);
    if (m->has_kernel) {
        fprintf(f, "kernel %s\n", km_kernel_name(m->kernel.type));
        put_key(f, "gamma", m->kernel.gamma);
        put_key(f, "coef0", m->kernel.coef0);
        fprintf(f, "degree %d\n", m->kernel.degree);
    }
    put_key(f, "C", m->C);
    put_key(f, "epsilon", m->eps);
    put_key(f, "bias", m->bias);
    fprintf(f, "nr_feature %d\nnr_class %d\n", (int)m->n, m->nr_class);
    if (m->nr_class > 0) {
        obuf o = {.f = f};
        ob_str(&o, "labels");
        for (int k = 0; k < m->nr_class; k++)
            ob_num(&o, ' ', m->labels[k]);
        ob_str(&o, "\nlabel_weights");
        for (int k = 0; k < m->nr_class; k++)
            ob_num(&o, ' ', m->label_weight[k]);
        ob_char(&o, '\n');
        ob_flush(&o);
    }
    if (m->has_mkl) {
        if (write_mkl(m, f))
            return -1;
    } else if (m->has_kernel) {
        fprintf(f, "nr_w %d\nnr_sv %lld\nsv\n", m->nr_w, (long long)m->sv->l);
        write_svs(m, f);
        if (m->has_okl)
            write_output_map(m, f);
        if (m->has_mtl)
            write_tasks(m, f);
    } else {
        fprintf(f, "nr_w %d\nw\n", m->nr_w);
        int64_t rows = (int64_t)m->n + (m->bias >= 0);
        obuf o = {.f = f};
        for (int64_t j = 0; j < rows; j++) {
            for (int k = 0; k < m->nr_w; k++)
                ob_num(&o, k ? ' ' : '\0', m->w[j * m->nr_w + k]);
            ob_char(&o, '\n');
        }
        ob_flush(&o);
    }
    fputs("end\n", f);
    return ferror(f) ? -1 : 0;
}

static int write_model(FILE *f, const void *m)
{
    return write_text(m, f);
}

int km_model_write(const km_model *m, const char *path, km_error *err)
{
    return km_write_atomic(path, "model", write_model, m, err);
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

/* Reads nr_sv lines "coef_1 .. coef_nr_w idx:val ..." after "sv" into *sv and *sv_coef. */
static int read_svs(mreader *r, const km_model *m, int64_t nr_sv, km_problem **sv,
                    double **sv_coef)
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
    *sv = S;
    *sv_coef = coef;
    return KM_OK;
}

/* Reads an okl model's "output_map" section: "output_map identity" (map NULL, needs
 * nr_w = nr_output) or "output_map" and nr_output lines of nr_w numbers. */
static int read_output_map(mreader *r, int64_t nr_output, int64_t nr_w, double **map)
{
    *map = NULL;
    if (!next_line(r))
        return km_error_set(r->err, KM_EINPUT, "%s: truncated model (no 'output_map' after the "
                            "support vectors)", r->path);
    if (strcmp(r->line, "output_map identity") == 0)
        return nr_w == nr_output ? KM_OK : bad(r, "the identity output map needs nr_w = "
                                                  "nr_output");
    if (strcmp(r->line, "output_map") != 0)
        return bad(r, "expected 'output_map' or 'output_map identity'");
    double *B = malloc((size_t)(nr_output * nr_w) * sizeof *B);
    if (!B)
        return km_error_nomem(r->err, "output map");
    for (int64_t j = 0; j < nr_output; j++) {
        int rc = KM_OK;
        if (!next_line(r))
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (%lld of %lld output map "
                              "lines)", r->path, (long long)j, (long long)nr_output);
        else if (parse_numbers(r->line, B + j * nr_w, nr_w))
            rc = bad(r, "expected nr_w numbers (a row of the output map)");
        if (rc != KM_OK) {
            free(B);
            return rc;
        }
    }
    *map = B;
    return KM_OK;
}

/* Parses one basis line "s_1 .. s_nr_w d_1 .. d_nr_w KERNEL-SPEC" into s, d and *b. */
static int read_basis_line(mreader *r, const km_model *m, double *s, double *d, km_basis *b)
{
    const char *p = r->line;
    for (int q = 0; q < 2 * m->nr_w; q++) {
        double *v = q < m->nr_w ? &s[q] : &d[q - m->nr_w];
        int status;
        p = km_parse_double(p, v, &status);
        if (status != KM_NUM_OK || *v < 0 || *p++ != ' ')
            return bad(r, "expected nr_w scales and nr_w kernel weights (finite, "
                          "non-negative), then the kernel");
    }
    km_error kerr;
    if (km_basis_parse(p, m->n, b, &kerr)) {
        char msg[sizeof kerr.msg + 32];
        snprintf(msg, sizeof msg, "bad basis kernel: %s", kerr.msg);
        return bad(r, msg);
    }
    return KM_OK;
}

/* Reads what follows "basis" in an RLS2 model (nr_basis basis lines, "intercept ...",
 * "nr_sv N", "sv" and the support vectors) and makes m an RLS2 model with it. */
static int read_mkl(mreader *r, km_model *m, int nr_basis)
{
    size_t nw = (size_t)m->nr_w;
    km_basis_set set = {0, calloc((size_t)nr_basis + 1, sizeof *set.b)};
    double *s = malloc(((size_t)nr_basis * nw + 1) * sizeof *s);
    double *d = malloc(((size_t)nr_basis * nw + 1) * sizeof *d);
    double *icpt = malloc(nw * sizeof *icpt);
    km_problem *sv = NULL;
    double *coef = NULL;
    long long nr_sv;
    int rc = set.b && s && d && icpt ? KM_OK : km_error_nomem(r->err, "rls2 model");
    while (rc == KM_OK && set.m < nr_basis) {
        if (!next_line(r))
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (%d of %d basis kernels)",
                              r->path, set.m, nr_basis);
        else if (!(rc = read_basis_line(r, m, s + set.m * nw, d + set.m * nw, &set.b[set.m])))
            set.m++;
    }
    if (rc == KM_OK && !next_line(r))
        rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (no 'intercept' line)",
                          r->path);
    else if (rc == KM_OK && (strncmp(r->line, "intercept ", 10) != 0 ||
                             parse_numbers(r->line + 10, icpt, (int64_t)nw)))
        rc = bad(r, "expected 'intercept' and nr_w numbers");
    if (rc == KM_OK && !next_line(r))
        rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (no 'nr_sv' line)", r->path);
    else if (rc == KM_OK && (strncmp(r->line, "nr_sv ", 6) != 0 ||
                             parse_int(r->line + 6, 0, INT64_MAX / 2, &nr_sv)))
        rc = bad(r, "expected 'nr_sv COUNT'");
    if (rc == KM_OK && !next_line(r))
        rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (no 'sv' line)", r->path);
    else if (rc == KM_OK && strcmp(r->line, "sv") != 0)
        rc = bad(r, "expected 'sv'");
    if (rc == KM_OK)
        rc = read_svs(r, m, nr_sv, &sv, &coef);
    if (rc != KM_OK) {
        km_basis_set_free(&set);
        free(s);
        free(d);
        free(icpt);
        return rc;
    }
    return km_model_set_mkl(m, &set, s, d, icpt, sv, coef, r->err);
}

/* When r's line is "task_kernels K": reads it and K lines "ID KERNEL" (ids increasing,
 * kernels of km_basis_parse on all features) into *kid, *kk, *kline (their lines), then
 * the next line. */
static int read_task_kernels(mreader *r, int64_t *nk, int64_t **kid, km_kernel **kk,
                             int64_t **kline)
{
    long long k = 0;
    *nk = 0;
    if (strncmp(r->line, "task_kernels ", 13))
        return KM_OK;
    if (parse_int(r->line + 13, 1, INT64_MAX / 64, &k))
        return bad(r, "bad task_kernels count");
    if (!(*kid = malloc((size_t)k * sizeof **kid)) || !(*kk = malloc((size_t)k * sizeof **kk)) ||
        !(*kline = malloc((size_t)k * sizeof **kline)))
        return km_error_nomem(r->err, "mtl task kernels");
    for (long long t = 0; t < k; t++) {
        if (!next_line(r))
            return km_error_set(r->err, KM_EINPUT, "%s: truncated model (%lld of %lld task "
                                "kernels)", r->path, t, k);
        char *end;
        errno = 0;
        long long id = strtoll(r->line, &end, 10);
        km_basis b;
        if (errno || end == r->line || *end != ' ' || id == INT64_MIN ||
            (t && id <= (*kid)[t - 1]))
            return bad(r, "expected 'TASK KERNEL' with task ids increasing");
        if (km_basis_parse(end, INT32_MAX, &b, r->err)) {
            char msg[sizeof r->err->msg];
            snprintf(msg, sizeof msg, "%s", r->err->msg);
            return bad(r, msg);
        }
        int subset = b.feat != NULL;
        free(b.feat);
        if (subset)
            return bad(r, "a task kernel sees all features (features=all)");
        (*kid)[t] = id;
        (*kk)[t] = b.kernel;
        (*kline)[t] = r->lineno;
        *nk = t + 1;
    }
    return next_line(r) ? KM_OK : km_error_set(r->err, KM_EINPUT, "%s: truncated model (no "
                                               "'nr_task' line)", r->path);
}

/* Reads an MTL model's tasks section after the support vectors: the tasks' own kernels
 * (read_task_kernels), "nr_task M", "tasks", M lines "ID L row:coef ..." (rows 1..nr_sv),
 * then sets the model up. */
static int read_tasks(mreader *r, km_model *m, const km_kernel *K, const km_kernel *Kt,
                      double alpha, double lambda, km_problem *sv, double *cbar)
{
    long long nt = 0;
    int64_t *id = NULL, *ptr = NULL, *row = NULL, cap = 0, cnt = 0;
    int64_t nk = 0, *kid = NULL, *kline = NULL;
    km_kernel *kk = NULL, *kern = NULL;
    double *coef = NULL;
    int rc = next_line(r) ? read_task_kernels(r, &nk, &kid, &kk, &kline)
             : bad(r, "expected 'nr_task M' after the support vectors");
    if (rc == KM_OK &&
        (strncmp(r->line, "nr_task ", 8) || parse_int(r->line + 8, 0, INT64_MAX / 2, &nt)))
        rc = bad(r, "expected 'nr_task M' after the support vectors");
    else if (rc == KM_OK && (!next_line(r) || strcmp(r->line, "tasks")))
        rc = bad(r, "expected 'tasks'");
    else if (rc == KM_OK && (!(id = malloc(((size_t)nt + 1) * sizeof *id)) ||
                             !(ptr = calloc((size_t)nt + 1, sizeof *ptr))))
        rc = km_error_nomem(r->err, "mtl tasks");
    for (long long t = 0; t < nt && rc == KM_OK; t++) {
        if (!next_line(r)) {
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (%lld of %lld tasks)",
                              r->path, t, nt);
            break;
        }
        char *p = r->line, *end;
        errno = 0;
        long long tid = strtoll(p, &end, 10), l;
        if (errno || end == p || *end != ' ' || tid == INT64_MIN) {
            rc = bad(r, "expected 'TASK L row:coef ...'");
            break;
        }
        l = strtoll(p = end + 1, &end, 10);
        if (errno || end == p || l < 0 || l > sv->l) {
            rc = bad(r, "expected 'TASK L row:coef ...'");
            break;
        }
        id[t] = tid;
        p = end;
        if (cnt + l > cap) {
            int64_t c2 = cap ? 2 * cap : 64;
            while (c2 < cnt + l)
                c2 *= 2;
            int64_t *nr = realloc(row, (size_t)c2 * sizeof *nr);
            if (nr)
                row = nr;
            double *nc = realloc(coef, (size_t)c2 * sizeof *nc);
            if (nc)
                coef = nc;
            if (!nr || !nc) {
                rc = km_error_nomem(r->err, "mtl tasks");
                break;
            }
            cap = c2;
        }
        for (long long k = 0; k < l && rc == KM_OK; k++) {
            uint64_t ri;
            int status;
            if (*p++ != ' ' || (p = (char *)km_parse_uint(p, (uint64_t)sv->l, &ri, &status),
                                status != KM_NUM_OK) || ri == 0 || *p++ != ':') {
                rc = bad(r, "expected L pairs row:coef with rows in 1..nr_sv");
                break;
            }
            p = (char *)km_parse_double(p, &coef[cnt], &status);
            if (status != KM_NUM_OK) {
                rc = bad(r, "expected a finite task coefficient");
                break;
            }
            row[cnt++] = (int64_t)ri - 1;
        }
        if (rc == KM_OK && *p != '\0')
            rc = bad(r, "unexpected text in a task line");
        ptr[t + 1] = cnt;
    }
    if (rc == KM_OK && !row && (!(row = malloc(sizeof *row)) || !(coef = malloc(sizeof *coef))))
        rc = km_error_nomem(r->err, "mtl tasks");
    if (rc == KM_OK && nk && !(kern = malloc(((size_t)nt + 1) * sizeof *kern)))
        rc = km_error_nomem(r->err, "mtl tasks");
    for (int64_t t = 0, k = 0; rc == KM_OK && kern && t <= nt; t++) {   /* K~_t of (5.3) */
        for (; rc == KM_OK && k < nk && (t == nt || kid[k] < id[t]); k++)
            rc = km_error_set(r->err, KM_EINPUT, "%s:%lld: task_kernels: task %lld is not "
                              "among the tasks", r->path, (long long)kline[k], (long long)kid[k]);
        if (t < nt)
            kern[t] = k < nk && kid[k] == id[t] ? kk[k++] : *Kt;
    }
    free(kid);
    free(kk);
    free(kline);
    if (rc != KM_OK) {
        km_problem_free(sv);
        free(cbar);
        free(id);
        free(ptr);
        free(row);
        free(coef);
        free(kern);
        return rc;
    }
    rc = km_model_set_mtl(m, K, Kt, alpha, lambda, sv, cbar, nt, id, ptr, row, coef, kern,
                          r->err);
    return rc ? km_error_set(r->err, KM_EINPUT, "%s: %s", r->path, r->err->msg) : KM_OK;
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
    enum { LINEAR, KERNEL, RLS2, OKL, MTL };
    static const char *const section[] = {"w", "sv", "basis", "sv", "sv"};
    int loss = -1, have_C = 0, have_eps = 0, have_bias = 0, solver = LINEAR;
    long long n = -1, nr_class = -1, nr_w = -1, nr_sv = -1, degree = 3, nr_basis = -1;
    long long nr_output = -1;
    int ktype = -1, kernel_keys = 0;
    double gamma = 0, coef0 = 0, lambda = -1, alpha = -1, tgamma = 0, tcoef0 = 0;
    long long tdegree = 3;
    int ttype = -1, task_keys = 0;
    double C = 0, eps = 0, bias = -1;
    double *labels = NULL, *lw = NULL;
    int rc = KM_OK;
    for (;;) {
        if (!next_line(r)) {
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (no '%s' line)", r->path,
                              section[solver]);
            break;
        }
        if (strcmp(r->line, section[solver]) == 0)
            break;
        char *sp = strchr(r->line, ' ');
        if (!sp) {
            rc = bad(r, "expected 'key value'");
            break;
        }
        *sp = '\0';
        const char *key = r->line, *val = sp + 1;
        kernel_keys |= strcmp(key, "kernel") == 0 || strcmp(key, "gamma") == 0 ||
                       strcmp(key, "coef0") == 0 || strcmp(key, "degree") == 0;
        task_keys |= strncmp(key, "task_", 5) == 0 || strcmp(key, "alpha") == 0;
        if (strcmp(key, "solver") == 0) {
            static const char *const names[] = {"linear", "kernel", "rls2", "okl", "mtl"};
            solver = -1;
            for (int q = 0; q < 5; q++)
                if (strcmp(val, names[q]) == 0)
                    solver = q;
            if (solver < 0) {
                rc = bad(r, "unknown solver (expected 'linear', 'kernel', 'rls2', 'okl' or "
                            "'mtl')");
                break;
            }
        } else if (strcmp(key, "alpha") == 0) {
            if (parse_numbers(val, &alpha, 1) || !(alpha >= 0 && alpha <= 1)) {
                rc = bad(r, "bad alpha (expected a number in [0, 1])");
                break;
            }
        } else if (strcmp(key, "task_kernel") == 0) {
            if ((ttype = km_kernel_from_name(val)) < 0) {
                rc = bad(r, "unknown task_kernel");
                break;
            }
        } else if (strcmp(key, "task_gamma") == 0 || strcmp(key, "task_coef0") == 0) {
            if (parse_numbers(val, key[5] == 'g' ? &tgamma : &tcoef0, 1)) {
                rc = bad(r, "expected a number");
                break;
            }
        } else if (strcmp(key, "task_degree") == 0) {
            if (parse_int(val, 1, 1000, &tdegree)) {
                rc = bad(r, "bad task_degree");
                break;
            }
        } else if (strcmp(key, "nr_output") == 0) {
            if (parse_int(val, 1, INT32_MAX, &nr_output)) {
                rc = bad(r, "bad nr_output");
                break;
            }
        } else if (strcmp(key, "lambda") == 0) {
            if (parse_numbers(val, &lambda, 1) || lambda < 0) {
                rc = bad(r, "bad lambda (expected a finite number >= 0)");
                break;
            }
        } else if (strcmp(key, "nr_basis") == 0) {
            if (parse_int(val, 0, INT32_MAX / 2, &nr_basis)) {
                rc = bad(r, "bad nr_basis");
                break;
            }
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
        else if (solver != OKL && nr_w != (nr_class > 2 ? nr_class : 1))
            rc = bad(r, "nr_w does not match nr_class");
        else if ((solver == KERNEL || solver == OKL || solver == MTL) && (ktype < 0 || nr_sv < 0))
            rc = bad(r, "kernel model header incomplete (need kernel, nr_sv)");
        else if (solver == OKL && (nr_output < 0 || lambda < 0 || nr_class != 0 ||
                                   loss != KM_LOSS_RLS || bias >= 0))
            rc = bad(r, "okl model header incomplete or inconsistent (need lambda, nr_output, "
                        "nr_class 0, loss rls, bias -1)");
        else if (solver != OKL && nr_output >= 0)
            rc = bad(r, "nr_output belongs to okl models");
        else if (solver == MTL && (lambda < 0 || alpha < 0 || ttype < 0 || nr_class != 0 ||
                                   loss != KM_LOSS_RLS || bias >= 0))
            rc = bad(r, "mtl model header incomplete or inconsistent (need lambda, alpha, "
                        "task_kernel, nr_class 0, loss rls, bias -1)");
        else if (solver != MTL && task_keys)
            rc = bad(r, "alpha and task_ keys belong to mtl models");
        else if (solver != RLS2 && solver != OKL && solver != MTL && lambda >= 0)
            rc = bad(r, "lambda belongs to rls2 and okl models (and mtl models)");
        else if (solver != RLS2 && nr_basis >= 0)
            rc = bad(r, "nr_basis belongs to rls2 models");
        else if (solver == RLS2 && (lambda < 0 || nr_basis < 0))
            rc = bad(r, "rls2 model header incomplete (need lambda, nr_basis)");
        else if (solver == RLS2 && (loss != KM_LOSS_RLS || bias >= 0))
            rc = bad(r, "rls2 models have loss rls and bias -1");
        else if (solver == RLS2 && (kernel_keys || nr_sv >= 0))
            rc = bad(r, "rls2 models have no kernel, gamma, coef0, degree or nr_sv header "
                        "lines (kernels are in the basis section, nr_sv follows it)");
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
        if (solver == KERNEL) {
            km_kernel k = {(km_kernel_type)ktype, gamma, coef0, (int)degree};
            km_problem *sv = NULL;
            double *coef = NULL;
            if ((rc = read_svs(r, m, nr_sv, &sv, &coef)) == KM_OK)
                rc = km_model_set_kernel(m, &k, sv, coef, r->err);
        } else if (solver == OKL) {
            km_kernel k = {(km_kernel_type)ktype, gamma, coef0, (int)degree};
            km_problem *sv = NULL;
            double *coef = NULL, *map = NULL;
            if ((rc = read_svs(r, m, nr_sv, &sv, &coef)) == KM_OK &&
                (rc = read_output_map(r, nr_output, nr_w, &map)) != KM_OK) {
                km_problem_free(sv);
                free(coef);
            }
            if (rc == KM_OK)
                rc = km_model_set_okl(m, &k, sv, coef, nr_output, map, lambda, r->err);
        } else if (solver == RLS2) {
            m->lambda = lambda;
            rc = read_mkl(r, m, (int)nr_basis);
        } else if (solver == MTL) {
            km_kernel k = {(km_kernel_type)ktype, gamma, coef0, (int)degree};
            km_kernel kt = {(km_kernel_type)ttype, tgamma, tcoef0, (int)tdegree};
            km_problem *sv = NULL;
            double *coef = NULL;
            if ((rc = read_svs(r, m, nr_sv, &sv, &coef)) == KM_OK)
                rc = read_tasks(r, m, &k, &kt, alpha, lambda, sv, coef);
        }
        int64_t rows = solver == LINEAR ? n + (bias >= 0) : 0;
        for (int64_t j = 0; j < rows && rc == KM_OK; j++) {
            if (!next_line(r))
                rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (%lld of %lld "
                                  "weight lines)", r->path, (long long)j, (long long)rows);
            else if (parse_numbers(r->line, m->w + j * nr_w, nr_w))
                rc = bad(r, "expected nr_w weights");
        }
        const char *last = solver == LINEAR ? "weights" : solver == OKL ? "output map"
                           : solver == MTL ? "tasks" : "support vectors";
        if (rc == KM_OK && !next_line(r)) {
            rc = km_error_set(r->err, KM_EINPUT, "%s: truncated model (no 'end' after the %s)",
                              r->path, last);
        } else if (rc == KM_OK && strcmp(r->line, "end") != 0) {
            snprintf(msg, sizeof msg, "expected 'end' after the %s", last);
            rc = bad(r, msg);
        }
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

/* Adds the RLS2 decision values of the block B (nb rows) to dec: per feature subset, B
 * projected once; per kernel on it, dec += K(B, sv) * (sv_coef scaled per column by s d). */
static int mkl_block(const km_model *m, const km_problem *B, int64_t nb, double *Kb,
                     double *coef, double *dec, int threads, km_error *err)
{
    const km_mkl_cache *c = m->mkl;
    int nw = m->nr_w;
    int64_t nsv = m->sv->l;
    for (int q = 0; q < c->ngroups; q++) {
        const mkl_group *g = &c->g[q];
        km_problem *Q = g->sv ? km_basis_project(g->subset, B, NULL, nb, err) : NULL;
        if (g->sv && !Q)
            return err->code;
        km_kdata *T = km_kdata_new(Q ? Q : B, NULL, nb, err);
        int rc = T ? KM_OK : err->code;
        for (int t = g->first; t < g->first + g->count && rc == KM_OK; t++) {
            int k = c->order[t];
            const double *sk = m->basis_s + (int64_t)k * nw, *dk = m->basis_d + (int64_t)k * nw;
            rc = km_kernel_block(&m->basis.b[k].kernel, T, NULL, nb, g->data, NULL, nsv, Kb,
                                 threads, err);
            if (rc != KM_OK)
                break;
            for (int64_t i = 0; i < nsv; i++)
                for (int j = 0; j < nw; j++)
                    coef[i * nw + j] = sk[j] * dk[j] * m->sv_coef[i * nw + j];
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, nw, (int)nsv, 1, Kb,
                        (int)nsv, coef, nw, 1, dec, nw);
        }
        km_kdata_free(T);
        km_problem_free(Q);
        if (rc != KM_OK)
            return rc;
    }
    return KM_OK;
}

/* Decision values of the kernel expansion (or RLS2, linear) part of m. */
static int expansion_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                          int64_t count, double *dec, int threads, km_error *err)
{
    int nw = m->nr_w;
    if (!rows)
        count = X->l;
    if (m->has_mkl) {
        for (int64_t a = 0; a < count; a++)
            memcpy(dec + a * nw, m->intercept, (size_t)nw * sizeof *dec);
        if (m->sv->l == 0 || m->basis.m == 0)
            return KM_OK;
    }
    if (!m->has_mkl && (!m->has_kernel || m->sv->l == 0)) {
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
    double *coef = m->has_mkl ? malloc((size_t)(nsv * nw) * sizeof *coef) : NULL;
    B.row_ptr = malloc((size_t)(bs + 1) * sizeof *B.row_ptr);
    int rc = Kb && B.row_ptr && (coef || !m->has_mkl) ? KM_OK
             : km_error_nomem(err, "prediction block");
    for (int64_t a0 = 0; a0 < count && rc == KM_OK; a0 += bs) {
        int64_t nb = count - a0 < bs ? count - a0 : bs;
        if ((rc = copy_block(X, rows, a0, nb, m->n, &B, &cap, err)))
            break;
        if (m->has_mkl) {
            rc = mkl_block(m, &B, nb, Kb, coef, dec + a0 * nw, threads, err);
            continue;
        }
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
    free(coef);
    free(B.row_ptr);
    free(B.index);
    free(B.value);
    return rc;
}

/* The task of an MTL model with id qid: its index, or -1. */
static int64_t mtl_task(const km_model *m, int64_t qid)
{
    int64_t lo = 0, hi = m->nr_task;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (m->task_id[mid] < qid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nr_task && m->task_id[lo] == qid ? lo : -1;
}

int km_model_decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                           int64_t count, double *dec, int threads, km_error *err)
{
    int rc = expansion_rows(m, X, rows, count, dec, threads, err);
    if (rc || !m->has_mtl)
        return rc;
    if (!rows)
        count = X->l;
    /* (5.3): g_t(x) = alpha gbar(x) + (1 - alpha) sum_k c_k K~_t(sv_k, x), features > n
     * ignored */
    const km_problem *S = m->sv;
    for (int64_t a = 0; a < count; a++) {
        int64_t i = rows ? rows[a] : a, b = X->row_ptr[i], nnz = X->row_ptr[i + 1] - b;
        int64_t t = X->qid && X->qid[i] != INT64_MIN ? mtl_task(m, X->qid[i])
                    : m->nr_task == 1 ? 0 : -1;
        while (nnz > 0 && X->index[b + nnz - 1] >= m->n)
            nnz--;
        double sq = 0, gt = 0;
        const km_kernel *kt = t >= 0 && m->task_kern ? &m->task_kern[t] : &m->task_kernel;
        for (int64_t q = b; q < b + nnz; q++)
            sq += X->value[q] * X->value[q];
        for (int64_t k = t < 0 ? 0 : m->task_ptr[t]; t >= 0 && k < m->task_ptr[t + 1]; k++) {
            int64_t r = m->task_row[k], c = S->row_ptr[r], cn = S->row_ptr[r + 1] - c;
            double sr = 0;
            for (int64_t q = c; q < c + cn; q++)
                sr += S->value[q] * S->value[q];
            gt += m->task_coef[k] * km_kernel_eval(kt, S->index + c, S->value + c, cn, sr,
                                                   X->index + b, X->value + b, nnz, sq);
        }
        dec[a] = m->alpha * dec[a] + (1 - m->alpha) * gt;
    }
    return KM_OK;
}
