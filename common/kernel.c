/* kernel.c - see kernel.h. Kernel values, blocks of them, and the kernel matrix with its row
 * cache (thesis ch. 2, section 1.6.1: rows computed on demand, kept while memory allows).
 *
 * Two ways to get the dot products x'y behind the kernels:
 *  - exact: the sum over the features x and y share, in increasing feature order, with one
 *    accumulator (plain multiply and add: the Makefile's -std=c11 keeps FMA contraction off).
 *    It is reached by merging two sparse rows (km_kernel_eval), by a scatter of x into a
 *    dense vector and a pass over y's non-zeros, or through the column copy of the row set
 *    (each feature of x adds its column into a chunk of results: sparse columns entry by
 *    entry, runs of dense columns with the sums in vector registers). Terms for absent
 *    features are exact zeros and change nothing, so all three give the same bits,
 *    symmetric in x and y, whatever the block shape or thread count. The kernel matrix uses only this path: its rows are the
 *    same bits from the cache, from a fresh computation or from the precomputed matrix.
 *  - dgemm: on the dense copies, for blocks of rows. Faster on dense data, but OpenBLAS sums
 *    in an order that depends on the call's shape and thread split (measured: the last row
 *    of a 3-row call differs from the same row in a 4-row call), so it agrees with the exact
 *    path to rounding only. km_kernel_block takes it when the dense work is cheaper.
 * Threads: OpenMP teams of the requested size; dgemm tiles run with OpenBLAS set to one
 * thread for the call (restored after), unless already inside an OpenMP parallel region.
 * A km_kmatrix serves one caller at a time; km_kernel_block may run in several OpenMP
 * threads at once.
 */
#include "kernel.h"

#include <sys/mman.h>
#include "simd.h"
#include "sizelimit.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- tuning constants, in one place (measured on a9a, w8a and ijcnn1 with RBF, 2 cores) ---- */

/* A column with at least this fraction of non-zero rows is also kept dense, and the exact
 * path adds it as one vectorised axpy (a9a: 14 such columns hold 57% of the non-zeros). */
#ifndef KM_DENSE_COLUMN
#define KM_DENSE_COLUMN 0.25
#endif
/* A dense copy of all columns (for dgemm) is made when nnz >= KM_DENSE_MIN_DENSITY m n, it
 * takes at most KM_DENSE_MAX_BYTES, and two rows share at least KM_DGEMM_MIN_OVERLAP n
 * features on average. km_kernel_block then takes dgemm when both sides have the copy and
 * at least KM_DGEMM_MIN_ROWS rows, and the exact path's work per kernel value (the shared
 * features, or a listed B row's non-zeros) is at least KM_DGEMM_MIN_OVERLAP times the
 * features dgemm multiplies. a9a shares 6.2 of 123 features per pair (the exact path is
 * 1.8x faster than dgemm), ijcnn1 12.1 of 22 (dgemm is 1.2x faster). */
#ifndef KM_DENSE_MIN_DENSITY
#define KM_DENSE_MIN_DENSITY 0.1
#endif
#ifndef KM_DENSE_MAX_BYTES
#define KM_DENSE_MAX_BYTES ((int64_t)1 << 30)
#endif
#ifndef KM_DGEMM_MIN_ROWS
#define KM_DGEMM_MIN_ROWS 16
#endif
#ifndef KM_DGEMM_MIN_OVERLAP
#define KM_DGEMM_MIN_OVERLAP 0.1
#endif
/* Rows gathered for one dgemm call take at most this many bytes per side. */
#ifndef KM_GATHER_BYTES
#define KM_GATHER_BYTES ((int64_t)8 << 20)
#endif
/* A matvec block of kernel values (rows x non-zero columns) takes at most this many bytes. */
#ifndef KM_MATVEC_BLOCK_BYTES
#define KM_MATVEC_BLOCK_BYTES ((int64_t)32 << 20)
#endif
/* The row cache always holds at least this many rows. */
#ifndef KM_CACHE_MIN_ROWS
#define KM_CACHE_MIN_ROWS 2
#endif
/* Scatter vectors and column copies exist for at most this many features (a double each,
 * per thread), and only when the data justify them (sizelimit.h); wider data merge sparse
 * rows. */
#ifndef KM_MAX_SCATTER
#define KM_MAX_SCATTER ((int32_t)1 << 23)
#endif
/* The column path computes a row in chunks of this many values (16 KB, in L1 while the A
 * row's columns add to them; 512 measured 4-15% slower), for A rows of at most
 * KM_CHUNK_FEATURES features. */
#ifndef KM_CHUNK
#define KM_CHUNK 2048
#endif
#ifndef KM_CHUNK_FEATURES
#define KM_CHUNK_FEATURES 64
#endif
/* km_kmatrix_axpy adds a row it does not keep through a buffer of this many values. */
#ifndef KM_AXPY_CHUNK
#define KM_AXPY_CHUNK 2048
#endif
/* Kernel values per thread below which a parallel region does not pay. */
#ifndef KM_PAR_MIN_WORK
#define KM_PAR_MIN_WORK 4096
#endif

struct km_kdata {
    const km_problem *P;
    int64_t m;
    int32_t n;
    int64_t nnz;
    int64_t *row;       /* m row numbers in P */
    double *sq;         /* m squared norms */
    int64_t *col_ptr;   /* column copy: n + 1 offsets, or NULL */
    int32_t *col_row;   /* nnz row numbers 0..m-1, increasing within a column */
    double *col_val;    /* nnz values */
    int32_t *dslot;     /* n: where column f is stored densely (dval + dslot[f] m), or -1;
                         * NULL when no column is */
    double *dval;       /* dense columns, m values each */
    double *dense;      /* n x m feature-major copy of all columns, when dgemm pays (then
                         * dval == dense and frequent columns have dslot[f] == f); or NULL */
};

struct km_kmatrix {
    km_kernel k;
    const km_kdata *X;
    int64_t m;
    int threads;
    double *diag;           /* m values k_ii */
    double *full;           /* m x m when all of K is kept, else NULL */
    int64_t nslots, used;   /* LRU cache: capacity, and slots handed out (some maybe free) */
    double *arena;          /* the cache's storage: slot s at arena + s ncols (touched as */
    int64_t arena_len;      /* rows are written, so memory grows as the cache fills) */
    int64_t *freel, nfree;  /* free slots below used */
    int64_t *slot_row;      /* row held by each slot (-1: none) */
    int64_t *slot_pass;     /* the pass in which each slot's row was last used */
    int64_t pass;           /* passes declared by km_kmatrix_pass (0: plain LRU) */
    int64_t *prev, *next;   /* doubly linked list of slots, most recently used first */
    int64_t head, tail;
    int64_t *where;         /* slot of row i, or -1 */
    double *work;           /* threads zero scatter vectors of work_len, when needed */
    int64_t work_len;
    int64_t *cols;          /* the columns rows are restricted to (increasing), or NULL: all */
    int64_t ncols;          /* their number (m when all) */
    km_kdata *Xc;           /* the rows of X listed in cols, for the column path */
    double *gather;         /* ncols values: a restricted row of the precomputed matrix */
    int64_t *acols, nacols; /* the columns of the last km_kmatrix_addmul, and their row set */
    km_kdata *Xa;
    int64_t served, computed, values;
};

/* ---- small helpers ---- */

/* malloc of count * size bytes with overflow check; NULL on overflow or failure. */
static void *alloc_n(int64_t count, size_t size, int zero)
{
    size_t bytes;
    if (count < 0 || __builtin_mul_overflow((size_t)count, size, &bytes))
        return NULL;
    if (bytes == 0)
        bytes = 1;
    return zero ? calloc(1, bytes) : malloc(bytes);
}

/* alloc_n for the big arrays (the cache, the whole K): asks for transparent huge pages
 * over them (MADV_HUGEPAGE; this machine type has THP on madvise), so that filling 200 MB
 * of rows takes 100 page faults instead of 51,200 (measured: sys time 0.12 -> 0.0x s on
 * the dense set). Freed with free(). */
static void *alloc_big(int64_t count, size_t size)
{
    void *p = alloc_n(count, size, 0);
#ifdef MADV_HUGEPAGE
    size_t bytes = (size_t)count * size, huge = (size_t)2 << 20;
    if (p && bytes >= 2 * huge) {
        uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
        uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)(huge - 1);
        if (e > a)
            madvise((void *)a, e - a, MADV_HUGEPAGE);   /* advice: failure changes nothing */
    }
#endif
    return p;
}

/* Number of threads to use for work units of given total size. */
static int pick_threads(int threads, int64_t work)
{
    if (threads < 1)
        return 1;
    int64_t most = work / KM_PAR_MIN_WORK;
    if (most < 1)
        most = 1;
    return most < threads ? (int)most : threads;
}

/* Whether the kernel is a function of x'y (and the norms) only. */
static int dot_based(km_kernel_type t)
{
    return t != KM_KERNEL_LAPLACIAN && t != KM_KERNEL_SPLINE && t != KM_KERNEL_PRECOMPUTED;
}

/* x^d for d >= 1 by repeated squaring (as LIBSVM's powi). */
static inline double powi(double x, int d)
{
    double r = 1;
    for (; d > 0; d >>= 1) {
        if (d & 1)
            r *= x;
        x *= x;
    }
    return r;
}

/* exp(x) for -708 <= x <= 709 (callers send the rest to libm): x = k ln2 + r, |r| <= ln2/2,
 * exp(r) by its degree-13 Taylor polynomial (terms of degree 5 and up in parallel, Estrin's
 * way, the first five by Horner's rule for accuracy), times 2^k built in the exponent bits.
 * Within 2 ulp of libm's exp, 1.2 ns a value vectorised (libm: 5.4 ns). Plain double
 * operations only, so a vector lane gives the bits of a scalar call (the Makefile's -std=c11
 * keeps FMA contraction off). */
