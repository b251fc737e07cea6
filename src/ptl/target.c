/* The target side: what happens when a put, get, ack or reply arrives.
 *
 * A function of the NI's state and one incoming message, nothing else: no
 * transport, no process. Its only way out is the answer it leaves in
 * onic_ptl_out_t (an ack or a reply for the caller to send), so the onload
 * engine can run it for another process and the tests can drive it with
 * hand-made headers.
 *
 * A put or get follows paper 003's figure 4, one function per step:
 *   target_portal    the portal index names a portal             (4.8)
 *   target_admit     the ACL entry admits initiator and portal   (4.5)
 *   target_translate the first entry that matches and whose FIRST MD
 *                    accepts; the match list, then the overflow list (4.4)
 *   target_deliver   move the data, count the operation, record events,
 *                    unlink a used-up MD (and an emptied entry)  (4.4, 4.6)
 *   target_answer    the ack or the reply                         (4.7)
 * Acks and replies bypass access control and translation and are dropped
 * only for the paper's reasons (4.8): target_ack, target_reply.
 *
 * Large puts and gets (ONIC_PTL_FLAG_LARGE) take the same steps, but the
 * data moves by RMA between the two MDs: target_large asks for it in the
 * answer (out->rma), START events are recorded then, and the END events,
 * an unlink that waits for them and the DONE or reply follow when the RMA
 * is over (onic_ptl_target_rma_done). A large put that is dropped still
 * answers DONE (nothing moved), so its initiator can let go of its data.
 * At the initiator, DONE and a large reply complete the operation its
 * cookie names (target_done, target_reply).
 *
 * Nothing from the wire is trusted: sizes are checked against the header,
 * the header against the state, handles through their tables, and the
 * initiator is the transport's source rank. Whatever does not add up is a
 * counted drop. */
#include "ptl/ptl.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

/* What translation found, and where and how much the MD takes. */
typedef struct target_xlate {
    unsigned       op;
    int            small;   /* the data is in the message (not ONIC_PTL_FLAG_LARGE) */
    uint64_t       rlength, roffset;
    onic_ptl_me_t *me;
    onic_ptl_md_t *md;
    uint64_t       offset, mlength;
} target_xlate_t;

/* A large put or get whose RMA is under way: what its completion needs. */
typedef struct target_rma {
    onic_dlist_t          link;  /* in ni->rma_pending */
    ptl_handle_md_t       md;
    uint32_t              src;
    onic_ptl_msg_t        m;
    uint64_t              offset, mlength;
    /* Moved so far, and the piece under way: an I/O vector MD's region
     * moves one contiguous piece at a time (a flat MD's in one), unless
     * the transport takes all its pieces at once (iov, io->rmav). */
    uint64_t              done, piece, first;
    struct iovec         *iov;
    unsigned              options;
    onic_ptl_large_desc_t desc;
} target_rma_t;

static void target_drop(onic_ptl_ni_t *ni, onic_ptl_drop_t why, uint32_t src,
                        const onic_ptl_msg_t *m)
{
    /* Debug, not error: a peer must not be able to flood the log. */
    onic_debug("ptl: dropped op %u from rank %u (portal %u, bits %#llx): reason %d",
               m != NULL ? m->op : 0, src, m != NULL ? m->pt_index : 0,
               m != NULL ? (unsigned long long)m->match_bits : 0ull, (int)why);
    onic_ptl_ni_drop(ni, why);
}

/* Every field but md, which the caller sets (no memset: this runs for every
 * message). */
static void target_event_base(const onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m,
                              ptl_event_t *ev)
{
    ev->type = PTL_EVENT_PUT_END;
    ev->initiator.nid = 0;
    ev->initiator.pid = src;
    /* Every process that reaches us is of our job and our user: the shared
     * memory that carries messages is private to both. */
    ev->uid = ni->uid;
    ev->jid = ni->jid;
    ev->pt_index = m->pt_index;
    ev->match_bits = m->match_bits;
    ev->rlength = m->rlength;
    ev->mlength = 0;
    ev->offset = 0;
    ev->md_handle = 0;
    ev->hdr_data = 0;
    ev->link = 0;
    ev->ni_fail_type = PTL_NI_OK;
    ev->sequence = 0;
}

/* START and END (each unless disabled), END linked to its START. */
static void target_post_pair(onic_ptl_eq_t *eq, unsigned options, ptl_event_kind_t start,
                             ptl_event_t *ev)
{
    ptl_seq_t link;

    if (eq == NULL)
        return;
    link = eq->seq;
    if (!(options & PTL_MD_EVENT_START_DISABLE)) {
        ev->type = start;
        ev->link = link;
        onic_ptl_eq_post(eq, ev);
    }
    if (!(options & PTL_MD_EVENT_END_DISABLE)) {
        ev->type = (ptl_event_kind_t)(start + 1); /* every *_END follows its *_START */
        ev->link = link;
        onic_ptl_eq_post(eq, ev);
    }
}

static void target_post_unlink(onic_ptl_eq_t *eq, const onic_ptl_md_t *md, ptl_event_t *ev)
{
    if (eq == NULL || (md->desc.options & PTL_MD_EVENT_UNLINK_DISABLE))
        return;
    ev->type = PTL_EVENT_UNLINK;
    ev->link = eq->seq;
    onic_ptl_eq_post(eq, ev);
}

/* --- put and get ------------------------------------------------------------ */
static onic_ptl_pt_t *target_portal(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m)
{
    if (m->pt_index > (ptl_pt_index_t)ni->limits.max_pt_index) {
        target_drop(ni, ONIC_PTL_DROP_PT_INDEX, src, m);
        return NULL;
    }
    return &ni->pt[m->pt_index];
}

