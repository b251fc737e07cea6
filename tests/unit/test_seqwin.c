/* The sequence window (xport/seqwin.h), which puts one sender's messages
 * back in order when a provider completes them out of order. Deterministic
 * cases first: in order, one early message, a duplicate, a number beyond
 * the window, an old number, a duplicate of a held next one, the 16-bit
 * wrap. Then a randomized run per
 * window size against the simplest reference, the sending order itself: a
 * sender keeps up to `size` numbered messages in flight (credits come back
 * as messages are handed up), the provider completes a random one of those
 * in flight each step, held messages are handed up a few per step (a poll's
 * budget), and everything handed up must come out 0, 1, 2, ...
 * with no verdict BAD, across several wraps of the numbers.
 *
 *   test_seqwin [--seed S] */
#include "check.h"
#include "base/rand.h"
#include "xport/seqwin.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void test_fixed(void)
{
    onic_seqwin_t w;
    int items[8];

    onic_seqwin_init(&w, 4);
    CHECK_EQ(onic_seqwin_check(&w, 0), ONIC_SEQWIN_NEXT);
    onic_seqwin_advance(&w);
    CHECK(onic_seqwin_take(&w) == NULL);
    /* 2 before 1: held, then handed up after 1 */
    CHECK_EQ(onic_seqwin_check(&w, 2), ONIC_SEQWIN_HOLD);
    CHECK_EQ(onic_seqwin_hold(&w, 2, &items[2]), ONIC_OK);
    CHECK_EQ(onic_seqwin_check(&w, 2), ONIC_SEQWIN_BAD); /* twice */
    CHECK(onic_seqwin_take(&w) == NULL);                 /* 1 is next, not 2 */
    CHECK_EQ(onic_seqwin_check(&w, 1), ONIC_SEQWIN_NEXT);
    onic_seqwin_advance(&w);
    CHECK(onic_seqwin_take(&w) == &items[2]);
    onic_seqwin_advance(&w);
    CHECK(onic_seqwin_take(&w) == NULL);
    CHECK_EQ(w.nheld, 0);
    /* next is 3: 3..6 are in the window of 4, 7 is not, 2 is old */
    CHECK_EQ(onic_seqwin_check(&w, 6), ONIC_SEQWIN_HOLD);
    CHECK_EQ(onic_seqwin_check(&w, 7), ONIC_SEQWIN_BAD);
    CHECK_EQ(onic_seqwin_check(&w, 2), ONIC_SEQWIN_BAD);
    /* 4 held, then 3 handed up: 4 is next and ready, still held (left for
     * a later poll), and a second 4 is a duplicate, not the next. */
    CHECK_EQ(onic_seqwin_hold(&w, 4, &items[4]), ONIC_OK);
    CHECK(!onic_seqwin_ready(&w));
    CHECK_EQ(onic_seqwin_check(&w, 3), ONIC_SEQWIN_NEXT);
    onic_seqwin_advance(&w);
    CHECK(onic_seqwin_ready(&w));
    CHECK_EQ(onic_seqwin_check(&w, 4), ONIC_SEQWIN_BAD);
    CHECK(onic_seqwin_take(&w) == &items[4]);
    onic_seqwin_advance(&w);
    CHECK(!onic_seqwin_ready(&w));
    onic_seqwin_fini(&w);

    /* Across the wrap, with a window that is not a power of two. */
    onic_seqwin_init(&w, 3);
    w.next = 65534;
    CHECK_EQ(onic_seqwin_check(&w, 0), ONIC_SEQWIN_HOLD);
    CHECK_EQ(onic_seqwin_hold(&w, 0, &items[0]), ONIC_OK);
    CHECK_EQ(onic_seqwin_check(&w, 65535), ONIC_SEQWIN_HOLD);
    CHECK_EQ(onic_seqwin_hold(&w, 65535, &items[1]), ONIC_OK);
    CHECK_EQ(onic_seqwin_check(&w, 1), ONIC_SEQWIN_BAD);
    CHECK_EQ(onic_seqwin_check(&w, 65534), ONIC_SEQWIN_NEXT);
    onic_seqwin_advance(&w);
    CHECK(onic_seqwin_take(&w) == &items[1]);
    onic_seqwin_advance(&w);
    CHECK(onic_seqwin_take(&w) == &items[0]);
    onic_seqwin_advance(&w);
    CHECK_EQ(w.next, 1);
    CHECK_EQ(w.nheld, 0);
    onic_seqwin_fini(&w);

    /* Sizes are kept within 1..ONIC_SEQWIN_MAX. */
    onic_seqwin_init(&w, 0);
    CHECK_EQ(w.size, 1);
    CHECK_EQ(onic_seqwin_check(&w, 1), ONIC_SEQWIN_BAD);
    onic_seqwin_init(&w, 1u << 20);
    CHECK_EQ(w.size, ONIC_SEQWIN_MAX);
    CHECK_EQ(onic_seqwin_check(&w, (uint16_t)(ONIC_SEQWIN_MAX - 1)), ONIC_SEQWIN_HOLD);
    CHECK_EQ(onic_seqwin_check(&w, (uint16_t)ONIC_SEQWIN_MAX), ONIC_SEQWIN_BAD);
}