static inline double exp_core(double x)
{
    const double shift = 0x1.8p52, log2e = 0x1.71547652b82fep0;
    const double ln2hi = 0x1.62e42fefa3800p-1, ln2lo = 0x1.ef35793c76730p-45;
    double t = x * log2e + shift, kf = t - shift;
    double r = x - kf * ln2hi - kf * ln2lo, r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    double q0 = 1.0 / 120 + r * (1.0 / 720), q1 = 1.0 / 5040 + r * (1.0 / 40320);
    double q2 = 1.0 / 362880 + r * (1.0 / 3628800), q3 = 1.0 / 39916800 + r * (1.0 / 479001600);
    double p = (q0 + r2 * q1) + r4 * (q2 + r2 * q3) + r8 * (1.0 / 6227020800.0);
    p = 1.0 / 24 + r * p;
    p = 1.0 / 6 + r * p;
    p = 0.5 + r * p;
    p = 1.0 + r * p;
    p = 1.0 + r * p;
    uint64_t u;
    double scale;
    memcpy(&u, &t, sizeof u);   /* the low bits of t hold k */
    u = (u + 1023) << 52;
    memcpy(&scale, &u, sizeof u);
    return p * scale;
}

/* Whether exp_core covers x. */
static inline int exp_in_range(double x)
{
    return x >= -708.0 && x <= 709.0;
}

/* exp(x) of the kernels: exp_core in its range, libm outside it (underflow, overflow, NaN). */
static inline double km_exp(double x)
{
    return exp_in_range(x) ? exp_core(x) : exp(x);
}

/* The exponent of the Gaussian RBF, -gamma ||x - y||^2 from the dot product and squared
 * norms, the distance clamped at 0. */
static inline double rbf_arg(double gamma, double dot, double sqx, double sqy)
{
    double d = sqx + sqy - 2 * dot;
    return -gamma * (d < 0 ? 0 : d);
}

/* y[i] = km_exp(arg[i]) for i < len <= 256, vectorised. */
static inline __attribute__((always_inline)) void exp_block(double *y, const double *arg,
                                                            int64_t len)
{
    double lo = 0, hi = 0, nan = 0;
    #pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : nan)
    for (int64_t i = 0; i < len; i++) {
        lo = arg[i] < lo ? arg[i] : lo;
        hi = arg[i] > hi ? arg[i] : hi;
        nan += arg[i] - arg[i];   /* NaN if any input is NaN or infinite */
        y[i] = exp_core(arg[i]);
    }
    if (!exp_in_range(lo) || !exp_in_range(hi) || nan != 0)
        for (int64_t i = 0; i < len; i++)
            if (!exp_in_range(arg[i]))
                y[i] = exp(arg[i]);
}

/* x[i] = km_exp(x[i]) for i < n, vectorised (clones for AVX-512 and AVX2). */
KM_VECTOR_CLONES
static void exp_inplace(double *x, int64_t n)
{
    double arg[256];
    for (int64_t i0 = 0; i0 < n; i0 += 256) {
        int64_t len = n - i0 < 256 ? n - i0 : 256;
        memcpy(arg, x + i0, (size_t)len * sizeof *arg);
        exp_block(x + i0, arg, len);
    }
}

/* x[i] = km_exp(rbf_arg(gamma, x[i], sqa, sq[i])) for i < n: dot products to RBF values in
 * one vectorised pass. */
KM_VECTOR_CLONES
static void rbf_inplace(double *x, int64_t n, double gamma, double sqa, const double *sq)
{
    double arg[256];
    for (int64_t i0 = 0; i0 < n; i0 += 256) {
        int64_t len = n - i0 < 256 ? n - i0 : 256;
        #pragma omp simd
        for (int64_t i = 0; i < len; i++)
            arg[i] = rbf_arg(gamma, x[i0 + i], sqa, sq[i0 + i]);
        exp_block(x + i0, arg, len);
    }
}

/* The value of a dot-based kernel from x'y and the squared norms: the one transform. */
static inline double transform1(const km_kernel *k, double dot, double sqx, double sqy)
{
    switch (k->type) {
    case KM_KERNEL_POLY: return powi(k->gamma * dot + k->coef0, k->degree);
    case KM_KERNEL_RBF: return km_exp(rbf_arg(k->gamma, dot, sqx, sqy));
    case KM_KERNEL_SIGMOID: return tanh(k->gamma * dot + k->coef0);
    case KM_KERNEL_EXPDOT: return km_exp(k->gamma * dot);
    default: return dot;
    }
}

/* Applies transform1 to out[0..cnt) = dots of A row (norm sqa) with B rows ib[b0..b0+cnt)
 * (the same operations as transform1, vectorised). */
static void transform_row(const km_kernel *k, double *out, int64_t cnt, double sqa,
                          const km_kdata *B, const int64_t *ib, int64_t b0)
{
    const double g = k->gamma, c0 = k->coef0, *sq = B->sq;
    switch (k->type) {
    case KM_KERNEL_POLY:
        for (int64_t b = 0; b < cnt; b++)
            out[b] = powi(g * out[b] + c0, k->degree);
        break;
    case KM_KERNEL_RBF:
        if (ib) {
            for (int64_t b = 0; b < cnt; b++)
                out[b] = rbf_arg(g, out[b], sqa, sq[ib[b0 + b]]);
            exp_inplace(out, cnt);
        } else {
            rbf_inplace(out, cnt, g, sqa, sq + b0);
        }
        break;
    case KM_KERNEL_SIGMOID:
        for (int64_t b = 0; b < cnt; b++)
            out[b] = tanh(g * out[b] + c0);
        break;
    case KM_KERNEL_EXPDOT:
        #pragma omp simd
        for (int64_t b = 0; b < cnt; b++)
            out[b] = g * out[b];
        exp_inplace(out, cnt);
        break;
    default:
        break;
    }
}

/* x'y of two sparse rows by merging, summed in increasing feature order. */
static double dot_merge(const int32_t *ix, const double *vx, int64_t nx, const int32_t *iy,
                        const double *vy, int64_t ny)
{
    double s = 0;
    int64_t p = 0, q = 0;
    while (p < nx && q < ny) {
        if (ix[p] == iy[q])
            s += vx[p++] * vy[q++];
        else if (ix[p] < iy[q])
            p++;
        else
            q++;
    }
    return s;
}

/* ||x - y||_1 of two sparse rows by merging, summed in increasing feature order. */
static double l1_merge(const int32_t *ix, const double *vx, int64_t nx, const int32_t *iy,
                       const double *vy, int64_t ny)
{
    double s = 0;
    int64_t p = 0, q = 0;
    while (p < nx || q < ny) {
        if (q == ny || (p < nx && ix[p] < iy[q]))
            s += fabs(vx[p++]);
        else if (p == nx || iy[q] < ix[p])
            s += fabs(vy[q++]);
        else {
            s += fabs(vx[p] - vy[q]);
            p++;
            q++;
        }
    }
    return s;
}

/* The 1-D input of the spline kernel: feature 0, or 0 when absent. */
static inline double first_value(const int32_t *ix, const double *vx, int64_t nx)
{
    return nx > 0 && ix[0] == 0 ? vx[0] : 0;
}

/* 1 + min(x, y) (thesis 5.5). */
static inline double spline_value(double x, double y)
{
    return 1 + (x < y ? x : y);
}

/* The value of row r of P at 0-based column col (0 when the row has none): direct when the
 * row holds columns 0..col in order (the reader's precomputed rows), else by search. */
static double row_at(const km_problem *P, int64_t r, int64_t col)
{
    int64_t p = P->row_ptr[r], e = P->row_ptr[r + 1];
    if (col < e - p && P->index[p + col] == col)
        return P->value[p + col];
    while (p < e) {
        int64_t mid = p + (e - p) / 2;
        if (P->index[mid] < col)
            p = mid + 1;
        else
            e = mid;
    }
    return p < P->row_ptr[r + 1] && P->index[p] == col ? P->value[p] : 0;
}

/* The precomputed K(row ra of PA, row rb of PB): the value at the other's serial number in
 * the row of the smaller one (symmetric by construction; a row without one, a test row,
 * gives its value at the column of rb). PB has serial numbers. */
static inline double precomputed_value(const km_problem *PA, int64_t ra, const km_problem *PB,
                                       int64_t rb)
{
    int64_t ia = PA->id ? PA->id[ra] : 0, ib = PB->id[rb];
    return ia > ib ? row_at(PB, rb, ia - 1) : row_at(PA, ra, ib - 1);
}

/* KM_EUSAGE unless the rows of P have serial numbers when k is precomputed. */
static int check_ids(const km_kernel *k, const km_problem *P, km_error *err)
{
    if (k->type == KM_KERNEL_PRECOMPUTED && !P->id)
        return km_error_set(err, KM_EUSAGE, "precomputed kernel: the rows have no serial "
                            "numbers (0:ID, read with -t precomputed)");
    return KM_OK;
}

/* ---- names and checks ---- */

static const char *const kernel_names[KM_KERNEL_PRECOMPUTED + 1] = {
    "linear", "poly", "rbf", "sigmoid", "laplacian", "expdot", "spline", "precomputed"};

int km_kernel_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int t = 0; t <= KM_KERNEL_PRECOMPUTED; t++)
        if (strcasecmp(name, kernel_names[t]) == 0)
            return t;
    if (strcasecmp(name, "polynomial") == 0)
        return KM_KERNEL_POLY;
    if (name[0] >= '0' && name[0] <= '3' && name[1] == '\0')   /* svm-train -t 0..3 */
        return name[0] - '0';
    if (strcmp(name, "4") == 0)   /* -t 4 */
        return KM_KERNEL_PRECOMPUTED;
    return -1;
}

const char *km_kernel_name(km_kernel_type type)
{
    return (int)type >= 0 && type <= KM_KERNEL_PRECOMPUTED ? kernel_names[type] : "unknown";
}

int km_kernel_check(const km_kernel *k, int32_t n, km_error *err)
{
    if ((int)k->type < 0 || k->type > KM_KERNEL_PRECOMPUTED)
        return km_error_set(err, KM_EUSAGE, "unknown kernel type %d", (int)k->type);
    const char *name = kernel_names[k->type];
    int uses_gamma = k->type != KM_KERNEL_LINEAR && k->type != KM_KERNEL_SPLINE &&
                     k->type != KM_KERNEL_PRECOMPUTED;
    if (uses_gamma && !(k->gamma > 0 && isfinite(k->gamma)))
        return km_error_set(err, KM_EUSAGE, "%s kernel: gamma must be a positive number (got %g)",
                            name, k->gamma);
    if ((k->type == KM_KERNEL_POLY || k->type == KM_KERNEL_SIGMOID) && !isfinite(k->coef0))
        return km_error_set(err, KM_EUSAGE, "%s kernel: coef0 must be finite", name);
    if (k->type == KM_KERNEL_POLY && k->degree < 1)
        return km_error_set(err, KM_EUSAGE, "poly kernel: degree must be at least 1 (got %d)",
                            k->degree);
    if (k->type == KM_KERNEL_SPLINE && n > 1)
        return km_error_set(err, KM_EUSAGE, "spline kernel: needs 1-D inputs, the data have %d "
                            "features", (int)n);
    return KM_OK;
}

