#include "xport/shm_lane.h"
#include "base/copy.h"
#include "base/cpu.h"
#include "base/mem.h"

#include <string.h>

static inline uint8_t *lane_slot(uint8_t *slots, uint32_t nslots, uint64_t at)
{
    return slots + (size_t)(at & (nslots - 1)) * ONIC_SHM_SLOT;
}

void onic_shm_tx_init(onic_shm_tx_t *tx, onic_shm_lane_t *lane, uint32_t nslots)
{
    tx->lane   = lane;
    tx->slots  = (uint8_t *)(lane + 1);
    tx->nslots = nslots;
    tx->tail   = 0;
    tx->credit = 0;
    tx->key    = __atomic_load_n(&lane->key, __ATOMIC_RELAXED);
    tx->demote = 0;
    tx->release_only = 0;
    tx->bad    = ONIC_SHM_BAD_NONE;
    tx->bad_value = 0;
    tx->demoted = 0;
}

void onic_shm_rx_init(onic_shm_rx_t *rx, onic_shm_lane_t *lane, uint32_t nslots, uint32_t src)
{
    rx->lane      = lane;
    rx->slots     = (uint8_t *)(lane + 1);
    rx->nslots    = nslots;
    rx->src       = src;
    rx->head      = 0;
    rx->published = 0;
    rx->hold      = UINT64_MAX;
    rx->key       = __atomic_load_n(&lane->key, __ATOMIC_RELAXED);
    rx->broken    = 0;
    rx->bad       = ONIC_SHM_BAD_NONE;
    rx->bad_value = 0;
    rx->mid_max   = 0;
    rx->mid_total = rx->mid_got = 0;
    rx->mid_buf   = NULL;
    rx->mid_cap   = 0;
    rx->mid_user_len = 0;
}

void onic_shm_rx_fini(onic_shm_rx_t *rx)
{
    onic_free(rx->mid_buf);
    rx->mid_buf = NULL;
    rx->mid_cap = 0;
}

__attribute__((cold, noinline)) void onic_shm_tx_break(onic_shm_tx_t *tx, unsigned bad,
                                                       uint64_t value)
{
    if (tx->bad == ONIC_SHM_BAD_NONE) { /* the first reason stays */
        tx->bad = bad;
        tx->bad_value = value;
    }
}

__attribute__((cold, noinline)) void onic_shm_rx_break(onic_shm_rx_t *rx, unsigned bad,
                                                       uint64_t value)
{
    if (!rx->broken) {
        rx->bad = bad;
        rx->bad_value = value;
    }
    rx->broken = 1;
}

__attribute__((cold, noinline)) void onic_shm_rx_malformed(onic_shm_rx_t *rx, uint64_t need,
                                                           uint32_t len, uint32_t user_len,
                                                           uint32_t kind, size_t max_payload,
                                                           unsigned max_kind)
{
    if (kind > max_kind)
        onic_shm_rx_break(rx, ONIC_SHM_BAD_KIND, kind);
    else if (len > max_payload || len > ONIC_SHM_FRAME_MAX)
        onic_shm_rx_break(rx, ONIC_SHM_BAD_LEN, len);
    else if (user_len > ONIC_XPORT_USER_HDR)
        onic_shm_rx_break(rx, ONIC_SHM_BAD_USER_LEN, user_len);
    else
        onic_shm_rx_break(rx, ONIC_SHM_BAD_SLOTS, need);
}

int onic_shm_tx_audit(onic_shm_tx_t *tx)
{
    uint64_t consumed, word;

    if (tx->bad)
        return 0;
    consumed = __atomic_load_n(&tx->lane->consumed, __ATOMIC_ACQUIRE);
    if (!onic_shm_tx_credit_ok(tx, consumed)) {
        onic_shm_tx_break(tx, ONIC_SHM_BAD_CREDIT, consumed);
        return 0;
    }
    tx->credit = consumed;
    if (consumed == tx->tail)
        return 1; /* it has taken everything */
    /* The receiver waits at `consumed` (it publishes its head whenever it
     * finds the lane empty), a header slot we wrote and cannot have
     * written again since (no credit for it): it must carry our stamp. */
    word = __atomic_load_n((const uint64_t *)(tx->slots + (size_t)(consumed & (tx->nslots - 1)) *
                                                             ONIC_SHM_SLOT),
                           __ATOMIC_RELAXED) ^ tx->key;
    /* Only the sequence number: a word that still carries it is one the
     * receiver will take and check itself (naming a bad slot count). */
    if (word >> 8 != consumed + 1) {
        onic_shm_tx_break(tx, ONIC_SHM_BAD_LOST, word ^ tx->key);
        return 0;
    }
    return 1;
}

