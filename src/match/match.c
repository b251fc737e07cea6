/* The matching front end: argument checks, the entry pool, order keys and
 * statistics, then one call into the engine chosen at create. */
#include "match/engine.h"
#include "match/trace.h"
#include "match/trace_rec.h"
#include "base/log.h"
#include "base/mem.h"

#include <assert.h>
#include <string.h>

/* Every engine, default first, in the order of onic_config_match_engines
 * (the names ONIC_MATCH accepts); a test checks the two agree. */
static const onic_match_ops_t *const engines[] = {
    &onic_match_hash_ops,
    &onic_match_list_ops,
    &onic_match_alpu_ops,
    &onic_match_wide_ops,
};

#define MATCH_NENGINES (sizeof(engines) / sizeof(engines[0]))
#define MATCH_POOL_CHUNK 256

const onic_match_ops_t *onic_match_ops_find(const char *name)
{
    for (size_t i = 0; i < MATCH_NENGINES; i++)
        if (strcmp(engines[i]->name, name) == 0)
            return engines[i];
    return NULL;
}

const char *const *onic_match_engines(void)
{
    return onic_config_match_engines;
}

__attribute__((cold, noinline)) onic_status_t onic_matcher_create_cfg(const char *engine, const onic_config_t *cfg,
                                      onic_matcher_t **m_p)
{
    const onic_match_ops_t *ops;
    onic_matcher_t *m;
    onic_status_t status;

    if (m_p == NULL || cfg == NULL) {
        onic_error("match: NULL %s passed to onic_matcher_create", m_p == NULL ? "m_p" : "cfg");
        return ONIC_ERR_INVALID_PARAM;
    }
    if (engine == NULL) {
        if (cfg->match_engine >= MATCH_NENGINES) {
            onic_error("match: engine index %u in the config is out of range", cfg->match_engine);
            return ONIC_ERR_INVALID_PARAM;
        }
        engine = onic_config_match_engines[cfg->match_engine];
    }
    ops = onic_match_ops_find(engine);
    if (ops == NULL) {
        onic_error("match: unknown engine \"%s\"; choose hash, list, alpu or wide", engine);
        return ONIC_ERR_INVALID_PARAM;
    }
    m = onic_calloc(1, sizeof(*m));
    if (m == NULL) {
        onic_error("match: cannot allocate a %s matcher", engine);
        return ONIC_ERR_NO_MEMORY;
    }
    m->ops = ops;
    m->cfg = *cfg;
    m->next_seq = m->low_seq = ONIC_MATCH_SEQ_BASE;
    m->seq_stride = ONIC_MATCH_SEQ_STRIDE;
    m->seq_step = ONIC_MATCH_SEQ_STEP;
    onic_pool_init(&m->pool, ops->entry_size, MATCH_POOL_CHUNK);
    status = ops->init(m);
    if (status != ONIC_OK) {
        onic_free(m);
        return status;
    }
    if (cfg->trace[0] != '\0')
        m->traced = onic_match_trace_attach(m, cfg->trace);
    *m_p = m;
    return ONIC_OK;
}

onic_status_t onic_matcher_create(const char *engine, onic_matcher_t **m_p)
{
    onic_config_t cfg;
    onic_status_t status = onic_config_read(&cfg);

    if (status != ONIC_OK)
        return status;
    return onic_matcher_create_cfg(engine, &cfg, m_p);
}

void onic_matcher_destroy(onic_matcher_t *m)
{
    if (m == NULL)
        return;
    m->ops->fini(m);
    onic_pool_fini(&m->pool);
    onic_free(m);
}

const char *onic_matcher_engine(const onic_matcher_t *m)
{
    return m == NULL ? NULL : m->ops->name;
}

/* Order keys again from ONIC_MATCH_SEQ_BASE, a stride apart, when two
 * neighbours or an end of the range have no room left. */
static onic_status_t match_renumber(onic_matcher_t *m)
{
    onic_status_t status = m->ops->renumber(m, ONIC_MATCH_SEQ_BASE, m->seq_stride);

    if (status != ONIC_OK)
        return status;
    m->low_seq = ONIC_MATCH_SEQ_BASE;
    m->next_seq = ONIC_MATCH_SEQ_BASE + m->length * m->seq_stride;
    m->renumbers++;
    return ONIC_OK;
}