double km_kernel_eval(const km_kernel *k, const int32_t *ix, const double *vx, int64_t nx,
                      double sqx, const int32_t *iy, const double *vy, int64_t ny, double sqy)
{
    double v;
    switch (k->type) {
    case KM_KERNEL_LAPLACIAN: v = km_exp(-k->gamma * l1_merge(ix, vx, nx, iy, vy, ny)); break;
    case KM_KERNEL_SPLINE: v = spline_value(first_value(ix, vx, nx), first_value(iy, vy, ny));
        break;
    default: v = transform1(k, dot_merge(ix, vx, nx, iy, vy, ny), sqx, sqy); break;
    }
    return v + k->offset;   /* K + b^2 (0: none; x + 0 is x) */
}

/* out[0..n) += the kernel's offset (K + b^2), when it has one. */
static void add_offset(const km_kernel *k, double *out, int64_t n)
{
    if (k->offset != 0)
        for (int64_t b = 0; b < n; b++)
            out[b] += k->offset;
}

/* One column of a kernel on a single feature: out[a] = K(x[a], y), each value a one-entry
 * row (0: the entry missing), as km_kernel_eval computes it; vectorised (clones). */
KM_VECTOR_CLONES
static void column_1d(const km_kernel *k, const double *x, int64_t n, double y, double *out)
{
    double arg[256];
    const double g = k->gamma, sqy = y * y;
    for (int64_t i0 = 0; i0 < n; i0 += 256) {
        int64_t len = n - i0 < 256 ? n - i0 : 256;
        const double *xs = x + i0;
        switch (k->type) {
        case KM_KERNEL_RBF:
            #pragma omp simd
            for (int64_t a = 0; a < len; a++)
                arg[a] = rbf_arg(g, 0.0 + xs[a] * y, xs[a] * xs[a], sqy);
            break;
        case KM_KERNEL_LAPLACIAN:
            #pragma omp simd
            for (int64_t a = 0; a < len; a++)
                arg[a] = -g * (0.0 + fabs(xs[a] - y));
            break;
        default: /* KM_KERNEL_EXPDOT */
            #pragma omp simd
            for (int64_t a = 0; a < len; a++)
                arg[a] = g * (0.0 + xs[a] * y);
            break;
        }
        /* exp underflows to +0 below ln(2^-1075) ~ -745.13: libm's slow path skipped */
        unsigned char zero[256];
        #pragma omp simd
        for (int64_t a = 0; a < len; a++) {
            zero[a] = arg[a] < -746.0;
            arg[a] = zero[a] ? 0 : arg[a];
        }
        exp_block(out + i0, arg, len);
        #pragma omp simd
        for (int64_t a = 0; a < len; a++)
            out[i0 + a] = zero[a] ? 0 : out[i0 + a];
    }
}

static void kernel_1d(const km_kernel *k, const double *x, int64_t n, double y, double *out);

void km_kernel_1d(const km_kernel *k, const double *x, int64_t n, double y, double *out)
{
    kernel_1d(k, x, n, y, out);
    add_offset(k, out, n);
}

static void kernel_1d(const km_kernel *k, const double *x, int64_t n, double y, double *out)
{
    switch (k->type) {
    case KM_KERNEL_RBF:
    case KM_KERNEL_LAPLACIAN:
    case KM_KERNEL_EXPDOT:
        column_1d(k, x, n, y, out);
        return;
    case KM_KERNEL_SPLINE:
        for (int64_t a = 0; a < n; a++)
            out[a] = spline_value(x[a], y);
        return;
    default:
        for (int64_t a = 0; a < n; a++)
            out[a] = transform1(k, 0.0 + x[a] * y, x[a] * x[a], y * y);
        return;
    }
}

/* ---- row sets ---- */

/* Builds the column copy of d (CSC over its rows); leaves it NULL if memory is short. */
static void kdata_columns(km_kdata *d)
{
    const km_problem *P = d->P;
    if (d->m > INT32_MAX || d->n > KM_MAX_SCATTER || !km_dense_ok(d->n, d->nnz))
        return;
    d->col_ptr = alloc_n((int64_t)d->n + 1, sizeof *d->col_ptr, 1);
    d->col_row = alloc_n(d->nnz, sizeof *d->col_row, 0);
    d->col_val = alloc_n(d->nnz, sizeof *d->col_val, 0);
    if (!d->col_ptr || !d->col_row || !d->col_val) {
        free(d->col_ptr);
        free(d->col_row);
        free(d->col_val);
        d->col_ptr = NULL;
        d->col_row = NULL;
        d->col_val = NULL;
        return;
    }
    for (int64_t i = 0; i < d->m; i++)
        for (int64_t t = P->row_ptr[d->row[i]]; t < P->row_ptr[d->row[i] + 1]; t++)
            d->col_ptr[P->index[t] + 1]++;
    for (int32_t f = 0; f < d->n; f++)
        d->col_ptr[f + 1] += d->col_ptr[f];
    for (int64_t i = 0; i < d->m; i++)   /* col_ptr[f] runs ahead as column f fills ... */
        for (int64_t t = P->row_ptr[d->row[i]]; t < P->row_ptr[d->row[i] + 1]; t++) {
            int64_t q = d->col_ptr[P->index[t]]++;
            d->col_row[q] = (int32_t)i;
            d->col_val[q] = P->value[t];
        }
    for (int32_t f = d->n; f > 0; f--)   /* ... and is shifted back after */
        d->col_ptr[f] = d->col_ptr[f - 1];
    d->col_ptr[0] = 0;
}

/* Average number of features two rows of d share (from the column counts). */
static double self_overlap(const km_kdata *d)
{
    double s = 0;
    for (int32_t f = 0; f < d->n; f++)
        s += (double)(d->col_ptr[f + 1] - d->col_ptr[f]) * (double)(d->col_ptr[f + 1] - d->col_ptr[f]);
    return d->m > 0 ? s / ((double)d->m * (double)d->m) : 0;
}

/* Keeps the frequent columns of d dense (all columns when dgemm pays); nothing if memory is
 * short. Needs the column copy. */
static void kdata_dense(km_kdata *d)
{
    int64_t cells, dmin = (int64_t)(KM_DENSE_COLUMN * (double)d->m), nd = 0;
    dmin = dmin < 1 ? 1 : dmin;
    if (!d->col_ptr || d->m == 0 || d->n == 0 || d->m > INT_MAX)
        return;
    for (int32_t f = 0; f < d->n; f++)
        nd += d->col_ptr[f + 1] - d->col_ptr[f] >= dmin;
    int all = !__builtin_mul_overflow(d->m, (int64_t)d->n, &cells) &&
              cells <= KM_DENSE_MAX_BYTES / (int64_t)sizeof(double) &&
              (double)d->nnz >= KM_DENSE_MIN_DENSITY * (double)cells &&
              self_overlap(d) >= KM_DGEMM_MIN_OVERLAP * (double)d->n;
    if (!all && (nd == 0 || nd * d->m > KM_DENSE_MAX_BYTES / (int64_t)sizeof(double)))
        return;
    d->dslot = alloc_n(d->n, sizeof *d->dslot, 0);
    d->dval = alloc_n((all ? d->n : nd) * d->m, sizeof *d->dval, 1);
    if (!d->dslot || !d->dval) {
        free(d->dslot);
        free(d->dval);
        d->dslot = NULL;
        d->dval = NULL;
        return;
    }
    int32_t next = 0;
    for (int32_t f = 0; f < d->n; f++) {
        int64_t p = d->col_ptr[f], e = d->col_ptr[f + 1];
        int frequent = e - p >= dmin;   /* added as an axpy; the others through entries */
        d->dslot[f] = !frequent ? -1 : all ? f : next++;
        if (!all && !frequent)
            continue;
        double *col = d->dval + (int64_t)(all ? f : d->dslot[f]) * d->m;
        for (; p < e; p++)
            col[d->col_row[p]] = d->col_val[p];
    }
    d->dense = all ? d->dval : NULL;
}

km_kdata *km_kdata_new(const km_problem *P, const int64_t *rows, int64_t m, km_error *err)
{
    if (!P || m < 0 || (!rows && m > P->l)) {
        km_error_set(err, KM_EUSAGE, "kernel data: %lld rows requested of %lld",
                     (long long)m, P ? (long long)P->l : 0LL);
        return NULL;
    }
    for (int64_t i = 0; rows && i < m; i++)
        if (rows[i] < 0 || rows[i] >= P->l) {
            km_error_set(err, KM_EUSAGE, "kernel data: row %lld out of range 0..%lld",
                         (long long)rows[i], (long long)P->l - 1);
            return NULL;
        }
    km_kdata *d = calloc(1, sizeof *d);
    if (!d || !(d->row = alloc_n(m, sizeof *d->row, 0)) || !(d->sq = alloc_n(m, sizeof *d->sq, 0))) {
        km_kdata_free(d);
        km_error_nomem(err, "kernel data");
        return NULL;
    }
    d->P = P;
    d->m = m;
    d->n = P->n > 0 ? P->n : 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t r = rows ? rows[i] : i;
        double s = 0;
        for (int64_t t = P->row_ptr[r]; t < P->row_ptr[r + 1]; t++)
            s += P->value[t] * P->value[t];
        d->row[i] = r;
        d->sq[i] = s;
        d->nnz += P->row_ptr[r + 1] - P->row_ptr[r];
    }
    if (!P->id) {   /* precomputed kernel rows are looked up, never multiplied */
        kdata_columns(d);
        kdata_dense(d);
    }
    return d;
}

void km_kdata_free(km_kdata *d)
{
    if (!d)
        return;
    free(d->row);
    free(d->sq);
    free(d->dval);
    free(d->dslot);
    free(d->col_ptr);
    free(d->col_row);
    free(d->col_val);
    free(d);
}

int64_t km_kdata_size(const km_kdata *d)
{
    return d->m;
}

int km_kdata_dense(const km_kdata *d)
{
    return d->dense != NULL;
}

