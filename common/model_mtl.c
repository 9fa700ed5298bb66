/* model_mtl.c - the mtl model kind (model.h; thesis ch. 5): a kernel expansion over the
 * unique inputs and per task its rows and coefficients, (5.3). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "numparse.h"

/* Task t's kernel K~_t (t < 0: the default) in the syntax of km_basis_parse into buf[160]. */
static void task_kernel_text(const km_mtl_body *b, int64_t t, char *buf)
{
    km_basis k = {t < 0 || !b->task_kern ? b->task_kernel : b->task_kern[t], 0, NULL};
    km_basis_format(&k, buf, 160);
}

/* The tasks whose kernel K~_t differs from the default (as written). */
static int64_t task_kernels_differ(const km_mtl_body *b)
{
    char d[160], k[160];
    int64_t cnt = 0;
    task_kernel_text(b, -1, d);
    for (int64_t t = 0; t < b->nr_task && b->task_kern; t++) {
        task_kernel_text(b, t, k);
        cnt += strcmp(d, k) != 0;
    }
    return cnt;
}

static int write_head(const km_model *m, FILE *f)
{
    const km_mtl_body *b = m->body;
    km_mio_put(f, "lambda", b->lambda);
    km_mio_put(f, "alpha", b->alpha);
    km_model_put_kernel(f, "task_", &b->task_kernel);
    km_model_put_kernel(f, "", &b->e.kernel);
    return 0;
}

/* The support vectors, then the tasks with their own kernel (when any) "task_kernels K" and
 * K lines "ID KERNEL"; "nr_task M", "tasks", then per task "ID L row:coef ..." (rows
 * 1-based). */
static int write_body(const km_model *m, FILE *f)
{
    const km_mtl_body *b = m->body;
    km_expansion_write(f, m, &b->e);
    int64_t nk = task_kernels_differ(b);
    char d[160], kt[160];
    task_kernel_text(b, -1, d);
    if (nk)
        fprintf(f, "task_kernels %lld\n", (long long)nk);
    for (int64_t t = 0; t < b->nr_task && nk; t++) {
        task_kernel_text(b, t, kt);
        if (strcmp(d, kt))
            fprintf(f, "%lld %s\n", (long long)b->task_id[t], kt);
    }
    fprintf(f, "nr_task %lld\ntasks\n", (long long)b->nr_task);
    for (int64_t t = 0; t < b->nr_task; t++) {
        fprintf(f, "%lld %lld", (long long)b->task_id[t],
                (long long)(b->task_ptr[t + 1] - b->task_ptr[t]));
        km_model_put_pairs(f, b->task_row + b->task_ptr[t], b->task_coef + b->task_ptr[t],
                           b->task_ptr[t + 1] - b->task_ptr[t]);
    }
    return 0;
}

/* When line is "task_kernels K": reads it and K lines "ID KERNEL" (ids increasing, kernels
 * of km_basis_parse on all features) into *kid, *kk, *kline (their lines), then the next
 * line (*line). */
static int read_task_kernels(km_mio *io, const char **line, int64_t *nk, int64_t **kid,
                             km_kernel **kk, int64_t **kline, km_error *err)
{
    long long k = 0;
    *nk = 0;
    if (strncmp(*line, "task_kernels ", 13))
        return KM_OK;
    if (km_model_parse_int(*line + 13, 1, INT64_MAX / 64, &k))
        return km_mio_bad(io, "bad task_kernels count");
    int rc = km_mio_count(io, "task_kernels", k, 4, "task kernel lines");   /* "1 k\n" */
    if (rc)
        return rc;
    if (!(*kid = malloc((size_t)k * sizeof **kid)) || !(*kk = malloc((size_t)k * sizeof **kk)) ||
        !(*kline = malloc((size_t)k * sizeof **kline)))
        return km_error_nomem(err, "mtl task kernels");
    for (long long t = 0; t < k; t++) {
        const char *l = km_mio_line(io);
        if (!l)
            return km_mio_truncated(io, "%lld of %lld task kernels", t, k);
        char *end;
        errno = 0;
        long long id = strtoll(l, &end, 10);
        km_basis b;
        if (errno || end == l || *end != ' ' || id == INT64_MIN || (t && id <= (*kid)[t - 1]))
            return km_mio_bad(io, "expected 'TASK KERNEL' with task ids increasing");
        km_error kerr;
        if (km_basis_parse(end, INT32_MAX, &b, &kerr))
            return km_mio_bad(io, "%s", kerr.msg);
        int subset = b.feat != NULL;
        free(b.feat);
        if (subset)
            return km_mio_bad(io, "a task kernel sees all features (features=all)");
        (*kid)[t] = id;
        (*kk)[t] = b.kernel;
        (*kline)[t] = km_mio_lineno(io);
        *nk = t + 1;
    }
    *line = km_mio_line(io);
    return *line ? KM_OK : km_mio_truncated(io, "no 'nr_task' line");
}

/* After the support vectors: the tasks' own kernels (read_task_kernels), "nr_task M",
 * "tasks", M lines "ID L row:coef ..." (rows 1..nr_sv); then sets the model up. */
