/* hash: constant-time matching with wildcards and MPI ordering intact.
 *
 * Entries are grouped into classes by their ignore mask (MPI has at most
 * four: exact, any-source, any-tag, both). Within a class, every entry that
 * matches a query q has the same key under the combined mask ~(class | q), so
 * one hash index per (class, combined mask) -- a "view" -- puts all of them in
 * one bucket, chained in queue order (by order key, seq). A lookup probes one
 * bucket per live class and keeps the candidate with the smallest seq: the
 * first match in queue order across classes. An append goes at the back of
 * its chains; an insert anywhere else walks its chains from the back to its
 * seq. A lookup with an accept callback merges the probed chains' matches in
 * seq order, so a refused entry moves only its own chain on. Each class's
 * primary view (combined mask = the class's own, what exact headers use) exists from the class's first entry; the views
 * wildcard queries need (an ANY_SOURCE receive searching exact unexpected
 * headers) are built on first use.
 *
 * There is no list of all entries: keeping one would cost two random cache
 * lines per removal. The shapes the index does not cover -- more than
 * HASH_MAX_CLASSES live masks, more than HASH_MAX_VIEWS query masks for a
 * class, an index that could not be allocated -- are still answered exactly:
 * entries without a class sit in an ordered overflow list, and a query without
 * a view scans every entry and keeps the smallest seq.
 *
 * With no list of all entries, an insert next to an anchor finds the anchor's
 * neighbour by scanning every entry, and a renumbering sorts them all: both
 * O(n), which appends and lookups never pay. */
#include "match/engine.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define HASH_MAX_CLASSES 8   /* distinct entry ignore masks with an index */
#define HASH_MAX_VIEWS   4   /* indices per class: one per combined mask */
#define HASH_SMALL_MAX   8   /* a queue this short is an ordered array */
#define HASH_NO_CLASS    0xffu

/* Two cache lines. The key, order key and the primary view's links,
 * everything an exact header touches, fill the first; the second holds the
 * links of the views wildcard queries use. An entry's class is not stored:
 * it is the class whose mask equals the entry's (or none, for the overflow
 * list), and in small mode vlink[0].next is NULL. */
struct hash_entry {
    onic_mentry_t super;
    onic_dlist_t  vlink[HASH_MAX_VIEWS]; /* bucket chain of each view of its class;
                                            vlink[0] chains the overflow list */
} __attribute__((aligned(64)));
typedef struct hash_entry hash_entry_t;

static_assert(sizeof(hash_entry_t) == 128, "a hash entry is two cache lines");

/* Buckets are circular list heads, so an entry unlinks from every chain
 * without knowing its bucket. */
typedef onic_dlist_t hash_bucket_t;

typedef struct hash_view {
    onic_mkey_t    ignore;   /* class mask | query mask */
    uint64_t       nbuckets; /* power of two */
    unsigned       shift;    /* 63 - log2(nbuckets): the hash's top bits pick the bucket */
    hash_bucket_t *buckets;
} hash_view_t;

typedef struct hash_class {
    onic_mkey_t ignore;
    size_t      count;
    unsigned    nviews;      /* 0: slot unused; views[0] is the primary view */
    hash_view_t views[HASH_MAX_VIEWS];
} hash_class_t;

typedef struct hash_engine {
    /* Small mode: the queue has stayed within HASH_SMALL_MAX entries since it
     * was last empty and lives in small[], in queue order, indexed by nothing:
     * a ping-pong of post and match costs one compare. The first append past
     * that moves it into the index, where it stays until it empties. */
    int           indexed;
    unsigned      nsmall;
    hash_entry_t *small[HASH_SMALL_MAX];
    unsigned      nclasses;  /* class slots in use, live or empty */
    uint64_t      min_buckets;
    hash_bucket_t overflow;  /* entries no class could take, in queue order */
    size_t        unindexed;
    hash_class_t  classes[HASH_MAX_CLASSES];
} hash_engine_t;

