/* One-sided operations on Portals, and the protocol under them.
 *
 * Put and get are Portals puts and gets into the target's window entry
 * (portal ONIC_MPI_PT_WIN, match bits = the window's id): the target's
 * Portals target side alone moves the data and answers (ACK, REPLY), so
 * no MPI code runs at the target. Each contiguous piece of the two
 * datatypes is one Portals operation, from an MD spanning all memory.
 *
 * Accumulates, compare-and-swap and lock requests are requests: the origin
 * writes one into its own slot of the target's inbox (portal
 * ONIC_MPI_PT_ACC; a slot is one transport message), and the target's
 * event handler on the inbox executes it and answers into the origin's
 * slot (portal ONIC_MPI_PT_ACCR). One mechanism for every process of a
 * window: accumulates are executed by the target process, one request
 * after the other, so each element is updated atomically whoever sends
 * what, and requests from one origin are applied in the order sent (one
 * inbox, and the transport keeps a pair's order). The handler runs inside
 * any Portals call that reads events -- any MPI call that makes progress,
 * inline or under onload -- so a target in MPI_Recv, a barrier or a wait
 * serves accumulates; a target that computes without MPI calls serves
 * them at its next call.
 *
 * A window in shared memory (w->ctl, win_shared.c) has no messages: put and
 * get copy to and from the target's segment, and every origin applies its
 * accumulates itself, under the target's accumulate lock (rma_shm.c): one
 * piece of the target straight from the origin's data (rma_acc_shm), others
 * as the requests above, with the code the handler runs (rma_direct) -- one
 * mechanism for that window too.
 *
 * Completion: every operation counts one at its target (issued[]) and one
 * event comes back for it on this process's operations queue (ACK, REPLY_END
 * or the answer's PUT_END) (done[]). flush is "done == issued" for the
 * target. The queue has no handler: it is read only inside RMA calls, and
 * never holds more than RMA_OQ_CAP events, so a reply always finds room. */
#include "mpi/rma.h"
#include "base/copy.h"
#include "base/log.h"
#include "base/mem.h"

#include <stdatomic.h>
#include <string.h>

#define RMA_SEG_MAX   (16u << 20)  /* one put or get moves at most this */
/* Up to this many messages' worth, a transfer goes as messages of the eager
 * limit (one copy each way through the ring) rather than as one operation
 * by the transport's RMA, whose registration and CMA call cost more. */
#define RMA_SMALL_MSGS 8u
/* A put of at most this many bytes is one message (include/onic/portals.h:
 * longer ones move by the transport's RMA and complete on their own). */
#define RMA_INLINE     2048u
/* Match bits no window has (ids are context ids, below 2^12): only the
 * catch-all entry takes them. */
#define RMA_BITS_NONE  (~UINT64_C(0))
#define RMA_OQ_EVENTS 8192u
#define RMA_OQ_CAP    4096u        /* operations whose event is not taken yet */
#define RMA_TQ_EVENTS 256u         /* only wakes: the handler has done the work */
#define RMA_WAIT_MS   10

/* --- Requests in slots ---------------------------------------------------------------- */
enum { RMA_REQ_ACC = 1, RMA_REQ_CAS, RMA_REQ_LOCK, RMA_REQ_UNLOCK };
#define RMA_OP_REPLACE (-1)
#define RMA_OP_NO_OP   (-2)

typedef struct rma_req_hdr {
    uint32_t kind;
    uint32_t win;    /* the window's id */
    uint32_t nseg;
    int32_t  op;     /* onic_mpi_op_check's index, RMA_OP_REPLACE or RMA_OP_NO_OP */
    uint32_t type;   /* index of the predefined type of the elements */
    uint32_t fetch;  /* answer with what was there before */
    uint32_t lock;   /* LOCK, UNLOCK: the lock type */
    uint32_t pad;
} rma_req_hdr_t;

/* A piece of the window: `len` bytes at byte offset `off`. */
typedef struct rma_seg {
    uint64_t off, len;
} rma_seg_t;

#define RMA_SEGS      16u
#define RMA_DATA_AT   (sizeof(rma_req_hdr_t) + RMA_SEGS * sizeof(rma_seg_t))
#define RMA_DATA_CAP  (ONIC_MPI_RMA_SLOT - RMA_DATA_AT)
static_assert(sizeof(rma_req_hdr_t) == 32, "a request header is half a cache line");
static_assert(ONIC_MPI_TYPE_NPREDEF <= INT8_MAX, "a predefined type's index fits a byte");

/* An accumulate that fetches: its answers gather here, packed. */
typedef struct rma_fetch {
    char            *packed;
    size_t           bytes;
    void            *result;
    int              count;
    onic_mpi_type_t *type;
    unsigned         pending;  /* requests not answered */
    int              sent;     /* every request is out */
} rma_fetch_t;

/* Someone waits for a lock or unlock answer. */
typedef struct rma_waiter {
    int answered;
    int status;
} rma_waiter_t;

typedef struct rma_slot {
    int           busy;
    rma_fetch_t  *fetch;
    size_t        roff, rlen;  /* where its answer goes in fetch->packed */
    rma_waiter_t *waiter;
} rma_slot_t;

static struct {
    int             ready;
    int             size, rank;
    ptl_handle_eq_t oq, tq;
    ptl_handle_md_t put_md, get_md;
    ptl_handle_me_t inbox_me, answer_me, gone_me;
    char           *inbox, *slots;    /* size * SLOTS slots each */
    rma_slot_t     *slot;
    uint64_t       *issued, *done;    /* by world rank */
    uint64_t        issued_all, done_all;
    /* Targets of puts sent without an ack since their last flush. */
    uint8_t        *dirty;
    uint32_t       *dirty_list;
    unsigned        ndirty;
    unsigned        undrained;
    int             failed;           /* an error class an answer brought */
    onic_mpi_win_t *by_id[ONIC_MPI_MAX_CTX];
    char            scratch[ONIC_MPI_RMA_SLOT];
    /* The inbox handler: events that came while it ran. */
    int             in_handler;
    ptl_event_t    *later;
    unsigned        nlater, caplater;
} rma;

static const ptl_process_id_t rma_any = {PTL_NID_ANY, PTL_PID_ANY};

static ptl_process_id_t rma_pid(uint32_t world)
{
    ptl_process_id_t id = {0, world};
    return id;
}

static size_t rma_slot_off(uint32_t peer, unsigned s)
{
    return ((size_t)peer * ONIC_MPI_RMA_SLOTS + s) * ONIC_MPI_RMA_SLOT;
}

/* --- Target side: the inbox ------------------------------------------------------------- */
static void rma_answer(uint32_t origin, unsigned s, int status, const void *data, size_t len)
{
    int rc = PtlPutRegion(onic_mpi_g.all_md, (ptl_size_t)(uintptr_t)data, len, PTL_NOACK_REQ,
                          rma_pid(origin), ONIC_MPI_PT_ACCR, 0, 0,
                          rma_slot_off((uint32_t)rma.rank, s), (ptl_hdr_data_t)status);

    if (rc != PTL_OK)
        onic_error("mpi: cannot answer the one-sided request of rank %u: %s; that rank waits "
                   "for ever", origin, PtlErrorStr(rc));
}

static int rma_lock_can(const onic_mpi_win_t *w, int type)
{
    return type == MPI_LOCK_EXCLUSIVE ? !w->excl && w->shared == 0 : !w->excl;
}

static void rma_lock_take(onic_mpi_win_t *w, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        w->excl = 1;
    else
        w->shared++;
}

/* Grant waiting requests, oldest first, while they fit. */
static void rma_lock_grant(onic_mpi_win_t *w)
{
    onic_mpi_lock_wait_t *q;

    while ((q = w->waiting) != NULL && rma_lock_can(w, q->type)) {
        w->waiting = q->next;
        if (w->waiting == NULL)
            w->waiting_tail = &w->waiting;
        rma_lock_take(w, q->type);
        rma_answer(q->origin, q->slot, MPI_SUCCESS, NULL, 0);
        onic_free(q);
    }
}

static int rma_lock_req(onic_mpi_win_t *w, uint32_t origin, unsigned s, int type)
{
    onic_mpi_lock_wait_t *q;

    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return MPI_ERR_LOCKTYPE;
    if (w->waiting == NULL && rma_lock_can(w, type)) {
        rma_lock_take(w, type);
        return MPI_SUCCESS;
    }
    if ((q = onic_calloc(1, sizeof(*q))) == NULL)
        return MPI_ERR_NO_MEM;
    q->origin = origin;
    q->slot = s;
    q->type = type;
    *w->waiting_tail = q; /* the window starts it at &w->waiting */
    w->waiting_tail = &q->next;
    return -1; /* answered when granted */
}

static int rma_unlock_req(onic_mpi_win_t *w, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE && w->excl)
        w->excl = 0;
    else if (type == MPI_LOCK_SHARED && w->shared > 0)
        w->shared--;
    else
        return MPI_ERR_RMA_SYNC;
    rma_lock_grant(w);
    return MPI_SUCCESS;
}

/* Where len bytes at off of the window's segment at base (size bytes: this
 * process's, or in shared memory another's) are, or NULL if not all of
 * them are the segment's: off is an offset into the segment, or
 * for a dynamic window an address inside attached memory -- one region, or
 * regions attached side by side (the union is attached: MPI 3.1, 11.2.4),
 * followed from the one that holds off, each starting where the last ends. */
