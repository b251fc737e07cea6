/* Point-to-point on Portals: the protocols, the unexpected buffers and their
 * credits, progress, probe and cancel (docs/architecture.md, "mpi").
 *
 * Portal ONIC_MPI_PT_P2P carries every message. Its match list holds the
 * posted receives (one ME + MD on the receive buffer each, threshold 1,
 * truncating, ignoring the whole and empty bits); its overflow list holds
 * the unexpected buffers, which take eager messages with data one after
 * another (whole and empty bits clear; the newest buffer first), then one
 * entry keeping the headers of whole rendezvous puts (whole bit set, zero
 * bytes, truncating, never acked), then one taking every empty put
 * (rendezvous requests, empty messages: empty bit set). The three take
 * disjoint sets of puts, so their order is only the buffers' speed. A
 * receive is posted with PtlMEAttachSearch, so it either finds
 * the oldest matching unexpected header or is attached, with no message
 * able to slip in between.
 *
 *   eager (<= ONIC_EAGER_LIMIT, credit left): one put with the data, from
 *       the MD spanning all memory; it lands in the posted buffer or in an
 *       unexpected buffer; the send is complete at once. From
 *       ONIC_EAGER_PULL_MIN up, a non-blocking send whose sender has a
 *       receive posted (traffic both ways) goes by rendezvous instead, put
 *       whole and pulled below, where the receiver pulls by CMA.
 *   rendezvous put whole (larger, synchronous or not): the sender exposes
 *       its buffer on ONIC_MPI_PT_RNDV under a cookie and puts the whole
 *       buffer from that MD, acked, with ONIC_MPI_BITS_WHOLE and cookie and
 *       length in hdr_data (a mid-size one with PTL_MD_PUT_PULLED, which
 *       makes it a large put too, where the receiver pulls by CMA). Into a
 *       posted receive the receiver's Portals moves the data (a large put:
 *       RMA) with no MPI call there, and the ACK completes the send.
 *       Unexpected, only its header is kept, no ACK comes, and the receive
 *       pulls as below. Either way the send is over only once the put's own
 *       SEND_END is in too (send_put_end).
 *   rendezvous request (small without credit, small synchronous, or a
 *       transport that refuses a long put): the same exposure and a
 *       zero-byte put carrying cookie and length; once it matches, the
 *       receiver pulls with gets and the sender completes once the gets
 *       have taken every byte (a cut-short pull ends, after the others,
 *       with a zero-byte get at the end of the buffer).
 *
 * Progress happens inside MPI calls: onic_mpi_progress drains the one event
 * queue; blocking calls wait in PtlEQPoll, which sleeps in the transport. */
#include "mpi/mpi_impl.h"
#include "base/config.h"
#include "base/copy.h"
#include "base/log.h"
#include "base/mem.h"
#include "ptl/post.h"

#include <string.h>

/* One less than a power of two: the queue's ring has a slot more than it
 * holds (PtlEQGetInPlace), in a power of two. */
#define P2P_EQ_MIN (16384u - 1)
#define P2P_EQ_MAX ((1u << 20) - 1)
/* Zero-byte arrivals' events only wake a blocked probe: a few do, overflow
 * is harmless, and a short queue keeps the drain after a burst of a
 * thousand rendezvous requests from landing in some later call's time
 * (63: a ring of 64, as the others one less than a power of two). */
#define P2P_EQ_UNEXP 63u
#define P2P_WAIT_MS 200 /* a blocked wait looks up again this often */
#define P2P_WAIT_BATCH 64 /* events a wait handles before its caller looks */
#define P2P_START_DRAIN 8 /* starts between two drains: see onic_mpi_p2p_start */

static const ptl_process_id_t p2p_any = {PTL_NID_ANY, PTL_PID_ANY};

static ptl_process_id_t p2p_pid(uint32_t world)
{
    ptl_process_id_t id = {0, world};
    return id;
}

/* A Portals failure inside progress has no call to return through: the
 * state it leaves cannot be trusted, so the job stops with a clear report. */
static _Noreturn void p2p_fatal(const char *what, int rc)
{
    onic_mpi_err(NULL, MPI_ERR_INTERN, "MPI progress", "the Portals layer failed to %s: %s",
                 what, PtlErrorStr(rc));
    onic_mpi_die(MPI_ERR_INTERN); /* even under MPI_ERRORS_RETURN */
}

/* --- Unexpected buffers and credits ----------------------------------------------- *
 *
 * Credit is counted in bytes: an eager message costs its sender
 * onic_mpi_charge(length) of its credit at the receiver, which returns it once
 * the message is received. The receiver keeps ubuf_slack, a lower bound of
 * (space its posted buffers are sure to take) - (credit its senders hold),
 * at 0 or more, so every eager message finds room:
 *   - a posted buffer is sure to take all but ubuf_max - 1 of its bytes
 *     (it takes messages while ubuf_max is left): +ubuf_sure();
 *   - an arrival costs its sender at least its length in credit and the
 *     buffer at most that much sure space: the bound holds unchanged;
 *   - an unlinked buffer took `charged` credit for its ubuf_sure(): the
 *     difference is added back then;
 *   - a message matching a posted receive costs credit and no space: its
 *     charge is added back when it arrives;
 *   - credit goes back to a sender only with slack behind it: buffers are
 *     added first when there is too little. */
#define P2P_UBUF_HDR   64u  /* the descriptor's cache line, before the data */
#define P2P_UBUF_MIN   (64u << 10)

static int64_t ubuf_sure(void)
{
    return (int64_t)(onic_mpi_g.ubuf_size - P2P_UBUF_HDR - onic_mpi_g.ubuf_max + 1);
}

static __attribute__((cold, noinline)) void ubuf_post(onic_mpi_ubuf_t *b)
{
    ptl_md_t md = {
        .start = (char *)b + P2P_UBUF_HDR,
        .length = onic_mpi_g.ubuf_size - P2P_UBUF_HDR,
        .threshold = PTL_MD_THRESH_INF,
        .max_size = onic_mpi_g.ubuf_max,
        /* PUT_END says how much landed (and wakes a blocked probe); the
         * UNLINK that follows the last one says the buffer is full. */
        .options = PTL_MD_OP_PUT | PTL_MD_MAX_SIZE | PTL_MD_EVENT_START_DISABLE,
        .user_ptr = b,
        .eq_handle = onic_mpi_g.eq,
    };
    ptl_handle_me_t me;
    ptl_handle_md_t mdh;
    int rc;

    /* Puts with data, not whole: no other overflow entry takes one, so the
     * buffers go first and a message finds one at the list's front. */
    rc = PtlMEAttachOverflow(onic_mpi_g.ni, ONIC_MPI_PT_P2P, p2p_any, 0,
                             ~(ONIC_MPI_BITS_WHOLE | ONIC_MPI_BITS_EMPTY), PTL_UNLINK,
                             PTL_INS_BEFORE, &me);
    if (rc != PTL_OK)
        p2p_fatal("attach an unexpected-message buffer", rc);
    if ((rc = PtlMDAttach(me, md, PTL_UNLINK, &mdh)) != PTL_OK)
        p2p_fatal("attach an unexpected-message buffer's memory", rc);
    b->landed = b->charged = b->consumed = 0;
    b->linked = 1;
    onic_mpi_g.ubuf_slack += ubuf_sure();
}

static __attribute__((cold, noinline)) int ubuf_add(void)
{
    /* A cache (onic_cache_alloc): how many buffers there are follows the
     * most unexpected data at once, which timing decides. */
    onic_mpi_ubuf_t *b = onic_cache_alloc(onic_mpi_g.ubuf_size, onic_mpi_g.ubuf_size);

    if (b == NULL)
        return 0;
    onic_debug("mpi: rank %d: another %zu-byte unexpected-message buffer (slack %lld)",
               onic_mpi_g.rank, onic_mpi_g.ubuf_size, (long long)onic_mpi_g.ubuf_slack);
    b->next = onic_mpi_g.ubufs;
    onic_mpi_g.ubufs = b;
    ubuf_post(b);
    return 1;
}

/* The buffer a kept header's data is in. */
static onic_mpi_ubuf_t *ubuf_of(const void *data)
{
    return (onic_mpi_ubuf_t *)((uintptr_t)data & ~(uintptr_t)(onic_mpi_g.ubuf_size - 1));
}