/* Multiplicative hashing: each word times an odd constant, so the top bits
 * of the product depend on every bit of the word; the bucket is the top bits.
 * The two multiplies are independent, which keeps the key-to-bucket latency,
 * paid on every lookup and append, to one multiply. */
static inline uint64_t hash_key(onic_mkey_t key, onic_mkey_t ignore)
{
    return ((key.bits & ~ignore.bits) * 0x9e3779b97f4a7c15ull) ^
           ((key.id & ~ignore.id) * 0xc2b2ae3d27d4eb4full);
}

static unsigned hash_shift(uint64_t nbuckets)
{
    return 63u - (unsigned)__builtin_ctzll(nbuckets);
}

static inline int hash_mkey_eq(onic_mkey_t a, onic_mkey_t b)
{
    return ((a.bits ^ b.bits) | (a.id ^ b.id)) == 0;
}

static inline hash_bucket_t *hash_view_bucket(const hash_view_t *v, onic_mkey_t key)
{
    /* Two shifts so that one bucket (shift 63) needs no shift by 64. */
    return &v->buckets[(hash_key(key, v->ignore) >> 1) >> v->shift];
}

static inline hash_entry_t *hash_entry_of(onic_dlist_t *l, unsigned slot)
{
    return (hash_entry_t *)((char *)(l - slot) - offsetof(hash_entry_t, vlink));
}

static hash_bucket_t *hash_buckets_alloc(uint64_t n)
{
    hash_bucket_t *b = onic_malloc(n * sizeof(*b));
    if (b != NULL)
        for (uint64_t i = 0; i < n; i++)
            onic_dlist_init(&b[i]);
    return b;
}

/* Double the buckets. Each new bucket draws from exactly one old bucket, so
 * walking old chains in order keeps every chain in queue order. On allocation
 * failure the view keeps its size: longer chains, same answers. */
static void hash_view_grow(hash_view_t *v, unsigned slot)
{
    uint64_t n = v->nbuckets * 2;
    hash_bucket_t *old = v->buckets;
    hash_bucket_t *nb = hash_buckets_alloc(n);

    if (nb == NULL) {
        onic_debug("match/hash: cannot grow a view to %llu buckets; keeping %llu",
                   (unsigned long long)n, (unsigned long long)v->nbuckets);
        return;
    }
    v->buckets = nb;
    v->nbuckets = n;
    v->shift = hash_shift(n);
    for (uint64_t i = 0; i < n / 2; i++) {
        for (onic_dlist_t *l = old[i].next, *next; l != &old[i]; l = next) {
            next = l->next;
            onic_dlist_push_tail(hash_view_bucket(v, hash_entry_of(l, slot)->super.key), l);
        }
    }
    onic_free(old);
}

/* Buckets for a view of `count` entries: load factor at most one half. */
static uint64_t hash_view_size(const hash_engine_t *h, size_t count)
{
    uint64_t n = h->min_buckets;
    while (n < 2 * (uint64_t)count)
        n *= 2;
    return n;
}

static onic_status_t hash_init(onic_matcher_t *m)
{
    hash_engine_t *h = onic_calloc(1, sizeof(*h));

    if (h == NULL) {
        onic_error("match/hash: cannot allocate the engine (%zu bytes)", sizeof(*h));
        return ONIC_ERR_NO_MEMORY;
    }
    h->min_buckets = m->cfg.hash_buckets;
    onic_dlist_init(&h->overflow);
    m->engine = h;
    return ONIC_OK;
}

static void hash_class_drop_views(hash_class_t *c)
{
    for (unsigned i = 0; i < c->nviews; i++)
        onic_free(c->views[i].buckets);
    c->nviews = 0;
}

static void hash_fini(onic_matcher_t *m)
{
    hash_engine_t *h = m->engine;

    for (unsigned i = 0; i < h->nclasses; i++)
        hash_class_drop_views(&h->classes[i]);
    onic_free(h);
}

/* The class an entry with this mask belongs to: HASH_NO_CLASS means the
 * overflow list. Invariant: while a class with mask M exists, every entry
 * with mask M is in it. */
