/* The shared-memory lane (xport/shm_lane.c) in its two-thread form: a
 * producer thread and a consumer thread on one lane in ordinary memory,
 * every message checked for order and content, with rings down to 2 slots
 * so the credit path runs constantly. Under ThreadSanitizer (make test
 * SANITIZE=thread, i.e. -DONIC_SANITIZE=thread) this also checks the lane's
 * memory ordering. Then a
 * malformed header: the lane is marked broken, nothing is delivered. */
#include "check.h"
#include "base/mem.h"
#include "xport/shm_lane.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

typedef struct lane_test {
    onic_shm_lane_t *lane;
    uint32_t         nslots;
    uint64_t         count;
    size_t           max_len;
    uint32_t         demote;   /* the producer's tx.demote */
    /* consumer side */
    uint64_t         next_seq;
    uint64_t         bad;
} lane_test_t;

static size_t msg_len(uint64_t seq, size_t max_len)
{
    return (size_t)((seq * 2654435761u) % (max_len + 1));
}

static uint8_t msg_byte(uint64_t seq, size_t i)
{
    return (uint8_t)(seq * 31 + i);
}

/* A zeroed lane of nslots slots with a random-looking key (as shm.c gives
 * every lane); NULL without memory (REQUIRE says so). */
static onic_shm_lane_t *lane_new(uint32_t nslots)
{
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));

    REQUIRE(lane != NULL);
    if (lane != NULL) {
        memset(lane, 0, onic_shm_lane_size(nslots));
        lane->key = 0x9e3779b97f4a7c15ull;
    }
    return lane;
}

static void *producer(void *arg)
{
    lane_test_t *t = arg;
    onic_shm_tx_t tx;
    uint8_t payload[2048];

    onic_shm_tx_init(&tx, t->lane, t->nslots);
    tx.demote = t->demote;
    for (uint64_t seq = 0; seq < t->count; seq++) {
        size_t len = msg_len(seq, t->max_len);
        for (size_t i = 0; i < len; i++)
            payload[i] = msg_byte(seq, i);
        while (onic_shm_tx_try(&tx, (unsigned)(seq % 3), &seq, sizeof(seq), payload, len) == ONIC_ERR_NO_RESOURCE)
            sched_yield();
    }
    return NULL;
}

static int on_message(void *arg, uint32_t src, unsigned kind, const void *user_hdr, size_t user_len,
                      const void *payload, size_t len)
{
    lane_test_t *t = arg;
    uint64_t seq;
    const uint8_t *p = payload;

    if (src != 7 || user_len != sizeof(seq)) {
        t->bad++;
        return 0;
    }
    memcpy(&seq, user_hdr, sizeof(seq));
    if (kind != seq % 3)
        t->bad++;
    if (seq != t->next_seq || len != msg_len(seq, t->max_len))
        t->bad++;
    for (size_t i = 0; i < len; i++)
        if (p[i] != msg_byte(seq, i)) {
            t->bad++;
            break;
        }
    t->next_seq = seq + 1;
    return 0;
}

static void run_pair(uint32_t nslots, uint64_t count, size_t max_len, uint32_t demote)
{
    lane_test_t t = {0};
    onic_shm_rx_t rx;
    pthread_t th;

    t.lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    CHECK(t.lane != NULL);
    if (t.lane == NULL)
        return;
    memset(t.lane, 0, onic_shm_lane_size(nslots));
    /* A random key, as shm.c gives every lane: with key 0 a payload's first
     * word (bytes counting up from a small number) would read as a near
     * sequence number, which the receiver takes for a gap. */
    t.lane->key = 0x9e3779b97f4a7c15ull;
    t.nslots = nslots;
    t.count = count;
    t.max_len = max_len;
    t.demote = demote;
    onic_shm_rx_init(&rx, t.lane, nslots, 7);
    CHECK(pthread_create(&th, NULL, producer, &t) == 0);
    while (t.next_seq < count && !rx.broken)
        if (onic_shm_rx_poll(&rx, 16, max_len, 2, on_message, NULL, &t) == 0)
            sched_yield();
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(!rx.broken);
    CHECK_EQ(t.next_seq, count);
    CHECK_EQ(t.bad, 0);
    printf("lane of %u slots: %llu messages of up to %zu bytes in order\n", nslots,
           (unsigned long long)count, max_len);
    onic_free(t.lane);
}

static void test_malformed(void)
{
    uint32_t nslots = 8;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    onic_xport_hdr_t *hdr = (onic_xport_hdr_t *)(lane + 1);
    onic_shm_rx_t rx;
    lane_test_t t = {0};
    const size_t max_payload = 64;

    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr->ready = onic_shm_ready_word(0, 0, 3);  /* claims 3 slots... */
    hdr->len = 1000;    /* ...but a payload that needs 17 */
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 0);
    CHECK(rx.broken);
    CHECK_EQ(rx.head, 0);

    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr->ready = onic_shm_ready_word(0, 0, 9);  /* more slots than the ring has */
    hdr->len = 0;
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 0);
    CHECK(rx.broken);

    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr->ready = onic_shm_ready_word(0, 0, 1);
    hdr->user_len = 49; /* over the user header */
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 0);
    CHECK(rx.broken);

    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr->ready = onic_shm_ready_word(0, 0, 1);
    hdr->kind = 3; /* a kind this receiver does not know */
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 0);
    CHECK(rx.broken);

    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr->ready = onic_shm_ready_word(0, 0, 1);  /* one slot... */
    hdr->user_len = 40;
    hdr->len = 20;      /* ...but 60 bytes do not fit behind the header */
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 0);
    CHECK(rx.broken);

    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr->ready = onic_shm_ready_word(0, 0, 2);  /* two slots for what fits in one */
    hdr->user_len = 8;
    hdr->len = 8;
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 0);
    CHECK(rx.broken);

    /* A zero need is not a message: the lane breaks, naming the slot count. */
    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr->ready = onic_shm_ready_word(0, 0, 0);
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 0);
    CHECK(rx.broken);
    CHECK_EQ(rx.bad, ONIC_SHM_BAD_SLOTS);
    CHECK_EQ(rx.bad_value, 0);

    /* A word stamped for a later lap at the head is a gap, not a wait:
     * found by the poll once it looks (a message before it), and by the
     * audit of a receiver about to sleep. */
    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr->ready = onic_shm_ready_word(0, nslots, 1);
    CHECK(!onic_shm_rx_pending(&rx));
    CHECK(!onic_shm_rx_audit(&rx));
    CHECK(rx.broken);
    CHECK_EQ(rx.bad, ONIC_SHM_BAD_SEQ);
    CHECK_EQ(rx.bad_value, nslots);
    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    hdr[0].ready = onic_shm_ready_word(0, 0, 1);
    hdr[1].ready = onic_shm_ready_word(0, 1 + 2 * nslots, 1);
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 1);
    CHECK(rx.broken);
    CHECK_EQ(rx.bad, ONIC_SHM_BAD_SEQ);
    CHECK_EQ(rx.bad_value, 1 + 2 * nslots);
    /* An idle lane, and one whose head holds an earlier lap's entry, pass. */
    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_rx_init(&rx, lane, nslots, 7);
    CHECK(onic_shm_rx_audit(&rx));
    rx.head = rx.published = 3 * nslots;
    hdr->ready = onic_shm_ready_word(0, 2 * nslots, 1);
    CHECK(onic_shm_rx_audit(&rx));
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, max_payload, 2, on_message, NULL, &t), 0);
    CHECK(!rx.broken);
    onic_free(lane);
}

