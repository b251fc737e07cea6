/* hash: constant-time matching with wildcards and MPI ordering intact.
 *
 * A short queue is a ring with no index (small mode, hash_small_t): the
 * front entry is tried first, and one-byte fingerprints compared 16 at a
 * time pick the other candidates. Past HASH_SMALL_MAX entries, an append
 * that finds no slot behind the ring's last entry moves the queue into the
 * index below, until it empties.
 *
 * In the index, entries are grouped into classes by their ignore mask (MPI
 * has at most four: exact, any-source, any-tag, both). Within a class, every
 * entry that matches a query q has the same key under the combined mask
 * ~(class | q), so one hash index per (class, combined mask) -- a "view" --
 * puts all of them in one bucket, chained in queue order (by order key, seq).
 * A lookup probes one bucket per live class and keeps the candidate with the
 * smallest seq: the first match in queue order across classes. An append goes
 * at the back of its chains; an insert anywhere else walks its chains from the
 * back to its seq. A lookup with an accept callback merges the probed chains'
 * matches in seq order, so a refused entry moves only its own chain on. Each
 * class's primary view (combined mask = the class's own, what exact headers
 * use) exists from the class's first entry; the views wildcard queries need
 * (an ANY_SOURCE receive searching exact unexpected headers) are built on
 * first use.
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
#include "match/trace_rec.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define HASH_HAVE_SSE2 1
#else
#define HASH_HAVE_SSE2 0
#endif

#define HASH_MAX_CLASSES 8   /* distinct entry ignore masks with an index */
#define HASH_MAX_VIEWS   4   /* indices per class: one per combined mask */
#define HASH_NO_CLASS    0xffu
/* Small mode (hash_small_t): a ring of HASH_SMALL_SLOTS slots that holds at
 * most HASH_SMALL_MAX entries, so that it is at most half full after it is
 * packed. The limit is measured (callgrind, instructions per call through
 * the front end). With messages matched in order, the ring costs about 117
 * per append and 78 per match at any depth, the index about 210 and 175
 * (measured with tags made at append; they are now made when a lookup first
 * looks past the front, which takes about 30 off an in-order append).
 * With random targets at a steady depth (match one, append one, as
 * onic-bench-match does), a pair costs 380-395 in the ring up to 32
 * entries and 415 in the index; a ring of 48 would cost 412 at 40 entries
 * and 444 at 48, where packing and the candidates' key compares catch up.
 * The worst lookup at 32 (the match last, one mask) costs 227 in the ring
 * and 120-140 in the index. So past 32 entries the queue moves into the
 * index as soon as an append would have to pack the ring -- with random
 * targets, whose removals leave holes, within a few appends. A queue matched
 * in order has no holes, never packs, and stays in the ring up to its 64
 * slots: MPI's rate loop with 64 receives posted paid 152 per append and 285
 * per match in the index, 37 and 151 in the ring. */
#define HASH_SMALL_MAX   32
#define HASH_SMALL_SLOTS 64
#define HASH_SMALL_MASK  (HASH_SMALL_SLOTS - 1)
#define HASH_SMALL_WORDS (HASH_SMALL_SLOTS / 8)
/* Ring tags: the top two bits are the entry's mask class in the ring, the
 * low six a fingerprint. Class 3 is for masks that found no class and has no
 * fingerprint. */
#define HASH_SMALL_CLASSES 3
#define HASH_SMALL_OTHER   3
#define HASH_SMALL_FP_BITS 6

static_assert(HASH_SMALL_SLOTS >= 16 && HASH_SMALL_SLOTS <= 64 &&
              (HASH_SMALL_SLOTS & HASH_SMALL_MASK) == 0 && HASH_SMALL_MAX < HASH_SMALL_SLOTS,
              "the ring is 16, 32 or 64 slots (whole 16-byte vectors of tags, one bit each in "
              "a uint64_t), with room left over for holes");

/* Two cache lines. The key, order key and the primary view's links,
 * everything an exact header touches, fill the first; the second holds the
 * links of the views wildcard queries use. An entry's class is not stored:
 * it is the class whose mask equals the entry's (or none, for the overflow
 * list). In small mode there are no links, and the first line holds the
 * entry's slot in the ring instead. */
