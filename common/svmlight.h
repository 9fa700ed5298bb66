/* svmlight.h - the one svmlight/libsvm parser: text (plain, gzip or stdin) -> rows or a problem. */
#ifndef KM_SVMLIGHT_H
#define KM_SVMLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "problem.h"

/*
 * Format, one example per line:  label [qid:N] idx:val idx:val ... [# comment]
 * The label may be a comma-separated list of outputs ("0.3,-1.2,0.7", no blanks), the
 * same number on every line (multi-output data, km_problem.nout).
 * Blank lines and comment-only lines are skipped; spaces/tabs in any run; CRLF accepted.
 * Indices are 1-based, strictly increasing, at most INT32_MAX; labels and values are
 * finite reals, parsed correctly rounded in any locale. Errors read
 * "FILE:LINE:COL: expected ..." (FILE is "<stdin>" for "-").
 */

/* One parsed row; index (0-based) and value point into the reader's buffers and stay
 * valid until the next call to km_svmlight_next or km_svmlight_close. */
typedef struct km_row {
    double y;            /* the label (the first output of a multi-output row) */
    int32_t nout;        /* number of outputs, ys[0..nout) (ys[0] == y) */
    const double *ys;
    int has_qid;
    int64_t qid;
    int64_t nnz;
    const int32_t *index;
    const double *value;
    int64_t line;        /* 1-based line number the row came from */
    int64_t id;          /* KM_IDS_TRAIN: the row's serial number (0:ID); else 0 */
} km_row;

typedef struct km_svmlight_reader km_svmlight_reader;

/* Opens path ("-" = standard input); gzip is detected by content. NULL + err on failure. */
km_svmlight_reader *km_svmlight_open(const char *path, km_error *err);

/* Reads the next row: returns 1 with *row filled, 0 at end of input, -1 on error
 * (err set; err->code is KM_EINPUT for bad input or I/O, KM_EINTERNAL for memory). */
int km_svmlight_next(km_svmlight_reader *r, km_row *row, km_error *err);

/* Lines longer than this (bytes before the '\n') are refused: "FILE:LINE: a line longer
 * than 1 GiB; --max-line raises the cap". */
#define KM_MAX_LINE ((size_t)1 << 30)

/* Sets the longest line r accepts (0: KM_MAX_LINE). */
void km_svmlight_set_max_line(km_svmlight_reader *r, size_t bytes);

/*
 * Precomputed kernels (LIBSVM's -t 4 convention). Feature index 0 is refused by default
 * (KM_IDS_NONE). KM_IDS_TRAIN: every row is "label 0:ID 1:K(x_ID,x_1) ... L:K(x_ID,x_L)":
 * first 0:ID, ID an integer in 1..L on no other row (the row's serial number: the column
 * of its own instance), then all L kernel values 1:..L: in order, L the same on every row
 * (the first row's); row->id gets ID. KM_IDS_TEST: "label [0:ANY] 1:K(x,x_1) ... L:K(x,x_L)",
 * the 0: value ignored (any token: LIBSVM's "0:?"), all L values (columns > 0: this L;
 * columns < 0: the first row's L, at least -columns; 0: the first row's). Faults are "FILE:LINE:COL: expected ..." input errors.
 */
enum { KM_IDS_NONE = 0, KM_IDS_TRAIN = 1, KM_IDS_TEST = 2 };
void km_svmlight_set_ids(km_svmlight_reader *r, int mode, int64_t columns);

/* Sets up r to read the rows model m predicts: a precomputed-kernel model's test rows
 * (KM_IDS_TEST with its L); nothing for other models. */
void km_svmlight_for_model(km_svmlight_reader *r, const km_model *m);

/* When m's kernel is precomputed: L > 0 (a test row needs exactly L kernel values, a kmtk
 * model's nr_feature) or -L < 0 (at least L: a LIBSVM model's largest support vector serial
 * number); else 0 (model_kernel.c, model_libsvm.c). */
int32_t km_model_precomputed(const km_model *m);
int32_t km_libsvm_precomputed(const km_model *m);

/* Closes the reader; NULL is fine. */
void km_svmlight_close(km_svmlight_reader *r);

/* Reads a whole file into a new problem (*out). An input with no rows is an error
 * ("FILE: no data"). Returns KM_OK or an error code with err set. */
int km_svmlight_read(const char *path, km_problem **out, km_error *err);

/* km_svmlight_read with lines of up to max_line bytes (0: KM_MAX_LINE). */
int km_svmlight_read_max(const char *path, size_t max_line, km_problem **out, km_error *err);

/* km_svmlight_read_max with the precomputed-kernel mode ids (KM_IDS_*): KM_IDS_TRAIN fills
 * P->id with each row's serial number. */
int km_svmlight_read_ids(const char *path, size_t max_line, int ids, km_problem **out,
                         km_error *err);

/* Reads the training data as parameters p need it: rows with 0:ID when p's kernel is
 * precomputed (-t precomputed or 4), plain svmlight rows otherwise. The one way the front
 * ends read training data. */
int km_svmlight_read_params(const km_params *p, const char *path, size_t max_line,
                            km_problem **out, km_error *err);

#endif
