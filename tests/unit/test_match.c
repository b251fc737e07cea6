/* The matching rules every engine must keep, run against each engine (and the
 * alpu engine again with its unit loaded from the first entry, hash again
 * with its ring's tags compared without SSE2). */
#include "check.h"
#include "base/log.h"
#include "base/mem.h"
#include "match/engine.h"

#include <stdlib.h>
#include <string.h>

typedef struct engine_case {
    const char *engine;
    const char *label;
    void (*tune)(onic_config_t *cfg);
} engine_case_t;

static void tune_none(onic_config_t *cfg) { (void)cfg; }
static void tune_hash_scalar(onic_config_t *cfg) { cfg->simd = ONIC_SIMD_SCALAR; }
static void tune_alpu_small(onic_config_t *cfg)
{
    cfg->alpu_cells = 8;
    cfg->alpu_block = 2;
    cfg->alpu_threshold = 0;
}

static const engine_case_t cases[] = {
    {"list", "list", tune_none},
    {"hash", "hash", tune_none},
    {"hash", "hash(ring tags without SSE2)", tune_hash_scalar},
    {"alpu", "alpu", tune_none},
    {"alpu", "alpu(8 cells, threshold 0)", tune_alpu_small},
    {"wide", "wide", tune_none},
};

static const engine_case_t *cur;

static onic_matcher_t *make(void)
{
    onic_config_t cfg;
    onic_matcher_t *m = NULL;

    onic_config_defaults(&cfg);
    cur->tune(&cfg);
    CHECK(onic_matcher_create_cfg(cur->engine, &cfg, &m) == ONIC_OK);
    CHECK(m != NULL && strcmp(onic_matcher_engine(m), cur->engine) == 0);
    return m;
}

static onic_mkey_t key_of(int ctx, int src, int tag, onic_mkey_t *ignore_p)
{
    onic_mkey_t key, ignore;
    onic_status_t s = onic_match_mpi_encode((uint64_t)ctx, src, tag, &key, &ignore);
    CHECK(s == ONIC_OK);
    *ignore_p = ignore;
    return key;
}

/* Append an MPI receive (ctx, src, tag) with cookie c. */
static onic_mentry_t *post(onic_matcher_t *m, int ctx, int src, int tag, uintptr_t c)
{
    onic_mkey_t ignore, key = key_of(ctx, src, tag, &ignore);
    onic_mentry_t *e = NULL;
    CHECK(onic_matcher_append(m, key, ignore, (void *)c, &e) == ONIC_OK);
    CHECK(e != NULL);
    return e;
}

/* Match (or peek) with an MPI envelope, wildcards allowed; cookie or 0. */
static uintptr_t arrive(onic_matcher_t *m, int ctx, int src, int tag, int remove)
{
    onic_mkey_t ignore, key = key_of(ctx, src, tag, &ignore);
    void *c = remove ? onic_matcher_match(m, key, ignore) : onic_matcher_peek(m, key, ignore);
    return (uintptr_t)c;
}

static void test_empty(void)
{
    onic_matcher_t *m = make();
    onic_match_stats_t st;

    CHECK_EQ(onic_matcher_length(m), 0);
    CHECK_EQ(arrive(m, 0, 1, 2, 1), 0);
    CHECK_EQ(arrive(m, 0, -1, -1, 0), 0);
    onic_matcher_stats(m, &st);
    CHECK_EQ(st.lookups, 2);
    CHECK_EQ(st.hits, 0);
    onic_matcher_destroy(m);
}

/* Posted receives: wildcard entries, exact headers. */
static void test_oldest_wins_posted(void)
{
    onic_matcher_t *m = make();

    post(m, 1, -1, 5, 1);  /* ANY_SOURCE, older */
    post(m, 1, 3, 5, 2);   /* exact, younger */
    post(m, 1, 3, -1, 3);  /* ANY_TAG */
    post(m, 1, -1, -1, 4); /* both */
    CHECK_EQ(arrive(m, 1, 3, 5, 1), 1);
    CHECK_EQ(arrive(m, 1, 3, 5, 1), 2);
    CHECK_EQ(arrive(m, 1, 3, 5, 1), 3);
    CHECK_EQ(arrive(m, 2, 3, 5, 1), 0); /* another context never matches */
    CHECK_EQ(arrive(m, 1, 3, 5, 1), 4);
    CHECK_EQ(arrive(m, 1, 3, 5, 1), 0);
    CHECK_EQ(onic_matcher_length(m), 0);

    /* Exact first, then a wildcard: the exact one is older and wins. */
    post(m, 1, 3, 5, 10);
    post(m, 1, -1, 5, 11);
    CHECK_EQ(arrive(m, 1, 7, 5, 1), 11); /* only the wildcard fits source 7 */
    CHECK_EQ(arrive(m, 1, 3, 5, 1), 10);
    onic_matcher_destroy(m);
}

/* Unexpected headers: exact entries, wildcard queries. */
static void test_oldest_wins_unexpected(void)
{
    onic_matcher_t *m = make();

    post(m, 0, 4, 9, 1);
    post(m, 0, 2, 7, 2);
    post(m, 0, 2, 9, 3);
    post(m, 0, 5, 7, 4);
    CHECK_EQ(arrive(m, 0, 2, -1, 1), 2);  /* ANY_TAG from 2: oldest is tag 7 */
    CHECK_EQ(arrive(m, 0, -1, 9, 1), 1);  /* ANY_SOURCE tag 9: oldest from 4 */
    CHECK_EQ(arrive(m, 0, -1, -1, 0), 3); /* probe both: oldest left */
    CHECK_EQ(arrive(m, 0, -1, 7, 1), 4);
    CHECK_EQ(arrive(m, 0, -1, -1, 1), 3);
    CHECK_EQ(onic_matcher_length(m), 0);
    onic_matcher_destroy(m);
}

static void test_peek_keeps(void)
{
    onic_matcher_t *m = make();

    post(m, 0, 1, 1, 1);
    post(m, 0, 1, 1, 2);
    CHECK_EQ(arrive(m, 0, 1, 1, 0), 1);
    CHECK_EQ(arrive(m, 0, 1, 1, 0), 1);
    CHECK_EQ(onic_matcher_length(m), 2);
    CHECK_EQ(arrive(m, 0, 1, 1, 1), 1);
    CHECK_EQ(arrive(m, 0, 1, 1, 0), 2);
    CHECK_EQ(onic_matcher_length(m), 1);
    onic_matcher_destroy(m);
}

static void test_remove(void)
{
    onic_matcher_t *m = make();
    onic_mentry_t *a = post(m, 0, 1, 1, 1);
    onic_mentry_t *b = post(m, 0, 1, 1, 2);
    onic_match_stats_t st;

    post(m, 0, 1, 1, 3);
    CHECK(onic_matcher_remove(m, b) == ONIC_OK);
    CHECK_EQ(onic_matcher_length(m), 2);
    CHECK(onic_matcher_remove(m, b) == ONIC_ERR_NO_ELEM); /* twice */
    CHECK_EQ(arrive(m, 0, 1, 1, 1), 1);
    CHECK(onic_matcher_remove(m, a) == ONIC_ERR_NO_ELEM); /* already matched */
    CHECK_EQ(arrive(m, 0, 1, 1, 1), 3);
    CHECK(onic_matcher_remove(m, NULL) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_matcher_remove(NULL, a) == ONIC_ERR_INVALID_PARAM);
    onic_matcher_stats(m, &st);
    CHECK_EQ(st.removes, 1);
    CHECK_EQ(st.appends, 3);
    CHECK_EQ(st.hits, 2);
    CHECK_EQ(st.max_length, 3);
    onic_matcher_destroy(m);
}

/* Many removals in a long queue (holes, compaction, unit reloads): the
 * survivors still come out oldest first. */
static void test_order_after_removals(void)
{
    enum { N = 1000 };
    onic_matcher_t *m = make();
    static onic_mentry_t *e[N];
    uintptr_t expect = 0;

    for (int i = 0; i < N; i++)
        e[i] = post(m, 3, i % 7, i % 5, (uintptr_t)i + 1);
    for (int i = 0; i < N; i++)
        if (i % 3 != 0)
            CHECK(onic_matcher_remove(m, e[i]) == ONIC_OK);
    CHECK_EQ(onic_matcher_length(m), (N + 2) / 3);
    /* Exact queries interleaved with full wildcards. */
    for (int i = 0; i < N; i += 3) {
        uintptr_t got = (i / 3) % 2 ? arrive(m, 3, i % 7, i % 5, 1) : arrive(m, 3, -1, -1, 1);
        CHECK_EQ(got, (uintptr_t)i + 1);
        CHECK(got > expect);
        expect = got;
    }
    CHECK_EQ(onic_matcher_length(m), 0);
    onic_matcher_destroy(m);
}

