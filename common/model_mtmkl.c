/* model_mtmkl.c - the mtmkl model kind (seed 004, mtmkl.h): the task kernels as factors,
 * theta, and per factor the vector g_k; f_t(x) = x'U[:, t], U[:, t] = sum_m theta_m
 * sum_{k in m} lambda_k q_k[t] g_k. A row's task is its qid; a task the model does not
 * have (or no qid) gets the average task (1/T) sum_t U[:, t].
 * Body after the section line "tasks": a line of the T task ids; M lines "THETA NAME";
 * nr_factor lines "KERNEL LAMBDA ID:Q ..." (KERNEL from 1); nr_factor lines of g_k as
 * "INDEX:VALUE ..." pairs (1-based, non-zeros only; may be empty). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "mtmkl.h"
#include "dtoa.h"
#include "numparse.h"

typedef struct mtmkl_body {
    km_mtmkl_tasks k;
    double p;             /* the l_p norm theta was learned in */
    double *theta;        /* M */
    double *g;            /* linear mode: nf * n */
    km_expansion e;       /* kernel mode (e.sv != NULL): the rows with c_j != 0 and
                             e.sv_coef = A, A[j * nf + k] = q_k[t_j] c_j */
    double *c;            /* kernel mode: c_j of the support vectors */
    int32_t *sv_task;     /* kernel mode: their task indices */
} mtmkl_body;

static void free_body(km_model *m)
{
    mtmkl_body *b = m->body;
    km_mtmkl_tasks_free(&b->k);
    free(b->theta);
    free(b->g);
    km_expansion_free(&b->e);
    free(b->c);
    free(b->sv_task);
    free(b);
    m->body = NULL;
}

/* Kernel mode: the expansion's coefficients A from c and the tasks of the rows. */
static int build_coef(mtmkl_body *b, km_error *err)
{
    int64_t nsv = b->e.sv->l, nf = b->k.nf;
    double *A = malloc((size_t)(nsv * nf + 1) * sizeof *A);
    if (!A)
        return km_error_nomem(err, "mtmkl model");
    for (int64_t j = 0; j < nsv; j++)
        for (int64_t q = 0; q < nf; q++)
            A[j * nf + q] = km_mtmkl_factor_q(&b->k, &b->k.f[q], b->sv_task[j]) * b->c[j];
    free(b->e.sv_coef);
    b->e.sv_coef = A;
    return KM_OK;
}

static int write_head(const km_model *m, FILE *f)
{
    const mtmkl_body *b = m->body;
    km_mio_put(f, "mkl_norm", b->p);
    fprintf(f, "nr_task %d\nnr_kernel %d\nnr_factor %d\n", (int)b->k.T, b->k.M, (int)b->k.nf);
    if (b->e.sv) {
        km_model_put_kernel(f, "", &b->e.kernel);
        fprintf(f, "nr_sv %lld\n", (long long)b->e.sv->l);
    }
    return 0;
}

/* x in the shortest text that reads back bit for bit. */
static void put_num(FILE *f, const char *sep, double x)
{
    char b[KM_DTOA_SIZE];
    km_dtoa(x, b);
    fprintf(f, "%s%s", sep, b);
}