static int target_admit(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m)
{
    const onic_ptl_ace_t *ace;

    if (m->ac_index > (ptl_ac_index_t)ni->limits.max_ac_index) {
        target_drop(ni, ONIC_PTL_DROP_AC_INDEX, src, m);
        return 0;
    }
    ace = &ni->acl[m->ac_index];
    if (ace->everyone)
        return 1;
    if (!ace->admit || (ace->id.nid != PTL_NID_ANY && ace->id.nid != 0) ||
        (ace->id.pid != PTL_PID_ANY && ace->id.pid != src) ||
        (ace->uid != PTL_UID_ANY && ace->uid != ni->uid) ||
        (ace->jid != PTL_JID_ANY && ace->jid != ni->jid)) {
        target_drop(ni, ONIC_PTL_DROP_AC_DENIED, src, m);
        return 0;
    }
    if (ace->pt_index != PTL_PT_INDEX_ANY && ace->pt_index != m->pt_index) {
        target_drop(ni, ONIC_PTL_DROP_AC_PT, src, m);
        return 0;
    }
    return 1;
}

/* The matcher's accept callback: only the entry's FIRST MD is considered;
 * if it rejects, the search goes on with the next entry. An operation that
 * is sure to use up the entry -- a small one into the lone MD of a posted
 * receive, both PTL_UNLINK, the MD's last operation -- has the matcher
 * remove the entry in the same search (onic_ptl_me_destroy then has
 * nothing to remove): a one-shot receive costs one search, not a search
 * and a removal. A large put into a receive of onic_ptl_recv_post too:
 * used up, it could only refuse every later search while its data moves
 * (64 such receives in flight cost each arrival a walk past them all),
 * and nothing can be attached to it meanwhile (PtlMDAttach: in use). Not
 * for overflow entries, whose operation may still be dropped (no memory
 * for the header) after the search. */
/* A receive as onic_ptl_recv_post made it, not yet taken, takes put x
 * (it fits, or PTL_MD_TRUNCATE): where and how much, and the matcher
 * removes the entry now. */
static inline int target_oneshot_take(target_xlate_t *x, onic_ptl_me_t *me)
{
    x->offset = 0;
    x->mlength = x->rlength < me->md0.desc.length ? x->rlength : me->md0.desc.length;
    x->me = me;
    x->md = &me->md0;
    me->entry = NULL;
    return ONIC_MATCH_TAKE_LAST;
}

static int target_first_md_takes(void *arg, void *cookie)
{
    target_xlate_t *x = arg;
    onic_ptl_me_t *me = cookie;
    onic_ptl_md_t *md;

    /* A receive as onic_ptl_recv_post made it, not yet taken: what
     * onic_ptl_md_accepts and the test below would find, known from the
     * posting. */
    if (me->oneshot && me->md0.desc.threshold == 1 && x->op == ONIC_PTL_OP_PUT) {
        md = &me->md0;
        if (x->rlength > md->desc.length && !(md->desc.options & PTL_MD_TRUNCATE))
            return 0;
        return target_oneshot_take(x, me);
    }
    if (onic_dlist_empty(&me->mds))
        return 0;
    md = onic_container_of(me->mds.next, onic_ptl_md_t, link);
    if (!onic_ptl_md_accepts(md, x->op, x->rlength, x->roffset, &x->offset, &x->mlength))
        return 0;
    x->me = me;
    x->md = md;
    /* (A threshold of 1 left means no operation is under way on the MD:
     * every one counted against it when it started.) */
    if (md->desc.threshold == 1 && x->small && (md->unlink & me->unlink) == PTL_UNLINK &&
        !me->overflow && md->link.next == &me->mds) {
        me->entry = NULL; /* the matcher removes it now */
        return ONIC_MATCH_TAKE_LAST;
    }
    return ONIC_MATCH_TAKE;
}

/* The list, then the overflow list, for the operation x describes (op,
 * small, rlength, roffset set). */
static int target_translate_x(onic_ptl_pt_t *pt, uint32_t src, ptl_match_bits_t bits,
                              target_xlate_t *x)
{
    const onic_mkey_t key = {bits, src}, exact = {0, 0}; /* nid 0: this node */

    /* An empty list is not searched: an unexpected message (which finds
     * it empty) goes straight to the overflow list. */
    if (pt->list != NULL && onic_matcher_length(pt->list) > 0 &&
        onic_matcher_find(pt->list, key, exact, target_first_md_takes, x, 0) != NULL)
        return 1;
    return pt->overflow != NULL &&
           onic_matcher_find(pt->overflow, key, exact, target_first_md_takes, x, 0) != NULL;
}

static int target_translate(onic_ptl_pt_t *pt, uint32_t src, const onic_ptl_msg_t *m,
                            target_xlate_t *x)
{
    x->op = m->op;
    x->small = !(m->flags & ONIC_PTL_FLAG_LARGE);
    x->rlength = m->rlength;
    x->roffset = m->offset;
    return target_translate_x(pt, src, m->match_bits, x);
}

/* Where mlength bytes at offset of md are, as one pointer: an I/O vector's
 * only when they lie within one entry (else NULL, as portals.h says). */
static __attribute__((noinline, cold)) void *target_data_at(const onic_ptl_md_t *md, uint64_t offset, uint64_t mlength)
{
    uint64_t piece;
    char *at;

    if (!(md->desc.options & PTL_MD_IOVEC))
        return onic_ptl_md_at(md, offset);
    at = onic_ptl_md_seg(md, offset, mlength, &piece);
    return piece == mlength ? at : NULL;
}

/* onic extension: keep the header of a put an overflow entry took. Made
 * before anything changes, so running out of memory is a clean drop. The
 * header's fields are passed one by one: the straight line of a small put
 * has them in its four words, the general steps in the unpacked header. */
static onic_ptl_ovf_t *target_keep_header(onic_ptl_ni_t *ni, onic_ptl_pt_t *pt, uint32_t src,
                                          ptl_pt_index_t pt_index, ptl_match_bits_t bits,
                                          uint64_t rlength, ptl_hdr_data_t hdr_data,
                                          const target_xlate_t *x)
{
    const onic_mkey_t key = {bits, src}, exact = {0, 0};
    onic_ptl_ovf_t *rec = onic_pool_get(&ni->ovf_pool);

    if (rec == NULL)
        return NULL;
    rec->hdr.initiator.nid = 0;
    rec->hdr.initiator.pid = src;
    rec->hdr.pt_index = pt_index;
    rec->hdr.match_bits = bits;
    rec->hdr.rlength = rlength;
    rec->hdr.mlength = x->mlength;
    rec->hdr.offset = x->offset;
    rec->hdr.md_handle = x->md->handle;
    rec->hdr.start = x->mlength > 0 ? onic_ptl_md_at(x->md, x->offset) : NULL;
    rec->hdr.hdr_data = hdr_data;
    if (onic_matcher_append(pt->unexpected, key, exact, rec, NULL) != ONIC_OK) {
        onic_pool_put(&ni->ovf_pool, rec);
        return NULL;
    }
    return rec;
}

