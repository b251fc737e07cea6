/* The transport's message queue (xport/msgq.h) in one thread: records come
 * out oldest first, a drain delivers at most its budget and keeps the rest,
 * callbacks may push (delivered by the same drain, budget allowing), a
 * nested drain delivers nothing, and a payload over ONIC_XPORT_MAX_PAYLOAD
 * or a user header over ONIC_XPORT_USER_HDR is refused with nothing queued.
 * Sending a queue (the backlog's retry) hands records oldest first, stops at
 * the first "no room" with that record kept first, and drops a record send
 * refuses otherwise. Deterministic. */
#include "check.h"
#include "xport/msgq.h"

#include <string.h>

typedef struct got {
    onic_xport_msgq_t *q;
    unsigned           n;
    uint32_t           src[16];
    uint8_t            first[16], last[16];
    size_t             len[16];
    int                push_from_cb;  /* the callback of src 2 pushes src 9 */
    unsigned           nested;        /* what a nested drain delivered */
} got_t;

static void on_msg(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                   const void *payload, size_t len)
{
    got_t *g = arg;

    (void)user_hdr;
    (void)user_len;
    if (g->n < 16) {
        g->src[g->n] = src;
        g->first[g->n] = len > 0 ? *(const uint8_t *)payload : 0;
        g->last[g->n] = len > 0 ? ((const uint8_t *)payload)[len - 1] : 0;
        g->len[g->n] = len;
    }
    g->n++;
    g->nested += onic_xport_msgq_drain(g->q, 10, on_msg, g);
    if (g->push_from_cb && src == 2) {
        uint8_t b = 90;
        CHECK_EQ(onic_xport_msgq_push(g->q, 9, "h", 1, &b, 1), ONIC_OK);
    }
}

/* onic_xport_msgq_send's send: takes `room` more records (then answers
 * no room), refuses src `bad` with an I/O error, and records what it took
 * and each header's and payload's content. */
typedef struct sent {
    unsigned room, n, tries;
    uint32_t bad, src[16];
    size_t   len[16];
    char     hdr[16];
    uint8_t  last[16];
} sent_t;

static onic_status_t on_send(void *arg, uint32_t dest, const void *user_hdr, size_t user_len,
                             const void *payload, size_t len)
{
    sent_t *t = arg;

    t->tries++;
    if (dest == t->bad)
        return ONIC_ERR_IO;
    if (t->room == 0)
        return ONIC_ERR_NO_RESOURCE;
    t->room--;
    if (t->n < 16) {
        t->src[t->n] = dest;
        t->len[t->n] = len;
        t->hdr[t->n] = user_len > 0 ? *(const char *)user_hdr : 0;
        t->last[t->n] = len > 0 ? ((const uint8_t *)payload)[len - 1] : 0;
    }
    t->n++;
    return ONIC_OK;
}

static void test_send(void)
{
    static uint8_t p[3000];
    onic_xport_msgq_t q;
    sent_t t;

    memset(&q, 0, sizeof(q));
    memset(&t, 0, sizeof(t));
    t.bad = 99;
    for (uint32_t s = 0; s < 6; s++) {
        size_t len = s == 3 ? ONIC_XPORT_MAX_PAYLOAD : s * 5;
        memset(p, (int)(s + 1), len);
        CHECK_EQ(onic_xport_msgq_push(&q, s, (s & 1) ? "a" : "b", 1, p, len), ONIC_OK);
    }
    /* No room at all: nothing leaves, the first is tried once and kept. */
    CHECK_EQ(onic_xport_msgq_send(&q, on_send, &t), 0);
    CHECK_EQ(t.tries, 1);
    CHECK(!onic_xport_msgq_empty(&q));
    /* Room for 2: the two oldest, in order, whole. */
    t.room = 2;
    CHECK_EQ(onic_xport_msgq_send(&q, on_send, &t), 2);
    CHECK(t.n == 2 && t.src[0] == 0 && t.src[1] == 1 && t.len[1] == 5 && t.hdr[0] == 'b' &&
          t.hdr[1] == 'a' && t.last[1] == 2);
    /* A record refused for good (src 2 here) is dropped; the rest follow,
     * the largest payload whole, until room runs out again. */
    t.bad = 2;
    t.room = 2;
    CHECK_EQ(onic_xport_msgq_send(&q, on_send, &t), 3);
    CHECK(t.n == 4 && t.src[2] == 3 && t.len[2] == ONIC_XPORT_MAX_PAYLOAD && t.last[2] == 4 &&
          t.src[3] == 4 && t.len[3] == 20 && t.last[3] == 5);
    /* A push after a partial send goes behind what is left. */
    CHECK_EQ(onic_xport_msgq_push(&q, 7, "c", 1, NULL, 0), ONIC_OK);
    t.room = 10;
    CHECK_EQ(onic_xport_msgq_send(&q, on_send, &t), 2);
    CHECK(t.n == 6 && t.src[4] == 5 && t.len[4] == 25 && t.src[5] == 7 && t.hdr[5] == 'c');
    CHECK(onic_xport_msgq_empty(&q));
    CHECK_EQ(onic_xport_msgq_send(&q, on_send, &t), 0);
    onic_xport_msgq_fini(&q);
}

