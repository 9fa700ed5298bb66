/* mtl-client.c - command-line front end: a client of mtl-server (Dinuzzo's thesis ch. 5):
 * sends a task's examples (active client), or computes its estimate from the disclosed data
 * and private examples that never leave the machine (Algorithm 9). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "blas.h"
#include "cli.h"
#include "imap.h"
#include "model.h"
#include "mtlproto.h"
#include "svmlight.h"

static const char usage[] =
    "Usage: mtl-client [options] COMMAND [FILE]\n"
    "A client of mtl-server (Dinuzzo's thesis ch. 5; protocol: doc/mtl-protocol.md).\n"
    "commands:\n"
    "  register           ask the server for a secret for task -T (server --register), with\n"
    "                     its admin token; prints 'TASK SECRET' (a file --secret-file reads)\n"
    "  send FILE          send the examples of FILE (svmlight; the task of a row is its qid,\n"
    "                     or -T for rows without one; weight 1) as triples (x, y, 1)\n"
    "  status             version, unique inputs n, task -T's inputs and triples, parameters\n"
    "                     (task_kernel: task -T's own individual kernel K~_j)\n"
    "  estimate FILE      task -T's estimate g_j from the disclosed data (Algorithm 9, with\n"
    "                     the task's K~_j as status reports it) and the task's examples in\n"
    "                     FILE: by default (--passive) examples the server never saw, added\n"
    "                     locally (Algorithm 5 on the client, they never leave it);\n"
    "                     --active: the examples this client sent. Written with --model as a\n"
    "                     model for predict (solver mtl, one task), and its values on the\n"
    "                     rows of --eval FILE with --eval-out OUT\n"
    "  estimate --passive without FILE: the non-personalised estimate (the common part of\n"
    "                     the disclosed data only; said on stdout); without --passive and\n"
    "                     without FILE, estimate refuses\n"
    "options:\n"
    "  --host HOST        server address (default 127.0.0.1)\n"
    "  --port PORT        server port (default 7353)\n"
    "  -T TASK            the task (an integer)\n"
    "  --secret-file FILE task -T's secret: the first line of FILE, 'SECRET' or 'TASK SECRET'\n"
    "  KMTK_SECRET        (environment) task -T's secret, when no --secret-file or --secret\n"
    "  --secret SECRET    task -T's secret on the command line (other users see it in ps:\n"
    "                     prefer --secret-file or KMTK_SECRET)\n"
    "  --secrets FILE     secrets of several tasks, lines 'TASK SECRET' (send)\n"
    "  --admin-token-file FILE   register: the server's admin token (first line of FILE;\n"
    "                     else the environment variable KMTK_ADMIN_TOKEN)\n"
    "  --active, --passive   see estimate\n"
    "  --model MODEL      estimate: model file\n"
    "  --eval FILE --eval-out OUT   estimate: write g_j of each row of FILE to OUT ('-':\n"
    "                     standard output), one per line\n"
    "  --batch N          send: at most N triples per request (default 4096)\n"
    "  --retry SECONDS    send: when the connection is lost or the server is busy, reconnect\n"
    "                     (pauses of 0.1 s doubling to 5 s) and send every request not yet\n"
    "                     acknowledged again (the server applies each once) for up to SECONDS\n"
    "                     (default 60; 0: fail at once)\n"
    "  -q                 no progress messages\n"
    "  -h, --help         this help\n"
    "Spellings of the previous release, accepted with a warning until the next one:\n"
    "-p (--port), -k (--secret), -K (--secrets), -o (--model), -e (--eval-out).\n";

typedef struct opts {
    const char *host;
    int port;
    int64_t task;
    int has_task;
    const char *secret;
    const char *secrets_file;
    int active;         /* 1 --active, 0 --passive, -1 neither given */
    const char *model, *eval, *eval_out;
    const char *token_file;
    int batch;
    double retry;       /* send: seconds to keep reconnecting after a lost connection */
    int quiet;
} opts;

/* Secrets of several tasks (--secrets). */
typedef struct secrets {
    km_imap of;
    char **s;
    int64_t n;
} secrets;