onic_status_t onic_shm_tx_refused(onic_shm_tx_t *tx)
{
    uint64_t consumed, word;

    if (tx->bad)
        return ONIC_ERR_IO;
    /* The replay first: the receiver that took a forged entry may also
     * have returned a credit for it, which is the consequence, not the
     * cause. */
    word = __atomic_load_n((const uint64_t *)lane_slot(tx->slots, tx->nslots, tx->tail),
                           __ATOMIC_RELAXED);
    if (!((word ^ onic_shm_tx_stamp(tx)) >= 256)) {
        onic_shm_tx_break(tx, ONIC_SHM_BAD_REPLAY, word);
        return ONIC_ERR_IO;
    }
    consumed = __atomic_load_n(&tx->lane->consumed, __ATOMIC_ACQUIRE);
    if (!onic_shm_tx_credit_ok(tx, consumed)) {
        onic_shm_tx_break(tx, ONIC_SHM_BAD_CREDIT, consumed);
        return ONIC_ERR_IO;
    }
    return ONIC_ERR_NO_RESOURCE;
}

int onic_shm_rx_audit(onic_shm_rx_t *rx)
{
    uint64_t word;

    if (rx->broken)
        return 0;
    word = __atomic_load_n((const uint64_t *)(rx->slots + (size_t)(rx->head & (rx->nslots - 1)) *
                                                             ONIC_SHM_SLOT),
                           __ATOMIC_ACQUIRE) ^ rx->key;
    if ((word >> 8) - (rx->head + 2) < ONIC_SHM_GAP_MAX) {
        onic_shm_rx_break(rx, ONIC_SHM_BAD_SEQ, (word >> 8) - 1);
        return 0;
    }
    return 1;
}


/* Copy len bytes between a buffer and the ring starting at slot `at`,
 * wrapping at the ring's end. */
static void lane_copy_in(uint8_t *slots, uint32_t nslots, uint64_t at, const void *src, size_t len)
{
    size_t off = (size_t)(at & (nslots - 1)) * ONIC_SHM_SLOT;
    size_t ring = (size_t)nslots * ONIC_SHM_SLOT;
    size_t first = len < ring - off ? len : ring - off;

    onic_copy(slots + off, src, first);
    onic_copy(slots, (const uint8_t *)src + first, len - first);
}

onic_status_t onic_shm_tx_try_slots(onic_shm_tx_t *tx, unsigned kind, const void *user_hdr,
                                    size_t user_len, const void *payload, size_t len)
{
    uint32_t need = onic_shm_msg_slots(user_len, len);
    onic_xport_hdr_t *hdr;
    uint64_t stamp, seen;

    if (tx->bad)
        return ONIC_ERR_IO;
    if (tx->nslots - (tx->tail - tx->credit) < need) {
        uint64_t consumed = __atomic_load_n(&tx->lane->consumed, __ATOMIC_ACQUIRE);
        if (!onic_shm_tx_credit_ok(tx, consumed)) {
            onic_shm_tx_break(tx, ONIC_SHM_BAD_CREDIT, consumed);
            return ONIC_ERR_IO;
        }
        tx->credit = consumed;
        if (tx->nslots - (tx->tail - tx->credit) < need)
            return ONIC_ERR_NO_RESOURCE;
    }
    hdr = (onic_xport_hdr_t *)lane_slot(tx->slots, tx->nslots, tx->tail);
    stamp = onic_shm_tx_stamp(tx);
    if (!onic_shm_tx_slot_ok(hdr, stamp)) {
        onic_shm_tx_break(tx, ONIC_SHM_BAD_REPLAY, __atomic_load_n(&hdr->ready, __ATOMIC_RELAXED));
        return ONIC_ERR_IO;
    }
    /* Whether the receiver had taken everything before this message: then
     * it likely waits for it. Read before the copy so that the load's
     * miss overlaps it, and only where it decides something (the line is
     * the receiver's); only compared, never trusted further. */
    seen = tx->demote && need > 1 ? __atomic_load_n(&tx->lane->consumed, __ATOMIC_RELAXED)
                                  : UINT64_MAX;
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
    onic_shm_tx_publish(tx, hdr, stamp, need);
    /* A waiting receiver reads the payload from the shared cache sooner
     * than from this core's (measured: 15 % off the latency from 256 B to
     * 4 KiB). Its first lines are what it waits on: pushing them alone
     * measured the same as pushing all, and each costs this core about
     * 9 ns. Not behind a busy receiver: a stream gains nothing. */
    if (seen == tx->tail - need) {
        for (uint32_t i = 1; i < need && i <= ONIC_SHM_DEMOTE_LINES; i++)
            onic_cpu_demote(lane_slot(tx->slots, tx->nslots, tx->tail - need + i));
        tx->demoted++;
    }
    return ONIC_OK;
}

