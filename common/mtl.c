/* mtl.c - see mtl.h. Storage: the unique inputs as growing CSR rows with a hash of their
 * contents; L packed by rows (row i: i + 1 entries, the unit diagonal stored, for dtpsv);
 * H column-major with leading dimension ncap, lower triangle; each task's R_j full
 * column-major with leading dimension equal to its capacity. */
#include "mtl.h"
#include "basis.h"
#include "imap.h"
#include "model.h"

#include <cblas.h>
#include <errno.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- state ---- */

typedef struct mtl_task {
    int64_t id;
    const km_kernel *Kt;   /* K~_j (5.2): in s->p */
    int64_t l, cap, triples;
    int64_t *h;    /* h_j: rows of Xbar */
    double *y;     /* y_j (merged) */
    double *w;     /* w_j (merged) */
    double *R;     /* R_j, cap x cap */
} mtl_task;

/* A task's private part as it was when a transaction first touched it. */
typedef struct saved_task {
    int64_t j, l, triples;
    int64_t *h;
    double *y, *w, *R;   /* R: l x l */
} saved_task;

/* What km_mtl_rollback needs to restore the state of km_mtl_begin. */
typedef struct mtl_txn {
    int on, implicit;
    int64_t n, nnz, version, ntask;
    int32_t nfeat;
    int npend, nq;
    double rho;
    double *ybar;
    int64_t ybcap;
    int hsaved;        /* H, V, Q, C, gam saved (a batch was applied in the transaction) */
    double *H, *V, *Q;
    int64_t hcap, vcap;
    double C[KM_MTL_BATCH * KM_MTL_BATCH], gam[KM_MTL_BATCH];
    saved_task *st;
    int64_t nst, stcap;
} mtl_txn;

struct km_mtl {
    km_mtl_param p;    /* p.tk is tk, owned */
    km_mtl_tkernel *tk;
    int64_t version;
    /* unique inputs Xbar */
    int64_t n, ncap;
    int64_t *row_ptr;
    int32_t *index;
    double *value;
    int64_t nzcap;
    int32_t nfeat;
    double *sq;        /* squared norms */
    km_imap xmap;         /* content hash -> last row with that hash */
    int64_t *xnext;    /* previous row with the same hash, or -1 */
    uint64_t *xhash;
    /* Kbar = L D L', ybar, H and its queued rank-one terms */
    double *L;
    double *D;
    double *ybar;
    double *H;
    double *V;         /* ncap x KM_MTL_BATCH */
    double *Q;         /* ncap x KM_MTL_BATCH: H V for the checked terms */
    double *Qw;        /* ncap x KM_MTL_BATCH: scratch for a view */
    double gam[KM_MTL_BATCH];
    double C[KM_MTL_BATCH * KM_MTL_BATCH];   /* S = (alpha Gamma)^-1 + V'HV = C C' */
    double Cw[KM_MTL_BATCH * KM_MTL_BATCH];  /* scratch for a view */
    int npend;
    int nq;            /* terms [0, nq) have their Q columns and rows of C */
    double rho;        /* sum over the pending terms of alpha gamma |v|^2 2 max D */
    double dmax;       /* the largest pivot of Kbar so far (H <= D) */
    int exact;         /* the exact check at every commit (km_mtl_exact_checks) */
    /* tasks */
    mtl_task *tasks;
    int64_t ntask, tcap;
    km_imap tmap;
    /* H with the queued terms applied, z = H ybar and cbar, at view_version */
    double *Hview;
    double *z, *cbar;
    int64_t view_version;
    mtl_txn tx;        /* the open transaction (km_mtl_begin) */
    /* scratch */
    double *work;      /* ncap: k, t, v */
    double *work2;     /* ncap */
    int32_t *xi;       /* canonical copy of an input */
    double *xv;
    int64_t xcap;
    double *tw;        /* per-task scratch */
    int64_t twcap;
};

static size_t packed(int64_t n)
{
    return (size_t)n * (size_t)(n + 1) / 2;
}

static int grow_inputs(km_mtl *s, int64_t need);
static void txn_free(km_mtl *s);

km_mtl_param km_mtl_param_default(void)
{
    km_mtl_param p = {0.5, 1.0, {KM_KERNEL_LINEAR, 1, 0, 3, 0}, {KM_KERNEL_LINEAR, 1, 0, 3, 0}, 0,
                      NULL};
    return p;
}

static int uses_gamma(km_kernel_type t)
{
    return t != KM_KERNEL_LINEAR && t != KM_KERNEL_SPLINE;
}

void km_mtl_param_gamma(km_mtl_param *p, int32_t n, int have_gamma, int have_tgamma)
{
    double g = n > 0 ? 1.0 / n : 1;
    if (!have_gamma && uses_gamma(p->K.type))
        p->K.gamma = g;
    if (!have_tgamma && uses_gamma(p->Kt.type))
        p->Kt.gamma = g;
}

int km_mtl_param_check(const km_mtl_param *p, int32_t n, km_error *err)
{
    if (!(p->alpha >= 0 && p->alpha <= 1))
        return km_error_set(err, KM_EUSAGE, "alpha must be in [0, 1] (got %g)", p->alpha);
    if (!(p->lambda > 0 && isfinite(p->lambda)))
        return km_error_set(err, KM_EUSAGE, "lambda must be a positive number (got %g)",
                            p->lambda);
    if (p->ntk < 0 || (p->ntk && !p->tk))
        return km_error_set(err, KM_EUSAGE, "mtl: bad task kernel table");
    /* (5.2)-(5.3): K, the default K~ and every task's own K~_j enter (5.4) */
    for (int64_t k = -2; k < p->ntk; k++) {
        const km_kernel *kk = k == -2 ? &p->K : k == -1 ? &p->Kt : &p->tk[k].kernel;
        if (k >= 1 && p->tk[k].task <= p->tk[k - 1].task)
            return km_error_set(err, KM_EUSAGE, "mtl: task kernels must be sorted by task, "
                                "each task once (task %lld)", (long long)p->tk[k].task);
        if (kk->type == KM_KERNEL_SIGMOID)
            return km_error_set(err, KM_EUSAGE, "mtl: the sigmoid kernel is indefinite; (5.7) "
                                "needs positive semi-definite kernels");
        if (km_kernel_check(kk, n, err)) {
            if (k >= 0 && err) {
                char m[sizeof err->msg];
                snprintf(m, sizeof m, "%s", err->msg);
                km_error_set(err, KM_EUSAGE, "task %lld's kernel: %s", (long long)p->tk[k].task,
                             m);
            }
            return KM_EUSAGE;
        }
    }
    return KM_OK;
}

const km_kernel *km_mtl_task_kernel(const km_mtl_param *p, int64_t task)
{
    int64_t lo = 0, hi = p->ntk;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (p->tk[mid].task < task)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->ntk && p->tk[lo].task == task ? &p->tk[lo].kernel : &p->Kt;
}

static int tkernel_cmp(const void *a, const void *b)
{
    int64_t x = ((const km_mtl_tkernel *)a)->task, y = ((const km_mtl_tkernel *)b)->task;
    return (x > y) - (x < y);
}

int km_mtl_read_task_kernels(const char *path, km_mtl_tkernel **tk, int64_t *ntk,
                             km_error *err)
{
    *tk = NULL;
    *ntk = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    km_mtl_tkernel *t = NULL;
    long long *at = NULL;   /* line of each entry */
    int64_t n = 0, cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    long long no = 0;
    int rc = KM_OK;
    while (rc == KM_OK && (len = getline(&line, &lcap, f)) >= 0) {
        no++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        char *p = line + strspn(line, " \t"), *end;
        if (!*p || *p == '#')
            continue;
        if ((size_t)len != strlen(line)) {
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: NUL byte in a line", path, no);
            break;
        }
        errno = 0;
        long long id = strtoll(p, &end, 10);
        if (errno || end == p || (*end != ' ' && *end != '\t')) {
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: expected 'TASK KERNEL' with an integer "
                              "task id", path, no);
            break;
        }
        km_basis b;
        if (km_basis_parse(end, INT32_MAX, &b, err)) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err ? err->msg : "");
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: %s", path, no, m);
            break;
        }
        int subset = b.feat != NULL;
        free(b.feat);
        if (subset) {
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: a task kernel sees all features "
                              "(features= absent or all)", path, no);
            break;
        }
        if (b.kernel.type == KM_KERNEL_SIGMOID) {
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: the sigmoid kernel is indefinite; "
                              "(5.7) needs positive semi-definite kernels", path, no);
            break;
        }
        if (n == cap) {
            int64_t c = cap ? 2 * cap : 16;
            km_mtl_tkernel *nt = realloc(t, (size_t)c * sizeof *nt);
            if (nt)
                t = nt;
            long long *na = realloc(at, (size_t)c * sizeof *na);
            if (na)
                at = na;
            if (!nt || !na) {
                rc = km_error_nomem(err, "task kernels");
                break;
            }
            cap = c;
        }
        t[n].task = id;
        t[n].kernel = b.kernel;
        at[n++] = no;
    }
    if (rc == KM_OK && ferror(f))
        rc = km_error_set(err, KM_EINPUT, "%s: read error", path);
    free(line);
    fclose(f);
    km_mtl_tkernel *st = NULL;   /* sorted by task */
    if (rc == KM_OK && n && !(st = malloc((size_t)n * sizeof *st)))
        rc = km_error_nomem(err, "task kernels");
    if (rc == KM_OK && n) {
        memcpy(st, t, (size_t)n * sizeof *st);
        qsort(st, (size_t)n, sizeof *st, tkernel_cmp);
    }
    for (int64_t i = 1; i < n && rc == KM_OK; i++)
        if (st[i].task == st[i - 1].task) {   /* the first two lines naming it */
            long long l1 = 0, l2 = 0;
            for (int64_t j = 0; j < n && !l2; j++)
                if (t[j].task == st[i].task)
                    *(l1 ? &l2 : &l1) = at[j];
            rc = km_error_set(err, KM_EINPUT, "%s:%lld: task %lld already has a kernel (line "
                              "%lld)", path, l2, (long long)st[i].task, l1);
        }
    free(t);
    t = st;
    free(at);
    if (rc) {
        free(t);
        return rc;
    }
    *tk = t;
    *ntk = n;
    return KM_OK;
}

