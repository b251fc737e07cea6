/* The software ALPU: cells in structure-of-arrays form grouped in blocks,
 * three FIFO rings and the figure 3 state machine. See alpu_unit.h for the
 * protocol. */
#include "match/alpu_unit.h"
#include "base/cpu.h"
#include "base/dl.h"
#include "base/log.h"
#include "base/mem.h"

#include <assert.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define UNIT_HAVE_AVX2 1
#include <immintrin.h>
#else
#define UNIT_HAVE_AVX2 0
#endif

#define UNIT_FIFO_MASK (ONIC_ALPU_UNIT_FIFO_DEPTH - 1)
static_assert((ONIC_ALPU_UNIT_FIFO_DEPTH & UNIT_FIFO_MASK) == 0, "fifo depth is a power of two");

/* The AVX2 compares look at this many cells per step: one hit mask ANDed
 * with one valid bitmap word, then one branch. */
#define UNIT_CHUNK 64u
#define UNIT_NONE  UINT32_MAX  /* no cell matched */

/* Free-running counters: length is tail - head, even across wrap-around. */
typedef struct unit_ring {
    uint32_t head, tail;
} unit_ring_t;

struct onic_alpu_unit {
    /* Cells in structure-of-arrays form so one AVX2 compare covers four;
     * every array is 32-byte aligned and padded to UNIT_CHUNK cells so the
     * vector loads of a chunk stay inside it. */
    uint64_t   *key_bits, *key_id, *ign_bits, *ign_id, *tag;
    /* A byte per cell: a hash of the key, or 0 when the cell has ignore bits
     * set. A request without ignore bits can only match cells whose byte is
     * its own hash or 0, so the AVX2 path filters 32 cells per byte compare
     * and runs the full compare only on those. */
    uint8_t    *hash;
    /* Bit i: cell i is valid. A delete only clears its bit (the hole stays
     * where it is) and the compare ANDs the bits into its hit mask. */
    uint64_t   *valid;
    uint32_t   *block_count;  /* valid cells per block */
    void       *cell_mem;
    unsigned    cells, block, block_shift;
    unsigned    count;  /* valid cells */
    unsigned    top;    /* one past the youngest valid cell; 0 when empty */
    unsigned    wild;   /* valid cells with ignore bits (hash 0) */
    int         avx2;
    int         insert_mode;
    int         held;  /* the request at the header FIFO's head failed in insert mode */
    unit_ring_t cmd_ring, hdr_ring, res_ring;
    onic_alpu_cmd_t    cmds[ONIC_ALPU_UNIT_FIFO_DEPTH];
    onic_alpu_hdr_t    hdrs[ONIC_ALPU_UNIT_FIFO_DEPTH];
    onic_alpu_result_t results[ONIC_ALPU_UNIT_FIFO_DEPTH];
    onic_alpu_unit_counters_t counters;
};

static inline uint32_t unit_ring_len(const unit_ring_t *r)
{
    return r->tail - r->head;
}

static inline int unit_ring_full(const unit_ring_t *r)
{
    return unit_ring_len(r) == ONIC_ALPU_UNIT_FIFO_DEPTH;
}