static onic_ptl_ovf_t *target_keep_msg(onic_ptl_ni_t *ni, onic_ptl_pt_t *pt, uint32_t src,
                                       const onic_ptl_msg_t *m, const target_xlate_t *x)
{
    onic_ptl_ovf_t *rec = target_keep_header(ni, pt, src, m->pt_index, m->match_bits,
                                             m->rlength, m->hdr_data, x);

    /* An I/O vector MD (which only these general steps fill) has its data
     * at one address only within one entry. */
    if (rec != NULL && (x->md->desc.options & PTL_MD_IOVEC) && x->mlength > 0)
        rec->hdr.start = target_data_at(x->md, x->offset, x->mlength);
    return rec;
}

/* The events of a put or get that has been moved and counted (unlink:
 * the MD is used up and goes), then the unlink. */
static void target_events(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m,
                          const target_xlate_t *x, onic_ptl_md_t *md, onic_ptl_eq_t *eq,
                          unsigned options, int unlink)
{
    ptl_event_t ev, *e = &ev;
    ptl_event_kind_t start = m->op == ONIC_PTL_OP_PUT ? PTL_EVENT_PUT_START : PTL_EVENT_GET_START;

    /* The usual case, END alone and no UNLINK after it: the event is
     * written once, in the queue's ring. */
    if (eq != NULL &&
        (options & (PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE)) ==
            PTL_MD_EVENT_START_DISABLE &&
        (!unlink || (options & PTL_MD_EVENT_UNLINK_DISABLE)) &&
        (e = onic_ptl_eq_slot(eq)) == NULL)
        e = &ev;
    target_event_base(ni, src, m, e);
    e->mlength = x->mlength;
    e->offset = x->offset;
    e->md_handle = md->handle;
    e->hdr_data = m->op == ONIC_PTL_OP_PUT ? m->hdr_data : 0;
    onic_ptl_md_snapshot(md, &e->md);
    if (e != &ev) {
        e->type = (ptl_event_kind_t)(start + 1);
        e->link = eq->seq;
        onic_ptl_eq_commit(eq, e);
    } else {
        target_post_pair(eq, options, start, &ev);
        if (unlink)
            target_post_unlink(eq, md, &ev);
    }
    if (unlink)
        onic_ptl_md_destroy(ni, md); /* and the entry, if this empties it */
}

/* Move the data, count the operation, record the events, unlink. Returns
 * the options the MD had (the answer depends on them) and, for a get, where
 * the data to send back is. */
static unsigned target_deliver(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m,
                               const target_xlate_t *x, const void *payload,
                               const void **data_p)
{
    onic_ptl_md_t *md = x->md;
    onic_ptl_eq_t *eq = onic_ptl_md_eq(ni, md);
    unsigned options = md->desc.options;
    char *at = x->mlength > 0 && !(options & PTL_MD_IOVEC) ? onic_ptl_md_at(md, x->offset) : NULL;

    if (m->op == ONIC_PTL_OP_PUT && x->mlength > 0)
        onic_ptl_md_store(ni, md, x->offset, payload, x->mlength);
    if (m->op == ONIC_PTL_OP_GET && x->mlength > 0 && (options & PTL_MD_IOVEC)) {
        /* The reply's data in one piece: gathered into the NI's buffer,
         * which target_request_found made sure of. */
        onic_ptl_md_iov_load(md, x->offset, ni->iov_buf, x->mlength);
        at = ni->iov_buf;
    }
    *data_p = at;
    onic_ptl_md_consume(md, x->mlength);
    target_events(ni, src, m, x, md, eq, options, onic_ptl_md_should_unlink(md));
    return options;
}

static int target_ack_due(const onic_ptl_msg_t *m, unsigned options)
{
    return m->op == ONIC_PTL_OP_PUT && (m->flags & ONIC_PTL_FLAG_ACK) &&
           !(options & PTL_MD_ACK_DISABLE) && m->eq != PTL_EQ_NONE;
}

static void target_answer(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m,
                          const target_xlate_t *x, unsigned options, const void *data,
                          onic_ptl_out_t *out)
{
    onic_ptl_msg_t a;

    if (m->op == ONIC_PTL_OP_PUT && !target_ack_due(m, options))
        return; /* the common case: nothing to answer */
    a = *m; /* echoes portal, bits, offset, length, MD (tables 2, 4) */
    a.mlength = x->mlength;
    a.ac_index = 0;
    a.flags = 0;
    if (m->op == ONIC_PTL_OP_PUT) {
        a.op = ONIC_PTL_OP_ACK;
    } else {
        a.op = ONIC_PTL_OP_REPLY;
        out->payload = data;
        out->len = x->mlength;
    }
    (void)ni;
    out->hdr_len = onic_ptl_msg_pack(&a, &out->hdr);
    out->dest = src;
    out->send = 1;
}

/* The answer to a large put (DONE, with the ack if one is due) or get (the
 * reply, its data already written), mlength bytes having moved; failed: the
 * RMA failed, which the initiator's event says (FLAG_FAIL). */
static void target_large_answer(uint32_t src, const onic_ptl_msg_t *m,
                                const onic_ptl_large_desc_t *desc, uint64_t mlength, int ack,
                                int failed, onic_ptl_out_t *out)
{
    onic_ptl_msg_t a = *m;

    a.op = m->op == ONIC_PTL_OP_PUT ? ONIC_PTL_OP_DONE : ONIC_PTL_OP_REPLY;
    a.flags = m->op == ONIC_PTL_OP_PUT ? (ack ? ONIC_PTL_FLAG_ACK : 0) : ONIC_PTL_FLAG_LARGE;
    if (failed)
        a.flags |= ONIC_PTL_FLAG_FAIL;
    a.mlength = mlength;
    a.cookie = desc->cookie;
    a.ac_index = 0;
    out->hdr_len = onic_ptl_msg_pack(&a, &out->hdr);
    out->dest = src;
    out->send = 1;
}