/* A long queue with the match deep inside, for every wildcard shape. */
static void test_long_queue(void)
{
    enum { N = 600 };
    onic_matcher_t *m = make();

    for (int i = 0; i < N; i++)
        post(m, 0, i, i, (uintptr_t)i + 1);
    post(m, 0, -1, 77, 5000);   /* ANY_SOURCE, youngest */
    CHECK_EQ(arrive(m, 0, 599, 599, 0), 600);
    CHECK_EQ(arrive(m, 0, 12345, 77, 1), 5000); /* only the wildcard fits */
    CHECK_EQ(arrive(m, 0, 77, 77, 1), 78);
    CHECK_EQ(arrive(m, 0, 77, 77, 1), 0);
    CHECK_EQ(arrive(m, 0, -1, 300, 1), 301);   /* wildcard query into exact entries */
    CHECK_EQ(arrive(m, 0, 400, -1, 1), 401);
    CHECK_EQ(arrive(m, 0, -1, -1, 1), 1);
    CHECK_EQ(onic_matcher_length(m), N - 4);
    onic_matcher_destroy(m);
}

/* Portals-style masks that are not MPI's: arbitrary ignore bits. */
static void test_portals_masks(void)
{
    onic_matcher_t *m = make();
    onic_mkey_t none = {0, 0};

    for (uint64_t i = 0; i < 40; i++) {
        onic_mkey_t key = {i << 8, i % 3};
        onic_mkey_t ign = {(i % 4) == 0 ? 0xffull : (1ull << (i % 16)), 0};
        CHECK(onic_matcher_append(m, key, ign, (void *)(uintptr_t)(i + 1), NULL) == ONIC_OK);
    }
    /* Entry 20 ignores the low byte: a header with junk there still hits it. */
    onic_mkey_t hdr = {(20ull << 8) | 0x5a, 20 % 3};
    CHECK_EQ((uintptr_t)onic_matcher_match(m, hdr, none), 21);
    onic_mkey_t hdr2 = {(21ull << 8) | (1ull << 5), 0};
    CHECK_EQ((uintptr_t)onic_matcher_match(m, hdr2, none), 22); /* entry 21 ignores bit 5 */
    onic_mkey_t wild = {0, 0}, wild_ign = {~0ull, ~0ull};
    CHECK_EQ((uintptr_t)onic_matcher_match(m, wild, wild_ign), 1);
    onic_matcher_destroy(m);
}

static void test_out_of_memory(void)
{
    onic_matcher_t *m = make();
    onic_mkey_t key = {1, 2}, none = {0, 0};
    size_t n = 0;
    onic_status_t s = ONIC_OK;

    /* Fill past the first pool chunk and build any lazy index, then append
     * until the pool or the engine needs memory that is not there. */
    for (; n < 300; n++)
        CHECK(onic_matcher_append(m, key, none, (void *)(n + 1), NULL) == ONIC_OK);
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, key, none), 1);
    onic_mem_fail_after(0);
    while (n < 100000 && (s = onic_matcher_append(m, key, none, (void *)(n + 1), NULL)) == ONIC_OK)
        n++;
    onic_mem_fail_after(-1);
    CHECK(s == ONIC_ERR_NO_MEMORY);
    CHECK_EQ(onic_matcher_length(m), n);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ((uintptr_t)onic_matcher_match(m, key, none), i + 1);
    CHECK(onic_matcher_match(m, key, none) == NULL);
    CHECK(onic_matcher_append(m, key, none, (void *)7, NULL) == ONIC_OK);
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, key, none), 7);
    onic_matcher_destroy(m);

    /* Creation itself. */
    onic_config_t cfg;
    onic_matcher_t *m2 = (onic_matcher_t *)&cfg;
    onic_config_defaults(&cfg);
    cur->tune(&cfg);
    onic_mem_fail_after(0);
    CHECK(onic_matcher_create_cfg(cur->engine, &cfg, &m2) == ONIC_ERR_NO_MEMORY);
    CHECK(m2 == (onic_matcher_t *)&cfg);
    onic_mem_fail_after(-1);
    /* Each allocation of creation failing in turn (the engine's own state
     * too): ONIC_ERR_NO_MEMORY and no matcher, until one is made. */
    for (long k = 1; k < 64; k++) {
        onic_status_t st;
        onic_mem_fail_after(k);
        st = onic_matcher_create_cfg(cur->engine, &cfg, &m2);
        onic_mem_fail_after(-1);
        if (st == ONIC_OK) {
            CHECK(m2 != (onic_matcher_t *)&cfg);
            onic_matcher_destroy(m2);
            break;
        }
        CHECK(st == ONIC_ERR_NO_MEMORY);
        CHECK(m2 == (onic_matcher_t *)&cfg);
    }
    CHECK(m2 != (onic_matcher_t *)&cfg);
}

/* Pools, not the allocator, in the steady state: once a queue has reached
 * its size (and any lazy index was built), matching and re-posting at that
 * size succeeds with every allocation failing. */
static void test_steady_state_allocates_nothing(void)
{
    static const unsigned depths[] = {1, 8, 300};
    for (unsigned d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
        onic_matcher_t *m = make();
        unsigned depth = depths[d], failures = 0;

        for (unsigned i = 0; i < depth; i++)
            post(m, 0, (int)(i % 13), (int)i, i + 1);
        /* Warm up every query shape once, with memory. */
        CHECK(arrive(m, 0, 0, 0, 1) == 1);
        post(m, 0, 0, 0, 1);
        CHECK(arrive(m, 0, -1, 0, 1) == 1);
        post(m, 0, 0, 0, 1);
        onic_mem_fail_after(0);
        for (unsigned i = 0; i < 5000; i++) {
            unsigned k = (i * 7919u) % depth;
            onic_mkey_t ign, key = key_of(0, (int)(k % 13), (int)k, &ign);
            uintptr_t c = (uintptr_t)onic_matcher_match(m, key, ign);
            if (c == 0 || onic_matcher_append(m, key, ign, (void *)c, NULL) != ONIC_OK)
                failures++;
            if (i % 10 == 0) { /* wildcard receives now and then */
                key = key_of(0, -1, (int)k, &ign);
                c = (uintptr_t)onic_matcher_match(m, key, ign);
                key = key_of(0, (int)(k % 13), (int)k, &ign);
                if (c == 0 || onic_matcher_append(m, key, ign, (void *)c, NULL) != ONIC_OK)
                    failures++;
            }
        }
        onic_mem_fail_after(-1);
        CHECK_EQ(failures, 0);
        CHECK_EQ(onic_matcher_length(m), depth);
        onic_matcher_destroy(m);
    }
}

/* --- ordered insertion and find with accept --- */

static const onic_mkey_t any_key = {0, 0}, any_ign = {~0ull, ~0ull}, no_ign = {0, 0};

static onic_mentry_t *ins(onic_matcher_t *m, onic_match_pos_t pos, onic_mentry_t *anchor,
                          uint64_t bits, uintptr_t c)
{
    onic_mkey_t key = {bits, 0};
    onic_mentry_t *e = NULL;
    REQUIRE(onic_matcher_insert(m, key, no_ign, (void *)c, pos, anchor, &e) == ONIC_OK);
    REQUIRE(e != NULL);
    return e;
}

/* Take everything out with a full wildcard: the cookies must come in order. */
static void drain_expect(onic_matcher_t *m, const uintptr_t *want, size_t n)
{
    CHECK_EQ(onic_matcher_length(m), n);
    for (size_t i = 0; i < n; i++) {
        uintptr_t got = (uintptr_t)onic_matcher_match(m, any_key, any_ign);
        if (got != want[i]) {
            CHECK_EQ(got, want[i]);
            return;
        }
    }
    CHECK(onic_matcher_match(m, any_key, any_ign) == NULL);
}

