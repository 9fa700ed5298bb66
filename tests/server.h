/* server.h - a server program run by a unit test (test_mtlserver, test_journal): started
 * through /bin/sh in a child, waited for until it writes its port file, stopped by a
 * signal. */
#ifndef KM_TEST_SERVER_H
#define KM_TEST_SERVER_H

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Runs the shell command cmd in a child, *pid. */
static inline void server_spawn(const char *cmd, pid_t *pid)
{
    *pid = fork();
    if (*pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
}

/* Waits (tries x 20 ms at the most) for the server *pid to write its port (*port) to the
 * file pf: 0 once it listens, its exit status (128: a signal) if it exits first (*pid = -1),
 * -1 if neither. */
static inline int server_wait_port(const char *pf, pid_t *pid, int *port, int tries)
{
    for (int k = 0; k < tries; k++) {
        FILE *f = fopen(pf, "r");
        if (f) {
            int ok = fscanf(f, "%d", port) == 1;
            fclose(f);
            if (ok)
                return 0;
        }
        int st;
        if (waitpid(*pid, &st, WNOHANG) == *pid) {
            *pid = -1;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        }
        sleep_ms(20);
    }
    return -1;
}

/* SIGKILL to the server *pid, if there is one, and its end awaited (*pid = -1). */
static inline void server_kill(pid_t *pid)
{
    if (*pid > 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
        *pid = -1;
    }
}

/* Sends sig to the server *pid and waits (tries x 20 ms at the most, then SIGKILL: -1) for
 * its end (*pid = -1); its exit status (128 + the signal), -2 if none runs. */
static inline int server_stop(pid_t *pid, int sig, int tries)
{
    if (*pid < 0)
        return -2;
    kill(*pid, sig);
    for (int k = 0; k < tries; k++) {
        int st;
        if (waitpid(*pid, &st, WNOHANG) == *pid) {
            *pid = -1;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        sleep_ms(20);
    }
    server_kill(pid);
    return -1;
}

#endif
