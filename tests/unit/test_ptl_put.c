/* The initiator side of a put, through the NI's capture (no transport):
 * PtlPutRegion's straight line for an MD without event queue and threshold
 * (what MPI's eager sends use) must send exactly the header the general
 * path would, refuse every bad argument with its Portals code and send
 * nothing then, forget an MD once it is unlinked, and leave every other
 * case -- thresholds, unlink at threshold, event queues and their events,
 * acks, large puts -- to the general path with its semantics intact. */
#include "check.h"
#include "../ptl/ptl_harness.h"

#include <string.h>

static onic_ptl_ni_t  *ni;
static ptl_handle_ni_t nih;

static void open_ni(void)
{
    ni = harness_open(0, 8, NULL, NULL, &nih);
    REQUIRE(ni != NULL);
}

static void close_ni(void)
{
    PtlFini();
    ni = NULL;
}

static ptl_md_t md_desc(void *buf, size_t len, int threshold, unsigned options, ptl_handle_eq_t eq)
{
    ptl_md_t md = {buf, len, threshold, 0, options, NULL, eq};
    return md;
}

static ptl_handle_md_t md_bind(ptl_md_t md, ptl_unlink_t unlink)
{
    ptl_handle_md_t h = PTL_INVALID_HANDLE;
    REQUIRE(PtlMDBind(nih, md, unlink, &h) == PTL_OK);
    return h;
}

/* The header onic_ptl_msg_pack writes for a put without ack, the first
 * `len` bytes of it. */
static size_t packed_put(onic_ptl_wire_t *w, uint64_t rlength, ptl_pt_index_t pt,
                         ptl_ac_index_t ac, ptl_match_bits_t bits, uint64_t roff, uint64_t hdr)
{
    onic_ptl_msg_t m;

    memset(&m, 0, sizeof(m));
    m.op = ONIC_PTL_OP_PUT;
    m.pt_index = pt;
    m.ac_index = ac;
    m.match_bits = bits;
    m.offset = roff;
    m.rlength = rlength;
    m.hdr_data = hdr;
    m.eq = PTL_EQ_NONE;
    return onic_ptl_msg_pack(&m, w);
}

/* The short path's header is the general path's, byte for byte, and
 * unpacks to what was asked. */
