/* wide: the interleaved layout of paper 002 (section IV.C, figure 3b). One
 * block holds sixteen entries as a structure of arrays, so a lookup compares
 * a whole block with a few wide operations instead of chasing sixteen
 * pointers. Removal leaves a hole (a cleared valid bit); an incremental
 * clean-up pass, the paper's "list clean-up" thread run a little on every
 * operation, compacts the holes so blocks stay nearly full.
 *
 * Filter: a block's header line also holds a one-byte fingerprint of each
 * slot's `bits` and `id` words. A lookup compares the fingerprints first and
 * loads the keys (eight more lines) only in a block where some slot passes,
 * so a deep queue costs about one cache line per sixteen entries. Equal words
 * have equal fingerprints, which is all the filter relies on; it cannot see
 * through ignore masks, so fingerprint 0 marks an entry that ignores part of
 * the word (it always passes), and a query that ignores part of a word skips
 * that word's filter.
 *
 * Order: blocks are chained in queue order. A block's slots form a ring: its
 * entries sit in queue order from slot `start` on, wrapping at 16, so the
 * first match is the first hit counting from start in the first block with a
 * hit. Appends only ever go after the tail's last entry, never into a hole,
 * and compaction only moves entries towards the head, keeping order. The ring
 * is what makes compaction cheap: a block hands entries from its front to the
 * previous block without sliding the rest down.
 *
 * Inserts: an entry inserted anywhere but the tail packs its block and
 * slides the entries on the shorter side of its place by one slot (the ring
 * lets either side move); a full block is split in two first, the entries
 * from the place on going to a new block linked behind it. The clean-up pass
 * later merges what a split left half empty. A lookup with an accept
 * callback, after a refusal, tries the block's later candidates and then
 * resumes the block scan at the next block.
 *
 * Clean-up: a cursor sweeps the chain, head to tail and round again,
 * compacting up to `wide_cleanup` blocks per operation. Compacting a block
 * closes its holes and fills it from the blocks after it, freeing any it
 * empties, so a block the cursor leaves is full unless it is the tail.
 * Gathering holes costs moves in proportion to the distance between them, so
 * under churn the pass waits until they are dense: it runs while the holes
 * (free slots other than the tail's room for appends) number at least
 * 16 + blocks / wide_cleanup. A lap takes blocks / wide_cleanup operations
 * and gathers every hole it passes, so about that many more are made before
 * it does; with the tail's room, the free slots stay below about
 * 2 * blocks / wide_cleanup + 32, which keeps
 *     blocks <= (length + 32) / (16 - 2 / wide_cleanup).
 * An operation that changes nothing (a peek, a miss) runs the pass whenever
 * it could free a block, so a queue that stops changing ends as short as it
 * can be. Otherwise the pass costs one compare. A block that empties is
 * freed at once, except the last: it stays when the queue empties, so a
 * queue that goes between empty and a few entries never relinks a block. */
#include "match/wide.h"
#include "base/cpu.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/pool.h"

#include <assert.h>
#include <stddef.h>
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
/* A full tail with this many holes is packed in place rather than followed by
 * a new block: at most 12 moves buy at least 4 appends, and a short queue
 * that matches out of order never needs a second block. */
#define WIDE_PACK_HOLES  4

typedef struct wide_block wide_block_t;

typedef struct wide_entry {
    onic_mentry_t  super;
    wide_block_t  *block;  /* with slot, so remove finds its place in O(1) */
    uint32_t       slot;
} wide_entry_t;

/* Line 0 is the header, all that a lookup reads of a block whose fingerprints
 * rule every slot out. The key arrays start on the next line and the pool
 * keeps 64-byte elements on line boundaries, so a four-lane load never splits
 * a line; loads stay unaligned-safe all the same. */
struct wide_block {
    wide_block_t *next, *prev;          /* next is younger */
    uint16_t      valid;                /* bit s: slot s holds a queued entry */
    uint8_t       start;                /* slot of the oldest entry */
    uint8_t       used;                 /* the span: slots start .. start + used - 1
                                           (mod 16); valid is inside */
    wide_block_t *skip;                 /* next->next: the vector lookup follows one
                                           link per two blocks, halving its chain
                                           of dependent loads */
    _Alignas(32) uint8_t fp_bits[WIDE_SLOTS];  /* fingerprints; fp_id must follow */
    uint8_t       fp_id[WIDE_SLOTS];
    _Alignas(64) uint64_t bits[WIDE_SLOTS];
    uint64_t      id[WIDE_SLOTS];
    uint64_t      ignore_bits[WIDE_SLOTS];
    uint64_t      ignore_id[WIDE_SLOTS];
    wide_entry_t *entry[WIDE_SLOTS];
};

