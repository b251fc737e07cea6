/* The RMA bounce buffer (xport/shm_bounce.c) in its two-thread form: a
 * producer thread streams writes of random sizes (and a refusal now and
 * then) through a small buffer in ordinary memory while a consumer thread
 * checks every chunk's operation, offset and bytes, and refuses some writes
 * so that their status must travel back. Under ThreadSanitizer this also
 * checks the buffer's memory ordering. First the same stream with the two
 * sides taking turns in one thread, where a stall is seen and reported.
 * Then malformed chunks. */
#include "check.h"
#include "base/mem.h"
#include "base/rand.h"
#include "xport/shm_bounce.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#define OPS     3000
#define NCHUNKS 4
#define CHUNK   4096

typedef struct bounce_test {
    void     *bounce;
    uint8_t  *src;         /* the producer's data */
    uint64_t  lens[OPS];
    /* consumer */
    uint64_t  op, offset;  /* where the stream should be */
    uint64_t  bad, errs_seen;
    /* producer */
    uint64_t  done_next;   /* the write expected to finish next */
    uint64_t  done_bad;
} bounce_test_t;

static int op_is_err(uint64_t op)     { return op % 17 == 5; }  /* a refused read */
static int op_refused(uint64_t op)    { return op % 13 == 3; }  /* consumer says no */
static uint8_t op_byte(uint64_t op, uint64_t i) { return (uint8_t)(op * 7 + i * 3 + (i >> 8)); }

static onic_status_t on_chunk(void *arg, const onic_shm_chunk_t *c, const void *data)
{
    bounce_test_t *t = arg;
    const uint8_t *d = data;

    if (c->op != t->op) {
        t->bad++;
        return ONIC_ERR_IO;
    }
    if (op_is_err(c->op)) {
        if (c->kind != ONIC_SHM_CHUNK_READ_ERR || c->status != ONIC_ERR_INVALID_PARAM)
            t->bad++;
        t->errs_seen++;
        t->op++;
        return ONIC_OK;
    }
    if (c->kind != ONIC_SHM_CHUNK_WRITE_DATA || c->offset != t->offset || c->roff != c->op)
        t->bad++;
    for (uint32_t i = 0; i < c->len; i++)
        if (d[i] != op_byte(c->op, c->offset + i)) {
            t->bad++;
            break;
        }
    t->offset += c->len;
    if (t->offset == t->lens[c->op]) {
        t->op++;
        t->offset = 0;
    }
    return op_refused(c->op) ? ONIC_ERR_INVALID_PARAM : ONIC_OK;
}

static void on_write_done(void *arg, uint64_t op, onic_status_t status)
{
    bounce_test_t *t = arg;

    while (op_is_err(t->done_next))
        t->done_next++;  /* refusals are not writes: no completion */
    if (op != t->done_next ||
        status != (op_refused(op) ? ONIC_ERR_INVALID_PARAM : ONIC_OK))
        t->done_bad++;
    t->done_next = op + 1;
}

/* A buffer and OPS writes of random lengths (seed 42) to stream through it. */
static bounce_test_t *stream_new(void)
{
    bounce_test_t *t = onic_calloc(1, sizeof(*t));
    size_t bytes = onic_shm_bounce_size(NCHUNKS, CHUNK);
    onic_rand_t rng;

    REQUIRE(t != NULL);
    t->bounce = onic_aligned_alloc(ONIC_SHM_BOUNCE_ALIGN, bytes);
    t->src = onic_malloc((size_t)OPS * 4 * CHUNK);
    REQUIRE(t->bounce != NULL && t->src != NULL);
    memset(t->bounce, 0, bytes);
    onic_rand_seed(&rng, 42);
    for (uint64_t op = 0; op < OPS; op++) {
        t->lens[op] = 1 + onic_rand_next(&rng) % (3 * CHUNK + 100);
        for (uint64_t i = 0; i < t->lens[op]; i++)
            t->src[op * 4 * CHUNK + i] = op_byte(op, i);
    }
    return t;
}