km_mtl *km_mtl_new(const km_mtl_param *p, km_error *err)
{
    if (km_mtl_param_check(p, 0, err))
        return NULL;
    km_mtl *s = calloc(1, sizeof *s);
    if (!s || !(s->row_ptr = calloc(1, sizeof *s->row_ptr)) || grow_inputs(s, 1) ||
        !(s->tk = malloc((size_t)(p->ntk + 1) * sizeof *s->tk))) {
        km_mtl_free(s);
        km_error_nomem(err, "mtl state");
        return NULL;
    }
    s->p = *p;
    if (p->ntk)
        memcpy(s->tk, p->tk, (size_t)p->ntk * sizeof *s->tk);
    s->p.tk = s->tk;
    s->view_version = -1;
    return s;
}

void km_mtl_free(km_mtl *s)
{
    if (!s)
        return;
    free(s->row_ptr);
    free(s->index);
    free(s->value);
    free(s->sq);
    km_imap_free(&s->xmap);
    free(s->xnext);
    free(s->xhash);
    free(s->L);
    free(s->D);
    free(s->ybar);
    free(s->H);
    free(s->V);
    free(s->Q);
    free(s->Qw);
    txn_free(s);
    for (int64_t j = 0; j < s->ntask; j++) {
        free(s->tasks[j].h);
        free(s->tasks[j].y);
        free(s->tasks[j].w);
        free(s->tasks[j].R);
    }
    free(s->tasks);
    km_imap_free(&s->tmap);
    free(s->Hview);
    free(s->z);
    free(s->cbar);
    free(s->work);
    free(s->work2);
    free(s->xi);
    free(s->xv);
    free(s->tw);
    free(s->tk);
    free(s);
}

const km_mtl_param *km_mtl_param_of(const km_mtl *s)
{
    return &s->p;
}

int64_t km_mtl_n(const km_mtl *s)
{
    return s->n;
}

int64_t km_mtl_version(const km_mtl *s)
{
    return s->version;
}

static mtl_task *task_find(const km_mtl *s, int64_t id)
{
    int64_t j = km_imap_get(&s->tmap, id);
    return j < 0 ? NULL : &s->tasks[j];
}

void km_mtl_task_size(const km_mtl *s, int64_t id, int64_t *l, int64_t *triples)
{
    const mtl_task *T = task_find(s, id);
    *l = T ? T->l : 0;
    *triples = T ? T->triples : 0;
}

/* count * size bytes, or NULL when that overflows size_t or malloc fails; zero: calloc. */
static void *alloc_n(size_t count, size_t size, int zero)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes))
        return NULL;
    return zero ? calloc(1, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
}

/* realloc to count * size bytes; NULL (p untouched) on overflow or failure. */
static void *realloc_n(void *p, size_t count, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes))
        return NULL;
    return realloc(p, bytes ? bytes : 1);
}

/* Grows every per-input array to hold need inputs; 0 or -1 (out of memory, or more than
 * KM_MTL_MAX_INPUTS). Every size is checked for overflow. */
static int grow_inputs(km_mtl *s, int64_t need)
{
    if (need <= s->ncap)
        return 0;
    if (need > KM_MTL_MAX_INPUTS)
        return -1;
    int64_t cap = s->ncap ? s->ncap : 16;
    while (cap < need)
        cap *= 2;
    size_t c = (size_t)cap, cc;
    if (__builtin_mul_overflow(c, c, &cc))
        return -1;
    int64_t *rp = realloc_n(s->row_ptr, c + 1, sizeof *rp);
    if (rp)
        s->row_ptr = rp;
    double *sq = realloc_n(s->sq, c, sizeof *sq);
    if (sq)
        s->sq = sq;
    int64_t *xn = realloc_n(s->xnext, c, sizeof *xn);
    if (xn)
        s->xnext = xn;
    uint64_t *xh = realloc_n(s->xhash, c, sizeof *xh);
    if (xh)
        s->xhash = xh;
    double *L = realloc_n(s->L, packed(cap), sizeof *L);
    if (L)
        s->L = L;
    double *D = realloc_n(s->D, c, sizeof *D);
    if (D)
        s->D = D;
    double *yb = realloc_n(s->ybar, c, sizeof *yb);
    if (yb)
        s->ybar = yb;
    double *H = alloc_n(cc, sizeof *H, 1);
    double *V = alloc_n(c, KM_MTL_BATCH * sizeof *V, 1);
    double *Q = alloc_n(c, KM_MTL_BATCH * sizeof *Q, 1);
    double *Qw = alloc_n(c, KM_MTL_BATCH * sizeof *Qw, 0);
    double *Hv = alloc_n(cc, sizeof *Hv, 0);
    double *z = alloc_n(c, sizeof *z, 0), *cb = alloc_n(c, sizeof *cb, 0);
    double *w1 = alloc_n(c + 1, sizeof *w1, 0);
    double *w2 = alloc_n(c + 1, sizeof *w2, 0);
    if (!rp || !sq || !xn || !xh || !L || !D || !yb || !H || !V || !Q || !Qw || !Hv || !z ||
        !cb || !w1 || !w2) {
        free(H);
        free(V);
        free(Q);
        free(Qw);
        free(Hv);
        free(z);
        free(cb);
        free(w1);
        free(w2);
        return -1;
    }
    for (int64_t j = 0; j < s->n; j++)
        memcpy(H + j * cap, s->H + j * s->ncap, (size_t)s->n * sizeof *H);
    for (int k = 0; k < s->npend; k++) {
        memcpy(V + k * cap, s->V + k * s->ncap, (size_t)s->n * sizeof *V);
        memcpy(Q + k * cap, s->Q + k * s->ncap, (size_t)s->n * sizeof *Q);
    }
    free(s->H);
    free(s->V);
    free(s->Q);
    free(s->Qw);
    free(s->Hview);
    free(s->z);
    free(s->cbar);
    free(s->work);
    free(s->work2);
    s->H = H;
    s->V = V;
    s->Q = Q;
    s->Qw = Qw;
    s->Hview = Hv;
    s->z = z;
    s->cbar = cb;
    s->work = w1;
    s->work2 = w2;
    s->ncap = cap;
    s->view_version = -1;
    return 0;
}

static uint64_t row_hash(const int32_t *ix, const double *v, int64_t nnz)
{
    uint64_t h = km_mix64((uint64_t)nnz);
    for (int64_t k = 0; k < nnz; k++) {
        uint64_t b;
        memcpy(&b, &v[k], sizeof b);
        h = km_mix64(h ^ (uint64_t)ix[k]) ^ km_mix64(b + 0x9e3779b97f4a7c15ULL);
    }
    return h;
}

/* The row of Xbar equal to x (canonical: no zero values), or -1. */
static int64_t find_input(const km_mtl *s, const int32_t *ix, const double *v, int64_t nnz,
                          uint64_t hash)
{
    for (int64_t r = km_imap_get(&s->xmap, (int64_t)hash); r >= 0; r = s->xnext[r]) {
        int64_t a = s->row_ptr[r], len = s->row_ptr[r + 1] - a;
        if (s->xhash[r] == hash && len == nnz &&
            (!nnz || (!memcmp(s->index + a, ix, (size_t)nnz * sizeof *ix) &&
                      !memcmp(s->value + a, v, (size_t)nnz * sizeof *v))))
            return r;
    }
    return -1;
}

static double row_kernel(const km_mtl *s, const km_kernel *k, int64_t r, const int32_t *ix,
                         const double *v, int64_t nnz, double sq)
{
    int64_t a = s->row_ptr[r];
    return km_kernel_eval(k, s->index + a, s->value + a, s->row_ptr[r + 1] - a, s->sq[r], ix, v,
                          nnz, sq);
}

static double sqnorm(const double *v, int64_t nnz)
{
    double q = 0;
    for (int64_t k = 0; k < nnz; k++)
        q += v[k] * v[k];
    return q;
}

/* Algorithm 8 lines 1-9: appends x to Xbar, a row to L and D, 0 to ybar and diag{H, beta}.
 * Returns the new row, or -1: KM_EINTERNAL when out of memory (or beyond
 * KM_MTL_MAX_INPUTS), KM_EINPUT when a kernel value, the new row of L or its pivot is not
 * finite (the state may then hold part of the row: callers roll back). */
static int64_t append_input(km_mtl *s, const int32_t *ix, const double *v, int64_t nnz,
                            uint64_t hash, km_error *err)
{
    int64_t n = s->n;
    if (n >= KM_MTL_MAX_INPUTS) {
        km_error_set(err, KM_EINPUT, "mtl: %lld unique inputs, the most this build holds",
                     (long long)KM_MTL_MAX_INPUTS);
        return -KM_EINPUT;
    }
    if (grow_inputs(s, n + 1)) {
        km_error_nomem(err, "mtl unique inputs");
        return -KM_EINTERNAL;
    }
    int64_t at = s->row_ptr[n];
    if (at + nnz > s->nzcap || !s->index) {
        int64_t cap = s->nzcap ? s->nzcap : 256;
        while (cap < at + nnz)
            cap *= 2;
        int32_t *ni = realloc_n(s->index, (size_t)cap, sizeof *ni);
        if (ni)
            s->index = ni;
        double *nv = realloc_n(s->value, (size_t)cap, sizeof *nv);
        if (nv)
            s->value = nv;
        if (!ni || !nv) {
            km_error_nomem(err, "mtl unique inputs");
            return -KM_EINTERNAL;
        }
        s->nzcap = cap;
    }
    int64_t prev = km_imap_get(&s->xmap, (int64_t)hash);
    if (km_imap_put(&s->xmap, (int64_t)hash, n)) {
        km_error_nomem(err, "mtl unique inputs");
        return -KM_EINTERNAL;
    }
    if (nnz) {
        memcpy(s->index + at, ix, (size_t)nnz * sizeof *ix);
        memcpy(s->value + at, v, (size_t)nnz * sizeof *v);
    }
    s->row_ptr[n + 1] = at + nnz;
    s->xnext[n] = prev;
    s->xhash[n] = hash;
    s->sq[n] = sqnorm(v, nnz);
    s->n = n + 1;   /* rolled back with the transaction on any failure below */
    if (nnz && ix[nnz - 1] >= s->nfeat)   /* ix < INT32_MAX (km_mtl_check_triple) */
        s->nfeat = ix[nnz - 1] + 1;
    /* k = ker(x, Xbar; K); t solves L t = k([n - 1]); r = D^-1 t; beta = k_n - r'D r */
    double *t = s->work;
    for (int64_t i = 0; i < n; i++)
        t[i] = row_kernel(s, &s->p.K, i, ix, v, nnz, s->sq[n]);
    double kn = row_kernel(s, &s->p.K, n, ix, v, nnz, s->sq[n]);
    double *Lrow = s->L + packed(n);
    if (n)
        cblas_dtpsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasUnit, (int)n, s->L, t, 1);
    double beta = kn;
    for (int64_t i = 0; i < n; i++) {
        Lrow[i] = s->D[i] > 0 ? t[i] / s->D[i] : 0;   /* a dropped column stays zero */
        beta -= t[i] * Lrow[i];
    }
    Lrow[n] = 1;
    if (!isfinite(beta)) {   /* NaN or inf in k, L's row or the pivot (5.7) */
        km_error_set(err, KM_EINPUT, "the kernel K of this input with the unique inputs "
                     "does not give a finite factor of Kbar (5.7): K(x, x) = %g", kn);
        return -KM_EINPUT;
    }
    if (!(beta > KM_MTL_DROP * kn))   /* x in the span of the earlier inputs */
        beta = 0;
    s->D[n] = beta;
    if (beta > s->dmax)   /* a rollback keeps it: an upper bound is all that is needed */
        s->dmax = beta;
    s->ybar[n] = 0;
    for (int64_t j = 0; j < n; j++)
        s->H[n + j * s->ncap] = 0;   /* row n of the lower triangle */
    s->H[n + n * s->ncap] = beta;    /* H <- diag{H, beta} */
    return n;
}

