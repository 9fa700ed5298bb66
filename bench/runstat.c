/* runstat.c - runs a command and records its wall time, CPU time and peak memory.
 *
 *   runstat OUTFILE COMMAND [ARG ...]
 *
 * Runs COMMAND (found on PATH; its stdin, stdout and stderr are runstat's), waits for it and
 * writes one line to OUTFILE: "wall user sys maxrss_kb status", seconds with microsecond
 * resolution (wall: CLOCK_MONOTONIC around fork/wait; user, sys and maxrss: wait4's rusage
 * of the command and the descendants it waited for, as /usr/bin/time reports them, but
 * with finer than its 10 ms). status is the exit code, or 128 + N after signal N. runstat
 * exits with that status; 127 when the command cannot be run, 125 on its own errors.
 * The benchmark scripts (bench/lib.bash) time every run through it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Monotonic wall-clock seconds. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double tv(struct timeval t)
{
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

int main(int argc, char **argv)
{
    if (argc < 3 || !strcmp(argv[1], "-h")) {
        fprintf(argc < 3 ? stderr : stdout,
            "Usage: runstat OUTFILE COMMAND [ARG ...]\n"
            "Runs COMMAND and writes \"wall user sys maxrss_kb status\" to OUTFILE.\n");
        return argc < 3 ? 125 : 0;
    }
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        fprintf(stderr, "runstat: %s: %s\n", argv[1], strerror(errno));
        return 125;
    }
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "runstat: fork: %s\n", strerror(errno));
        return 125;
    }
    if (pid == 0) {
        fclose(out);
        execvp(argv[2], argv + 2);
        fprintf(stderr, "runstat: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    /* The command gets the terminal's signals; runstat outlives it to write the line. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int st;
    struct rusage ru;
    pid_t r;
    while ((r = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR)
        ;
    double wall = now() - t0;
    if (r < 0) {
        fprintf(stderr, "runstat: wait4: %s\n", strerror(errno));
        return 125;
    }
    int status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 125;
    fprintf(out, "%.6f %.6f %.6f %ld %d\n", wall, tv(ru.ru_utime), tv(ru.ru_stime), ru.ru_maxrss, status);
    if (fclose(out) != 0) {
        fprintf(stderr, "runstat: %s: write error\n", argv[1]);
        return 125;
    }
    return status;
}
