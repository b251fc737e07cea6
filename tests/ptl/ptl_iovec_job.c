/* I/O vector MDs between two processes, through onicrun and the real
 * transport: rank 1 attaches an MD of entries with gaps between them, and
 * rank 0 puts into it a small message (the target's stores), one over the
 * inline limit (moved by RMA: by CMA over all the entries at once, or
 * piece by piece), and gets from it into an I/O vector MD of its own
 * (the reply scattered). Every byte and the gaps are checked. Under
 * ONIC_ONLOAD I/O vector MDs are refused (max_md_iovecs 1, PTL_MD_ILLEGAL)
 * and that is what is checked. Prints "ptl_iovec_job: rank R: N passed, M
 * failed"; exit status 1 on failure. */
#include "../unit/check.h"
#include <onic/portals.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANYONE   ((ptl_process_id_t){PTL_NID_ANY, PTL_PID_ANY})
#define PT       4
#define GAP      0x5a
#define NENT     5
#define BIG      (200 * 1024)
/* Control puts have bits below 256 (an entry of 0 ignoring the low byte);
 * data puts DATA | n (rank 1's vector entry, DATA ignoring the low byte). */
#define DATA       0x1000
#define BITS_SMALL (DATA | 1)
#define BITS_BIG   (DATA | 2)
#define BITS_GET   (DATA | 3)
#define BITS_READY 9
#define BITS_DONE  10
#define BITS_NEXT  11 /* rank 1 has checked the small put: its RMA would land at once */

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;
static uint8_t area[BIG + 8 * 4096];
static ptl_md_iovec_t v[NENT];

static int wait_for(ptl_event_kind_t type, ptl_event_t *ev)
{
    int rc;
    do {
        rc = PtlEQWait(eq, ev);
        if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
            return rc;
    } while (ev->type != type);
    return PTL_OK;
}

/* Entries of uneven lengths adding up to BIG, a gap of 4096 + i after each. */
static void layout(void)
{
    static const size_t lens[NENT] = {1000, 60000, 7, 100000, BIG - 161007};
    size_t at = 100;

    memset(area, GAP, sizeof(area));
    for (int i = 0; i < NENT; i++) {
        v[i].iov_base = &area[at];
        v[i].iov_len = lens[i];
        at += lens[i] + 4096 + (size_t)i;
    }
}

static uint8_t *vbyte(size_t off)
{
    for (int i = 0; i < NENT; i++) {
        if (off < v[i].iov_len)
            return (uint8_t *)v[i].iov_base + off;
        off -= v[i].iov_len;
    }
    return NULL;
}

/* Every byte of area outside the vector's entries is still GAP. */
static int gaps_untouched(void)
{
    size_t bad = 0;

    for (size_t i = 0; i < sizeof(area); i++) {
        int in = 0;
        for (int e = 0; e < NENT; e++)
            in |= &area[i] >= (uint8_t *)v[e].iov_base &&
                  &area[i] < (uint8_t *)v[e].iov_base + v[e].iov_len;
        bad += !in && area[i] != GAP;
    }
    return bad == 0;
}

/* Byte off of the vector after the small put (salt 1) and, if big, the
 * large one (salt 2). */
static uint8_t expected(size_t off, int big)
{
    if (big && off >= 50000)
        return (uint8_t)(off * 7 + 2);
    if (off >= 995 && off < 1095)
        return (uint8_t)(off * 7 + 1);
    return GAP;
}

static int vector_holds(int big)
{
    size_t bad = 0;

    for (size_t off = 0; off < BIG; off++)
        bad += *vbyte(off) != expected(off, big);
    return bad == 0 && gaps_untouched();
}

static void ctl(uint32_t to, ptl_match_bits_t b)
{
    ptl_handle_md_t md;
    ptl_md_t d = {NULL, 0, 1, 0, 0, NULL, PTL_EQ_NONE};
    REQUIRE(PtlMDBind(ni, d, PTL_UNLINK, &md) == PTL_OK);
    REQUIRE(PtlPut(md, PTL_NOACK_REQ, ((ptl_process_id_t){0, to}), PT, 0, b, 0, 0) == PTL_OK);
}

static void ctl_wait(ptl_match_bits_t b)
{
    ptl_event_t ev;
    do
        REQUIRE(wait_for(PTL_EVENT_PUT_END, &ev) == PTL_OK);
    while (ev.match_bits != b);
}

/* Rank 1: the vector MD, then each put's PUT_END and its bytes. */
static void run_target(void)
{
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    ptl_event_t ev;
    ptl_md_t d = {v, NENT, PTL_MD_THRESH_INF, 0,
                  PTL_MD_IOVEC | PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE |
                      PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE, NULL, eq};

    layout();
    CHECK_EQ(PtlMEAttach(ni, PT, ANYONE, DATA, 0xff, PTL_RETAIN, PTL_INS_AFTER, &me), PTL_OK);
    CHECK_EQ(PtlMDAttach(me, d, PTL_RETAIN, &md), PTL_OK);
    ctl(0, BITS_READY);
    /* A small put at 995: the end of entry 0, into entry 1. */
    REQUIRE(wait_for(PTL_EVENT_PUT_END, &ev) == PTL_OK);
    CHECK(ev.match_bits == BITS_SMALL && ev.mlength == 100 && ev.offset == 995);
    CHECK(vector_holds(0));
    ctl(0, BITS_NEXT);
    /* A large one at 50000: to the end, truncated to what is left. */
    REQUIRE(wait_for(PTL_EVENT_PUT_END, &ev) == PTL_OK);
    CHECK(ev.match_bits == BITS_BIG && ev.mlength == BIG - 50000 && ev.offset == 50000 &&
          ev.ni_fail_type == PTL_NI_OK);
    if (!(ev.match_bits == BITS_BIG && ev.mlength == BIG - 50000))
        fprintf(stderr, "rank 1: PUT_END bits %#llx mlength %llu rlength %llu offset %llu fail %d\n",
                (unsigned long long)ev.match_bits, (unsigned long long)ev.mlength,
                (unsigned long long)ev.rlength, (unsigned long long)ev.offset, ev.ni_fail_type);
    CHECK(vector_holds(1));
    /* Rank 0 gets [990, 1190) back, then says it is done. */
    REQUIRE(wait_for(PTL_EVENT_GET_END, &ev) == PTL_OK);
    CHECK(ev.mlength == 200 && ev.offset == 990);
    ctl_wait(BITS_DONE);
}

