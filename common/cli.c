/* cli.c - see cli.h. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "numparse.h"

static const char *prog_name = "kmtk";

void km_cli_init(const char *prog)
{
    prog_name = prog;
}

void km_cli_die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog_name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (status == 1)
        fprintf(stderr, "Try '%s -h' for help.\n", prog_name);
    exit(status);
}

void km_cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: warning: ", prog_name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
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

double km_cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
