/* I/O vector MDs (PTL_MD_IOVEC), with no transport: bad vectors refused,
 * the vector copied at creation, and every way data enters or leaves an MD
 * -- small puts (the target's straight line and its general steps), gets
 * and their replies, large puts and gets moved by RMA piece by piece, the
 * initiator's small and large puts and gets from a vector -- checked byte
 * by byte, with the bytes between entries untouched and events as for a
 * flat MD of the vector's total length. Deterministic. */
#include "check.h"
#include "../ptl/ptl_harness.h"

#include <stdio.h>
#include <string.h>

static onic_ptl_ni_t  *ni;
static ptl_handle_ni_t nih;
static int             feed_whole;

#define ME_ANY ((ptl_process_id_t){PTL_NID_ANY, PTL_PID_ANY})
#define SELF   ((ptl_process_id_t){0, 0})
#define GAP    0xee /* what the bytes around and between entries hold */

static void open_ni(int max_iovecs)
{
    ptl_ni_limits_t want = {.max_mes = 1024, .max_mds = 1024, .max_eqs = 64,
                            .max_ac_index = 3, .max_pt_index = 7,
                            .max_md_iovecs = max_iovecs, .max_me_list = 1024};
    ni = harness_open(0, 4, NULL, max_iovecs > 0 ? &want : NULL, &nih);
    REQUIRE(ni != NULL);
}

static ptl_md_t vdesc(ptl_md_iovec_t *v, size_t n, int threshold, unsigned options,
                      ptl_handle_eq_t eq)
{
    ptl_md_t md = {v, n, threshold, 0, options | PTL_MD_IOVEC, NULL, eq};
    return md;
}

static ptl_handle_eq_t eq_alloc(void)
{
    ptl_handle_eq_t h = PTL_INVALID_HANDLE;
    REQUIRE(PtlEQAlloc(nih, 64, PTL_EQ_HANDLER_NONE, &h) == PTL_OK);
    return h;
}

static ptl_handle_me_t me_attach(ptl_pt_index_t pt, ptl_match_bits_t bits)
{
    ptl_handle_me_t h = PTL_INVALID_HANDLE;
    REQUIRE(PtlMEAttach(nih, pt, ME_ANY, bits, 0, PTL_RETAIN, PTL_INS_AFTER, &h) == PTL_OK);
    return h;
}


static onic_ptl_out_t feed(uint32_t src, const onic_ptl_msg_t *m, const void *payload, size_t len)
{
    return harness_feed(ni, src, m, payload, len, feed_whole);
}

/* The memory a vector points into: entries of the given lengths, each
 * followed by a gap of `gap` bytes; all GAP to start with. */
#define AREA 20000
static uint8_t area[AREA];

static size_t layout(ptl_md_iovec_t *v, const size_t *lens, size_t n, size_t gap)
{
    size_t at = 16, total = 0;

    memset(area, GAP, sizeof(area));
    for (size_t i = 0; i < n; i++) {
        v[i].iov_base = lens[i] > 0 ? &area[at] : NULL;
        v[i].iov_len = lens[i];
        at += lens[i] + gap;
        total += lens[i];
    }
    REQUIRE(at <= AREA);
    return total;
}

/* Byte `off` of the vector's data, as a flat MD's byte off. */
static uint8_t *vbyte(const ptl_md_iovec_t *v, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++) {
        if (off < v[i].iov_len)
            return (uint8_t *)v[i].iov_base + off;
        off -= v[i].iov_len;
    }
    return NULL;
}

/* Every byte of area: inside the vector, expect[] at its flat offset (or
 * `fresh` where expect is NULL); outside it, GAP. */
static int area_is(const ptl_md_iovec_t *v, size_t n, const uint8_t *expect, size_t total)
{
    static uint8_t want[AREA];
    size_t off = 0;

    memset(want, GAP, sizeof(want));
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < v[i].iov_len; j++, off++)
            want[(uint8_t *)v[i].iov_base + j - area] = expect[off];
    (void)total;
    return memcmp(want, area, sizeof(area)) == 0;
}

