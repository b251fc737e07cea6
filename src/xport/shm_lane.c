#include "xport/shm_lane.h"

#include <string.h>

void onic_shm_tx_init(onic_shm_tx_t *tx, onic_shm_lane_t *lane, uint32_t nslots)
{
    tx->lane   = lane;
    tx->slots  = (uint8_t *)(lane + 1);
    tx->nslots = nslots;
    tx->tail   = 0;
    tx->credit = 0;
    tx->key    = __atomic_load_n(&lane->key, __ATOMIC_RELAXED);
    tx->release_only = 0;
}

void onic_shm_rx_init(onic_shm_rx_t *rx, onic_shm_lane_t *lane, uint32_t nslots, uint32_t src)
{
    rx->lane      = lane;
    rx->slots     = (uint8_t *)(lane + 1);
    rx->nslots    = nslots;
    rx->src       = src;
    rx->head      = 0;
    rx->published = 0;
    rx->key       = __atomic_load_n(&lane->key, __ATOMIC_RELAXED);
    rx->broken    = 0;
}

static inline uint8_t *lane_slot(uint8_t *slots, uint32_t nslots, uint64_t at)
{
    return slots + (size_t)(at & (nslots - 1)) * ONIC_SHM_SLOT;
}

/* Copy len bytes between a buffer and the ring starting at slot `at`,
 * wrapping at the ring's end. */
static void lane_copy_in(uint8_t *slots, uint32_t nslots, uint64_t at, const void *src, size_t len)
{
    size_t off = (size_t)(at & (nslots - 1)) * ONIC_SHM_SLOT;
    size_t ring = (size_t)nslots * ONIC_SHM_SLOT;
    size_t first = len < ring - off ? len : ring - off;

    memcpy(slots + off, src, first);
    memcpy(slots, (const uint8_t *)src + first, len - first);
}

onic_status_t onic_shm_tx_try(onic_shm_tx_t *tx, unsigned kind, const void *user_hdr,
                              size_t user_len, const void *payload, size_t len)
{
    uint32_t need = onic_shm_msg_slots(user_len, len);
    onic_xport_hdr_t *hdr;

    if (tx->nslots - (tx->tail - tx->credit) < need) {
        tx->credit = __atomic_load_n(&tx->lane->consumed, __ATOMIC_ACQUIRE);
        if (tx->nslots - (tx->tail - tx->credit) < need)
            return ONIC_ERR_NO_RESOURCE;
    }
    hdr = (onic_xport_hdr_t *)lane_slot(tx->slots, tx->nslots, tx->tail);
    if (need == 1 && len > 0) {
        memcpy(hdr->user + user_len, payload, len);
    } else if (len > 0) {
        lane_copy_in(tx->slots, tx->nslots, tx->tail + 1, payload, len);
        /* Write the last payload slot's first word whole: a word left half
         * from a header two laps ago could, by chance, carry the sequence
         * number the receiver waits for there (see the lane header). */
        if (len % ONIC_SHM_SLOT != 0 && len % ONIC_SHM_SLOT < sizeof(uint64_t))
            memset(lane_slot(tx->slots, tx->nslots, tx->tail + need - 1) + len % ONIC_SHM_SLOT,
                   0, sizeof(uint64_t) - len % ONIC_SHM_SLOT);
    }
    hdr->len = (uint32_t)len;
    hdr->user_len = (uint16_t)user_len;
    hdr->kind = (uint16_t)kind;
    if (user_len > 0)
        memcpy(hdr->user, user_hdr, user_len);
    /* One side of the no-lost-wake-up handshake with a receiver going to
     * sleep (shm.c): seq_cst, unless the receiver's asymmetric fence orders
     * this store for us. */
    if (tx->release_only) {
        __atomic_store_n(&hdr->ready, onic_shm_ready_word(tx->key, tx->tail, need),
                         __ATOMIC_RELEASE);
        /* The handshake needs the caller's later load of `sleeping` to stay
         * after this store in program order; the membarrier supplies the
         * rest. No instruction: it only stops the compiler. */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } else {
        __atomic_store_n(&hdr->ready, onic_shm_ready_word(tx->key, tx->tail, need),
                         __ATOMIC_SEQ_CST);
    }
    tx->tail += need;
    return ONIC_OK;
}

static void lane_publish(onic_shm_rx_t *rx)
{
    __atomic_store_n(&rx->lane->consumed, rx->head, __ATOMIC_RELEASE);
    rx->published = rx->head;
}

unsigned onic_shm_rx_poll(onic_shm_rx_t *rx, unsigned max, size_t max_payload, unsigned max_kind,
                          onic_shm_recv_cb_t cb, void *cb_arg)
{
    unsigned delivered = 0;

    while (delivered < max && !rx->broken) {
        onic_xport_hdr_t *hdr = (onic_xport_hdr_t *)lane_slot(rx->slots, rx->nslots, rx->head);
        uint64_t word = __atomic_load_n(&hdr->ready, __ATOMIC_ACQUIRE) ^ rx->key;
        uint64_t need = word & 0xff;
        /* Each field read once (the peer could change it between a check
         * and a use), and the message copied out of the ring: its slots go
         * back before the callback runs. A callback may send, and a send
         * that waits for room at a peer which is itself waiting for room in
         * this lane needs these credits back to make progress: holding them
         * through the callback could deadlock two processes answering each
         * other from their callbacks. */
        uint32_t len, user_len, kind;
        uint8_t user[ONIC_XPORT_USER_HDR];
        uint8_t payload[ONIC_XPORT_MAX_PAYLOAD];
        size_t off, ring = (size_t)rx->nslots * ONIC_SHM_SLOT;

        if (word >> 8 != rx->head + 1)
            break;  /* not written yet: what is there is from an earlier lap */
        len = __atomic_load_n(&hdr->len, __ATOMIC_RELAXED);
        user_len = __atomic_load_n(&hdr->user_len, __ATOMIC_RELAXED);
        kind = __atomic_load_n(&hdr->kind, __ATOMIC_RELAXED);
        if (need == 0 || need > rx->nslots || len > max_payload || len > sizeof(payload) ||
            user_len > ONIC_XPORT_USER_HDR || onic_shm_msg_slots(user_len, len) != need ||
            kind > max_kind) {
            rx->broken = 1; /* the caller counts and reports it */
            break;
        }
        memcpy(user, hdr->user, user_len);
        off = (size_t)((rx->head + 1) & (rx->nslots - 1)) * ONIC_SHM_SLOT;
        if (need == 1) {
            memcpy(payload, hdr->user + user_len, len);
        } else if (len <= ring - off) {
            memcpy(payload, rx->slots + off, len);
        } else {
            memcpy(payload, rx->slots + off, ring - off);
            memcpy(payload + (ring - off), rx->slots, len - (ring - off));
        }
        rx->head += need;
        if (rx->head - rx->published >= rx->nslots / 4)
            lane_publish(rx);
        delivered++;
        cb(cb_arg, rx->src, kind, user, user_len, payload, len);
    }
    if (rx->head != rx->published && delivered < max)
        lane_publish(rx); /* found the lane empty: give every credit back */
    return delivered;
}