static int reserve(void **p, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    int64_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc_n(*p, (size_t)c, size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* A canonical copy of x (zero values dropped) in s->xi/xv; its length, or -1. */
static int64_t canonical(km_mtl *s, const int32_t *ix, const double *v, int64_t nnz)
{
    int64_t cap = s->xcap;   /* room for one at least: xi and xv are never NULL */
    if (reserve((void **)&s->xi, &cap, nnz + 1, sizeof *s->xi))
        return -1;
    cap = s->xcap;
    if (reserve((void **)&s->xv, &cap, nnz + 1, sizeof *s->xv))
        return -1;
    s->xcap = cap;
    int64_t m = 0;
    for (int64_t k = 0; k < nnz; k++)
        if (v[k] != 0) {
            s->xi[m] = ix[k];
            s->xv[m++] = v[k];
        }
    return m;
}

static mtl_task *task_get(km_mtl *s, int64_t id)
{
    int64_t j = km_imap_get(&s->tmap, id);
    if (j >= 0)
        return &s->tasks[j];
    if (reserve((void **)&s->tasks, &s->tcap, s->ntask + 1, sizeof *s->tasks) ||
        km_imap_put(&s->tmap, id, s->ntask))
        return NULL;
    mtl_task *T = &s->tasks[s->ntask++];
    memset(T, 0, sizeof *T);
    T->id = id;
    T->Kt = km_mtl_task_kernel(&s->p, id);
    return T;
}

/* Room for l + 1 inputs in T (R_j keeps its values). */
static int task_grow(mtl_task *T, int64_t need)
{
    if (need <= T->cap)
        return 0;
    int64_t cap = T->cap ? 2 * T->cap : 4;
    while (cap < need)
        cap *= 2;
    size_t cc;
    if (__builtin_mul_overflow((size_t)cap, (size_t)cap, &cc))
        return -1;
    int64_t *h = realloc_n(T->h, (size_t)cap, sizeof *h);
    if (h)
        T->h = h;
    double *y = realloc_n(T->y, (size_t)cap, sizeof *y);
    if (y)
        T->y = y;
    double *w = realloc_n(T->w, (size_t)cap, sizeof *w);
    if (w)
        T->w = w;
    double *R = alloc_n(cc, sizeof *R, 1);
    if (!h || !y || !w || !R) {
        free(R);
        return -1;
    }
    for (int64_t j = 0; j < T->l; j++)
        memcpy(R + j * cap, T->R + j * T->cap, (size_t)T->l * sizeof *R);
    free(T->R);
    T->R = R;
    T->cap = cap;
    return 0;
}

/* ---- transactions ---- */

static void txn_clear(km_mtl *s)
{
    mtl_txn *x = &s->tx;
    for (int64_t k = 0; k < x->nst; k++) {
        free(x->st[k].h);
        free(x->st[k].y);
        free(x->st[k].w);
        free(x->st[k].R);
    }
    x->nst = 0;
    x->hsaved = 0;
    x->on = 0;
}

static void txn_free(km_mtl *s)
{
    txn_clear(s);
    free(s->tx.ybar);
    free(s->tx.H);
    free(s->tx.V);
    free(s->tx.Q);
    free(s->tx.st);
}

int km_mtl_begin(km_mtl *s, km_error *err)
{
    mtl_txn *x = &s->tx;
    if (x->on)
        return km_error_set(err, KM_EUSAGE, "mtl: a transaction is already open");
    if (reserve((void **)&x->ybar, &x->ybcap, s->n + 1, sizeof *x->ybar))
        return km_error_nomem(err, "mtl transaction");
    if (s->n)
        memcpy(x->ybar, s->ybar, (size_t)s->n * sizeof *x->ybar);
    x->n = s->n;
    x->nnz = s->row_ptr[s->n];
    x->version = s->version;
    x->ntask = s->ntask;
    x->nfeat = s->nfeat;
    x->npend = s->npend;
    x->nq = s->nq;
    x->rho = s->rho;
    x->hsaved = 0;
    x->nst = 0;
    x->on = 1;
    return KM_OK;
}

/* Saves task j's private part the first time the transaction touches it. */
static int touch_task(km_mtl *s, int64_t j)
{
    mtl_txn *x = &s->tx;
    if (!x->on || j >= x->ntask)
        return 0;   /* a task created in the transaction is removed whole */
    for (int64_t k = 0; k < x->nst; k++)
        if (x->st[k].j == j)
            return 0;
    if (reserve((void **)&x->st, &x->stcap, x->nst + 1, sizeof *x->st))
        return -1;
    const mtl_task *T = &s->tasks[j];
    saved_task *t = &x->st[x->nst];
    size_t l = (size_t)T->l;
    t->j = j;
    t->l = T->l;
    t->triples = T->triples;
    t->h = alloc_n(l, sizeof *t->h, 0);
    t->y = alloc_n(l, sizeof *t->y, 0);
    t->w = alloc_n(l, sizeof *t->w, 0);
    t->R = alloc_n(l * l, sizeof *t->R, 0);   /* l <= cap: l * l was allocated before */
    if (!t->h || !t->y || !t->w || !t->R) {
        free(t->h);
        free(t->y);
        free(t->w);
        free(t->R);
        return -1;
    }
    if (l) {
        memcpy(t->h, T->h, l * sizeof *t->h);
        memcpy(t->y, T->y, l * sizeof *t->y);
        memcpy(t->w, T->w, l * sizeof *t->w);
        for (size_t b = 0; b < l; b++)
            memcpy(t->R + b * l, T->R + b * (size_t)T->cap, l * sizeof *t->R);
    }
    x->nst++;
    return 0;
}

/* Saves H, the pending terms and C before the transaction's first batch changes them. */
static int save_h(km_mtl *s)
{
    mtl_txn *x = &s->tx;
    if (!x->on || x->hsaved)
        return 0;
    size_t n0 = (size_t)x->n, ld = (size_t)s->ncap, k0 = (size_t)x->npend;
    if (reserve((void **)&x->H, &x->hcap, (int64_t)(n0 * n0 + 1), sizeof *x->H) ||
        reserve((void **)&x->V, &x->vcap, (int64_t)(n0 * KM_MTL_BATCH + 1), sizeof *x->V)) {
        return -1;
    }
    int64_t qcap = x->vcap;   /* V and Q share a capacity */
    double *q = realloc_n(x->Q, (size_t)qcap, sizeof *q);
    if (!q)
        return -1;
    x->Q = q;
    for (size_t j = 0; j < n0; j++)
        memcpy(x->H + j * n0 + j, s->H + j * ld + j, (n0 - j) * sizeof *x->H);
    for (size_t k = 0; k < k0; k++) {
        memcpy(x->V + k * n0, s->V + k * ld, n0 * sizeof *x->V);
        memcpy(x->Q + k * n0, s->Q + k * ld, n0 * sizeof *x->Q);
    }
    memcpy(x->C, s->C, sizeof x->C);
    memcpy(x->gam, s->gam, sizeof x->gam);
    x->hsaved = 1;
    return 0;
}

void km_mtl_rollback(km_mtl *s)
{
    mtl_txn *x = &s->tx;
    if (!x->on)
        return;
    for (int64_t j = s->ntask - 1; j >= x->ntask; j--) {   /* tasks created */
        mtl_task *T = &s->tasks[j];
        km_imap_del(&s->tmap, T->id);
        free(T->h);
        free(T->y);
        free(T->w);
        free(T->R);
    }
    s->ntask = x->ntask;
    for (int64_t k = 0; k < x->nst; k++) {   /* tasks changed */
        const saved_task *t = &x->st[k];
        mtl_task *T = &s->tasks[t->j];
        size_t l = (size_t)t->l;
        T->l = t->l;
        T->triples = t->triples;
        if (l) {
            memcpy(T->h, t->h, l * sizeof *t->h);
            memcpy(T->y, t->y, l * sizeof *t->y);
            memcpy(T->w, t->w, l * sizeof *t->w);
            for (size_t b = 0; b < l; b++)
                memcpy(T->R + b * (size_t)T->cap, t->R + b * l, l * sizeof *t->R);
        }
    }
    for (int64_t r = s->n - 1; r >= x->n; r--) {   /* inputs appended, newest first */
        if (s->xnext[r] >= 0)
            km_imap_put(&s->xmap, (int64_t)s->xhash[r], s->xnext[r]);   /* a key present */
        else
            km_imap_del(&s->xmap, (int64_t)s->xhash[r]);
    }
    s->n = x->n;
    s->nfeat = x->nfeat;
    s->version = x->version;
    if (x->n)
        memcpy(s->ybar, x->ybar, (size_t)x->n * sizeof *s->ybar);
    if (x->hsaved) {
        size_t n0 = (size_t)x->n, ld = (size_t)s->ncap;
        for (size_t j = 0; j < n0; j++)
            memcpy(s->H + j * ld + j, x->H + j * n0 + j, (n0 - j) * sizeof *s->H);
        for (size_t k = 0; k < (size_t)x->npend; k++) {
            memcpy(s->V + k * ld, x->V + k * n0, n0 * sizeof *s->V);
            memcpy(s->Q + k * ld, x->Q + k * n0, n0 * sizeof *s->Q);
            memset(s->V + k * ld + n0, 0, (ld - n0) * sizeof *s->V);
            memset(s->Q + k * ld + n0, 0, (ld - n0) * sizeof *s->Q);
        }
        memcpy(s->C, x->C, sizeof s->C);
        memcpy(s->gam, x->gam, sizeof s->gam);
    }
    s->npend = x->npend;
    s->nq = x->nq;
    s->rho = x->rho;
    s->view_version = -1;
    txn_clear(s);
}

/* ---- H's rank-one terms (Algorithm 5 lines 34-35), checked before they count ---- */

/* Q columns k0..k1-1 (= H V) into Qd and the rows k0..k1-1 of the Cholesky factor Cd of
 * S = (alpha Gamma)^-1 + V'HV (Qd, Cd hold the earlier ones). In exact arithmetic every
 * pivot is at least 1 / (alpha gamma_k) > 0; one that is not positive and finite means the
 * batched update of H would not be positive definite: KM_EINPUT (H untouched). */
static int compute_q(km_mtl *s, double *Qd, double *Cd, int k0, int k1, km_error *err)
{
    int n = (int)s->n, ld = (int)s->ncap, B = KM_MTL_BATCH;
    if (k0 >= k1)
        return KM_OK;
    cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, n, k1 - k0, 1.0, s->H, ld,
                s->V + (size_t)k0 * (size_t)ld, ld, 0.0, Qd + (size_t)k0 * (size_t)ld, ld);
    for (int k = k0; k < k1; k++) {
        double *q = Qd + (size_t)k * (size_t)ld, *c = Cd + k;   /* row k of C */
        if (ld > n)   /* rows beyond n stay zero: an input appended later keeps Q = H V */
            memset(q + n, 0, (size_t)(ld - n) * sizeof *q);
        double skk = 1 / (s->p.alpha * s->gam[k]) +
                     cblas_ddot(n, q, 1, s->V + (size_t)k * (size_t)ld, 1);
        for (int j = 0; j < k; j++) {
            double t = cblas_ddot(n, q, 1, s->V + (size_t)j * (size_t)ld, 1);
            for (int m = 0; m < j; m++)
                t -= Cd[j + m * B] * c[m * B];
            c[j * B] = t / Cd[j + j * B];
            skk -= c[j * B] * c[j * B];
        }
        if (!(skk > 0) || !isfinite(skk))
            return km_error_set(err, KM_EINPUT, "the update of H would not be positive "
                                "definite (Algorithm 5 line 35: pivot %g); nothing applied",
                                skk);
        c[k * B] = sqrt(skk);
    }
    return KM_OK;
}

/* Decides that the pending terms keep H's batched update positive definite (Algorithm 5
 * lines 34-35). With Shat = I + G, G = (alpha Gamma)^1/2 V'HV (alpha Gamma)^1/2 positive
 * semi-definite and trace G <= sum_k alpha gamma_k |v_k|^2 |H| <= rho (|H| <= max D, doubled
 * for rounding), the rounding errors of forming S and of its Cholesky factorization are at
 * most about (n + KM_MTL_BATCH) KM_MTL_BATCH eps rho relative to the unit diagonal, so
 * rho (n + 64) 64 eps <= 1/4 guarantees success (the usual case: the check is O(n) per
 * triple). Otherwise the exact check: Q and the rows of C now (a dsymm per request). */
static int check_terms(km_mtl *s, km_error *err)
{
    if (s->nq == s->npend ||
        (!s->exact && s->rho * (double)(s->n + KM_MTL_BATCH) * KM_MTL_BATCH * DBL_EPSILON <=
                          0.25))
        return KM_OK;
    int rc = compute_q(s, s->Q, s->C, s->nq, s->npend, err);
    if (!rc)
        s->nq = s->npend;
    return rc;
}

/* The npend terms, with Q (n x npend, leading dimension ncap) and C, applied to Hd (n x n,
 * lower, leading dimension ncap) as one Woodbury step: H <- H - (Q C^-T)(Q C^-T)'; Q is
 * overwritten. */
static void apply_batch(km_mtl *s, double *Hd, double *Q, const double *C)
{
    int k = s->npend, n = (int)s->n, ld = (int)s->ncap;
    if (!k || !n)
        return;
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, n, k, 1.0, C,
                KM_MTL_BATCH, Q, ld);
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, -1.0, Q, ld, 1.0, Hd, ld);
}