static int read_tasks(km_mio *io, km_model *m, const km_kernel *K, const km_kernel *Kt,
                      double alpha, double lambda, km_problem *sv, double *cbar, km_error *err)
{
    long long nt = 0;
    int64_t *id = NULL, *ptr = NULL, *row = NULL, cap = 0, cnt = 0;
    int64_t nk = 0, *kid = NULL, *kline = NULL;
    km_kernel *kk = NULL, *kern = NULL;
    double *coef = NULL;
    const char *line = km_mio_line(io);
    int rc = line ? read_task_kernels(io, &line, &nk, &kid, &kk, &kline, err)
             : km_mio_truncated(io, "no 'nr_task M' after the support vectors");
    if (rc == KM_OK && (strncmp(line, "nr_task ", 8) ||
                        km_model_parse_int(line + 8, 0, INT64_MAX / 2, &nt)))
        rc = km_mio_bad(io, "expected 'nr_task M' after the support vectors");
    else if (rc == KM_OK && (!(line = km_mio_line(io)) || strcmp(line, "tasks")))
        rc = km_mio_bad(io, "expected 'tasks'");
    else if (rc == KM_OK)   /* a task line "ID L" has at least 4 characters */
        rc = km_mio_count(io, "nr_task", nt, 4, "task lines");
    if (rc == KM_OK && (!(id = malloc(((size_t)nt + 1) * sizeof *id)) ||
                             !(ptr = calloc((size_t)nt + 1, sizeof *ptr))))
        rc = km_error_nomem(err, "mtl tasks");
    for (long long t = 0; t < nt && rc == KM_OK; t++) {
        if (!(line = km_mio_line(io))) {
            rc = km_mio_truncated(io, "%lld of %lld tasks", t, nt);
            break;
        }
        const char *p = line;
        char *end;
        errno = 0;
        long long tid = strtoll(p, &end, 10), l;
        if (errno || end == p || *end != ' ' || tid == INT64_MIN) {
            rc = km_mio_bad(io, "expected 'TASK L row:coef ...'");
            break;
        }
        l = strtoll(p = end + 1, &end, 10);   /* each " row:coef" has 4 characters or more */
        if (errno || end == p || l < 0 || l > sv->l || l > (long long)strlen(end) / 4) {
            rc = km_mio_bad(io, "expected 'TASK L row:coef ...'");
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
                rc = km_error_nomem(err, "mtl tasks");
                break;
            }
            cap = c2;
        }
        for (long long k = 0; k < l && rc == KM_OK; k++) {
            uint64_t ri;
            int status;
            if (*p++ != ' ' || (p = km_parse_uint(p, (uint64_t)sv->l, &ri, &status),
                                status != KM_NUM_OK) || ri == 0 || *p++ != ':') {
                rc = km_mio_bad(io, "expected L pairs row:coef with rows in 1..nr_sv");
                break;
            }
            p = km_parse_double(p, &coef[cnt], &status);
            if (status != KM_NUM_OK) {
                rc = km_mio_bad(io, "expected a finite task coefficient");
                break;
            }
            row[cnt++] = (int64_t)ri - 1;
        }
        if (rc == KM_OK && *p != '\0')
            rc = km_mio_bad(io, "unexpected text in a task line");
        ptr[t + 1] = cnt;
    }
    if (rc == KM_OK && !row && (!(row = malloc(sizeof *row)) || !(coef = malloc(sizeof *coef))))
        rc = km_error_nomem(err, "mtl tasks");
    if (rc == KM_OK && nk && !(kern = malloc(((size_t)nt + 1) * sizeof *kern)))
        rc = km_error_nomem(err, "mtl tasks");
    for (int64_t t = 0, k = 0; rc == KM_OK && kern && t <= nt; t++) {   /* K~_t of (5.3) */
        for (; rc == KM_OK && k < nk && (t == nt || kid[k] < id[t]); k++)
        {
            km_mio_set_lineno(io, kline[k]);
            rc = km_mio_bad(io, "task_kernels: task %lld is not among the tasks",
                            (long long)kid[k]);
        }
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
    rc = km_model_set_mtl(m, K, Kt, alpha, lambda, sv, cbar, nt, id, ptr, row, coef, kern, err);
    return rc ? km_mio_bad(io, "%s", err->msg) : KM_OK;
}

static int read_body(km_mio *io, km_model *m, km_error *err)
{
    km_kernel K, Kt;
    long long nr_sv;
    double alpha, lambda;
    const char *v;
    int rc = km_expansion_read_head(io, &K, &nr_sv, err);
    if (rc || (rc = km_model_get_kernel(io, "task_", &Kt, err)))
        return rc;
    if (!(v = km_mio_key(io, "lambda")) || km_mio_number(v, &lambda) || lambda < 0)
        return km_mio_bad(io, "mtl model header incomplete or bad (need lambda >= 0)");
    if (!(v = km_mio_key(io, "alpha")) || km_mio_number(v, &alpha) || !(alpha >= 0 && alpha <= 1))
        return km_mio_bad(io, "mtl model header incomplete or bad (need alpha in [0, 1])");
    if (m->nr_class != 0 || m->loss != KM_LOSS_RLS || m->bias >= 0)
        return km_mio_bad(io, "mtl model header inconsistent (need nr_class 0, loss rls, "
                          "bias -1)");
    if ((rc = km_model_check_nr_w(io, m)))
        return rc;
    km_problem *sv;
    double *cbar;
    if ((rc = km_model_get_svs(io, m, nr_sv, &sv, &cbar, err)))
        return rc;
    return read_tasks(io, m, &K, &Kt, alpha, lambda, sv, cbar, err);
}

