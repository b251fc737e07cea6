/* The Portals target side, rule by rule (paper 003, section 4), with no
 * transport: headers are built by hand (or captured from PtlPut / PtlGet)
 * and fed straight into onic_ptl_target_recv. Every rule runs on every
 * matching engine. Deterministic. */
#include "check.h"
#include "../ptl/ptl_harness.h"
#include "ptl/post.h"
#include "base/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static onic_ptl_ni_t  *ni;
static ptl_handle_ni_t nih;
static const char     *engine;
static int             feed_whole; /* feed() sends all six header words */

#define ME_ANY ((ptl_process_id_t){PTL_NID_ANY, PTL_PID_ANY})

static void open_ni(void)
{
    ni = harness_open(0, 8, engine, NULL, &nih);
    REQUIRE(ni != NULL);
}

static void close_ni(void)
{
    PtlFini();
    ni = NULL;
}


static onic_ptl_out_t feed(uint32_t src, const onic_ptl_msg_t *m, const void *payload, size_t len)
{
    return harness_feed(ni, src, m, payload, len, feed_whole);
}

/* A put of len bytes of `byte`. */
static onic_ptl_out_t put(uint32_t src, ptl_pt_index_t pt, ptl_match_bits_t bits, size_t len,
                          uint8_t byte)
{
    uint8_t data[512];
    onic_ptl_msg_t m = harness_req(ONIC_PTL_OP_PUT, pt, bits, len);
    memset(data, byte, sizeof(data));
    return feed(src, &m, data, len);
}

static ptl_handle_me_t me_attach(ptl_pt_index_t pt, ptl_process_id_t id, ptl_match_bits_t bits,
                                 ptl_match_bits_t ignore, ptl_unlink_t unlink, ptl_ins_pos_t pos)
{
    ptl_handle_me_t h = PTL_INVALID_HANDLE;
    REQUIRE(PtlMEAttach(nih, pt, id, bits, ignore, unlink, pos, &h) == PTL_OK);
    return h;
}

static ptl_md_t md_desc(void *buf, size_t len, int threshold, unsigned options, ptl_handle_eq_t eq)
{
    ptl_md_t md = {buf, len, threshold, 0, options, NULL, eq};
    return md;
}

static ptl_handle_md_t md_attach(ptl_handle_me_t me, ptl_md_t md, ptl_unlink_t unlink)
{
    ptl_handle_md_t h = PTL_INVALID_HANDLE;
    REQUIRE(PtlMDAttach(me, md, unlink, &h) == PTL_OK);
    return h;
}

static ptl_handle_eq_t eq_alloc(ptl_size_t count)
{
    ptl_handle_eq_t h = PTL_INVALID_HANDLE;
    REQUIRE(PtlEQAlloc(nih, count, PTL_EQ_HANDLER_NONE, &h) == PTL_OK);
    return h;
}

static uint64_t drops(onic_ptl_drop_t why)
{
    return ni->drops[why];
}

static int next_event(ptl_handle_eq_t eq, ptl_event_t *ev)
{
    return PtlEQGet(eq, ev);
}

/* --- END alone: the event a small put writes once, in the queue's ring ----- */
/* Every field of the PUT_END a small put leaves, for an MD that disables
 * START (and UNLINK or not): one-shot, retained with remote offsets, a
 * truncated one, with the events that follow an unlink. */
static void check_put_end(const ptl_event_t *ev, ptl_handle_md_t md, void *buf, uint64_t bits,
                          uint64_t rlength, uint64_t mlength, uint64_t offset, uint64_t hdr_data)
{
    CHECK_EQ(ev->type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev->initiator.nid, 0);
    CHECK_EQ(ev->initiator.pid, 3);
    CHECK_EQ(ev->uid, ni->uid);
    CHECK_EQ(ev->jid, ni->jid);
    CHECK_EQ(ev->pt_index, 2);
    CHECK(ev->match_bits == bits);
    CHECK_EQ(ev->rlength, rlength);
    CHECK_EQ(ev->mlength, mlength);
    CHECK_EQ(ev->offset, offset);
    CHECK(ev->md_handle == md);
    CHECK(ev->md.start == buf);
    CHECK(ev->hdr_data == hdr_data);
    CHECK_EQ(ev->ni_fail_type, PTL_NI_OK);
    CHECK_EQ(ev->link, ev->sequence); /* no START before it */
}

static onic_ptl_out_t put_at(ptl_match_bits_t bits, uint64_t offset, uint64_t hdr_data,
                             const void *data, size_t len)
{
    onic_ptl_msg_t m = harness_req(ONIC_PTL_OP_PUT, 2, bits, len);
    m.offset = offset;
    m.hdr_data = hdr_data;
    return feed(3, &m, data, len);
}

static void test_end_only(void)
{
    const unsigned end_only = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE;
    const uint8_t data[16] = "0123456789abcde";
    uint8_t a[8], b[32], c[4];
    ptl_handle_me_t me;
    ptl_handle_md_t mda, mdb, mdc;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    onic_ptl_out_t out;
    ptl_seq_t seq;

    open_ni();
    eq = eq_alloc(16);
    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    memset(c, 0, sizeof(c));
    /* One-shot, its UNLINK disabled: only PUT_END. */
    me = me_attach(2, ME_ANY, 7, 0, PTL_UNLINK, PTL_INS_AFTER);
    mda = md_attach(me, md_desc(a, 8, 1, end_only | PTL_MD_EVENT_UNLINK_DISABLE, eq), PTL_UNLINK);
    /* Retained, remote offsets, three puts. */
    me = me_attach(2, ME_ANY, 8, 0, PTL_RETAIN, PTL_INS_AFTER);
    mdb = md_attach(me, md_desc(b, 32, 3, end_only | PTL_MD_MANAGE_REMOTE, eq), PTL_UNLINK);
    /* One-shot, truncating, UNLINK wanted: PUT_END then UNLINK. */
    me = me_attach(2, ME_ANY, 9, 0, PTL_UNLINK, PTL_INS_AFTER);
    mdc = md_attach(me, md_desc(c, 4, 1, end_only | PTL_MD_TRUNCATE, eq), PTL_UNLINK);
    CHECK_EQ(ni->pt[2].nlist, 3);

    out = put_at(7, 0, 0x1122334455667788ull, data, 8);
    CHECK_EQ(out.send, 0);
    CHECK(memcmp(a, data, 8) == 0);
    REQUIRE(next_event(eq, &ev) == PTL_OK);
    check_put_end(&ev, mda, a, 7, 8, 8, 0, 0x1122334455667788ull);
    seq = ev.sequence;
    CHECK_EQ(ev.md.threshold, 0);
    CHECK_EQ(next_event(eq, &ev), PTL_EQ_EMPTY);
    CHECK_EQ(PtlMDUnlink(mda), PTL_MD_INVALID); /* gone with its entry */
    CHECK_EQ(ni->pt[2].nlist, 2);

    for (int i = 0; i < 3; i++) {
        put_at(8, 24 - 8 * (uint64_t)i, (uint64_t)i, data + i, 8);
        CHECK(memcmp(b + 24 - 8 * i, data + i, 8) == 0);
        REQUIRE(next_event(eq, &ev) == PTL_OK);
        CHECK_EQ(ev.sequence, seq + 1 + (ptl_seq_t)i);
        check_put_end(&ev, mdb, b, 8, 8, 8, 24 - 8 * (uint64_t)i, (uint64_t)i);
        CHECK_EQ(ev.md.threshold, 2 - i);
    }
    /* Used up with PTL_UNLINK: its UNLINK came after the third END. */
    REQUIRE(next_event(eq, &ev) == PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    CHECK(ev.md_handle == mdb);
    CHECK_EQ(PtlMDUnlink(mdb), PTL_MD_INVALID);
    CHECK_EQ(ni->pt[2].nlist, 2); /* a retained entry stays, empty */

    put_at(9, 0, 5, data, 10);
    CHECK(memcmp(c, data, 4) == 0);
    REQUIRE(next_event(eq, &ev) == PTL_OK);
    check_put_end(&ev, mdc, c, 9, 10, 4, 0, 5);
    REQUIRE(next_event(eq, &ev) == PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    CHECK(ev.md_handle == mdc);
    CHECK_EQ(next_event(eq, &ev), PTL_EQ_EMPTY);
    CHECK_EQ(ni->pt[2].nlist, 1);
    /* Nothing takes these bits now: a counted drop, no event. */
    put_at(7, 0, 0, data, 8);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    CHECK_EQ(next_event(eq, &ev), PTL_EQ_EMPTY);
    close_ni();
}

/* --- 4.4: translation order, insert positions, wildcards ------------------- */
static void test_translation_order(void)
{
    uint8_t buf[6][8] = {{0}};
    ptl_handle_me_t a, b, c, d, e;
    const uint8_t tags[6] = {'a', 'b', 'c', 'd', 'e', 0};
    const int expect[5] = {2, 0, 4, 3, 1}; /* C first (head), then A, E, D, B */

    open_ni();
    a = me_attach(1, ME_ANY, 5, 0, PTL_UNLINK, PTL_INS_AFTER);
    b = me_attach(1, ME_ANY, 5, 0, PTL_UNLINK, PTL_INS_AFTER);
    c = me_attach(1, ME_ANY, 5, 0, PTL_UNLINK, PTL_INS_BEFORE);
    CHECK_EQ(PtlMEInsert(b, ME_ANY, 5, 0, PTL_UNLINK, PTL_INS_BEFORE, &d), PTL_OK);
    CHECK_EQ(PtlMEInsert(a, ME_ANY, 5, 0, PTL_UNLINK, PTL_INS_AFTER, &e), PTL_OK);
    /* list: C A E D B */
    md_attach(a, md_desc(buf[0], 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_UNLINK);
    md_attach(b, md_desc(buf[1], 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_UNLINK);
    md_attach(c, md_desc(buf[2], 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_UNLINK);
    md_attach(d, md_desc(buf[3], 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_UNLINK);
    md_attach(e, md_desc(buf[4], 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_UNLINK);
    for (int i = 0; i < 5; i++) {
        put(1, 1, 5, 8, tags[i]);
        CHECK_EQ(buf[expect[i]][0], tags[i]);
    }
    /* All used up and unlinked, entries too: the next put finds nothing. */
    put(1, 1, 5, 8, 'x');
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    CHECK_EQ(PtlMEUnlink(a), PTL_ME_INVALID);
    CHECK_EQ(ni->pt[1].nlist, 0);
    close_ni();
}

static void test_wildcards(void)
{
    uint8_t exact[8] = {0}, any_pid[8] = {0}, masked[8] = {0};
    ptl_handle_me_t m1, m2, m3;

    open_ni();
    /* Only rank 3, bits 0x10. */
    m1 = me_attach(2, ((ptl_process_id_t){0, 3}), 0x10, 0, PTL_RETAIN, PTL_INS_AFTER);
    /* Any process on nid 0, bits 0x20. */
    m2 = me_attach(2, ((ptl_process_id_t){0, PTL_PID_ANY}), 0x20, 0, PTL_RETAIN, PTL_INS_AFTER);
    /* Anyone, bits 0xab00 ignoring the low byte. */
    m3 = me_attach(2, ME_ANY, 0xab00, 0xff, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(m1, md_desc(exact, 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
                          PTL_EQ_NONE), PTL_RETAIN);
    md_attach(m2, md_desc(any_pid, 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
                          PTL_EQ_NONE), PTL_RETAIN);
    md_attach(m3, md_desc(masked, 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
                          PTL_EQ_NONE), PTL_RETAIN);
    put(3, 2, 0x10, 1, 'a');
    CHECK_EQ(exact[0], 'a');
    put(2, 2, 0x10, 1, 'b');  /* wrong process */
    CHECK_EQ(exact[0], 'a');
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    put(7, 2, 0x20, 1, 'c');
    CHECK_EQ(any_pid[0], 'c');
    put(5, 2, 0xab42, 1, 'd'); /* low byte ignored */
    CHECK_EQ(masked[0], 'd');
    put(5, 2, 0xac42, 1, 'e'); /* a must-match bit differs */
    CHECK_EQ(masked[0], 'd');
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 2);
    /* The header's bits are exact: an entry's ignore bits are the only wildcards. */
    put(3, 3, 0x10, 1, 'f');   /* another portal: nothing there */
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 3);
    close_ni();
}

/* Only the first MD of a matching entry is considered; if it rejects, the
 * search goes on with the next entry (not with the entry's next MD). */
static void test_first_md_only(void)
{
    uint8_t get_only[8] = {0}, second[8] = {0}, next[8] = {0};
    ptl_handle_me_t m1, m2;
    onic_ptl_out_t out;
    onic_ptl_msg_t g;

    open_ni();
    m1 = me_attach(1, ME_ANY, 7, 0, PTL_RETAIN, PTL_INS_AFTER);
    m2 = me_attach(1, ME_ANY, 7, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(m1, md_desc(get_only, 8, PTL_MD_THRESH_INF, PTL_MD_OP_GET, PTL_EQ_NONE), PTL_RETAIN);
    md_attach(m1, md_desc(second, 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_RETAIN);
    md_attach(m2, md_desc(next, 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
                          PTL_EQ_NONE), PTL_RETAIN);
    put(1, 1, 7, 4, 'p');
    CHECK_EQ(second[0], 0);
    CHECK_EQ(next[0], 'p');
    /* A get is taken by m1's first MD. */
    memset(get_only, 'g', sizeof(get_only));
    g = harness_req(ONIC_PTL_OP_GET, 1, 7, 4);
    out = feed(1, &g, NULL, 0);
    CHECK(out.send);
    CHECK_EQ(out.len, 4);
    CHECK(out.len == 4 && memcmp(out.payload, "gggg", 4) == 0);
    close_ni();
}

/* An MD rejects what it is not enabled for, or what is too long unless it
 * truncates; then the next entry is tried. */
static void test_reject_and_truncate(void)
{
    uint8_t small[4] = {0}, trunc[4] = {0}, big[64] = {0};
    ptl_handle_me_t m1, m2, m3;
    ptl_handle_eq_t eq;
    ptl_event_t ev;

    open_ni();
    eq = eq_alloc(16);
    m1 = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    m2 = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    m3 = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(m1, md_desc(small, 4, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
              PTL_RETAIN);
    md_attach(m2, md_desc(trunc, 4, 1, PTL_MD_OP_PUT | PTL_MD_TRUNCATE, eq), PTL_RETAIN);
    md_attach(m3, md_desc(big, 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT, eq), PTL_RETAIN);
    put(1, 1, 1, 10, 'a');       /* too long for m1; m2 truncates */
    CHECK_EQ(small[0], 0);
    CHECK_EQ(trunc[3], 'a');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.rlength, 10);
    CHECK_EQ(ev.mlength, 4);
    put(1, 1, 1, 10, 'b');       /* m2 used up (threshold 1, retained): m3 */
    CHECK_EQ(trunc[0], 'a');
    CHECK_EQ(big[9], 'b');
    put(1, 1, 1, 3, 'c');        /* fits m1 */
    CHECK_EQ(small[2], 'c');
    put(1, 1, 1, 100, 'd');      /* fits nobody */
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    close_ni();
}

/* Threshold, PTL_MD_THRESH_INF, unlink with its event, retain, and the
 * entry unlinked when its MD list empties (if it says so). */
static void test_threshold_unlink(void)
{
    uint8_t buf[64];
    ptl_handle_me_t keep, go;
    ptl_handle_md_t md1, md2, md3;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    int n;

    open_ni();
    eq = eq_alloc(64);
    keep = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    go = me_attach(1, ME_ANY, 2, 0, PTL_UNLINK, PTL_INS_AFTER);
    md1 = md_attach(keep, md_desc(buf, 64, 2, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq), PTL_UNLINK);
    md2 = md_attach(go, md_desc(buf, 64, 1, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq), PTL_UNLINK);
    md3 = md_attach(go, md_desc(buf, 64, 1, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq), PTL_UNLINK);
    put(1, 1, 1, 1, 'a');
    put(1, 1, 1, 1, 'a');  /* threshold 2 reached: md1 unlinked, `keep` stays */
    n = 0;
    while (next_event(eq, &ev) == PTL_OK)
        n += ev.type == PTL_EVENT_UNLINK && ev.md_handle == md1;
    CHECK_EQ(n, 1);
    CHECK_EQ(PtlMDUnlink(md1), PTL_MD_INVALID);
    put(1, 1, 1, 1, 'a');  /* `keep` has no MD now: rejects */
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    CHECK_EQ(PtlMEUnlink(keep), PTL_OK);
    /* `go`: md2, then md3, then the entry goes with its last MD. */
    put(1, 1, 2, 1, 'b');
    CHECK_EQ(PtlMDUnlink(md2), PTL_MD_INVALID);
    CHECK_EQ(ni->pt[1].nlist, 1);
    put(1, 1, 2, 1, 'b');
    CHECK_EQ(PtlMDUnlink(md3), PTL_MD_INVALID);
    CHECK_EQ(PtlMEUnlink(go), PTL_ME_INVALID);
    CHECK_EQ(ni->pt[1].nlist, 0);
    close_ni();

    /* Retained at threshold 0: stays, rejects; PTL_MD_THRESH_INF never ends;
     * an explicit unlink of an entry's last MD unlinks a PTL_UNLINK entry. */
    open_ni();
    eq = eq_alloc(64);
    keep = me_attach(1, ME_ANY, 1, 0, PTL_UNLINK, PTL_INS_AFTER);
    md1 = md_attach(keep, md_desc(buf, 64, 1, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq), PTL_RETAIN);
    go = me_attach(1, ME_ANY, 3, 0, PTL_RETAIN, PTL_INS_AFTER);
    md2 = md_attach(go, md_desc(buf, 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
                                PTL_EQ_NONE), PTL_UNLINK);
    put(1, 1, 1, 1, 'c');
    put(1, 1, 1, 1, 'c');
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    n = 0;
    while (next_event(eq, &ev) == PTL_OK)
        n += ev.type == PTL_EVENT_UNLINK;
    CHECK_EQ(n, 0);
    for (int i = 0; i < 1000; i++)
        put(2, 1, 3, 1, 'd');
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    CHECK_EQ(PtlMDUnlink(md1), PTL_OK);
    CHECK_EQ(PtlMEUnlink(keep), PTL_ME_INVALID);
    CHECK_EQ(PtlMDUnlink(md2), PTL_OK);
    CHECK_EQ(PtlMEUnlink(go), PTL_OK); /* PTL_RETAIN: stayed without MDs */
    close_ni();
}

/* One-shot receives (an entry and its lone MD both PTL_UNLINK, threshold 1),
 * which the target takes out of the match list in the search that finds
 * them: each takes exactly one put, in list order, with entries of other
 * kinds around them, short list and long (the matchers' other modes). */
static void test_one_shot(void)
{
    enum { N = 40 };
    uint8_t buf[N][8], keepbuf[8];
    ptl_handle_me_t me[N], keep;
    ptl_handle_md_t md[N];
    ptl_handle_eq_t eq;
    ptl_event_t ev;

    for (int n = 3; n <= N; n += N - 3) {
        open_ni();
        eq = eq_alloc(4 * N);
        memset(buf, 0, sizeof(buf));
        /* First a retained entry for bits 1 that must not be used up. */
        keep = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
        md_attach(keep, md_desc(keepbuf, 8, 1, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
                  PTL_RETAIN);
        for (int i = 0; i < n; i++) {
            me[i] = me_attach(1, ME_ANY, 100 + (ptl_match_bits_t)(i % 2), 0, PTL_UNLINK,
                              PTL_INS_AFTER);
            md[i] = md_attach(me[i], md_desc(buf[i], 8, 1, PTL_MD_OP_PUT, eq), PTL_UNLINK);
        }
        CHECK_EQ(ni->pt[1].nlist, (uint32_t)n + 1);
        /* Odd bits first, then even: each put lands in the oldest entry of
         * its bits left, and that entry is gone. */
        for (int i = 1; i < n; i += 2)
            put(2, 1, 101, 8, (uint8_t)i);
        for (int i = 0; i < n; i += 2)
            put(2, 1, 100, 8, (uint8_t)i);
        for (int i = 0; i < n; i++) {
            CHECK_EQ(buf[i][0], (uint8_t)i);
            CHECK_EQ(buf[i][7], (uint8_t)i);
            CHECK_EQ(PtlMEUnlink(me[i]), PTL_ME_INVALID);
            CHECK_EQ(PtlMDUnlink(md[i]), PTL_MD_INVALID);
        }
        CHECK_EQ(ni->pt[1].nlist, 1);
        /* Nothing left for these bits: dropped, and nothing written. */
        put(2, 1, 100, 8, 0xee);
        CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
        for (int i = 0; i < n; i++)
            CHECK(buf[i][0] != 0xee);
        /* For each put, in order: START, END and UNLINK of its own MD. */
        for (int i = 0; i < n; i++) {
            ptl_handle_md_t want = md[i < n / 2 ? 2 * i + 1 : 2 * (i - n / 2)];

            for (int k = 0; k < 3; k++) {
                REQUIRE(next_event(eq, &ev) == PTL_OK);
                CHECK_EQ(ev.type, k == 0 ? PTL_EVENT_PUT_START : k == 1 ? PTL_EVENT_PUT_END
                                                                        : PTL_EVENT_UNLINK);
                CHECK(ev.md_handle == want);
            }
        }
        CHECK_EQ(next_event(eq, &ev), PTL_EQ_EMPTY);
        /* A new one-shot entry takes the next put, then goes. */
        me[0] = me_attach(1, ME_ANY, 100, 0, PTL_UNLINK, PTL_INS_AFTER);
        md_attach(me[0], md_desc(buf[0], 8, 1, PTL_MD_OP_PUT, eq), PTL_UNLINK);
        put(2, 1, 100, 8, 0x5a);
        CHECK_EQ(buf[0][0], 0x5a);
        CHECK_EQ(PtlMEUnlink(me[0]), PTL_ME_INVALID);
        CHECK_EQ(ni->pt[1].nlist, 1);
        /* The retained entry still takes its put. */
        put(2, 1, 1, 8, 0x77);
        CHECK_EQ(keepbuf[0], 0x77);
        CHECK_EQ(PtlMEUnlink(keep), PTL_OK);
        close_ni();
    }
}

/* The local offset advances; PTL_MD_MANAGE_REMOTE uses the request's. */
static void test_offsets(void)
{
    uint8_t local[32] = {0}, remote[32] = {0};
    ptl_handle_me_t m1, m2;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    onic_ptl_msg_t m;
    uint8_t data[8];

    open_ni();
    eq = eq_alloc(64);
    m1 = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    m2 = me_attach(1, ME_ANY, 2, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(m1, md_desc(local, 32, PTL_MD_THRESH_INF,
                          PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq), PTL_RETAIN);
    md_attach(m2, md_desc(remote, 32, PTL_MD_THRESH_INF,
                          PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE, eq),
              PTL_RETAIN);
    memset(data, 'x', sizeof(data));
    for (int i = 0; i < 3; i++) {
        m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 8);
        m.offset = 20; /* ignored: the MD manages its offset locally */
        data[0] = (uint8_t)('a' + i);
        feed(1, &m, data, 8);
        CHECK_EQ(next_event(eq, &ev), PTL_OK);
        CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
        CHECK_EQ(ev.offset, 8u * i);
    }
    CHECK_EQ(local[0], 'a');
    CHECK_EQ(local[8], 'b');
    CHECK_EQ(local[16], 'c');
    /* 24 used of 32: 8 more fit, 9 do not (no truncate). */
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 9);
    feed(1, &m, data, 9);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    m = harness_req(ONIC_PTL_OP_PUT, 1, 2, 4);
    m.offset = 20;
    data[0] = 'r';
    feed(1, &m, data, 4);
    CHECK_EQ(remote[20], 'r');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.offset, 20);
    m.offset = 30; /* 30 + 4 > 32, no truncate */
    feed(1, &m, data, 4);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 2);
    close_ni();
}

/* PTL_MD_MAX_SIZE: at most max_size per operation, used up when less than
 * max_size is left. */
static void test_max_size(void)
{
    uint8_t buf[40] = {0};
    ptl_handle_me_t me;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    ptl_md_t md = md_desc(buf, 40, PTL_MD_THRESH_INF,
                          PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_MAX_SIZE |
                              PTL_MD_EVENT_START_DISABLE, PTL_EQ_NONE);
    int unlinked = 0;

    open_ni();
    eq = eq_alloc(64);
    md.eq_handle = eq;
    md.max_size = 16;
    me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md, PTL_UNLINK);
    put(1, 1, 1, 10, 'a');  /* 0..10, 30 left */
    put(1, 1, 1, 20, 'b');  /* truncated to 16: 10..26, 14 left < 16: used up */
    CHECK_EQ(buf[25], 'b');
    CHECK_EQ(buf[26], 0);
    while (next_event(eq, &ev) == PTL_OK) {
        if (ev.type == PTL_EVENT_PUT_END && ev.offset == 10)
            CHECK_EQ(ev.mlength, 16);
        unlinked += ev.type == PTL_EVENT_UNLINK;
    }
    CHECK_EQ(unlinked, 1);
    put(1, 1, 1, 1, 'c');
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    close_ni();
}

/* --- 4.5: access control ------------------------------------------------------ */
static void test_acl(void)
{
    uint8_t buf[8];
    ptl_handle_me_t me;
    onic_ptl_msg_t m;
    uint64_t before;

    open_ni();
    for (ptl_pt_index_t pt = 0; pt < 8; pt++) {
        me = me_attach(pt, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
        md_attach(me, md_desc(buf, 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE,
                              PTL_EQ_NONE), PTL_RETAIN);
    }
    /* Entry 0: every process of the job, every portal. */
    for (uint32_t src = 0; src < 8; src++) {
        m = harness_req(ONIC_PTL_OP_PUT, src % 8, 1, 1);
        feed(src, &m, "z", 1);
    }
    CHECK_EQ(ni->dropped, 0);
    /* Entry 1: system processes only; a job's process is not one. */
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 1);
    m.ac_index = 1;
    feed(2, &m, "z", 1);
    CHECK_EQ(drops(ONIC_PTL_DROP_AC_DENIED), 1);
    /* Entries 2 and up deny. */
    m.ac_index = 2;
    feed(2, &m, "z", 1);
    CHECK_EQ(drops(ONIC_PTL_DROP_AC_DENIED), 2);
    /* Beyond the list. */
    m.ac_index = (ptl_ac_index_t)ni->limits.max_ac_index + 1;
    feed(2, &m, "z", 1);
    CHECK_EQ(drops(ONIC_PTL_DROP_AC_INDEX), 1);
    /* An entry for rank 2 on portal 5 only. */
    CHECK_EQ(PtlACEntry(nih, 3, ((ptl_process_id_t){0, 2}), PTL_UID_ANY, PTL_JID_ANY, 5), PTL_OK);
    m = harness_req(ONIC_PTL_OP_PUT, 5, 1, 1);
    m.ac_index = 3;
    before = ni->dropped;
    feed(2, &m, "z", 1);
    CHECK_EQ(ni->dropped, before);
    feed(1, &m, "z", 1);
    CHECK_EQ(drops(ONIC_PTL_DROP_AC_DENIED), 3);
    m.pt_index = 6;
    feed(2, &m, "z", 1);
    CHECK_EQ(drops(ONIC_PTL_DROP_AC_PT), 1);
    /* uid and jid: ours pass, others do not. */
    CHECK_EQ(PtlACEntry(nih, 4, ME_ANY, HARNESS_UID, HARNESS_JID, PTL_PT_INDEX_ANY), PTL_OK);
    CHECK_EQ(PtlACEntry(nih, 5, ME_ANY, HARNESS_UID + 1, PTL_JID_ANY, PTL_PT_INDEX_ANY), PTL_OK);
    CHECK_EQ(PtlACEntry(nih, 6, ME_ANY, PTL_UID_ANY, HARNESS_JID + 1, PTL_PT_INDEX_ANY), PTL_OK);
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 1);
    m.ac_index = 4;
    before = ni->dropped;
    feed(3, &m, "z", 1);
    CHECK_EQ(ni->dropped, before);
    m.ac_index = 5;
    feed(3, &m, "z", 1);
    m.ac_index = 6;
    feed(3, &m, "z", 1);
    CHECK_EQ(drops(ONIC_PTL_DROP_AC_DENIED), 5);
    /* Gets are checked too. */
    m = harness_req(ONIC_PTL_OP_GET, 1, 1, 1);
    m.ac_index = 2;
    CHECK(!feed(3, &m, NULL, 0).send);
    CHECK_EQ(drops(ONIC_PTL_DROP_AC_DENIED), 6);
    close_ni();
}

/* --- 4.6-4.8: acks ------------------------------------------------------------- */
static void test_ack(void)
{
    uint8_t buf[16] = {0}, src_buf[16];
    ptl_handle_me_t me, noack;
    ptl_handle_md_t smd;
    ptl_handle_eq_t eq, seq;
    ptl_event_t ev;
    onic_ptl_out_t out;
    onic_ptl_msg_t m, a;

    open_ni();
    eq = eq_alloc(16);
    seq = eq_alloc(16);
    me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(buf, 16, PTL_MD_THRESH_INF,
                          PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE, eq), PTL_RETAIN);
    noack = me_attach(1, ME_ANY, 2, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(noack, md_desc(buf, 16, PTL_MD_THRESH_INF,
                             PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_ACK_DISABLE, eq),
              PTL_RETAIN);
    /* Through PtlPut: the captured request asks for an ack to our queue. */
    memset(src_buf, 's', sizeof(src_buf));
    CHECK_EQ(PtlMDBind(nih, md_desc(src_buf, 16, 1, 0, seq), PTL_UNLINK, &smd), PTL_OK);
    CHECK_EQ(PtlPut(smd, PTL_ACK_REQ, ((ptl_process_id_t){0, 0}), 1, 0, 1, 4, 99), PTL_OK);
    CHECK_EQ(harness_nsent, 1);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_START);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_END);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK); /* threshold 1: the send used it up */
    CHECK_EQ(PtlMDUnlink(smd), PTL_MD_INVALID);
    /* The target (ourselves) takes it, truncated to 12 at offset 4, and acks. */
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len,
                         harness_sent[0].payload, harness_sent[0].len, &out);
    CHECK(out.send);
    CHECK_EQ(buf[4], 's');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    CHECK_EQ(ev.hdr_data, 99);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(onic_ptl_msg_unpack(&out.hdr, sizeof(out.hdr), &a), ONIC_OK);
    CHECK_EQ(a.op, ONIC_PTL_OP_ACK);
    CHECK_EQ(a.mlength, 12);
    CHECK_EQ(a.rlength, 16);
    CHECK_EQ(a.offset, 4);
    CHECK_EQ(a.match_bits, 1);
    CHECK(a.md == smd && a.eq == seq);
    /* The ack comes home: its MD is gone, its queue is not, so it counts. */
    {
        onic_ptl_out_t in = out;
        onic_ptl_target_recv(ni, 0, &in.hdr, sizeof(in.hdr), NULL, 0, &out);
    }
    CHECK(!out.send);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_ACK);
    CHECK_EQ(ev.mlength, 12);
    CHECK(ev.md_handle == smd);
    CHECK(ev.initiator.pid == 0);
    /* No ack: not requested, or the MD disables them. */
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 1);
    m.eq = seq;
    CHECK(!feed(3, &m, "z", 1).send);
    m.flags = ONIC_PTL_FLAG_ACK;
    CHECK(feed(3, &m, "z", 1).send);
    m.match_bits = 2;
    CHECK(!feed(3, &m, "z", 1).send);
    /* An ack whose queue is gone is dropped. */
    a.eq = seq;
    CHECK_EQ(PtlEQFree(seq), PTL_OK);
    feed(3, &a, NULL, 0);
    CHECK_EQ(drops(ONIC_PTL_DROP_ACK_EQ), 1);
    a.eq = PTL_EQ_NONE;
    feed(3, &a, NULL, 0);
    CHECK_EQ(drops(ONIC_PTL_DROP_ACK_EQ), 2);
    CHECK_EQ(ni->dropped, 2);
    close_ni();
}

