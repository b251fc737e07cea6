/* The onload rings (src/onload/ring.c): header checks, full and empty
 * rings, wrap-around, a ring the other side corrupts, a randomized
 * sequence against a plain model, and two threads: one producer and one
 * sleeping consumer, then a command ring and an event ring between an
 * "application" and an "engine" thread, each side keeping its own ring
 * drained while the other's is full (how a full ring is handled without
 * ever dropping a record). Under ThreadSanitizer (make test
 * SANITIZE=thread) the threaded parts check the rings' memory ordering. */
#include "check.h"
#include "base/rand.h"
#include "onload/ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static void *ring_mem(uint32_t nrecs, uint32_t rec_size, size_t *bytes_p)
{
    size_t bytes = onic_onload_ring_bytes(nrecs, rec_size);
    void *mem = aligned_alloc(64, bytes);

    if (mem != NULL && onic_onload_ring_format(mem, bytes, nrecs, rec_size) != ONIC_OK) {
        free(mem);
        mem = NULL;
    }
    *bytes_p = bytes;
    return mem;
}

static void test_sizes(void)
{
    size_t bytes;
    onic_onload_ring_t r;
    void *mem;

    CHECK_EQ(onic_onload_ring_bytes(8, 64), 256 + 8 * 64);
    CHECK_EQ(onic_onload_ring_bytes(1, 64), 0);
    CHECK_EQ(onic_onload_ring_bytes(12, 64), 0);
    CHECK_EQ(onic_onload_ring_bytes(8, 96), 0);
    CHECK_EQ(onic_onload_ring_bytes(8, 32), 0);
    CHECK_EQ(onic_onload_ring_bytes(8, 8192), 0);
    CHECK_EQ(onic_onload_ring_bytes(1u << 21, 64), 0);

    mem = ring_mem(8, 128, &bytes);
    CHECK(mem != NULL);
    CHECK_EQ(onic_onload_ring_format(mem, bytes - 1, 8, 128), ONIC_ERR_INVALID_PARAM);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &r), ONIC_OK);
    CHECK_EQ(r.nrecs, 8);
    CHECK_EQ(onic_onload_ring_payload_max(&r), 120);
    /* A mapping smaller than the header says: refused. */
    CHECK_EQ(onic_onload_ring_attach(mem, bytes - 64, &r), ONIC_ERR_INVALID_PARAM);
    CHECK_EQ(onic_onload_ring_attach(mem, 10, &r), ONIC_ERR_INVALID_PARAM);
    /* Another version: refused as unsupported. */
    ((onic_onload_ring_hdr_t *)mem)->version = ONIC_ONLOAD_RING_VERSION + 1;
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &r), ONIC_ERR_UNSUPPORTED);
    ((onic_onload_ring_hdr_t *)mem)->version = ONIC_ONLOAD_RING_VERSION;
    /* Sizes that do not make a ring. */
    ((onic_onload_ring_hdr_t *)mem)->nrecs = 6;
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &r), ONIC_ERR_INVALID_PARAM);
    ((onic_onload_ring_hdr_t *)mem)->nrecs = 8;
    /* Not a ring at all. */
    ((onic_onload_ring_hdr_t *)mem)->magic = 0;
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &r), ONIC_ERR_INVALID_PARAM);
    free(mem);
}

