/* The engine runs Portals for its processes: one interface (onic_ptl_ni_t)
 * per process, kept here, on which each of the process's calls is made --
 * the same public calls, the same target side as inline -- once the
 * process's NI is selected (onic_ptl_ni_select). The interfaces reach the
 * outside through io hooks:
 *   send    a message to another interface waits in its receiver's mail,
 *           delivered after the step that sent it (never inside it);
 *   store   data for the process's memory goes as a DATA record before the
 *           event that reports it (the process copies it in, in order);
 *   event   events go to the process's event ring, its queues are its own;
 *   rma     large data moves between the two processes by the engine's
 *           mover (CMA, or the bounce areas), pipelined in chunks;
 *   load    a put's data came with the call; nothing else is at hand.
 * Everything for one process is done only while its event ring has room
 * for all an exchange may write (ONIC_ONLOAD_EVT_NEED), so a full ring
 * holds work back and never loses any. */
#include "onload/engine.h"
#include "onload/proto.h"
#include "base/config.h"
#include "base/copy.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

/* A message between two interfaces, waiting for its receiver. */
struct onload_msg {
    onload_msg_t   *next;
    uint32_t        src;
    size_t          hdr_len, len;
    onic_ptl_wire_t hdr;
    uint8_t         payload[];
};


/* Messages with at most this much payload (small puts, acks, the keys of
 * large ones) come from a pool: one per eager message would be a malloc each. */
#define SERVE_MSG_SMALL 64u

static onload_msg_t *serve_msg_get(engine_t *e, size_t len)
{
    return len <= SERVE_MSG_SMALL ? onic_pool_get(&e->mail_pool)
                                  : onic_malloc(sizeof(onload_msg_t) + len);
}

static void serve_msg_put(engine_t *e, onload_msg_t *m)
{
    if (m->len <= SERVE_MSG_SMALL)
        onic_pool_put(&e->mail_pool, m);
    else
        onic_free(m);
}

void onload_serve_init(engine_t *e)
{
    onic_pool_init(&e->mail_pool, sizeof(onload_msg_t) + SERVE_MSG_SMALL, 256);
}

/* Messages that may wait in the engine before it stops taking commands:
 * the processes then make progress by draining their event rings. */
#define SERVE_MAIL_MAX 65536u

static uint32_t serve_need(const engine_proc_t *p)
{
    return (uint32_t)ONIC_ONLOAD_EVT_NEED(p->evt.rec_size);
}

int onload_serve_active(const engine_proc_t *p)
{
    return p->ni != NULL;
}

int onload_serve_may_take(const engine_t *e)
{
    return e->mail < SERVE_MAIL_MAX;
}

int onload_serve_sends(const void *buf, size_t len)
{
    uint32_t op;

    if (len < sizeof(onic_onload_call_t))
        return 0;
    memcpy(&op, buf, sizeof(op)); /* op is the call's first field */
    return op == ONIC_ONLOAD_OP_PUT || op == ONIC_ONLOAD_OP_GET;
}

int onload_serve_data_pending(engine_proc_t *p)
{
    return p->data_mark > __atomic_load_n(&p->evt.hdr->head, __ATOMIC_ACQUIRE);
}

/* --- io hooks --------------------------------------------------------------- */
static onic_status_t serve_send(void *arg, uint32_t dest, const onic_ptl_wire_t *hdr,
                                size_t hdr_len, const void *payload, size_t len)
{
    engine_proc_t *p = arg, *d;
    engine_t *e = p->e;
    onload_msg_t *m;

    if (dest >= e->nprocs || hdr_len > sizeof(*hdr))
        return ONIC_ERR_INVALID_PARAM;
    m = serve_msg_get(e, len);
    if (m == NULL)
        return ONIC_ERR_NO_MEMORY;
    m->next = NULL;
    m->src = p->rank;
    m->hdr_len = hdr_len;
    m->len = len;
    memcpy(&m->hdr, hdr, hdr_len);
    if (len > 0)
        onic_copy(m->payload, payload, len);
    d = &e->procs[dest];
    if (d->mail_tail != NULL)
        d->mail_tail->next = m;
    else
        d->mail = m;
    d->mail_tail = m;
    e->mail++;
    return ONIC_OK;
}