int64_t km_kdata_row(const km_kdata *d, int64_t i, const int32_t **index, const double **value)
{
    const km_problem *P = d->P;
    int64_t r = d->row[i], s = P->row_ptr[r];
    *index = P->index + s;
    *value = P->value + s;
    return P->row_ptr[r + 1] - s;
}

int32_t km_kdata_features(const km_kdata *d)
{
    return d->n;
}

/* ---- the exact path: one A row against a range of B rows ---- */

/* Whether dots of A rows with these B rows go through a scatter vector (B has no column
 * copy, or B's rows come as a list). */
static int needs_scatter(const km_kernel *k, const km_kdata *B, const int64_t *ib)
{
    return dot_based(k->type) && (ib || !B->col_ptr);
}

/* Length of the scatter vectors for A rows against B rows; 0 when too long to have. */
static int64_t scatter_len(const km_kdata *A, const km_kdata *B)
{
    int64_t n = A->n > B->n ? A->n : B->n;
    return n > KM_MAX_SCATTER || !km_dense_ok(n, A->nnz + B->nnz) ? 0 : n > 0 ? n : 1;
}

/* First position p in [lo, hi) of an increasing array with v[p] >= key (hi if none). */
#define KM_LOWER_BOUND(v, lo, hi, key)              \
    do {                                            \
        while (lo < hi) {                           \
            int64_t mid_ = lo + (hi - lo) / 2;      \
            if (v[mid_] < key)                      \
                lo = mid_ + 1;                      \
            else                                    \
                hi = mid_;                          \
        }                                           \
    } while (0)

static int64_t lower_bound32(const int32_t *v, int64_t lo, int64_t hi, int64_t key)
{
    KM_LOWER_BOUND(v, lo, hi, key);
    return lo;
}

static int64_t lower_bound64(const int64_t *v, int64_t lo, int64_t hi, int64_t key)
{
    KM_LOWER_BOUND(v, lo, hi, key);
    return lo;
}

/* y[i] += a x[i] for i < n, vectorised (one multiply and one add per element). */
KM_VECTOR_CLONES
static void axpy(double a, const double *restrict x, double *restrict y, int64_t n)
{
    #pragma omp simd
    for (int64_t i = 0; i < n; i++)
        y[i] += a * x[i];
}

/* o[b] += v[0] col[0][c0 + b], then v[1] col[1][c0 + b], ... for b < len: a run of dense
 * columns added in order with 16 sums at a time in registers (the bits of one axpy per
 * column, a third of the loads and stores, independent chains of additions). The sums are
 * GCC vectors (element-wise IEEE operations, the bits of the scalar ones) as wide as the
 * machine's registers: 8 doubles for AVX-512, 4 for AVX2 (a 64-byte vector there goes
 * through the stack: measured 5x slower), loaded and stored unaligned by memcpy. */
typedef double kv8 __attribute__((vector_size(64)));
typedef double kv4 __attribute__((vector_size(32)));

#define KM_DENSE_RUN_BODY(V, LANES)                                                       \
    int64_t b = 0;                                                                         \
    for (; b + 16 <= len; b += 16) {                                                       \
        V a[16 / LANES], x;                                                                \
        memcpy(a, o + b, sizeof a);                                                        \
        for (int q = 0; q < nq; q++) {                                                     \
            const double *c = col[q] + c0 + b, w = v[q];                                   \
            V s;                                                                           \
            for (int u = 0; u < LANES; u++)                                                \
                s[u] = w;                                                                  \
            for (int u = 0; u < 16 / LANES; u++) {                                         \
                memcpy(&x, c + u * LANES, sizeof x);                                       \
                a[u] += s * x;                                                             \
            }                                                                              \
        }                                                                                  \
        memcpy(o + b, a, sizeof a);                                                        \
    }                                                                                      \
    for (; b < len; b++) {                                                                 \
        double acc = o[b];                                                                 \
        for (int q = 0; q < nq; q++)                                                       \
            acc += v[q] * col[q][c0 + b];                                                  \
        o[b] = acc;                                                                        \
    }

typedef void dense_run_fn(double *restrict o, int64_t len, const double *const *col,
                          const double *v, int nq, int64_t c0);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(KM_NO_AVX512)
__attribute__((target("arch=x86-64-v4")))
static void dense_run8(double *restrict o, int64_t len, const double *const *col,
                       const double *v, int nq, int64_t c0)
{
    KM_DENSE_RUN_BODY(kv8, 8)
}
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target("avx2")))
static void dense_run4(double *restrict o, int64_t len, const double *const *col,
                       const double *v, int nq, int64_t c0)
{
    KM_DENSE_RUN_BODY(kv4, 4)
}
#endif

static void dense_run_base(double *restrict o, int64_t len, const double *const *col,
                           const double *v, int nq, int64_t c0)
{
    KM_DENSE_RUN_BODY(kv4, 4)
}

/* The widest of the three the CPU runs (AVX-512 not under KM_NO_AVX512; see simd.h). */
static void dense_run(double *restrict o, int64_t len, const double *const *col,
                      const double *v, int nq, int64_t c0)
{
    static dense_run_fn *fn;
    dense_run_fn *f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
    if (!f) {
        f = dense_run_base;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2"))
            f = dense_run4;
#ifndef KM_NO_AVX512
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
            f = dense_run8;
#endif
#endif
        __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
    }
    f(o, len, col, v, nq, c0);
}

/* Kernel values of A row a with B rows [j0, j1) through B's columns: each feature of the A
 * row, in increasing order, adds its column into the rows that have it (a dense column as
 * one axpy); then the transform. Costs the features a pair shares (a9a: 6.2 per pair, w8a:
 * 1.3) where a pass over B's rows costs their non-zeros (a9a: 13.9, w8a: 11.7). The rows
 * go in chunks of KM_CHUNK values (kept in L1 while every column adds to them, runs of
 * dense columns summed in registers, and the transform runs) when the A row has at most
 * KM_CHUNK_FEATURES features. */
static void values_columns(const km_kernel *k, const km_kdata *A, int64_t a, const km_kdata *B,
                           int64_t j0, int64_t j1, double *out)
{
    const km_problem *P = A->P;
    const int64_t *cp = B->col_ptr;
    const int32_t *cr = B->col_row;
    const double *cv = B->col_val;
    int64_t t0 = P->row_ptr[A->row[a]], t1 = P->row_ptr[A->row[a] + 1];
    int64_t cur[KM_CHUNK_FEATURES], end[KM_CHUNK_FEATURES];
    const double *dcol[KM_CHUNK_FEATURES];
    double val[KM_CHUNK_FEATURES];
    int nf = 0;
    if (t1 - t0 <= KM_CHUNK_FEATURES) {   /* the row's columns: dense, or a range of entries */
        for (int64_t t = t0; t < t1 && P->index[t] < B->n; t++, nf++) {
            int32_t f = P->index[t];
            val[nf] = P->value[t];
            dcol[nf] = B->dslot && B->dslot[f] >= 0 ? B->dval + (int64_t)B->dslot[f] * B->m : NULL;
            cur[nf] = cp[f];
            end[nf] = cp[f + 1];
            if (!dcol[nf] && j0 > 0)
                cur[nf] = lower_bound32(cr, cur[nf], end[nf], j0);
        }
        for (int64_t c0 = j0; c0 < j1; c0 += KM_CHUNK) {
            int64_t c1 = j1 - c0 < KM_CHUNK ? j1 : c0 + KM_CHUNK;
            double *o = out + (c0 - j0);
            memset(o, 0, (size_t)(c1 - c0) * sizeof *o);
            for (int q = 0; q < nf; q++) {
                if (dcol[q]) {   /* a run of dense columns */
                    int r = q + 1;
                    while (r < nf && dcol[r])
                        r++;
                    dense_run(o, c1 - c0, dcol + q, val + q, r - q, c0);
                    q = r - 1;
                    continue;
                }
                int64_t p = cur[q], e = end[q];
                double v = val[q];
                for (; p < e && cr[p] < c1; p++)
                    o[cr[p] - c0] += v * cv[p];
                cur[q] = p;
            }
            transform_row(k, o, c1 - c0, A->sq[a], B, NULL, c0);
        }
        return;
    }
    memset(out, 0, (size_t)(j1 - j0) * sizeof *out);
    for (int64_t t = t0; t < t1; t++) {
        int32_t f = P->index[t];
        if (f >= B->n)
            break;
        double v = P->value[t];
        int64_t p = cp[f], e = cp[f + 1];
        if (B->dslot && B->dslot[f] >= 0) {
            axpy(v, B->dval + (int64_t)B->dslot[f] * B->m + j0, out, j1 - j0);
            continue;
        }
        if (j0 > 0)
            p = lower_bound32(cr, p, e, j0);
        if (j1 < B->m)
            e = lower_bound32(cr, p, e, j1);
        for (; p < e; p++)
            out[cr[p] - j0] += v * cv[p];
    }
    transform_row(k, out, j1 - j0, A->sq[a], B, NULL, j0);
}

/* Scatters A row a into the zero vector w. */
static void scatter(const km_kdata *A, int64_t a, double *w)
{
    const km_problem *P = A->P;
    for (int64_t t = P->row_ptr[A->row[a]]; t < P->row_ptr[A->row[a] + 1]; t++)
        w[P->index[t]] = P->value[t];
}

/* Undoes scatter, leaving w all zero. */
static void unscatter(const km_kdata *A, int64_t a, double *w)
{
    const km_problem *P = A->P;
    for (int64_t t = P->row_ptr[A->row[a]]; t < P->row_ptr[A->row[a] + 1]; t++)
        w[P->index[t]] = 0;
}

/* out[b - b0] = w'(B row ib[b]) for b in [b0, b1): a pass over each B row's non-zeros with
 * one accumulator, four rows at a time to keep the pipeline full. */
