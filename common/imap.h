/* imap.h - an int64 -> int64 open-addressing hash map (task ids, hashes of inputs). */
#ifndef KM_IMAP_H
#define KM_IMAP_H

#include <stdint.h>

typedef struct km_imap {
    int64_t *key;
    int64_t *val;   /* value + 1; 0 marks an empty slot */
    int64_t size;   /* slots, a power of two (0 before the first put) */
    int64_t count;
} km_imap;

/* A well-mixed 64-bit function of z (splitmix64's finaliser). */
uint64_t km_mix64(uint64_t z);

/* The value of key, or -1. */
int64_t km_imap_get(const km_imap *m, int64_t key);

/* Sets key -> val (val >= 0; replaces); 0, or -1 when out of memory (m unchanged). A key
 * already present is replaced without allocating (never fails). */
int km_imap_put(km_imap *m, int64_t key, int64_t val);

/* Removes key (absent: nothing). Never allocates. */
void km_imap_del(km_imap *m, int64_t key);

void km_imap_free(km_imap *m);

#endif