void km_mtl_exact_checks(km_mtl *s, int on)
{
    s->exact = on != 0;
}

int km_mtl_commit(km_mtl *s, km_error *err)
{
    if (!s->tx.on)
        return KM_OK;
    int rc = check_terms(s, err);
    if (rc) {
        km_mtl_rollback(s);
        return rc;
    }
    txn_clear(s);
    return KM_OK;
}

/* ---- checks ---- */

int km_mtl_check_triple(const int32_t *index, const double *value, int64_t nnz, double y,
                        double w, int32_t n_features, km_error *err)
{
    if (nnz < 0)
        return km_error_set(err, KM_EINPUT, "negative number of features");
    for (int64_t k = 0; k < nnz; k++) {
        if (index[k] < 0 || (k && index[k] <= index[k - 1]))
            return km_error_set(err, KM_EINPUT, "feature indices must increase (entry %lld)",
                                (long long)k + 1);
        if (index[k] >= KM_MTL_MAX_INDEX || (n_features > 0 && index[k] >= n_features))
            return km_error_set(err, KM_EINPUT, "feature %lld beyond the %lld features",
                                (long long)index[k] + 1,
                                n_features > 0 ? (long long)n_features
                                               : (long long)KM_MTL_MAX_INDEX);
        if (!isfinite(value[k]))
            return km_error_set(err, KM_EINPUT, "feature %lld: value not finite",
                                (long long)index[k] + 1);
    }
    if (!(fabs(y) <= KM_MTL_KMAX))
        return km_error_set(err, KM_EINPUT, "output y must be finite, |y| <= %g (got %g)",
                            KM_MTL_KMAX, y);
    if (!(w >= 1 / KM_MTL_KMAX && w <= KM_MTL_KMAX))
        return km_error_set(err, KM_EINPUT, "weight w must be positive and finite, in [%g, %g] "
                            "(got %g)", 1 / KM_MTL_KMAX, KM_MTL_KMAX, w);
    return KM_OK;
}

static int kernel_bound(const km_kernel *k, const char *which, const int32_t *ix,
                        const double *v, int64_t nnz, km_error *err)
{
    double sq = sqnorm(v, nnz), kxx = km_kernel_eval(k, ix, v, nnz, sq, ix, v, nnz, sq);
    if (!(fabs(kxx) <= KM_MTL_KMAX))   /* NaN and inf too */
        return km_error_set(err, KM_EINPUT, "kernel value %s(x, x) = %g (%s kernel, x'x = %g) "
                            "beyond %g: the update would overflow; scale the inputs or lower "
                            "gamma", which, kxx, km_kernel_name(k->type), sq, KM_MTL_KMAX);
    return KM_OK;
}

int km_mtl_check_kernels(const km_mtl_param *p, int64_t task, const int32_t *index,
                         const double *value, int64_t nnz, km_error *err)
{
    /* PSD kernels: |K(x, x')| <= sqrt(K(x, x) K(x', x')), so every value of the update
     * stays within the bound when each input's own values do */
    if (p->alpha > 0 && kernel_bound(&p->K, "K", index, value, nnz, err))
        return KM_EINPUT;
    if (p->alpha < 1 &&
        kernel_bound(km_mtl_task_kernel(p, task), "K~", index, value, nnz, err))
        return KM_EINPUT;
    return KM_OK;
}

static int all_finite(const double *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += v[i] * 0;   /* NaN when any v[i] is NaN or inf */
    return s == 0;
}

/* Algorithm 5; shared = 0: the task's part only (lines 13-31). Inside a transaction: on an
 * error the state may be half updated, and the caller rolls back. */