/* A query's side of the fingerprint filter. */
typedef struct wide_filter {
    uint8_t  fp_bits, fp_id;
    uint32_t pass;  /* bits 0-15 set: no filter on `bits`; bits 16-31: none on `id` */
} wide_filter_t;

/* The first block from b with a matching valid slot, that slot in *slot_p,
 * and the valid slots of every block compared in *inspected_p. */
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
static_assert(offsetof(wide_block_t, bits) == 64, "the header is one cache line");
static_assert(offsetof(wide_block_t, fp_id) == offsetof(wide_block_t, fp_bits) + WIDE_SLOTS,
              "one 32-byte load reads both fingerprint arrays");
static_assert(WIDE_SLOTS <= 8 * sizeof(uint16_t), "valid mask holds every slot");

/* --- fingerprints, rings and slots --- */

/* A one-byte digest of a key word, never 0, or 0 when the entry ignores any
 * of the word's bits (its fingerprint could differ from a matching query's). */
static inline uint8_t wide_fp(uint64_t word, uint64_t ignore)
{
    uint8_t h = (uint8_t)((word * 0x9e3779b97f4a7c15ull) >> 56);

    if (ignore != 0)
        return 0;
    return h != 0 ? h : 1;
}

static inline wide_filter_t wide_filter_make(onic_mkey_t key, onic_mkey_t ignore)
{
    wide_filter_t f;

    /* A query ignoring part of a word cannot filter on it: every slot passes. */
    f.fp_bits = wide_fp(key.bits, ignore.bits);
    f.fp_id   = wide_fp(key.id, ignore.id);
    f.pass    = (f.fp_bits == 0 ? WIDE_FULL : 0) | (f.fp_id == 0 ? WIDE_FULL << WIDE_SLOTS : 0);
    return f;
}

/* Rotate a slot mask so that bit i is the block's i-th oldest position. */
static inline unsigned wide_rotr(unsigned mask, unsigned start)
{
    return ((mask >> start) | (mask << (WIDE_SLOTS - start))) & WIDE_FULL;
}

/* The inverse: logical positions back to slots. */
static inline unsigned wide_rotl(unsigned mask, unsigned start)
{
    return ((mask << start) | (mask >> (WIDE_SLOTS - start))) & WIDE_FULL;
}

/* The slot of the block's i-th oldest position. */
static inline unsigned wide_pos(const wide_block_t *b, unsigned i)
{
    return (b->start + i) & (WIDE_SLOTS - 1);
}

/* The oldest of a non-empty set of slots. */
static inline unsigned wide_oldest(const wide_block_t *b, unsigned slots)
{
    return wide_pos(b, (unsigned)__builtin_ctz(wide_rotr(slots, b->start)));
}

/* Entries in a block. Not __builtin_popcount: without -mpopcnt that is a
 * library call. */
static inline unsigned wide_live(const wide_block_t *b)
{
    unsigned x = b->valid;

    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0f0fu;
    return (x + (x >> 8)) & 0x1fu;
}

static inline int wide_slot_matches(const wide_block_t *b, unsigned s, onic_mkey_t key,
                                    onic_mkey_t ignore)
{
    return (((b->bits[s] ^ key.bits) & ~(b->ignore_bits[s] | ignore.bits)) |
            ((b->id[s] ^ key.id) & ~(b->ignore_id[s] | ignore.id))) == 0;
}

/* --- comparing blocks --- */

/* The top bit of each zero byte of x, and nothing else. Adding 0x7f to a
 * byte's low seven bits sets its top bit iff they are not all zero, and
 * cannot carry into the next byte. */
static inline uint64_t wide_zero_bytes(uint64_t x)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;

    return ~(((x & low7) + low7) | x) & ~low7;
}

/* The eight top bits of a wide_zero_bytes result as bits 0-7: the multiply
 * moves byte i's bit to bit 56 + i without carries. */
static inline unsigned wide_gather8(uint64_t tops)
{
    return (unsigned)(((tops >> 7) * 0x0102040810204080ull) >> 56);
}