/* --- gets and replies ---------------------------------------------------------------- */
/* A small get may ask for up to the longest reply one message carries
 * (the NI's max_inline) and no more: exactly that much is answered whole,
 * one byte more is a malformed request, dropped as such. */
static void test_get_max_inline(void)
{
    size_t n;
    uint8_t *exposed;
    ptl_handle_me_t me;
    ptl_handle_eq_t eq;
    onic_ptl_msg_t m;
    onic_ptl_out_t out;
    uint64_t before;

    open_ni();
    n = ni->max_inline;
    exposed = calloc(1, n + 1);
    REQUIRE(exposed != NULL);
    eq = eq_alloc(16);
    me = me_attach(4, ME_ANY, 5, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(exposed, n + 1, PTL_MD_THRESH_INF, PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE,
                          eq), PTL_RETAIN);
    m = harness_req(ONIC_PTL_OP_GET, 4, 5, n);
    out = feed(1, &m, NULL, 0);
    CHECK(out.send);
    CHECK_EQ(out.len, n);
    before = drops(ONIC_PTL_DROP_MALFORMED);
    m = harness_req(ONIC_PTL_OP_GET, 4, 5, n + 1);
    out = feed(1, &m, NULL, 0);
    CHECK(!out.send);
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), before + 1);
    close_ni();
    free(exposed);
}

