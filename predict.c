/* predict.c - command-line front end: applies a model file to svmlight test rows. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metrics.h"
#include "model.h"
#include "svmlight.h"

static const char usage[] =
    "Usage: predict [options] test_file model_file output_file\n"
    "Writes one prediction per line of test_file (svmlight, plain or gzip; '-' = stdin)\n"
    "to output_file ('-' = stdout, metrics then go to stderr).\n"
    "options:\n"
    "  -d          write decision values instead of labels (one per class for\n"
    "              one-versus-all models, space-separated)\n"
    "  -q          quiet: do not print the metrics\n"
    "  -h, --help  this help\n"
    "Prints 'Accuracy = x% (a/b)' for classification models, 'Mean squared error = x'\n"
    "and 'Squared correlation coefficient = x' for regression models.\n";

int main(int argc, char **argv)
{
    km_cli_init("predict");
    int decision = 0, quiet = 0, nargs = 0;
    const char *args[3] = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "-d") == 0) {
            decision = 1;
        } else if (strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else if (nargs == 3) {
            km_cli_die(1, "too many arguments");
        } else {
            args[nargs++] = a;
        }
    }
    if (nargs != 3)
        km_cli_die(1, "expected test_file model_file output_file");
    km_error err = {0};
    km_model *model = NULL;
    if (km_model_read(args[1], &model, &err))
        km_cli_die(err.code, "%s", err.msg);
    km_svmlight_reader *r = km_svmlight_open(args[0], &err);
    if (!r)
        km_cli_die(err.code, "%s", err.msg);
    int to_stdout = strcmp(args[2], "-") == 0;
    FILE *out = to_stdout ? stdout : fopen(args[2], "w");
    if (!out)
        km_cli_die(2, "%s: %s", args[2], strerror(errno));
    FILE *info = to_stdout ? stderr : stdout;
    double *dec = malloc((size_t)model->nr_w * sizeof *dec);
    if (!dec)
        km_cli_die(3, "out of memory");
    km_metrics mt = {0};
    km_row row;
    int got;
    while ((got = km_svmlight_next(r, &row, &err)) == 1) {
        km_model_decision(model, row.index, row.value, row.nnz, dec);
        double p = km_model_predict_label(model, dec);
        km_metrics_add(&mt, row.y, p);
        if (decision) {
            for (int k = 0; k < model->nr_w; k++)
                fprintf(out, k ? " %.17g" : "%.17g", dec[k]);
            fputc('\n', out);
        } else {
            fprintf(out, "%.17g\n", p);
        }
    }
    if (got < 0)
        km_cli_die(err.code, "%s", err.msg);
    km_svmlight_close(r);
    if (fflush(out) != 0 || ferror(out) || (!to_stdout && fclose(out) != 0))
        km_cli_die(2, "%s: write error: %s", args[2], strerror(errno));
    if (!quiet) {
        if (model->nr_class > 0) {
            fprintf(info, "Accuracy = %g%% (%lld/%lld)\n", km_metrics_accuracy(&mt),
                    (long long)mt.correct, (long long)mt.n);
        } else {
            fprintf(info, "Mean squared error = %g (regression)\n", km_metrics_mse(&mt));
            fprintf(info, "Squared correlation coefficient = %g (regression)\n",
                    km_metrics_scc(&mt));
        }
    }
    free(dec);
    km_model_free(model);
    return 0;
}
