/* mtmkl.c - see mtmkl.h. */
#include "mtmkl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "cd.h"
#include "numparse.h"
#include "rng.h"
#include "simd.h"

void km_mtmkl_tasks_free(km_mtmkl_tasks *k)
{
    if (!k)
        return;
    for (int32_t f = 0; f < k->nf; f++) {
        free(k->f[f].task);
        free(k->f[f].q);
    }
    for (int m = 0; m < k->M; m++)
        free(k->name[m]);
    free(k->name);
    free(k->f);
    free(k->task_id);
    memset(k, 0, sizeof *k);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int km_mtmkl_tasks_init(km_mtmkl_tasks *k, const km_problem *P, const int64_t *ids,
                        int64_t nids, km_error *err)
{
    memset(k, 0, sizeof *k);
    if (!P->qid)
        return km_error_set(err, KM_EINPUT, "-s mtmkl needs task ids (qid:) on the rows");
    int64_t n = P->l + nids;
    int64_t *all = malloc((size_t)(n > 0 ? n : 1) * sizeof *all);
    if (!all)
        return km_error_nomem(err, "tasks");
    for (int64_t i = 0; i < P->l; i++) {
        if (P->qid[i] == INT64_MIN) {
            free(all);
            return km_error_set(err, KM_EINPUT, "row %lld has no qid: -s mtmkl needs the task "
                                "of every row", (long long)i + 1);
        }
        all[i] = P->qid[i];
    }
    if (nids > 0)
        memcpy(all + P->l, ids, (size_t)nids * sizeof *ids);
    qsort(all, (size_t)n, sizeof *all, cmp_i64);
    int64_t T = 0;
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || all[i] != all[T - 1])
            all[T++] = all[i];
    if (T > INT32_MAX / 2) {
        free(all);
        return km_error_set(err, KM_EINPUT, "%lld tasks: too many", (long long)T);
    }
    k->T = (int32_t)T;
    k->task_id = all;
    return KM_OK;
}