/* The end of a large operation at the target: END events (failed ones say
 * so), the unlink that waited, the answer. */
static void target_large_finish(onic_ptl_ni_t *ni, const target_rma_t *r, onic_status_t status,
                                onic_ptl_out_t *out)
{
    onic_ptl_md_t *md = onic_ptl_md_get(ni, r->md);
    onic_ptl_eq_t *eq;
    ptl_event_t ev;

    if (md != NULL) {
        md->inflight--;
        eq = onic_ptl_md_eq(ni, md);
        target_event_base(ni, r->src, &r->m, &ev);
        ev.mlength = status == ONIC_OK ? r->mlength : 0;
        ev.offset = r->offset;
        ev.md_handle = md->handle;
        ev.hdr_data = r->m.op == ONIC_PTL_OP_PUT ? r->m.hdr_data : 0;
        ev.ni_fail_type = status == ONIC_OK ? PTL_NI_OK : PTL_NI_FAIL;
        onic_ptl_md_snapshot(md, &ev.md);
        if (eq != NULL && !(r->options & PTL_MD_EVENT_END_DISABLE)) {
            ev.type = r->m.op == ONIC_PTL_OP_PUT ? PTL_EVENT_PUT_END : PTL_EVENT_GET_END;
            ev.link = eq->seq;
            onic_ptl_eq_post(eq, &ev);
        }
        if (onic_ptl_md_should_unlink(md)) {
            target_post_unlink(eq, md, &ev);
            onic_ptl_md_destroy(ni, md);
        }
    }
    if (status != ONIC_OK)
        onic_warn("ptl: moving %llu bytes of a large %s with rank %u failed: %s",
                  (unsigned long long)r->mlength, r->m.op == ONIC_PTL_OP_PUT ? "put" : "get",
                  r->src, onic_status_str(status));
    target_large_answer(r->src, &r->m, &r->desc, status == ONIC_OK ? r->mlength : 0,
                        status == ONIC_OK && target_ack_due(&r->m, r->options),
                        status != ONIC_OK, out);
}

static void target_rma_pieces(const onic_ptl_md_t *md, target_rma_t *r, onic_ptl_out_t *out);

/* Translation found where a large put or get goes: count it, record START,
 * and ask for the RMA (or finish at once when nothing is to move). */
static void target_large(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m,
                         const target_xlate_t *x, const onic_ptl_large_desc_t *desc,
                         onic_ptl_out_t *out)
{
    onic_ptl_md_t *md = x->md;
    onic_ptl_eq_t *eq = onic_ptl_md_eq(ni, md);
    target_rma_t now, *r;
    ptl_event_t ev;

    onic_ptl_md_consume(md, x->mlength);
    md->inflight++;
    target_event_base(ni, src, m, &ev);
    ev.mlength = x->mlength;
    ev.offset = x->offset;
    ev.md_handle = md->handle;
    ev.hdr_data = m->op == ONIC_PTL_OP_PUT ? m->hdr_data : 0;
    onic_ptl_md_snapshot(md, &ev.md);
    if (eq != NULL && !(md->desc.options & PTL_MD_EVENT_START_DISABLE)) {
        ev.type = m->op == ONIC_PTL_OP_PUT ? PTL_EVENT_PUT_START : PTL_EVENT_GET_START;
        ev.link = eq->seq;
        onic_ptl_eq_post(eq, &ev);
    }
    r = x->mlength > 0 ? onic_malloc(sizeof(*r)) : NULL;
    if (r == NULL)
        r = &now;
    r->md = md->handle;
    r->src = src;
    r->m = *m;
    r->offset = x->offset;
    r->mlength = x->mlength;
    r->done = 0;
    r->options = md->desc.options;
    r->desc = *desc;
    if (r == &now) {
        /* Nothing to move, or no memory to remember the move by. */
        if (x->mlength > 0)
            onic_ptl_ni_drop(ni, ONIC_PTL_DROP_NO_MEMORY);
        target_large_finish(ni, r, x->mlength > 0 ? ONIC_ERR_NO_MEMORY : ONIC_OK, out);
        return;
    }
    onic_dlist_push_tail(&ni->rma_pending, &r->link);
    out->rma = 1;
    out->rma_write = m->op == ONIC_PTL_OP_GET;
    out->rma_local = onic_ptl_md_seg(md, x->offset, x->mlength, &r->piece);
    out->rma_key = desc->key;
    out->rma_roffset = 0;
    out->rma_len = r->piece;
    out->rma_ctx = r;
    out->dest = src;
    r->first = r->piece;
    r->iov = NULL;
    out->rma_iov = NULL;
    if (r->piece < r->mlength && ni->io->rmav != NULL)
        target_rma_pieces(md, r, out);
}

/* The pieces of r's region of md (an I/O vector's), for one io->rmav;
 * without memory for them, none: the pieces go one by one. */
static void target_rma_pieces(const onic_ptl_md_t *md, target_rma_t *r, onic_ptl_out_t *out)
{
    uint64_t in, left = r->mlength;
    uint32_t first = onic_ptl_md_iov_find(md, r->offset, &in), i;
    unsigned n = 0;

    for (i = first; i < md->niov && left > 0; i++, in = 0) {
        uint64_t piece = md->iov[i].iov_len - in < left ? md->iov[i].iov_len - in : left;
        if (piece == 0)
            continue;
        left -= piece;
        n++;
    }
    if ((r->iov = onic_malloc(n * sizeof(*r->iov))) == NULL)
        return;
    left = r->mlength;
    onic_ptl_md_iov_find(md, r->offset, &in);
    for (i = first, n = 0; i < md->niov && left > 0; i++, in = 0) {
        uint64_t piece = md->iov[i].iov_len - in < left ? md->iov[i].iov_len - in : left;
        if (piece == 0)
            continue;
        r->iov[n].iov_base = (char *)md->iov[i].iov_base + in;
        r->iov[n].iov_len = (size_t)piece;
        left -= piece;
        n++;
    }
    out->rma_iov = r->iov;
    out->rma_niov = n;
    out->rma_vlen = r->mlength;
}

