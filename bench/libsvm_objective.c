/* libsvm_objective.c - the primal objective of a binary kernel SVM model (LIBSVM's svm-train or
 * kmtk's train -t) on its training file, so that both tools can be compared at matched
 * accuracy (bench/libsvm.sh).
 *
 *   libsvm_objective [-c C] MODEL_FILE DATA_FILE
 *
 * prints "objective = F" (and the two terms) with, for the model's support vectors s, their
 * coefficients c_s (LIBSVM's sv_coef y_s alpha_s; kmtk's c) and offset rho (LIBSVM; 0 for
 * kmtk, which has no bias term):
 *   f(x) = sum_s c_s K(s, x) - rho
 *   F    = 1/2 sum_s sum_t c_s c_t K(s, t) + C sum_i max(0, 1 - y_i f(x_i))
 * i.e. the hinge-loss primal of C-SVC in its function form, b = -rho included in f. y_i is
 * +1 for the class the model's positive decision value predicts: LIBSVM's first `label`,
 * kmtk's second `labels` entry. Kernels: linear, poly, rbf, sigmoid with the model's gamma,
 * coef0 and degree. C: kmtk models carry theirs; LIBSVM models do not, so -c is required
 * there (and overrides a kmtk model's). Class weights (-wLABEL) are not supported.
 * The data are read with kmtk's reader (plain or gzip). The kernel sums run in parallel
 * (OpenMP), in double.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "problem.h"
#include "svmlight.h"

enum kern { LINEAR, POLY, RBF, SIGMOID };

/* A binary kernel model: support vectors in CSR, coefficients, offset, kernel. */
typedef struct sv_model {
    int kmtk;           /* 1: kmtk model, 0: LIBSVM */
    enum kern kernel;
    double gamma, coef0, rho, c;
    int degree, has_c;
    double label[2];    /* label[0]: the class f(x) > 0 predicts */
    int64_t nsv, nnz;
    int64_t *ptr;       /* nsv + 1 */
    int32_t *idx;       /* 0-based */
    double *val, *coef, *sq; /* sq: ||s||^2 */
    int32_t n;          /* 1 + largest index */
} sv_model;

/* Prints the usage text. */
static void usage(FILE *f)
{
    fprintf(f,
        "Usage: libsvm_objective [-c C] MODEL_FILE DATA_FILE\n"
        "Prints \"objective = F\": the hinge-loss primal 1/2 sum c_s c_t K(s,t) + C sum_i\n"
        "max(0, 1 - y_i f(x_i)), f(x) = sum_s c_s K(s,x) - rho, of a binary LIBSVM (svm-train\n"
        "-s 0) or kmtk kernel model on DATA_FILE (svmlight; plain or gzip).\n"
        "  -c C   cost (required for LIBSVM models; kmtk models carry theirs)\n"
        "  -h     this text\n");
}

/* Parses a finite double; 0 on success. */
static int num(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (end == s || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Appends one support-vector line "coef i:v i:v ..." to m; 0 or an error code. */
static int sv_line(sv_model *m, char *line, const char *path, int lineno, int64_t *cap,
                   km_error *err)
{
    char *p = line, *end;
    double c = strtod(p, &end);
    if (end == p || !isfinite(c))
        return km_error_set(err, KM_EINPUT, "%s:%d: expected a coefficient", path, lineno);
    p = end;
    int64_t s = m->nsv;
    m->coef[s] = c;
    double sq = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || !*p)
            break;
        long j = strtol(p, &end, 10);
        if (end == p || *end != ':' || j < 1 || j > INT32_MAX - 1)
            return km_error_set(err, KM_EINPUT, "%s:%d: expected index:value", path, lineno);
        p = end + 1;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v))
            return km_error_set(err, KM_EINPUT, "%s:%d: bad value", path, lineno);
        p = end;
        if (m->nnz == *cap) {
            int64_t nc = 2 * *cap + 1024;
            int32_t *ni = realloc(m->idx, (size_t)nc * sizeof *ni);
            if (ni)
                m->idx = ni;
            double *nv = ni ? realloc(m->val, (size_t)nc * sizeof *nv) : NULL;
            if (!nv)
                return km_error_nomem(err, "support vectors");
            m->val = nv;
            *cap = nc;
        }
        m->idx[m->nnz] = (int32_t)(j - 1);
        m->val[m->nnz++] = v;
        sq += v * v;
        if (j > m->n)
            m->n = (int32_t)j;
    }
    m->sq[s] = sq;
    m->ptr[++m->nsv] = m->nnz;
    return KM_OK;
}