static void ubuf_recycle(onic_mpi_ubuf_t *b)
{
    if (!b->linked && b->consumed == b->landed)
        ubuf_post(b);
}

static void ubuf_landed(onic_mpi_ubuf_t *b, const ptl_event_t *ev)
{
    b->landed += ev->mlength;
    b->charged += onic_mpi_charge(ev->rlength);
}

static void ubuf_unlinked(onic_mpi_ubuf_t *b)
{
    b->linked = 0;
    onic_mpi_g.ubuf_slack += (int64_t)b->charged - ubuf_sure();
    ubuf_recycle(b);
}

/* A message of `initiator` costing `charge` was received: its credit goes
 * back, in batches of half the credit so a stream costs one small put per
 * batch. */
static __attribute__((noinline)) void credit_return(uint32_t initiator)
{
    uint64_t *owed = &onic_mpi_g.owed[initiator];
    int rc;

    while (onic_mpi_g.ubuf_slack < (int64_t)*owed)
        if (!ubuf_add()) {
            onic_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI progress", "no memory for another "
                         "%zu-byte unexpected-message buffer", onic_mpi_g.ubuf_size);
            onic_mpi_die(MPI_ERR_NO_MEM);
        }
    onic_mpi_g.ubuf_slack -= (int64_t)*owed;
    rc = PtlPut(onic_mpi_g.zero_md, PTL_NOACK_REQ, p2p_pid(initiator), ONIC_MPI_PT_CREDIT, 0, 0,
                0, *owed);
    if (rc != PTL_OK)
        p2p_fatal("return eager credits", rc);
    *owed = 0;
}

static void credit_owe(uint32_t initiator, uint64_t charge)
{
    uint64_t *owed = &onic_mpi_g.owed[initiator];

    *owed += charge;
    if (*owed >= onic_mpi_g.credits_per_peer / 2 && !onic_mpi_g.finalizing)
        credit_return(initiator);
}

/* The data of an unexpected eager message has been copied out. */
static void ubuf_consumed(const ptl_ovf_header_t *h)
{
    onic_mpi_ubuf_t *b = ubuf_of(h->start);

    b->consumed += h->mlength;
    credit_owe(h->initiator.pid, onic_mpi_charge(h->rlength));
    ubuf_recycle(b);
}

/* --- The receive side ------------------------------------------------------------------ */
static void recv_envelope(onic_mpi_req_t *r, ptl_match_bits_t bits)
{
    r->status.MPI_SOURCE = (int)(bits >> 24 & 0xffffff);
    r->status.MPI_TAG = (int)(bits & ONIC_MPI_BITS_TAG);
}

/* A receive of a non-contiguous type that lands in place (request.c,
 * req_start): its MD is an I/O vector over the type's blocks in r->buf. */
static inline int recv_in_place(const onic_mpi_req_t *r)
{
    return r->data == NULL && r->bytes > 0;
}

/* got bytes are in r->data (or in place); the sender had sent. */
static void recv_finish(onic_mpi_req_t *r, uint64_t got, uint64_t sent)
{
    if (r->pack != NULL)
        onic_mpi_type_unpack(r->type, r->pack, got, r->buf, r->count);
    r->status.onic_count = (long long)got;
    r->status.MPI_ERROR = sent > got ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    onic_mpi_req_complete(r);
}

static __attribute__((cold, noinline)) void recv_fail(onic_mpi_req_t *r, const char *what, int rc)
{
    onic_error("mpi: rank %d: a receive from rank %d failed: cannot %s: %s", onic_mpi_g.rank,
               r->status.MPI_SOURCE, what, PtlErrorStr(rc));
    r->status.MPI_ERROR = MPI_ERR_INTERN;
    onic_mpi_req_complete(r);
}

/* Ask for more of a rendezvous message: at most `budget` gets now, so one
 * event never adds more than a few transport polls' worth of events. */
static __attribute__((noinline)) void rndv_pull(onic_mpi_req_t *r, unsigned budget)
{
    int rc;

    while (budget > 0 && r->rv_inflight < ONIC_MPI_PULL_DEPTH && r->rv_issued < r->rv_want) {
        uint64_t n = r->rv_want - r->rv_issued;
        if (n > onic_mpi_g.get_chunk)
            n = onic_mpi_g.get_chunk;
        rc = PtlGetRegion(r->md, r->rv_issued, n, p2p_pid(r->rv_peer), ONIC_MPI_PT_RNDV, 0,
                          r->rv_cookie, r->rv_issued);
        if (rc == PTL_FAIL && n > 64) {
            /* Refused before anything was sent: too long for this transport. */
            onic_mpi_g.get_chunk = n / 2;
            onic_warn("mpi: Portals refused a %llu-byte get; pulling in %llu-byte pieces",
                      (unsigned long long)n, (unsigned long long)onic_mpi_g.get_chunk);
            continue;
        }
        if (rc != PTL_OK)
            p2p_fatal("pull a rendezvous message", rc);
        r->rv_issued += n;
        r->rv_inflight++;
        budget--;
    }
    /* A pull that stops short of the sender's end (a short buffer, or an
     * empty message) ends with a zero-byte get at that end, which is what
     * tells the sender it is done -- sent once every other get's reply is
     * in: a large get's data may still be moving at the sender when its
     * get is out (over ofi, an RMA write of the sender's), and the sender
     * unlinks its buffer at the end event. */
    if (budget > 0 && r->rv_issued == r->rv_want && r->rv_inflight == 0 && !r->rv_final_sent &&
        (r->rv_want < r->rv_total || r->rv_total == 0)) {
        rc = PtlGetRegion(r->md, r->rv_want, 0, p2p_pid(r->rv_peer), ONIC_MPI_PT_RNDV, 0,
                          r->rv_cookie, r->rv_total);
        if (rc != PTL_OK)
            p2p_fatal("end a rendezvous pull", rc);
        r->rv_final_sent = 1;
        r->rv_inflight++;
    }
}

static int rndv_pull_done(const onic_mpi_req_t *r)
{
    int final_needed = r->rv_want < r->rv_total || r->rv_total == 0;
    return r->rv_issued == r->rv_want && (!final_needed || r->rv_final_sent) &&
           r->rv_inflight == 0;
}

static __attribute__((noinline)) void rndv_start(onic_mpi_req_t *r, uint32_t peer, ptl_hdr_data_t hdr)
{
    ptl_md_t md;
    int rc;

    r->rv_peer = peer;
    r->rv_cookie = hdr >> 42 & ONIC_MPI_COOKIE_MASK;
    r->rv_total = hdr & ONIC_MPI_LEN_MAX;
    r->rv_want = r->rv_total < r->bytes ? r->rv_total : r->bytes;
    r->rv_issued = 0;
    r->rv_inflight = 0;
    r->rv_final_sent = 0;
    /* A pull lands packed, even for a receive that would land in place: its
     * gets are large ones, which would move through a bounce buffer anyway
     * (the transport registers contiguous memory only). */
    if (recv_in_place(r)) {
        if ((r->pack = onic_malloc(r->bytes)) == NULL) {
            recv_fail(r, "allocate a buffer to pull a rendezvous message into", PTL_NO_SPACE);
            return;
        }
        r->holds |= ONIC_MPI_HOLDS_PACK;
        r->data = r->pack;
    }
    memset(&md, 0, sizeof(md));
    md.start = r->rv_want > 0 ? r->data : NULL;
    md.length = r->rv_want;
    md.threshold = PTL_MD_THRESH_INF;
    md.options = PTL_MD_EVENT_START_DISABLE;
    md.user_ptr = r;
    md.eq_handle = onic_mpi_g.eq;
    if ((rc = PtlMDBind(onic_mpi_g.ni, md, PTL_RETAIN, &r->md)) != PTL_OK) {
        recv_fail(r, "bind the receive buffer for a rendezvous pull", rc);
        return;
    }
    rndv_pull(r, 2);
}

/* A get of a pull failed at the sender (it could not move the data): ask
 * for nothing more; once the gets in flight are in, the pull ends as a
 * cut-short one (the zero-byte get that tells the sender it is over) and
 * the receive fails. */