static int write_body(const km_model *m, FILE *f)
{
    const mtmkl_body *b = m->body;
    const km_mtmkl_tasks *k = &b->k;
    int32_t d = m->n;
    fprintf(f, "nr_w %d\ntasks\n", m->nr_w);
    for (int32_t t = 0; t < k->T; t++)
        fprintf(f, t ? " %lld" : "%lld", (long long)k->task_id[t]);
    fputc('\n', f);
    for (int q = 0; q < k->M; q++)
        km_model_put_line(f, NULL, &b->theta[q], 1, k->name[q][0] ? k->name[q] : "-");
    for (int32_t q = 0; q < k->nf; q++) {
        const km_mtmkl_factor *F = &k->f[q];
        fprintf(f, "%d", F->m + 1);
        put_num(f, " ", F->lambda);
        for (int32_t a = 0; a < F->nq; a++) {
            fprintf(f, " %lld", (long long)k->task_id[F->task[a]]);
            put_num(f, ":", F->q[a]);
        }
        fputc('\n', f);
    }
    if (b->e.sv) {   /* kernel mode: the support vectors' tasks, then c_j and the rows */
        for (int64_t j = 0; j < b->e.sv->l; j++)
            fprintf(f, j ? " %lld" : "%lld", (long long)k->task_id[b->sv_task[j]]);
        fputc('\n', f);
        km_model_put_svs(f, b->e.sv, b->c, 1);
        return 0;
    }
    int64_t *idx = malloc((size_t)(d > 0 ? d : 1) * sizeof *idx);
    double *val = malloc((size_t)(d > 0 ? d : 1) * sizeof *val);
    if (!idx || !val) {
        free(idx);
        free(val);
        return -1;
    }
    for (int32_t q = 0; q < k->nf; q++) {
        int64_t nz = 0;
        for (int32_t j = 0; j < d; j++)
            if (b->g[(int64_t)q * d + j] != 0) {
                idx[nz] = j;
                val[nz++] = b->g[(int64_t)q * d + j];
            }
        if (nz == 0)
            fputc('\n', f);
        else {   /* " 1:x 5:y": drop the leading space of the first pair */
            char *line = NULL;
            size_t len = 0;
            FILE *mem = open_memstream(&line, &len);
            if (!mem) {
                free(idx);
                free(val);
                return -1;
            }
            km_model_put_pairs(mem, idx, val, nz);
            fclose(mem);
            fputs(line + 1, f);
            free(line);
        }
    }
    free(idx);
    free(val);
    return 0;
}

/* Reads one line of the body or sets the truncation error. */
static const char *need_line(km_mio *io, const char *what)
{
    const char *line = km_mio_line(io);
    if (!line)
        km_mio_truncated(io, "%s", what);
    return line;
}