static int update_in(km_mtl *s, int64_t id, const int32_t *index, const double *value,
                     int64_t nnz, double y, double w, int shared, km_error *err)
{
    if (km_mtl_check_triple(index, value, nnz, y, w, 0, err) ||
        km_mtl_check_kernels(&s->p, id, index, value, nnz, err))
        return KM_EINPUT;
    int64_t m = canonical(s, index, value, nnz);
    if (m < 0)
        return km_error_nomem(err, "mtl input");
    uint64_t hash = row_hash(s->xi, s->xv, m);
    int64_t sidx = find_input(s, s->xi, s->xv, m, hash);             /* line 1 */
    if (sidx < 0) {
        if (!shared)
            return km_error_set(err, KM_EINPUT, "input not among the disclosed unique inputs");
        if ((sidx = append_input(s, s->xi, s->xv, m, hash, err)) < 0)    /* lines 2-12 */
            return (int)-sidx;
    }
    int64_t tj = km_imap_get(&s->tmap, id);
    if (tj >= 0 && touch_task(s, tj))
        return km_error_nomem(err, "mtl transaction");
    mtl_task *T = task_get(s, id);
    if (!T || task_grow(T, T->l + 1) ||
        reserve((void **)&s->tw, &s->twcap, 2 * (T->l + 1), sizeof *s->tw))
        return km_error_nomem(err, "mtl task");
    int64_t l = T->l, p = -1, ld = T->cap;
    for (int64_t k = 0; k < l && p < 0; k++)                          /* line 13 */
        if (T->h[k] == sidx)
            p = k;
    double *u = s->tw, *kt = s->tw + l + 1;
    double alpha = s->p.alpha, lambda = s->p.lambda, gamma, mu;
    if (p < 0) {                                                       /* lines 14-23 */
        double sqx = s->sq[sidx];
        const int32_t *xi = s->index + s->row_ptr[sidx];
        const double *xv = s->value + s->row_ptr[sidx];
        int64_t xn = s->row_ptr[sidx + 1] - s->row_ptr[sidx];
        for (int64_t k = 0; k < l; k++)   /* the task's own K~_j (5.2) */
            kt[k] = (1 - alpha) * row_kernel(s, T->Kt, T->h[k], xi, xv, xn, sqx);
        kt[l] = (1 - alpha) * row_kernel(s, T->Kt, sidx, xi, xv, xn, sqx);
        if (l)
            cblas_dsymv(CblasColMajor, CblasLower, (int)l, 1.0, T->R, (int)ld, kt, 1, 0.0, u, 1);
        u[l] = -1;
        gamma = 1 / (lambda * w + kt[l] - (l ? cblas_ddot((int)l, u, 1, kt, 1) : 0));
        if (!(gamma > 0) || !isfinite(gamma) || !all_finite(u, l))
            return km_error_set(err, KM_EINPUT, "the task's update of R_j would not be "
                                "positive definite (Algorithm 5 line 22: gamma = %g)", gamma);
        for (int64_t k = 0; k <= l; k++)
            T->R[l + k * ld] = T->R[k + l * ld] = 0;
        T->h[l] = sidx;
        T->y[l] = y;
        T->w[l] = w;
        T->l = ++l;
        mu = gamma * cblas_ddot((int)l, u, 1, T->y, 1);
    } else {                                                           /* lines 25-29 */
        memcpy(u, T->R + p * ld, (size_t)l * sizeof *u);
        double wo = T->w[p], wn = wo * w / (wo + w);
        double yo = T->y[p], yn = yo + wn / w * (y - yo);
        /* R_j <- (R_j^-1 + lambda dw e_p e_p')^-1, dw = -wo^2 / (wo + w) (Lemma 9) */
        gamma = 1 / ((wo + w) / (lambda * wo * wo) - T->R[p + p * ld]);
        if (!(gamma > 0) || !isfinite(gamma) || !(wn > 0) || !isfinite(yn))
            return km_error_set(err, KM_EINPUT, "the task's update of R_j would not be "
                                "positive definite (Algorithm 5 line 28: gamma = %g)", gamma);
        T->w[p] = wn;
        T->y[p] = yn;
        mu = (yn - yo) + gamma * cblas_ddot((int)l, u, 1, T->y, 1);
    }
    if (!isfinite(mu))
        return km_error_set(err, KM_EINPUT, "the update overflows (Algorithm 5: mu = %g)", mu);
    cblas_dger(CblasColMajor, (int)l, (int)l, gamma, u, 1, u, 1, T->R, (int)ld); /* line 31 */
    T->triples++;
    if (!shared)
        return KM_OK;
    double *v = s->work;                                               /* line 32 */
    memset(v, 0, (size_t)s->n * sizeof *v);
    for (int64_t k = 0; k < l; k++)
        cblas_daxpy((int)T->h[k] + 1, u[k], s->L + packed(T->h[k]), 1, v, 1);
    cblas_daxpy((int)s->n, mu, v, 1, s->ybar, 1);                      /* line 33 */
    if (!all_finite(v, s->n) || !all_finite(s->ybar, s->n))
        return km_error_set(err, KM_EINPUT, "the update of ybar overflows (Algorithm 5 line "
                            "33); nothing applied");
    if (alpha > 0) {                                                   /* lines 34-35, queued */
        double *col = s->V + (int64_t)s->npend * s->ncap;
        memcpy(col, v, (size_t)s->n * sizeof *v);
        memset(col + s->n, 0, (size_t)(s->ncap - s->n) * sizeof *col);
        s->gam[s->npend++] = gamma;
        s->rho += alpha * gamma * cblas_ddot((int)s->n, v, 1, v, 1) * 2 * s->dmax;
        if (s->npend == KM_MTL_BATCH) {
            int rc = compute_q(s, s->Q, s->C, s->nq, s->npend, err);
            if (rc)
                return rc;
            if (save_h(s))
                return km_error_nomem(err, "mtl transaction");
            apply_batch(s, s->H, s->Q, s->C);
            s->npend = s->nq = 0;
            s->rho = 0;
        }
    }
    s->version++;
    return KM_OK;
}

/* One triple as a transaction of its own, or part of the open one. */
static int update(km_mtl *s, int64_t id, const int32_t *index, const double *value,
                  int64_t nnz, double y, double w, int shared, km_error *err)
{
    if (s->tx.on)
        return update_in(s, id, index, value, nnz, y, w, shared, err);
    int rc = km_mtl_begin(s, err);
    if (rc)
        return rc;
    rc = update_in(s, id, index, value, nnz, y, w, shared, err);
    if (rc) {
        km_mtl_rollback(s);
        return rc;
    }
    return km_mtl_commit(s, err);
}

int km_mtl_update(km_mtl *s, int64_t task, const int32_t *index, const double *value,
                  int64_t nnz, double y, double w, km_error *err)
{
    return update(s, task, index, value, nnz, y, w, 1, err);
}

int km_mtl_update_private(km_mtl *s, int64_t task, const int32_t *index, const double *value,
                          int64_t nnz, double y, double w, km_error *err)
{
    return update(s, task, index, value, nnz, y, w, 0, err);
}

/* Hview = H with the queued terms applied; z = Hview ybar; cbar solves D L' cbar = z
 * (Algorithm 9 lines 13-14). Kept until the next update. */
static int refresh_view(km_mtl *s, km_error *err)
{
    if (s->view_version == s->version || !s->n)
        return KM_OK;
    int64_t n = s->n, ld = s->ncap;
    /* Q and C of the pending terms into scratch (the state's own are computed only at the
     * points that do not depend on reads: the bits stay a function of the updates) */
    for (int k = 0; k < s->nq; k++)
        memcpy(s->Qw + (size_t)k * (size_t)ld, s->Q + (size_t)k * (size_t)ld,
               (size_t)n * sizeof *s->Qw);
    memcpy(s->Cw, s->C, sizeof s->Cw);
    int rc = compute_q(s, s->Qw, s->Cw, s->nq, s->npend, err);
    if (rc)
        return rc;
    for (int64_t j = 0; j < n; j++)
        memcpy(s->Hview + j * ld + j, s->H + j * ld + j, (size_t)(n - j) * sizeof *s->H);
    apply_batch(s, s->Hview, s->Qw, s->Cw);
    cblas_dsymv(CblasColMajor, CblasLower, (int)n, 1.0, s->Hview, (int)ld, s->ybar, 1, 0.0,
                s->z, 1);
    for (int64_t i = 0; i < n; i++)   /* z_i = 0 where D_i = 0 (H's row i is zero) */
        s->cbar[i] = s->D[i] > 0 ? s->z[i] / s->D[i] : 0;
    cblas_dtpsv(CblasRowMajor, CblasLower, CblasTrans, CblasUnit, (int)n, s->L, s->cbar, 1);
    s->view_version = s->version;
    return KM_OK;
}

/* ---- disclosure ---- */

void km_mtl_disclosed_free(km_mtl_disclosed *d)
{
    if (!d)
        return;
    km_problem_free(d->X);
    free(d->ybar);
    free(d->H);
    memset(d, 0, sizeof *d);
}

/* Rows first..n-1 of Xbar as a new problem. */
static km_problem *rows_copy(const km_mtl *s, int64_t first)
{
    km_problem *X = calloc(1, sizeof *X);
    if (!X)
        return NULL;
    int64_t m = s->n - first, a = s->row_ptr[first], nnz = s->row_ptr[s->n] - a;
    X->l = m;
    X->nnz = nnz;
    X->n = s->nfeat;
    X->row_ptr = malloc((size_t)(m + 1) * sizeof *X->row_ptr);
    X->index = malloc((size_t)(nnz ? nnz : 1) * sizeof *X->index);
    X->value = malloc((size_t)(nnz ? nnz : 1) * sizeof *X->value);
    if (!X->row_ptr || !X->index || !X->value) {
        km_problem_free(X);
        return NULL;
    }
    for (int64_t i = 0; i <= m; i++)
        X->row_ptr[i] = s->row_ptr[first + i] - a;
    if (nnz) {
        memcpy(X->index, s->index + a, (size_t)nnz * sizeof *X->index);
        memcpy(X->value, s->value + a, (size_t)nnz * sizeof *X->value);
    }
    return X;
}

int km_mtl_disclose(km_mtl *s, int64_t first, km_mtl_disclosed *out, km_error *err)
{
    memset(out, 0, sizeof *out);
    if (first < 0 || first > s->n)
        return km_error_set(err, KM_EINPUT, "first input %lld outside 0..%lld",
                            (long long)first, (long long)s->n);
    int rc = refresh_view(s, err);
    if (rc)
        return rc;
    int64_t n = s->n;
    out->version = s->version;
    out->n = n;
    out->first = first;
    out->X = rows_copy(s, first);
    out->ybar = malloc((size_t)(n ? n : 1) * sizeof *out->ybar);
    out->H = malloc((size_t)(n ? n * n : 1) * sizeof *out->H);
    if (!out->X || !out->ybar || !out->H) {
        km_mtl_disclosed_free(out);
        return km_error_nomem(err, "mtl disclosure");
    }
    memcpy(out->ybar, s->ybar, (size_t)n * sizeof *out->ybar);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = j; i < n; i++)
            out->H[i + j * n] = out->H[j + i * n] = s->Hview[i + j * s->ncap];
    return KM_OK;
}

int km_mtl_disclosed_merge(km_mtl_disclosed *d, km_mtl_disclosed *upd, km_error *err)
{
    if (upd->first > d->n || upd->n < d->n || upd->version < d->version)
        return km_error_set(err, KM_EINPUT, "disclosure (version %lld, inputs %lld..%lld) does "
                            "not follow the one held (version %lld, %lld inputs)",
                            (long long)upd->version, (long long)upd->first,
                            (long long)upd->n, (long long)d->version, (long long)d->n);
    km_problem *X = d->X, *U = upd->X;
    if (!X || !U || X->l != d->n - d->first || U->l != upd->n - upd->first || d->first)
        return km_error_set(err, KM_EINPUT, "disclosure: inputs do not match its counts");
    int64_t skip = d->n - upd->first, add = upd->n - d->n;
    int64_t a = U->row_ptr[skip], nnz = U->row_ptr[U->l] - a;
    int64_t *rp = realloc(X->row_ptr, (size_t)(X->l + add + 1) * sizeof *rp);
    if (rp)
        X->row_ptr = rp;
    int32_t *ix = realloc(X->index, (size_t)(X->nnz + nnz + 1) * sizeof *ix);
    if (ix)
        X->index = ix;
    double *v = realloc(X->value, (size_t)(X->nnz + nnz + 1) * sizeof *v);
    if (v)
        X->value = v;
    if (!rp || !ix || !v)
        return km_error_nomem(err, "mtl disclosure");
    memcpy(X->index + X->nnz, U->index + a, (size_t)nnz * sizeof *ix);
    memcpy(X->value + X->nnz, U->value + a, (size_t)nnz * sizeof *v);
    for (int64_t i = 1; i <= add; i++)
        X->row_ptr[X->l + i] = X->nnz + U->row_ptr[skip + i] - a;
    X->l += add;
    X->nnz += nnz;
    if (U->n > X->n)
        X->n = U->n;
    free(d->ybar);
    free(d->H);
    d->ybar = upd->ybar;
    d->H = upd->H;
    upd->ybar = upd->H = NULL;
    d->n = upd->n;
    d->version = upd->version;
    km_mtl_disclosed_free(upd);
    return KM_OK;
}

