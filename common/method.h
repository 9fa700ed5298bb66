/* method.h - the method table (kmtk.h's km_method): what train, cross-validation and the
 * bindings dispatch on. A method is a module and a row here; the built-in rows are in
 * method.c, more come from km_method_register. */
#ifndef KM_METHOD_H
#define KM_METHOD_H

#include "kmtk.h"

/* The built-in methods' descriptors (their modules). */
extern const km_method km_method_l1svm, km_method_l2svm, km_method_rls, km_method_rla,
    km_method_svr, km_method_logreg, km_method_okl, km_method_mtl, km_method_mtmkl, km_method_polymkl;

/* The option of any registered method with this API name or flag (the first found). */
const km_option *km_option_find(const char *name_or_flag);

/* The method's option with this API name, or NULL. */
const km_option *km_method_option(const km_method *m, const char *name);

/* Checks one value against its option; KM_EUSAGE naming the flag. */
int km_option_check(const km_option *o, const char *value, km_error *err);

/* MIN:MAX:COUNT; 0 on success. */
int km_range_parse(const char *s, double *lo, double *hi, int *count);

/* Defaults come from m's table from now on (km_method_train does it). */
void km_params_use(const km_params *p, const km_method *m);

/* A copy of p (values, progress callback, method); NULL when out of memory. */
km_params *km_params_copy(const km_params *p, km_error *err);

/* The warm start of km_params_set_init, or NULL. */
const km_model *km_params_init(const km_params *p);

/* The instance weights of km_params_set_weights (NULL when none); *l gets their count. */
const double *km_params_weights(const km_params *p, int64_t *l);

/* km_method_cv_score with warm starts (models NULL: none): models[f] (k of them, NULL
 * entries: cold) starts fold f's training (methods with the option "init") and is replaced
 * by fold f's model (the caller frees them). The folds are the same for the same seed. */
int km_cv_score_warm(const km_method *m, const km_problem *P, const km_params *p, int folds,
                     const char *metric, km_model **models, double *value, km_report *rep,
                     km_error *err);

/* The i-th value set (in order): 1 with *name, *value, or 0 after the last. */
int km_params_each(const km_params *p, int i, const char **name, const char **value);

/* Adds a warning line to rep (printf-style); KM_EINTERNAL when out of memory. */
int km_report_warn(km_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends text to rep->text (printf-style). */
int km_report_say(km_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Shared options: the kernel of -t (no default: the method decides), its parameters, the
 * threads and the seed. */
extern const km_option km_opt_gamma, km_opt_degree, km_opt_coef0, km_opt_seed;

/* The kernel set by -t -g -d -r (type def_type when -t is not given, gamma def_gamma when
 * -g is not); KM_EUSAGE when kernel_check fails for n features. */
struct km_kernel;
int km_params_kernel(const km_params *p, int def_type, double def_gamma, int32_t n,
                     struct km_kernel *k, km_error *err);

#endif