static void test_insert_positions(void)
{
    onic_matcher_t *m = make();
    onic_mentry_t *e1, *e2, *e0, *e3, *e10, *e20, *gone;
    onic_match_stats_t st;

    e0 = ins(m, ONIC_MATCH_HEAD, NULL, 1, 100);      /* into an empty queue */
    e1 = ins(m, ONIC_MATCH_TAIL, NULL, 1, 101);
    e2 = post(m, 0, 0, 0, 102);                       /* an append, key {0, 0} */
    e3 = ins(m, ONIC_MATCH_HEAD, NULL, 1, 99);        /* new head */
    e10 = ins(m, ONIC_MATCH_BEFORE, e1, 1, 110);      /* 99 100 110 101 102 */
    e20 = ins(m, ONIC_MATCH_AFTER, e2, 1, 120);       /* after the tail */
    ins(m, ONIC_MATCH_BEFORE, e3, 1, 98);             /* before the head */
    ins(m, ONIC_MATCH_AFTER, e10, 1, 111);            /* anchors made by inserts */
    ins(m, ONIC_MATCH_BEFORE, e20, 1, 119);
    ins(m, ONIC_MATCH_AFTER, e0, 1, 105);
    CHECK((gone = ins(m, ONIC_MATCH_TAIL, NULL, 1, 200)) != NULL);
    CHECK(onic_matcher_remove(m, gone) == ONIC_OK);
    /* The query {1, 0} fits everything but the append: the first in order. */
    onic_mkey_t one = {1, 0};
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, one, no_ign), 98);
    CHECK_EQ(arrive(m, 0, 0, 0, 0), 102);
    onic_matcher_stats(m, &st);
    CHECK_EQ(st.appends, 11);
    CHECK_EQ(st.max_length, 11);
    static const uintptr_t want[] = {98, 99, 100, 105, 110, 111, 101, 102, 119, 120};
    drain_expect(m, want, 10);

    /* Removed anchors, including removed by a match, and the anchor's own
     * neighbours gone. */
    e1 = ins(m, ONIC_MATCH_TAIL, NULL, 1, 1);
    e2 = ins(m, ONIC_MATCH_TAIL, NULL, 2, 2);
    e3 = ins(m, ONIC_MATCH_TAIL, NULL, 3, 3);
    CHECK(onic_matcher_remove(m, e1) == ONIC_OK);
    CHECK(onic_matcher_remove(m, e3) == ONIC_OK);
    ins(m, ONIC_MATCH_BEFORE, e2, 4, 4);
    ins(m, ONIC_MATCH_AFTER, e2, 5, 5);
    onic_mkey_t two = {2, 0};
    CHECK_EQ((uintptr_t)onic_matcher_match(m, two, no_ign), 2);
    e0 = NULL;
    onic_mkey_t k = {7, 0};
    fprintf(stderr, "(errors about bad inserts are expected next)\n");
    CHECK(onic_matcher_insert(m, k, no_ign, (void *)7, ONIC_MATCH_AFTER, e2, &e0) ==
          ONIC_ERR_NO_ELEM);
    CHECK(onic_matcher_insert(m, k, no_ign, (void *)7, ONIC_MATCH_BEFORE, NULL, &e0) ==
          ONIC_ERR_INVALID_PARAM);
    CHECK(onic_matcher_insert(m, k, no_ign, (void *)7, ONIC_MATCH_AFTER, NULL, &e0) ==
          ONIC_ERR_INVALID_PARAM);
    CHECK(onic_matcher_insert(m, k, no_ign, (void *)7, (onic_match_pos_t)4, e2, &e0) ==
          ONIC_ERR_INVALID_PARAM);
    CHECK(onic_matcher_insert(m, k, no_ign, (void *)7, (onic_match_pos_t)-1, NULL, &e0) ==
          ONIC_ERR_INVALID_PARAM);
    CHECK(onic_matcher_insert(NULL, k, no_ign, (void *)7, ONIC_MATCH_HEAD, NULL, &e0) ==
          ONIC_ERR_INVALID_PARAM);
    CHECK(e0 == NULL); /* outputs only on success */
    onic_matcher_stats(m, &st);
    CHECK_EQ(st.appends, 16);
    static const uintptr_t want2[] = {4, 5};
    drain_expect(m, want2, 2);
    /* HEAD and TAIL ignore the anchor, even a stale one. */
    ins(m, ONIC_MATCH_TAIL, e2, 1, 11);
    ins(m, ONIC_MATCH_HEAD, e2, 1, 10);
    static const uintptr_t want3[] = {10, 11};
    drain_expect(m, want3, 2);
    onic_matcher_destroy(m);
}

/* Deep queues (past hash's small ring, alpu's threshold and batches, many
 * wide blocks), and inserts that use up the gaps between keys: with tiny
 * gaps every few inserts renumber the queue. */
static void test_insert_long(int tiny)
{
    enum { N = 400, EXTRA = 600 };
    onic_matcher_t *m = make();
    static onic_mentry_t *e[N];
    static uintptr_t want[N + EXTRA + 4];
    size_t n = 0;

    if (tiny) {
        m->seq_stride = 2;
        m->seq_step = 1;
    }
    for (int i = 0; i < N; i++)
        e[i] = ins(m, ONIC_MATCH_TAIL, NULL, (uint64_t)i, (uintptr_t)i + 1);
    /* Look-ups first, so that the alpu unit is loaded and hash views exist. */
    onic_mkey_t k = {123, 0};
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, k, no_ign), 124);
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, any_key, any_ign), 1);
    /* Forward fills before a marker (entry 200) and after the last insert. */
    onic_mentry_t *last = e[300];
    for (int i = 0; i < EXTRA / 2; i++) {
        ins(m, ONIC_MATCH_BEFORE, e[200], 123, 10000 + (uintptr_t)i);
        last = ins(m, ONIC_MATCH_AFTER, last, 123, 20000 + (uintptr_t)i);
    }
    ins(m, ONIC_MATCH_HEAD, NULL, 123, 90005);
    ins(m, ONIC_MATCH_AFTER, e[N - 1], 123, 90006);
    ins(m, ONIC_MATCH_BEFORE, e[0], 123, 90007);
    ins(m, ONIC_MATCH_AFTER, e[0], 123, 90008);
    if (tiny)
        CHECK(m->renumbers > 0);
    else
        CHECK_EQ(m->renumbers, 0);
    /* The first with key 123 is the head insert; after it, order. */
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, k, no_ign), 90005);
    want[n++] = 90005;
    want[n++] = 90007;
    for (int i = 0; i < N; i++) {
        if (i == 200)
            for (int j = 0; j < EXTRA / 2; j++)
                want[n++] = 10000 + (uintptr_t)j;
        want[n++] = (uintptr_t)i + 1;
        if (i == 0)
            want[n++] = 90008;
        if (i == 300)
            for (int j = 0; j < EXTRA / 2; j++)
                want[n++] = 20000 + (uintptr_t)j;
    }
    want[n++] = 90006;
    /* Exact look-ups of key 123 come out in order too, with removes. */
    CHECK_EQ((uintptr_t)onic_matcher_match(m, k, no_ign), 90005);
    CHECK_EQ((uintptr_t)onic_matcher_match(m, k, no_ign), 90007);
    CHECK_EQ((uintptr_t)onic_matcher_match(m, k, no_ign), 90008);
    CHECK_EQ((uintptr_t)onic_matcher_match(m, k, no_ign), 124); /* entry 123 */
    CHECK_EQ((uintptr_t)onic_matcher_match(m, k, no_ign), 10000);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (want[i] != 90005 && want[i] != 90007 && want[i] != 90008 && want[i] != 124 &&
            want[i] != 10000)
            want[kept++] = want[i];
    drain_expect(m, want, kept);
    onic_matcher_destroy(m);
}

typedef struct accept_log {
    uintptr_t refuse_below;  /* refuse cookies under this */
    uintptr_t refuse_odd;    /* and odd ones, when set */
    size_t    n;
    uintptr_t calls[64];
} accept_log_t;

static int accept_log(void *arg, void *cookie)
{
    accept_log_t *a = arg;
    uintptr_t c = (uintptr_t)cookie;

    if (a->n < 64)
        a->calls[a->n] = c;
    a->n++;
    return c >= a->refuse_below && !(a->refuse_odd && (c & 1));
}