static void read_secrets(const char *path, secrets *S)
{
    FILE *f = fopen(path, "r");
    if (!f)
        km_cli_die(2, "%s: %s", path, strerror(errno));
    char *line = NULL, sec[KM_MTLP_SECRET_MAX + 2];
    size_t len = 0;
    long long no = 0, t;
    int64_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &len, f)) > 0) {
        no++;
        char *p = line + strspn(line, " \t");
        if (!*p || *p == '#' || *p == '\n' || *p == '\r')
            continue;
        if ((size_t)got != strlen(line))
            km_cli_die(2, "%s:%lld: a NUL byte in the line", path, no);
        char *end;
        errno = 0;
        t = strtoll(p, &end, 10);
        if (errno == ERANGE)
            km_cli_die(2, "%s:%lld: task id out of the 64-bit range", path, no);
        int used = 0;
        if (end == p || (*end != ' ' && *end != '\t') ||
            sscanf(p, "%lld %65[!-~]%n", &t, sec, &used) != 2 ||
            strlen(sec) > KM_MTLP_SECRET_MAX || p[used + strspn(p + used, " \t\r\n")])
            km_cli_die(2, "%s:%lld: expected 'TASK SECRET'", path, no);
        if (S->n == cap) {
            cap = cap ? 2 * cap : 64;
            if (!(S->s = realloc(S->s, (size_t)cap * sizeof *S->s)))
                km_cli_die(3, "out of memory (secrets)");
        }
        if (!(S->s[S->n] = strdup(sec)) || km_imap_put(&S->of, t, S->n))
            km_cli_die(3, "out of memory (secrets)");
        S->n++;
    }
    fclose(f);
    free(line);
}

static km_mtlp_conn *connect_or_die(const opts *o)
{
    km_error err;
    km_mtlp_conn *c = km_mtlp_connect(o->host, o->port, &err);
    if (!c)
        km_cli_die(2, "%s", err.msg);
    return c;
}

static void need_task(const opts *o, const char *cmd)
{
    if (!o->has_task)
        km_cli_die(1, "%s needs the task (-T)", cmd);
    if (!o->secret && strcmp(cmd, "register"))
        km_cli_die(1, "%s needs task %lld's secret (--secret-file FILE, KMTK_SECRET or "
                   "--secret)", cmd, (long long)o->task);
}

/* ---- send ---- */

typedef struct sender {
    const opts *o;
    km_mtlp_conn *c;
    km_buf b;           /* the requests not acknowledged: [head, sent) written, the rest not */
    size_t head, sent;
    uint32_t *counts;   /* triples of each closed request in b, oldest (at head) first */
    int q0, nq, qcap;   /* counts[q0 .. q0 + nq) */
    size_t frame;       /* the open SEND frame's offset, or SIZE_MAX */
    size_t count_at;    /* offset of its triple count */
    uint32_t count;
    int64_t task;
    uint64_t seq;       /* the last request's sequence number */
    int inflight;       /* requests written, replies not read */
    uint64_t version;
    int64_t acked;
    double outage;      /* when the connection was lost (0: it works) */
    double pause;       /* before the next reconnection */
    int64_t reconnects;
} sender;

#define WINDOW 32

static uint32_t frame_bytes(const unsigned char *p)
{
    return 4 + ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                (uint32_t)p[3] << 24);
}

/* The oldest request is acknowledged: it leaves b (applied now, or by an earlier connection
 * when it is a resent one: the server's sequence numbers keep it from being applied twice). */
static int on_ack(void *ctx, unsigned type, km_rd *r, km_error *err)
{
    sender *s = ctx;
    uint64_t v = km_rd_u64(r);
    km_rd_u32(r);   /* triples applied now: 0 for a resent request applied before */
    if (type != KM_MTLP_ACK || r->bad)
        return km_error_set(err, KM_EINPUT, "server: unexpected reply 0x%x to SEND", type);
    s->version = v;
    s->acked += s->counts[s->q0];
    s->head += frame_bytes(s->b.p + s->head);
    s->q0++;
    s->nq--;
    s->outage = 0;
    s->pause = 0.1;
    return KM_OK;
}