static void test_get_reply(void)
{
    uint8_t exposed[32], dst[16] = {0};
    ptl_handle_me_t me;
    ptl_handle_md_t gmd;
    ptl_handle_eq_t eq, geq;
    ptl_event_t ev;
    onic_ptl_out_t out;
    onic_ptl_msg_t r;

    open_ni();
    eq = eq_alloc(16);
    geq = eq_alloc(16);
    for (int i = 0; i < 32; i++)
        exposed[i] = (uint8_t)i;
    me = me_attach(4, ME_ANY, 9, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(exposed, 32, PTL_MD_THRESH_INF,
                          PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE, eq), PTL_RETAIN);
    CHECK_EQ(PtlMDBind(nih, md_desc(dst, 16, 2, 0, geq), PTL_UNLINK, &gmd), PTL_OK);
    /* Get 8 bytes at remote offset 28 into dst+4: truncated to 4 there. */
    CHECK_EQ(PtlGetRegion(gmd, 4, 8, ((ptl_process_id_t){0, 0}), 4, 0, 9, 28), PTL_OK);
    CHECK_EQ(PtlMDUnlink(gmd), PTL_MD_IN_USE);
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len, NULL, 0, &out);
    CHECK(out.send);
    CHECK_EQ(out.len, 4);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_GET_START);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_GET_END);
    CHECK_EQ(ev.mlength, 4);
    CHECK_EQ(ev.offset, 28);
    CHECK_EQ(onic_ptl_msg_unpack(&out.hdr, sizeof(out.hdr), &r), ONIC_OK);
    CHECK_EQ(r.op, ONIC_PTL_OP_REPLY);
    CHECK_EQ(r.rlength, 8);
    CHECK_EQ(r.mlength, 4);
    CHECK_EQ(r.offset, 28);
    CHECK_EQ(r.local_offset, 4);
    {
        onic_ptl_out_t in = out;
        onic_ptl_target_recv(ni, 0, &in.hdr, sizeof(in.hdr), in.payload, in.len, &out);
    }
    CHECK_EQ(dst[4], 28);
    CHECK_EQ(dst[7], 31);
    CHECK_EQ(dst[8], 0);
    CHECK_EQ(next_event(geq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_REPLY_START);
    CHECK_EQ(next_event(geq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_REPLY_END);
    CHECK_EQ(ev.mlength, 4);
    CHECK_EQ(ev.offset, 4);
    CHECK_EQ(ev.link, 0);
    /* The same reply again: the MD expects none now. */
    feed(0, &r, exposed, 4);
    CHECK_EQ(drops(ONIC_PTL_DROP_REPLY_MD), 1);
    /* Every MD accepts and truncates a reply: one longer than the MD. */
    harness_nsent = 0;
    CHECK_EQ(PtlGetRegion(gmd, 0, 16, ((ptl_process_id_t){0, 0}), 4, 0, 9, 0), PTL_OK);
    r.mlength = r.rlength = 16;
    r.local_offset = 12;  /* a hostile offset: only 4 bytes fit */
    feed(0, &r, exposed, 16);
    CHECK_EQ(dst[15], 3);
    CHECK_EQ(next_event(geq, &ev), PTL_OK);
    CHECK_EQ(next_event(geq, &ev), PTL_OK);
    CHECK_EQ(ev.mlength, 4);
    CHECK_EQ(next_event(geq, &ev), PTL_OK); /* threshold 2 used: unlinked */
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    /* A reply for an MD that no longer exists. */
    feed(0, &r, exposed, 16);
    CHECK_EQ(drops(ONIC_PTL_DROP_REPLY_MD), 2);
    /* A reply whose MD's queue has no room: dropped, the get is over. */
    {
        ptl_handle_eq_t small = eq_alloc(2);
        ptl_handle_md_t fmd;
        CHECK_EQ(PtlMDBind(nih, md_desc(dst, 16, PTL_MD_THRESH_INF, 0, small), PTL_RETAIN, &fmd),
                 PTL_OK);
        CHECK_EQ(PtlPut(fmd, PTL_NOACK_REQ, ((ptl_process_id_t){0, 1}), 4, 0, 9, 0, 0), PTL_OK);
        CHECK_EQ(PtlGet(fmd, ((ptl_process_id_t){0, 1}), 4, 0, 9, 0), PTL_OK);
        r.md = fmd;
        r.local_offset = 0;
        feed(1, &r, exposed, 16);      /* the queue holds SEND_START and SEND_END */
        CHECK_EQ(drops(ONIC_PTL_DROP_REPLY_EQ_FULL), 1);
        CHECK_EQ(PtlMDUnlink(fmd), PTL_OK);
    }
    /* A get with no MD that takes it gets no reply. */
    r = harness_req(ONIC_PTL_OP_GET, 4, 10, 4);
    CHECK(!feed(2, &r, NULL, 0).send);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    close_ni();
}

/* --- event queues ------------------------------------------------------------------ */
/* --- large puts and gets (the data by RMA) ----------------------------------------- */
static void test_large(void)
{
    enum { BIG = 5000 };
    static uint8_t src[BIG], dst[8192], got[BIG];
    ptl_handle_me_t me, gme;
    ptl_handle_md_t smd, gmd;
    ptl_handle_eq_t eq, seq;
    ptl_event_t ev;
    onic_ptl_out_t out, done;
    onic_ptl_msg_t m, a;
    onic_ptl_large_desc_t desc;
    uint8_t small[100];

    open_ni();
    eq = eq_alloc(64);
    seq = eq_alloc(64);
    for (int i = 0; i < BIG; i++)
        src[i] = (uint8_t)(i * 7);
    me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(dst, sizeof(dst), PTL_MD_THRESH_INF,
                          PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, eq),
              PTL_RETAIN);
    /* PtlPut of more than one message: the key travels, SEND_END waits. */
    CHECK_EQ(PtlMDBind(nih, md_desc(src, BIG, 1, 0, seq), PTL_UNLINK, &smd), PTL_OK);
    CHECK_EQ(PtlPut(smd, PTL_ACK_REQ, ((ptl_process_id_t){0, 0}), 1, 0, 1, 0, 5), PTL_OK);
    CHECK_EQ(harness_nsent, 1);
    CHECK_EQ(harness_nreg, 1);
    CHECK_EQ(harness_sent[0].len, sizeof(desc));
    memcpy(&desc, harness_sent[0].payload, sizeof(desc));
    CHECK(desc.key.addr == (uint64_t)(uintptr_t)src && desc.key.len == BIG);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_START);
    CHECK_EQ(next_event(seq, &ev), PTL_EQ_EMPTY);
    CHECK_EQ(PtlMDUnlink(smd), PTL_MD_IN_USE);  /* the target still pulls from it */
    /* The target (ourselves) asks for the data, records PUT_START only. */
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len,
                         harness_sent[0].payload, harness_sent[0].len, &out);
    CHECK(!out.send);
    CHECK(out.rma && !out.rma_write && out.rma_len == BIG && out.rma_local == dst);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    CHECK_EQ(next_event(eq, &ev), PTL_EQ_EMPTY);
    /* The pull lands: PUT_END, and DONE with the ack. */
    memcpy(out.rma_local, (void *)(uintptr_t)out.rma_key.addr, out.rma_len);
    onic_ptl_target_rma_done(ni, out.rma_ctx, ONIC_OK, &done);
    CHECK_EQ(memcmp(dst, src, BIG), 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.mlength, BIG);
    CHECK_EQ(ev.hdr_data, 5);
    CHECK(done.send && !done.rma);
    CHECK_EQ(onic_ptl_msg_unpack(&done.hdr, sizeof(done.hdr), &a), ONIC_OK);
    CHECK_EQ(a.op, ONIC_PTL_OP_DONE);
    CHECK(a.flags & ONIC_PTL_FLAG_ACK);
    CHECK_EQ(a.mlength, BIG);
    CHECK(a.cookie == desc.cookie);
    /* The same DONE from another process than the put's target is forged:
     * dropped, nothing completes, the key stays registered. */
    onic_ptl_target_recv(ni, 1, &done.hdr, sizeof(done.hdr), NULL, 0, &out);
    CHECK(!out.dereg && !out.send);
    CHECK_EQ(next_event(seq, &ev), PTL_EQ_EMPTY);
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), 1);
    CHECK_EQ(PtlMDUnlink(smd), PTL_MD_IN_USE);
    /* DONE comes home: SEND_END, ACK, the unlink that waited; the key goes. */
    onic_ptl_target_recv(ni, 0, &done.hdr, sizeof(done.hdr), NULL, 0, &out);
    CHECK(out.dereg && out.dereg_key.id == desc.key.id);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_END);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_ACK);
    CHECK_EQ(ev.mlength, BIG);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    CHECK_EQ(PtlMDUnlink(smd), PTL_MD_INVALID);
    /* The same DONE again names nothing: a counted drop. */
    onic_ptl_target_recv(ni, 0, &done.hdr, sizeof(done.hdr), NULL, 0, &out);
    CHECK(!out.dereg);
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), 2);

    /* A large put nobody takes still answers DONE, with nothing moved. */
    m = harness_req(ONIC_PTL_OP_PUT, 1, 99, BIG);
    m.flags = ONIC_PTL_FLAG_LARGE;
    desc.cookie = 4242;
    out = feed(3, &m, &desc, sizeof(desc));
    CHECK(out.send && !out.rma);
    CHECK_EQ(onic_ptl_msg_unpack(&out.hdr, sizeof(out.hdr), &a), ONIC_OK);
    CHECK(a.op == ONIC_PTL_OP_DONE && a.mlength == 0 && a.cookie == 4242);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    /* A failed pull: PUT_END says so, and DONE reports nothing moved. */
    m.match_bits = 1;
    out = feed(3, &m, &desc, sizeof(desc));
    CHECK(out.rma);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);  /* PUT_START */
    onic_ptl_target_rma_done(ni, out.rma_ctx, ONIC_ERR_INVALID_PARAM, &done);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_PUT_END && ev.ni_fail_type == PTL_NI_FAIL);
    CHECK_EQ(onic_ptl_msg_unpack(&done.hdr, sizeof(done.hdr), &a), ONIC_OK);
    CHECK(a.op == ONIC_PTL_OP_DONE && a.mlength == 0);
    /* A large put whose payload is not exactly a key is malformed. */
    out = feed(3, &m, small, sizeof(small));
    CHECK(!out.send && !out.rma);
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), 3);

    /* PtlGet of more than one message: the target pushes, then replies. */
    gme = me_attach(2, ME_ANY, 7, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(gme, md_desc(src, BIG, PTL_MD_THRESH_INF, PTL_MD_OP_GET, eq), PTL_RETAIN);
    memset(got, 0, sizeof(got));
    CHECK_EQ(PtlMDBind(nih, md_desc(got, BIG, 1, 0, seq), PTL_UNLINK, &gmd), PTL_OK);
    harness_nsent = 0;
    CHECK_EQ(PtlGet(gmd, ((ptl_process_id_t){0, 0}), 2, 0, 7, 0), PTL_OK);
    CHECK_EQ(harness_nsent, 1);
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len,
                         harness_sent[0].payload, harness_sent[0].len, &out);
    CHECK(out.rma && out.rma_write && out.rma_len == BIG);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_GET_START);
    memcpy((void *)(uintptr_t)out.rma_key.addr, out.rma_local, out.rma_len);
    onic_ptl_target_rma_done(ni, out.rma_ctx, ONIC_OK, &done);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_GET_END);
    CHECK_EQ(onic_ptl_msg_unpack(&done.hdr, sizeof(done.hdr), &a), ONIC_OK);
    CHECK(a.op == ONIC_PTL_OP_REPLY && (a.flags & ONIC_PTL_FLAG_LARGE) && a.mlength == BIG);
    onic_ptl_target_recv(ni, 0, &done.hdr, sizeof(done.hdr), NULL, 0, &out);
    CHECK(out.dereg);
    CHECK_EQ(memcmp(got, src, BIG), 0);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_REPLY_START);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_REPLY_END);
    CHECK_EQ(ev.mlength, BIG);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    /* Through the NI's own path: the recorded RMA finished by the harness. */
    harness_nsent = harness_nrma = 0;
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, BIG);
    m.flags = ONIC_PTL_FLAG_LARGE;
    desc.key.addr = (uint64_t)(uintptr_t)src;
    desc.key.len = BIG;
    memset(dst, 0, sizeof(dst));
    {
        onic_ptl_wire_t w;
        onic_ptl_msg_pack(&m, &w);
        onic_ptl_ni_deliver(ni, 2, &w, sizeof(w), &desc, sizeof(desc));
    }
    CHECK_EQ(harness_nrma, 1);
    CHECK_EQ(harness_nsent, 0);
    harness_rma_finish(ni, 0, ONIC_OK);
    CHECK_EQ(harness_nsent, 1);
    CHECK_EQ(harness_sent[0].dest, 2);
    CHECK_EQ(memcmp(dst, src, BIG), 0);
    close_ni();
}

/* A reply is dropped when its MD's event queue has no room for what it
 * records (4.8): REPLY_START, REPLY_END, and UNLINK only if the MD is
 * unlinked by it (PTL_UNLINK, used up). With room for exactly two events,
 * a used-up PTL_UNLINK MD's reply is dropped and a PTL_RETAIN one's is
 * taken. */
static void test_reply_eq_room(void)
{
    static const ptl_unlink_t ways[2] = {PTL_UNLINK, PTL_RETAIN};
    uint8_t exposed[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8], first[8];
    ptl_handle_me_t me;
    ptl_handle_md_t gmd, fmd;
    ptl_handle_eq_t eq, geq;
    ptl_event_t ev;
    onic_ptl_out_t out, rep;

    for (int w = 0; w < 2; w++) {
        uint64_t dropped;
        open_ni();
        eq = eq_alloc(16);
        geq = eq_alloc(4);
        me = me_attach(4, ME_ANY, 9, 0, PTL_RETAIN, PTL_INS_AFTER);
        md_attach(me, md_desc(exposed, 8, PTL_MD_THRESH_INF, PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE, eq),
                  PTL_RETAIN);
        /* A first get's REPLY_START and END, left unread: room for two. */
        CHECK_EQ(PtlMDBind(nih, md_desc(first, 8, PTL_MD_THRESH_INF, 0, geq), PTL_RETAIN, &fmd),
                 PTL_OK);
        harness_nsent = 0;
        CHECK_EQ(PtlGet(fmd, ((ptl_process_id_t){0, 0}), 4, 0, 9, 0), PTL_OK);
        REQUIRE(harness_nsent == 1);
        onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len, NULL, 0, &out);
        REQUIRE(out.send);
        rep = out; /* the reply, fed back to us, its initiator */
        onic_ptl_target_recv(ni, 0, &rep.hdr, rep.hdr_len, rep.payload, rep.len, &out);
        CHECK_EQ(onic_ptl_eq_room(onic_ptl_htab_get(&ni->eqs, geq)), 2);
        /* The get under test: its MD used up by it (threshold 1). */
        memset(dst, 0, sizeof(dst));
        CHECK_EQ(PtlMDBind(nih, md_desc(dst, 8, 1, 0, geq), ways[w], &gmd), PTL_OK);
        harness_nsent = 0;
        CHECK_EQ(PtlGet(gmd, ((ptl_process_id_t){0, 0}), 4, 0, 9, 0), PTL_OK);
        REQUIRE(harness_nsent == 1);
        onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len, NULL, 0, &out);
        REQUIRE(out.send);
        dropped = drops(ONIC_PTL_DROP_REPLY_EQ_FULL);
        rep = out; /* the reply, fed back to us, its initiator */
        onic_ptl_target_recv(ni, 0, &rep.hdr, rep.hdr_len, rep.payload, rep.len, &out);
        if (ways[w] == PTL_UNLINK) {
            CHECK_EQ(drops(ONIC_PTL_DROP_REPLY_EQ_FULL), dropped + 1);
            CHECK_EQ(dst[7], 0);
        } else {
            CHECK_EQ(drops(ONIC_PTL_DROP_REPLY_EQ_FULL), dropped);
            CHECK_EQ(dst[7], 8);
        }
        /* Whatever was recorded fitted: no event was overwritten. */
        for (int k = 0; k < 2; k++) {
            CHECK_EQ(next_event(geq, &ev), PTL_OK);
            CHECK_EQ(ev.type, k == 0 ? PTL_EVENT_REPLY_START : PTL_EVENT_REPLY_END);
        }
        if (ways[w] == PTL_RETAIN) {
            CHECK_EQ(next_event(geq, &ev), PTL_OK);
            CHECK_EQ(ev.type, PTL_EVENT_REPLY_START);
            CHECK_EQ(next_event(geq, &ev), PTL_OK);
            CHECK_EQ(ev.type, PTL_EVENT_REPLY_END);
        }
        CHECK_EQ(next_event(geq, &ev), PTL_EQ_EMPTY);
        close_ni();
    }
}

/* A large put whose pull failed: Portals' ack reports what the target
 * received, so the initiator gets SEND_END but no ACK claiming success. */
static void test_large_failed_ack(void)
{
    enum { BIG = 5000 };
    static uint8_t src[BIG], dst[BIG];
    ptl_handle_me_t me;
    ptl_handle_md_t smd;
    ptl_handle_eq_t eq, seq;
    ptl_event_t ev;
    onic_ptl_out_t out, done;
    onic_ptl_msg_t a;

    open_ni();
    eq = eq_alloc(16);
    seq = eq_alloc(16);
    me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(dst, sizeof(dst), PTL_MD_THRESH_INF, PTL_MD_OP_PUT, eq), PTL_RETAIN);
    CHECK_EQ(PtlMDBind(nih, md_desc(src, BIG, 1, 0, seq), PTL_UNLINK, &smd), PTL_OK);
    harness_nsent = 0;
    CHECK_EQ(PtlPut(smd, PTL_ACK_REQ, ((ptl_process_id_t){0, 0}), 1, 0, 1, 0, 0), PTL_OK);
    REQUIRE(harness_nsent == 1);
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len,
                         harness_sent[0].payload, harness_sent[0].len, &out);
    REQUIRE(out.rma);
    onic_ptl_target_rma_done(ni, out.rma_ctx, ONIC_ERR_NO_RESOURCE, &done);
    CHECK(done.send);
    CHECK_EQ(onic_ptl_msg_unpack(&done.hdr, sizeof(done.hdr), &a), ONIC_OK);
    CHECK_EQ(a.op, ONIC_PTL_OP_DONE);
    CHECK_EQ(a.mlength, 0);
    CHECK(!(a.flags & ONIC_PTL_FLAG_ACK));
    /* DONE comes home: the send is over, and nothing was acknowledged. */
    onic_ptl_target_recv(ni, 0, &done.hdr, sizeof(done.hdr), NULL, 0, &out);
    CHECK(out.dereg);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_START);
    CHECK_EQ(next_event(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_END);
    while (next_event(seq, &ev) == PTL_OK)
        CHECK(ev.type != PTL_EVENT_ACK);
    close_ni();
}

/* The out-of-memory drop of a large operation: counted once when there is
 * data to move and no memory to remember the move by, never for a large
 * operation with nothing to move. */
static void test_large_no_memory(void)
{
    static uint8_t dst[8192];
    ptl_handle_me_t me;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    onic_ptl_out_t out;
    onic_ptl_msg_t m, a;
    onic_ptl_large_desc_t desc;
    uint64_t before[ONIC_PTL_DROP_REASONS];

    open_ni();
    eq = eq_alloc(16);
    me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(dst, sizeof(dst), PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_OP_GET, eq),
              PTL_RETAIN);
    memset(&desc, 0, sizeof(desc));
    desc.cookie = 77;
    /* Nothing to move: finished at once, no drop of any kind. */
    memcpy(before, ni->drops, sizeof(before));
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 0);
    m.flags = ONIC_PTL_FLAG_LARGE;
    out = feed(2, &m, &desc, sizeof(desc));
    CHECK(out.send && !out.rma);
    CHECK_EQ(onic_ptl_msg_unpack(&out.hdr, sizeof(out.hdr), &a), ONIC_OK);
    CHECK(a.op == ONIC_PTL_OP_DONE && a.mlength == 0 && a.cookie == 77);
    CHECK_EQ(memcmp(before, ni->drops, sizeof(before)), 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_PUT_END && ev.ni_fail_type == PTL_NI_OK);
    m = harness_req(ONIC_PTL_OP_GET, 1, 1, 0);
    m.flags = ONIC_PTL_FLAG_LARGE;
    out = feed(2, &m, &desc, sizeof(desc));
    CHECK(out.send && !out.rma);
    CHECK_EQ(memcmp(before, ni->drops, sizeof(before)), 0);
    while (next_event(eq, &ev) == PTL_OK)
        ;
    /* Data to move and no memory: one NO_MEMORY drop, a failed END, and
     * DONE saying nothing moved. */
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 5000);
    m.flags = ONIC_PTL_FLAG_LARGE;
    onic_mem_fail_after(0);
    out = feed(2, &m, &desc, sizeof(desc));
    onic_mem_fail_after(-1);
    CHECK(out.send && !out.rma);
    CHECK_EQ(onic_ptl_msg_unpack(&out.hdr, sizeof(out.hdr), &a), ONIC_OK);
    CHECK(a.op == ONIC_PTL_OP_DONE && a.mlength == 0);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MEMORY), before[ONIC_PTL_DROP_NO_MEMORY] + 1);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_PUT_END && ev.ni_fail_type == PTL_NI_FAIL && ev.mlength == 0);
    close_ni();
}

static unsigned handler_calls;
static void count_handler(ptl_event_t *ev)
{
    (void)ev;
    handler_calls++;
}

/* A handler runs inside a Portals call, which does not poll again: its
 * PtlEQWait on an empty queue could only wait for ever, and is refused
 * (PTL_FAIL); a PtlEQGet there says empty. */
static ptl_handle_eq_t waiting_eq;
static int waited_rc, got_rc;

static void waiting_handler(ptl_event_t *ev)
{
    ptl_event_t other;

    (void)ev;
    handler_calls++;
    waited_rc = PtlEQWait(waiting_eq, &other);
    got_rc = PtlEQGet(waiting_eq, &other);
}

static void test_handler_wait_refused(void)
{
    uint8_t buf[8];
    ptl_handle_me_t me;
    ptl_handle_eq_t heq;

    open_ni();
    handler_calls = 0;
    waited_rc = got_rc = -1;
    waiting_eq = eq_alloc(4);
    CHECK_EQ(PtlEQAlloc(nih, 4, waiting_handler, &heq), PTL_OK);
    me = me_attach(1, ME_ANY, 9, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(buf, 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE,
                          heq), PTL_RETAIN);
    check_watchdog("test_ptl: PtlEQWait inside a handler", 60);
    {
        onic_ptl_msg_t m = harness_req(ONIC_PTL_OP_PUT, 1, 9, 1);
        onic_ptl_wire_t w;
        onic_ptl_msg_pack(&m, &w);
        /* As the transport's progress delivers it (onic_ptl_ni_progress
         * marks the NI so around io->progress); the handlers run there. */
        ni->in_progress = 1;
        onic_ptl_ni_deliver(ni, 2, &w, sizeof(w), "w", 1);
        ni->in_progress = 0;
    }
    alarm(0);
    CHECK_EQ(handler_calls, 1);
    CHECK_EQ(waited_rc, PTL_FAIL);
    CHECK_EQ(got_rc, PTL_EQ_EMPTY);
    close_ni();
}