void onic_ptl_target_rma_vector(void *ctx, int whole)
{
    target_rma_t *r = ctx;

    r->piece = whole ? r->mlength : r->first;
}

void onic_ptl_target_rma_done(onic_ptl_ni_t *ni, void *ctx, onic_status_t status,
                              onic_ptl_out_t *out)
{
    target_rma_t *r = ctx;
    onic_ptl_md_t *md;

    memset(out, 0, sizeof(*out));
    if (status == ONIC_OK && r->done + r->piece < r->mlength &&
        (md = onic_ptl_md_get(ni, r->md)) != NULL) {
        /* An I/O vector MD: its next piece, at the same place of the
         * initiator's region. */
        r->done += r->piece;
        out->rma = 1;
        out->rma_write = r->m.op == ONIC_PTL_OP_GET;
        out->rma_local = onic_ptl_md_seg(md, r->offset + r->done, r->mlength - r->done, &r->piece);
        out->rma_key = r->desc.key;
        out->rma_roffset = r->done;
        out->rma_len = r->piece;
        out->rma_ctx = r;
        out->dest = r->src;
        return;
    }
    onic_dlist_del(&r->link);
    target_large_finish(ni, r, status, out);
    onic_free(r->iov);
    onic_free(r);
}

void onic_ptl_target_fini(onic_ptl_ni_t *ni)
{
    while (!onic_dlist_empty(&ni->rma_pending)) {
        target_rma_t *r = onic_container_of(ni->rma_pending.next, target_rma_t, link);
        onic_dlist_del(&r->link);
        onic_free(r->iov);
        onic_free(r);
    }
    onic_free(ni->placed);
    ni->placed = NULL;
}

/* --- placement: a put whose data follows its header ----------------------------- */
/* A put matched at its header, its data still coming (one per sender: a
 * transport's message in pieces is its sender's only one under way). */
typedef struct onic_ptl_placed {
    onic_ptl_msg_t  m;
    target_xlate_t  x;
    ptl_handle_md_t md;
    unsigned        options;
    int             live;
} onic_ptl_placed_t;

typedef struct target_place {
    target_xlate_t x;
    onic_ptl_ni_t *ni;
    int            placeable;
} target_place_t;

/* The matcher's accept callback for a placement: the entry that
 * target_first_md_takes would take first. A receive as onic_ptl_recv_post
 * made it, with a flat MD whose queue has no handler and which records END
 * alone (START disabled), is taken and removed; any other first acceptor
 * stops the search with nothing changed (ONIC_MATCH_TAKE, not removed, and
 * placeable 0): the message then comes whole and is matched as any other. */
static int target_place_takes(void *arg, void *cookie)
{
    target_place_t *p = arg;
    onic_ptl_me_t *me = cookie;
    const onic_ptl_md_t *md;
    const onic_ptl_eq_t *eq;
    uint64_t offset, mlength;

    if (me->oneshot && me->md0.desc.threshold == 1) {
        md = &me->md0;
        if (p->x.rlength > md->desc.length && !(md->desc.options & PTL_MD_TRUNCATE))
            return 0;
        eq = onic_ptl_md_eq(p->ni, md);
        if (me->overflow || eq == NULL || eq->handler != PTL_EQ_HANDLER_NONE ||
            (md->desc.options & (PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE |
                                 PTL_MD_IOVEC)) != PTL_MD_EVENT_START_DISABLE)
            return ONIC_MATCH_TAKE;
        p->placeable = 1;
        return target_oneshot_take(&p->x, me);
    }
    if (onic_dlist_empty(&me->mds))
        return 0;
    md = onic_container_of(me->mds.next, onic_ptl_md_t, link);
    return onic_ptl_md_accepts(md, p->x.op, p->x.rlength, p->x.roffset, &offset, &mlength)
               ? ONIC_MATCH_TAKE
               : 0;
}

int onic_ptl_target_place(onic_ptl_ni_t *ni, uint32_t src, const void *hdr, size_t hdr_len,
                          size_t len, void **dest, size_t *room)
{
    const onic_mkey_t exact = {0, 0};
    target_place_t p = {.ni = ni};
    onic_ptl_placed_t *rec;
    onic_ptl_msg_t m;
    onic_ptl_pt_t *pt;
    onic_ptl_md_t *md;

    /* A put with its data, an ack at most; through access control that
     * admits everyone (the general steps count what they drop, later);
     * into this process's memory (not the onload engine's stores). */
    if (ni->io->store != NULL || src >= ni->size ||
        onic_ptl_msg_unpack(hdr, hdr_len, &m) != ONIC_OK || m.op != ONIC_PTL_OP_PUT || (m.flags & ~ONIC_PTL_FLAG_ACK) != 0 || m.rlength != len ||
        m.pt_index > (ptl_pt_index_t)ni->limits.max_pt_index ||
        m.ac_index > (ptl_ac_index_t)ni->limits.max_ac_index || !ni->acl[m.ac_index].everyone)
        return 0;
    pt = &ni->pt[m.pt_index];
    if (pt->list == NULL || onic_matcher_length(pt->list) == 0)
        return 0;
    if (ni->placed == NULL && (ni->placed = onic_calloc(ni->size, sizeof(*ni->placed))) == NULL)
        return 0;
    rec = &ni->placed[src];
    if (rec->live)
        return 0;
    p.x.op = ONIC_PTL_OP_PUT;
    p.x.small = 1;
    p.x.rlength = len;
    p.x.roffset = m.offset;
    if (onic_matcher_find(pt->list, (onic_mkey_t){m.match_bits, src}, exact, target_place_takes,
                          &p, 0) == NULL ||
        !p.placeable)
        return 0;
    /* Counted and held as a large put is: the MD cannot go (PtlMDUnlink,
     * PtlMEUnlink: in use) until the data is in. */
    md = p.x.md;
    onic_ptl_md_consume(md, p.x.mlength);
    md->inflight++;
    rec->m = m;
    rec->x = p.x;
    rec->md = md->handle;
    rec->options = md->desc.options;
    rec->live = 1;
    *dest = p.x.mlength > 0 ? onic_ptl_md_at(md, 0) : NULL;
    *room = (size_t)p.x.mlength;
    return 1;
}