km_mtl *km_mtl_from_disclosed(const km_mtl_param *p, const km_mtl_disclosed *d, km_error *err)
{
    if (!d->X || d->first != 0 || d->X->l != d->n) {
        km_error_set(err, KM_EINPUT, "disclosure holds inputs %lld..%lld, not all %lld",
                     (long long)d->first, (long long)d->n, (long long)d->n);
        return NULL;
    }
    km_mtl *s = km_mtl_new(p, err);
    if (!s)
        return NULL;
    const km_problem *X = d->X;
    for (int64_t i = 0; i < d->n; i++) {                               /* lines 1-7 */
        int64_t a = X->row_ptr[i], nnz = X->row_ptr[i + 1] - a;
        int rc = km_mtl_check_triple(X->index + a, X->value + a, nnz, 0, 1, 0, err);
        int64_t m = rc ? -1 : canonical(s, X->index + a, X->value + a, nnz);
        if (rc || m != nnz) {
            if (!rc)
                km_error_set(err, m < 0 ? KM_EINTERNAL : KM_EINPUT, m < 0 ? "out of memory "
                             "(mtl inputs)" : "disclosed input %lld has a zero value",
                             (long long)i + 1);
            km_mtl_free(s);
            return NULL;
        }
        uint64_t hash = row_hash(s->xi, s->xv, m);
        if (find_input(s, s->xi, s->xv, m, hash) >= 0) {
            km_error_set(err, KM_EINPUT, "disclosed input %lld repeats an earlier one",
                         (long long)i + 1);
            km_mtl_free(s);
            return NULL;
        }
        if (km_mtl_check_kernels(p, INT64_MIN, s->xi, s->xv, m, err) ||
            append_input(s, s->xi, s->xv, m, hash, err) < 0) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            km_error_set(err, KM_EINPUT, "disclosed input %lld: %s", (long long)i + 1, msg);
            km_mtl_free(s);
            return NULL;
        }
    }
    if (!all_finite(d->ybar, d->n) || (d->n && !all_finite(d->H, d->n * d->n))) {
        km_error_set(err, KM_EINPUT, "disclosure: ybar or H not finite");
        km_mtl_free(s);
        return NULL;
    }
    int64_t n = d->n, ld = s->ncap;
    if (n) {
        memcpy(s->ybar, d->ybar, (size_t)n * sizeof *s->ybar);
        for (int64_t j = 0; j < n; j++)
            memcpy(s->H + j * ld + j, d->H + j * n + j, (size_t)(n - j) * sizeof *s->H);
    }
    s->version = d->version;
    return s;
}

/* ---- Algorithm 4 ---- */

int km_mtl_offline(const km_mtl_param *p, const km_problem *P, const double *wts,
                   km_mtl **out, km_error *err)
{
    *out = NULL;
    km_mtl *s = km_mtl_new(p, err);
    if (!s)
        return err ? err->code : KM_EUSAGE;
    double alpha = p->alpha, lambda = p->lambda;
    km_imap pos = {0};   /* (task, unique input) -> position in the task */
    double *M = NULL, *Ld = NULL, *sv = NULL;
    int rc = KM_OK;
    /* unique inputs and Kbar = L D L' (line 4); tasks' inputs with repeats merged (Case 1):
     * w accumulates sum 1/w_i and y sum y_i / w_i until the end */
    for (int64_t i = 0; i < P->l && !rc; i++) {
        int64_t a = P->row_ptr[i], nnz = P->row_ptr[i + 1] - a;
        double w = wts ? wts[i] : 1;
        int64_t task = P->qid ? P->qid[i] : 0;
        if ((rc = km_mtl_check_triple(P->index + a, P->value + a, nnz, P->y[i], w, 0, err)) ||
            (rc = km_mtl_check_kernels(p, task, P->index + a, P->value + a, nnz, err))) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            km_error_set(err, rc, "mtl: row %lld: %s", (long long)i + 1, msg);
            break;
        }
        int64_t m = canonical(s, P->index + a, P->value + a, nnz);
        uint64_t hash = m < 0 ? 0 : row_hash(s->xi, s->xv, m);
        int64_t sidx = m < 0 ? -1 : find_input(s, s->xi, s->xv, m, hash);
        if (m >= 0 && sidx < 0 && (sidx = append_input(s, s->xi, s->xv, m, hash, err)) < 0) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            rc = km_error_set(err, (int)-sidx, "mtl: row %lld: %s", (long long)i + 1, msg);
            break;
        }
        mtl_task *T = sidx < 0 ? NULL : task_get(s, task);
        if (!T) {
            rc = km_error_nomem(err, "mtl offline");
            break;
        }
        int64_t tj = T - s->tasks, key = (int64_t)km_mix64((uint64_t)tj) ^ sidx;
        int64_t k = km_imap_get(&pos, key);   /* keys stay: k < 0 means a new pair */
        if (k >= 0 && (k >= T->l || T->h[k] != sidx))   /* a collision of keys: scan */
            for (k = 0; k < T->l && T->h[k] != sidx; k++)
                ;
        if (k < 0 || k == T->l) {
            if (task_grow(T, T->l + 1) || km_imap_put(&pos, key, T->l)) {
                rc = km_error_nomem(err, "mtl offline");
                break;
            }
            k = T->l++;
            T->h[k] = sidx;
            T->y[k] = T->w[k] = 0;
        }
        T->w[k] += 1 / w;
        T->y[k] += P->y[i] / w;
        T->triples++;
        s->version++;
    }
    km_imap_free(&pos);
    int64_t n = s->n;
    if (!rc && (!(M = calloc((size_t)(n ? n * n : 1), sizeof *M)) ||
                !(sv = calloc((size_t)(n ? n : 1), sizeof *sv))))
        rc = km_error_nomem(err, "mtl offline");
    /* lines 1-3 and the sums of lines 5-6 before multiplying by L: sv = sum_j P_j' R_j y_j,
     * M = sum_j P_j' R_j P_j */
    for (int64_t j = 0; j < s->ntask && !rc; j++) {
        mtl_task *T = &s->tasks[j];
        int64_t l = T->l, ld = T->cap;
        for (int64_t k = 0; k < l; k++) {
            T->w[k] = 1 / T->w[k];
            T->y[k] *= T->w[k];
        }
        for (int64_t b = 0; b < l; b++) {
            int64_t rb = T->h[b];
            const int32_t *xi = s->index + s->row_ptr[rb];
            const double *xv = s->value + s->row_ptr[rb];
            int64_t xn = s->row_ptr[rb + 1] - s->row_ptr[rb];
            for (int64_t a = b; a < l; a++)   /* the task's own K~_j (5.2) */
                T->R[a + b * ld] = (1 - alpha) * row_kernel(s, T->Kt, T->h[a], xi, xv, xn,
                                                            s->sq[rb]);
            T->R[b + b * ld] += lambda * T->w[b];
        }
        int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int)l, T->R, (int)ld);
        if (!info)
            info = LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', (int)l, T->R, (int)ld);
        if (info || !all_finite(T->R, ld * l)) {
            rc = km_error_set(err, KM_EINPUT, "mtl offline: task %lld: (1 - alpha) K~ + "
                              "lambda W not positive definite or not finite (info %d): the "
                              "data are too badly scaled for the kernel", (long long)T->id,
                              info);
            break;
        }
        for (int64_t b = 0; b < l; b++)
            for (int64_t a = b + 1; a < l; a++)
                T->R[b + a * ld] = T->R[a + b * ld];
        for (int64_t b = 0; b < l; b++) {
            double ry = 0;
            for (int64_t a = 0; a < l; a++) {
                ry += T->R[b + a * ld] * T->y[a];
                M[T->h[a] + T->h[b] * n] += T->R[a + b * ld];
            }
            sv[T->h[b]] += ry;
        }
    }
    if (!rc && n) {
        /* line 5: ybar = L' sv */
        memcpy(s->ybar, sv, (size_t)n * sizeof *sv);
        cblas_dtpmv(CblasRowMajor, CblasLower, CblasTrans, CblasUnit, (int)n, s->L, s->ybar, 1);
        /* line 6: H = (D^-1 + alpha L'ML)^-1 = D^1/2 (I + alpha D^1/2 L'ML D^1/2)^-1 D^1/2 */
        int64_t ld = s->ncap;
        if (alpha > 0) {
            if (!(Ld = calloc((size_t)(n * n), sizeof *Ld)))
                rc = km_error_nomem(err, "mtl offline");
            for (int64_t i = 0; i < n && !rc; i++)
                for (int64_t j = 0; j <= i; j++)
                    Ld[i + j * n] = s->L[packed(i) + j];
            if (!rc) {
                cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasUnit,
                            (int)n, (int)n, 1.0, Ld, (int)n, M, (int)n);
                cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasUnit, (int)n,
                            (int)n, 1.0, Ld, (int)n, M, (int)n);
                for (int64_t j = 0; j < n; j++)
                    for (int64_t i = j; i < n; i++)
                        M[i + j * n] = alpha * sqrt(s->D[i]) * M[i + j * n] * sqrt(s->D[j]) +
                                       (i == j);
                int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int)n, M, (int)n);
                if (!info)
                    info = LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', (int)n, M, (int)n);
                if (info)
                    rc = km_error_set(err, KM_EINPUT, "mtl offline: H (line 6) not positive "
                                      "definite (info %d): the data are too badly scaled for "
                                      "the kernel", info);
                for (int64_t j = 0; j < n && !rc; j++)
                    for (int64_t i = j; i < n; i++)
                        s->H[i + j * ld] = sqrt(s->D[i]) * M[i + j * n] * sqrt(s->D[j]);
            }
        } else {
            for (int64_t j = 0; j < n; j++) {
                memset(s->H + j * ld + j, 0, (size_t)(n - j) * sizeof *s->H);
                s->H[j + j * ld] = s->D[j];
            }
        }
    }
    free(M);
    free(Ld);
    free(sv);
    for (int64_t j = 0; j < s->n && !rc; j++)
        if (!all_finite(s->H + j * s->ncap + j, s->n - j) || !isfinite(s->ybar[j]))
            rc = km_error_set(err, KM_EINPUT, "mtl offline: ybar or H (lines 5-6) not finite: "
                              "the data are too badly scaled for the kernel");
    if (rc) {
        km_mtl_free(s);
        return rc;
    }
    s->view_version = -1;
    *out = s;
    return KM_OK;
}