/* Full, empty, order, payloads, wrap-around, with two views of one ring. */
static void test_full_empty(void)
{
    size_t bytes, len;
    onic_onload_ring_t p, c;
    uint8_t buf[4096];
    uint32_t kind;
    void *mem = ring_mem(4, 64, &bytes);

    CHECK(mem != NULL);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &p), ONIC_OK);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &c), ONIC_OK);
    CHECK_EQ(onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len), ONIC_ERR_NO_ELEM);
    CHECK_EQ(onic_onload_ring_room(&p), 4);
    for (uint32_t lap = 0; lap < 5; lap++) {
        for (uint32_t i = 0; i < 4; i++) {
            uint64_t v = lap * 100 + i;
            CHECK_EQ(onic_onload_ring_push(&p, 10 + i, &v, sizeof(v)), ONIC_OK);
        }
        CHECK_EQ(onic_onload_ring_room(&p), 0);
        CHECK_EQ(onic_onload_ring_count(&c), 4);
        /* Full: refused, nothing written, the ring still intact. */
        CHECK_EQ(onic_onload_ring_push(&p, 99, buf, 8), ONIC_ERR_NO_RESOURCE);
        for (uint32_t i = 0; i < 4; i++) {
            uint64_t v = 0;
            CHECK_EQ(onic_onload_ring_pop(&c, &kind, &v, sizeof(v), &len), ONIC_OK);
            CHECK_EQ(kind, 10 + i);
            CHECK_EQ(len, sizeof(v));
            CHECK_EQ(v, lap * 100 + i);
        }
        CHECK_EQ(onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len), ONIC_ERR_NO_ELEM);
    }
    /* Payload limits: an empty record and one filling its slot take one
     * slot, one more byte takes two; the whole ring is the most a record
     * can be, one more byte is an invalid parameter and writes nothing. */
    memset(buf, 0xab, sizeof(buf));
    CHECK_EQ(onic_onload_ring_push(&p, 1, NULL, 0), ONIC_OK);
    CHECK_EQ(onic_onload_ring_push(&p, 2, buf, 56), ONIC_OK);
    CHECK_EQ(onic_onload_ring_room(&p), 2);
    CHECK_EQ(onic_onload_ring_push(&p, 3, buf, 57), ONIC_OK);
    CHECK_EQ(onic_onload_ring_room(&p), 0);
    CHECK_EQ(onic_onload_ring_push(&p, 3, buf, 4 * 64 - 8 + 1), ONIC_ERR_INVALID_PARAM);
    CHECK_EQ(onic_onload_ring_push(&p, 3, NULL, 5), ONIC_ERR_INVALID_PARAM);
    CHECK_EQ(onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len), ONIC_OK);
    CHECK_EQ(kind, 1);
    CHECK_EQ(len, 0);
    memset(buf, 0, sizeof(buf));
    CHECK_EQ(onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len), ONIC_OK);
    CHECK_EQ(len, 56);
    CHECK(buf[0] == 0xab && buf[55] == 0xab && buf[56] == 0);
    /* The two-slot record wraps around the ring's end; a reader with too
     * small a buffer breaks the ring rather than overrun it. */
    memset(buf, 0, sizeof(buf));
    CHECK_EQ(onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len), ONIC_OK);
    CHECK_EQ(kind, 3);
    CHECK_EQ(len, 57);
    CHECK(buf[0] == 0xab && buf[56] == 0xab && buf[57] == 0);
    CHECK_EQ(onic_onload_ring_count(&c), 0);
    for (uint32_t i = 0; i < 4 * 64 - 8; i++)
        buf[i] = (uint8_t)(i * 7 + 1);
    CHECK_EQ(onic_onload_ring_push(&p, 4, buf, 4 * 64 - 8), ONIC_OK); /* the whole ring */
    CHECK_EQ(onic_onload_ring_count(&c), 4);
    {
        uint8_t out[4 * 64];
        int same = 1;
        CHECK_EQ(onic_onload_ring_pop(&c, &kind, out, sizeof(out), &len), ONIC_OK);
        CHECK_EQ(len, 4 * 64 - 8);
        for (uint32_t i = 0; i < len; i++)
            same &= out[i] == (uint8_t)(i * 7 + 1);
        CHECK(same);
        CHECK_EQ(onic_onload_ring_push(&p, 5, buf, 100), ONIC_OK);
        CHECK_EQ(onic_onload_ring_pop(&c, &kind, out, 99, &len), ONIC_ERR_IO);
    }

    /* The consumer sleeping on an empty ring returns after its timeout. */
    onic_onload_ring_sleep(&c, 1000000);
    CHECK_EQ(((onic_onload_ring_hdr_t *)mem)->sleeping, 0);
    free(mem);
}

