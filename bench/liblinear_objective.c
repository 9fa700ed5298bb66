/* liblinear_objective.c - the primal objective of a LIBLINEAR model on a data file.
 *
 *   liblinear_objective -s LOSS [-c C] [-p P] MODEL_FILE DATA_FILE
 *
 * prints "objective = F" with, for the model's weights w (bias weight included when the
 * model has bias >= 0: each row then gets the extra feature value bias, and the bias
 * weight is regularised, as LIBLINEAR 2.x does):
 *   l1svm  F(w) = ||w||^2/2 + C sum_i max(0, 1 - y_i w'x_i)           (liblinear -s 3)
 *   l2svm  F(w) = ||w||^2/2 + C sum_i max(0, 1 - y_i w'x_i)^2         (liblinear -s 1, 2)
 *   svr    F(w) = ||w||^2/2 + C sum_i max(0, |y_i - w'x_i| - P)       (liblinear -s 13)
 *   l2svr  F(w) = ||w||^2/2 + C sum_i max(0, |y_i - w'x_i| - P)^2     (liblinear -s 11, 12)
 *   logreg F(w) = ||w||^2/2 + C sum_i log(1 + exp(-y_i w'x_i))       (liblinear -s 0, 7)
 * For a classification model (a `label A B` line) y_i is +1 when the row's label is A,
 * the first label, and -1 when it is B: LIBLINEAR's decision value is for its first label,
 * so `label -1 1` models have w pointing to -1 and are handled here. Features beyond
 * the model's nr_feature get weight 0 (as liblinear-predict does).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "problem.h"
#include "svmlight.h"

enum loss { L1SVM, L2SVM, SVR, L2SVR, LOGREG };

/* A binary (one weight column) LIBLINEAR model. */
typedef struct ll_model {
    int nr_feature;
    double bias;        /* < 0: no bias feature */
    int has_labels;
    double label[2];    /* label[0] is the class w'x > 0 predicts */
    double *w;          /* nr_feature (+1 with bias) weights */
} ll_model;

/* Prints the usage text. */
static void usage(FILE *f)
{
    fprintf(f,
        "Usage: liblinear_objective -s LOSS [-c C] [-p P] MODEL_FILE DATA_FILE\n"
        "Prints \"objective = F\", the primal objective of a binary/regression LIBLINEAR\n"
        "model on DATA_FILE (svmlight; plain or gzip).\n"
        "  -s LOSS  l1svm (liblinear -s 3) | l2svm (-s 1, 2) | svr (-s 13) | l2svr (-s 11, 12)\n"
        "           | logreg (-s 0, 7)\n"
        "  -c C     cost (default 1)\n"
        "  -p P     epsilon of the SVR losses (default 0.1)\n"
        "  -h       this text\n");
}

/* Parses a finite double; returns 0 on success. */
static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Reads a LIBLINEAR text model (header up to "w", then the weights); 0 or an error code. */
static int model_read(const char *path, ll_model *m, km_error *err)
{
    memset(m, 0, sizeof *m);
    m->nr_feature = -1;
    m->bias = -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return km_error_set(err, KM_EINPUT, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int nr_class = -1, lineno = 0, seen_w = 0, multi = 0, rc = KM_OK;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        char key[64], rest[256];
        rest[0] = 0;
        if (sscanf(line, "%63s %255[^\n]", key, rest) < 1)
            continue;
        if (!strcmp(key, "w")) {
            seen_w = 1;
            break;
        } else if (!strcmp(key, "solver_type")) {
            multi = !strncmp(rest, "MCSVM_CS", 8);
        } else if (!strcmp(key, "nr_class")) {
            if (sscanf(rest, "%d", &nr_class) != 1)
                rc = km_error_set(err, KM_EINPUT, "%s:%d: bad nr_class", path, lineno);
        } else if (!strcmp(key, "nr_feature")) {
            if (sscanf(rest, "%d", &m->nr_feature) != 1 || m->nr_feature < 0)
                rc = km_error_set(err, KM_EINPUT, "%s:%d: bad nr_feature", path, lineno);
        } else if (!strcmp(key, "bias")) {
            if (sscanf(rest, "%lf", &m->bias) != 1)
                rc = km_error_set(err, KM_EINPUT, "%s:%d: bad bias", path, lineno);
        } else if (!strcmp(key, "label")) {
            int k = sscanf(rest, "%lf %lf", &m->label[0], &m->label[1]);
            if (k != 2)
                rc = km_error_set(err, KM_EINPUT,
                                  "%s:%d: expected two labels (binary models only)", path, lineno);
            m->has_labels = 1;
        } /* other keys (e.g. rho) do not matter here */
        if (rc)
            break;
    }
    free(line);
    if (!rc && !seen_w)
        rc = km_error_set(err, KM_EINPUT, "%s: no 'w' line (not a LIBLINEAR model?)", path);
    if (!rc && m->nr_feature < 0)
        rc = km_error_set(err, KM_EINPUT, "%s: no nr_feature line", path);
    if (!rc && (nr_class != 2 || multi))
        rc = km_error_set(err, KM_EINPUT,
                          "%s: nr_class %d%s: only binary or regression models (one weight column)",
                          path, nr_class, multi ? " (Crammer-Singer)" : "");
    if (!rc) {
        size_t nw = (size_t)m->nr_feature + (m->bias >= 0);
        m->w = malloc((nw ? nw : 1) * sizeof *m->w);
        if (!m->w)
            rc = km_error_nomem(err, "model weights");
        for (size_t j = 0; !rc && j < nw; j++)
            if (fscanf(f, "%lf", &m->w[j]) != 1)
                rc = km_error_set(err, KM_EINPUT, "%s: expected %zu weights, found %zu",
                                  path, nw, j);
    }
    if (ferror(f) && !rc)
        rc = km_error_set(err, KM_EINPUT, "%s: read error", path);
    fclose(f);
    return rc;
}

