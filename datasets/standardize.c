/* standardize.c - scales svmlight features to zero mean and unit standard deviation, with
 * the statistics of one reference file applied to every input (a training file's to its
 * test file, as in Dinuzzo's thesis, sections 4.5.1-4.5.3).
 *
 *   standardize [--stats-from REF] IN OUT [IN2 OUT2 ...]
 *
 * The reference is REF, or else the first IN. For each feature j = 1..n (n = the largest
 * index of the reference; absent entries count as 0):
 *   mean_j = sum_i x_ij / l,   sd_j = sqrt(sum_i (x_ij - mean_j)^2 / (l - 1))
 * (the sample standard deviation, as R's scale(), which ESL uses); every row of every
 * input becomes (x_ij - mean_j) / sd_j. A feature with sd_j = 0 is only centred (and
 * listed on stderr); an index above n (all zero in the reference) is copied unchanged.
 * Every feature of a row is written, except values that are exactly 0 (svmlight's
 * implicit zero), so rows become dense. Labels and qid: are kept; labels are printed in
 * the shortest of %.15g and %.17g that reads back to the same double, values with %.17g
 * (nothing is lost). Inputs are plain, gzip or '-' (standard input, once); OUT may be
 * '-' (standard output, once) but no output may be one of the inputs.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "numparse.h"
#include "svmlight.h"

#define LIST_MAX 10  /* zero-sd features named on stderr */

static const char usage[] =
    "Usage: standardize [--stats-from REF] IN OUT [IN2 OUT2 ...]\n"
    "Standardizes the features of svmlight files to zero mean and unit standard deviation.\n"
    "The means and sample standard deviations (divisor l - 1, as R's scale()) come from\n"
    "REF, or else from the first IN, and are applied to every IN, written to its OUT.\n"
    "Features with standard deviation 0 in the reference are only centred (listed on\n"
    "stderr); indices beyond the reference's largest are copied unchanged. Rows come out\n"
    "dense (exact zeros omitted), values printed with %.17g, labels unchanged.\n"
    "IN and REF may be gzip or '-' (standard input, once); OUT may be '-' (standard\n"
    "output, once); no OUT may be an input.\n"
    "  --stats-from REF  take the statistics from REF\n"
    "  -h, --help        this help\n";

/* The statistics: per feature the mean and the divisor (sd, or 1 when sd = 0). */
typedef struct stats {
    int32_t n;
    double *mean;
    double *scale;
} stats;

/* Computes the statistics of P (two passes: means, then squared deviations). */
static void compute_stats(const km_problem *P, const char *name, stats *st)
{
    int32_t n = P->n;
    st->n = n;
    /* n + 1: never a zero-size allocation, which may return NULL */
    st->mean = calloc((size_t)n + 1, sizeof *st->mean);
    st->scale = calloc((size_t)n + 1, sizeof *st->scale);
    int64_t *count = calloc((size_t)n + 1, sizeof *count);
    if (!st->mean || !st->scale || !count)
        km_cli_die(3, "out of memory");
    for (int64_t e = 0; e < P->nnz; e++)
        st->mean[P->index[e]] += P->value[e];
    for (int32_t j = 0; j < n; j++)
        st->mean[j] /= (double)P->l;
    double *ss = st->scale; /* sums of squared deviations, then the divisors */
    for (int64_t e = 0; e < P->nnz; e++) {
        double d = P->value[e] - st->mean[P->index[e]];
        ss[P->index[e]] += d * d;
        count[P->index[e]]++;
    }
    int32_t zero = 0;
    char list[LIST_MAX * 12 + 8] = "";
    size_t len = 0;
    for (int32_t j = 0; j < n; j++) {
        /* the l - count[j] absent entries are zeros: each adds mean^2 */
        double var = (ss[j] + (double)(P->l - count[j]) * st->mean[j] * st->mean[j])
                     / (double)(P->l - 1);
        ss[j] = var > 0 ? sqrt(var) : 0;
        if (ss[j] == 0) {
            ss[j] = 1;
            if (zero < LIST_MAX)
                len += (size_t)snprintf(list + len, sizeof list - len, " %d", (int)j + 1);
            else if (zero == LIST_MAX)
                len += (size_t)snprintf(list + len, sizeof list - len, " ...");
            zero++;
        }
    }
    if (zero)
        km_cli_warn("%s: %d feature%s with standard deviation 0, only centred:%s", name,
                    (int)zero, zero == 1 ? "" : "s", list);
    free(count);
}

/* Prints a label: %.15g when that reads back to v, else %.17g. */
static void put_label(FILE *f, double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v);
    int ok;
    if (km_strtod_c(buf, NULL, &ok) != v || !ok)
        snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, f);
}

