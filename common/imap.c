/* imap.c - see imap.h. */
#include "imap.h"

#include <stdlib.h>

uint64_t km_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The slot of key, or -1. */
static int64_t slot_of(const km_imap *m, int64_t key)
{
    if (!m->size)
        return -1;
    uint64_t mask = (uint64_t)(m->size - 1);
    for (uint64_t i = km_mix64((uint64_t)key) & mask;; i = (i + 1) & mask) {
        if (!m->val[i])
            return -1;
        if (m->key[i] == key)
            return (int64_t)i;
    }
}

int64_t km_imap_get(const km_imap *m, int64_t key)
{
    int64_t at = slot_of(m, key);
    return at < 0 ? -1 : m->val[at] - 1;
}

void km_imap_del(km_imap *m, int64_t key)
{
    int64_t at = slot_of(m, key);
    if (at < 0)
        return;
    /* backward-shift deletion (linear probing): later entries of the run move up when
     * their home slot is not after the hole */
    uint64_t mask = (uint64_t)(m->size - 1), hole = (uint64_t)at;
    for (uint64_t i = (hole + 1) & mask; m->val[i]; i = (i + 1) & mask) {
        uint64_t home = km_mix64((uint64_t)m->key[i]) & mask;
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            m->key[hole] = m->key[i];
            m->val[hole] = m->val[i];
            hole = i;
        }
    }
    m->val[hole] = 0;
    m->count--;
}

int km_imap_put(km_imap *m, int64_t key, int64_t val)
{
    int64_t at = slot_of(m, key);
    if (at >= 0) {
        m->val[at] = val + 1;
        return 0;
    }
    if (2 * (m->count + 1) > m->size) {
        int64_t size = m->size ? 2 * m->size : 64;
        km_imap g = {calloc((size_t)size, sizeof *g.key), calloc((size_t)size, sizeof *g.val),
                     size, 0};
        if (!g.key || !g.val) {
            free(g.key);
            free(g.val);
            return -1;
        }
        for (int64_t i = 0; i < m->size; i++)
            if (m->val[i])
                km_imap_put(&g, m->key[i], m->val[i] - 1);
        free(m->key);
        free(m->val);
        *m = g;
    }
    uint64_t mask = (uint64_t)(m->size - 1), i = km_mix64((uint64_t)key) & mask;
    while (m->val[i] && m->key[i] != key)
        i = (i + 1) & mask;
    if (!m->val[i])
        m->count++;
    m->key[i] = key;
    m->val[i] = val + 1;
    return 0;
}

void km_imap_free(km_imap *m)
{
    free(m->key);
    free(m->val);
}