static const void *serve_load(void *arg, const void *addr, size_t len)
{
    engine_proc_t *p = arg;

    (void)addr; /* the call's own region: its data came with it */
    return p->staged != NULL && p->staged_len == len ? p->staged : NULL;
}

static void serve_store(void *arg, void *addr, const void *data, size_t len)
{
    engine_proc_t *p = arg;
    engine_t *e = p->e;
    uint64_t a = (uint64_t)(uintptr_t)addr;
    onic_status_t st;

    /* Room was made sure of; longer writes come only by RMA. */
    if (len > ONIC_ONLOAD_DATA_INLINE) {
        onic_error("onload: a %zu-byte write for rank %u is beyond a DATA record", len, p->rank);
        return;
    }
    memcpy(e->scratch, &a, sizeof(a));
    memcpy(e->scratch + sizeof(a), data, len);
    st = onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_DATA, e->scratch, sizeof(a) + len);
    p->data_mark = p->evt.next;
    if (st != ONIC_OK)
        onic_error("onload: cannot write %zu bytes for rank %u: %s", len, p->rank,
                   onic_status_str(st));
}

static void serve_event(void *arg, ptl_handle_eq_t eq, const ptl_event_t *ev)
{
    engine_proc_t *p = arg;
    onic_onload_event_t r;

    r.eq = eq;
    r.ev = *ev;
    if (onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_EVENT, &r, sizeof(r)) != ONIC_OK)
        onic_error("onload: an event for rank %u found its ring full", p->rank);
}

static void serve_md_gone(void *arg, ptl_handle_md_t md)
{
    engine_proc_t *p = arg;

    if (p->closing)
        return; /* the process is closing its NI: its mirror goes too */
    if (onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_MD_GONE, &md, sizeof(md)) != ONIC_OK)
        onic_error("onload: news of an MD for rank %u found its ring full", p->rank);
}

/* A region to move by RMA needs no registration here: the key names the
 * initiator's memory, and only the interfaces kept here see keys. */
static onic_status_t serve_mem_reg(void *arg, void *addr, size_t len, onic_ptl_rkey_t *key_p)
{
    engine_proc_t *p = arg;

    key_p->addr = (uint64_t)(uintptr_t)addr;
    key_p->len = len;
    key_p->id = ++p->e->rma_ids;
    return ONIC_OK;
}

static void serve_mem_dereg(void *arg, const onic_ptl_rkey_t *key)
{
    (void)arg;
    (void)key;
}

static onic_status_t serve_rma(void *arg, uint32_t peer, int write, void *local,
                               const onic_ptl_rkey_t *key, uint64_t roffset, size_t len,
                               void *ctx)
{
    engine_proc_t *p = arg;
    uint64_t here = (uint64_t)(uintptr_t)local;

    if (peer >= p->e->nprocs || roffset > key->len || len > key->len - roffset)
        return ONIC_ERR_INVALID_PARAM;
    if (write)
        onload_engine_move_ptl(p->e, p->rank, p->rank, here, peer, key->addr + roffset, len,
                               ctx);
    else
        onload_engine_move_ptl(p->e, p->rank, peer, key->addr + roffset, p->rank, here, len,
                               ctx);
    return ONIC_OK;
}

static const onic_ptl_io_t serve_io = {
    .send = serve_send,
    .mem_reg = serve_mem_reg,
    .mem_dereg = serve_mem_dereg,
    .rma = serve_rma,
    .load = serve_load,
    .store = serve_store,
    .event = serve_event,
    .md_gone = serve_md_gone,
};

/* --- the calls ---------------------------------------------------------------- */
static void serve_close_ni(engine_t *e, engine_proc_t *p)
{
    onic_ptl_ni_t *ni = p->ni;

    onload_rma_t **w = &e->rma_wait;

    if (ni == NULL)
        return;
    /* Moves it asked for that have not started: forget them (their ctx goes
     * with the NI); the ones under way check the NI's incarnation. */
    e->rma_wait_tail = NULL;
    while (*w != NULL) {
        if ((*w)->owner == p->rank) {
            onload_rma_t *gone = *w;
            *w = gone->next;
            onic_free(gone);
        } else {
            e->rma_wait_tail = *w;
            w = &(*w)->next;
        }
    }
    p->closing = 1;
    onic_ptl_ni_select(ni);
    PtlNIFini(ni->handle);
    onic_ptl_ni_select(NULL);
    p->closing = 0;
    p->ni = NULL;
    p->ni_closed = 1;
    onic_free(p->parked);
    p->parked = NULL;
    p->parked_len = 0;
}