/* What a misbehaving other side can write: both sides notice and stop. */
static void test_corrupt(void)
{
    size_t bytes, len;
    onic_onload_ring_t p, c;
    onic_onload_ring_hdr_t *h;
    uint8_t buf[128];
    uint32_t kind;
    void *mem = ring_mem(4, 64, &bytes);

    CHECK(mem != NULL);
    h = mem;
    /* A tail beyond what the ring can hold. */
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &c), ONIC_OK);
    h->tail = 5;
    CHECK_EQ(onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len), ONIC_ERR_IO);
    CHECK_EQ(onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len), ONIC_ERR_IO);
    CHECK_EQ(onic_onload_ring_count(&c), 0);

    /* A record longer than a record. */
    CHECK_EQ(onic_onload_ring_format(mem, bytes, 4, 64), ONIC_OK);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &p), ONIC_OK);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &c), ONIC_OK);
    CHECK_EQ(onic_onload_ring_push(&p, 1, buf, 8), ONIC_OK);
    ((onic_onload_rec_hdr_t *)(h + 1))->len = 1000;
    CHECK_EQ(onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len), ONIC_ERR_IO);

    /* A head past the tail, and a head that goes back. */
    CHECK_EQ(onic_onload_ring_format(mem, bytes, 4, 64), ONIC_OK);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &p), ONIC_OK);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(onic_onload_ring_push(&p, 1, buf, 8), ONIC_OK);
    h->head = 9;
    CHECK_EQ(onic_onload_ring_push(&p, 1, buf, 8), ONIC_ERR_IO);
    CHECK_EQ(onic_onload_ring_room(&p), 0);

    CHECK_EQ(onic_onload_ring_format(mem, bytes, 4, 64), ONIC_OK);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &p), ONIC_OK);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(onic_onload_ring_push(&p, 1, buf, 8), ONIC_OK);
    h->head = 2;
    CHECK_EQ(onic_onload_ring_push(&p, 1, buf, 8), ONIC_OK);
    CHECK_EQ(onic_onload_ring_push(&p, 1, buf, 8), ONIC_OK);
    CHECK_EQ(onic_onload_ring_push(&p, 1, buf, 8), ONIC_ERR_NO_RESOURCE);
    h->head = 1;
    CHECK_EQ(onic_onload_ring_push(&p, 1, buf, 8), ONIC_ERR_IO);
    free(mem);
}

/* Random pushes and pops against a model (a plain array of what is queued). */
static void test_random(uint64_t seed)
{
    enum { NRECS = 16, OPS = 200000 };
    size_t bytes, len;
    onic_onload_ring_t p, c;
    uint8_t buf[256], out[256];
    uint64_t model_kind[NRECS], model_len[NRECS];
    uint64_t pushed = 0, popped = 0;
    uint32_t kind;
    onic_rand_t rnd;
    void *mem = ring_mem(NRECS, 256, &bytes);

    CHECK(mem != NULL);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &p), ONIC_OK);
    CHECK_EQ(onic_onload_ring_attach(mem, bytes, &c), ONIC_OK);
    onic_rand_seed(&rnd, seed);
    for (unsigned op = 0; op < OPS; op++) {
        /* Phases that fill and phases that drain, so both ends are hit. */
        unsigned push_bias = (op / 1000) % 2 ? 70 : 30;
        if (onic_rand_below(&rnd, 100) < push_bias) {
            size_t l = onic_rand_below(&rnd, 249);
            for (size_t i = 0; i < l; i++)
                buf[i] = (uint8_t)(pushed * 7 + i);
            onic_status_t st = onic_onload_ring_push(&p, (uint32_t)pushed, buf, l);
            if (pushed - popped == NRECS) {
                REQUIRE(st == ONIC_ERR_NO_RESOURCE);
            } else {
                REQUIRE(st == ONIC_OK);
                model_kind[pushed % NRECS] = pushed;
                model_len[pushed % NRECS] = l;
                pushed++;
            }
        } else {
            onic_status_t st = onic_onload_ring_pop(&c, &kind, out, sizeof(out), &len);
            if (pushed == popped) {
                REQUIRE(st == ONIC_ERR_NO_ELEM);
            } else {
                REQUIRE(st == ONIC_OK);
                REQUIRE(kind == model_kind[popped % NRECS]);
                REQUIRE(len == model_len[popped % NRECS]);
                for (size_t i = 0; i < len; i++)
                    REQUIRE(out[i] == (uint8_t)(popped * 7 + i));
                popped++;
            }
        }
        if (op % 997 == 0)
            REQUIRE(onic_onload_ring_count(&c) == pushed - popped);
    }
    CHECK(pushed > OPS / 4 && popped > OPS / 4);
    free(mem);
}