static inline uint64_t wide_load8(const uint8_t *p)
{
    uint64_t x;

    memcpy(&x, p, sizeof(x));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);  /* byte i of memory in bits 8i..8i+7 */
#endif
    return x;
}

/* Slots whose two fingerprints pass the filter, as 16 bits: equal to the
 * query's (x ^ q has a zero byte) or 0 (x has one). */
static inline unsigned wide_filter_scalar(const wide_block_t *b, uint32_t pass,
                                          uint64_t qbits, uint64_t qid)
{
    for (unsigned h = 0; h < WIDE_SLOTS; h += 8) {
        uint64_t fb = wide_load8(&b->fp_bits[h]), fi = wide_load8(&b->fp_id[h]);
        pass |= wide_gather8(wide_zero_bytes(fb ^ qbits) | wide_zero_bytes(fb)) << h;
        pass |= wide_gather8(wide_zero_bytes(fi ^ qid) | wide_zero_bytes(fi)) << (WIDE_SLOTS + h);
    }
    return pass & (pass >> WIDE_SLOTS);
}

static wide_block_t *wide_scan_scalar(wide_block_t *b, onic_mkey_t key, onic_mkey_t ignore,
                                      unsigned *slot_p, uint64_t *inspected_p)
{
    const wide_filter_t f = wide_filter_make(key, ignore);
    const uint64_t qbits = f.fp_bits * 0x0101010101010101ull;
    const uint64_t qid   = f.fp_id * 0x0101010101010101ull;
    uint64_t inspected = 0;

    for (; b != NULL; b = b->next) {
        unsigned cand = wide_filter_scalar(b, f.pass, qbits, qid) & b->valid;

        inspected += wide_live(b);
        /* Candidates oldest first; the first whose key matches is the answer. */
        for (unsigned rest = wide_rotr(cand, b->start); rest != 0; rest &= rest - 1) {
            unsigned s = wide_pos(b, (unsigned)__builtin_ctz(rest));
            if (wide_slot_matches(b, s, key, ignore)) {
                *slot_p = s;
                *inspected_p = inspected;
                return b;
            }
        }
    }
    *inspected_p = inspected;
    return NULL;
}

#if WIDE_HAVE_AVX2
/* Every slot's full key compare as a 16-bit mask, four lanes at a time. */
__attribute__((target("avx2")))
static inline unsigned wide_hits_avx2(const wide_block_t *b, __m256i kbits, __m256i kid,
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
    return hits;
}

/* One block's filter and, for candidates, its keys: the oldest hit, or -1. */
__attribute__((target("avx2,popcnt")))
static inline int wide_block_avx2(const wide_block_t *b, onic_mkey_t key, onic_mkey_t ignore,
                                  __m256i qfp, uint32_t qpass, uint64_t *inspected_p)
{
    __m256i fp = _mm256_load_si256((const __m256i *)b->fp_bits);
    __m256i ok = _mm256_or_si256(_mm256_cmpeq_epi8(fp, qfp),
                                 _mm256_cmpeq_epi8(fp, _mm256_setzero_si256()));
    uint32_t pass = (uint32_t)_mm256_movemask_epi8(ok) | qpass;
    unsigned cand = pass & (pass >> WIDE_SLOTS) & b->valid, hits;

    *inspected_p += (unsigned)__builtin_popcount(b->valid);
    if (__builtin_expect(cand == 0, 1))
        return -1;
    /* One candidate, the usual case: one scalar compare. Several (a query or
     * entries the filter cannot see through): all at once. */
    if ((cand & (cand - 1)) == 0)
        return wide_slot_matches(b, (unsigned)__builtin_ctz(cand), key, ignore)
                   ? __builtin_ctz(cand) : -1;
    hits = cand & wide_hits_avx2(b, _mm256_set1_epi64x((long long)key.bits),
                                 _mm256_set1_epi64x((long long)key.id),
                                 _mm256_set1_epi64x((long long)ignore.bits),
                                 _mm256_set1_epi64x((long long)ignore.id));
    return hits != 0 ? (int)wide_oldest(b, hits) : -1;
}

