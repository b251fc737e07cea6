/* onic matching: an ordered queue of match entries where a lookup finds the
 * FIRST entry in queue order that matches. Append puts an entry last;
 * onic_matcher_insert can put it first or next to another entry (Portals
 * PtlMEAttach / PtlMEInsert), and onic_matcher_find can skip entries that
 * refuse the operation. One interface, several engines (list, alpu, wide,
 * hash) chosen by name at run time.
 *
 * A key is two 64-bit words: `bits` (Portals match bits; for MPI the context
 * id and tag) and `id` (Portals initiator id; for MPI the source rank). Entries
 * and queries both carry an ignore mask of the same shape, and match when
 *     ((a.bits ^ b.bits) & ~(a.ignore.bits | b.ignore.bits)) == 0
 *  && ((a.id   ^ b.id)   & ~(a.ignore.id   | b.ignore.id))   == 0
 * so one queue type serves posted receives (wildcard entries, exact headers)
 * and unexpected messages (exact entries, possibly wildcard queries).
 *
 * Ownership: a matcher has one owner at a time. Calls on one matcher are not
 * thread-safe: a caller that shares it between threads must serialize them.
 * Different matchers may be used from different threads at once.
 * Memory: entries come from a per-matcher pool that grows in chunks, so the
 * steady state allocates nothing. An allocation failure returns
 * ONIC_ERR_NO_MEMORY and leaves the queue exactly as it was. */
#ifndef ONIC_MATCH_H
#define ONIC_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include <onic/status.h>

typedef struct onic_mkey {
    uint64_t bits;
    uint64_t id;
} onic_mkey_t;

typedef struct onic_matcher onic_matcher_t;
/* A handle to one queued entry, valid until the entry is matched or removed.
 * Removing it after that returns ONIC_ERR_NO_ELEM until the library reuses
 * its memory for a later append; do not keep handles to matched entries.
 * A handle belongs to the matcher that made it: passing it to another one is
 * undefined (entries carry no owner, to keep them one cache line on the hot
 * path). */
typedef struct onic_mentry onic_mentry_t;

typedef struct onic_match_stats {
    uint64_t appends;    /* entries appended or inserted */
    uint64_t removes;    /* entries removed by onic_matcher_remove */
    uint64_t lookups;    /* match, peek and find calls */
    uint64_t hits;       /* lookups that found an entry */
    uint64_t inspected;  /* entries whose key was compared, by any means */
    uint64_t max_length; /* longest the queue has been */
} onic_match_stats_t;

/* engine NULL: the engine named by ONIC_MATCH (default "hash"). Fails with
 * ONIC_ERR_INVALID_PARAM for an unknown name or an invalid ONIC_* value. */
onic_status_t onic_matcher_create(const char *engine, onic_matcher_t **m_p);
void          onic_matcher_destroy(onic_matcher_t *m);
const char   *onic_matcher_engine(const onic_matcher_t *m); /* NULL for a NULL matcher */

/* Append at the tail (last in queue order). entry_p may be NULL. */
onic_status_t onic_matcher_append(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                  void *cookie, onic_mentry_t **entry_p);
/* The cookie of the first matching entry, removed; NULL if none. */
void         *onic_matcher_match(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore);
/* The cookie of the first matching entry, kept; NULL if none. */
void         *onic_matcher_peek(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore);
/* Cancel / unlink a queued entry. ONIC_ERR_NO_ELEM if it is no longer queued. */
onic_status_t onic_matcher_remove(onic_matcher_t *m, onic_mentry_t *entry);
/* --- Ordered insertion and conditional lookup (what Portals match lists need)
 * "First" means first in queue order: append puts an entry last, and
 * onic_matcher_insert can put it anywhere. Every engine honours both calls. */
typedef enum onic_match_pos {
    ONIC_MATCH_TAIL,    /* last, like append */
    ONIC_MATCH_HEAD,    /* first */
    ONIC_MATCH_BEFORE,  /* just ahead of anchor */
    ONIC_MATCH_AFTER,   /* just behind anchor */
} onic_match_pos_t;

/* Insert at pos (anchor: a queued entry of this matcher for BEFORE and AFTER,
 * ignored otherwise). ONIC_ERR_INVALID_PARAM for an unknown pos or a NULL
 * anchor, ONIC_ERR_NO_ELEM if anchor is no longer queued; the queue is then
 * unchanged. entry_p may be NULL. */
