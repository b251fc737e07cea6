/* Portals between processes, run through onicrun (2 or 3 processes).
 *
 * Rank 0 is the target; every other rank an initiator that, in turn: puts
 * without and with an ack, gets, puts more than the target MD takes
 * (truncation), puts three times into an MD of threshold 2 (the third is
 * dropped: the MD unlinked), puts with a denying ACL entry and to a portal
 * beyond the target's table (both dropped), overflows a small event
 * queue, and puts to an entry rank 0 unlinked with PtlMEUnlinkAsync before
 * the start (dropped). Then it tells rank 0 it is done; rank 0 checks data,
 * events and that PTL_SR_DROP_COUNT counted exactly the four drops per
 * initiator, and frees the small queues (then gone).
 * Everybody waits in PtlEQWait, which sleeps in the transport, but the
 * initiators for the go, which they read with PtlEQGet in a loop.
 * Prints "ptl_job: rank R: N passed, M failed"; exit status 1 on failure. */
#include "../unit/check.h"
#include <onic/portals.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ANYONE     ((ptl_process_id_t){PTL_NID_ANY, PTL_PID_ANY})
#define PT_CTL     0
#define PT_DATA    3
#define TARGET_PTS 8   /* the target's table: 0 to 7 */
#define PT_BEYOND  20  /* valid at the initiators, not at the target */
#define BITS_GO    1
#define BITS_DONE  2
#define MAX_PROCS  8

enum { T_PLAIN = 1, T_ACK, T_GET, T_TRUNC, T_THRESH, T_EQOVF, T_ECHO, T_GONE };

static ptl_handle_ni_t ni;
static ptl_handle_eq_t ctl_eq;
static uint8_t         ctl_buf[64];
static ptl_process_id_t me_id;

static ptl_md_t md_desc(void *buf, size_t len, int threshold, unsigned options, ptl_handle_eq_t eq)
{
    ptl_md_t md = {buf, len, threshold, 0, options, NULL, eq};
    return md;
}

static ptl_match_bits_t bits(uint32_t initiator, unsigned test)
{
    return (ptl_match_bits_t)initiator << 8 | test;
}

static uint8_t pattern(uint32_t initiator, unsigned test, size_t i)
{
    return (uint8_t)(initiator * 31 + test * 7 + i);
}

/* The next event of eq of the given type, skipping others. */
static int wait_for(ptl_handle_eq_t eq, ptl_event_kind_t type, ptl_event_t *ev)
{
    int rc;
    do {
        rc = PtlEQWait(eq, ev);
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
            return rc;
    } while (ev->type != type);
    return PTL_OK;
}

/* A control message: an empty put on portal 0. */
static void ctl_put(uint32_t to, ptl_match_bits_t b)
{
    ptl_handle_md_t md;
    REQUIRE(PtlMDBind(ni, md_desc(NULL, 0, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md) == PTL_OK);
    REQUIRE(PtlPut(md, PTL_NOACK_REQ, ((ptl_process_id_t){0, to}), PT_CTL, 0, b, 0, 0) == PTL_OK);
}

static void ctl_wait(ptl_match_bits_t b, uint32_t *from_p)
{
    ptl_event_t ev;
    do
        REQUIRE(wait_for(ctl_eq, PTL_EVENT_PUT_END, &ev) == PTL_OK);
    while (ev.match_bits != b);
    if (from_p != NULL)
        *from_p = ev.initiator.pid;
}

static uint8_t t_plain[MAX_PROCS][64], t_ack[MAX_PROCS][64], t_get[MAX_PROCS][64];
static uint8_t t_trunc[MAX_PROCS][32], t_thresh[MAX_PROCS][64], t_eqovf[MAX_PROCS][64];
static uint8_t t_echo[MAX_PROCS][64], t_gone[MAX_PROCS][64];
static ptl_handle_eq_t small_eq[MAX_PROCS];

static void attach(uint32_t r, unsigned test, void *buf, size_t len, int threshold,
                   unsigned options, ptl_handle_eq_t eq)
{
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    CHECK_EQ(PtlMEAttach(ni, PT_DATA, ((ptl_process_id_t){0, r}), bits(r, test), 0, PTL_UNLINK,
                         PTL_INS_AFTER, &me), PTL_OK);
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, len, threshold, options, eq), PTL_UNLINK, &md), PTL_OK);
}

/* An entry for r's T_GONE put, unlinked at once without waiting: it must
 * be gone before anything sent after the call can match it, and a later
 * call must still get its own answer. Under onload the stale second unlink
 * is reported by the engine (logged), inline by the call. */
