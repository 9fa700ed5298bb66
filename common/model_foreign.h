/* model_foreign.h - the pieces LIBLINEAR's and LIBSVM's model readers share
 * (model_liblinear.c, model_libsvm.c): their headers are "key value" lines in any order up
 * to a line of its own ("w", "SV"), with lists of numbers whose counts come from an earlier
 * key (checked against the line's length before anything is allocated). */
#ifndef KM_MODEL_FOREIGN_H
#define KM_MODEL_FOREIGN_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* A foreign header being read: set format, end, keys, nkeys, io and line (the first line);
 * km_foreign_key then walks it. */
typedef struct km_foreign_header {
    const char *format;          /* the peer's name in messages: "LIBLINEAR", "LIBSVM" */
    const char *end;             /* the line that ends the header: "w", "SV" */
    const char *const *keys;     /* the keys the header may have (at most 32) */
    int nkeys;
    km_mio *io;
    const char *line;            /* the line being read */
    unsigned seen;               /* the keys read, one bit each */
    int started;                 /* 0 until the first line has been looked at */
} km_foreign_header;

/* The next header line (the first line at the first call): KM_OK with *key its key's index
 * in keys and *v its value (after the first blank), or *key = -1 at the end line; else the
 * error code (FILE:LINE:COL): a key given twice, a line without a blank, an unknown key, the
 * file ending before the end line. */
int km_foreign_key(km_foreign_header *h, int *key, const char **v);

/* n numbers separated by blanks (a trailing blank allowed) from p, in line, into x; KM_OK,
 * or an error naming the column ("expected what"). */
int km_foreign_numbers(km_mio *io, const char *line, const char *p, double *x, int64_t n,
                       const char *what);

/* A header list of count numbers (count < 0: nr_class not read yet) into *out (malloc'd,
 * count + 1); the line must be long enough (count numbers take at least 2 count - 1
 * characters) before anything is allocated. key names the list in messages, what the
 * numbers (km_foreign_numbers). */
int km_foreign_list(km_mio *io, const char *line, const char *v, int64_t count, double **out,
                    const char *key, const char *what, km_error *err);

/* After the last line the format has: KM_OK when only blank lines follow, else an error
 * ("unexpected text after the what"). */
int km_foreign_end(km_mio *io, const char *what);

/* The labels of a model read from a peer's file (model.h: the order that makes
 * km_model_predict_label give the peer's prediction): {-1, +1} for one-class, the file's
 * two labels swapped (a decision value > 0 means its first), more classes in the file's
 * order; none for regression (kclass 0). */
void km_foreign_labels(km_model *m, int oneclass, int kclass, const double *label);

/* The kinds' km_model_kind hooks for kmtk's own model files, which cannot hold them:
 * writing fails with errno ENOTSUP (km_model_write refuses the model: write the peer's
 * format with km_model_write_liblinear or km_model_write_libsvm), reading says
 * "liblinear models are read from LIBLINEAR's own files" (likewise libsvm). */
int km_foreign_write_body(const km_model *m, FILE *f);
int km_foreign_read_kmtk(km_mio *io, km_model *m, km_error *err);

#endif
