/* Tests of the software ALPU unit (its protocol, one request at a time) and
 * of the alpu engine that drives it, including a small differential run
 * against the list engine. Deterministic: every random stream is seeded.
 *
 *   test_alpu_unit             everything, on the C unit
 *   test_alpu_unit --rtl LIB   the engine's differential runs on the RTL
 *                              unit (ONIC_ALPU_UNIT=rtl, plug-in LIB), ctest
 *                              label rtl (hw/CMakeLists.txt) */
#include "check.h"
#include "match/alpu_unit.h"
#include "match/engine.h"
#include "base/cpu.h"
#include "base/log.h"
#include "base/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const onic_mkey_t NONE = {0, 0};
static const onic_mkey_t ALL  = {UINT64_MAX, UINT64_MAX};

static onic_mkey_t key(uint64_t bits, uint64_t id)
{
    onic_mkey_t k = {bits, id};
    return k;
}

static uint64_t rng_state;

static uint64_t rng(void)
{
    /* xorshift64*: small and good enough to pick keys and operations. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* --- unit helpers: drive the unit only through its FIFOs --- */

static onic_alpu_unit_t *unit_new(unsigned cells, unsigned block, onic_simd_t simd)
{
    onic_alpu_unit_t *u = NULL;
    onic_status_t status = onic_alpu_unit_create(cells, block, simd, &u);

    REQUIRE(status == ONIC_OK && u != NULL);
    return u;
}

static void cmd(onic_alpu_unit_t *u, uint32_t type, onic_mkey_t k, onic_mkey_t ign, uint64_t tag)
{
    onic_alpu_cmd_t c = {.type = type, .key = k, .ignore = ign, .tag = tag};
    REQUIRE(onic_alpu_unit_cmd_push(u, &c) == ONIC_OK);
}

static void hdr(onic_alpu_unit_t *u, onic_mkey_t k, onic_mkey_t ign, int probe)
{
    onic_alpu_hdr_t h = {.key = k, .ignore = ign, .probe = (uint32_t)probe};
    REQUIRE(onic_alpu_unit_hdr_push(u, &h) == ONIC_OK);
}

/* The next result's type (0 if none), its tag or free count in *val_p. */
static uint32_t result(onic_alpu_unit_t *u, uint64_t *val_p)
{
    onic_alpu_result_t r;

    if (onic_alpu_unit_result_pop(u, &r) != ONIC_OK)
        return 0;
    if (val_p != NULL)
        *val_p = r.type == ONIC_ALPU_RES_START_ACK ? r.free : r.tag;
    return r.type;
}

/* START_INSERT and its acknowledgement; returns the free count. */
static uint64_t start_insert(onic_alpu_unit_t *u)
{
    uint64_t free = UINT64_MAX;

    cmd(u, ONIC_ALPU_CMD_START_INSERT, NONE, NONE, 0);
    onic_alpu_unit_run(u);
    REQUIRE(result(u, &free) == ONIC_ALPU_RES_START_ACK);
    return free;
}

static void stop_insert(onic_alpu_unit_t *u)
{
    cmd(u, ONIC_ALPU_CMD_STOP_INSERT, NONE, NONE, 0);
    onic_alpu_unit_run(u);
}

/* Insert n exact cells keyed (bits, first + i) tagged first + i. */
static void insert_exact(onic_alpu_unit_t *u, uint64_t bits, uint64_t first, unsigned n)
{
    start_insert(u);
    for (unsigned i = 0; i < n; i++) {
        cmd(u, ONIC_ALPU_CMD_INSERT, key(bits, first + i), NONE, first + i);
        onic_alpu_unit_run(u);  /* keep the command FIFO short */
    }
    stop_insert(u);
}

/* Insert one cell with ignore bits. */
static void insert_wild(onic_alpu_unit_t *u, onic_mkey_t k, onic_mkey_t ign, uint64_t tag)
{
    start_insert(u);
    cmd(u, ONIC_ALPU_CMD_INSERT, k, ign, tag);
    stop_insert(u);
}

/* One request run to completion: the result type, the tag in *tag_p. */
static uint32_t request(onic_alpu_unit_t *u, onic_mkey_t k, onic_mkey_t ign, int probe,
                        uint64_t *tag_p)
{
    hdr(u, k, ign, probe);
    onic_alpu_unit_run(u);
    return result(u, tag_p);
}

static uint64_t discarded(const onic_alpu_unit_t *u)
{
    onic_alpu_unit_counters_t c;
    onic_alpu_unit_counters(u, &c);
    return c.discarded;
}

/* --- unit tests --- */

static void test_unit_create(void)
{
    onic_alpu_unit_t *u = NULL;

    CHECK(onic_alpu_unit_create(8, 16, ONIC_SIMD_SCALAR, &u) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_alpu_unit_create(12, 4, ONIC_SIMD_SCALAR, &u) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_alpu_unit_create(8, 3, ONIC_SIMD_SCALAR, &u) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_alpu_unit_create(8, 0, ONIC_SIMD_SCALAR, &u) == ONIC_ERR_INVALID_PARAM);
    CHECK(onic_alpu_unit_create(8, 2, (onic_simd_t)7, &u) == ONIC_ERR_INVALID_PARAM);
    CHECK(u == NULL);
    if (onic_cpu_has_avx2()) {
        CHECK(onic_alpu_unit_create(8, 2, ONIC_SIMD_AVX2, &u) == ONIC_OK);
        CHECK(strcmp(onic_alpu_unit_simd(u), "avx2") == 0);
        onic_alpu_unit_destroy(u);
    } else {
        CHECK(onic_alpu_unit_create(8, 2, ONIC_SIMD_AVX2, &u) == ONIC_ERR_INVALID_PARAM);
    }
    u = unit_new(8, 2, ONIC_SIMD_SCALAR);
    CHECK(strcmp(onic_alpu_unit_simd(u), "scalar") == 0);
    onic_alpu_unit_destroy(u);
    for (long k = 0; k < 3; k++) {
        onic_status_t status;
        u = NULL;
        onic_mem_fail_after(k);
        status = onic_alpu_unit_create(8, 2, ONIC_SIMD_AUTO, &u);
        onic_mem_fail_after(-1);
        CHECK(status == ONIC_OK || status == ONIC_ERR_NO_MEMORY);
        onic_alpu_unit_destroy(u);
    }
}

static void test_unit_start_ack(void)
{
    onic_alpu_unit_t *u = unit_new(8, 2, ONIC_SIMD_AUTO);

    CHECK(start_insert(u) == 8);          /* empty */
    for (unsigned i = 0; i < 3; i++)
        cmd(u, ONIC_ALPU_CMD_INSERT, key(1, i), NONE, i);
    stop_insert(u);
    CHECK(onic_alpu_unit_count(u) == 3);
    CHECK(start_insert(u) == 5);          /* partly full */
    for (unsigned i = 3; i < 8; i++)
        cmd(u, ONIC_ALPU_CMD_INSERT, key(1, i), NONE, i);
    stop_insert(u);
    CHECK(start_insert(u) == 0);          /* full */
    stop_insert(u);
    CHECK(onic_alpu_unit_count(u) == 8 && onic_alpu_unit_free_cells(u) == 0);
    onic_alpu_unit_destroy(u);
}

static void test_unit_held_match(void)
{
    onic_alpu_unit_t *u = unit_new(8, 2, ONIC_SIMD_AUTO);
    uint64_t tag = 0;

    insert_exact(u, 1, 0, 2);
    CHECK(start_insert(u) == 6);
    /* Fails now: held, no MATCH_FAILURE inside insert mode. */
    hdr(u, key(9, 9), NONE, 0);
    onic_alpu_unit_run(u);
    CHECK(result(u, NULL) == 0);
    /* Requests are served in order: this one waits behind the held one. */
    hdr(u, key(1, 0), NONE, 0);
    onic_alpu_unit_run(u);
    CHECK(result(u, NULL) == 0);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(9, 9), NONE, 77);
    onic_alpu_unit_run(u);
    CHECK(result(u, NULL) == 0);
    stop_insert(u);
    CHECK(result(u, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 77);
    CHECK(result(u, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 0);
    CHECK(onic_alpu_unit_count(u) == 1);

    /* A success in insert mode is reported before STOP_INSERT. */
    start_insert(u);
    hdr(u, key(1, 1), NONE, 1);
    onic_alpu_unit_run(u);
    CHECK(result(u, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 1);

    /* Still no match after STOP_INSERT: now the failure is reported. */
    hdr(u, key(5, 5), NONE, 0);
    onic_alpu_unit_run(u);
    CHECK(result(u, NULL) == 0);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(6, 6), NONE, 66);
    onic_alpu_unit_run(u);
    CHECK(result(u, NULL) == 0);
    stop_insert(u);
    CHECK(result(u, NULL) == ONIC_ALPU_RES_MATCH_FAILURE);
    CHECK(result(u, NULL) == 0);
    CHECK(onic_alpu_unit_count(u) == 2);
    onic_alpu_unit_destroy(u);
}

static void test_unit_oldest_wins(void)
{
    onic_alpu_unit_t *u = unit_new(8, 2, ONIC_SIMD_AUTO);
    onic_mkey_t any_id = {0, UINT64_MAX};
    uint64_t tag = 0;

    start_insert(u);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(1, 1), NONE, 10);    /* block 0 */
    cmd(u, ONIC_ALPU_CMD_INSERT, key(3, 3), NONE, 11);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(2, 5), NONE, 12);    /* block 1 */
    cmd(u, ONIC_ALPU_CMD_INSERT, key(2, 0), any_id, 13);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(0, 0), ALL, 14);     /* block 2 */
    cmd(u, ONIC_ALPU_CMD_INSERT, key(2, 5), NONE, 15);
    stop_insert(u);

    CHECK(request(u, key(2, 5), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 12);
    CHECK(request(u, key(2, 5), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 13);
    CHECK(request(u, key(2, 5), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 14);
    CHECK(request(u, key(2, 5), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 15);
    CHECK(request(u, key(2, 5), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);
    /* A wildcard request (any id) takes the oldest cell with bits 3. */
    CHECK(request(u, key(3, 0), any_id, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 11);
    CHECK(request(u, key(0, 0), ALL, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 10);
    onic_alpu_unit_destroy(u);
}

static onic_alpu_unit_counters_t counters(const onic_alpu_unit_t *u)
{
    onic_alpu_unit_counters_t c;
    onic_alpu_unit_counters(u, &c);
    return c;
}

/* A deleting match leaves a hole where the cell was: nothing moves, the
 * compare skips it, and the span follows the youngest valid cell back. */
static void test_unit_delete_hole(onic_simd_t simd)
{
    onic_alpu_unit_t *u = unit_new(8, 4, simd);
    onic_mkey_t low2 = {0, 3};  /* ignore the low two id bits */
    uint64_t before, tag = 0;

    insert_exact(u, 7, 0, 6);
    CHECK(request(u, key(7, 2), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 2);
    CHECK(onic_alpu_unit_count(u) == 5 && onic_alpu_unit_free_cells(u) == 3);
    CHECK(onic_alpu_unit_span(u) == 6);  /* the hole at cell 2 stays */
    CHECK(counters(u).moved == 0 && counters(u).compactions == 0);
    CHECK(request(u, key(7, 2), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);
    CHECK(onic_alpu_unit_compared(u) == counters(u).compared);
    /* Cell 5 hits in block 1: blocks 0 and 1 hold 3 + 2 valid cells. */
    before = counters(u).compared;
    CHECK(request(u, key(7, 5), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 5);
    CHECK(counters(u).compared - before == 5);
    /* A miss compares every valid cell, none of the holes. */
    before = counters(u).compared;
    CHECK(request(u, key(8, 0), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);
    CHECK(counters(u).compared - before == 5);
    /* Oldest first around the hole: ids 0..3 match, cell 2 does not. */
    CHECK(request(u, key(7, 0), ALL, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 0);
    CHECK(request(u, key(7, 2), key(0, 1), 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 3);
    CHECK(request(u, key(7, 1), low2, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 0);

    /* Deleting the youngest cell pulls the span back, over holes too. */
    CHECK(request(u, key(7, 5), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 5);
    CHECK(onic_alpu_unit_span(u) == 5);
    CHECK(request(u, key(7, 4), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 4);
    CHECK(onic_alpu_unit_span(u) == 4);
    CHECK(request(u, key(7, 3), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 3);
    CHECK(onic_alpu_unit_span(u) == 2);
    CHECK(request(u, key(7, 0), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 0);
    CHECK(onic_alpu_unit_span(u) == 2 && onic_alpu_unit_count(u) == 1);
    CHECK(request(u, key(7, 1), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 1);
    CHECK(onic_alpu_unit_span(u) == 0 && onic_alpu_unit_count(u) == 0);
    CHECK(counters(u).moved == 0);
    /* Empty again: the next insert lands in cell 0. */
    insert_exact(u, 7, 9, 1);
    CHECK(onic_alpu_unit_span(u) == 1 && counters(u).compactions == 0);
    onic_alpu_unit_destroy(u);
}

/* Insert mode compacts the holes away ("space available") when no cell is
 * left after the youngest valid one, or when holes outnumber valid cells;
 * the order survives and START_ACKNOWLEDGE counts free cells, holes too. */
static void test_unit_compaction(onic_simd_t simd)
{
    onic_alpu_unit_t *u = unit_new(8, 2, simd);
    static const uint64_t order[] = {0, 2, 3, 5, 6, 7, 8, 9};
    uint64_t tag = 0;

    insert_exact(u, 3, 0, 8);
    CHECK(request(u, key(3, 1), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 1);
    CHECK(request(u, key(3, 4), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 4);
    CHECK(onic_alpu_unit_span(u) == 8 && onic_alpu_unit_count(u) == 6);
    CHECK(start_insert(u) == 2);  /* exact: the two holes are free cells */
    cmd(u, ONIC_ALPU_CMD_INSERT, key(3, 8), NONE, 8);
    onic_alpu_unit_run(u);
    /* No cell after cell 7: compact first. The five valid cells after the
     * first hole (cell 1) moved. */
    CHECK(counters(u).compactions == 1 && counters(u).moved == 5);
    CHECK(onic_alpu_unit_span(u) == 7 && onic_alpu_unit_count(u) == 7);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(3, 9), NONE, 9);
    stop_insert(u);
    CHECK(counters(u).compactions == 1);  /* packed: the next one just fits */
    CHECK(onic_alpu_unit_span(u) == 8 && onic_alpu_unit_free_cells(u) == 0);
    for (unsigned i = 0; i < 8; i++)
        CHECK(request(u, key(3, 0), ALL, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS &&
              tag == order[i]);
    CHECK(onic_alpu_unit_count(u) == 0 && onic_alpu_unit_span(u) == 0);

    /* Room after the youngest cell and no more holes than valid cells: the
     * insert goes after the holes, nothing moves. */
    insert_exact(u, 4, 0, 4);
    CHECK(request(u, key(4, 1), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 1);
    insert_exact(u, 4, 4, 1);
    CHECK(counters(u).compactions == 1 && onic_alpu_unit_span(u) == 5);
    /* Three holes, two valid cells: compact before the next insert. */
    CHECK(request(u, key(4, 0), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 0);
    CHECK(request(u, key(4, 2), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 2);
    insert_exact(u, 4, 5, 1);
    CHECK(counters(u).compactions == 2 && onic_alpu_unit_span(u) == 3);
    for (uint64_t t = 3; t < 6; t++)
        CHECK(request(u, key(4, 0), ALL, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == t);

    /* A match between INSERTs (insert mode keeps matching) makes a hole
     * that the next INSERT may have to compact. */
    insert_exact(u, 5, 0, 7);
    start_insert(u);
    CHECK(request(u, key(5, 6), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 6);
    CHECK(request(u, key(5, 0), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 0);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(5, 7), NONE, 7);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(5, 8), NONE, 8);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(5, 9), NONE, 9);
    stop_insert(u);
    CHECK(onic_alpu_unit_count(u) == 8 && onic_alpu_unit_span(u) == 8);
    for (uint64_t t = 1; t < 10; t++) {
        if (t == 6)
            continue;
        CHECK(request(u, key(5, 0), ALL, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == t);
    }
    onic_alpu_unit_destroy(u);

    /* Long runs across bitmap words: holes at cells 0, 70 and 100 of a full
     * 128-cell unit, then one insert. */
    u = unit_new(128, 16, simd);
    insert_exact(u, 6, 0, 128);
    CHECK(request(u, key(6, 0), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 0);
    CHECK(request(u, key(6, 70), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 70);
    CHECK(request(u, key(6, 100), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 100);
    insert_exact(u, 6, 128, 1);
    CHECK(counters(u).compactions == 1 && counters(u).moved == 125);
    CHECK(onic_alpu_unit_span(u) == 126 && onic_alpu_unit_count(u) == 126);
    {
        unsigned in_order = 1;
        for (uint64_t t = 1; t < 129; t++) {
            if (t == 70 || t == 100)
                continue;
            if (request(u, key(6, t), NONE, 1, &tag) != ONIC_ALPU_RES_MATCH_SUCCESS || tag != t ||
                request(u, key(6, 0), ALL, 0, &tag) != ONIC_ALPU_RES_MATCH_SUCCESS || tag != t)
                in_order = 0;
        }
        CHECK(in_order);
    }
    CHECK(onic_alpu_unit_count(u) == 0);
    onic_alpu_unit_destroy(u);
}

/* Cells with ignore bits among exact ones, asked by exact requests (the
 * AVX2 path filters exact requests by a key hash, which such cells must
 * pass), before and after they are deleted and compacted. */
static void test_unit_wild_cells(onic_simd_t simd)
{
    onic_alpu_unit_t *u = unit_new(8, 2, simd);
    onic_mkey_t any_id = {0, UINT64_MAX}, any_low = {0xffull, 0};
    uint64_t tag = 0;

    start_insert(u);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(1, 1), NONE, 10);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(1, 0), any_id, 11);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(1, 2), NONE, 12);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(0x100, 2), any_low, 13);
    stop_insert(u);
    CHECK(request(u, key(1, 2), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 11);
    CHECK(request(u, key(1, 1), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 10);
    CHECK(request(u, key(0x1ab, 2), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 13);
    CHECK(request(u, key(0x2ab, 2), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);
    CHECK(request(u, key(1, 7), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 11);
    /* The any-id cell is gone: exact cells only answer their own key. */
    CHECK(request(u, key(1, 7), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);
    CHECK(request(u, key(1, 2), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 12);
    CHECK(request(u, key(0x100, 2), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 13);
    /* No wildcard cell left; then one comes back. */
    CHECK(request(u, key(1, 3), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);
    insert_wild(u, key(1, 0), any_id, 14);
    CHECK(request(u, key(1, 3), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 14);
    /* Leave it alone behind three holes: the next insert compacts, and the
     * wildcard cell must still answer from its new place. */
    CHECK(request(u, key(1, 1), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 10);
    CHECK(request(u, key(1, 2), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 12);
    CHECK(onic_alpu_unit_count(u) == 1 && onic_alpu_unit_span(u) == 4);
    insert_exact(u, 1, 9, 1);
    CHECK(counters(u).compactions == 1 && onic_alpu_unit_span(u) == 2);
    CHECK(request(u, key(1, 5), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 14);
    CHECK(request(u, key(1, 9), NONE, 0, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 9);
    CHECK(onic_alpu_unit_count(u) == 0);
    onic_alpu_unit_destroy(u);
}

static void test_unit_probe_reset(void)
{
    onic_alpu_unit_t *u = unit_new(4, 1, ONIC_SIMD_AUTO);
    uint64_t tag = 0;

    insert_exact(u, 1, 0, 4);
    CHECK(request(u, key(1, 2), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 2);
    CHECK(request(u, key(1, 2), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 2);
    CHECK(onic_alpu_unit_count(u) == 4);
    cmd(u, ONIC_ALPU_CMD_RESET, NONE, NONE, 0);
    onic_alpu_unit_run(u);
    CHECK(onic_alpu_unit_count(u) == 0);
    CHECK(request(u, key(1, 2), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);
    CHECK(start_insert(u) == 4);
    stop_insert(u);
    onic_alpu_unit_destroy(u);
}

static void test_unit_discard(void)
{
    onic_alpu_unit_t *u = unit_new(4, 2, ONIC_SIMD_AUTO);
    uint64_t tag = 0;

    insert_exact(u, 1, 0, 2);
    cmd(u, ONIC_ALPU_CMD_INSERT, key(1, 9), NONE, 9);    /* outside insert mode */
    cmd(u, ONIC_ALPU_CMD_STOP_INSERT, NONE, NONE, 0);    /* in match state */
    onic_alpu_unit_run(u);
    CHECK(discarded(u) == 2);
    CHECK(onic_alpu_unit_count(u) == 2);
    CHECK(result(u, NULL) == 0);
    CHECK(request(u, key(1, 9), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);

    /* In insert mode: a second START_INSERT, a RESET, INSERT when full. */
    start_insert(u);
    cmd(u, ONIC_ALPU_CMD_START_INSERT, NONE, NONE, 0);
    cmd(u, ONIC_ALPU_CMD_RESET, NONE, NONE, 0);
    for (unsigned i = 2; i < 5; i++)
        cmd(u, ONIC_ALPU_CMD_INSERT, key(1, i), NONE, i);
    stop_insert(u);
    CHECK(discarded(u) == 5);
    CHECK(onic_alpu_unit_count(u) == 4);
    CHECK(result(u, NULL) == 0);
    CHECK(request(u, key(1, 4), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_FAILURE);
    CHECK(request(u, key(1, 3), NONE, 1, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 3);
    onic_alpu_unit_destroy(u);
}

static void test_unit_fifos_full(void)
{
    onic_alpu_unit_t *u = unit_new(256, 16, ONIC_SIMD_AUTO);
    onic_alpu_cmd_t c = {.type = ONIC_ALPU_CMD_INSERT};
    onic_alpu_hdr_t h = {.key = {1, 0}};
    uint64_t tag = 0;
    unsigned n;

    /* Command FIFO: START_INSERT and 63 INSERTs fit, the next does not. */
    cmd(u, ONIC_ALPU_CMD_START_INSERT, NONE, NONE, 0);
    for (n = 1; n < ONIC_ALPU_UNIT_FIFO_DEPTH; n++) {
        c.key = key(1, n);
        c.tag = n;
        CHECK(onic_alpu_unit_cmd_push(u, &c) == ONIC_OK);
    }
    CHECK(onic_alpu_unit_cmd_push(u, &c) == ONIC_ERR_NO_RESOURCE);
    onic_alpu_unit_run(u);
    CHECK(result(u, &tag) == ONIC_ALPU_RES_START_ACK && tag == 256);
    stop_insert(u);
    CHECK(onic_alpu_unit_count(u) == ONIC_ALPU_UNIT_FIFO_DEPTH - 1);

    /* Header FIFO full, then the result FIFO fills and processing stops. */
    for (n = 0; n < ONIC_ALPU_UNIT_FIFO_DEPTH; n++) {
        h.key.id = n % 2 ? 1 : 1000;  /* alternate hit (probe) and miss */
        h.probe = 1;
        CHECK(onic_alpu_unit_hdr_push(u, &h) == ONIC_OK);
    }
    CHECK(onic_alpu_unit_hdr_push(u, &h) == ONIC_ERR_NO_RESOURCE);
    CHECK(onic_alpu_unit_run(u) == ONIC_ALPU_UNIT_FIFO_DEPTH);
    h.key.id = 1;
    CHECK(onic_alpu_unit_hdr_push(u, &h) == ONIC_OK);
    CHECK(onic_alpu_unit_run(u) == 0);
    CHECK(result(u, NULL) == ONIC_ALPU_RES_MATCH_FAILURE);
    CHECK(onic_alpu_unit_run(u) == 1);
    for (n = 1; n < ONIC_ALPU_UNIT_FIFO_DEPTH; n++)
        CHECK(result(u, &tag) == (n % 2 ? ONIC_ALPU_RES_MATCH_SUCCESS
                                        : ONIC_ALPU_RES_MATCH_FAILURE));
    CHECK(result(u, &tag) == ONIC_ALPU_RES_MATCH_SUCCESS && tag == 1);
    CHECK(result(u, NULL) == 0);
    onic_alpu_unit_destroy(u);
}

/* Masks that make matches likely: exact, a wildcard word, or both. */
static onic_mkey_t random_mask(void)
{
    switch (rng() % 6) {
    case 0:  return key(0, UINT64_MAX);
    case 1:  return key(0xffffffffull, 0);
    case 2:  return key(rng() & 3, rng() & 3);
    case 3:  return ALL;
    default: return NONE;
    }
}

static onic_mkey_t random_key(void)
{
    return key(rng() % 4, rng() % 6);
}

static void test_unit_simd_agree(void)
{
    static const unsigned shapes[][2] = {{2, 1}, {8, 2}, {64, 4}, {256, 32}, {16, 16}};

    if (!onic_cpu_has_avx2()) {
        printf("alpu_unit: cpu has no avx2, skipping the scalar/avx2 comparison\n");
        return;
    }
    rng_state = 0x9e3779b97f4a7c15ull;
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        onic_alpu_unit_t *us = unit_new(shapes[s][0], shapes[s][1], ONIC_SIMD_SCALAR);
        onic_alpu_unit_t *uv = unit_new(shapes[s][0], shapes[s][1], ONIC_SIMD_AVX2);
        unsigned mismatches = 0;

        for (unsigned round = 0; round < 200; round++) {
            unsigned n = (unsigned)(rng() % (shapes[s][0] + 1));
            onic_alpu_unit_t *both[2] = {us, uv};
            onic_alpu_cmd_t c = {.type = ONIC_ALPU_CMD_START_INSERT};

            for (int i = 0; i < 2; i++)
                onic_alpu_unit_cmd_push(both[i], &c);
            for (int i = 0; i < 2; i++) {
                onic_alpu_unit_run(both[i]);
                result(both[i], NULL);
            }
            for (unsigned i = 0; i < n; i++) {
                c.type = ONIC_ALPU_CMD_INSERT;
                /* Mostly exact cells over a key space wider than the unit,
                 * so requests both hit and miss. */
                c.key = key(rng() % 4, rng() % (2 * shapes[s][0]));
                c.ignore = rng() % 4 ? NONE : random_mask();
                c.tag = round * 1000 + i;
                for (int j = 0; j < 2; j++) {
                    onic_alpu_unit_cmd_push(both[j], &c);
                    onic_alpu_unit_run(both[j]);
                }
            }
            for (int i = 0; i < 2; i++)
                stop_insert(both[i]);
            for (unsigned q = 0; q < 8; q++) {
                onic_mkey_t k = key(rng() % 4, rng() % (2 * shapes[s][0]));
                onic_mkey_t ign = rng() % 3 ? NONE : random_mask();
                int probe = (int)(rng() % 3 == 0);
                uint64_t ts = 1, tv = 2;
                uint32_t rs = request(us, k, ign, probe, &ts);
                uint32_t rv = request(uv, k, ign, probe, &tv);
                if (rs != rv || (rs == ONIC_ALPU_RES_MATCH_SUCCESS && ts != tv))
                    mismatches++;
            }
        }
        {
            onic_alpu_unit_counters_t cs, cv;
            onic_alpu_unit_counters(us, &cs);
            onic_alpu_unit_counters(uv, &cv);
            CHECK(mismatches == 0);
            CHECK(memcmp(&cs, &cv, sizeof(cs)) == 0);
            CHECK(cs.hits > 0 && cs.hits < cs.matches);
            CHECK(shapes[s][0] < 8 || cs.compactions > 0);
            CHECK(onic_alpu_unit_count(us) == onic_alpu_unit_count(uv));
        }
        onic_alpu_unit_destroy(us);
        onic_alpu_unit_destroy(uv);
    }
}

/* --- engine tests --- */

/* The unit behind the engines alpu_new makes (--rtl sets it). */
static unsigned    engine_unit = ONIC_ALPU_UNIT_SW;
static const char *engine_rtl_lib = "";

static onic_matcher_t *alpu_new(unsigned cells, unsigned block, unsigned threshold, onic_simd_t simd)
{
    onic_config_t cfg;
    onic_matcher_t *m = NULL;

    onic_config_defaults(&cfg);
    cfg.alpu_unit = engine_unit;
    snprintf(cfg.alpu_rtl_lib, sizeof(cfg.alpu_rtl_lib), "%s", engine_rtl_lib);
    cfg.alpu_cells = cells;
    cfg.alpu_block = block;
    cfg.alpu_threshold = threshold;
    cfg.simd = simd;
    REQUIRE(onic_matcher_create_cfg("alpu", &cfg, &m) == ONIC_OK && m != NULL);
    return m;
}

static unsigned loaded(const onic_matcher_t *m)
{
    return onic_alpu_unit_count(onic_match_alpu_unit(m));
}

static void *cookie(uintptr_t n)
{
    return (void *)(n + 1);
}

static void test_engine_init(void)
{
    onic_config_t cfg;
    onic_matcher_t *m = NULL;
    unsigned ok = 0;

    onic_config_defaults(&cfg);
    cfg.alpu_cells = 8;
    cfg.alpu_block = 16;
    CHECK(onic_matcher_create_cfg("alpu", &cfg, &m) == ONIC_ERR_INVALID_PARAM && m == NULL);
    cfg.alpu_block = 8;
    cfg.simd = ONIC_SIMD_AVX2;
    CHECK(onic_matcher_create_cfg("alpu", &cfg, &m) ==
          (onic_cpu_has_avx2() ? ONIC_OK : ONIC_ERR_INVALID_PARAM));
    onic_matcher_destroy(m);
    m = NULL;
    cfg.simd = ONIC_SIMD_AUTO;
    /* Every allocation failing in turn: NO_MEMORY, and ASan sees no leak. */
    for (long k = 0; k < 8; k++) {
        onic_status_t status;
        onic_mem_fail_after(k);
        status = onic_matcher_create_cfg("alpu", &cfg, &m);
        onic_mem_fail_after(-1);
        CHECK(status == ONIC_OK || status == ONIC_ERR_NO_MEMORY);
        if (status == ONIC_OK) {
            ok++;
            onic_matcher_destroy(m);
        }
        m = NULL;
    }
    CHECK(ok > 0 && ok < 8);
}

static uint64_t unit_inserts(const onic_matcher_t *m)
{
    return counters(onic_match_alpu_unit(m)).inserts;
}

/* Draining a queue longer than the unit, oldest first: the unit is loaded
 * in batches, never one entry per lookup, and every entry is loaded once. */
static void test_engine_refill(onic_simd_t simd)
{
    onic_matcher_t *m = alpu_new(8, 2, 0, simd);
    unsigned in_order = 1, counts_ok = 1, rounds = 0, prev = 0;

    for (uintptr_t i = 0; i < 40; i++)
        CHECK(onic_matcher_append(m, key(3, i), NONE, cookie(i), NULL) == ONIC_OK);
    CHECK(loaded(m) == 0);  /* loading waits for a lookup */
    for (uintptr_t i = 0; i < 40; i++) {
        unsigned left = 40 - (unsigned)i - 1, now;
        if (onic_matcher_match(m, key(3, 0), key(0, UINT64_MAX)) != cookie(i))
            in_order = 0;
        now = loaded(m);
        if (now + 1 > prev)
            rounds++;  /* cells were loaded before this match */
        /* Batches of 2 (a block): at most one cell short of full. */
        if (now > (left < 7 ? left : 7) || now + 1 < (left < 7 ? left : 7))
            counts_ok = 0;
        prev = now;
    }
    CHECK(in_order);
    CHECK(counts_ok);
    CHECK(rounds <= 21);  /* 8, then 2 at a time */
    CHECK(unit_inserts(m) == 40);
    CHECK(onic_matcher_length(m) == 0);
    CHECK(onic_matcher_match(m, key(3, 0), ALL) == NULL);
    onic_matcher_destroy(m);
}

/* The batching rule: an empty unit is loaded at once; otherwise a load
 * waits for `batch` (the larger of a block and cells / 8) unloaded entries
 * and free cells, or half the queue when it is shorter than two batches.
 * Meanwhile the unloaded entries are found by the walk after the unit
 * answers MATCH_FAILURE. */
static void test_engine_batching(onic_simd_t simd)
{
    onic_matcher_t *m = alpu_new(64, 8, 0, simd);  /* batch 8 */
    onic_match_stats_t st0, st1;

    for (uintptr_t i = 0; i < 100; i++)
        onic_matcher_append(m, key(5, i), NONE, cookie(i), NULL);
    CHECK(onic_matcher_peek(m, key(9, 9), NONE) == NULL);
    CHECK(loaded(m) == 64 && unit_inserts(m) == 64);
    for (uintptr_t i = 0; i < 3; i++)
        CHECK(onic_matcher_match(m, key(5, i), NONE) == cookie(i));
    for (uintptr_t i = 100; i < 103; i++)
        onic_matcher_append(m, key(5, i), NONE, cookie(i), NULL);
    /* 3 free cells: no load. An unloaded entry is found by the walk after
     * the unit compared its 61 cells. */
    onic_matcher_stats(m, &st0);
    CHECK(onic_matcher_match(m, key(5, 70), NONE) == cookie(70));
    onic_matcher_stats(m, &st1);
    CHECK(unit_inserts(m) == 64 && loaded(m) == 61);
    CHECK(st1.inspected - st0.inspected == 61 + (70 - 64 + 1));
    CHECK(onic_matcher_peek(m, key(5, 102), NONE) == cookie(102));
    CHECK(unit_inserts(m) == 64);
    /* Five more matches free 8 cells: the next lookup loads 8. */
    for (uintptr_t i = 3; i < 8; i++)
        CHECK(onic_matcher_match(m, key(5, i), NONE) == cookie(i));
    CHECK(loaded(m) == 56 && unit_inserts(m) == 64);
    CHECK(onic_matcher_peek(m, key(9, 9), NONE) == NULL);
    CHECK(loaded(m) == 64 && unit_inserts(m) == 72);
    onic_matcher_destroy(m);

    /* A short queue never piles up a batch of 8: half the queue will do. */
    m = alpu_new(64, 8, 0, simd);
    for (uintptr_t i = 0; i < 6; i++)
        onic_matcher_append(m, key(6, i), NONE, cookie(i), NULL);
    CHECK(onic_matcher_peek(m, key(9, 9), NONE) == NULL);
    CHECK(loaded(m) == 6);
    for (uintptr_t i = 6; i < 10; i++)
        onic_matcher_append(m, key(6, i), NONE, cookie(i), NULL);
    CHECK(onic_matcher_peek(m, key(9, 9), NONE) == NULL);
    CHECK(loaded(m) == 6);  /* 4 unloaded of 10 */
    onic_matcher_append(m, key(6, 10), NONE, cookie(10), NULL);
    CHECK(onic_matcher_peek(m, key(9, 9), NONE) == NULL);
    CHECK(loaded(m) == 11);  /* 5 unloaded of 11 */
    /* Drained, the unit is empty and the next lookup loads what is left. */
    for (uintptr_t i = 0; i < 11; i++)
        CHECK(onic_matcher_match(m, key(6, i), NONE) == cookie(i));
    onic_matcher_append(m, key(6, 11), NONE, cookie(11), NULL);
    CHECK(loaded(m) == 0);
    CHECK(onic_matcher_peek(m, key(6, 11), NONE) == cookie(11));
    CHECK(loaded(m) == 1);
    onic_matcher_destroy(m);
}

static void test_engine_threshold(void)
{
    onic_matcher_t *m = alpu_new(8, 2, 5, ONIC_SIMD_AUTO);
    onic_match_stats_t st;

    for (uintptr_t i = 0; i < 5; i++)
        onic_matcher_append(m, key(1, i), NONE, cookie(i), NULL);
    CHECK(onic_matcher_peek(m, key(2, 0), NONE) == NULL);
    CHECK(loaded(m) == 0);
    onic_matcher_stats(m, &st);
    CHECK(st.inspected == 5);  /* a plain walk */
    onic_matcher_append(m, key(1, 5), NONE, cookie(5), NULL);
    CHECK(onic_matcher_peek(m, key(2, 0), NONE) == NULL);
    CHECK(loaded(m) == 6);
    onic_matcher_stats(m, &st);
    CHECK(st.inspected == 5 + 6);  /* the unit compared all 6 cells */
    /* Once loaded, short queues still ask the unit (it holds their entries). */
    CHECK(onic_matcher_match(m, key(1, 4), NONE) == cookie(4));
    CHECK(onic_matcher_match(m, key(1, 1), NONE) == cookie(1));
    CHECK(loaded(m) == 4);
    onic_matcher_append(m, key(1, 6), NONE, cookie(6), NULL);
    CHECK(onic_matcher_match(m, key(1, 6), NONE) == cookie(6));  /* from the walk */
    CHECK(loaded(m) == 4);
    onic_matcher_destroy(m);
}

static void test_engine_cancel(onic_simd_t simd)
{
    onic_matcher_t *m = alpu_new(8, 2, 0, simd);
    onic_mentry_t *ea = NULL, *ed = NULL;

    onic_matcher_append(m, key(5, 1), NONE, cookie(0), &ea);
    onic_matcher_append(m, key(5, 1), NONE, cookie(1), NULL);
    onic_matcher_append(m, key(6, 1), NONE, cookie(2), NULL);
    CHECK(onic_matcher_peek(m, key(7, 7), NONE) == NULL);
    CHECK(loaded(m) == 3);
    CHECK(onic_matcher_remove(m, ea) == ONIC_OK);
    /* The pool hands ea's memory to the next append: its old cell must not
     * find the new entry. */
    onic_matcher_append(m, key(5, 1), NONE, cookie(3), &ed);
    CHECK(ed == ea);
    CHECK(onic_matcher_peek(m, key(5, 1), NONE) == cookie(1));
    CHECK(loaded(m) == 3);  /* the probe dropped the tombstone; ed got a cell */
    CHECK(onic_matcher_match(m, key(5, 1), NONE) == cookie(1));
    CHECK(onic_matcher_match(m, key(5, 1), NONE) == cookie(3));
    CHECK(onic_matcher_match(m, key(5, 1), NONE) == NULL);
    CHECK(onic_matcher_length(m) == 1 && loaded(m) == 1);
    onic_matcher_destroy(m);
}

static void test_engine_many_cancels(onic_simd_t simd)
{
    onic_matcher_t *m = alpu_new(8, 2, 0, simd);
    onic_mentry_t *e[20];
    static const unsigned gone[] = {0, 2, 4, 6, 1};
    unsigned char removed[20] = {0};
    onic_alpu_unit_counters_t c;
    unsigned in_order = 1;

    for (uintptr_t i = 0; i < 20; i++)
        onic_matcher_append(m, key(4, i), NONE, cookie(i), &e[i]);
    CHECK(onic_matcher_peek(m, key(9, 9), NONE) == NULL);
    CHECK(loaded(m) == 8);
    for (unsigned i = 0; i < 5; i++) {
        CHECK(onic_matcher_remove(m, e[gone[i]]) == ONIC_OK);
        removed[gone[i]] = 1;
    }
    /* The fifth tombstone is more than half of 8 cells: RESET. */
    onic_alpu_unit_counters(onic_match_alpu_unit(m), &c);
    CHECK(c.resets == 1);
    CHECK(loaded(m) == 0);
    CHECK(onic_matcher_peek(m, key(4, 3), NONE) == cookie(3));
    CHECK(loaded(m) == 8);  /* reloaded from the oldest live entry */
    CHECK(onic_matcher_remove(m, e[19]) == ONIC_OK);  /* unloaded: just unlinked */
    removed[19] = 1;
    for (uintptr_t i = 0; i < 20; i++) {
        if (removed[i])
            continue;
        if (onic_matcher_match(m, key(4, 0), key(0, UINT64_MAX)) != cookie(i))
            in_order = 0;
    }
    CHECK(in_order);
    CHECK(onic_matcher_match(m, key(4, 0), ALL) == NULL);
    CHECK(onic_matcher_length(m) == 0);
    onic_matcher_destroy(m);
}

/* The alpu engine against the list engine on one random operation stream. */
static void test_engine_differential(unsigned cells, unsigned block, unsigned threshold,
                                     onic_simd_t simd, unsigned ops)
{
    onic_matcher_t *ml = NULL, *ma = alpu_new(cells, block, threshold, simd);
    onic_config_t cfg;
    onic_mentry_t **hl = calloc(ops, sizeof(*hl)), **ha = calloc(ops, sizeof(*ha));
    uint32_t *live = calloc(ops, sizeof(*live)), *pos = calloc(ops, sizeof(*pos));
    unsigned nlive = 0, next = 0, bad = 0;

    onic_config_defaults(&cfg);
    CHECK(onic_matcher_create_cfg("list", &cfg, &ml) == ONIC_OK);
    rng_state = 0x1234567ull + cells * 31 + threshold;
    for (unsigned op = 0; op < ops; op++) {
        unsigned r = (unsigned)(rng() % 100);
        /* Hover around a queue a few times the cell count. */
        unsigned grow = nlive < 3 * cells ? 45 : 30;

        if (r < grow) {
            onic_mkey_t k = random_key(), ign = rng() % 3 ? NONE : random_mask();
            onic_matcher_append(ml, k, ign, cookie(next), &hl[next]);
            onic_matcher_append(ma, k, ign, cookie(next), &ha[next]);
            pos[next] = nlive;
            live[nlive++] = next++;
        } else if (r < 85 || nlive == 0) {
            onic_mkey_t k = random_key(), ign = rng() % 4 ? NONE : random_mask();
            int peek = r >= 70;
            void *cl = peek ? onic_matcher_peek(ml, k, ign) : onic_matcher_match(ml, k, ign);
            void *ca = peek ? onic_matcher_peek(ma, k, ign) : onic_matcher_match(ma, k, ign);

            if (cl != ca)
                bad++;
            if (cl != NULL && !peek) {
                uint32_t id = (uint32_t)((uintptr_t)cl - 1);
                live[pos[id]] = live[--nlive];
                pos[live[pos[id]]] = pos[id];
            }
        } else {
            unsigned at = (unsigned)(rng() % nlive);
            uint32_t id = live[at];

            if (onic_matcher_remove(ml, hl[id]) != ONIC_OK ||
                onic_matcher_remove(ma, ha[id]) != ONIC_OK)
                bad++;
            live[at] = live[--nlive];
            pos[live[at]] = at;
        }
        if (onic_matcher_length(ml) != onic_matcher_length(ma))
            bad++;
    }
    if (bad != 0)
        fprintf(stderr, "differential cells %u block %u threshold %u simd %d: %u differences\n",
                cells, block, threshold, (int)simd, bad);
    CHECK(bad == 0);
    onic_matcher_destroy(ml);
    onic_matcher_destroy(ma);
    free(hl);
    free(ha);
    free(live);
    free(pos);
}

/* ONIC_ALPU_UNIT: an invalid value is refused by name; rtl without its
 * plug-in, or at a size it was not built for, fails the engine's creation
 * with ONIC_ERR_UNSUPPORTED or ONIC_ERR_INVALID_PARAM; sw has no clock.
 * rtl_lib: the built plug-in, or NULL where there is none. */
static void test_unit_select(const char *rtl_lib)
{
    const onic_config_var_t *var = onic_config_var_find("ONIC_ALPU_UNIT");
    onic_alpu_unit_clock_t clk = {1, 1, 1};
    onic_matcher_t *m = NULL;
    onic_config_t cfg;
    unsigned v = 99;
    char err[256];

    CHECK(var != NULL && onic_config_var_find("ONIC_ALPU_RTL_LIB") != NULL);
    CHECK(onic_config_parse(var, "fpga", &v, err, sizeof(err)) == ONIC_ERR_INVALID_PARAM);
    CHECK(v == 99 && strstr(err, "ONIC_ALPU_UNIT") != NULL && strstr(err, "rtl") != NULL);
    CHECK(onic_config_parse(var, "rtl", &v, err, sizeof(err)) == ONIC_OK &&
          v == ONIC_ALPU_UNIT_RTL);

    onic_config_defaults(&cfg);
    CHECK(cfg.alpu_unit == ONIC_ALPU_UNIT_SW);
    CHECK(onic_matcher_create_cfg("alpu", &cfg, &m) == ONIC_OK);
    CHECK(onic_match_alpu_clock(m, &clk) == ONIC_OK && clk.cycles == 0 && clk.requests == 0);
    CHECK(onic_match_alpu_unit(m) != NULL);
    onic_matcher_destroy(m);
    m = NULL;
    CHECK(onic_matcher_create_cfg("list", &cfg, &m) == ONIC_OK);
    CHECK(onic_match_alpu_clock(m, &clk) == ONIC_ERR_INVALID_PARAM);
    onic_matcher_destroy(m);
    m = NULL;

    /* The library is opened once per process and a failure is remembered,
     * so the run with the real plug-in does not try a missing one first. */
    onic_config_defaults(&cfg);
    cfg.alpu_unit = ONIC_ALPU_UNIT_RTL;
    if (rtl_lib == NULL) {
        snprintf(cfg.alpu_rtl_lib, sizeof(cfg.alpu_rtl_lib), "/nonexistent/libonic-alpu-rtl.so");
        CHECK(onic_matcher_create_cfg("alpu", &cfg, &m) == ONIC_ERR_UNSUPPORTED && m == NULL);
        return;
    }
    snprintf(cfg.alpu_rtl_lib, sizeof(cfg.alpu_rtl_lib), "%s", rtl_lib);
    cfg.alpu_cells = 64;
    cfg.alpu_block = 8;
    CHECK(onic_matcher_create_cfg("alpu", &cfg, &m) == ONIC_ERR_INVALID_PARAM && m == NULL);
    cfg.alpu_cells = 32;
    cfg.alpu_block = 4;
    cfg.alpu_threshold = 0;
    CHECK(onic_matcher_create_cfg("alpu", &cfg, &m) == ONIC_OK);
    if (m == NULL)
        return;
    CHECK(onic_match_alpu_unit(m) == NULL); /* not the C unit */
    for (uint64_t i = 0; i < 8; i++)
        CHECK(onic_matcher_append(m, key(i, 1), NONE, cookie((uint32_t)i), NULL) == ONIC_OK);
    CHECK(onic_matcher_match(m, key(5, 1), NONE) == cookie(5));
    CHECK(onic_matcher_match(m, key(5, 1), NONE) == NULL);
    /* Eight INSERTs plus their round, then two requests of at least four
     * cycles each (the pipeline's latency). */
    CHECK(onic_match_alpu_clock(m, &clk) == ONIC_OK);
    CHECK(clk.requests == 2 && clk.commands == 10 && clk.cycles >= 10 + 2 * 4);
    onic_matcher_destroy(m);
}

int main(int argc, char **argv)
{
    static const unsigned shapes[][3] = {
        {8, 2, 0}, {8, 2, 5}, {256, 32, 0}, {256, 32, 5}, {2, 1, 0}, {4, 4, 1}, {16, 1, 3}};
    onic_simd_t simds[2] = {ONIC_SIMD_SCALAR, ONIC_SIMD_AVX2};
    int nsimd = onic_cpu_has_avx2() ? 2 : 1;

    check_watchdog("test_alpu_unit", 60);

    if (argc == 3 && strcmp(argv[1], "--rtl") == 0) {
        static const unsigned rtl_shapes[][3] = {{32, 4, 0}, {32, 4, 5}, {256, 16, 0}};
        test_unit_select(argv[2]);
        engine_unit = ONIC_ALPU_UNIT_RTL;
        engine_rtl_lib = argv[2];
        for (size_t i = 0; i < sizeof(rtl_shapes) / sizeof(rtl_shapes[0]); i++)
            test_engine_differential(rtl_shapes[i][0], rtl_shapes[i][1], rtl_shapes[i][2],
                                     ONIC_SIMD_AUTO, 4000);
        return check_summary("alpu_unit --rtl");
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--rtl libonic-alpu-rtl.so]\n", argv[0]);
        return 2;
    }

    test_unit_create();
    test_unit_start_ack();
    test_unit_held_match();
    test_unit_oldest_wins();
    test_unit_probe_reset();
    test_unit_discard();
    test_unit_fifos_full();
    for (int s = 0; s < nsimd; s++) {
        test_unit_delete_hole(simds[s]);
        test_unit_compaction(simds[s]);
        test_unit_wild_cells(simds[s]);
    }
    test_unit_simd_agree();
    test_unit_select(NULL);

    test_engine_init();
    test_engine_threshold();
    for (int s = 0; s < nsimd; s++) {
        test_engine_refill(simds[s]);
        test_engine_batching(simds[s]);
        test_engine_cancel(simds[s]);
        test_engine_many_cancels(simds[s]);
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
            test_engine_differential(shapes[i][0], shapes[i][1], shapes[i][2], simds[s], 30000);
    }

    return check_summary("alpu_unit");
}
