/* kmtk.h - the kernel machines toolkit's C API, the whole of it on one page.
 *
 *   km_problem *P;  km_params *par = km_params_new();  km_model *M;  km_report rep;
 *   km_error err;
 *   km_svmlight_read("heart_scale", &P, &err);
 *   km_params_set(par, "kernel", "rbf", &err);  km_params_set(par, "C", "4", &err);
 *   km_method_train(km_method_find("l1svm"), P, par, &M, &rep, &err);
 *   km_model_write(M, "heart_scale.model", &err);
 *   km_predict(M, P, pred, &err);
 *
 * Every function that can fail returns KM_OK (0) or an error code, with a one-line message
 * in err (err may be NULL). Nothing here prints or exits. Ownership: an object a function
 * gives back through an out-pointer (km_problem **, km_model **, km_params *) belongs to
 * the caller, who frees it with its _free function; arguments are only borrowed. Objects
 * are not shared between threads while one of them changes them.
 * Link with -lkmtk (pkg-config --cflags --libs kmtk).
 */
#ifndef KMTK_H
#define KMTK_H

#include <stdint.h>
#include <stdio.h>

/* What this header declares is libkmtk.so's interface: exported (the library is built with
 * -fvisibility=hidden, so nothing else is). */
#pragma GCC visibility push(default)

#define KMTK_VERSION "0.2.0"

/* ---- errors ---- */

/* Codes double as the command-line tools' exit statuses. */
enum {
    KM_OK = 0,
    KM_EUSAGE = 1,    /* bad parameter or option value */
    KM_EINPUT = 2,    /* malformed input, I/O failure, damaged model file */
    KM_EINTERNAL = 3  /* out of memory, LAPACK failure, broken invariant */
};

typedef struct km_error {
    int code;
    char msg[1024];   /* "FILE:LINE:COL: what" when it comes from input */
} km_error;

/* ---- problems: labelled sparse rows ---- */

/* Rows in compressed sparse row form; feature indices 0-based (file index - 1), strictly
 * increasing within a row. */
typedef struct km_problem {
    int64_t l;          /* number of rows (examples) */
    int64_t nnz;        /* number of stored index:value pairs */
    int32_t n;          /* number of features = largest 1-based index seen */
    int64_t *row_ptr;   /* l + 1 offsets into index/value */
    int32_t *index;     /* nnz 0-based feature indices */
    double *value;      /* nnz values */
    double *y;          /* l * nout labels, row-major: y[i * nout + j] = output j of row i */
    int32_t nout;       /* outputs per row (svmlight "0.3,-1.2,0.7" labels); 0 means 1 */
    int64_t *qid;       /* l task ids (svmlight qid:), or NULL */
    int64_t *id;        /* l serial numbers of a precomputed kernel's rows (svmlight 0:ID,
                           1-based: row i holds K(x_id[i], x_j) at column j), or NULL */
} km_problem;

/* Reads svmlight/libsvm text (plain or gzip; "-" is standard input) into a new problem. */
int km_svmlight_read(const char *path, km_problem **out, km_error *err);

/* A new problem copied from CSR arrays: l rows, row_ptr[l + 1], 0-based increasing
 * index[] with values (finite), one label y[i] per row, qid NULL or l task ids. n = the
 * number of features (at least the largest index + 1). */
int km_problem_from_csr(int64_t l, int32_t n, const int64_t *row_ptr, const int32_t *index,
                        const double *value, const double *y, const int64_t *qid,
                        km_problem **out, km_error *err);

/* KM_OK when a problem built by the caller (arrays it owns, e.g. a binding's views of
 * its own arrays) is well formed: row_ptr[0] = 0, row_ptr[l] = nnz, non-decreasing; in each
 * row 0-based increasing indices below n with finite values; l * nout finite labels; task
 * ids (qid, may be NULL) in 0..INT64_MAX as the reader's, or INT64_MIN (none). Functions
 * taking a km_problem read it only; they do not check it. */
int km_problem_check(const km_problem *P, km_error *err);

