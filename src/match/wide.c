/* wide: the interleaved layout of paper 002 (section IV.C, figure 3b). One
 * block holds sixteen entries as a structure of arrays, so a lookup compares
 * a whole block with a few wide operations instead of chasing sixteen
 * pointers. Removal leaves a hole (a cleared valid bit); an incremental
 * clean-up pass, the paper's "list clean-up" thread run a little on every
 * operation, compacts the holes so blocks stay nearly full.
 *
 * Order: blocks are chained oldest first and a block's slots are in age
 * order, so the oldest match is the lowest hit bit of the first block with a
 * hit. Appends only ever go after the tail's last used slot, never into a
 * hole, and compaction only moves entries towards the head, keeping order.
 *
 * Fragmentation bound: each operation makes at most one hole and compacts
 * `wide_cleanup` blocks at a cursor that sweeps the chain, head to tail and
 * round again. A block the cursor leaves is full unless it is the tail (its
 * holes move into the next block, which is compacted next), and a block that
 * empties is freed at once. So the free slots are at most the holes made
 * during the last two sweeps plus the two partial blocks, about
 * 2 * blocks / wide_cleanup + 32, which keeps
 *     blocks <= (length + 32) / (16 - 2 / wide_cleanup).
 * The pass stops while the chain has fewer than 16 free slots (no chain
 * could have fewer blocks), so a compact queue costs it nothing. */
#include "match/wide.h"
#include "base/cpu.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/pool.h"

#include <assert.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WIDE_HAVE_AVX2 1
#else
#define WIDE_HAVE_AVX2 0
#endif

#define WIDE_SLOTS       16
#define WIDE_FULL        0xffffu
#define WIDE_BLOCK_CHUNK 16  /* blocks per allocation: 256 entries, like the entry pool */

typedef struct wide_block wide_block_t;

typedef struct wide_entry {
    onic_mentry_t  super;
    wide_block_t  *block;  /* with slot, so remove finds its place in O(1) */
    uint32_t       slot;
} wide_entry_t;

/* The header shares no cache line with the keys, and the arrays are 64-byte
 * aligned (the pool keeps 64-byte elements on line boundaries) so a four-lane
 * load never splits a line; loads stay unaligned-safe all the same. */
struct wide_block {
    wide_block_t *next, *prev;   /* next is younger */
    uint16_t      valid;         /* bit s: slot s holds a queued entry */
    uint8_t       used;          /* slots [0, used) were filled; valid is inside */
    _Alignas(64) uint64_t bits[WIDE_SLOTS];
    uint64_t      id[WIDE_SLOTS];
    uint64_t      ignore_bits[WIDE_SLOTS];
    uint64_t      ignore_id[WIDE_SLOTS];
    wide_entry_t *entry[WIDE_SLOTS];
};

/* The first block from b with a matching valid slot, its lowest such slot in
 * *slot_p, and the valid slots of every block compared in *inspected_p. */
typedef wide_block_t *(*wide_scan_fn)(wide_block_t *b, onic_mkey_t key, onic_mkey_t ignore,
                                      unsigned *slot_p, uint64_t *inspected_p);

typedef struct wide {
    wide_block_t *head, *tail;
    wide_block_t *cursor;     /* next block to compact; NULL: the head */
    size_t        nblocks;    /* in the chain */
    size_t        count;      /* entries queued */
    size_t        capacity;   /* blocks allocated, chain and free */
    unsigned      cleanup;    /* blocks compacted per operation */
    wide_scan_fn  scan;
    onic_pool_t   blocks;
} wide_t;

static_assert(sizeof(wide_block_t) % 64 == 0, "blocks are whole cache lines");
static_assert(WIDE_SLOTS <= 8 * sizeof(uint16_t), "valid mask holds every slot");

/* --- comparing a block --- */

static unsigned wide_block_hits_scalar(const wide_block_t *b, onic_mkey_t key, onic_mkey_t ignore)
{
    unsigned hits = 0;

    /* All sixteen slots without branches; valid masks out holes at the end. */
    for (unsigned s = 0; s < WIDE_SLOTS; s++) {
        uint64_t diff = ((b->bits[s] ^ key.bits) & ~(b->ignore_bits[s] | ignore.bits)) |
                        ((b->id[s] ^ key.id) & ~(b->ignore_id[s] | ignore.id));
        hits |= (unsigned)(diff == 0) << s;
    }
    return hits & b->valid;
}