int main(void)
{
    static uint8_t big[ONIC_XPORT_MID_CAP + 1];
    onic_xport_msgq_t q;
    got_t g;

    memset(&q, 0, sizeof(q));
    memset(&g, 0, sizeof(g));
    g.q = &q;
    for (uint32_t s = 0; s < 5; s++) {
        uint8_t b = (uint8_t)(10 * s);
        CHECK_EQ(onic_xport_msgq_push(&q, s, "hdr", 3, &b, 1), ONIC_OK);
    }
    /* A budget of 2 delivers 2, the oldest. */
    CHECK_EQ(onic_xport_msgq_drain(&q, 2, on_msg, &g), 2);
    CHECK_EQ(g.n, 2);
    CHECK(g.src[0] == 0 && g.src[1] == 1 && g.first[1] == 10);
    CHECK(!onic_xport_msgq_empty(&q));
    /* The rest, with a push from a callback delivered by the same drain. */
    g.push_from_cb = 1;
    CHECK_EQ(onic_xport_msgq_drain(&q, 10, on_msg, &g), 4);
    CHECK_EQ(g.n, 6);
    CHECK(g.src[2] == 2 && g.src[3] == 3 && g.src[4] == 4 && g.src[5] == 9);
    CHECK_EQ(g.first[5], 90);
    CHECK_EQ(g.nested, 0);
    CHECK(onic_xport_msgq_empty(&q));
    CHECK_EQ(onic_xport_msgq_drain(&q, 10, on_msg, &g), 0);
    /* The largest payload (a mid-size message, copied out to the heap when
     * drained) is taken whole; one byte more is refused. */
    big[0] = 7;
    big[ONIC_XPORT_MID_CAP - 1] = 8;
    CHECK_EQ(onic_xport_msgq_push(&q, 3, NULL, 0, big, ONIC_XPORT_MID_CAP), ONIC_OK);
    CHECK_EQ(onic_xport_msgq_push(&q, 3, NULL, 0, big, ONIC_XPORT_MID_CAP + 1),
             ONIC_ERR_INVALID_PARAM);
    /* So is the largest user header; one byte more is refused. */
    CHECK_EQ(onic_xport_msgq_push(&q, 4, big, ONIC_XPORT_USER_HDR, NULL, 0), ONIC_OK);
    CHECK_EQ(onic_xport_msgq_push(&q, 4, big, ONIC_XPORT_USER_HDR + 1, NULL, 0),
             ONIC_ERR_INVALID_PARAM);
    g.push_from_cb = 0;
    CHECK_EQ(onic_xport_msgq_drain(&q, 10, on_msg, &g), 2);
    CHECK(g.len[6] == ONIC_XPORT_MID_CAP && g.first[6] == 7 && g.last[6] == 8);
    CHECK(g.src[7] == 4 && g.len[7] == 0);
    CHECK(onic_xport_msgq_empty(&q));
    onic_xport_msgq_fini(&q);
    test_send();
    return check_summary("test_msgq");
}