/* The small put's straight line: what it must leave to the general steps
 * or finish with them. Headers sent as the NI sends them (32 bytes), with
 * END-only MDs, so only the straight line's own checks stand between a
 * bad header and the entries. */
static void test_end_only_turns(void)
{
    const unsigned end_only = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE;
    uint8_t a[8] = {0}, ovf[64] = {0};
    ptl_handle_me_t me, sme;
    ptl_handle_md_t md, smd;
    ptl_handle_eq_t eq, heq;
    ptl_ovf_header_t hdr;
    ptl_event_t ev;
    onic_ptl_msg_t m;
    onic_ptl_wire_t w;
    onic_ptl_out_t out;
    uint64_t before;

    open_ni();
    eq = eq_alloc(16);
    me = me_attach(2, ME_ANY, 7, 0, PTL_UNLINK, PTL_INS_AFTER);
    md = md_attach(me, md_desc(a, 8, 1, end_only, eq), PTL_UNLINK);
    /* Malformed in 32 bytes: each a counted drop; the entry untouched. */
    m = harness_req(ONIC_PTL_OP_PUT, 2, 7, 8);
    REQUIRE(onic_ptl_msg_pack(&m, &w) == 32);
    before = drops(ONIC_PTL_DROP_MALFORMED);
    onic_ptl_target_recv(ni, 3, &w, 32, "abcd", 4, &out);      /* length mismatch */
    onic_ptl_target_recv(ni, 3, &w, 32, NULL, 8, &out);        /* no payload */
    onic_ptl_target_recv(ni, 8, &w, 32, "abcdefgh", 8, &out);  /* no such rank */
    w.w[0] |= (uint64_t)0x8 << 52;                              /* unknown flag */
    onic_ptl_target_recv(ni, 3, &w, 32, "abcdefgh", 8, &out);
    m = harness_req(ONIC_PTL_OP_GET, 2, 7, 8);                          /* a get cut to 32 */
    onic_ptl_msg_pack(&m, &w);
    onic_ptl_target_recv(ni, 3, &w, 32, NULL, 0, &out);
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED) - before, 5);
    CHECK_EQ(next_event(eq, &ev), PTL_EQ_EMPTY);
    CHECK_EQ(ni->pt[2].nlist, 1);
    CHECK_EQ(a[0], 0);
    /* An END-only overflow entry keeps the header of what it takes, which a
     * search then finds. */
    me = PTL_INVALID_HANDLE;
    REQUIRE(PtlMEAttachOverflow(nih, 2, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_RETAIN,
                                PTL_INS_AFTER, &me) == PTL_OK);
    md_attach(me, md_desc(ovf, sizeof(ovf), PTL_MD_THRESH_INF, end_only, eq), PTL_RETAIN);
    put_at(40, 0, 77, "unexpect", 8);
    REQUIRE(next_event(eq, &ev) == PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK(memcmp(ovf, "unexpect", 8) == 0);
    CHECK_EQ(PtlMEAttachSearch(nih, 2, ME_ANY, 40, 0, PTL_UNLINK, PTL_INS_AFTER,
                               md_desc(a, 8, 1, end_only, eq), PTL_UNLINK, &sme, &smd, &hdr),
             PTL_OVF_MATCHED);
    CHECK(hdr.hdr_data == 77 && hdr.rlength == 8 && hdr.initiator.pid == 3);
    close_ni();

    /* A queue with a handler: the NI runs it for the put's END and UNLINK. */
    open_ni();
    REQUIRE(PtlEQAlloc(nih, 16, count_handler, &heq) == PTL_OK);
    me = me_attach(2, ME_ANY, 7, 0, PTL_UNLINK, PTL_INS_AFTER);
    md_attach(me, md_desc(a, 8, 1, end_only, heq), PTL_UNLINK);
    m = harness_req(ONIC_PTL_OP_PUT, 2, 7, 8);
    REQUIRE(onic_ptl_msg_pack(&m, &w) == 32);
    handler_calls = 0;
    onic_ptl_ni_deliver(ni, 3, &w, 32, "handler!", 8);
    CHECK_EQ(handler_calls, 2);
    CHECK(memcmp(a, "handler!", 8) == 0);
    (void)md;
    close_ni();
}

static void test_eq_overflow(void)
{
    uint8_t buf[64];
    ptl_handle_me_t me;
    ptl_handle_eq_t eq, heq;
    ptl_event_t ev;

    open_ni();
    handler_calls = 0;
    eq = eq_alloc(4);
    me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(buf, 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
              PTL_RETAIN);
    for (int i = 0; i < 3; i++) /* 6 events into 4 slots */
        put(1, 1, 1, 1, 'a');
    CHECK_EQ(next_event(eq, &ev), PTL_EQ_DROPPED);
    CHECK_EQ(ev.sequence, 2);     /* the oldest kept */
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.sequence, 3);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.sequence, 5);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.link, 4);
    CHECK_EQ(next_event(eq, &ev), PTL_EQ_EMPTY);
    /* A handler runs for each event, after the step that recorded it. */
    CHECK_EQ(PtlEQAlloc(nih, 8, count_handler, &heq), PTL_OK);
    me = me_attach(1, ME_ANY, 2, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(buf, 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, heq),
              PTL_RETAIN);
    {
        onic_ptl_msg_t m = harness_req(ONIC_PTL_OP_PUT, 1, 2, 1);
        onic_ptl_wire_t w;
        onic_ptl_msg_pack(&m, &w);
        onic_ptl_ni_deliver(ni, 1, &w, sizeof(w), "h", 1);
    }
    CHECK_EQ(handler_calls, 2);
    close_ni();
}

/* A queue of 4 events and, on portal 1, an entry for any put whose MD
 * (buf, 64 bytes, puts without end) posts to it. */
static ptl_handle_eq_t eq_in_place_entry(uint8_t *buf)
{
    ptl_handle_eq_t eq = eq_alloc(4);
    ptl_handle_me_t me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);

    md_attach(me, md_desc(buf, 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq),
              PTL_RETAIN);
    return eq;
}

/* PtlEQGetInPlace: the events of PtlEQGet, in order, read where the queue
 * keeps them -- but the read that empties the queue, which copies its
 * event to the spare (the queue starts again at its first slot); the one
 * read last stays as it was while the queue records as many events as it
 * holds (4 here: puts with START and END, two each), and one more is an
 * overflow, reported by the next read. */
static void test_eq_in_place(void)
{
    uint8_t buf[64];
    ptl_handle_eq_t eq;
    const ptl_event_t *e = NULL, *first;
    ptl_event_t spare, copy, ev;

    open_ni();
    eq = eq_in_place_entry(buf);
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_EQ_EMPTY);
    put(3, 1, 1, 1, 'a');
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK);
    CHECK(e != NULL && e != &spare && e->type == PTL_EVENT_PUT_START && e->sequence == 0);
    first = e; /* the ring's first slot */
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK);
    CHECK(e == &spare); /* it emptied the queue */
    CHECK(e->type == PTL_EVENT_PUT_END && e->sequence == 1 && e->initiator.pid == 3 &&
          e->match_bits == 1 && e->mlength == 1);
    put(4, 1, 1, 1, 'b');
    put(5, 1, 1, 1, 'c'); /* the queue full */
    for (int i = 2; i < 6; i++) {
        CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK);
        CHECK_EQ(e->sequence, (ptl_seq_t)i);
    }
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_EQ_EMPTY);
    for (int i = 0; i < 3; i++) /* 6 events into 4 slots */
        put(1, 1, 1, 1, 'd');
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_EQ_DROPPED);
    CHECK_EQ(e->sequence, 8); /* the oldest kept, as PtlEQGet */
    /* Bad arguments: an error, nothing read. */
    CHECK_EQ(PtlEQGetInPlace(eq, NULL, &spare), PTL_SEGV);
    CHECK_EQ(PtlEQGetInPlace(eq, &e, NULL), PTL_SEGV);
    CHECK_EQ(PtlEQGetInPlace(PTL_EQ_NONE, &e, &spare), PTL_EQ_INVALID);
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK);
    CHECK_EQ(e->sequence, 9);
    while (PtlEQGetInPlace(eq, &e, &spare) == PTL_OK)
        ;
    /* Emptied: the next event is written at the first slot again. */
    put(6, 1, 1, 1, 'e');
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK);
    CHECK(e == first && e->type == PTL_EVENT_PUT_START && e->sequence == 12 &&
          e->initiator.pid == 6);
    /* A slot lent stays the caller's until its next PtlEQGetInPlace, even
     * when PtlEQGet and PtlEQPoll empty the queue in between: no restart
     * then, and the next events go on behind it. */
    copy = *e;
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.sequence, 13);
    put(7, 1, 1, 1, 'f');
    CHECK_EQ(PtlEQPoll(&eq, 1, 0, &ev, NULL), PTL_OK);
    CHECK_EQ(PtlEQPoll(&eq, 1, 0, &ev, NULL), PTL_OK);
    CHECK(ev.sequence == 15 && ev.initiator.pid == 7);
    put(2, 1, 1, 1, 'g');
    CHECK(memcmp(e, &copy, sizeof(copy)) == 0);
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK);
    CHECK(e != first && e != &spare && e->sequence == 16 && e->initiator.pid == 2);
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK);
    CHECK(e == &spare && e->sequence == 17);
    /* That read restarted the queue: PtlEQGet's emptying reads do too now. */
    put(4, 1, 1, 1, 'h');
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK(ev.sequence == 19 && ev.initiator.pid == 4);
    put(5, 1, 1, 1, 'i');
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK);
    CHECK(e == first && e->sequence == 20 && e->initiator.pid == 5);
    close_ni();
}

/* MPI's read of its queue without the handle (post.h): the queue of a
 * handle, none for a bad handle or a queue with a handler; the reads those
 * of PtlEQGetInPlace (in place, the emptying one into the spare, overflow
 * reported with the oldest kept). */
static void test_eq_get_local(void)
{
    uint8_t buf[64];
    ptl_handle_eq_t eq, heq;
    struct onic_ptl_eq *q;
    const ptl_event_t *e = NULL;
    ptl_event_t spare;

    open_ni();
    eq = eq_in_place_entry(buf);
    CHECK_EQ(PtlEQAlloc(nih, 4, count_handler, &heq), PTL_OK);
    CHECK(onic_ptl_eq_find_local(PTL_EQ_NONE) == NULL);
    CHECK(onic_ptl_eq_find_local(heq) == NULL);
    q = onic_ptl_eq_find_local(eq);
    REQUIRE(q != NULL);
    CHECK_EQ(onic_ptl_eq_get_inplace(q, &e, &spare), PTL_EQ_EMPTY);
    put(3, 1, 1, 1, 'a');
    CHECK_EQ(onic_ptl_eq_get_inplace(q, &e, &spare), PTL_OK);
    CHECK(e != NULL && e != &spare && e->type == PTL_EVENT_PUT_START && e->sequence == 0);
    CHECK_EQ(onic_ptl_eq_get_inplace(q, &e, &spare), PTL_OK);
    CHECK(e == &spare && e->type == PTL_EVENT_PUT_END && e->sequence == 1 &&
          e->initiator.pid == 3 && e->mlength == 1);
    for (int i = 0; i < 3; i++) /* 6 events into 4 slots */
        put(4, 1, 1, 1, 'b');
    CHECK_EQ(onic_ptl_eq_get_inplace(q, &e, &spare), PTL_EQ_DROPPED);
    CHECK_EQ(e->sequence, 4);
    CHECK_EQ(PtlEQGetInPlace(eq, &e, &spare), PTL_OK); /* the same queue by handle */
    CHECK_EQ(e->sequence, 5);
    close_ni();
}

/* MPI's poll of both its queues without their handles (post.h): the first
 * queue in order with an event, which says which; both empty, empty; each
 * read in place as onic_ptl_eq_get_inplace (the emptying read into the
 * spare, an overflow reported with the oldest kept). */
static void test_eq_poll_local(void)
{
    uint8_t buf[64], buf2[64];
    ptl_handle_eq_t eq, eq2;
    struct onic_ptl_eq *q[2];
    const ptl_event_t *e = NULL;
    ptl_event_t spare;
    ptl_handle_me_t me;
    int which = -1;

    open_ni();
    eq = eq_in_place_entry(buf);
    eq2 = eq_alloc(4);
    me = me_attach(2, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md_attach(me, md_desc(buf2, 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, eq2),
              PTL_RETAIN);
    q[0] = onic_ptl_eq_find_local(eq);
    q[1] = onic_ptl_eq_find_local(eq2);
    REQUIRE(q[0] != NULL && q[1] != NULL && q[0] != q[1]);
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 2, &e, &spare, &which), PTL_EQ_EMPTY);
    put(3, 2, 1, 1, 'a'); /* portal 2: the second queue */
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 2, &e, &spare, &which), PTL_OK);
    CHECK(which == 1 && e != &spare && e->type == PTL_EVENT_PUT_START && e->initiator.pid == 3);
    put(4, 1, 1, 1, 'b'); /* portal 1: the first queue, read before the second's rest */
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 2, &e, &spare, &which), PTL_OK);
    CHECK(which == 0 && e->type == PTL_EVENT_PUT_START && e->initiator.pid == 4);
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 2, &e, &spare, &which), PTL_OK);
    CHECK(which == 0 && e == &spare && e->type == PTL_EVENT_PUT_END && e->initiator.pid == 4);
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 2, &e, &spare, &which), PTL_OK);
    CHECK(which == 1 && e == &spare && e->type == PTL_EVENT_PUT_END && e->initiator.pid == 3);
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 2, &e, &spare, &which), PTL_EQ_EMPTY);
    for (int i = 0; i < 3; i++) /* 6 events into 4 slots of the second queue */
        put(5, 2, 1, 1, 'c');
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 2, &e, &spare, &which), PTL_EQ_DROPPED);
    CHECK(which == 1 && e->sequence == 4);
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 1, &e, &spare, &which), PTL_EQ_EMPTY); /* first only */
    CHECK_EQ(onic_ptl_eq_poll_inplace(q, 2, &e, &spare, &which), PTL_OK);
    CHECK(which == 1 && e->sequence == 5);
    close_ni();
}

static void test_md_update(void)
{
    uint8_t buf[16];
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    ptl_handle_eq_t eq;
    ptl_md_t old, neu;
    ptl_event_t ev;

    open_ni();
    eq = eq_alloc(8);
    me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md = md_attach(me, md_desc(buf, 16, 0, PTL_MD_OP_PUT, eq), PTL_RETAIN);
    put(1, 1, 1, 4, 'a'); /* threshold 0: inactive */
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    neu = md_desc(buf, 16, 1, PTL_MD_OP_PUT, eq);
    CHECK_EQ(PtlMDUpdate(md, &old, &neu, eq), PTL_OK);
    CHECK_EQ(old.threshold, 0);
    put(1, 1, 1, 4, 'a');
    CHECK_EQ(buf[0], 'a');
    /* The queue is not empty now: no update. */
    CHECK_EQ(PtlMDUpdate(md, NULL, &neu, eq), PTL_MD_NO_UPDATE);
    while (next_event(eq, &ev) == PTL_OK)
        ;
    CHECK_EQ(PtlMDUpdate(md, NULL, &neu, eq), PTL_OK);
    put(1, 1, 1, 4, 'b'); /* local offset back to 0 */
    CHECK_EQ(buf[0], 'b');
    /* The new MD is checked as any (an I/O vector without its array). */
    neu.options = PTL_MD_IOVEC;
    neu.start = NULL;
    CHECK_EQ(PtlMDUpdate(md, NULL, &neu, PTL_EQ_NONE), PTL_MD_ILLEGAL);
    close_ni();
}

/* --- drops for malformed messages; PTL_SR_DROP_COUNT sums every reason ------------ */
/* Each header unpacked from a heap block of exactly its wire length (ptl.h:
 * a put without ack four words, a get five, every other six): its fields
 * come back, and nothing past the header is read (an ASan build reports a
 * read past the block). */
static void test_unpack_exact(void)
{
    static const struct {
        unsigned op, flags;
        size_t len;
    } hdrs[] = {{ONIC_PTL_OP_PUT, 0, 32},   {ONIC_PTL_OP_PUT, ONIC_PTL_FLAG_ACK, 48},
                {ONIC_PTL_OP_GET, 0, 40},   {ONIC_PTL_OP_ACK, 0, 48},
                {ONIC_PTL_OP_REPLY, 0, 48}, {ONIC_PTL_OP_DONE, 0, 48}};

    for (size_t i = 0; i < sizeof(hdrs) / sizeof(hdrs[0]); i++) {
        onic_ptl_msg_t m = harness_req(hdrs[i].op, 3, 0xabc0 + i, 77), a;
        onic_ptl_wire_t w;
        unsigned char *b;

        m.flags = hdrs[i].flags;
        REQUIRE(onic_ptl_msg_pack(&m, &w) == hdrs[i].len);
        b = onic_malloc(hdrs[i].len);
        REQUIRE(b != NULL);
        memcpy(b, &w, hdrs[i].len);
        CHECK_EQ(onic_ptl_msg_unpack(b, hdrs[i].len, &a), ONIC_OK);
        CHECK_EQ(a.op, hdrs[i].op);
        CHECK_EQ(a.flags, hdrs[i].flags);
        CHECK_EQ(a.pt_index, 3);
        CHECK_EQ(a.match_bits, 0xabc0 + i);
        CHECK_EQ(a.rlength, 77);
        onic_free(b);
    }
}