__attribute__((target("avx2,popcnt")))
static wide_block_t *wide_scan_avx2(wide_block_t *b, onic_mkey_t key, onic_mkey_t ignore,
                                    unsigned *slot_p, uint64_t *inspected_p)
{
    const wide_filter_t f = wide_filter_make(key, ignore);
    /* Bytes 0-15 against the bits fingerprints, 16-31 against the id ones. */
    const __m256i qfp = _mm256_setr_m128i(_mm_set1_epi8((char)f.fp_bits),
                                          _mm_set1_epi8((char)f.fp_id));
    uint64_t inspected = 0;
    int s = -1;

    /* Two blocks a step: the second's header and the next step's both
     * hang off the first's, so consecutive steps wait for one load. */
    while (b != NULL) {
        wide_block_t *second = b->next, *after = b->skip;
        if ((s = wide_block_avx2(b, key, ignore, qfp, f.pass, &inspected)) >= 0)
            break;
        b = second;
        if (b == NULL)
            break;
        if ((s = wide_block_avx2(b, key, ignore, qfp, f.pass, &inspected)) >= 0)
            break;
        b = after;
    }
    *slot_p = (unsigned)s;
    *inspected_p = inspected;
    return s >= 0 ? b : NULL;
}
#endif

/* --- blocks --- */

static void wide_slot_set(wide_block_t *b, unsigned s, wide_entry_t *we)
{
    b->fp_bits[s]     = wide_fp(we->super.key.bits, we->super.ignore.bits);
    b->fp_id[s]       = wide_fp(we->super.key.id, we->super.ignore.id);
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

    dst->fp_bits[d]     = src->fp_bits[s];
    dst->fp_id[d]       = src->fp_id[s];
    dst->bits[d]        = src->bits[s];
    dst->id[d]          = src->id[s];
    dst->ignore_bits[d] = src->ignore_bits[s];
    dst->ignore_id[d]   = src->ignore_id[s];
    dst->entry[d]       = we;
    we->block = dst;
    we->slot = d;
}

/* Make sure the free list has a block. */
static onic_status_t wide_blocks_ensure(wide_t *w)
{
    if (w->blocks.free_list != NULL)
        return ONIC_OK;
    if (!onic_pool_grow(&w->blocks)) {
        onic_error("match: cannot allocate %d wide blocks for a queue of length %zu",
                   WIDE_BLOCK_CHUNK, w->count);
        return ONIC_ERR_NO_MEMORY;
    }
    /* The free list is exactly the new chunk. Define its slots once, past the
     * link word, so compares of unused slots never read uninitialized memory
     * and no append has to clear a block. */
    for (void **e = w->blocks.free_list; e != NULL; e = *e)
        memset(e + 1, 0, sizeof(wide_block_t) - sizeof(*e));
    w->capacity += WIDE_BLOCK_CHUNK;
    return ONIC_OK;
}

/* A new, empty block linked after b, from the free list, which the caller
 * made non-empty. */
static wide_block_t *wide_block_link_after(wide_t *w, wide_block_t *b)
{
    wide_block_t *nb = onic_pool_get(&w->blocks);

    assert(nb != NULL && "wide: insert without a free block");
    nb->valid = 0;
    nb->start = 0;
    nb->used  = 0;
    nb->prev  = b;
    nb->next  = b->next;
    if (b->next != NULL)
        b->next->prev = nb;
    else
        w->tail = nb;
    b->next = nb;
    nb->skip = nb->next != NULL ? nb->next->next : NULL;
    b->skip = nb->next;
    if (b->prev != NULL)
        b->prev->skip = nb;
    w->nblocks++;
    return nb;
}

/* A new, empty tail from the free list, which reserve made non-empty. Only
 * the header is reset: slot contents count only under valid. */
static wide_block_t *wide_block_push(wide_t *w)
{
    wide_block_t *b = onic_pool_get(&w->blocks);

    assert(b != NULL && "wide: append without a reserved block");
    b->next  = NULL;
    b->skip  = NULL;
    b->prev  = w->tail;
    b->valid = 0;
    b->start = 0;
    b->used  = 0;
    if (w->tail != NULL) {
        w->tail->next = b;
        if (w->tail->prev != NULL)
            w->tail->prev->skip = b;
    } else {
        w->head = b;
    }
    w->tail = b;
    w->nblocks++;
    return b;
}

