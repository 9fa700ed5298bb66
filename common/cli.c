/* cli.c - see cli.h. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic.h"
#include "method.h"
#include "metrics.h"
#include "numparse.h"
#include "report.h"

static const char *prog_name = "kmtk";

/* A signal that ends the program first removes the temporary files of unfinished atomic
 * writes (a killed `predict` leaves neither its output nor a PATH.tmp* behind), then ends it
 * as the signal would have (SA_RESETHAND: raise() after the return takes the default). */
static void on_fatal_signal(int sig)
{
    km_atomic_unlink_pending();
    raise(sig);
}

void km_cli_init(const char *prog)
{
    prog_name = prog;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old, sa = {0};
        sa.sa_handler = on_fatal_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);   /* nohup's ignored SIGHUP stays ignored */
    }
}

/* "PROG: KIND message" and a line end on stderr. */
static void say(const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: %s", prog_name, kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void km_cli_die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("", fmt, ap);
    va_end(ap);
    if (status == 1)
        fprintf(stderr, "Try '%s -h' for help.\n", prog_name);
    exit(status);
}

void km_cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("warning: ", fmt, ap);
    va_end(ap);
}

double km_cli_number(const char *opt, const char *s)
{
    char *end;
    int ok;
    double v = km_strtod_c(s, &end, &ok);
    if (!ok || end == s || *end || !isfinite(v))
        km_cli_die(1, "%s: expected a number, got '%s'", opt, s);
    return v;
}

long long km_cli_integer(const char *opt, const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        km_cli_die(1, "%s: expected an integer in [%lld, %lld], got '%s'", opt, lo, hi, s);
    return v;
}

long long km_cli_size(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    int shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'M')
        shift = 20;
    else if (*end == 'G')
        shift = 30;
    if (shift)
        end++;
    if (errno || end == s || *end || v < 1 || v > ((long long)1 << (62 - shift)))
        km_cli_die(1, "%s: expected a size in bytes (an integer >= 1, or with k, M or G), "
                   "got '%s'", opt, s);
    return v << shift;
}

void km_cli_check_stdout(void)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno ? errno : EIO;
        km_cli_die(2, "standard output: write error: %s", strerror(e));
    }
}

void km_cli_range(const char *opt, const char *s, double *lo, double *hi, int *count)
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        km_cli_die(1, "%s: expected MIN:MAX:COUNT", opt);
    strcpy(buf, s);
    char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2)
        km_cli_die(1, "%s: expected MIN:MAX:COUNT, got '%s'", opt, s);
    *c1 = *c2 = 0;
    *lo = km_cli_number(opt, buf);
    *hi = km_cli_number(opt, c1 + 1);
    *count = (int)km_cli_integer(opt, c2 + 1, 1, 100000);
    if (!(*lo > 0) || !(*hi >= *lo) || (*count > 1 && !(*hi > *lo)))
        km_cli_die(1, "%s: need 0 < MIN < MAX (MIN = MAX only with COUNT 1)", opt);
}

FILE *km_cli_open_out(const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        km_cli_die(2, "%s: %s", path, strerror(errno));
    return f;
}

void km_cli_discard(const char *path)
{
    struct stat sb;
    if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
        remove(path);
}

void km_cli_close_out(FILE *f, const char *path)
{
    int bad = ferror(f) != 0;
    bad |= f == stdout ? fflush(f) != 0 : fclose(f) != 0;
    if (bad) {
        km_cli_discard(path);
        km_cli_die(2, "write error on %s", f == stdout ? "standard output" : path);
    }
}

void km_cli_check_model_path(const char *data, const char *given)
{
    if (!given && strcmp(data, "-") == 0)
        km_cli_die(1, "reading standard input: give the model file name as 2nd argument");
}

char *km_cli_model_path(const char *data, const char *given)
{
    km_cli_check_model_path(data, given);
    const char *base = strrchr(data, '/');
    base = base ? base + 1 : data;
    char *path = given ? strdup(given) : malloc(strlen(base) + 7);
    if (!path)
        km_cli_die(3, "out of memory");
    if (!given)
        sprintf(path, "%s.model", base);
    return path;
}

int km_cli_option(const char *arg, const char *name, const char *old)
{
    if (strcmp(arg, name) == 0)
        return 1;
    if (!old || strcmp(arg, old) != 0)
        return 0;
    km_cli_warn("%s is deprecated, use %s (%s will be removed in the next release)", old, name,
                old);
    return 1;
}

/* 1 to max characters from '!' to '~'. */
static int secret_ok(const char *s, size_t len, int max)
{
    if (len < 1 || len > (size_t)max)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '!' || s[i] > '~')
            return 0;
    return 1;
}

char *km_cli_secret_file(const char *path, int max, long long task, int has_task)
{
    FILE *f = fopen(path, "r");
    if (!f)
        km_cli_die(2, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    int rd_err = ferror(f);
    fclose(f);
    if (n < 0) {
        free(line);
        if (rd_err)
            km_cli_die(2, "%s: %s", path, strerror(errno));
        km_cli_die(2, "%s: empty (expected the secret, or 'TASK SECRET')", path);
    }
    if ((size_t)n != strlen(line)) {   /* a NUL byte would cut the secret short */
        free(line);
        km_cli_die(2, "%s:1: a NUL byte in the line", path);
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
                     line[n - 1] == '\t'))
        line[--n] = 0;
    char *sec = line + strspn(line, " \t");
    char *blank = sec + strcspn(sec, " \t");
    if (*blank) {   /* TASK SECRET */
        char *end;
        errno = 0;
        long long t = strtoll(sec, &end, 10);
        if (errno || end != blank) {
            free(line);
            km_cli_die(2, "%s:1: expected the secret, or 'TASK SECRET'", path);
        }
        if (has_task && t != task) {
            free(line);
            km_cli_die(2, "%s:1: the secret of task %lld, not of task %lld", path, t, task);
        }
        sec = blank + strspn(blank, " \t");
    }
    if (!secret_ok(sec, strlen(sec), max)) {
        free(line);
        km_cli_die(2, "%s:1: a secret has 1 to %d characters without blanks", path, max);
    }
    char *out = strdup(sec);
    free(line);
    if (!out)
        km_cli_die(3, "out of memory");
    return out;
}

