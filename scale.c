/* scale.c - command-line front end: scales svmlight features (svm-scale's habits; the
 * arithmetic and the parameter file are common/scale.c's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "cli.h"
#include "scale.h"
#include "svmlight.h"

static const char usage[] =
    "Usage: scale [options] data_file\n"
    "Scales the features of data_file (svmlight, plain or gzip; '-' = stdin) and writes\n"
    "svmlight text to standard output (or -o FILE). Labels, multi-output labels and qid:\n"
    "pass through (labels are scaled with -y).\n"
    "options:\n"
    "  -l lower     lower end of the feature range (default -1)\n"
    "  -u upper     upper end of the feature range (default +1)\n"
    "  -y lo hi     also scale the labels onto [lo, hi] (default: labels unchanged)\n"
    "  --standardize  each feature divided by its standard deviation (zeros stay zeros)\n"
    "  --center     with --standardize: subtract the mean first (the output becomes dense)\n"
    "  -s FILE      save the scaling parameters to FILE\n"
    "  -r FILE      restore the parameters from FILE (kmtk-scale's, or svm-scale -s's)\n"
    "  -o FILE      write the scaled data to FILE (whole or not at all) instead of stdout\n"
    "  -q           quiet: no warnings\n"
    "  --max-line BYTES  refuse lines longer than this (default 1G; k, M, G)\n"
    "  -h, --help   this help\n"
    "Range mode is svm-scale's arithmetic: x' = lower + (upper - lower) (x - min) / (max -\n"
    "min), absent entries counting as 0; a zero that maps to a non-zero value is written\n"
    "(use -l 0 for non-negative sparse data). Constant features, and with -r features the\n"
    "file has no parameters for, are dropped (scaled to 0), as svm-scale does.\n";

typedef struct job {
    const km_scale *s;
    const km_problem *P;
    int64_t nnz, dropped;
    int32_t first;
    km_error *err;
} job;

static int write_scaled(FILE *f, const void *ctx)
{
    job *j = (job *)ctx;
    return km_scale_write_data(j->s, j->P, f, &j->nnz, &j->dropped, &j->first, j->err);
}

int main(int argc, char **argv)
{
    km_cli_init("scale");
    km_scale s = {0};
    s.lower = -1;
    s.upper = 1;
    const char *save = NULL, *restore = NULL, *out = NULL, *data = NULL;
    int quiet = 0, have_range = 0;
    size_t max_line = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (km_cli_die(1, "option %s needs a value", a), ""))
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "-l") == 0) {
            s.lower = km_cli_number(a, NEXT());
            have_range = 1;
        } else if (strcmp(a, "-u") == 0) {
            s.upper = km_cli_number(a, NEXT());
            have_range = 1;
        } else if (strcmp(a, "-y") == 0) {
            s.y_lower = km_cli_number(a, NEXT());
            s.y_upper = km_cli_number(a, NEXT());
            s.y_scaling = 1;
        } else if (strcmp(a, "--standardize") == 0) {
            s.standardize = 1;
        } else if (strcmp(a, "--center") == 0) {
            s.center = 1;
        } else if (strcmp(a, "-s") == 0) {
            save = NEXT();
        } else if (strcmp(a, "-r") == 0) {
            restore = NEXT();
        } else if (strcmp(a, "-o") == 0) {
            out = NEXT();
        } else if (strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--max-line") == 0) {
            max_line = (size_t)km_cli_size(a, NEXT());
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else if (data) {
            km_cli_die(1, "too many arguments");
        } else {
            data = a;
        }
#undef NEXT
    }
    if (!data)
        km_cli_die(1, "no data file given");
    if (save && restore)
        km_cli_die(1, "cannot use -r and -s simultaneously");
    if (restore && (have_range || s.y_scaling || s.standardize || s.center))
        km_cli_die(1, "-r takes the mode and the ranges from %s: -l, -u, -y, --standardize "
                   "and --center do not apply", restore);
    if (s.center && !s.standardize)
        km_cli_die(1, "--center needs --standardize");
    if (s.standardize && have_range)
        km_cli_die(1, "-l/-u set the range mode's range; --standardize has none");
    if (!s.standardize && !(s.upper > s.lower))
        km_cli_die(1, "inconsistent lower/upper specification (need -l < -u)");
    if (s.y_scaling && !(s.y_upper > s.y_lower))
        km_cli_die(1, "inconsistent -y lower/upper specification (need lower < upper)");
    km_error err = {0};
    if (restore && km_scale_load(restore, &s, &err))
        km_cli_die(err.code, "%s", err.msg);
    km_problem *P = NULL;
    if (km_svmlight_read_max(data, max_line, &P, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (restore && s.y_scaling && km_problem_nout(P) > 1)
        km_cli_die(2, "%s: -y scaling (from %s) applies to single labels; the data have %d "
                   "outputs per row", data, restore, (int)km_problem_nout(P));
    if (!restore && km_scale_fit(&s, P, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (save && km_scale_save(&s, save, &err))
        km_cli_die(err.code, "%s", err.msg);
    job j = {&s, P, 0, 0, -1, &err};
    if (out) {
        if (km_write_atomic(out, "scaled data", write_scaled, &j, &err))
            km_cli_die(err.code, "%s", err.msg);
    } else if (write_scaled(stdout, &j)) {
        km_cli_die(err.code ? err.code : 2, "%s", err.code ? err.msg : "standard output: "
                   "write error");
    }
    if (!quiet && restore && j.dropped > 0)   /* (fitted: only constant features drop) */
        km_cli_warn("%lld entries of %s have a feature without scaling parameters in %s (the "
                    "first: feature %lld): dropped (scaled to 0), as svm-scale does",
                    (long long)j.dropped, data, restore,
                    (long long)j.first + 1);
    if (!quiet && !s.standardize && j.nnz > P->nnz)
        km_cli_warn("original #nonzeros %lld > new #nonzeros %lld: if feature values are "
                    "non-negative and sparse, use -l 0 rather than the default -l -1",
                    (long long)P->nnz, (long long)j.nnz);
    km_problem_free(P);
    km_scale_free(&s);
    km_cli_check_stdout();
    return 0;
}