/* Reads a LIBSVM or kmtk binary kernel model; 0 or an error code. */
static int model_read(const char *path, sv_model *m, km_error *err)
{
    memset(m, 0, sizeof *m);
    m->kernel = RBF;
    m->degree = 3;
    m->nsv = -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t lcap = 0;
    int lineno = 0, rc = KM_OK, in_sv = 0, nr_class = -1, have_labels = 0, ended = 0;
    int64_t total = -1, cap = 0;
    while (!rc && getline(&line, &lcap, f) > 0) {
        lineno++;
        if (in_sv) {
            if (m->kmtk && !strncmp(line, "end", 3)) {
                ended = 1;
                break;
            }
            if (m->nsv == total) {
                rc = km_error_set(err, KM_EINPUT, "%s:%d: more support vectors than announced",
                                  path, lineno);
                break;
            }
            rc = sv_line(m, line, path, lineno, &cap, err);
            continue;
        }
        char key[64], rest[512];
        rest[0] = 0;
        if (sscanf(line, "%63s %511[^\n]", key, rest) < 1)
            continue;
        if (lineno == 1) {
            if (!strcmp(key, "kmtk-model"))
                m->kmtk = 1;
            else if (strcmp(key, "svm_type")) {
                rc = km_error_set(err, KM_EINPUT, "%s:1: neither a LIBSVM nor a kmtk model", path);
                break;
            }
        }
        if (!strcmp(key, "svm_type")) {
            if (strcmp(rest, "c_svc"))
                rc = km_error_set(err, KM_EINPUT, "%s:%d: svm_type %s: only c_svc", path, lineno, rest);
        } else if (!strcmp(key, "kernel_type") || !strcmp(key, "kernel")) {
            if (!strcmp(rest, "linear")) m->kernel = LINEAR;
            else if (!strcmp(rest, "polynomial") || !strcmp(rest, "poly")) m->kernel = POLY;
            else if (!strcmp(rest, "rbf")) m->kernel = RBF;
            else if (!strcmp(rest, "sigmoid")) m->kernel = SIGMOID;
            else rc = km_error_set(err, KM_EINPUT, "%s:%d: kernel %s not supported", path, lineno, rest);
        } else if (!strcmp(key, "gamma")) {
            if (num(rest, &m->gamma)) rc = km_error_set(err, KM_EINPUT, "%s:%d: bad gamma", path, lineno);
        } else if (!strcmp(key, "coef0")) {
            if (num(rest, &m->coef0)) rc = km_error_set(err, KM_EINPUT, "%s:%d: bad coef0", path, lineno);
        } else if (!strcmp(key, "degree")) {
            if (sscanf(rest, "%d", &m->degree) != 1) rc = km_error_set(err, KM_EINPUT, "%s:%d: bad degree", path, lineno);
        } else if (!strcmp(key, "rho")) {
            if (num(rest, &m->rho)) rc = km_error_set(err, KM_EINPUT, "%s:%d: bad rho (binary models only)", path, lineno);
        } else if (!strcmp(key, "C")) {
            if (num(rest, &m->c)) rc = km_error_set(err, KM_EINPUT, "%s:%d: bad C", path, lineno);
            m->has_c = 1;
        } else if (!strcmp(key, "solver")) {
            if (strcmp(rest, "kernel")) rc = km_error_set(err, KM_EINPUT, "%s:%d: solver %s: only kernel models", path, lineno, rest);
        } else if (!strcmp(key, "loss")) {
            if (strcmp(rest, "l1svm")) rc = km_error_set(err, KM_EINPUT, "%s:%d: loss %s: only l1svm (hinge)", path, lineno, rest);
        } else if (!strcmp(key, "nr_class")) {
            if (sscanf(rest, "%d", &nr_class) != 1 || nr_class != 2)
                rc = km_error_set(err, KM_EINPUT, "%s:%d: nr_class %s: binary models only", path, lineno, rest);
        } else if (!strcmp(key, "label") || !strcmp(key, "labels")) {
            double a, b;
            if (sscanf(rest, "%lf %lf", &a, &b) != 2)
                rc = km_error_set(err, KM_EINPUT, "%s:%d: expected two labels", path, lineno);
            /* LIBSVM: f > 0 predicts its first label; kmtk: its second (labels ascending). */
            m->label[0] = m->kmtk ? b : a;
            m->label[1] = m->kmtk ? a : b;
            have_labels = 1;
        } else if (!strcmp(key, "label_weights")) {
            double a, b;
            if (sscanf(rest, "%lf %lf", &a, &b) != 2 || a != 1 || b != 1)
                rc = km_error_set(err, KM_EINPUT, "%s:%d: class weights are not supported", path, lineno);
        } else if (!strcmp(key, "nr_w")) {
            if (strcmp(rest, "1")) rc = km_error_set(err, KM_EINPUT, "%s:%d: nr_w %s: one decision function only", path, lineno, rest);
        } else if (!strcmp(key, "total_sv") || !strcmp(key, "nr_sv")) {
            long long t;
            if (!strcmp(key, "nr_sv") && !m->kmtk)
                continue; /* LIBSVM's per-class counts */
            if (sscanf(rest, "%lld", &t) != 1 || t < 0)
                rc = km_error_set(err, KM_EINPUT, "%s:%d: bad %s", path, lineno, key);
            total = t;
        } else if (!strcmp(key, "SV") || !strcmp(key, "sv")) {
            if (total < 0 || !have_labels) {
                rc = km_error_set(err, KM_EINPUT, "%s:%d: no total_sv/nr_sv or labels before the vectors", path, lineno);
                break;
            }
            m->ptr = calloc((size_t)total + 1, sizeof *m->ptr);
            m->coef = malloc(((size_t)total + 1) * sizeof *m->coef);
            m->sq = malloc(((size_t)total + 1) * sizeof *m->sq);
            if (!m->ptr || !m->coef || !m->sq)
                rc = km_error_nomem(err, "support vectors");
            m->nsv = 0;
            in_sv = 1;
        }
    }
    free(line);
    if (!rc && !in_sv)
        rc = km_error_set(err, KM_EINPUT, "%s: no SV/sv line", path);
    if (!rc && m->nsv != total)
        rc = km_error_set(err, KM_EINPUT, "%s: %lld support vectors, %lld announced", path,
                          (long long)m->nsv, (long long)total);
    if (!rc && m->kmtk && !ended)
        rc = km_error_set(err, KM_EINPUT, "%s: no 'end' line (truncated?)", path);
    if (!rc && ferror(f))
        rc = km_error_set(err, KM_EINPUT, "%s: read error", path);
    fclose(f);
    return rc;
}