static void dots_scatter(const double *w, const km_kdata *B, const int64_t *ib, int64_t b0,
                         int64_t b1, double *out)
{
    const int64_t *rp = B->P->row_ptr, *row = B->row;
    const int32_t *idx = B->P->index;
    const double *val = B->P->value;
    int64_t b = b0;
    for (; b + 4 <= b1; b += 4) {
        int64_t r0 = row[ib ? ib[b] : b], r1 = row[ib ? ib[b + 1] : b + 1];
        int64_t r2 = row[ib ? ib[b + 2] : b + 2], r3 = row[ib ? ib[b + 3] : b + 3];
        int64_t p0 = rp[r0], p1 = rp[r1], p2 = rp[r2], p3 = rp[r3];
        int64_t e0 = rp[r0 + 1], e1 = rp[r1 + 1], e2 = rp[r2 + 1], e3 = rp[r3 + 1];
        int64_t len = e0 - p0;
        len = e1 - p1 < len ? e1 - p1 : len;
        len = e2 - p2 < len ? e2 - p2 : len;
        len = e3 - p3 < len ? e3 - p3 : len;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int64_t t = 0; t < len; t++) {
            s0 += val[p0 + t] * w[idx[p0 + t]];
            s1 += val[p1 + t] * w[idx[p1 + t]];
            s2 += val[p2 + t] * w[idx[p2 + t]];
            s3 += val[p3 + t] * w[idx[p3 + t]];
        }
        for (int64_t t = p0 + len; t < e0; t++)
            s0 += val[t] * w[idx[t]];
        for (int64_t t = p1 + len; t < e1; t++)
            s1 += val[t] * w[idx[t]];
        for (int64_t t = p2 + len; t < e2; t++)
            s2 += val[t] * w[idx[t]];
        for (int64_t t = p3 + len; t < e3; t++)
            s3 += val[t] * w[idx[t]];
        out[b - b0] = s0;
        out[b + 1 - b0] = s1;
        out[b + 2 - b0] = s2;
        out[b + 3 - b0] = s3;
    }
    for (; b < b1; b++) {
        int64_t r = row[ib ? ib[b] : b];
        double s = 0;
        for (int64_t t = rp[r], e = rp[r + 1]; t < e; t++)
            s += val[t] * w[idx[t]];
        out[b - b0] = s;
    }
}

/* out[b - b0] = K(A row a, B row ib[b]) for b in [b0, b1) by merging sparse rows: the
 * laplacian and spline kernels, and dot products when there is no scatter vector. */
static void values_merge(const km_kernel *k, const km_kdata *A, int64_t a, const km_kdata *B,
                         const int64_t *ib, int64_t b0, int64_t b1, double *out)
{
    const km_problem *PA = A->P, *PB = B->P;
    int64_t ra = A->row[a], pa = PA->row_ptr[ra], na = PA->row_ptr[ra + 1] - pa;
    /* (a set of empty rows may have no arrays: no NULL + 0) */
    const int32_t *ix = na ? PA->index + pa : NULL;
    const double *vx = na ? PA->value + pa : NULL;
    for (int64_t b = b0; b < b1; b++) {
        int64_t rb = B->row[ib ? ib[b] : b], pb = PB->row_ptr[rb];
        int64_t nbz = PB->row_ptr[rb + 1] - pb;
        const int32_t *iy = nbz ? PB->index + pb : NULL;
        const double *vy = nbz ? PB->value + pb : NULL;
        if (k->type == KM_KERNEL_PRECOMPUTED)
            out[b - b0] = precomputed_value(PA, ra, PB, rb);
        else if (k->type == KM_KERNEL_LAPLACIAN)
            out[b - b0] = -k->gamma * l1_merge(ix, vx, na, iy, vy, nbz);
        else if (k->type == KM_KERNEL_SPLINE)
            out[b - b0] = spline_value(first_value(ix, vx, na), first_value(iy, vy, nbz));
        else
            out[b - b0] = dot_merge(ix, vx, na, iy, vy, nbz);
    }
    if (k->type == KM_KERNEL_LAPLACIAN)
        exp_inplace(out, b1 - b0);
    else if (k->type != KM_KERNEL_SPLINE && k->type != KM_KERNEL_PRECOMPUTED)
        transform_row(k, out, b1 - b0, A->sq[a], B, ib, b0);
}

/* Kernel values of A row a with B rows [b0, b1) given w, the scattered row when the dots
 * need one (NULL otherwise, or when there is none: then rows are merged). */
static void values_exact_raw(const km_kernel *k, const km_kdata *A, int64_t a,
                             const km_kdata *B, const int64_t *ib, int64_t b0, int64_t b1,
                             const double *w, double *out);

/* values_exact_raw plus the kernel's offset: every row path of km_kernel_block and
 * km_kmatrix ends here (the dgemm path adds it itself). */
static void values_exact(const km_kernel *k, const km_kdata *A, int64_t a, const km_kdata *B,
                         const int64_t *ib, int64_t b0, int64_t b1, const double *w, double *out)
{
    values_exact_raw(k, A, a, B, ib, b0, b1, w, out);
    add_offset(k, out, b1 - b0);
}

static void values_exact_raw(const km_kernel *k, const km_kdata *A, int64_t a,
                             const km_kdata *B, const int64_t *ib, int64_t b0, int64_t b1,
                             const double *w, double *out)
{
    if (!dot_based(k->type) || (needs_scatter(k, B, ib) && !w)) {
        values_merge(k, A, a, B, ib, b0, b1, out);
        return;
    }
    if (!needs_scatter(k, B, ib)) {
        values_columns(k, A, a, B, b0, b1, out);
        return;
    }
    dots_scatter(w, B, ib, b0, b1, out);
    transform_row(k, out, b1 - b0, A->sq[a], B, ib, b0);
}

/* The exact path for A row a and B rows [b0, b1); w: a zero scatter vector of scatter_len
 * (left zero) or NULL if there is none. */
static void row_exact(const km_kernel *k, const km_kdata *A, int64_t a, const km_kdata *B,
                      const int64_t *ib, int64_t b0, int64_t b1, double *out, double *w)
{
    int sc = w && needs_scatter(k, B, ib);
    if (sc)
        scatter(A, a, w);
    values_exact(k, A, a, B, ib, b0, b1, sc ? w : NULL, out);
    if (sc)
        unscatter(A, a, w);
}

/* A row a against all nb B rows, the columns split over nt threads; w as row_exact. */
static void row_exact_par(const km_kernel *k, const km_kdata *A, int64_t a, const km_kdata *B,
                          const int64_t *ib, int64_t nb, double *out, double *w, int nt)
{
    if (nt <= 1) {
        row_exact(k, A, a, B, ib, 0, nb, out, w);
        return;
    }
    int sc = w && needs_scatter(k, B, ib);
    if (sc)
        scatter(A, a, w);
    #pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; t++) {
        int64_t b0 = nb * t / nt, b1 = nb * (t + 1) / nt;
        values_exact(k, A, a, B, ib, b0, b1, sc ? w : NULL, out + b0);
    }
    if (sc)
        unscatter(A, a, w);
}

/* ---- blocks ---- */

/* Whether idx (NULL = identity) is a run of consecutive rows; *first gets the start. */
static int consecutive(const int64_t *idx, int64_t cnt, int64_t *first)
{
    *first = idx && cnt > 0 ? idx[0] : 0;
    for (int64_t i = 1; idx && i < cnt; i++)
        if (idx[i] != idx[0] + i)
            return 0;
    return 1;
}

/* The exact path's work per kernel value: the features an A row and a B row share on
 * average (through columns), or a listed B row's non-zeros (through a scatter vector). */
static double exact_work(const km_kdata *A, const km_kdata *B, const int64_t *ib)
{
    if (ib || !A->col_ptr || !B->col_ptr)
        return (double)B->nnz / (double)B->m;
    double s = 0;
    int32_t n = A->n < B->n ? A->n : B->n;
    for (int32_t f = 0; f < n; f++)
        s += (double)(A->col_ptr[f + 1] - A->col_ptr[f]) * (double)(B->col_ptr[f + 1] - B->col_ptr[f]);
    return s / ((double)A->m * (double)B->m);
}

/* Gathers the listed rows of a dense copy into a kk x cnt feature-major tile. */
static void gather_tile(const km_kdata *D, const int64_t *idx, int64_t cnt, int64_t kk,
                        double *tile)
{
    for (int64_t f = 0; f < kk; f++)
        for (int64_t i = 0; i < cnt; i++)
            tile[f * cnt + i] = D->dense[f * D->m + idx[i]];
}

/* A block by dgemm on the dense copies: tiles of out (A rows x B rows, gathered into
 * feature-major buffers when not consecutive) over the threads, each tile's dot products by
 * a single-threaded dgemm and then transformed in place. One thread pool (OpenMP) works;
 * OpenBLAS's own threads would spin against it after each call. Caller checked that both
 * copies exist and the sizes fit in int. */
static int block_dgemm(const km_kernel *k, const km_kdata *A, const int64_t *ia, int64_t na,
                       const km_kdata *B, const int64_t *ib, int64_t nb, double *out,
                       int threads, km_error *err)
{
    int64_t kk = A->n < B->n ? A->n : B->n, a_first, b_first;
    int a_run = consecutive(ia, na, &a_first), b_run = consecutive(ib, nb, &b_first);
    int nt = pick_threads(threads, na * nb);
    int64_t ta = a_run ? na : KM_GATHER_BYTES / (kk * (int64_t)sizeof(double));
    int64_t tb = b_run ? nb : KM_GATHER_BYTES / (kk * (int64_t)sizeof(double));
    if (tb > (nb + 15) / 16)   /* 16 tiles, for up to 16 threads: a tiling (so bits) that */
        tb = (nb + 15) / 16;   /* does not depend on the number of threads */
    ta = ta < KM_DGEMM_MIN_ROWS ? KM_DGEMM_MIN_ROWS : ta > na ? na : ta > INT_MAX ? INT_MAX : ta;
    tb = tb < KM_DGEMM_MIN_ROWS ? KM_DGEMM_MIN_ROWS : tb > nb ? nb : tb > INT_MAX ? INT_MAX : tb;
    int64_t per = (a_run ? 0 : ta * kk) + (b_run ? 0 : tb * kk);
    double *buf = per ? alloc_n(nt * per, sizeof *buf, 0) : NULL;
    if (per && !buf)
        return km_error_nomem(err, "kernel block");
    int64_t tiles_b = (nb + tb - 1) / tb, tiles = ((na + ta - 1) / ta) * tiles_b;
    int nested = omp_in_parallel(), old = nested ? 1 : openblas_get_num_threads();
    if (old != 1)
        openblas_set_num_threads(1);
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *ga = buf ? buf + omp_get_thread_num() * per : NULL;
        double *gb = buf ? ga + (a_run ? 0 : ta * kk) : NULL;
        #pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tiles; t++) {
            int64_t a0 = t / tiles_b * ta, b0 = t % tiles_b * tb;
            int64_t ma = na - a0 < ta ? na - a0 : ta, mb = nb - b0 < tb ? nb - b0 : tb;
            const double *pa = A->dense + a_first + a0, *pb = B->dense + b_first + b0;
            int64_t lda = A->m, ldb = B->m;
            if (!a_run) {
                gather_tile(A, ia + a0, ma, kk, ga);
                pa = ga;
                lda = ma;
            }
            if (!b_run) {
                gather_tile(B, ib + b0, mb, kk, gb);
                pb = gb;
                ldb = mb;
            }
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)ma, (int)mb, (int)kk, 1.0,
                        pa, (int)lda, pb, (int)ldb, 0.0, out + a0 * nb + b0, (int)nb);
            for (int64_t a = a0; a < a0 + ma; a++) {
                transform_row(k, out + a * nb + b0, mb, A->sq[ia ? ia[a] : a], B, ib, b0);
                add_offset(k, out + a * nb + b0, mb);
            }
        }
    }
    if (old != 1)
        openblas_set_num_threads(old);
    free(buf);
    return KM_OK;
}