static void wide_block_drop(wide_t *w, wide_block_t *b)
{
    wide_block_t *prev = b->prev;

    if (prev != NULL) {
        prev->next = b->next;
        prev->skip = b->skip;
        if (prev->prev != NULL)
            prev->prev->skip = b->next;
    } else {
        w->head = b->next;
    }
    if (b->next != NULL)
        b->next->prev = b->prev;
    else
        w->tail = b->prev;
    if (w->cursor == b)
        w->cursor = b->next;
    w->nblocks--;
    onic_pool_put(&w->blocks, b);
}

/* Shrink a non-empty block's span to its oldest and youngest entries, so
 * holes at either end become room for appends (in the tail) or pulls. */
static void wide_block_trim(wide_block_t *b)
{
    unsigned live = wide_rotr(b->valid, b->start);
    unsigned lead = (unsigned)__builtin_ctz(live);

    b->start = (uint8_t)wide_pos(b, lead);
    b->used  = (uint8_t)(32 - __builtin_clz(live) - lead);
}

static void wide_slot_clear(wide_t *w, wide_block_t *b, unsigned s)
{
    b->valid &= (uint16_t)~(1u << s);
    w->count--;
    if (b->valid != 0) {
        wide_block_trim(b);
    } else if (w->nblocks > 1) {
        wide_block_drop(w, b);
    } else {
        b->used = 0;  /* the last block stays for the next append */
    }
}

/* Close the holes inside a trimmed block's span, moving the entries on
 * whichever side of them are fewer. */
static void wide_block_pack(wide_block_t *b)
{
    /* Locals: the byte stores of a move could alias the header. */
    unsigned start = b->start, used = b->used;
    unsigned live = wide_rotr(b->valid, start);
    unsigned holes = ~live & ((1u << used) - 1);
    unsigned first = (unsigned)__builtin_ctz(holes), last = 31u - (unsigned)__builtin_clz(holes);

    if (first >= used - 1 - last) {
        /* Keep the entries before the first hole; slide the rest down. */
        unsigned n = first;
        for (unsigned rest = live >> first << first; rest != 0; rest &= rest - 1)
            wide_slot_move(b, (start + n++) & (WIDE_SLOTS - 1),
                           b, (start + (unsigned)__builtin_ctz(rest)) & (WIDE_SLOTS - 1));
        used = n;
    } else {
        /* Keep the entries after the last hole; slide the rest up. */
        unsigned n = last;
        for (unsigned rest = live & ((1u << last) - 1); rest != 0;) {
            unsigned i = 31u - (unsigned)__builtin_clz(rest);
            wide_slot_move(b, (start + n--) & (WIDE_SLOTS - 1), b, (start + i) & (WIDE_SLOTS - 1));
            rest &= ~(1u << i);
        }
        start = (start + n + 1) & (WIDE_SLOTS - 1);
        used -= n + 1;
    }
    b->start = (uint8_t)start;
    b->used  = (uint8_t)used;
    b->valid = (uint16_t)wide_rotl((1u << used) - 1, start);
}

/* Close b's holes, then fill it from the front of the blocks after it,
 * freeing those it empties. b ends full unless it is or becomes the tail. */
static void wide_block_compact(wide_t *w, wide_block_t *b)
{
    if (wide_live(b) != b->used)
        wide_block_pack(b);
    while (b->used < WIDE_SLOTS && b->next != NULL) {
        wide_block_t *next = b->next;
        /* Locals: the byte stores of a move could alias the headers. next is
         * trimmed and not empty (only a lone block may be). */
        unsigned bstart = b->start, bused = b->used, bvalid = b->valid;
        unsigned nstart = next->start, nvalid = next->valid;
        unsigned live = wide_rotr(nvalid, nstart);

        do {
            unsigned s = (nstart + (unsigned)__builtin_ctz(live)) & (WIDE_SLOTS - 1);
            unsigned d = (bstart + bused++) & (WIDE_SLOTS - 1);
            wide_slot_move(b, d, next, s);
            bvalid |= 1u << d;
            nvalid &= ~(1u << s);
            live &= live - 1;
        } while (live != 0 && bused < WIDE_SLOTS);
        b->used = (uint8_t)bused;
        b->valid = (uint16_t)bvalid;
        next->valid = (uint16_t)nvalid;
        if (nvalid != 0) {
            wide_block_trim(next);
            break;
        }
        wide_block_drop(w, next);
    }
}