static inline unsigned hash_class_of(const hash_engine_t *h, onic_mkey_t ignore)
{
    for (unsigned i = 0; i < h->nclasses; i++)
        if (h->classes[i].nviews > 0 && hash_mkey_eq(h->classes[i].ignore, ignore))
            return i;
    return HASH_NO_CLASS;
}

/* Link l into a chain at its place by seq, walking from the back: an insert
 * lands near the back as often as anywhere, and chains are short. */
static void hash_chain_link_at(onic_dlist_t *chain, onic_dlist_t *l, unsigned slot, uint64_t seq)
{
    onic_dlist_t *pos = chain->prev;

    while (pos != chain && hash_entry_of(pos, slot)->super.seq > seq)
        pos = pos->prev;
    onic_match_dlist_insert(pos, l);
}

/* sorted: link at the place by seq (an insert), else at the back (an
 * append, or entries moved over in order). */
static void hash_class_link(hash_class_t *c, hash_entry_t *e, int sorted)
{
    c->count++;
    for (unsigned s = 0; s < c->nviews; s++) {
        hash_view_t *v = &c->views[s];
        if (sorted)
            hash_chain_link_at(hash_view_bucket(v, e->super.key), &e->vlink[s], s, e->super.seq);
        else
            onic_dlist_push_tail(hash_view_bucket(v, e->super.key), &e->vlink[s]);
        if (c->count * 2 > v->nbuckets)
            hash_view_grow(v, s);
    }
}

/* The class for an entry mask: an existing one, else a new or recycled empty
 * slot with its primary view. HASH_NO_CLASS when every slot holds live
 * entries or the primary view cannot be allocated. */
static unsigned hash_class_get(hash_engine_t *h, onic_mkey_t ignore)
{
    unsigned slot = HASH_NO_CLASS;
    hash_class_t *c;
    hash_bucket_t *buckets;

    for (unsigned i = 0; i < h->nclasses; i++) {
        if (h->classes[i].nviews > 0 && hash_mkey_eq(h->classes[i].ignore, ignore))
            return i;
        if (h->classes[i].count == 0 && slot == HASH_NO_CLASS)
            slot = i;
    }
    /* A fresh slot first: an empty class is likely to be used again, and
     * recycling it would throw its views away. */
    if (h->nclasses < HASH_MAX_CLASSES)
        slot = h->nclasses;
    if (slot == HASH_NO_CLASS)
        return HASH_NO_CLASS;
    buckets = hash_buckets_alloc(h->min_buckets);
    if (buckets == NULL) {
        onic_debug("match/hash: cannot index a new mask class; its entries go unindexed");
        return HASH_NO_CLASS;
    }
    if (slot == h->nclasses)
        h->nclasses++;
    c = &h->classes[slot];
    hash_class_drop_views(c);
    c->ignore = ignore;
    c->views[0].ignore = ignore;
    c->views[0].nbuckets = h->min_buckets;
    c->views[0].shift = hash_shift(h->min_buckets);
    c->views[0].buckets = buckets;
    c->nviews = 1;
    /* Keep the invariant: older entries with this mask that found no class
     * join it now, in order, before the entry being appended. */
    for (onic_dlist_t *l = h->overflow.next, *next; h->unindexed > 0 && l != &h->overflow;
         l = next) {
        hash_entry_t *e = hash_entry_of(l, 0);
        next = l->next;
        if (hash_mkey_eq(e->super.ignore, ignore)) {
            onic_dlist_del(l);
            h->unindexed--;
            hash_class_link(c, e, 0);
        }
    }
    return slot;
}

static void hash_index(hash_engine_t *h, hash_entry_t *e, int sorted)
{
    onic_mentry_t *me = &e->super;
    unsigned ci = hash_class_get(h, me->ignore);

    if (ci == HASH_NO_CLASS) {
        if (sorted)
            hash_chain_link_at(&h->overflow, &e->vlink[0], 0, me->seq);
        else
            onic_dlist_push_tail(&h->overflow, &e->vlink[0]);
        h->unindexed++;
        return;
    }
    hash_class_link(&h->classes[ci], e, sorted);
}

