/* One sender's lane in a receiver's shared-memory region (paper 004, III.B):
 * a ring of 64-byte slots that only that sender writes and only the receiver
 * reads, and a counter of the slots the receiver has freed, which is how
 * credits return. A message takes one header slot plus ceil(len / 64)
 * payload slots, or the header slot alone when the payload fits behind the
 * caller's header in it; the sender writes the payload, then the header,
 * then the header's first word with release semantics.
 *
 * That word, `ready`, is stamped with the header slot's sequence number (its
 * position counted from the lane's start, never wrapping) and the message's
 * length in slots, xored with a random per-lane key. The receiver polls only
 * the word at its head and takes it as a message only if it carries the
 * head's own sequence number: whatever a slot held on an earlier lap cannot
 * match, so the receiver never writes to the slots -- each slot line moves
 * once from sender to receiver and once back, instead of three times with
 * a zeroing store. That holds because every lap writes the first word of
 * every slot whole (a header's ready word, or a payload slot's first eight
 * bytes, padded when the payload ends inside them): a word mixing a few new
 * payload bytes with an old header's bytes could otherwise carry the right
 * sequence number by chance. The consumed count is published in batches (and whenever
 * the receiver finds the lane empty, so a waiting sender always gets its
 * credits back).
 *
 * Nothing read from the ring is trusted: a header whose sizes do not add up
 * breaks the lane (the receiver stops reading it) instead of being followed. */
#ifndef ONIC_XPORT_SHM_LANE_H
#define ONIC_XPORT_SHM_LANE_H

#include "xport/xport.h"

#define ONIC_SHM_SLOT 64

/* In shared memory: the counter and the key on their line, then the slots. */
typedef struct onic_shm_lane {
    uint64_t consumed;  /* written by the receiver (release), read by the sender */
    uint64_t key;       /* set by the receiver before the region is published */
    uint8_t  pad[ONIC_SHM_SLOT - 2 * sizeof(uint64_t)];
} onic_shm_lane_t;

/* The ready word of a message of `need` slots whose header slot has
 * sequence number seq. need < 256: a message is at most 1 + 2048 / 64. */
static inline uint64_t onic_shm_ready_word(uint64_t key, uint64_t seq, uint32_t need)
{
    return ((seq + 1) << 8 | need) ^ key;
}

static_assert(sizeof(onic_shm_lane_t) == ONIC_SHM_SLOT, "the lane header is one line");

/* Bytes of one lane with nslots slots. */
static inline size_t onic_shm_lane_size(uint32_t nslots)
{
    return sizeof(onic_shm_lane_t) + (size_t)nslots * ONIC_SHM_SLOT;
}

/* The sender's private view of a lane. */
typedef struct onic_shm_tx {
    onic_shm_lane_t *lane;
    uint8_t         *slots;
    uint32_t         nslots;   /* a power of two */
    uint64_t         tail;     /* slots written, ever */
    uint64_t         credit;   /* the last consumed count read */
    uint64_t         key;      /* the lane's, read once at init */
    /* The receiver fences asymmetrically before it sleeps (shm.c): publish
     * with a plain release store instead of a seq_cst one. */
    int              release_only;
} onic_shm_tx_t;

/* The receiver's private view of a lane. */
typedef struct onic_shm_rx {
    onic_shm_lane_t *lane;
    uint8_t         *slots;
    uint32_t         nslots;
    uint32_t         src;        /* the sender: the lane, never the wire, says who */
    uint64_t         head;       /* slots consumed, ever */
    uint64_t         published;  /* the consumed count last made visible */
    uint64_t         key;
    int              broken;     /* a malformed header was seen */
} onic_shm_rx_t;

void onic_shm_tx_init(onic_shm_tx_t *tx, onic_shm_lane_t *lane, uint32_t nslots);
void onic_shm_rx_init(onic_shm_rx_t *rx, onic_shm_lane_t *lane, uint32_t nslots, uint32_t src);

/* Slots a message takes: one when the payload fits in the header's user
 * bytes behind the caller's header (a small message is then one cache line
 * to move, not two), else the header plus one per 64 payload bytes. */
static inline uint32_t onic_shm_msg_slots(size_t user_len, size_t len)
{
    if (user_len + len <= ONIC_XPORT_USER_HDR)
        return 1u;
    return 1u + (uint32_t)((len + ONIC_SHM_SLOT - 1) / ONIC_SHM_SLOT);
}

/* Put a message in the ring. ONIC_ERR_NO_RESOURCE when it does not fit now
 * (nothing written: poll your own lanes and try again). The caller checks
 * user_len <= ONIC_XPORT_USER_HDR and that the message fits the ring. */
onic_status_t onic_shm_tx_try(onic_shm_tx_t *tx, unsigned kind, const void *user_hdr,
                              size_t user_len, const void *payload, size_t len);

/* Whether a message waits at the head of the lane (acquire: for polling). */
static inline int onic_shm_rx_ready(const onic_shm_rx_t *rx)
{
    const uint64_t *first = (const uint64_t *)(rx->slots + (size_t)(rx->head & (rx->nslots - 1)) *
                                                             ONIC_SHM_SLOT);
    return ((__atomic_load_n(first, __ATOMIC_ACQUIRE) ^ rx->key) >> 8) == rx->head + 1;
}

/* The same, seq_cst: the re-check of a receiver about to sleep (see shm.c's
 * shm_wake). */
static inline int onic_shm_rx_pending(const onic_shm_rx_t *rx)
{
    const uint64_t *first = (const uint64_t *)(rx->slots + (size_t)(rx->head & (rx->nslots - 1)) *
                                                             ONIC_SHM_SLOT);
    return ((__atomic_load_n(first, __ATOMIC_SEQ_CST) ^ rx->key) >> 8) == rx->head + 1;
}

/* Deliver up to max messages through cb, each copied out of the ring first
 * (so cb may send, and poll this lane again, and its slots are free for
 * the sender meanwhile). Returns the number delivered;
 * sets rx->broken (and stops) on a malformed header. */
typedef void (*onic_shm_recv_cb_t)(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                                   size_t user_len, const void *payload, size_t len);

/* kinds above max_kind are malformed. */
unsigned onic_shm_rx_poll(onic_shm_rx_t *rx, unsigned max, size_t max_payload, unsigned max_kind,
                          onic_shm_recv_cb_t cb, void *cb_arg);

#endif