static void close_frame(sender *s)
{
    if (s->frame == SIZE_MAX)
        return;
    for (int i = 0; i < 4; i++)
        s->b.p[s->count_at + (size_t)i] = (unsigned char)(s->count >> (8 * i));
    km_buf_end(&s->b, s->frame);
    s->frame = SIZE_MAX;
    if (s->q0 + s->nq == s->qcap) {   /* room for one more count */
        if (s->q0 > 0) {
            memmove(s->counts, s->counts + s->q0, (size_t)s->nq * sizeof *s->counts);
            s->q0 = 0;
        } else {
            s->qcap = s->qcap ? 2 * s->qcap : 2 * WINDOW;
            if (!(s->counts = realloc(s->counts, (size_t)s->qcap * sizeof *s->counts)))
                km_cli_die(3, "out of memory (requests)");
        }
    }
    s->counts[s->q0 + s->nq++] = s->count;
    s->inflight++;
}

/* The connection is lost (or the server is busy): a new one, after a pause that doubles up
 * to 5 s, and every request not acknowledged is sent again; gives up --retry seconds after
 * the loss. */
static void reconnect(sender *s, const km_error *why, const char *what)
{
    double now = km_cli_now();
    if (!s->outage)
        s->outage = now;
    km_mtlp_close(s->c);
    s->c = NULL;
    km_error err = *why;
    for (;;) {
        if (now - s->outage + s->pause > s->o->retry)
            km_cli_die(2, "%s: %s%s", what, err.msg, s->o->retry > 0 ? " (gave up: --retry)" : "");
        km_cli_warn("%s: %s; reconnecting in %.1f s to send %d unacknowledged requests again",
                    what, err.msg, s->pause, s->nq);
        struct timespec ts = {(time_t)s->pause, (long)((s->pause - (time_t)s->pause) * 1e9)};
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
        s->pause = s->pause < 2.5 ? 2 * s->pause : 5;
        now = km_cli_now();
        if ((s->c = km_mtlp_connect(s->o->host, s->o->port, &err)))
            break;
    }
    s->reconnects++;
    s->sent = s->head;
    s->inflight = s->nq;
}

/* Writes the closed requests; reads replies down to `keep` in flight; on a lost connection
 * sends what is not acknowledged again on a new one (reconnect). */
static void flush(sender *s, int keep, const char *what)
{
    close_frame(s);
    for (;;) {
        km_error err;
        int rc = KM_OK;
        if (s->sent < s->b.len) {
            km_buf rest = {s->b.p + s->sent, s->b.len - s->sent, s->b.len - s->sent, 0};
            if (!(rc = km_mtlp_write(s->c, &rest, &err)))
                s->sent = s->b.len;
        }
        while (!rc && s->inflight > keep && !(rc = km_mtlp_read(s->c, on_ack, s, &err)))
            s->inflight--;
        if (!rc)
            break;
        if (!km_mtlp_retryable(s->c))
            km_cli_die(2, "%s: %s", what, err.msg);
        reconnect(s, &err, what);
    }
    if (s->head == s->b.len) {   /* all acknowledged: the buffer starts again */
        s->b.len = s->head = s->sent = 0;
        s->q0 = 0;
    } else if (s->head > (1u << 20)) {
        memmove(s->b.p, s->b.p + s->head, s->b.len - s->head);
        s->b.len -= s->head;
        s->sent -= s->head;
        s->head = 0;
    }
}