/* --- two threads -------------------------------------------------------- */

typedef struct stream {
    void    *mem;
    size_t   bytes;
    uint64_t count;
    uint64_t bad;
    uint64_t full;   /* pushes refused because the ring was full */
    uint64_t sleeps;
} stream_t;

static size_t stream_len(uint64_t seq, size_t max)
{
    return (size_t)((seq * 2654435761u) % (max + 1));
}

static void *stream_producer(void *arg)
{
    stream_t *t = arg;
    onic_onload_ring_t p;
    uint8_t buf[ONIC_ONLOAD_REC_MAX];

    if (onic_onload_ring_attach(t->mem, t->bytes, &p) != ONIC_OK)
        return NULL;
    for (uint64_t seq = 0; seq < t->count; seq++) {
        size_t len = stream_len(seq, onic_onload_ring_payload_max(&p));
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)(seq + i);
        if (len >= sizeof(seq))
            memcpy(buf, &seq, sizeof(seq));
        onic_status_t st;
        while ((st = onic_onload_ring_push(&p, (uint32_t)seq, buf, len)) == ONIC_ERR_NO_RESOURCE) {
            t->full++;
            sched_yield();
        }
        if (st != ONIC_OK)
            t->bad++;
        /* Pause now and then so the consumer finds the ring empty and sleeps. */
        if (seq % 4096 == 0)
            sched_yield();
    }
    return NULL;
}

static void *stream_consumer(void *arg)
{
    stream_t *t = arg;
    onic_onload_ring_t c;
    uint8_t buf[ONIC_ONLOAD_REC_MAX];
    uint64_t seq = 0;

    if (onic_onload_ring_attach(t->mem, t->bytes, &c) != ONIC_OK)
        return NULL;
    while (seq < t->count) {
        uint32_t kind;
        size_t len;
        onic_status_t st = onic_onload_ring_pop(&c, &kind, buf, sizeof(buf), &len);
        if (st == ONIC_ERR_NO_ELEM) {
            /* Long timeout: a lost wake-up would show as a slow test. */
            onic_onload_ring_sleep(&c, 2000000000ull);
            t->sleeps++;
            continue;
        }
        if (st != ONIC_OK || kind != (uint32_t)seq ||
            len != stream_len(seq, onic_onload_ring_payload_max(&c))) {
            t->bad++;
            break;
        }
        for (size_t i = len >= sizeof(seq) ? sizeof(seq) : 0; i < len; i++)
            if (buf[i] != (uint8_t)(seq + i))
                t->bad++;
        if (len >= sizeof(seq) && memcmp(buf, &seq, sizeof(seq)) != 0)
            t->bad++;
        seq++;
    }
    return NULL;
}

static void test_threads(uint32_t nrecs, uint32_t rec_size, uint64_t count)
{
    stream_t t = {0};
    pthread_t pt, ct;

    t.mem = ring_mem(nrecs, rec_size, &t.bytes);
    t.count = count;
    CHECK(t.mem != NULL);
    CHECK(pthread_create(&ct, NULL, stream_consumer, &t) == 0);
    CHECK(pthread_create(&pt, NULL, stream_producer, &t) == 0);
    CHECK(pthread_join(pt, NULL) == 0);
    CHECK(pthread_join(ct, NULL) == 0);
    CHECK_EQ(t.bad, 0);
    printf("  threads %u x %u B: %llu records, %llu full, %llu sleeps\n", nrecs, rec_size,
           (unsigned long long)count, (unsigned long long)t.full, (unsigned long long)t.sleeps);
    free(t.mem);
}

/* An application and an engine: commands one way, events the other, every
 * command answered by two events (so the event ring fills faster than the
 * command ring). A side whose outgoing ring is full drains its incoming
 * ring and retries: neither blocks the other and nothing is dropped. */
typedef struct duplex {
    void    *cmd, *evt;
    size_t   cmd_bytes, evt_bytes;
    uint64_t commands;
    uint64_t bad, cmd_full, evt_full;
} duplex_t;