static char *rma_win_at(const onic_mpi_win_t *w, char *base, MPI_Aint size, uint64_t off,
                        uint64_t len)
{
    uint64_t at = off, left = len;

    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return off <= (uint64_t)size && len <= (uint64_t)size - off ? base + off : NULL;
    for (int i = 0, steps = 0; i < w->nregions && steps <= w->nregions; i++) {
        uint64_t b = (uint64_t)(uintptr_t)w->regions[i].base, n = (uint64_t)w->regions[i].size;

        if (at < b || at - b > n || (at - b == n && left > 0))
            continue;
        if (left <= n - (at - b))
            return (char *)(uintptr_t)off;
        /* On past this region's end: search again for the one that starts there. */
        left -= n - (at - b);
        at = b + n;
        i = -1;
        steps++;
    }
    return NULL;
}

/* Execute an accumulate or compare-and-swap on the segment at base (size
 * bytes); what was there goes to rma.scratch (*alen_p bytes). */
static int rma_exec(onic_mpi_win_t *w, char *base, MPI_Aint size, const rma_req_hdr_t *h,
                    const char *msg, size_t mlen, size_t *alen_p)
{
    const rma_seg_t *seg = (const rma_seg_t *)(const void *)(msg + sizeof(*h));
    const char *data;
    const onic_mpi_type_t *t;
    size_t alen = 0, need = 0;

    if (h->type >= ONIC_MPI_TYPE_NPREDEF || h->nseg > RMA_SEGS ||
        mlen < sizeof(*h) + h->nseg * sizeof(rma_seg_t))
        return MPI_ERR_INTERN;
    t = &onic_mpi_type_predef[h->type];
    data = msg + sizeof(*h) + h->nseg * sizeof(rma_seg_t);
    /* Check every piece first: a request applies whole or not at all. */
    for (uint32_t i = 0; i < h->nseg; i++) {
        if (rma_win_at(w, base, size, seg[i].off, seg[i].len) == NULL)
            return MPI_ERR_RMA_RANGE;
        if (seg[i].len % t->size != 0)
            return MPI_ERR_INTERN;
        need += h->kind == RMA_REQ_CAS ? 2 * seg[i].len : h->op == RMA_OP_NO_OP ? 0 : seg[i].len;
        alen += h->fetch ? seg[i].len : 0;
    }
    if (need > mlen - (size_t)(data - msg) || alen > sizeof(rma.scratch) ||
        (h->kind == RMA_REQ_CAS && h->nseg != 1))
        return MPI_ERR_INTERN;
    alen = 0;
    for (uint32_t i = 0; i < h->nseg; i++) {
        char *at = rma_win_at(w, base, size, seg[i].off, seg[i].len);
        size_t len = (size_t)seg[i].len;

        if (h->fetch) {
            memcpy(rma.scratch + alen, at, len);
            alen += len;
        }
        if (h->kind == RMA_REQ_CAS) {
            if (memcmp(at, data + len, len) == 0)
                memcpy(at, data, len);
        } else if (h->op == RMA_OP_REPLACE) {
            memcpy(at, data, len);
            data += len;
        } else if (h->op != RMA_OP_NO_OP) {
            onic_mpi_op_apply(h->op, t, data, at, len);
            data += len;
        }
    }
    *alen_p = alen;
    return MPI_SUCCESS;
}

static void rma_serve(const ptl_event_t *ev)
{
    uint32_t origin = ev->initiator.pid;
    uint64_t off = ev->offset;
    const char *msg;
    rma_req_hdr_t h;
    onic_mpi_win_t *w;
    unsigned s;
    size_t alen = 0;
    int status;

    if (ev->type != PTL_EVENT_PUT_END || ev->pt_index != ONIC_MPI_PT_ACC)
        return;
    if (origin >= (uint32_t)rma.size || off % ONIC_MPI_RMA_SLOT != 0 ||
        off / ONIC_MPI_RMA_SLOT / ONIC_MPI_RMA_SLOTS != origin) {
        onic_error("mpi: a one-sided request from rank %u at inbox offset %llu is not in that "
                   "rank's slots; dropped", origin, (unsigned long long)off);
        return;
    }
    s = (unsigned)(off / ONIC_MPI_RMA_SLOT - (uint64_t)origin * ONIC_MPI_RMA_SLOTS);
    msg = rma.inbox + off;
    if (ev->mlength < sizeof(h)) {
        rma_answer(origin, s, MPI_ERR_INTERN, NULL, 0);
        return;
    }
    memcpy(&h, msg, sizeof(h));
    w = h.win < ONIC_MPI_MAX_CTX ? rma.by_id[h.win] : NULL;
    if (w == NULL) {
        status = MPI_ERR_RMA_SYNC; /* freed while the origin was in an epoch */
    } else {
        switch (h.kind) {
        case RMA_REQ_ACC:
        case RMA_REQ_CAS:
            status = rma_exec(w, w->base, w->size, &h, msg, (size_t)ev->mlength, &alen);
            break;
        case RMA_REQ_LOCK:
            status = rma_lock_req(w, origin, s, (int)h.lock);
            if (status < 0)
                return; /* answered when granted */
            break;
        case RMA_REQ_UNLOCK:
            status = rma_unlock_req(w, (int)h.lock);
            break;
        default:
            status = MPI_ERR_INTERN;
            break;
        }
    }
    rma_answer(origin, s, status, rma.scratch, status == MPI_SUCCESS ? alen : 0);
}

/* The inbox queue's handler. Its answer (a put) may run the handlers of
 * events that came meanwhile: those wait here and run after this one. */
static void rma_inbox_handler(ptl_event_t *ev)
{
    if (rma.in_handler) {
        if (rma.nlater == rma.caplater) {
            unsigned cap = rma.caplater ? 2 * rma.caplater : 16;
            ptl_event_t *l = onic_realloc(rma.later, cap * sizeof(*l));
            if (l == NULL) {
                onic_error("mpi: no memory to keep a one-sided request; its origin waits "
                           "for ever");
                return;
            }
            rma.later = l;
            rma.caplater = cap;
        }
        rma.later[rma.nlater++] = *ev;
        return;
    }
    rma.in_handler = 1;
    rma_serve(ev);
    while (rma.nlater > 0) {
        ptl_event_t e = rma.later[0];
        memmove(&rma.later[0], &rma.later[1], --rma.nlater * sizeof(e));
        rma_serve(&e);
    }
    rma.in_handler = 0;
}

/* --- Origin side: events ------------------------------------------------------------------- */
static void rma_count_done(uint32_t world)
{
    if (world < (uint32_t)rma.size && rma.done[world] < rma.issued[world]) {
        rma.done[world]++;
        rma.done_all++;
    }
}

static void rma_fetch_finish(rma_fetch_t *f)
{
    onic_mpi_type_unpack(f->type, f->packed, f->bytes, f->result, f->count);
    onic_mpi_type_unref(f->type);
    onic_free(f->packed);
    onic_free(f);
}

static void rma_answered(const ptl_event_t *ev)
{
    uint32_t target = ev->initiator.pid;
    uint64_t idx = ev->offset / ONIC_MPI_RMA_SLOT;
    rma_slot_t *s;
    int status = (int)ev->hdr_data;

    if (target >= (uint32_t)rma.size || ev->offset % ONIC_MPI_RMA_SLOT != 0 ||
        idx / ONIC_MPI_RMA_SLOTS != target || !rma.slot[idx].busy) {
        onic_error("mpi: an answer to a one-sided request from rank %u names no request "
                   "of this process; ignored", target);
        return;
    }
    s = &rma.slot[idx];
    if (status != MPI_SUCCESS && rma.failed == MPI_SUCCESS)
        rma.failed = status;
    if (s->fetch != NULL) {
        size_t n = ev->mlength < s->rlen ? (size_t)ev->mlength : s->rlen;
        if (n > 0)
            onic_copy(s->fetch->packed + s->roff, rma.slots + ev->offset, n);
        if (--s->fetch->pending == 0 && s->fetch->sent)
            rma_fetch_finish(s->fetch);
    }
    if (s->waiter != NULL) {
        s->waiter->status = status;
        s->waiter->answered = 1;
    }
    memset(s, 0, sizeof(*s));
    rma_count_done(target);
}

static void rma_event(const ptl_event_t *ev)
{
    if (ev->ni_fail_type != PTL_NI_OK && rma.failed == MPI_SUCCESS)
        rma.failed = MPI_ERR_OTHER;
    switch (ev->type) {
    case PTL_EVENT_ACK:
    case PTL_EVENT_REPLY_END:
        /* Cut short: only the catch-all entry took it, the window is gone. */
        if (ev->mlength < ev->rlength && rma.failed == MPI_SUCCESS)
            rma.failed = MPI_ERR_RMA_SYNC;
        rma_count_done(ev->initiator.pid);
        break;
    case PTL_EVENT_PUT_END:
        rma_answered(ev);
        break;
    default:
        break;
    }
}

static void rma_take(const ptl_event_t *ev, int rc)
{
    if (rc == PTL_EQ_DROPPED)
        onic_error("mpi: the one-sided event queue overflowed; operations may never complete");
    rma.undrained--;
    rma_event(ev);
}