/* Frees a problem and everything it owns; NULL is fine. */
void km_problem_free(km_problem *P);

/* ---- parameters: name = value text, checked against the method when training ---- */

typedef struct km_params km_params;

/* An empty parameter set (every option at its default); NULL when out of memory. */
km_params *km_params_new(void);

/* Sets option name (its API name, e.g. "C", "kernel", "gamma", or its command-line flag,
 * e.g. "-c", "--rank") to value (text, as on the command line; "" for a switch). Options
 * marked repeatable (the class weight "weight", value "LABEL:W") add a value each time;
 * others replace it. KM_EUSAGE for a name no method knows. */
int km_params_set(km_params *p, const char *name, const char *value, km_error *err);

/* Instance weights (LIBSVM's weights extension): w[i] >= 0, finite, multiplies C of row i
 * of the problem trained on (l = its rows; copied; NULL clears). Weight 0 removes the row;
 * an integer weight k trains as k copies of the row. The same as the option "weights" (a
 * file, --weights FILE), which must not be set too. */
int km_params_set_weights(km_params *p, const double *w, int64_t l, km_error *err);

/* A warm start for the solvers that take one (l1svm, l2svm, rls, rla, svr, linear and
 * kernel): training starts from the coefficients that model m's decision values give
 * (c_i = -C_i dL(y_i, z_i)) and reaches the same optimum, in fewer sweeps when m is near it
 * (the model of a nearby C). m's classes must be the data's. m is borrowed: it must
 * outlive p's use; NULL clears. The same as the option "init" (--init MODEL_FILE). */
struct km_model;
void km_params_set_init(km_params *p, const struct km_model *m);

/* The value text of an option as set (the last one), or NULL when it is not set. */
const char *km_params_get(const km_params *p, const char *name);

/* Progress lines of long runs go to fn(user, line) (default: nowhere). */
void km_params_progress(km_params *p, void (*fn)(void *user, const char *line), void *user);

void km_params_free(km_params *p);

/* ---- methods ---- */

typedef struct km_method km_method;

/* The method called name ("l1svm", "l2svm", "rls", "rla", "svr", "okl", "mtl", ...), or
 * NULL. */
const km_method *km_method_find(const char *name);

/* The methods in table order: i in [0, km_method_count()). */
int km_method_count(void);
const km_method *km_method_at(int i);

/* Checks p against the method: every option set must be one the method takes (else
 * KM_EUSAGE naming the option and the method) with a valid value. */
int km_method_check(const km_method *m, const km_params *p, km_error *err);

/* The method's name, its one-line help, and its help: a line per option with its default
 * (malloc'ed text). */
const char *km_method_name(const km_method *m);
const char *km_method_summary(const km_method *m);
char *km_method_help(const km_method *m);

/* 1 when the method's labels are classes (accuracy), 0 for regression (squared error). */
int km_method_classifies(const km_method *m);

/* ---- training ---- */

/* What a run did, for a front end to show. */
typedef struct km_report {
    char *text;           /* summary lines ("objective = ..."), or NULL */
    int nr_warnings;
    char **warnings;      /* e.g. "class 3 stopped at the cap of ... macro-iterations" */
    double objective;     /* the method's objective (NaN: none) */
    double gap;           /* the largest relative duality gap (NaN: none) */
    int converged;        /* 0 if a stopping rule gave up (an iteration cap) */
} km_report;

void km_report_free(km_report *r);

typedef struct km_model km_model;

/* Trains the method on P with parameters p (NULL: all defaults). rep may be NULL. */
int km_method_train(const km_method *m, const km_problem *P, const km_params *p,
                    km_model **out, km_report *rep, km_error *err);

/* k-fold cross-validation (folds stratified by class for classification, drawn with the
 * parameter "seed"): pred[i] = the prediction for row i by the model that did not see it;
 * rep gets the folds' warnings. KM_EUSAGE for methods without it (see km_method_help). */