/* The stream arrived whole: every operation taken in order, the failed
 * writes among them seen as failed, every other completed in order. */
static void check_stream_whole(const bounce_test_t *t, const onic_shm_brx_t *rx)
{
    CHECK(!rx->broken);
    CHECK_EQ(t->op, OPS);
    CHECK_EQ(t->bad, 0);
    CHECK(t->errs_seen > 0);
    CHECK_EQ(t->done_bad, 0);
    CHECK_EQ(t->done_next, OPS - (op_is_err(OPS - 1) ? 1 : 0));
}

/* Pushes the writes from *next_p on until the job queue is full. */
static void stream_push(bounce_test_t *t, onic_shm_btx_t *tx, uint64_t *next_p)
{
    while (*next_p < OPS) {
        uint64_t next = *next_p;
        onic_shm_bjob_t job = {.op = next, .roff = next};
        if (op_is_err(next)) {
            job.kind = ONIC_SHM_CHUNK_READ_ERR;
            job.status = ONIC_ERR_INVALID_PARAM;
        } else {
            job.kind = ONIC_SHM_CHUNK_WRITE_DATA;
            job.src = t->src + next * 4 * CHUNK;
            job.len = t->lens[next];
        }
        if (onic_shm_btx_push(tx, &job) != ONIC_OK)
            break;
        (*next_p)++;
    }
}

static void stream_free(bounce_test_t *t)
{
    onic_free(t->bounce);
    onic_free(t->src);
    onic_free(t);
}

static void *producer(void *arg)
{
    bounce_test_t *t = arg;
    onic_shm_btx_t tx;
    uint64_t next = 0;

    if (onic_shm_btx_init(&tx, t->bounce, NCHUNKS, CHUNK) != ONIC_OK)
        return NULL;
    while (next < OPS || onic_shm_btx_busy(&tx)) {
        stream_push(t, &tx, &next);
        if (onic_shm_btx_progress(&tx, on_write_done, t) == 0)
            sched_yield();
    }
    onic_shm_btx_fini(&tx);
    return NULL;
}

static void test_two_threads(void)
{
    bounce_test_t *t = stream_new();
    onic_shm_brx_t rx;
    pthread_t th;

    onic_shm_brx_init(&rx, t->bounce, NCHUNKS, CHUNK);
    CHECK(pthread_create(&th, NULL, producer, t) == 0);
    while (t->op < OPS && !rx.broken)
        if (onic_shm_brx_poll(&rx, on_chunk, t) == 0)
            sched_yield();
    CHECK(pthread_join(th, NULL) == 0);
    check_stream_whole(t, &rx);
    printf("bounce buffer: %d operations through %d chunks of %d bytes, in order\n", OPS,
           NCHUNKS, CHUNK);
    stream_free(t);
}

/* The same stream with producer and consumer taking turns in one thread.
 * After the consumer's turn every chunk made is taken, so the producer's
 * next turn has the whole buffer back and fills it while writes are left,
 * and a turn in which neither side moves a chunk while the producer still
 * has work is a stall: reported as one, where the two threads would spin
 * for ever (a lost chunk, credit or index). Deterministic. */
static void test_turns(void)
{
    bounce_test_t *t = stream_new();
    onic_shm_btx_t tx;
    onic_shm_brx_t rx;
    uint64_t next = 0, turns = 0;
    int stalled = 0;

    onic_shm_brx_init(&rx, t->bounce, NCHUNKS, CHUNK);
    REQUIRE(onic_shm_btx_init(&tx, t->bounce, NCHUNKS, CHUNK) == ONIC_OK);
    while ((next < OPS || onic_shm_btx_busy(&tx)) && !rx.broken && !stalled) {
        unsigned filled, handled;

        stream_push(t, &tx, &next);
        filled = onic_shm_btx_progress(&tx, on_write_done, t);
        handled = onic_shm_brx_poll(&rx, on_chunk, t);
        /* The consumer takes what the producer made, all of it. */
        if (handled != filled)
            stalled = 1;
        if (filled == 0 && handled == 0 && onic_shm_btx_busy(&tx))
            stalled = 1;
        turns++;
    }
    if (stalled || rx.broken)
        fprintf(stderr, "bounce buffer in turns: %s after %llu turns: %llu of %d writes "
                "pushed, %llu taken, %llu completed, broken: %s\n",
                stalled ? "no progress" : "consumer broke", (unsigned long long)turns,
                (unsigned long long)next, OPS, (unsigned long long)t->op,
                (unsigned long long)t->done_next, rx.broken ? rx.bad : "no");
    CHECK(!stalled);
    check_stream_whole(t, &rx);
    onic_shm_btx_fini(&tx);
    stream_free(t);
}