/* The order key for a new entry at pos (HEAD, BEFORE or AFTER), renumbering
 * first if there is no room. Between two neighbours the key goes a step
 * above the earlier one, not halfway: the usual Portals patterns fill
 * forward (insert before a fixed marker, or after the entry just inserted),
 * and each of those then costs one step of the gap, so a renumbering comes
 * once per stride / step inserts at one place rather than once per 32.
 * Filling backward halves the gap each time and renumbers sooner. */
static onic_status_t match_seq_pick(onic_matcher_t *m, onic_match_pos_t pos,
                                    const onic_mentry_t *anchor, uint64_t *seq_p)
{
    for (int renumbered = 0;; renumbered = 1) {
        const onic_mentry_t *n = NULL;
        onic_status_t status;

        if (pos != ONIC_MATCH_HEAD)
            n = m->ops->neighbour(m, anchor, pos == ONIC_MATCH_AFTER);
        if (n == NULL && pos != ONIC_MATCH_AFTER) {
            /* The new head. */
            if (m->low_seq >= 2 * m->seq_stride) {
                m->low_seq -= m->seq_stride;
                *seq_p = m->low_seq;
                return ONIC_OK;
            }
        } else if (n == NULL) {
            /* After the tail: an append's key. */
            uint64_t next;
            if (!__builtin_add_overflow(m->next_seq, m->seq_stride, &next)) {
                *seq_p = m->next_seq;
                m->next_seq = next;
                return ONIC_OK;
            }
        } else {
            uint64_t lo = pos == ONIC_MATCH_BEFORE ? n->seq : anchor->seq;
            uint64_t hi = pos == ONIC_MATCH_BEFORE ? anchor->seq : n->seq;
            uint64_t step = (hi - lo) / 2 < m->seq_step ? (hi - lo) / 2 : m->seq_step;
            if (step > 0) {
                *seq_p = lo + step;
                return ONIC_OK;
            }
        }
        /* After a renumbering every gap is a stride and both ends have room. */
        assert(!renumbered);
        (void)renumbered;
        status = match_renumber(m);
        if (status != ONIC_OK)
            return status;
    }
}

/* An append's rarer needs before its entry is linked: a renumbering when
 * the order keys reach the end of their range, and the engine's reserve.
 * *next_p: the order key after the append's. */
__attribute__((noinline)) static onic_status_t match_append_prepare(onic_matcher_t *m,
                                                                    uint64_t *next_p)
{
    /* The end of the key range is the add's carry: no compare of its own. */
    if (__builtin_add_overflow(m->next_seq, m->seq_stride, next_p)) {
        onic_status_t status = match_renumber(m);
        if (status != ONIC_OK)
            return status;
        *next_p = m->next_seq + m->seq_stride;
    }
    if (m->ops->reserve != NULL)
        return m->ops->reserve(m);
    return ONIC_OK;
}

onic_status_t onic_matcher_append(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                  void *cookie, onic_mentry_t **entry_p)
{
    onic_mentry_t *e;
    uint64_t next;

    if (m == NULL) {
        onic_error("match: append on a NULL matcher");
        return ONIC_ERR_INVALID_PARAM;
    }
    /* The entry first, filled, so that only m, e and entry_p live across
     * the calls below: fewer registers to save on every append. */
    e = onic_pool_get(&m->pool);
    if (e == NULL) {
        onic_error("match: cannot allocate an entry for a %s queue of length %zu",
                   m->ops->name, m->length);
        return ONIC_ERR_NO_MEMORY;
    }
    e->key    = key;
    e->ignore = ignore;
    e->cookie = cookie;
    if (__builtin_expect(__builtin_add_overflow(m->next_seq, m->seq_stride, &next) ||
                         m->ops->reserve != NULL, 0)) {
        onic_status_t status = match_append_prepare(m, &next);
        if (status != ONIC_OK) {
            onic_pool_put(&m->pool, e);
            return status;
        }
    }
    e->seq    = m->next_seq;
    m->next_seq = next;
    m->ops->append(m, e);
    m->length++;
    m->stats.appends++;
    if (m->length > m->stats.max_length)
        m->stats.max_length = m->length;
    if (entry_p != NULL)
        *entry_p = e;
    return ONIC_OK;
}

static void match_entry_release(onic_matcher_t *m, onic_mentry_t *e)
{
    e->seq = ONIC_MENTRY_FREE;
    m->length--;
    onic_pool_put(&m->pool, e);
}