static wide_block_t *wide_scan_scalar(wide_block_t *b, onic_mkey_t key, onic_mkey_t ignore,
                                      unsigned *slot_p, uint64_t *inspected_p)
{
    uint64_t inspected = 0;

    for (; b != NULL; b = b->next) {
        unsigned hits = wide_block_hits_scalar(b, key, ignore);
        inspected += (unsigned)__builtin_popcount(b->valid);
        if (hits != 0) {
            *slot_p = (unsigned)__builtin_ctz(hits);
            break;
        }
    }
    *inspected_p = inspected;
    return b;
}

#if WIDE_HAVE_AVX2
__attribute__((target("avx2")))
static unsigned wide_block_hits_avx2(const wide_block_t *b, __m256i kbits, __m256i kid,
                                     __m256i qbits, __m256i qid)
{
    const __m256i zero = _mm256_setzero_si256();
    unsigned hits = 0;

    for (unsigned s = 0; s < WIDE_SLOTS; s += 4) {
        __m256i bits = _mm256_loadu_si256((const __m256i *)&b->bits[s]);
        __m256i id   = _mm256_loadu_si256((const __m256i *)&b->id[s]);
        __m256i ib   = _mm256_loadu_si256((const __m256i *)&b->ignore_bits[s]);
        __m256i ii   = _mm256_loadu_si256((const __m256i *)&b->ignore_id[s]);
        /* andnot(a, b) is ~a & b: the differing bits neither side ignores. */
        __m256i dbits = _mm256_andnot_si256(_mm256_or_si256(ib, qbits),
                                            _mm256_xor_si256(bits, kbits));
        __m256i did   = _mm256_andnot_si256(_mm256_or_si256(ii, qid),
                                            _mm256_xor_si256(id, kid));
        __m256i eq = _mm256_cmpeq_epi64(_mm256_or_si256(dbits, did), zero);
        hits |= (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(eq)) << s;
    }
    return hits & b->valid;
}

__attribute__((target("avx2")))
static wide_block_t *wide_scan_avx2(wide_block_t *b, onic_mkey_t key, onic_mkey_t ignore,
                                    unsigned *slot_p, uint64_t *inspected_p)
{
    const __m256i kbits = _mm256_set1_epi64x((long long)key.bits);
    const __m256i kid   = _mm256_set1_epi64x((long long)key.id);
    const __m256i qbits = _mm256_set1_epi64x((long long)ignore.bits);
    const __m256i qid   = _mm256_set1_epi64x((long long)ignore.id);
    uint64_t inspected = 0;

    for (; b != NULL; b = b->next) {
        unsigned hits = wide_block_hits_avx2(b, kbits, kid, qbits, qid);
        inspected += (unsigned)__builtin_popcount(b->valid);
        if (hits != 0) {
            *slot_p = (unsigned)__builtin_ctz(hits);
            break;
        }
    }
    *inspected_p = inspected;
    return b;
}
#endif

/* --- blocks --- */

static void wide_slot_set(wide_block_t *b, unsigned s, wide_entry_t *we)
{
    b->bits[s]        = we->super.key.bits;
    b->id[s]          = we->super.key.id;
    b->ignore_bits[s] = we->super.ignore.bits;
    b->ignore_id[s]   = we->super.ignore.id;
    b->entry[s]       = we;
    we->block = b;
    we->slot = s;
}

/* Copy slot s of src to slot d of dst; the caller fixes both valid masks. */
static void wide_slot_move(wide_block_t *dst, unsigned d, const wide_block_t *src, unsigned s)
{
    wide_entry_t *we = src->entry[s];

    dst->bits[d]        = src->bits[s];
    dst->id[d]          = src->id[s];
    dst->ignore_bits[d] = src->ignore_bits[s];
    dst->ignore_id[d]   = src->ignore_id[s];
    dst->entry[d]       = we;
    we->block = dst;
    we->slot = d;
}