static void unlink_async(uint32_t r, void *buf)
{
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    int rc;

    CHECK_EQ(PtlMEAttach(ni, PT_DATA, ((ptl_process_id_t){0, r}), bits(r, T_GONE), 0, PTL_UNLINK,
                         PTL_INS_AFTER, &me), PTL_OK);
    CHECK_EQ(PtlMDAttach(me, md_desc(buf, 64, 1, PTL_MD_OP_PUT, ctl_eq), PTL_UNLINK, &md), PTL_OK);
    CHECK_EQ(PtlMEUnlinkAsync(md), PTL_ME_INVALID); /* not an entry's handle */
    CHECK_EQ(PtlMEUnlinkAsync(me), PTL_OK);
    rc = PtlMEUnlinkAsync(me);
    /* Inline the stale handle is refused at once; under onload the call
     * does not wait for the engine (portals.h), which finds it later. */
    CHECK_EQ(rc, getenv("ONIC_ONLOAD") != NULL ? PTL_OK : PTL_ME_INVALID);
    CHECK_EQ(PtlMEUnlink(me), PTL_ME_INVALID);
    CHECK_EQ(PtlMDUnlink(md), PTL_MD_INVALID); /* went with its entry */
}

static void run_target(uint32_t size)
{
    ptl_handle_eq_t teq;
    ptl_event_t ev;
    ptl_sr_value_t drops;
    unsigned put_end[MAX_PROCS] = {0}, unlinks[MAX_PROCS] = {0}, get_end[MAX_PROCS] = {0};
    int rc, n;

    CHECK_EQ(PtlEQAlloc(ni, 512, PTL_EQ_HANDLER_NONE, &teq), PTL_OK);
    for (uint32_t r = 1; r < size; r++) {
        for (size_t i = 0; i < 64; i++)
            t_get[r][i] = pattern(r, T_GET, i);
        attach(r, T_PLAIN, t_plain[r], 64, 1, PTL_MD_OP_PUT, teq);
        attach(r, T_ACK, t_ack[r], 64, 1, PTL_MD_OP_PUT, teq);
        attach(r, T_GET, t_get[r], 64, 1, PTL_MD_OP_GET, teq);
        attach(r, T_TRUNC, t_trunc[r], 32, 1, PTL_MD_OP_PUT | PTL_MD_TRUNCATE, teq);
        attach(r, T_THRESH, t_thresh[r], 64, 2, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, teq);
        /* A put, then a get of the same bytes: the get sees the put's. */
        attach(r, T_ECHO, t_echo[r], 64, 2, PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE,
               teq);
        CHECK_EQ(PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE, &small_eq[r]), PTL_OK);
        attach(r, T_EQOVF, t_eqovf[r], 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
               small_eq[r]);
        unlink_async(r, t_gone[r]);
    }
    for (uint32_t r = 1; r < size; r++)
        ctl_put(r, BITS_GO);
    for (uint32_t r = 1; r < size; r++)
        ctl_wait(BITS_DONE, NULL);
    /* Messages from one initiator arrive in order: all of theirs are in. */
    while ((rc = PtlEQGet(teq, &ev)) == PTL_OK) {
        uint32_t r = ev.initiator.pid;
        if (r >= size)
            continue;
        put_end[r] += ev.type == PTL_EVENT_PUT_END;
        get_end[r] += ev.type == PTL_EVENT_GET_END;
        unlinks[r] += ev.type == PTL_EVENT_UNLINK;
        if (ev.type == PTL_EVENT_PUT_END && ev.match_bits == bits(r, T_TRUNC)) {
            CHECK_EQ(ev.rlength, 100);
            CHECK_EQ(ev.mlength, 32);
        }
    }
    CHECK_EQ(rc, PTL_EQ_EMPTY);
    for (uint32_t r = 1; r < size; r++) {
        int ok = 1;
        for (size_t i = 0; i < 64; i++) {
            ok &= t_plain[r][i] == pattern(r, T_PLAIN, i);
            ok &= t_ack[r][i] == pattern(r, T_ACK, i);
            ok &= i >= 32 || t_trunc[r][i] == pattern(r, T_TRUNC, i);
        }
        CHECK(ok);
        CHECK_EQ(put_end[r], 6);  /* plain, ack, trunc, thresh x2, echo */
        CHECK_EQ(get_end[r], 2);  /* get, echo */
        CHECK_EQ(unlinks[r], 6);  /* every threshold-limited MD */
        /* 5 puts, 10 events, 4 slots: the loss is reported. */
        CHECK_EQ(PtlEQGet(small_eq[r], &ev), PTL_EQ_DROPPED);
        n = 1;
        while (PtlEQGet(small_eq[r], &ev) == PTL_OK)
            n++;
        CHECK_EQ(n, 4);
        CHECK_EQ(ev.sequence, 9);
    }
    CHECK_EQ(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &drops), PTL_OK);
    CHECK_EQ(drops, 4 * (int)(size - 1));
    for (uint32_t r = 1; r < size; r++) {
        int untouched = 1;
        for (size_t i = 0; i < 64; i++)
            untouched &= t_gone[r][i] == 0;
        CHECK(untouched);
    }
    /* A freed queue is gone: freeing or reading it again names no queue. */
    for (uint32_t r = 1; r < size; r++) {
        CHECK_EQ(PtlEQFree(small_eq[r]), PTL_OK);
        CHECK_EQ(PtlEQFree(small_eq[r]), PTL_EQ_INVALID);
        CHECK_EQ(PtlEQGet(small_eq[r], &ev), PTL_EQ_INVALID);
    }
}