/* Leave small mode: index the array's entries in order. */
static void hash_small_index(hash_engine_t *h)
{
    for (unsigned i = 0; i < h->nsmall; i++)
        hash_index(h, h->small[i], 0);
    h->nsmall = 0;
    h->indexed = 1;
}

static void hash_append(onic_matcher_t *m, onic_mentry_t *me)
{
    hash_engine_t *h = m->engine;

    if (!h->indexed) {
        if (h->nsmall < HASH_SMALL_MAX) {
            ((hash_entry_t *)me)->vlink[0].next = NULL;
            h->small[h->nsmall++] = (hash_entry_t *)me;
            return;
        }
        hash_small_index(h);
    }
    hash_index(h, (hash_entry_t *)me, 0);
}

/* The place is in e's seq: the anchor is not needed. */
static onic_status_t hash_insert(onic_matcher_t *m, onic_mentry_t *me, onic_mentry_t *anchor,
                                 int after)
{
    hash_engine_t *h = m->engine;
    hash_entry_t *e = (hash_entry_t *)me;

    (void)anchor;
    (void)after;
    if (!h->indexed) {
        if (h->nsmall < HASH_SMALL_MAX) {
            unsigned i = h->nsmall;
            while (i > 0 && h->small[i - 1]->super.seq > me->seq)
                i--;
            memmove(&h->small[i + 1], &h->small[i], (h->nsmall - i) * sizeof(h->small[0]));
            e->vlink[0].next = NULL;
            h->small[i] = e;
            h->nsmall++;
            return ONIC_OK;
        }
        hash_small_index(h);
    }
    hash_index(h, e, 1);
    return ONIC_OK;
}

/* Calls fn on every indexed entry (not the small array), in no order. */
static void hash_each(hash_engine_t *h, void (*fn)(hash_entry_t *e, void *ctx), void *ctx)
{
    for (unsigned ci = 0; ci < h->nclasses; ci++) {
        const hash_view_t *v = &h->classes[ci].views[0];
        if (h->classes[ci].count == 0)
            continue;
        for (uint64_t b = 0; b < v->nbuckets; b++)
            for (onic_dlist_t *l = v->buckets[b].next; l != &v->buckets[b]; l = l->next)
                fn(hash_entry_of(l, 0), ctx);
    }
    for (onic_dlist_t *l = h->overflow.next; l != &h->overflow; l = l->next)
        fn(hash_entry_of(l, 0), ctx);
}

typedef struct hash_nearest {
    uint64_t      seq;
    int           after;
    hash_entry_t *best;
} hash_nearest_t;

static void hash_nearest_visit(hash_entry_t *e, void *ctx)
{
    hash_nearest_t *n = ctx;
    uint64_t s = e->super.seq;

    if (n->after ? s > n->seq && (n->best == NULL || s < n->best->super.seq)
                 : s < n->seq && (n->best == NULL || s > n->best->super.seq))
        n->best = e;
}

static onic_mentry_t *hash_neighbour(onic_matcher_t *m, const onic_mentry_t *me, int after)
{
    hash_engine_t *h = m->engine;
    hash_nearest_t n = {me->seq, after, NULL};

    if (!h->indexed) {
        unsigned i = 0;
        while (&h->small[i]->super != me)
            i++;
        if (after)
            return i + 1 < h->nsmall ? &h->small[i + 1]->super : NULL;
        return i > 0 ? &h->small[i - 1]->super : NULL;
    }
    hash_each(h, hash_nearest_visit, &n);
    return n.best != NULL ? &n.best->super : NULL;
}

typedef struct hash_gather {
    hash_entry_t **all;
    size_t         n, max;
} hash_gather_t;

static void hash_gather_visit(hash_entry_t *e, void *ctx)
{
    hash_gather_t *g = ctx;

    if (g->n < g->max)
        g->all[g->n] = e;
    g->n++;
}

static int hash_seq_cmp(const void *a, const void *b);

