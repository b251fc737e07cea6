/* The matching rules every engine must keep, run against each engine (and the
 * alpu engine again with its unit loaded from the first entry). */
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
static void tune_alpu_small(onic_config_t *cfg)
{
    cfg->alpu_cells = 8;
    cfg->alpu_block = 2;
    cfg->alpu_threshold = 0;
}

static const engine_case_t cases[] = {
    {"list", "list", tune_none},
    {"hash", "hash", tune_none},
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

static void run_engine_case(const engine_case_t *c)
{
    unsigned before = check_failed;

    cur = c;
    test_empty();
    test_oldest_wins_posted();
    test_oldest_wins_unexpected();
    test_peek_keeps();
    test_remove();
    test_order_after_removals();
    test_long_queue();
    test_portals_masks();
    test_out_of_memory();
    test_steady_state_allocates_nothing();
    printf("%-28s %s\n", c->label, check_failed == before ? "ok" : "FAILED");
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

    while (names[n] != NULL)
        n++;
    CHECK_EQ(n, 4);
    CHECK(strcmp(names[0], "hash") == 0);
    for (size_t i = 0; i < n; i++) /* every name ONIC_MATCH accepts is an engine */
        CHECK(onic_match_ops_find(names[i]) != NULL &&
              strcmp(onic_match_ops_find(names[i])->name, names[i]) == 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_engine_case(&cases[i]);
    test_mpi_encoding();
    test_bad_input();
    return check_summary("match");
}