/* ---- estimates ---- */

void km_mtl_estimate_free(km_mtl_estimate *e)
{
    if (!e)
        return;
    km_problem_free(e->X);
    free(e->sq);
    free(e->cbar);
    free(e->h);
    free(e->c);
    free(e);
}

int km_mtl_task_coef(km_mtl *s, int64_t id, const int64_t **h, double *c, int64_t *l,
                     const double **cbar, km_error *err)
{
    int rc = refresh_view(s, err);
    if (rc)
        return rc;
    const mtl_task *T = task_find(s, id);
    *cbar = s->cbar;
    *l = T ? T->l : 0;
    *h = T ? T->h : NULL;
    if (!T)
        return KM_OK;
    /* line 15: c_j = R_j (y_j - alpha L(h_j, :) z) */
    double *r = s->work2;
    for (int64_t k = 0; k < T->l; k++)
        r[k] = T->y[k] - s->p.alpha * cblas_ddot((int)T->h[k] + 1, s->L + packed(T->h[k]), 1,
                                                  s->z, 1);
    cblas_dsymv(CblasColMajor, CblasLower, (int)T->l, 1.0, T->R, (int)T->cap, r, 1, 0.0, c, 1);
    return KM_OK;
}

int km_mtl_estimate_task(km_mtl *s, int64_t id, km_mtl_estimate **out, km_error *err)
{
    *out = NULL;
    km_mtl_estimate *e = calloc(1, sizeof *e);
    int64_t lmax, tr;
    km_mtl_task_size(s, id, &lmax, &tr);
    if (e) {
        e->param = s->p;   /* with the task's K~_j (5.3) */
        e->param.Kt = *km_mtl_task_kernel(&s->p, id);
        e->param.ntk = 0;
        e->param.tk = NULL;
        e->X = rows_copy(s, 0);
        e->sq = malloc((size_t)(s->n + 1) * sizeof *e->sq);
        e->cbar = malloc((size_t)(s->n + 1) * sizeof *e->cbar);
        e->h = malloc((size_t)(lmax + 1) * sizeof *e->h);
        e->c = malloc((size_t)(lmax + 1) * sizeof *e->c);
    }
    if (!e || !e->X || !e->sq || !e->cbar || !e->h || !e->c) {
        km_mtl_estimate_free(e);
        return km_error_nomem(err, "mtl estimate");
    }
    const int64_t *h;
    const double *cbar;
    int rc = km_mtl_task_coef(s, id, &h, e->c, &e->l, &cbar, err);
    if (rc) {
        km_mtl_estimate_free(e);
        return rc;
    }
    if (s->n) {
        memcpy(e->sq, s->sq, (size_t)s->n * sizeof *e->sq);
        memcpy(e->cbar, cbar, (size_t)s->n * sizeof *e->cbar);
    }
    if (e->l)
        memcpy(e->h, h, (size_t)e->l * sizeof *e->h);
    *out = e;
    return KM_OK;
}

double km_mtl_estimate_eval(const km_mtl_estimate *e, const int32_t *index,
                            const double *value, int64_t nnz)
{
    const km_problem *X = e->X;
    double sq = sqnorm(value, nnz), alpha = e->param.alpha, gbar = 0, gt = 0;
    for (int64_t i = 0; i < X->l && alpha > 0; i++) {
        int64_t a = X->row_ptr[i];
        gbar += e->cbar[i] * km_kernel_eval(&e->param.K, X->index + a, X->value + a,
                                            X->row_ptr[i + 1] - a, e->sq[i], index, value, nnz,
                                            sq);
    }
    for (int64_t k = 0; k < e->l && alpha < 1; k++) {
        int64_t r = e->h[k], a = X->row_ptr[r];
        gt += e->c[k] * km_kernel_eval(&e->param.Kt, X->index + a, X->value + a,
                                       X->row_ptr[r + 1] - a, e->sq[r], index, value, nnz, sq);
    }
    return alpha * gbar + (1 - alpha) * gt;
}

static int id_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int km_mtl_model(km_mtl *s, const int64_t *tasks, int64_t ntasks, int32_t n, km_model **out,
                 km_error *err)
{
    *out = NULL;
    if (!tasks)
        ntasks = s->ntask;
    int64_t total = 0;
    int64_t *id = malloc((size_t)(ntasks + 1) * sizeof *id);
    int64_t *ptr = calloc((size_t)ntasks + 1, sizeof *ptr);
    for (int64_t t = 0; id && t < ntasks; t++) {
        id[t] = tasks ? tasks[t] : s->tasks[t].id;
        const mtl_task *T = task_find(s, id[t]);
        total += T ? T->l : 0;
    }
    int64_t *row = malloc((size_t)(total + 1) * sizeof *row);
    double *coef = malloc((size_t)(total + 1) * sizeof *coef);
    double *cb = malloc((size_t)(s->n + 1) * sizeof *cb);
    km_kernel *kern = malloc((size_t)(ntasks + 1) * sizeof *kern);
    km_problem *sv = rows_copy(s, 0);
    km_model *m = NULL;
    int rc = !id || !ptr || !row || !coef || !cb || !kern || !sv
             ? km_error_nomem(err, "mtl model") : KM_OK;
    if (!rc)
        qsort(id, (size_t)ntasks, sizeof *id, id_cmp);
    for (int64_t t = 0; t < ntasks && !rc; t++)   /* K~_j of (5.3) */
        kern[t] = *km_mtl_task_kernel(&s->p, id[t]);
    for (int64_t t = 0; t < ntasks && !rc; t++) {
        const int64_t *h;
        const double *cbar;
        int64_t l;
        if (t && id[t] == id[t - 1])
            rc = km_error_set(err, KM_EUSAGE, "mtl model: task %lld twice", (long long)id[t]);
        else if (!(rc = km_mtl_task_coef(s, id[t], &h, coef + ptr[t], &l, &cbar, err))) {
            if (l)
                memcpy(row + ptr[t], h, (size_t)l * sizeof *row);
            ptr[t + 1] = ptr[t] + l;
            if (s->n)
                memcpy(cb, cbar, (size_t)s->n * sizeof *cb);
        }
    }
    if (!rc && !s->ntask && s->n) {   /* no task at all: cbar still */
        const int64_t *h;
        const double *cbar;
        int64_t l;
        if (!(rc = km_mtl_task_coef(s, INT64_MIN, &h, coef, &l, &cbar, err)))
            memcpy(cb, cbar, (size_t)s->n * sizeof *cb);
    }
    if (!rc && !(m = km_model_alloc(&km_kind_mtl, KM_LOSS_RLS, n, 0, 1, err)))
        rc = err ? err->code : KM_EINTERNAL;
    if (rc) {
        free(id);
        free(ptr);
        free(row);
        free(coef);
        free(cb);
        free(kern);
        km_problem_free(sv);
        return rc;
    }
    sv->n = n;
    rc = km_model_set_mtl(m, &s->p.K, &s->p.Kt, s->p.alpha, s->p.lambda, sv, cb, ntasks, id,
                          ptr, row, coef, kern, err);
    if (rc) {
        km_model_free(m);
        return rc;
    }
    *out = m;
    return KM_OK;
}

/* ---- snapshots (km_mtl_save, km_mtl_load) ----
 * "KMTKMTL1", then u64 unless said: alpha, lambda (f64), K and K~ (u32 type, f64 gamma,
 * f64 coef0, u32 degree each), ntk and ntk x (i64 task, kernel); version, n, nnz, nfeat,
 * npend, ntask; row_ptr[1..n]; nnz x u32 index; nnz x f64 value; L packed by rows
 * (n(n+1)/2 f64); D, ybar (n f64 each); H's lower triangle by columns; npend columns of V
 * (n f64 each) and npend f64 gammas; per task: i64 id, l, triples, l x h, l x f64 y,
 * l x f64 w, l x l f64 R (column-major). Sizes and orders are those of the state, so a
 * loaded state grows (ncap, task capacities) exactly as the saved one would have. */

#define SNAP_MAGIC "KMTKMTL1"

typedef struct snap_out {
    km_mtl_writer write;
    void *ctx;
    unsigned char buf[1 << 16];
    size_t len;
    int failed;
} snap_out;

static void so_flush(snap_out *o)
{
    if (o->len && !o->failed && o->write(o->ctx, o->buf, o->len))
        o->failed = 1;
    o->len = 0;
}

static void so_u64(snap_out *o, uint64_t v)
{
    if (o->len + 8 > sizeof o->buf)
        so_flush(o);
    for (int i = 0; i < 8; i++)
        o->buf[o->len++] = (unsigned char)(v >> (8 * i));
}

static void so_f64(snap_out *o, double x)
{
    uint64_t v;
    memcpy(&v, &x, sizeof v);
    so_u64(o, v);
}

static void so_f64s(snap_out *o, const double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        so_f64(o, x[i]);
}

static void so_kernel(snap_out *o, const km_kernel *k)
{
    so_u64(o, (uint64_t)k->type);
    so_f64(o, k->gamma);
    so_f64(o, k->coef0);
    so_u64(o, (uint64_t)k->degree);
}