/* Rank 0: the puts, and the get into a vector of its own. */
static void run_initiator(void)
{
    static uint8_t src[BIG], got[400];
    ptl_md_iovec_t gv[3] = {{got, 50}, {got + 100, 100}, {got + 250, 50}};
    ptl_handle_md_t md, gmd;
    ptl_event_t ev;
    ptl_process_id_t t = {0, 1};
    size_t bad = 0;

    ctl_wait(BITS_READY);
    for (size_t i = 0; i < BIG; i++)
        src[i] = (uint8_t)((i + 995) * 7 + 1);
    CHECK_EQ(PtlMDBind(ni, ((ptl_md_t){src, BIG, PTL_MD_THRESH_INF, 0, 0, NULL, eq}), PTL_RETAIN,
                       &md), PTL_OK);
    CHECK_EQ(PtlPutRegion(md, 0, 100, PTL_NOACK_REQ, t, PT, 0, BITS_SMALL, 995, 0),
             PTL_OK);
    REQUIRE(wait_for(PTL_EVENT_SEND_END, &ev) == PTL_OK);
    ctl_wait(BITS_NEXT);
    for (size_t i = 0; i < BIG; i++)
        src[i] = (uint8_t)((i + 50000) * 7 + 2);
    CHECK_EQ(PtlPutRegion(md, 0, BIG, PTL_NOACK_REQ, t, PT, 0, BITS_BIG, 50000, 0),
             PTL_OK);
    REQUIRE(wait_for(PTL_EVENT_SEND_END, &ev) == PTL_OK);
    CHECK_EQ(ev.ni_fail_type, PTL_NI_OK);
    memset(got, GAP, sizeof(got));
    CHECK_EQ(PtlMDBind(ni, ((ptl_md_t){gv, 3, 1, 0, PTL_MD_IOVEC, NULL, eq}), PTL_UNLINK, &gmd),
             PTL_OK);
    CHECK_EQ(PtlGet(gmd, t, PT, 0, BITS_GET, 990), PTL_OK);
    REQUIRE(wait_for(PTL_EVENT_REPLY_END, &ev) == PTL_OK);
    CHECK_EQ(ev.mlength, 200);
    for (size_t i = 0; i < sizeof(got); i++) {
        size_t off = i < 50 ? i : i >= 100 && i < 200 ? i - 50 : i >= 250 && i < 300 ? i - 100
                                                                                   : (size_t)-1;
        size_t roff = 990 + off;
        uint8_t want = off == (size_t)-1 ? GAP : expected(roff, 1);
        bad += got[i] != want;
    }
    CHECK_EQ(bad, 0);
    ctl(1, BITS_DONE);
}

int main(void)
{
    ptl_ni_limits_t actual;
    ptl_process_id_t id;
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    const char *onload = getenv("ONIC_ONLOAD");
    int n;

    if (PtlInit(&n) != PTL_OK ||
        PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, &actual, &ni) != PTL_OK ||
        PtlGetId(ni, &id) != PTL_OK || PtlEQAlloc(ni, 64, PTL_EQ_HANDLER_NONE, &eq) != PTL_OK) {
        fprintf(stderr, "ptl_iovec_job: cannot initialize the interface\n");
        return 1;
    }
    CHECK_EQ(PtlMEAttach(ni, PT, ANYONE, 0, 0xff, PTL_RETAIN, PTL_INS_AFTER, &me), PTL_OK);
    CHECK_EQ(PtlMDAttach(me, ((ptl_md_t){NULL, 0, PTL_MD_THRESH_INF, 0,
                                          PTL_MD_OP_PUT | PTL_MD_TRUNCATE |
                                              PTL_MD_EVENT_START_DISABLE, NULL, eq}),
                         PTL_RETAIN, &md), PTL_OK);
    if (onload != NULL && strcmp(onload, "1") == 0) {
        static uint8_t b[64];
        ptl_md_iovec_t w[2] = {{b, 8}, {b + 16, 8}};
        CHECK_EQ(actual.max_md_iovecs, 1);
        CHECK_EQ(PtlMDBind(ni, ((ptl_md_t){w, 2, 1, 0, PTL_MD_IOVEC, NULL, PTL_EQ_NONE}),
                           PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    } else {
        CHECK_EQ(actual.max_md_iovecs, PTL_MD_IOVEC_MAX);
        if (id.pid == 1)
            run_target();
        else if (id.pid == 0)
            run_initiator();
    }
    if (PtlNIFini(ni) != PTL_OK)
        check_failed++;
    PtlFini();
    printf("ptl_iovec_job: rank %u: %u passed, %u failed\n", id.pid, check_passed, check_failed);
    return check_failed == 0 ? 0 : 1;
}