/* Chains stay in order: the new keys keep the old ones' order. */
static onic_status_t hash_renumber(onic_matcher_t *m, uint64_t base, uint64_t stride)
{
    hash_engine_t *h = m->engine;
    hash_gather_t g = {NULL, 0, m->length};

    if (!h->indexed) {
        for (unsigned i = 0; i < h->nsmall; i++, base += stride)
            h->small[i]->super.seq = base;
        return ONIC_OK;
    }
    g.all = onic_malloc(g.max * sizeof(*g.all) + 1);
    if (g.all == NULL) {
        onic_error("match/hash: cannot renumber a queue of %zu entries (no memory to sort them)",
                   m->length);
        return ONIC_ERR_NO_MEMORY;
    }
    hash_each(h, hash_gather_visit, &g);
    assert(g.n == g.max);
    qsort(g.all, g.n, sizeof(*g.all), hash_seq_cmp);
    for (size_t i = 0; i < g.n; i++, base += stride)
        g.all[i]->super.seq = base;
    onic_free(g.all);
    return ONIC_OK;
}

static void hash_unlink(onic_matcher_t *m, hash_entry_t *e)
{
    hash_engine_t *h = m->engine;
    unsigned ci;
    hash_class_t *c;

    if (e->vlink[0].next == NULL) { /* small mode */
        unsigned i = 0;
        while (h->small[i] != e)
            i++;
        h->nsmall--;
        memmove(&h->small[i], &h->small[i + 1], (h->nsmall - i) * sizeof(h->small[0]));
        return;
    }
    if (m->length == 1)
        h->indexed = 0; /* emptied: back to small mode */
    ci = hash_class_of(h, e->super.ignore);

    if (ci == HASH_NO_CLASS) {
        onic_dlist_del(&e->vlink[0]);
        h->unindexed--;
        return;
    }
    c = &h->classes[ci];
    c->count--;
    for (unsigned s = 0; s < c->nviews; s++)
        onic_dlist_del(&e->vlink[s]);
}

static int hash_seq_cmp(const void *a, const void *b)
{
    uint64_t x = (*(hash_entry_t *const *)a)->super.seq;
    uint64_t y = (*(hash_entry_t *const *)b)->super.seq;
    return (x > y) - (x < y);
}

/* The view of class ci for combined mask `ignore`, built now if missing: the
 * class's entries, gathered from the primary view and sorted by seq, linked
 * in order. NULL if the class has no free view slot or memory
 * ran out. */
static hash_view_t *hash_view_get(hash_engine_t *h, unsigned ci, onic_mkey_t ignore)
{
    hash_class_t *c = &h->classes[ci];
    const hash_view_t *primary = &c->views[0];
    hash_entry_t **all;
    hash_view_t *v;
    size_t n = 0;

    for (unsigned s = 0; s < c->nviews; s++)
        if (hash_mkey_eq(c->views[s].ignore, ignore))
            return &c->views[s];
    if (c->nviews == HASH_MAX_VIEWS)
        return NULL;
    v = &c->views[c->nviews];
    v->nbuckets = hash_view_size(h, c->count);
    v->shift = hash_shift(v->nbuckets);
    v->buckets = hash_buckets_alloc(v->nbuckets);
    all = onic_malloc(c->count * sizeof(*all) + 1);
    if (v->buckets == NULL || all == NULL) {
        onic_debug("match/hash: cannot build a view of %zu entries; scanning instead", c->count);
        onic_free(v->buckets);
        onic_free(all);
        return NULL;
    }
    for (uint64_t b = 0; b < primary->nbuckets; b++)
        for (onic_dlist_t *l = primary->buckets[b].next; l != &primary->buckets[b]; l = l->next)
            all[n++] = hash_entry_of(l, 0);
    qsort(all, n, sizeof(*all), hash_seq_cmp);
    v->ignore = ignore;
    for (size_t i = 0; i < n; i++)
        onic_dlist_push_tail(hash_view_bucket(v, all[i]->super.key), &all[i]->vlink[c->nviews]);
    onic_free(all);
    return &c->views[c->nviews++];
}