void onic_mpi_rma_poll(int block)
{
    ptl_event_t ev;
    int rc, got = 0;
    unsigned p2p;

    /* Point-to-point goes on meanwhile (credits, pulls, PSCW's messages).
     * Its poll of the transport delivers this queue's events too, so the
     * queue is read after it: a wait must not pause with its event here. */
    p2p = onic_mpi_progress(0);
    while ((rc = PtlEQGet(rma.oq, &ev)) == PTL_OK || rc == PTL_EQ_DROPPED) {
        rma_take(&ev, rc);
        got++;
    }
    if ((p2p > 0 || got > 0) && block)
        onic_mpi_mt_handled(); /* (it may give the lock up: waiting only) */
    if (got > 0 || !block || onic_mpi_mt_pause(1))
        return;
    rc = PtlEQPoll(&rma.oq, 1, RMA_WAIT_MS, &ev, NULL);
    if (rc == PTL_OK || rc == PTL_EQ_DROPPED)
        rma_take(&ev, rc);
}

/* Room for one more operation's event. */
static void rma_room(void)
{
    while (rma.undrained >= RMA_OQ_CAP)
        onic_mpi_rma_poll(1);
}

static void rma_issued(uint32_t world)
{
    rma.issued[world]++;
    rma.issued_all++;
    rma.undrained++;
}

static unsigned rma_slot_take(uint32_t world)
{
    for (;;) {
        for (unsigned s = 0; s < ONIC_MPI_RMA_SLOTS; s++)
            if (!rma.slot[rma_slot_off(world, s) / ONIC_MPI_RMA_SLOT].busy)
                return s;
        onic_mpi_rma_poll(1);
    }
}

static int rma_failed(onic_mpi_win_t *w, const char *call)
{
    int cls = rma.failed;

    if (cls == MPI_SUCCESS)
        return MPI_SUCCESS;
    rma.failed = MPI_SUCCESS;
    if (cls == MPI_ERR_RMA_SYNC)
        return onic_mpi_win_err(w, cls, call, "a one-sided operation reached a target whose "
                                "window was gone: it was freed while this process still had "
                                "an epoch on it; end every epoch before MPI_Win_free");
    return onic_mpi_win_err(w, cls, call, "a one-sided operation failed at its target (%s)",
                            cls == MPI_ERR_RMA_RANGE ? "outside its window" : "see its log");
}

/* Puts of one message go without an ack (PtlPutRegion's straight line);
 * a flush then sends one empty put with an ack behind them: messages
 * between two processes are delivered in order, so its ack says every put
 * before it has landed. */
static int rma_ack_behind(onic_mpi_win_t *w, uint32_t world, const char *call)
{
    int rc;

    rma.dirty[world] &= (uint8_t)~1u;
    rma_room();
    rc = PtlPutRegion(rma.put_md, 0, 0, PTL_ACK_REQ, rma_pid(world), ONIC_MPI_PT_WIN, 0,
                      RMA_BITS_NONE, 0, 0);
    if (rc != PTL_OK)
        return onic_mpi_err_ptl(w->comm, call, "send the put that completes earlier puts", rc);
    rma_issued(world);
    return MPI_SUCCESS;
}

/* dirty[]: bit 0, puts wait for an ack behind them; bit 1, in dirty_list. */
static void rma_mark_dirty(uint32_t world)
{
    if (!(rma.dirty[world] & 2))
        rma.dirty_list[rma.ndirty++] = world;
    rma.dirty[world] = 3;
}

int onic_mpi_rma_flush(onic_mpi_win_t *w, int world, const char *call)
{
    int rc;

    /* A window in shared memory: its operations are complete already;
     * ordered before whatever says so (a barrier, a message, an unlock). */
    if (w->ctl != NULL)
        atomic_thread_fence(memory_order_seq_cst);

    if (world < 0) {
        while (rma.ndirty > 0) {
            uint32_t t = rma.dirty_list[--rma.ndirty];

            rma.dirty[t] &= (uint8_t)~2u;
            if ((rma.dirty[t] & 1) && (rc = rma_ack_behind(w, t, call)) != MPI_SUCCESS)
                return rc;
        }
    } else if (rma.dirty[world] & 1) {
        /* Left in the list, marked clean: the next flush of all skips it. */
        if ((rc = rma_ack_behind(w, (uint32_t)world, call)) != MPI_SUCCESS)
            return rc;
    }
    if (world < 0) {
        while (rma.done_all < rma.issued_all)
            onic_mpi_rma_poll(1);
    } else {
        while (rma.done[world] < rma.issued[world])
            onic_mpi_rma_poll(1);
    }
    return rma_failed(w, call);
}

/* Send a request in a slot to world rank `world`: `len` bytes of msg. */
static int rma_send(onic_mpi_win_t *w, uint32_t world, const void *msg, size_t len,
                    rma_fetch_t *fetch, size_t roff, size_t rlen, rma_waiter_t *waiter,
                    const char *call)
{
    unsigned s;
    size_t off;
    rma_slot_t *sl;
    int rc;

    rma_room();
    s = rma_slot_take(world);
    off = rma_slot_off(world, s);
    sl = &rma.slot[off / ONIC_MPI_RMA_SLOT];
    memcpy(rma.slots + off, msg, len);
    rc = PtlPutRegion(onic_mpi_g.all_md, (ptl_size_t)(uintptr_t)(rma.slots + off), len,
                      PTL_NOACK_REQ, rma_pid(world), ONIC_MPI_PT_ACC, 0, 0,
                      rma_slot_off((uint32_t)rma.rank, s), 0);
    if (rc != PTL_OK)
        return onic_mpi_err_ptl(w->comm, call, "send a one-sided request", rc);
    sl->busy = 1;
    sl->fetch = fetch;
    sl->roff = roff;
    sl->rlen = rlen;
    sl->waiter = waiter;
    if (fetch != NULL)
        fetch->pending++;
    rma_issued(world);
    return MPI_SUCCESS;
}

/* A request on a window in shared memory: executed by this process, now,
 * on comm rank `rank`'s segment under its accumulate lock (the one
 * mechanism every origin of the window uses), its answer copied where the
 * request's answer goes. */
static int rma_direct(onic_mpi_win_t *w, int rank, const char *msg, size_t len,
                      rma_fetch_t *fetch, size_t roff, size_t rlen, const char *call)
{
    rma_req_hdr_t h;
    size_t alen = 0;
    int status;

    memcpy(&h, msg, sizeof(h));
    onic_mpi_wctl_acc_lock(&w->ctl[rank]);
    status = rma_exec(w, w->shm + w->shm_off[rank], w->sizes[rank], &h, msg, len, &alen);
    onic_mpi_wctl_acc_unlock(&w->ctl[rank]);
    if (status != MPI_SUCCESS)
        return onic_mpi_win_err(w, status, call, "a one-sided operation on rank %d's window "
                                "memory failed (%s)", rank, status == MPI_ERR_RMA_RANGE ?
                                "outside its window" : "a malformed request");
    if (fetch != NULL && alen > 0)
        onic_copy(fetch->packed + roff, rma.scratch, alen < rlen ? alen : rlen);
    return MPI_SUCCESS;
}

/* --- Locks ------------------------------------------------------------------------- */
static int rma_lock_send(onic_mpi_win_t *w, int rank, int kind, int type, rma_waiter_t *wt,
                         const char *call)
{
    rma_req_hdr_t h;

    memset(&h, 0, sizeof(h));
    h.kind = (uint32_t)kind;
    h.win = (uint32_t)w->id;
    h.lock = (uint32_t)type;
    memset(wt, 0, sizeof(*wt));
    return rma_send(w, onic_mpi_comm_world_rank(w->comm, rank), &h, sizeof(h), NULL, 0, 0, wt,
                    call);
}

static int rma_lock_wait(onic_mpi_win_t *w, rma_waiter_t *wt, int n, const char *call)
{
    for (int i = 0; i < n; i++)
        while (!wt[i].answered)
            onic_mpi_rma_poll(1);
    for (int i = 0; i < n; i++)
        if (wt[i].status != MPI_SUCCESS)
            return onic_mpi_win_err(w, wt[i].status, call, "the target refused the lock "
                                    "request");
    return MPI_SUCCESS;
}

int onic_mpi_rma_lock(onic_mpi_win_t *w, int rank, int type, const char *call)
{
    rma_waiter_t wt;
    int rc;

    if (w->ctl != NULL) {
        onic_mpi_wctl_lock(&w->ctl[rank], type);
        return MPI_SUCCESS;
    }
    rc = rma_lock_send(w, rank, RMA_REQ_LOCK, type, &wt, call);

    return rc != MPI_SUCCESS ? rc : rma_lock_wait(w, &wt, 1, call);
}

int onic_mpi_rma_unlock(onic_mpi_win_t *w, int rank, const char *call)
{
    rma_waiter_t wt;
    int rc;

    if (w->ctl != NULL) {
        onic_mpi_wctl_unlock(&w->ctl[rank], w->locked[rank]);
        return MPI_SUCCESS;
    }
    rc = rma_lock_send(w, rank, RMA_REQ_UNLOCK, w->locked[rank], &wt, call);

    return rc != MPI_SUCCESS ? rc : rma_lock_wait(w, &wt, 1, call);
}