int km_method_cross_validate(const km_method *m, const km_problem *P, const km_params *p,
                             int folds, double *pred, km_report *rep, km_error *err);

/* k-fold cross-validation scored by metric: "accuracy" (%), "f1" (two classes: of the larger
 * label; more: the mean over the classes), "auc" (two classes, the larger positive: the area
 * under the ROC curve of the folds' decision values), "mse"; NULL: accuracy for classifiers,
 * mse for regression. *value gets the score; rep->text the line(s) "Cross Validation NAME =
 * x" (mse adds the squared correlation). KM_EUSAGE for a metric that does not fit the method
 * or the data. */
int km_method_cv_score(const km_method *m, const km_problem *P, const km_params *p, int folds,
                       const char *metric, double *value, km_report *rep, km_error *err);

/* KM_OK when metric (NULL: the default) can score m, else KM_EUSAGE saying why. */
int km_metric_check(const km_method *m, const char *metric, km_error *err);

/* 1 when a larger value of the metric is better (all but mse). */
int km_metric_higher_is_better(const char *metric);

/* ---- models ---- */

/* Writes a model atomically (a temporary file in the same directory, then a rename). */
int km_model_write(const km_model *m, const char *path, km_error *err);

/* Reads a model written by any kmtk release of this format version; damaged files give
 * "PATH:LINE: reason". */
int km_model_read(const char *path, km_model **out, km_error *err);

void km_model_free(km_model *m);

/* Decision values of rows[0..count) of X (all rows if rows is NULL): dec gets count *
 * nr_w values, row-major. */
int km_model_decision_rows(const km_model *m, const km_problem *X, const int64_t *rows,
                           int64_t count, double *dec, int threads, km_error *err);

/* The predicted label (classification) or value (regression) from decision values. */
double km_model_predict_label(const km_model *m, const double *dec);

/* The outputs of a multi-output model (nr_output > 0) from its decision values. */
void km_model_outputs(const km_model *m, const double *dec, double *out);

/* pred[i] = the prediction for every row i of X (labels or values; multi-output models:
 * the first output). */
int km_predict(const km_model *m, const km_problem *X, double *pred, km_error *err);

/* Predictions of every row of X, bit for bit the predict tool's: decision values dec
 * (X->l * nr_w, row-major), labels or values pred (X->l; multi-output models: the first
 * output) and a multi-output model's outputs out (X->l * nr_output); any of them may be
 * NULL. Blocks of rows on threads threads (<= 0: the online cores); a row's task is
 * X->qid[i] (INT64_MIN, or X->qid NULL: none). */
int km_model_predict_all(const km_model *m, const km_problem *X, double *dec, double *pred,
                         double *out, int threads, km_error *err);

/* ---- RLS2 along a lambda path (the rls2-path tool without its test and validation files) ---- */

typedef struct km_rls2_options {
    const char *kernels;  /* basis kernels: "paper", "linear" or a kernel-list file */
    const char *scale;    /* scales s_k: "trace", "class", "microarray" or "none" */
    int center;           /* scales from the kernels centered in feature space */
    double lambda_min, lambda_max;
    int lambdas;          /* lambdas log-spaced in [lambda_min, lambda_max], from the largest */
    double tolerance;     /* rls2-path -e */
    int max_iter;         /* iterations per lambda */
    int task;             /* 1 classes, 0 regression, -1: as rls2-path guesses */
    int no_intercept;     /* regression: fit the outputs as they are */
    int folds;            /* k-fold cross-validation picks the lambda (0: the last lambda) */
    int one_se;           /* ... the largest within one standard error of the best */
    int64_t seed;         /* of the folds */
    int threads;          /* for kernel products */
} km_rls2_options;

/* rls2-path's defaults: paper, trace, 1e-6:1e6:30, 1e-2, 1000, task -1, seed 1, 1 thread. */
void km_rls2_options_default(km_rls2_options *o);

/* The model rls2-path writes for P with these options (bit for bit). */
int km_rls2_train(const km_problem *P, const km_rls2_options *o, km_model **out,
                  km_error *err);

