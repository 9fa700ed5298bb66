/* cli.h - what the command-line front ends share: messages, exits, option values, clocks.
 * The one module that prints and exits: only executables call it, never the library. */
#ifndef KM_CLI_H
#define KM_CLI_H

#include <stdio.h>

/* The program name used in messages ("train"); set once at the start of main. Also makes
 * SIGINT, SIGTERM and SIGHUP (unless ignored) remove unfinished atomic writes' temporary
 * files before they end the program. */
void km_cli_init(const char *prog);

/* Prints "PROG: message" on stderr (plus a hint to -h for usage errors) and exits with
 * status (1 usage, 2 bad input or I/O, 3 internal failure). */
void km_cli_die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Prints "PROG: warning: message" on stderr. */
void km_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The whole of s as a finite number (C locale), or a usage error naming opt. */
double km_cli_number(const char *opt, const char *s);

/* The whole of s as an integer in [lo, hi], or a usage error naming opt. */
long long km_cli_integer(const char *opt, const char *s, long long lo, long long hi);

/* A size in bytes: an integer with an optional suffix k, M or G (powers of 1024), in
 * [1, 2^62], or a usage error naming opt. */
long long km_cli_size(const char *opt, const char *s);

/* Flushes standard output; on a write error (a full disk, /dev/full) exits 2 with
 * "PROG: standard output: write error: reason". Front ends call it before exit 0. */
void km_cli_check_stdout(void);

/* MIN:MAX:COUNT (0 < MIN <= MAX, MIN = MAX only with COUNT 1), or a usage error naming
 * opt. */
void km_cli_range(const char *opt, const char *s, double *lo, double *hi, int *count);

/* Opens path for writing ("-": standard output), or exits 2 naming it. */
FILE *km_cli_open_out(const char *path);

/* Removes a partly written output if it is a regular file (never a device or stdout). */
void km_cli_discard(const char *path);

/* Flushes and closes f (standard output is only flushed); on a write error discards the
 * file and exits 2. */
void km_cli_close_out(FILE *f, const char *path);

/* The model file: given (when not NULL), else the data file's base name + ".model" in the
 * current directory; a usage error when the data come from standard input. Malloc'ed. */
char *km_cli_model_path(const char *data, const char *given);

/* km_cli_model_path's usage check alone, to run before the data are read (the path itself
 * is made when the model is written: an exit in between holds no allocation). */
void km_cli_check_model_path(const char *data, const char *given);

/* Whether arg is the option `name`, or `old`, its spelling of the previous release (old may
 * be NULL); for `old` it prints "PROG: warning: OLD is deprecated, use NAME (OLD will be
 * removed in the next release)" on stderr. */
int km_cli_option(const char *arg, const char *name, const char *old);

/* A secret (1 to max printable characters, no blanks) from the first line of the file at
 * path: "SECRET", or "TASK SECRET" (what mtl-client register prints), whose TASK must then
 * be `task` (when has_task). Exits 2 naming the file when it cannot be read or holds
 * anything else. Malloc'ed. */
char *km_cli_secret_file(const char *path, int max, long long task, int has_task);

/* The value of the environment variable `name` as a secret (1 to max printable characters,
 * no blanks), or NULL when it is unset or empty; exits 1 naming it when it is malformed. */
const char *km_cli_secret_env(const char *name, int max);

/* Seconds on a monotonic clock. */
double km_cli_now(void);

/* ---- the options of train and train-mpi (one loop, one set of checks) ---- */
#include <pthread.h>
#include "kmtk.h"

typedef struct km_cli_train {
    const km_method *m;        /* -s (the default method when not given) */
    km_params *par;            /* the methods' options, -wLABEL W */
    const char *args[2];       /* data file, model file */
    int nargs, have_s, help, quiet, folds, search_C;
    const char *metric, *grid, *grid_plot;
    size_t max_line;
} km_cli_train;

/* The next argument as the value of option argv[*i] (advancing *i), or a usage error. */
const char *km_cli_value(int argc, char **argv, int *i);

/* Parses train's command line into o (o->par made here; exits 1 on a usage error, 3 out
 * of memory). extra(user, argc, argv, &i), when not NULL, is asked first about each
 * argument: it returns 1 when the argument is its own (taking values by km_cli_value), 0
 * when not. Then the checks train makes before reading the data (-h returns with o->help
 * set and nothing checked). */
void km_cli_train_parse(int argc, char **argv, const char *def_method, km_cli_train *o,
                        int (*extra)(void *user, int argc, char **argv, int *i), void *user);

/* Prints rep's warnings on stderr: at most KM_CLI_MAX_WARNINGS, then their count. */
#define KM_CLI_MAX_WARNINGS 12
void km_cli_print_warnings(const km_report *rep);

/* A progress callback (km_params_progress): a line on stderr at most once a second, with
 * the seconds since start; lock: cross-validation folds report from several threads. */
typedef struct km_cli_progress {
    double start, last;
    pthread_mutex_t lock;
} km_cli_progress;
void km_cli_on_progress(void *user, const char *line);

#endif