static int rma_lock_many(onic_mpi_win_t *w, int kind, const char *call)
{
    rma_waiter_t *wt;
    int rc = MPI_SUCCESS, n = 0;

    if (w->ctl != NULL) {
        for (int r = 0; r < w->comm->size; r++) {
            if (kind == RMA_REQ_LOCK)
                onic_mpi_wctl_lock(&w->ctl[r], MPI_LOCK_SHARED);
            else
                onic_mpi_wctl_unlock(&w->ctl[r], MPI_LOCK_SHARED);
        }
        return MPI_SUCCESS;
    }
    wt = onic_calloc((size_t)w->comm->size, sizeof(*wt));
    if (wt == NULL)
        return onic_mpi_win_err(w, MPI_ERR_NO_MEM, call, "no memory for %d lock requests",
                                w->comm->size);
    for (; n < w->comm->size && rc == MPI_SUCCESS; n++)
        rc = rma_lock_send(w, n, kind, MPI_LOCK_SHARED, &wt[n], call);
    if (rc != MPI_SUCCESS)
        n--;
    /* Every request sent must be answered before its waiter goes. */
    if (rma_lock_wait(w, wt, n, call) != MPI_SUCCESS && rc == MPI_SUCCESS)
        rc = MPI_ERR_RMA_SYNC;
    onic_free(wt);
    return rc;
}

int onic_mpi_rma_lock_all(onic_mpi_win_t *w, const char *call)
{
    return rma_lock_many(w, RMA_REQ_LOCK, call);
}

int onic_mpi_rma_unlock_all(onic_mpi_win_t *w, const char *call)
{
    return rma_lock_many(w, RMA_REQ_UNLOCK, call);
}

/* --- Setup ------------------------------------------------------------------------- */
void onic_mpi_rma_win_add(onic_mpi_win_t *w)
{
    rma.by_id[w->id] = w;
}

void onic_mpi_rma_win_del(onic_mpi_win_t *w)
{
    if (rma.by_id[w->id] == w)
        rma.by_id[w->id] = NULL;
}

int onic_mpi_rma_setup(onic_mpi_comm_t *c, const char *call)
{
    size_t bytes;
    ptl_md_t md;
    ptl_handle_md_t mdh;
    const char *what;
    int rc;

    if (rma.ready)
        return MPI_SUCCESS;
    rma.size = onic_mpi_g.size;
    rma.rank = onic_mpi_g.rank;
    bytes = (size_t)rma.size * ONIC_MPI_RMA_SLOTS * ONIC_MPI_RMA_SLOT;
    rma.inbox = onic_aligned_alloc(64, bytes);
    rma.slots = onic_aligned_alloc(64, bytes);
    rma.slot = onic_calloc((size_t)rma.size * ONIC_MPI_RMA_SLOTS, sizeof(*rma.slot));
    rma.issued = onic_calloc((size_t)rma.size, sizeof(*rma.issued));
    rma.done = onic_calloc((size_t)rma.size, sizeof(*rma.done));
    rma.dirty = onic_calloc((size_t)rma.size, sizeof(*rma.dirty));
    rma.dirty_list = onic_calloc((size_t)rma.size, sizeof(*rma.dirty_list));
    if (rma.inbox == NULL || rma.slots == NULL || rma.slot == NULL || rma.issued == NULL ||
        rma.done == NULL || rma.dirty == NULL || rma.dirty_list == NULL) {
        onic_mpi_rma_teardown();
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for the one-sided inbox "
                            "(2 x %zu bytes)", bytes);
    }
    memset(rma.inbox, 0, bytes);
    memset(rma.slots, 0, bytes);
    rma.oq = rma.tq = PTL_EQ_NONE;
    rma.put_md = rma.get_md = PTL_INVALID_HANDLE;
    rma.inbox_me = rma.answer_me = rma.gone_me = PTL_INVALID_HANDLE;
    what = "allocate the one-sided event queues";
    if ((rc = PtlEQAlloc(onic_mpi_g.ni, RMA_OQ_EVENTS, PTL_EQ_HANDLER_NONE, &rma.oq)) != PTL_OK ||
        (rc = PtlEQAlloc(onic_mpi_g.ni, RMA_TQ_EVENTS, rma_inbox_handler, &rma.tq)) != PTL_OK)
        goto err;
    /* Puts report only their ACK, gets only their REPLY_END. */
    memset(&md, 0, sizeof(md));
    md.length = PTL_SIZE_MAX;
    md.threshold = PTL_MD_THRESH_INF;
    md.eq_handle = rma.oq;
    md.options = PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE;
    what = "bind the one-sided MDs";
    if ((rc = PtlMDBind(onic_mpi_g.ni, md, PTL_RETAIN, &rma.put_md)) != PTL_OK)
        goto err;
    md.options = PTL_MD_EVENT_START_DISABLE;
    if ((rc = PtlMDBind(onic_mpi_g.ni, md, PTL_RETAIN, &rma.get_md)) != PTL_OK)
        goto err;
    /* The inbox and the answer slots: remote offsets, never used up. */
    what = "attach the one-sided inbox";
    md.start = rma.inbox;
    md.length = bytes;
    md.options = PTL_MD_OP_PUT | PTL_MD_MANAGE_REMOTE | PTL_MD_ACK_DISABLE |
                 PTL_MD_EVENT_START_DISABLE;
    md.eq_handle = rma.tq;
    if ((rc = PtlMEAttach(onic_mpi_g.ni, ONIC_MPI_PT_ACC, rma_any, 0, 0, PTL_RETAIN,
                          PTL_INS_AFTER, &rma.inbox_me)) != PTL_OK ||
        (rc = PtlMDAttach(rma.inbox_me, md, PTL_RETAIN, &mdh)) != PTL_OK)
        goto err;
    md.start = rma.slots;
    md.eq_handle = rma.oq;
    what = "attach the one-sided answer slots";
    if ((rc = PtlMEAttach(onic_mpi_g.ni, ONIC_MPI_PT_ACCR, rma_any, 0, 0, PTL_RETAIN,
                          PTL_INS_AFTER, &rma.answer_me)) != PTL_OK ||
        (rc = PtlMDAttach(rma.answer_me, md, PTL_RETAIN, &mdh)) != PTL_OK)
        goto err;
    /* Behind every window's entry: what finds no window (freed) is taken,
     * cut to nothing, and still acked or replied to, so its origin learns
     * of it instead of waiting for ever. */
    what = "attach the one-sided catch-all entry";
    md.start = NULL;
    md.length = 0;
    md.options = PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_TRUNCATE;
    md.eq_handle = PTL_EQ_NONE;
    if ((rc = PtlMEAttach(onic_mpi_g.ni, ONIC_MPI_PT_WIN, rma_any, 0, ~UINT64_C(0), PTL_RETAIN,
                          PTL_INS_AFTER, &rma.gone_me)) != PTL_OK ||
        (rc = PtlMDAttach(rma.gone_me, md, PTL_RETAIN, &mdh)) != PTL_OK)
        goto err;
    rma.ready = 1;
    return MPI_SUCCESS;

err:
    onic_mpi_rma_teardown();
    return onic_mpi_err_ptl(c, call, what, rc);
}

void onic_mpi_rma_teardown(void)
{
    /* Nothing may land in memory about to be freed, nor a handler run. */
    if (rma.inbox_me != PTL_INVALID_HANDLE && rma.inbox_me != 0)
        PtlMEUnlink(rma.inbox_me);
    if (rma.answer_me != PTL_INVALID_HANDLE && rma.answer_me != 0)
        PtlMEUnlink(rma.answer_me);
    if (rma.gone_me != PTL_INVALID_HANDLE && rma.gone_me != 0)
        PtlMEUnlink(rma.gone_me);
    if (rma.put_md != PTL_INVALID_HANDLE && rma.put_md != 0)
        PtlMDUnlink(rma.put_md);
    if (rma.get_md != PTL_INVALID_HANDLE && rma.get_md != 0)
        PtlMDUnlink(rma.get_md);
    if (rma.tq != PTL_EQ_NONE && rma.tq != 0)
        PtlEQFree(rma.tq);
    if (rma.oq != PTL_EQ_NONE && rma.oq != 0)
        PtlEQFree(rma.oq);
    onic_free(rma.inbox);
    onic_free(rma.slots);
    onic_free(rma.slot);
    onic_free(rma.issued);
    onic_free(rma.done);
    onic_free(rma.dirty);
    onic_free(rma.dirty_list);
    onic_free(rma.later);
    memset(&rma, 0, sizeof(rma));
}

/* --- Pieces of a datatype ---------------------------------------------------------------- */
/* Walks count elements of t as contiguous pieces (offsets from the buffer). */
typedef struct rma_it {
    const onic_mpi_type_t *t;
    int       count, i;
    size_t    b, in;   /* block, bytes of it done */
} rma_it_t;

static void rma_it_init(rma_it_t *it, const onic_mpi_type_t *t, int count)
{
    it->t = t;
    it->count = t->size == 0 ? 0 : count;
    it->i = 0;
    it->b = 0;
    it->in = 0;
}