/* --- refusals ------------------------------------------------------------------ */
static void test_refused(void)
{
    ptl_md_iovec_t v[8];
    ptl_handle_md_t md;
    ptl_handle_me_t me, me2;
    ptl_ovf_header_t h;
    ptl_md_t d;
    ptl_ni_limits_t lim;
    static uint8_t buf[64];

    open_ni(4);
    CHECK_EQ(ni->limits.max_md_iovecs, 4);
    me = me_attach(1, 1);
    for (int i = 0; i < 8; i++)
        v[i] = (ptl_md_iovec_t){buf + 8 * i, 8};
    /* NULL vector, no entries, more than max_md_iovecs. */
    CHECK_EQ(PtlMDBind(nih, vdesc(NULL, 2, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 0, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 5, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDAttach(me, vdesc(v, 5, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    /* An entry with no base but a length. */
    v[2].iov_base = NULL;
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 4, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMDAttach(me, vdesc(v, 4, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    CHECK_EQ(PtlMEAttachSearch(nih, 1, ME_ANY, 1, 0, PTL_UNLINK, PTL_INS_AFTER,
                               vdesc(v, 4, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &me2, &md, &h),
             PTL_MD_ILLEGAL);
    /* ... but with no length it is only an empty entry. */
    v[2].iov_len = 0;
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 4, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_OK);
    CHECK_EQ(PtlMDUnlink(md), PTL_OK);
    /* A total of 2^48 or more, or one that would wrap. */
    v[0].iov_len = UINT64_C(1) << 47;
    v[1].iov_len = UINT64_C(1) << 47;
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 2, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    v[1].iov_len = UINT64_MAX;
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 2, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    /* max_size is held to the total, not the number of entries. */
    v[0].iov_len = v[1].iov_len = 8;
    d = vdesc(v, 2, 1, PTL_MD_MAX_SIZE, PTL_EQ_NONE);
    d.max_size = 16;
    CHECK_EQ(PtlMDBind(nih, d, PTL_UNLINK, &md), PTL_OK);
    d.max_size = 17;
    CHECK_EQ(PtlMDBind(nih, d, PTL_UNLINK, &md), PTL_MD_ILLEGAL);
    /* PtlMDUpdate checks a new vector the same way. */
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 2, 1, 0, PTL_EQ_NONE), PTL_UNLINK, &md), PTL_OK);
    d = vdesc(v, 9, 1, 0, PTL_EQ_NONE);
    CHECK_EQ(PtlMDUpdate(md, NULL, &d, PTL_EQ_NONE), PTL_MD_ILLEGAL);
    PtlFini();
    /* The limit is clamped to onic's most. */
    open_ni(1 << 30);
    CHECK_EQ(ni->limits.max_md_iovecs, PTL_MD_IOVEC_MAX);
    PtlFini();
    open_ni(0);
    (void)lim;
    CHECK_EQ(ni->limits.max_md_iovecs, PTL_MD_IOVEC_MAX);
    PtlFini();
}

/* --- puts into a vector ----------------------------------------------------------- */
/* Remote offsets spanning entries (with an empty one among them), the
 * caller's array gone after the call, events as a flat MD's. */
static void test_put_offsets(void)
{
    static const size_t lens[] = {5, 0, 17, 1, 40, 3};
    ptl_md_iovec_t v[6], keep[6];
    uint8_t expect[66], data[80];
    ptl_handle_eq_t eq;
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    ptl_event_t ev;
    ptl_md_t now;
    onic_ptl_msg_t m;
    size_t total;

    open_ni(0);
    eq = eq_alloc();
    total = layout(v, lens, 6, 7);
    CHECK_EQ(total, 66);
    memcpy(keep, v, sizeof(v));
    me = me_attach(2, 5);
    CHECK_EQ(PtlMDAttach(me, vdesc(v, 6, PTL_MD_THRESH_INF,
                                  PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE |
                                      PTL_MD_EVENT_START_DISABLE, eq),
                         PTL_RETAIN, &md),
             PTL_OK);
    memset(v, 0, sizeof(v)); /* onic keeps its own copy */
    memset(expect, GAP, sizeof(expect));
    for (int whole = 0; whole < 2; whole++) {
        feed_whole = whole;
        for (size_t off = 0; off < total; off += 3) {
            size_t len = (off * 7 + 1) % (total - off + 1);
            for (size_t i = 0; i < len; i++)
                data[i] = (uint8_t)(off + i * 13 + whole);
            m = harness_req(ONIC_PTL_OP_PUT, 2, 5, len);
            m.offset = off;
            m.hdr_data = off;
            feed(1, &m, data, len);
            memcpy(expect + off, data, len);
            REQUIRE(area_is(keep, 6, expect, total));
            REQUIRE(PtlEQGet(eq, &ev) == PTL_OK);
            REQUIRE(ev.type == PTL_EVENT_PUT_END && ev.mlength == len && ev.offset == off &&
                    ev.rlength == len && ev.hdr_data == off);
            /* The event's MD: the entries, and onic's copy of them. */
            REQUIRE(ev.md.length == 6 && (ev.md.options & PTL_MD_IOVEC) &&
                    ev.md.start != (void *)v &&
                    memcmp(ev.md.start, keep, sizeof(keep)) == 0);
        }
    }
    CHECK(area_is(keep, 6, expect, total));
    CHECK_EQ(PtlMDUpdate(md, &now, NULL, PTL_EQ_NONE), PTL_OK);
    CHECK_EQ(now.length, 6);
    /* Past the end without TRUNCATE: not taken. */
    m = harness_req(ONIC_PTL_OP_PUT, 2, 5, 10);
    m.offset = 60;
    feed(1, &m, data, 10);
    CHECK_EQ(ni->drops[ONIC_PTL_DROP_NO_MATCH], 1);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_EQ_EMPTY);
    feed_whole = 0;
    PtlFini();
}

/* The local offset moving on (no MANAGE_REMOTE), truncation at the end, the
 * threshold using the MD up and unlinking it. */
static void test_put_local_truncate(void)
{
    static const size_t lens[] = {10, 6, 30};
    ptl_md_iovec_t v[3];
    uint8_t expect[46], data[64];
    ptl_handle_eq_t eq;
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    ptl_event_t ev;
    onic_ptl_msg_t m;

    open_ni(0);
    eq = eq_alloc();
    layout(v, lens, 3, 5);
    me = me_attach(3, 9);
    CHECK_EQ(PtlMDAttach(me, vdesc(v, 3, 3, PTL_MD_OP_PUT | PTL_MD_TRUNCATE, eq), PTL_UNLINK,
                         &md),
             PTL_OK);
    memset(expect, GAP, sizeof(expect));
    for (int i = 0; i < 64; i++)
        data[i] = (uint8_t)(100 + i);
    /* 12 bytes at 0 (entry 0 and into 1), 20 at 12 (the rest of 1, into 2),
     * then 40 more of which 14 fit. */
    m = harness_req(ONIC_PTL_OP_PUT, 3, 9, 12);
    feed(2, &m, data, 12);
    memcpy(expect, data, 12);
    m.rlength = 20;
    feed(2, &m, data + 12, 20);
    memcpy(expect + 12, data + 12, 20);
    m.rlength = 40;
    feed(2, &m, data + 20, 40);
    memcpy(expect + 32, data + 20, 14);
    CHECK(area_is(v, 3, expect, 46));
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
        CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
        CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
        CHECK_EQ(ev.type, PTL_EVENT_PUT_END);
        CHECK_EQ(ev.offset, i == 0 ? 0 : i == 1 ? 12 : 32);
        CHECK_EQ(ev.mlength, i == 0 ? 12 : i == 1 ? 20 : 14);
        CHECK_EQ(ev.md.threshold, 2 - i);
    }
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    CHECK_EQ(PtlMDUnlink(md), PTL_MD_INVALID);
    PtlFini();
}

/* An overflow entry's vector MD: the kept header points at the data only
 * when it lies within one entry. */
static void test_overflow_header(void)
{
    static const size_t lens[] = {8, 8};
    ptl_md_iovec_t v[2];
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    ptl_ovf_header_t h;
    onic_ptl_msg_t m;
    uint8_t data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    ptl_md_t flat = {data, 16, 1, 0, PTL_MD_OP_PUT, NULL, PTL_EQ_NONE};

    open_ni(0);
    layout(v, lens, 2, 4);
    CHECK_EQ(PtlMEAttachOverflow(nih, 4, ME_ANY, 0, ~UINT64_C(0), PTL_RETAIN, PTL_INS_AFTER,
                                 &me),
             PTL_OK);
    CHECK_EQ(PtlMDAttach(me, vdesc(v, 2, PTL_MD_THRESH_INF, PTL_MD_OP_PUT, PTL_EQ_NONE),
                         PTL_RETAIN, &md),
             PTL_OK);
    m = harness_req(ONIC_PTL_OP_PUT, 4, 1, 6);
    feed(1, &m, data, 6);       /* 0..5: in entry 0 */
    m.match_bits = 2;
    feed(1, &m, data + 6, 6);   /* 6..11: across both */
    CHECK_EQ(PtlMEAttachSearch(nih, 4, ME_ANY, 1, 0, PTL_UNLINK, PTL_INS_AFTER, flat, PTL_UNLINK,
                               &me, &md, &h),
             PTL_OVF_MATCHED);
    CHECK(h.start == v[0].iov_base && h.offset == 0 && h.mlength == 6);
    CHECK_EQ(PtlMEAttachSearch(nih, 4, ME_ANY, 2, 0, PTL_UNLINK, PTL_INS_AFTER, flat, PTL_UNLINK,
                               &me, &md, &h),
             PTL_OVF_MATCHED);
    CHECK(h.start == NULL && h.offset == 6 && h.mlength == 6);
    CHECK_EQ(memcmp(v[0].iov_base, data, 8), 0);
    CHECK_EQ(memcmp(v[1].iov_base, data + 8, 4), 0);
    PtlFini();
}

/* --- gets ---------------------------------------------------------------------- */
/* A get from a vector (the reply gathered) and the initiator's get into a
 * vector (the reply scattered), small ones. */
static void test_get_small(void)
{
    static const size_t lens[] = {3, 9, 0, 20};
    ptl_md_iovec_t v[4];
    uint8_t expect[32], src[32];
    ptl_handle_me_t me;
    ptl_handle_md_t md, gmd;
    ptl_handle_eq_t eq;
    ptl_event_t ev;
    onic_ptl_out_t out;
    onic_ptl_msg_t m, a;

    open_ni(0);
    eq = eq_alloc();
    layout(v, lens, 4, 3);
    for (int i = 0; i < 32; i++)
        *vbyte(v, 4, (size_t)i) = (uint8_t)(200 + i);
    me = me_attach(5, 3);
    CHECK_EQ(PtlMDAttach(me, vdesc(v, 4, PTL_MD_THRESH_INF, PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE,
                                   PTL_EQ_NONE),
                         PTL_RETAIN, &md),
             PTL_OK);
    m = harness_req(ONIC_PTL_OP_GET, 5, 3, 15);
    m.offset = 2;
    out = feed(1, &m, NULL, 0);
    CHECK(out.send && out.len == 15);
    CHECK_EQ(onic_ptl_msg_unpack(&out.hdr, sizeof(out.hdr), &a), ONIC_OK);
    CHECK_EQ(a.op, ONIC_PTL_OP_REPLY);
    for (int i = 0; i < 15; i++)
        REQUIRE(((const uint8_t *)out.payload)[i] == (uint8_t)(202 + i));
    PtlFini();

    /* Our get into a vector: the reply lands across its entries. */
    open_ni(0);
    eq = eq_alloc();
    layout(v, lens, 4, 3);
    for (int i = 0; i < 32; i++)
        src[i] = (uint8_t)(i * 5 + 1);
    me = me_attach(6, 4);
    CHECK_EQ(PtlMDAttach(me, ((ptl_md_t){src, 32, PTL_MD_THRESH_INF, 0, PTL_MD_OP_GET, NULL,
                                          PTL_EQ_NONE}),
                         PTL_RETAIN, &md),
             PTL_OK);
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 4, 1, 0, eq), PTL_UNLINK, &gmd), PTL_OK);
    harness_nsent = 0;
    CHECK_EQ(PtlGetRegion(gmd, 1, 30, SELF, 6, 0, 4, 0), PTL_OK);
    CHECK_EQ(harness_nsent, 1);
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len,
                         harness_sent[0].payload, harness_sent[0].len, &out);
    CHECK(out.send && out.len == 30);
    onic_ptl_target_recv(ni, 0, &out.hdr, out.hdr_len, out.payload, out.len, &out);
    memset(expect, GAP, sizeof(expect));
    memcpy(expect + 1, src, 30);
    CHECK(area_is(v, 4, expect, 32));
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_REPLY_START);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_REPLY_END && ev.mlength == 30 && ev.offset == 1);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_UNLINK);
    PtlFini();
}