/* Kernel value from the dot product and the two squared norms. */
static inline double kval(const sv_model *m, double dot, double sqx, double sqs)
{
    switch (m->kernel) {
    case LINEAR: return dot;
    case POLY: return pow(m->gamma * dot + m->coef0, m->degree);
    case SIGMOID: return tanh(m->gamma * dot + m->coef0);
    default: return exp(-m->gamma * fmax(0, sqx + sqs - 2 * dot));
    }
}

/* f(x) without rho for the sparse row (idx, val, len): support vectors as dense columns St
 * (n x nsv, St[j * nsv + s]) when St is given, else sparse merges. dot: nsv scratch. */
static double decision(const sv_model *m, const double *St, const int32_t *idx,
                       const double *val, int64_t len, double *dot)
{
    double sqx = 0;
    for (int64_t k = 0; k < len; k++)
        sqx += val[k] * val[k];
    if (St) {
        memset(dot, 0, (size_t)m->nsv * sizeof *dot);
        for (int64_t k = 0; k < len; k++) {
            if (idx[k] >= m->n)
                continue;
            const double *col = St + (size_t)idx[k] * (size_t)m->nsv, v = val[k];
            for (int64_t s = 0; s < m->nsv; s++)
                dot[s] += v * col[s];
        }
    } else {
        for (int64_t s = 0; s < m->nsv; s++) {
            double d = 0;
            int64_t a = 0, b = m->ptr[s];
            while (a < len && b < m->ptr[s + 1]) {
                if (idx[a] < m->idx[b]) a++;
                else if (idx[a] > m->idx[b]) b++;
                else d += val[a++] * m->val[b++];
            }
            dot[s] = d;
        }
    }
    double f = 0;
    for (int64_t s = 0; s < m->nsv; s++)
        f += m->coef[s] * kval(m, dot[s], sqx, m->sq[s]);
    return f;
}