/* The exact path over a block: rows of out over threads, or the columns of each row when
 * there are too few rows. Without memory for scatter vectors, rows are merged. */
static void block_exact(const km_kernel *k, const km_kdata *A, const int64_t *ia, int64_t na,
                        const km_kdata *B, const int64_t *ib, int64_t nb, double *out,
                        int threads)
{
    int nt = pick_threads(threads, na * nb);
    int by_rows = na >= 2 * nt;
    int64_t len = needs_scatter(k, B, ib) ? scatter_len(A, B) : 0;
    double *w = len ? alloc_n((by_rows ? nt : 1) * len, sizeof *w, 1) : NULL;
    if (by_rows) {
        #pragma omp parallel num_threads(nt) if (nt > 1)
        {
            double *wt = w ? w + omp_get_thread_num() * len : NULL;
            #pragma omp for schedule(dynamic, 4)
            for (int64_t a = 0; a < na; a++)
                row_exact(k, A, ia ? ia[a] : a, B, ib, 0, nb, out + a * nb, wt);
        }
    } else {
        for (int64_t a = 0; a < na; a++)
            row_exact_par(k, A, ia ? ia[a] : a, B, ib, nb, out + a * nb, w, nt);
    }
    free(w);
}

int km_kernel_block(const km_kernel *k, const km_kdata *A, const int64_t *ia, int64_t na,
                    const km_kdata *B, const int64_t *ib, int64_t nb, double *out,
                    int threads, km_error *err)
{
    if (na < 0 || nb < 0 || (!ia && na > A->m) || (!ib && nb > B->m))
        return km_error_set(err, KM_EUSAGE, "kernel block: %lld x %lld rows requested of "
                            "%lld x %lld", (long long)na, (long long)nb, (long long)A->m,
                            (long long)B->m);
    for (int64_t a = 0; ia && a < na; a++)
        if (ia[a] < 0 || ia[a] >= A->m)
            return km_error_set(err, KM_EUSAGE, "kernel block: row %lld out of range 0..%lld",
                                (long long)ia[a], (long long)A->m - 1);
    for (int64_t b = 0; ib && b < nb; b++)
        if (ib[b] < 0 || ib[b] >= B->m)
            return km_error_set(err, KM_EUSAGE, "kernel block: row %lld out of range 0..%lld",
                                (long long)ib[b], (long long)B->m - 1);
    if (na == 0 || nb == 0)
        return KM_OK;
    if (check_ids(k, B->P, err))
        return err->code;
    threads = threads < 1 ? 1 : threads;
    int64_t kk = A->n < B->n ? A->n : B->n;
    if (dot_based(k->type) && A->dense && B->dense && kk > 0 && na >= KM_DGEMM_MIN_ROWS &&
        nb >= KM_DGEMM_MIN_ROWS && nb <= INT_MAX &&
        exact_work(A, B, ib) >= KM_DGEMM_MIN_OVERLAP * (double)kk)
        return block_dgemm(k, A, ia, na, B, ib, nb, out, threads, err);
    block_exact(k, A, ia, na, B, ib, nb, out, threads);
    return KM_OK;
}

/* ---- the kernel matrix ---- */

/* Row i of K over the current columns into out by the exact path (through the columns of
 * X or of the restricted row set Xc): the one way every entry of K is computed. */
static void kmatrix_compute_row(km_kmatrix *K, int64_t i, double *out)
{
    const km_kdata *B = K->Xc ? K->Xc : K->X;
    row_exact_par(&K->k, K->X, i, B, NULL, K->ncols, out, K->work,
                  pick_threads(K->threads, K->ncols));
    K->values += K->ncols;
}

/* All of K at creation: entries j >= i of each row by the exact path (rows over threads),
 * then the lower triangle mirrored in tiles. The exact path is symmetric, so the mirrored
 * entries are the bits a fresh row would have. */
static void kmatrix_fill(km_kmatrix *K)
{
    int64_t m = K->m;
    int nt = pick_threads(K->threads, m * m / 2);
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *w = K->work ? K->work + omp_get_thread_num() * K->work_len : NULL;
        #pragma omp for schedule(dynamic, 8)
        for (int64_t i = 0; i < m; i++)
            row_exact(&K->k, K->X, i, K->X, NULL, i, m, K->full + i * m + i, w);
        const int64_t T = 64;
        #pragma omp for schedule(dynamic, 1)
        for (int64_t i0 = 0; i0 < m; i0 += T)
            for (int64_t j0 = 0; j0 <= i0; j0 += T)
                for (int64_t i = i0; i < i0 + T && i < m; i++)
                    for (int64_t j = j0; j < j0 + T && j < i; j++)
                        K->full[i * m + j] = K->full[j * m + i];
    }
    K->computed = m;
    K->values = m * (m + 1) / 2;
}

/* Rows of the current length the cache's arena holds, at most m (at least
 * KM_CACHE_MIN_ROWS: the arena has room for that many whole rows). */
static int64_t cache_slots(const km_kmatrix *K)
{
    int64_t slots = K->arena_len / (K->ncols > 0 ? K->ncols : 1);
    return slots > K->m ? (K->m > KM_CACHE_MIN_ROWS ? K->m : KM_CACHE_MIN_ROWS) : slots;
}

/* The storage of slot s: rows of the current length side by side. */
static inline double *slot_ptr(const km_kmatrix *K, int64_t s)
{
    return K->arena + s * K->ncols;
}

km_kmatrix *km_kmatrix_new(const km_kernel *k, const km_kdata *X, size_t cache_bytes,
                           int threads, km_error *err)
{
    if (km_kernel_check(k, X->n, err) || check_ids(k, X->P, err))
        return NULL;
    km_kmatrix *K = calloc(1, sizeof *K);
    if (!K) {
        km_error_nomem(err, "kernel matrix");
        return NULL;
    }
    int64_t m = X->m;
    K->k = *k;
    K->X = X;
    K->m = m;
    K->threads = threads < 1 ? 1 : threads;
    K->head = K->tail = -1;
    K->ncols = m;
    if (!(K->diag = alloc_n(m, sizeof *K->diag, 0)))
        goto nomem;
    K->work_len = needs_scatter(k, X, NULL) ? scatter_len(X, X) : 0;
    if (K->work_len)   /* without them (no memory) the exact path merges rows */
        K->work = alloc_n(K->threads * K->work_len, sizeof *K->work, 1);
    const km_problem *P = X->P;
    for (int64_t i = 0; i < m; i++) {
        int64_t p = P->row_ptr[X->row[i]], len = P->row_ptr[X->row[i] + 1] - p;
        K->diag[i] = k->type == KM_KERNEL_PRECOMPUTED
                     ? precomputed_value(P, X->row[i], P, X->row[i]) + k->offset
                     : km_kernel_eval(k, P->index + p, P->value + p, len, X->sq[i],
                                      P->index + p, P->value + p, len, X->sq[i]);
    }
    size_t row_bytes = (size_t)(m > 0 ? m : 1) * sizeof(double), all;
    int fits = !__builtin_mul_overflow(row_bytes, (size_t)(m > 0 ? m : 1), &all) &&
               all <= cache_bytes;
    if (fits || m <= KM_CACHE_MIN_ROWS) {
        K->full = alloc_big(m * m, sizeof *K->full);   /* if this fails, cache rows instead */
        if (K->full) {
            kmatrix_fill(K);
            return K;
        }
    }
    int64_t cap = m > KM_CACHE_MIN_ROWS ? m : KM_CACHE_MIN_ROWS;   /* slots for shorter rows */
    int64_t least = KM_CACHE_MIN_ROWS * (m > 0 ? m : 1), want;
    size_t cells = cache_bytes / sizeof(double);
    want = cells > (size_t)INT64_MAX / 16 ? INT64_MAX / 16 : (int64_t)cells;
    want = want < least ? least : want;
    while (!(K->arena = alloc_big(want, sizeof *K->arena)) && want > least)   /* or less */
        want = want / 2 > least ? want / 2 : least;
    K->arena_len = want;
    K->nslots = cache_slots(K);
    K->freel = alloc_n(cap, sizeof *K->freel, 0);
    K->slot_row = alloc_n(cap, sizeof *K->slot_row, 0);
    K->slot_pass = alloc_n(cap, sizeof *K->slot_pass, 0);
    K->prev = alloc_n(cap, sizeof *K->prev, 0);
    K->next = alloc_n(cap, sizeof *K->next, 0);
    K->where = alloc_n(m, sizeof *K->where, 0);
    if (!K->arena || !K->freel || !K->slot_row || !K->slot_pass || !K->prev || !K->next ||
        !K->where)
        goto nomem;
    for (int64_t i = 0; i < m; i++)
        K->where[i] = -1;
    return K;
nomem:
    km_kmatrix_free(K);
    km_error_nomem(err, "kernel matrix");
    return NULL;
}

void km_kmatrix_free(km_kmatrix *K)
{
    if (!K)
        return;
    free(K->arena);
    free(K->freel);
    free(K->slot_row);
    free(K->slot_pass);
    free(K->prev);
    free(K->next);
    free(K->where);
    free(K->full);
    free(K->diag);
    free(K->work);
    free(K->cols);
    km_kdata_free(K->Xc);
    free(K->gather);
    free(K->acols);
    km_kdata_free(K->Xa);
    free(K);
}