/* Writes one standardized row; returns how many indices beyond st->n it copied. */
static int64_t put_row(FILE *f, const stats *st, double y, const int64_t *qid, int64_t nnz,
                       const int32_t *index, const double *value)
{
    put_label(f, y);
    if (qid)
        fprintf(f, " qid:%lld", (long long)*qid);
    int64_t e = 0;
    for (int32_t j = 0; j < st->n; j++) {
        double x = 0;
        if (e < nnz && index[e] == j)
            x = value[e++];
        double z = (x - st->mean[j]) / st->scale[j];
        if (z != 0)
            fprintf(f, " %d:%.17g", (int)j + 1, z);
    }
    int64_t beyond = nnz - e;
    for (; e < nnz; e++)
        fprintf(f, " %d:%.17g", (int)index[e] + 1, value[e]);
    fputc('\n', f);
    return beyond;
}

/* 1 when a and b name the same file (the same path, or the same existing file). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return 0;
    return strcmp(a, b) == 0
           || (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev
               && sa.st_ino == sb.st_ino);
}

int main(int argc, char **argv)
{
    km_cli_init("standardize");
    const char *ref = NULL;
    const char **args = malloc((size_t)argc * sizeof *args);
    if (!args)
        km_cli_die(3, "out of memory");
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            free(args);
            return 0;
        } else if (strcmp(a, "--stats-from") == 0) {
            if (i + 1 == argc)
                km_cli_die(1, "option %s needs a value", a);
            ref = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else {
            args[nargs++] = a;
        }
    }
    if (nargs == 0)
        km_cli_die(1, "no input given (arguments: IN OUT [IN2 OUT2 ...])");
    if (nargs % 2)
        km_cli_die(1, "input %s has no output file (arguments go in pairs IN OUT)",
                   args[nargs - 1]);
    int stdin_uses = ref && strcmp(ref, "-") == 0, stdout_uses = 0;
    for (int i = 0; i < nargs; i += 2) {
        stdin_uses += strcmp(args[i], "-") == 0;
        stdout_uses += strcmp(args[i + 1], "-") == 0;
        for (int j = 0; j < nargs; j += 2) {
            if (same_file(args[i + 1], args[j]) || (ref && same_file(args[i + 1], ref)))
                km_cli_die(1, "output %s is also an input", args[i + 1]);
            if (j != i && same_file(args[i + 1], args[j + 1]))
                km_cli_die(1, "output %s is given twice", args[i + 1]);
        }
    }
    if (stdin_uses > 1)
        km_cli_die(1, "standard input ('-') can be read only once");
    if (stdout_uses > 1)
        km_cli_die(1, "standard output ('-') can be written only once");

    /* the reference, kept in memory; without REF it is also the first input */
    km_error err = {0};
    km_problem *P = NULL;
    const char *ref_path = ref ? ref : args[0];
    if (km_svmlight_read(ref_path, &P, &err) || km_problem_single(P, ref_path, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (P->l < 2)
        km_cli_die(2, "%s: one row: the standard deviation needs at least two",
                   strcmp(ref_path, "-") == 0 ? "<stdin>" : ref_path);
    stats st;
    compute_stats(P, strcmp(ref_path, "-") == 0 ? "<stdin>" : ref_path, &st);

    for (int i = 0; i < nargs; i += 2) {
        const char *in = args[i], *out = args[i + 1];
        km_svmlight_reader *rd = NULL; /* none for the reference, which is in memory */
        if ((i > 0 || ref) && !(rd = km_svmlight_open(in, &err)))
            km_cli_die(err.code, "%s", err.msg);
        FILE *f = km_cli_open_out(out);
        int64_t beyond = 0;
        if (!rd) {
            for (int64_t r = 0; r < P->l; r++) {
                int64_t b = P->row_ptr[r];
                put_row(f, &st, P->y[r], P->qid ? &P->qid[r] : NULL, P->row_ptr[r + 1] - b,
                        P->index + b, P->value + b);
            }
        } else {
            km_row row;
            int rc;
            while ((rc = km_svmlight_next(rd, &row, &err)) == 1) {
                if (row.nout > 1) {
                    rc = -1;
                    km_error_set(&err, KM_EINPUT, "%s:%lld: %d outputs per row; standardize "
                                 "copies single labels only", in, (long long)row.line,
                                 (int)row.nout);
                    break;
                }
                beyond += put_row(f, &st, row.y, row.has_qid ? &row.qid : NULL, row.nnz,
                                  row.index, row.value);
            }
            km_svmlight_close(rd);
            if (rc < 0) {
                if (f != stdout) {
                    fclose(f);
                    km_cli_discard(out);
                }
                km_cli_die(err.code, "%s", err.msg);
            }
        }
        km_cli_close_out(f, out);
        if (beyond)
            km_cli_warn("%s: %lld value%s of features above %d (absent from the reference) "
                        "copied unchanged", strcmp(in, "-") == 0 ? "<stdin>" : in,
                        (long long)beyond, beyond == 1 ? "" : "s", (int)st.n);
    }
    free(st.mean);
    free(st.scale);
    km_problem_free(P);
    free(args);
    return 0;
}