/* The primal objective (see the top comment); 0 or an error code. */
static int objective(const sv_model *m, const km_problem *p, const char *path, double c,
                     double *F, double *reg_out, double *loss_out, km_error *err)
{
    double *St = NULL;
    if ((double)m->n * (double)m->nsv <= 6e7) {
        St = calloc((size_t)m->n * (size_t)m->nsv + 1, sizeof *St);
        if (St)
            for (int64_t s = 0; s < m->nsv; s++)
                for (int64_t k = m->ptr[s]; k < m->ptr[s + 1]; k++)
                    St[(size_t)m->idx[k] * (size_t)m->nsv + (size_t)s] = m->val[k];
    }
    for (int64_t i = 0; i < p->l; i++)
        if (p->y[i] != m->label[0] && p->y[i] != m->label[1]) {
            free(St);
            return km_error_set(err, KM_EINPUT, "%s: row %lld: label %g is not one of the model's"
                                " labels %g %g", path, (long long)i + 1, p->y[i], m->label[0],
                                m->label[1]);
        }
    double reg = 0, loss = 0;
    int oom = 0;
#pragma omp parallel reduction(+ : reg, loss) reduction(| : oom)
    {
        double *dot = malloc(((size_t)m->nsv + 1) * sizeof *dot);
        if (!dot) {
            oom = 1;
        } else {
#pragma omp for schedule(dynamic, 16)
            for (int64_t s = 0; s < m->nsv; s++)
                reg += m->coef[s] * decision(m, St, m->idx + m->ptr[s], m->val + m->ptr[s],
                                             m->ptr[s + 1] - m->ptr[s], dot);
#pragma omp for schedule(dynamic, 64)
            for (int64_t i = 0; i < p->l; i++) {
                double f = decision(m, St, p->index + p->row_ptr[i], p->value + p->row_ptr[i],
                                    p->row_ptr[i + 1] - p->row_ptr[i], dot) - m->rho;
                double y = p->y[i] == m->label[0] ? 1 : -1;
                loss += fmax(0, 1 - y * f);
            }
            free(dot);
        }
    }
    free(St);
    if (oom)
        return km_error_nomem(err, "kernel sums");
    *reg_out = reg / 2;
    *loss_out = loss;
    *F = reg / 2 + c * loss;
    return KM_OK;
}

int main(int argc, char **argv)
{
    double c = 0;
    int have_c = 0, opt;
    opterr = 0;
    while ((opt = getopt(argc, argv, ":c:h")) != -1) {
        switch (opt) {
        case 'c':
            if (num(optarg, &c) || c <= 0) {
                fprintf(stderr, "libsvm_objective: -c: expected a positive number, got '%s'\n", optarg);
                return 1;
            }
            have_c = 1;
            break;
        case 'h': usage(stdout); return 0;
        case ':': fprintf(stderr, "libsvm_objective: option -%c needs a value (see -h)\n", optopt); return 1;
        default: fprintf(stderr, "libsvm_objective: unknown option -%c (see -h)\n", optopt); return 1;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "libsvm_objective: expected MODEL_FILE DATA_FILE (see -h)\n");
        return 1;
    }
    km_error err;
    km_error_clear(&err);
    sv_model m;
    km_problem *p = NULL;
    double F = 0, reg = 0, loss = 0;
    int rc = model_read(argv[optind], &m, &err);
    if (!rc && !have_c) {
        if (m.has_c)
            c = m.c;
        else
            rc = km_error_set(&err, KM_EINPUT,
                              "%s: a LIBSVM model does not record C: give -c", argv[optind]);
    }
    if (!rc)
        rc = km_svmlight_read(argv[optind + 1], &p, &err);
    if (!rc)
        rc = objective(&m, p, argv[optind + 1], c, &F, &reg, &loss, &err);
    if (!rc)
        printf("objective = %.17g\nregulariser = %.17g\nhinge sum = %.17g\nC = %.17g\nrho = %.17g\n"
               "support vectors = %lld\n", F, reg, loss, c, m.rho, (long long)m.nsv);
    else
        fprintf(stderr, "libsvm_objective: %s\n", err.msg);
    km_problem_free(p);
    free(m.ptr);
    free(m.idx);
    free(m.val);
    free(m.coef);
    free(m.sq);
    return rc;
}