/* A new tail from the free list, which reserve made non-empty. */
static wide_block_t *wide_block_push(wide_t *w)
{
    wide_block_t *b = onic_pool_get(&w->blocks);

    assert(b != NULL && "wide: append without a reserved block");
    /* Defined keys in unused slots, so compares never read garbage. */
    memset(b, 0, sizeof(*b));
    b->prev = w->tail;
    if (w->tail != NULL)
        w->tail->next = b;
    else
        w->head = b;
    w->tail = b;
    w->nblocks++;
    return b;
}

static void wide_block_drop(wide_t *w, wide_block_t *b)
{
    if (b->prev != NULL)
        b->prev->next = b->next;
    else
        w->head = b->next;
    if (b->next != NULL)
        b->next->prev = b->prev;
    else
        w->tail = b->prev;
    if (w->cursor == b)
        w->cursor = b->next;
    w->nblocks--;
    onic_pool_put(&w->blocks, b);
}

static void wide_slot_clear(wide_t *w, wide_block_t *b, unsigned s)
{
    b->valid &= (uint16_t)~(1u << s);
    w->count--;
    if (b->valid == 0) {
        wide_block_drop(w, b);
        return;
    }
    /* Trailing holes of the tail become room for appends again. */
    b->used = (uint8_t)(32 - __builtin_clz(b->valid));
}

/* Slide b's entries down over its holes, then fill it from the front of the
 * next block; a next block left empty is freed. b ends dense: slots [0, n). */
static void wide_block_compact(wide_t *w, wide_block_t *b)
{
    wide_block_t *next = b->next;
    unsigned n = 0;

    if (b->valid == WIDE_FULL)
        return;
    for (unsigned s = 0; s < b->used; s++) {
        if (b->valid & (1u << s)) {
            if (s != n)
                wide_slot_move(b, n, b, s);
            n++;
        }
    }
    while (next != NULL && n < WIDE_SLOTS && next->valid != 0) {
        unsigned s = (unsigned)__builtin_ctz(next->valid);
        wide_slot_move(b, n++, next, s);
        next->valid &= (uint16_t)(next->valid - 1);
    }
    b->valid = (uint16_t)((1u << n) - 1);
    b->used  = (uint8_t)n;
    if (next != NULL && next->valid == 0)
        wide_block_drop(w, next);
}

/* The clean-up pass's share of one operation. */
static void wide_cleanup_step(wide_t *w)
{
    for (unsigned i = 0; i < w->cleanup; i++) {
        wide_block_t *b;

        /* Fewer than 16 free slots: no chain could have fewer blocks. */
        if (w->nblocks * WIDE_SLOTS - w->count < WIDE_SLOTS)
            return;
        b = w->cursor != NULL ? w->cursor : w->head;
        wide_block_compact(w, b);
        w->cursor = b->next;
    }
}

/* --- engine ops --- */

static onic_status_t wide_init(onic_matcher_t *m)
{
    int has_avx2 = WIDE_HAVE_AVX2 && onic_cpu_has_avx2();
    wide_scan_fn scan = wide_scan_scalar;
    wide_t *w;

    switch (m->cfg.simd) {
    case ONIC_SIMD_SCALAR:
        break;
    case ONIC_SIMD_AVX2:
        if (!has_avx2) {
            onic_error("match: ONIC_SIMD=avx2 but this CPU has no AVX2 for the wide engine");
            return ONIC_ERR_INVALID_PARAM;
        }
        /* fall through */
    default:
#if WIDE_HAVE_AVX2
        if (has_avx2)
            scan = wide_scan_avx2;
#endif
        break;
    }
    w = onic_calloc(1, sizeof(*w));
    if (w == NULL) {
        onic_error("match: cannot allocate the wide engine's state");
        return ONIC_ERR_NO_MEMORY;
    }
    w->cleanup = m->cfg.wide_cleanup;
    w->scan = scan;
    onic_pool_init(&w->blocks, sizeof(wide_block_t), WIDE_BLOCK_CHUNK);
    m->engine = w;
    return ONIC_OK;
}

static void wide_fini(onic_matcher_t *m)
{
    wide_t *w = m->engine;

    onic_pool_fini(&w->blocks);
    onic_free(w);
    m->engine = NULL;
}

