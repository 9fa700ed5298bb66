/* ovo.h - one-versus-one kernel classification (--multiclass ovo): a binary kernel model
 * for every pair of classes, predictions by their votes (LIBSVM's rule). */
#ifndef KM_OVO_H
#define KM_OVO_H

#include "kmtk.h"
#include "model.h"

/* The model kind "kernel_ovo": one expansion whose support vectors carry nr_class (nr_class
 * - 1) / 2 coefficients, the pairs (a, b), a < b in label order, in the order (0,1), (0,2),
 * ..., (0,k-1), (1,2), ... Its decision values (nr_w = nr_class) are the votes: pair (a, b)
 * votes b when its decision value is > 0, else a; the predicted label is the first class
 * with the most votes (ties: the smaller label), as km_model_predict_label picks. */
extern const km_model_kind km_kind_kernel_ovo;

/* The pairs' decision values of rows[0..count) of X (count * npairs, row-major). */
int km_ovo_pair_decisions(const km_model *m, const km_problem *X, const int64_t *rows,
                          int64_t count, double *dec, int threads, km_error *err);

/* Makes m (nr_class >= 3, nr_w = nr_class) an ovo model over the support vectors sv with
 * sv->l * npairs coefficients (both taken over, freed on failure too). */
int km_model_set_ovo(km_model *m, const km_kernel *k, km_problem *sv, double *coef,
                     km_error *err);

#endif