static void test_malformed(void)
{
    onic_ptl_msg_t m;
    onic_ptl_wire_t w;
    onic_ptl_out_t out;
    ptl_sr_value_t count;
    uint64_t sum = 0;

    open_ni();
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 4);
    /* A put without ack sends four words, a get five, the rest six; a header
     * of the op's length or of all six words is taken, any other is not. */
    CHECK_EQ(onic_ptl_msg_pack(&m, &w), 32);
    {
        onic_ptl_msg_t g = harness_req(ONIC_PTL_OP_GET, 1, 1, 4), u;
        CHECK_EQ(onic_ptl_msg_pack(&g, &w), 40);
        CHECK_EQ(onic_ptl_msg_unpack(&w, 40, &u), ONIC_OK);
        CHECK_EQ(onic_ptl_msg_unpack(&w, 32, &u), ONIC_ERR_INVALID_PARAM);
        m.flags = ONIC_PTL_FLAG_ACK;
        CHECK_EQ(onic_ptl_msg_pack(&m, &w), 48);
        CHECK_EQ(onic_ptl_msg_unpack(&w, 32, &u), ONIC_ERR_INVALID_PARAM);
        m.flags = 0;
        onic_ptl_msg_pack(&m, &w);
        CHECK_EQ(onic_ptl_msg_unpack(&w, 32, &u), ONIC_OK);
        CHECK(u.eq == PTL_EQ_NONE && u.rlength == 4 && u.match_bits == 1);
    }
    onic_ptl_target_recv(ni, 1, &w, sizeof(w) - 1, "abcd", 4, &out);  /* short header */
    onic_ptl_target_recv(ni, 8, &w, sizeof(w), "abcd", 4, &out);      /* no such rank */
    onic_ptl_target_recv(ni, 1, &w, sizeof(w), "abc", 3, &out);       /* length mismatch */
    onic_ptl_target_recv(ni, 1, &w, sizeof(w), NULL, 4, &out);        /* no payload */
    w.w[0] |= (uint64_t)0xf << 48;                                    /* unknown op */
    onic_ptl_target_recv(ni, 1, &w, sizeof(w), "abcd", 4, &out);
    onic_ptl_msg_pack(&m, &w);
    w.w[0] |= (uint64_t)0x8 << 52;                                    /* unknown flag */
    onic_ptl_target_recv(ni, 1, &w, sizeof(w), "abcd", 4, &out);
    m = harness_req(ONIC_PTL_OP_GET, 1, 1, 4096);                             /* reply too big */
    feed(1, &m, NULL, 0);
    m = harness_req(ONIC_PTL_OP_ACK, 1, 1, 4);
    m.mlength = 5;                                                    /* more than asked */
    feed(1, &m, NULL, 0);
    m = harness_req(ONIC_PTL_OP_REPLY, 1, 1, 4);
    m.mlength = 5;                      /* a reply with its data, more than was asked */
    feed(1, &m, "abcde", 5);
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), 9);
    m = harness_req(ONIC_PTL_OP_PUT, (ptl_pt_index_t)ni->limits.max_pt_index + 1, 1, 1);
    feed(1, &m, "a", 1);
    CHECK_EQ(drops(ONIC_PTL_DROP_PT_INDEX), 1);
    for (int i = 0; i < ONIC_PTL_DROP_REASONS; i++)
        sum += ni->drops[i];
    CHECK_EQ(PtlNIStatus(nih, PTL_SR_DROP_COUNT, &count), PTL_OK);
    CHECK_EQ(count, 10);
    CHECK_EQ(sum, 10);
    close_ni();
}

/* --- the overflow list and PtlMEAttachSearch (onic extension) ----------------------- */
static void test_overflow(void)
{
    uint8_t ovf[64] = {0}, posted[8] = {0}, later[8] = {0};
    ptl_handle_me_t ome, pme, me;
    ptl_handle_md_t omd, md;
    ptl_handle_eq_t eq;
    ptl_ovf_header_t hdr;
    ptl_event_t ev;
    onic_ptl_msg_t m;
    ptl_md_t desc = md_desc(later, 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);

    open_ni();
    eq = eq_alloc(64);
    CHECK_EQ(PtlMEAttachOverflow(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_RETAIN,
                                 PTL_INS_AFTER, &ome), PTL_OK);
    omd = md_attach(ome, md_desc(ovf, 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT, eq), PTL_RETAIN);
    /* A posted entry takes its message; its header is not kept. */
    pme = me_attach(3, ME_ANY, 42, 0, PTL_UNLINK, PTL_INS_AFTER);
    md_attach(pme, md_desc(posted, 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_UNLINK);
    put(2, 3, 42, 4, 'p');
    CHECK_EQ(posted[0], 'p');
    CHECK_EQ(ovf[0], 0);
    /* Unexpected ones land in the overflow MD, headers kept in order. */
    m = harness_req(ONIC_PTL_OP_PUT, 3, 7, 4);
    m.hdr_data = 70;
    feed(5, &m, "aaaa", 4);
    m = harness_req(ONIC_PTL_OP_PUT, 3, 8, 4);
    m.hdr_data = 80;
    feed(6, &m, "bbbb", 4);
    m = harness_req(ONIC_PTL_OP_PUT, 3, 7, 4);
    m.hdr_data = 71;
    feed(6, &m, "cccc", 4);
    CHECK_EQ(ovf[8], 'c');
    CHECK_EQ(next_event(eq, &ev), PTL_OK); /* delivered as usual, events and all */
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    CHECK(ev.md_handle == omd);
    /* Search for bits 7 from anyone: the oldest (from rank 5). */
    CHECK_EQ(PtlMEAttachSearch(nih, 3, ME_ANY, 7, 0, PTL_UNLINK, PTL_INS_AFTER, desc, PTL_UNLINK,
                               &me, &md, &hdr), PTL_OVF_MATCHED);
    CHECK_EQ(hdr.initiator.pid, 5);
    CHECK_EQ(hdr.hdr_data, 70);
    CHECK_EQ(hdr.mlength, 4);
    CHECK_EQ(hdr.offset, 0);
    CHECK(hdr.start == ovf && hdr.md_handle == omd);
    /* Bits 7 from rank 6: the third message. */
    CHECK_EQ(PtlMEAttachSearch(nih, 3, ((ptl_process_id_t){0, 6}), 7, 0, PTL_UNLINK,
                               PTL_INS_AFTER, desc, PTL_UNLINK, &me, &md, &hdr), PTL_OVF_MATCHED);
    CHECK_EQ(hdr.hdr_data, 71);
    CHECK(hdr.start == ovf + 8);
    /* Nothing more for bits 7: attached, and the next such put goes there. */
    CHECK_EQ(PtlMEAttachSearch(nih, 3, ME_ANY, 7, 0, PTL_UNLINK, PTL_INS_AFTER, desc, PTL_UNLINK,
                               &me, &md, &hdr), PTL_OK);
    put(1, 3, 7, 4, 'L');
    CHECK_EQ(later[0], 'L');
    CHECK_EQ(ovf[12], 0);
    CHECK_EQ(PtlMEUnlink(me), PTL_ME_INVALID); /* used up and gone */
    /* Wildcard search on bits: bits 8 is still kept. */
    CHECK_EQ(PtlMEAttachSearch(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
                               PTL_INS_AFTER, desc, PTL_UNLINK, &me, &md, &hdr), PTL_OVF_MATCHED);
    CHECK_EQ(hdr.match_bits, 8);
    CHECK_EQ(hdr.hdr_data, 80);
    /* Another portal's headers are not searched. */
    CHECK_EQ(PtlMEAttachSearch(nih, 4, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
                               PTL_INS_AFTER, desc, PTL_UNLINK, &me, &md, &hdr), PTL_OK);
    /* The overflow list is searched only after the match list. */
    CHECK_EQ(PtlMEInsert(ome, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_RETAIN, PTL_INS_BEFORE, &me),
             PTL_OK);
    CHECK_EQ(ni->pt[3].noverflow, 2);
    /* Kept headers left at NI teardown are freed (checked by ASan). */
    put(1, 3, 99, 4, 'q');
    close_ni();
}

/* --- onic_ptl_recv_post (post.h): MPI's receive, checked once ------------------- */
/* A posted receive's MD as PtlMDUpdate or PtlMDAttach changed it is
 * matched as it is now, not as it was posted (the matcher's short way for
 * a receive as posted, target_first_md_takes). Portal 6 has no overflow
 * entry: what no entry takes is dropped. */
static void recv_post_changed(ptl_handle_eq_t eq)
{
    const unsigned opts = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_UNLINK_DISABLE;
    uint8_t a[8] = {0}, c[4] = {0};
    ptl_handle_me_t me;
    ptl_ovf_header_t hdr;
    ptl_event_t ev;
    ptl_md_t d;
    onic_ptl_me_t *obj;
    onic_ptl_msg_t m;
    onic_ptl_large_desc_t large;
    onic_ptl_out_t out, done;
    uint8_t src[8];
    uint64_t before = drops(ONIC_PTL_DROP_NO_MATCH);

    memset(src, 'L', sizeof(src));

    /* The first post on a portal takes the public call's way (which makes
     * the list), the others the straight line, which marks the entry. */
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 6, 0, a, 4, opts, a, eq, &me, &hdr), PTL_OK);
    CHECK_EQ(PtlMEUnlink(me), PTL_OK);
    /* As posted: no PTL_MD_TRUNCATE, so a put longer than the buffer is
     * not taken, nor a get (puts only); one that fits is, and the entry
     * goes with it. */
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 7, 0, a, 4, opts, a, eq, &me, &hdr), PTL_OK);
    obj = onic_ptl_htab_get(&ni->mes, me);
    REQUIRE(obj != NULL);
    CHECK(obj->oneshot);
    put(1, 6, 7, 5, 'p');
    m = harness_req(ONIC_PTL_OP_GET, 6, 7, 2);
    feed(1, &m, NULL, 0);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), before + 2);
    CHECK_EQ(a[0], 0);
    put(1, 6, 7, 4, 'q');
    CHECK(a[0] == 'q' && a[3] == 'q' && a[4] == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.mlength, 4);
    CHECK_EQ(ni->pt[6].nlist, 0);

    /* Threshold 2 by PtlMDUpdate: two puts, one after the other in the
     * buffer, before the entry goes. */
    memset(a, 0, sizeof(a));
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 8, 0, a, 8, opts, a, eq, &me, &hdr), PTL_OK);
    obj = onic_ptl_htab_get(&ni->mes, me);
    REQUIRE(obj != NULL);
    CHECK(obj->oneshot);
    d = md_desc(a, 8, 2, opts, eq);
    CHECK_EQ(PtlMDUpdate(obj->md0.handle, NULL, &d, PTL_EQ_NONE), PTL_OK);
    put(1, 6, 8, 3, 'r');
    CHECK_EQ(ni->pt[6].nlist, 1);
    put(1, 6, 8, 3, 's');
    CHECK(a[0] == 'r' && a[2] == 'r' && a[3] == 's' && a[5] == 's' && a[6] == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.offset, 3);
    CHECK_EQ(ni->pt[6].nlist, 0);

    /* A second MD attached: the first put uses the posted one up, the
     * entry stays for the second, which lands in the attached MD. */
    memset(a, 0, sizeof(a));
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 9, 0, a, 8, opts, a, eq, &me, &hdr), PTL_OK);
    md_attach(me, md_desc(c, sizeof(c), 1, opts, eq), PTL_UNLINK);
    put(1, 6, 9, 2, 't');
    CHECK_EQ(a[0], 't');
    CHECK_EQ(ni->pt[6].nlist, 1);
    put(1, 6, 9, 2, 'u');
    CHECK(c[0] == 'u' && c[1] == 'u' && a[2] == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.md.start == c);
    CHECK_EQ(ni->pt[6].nlist, 0);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), before + 2);

    /* A large put takes the receive, which leaves the list at once but is
     * counted in it while its data is pulled: a small put meanwhile finds
     * no entry and is dropped, not written over the pull's bytes, and no
     * MD can be attached to it. */
    memset(a, 0, sizeof(a));
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 10, 0, a, 8, opts | PTL_MD_TRUNCATE, a, eq, &me,
                                &hdr), PTL_OK);
    memset(&large, 0, sizeof(large));
    large.key.addr = (uint64_t)(uintptr_t)src;
    large.key.len = sizeof(src);
    large.cookie = 77;
    m = harness_req(ONIC_PTL_OP_PUT, 6, 10, 8);
    m.flags = ONIC_PTL_FLAG_LARGE;
    out = feed(1, &m, &large, sizeof(large));
    CHECK(out.rma && out.rma_local == a && out.rma_len == 8);
    CHECK_EQ(ni->pt[6].nlist, 1);
    CHECK_EQ(onic_matcher_length(ni->pt[6].list), 0);
    {
        ptl_handle_md_t extra;
        ptl_handle_me_t next;
        CHECK_EQ(PtlMDAttach(me, md_desc(c, sizeof(c), 1, opts, eq), PTL_UNLINK, &extra),
                 PTL_ME_IN_USE);
        CHECK_EQ(PtlMEInsert(me, ME_ANY, 11, 0, PTL_UNLINK, PTL_INS_AFTER, &next),
                 PTL_ME_IN_USE);
    }
    put(1, 6, 10, 2, 'v');
    CHECK_EQ(a[0], 0);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), before + 3);
    memcpy(out.rma_local, src, out.rma_len);
    onic_ptl_target_rma_done(ni, out.rma_ctx, ONIC_OK, &done);
    CHECK_EQ(a[7], 'L');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_PUT_END && ev.mlength == 8 && ev.ni_fail_type == PTL_NI_OK);
    CHECK_EQ(ni->pt[6].nlist, 0);
}

/* --- placement (onic_ptl_target_place): matched at the header, data later --- */
static int place(uint32_t src, ptl_pt_index_t pt, ptl_match_bits_t bits, size_t len,
                 unsigned flags, ptl_handle_eq_t ack_eq, void **dest, size_t *room)
{
    onic_ptl_msg_t m = harness_req(ONIC_PTL_OP_PUT, pt, bits, len);
    onic_ptl_wire_t w;

    m.flags = flags;
    m.eq = ack_eq;
    m.hdr_data = 55;
    *dest = NULL;
    *room = 99;
    return onic_ptl_target_place(ni, src, &w, onic_ptl_msg_pack(&m, &w), len, dest, room);
}

/* A receive that onic_ptl_recv_post made is taken at the header: where the
 * data goes and how much of it, the entry out of the list and in use until
 * the end, then PUT_END with the put's fields, the entry gone and the ack
 * if due. Anything else -- no receive (unexpected), one that does not
 * take it, a general entry first, START events wanted -- is left as it
 * was (0), for the message to come whole. */
static void test_place(void)
{
    const unsigned opts = PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE |
                          PTL_MD_EVENT_UNLINK_DISABLE;
    uint8_t a[16] = {0}, b[8] = {0};
    ptl_handle_me_t me, gme;
    ptl_handle_md_t gmd;
    ptl_handle_eq_t eq;
    ptl_ovf_header_t hdr;
    ptl_event_t ev;
    onic_ptl_out_t out;
    onic_ptl_msg_t ack;
    void *dest;
    size_t room;
    uint64_t malformed;

    open_ni();
    eq = eq_alloc(16);
    /* The first post on a portal makes its list (the public call's way);
     * the others are the straight line's one-shot receives. */
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 1, 0, a, 4, opts, a, eq, &me, &hdr), PTL_OK);
    CHECK_EQ(PtlMEUnlink(me), PTL_OK);
    /* Nothing posted: an unexpected message, not placed. */
    CHECK_EQ(place(1, 6, 20, 12, 0, PTL_EQ_NONE, &dest, &room), 0);

    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 20, 0, a, sizeof(a), opts, a, eq, &me, &hdr),
             PTL_OK);
    CHECK_EQ(place(1, 6, 20, 12, 0, PTL_EQ_NONE, &dest, &room), 1);
    CHECK(dest == a && room == 12);
    /* Out of the list, but counted in it until it ends. */
    CHECK_EQ(onic_matcher_length(ni->pt[6].list), 0);
    CHECK_EQ(ni->pt[6].nlist, 1);
    CHECK_EQ(PtlMEUnlink(me), PTL_ME_IN_USE); /* its data is still coming */
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    /* One at a time from a sender. */
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 21, 0, b, sizeof(b), opts, b, eq, &gme, &hdr),
             PTL_OK);
    CHECK_EQ(place(1, 6, 21, 4, 0, PTL_EQ_NONE, &dest, &room), 0);
    CHECK_EQ(onic_matcher_length(ni->pt[6].list), 1);
    memset(a, 'p', 12);
    onic_ptl_target_placed(ni, 1, &out);
    CHECK(!out.send && !out.rma && !out.dereg);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK(ev.initiator.pid == 1 && ev.pt_index == 6 && ev.match_bits == 20);
    CHECK(ev.rlength == 12 && ev.mlength == 12 && ev.offset == 0 && ev.hdr_data == 55);
    CHECK(ev.md.start == a && ev.md.user_ptr == a && ev.ni_fail_type == PTL_NI_OK);
    CHECK(onic_ptl_htab_get(&ni->mes, me) == NULL); /* used up: gone */
    CHECK_EQ(PtlMEUnlink(gme), PTL_OK);

    /* A receive shorter than the message takes what fits (TRUNCATE). */
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 22, 0, b, sizeof(b), opts, b, eq, &me, &hdr),
             PTL_OK);
    CHECK_EQ(place(2, 6, 22, 12, 0, PTL_EQ_NONE, &dest, &room), 1);
    CHECK(dest == b && room == sizeof(b));
    onic_ptl_target_placed(ni, 2, &out);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK(ev.rlength == 12 && ev.mlength == sizeof(b));
    /* Without TRUNCATE it does not take it, and the search finds none. */
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 23, 0, b, sizeof(b), opts & ~PTL_MD_TRUNCATE, b,
                                eq, &me, &hdr), PTL_OK);
    CHECK_EQ(place(2, 6, 23, 12, 0, PTL_EQ_NONE, &dest, &room), 0);
    CHECK_EQ(ni->pt[6].nlist, 1);
    CHECK_EQ(PtlMEUnlink(me), PTL_OK);

    /* A general entry that takes it comes first: nothing taken, nothing
     * changed (its MD not counted), and the receive behind it stays. */
    gme = me_attach(6, ME_ANY, 24, 0, PTL_UNLINK, PTL_INS_AFTER);
    gmd = md_attach(gme, md_desc(b, sizeof(b), 1, opts, eq), PTL_UNLINK);
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 24, 0, a, sizeof(a), opts, a, eq, &me, &hdr),
             PTL_OK);
    CHECK_EQ(place(3, 6, 24, 4, 0, PTL_EQ_NONE, &dest, &room), 0);
    CHECK_EQ(ni->pt[6].nlist, 2);
    CHECK_EQ(PtlMDUnlink(gmd), PTL_OK); /* and its entry with it */
    /* START wanted: not placed either. */
    CHECK_EQ(PtlMEUnlink(me), PTL_OK);
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 25, 0, a, sizeof(a),
                                opts & ~PTL_MD_EVENT_START_DISABLE, a, eq, &me, &hdr), PTL_OK);
    CHECK_EQ(place(3, 6, 25, 4, 0, PTL_EQ_NONE, &dest, &room), 0);
    CHECK_EQ(PtlMEUnlink(me), PTL_OK);
    CHECK_EQ(ni->pt[6].nlist, 0);

    /* With an ack asked for: the ack at the end, with the put's lengths. */
    CHECK_EQ(onic_ptl_recv_post(nih, 6, ME_ANY, 26, 0, a, sizeof(a), opts, a, eq, &me, &hdr),
             PTL_OK);
    CHECK_EQ(place(4, 6, 26, 10, ONIC_PTL_FLAG_ACK, 0x777, &dest, &room), 1);
    onic_ptl_target_placed(ni, 4, &out);
    CHECK(out.send && out.dest == 4);
    CHECK_EQ(onic_ptl_msg_unpack(&out.hdr, out.hdr_len, &ack), ONIC_OK);
    CHECK(ack.op == ONIC_PTL_OP_ACK && ack.mlength == 10 && ack.rlength == 10 && ack.eq == 0x777);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);

    /* An end with no put placed is a counted drop. */
    malformed = drops(ONIC_PTL_DROP_MALFORMED);
    onic_ptl_target_placed(ni, 4, &out);
    onic_ptl_target_placed(ni, 99, &out);
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), malformed + 2);
    CHECK(!out.send);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    close_ni();
}

