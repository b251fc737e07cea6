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
 * Nothing read from the lane is trusted, and each field is checked once, as
 * loaded, before it is used; what fails a check breaks the lane, with the
 * reason (`bad`, ONIC_SHM_BAD_*) and the value, and the caller stops the
 * job (shm.c: fail-stop). The receiver checks the header's kind, lengths and
 * slot count, and that the word at its head is not a later lap's sequence
 * number (a sender that overran it, or a stray write: a gap is an error, not
 * a wait). The sender checks every consumed count it reads (never behind the
 * last one, never beyond what it sent) and that the slot it is about to write
 * does not already carry the sequence number it is about to stamp (someone
 * else wrote the lane: a replayed entry). onic_shm_tx_audit, run where a
 * process waits, finds a message of ours that was overwritten before the
 * receiver took it (its ready word no longer ours). */
#ifndef ONIC_XPORT_SHM_LANE_H
#define ONIC_XPORT_SHM_LANE_H

#include "xport/xport.h"

#include <string.h>

#define ONIC_SHM_SLOT 64

/* The most one lane message carries (a lane's ring of fewer slots: what it
 * holds but one); more goes in fragments, as a mid-size message. 8 KiB
 * rather than the 2 KiB other transports carry: a 4 or 8 KiB message is
 * one lane message, not three or five with a header and a check each
 * (measured against 2 KiB, alternated: streaming bandwidth +25 % at 4 KiB
 * and +35 % at 8 KiB, the 4 KiB message rate +30 %). */
#define ONIC_SHM_FRAME_MAX 8192u

/* The smallest payload read in place (onic_shm_rx_slots). Smaller ones --
 * among them every Portals large-operation header, whose callback may
 * start an RMA that waits for room -- are copied out: their slots never
 * stay held while a callback waits. */
#define ONIC_SHM_IN_PLACE_MIN 256u

/* The payload lines pushed to a waiting receiver's shared cache, at most
 * (onic_shm_tx_try_slots, ONIC_SHM_DEMOTE). */
#define ONIC_SHM_DEMOTE_LINES 16u

/* In shared memory: the counter and the key on their line, then the slots. */
typedef struct onic_shm_lane {
    uint64_t consumed;  /* written by the receiver (release), read by the sender */
    uint64_t key;       /* set by the receiver before the region is published */
    uint8_t  pad[ONIC_SHM_SLOT - 2 * sizeof(uint64_t)];
} onic_shm_lane_t;

/* The ready word of a message of `need` slots whose header slot has
 * sequence number seq. need < 256: a message is at most 1 + 8192 / 64. */
static inline uint64_t onic_shm_ready_word(uint64_t key, uint64_t seq, uint32_t need)
{
    return ((seq + 1) << 8 | need) ^ key;
}

static_assert(sizeof(onic_shm_lane_t) == ONIC_SHM_SLOT, "the lane header is one line");
static_assert(1 + ONIC_SHM_FRAME_MAX / ONIC_SHM_SLOT < 256, "a frame's slot count fits 8 bits");

/* Why a lane broke (shm.c says it in words). */
enum {
    ONIC_SHM_BAD_NONE = 0,
    ONIC_SHM_BAD_KIND,      /* value: the header's kind */
    ONIC_SHM_BAD_LEN,       /* value: the header's payload length */
    ONIC_SHM_BAD_USER_LEN,  /* value: the header's user header length */
    ONIC_SHM_BAD_SLOTS,     /* value: the slot count of the ready word */
    ONIC_SHM_BAD_SEQ,       /* value: the sequence number found at the head */
    ONIC_SHM_BAD_CREDIT,    /* value: the consumed count read */
    ONIC_SHM_BAD_REPLAY,    /* value: the ready word found in the slot to write */
    ONIC_SHM_BAD_LOST,      /* value: the ready word of our unread message */
    ONIC_SHM_BAD_OWN,       /* value: the kind of a malformed transport message */
    ONIC_SHM_BAD_MID,       /* value: the kind of a fragment out of place */
    ONIC_SHM_BAD_MID_LEN,   /* value: a mid-size message's or fragment's length */
    ONIC_SHM_BAD_MID_MEM,   /* value: the bytes of a mid-size message no memory was left for */
};

