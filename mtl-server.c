/* mtl-server.c - command-line front end: the client-server multi-task learning server of
 * Dinuzzo's thesis ch. 5 (Algorithm 5), over TCP with a journal (doc/mtl-protocol.md). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "atomic.h"
#include "blas.h"
#include "cli.h"
#include "mtlserver.h"

static const char usage[] =
    "Usage: mtl-server [options]\n"
    "Collects triples (x, y, w) from the clients of many tasks and keeps the mixed-effect\n"
    "multi-task estimate up to date (Dinuzzo's thesis ch. 5, Algorithm 5); each client\n"
    "downloads the disclosed data (unique inputs, ybar, H) to compute its own estimate.\n"
    "Protocol: doc/mtl-protocol.md. Stops cleanly on SIGTERM or SIGINT.\n"
    "The model and its defaults are those of train -s mtl.\n"
    "options:\n"
    "  --port PORT      TCP port (default 7353; 0: any free port, see --port-file)\n"
    "  --bind ADDRESS   address to listen on (default 127.0.0.1)\n"
    "  -t KERNEL        common kernel K: linear (default), poly, rbf, laplacian, expdot,\n"
    "                   spline (as in train; sigmoid is refused: indefinite)\n"
    "  -g GAMMA         gamma of K (default 1/N with --features N, as train's 1/features;\n"
    "                   without --features a kernel with a gamma needs -g)\n"
    "  -d DEGREE        degree of poly (default 3)\n"
    "  -r COEF0         coef0 of poly (default 0)\n"
    "  --task-kernel K  individual kernel K~ (default linear)\n"
    "  --task-gamma G --task-coef0 C --task-degree D   parameters of K~ (defaults as -g,\n"
    "                   -r, -d)\n"
    "  --task-kernels FILE   tasks with their own K~_j: lines 'TASK KERNEL', KERNEL as in a\n"
    "                   kernel-list file (doc/kernel-list.md), e.g. '7 rbf gamma=0.5'; the\n"
    "                   other tasks use --task-kernel; a journal records them\n"
    "  --alpha ALPHA    weight of K in the mixed-effect kernel (5.2), in [0, 1] (default 0.5)\n"
    "  --lambda LAMBDA  regularization parameter (default 1)\n"
    "  --features N     refuse triples with a feature index above N (default: any up to\n"
    "                   --max-features)\n"
    "  -j, --journal FILE   accepted triples are appended before they are acknowledged\n"
    "                   and replayed at start (default: none, nothing survives a restart);\n"
    "                   locked while the server runs; damage refuses the start\n"
    "  --snapshot FILE  with -j: the state saved to FILE every --snapshot-every triples and\n"
    "                   at exit, loaded at start so that only the journal after it is\n"
    "                   replayed (default: the journal's name + .snap; none: no snapshots)\n"
    "  --snapshot-every N   triples between snapshots (default 100000; 0: only at exit)\n"
    "  --fsync POLICY   batch (one fdatasync per loop round, default), always (one per\n"
    "                   request), none (write() only: survives kill -9, not power loss)\n"
    "  --secrets FILE   secrets: lines 'TASK SECRET' (SECRET: 16 to 64 characters without\n"
    "                   blanks), '#' comments\n"
    "  --register       issue secrets to tasks without one (REGISTER), to the holder of the\n"
    "                   admin token only (needs --admin-token-file)\n"
    "  --admin-token-file FILE   the admin token: the first line of FILE, 16 to 64\n"
    "                   characters without blanks\n"
    "  --max-secrets N  secrets REGISTER issues at most (default 1000000)\n"
    "limits (doc/mtl-protocol.md):\n"
    "  --max-features N feature indices above N refused without --features (default 1048576)\n"
    "  --max-inputs N   unique inputs at most; a SEND beyond is refused (default 10000)\n"
    "  --max-message N  longest request frame accepted, bytes (default 16777216)\n"
    "  --max-clients N  connections at once (default 256)\n"
    "  --max-per-peer N connections from one address at once (default 32)\n"
    "  --idle-timeout S close a connection idle S seconds (default 300)\n"
    "  --io-timeout S   close a connection whose request frame is not complete S seconds after\n"
    "                   its first byte, or whose replies are not read for S seconds (default 30)\n"
    "  --conn-memory N  bytes of buffers of one connection (default 268435456)\n"
    "  --max-memory N   bytes of buffers of all connections (default 1073741824)\n"
    "  --auth-delay MS  a failed authentication is answered after MS ms (default 1000)\n"
    "  --max-auth-failures N   failed authentications per address per minute; beyond, every\n"
    "                   authentication from it is refused until the minute ends (default 20)\n"
    "  --port-file FILE write the port to FILE once listening\n"
    "  -q               no messages but errors\n"
    "  -h, --help       this help\n"
    "Spellings of the previous release, accepted with a warning until the next one:\n"
    "-p (--port), -b (--bind), -a (--alpha), -l (--lambda), -k (--secrets).\n";

static volatile sig_atomic_t stop;
static int wake[2] = {-1, -1};

/* Any thread may take the signal (OpenBLAS starts its own): the pipe wakes the loop. */
static void on_signal(int sig)
{
    (void)sig;
    int e = errno;
    stop = 1;
    if (write(wake[1], "", 1) < 0) {
        /* the pipe is full: the loop is already woken */
    }
    errno = e;
}

