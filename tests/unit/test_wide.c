/* src/match/wide.c: oldest match within and across blocks, peek and match,
 * compaction of holes and the order it keeps, the last block kept when the
 * queue empties, short queues packed in place, the fingerprint filter with
 * colliding keys and partial ignore masks, scalar and AVX2 agreeing, the list
 * engine agreeing, and the block reserve under injected out-of-memory. */
#include "check.h"
#include "match/engine.h"
#include "match/wide.h"
#include "base/config.h"
#include "base/cpu.h"
#include "base/mem.h"

#include <stdint.h>
#include <stdlib.h>

#define ALL UINT64_MAX

static const onic_mkey_t exact = {0, 0};
static const onic_mkey_t anything = {ALL, ALL};

static onic_mkey_t mkey(uint64_t bits, uint64_t id)
{
    onic_mkey_t k = {bits, id};
    return k;
}

static void *cookie(uintptr_t n)
{
    return (void *)(n + 1);  /* never NULL, which means "no match" */
}

static uintptr_t cookie_num(void *c)
{
    return (uintptr_t)c - 1;
}

static onic_matcher_t *wide_create(unsigned simd, unsigned cleanup)
{
    onic_config_t cfg;
    onic_matcher_t *m = NULL;

    onic_config_defaults(&cfg);
    cfg.simd = simd;
    cfg.wide_cleanup = cleanup;
    if (onic_matcher_create_cfg("wide", &cfg, &m) != ONIC_OK)
        return NULL;
    return m;
}