/* Mid-size messages: more than one lane message carries, at most the
 * receiver's mid_max. FIRST carries the caller's header and, as its 8-byte
 * payload, the message's length; NEXT fragments carry its bytes in order,
 * nothing else of this sender coming between (the lane is one sender's and
 * in order). The receiver copies each fragment's payload straight from the
 * ring into its reassembly buffer and delivers the whole message when the
 * last byte is in. Kinds far above any transport's own. */
#define ONIC_SHM_KIND_MID_FIRST 0x4d00u
#define ONIC_SHM_KIND_MID_NEXT  0x4d01u
#define ONIC_SHM_MID_PLACED     UINT32_MAX /* rx->mid_user_len of a placed message */

/* Sequence numbers ahead of the head by at most this are a gap, not stale
 * data: a random word (payload left from an earlier lap, xored with the
 * key) decodes to one of them with probability 2^-40. */
#define ONIC_SHM_GAP_MAX (1ull << 16)


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
    /* Push a message's payload lines to the shared cache when the receiver
     * had taken all before it (ONIC_SHM_DEMOTE; onic_shm_tx_try_slots). */
    uint32_t         demote;
    uint64_t         tail;     /* slots written, ever */
    uint64_t         credit;   /* the last consumed count read */
    uint64_t         key;      /* the lane's, read once at init */
    /* The receiver fences asymmetrically before it sleeps (shm.c): publish
     * with a plain release store instead of a seq_cst one. */
    int              release_only;
    unsigned         bad;      /* ONIC_SHM_BAD_*: the lane is broken, nothing more is sent */
    uint64_t         bad_value;
    uint64_t         demoted;  /* messages whose lines were pushed so (counted where
                                  the CPU makes the hint a no-op, too) */
} onic_shm_tx_t;

/* The receiver's private view of a lane. */
typedef struct onic_shm_rx {
    onic_shm_lane_t *lane;
    uint8_t         *slots;
    uint32_t         nslots;
    uint32_t         src;        /* the sender: the lane, never the wire, says who */
    uint64_t         head;       /* slots consumed, ever */
    uint64_t         published;  /* the consumed count last made visible */
    /* The first slot of a message a callback reads in place (UINT64_MAX:
     * none): what is published stops there until the callback returns. */
    uint64_t         hold;
    uint64_t         key;
    int              broken;     /* a malformed header was seen */
    unsigned         bad;        /* why: ONIC_SHM_BAD_* */
    uint64_t         bad_value;  /* and the value found */
    /* The mid-size message being put together (mid_total 0: none). */
    uint64_t         mid_total, mid_got;
    uint8_t         *mid_buf;    /* onic_malloc'd, mid_cap bytes; freed by onic_shm_rx_fini */
    size_t           mid_cap;
    /* (Two 32-bit fields side by side: 160 bytes in all, which a poll's
     * loop over lanes indexes in two instructions.) */
    uint32_t         mid_max;    /* the largest taken; 0: FIRST is malformed */
    uint32_t         mid_user_len; /* ONIC_SHM_MID_PLACED: placed at its FIRST */
    union {
        uint8_t      mid_user[ONIC_XPORT_USER_HDR]; /* FIRST's header, for the delivery */
        struct {
            uint8_t *dest;       /* where a placed message's bytes go */
            size_t   room;       /* and how many of them; the rest is dropped */
        } mid_place;
    };
} onic_shm_rx_t;
static_assert(sizeof(onic_shm_rx_t) == 160, "see mid_max");

void onic_shm_tx_init(onic_shm_tx_t *tx, onic_shm_lane_t *lane, uint32_t nslots);
void onic_shm_rx_init(onic_shm_rx_t *rx, onic_shm_lane_t *lane, uint32_t nslots, uint32_t src);
/* Frees the reassembly buffer. */
void onic_shm_rx_fini(onic_shm_rx_t *rx);

/* Break the lane, saying why (out of line: only failures come here). */
void onic_shm_tx_break(onic_shm_tx_t *tx, unsigned bad, uint64_t value);
void onic_shm_rx_break(onic_shm_rx_t *rx, unsigned bad, uint64_t value);