static __attribute__((cold, noinline)) void rndv_failed(onic_mpi_req_t *r)
{
    if (r->status.MPI_ERROR == MPI_SUCCESS)
        onic_error("mpi: rank %d: a receive of %llu bytes from rank %u failed: the sender "
                   "could not move its data", onic_mpi_g.rank,
                   (unsigned long long)r->rv_total, r->rv_peer);
    r->status.MPI_ERROR = MPI_ERR_OTHER;
    r->rv_want = r->rv_issued;
}

static __attribute__((noinline)) void rndv_reply(onic_mpi_req_t *r, const ptl_event_t *ev)
{
    int rc;

    r->rv_inflight--;
    if (ev->ni_fail_type != PTL_NI_OK)
        rndv_failed(r);
    rndv_pull(r, 2);
    if (!rndv_pull_done(r))
        return;
    if ((rc = PtlMDUnlink(r->md)) != PTL_OK)
        onic_error("mpi: cannot unlink a finished pull's MD: %s", PtlErrorStr(rc));
    r->md = PTL_INVALID_HANDLE;
    if (r->status.MPI_ERROR != MPI_SUCCESS) {
        r->status.onic_count = 0;
        onic_mpi_req_complete(r);
        return;
    }
    recv_finish(r, r->rv_want, r->rv_total);
}

/* A message for r, found among the unexpected headers. */
static void recv_consume(onic_mpi_req_t *r, const ptl_ovf_header_t *h)
{
    recv_envelope(r, h->match_bits);
    if ((h->hdr_data >> 62) == ONIC_MPI_HDR_RNDV) {
        rndv_start(r, h->initiator.pid, h->hdr_data);
        return;
    }
    uint64_t got = h->mlength < r->bytes ? h->mlength : r->bytes;
    if (got > 0 && __builtin_expect(recv_in_place(r), 0))
        onic_mpi_type_unpack(r->type, h->start, got, r->buf, r->count); /* (out of line) */
    else if (got > 0)
        onic_copy(r->data, h->start, got);
    if (h->rlength > 0)
        ubuf_consumed(h);
    recv_finish(r, got, h->rlength);
}

/* A posted receive took a message (PUT_END). Its ME and MD are gone. */
static void recv_matched(onic_mpi_req_t *r, const ptl_event_t *ev)
{
    r->me = PTL_INVALID_HANDLE;
    recv_envelope(r, ev->match_bits);
    if (ev->match_bits & ONIC_MPI_BITS_WHOLE) {
        /* A rendezvous message put whole: Portals has moved what fits. */
        if (ev->ni_fail_type != PTL_NI_OK) {
            recv_fail(r, "move a rendezvous message", PTL_FAIL);
            return;
        }
        recv_finish(r, ev->mlength, ev->rlength);
        return;
    }
    if ((ev->hdr_data >> 62) == ONIC_MPI_HDR_RNDV) {
        rndv_start(r, ev->initiator.pid, ev->hdr_data);
        return;
    }
    if (ev->rlength > 0) {
        uint64_t charge = onic_mpi_charge(ev->rlength);
        onic_mpi_g.ubuf_slack += (int64_t)charge; /* credit spent, no space taken */
        credit_owe(ev->initiator.pid, charge);
    }
    recv_finish(r, ev->mlength, ev->rlength);
}

/* --- The send side ---------------------------------------------------------------------- */
static void send_done(onic_mpi_req_t *r)
{
    onic_mpi_req_complete(r);
}

/* The data of rendezvous send r could not move: the send completes with an
 * error (once no event of its can come any more). */
static __attribute__((cold, noinline)) void send_failed(onic_mpi_req_t *r, const char *what)
{
    if (r->status.MPI_ERROR != MPI_SUCCESS)
        return; /* said once */
    onic_error("mpi: rank %d: a send of %llu bytes failed: its data could not %s",
               onic_mpi_g.rank, (unsigned long long)r->bytes, what);
    r->status.MPI_ERROR = MPI_ERR_OTHER;
}

/* A rendezvous send is over: its exposed buffer goes, and with it the last
 * reference Portals had to r. The receiver took what it needed and no more
 * gets will come, so the unlink need not wait (under onload, waiting would
 * wake a sleeping engine inside MPI_Wait, about 15 us of the application's
 * time per send). */
static void send_exposed_done(onic_mpi_req_t *r)
{
    int rc;

    if ((rc = PtlMEUnlinkAsync(r->me)) != PTL_OK)
        onic_error("mpi: cannot unlink a finished send's exposed buffer: %s", PtlErrorStr(rc));
    r->me = PTL_INVALID_HANDLE;
    send_done(r);
}

/* GET_END on an exposed buffer: done when the gets have taken every byte,
 * or at the zero-byte get at its end that closes a cut-short pull (sent
 * once the others are over) -- and, for a whole put kept without its
 * data, once that put's SEND_END is in too (its DONE left the receiver
 * before any get; this only guards the order of the two on the way in).
 * Not at the get that reaches the end: with several in flight, a provider
 * may finish that one before the others. */
static void send_pulled(onic_mpi_req_t *r, const ptl_event_t *ev)
{
    if (ev->ni_fail_type != PTL_NI_OK) {
        /* This get moved nothing (the receiver's pull fails, see
         * rndv_reply): its bytes count as taken, so the send ends -- with
         * the error -- once the other gets are in, or at the zero-byte get
         * that ends the pull. */
        send_failed(r, "be pulled by the receiver");
        r->sv_got += ev->rlength;
    } else {
        r->sv_got += ev->mlength;
    }
    if (r->sv_got != r->bytes && !(ev->mlength == 0 && ev->offset == r->bytes))
        return;
    if (r->sv_put_open) {
        r->sv_pulled = 1;
        return;
    }
    send_exposed_done(r);
}

/* SEND_END of a whole put: the receiver's Portals is done with the put.
 * If it landed in a posted receive, the ACK follows (in the same batch of
 * events) and completes the send; if it was kept without its data, the
 * pull completes it, perhaps already has. If the receiver could not move
 * it into its posted receive (failed: no ACK, and that receive failed, so
 * no get comes either), the send ends here with the error. */
static void send_put_end(onic_mpi_req_t *r, const ptl_event_t *ev)
{
    r->sv_put_open = 0;
    if (ev->ni_fail_type != PTL_NI_OK) {
        send_failed(r, "be moved into the posted receive");
        send_exposed_done(r);
        return;
    }
    if (r->sv_pulled)
        send_exposed_done(r);
}

/* The ACK of a whole put: it landed in a posted receive, whose data is
 * there; no get will come. Its SEND_END was posted before it. */
static void send_acked(onic_mpi_req_t *r)
{
    send_exposed_done(r);
}

void onic_mpi_bundle_begin(void)
{
    if (!onic_mpi_g.bundle_open)
        onic_mpi_g.bundle_open = PtlStartBundle(onic_mpi_g.ni) == PTL_OK;
}

void onic_mpi_bundle_end(void)
{
    int rc;

    onic_mpi_g.bundle_open = 0;
    /* Fails only where a peer became unreachable, which the transport
     * reported; sends to it fail from now on. */
    if ((rc = PtlEndBundle(onic_mpi_g.ni)) != PTL_OK)
        onic_warn("mpi: ending a bundle of sends: %s", PtlErrorStr(rc));
}

/* Drain what earlier calls' polls recorded, so a long run of sends or
 * receives without a wait never lets the event queue overflow -- but
 * only every few starts: draining polls, and a poll between posting
 * receives turns messages that would have found their receive into
 * unexpected ones, which cost several times more. P2P_START_DRAIN
 * polls' worth of events fit the queue (see its size in init).
 *
 * Sends drain only under onload (onic_mpi_g.drain_sends): see
 * onic_mpi_p2p_start. */
static void p2p_start_drain(void)
{
    if (++onic_mpi_g.starts_undrained >= P2P_START_DRAIN) {
        onic_mpi_g.starts_undrained = 0;
        onic_mpi_progress(0);
    }
}

/* The eager limit, and eager_quick under it. */
static void p2p_set_eager_limit(size_t limit)
{
    onic_mpi_g.eager_limit = limit;
    onic_mpi_g.eager_quick = onic_mpi_g.pull_min > 0 && onic_mpi_g.pull_min <= limit
                                 ? onic_mpi_g.pull_min - 1
                                 : limit;
}