/* Whether the pass has work. Eager: compaction could free a block (16 free
 * slots, two blocks or more). Otherwise only once the holes -- free slots
 * other than the tail's room, which appends fill anyway -- number at least
 * 16 + blocks / wide_cleanup: gathering sixteen holes costs moves in
 * proportion to the distance between them, so under churn the pass waits
 * until they are dense. */
static inline int wide_cleanup_due(const wide_t *w, int eager)
{
    size_t free = w->nblocks * WIDE_SLOTS - w->count, holes;

    if (free < WIDE_SLOTS || w->nblocks == 1)
        return 0;
    if (eager)
        return 1;
    holes = free - (WIDE_SLOTS - w->tail->used);
    return holes >= WIDE_SLOTS && (holes - WIDE_SLOTS) * w->cleanup >= w->nblocks;
}

static void wide_cleanup_run(wide_t *w, int eager)
{
    for (unsigned i = 0; i < w->cleanup && wide_cleanup_due(w, eager); i++) {
        wide_block_t *b = w->cursor != NULL ? w->cursor : w->head;
        wide_block_compact(w, b);
        w->cursor = b->next;
    }
}

/* The clean-up pass's share of one operation; inline so that a compact
 * queue pays one compare for it. Eager for an operation that changed
 * nothing (a peek or a miss), so a queue that stops changing ends as short
 * as it can be. */
static inline void wide_cleanup_step(wide_t *w, int eager)
{
    if (wide_cleanup_due(w, eager))
        wide_cleanup_run(w, eager);
}

/* Whether the next append fits the tail: room after its youngest entry, or
 * enough holes to pack it in place. */