static void test_find_accept(void)
{
    onic_matcher_t *m = make();
    accept_log_t a = {0, 0, 0, {0}};
    onic_match_stats_t st;

    for (uintptr_t i = 1; i <= 10; i++)
        post(m, 0, 1, 1, i);
    /* accept NULL: match and peek. */
    CHECK_EQ((uintptr_t)onic_matcher_find(m, key_of(0, 1, 1, &(onic_mkey_t){0}), no_ign, NULL,
                                          NULL, 0), 1);
    /* Refuse the first k, keep. */
    for (uintptr_t k = 0; k < 10; k++) {
        a = (accept_log_t){k + 1, 0, 0, {0}};
        CHECK_EQ((uintptr_t)onic_matcher_find(m, key_of(0, 1, 1, &(onic_mkey_t){0}), no_ign,
                                              accept_log, &a, 0), k + 1);
        CHECK_EQ(a.n, k + 1);
        for (size_t i = 0; i < a.n && i < 64; i++)
            REQUIRE(a.calls[i] == i + 1);
    }
    /* Refuse all: NULL, every match offered once, in order. */
    a = (accept_log_t){1000, 0, 0, {0}};
    CHECK(onic_matcher_find(m, key_of(0, 1, 1, &(onic_mkey_t){0}), no_ign, accept_log, &a, 1) ==
          NULL);
    CHECK_EQ(a.n, 10);
    CHECK_EQ(onic_matcher_length(m), 10);
    /* Refuse the odd ones, remove: 2, 4, ... come out and the odd stay. */
    for (uintptr_t i = 2; i <= 10; i += 2) {
        a = (accept_log_t){0, 1, 0, {0}};
        CHECK_EQ((uintptr_t)onic_matcher_find(m, key_of(0, 1, 1, &(onic_mkey_t){0}), no_ign,
                                              accept_log, &a, 1), i);
        CHECK_EQ(a.n, i / 2 + 1);
    }
    CHECK_EQ(onic_matcher_length(m), 5);
    static const uintptr_t odd[] = {1, 3, 5, 7, 9};
    drain_expect(m, odd, 5);

    /* Wildcard entries and a non-matching entry in between: only matches
     * are offered, in queue order across wildcard shapes. */
    post(m, 0, -1, 5, 1);   /* ANY_SOURCE */
    post(m, 0, 3, 6, 2);    /* no match for (3, 5) */
    post(m, 0, 3, 5, 3);    /* exact */
    post(m, 0, 3, -1, 4);   /* ANY_TAG */
    post(m, 0, -1, -1, 5);  /* both */
    onic_mkey_t hdr_ign, hdr = key_of(0, 3, 5, &hdr_ign);
    a = (accept_log_t){5, 0, 0, {0}};
    CHECK_EQ((uintptr_t)onic_matcher_find(m, hdr, hdr_ign, accept_log, &a, 1), 5);
    CHECK_EQ(a.n, 4);
    CHECK(a.calls[0] == 1 && a.calls[1] == 3 && a.calls[2] == 4 && a.calls[3] == 5);
    drain_expect(m, (const uintptr_t[]){1, 2, 3, 4}, 4);

    /* Exact entries, wildcard queries (unexpected messages). */
    for (uintptr_t i = 1; i <= 6; i++)
        post(m, 0, (int)(i % 3), (int)(i % 2), i);  /* (src, tag): 1,1 2,0 0,1 1,0 2,1 0,0 */
    onic_mkey_t qi, q = key_of(0, -1, 1, &qi);           /* ANY_SOURCE tag 1: 1, 3, 5 */
    a = (accept_log_t){4, 0, 0, {0}};
    CHECK_EQ((uintptr_t)onic_matcher_find(m, q, qi, accept_log, &a, 0), 5);
    CHECK(a.n == 3 && a.calls[0] == 1 && a.calls[1] == 3 && a.calls[2] == 5);
    q = key_of(0, -1, -1, &qi);
    a = (accept_log_t){0, 1, 0, {0}};
    CHECK_EQ((uintptr_t)onic_matcher_find(m, q, qi, accept_log, &a, 1), 2);
    CHECK_EQ(a.n, 2);
    onic_matcher_stats(m, &st);
    CHECK(st.lookups > 15 && st.hits > 10);
    CHECK(onic_matcher_find(NULL, q, qi, accept_log, &a, 1) == NULL);
    drain_expect(m, (const uintptr_t[]){1, 3, 4, 5, 6}, 5);
    onic_matcher_destroy(m);
}

/* find with accept in deep queues, where engines take their long paths:
 * refusals deep in the alpu unit, across wide blocks and hash views. */
static void test_find_accept_long(void)
{
    enum { N = 700 };
    onic_matcher_t *m = make();
    accept_log_t a;

    for (int i = 0; i < N; i++)
        post(m, 0, i % 4, i % 5, (uintptr_t)i + 1);
    /* Exact (1, 1): entries 1, 21, 41, ... (i = 1 mod 20); refuse below 500. */
    a = (accept_log_t){500, 0, 0, {0}};
    CHECK_EQ(arrive(m, 0, 1, 1, 0), 2);
    onic_mkey_t ki, k = key_of(0, 1, 1, &ki);
    CHECK_EQ((uintptr_t)onic_matcher_find(m, k, ki, accept_log, &a, 1), 502);
    CHECK_EQ(a.n, 26);
    CHECK_EQ(arrive(m, 0, -1, 1, 0), 2);
    k = key_of(0, -1, 1, &ki); /* i = 1 mod 5 */
    a = (accept_log_t){600, 1, 0, {0}};
    CHECK_EQ((uintptr_t)onic_matcher_find(m, k, ki, accept_log, &a, 1), 602);
    CHECK_EQ(a.n, 120); /* 2, 7, ... 597 but 502, then 602 */
    CHECK_EQ(onic_matcher_length(m), N - 2);
    CHECK_EQ(arrive(m, 0, -1, -1, 1), 1);
    onic_matcher_destroy(m);
}

/* Accept answering ONIC_MATCH_TAKE_LAST: the entry comes out in that
 * search though remove is 0 (Portals' one-shot receive), refused and
 * plainly taken entries stay. At the front of a short queue, behind it,
 * and in a long one (the engines' other modes). */
static int accept_last_from(void *arg, void *cookie)
{
    uintptr_t c = (uintptr_t)cookie, *from = arg;

    if (c < from[0])
        return 0;                                   /* refused */
    return c < from[1] ? ONIC_MATCH_TAKE : ONIC_MATCH_TAKE_LAST;
}

static void test_find_accept_last(void)
{
    static const int sizes[] = {4, 300};

    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        int n = sizes[si];
        onic_matcher_t *m = make();
        onic_mentry_t *first = NULL, *e;
        onic_mkey_t ki, k = key_of(0, 1, 1, &ki);
        uintptr_t from[2];

        for (int i = 1; i <= n; i++) {
            e = post(m, 0, 1, 1, (uintptr_t)i);
            if (i == 1)
                first = e;
        }
        /* The front, taken last: out, though remove is 0. */
        from[0] = 1, from[1] = 1;
        CHECK_EQ((uintptr_t)onic_matcher_find(m, k, ki, accept_last_from, from, 0), 1);
        CHECK_EQ(onic_matcher_length(m), (size_t)n - 1);
        CHECK(onic_matcher_remove(m, first) == ONIC_ERR_NO_ELEM);
        /* Taken plainly with remove 0: it stays. */
        from[0] = 2, from[1] = 3;
        CHECK_EQ((uintptr_t)onic_matcher_find(m, k, ki, accept_last_from, from, 0), 2);
        CHECK_EQ(onic_matcher_length(m), (size_t)n - 1);
        /* 2 refused, 3 taken last behind it. */
        from[0] = 3, from[1] = 3;
        CHECK_EQ((uintptr_t)onic_matcher_find(m, k, ki, accept_last_from, from, 0), 3);
        CHECK_EQ(onic_matcher_length(m), (size_t)n - 2);
        /* What is left comes out in order: 2, then 4 on. */
        CHECK_EQ((uintptr_t)onic_matcher_match(m, k, ki), 2);
        for (int i = 4; i <= n; i++)
            CHECK_EQ((uintptr_t)onic_matcher_match(m, k, ki), (uintptr_t)i);
        CHECK_EQ(onic_matcher_length(m), 0);
        onic_matcher_destroy(m);
    }
}

static void test_insert_out_of_memory(int tiny)
{
    static const onic_match_pos_t poss[] = {ONIC_MATCH_HEAD, ONIC_MATCH_BEFORE, ONIC_MATCH_AFTER,
                                            ONIC_MATCH_TAIL};
    enum { MAX = 3000 };
    static uintptr_t want[MAX];
    static onic_mentry_t *h[MAX];
    onic_matcher_t *m = make();
    size_t n = 0;
    onic_status_t s = ONIC_OK;
    unsigned refused = 0;

    if (tiny) {
        m->seq_stride = 2;
        m->seq_step = 1;
    }
    for (; n < 300; n++) {
        h[n] = ins(m, ONIC_MATCH_TAIL, NULL, n % 7, n + 1);
        want[n] = n + 1;
    }
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, any_key, any_ign), 1);
    onic_mem_fail_after(0);
    for (unsigned i = 0; n < MAX && refused < 40; i++) {
        onic_match_pos_t pos = poss[i % 4];
        size_t at = pos == ONIC_MATCH_HEAD ? 0 : pos == ONIC_MATCH_TAIL ? n : (i * 7919u) % n;
        onic_mentry_t *anchor = pos == ONIC_MATCH_HEAD || pos == ONIC_MATCH_TAIL ? NULL : h[at];
        onic_mentry_t *e = NULL;
        onic_mkey_t key = {i % 7, 0};

        at += pos == ONIC_MATCH_AFTER;
        s = onic_matcher_insert(m, key, no_ign, (void *)(uintptr_t)(10000 + i), pos, anchor, &e);
        if (s != ONIC_OK) {
            REQUIRE(s == ONIC_ERR_NO_MEMORY && e == NULL);
            REQUIRE(onic_matcher_length(m) == n);
            refused++;
            continue;
        }
        memmove(&want[at + 1], &want[at], (n - at) * sizeof(want[0]));
        memmove(&h[at + 1], &h[at], (n - at) * sizeof(h[0]));
        want[at] = 10000 + i;
        h[at] = e;
        n++;
    }
    onic_mem_fail_after(-1);
    CHECK_EQ(refused, 40);
    drain_expect(m, want, n);
    onic_matcher_destroy(m);
}