int64_t km_kmatrix_size(const km_kmatrix *K)
{
    return K->m;
}

double km_kmatrix_diag(const km_kmatrix *K, int64_t i)
{
    return K->diag[i];
}

/* Removes slot s from the LRU list. */
static void lru_unlink(km_kmatrix *K, int64_t s)
{
    if (K->prev[s] >= 0)
        K->next[K->prev[s]] = K->next[s];
    else
        K->head = K->next[s];
    if (K->next[s] >= 0)
        K->prev[K->next[s]] = K->prev[s];
    else
        K->tail = K->prev[s];
}

/* Puts slot s at the front (most recently used) of the LRU list. */
static void lru_push_front(km_kmatrix *K, int64_t s)
{
    K->prev[s] = -1;
    K->next[s] = K->head;
    if (K->head >= 0)
        K->prev[K->head] = s;
    K->head = s;
    if (K->tail < 0)
        K->tail = s;
}

const double *km_kmatrix_row(km_kmatrix *K, int64_t i, km_error *err)
{
    if (i < 0 || i >= K->m) {
        km_error_set(err, KM_EUSAGE, "kernel matrix: row %lld out of range 0..%lld",
                     (long long)i, (long long)K->m - 1);
        return NULL;
    }
    if (K->full) {
        K->served++;
        const double *row = K->full + i * K->m;
        if (!K->cols)
            return row;
        for (int64_t t = 0; t < K->ncols; t++)
            K->gather[t] = row[K->cols[t]];
        return K->gather;
    }
    int64_t s = K->where[i];
    if (s >= 0) {   /* hit */
        if (K->head != s) {
            lru_unlink(K, s);
            lru_push_front(K, s);
        }
        K->slot_pass[s] = K->pass;
        K->served++;
        return slot_ptr(K, s);
    }
    if (K->nfree > 0) {   /* a free slot, a new one, or the least recently used row's */
        s = K->freel[--K->nfree];
    } else if (K->used < K->nslots) {
        s = K->used++;
    } else {   /* in passes see km_kmatrix_pass */
        s = K->tail;
        if (K->pass > 0 && K->slot_row[s] >= 0 && K->slot_pass[s] >= K->pass - 1)
            s = K->next[K->head];   /* the most recent but the row just returned */
        lru_unlink(K, s);
        K->where[K->slot_row[s]] = -1;
    }
    kmatrix_compute_row(K, i, slot_ptr(K, s));
    K->computed++;
    K->served++;
    K->slot_row[s] = i;
    K->slot_pass[s] = K->pass;
    K->where[i] = s;
    lru_push_front(K, s);
    return slot_ptr(K, s);
}

int64_t km_kmatrix_take_rows(km_kmatrix *dst, const km_kmatrix *src)
{
    if (dst->full || src->full || dst->m != src->m || dst->ncols > src->ncols ||
        dst->ncols == 0)
        return 0;
    int64_t first = dst->cols ? dst->cols[0] : 0;   /* its place among src's */
    int64_t off = src->cols ? lower_bound64(src->cols, 0, src->ncols, first) : first;
    if (off + dst->ncols > src->ncols)
        return 0;
    for (int64_t t = 0; t < dst->ncols; t++)   /* a run of src's columns */
        if ((src->cols ? src->cols[off + t] : off + t) != (dst->cols ? dst->cols[t] : t))
            return 0;
    int64_t n = 0;
    for (int64_t s = src->head; s >= 0 && (dst->nfree > 0 || dst->used < dst->nslots);
         s = src->next[s]) {
        int64_t i = src->slot_row[s], d;
        if (i < 0 || dst->where[i] >= 0)
            continue;
        d = dst->nfree > 0 ? dst->freel[--dst->nfree] : dst->used++;
        memcpy(slot_ptr(dst, d), slot_ptr(src, s) + off, (size_t)dst->ncols * sizeof(double));
        dst->slot_row[d] = i;
        dst->slot_pass[d] = dst->pass;
        dst->where[i] = d;
        dst->prev[d] = dst->tail;   /* at the back: src's order kept */
        dst->next[d] = -1;
        if (dst->tail >= 0)
            dst->next[dst->tail] = d;
        else
            dst->head = d;
        dst->tail = d;
        n++;
    }
    return n;
}

/* Row i over the columns [c0, c1) of the current ones, times h, added to z[c0..c1) chunk by
 * chunk through a buffer of KM_AXPY_CHUNK values (the row is never stored). */
static void kmatrix_axpy_range(km_kmatrix *K, int64_t i, double h, double *z, int64_t c0,
                               int64_t c1, double *buf, double *w)
{
    const km_kdata *B = K->Xc ? K->Xc : K->X;
    for (int64_t b0 = c0; b0 < c1; b0 += KM_AXPY_CHUNK) {
        int64_t b1 = c1 - b0 < KM_AXPY_CHUNK ? c1 : b0 + KM_AXPY_CHUNK;
        row_exact(&K->k, K->X, i, B, NULL, b0, b1, buf, w);
        axpy(h, buf, z + b0, b1 - b0);
    }
}

int km_kmatrix_axpy(km_kmatrix *K, int64_t i, double h, double *z, km_error *err)
{
    if (i < 0 || i >= K->m)
        return km_error_set(err, KM_EUSAGE, "kernel matrix: row %lld out of range 0..%lld",
                            (long long)i, (long long)K->m - 1);
    int64_t n = K->ncols;
    int thrash = !K->full && K->where[i] < 0 && K->nfree == 0 && K->used >= K->nslots &&
                 K->pass > 0 &&
                 K->slot_row[K->tail] >= 0 && K->slot_pass[K->tail] >= K->pass - 1;
    if (!thrash) {   /* a row in memory, or one worth keeping */
        const double *row = km_kmatrix_row(K, i, err);
        if (!row)
            return err->code;
        axpy(h, row, z, n);
        return KM_OK;
    }
    /* the cache is full of rows in use: a new row would only replace one of them */
    int nt = pick_threads(K->threads, n);
    int sc = K->work && needs_scatter(&K->k, K->Xc ? K->Xc : K->X, NULL);
    if (sc)
        scatter(K->X, i, K->work);
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double buf[KM_AXPY_CHUNK];
        int t = omp_get_thread_num(), nth = omp_get_num_threads();
        kmatrix_axpy_range(K, i, h, z, n * t / nth, n * (t + 1) / nth, buf,
                           sc ? K->work : NULL);
    }
    if (sc)
        unscatter(K->X, i, K->work);
    K->served++;
    K->computed++;
    K->values += n;
    return KM_OK;
}

void km_kmatrix_pass(km_kmatrix *K)
{
    K->pass++;
}

/* z[r] = sum_t c_J[t] K[J[t]][r] over the rows J[t] of K in memory (K symmetric), added to
 * z, the rows of z in chunks over threads. */
static void matvec_rows(const double *const *rows, const double *cJ, int64_t nj, int64_t m,
                        double *z, int threads)
{
    const int64_t chunk = 1024;
    int nt = pick_threads(threads, m * nj);
    #pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (int64_t i0 = 0; i0 < m; i0 += chunk) {
        int64_t len = m - i0 < chunk ? m - i0 : chunk;
        for (int64_t t = 0; t < nj; t++)
            axpy(cJ[t], rows[t] + i0, z + i0, len);
    }
}

/* z = K c when some columns c_j != 0 have no row in memory (J: those, in order): their
 * values K(x_i, x_j) by the exact path (the bits of the rows K caches, not dgemm's), in
 * blocks of rows; then each z_i summed over all j increasing, cached or not, from 0 one term
 * at a time: the order and bits of matvec_rows with all of K in memory, whatever the cache
 * holds (cached[k]: the k-th column c_j != 0 has a row in memory). */
static int matvec_blocks(km_kmatrix *K, const double *const *rows, const double *cin,
                         const int64_t *J, const double *cJ, int64_t nj,
                         const unsigned char *cached, int64_t nnz, double *z, int threads,
                         km_error *err)
{
    enum { T = 8 };   /* rows of z at a time: T independent chains, each in order */
    const km_kdata *X = K->X;
    int64_t m = K->m, br = KM_MATVEC_BLOCK_BYTES / (nj * (int64_t)sizeof(double));
    br = br < T ? T : br > m ? m : br;
    double *blk = alloc_n(br * nj, sizeof *blk, 0);
    int64_t *Jrows = alloc_n(nj, sizeof *Jrows, 0), *idx = alloc_n(br, sizeof *idx, 0);
    km_kdata *XJ = NULL;
    int rc = KM_OK;
    if (!blk || !Jrows || !idx) {
        rc = km_error_nomem(err, "kernel matvec");
        goto done;
    }
    for (int64_t t = 0; t < nj; t++)
        Jrows[t] = X->row[J[t]];
    if (nj < m && !(XJ = km_kdata_new(X->P, Jrows, nj, err))) {   /* columns as a row set */
        rc = err->code;
        goto done;
    }
    for (int64_t r0 = 0; r0 < m; r0 += br) {
        int64_t nr = m - r0 < br ? m - r0 : br;
        for (int64_t r = 0; r < nr; r++)
            idx[r] = r0 + r;
        block_exact(&K->k, X, idx, nr, XJ ? XJ : X, NULL, nj, blk, threads);
        int nt = pick_threads(threads, nr * nnz);
        #pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
        for (int64_t r = 0; r < nr; r += T) {
            int n = nr - r < T ? (int)(nr - r) : T;
            double s[T] = {0};
            int64_t a = 0, b = 0;
            for (int64_t q = 0; q < nnz; q++) {
                if (cached[q]) {   /* row j of K at rows i: K symmetric, the same bits */
                    double cj = cin[a];
                    const double *kj = rows[a++] + r0 + r;
                    for (int t = 0; t < n; t++)
                        s[t] += cj * kj[t];
                } else {
                    double cj = cJ[b];
                    const double *kb = blk + r * nj + b++;
                    for (int t = 0; t < n; t++)
                        s[t] += cj * kb[t * nj];
                }
            }
            for (int t = 0; t < n; t++)
                z[r0 + r + t] = s[t];
        }
    }
done:
    km_kdata_free(XJ);
    free(blk);
    free(Jrows);
    free(idx);
    return rc;
}

