/* hash: constant-time matching with wildcards and MPI ordering intact.
 *
 * Entries are grouped into classes by their ignore mask (MPI has at most
 * four: exact, any-source, any-tag, both). Within a class, every entry that
 * matches a query q has the same key under the combined mask ~(class | q), so
 * one hash index per (class, combined mask) -- a "view" -- puts all of them in
 * one bucket, chained oldest first. A lookup probes one bucket per class and
 * keeps the candidate with the smallest sequence number: the oldest match
 * across classes. Views are built lazily on the first query that needs them,
 * so an exact header costs one view per class and an ANY_SOURCE receive
 * searching exact unexpected headers gets its own view of that class.
 *
 * Short queues are walked in order instead (depth 1 costs one compare), and
 * the rare shapes the index does not cover -- more than HASH_MAX_CLASSES live
 * masks, more than HASH_MAX_VIEWS query masks per class, an index that could
 * not be allocated -- fall back to the same ordered walk, so the answer is
 * always the list engine's answer. */
#include "match/engine.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

#define HASH_MAX_CLASSES 8   /* distinct entry ignore masks with an index */
#define HASH_MAX_VIEWS   4   /* indices per class: one per combined mask */
#define HASH_LINEAR_MAX  8   /* at or below this length, walk the order list */
#define HASH_NO_CLASS    0xff

typedef struct hash_entry hash_entry_t;

typedef struct hash_link {
    hash_entry_t *prev, *next;
} hash_link_t;

struct hash_entry {
    onic_mentry_t super;
    onic_dlist_t  order;                  /* every entry, oldest first */
    hash_link_t   vlink[HASH_MAX_VIEWS];  /* bucket chain of each view of its class */
};

typedef struct hash_bucket {
    hash_entry_t *head, *tail;
} hash_bucket_t;

typedef struct hash_view {
    onic_mkey_t    ignore;   /* class mask | query mask */
    uint64_t       nbuckets; /* power of two */
    hash_bucket_t *buckets;
} hash_view_t;

typedef struct hash_class {
    onic_mkey_t ignore;
    size_t      count;
    unsigned    nviews;
    hash_view_t views[HASH_MAX_VIEWS];
} hash_class_t;

typedef struct hash_engine {
    onic_dlist_t order;
    size_t       unindexed;  /* entries whose mask found no class slot */
    unsigned     nclasses;   /* class slots in use, live or empty */
    uint64_t     min_buckets;
    hash_class_t classes[HASH_MAX_CLASSES];
} hash_engine_t;

/* The class index lives in the entry's engine_flags. */
static inline unsigned hash_entry_class(const hash_entry_t *e)
{
    return e->super.engine_flags;
}