/* onic_mpi_p2p_send_eager's other paths: a message from ONIC_EAGER_PULL_MIN
 * to the eager limit, no credit (poll, then decide), or Portals refused the
 * put. Out of line: inlined into the flattened receive and progress calls,
 * it moved their hot code about and made 8-byte ping-pong 10 % slower. */
__attribute__((noinline)) int onic_mpi_p2p_send_eager_slow(onic_mpi_comm_t *c, int coll,
                                                           int peer, int tag, const void *data,
                                                           size_t bytes, int may_pull,
                                                           const char *call)
{
    uint32_t dest = onic_mpi_comm_world_rank(c, peer);
    int rc;

    if (bytes > onic_mpi_g.eager_limit)
        return ONIC_MPI_NOT_EAGER;
    /* This process waits for messages too (traffic both ways, as in a halo
     * exchange): eager, each core would copy what it sends into the
     * transport and what it receives out of it; pulled, each copies only
     * what it receives, once, and the sender's core is free for its own
     * receives (docs/architecture.md, "Mid-size messages both ways"). Not
     * for a blocking send (may_pull 0), which would then wait for its
     * receive: a program that sends before it receives, relying on eager
     * buffering, is not stopped by an unrelated receive it has posted. And
     * only where the receiver pulls in one copy of its own (by CMA):
     * elsewhere the pull would need this process's copy. */
    if (may_pull && bytes > onic_mpi_g.eager_quick &&
        onic_ptl_recv_posted(onic_mpi_g.ni, ONIC_MPI_PT_P2P) &&
        onic_ptl_put_pulls(onic_mpi_g.ni, dest))
        return ONIC_MPI_PULL;
    if (bytes > 0 && onic_mpi_g.credits[dest] < onic_mpi_charge(bytes)) {
        /* Out of credit at dest. What it has given back may be waiting in
         * our transport: a send without credit polls, and goes by
         * rendezvous only if still short. This is also where a process
         * that does nothing but send serves its peers (their credit
         * returns, pulls from its exposed buffers): eager sends do not
         * poll, and at the latest when a receiver's credit runs out this
         * one does (a rendezvous send then waits, polling, in its own
         * call). */
        onic_mpi_progress(0);
        if (onic_mpi_g.credits[dest] < onic_mpi_charge(bytes))
            return ONIC_MPI_NOT_EAGER;
    }
    rc = onic_mpi_p2p_put_eager(c, coll, dest, tag, data, bytes);
    if (rc == PTL_OK) {
        if (bytes > 0)
            onic_mpi_g.credits[dest] -= onic_mpi_charge(bytes);
        return MPI_SUCCESS;
    }
    return onic_mpi_p2p_send_refused(c, bytes, rc, call);
}

int onic_mpi_p2p_send_refused(onic_mpi_comm_t *c, size_t bytes, int rc, const char *call)
{
    if (rc != PTL_FAIL || bytes == 0)
        return onic_mpi_err_ptl(c, call, "put an eager message", rc);
    /* Refused before anything was sent: more than this transport puts in
     * one message. This one and larger ones go by rendezvous. */
    p2p_set_eager_limit(bytes / 2);
    onic_warn("mpi: Portals refused a %zu-byte put; eager messages are now at most %zu bytes "
              "(set ONIC_EAGER_LIMIT lower to avoid this)", bytes, onic_mpi_g.eager_limit);
    return ONIC_MPI_NOT_EAGER;
}

int onic_mpi_p2p_send_now(onic_mpi_comm_t *c, int peer, int tag, const void *data, size_t bytes,
                          const char *call)
{
    int rc = onic_mpi_p2p_send_eager(c, 0, peer, tag, data, bytes, 0, call);

    /* Complete once put: nothing to poll for (onic_mpi_p2p_start). */
    if (__builtin_expect(onic_mpi_g.drain_sends, 0) && rc == MPI_SUCCESS)
        p2p_start_drain();
    return rc;
}

static int send_start(onic_mpi_req_t *r)
{
    onic_mpi_comm_t *c = r->comm;
    uint32_t dest = onic_mpi_comm_world_rank(c, r->peer);
    unsigned ctx = 2u * (unsigned)c->id + (unsigned)r->coll;
    ptl_match_bits_t bits = onic_mpi_bits(ctx, (unsigned)c->rank, (unsigned)r->tag);
    ptl_md_t md;
    ptl_handle_md_t mdh;
    uint64_t cookie;
    int rc, pull = 0;

    if (r->mode != ONIC_MPI_MODE_SYNC) {
        rc = onic_mpi_p2p_send_eager(c, r->coll, r->peer, r->tag, r->data, r->bytes,
                                     !onic_mpi_g.start_blocking, r->call);
        if (rc == MPI_SUCCESS)
            send_done(r);
        if (rc != ONIC_MPI_NOT_EAGER && rc != ONIC_MPI_PULL)
            return rc;
        pull = rc == ONIC_MPI_PULL;
    }
    memset(&md, 0, sizeof(md));
    /* Rendezvous: expose the buffer to dest alone, under a cookie no other
     * exposed buffer of this process has (fewer than 2^20 MEs can exist). */
    cookie = onic_mpi_g.next_cookie++ & ONIC_MPI_COOKIE_MASK;
    rc = PtlMEAttach(onic_mpi_g.ni, ONIC_MPI_PT_RNDV, p2p_pid(dest), cookie, 0, PTL_UNLINK,
                     PTL_INS_AFTER, &r->me);
    if (rc != PTL_OK)
        return onic_mpi_err_ptl(c, r->call, "expose a send buffer", rc);
    md.start = r->bytes > 0 ? r->data : NULL;
    md.length = r->bytes;
    md.threshold = PTL_MD_THRESH_INF;
    md.options = PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_EVENT_START_DISABLE |
                 (pull ? PTL_MD_PUT_PULLED : 0);
    md.user_ptr = r;
    md.eq_handle = onic_mpi_g.eq;
    if ((rc = PtlMDAttach(r->me, md, PTL_UNLINK, &mdh)) != PTL_OK)
        goto err_unlink_me;
    r->sv_put_open = r->sv_pulled = 0;
    r->sv_got = 0;
    if ((r->bytes > onic_mpi_g.eager_limit || pull) && !onic_mpi_g.whole_off) {
        /* The whole message, from the exposed MD itself, so its SEND_END
         * and ACK come to this request: a posted receive takes the data
         * (the receiver's Portals pulls it, no MPI call needed there) and
         * acks; the overflow list keeps only the header, never acks, and
         * the receive pulls later. */
        r->sv_put_open = 1;
        rc = PtlPutRegion(mdh, 0, r->bytes, PTL_ACK_REQ, p2p_pid(dest), ONIC_MPI_PT_P2P, 0,
                          bits | ONIC_MPI_BITS_WHOLE, 0,
                          onic_mpi_hdr(ONIC_MPI_HDR_RNDV, cookie, r->bytes));
        if (rc == PTL_OK)
            return MPI_SUCCESS;
        r->sv_put_open = 0;
        if (rc != PTL_FAIL)
            goto err_unlink_me;
        /* Refused before anything was sent: this transport has no RMA for
         * a put that long. The request below still works (gets are cut to
         * what it moves). */
        onic_mpi_g.whole_off = 1;
        onic_warn("mpi: Portals refused a %zu-byte put; rendezvous messages now wait for "
                  "their receiver's MPI calls to move", r->bytes);
    }
    rc = PtlPut(onic_mpi_g.zero_md, PTL_NOACK_REQ, p2p_pid(dest), ONIC_MPI_PT_P2P, 0,
                bits | ONIC_MPI_BITS_EMPTY, 0,
                onic_mpi_hdr(ONIC_MPI_HDR_RNDV, cookie, r->bytes));
    if (rc != PTL_OK)
        goto err_unlink_me;
    return MPI_SUCCESS;

err_unlink_me:
    PtlMEUnlink(r->me);
    r->me = PTL_INVALID_HANDLE;
    return onic_mpi_err_ptl(c, r->call, "start a rendezvous send", rc);
}

/* --- Headers taken out of Portals by probes --------------------------------------------- */
typedef struct p2p_query {
    ptl_process_id_t id;      /* the source's pid, or any */
    ptl_match_bits_t bits, ignore;
} p2p_query_t;

