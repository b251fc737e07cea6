/* The software ALPU: cells in structure-of-arrays form, three FIFO rings and
 * the figure 3 state machine. See alpu_unit.h for the protocol. */
#include "match/alpu_unit.h"
#include "base/cpu.h"
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

/* Free-running counters: length is tail - head, even across wrap-around. */
typedef struct unit_ring {
    uint32_t head, tail;
} unit_ring_t;

struct onic_alpu_unit {
    /* Cells [0, count) are valid, oldest first. Structure of arrays so one
     * AVX2 compare covers four cells; every array is 32-byte aligned and
     * padded to a multiple of four cells so vector loads stay inside it. */
    uint64_t   *key_bits, *key_id, *ign_bits, *ign_id, *tag;
    void       *cell_mem;
    unsigned    cells, block, count;
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

onic_status_t onic_alpu_unit_create(unsigned cells, unsigned block, onic_simd_t simd,
                                    onic_alpu_unit_t **unit_p)
{
    onic_alpu_unit_t *u;
    size_t stride;
    int avx2;

    if (!unit_pow2(cells) || cells > ONIC_ALPU_UNIT_MAX_CELLS) {
        onic_error("alpu: ONIC_ALPU_CELLS=%u is not a power of two from 1 to %u",
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
    stride = cells < 4 ? 4 : cells;
    u->cell_mem = onic_aligned_alloc(32, 5 * stride * sizeof(uint64_t));
    if (u->cell_mem == NULL) {
        onic_error("alpu: cannot allocate %u cells", cells);
        onic_free(u);
        return ONIC_ERR_NO_MEMORY;
    }
    /* Zeroed so the padding lanes a vector load may read are defined. */
    memset(u->cell_mem, 0, 5 * stride * sizeof(uint64_t));
    u->key_bits = u->cell_mem;
    u->key_id   = u->key_bits + stride;
    u->ign_bits = u->key_id + stride;
    u->ign_id   = u->ign_bits + stride;
    u->tag      = u->ign_id + stride;
    u->cells    = cells;
    u->block    = block;
    u->avx2     = avx2;
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

onic_status_t onic_alpu_unit_cmd_push(onic_alpu_unit_t *u, const onic_alpu_cmd_t *cmd)
{
    if (unit_ring_full(&u->cmd_ring))
        return ONIC_ERR_NO_RESOURCE;
    u->cmds[u->cmd_ring.tail++ & UNIT_FIFO_MASK] = *cmd;
    return ONIC_OK;
}

onic_status_t onic_alpu_unit_hdr_push(onic_alpu_unit_t *u, const onic_alpu_hdr_t *hdr)
{
    if (unit_ring_full(&u->hdr_ring))
        return ONIC_ERR_NO_RESOURCE;
    u->hdrs[u->hdr_ring.tail++ & UNIT_FIFO_MASK] = *hdr;
    return ONIC_OK;
}

onic_status_t onic_alpu_unit_result_pop(onic_alpu_unit_t *u, onic_alpu_result_t *res_p)
{
    if (unit_ring_len(&u->res_ring) == 0)
        return ONIC_ERR_NO_ELEM;
    *res_p = u->results[u->res_ring.head++ & UNIT_FIFO_MASK];
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
 * matching index, which both paths return (count for none). */

static unsigned unit_scan_scalar(const onic_alpu_unit_t *u, onic_mkey_t key, onic_mkey_t ignore)
{
    for (unsigned i = 0; i < u->count; i++) {
        if ((((u->key_bits[i] ^ key.bits) & ~(u->ign_bits[i] | ignore.bits)) |
             ((u->key_id[i] ^ key.id) & ~(u->ign_id[i] | ignore.id))) == 0)
            return i;
    }
    return u->count;
}

#if UNIT_HAVE_AVX2
__attribute__((target("avx2")))
static unsigned unit_scan_avx2(const onic_alpu_unit_t *u, onic_mkey_t key, onic_mkey_t ignore)
{
    const __m256i kb   = _mm256_set1_epi64x((long long)key.bits);
    const __m256i ki   = _mm256_set1_epi64x((long long)key.id);
    const __m256i qb   = _mm256_set1_epi64x((long long)ignore.bits);
    const __m256i qi   = _mm256_set1_epi64x((long long)ignore.id);
    const __m256i zero = _mm256_setzero_si256();

    for (unsigned i = 0; i < u->count; i += 4) {
        __m256i db = _mm256_xor_si256(_mm256_load_si256((const __m256i *)&u->key_bits[i]), kb);
        __m256i di = _mm256_xor_si256(_mm256_load_si256((const __m256i *)&u->key_id[i]), ki);
        __m256i mb = _mm256_or_si256(_mm256_load_si256((const __m256i *)&u->ign_bits[i]), qb);
        __m256i mi = _mm256_or_si256(_mm256_load_si256((const __m256i *)&u->ign_id[i]), qi);
        __m256i diff = _mm256_or_si256(_mm256_andnot_si256(mb, db), _mm256_andnot_si256(mi, di));
        unsigned hits = (unsigned)_mm256_movemask_pd(
            _mm256_castsi256_pd(_mm256_cmpeq_epi64(diff, zero)));

        if (hits != 0) {
            /* Lanes at or past count hold stale cells; a valid hit would
             * be a lower bit, so a stale lowest bit means no match. */
            unsigned at = i + (unsigned)__builtin_ctz(hits);
            return at < u->count ? at : u->count;
        }
    }
    return u->count;
}
#endif

static unsigned unit_scan(const onic_alpu_unit_t *u, onic_mkey_t key, onic_mkey_t ignore)
{
#if UNIT_HAVE_AVX2
    if (u->avx2)
        return unit_scan_avx2(u, key, ignore);
#endif
    return unit_scan_scalar(u, key, ignore);
}

/* Valid cells in the blocks up to the one holding `at` (all of them on a
 * miss): blocks after the first hit need not be looked at. */
static unsigned unit_compared(const onic_alpu_unit_t *u, unsigned at)
{
    unsigned end;

    if (at >= u->count)
        return u->count;
    end = (at / u->block + 1) * u->block;
    return end < u->count ? end : u->count;
}

/* Drop cell `at`; the younger cells shift up one so the order is kept. */
static void unit_delete(onic_alpu_unit_t *u, unsigned at)
{
    size_t bytes = (size_t)(u->count - at - 1) * sizeof(uint64_t);

    memmove(&u->key_bits[at], &u->key_bits[at + 1], bytes);
    memmove(&u->key_id[at],   &u->key_id[at + 1],   bytes);
    memmove(&u->ign_bits[at], &u->ign_bits[at + 1], bytes);
    memmove(&u->ign_id[at],   &u->ign_id[at + 1],   bytes);
    memmove(&u->tag[at],      &u->tag[at + 1],      bytes);
    u->count--;
}

/* Serve the request at the header FIFO's head. */
static void unit_match(onic_alpu_unit_t *u)
{
    const onic_alpu_hdr_t *h = &u->hdrs[u->hdr_ring.head & UNIT_FIFO_MASK];
    unsigned at = unit_scan(u, h->key, h->ignore);

    u->counters.compared += unit_compared(u, at);
    if (at == u->count) {
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
                u->count = 0;
                u->counters.resets++;
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
            unsigned at = u->count++;
            u->key_bits[at] = c->key.bits;
            u->key_id[at]   = c->key.id;
            u->ign_bits[at] = c->ignore.bits;
            u->ign_id[at]   = c->ignore.id;
            u->tag[at]      = c->tag;
            u->counters.inserts++;
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

const char *onic_alpu_unit_simd(const onic_alpu_unit_t *u)
{
    return u->avx2 ? "avx2" : "scalar";
}

void onic_alpu_unit_counters(const onic_alpu_unit_t *u, onic_alpu_unit_counters_t *counters_p)
{
    *counters_p = u->counters;
}