void onic_ptl_target_placed(onic_ptl_ni_t *ni, uint32_t src, onic_ptl_out_t *out)
{
    onic_ptl_placed_t *rec = ni->placed != NULL && src < ni->size ? &ni->placed[src] : NULL;
    onic_ptl_md_t *md;

    out->send = out->rma = out->dereg = 0;
    out->payload = NULL;
    out->len = 0;
    if (rec == NULL || !rec->live) {
        target_drop(ni, ONIC_PTL_DROP_MALFORMED, src, NULL);
        return;
    }
    rec->live = 0;
    if ((md = onic_ptl_md_get(ni, rec->md)) == NULL)
        return; /* the NI was reset under it */
    md->inflight--;
    target_events(ni, src, &rec->m, &rec->x, md, onic_ptl_md_eq(ni, md), rec->options,
                  onic_ptl_md_should_unlink(md));
    target_answer(ni, src, &rec->m, &rec->x, rec->options, NULL, out);
}

/* A small put or get that translation placed: the header kept (an
 * overflow entry), the data moved, the answer. */
static void target_request_found(onic_ptl_ni_t *ni, onic_ptl_pt_t *pt, uint32_t src,
                                 const onic_ptl_msg_t *m, const target_xlate_t *x,
                                 const void *payload, onic_ptl_out_t *out)
{
    const void *data;
    unsigned options;

    /* A get from an I/O vector replies from one buffer: had first, so that
     * no memory for it is a clean drop. */
    if (m->op == ONIC_PTL_OP_GET && (x->md->desc.options & PTL_MD_IOVEC) && x->mlength > 0 &&
        ni->iov_buf == NULL && (ni->iov_buf = onic_malloc(ni->max_inline)) == NULL) {
        target_drop(ni, ONIC_PTL_DROP_NO_MEMORY, src, m);
        return;
    }
    if (x->me->overflow && m->op == ONIC_PTL_OP_PUT &&
        target_keep_msg(ni, pt, src, m, x) == NULL) {
        target_drop(ni, ONIC_PTL_DROP_NO_MEMORY, src, m);
        return;
    }
    options = target_deliver(ni, src, m, x, payload, &data);
    target_answer(ni, src, m, x, options, data, out);
}

static void target_request(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m,
                           const void *payload, onic_ptl_out_t *out)
{
    onic_ptl_large_desc_t desc;
    int large = (m->flags & ONIC_PTL_FLAG_LARGE) != 0;
    onic_ptl_pt_t *pt;
    target_xlate_t x;
    onic_ptl_drop_t why;

    if (large)
        memcpy(&desc, payload, sizeof(desc)); /* once: the sizes were checked */
    if ((pt = target_portal(ni, src, m)) == NULL || !target_admit(ni, src, m))
        goto dropped;
    if (!target_translate(pt, src, m, &x)) {
        why = ONIC_PTL_DROP_NO_MATCH;
        goto drop;
    }
    if (!large) {
        target_request_found(ni, pt, src, m, &x, payload, out);
        return;
    }
    if (x.me->overflow && m->op == ONIC_PTL_OP_PUT && target_keep_msg(ni, pt, src, m, &x) == NULL) {
        why = ONIC_PTL_DROP_NO_MEMORY;
        goto drop;
    }
    target_large(ni, src, m, &x, &desc, out);
    return;
drop:
    target_drop(ni, why, src, m);
dropped:
    /* A dropped large put still tells its initiator that nothing moved. */
    if (large && m->op == ONIC_PTL_OP_PUT)
        target_large_answer(src, m, &desc, 0, 0, 0, out);
}

/* The most common message, a small put without ack, in a straight line:
 * its four header words used where they are, with no unpacked header in
 * between, and its event written once, in the queue's ring, from them.
 * 0: not such a put, or access control that is not "everyone" -- nothing
 * has changed, and the general steps take it from the start. Once
 * translation has run the put is this function's to finish (an overflow
 * entry's too: the header kept, then the same steps): the rarer turns
 * after it (events other than END alone, a handler, no memory for the
 * kept header, a drop) unpack the header and take the general steps, with
 * their answer in *out. 1: taken, nothing to answer and no handler to run
 * (out->send, rma and dereg 0); 2: taken, *out set and handlers perhaps
 * queued, as onic_ptl_target_recv leaves them. */