static void p2p_query_make(onic_mpi_comm_t *c, int coll, int source, int tag, p2p_query_t *q)
{
    unsigned ctx = 2u * (unsigned)c->id + (unsigned)coll;

    q->bits = onic_mpi_bits(ctx, source == MPI_ANY_SOURCE ? 0 : (unsigned)source,
                            tag == MPI_ANY_TAG ? 0 : (unsigned)tag);
    /* Any message, put whole or not. */
    q->ignore = ONIC_MPI_BITS_WHOLE | ONIC_MPI_BITS_EMPTY | (source == MPI_ANY_SOURCE ? ONIC_MPI_BITS_SRC : 0) |
                (tag == MPI_ANY_TAG ? ONIC_MPI_BITS_TAG : 0);
    q->id = source == MPI_ANY_SOURCE ? p2p_any : p2p_pid(onic_mpi_comm_world_rank(c, source));
}

/* As Portals matches: the bits, and the sender's pid unless any. A source's
 * rank in the bits alone is not enough: MPI_Comm_create_group's members
 * agree over the parent's context numbered by their ranks in the group, so
 * two senders can put the same bits and only the pid tells them apart. */
static int p2p_query_hit(const p2p_query_t *q, const ptl_ovf_header_t *h)
{
    return ((h->match_bits ^ q->bits) & ~q->ignore) == 0 &&
           (q->id.pid == PTL_PID_ANY || q->id.pid == h->initiator.pid);
}

/* The oldest pulled header matching q. Headers are pulled from Portals
 * oldest first per sender, so the pulled list holds a prefix of each
 * sender's unexpected messages: a match here is older than any matching
 * header of the same sender still in Portals (the non-overtaking rule). */
static __attribute__((noinline)) onic_mpi_pulled_t *pulled_find(const p2p_query_t *q)
{
    onic_dlist_t *l;

    for (l = onic_mpi_g.pulled.next; l != &onic_mpi_g.pulled; l = l->next) {
        onic_mpi_pulled_t *p = onic_container_of(l, onic_mpi_pulled_t, link);
        if (p2p_query_hit(q, &p->hdr))
            return p;
    }
    return NULL;
}

/* Take the oldest unexpected header from `from` (a pid or any) out of
 * Portals into the pulled list; NULL if there is none. The search attaches
 * an entry when it finds nothing; it takes nothing (its MD is used up) and
 * goes at once, before any poll could deliver into it. */
static __attribute__((noinline)) onic_mpi_pulled_t *pulled_take(ptl_process_id_t from, const char *call, int *rc_p)
{
    ptl_md_t md;
    ptl_handle_me_t me;
    ptl_handle_md_t mdh;
    onic_mpi_pulled_t *p;
    int rc;

    *rc_p = MPI_SUCCESS;
    memset(&md, 0, sizeof(md));
    md.threshold = 0;
    md.eq_handle = PTL_EQ_NONE;
    p = onic_malloc(sizeof(*p));
    if (p == NULL) {
        *rc_p = onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory to keep a probed header");
        return NULL;
    }
    rc = PtlMEAttachSearch(onic_mpi_g.ni, ONIC_MPI_PT_P2P, from, 0, ~UINT64_C(0), PTL_UNLINK,
                           PTL_INS_BEFORE, md, PTL_UNLINK, &me, &mdh, &p->hdr);
    if (rc == PTL_OVF_MATCHED) {
        onic_dlist_push_tail(&onic_mpi_g.pulled, &p->link);
        return p;
    }
    onic_free(p);
    if (rc == PTL_OK) {
        if ((rc = PtlMEUnlink(me)) != PTL_OK)
            p2p_fatal("remove a probe's search entry", rc);
        return NULL;
    }
    *rc_p = onic_mpi_err_ptl(NULL, call, "search the unexpected messages", rc);
    return NULL;
}

static uint64_t hdr_length(const ptl_ovf_header_t *h)
{
    return (h->hdr_data >> 62) == ONIC_MPI_HDR_RNDV ? (h->hdr_data & ONIC_MPI_LEN_MAX)
                                                    : h->rlength;
}

void onic_mpi_p2p_hdr_status(const ptl_ovf_header_t *h, MPI_Status *status)
{
    status->MPI_SOURCE = (int)(h->match_bits >> 24 & 0xffffff);
    status->MPI_TAG = (int)(h->match_bits & ONIC_MPI_BITS_TAG);
    status->onic_count = (long long)hdr_length(h);
    status->onic_cancelled = 0;
}

/* The oldest message matching (source, tag) in the pulled list, pulled
 * out of Portals if need be; NULL (rc: MPI_SUCCESS or the error) if none. */
static onic_mpi_pulled_t *probe_find(onic_mpi_comm_t *comm, int coll, int source, int tag,
                                     const char *call, int *rc_p)
{
    p2p_query_t q;
    onic_mpi_pulled_t *p;

    onic_mpi_progress(0);
    p2p_query_make(comm, coll, source, tag, &q);
    p = pulled_find(&q);
    while (p == NULL) {
        p = pulled_take(q.id, call, rc_p);
        if (p == NULL)
            return NULL;
        if (!p2p_query_hit(&q, &p->hdr))
            p = NULL;
    }
    return p;
}

int onic_mpi_p2p_iprobe(onic_mpi_comm_t *comm, int coll, int source, int tag, int *flag,
                        MPI_Status *status, const char *call)
{
    int rc = MPI_SUCCESS;
    onic_mpi_pulled_t *p = probe_find(comm, coll, source, tag, call, &rc);

    *flag = p != NULL;
    if (p != NULL && status != MPI_STATUS_IGNORE)
        onic_mpi_p2p_hdr_status(&p->hdr, status);
    return rc;
}

int onic_mpi_p2p_improbe(onic_mpi_comm_t *comm, int source, int tag, int *flag,
                         ptl_ovf_header_t *h_p, const char *call)
{
    int rc = MPI_SUCCESS;
    onic_mpi_pulled_t *p = probe_find(comm, 0, source, tag, call, &rc);

    *flag = p != NULL;
    if (p == NULL)
        return rc;
    /* Out of the pulled list, so out of matching: only its MPI_Mrecv takes it. */
    onic_dlist_del(&p->link);
    *h_p = p->hdr;
    onic_free(p);
    return MPI_SUCCESS;
}

/* --- Starting requests ------------------------------------------------------------------ */
/* A receive whose message is known before it is posted: matched by
 * MPI_Mprobe, or among the headers probes pulled out of Portals. 1 if r
 * took it; else 0, with r's query in *q. */
static inline int recv_known(onic_mpi_req_t *r, p2p_query_t *q)
{
    onic_mpi_pulled_t *p;
    ptl_ovf_header_t h;

    if (__builtin_expect(r->mode == ONIC_MPI_MODE_MATCHED, 0)) {
        recv_consume(r, r->mt_hdr);
        return 1;
    }
    p2p_query_make(r->comm, r->coll, r->peer, r->tag, q);
    if (!onic_dlist_empty(&onic_mpi_g.pulled) && (p = pulled_find(q)) != NULL) {
        onic_dlist_del(&p->link);
        h = p->hdr;
        onic_free(p);
        recv_consume(r, &h);
        return 1;
    }
    return 0;
}

/* The post's outcome: an unexpected message taken (*h), posted, or the
 * error. */
static inline int recv_posted(onic_mpi_req_t *r, int rc, const ptl_ovf_header_t *h)
{
    if (rc == PTL_OVF_MATCHED) {
        r->me = PTL_INVALID_HANDLE;
        recv_consume(r, h);
        return MPI_SUCCESS;
    }
    if (rc != PTL_OK) {
        r->me = PTL_INVALID_HANDLE;
        return onic_mpi_err_ptl(r->comm, r->call, "post a receive", rc);
    }
    return MPI_SUCCESS;
}

/* onic_mpi_p2p_start of a receive that lands in place (request.c calls
 * it instead, so a contiguous receive's start does not test for it): as
 * recv_start, with an MD that is an I/O vector over the type's blocks in
 * r->buf, adjacent ones merged (Portals copies the vector, so it lives on
 * the stack up to 64 entries). */