onic_status_t onic_matcher_insert(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                  void *cookie, onic_match_pos_t pos, onic_mentry_t *anchor,
                                  onic_mentry_t **entry_p)
{
    onic_mentry_t *e;
    onic_status_t status;
    uint64_t seq;

    if (m == NULL) {
        onic_error("match: insert on a NULL matcher");
        return ONIC_ERR_INVALID_PARAM;
    }
    switch (pos) {
    case ONIC_MATCH_TAIL:
        return onic_matcher_append(m, key, ignore, cookie, entry_p);
    case ONIC_MATCH_HEAD:
        anchor = NULL;
        break;
    case ONIC_MATCH_BEFORE:
    case ONIC_MATCH_AFTER:
        if (anchor == NULL) {
            onic_error("match: insert %s a NULL anchor entry",
                       pos == ONIC_MATCH_BEFORE ? "before" : "after");
            return ONIC_ERR_INVALID_PARAM;
        }
        if (!onic_mentry_queued(anchor)) {
            onic_debug("match: insert next to entry %p that is no longer queued", (void *)anchor);
            return ONIC_ERR_NO_ELEM;
        }
        break;
    default:
        onic_error("match: insert at unknown position %d; use ONIC_MATCH_TAIL, _HEAD, "
                   "_BEFORE or _AFTER", (int)pos);
        return ONIC_ERR_INVALID_PARAM;
    }
    e = onic_pool_get(&m->pool);
    if (e == NULL) {
        onic_error("match: cannot allocate an entry for a %s queue of length %zu",
                   m->ops->name, m->length);
        return ONIC_ERR_NO_MEMORY;
    }
    /* A renumbering keeps the order, so a failure after one still leaves
     * the queue as the caller saw it. */
    status = match_seq_pick(m, pos, anchor, &seq);
    if (status == ONIC_OK) {
        e->key    = key;
        e->ignore = ignore;
        e->cookie = cookie;
        e->seq    = seq;
        status = m->ops->insert(m, e, anchor, pos == ONIC_MATCH_AFTER);
    }
    if (status != ONIC_OK) {
        e->seq = ONIC_MENTRY_FREE;
        onic_pool_put(&m->pool, e);
        return status;
    }
    m->length++;
    m->stats.appends++;
    if (m->length > m->stats.max_length)
        m->stats.max_length = m->length;
    if (entry_p != NULL)
        *entry_p = e;
    return ONIC_OK;
}

/* A traced hit on the front: its record, as the engines write it for a
 * hit on their first entry (found, one entry inspected), then the engine's
 * plain remove (the record is a MATCH, no REMOVE). Inline where a lookup
 * with accept (a delivery) takes it: a call of its own cost 29
 * instructions, as much as the record. */
static inline __attribute__((always_inline)) void
match_front_record(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, onic_mentry_t *e,
                   int remove, unsigned flags)
{
    uint64_t kb = key.bits, ki = key.id, ib = ignore.bits, ii = ignore.id;

    ONIC_TRACE_SCALARS(kb, ki, ib, ii);
    onic_trace_rec_lookup(m, kb, ki, ib, ii, e, remove, flags, 1);
    if (remove)
        onic_match_tracer_of(m)->real->remove(m, e);
}

/* The same for match and peek, a call: inlined into a receive's post (its
 * search of the unexpected headers), the record's registers cost every
 * untraced post a few instructions. */
static __attribute__((noinline)) void match_front_recorded(onic_matcher_t *m, onic_mkey_t key,
                                                           onic_mkey_t ignore, onic_mentry_t *e,
                                                           int remove)
{
    match_front_record(m, key, ignore, e, remove, 0);
}

/* The front entry, when it matches and accept takes it; NULL otherwise (the
 * engine then searches past it, engine.h). The engine's search costs a call
 * with seven arguments and a frame; a posted receive or an unexpected
 * header is nearly always the front of its queue. A traced matcher records
 * the hit here as its engine would (trace.c), so tracing costs the record
 * and not the search's call too. */
static inline onic_mentry_t *match_front(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                         onic_match_accept_t accept, void *arg, int *remove)
{
    onic_mentry_t *e = m->front;
    int took;

    if (e == NULL || !onic_mentry_matches(e, key, ignore))
        return NULL;
    if (accept != NULL) {
        if ((took = accept(arg, e->cookie)) == 0)
            return NULL;
        if (took == ONIC_MATCH_TAKE_LAST) /* as the engines read it */
            *remove = 1;
    }
    m->stats.inspected++;
    if (__builtin_expect(m->traced, 0)) {
        if (accept == NULL) /* match and peek: the unexpected queue's */
            match_front_recorded(m, key, ignore, e, *remove);
        else
            match_front_record(m, key, ignore, e, *remove, ONIC_TRACE_ACCEPT);
    } else if (*remove) {
        m->ops->remove(m, e);
    }
    return e;
}