int km_mtl_save(const km_mtl *s, km_mtl_writer write, void *ctx, km_error *err)
{
    if (s->tx.on)
        return km_error_set(err, KM_EINTERNAL, "mtl: a snapshot inside an open transaction");
    snap_out *o = malloc(sizeof *o);
    if (!o)
        return km_error_nomem(err, "mtl snapshot");
    o->write = write;
    o->ctx = ctx;
    o->len = 0;
    o->failed = 0;
    memcpy(o->buf, SNAP_MAGIC, 8);
    o->len = 8;
    so_f64(o, s->p.alpha);
    so_f64(o, s->p.lambda);
    so_kernel(o, &s->p.K);
    so_kernel(o, &s->p.Kt);
    so_u64(o, (uint64_t)s->p.ntk);
    for (int64_t k = 0; k < s->p.ntk; k++) {
        so_u64(o, (uint64_t)s->p.tk[k].task);
        so_kernel(o, &s->p.tk[k].kernel);
    }
    int64_t n = s->n, nnz = s->row_ptr[n];
    so_u64(o, (uint64_t)s->version);
    so_u64(o, (uint64_t)n);
    so_u64(o, (uint64_t)nnz);
    so_u64(o, (uint64_t)s->nfeat);
    so_u64(o, (uint64_t)s->npend);
    so_u64(o, (uint64_t)s->ntask);
    for (int64_t i = 1; i <= n; i++)
        so_u64(o, (uint64_t)s->row_ptr[i]);
    for (int64_t k = 0; k < nnz; k++)
        so_u64(o, (uint64_t)(uint32_t)s->index[k]);
    so_f64s(o, s->value, nnz);
    so_f64s(o, s->L, (int64_t)packed(n));
    so_f64s(o, s->D, n);
    so_f64s(o, s->ybar, n);
    for (int64_t j = 0; j < n; j++)
        so_f64s(o, s->H + j * s->ncap + j, n - j);
    for (int k = 0; k < s->npend; k++)
        so_f64s(o, s->V + k * s->ncap, n);
    so_f64s(o, s->gam, s->npend);
    for (int64_t t = 0; t < s->ntask && !o->failed; t++) {
        const mtl_task *T = &s->tasks[t];
        so_u64(o, (uint64_t)T->id);
        so_u64(o, (uint64_t)T->l);
        so_u64(o, (uint64_t)T->triples);
        for (int64_t k = 0; k < T->l; k++)
            so_u64(o, (uint64_t)T->h[k]);
        so_f64s(o, T->y, T->l);
        so_f64s(o, T->w, T->l);
        for (int64_t j = 0; j < T->l; j++)
            so_f64s(o, T->R + j * T->cap, T->l);
    }
    so_flush(o);
    int failed = o->failed;
    free(o);
    return failed ? km_error_set(err, KM_EINPUT, "mtl snapshot: write failed") : KM_OK;
}

typedef struct snap_in {
    const unsigned char *p, *end;
    int bad;
} snap_in;

static uint64_t si_u64(snap_in *r)
{
    if (r->end - r->p < 8) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    return v;
}

static double si_f64(snap_in *r)
{
    uint64_t v = si_u64(r);
    double x;
    memcpy(&x, &v, sizeof x);
    return x;
}

/* A count of items of `size` bytes each that the rest of the input can hold; -1 if not. */
static int64_t si_count(snap_in *r, uint64_t v, size_t size)
{
    if (r->bad || v > (uint64_t)(r->end - r->p) / size) {
        r->bad = 1;
        return -1;
    }
    return (int64_t)v;
}

static void si_f64s(snap_in *r, double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = si_f64(r);
}

static int si_kernel_same(snap_in *r, const km_kernel *k)
{
    uint64_t type = si_u64(r);
    double g = si_f64(r), c = si_f64(r);
    uint64_t d = si_u64(r);
    return type == (uint64_t)k->type && !memcmp(&g, &k->gamma, sizeof g) &&
           !memcmp(&c, &k->coef0, sizeof c) && d == (uint64_t)k->degree;
}

km_mtl *km_mtl_load(const km_mtl_param *p, const unsigned char *buf, size_t len, size_t *used,
                    km_error *err)
{
    snap_in r = {buf, buf + len, 0};
    if (len < 8 || memcmp(buf, SNAP_MAGIC, 8)) {
        km_error_set(err, KM_EINPUT, "snapshot: not an mtl state");
        return NULL;
    }
    r.p += 8;
    double alpha = si_f64(&r), lambda = si_f64(&r);
    int same = !memcmp(&alpha, &p->alpha, sizeof alpha) &&
               !memcmp(&lambda, &p->lambda, sizeof lambda);
    same &= si_kernel_same(&r, &p->K);
    same &= si_kernel_same(&r, &p->Kt);
    same &= si_u64(&r) == (uint64_t)p->ntk;
    for (int64_t k = 0; same && k < p->ntk; k++) {
        same &= si_u64(&r) == (uint64_t)p->tk[k].task;
        same &= si_kernel_same(&r, &p->tk[k].kernel);
    }
    if (r.bad || !same) {
        km_error_set(err, KM_EINPUT, r.bad ? "snapshot: cut short" : "snapshot written with "
                     "other parameters");
        return NULL;
    }
    km_mtl *s = km_mtl_new(p, err);
    if (!s)
        return NULL;
    const char *why = NULL;
    int64_t version = (int64_t)si_u64(&r);
    int64_t n = si_count(&r, si_u64(&r), 3 * 8);           /* row_ptr, D, ybar at least */
    int64_t nnz = si_count(&r, si_u64(&r), 12);            /* index and value */
    uint64_t nfeat = si_u64(&r), npend = si_u64(&r);
    int64_t ntask = si_count(&r, si_u64(&r), 3 * 8);       /* id, l, triples */
    if (r.bad || version < 0 || nfeat > INT32_MAX || npend >= KM_MTL_BATCH ||
        (npend && !(p->alpha > 0)))
        why = "bad counts";
    else if (n && (uint64_t)n + 1 > (uint64_t)(r.end - r.p) / 8 / (uint64_t)n)
        why = "bad counts";   /* L and H alone take n (n + 1) doubles */
    if (!why && n && grow_inputs(s, n)) {
        km_mtl_free(s);
        km_error_nomem(err, "mtl snapshot");
        return NULL;
    }
    if (!why && nnz) {
        int64_t cap = 256;
        while (cap < nnz)
            cap *= 2;
        s->index = malloc((size_t)cap * sizeof *s->index);
        s->value = malloc((size_t)cap * sizeof *s->value);
        if (!s->index || !s->value) {
            km_mtl_free(s);
            km_error_nomem(err, "mtl snapshot");
            return NULL;
        }
        s->nzcap = cap;
    }
    s->row_ptr[0] = 0;
    for (int64_t i = 1; !why && i <= n; i++) {
        uint64_t v = si_u64(&r);
        if (v < (uint64_t)s->row_ptr[i - 1] || v > (uint64_t)nnz)
            why = "rows out of order";
        else
            s->row_ptr[i] = (int64_t)v;
    }
    if (!why && s->row_ptr[n] != nnz)
        why = "rows and entries disagree";
    for (int64_t k = 0; !why && k < nnz; k++) {
        uint64_t v = si_u64(&r);
        if (v > (uint64_t)INT32_MAX || v >= nfeat)
            why = "feature index out of range";
        else
            s->index[k] = (int32_t)v;
    }
    if (!why)
        si_f64s(&r, s->value, nnz);
    for (int64_t i = 0; !why && i < n; i++) {   /* the inputs as append_input leaves them */
        int64_t a = s->row_ptr[i], m = s->row_ptr[i + 1] - a;
        for (int64_t k = 0; k < m && !why; k++)
            if ((k && s->index[a + k] <= s->index[a + k - 1]) || !(s->value[a + k] != 0) ||
                !isfinite(s->value[a + k]))
                why = "an input not in canonical form";
        if (why)
            break;
        uint64_t hash = row_hash(s->index + a, s->value + a, m);
        if (find_input(s, s->index + a, s->value + a, m, hash) >= 0) {
            why = "an input twice";
            break;
        }
        int64_t prev = km_imap_get(&s->xmap, (int64_t)hash);
        if (km_imap_put(&s->xmap, (int64_t)hash, i)) {
            km_mtl_free(s);
            km_error_nomem(err, "mtl snapshot");
            return NULL;
        }
        s->xnext[i] = prev;
        s->xhash[i] = hash;
        s->sq[i] = sqnorm(s->value + a, m);
        s->n = i + 1;   /* find_input looks at rows 0..i */
    }
    if (!why) {
        s->nfeat = (int32_t)nfeat;
        si_f64s(&r, s->L, (int64_t)packed(n));
        si_f64s(&r, s->D, n);
        si_f64s(&r, s->ybar, n);
        for (int64_t j = 0; j < n; j++)
            si_f64s(&r, s->H + j * s->ncap + j, n - j);
        if (npend && (int64_t)npend > (int64_t)(r.end - r.p) / 8 / (n ? n : 1))
            r.bad = 1;
        for (int64_t k = 0; k < (int64_t)npend && !r.bad; k++)
            si_f64s(&r, s->V + k * s->ncap, n);
        si_f64s(&r, s->gam, (int64_t)npend);
        s->npend = (int)npend;
        if (r.bad)
            why = "cut short";
    }
    for (int64_t t = 0; !why && t < ntask; t++) {
        int64_t id = (int64_t)si_u64(&r);
        int64_t l = si_count(&r, si_u64(&r), 8 * 3);
        uint64_t triples = si_u64(&r);
        if (r.bad || (l && (uint64_t)l > (uint64_t)(r.end - r.p) / 8 / (uint64_t)l) ||
            (uint64_t)l > triples) {
            why = "bad task counts";
            break;
        }
        if (km_imap_get(&s->tmap, id) >= 0) {
            why = "a task twice";
            break;
        }
        mtl_task *T = task_get(s, id);
        if (!T || task_grow(T, l)) {
            km_mtl_free(s);
            km_error_nomem(err, "mtl snapshot");
            return NULL;
        }
        T->l = l;
        T->triples = (int64_t)triples;
        for (int64_t k = 0; k < l && !why; k++) {
            uint64_t h = si_u64(&r);
            if (h >= (uint64_t)n)
                why = "a task's input out of range";
            T->h[k] = (int64_t)h;
        }
        si_f64s(&r, T->y, l);
        si_f64s(&r, T->w, l);
        for (int64_t j = 0; j < l; j++)
            si_f64s(&r, T->R + j * T->cap, l);
        if (r.bad)
            why = "cut short";
    }
    if (!why && r.bad)
        why = "cut short";
    if (why) {
        km_mtl_free(s);
        km_error_set(err, KM_EINPUT, "snapshot: %s", why);
        return NULL;
    }
    s->version = version;
    s->view_version = -1;
    *used = (size_t)(r.p - buf);
    return s;
}