/* Each field the receiver checks, alone: the lane breaks naming it, with
 * the value found. */
static void test_malformed_fields(void)
{
    uint32_t nslots = 8;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    onic_xport_hdr_t *hdr = (onic_xport_hdr_t *)(lane + 1);
    /* The reason named is the first field found wrong: a length of exactly
     * the most the poll takes (max), or a frame, is right, its slot count not. */
    const struct { uint32_t len, user_len, kind, need, bad; uint64_t value; size_t max; } cases[] = {
        {0xffffffffu, 0, 0, 1, ONIC_SHM_BAD_LEN, 0xffffffffu, 2048},
        {0, 0, 77, 1, ONIC_SHM_BAD_KIND, 77, 2048},
        {0, 300, 0, 1, ONIC_SHM_BAD_USER_LEN, 300, 2048},
        {0, 0, 0, 255, ONIC_SHM_BAD_SLOTS, 255, 2048},
        {2048, 0, 0, 2, ONIC_SHM_BAD_SLOTS, 2, 2048},
        {2049, 0, 0, 2, ONIC_SHM_BAD_LEN, 2049, 2048},
        {ONIC_SHM_FRAME_MAX, 0, 0, 2, ONIC_SHM_BAD_SLOTS, 2, 16384},
        {ONIC_SHM_FRAME_MAX + 1, 0, 0, 2, ONIC_SHM_BAD_LEN, ONIC_SHM_FRAME_MAX + 1, 16384},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        onic_shm_rx_t rx;
        lane_test_t t = {0};
        memset(lane, 0, onic_shm_lane_size(nslots));
        onic_shm_rx_init(&rx, lane, nslots, 7);
        hdr->ready = onic_shm_ready_word(0, 0, cases[i].need);
        hdr->len = cases[i].len;
        hdr->user_len = (uint16_t)cases[i].user_len;
        hdr->kind = (uint16_t)cases[i].kind;
        CHECK_EQ(onic_shm_rx_poll(&rx, 16, cases[i].max, 2, on_message, NULL, &t), 0);
        CHECK(rx.broken);
        CHECK_EQ(rx.bad, cases[i].bad);
        CHECK_EQ(rx.bad_value, cases[i].value);
        CHECK_EQ(rx.head, 0);
    }
    onic_free(lane);
}

/* The sender's checks: a consumed count beyond what was sent (or behind
 * the last one read), a slot that already carries the sequence number about
 * to be stamped (a replayed entry), and -- where it waits -- a message of
 * its own overwritten before the receiver took it. Nothing is written once
 * the lane is broken. */
static void test_sender_checks(void)
{
    uint32_t nslots = 8;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    onic_xport_hdr_t *slot = (onic_xport_hdr_t *)(lane + 1);
    uint64_t v = 0, word;
    onic_shm_tx_t tx;

    memset(lane, 0, onic_shm_lane_size(nslots));
    lane->key = 0x1234567890abcdefull;
    onic_shm_tx_init(&tx, lane, nslots);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), NULL, 0), ONIC_OK);
    CHECK(onic_shm_tx_audit(&tx)); /* waiting at 0: our message is there */
    lane->consumed = 8 + 1;        /* one more than was sent */
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), NULL, 0), ONIC_ERR_IO);
    CHECK_EQ(tx.bad, ONIC_SHM_BAD_CREDIT);
    CHECK_EQ(tx.bad_value, 9);
    CHECK_EQ(tx.tail, 8);
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), NULL, 0), ONIC_ERR_IO);
    lane->consumed = 8; /* a good count again: broken stays broken, audit too */
    CHECK(!onic_shm_tx_audit(&tx));
    CHECK_EQ(tx.bad_value, 9);

    /* Behind the last count read: also credits never sent. */
    memset(lane, 0, onic_shm_lane_size(nslots));
    lane->key = 0x1234567890abcdefull;
    onic_shm_tx_init(&tx, lane, nslots);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), NULL, 0), ONIC_OK);
    lane->consumed = 4;
    CHECK(onic_shm_tx_audit(&tx));
    lane->consumed = 2;
    CHECK(!onic_shm_tx_audit(&tx));
    CHECK_EQ(tx.bad, ONIC_SHM_BAD_CREDIT);

    /* A replay: the next slot already stamped for the next sequence number. */
    memset(lane, 0, onic_shm_lane_size(nslots));
    lane->key = 0x1234567890abcdefull;
    onic_shm_tx_init(&tx, lane, nslots);
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), NULL, 0), ONIC_OK);
    slot[1] = slot[0];
    slot[1].ready = word = onic_shm_ready_word(lane->key, 1, 1);
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), NULL, 0), ONIC_ERR_IO);
    CHECK_EQ(tx.bad, ONIC_SHM_BAD_REPLAY);
    CHECK_EQ(tx.bad_value, word);
    CHECK_EQ(tx.tail, 1);
    CHECK_EQ(slot[1].ready, word); /* not written */
    /* The same for a message of several slots. */
    memset(lane, 0, onic_shm_lane_size(nslots));
    lane->key = 0x1234567890abcdefull;
    onic_shm_tx_init(&tx, lane, nslots);
    slot[0].ready = onic_shm_ready_word(lane->key, 0, 3);
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), slot, 100), ONIC_ERR_IO);
    CHECK_EQ(tx.bad, ONIC_SHM_BAD_REPLAY);

    /* Our unread message overwritten: the audit of a waiting sender. */
    memset(lane, 0, onic_shm_lane_size(nslots));
    lane->key = 0x1234567890abcdefull;
    onic_shm_tx_init(&tx, lane, nslots);
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), NULL, 0), ONIC_OK);
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &v, sizeof(v), NULL, 0), ONIC_OK);
    lane->consumed = 1;
    CHECK(onic_shm_tx_audit(&tx));
    slot[1].ready ^= 0x5a5a5a5a00ull;
    CHECK(!onic_shm_tx_audit(&tx));
    CHECK_EQ(tx.bad, ONIC_SHM_BAD_LOST);
    onic_free(lane);
}