static int read_body(km_mio *io, km_model *m, km_error *err)
{
    const char *v;
    long long T, M, nf;
    double p;
    if (!(v = km_mio_key(io, "mkl_norm")) || km_mio_number(v, &p) || !(p >= 1))
        return km_mio_bad(io, "mtmkl model: need mkl_norm >= 1");
    if (!(v = km_mio_key(io, "nr_task")) || km_model_parse_int(v, 1, INT32_MAX / 2, &T) ||
        !(v = km_mio_key(io, "nr_kernel")) || km_model_parse_int(v, 1, 1000000, &M) ||
        !(v = km_mio_key(io, "nr_factor")) || km_model_parse_int(v, 1, INT32_MAX / 2, &nf))
        return km_mio_bad(io, "mtmkl model: need nr_task, nr_kernel, nr_factor");
    if (m->nr_class != 2 || m->nr_w != 1)
        return km_mio_bad(io, "mtmkl model: need nr_class 2 and nr_w 1");
    km_kernel kern;
    long long nr_sv = -1;
    int kmode = km_mio_key(io, "kernel") != NULL;
    if (kmode && (km_model_get_kernel(io, "", &kern, err) || !(v = km_mio_key(io, "nr_sv")) ||
                  km_model_parse_int(v, 0, INT64_MAX / 2, &nr_sv)))
        return err->code ? err->code : km_mio_bad(io, "mtmkl kernel model: need nr_sv");
    mtmkl_body *b = calloc(1, sizeof *b);
    if (!b)
        return km_error_nomem(err, "mtmkl model");
    m->body = b;
    b->p = p;
    km_mtmkl_tasks *k = &b->k;
    /* the task ids: one line; counts grow with what the file holds */
    const char *line = need_line(io, "no task line");
    if (!line)
        return err->code;
    int64_t cap = 0;
    for (const char *s = line; *s;) {
        char *end;
        errno = 0;
        long long id = strtoll(s, &end, 10);
        if (errno || end == s || (*end && *end != ' ') || (k->T && id <= k->task_id[k->T - 1]))
            return km_mio_bad(io, "expected increasing task ids");
        if (k->T == cap) {
            int64_t *grown = realloc(k->task_id, (size_t)(cap = cap ? 2 * cap : 64) *
                                                 sizeof *grown);
            if (!grown)
                return km_error_nomem(err, "mtmkl model");
            k->task_id = grown;
        }
        k->task_id[k->T++] = id;
        s = *end ? end + 1 : end;
        if (k->T > T)
            break;
    }
    if (k->T != T)
        return km_mio_bad(io, "expected nr_task = %lld task ids", T);
    if (!(k->name = calloc((size_t)M, sizeof *k->name)) ||
        !(b->theta = malloc((size_t)M * sizeof *b->theta)))
        return km_error_nomem(err, "mtmkl model");
    for (k->M = 0; k->M < M; k->M++) {
        if (!(line = need_line(io, "fewer kernel lines than nr_kernel")))
            return err->code;
        int status;
        const char *s = km_parse_double(line, &b->theta[k->M], &status);
        if (status != KM_NUM_OK || *s != ' ' || !(b->theta[k->M] >= 0))
            return km_mio_bad(io, "expected 'THETA NAME' (theta finite, >= 0)");
        if (!(k->name[k->M] = strdup(strcmp(s + 1, "-") ? s + 1 : "")))
            return km_error_nomem(err, "mtmkl model");
    }
    if (!(k->f = calloc((size_t)nf, sizeof *k->f)))
        return km_error_nomem(err, "mtmkl model");
    for (k->nf = 0; k->nf < nf; k->nf++) {
        if (!(line = need_line(io, "fewer factor lines than nr_factor")))
            return err->code;
        km_mtmkl_factor *F = &k->f[k->nf];
        char *end;
        errno = 0;
        long long km = strtoll(line, &end, 10);
        int status;
        const char *s = end;
        if (errno || end == line || km < 1 || km > M || *s != ' ' ||
            (s = km_parse_double(s + 1, &F->lambda, &status), status != KM_NUM_OK) ||
            !(F->lambda > 0))
            return km_mio_bad(io, "expected 'KERNEL LAMBDA ID:Q ...' (KERNEL in 1..nr_kernel, "
                              "LAMBDA > 0)");
        F->m = (int)km - 1;
        int32_t fcap = 0;
        while (*s == ' ') {
            long long id = strtoll(s + 1, &end, 10);
            int32_t t = km_mtmkl_task(k, id);
            double q;
            if (end == s + 1 || *end != ':' || t < 0 || (F->nq && t <= F->task[F->nq - 1]) ||
                (s = km_parse_double(end + 1, &q, &status), status != KM_NUM_OK))
                return km_mio_bad(io, "expected ID:Q pairs of the model's tasks, increasing");
            if (F->nq == fcap) {
                fcap = fcap ? 2 * fcap : 8;
                int32_t *gt = realloc(F->task, (size_t)fcap * sizeof *gt);
                if (gt)
                    F->task = gt;
                double *gq = realloc(F->q, (size_t)fcap * sizeof *gq);
                if (gq)
                    F->q = gq;
                if (!gt || !gq)
                    return km_error_nomem(err, "mtmkl model");
            }
            F->task[F->nq] = t;
            F->q[F->nq++] = q;
        }
        if (*s != '\0' || F->nq == 0)
            return km_mio_bad(io, "expected ID:Q pairs of the model's tasks, increasing");
    }
    if (kmode) {   /* the support vectors' task ids, then the support vectors */
        if (!(line = need_line(io, "no line of support vector tasks")))
            return err->code;
        if (!(b->sv_task = malloc((size_t)(nr_sv > 0 ? nr_sv : 1) * sizeof *b->sv_task)))
            return km_error_nomem(err, "mtmkl model");
        const char *s = line;
        for (long long j = 0; j < nr_sv; j++) {
            char *end;
            errno = 0;
            long long id = strtoll(s, &end, 10);
            int32_t t = end == s || errno ? -1 : km_mtmkl_task(k, id);
            if (t < 0 || (*end && *end != ' '))
                return km_mio_bad(io, "expected nr_sv task ids of the model's tasks");
            b->sv_task[j] = t;
            s = *end ? end + 1 : end;
        }
        if (*s)
            return km_mio_bad(io, "more task ids than nr_sv");
        km_problem *sv;
        int rc = km_model_get_svs(io, m, nr_sv, &sv, &b->c, err);
        if (rc == KM_OK)
            rc = km_expansion_init(&b->e, &kern, sv, NULL, err);
        return rc == KM_OK ? build_coef(b, err) : rc;
    }
    int32_t d = m->n;
    if (!(b->g = calloc((size_t)nf * (size_t)(d > 0 ? d : 1), sizeof *b->g)))
        return km_error_nomem(err, "mtmkl model");
    for (int32_t q = 0; q < nf; q++) {
        if (!(line = need_line(io, "fewer vector lines than nr_factor")))
            return err->code;
        const char *s = line;
        int64_t prev = 0;
        while (*s) {
            uint64_t idx;
            int status;
            double x;
            s = km_parse_uint(s, (uint64_t)d, &idx, &status);
            if (status != KM_NUM_OK || idx == 0 || (int64_t)idx <= prev || *s++ != ':' ||
                (s = km_parse_double(s, &x, &status), status != KM_NUM_OK) ||
                (*s && *s++ != ' '))
                return km_mio_bad(io, "expected increasing INDEX:VALUE pairs within "
                                  "nr_feature");
            b->g[(int64_t)q * d + (int64_t)idx - 1] = x;
            prev = (int64_t)idx;
        }
    }
    return KM_OK;
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    const mtmkl_body *b = m->body;
    if (b->e.sv) {   /* kernel mode: per factor K(x, sv) A, then the row's task weights */
        int32_t nf = b->k.nf;
        double *D = malloc((size_t)(count * nf + 1) * sizeof *D);
        if (!D)
            return km_error_nomem(err, "mtmkl prediction");
        int rc = km_expansion_cols(&b->e, m->n, nf, X, rows, count, D, threads, err);
        for (int64_t a = 0; a < count && rc == KM_OK; a++) {
            int64_t i = rows ? rows[a] : a;
            int32_t t = X->qid && X->qid[i] != INT64_MIN ? km_mtmkl_task(&b->k, X->qid[i])
                        : -1;
            double z = 0;
            for (int32_t q = 0; q < nf; q++) {
                const km_mtmkl_factor *F = &b->k.f[q];
                double w = km_mtmkl_factor_q(&b->k, F, t);
                z += w != 0 ? b->theta[F->m] * F->lambda * w * D[a * nf + q] : 0;
            }
            dec[a] = z;
        }
        free(D);
        return rc;
    }
    for (int64_t a = 0; a < count; a++) {
        int64_t i = rows ? rows[a] : a, p0 = X->row_ptr[i];
        int32_t t = X->qid && X->qid[i] != INT64_MIN ? km_mtmkl_task(&b->k, X->qid[i]) : -1;
        dec[a] = km_mtmkl_decision(&b->k, b->theta, b->g, m->n, t, X->index + p0,
                                   X->value + p0, X->row_ptr[i + 1] - p0);
    }
    return KM_OK;
}

