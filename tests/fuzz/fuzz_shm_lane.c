/* libFuzzer target: arbitrary bytes as a shm lane another process wrote
 * (xport/shm_lane.h), read by the receiver's decoder and checked by the
 * sender's audit. Input: geometry:1 (slots 2^(1 + g % 6)), head:2 (the
 * receiver's position, also the sender's consumed count), tail:1 (how far
 * the sender is ahead, up to a ring), frame:1 (what one lane message
 * carries: 64 << f % 6 bytes), mid:1 (the mid-size limit: 0 none, else
 * the frame + 64 x mid, so that fragments of a message of a few frames fit
 * a small ring), then the ring's bytes (the rest zero), with key 0, so the
 * bytes are the decoded words themselves (any key is an xor away).
 * Whatever the bytes: nothing outside the lane is read, every message
 * handed up has lengths within bounds (one above a frame only when
 * reassembled from fragments, and within the mid-size limit), its slots
 * add up and the head moves by them, a message being reassembled never
 * holds more than its length, one placed (every other FIRST, in a buffer
 * of a room from none to all of it) writes nothing past its room, and a
 * lane that stops being read says why.
 * Built only with clang (-DONIC_FUZZ=ON);
 * scripts/fuzz.sh SECONDS lane runs it. */
#include "base/mem.h"
#include "xport/shm_lane.h"

#include <stdlib.h>
#include <string.h>

typedef struct seen {
    uint64_t n;
    size_t   frame, mid_max;
    /* Placement: every other FIRST is taken, its bytes going to a buffer of
     * exactly `room` bytes of its own (ASan sees a byte past it). */
    uint64_t firsts;
    uint8_t *dest;
    size_t   room;
    uint8_t  room_byte;
} seen_t;

static int place(void *arg, uint32_t src, const void *user_hdr, size_t user_len, size_t len,
                 void **dest, size_t *room)
{
    seen_t *s = arg;

    (void)user_hdr;
    if (src != 3 || user_len > ONIC_XPORT_USER_HDR || len <= s->frame || len > s->mid_max ||
        s->dest != NULL)
        abort(); /* one placed at a time, and only what comes in pieces */
    if (s->firsts++ % 2 == 0)
        return 0;
    s->room = len * s->room_byte / 255; /* 0 to the whole message */
    s->dest = onic_cache_alloc(1, s->room > 0 ? s->room : 1);
    if (s->dest == NULL)
        return 0;
    *dest = s->dest;
    *room = s->room;
    return 1;
}

static int placed(void *arg, uint32_t src)
{
    seen_t *s = arg;

    if (src != 3 || s->dest == NULL)
        abort();
    onic_cache_free(s->dest);
    s->dest = NULL;
    s->n++;
    return 0;
}

static const onic_shm_placer_t placer = {place, placed};

static int on_message(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                      size_t user_len, const void *payload, size_t len)
{
    seen_t *s = arg;
    /* Only a message put together from fragments is longer than a frame. */
    int reassembled = kind == ONIC_XPORT_KIND_USER && len > s->frame && len <= s->mid_max;
    volatile uint8_t sink = 0;

    if (src != 3 || kind > 2 || user_len > ONIC_XPORT_USER_HDR || (len > s->frame && !reassembled))
        abort();
    /* Touch every byte handed up: ASan sees any read past them. */
    for (size_t i = 0; i < user_len; i++)
        sink ^= ((const uint8_t *)user_hdr)[i];
    for (size_t i = 0; i < len; i++)
        sink ^= ((const uint8_t *)payload)[i];
    (void)sink;
    s->n++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t nslots;
    uint64_t head, ahead, before;
    size_t bytes;
    onic_shm_lane_t *lane;
    onic_shm_rx_t rx;
    onic_shm_tx_t tx;
    seen_t seen = {0};

    if (size < 6)
        return 0;
    nslots = 2u << (data[0] % 6);
    head = (uint64_t)data[1] | (uint64_t)data[2] << 8;
    ahead = data[3] % (nslots + 1);
    seen.frame = (size_t)64 << (data[4] % 6);
    seen.mid_max = data[5] == 0 ? 0 : seen.frame + (size_t)data[5] * 64;
    seen.room_byte = data[1];
    data += 6;
    size -= 6;
    bytes = onic_shm_lane_size(nslots);
    lane = onic_aligned_alloc(64, bytes);
    if (lane == NULL)
        return 0;
    memset(lane, 0, bytes);
    memcpy(lane + 1, data, size < bytes - sizeof(*lane) ? size : bytes - sizeof(*lane));
    lane->consumed = head;

    onic_shm_rx_init(&rx, lane, nslots, 3);
    rx.head = rx.published = head;
    rx.mid_max = seen.mid_max;
    before = rx.head;
    for (int round = 0; round < 4 && !rx.broken; round++) {
        uint64_t h = rx.head;
        unsigned n = onic_shm_rx_poll(&rx, 64, seen.frame, 2, on_message, &placer, &seen);
        /* The head moves by whole messages, each within the ring, and by
         * fragments, each within the ring and carrying a byte at least. */
        if (rx.head - h > ((uint64_t)n + 1) * nslots * (seen.mid_max + 2) ||
            (n > 0 && rx.head == h))
            abort();
        if (rx.mid_got > rx.mid_total ||
            (rx.mid_total != 0 && rx.mid_user_len != ONIC_SHM_MID_PLACED &&
             rx.mid_cap < rx.mid_total))
            abort();
        if (n == 0 && rx.head == h)
            break;
    }
    if (rx.broken && rx.bad == ONIC_SHM_BAD_NONE)
        abort(); /* broken, but not saying why */
    if (!rx.broken)
        (void)onic_shm_rx_audit(&rx);
    if (rx.broken && rx.bad == ONIC_SHM_BAD_NONE)
        abort();
    if (rx.head - before > 4ull * (64 + 1) * nslots * (seen.mid_max + 2))
        abort();
    onic_shm_rx_fini(&rx);
    onic_cache_free(seen.dest); /* a placed message the bytes never ended */

    /* The sender's view of the same bytes: the audit reads the slot at the
     * consumed count and checks it, never anything else. */
    onic_shm_tx_init(&tx, lane, nslots);
    tx.tail = head + ahead;
    tx.credit = head;
    if (!onic_shm_tx_audit(&tx) && tx.bad == ONIC_SHM_BAD_NONE)
        abort();
    onic_free(lane);
    return 0;
}