/* --- queues around hash's small ring (64 slots; past 32 entries the queue
 * moves into the index, until it empties, when an append finds no slot
 * behind its entries: at once if removals left holes, at the 65th entry if
 * it was matched in order) --- */

/* A tiny ordered reference for the tests below. */
typedef struct mini_ref {
    size_t         n;
    onic_mkey_t    key[96], ign[96];
    uintptr_t      cookie[96];
    onic_mentry_t *h[96];
} mini_ref_t;

static void mref_insert(mini_ref_t *r, size_t at, onic_mkey_t key, onic_mkey_t ign, uintptr_t c,
                        onic_mentry_t *h)
{
    REQUIRE(r->n < 96 && at <= r->n);
    memmove(&r->key[at + 1], &r->key[at], (r->n - at) * sizeof(r->key[0]));
    memmove(&r->ign[at + 1], &r->ign[at], (r->n - at) * sizeof(r->ign[0]));
    memmove(&r->cookie[at + 1], &r->cookie[at], (r->n - at) * sizeof(r->cookie[0]));
    memmove(&r->h[at + 1], &r->h[at], (r->n - at) * sizeof(r->h[0]));
    r->key[at] = key;
    r->ign[at] = ign;
    r->cookie[at] = c;
    r->h[at] = h;
    r->n++;
}

static void mref_delete(mini_ref_t *r, size_t at)
{
    r->n--;
    memmove(&r->key[at], &r->key[at + 1], (r->n - at) * sizeof(r->key[0]));
    memmove(&r->ign[at], &r->ign[at + 1], (r->n - at) * sizeof(r->ign[0]));
    memmove(&r->cookie[at], &r->cookie[at + 1], (r->n - at) * sizeof(r->cookie[0]));
    memmove(&r->h[at], &r->h[at + 1], (r->n - at) * sizeof(r->h[0]));
}

/* The k-th match (0: the first) in queue order, or -1. */
static long mref_find(const mini_ref_t *r, onic_mkey_t key, onic_mkey_t ign, unsigned k)
{
    for (size_t i = 0; i < r->n; i++)
        if (onic_mkey_matches(r->key[i], r->ign[i], key, ign) && k-- == 0)
            return (long)i;
    return -1;
}

/* accept that refuses the first `refuse` offers and counts them all. */
typedef struct refuse_n {
    unsigned refuse, calls;
} refuse_n_t;

static int accept_refuse_n(void *arg, void *cookie)
{
    refuse_n_t *a = arg;

    (void)cookie;
    return a->calls++ >= a->refuse;
}

/* The envelope of the i-th entry a test makes: MPI's four shapes (exact,
 * ANY_SOURCE, ANY_TAG, both) and a Portals mask, so a queue has more masks
 * than the ring has classes for. */
static void mixed_key(unsigned i, onic_mkey_t *key_p, onic_mkey_t *ign_p)
{
    static const int shape[12] = {0, 0, 1, 0, 2, 0, 1, 0, 3, 0, 4, 0};
    int src = (int)(i % 5), tag = (int)(i % 7);

    switch (shape[i % 12]) {
    case 1: src = -1; break;
    case 2: tag = -1; break;
    case 3: src = tag = -1; break;
    default: break;
    }
    *key_p = key_of(0, src, tag, ign_p);
    if (shape[i % 12] == 4)
        ign_p->bits |= 0x6; /* tags 0-7 in groups of 4 by bits 0 and 3 */
}

/* What arrives for entry at of r: a header for it (wildcards filled in) or,
 * by kind, a receive with ANY_SOURCE, ANY_TAG or both. */
static void query_for(const mini_ref_t *r, size_t at, unsigned kind, onic_mkey_t *key_p,
                      onic_mkey_t *ign_p)
{
    onic_mkey_t key = r->key[at], ign = {0, 0};

    key.bits &= ~r->ign[at].bits; /* junk-free header: 0 where the entry ignores */
    key.id &= ~r->ign[at].id;
    if (kind == 1)
        ign.id = ~0ull;
    else if (kind == 2)
        ign.bits = 0xffffffffull;
    else if (kind == 3)
        ign.bits = 0xffffffffull, ign.id = ~0ull;
    *key_p = key;
    *ign_p = ign;
}

/* Grow queues to just under, at and past 32 entries with mixed masks and
 * inserts at every position (one exactly at the 33rd entry), look up with
 * every query shape, then drain with matches, removals by handle and finds
 * that refuse the first match -- twice, so the emptied queue is small again. */
static void test_small_threshold(void)
{
    static const size_t lengths[] = {8, 31, 32, 33, 34, 40};
    static mini_ref_t r;

    for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
        onic_matcher_t *m = make();
        size_t len = lengths[l];
        uintptr_t next = 1;

        for (unsigned round = 0; round < 2; round++) {
            r.n = 0;
            for (unsigned i = round; r.n < len; i++) {
                onic_match_pos_t pos = ONIC_MATCH_TAIL;
                onic_mkey_t key, ign;
                onic_mentry_t *e = NULL, *anchor = NULL;
                size_t at = r.n;

                mixed_key(i, &key, &ign);
                if (r.n == 32)
                    pos = len % 2 ? ONIC_MATCH_BEFORE : ONIC_MATCH_AFTER;
                else if (r.n > 0 && i % 4 == 1)
                    pos = ONIC_MATCH_BEFORE;
                else if (r.n > 0 && i % 4 == 2)
                    pos = ONIC_MATCH_AFTER;
                else if (i % 8 == 3)
                    pos = ONIC_MATCH_HEAD;
                if (pos == ONIC_MATCH_HEAD) {
                    at = 0;
                } else if (pos != ONIC_MATCH_TAIL) {
                    at = (i * 7u) % r.n;
                    anchor = r.h[at];
                    at += pos == ONIC_MATCH_AFTER;
                }
                REQUIRE(onic_matcher_insert(m, key, ign, (void *)next, pos, anchor, &e) ==
                        ONIC_OK);
                mref_insert(&r, at, key, ign, next++, e);
            }
            CHECK_EQ(onic_matcher_length(m), len);
            /* Every query shape for every entry, kept. */
            for (size_t at = 0; at < r.n; at++) {
                for (unsigned kind = 0; kind < 4; kind++) {
                    onic_mkey_t q, qi;
                    long want;
                    query_for(&r, at, kind, &q, &qi);
                    want = mref_find(&r, q, qi, 0);
                    REQUIRE(want >= 0 &&
                            (uintptr_t)onic_matcher_peek(m, q, qi) == r.cookie[want]);
                }
            }
            /* Drain. */
            for (unsigned j = 0; r.n > 0; j++) {
                size_t at = (j * 5u) % r.n;
                onic_mkey_t q, qi;
                long want;

                if (j % 4 == 2) {
                    REQUIRE(onic_matcher_remove(m, r.h[at]) == ONIC_OK);
                    mref_delete(&r, at);
                    continue;
                }
                query_for(&r, at, j % 3 == 0 ? 0 : j % 4, &q, &qi);
                if (j % 4 == 3) {
                    /* The first match refused: the second is taken, if any. */
                    refuse_n_t a = {1, 0};
                    uintptr_t got = (uintptr_t)onic_matcher_find(m, q, qi, accept_refuse_n,
                                                                 &a, 1);
                    want = mref_find(&r, q, qi, 1);
                    REQUIRE(got == (want < 0 ? 0 : r.cookie[want]));
                    REQUIRE(a.calls == (want < 0 ? 1u : 2u));
                } else {
                    want = mref_find(&r, q, qi, 0);
                    REQUIRE(want >= 0 &&
                            (uintptr_t)onic_matcher_match(m, q, qi) == r.cookie[want]);
                }
                if (want >= 0)
                    mref_delete(&r, (size_t)want);
                REQUIRE(onic_matcher_length(m) == r.n);
            }
            CHECK(onic_matcher_peek(m, any_key, any_ign) == NULL);
        }
        onic_matcher_destroy(m);
    }
}