/* The internal post behaves as PtlMEAttachSearch of the same receive: on
 * a portal whose list does not exist yet (the public call's way, which
 * makes it) and on one whose list does (its own straight line); an
 * unexpected header is taken, not posted over; the entry is one-shot, its
 * MD unlinked with it, its PUT_END the only event, with the MD's fields;
 * and where a limit is reached, the public call's code. */
static void test_recv_post(void)
{
    const unsigned opts = PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE |
                          PTL_MD_EVENT_UNLINK_DISABLE;
    uint8_t a[8] = {0}, b[4] = {0}, ovf[16] = {0};
    ptl_handle_me_t me, me2, me3, ome;
    ptl_handle_eq_t eq;
    ptl_ovf_header_t hdr;
    ptl_event_t ev;
    ptl_ni_limits_t lim;
    onic_ptl_msg_t m;
    uint64_t before;

    open_ni();
    eq = eq_alloc(16);
    CHECK(ni->pt[5].list == NULL);
    CHECK_EQ(onic_ptl_recv_post(nih, 5, ME_ANY, 11, 0, a, sizeof(a), opts, a, eq, &me, &hdr),
             PTL_OK);
    CHECK(ni->pt[5].list != NULL);
    CHECK_EQ(onic_ptl_recv_post(nih, 5, ((ptl_process_id_t){0, 2}), 12, 0xf0, b, sizeof(b),
                                opts, b, eq, &me2, &hdr), PTL_OK);
    CHECK_EQ(ni->pt[5].nlist, 2);
    /* Its straight line is taken where its assumptions hold: it checks
     * nothing its caller checked, so a match_id of no process of the job
     * (which the public call refuses) is posted as given. */
    CHECK_EQ(onic_ptl_recv_post(nih, 5, ((ptl_process_id_t){0, 99}), 13, 0, b, sizeof(b), opts,
                                b, eq, &me3, &hdr), PTL_OK);
    CHECK_EQ(ni->pt[5].nlist, 3);
    CHECK_EQ(PtlMEUnlink(me3), PTL_OK);
    CHECK_EQ(ni->pt[5].nlist, 2);
    /* 12 from rank 1: not this entry's sender, and no other takes it. */
    before = drops(ONIC_PTL_DROP_NO_MATCH);
    put(1, 5, 12, 4, 'x');
    CHECK_EQ(b[0], 0);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), before + 1);
    /* 0x1c from rank 2 (bits under the ignore mask differ): taken, and
     * truncated to the MD's 4 bytes. */
    put(2, 5, 0x1c, 6, 'y');
    CHECK(b[0] == 'y' && b[3] == 'y');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.initiator.pid, 2);
    CHECK_EQ(ev.match_bits, 0x1c);
    CHECK_EQ(ev.rlength, 6);
    CHECK_EQ(ev.mlength, 4);
    CHECK(ev.md.start == b && ev.md.length == sizeof(b) && ev.md.user_ptr == b);
    CHECK_EQ(ev.md.threshold, 0);
    CHECK_EQ(ev.md.options, opts);
    CHECK(ev.md.eq_handle == eq);
    CHECK_EQ(next_event(eq, &ev), PTL_EQ_EMPTY);   /* no UNLINK, no START */
    CHECK_EQ(PtlMEUnlink(me2), PTL_ME_INVALID);    /* used up: gone with its MD */
    CHECK_EQ(ni->pt[5].nlist, 1);
    put(3, 5, 11, 8, 'z');
    CHECK_EQ(a[7], 'z');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.md.user_ptr == a);
    CHECK_EQ(ni->pt[5].nlist, 0);
    /* An unexpected header is taken instead of posting. */
    CHECK_EQ(PtlMEAttachOverflow(nih, 5, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_RETAIN,
                                 PTL_INS_AFTER, &ome), PTL_OK);
    md_attach(ome, md_desc(ovf, sizeof(ovf), PTL_MD_THRESH_INF, PTL_MD_OP_PUT, PTL_EQ_NONE),
              PTL_RETAIN);
    m = harness_req(ONIC_PTL_OP_PUT, 5, 40, 4);
    m.hdr_data = 400;
    feed(4, &m, "uvwx", 4);
    CHECK_EQ(onic_ptl_recv_post(nih, 5, ME_ANY, 40, 0, a, sizeof(a), opts, a, eq, &me, &hdr),
             PTL_OVF_MATCHED);
    CHECK_EQ(hdr.hdr_data, 400);
    CHECK_EQ(hdr.initiator.pid, 4);
    CHECK_EQ(ni->pt[5].nlist, 0);
    recv_post_changed(eq);
    close_ni();

    /* Limits: one entry in a list, then one MD; the second post gets the
     * public call's code and changes nothing. */
    for (int k = 0; k < 2; k++) {
        memset(&lim, 0, sizeof(lim));
        lim.max_mes = lim.max_mds = lim.max_eqs = lim.max_me_list = 1000;
        lim.max_pt_index = 7;
        lim.max_ac_index = 3;
        lim.max_md_iovecs = 1;
        if (k == 0)
            lim.max_me_list = 1;
        else
            lim.max_mds = 1;
        ni = harness_open(0, 8, engine, &lim, &nih);
        REQUIRE(ni != NULL);
        eq = eq_alloc(4);
        CHECK_EQ(onic_ptl_recv_post(nih, 5, ME_ANY, 1, 0, a, 1, opts, a, eq, &me, &hdr), PTL_OK);
        CHECK_EQ(onic_ptl_recv_post(nih, 5, ME_ANY, 2, 0, a, 1, opts, a, eq, &me2, &hdr),
                 k == 0 ? PTL_ME_LIST_TOO_LONG : PTL_NO_SPACE);
        CHECK_EQ(ni->pt[5].nlist, 1);
        close_ni();
    }
}

/* Unexpected puts into an overflow entry whose MD records END alone (the
 * MPI layer's eager buffers): the put's straight line keeps the header,
 * then moves the data and writes the one event, every field of both
 * right. With no memory for the header the put is a clean drop: one
 * NO_MEMORY, no event, nothing moved, the MD's offset where it was. */
static void test_overflow_end_only(void)
{
    uint8_t ovf[32];
    ptl_handle_me_t ome, me;
    ptl_handle_md_t omd, md;
    ptl_handle_eq_t eq;
    ptl_ovf_header_t hdr;
    ptl_event_t ev;
    onic_ptl_msg_t m;
    uint8_t later[8] = {0};
    ptl_md_t desc = md_desc(later, 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE), od;
    uint64_t before;

    open_ni();
    eq = eq_alloc(16);
    memset(ovf, 0, sizeof(ovf));
    od = md_desc(ovf, sizeof(ovf), PTL_MD_THRESH_INF,
                 PTL_MD_OP_PUT | PTL_MD_MAX_SIZE | PTL_MD_EVENT_START_DISABLE, eq);
    od.max_size = 8;
    od.user_ptr = ovf;
    CHECK_EQ(PtlMEAttachOverflow(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_RETAIN,
                                 PTL_INS_AFTER, &ome), PTL_OK);
    omd = md_attach(ome, od, PTL_RETAIN);
    /* The first header kept needs memory (a new NI has none put by for
     * kept headers): none, and the put is dropped with nothing changed. */
    before = drops(ONIC_PTL_DROP_NO_MEMORY);
    m = harness_req(ONIC_PTL_OP_PUT, 3, 0x78, 4);
    onic_mem_fail_after(0);
    feed(5, &m, "wxyz", 4);
    onic_mem_fail_after(-1);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MEMORY), before + 1);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    CHECK_EQ(ovf[0], 0);
    /* Memory again: kept, moved to the MD's offset 0 (it did not move for
     * the drop), its one event with every field. */
    m = harness_req(ONIC_PTL_OP_PUT, 3, 0x77, 6);
    m.hdr_data = 0x5566;
    feed(4, &m, "abcdef", 6);
    CHECK(memcmp(ovf, "abcdef", 6) == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.initiator.pid, 4);
    CHECK_EQ(ev.pt_index, 3);
    CHECK_EQ(ev.match_bits, 0x77);
    CHECK_EQ(ev.rlength, 6);
    CHECK_EQ(ev.mlength, 6);
    CHECK_EQ(ev.offset, 0);
    CHECK_EQ(ev.hdr_data, 0x5566);
    CHECK(ev.md_handle == omd && ev.md.user_ptr == ovf && ev.ni_fail_type == PTL_NI_OK);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    m = harness_req(ONIC_PTL_OP_PUT, 3, 0x79, 2);
    feed(5, &m, "QR", 2);
    CHECK(ovf[6] == 'Q' && ovf[7] == 'R');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.offset == 6 && ev.match_bits == 0x79 && ev.initiator.pid == 5);
    /* The headers were kept with every field, in order. */
    CHECK_EQ(PtlMEAttachSearch(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
                               PTL_INS_AFTER, desc, PTL_UNLINK, &me, &md, &hdr), PTL_OVF_MATCHED);
    CHECK_EQ(hdr.initiator.pid, 4);
    CHECK_EQ(hdr.pt_index, 3);
    CHECK_EQ(hdr.match_bits, 0x77);
    CHECK_EQ(hdr.rlength, 6);
    CHECK_EQ(hdr.mlength, 6);
    CHECK_EQ(hdr.offset, 0);
    CHECK_EQ(hdr.hdr_data, 0x5566);
    CHECK(hdr.start == ovf && hdr.md_handle == omd);
    CHECK_EQ(PtlMEAttachSearch(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
                               PTL_INS_AFTER, desc, PTL_UNLINK, &me, &md, &hdr), PTL_OVF_MATCHED);
    CHECK(hdr.match_bits == 0x79 && hdr.start == ovf + 6 && hdr.mlength == 2);
    CHECK_EQ(PtlMEAttachSearch(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
                               PTL_INS_AFTER, desc, PTL_UNLINK, &me, &md, &hdr), PTL_OK);
    close_ni();
}

/* A handle names its object until the object is freed, however many are
 * made after it: tables that grow keep every object (100 MDs, 100 entries
 * with their MDs, 40 event queues, each used after all are made). */
static void test_many_handles(void)
{
    enum { N = 100, NEQ = 40 };
    static ptl_handle_md_t bound[N], attached[N];
    static ptl_handle_me_t mes[N];
    static ptl_handle_eq_t eqs[NEQ];
    uint8_t buf[N];
    ptl_event_t ev;

    open_ni();
    memset(buf, 0, sizeof(buf));
    for (int i = 0; i < NEQ; i++)
        eqs[i] = eq_alloc(2);
    for (int i = 0; i < N; i++) {
        mes[i] = me_attach(1, ME_ANY, (ptl_match_bits_t)i, 0, PTL_RETAIN, PTL_INS_AFTER);
        attached[i] = md_attach(mes[i], md_desc(buf + i, 1, 1, PTL_MD_OP_PUT, eqs[i % NEQ]),
                                PTL_RETAIN);
        REQUIRE(PtlMDBind(nih, md_desc(buf, 1, 1, 0, PTL_EQ_NONE), PTL_RETAIN, &bound[i]) ==
                PTL_OK);
    }
    /* The first of each kind still works: a put to entry 0 lands, its
     * event is in queue 0. */
    put(1, 1, 0, 1, 'a');
    CHECK_EQ(buf[0], 'a');
    CHECK_EQ(PtlEQGet(eqs[0], &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(PtlMDUnlink(bound[i]), PTL_OK);
        CHECK_EQ(PtlMDUnlink(attached[i]), PTL_OK);
        CHECK_EQ(PtlMEUnlink(mes[i]), PTL_OK);
    }
    for (int i = 0; i < NEQ; i++)
        CHECK_EQ(PtlEQFree(eqs[i]), PTL_OK);
    close_ni();
}

static void test_handles(void)
{
    ptl_handle_eq_t eq;
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    ptl_handle_ni_t h2;
    uint8_t buf[4];

    open_ni();
    eq = eq_alloc(4);
    me = me_attach(1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER);
    md = md_attach(me, md_desc(buf, 4, 1, PTL_MD_OP_PUT, eq), PTL_RETAIN);
    CHECK_EQ(PtlNIHandle(md, &h2), PTL_OK);
    CHECK(h2 == nih);
    CHECK_EQ(PtlNIHandle(eq, &h2), PTL_OK);
    CHECK_EQ(PtlNIHandle(me, &h2), PTL_OK);
    /* A handle of one kind is invalid as another. */
    CHECK_EQ(PtlMDUnlink(me), PTL_MD_INVALID);
    CHECK_EQ(PtlMEUnlink(md), PTL_ME_INVALID);
    CHECK_EQ(PtlEQFree(md), PTL_EQ_INVALID);
    /* A freed slot reused: the old handle stays dead. */
    CHECK_EQ(PtlMDUnlink(md), PTL_OK);
    {
        ptl_handle_md_t md2 = md_attach(me, md_desc(buf, 4, 1, PTL_MD_OP_PUT, eq), PTL_RETAIN);
        CHECK((md2 & 0xffffff) == (md & 0xffffff));
        CHECK(md2 != md);
        CHECK_EQ(PtlMDUnlink(md), PTL_MD_INVALID);
        CHECK_EQ(PtlNIHandle(md, &h2), PTL_HANDLE_INVALID);
    }
    close_ni();
    /* A new NI: the old one's handles name nothing. */
    open_ni();
    CHECK_EQ(PtlEQFree(eq), PTL_EQ_INVALID);
    CHECK_EQ(PtlMEUnlink(me), PTL_ME_INVALID);
    CHECK_EQ(PtlNIFini(h2), PTL_NI_INVALID);
    close_ni();
}

/* The table behind every handle: a freed slot's next handle has the next
 * generation and the same kind, epoch and index; after the last
 * generation it wraps to 0 within its own bits (the slot is set to its
 * last generation here, as 2^27 - 1 reuses would leave it); a handle of
 * another kind, epoch or generation at the same index is refused. */
static void test_handle_generations(void)
{
    enum { KIND = ONIC_PTL_KIND_ME, EPOCH = 0xa5 };
    onic_ptl_htab_t t;
    int a, b, c;
    uint64_t h0, h1, hlast, hwrap;
    uint32_t index;

    onic_ptl_htab_init(&t, KIND, EPOCH, 4);
    REQUIRE(onic_ptl_htab_add(&t, &a, &h0) == ONIC_OK);
    index = (uint32_t)(h0 & 0xffffff);
    CHECK(onic_ptl_htab_get(&t, h0) == &a);
    CHECK_EQ(onic_ptl_handle_kind(h0), KIND);
    CHECK_EQ(h0 >> 52 & 0xff, EPOCH);
    CHECK_EQ(h0 >> 24 & 0xfffffff, 0);
    /* Another kind, another epoch: the same index names nothing. */
    CHECK(onic_ptl_htab_get(&t, (h0 & ~(UINT64_C(0xf) << 60)) |
                                    (uint64_t)ONIC_PTL_KIND_EQ << 60) == NULL);
    CHECK(onic_ptl_htab_get(&t, h0 ^ UINT64_C(1) << 52) == NULL);
    CHECK(onic_ptl_htab_get(&t, h0 + (UINT64_C(1) << 24)) == NULL); /* a generation ahead */
    onic_ptl_htab_del_live(&t, h0);
    CHECK(onic_ptl_htab_get(&t, h0) == NULL);
    /* The handle the free slot gives next names nothing until then. */
    CHECK(onic_ptl_htab_get(&t, h0 + (UINT64_C(1) << 24)) == NULL);
    REQUIRE(onic_ptl_htab_add(&t, &b, &h1) == ONIC_OK);
    CHECK_EQ(h1 & 0xffffff, index);
    CHECK_EQ(h1 >> 24 & 0xfffffff, 1);
    CHECK(h1 >> 52 == h0 >> 52);
    CHECK(onic_ptl_htab_get(&t, h1) == &b);
    CHECK(onic_ptl_htab_get(&t, h0) == NULL);
    onic_ptl_htab_del_live(&t, h1);
    /* The slot at its last generation. */
    t.hnd[index] = onic_ptl_handle_make(KIND, EPOCH, ONIC_PTL_GEN_MASK, index);
    REQUIRE(onic_ptl_htab_add(&t, &c, &hlast) == ONIC_OK);
    CHECK_EQ(hlast >> 24 & 0xfffffff, ONIC_PTL_GEN_MASK);
    CHECK(onic_ptl_htab_get(&t, hlast) == &c);
    onic_ptl_htab_del_live(&t, hlast);
    REQUIRE(onic_ptl_htab_add(&t, &a, &hwrap) == ONIC_OK);
    CHECK_EQ(hwrap >> 24 & 0xfffffff, 0);
    CHECK_EQ(onic_ptl_handle_kind(hwrap), KIND);
    CHECK_EQ(hwrap >> 52 & 0xff, EPOCH);
    CHECK_EQ(hwrap & 0xffffff, index);
    CHECK(onic_ptl_htab_get(&t, hwrap) == &a);
    CHECK(onic_ptl_htab_get(&t, hlast) == NULL);
    CHECK_EQ(t.live, 1);
    onic_ptl_htab_fini(&t);
}

/* --- an entry's own MD ------------------------------------------------------------------- *
 * The first MD of a match entry -- attached by PtlMDAttach, or made with the
 * entry by PtlMEAttachSearch -- is an MD like any other: the same
 * acceptance, threshold, unlink, update, handle and limit rules, through
 * the public calls only. Each rule runs for both ways of making it. */
enum { OWN_BY_ATTACH, OWN_BY_SEARCH, OWN_WAYS };
static const char *const own_way_name[OWN_WAYS] = {"PtlMEAttach + PtlMDAttach",
                                                   "PtlMEAttachSearch"};

static void own_entry(int way, ptl_pt_index_t pt, ptl_process_id_t id, ptl_match_bits_t bits,
                      ptl_unlink_t me_unlink, ptl_md_t desc, ptl_unlink_t md_unlink,
                      ptl_handle_me_t *me_p, ptl_handle_md_t *md_p)
{
    ptl_ovf_header_t hdr;

    *me_p = *md_p = PTL_INVALID_HANDLE;
    if (way == OWN_BY_ATTACH) {
        *me_p = me_attach(pt, id, bits, 0, me_unlink, PTL_INS_AFTER);
        *md_p = md_attach(*me_p, desc, md_unlink);
    } else {
        REQUIRE(PtlMEAttachSearch(nih, pt, id, bits, 0, me_unlink, PTL_INS_AFTER, desc, md_unlink,
                                  me_p, md_p, &hdr) == PTL_OK);
    }
}

/* The public count of dropped messages. */
static ptl_sr_value_t drop_count(void)
{
    ptl_sr_value_t v = -1;

    REQUIRE(PtlNIStatus(nih, PTL_SR_DROP_COUNT, &v) == PTL_OK);
    return v;
}

static int eq_empty(ptl_handle_eq_t eq)
{
    ptl_event_t ev;

    return PtlEQGet(eq, &ev) == PTL_EQ_EMPTY;
}

/* Every call that takes an MD or ME handle refuses a dead one. Some of
 * them log each refusal: those are asked with the first engine only (handles
 * do not depend on the engine), so a passing run's output stays short. */
static int own_all_calls;

static void own_md_dead(ptl_handle_md_t md)
{
    ptl_handle_ni_t h;
    ptl_md_t old, neu = md_desc(NULL, 0, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);

    CHECK_EQ(PtlMDUnlink(md), PTL_MD_INVALID);
    CHECK_EQ(PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE), PTL_MD_INVALID);
    CHECK_EQ(PtlMDUpdate(md, NULL, &neu, PTL_EQ_NONE), PTL_MD_INVALID);
    if (!own_all_calls)
        return;
    CHECK_EQ(PtlNIHandle(md, &h), PTL_HANDLE_INVALID);
    CHECK_EQ(PtlPut(md, PTL_NOACK_REQ, ((ptl_process_id_t){0, 1}), 1, 0, 1, 0, 0),
             PTL_MD_INVALID);
}