static int serve_ni_init(engine_t *e, engine_proc_t *p, const onic_onload_call_t *c,
                         onic_onload_reply_t *r)
{
    onic_ptl_ni_params_t params;
    ptl_handle_ni_t h;
    int rc;

    if (p->ni != NULL) {
        r->h = p->ni->handle;
        r->u.limits = p->ni->limits;
        return PTL_IFACE_DUP;
    }
    if (p->evt.nrecs < ONIC_ONLOAD_EVT_NEED(p->evt.rec_size) ||
        p->cmd.nrecs < ONIC_ONLOAD_CMD_NEED(p->cmd.rec_size)) {
        onic_error("onload: rank %u's rings (%u and %u slots) cannot hold a whole exchange; "
                   "set ONIC_ONLOAD_EVENT_RECS and ONIC_ONLOAD_CMD_RECS to 64 or more", p->rank,
                   p->evt.nrecs, p->cmd.nrecs);
        return PTL_NAL_FAILED;
    }
    if (c->u.init.rank != p->rank || c->u.init.size != e->nprocs) {
        onic_error("onload: rank %u asks for an interface as rank %u of %u; this job has %u",
                   p->rank, c->u.init.rank, c->u.init.size, e->nprocs);
        return PTL_PID_INVALID;
    }
    memset(&params, 0, sizeof(params));
    params.rank = p->rank;
    params.size = e->nprocs;
    params.uid = c->u.init.uid;
    params.jid = c->u.init.jid;
    params.max_inline = ONIC_ONLOAD_PUT_INLINE;
    params.desired = c->u.init.have_limits ? &c->u.init.limits : NULL;
    params.io = &serve_io;
    params.io_arg = p;
    for (unsigned i = 0; onic_config_match_engines[i] != NULL; i++)
        if (strncmp(c->u.init.engine, onic_config_match_engines[i],
                    sizeof(c->u.init.engine)) == 0)
            params.engine = onic_config_match_engines[i];
    onic_ptl_ni_select(NULL);
    rc = onic_ptl_ni_open(&params, &r->u.limits, &h);
    if (rc != PTL_OK)
        return rc;
    onic_ptl_ni_of(h, &p->ni);
    onic_ptl_ni_select(NULL);
    p->ni_gen++;
    p->ni_closed = 0;
    p->ni_ready = 0;
    r->h = h;
    return PTL_OK;
}