int32_t km_mtmkl_task(const km_mtmkl_tasks *k, int64_t id)
{
    int32_t lo = 0, hi = k->T;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (k->task_id[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < k->T && k->task_id[lo] == id ? lo : -1;
}

/* Appends an empty kernel named name; its index, or -1 when out of memory. */
static int add_kernel(km_mtmkl_tasks *k, const char *name)
{
    char **grown = realloc(k->name, (size_t)(k->M + 1) * sizeof *grown);
    if (!grown)
        return -1;
    k->name = grown;
    if (!(k->name[k->M] = strdup(name ? name : "")))
        return -1;
    return k->M++;
}

/* Appends a factor lambda q q' of kernel m (q: nq entries at tasks, moved in). */
static int add_factor(km_mtmkl_tasks *k, int m, double lambda, int32_t nq, int32_t *task,
                      double *q)
{
    km_mtmkl_factor *grown = realloc(k->f, (size_t)(k->nf + 1) * sizeof *grown);
    if (!grown) {
        free(task);
        free(q);
        return -1;
    }
    k->f = grown;
    k->f[k->nf++] = (km_mtmkl_factor){m, lambda, nq, task, q};
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int km_mtmkl_add_group(km_mtmkl_tasks *k, const int64_t *S, int64_t n, const char *name,
                       km_error *err)
{
    int32_t *task = malloc((size_t)(n > 0 ? n : 1) * sizeof *task);
    double *q = malloc((size_t)(n > 0 ? n : 1) * sizeof *q);
    int m = task && q ? add_kernel(k, name) : -1;
    if (m < 0) {
        free(task);
        free(q);
        return km_error_nomem(err, "task groups");
    }
    int32_t nq = 0;
    for (int64_t a = 0; a < n; a++) {
        int32_t t = km_mtmkl_task(k, S[a]);
        if (t < 0) {
            free(task);
            free(q);
            return km_error_set(err, KM_EINPUT, "group '%s': task %lld unknown", name,
                                (long long)S[a]);
        }
        task[nq++] = t;
    }
    qsort(task, (size_t)nq, sizeof *task, cmp_i32);
    int32_t u = 0;
    for (int32_t a = 0; a < nq; a++)   /* a task twice in a group counts once: 1_S 1_S' */
        if (a == 0 || task[a] != task[u - 1])
            task[u++] = task[a];
    if (u == 0) {
        free(task);
        free(q);
        return km_error_set(err, KM_EINPUT, "group '%s' is empty", name);
    }
    for (int32_t a = 0; a < u; a++)
        q[a] = 1;
    return add_factor(k, m, 1, u, task, q) ? km_error_nomem(err, "task groups") : KM_OK;
}

int km_mtmkl_add_identity(km_mtmkl_tasks *k, const char *name, km_error *err)
{
    int m = add_kernel(k, name);
    if (m < 0)
        return km_error_nomem(err, "task kernel");
    for (int32_t t = 0; t < k->T; t++) {
        int32_t *task = malloc(sizeof *task);
        double *q = malloc(sizeof *q);
        if (!task || !q) {
            free(task);
            free(q);
            return km_error_nomem(err, "task kernel");
        }
        task[0] = t;
        q[0] = 1;
        if (add_factor(k, m, 1, 1, task, q))
            return km_error_nomem(err, "task kernel");
    }
    return KM_OK;
}

int km_mtmkl_add_matrix(km_mtmkl_tasks *k, const double *G, const char *name, km_error *err)
{
    int32_t T = k->T;
    double *A = malloc((size_t)T * (size_t)T * sizeof *A), *w = malloc((size_t)T * sizeof *w);
    int m = A && w ? add_kernel(k, name) : -1;
    if (m < 0) {
        free(A);
        free(w);
        return km_error_nomem(err, "task kernel");
    }
    for (int64_t a = 0; a < (int64_t)T * T; a++) {
        if (!isfinite(G[a]) || G[a] != G[(a % T) * T + a / T]) {
            free(A);
            free(w);
            return km_error_set(err, KM_EINPUT, "task kernel '%s': not finite or not "
                                "symmetric at tasks %lld, %lld", name,
                                (long long)k->task_id[a / T], (long long)k->task_id[a % T]);
        }
        A[a] = G[a];
    }
    /* G = sum_k lambda_k q_k q_k' over the eigenpairs with lambda_k > 0 */
    lapack_int info = LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', T, A, T, w);
    int rc = info == 0 ? KM_OK : km_error_set(err, KM_EINTERNAL, "task kernel '%s': dsyevd "
                                              "failed (%d)", name, (int)info);
    double top = 0;
    for (int32_t j = 0; j < T && rc == KM_OK; j++)
        top = fmax(top, fabs(w[j]));
    for (int32_t j = 0; j < T && rc == KM_OK; j++) {
        if (w[j] < -1e-10 * top) {
            rc = km_error_set(err, KM_EINPUT, "task kernel '%s' is not positive semi-definite "
                              "(eigenvalue %.3g)", name, w[j]);
            break;
        }
        if (w[j] <= 1e-12 * top)
            continue;
        int32_t *task = malloc((size_t)T * sizeof *task);
        double *q = malloc((size_t)T * sizeof *q);
        int32_t nq = 0;
        if (task && q)
            for (int32_t t = 0; t < T; t++)
                if (A[(int64_t)t * T + j] != 0) {
                    task[nq] = t;
                    q[nq++] = A[(int64_t)t * T + j];
                }
        if (!task || !q || add_factor(k, m, w[j], nq, task, q)) {
            if (!task || !q) {
                free(task);
                free(q);
            }
            rc = km_error_nomem(err, "task kernel");
        }
    }
    free(A);
    free(w);
    return rc;
}

/* Parses a task id or range "A" / "A-B" at *p; advances *p. 0 on success. */
static int parse_range(const char **p, int64_t *a, int64_t *b)
{
    char *end;
    errno = 0;
    *a = strtoll(*p, &end, 10);
    if (errno || end == *p)
        return -1;
    *b = *a;
    if (*end == '-' && isdigit((unsigned char)end[1])) {
        const char *q = end + 1;
        *b = strtoll(q, &end, 10);
        if (errno || *b < *a || *b - *a > 10000000)
            return -1;
    }
    *p = end;
    return 0;
}

int km_mtmkl_read_groups(const char *path, int64_t **ids, int64_t **ptr, int64_t *nlines,
                         km_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int64_t n = 0, nl = 0, icap = 64, pcap = 16, lineno = 0;
    int64_t *gid = malloc((size_t)icap * sizeof *gid), *goff = malloc((size_t)pcap * sizeof *goff);
    int rc = gid && goff ? KM_OK : km_error_nomem(err, "groups");
    if (goff)
        goff[0] = 0;
    while (rc == KM_OK && getline(&line, &cap, f) >= 0) {
        lineno++;
        const char *p = line;
        int64_t start = n;
        for (;;) {
            while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\r' || *p == '\n')
                p++;
            if (*p == '\0' || *p == '#')
                break;
            int64_t a, b;
            if (parse_range(&p, &a, &b) || (*p && !strchr(" \t,\r\n#", *p))) {
                rc = km_error_set(err, KM_EINPUT, "%s:%lld:%lld: expected a task id or a range "
                                  "A-B", path, (long long)lineno, (long long)(p - line) + 1);
                break;
            }
            for (int64_t v = a; v <= b && rc == KM_OK; v++) {
                if (n == icap) {
                    int64_t *g = realloc(gid, (size_t)(icap *= 2) * sizeof *g);
                    if (!g) {
                        rc = km_error_nomem(err, "groups");
                        break;
                    }
                    gid = g;
                }
                gid[n++] = v;
            }
        }
        if (rc != KM_OK || n == start)
            continue;
        if (nl + 2 > pcap) {
            int64_t *g = realloc(goff, (size_t)(pcap *= 2) * sizeof *g);
            if (!g) {
                rc = km_error_nomem(err, "groups");
                break;
            }
            goff = g;
        }
        goff[++nl] = n;
    }
    if (rc == KM_OK && ferror(f))
        rc = km_error_set(err, KM_EINPUT, "%s: read error", path);
    if (rc == KM_OK && nl == 0)
        rc = km_error_set(err, KM_EINPUT, "%s: no groups", path);
    free(line);
    fclose(f);
    if (rc != KM_OK) {
        free(gid);
        free(goff);
        return rc;
    }
    *ids = gid;
    *ptr = goff;
    *nlines = nl;
    return KM_OK;
}

int km_mtmkl_read_sim(const char *path, double **trip, int64_t *ntrip, int *M, km_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int64_t n = 0, tcap = 64, lineno = 0;
    double *t = malloc((size_t)tcap * 4 * sizeof *t);
    int rc = t ? KM_OK : km_error_nomem(err, "task similarities"), maxm = 0;
    while (rc == KM_OK && getline(&line, &cap, f) >= 0) {
        lineno++;
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        long long m, a, b;
        char tail[2];
        double v;
        if (sscanf(p, "%lld %lld %lld %lf %1s", &m, &a, &b, &v, tail) != 4 || m < 1 ||
            m > 100000 || !isfinite(v)) {
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: expected 'KERNEL TASK TASK VALUE' "
                              "(KERNEL from 1, VALUE finite)", path, (long long)lineno);
            break;
        }
        if (n == tcap) {
            double *g = realloc(t, (size_t)(tcap *= 2) * 4 * sizeof *g);
            if (!g) {
                rc = km_error_nomem(err, "task similarities");
                break;
            }
            t = g;
        }
        t[4 * n] = (double)m - 1;
        t[4 * n + 1] = (double)a;
        t[4 * n + 2] = (double)b;
        t[4 * n + 3] = v;
        n++;
        maxm = m > maxm ? (int)m : maxm;
    }
    free(line);
    fclose(f);
    if (rc == KM_OK && n == 0)
        rc = km_error_set(err, KM_EINPUT, "%s: no similarities", path);
    if (rc != KM_OK) {
        free(t);
        return rc;
    }
    *trip = t;
    *ntrip = n;
    *M = maxm;
    return KM_OK;
}

void km_mtmkl_result_free(km_mtmkl_result *r)
{
    if (!r)
        return;
    free(r->theta);
    free(r->beta);
    free(r->g);
    free(r->alpha);
    memset(r, 0, sizeof *r);
}

/* ---- the solver ---- */

/* Per task: the factors with q[t] != 0 and their weights w = theta_m lambda_k q_k[t] (for
 * z) and q_k[t] (for the updates of g_k). */
typedef struct task_factors {
    int64_t *ptr;        /* T + 1 */
    int32_t *fac;
    double *q, *w;
    double *gdiag;       /* T: G_theta[t, t] = sum theta_m lambda_k q_k[t]^2 */
} task_factors;

static void tf_free(task_factors *tf)
{
    free(tf->ptr);
    free(tf->fac);
    free(tf->q);
    free(tf->w);
    free(tf->gdiag);
}

static int tf_build(const km_mtmkl_tasks *k, task_factors *tf, km_error *err)
{
    memset(tf, 0, sizeof *tf);
    int64_t total = 0;
    for (int32_t f = 0; f < k->nf; f++)
        total += k->f[f].nq;
    tf->ptr = calloc((size_t)k->T + 1, sizeof *tf->ptr);
    tf->fac = malloc((size_t)(total > 0 ? total : 1) * sizeof *tf->fac);
    tf->q = malloc((size_t)(total > 0 ? total : 1) * sizeof *tf->q);
    tf->w = malloc((size_t)(total > 0 ? total : 1) * sizeof *tf->w);
    tf->gdiag = malloc((size_t)(k->T > 0 ? k->T : 1) * sizeof *tf->gdiag);
    if (!tf->ptr || !tf->fac || !tf->q || !tf->w || !tf->gdiag) {
        tf_free(tf);
        return km_error_nomem(err, "task factors");
    }
    for (int32_t f = 0; f < k->nf; f++)
        for (int32_t a = 0; a < k->f[f].nq; a++)
            tf->ptr[k->f[f].task[a] + 1]++;
    for (int32_t t = 0; t < k->T; t++)
        tf->ptr[t + 1] += tf->ptr[t];
    int64_t *at = malloc((size_t)(k->T > 0 ? k->T : 1) * sizeof *at);
    if (!at) {
        tf_free(tf);
        return km_error_nomem(err, "task factors");
    }
    memcpy(at, tf->ptr, (size_t)k->T * sizeof *at);
    for (int32_t f = 0; f < k->nf; f++)
        for (int32_t a = 0; a < k->f[f].nq; a++) {
            int64_t s = at[k->f[f].task[a]]++;
            tf->fac[s] = f;
            tf->q[s] = k->f[f].q[a];
        }
    free(at);
    return KM_OK;
}

/* The weights of theta: w = theta_m lambda_k q_k[t], and G_theta[t, t]. */
static void tf_weigh(const km_mtmkl_tasks *k, task_factors *tf, const double *theta)
{
    for (int32_t t = 0; t < k->T; t++) {
        double gd = 0;
        for (int64_t s = tf->ptr[t]; s < tf->ptr[t + 1]; s++) {
            const km_mtmkl_factor *F = &k->f[tf->fac[s]];
            tf->w[s] = theta[F->m] * F->lambda * tf->q[s];
            gd += tf->w[s] * tf->q[s];
        }
        tf->gdiag[t] = gd;
    }
}

/* x_i'g for a sparse row (features >= d ignored). */
static inline double dot(const double *g, int32_t d, const int32_t *ix, const double *v,
                         int64_t nnz)
{
    double s = 0;
    for (int64_t j = 0; j < nnz; j++)
        if (ix[j] < d)
            s += v[j] * g[ix[j]];
    return s;
}

/* x_i'g for a training row (every index below d): four chains, not latency-bound (cd.c). */
static inline double row_dot(const double *restrict g, const int32_t *restrict ix,
                             const double *restrict v, int64_t nnz)
{
    double d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    int64_t j = 0;
    for (; j + 4 <= nnz; j += 4) {
        d0 += v[j] * g[ix[j]];
        d1 += v[j + 1] * g[ix[j + 1]];
        d2 += v[j + 2] * g[ix[j + 2]];
        d3 += v[j + 3] * g[ix[j + 3]];
    }
    for (; j < nnz; j++)
        d0 += v[j] * g[ix[j]];
    return (d0 + d1) + (d2 + d3);
}

/* z_i = x_i'U[:, t] for a training row (every index below d). */
static inline __attribute__((always_inline)) double row_z(const task_factors *tf, const double *restrict g, int32_t d,
                           int32_t t, const int32_t *restrict ix, const double *restrict v,
                           int64_t nnz)
{
    double z = 0;
    for (int64_t s = tf->ptr[t]; s < tf->ptr[t + 1]; s++) {
        z += tf->w[s] * row_dot(g + (int64_t)tf->fac[s] * d, ix, v, nnz);
    }
    return z;
}

/* row_z for a dense row (its n values v at the features j0 .. j0 + n - 1): contiguous
 * loads, 8 partial sums in fixed lanes (vectorised without reassociation: every clone of
 * KM_VECTOR_CLONES gives the same bits). The gathers of row_dot were 80% of a solve on the
 * 32-task tree (640 x 100 dense rows, 7 factors a task). */
KM_VECTOR_CLONES
static double dense_z(const double *w, const int32_t *fac, int64_t ns, const double *g,
                      int32_t d, int32_t j0, const double *restrict v, int64_t n)
{
    double z = 0;
    for (int64_t s = 0; s < ns; s++) {
        const double *restrict gk = g + (int64_t)fac[s] * d + j0;
        double acc[8] = {0};
        int64_t j = 0;
        for (; j + 8 <= n; j += 8)
            for (int u = 0; u < 8; u++)
                acc[u] += v[j + u] * gk[j + u];
        for (int u = 0; j < n; j++, u++)
            acc[u] += v[j] * gk[j];
        z += w[s] * (((acc[0] + acc[1]) + (acc[2] + acc[3])) +
                     ((acc[4] + acc[5]) + (acc[6] + acc[7])));
    }
    return z;
}

/* g_k += h q_k[t] x_i over the task's factors, for a dense row (as dense_z). */
KM_VECTOR_CLONES
static void dense_update(const double *q, const int32_t *fac, int64_t ns, double *g, int32_t d,
                         int32_t j0, const double *restrict v, int64_t n, double h)
{
    for (int64_t s = 0; s < ns; s++) {
        double *restrict gk = g + (int64_t)fac[s] * d + j0, hq = h * q[s];
        for (int64_t j = 0; j < n; j++)
            gk[j] += hq * v[j];
    }
}

/* Kernel mode: z_i = sum_k w(t, k) s_k[i]. */
static inline double s_z(const task_factors *tf, const double *S, int64_t l, int32_t t,
                         int64_t i)
{
    double z = 0;
    for (int64_t s = tf->ptr[t]; s < tf->ptr[t + 1]; s++)
        z += tf->w[s] * S[(int64_t)tf->fac[s] * l + i];
    return z;
}

/* ||beta||_{p*}, p* = p / (p - 1) (p = 1: the largest beta). */
static double dual_norm(const double *beta, int M, double p)
{
    double top = 0;
    for (int m = 0; m < M; m++)
        top = fmax(top, beta[m]);
    if (p <= 1 || top == 0)
        return top;
    double ps = p / (p - 1), s = 0;
    for (int m = 0; m < M; m++)
        s += pow(beta[m] / top, ps);
    return top * pow(s, 1 / ps);
}

/* What a coordinate step reads of row i, in one place (one cache line in random order, as
 * cd.c's cd_coord): its nonzeros [b, e), y_i, alpha_i, k(x_i, x_i), its task, and its
 * hinge 1 - y_i z_i (>= 0) when last visited, for the estimate of the gap. */
typedef struct mt_coord {
    _Alignas(64) int64_t b;   /* 64 bytes: one line, prefetched whole */
    int64_t e;
    double y, alpha, xsq, xi;
    int32_t t;
    int32_t j0;   /* the row's features are j0, j0 + 1, ... (a dense row), or -1 */
} mt_coord;

/* how many visits ahead the rows (and, twice as far, the coordinates) are prefetched */
enum { MT_PREFETCH = 16 };

/* The scale s when the task kernels are one G = s' 11' over all tasks (M = 1, one factor
 * lambda q q' with q[t] = q0 for every t): then theta = 1 (M = 1), k~(i, j) = s x_i'x_j with
 * s = lambda q0^2, and the problem is l1svm's; else 0. */
static double one_kernel_scale(const km_mtmkl_tasks *k)
{
    if (k->M != 1 || k->nf != 1 || k->f[0].nq != k->T || k->T < 1)
        return 0;
    const km_mtmkl_factor *F = &k->f[0];
    for (int32_t a = 1; a < F->nq; a++)
        if (F->q[a] != F->q[0])
            return 0;
    double s = F->lambda * F->q[0] * F->q[0];
    return s > 0 && isfinite(s) ? s : 0;
}

/*
 * The one-kernel case (one_kernel_scale s > 0) by cd.c's linear l1svm solver, so that it
 * gets the same shrinking, gap estimate, order and subspace walk (face.h) as `train -s
 * l1svm`: with a = b / s the dual 1'a - s a'YXX'Ya/2 over [0, C] is (1/s) times l1svm's dual
 * in b over [0, s C], so b comes from km_cd_linear with C_i = s C and w = X'Yb; then
 * alpha = b / s, c = Yb / s, g = q0 w / s (z_i = s x_i'g / q0 = x_i'w), beta = lambda ||g||^2
 * = ||w||^2 / s, the primal (1/s) times l1svm's and the relative gap the same.
 */
static int train_as_l1svm(const km_problem *P, const double *ylab, const km_mtmkl_tasks *k,
                          const km_mtmkl_param *par, double s, km_mtmkl_result *r,
                          km_error *err)
{
    int64_t l = P->l;
    int32_t d = P->n;
    size_t len = (size_t)(l > 0 ? l : 1);
    double *Ci = malloc(len * sizeof *Ci), *c = malloc(len * sizeof *c);
    double *w = malloc(((size_t)d + 1) * sizeof *w);
    int rc = KM_OK;
    if (!Ci || !c || !w) {
        rc = km_error_nomem(err, "mtmkl");
        goto out;
    }
    for (int64_t i = 0; i < l; i++)
        Ci[i] = s * par->C;
    km_cd_param cp = km_cd_param_default();
    cp.loss = KM_LOSS_L1SVM;
    cp.delta = par->eps;
    cp.seed = par->seed;
    cp.max_iter = par->max_iter;
    km_cd_result res = {0};
    km_linear_data ld = {P, NULL, l, 0};
    if ((rc = km_cd_linear(&ld, ylab, Ci, &cp, w, c, &res, err)))
        goto out;
    double q0 = k->f[0].q[0], sa = 0, ww = 0;
    for (int64_t i = 0; i < l; i++) {
        r->alpha[i] = ylab[i] * c[i] / s;
        sa += r->alpha[i];
    }
    for (int32_t j = 0; j < d; j++) {
        r->g[j] = q0 * w[j] / s;
        ww += r->g[j] * r->g[j];
    }
    r->theta[0] = 1;
    r->beta[0] = k->f[0].lambda * ww;
    r->primal = res.primal / s;
    r->dual = sa - r->beta[0] / 2;   /* theta = 1: ||beta||_{p*} = theta beta = beta */
    r->gap = r->primal > 0 ? (r->primal - r->dual) / r->primal : 0;
    r->passes = res.iter;
    r->converged = res.converged;
    if (par->progress)
        par->progress(par->user, r->passes, r->primal, r->gap);
out:
    free(Ci);
    free(c);
    free(w);
    return rc;
}

/*
 * p = 1: the active-set Newton walk on the optimality system of the saddle point
 * min_{theta in the simplex} max_{0 <= alpha <= C} 1'alpha - 1/2 sum_m theta_m beta_m(alpha)
 * (doc/mtmkl.md, "p = 1"). With F the rows whose alpha_i is strictly inside (0, C), S the
 * kernels with theta_m > 0 and u the largest beta, the optimum solves
 *   y_i z_i = 1 (i in F),  beta_m(c) = u (m in S),  sum_{m in S} theta_m = 1,
 * z = sum_{m in S} theta_m K~_m c, the rows outside F at their bounds: n_F + |S| + 1
 * equations in (c_F, theta_S, u), bilinear; Newton's step solves
 *   [K~_theta,FF   A      0   ] [dc   ]   [-(z_F - y_F)         ]
 *   [A'            0    -1/2 1] [dtheta] = [-(beta_S - u 1) / 2  ]
 *   [0          -1/2 1'   0   ] [du   ]   [(sum theta_S - 1) / 2]
 * with A[i, m] = (K~_m c)_i (symmetric indefinite: LAPACK dsysv). Between Newton solves the
 * sets change as in an active-set method: a coefficient that left [0, C] is put on the bound
 * it crossed and leaves F, a weight below 0 is set to 0 and leaves S (within the step: the
 * Schur system is solved again without it); when the system is solved or a step was cut by
 * a bound, a kernel with beta_m > u joins S and a row at a bound whose gradient points
 * inward joins F. The result is a candidate only: the caller computes its primal and dual exactly and
 * keeps it when the duality gap at least halved (else the state before the walk comes back).
 * Linear mode, K~_m(i, j) = G_m[t_i, t_j] x_i'x_j from the dense Gram matrix of F's rows.
 */
/* the most rows in F (a dense WALK_MAXN^2 system) and task kernels (the Schur complement) */
enum { WALK_MAXN = 1500, WALK_MAXM = 512 };
/* at most WALK_ITERS Newton steps a walk, each first tried whole and halved up to
 * WALK_HALVINGS - 1 times; WALK_STALL steps in a row without progress end it */
enum { WALK_ITERS = 40, WALK_HALVINGS = 6, WALK_STALL = 5 };
/* the residual below which violators outside (F, S) come in */
#define WALK_NEAR 1e-6

/* g_k = sum_i q_k[t_i] c_i x_i from the alpha_i (c_i = y_i alpha_i). */
static void g_from_alpha(const km_problem *P, const task_factors *tf, const mt_coord *co,
                         int64_t l, int32_t d, int32_t nf, double *g)
{
    memset(g, 0, (size_t)nf * (size_t)d * sizeof *g);
    for (int64_t i = 0; i < l; i++) {
        double c = co[i].y * co[i].alpha;
        if (c == 0)
            continue;
        for (int64_t s = tf->ptr[co[i].t]; s < tf->ptr[co[i].t + 1]; s++) {
            double *gk = g + (int64_t)tf->fac[s] * d, cq = c * tf->q[s];
            for (int64_t j = P->row_ptr[i]; j < P->row_ptr[i + 1]; j++)
                gk[P->index[j]] += cq * P->value[j];
        }
    }
}

/* beta_m = sum_{k in m} lambda_k ||g_k||^2. */
static void beta_from_g(const km_mtmkl_tasks *k, const double *g, int32_t d, double *beta)
{
    memset(beta, 0, (size_t)k->M * sizeof *beta);
    for (int32_t f = 0; f < k->nf; f++) {
        const double *gk = g + (int64_t)f * d;
        double s = 0;
        for (int32_t j = 0; j < d; j++)
            s += gk[j] * gk[j];
        beta[k->f[f].m] += k->f[f].lambda * s;
    }
}

/* z_i = sum_m theta_m (K~_m c)_i for row i of task t (theta given, not tf's weights). */
static double z_theta(const km_mtmkl_tasks *k, const task_factors *tf, const double *g,
                      int32_t d, const double *theta, const km_problem *P, int64_t i, int32_t t)
{
    int64_t b = P->row_ptr[i];
    double z = 0;
    for (int64_t s = tf->ptr[t]; s < tf->ptr[t + 1]; s++) {
        const km_mtmkl_factor *Fk = &k->f[tf->fac[s]];
        if (theta[Fk->m] != 0)
            z += theta[Fk->m] * Fk->lambda * tf->q[s] *
                 row_dot(g + (int64_t)tf->fac[s] * d, P->index + b, P->value + b,
                         P->row_ptr[i + 1] - b);
    }
    return z;
}

/* The walk's per-task sums (T x d each, when T d <= WALK_MAXTD; else NULL and the per-factor
 * sums above): V[t] = v_t = sum_{i in task t} c_i x_i, U[t] = U[:, t] = sum_m theta_m
 * sum_{k in m} lambda_k q_k[t] g_k. g_k = sum_t q_k[t] v_t and z_i = x_i'U[:, t_i] then cost
 * one d-vector a row where the per-factor sums cost one per factor of its task (6 on the
 * 32-task tree: g and z over all rows were 12% of a p = 1 run there). */
enum { WALK_MAXTD = 1 << 22 };
typedef struct walk_sums {
    double *V, *U;
} walk_sums;

/* g_k = sum_i q_k[t_i] c_i x_i by way of the v_t (ws->V) or directly. */
static void walk_g(const km_problem *P, const km_mtmkl_tasks *k, const task_factors *tf,
                   const mt_coord *co, int64_t l, int32_t d, const walk_sums *ws, double *g)
{
    if (!ws->V) {
        g_from_alpha(P, tf, co, l, d, k->nf, g);
        return;
    }
    double *V = ws->V;
    memset(V, 0, (size_t)k->T * (size_t)d * sizeof *V);
    for (int64_t i = 0; i < l; i++) {
        double c = co[i].y * co[i].alpha;
        if (c == 0)
            continue;
        double *vt = V + (int64_t)co[i].t * d;
        for (int64_t j = P->row_ptr[i]; j < P->row_ptr[i + 1]; j++)
            vt[P->index[j]] += c * P->value[j];
    }
    memset(g, 0, (size_t)k->nf * (size_t)d * sizeof *g);
    for (int32_t f = 0; f < k->nf; f++) {
        double *gk = g + (int64_t)f * d;
        for (int32_t x = 0; x < k->f[f].nq; x++) {
            const double *vt = V + (int64_t)k->f[f].task[x] * d, q = k->f[f].q[x];
            for (int32_t j = 0; j < d; j++)
                gk[j] += q * vt[j];
        }
    }
}

/* U[:, t] for theta (ws->U). */
static void walk_u(const km_mtmkl_tasks *k, const double *g, int32_t d, const double *theta,
                   const walk_sums *ws)
{
    double *U = ws->U;
    memset(U, 0, (size_t)k->T * (size_t)d * sizeof *U);
    for (int32_t f = 0; f < k->nf; f++) {
        double w = theta[k->f[f].m] * k->f[f].lambda;
        if (w == 0)
            continue;
        const double *gk = g + (int64_t)f * d;
        for (int32_t x = 0; x < k->f[f].nq; x++) {
            double *ut = U + (int64_t)k->f[f].task[x] * d, wq = w * k->f[f].q[x];
            for (int32_t j = 0; j < d; j++)
                ut[j] += wq * gk[j];
        }
    }
}

/* z_i = sum_m theta_m (K~_m c)_i by way of U (walk_u done for theta) or directly. */
static double walk_z(const km_mtmkl_tasks *k, const task_factors *tf, const double *g,
                     int32_t d, const double *theta, const km_problem *P, int64_t i, int32_t t,
                     const walk_sums *ws)
{
    if (!ws->U)
        return z_theta(k, tf, g, d, theta, P, i, t);
    int64_t b = P->row_ptr[i];
    return row_dot(ws->U + (int64_t)t * d, P->index + b, P->value + b, P->row_ptr[i + 1] - b);
}

/* The relative duality gap of Problem 3 at p = 1 at the alpha_i of co and theta / sum theta
 * (g and beta recomputed). */
static double walk_gap(const km_problem *P, const km_mtmkl_tasks *k, const task_factors *tf,
                       const mt_coord *co, int64_t l, int32_t d, double C, double *g,
                       double *beta, const double *theta, const walk_sums *ws)
{
    walk_g(P, k, tf, co, l, d, ws, g);
    beta_from_g(k, g, d, beta);
    if (ws->U)
        walk_u(k, g, d, theta, ws);
    double ts = 0, reg = 0, bmax = 0, loss = 0, sa = 0;
    for (int m = 0; m < k->M; m++) {
        ts += theta[m];
        reg += theta[m] * beta[m];
        bmax = fmax(bmax, beta[m]);
    }
    if (!(ts > 0))
        return INFINITY;
    for (int64_t i = 0; i < l; i++) {
        double xi = 1 - co[i].y * walk_z(k, tf, g, d, theta, P, i, co[i].t, ws) / ts;
        loss += xi > 0 ? xi : 0;
        sa += co[i].alpha;
    }
    double primal = reg / ts / 2 + C * loss, dual = sa - bmax / 2;
    return primal > 0 ? (primal - dual) / primal : 0;
}

/* Row a of K~_theta,FF from b = a on: G_theta[t_a, t_b] (X_F X_F')[a, b] (restrict: without
 * it the loop reloaded its pointers at every entry, 5% of a p = 1 run on the 32-task tree). */
static void fill_row(double *restrict Lr, const double *restrict Gr,
                     const int32_t *restrict tF, const double *restrict Xr, int64_t a,
                     int64_t nF)
{
    for (int64_t b = a; b < nF; b++)
        Lr[b] = Gr[tF[b]] * Xr[b];
}

/* Returns KM_OK (then *moved says whether a candidate is in co, g, theta) or an error. */
static int walk_p1(const km_problem *P, const km_mtmkl_tasks *k, const task_factors *tf,
                   mt_coord *co, int64_t l, int32_t d, double C, double *g, double *theta,
                   double *beta, int *moved, km_error *err)
{
    const int M = k->M;
    const int32_t T = k->T, nf = k->nf;
    *moved = 0;
    int64_t nF = 0;
    for (int64_t i = 0; i < l; i++)
        nF += co[i].alpha > 0 && co[i].alpha < C;
    if (nF == 0 || nF > WALK_MAXN || d < 1 || (double)nF * d > (double)(1 << 22) ||
        (double)T * T > (double)(1 << 22) || M > WALK_MAXM)
        return KM_OK;
    const size_t cap = (size_t)(l < WALK_MAXN ? l : WALK_MAXN), ms = (size_t)M + 1;
    int64_t *Fi = malloc(cap * sizeof *Fi), nX = 0;   /* Xd, XX filled for F's rows [0, nX) */
    const int64_t ldx = (int64_t)cap;
    int32_t *tF = malloc(cap * sizeof *tF);   /* the tasks of F's rows */
    char *inF = calloc((size_t)(l > 0 ? l : 1), 1);
    int *Spos = malloc((size_t)M * sizeof *Spos), *Sm = malloc((size_t)M * sizeof *Sm);
    double *Xd = malloc(cap * (size_t)d * sizeof *Xd), *XX = malloc(cap * cap * sizeof *XX);
    double *L = malloc(cap * cap * sizeof *L), *A = malloc(cap * (size_t)M * sizeof *A);
    double *W = malloc(cap * (size_t)M * sizeof *W), *Gt = malloc((size_t)T * T * sizeof *Gt);
    double *Sc = malloc(ms * ms * sizeof *Sc), *b1 = malloc(cap * sizeof *b1);
    double *v = malloc(ms * sizeof *v), *save_a = malloc(cap * sizeof *save_a);
    double *save_t = malloc((size_t)M * sizeof *save_t), *Sc2 = malloc(ms * ms * sizeof *Sc2);
    double *v2 = malloc(ms * sizeof *v2);
    lapack_int *piv = malloc(ms * sizeof *piv);
    double *H = malloc(ms * ms * sizeof *H), *vr = malloc(ms * sizeof *vr);
    double *dth = malloc(ms * sizeof *dth);
    int *fix = malloc(ms * sizeof *fix), *ridx = malloc(ms * sizeof *ridx);
    walk_sums ws = {NULL, NULL};
    if ((double)T * d <= WALK_MAXTD) {
        ws.V = malloc((size_t)T * (size_t)d * sizeof *ws.V);
        ws.U = malloc((size_t)T * (size_t)d * sizeof *ws.U);
    }
    int rc = KM_OK, done = 0, nS = 0;
    if ((double)T * d <= WALK_MAXTD && (!ws.V || !ws.U)) {
        rc = km_error_nomem(err, "mtmkl walk");
        goto out;
    }
    if (!Fi || !tF || !inF || !Spos || !Sm || !Xd || !XX || !L || !A || !W || !Gt || !Sc || !b1 ||
        !v || !save_a || !save_t || !Sc2 || !v2 || !piv || !H || !vr || !dth || !fix || !ridx) {
        rc = km_error_nomem(err, "mtmkl walk");
        goto out;
    }
    double bmax = 0;
    for (int m = 0; m < M; m++)
        bmax = fmax(bmax, beta[m]);
    /* S: the kernels whose beta is at least half the largest (at the optimum S's betas are
     * all the largest; on the 32-task tree this start takes 10-50 passes at C <= 1e-4
     * where the weights above 1e-6 of the largest took 60-1,900) */
    for (int m = 0; m < M; m++) {
        Spos[m] = -1;
        if (beta[m] >= 0.5 * bmax)
            Sm[Spos[m] = nS++] = m;
        else
            theta[m] = 0;
    }
    nF = 0;
    for (int64_t i = 0; i < l; i++)
        if (co[i].alpha > 0 && co[i].alpha < C) {
            Fi[nF++] = i;
            inF[i] = 1;
        }
    double u = 0, gapc = INFINITY, best_gap = INFINITY, best_rn = INFINITY;
    /* gapc: the gap at the current point when known; solved_gap: at the last point that
     * solved the system on (F, S); blocked: the last step was cut by a bound */
    double solved_gap = INFINITY;
    int stall = 0, blocked = 0, single = 0;
    for (int s = 0; s < nS; s++)
        u = fmax(u, beta[Sm[s]]);
    for (int it = 0; it < WALK_ITERS && !done; it++) {
        if (nF == 0 || nS == 0)
            break;
        if (nX < nF) {   /* XX = X_F X_F': the rows and columns of F's new rows (BLAS) */
            memset(Xd + nX * d, 0, (size_t)(nF - nX) * (size_t)d * sizeof *Xd);
            for (int64_t a = nX; a < nF; a++)
                for (int64_t j = P->row_ptr[Fi[a]]; j < P->row_ptr[Fi[a] + 1]; j++)
                    Xd[a * d + P->index[j]] = P->value[j];
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(nF - nX), (int)nF, d, 1,
                        Xd + nX * d, d, Xd, d, 0, XX + nX * ldx, (int)ldx);
            for (int64_t a = nX; a < nF; a++)
                for (int64_t b = 0; b < nX; b++)
                    XX[b * ldx + a] = XX[a * ldx + b];
            nX = nF;
        }
        if (gapc == INFINITY) {   /* else walk_gap computed them at this point */
            walk_g(P, k, tf, co, l, d, &ws, g);
            beta_from_g(k, g, d, beta);
        }
        /* A[a, s] = (K~_m c)_i = sum_{k in m} lambda_k q_k[t_i] x_i'g_k; the residuals */
        memset(A, 0, (size_t)nF * (size_t)nS * sizeof *A);
        double rn = 0, ts = 0;
        for (int64_t a = 0; a < nF; a++) {
            int64_t i = Fi[a], b = P->row_ptr[i];
            for (int64_t s = tf->ptr[co[i].t]; s < tf->ptr[co[i].t + 1]; s++) {
                const km_mtmkl_factor *Fk = &k->f[tf->fac[s]];
                if (Spos[Fk->m] >= 0)
                    A[a * nS + Spos[Fk->m]] += Fk->lambda * tf->q[s] *
                        row_dot(g + (int64_t)tf->fac[s] * d, P->index + b, P->value + b,
                                P->row_ptr[i + 1] - b);
            }
            double z = 0;
            for (int s = 0; s < nS; s++)
                z += theta[Sm[s]] * A[a * nS + s];
            b1[a] = co[i].y - z;   /* -(z_i - y_i) */
            rn = fmax(rn, fabs(b1[a]));
        }
        for (int s = 0; s < nS; s++) {
            v[s] = -(beta[Sm[s]] - u) / 2;
            rn = fmax(rn, fabs(beta[Sm[s]] - u) / (u > 0 ? u : 1));
            ts += theta[Sm[s]];
        }
        v[nS] = (ts - 1) / 2;
        rn = fmax(rn, fabs(ts - 1));
        if (rn <= WALK_NEAR || blocked) {
            /* near the solution on (F, S) (residual <= WALK_NEAR), or the last step was cut
             * short by a bound: what violates its condition outside comes in (after a cut
             * step too: on the 32-task tree, waiting for the system to be solved on ever
             * smaller sets took hundreds of passes at s = sqrt(20), C = 1e-3; and before
             * the residual reaches 1e-12, since Newton's next step brings the violators'
             * equations with it: on the 32-task tree, s = 20, one step fewer per change of F
             * or S). Solved (1e-12) with no violator: the walk is done. A point near the
             * solution whose gap is no lower than the last such point's is a cycle (the rows
             * that came in left again): the walk goes on with one violating row at a time,
             * the row of the largest |gradient| (on the 32-task tree, draw 1, s = 20,
             * C >= 0.01, the 4 rows that came in together took a direction out of [0, C] for
             * one of them, the step was cut to 0, and a second walk from 5 passes later was
             * needed: 19 Newton steps and 2 walks -> 15 steps in one walk, one row a time);
             * a second cycle ends the walk. */
            int nv = 0;   /* violating rows, listed in Fi[nF ..) before they come in */
            int64_t worst = -1;
            double gworst = 0;
            for (int m = 0; m < M; m++)
                nv += Spos[m] < 0 && beta[m] > u * (1 + 1e-9);
            int nk = nv;
            if (ws.U)
                walk_u(k, g, d, theta, &ws);
            for (int64_t i = 0; i < l && nF + (nv - nk) < (int64_t)cap; i++) {
                if (inF[i])
                    continue;
                double G = co[i].y * walk_z(k, tf, g, d, theta, P, i, co[i].t, &ws) - 1;
                if ((co[i].alpha == 0 && G < -1e-9) || (co[i].alpha == C && G > 1e-9)) {
                    Fi[nF + (nv++ - nk)] = i;
                    if (fabs(G) > gworst) {
                        gworst = fabs(G);
                        worst = i;
                    }
                }
            }
            if (nv == 0) {
                if (rn <= 1e-12) {
                    done = 1;
                    continue;
                }
                blocked = 0;   /* on to Newton's next step */
            } else {
                if (rn <= WALK_NEAR) {
                    double gs = gapc < INFINITY ? gapc : walk_gap(P, k, tf, co, l, d, C, g,
                                                                  beta, theta, &ws);
                    gapc = gs;
                    if (gs >= (1 - 1e-3) * solved_gap) {
                        if (single)
                            break;
                        single = 1;
                    }
                    solved_gap = fmin(solved_gap, gs);
                }
                for (int m = 0; m < M; m++)
                    if (Spos[m] < 0 && beta[m] > u * (1 + 1e-9))
                        Sm[Spos[m] = nS++] = m;
                if (single && worst >= 0) {
                    Fi[nF] = worst;
                    nv = nk + 1;
                }
                for (int x = 0; x < nv - nk; x++)
                    inF[Fi[nF + x]] = 1;
                nF += nv - nk;
                blocked = 0;
                continue;
            }
        }
        /* a walk that improves neither the gap nor the residual in WALK_STALL iterations in
         * a row is left (the caller keeps its end point only if the gap at least halved) */
        double gnow = gapc < INFINITY ? gapc
                                       : walk_gap(P, k, tf, co, l, d, C, g, beta, theta, &ws);
        gapc = gnow;
        if (gnow < (1 - 1e-3) * best_gap || rn < (1 - 1e-3) * best_rn)
            stall = 0;
        else if (++stall >= WALK_STALL)
            break;
        best_gap = fmin(best_gap, gnow);
        best_rn = fmin(best_rn, rn);
        /* K~_theta over F: G_theta[t_a, t_b] XX[a, b]; its Cholesky factor L */
        memset(Gt, 0, (size_t)T * T * sizeof *Gt);
        for (int32_t f = 0; f < nf; f++) {
            const km_mtmkl_factor *Fk = &k->f[f];
            if (Spos[Fk->m] < 0 || theta[Fk->m] == 0)
                continue;
            double w = theta[Fk->m] * Fk->lambda;
            for (int32_t x = 0; x < Fk->nq; x++)
                for (int32_t y = 0; y < Fk->nq; y++)
                    Gt[(int64_t)Fk->task[x] * T + Fk->task[y]] += w * Fk->q[x] * Fk->q[y];
        }
        double dmax = 0;
        for (int64_t a = 0; a < nF; a++)
            tF[a] = co[Fi[a]].t;
        /* the array L holds K~ = L L' as L' row-major (upper), which is column-major lower:
         * LAPACK's 'L' variant, no transposition in LAPACKE (OpenBLAS 0.3.21, n = 509:
         * 1.3-1.6 ms against 1.5-2.4 ms for 'U', AVX-512 and Haswell kernels) */
        for (int64_t a = 0; a < nF; a++) {
            fill_row(L + a * nF, Gt + (int64_t)tF[a] * T, tF, XX + a * ldx, a, nF);
            dmax = fmax(dmax, L[a * nF + a]);
        }
        lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)nF, L,
                                              (lapack_int)nF);   /* (no NaN scan) */
        if (info != 0) {   /* singular on F: a ridge of 1e-10 of the diagonal */
            for (int64_t a = 0; a < nF; a++) {
                fill_row(L + a * nF, Gt + (int64_t)tF[a] * T, tF, XX + a * ldx, a, nF);
                L[a * nF + a] += 1e-10 * dmax;
            }
            if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)nF, L, (lapack_int)nF))
                break;
        }
        /* Schur complement over (dtheta, du): W = L^{-1} A, w1 = L^{-1} b1, H = W'W;
         * [-H, -1/2 1; -1/2 1', 0] (dtheta, du) = (b2 - W'w1, b3), over the weights R of
         * S that the step keeps at or above 0: a weight the solution takes below 0 is set
         * to 0 (dtheta_m = -theta_m, its column moved to the right-hand side, its row of
         * beta_m = u dropped) and the rest solved again, the same L (a small active set:
         * at most nS rounds of an (|R| + 1)-system; on the 32-task tree at s = 20 the
         * walk had taken one Cholesky factorisation per one or two weights leaving S) */
        memcpy(W, A, (size_t)nF * (size_t)nS * sizeof *W);
        cblas_dtrsm(CblasRowMajor, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, (int)nF,
                    nS, 1, L, (int)nF, W, nS);   /* (L' is what the array holds) */
        cblas_dtrsv(CblasRowMajor, CblasUpper, CblasTrans, CblasNonUnit, (int)nF, L, (int)nF,
                    b1, 1);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nS, nS, (int)nF, 1, W, nS, W, nS,
                    0, H, nS);
        cblas_dgemv(CblasRowMajor, CblasTrans, (int)nF, nS, -1, W, nS, b1, 1, 1, v, 1);
        for (int s = 0; s < nS; s++)
            fix[s] = 0;
        int solved = 0;
        for (int round = 0; round <= nS && !solved; round++) {
            int nR = 0;
            double fsum = 0;   /* sum of the fixed dtheta */
            for (int s = 0; s < nS; s++)
                if (!fix[s])
                    ridx[nR++] = s;
                else
                    fsum -= theta[Sm[s]];
            if (nR == 0)
                break;
            int n2 = nR + 1;
            for (int x = 0; x < nR; x++) {
                int sx = ridx[x];
                double rh = v[sx];
                for (int s = 0; s < nS; s++)
                    if (fix[s])
                        rh -= H[sx * nS + s] * theta[Sm[s]];   /* + H[s, d] dtheta_d */
                vr[x] = rh;
                for (int y = 0; y < nR; y++)
                    Sc[x * n2 + y] = -H[sx * nS + ridx[y]];
                Sc[x * n2 + nR] = Sc[nR * n2 + x] = -0.5;
            }
            Sc[nR * n2 + nR] = 0;
            vr[nR] = v[nS] + 0.5 * fsum;
            memcpy(Sc2, Sc, (size_t)n2 * (size_t)n2 * sizeof *Sc);
            memcpy(v2, vr, (size_t)n2 * sizeof *v2);
            if (LAPACKE_dgesv(LAPACK_ROW_MAJOR, n2, 1, Sc, n2, piv, vr, 1)) {
                /* singular (more weights than rows can fix): the least-squares step of
                 * least norm (LAPACK dgelsd) */
                lapack_int rank;
                memcpy(vr, v2, (size_t)n2 * sizeof *vr);
                if (LAPACKE_dgelsd(LAPACK_ROW_MAJOR, n2, n2, 1, Sc2, n2, vr, 1, v2, 1e-12,
                                   &rank))
                    break;
            }
            solved = 1;
            for (int x = 0; x < nR; x++)
                if (theta[Sm[ridx[x]]] + vr[x] < 0 && nR > 1) {
                    fix[ridx[x]] = 1;
                    solved = 0;
                }
            if (solved) {
                for (int s = 0; s < nS; s++)
                    dth[s] = -theta[Sm[s]];
                for (int x = 0; x < nR; x++)
                    dth[ridx[x]] = vr[x];
                dth[nS] = vr[nR];
            }
        }
        if (!solved)
            break;
        memcpy(v, dth, (size_t)(nS + 1) * sizeof *v);
        /* dc = L^{-T} (w1 - W dtheta) */
        cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)nF, nS, -1, W, nS, v, 1, 1, b1, 1);
        cblas_dtrsv(CblasRowMajor, CblasUpper, CblasNoTrans, CblasNonUnit, (int)nF, L, (int)nF,
                    b1, 1);
        /* the full step, projected on the bounds (alpha_i into [0, C], theta_m >= 0), when it
         * lowers the duality gap; else the step as far as the bounds allow (a ratio test):
         * the coefficient that meets its bound first stays there. What is on a bound
         * leaves F (S). */
        *moved = 1;
        double gap0 = gapc < INFINITY ? gapc
                                       : walk_gap(P, k, tf, co, l, d, C, g, beta, theta, &ws);
        gapc = INFINITY;
        for (int64_t a = 0; a < nF; a++)
            save_a[a] = co[Fi[a]].alpha;
        for (int s = 0; s < nS; s++)
            save_t[s] = theta[Sm[s]];
        double step = 1;
        for (int h = 0; h < WALK_HALVINGS; h++, step /= 2) {
            for (int s = 0; s < nS; s++)
                theta[Sm[s]] = fmax(0, save_t[s] + step * v[s]);
            for (int64_t a = 0; a < nF; a++)   /* alpha = y c */
                co[Fi[a]].alpha = fmin(C, fmax(0, save_a[a] + step * co[Fi[a]].y * b1[a]));
            if ((gapc = walk_gap(P, k, tf, co, l, d, C, g, beta, theta, &ws)) < gap0)
                break;
        }
        blocked = !(step >= 1.0 / (1 << (WALK_HALVINGS - 1)));
        if (!blocked) {
            u += step * v[nS];
        } else {
            gapc = INFINITY;
            for (int64_t a = 0; a < nF; a++)
                co[Fi[a]].alpha = save_a[a];
            for (int s = 0; s < nS; s++)
                theta[Sm[s]] = save_t[s];
            double tau = 1;
            int64_t block = -1;
            for (int64_t a = 0; a < nF; a++) {
                double al = co[Fi[a]].alpha, da = co[Fi[a]].y * b1[a];
                double r = da < 0 ? al / -da : da > 0 ? (C - al) / da : INFINITY;
                if (r < tau) {
                    tau = r;
                    block = a;
                }
            }
            u += tau * v[nS];
            for (int s = 0; s < nS; s++)
                theta[Sm[s]] = fmax(0, theta[Sm[s]] + tau * v[s]);
            for (int64_t a = 0; a < nF; a++)
                co[Fi[a]].alpha += tau * co[Fi[a]].y * b1[a];
            if (block >= 0)
                co[Fi[block]].alpha = co[Fi[block]].y * b1[block] < 0 ? 0 : C;
        }
        for (int64_t a = nF - 1; a >= 0; a--) {
            int64_t i = Fi[a];
            if (co[i].alpha > 0 && co[i].alpha < C)
                continue;
            co[i].alpha = co[i].alpha <= 0 ? 0 : C;
            inF[i] = 0;
            int64_t e = --nF;   /* the last one into a's place: Xd's row, XX's row and column */
            Fi[a] = Fi[e];
            if (a != e) {
                memcpy(Xd + a * d, Xd + e * d, (size_t)d * sizeof *Xd);
                memcpy(XX + a * ldx, XX + e * ldx, (size_t)nX * sizeof *XX);
                for (int64_t b = 0; b < nX; b++)
                    XX[b * ldx + a] = XX[b * ldx + e];
                XX[a * ldx + a] = XX[e * ldx + e];
            }
            nX--;
        }
        int ns = 0;
        for (int s = 0; s < nS; s++) {
            int m = Sm[s];
            Spos[m] = -1;
            if (theta[m] > 0)
                Sm[Spos[m] = ns++] = m;
            else
                theta[m] = 0;
        }
        nS = ns;
    }