/* The next piece of at most max bytes: 1, or 0 at the end. */
static int rma_it_next(rma_it_t *it, size_t max, ptrdiff_t *off_p, size_t *len_p)
{
    const onic_mpi_type_t *t = it->t;

    while (it->i < it->count) {
        /* A type without gaps is one block of all elements. */
        size_t blen = t->contig ? t->size * (size_t)it->count : t->blocks[it->b].len;
        ptrdiff_t boff = t->contig ? t->blocks[0].off
                                   : (ptrdiff_t)it->i * t->extent + t->blocks[it->b].off;
        size_t n = blen - it->in;

        if (n == 0) {
            it->in = 0;
            if (t->contig || ++it->b == t->nblocks) {
                it->b = 0;
                it->i = t->contig ? it->count : it->i + 1;
            }
            continue;
        }
        if (n > max)
            n = max;
        *off_p = boff + (ptrdiff_t)it->in;
        *len_p = n;
        it->in += n;
        return 1;
    }
    return 0;
}

/* The origin's and the target's pieces walked in step: each step a run of
 * bytes contiguous on both sides. */
typedef struct rma_pair {
    rma_it_t  o, t;
    ptrdiff_t ooff, toff;
    size_t    olen, tlen;
} rma_pair_t;

static void rma_pair_init(rma_pair_t *p, const onic_mpi_type_t *ot, int ocount,
                          const onic_mpi_type_t *tt, int tcount)
{
    rma_it_init(&p->o, ot, ocount);
    rma_it_init(&p->t, tt, tcount);
    p->ooff = p->toff = 0;
    p->olen = p->tlen = 0;
}

/* The next run of at most max bytes (origin and target offsets, length):
 * 1, or 0 at the end of either side. */
static int rma_pair_next(rma_pair_t *p, size_t max, ptrdiff_t *ooff_p, ptrdiff_t *toff_p,
                         size_t *n_p)
{
    size_t n;

    if ((p->olen == 0 && !rma_it_next(&p->o, max, &p->ooff, &p->olen)) ||
        (p->tlen == 0 && !rma_it_next(&p->t, max, &p->toff, &p->tlen)))
        return 0;
    n = p->olen < p->tlen ? p->olen : p->tlen;
    *ooff_p = p->ooff;
    *toff_p = p->toff;
    *n_p = n;
    p->ooff += (ptrdiff_t)n;
    p->toff += (ptrdiff_t)n;
    p->olen -= n;
    p->tlen -= n;
    return 1;
}

/* Every piece of the target side within the window of comm rank `rank`. */
static int rma_range(onic_mpi_win_t *w, int rank, MPI_Aint disp, const onic_mpi_type_t *t,
                     int count, const char *call, MPI_Aint *base_p)
{
    MPI_Aint du = w->disp_units[rank], size = w->sizes[rank], base;

    /* A dynamic window's displacements are addresses, checked by the
     * target against its attached regions (MPI_ERR_RMA_RANGE at completion). */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        size = PTRDIFF_MAX;
    rma_it_t it;
    ptrdiff_t off;
    size_t len;

    if (disp < 0 || __builtin_mul_overflow(disp, du, &base))
        return onic_mpi_win_err(w, MPI_ERR_RMA_RANGE, call, "target displacement %lld is "
                                "outside the window of rank %d (%lld bytes, disp_unit %lld)",
                                (long long)disp, rank, (long long)size, (long long)du);
    rma_it_init(&it, t, count);
    if (t->contig && it.count > 0) {
        /* One piece (the usual case): no walk. */
        off = t->blocks[0].off;
        len = t->size * (size_t)count;
        if (base + off < 0 || base + off > size || (MPI_Aint)len > size - (base + off))
            goto outside;
    } else {
        while (rma_it_next(&it, SIZE_MAX, &off, &len))
            if (base + off < 0 || base + off > size || (MPI_Aint)len > size - (base + off))
                goto outside;
    }
    *base_p = base;
    return MPI_SUCCESS;
outside:
    return onic_mpi_win_err(w, MPI_ERR_RMA_RANGE, call, "bytes %lld to %lld of the target are "
                            "outside the window of rank %d (%lld bytes); check target_disp, "
                            "target_count and the window's size", (long long)(base + off),
                            (long long)(base + off) + (long long)len, rank, (long long)size);
}

/* --- Put and get ------------------------------------------------------------------------- */
typedef struct rma_args {
    onic_mpi_win_t  *w;
    char            *origin;
    int              ocount;
    onic_mpi_type_t *otype;
    int              rank;
    MPI_Aint         disp;
    int              tcount;
    onic_mpi_type_t *ttype;
} rma_args_t;

/* The checks every operation makes. 1: nothing to do (MPI_PROC_NULL). */
static int rma_check(MPI_Win win, const char *call, int rank, MPI_Datatype ot, int ocount,
                     MPI_Datatype tt, int tcount, rma_args_t *a, int *rc_p)
{
    onic_mpi_win_t *w = onic_mpi_win_get(win, call, rc_p);

    if (w == NULL)
        return -1;
    a->w = w;
    if (rank == MPI_PROC_NULL)
        return 1;
    if (rank < 0 || rank >= w->comm->size) {
        *rc_p = onic_mpi_win_err(w, MPI_ERR_RANK, call, "target rank %d is not in the "
                                 "window's group (0 to %d)", rank, w->comm->size - 1);
        return -1;
    }
    if (ocount < 0 || tcount < 0) {
        *rc_p = onic_mpi_win_err(w, MPI_ERR_COUNT, call, "count %d is negative",
                                 ocount < 0 ? ocount : tcount);
        return -1;
    }
    if ((a->otype = onic_mpi_type_check(ot, w->comm, call, rc_p)) == NULL ||
        (a->ttype = onic_mpi_type_check(tt, w->comm, call, rc_p)) == NULL)
        return -1;
    if ((*rc_p = onic_mpi_win_access(w, rank, call)) != MPI_SUCCESS)
        return -1;
    a->rank = rank;
    a->ocount = ocount;
    a->tcount = tcount;
    return 0;
}

static int rma_sizes_match(rma_args_t *a, const char *call, int *rc_p)
{
    size_t ob = a->otype->size * (size_t)a->ocount, tb = a->ttype->size * (size_t)a->tcount;

    if (ob == tb)
        return 1;
    *rc_p = onic_mpi_win_err(a->w, MPI_ERR_TYPE, call, "the origin has %zu bytes and the "
                             "target %zu: the two datatypes and counts must describe the same "
                             "data", ob, tb);
    return 0;
}

static int rma_move_dynamic(rma_args_t *a, int get, const char *call);

/* Put or get on a window in shared memory: copies between the origin's
 * pieces and the target's segment, complete when they return. memmove: an
 * origin buffer may lie in the window itself. */
static void rma_move_shm(rma_args_t *a, int get, MPI_Aint base)
{
    char *seg = a->w->shm + a->w->shm_off[a->rank] + base;
    rma_pair_t pr;
    ptrdiff_t ooff, toff;
    size_t n = a->ttype->size * (size_t)a->tcount;

    a->w->fence_ops++;
    if (a->otype->contig && a->ttype->contig) {
        /* One piece each side (the sizes match: rma_sizes_match). */
        if (n == 0)
            return;
        if (get)
            onic_move(a->origin + a->otype->blocks[0].off, seg + a->ttype->blocks[0].off, n);
        else
            onic_move(seg + a->ttype->blocks[0].off, a->origin + a->otype->blocks[0].off, n);
        return;
    }
    rma_pair_init(&pr, a->otype, a->ocount, a->ttype, a->tcount);
    while (rma_pair_next(&pr, SIZE_MAX, &ooff, &toff, &n)) {
        if (get)
            onic_move(a->origin + ooff, seg + toff, n);
        else
            onic_move(seg + toff, a->origin + ooff, n);
    }
}