static int cmd_send(const opts *o, const char *path)
{
    secrets S = {0};
    if (o->secrets_file)
        read_secrets(o->secrets_file, &S);
    km_error err;
    km_svmlight_reader *rd = km_svmlight_open(path, &err);
    if (!rd)
        km_cli_die(2, "%s", err.msg);
    /* sequence numbers from the microseconds since 1970: above every earlier run's */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    sender s = {.o = o, .c = connect_or_die(o), .frame = SIZE_MAX, .pause = 0.1,
                .seq = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u};
    km_row row;
    int rc;
    int64_t rows = 0;
    double t0 = km_cli_now(), last = t0;
    while ((rc = km_svmlight_next(rd, &row, &err)) > 0) {
        int64_t task = row.has_qid ? row.qid : o->task;
        if (!row.has_qid && !o->has_task)
            km_cli_die(2, "%s:%lld: no qid: and no -T for the task", path, (long long)row.line);
        if (s.frame == SIZE_MAX || task != s.task || s.count >= (uint32_t)o->batch ||
            s.b.len > (1u << 20)) {
            close_frame(&s);
            if (s.b.len - s.sent > (1u << 20) || s.inflight >= WINDOW)
                flush(&s, WINDOW / 2, path);
            const char *secret = NULL;
            if (o->secret && o->has_task && task == o->task)
                secret = o->secret;
            int64_t k = km_imap_get(&S.of, task);
            if (!secret && k >= 0)
                secret = S.s[k];
            if (!secret)
                km_cli_die(2, "%s:%lld: no secret for task %lld (--secret-file with -T, or "
                           "--secrets)", path,
                           (long long)row.line, (long long)task);
            s.frame = km_buf_begin(&s.b, KM_MTLP_SEND);
            km_mtlp_put_auth(&s.b, task, secret);
            km_buf_u64(&s.b, ++s.seq);   /* a retried request is not applied twice */
            s.count_at = s.b.len;
            km_buf_u32(&s.b, 0);
            s.count = 0;
            s.task = task;
        }
        km_mtlp_put_triple(&s.b, row.y, 1.0, row.index, row.value, row.nnz);
        if (s.b.failed)
            km_cli_die(3, "out of memory (request)");
        s.count++;
        rows++;
        double now = km_cli_now();
        if (!o->quiet && now - last >= 1) {
            fprintf(stderr, "mtl-client: %lld triples read, %lld acknowledged (%.0f/s)\n",
                    (long long)rows, (long long)s.acked, s.acked / (now - t0));
            last = now;
        }
    }
    if (rc < 0)
        km_cli_die(err.code, "%s", err.msg);
    km_svmlight_close(rd);
    flush(&s, 0, path);
    double dt = km_cli_now() - t0;
    if (!o->quiet)
        fprintf(stderr, "mtl-client: %lld triples acknowledged in %.2f s (%.0f/s), server "
                "version %" PRIu64 "%s\n", (long long)s.acked, dt, dt > 0 ? s.acked / dt : 0.0,
                s.version, s.reconnects ? " (after reconnecting)" : "");
    km_buf_free(&s.b);
    free(s.counts);
    km_mtlp_close(s.c);
    for (int64_t k = 0; k < S.n; k++)
        free(S.s[k]);
    free(S.s);
    km_imap_free(&S.of);
    return 0;
}

/* ---- estimate ---- */

static void eval_rows(const km_mtl_estimate *e, const char *in, const char *out)
{
    km_error err;
    km_svmlight_reader *rd = km_svmlight_open(in, &err);
    if (!rd)
        km_cli_die(2, "%s", err.msg);
    FILE *f = km_cli_open_out(out);
    km_row row;
    int rc;
    while ((rc = km_svmlight_next(rd, &row, &err)) > 0)
        fprintf(f, "%.17g\n", km_mtl_estimate_eval(e, row.index, row.value, row.nnz));
    if (rc < 0) {
        km_cli_discard(out);
        km_cli_die(err.code, "%s", err.msg);
    }
    km_svmlight_close(rd);
    km_cli_close_out(f, out);
}