static void test_short_header(void)
{
    uint64_t word = 0x0123456789abcdefull;
    uint8_t bytes[48];
    ptl_handle_md_t all;
    onic_ptl_wire_t w;
    onic_ptl_msg_t m;
    size_t len;

    open_ni();
    all = md_bind(md_desc(NULL, PTL_SIZE_MAX, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_RETAIN);
    CHECK_EQ(PtlPutRegion(all, (ptl_size_t)(uintptr_t)&word, 8, PTL_NOACK_REQ,
                          ((ptl_process_id_t){0, 3}), 5, 1, 0xfeedbeef00000007ull, 100,
                          0x8000000000000042ull), PTL_OK);
    REQUIRE(harness_nsent == 1);
    len = packed_put(&w, 8, 5, 1, 0xfeedbeef00000007ull, 100, 0x8000000000000042ull);
    CHECK_EQ(len, 32);
    CHECK_EQ(harness_sent[0].dest, 3);
    CHECK_EQ(harness_sent[0].hdr_len, 32);
    CHECK(memcmp(&harness_sent[0].hdr, &w, 32) == 0);
    CHECK_EQ(harness_sent[0].len, 8);
    CHECK(memcmp(harness_sent[0].payload, &word, 8) == 0);
    CHECK_EQ(onic_ptl_msg_unpack(&harness_sent[0].hdr, 32, &m), ONIC_OK);
    CHECK_EQ(m.op, ONIC_PTL_OP_PUT);
    CHECK_EQ(m.flags, 0);
    CHECK_EQ(m.rlength, 8);
    CHECK_EQ(m.pt_index, 5);
    CHECK_EQ(m.ac_index, 1);
    CHECK(m.match_bits == 0xfeedbeef00000007ull);
    CHECK_EQ(m.offset, 100);
    CHECK(m.hdr_data == 0x8000000000000042ull);
    CHECK(m.eq == PTL_EQ_NONE);
    /* An ack asked of an MD without event queue: nowhere to go, none asked
     * (as the general path); a zero-byte put; the largest inline one; the
     * largest remote offset. */
    CHECK_EQ(PtlPutRegion(all, (ptl_size_t)(uintptr_t)&word, 8, PTL_ACK_REQ,
                          ((ptl_process_id_t){0, 3}), 5, 1, 0xfeedbeef00000007ull, 100,
                          0x8000000000000042ull), PTL_OK);
    REQUIRE(harness_nsent == 2);
    CHECK_EQ(harness_sent[1].hdr_len, 32);
    CHECK(memcmp(&harness_sent[1].hdr, &w, 32) == 0);
    CHECK_EQ(PtlPutRegion(all, 0, 0, PTL_NOACK_REQ, ((ptl_process_id_t){0, 7}), 63, 63, 0, 0, 9),
             PTL_OK);
    REQUIRE(harness_nsent == 3);
    packed_put(&w, 0, 63, 63, 0, 0, 9);
    CHECK(memcmp(&harness_sent[2].hdr, &w, 32) == 0);
    CHECK_EQ(harness_sent[2].len, 0);
    memset(bytes, 'q', sizeof(bytes));
    {
        static uint8_t big[2048];
        memset(big, 'b', sizeof(big));
        CHECK_EQ(PtlPutRegion(all, (ptl_size_t)(uintptr_t)big, sizeof(big), PTL_NOACK_REQ,
                              ((ptl_process_id_t){0, 0}), 1, 0, 1, ONIC_PTL_MAX_LEN, 2), PTL_OK);
        REQUIRE(harness_nsent == 4);
        packed_put(&w, sizeof(big), 1, 0, 1, ONIC_PTL_MAX_LEN, 2);
        CHECK(memcmp(&harness_sent[3].hdr, &w, 32) == 0);
        CHECK_EQ(harness_sent[3].len, sizeof(big));
        CHECK(memcmp(harness_sent[3].payload, big, sizeof(big)) == 0);
    }
    CHECK_EQ(harness_nreg, 0); /* none of these went large */
    close_ni();
}

/* Every bad argument through the MD the short path takes: its code, and
 * nothing sent. */
static void test_short_refuses(void)
{
    uint64_t word = 1;
    ptl_size_t at = (ptl_size_t)(uintptr_t)&word;
    ptl_handle_md_t all, gone;
    ptl_process_id_t to = {0, 1};

    open_ni();
    all = md_bind(md_desc(NULL, PTL_SIZE_MAX, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_RETAIN);
    CHECK_EQ(PtlPutRegion(all, at, 8, (ptl_ack_req_t)2, to, 1, 0, 0, 0, 0), PTL_FAIL);
    CHECK_EQ(PtlPutRegion(all, at, 8, (ptl_ack_req_t)-1, to, 1, 0, 0, 0, 0), PTL_FAIL);
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ, ((ptl_process_id_t){0, 8}), 1, 0, 0, 0, 0),
             PTL_PROCESS_INVALID);
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ, ((ptl_process_id_t){1, 1}), 1, 0, 0, 0, 0),
             PTL_PROCESS_INVALID);
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ,
                          ((ptl_process_id_t){PTL_NID_ANY, PTL_PID_ANY}), 1, 0, 0, 0, 0),
             PTL_PROCESS_INVALID);
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ, to, 64, 0, 0, 0, 0), PTL_PT_INDEX_INVALID);
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ, to, 1, 64, 0, 0, 0), PTL_AC_INDEX_INVALID);
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, ONIC_PTL_MAX_LEN + 1, 0),
             PTL_FAIL);
    CHECK_EQ(PtlPutRegion(all, PTL_SIZE_MAX - 4, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0),
             PTL_MD_ILLEGAL);
    CHECK_EQ(PtlPutRegion(all, 8, PTL_SIZE_MAX, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlPutRegion(all ^ 1, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_MD_INVALID);
    CHECK_EQ(PtlPutRegion(PTL_INVALID_HANDLE, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0),
             PTL_MD_INVALID);
    CHECK_EQ(PtlPutRegion(nih, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_MD_INVALID);
    CHECK_EQ(harness_nsent, 0);
    /* An MD found once and then unlinked is forgotten: its handle names
     * nothing, and neither does it once another MD takes its slot. */
    gone = md_bind(md_desc(NULL, PTL_SIZE_MAX, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_RETAIN);
    CHECK_EQ(PtlPutRegion(gone, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlPutRegion(gone, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlMDUnlink(gone), PTL_OK);
    CHECK_EQ(PtlPutRegion(gone, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_MD_INVALID);
    md_bind(md_desc(NULL, PTL_SIZE_MAX, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_RETAIN);
    CHECK_EQ(PtlPutRegion(gone, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_MD_INVALID);
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(harness_nsent, 3);
    /* A finished interface: its handles name nothing. */
    CHECK_EQ(PtlNIFini(nih), PTL_OK);
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_MD_INVALID);
    PtlFini();
    CHECK_EQ(PtlPutRegion(all, at, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_NO_INIT);
    ni = NULL;
}

/* Thresholds count every put, and an MD used up is refused or unlinked:
 * MDs without event queue but with a threshold, or MAX_SIZE, go the
 * general way. */
static void test_threshold(void)
{
    uint8_t buf[64];
    ptl_handle_md_t md;
    ptl_process_id_t to = {0, 2};

    open_ni();
    memset(buf, 't', sizeof(buf));
    md = md_bind(md_desc(buf, 64, 2, 0, PTL_EQ_NONE), PTL_UNLINK);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlPutRegion(md, 8, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_OK);
    /* The second used it up and, PTL_UNLINK, unlinked it. */
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_MD_INVALID);
    CHECK_EQ(PtlMDUnlink(md), PTL_MD_INVALID);
    CHECK_EQ(harness_nsent, 2);
    /* Retained: stays, used up. */
    md = md_bind(md_desc(buf, 64, 1, 0, PTL_EQ_NONE), PTL_RETAIN);
    CHECK_EQ(PtlPut(md, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlPut(md, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_MD_INVALID);
    CHECK_EQ(PtlMDUnlink(md), PTL_OK);
    CHECK_EQ(harness_nsent, 3);
    CHECK_EQ(harness_sent[2].len, 64); /* PtlPut: the whole MD */
    /* Without threshold, PTL_UNLINK changes nothing: never used up. */
    md = md_bind(md_desc(buf, 64, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_UNLINK);
    for (int i = 0; i < 10; i++)
        CHECK_EQ(PtlPutRegion(md, 0, 1, PTL_NOACK_REQ, to, 1, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlMDUnlink(md), PTL_OK);
    close_ni();
}

/* An MD with an event queue: SEND_START and SEND_END per put (unless
 * disabled), UNLINK when its threshold unlinks it, the ack asked for in
 * the header (all six words), the initiator's MD and queue in it. */
static void test_events_ack(void)
{
    uint8_t buf[32];
    ptl_handle_md_t md;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    onic_ptl_msg_t m;
    ptl_process_id_t to = {0, 4};

    open_ni();
    memset(buf, 'e', sizeof(buf));
    CHECK_EQ(PtlEQAlloc(nih, 16, PTL_EQ_HANDLER_NONE, &eq), PTL_OK);
    md = md_bind(md_desc(buf, 32, 2, 0, eq), PTL_UNLINK);
    CHECK_EQ(PtlPutRegion(md, 4, 8, PTL_ACK_REQ, to, 3, 0, 0x55, 7, 0x66), PTL_OK);
    REQUIRE(harness_nsent == 1);
    CHECK_EQ(harness_sent[0].hdr_len, 48);
    CHECK_EQ(onic_ptl_msg_unpack(&harness_sent[0].hdr, 48, &m), ONIC_OK);
    CHECK_EQ(m.flags, ONIC_PTL_FLAG_ACK);
    CHECK(m.md == md && m.eq == eq);
    CHECK_EQ(m.rlength, 8);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_START);
    CHECK_EQ(ev.offset, 4);
    CHECK_EQ(ev.mlength, 8);
    CHECK(ev.md_handle == md);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_END);
    CHECK_EQ(ev.hdr_data, 0x66);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    /* No ack asked: the short header, events still. */
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, to, 3, 0, 0x55, 7, 0x66), PTL_OK);
    REQUIRE(harness_nsent == 2);
    CHECK_EQ(harness_sent[1].hdr_len, 32);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_START);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_END);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK); /* threshold 2 reached */
    CHECK_EQ(PtlMDUnlink(md), PTL_MD_INVALID);
    /* START disabled: only END. */
    md = md_bind(md_desc(buf, 32, PTL_MD_THRESH_INF, PTL_MD_EVENT_START_DISABLE, eq), PTL_RETAIN);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, to, 3, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_END);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    /* Its queue taken away (PtlMDUpdate): the short path, no events. */
    CHECK_EQ(PtlMDUpdate(md, NULL, NULL, PTL_EQ_NONE), PTL_OK);
    {
        ptl_md_t d = md_desc(buf, 32, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE);
        CHECK_EQ(PtlMDUpdate(md, NULL, &d, PTL_EQ_NONE), PTL_OK);
    }
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, to, 3, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    /* And back: events again (the short path looks at the MD each time). */
    {
        ptl_md_t d = md_desc(buf, 32, PTL_MD_THRESH_INF, 0, eq);
        CHECK_EQ(PtlMDUpdate(md, NULL, &d, PTL_EQ_NONE), PTL_OK);
    }
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, to, 3, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_START);
    close_ni();
}

/* More than a message carries goes large (registered, by RMA), from any
 * MD: the MD is busy until the target's DONE. */
static void test_large(void)
{
    static uint8_t big[4096];
    ptl_handle_md_t all;
    onic_ptl_msg_t m;

    open_ni();
    all = md_bind(md_desc(NULL, PTL_SIZE_MAX, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_RETAIN);
    CHECK_EQ(PtlPutRegion(all, (ptl_size_t)(uintptr_t)big, sizeof(big), PTL_NOACK_REQ,
                          ((ptl_process_id_t){0, 1}), 1, 0, 0, 0, 0), PTL_OK);
    REQUIRE(harness_nsent == 1);
    CHECK_EQ(harness_nreg, 1);
    CHECK_EQ(onic_ptl_msg_unpack(&harness_sent[0].hdr, harness_sent[0].hdr_len, &m), ONIC_OK);
    CHECK_EQ(m.flags, ONIC_PTL_FLAG_LARGE);
    CHECK_EQ(m.rlength, sizeof(big));
    CHECK_EQ(harness_sent[0].len, sizeof(onic_ptl_large_desc_t));
    CHECK_EQ(PtlMDUnlink(all), PTL_MD_IN_USE);
    close_ni();
}

/* PTL_MD_PUT_PULLED: a put of data goes large whatever its length --
 * registered, its key sent, the MD busy until the target's DONE -- by the
 * straight line's caller and by PtlPut alike, where the transport's RMA is
 * one copy by the target; a put of nothing stays a header. */
static void test_pulled(void)
{
    static uint8_t small[64];
    ptl_handle_md_t md;
    onic_ptl_msg_t m;

    open_ni();
    md = md_bind(md_desc(small, sizeof(small), PTL_MD_THRESH_INF, PTL_MD_PUT_PULLED, PTL_EQ_NONE),
                 PTL_RETAIN);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, ((ptl_process_id_t){0, 1}), 1, 0, 0, 0, 0),
             PTL_OK);
    CHECK_EQ(PtlPut(md, PTL_NOACK_REQ, ((ptl_process_id_t){0, 2}), 1, 0, 0, 0, 0), PTL_OK);
    CHECK_EQ(PtlPutRegion(md, 0, 0, PTL_NOACK_REQ, ((ptl_process_id_t){0, 3}), 1, 0, 0, 0, 0),
             PTL_OK);
    REQUIRE(harness_nsent == 3);
    CHECK_EQ(harness_nreg, 2);
    for (unsigned i = 0; i < 2; i++) {
        CHECK_EQ(onic_ptl_msg_unpack(&harness_sent[i].hdr, harness_sent[i].hdr_len, &m), ONIC_OK);
        CHECK_EQ(m.flags, ONIC_PTL_FLAG_LARGE);
        CHECK_EQ(m.rlength, i == 0 ? 8 : sizeof(small));
        CHECK_EQ(harness_sent[i].len, sizeof(onic_ptl_large_desc_t));
    }
    CHECK_EQ(onic_ptl_msg_unpack(&harness_sent[2].hdr, harness_sent[2].hdr_len, &m), ONIC_OK);
    CHECK_EQ(m.flags, 0);
    CHECK_EQ(m.rlength, 0);
    CHECK_EQ(harness_sent[2].len, 0);
    CHECK_EQ(PtlMDUnlink(md), PTL_MD_IN_USE);
    /* Without the option the same put goes with its data. */
    md = md_bind(md_desc(small, sizeof(small), PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_RETAIN);
    CHECK_EQ(PtlPutRegion(md, 0, 8, PTL_NOACK_REQ, ((ptl_process_id_t){0, 1}), 1, 0, 0, 0, 0),
             PTL_OK);
    REQUIRE(harness_nsent == 4);
    CHECK_EQ(harness_nreg, 2);
    CHECK_EQ(harness_sent[3].len, 8);
    CHECK_EQ(PtlMDUnlink(md), PTL_OK);
    /* Where the target's pull would not be one copy of its own (shm's
     * bounce buffers, which need the initiator), the option changes
     * nothing: the data goes with the put. */
    harness_one_copy_ok = 0;
    md = md_bind(md_desc(small, sizeof(small), PTL_MD_THRESH_INF, PTL_MD_PUT_PULLED, PTL_EQ_NONE),
                 PTL_RETAIN);
    CHECK_EQ(PtlPut(md, PTL_NOACK_REQ, ((ptl_process_id_t){0, 2}), 1, 0, 0, 0, 0), PTL_OK);
    REQUIRE(harness_nsent == 5);
    CHECK_EQ(harness_nreg, 2);
    CHECK_EQ(onic_ptl_msg_unpack(&harness_sent[4].hdr, harness_sent[4].hdr_len, &m), ONIC_OK);
    CHECK_EQ(m.flags, 0);
    CHECK_EQ(harness_sent[4].len, sizeof(small));
    CHECK_EQ(PtlMDUnlink(md), PTL_OK);
    harness_one_copy_ok = 1;
    close_ni();
}

int main(void)
{
    test_short_header();
    test_short_refuses();
    test_threshold();
    test_events_ack();
    test_large();
    test_pulled();
    return check_summary("test_ptl_put");
}
