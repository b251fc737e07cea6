/* The interface between the matching front end (match.c) and its engines.
 * An engine fills one const onic_match_ops_t and is listed in engines[] in
 * match.c. The front end owns the entry pool, order keys, statistics and
 * argument checks; an engine only keeps its entries in queue order and finds
 * the first match in that order.
 *
 * Order keys: `seq` is not a counter but a position with gaps. Append stamps
 * the largest so far plus ONIC_MATCH_SEQ_STRIDE; an insert takes a value
 * between its neighbours' (the front end asks the engine for them); when two
 * neighbours have no value left between them, the front end has the engine
 * renumber the whole queue in order, O(n) and rare. So for any two queued
 * entries, a smaller seq is always earlier in the queue, and an engine may
 * order by seq (hash does) or by its own links (list, alpu, wide). */
#ifndef ONIC_MATCH_ENGINE_H
#define ONIC_MATCH_ENGINE_H

#include <onic/match.h>
#include "base/config.h"
#include "base/list.h"
#include "base/pool.h"

/* The part of every entry the front end owns. An engine's entry type embeds it
 * as its first member; the pool hands out ops->entry_size bytes. It is 48
 * bytes so an engine can keep its own hottest link in the same cache line. */
struct onic_mentry {
    onic_mkey_t key;
    onic_mkey_t ignore;
    void       *cookie;
    uint64_t    seq;    /* order key, smaller is earlier in the queue; never 0;
                           ONIC_MENTRY_FREE once matched or removed */
};

#define ONIC_MENTRY_FREE UINT64_MAX
/* Order keys live in [ONIC_MATCH_SEQ_STRIDE, UINT64_MAX - STRIDE]: appends
 * count up from ONIC_MATCH_SEQ_BASE (a key is taken only if adding the
 * stride to it does not overflow) and head inserts down from it, each by a
 * stride, so either end lasts 2^30 operations before a renumbering; an
 * insert between two entries takes a step of their gap (match_seq_pick in
 * match.c). */
#define ONIC_MATCH_SEQ_STRIDE (1ull << 32)
#define ONIC_MATCH_SEQ_STEP   (1ull << 16)
#define ONIC_MATCH_SEQ_BASE   (1ull << 62)

static inline int onic_mentry_queued(const onic_mentry_t *e)
{
    return e->seq != ONIC_MENTRY_FREE;
}

typedef struct onic_match_ops {
    const char *name;
    const char *desc;      /* one line for onic-info */
    size_t      entry_size;
    /* Set up m->engine from m->cfg. */
    onic_status_t (*init)(onic_matcher_t *m);
    /* Release everything in m->engine; queued entries belong to the pool. */
    void          (*fini)(onic_matcher_t *m);
    /* Optional (NULL: nothing to reserve). Called before each append takes an
     * entry from the pool: make sure the next append has all the memory it
     * needs, or return ONIC_ERR_NO_MEMORY and the append fails unchanged. */
    onic_status_t (*reserve)(onic_matcher_t *m);
    /* Link a filled entry (seq already stamped, the largest queued) at the
     * tail. Cannot fail: what it needs was reserved, and an engine that wants
     * to grow an index and cannot just keeps the smaller one. */
    void          (*append)(onic_matcher_t *m, onic_mentry_t *e);
    /* Link a filled entry just after `anchor` (after set) or just before it;
     * anchor NULL means the head. e->seq is already between its neighbours'.
     * ONIC_ERR_NO_MEMORY leaves the queue unchanged; nothing is reserved for
     * inserts, which are rarer than appends. */
    onic_status_t (*insert)(onic_matcher_t *m, onic_mentry_t *e, onic_mentry_t *anchor,
                            int after);
    /* The queued entry just after (after set) or just before e; NULL at the
     * end. Need not be fast: only inserts next to an anchor ask. */
    onic_mentry_t *(*neighbour)(onic_matcher_t *m, const onic_mentry_t *e, int after);
    /* Give the queued entries seq base, base + stride, ... in queue order.
     * ONIC_ERR_NO_MEMORY (only if the engine needs scratch memory) changes
     * nothing. */
    onic_status_t (*renumber)(onic_matcher_t *m, uint64_t base, uint64_t stride);
    /* The first queued entry in queue order that matches (key, ignore),
     * unlinked when remove is set; NULL if none. Adds the entries it compared
     * to m->stats.inspected. The hot path: six arguments, all in registers
     * (the keys are passed by value), which is why accept has its own op. */
    onic_mentry_t *(*find)(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove);
    /* find, but only an entry that accept takes counts: accept (not NULL) is
     * called on matching entries in queue order, each at most once, until it
     * takes one; the search goes on behind a refused entry. The taken entry
     * is unlinked when *remove is set or accept answered
     * ONIC_MATCH_TAKE_LAST; *remove says on return whether it was. */
    onic_mentry_t *(*find_accept)(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                  onic_match_accept_t accept, void *arg, int *remove);
    /* Unlink a queued entry. */
    void          (*remove)(onic_matcher_t *m, onic_mentry_t *e);
    /* Optional: the engine's table for a traced matcher (ONIC_TRACE), whose
     * append, insert, find, find_accept and remove write their own records
     * (match/trace_rec.h); any of them left NULL is recorded by trace.c's
     * wrapper around the plain op. The other ops are not used from it. */
    const struct onic_match_ops *traced;
} onic_match_ops_t;

struct onic_matcher {
    const onic_match_ops_t *ops;
    void                   *engine;  /* the engine's state */
    /* The first queued entry, for an engine that keeps it; NULL when the
     * queue is empty or the engine does not say. The front end's lookups
     * compare it and offer it to accept themselves (a NIC's first compare)
     * and call the engine only when it did not match or was refused: the
     * engine's find and find_accept start past it. So an engine that sets
     * it keeps it true across every op of its table. */
    onic_mentry_t          *front;
    int                     traced;  /* ONIC_TRACE: ops is the tracer's table */
    onic_config_t           cfg;     /* parameters read at create */
    onic_pool_t             pool;    /* entries of ops->entry_size bytes */
    size_t                  length;
    uint64_t                next_seq;   /* above every queued seq: the next append's */
    uint64_t                seq_stride; /* ONIC_MATCH_SEQ_STRIDE and _STEP; tests make */
    onic_match_stats_t      stats;
    uint64_t                seq_step;   /* them small so renumbering happens often */
    uint64_t                low_seq;    /* at or below every queued seq */
    uint64_t                renumbers;  /* times the queue was renumbered (tests) */
};

/* Create with explicit parameters instead of the environment (tests, bench). */
onic_status_t onic_matcher_create_cfg(const char *engine, const onic_config_t *cfg,
                                      onic_matcher_t **m_p);
const onic_match_ops_t *onic_match_ops_find(const char *name);

extern const onic_match_ops_t onic_match_list_ops;
extern const onic_match_ops_t onic_match_alpu_ops;
extern const onic_match_ops_t onic_match_wide_ops;
extern const onic_match_ops_t onic_match_hash_ops;

/* Link l just after pos (a list head for the front). */
static inline void onic_match_dlist_insert(onic_dlist_t *pos, onic_dlist_t *l)
{
    l->prev = pos;
    l->next = pos->next;
    pos->next->prev = l;
    pos->next = l;
}

/* always_inline: gcc kept one copy out of line, a call on every lookup. */
static inline __attribute__((always_inline)) int
onic_mentry_matches(const onic_mentry_t *e, onic_mkey_t key, onic_mkey_t ignore)
{
    return onic_mkey_matches(e->key, e->ignore, key, ignore);
}

#endif