/* The go awaited with PtlEQGet alone, no call that waits: a read of an
 * empty queue polls the transport once, so a loop of reads sees a put
 * come. A read that never polled would spin for ever: 30 s, then out. */
static void ctl_spin(ptl_match_bits_t b)
{
    struct timespec t0, t;
    ptl_event_t ev;
    int rc;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        rc = PtlEQGet(ctl_eq, &ev);
        if (rc == PTL_OK && ev.type == PTL_EVENT_PUT_END && ev.match_bits == b)
            return;
        REQUIRE(rc == PTL_OK || rc == PTL_EQ_EMPTY);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 30) {
            fprintf(stderr, "ptl_job: rank %u: PtlEQGet never saw the go in 30 s\n", me_id.pid);
            exit(1);
        }
    }
}

static void run_initiator(void)
{
    const ptl_process_id_t target = {0, 0};
    uint32_t r = me_id.pid;
    uint8_t out[128], in[64];
    ptl_handle_eq_t eq;
    ptl_handle_md_t md, gmd;
    ptl_event_t ev;

    CHECK_EQ(PtlEQAlloc(ni, 64, PTL_EQ_HANDLER_NONE, &eq), PTL_OK);
    ctl_spin(BITS_GO);
    CHECK_EQ(PtlMDBind(ni, md_desc(out, sizeof(out), PTL_MD_THRESH_INF, 0, eq), PTL_RETAIN, &md),
             PTL_OK);
    for (size_t i = 0; i < 64; i++)
        out[i] = pattern(r, T_PLAIN, i);
    CHECK_EQ(PtlPutRegion(md, 0, 64, PTL_NOACK_REQ, target, PT_DATA, 0, bits(r, T_PLAIN), 0, 0),
             PTL_OK);
    CHECK_EQ(wait_for(eq, PTL_EVENT_SEND_END, &ev), PTL_OK);
    for (size_t i = 0; i < 64; i++)
        out[i] = pattern(r, T_ACK, i);
    CHECK_EQ(PtlPutRegion(md, 0, 64, PTL_ACK_REQ, target, PT_DATA, 0, bits(r, T_ACK), 0, 0), PTL_OK);
    CHECK_EQ(wait_for(eq, PTL_EVENT_ACK, &ev), PTL_OK);
    CHECK_EQ(ev.mlength, 64);
    CHECK_EQ(ev.initiator.pid, 0);
    /* Get: the target's pattern comes back. */
    memset(in, 0, sizeof(in));
    CHECK_EQ(PtlMDBind(ni, md_desc(in, 64, 1, 0, eq), PTL_UNLINK, &gmd), PTL_OK);
    CHECK_EQ(PtlGet(gmd, target, PT_DATA, 0, bits(r, T_GET), 0), PTL_OK);
    CHECK_EQ(wait_for(eq, PTL_EVENT_REPLY_END, &ev), PTL_OK);
    CHECK_EQ(ev.mlength, 64);
    {
        int ok = 1;
        for (size_t i = 0; i < 64; i++)
            ok &= in[i] == pattern(r, T_GET, i);
        CHECK(ok);
    }
    CHECK_EQ(wait_for(eq, PTL_EVENT_UNLINK, &ev), PTL_OK);
    /* A put and at once a get of the same bytes: the put's come back
     * (under onload the first is written by the target's own library, the
     * second read by the engine: it must wait for the first). */
    for (size_t i = 0; i < 64; i++)
        out[i] = pattern(r, T_ECHO, i);
    memset(in, 0, sizeof(in));
    CHECK_EQ(PtlMDBind(ni, md_desc(in, 64, 1, 0, eq), PTL_UNLINK, &gmd), PTL_OK);
    CHECK_EQ(PtlPutRegion(md, 0, 64, PTL_NOACK_REQ, target, PT_DATA, 0, bits(r, T_ECHO), 0, 0),
             PTL_OK);
    CHECK_EQ(PtlGet(gmd, target, PT_DATA, 0, bits(r, T_ECHO), 0), PTL_OK);
    CHECK_EQ(wait_for(eq, PTL_EVENT_REPLY_END, &ev), PTL_OK);
    {
        int ok = 1;
        for (size_t i = 0; i < 64; i++)
            ok &= in[i] == pattern(r, T_ECHO, i);
        CHECK(ok);
    }
    CHECK_EQ(wait_for(eq, PTL_EVENT_UNLINK, &ev), PTL_OK);
    /* Truncation: 100 bytes into 32, acked with 32. */
    for (size_t i = 0; i < 100; i++)
        out[i] = pattern(r, T_TRUNC, i);
    CHECK_EQ(PtlPutRegion(md, 0, 100, PTL_ACK_REQ, target, PT_DATA, 0, bits(r, T_TRUNC), 0, 0),
             PTL_OK);
    CHECK_EQ(wait_for(eq, PTL_EVENT_ACK, &ev), PTL_OK);
    CHECK_EQ(ev.rlength, 100);
    CHECK_EQ(ev.mlength, 32);
    /* Threshold 2: the third put finds no MD and is dropped. */
    for (int i = 0; i < 3; i++)
        CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, target, PT_DATA, 0, bits(r, T_THRESH),
                              (ptl_size_t)i * 8, 0), PTL_OK);
    /* ACL entry 2 denies; portal 20 is beyond the target's table. */
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, target, PT_DATA, 2, bits(r, T_PLAIN), 0, 0),
             PTL_OK);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, target, PT_BEYOND, 0, bits(r, T_PLAIN), 0, 0),
             PTL_OK);
    for (int i = 0; i < 5; i++)
        CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, target, PT_DATA, 0, bits(r, T_EQOVF),
                              (ptl_size_t)i * 8, 0), PTL_OK);
    for (size_t i = 0; i < 64; i++)
        out[i] = pattern(r, T_GONE, i);
    CHECK_EQ(PtlPutRegion(md, 0, 64, PTL_NOACK_REQ, target, PT_DATA, 0, bits(r, T_GONE), 0, 0),
             PTL_OK);
    ctl_put(0, BITS_DONE);
}