/* Every query shape for every entry of r, looked up without removal. */
static void mref_check_all(onic_matcher_t *m, const mini_ref_t *r)
{
    for (size_t at = 0; at < r->n; at++) {
        for (unsigned kind = 0; kind < 4; kind++) {
            onic_mkey_t q, qi;
            long want;
            query_for(r, at, kind, &q, &qi);
            want = mref_find(r, q, qi, 0);
            REQUIRE(want >= 0 && (uintptr_t)onic_matcher_peek(m, q, qi) == r->cookie[want]);
        }
    }
}

/* A queue matched in order stays in hash's ring past 32 entries, up to its
 * 64 slots: appends at the tail and matches of the front, at depths around
 * 32 and 64, for long enough that the ring wraps many times; then a removal
 * in the middle leaves a hole, so the appends that follow fill the ring's
 * end and (past 32 entries) move the queue into the index; every query
 * shape is checked there, and the queue drained in order. */
static void test_small_in_order_deep(void)
{
    static const size_t depths[] = {33, 48, 63, 64, 65, 70};
    static mini_ref_t r;

    for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
        onic_matcher_t *m = make();
        uintptr_t next = 1;
        unsigned i = 0;
        onic_mkey_t key, ign, q, qi;
        onic_mentry_t *e;
        long want;

        r.n = 0;
        for (; r.n < depths[d]; i++) {
            mixed_key(i, &key, &ign);
            REQUIRE(onic_matcher_append(m, key, ign, (void *)next, &e) == ONIC_OK);
            mref_insert(&r, r.n, key, ign, next++, e);
        }
        mref_check_all(m, &r);
        /* Steady state: the front's header matches it; a new entry goes behind. */
        for (unsigned round = 0; round < 300; round++, i++) {
            query_for(&r, 0, 0, &q, &qi);
            want = mref_find(&r, q, qi, 0);
            REQUIRE(want >= 0 && (uintptr_t)onic_matcher_match(m, q, qi) == r.cookie[want]);
            mref_delete(&r, (size_t)want);
            mixed_key(i, &key, &ign);
            REQUIRE(onic_matcher_append(m, key, ign, (void *)next, &e) == ONIC_OK);
            mref_insert(&r, r.n, key, ign, next++, e);
            REQUIRE(onic_matcher_length(m) == r.n);
        }
        mref_check_all(m, &r);
        /* A hole in the middle, then appends until the ring's end is reached. */
        REQUIRE(onic_matcher_remove(m, r.h[r.n / 2]) == ONIC_OK);
        mref_delete(&r, r.n / 2);
        for (unsigned k = 0; k < 24 && r.n < 90; k++, i++) {
            mixed_key(i, &key, &ign);
            REQUIRE(onic_matcher_append(m, key, ign, (void *)next, &e) == ONIC_OK);
            mref_insert(&r, r.n, key, ign, next++, e);
        }
        mref_check_all(m, &r);
        for (unsigned j = 0; r.n > 0; j++) {
            query_for(&r, (j * 3u) % r.n, j % 4, &q, &qi);
            want = mref_find(&r, q, qi, 0);
            REQUIRE(want >= 0 && (uintptr_t)onic_matcher_match(m, q, qi) == r.cookie[want]);
            mref_delete(&r, (size_t)want);
            REQUIRE(onic_matcher_length(m) == r.n);
        }
        onic_matcher_destroy(m);
    }
}

/* The front and the middle of a short queue: removal by handle, matches,
 * and a long-lived first entry with churn behind it (hash's ring wraps
 * around and packs its holes again and again), with queries that go by each
 * of the ring's fingerprints. */
static void test_small_front_middle(void)
{
    static mini_ref_t r;
    onic_matcher_t *m = make();
    onic_mkey_t key, ign, q, qi;
    onic_mentry_t *e;
    long want;

    r.n = 0;
    for (uintptr_t c = 1; c <= 6; c++) {
        key = key_of(0, (int)c, 1, &ign);
        e = post(m, 0, (int)c, 1, c);
        mref_insert(&r, r.n, key, ign, c, e);
    }
    CHECK(onic_matcher_remove(m, r.h[0]) == ONIC_OK); /* the front */
    mref_delete(&r, 0);
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, any_key, any_ign), 2);
    CHECK(onic_matcher_remove(m, r.h[2]) == ONIC_OK); /* the middle: 4 */
    mref_delete(&r, 2);
    CHECK(onic_matcher_remove(m, r.h[3]) == ONIC_OK); /* the last: 6 */
    mref_delete(&r, 3);
    CHECK_EQ(arrive(m, 0, 5, 1, 1), 5); /* a match at the back */
    mref_delete(&r, 2);
    CHECK_EQ(arrive(m, 0, -1, 1, 0), 2); /* ANY_SOURCE: the front */
    post(m, 0, 4, 1, 7);
    CHECK_EQ(arrive(m, 0, 4, 1, 1), 7); /* behind a hole */
    CHECK_EQ(arrive(m, 0, 4, 1, 1), 0);
    drain_expect(m, (const uintptr_t[]){2, 3}, 2);

    /* Inserts where the last entry was removed, and next to the front with
     * no gap left between order keys. */
    m->seq_stride = 2;
    m->seq_step = 1;
    e = post(m, 0, 1, 1, 1);
    onic_mentry_t *e2 = post(m, 0, 1, 1, 2);
    onic_mentry_t *e3 = post(m, 0, 1, 1, 3);
    CHECK(onic_matcher_remove(m, e3) == ONIC_OK);
    ins(m, ONIC_MATCH_AFTER, e2, 1, 4); /* the new last */
    ins(m, ONIC_MATCH_AFTER, e, 1, 5);  /* right behind the front */
    ins(m, ONIC_MATCH_BEFORE, e, 1, 6); /* the new front */
    ins(m, ONIC_MATCH_BEFORE, e2, 1, 7);
    drain_expect(m, (const uintptr_t[]){6, 1, 5, 7, 2, 4}, 6);
    m->seq_stride = ONIC_MATCH_SEQ_STRIDE;
    m->seq_step = ONIC_MATCH_SEQ_STEP;

    /* Messages in order (each matches the front) with receives posted
     * ahead, and now and then an insert at the head or before the last. */
    r.n = 0;
    for (unsigned k = 0; k < 300; k++) {
        onic_match_pos_t pos = k % 7 == 3 ? ONIC_MATCH_HEAD
                               : k % 7 == 5 && r.n > 0 ? ONIC_MATCH_BEFORE : ONIC_MATCH_TAIL;
        size_t at = pos == ONIC_MATCH_HEAD ? 0 : pos == ONIC_MATCH_BEFORE ? r.n - 1 : r.n;
        key = key_of(0, (int)(k % 3), 7, &ign);
        e = NULL;
        REQUIRE(onic_matcher_insert(m, key, ign, (void *)(uintptr_t)(k + 1), pos,
                                    pos == ONIC_MATCH_BEFORE ? r.h[r.n - 1] : NULL, &e) ==
                ONIC_OK);
        mref_insert(&r, at, key, ign, k + 1, e);
        if (r.n < 1 + k % 24)
            continue;
        query_for(&r, 0, k % 2, &q, &qi);
        REQUIRE((uintptr_t)onic_matcher_match(m, q, qi) == r.cookie[0]);
        mref_delete(&r, 0);
    }
    drain_expect(m, r.cookie, r.n);

    /* Entry 1000 stays first; behind it, entries come and go out of order. */
    r.n = 0;
    key = key_of(1, 9, 9, &ign);
    e = post(m, 1, 9, 9, 1000);
    mref_insert(&r, 0, key, ign, 1000, e);
    for (unsigned k = 0; k < 600; k++) {
        int src = (int)(k % 4), tag = (int)(k % 9);
        key = key_of(0, k % 10 == 0 ? -1 : src, tag, &ign);
        e = NULL;
        REQUIRE(onic_matcher_append(m, key, ign, (void *)(uintptr_t)(k + 1), &e) == ONIC_OK);
        mref_insert(&r, r.n, key, ign, k + 1, e);
        if (r.n < 20)
            continue;
        /* Out of order: a header, a receive of each wildcard shape, a removal. */
        size_t at = 1 + (k * 7u) % (r.n - 1);
        switch (k % 4) {
        case 0:
            REQUIRE(onic_matcher_remove(m, r.h[at]) == ONIC_OK);
            mref_delete(&r, at);
            continue;
        case 1: query_for(&r, at, 0, &q, &qi); break;
        case 2: query_for(&r, at, 1, &q, &qi); break; /* ANY_SOURCE: by the bits tag */
        default: query_for(&r, at, 2, &q, &qi); break; /* ANY_TAG: by the id tag */
        }
        want = mref_find(&r, q, qi, 0);
        REQUIRE(want > 0 && (uintptr_t)onic_matcher_match(m, q, qi) == r.cookie[want]);
        if (want >= 0)
            mref_delete(&r, (size_t)want);
        REQUIRE(onic_matcher_length(m) == r.n);
    }
    CHECK_EQ((uintptr_t)onic_matcher_peek(m, any_key, any_ign), 1000);
    CHECK_EQ(arrive(m, 1, 9, 9, 1), 1000);
    mref_delete(&r, 0);
    drain_expect(m, r.cookie, r.n);
    onic_matcher_destroy(m);
}