static void log_line(void *ctx, const char *msg)
{
    if (!*(int *)ctx)
        fprintf(stderr, "mtl-server: %s\n", msg);
}

static const char *port_file;

static int write_port(FILE *f, const void *ctx)
{
    return fprintf(f, "%d\n", *(const int *)ctx) < 0;
}

static void ready(void *ctx, int port)
{
    (void)ctx;
    km_error err;
    if (port_file && km_write_atomic(port_file, "port", write_port, &port, &err))
        km_cli_warn("%s", err.msg);
}

/* Reads the secrets file: lines "TASK SECRET". */
static void read_secrets(const char *path, km_mtl_server_config *cfg)
{
    FILE *f = fopen(path, "r");
    if (!f)
        km_cli_die(2, "%s: %s", path, strerror(errno));
    int64_t cap = 0, n = 0, *task = NULL;
    char **sec = NULL, *line = NULL;
    size_t len = 0;
    long long no = 0;
    ssize_t got;
    while ((got = getline(&line, &len, f)) > 0) {
        no++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#' || *p == '\n' || *p == '\r')
            continue;
        if ((size_t)got != strlen(line))
            km_cli_die(2, "%s:%lld: a NUL byte in the line", path, no);
        char *end;
        errno = 0;
        long long t = strtoll(p, &end, 10);
        if (errno == ERANGE)
            km_cli_die(2, "%s:%lld: task id out of the 64-bit range", path, no);
        char secret[KM_MTLP_SECRET_MAX + 2];
        int used = 0;
        if (end == p || (*end != ' ' && *end != '\t') ||
            sscanf(end, " %65[!-~]%n", secret, &used) != 1 ||
            strlen(secret) > KM_MTLP_SECRET_MAX || end[used + strspn(end + used, " \t\r\n")])
            km_cli_die(2, "%s:%lld: expected 'TASK SECRET' (SECRET: %d to %d characters "
                       "without blanks)", path, no, KM_MTLP_SECRET_MIN, KM_MTLP_SECRET_MAX);
        if (strlen(secret) < KM_MTLP_SECRET_MIN)
            km_cli_die(2, "%s:%lld: task %lld: a secret has at least %d characters (got %zu)",
                       path, no, t, KM_MTLP_SECRET_MIN, strlen(secret));
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            task = realloc(task, (size_t)cap * sizeof *task);
            sec = realloc(sec, (size_t)cap * sizeof *sec);
            if (!task || !sec)
                km_cli_die(3, "out of memory (secrets)");
        }
        task[n] = t;
        if (!(sec[n++] = strdup(secret)))
            km_cli_die(3, "out of memory (secrets)");
    }
    if (ferror(f))
        km_cli_die(2, "%s: %s", path, strerror(errno));
    fclose(f);
    free(line);
    cfg->nsecrets = n;
    cfg->secret_task = task;
    cfg->secret = sec;
}

