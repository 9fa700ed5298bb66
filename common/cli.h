/* cli.h - what the command-line front ends share: messages, exits, option values, clocks.
 * The one module that prints and exits: only executables call it, never the library. */
#ifndef KM_CLI_H
#define KM_CLI_H

/* The program name used in messages ("train"); set once at the start of main. */
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

/* Seconds on a monotonic clock. */
double km_cli_now(void);

#endif