static inline int unit_pow2(unsigned v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* Never 0: that marks a cell with ignore bits. Equal keys hash equal,
 * which is all the filter needs. */
static inline uint8_t unit_key_hash(uint64_t bits, uint64_t id)
{
    uint64_t h = (bits ^ (id * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    uint8_t b = (uint8_t)(h >> 56);

    return b != 0 ? b : 1;
}

static inline int unit_valid(const onic_alpu_unit_t *u, unsigned i)
{
    return (int)((u->valid[i / 64] >> (i % 64)) & 1);
}

onic_status_t onic_alpu_unit_create(unsigned cells, unsigned block, onic_simd_t simd,
                                    onic_alpu_unit_t **unit_p)
{
    onic_alpu_unit_t *u;
    size_t stride, words, bytes;
    int avx2;

    if (!unit_pow2(cells) || cells < 2 || cells > ONIC_ALPU_UNIT_MAX_CELLS) {
        onic_error("alpu: ONIC_ALPU_CELLS=%u is not a power of two from 2 to %u",
                   cells, ONIC_ALPU_UNIT_MAX_CELLS);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (!unit_pow2(block) || block > cells) {
        onic_error("alpu: ONIC_ALPU_BLOCK=%u is not a power of two at most ONIC_ALPU_CELLS=%u",
                   block, cells);
        return ONIC_ERR_INVALID_PARAM;
    }
    switch (simd) {
    case ONIC_SIMD_AUTO:
        avx2 = UNIT_HAVE_AVX2 && onic_cpu_has_avx2();
        break;
    case ONIC_SIMD_SCALAR:
        avx2 = 0;
        break;
    case ONIC_SIMD_AVX2:
        if (!UNIT_HAVE_AVX2 || !onic_cpu_has_avx2()) {
            onic_error("alpu: ONIC_SIMD=avx2 but this cpu has no avx2; use auto or scalar");
            return ONIC_ERR_INVALID_PARAM;
        }
        avx2 = 1;
        break;
    default:
        onic_error("alpu: ONIC_SIMD value %d is not auto, scalar or avx2", (int)simd);
        return ONIC_ERR_INVALID_PARAM;
    }

    u = onic_calloc(1, sizeof(*u));
    if (u == NULL) {
        onic_error("alpu: cannot allocate a unit of %u cells", cells);
        return ONIC_ERR_NO_MEMORY;
    }
    /* cells is a power of two, so the stride is a multiple of the chunk. */
    stride = cells < UNIT_CHUNK ? UNIT_CHUNK : cells;
    words  = (stride + 63) / 64;
    bytes  = (5 * stride + words) * sizeof(uint64_t) + stride +
             (cells / block) * sizeof(uint32_t);
    u->cell_mem = onic_aligned_alloc(32, bytes);
    if (u->cell_mem == NULL) {
        onic_error("alpu: cannot allocate %u cells", cells);
        onic_free(u);
        return ONIC_ERR_NO_MEMORY;
    }
    /* Zeroed: padding lanes a vector load may read are defined, no cell is
     * valid and every block is empty. */
    memset(u->cell_mem, 0, bytes);
    u->key_bits    = u->cell_mem;
    u->key_id      = u->key_bits + stride;
    u->ign_bits    = u->key_id + stride;
    u->ign_id      = u->ign_bits + stride;
    u->tag         = u->ign_id + stride;
    /* hash follows the 8-byte arrays so it keeps their 32-byte alignment;
     * its stride bytes are a multiple of 32 too. */
    u->hash        = (uint8_t *)(u->tag + stride);
    u->valid       = (uint64_t *)(u->hash + stride);
    u->block_count = (uint32_t *)(u->valid + words);
    u->cells       = cells;
    u->block       = block;
    u->block_shift = (unsigned)__builtin_ctz(block);
    u->avx2        = avx2;
    *unit_p = u;
    return ONIC_OK;
}

void onic_alpu_unit_destroy(onic_alpu_unit_t *u)
{
    if (u == NULL)
        return;
    onic_free(u->cell_mem);
    onic_free(u);
}

/* The FIFO copies go field by field: the caller has usually just written
 * the struct one field at a time, and a whole-struct copy (16-byte loads)
 * cannot be forwarded from those narrower stores, which stalls the copy
 * until they reach the cache, on every request. */
onic_status_t onic_alpu_unit_cmd_push(onic_alpu_unit_t *u, const onic_alpu_cmd_t *cmd)
{
    onic_alpu_cmd_t *c;

    if (unit_ring_full(&u->cmd_ring))
        return ONIC_ERR_NO_RESOURCE;
    c = &u->cmds[u->cmd_ring.tail++ & UNIT_FIFO_MASK];
    c->type        = cmd->type;
    c->key.bits    = cmd->key.bits;
    c->key.id      = cmd->key.id;
    c->ignore.bits = cmd->ignore.bits;
    c->ignore.id   = cmd->ignore.id;
    c->tag         = cmd->tag;
    return ONIC_OK;
}

onic_status_t onic_alpu_unit_hdr_push(onic_alpu_unit_t *u, const onic_alpu_hdr_t *hdr)
{
    onic_alpu_hdr_t *h;

    if (unit_ring_full(&u->hdr_ring))
        return ONIC_ERR_NO_RESOURCE;
    h = &u->hdrs[u->hdr_ring.tail++ & UNIT_FIFO_MASK];
    h->key.bits    = hdr->key.bits;
    h->key.id      = hdr->key.id;
    h->ignore.bits = hdr->ignore.bits;
    h->ignore.id   = hdr->ignore.id;
    h->probe       = hdr->probe;
    return ONIC_OK;
}

onic_status_t onic_alpu_unit_result_pop(onic_alpu_unit_t *u, onic_alpu_result_t *res_p)
{
    const onic_alpu_result_t *r;

    if (unit_ring_len(&u->res_ring) == 0)
        return ONIC_ERR_NO_ELEM;
    r = &u->results[u->res_ring.head++ & UNIT_FIFO_MASK];
    res_p->type = r->type;
    res_p->free = r->free;
    res_p->tag  = r->tag;
    return ONIC_OK;
}

/* run() checks for room before every step that can produce a result. */
static void unit_result_push(onic_alpu_unit_t *u, uint32_t type, uint32_t free, uint64_t tag)
{
    onic_alpu_result_t *r = &u->results[u->res_ring.tail++ & UNIT_FIFO_MASK];

    assert(unit_ring_len(&u->res_ring) <= ONIC_ALPU_UNIT_FIFO_DEPTH);
    r->type = type;
    r->free = free;
    r->tag  = tag;
}

/* --- compare paths ---
 * The hardware compares every cell at once and its priority logic picks the
 * first block with a hit, then the lowest cell in it: that is the lowest
 * matching valid index, which both paths return (UNIT_NONE for none). Each
 * also sets *compared_p to the valid cells in the blocks up to the one with
 * the hit (all of them on a miss): blocks after the first hit need not be
 * looked at. The scalar path counts with the block counts, the AVX2 path
 * with the valid bitmap, so test_unit_simd_agree checks that they agree. */

static inline int unit_cell_matches(const onic_alpu_unit_t *u, unsigned i,
                                    const onic_alpu_hdr_t *h)
{
    return (((u->key_bits[i] ^ h->key.bits) & ~(u->ign_bits[i] | h->ignore.bits)) |
            ((u->key_id[i] ^ h->key.id) & ~(u->ign_id[i] | h->ignore.id))) == 0;
}

static unsigned unit_scan_scalar(const onic_alpu_unit_t *u, const onic_alpu_hdr_t *h,
                                 unsigned *compared_p)
{
    unsigned nblocks = (u->top + u->block - 1) >> u->block_shift;
    unsigned compared = 0;

    for (unsigned b = 0; b < nblocks; b++) {
        unsigned i = b << u->block_shift, end = i + u->block;

        if (u->block_count[b] == 0)
            continue;
        compared += u->block_count[b];
        for (; i < end; i++) {
            if (unit_valid(u, i) && unit_cell_matches(u, i, h)) {
                *compared_p = compared;
                return i;
            }
        }
    }
    *compared_p = u->count;
    return UNIT_NONE;
}

#if UNIT_HAVE_AVX2
/* Valid cells in the blocks up to the one holding `at`, given `before`, the
 * valid cells in the bitmap words before at's. */
__attribute__((target("avx2")))
static inline unsigned unit_compared_avx2(const onic_alpu_unit_t *u, unsigned at, unsigned before)
{
    unsigned end = ((at >> u->block_shift) + 1) << u->block_shift;
    unsigned w = at / 64;

    if (end > u->top)
        end = u->top;
    for (; w < end / 64; w++)
        before += (unsigned)__builtin_popcountll(u->valid[w]);
    if (end % 64 != 0)
        before += (unsigned)__builtin_popcountll(u->valid[w] & ((1ull << (end % 64)) - 1));
    return before;
}

/* Bit j set: cell i + j matches, valid or not. */
__attribute__((target("avx2")))
static inline unsigned unit_hits4_avx2(const onic_alpu_unit_t *u, unsigned i, __m256i kb,
                                       __m256i ki, __m256i qb, __m256i qi)
{
    __m256i db = _mm256_xor_si256(_mm256_load_si256((const __m256i *)&u->key_bits[i]), kb);
    __m256i di = _mm256_xor_si256(_mm256_load_si256((const __m256i *)&u->key_id[i]), ki);
    __m256i mb = _mm256_or_si256(_mm256_load_si256((const __m256i *)&u->ign_bits[i]), qb);
    __m256i mi = _mm256_or_si256(_mm256_load_si256((const __m256i *)&u->ign_id[i]), qi);
    __m256i diff = _mm256_or_si256(_mm256_andnot_si256(mb, db), _mm256_andnot_si256(mi, di));

    return (unsigned)_mm256_movemask_pd(
        _mm256_castsi256_pd(_mm256_cmpeq_epi64(diff, _mm256_setzero_si256())));
}

/* A request with ignore bits: every cell gets the full compare. */
__attribute__((target("avx2")))
static unsigned unit_scan_avx2_wild(const onic_alpu_unit_t *u, const onic_alpu_hdr_t *h,
                                    unsigned *compared_p)
{
    const __m256i kb = _mm256_set1_epi64x((long long)h->key.bits);
    const __m256i ki = _mm256_set1_epi64x((long long)h->key.id);
    const __m256i qb = _mm256_set1_epi64x((long long)h->ignore.bits);
    const __m256i qi = _mm256_set1_epi64x((long long)h->ignore.id);
    unsigned before = 0;

    for (unsigned i = 0; i < u->top; i += UNIT_CHUNK) {
        /* Holes and cells past top hold stale data: the valid bits decide. */
        uint64_t hits = 0;

        for (unsigned j = 0; j < UNIT_CHUNK; j += 4)
            hits |= (uint64_t)unit_hits4_avx2(u, i + j, kb, ki, qb, qi) << j;
        hits &= u->valid[i / 64];
        if (hits != 0) {
            unsigned at = i + (unsigned)__builtin_ctzll(hits);
            *compared_p = unit_compared_avx2(u, at, before);
            return at;
        }
        before += (unsigned)__builtin_popcountll(u->valid[i / 64]);
    }
    *compared_p = u->count;
    return UNIT_NONE;
}

/* A request without ignore bits: the hash filter, then the full compare on
 * the valid candidates in order. */
__attribute__((target("avx2")))
static unsigned unit_scan_avx2_exact(const onic_alpu_unit_t *u, const onic_alpu_hdr_t *h,
                                     unsigned *compared_p)
{
    const __m256i qh = _mm256_set1_epi8((char)unit_key_hash(h->key.bits, h->key.id));
    /* Wildcard cells (hash 0) are candidates too; when there are none the
     * compare against 0 matches nothing new, so it compares qh again. */
    const __m256i qw = u->wild != 0 ? _mm256_setzero_si256() : qh;
    unsigned before = 0;

    for (unsigned i = 0; i < u->top; i += UNIT_CHUNK) {
        __m256i c0 = _mm256_load_si256((const __m256i *)&u->hash[i]);
        __m256i c1 = _mm256_load_si256((const __m256i *)&u->hash[i + 32]);
        __m256i m0 = _mm256_or_si256(_mm256_cmpeq_epi8(c0, qh), _mm256_cmpeq_epi8(c0, qw));
        __m256i m1 = _mm256_or_si256(_mm256_cmpeq_epi8(c1, qh), _mm256_cmpeq_epi8(c1, qw));
        uint64_t cand = (uint64_t)(uint32_t)_mm256_movemask_epi8(m0) |
                        (uint64_t)(uint32_t)_mm256_movemask_epi8(m1) << 32;

        for (cand &= u->valid[i / 64]; cand != 0; cand &= cand - 1) {
            unsigned at = i + (unsigned)__builtin_ctzll(cand);
            if (unit_cell_matches(u, at, h)) {
                *compared_p = unit_compared_avx2(u, at, before);
                return at;
            }
        }
        before += (unsigned)__builtin_popcountll(u->valid[i / 64]);
    }
    *compared_p = u->count;
    return UNIT_NONE;
}

__attribute__((target("avx2")))
static unsigned unit_scan_avx2(const onic_alpu_unit_t *u, const onic_alpu_hdr_t *h,
                               unsigned *compared_p)
{
    if ((h->ignore.bits | h->ignore.id) != 0)
        return unit_scan_avx2_wild(u, h, compared_p);
    return unit_scan_avx2_exact(u, h, compared_p);
}
#endif

/* The request is read field by field where it is used: it was just written
 * that way, and 16-byte loads of it would wait for those stores. */
static unsigned unit_scan(const onic_alpu_unit_t *u, const onic_alpu_hdr_t *h,
                          unsigned *compared_p)
{
#if UNIT_HAVE_AVX2
    if (u->avx2)
        return unit_scan_avx2(u, h, compared_p);
#endif
    return unit_scan_scalar(u, h, compared_p);
}

/* Drop cell `at` by clearing its valid bit. The paper's unit shifts the
 * younger cells up in the same clock; in software that is a copy of every
 * cell array per delete, so the hole stays (the compare skips it) until
 * insert mode compacts it away. The valid cells stay in age order either
 * way. */
static void unit_delete(onic_alpu_unit_t *u, unsigned at)
{
    u->wild -= u->hash[at] == 0;
    u->valid[at / 64] &= ~(1ull << (at % 64));
    u->block_count[at >> u->block_shift]--;
    u->count--;
    if (at + 1 == u->top) {
        /* The youngest cell went: top drops to the next valid one. */
        unsigned w = at / 64;
        uint64_t bits = u->valid[w];

        while (bits == 0 && w > 0)
            bits = u->valid[--w];
        u->top = bits == 0 ? 0 : w * 64 + 64 - (unsigned)__builtin_clzll(bits);
    }
}

/* First cell at or after i whose valid bit is `want`; `limit` if none
 * before it. */
static unsigned unit_valid_next(const onic_alpu_unit_t *u, unsigned i, unsigned limit, int want)
{
    while (i < limit) {
        uint64_t bits = (want ? u->valid[i / 64] : ~u->valid[i / 64]) >> (i % 64);

        if (bits != 0) {
            i += (unsigned)__builtin_ctzll(bits);
            return i < limit ? i : limit;
        }
        i = (i / 64 + 1) * 64;
    }
    return limit;
}

/* Runs shorter than this are copied cell by cell: six memmove calls cost
 * more than copying a few cells. */
#define UNIT_MOVE_MIN 16u

/* Move the n cells at src down to dst (dst < src). */
static void unit_move(onic_alpu_unit_t *u, unsigned dst, unsigned src, unsigned n)
{
    size_t bytes = (size_t)n * sizeof(uint64_t);

    if (n < UNIT_MOVE_MIN) {
        for (unsigned i = 0; i < n; i++) {
            u->key_bits[dst + i] = u->key_bits[src + i];
            u->key_id[dst + i]   = u->key_id[src + i];
            u->ign_bits[dst + i] = u->ign_bits[src + i];
            u->ign_id[dst + i]   = u->ign_id[src + i];
            u->tag[dst + i]      = u->tag[src + i];
            u->hash[dst + i]     = u->hash[src + i];
        }
    } else {
        memmove(&u->key_bits[dst], &u->key_bits[src], bytes);
        memmove(&u->key_id[dst],   &u->key_id[src],   bytes);
        memmove(&u->ign_bits[dst], &u->ign_bits[src], bytes);
        memmove(&u->ign_id[dst],   &u->ign_id[src],   bytes);
        memmove(&u->tag[dst],      &u->tag[src],      bytes);
        memmove(&u->hash[dst],     &u->hash[src],     n);
    }
}

/* Scalar compaction from the first hole: runs of valid cells move down. */
static void unit_compact_scalar(onic_alpu_unit_t *u, unsigned dst)
{
    unsigned src = dst;

    while ((src = unit_valid_next(u, src, u->top, 1)) < u->top) {
        unsigned end = unit_valid_next(u, src, u->top, 0);

        unit_move(u, dst, src, end - src);
        dst += end - src;
        src = end;
    }
}

#if UNIT_HAVE_AVX2
/* Left-pack tables for a group of four cells, indexed by its valid mask:
 * the 32-bit lane pairs of the valid 64-bit cells in order, and the same
 * order as byte indices for the hash bytes. Unused lanes are don't-care. */
static const uint32_t unit_pack_perm[16][8] = {
    {0, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0},
    {2, 3, 0, 0, 0, 0, 0, 0}, {0, 1, 2, 3, 0, 0, 0, 0},
    {4, 5, 0, 0, 0, 0, 0, 0}, {0, 1, 4, 5, 0, 0, 0, 0},
    {2, 3, 4, 5, 0, 0, 0, 0}, {0, 1, 2, 3, 4, 5, 0, 0},
    {6, 7, 0, 0, 0, 0, 0, 0}, {0, 1, 6, 7, 0, 0, 0, 0},
    {2, 3, 6, 7, 0, 0, 0, 0}, {0, 1, 2, 3, 6, 7, 0, 0},
    {4, 5, 6, 7, 0, 0, 0, 0}, {0, 1, 4, 5, 6, 7, 0, 0},
    {2, 3, 4, 5, 6, 7, 0, 0}, {0, 1, 2, 3, 4, 5, 6, 7},
};
static const uint32_t unit_pack_bytes[16] = {
    0x00000000, 0x00000000, 0x00000001, 0x00000100,
    0x00000002, 0x00000200, 0x00000201, 0x00020100,
    0x00000003, 0x00000300, 0x00000301, 0x00030100,
    0x00000302, 0x00030200, 0x00030201, 0x03020100,
};

__attribute__((target("avx2")))
static inline void unit_pack4_avx2(uint64_t *a, unsigned dst, unsigned src, __m256i perm)
{
    _mm256_storeu_si256((__m256i *)&a[dst],
                        _mm256_permutevar8x32_epi32(_mm256_load_si256((const __m256i *)&a[src]),
                                                    perm));
}

/* AVX2 compaction: short runs are the common case (holes are spread by
 * random matches), so pack four cells per step with a permute instead of
 * copying run by run. A step stores four lanes at dst <= src after loading
 * them, so it never overwrites a cell not yet read; lanes past the packed
 * ones land on holes or stale cells. */
__attribute__((target("avx2")))
static void unit_compact_avx2(onic_alpu_unit_t *u, unsigned dst)
{
    /* The group holding the first hole: its valid cells (all before the
     * hole) pack onto themselves. */
    dst &= ~3u;
    for (unsigned src = dst; src < u->top; src += 4) {
        unsigned m = (unsigned)(u->valid[src / 64] >> (src % 64)) & 0xf;
        __m256i perm;
        __m128i hb;
        uint32_t h4;

        if (m == 0)
            continue;
        perm = _mm256_loadu_si256((const __m256i *)unit_pack_perm[m]);
        unit_pack4_avx2(u->key_bits, dst, src, perm);
        unit_pack4_avx2(u->key_id, dst, src, perm);
        unit_pack4_avx2(u->ign_bits, dst, src, perm);
        unit_pack4_avx2(u->ign_id, dst, src, perm);
        unit_pack4_avx2(u->tag, dst, src, perm);
        memcpy(&h4, &u->hash[src], sizeof(h4));
        hb = _mm_shuffle_epi8(_mm_cvtsi32_si128((int)h4), _mm_cvtsi32_si128((int)unit_pack_bytes[m]));
        h4 = (uint32_t)_mm_cvtsi128_si32(hb);
        memcpy(&u->hash[dst], &h4, sizeof(h4));
        dst += (unsigned)__builtin_popcount(m);
    }
}
#endif

/* Section III.B's "space available" compaction, which the hardware does
 * while in insert mode: every valid cell moves up over the holes before it,
 * so the valid cells are [0, count) again and an insert has room after them.
 * Out of line: it is rare, and inlined it would make every command pay for
 * saving the registers it needs. */
__attribute__((noinline))
static void unit_compact(onic_alpu_unit_t *u)
{
    unsigned nblocks = (u->top + u->block - 1) >> u->block_shift;
    unsigned hole = unit_valid_next(u, 0, u->top, 0);

#if UNIT_HAVE_AVX2
    if (u->avx2)
        unit_compact_avx2(u, hole);
    else
#endif
        unit_compact_scalar(u, hole);
    for (unsigned b = 0; b < nblocks; b++) {
        unsigned base = b << u->block_shift;
        u->block_count[b] = u->count <= base ? 0
                          : u->count - base < u->block ? u->count - base : u->block;
    }
    for (unsigned w = 0; w < (u->top + 63) / 64; w++) {
        unsigned lo = w * 64;
        u->valid[w] = u->count >= lo + 64 ? UINT64_MAX
                    : u->count > lo ? (1ull << (u->count - lo)) - 1 : 0;
    }
    /* Every valid cell after the first hole moved. */
    u->counters.moved += u->count - hole;
    u->counters.compactions++;
    u->top = u->count;
}

/* Fill the cell after the youngest valid one. Compact first when there is
 * no cell after it, or when holes outnumber the valid cells: each hole
 * costs every request a little compare work and a compaction copies every
 * cell after the first hole, so compacting on each insert round would copy
 * far more than the holes cost. */
static void unit_insert(onic_alpu_unit_t *u, const onic_alpu_cmd_t *c)
{
    unsigned at;

    if (u->top == u->cells || u->top - u->count > u->count)
        unit_compact(u);
    at = u->top++;
    u->key_bits[at] = c->key.bits;
    u->key_id[at]   = c->key.id;
    u->ign_bits[at] = c->ignore.bits;
    u->ign_id[at]   = c->ignore.id;
    u->tag[at]      = c->tag;
    if ((c->ignore.bits | c->ignore.id) != 0) {
        u->hash[at] = 0;
        u->wild++;
    } else {
        u->hash[at] = unit_key_hash(c->key.bits, c->key.id);
    }
    u->valid[at / 64] |= 1ull << (at % 64);
    u->block_count[at >> u->block_shift]++;
    u->count++;
    u->counters.inserts++;
}

static void unit_reset(onic_alpu_unit_t *u)
{
    memset(u->valid, 0, (u->top + 63) / 64 * sizeof(uint64_t));
    memset(u->block_count, 0,
           ((u->top + u->block - 1) >> u->block_shift) * sizeof(uint32_t));
    u->count = 0;
    u->top = 0;
    u->wild = 0;
    u->counters.resets++;
}

/* Serve the request at the header FIFO's head. */
static void unit_match(onic_alpu_unit_t *u)
{
    const onic_alpu_hdr_t *h = &u->hdrs[u->hdr_ring.head & UNIT_FIFO_MASK];
    unsigned compared;
    unsigned at = unit_scan(u, h, &compared);

    u->counters.compared += compared;
    if (at == UNIT_NONE) {
        if (u->insert_mode) {
            /* A cell still to be inserted may match: hold it for a retry
             * after STOP_INSERT instead of reporting a failure. */
            u->held = 1;
            return;
        }
        unit_result_push(u, ONIC_ALPU_RES_MATCH_FAILURE, 0, 0);
    } else {
        unit_result_push(u, ONIC_ALPU_RES_MATCH_SUCCESS, 0, u->tag[at]);
        if (!h->probe)
            unit_delete(u, at);
        u->counters.hits++;
    }
    u->counters.matches++;
    u->hdr_ring.head++;
}

/* Read Command (match state): discard until RESET or START_INSERT or the
 * FIFO runs dry. Insert mode: take one command, so matches go on between
 * inserts as in the paper. */
static void unit_command(onic_alpu_unit_t *u)
{
    while (unit_ring_len(&u->cmd_ring) != 0) {
        const onic_alpu_cmd_t *c = &u->cmds[u->cmd_ring.head++ & UNIT_FIFO_MASK];

        if (!u->insert_mode) {
            if (c->type == ONIC_ALPU_CMD_RESET) {
                unit_reset(u);
                return;
            }
            if (c->type == ONIC_ALPU_CMD_START_INSERT) {
                u->insert_mode = 1;
                unit_result_push(u, ONIC_ALPU_RES_START_ACK, u->cells - u->count, 0);
                return;
            }
            u->counters.discarded++;
            continue;
        }
        if (c->type == ONIC_ALPU_CMD_INSERT && u->count < u->cells) {
            unit_insert(u, c);
        } else if (c->type == ONIC_ALPU_CMD_STOP_INSERT) {
            u->insert_mode = 0;
            u->held = 0;  /* the held request is retried on the next step */
        } else {
            /* INSERT into a full unit, START_INSERT twice, or RESET, which
             * only the Read Command state accepts. */
            u->counters.discarded++;
        }
        return;
    }
}

unsigned onic_alpu_unit_run(onic_alpu_unit_t *u)
{
    unsigned steps = 0, before;

    do {
        before = steps;
        if (!u->held && unit_ring_len(&u->hdr_ring) != 0) {
            if (unit_ring_full(&u->res_ring))
                break;
            unit_match(u);
            steps++;
        }
        /* A pending command is read once the current match completes. */
        if (unit_ring_len(&u->cmd_ring) != 0) {
            if (unit_ring_full(&u->res_ring))
                break;
            unit_command(u);
            steps++;
        }
    } while (steps != before);
    return steps;
}

unsigned onic_alpu_unit_count(const onic_alpu_unit_t *u)
{
    return u->count;
}

unsigned onic_alpu_unit_free_cells(const onic_alpu_unit_t *u)
{
    return u->cells - u->count;
}

unsigned onic_alpu_unit_span(const onic_alpu_unit_t *u)
{
    return u->top;
}

uint64_t onic_alpu_unit_compared(const onic_alpu_unit_t *u)
{
    return u->counters.compared;
}

const char *onic_alpu_unit_simd(const onic_alpu_unit_t *u)
{
    return u->avx2 ? "avx2" : "scalar";
}

void onic_alpu_unit_counters(const onic_alpu_unit_t *u, onic_alpu_unit_counters_t *counters_p)
{
    *counters_p = u->counters;
}

/* --- the C unit as the engine's unit table --- */

static onic_status_t sw_create(unsigned cells, unsigned block, onic_simd_t simd, void **unit_p)
{
    onic_alpu_unit_t *u;
    onic_status_t status = onic_alpu_unit_create(cells, block, simd, &u);

    if (status == ONIC_OK)
        *unit_p = u;
    return status;
}

static void sw_destroy(void *unit)
{
    onic_alpu_unit_destroy(unit);
}

static onic_status_t sw_cmd_push(void *unit, const onic_alpu_cmd_t *cmd)
{
    return onic_alpu_unit_cmd_push(unit, cmd);
}

static onic_status_t sw_hdr_push(void *unit, const onic_alpu_hdr_t *hdr)
{
    return onic_alpu_unit_hdr_push(unit, hdr);
}

static unsigned sw_run(void *unit)
{
    return onic_alpu_unit_run(unit);
}

static onic_status_t sw_result_pop(void *unit, onic_alpu_result_t *res_p)
{
    return onic_alpu_unit_result_pop(unit, res_p);
}

static uint64_t sw_compared(const void *unit)
{
    return onic_alpu_unit_compared(unit);
}

static void sw_clock(const void *unit, onic_alpu_unit_clock_t *clock_p)
{
    (void)unit;
    memset(clock_p, 0, sizeof(*clock_p));
}

const onic_alpu_unit_ops_t onic_alpu_unit_sw_ops = {
    .abi        = ONIC_ALPU_UNIT_ABI,
    .name       = "sw",
    .sizes      = NULL,
    .create     = sw_create,
    .destroy    = sw_destroy,
    .cmd_push   = sw_cmd_push,
    .hdr_push   = sw_hdr_push,
    .run        = sw_run,
    .result_pop = sw_result_pop,
    .compared   = sw_compared,
    .clock      = sw_clock,
};

/* --- ONIC_ALPU_UNIT: which table stands behind the alpu engine ---
 * sw is the table above; rtl is hw/alpu/onic_alpu.v Verilated into a C++
 * plug-in (hw/alpu/rtl_unit.cpp, libonic-alpu-rtl.so), opened on first use
 * with dlopen so that libonic itself never links C++ or Verilator. */

static onic_alpu_unit_plugin_fn rtl_plugin;

static const onic_dl_sym_t rtl_syms[] = {
    {ONIC_ALPU_UNIT_PLUGIN_SYM, NULL, &rtl_plugin},
};

static onic_dl_lib_t rtl_lib = {
    .what      = "the RTL ALPU plug-in (libonic-alpu-rtl.so)",
    .file      = "libonic-alpu-rtl.so",
    .package   = "verilator, then build and install onic again",
    .needed_by = "ONIC_ALPU_UNIT=rtl",
    .var       = "ONIC_ALPU_RTL_LIB",
    .syms      = rtl_syms,
    .nsyms     = sizeof(rtl_syms) / sizeof(rtl_syms[0]),
};

onic_status_t onic_alpu_unit_ops_get(const onic_config_t *cfg, const onic_alpu_unit_ops_t **ops_p)
{
    const onic_alpu_unit_ops_t *ops;

    if (cfg->alpu_unit == ONIC_ALPU_UNIT_SW) {
        *ops_p = &onic_alpu_unit_sw_ops;
        return ONIC_OK;
    }
    if (cfg->alpu_unit != ONIC_ALPU_UNIT_RTL) {
        onic_error("alpu: ONIC_ALPU_UNIT value %u is not sw or rtl", cfg->alpu_unit);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (onic_dl_load(&rtl_lib, cfg->alpu_rtl_lib) != ONIC_OK) {
        onic_error("alpu: ONIC_ALPU_UNIT=rtl, but its plug-in cannot be loaded (see above): "
                   "onic builds it only where Verilator is installed; set ONIC_ALPU_RTL_LIB to "
                   "the built libonic-alpu-rtl.so, or use ONIC_ALPU_UNIT=sw");
        return ONIC_ERR_UNSUPPORTED;
    }
    ops = rtl_plugin(ONIC_ALPU_UNIT_ABI);
    if (ops == NULL || ops->abi != ONIC_ALPU_UNIT_ABI) {
        onic_error("alpu: ONIC_ALPU_UNIT=rtl, but the plug-in (%s) was built for another "
                   "version of onic (unit abi %u wanted); build it again with this onic, or "
                   "use ONIC_ALPU_UNIT=sw",
                   cfg->alpu_rtl_lib[0] != '\0' ? cfg->alpu_rtl_lib : rtl_lib.file,
                   ONIC_ALPU_UNIT_ABI);
        return ONIC_ERR_UNSUPPORTED;
    }
    *ops_p = ops;
    return ONIC_OK;
}