static void own_me_dead(ptl_handle_me_t me)
{
    ptl_handle_ni_t h;
    ptl_handle_me_t me2;
    ptl_handle_md_t md2;

    CHECK_EQ(PtlMEUnlink(me), PTL_ME_INVALID);
    if (!own_all_calls)
        return;
    CHECK_EQ(PtlNIHandle(me, &h), PTL_HANDLE_INVALID);
    CHECK_EQ(PtlMDAttach(me, md_desc(NULL, 0, 1, PTL_MD_OP_PUT, PTL_EQ_NONE), PTL_RETAIN, &md2),
             PTL_ME_INVALID);
    CHECK_EQ(PtlMEInsert(me, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER, &me2), PTL_ME_INVALID);
}

static void own_alive(ptl_handle_any_t h)
{
    ptl_handle_ni_t n = PTL_INVALID_HANDLE;

    CHECK_EQ(PtlNIHandle(h, &n), PTL_OK);
    CHECK(n == nih);
}

/* PTL_MD_TRUNCATE cuts mlength and keeps rlength; without it, a put too
 * long for the entry's MD is not taken (a counted drop, nothing written). */
static void test_own_md_truncate(int way)
{
    uint8_t buf[8], exact[8];
    ptl_handle_me_t me, me2;
    ptl_handle_md_t md, md2;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    onic_ptl_msg_t m;
    uint8_t data[16];

    open_ni();
    eq = eq_alloc(32);
    memset(buf, '.', sizeof(buf));
    memset(exact, '.', sizeof(exact));
    own_entry(way, 1, ME_ANY, 1, PTL_RETAIN,
              md_desc(buf, 4, PTL_MD_THRESH_INF,
                      PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_MANAGE_REMOTE, eq),
              PTL_RETAIN, &me, &md);
    own_alive(md);
    own_alive(me);
    put(3, 1, 1, 10, 'a');
    CHECK(memcmp(buf, "aaaa....", 8) == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.rlength, 10);
    CHECK_EQ(ev.mlength, 4);
    CHECK_EQ(ev.offset, 0);
    CHECK(ev.md_handle == md);
    CHECK_EQ(ev.initiator.pid, 3);
    CHECK(ev.md.start == buf && ev.md.length == 4);
    /* At remote offset 3, one byte is left. */
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 10);
    m.offset = 3;
    memset(data, 'b', sizeof(data));
    feed(2, &m, data, 10);
    CHECK(memcmp(buf, "aaab....", 8) == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.rlength, 10);
    CHECK_EQ(ev.mlength, 1);
    CHECK_EQ(ev.offset, 3);
    /* No truncation: 5 bytes do not fit 4, 4 do. */
    own_entry(way, 1, ME_ANY, 2, PTL_RETAIN, md_desc(exact, 4, PTL_MD_THRESH_INF, PTL_MD_OP_PUT, eq),
              PTL_RETAIN, &me2, &md2);
    put(3, 1, 2, 5, 'c');
    CHECK_EQ(drop_count(), 1);
    CHECK(memcmp(exact, "........", 8) == 0);
    CHECK(eq_empty(eq));
    put(3, 1, 2, 4, 'd');
    CHECK(memcmp(exact, "dddd....", 8) == 0);
    CHECK_EQ(drop_count(), 1);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK(ev.md_handle == md2);
    CHECK_EQ(ev.mlength, 4);
    close_ni();
}

/* The threshold counts down with each operation; used up, an MD with
 * PTL_UNLINK goes (UNLINK event) and takes a PTL_UNLINK entry with it, one
 * with PTL_RETAIN stays and takes nothing until updated. */
static void test_own_md_threshold(int way)
{
    uint8_t buf[64] = {0}, buf2[64] = {0};
    ptl_handle_me_t me;
    ptl_handle_md_t md, md2;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    ptl_md_t old, neu;
    int unlinks;

    /* Entry and MD with PTL_UNLINK, threshold 3. */
    open_ni();
    eq = eq_alloc(64);
    own_entry(way, 1, ME_ANY, 1, PTL_UNLINK,
              md_desc(buf, 64, 3, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq), PTL_UNLINK, &me,
              &md);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE), PTL_OK);
        CHECK_EQ(old.threshold, 3 - i);
        put(1, 1, 1, 2, (uint8_t)('a' + i));
        CHECK_EQ(next_event(eq, &ev), PTL_OK);
        CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
        CHECK_EQ(ev.md.threshold, 2 - i);
        CHECK_EQ(ev.offset, 2u * i);
        CHECK(ev.md_handle == md);
    }
    CHECK(memcmp(buf, "aabbcc", 6) == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    CHECK(ev.md_handle == md);
    CHECK(eq_empty(eq));
    own_md_dead(md);
    own_me_dead(me);
    put(1, 1, 1, 2, 'x');
    CHECK_EQ(drop_count(), 1);
    CHECK_EQ(buf[6], 0);
    CHECK(eq_empty(eq));
    close_ni();

    /* A PTL_RETAIN entry outlives its used-up PTL_UNLINK MD and takes a new one. */
    open_ni();
    eq = eq_alloc(64);
    own_entry(way, 1, ME_ANY, 1, PTL_RETAIN,
              md_desc(buf, 64, 2, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq), PTL_UNLINK, &me,
              &md);
    put(1, 1, 1, 1, 'a');
    put(1, 1, 1, 1, 'b');
    unlinks = 0;
    while (next_event(eq, &ev) == PTL_OK)
        unlinks += ev.type == PTL_EVENT_UNLINK && ev.md_handle == md;
    CHECK_EQ(unlinks, 1);
    own_md_dead(md);
    own_alive(me);
    put(1, 1, 1, 1, 'c');
    CHECK_EQ(drop_count(), 1);
    md2 = md_attach(me, md_desc(buf2, 64, 1, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq),
                    PTL_UNLINK);
    CHECK(md2 != md);
    own_md_dead(md);
    own_alive(md2);
    put(1, 1, 1, 1, 'd');
    CHECK_EQ(buf2[0], 'd');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK(ev.md_handle == md2);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    own_md_dead(md2);
    CHECK_EQ(PtlMEUnlink(me), PTL_OK);
    own_me_dead(me);
    close_ni();

    /* A PTL_RETAIN MD stays at threshold 0, takes nothing, posts no UNLINK;
     * updated, it takes again; unlinked by hand, its PTL_UNLINK entry goes. */
    open_ni();
    eq = eq_alloc(64);
    memset(buf, 0, sizeof(buf));
    own_entry(way, 1, ME_ANY, 1, PTL_UNLINK,
              md_desc(buf, 64, 1, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq), PTL_RETAIN, &me,
              &md);
    put(1, 1, 1, 1, 'a');
    put(1, 1, 1, 1, 'b');
    CHECK_EQ(buf[0], 'a');
    CHECK_EQ(buf[1], 0);
    CHECK_EQ(drop_count(), 1);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK_EQ(ev.md.threshold, 0);
    CHECK(eq_empty(eq));
    own_alive(md);
    own_alive(me);
    CHECK_EQ(PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE), PTL_OK);
    CHECK_EQ(old.threshold, 0);
    neu = md_desc(buf, 64, 2, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq);
    CHECK_EQ(PtlMDUpdate(md, NULL, &neu, eq), PTL_OK);
    put(1, 1, 1, 1, 'c');
    put(1, 1, 1, 1, 'd');
    put(1, 1, 1, 1, 'e');
    CHECK(memcmp(buf, "cd", 2) == 0); /* the update restarted the local offset */
    CHECK_EQ(buf[2], 0);
    CHECK_EQ(drop_count(), 2);
    CHECK_EQ(PtlMDUnlink(md), PTL_OK);
    own_md_dead(md);
    own_me_dead(me);
    close_ni();
}

/* PtlMDUnlink of the entry's MD by its handle, and a second MD attached to
 * the same entry: PtlMDAttach appends, only the first MD is considered, and
 * when the first goes the second (its handle unchanged) takes the next put. */
static void test_own_md_second(int way)
{
    uint8_t first[8] = {0}, second[64] = {0}, later[64] = {0};
    ptl_handle_me_t me, me2;
    ptl_handle_md_t md1, md2, md3;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    ptl_md_t old;

    /* Unlinked by hand: the entry stays while an MD is left. */
    open_ni();
    eq = eq_alloc(64);
    own_entry(way, 1, ME_ANY, 1, PTL_UNLINK,
              md_desc(first, 8, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq),
              PTL_UNLINK, &me, &md1);
    md2 = md_attach(me, md_desc(second, 64, PTL_MD_THRESH_INF,
                                PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq), PTL_UNLINK);
    CHECK(md2 != md1);
    own_alive(md1);
    own_alive(md2);
    put(1, 1, 1, 4, 'a');
    put(1, 1, 1, 4, 'b');
    CHECK(memcmp(first, "aaaabbbb", 8) == 0);
    CHECK_EQ(second[0], 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.md_handle == md1);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.md_handle == md1);
    /* first is full (8 of 8): the next put does not fit it, and the
     * second MD is not considered while the first is there. */
    put(1, 1, 1, 4, 'c');
    CHECK_EQ(drop_count(), 1);
    CHECK_EQ(second[0], 0);
    CHECK_EQ(PtlMDUnlink(md1), PTL_OK);
    CHECK(eq_empty(eq)); /* no UNLINK event for an explicit unlink */
    own_md_dead(md1);
    own_alive(me);
    own_alive(md2);
    put(1, 1, 1, 4, 'd');
    CHECK(memcmp(second, "dddd", 4) == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
    CHECK(ev.md_handle == md2);
    CHECK(ev.md.start == second);
    CHECK_EQ(PtlMDUpdate(md2, &old, NULL, PTL_EQ_NONE), PTL_OK);
    CHECK(old.start == second && old.length == 64);
    /* The last MD unlinked by hand takes its PTL_UNLINK entry with it. */
    CHECK_EQ(PtlMDUnlink(md2), PTL_OK);
    own_md_dead(md2);
    own_me_dead(me);
    put(1, 1, 1, 4, 'e');
    CHECK_EQ(drop_count(), 2);
    close_ni();

    /* Used up by threshold: a first MD that rejects a put (too long) passes
     * it to the next ENTRY, not to its own second MD; once the first is
     * used up and gone, the second takes the next put; then the entry goes
     * with its last MD. */
    open_ni();
    eq = eq_alloc(64);
    memset(first, 0, sizeof(first));
    memset(second, 0, sizeof(second));
    own_entry(way, 1, ME_ANY, 1, PTL_UNLINK,
              md_desc(first, 4, 1, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq), PTL_UNLINK, &me,
              &md1);
    md2 = md_attach(me, md_desc(second, 64, 1, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq),
                    PTL_UNLINK);
    own_entry(way, 1, ME_ANY, 1, PTL_RETAIN,
              md_desc(later, 64, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq),
              PTL_RETAIN, &me2, &md3);
    put(1, 1, 1, 10, 'a'); /* too long for first: the next entry takes it */
    CHECK_EQ(first[0], 0);
    CHECK_EQ(second[0], 0);
    CHECK_EQ(later[0], 'a');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.md_handle == md3);
    put(1, 1, 1, 4, 'b'); /* first takes it and is used up */
    CHECK_EQ(first[0], 'b');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_PUT_END && ev.md_handle == md1);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_UNLINK && ev.md_handle == md1);
    own_md_dead(md1);
    own_alive(me);
    put(1, 1, 1, 10, 'c'); /* now second, before the next entry */
    CHECK_EQ(second[9], 'c');
    CHECK_EQ(later[10], 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_PUT_END && ev.md_handle == md2);
    CHECK_EQ(ev.mlength, 10);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_UNLINK && ev.md_handle == md2);
    own_md_dead(md2);
    own_me_dead(me);
    put(1, 1, 1, 1, 'd');
    CHECK_EQ(later[10], 'd');
    CHECK_EQ(drop_count(), 0);
    /* PtlMEUnlink takes every MD of the entry with it. */
    md2 = md_attach(me2, md_desc(second, 64, 1, PTL_MD_OP_PUT, eq), PTL_UNLINK);
    CHECK_EQ(PtlMEUnlink(me2), PTL_OK);
    own_me_dead(me2);
    own_md_dead(md3);
    own_md_dead(md2);
    close_ni();
}

/* PtlMDUpdate through the entry's MD handle: the old state comes back, the
 * new one is what the next put sees; a conditional update waits for an
 * empty queue. */
static void test_own_md_update(int way)
{
    uint8_t a[8], b[16];
    int marker_a, marker_b;
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    ptl_md_t desc, old, neu;

    open_ni();
    eq = eq_alloc(16);
    memset(a, '.', sizeof(a));
    memset(b, '.', sizeof(b));
    desc = md_desc(a, 8, 5, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, eq);
    desc.user_ptr = &marker_a;
    own_entry(way, 1, ME_ANY, 1, PTL_RETAIN, desc, PTL_RETAIN, &me, &md);
    put(1, 1, 1, 2, 'a');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.md.user_ptr == &marker_a);
    CHECK_EQ(PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE), PTL_OK);
    CHECK(old.start == a && old.length == 8 && old.threshold == 4 && old.user_ptr == &marker_a);
    CHECK_EQ(old.options, PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE);
    CHECK(old.eq_handle == eq);
    neu = md_desc(b, 16, 2, PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_MANAGE_REMOTE |
                                PTL_MD_EVENT_START_DISABLE, eq);
    neu.user_ptr = &marker_b;
    CHECK_EQ(PtlMDUpdate(md, &old, &neu, PTL_EQ_NONE), PTL_OK);
    CHECK(old.start == a && old.threshold == 4);
    put(1, 1, 1, 20, 'b'); /* into b now, truncated */
    CHECK(memcmp(a, "aa......", 8) == 0);
    CHECK_EQ(b[15], 'b');
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.md_handle == md && ev.md.start == b && ev.md.user_ptr == &marker_b);
    CHECK_EQ(ev.mlength, 16);
    CHECK_EQ(ev.md.threshold, 1);
    /* Not while its queue holds an event: nothing changes. */
    put(1, 1, 1, 1, 'c');
    neu = desc;
    CHECK_EQ(PtlMDUpdate(md, NULL, &neu, eq), PTL_MD_NO_UPDATE);
    CHECK_EQ(PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE), PTL_OK);
    CHECK(old.start == b && old.threshold == 0);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(eq_empty(eq));
    CHECK_EQ(PtlMDUpdate(md, NULL, &neu, eq), PTL_OK);
    put(1, 1, 1, 3, 'd');
    CHECK(memcmp(a, "ddd.....", 8) == 0);
    CHECK_EQ(b[0], 'c');
    CHECK_EQ(drop_count(), 0);
    close_ni();
}

/* Puts the ACL denies and puts nothing matches are counted drops: nothing
 * is written, no event recorded, the threshold untouched. */
static void test_own_md_drops(int way)
{
    uint8_t buf[8] = {0};
    ptl_handle_me_t me, me3;
    ptl_handle_md_t md, md3;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    ptl_md_t old;
    onic_ptl_msg_t m;

    open_ni();
    eq = eq_alloc(16);
    own_entry(way, 1, ME_ANY, 1, PTL_RETAIN, md_desc(buf, 8, 2, PTL_MD_OP_PUT, eq), PTL_RETAIN, &me,
              &md);
    own_entry(way, 1, ((ptl_process_id_t){0, 3}), 3, PTL_RETAIN,
              md_desc(buf + 4, 4, 2, PTL_MD_OP_PUT, eq), PTL_RETAIN, &me3, &md3);
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 1);
    m.ac_index = 2; /* entries 2 and up deny until set */
    feed(1, &m, "z", 1);
    CHECK_EQ(drop_count(), 1);
    put(1, 1, 2, 1, 'z');          /* no entry with these bits */
    CHECK_EQ(drop_count(), 2);
    put(4, 1, 3, 1, 'z');          /* the entry is rank 3's only */
    CHECK_EQ(drop_count(), 3);
    m = harness_req(ONIC_PTL_OP_GET, 1, 1, 1); /* the MD takes puts only */
    CHECK(!feed(1, &m, NULL, 0).send);
    CHECK_EQ(drop_count(), 4);
    CHECK(buf[0] == 0 && buf[4] == 0);
    CHECK(eq_empty(eq));
    CHECK_EQ(PtlMDUpdate(md, &old, NULL, PTL_EQ_NONE), PTL_OK);
    CHECK_EQ(old.threshold, 2);
    CHECK_EQ(PtlMDUpdate(md3, &old, NULL, PTL_EQ_NONE), PTL_OK);
    CHECK_EQ(old.threshold, 2);
    /* Admitted, the same put is taken. */
    CHECK_EQ(PtlACEntry(nih, 2, ME_ANY, PTL_UID_ANY, PTL_JID_ANY, 1), PTL_OK);
    m = harness_req(ONIC_PTL_OP_PUT, 1, 1, 1);
    m.ac_index = 2;
    feed(1, &m, "y", 1);
    put(3, 1, 3, 1, 'w');
    CHECK_EQ(buf[0], 'y');
    CHECK_EQ(buf[4], 'w');
    CHECK_EQ(drop_count(), 4);
    CHECK_EQ(next_event(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_PUT_START && ev.md_handle == md);
    close_ni();
}

/* Handles of entries and their MDs made and freed over and over (slots
 * reused): a dead handle never names a live object, live ones stay valid. */