__attribute__((noinline, cold)) int onic_mpi_p2p_recv_in_place(onic_mpi_req_t *r)
{
    const onic_mpi_type_t *t = r->type;
    ptl_md_iovec_t stack[64], *v = stack;
    size_t n = 0, max = t->nblocks * (size_t)r->count;
    p2p_query_t q;
    ptl_md_t md;
    ptl_handle_md_t mdh;
    ptl_ovf_header_t h;
    int rc;

    r->me = PTL_INVALID_HANDLE;
    r->md = PTL_INVALID_HANDLE;
    if (recv_known(r, &q))
        return MPI_SUCCESS;
    memset(&md, 0, sizeof(md));
    md.threshold = 1;
    md.options = PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE |
                 PTL_MD_EVENT_UNLINK_DISABLE | PTL_MD_IOVEC;
    md.user_ptr = r;
    md.eq_handle = onic_mpi_g.eq;
    if (max > 64 && (v = onic_malloc(max * sizeof(*v))) == NULL)
        return onic_mpi_err(r->comm, MPI_ERR_NO_MEM, r->call, "no memory for the I/O vector "
                            "of a receive of %zu blocks", max);
    for (int e = 0; e < r->count; e++) {
        char *base = (char *)r->buf + (ptrdiff_t)e * t->extent;
        for (size_t b = 0; b < t->nblocks; b++) {
            char *at = base + t->blocks[b].off;
            if (t->blocks[b].len == 0)
                continue;
            if (n > 0 && (char *)v[n - 1].iov_base + v[n - 1].iov_len == at) {
                v[n - 1].iov_len += t->blocks[b].len;
                continue;
            }
            v[n].iov_base = at;
            v[n].iov_len = t->blocks[b].len;
            n++;
        }
    }
    md.start = v;
    md.length = n;
    rc = PtlMEAttachSearch(onic_mpi_g.ni, ONIC_MPI_PT_P2P, q.id, q.bits, q.ignore, PTL_UNLINK,
                           PTL_INS_AFTER, md, PTL_UNLINK, &r->me, &mdh, &h);
    if (v != stack)
        onic_free(v);
    return recv_posted(r, rc, &h);
}

/* MPI_Recv's message already here (request.c, req_recv_checked): taken
 * from Portals' unexpected headers and copied out, with no request made,
 * started, completed and freed around it. The headers that probes pulled
 * out of Portals are older than those still in it, so with any pulled
 * this is not the way. */
int onic_mpi_p2p_recv_now(onic_mpi_comm_t *c, int source, int tag, void *data, size_t bytes,
                          ptl_ovf_header_t *h, MPI_Status *status)
{
    p2p_query_t q;
    uint64_t got;

    if (!onic_dlist_empty(&onic_mpi_g.pulled))
        return 0;
    p2p_query_make(c, 0, source, tag, &q);
    if (!onic_ptl_recv_take(onic_mpi_g.ni, ONIC_MPI_PT_P2P, q.id, q.bits, q.ignore, h))
        return 0;
    if ((h->hdr_data >> 62) == ONIC_MPI_HDR_RNDV)
        return ONIC_MPI_RECV_RNDV;
    got = h->mlength < bytes ? h->mlength : bytes;
    if (got > 0)
        onic_copy(data, h->start, got);
    if (h->rlength > 0)
        ubuf_consumed(h);
    status->MPI_SOURCE = (int)(h->match_bits >> 24 & 0xffffff);
    status->MPI_TAG = (int)(h->match_bits & ONIC_MPI_BITS_TAG);
    status->MPI_ERROR = h->rlength > got ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    status->onic_count = (long long)got;
    status->onic_cancelled = 0;
    return 1;
}

static int recv_start(onic_mpi_req_t *r)
{
    p2p_query_t q;
    ptl_ovf_header_t h;
    ptl_match_bits_t bits, ignore;
    ptl_process_id_t id;
    int rc;

    if (recv_known(r, &q))
        return MPI_SUCCESS;
    /* Read back field by field, as they were stored: left to itself, gcc
     * loads bits and ignore as one 16-byte vector and the id's two halves
     * as one 8-byte word, loads that cannot be forwarded from the smaller
     * stores just made and stall (a tenth of MPI_Irecv's time in the rate
     * loop, by perf). */
    bits = q.bits;
    ignore = q.ignore;
    id.nid = q.id.nid;
    id.pid = q.id.pid;
    __asm__("" : "+r"(bits), "+r"(ignore), "+r"(id.nid), "+r"(id.pid));
    /* PUT_END alone completes the receive: its UNLINK would be one more
     * event to post and read per message. The arguments were checked at
     * the MPI call (post.h). */
    rc = onic_ptl_recv_post(onic_mpi_g.ni, ONIC_MPI_PT_P2P, id, bits, ignore,
                            r->bytes > 0 ? r->data : NULL, r->bytes,
                            PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_EVENT_START_DISABLE |
                                PTL_MD_EVENT_UNLINK_DISABLE,
                            r, onic_mpi_g.eq, &r->me, &h);
    return recv_posted(r, rc, &h);
}

int onic_mpi_p2p_start(onic_mpi_req_t *r)
{
    int rc;

    r->me = PTL_INVALID_HANDLE;
    r->md = PTL_INVALID_HANDLE;
    /* A receive does not poll: posting it brings nothing in, so it adds no
     * events to drain, and a poll between posting receives would turn
     * messages that were about to find their receive into unexpected ones
     * (and change the order in which the receiver sees them). */
    if (r->kind == ONIC_MPI_REQ_RECV)
        return recv_start(r);
    /* A send does not poll: an eager one is complete once put, and a
     * rendezvous one completes on events its wait or test polls for. Nor
     * does it need to drain for the event queue's sake: inline, events
     * enter the queue only where it is read (PtlEQPoll, which polls the
     * transport only when the queues are empty, and a blocked send's
     * transport drains into the transport's own queue, not ours), so a run
     * of sends leaves the queue as it found it; and a poll here would only
     * deliver arrivals between the application's receive posts. A send
     * polls when it runs out of credit (onic_mpi_p2p_send_eager_slow), which is also how a
     * process that only sends keeps serving its peers; an Isend's bundle
     * leaves with the application's next MPI call (ONIC_MPI_CHECK_INIT).
     * Under onload the engine's events come in with any call that waits
     * for room in the command ring, a put included: there, every few starts
     * still drain -- which changes nothing the engine matches, as it
     * matches on its own -- so a long run of sends cannot fill the queue. */
    rc = send_start(r);
    if (onic_mpi_g.drain_sends)
        p2p_start_drain();
    return rc;
}

int onic_mpi_p2p_cancel(onic_mpi_req_t *r)
{
    int rc;

    if (r->kind != ONIC_MPI_REQ_RECV || r->complete)
        return 0;
    /* Everything that arrived is handled first; with the queue empty and no
     * poll between, an unlinked entry cannot have taken a message. */
    onic_mpi_progress(0);
    if (r->complete || r->me == PTL_INVALID_HANDLE)
        return 0;
    /* PTL_ME_IN_USE: a whole rendezvous message matched it and is moving
     * in; its PUT_END (no START is asked for) completes the receive. */
    if ((rc = PtlMEUnlink(r->me)) != PTL_OK)
        return 0;
    r->me = PTL_INVALID_HANDLE;
    r->status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->status.MPI_TAG = MPI_ANY_TAG;
    r->status.onic_cancelled = 1;
    r->status.onic_count = 0;
    onic_mpi_req_complete(r);
    return 1;
}

/* --- Progress ------------------------------------------------------------------------------ */
static void p2p_event(const ptl_event_t *ev)
{
    onic_mpi_req_t *r = ev->md.user_ptr;

    switch (ev->type) {
    case PTL_EVENT_PUT_END:
        if (ev->pt_index == ONIC_MPI_PT_CREDIT)
            onic_mpi_g.credits[ev->initiator.pid] += ev->hdr_data;
        else if (ev->md.options & PTL_MD_MAX_SIZE)
            ubuf_landed(ev->md.user_ptr, ev); /* its header waits for a receive or probe */
        else
            recv_matched(r, ev);
        break;
    case PTL_EVENT_GET_END:
        send_pulled(r, ev);
        break;
    case PTL_EVENT_SEND_END: /* only whole rendezvous puts: others send from MDs without events */
        send_put_end(r, ev);
        break;
    case PTL_EVENT_ACK:
        send_acked(r);
        break;
    case PTL_EVENT_REPLY_END:
        rndv_reply(r, ev);
        break;
    case PTL_EVENT_UNLINK:
        if (ev->md.options & PTL_MD_MAX_SIZE)
            ubuf_unlinked(ev->md.user_ptr);
        /* else: an MD that finished its work; nothing left to do. */
        break;
    default:
        break;
    }
}