static int cmd_estimate(const opts *o, const char *path)
{
    need_task(o, "estimate");
    if (!o->model && !o->eval_out)
        km_cli_die(1, "estimate: nothing to write (--model MODEL and/or --eval FILE "
                   "--eval-out OUT)");
    if (!o->eval != !o->eval_out)
        km_cli_die(1, "estimate: --eval and --eval-out go together");
    if (!path && o->active == 1)
        km_cli_die(1, "estimate --active needs FILE: the examples this client sent");
    if (!path && o->active != 0)
        km_cli_die(1, "estimate: no FILE of task %lld's own examples: the estimate would not "
                   "be personalised (the common part of the disclosed data only); give FILE, "
                   "or --passive to ask for that estimate", (long long)o->task);
    km_error err;
    km_mtlp_conn *c = connect_or_die(o);
    km_mtlp_status st;
    km_mtl_disclosed d = {0};
    int changed;
    if (km_mtlp_get_status(c, o->task, o->secret, &st, &err) ||
        km_mtlp_get(c, o->task, o->secret, &d, &changed, &err))
        km_cli_die(2, "%s", err.msg);
    km_mtlp_close(c);
    km_mtl *s = km_mtl_from_disclosed(&st.param, &d, &err);   /* lines 1-7 */
    if (!s)
        km_cli_die(err.code, "%s", err.msg);
    int32_t nfeat = d.X->n;
    km_mtl_disclosed_free(&d);
    int64_t rows = 0;
    if (path) {   /* lines 8-12 (passive), or the task's own R_j (active) */
        km_svmlight_reader *rd = km_svmlight_open(path, &err);
        if (!rd)
            km_cli_die(2, "%s", err.msg);
        km_row row;
        int rc;
        double t0 = km_cli_now(), last = t0;
        while ((rc = km_svmlight_next(rd, &row, &err)) > 0) {
            double now = km_cli_now();
            if (!o->quiet && now - last >= 1) {
                fprintf(stderr, "mtl-client: %lld examples added (%.0f/s)\n", (long long)rows,
                        rows / (now - t0));
                last = now;
            }
            if (row.has_qid && row.qid != o->task)
                km_cli_die(2, "%s:%lld: qid %lld is not task %lld", path, (long long)row.line,
                           (long long)row.qid, (long long)o->task);
            rc = (o->active == 1 ? km_mtl_update_private : km_mtl_update)(
                s, o->task, row.index, row.value, row.nnz, row.y, 1.0, &err);
            if (rc)
                km_cli_die(rc, "%s:%lld: %s", path, (long long)row.line, err.msg);
            if (row.nnz && row.index[row.nnz - 1] + 1 > nfeat)
                nfeat = row.index[row.nnz - 1] + 1;
            rows++;
        }
        if (rc < 0)
            km_cli_die(err.code, "%s", err.msg);
        km_svmlight_close(rd);
    }
    km_mtl_estimate *e;
    if (km_mtl_estimate_task(s, o->task, &e, &err))   /* lines 13-15 */
        km_cli_die(err.code, "%s", err.msg);
    if (!path) {   /* --passive without data: say so where the results go */
        FILE *say = o->eval_out && !strcmp(o->eval_out, "-") ? stderr : stdout;
        fprintf(say, "mtl-client: task %lld: no own examples given (--passive without FILE): "
                "a non-personalised estimate, the common part alpha sum_i cbar_i K(xbar_i, x) "
                "of the disclosed data (n = %lld, version %lld) for every task alike\n",
                (long long)o->task, (long long)e->X->l, (long long)km_mtl_version(s));
        fflush(say);
    } else if (!o->quiet) {
        fprintf(stderr, "mtl-client: task %lld: %lld own examples (%s), %lld distinct inputs, "
                "n = %lld, version %lld\n", (long long)o->task, (long long)rows,
                o->active == 1 ? "active" : "passive", (long long)e->l, (long long)e->X->l,
                (long long)km_mtl_version(s));
    }
    if (o->model) {
        km_model *m;
        if (km_mtl_model(s, &o->task, 1, nfeat, &m, &err))
            km_cli_die(err.code, "--model: %s", err.msg);
        if (km_model_write(m, o->model, &err))
            km_cli_die(err.code, "%s", err.msg);
        km_model_free(m);
    }
    if (o->eval)
        eval_rows(e, o->eval, o->eval_out);
    km_mtl_estimate_free(e);
    km_mtl_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    km_cli_init("mtl-client");
    opts o = {.host = "127.0.0.1", .port = 7353, .batch = 4096, .active = -1, .retry = 60};
    const char *cmd = NULL, *file = NULL, *secret_file = NULL, *secret_arg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() km_cli_value(argc, argv, &i)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--host")) {
            o.host = NEXT();
        } else if (km_cli_option(a, "--port", "-p")) {
            o.port = (int)km_cli_integer(a, NEXT(), 1, 65535);
        } else if (!strcmp(a, "-T")) {
            o.task = (int64_t)km_cli_integer(a, NEXT(), INT64_MIN, INT64_MAX);
            o.has_task = 1;
        } else if (km_cli_option(a, "--secret", "-k")) {
            if (secret_arg)
                km_cli_die(1, "%s: the secret is given twice", a);
            secret_arg = NEXT();
            if (strlen(secret_arg) > KM_MTLP_SECRET_MAX || !*secret_arg)
                km_cli_die(1, "%s: a secret has 1 to %d characters", a, KM_MTLP_SECRET_MAX);
        } else if (!strcmp(a, "--admin-token-file")) {
            o.token_file = NEXT();
        } else if (!strcmp(a, "--secret-file")) {
            if (secret_file)
                km_cli_die(1, "%s: the secret is given twice", a);
            secret_file = NEXT();
        } else if (km_cli_option(a, "--secrets", "-K")) {
            o.secrets_file = NEXT();
        } else if (!strcmp(a, "--active")) {
            o.active = 1;
        } else if (!strcmp(a, "--passive")) {
            o.active = 0;
        } else if (km_cli_option(a, "--model", "-o")) {
            o.model = NEXT();
        } else if (!strcmp(a, "--eval")) {
            o.eval = NEXT();
        } else if (km_cli_option(a, "--eval-out", "-e")) {
            o.eval_out = NEXT();
        } else if (!strcmp(a, "--batch")) {
            o.batch = (int)km_cli_integer(a, NEXT(), 1, 1 << 20);
        } else if (!strcmp(a, "--retry")) {
            o.retry = km_cli_number(a, NEXT());
            if (o.retry < 0)
                km_cli_die(1, "--retry: seconds >= 0, got %g", o.retry);
        } else if (!strcmp(a, "-q")) {
            o.quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            km_cli_die(1, "unknown option '%s'", a);
        } else if (!cmd) {
            cmd = a;
        } else if (!file) {
            file = a;
        } else {
            km_cli_die(1, "too many arguments ('%s')", a);
        }