/* --- the initiator's puts from a vector ------------------------------------------- */
static void test_put_from_vector(void)
{
    static const size_t lens[] = {4, 11, 2, 50};
    ptl_md_iovec_t v[4];
    ptl_handle_md_t md;
    uint8_t flat[67];

    open_ni(0);
    layout(v, lens, 4, 9);
    for (int i = 0; i < 67; i++)
        flat[i] = *vbyte(v, 4, (size_t)i) = (uint8_t)(i * 3 + 7);
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 4, PTL_MD_THRESH_INF, 0, PTL_EQ_NONE), PTL_RETAIN, &md),
             PTL_OK);
    for (size_t off = 0; off < 67; off += 5) {
        size_t len = 67 - off < 20 ? 67 - off : 20;
        harness_nsent = 0;
        REQUIRE(PtlPutRegion(md, off, len, PTL_NOACK_REQ, SELF, 1, 0, 0, 0, 0) == PTL_OK);
        REQUIRE(harness_nsent == 1 && harness_sent[0].len == len);
        REQUIRE(memcmp(harness_sent[0].payload, flat + off, len) == 0);
    }
    harness_nsent = 0;
    CHECK_EQ(PtlPut(md, PTL_NOACK_REQ, SELF, 1, 0, 0, 0, 0), PTL_OK);
    CHECK(harness_nsent == 1 && harness_sent[0].len == 67 &&
          memcmp(harness_sent[0].payload, flat, 67) == 0);
    CHECK_EQ(PtlPutRegion(md, 60, 8, PTL_NOACK_REQ, SELF, 1, 0, 0, 0, 0), PTL_MD_ILLEGAL);
    PtlFini();
}