onic_status_t onic_matcher_insert(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                  void *cookie, onic_match_pos_t pos, onic_mentry_t *anchor,
                                  onic_mentry_t **entry_p);

/* Whether a matching entry takes the operation (Portals: whether the entry's
 * first memory descriptor accepts it): 0 refuses it, ONIC_MATCH_TAKE takes
 * it, ONIC_MATCH_TAKE_LAST takes it and removes it from the queue in the
 * same search whatever find's remove says (the operation uses the entry up:
 * Portals' last put into a receive's buffer), so the caller need not
 * remove it afterwards. Must not change the matcher. */
typedef int (*onic_match_accept_t)(void *arg, void *cookie);
#define ONIC_MATCH_TAKE      1
#define ONIC_MATCH_TAKE_LAST 2

/* The cookie of the first matching entry that accept takes, removed when
 * remove is set or accept said ONIC_MATCH_TAKE_LAST; NULL if none. accept
 * is called on matching entries in queue order until one is taken; a
 * refused entry is skipped and the search goes on behind it. accept NULL
 * takes the first match (match / peek). */
void         *onic_matcher_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                onic_match_accept_t accept, void *arg, int remove);
size_t        onic_matcher_length(const onic_matcher_t *m);
void          onic_matcher_stats(const onic_matcher_t *m, onic_match_stats_t *stats_p);

/* What a queue is for, recorded in match traces (ONIC_TRACE) so a replay
 * can tell them apart: Portals' match list (MPI's posted receives), its
 * overflow list, the headers kept for the overflow (MPI's unexpected
 * messages), or anything else. */
typedef enum onic_match_queue {
    ONIC_MATCH_QUEUE_OTHER      = 0,
    ONIC_MATCH_QUEUE_POSTED     = 1,
    ONIC_MATCH_QUEUE_OVERFLOW   = 2,
    ONIC_MATCH_QUEUE_UNEXPECTED = 3
} onic_match_queue_t;

/* Name the queue in the process's match trace: its kind and an index (the
 * Portals index). Does nothing when the matcher is not traced. */
void onic_matcher_label(onic_matcher_t *m, onic_match_queue_t kind, uint32_t index);

/* Names of the available engines, NULL-terminated, default first. */
const char *const *onic_match_engines(void);

/* The symmetric predicate, for callers that keep their own entries. */
static inline int onic_mkey_matches(onic_mkey_t a, onic_mkey_t a_ignore,
                                    onic_mkey_t b, onic_mkey_t b_ignore)
{
    return (((a.bits ^ b.bits) & ~(a_ignore.bits | b_ignore.bits)) |
            ((a.id ^ b.id) & ~(a_ignore.id | b_ignore.id))) == 0;
}

/* --- MPI envelopes -------------------------------------------------------
 * bits = context id << 32 | tag; id = source rank. Limits: context id
 * 0..ONIC_MATCH_MPI_MAX_CONTEXT, tag 0..ONIC_MATCH_MPI_MAX_TAG, rank
 * 0..ONIC_MATCH_MPI_MAX_RANK. ANY_SOURCE ignores all of `id`; ANY_TAG ignores
 * the low 32 bits of `bits`; the context is never ignored. */
#define ONIC_MATCH_MPI_ANY_SOURCE  (-1)
#define ONIC_MATCH_MPI_ANY_TAG     (-1)
#define ONIC_MATCH_MPI_MAX_CONTEXT UINT32_MAX
#define ONIC_MATCH_MPI_MAX_TAG     INT32_MAX
#define ONIC_MATCH_MPI_MAX_RANK    INT32_MAX

/* Encode (context, source, tag) into a key and ignore mask. source and tag may
 * be the ANY values. ONIC_ERR_INVALID_PARAM for anything outside the limits. */
onic_status_t onic_match_mpi_encode(uint64_t context, int64_t source, int64_t tag,
                                    onic_mkey_t *key_p, onic_mkey_t *ignore_p);
/* Decode an exact key back into its envelope. */
void onic_match_mpi_decode(onic_mkey_t key, uint32_t *context_p, int32_t *source_p,
                           int32_t *tag_p);

#endif