/* find with accept refusing the front entry, in a ring and in the index:
 * the next match is offered and taken, the front stays first. */
static void test_accept_refuses_front(void)
{
    static const unsigned lengths[] = {2, 32, 40};

    for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
        onic_matcher_t *m = make();
        unsigned len = lengths[l];
        onic_mkey_t qi, q = key_of(0, 3, 5, &qi);
        refuse_n_t a;

        post(m, 0, -1, 5, 1); /* ANY_SOURCE first */
        for (unsigned i = 2; i <= len; i++)
            post(m, 0, 3, 5, i);
        a = (refuse_n_t){1, 0};
        CHECK_EQ((uintptr_t)onic_matcher_find(m, q, qi, accept_refuse_n, &a, 1), 2);
        CHECK_EQ(a.calls, 2);
        a = (refuse_n_t){2, 0};
        CHECK_EQ((uintptr_t)onic_matcher_find(m, q, qi, accept_refuse_n, &a, 0),
                 len >= 4 ? 4 : 0);
        CHECK_EQ(a.calls, len >= 4 ? 3 : len - 1);
        a = (refuse_n_t){1000, 0};
        CHECK(onic_matcher_find(m, q, qi, accept_refuse_n, &a, 1) == NULL);
        CHECK_EQ(a.calls, len - 1);
        CHECK_EQ(onic_matcher_length(m), len - 1);
        CHECK_EQ(arrive(m, 0, 3, 5, 1), 1);
        if (len > 2)
            CHECK_EQ(arrive(m, 0, 3, 5, 1), 3);
        onic_matcher_destroy(m);
    }
}

/* The statistics count each lookup once and each entry compared once,
 * whichever path found it: the front taken (1 compared), the front
 * refused and the next one taken (2), an entry inserted at the head then
 * peeked and matched (1 each) and the next front (1), a miss on an empty
 * queue (a lookup, no hit). */
static void test_lookup_stats(void)
{
    onic_matcher_t *m = make();
    onic_match_stats_t before, after;
    onic_mkey_t qi, q = key_of(0, 3, 5, &qi);
    refuse_n_t a;
    /* alpu and wide count what their cells and blocks compare (every
     * valid slot of a block): entries only in the software queues. */
    const int entries = strcmp(cur->engine, "hash") == 0 || strcmp(cur->engine, "list") == 0;

    for (uintptr_t c = 1; c <= 4; c++)
        post(m, 0, 3, 5, c);
    onic_matcher_stats(m, &before);
    CHECK_EQ(arrive(m, 0, 3, 5, 1), 1);
    onic_matcher_stats(m, &after);
    CHECK_EQ(after.lookups - before.lookups, 1);
    CHECK_EQ(after.hits - before.hits, 1);
    CHECK(!entries || after.inspected - before.inspected == 1);
    a = (refuse_n_t){1, 0};
    CHECK_EQ((uintptr_t)onic_matcher_find(m, q, qi, accept_refuse_n, &a, 1), 3);
    CHECK_EQ(a.calls, 2);
    onic_matcher_stats(m, &before);
    CHECK(!entries || before.inspected - after.inspected == 2);
    CHECK_EQ(before.lookups - after.lookups, 1);
    CHECK_EQ(before.hits - after.hits, 1);
    CHECK_EQ(onic_matcher_insert(m, q, qi, (void *)8, ONIC_MATCH_HEAD, NULL, NULL), ONIC_OK);
    CHECK_EQ(arrive(m, 0, 3, 5, 0), 8); /* peek */
    CHECK_EQ(arrive(m, 0, 3, 5, 1), 8);
    CHECK_EQ(arrive(m, 0, 3, 5, 1), 2);
    onic_matcher_stats(m, &after);
    CHECK(!entries || after.inspected - before.inspected == 3);
    CHECK_EQ(after.lookups - before.lookups, 3);
    CHECK_EQ(after.hits - before.hits, 3);
    CHECK_EQ(onic_matcher_length(m), 1);
    CHECK_EQ(arrive(m, 0, 3, 5, 1), 4);
    CHECK_EQ(arrive(m, 0, 3, 5, 1), 0);
    onic_matcher_stats(m, &before);
    CHECK_EQ(before.lookups - after.lookups, 2);
    CHECK_EQ(before.hits - after.hits, 1);
    onic_matcher_destroy(m);
}

/* An insert next to an anchor takes its key from the anchor's true
 * neighbour, past holes that removals left: with a step larger than half
 * the gap, a neighbour found one slot too near (the removed entry, its key
 * gone) would let the new key pass the entry behind the hole. */
static void test_insert_after_hole(void)
{
    onic_matcher_t *m = make();
    onic_mentry_t *a, *b;
    static const uintptr_t want[] = {1, 9, 8, 3, 4};

    m->seq_stride = 4; /* keys 4 apart, a step of up to 16 */
    m->seq_step = 16;
    a = ins(m, ONIC_MATCH_TAIL, NULL, 1, 1);
    b = ins(m, ONIC_MATCH_TAIL, NULL, 1, 2);
    ins(m, ONIC_MATCH_TAIL, NULL, 1, 3);
    ins(m, ONIC_MATCH_TAIL, NULL, 1, 4);
    CHECK(onic_matcher_remove(m, b) == ONIC_OK);
    b = ins(m, ONIC_MATCH_AFTER, a, 1, 9);   /* between 1 and 3 */
    ins(m, ONIC_MATCH_AFTER, b, 1, 8);       /* between 9 and 3 */
    drain_expect(m, want, 5);
    onic_matcher_destroy(m);
}

/* The first entry the front end compares itself (engine.h): an engine
 * that keeps m->front keeps the queue's first entry there through appends,
 * head inserts, matches and removals; it may also keep none (NULL), but
 * never another entry. hash keeps it while its queue is a ring: checked
 * that it does, so the front end's own compare is not lost unseen. */
static void test_front_kept(void)
{
    onic_matcher_t *m = make();
    onic_mentry_t *e[70], *head;
    onic_mkey_t qi, q = key_of(0, 3, 5, &qi);
    const int keeps = strcmp(cur->engine, "hash") == 0;

    CHECK(m->front == NULL);
    for (uintptr_t i = 0; i < 4; i++) {
        e[i] = post(m, 0, 3, (int)i, i + 1);
        CHECK(m->front == NULL || m->front == e[0]);
    }
    CHECK(!keeps || m->front == e[0]);
    CHECK_EQ(arrive(m, 0, 3, 0, 1), 1);
    CHECK(m->front == NULL || m->front == e[1]);
    CHECK(!keeps || m->front == e[1]);
    CHECK_EQ(onic_matcher_insert(m, q, qi, (void *)9, ONIC_MATCH_HEAD, NULL, &head), ONIC_OK);
    CHECK(m->front == NULL || m->front == head);
    CHECK(!keeps || m->front == head);
    CHECK_EQ(onic_matcher_remove(m, head), ONIC_OK);
    CHECK(m->front == NULL || m->front == e[1]);
    CHECK_EQ(onic_matcher_remove(m, e[2]), ONIC_OK); /* not the front: it stays */
    CHECK(m->front == NULL || m->front == e[1]);
    CHECK(!keeps || m->front == e[1]);
    CHECK_EQ(arrive(m, 0, 3, 1, 1), 2);
    CHECK(m->front == NULL || m->front == e[3]);
    CHECK_EQ(arrive(m, 0, 3, 3, 1), 4);
    CHECK(m->front == NULL);
    /* Past hash's ring (64 slots) into its index, where it keeps none,
     * and back once emptied. */
    for (uintptr_t i = 0; i < 70; i++) {
        e[i] = post(m, 1, 2, (int)i, 100 + i);
        CHECK(m->front == NULL || m->front == e[0]);
    }
    CHECK(!keeps || m->front == NULL);
    for (uintptr_t i = 0; i < 70; i++) {
        CHECK_EQ(arrive(m, 1, 2, (int)i, 1), 100 + i);
        CHECK(m->front == NULL || (i < 69 && m->front == e[i + 1]));
    }
    CHECK(m->front == NULL);
    e[0] = post(m, 1, 2, 0, 7);
    CHECK(!keeps || m->front == e[0]);
    onic_matcher_destroy(m);
}