static void test_own_md_handles(void)
{
    enum { CYCLES = 3000, KEEP = 16 };
    uint8_t buf[8];
    ptl_handle_me_t dead_me[KEEP], me;
    ptl_handle_md_t dead_md[KEEP], md, bound;
    unsigned ndead = 0;
    int bad = 0;

    open_ni();
    CHECK_EQ(PtlMDBind(nih, md_desc(buf, 8, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_RETAIN, &bound),
             PTL_OK);
    for (int i = 0; i < CYCLES && bad < 5; i++) {
        int way = i % OWN_WAYS, how = (i / OWN_WAYS) % 3;
        ptl_handle_ni_t h;
        own_entry(way, 1, ME_ANY, 1, PTL_UNLINK, md_desc(buf, 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE),
                  PTL_UNLINK, &me, &md);
        for (unsigned k = 0; k < ndead && k < KEEP; k++)
            if (dead_me[k] == me || dead_md[k] == md) {
                fprintf(stderr, "test_ptl: cycle %d (%s): a dead handle is live again\n", i,
                        own_way_name[way]);
                bad++;
            }
        if (how == 0)
            CHECK_EQ(PtlMEUnlink(me), PTL_OK);
        else if (how == 1)
            CHECK_EQ(PtlMDUnlink(md), PTL_OK);  /* the entry goes with it */
        else
            put(1, 1, 1, 1, 'a');              /* used up: both go */
        dead_me[ndead % KEEP] = me;
        dead_md[ndead % KEEP] = md;
        ndead++;
        /* (PtlNIHandle logs each refusal: asked of the newest only, at times.) */
        for (unsigned k = 0; k < ndead && k < KEEP; k++)
            if (PtlMEUnlink(dead_me[k]) != PTL_ME_INVALID ||
                PtlMDUnlink(dead_md[k]) != PTL_MD_INVALID ||
                (own_all_calls && i % 512 == 0 && PtlNIHandle(me, &h) != PTL_HANDLE_INVALID)) {
                fprintf(stderr, "test_ptl: cycle %d (%s, freed by %s): a dead handle is "
                        "accepted\n", i, own_way_name[way],
                        how == 0 ? "PtlMEUnlink" : how == 1 ? "PtlMDUnlink" : "its threshold");
                bad++;
            }
    }
    CHECK_EQ(bad, 0);
    own_alive(bound);
    CHECK_EQ(drop_count(), 0);
    CHECK_EQ(PtlMDUnlink(bound), PTL_OK);
    close_ni();
}

/* max_mds counts every MD: bound ones, entries' first MDs (by attach or by
 * search) and second ones. A search that cannot make its MD leaves no
 * entry behind. */
static void test_own_md_limits(void)
{
    ptl_ni_limits_t want = {.max_mes = 3, .max_mds = 4, .max_eqs = 4, .max_ac_index = 7,
                            .max_pt_index = 7, .max_me_list = 100};
    uint8_t buf[8] = {0};
    ptl_handle_me_t a, b, c;
    ptl_handle_md_t bound, amd, amd2, bmd, x;
    ptl_ovf_header_t hdr;
    ptl_md_t one = md_desc(buf, 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);

    ni = harness_open(0, 8, engine, &want, &nih);
    REQUIRE(ni != NULL);
    CHECK_EQ(PtlMDBind(nih, one, PTL_RETAIN, &bound), PTL_OK);
    own_entry(OWN_BY_ATTACH, 1, ME_ANY, 1, PTL_UNLINK, one, PTL_UNLINK, &a, &amd);
    own_entry(OWN_BY_SEARCH, 1, ME_ANY, 2, PTL_UNLINK, one, PTL_UNLINK, &b, &bmd);
    amd2 = md_attach(a, one, PTL_UNLINK);
    /* Four MDs: no fifth, of any kind. */
    CHECK_EQ(PtlMDBind(nih, one, PTL_RETAIN, &x), PTL_NO_SPACE);
    CHECK_EQ(PtlMDAttach(b, one, PTL_RETAIN, &x), PTL_NO_SPACE);
    CHECK_EQ(PtlMEAttachSearch(nih, 1, ME_ANY, 3, 0, PTL_UNLINK, PTL_INS_AFTER, one, PTL_UNLINK,
                               &c, &x, &hdr), PTL_NO_SPACE);
    put(1, 1, 3, 1, 'z'); /* the failed search left no entry */
    CHECK_EQ(drop_count(), 1);
    /* Two entries of three: one more entry, without MD; then no more. */
    CHECK_EQ(PtlMEAttach(nih, 1, ME_ANY, 3, 0, PTL_RETAIN, PTL_INS_AFTER, &c), PTL_OK);
    CHECK_EQ(PtlMEAttach(nih, 1, ME_ANY, 4, 0, PTL_RETAIN, PTL_INS_AFTER, &x), PTL_NO_SPACE);
    /* An entry's first MD unlinked by hand frees its slot. */
    CHECK_EQ(PtlMDUnlink(amd), PTL_OK);
    CHECK_EQ(PtlMDAttach(c, one, PTL_UNLINK, &x), PTL_OK);
    CHECK_EQ(PtlMDBind(nih, one, PTL_RETAIN, &x), PTL_NO_SPACE);
    /* A used-up MD and its entry free theirs: b's put uses it up. */
    put(1, 1, 2, 1, 'b');
    CHECK_EQ(buf[0], 'b');
    own_md_dead(bmd);
    own_me_dead(b);
    CHECK_EQ(PtlMEAttachSearch(nih, 1, ME_ANY, 5, 0, PTL_UNLINK, PTL_INS_AFTER, one, PTL_UNLINK,
                               &b, &bmd, &hdr), PTL_OK);
    /* PtlMEUnlink of a with its second MD frees an entry and an MD. */
    CHECK_EQ(PtlMEUnlink(a), PTL_OK);
    own_md_dead(amd2);
    CHECK_EQ(PtlMDBind(nih, one, PTL_RETAIN, &x), PTL_OK);
    CHECK_EQ(PtlMEAttach(nih, 1, ME_ANY, 4, 0, PTL_RETAIN, PTL_INS_AFTER, &a), PTL_OK);
    CHECK_EQ(PtlMDBind(nih, one, PTL_RETAIN, &x), PTL_NO_SPACE);
    CHECK_EQ(PtlMEAttach(nih, 1, ME_ANY, 6, 0, PTL_RETAIN, PTL_INS_AFTER, &x), PTL_NO_SPACE);
    CHECK_EQ(drop_count(), 1);
    own_alive(bound);
    close_ni();
}

/* A search that finds nothing and cannot make its entry (max_mes entries
 * exist) is PTL_NO_SPACE and leaves nothing behind: no entry to match, and
 * no MD taken from max_mds (Portals: a call that fails changes nothing). */
static void test_own_md_entry_limit(void)
{
    ptl_ni_limits_t want = {.max_mes = 1, .max_mds = 2, .max_eqs = 4, .max_ac_index = 7,
                            .max_pt_index = 7, .max_me_list = 100};
    uint8_t buf[8] = {0};
    ptl_handle_me_t a, c;
    ptl_handle_md_t x, y;
    ptl_ovf_header_t hdr;
    ptl_md_t one = md_desc(buf, 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);

    ni = harness_open(0, 8, engine, &want, &nih);
    REQUIRE(ni != NULL);
    CHECK_EQ(PtlMEAttach(nih, 1, ME_ANY, 1, 0, PTL_RETAIN, PTL_INS_AFTER, &a), PTL_OK);
    CHECK_EQ(PtlMEAttachSearch(nih, 1, ME_ANY, 2, 0, PTL_UNLINK, PTL_INS_AFTER, one, PTL_UNLINK,
                               &c, &x, &hdr), PTL_NO_SPACE);
    put(1, 1, 2, 1, 'z'); /* no entry: dropped, the buffer untouched */
    CHECK_EQ(drop_count(), 1);
    CHECK_EQ(buf[0], 0);
    /* Both MDs are still there to be made. */
    CHECK_EQ(PtlMDBind(nih, one, PTL_RETAIN, &x), PTL_OK);
    CHECK_EQ(PtlMDBind(nih, one, PTL_RETAIN, &y), PTL_OK);
    CHECK_EQ(PtlMDBind(nih, one, PTL_RETAIN, &x), PTL_NO_SPACE);
    /* The entry slot is still the one entry's: freed, a search takes it. */
    CHECK_EQ(PtlMEUnlink(a), PTL_OK);
    CHECK_EQ(PtlMDUnlink(y), PTL_OK);
    CHECK_EQ(PtlMEAttachSearch(nih, 1, ME_ANY, 2, 0, PTL_UNLINK, PTL_INS_AFTER, one, PTL_UNLINK,
                               &c, &x, &hdr), PTL_OK);
    put(1, 1, 2, 1, 'y');
    CHECK_EQ(buf[0], 'y');
    CHECK_EQ(drop_count(), 1);
    close_ni();
}

/* The overflow extension: a kept header carries every field right, a
 * truncating overflow MD included; and many unexpected puts are kept and
 * taken in order, round after round, so the kept headers' storage runs
 * out and is refilled. */
static void test_own_md_kept_headers(void)
{
    enum { ROUNDS = 6, N = 1000, SRCS = 5 };
    static uint8_t ovf[N * 8];
    uint8_t small[4] = {0}, got[8];
    ptl_handle_me_t ome, me;
    ptl_handle_md_t omd, md;
    ptl_handle_eq_t eq;
    ptl_ovf_header_t hdr;
    onic_ptl_msg_t m;
    ptl_md_t later = md_desc(got, 8, 1, PTL_MD_OP_PUT, PTL_EQ_NONE);
    uint8_t data[16];
    int bad = 0;

    open_ni();
    eq = eq_alloc(64);
    /* Truncated into a 4-byte overflow MD at local offsets: every field. */
    CHECK_EQ(PtlMEAttachOverflow(nih, 2, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_RETAIN,
                                 PTL_INS_AFTER, &ome), PTL_OK);
    omd = md_attach(ome, md_desc(small, 4, PTL_MD_THRESH_INF,
                                 PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE |
                                     PTL_MD_EVENT_END_DISABLE, eq), PTL_RETAIN);
    memset(data, 'k', sizeof(data));
    m = harness_req(ONIC_PTL_OP_PUT, 2, 0xabcdef, 10);
    m.hdr_data = 0x1122334455667788ull;
    m.offset = 7; /* not used: the MD manages its offset */
    feed(6, &m, data, 10);
    m = harness_req(ONIC_PTL_OP_PUT, 2, 0xabcdee, 3);
    m.hdr_data = 2;
    feed(5, &m, data, 3); /* 3 more: 0 left after 4, truncated to 0 */
    CHECK(memcmp(small, "kkkk", 4) == 0);
    CHECK_EQ(PtlMEAttachSearch(nih, 2, ((ptl_process_id_t){0, 6}), 0xabcd00, 0xff, PTL_UNLINK,
                               PTL_INS_AFTER, later, PTL_UNLINK, &me, &md, &hdr), PTL_OVF_MATCHED);
    CHECK_EQ(hdr.initiator.nid, 0);
    CHECK_EQ(hdr.initiator.pid, 6);
    CHECK_EQ(hdr.pt_index, 2);
    CHECK_EQ(hdr.match_bits, 0xabcdef);
    CHECK_EQ(hdr.rlength, 10);
    CHECK_EQ(hdr.mlength, 4);
    CHECK_EQ(hdr.offset, 0);
    CHECK(hdr.md_handle == omd);
    CHECK(hdr.start == small);
    CHECK(hdr.hdr_data == 0x1122334455667788ull);
    CHECK_EQ(PtlMEAttachSearch(nih, 2, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK, PTL_INS_AFTER,
                               later, PTL_UNLINK, &me, &md, &hdr), PTL_OVF_MATCHED);
    CHECK_EQ(hdr.initiator.pid, 5);
    CHECK_EQ(hdr.match_bits, 0xabcdee);
    CHECK_EQ(hdr.rlength, 3);
    CHECK_EQ(hdr.mlength, 0);
    CHECK_EQ(hdr.offset, 4);
    CHECK(hdr.start == NULL);
    CHECK_EQ(hdr.hdr_data, 2);
    CHECK(eq_empty(eq));
    CHECK_EQ(PtlMEUnlink(ome), PTL_OK);
    own_md_dead(omd);

    /* Rounds of N unexpected 8-byte puts into an overflow entry that goes
     * when full (PTL_MD_MAX_SIZE): taken in a mix of exact and wildcard
     * searches, interleaved with more puts. */
    for (int round = 0; round < ROUNDS && bad < 5; round++) {
        static uint8_t taken[N];
        int next_any = 0, next_exact = 0, put_so_far = 0;
        ptl_md_t d = md_desc(ovf, sizeof(ovf), PTL_MD_THRESH_INF,
                             PTL_MD_OP_PUT | PTL_MD_MAX_SIZE | PTL_MD_EVENT_START_DISABLE |
                                 PTL_MD_EVENT_END_DISABLE, PTL_EQ_NONE);
        d.max_size = 8;
        memset(taken, 0, sizeof(taken));
        memset(ovf, 0, sizeof(ovf));
        CHECK_EQ(PtlMEAttachOverflow(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
                                     PTL_INS_AFTER, &ome), PTL_OK);
        omd = md_attach(ome, d, PTL_UNLINK);
        /* Puts come in three waves; after each, some are taken: those of
         * rank 2 with bits 101 by exact searches, then the oldest of any. */
        for (int wave = 0; wave < 3; wave++) {
            int upto = wave == 2 ? N : (wave + 1) * N / 3 + round * 17;
            for (; put_so_far < upto; put_so_far++) {
                int i = put_so_far;
                uint64_t v = (uint64_t)round << 32 | (uint64_t)i;
                m = harness_req(ONIC_PTL_OP_PUT, 3, 100 + (uint64_t)(i % 3), 8);
                m.hdr_data = v;
                feed(1 + (uint32_t)(i % SRCS), &m, &v, 8);
            }
            /* rank 2's bits-101 messages, oldest first */
            for (;;) {
                while (next_exact < put_so_far && !(next_exact % SRCS == 1 && next_exact % 3 == 1))
                    next_exact++;
                int rc = PtlMEAttachSearch(nih, 3, ((ptl_process_id_t){0, 2}), 101, 0, PTL_UNLINK,
                                           PTL_INS_AFTER, later, PTL_UNLINK, &me, &md, &hdr);
                if (next_exact >= put_so_far) {
                    CHECK_EQ(rc, PTL_OK); /* none left: attached; take it away */
                    CHECK_EQ(PtlMEUnlink(me), PTL_OK);
                    break;
                }
                if (rc != PTL_OVF_MATCHED || hdr.hdr_data != ((uint64_t)round << 32 | (unsigned)next_exact)) {
                    fprintf(stderr, "test_ptl: round %d: exact search %d: rc %d, hdr_data %#llx\n",
                            round, next_exact, rc, (unsigned long long)hdr.hdr_data);
                    bad++;
                    break;
                }
                taken[next_exact++] = 1;
            }
            /* then half of what is left, the oldest of anyone first */
            int take = (put_so_far - next_any) / 2 + (wave == 2 ? N : 0);
            for (int k = 0; k < take; k++) {
                uint64_t v;
                while (next_any < put_so_far && taken[next_any])
                    next_any++;
                if (next_any >= put_so_far)
                    break;
                v = (uint64_t)round << 32 | (uint64_t)next_any;
                if (PtlMEAttachSearch(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
                                      PTL_INS_AFTER, later, PTL_UNLINK, &me, &md, &hdr) !=
                        PTL_OVF_MATCHED ||
                    hdr.hdr_data != v || hdr.initiator.pid != 1 + (unsigned)(next_any % SRCS) ||
                    hdr.match_bits != 100 + (uint64_t)(next_any % 3) || hdr.rlength != 8 ||
                    hdr.mlength != 8 || hdr.offset != 8u * (unsigned)next_any ||
                    hdr.md_handle != omd || hdr.start != ovf + 8 * next_any ||
                    memcmp(hdr.start, &v, 8) != 0) {
                    fprintf(stderr, "test_ptl: round %d: header %d wrong or missing (hdr_data "
                            "%#llx)\n", round, next_any, (unsigned long long)hdr.hdr_data);
                    bad++;
                    break;
                }
                taken[next_any++] = 1;
            }
        }
        /* All taken; the full overflow entry went with its MD. */
        CHECK_EQ(PtlMEAttachSearch(nih, 3, ME_ANY, 0, ~(ptl_match_bits_t)0, PTL_UNLINK,
                                   PTL_INS_AFTER, later, PTL_UNLINK, &me, &md, &hdr), PTL_OK);
        CHECK_EQ(PtlMEUnlink(me), PTL_OK);
        own_md_dead(omd);
        own_me_dead(ome);
        CHECK_EQ(drop_count(), round);
        put(1, 3, 100, 8, 'x'); /* nothing takes it now */
        CHECK_EQ(drop_count(), round + 1);
    }
    CHECK_EQ(bad, 0);
    close_ni();
}

static void test_own_md(void)
{
    for (int way = 0; way < OWN_WAYS; way++) {
        unsigned before = check_failed;
        test_own_md_truncate(way);
        test_own_md_threshold(way);
        test_own_md_second(way);
        test_own_md_update(way);
        test_own_md_drops(way);
        if (check_failed > before)
            fprintf(stderr, "test_ptl: the entry's own MD made by %s fails\n", own_way_name[way]);
    }
    test_own_md_handles();
    test_own_md_limits();
    test_own_md_entry_limit();
    test_own_md_kept_headers();
}

static int engine_count(const char *const *engines)
{
    int n = 0;

    while (engines[n] != NULL)
        n++;
    return n;
}

int main(void)
{
    const char *const *engines = onic_match_engines();

    /* Every rule through both ways in: the header as the NI sends it, and
     * the whole header, which takes the general steps for every put. */
    for (int k = 0; k < 2 * engine_count(engines); k++) {
        int i = k % engine_count(engines);
        feed_whole = k >= engine_count(engines);
        engine = engines[i];
        test_translation_order();
        test_wildcards();
        test_first_md_only();
        test_reject_and_truncate();
        test_threshold_unlink();
        test_one_shot();
        test_end_only();
        test_offsets();
        test_max_size();
        test_acl();
        test_ack();
        test_get_reply();
        test_get_max_inline();
        test_reply_eq_room();
        test_large();
        test_large_failed_ack();
        test_large_no_memory();
        test_eq_overflow();
        test_eq_in_place();
        test_eq_get_local();
        test_eq_poll_local();
        test_handler_wait_refused();
        test_end_only_turns();
        test_md_update();
        test_malformed();
        test_unpack_exact();
        test_overflow();
        test_recv_post();
        test_place();
        test_overflow_end_only();
        test_handles();
        test_many_handles();
        if (k == 0)
            test_handle_generations();
        own_all_calls = k == 0;
        test_own_md();
        if (check_failed > 0) {
            fprintf(stderr, "test_ptl: failures with engine %s%s\n", engine,
                    feed_whole ? ", whole headers" : "");
            break;
        }
    }
    return check_summary("test_ptl");
}