/* ---- probabilities ---- */

/* 1 when m gives class probabilities: logistic regression (-s logreg: the sigmoid of the
 * decision values) and classifiers trained with -b 1 (Platt's sigmoid, fitted by 5-fold
 * cross-validation at training time). */
int km_model_has_probability(const km_model *m);

/* The class probabilities of one row from its nr_w decision values: prob[k] = P(class
 * m->labels[k] | x), k < nr_class, summing to 1. Two classes: p = sigmoid of the decision
 * value; one-versus-all: each class's sigmoid, normalised to sum 1. Only for a model with
 * km_model_has_probability. */
void km_model_probability(const km_model *m, const double *dec, double *prob);

/* prob[i * nr_class + k] = P(class m->labels[k] | row i of X) for every row i of X (X->l *
 * nr_class values, row-major, classes in the model's ascending label order). KM_EUSAGE
 * when the model has no probabilities (km_model_has_probability). */
int km_predict_proba(const km_model *m, const km_problem *X, double *prob, km_error *err);

/* ---- writing a method: a module and a row (km_method_register) ---- */

/* One option: its API name, command-line flag, kind of value and default. */
typedef enum {
    KM_OPT_NUMBER,   /* a finite number in [lo, hi] */
    KM_OPT_INT,      /* an integer in [lo, hi] */
    KM_OPT_CHOICE,   /* one of the words of choices ("a|b|c") */
    KM_OPT_TEXT,     /* any text (a file name) */
    KM_OPT_SWITCH,   /* no value */
    KM_OPT_RANGE,    /* MIN:MAX:COUNT, 0 < MIN <= MAX */
    KM_OPT_WEIGHT,   /* LABEL:W, W > 0, repeatable (-wLABEL W) */
    KM_OPT_OUTPUT    /* a file the method writes besides the model (a path table); where
                      * several processes train the same (train-mpi), one writes it */
} km_opt_type;

typedef struct km_option {
    const char *name;     /* API name ("C") */
    const char *flag;     /* command-line flag ("-c"); the same flag always has this name */
    const char *arg;      /* the value's name in help ("C"); NULL for a switch */
    km_opt_type type;
    double lo, hi;        /* range of NUMBER (lo excluded when lo_open) and INT values */
    int lo_open;
    const char *choices;  /* CHOICE: "word|word|..." */
    const char *def;      /* the default as value text; NULL: it depends on the data */
    const char *help;     /* one line: "cost", "degree of poly" */
} km_option;

/* Option values for a method's train function (p already checked by km_method_check):
 * the value set, else the option's default; NaN / 0 / NULL when neither exists. */