static int on_66(void *arg, uint32_t src, unsigned kind, const void *user_hdr, size_t user_len,
                 const void *payload, size_t len)
{
    const uint8_t *p = payload;
    unsigned *ok = arg;

    (void)src, (void)kind, (void)user_hdr;
    *ok = user_len == sizeof(uint64_t) && len == 66;
    for (size_t i = 0; *ok && i < len; i++)
        *ok = p[i] == msg_byte(0, i);
    return 0;
}

/* A payload that ends a few bytes into its last slot still writes that
 * slot's whole first word, so no word can mix new payload bytes with an old
 * header's (which could carry the sequence number the receiver waits for). */
static void test_first_words_whole(void)
{
    uint32_t nslots = 8;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    uint8_t *slots = (uint8_t *)(lane + 1);
    uint8_t payload[66];
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    unsigned ok = 0;
    uint64_t seq = 0;

    memset(lane, 0, sizeof(*lane));
    memset(slots, 0xab, (size_t)nslots * ONIC_SHM_SLOT); /* old data everywhere */
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = msg_byte(0, i);
    onic_shm_tx_init(&tx, lane, nslots);
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, sizeof(payload)), ONIC_OK);
    CHECK_EQ(tx.tail, 3);  /* header, a full payload slot, two bytes in a third */
    for (size_t i = 2; i < 8; i++)
        CHECK_EQ(slots[2 * ONIC_SHM_SLOT + i], 0);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, 2048, 2, on_66, NULL, &ok), 1);
    CHECK(!rx.broken);
    CHECK(ok);
    onic_free(lane);
}

/* One-slot messages of every split of the line's 48 user bytes between
 * header and payload: the inline copies (onic_shm_copy_small) move exactly
 * [0, n) of each -- the bytes behind them in the slot keep what they had --
 * and the receiver hands up exactly what was sent. */
typedef struct split_seen {
    size_t  user_len, len;
    uint8_t user[48], data[48];
    int     n;
} split_seen_t;

static int on_split(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                    size_t user_len, const void *payload, size_t len)
{
    split_seen_t *s = arg;

    (void)src;
    (void)kind;
    s->n++;
    s->user_len = user_len;
    s->len = len;
    memcpy(s->user, user_hdr, user_len);
    memcpy(s->data, payload, len);
    return 0;
}

static void test_one_slot_splits(void)
{
    uint32_t nslots = 4;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    uint8_t *slots = (uint8_t *)(lane + 1);
    uint8_t hdr[48], data[48];
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    unsigned bad = 0, cases = 0;

    memset(lane, 0, sizeof(*lane));
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    for (size_t ul = 0; ul <= 48; ul++) {
        for (size_t len = 0; ul + len <= 48; len++) {
            uint64_t at = tx.tail & (nslots - 1);
            const onic_xport_hdr_t *h = (const onic_xport_hdr_t *)(slots + at * ONIC_SHM_SLOT);
            split_seen_t seen = {0};

            for (size_t i = 0; i < 48; i++) {
                hdr[i] = (uint8_t)(0x10 + i + ul);
                data[i] = (uint8_t)(0x80 + i + len);
            }
            memset(slots + at * ONIC_SHM_SLOT + 16, 0xab, 48); /* the old line */
            if (onic_shm_tx_try(&tx, 1, hdr, ul, data, len) != ONIC_OK) {
                bad++;
                continue;
            }
            for (size_t i = ul + len; i < 48; i++)
                bad += h->user[i] != 0xab;
            bad += onic_shm_rx_poll(&rx, 4, 2048, 2, on_split, NULL, &seen) != 1;
            bad += seen.n != 1 || seen.user_len != ul || seen.len != len ||
                   memcmp(seen.user, hdr, ul) != 0 || memcmp(seen.data, data, len) != 0;
            cases++;
        }
    }
    CHECK_EQ(cases, 49 * 50 / 2);
    CHECK_EQ(bad, 0);
    CHECK(!rx.broken);
    /* A one-slot header that claims more user bytes than the line has, or a
     * payload that would not fit behind them: the lane breaks. */
    for (int which = 0; which < 2; which++) {
        onic_xport_hdr_t *h = (onic_xport_hdr_t *)slots;
        split_seen_t seen = {0};

        memset(lane, 0, onic_shm_lane_size(nslots));
        onic_shm_rx_init(&rx, lane, nslots, 7);
        h->len = which == 0 ? 0 : 41;
        h->user_len = which == 0 ? 49 : 8;
        h->ready = onic_shm_ready_word(0, 0, 1);
        CHECK_EQ(onic_shm_rx_poll(&rx, 4, 2048, 2, on_split, NULL, &seen), 0);
        CHECK(rx.broken);
        CHECK_EQ(seen.n, 0);
    }
    onic_free(lane);
}

/* A callback that polls its own lane again (a send from the callback that
 * waits for room does): every message still comes exactly once, in order,
 * and the credit published never runs ahead of what was taken. */
typedef struct nested {
    onic_shm_rx_t *rx;
    uint64_t       next, bad;
    int            depth;
} nested_t;

