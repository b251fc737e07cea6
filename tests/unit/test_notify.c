/* The transport's notification queue (xport/notify.h) in one thread:
 * completions come out in the order posted, also across a growth of the
 * ring while its notes wrap around its end, and a reservation that cannot
 * get memory says so and posts nothing. Deterministic. */
#include "check.h"
#include "base/mem.h"
#include "xport/notify.h"

#include <stdint.h>

typedef struct seen {
    uintptr_t next;  /* the ctx expected next */
    unsigned  bad;
} seen_t;

static void on_note(void *arg, void *ctx, onic_status_t status)
{
    seen_t *s = arg;

    s->bad += (uintptr_t)ctx != s->next || status != (onic_status_t)((uintptr_t)ctx % 3);
    s->next++;
}

static void post_n(onic_xport_notify_t *q, uintptr_t *ctx, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        REQUIRE(onic_xport_notify_reserve(q) == ONIC_OK);
        onic_xport_notify_post(q, (void *)*ctx, (onic_status_t)(*ctx % 3));
        (*ctx)++;
    }
}

int main(void)
{
    onic_xport_notify_t q = {0};
    seen_t s = {1, 0};
    uintptr_t ctx = 1;

    /* No memory for the first ring: refused, nothing reserved. */
    onic_mem_fail_after(0);
    CHECK_EQ(onic_xport_notify_reserve(&q), ONIC_ERR_NO_MEMORY);
    onic_mem_fail_after(-1);
    CHECK_EQ(q.reserved, 0);
    /* 40 through, so the next notes wrap around the ring's end... */
    post_n(&q, &ctx, 40);
    CHECK_EQ(onic_xport_notify_drain(&q, on_note, &s), 40);
    post_n(&q, &ctx, 60);
    /* ...and more than the ring holds: it grows with notes wrapped. */
    post_n(&q, &ctx, 100);
    CHECK_EQ(onic_xport_notify_drain(&q, on_note, &s), 160);
    CHECK_EQ(s.next, 201);
    CHECK_EQ(s.bad, 0);
    CHECK(onic_xport_notify_empty(&q));
    onic_xport_notify_fini(&q);
    return check_summary("test_notify");
}
