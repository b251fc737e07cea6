/* The transport's message queue (xport/msgq.h) in one thread: records come
 * out oldest first, a drain delivers at most its budget and keeps the rest,
 * callbacks may push (delivered by the same drain, budget allowing), a
 * nested drain delivers nothing, and a payload over ONIC_XPORT_MAX_PAYLOAD
 * or a user header over ONIC_XPORT_USER_HDR is refused with nothing queued.
 * Deterministic. */
#include "check.h"
#include "xport/msgq.h"

#include <string.h>

typedef struct got {
    onic_xport_msgq_t *q;
    unsigned           n;
    uint32_t           src[16];
    uint8_t            first[16];
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
        g->len[g->n] = len;
    }
    g->n++;
    g->nested += onic_xport_msgq_drain(g->q, 10, on_msg, g);
    if (g->push_from_cb && src == 2) {
        uint8_t b = 90;
        CHECK_EQ(onic_xport_msgq_push(g->q, 9, "h", 1, &b, 1), ONIC_OK);
    }
}

int main(void)
{
    static uint8_t big[ONIC_XPORT_MAX_PAYLOAD + 1];
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
    /* The largest payload is taken whole; one byte more is refused. */
    big[0] = 7;
    CHECK_EQ(onic_xport_msgq_push(&q, 3, NULL, 0, big, ONIC_XPORT_MAX_PAYLOAD), ONIC_OK);
    CHECK_EQ(onic_xport_msgq_push(&q, 3, NULL, 0, big, ONIC_XPORT_MAX_PAYLOAD + 1),
             ONIC_ERR_INVALID_PARAM);
    /* So is the largest user header; one byte more is refused. */
    CHECK_EQ(onic_xport_msgq_push(&q, 4, big, ONIC_XPORT_USER_HDR, NULL, 0), ONIC_OK);
    CHECK_EQ(onic_xport_msgq_push(&q, 4, big, ONIC_XPORT_USER_HDR + 1, NULL, 0),
             ONIC_ERR_INVALID_PARAM);
    g.push_from_cb = 0;
    CHECK_EQ(onic_xport_msgq_drain(&q, 10, on_msg, &g), 2);
    CHECK(g.len[6] == ONIC_XPORT_MAX_PAYLOAD && g.first[6] == 7);
    CHECK(g.src[7] == 4 && g.len[7] == 0);
    CHECK(onic_xport_msgq_empty(&q));
    onic_xport_msgq_fini(&q);
    return check_summary("test_msgq");
}