static int rma_move(rma_args_t *a, int get, const char *call)
{
    uint32_t world;
    ptl_process_id_t id;
    rma_pair_t pr;
    ptrdiff_t ooff, toff;
    size_t n, piece;
    MPI_Aint base;
    int rc;

    if (a->w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return rma_move_dynamic(a, get, call);
    if ((rc = rma_range(a->w, a->rank, a->disp, a->ttype, a->tcount, call, &base)) !=
        MPI_SUCCESS)
        return rc;
    if (a->w->ctl != NULL) {
        rma_move_shm(a, get, base);
        return MPI_SUCCESS;
    }
    world = onic_mpi_comm_world_rank(a->w->comm, a->rank);
    id = rma_pid(world);
    rma_pair_init(&pr, a->otype, a->ocount, a->ttype, a->tcount);
    piece = a->ttype->size * (size_t)a->tcount <= RMA_SMALL_MSGS * onic_mpi_g.eager_limit &&
                    onic_mpi_g.eager_limit > 0
                ? onic_mpi_g.eager_limit
                : RMA_SEG_MAX;
    while (rma_pair_next(&pr, piece, &ooff, &toff, &n)) {
        rma_room();
        if (get)
            rc = PtlGetRegion(rma.get_md, (ptl_size_t)(uintptr_t)(a->origin + ooff), n, id,
                              ONIC_MPI_PT_WIN, 0, (ptl_match_bits_t)a->w->id,
                              (ptl_size_t)(base + toff));
        else if (n <= RMA_INLINE)
            rc = PtlPutRegion(onic_mpi_g.all_md, (ptl_size_t)(uintptr_t)(a->origin + ooff), n,
                              PTL_NOACK_REQ, id, ONIC_MPI_PT_WIN, 0,
                              (ptl_match_bits_t)a->w->id, (ptl_size_t)(base + toff), 0);
        else
            rc = PtlPutRegion(rma.put_md, (ptl_size_t)(uintptr_t)(a->origin + ooff), n,
                              PTL_ACK_REQ, id, ONIC_MPI_PT_WIN, 0, (ptl_match_bits_t)a->w->id,
                              (ptl_size_t)(base + toff), 0);
        if (rc != PTL_OK)
            return onic_mpi_err_ptl(a->w->comm, call, get ? "start a get" : "start a put", rc);
        if (!get && n <= RMA_INLINE)
            rma_mark_dirty(world);
        else
            rma_issued(world);
        a->w->fence_ops++;
    }
    return MPI_SUCCESS;
}

static int rma_put_get(const void *origin, int ocount, MPI_Datatype ot, int rank,
                       MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Win win, int get,
                       const char *call)
{
    rma_args_t a;
    int rc = MPI_SUCCESS, k;

    k = rma_check(win, call, rank, ot, ocount, tt, tcount, &a, &rc);
    if (k != 0)
        return k > 0 ? MPI_SUCCESS : rc;
    if (!rma_sizes_match(&a, call, &rc))
        return rc;
    a.origin = (char *)(uintptr_t)origin;
    a.disp = disp;
    return rma_move(&a, get, call);
}

/* MPI_Put and MPI_Get, every case: the checks that report, then a copy
 * in shared memory or Portals operations. One function each, with the
 * call's own eight arguments, so that the common way reaches them by a
 * jump (a sibling call): a ninth argument, or a call that returns to
 * MPI_Put, made gcc save six registers on every put. */
static __attribute__((noinline)) int rma_put_general(const void *origin, int ocount,
                                                     MPI_Datatype ot, int rank, MPI_Aint disp,
                                                     int tcount, MPI_Datatype tt, MPI_Win win)
{
    ONIC_MPI_CHECK_INIT("MPI_Put");
    return rma_put_get(origin, ocount, ot, rank, disp, tcount, tt, win, 0, "MPI_Put");
}

static __attribute__((noinline)) int rma_get_general(void *origin, int ocount, MPI_Datatype ot,
                                                     int rank, MPI_Aint disp, int tcount,
                                                     MPI_Datatype tt, MPI_Win win)
{
    ONIC_MPI_CHECK_INIT("MPI_Get");
    return rma_put_get(origin, ocount, ot, rank, disp, tcount, tt, win, 1, "MPI_Get");
}

/* The common put or get on a window in shared memory -- a live window of
 * one node, a rank of its group to which an access epoch is open, 1 byte
 * or more of predefined or committed contiguous types of the same size on
 * both sides, the target's bytes inside its segment, no bundle open -- is
 * every check of rma_check, rma_sizes_match and rma_range in one test,
 * then rma_move_shm's copy: complete when it returns. Whatever fails a
 * check goes the general way, which checks again and reports it with its
 * class. (A window with ctl is never dynamic: MPI_Win_create_dynamic has
 * no memory to share.) */
static inline __attribute__((always_inline)) int
rma_put_get_body(const void *origin, int ocount, MPI_Datatype ot, int rank, MPI_Aint disp,
                 int tcount, MPI_Datatype tt, MPI_Win win, int get)
{
    onic_mpi_win_t *w;
    onic_mpi_type_t *o, *t;
    size_t n, tn;
    MPI_Aint at;
    char *seg;

    if (__builtin_expect(!onic_mpi_g.initialized || onic_mpi_g.finalized ||
                         onic_mpi_g.bundle_open, 0) ||
        (w = onic_mpi_win_lookup(win)) == NULL || w->ctl == NULL ||
        (unsigned)rank >= (unsigned)w->comm->size ||
        (o = onic_mpi_type_lookup(ot)) == NULL || !o->contig ||
        /* a negative count: 2^64 - k bytes or more, or a wrap */
        __builtin_mul_overflow(o->size, (size_t)ocount, &n) || n == 0 ||
        /* The same type and count on both sides (the usual call) are
         * looked up and sized once. */
        (ot == tt && ocount == tcount
             ? (t = o, 0)
             : (t = onic_mpi_type_lookup(tt)) == NULL || !t->contig ||
                   __builtin_mul_overflow(t->size, (size_t)tcount, &tn) || n != tn) ||
        !(w->locked[rank] || w->fence || (w->started && w->access[rank])) || disp < 0 ||
        __builtin_mul_overflow(disp, (MPI_Aint)w->disp_units[rank], &at) ||
        (at += t->blocks[0].off) < 0 || at > w->sizes[rank] || n > (size_t)(w->sizes[rank] - at))
        return get ? rma_get_general((void *)(uintptr_t)origin, ocount, ot, rank, disp, tcount,
                                     tt, win)
                   : rma_put_general(origin, ocount, ot, rank, disp, tcount, tt, win);
    seg = w->shm + w->shm_off[rank] + at;
    w->fence_ops++;
    if (get)
        onic_move((char *)(uintptr_t)origin + o->blocks[0].off, seg, n);
    else
        onic_move(seg, (const char *)origin + o->blocks[0].off, n);
    return MPI_SUCCESS;
}

/* Under MPI_THREAD_MULTIPLE: the same work, holding the lock (eight
 * arguments each, as the general ways above). */
static __attribute__((noinline)) int mpi_put_locked(const void *origin, int ocount,
                                                    MPI_Datatype ot, int rank, MPI_Aint disp,
                                                    int tcount, MPI_Datatype tt, MPI_Win win)
{
    ONIC_MPI_LOCKED_MT;
    return rma_put_get_body(origin, ocount, ot, rank, disp, tcount, tt, win, 0);
}

static __attribute__((noinline)) int mpi_get_locked(void *origin, int ocount, MPI_Datatype ot,
                                                    int rank, MPI_Aint disp, int tcount,
                                                    MPI_Datatype tt, MPI_Win win)
{
    ONIC_MPI_LOCKED_MT;
    return rma_put_get_body(origin, ocount, ot, rank, disp, tcount, tt, win, 1);
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win)
{
    ONIC_MPI_LOCKED_VIA(mpi_put_locked(origin_addr, origin_count, origin_datatype, target_rank,
                                       target_disp, target_count, target_datatype, win));
    return rma_put_get_body(origin_addr, origin_count, origin_datatype, target_rank,
                            target_disp, target_count, target_datatype, win, 0);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    ONIC_MPI_LOCKED_VIA(mpi_get_locked(origin_addr, origin_count, origin_datatype, target_rank,
                                       target_disp, target_count, target_datatype, win));
    return rma_put_get_body(origin_addr, origin_count, origin_datatype, target_rank,
                            target_disp, target_count, target_datatype, win, 1);
}

/* --- Accumulates ---------------------------------------------------------------------- */
/* The first predefined type of t's basic kind (its index), or -1: from a
 * table made once (searching the 61 types cost an accumulate on a window
 * in shared memory more than all the rest of it). */
static int rma_type_index(const onic_mpi_type_t *t)
{
    static int8_t first[ONIC_MPI_B_COUNT];
    static int ready;

    if (!ready) {
        memset(first, -1, sizeof(first));
        for (int i = ONIC_MPI_TYPE_NPREDEF - 1; i >= 0; i--)
            first[onic_mpi_type_predef[i].basic] = (int8_t)i;
        ready = 1;
    }
    return (unsigned)t->basic < ONIC_MPI_B_COUNT ? first[t->basic] : -1;
}

/* Whether t's elements have a gap inside (MPI_SHORT_INT's, between its
 * short and its int): some piece of it is not whole elements. */
static int rma_gapped(const onic_mpi_type_t *t)
{
    for (size_t b = 0; b < t->nblocks; b++)
        if (t->blocks[b].len % t->basic_size != 0)
            return 1;
    return 0;
}

/* The operation's index, or RMA_OP_REPLACE / RMA_OP_NO_OP. */
static int rma_op(rma_args_t *a, MPI_Op op, int fetch, const char *call, int *op_p)
{
    if (a->ttype->basic == ONIC_MPI_B_NONE || rma_type_index(a->ttype) < 0)
        return onic_mpi_win_err(a->w, MPI_ERR_TYPE, call, "the target datatype is not made "
                                "of one predefined type; accumulates need one");
    /* The target applies an operation to whole elements lying in one piece
     * of its memory (MPI_SHORT_INT, with a gap inside, is not); replacing
     * or reading them moves their bytes piece by piece, in one request an
     * element (rma_acc, RMA_ACC_WHOLE), which takes any layout. */
    if (op != MPI_REPLACE && op != MPI_NO_OP && rma_gapped(a->ttype))
        return onic_mpi_win_err(a->w, MPI_ERR_TYPE, call, "accumulates on %s take MPI_REPLACE "
                                "and MPI_NO_OP only: its elements have a gap inside",
                                a->ttype->predefined ? a->ttype->name : "this type");
    if (op == MPI_REPLACE) {
        *op_p = RMA_OP_REPLACE;
        return MPI_SUCCESS;
    }
    if (op == MPI_NO_OP) {
        if (!fetch)
            return onic_mpi_win_err(a->w, MPI_ERR_OP, call, "MPI_NO_OP is for "
                                    "MPI_Get_accumulate and MPI_Fetch_and_op only");
        *op_p = RMA_OP_NO_OP;
        return MPI_SUCCESS;
    }
    return onic_mpi_op_check(op, a->ttype, a->w->comm, call, op_p);
}

typedef struct rma_msg {
    char   buf[ONIC_MPI_RMA_SLOT];
    size_t data;   /* bytes of data gathered at RMA_DATA_AT */
    size_t answer; /* bytes its answer brings */
    size_t roff;   /* where they go in the packed result */
} rma_msg_t;

static int rma_msg_flush(rma_args_t *a, uint32_t world, rma_msg_t *m, rma_fetch_t *f,
                         const char *call)
{
    rma_req_hdr_t h;
    size_t at;
    int rc;

    memcpy(&h, m->buf, sizeof(h));
    if (h.nseg == 0)
        return MPI_SUCCESS;
    at = sizeof(h) + h.nseg * sizeof(rma_seg_t);
    memmove(m->buf + at, m->buf + RMA_DATA_AT, m->data);
    if (a->w->ctl != NULL)
        rc = rma_direct(a->w, a->rank, m->buf, at + m->data, f, m->roff, m->answer, call);
    else
        rc = rma_send(a->w, world, m->buf, at + m->data, f, m->roff, m->answer, NULL, call);
    m->roff += m->answer;
    m->data = m->answer = 0;
    h.nseg = 0;
    memcpy(m->buf, &h, sizeof(h));
    return rc;
}

/* Accumulate (fetch: and bring back what was there) packed origin data
 * `in` (NULL for MPI_NO_OP) into the target; bytes: as MPI_BYTE elements
 * whatever the types (1: a put or get to a dynamic window; RMA_ACC_WHOLE:
 * MPI_REPLACE or MPI_NO_OP on elements with a gap inside, each element's
 * pieces kept in one request, so that it is applied whole). */
#define RMA_ACC_WHOLE 2
static int rma_acc(rma_args_t *a, int op, const char *in, rma_fetch_t *f, int bytes,
                   const char *call)
{
    uint32_t world = onic_mpi_comm_world_rank(a->w->comm, a->rank);
    size_t esize = bytes ? 1 : a->ttype->basic_size, used = 0, len, n;
    rma_msg_t *m;
    rma_req_hdr_t h;
    rma_seg_t seg;
    rma_it_t ti;
    ptrdiff_t off;
    MPI_Aint base;
    int rc;

    if ((rc = rma_range(a->w, a->rank, a->disp, a->ttype, a->tcount, call, &base)) !=
        MPI_SUCCESS)
        return rc;
    if ((m = onic_malloc(sizeof(*m))) == NULL)
        return onic_mpi_win_err(a->w, MPI_ERR_NO_MEM, call, "no memory for a request");
    memset(&h, 0, sizeof(h));
    h.kind = RMA_REQ_ACC;
    h.win = (uint32_t)a->w->id;
    h.op = op;
    h.type = bytes ? (uint32_t)MPI_BYTE - (uint32_t)MPI_CHAR
                   : (uint32_t)rma_type_index(a->ttype);
    h.fetch = f != NULL;
    memcpy(m->buf, &h, sizeof(h));
    m->data = m->answer = m->roff = 0;
    rma_it_init(&ti, a->ttype, a->tcount);
    while (rma_it_next(&ti, SIZE_MAX, &off, &len)) {
        while (len > 0) {
            size_t room = RMA_DATA_CAP - m->answer;
            rma_req_hdr_t cur;

            memcpy(&cur, m->buf, sizeof(cur));
            n = len < room ? len : room;
            n -= n % esize;
            /* The request's last piece (no room for more pieces, or for
             * more bytes) ends where an element does: the rest, perhaps
             * the start of the next element, goes in the next request. A
             * fresh request's first piece is never its last. */
            if (bytes == RMA_ACC_WHOLE && (cur.nseg + 1 == RMA_SEGS || n == room)) {
                size_t end = (used + n) / a->ttype->basic_size * a->ttype->basic_size;
                n = end > used ? end - used : 0;
            }
            if (n == 0 || cur.nseg == RMA_SEGS) {
                if ((rc = rma_msg_flush(a, world, m, f, call)) != MPI_SUCCESS)
                    goto out;
                continue;
            }
            seg.off = (uint64_t)(base + off);
            seg.len = n;
            memcpy(m->buf + sizeof(cur) + cur.nseg * sizeof(seg), &seg, sizeof(seg));
            cur.nseg++;
            memcpy(m->buf, &cur, sizeof(cur));
            if (in != NULL) {
                memcpy(m->buf + RMA_DATA_AT + m->data, in + used, n);
                m->data += n;
            }
            m->answer += n;
            used += n;
            off += (ptrdiff_t)n;
            len -= n;
        }
    }
    rc = rma_msg_flush(a, world, m, f, call);
    a->w->fence_ops++;
out:
    onic_free(m);
    return rc;
}

/* An accumulate on a window in shared memory whose target is one piece:
 * applied by the origin straight from its data (in, packed; NULL for
 * MPI_NO_OP) under the target's accumulate lock, what was there copied to
 * result (NULL: not fetched), with no request built -- what rma_exec
 * does with one, as every origin of the window does. */
static int rma_acc_shm(rma_args_t *a, int op, const char *in, char *result, const char *call)
{
    size_t len = a->ttype->size * (size_t)a->tcount;
    MPI_Aint base;
    char *at;
    int rc;

    if ((rc = rma_range(a->w, a->rank, a->disp, a->ttype, a->tcount, call, &base)) !=
        MPI_SUCCESS)
        return rc;
    at = a->w->shm + a->w->shm_off[a->rank] + base + a->ttype->blocks[0].off;
    onic_mpi_wctl_acc_lock(&a->w->ctl[a->rank]);
    if (result != NULL)
        onic_move(result, at, len);
    if (op == RMA_OP_REPLACE)
        onic_move(at, in, len);
    else if (op != RMA_OP_NO_OP)
        onic_mpi_op_apply(op, &onic_mpi_type_predef[rma_type_index(a->ttype)], in, at, len);
    onic_mpi_wctl_acc_unlock(&a->w->ctl[a->rank]);
    a->w->fence_ops++;
    return MPI_SUCCESS;
}

static rma_fetch_t *rma_fetch_new(rma_args_t *a, void *result, int count, onic_mpi_type_t *rt,
                                  const char *call, int *rc_p)
{
    rma_fetch_t *f = onic_calloc(1, sizeof(*f));
    size_t bytes = a->ttype->size * (size_t)a->tcount;

    if (f == NULL || (bytes > 0 && (f->packed = onic_malloc(bytes)) == NULL)) {
        onic_free(f);
        *rc_p = onic_mpi_win_err(a->w, MPI_ERR_NO_MEM, call, "no memory for %zu bytes of "
                                 "results", bytes);
        return NULL;
    }
    f->bytes = bytes;
    f->result = result;
    f->count = count;
    f->type = rt;
    onic_mpi_type_ref(rt);
    return f;
}

/* The fetch is under way: complete once its last answer is in (perhaps now). */
static void rma_fetch_sent(rma_fetch_t *f)
{
    f->sent = 1;
    if (f->pending == 0)
        rma_fetch_finish(f);
}

/* The origin's data as one run of bytes: in place if contiguous, else
 * packed into *packed_p (freed by the caller). */
static int rma_origin_data(rma_args_t *a, const void *origin_addr, int count,
                           const char **in_p, char **packed_p, const char *call)
{
    size_t bytes = a->otype->size * (size_t)count;

    *packed_p = NULL;
    if (a->otype->contig || bytes == 0) {
        *in_p = (const char *)origin_addr + (bytes > 0 ? a->otype->blocks[0].off : 0);
        return MPI_SUCCESS;
    }
    if ((*packed_p = onic_malloc(bytes)) == NULL)
        return onic_mpi_win_err(a->w, MPI_ERR_NO_MEM, call, "no memory to pack %zu bytes",
                                bytes);
    onic_mpi_type_pack(a->otype, origin_addr, count, *packed_p);
    *in_p = *packed_p;
    return MPI_SUCCESS;
}

/* A dynamic window's memory is not one Portals MD: a put is a replace and
 * a get a fetch, each a request the target checks against its attached
 * regions before it touches memory. */
static int rma_move_dynamic(rma_args_t *a, int get, const char *call)
{
    rma_fetch_t *f = NULL;
    char *packed = NULL;
    const char *in = NULL;
    int rc;

    if (get)
        f = rma_fetch_new(a, a->origin, a->ocount, a->otype, call, &rc);
    else
        rc = rma_origin_data(a, a->origin, a->ocount, &in, &packed, call);
    if (get ? f == NULL : rc != MPI_SUCCESS)
        return rc;
    rc = rma_acc(a, get ? RMA_OP_NO_OP : RMA_OP_REPLACE, in, f, 1, call);
    if (f != NULL)
        rma_fetch_sent(f);
    onic_free(packed);
    return rc;
}

static int rma_accumulate(const void *origin_addr, int origin_count, MPI_Datatype ot,
                          void *result_addr, int result_count, MPI_Datatype rt, int target_rank,
                          MPI_Aint target_disp, int target_count, MPI_Datatype tt, MPI_Op mop,
                          MPI_Win win, int fetch, const char *call)
{
    rma_args_t a;
    onic_mpi_type_t *rtype = NULL;
    rma_fetch_t *f = NULL;
    char *packed = NULL;
    const char *in = NULL;
    int rc = MPI_SUCCESS, k, op;

    k = rma_check(win, call, target_rank, mop == MPI_NO_OP ? tt : ot,
                  mop == MPI_NO_OP ? target_count : origin_count, tt, target_count, &a, &rc);
    if (k != 0)
        return k > 0 ? MPI_SUCCESS : rc;
    /* No data (a count of 0, or a type of no bytes): nothing to apply, and
     * an empty type has no element type to check. */
    if (a.ttype->size * (size_t)target_count == 0 &&
        (mop == MPI_NO_OP || a.otype->size * (size_t)origin_count == 0))
        return MPI_SUCCESS;
    a.disp = target_disp;
    if ((rc = rma_op(&a, mop, fetch, call, &op)) != MPI_SUCCESS)
        return rc;
    if (op != RMA_OP_NO_OP) {
        if (!rma_sizes_match(&a, call, &rc))
            return rc;
        if (a.otype->basic != a.ttype->basic)
            return onic_mpi_win_err(a.w, MPI_ERR_TYPE, call, "the origin and target "
                                    "datatypes are made of different predefined types");
    }
    if (fetch) {
        if (result_count < 0)
            return onic_mpi_win_err(a.w, MPI_ERR_COUNT, call, "result_count %d is negative",
                                    result_count);
        if ((rtype = onic_mpi_type_check(rt, a.w->comm, call, &rc)) == NULL)
            return rc;
        if (rtype->size * (size_t)result_count != a.ttype->size * (size_t)target_count ||
            (target_count > 0 && rtype->basic != a.ttype->basic))
            return onic_mpi_win_err(a.w, MPI_ERR_TYPE, call, "the result datatype and count "
                                    "must describe the target's data");
    }
    if (op != RMA_OP_NO_OP &&
        (rc = rma_origin_data(&a, origin_addr, origin_count, &in, &packed, call)) !=
            MPI_SUCCESS)
        return rc;
    if (a.w->ctl != NULL && a.ttype->contig && (!fetch || rtype->contig)) {
        rc = rma_acc_shm(&a, op, in, fetch ? (char *)result_addr + rtype->blocks[0].off : NULL,
                         call);
        onic_free(packed);
        return rc;
    }
    if (fetch && (f = rma_fetch_new(&a, result_addr, result_count, rtype, call, &rc)) == NULL) {
        onic_free(packed);
        return rc;
    }
    rc = rma_acc(&a, op, in, f, rma_gapped(a.ttype) ? RMA_ACC_WHOLE : 0, call);
    if (f != NULL)
        rma_fetch_sent(f);
    onic_free(packed);
    return rc;
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Accumulate");
    return rma_accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                          target_rank, target_disp, target_count, target_datatype, op, win, 0,
                          "MPI_Accumulate");
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count,
                       MPI_Datatype origin_datatype, void *result_addr, int result_count,
                       MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Get_accumulate");
    return rma_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count,
                          target_datatype, op, win, 1, "MPI_Get_accumulate");
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Fetch_and_op");
    return rma_accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                          target_disp, 1, datatype, op, win, 1, "MPI_Fetch_and_op");
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Compare_and_swap";
    rma_args_t a;
    rma_req_hdr_t h;
    rma_seg_t seg;
    rma_fetch_t *f;
    char buf[sizeof(h) + sizeof(seg) + 2 * 32];
    MPI_Aint base;
    size_t n;
    int rc = MPI_SUCCESS, k;

    ONIC_MPI_CHECK_INIT("MPI_Compare_and_swap");
    k = rma_check(win, call, target_rank, datatype, 1, datatype, 1, &a, &rc);
    if (k != 0)
        return k > 0 ? MPI_SUCCESS : rc;
    a.disp = target_disp;
    n = a.ttype->size;
    if (!a.ttype->predefined || a.ttype->basic == ONIC_MPI_B_NONE || n > 32)
        return onic_mpi_win_err(a.w, MPI_ERR_TYPE, call, "compare and swap takes one element "
                                "of a predefined type");
    if (origin_addr == NULL || compare_addr == NULL || result_addr == NULL)
        return onic_mpi_win_err(a.w, MPI_ERR_BUFFER, call, "the origin, compare and result "
                                "buffers must be given");
    if ((rc = rma_range(a.w, a.rank, a.disp, a.ttype, 1, call, &base)) != MPI_SUCCESS)
        return rc;
    memset(&h, 0, sizeof(h));
    h.kind = RMA_REQ_CAS;
    h.win = (uint32_t)a.w->id;
    h.nseg = 1;
    h.type = (uint32_t)rma_type_index(a.ttype);
    h.fetch = 1;
    seg.off = (uint64_t)base;
    seg.len = n;
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), &seg, sizeof(seg));
    memcpy(buf + sizeof(h) + sizeof(seg), origin_addr, n);
    memcpy(buf + sizeof(h) + sizeof(seg) + n, compare_addr, n);
    if ((f = rma_fetch_new(&a, result_addr, 1, a.ttype, call, &rc)) == NULL)
        return rc;
    if (a.w->ctl != NULL)
        rc = rma_direct(a.w, a.rank, buf, sizeof(h) + sizeof(seg) + 2 * n, f, 0, n, call);
    else
        rc = rma_send(a.w, onic_mpi_comm_world_rank(a.w->comm, a.rank), buf,
                      sizeof(h) + sizeof(seg) + 2 * n, f, 0, n, NULL, call);
    a.w->fence_ops++;
    rma_fetch_sent(f);
    return rc;
}

