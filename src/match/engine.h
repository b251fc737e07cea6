/* The interface between the matching front end (match.c) and its engines.
 * An engine fills one const onic_match_ops_t and is listed in engines[] in
 * match.c. The front end owns the entry pool, sequence numbers, statistics
 * and argument checks; an engine only keeps its entries in order and finds
 * the oldest match. */
#ifndef ONIC_MATCH_ENGINE_H
#define ONIC_MATCH_ENGINE_H

#include <onic/match.h>
#include "base/config.h"
#include "base/pool.h"

/* The part of every entry the front end owns. An engine's entry type embeds it
 * as its first member; the pool hands out ops->entry_size bytes. It is 48
 * bytes so an engine can keep its own hottest link in the same cache line. */
struct onic_mentry {
    onic_mkey_t key;
    onic_mkey_t ignore;
    void       *cookie;
    uint64_t    seq;    /* append order, smaller is older; ONIC_MENTRY_FREE once
                           matched or removed */
};

#define ONIC_MENTRY_FREE UINT64_MAX

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
    /* Link a filled entry (seq already stamped, youngest so far) at the tail.
     * Cannot fail: what it needs was reserved, and an engine that wants to
     * grow an index and cannot just keeps the smaller one. */
    void          (*append)(onic_matcher_t *m, onic_mentry_t *e);
    /* The oldest queued entry matching (key, ignore); unlinked when remove is
     * set. NULL if none. Adds the entries it compared to m->stats.inspected. */
    onic_mentry_t *(*find)(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove);
    /* Unlink a queued entry. */
    void          (*remove)(onic_matcher_t *m, onic_mentry_t *e);
} onic_match_ops_t;

struct onic_matcher {
    const onic_match_ops_t *ops;
    void                   *engine;  /* the engine's state */
    onic_config_t           cfg;     /* parameters read at create */
    onic_pool_t             pool;    /* entries of ops->entry_size bytes */
    size_t                  length;
    uint64_t                next_seq;
    onic_match_stats_t      stats;
};

/* Create with explicit parameters instead of the environment (tests, bench). */
onic_status_t onic_matcher_create_cfg(const char *engine, const onic_config_t *cfg,
                                      onic_matcher_t **m_p);
const onic_match_ops_t *onic_match_ops_find(const char *name);

extern const onic_match_ops_t onic_match_list_ops;
extern const onic_match_ops_t onic_match_alpu_ops;
extern const onic_match_ops_t onic_match_wide_ops;
extern const onic_match_ops_t onic_match_hash_ops;

static inline int onic_mentry_matches(const onic_mentry_t *e, onic_mkey_t key, onic_mkey_t ignore)
{
    return onic_mkey_matches(e->key, e->ignore, key, ignore);
}

#endif