static inline uint64_t hash_key(onic_mkey_t key, onic_mkey_t ignore)
{
    uint64_t h = (key.bits & ~ignore.bits) ^ ((key.id & ~ignore.id) * 0x9e3779b97f4a7c15ull);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

static inline int hash_mkey_eq(onic_mkey_t a, onic_mkey_t b)
{
    return ((a.bits ^ b.bits) | (a.id ^ b.id)) == 0;
}

static inline hash_bucket_t *hash_view_bucket(const hash_view_t *v, onic_mkey_t key)
{
    return &v->buckets[hash_key(key, v->ignore) & (v->nbuckets - 1)];
}

static void hash_view_link(hash_view_t *v, unsigned slot, hash_entry_t *e)
{
    hash_bucket_t *b = hash_view_bucket(v, e->super.key);

    e->vlink[slot].next = NULL;
    e->vlink[slot].prev = b->tail;
    if (b->tail != NULL)
        b->tail->vlink[slot].next = e;
    else
        b->head = e;
    b->tail = e;
}

static void hash_view_unlink(hash_view_t *v, unsigned slot, hash_entry_t *e)
{
    hash_bucket_t *b = hash_view_bucket(v, e->super.key);
    hash_link_t *l = &e->vlink[slot];

    if (l->prev != NULL)
        l->prev->vlink[slot].next = l->next;
    else
        b->head = l->next;
    if (l->next != NULL)
        l->next->vlink[slot].prev = l->prev;
    else
        b->tail = l->prev;
}

/* Double the buckets. Each new bucket draws from exactly one old bucket, so
 * walking old chains in order keeps every chain oldest first. On allocation
 * failure the view keeps its size: slower chains, same answers. */
static void hash_view_grow(hash_view_t *v, unsigned slot)
{
    uint64_t n = v->nbuckets * 2;
    hash_bucket_t *old = v->buckets;
    hash_bucket_t *nb = onic_calloc(n, sizeof(*nb));

    if (nb == NULL) {
        onic_debug("match/hash: cannot grow a view to %llu buckets; keeping %llu",
                   (unsigned long long)n, (unsigned long long)v->nbuckets);
        return;
    }
    v->buckets = nb;
    v->nbuckets = n;
    for (uint64_t i = 0; i < n / 2; i++) {
        hash_entry_t *e = old[i].head;
        while (e != NULL) {
            hash_entry_t *next = e->vlink[slot].next;
            hash_view_link(v, slot, e);
            e = next;
        }
    }
    onic_free(old);
}

static onic_status_t hash_init(onic_matcher_t *m)
{
    hash_engine_t *h = onic_calloc(1, sizeof(*h));

    if (h == NULL)
        return ONIC_ERR_NO_MEMORY;
    onic_dlist_init(&h->order);
    h->min_buckets = m->cfg.hash_buckets;
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

/* The class slot for an entry mask: an existing one, a new one, or an empty
 * one recycled. HASH_NO_CLASS when all slots hold live entries. */
static unsigned hash_class_find(hash_engine_t *h, onic_mkey_t ignore)
{
    unsigned empty = HASH_NO_CLASS;

    for (unsigned i = 0; i < h->nclasses; i++) {
        if (hash_mkey_eq(h->classes[i].ignore, ignore))
            return i;
        if (h->classes[i].count == 0 && empty == HASH_NO_CLASS)
            empty = i;
    }
    if (h->nclasses < HASH_MAX_CLASSES)
        empty = h->nclasses++;
    if (empty != HASH_NO_CLASS) {
        hash_class_drop_views(&h->classes[empty]);
        h->classes[empty].ignore = ignore;
    }
    return empty;
}

static void hash_append(onic_matcher_t *m, onic_mentry_t *me)
{
    hash_engine_t *h = m->engine;
    hash_entry_t *e = (hash_entry_t *)me;
    unsigned ci = hash_class_find(h, me->ignore);
    hash_class_t *c;

    onic_dlist_push_tail(&h->order, &e->order);
    me->engine_flags = ci;
    if (ci == HASH_NO_CLASS) {
        h->unindexed++;
        return;
    }
    c = &h->classes[ci];
    c->count++;
    for (unsigned s = 0; s < c->nviews; s++) {
        hash_view_link(&c->views[s], s, e);
        if (c->count > c->views[s].nbuckets)
            hash_view_grow(&c->views[s], s);
    }
}

static void hash_unlink(hash_engine_t *h, hash_entry_t *e)
{
    unsigned ci = hash_entry_class(e);

    onic_dlist_del(&e->order);
    if (ci == HASH_NO_CLASS) {
        h->unindexed--;
        return;
    }
    hash_class_t *c = &h->classes[ci];
    c->count--;
    for (unsigned s = 0; s < c->nviews; s++)
        hash_view_unlink(&c->views[s], s, e);
}

/* The view of class c for combined mask `ignore`, built now if missing.
 * NULL if the class has no free view slot or memory ran out. */
static hash_view_t *hash_view_get(hash_engine_t *h, unsigned ci, onic_mkey_t ignore)
{
    hash_class_t *c = &h->classes[ci];
    hash_view_t *v;
    uint64_t n = h->min_buckets;

    for (unsigned s = 0; s < c->nviews; s++)
        if (hash_mkey_eq(c->views[s].ignore, ignore))
            return &c->views[s];
    if (c->nviews == HASH_MAX_VIEWS)
        return NULL;
    while (n < c->count)
        n *= 2;
    v = &c->views[c->nviews];
    v->buckets = onic_calloc(n, sizeof(*v->buckets));
    if (v->buckets == NULL) {
        onic_debug("match/hash: cannot build a view of %llu buckets; walking the queue",
                   (unsigned long long)n);
        return NULL;
    }
    v->ignore = ignore;
    v->nbuckets = n;
    for (onic_dlist_t *l = h->order.next; l != &h->order; l = l->next) {
        hash_entry_t *e = onic_container_of(l, hash_entry_t, order);
        if (hash_entry_class(e) == ci)
            hash_view_link(v, c->nviews, e);
    }
    c->nviews++;
    return v;
}

static hash_entry_t *hash_find_linear(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore)
{
    hash_engine_t *h = m->engine;
    uint64_t inspected = 0;

    for (onic_dlist_t *l = h->order.next; l != &h->order; l = l->next) {
        hash_entry_t *e = onic_container_of(l, hash_entry_t, order);
        inspected++;
        if (onic_mentry_matches(&e->super, key, ignore)) {
            m->stats.inspected += inspected;
            return e;
        }
    }
    m->stats.inspected += inspected;
    return NULL;
}

/* One bucket probe per live class; the smallest sequence number wins.
 * Returns 0 when some class cannot be indexed for this query. */
static int hash_find_indexed(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                             hash_entry_t **best_p)
{
    hash_engine_t *h = m->engine;
    hash_entry_t *best = NULL;
    uint64_t inspected = 0;

    for (unsigned ci = 0; ci < h->nclasses; ci++) {
        hash_class_t *c = &h->classes[ci];
        onic_mkey_t vignore = {c->ignore.bits | ignore.bits, c->ignore.id | ignore.id};
        hash_view_t *v;
        unsigned s;

        if (c->count == 0)
            continue;
        v = hash_view_get(h, ci, vignore);
        if (v == NULL) {
            m->stats.inspected += inspected;
            return 0;
        }
        s = (unsigned)(v - c->views);
        for (hash_entry_t *e = hash_view_bucket(v, key)->head; e != NULL; e = e->vlink[s].next) {
            inspected++;
            if (best != NULL && e->super.seq > best->super.seq)
                break; /* the chain is oldest first: nothing older follows */
            if (onic_mentry_matches(&e->super, key, ignore)) {
                best = e;
                break;
            }
        }
    }
    m->stats.inspected += inspected;
    *best_p = best;
    return 1;
}

static onic_mentry_t *hash_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    hash_engine_t *h = m->engine;
    hash_entry_t *e;

    if (m->length <= HASH_LINEAR_MAX || h->unindexed > 0 ||
        !hash_find_indexed(m, key, ignore, &e))
        e = hash_find_linear(m, key, ignore);
    if (e == NULL)
        return NULL;
    if (remove)
        hash_unlink(h, e);
    return &e->super;
}

static void hash_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    hash_unlink(m->engine, (hash_entry_t *)e);
}

const onic_match_ops_t onic_match_hash_ops = {
    .name       = "hash",
    .desc       = "hash index per ignore-mask class, oldest match by sequence number (default)",
    .entry_size = sizeof(hash_entry_t),
    .init       = hash_init,
    .fini       = hash_fini,
    .reserve    = NULL,
    .append     = hash_append,
    .find       = hash_find,
    .remove     = hash_remove,
};