out:
    if (*moved) {   /* a candidate: theta on the simplex */
        double ts = 0;
        for (int m = 0; m < M; m++)
            ts += theta[m];
        if (ts > 0)
            for (int m = 0; m < M; m++)
                theta[m] /= ts;
        else
            *moved = 0;
    }
    free(ws.V);
    free(ws.U);
    free(Fi);
    free(tF);
    free(inF);
    free(Spos);
    free(Sm);
    free(Xd);
    free(XX);
    free(L);
    free(A);
    free(W);
    free(Gt);
    free(Sc);
    free(b1);
    free(v);
    free(save_a);
    free(save_t);
    free(Sc2);
    free(v2);
    free(piv);
    free(H);
    free(vr);
    free(dth);
    free(fix);
    free(ridx);
    return rc;
}

/* The exact primal and dual at a checkpoint: beta_m = sum_k lambda_k ||g_k||^2 (kernel mode:
 * sum_k lambda_k (q_k o c)'s_k), the hinge of every row (kept in co[i].xi), the primal at
 * (theta, c) and the dual of Problem 3 (fixed: the SVM dual) over all rows; tf weighed by
 * theta. *Ls and *As get the sums of the hinges and of the alpha_i. */
static void exact_eval(const km_problem *P, const km_mtmkl_tasks *k, const task_factors *tf,
                       mt_coord *co, int64_t l, int32_t d, const double *g, const double *S,
                       int kmode, const double *theta, double *beta,
                       const km_mtmkl_param *par, km_mtmkl_result *r, double *Ls, double *As)
{
    const int M = k->M;
    memset(beta, 0, (size_t)M * sizeof *beta);
    if (!kmode)
        beta_from_g(k, g, d, beta);
    for (int64_t i = 0; i < l && kmode; i++)   /* beta_m = sum_k lambda (q_k o c)'s_k */
        for (int64_t s = tf->ptr[co[i].t]; s < tf->ptr[co[i].t + 1]; s++) {
            const km_mtmkl_factor *F = &k->f[tf->fac[s]];
            beta[F->m] += F->lambda * tf->q[s] * co[i].y * co[i].alpha *
                          S[(int64_t)tf->fac[s] * l + i];
        }
    double reg = 0, loss = 0, sa = 0;
    for (int m = 0; m < M; m++)
        reg += theta[m] * beta[m];
    for (int64_t i = 0; i < l; i++) {
        int64_t b = P->row_ptr[i];
        int64_t s0 = tf->ptr[co[i].t], ns = tf->ptr[co[i].t + 1] - s0;
        double z = kmode ? s_z(tf, S, l, co[i].t, i)
                   : co[i].j0 >= 0 ? dense_z(tf->w + s0, tf->fac + s0, ns, g, d, co[i].j0,
                                             P->value + b, P->row_ptr[i + 1] - b)
                                   : row_z(tf, g, d, co[i].t, P->index + b, P->value + b,
                                           P->row_ptr[i + 1] - b);
        double xi = 1 - co[i].y * z;
        co[i].xi = xi > 0 ? xi : 0;
        loss += co[i].xi;
        sa += co[i].alpha;
    }
    *Ls = loss;   /* the sums made exact */
    *As = sa;
    r->primal = reg / 2 + par->C * loss;
    r->dual = sa - (par->fixed ? reg : dual_norm(beta, M, par->p)) / 2;
    r->gap = r->primal > 0 ? (r->primal - r->dual) / r->primal : 0;
}