const char *km_cli_secret_env(const char *name, int max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return NULL;
    if (!secret_ok(v, strlen(v), max))
        km_cli_die(1, "%s: a secret has 1 to %d characters without blanks", name, max);
    return v;
}

double km_cli_now(void)
{
    return km_seconds();
}

/* ---- the options of train and train-mpi ---- */

const char *km_cli_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        km_cli_die(1, "option %s needs a value", argv[*i]);
    return argv[++*i];
}

void km_cli_train_parse(int argc, char **argv, const char *def_method, km_cli_train *o,
                        int (*extra)(void *user, int argc, char **argv, int *i), void *user)
{
    km_error err = {0};
    memset(o, 0, sizeof *o);
    const char *method_name = def_method;
    if (!(o->par = km_params_new()))
        km_cli_die(3, "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (extra && extra(user, argc, argv, &i))
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = 1;
        } else if (strcmp(a, "-s") == 0) {
            method_name = km_cli_value(argc, argv, &i);
            o->have_s = 1;
        } else if (strcmp(a, "-v") == 0) {
            o->folds = (int)km_cli_integer(a, km_cli_value(argc, argv, &i), 2, 1000000);
        } else if (strcmp(a, "--metric") == 0) {
            o->metric = km_cli_value(argc, argv, &i);
        } else if (strcmp(a, "-C") == 0) {
            o->search_C = 1;
        } else if (strcmp(a, "--grid") == 0) {
            o->grid = km_cli_value(argc, argv, &i);
        } else if (strcmp(a, "--grid-plot") == 0) {
            o->grid_plot = km_cli_value(argc, argv, &i);
        } else if (strcmp(a, "-q") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--max-line") == 0) {
            o->max_line = (size_t)km_cli_size(a, km_cli_value(argc, argv, &i));
        } else if (strncmp(a, "-w", 2) == 0 && a[2]) {   /* -wLABEL W */
            char v[256];
            snprintf(v, sizeof v, "%s:%s", a + 2, km_cli_value(argc, argv, &i));
            if (km_params_set(o->par, "weight", v, &err))
                km_cli_die(err.code, "%s", err.msg);
        } else if (a[0] == '-' && a[1]) {
            const km_option *opt = km_option_find(a);
            if (!opt)
                km_cli_die(1, "unknown option '%s'", a);
            const char *v = opt->type == KM_OPT_SWITCH ? "" : km_cli_value(argc, argv, &i);
            if (strcmp(a, "--alpha") == 0 && (strcmp(v, "trace") == 0 ||
                                              strcmp(v, "norm2") == 0)) {
                km_cli_warn("--alpha %s is deprecated: use --fp-step %s (--alpha is mtl's "
                            "weight of K)", v, v);
                a = "--fp-step";
            }
            if (km_params_set(o->par, a, v, &err))
                km_cli_die(err.code, "%s", err.msg);
        } else {
            if (o->nargs == 2)
                km_cli_die(1, "too many arguments");
            o->args[o->nargs++] = a;
        }
    }
    if (!(o->m = km_method_find(method_name))) {
        char names[512] = "";
        for (int i = 0; i < km_method_count(); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     km_method_name(km_method_at(i)));
        km_cli_die(1, "-s: unknown method '%s' (%s)", method_name, names);
    }
    if (o->help)
        return;
    if (km_method_check(o->m, o->par, &err))   /* before the count: "-c FILE" says what is wrong */
        km_cli_die(err.code, "%s", err.msg);
    if (o->nargs < 1)
        km_cli_die(1, "no data file given");
    if (o->folds && o->m->no_cv)
        km_cli_die(1, "-v does not apply to -s %s (%s)", o->m->name, o->m->no_cv);
    if (o->search_C && o->grid)
        km_cli_die(1, "-C and --grid: one search at a time");
    if (o->grid_plot && !o->grid)
        km_cli_die(1, "--grid-plot needs --grid");
    int search = o->search_C || o->grid;
    if (search && !o->folds)
        o->folds = 5;
    if (search && o->nargs == 2)
        km_cli_die(1, "%s reports and writes no model (train again with the best values)",
                   o->grid ? "--grid" : "-C");
    if (o->metric && !o->folds)
        km_cli_die(1, "--metric needs -v");
    if (km_metric_check(o->m, o->metric, &err))
        km_cli_die(err.code, "%s", err.msg);
    if (!o->folds)
        km_cli_check_model_path(o->args[0], o->nargs == 2 ? o->args[1] : NULL);
}

void km_cli_print_warnings(const km_report *rep)
{
    for (int w = 0; w < rep->nr_warnings && w < KM_CLI_MAX_WARNINGS; w++)
        km_cli_warn("%s", rep->warnings[w]);
    if (rep->nr_warnings > KM_CLI_MAX_WARNINGS)
        km_cli_warn("%d warnings in all (folds x classes)", rep->nr_warnings);
}

void km_cli_on_progress(void *user, const char *line)
{
    km_cli_progress *p = user;
    pthread_mutex_lock(&p->lock);
    double t = km_cli_now();
    if (t - p->last >= 1) {
        p->last = t;
        fprintf(stderr, "%s (%.1f s)\n", line, t - p->start);
    }
    pthread_mutex_unlock(&p->lock);
}