/* --- large operations: RMA piece by piece, bounce buffers at the initiator --------- */
#define BIG 6000

/* Carry out the RMA an answer asks for, and the ones after it, until the
 * operation is over; how many pieces moved. The answer at the end in *out. */
static unsigned rma_all(onic_ptl_out_t *out)
{
    unsigned pieces = 0;

    while (out->rma) {
        void *remote = (void *)(uintptr_t)(out->rma_key.addr + out->rma_roffset);
        REQUIRE(out->rma_roffset + out->rma_len <= out->rma_key.len);
        if (out->rma_write)
            memcpy(remote, out->rma_local, out->rma_len);
        else
            memcpy(out->rma_local, remote, out->rma_len);
        pieces++;
        onic_ptl_target_rma_done(ni, out->rma_ctx, ONIC_OK, out);
    }
    return pieces;
}

static void test_large(void)
{
    static const size_t lens[] = {1000, 7, 0, 2500, 493, 2000};
    ptl_md_iovec_t v[6];
    static uint8_t src[BIG], expect[BIG];
    ptl_handle_me_t me;
    ptl_handle_md_t md, smd;
    ptl_handle_eq_t eq, seq;
    ptl_event_t ev;
    onic_ptl_out_t out;
    onic_ptl_msg_t a;
    size_t total;

    /* A large put into a vector at remote offset 1500, truncated to the
     * 4500 bytes left: three pieces (the rest of entry 3, 4, 5). */
    open_ni(0);
    eq = eq_alloc();
    seq = eq_alloc();
    total = layout(v, lens, 6, 11);
    CHECK_EQ(total, BIG);
    for (int i = 0; i < BIG; i++)
        src[i] = (uint8_t)(i * 31 + 5);
    me = me_attach(1, 8);
    CHECK_EQ(PtlMDAttach(me, vdesc(v, 6, 1, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE,
                                   eq),
                         PTL_UNLINK, &md),
             PTL_OK);
    CHECK_EQ(PtlMDBind(nih, ((ptl_md_t){src, BIG, 1, 0, 0, NULL, seq}), PTL_UNLINK, &smd), PTL_OK);
    harness_nsent = 0;
    CHECK_EQ(PtlPutRegion(smd, 0, 5000, PTL_ACK_REQ, SELF, 1, 0, 8, 1500, 0), PTL_OK);
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len,
                         harness_sent[0].payload, harness_sent[0].len, &out);
    CHECK_EQ(rma_all(&out), 3);
    memset(expect, GAP, sizeof(expect));
    memcpy(expect + 1500, src, 4500);
    CHECK(area_is(v, 6, expect, total));
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_PUT_START);
    CHECK_EQ(PtlEQGet(eq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_PUT_END && ev.mlength == 4500 && ev.offset == 1500 &&
          ev.rlength == 5000 && ev.ni_fail_type == PTL_NI_OK);
    CHECK(out.send);
    CHECK_EQ(onic_ptl_msg_unpack(&out.hdr, sizeof(out.hdr), &a), ONIC_OK);
    CHECK(a.op == ONIC_PTL_OP_DONE && a.mlength == 4500);
    PtlFini();

    /* A large put from a vector (gathered into a bounce buffer) and a large
     * get into one (scattered from it at the reply). */
    open_ni(0);
    eq = eq_alloc();
    seq = eq_alloc();
    total = layout(v, lens, 6, 11);
    for (int i = 0; i < BIG; i++)
        *vbyte(v, 6, (size_t)i) = (uint8_t)(i * 17 + 3);
    me = me_attach(2, 1);
    memset(src, 0, sizeof(src));
    CHECK_EQ(PtlMDAttach(me, ((ptl_md_t){src, BIG, PTL_MD_THRESH_INF, 0,
                                          PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE,
                                          NULL, eq}),
                         PTL_RETAIN, &md),
             PTL_OK);
    CHECK_EQ(PtlMDBind(nih, vdesc(v, 6, PTL_MD_THRESH_INF, 0, seq), PTL_RETAIN, &smd), PTL_OK);
    harness_nsent = 0;
    CHECK_EQ(PtlPutRegion(smd, 3, 5900, PTL_NOACK_REQ, SELF, 2, 0, 1, 0, 0), PTL_OK);
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len,
                         harness_sent[0].payload, harness_sent[0].len, &out);
    CHECK_EQ(rma_all(&out), 1);
    for (int i = 0; i < 5900; i++)
        REQUIRE(src[i] == *vbyte(v, 6, (size_t)i + 3));
    CHECK(out.send);
    onic_ptl_target_recv(ni, 0, &out.hdr, out.hdr_len, NULL, 0, &out); /* DONE */
    CHECK(out.dereg);
    CHECK_EQ(PtlEQGet(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_SEND_START);
    CHECK_EQ(PtlEQGet(seq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_SEND_END && ev.ni_fail_type == PTL_NI_OK);
    /* Now get 5000 of them back into the vector at its offset 900. */
    layout(v, lens, 6, 11);
    for (int i = 0; i < BIG; i++)
        src[i] = (uint8_t)(i * 29 + 1);
    harness_nsent = 0;
    CHECK_EQ(PtlGetRegion(smd, 900, 5000, SELF, 2, 0, 1, 40), PTL_OK);
    onic_ptl_target_recv(ni, 0, &harness_sent[0].hdr, harness_sent[0].hdr_len,
                         harness_sent[0].payload, harness_sent[0].len, &out);
    CHECK_EQ(rma_all(&out), 1);
    CHECK(out.send);
    onic_ptl_target_recv(ni, 0, &out.hdr, out.hdr_len, NULL, 0, &out); /* the large reply */
    CHECK(out.dereg);
    memset(expect, GAP, sizeof(expect));
    memcpy(expect + 900, src + 40, 5000);
    CHECK(area_is(v, 6, expect, total));
    CHECK_EQ(PtlEQGet(seq, &ev), PTL_OK);
    CHECK_EQ(ev.type, PTL_EVENT_REPLY_START);
    CHECK_EQ(PtlEQGet(seq, &ev), PTL_OK);
    CHECK(ev.type == PTL_EVENT_REPLY_END && ev.mlength == 5000 && ev.offset == 900);
    /* A get still waiting at PtlFini: its bounce buffer goes with the NI. */
    harness_nsent = 0;
    CHECK_EQ(PtlGetRegion(smd, 0, 3000, SELF, 2, 0, 1, 0), PTL_OK);
    PtlFini();
}

/* PtlMDUpdate: an entry's own flat MD becomes a vector and back (its
 * copy of the vector freed either way: ASan's leak check says). */
static void test_update(void)
{
    static const size_t lens[] = {4, 4, 4};
    ptl_md_iovec_t v[3];
    static uint8_t flat[16];
    uint8_t expect[12], data[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    ptl_handle_me_t me, me2;
    ptl_handle_md_t md, md2;
    ptl_md_t d;
    onic_ptl_msg_t m;

    open_ni(0);
    layout(v, lens, 3, 2);
    me = me_attach(1, 4);
    d = (ptl_md_t){flat, 16, PTL_MD_THRESH_INF, 0, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, NULL,
                   PTL_EQ_NONE};
    CHECK_EQ(PtlMDAttach(me, d, PTL_RETAIN, &md), PTL_OK);
    d = vdesc(v, 3, PTL_MD_THRESH_INF, PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE, PTL_EQ_NONE);
    CHECK_EQ(PtlMDUpdate(md, NULL, &d, PTL_EQ_NONE), PTL_OK);
    m = harness_req(ONIC_PTL_OP_PUT, 1, 4, 10);
    m.offset = 2;
    feed(1, &m, data, 10);
    memset(expect, GAP, sizeof(expect));
    memcpy(expect + 2, data, 10);
    CHECK(area_is(v, 3, expect, 12));
    /* Another entry's own MD made a vector, unlinked as a vector. */
    me2 = me_attach(1, 5);
    d = (ptl_md_t){flat, 16, PTL_MD_THRESH_INF, 0, PTL_MD_OP_PUT, NULL, PTL_EQ_NONE};
    CHECK_EQ(PtlMDAttach(me2, d, PTL_RETAIN, &md2), PTL_OK);
    d = vdesc(v, 2, PTL_MD_THRESH_INF, PTL_MD_OP_PUT, PTL_EQ_NONE);
    CHECK_EQ(PtlMDUpdate(md2, NULL, &d, PTL_EQ_NONE), PTL_OK);
    CHECK_EQ(PtlMEUnlink(me2), PTL_OK);
    /* And the first back to flat. */
    d = (ptl_md_t){flat, 16, PTL_MD_THRESH_INF, 0, PTL_MD_OP_PUT, NULL, PTL_EQ_NONE};
    CHECK_EQ(PtlMDUpdate(md, NULL, &d, PTL_EQ_NONE), PTL_OK);
    m = harness_req(ONIC_PTL_OP_PUT, 1, 4, 3);
    feed(1, &m, data, 3);
    CHECK(flat[0] == 1 && flat[2] == 3);
    CHECK_EQ(PtlMDUnlink(md), PTL_OK);
    PtlFini();
}

int main(void)
{
    test_refused();
    test_put_offsets();
    test_put_local_truncate();
    test_overflow_header();
    test_get_small();
    test_put_from_vector();
    test_large();
    test_update();
    return check_summary("test_ptl_iovec");
}