/* One round of progress. Each PtlEQPoll looks at both queues and polls the
 * transport only when both are empty, so a round costs one transport poll,
 * not one per queue (over a network provider a poll is a system call).
 * Waiting (block), the first event handled ends the round: the caller
 * looks at its request before anything more is polled. Unexpected arrivals
 * only say "something came": their events may be dropped when a burst
 * overflows that queue, which is harmless. */
/* flatten, as the hot MPI calls (request.c, req_irecv_checked); noinline
 * so that those calls keep one copy of it. */
__attribute__((flatten, noinline, hot)) unsigned onic_mpi_progress(int block)
{
    ptl_handle_eq_t eqs[2] = {onic_mpi_g.eq, onic_mpi_g.eq_unexp};
    const ptl_event_t *evp;
    ptl_event_t ev;
    unsigned n = 0;
    int rc, which = 0;

    /* Threads do not wait inside Portals: one holding the lock there would
     * keep the others out for the whole wait. */
    if (__builtin_expect(block && atomic_load_explicit(&onic_mpi_mt.on, memory_order_relaxed), 0))
        return onic_mpi_mt_progress();
    for (;;) {
        /* Waiting, the operations queue first, with the one-queue call (it
         * polls the transport only if the queue is empty): that is where
         * nearly every event is. Not waiting, an empty first queue would
         * cost a second poll, so both are polled at once (by pointer: an
         * empty MPI_Test paid two handle lookups a queue in PtlEQPoll).
         * Read in place: each event is handled here once, before the next
         * is read (no handler below calls onic_mpi_progress, so none reads
         * these queues -- and restarts one's ring -- while evp is in use). */
        which = 0;
        if (block && onic_mpi_g.eqs_local[0] != NULL)
            rc = onic_ptl_eq_get_inplace(onic_mpi_g.eqs_local[0], &evp, &ev);
        else if (block)
            rc = PtlEQGetInPlace(onic_mpi_g.eq, &evp, &ev);
        else if (onic_mpi_g.eqs_local[0] != NULL) /* both queues: PtlEQPoll's work, no lookup */
            rc = onic_ptl_eq_poll_inplace(onic_mpi_g.eqs_local, 2, &evp, &ev, &which);
        else
            rc = PTL_EQ_EMPTY;
        /* A wait that has handled something takes what else is at hand
         * (a poll delivers a burst at once), a bounded number, and goes
         * back to its caller's test without sleeping. */
        if (block && rc == PTL_EQ_EMPTY && n > 0)
            goto out;
        if (rc == PTL_EQ_EMPTY && (block || onic_mpi_g.eqs_local[0] == NULL)) {
            /* Both queues; sleeps in the transport until something arrives. */
            rc = PtlEQPoll(eqs, 2, block ? P2P_WAIT_MS : 0, &ev, &which);
            evp = &ev;
        }
        if (rc == PTL_EQ_EMPTY) {
            /* The transport was polled: a drain, which also sent what the
             * events' handlers (credits, pulls) put in an open bundle. */
            onic_mpi_g.starts_undrained = 0;
            goto out;
        }
        n++;
        if (which == 1) {
            if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
                p2p_fatal("read the unexpected-arrival event queue", rc);
        } else {
            /* Every event here belongs to an operation this process started
             * (a posted receive, a pull, an exposed buffer, a credit), so the
             * queue is sized by those, and losing one would lose an operation. */
            if (rc == PTL_EQ_DROPPED)
                p2p_fatal("keep every event (more operations completed at once than the "
                          "event queue holds)", rc);
            if (rc != PTL_OK)
                p2p_fatal("read the event queue", rc);
            p2p_event(evp);
        }
        if (block && n >= P2P_WAIT_BATCH)
            goto out;
    }
out:
    /* Non-blocking collectives move on to their next round here, after
     * the events that may have ended their current one (icoll.c). */
    if (__builtin_expect(onic_mpi_icoll_live != 0, 0))
        onic_mpi_icoll_progress();
    return n;
}