int onic_ptl_target_put_small(onic_ptl_ni_t *ni, uint32_t src, const void *hdr,
                              const void *payload, size_t len, onic_ptl_out_t *out)
{
    uint64_t w[4];
    onic_ptl_pt_t *pt;
    onic_ptl_md_t *md;
    onic_ptl_eq_t *eq;
    onic_ptl_msg_t m;
    target_xlate_t x;
    ptl_event_t *e;
    unsigned options;
    int unlink;

    memcpy(w, hdr, sizeof(w)); /* the caller passes 32 bytes */
    /* op PUT, no flags: no ack, not large, and the length is the payload's. */
    if ((w[0] >> 48 & 0xff) != ONIC_PTL_OP_PUT || (w[0] & ONIC_PTL_MAX_LEN) != len ||
        src >= ni->size || (len > 0 && payload == NULL) ||
        w[1] >> 48 > (uint64_t)ni->limits.max_pt_index ||
        w[0] >> 56 > (uint64_t)ni->limits.max_ac_index || !ni->acl[w[0] >> 56].everyone)
        return 0;
    pt = &ni->pt[w[1] >> 48];
    x.op = ONIC_PTL_OP_PUT;
    x.small = 1;
    x.me = NULL;
    x.rlength = len;
    x.roffset = w[1] & ONIC_PTL_MAX_LEN;
    if (!target_translate_x(pt, src, w[2], &x))
        goto general;
    md = x.md;
    eq = onic_ptl_md_eq(ni, md);
    options = md->desc.options;
    /* END alone, into a flat MD (an I/O vector's entries are the general
     * steps' to fill: one test of the options for both). */
    if (eq == NULL ||
        (options & (PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE | PTL_MD_IOVEC)) !=
            PTL_MD_EVENT_START_DISABLE)
        goto general;
    /* An overflow entry took it (an unexpected message): its header kept
     * first, so that no memory for it is a clean drop -- which the general
     * steps then make, trying once more, nothing having changed. */
    if (x.me->overflow && target_keep_header(ni, pt, src, (ptl_pt_index_t)(w[1] >> 48), w[2], len,
                                             w[3], &x) == NULL)
        goto general;
    /* The MD's state after the put decides whether an UNLINK is due, so
     * the event's slot is taken only after the put is counted; nothing
     * between can fail. */
    if (x.mlength > 0)
        onic_ptl_ni_store(ni, onic_ptl_md_at(md, x.offset), payload, x.mlength);
    onic_ptl_md_consume(md, x.mlength);
    unlink = onic_ptl_md_should_unlink(md);
    if ((unlink && !(options & PTL_MD_EVENT_UNLINK_DISABLE)) || (e = onic_ptl_eq_slot(eq)) == NULL)
        goto general_events;
    e->type = PTL_EVENT_PUT_END;
    e->initiator.nid = 0;
    e->initiator.pid = src;
    e->uid = ni->uid;
    e->jid = ni->jid;
    e->pt_index = (ptl_pt_index_t)(w[1] >> 48);
    e->match_bits = w[2];
    e->rlength = len;
    e->mlength = x.mlength;
    e->offset = x.offset;
    e->md_handle = md->handle;
    e->md = md->desc; /* onic_ptl_md_snapshot of a flat MD */
    e->hdr_data = w[3];
    e->link = eq->seq;
    e->ni_fail_type = PTL_NI_OK;
    onic_ptl_eq_commit(eq, e);
    if (unlink)
        onic_ptl_md_destroy(ni, md); /* and the entry, if this empties it */
    out->send = out->rma = out->dereg = 0;
    return 1;

general_events:
    /* Moved and counted: only the events are left, the general way. */
    (void)onic_ptl_msg_unpack(hdr, sizeof(w), &m);
    target_events(ni, src, &m, &x, md, eq, options, unlink);
    out->send = out->rma = out->dereg = 0;
    /* A queue with a handler has its call queued: the caller runs it. */
    return eq->handler != PTL_EQ_HANDLER_NONE ? 2 : 1;
general:
    out->send = out->rma = out->dereg = 0;
    out->payload = NULL;
    out->len = 0;
    (void)onic_ptl_msg_unpack(hdr, sizeof(w), &m); /* its checks passed above */
    if (x.me == NULL)
        target_drop(ni, ONIC_PTL_DROP_NO_MATCH, src, &m);
    else
        target_request_found(ni, pt, src, &m, &x, payload, out);
    return 2;
}

/* --- ack and reply ----------------------------------------------------------- */
/* Dropped only if its event queue is gone (4.8). The MD that sent the put
 * may be gone too; the event then reports it as it was sent (md zeroed
 * but for its event queue). */
static void target_ack(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m)
{
    onic_ptl_eq_t *eq = m->eq == PTL_EQ_NONE ? NULL : onic_ptl_htab_get(&ni->eqs, m->eq);
    onic_ptl_md_t *md;
    ptl_event_t ev;

    if (eq == NULL) {
        target_drop(ni, ONIC_PTL_DROP_ACK_EQ, src, m);
        return;
    }
    target_event_base(ni, src, m, &ev);
    ev.type = PTL_EVENT_ACK;
    ev.mlength = m->mlength;
    ev.offset = m->offset;
    ev.md_handle = m->md;
    if ((md = onic_ptl_md_get(ni, m->md)) != NULL)
        onic_ptl_md_snapshot(md, &ev.md);
    else
        ev.md = (ptl_md_t){.eq_handle = m->eq}; /* gone: as it was sent */
    ev.link = eq->seq;
    onic_ptl_eq_post(eq, &ev);
}

/* Dropped only if its MD is gone (or expects no reply) or the MD's event
 * queue has no room for what the reply records (4.8). Every MD accepts and
 * truncates a reply: it lands at the get's local offset, cut to the MD. */
static void target_reply(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m,
                         const void *payload, onic_ptl_out_t *out)
{
    onic_ptl_md_t *md = onic_ptl_md_get(ni, m->md);
    onic_ptl_large_t *rec = NULL;
    onic_ptl_eq_t *eq;
    unsigned options;
    uint64_t room, mlength, need, local_offset = m->local_offset;
    int unlink;
    ptl_event_t ev;
    char *bounce = NULL;

    if (m->flags & ONIC_PTL_FLAG_LARGE) {
        /* The data is already in place (an I/O vector MD's in its bounce
         * buffer, scattered below); the cookie says where it went. */
        rec = onic_ptl_large_find(ni, m->cookie, src);
        if (rec == NULL || !rec->get || rec->md != m->md) {
            target_drop(ni, ONIC_PTL_DROP_MALFORMED, src, m);
            return;
        }
        out->dereg = 1;
        out->dereg_key = rec->key;
        local_offset = rec->local_offset;
        bounce = rec->bounce;
        rec->bounce = NULL;
        onic_ptl_large_del(ni, rec);
    }
    if (md == NULL || md->pending == 0) {
        onic_free(bounce);
        target_drop(ni, ONIC_PTL_DROP_REPLY_MD, src, m);
        return;
    }
    eq = onic_ptl_md_eq(ni, md);
    options = md->desc.options;
    unlink = md->unlink == PTL_UNLINK && md->pending == 1 && md->inflight == 0 &&
             onic_ptl_md_used_up(md);
    need = !(options & PTL_MD_EVENT_START_DISABLE) + !(options & PTL_MD_EVENT_END_DISABLE) +
           (unsigned)unlink;
    if (eq != NULL && onic_ptl_eq_room(eq) < need) {
        md->pending--; /* this get is over: its reply is gone */
        onic_free(bounce);
        target_drop(ni, ONIC_PTL_DROP_REPLY_EQ_FULL, src, m);
        return;
    }
    md->pending--;
    room = local_offset < md->desc.length ? md->desc.length - local_offset : 0;
    mlength = m->mlength < room ? m->mlength : room;
    if (mlength > 0 && rec == NULL)
        onic_ptl_md_store(ni, md, local_offset, payload, mlength);
    if (bounce != NULL) {
        if (mlength > 0 && !(m->flags & ONIC_PTL_FLAG_FAIL))
            onic_ptl_md_store(ni, md, local_offset, bounce, mlength);
        onic_free(bounce);
    }
    target_event_base(ni, src, m, &ev);
    ev.mlength = mlength;
    ev.offset = local_offset;
    ev.md_handle = md->handle;
    if (m->flags & ONIC_PTL_FLAG_FAIL)
        ev.ni_fail_type = PTL_NI_FAIL; /* the target could not move the data */
    onic_ptl_md_snapshot(md, &ev.md);
    target_post_pair(eq, options, PTL_EVENT_REPLY_START, &ev);
    if (onic_ptl_md_should_unlink(md)) {
        target_post_unlink(eq, md, &ev);
        onic_ptl_md_destroy(ni, md);
    }
}