static int on_nested(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                     size_t user_len, const void *payload, size_t len)
{
    nested_t *t = arg;
    uint64_t seq;

    (void)src;
    (void)kind;
    (void)payload;
    (void)len;
    if (user_len != sizeof(seq)) {
        t->bad++;
        return 0;
    }
    memcpy(&seq, user_hdr, sizeof(seq));
    t->bad += seq != t->next;
    t->next = seq + 1;
    t->bad += t->rx->published > t->rx->head;
    if (t->depth < 3 && seq % 5 == 0) {
        t->depth++;
        onic_shm_rx_poll(t->rx, 2, 2048, 2, on_nested, NULL, t);
        t->depth--;
    }
    return 0;
}

static void test_nested_poll(void)
{
    uint32_t nslots = 16;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    uint8_t payload[100];
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    nested_t t = {&rx, 0, 0, 0};
    uint64_t seq = 0;

    memset(lane, 0, onic_shm_lane_size(nslots));
    memset(payload, 'n', sizeof(payload));
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    for (int round = 0; round < 200; round++) {
        /* fill what room there is, with one- and three-slot messages */
        while (onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, seq % 3 == 0 ? 100 : 8) ==
               ONIC_OK)
            seq++;
        onic_shm_rx_poll(&rx, 8, 2048, 2, on_nested, NULL, &t);
    }
    while (onic_shm_rx_poll(&rx, 8, 2048, 2, on_nested, NULL, &t) > 0)
        ;
    CHECK_EQ(t.bad, 0);
    CHECK_EQ(t.next, seq);
    CHECK(!rx.broken);
    CHECK_EQ(rx.published, rx.head); /* the lane found empty: every credit back */
    CHECK_EQ(__atomic_load_n(&lane->consumed, __ATOMIC_RELAXED), tx.tail);
    onic_free(lane);
}

/* A payload of several slots is read in place where its slots do not wrap
 * around the ring's end, and copied out where they do. While its callback
 * runs, its slots are not given back: the sender fills the rest of the ring
 * and finds no room, the payload keeps its bytes, and a poll from inside
 * the callback takes the messages behind it without publishing past it.
 * When the callback returns, every slot goes back. */
typedef struct in_place {
    onic_shm_rx_t  *rx;
    onic_shm_tx_t  *tx;
    onic_shm_lane_t *lane;
    int             calls, in_ring, nested, bad;
} in_place_t;

static int on_inner(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                    size_t user_len, const void *payload, size_t len)
{
    in_place_t *t = arg;

    (void)src;
    (void)kind;
    (void)user_hdr;
    (void)user_len;
    (void)payload;
    t->bad += len != 8;
    t->nested++;
    return 0;
}

static int on_in_place(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                       size_t user_len, const void *payload, size_t len)
{
    in_place_t *t = arg;
    const uint8_t *p = payload, *ring = t->rx->slots;
    uint64_t seq, at, filler = 1000;
    uint8_t eight[8] = {0};
    int sent = 0;

    (void)src;
    (void)kind;
    t->calls++;
    if (user_len != sizeof(seq) || len != 300) {
        t->bad++;
        return 0;
    }
    memcpy(&seq, user_hdr, sizeof(seq));
    at = t->rx->head - onic_shm_msg_slots(sizeof(seq), len); /* its header slot */
    if (!(p >= ring && p < ring + (size_t)t->rx->nslots * ONIC_SHM_SLOT)) {
        /* Copied out: its slots are back already. */
        t->bad += __atomic_load_n(&t->lane->consumed, __ATOMIC_RELAXED) != t->rx->head;
        goto bytes;
    }
    t->in_ring++;
    /* Not given back while we read it. */
    t->bad += __atomic_load_n(&t->lane->consumed, __ATOMIC_RELAXED) > at;
    /* The sender takes what room there is, and no more. */
    while (onic_shm_tx_try(t->tx, 0, &filler, sizeof(filler), eight, sizeof(eight)) == ONIC_OK)
        sent++;
    t->bad += t->tx->tail - at != t->rx->nslots; /* the ring full, from our header on */
    t->bad += sent == 0;
    /* Taken from inside: the messages behind ours, our slots still held. */
    t->bad += (int)onic_shm_rx_poll(t->rx, 64, 2048, 2, on_inner, NULL, t) != sent;
    t->bad += __atomic_load_n(&t->lane->consumed, __ATOMIC_RELAXED) > at;
    t->bad += onic_shm_tx_try(t->tx, 0, &filler, sizeof(filler), eight, sizeof(eight)) == ONIC_OK;
bytes:
    for (size_t i = 0; i < len; i++)
        if (p[i] != (uint8_t)(seq + i)) {
            t->bad++;
            break;
        }
    return 0;
}

typedef struct in_place_small {
    const uint8_t *ring;
    size_t         bytes;
    int            in_ring;
} in_place_small_t;

static int on_small(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                    size_t user_len, const void *payload, size_t len)
{
    in_place_small_t *t = arg;
    const uint8_t *p = payload;

    (void)src;
    (void)kind;
    (void)user_hdr;
    (void)user_len;
    (void)len;
    t->in_ring += p >= t->ring && p < t->ring + t->bytes;
    return 0;
}