/* One run: `total` messages through a window of `size`. */
static void test_random(uint32_t size, uint32_t total, uint64_t seed)
{
    onic_seqwin_t w;
    onic_rand_t rng;
    uint32_t *flight = malloc(size * sizeof(*flight)); /* sent, not yet completed */
    uint32_t *items = malloc(size * 2 * sizeof(*items));
    uint32_t nflight = 0, sent = 0, handed = 0, bad = 0, order_errors = 0, max_held = 0;

    onic_rand_seed(&rng, seed ^ size);
    onic_seqwin_init(&w, size);
    while (handed < total && flight != NULL && items != NULL) {
        uint32_t k, msg, *held;
        /* A poll hands up held messages within its budget, and leaves the
         * rest (ready or not) for the next. */
        for (unsigned budget = onic_rand_below(&rng, 4);
             budget > 0 && (held = onic_seqwin_take(&w)) != NULL; budget--) {
            order_errors += *held != handed;
            handed++;
            onic_seqwin_advance(&w);
        }
        /* Send what the credits allow, a random number of them. */
        while (sent < total && sent - handed < size && onic_rand_below(&rng, 3) != 0)
            flight[nflight++] = sent++;
        if (nflight == 0) {
            if (onic_seqwin_ready(&w))
                continue;
            if (sent - handed == size || sent == total)
                break; /* all sent completed, yet some never handed up: lost */
            continue;
        }
        k = onic_rand_below(&rng, nflight);
        msg = flight[k];
        flight[k] = flight[--nflight];
        switch (onic_seqwin_check(&w, (uint16_t)msg)) {
        case ONIC_SEQWIN_BAD:
            bad++;
            break;
        case ONIC_SEQWIN_HOLD:
            /* The item is the message's number, kept in a slot of its own. */
            items[msg % (size * 2)] = msg;
            if (onic_seqwin_hold(&w, (uint16_t)msg, &items[msg % (size * 2)]) != ONIC_OK)
                bad++;
            if (w.nheld > max_held)
                max_held = w.nheld;
            break;
        case ONIC_SEQWIN_NEXT:
            order_errors += msg != handed;
            handed++;
            onic_seqwin_advance(&w);
            break;
        }
        if (bad > 0)
            break;
    }
    REQUIRE(flight != NULL && items != NULL);
    CHECK_EQ(bad, 0);
    CHECK_EQ(order_errors, 0);
    CHECK_EQ(handed, total);
    CHECK_EQ(w.nheld, 0);
    CHECK(max_held <= size); /* never more than the credits let fly */
    CHECK(size < 4 || max_held > 1); /* the run did complete out of order */
    if (bad > 0 || order_errors > 0)
        fprintf(stderr, "seqwin: size %u, seed %llu: %u bad, %u out of order after %u\n", size,
                (unsigned long long)seed, bad, order_errors, handed);
    onic_seqwin_fini(&w);
    free(flight);
    free(items);
}

int main(int argc, char **argv)
{
    static const uint32_t sizes[] = {1, 2, 3, 4, 34, 256, 1000, ONIC_SEQWIN_MAX};
    uint64_t seed = (uint64_t)time(NULL);

    if (argc == 3 && strcmp(argv[1], "--seed") == 0)
        seed = strtoull(argv[2], NULL, 0);
    printf("seqwin: seed %llu\n", (unsigned long long)seed);
    test_fixed();
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        test_random(sizes[i], 3 * 65536 + 12345, seed);
    return check_summary("seqwin");
}