/* A duration in seconds (decimals allowed) as milliseconds, 0.001 s to 1 day. */
static int seconds_ms(const char *opt, const char *v)
{
    double sec = km_cli_number(opt, v);
    if (!(sec >= 0.001 && sec <= 86400))
        km_cli_die(1, "%s: seconds from 0.001 to 86400 (got %s)", opt, v);
    return (int)(sec * 1000 + 0.5);
}

static km_kernel_type kernel_type(const char *opt, const char *name)
{
    int t = km_kernel_from_name(name);
    if (t < 0 || t == KM_KERNEL_PRECOMPUTED)
        km_cli_die(1, "%s: unknown kernel '%s'", opt, name);
    return (km_kernel_type)t;
}

/* A kernel parameter given for a kernel that does not use it is a usage error. */
static void check_used(const km_kernel *k, const char *which, const char *g, const char *r,
                       const char *d)
{
    int t = k->type;
    const char *name = km_kernel_name(k->type);
    if (g && (t == KM_KERNEL_LINEAR || t == KM_KERNEL_SPLINE))
        km_cli_die(1, "%s: the %s kernel %s has no gamma", g, name, which);
    if (r && t != KM_KERNEL_POLY && t != KM_KERNEL_SIGMOID)
        km_cli_die(1, "%s: the %s kernel %s has no coef0", r, name, which);
    if (d && t != KM_KERNEL_POLY)
        km_cli_die(1, "%s: the %s kernel %s has no degree", d, name, which);
}