static void test_in_place(void)
{
    uint32_t nslots = 16;
    onic_shm_lane_t *lane = lane_new(nslots);
    uint8_t payload[300];
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    in_place_t t = {&rx, &tx, lane, 0, 0, 0, 0};

    if (lane == NULL)
        return;
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    /* A 6-slot message at every position of the ring: at 11 to 15 its
     * payload wraps (copied out), elsewhere it is read in place. */
    for (uint64_t seq = 0; seq < 2 * nslots; seq++) {
        uint64_t at = tx.tail & (nslots - 1);
        int calls = t.calls, in_ring = t.in_ring;
        for (size_t i = 0; i < sizeof(payload); i++)
            payload[i] = (uint8_t)(seq + i);
        REQUIRE(onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, sizeof(payload)) == ONIC_OK);
        CHECK_EQ(onic_shm_rx_poll(&rx, 1, 2048, 2, on_in_place, NULL, &t), 1);
        CHECK_EQ(t.calls, calls + 1);
        CHECK_EQ(t.in_ring - in_ring, at + 6 <= nslots);
        /* Back from the callback: every slot given back, the hold gone. */
        CHECK_EQ(rx.hold, UINT64_MAX);
        CHECK_EQ(__atomic_load_n(&lane->consumed, __ATOMIC_RELAXED), tx.tail);
        /* The next message starts one slot further on (the lane found
         * empty after it: every slot back). */
        REQUIRE(onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, 8) == ONIC_OK);
        CHECK_EQ(onic_shm_rx_poll(&rx, 8, 2048, 2, on_inner, NULL, &t), 1);
    }
    CHECK_EQ(t.bad, 0);
    CHECK(t.nested > 0);
    CHECK(!rx.broken);
    /* Below ONIC_SHM_IN_PLACE_MIN (a Portals large-operation header, whose
     * callback may wait) a payload is copied out wherever it lies. */
    REQUIRE((tx.tail & (nslots - 1)) + 5 <= nslots);
    {
        uint64_t seq = 7;
        in_place_small_t small = {rx.slots, (size_t)nslots * ONIC_SHM_SLOT, 0};
        REQUIRE(onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, ONIC_SHM_IN_PLACE_MIN - 1) ==
                ONIC_OK);
        CHECK_EQ(onic_shm_rx_poll(&rx, 8, 2048, 2, on_small, NULL, &small), 1);
        CHECK_EQ(small.in_ring, 0);
    }
    onic_free(lane);
}

/* The payload of a message of several slots is pushed to the shared cache
 * (tx.demoted counts it) only where the receiver had taken every message
 * before it, so likely waits for this one: not behind an unread message,
 * not for a message of one slot, never with demote off; and the bytes
 * arrive as sent, wherever the message lies in the ring. */
typedef struct demote_rx {
    uint64_t next, bad;
    size_t   len[4];
} demote_rx_t;

static int on_demote(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                     size_t user_len, const void *payload, size_t len)
{
    demote_rx_t *d = arg;
    const uint8_t *p = payload;
    uint64_t seq;

    (void)kind;
    if (src != 7 || user_len != sizeof(seq)) {
        d->bad++;
        return 0;
    }
    memcpy(&seq, user_hdr, sizeof(seq));
    if (seq != d->next || len != d->len[seq % 4])
        d->bad++;
    for (size_t i = 0; i < len; i++)
        if (p[i] != msg_byte(seq, i)) {
            d->bad++;
            break;
        }
    d->next = seq + 1;
    return 0;
}

static void test_demote(void)
{
    uint32_t nslots = 32;
    onic_shm_lane_t *lane = lane_new(nslots);
    demote_rx_t d = {0, 0, {300, 300, 8, 1000}};
    uint8_t payload[1000];
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    uint64_t seq = 0;

    if (lane == NULL)
        return;
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    CHECK_EQ(tx.demote, 0); /* shm.c turns it on (ONIC_SHM_DEMOTE) */
    for (int lap = 0; lap < 8; lap++) {
        tx.demote = lap > 0;
        for (int m = 0; m < 4; m++, seq++) {
            uint64_t before = tx.demoted;
            size_t len = d.len[seq % 4];
            for (size_t i = 0; i < len; i++)
                payload[i] = msg_byte(seq, i);
            /* A one-slot message through the several-slot writer too (as a
             * mid-size message's FIRST goes). */
            if (m == 2)
                REQUIRE(onic_shm_tx_try_slots(&tx, 0, &seq, sizeof(seq), payload, len) == ONIC_OK);
            else
                REQUIRE(onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, len) == ONIC_OK);
            /* 0: the receiver has taken all (pushed); 1: behind 0, unread
             * (not); 2: one slot (not); 3: after 2 was taken (pushed). */
            CHECK_EQ(tx.demoted - before, (uint64_t)(tx.demote && (m == 0 || m == 3)));
            if (m != 0)
                CHECK_EQ(onic_shm_rx_poll(&rx, 8, 2048, 2, on_demote, NULL, &d), m == 1 ? 2 : 1);
        }
        /* Every slot given back: the lane was found empty. */
        CHECK_EQ(__atomic_load_n(&lane->consumed, __ATOMIC_RELAXED), tx.tail);
    }
    CHECK_EQ(tx.demoted, 2 * 7);
    CHECK_EQ(d.next, seq);
    CHECK_EQ(d.bad, 0);
    CHECK(!rx.broken);
    onic_free(lane);
}

/* A receiver that finds its lane empty gives back every slot it consumed,
 * even below the publishing batch: a sender of a message that needs the
 * whole ring (more than 3/4 of it) would otherwise wait on credits held by
 * an idle receiver. */
static void test_idle_receiver_returns_credits(void)
{
    uint32_t nslots = 8;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    uint8_t payload[(8 - 1) * ONIC_SHM_SLOT];
    nested_t t;
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    uint64_t seq = 0;

    REQUIRE(lane != NULL);
    if (lane == NULL)
        return;
    memset(lane, 0, onic_shm_lane_size(nslots));
    memset(payload, 'w', sizeof(payload));
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    t = (nested_t){&rx, 0, 0, 3}; /* depth 3: no nested polls */
    /* One one-slot message, taken: fewer slots than a batch are consumed. */
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, 8), ONIC_OK);
    CHECK_EQ(onic_shm_rx_poll(&rx, 8, 2048, 2, on_nested, NULL, &t), 1);
    /* A message of all 8 slots: it fits only with that slot given back. */
    seq = 1;
    CHECK_EQ(onic_shm_msg_slots(sizeof(seq), sizeof(payload)), nslots);
    CHECK_EQ(onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, sizeof(payload)), ONIC_OK);
    CHECK_EQ(onic_shm_rx_poll(&rx, 8, 2048, 2, on_nested, NULL, &t), 1);
    CHECK_EQ(t.next, 2);
    CHECK_EQ(t.bad, 0);
    onic_free(lane);
}