static void free_body(km_model *m)
{
    km_mtl_body *b = m->body;
    km_expansion_free(&b->e);
    free(b->task_id);
    free(b->task_ptr);
    free(b->task_row);
    free(b->task_coef);
    free(b->task_kern);
    free(b);
    m->body = NULL;
}

/* The task with id qid: its index, or -1. */
static int64_t find_task(const km_mtl_body *b, int64_t qid)
{
    int64_t lo = 0, hi = b->nr_task;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (b->task_id[mid] < qid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->nr_task && b->task_id[lo] == qid ? lo : -1;
}

static int decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err)
{
    const km_mtl_body *b = m->body;
    int rc = km_expansion_rows(m, &b->e, X, rows, count, dec, threads, err);
    if (rc)
        return rc;
    /* (5.3): g_t(x) = alpha gbar(x) + (1 - alpha) sum_k c_k K~_t(sv_k, x), features > n
     * ignored */
    const km_problem *S = b->e.sv;
    for (int64_t a = 0; a < count; a++) {
        int64_t i = rows ? rows[a] : a, p0 = X->row_ptr[i], nnz = X->row_ptr[i + 1] - p0;
        int64_t t = X->qid && X->qid[i] != INT64_MIN ? find_task(b, X->qid[i])
                    : b->nr_task == 1 ? 0 : -1;
        while (nnz > 0 && X->index[p0 + nnz - 1] >= m->n)
            nnz--;
        double sq = 0, gt = 0;
        const km_kernel *kt = t >= 0 && b->task_kern ? &b->task_kern[t] : &b->task_kernel;
        for (int64_t q = p0; q < p0 + nnz; q++)
            sq += X->value[q] * X->value[q];
        /* rows (and support vectors) without entries may have no arrays: no NULL + 0 */
        const int32_t *xi = nnz ? X->index + p0 : NULL;
        const double *xv = nnz ? X->value + p0 : NULL;
        for (int64_t k = t < 0 ? 0 : b->task_ptr[t]; t >= 0 && k < b->task_ptr[t + 1]; k++) {
            int64_t r = b->task_row[k], c = S->row_ptr[r], cn = S->row_ptr[r + 1] - c;
            double sr = 0;
            for (int64_t q = c; q < c + cn; q++)
                sr += S->value[q] * S->value[q];
            gt += b->task_coef[k] * km_kernel_eval(kt, cn ? S->index + c : NULL,
                                                   cn ? S->value + c : NULL, cn, sr, xi, xv,
                                                   nnz, sq);
        }
        dec[a] = b->alpha * dec[a] + (1 - b->alpha) * gt;
    }
    return KM_OK;
}

static int has_task(const km_model *m, int64_t qid)
{
    const km_mtl_body *b = m->body;   /* no qid: the model's task when it has exactly one */
    return qid == INT64_MIN ? b->nr_task == 1 : find_task(b, qid) >= 0;
}

const km_model_kind km_kind_mtl = {
    .name = "mtl",
    .body_name = "tasks",
    .section = "sv",
    .write_head = write_head,
    .write_body = write_body,
    .read = read_body,
    .free_body = free_body,
    .decision_rows = decision_rows,
    .has_task = has_task,
};

km_mtl_body *km_model_mtl(const km_model *m)
{
    return m->kind == &km_kind_mtl ? m->body : NULL;
}

int km_model_set_mtl(km_model *m, const km_kernel *K, const km_kernel *Kt, double alpha,
                     double lambda, km_problem *sv, double *cbar, int64_t nr_task,
                     int64_t *task_id, int64_t *task_ptr, int64_t *task_row, double *task_coef,
                     km_kernel *task_kern, km_error *err)
{
    km_mtl_body *b = calloc(1, sizeof *b);
    if (!b) {
        km_problem_free(sv);
        free(cbar);
        free(task_id);
        free(task_ptr);
        free(task_row);
        free(task_coef);
        free(task_kern);
        return km_error_nomem(err, "mtl model");
    }
    km_model_set_body(m, &km_kind_mtl, b);
    m->loss = KM_LOSS_RLS;
    m->bias = -1;
    b->alpha = alpha;
    b->lambda = lambda;
    b->task_kernel = *Kt;
    b->nr_task = nr_task;
    b->task_id = task_id;
    b->task_ptr = task_ptr;
    b->task_row = task_row;
    b->task_coef = task_coef;
    b->task_kern = task_kern;
    int rc = km_expansion_init(&b->e, K, sv, cbar, err);
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