#undef NEXT
    }
    /* the secret: --secret-file, else --secret (seen by ps), else KMTK_SECRET */
    char *owned = NULL;
    if (secret_file && secret_arg)
        km_cli_die(1, "--secret-file and --secret: give the secret once");
    if (secret_file) {
        o.secret = owned = km_cli_secret_file(secret_file, KM_MTLP_SECRET_MAX, o.task,
                                              o.has_task);
    } else if (secret_arg) {
        o.secret = secret_arg;
        km_cli_warn("a secret on the command line is visible to other users (ps): prefer "
                    "--secret-file FILE or the environment variable KMTK_SECRET");
    } else {
        o.secret = km_cli_secret_env("KMTK_SECRET", KM_MTLP_SECRET_MAX);
    }
    if (!cmd)
        km_cli_die(1, "no command (register, send, status or estimate)");
    km_blas_threads(1);
    km_error err;
    if (!strcmp(cmd, "register")) {
        need_task(&o, cmd);
        char secret[KM_MTLP_SECRET_MAX + 1], *token = NULL;
        const char *tok = getenv("KMTK_ADMIN_TOKEN");
        if (o.token_file)
            tok = token = km_cli_secret_file(o.token_file, KM_MTLP_SECRET_MAX, 0, 0);
        if (!tok || !*tok)
            km_cli_die(1, "register needs the server's admin token (--admin-token-file FILE "
                       "or KMTK_ADMIN_TOKEN)");
        km_mtlp_conn *c = connect_or_die(&o);
        if (km_mtlp_register(c, o.task, tok, secret, &err))
            km_cli_die(2, "%s", err.msg);
        printf("%lld %s\n", (long long)o.task, secret);
        free(token);
        km_mtlp_close(c);
    } else if (!strcmp(cmd, "status")) {
        need_task(&o, cmd);
        km_mtlp_conn *c = connect_or_die(&o);
        km_mtlp_status st;
        if (km_mtlp_get_status(c, o.task, o.secret, &st, &err))
            km_cli_die(2, "%s", err.msg);
        km_mtlp_close(c);
        const km_mtl_param *p = &st.param;
        printf("version %" PRIu64 "\nunique_inputs %" PRIu64 "\ntask %lld\ntask_inputs %" PRIu64
               "\ntask_triples %" PRIu64 "\nalpha %.17g\nlambda %.17g\n"
               "kernel %s %.17g %.17g %d\ntask_kernel %s %.17g %.17g %d\nfeatures %d\n",
               st.version, st.n, (long long)o.task, st.l, st.triples, p->alpha, p->lambda,
               km_kernel_name(p->K.type), p->K.gamma, p->K.coef0, p->K.degree,
               km_kernel_name(p->Kt.type), p->Kt.gamma, p->Kt.coef0, p->Kt.degree,
               (int)st.n_features);
    } else if (!strcmp(cmd, "send")) {
        if (!file)
            km_cli_die(1, "send needs a file");
        if (!o.secrets_file)
            need_task(&o, cmd);
        cmd_send(&o, file);
    } else if (!strcmp(cmd, "estimate")) {
        cmd_estimate(&o, file);
    } else {
        km_cli_die(1, "unknown command '%s'", cmd);
    }
    free(owned);
    return 0;
}