/* A large put of ours was pulled (or dropped: mlength 0): SEND_END, the ack
 * it brings, the unlink that waited for it, and the registration to drop. */
static void target_done(onic_ptl_ni_t *ni, uint32_t src, const onic_ptl_msg_t *m,
                        onic_ptl_out_t *out)
{
    onic_ptl_large_t *rec = onic_ptl_large_find(ni, m->cookie, src);
    onic_ptl_large_t r;
    onic_ptl_md_t *md;
    onic_ptl_eq_t *eq;
    ptl_event_t ev;

    if (rec == NULL || rec->get || rec->md != m->md) {
        target_drop(ni, ONIC_PTL_DROP_MALFORMED, src, m);
        return;
    }
    r = *rec;
    onic_ptl_large_del(ni, rec);
    out->dereg = 1;
    out->dereg_key = r.key;
    md = onic_ptl_md_get(ni, r.md);
    if (md == NULL)
        return; /* the NI was reset under it; nothing left to report to */
    md->inflight--;
    eq = onic_ptl_md_eq(ni, md);
    memset(&ev, 0, sizeof(ev));
    ev.initiator.pid = ni->rank;
    ev.uid = ni->uid;
    ev.jid = ni->jid;
    ev.pt_index = r.pt_index;
    ev.match_bits = r.match_bits;
    ev.rlength = r.rlength;
    ev.mlength = r.rlength;
    ev.offset = r.local_offset;
    ev.md_handle = md->handle;
    ev.hdr_data = r.hdr_data;
    ev.ni_fail_type = (m->flags & ONIC_PTL_FLAG_FAIL) ? PTL_NI_FAIL : PTL_NI_OK;
    onic_ptl_md_snapshot(md, &ev.md);
    if (eq != NULL && !(md->desc.options & PTL_MD_EVENT_END_DISABLE)) {
        ev.type = PTL_EVENT_SEND_END;
        ev.link = eq->seq;
        onic_ptl_eq_post(eq, &ev);
    }
    if (m->flags & ONIC_PTL_FLAG_ACK) {
        /* As target_ack: only its event queue must still exist (the MD's,
         * which cannot change while the put is under way). */
        if (eq == NULL) {
            target_drop(ni, ONIC_PTL_DROP_ACK_EQ, src, m);
        } else {
            ev.type = PTL_EVENT_ACK;
            ev.initiator.pid = src;
            ev.mlength = m->mlength;
            ev.offset = m->offset;
            ev.link = eq->seq;
            onic_ptl_eq_post(eq, &ev);
        }
    }
    if (onic_ptl_md_should_unlink(md)) {
        target_post_unlink(eq, md, &ev);
        onic_ptl_md_destroy(ni, md);
    }
}

/* --- the entry point ------------------------------------------------------------ */
/* Sizes that do not add up for the op, before any state is looked at. */
static int target_sizes_ok(const onic_ptl_ni_t *ni, const onic_ptl_msg_t *m, size_t len)
{
    int large = (m->flags & ONIC_PTL_FLAG_LARGE) != 0;

    switch (m->op) {
    case ONIC_PTL_OP_PUT:
        return large ? len == sizeof(onic_ptl_large_desc_t) : len == m->rlength;
    case ONIC_PTL_OP_GET:
        /* A small reply must fit one message: the initiator asks for no more. */
        return large ? len == sizeof(onic_ptl_large_desc_t)
                     : len == 0 && m->rlength <= ni->max_inline;
    case ONIC_PTL_OP_ACK:
    case ONIC_PTL_OP_DONE:
        return len == 0 && m->mlength <= m->rlength;
    case ONIC_PTL_OP_REPLY:
        return (large ? len == 0 : len == m->mlength) && m->mlength <= m->rlength;
    default:
        return 0;
    }
}

void onic_ptl_target_recv(onic_ptl_ni_t *ni, uint32_t src, const void *hdr, size_t hdr_len,
                          const void *payload, size_t len, onic_ptl_out_t *out)
{
    onic_ptl_msg_t m;

    /* Not a memset: this runs for every message, and these say it all. */
    out->send = out->rma = out->dereg = 0;
    out->payload = NULL;
    out->len = 0;
    /* A small put without ack sends only its own 32 bytes (a longer header
     * for it, which a sender may send, takes the general steps). */
    if (hdr_len == 32 && onic_ptl_target_put_small(ni, src, hdr, payload, len, out) != 0)
        return;
    if (src >= ni->size || onic_ptl_msg_unpack(hdr, hdr_len, &m) != ONIC_OK ||
        (len > 0 && payload == NULL) || !target_sizes_ok(ni, &m, len)) {
        target_drop(ni, ONIC_PTL_DROP_MALFORMED, src, NULL);
        return;
    }
    switch (m.op) {
    case ONIC_PTL_OP_PUT:
    case ONIC_PTL_OP_GET:
        target_request(ni, src, &m, payload, out);
        break;
    case ONIC_PTL_OP_ACK:
        target_ack(ni, src, &m);
        break;
    case ONIC_PTL_OP_REPLY:
        target_reply(ni, src, &m, payload, out);
        break;
    case ONIC_PTL_OP_DONE:
        target_done(ni, src, &m, out);
        break;
    }
}