/* The first match in a chain, if earlier than *best_p. */
static inline void hash_chain_find(onic_dlist_t *chain, unsigned slot, onic_mkey_t key,
                                   onic_mkey_t ignore, hash_entry_t **best_p,
                                   uint64_t *inspected_p)
{
    for (onic_dlist_t *l = chain->next; l != chain; l = l->next) {
        hash_entry_t *e = hash_entry_of(l, slot);
        if (*best_p != NULL && e->super.seq > (*best_p)->super.seq)
            return; /* chains are in order: nothing earlier follows */
        (*inspected_p)++;
        if (onic_mentry_matches(&e->super, key, ignore)) {
            *best_p = e;
            return;
        }
    }
}

typedef struct hash_scan {
    onic_mkey_t   key, ignore;
    uint64_t      after;  /* only entries with a larger seq count; seq is never 0 */
    uint64_t      inspected;
    hash_entry_t *best;
} hash_scan_t;

static void hash_scan_visit(hash_entry_t *e, void *ctx)
{
    hash_scan_t *sc = ctx;

    if (e->super.seq <= sc->after || (sc->best != NULL && e->super.seq > sc->best->super.seq))
        return;
    sc->inspected++;
    if (onic_mentry_matches(&e->super, sc->key, sc->ignore))
        sc->best = e;
}

/* Every entry, no index (a query shape without a view): the smallest seq
 * that matches and that accept takes. A refusal scans again for the next
 * match behind it: O(n) each, on a path that is already O(n). */
static hash_entry_t *hash_find_scan(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                    onic_match_accept_t accept, void *arg)
{
    hash_scan_t sc = {key, ignore, 0, 0, NULL};

    for (;;) {
        hash_each(m->engine, hash_scan_visit, &sc);
        if (sc.best == NULL || accept == NULL || accept(arg, sc.best->super.cookie))
            break;
        sc.after = sc.best->super.seq;
        sc.best = NULL;
    }
    m->stats.inspected += sc.inspected;
    return sc.best;
}

/* The first match in a chain from link l on. */
static inline hash_entry_t *hash_chain_next(onic_dlist_t *chain, onic_dlist_t *l, unsigned slot,
                                            onic_mkey_t key, onic_mkey_t ignore,
                                            uint64_t *inspected_p)
{
    for (; l != chain; l = l->next) {
        hash_entry_t *e = hash_entry_of(l, slot);
        (*inspected_p)++;
        if (onic_mentry_matches(&e->super, key, ignore))
            return e;
    }
    return NULL;
}

/* find with accept. Every chain a lookup would probe gets a cursor at its
 * first match; the cursor with the smallest seq is offered to accept, and a
 * refusal moves only that cursor to its chain's next match. So accept sees
 * the matches in queue order, and each chain is walked once. */