void onic_shm_rx_copy_slots(const onic_shm_rx_t *rx, uint8_t *payload, size_t len)
{
    size_t off = (size_t)((rx->head + 1) & (rx->nslots - 1)) * ONIC_SHM_SLOT;
    size_t ring = (size_t)rx->nslots * ONIC_SHM_SLOT;

    if (len <= ring - off) {
        onic_copy(payload, rx->slots + off, len);
    } else {
        onic_copy(payload, rx->slots + off, ring - off);
        onic_copy(payload + (ring - off), rx->slots, len - (ring - off));
    }
}

/* The payload of the message at rx->head, of `need` slots, copied out:
 * behind the header in its own line, or in the slots after it. */
static void mid_copy_out(const onic_shm_rx_t *rx, const onic_xport_hdr_t *hdr, uint64_t need,
                         uint32_t user_len, uint8_t *dst, size_t len)
{
    if (need == 1)
        memcpy(dst, hdr->user + user_len, len);
    else
        onic_shm_rx_copy_slots(rx, dst, len);
}

/* A FIRST that the layer above takes now (placer->place): its fragments
 * go straight to rx->mid_place. 1 if taken. */
static int mid_place(onic_shm_rx_t *rx, const onic_xport_hdr_t *hdr, uint32_t user_len,
                     uint64_t total, const onic_shm_placer_t *placer, void *cb_arg)
{
    uint8_t user[ONIC_XPORT_USER_HDR];
    void *dest = NULL;
    size_t room = 0;

    memcpy(user, hdr->user, user_len); /* read once, as every header */
    if (!placer->place(cb_arg, rx->src, user, user_len, (size_t)total, &dest, &room))
        return 0;
    rx->mid_place.dest = dest;
    rx->mid_place.room = room < total ? room : (size_t)total;
    rx->mid_user_len = ONIC_SHM_MID_PLACED;
    return 1;
}

/* A NEXT fragment of a placed message: what falls within its room. */
static void mid_place_copy(const onic_shm_rx_t *rx, const onic_xport_hdr_t *hdr, uint64_t need,
                           size_t len)
{
    size_t at = (size_t)rx->mid_got, room = rx->mid_place.room;

    if (at < room)
        mid_copy_out(rx, hdr, need, 0, rx->mid_place.dest + at, len < room - at ? len : room - at);
}