/* Returns the primal objective of model m on problem p for the loss (see the top comment). */
static int objective(const ll_model *m, const km_problem *p, const char *path, enum loss loss,
                     double c, double eps, double *out, km_error *err)
{
    long double reg = 0, sum = 0;
    size_t nw = (size_t)m->nr_feature + (m->bias >= 0);
    for (size_t j = 0; j < nw; j++)
        reg += (long double)m->w[j] * m->w[j];
    for (int64_t i = 0; i < p->l; i++) {
        double d = 0;
        for (int64_t k = p->row_ptr[i]; k < p->row_ptr[i + 1]; k++)
            if (p->index[k] < m->nr_feature)
                d += m->w[p->index[k]] * p->value[k];
        if (m->bias >= 0)
            d += m->w[m->nr_feature] * m->bias;
        double y = p->y[i];
        if (m->has_labels) {
            if (y == m->label[0])
                y = 1;
            else if (y == m->label[1])
                y = -1;
            else
                return km_error_set(err, KM_EINPUT, "%s: row %lld: label %g is not one of the"
                                    " model's labels %g %g", path, (long long)i + 1, p->y[i],
                                    m->label[0], m->label[1]);
        } else if (loss == L1SVM || loss == L2SVM || loss == LOGREG) {
            return km_error_set(err, KM_EINPUT, "the model has no labels (a regression model):"
                                " use -s svr or l2svr");
        }
        double t;
        switch (loss) {
        case L1SVM: t = fmax(0, 1 - y * d); break;
        case L2SVM: t = fmax(0, 1 - y * d); t *= t; break;
        case SVR: t = fmax(0, fabs(y - d) - eps); break;
        case LOGREG: t = -y * d > 0 ? -y * d + log1p(exp(y * d)) : log1p(exp(-y * d)); break;
        default: t = fmax(0, fabs(y - d) - eps); t *= t; break;
        }
        sum += t;
    }
    *out = (double)(reg / 2 + (long double)c * sum);
    return KM_OK;
}

/* Parses options, reads the model and the data, prints the objective. */
int main(int argc, char **argv)
{
    const char *lossname = NULL;
    double c = 1, eps = 0.1;
    int opt;
    opterr = 0;
    while ((opt = getopt(argc, argv, ":s:c:p:h")) != -1) {
        switch (opt) {
        case 's': lossname = optarg; break;
        case 'c':
            if (parse_double(optarg, &c) || c <= 0) {
                fprintf(stderr, "liblinear_objective: -c: expected a positive number, got '%s'\n",
                        optarg);
                return 1;
            }
            break;
        case 'p':
            if (parse_double(optarg, &eps) || eps < 0) {
                fprintf(stderr, "liblinear_objective: -p: expected a number >= 0, got '%s'\n",
                        optarg);
                return 1;
            }
            break;
        case 'h': usage(stdout); return 0;
        case ':':
            fprintf(stderr, "liblinear_objective: option -%c needs a value (see -h)\n", optopt);
            return 1;
        default:
            fprintf(stderr, "liblinear_objective: unknown option -%c (see -h)\n", optopt);
            return 1;
        }
    }
    enum loss loss;
    if (!lossname) {
        fprintf(stderr, "liblinear_objective: -s LOSS is required (see -h)\n");
        return 1;
    } else if (!strcmp(lossname, "l1svm")) {
        loss = L1SVM;
    } else if (!strcmp(lossname, "l2svm")) {
        loss = L2SVM;
    } else if (!strcmp(lossname, "svr")) {
        loss = SVR;
    } else if (!strcmp(lossname, "l2svr")) {
        loss = L2SVR;
    } else if (!strcmp(lossname, "logreg")) {
        loss = LOGREG;
    } else {
        fprintf(stderr, "liblinear_objective: -s: unknown loss '%s' (l1svm, l2svm, svr, l2svr, logreg)\n",
                lossname);
        return 1;
    }
    if (argc - optind != 2) {
        fprintf(stderr, "liblinear_objective: expected MODEL_FILE DATA_FILE (see -h)\n");
        return 1;
    }

    km_error err;
    km_error_clear(&err);
    ll_model m;
    km_problem *p = NULL;
    double f = 0;
    int rc = model_read(argv[optind], &m, &err);
    if (!rc)
        rc = km_svmlight_read(argv[optind + 1], &p, &err);
    if (!rc)
        rc = objective(&m, p, argv[optind + 1], loss, c, eps, &f, &err);
    if (!rc)
        printf("objective = %.17g\n", f);
    else
        fprintf(stderr, "liblinear_objective: %s\n", err.msg);
    km_problem_free(p);
    free(m.w);
    return rc;
}
