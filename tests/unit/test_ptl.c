/* The Portals target side, rule by rule (paper 003, section 4), with no
 * transport: headers are built by hand (or captured from PtlPut / PtlGet)
 * and fed straight into onic_ptl_target_recv. Every rule runs on every
 * matching engine. Deterministic. */
#include "check.h"
#include "../ptl/ptl_harness.h"

#include <stdio.h>
#include <string.h>

static onic_ptl_ni_t  *ni;
static ptl_handle_ni_t nih;
static const char     *engine;

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

/* A put or get header from the test's point of view. */
static onic_ptl_msg_t req(unsigned op, ptl_pt_index_t pt, ptl_match_bits_t bits, uint64_t len)
{
    onic_ptl_msg_t m;
    memset(&m, 0, sizeof(m));
    m.op = op;
    m.pt_index = pt;
    m.match_bits = bits;
    m.rlength = len;
    m.md = 0x1234;          /* the initiator's MD: opaque to the target */
    m.eq = PTL_EQ_NONE;
    return m;
}

static onic_ptl_out_t feed(uint32_t src, const onic_ptl_msg_t *m, const void *payload, size_t len)
{
    onic_ptl_wire_t w;
    onic_ptl_out_t out;
    onic_ptl_msg_pack(m, &w);
    onic_ptl_target_recv(ni, src, &w, sizeof(w), payload, len, &out);
    return out;
}

/* A put of len bytes of `byte`. */
static onic_ptl_out_t put(uint32_t src, ptl_pt_index_t pt, ptl_match_bits_t bits, size_t len,
                          uint8_t byte)
{
    uint8_t data[512];
    onic_ptl_msg_t m = req(ONIC_PTL_OP_PUT, pt, bits, len);
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
    g = req(ONIC_PTL_OP_GET, 1, 7, 4);
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
        m = req(ONIC_PTL_OP_PUT, 1, 1, 8);
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
    m = req(ONIC_PTL_OP_PUT, 1, 1, 9);
    feed(1, &m, data, 9);
    CHECK_EQ(drops(ONIC_PTL_DROP_NO_MATCH), 1);
    m = req(ONIC_PTL_OP_PUT, 1, 2, 4);
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
        m = req(ONIC_PTL_OP_PUT, src % 8, 1, 1);
        feed(src, &m, "z", 1);
    }
    CHECK_EQ(ni->dropped, 0);
    /* Entry 1: system processes only; a job's process is not one. */
    m = req(ONIC_PTL_OP_PUT, 1, 1, 1);
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
    m = req(ONIC_PTL_OP_PUT, 5, 1, 1);
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
    m = req(ONIC_PTL_OP_PUT, 1, 1, 1);
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
    m = req(ONIC_PTL_OP_GET, 1, 1, 1);
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
    m = req(ONIC_PTL_OP_PUT, 1, 1, 1);
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
    r = req(ONIC_PTL_OP_GET, 4, 10, 4);
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
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), 1);

    /* A large put nobody takes still answers DONE, with nothing moved. */
    m = req(ONIC_PTL_OP_PUT, 1, 99, BIG);
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
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), 2);

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
    m = req(ONIC_PTL_OP_PUT, 1, 1, BIG);
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

static unsigned handler_calls;
static void count_handler(ptl_event_t *ev)
{
    (void)ev;
    handler_calls++;
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
        onic_ptl_msg_t m = req(ONIC_PTL_OP_PUT, 1, 2, 1);
        onic_ptl_wire_t w;
        onic_ptl_msg_pack(&m, &w);
        onic_ptl_ni_deliver(ni, 1, &w, sizeof(w), "h", 1);
    }
    CHECK_EQ(handler_calls, 2);
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
    neu.options = PTL_MD_IOVEC;
    CHECK_EQ(PtlMDUpdate(md, NULL, &neu, PTL_EQ_NONE), PTL_MD_ILLEGAL);
    close_ni();
}

/* --- drops for malformed messages; PTL_SR_DROP_COUNT sums every reason ------------ */
static void test_malformed(void)
{
    onic_ptl_msg_t m;
    onic_ptl_wire_t w;
    onic_ptl_out_t out;
    ptl_sr_value_t count;
    uint64_t sum = 0;

    open_ni();
    m = req(ONIC_PTL_OP_PUT, 1, 1, 4);
    /* A put without ack sends four words, a get five, the rest six; a header
     * of the op's length or of all six words is taken, any other is not. */
    CHECK_EQ(onic_ptl_msg_pack(&m, &w), 32);
    {
        onic_ptl_msg_t g = req(ONIC_PTL_OP_GET, 1, 1, 4), u;
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
    m = req(ONIC_PTL_OP_GET, 1, 1, 4096);                             /* reply too big */
    feed(1, &m, NULL, 0);
    m = req(ONIC_PTL_OP_ACK, 1, 1, 4);
    m.mlength = 5;                                                    /* more than asked */
    feed(1, &m, NULL, 0);
    CHECK_EQ(drops(ONIC_PTL_DROP_MALFORMED), 8);
    m = req(ONIC_PTL_OP_PUT, (ptl_pt_index_t)ni->limits.max_pt_index + 1, 1, 1);
    feed(1, &m, "a", 1);
    CHECK_EQ(drops(ONIC_PTL_DROP_PT_INDEX), 1);
    for (int i = 0; i < ONIC_PTL_DROP_REASONS; i++)
        sum += ni->drops[i];
    CHECK_EQ(PtlNIStatus(nih, PTL_SR_DROP_COUNT, &count), PTL_OK);
    CHECK_EQ(count, 9);
    CHECK_EQ(sum, 9);
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
    m = req(ONIC_PTL_OP_PUT, 3, 7, 4);
    m.hdr_data = 70;
    feed(5, &m, "aaaa", 4);
    m = req(ONIC_PTL_OP_PUT, 3, 8, 4);
    m.hdr_data = 80;
    feed(6, &m, "bbbb", 4);
    m = req(ONIC_PTL_OP_PUT, 3, 7, 4);
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

int main(void)
{
    const char *const *engines = onic_match_engines();

    for (int i = 0; engines[i] != NULL; i++) {
        engine = engines[i];
        test_translation_order();
        test_wildcards();
        test_first_md_only();
        test_reject_and_truncate();
        test_threshold_unlink();
        test_offsets();
        test_max_size();
        test_acl();
        test_ack();
        test_get_reply();
        test_large();
        test_eq_overflow();
        test_md_update();
        test_malformed();
        test_overflow();
        test_handles();
        if (check_failed > 0) {
            fprintf(stderr, "test_ptl: failures with engine %s\n", engine);
            break;
        }
    }
    return check_summary("test_ptl");
}