__attribute__((cold, noinline)) int onic_shm_rx_mid(onic_shm_rx_t *rx, const onic_xport_hdr_t *hdr,
                                                    uint64_t need, uint32_t len, uint32_t user_len,
                                                    uint32_t kind, size_t max_payload,
                                                    onic_shm_recv_cb_t cb,
                                                    const onic_shm_placer_t *placer, void *cb_arg)
{
    uint64_t mask = rx->nslots - 1;
    int stop = 0;

    /* The lengths first, as for any message: the slot count is what they
     * take, within the ring and the payload limit. */
    if (len > max_payload || len > ONIC_SHM_FRAME_MAX || user_len > ONIC_XPORT_USER_HDR ||
        onic_shm_msg_slots(user_len, len) != need || need > mask + 1) {
        onic_shm_rx_malformed(rx, need, len, user_len, 0, max_payload, 0);
        return -1;
    }
    if (kind == ONIC_SHM_KIND_MID_FIRST) {
        uint64_t total;
        if (rx->mid_total != 0) { /* the last one is not complete */
            onic_shm_rx_break(rx, ONIC_SHM_BAD_MID, kind);
            return -1;
        }
        if (len != sizeof(total)) {
            onic_shm_rx_break(rx, ONIC_SHM_BAD_MID_LEN, len);
            return -1;
        }
        mid_copy_out(rx, hdr, need, user_len, (uint8_t *)&total, sizeof(total));
        /* Only what one lane message cannot carry comes in pieces. */
        if (total <= max_payload || total > rx->mid_max) {
            onic_shm_rx_break(rx, ONIC_SHM_BAD_MID_LEN, total);
            return -1;
        }
        if (placer == NULL || !mid_place(rx, hdr, user_len, total, placer, cb_arg)) {
            if (rx->mid_cap < total) {
                uint8_t *buf = onic_malloc((size_t)total);
                if (buf == NULL) {
                    onic_shm_rx_break(rx, ONIC_SHM_BAD_MID_MEM, total);
                    return -1;
                }
                onic_free(rx->mid_buf);
                rx->mid_buf = buf;
                rx->mid_cap = (size_t)total;
            }
            memcpy(rx->mid_user, hdr->user, user_len);
            rx->mid_user_len = user_len;
        }
        rx->mid_total = total;
        rx->mid_got = 0;
    } else {
        if (rx->mid_total == 0 || user_len != 0) {
            onic_shm_rx_break(rx, ONIC_SHM_BAD_MID, kind);
            return -1;
        }
        /* A placed message moves on only in a poll that may end it: one
         * that sets messages aside (no placer) leaves it, and what is
         * behind it, in the ring. */
        if (rx->mid_user_len == ONIC_SHM_MID_PLACED && placer == NULL)
            return -2;
        if (len == 0 || len > rx->mid_total - rx->mid_got) {
            onic_shm_rx_break(rx, ONIC_SHM_BAD_MID_LEN, len);
            return -1;
        }
        if (rx->mid_user_len == ONIC_SHM_MID_PLACED)
            mid_place_copy(rx, hdr, need, len);
        else
            mid_copy_out(rx, hdr, need, 0, rx->mid_buf + rx->mid_got, len);
        rx->mid_got += len;
    }
    rx->head += need;
    if (rx->head - rx->published >= (mask + 1) / 4)
        onic_shm_rx_publish(rx);
    if (rx->mid_total == 0 || rx->mid_got < rx->mid_total)
        return 0;
    if (rx->mid_user_len == ONIC_SHM_MID_PLACED) {
        /* In place: the layer above ends it (the slots are free already). */
        rx->mid_total = rx->mid_got = 0;
        rx->mid_user_len = 0;
        stop = placer->placed(cb_arg, rx->src);
    } else {
        /* Whole: hand it up from a buffer the callback owns meanwhile. A
         * callback that polls this lane again and meets another mid-size
         * message gets a buffer of its own; ours is kept for the next. */
        uint8_t user[ONIC_XPORT_USER_HDR];
        uint8_t *buf = rx->mid_buf;
        size_t cap = rx->mid_cap, total = (size_t)rx->mid_total;
        uint32_t ulen = rx->mid_user_len;

        memcpy(user, rx->mid_user, ulen);
        rx->mid_buf = NULL;
        rx->mid_cap = 0;
        rx->mid_total = rx->mid_got = 0;
        stop = cb(cb_arg, rx->src, ONIC_XPORT_KIND_USER, user, ulen, buf, total);
        if (rx->mid_buf == NULL) {
            rx->mid_buf = buf;
            rx->mid_cap = cap;
        } else {
            onic_free(buf);
        }
    }
    return stop ? 2 : 1;
}

onic_status_t onic_shm_tx_mid(onic_shm_tx_t *tx, const void *user_hdr, size_t user_len,
                              const void *payload, size_t len, size_t frag, int *first_p,
                              size_t *off_p)
{
    const uint8_t *data = payload;
    size_t off = *off_p;
    onic_status_t status;

    if (*first_p) {
        uint64_t total = len;
        /* try_slots, not the inline try: the one-slot writer stays inlined
         * where the hot path uses it (a third caller made GCC keep it out of
         * line, 19 instructions more per 8-byte send). */
        status = onic_shm_tx_try_slots(tx, ONIC_SHM_KIND_MID_FIRST, user_hdr, user_len, &total,
                                       sizeof(total));
        if (status != ONIC_OK)
            return status;
        *first_p = 0;
    }
    while (off < len) {
        size_t n = len - off < frag ? len - off : frag;
        status = onic_shm_tx_try_slots(tx, ONIC_SHM_KIND_MID_NEXT, NULL, 0, data + off, n);
        if (status != ONIC_OK) {
            *off_p = off;
            return status;
        }
        off += n;
    }
    *off_p = off;
    return ONIC_OK;
}