/* A poll delivers at most its budget, however many messages wait. */
static void test_poll_budget(void)
{
    uint32_t nslots = 16;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    uint8_t payload[8] = {0};
    nested_t t;
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;

    REQUIRE(lane != NULL);
    if (lane == NULL)
        return;
    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    t = (nested_t){&rx, 0, 0, 3}; /* depth 3: no nested polls */
    for (uint64_t seq = 0; seq < 4; seq++)
        CHECK_EQ(onic_shm_tx_try(&tx, 0, &seq, sizeof(seq), payload, sizeof(payload)), ONIC_OK);
    CHECK_EQ(onic_shm_rx_poll(&rx, 1, 2048, 2, on_nested, NULL, &t), 1);
    CHECK_EQ(t.next, 1);
    CHECK_EQ(onic_shm_rx_poll(&rx, 2, 2048, 2, on_nested, NULL, &t), 2);
    CHECK_EQ(t.next, 3);
    CHECK_EQ(onic_shm_rx_poll(&rx, 8, 2048, 2, on_nested, NULL, &t), 1);
    CHECK_EQ(onic_shm_rx_poll(&rx, 8, 2048, 2, on_nested, NULL, &t), 0);
    CHECK_EQ(t.next, 4);
    CHECK_EQ(t.bad, 0);
    onic_free(lane);
}

/* --- Mid-size messages: fragments through the lane, reassembled. ------------------------- */

#define MID_FRAME 2048u

typedef struct mid_test {
    onic_shm_rx_t *rx;
    uint64_t       next;      /* sequence number expected next */
    uint64_t       bad;
    int            nest;      /* poll again from inside the callback */
    size_t       (*len_of)(uint64_t seq);
    uint64_t       stop_seq;  /* the callback asks to stop after this one (0: none) */
} mid_test_t;

static uint8_t mid_byte(uint64_t seq, size_t i)
{
    return (uint8_t)(seq * 131 + i * 7 + (i >> 9));
}

static int on_mid(void *arg, uint32_t src, unsigned kind, const void *user_hdr, size_t user_len,
                  const void *payload, size_t len)
{
    mid_test_t *t = arg;
    const uint8_t *p = payload;
    uint64_t seq;

    if (src != 7 || kind != ONIC_XPORT_KIND_USER || user_len != sizeof(seq)) {
        t->bad++;
        return 0;
    }
    memcpy(&seq, user_hdr, sizeof(seq));
    if (seq != t->next || len != t->len_of(seq))
        t->bad++;
    for (size_t i = 0; i < len; i++)
        if (p[i] != mid_byte(seq, i)) {
            t->bad++;
            break;
        }
    t->next = seq + 1;
    if (t->nest) /* a callback that polls again sees the next message whole, in order */
        onic_shm_rx_poll(t->rx, 1, MID_FRAME, 2, on_mid, NULL, t);
    /* the buffer is still ours: nothing the nested poll did moved it */
    for (size_t i = 0; i < len; i++)
        if (p[i] != mid_byte(seq, i)) {
            t->bad++;
            break;
        }
    return t->stop_seq != 0 && seq == t->stop_seq;
}

/* Sizes across the boundaries: a frame, its neighbours, and the mid limit. */
static const size_t mid_sizes[] = {0, 1, 40, 41, 2047, 2048, 2049, 4095, 4096, 4097,
                                   8191, 8192, 8193, 20000 - 1, 20000};
#define MID_MAX 20000u

static size_t mid_len_table(uint64_t seq)
{
    return mid_sizes[seq % (sizeof(mid_sizes) / sizeof(mid_sizes[0]))];
}

/* Send message seq, going on from *off_p / *first_p after no room. */
static onic_status_t mid_send(onic_shm_tx_t *tx, uint64_t seq, size_t len, uint8_t *buf,
                              int *first_p, size_t *off_p)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = mid_byte(seq, i);
    if (len <= MID_FRAME)
        return onic_shm_tx_try(tx, ONIC_XPORT_KIND_USER, &seq, sizeof(seq), buf, len);
    return onic_shm_tx_mid(tx, &seq, sizeof(seq), buf, len, MID_FRAME, first_p, off_p);
}

/* Placement: the layer above takes a mid-size message at its FIRST (two in
 * three here; the third comes whole) and its fragments go straight where
 * place said, cut to its room (half the message for one in three), the
 * byte past the room untouched; placed ends it, never the callback. A poll
 * without a placer (one that sets messages aside) leaves a placed
 * message's fragments, and everything behind them, in the ring. */
typedef struct place_test {
    mid_test_t t; /* first: cb and placer share cb_arg */
    uint8_t   *dest;
    size_t     room;
    uint64_t   seq, placed, declined;
} place_test_t;

static int place_take(void *arg, uint32_t src, const void *user_hdr, size_t user_len, size_t len,
                      void **dest, size_t *room)
{
    place_test_t *pt = arg;
    uint64_t seq;

    if (src != 7 || user_len != sizeof(seq)) {
        pt->t.bad++;
        return 0;
    }
    memcpy(&seq, user_hdr, sizeof(seq));
    pt->t.bad += seq != pt->t.next || len != pt->t.len_of(seq);
    if (seq % 3 == 0) {
        pt->declined++;
        return 0;
    }
    pt->seq = seq;
    pt->room = seq % 3 == 1 ? len : len / 2;
    memset(pt->dest, 0xee, MID_MAX + 1);
    *dest = pt->dest;
    *room = pt->room;
    return 1;
}

static int place_done(void *arg, uint32_t src)
{
    place_test_t *pt = arg;

    pt->t.bad += src != 7 || pt->seq != pt->t.next;
    for (size_t i = 0; i < pt->room; i++)
        if (pt->dest[i] != mid_byte(pt->seq, i)) {
            pt->t.bad++;
            break;
        }
    pt->t.bad += pt->dest[pt->room] != 0xee;
    pt->t.next = pt->seq + 1;
    pt->placed++;
    return 0;
}

static const onic_shm_placer_t test_placer = {place_take, place_done};