static size_t blocks_of(const onic_matcher_t *m)
{
    onic_match_wide_info_t info;
    onic_match_wide_info_get(m, &info);
    return info.blocks;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_oldest_in_block(unsigned simd)
{
    onic_matcher_t *m = wide_create(simd, 2);

    CHECK(m != NULL);
    if (m == NULL)
        return;
    /* 0: (1,1) exact; 1: (1, any id); 2: (any bits, 2); 3: (1,2) exact. */
    CHECK(onic_matcher_append(m, mkey(1, 1), exact, cookie(0), NULL) == ONIC_OK);
    CHECK(onic_matcher_append(m, mkey(1, 0), mkey(0, ALL), cookie(1), NULL) == ONIC_OK);
    CHECK(onic_matcher_append(m, mkey(0, 2), mkey(ALL, 0), cookie(2), NULL) == ONIC_OK);
    CHECK(onic_matcher_append(m, mkey(1, 2), exact, cookie(3), NULL) == ONIC_OK);
    CHECK(onic_matcher_peek(m, mkey(1, 2), exact) == cookie(1));
    CHECK(onic_matcher_peek(m, mkey(7, 2), exact) == cookie(2));
    CHECK(onic_matcher_peek(m, mkey(1, 1), exact) == cookie(0));
    CHECK(onic_matcher_peek(m, mkey(7, 7), exact) == NULL);
    /* A wildcard query against exact and wildcard entries alike. */
    CHECK(onic_matcher_peek(m, mkey(0, 2), mkey(ALL, 0)) == cookie(1));
    CHECK(onic_matcher_match(m, mkey(1, 2), exact) == cookie(1));
    CHECK(onic_matcher_match(m, mkey(1, 2), exact) == cookie(2));
    CHECK(onic_matcher_match(m, mkey(1, 2), exact) == cookie(3));
    CHECK(onic_matcher_match(m, mkey(1, 2), exact) == NULL);
    CHECK(onic_matcher_length(m) == 1);
    CHECK(onic_match_wide_check(m));
    onic_matcher_destroy(m);
}

static void test_oldest_across_blocks(unsigned simd)
{
    onic_matcher_t *m = wide_create(simd, 1);
    onic_match_stats_t st;
    uint64_t before;
    size_t failed = 0;

    CHECK(m != NULL);
    if (m == NULL)
        return;
    /* Exact keys 100.. in blocks 0-2, one wildcard at 37 (block 2) and an
     * exact twin of entry 40 at 50: the wildcard is older than both. */
    for (uintptr_t i = 0; i < 60; i++) {
        if (i == 37)
            failed += onic_matcher_append(m, mkey(0, 9), mkey(ALL, 0), cookie(i), NULL) != ONIC_OK;
        else
            failed += onic_matcher_append(m, mkey(100 + (i == 50 ? 40 : i), 9), exact,
                                          cookie(i), NULL) != ONIC_OK;
    }
    CHECK_EQ(failed, 0);
    CHECK(blocks_of(m) == 4);
    CHECK(onic_matcher_peek(m, mkey(105, 9), exact) == cookie(5));
    CHECK(onic_matcher_peek(m, mkey(120, 9), exact) == cookie(20));
    CHECK(onic_matcher_peek(m, mkey(140, 9), exact) == cookie(37));
    CHECK(onic_matcher_peek(m, mkey(100, 8), mkey(0, ALL)) == cookie(0));

    /* inspected: every valid slot of each block compared (16 + 16 + 16). */
    onic_matcher_stats(m, &st);
    before = st.inspected;
    CHECK(onic_matcher_peek(m, mkey(140, 9), exact) == cookie(37));
    onic_matcher_stats(m, &st);
    CHECK_EQ(st.inspected - before, 48);

    CHECK(onic_matcher_match(m, mkey(140, 9), exact) == cookie(37));
    CHECK(onic_matcher_match(m, mkey(140, 9), exact) == cookie(40));
    CHECK(onic_matcher_match(m, mkey(140, 9), exact) == cookie(50));
    CHECK(onic_matcher_match(m, mkey(140, 9), exact) == NULL);
    CHECK(onic_match_wide_check(m));
    onic_matcher_destroy(m);
}

static void test_peek_and_remove(void)
{
    onic_matcher_t *m = wide_create(ONIC_SIMD_AUTO, 2);
    onic_mentry_t *e[20];
    size_t failed = 0;

    CHECK(m != NULL);
    if (m == NULL)
        return;
    for (uintptr_t i = 0; i < 20; i++)
        failed += onic_matcher_append(m, mkey(i % 2, 0), exact, cookie(i), &e[i]) != ONIC_OK;
    for (int i = 0; i < 3; i++)
        failed += onic_matcher_peek(m, mkey(1, 0), exact) != cookie(1);
    CHECK_EQ(failed, 0);
    CHECK(onic_matcher_length(m) == 20);
    CHECK(onic_matcher_match(m, mkey(1, 0), exact) == cookie(1));
    CHECK(onic_matcher_length(m) == 19);
    CHECK(onic_matcher_remove(m, e[1]) == ONIC_ERR_NO_ELEM);
    CHECK(onic_matcher_remove(m, e[3]) == ONIC_OK);
    CHECK(onic_matcher_remove(m, e[17]) == ONIC_OK);  /* in the second block */
    CHECK(onic_matcher_peek(m, mkey(1, 0), exact) == cookie(5));
    CHECK(onic_matcher_match(m, anything, anything) == cookie(0));
    CHECK(onic_match_wide_check(m));
    onic_matcher_destroy(m);
}

/* Remove three of every four at random: the clean-up pass the removals drive
 * keeps the chain near its minimum, and a few misses finish the job. */
static void test_compaction(unsigned cleanup)
{
    enum { N = 1600 };
    onic_matcher_t *m = wide_create(ONIC_SIMD_AUTO, cleanup);
    onic_mentry_t **e = malloc(N * sizeof(*e));
    size_t len, steps = 0, failed = 0;

    CHECK(m != NULL && e != NULL);
    if (m == NULL || e == NULL)
        goto out;
    for (uintptr_t i = 0; i < N; i++)
        failed += onic_matcher_append(m, mkey(i, 0), exact, cookie(i), &e[i]) != ONIC_OK;
    CHECK_EQ(failed, 0);
    CHECK_EQ(blocks_of(m), N / 16);
    for (size_t i = 0; i < N; i++)
        if (rng() % 4 != 0)
            onic_matcher_remove(m, e[i]);
    len = onic_matcher_length(m);
    /* Left alone, 3/4 holes would keep nearly all N / 16 blocks. */
    CHECK(blocks_of(m) <= (len + 15) / 16 + 2 * (N / 16) / (16 * cleanup) + 2);
    while (blocks_of(m) > (len + 15) / 16 && steps < 2 * N) {
        onic_matcher_peek(m, mkey(ALL, ALL), exact);
        steps++;
    }
    CHECK_EQ(blocks_of(m), (len + 15) / 16);
    /* One sweep or so, not one per hole. */
    CHECK(steps <= 2 * (N / 16) / cleanup + 2);
    CHECK(onic_match_wide_check(m));
out:
    onic_matcher_destroy(m);
    free(e);
}

/* One operation compacts at most ONIC_WIDE_CLEANUP blocks. 100 full
 * blocks; the odd entries of the first few removed, too few holes for the
 * pass the removals drive (16 + blocks / cleanup); then one miss, whose
 * pass is eager: each block it compacts takes the next half-full one whole
 * and frees it, so it frees exactly `cleanup` blocks, no more. */
static void test_cleanup_per_operation(unsigned cleanup)
{
    enum { N = 1600 };
    onic_matcher_t *m = wide_create(ONIC_SIMD_AUTO, cleanup);
    onic_mentry_t **e = malloc(N * sizeof(*e));
    /* 8 holes each: 8 * halves - 16 below 100 / cleanup, an even count */
    unsigned halves = cleanup == 1 ? 14 : 8;
    size_t failed = 0;

    CHECK(m != NULL && e != NULL && cleanup <= 2);
    if (m == NULL || e == NULL)
        goto out;
    for (uintptr_t i = 0; i < N; i++)
        failed += onic_matcher_append(m, mkey(i, 0), exact, cookie(i), &e[i]) != ONIC_OK;
    for (unsigned b = 0; b < halves; b++)
        for (unsigned k = 1; k < 16; k += 2)
            failed += onic_matcher_remove(m, e[b * 16 + k]) != ONIC_OK;
    CHECK_EQ(failed, 0);
    CHECK_EQ(blocks_of(m), N / 16); /* the removals' pass not due yet */
    CHECK(onic_matcher_peek(m, mkey(N + 5, 0), exact) == NULL);
    CHECK_EQ(blocks_of(m), N / 16 - cleanup);
    CHECK(onic_match_wide_check(m));
out:
    onic_matcher_destroy(m);
    free(e);
}

/* Every other of 1000 distinct entries removed, compacted, then drained by
 * full wildcards: cookies come back in append order. */
static void test_order_kept(unsigned simd, unsigned cleanup)
{
    enum { N = 1000 };
    onic_matcher_t *m = wide_create(simd, cleanup);
    onic_mentry_t *e[N];
    uintptr_t want = 1;
    void *c;
    int in_order = 1;
    size_t failed = 0;

    CHECK(m != NULL);
    if (m == NULL)
        return;
    for (uintptr_t i = 0; i < N; i++)
        failed += onic_matcher_append(m, mkey(i, N - i), exact, cookie(i), &e[i]) != ONIC_OK;
    for (size_t i = 0; i < N; i += 2)
        failed += onic_matcher_remove(m, e[i]) != ONIC_OK;
    CHECK_EQ(failed, 0);
    CHECK(onic_match_wide_check(m));
    while ((c = onic_matcher_match(m, anything, anything)) != NULL) {
        in_order &= cookie_num(c) == want;
        want += 2;
    }
    CHECK(in_order);
    CHECK_EQ(want, N + 1);
    /* The last block stays, empty, for the next append. */
    CHECK(onic_matcher_length(m) == 0 && blocks_of(m) == 1);
    CHECK(onic_match_wide_check(m));
    onic_matcher_destroy(m);
}

/* Random appends, removals and matches on 2000 keys, about half queued at
 * any time: the free slots stay within the bound wide.c documents and the
 * mean occupancy stays high. */
static void test_occupancy(unsigned cleanup)
{
    enum { N = 2000, OPS = 40000 };
    onic_matcher_t *m = wide_create(ONIC_SIMD_AUTO, cleanup);
    onic_mentry_t **e = calloc(N, sizeof(*e));
    double sum_ratio = 0;
    size_t over_bound = 0, live = 0, failed = 0;

    CHECK(m != NULL && e != NULL);
    if (m == NULL || e == NULL)
        goto out;
    for (uint64_t op = 0; op < OPS; op++) {
        size_t i = rng() % N, blocks, free_slots;
        if (e[i] == NULL) {
            failed += onic_matcher_append(m, mkey(i, 0), exact, cookie(i), &e[i]) != ONIC_OK;
            live++;
        } else {
            if (rng() % 4 == 0)
                failed += onic_matcher_match(m, mkey(i, 0), exact) != cookie(i);
            else
                failed += onic_matcher_remove(m, e[i]) != ONIC_OK;
            e[i] = NULL;
            live--;
        }
        blocks = blocks_of(m);
        free_slots = blocks * 16 - onic_matcher_length(m);
        over_bound += free_slots > 2 * blocks / cleanup + 32;
        if (op >= N)
            sum_ratio += (double)onic_matcher_length(m) / (16.0 * (double)blocks);
    }
    CHECK_EQ(failed, 0);
    CHECK_EQ(live, onic_matcher_length(m));
    CHECK_EQ(over_bound, 0);
    printf("wide: cleanup %u: mean occupancy %.3f\n", cleanup, sum_ratio / (OPS - N));
    CHECK(sum_ratio / (OPS - N) > 0.9);
    CHECK(onic_match_wide_check(m));
out:
    onic_matcher_destroy(m);
    free(e);
}

/* Random operations on small keys with 0/10/50% wildcards, mirrored on
 * list and wide: identical answers, and wide's invariants hold throughout. */
static void test_against_list(unsigned simd, unsigned cleanup, unsigned wild_pct)
{
    enum { MAXLIVE = 600, OPS = 60000 };
    onic_config_t cfg;
    onic_matcher_t *ref = NULL, *m = wide_create(simd, cleanup);
    onic_mentry_t *re[MAXLIVE], *we[MAXLIVE];
    size_t live = 0, mismatches = 0, bad_checks = 0;
    uintptr_t next_cookie = 0;
    onic_match_stats_t st;

    onic_config_defaults(&cfg);
    CHECK(m != NULL && onic_matcher_create_cfg("list", &cfg, &ref) == ONIC_OK);
    if (m == NULL || ref == NULL)
        goto out;
    for (unsigned op = 0; op < OPS; op++) {
        uint64_t r = rng();
        onic_mkey_t key = mkey(r & 3, (r >> 2) & 3), ign = exact;
        if ((r >> 8) % 100 < wild_pct)
            ign = ((r >> 16) & 1) ? mkey(0, ALL) : mkey(ALL, (r >> 17) & 1);
        /* Phases of 4000 operations that grow the queue, then drain it. */
        static const unsigned char grow[8] = {0, 0, 1, 2, 3, 3, 3, 3};
        static const unsigned char drain[8] = {0, 0, 0, 0, 1, 2, 2, 3};
        unsigned what = ((op / 4000) % 2 == 0 ? grow : drain)[(r >> 20) % 8];
        if (what == 3 && live == MAXLIVE)
            what = 1;
        switch (what) {
        case 0: {  /* match */
            void *a = onic_matcher_match(ref, key, ign), *b = onic_matcher_match(m, key, ign);
            mismatches += a != b;
            if (a != NULL)
                for (size_t i = 0; i < live; i++)
                    if (!onic_mentry_queued(re[i])) {
                        re[i] = re[--live];
                        we[i] = we[live];
                        break;
                    }
            break;
        }
        case 1:  /* peek */
            mismatches += onic_matcher_peek(ref, key, ign) != onic_matcher_peek(m, key, ign);
            break;
        case 2:  /* remove */
            if (live > 0) {
                size_t i = (r >> 32) % live;
                mismatches += onic_matcher_remove(ref, re[i]) != onic_matcher_remove(m, we[i]);
                re[i] = re[--live];
                we[i] = we[live];
            }
            break;
        default:  /* append */
            mismatches += onic_matcher_append(ref, key, ign, cookie(next_cookie), &re[live]) !=
                          onic_matcher_append(m, key, ign, cookie(next_cookie), &we[live]);
            next_cookie++;
            live++;
            break;
        }
        mismatches += onic_matcher_length(ref) != onic_matcher_length(m);
        if (op % 97 == 0)
            bad_checks += !onic_match_wide_check(m);
    }
    onic_matcher_stats(m, &st);
    CHECK_EQ(mismatches, 0);
    CHECK_EQ(bad_checks, 0);
    CHECK(st.max_length > 300 && st.hits > OPS / 10);
    CHECK(onic_match_wide_check(m));
out:
    onic_matcher_destroy(ref);
    onic_matcher_destroy(m);
}

/* The same random run on a scalar and an AVX2 matcher: same answers and the
 * same inspected count. */
static void test_simd_agree(void)
{
    enum { OPS = 50000 };
    onic_matcher_t *s, *v;
    onic_match_stats_t ss, vs;
    size_t mismatches = 0;

    if (!onic_cpu_has_avx2()) {
        printf("wide: no AVX2 on this CPU, skipping the scalar/AVX2 comparison\n");
        return;
    }
    s = wide_create(ONIC_SIMD_SCALAR, 1);
    v = wide_create(ONIC_SIMD_AVX2, 1);
    CHECK(s != NULL && v != NULL);
    if (s == NULL || v == NULL)
        goto out;
    for (unsigned op = 0; op < OPS; op++) {
        uint64_t r = rng();
        /* Keys spread over whole words so every lane bit is exercised. */
        onic_mkey_t key = mkey(rng() & 0x8000000100000003ull, rng() & 0x8000000000000001ull);
        onic_mkey_t ign = (r & 7) == 0 ? mkey(rng(), rng()) : exact;
        if ((r >> 8) % 3 == 0 || onic_matcher_length(s) < 100)
            mismatches += onic_matcher_append(s, key, ign, cookie(op), NULL) !=
                          onic_matcher_append(v, key, ign, cookie(op), NULL);
        else if ((r >> 8) % 3 == 1)
            mismatches += onic_matcher_match(s, key, ign) != onic_matcher_match(v, key, ign);
        else
            mismatches += onic_matcher_peek(s, key, ign) != onic_matcher_peek(v, key, ign);
    }
    onic_matcher_stats(s, &ss);
    onic_matcher_stats(v, &vs);
    CHECK_EQ(mismatches, 0);
    CHECK(ss.hits > OPS / 10 && ss.hits < ss.lookups);
    CHECK_EQ(ss.inspected, vs.inspected);
    CHECK_EQ(ss.hits, vs.hits);
out:
    onic_matcher_destroy(s);
    onic_matcher_destroy(v);
}

/* A queue that goes between empty and one entry keeps its one block: nothing
 * is unlinked or relinked, and no allocation happens even with every
 * allocation failing. */
static void test_lone_block_kept(unsigned simd)
{
    onic_matcher_t *m = wide_create(simd, 2);
    onic_match_wide_info_t before, after;
    size_t failed = 0;

    CHECK(m != NULL);
    if (m == NULL)
        return;
    CHECK(onic_matcher_append(m, mkey(0, 0), exact, cookie(0), NULL) == ONIC_OK);
    CHECK(onic_matcher_match(m, mkey(0, 0), exact) == cookie(0));
    CHECK(onic_matcher_length(m) == 0 && blocks_of(m) == 1);
    CHECK(onic_matcher_peek(m, anything, anything) == NULL);
    CHECK(onic_match_wide_check(m));
    onic_match_wide_info_get(m, &before);

    onic_mem_fail_after(0);
    for (uintptr_t i = 1; i <= 1000; i++) {
        failed += onic_matcher_append(m, mkey(i, 7), exact, cookie(i), NULL) != ONIC_OK;
        failed += onic_matcher_length(m) != 1 || blocks_of(m) != 1;
        failed += onic_matcher_match(m, mkey(i, 7), exact) != cookie(i);
    }
    /* A removal empties it the same way. */
    {
        onic_mentry_t *e = NULL;
        failed += onic_matcher_append(m, mkey(1, 1), exact, cookie(1), &e) != ONIC_OK;
        failed += e == NULL || onic_matcher_remove(m, e) != ONIC_OK;
    }
    onic_mem_fail_after(-1);
    CHECK_EQ(failed, 0);
    onic_match_wide_info_get(m, &after);
    CHECK(after.blocks == 1 && after.holes == 16 && after.spare == before.spare);
    CHECK(onic_match_wide_check(m));
    onic_matcher_destroy(m);
}

/* Up to 12 entries matched in random order: the full tail is packed in place,
 * its ring wrapping round, so the queue never takes a second block; answers
 * and order agree with the list engine throughout. */
static void test_short_queue(unsigned simd)
{
    enum { N = 12, OPS = 20000 };
    onic_matcher_t *ref = NULL, *m = wide_create(simd, 2);
    onic_config_t cfg;
    uint64_t keys[N];
    uintptr_t next = 0;
    size_t failed = 0, mismatches = 0, extra_blocks = 0, bad_checks = 0;
    void *a, *b;

    onic_config_defaults(&cfg);
    CHECK(m != NULL && onic_matcher_create_cfg("list", &cfg, &ref) == ONIC_OK);
    if (m == NULL || ref == NULL)
        goto out;
    for (; next < N; next++) {
        keys[next] = next;
        failed += onic_matcher_append(ref, mkey(next, next % 3), exact, cookie(next), NULL) !=
                  ONIC_OK;
        failed += onic_matcher_append(m, mkey(next, next % 3), exact, cookie(next), NULL) !=
                  ONIC_OK;
    }
    for (unsigned op = 0; op < OPS; op++, next++) {
        size_t j = rng() % N;
        /* Every other lookup ignores the id: the filter then uses bits alone. */
        onic_mkey_t ign = op % 2 ? mkey(0, ALL) : exact;
        a = onic_matcher_match(ref, mkey(keys[j], keys[j] % 3), ign);
        b = onic_matcher_match(m, mkey(keys[j], keys[j] % 3), ign);
        mismatches += a != b || a == NULL;
        keys[j] = next;
        failed += onic_matcher_append(ref, mkey(next, next % 3), exact, cookie(next), NULL) !=
                  ONIC_OK;
        failed += onic_matcher_append(m, mkey(next, next % 3), exact, cookie(next), NULL) !=
                  ONIC_OK;
        extra_blocks += blocks_of(m) != 1;
        if (op % 101 == 0)
            bad_checks += !onic_match_wide_check(m);
    }
    while ((a = onic_matcher_match(ref, anything, anything)) != NULL)
        mismatches += onic_matcher_match(m, anything, anything) != a;
    CHECK_EQ(failed, 0);
    CHECK_EQ(mismatches, 0);
    CHECK_EQ(extra_blocks, 0);
    CHECK_EQ(bad_checks, 0);
    CHECK(onic_matcher_length(m) == 0 && onic_match_wide_check(m));
out:
    onic_matcher_destroy(ref);
    onic_matcher_destroy(m);
}

/* An ignore mask for the filter test: mostly none, else part or all of one
 * word, or scattered bits of both. */
static onic_mkey_t random_ignore(unsigned pct)
{
    uint64_t r = rng();

    if (r % 100 >= pct)
        return exact;
    switch ((r >> 8) % 4) {
    case 0: return mkey(0xff, 0);
    case 1: return mkey(0, ALL);
    case 2: return mkey(ALL, 0);
    default: return mkey(rng() & rng() & rng(), rng() & rng() & rng());
    }
}

/* Keys from a range wide enough that fingerprints collide inside blocks,
 * entries and queries that ignore parts of words the filter must see
 * through, random appends, matches, peeks and removals: the same answers as
 * the list engine. */
static void test_filter_against_list(unsigned simd, unsigned cleanup)
{
    enum { MAXLIVE = 500, OPS = 60000 };
    onic_config_t cfg;
    onic_matcher_t *ref = NULL, *m = wide_create(simd, cleanup);
    onic_mentry_t *re[MAXLIVE], *we[MAXLIVE];
    onic_mkey_t live_keys[MAXLIVE];
    size_t live = 0, mismatches = 0, bad_checks = 0;
    uintptr_t next_cookie = 0;
    onic_match_stats_t st;

    onic_config_defaults(&cfg);
    CHECK(m != NULL && onic_matcher_create_cfg("list", &cfg, &ref) == ONIC_OK);
    if (m == NULL || ref == NULL)
        goto out;
    for (unsigned op = 0; op < OPS; op++) {
        uint64_t r = rng();
        /* Grow to about MAXLIVE / 2, then hold there. */
        unsigned what = live < MAXLIVE / 2 ? (unsigned)(r % 2) * 3 : (unsigned)(r % 4);
        onic_mkey_t key = mkey(rng() % 3000, rng() % 40), ign;

        if (what != 3 && live > 0 && (r >> 8) % 5 != 0)
            key = live_keys[(r >> 16) % live];  /* aim at a queued key */
        if (what == 3 && live == MAXLIVE)
            what = 1;
        switch (what) {
        case 0: {
            void *a, *b;
            ign = random_ignore(20);
            a = onic_matcher_match(ref, key, ign);
            b = onic_matcher_match(m, key, ign);
            mismatches += a != b;
            if (a != NULL)
                for (size_t i = 0; i < live; i++)
                    if (!onic_mentry_queued(re[i])) {
                        re[i] = re[--live];
                        we[i] = we[live];
                        live_keys[i] = live_keys[live];
                        break;
                    }
            break;
        }
        case 1:
            ign = random_ignore(20);
            mismatches += onic_matcher_peek(ref, key, ign) != onic_matcher_peek(m, key, ign);
            break;
        case 2:
            if (live > 0) {
                size_t i = (r >> 32) % live;
                mismatches += onic_matcher_remove(ref, re[i]) != onic_matcher_remove(m, we[i]);
                re[i] = re[--live];
                we[i] = we[live];
                live_keys[i] = live_keys[live];
            }
            break;
        default:
            ign = random_ignore(30);
            mismatches += onic_matcher_append(ref, key, ign, cookie(next_cookie), &re[live]) !=
                          onic_matcher_append(m, key, ign, cookie(next_cookie), &we[live]);
            live_keys[live++] = key;
            next_cookie++;
            break;
        }
        mismatches += onic_matcher_length(ref) != onic_matcher_length(m);
        if (op % 89 == 0)
            bad_checks += !onic_match_wide_check(m);
    }
    onic_matcher_stats(m, &st);
    CHECK_EQ(mismatches, 0);
    CHECK_EQ(bad_checks, 0);
    CHECK(st.hits > OPS / 8 && st.max_length > MAXLIVE / 3);
    CHECK(onic_match_wide_check(m));
out:
    onic_matcher_destroy(ref);
    onic_matcher_destroy(m);
}

/* With every allocation failing, an append that needs a new block fails in
 * reserve and changes nothing; one that fits the tail still succeeds. */
static void test_reserve_oom(void)
{
    onic_matcher_t *m = wide_create(ONIC_SIMD_AUTO, 2);
    onic_match_wide_info_t info, after;
    onic_match_stats_t st;
    uintptr_t n = 0, want = 0;
    onic_status_t status;
    int in_order = 1;
    void *c;

    CHECK(m != NULL);
    if (m == NULL)
        return;
    /* The first append allocates the first block chunk. */
    onic_mem_fail_after(0);
    CHECK(onic_matcher_append(m, mkey(0, 0), exact, cookie(0), NULL) == ONIC_ERR_NO_MEMORY);
    onic_mem_fail_after(-1);
    CHECK(onic_matcher_length(m) == 0 && blocks_of(m) == 0);

    /* Fill until the tail is full and no spare block is left. */
    do {
        status = onic_matcher_append(m, mkey(n, 0), exact, cookie(n), NULL);
        n++;
        onic_match_wide_info_get(m, &info);
    } while (status == ONIC_OK && !(info.spare == 0 && n % 16 == 0) && n < 100000);
    CHECK(status == ONIC_OK);
    CHECK(info.spare == 0 && info.holes == 0);

    onic_mem_fail_after(0);
    status = onic_matcher_append(m, mkey(n, 0), exact, cookie(n), NULL);
    onic_mem_fail_after(-1);
    CHECK(status == ONIC_ERR_NO_MEMORY);
    onic_match_wide_info_get(m, &after);
    onic_matcher_stats(m, &st);
    CHECK(onic_matcher_length(m) == n && st.appends == n);
    CHECK(after.blocks == info.blocks && after.spare == 0);
    CHECK(onic_match_wide_check(m));

    /* Memory back: the append succeeds and leaves spares. */
    CHECK(onic_matcher_append(m, mkey(n, 0), exact, cookie(n), NULL) == ONIC_OK);
    n++;
    onic_match_wide_info_get(m, &info);
    CHECK(info.spare > 0 && info.blocks == after.blocks + 1);

    /* Room in the tail: no block needed, so no allocation either. */
    onic_mem_fail_after(0);
    status = onic_matcher_append(m, mkey(n, 0), exact, cookie(n), NULL);
    onic_mem_fail_after(-1);
    CHECK(status == ONIC_OK);
    n++;

    while ((c = onic_matcher_match(m, anything, anything)) != NULL)
        in_order &= cookie_num(c) == want++;
    CHECK(in_order);
    CHECK_EQ(want, n);
    onic_matcher_destroy(m);
}

/* Engine state allocation failing: create fails, nothing leaks (ASan). */
static void test_init_oom(void)
{
    onic_matcher_t *m = NULL;
    onic_config_t cfg;

    onic_config_defaults(&cfg);
    onic_mem_fail_after(1);  /* the matcher yes, the engine's state no */
    CHECK(onic_matcher_create_cfg("wide", &cfg, &m) == ONIC_ERR_NO_MEMORY);
    onic_mem_fail_after(-1);
    CHECK(m == NULL);
}

static void test_simd_choice(void)
{
    onic_matcher_t *m = NULL;
    onic_config_t cfg;
    onic_status_t status;

    onic_config_defaults(&cfg);
    cfg.simd = ONIC_SIMD_AVX2;
    status = onic_matcher_create_cfg("wide", &cfg, &m);
    CHECK(status == (onic_cpu_has_avx2() ? ONIC_OK : ONIC_ERR_INVALID_PARAM));
    CHECK((m != NULL) == (status == ONIC_OK));
    onic_matcher_destroy(m);
}

int main(void)
{
    static const unsigned simds[] = {ONIC_SIMD_SCALAR, ONIC_SIMD_AUTO};

    check_watchdog("test_wide", 60);

    for (size_t i = 0; i < 2; i++) {
        test_oldest_in_block(simds[i]);
        test_oldest_across_blocks(simds[i]);
        test_order_kept(simds[i], 1);
        test_order_kept(simds[i], 1024);
        test_against_list(simds[i], 1, 0);
        test_against_list(simds[i], 1, 10);
        test_against_list(simds[i], 1, 50);
        test_against_list(simds[i], 1024, 50);
    }
    for (size_t i = 0; i < 2; i++) {
        test_lone_block_kept(simds[i]);
        test_short_queue(simds[i]);
        test_filter_against_list(simds[i], 2);
        test_filter_against_list(simds[i], 1024);
    }
    test_peek_and_remove();
    test_compaction(1);
    test_compaction(4);
    test_cleanup_per_operation(1);
    test_cleanup_per_operation(2);
    test_occupancy(1);
    test_occupancy(2);
    test_simd_agree();
    test_reserve_oom();
    test_init_oom();
    test_simd_choice();
    return check_summary("wide");
}