/* The call's Portals code; outputs into r. p's NI is selected. */
static int serve_dispatch(engine_t *e, engine_proc_t *p, const onic_onload_call_t *c,
                          const void *data, onic_onload_reply_t *r)
{
    ptl_pt_index_t pt = c->pt;
    ptl_sr_value_t v = 0;
    onic_ptl_eq_t *eq;
    ptl_md_t old;
    int rc;

    switch (c->op) {
    case ONIC_ONLOAD_OP_NI_FINI:
        if (p->ni == NULL || c->h != p->ni->handle)
            return PTL_NI_INVALID;
        serve_close_ni(e, p);
        return PTL_OK;
    case ONIC_ONLOAD_OP_NI_STATUS:
        rc = PtlNIStatus(c->h, (ptl_sr_index_t)c->off, &v);
        r->value = v;
        return rc;
    case ONIC_ONLOAD_OP_NI_HANDLE:
        return PtlNIHandle(c->h, &r->h);
    case ONIC_ONLOAD_OP_AC_ENTRY:
        return PtlACEntry(c->h, c->ac, c->id, (ptl_uid_t)c->off, (ptl_jid_t)c->len, c->pt);
    case ONIC_ONLOAD_OP_ME_ATTACH:
        if (c->flag == 1) {
            rc = PtlMEAttachAny(c->h, &pt, c->id, c->bits, c->ignore, c->unlink, &r->h);
            r->pt = pt;
            return rc;
        }
        if (c->flag == 2)
            return PtlMEAttachOverflow(c->h, c->pt, c->id, c->bits, c->ignore, c->unlink,
                                       c->pos, &r->h);
        return PtlMEAttach(c->h, c->pt, c->id, c->bits, c->ignore, c->unlink, c->pos, &r->h);
    case ONIC_ONLOAD_OP_ME_INSERT:
        return PtlMEInsert(c->h, c->id, c->bits, c->ignore, c->unlink, c->pos, &r->h);
    case ONIC_ONLOAD_OP_ME_UNLINK:
        return PtlMEUnlink(c->h);
    case ONIC_ONLOAD_OP_ME_SEARCH:
        return PtlMEAttachSearch(c->h, c->pt, c->id, c->bits, c->ignore, c->unlink, c->pos,
                                 c->u.md, c->md_unlink, &r->h, &r->h2, &r->u.hdr);
    case ONIC_ONLOAD_OP_MD_ATTACH:
        return PtlMDAttach(c->h, c->u.md, c->md_unlink, &r->h);
    case ONIC_ONLOAD_OP_MD_BIND:
        return PtlMDBind(c->h, c->u.md, c->md_unlink, &r->h);
    case ONIC_ONLOAD_OP_MD_UNLINK:
        return PtlMDUnlink(c->h);
    case ONIC_ONLOAD_OP_MD_UPDATE:
        /* The test "is the queue empty" is the process's: it says which
         * event it expects next, and the queue is empty if that is the
         * next this side will post. */
        if (c->h2 != PTL_EQ_NONE && p->ni != NULL &&
            (eq = onic_ptl_htab_get(&p->ni->eqs, c->h2)) != NULL) {
            eq->tail = 1;
            eq->head = c->off == eq->seq ? 1 : 0;
        }
        rc = PtlMDUpdate(c->h, (c->flag & 1) ? &old : NULL,
                         (c->flag & 2) ? (ptl_md_t *)&c->u.md : NULL, c->h2);
        if (c->flag & 1)
            r->u.md = old;
        return rc;
    case ONIC_ONLOAD_OP_EQ_ALLOC:
        return PtlEQAlloc(c->h, c->len, PTL_EQ_HANDLER_NONE, &r->h);
    case ONIC_ONLOAD_OP_EQ_FREE:
        return PtlEQFree(c->h);
    case ONIC_ONLOAD_OP_PUT:
        p->staged = c->nbytes > 0 ? data : NULL;
        p->staged_len = c->nbytes;
        if (c->flag & 1)
            rc = PtlPut(c->h, (ptl_ack_req_t)c->unlink, c->id, c->pt, c->ac, c->bits, c->roff,
                        c->hdr);
        else
            rc = PtlPutRegion(c->h, c->off, c->len, (ptl_ack_req_t)c->unlink, c->id, c->pt,
                              c->ac, c->bits, c->roff, c->hdr);
        p->staged = NULL;
        return rc;
    case ONIC_ONLOAD_OP_GET:
        if (c->flag & 1)
            return PtlGet(c->h, c->id, c->pt, c->ac, c->bits, c->roff);
        return PtlGetRegion(c->h, c->off, c->len, c->id, c->pt, c->ac, c->bits, c->roff);
    default:
        return PTL_FAIL;
    }
}

