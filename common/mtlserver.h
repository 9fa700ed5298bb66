/* mtlserver.h - the mtl-server event loop (thesis section 5.3: the server collects triples
 * from the clients and publishes the disclosed data), one poll() loop in one thread: updates
 * are applied in one order and every reply sees whole requests only. */
#ifndef KM_MTLSERVER_H
#define KM_MTLSERVER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "mtl.h"
#include "mtlproto.h"

enum {
    KM_FSYNC_NONE,    /* write() before acknowledging; the OS flushes (survives kill -9) */
    KM_FSYNC_BATCH,   /* one fdatasync per loop round, before its replies go out */
    KM_FSYNC_ALWAYS   /* one fdatasync per SEND or REGISTER request */
};

/* Defaults of the limits (doc/mtl-protocol.md, "Limits"). */
#define KM_MTLS_MAX_FEATURES (1 << 20)   /* feature indices without --features */
#define KM_MTLS_MAX_INPUTS 10000         /* unique inputs */
#define KM_MTLS_MAX_SECRETS 1000000      /* secrets REGISTER issues */

typedef struct km_mtl_server_config {
    km_mtl_param param;
    int32_t n_features;       /* triples with a feature index >= this are refused; 0: any */
    int32_t max_features;     /* without n_features: indices >= this are refused */
    int64_t max_inputs;       /* a SEND that would make more unique inputs is refused */
    const char *bind;         /* address to listen on ("127.0.0.1") */
    int port;                 /* 0: any free port (see ready) */
    const char *journal;      /* NULL: no journal (nothing survives a restart) */
    int fsync_policy;
    int allow_register;       /* REGISTER with admin_token issues secrets to tasks without */
    const char *admin_token;  /* KM_MTLP_SECRET_MIN..MAX bytes; required by allow_register */
    int64_t max_secrets;      /* secrets REGISTER issues at most */
    size_t max_message;       /* longer request frames are refused and the connection closed */
    int max_clients;          /* more connections get ERROR busy and are closed */
    int max_per_peer;         /* connections from one address at once */
    int idle_timeout_ms;      /* a connection with nothing pending this long is closed */
    int io_timeout_ms;        /* a request frame not complete this long after its first byte,
                               * or a reply not taken for this long: closed */
    size_t conn_memory;       /* one connection's buffers (request + replies) at most */
    size_t total_memory;      /* all connections' buffers at most */
    int auth_delay_ms;        /* a failed authentication's reply waits this long (the
                               * connection is not read meanwhile) */
    int max_auth_failures;    /* per address and auth_window_ms; beyond: refused unchecked */
    int auth_window_ms;
    int64_t nsecrets;         /* configured secrets: task ids and secrets */
    const int64_t *secret_task;
    char *const *secret;
    void (*log)(void *ctx, const char *msg);   /* progress and events (may be NULL) */
    void (*ready)(void *ctx, int port);        /* called once listening */
    void *ctx;
    volatile sig_atomic_t *stop;   /* the loop ends when *stop becomes non-zero ... */
    int wake_fd;                   /* ... checked whenever this fd (a self-pipe the signal
                                    * handler writes to; -1: none) becomes readable */
    const char *snapshot;          /* with a journal: the state written here (atomically) every
                                    * snapshot_every triples and at the end, and loaded at start
                                    * so that only the journal after it is replayed; NULL: none */
    int64_t snapshot_every;        /* triples between snapshots; 0: only at the end */
} km_mtl_server_config;

/* cfg with every limit at its default (and param = km_mtl_param_default()). */
void km_mtl_server_config_default(km_mtl_server_config *cfg);

/* Loads the snapshot and replays the journal after it (or all of it), listens and serves
 * until *stop; then commits, writes a snapshot and closes everything. *stop during the replay
 * ends it after the current triple (a snapshot is written when it ended between records).
 * KM_EINPUT for a bad journal, snapshot or address, KM_EINTERNAL when out of memory. */
int km_mtl_server_run(const km_mtl_server_config *cfg, km_error *err);

#endif