/* Inline into match and peek, so their constant accept and remove cost
 * nothing. */
static inline void *match_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                               onic_match_accept_t accept, void *arg, int remove)
{
    onic_mentry_t *e;
    void *cookie;

    m->stats.lookups++;
    e = match_front(m, key, ignore, accept, arg, &remove);
    if (e == NULL && accept == NULL)
        e = m->ops->find(m, key, ignore, remove);
    else if (e == NULL)
        e = m->ops->find_accept(m, key, ignore, accept, arg, &remove);
    if (e == NULL)
        return NULL;
    m->stats.hits++;
    cookie = e->cookie;
    if (remove)
        match_entry_release(m, e);
    return cookie;
}

void *onic_matcher_match(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore)
{
    if (m == NULL) {
        onic_error("match: match on a NULL matcher");
        return NULL;
    }
    return match_find(m, key, ignore, NULL, NULL, 1);
}

void *onic_matcher_peek(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore)
{
    if (m == NULL) {
        onic_error("match: peek on a NULL matcher");
        return NULL;
    }
    return match_find(m, key, ignore, NULL, NULL, 0);
}

void *onic_matcher_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                        onic_match_accept_t accept, void *arg, int remove)
{
    if (m == NULL) {
        onic_error("match: find on a NULL matcher");
        return NULL;
    }
    return match_find(m, key, ignore, accept, arg, remove != 0);
}

onic_status_t onic_matcher_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    if (m == NULL || e == NULL) {
        onic_error("match: remove with a NULL %s", m == NULL ? "matcher" : "entry");
        return ONIC_ERR_INVALID_PARAM;
    }
    if (!onic_mentry_queued(e)) {
        onic_debug("match: remove of entry %p that is no longer queued", (void *)e);
        return ONIC_ERR_NO_ELEM;
    }
    m->ops->remove(m, e);
    m->stats.removes++;
    match_entry_release(m, e);
    return ONIC_OK;
}

void onic_matcher_label(onic_matcher_t *m, onic_match_queue_t kind, uint32_t index)
{
    onic_match_trace_label(m, (unsigned)kind, index);
}

size_t onic_matcher_length(const onic_matcher_t *m)
{
    return m == NULL ? 0 : m->length;
}

void onic_matcher_stats(const onic_matcher_t *m, onic_match_stats_t *stats_p)
{
    if (m == NULL || stats_p == NULL)
        return;
    *stats_p = m->stats;
}

/* --- MPI envelopes --- */

#define MPI_TAG_MASK 0xffffffffull

onic_status_t onic_match_mpi_encode(uint64_t context, int64_t source, int64_t tag,
                                    onic_mkey_t *key_p, onic_mkey_t *ignore_p)
{
    onic_mkey_t key = {0, 0}, ignore = {0, 0};

    if (key_p == NULL || ignore_p == NULL || context > ONIC_MATCH_MPI_MAX_CONTEXT ||
        (source != ONIC_MATCH_MPI_ANY_SOURCE && (source < 0 || source > ONIC_MATCH_MPI_MAX_RANK)) ||
        (tag != ONIC_MATCH_MPI_ANY_TAG && (tag < 0 || tag > ONIC_MATCH_MPI_MAX_TAG))) {
        onic_debug("match: cannot encode MPI envelope context %llu source %lld tag %lld",
                   (unsigned long long)context, (long long)source, (long long)tag);
        return ONIC_ERR_INVALID_PARAM;
    }
    key.bits = context << 32;
    if (tag == ONIC_MATCH_MPI_ANY_TAG)
        ignore.bits = MPI_TAG_MASK;
    else
        key.bits |= (uint64_t)tag;
    if (source == ONIC_MATCH_MPI_ANY_SOURCE)
        ignore.id = UINT64_MAX;
    else
        key.id = (uint64_t)source;
    *key_p = key;
    *ignore_p = ignore;
    return ONIC_OK;
}

void onic_match_mpi_decode(onic_mkey_t key, uint32_t *context_p, int32_t *source_p,
                           int32_t *tag_p)
{
    if (context_p != NULL)
        *context_p = (uint32_t)(key.bits >> 32);
    if (source_p != NULL)
        *source_p = (int32_t)key.id;
    if (tag_p != NULL)
        *tag_p = (int32_t)(key.bits & MPI_TAG_MASK);
}