void onload_serve_call(engine_t *e, engine_proc_t *p, const void *buf, size_t len)
{
    onic_onload_call_t c;
    onic_onload_reply_t r;
    int answer = 1;

    memset(&r, 0, sizeof(r));
    if (len < sizeof(c)) {
        r.rc = PTL_FAIL;
    } else {
        memcpy(&c, buf, sizeof(c)); /* once: checked, then used */
        /* Decided first, for every outcome below: a call that waits for no
         * answer must not get one, or the process would take it for the
         * answer of its next call. */
        answer = !((c.op == ONIC_ONLOAD_OP_PUT || c.op == ONIC_ONLOAD_OP_ME_UNLINK) &&
                   (c.flag & 2));
        if (c.nbytes != len - sizeof(c) || c.nbytes > ONIC_ONLOAD_PUT_INLINE ||
            (c.nbytes > 0 && c.op != ONIC_ONLOAD_OP_PUT)) {
            onic_error("onload: a Portals call of rank %u (op %u) carries %zu bytes it should "
                       "not", p->rank, c.op, len - sizeof(c));
            r.rc = PTL_FAIL;
        } else if (c.op == ONIC_ONLOAD_OP_NI_INIT) {
            r.rc = serve_ni_init(e, p, &c, &r);
        } else if (p->ni == NULL) {
            r.rc = PTL_NO_INIT;
        } else if (c.op == ONIC_ONLOAD_OP_READY) {
            p->ni_ready = 1;
            answer = 0;
        } else {
            onic_ptl_ni_select(p->ni);
            r.rc = serve_dispatch(e, p, &c, (const uint8_t *)buf + sizeof(c), &r);
            onic_ptl_ni_select(NULL);
        }
    }
    /* Room was made sure of: a failure here is a broken ring, whose
     * process is detached at its next command. */
    if (answer)
        onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_ANSWER, &r, sizeof(r));
    else if (r.rc != PTL_OK) {
        r.value = c.op; /* so the process can name the call */
        onic_onload_ring_push(&p->evt, ONIC_ONLOAD_EVT_FAILED, &r, sizeof(r));
    }
}

/* --- mail and moves ---------------------------------------------------------- */
unsigned onload_serve_deliver(engine_t *e, int *blocked_p)
{
    unsigned n = 0, round;

    /* Delivering sends more (acks, replies): round until nothing moves. */
    do {
        round = 0;
        for (uint32_t r = 0; r < e->nprocs && e->mail > 0; r++) {
            engine_proc_t *d = &e->procs[r];

            while (d->mail != NULL) {
                onload_msg_t *m = d->mail;

                /* Not open, or not ready yet: keep it. As inline, nothing
                 * arrives before the process first looks for events, so it
                 * can set up its lists first. */
                if ((d->ni == NULL || !d->ni_ready) && !d->ni_closed &&
                    d->state != ENGINE_PROC_DONE)
                    break;
                if (d->ni != NULL) {
                    if (onic_onload_ring_room(&d->evt) < serve_need(d)) {
                        *blocked_p = 1;
                        break;
                    }
                    onic_ptl_ni_select(d->ni);
                    onic_ptl_ni_deliver(d->ni, m->src, &m->hdr, m->hdr_len, m->payload,
                                        m->len);
                    onic_ptl_ni_select(NULL);
                    __atomic_fetch_add(&e->status->matches, 1, __ATOMIC_RELAXED);
                    __atomic_fetch_add(&e->status->bytes, m->len, __ATOMIC_RELAXED);
                } /* else its interface is gone: dropped, as a dead process's */
                d->mail = m->next;
                if (d->mail == NULL)
                    d->mail_tail = NULL;
                e->mail--;
                serve_msg_put(e, m);
                round++;
            }
        }
        n += round;
    } while (round > 0 && e->mail > 0);
    return n;
}

int onload_serve_rma_done(engine_t *e, engine_move_t *m)
{
    engine_proc_t *o = &e->procs[m->owner];

    if (o->ni == NULL || o->ni_gen != m->owner_gen)
        return 1; /* the interface is gone, and what the move was for with it */
    if (onic_onload_ring_room(&o->evt) < serve_need(o))
        return 0;
    onic_ptl_ni_select(o->ni);
    onic_ptl_ni_rma_done(o->ni, m->ctx, m->status);
    onic_ptl_ni_select(NULL);
    return 1;
}

void onload_serve_detach(engine_t *e, engine_proc_t *p)
{
    serve_close_ni(e, p);
    while (p->mail != NULL) {
        onload_msg_t *m = p->mail;
        p->mail = m->next;
        e->mail--;
        serve_msg_put(e, m);
    }
    p->mail_tail = NULL;
}

void onload_serve_fini(engine_t *e)
{
    while (e->rma_wait != NULL) {
        onload_rma_t *w = e->rma_wait;
        e->rma_wait = w->next;
        onic_free(w);
    }
    for (uint32_t r = 0; r < e->nprocs; r++)
        onload_serve_detach(e, &e->procs[r]);
    onic_pool_fini(&e->mail_pool);
}
