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

onic_status_t onic_shm_tx_try_slots(onic_shm_tx_t *tx, unsigned kind, const void *user_hdr,
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
    onic_shm_tx_publish(tx, hdr, need);
    return ONIC_OK;
}

void onic_shm_rx_copy_slots(const onic_shm_rx_t *rx, uint8_t *payload, size_t len)
{
    size_t off = (size_t)((rx->head + 1) & (rx->nslots - 1)) * ONIC_SHM_SLOT;
    size_t ring = (size_t)rx->nslots * ONIC_SHM_SLOT;

    if (len <= ring - off) {
        memcpy(payload, rx->slots + off, len);
    } else {
        memcpy(payload, rx->slots + off, ring - off);
        memcpy(payload + (ring - off), rx->slots, len - (ring - off));
    }
}