/* A consumed count read from the receiver: never behind the last one read,
 * never beyond what was sent. One compare on the path that re-reads it.
 * The inline checks on the one-slot path only refuse (no call, so the
 * send stays a leaf); onic_shm_tx_refused, on the slow path, says why. */
static inline int onic_shm_tx_credit_ok(const onic_shm_tx_t *tx, uint64_t consumed)
{
    return __builtin_expect(consumed - tx->credit <= tx->tail - tx->credit, 1);
}

/* After the one-slot path refused: the lane broken with the reason and
 * ONIC_ERR_IO, or ONIC_ERR_NO_RESOURCE if it merely had no room. */
onic_status_t onic_shm_tx_refused(onic_shm_tx_t *tx);

/* Where a sender waits (for room, or for anything): the consumed count read
 * again and checked, and the message the receiver waits at, if it has not
 * taken it, still ours (its ready word not overwritten). 0 and the lane
 * broken if not. */
int onic_shm_tx_audit(onic_shm_tx_t *tx);

/* Where a receiver waits: whether the word at its head is a later lap's
 * (a gap), breaking the lane if so. */
int onic_shm_rx_audit(onic_shm_rx_t *rx);

/* Slots a message takes: one when the payload fits in the header's user
 * bytes behind the caller's header (a small message is then one cache line
 * to move, not two), else the header plus one per 64 payload bytes. */
static inline uint32_t onic_shm_msg_slots(size_t user_len, size_t len)
{
    if (user_len + len <= ONIC_XPORT_USER_HDR)
        return 1u;
    return 1u + (uint32_t)((len + ONIC_SHM_SLOT - 1) / ONIC_SHM_SLOT);
}

/* Copy n <= ONIC_XPORT_USER_HDR bytes without a call: two or three moves
 * of a fixed size, overlapping where n is not a multiple of it, instead of
 * a memcpy whose length the compiler cannot know (tens of instructions for
 * the 8 to 48 bytes of a one-slot message). Touches only [0, n) of each. */