struct hash_entry {
    onic_mentry_t super;
    union {
        onic_dlist_t vlink[HASH_MAX_VIEWS]; /* bucket chain of each view of its class;
                                               vlink[0] chains the overflow list */
        unsigned     slot;                  /* small mode: where it is in small.slot[] */
    };
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

/* Small mode: a queue that has stayed within HASH_SMALL_MAX entries since
 * it was last empty, or beyond them with a free slot behind its last entry
 * at every append, lives in a ring, in queue order, with no index: from
 * slot[head] on, span slots (wrapping) hold its n entries and holes, and a
 * bit of `live` marks each occupied slot. An append takes the slot behind
 * the span; a removal clears the entry's bit, and a removal of the front
 * moves head on to the next entry, which is what a receiver that posts a
 * batch and gets its messages in order does. When the span reaches the end
 * of the ring, an append first packs the entries toward head (in order), so
 * with at most half of the ring in use, packing costs at most one move per
 * append. An insert between entries opens a slot by sliding the entries
 * behind its place.
 *
 * A lookup tries the front entry first. If that is not the answer, tags find
 * the candidates (entries appended since the last such lookup are tagged
 * then: `untagged`). An entry of mask class E (up to three masks have a class)
 * has three tag bytes, each class << 6 | six bits of a hash: of its key under
 * E, of its bits word alone, of its id word alone. A query with mask Q that
 * does not widen E (Q within E, as for every exact header) can only match
 * entries whose key tag is that of the query's key under E; one that widens
 * only the id (an ANY_SOURCE receive searching exact headers) goes by the
 * bits tag, one that widens only the bits by the id tag. A compare of 16
 * tags at a time (SSE2; SWAR with 64-bit words without it) per live class
 * gives the slots worth a key compare; 1 in 64 non-matching entries gets
 * through. A query that widens both words of a class, and entries of masks
 * without a class (class 3), take the whole class as candidates. */
enum { HASH_TAG_KEY, HASH_TAG_BITS, HASH_TAG_ID, HASH_TAGS };

typedef struct hash_small {
    uint64_t      live;   /* bit s: slot s holds an entry */
    /* bit s: slot s's entry has no class count and no tags yet. Entries are
     * tagged only when a lookup looks past the front: a receiver whose
     * messages come in the order it posted never pays for tags. */
    uint64_t      untagged;
    unsigned      head;   /* slot of the front entry, while n > 0 */
    unsigned      span;   /* slots from head past the last entry, holes included */
    unsigned      n;      /* entries in the ring */
    unsigned      count[HASH_SMALL_CLASSES + 1]; /* entries of each class; the last: others */
    unsigned      nclasses;                      /* classes 0 to nclasses - 1 were used */
    onic_mkey_t   cmask[HASH_SMALL_CLASSES];     /* each class's mask (kept when it empties) */
    /* Slot s's tags: byte s of each row; stale in holes. */
    uint8_t       tag[HASH_TAGS][HASH_SMALL_SLOTS] __attribute__((aligned(16)));
    hash_entry_t *slot[HASH_SMALL_SLOTS];
} hash_small_t;

typedef struct hash_engine {
    /* Until an append past HASH_SMALL_MAX entries finds the ring's end
     * reached, the queue is in small; from then on in the index, until it
     * empties. */
    int           indexed;
    int           swar;      /* compare the ring's tags without SSE2 (ONIC_SIMD=scalar) */
    hash_small_t  small;
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
static inline uint64_t hash_key_bits(onic_mkey_t key, onic_mkey_t ignore)
{
    return (key.bits & ~ignore.bits) * 0x9e3779b97f4a7c15ull;
}

static inline uint64_t hash_key_id(onic_mkey_t key, onic_mkey_t ignore)
{
    return (key.id & ~ignore.id) * 0xc2b2ae3d27d4eb4full;
}

static inline uint64_t hash_key(onic_mkey_t key, onic_mkey_t ignore)
{
    return hash_key_bits(key, ignore) ^ hash_key_id(key, ignore);
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

/* Buckets are a cache (onic_cache_alloc): how many a queue keeps follows
 * its longest, which timing decides. */
static hash_bucket_t *hash_buckets_alloc(uint64_t n)
{
    hash_bucket_t *b = onic_cache_alloc(_Alignof(hash_bucket_t), n * sizeof(*b));
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
    onic_cache_free(old);
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
    h->swar = !HASH_HAVE_SSE2 || m->cfg.simd == ONIC_SIMD_SCALAR;
    onic_dlist_init(&h->overflow);
    m->engine = h;
    return ONIC_OK;
}

static void hash_class_drop_views(hash_class_t *c)
{
    for (unsigned i = 0; i < c->nviews; i++)
        onic_cache_free(c->views[i].buckets);
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

/* --- small mode --- */

static inline unsigned hash_small_at(const hash_small_t *sm, unsigned i)
{
    return (sm->head + i) & HASH_SMALL_MASK;
}

static inline uint64_t hash_small_bit(unsigned slot)
{
    return 1ull << slot;
}

/* Slot bits to queue positions: bit i of the result is slot head + i. */
static inline uint64_t hash_small_order(const hash_small_t *sm, uint64_t slots)
{
    slots = (slots >> sm->head) | (slots << ((HASH_SMALL_SLOTS - sm->head) % HASH_SMALL_SLOTS));
    return HASH_SMALL_SLOTS == 64 ? slots : slots & ((1ull << (HASH_SMALL_SLOTS % 64)) - 1);
}

/* A tag's hash bits: the top ones, which depend on every bit of the word. */
static inline unsigned hash_small_fp(uint64_t h)
{
    return (unsigned)(h >> (64 - HASH_SMALL_FP_BITS));
}

/* The ring class for an entry mask. A class keeps its mask when it
 * empties, so a class is found by its mask alone among those used so far,
 * and an empty one is taken over by a new mask only when no class has it:
 * every entry of class c < 3 has mask cmask[c], and no two used classes
 * have the same. */
__attribute__((noinline)) static unsigned hash_small_class(hash_small_t *sm, onic_mkey_t ignore)
{
    unsigned c;

    for (c = 0; c < sm->nclasses; c++)
        if (hash_mkey_eq(sm->cmask[c], ignore))
            return c;
    for (c = 0; c < sm->nclasses && sm->count[c] != 0; c++)
        ;
    if (c < HASH_SMALL_CLASSES) {
        sm->cmask[c] = ignore;
        if (c == sm->nclasses)
            sm->nclasses++;
    }
    return c;
}

/* Give the entry in slot its tags (of its key, bits and id under its class
 * mask) and count it in its class. Class 0 inline: the only one of a queue
 * with one mask. */
static inline void hash_small_tag(hash_small_t *sm, unsigned slot)
{
    const onic_mentry_t *me = &sm->slot[slot]->super;
    unsigned c = 0, cb;
    uint64_t hb, hi;

    if (sm->nclasses == 0 || !hash_mkey_eq(sm->cmask[0], me->ignore))
        c = hash_small_class(sm, me->ignore);
    sm->count[c]++;
    cb = c << HASH_SMALL_FP_BITS;
    hb = hash_key_bits(me->key, me->ignore);
    hi = hash_key_id(me->key, me->ignore);
    if (c == HASH_SMALL_OTHER)
        hb = hi = 0; /* no fingerprint: only the class is compared */
    sm->tag[HASH_TAG_KEY][slot] = (uint8_t)(cb | hash_small_fp(hb ^ hi));
    sm->tag[HASH_TAG_BITS][slot] = (uint8_t)(cb | hash_small_fp(hb));
    sm->tag[HASH_TAG_ID][slot] = (uint8_t)(cb | hash_small_fp(hi));
}

/* Tag every entry still untagged, before tags are compared. */
__attribute__((noinline)) static void hash_small_tag_all(hash_small_t *sm)
{
    for (uint64_t u = sm->untagged; u != 0; u &= u - 1)
        hash_small_tag(sm, (unsigned)__builtin_ctzll(u));
    sm->untagged = 0;
}

/* Put a new entry in a free slot, untagged. */
static inline void hash_small_set(hash_small_t *sm, unsigned slot, hash_entry_t *e)
{
    sm->n++;
    sm->live |= hash_small_bit(slot);
    sm->untagged |= hash_small_bit(slot);
    sm->slot[slot] = e;
    e->slot = slot;
}

/* Move the entry in slot `from` to the free slot `to`. */
static inline void hash_small_move(hash_small_t *sm, unsigned from, unsigned to)
{
    hash_entry_t *e = sm->slot[from];

    sm->slot[to] = e;
    for (unsigned k = 0; k < HASH_TAGS; k++)
        sm->tag[k][to] = sm->tag[k][from];
    sm->live ^= hash_small_bit(from) | hash_small_bit(to);
    if (sm->untagged & hash_small_bit(from))
        sm->untagged ^= hash_small_bit(from) | hash_small_bit(to);
    e->slot = to;
}

static inline unsigned hash_small_class_at(const hash_small_t *sm, unsigned slot)
{
    return sm->tag[HASH_TAG_KEY][slot] >> HASH_SMALL_FP_BITS;
}

/* Slot's entry leaves the ring: uncounted from its class if it was tagged. */
static inline void hash_small_clear(hash_small_t *sm, unsigned slot)
{
    uint64_t bit = hash_small_bit(slot);

    if (sm->untagged & bit)
        sm->untagged &= ~bit;
    else
        sm->count[hash_small_class_at(sm, slot)]--;
    sm->n--;
    sm->live &= ~bit;
}

/* Pack the entries toward head, in order: the span becomes n. */
__attribute__((noinline)) static void hash_small_pack(hash_small_t *sm)
{
    uint64_t order = hash_small_order(sm, sm->live);
    unsigned to = 0;

    for (; order != 0; order &= order - 1, to++) {
        unsigned i = (unsigned)__builtin_ctzll(order);
        if (i != to)
            hash_small_move(sm, hash_small_at(sm, i), hash_small_at(sm, to));
    }
    sm->span = to;
}

/* Link e where its seq puts it: behind the span (packing first if the span
 * ends at the ring's end), in front of head, or between entries, where the
 * entries behind it slide one slot toward the tail. */
static void hash_small_put(hash_small_t *sm, hash_entry_t *e)
{
    unsigned i, last;

    if (sm->n > 0 && e->super.seq < sm->slot[sm->head]->super.seq &&
        sm->span < HASH_SMALL_SLOTS) {
        sm->head = (sm->head - 1) & HASH_SMALL_MASK;
        sm->span++;
        hash_small_set(sm, sm->head, e);
        return;
    }
    if (sm->span == HASH_SMALL_SLOTS)
        hash_small_pack(sm);
    if (sm->n == 0 || e->super.seq > sm->slot[hash_small_at(sm, sm->span - 1)]->super.seq) {
        hash_small_set(sm, hash_small_at(sm, sm->span), e);
        sm->span++;
        return;
    }
    /* Between entries: packed, the place is the number of earlier entries. */
    hash_small_pack(sm);
    for (i = 0; sm->slot[hash_small_at(sm, i)]->super.seq < e->super.seq; i++)
        ;
    for (last = sm->span; last > i; last--)
        hash_small_move(sm, hash_small_at(sm, last - 1), hash_small_at(sm, last));
    hash_small_set(sm, hash_small_at(sm, i), e);
    sm->span++;
}

/* After the front is gone: head moves on to the next entry. */
static inline void hash_small_front_gone(hash_small_t *sm)
{
    uint64_t order;
    unsigned d;

    if (sm->live == 0) {
        sm->span = 0;
        return;
    }
    order = hash_small_order(sm, sm->live);
    d = (unsigned)__builtin_ctzll(order);
    sm->head = (sm->head + d) & HASH_SMALL_MASK;
    sm->span -= d;
}

static inline void hash_small_pop_front(hash_small_t *sm)
{
    hash_small_clear(sm, sm->head);
    hash_small_front_gone(sm);
}

/* A removal leaves a hole; the span ends at the last entry. */
static inline void hash_small_unlink(hash_small_t *sm, hash_entry_t *e)
{
    if (e->slot == sm->head) {
        hash_small_pop_front(sm);
        return;
    }
    hash_small_clear(sm, e->slot);
    sm->span = 64 - (unsigned)__builtin_clzll(hash_small_order(sm, sm->live));
}

/* m->front (engine.h) after an op in small mode that may have changed
 * it: the ring's head entry. While indexed there is none (the index keeps
 * no order of its own to say which is first). Every op that adds or
 * removes an entry sets it. */
static inline void hash_small_front(onic_matcher_t *m, const hash_small_t *sm)
{
    m->front = sm->n > 0 ? &sm->slot[sm->head]->super : NULL;
}

/* The slots (bit s for slot s) whose tag of a kind has (tag & mask) ==
 * value, stale slots outside the ring's entries included; every slot,
 * because finding the ones the entries occupy costs more than comparing
 * them all. */
#if HASH_HAVE_SSE2
static inline uint64_t hash_small_tags_eq_sse2(const uint8_t *tag, unsigned mask, unsigned value)
{
    const __m128i vm = _mm_set1_epi8((char)mask), vv = _mm_set1_epi8((char)value);
    uint64_t slots = 0;

    for (unsigned k = 0; k < HASH_SMALL_SLOTS / 16; k++) {
        __m128i t = _mm_load_si128((const __m128i *)&tag[16 * k]);
        if (mask != 0xff)
            t = _mm_and_si128(t, vm);
        slots |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(t, vv)) << (16 * k);
    }
    return slots;
}
#endif

/* The same with 64-bit words: per word of eight tags (slot 8w + k in bits
 * 8k to 8k + 7), the bytes where (tags ^ value) & mask vanish get their top
 * bit set (no carry crosses a byte), and a multiply gathers those eight bits
 * into one byte. A call of its own, so that its constants stay out of the
 * SSE2 path's registers. */
__attribute__((noinline)) static uint64_t hash_small_tags_eq_swar(const uint8_t *tag,
                                                                  unsigned mask, unsigned value)
{
    const uint64_t ones = 0x0101010101010101ull, low7 = 0x7f7f7f7f7f7f7f7full;
    const uint64_t bm = mask * ones, bv = value * ones;
    uint64_t slots = 0;

    for (unsigned w = 0; w < HASH_SMALL_WORDS; w++) {
        uint64_t x;
        memcpy(&x, &tag[8 * w], sizeof(x));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x);
#endif
        x = (x ^ bv) & bm;
        x = ~(((x & low7) + low7) | x | low7); /* 0x80 where the byte was 0 */
        slots |= ((x * 0x0002040810204081ull) >> 56) << (8 * w);
    }
    return slots;
}

static inline uint64_t hash_small_tags_eq(const hash_engine_t *h, unsigned kind, unsigned mask,
                                          unsigned value)
{
#if HASH_HAVE_SSE2
    if (!h->swar)
        return hash_small_tags_eq_sse2(h->small.tag[kind], mask, value);
#endif
    return hash_small_tags_eq_swar(h->small.tag[kind], mask, value);
}

/* The queue positions (bit i for slot head + i) of the entries that may
 * match: every match is among them. */
static inline __attribute__((always_inline)) uint64_t
hash_small_candidates(const hash_engine_t *h, onic_mkey_t key, onic_mkey_t ignore)
{
    const hash_small_t *sm = &h->small;
    const unsigned class_bits = 0xffu << HASH_SMALL_FP_BITS & 0xffu;
    uint64_t slots = 0;

    for (unsigned c = 0; c < sm->nclasses; c++) {
        onic_mkey_t cm = sm->cmask[c];
        unsigned cb = c << HASH_SMALL_FP_BITS;
        uint64_t wide_bits = ignore.bits & ~cm.bits, wide_id = ignore.id & ~cm.id;

        if (sm->count[c] == 0)
            continue;
        if ((wide_bits | wide_id) == 0)
            slots |= hash_small_tags_eq(h, HASH_TAG_KEY, 0xffu,
                                        cb | hash_small_fp(hash_key(key, cm)));
        else if (wide_bits == 0)
            slots |= hash_small_tags_eq(h, HASH_TAG_BITS, 0xffu,
                                        cb | hash_small_fp(hash_key_bits(key, cm)));
        else if (wide_id == 0)
            slots |= hash_small_tags_eq(h, HASH_TAG_ID, 0xffu,
                                        cb | hash_small_fp(hash_key_id(key, cm)));
        else if (sm->count[c] == sm->n)
            return hash_small_order(sm, sm->live); /* nothing to go by, and nothing else */
        else
            slots |= hash_small_tags_eq(h, HASH_TAG_KEY, class_bits, cb);
    }
    if (sm->count[HASH_SMALL_OTHER] != 0) {
        if (sm->count[HASH_SMALL_OTHER] == sm->n)
            return hash_small_order(sm, sm->live);
        slots |= hash_small_tags_eq(h, HASH_TAG_KEY, class_bits,
                                    HASH_SMALL_OTHER << HASH_SMALL_FP_BITS);
    }
    return hash_small_order(sm, slots & sm->live);
}

/* A ring lookup once the front entry, already compared (and offered to
 * accept if it matched), was not the answer: the first other entry in order
 * that matches and that accept (if not NULL) takes. */
static inline __attribute__((always_inline)) hash_entry_t *
hash_small_find_rest(onic_matcher_t *m, hash_engine_t *h, onic_mkey_t key,
                     onic_mkey_t ignore, onic_match_accept_t accept, void *arg, int *took_p)
{
    hash_small_t *sm = &h->small;
    uint64_t cand = 0, inspected = 1;

    if (sm->n > 1) {
        if (sm->untagged != 0)
            hash_small_tag_all(sm);
        cand = hash_small_candidates(h, key, ignore) & ~1ull;
    }

    while (cand != 0) {
        hash_entry_t *e = sm->slot[hash_small_at(sm, (unsigned)__builtin_ctzll(cand))];
        cand &= cand - 1;
        inspected++;
        if (onic_mentry_matches(&e->super, key, ignore) &&
            (*took_p = accept == NULL ? ONIC_MATCH_TAKE : accept(arg, e->super.cookie)) != 0) {
            m->stats.inspected += inspected;
            return e;
        }
    }
    m->stats.inspected += inspected;
    return NULL;
}

/* Leave small mode: index the ring's entries in order. */
static void hash_small_index(hash_engine_t *h)
{
    hash_small_t *sm = &h->small;

    for (uint64_t order = hash_small_order(sm, sm->live); order != 0; order &= order - 1)
        hash_index(h, sm->slot[hash_small_at(sm, (unsigned)__builtin_ctzll(order))], 0);
    sm->live = 0;
    sm->untagged = 0;
    sm->n = 0;
    sm->span = 0;
    sm->head = 0;
    memset(sm->count, 0, sizeof(sm->count));
    h->indexed = 1;
}

/* An append that goes to the index: one past HASH_SMALL_MAX entries that
 * finds the ring's end reached (which moves the ring there first), or any
 * while indexed. */
__attribute__((noinline)) static void hash_append_index(hash_engine_t *h, hash_entry_t *e)
{
    if (!h->indexed)
        hash_small_index(h);
    hash_index(h, e, 0);
}

static inline void hash_append_small(hash_small_t *sm, hash_entry_t *e)
{
    if (__builtin_expect(sm->span == HASH_SMALL_SLOTS, 0))
        hash_small_pack(sm);
    hash_small_set(sm, hash_small_at(sm, sm->span), e);
    sm->span++;
}

/* An append to the ring changes the front only when it was empty; one to
 * the index leaves none. */
static void hash_append(onic_matcher_t *m, onic_mentry_t *me)
{
    hash_engine_t *h = m->engine;

    if (h->indexed || (h->small.n >= HASH_SMALL_MAX && h->small.span == HASH_SMALL_SLOTS)) {
        m->front = NULL;
        hash_append_index(h, (hash_entry_t *)me);
        return;
    }
    if (h->small.n == 0)
        m->front = me;
    hash_append_small(&h->small, (hash_entry_t *)me);
}

/* The place is in e's seq: the anchor is not needed. */
static onic_status_t hash_insert(onic_matcher_t *m, onic_mentry_t *me, onic_mentry_t *anchor,
                                 int after)
{
    hash_engine_t *h = m->engine;
    hash_entry_t *e = (hash_entry_t *)me;

    (void)anchor;
    (void)after;
    if (!h->indexed && h->small.n < HASH_SMALL_MAX) {
        hash_small_put(&h->small, e);
    } else {
        if (!h->indexed)
            hash_small_index(h);
        hash_index(h, e, 1);
    }
    if (h->indexed)
        m->front = NULL;
    else
        hash_small_front(m, &h->small); /* a head insert is the new front */
    return ONIC_OK;
}

/* Calls fn on every indexed entry (not the small ring), in no order. */
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
        const hash_small_t *sm = &h->small;
        unsigned i = (((const hash_entry_t *)me)->slot - sm->head) & HASH_SMALL_MASK;
        uint64_t order = hash_small_order(sm, sm->live);
        unsigned j;
        if (after) {
            order = i + 1 < 64 ? order >> (i + 1) : 0;
            j = i + 1 + (unsigned)__builtin_ctzll(order | 1ull << 63);
        } else {
            order &= hash_small_bit(i) - 1;
            j = 63 - (unsigned)__builtin_clzll(order | 1);
        }
        return order != 0 ? &sm->slot[hash_small_at(sm, j)]->super : NULL;
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
        const hash_small_t *sm = &h->small;
        for (uint64_t order = hash_small_order(sm, sm->live); order != 0;
             order &= order - 1, base += stride)
            sm->slot[hash_small_at(sm, (unsigned)__builtin_ctzll(order))]->super.seq = base;
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

    if (!h->indexed) {
        hash_small_unlink(&h->small, e);
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
        onic_cache_free(v->buckets);
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
                                    onic_match_accept_t accept, void *arg, int *took_p)
{
    hash_scan_t sc = {key, ignore, 0, 0, NULL};

    for (;;) {
        hash_each(m->engine, hash_scan_visit, &sc);
        if (sc.best == NULL || accept == NULL ||
            (*took_p = accept(arg, sc.best->super.cookie)) != 0)
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

/* find with accept in the index. Every chain a lookup would probe gets a cursor at its
 * first match; the cursor with the smallest seq is offered to accept, and a
 * refusal moves only that cursor to its chain's next match. So accept sees
 * the matches in queue order, and each chain is walked once. */
static hash_entry_t *hash_find_accept(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                      onic_match_accept_t accept, void *arg, int *took_p)
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
                return hash_find_scan(m, key, ignore, accept, arg, took_p);
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
        if ((*took_p = accept(arg, e->super.cookie)) != 0) {
            m->stats.inspected += inspected;
            return e;
        }
        cur[best].e = hash_chain_next(cur[best].chain, e->vlink[cur[best].slot].next,
                                      cur[best].slot, key, ignore, &inspected);
    }
}

/* --- lookups: the ops choose the mode --- */

/* Ring lookups past the front entry (which the front end compared, and
 * offered to accept if it matched): functions of their own, which the
 * traced ops wrap with their record (hash_find_recorded). */
__attribute__((noinline)) static onic_mentry_t *
hash_small_find_more(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    hash_engine_t *h = m->engine;
    int took;
    hash_entry_t *e = hash_small_find_rest(m, h, key, ignore, NULL, NULL, &took);

    if (e == NULL)
        return NULL;
    if (remove)
        hash_small_unlink(&h->small, e); /* never the front: m->front stays */
    return &e->super;
}

__attribute__((noinline)) static onic_mentry_t *
hash_small_find_accept_more(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                            onic_match_accept_t accept, void *arg, int *remove)
{
    hash_engine_t *h = m->engine;
    int took = 0;
    hash_entry_t *e = hash_small_find_rest(m, h, key, ignore, accept, arg, &took);

    if (e == NULL)
        return NULL;
    if (took == ONIC_MATCH_TAKE_LAST)
        *remove = 1;
    if (*remove)
        hash_small_unlink(&h->small, e); /* never the front: m->front stays */
    return &e->super;
}

/* A traced lookup recorded after a plain one (fn: past the ring's front,
 * or in the index), from the entries it inspected. */
typedef onic_mentry_t *hash_find_fn_t(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                      int remove);
typedef onic_mentry_t *hash_find_accept_fn_t(onic_matcher_t *m, onic_mkey_t key,
                                             onic_mkey_t ignore, onic_match_accept_t accept,
                                             void *arg, int *remove);

static inline __attribute__((always_inline)) onic_mentry_t *
hash_find_recorded(hash_find_fn_t *fn, onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                   int remove)
{
    uint64_t before = m->stats.inspected;
    onic_mentry_t *e = fn(m, key, ignore, remove);

    onic_trace_rec_lookup(m, key.bits, key.id, ignore.bits, ignore.id, e, remove, 0,
                          m->stats.inspected - before);
    return e;
}

static inline __attribute__((always_inline)) onic_mentry_t *
hash_find_accept_recorded(hash_find_accept_fn_t *fn, onic_matcher_t *m, onic_mkey_t key,
                          onic_mkey_t ignore, onic_match_accept_t accept, void *arg,
                          int *remove)
{
    uint64_t before = m->stats.inspected;
    onic_mentry_t *e = fn(m, key, ignore, accept, arg, remove);

    onic_trace_rec_lookup(m, key.bits, key.id, ignore.bits, ignore.id, e, *remove,
                          ONIC_TRACE_ACCEPT, m->stats.inspected - before);
    return e;
}

__attribute__((noinline)) static onic_mentry_t *
hash_small_find_more_traced(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    return hash_find_recorded(hash_small_find_more, m, key, ignore, remove);
}

__attribute__((noinline)) static onic_mentry_t *
hash_small_find_accept_more_traced(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                   onic_match_accept_t accept, void *arg, int *remove)
{
    return hash_find_accept_recorded(hash_small_find_accept_more, m, key, ignore, accept, arg,
                                     remove);
}

/* A ring lookup. The ring's head is m->front, which the front end has
 * compared and offered to accept already (engine.h): the search starts
 * past it. Inline into the plain op and the traced one, which records a
 * lookup on an empty ring as a miss with none inspected, the rest after
 * its call. */
static inline __attribute__((always_inline)) onic_mentry_t *
hash_find_small_in(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove,
                   const int traced)
{
    if (((hash_engine_t *)m->engine)->small.n == 0) {
        if (traced)
            onic_trace_rec_lookup(m, key.bits, key.id, ignore.bits, ignore.id, NULL, remove, 0,
                                  0);
        return NULL;
    }
    if (traced)
        return hash_small_find_more_traced(m, key, ignore, remove);
    return hash_small_find_more(m, key, ignore, remove);
}

static inline __attribute__((always_inline)) onic_mentry_t *
hash_find_accept_small_in(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                          onic_match_accept_t accept, void *arg, int *remove, const int traced)
{
    if (((hash_engine_t *)m->engine)->small.n == 0) {
        if (traced)
            onic_trace_rec_lookup(m, key.bits, key.id, ignore.bits, ignore.id, NULL, *remove,
                                  ONIC_TRACE_ACCEPT, 0);
        return NULL;
    }
    if (traced)
        return hash_small_find_accept_more_traced(m, key, ignore, accept, arg, remove);
    return hash_small_find_accept_more(m, key, ignore, accept, arg, remove);
}

__attribute__((noinline)) static onic_mentry_t *
hash_find_small(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    return hash_find_small_in(m, key, ignore, remove, 0);
}

__attribute__((noinline)) static onic_mentry_t *
hash_find_accept_small(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                       onic_match_accept_t accept, void *arg, int *remove)
{
    return hash_find_accept_small_in(m, key, ignore, accept, arg, remove, 0);
}

/* find in the index: the first match of every probed chain, the smallest
 * seq wins. */
__attribute__((noinline)) static onic_mentry_t *
hash_find_indexed(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    hash_engine_t *h = m->engine;
    hash_entry_t *best = NULL;
    uint64_t inspected = 0;
    int exact = (ignore.bits | ignore.id) == 0;

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
                int took;
                best = hash_find_scan(m, key, ignore, NULL, NULL, &took);
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

__attribute__((noinline)) static onic_mentry_t *
hash_find_accept_indexed(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                         onic_match_accept_t accept, void *arg, int *remove)
{
    int took = 0;
    hash_entry_t *e = hash_find_accept(m, key, ignore, accept, arg, &took);

    if (e == NULL)
        return NULL;
    if (took == ONIC_MATCH_TAKE_LAST)
        *remove = 1;
    if (*remove)
        hash_unlink(m, e);
    return &e->super;
}

/* The ops only choose the mode: each mode's function saves the registers it
 * needs (compilers save them on entry, before any test), and the choice
 * costs a load, a test and a jump. */
static onic_mentry_t *hash_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    if (((hash_engine_t *)m->engine)->indexed)
        return hash_find_indexed(m, key, ignore, remove);
    return hash_find_small(m, key, ignore, remove);
}

static onic_mentry_t *hash_find_accept_op(onic_matcher_t *m, onic_mkey_t key,
                                          onic_mkey_t ignore, onic_match_accept_t accept,
                                          void *arg, int *remove)
{
    if (((hash_engine_t *)m->engine)->indexed)
        return hash_find_accept_indexed(m, key, ignore, accept, arg, remove);
    return hash_find_accept_small(m, key, ignore, accept, arg, remove);
}

static void hash_remove(onic_matcher_t *m, onic_mentry_t *me)
{
    hash_engine_t *h = m->engine;

    if (!h->indexed) {
        hash_small_unlink(&h->small, (hash_entry_t *)me);
        hash_small_front(m, &h->small);
    } else {
        hash_unlink(m, (hash_entry_t *)me); /* none while indexed, nor once emptied */
    }
}

/* --- traced (ONIC_TRACE): lookups and appends that write their own
 * records (match/trace_rec.h) ---
 * A ring lookup's record is written in the lookup's own frame, where the
 * query is still in registers: trace.c's wrapper around the plain op cost
 * a frame and the call's seven arguments again, as much as the record.
 * The index's lookups are slower than either and record after the plain
 * op; an append records before its own dispatch. Inserts and removals,
 * rarer, are recorded by trace.c's wrappers. */
__attribute__((noinline)) static onic_mentry_t *
hash_find_small_traced(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    return hash_find_small_in(m, key, ignore, remove, 1);
}

__attribute__((noinline)) static onic_mentry_t *
hash_find_accept_small_traced(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                              onic_match_accept_t accept, void *arg, int *remove)
{
    return hash_find_accept_small_in(m, key, ignore, accept, arg, remove, 1);
}

__attribute__((noinline)) static onic_mentry_t *
hash_find_indexed_traced(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    return hash_find_recorded(hash_find_indexed, m, key, ignore, remove);
}

__attribute__((noinline)) static onic_mentry_t *
hash_find_accept_indexed_traced(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                onic_match_accept_t accept, void *arg, int *remove)
{
    return hash_find_accept_recorded(hash_find_accept_indexed, m, key, ignore, accept, arg,
                                     remove);
}

/* The record, then the plain append's own choice (one dispatch, not the
 * wrapper's and then the plain op's). */
static void hash_append_traced(onic_matcher_t *m, onic_mentry_t *me)
{
    if (__builtin_expect(onic_trace_rec_entry(m, me, ONIC_TRACE_OP_APPEND), 0))
        onic_match_trace_full_append(m, me);
    else
        hash_append(m, me);
}

static onic_mentry_t *hash_find_traced(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                       int remove)
{
    if (((hash_engine_t *)m->engine)->indexed)
        return hash_find_indexed_traced(m, key, ignore, remove);
    return hash_find_small_traced(m, key, ignore, remove);
}

static onic_mentry_t *hash_find_accept_op_traced(onic_matcher_t *m, onic_mkey_t key,
                                                 onic_mkey_t ignore, onic_match_accept_t accept,
                                                 void *arg, int *remove)
{
    if (((hash_engine_t *)m->engine)->indexed)
        return hash_find_accept_indexed_traced(m, key, ignore, accept, arg, remove);
    return hash_find_accept_small_traced(m, key, ignore, accept, arg, remove);
}

static const onic_match_ops_t hash_traced_ops = {
    .name        = "hash",
    .append      = hash_append_traced,
    .find        = hash_find_traced,
    .find_accept = hash_find_accept_op_traced,
};

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
    .traced     = &hash_traced_ops,
};