static void *duplex_engine(void *arg)
{
    duplex_t *d = arg;
    onic_onload_ring_t cmd, evt;
    uint8_t buf[ONIC_ONLOAD_REC_MAX];
    uint64_t seen = 0, evseq = 0;

    if (onic_onload_ring_attach(d->cmd, d->cmd_bytes, &cmd) != ONIC_OK ||
        onic_onload_ring_attach(d->evt, d->evt_bytes, &evt) != ONIC_OK)
        return NULL;
    while (seen < d->commands) {
        uint32_t kind;
        size_t len;
        uint64_t v;
        onic_status_t st = onic_onload_ring_pop(&cmd, &kind, buf, sizeof(buf), &len);
        if (st == ONIC_ERR_NO_ELEM) {
            onic_onload_ring_sleep(&cmd, 2000000000ull);
            continue;
        }
        if (st != ONIC_OK || len != sizeof(v)) {
            d->bad++;
            break;
        }
        memcpy(&v, buf, sizeof(v));
        if (v != seen++)
            d->bad++;
        for (int i = 0; i < 2; i++, evseq++) {
            /* The application drains its events itself: the engine only
             * retries (it never reads the application's rings for it). */
            while (onic_onload_ring_push(&evt, 7, &evseq, sizeof(evseq)) == ONIC_ERR_NO_RESOURCE) {
                d->evt_full++;
                sched_yield();
            }
        }
    }
    return NULL;
}

static void *duplex_app(void *arg)
{
    duplex_t *d = arg;
    onic_onload_ring_t cmd, evt;
    uint8_t buf[ONIC_ONLOAD_REC_MAX];
    uint64_t sent = 0, events = 0;

    if (onic_onload_ring_attach(d->cmd, d->cmd_bytes, &cmd) != ONIC_OK ||
        onic_onload_ring_attach(d->evt, d->evt_bytes, &evt) != ONIC_OK)
        return NULL;
    while (events < 2 * d->commands) {
        uint32_t kind;
        size_t len;
        onic_status_t st;
        if (sent < d->commands) {
            st = onic_onload_ring_push(&cmd, 1, &sent, sizeof(sent));
            if (st == ONIC_OK) {
                sent++;
                continue;
            }
            if (st != ONIC_ERR_NO_RESOURCE) {
                d->bad++;
                break;
            }
            d->cmd_full++;
        }
        /* Progress: the command ring is full or everything is sent. */
        st = onic_onload_ring_pop(&evt, &kind, buf, sizeof(buf), &len);
        if (st == ONIC_ERR_NO_ELEM) {
            if (sent == d->commands)
                onic_onload_ring_sleep(&evt, 2000000000ull);
            else
                sched_yield();
            continue;
        }
        uint64_t v;
        if (st != ONIC_OK || kind != 7 || len != sizeof(v)) {
            d->bad++;
            break;
        }
        memcpy(&v, buf, sizeof(v));
        if (v != events++)
            d->bad++;
    }
    return NULL;
}

static void test_duplex(uint64_t commands)
{
    duplex_t d = {0};
    pthread_t at, et;

    d.cmd = ring_mem(8, 64, &d.cmd_bytes);
    d.evt = ring_mem(4, 64, &d.evt_bytes);
    d.commands = commands;
    CHECK(d.cmd != NULL && d.evt != NULL);
    CHECK(pthread_create(&et, NULL, duplex_engine, &d) == 0);
    CHECK(pthread_create(&at, NULL, duplex_app, &d) == 0);
    CHECK(pthread_join(at, NULL) == 0);
    CHECK(pthread_join(et, NULL) == 0);
    CHECK_EQ(d.bad, 0);
    CHECK(d.cmd_full > 0 || d.evt_full > 0);
    printf("  duplex: %llu commands, command ring full %llu times, event ring full %llu times\n",
           (unsigned long long)commands, (unsigned long long)d.cmd_full,
           (unsigned long long)d.evt_full);
    free(d.cmd);
    free(d.evt);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x0410ad;

    test_sizes();
    test_full_empty();
    test_corrupt();
    test_random(seed);
    test_random(seed + 1);
    test_threads(2, 64, 200000);
    test_threads(64, 256, 200000);
    test_threads(8, 4096, 20000);
    test_duplex(100000);
    return check_summary("onload_ring");
}