/* --- Request-based operations ----------------------------------------------------------
 * The operation is complete (at its target) before the call returns, and
 * the request is complete at once: MPI_Wait and MPI_Test take it without
 * polling. Correct, and no wait mechanism of its own in request.c; the
 * price is a round trip inside the call (for an accumulate on a message
 * window, until the target's next MPI call has served it). */
static int rma_request_done(MPI_Win win, int rank, MPI_Request *request, const char *call)
{
    onic_mpi_req_t *r;
    onic_mpi_win_t *w;
    int rc;

    if ((w = onic_mpi_win_get(win, call, &rc)) == NULL)
        return rc;
    if (rank != MPI_PROC_NULL &&
        (rc = onic_mpi_rma_flush(w, (int)onic_mpi_comm_world_rank(w->comm, rank), call)) !=
            MPI_SUCCESS)
        return rc;
    if ((r = onic_mpi_req_new(ONIC_MPI_REQ_SEND, call)) == NULL)
        return onic_mpi_win_err(w, MPI_ERR_NO_MEM, call, "no memory for a request");
    r->comm = w->comm;
    r->peer = MPI_PROC_NULL;
    r->active = 1;
    r->status.MPI_SOURCE = MPI_PROC_NULL;
    r->status.MPI_TAG = MPI_ANY_TAG;
    onic_mpi_req_complete(r);
    if (onic_mpi_htab_add(&onic_mpi_g.reqs, r, &r->handle) != 0) {
        onic_mpi_req_free(r);
        return onic_mpi_win_err(w, MPI_ERR_NO_MEM, call, "no memory for a request handle");
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

/* The request argument, checked before anything is started. */
static int rma_request_arg(MPI_Win win, MPI_Request *request, const char *call)
{
    onic_mpi_win_t *w;
    int rc;

    if ((w = onic_mpi_win_get(win, call, &rc)) == NULL)
        return rc;
    if (request == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, call, "request is NULL; pass where to store "
                                "the request");
    return MPI_SUCCESS;
}

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Rput");
    if ((rc = rma_request_arg(win, request, "MPI_Rput")) != MPI_SUCCESS ||
        (rc = rma_put_get(origin_addr, origin_count, origin_datatype, target_rank,
                          target_disp, target_count, target_datatype, win, 0, "MPI_Rput")) !=
            MPI_SUCCESS)
        return rc;
    return rma_request_done(win, target_rank, request, "MPI_Rput");
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Rget");
    if ((rc = rma_request_arg(win, request, "MPI_Rget")) != MPI_SUCCESS ||
        (rc = rma_put_get(origin_addr, origin_count, origin_datatype, target_rank,
                          target_disp, target_count, target_datatype, win, 1, "MPI_Rget")) !=
            MPI_SUCCESS)
        return rc;
    return rma_request_done(win, target_rank, request, "MPI_Rget");
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Raccumulate";
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((rc = rma_request_arg(win, request, call)) != MPI_SUCCESS ||
        (rc = rma_accumulate(origin_addr, origin_count, origin_datatype, NULL, 0,
                             MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                             target_datatype, op, win, 0, call)) != MPI_SUCCESS)
        return rc;
    return rma_request_done(win, target_rank, request, call);
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void *result_addr, int result_count,
                        MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Rget_accumulate";
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((rc = rma_request_arg(win, request, call)) != MPI_SUCCESS ||
        (rc = rma_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                             result_count, result_datatype, target_rank, target_disp,
                             target_count, target_datatype, op, win, 1, call)) != MPI_SUCCESS)
        return rc;
    return rma_request_done(win, target_rank, request, call);
}