static int has_task(const km_model *m, int64_t qid)
{
    return qid != INT64_MIN && km_mtmkl_task(&((const mtmkl_body *)m->body)->k, qid) >= 0;
}

const km_model_kind km_kind_mtmkl = {
    .name = "mtmkl",
    .section = "tasks",
    .body_name = "vectors",
    .write_head = write_head,
    .write_body = write_body,
    .read = read_body,
    .free_body = free_body,
    .decision_rows = decision_rows,
    .has_task = has_task,
};

int km_model_set_mtmkl(km_model *m, km_mtmkl_tasks *k, double p, double *theta, double *g,
                       km_error *err)
{
    mtmkl_body *b = calloc(1, sizeof *b);
    if (!b) {
        km_mtmkl_tasks_free(k);
        free(theta);
        free(g);
        return km_error_nomem(err, "mtmkl model");
    }
    km_model_set_body(m, &km_kind_mtmkl, b);
    b->k = *k;
    memset(k, 0, sizeof *k);
    b->p = p;
    b->theta = theta;
    b->g = g;
    m->bias = -1;
    return KM_OK;
}

int km_model_set_mtmkl_kernel(km_model *m, km_mtmkl_tasks *k, double p, double *theta,
                              const km_kernel *kern, km_problem *sv, double *c,
                              int32_t *sv_task, km_error *err)
{
    int rc = km_model_set_mtmkl(m, k, p, theta, NULL, err);
    if (rc) {
        km_problem_free(sv);
        free(c);
        free(sv_task);
        return rc;
    }
    mtmkl_body *b = m->body;
    b->c = c;
    b->sv_task = sv_task;
    rc = km_expansion_init(&b->e, kern, sv, NULL, err);
    return rc == KM_OK ? build_coef(b, err) : rc;
}