static void test_mid_place(void)
{
    uint32_t nslots = 64;
    onic_shm_lane_t *lane = lane_new(nslots);
    static uint8_t buf[MID_MAX], dest[MID_MAX + 1];
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    place_test_t pt = {{&rx, 0, 0, 0, mid_len_table, 0}, dest, 0, 0, 0, 0};
    uint64_t seq = 0, count = 3 * (sizeof(mid_sizes) / sizeof(mid_sizes[0])), left_at;
    int first = 1;
    size_t off = 0;
    unsigned spins = 0;

    if (lane == NULL)
        return;
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    rx.mid_max = MID_MAX;
    while (pt.t.next < count && spins++ < 100000 && !rx.broken) {
        while (seq < count) {
            if (mid_send(&tx, seq, mid_len_table(seq), buf, &first, &off) != ONIC_OK)
                break;
            seq++;
            first = 1;
            off = 0;
        }
        if (rx.mid_total != 0 && rx.mid_user_len == ONIC_SHM_MID_PLACED) {
            /* Without a placer: nothing of it taken, nothing behind it. */
            left_at = rx.head;
            CHECK_EQ(onic_shm_rx_poll(&rx, 4, MID_FRAME, 2, on_mid, NULL, &pt), 0);
            CHECK_EQ(rx.head, left_at);
        }
        onic_shm_rx_poll(&rx, 4, MID_FRAME, 2, on_mid, &test_placer, &pt);
    }
    CHECK(!rx.broken);
    CHECK_EQ(pt.t.next, count);
    CHECK_EQ(pt.t.bad, 0);
    CHECK(pt.placed > 0 && pt.declined > 0);
    CHECK_EQ(rx.mid_total, 0);
    onic_shm_rx_fini(&rx);
    onic_free(lane);
}

/* One thread: the sender fills what room there is, the receiver takes it,
 * round after round, on a ring smaller than most of the messages. */
static void test_mid_sizes(int nest)
{
    uint32_t nslots = 64; /* 4 KiB: a 20000-byte message takes five laps */
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    static uint8_t buf[MID_MAX];
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    mid_test_t t = {&rx, 0, 0, nest, mid_len_table, 0};
    uint64_t seq = 0, count = 3 * (sizeof(mid_sizes) / sizeof(mid_sizes[0]));
    int first = 1;
    size_t off = 0;
    unsigned spins = 0;

    memset(lane, 0, onic_shm_lane_size(nslots));
    lane->key = 0x9e3779b97f4a7c15ull;
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    rx.mid_max = MID_MAX;
    while (t.next < count && spins++ < 100000 && !rx.broken) {
        while (seq < count) {
            onic_status_t st = mid_send(&tx, seq, mid_len_table(seq), buf, &first, &off);
            if (st != ONIC_OK)
                break;
            seq++;
            first = 1;
            off = 0;
        }
        onic_shm_rx_poll(&rx, 4, MID_FRAME, 2, on_mid, NULL, &t);
    }
    CHECK(!rx.broken);
    CHECK_EQ(t.next, count);
    CHECK_EQ(t.bad, 0);
    CHECK_EQ(rx.mid_total, 0);
    onic_shm_rx_fini(&rx);
    onic_free(lane);
}

/* Two threads, a flood: the producer sends mid-size and small messages as
 * fast as credits come back; nothing lost, nothing reordered. */
typedef struct mid_pair {
    onic_shm_lane_t *lane;
    uint32_t         nslots;
    uint64_t         count;
} mid_pair_t;

static size_t mid_len_rand(uint64_t seq)
{
    return (size_t)((seq * 2654435761u) % (MID_MAX + 1));
}

static void *mid_producer(void *arg)
{
    mid_pair_t *m = arg;
    static uint8_t buf[MID_MAX];
    onic_shm_tx_t tx;

    onic_shm_tx_init(&tx, m->lane, m->nslots);
    for (uint64_t seq = 0; seq < m->count; seq++) {
        int first = 1;
        size_t off = 0;
        while (mid_send(&tx, seq, mid_len_rand(seq), buf, &first, &off) == ONIC_ERR_NO_RESOURCE)
            sched_yield();
    }
    return NULL;
}

/* A callback that asks to stop ends the poll after its message, a one-slot
 * message or a mid-size one whole: what is behind it waits for the next
 * poll, in order (the front end stops a poll so when a wait inside a
 * callback set older messages aside, which must be delivered first). */
static size_t stop_len(uint64_t seq)
{
    return seq == 2 ? 3000 : 8; /* 3000: a mid-size message, two fragments */
}

static void test_poll_stop(void)
{
    uint32_t nslots = 128;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    static uint8_t buf[MID_MAX];
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    mid_test_t t = {&rx, 0, 0, 0, stop_len, 1};

    REQUIRE(lane != NULL);
    if (lane == NULL)
        return;
    memset(lane, 0, onic_shm_lane_size(nslots));
    lane->key = 0x9e3779b97f4a7c15ull;
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    rx.mid_max = MID_MAX;
    for (uint64_t seq = 0; seq < 5; seq++) {
        int first = 1;
        size_t off = 0;
        CHECK_EQ(mid_send(&tx, seq, stop_len(seq), buf, &first, &off), ONIC_OK);
    }
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, MID_FRAME, 2, on_mid, NULL, &t), 2); /* 0, 1: stop */
    CHECK_EQ(t.next, 2);
    t.stop_seq = 2;
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, MID_FRAME, 2, on_mid, NULL, &t), 1); /* the mid-size 2: stop */
    CHECK_EQ(t.next, 3);
    t.stop_seq = 0;
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, MID_FRAME, 2, on_mid, NULL, &t), 2); /* 3, 4 */
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, MID_FRAME, 2, on_mid, NULL, &t), 0);
    CHECK_EQ(t.next, 5);
    CHECK_EQ(t.bad, 0);
    CHECK(!rx.broken);
    onic_shm_rx_fini(&rx);
    onic_free(lane);
}

static void test_mid_flood(uint32_t nslots, uint64_t count)
{
    mid_pair_t m = {NULL, nslots, count};
    onic_shm_rx_t rx;
    mid_test_t t = {&rx, 0, 0, 0, mid_len_rand, 0};
    pthread_t th;

    m.lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    memset(m.lane, 0, onic_shm_lane_size(nslots));
    m.lane->key = 0x9e3779b97f4a7c15ull;
    onic_shm_rx_init(&rx, m.lane, nslots, 7);
    rx.mid_max = MID_MAX;
    CHECK(pthread_create(&th, NULL, mid_producer, &m) == 0);
    while (t.next < count && !rx.broken)
        if (onic_shm_rx_poll(&rx, 16, MID_FRAME, 2, on_mid, NULL, &t) == 0)
            sched_yield();
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(!rx.broken);
    CHECK_EQ(t.next, count);
    CHECK_EQ(t.bad, 0);
    printf("lane of %u slots: %llu messages of up to %u bytes, mid-size in fragments, in order\n",
           nslots, (unsigned long long)count, MID_MAX);
    onic_shm_rx_fini(&rx);
    onic_free(m.lane);
}