static hash_entry_t *hash_find_accept(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                      onic_match_accept_t accept, void *arg)
{
    struct {
        onic_dlist_t *chain;
        unsigned      slot;
        hash_entry_t *e;
    } cur[HASH_MAX_CLASSES + 1];
    hash_engine_t *h = m->engine;
    uint64_t inspected = 0;
    unsigned n = 0;
    int exact = (ignore.bits | ignore.id) == 0;

    if (!h->indexed) {
        for (unsigned i = 0; i < h->nsmall; i++) {
            inspected++;
            if (onic_mentry_matches(&h->small[i]->super, key, ignore) &&
                accept(arg, h->small[i]->super.cookie)) {
                m->stats.inspected += inspected;
                return h->small[i];
            }
        }
        m->stats.inspected += inspected;
        return NULL;
    }
    for (unsigned ci = 0; ci < h->nclasses; ci++) {
        hash_class_t *c = &h->classes[ci];
        hash_view_t *v;

        if (c->count == 0)
            continue;
        if (exact) {
            v = &c->views[0];
        } else {
            onic_mkey_t combined = {c->ignore.bits | ignore.bits, c->ignore.id | ignore.id};
            v = hash_view_get(h, ci, combined);
            if (v == NULL) {
                m->stats.inspected += inspected;
                return hash_find_scan(m, key, ignore, accept, arg);
            }
        }
        cur[n].chain = hash_view_bucket(v, key);
        cur[n].slot = (unsigned)(v - c->views);
        cur[n].e = hash_chain_next(cur[n].chain, cur[n].chain->next, cur[n].slot, key, ignore,
                                   &inspected);
        n++;
    }
    if (h->unindexed > 0) {
        cur[n].chain = &h->overflow;
        cur[n].slot = 0;
        cur[n].e = hash_chain_next(&h->overflow, h->overflow.next, 0, key, ignore, &inspected);
        n++;
    }
    for (;;) {
        unsigned best = n;
        hash_entry_t *e;

        for (unsigned i = 0; i < n; i++)
            if (cur[i].e != NULL && (best == n || cur[i].e->super.seq < cur[best].e->super.seq))
                best = i;
        if (best == n) {
            m->stats.inspected += inspected;
            return NULL;
        }
        e = cur[best].e;
        if (accept(arg, e->super.cookie)) {
            m->stats.inspected += inspected;
            return e;
        }
        cur[best].e = hash_chain_next(cur[best].chain, e->vlink[cur[best].slot].next,
                                      cur[best].slot, key, ignore, &inspected);
    }
}

static onic_mentry_t *hash_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    hash_engine_t *h = m->engine;
    hash_entry_t *best = NULL;
    uint64_t inspected = 0;
    int exact = (ignore.bits | ignore.id) == 0;

    if (!h->indexed) {
        for (unsigned i = 0; i < h->nsmall; i++) {
            if (onic_mentry_matches(&h->small[i]->super, key, ignore)) {
                best = h->small[i];
                m->stats.inspected += i + 1;
                goto found;
            }
        }
        m->stats.inspected += h->nsmall;
        return NULL;
    }

    for (unsigned ci = 0; ci < h->nclasses; ci++) {
        hash_class_t *c = &h->classes[ci];
        hash_view_t *v;
        unsigned s;

        if (c->count == 0)
            continue;
        if (exact) {
            v = &c->views[0];
        } else {
            onic_mkey_t combined = {c->ignore.bits | ignore.bits, c->ignore.id | ignore.id};
            v = hash_view_get(h, ci, combined);
            if (__builtin_expect(v == NULL, 0)) {
                m->stats.inspected += inspected;
                best = hash_find_scan(m, key, ignore, NULL, NULL);
                goto found;
            }
        }
        s = (unsigned)(v - c->views);
        hash_chain_find(hash_view_bucket(v, key), s, key, ignore, &best, &inspected);
    }
    if (__builtin_expect(h->unindexed > 0, 0))
        hash_chain_find(&h->overflow, 0, key, ignore, &best, &inspected);
    m->stats.inspected += inspected;
found:
    if (best == NULL)
        return NULL;
    if (remove)
        hash_unlink(m, best);
    return &best->super;
}

static onic_mentry_t *hash_find_accept_op(onic_matcher_t *m, onic_mkey_t key,
                                          onic_mkey_t ignore, onic_match_accept_t accept,
                                          void *arg, int remove)
{
    hash_entry_t *e = hash_find_accept(m, key, ignore, accept, arg);

    if (e == NULL)
        return NULL;
    if (remove)
        hash_unlink(m, e);
    return &e->super;
}

static void hash_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    hash_unlink(m, (hash_entry_t *)e);
}

const onic_match_ops_t onic_match_hash_ops = {
    .name       = "hash",
    .desc       = "hash index per ignore-mask class, first match by order key (default)",
    .entry_size = sizeof(hash_entry_t),
    .init       = hash_init,
    .fini       = hash_fini,
    .reserve    = NULL,
    .append     = hash_append,
    .insert     = hash_insert,
    .neighbour  = hash_neighbour,
    .renumber   = hash_renumber,
    .find       = hash_find,
    .find_accept = hash_find_accept_op,
    .remove     = hash_remove,
};