/* --- Setup ------------------------------------------------------------------------------------- */
int onic_mpi_p2p_init(void)
{
    onic_config_t cfg;
    ptl_md_t md;
    ptl_handle_md_t mdh;
    uint64_t eqn;
    int rc, maxif;
    const char *what;
    ptl_process_id_t id;
    ptl_sr_value_t job_size, max_inline;

    if (onic_config_read(&cfg) != ONIC_OK)
        return onic_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Init", "the ONIC_* environment is "
                            "invalid (the message above says which variable); fix it or unset it");
    onic_mpi_g.pull_min = cfg.eager_pull_min;
    p2p_set_eager_limit(cfg.eager_limit);
    onic_mpi_g.drain_sends = cfg.onload != 0;
    onic_mpi_g.iovec_max = cfg.onload ? 0 : cfg.mpi_iovec_max;
    onic_mpi_g.win_shm = cfg.mpi_win_shm != 0;
    onic_mpi_g.wait_spin_ns = onic_config_wait_sleeps(&cfg, cfg.size + (cfg.onload != 0))
                                  ? 0 : (uint64_t)cfg.wait_spin_us * 1000;
    onic_mpi_g.get_chunk = ONIC_MPI_GET_CHUNK;
    onic_dlist_init(&onic_mpi_g.pulled);
    onic_dlist_init(&onic_mpi_g.bsegs);
    if ((rc = PtlInit(&maxif)) != PTL_OK) {
        what = "initialize";
        goto err;
    }
    if ((rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &onic_mpi_g.ni)) != PTL_OK) {
        what = "open this process's network interface";
        goto err_fini;
    }
    /* Who this process is, as its launcher told the transport. */
    if ((rc = PtlGetId(onic_mpi_g.ni, &id)) != PTL_OK ||
        (rc = PtlNIStatus(onic_mpi_g.ni, PTL_SR_JOB_SIZE, &job_size)) != PTL_OK) {
        what = "learn this process's rank and the job's size";
        goto err_ni;
    }
    /* An eager send is complete once put: only a put that leaves with its
     * data may be one. */
    if ((rc = PtlNIStatus(onic_mpi_g.ni, PTL_SR_MAX_INLINE, &max_inline)) != PTL_OK) {
        what = "learn how much data a put carries";
        goto err_ni;
    }
    if (onic_mpi_g.eager_limit > (size_t)max_inline) {
        onic_debug("mpi: eager messages at most %d bytes (what one put carries here), not "
                   "ONIC_EAGER_LIMIT=%u", (int)max_inline, cfg.eager_limit);
        p2p_set_eager_limit((size_t)max_inline);
        cfg.eager_limit = (unsigned)max_inline;
    }
    /* ONIC_EAGER_CREDITS messages of the eager size, counted at most at
     * ONIC_EAGER_CREDIT_UNIT each: what a receiver sets aside for unexpected
     * messages does not grow with a larger eager limit; mid-size messages
     * just take more of it each. */
    onic_mpi_g.credits_per_peer =
        (uint64_t)onic_config_eager_credits(&cfg, (unsigned)job_size) *
        onic_mpi_charge(cfg.eager_limit < ONIC_EAGER_CREDIT_UNIT ? cfg.eager_limit
                                                                 : ONIC_EAGER_CREDIT_UNIT);
    onic_mpi_g.rank = (int)id.pid;
    onic_mpi_g.size = (int)job_size;
    cfg.size = (unsigned)job_size;
    if (cfg.size - 1 > ONIC_MPI_RANK_MAX) {
        PtlNIFini(onic_mpi_g.ni);
        PtlFini();
        return onic_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Init", "a job of %u processes; onic's "
                            "MPI carries ranks in 24 bits (at most %d processes)", cfg.size,
                            ONIC_MPI_RANK_MAX + 1);
    }
    /* Operations' events: at most two per posted receive, one per get in
     * flight each way, two per whole rendezvous put (SEND_END, ACK), one
     * per credit batch; room for every sender's ring
     * full of messages that complete posted receives, twice over (on a
     * node of any size up to the job's: auto rings shrink as nodes fill). */
    eqn = 4 * onic_config_shm_ring_most(&cfg, cfg.size) + 4096;
    /* and two per unexpected message the senders' credit allows (each
     * costs at least ONIC_MPI_CHARGE_MIN) */
    if (cfg.eager_limit > 0)
        eqn += 2ull * cfg.size * onic_mpi_g.credits_per_peer / ONIC_MPI_CHARGE_MIN;
    eqn = eqn < P2P_EQ_MIN ? P2P_EQ_MIN : eqn > P2P_EQ_MAX ? P2P_EQ_MAX : eqn;
    if ((rc = PtlEQAlloc(onic_mpi_g.ni, eqn, PTL_EQ_HANDLER_NONE, &onic_mpi_g.eq)) != PTL_OK ||
        (rc = PtlEQAlloc(onic_mpi_g.ni, P2P_EQ_UNEXP, PTL_EQ_HANDLER_NONE,
                         &onic_mpi_g.eq_unexp)) != PTL_OK) {
        what = "allocate the event queues";
        goto err_ni;
    }
    onic_mpi_g.eqs_local[0] = onic_ptl_eq_find_local(onic_mpi_g.eq);
    onic_mpi_g.eqs_local[1] = onic_ptl_eq_find_local(onic_mpi_g.eq_unexp);
    if (onic_mpi_g.eqs_local[1] == NULL)
        onic_mpi_g.eqs_local[0] = NULL; /* both by pointer or neither */
    memset(&md, 0, sizeof(md));
    md.threshold = PTL_MD_THRESH_INF;
    md.eq_handle = PTL_EQ_NONE;
    if ((rc = PtlMDBind(onic_mpi_g.ni, md, PTL_RETAIN, &onic_mpi_g.zero_md)) != PTL_OK) {
        what = "bind the zero-byte MD";
        goto err_ni;
    }
    /* Credits come back as zero-byte puts with the count in hdr_data. */
    rc = PtlMEAttach(onic_mpi_g.ni, ONIC_MPI_PT_CREDIT, p2p_any, 0, ~UINT64_C(0), PTL_RETAIN,
                     PTL_INS_AFTER, &onic_mpi_g.credit_me);
    md.options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE;
    md.eq_handle = onic_mpi_g.eq;
    if (rc != PTL_OK || (rc = PtlMDAttach(onic_mpi_g.credit_me, md, PTL_RETAIN, &mdh)) != PTL_OK) {
        what = "attach the credit portal's entry";
        goto err_ni;
    }
    /* In the overflow list: a rendezvous message put whole that no
     * receive was posted for keeps its header here and nothing of its data
     * (zero bytes, truncating), and is not acked: the receive pulls it
     * later, as it pulls a request. */
    rc = PtlMEAttachOverflow(onic_mpi_g.ni, ONIC_MPI_PT_P2P, p2p_any, ONIC_MPI_BITS_WHOLE,
                             ~ONIC_MPI_BITS_WHOLE, PTL_RETAIN, PTL_INS_AFTER,
                             &onic_mpi_g.whole_me);
    md.options = PTL_MD_OP_PUT | PTL_MD_TRUNCATE | PTL_MD_ACK_DISABLE |
                 PTL_MD_EVENT_START_DISABLE;
    md.eq_handle = onic_mpi_g.eq_unexp; /* an event, ignored, wakes a blocked MPI_Probe */
    if (rc != PTL_OK || (rc = PtlMDAttach(onic_mpi_g.whole_me, md, PTL_RETAIN, &mdh)) != PTL_OK) {
        what = "attach the whole-message overflow entry";
        goto err_ni;
    }
    /* Every empty put (a rendezvous request or an empty message) lands
     * here, never in a buffer, and never fails. The buffers, put before
     * both entries as they come, take only puts with data, not whole. */
    rc = PtlMEAttachOverflow(onic_mpi_g.ni, ONIC_MPI_PT_P2P, p2p_any, ONIC_MPI_BITS_EMPTY,
                             ~(ONIC_MPI_BITS_WHOLE | ONIC_MPI_BITS_EMPTY), PTL_RETAIN,
                             PTL_INS_AFTER, &onic_mpi_g.zero_me);
    md.options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE;
    md.eq_handle = onic_mpi_g.eq_unexp; /* an event, ignored, wakes a blocked MPI_Probe */
    if (rc != PTL_OK || (rc = PtlMDAttach(onic_mpi_g.zero_me, md, PTL_RETAIN, &mdh)) != PTL_OK) {
        what = "attach the zero-byte overflow entry";
        goto err_ni;
    }
    /* Every eager send goes from this one MD: no MD to bind per message. */
    memset(&md, 0, sizeof(md));
    md.length = PTL_SIZE_MAX;
    md.threshold = PTL_MD_THRESH_INF;
    md.eq_handle = PTL_EQ_NONE;
    if ((rc = PtlMDBind(onic_mpi_g.ni, md, PTL_RETAIN, &onic_mpi_g.all_md)) != PTL_OK) {
        what = "bind the MD of all memory";
        goto err_ni;
    }
    onic_mpi_g.credits = onic_calloc((size_t)cfg.size, sizeof(*onic_mpi_g.credits));
    onic_mpi_g.owed = onic_calloc((size_t)cfg.size, sizeof(*onic_mpi_g.owed));
    if (onic_mpi_g.credits == NULL || onic_mpi_g.owed == NULL)
        goto err_no_mem;
    if (onic_mpi_g.eager_limit > 0) {
        uint64_t total = onic_mpi_g.credits_per_peer * cfg.size;

        onic_mpi_g.ubuf_max = onic_mpi_g.eager_limit;
        onic_mpi_g.ubuf_size = P2P_UBUF_MIN;
        while (onic_mpi_g.ubuf_size < 16 * (onic_mpi_g.ubuf_max + P2P_UBUF_HDR))
            onic_mpi_g.ubuf_size *= 2;
        for (unsigned i = 0; i < cfg.size; i++)
            onic_mpi_g.credits[i] = onic_mpi_g.credits_per_peer;
        /* Space for all the credit handed out, before any is used. */
        while (onic_mpi_g.ubuf_slack < (int64_t)total)
            if (!ubuf_add())
                goto err_no_mem;
        onic_mpi_g.ubuf_slack -= (int64_t)total;
    }
    return MPI_SUCCESS;

err_no_mem:
    onic_mpi_p2p_fini();
    return onic_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Init", "no memory for %llu bytes of "
                        "unexpected-message buffers (ONIC_EAGER_CREDITS x processes x "
                        "ONIC_EAGER_LIMIT)", (unsigned long long)onic_mpi_g.credits_per_peer *
                        cfg.size);
err_ni:
    onic_mpi_g.eqs_local[0] = onic_mpi_g.eqs_local[1] = NULL;
    PtlNIFini(onic_mpi_g.ni);
err_fini:
    PtlFini();
err:
    return onic_mpi_err(NULL, MPI_ERR_OTHER, "MPI_Init", "the Portals layer failed to %s: %s",
                        what, PtlErrorStr(rc));
}

void onic_mpi_p2p_fini(void)
{
    onic_dlist_t *l;

    while ((l = onic_mpi_g.pulled.next) != &onic_mpi_g.pulled && l != NULL) {
        onic_dlist_del(l);
        onic_free(onic_container_of(l, onic_mpi_pulled_t, link));
    }
    /* Closing the interface frees every ME, MD and event queue with it. */
    onic_mpi_g.eqs_local[0] = onic_mpi_g.eqs_local[1] = NULL;
    PtlNIFini(onic_mpi_g.ni);
    PtlFini();
    while (onic_mpi_g.ubufs != NULL) {
        onic_mpi_ubuf_t *b = onic_mpi_g.ubufs;
        onic_mpi_g.ubufs = b->next;
        onic_cache_free(b);
    }
    onic_mpi_g.ubuf_slack = 0;
    onic_free(onic_mpi_g.credits);
    onic_free(onic_mpi_g.owed);
    onic_mpi_g.credits = onic_mpi_g.owed = NULL;
}