double km_param_number(const km_params *p, const char *name);
int64_t km_param_int(const km_params *p, const char *name);
const char *km_param_text(const km_params *p, const char *name);
int km_param_switch(const km_params *p, const char *name);
/* The i-th value of a repeatable option (NULL after the last). */
const char *km_param_value_at(const km_params *p, const char *name, int i);
/* A RANGE value: MIN, MAX, COUNT (the option checked it). */
void km_param_range(const km_params *p, const char *name, double *lo, double *hi, int *count);
/* 1 when the option was set (not its default). */
int km_param_is_set(const km_params *p, const char *name);
/* Sends a progress line to the callback of km_params_progress (printf-style). */
void km_param_progress(const km_params *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The model envelope: what every model file has; the body belongs to the kind. */
typedef struct km_model_kind km_model_kind;

struct km_model {
    const km_model_kind *kind;
    void *body;           /* the kind's data */
    int loss;             /* the loss it was trained with (a name in the file) */
    double C, eps;        /* cost and svr epsilon it was trained with */
    double bias;          /* < 0: no constant feature */
    int32_t n;            /* features 1..n were seen in training; later ones are ignored */
    int nr_class;         /* classification: classes >= 2, labels ascending; regression 0 */
    double *labels;       /* nr_class labels */
    double *label_weight; /* nr_class C multipliers */
    int nr_w;             /* decision values per row */
    int64_t nr_output;    /* > 0: a multi-output model with nr_output outputs per row */
    double *prob_A, *prob_B; /* NULL, or nr_w Platt parameters (train -b 1): decision value
                                k is positive with probability 1/(1 + exp(A_k f + B_k)) */
};

/* A model file being read: header keys of the kind, then its body lines. */
typedef struct km_mio km_mio;

/* The value of header key (marking it as the kind's), or NULL when the file has none. */
const char *km_mio_key(km_mio *io, const char *key);
/* The next line without its newline, or NULL at the end of the file (or when the header
 * has a key the kind did not take: then return km_mio_truncated's code). */
const char *km_mio_line(km_mio *io);
/* After km_mio_line gave NULL: KM_EINPUT "PATH: truncated model (what)" (printf-style), or
 * the header's error; returns the code. */
int km_mio_truncated(km_mio *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* KM_EINPUT "PATH:LINE: what" at the last line read (printf-style); returns the code. */
int km_mio_bad(km_mio *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Checks a count read from the file before anything is allocated for it: KM_OK when the
 * bytes left in the file can hold count items of at least bytes_each bytes, else KM_EINPUT
 * "PATH:LINE: NAME COUNT needs at least B bytes of WHAT; the file has L left" (the line
 * last read or keyed); returns the code. */
int km_mio_count(km_mio *io, const char *name, int64_t count, int64_t bytes_each,
                 const char *what);
/* Writes "key x\n" with x in the shortest text that reads back bit for bit. */
void km_mio_put(FILE *f, const char *key, double x);
/* Parses a number written by km_mio_put (or any decimal); 0 on success. */
int km_mio_number(const char *s, double *x);

struct km_model_kind {
    const char *name;     /* the file's "solver" value */
    const char *section;  /* the line that ends the header ("w", "sv", ...) */
    const char *body_name;/* what the body is, for messages ("weights") */
    /* header lines after "loss" (may be NULL) and the body after the labels; -1 on a
     * write error */
    int (*write_head)(const km_model *m, FILE *f);
    int (*write_body)(const km_model *m, FILE *f);
    /* takes its header keys, then reads its body lines (up to, not including, "end") */
    int (*read)(km_mio *io, km_model *m, km_error *err);
    void (*free_body)(km_model *m);
    int (*decision_rows)(const km_model *m, const km_problem *X, const int64_t *rows,
                         int64_t count, double *dec, int threads, km_error *err);
    /* multi-output kinds (nr_output > 0): outputs from decision values; else NULL */
    void (*outputs)(const km_model *m, const double *dec, double *out);
    /* multi-task kinds: 1 when a row of task qid (INT64_MIN: a row without qid) gets its own
     * task's model, 0 when it gets the average task; NULL for kinds without tasks */
    int (*has_task)(const km_model *m, int64_t qid);
};

/* A new model envelope of this kind (body NULL; labels zero, label weights 1). */
km_model *km_model_alloc(const km_model_kind *kind, int loss, int32_t n, int nr_class,
                         int nr_w, km_error *err);

struct km_method {
    const char *name;                 /* -s NAME */
    const char *help;                 /* one line */
    const km_option *const *options;  /* NULL-terminated: the options it takes */
    const km_model_kind *const *kinds;/* NULL-terminated: the kinds of model it makes */
    int classification;               /* labels are classes: CV stratifies and reports
                                         accuracy (else mean squared error) */
    const char *no_cv;                /* NULL, or why -v does not apply */
    /* trains on rows[0..count) of P (all rows when rows is NULL) */
    int (*train)(const km_problem *P, const int64_t *rows, int64_t count,
                 const km_params *p, km_model **out, km_report *rep, km_error *err);
};

/* Adds a method (and its model kinds) to the table; the struct must outlive its use.
 * KM_EUSAGE if the name is taken or an option's flag means another name elsewhere. */
int km_method_register(const km_method *m, km_error *err);

#pragma GCC visibility pop

#endif