/* Only an append to a missing or full tail takes a block; make sure one is
 * free so that append cannot fail. */
static onic_status_t wide_reserve(onic_matcher_t *m)
{
    wide_t *w = m->engine;
    void *b;

    if ((w->tail != NULL && w->tail->used < WIDE_SLOTS) || w->blocks.free_list != NULL)
        return ONIC_OK;
    b = onic_pool_get(&w->blocks);
    if (b == NULL) {
        onic_error("match: cannot allocate %d wide blocks for a queue of length %zu",
                   WIDE_BLOCK_CHUNK, w->count);
        return ONIC_ERR_NO_MEMORY;
    }
    onic_pool_put(&w->blocks, b);
    w->capacity += WIDE_BLOCK_CHUNK;
    return ONIC_OK;
}

static void wide_append(onic_matcher_t *m, onic_mentry_t *e)
{
    wide_t *w = m->engine;
    wide_block_t *b = w->tail;
    unsigned s;

    if (b == NULL || b->used == WIDE_SLOTS)
        b = wide_block_push(w);
    s = b->used++;
    wide_slot_set(b, s, (wide_entry_t *)e);
    b->valid |= (uint16_t)(1u << s);
    w->count++;
    wide_cleanup_step(w);
}

static onic_mentry_t *wide_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    wide_t *w = m->engine;
    wide_entry_t *we = NULL;
    uint64_t inspected;
    unsigned s = 0;
    wide_block_t *b = w->scan(w->head, key, ignore, &s, &inspected);

    m->stats.inspected += inspected;
    if (b != NULL) {
        we = b->entry[s];
        if (remove)
            wide_slot_clear(w, b, s);
    }
    wide_cleanup_step(w);
    return we != NULL ? &we->super : NULL;
}

static void wide_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    wide_t *w = m->engine;
    wide_entry_t *we = (wide_entry_t *)e;

    wide_slot_clear(w, we->block, we->slot);
    wide_cleanup_step(w);
}

const onic_match_ops_t onic_match_wide_ops = {
    .name       = "wide",
    .desc       = "blocks of 16 entries compared at once, holes compacted incrementally",
    .entry_size = sizeof(wide_entry_t),
    .init       = wide_init,
    .fini       = wide_fini,
    .reserve    = wide_reserve,
    .append     = wide_append,
    .find       = wide_find,
    .remove     = wide_remove,
};

/* --- test queries --- */

void onic_match_wide_info_get(const onic_matcher_t *m, onic_match_wide_info_t *info_p)
{
    const wide_t *w = m->engine;

    info_p->blocks = w->nblocks;
    info_p->spare  = w->capacity - w->blocks.in_use;
    info_p->holes  = w->nblocks * WIDE_SLOTS - w->count;
}

int onic_match_wide_check(const onic_matcher_t *m)
{
    const wide_t *w = m->engine;
    const wide_block_t *prev = NULL;
    size_t nblocks = 0, count = 0;
    uint64_t last_seq = 0;
    int cursor_seen = w->cursor == NULL;

    for (const wide_block_t *b = w->head; b != NULL; prev = b, b = b->next) {
        if (b->prev != prev || b->valid == 0 || b->used > WIDE_SLOTS ||
            (b->valid >> b->used) != 0)
            return 0;
        for (unsigned s = 0; s < b->used; s++) {
            const wide_entry_t *we = b->entry[s];
            if (!(b->valid & (1u << s)))
                continue;
            if (we->block != b || we->slot != s ||
                !onic_mentry_queued(&we->super) ||
                b->bits[s] != we->super.key.bits || b->id[s] != we->super.key.id ||
                b->ignore_bits[s] != we->super.ignore.bits ||
                b->ignore_id[s] != we->super.ignore.id ||
                (count > 0 && we->super.seq <= last_seq))
                return 0;
            last_seq = we->super.seq;
            count++;
        }
        cursor_seen |= b == w->cursor;
        nblocks++;
    }
    return prev == w->tail && nblocks == w->nblocks && count == w->count &&
           count == m->length && cursor_seen && w->blocks.in_use == nblocks;
}