/* A broken engine can leave its queue so that the next walk never ends: a
 * case stops at its first test that fails, and the cases at the first case
 * that fails, so that the failure is reported, not a hang. */
#define RUN(_test) \
    do { \
        if (check_failed == before) \
            _test; \
    } while (0)

static void run_engine_case(const engine_case_t *c)
{
    unsigned before = check_failed;

    cur = c;
    RUN(test_empty());
    RUN(test_oldest_wins_posted());
    RUN(test_oldest_wins_unexpected());
    RUN(test_peek_keeps());
    RUN(test_remove());
    RUN(test_order_after_removals());
    RUN(test_long_queue());
    RUN(test_portals_masks());
    RUN(test_out_of_memory());
    RUN(test_steady_state_allocates_nothing());
    RUN(test_insert_positions());
    RUN(test_insert_long(0));
    RUN(test_insert_long(1));
    RUN(test_find_accept());
    RUN(test_find_accept_long());
    RUN(test_find_accept_last());
    RUN(test_insert_out_of_memory(0));
    RUN(test_insert_out_of_memory(1));
    RUN(test_small_threshold());
    RUN(test_small_in_order_deep());
    RUN(test_small_front_middle());
    RUN(test_accept_refuses_front());
    RUN(test_lookup_stats());
    RUN(test_front_kept());
    RUN(test_insert_after_hole());
    printf("%-28s %s\n", c->label, check_failed == before ? "ok" : "FAILED");
}

/* hash's indexed queue renumbers by sorting its entries into a new array.
 * When that allocation fails at an append that reached the end of the
 * order keys, the append is refused and the queue left as it was, not
 * linked with a key that wrapped. The entry comes from the matcher's pool
 * (one was freed just before), so only the renumbering allocates. */
static void test_append_renumber_no_memory(void)
{
    onic_config_t cfg;
    onic_matcher_t *m = NULL;
    onic_mentry_t *e = NULL;
    onic_mkey_t ignore, key = key_of(1, 2, 3, &ignore);
    uintptr_t want[70];
    onic_status_t s;

    onic_config_defaults(&cfg);
    CHECK(onic_matcher_create_cfg("hash", &cfg, &m) == ONIC_OK);
    if (m == NULL)
        return;
    for (uintptr_t c = 1; c <= 70; c++)
        post(m, 1, 2, 3, c); /* past the small ring's 64 slots: the index */
    CHECK_EQ(arrive(m, 1, 2, 3, 1), 1);
    m->next_seq = UINT64_MAX - m->seq_stride / 2;
    onic_mem_fail_after(0);
    s = onic_matcher_append(m, key, ignore, (void *)(uintptr_t)99, &e);
    onic_mem_fail_after(-1);
    CHECK_EQ(s, ONIC_ERR_NO_MEMORY);
    CHECK(e == NULL);
    CHECK_EQ(onic_matcher_length(m), 69);
    /* With memory back the same append goes, behind the others. */
    CHECK(onic_matcher_append(m, key, ignore, (void *)(uintptr_t)100, &e) == ONIC_OK);
    for (int i = 0; i < 69; i++)
        want[i] = (uintptr_t)i + 2;
    want[69] = 100;
    drain_expect(m, want, 70);
    onic_matcher_destroy(m);
}

static void test_mpi_encoding(void)
{
    onic_mkey_t key, ign;
    uint32_t ctx;
    int32_t src, tag;

    CHECK(onic_match_mpi_encode(ONIC_MATCH_MPI_MAX_CONTEXT, ONIC_MATCH_MPI_MAX_RANK,
                                ONIC_MATCH_MPI_MAX_TAG, &key, &ign) == ONIC_OK);
    CHECK(ign.bits == 0 && ign.id == 0);
    onic_match_mpi_decode(key, &ctx, &src, &tag);
    CHECK(ctx == UINT32_MAX && src == INT32_MAX && tag == INT32_MAX);
    CHECK(onic_match_mpi_encode(0, 0, 0, &key, &ign) == ONIC_OK);
    CHECK(key.bits == 0 && key.id == 0);

    /* Wildcards become ignore bits, and never reach the context. */
    CHECK(onic_match_mpi_encode(9, ONIC_MATCH_MPI_ANY_SOURCE, ONIC_MATCH_MPI_ANY_TAG, &key,
                                &ign) == ONIC_OK);
    CHECK(ign.id == UINT64_MAX && ign.bits == 0xffffffffull);
    CHECK(key.bits == 9ull << 32);
    onic_mkey_t other, none = {0, 0};
    CHECK(onic_match_mpi_encode(10, 3, 3, &other, &none) == ONIC_OK);
    CHECK(!onic_mkey_matches(key, ign, other, none));
    CHECK(onic_match_mpi_encode(9, INT32_MAX, INT32_MAX, &other, &none) == ONIC_OK);
    CHECK(onic_mkey_matches(key, ign, other, none));

    /* Out of range: rejected, outputs untouched. */
    key.bits = 42;
    CHECK(onic_match_mpi_encode(1ull << 32, 0, 0, &key, &ign) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_match_mpi_encode(0, -2, 0, &key, &ign) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_match_mpi_encode(0, 1ll << 31, 0, &key, &ign) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_match_mpi_encode(0, 0, -2, &key, &ign) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_match_mpi_encode(0, 0, 1ll << 31, &key, &ign) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_match_mpi_encode(0, 0, 0, NULL, &ign) == ONIC_ERR_INVALID_PARAM);
    CHECK(key.bits == 42);
}

static void test_bad_input(void)
{
    onic_matcher_t *m = (onic_matcher_t *)&m;
    onic_mkey_t k = {0, 0};

    fprintf(stderr, "(errors about bad engines and values are expected next)\n");
    CHECK(onic_matcher_create("bogus", &m) == ONIC_ERR_INVALID_PARAM);
    CHECK(m == (onic_matcher_t *)&m);
    CHECK(onic_matcher_create(NULL, NULL) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_matcher_append(NULL, k, k, NULL, NULL) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_matcher_match(NULL, k, k) == NULL);
    CHECK(onic_matcher_peek(NULL, k, k) == NULL);
    CHECK(onic_matcher_length(NULL) == 0);
    onic_matcher_destroy(NULL);

    setenv("ONIC_MATCH", "fastest", 1);
    CHECK(onic_matcher_create(NULL, &m) == ONIC_ERR_INVALID_PARAM);
    setenv("ONIC_MATCH", "list", 1);
    CHECK(onic_matcher_create(NULL, &m) == ONIC_OK);
    CHECK(strcmp(onic_matcher_engine(m), "list") == 0);
    onic_matcher_destroy(m);
    unsetenv("ONIC_MATCH");
    CHECK(onic_matcher_create(NULL, &m) == ONIC_OK);
    CHECK(strcmp(onic_matcher_engine(m), onic_match_engines()[0]) == 0);
    onic_matcher_destroy(m);

    setenv("ONIC_ALPU_CELLS", "100", 1);
    m = (onic_matcher_t *)&m;
    CHECK(onic_matcher_create("alpu", &m) == ONIC_ERR_INVALID_PARAM);
    CHECK(m == (onic_matcher_t *)&m);
    unsetenv("ONIC_ALPU_CELLS");
    setenv("ONIC_WIDE_CLEANUP", "0", 1);
    CHECK(onic_matcher_create("wide", &m) == ONIC_ERR_INVALID_PARAM);
    unsetenv("ONIC_WIDE_CLEANUP");

    /* A config that skipped the registry is still checked by the engine. */
    onic_config_t cfg;
    onic_config_defaults(&cfg);
    cfg.alpu_block = cfg.alpu_cells * 2;
    CHECK(onic_matcher_create_cfg("alpu", &cfg, &m) == ONIC_ERR_INVALID_PARAM);
}

int main(void)
{
    const char *const *names = onic_match_engines();
    size_t n = 0;

    check_watchdog("test_match", 60);

    while (names[n] != NULL)
        n++;
    CHECK_EQ(n, 4);
    CHECK(strcmp(names[0], "hash") == 0);
    for (size_t i = 0; i < n; i++) /* every name ONIC_MATCH accepts is an engine */
        CHECK(onic_match_ops_find(names[i]) != NULL &&
              strcmp(onic_match_ops_find(names[i])->name, names[i]) == 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && check_failed == 0; i++)
        run_engine_case(&cases[i]);
    test_append_renumber_no_memory();
    test_mpi_encoding();
    test_bad_input();
    return check_summary("match");
}