int km_kmatrix_matvec(km_kmatrix *K, const double *c, double *z, int threads, km_error *err)
{
    int64_t m = K->m, nin = 0, nout = 0;
    threads = threads < 1 ? 1 : threads;
    const double **rows = alloc_n(m, sizeof *rows, 0);
    double *cin = alloc_n(m, sizeof *cin, 0), *cout = alloc_n(m, sizeof *cout, 0);
    int64_t *Jout = alloc_n(m, sizeof *Jout, 0);
    unsigned char *cached = alloc_n(m, 1, 0);
    int rc = KM_OK;
    if (!rows || !cin || !cout || !Jout || !cached) {
        rc = km_error_nomem(err, "kernel matvec");
        goto done;
    }
    for (int64_t j = 0; j < m; j++) {   /* columns c_j != 0, with a row of K in memory or not */
        if (c[j] == 0)
            continue;
        const double *row = K->full ? K->full + j * m
                            : !K->cols && K->where[j] >= 0 ? slot_ptr(K, K->where[j]) : NULL;
        cached[nin + nout] = row != NULL;
        if (row) {
            rows[nin] = row;
            cin[nin++] = c[j];
        } else {
            cout[nout] = c[j];
            Jout[nout++] = j;
        }
    }
    if (nout) {
        rc = matvec_blocks(K, rows, cin, Jout, cout, nout, cached, nin + nout, z, threads, err);
    } else {
        for (int64_t i = 0; i < m; i++)
            z[i] = 0;
        if (nin)
            matvec_rows(rows, cin, nin, m, z, threads);
    }
done:
    free(rows);
    free(cin);
    free(cout);
    free(Jout);
    free(cached);
    return rc;
}

void km_kmatrix_stats(const km_kmatrix *K, int64_t *served, int64_t *computed)
{
    if (served)
        *served = K->served;
    if (computed)
        *computed = K->computed;
}

int64_t km_kmatrix_values(const km_kmatrix *K)
{
    return K->values;
}

int64_t km_kmatrix_ncols(const km_kmatrix *K)
{
    return K->ncols;
}

/* Drops the row in slot s; the slot becomes free. */
static void slot_drop(km_kmatrix *K, int64_t s)
{
    lru_unlink(K, s);
    K->where[K->slot_row[s]] = -1;
    K->slot_row[s] = -1;
    K->freel[K->nfree++] = s;
}

/* The row set of X's rows listed in cols[0..n), or NULL with err set. */
static km_kdata *kdata_of_cols(const km_kmatrix *K, const int64_t *cols, int64_t n,
                               km_error *err)
{
    int64_t *prow = alloc_n(n, sizeof *prow, 0);
    if (!prow) {
        km_error_nomem(err, "kernel matrix columns");
        return NULL;
    }
    for (int64_t t = 0; t < n; t++)
        prow[t] = K->X->row[cols[t]];
    km_kdata *d = km_kdata_new(K->X->P, prow, n, err);
    free(prow);
    return d;
}

/* Whether cols[0..n) increase within 0..m-1. */
static int columns_ok(const int64_t *cols, int64_t n, int64_t m)
{
    for (int64_t t = 0; t < n; t++)
        if (cols[t] < 0 || cols[t] >= m || (t > 0 && cols[t] <= cols[t - 1]))
            return 0;
    return 1;
}

int km_kmatrix_restrict(km_kmatrix *K, const int64_t *cols, int64_t ncols, km_error *err)
{
    int64_t m = K->m;
    if (!cols)
        ncols = m;
    if (ncols < 0 || ncols > m || (cols && !columns_ok(cols, ncols, m)))
        return km_error_set(err, KM_EUSAGE, "kernel matrix: columns must increase within "
                            "0..%lld", (long long)m - 1);
    /* map[t]: where new column t sits among the current ones, or -1 (added) */
    int64_t *map = alloc_n(ncols, sizeof *map, 0), *keep = cols ? alloc_n(ncols, sizeof *keep, 0) : NULL;
    int64_t *add = alloc_n(ncols, sizeof *add, 0), nadd = 0;
    double *gather = K->full && cols ? alloc_n(ncols, sizeof *gather, 0) : NULL;
    double *buf = NULL, *tmp = NULL;
    km_kdata *Xc = NULL, *Xadd = NULL;
    int rc = KM_OK;
    if (!map || !add || (cols && !keep) || (K->full && cols && !gather)) {
        rc = km_error_nomem(err, "kernel matrix columns");
        goto done;
    }
    for (int64_t t = 0, p = 0; t < ncols; t++) {
        int64_t j = cols ? cols[t] : t;
        while (p < K->ncols && (K->cols ? K->cols[p] : p) < j)
            p++;
        map[t] = p < K->ncols && (K->cols ? K->cols[p] : p) == j ? p : -1;
        if (map[t] < 0)
            add[nadd++] = j;
        if (cols)
            keep[t] = j;
    }
    if (!K->full && cols && !(Xc = kdata_of_cols(K, cols, ncols, err))) {
        rc = err->code;
        goto done;
    }
    int flush = nadd > 0 && nadd * 4 > ncols;   /* computing the new columns would not pay */
    if (!K->full && nadd > 0 && !flush &&
        (!(Xadd = kdata_of_cols(K, add, nadd, err)) || !(buf = alloc_n(nadd, sizeof *buf, 0)))) {
        rc = Xadd ? km_error_nomem(err, "kernel matrix columns") : err->code;
        goto done;
    }
    if (!K->full) {
        int64_t old = K->ncols, slots;
        K->ncols = ncols;   /* cache_slots for the new length */
        slots = cache_slots(K);
        K->ncols = old;
        for (int64_t s = 0; s < K->used; s++) {   /* rows of columns gone (or all), slots gone */
            int64_t r = K->slot_row[s];   /* is row r among the new columns? */
            int64_t lo = r >= 0 && cols ? lower_bound64(cols, 0, ncols, r) : 0;
            if (r >= 0 && (flush || s >= slots || (cols && (lo == ncols || cols[lo] != r))))
                slot_drop(K, s);
        }
        K->used = K->used < slots ? K->used : slots;
        int64_t nf = 0;
        for (int64_t q = 0; q < K->nfree; q++)
            if (K->freel[q] < K->used)
                K->freel[nf++] = K->freel[q];
        K->nfree = nf;
        /* the rows to their places for the new length, in place, in an order that reads
         * every row before it is overwritten (up when shorter, down when longer) */
        int64_t nrun = 0;
        for (int64_t t = 0; nadd == 0 && t < ncols; t++)
            if (t == 0 || map[t] != map[t - 1] + 1)
                add[nrun++] = t;   /* add[] is free: the start of each run */
        if (nadd > 0 && !(tmp = alloc_n(ncols, sizeof *tmp, 0))) {
            rc = km_error_nomem(err, "kernel matrix columns");
            goto done;
        }
        for (int64_t q = 0; q < K->used; q++) {
            int64_t s = ncols <= old ? q : K->used - 1 - q;
            if (K->slot_row[s] < 0)
                continue;
            double *src = K->arena + s * old, *dst = K->arena + s * ncols;
            if (nadd == 0) {   /* a subset: map[t] >= t */
                for (int64_t r = 0; r < nrun; r++) {
                    int64_t t = add[r], e = r + 1 < nrun ? add[r + 1] : ncols;
                    memmove(dst + t, src + map[t], (size_t)(e - t) * sizeof *dst);
                }
                continue;
            }
            row_exact_par(&K->k, K->X, K->slot_row[s], Xadd, NULL, nadd, buf, K->work,
                          pick_threads(K->threads, nadd));
            K->values += nadd;
            for (int64_t t = 0, a = 0; t < ncols; t++)
                tmp[t] = map[t] >= 0 ? src[map[t]] : buf[a++];
            memcpy(dst, tmp, (size_t)ncols * sizeof *dst);
        }
        K->nslots = slots;
    }
    free(K->cols);
    km_kdata_free(K->Xc);
    free(K->gather);
    km_kdata_free(K->Xa);   /* addmul's columns are rarely the same after a change */
    free(K->acols);
    K->Xa = NULL;
    K->acols = NULL;
    K->cols = keep;
    K->ncols = ncols;
    K->Xc = Xc;
    K->gather = gather;
    keep = NULL;
    gather = NULL;
    Xc = NULL;
done:
    free(map);
    free(keep);
    free(add);
    free(gather);
    free(buf);
    free(tmp);
    km_kdata_free(Xc);
    km_kdata_free(Xadd);
    return rc;
}

int km_kmatrix_addmul(km_kmatrix *K, const int64_t *rows, const double *coef, int64_t nr,
                      const int64_t *cols, int64_t ncols, double *out, km_error *err)
{
    if (!cols)
        ncols = K->m;
    if (ncols < 0 || ncols > K->m || (cols && !columns_ok(cols, ncols, K->m)))
        return km_error_set(err, KM_EUSAGE, "kernel matrix: columns must increase within "
                            "0..%lld", (long long)K->m - 1);
    for (int64_t r = 0; r < nr; r++)
        if (rows[r] < 0 || rows[r] >= K->m)
            return km_error_set(err, KM_EUSAGE, "kernel matrix: row %lld out of range",
                                (long long)rows[r]);
    /* the row set of the columns, kept for the next call with the same columns */
    if (cols && !(K->acols && K->nacols == ncols &&
                  memcmp(K->acols, cols, (size_t)ncols * sizeof *cols) == 0)) {
        km_kdata_free(K->Xa);
        free(K->acols);
        K->acols = alloc_n(ncols, sizeof *K->acols, 0);
        if (!K->acols)
            return km_error_nomem(err, "kernel rows");
        if (!(K->Xa = kdata_of_cols(K, cols, ncols, err))) {
            free(K->acols);
            K->acols = NULL;
            return err->code;
        }
        memcpy(K->acols, cols, (size_t)ncols * sizeof *cols);
        K->nacols = ncols;
    }
    double *buf = alloc_n(ncols, sizeof *buf, 0);
    if (!buf)
        return km_error_nomem(err, "kernel rows");
    for (int64_t r = 0; r < nr; r++) {
        if (coef[r] == 0 || ncols == 0)
            continue;
        row_exact_par(&K->k, K->X, rows[r], cols ? K->Xa : K->X, NULL, ncols, buf, K->work,
                      pick_threads(K->threads, ncols));
        K->values += ncols;
        axpy(coef[r], buf, out, ncols);
    }
    free(buf);
    return KM_OK;
}