static inline int wide_tail_fits(const wide_block_t *b)
{
    return b->used < WIDE_SLOTS || wide_live(b) <= WIDE_SLOTS - WIDE_PACK_HOLES;
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

/* Only an append that does not fit the tail takes a block; make sure one is
 * free so that append cannot fail. */
static onic_status_t wide_reserve(onic_matcher_t *m)
{
    wide_t *w = m->engine;

    if (w->tail != NULL && wide_tail_fits(w->tail))
        return ONIC_OK;
    return wide_blocks_ensure(w);
}

static void wide_append(onic_matcher_t *m, onic_mentry_t *e)
{
    wide_t *w = m->engine;
    wide_block_t *b = w->tail;
    unsigned s;

    if (b == NULL || b->used == WIDE_SLOTS) {
        if (b != NULL && wide_tail_fits(b))
            wide_block_pack(b);
        else
            b = wide_block_push(w);
    }
    s = wide_pos(b, b->used++);
    wide_slot_set(b, s, (wide_entry_t *)e);
    b->valid |= (uint16_t)(1u << s);
    w->count++;
    wide_cleanup_step(w, 0);
}

/* Put e at position p (0: in front of the first entry) of b's queue order.
 * Needs a free block if b is full. */
static void wide_block_put(wide_t *w, wide_block_t *b, unsigned p, wide_entry_t *e)
{
    unsigned start, used;

    if (wide_live(b) != b->used)
        wide_block_pack(b);
    if (b->used == WIDE_SLOTS) {
        /* Split: positions p.. go to a new block behind b. */
        wide_block_t *nb = wide_block_link_after(w, b);
        unsigned n = 0;

        for (unsigned i = p; i < WIDE_SLOTS; i++)
            wide_slot_move(nb, n++, b, wide_pos(b, i));
        nb->used = (uint8_t)n;
        nb->valid = (uint16_t)((1u << n) - 1);
        b->used = (uint8_t)p;
        b->valid = (uint16_t)wide_rotl((1u << p) - 1, b->start);
        if (p == WIDE_SLOTS) {
            b = nb;
            p = 0;
        }
    }
    /* Dense with room: slide the shorter side by one slot. Locals: the
     * byte stores of a move could alias the header. */
    start = b->start;
    used = b->used;
    if (p >= used - p) {
        for (unsigned i = used; i > p; i--)
            wide_slot_move(b, (start + i) & (WIDE_SLOTS - 1),
                           b, (start + i - 1) & (WIDE_SLOTS - 1));
    } else {
        start = (start - 1) & (WIDE_SLOTS - 1);
        for (unsigned i = 0; i < p; i++)
            wide_slot_move(b, (start + i) & (WIDE_SLOTS - 1),
                           b, (start + i + 1) & (WIDE_SLOTS - 1));
    }
    used++;
    wide_slot_set(b, (start + p) & (WIDE_SLOTS - 1), e);
    b->start = (uint8_t)start;
    b->used  = (uint8_t)used;
    b->valid = (uint16_t)wide_rotl((1u << used) - 1, start);
}

static onic_status_t wide_insert(onic_matcher_t *m, onic_mentry_t *e, onic_mentry_t *anchor,
                                 int after)
{
    wide_t *w = m->engine;
    wide_entry_t *we = (wide_entry_t *)e, *at = (wide_entry_t *)anchor;
    wide_block_t *b;
    onic_status_t status;

    if (w->count == 0) {
        status = wide_reserve(m);
        if (status == ONIC_OK)
            wide_append(m, e);
        return status;
    }
    b = at != NULL ? at->block : w->head;
    if (wide_live(b) == WIDE_SLOTS && (status = wide_blocks_ensure(w)) != ONIC_OK)
        return status;
    if (wide_live(b) != b->used)
        wide_block_pack(b);  /* before reading the anchor's place: packing moves it */
    wide_block_put(w, b, at == NULL ? 0 : ((at->slot - b->start) & (WIDE_SLOTS - 1)) + (after != 0),
                   we);
    w->count++;
    wide_cleanup_step(w, 0);
    return ONIC_OK;
}

static onic_mentry_t *wide_neighbour(onic_matcher_t *m, const onic_mentry_t *e, int after)
{
    const wide_entry_t *we = (const wide_entry_t *)e;
    const wide_block_t *b = we->block;
    unsigned p = (we->slot - b->start) & (WIDE_SLOTS - 1);
    unsigned live = wide_rotr(b->valid, b->start);
    unsigned rest = after ? live & ~((2u << p) - 1) : live & ((1u << p) - 1);

    (void)m;
    if (rest == 0) {
        b = after ? b->next : b->prev;
        if (b == NULL)
            return NULL;
        rest = wide_rotr(b->valid, b->start); /* not empty: only a lone block may be */
    }
    p = after ? (unsigned)__builtin_ctz(rest) : 31u - (unsigned)__builtin_clz(rest);
    return &b->entry[wide_pos(b, p)]->super;
}

static onic_status_t wide_renumber(onic_matcher_t *m, uint64_t base, uint64_t stride)
{
    wide_t *w = m->engine;

    for (wide_block_t *b = w->head; b != NULL; b = b->next)
        for (unsigned i = 0; i < b->used; i++)
            if (b->valid & (1u << wide_pos(b, i))) {
                b->entry[wide_pos(b, i)]->super.seq = base;
                base += stride;
            }
    return ONIC_OK;
}

/* find with accept: from each block the scan stops at, the block's later
 * slots are tried in order (the scan already counted them as inspected),
 * then the scan resumes at the next block. */
static wide_block_t *wide_find_accept(wide_t *w, onic_mkey_t key, onic_mkey_t ignore,
                                      onic_match_accept_t accept, void *arg, unsigned *slot_p,
                                      uint64_t *inspected_p, int *took_p)
{
    uint64_t inspected = 0, part;
    unsigned s;
    wide_block_t *b = w->scan(w->head, key, ignore, &s, &inspected);

    while (b != NULL) {
        unsigned p = (s - b->start) & (WIDE_SLOTS - 1);
        for (unsigned rest = wide_rotr(b->valid, b->start) >> p << p; rest != 0; rest &= rest - 1) {
            s = wide_pos(b, (unsigned)__builtin_ctz(rest));
            if (wide_slot_matches(b, s, key, ignore) &&
                (*took_p = accept(arg, b->entry[s]->super.cookie)) != 0) {
                *slot_p = s;
                *inspected_p = inspected;
                return b;
            }
        }
        b = w->scan(b->next, key, ignore, &s, &part);
        inspected += part;
    }
    *inspected_p = inspected;
    return NULL;
}

static onic_mentry_t *wide_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    wide_t *w = m->engine;
    wide_entry_t *we = NULL;
    uint64_t inspected;
    unsigned s = 0;
    wide_block_t *b = w->head;

    /* A lone entry, the ping-pong case: compared directly, which costs less
     * than setting up the filter. It is the oldest of the head, as only a
     * lone block can be empty. */
    if (w->count == 1 && wide_slot_matches(b, b->start, key, ignore)) {
        s = b->start;
        inspected = 1;
    } else {
        b = w->scan(b, key, ignore, &s, &inspected);
    }

    m->stats.inspected += inspected;
    if (b != NULL) {
        we = b->entry[s];
        if (remove)
            wide_slot_clear(w, b, s);
    }
    wide_cleanup_step(w, b == NULL || !remove);
    return we != NULL ? &we->super : NULL;
}