static onic_status_t count_chunk(void *arg, const onic_shm_chunk_t *c, const void *data)
{
    (void)c;
    (void)data;
    (*(unsigned *)arg)++;
    return ONIC_OK;
}

/* Headers that do not add up break the buffer before anything is handled. */
static void test_malformed(void)
{
    size_t bytes = onic_shm_bounce_size(2, CHUNK);
    void *bounce = onic_aligned_alloc(ONIC_SHM_BOUNCE_ALIGN, bytes);
    onic_shm_chunk_t *h = (onic_shm_chunk_t *)((onic_shm_bounce_t *)bounce + 1);
    static const struct { uint16_t kind; uint32_t len; } bad[] = {
        {ONIC_SHM_CHUNK_WRITE_DATA, CHUNK + 1},  /* longer than a chunk */
        {ONIC_SHM_CHUNK_READ_DATA, 0},           /* data chunk without data */
        {ONIC_SHM_CHUNK_READ_ERR, 5},            /* refusal with data */
        {9, 10},                                 /* unknown kind */
    };

    REQUIRE(bounce != NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        onic_shm_brx_t rx;
        unsigned handled = 0;
        memset(bounce, 0, bytes);
        onic_shm_brx_init(&rx, bounce, 2, CHUNK);
        h->kind = bad[i].kind;
        h->len = bad[i].len;
        h->ready = 1;
        CHECK_EQ(onic_shm_brx_poll(&rx, count_chunk, &handled), 0);
        CHECK(rx.broken);
        CHECK_EQ(handled, 0);
    }
    /* A stale sequence number is not a chunk. */
    {
        onic_shm_brx_t rx;
        unsigned handled = 0;
        memset(bounce, 0, bytes);
        onic_shm_brx_init(&rx, bounce, 2, CHUNK);
        h->kind = ONIC_SHM_CHUNK_WRITE_DATA;
        h->len = 10;
        h->ready = 3;  /* from a previous lap */
        CHECK_EQ(onic_shm_brx_poll(&rx, count_chunk, &handled), 0);
        CHECK(!rx.broken);
    }
    onic_free(bounce);
}

/* A sender's side that cannot get its records says so, and holds nothing
 * (its fini is then harmless). */
static void test_btx_no_memory(void)
{
    size_t bytes = onic_shm_bounce_size(2, CHUNK);
    void *bounce = onic_aligned_alloc(ONIC_SHM_BOUNCE_ALIGN, bytes);
    onic_shm_btx_t tx;

    REQUIRE(bounce != NULL);
    onic_mem_fail_after(0);
    CHECK_EQ(onic_shm_btx_init(&tx, bounce, 2, CHUNK), ONIC_ERR_NO_MEMORY);
    onic_mem_fail_after(-1);
    CHECK_EQ(onic_shm_btx_init(&tx, bounce, 2, CHUNK), ONIC_OK);
    onic_shm_btx_fini(&tx);
    onic_free(bounce);
}

int main(void)
{
    /* In turns first: a buffer broken there would hang the two threads,
     * so they run only after it passed. */
    test_turns();
    if (check_failed == 0)
        test_two_threads();
    else
        fprintf(stderr, "bounce buffer: two threads not run (the buffer failed in turns)\n");
    test_malformed();
    test_btx_no_memory();
    return check_summary("test_shm_bounce");
}