static inline void onic_shm_copy_small(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;

    if (n >= 16) {
        memcpy(d, s, 16);
        if (n > 32)
            memcpy(d + 16, s + 16, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 0) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

/* The ready word of the message at tx->tail, but for its slot count (xor
 * it in): also what the slot must not carry already. */
static inline uint64_t onic_shm_tx_stamp(const onic_shm_tx_t *tx)
{
    return onic_shm_ready_word(tx->key, tx->tail, 0);
}

/* Whether the header slot at tx->tail is free to write: it must not carry
 * the sequence number we are about to stamp, which only someone else can
 * have put there (a replayed or forged entry the receiver may already have
 * taken as ours). One load of the line we write next, and one compare. */
static inline int onic_shm_tx_slot_ok(const onic_xport_hdr_t *hdr, uint64_t stamp)
{
    return __builtin_expect((__atomic_load_n(&hdr->ready, __ATOMIC_RELAXED) ^ stamp) >= 256, 1);
}

/* Publish the message at tx->tail: its ready word last. One side of the
 * no-lost-wake-up handshake with a receiver going to sleep (shm.c): seq_cst,
 * unless the receiver's asymmetric fence orders this store for us. */
static inline void onic_shm_tx_publish(onic_shm_tx_t *tx, onic_xport_hdr_t *hdr, uint64_t stamp,
                                       uint32_t need)
{
    if (tx->release_only) {
        __atomic_store_n(&hdr->ready, stamp ^ need, __ATOMIC_RELEASE);
        /* The handshake needs the caller's later load of `sleeping` to stay
         * after this store in program order; the membarrier supplies the
         * rest. No instruction: it only stops the compiler. */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } else {
        __atomic_store_n(&hdr->ready, stamp ^ need, __ATOMIC_SEQ_CST);
    }
    tx->tail += need;
}

/* A message of more than one slot (onic_shm_tx_try's other half). */
onic_status_t onic_shm_tx_try_slots(onic_shm_tx_t *tx, unsigned kind, const void *user_hdr,
                                    size_t user_len, const void *payload, size_t len);

/* Whether a one-slot message fits now: the credit last read, else the
 * receiver's consumed count read again (and checked: on 0,
 * onic_shm_tx_refused says whether the lane is broken). */
static inline int onic_shm_tx_room1(onic_shm_tx_t *tx)
{
    uint64_t consumed;

    if (tx->tail - tx->credit < tx->nslots)
        return 1;
    consumed = __atomic_load_n(&tx->lane->consumed, __ATOMIC_ACQUIRE);
    if (!onic_shm_tx_credit_ok(tx, consumed))
        return 0;
    tx->credit = consumed;
    return tx->tail - tx->credit < tx->nslots;
}

/* Write a one-slot message (user_len + len <= ONIC_XPORT_USER_HDR) where
 * onic_shm_tx_room1 found room: header and payload into the line, then its
 * ready word. ONIC_ERR_IO, nothing written, where the slot already carries
 * this message's sequence number (onic_shm_tx_refused then breaks the
 * lane, saying so). */
static inline onic_status_t onic_shm_tx_put1(onic_shm_tx_t *tx, unsigned kind,
                                             const void *user_hdr, size_t user_len,
                                             const void *payload, size_t len)
{
    onic_xport_hdr_t *hdr =
        (onic_xport_hdr_t *)(tx->slots + (size_t)(tx->tail & (tx->nslots - 1)) * ONIC_SHM_SLOT);
    uint64_t stamp = onic_shm_tx_stamp(tx);

    if (!onic_shm_tx_slot_ok(hdr, stamp))
        return ONIC_ERR_IO;
    onic_shm_copy_small(hdr->user, user_hdr, user_len);
    onic_shm_copy_small(hdr->user + user_len, payload, len);
    hdr->len = (uint32_t)len;
    hdr->user_len = (uint16_t)user_len;
    hdr->kind = (uint16_t)kind;
    onic_shm_tx_publish(tx, hdr, stamp, 1);
    return ONIC_OK;
}

/* Put a message in the ring. ONIC_ERR_NO_RESOURCE when it does not fit now
 * (nothing written: poll your own lanes and try again); ONIC_ERR_IO, nothing
 * written, once the lane is broken (tx->bad says why). The caller checks
 * user_len <= ONIC_XPORT_USER_HDR and that the message fits the ring.
 * Inline: a one-slot message is a credit check, the header and payload
 * copied into the line, and its ready word. */
static inline onic_status_t onic_shm_tx_try(onic_shm_tx_t *tx, unsigned kind, const void *user_hdr,
                                            size_t user_len, const void *payload, size_t len)
{
    if (user_len + len > ONIC_XPORT_USER_HDR)
        return onic_shm_tx_try_slots(tx, kind, user_hdr, user_len, payload, len);
    if (tx->bad || !onic_shm_tx_room1(tx) ||
        onic_shm_tx_put1(tx, kind, user_hdr, user_len, payload, len) != ONIC_OK)
        return onic_shm_tx_refused(tx);
    return ONIC_OK;
}

/* Send a mid-size message (len above what one lane message carries) from
 * byte *off_p on: FIRST with the header and length first if *first_p (then
 * cleared), then NEXT fragments of up to frag payload bytes (frag at most
 * what one message carries), each written whole or not at all. On
 * ONIC_ERR_NO_RESOURCE (no room now) *off_p says how far it went, to go on
 * from there later; ONIC_ERR_IO: the lane is broken (tx->bad). */
onic_status_t onic_shm_tx_mid(onic_shm_tx_t *tx, const void *user_hdr, size_t user_len,
                              const void *payload, size_t len, size_t frag, int *first_p,
                              size_t *off_p);

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

/* Make the consumed count visible: the sender's credits, but for the
 * slots a callback still reads in place. */
static inline void onic_shm_rx_publish(onic_shm_rx_t *rx)
{
    uint64_t to = rx->head < rx->hold ? rx->head : rx->hold;

    __atomic_store_n(&rx->lane->consumed, to, __ATOMIC_RELEASE);
    rx->published = to;
}

/* Deliver up to max messages through cb. Header bytes are copied out of the
 * ring first; a payload of several slots is read in place where its slots
 * do not wrap around the ring's end (one copy the less: the callback's is
 * the only one), and copied out where they do. cb may send, and poll this
 * lane again: the slots of the messages before and after one read in place
 * go back to the sender meanwhile, its own when cb returns (the sender
 * never waits for room, so holding them cannot deadlock). Returns the
 * number delivered;
 * sets rx->broken (and stops) on a malformed header. A callback that
 * answers nonzero ends the poll after its message (older messages wait
 * elsewhere, which must go first). */
typedef int (*onic_shm_recv_cb_t)(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                                  size_t user_len, const void *payload, size_t len);

/* Copy a message of more than one slot out of the ring at rx->head (its
 * header fields as read once and checked by the caller). */
void onic_shm_rx_copy_slots(const onic_shm_rx_t *rx, uint8_t *payload, size_t len);

/* A header that failed the poll's one combined check: break the lane with
 * the field that failed (out of line, after the fact: the values are the
 * ones the check saw). */
void onic_shm_rx_malformed(onic_shm_rx_t *rx, uint64_t need, uint32_t len, uint32_t user_len,
                           uint32_t kind, size_t max_payload, unsigned max_kind);

/* The layer above may take a mid-size message at its FIRST and have its
 * NEXT fragments copied straight to where it goes (one copy the less):
 * place answers 1 with where its first *room bytes go (the rest is
 * dropped) or 0 (it comes whole through cb, as without a placer); placed
 * says the bytes are in and answers as cb does. Both get cb's cb_arg. */
typedef struct onic_shm_placer {
    int (*place)(void *cb_arg, uint32_t src, const void *user_hdr, size_t user_len, size_t len,
                 void **dest, size_t *room);
    int (*placed)(void *cb_arg, uint32_t src);
} onic_shm_placer_t;

/* A header of kind MID_FIRST or MID_NEXT at rx->head (its fields as read
 * once; the combined check sent it here): checked, its payload copied into
 * the reassembly buffer (or where placer->place said), the head moved on;
 * the whole message delivered through cb (as ONIC_XPORT_KIND_USER), or
 * ended by placer->placed, once its last fragment is in. Returns 1 if a
 * message was delivered (2 if cb then asked to stop), 0 if a fragment was
 * taken, -1 if the lane broke (rx->bad says why), -2 if a placed message's
 * fragment waits for a poll with a placer. Out of line: only mid-size
 * messages come here. */
int onic_shm_rx_mid(onic_shm_rx_t *rx, const onic_xport_hdr_t *hdr, uint64_t need, uint32_t len,
                    uint32_t user_len, uint32_t kind, size_t max_payload, onic_shm_recv_cb_t cb,
                    const onic_shm_placer_t *placer, void *cb_arg);

/* A message of several slots at rx->head (its fields read once and checked
 * by the caller, its header line in `line`): its payload passed in place
 * or copied out, the head moved on, cb called. Returns cb's answer. Out of
 * line, so that the one-slot path keeps its few registers and no frame
 * buffer on its stack; static, so that a constant cb is inlined here too. */
static __attribute__((noinline, unused)) int
onic_shm_rx_slots(onic_shm_rx_t *rx, const uint64_t *line, uint64_t need, uint32_t len,
                  uint32_t user_len, unsigned kind, onic_shm_recv_cb_t cb, void *cb_arg)
{
    uint64_t mask = rx->nslots - 1, head = rx->head, at = (head + 1) & mask;
    uint8_t payload[ONIC_SHM_FRAME_MAX];
    const uint8_t *data = payload;
    int held = 0, stop;

    if (len >= ONIC_SHM_IN_PLACE_MIN && at + (need - 1) <= mask + 1) {
        data = rx->slots + (size_t)at * ONIC_SHM_SLOT;
        if (rx->hold == UINT64_MAX) { /* else an outer callback holds from lower down */
            rx->hold = head;
            held = 1;
        }
    } else {
        onic_shm_rx_copy_slots(rx, payload, len);
    }
    rx->head = head + need;
    if (rx->head - rx->published >= (mask + 1) / 4)
        onic_shm_rx_publish(rx);
    stop = cb(cb_arg, rx->src, kind, line, user_len, data, len);
    if (held) {
        /* Its slots go back as they would have had they been copied. */
        rx->hold = UINT64_MAX;
        if (rx->head - rx->published >= (mask + 1) / 4)
            onic_shm_rx_publish(rx);
    }
    return stop;
}

/* kinds above max_kind are malformed (but the mid-size fragments'). Static, so that a constant
 * cb is inlined too: the receive path is one function up to the caller's
 * own callback. Not inlined into the caller: its loop over lanes, which
 * mostly finds them empty, then saves no registers for it. */
static __attribute__((noinline, unused)) unsigned
onic_shm_rx_poll(onic_shm_rx_t *rx, unsigned max, size_t max_payload, unsigned max_kind,
                 onic_shm_recv_cb_t cb, const onic_shm_placer_t *placer, void *cb_arg)
{
    /* The lane's geometry, read once: cb may touch rx (a callback's send
     * that waits for room polls this lane again), so only head, published
     * and broken are read back after it. */
    const uint8_t *slots = rx->slots;
    uint64_t mask = rx->nslots - 1, key = rx->key;
    unsigned delivered = 0;

    while (delivered < max && !rx->broken) {
        uint64_t head = rx->head;
        const onic_xport_hdr_t *hdr = (const onic_xport_hdr_t *)(slots + (size_t)(head & mask) *
                                                                          ONIC_SHM_SLOT);
        uint64_t word = __atomic_load_n(&hdr->ready, __ATOMIC_ACQUIRE) ^ key;
        uint64_t need = word & 0xff;
        /* Each field read once (the peer could change it between a check
         * and a use). The header is copied out of the ring; a payload read
         * in place is the callback's to copy once (the sender cannot write
         * its slots before they are published, and only a peer that breaks
         * the protocol would: it then changes its own message's bytes). */
        uint32_t len, user_len, kind;
        /* The line's user bytes whole (a fixed-size copy, no call): the
         * caller's header, and a one-slot message's payload behind it. */
        uint64_t line[ONIC_XPORT_USER_HDR / sizeof(uint64_t)];
        const uint8_t *user;

        if (word >> 8 != head + 1) {
            /* Not written yet: what is there is from an earlier lap --
             * unless it is a later one's, a gap (one compare). */
            if (__builtin_expect((word >> 8) - (head + 2) < ONIC_SHM_GAP_MAX, 0))
                onic_shm_rx_break(rx, ONIC_SHM_BAD_SEQ, (word >> 8) - 1);
            break;
        }
        len = __atomic_load_n(&hdr->len, __ATOMIC_RELAXED);
        user_len = __atomic_load_n(&hdr->user_len, __ATOMIC_RELAXED);
        kind = __atomic_load_n(&hdr->kind, __ATOMIC_RELAXED);
        if (kind > max_kind || len > max_payload || len > ONIC_SHM_FRAME_MAX ||
            user_len > ONIC_XPORT_USER_HDR || onic_shm_msg_slots(user_len, len) != need ||
            need > mask + 1) {
            int got;
            if (kind == ONIC_SHM_KIND_MID_FIRST || kind == ONIC_SHM_KIND_MID_NEXT) {
                if ((got = onic_shm_rx_mid(rx, hdr, need, len, user_len, kind, max_payload, cb,
                                           placer, cb_arg)) < 0)
                    break;
                delivered += got > 0;
                if (got > 1)
                    break;
                continue;
            }
            /* the caller reports it and stops the job */
            onic_shm_rx_malformed(rx, need, len, user_len, kind, max_payload, max_kind);
            break;
        }
        memcpy(line, hdr->user, sizeof(line));
        delivered++;
        if (need > 1) {
            if (onic_shm_rx_slots(rx, line, need, len, user_len, kind, cb, cb_arg))
                break;
            continue;
        }
        user = (const uint8_t *)line;
        rx->head = head += 1;
        if (head - rx->published >= (mask + 1) / 4)
            onic_shm_rx_publish(rx);
        if (cb(cb_arg, rx->src, kind, user, user_len, user + user_len, len))
            break;
    }
    if (rx->head != rx->published && delivered < max)
        onic_shm_rx_publish(rx); /* empty, or a callback stopped it: every credit back */
    return delivered;
}

#endif
