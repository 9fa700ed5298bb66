/* example.c - the C API (common/kmtk.h) in a dozen lines: trains an RBF-kernel SVM on an
 * svmlight file, saves the model, reads it back and reports the training accuracy.
 * Usage: example DATA MODEL */
#include <stdio.h>
#include <stdlib.h>

#include "kmtk.h"

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: example DATA MODEL\n"), 1;
    km_problem *P = NULL;
    km_params *par = km_params_new();
    km_model *model = NULL, *back = NULL;
    km_report rep;
    km_error err;
    if (km_svmlight_read(argv[1], &P, &err) ||
        km_params_set(par, "kernel", "rbf", &err) || km_params_set(par, "C", "4", &err) ||
        km_method_train(km_method_find("l1svm"), P, par, &model, &rep, &err) ||
        km_model_write(model, argv[2], &err))
        return fprintf(stderr, "%s\n", err.msg), err.code;
    double *pred = malloc((size_t)P->l * sizeof *pred);
    if (!pred || km_model_read(argv[2], &back, &err) || km_predict(back, P, pred, &err))
        return fprintf(stderr, "%s\n", err.msg), 3;
    int64_t correct = 0;
    for (int64_t i = 0; i < P->l; i++)
        correct += pred[i] == P->y[i];
    printf("objective %.6g, gap %.2g, training accuracy %.2f%%\n", rep.objective, rep.gap,
           100.0 * (double)correct / (double)P->l);
    free(pred);
    km_report_free(&rep);
    km_model_free(model);
    km_model_free(back);
    km_params_free(par);
    km_problem_free(P);
    return 0;
}