/* Malformed fragments: each breaks the lane with its reason, delivers
 * nothing, and leaves the head at the fragment. */
static void mid_bad_case(unsigned expect, uint64_t expect_value, int steps)
{
    uint32_t nslots = 64;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    mid_test_t t = {&rx, 0, 0, 0, mid_len_table, 0};
    uint8_t data[3000];
    uint64_t seq = 0, total, before;

    memset(lane, 0, onic_shm_lane_size(nslots));
    memset(data, 'x', sizeof(data));
    lane->key = 0x9e3779b97f4a7c15ull;
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    rx.mid_max = MID_MAX;
    switch (steps) {
    case 0: /* a NEXT with no FIRST */
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_NEXT, NULL, 0, data, 100);
        break;
    case 1: /* a FIRST inside a message */
        total = 5000;
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), &total, sizeof(total));
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_NEXT, NULL, 0, data, 100);
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), &total, sizeof(total));
        break;
    case 2: /* a length one message carries: no fragments for that */
        total = MID_FRAME;
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), &total, sizeof(total));
        break;
    case 3: /* over the receiver's limit */
        total = MID_MAX + 1;
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), &total, sizeof(total));
        break;
    case 4: /* a fragment past the message's end */
        total = 2100;
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), &total, sizeof(total));
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_NEXT, NULL, 0, data, 2000);
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_NEXT, NULL, 0, data, 101);
        break;
    case 5: /* a FIRST whose payload is not the 8-byte length */
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), data, 4);
        break;
    case 6: /* a NEXT that carries a header */
        total = 5000;
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), &total, sizeof(total));
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_NEXT, &seq, sizeof(seq), data, 100);
        break;
    case 7: /* an empty NEXT */
        total = 5000;
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), &total, sizeof(total));
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_NEXT, NULL, 0, NULL, 0);
        break;
    case 8: /* a fragment longer than a frame (on a ring that could hold it) */
        onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_NEXT, NULL, 0, data, MID_FRAME + 1);
        break;
    }
    before = tx.tail;
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, MID_FRAME, 2, on_mid, NULL, &t), 0);
    CHECK(rx.broken);
    CHECK_EQ(rx.bad, expect);
    CHECK_EQ(rx.bad_value, expect_value);
    CHECK(rx.head < before); /* stopped at the bad fragment */
    CHECK_EQ(t.next, 0);
    onic_shm_rx_fini(&rx);
    onic_free(lane);
}

static void test_mid_malformed(void)
{
    mid_bad_case(ONIC_SHM_BAD_MID, ONIC_SHM_KIND_MID_NEXT, 0);
    mid_bad_case(ONIC_SHM_BAD_MID, ONIC_SHM_KIND_MID_FIRST, 1);
    mid_bad_case(ONIC_SHM_BAD_MID_LEN, MID_FRAME, 2);
    mid_bad_case(ONIC_SHM_BAD_MID_LEN, MID_MAX + 1, 3);
    mid_bad_case(ONIC_SHM_BAD_MID_LEN, 101, 4);
    mid_bad_case(ONIC_SHM_BAD_MID_LEN, 4, 5);
    mid_bad_case(ONIC_SHM_BAD_MID, ONIC_SHM_KIND_MID_NEXT, 6);
    mid_bad_case(ONIC_SHM_BAD_MID_LEN, 0, 7);
    mid_bad_case(ONIC_SHM_BAD_LEN, MID_FRAME + 1, 8);
}

/* A receiver that takes no mid-size messages (mid_max 0) refuses a FIRST. */
static void test_mid_off(void)
{
    uint32_t nslots = 16;
    onic_shm_lane_t *lane = onic_aligned_alloc(64, onic_shm_lane_size(nslots));
    onic_shm_tx_t tx;
    onic_shm_rx_t rx;
    mid_test_t t = {&rx, 0, 0, 0, mid_len_table, 0};
    uint64_t seq = 0, total = 4096;

    memset(lane, 0, onic_shm_lane_size(nslots));
    onic_shm_tx_init(&tx, lane, nslots);
    onic_shm_rx_init(&rx, lane, nslots, 7);
    onic_shm_tx_try(&tx, ONIC_SHM_KIND_MID_FIRST, &seq, sizeof(seq), &total, sizeof(total));
    CHECK_EQ(onic_shm_rx_poll(&rx, 16, MID_FRAME, 2, on_mid, NULL, &t), 0);
    CHECK(rx.broken);
    CHECK_EQ(rx.bad, ONIC_SHM_BAD_MID_LEN);
    onic_shm_rx_fini(&rx);
    onic_free(lane);
}

/* test_shm_lane [--fraction N]: the two-thread floods send 1/N of their
 * messages (every ring size, wrap and credit wait still runs thousands of
 * times); the sanitizer runs pass 10 (tests/CMakeLists.txt), where every
 * access costs many times more and the counts below took 110 s. */
int main(int argc, char **argv)
{
    uint64_t fraction = 1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fraction") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            fraction = (uint64_t)atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--fraction N]\n", argv[0]);
            return 2;
        }
    }
    test_malformed_fields();
    test_sender_checks();
    test_poll_budget();
    test_idle_receiver_returns_credits();
    test_first_words_whole();
    test_one_slot_splits();
    test_nested_poll();
    test_in_place();
    test_demote();
    run_pair(2, 200000 / fraction, 64, 0);  /* one payload slot: every message waits for credit */
    run_pair(4, 200000 / fraction, 150, 1); /* payloads wrap around the ring's end */
    run_pair(256, 300000 / fraction, 2048, 1);
    test_malformed();
    test_mid_sizes(0);
    test_mid_sizes(1);
    test_mid_place();
    test_poll_stop();
    test_mid_malformed();
    test_mid_off();
    test_mid_flood(64, 20000 / fraction);
    test_mid_flood(1024, 20000 / fraction);
    return check_summary("shm_lane");
}
