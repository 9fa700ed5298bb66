/* journal.h - an append-only file of checksummed records: what mtl-server accepted, in order,
 * so that a restart replays it to the same state. A torn last record (a crash while writing
 * it) is detected and cut off; damage anywhere else is an error.
 *
 * File: "KMTKJNL1", u32 header length, header bytes, u32 CRC-32 of the header; then records
 * u32 length (of type + body), u32 CRC-32 (of type + body), u8 type, body. Little-endian. */
#ifndef KM_JOURNAL_H
#define KM_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct km_journal km_journal;

/* Calls replay for each record of an existing journal; it returns 0 to go on. */
typedef int (*km_journal_replay)(void *ctx, unsigned type, const unsigned char *body,
                                 size_t len, km_error *err);

/*
 * Opens (or creates) the journal at path. A new or empty file gets the header hdr; an
 * existing one must carry exactly hdr (KM_EINPUT "PATH: written with other parameters"
 * otherwise) and its records are passed to replay in order. A last record cut short or
 * failing its checksum at the very end of the file is removed from the file (*dropped: its
 * bytes, 0 if none); a bad record followed by more data is KM_EINPUT "PATH: damaged record
 * at byte N".
 */
km_journal *km_journal_open(const char *path, const void *hdr, size_t hdrlen,
                            km_journal_replay replay, void *ctx, int64_t *dropped,
                            km_error *err);

/* Queues a record in memory (nothing reaches the file before km_journal_commit). */
int km_journal_append(km_journal *j, unsigned type, const void *body, size_t len,
                      km_error *err);

/* The same with the body in two parts (written one after the other). */
int km_journal_append2(km_journal *j, unsigned type, const void *a, size_t alen,
                       const void *b, size_t blen, km_error *err);

/* Writes the queued records; with sync, fsync's the file before returning. On failure the
 * file is cut back to its length before these records (KM_EINPUT "PATH: ...": they are
 * not in the journal). */
int km_journal_commit(km_journal *j, int sync, km_error *err);

/* Drops the queued records without writing them. */
void km_journal_discard(km_journal *j);

/* Records in the file (replayed and committed). */
int64_t km_journal_records(const km_journal *j);

/* Closes the file (queued records are dropped: commit first). NULL is fine. */
void km_journal_close(km_journal *j);

#endif