int main(int argc, char **argv)
{
    km_cli_init("mtl-server");
    km_mtl_server_config cfg;
    km_mtl_server_config_default(&cfg);
    int quiet = 0;
    const char *secrets = NULL, *task_kernels = NULL, *token_file = NULL;
    const char *snapshot = NULL, *snap_every = NULL;
    cfg.snapshot_every = 100000;
    const char *g = NULL, *r = NULL, *d = NULL, *tg = NULL, *tr = NULL, *td = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() km_cli_value(argc, argv, &i)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (km_cli_option(a, "--port", "-p")) {
            cfg.port = (int)km_cli_integer(a, NEXT(), 0, 65535);
        } else if (km_cli_option(a, "--bind", "-b")) {
            cfg.bind = NEXT();
        } else if (!strcmp(a, "-t")) {
            cfg.param.K.type = kernel_type(a, NEXT());
        } else if (!strcmp(a, "-g")) {
            cfg.param.K.gamma = km_cli_number(a, NEXT());
            g = a;
        } else if (!strcmp(a, "-r")) {
            cfg.param.K.coef0 = km_cli_number(a, NEXT());
            r = a;
        } else if (!strcmp(a, "-d")) {
            cfg.param.K.degree = (int)km_cli_integer(a, NEXT(), 1, 100);
            d = a;
        } else if (!strcmp(a, "--task-kernel")) {
            cfg.param.Kt.type = kernel_type(a, NEXT());
        } else if (!strcmp(a, "--task-gamma")) {
            cfg.param.Kt.gamma = km_cli_number(a, NEXT());
            tg = a;
        } else if (!strcmp(a, "--task-coef0")) {
            cfg.param.Kt.coef0 = km_cli_number(a, NEXT());
            tr = a;
        } else if (!strcmp(a, "--task-degree")) {
            cfg.param.Kt.degree = (int)km_cli_integer(a, NEXT(), 1, 100);
            td = a;
        } else if (!strcmp(a, "--task-kernels")) {
            task_kernels = NEXT();
        } else if (km_cli_option(a, "--alpha", "-a")) {
            cfg.param.alpha = km_cli_number(a, NEXT());
        } else if (km_cli_option(a, "--lambda", "-l")) {
            cfg.param.lambda = km_cli_number(a, NEXT());
        } else if (!strcmp(a, "--features")) {
            cfg.n_features = (int32_t)km_cli_integer(a, NEXT(), 1, INT32_MAX);
        } else if (!strcmp(a, "-j") || !strcmp(a, "--journal")) {
            cfg.journal = NEXT();
        } else if (!strcmp(a, "--snapshot")) {
            snapshot = NEXT();
        } else if (!strcmp(a, "--snapshot-every")) {
            snap_every = a;
            cfg.snapshot_every = km_cli_integer(a, NEXT(), 0, INT64_MAX);
        } else if (!strcmp(a, "--fsync")) {
            const char *v = NEXT();
            if (!strcmp(v, "batch"))
                cfg.fsync_policy = KM_FSYNC_BATCH;
            else if (!strcmp(v, "always"))
                cfg.fsync_policy = KM_FSYNC_ALWAYS;
            else if (!strcmp(v, "none"))
                cfg.fsync_policy = KM_FSYNC_NONE;
            else
                km_cli_die(1, "--fsync: batch, always or none (got '%s')", v);
        } else if (km_cli_option(a, "--secrets", "-k")) {
            secrets = NEXT();
        } else if (!strcmp(a, "--register")) {
            cfg.allow_register = 1;
        } else if (!strcmp(a, "--max-message")) {
            cfg.max_message = (size_t)km_cli_integer(a, NEXT(), 64, UINT32_MAX - 8);
        } else if (!strcmp(a, "--max-clients")) {
            cfg.max_clients = (int)km_cli_integer(a, NEXT(), 1, 100000);
        } else if (!strcmp(a, "--admin-token-file")) {
            token_file = NEXT();
        } else if (!strcmp(a, "--max-secrets")) {
            cfg.max_secrets = km_cli_integer(a, NEXT(), 0, INT64_MAX);
        } else if (!strcmp(a, "--max-features")) {
            cfg.max_features = (int32_t)km_cli_integer(a, NEXT(), 1, INT32_MAX);
        } else if (!strcmp(a, "--max-inputs")) {
            cfg.max_inputs = km_cli_integer(a, NEXT(), 1, KM_MTL_MAX_INPUTS);
        } else if (!strcmp(a, "--max-per-peer")) {
            cfg.max_per_peer = (int)km_cli_integer(a, NEXT(), 1, 100000);
        } else if (!strcmp(a, "--idle-timeout")) {
            cfg.idle_timeout_ms = seconds_ms(a, NEXT());
        } else if (!strcmp(a, "--io-timeout")) {
            cfg.io_timeout_ms = seconds_ms(a, NEXT());
        } else if (!strcmp(a, "--conn-memory")) {
            cfg.conn_memory = (size_t)km_cli_integer(a, NEXT(), 65536, INT64_MAX);
        } else if (!strcmp(a, "--max-memory")) {
            cfg.total_memory = (size_t)km_cli_integer(a, NEXT(), 65536, INT64_MAX);
        } else if (!strcmp(a, "--auth-delay")) {
            cfg.auth_delay_ms = (int)km_cli_integer(a, NEXT(), 0, 600000);
        } else if (!strcmp(a, "--max-auth-failures")) {
            cfg.max_auth_failures = (int)km_cli_integer(a, NEXT(), 1, 1000000000);
        } else if (!strcmp(a, "--port-file")) {
            port_file = NEXT();
        } else if (!strcmp(a, "-q")) {
            quiet = 1;
        } else if (a[0] == '-') {
            km_cli_die(1, "unknown option '%s'", a);
        } else {
            km_cli_die(1, "unexpected argument '%s' (mtl-server takes options only)", a);
        }
#undef NEXT
    }
    if (!cfg.journal && (snapshot || snap_every))
        km_cli_die(1, "%s needs a journal (-j FILE)", snapshot ? "--snapshot" : "--snapshot-every");
    char *snap_default = NULL;
    if (snapshot && strcmp(snapshot, "none") && !strcmp(snapshot, cfg.journal))
        km_cli_die(1, "--snapshot: the journal's own name");
    if (snapshot) {
        cfg.snapshot = strcmp(snapshot, "none") ? snapshot : NULL;
    } else if (cfg.journal) {
        size_t n = strlen(cfg.journal) + 6;
        if (!(snap_default = malloc(n)))
            km_cli_die(3, "out of memory");
        snprintf(snap_default, n, "%s.snap", cfg.journal);
        cfg.snapshot = snap_default;
    }
    check_used(&cfg.param.K, "K (-t)", g, r, d);
    check_used(&cfg.param.Kt, "K~ (--task-kernel)", tg, tr, td);
    /* train's default gamma is 1/features: here the number of features is --features */
    if (!cfg.n_features && !g && cfg.param.K.type != KM_KERNEL_LINEAR &&
        cfg.param.K.type != KM_KERNEL_SPLINE && cfg.param.K.type != KM_KERNEL_SIGMOID)
        km_cli_die(1, "-t %s: give -g GAMMA (the default, 1/features as in train, needs "
                   "--features N)", km_kernel_name(cfg.param.K.type));
    if (!cfg.n_features && !tg && cfg.param.Kt.type != KM_KERNEL_LINEAR &&
        cfg.param.Kt.type != KM_KERNEL_SPLINE && cfg.param.Kt.type != KM_KERNEL_SIGMOID)
        km_cli_die(1, "--task-kernel %s: give --task-gamma G (the default, 1/features as in "
                   "train, needs --features N)", km_kernel_name(cfg.param.Kt.type));
    km_mtl_param_gamma(&cfg.param, cfg.n_features, g != NULL, tg != NULL);
    km_error err;
    km_mtl_tkernel *tk = NULL;
    if (task_kernels && km_mtl_read_task_kernels(task_kernels, &tk, &cfg.param.ntk, &err))
        km_cli_die(2, "%s", err.msg);
    cfg.param.tk = tk;
    if (km_mtl_param_check(&cfg.param, cfg.n_features, &err))
        km_cli_die(1, "%s", err.msg);
    if (cfg.allow_register && !token_file)
        km_cli_die(1, "--register needs --admin-token-file FILE: REGISTER is for the holder "
                   "of the admin token only");
    if (token_file && !cfg.allow_register)
        km_cli_die(1, "--admin-token-file without --register");
    if (cfg.max_message + 4 > cfg.conn_memory)
        km_cli_die(1, "--max-message %zu does not fit --conn-memory %zu", cfg.max_message,
                   cfg.conn_memory);
    if (cfg.total_memory < cfg.conn_memory)
        km_cli_die(1, "--max-memory %zu is below --conn-memory %zu", cfg.total_memory,
                   cfg.conn_memory);
    char *token = NULL;
    if (token_file) {
        token = km_cli_secret_file(token_file, KM_MTLP_SECRET_MAX, 0, 0);
        if (strlen(token) < KM_MTLP_SECRET_MIN)
            km_cli_die(2, "%s: the admin token has at least %d characters", token_file,
                       KM_MTLP_SECRET_MIN);
        cfg.admin_token = token;
    }
    if (secrets)
        read_secrets(secrets, &cfg);
    if (!cfg.nsecrets && !cfg.allow_register)
        km_cli_warn("no secrets (--secrets) and no --register: no client can authenticate");
    km_blas_threads(1);   /* one loop, one core; the other is the clients' */
    if (pipe2(wake, O_NONBLOCK | O_CLOEXEC) != 0)
        km_cli_die(3, "pipe: %s", strerror(errno));
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    cfg.log = log_line;
    cfg.ready = ready;
    cfg.ctx = &quiet;
    cfg.stop = &stop;
    cfg.wake_fd = wake[0];
    int rc = km_mtl_server_run(&cfg, &err);
    for (int64_t k = 0; k < cfg.nsecrets; k++)
        free(cfg.secret[k]);
    free((void *)cfg.secret);
    free((void *)cfg.secret_task);
    free(tk);
    free(snap_default);
    free(token);
    if (rc)
        km_cli_die(rc, "%s", err.msg);
    return 0;
}
