/* The onload engine's rings: a single-producer, single-consumer ring of
 * fixed-size records in shared memory. Each application process has two
 * towards its engine: a command ring it writes and the engine reads, and an
 * event ring the engine writes and it reads (paper 001, section 3.1.1).
 *
 * Layout (offsets only, never pointers, so each side maps it anywhere):
 *   line 0  magic, version, record count (a power of two), record size
 *   line 1  tail: records written, ever (the producer's, release)
 *   line 2  head: records consumed, ever (the consumer's, release)
 *   line 3  the consumer's bell: a futex word and a sleeping flag
 *   then    nrecs records of rec_size bytes: {kind, len} then len bytes
 * The indexes sit on their own lines so producer and consumer do not
 * invalidate each other's line on every record.
 *
 * Neither side trusts the other: indexes that do not add up (more than the
 * ring written, head past tail) or a record longer than a record can be
 * break the ring for the side that sees them (ONIC_ERR_IO from then on),
 * and a record's length is read once, then checked, then used. A ring
 * given a name (onic_onload_ring_fail_stop: the engine's and the
 * processes' rings are) stops the job instead, as a corrupt shm lane does:
 * one line naming the ring, the field and its value, exit status
 * ONIC_EXIT_CORRUPT.
 *
 * A full ring is ONIC_ERR_NO_RESOURCE with nothing written: the caller
 * makes progress (drains its own event ring) and tries again, so nothing
 * is ever dropped. A consumer with nothing to do sleeps on its bell
 * (onic_onload_ring_sleep); a producer wakes it only when it said it sleeps. */
#ifndef ONIC_ONLOAD_RING_H
#define ONIC_ONLOAD_RING_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <onic/status.h>

#define ONIC_ONLOAD_RING_MAGIC    0x6f6e6c72u /* "onlr" */
#define ONIC_ONLOAD_RING_VERSION  1u
#define ONIC_ONLOAD_LINE          64
#define ONIC_ONLOAD_REC_MIN       64
#define ONIC_ONLOAD_REC_MAX       4096

typedef struct onic_onload_ring_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t nrecs;
    uint32_t rec_size;
    uint8_t  pad0[ONIC_ONLOAD_LINE - 4 * sizeof(uint32_t)];
    uint64_t tail;
    uint8_t  pad1[ONIC_ONLOAD_LINE - sizeof(uint64_t)];
    uint64_t head;
    uint8_t  pad2[ONIC_ONLOAD_LINE - sizeof(uint64_t)];
    uint32_t wake;      /* futex word: a producer bumps it to wake the consumer */
    uint32_t sleeping;  /* the consumer is (about to be) asleep */
    uint8_t  pad3[ONIC_ONLOAD_LINE - 2 * sizeof(uint32_t)];
} onic_onload_ring_hdr_t;

static_assert(sizeof(onic_onload_ring_hdr_t) == 4 * ONIC_ONLOAD_LINE,
              "the ring header is four cache lines");

/* The head of each record. */
typedef struct onic_onload_rec_hdr {
    uint32_t kind;
    uint32_t len;
} onic_onload_rec_hdr_t;

/* One side's private view of a ring. A view is used only as producer or
 * only as consumer. */
typedef struct onic_onload_ring {
    onic_onload_ring_hdr_t *hdr;
    uint8_t                *recs;
    uint32_t                nrecs;
    uint32_t                rec_size;
    uint64_t                next;    /* producer: tail; consumer: head (ours, exact) */
    uint64_t                other;   /* the other side's index, last read */
    int                     broken;
    /* Set by onic_onload_ring_fail_stop: what the ring is, for the one line
     * that stops the job when it breaks; empty: it only breaks. */
    char                    name[64];
} onic_onload_ring_t;

/* Bytes a ring of nrecs records of rec_size bytes takes; 0 if nrecs is not
 * a power of two from 2 to 2^20 or rec_size not a multiple of 64 from
 * ONIC_ONLOAD_REC_MIN to ONIC_ONLOAD_REC_MAX. */
size_t onic_onload_ring_bytes(uint32_t nrecs, uint32_t rec_size);

/* Write an empty ring's header into bytes of memory (its creator does this
 * before anyone else can see it). */
onic_status_t onic_onload_ring_format(void *mem, size_t bytes, uint32_t nrecs, uint32_t rec_size);

/* A view of a formatted ring, after checking its header against the
 * mapping: magic, version (a ring made by another onic is refused with a
 * message naming both versions) and sizes. */
onic_status_t onic_onload_ring_attach(void *mem, size_t bytes, onic_onload_ring_t *ring_p);

/* Largest payload a record of one slot carries. A longer record takes as
 * many slots as its header and payload fill, published at once. */
static inline size_t onic_onload_ring_payload_max(const onic_onload_ring_t *ring)
{
    return ring->rec_size - sizeof(onic_onload_rec_hdr_t);
}

/* Slots a record of len payload bytes takes. */
static inline uint64_t onic_onload_ring_slots(const onic_onload_ring_t *ring, size_t len)
{
    return (sizeof(onic_onload_rec_hdr_t) + len + ring->rec_size - 1) / ring->rec_size;
}

/* From now on a break of this view stops the process (onic_log_fail_stop,
 * ONIC_EXIT_CORRUPT) with one line naming it: name says which ring and who
 * sees it ("the command ring of rank 1, seen by the engine"). */
void onic_onload_ring_fail_stop(onic_onload_ring_t *ring, const char *name);

/* Largest payload of any record: the whole ring. */
static inline size_t onic_onload_ring_len_max(const onic_onload_ring_t *ring)
{
    return (size_t)ring->nrecs * ring->rec_size - sizeof(onic_onload_rec_hdr_t);
}

/* Producer: append one record (of one or more slots) and wake a sleeping
 * consumer. ONIC_ERR_NO_RESOURCE when the ring has not the room (nothing
 * written: progress and retry), ONIC_ERR_INVALID_PARAM when len exceeds
 * onic_onload_ring_len_max, ONIC_ERR_IO when the ring is broken. */
onic_status_t onic_onload_ring_push(onic_onload_ring_t *ring, uint32_t kind, const void *data,
                                    size_t len);

/* Consumer: take the oldest record, its payload copied into buf (cap
 * bytes). ONIC_ERR_NO_ELEM when empty, ONIC_ERR_IO when the ring is (or has
 * just been found) broken -- a record longer than cap breaks it too: both
 * sides agree on the longest record they exchange. */
onic_status_t onic_onload_ring_pop(onic_onload_ring_t *ring, uint32_t *kind_p, void *buf,
                                   size_t cap, size_t *len_p);

/* Slots waiting (consumer) or free (producer), from the shared indexes; 0
 * on a broken ring. */
uint32_t onic_onload_ring_count(onic_onload_ring_t *ring);
uint32_t onic_onload_ring_room(onic_onload_ring_t *ring);

/* Consumer: whether a record waits, by a seq_cst load of the tail: the
 * re-check of a consumer that sleeps on a bell other than the ring's own,
 * after storing its `sleeping` (seq_cst), as the onload engine does for all
 * its command rings at once. 0 on a broken ring. */
int onic_onload_ring_pending(onic_onload_ring_t *ring);

/* Consumer: sleep until a producer pushes or timeout_ns pass, unless a
 * record already waits. A spurious early return is allowed. */
void onic_onload_ring_sleep(onic_onload_ring_t *ring, uint64_t timeout_ns);

#endif
