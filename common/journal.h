/* journal.h - an append-only file of checksummed records: what mtl-server accepted, in order,
 * so that a restart replays it to the same state. Only the tail of an interrupted append is
 * ever cut off; anything else that does not verify is an error, never silently dropped.
 *
 * File, version 2 (little-endian):
 *   0   "KMTKJNL2"
 *   8   u32 header length H
 *   12  16 random bytes: the journal's id (a snapshot names the journal it belongs to)
 *   28  u32 CRC-32 of bytes 0..27 (so H is verified before it is used)
 *   32  H header bytes (the caller's parameters), u32 CRC-32 of them
 * then records
 *   u32 length (of type + body, >= 1)
 *   u32 CRC-32 of (the 4 length bytes, u64 record number from 0): a damaged length is
 *       damage, not a short record; a record moved or repeated does not verify
 *   u8 type, body
 *   u32 CRC-32 of type + body
 * A torn append (a crash while writing) leaves a last record shorter than its verified
 * length, fewer than 8 bytes of a record header, or zero bytes to the end of the file
 * (space allocated, data never written: from the record's start, or from a 4096-byte page
 * boundary inside it on, at least 12 bytes): that tail is cut off. Nothing else is.
 *
 * Version 1 ("KMTKJNL1": u32 header length, header, u32 CRC; records u32 length, u32 CRC,
 * type, body) is converted when opened: read strictly (any record that does not verify, the
 * last one too, is an error naming its byte), written as version 2 to a temporary file,
 * synced and renamed over the original, which is kept as PATH.v1. */
#ifndef KM_JOURNAL_H
#define KM_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct km_journal km_journal;

#define KM_JOURNAL_ID 16

/* A position in the journal: the end of a record (a snapshot's place). */
typedef struct km_journal_mark {
    int64_t offset;    /* bytes from the start of the file to the end of the record */
    int64_t records;   /* records before offset */
    uint32_t crc;      /* the stored CRC-32 of that record's type + body (0 if records = 0) */
} km_journal_mark;

/* Returned by a replay callback to stop the replay (a signal); km_journal_replay then
 * returns it too. */
#define KM_JOURNAL_STOP 100

/* Called for each record of an existing journal; returns 0 to go on, KM_JOURNAL_STOP to
 * stop, or an error code (err set). */
typedef int (*km_journal_replay_fn)(void *ctx, unsigned type, const unsigned char *body,
                                    size_t len, km_error *err);

enum { KM_JOURNAL_CREATED = 1, KM_JOURNAL_CONVERTED = 2 };

/*
 * Opens the journal at path, or creates it when path does not exist (its header written to
 * a temporary file, synced and linked into place: a journal is never seen half-created),
 * and takes flock(LOCK_EX | LOCK_NB) on it for as long as it is open: a second opener gets
 * KM_EINPUT "PATH: locked by another process ...". An existing file must be a whole, verified
 * journal header carrying exactly hdr (KM_EINPUT "PATH: written with other parameters ..."
 * otherwise); an empty or shorter file is refused, never overwritten. *how (may be NULL) gets
 * KM_JOURNAL_CREATED or KM_JOURNAL_CONVERTED (a version-1 file was converted) or 0. The
 * records are read by km_journal_replay, which must be called before anything is appended.
 */
km_journal *km_journal_open(const char *path, const void *hdr, size_t hdrlen, unsigned *how,
                            km_error *err);

/*
 * Verifies every record from the start and passes those after `from` (NULL: all) to fn, in
 * order. `from` must be a record boundary of this journal with the same record count and
 * CRC (KM_EINPUT "PATH: ... does not match ..." otherwise; the journal shorter than `from`
 * is "PATH: ends at record N ..."). A torn last record (see above) is cut off the file
 * (*dropped: its bytes; 0 if none); a record that does not verify anywhere else is KM_EINPUT
 * "PATH: record N at byte B: reason; the journal is damaged; refusing to start". fn's
 * errors are returned as "PATH: record N at byte B: message". If fn returns
 * KM_JOURNAL_STOP the replay stops there and returns KM_JOURNAL_STOP (the file untouched;
 * km_journal_end gives the position after the last record passed to fn).
 */
int km_journal_replay(km_journal *j, const km_journal_mark *from, km_journal_replay_fn fn,
                      void *ctx, int64_t *dropped, km_error *err);

/* The journal's 16-byte id (random, from its creation). */
const unsigned char *km_journal_id(const km_journal *j);

/* The position after the last record replayed or committed. */
km_journal_mark km_journal_end(const km_journal *j);

/* Queues a record in memory (nothing reaches the file before km_journal_commit). */
int km_journal_append(km_journal *j, unsigned type, const void *body, size_t len,
                      km_error *err);

/* The same with the body in two parts (written one after the other). */
int km_journal_append2(km_journal *j, unsigned type, const void *a, size_t alen,
                       const void *b, size_t blen, km_error *err);

/* Writes the queued records; with sync, fdatasync's the file before returning. On failure
 * the file is cut back to its length before these records (KM_EINPUT "PATH: ...": they are
 * not in the journal). */
int km_journal_commit(km_journal *j, int sync, km_error *err);

/* fdatasync's what was committed (before a snapshot names it). */
int km_journal_sync(km_journal *j, km_error *err);

/* Drops the queued records without writing them. */
void km_journal_discard(km_journal *j);

/* Records in the file (replayed and committed). */
int64_t km_journal_records(const km_journal *j);

/* Closes the file and releases the lock (queued records are dropped: commit first). NULL is
 * fine. */
void km_journal_close(km_journal *j);

#endif