int km_mtmkl_train(const km_problem *P, const double *ylab, const km_mtmkl_tasks *k,
                   const km_mtmkl_param *par, km_mtmkl_result *r, km_error *err)
{
    memset(r, 0, sizeof *r);
    if (!(par->C > 0) || !(par->p >= 1) || !isfinite(par->p) || !(par->eps > 0) ||
        par->max_iter < 1)
        return km_error_set(err, KM_EUSAGE, "mtmkl: need C > 0, p >= 1, eps > 0, a cap >= 1");
    if (k->M < 1 || k->nf < 1)
        return km_error_set(err, KM_EUSAGE, "mtmkl: no task kernels");
    int64_t l = P->l;
    int32_t d = P->n, M = k->M;
    double C = par->C, p = par->p;
    task_factors tf;
    int rc = tf_build(k, &tf, err);
    if (rc)
        return rc;
    mt_coord *co = aligned_alloc(64, ((size_t)(l > 0 ? l : 1) * sizeof(mt_coord) + 63) / 64 * 64);
    int64_t *perm = malloc((size_t)(l > 0 ? l : 1) * sizeof *perm);
    r->theta = malloc((size_t)M * sizeof *r->theta);
    r->beta = calloc((size_t)M, sizeof *r->beta);
    const int kmode = par->kernel != NULL;
    km_kdata *X = NULL;
    km_kmatrix *K = NULL;
    double *S = NULL;   /* kernel mode: nf * l, S[k * l + i] = (K (q_k o c))_i */
    double *save_alpha = NULL, *save_theta = NULL;   /* the state before a walk (p = 1) */
    if (kmode)
        S = calloc((size_t)k->nf * (size_t)(l > 0 ? l : 1), sizeof *S);
    else
        r->g = calloc((size_t)k->nf * (size_t)(d > 0 ? d : 1), sizeof *r->g);
    r->alpha = calloc((size_t)(l > 0 ? l : 1), sizeof *r->alpha);
    r->d = d;
    if (!co || !perm || !r->theta || !r->beta || !(kmode ? !!S : !!r->g) ||
        !r->alpha) {
        rc = km_error_nomem(err, "mtmkl");
        goto done;
    }
    if (kmode && (!(X = km_kdata_new(P, NULL, l, err)) ||
                  !(K = km_kmatrix_new(par->kernel, X, par->cache_bytes, 1, err)))) {
        rc = err->code;
        goto done;
    }
    double s1 = kmode || par->own_cd ? 0 : one_kernel_scale(k);
    if (s1 > 0) {   /* l1svm's problem: cd.c's solver */
        rc = train_as_l1svm(P, ylab, k, par, s1, r, err);
        goto done;
    }
    for (int64_t i = 0; i < l; i++) {
        co[i].t = km_mtmkl_task(k, P->qid[i]);
        double s = 0;
        for (int64_t j = P->row_ptr[i]; j < P->row_ptr[i + 1]; j++)
            s += P->value[j] * P->value[j];
        co[i].xsq = kmode ? km_kmatrix_diag(K, i) : s;   /* k(x_i, x_i) */
        co[i].b = P->row_ptr[i];
        co[i].e = P->row_ptr[i + 1];
        int64_t nz = co[i].e - co[i].b;   /* dense: the indices increase one by one */
        co[i].j0 = nz > 0 && P->index[co[i].e - 1] - P->index[co[i].b] == nz - 1
                       ? P->index[co[i].b] : -1;
        co[i].y = ylab[i];
        co[i].alpha = 0;
        co[i].xi = 1;   /* z = 0 */
        perm[i] = i;
    }
    for (int m = 0; m < M; m++)   /* the initial theta on the sphere of the l_p ball */
        r->theta[m] = pow((double)M, -1 / p);
    tf_weigh(k, &tf, r->theta);
    km_rng rng;
    km_rng_seed(&rng, par->seed);
    double prev_primal = INFINITY;
    double *g = r->g, *theta = r->theta, *beta = r->beta;
    /* LIBLINEAR's shrinking for the hinge: a coefficient at a bound whose gradient pushes
     * outward beyond last pass's extremes leaves the active set perm[0..na); a checkpoint
     * (the active set's projected gradients within tol_pg, or every CHECK_EVERY or more
     * passes)
     * brings all back, computes the primal and the dual over all rows and takes the theta
     * step: Algorithm E.1 with the W step made to tol_pg between theta steps */
    /* 5, not 10: the theta step comes only at a checkpoint; on the 32-task tree at C = 100
     * (doc/mtmkl.md) p = 2 takes 203 passes with 5, 372 with 10, 544 with 20. For p > 1
     * (theta steps by E.1 alone) 2: p = 2 there 342 -> 100 passes at s = sqrt(20) (p = 1
     * keeps 5: its walk counts checkpoints) */
    enum { CHECK_EVERY = 5, CHECK_EVERY_THETA = 2 };
    const int64_t check_every = p > 1 && !par->fixed && M > 1 ? CHECK_EVERY_THETA : CHECK_EVERY;
    int64_t na = l, since = 0;
    double pgmax_old = INFINITY, pgmin_old = -INFINITY, tol_pg = 0.1;
    /* The estimate of the gap after each pass (as cd.c's): the hinge of each row when last
     * visited, their sum Ls and the sum As of the alpha_i kept up to date, beta from g
     * (linear mode; when its nf d operations cost less than the pass). An estimate <= eps
     * calls a checkpoint, which decides on the exact gap. */
    int64_t checkpoints = 0, walk_next = 2, walk_wait = 1, walks = 0;
    if (p == 1 && !par->fixed && !kmode && M > 1 && !par->no_walk &&
        (!(save_alpha = malloc((size_t)(l > 0 ? l : 1) * sizeof *save_alpha)) ||
         !(save_theta = malloc((size_t)M * sizeof *save_theta)))) {
        rc = km_error_nomem(err, "mtmkl");
        goto done;
    }
    double Ls = (double)l, As = 0, nnz_row = l > 0 ? (double)P->row_ptr[l] / (double)l : 0;
    for (r->passes = 1; r->passes <= par->max_iter; r->passes++) {
        /* one pass of dual coordinate ascent, (E.3)-(E.4) corrected: the l1svm step with
         * 1/k~_ii, k~_ii = G_theta[t, t] ||x_i||^2 */
        km_rng_shuffle(&rng, perm, na);
        double pgmax = -INFINITY, pgmin = INFINITY;
        const int64_t visits = na;
        for (int64_t a = 0; a < na; a++) {
            if (a + 2 * MT_PREFETCH < na)
                __builtin_prefetch(&co[perm[a + 2 * MT_PREFETCH]]);
            if (a + MT_PREFETCH < na && !kmode) {   /* the row's first and last lines */
                const mt_coord *n = &co[perm[a + MT_PREFETCH]];
                __builtin_prefetch(P->index + n->b);
                __builtin_prefetch(P->value + n->b);
                __builtin_prefetch(P->index + n->e - 1);
                __builtin_prefetch(P->value + n->e - 1);
            }
            int64_t i = perm[a];
            mt_coord *ci = &co[i];
            int64_t b = ci->b, nnz = ci->e - b;
            int32_t t = ci->t;
            const int32_t *ix = P->index + b;
            const double *v = P->value + b;
            double kii = tf.gdiag[t] * ci->xsq, y = ci->y, ai = ci->alpha;
            if (!(kii > 0)) {   /* a zero row (or task weight): the hinge's dual argmin */
                As += C - ai;
                ci->alpha = C;
                continue;
            }
            int64_t s0 = tf.ptr[t], ns = tf.ptr[t + 1] - s0;
            double G = y * (kmode        ? s_z(&tf, S, l, t, i)
                            : ci->j0 >= 0 ? dense_z(tf.w + s0, tf.fac + s0, ns, g, d, ci->j0, v, nnz)
                                          : row_z(&tf, g, d, t, ix, v, nnz)) - 1;
            double xi = G < 0 ? -G : 0;
            Ls += xi - ci->xi;
            ci->xi = xi;
            double pg = 0;
            if (ai == 0) {
                if (G > pgmax_old) {
                    perm[a--] = perm[--na];
                    perm[na] = i;
                    continue;
                }
                pg = G < 0 ? G : 0;
            } else if (ai == C) {
                if (G < pgmin_old) {
                    perm[a--] = perm[--na];
                    perm[na] = i;
                    continue;
                }
                pg = G > 0 ? G : 0;
            } else {
                pg = G;
            }
            pgmax = pg > pgmax ? pg : pgmax;
            pgmin = pg < pgmin ? pg : pgmin;
            if (pg == 0)
                continue;
            double an = ai - G / kii;
            an = an < 0 ? 0 : an > C ? C : an;
            double h = y * (an - ai);   /* the change of c_i = y_i alpha_i */
            ci->alpha = an;
            As += an - ai;
            if (h == 0)
                continue;
            for (int64_t s = tf.ptr[t]; s < tf.ptr[t + 1] && kmode; s++)   /* s_k += h q K_i */
                if ((rc = km_kmatrix_axpy(K, i, h * tf.q[s], S + (int64_t)tf.fac[s] * l, err)))
                    goto done;
            if (!kmode && ci->j0 >= 0) {
                dense_update(tf.q + s0, tf.fac + s0, ns, g, d, ci->j0, v, nnz, h);
                continue;
            }
            for (int64_t s = tf.ptr[t]; s < tf.ptr[t + 1] && !kmode; s++) {
                double *gk = g + (int64_t)tf.fac[s] * d, hq = h * tf.q[s];
                for (int64_t j = 0; j < nnz; j++)
                    gk[ix[j]] += hq * v[j];
            }
        }
        int inner = pgmax - pgmin <= tol_pg || na == 0;
        /* shrink what is stuck beyond half the last pass's extremes (cd.h's KM_CD_SHRINK:
         * LIBLINEAR's bound halved; a9a T = M = 1: 0.80x the row visits of the full bound) */
        pgmax_old = pgmax > 0 ? KM_CD_SHRINK * pgmax : INFINITY;
        pgmin_old = pgmin < 0 ? KM_CD_SHRINK * pgmin : -INFINITY;
        /* between checkpoints at least CHECK_EVERY passes, more while the active set is
         * small: a checkpoint costs a pass over all rows, about 20% of the work */
        int64_t every = na > 0 ? check_every * (l / na) : check_every;
        every = every < check_every ? check_every : every > 1000 ? 1000 : every;
        int estimate = 0;
        if (!inner && !kmode && (double)k->nf * d <= (double)visits * nnz_row) {
            beta_from_g(k, g, d, beta);
            double reg = 0;
            for (int m = 0; m < M; m++)
                reg += theta[m] * beta[m];
            double Pe = reg / 2 + C * Ls, De = As - (par->fixed ? reg : dual_norm(beta, M, p)) / 2;
            estimate = Pe > 0 && (Pe - De) / Pe <= par->eps;
        }
        if (!inner && !estimate && ++since < every && r->passes < par->max_iter)
            continue;
        /* a checkpoint: the primal and the dual over all rows */
        since = 0;
        exact_eval(P, k, &tf, co, l, d, g, S, kmode, theta, beta, par, r, &Ls, &As);
        int walked = 0;
        if (r->gap > par->eps && p == 1 && !par->fixed && !kmode && M > 1 && !par->no_walk &&
            ++checkpoints >= walk_next) {
            /* p = 1: the active-set Newton walk (walk_p1), kept when it at least halves the
             * gap (a walk that lowered it less left theta on a few kernels, the rest at the
             * floor, from where E.1's multiplicative steps took 800-1,200 passes on the
             * 32-task tree at s = sqrt(20), C = 1e-3); after a walk not kept, the next
             * waits twice as long */
            double gap0 = r->gap, primal0 = r->primal, dual0 = r->dual;
            for (int64_t i = 0; i < l; i++)
                save_alpha[i] = co[i].alpha;
            memcpy(save_theta, theta, (size_t)M * sizeof *theta);
            int moved = 0;
            if ((rc = walk_p1(P, k, &tf, co, l, d, C, g, theta, beta, &moved, err)))
                goto done;
            if (moved) {
                g_from_alpha(P, &tf, co, l, d, k->nf, g);
                tf_weigh(k, &tf, theta);
                exact_eval(P, k, &tf, co, l, d, g, S, kmode, theta, beta, par, r, &Ls, &As);
            }
            walks++;
            if (moved && r->gap <= gap0 / 2) {
                walked = 1;   /* the next walk at the next checkpoint */
                walk_wait = 1;
                if (r->gap > par->eps) {   /* E.1 keeps a zero weight at zero: a floor */
                    double top = 0, ts = 0;
                    for (int m = 0; m < M; m++)
                        top = fmax(top, theta[m]);
                    for (int m = 0; m < M; m++)
                        ts += (theta[m] = fmax(theta[m], 1e-6 * top));
                    for (int m = 0; m < M; m++)
                        theta[m] /= ts;
                    tf_weigh(k, &tf, theta);
                    exact_eval(P, k, &tf, co, l, d, g, S, kmode, theta, beta, par, r, &Ls, &As);
                }
            } else {   /* back to the state before the walk */
                for (int64_t i = 0; i < l; i++)
                    co[i].alpha = save_alpha[i];
                memcpy(theta, save_theta, (size_t)M * sizeof *theta);
                g_from_alpha(P, &tf, co, l, d, k->nf, g);
                tf_weigh(k, &tf, theta);
                exact_eval(P, k, &tf, co, l, d, g, S, kmode, theta, beta, par, r, &Ls, &As);
                (void)primal0;
                (void)dual0;
                walk_wait *= 2;
            }
            walk_next = checkpoints + walk_wait;
        }
        if (par->progress)
            par->progress(par->user, r->passes, r->primal, r->gap);
        if (r->gap <= par->eps) {
            r->converged = 1;
            break;
        }
        if (inner)   /* the W step met its tolerance and the gap is still open: tighten */
            tol_pg = fmax(tol_pg * 0.1, 1e-14);
        na = l;      /* every coefficient active again; the bounds of the shrinking rule are
                        kept while theta stays (the checkpoint saw every row), else dropped */
        /* the theta step (E.1) corrected, after a checkpoint that lowered the primal:
         * a_m = theta_m^2 beta_m, theta_m = a_m^{1/(p+1)} / (sum a^{p/(p+1)})^{1/p} */
        if (walked) {   /* theta and alpha moved: the shrinking rule's bounds go */
            pgmax_old = INFINITY;
            pgmin_old = -INFINITY;
        }
        if (!par->fixed && !walked && r->primal < prev_primal) {
            double norm = 0;
            for (int m = 0; m < M; m++)
                norm += pow(theta[m] * theta[m] * beta[m], p / (p + 1));
            if (norm > 0) {
                norm = pow(norm, 1 / p);
                for (int m = 0; m < M; m++)
                    theta[m] = pow(theta[m] * theta[m] * beta[m], 1 / (p + 1)) / norm;
                tf_weigh(k, &tf, theta);
                if (M > 1) {
                    pgmax_old = INFINITY;
                    pgmin_old = -INFINITY;
                }
            }
        }
        prev_primal = r->primal;
    }
    if (r->passes > par->max_iter)
        r->passes = par->max_iter;
    for (int64_t i = 0; i < l; i++)
        r->alpha[i] = co[i].alpha;
done:
    free(save_alpha);
    free(save_theta);
    free(co);
    free(perm);
    free(S);
    km_kmatrix_free(K);
    km_kdata_free(X);
    tf_free(&tf);
    if (rc)
        km_mtmkl_result_free(r);
    return rc;
}

double km_mtmkl_factor_q(const km_mtmkl_tasks *k, const km_mtmkl_factor *F, int32_t t)
{
    if (t < 0) {   /* the average task: (1/T) sum_t q_k[t] */
        double s = 0;
        for (int32_t a = 0; a < F->nq; a++)
            s += F->q[a];
        return s / k->T;
    }
    int32_t lo = 0, hi = F->nq;   /* binary search over the factor's tasks */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (F->task[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < F->nq && F->task[lo] == t ? F->q[lo] : 0;
}

double km_mtmkl_decision(const km_mtmkl_tasks *k, const double *theta, const double *g,
                         int32_t d, int32_t t, const int32_t *index, const double *value,
                         int64_t nnz)
{
    double z = 0;
    for (int32_t f = 0; f < k->nf; f++) {
        const km_mtmkl_factor *F = &k->f[f];
        double qt = km_mtmkl_factor_q(k, F, t);
        if (qt != 0)
            z += theta[F->m] * F->lambda * qt * dot(g + (int64_t)f * d, d, index, value, nnz);
    }
    return z;
}