static onic_mentry_t *wide_find_accept_op(onic_matcher_t *m, onic_mkey_t key,
                                          onic_mkey_t ignore, onic_match_accept_t accept,
                                          void *arg, int *remove)
{
    wide_t *w = m->engine;
    uint64_t inspected;
    unsigned s = 0;
    int took = 0;
    wide_block_t *b = wide_find_accept(w, key, ignore, accept, arg, &s, &inspected, &took);
    wide_entry_t *we = b != NULL ? b->entry[s] : NULL;

    m->stats.inspected += inspected;
    if (took == ONIC_MATCH_TAKE_LAST)
        *remove = 1;
    if (b != NULL && *remove)
        wide_slot_clear(w, b, s);
    wide_cleanup_step(w, b == NULL || !*remove);
    return we != NULL ? &we->super : NULL;
}

static void wide_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    wide_t *w = m->engine;
    wide_entry_t *we = (wide_entry_t *)e;

    wide_slot_clear(w, we->block, we->slot);
    wide_cleanup_step(w, 0);
}

const onic_match_ops_t onic_match_wide_ops = {
    .name       = "wide",
    .desc       = "blocks of 16 entries filtered by fingerprint and compared at once, "
                  "holes compacted incrementally",
    .entry_size = sizeof(wide_entry_t),
    .init       = wide_init,
    .fini       = wide_fini,
    .reserve    = wide_reserve,
    .append     = wide_append,
    .insert     = wide_insert,
    .neighbour  = wide_neighbour,
    .renumber   = wide_renumber,
    .find       = wide_find,
    .find_accept = wide_find_accept_op,
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

static int wide_block_check(const wide_block_t *b, size_t *count_p, uint64_t *last_seq_p)
{
    unsigned span, live;

    if (b->start >= WIDE_SLOTS || b->used > WIDE_SLOTS)
        return 0;
    span = wide_rotl((1u << b->used) - 1, b->start);
    live = wide_rotr(b->valid, b->start);
    if ((b->valid & ~span) != 0)
        return 0;
    /* Trimmed: the span starts and ends with an entry. */
    if (b->used > 0 && (!(live & 1) || !(live & (1u << (b->used - 1)))))
        return 0;
    for (unsigned i = 0; i < b->used; i++) {
        unsigned s = wide_pos(b, i);
        const wide_entry_t *we = b->entry[s];
        if (!(b->valid & (1u << s)))
            continue;
        if (we->block != b || we->slot != s || !onic_mentry_queued(&we->super) ||
            b->bits[s] != we->super.key.bits || b->id[s] != we->super.key.id ||
            b->ignore_bits[s] != we->super.ignore.bits ||
            b->ignore_id[s] != we->super.ignore.id ||
            b->fp_bits[s] != wide_fp(we->super.key.bits, we->super.ignore.bits) ||
            b->fp_id[s] != wide_fp(we->super.key.id, we->super.ignore.id) ||
            (*count_p > 0 && we->super.seq <= *last_seq_p))
            return 0;
        *last_seq_p = we->super.seq;
        (*count_p)++;
    }
    return 1;
}

int onic_match_wide_check(const onic_matcher_t *m)
{
    const wide_t *w = m->engine;
    const wide_block_t *prev = NULL;
    size_t nblocks = 0, count = 0;
    uint64_t last_seq = 0;
    int cursor_seen = w->cursor == NULL;

    for (const wide_block_t *b = w->head; b != NULL; prev = b, b = b->next) {
        /* Only a lone block may be empty. */
        if (b->prev != prev || b->skip != (b->next != NULL ? b->next->next : NULL) ||
            (b->valid == 0 && (b != w->head || b != w->tail)) ||
            !wide_block_check(b, &count, &last_seq))
            return 0;
        cursor_seen |= b == w->cursor;
        nblocks++;
    }
    return prev == w->tail && nblocks == w->nblocks && count == w->count &&
           count == m->length && cursor_seen && w->blocks.in_use == nblocks;
}