int main(void)
{
    ptl_ni_limits_t want = {0};
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    const char *size_s = getenv("ONIC_SIZE"), *rank_s = getenv("ONIC_RANK");
    uint32_t size = size_s != NULL ? (uint32_t)atoi(size_s) : 1;
    int n;

    if (size < 2 || size > MAX_PROCS || rank_s == NULL) {
        fprintf(stderr, "ptl_job: run me with onicrun -n 2 to %d\n", MAX_PROCS);
        return 2;
    }
    if (PtlInit(&n) != PTL_OK)
        return 1;
    want.max_mes = want.max_mds = want.max_eqs = want.max_me_list = 4096;
    want.max_ac_index = 63;
    /* The target's portal table ends at 7: portal 20 is unknown there. */
    want.max_pt_index = atoi(rank_s) == 0 ? TARGET_PTS - 1 : 63;
    if (PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, &want, NULL, &ni) != PTL_OK ||
        PtlGetId(ni, &me_id) != PTL_OK) {
        fprintf(stderr, "ptl_job: cannot initialize the interface\n");
        return 1;
    }
    /* Nothing is delivered before the first call that polls, so the control
     * entry is in place before any message can be looked at. */
    /* Without its control queue a rank would wait for ever: a failure. */
    if (PtlEQAlloc(ni, 64, PTL_EQ_HANDLER_NONE, &ctl_eq) != PTL_OK) {
        fprintf(stderr, "ptl_job: rank %u: PtlEQAlloc failed\n", me_id.pid);
        return 1;
    }
    CHECK_EQ(PtlMEAttach(ni, PT_CTL, ANYONE, 0, ~(ptl_match_bits_t)0, PTL_RETAIN, PTL_INS_AFTER,
                         &me), PTL_OK);
    CHECK_EQ(PtlMDAttach(me, md_desc(ctl_buf, sizeof(ctl_buf), PTL_MD_THRESH_INF,
                                     PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE |
                                         PTL_MD_EVENT_START_DISABLE, ctl_eq),
                         PTL_RETAIN, &md), PTL_OK);
    if (me_id.pid == 0)
        run_target(size);
    else
        run_initiator();
    if (PtlNIFini(ni) != PTL_OK)
        check_failed++;
    PtlFini();
    printf("ptl_job: rank %u: %u passed, %u failed\n", me_id.pid, check_passed, check_failed);
    return check_failed == 0 ? 0 : 1;
}
