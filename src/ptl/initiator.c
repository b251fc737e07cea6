/* The initiator side: PtlPut and PtlGet. A put or get is one message to the
 * target (ptl.h, "Wire header"); the data of a put travels inline. A put
 * counts as an operation of its MD and completes when the message is on its
 * way (SEND_START, SEND_END); a get counts when it starts and completes with
 * its reply (target.c), the MD held until then (pending).
 *
 * Larger than one message carries: the region is registered with the
 * transport and its key travels instead of the data; the target moves the
 * data by RMA. A large put's SEND_END (and its ack) then comes with the
 * target's DONE, the MD held until then (inflight); a large get completes
 * with its reply as any get. Either way a record (large.c) keeps what the
 * completion reports and the registration to drop. */
#include "ptl/ptl.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

/* The argument checks failed: say which, and its Portals code. Out of
 * line: the checks' success path is a few compares. */
static int __attribute__((noinline, cold))
initiator_refuse(onic_ptl_ni_t *ni, const onic_ptl_md_t *md, ptl_size_t local_offset,
                 ptl_size_t length, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                 ptl_ac_index_t ac_index, ptl_size_t remote_offset, const char *call)
{
    if (onic_ptl_md_used_up(md)) {
        onic_error("ptl: %s: MD %#llx is used up (threshold 0 or no room left)", call,
                   (unsigned long long)md->handle);
        return PTL_MD_INVALID;
    }
    if (local_offset > md->desc.length || length > md->desc.length - local_offset) {
        onic_error("ptl: %s: region %llu+%llu is outside the MD's %llu bytes", call,
                   (unsigned long long)local_offset, (unsigned long long)length,
                   (unsigned long long)md->desc.length);
        return PTL_MD_ILLEGAL;
    }
    if (!onic_ptl_id_valid(ni, target_id, 0)) {
        onic_error("ptl: %s: target {%u, %u} is no process of this job (nid 0, pid below %u)",
                   call, target_id.nid, target_id.pid, ni->size);
        return PTL_PROCESS_INVALID;
    }
    if (pt_index > (ptl_pt_index_t)ni->limits.max_pt_index) {
        onic_error("ptl: %s: pt_index %u is beyond the portal table (0 to %d)", call, pt_index,
                   ni->limits.max_pt_index);
        return PTL_PT_INDEX_INVALID;
    }
    if (ac_index > (ptl_ac_index_t)ni->limits.max_ac_index) {
        onic_error("ptl: %s: ac_index %u is beyond the access control list (0 to %d)", call,
                   ac_index, ni->limits.max_ac_index);
        return PTL_AC_INDEX_INVALID;
    }
    if (remote_offset > ONIC_PTL_MAX_LEN) {
        onic_error("ptl: %s: remote_offset %llu is 2^48 or more, beyond any memory", call,
                   (unsigned long long)remote_offset);
        return PTL_FAIL;
    }
    onic_error("ptl: %s: %llu bytes; this interface moves at most %zu bytes per put or "
               "get (its transport has no RMA)", call, (unsigned long long)length,
               ni->max_inline);
    return PTL_FAIL;
}

/* Checks shared by put and get; a Portals code. Everything the layers below
 * rely on is checked here, once: they do not check again. */
static inline int initiator_check(onic_ptl_ni_t *ni, const onic_ptl_md_t *md,
                                  ptl_size_t local_offset, ptl_size_t length,
                                  ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                                  ptl_ac_index_t ac_index, ptl_size_t remote_offset,
                                  const char *call)
{
    if (__builtin_expect(md->desc.threshold != 0 &&
                         (!(md->desc.options & PTL_MD_MAX_SIZE) || !onic_ptl_md_used_up(md)) &&
                         local_offset <= md->desc.length &&
                         length <= md->desc.length - local_offset && target_id.nid == 0 &&
                         target_id.pid < ni->size &&
                         pt_index <= (ptl_pt_index_t)ni->limits.max_pt_index &&
                         ac_index <= (ptl_ac_index_t)ni->limits.max_ac_index &&
                         remote_offset <= ONIC_PTL_MAX_LEN &&
                         (length <= ni->max_inline || ni->io->rma != NULL), 1))
        return PTL_OK;
    return initiator_refuse(ni, md, local_offset, length, target_id, pt_index, ac_index,
                            remote_offset, call);
}

/* Register [local_offset, +length) of md and remember the operation; the
 * payload to send instead of the data. A Portals code. */
static int initiator_large(onic_ptl_ni_t *ni, onic_ptl_md_t *md, int get, uint32_t target,
                           const onic_ptl_msg_t *m, ptl_size_t local_offset,
                           onic_ptl_large_desc_t *desc, const char *call)
{
    onic_ptl_large_t *rec;
    onic_status_t status;
    char *at;
    int rc = onic_ptl_large_add(ni, &desc->cookie, &rec);

    if (rc != PTL_OK) {
        onic_error("ptl: %s: no room to track another large operation", call);
        return rc;
    }
    if (md->desc.options & PTL_MD_IOVEC) {
        if ((rec->bounce = onic_malloc(m->rlength)) == NULL) {
            onic_ptl_large_del(ni, rec);
            onic_error("ptl: %s: no memory for %llu bytes of an I/O vector MD in one piece",
                       call, (unsigned long long)m->rlength);
            return PTL_NO_SPACE;
        }
        if (!get)
            onic_ptl_md_iov_load(md, local_offset, rec->bounce, m->rlength);
        at = rec->bounce;
    } else {
        at = onic_ptl_md_at(md, local_offset);
    }
    status = ni->io->mem_reg(ni->io_arg, at, m->rlength, &desc->key);
    if (status != ONIC_OK) {
        onic_ptl_large_del(ni, rec);
        onic_error("ptl: %s: cannot expose %llu bytes for the target to move: %s", call,
                   (unsigned long long)m->rlength, onic_status_str(status));
        return onic_ptl_status_to_ptl(status);
    }
    rec->get = get;
    rec->target = target;
    rec->md = md->handle;
    rec->key = desc->key;
    rec->pt_index = m->pt_index;
    rec->match_bits = m->match_bits;
    rec->rlength = m->rlength;
    rec->local_offset = local_offset;
    rec->hdr_data = m->hdr_data;
    return PTL_OK;
}

/* The send failed: forget the large operation. */
static void initiator_large_undo(onic_ptl_ni_t *ni, const onic_ptl_large_desc_t *desc,
                                 uint32_t target)
{
    onic_ptl_large_t *rec = onic_ptl_large_find(ni, desc->cookie, target);

    ni->io->mem_dereg(ni->io_arg, &desc->key);
    if (rec != NULL)
        onic_ptl_large_del(ni, rec);
}

/* Whether target pulls a PTL_MD_PUT_PULLED put's data in one copy of its
 * own (else the put carries its data). */
static int initiator_one_copy(const onic_ptl_ni_t *ni, uint32_t target)
{
    return ni->io->rma != NULL && ni->io->one_copy != NULL && ni->io->one_copy(ni->io_arg, target);
}

/* PTL_MD_PUT_PULLED: whether put m of data goes large although it is short.
 * Out of line: this is inlined (with the sends) into MPI's flattened calls,
 * whose hot code it would move about. */
static __attribute__((noinline, cold)) int initiator_pulled(const onic_ptl_ni_t *ni,
                                                            const onic_ptl_msg_t *m,
                                                            uint32_t target)
{
    return m->op == ONIC_PTL_OP_PUT && m->rlength > 0 && initiator_one_copy(ni, target);
}

int onic_ptl_put_pulls(ptl_handle_ni_t ni_handle, uint32_t target)
{
    onic_ptl_ni_t *ni = onic_ptl_g.ni;

    return onic_ptl_backend_g == NULL && ni != NULL && ni->handle == ni_handle &&
           target < ni->size && initiator_one_copy(ni, target);
}

/* Send m (its region [local_offset, +m->rlength) of md: inline, or for more
 * than a message carries, its key); sets *large_p. A Portals code. */
static int initiator_send(onic_ptl_ni_t *ni, onic_ptl_md_t *md, onic_ptl_msg_t *m,
                          uint32_t target, ptl_size_t local_offset, int *large_p,
                          const char *call)
{
    onic_ptl_large_desc_t desc;
    onic_ptl_wire_t w;
    onic_status_t status;
    const void *payload = NULL;
    size_t len = 0, hdr_len;
    int large = m->rlength > ni->max_inline ||
                ((md->desc.options & PTL_MD_PUT_PULLED) && initiator_pulled(ni, m, target)),
        rc;

    /* An NI serving another process (the onload engine) has a put's data
     * only if the call brought it, and cannot read a get's reply out of the
     * target's memory: those go large, moved by RMA. */
    if (!large && ni->io->load != NULL) {
        if (m->op == ONIC_PTL_OP_GET)
            large = 1;
        else if (m->rlength > 0 &&
                 (payload = ni->io->load(ni->io_arg, onic_ptl_md_at(md, local_offset),
                                         m->rlength)) == NULL)
            large = 1;
        else
            len = m->rlength;
    }
    if (large) {
        m->flags |= ONIC_PTL_FLAG_LARGE;
        rc = initiator_large(ni, md, m->op == ONIC_PTL_OP_GET, target, m, local_offset, &desc,
                             call);
        if (rc != PTL_OK)
            return rc;
        payload = &desc;
        len = sizeof(desc);
    } else if (m->op == ONIC_PTL_OP_PUT && m->rlength > 0 && ni->io->load == NULL) {
        payload = onic_ptl_md_at(md, local_offset);
        len = m->rlength;
        if (md->desc.options & PTL_MD_IOVEC) {
            /* Gathered into one piece: the transport sends one. */
            if (ni->iov_buf == NULL && (ni->iov_buf = onic_malloc(ni->max_inline)) == NULL) {
                onic_error("ptl: %s: no memory to gather an I/O vector MD's %zu bytes", call,
                           len);
                return PTL_NO_SPACE;
            }
            onic_ptl_md_iov_load(md, local_offset, ni->iov_buf, len);
            payload = ni->iov_buf;
        }
    }
    hdr_len = onic_ptl_msg_pack(m, &w);
    status = ni->io->send(ni->io_arg, target, &w, hdr_len, payload, len);
    if (status != ONIC_OK) {
        if (large)
            initiator_large_undo(ni, &desc, target);
        onic_error("ptl: %s with rank %u: %s", call, target, onic_status_str(status));
        return onic_ptl_status_to_ptl(status);
    }
    *large_p = large;
    return PTL_OK;
}

/* The common put, a straight line: an MD of this process without event
 * queue (so no events, and no ack, which needs one) and data that fits one
 * message. */
static inline int put_is_short(const onic_ptl_ni_t *ni, const onic_ptl_md_t *md,
                               ptl_size_t length)
{
    return md->desc.eq_handle == PTL_EQ_NONE && length <= ni->max_inline && ni->io->load == NULL;
}

/* The short put sent: count it against a finite threshold, unlink the MD
 * when that uses it up. */
static void __attribute__((noinline)) put_count(onic_ptl_ni_t *ni, onic_ptl_md_t *md)
{
    onic_ptl_md_count(md);
    if (onic_ptl_md_should_unlink(md))
        onic_ptl_md_destroy(ni, md); /* no event queue: no UNLINK event */
}

static int __attribute__((noinline, cold)) put_failed(uint32_t target, onic_status_t status)
{
    onic_error("ptl: PtlPut with rank %u: %s", target, onic_status_str(status));
    return onic_ptl_status_to_ptl(status);
}

/* A short put (put_is_short), checked: the header's first four words -- a
 * put without ack sends no more (onic_ptl_wire_len) -- written as
 * onic_ptl_msg_pack would, from the checked arguments, and the data behind
 * them. Nothing is checked again below (the transport's send included). */
static inline __attribute__((always_inline)) int
put_short(onic_ptl_ni_t *ni, onic_ptl_md_t *md, ptl_size_t local_offset, ptl_size_t length,
          uint32_t target, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
          ptl_match_bits_t match_bits, ptl_size_t remote_offset, ptl_hdr_data_t hdr_data)
{
    onic_ptl_wire_t w;
    onic_status_t status;

    w.w[0] = length | (uint64_t)ONIC_PTL_OP_PUT << 48 | (uint64_t)ac_index << 56;
    w.w[1] = remote_offset | (uint64_t)pt_index << 48;
    w.w[2] = match_bits;
    w.w[3] = hdr_data;
    status = ni->io->send(ni->io_arg, target, &w, 4 * sizeof(uint64_t),
                          length > 0 ? onic_ptl_md_at(md, local_offset) : NULL, length);
    if (__builtin_expect(status != ONIC_OK, 0))
        return put_failed(target, status);
    /* With no threshold only MAX_SIZE can use an MD up, and a put does not
     * move its offset: nothing to count, nothing to unlink. No event was
     * recorded, so no handler to run. */
    if (md->desc.threshold != PTL_MD_THRESH_INF)
        put_count(ni, md);
    return PTL_OK;
}

int onic_ptl_put(onic_ptl_ni_t *ni, onic_ptl_md_t *md, ptl_size_t local_offset,
                 ptl_size_t length, ptl_ack_req_t ack_req, uint32_t target,
                 ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
                 ptl_size_t remote_offset, ptl_hdr_data_t hdr_data)
{
    onic_ptl_eq_t *eq;
    onic_ptl_msg_t m;
    ptl_event_t ev;
    int large, rc;

    if (put_is_short(ni, md, length) && !(md->desc.options & (PTL_MD_IOVEC | PTL_MD_PUT_PULLED)))
        return put_short(ni, md, local_offset, length, target, pt_index, ac_index, match_bits,
                         remote_offset, hdr_data);
    eq = onic_ptl_md_eq(ni, md);
    memset(&m, 0, sizeof(m));
    m.op = ONIC_PTL_OP_PUT;
    /* An ack needs somewhere to go: only an MD with an event queue asks. */
    m.flags = ack_req == PTL_ACK_REQ && eq != NULL ? ONIC_PTL_FLAG_ACK : 0;
    m.eq = eq != NULL ? eq->handle : PTL_EQ_NONE;
    m.md = md->handle;
    m.pt_index = pt_index;
    m.ac_index = ac_index;
    m.match_bits = match_bits;
    m.offset = remote_offset;
    m.rlength = length;
    m.hdr_data = hdr_data;
    rc = initiator_send(ni, md, &m, target, local_offset, &large, "PtlPut");
    if (rc != PTL_OK)
        return rc;
    onic_ptl_md_count(md);
    if (large)
        md->inflight++; /* until the target's DONE: SEND_END, ack, unlink then */
    if (eq != NULL) {
        unsigned options = md->desc.options;
        memset(&ev, 0, sizeof(ev));
        ev.initiator.pid = ni->rank;
        ev.uid = ni->uid;
        ev.jid = ni->jid;
        ev.pt_index = pt_index;
        ev.match_bits = match_bits;
        ev.rlength = ev.mlength = length;
        ev.offset = local_offset;
        ev.md_handle = md->handle;
        ev.hdr_data = hdr_data;
        onic_ptl_md_snapshot(md, &ev.md);
        ev.link = eq->seq;
        if (!(options & PTL_MD_EVENT_START_DISABLE)) {
            ev.type = PTL_EVENT_SEND_START;
            onic_ptl_eq_post(eq, &ev);
        }
        if (!(options & PTL_MD_EVENT_END_DISABLE) && !large) {
            ev.type = PTL_EVENT_SEND_END;
            onic_ptl_eq_post(eq, &ev);
        }
        if (onic_ptl_md_should_unlink(md) && !(options & PTL_MD_EVENT_UNLINK_DISABLE)) {
            ev.type = PTL_EVENT_UNLINK;
            ev.link = eq->seq;
            onic_ptl_eq_post(eq, &ev);
        }
    }
    if (onic_ptl_md_should_unlink(md))
        onic_ptl_md_destroy(ni, md);
    /* No poll here: arrivals come in only where the caller reads events,
     * so a caller handling its events (and starting puts and gets as it
     * goes) never has more recorded behind its back than one poll brings. */
    onic_ptl_eq_run_handlers(ni);
    return PTL_OK;
}

/* PtlPut and PtlPutRegion after the handle lookup: the checks, then the put. */
static inline __attribute__((always_inline)) int put_checked(onic_ptl_ni_t *ni, onic_ptl_md_t *md, ptl_size_t local_offset,
                              ptl_size_t length, ptl_ack_req_t ack_req,
                              ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                              ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
                              ptl_size_t remote_offset, ptl_hdr_data_t hdr_data)
{
    int rc;

    if (__builtin_expect(ack_req != PTL_ACK_REQ && ack_req != PTL_NOACK_REQ, 0)) {
        onic_error("ptl: PtlPut: ack_req %d; use PTL_ACK_REQ or PTL_NOACK_REQ", (int)ack_req);
        return PTL_FAIL;
    }
    rc = initiator_check(ni, md, local_offset, length, target_id, pt_index, ac_index,
                         remote_offset, "PtlPut");
    if (rc != PTL_OK)
        return rc;
    if (__builtin_expect(put_is_short(ni, md, length) &&
                             !(md->desc.options & (PTL_MD_IOVEC | PTL_MD_PUT_PULLED)),
                         1))
        return put_short(ni, md, local_offset, length, target_id.pid, pt_index, ac_index,
                         match_bits, remote_offset, hdr_data);
    return onic_ptl_put(ni, md, local_offset, length, ack_req, target_id.pid, pt_index, ac_index,
                        match_bits, remote_offset, hdr_data);
}

static int __attribute__((noinline, cold)) put_no_md(ptl_handle_md_t md_handle, int rc)
{
    if (rc == PTL_MD_INVALID)
        onic_error("ptl: PtlPut: md_handle %#llx names no live memory descriptor",
                   (unsigned long long)md_handle);
    return rc;
}

/* PtlPutRegion, every case: the engine's, a bad handle, the checks that
 * say what is wrong, events, acks, large puts. */
static int __attribute__((noinline))
put_region(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
           ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
           ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
           ptl_hdr_data_t hdr_data)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->put(md_handle, local_offset, length, 0, ack_req, target_id,
                                       pt_index, ac_index, match_bits, remote_offset, hdr_data);
    onic_ptl_ni_t *ni;
    onic_ptl_md_t *md;
    int rc = onic_ptl_md_of(md_handle, &ni, &md);

    if (rc != PTL_OK)
        return put_no_md(md_handle, rc);
    return put_checked(ni, md, local_offset, length, ack_req, target_id, pt_index, ac_index,
                       match_bits, remote_offset, hdr_data);
}

/* The common put -- put_is_short, and an MD without threshold (as MPI's,
 * spanning all memory) -- checked and sent in one function: every check
 * of initiator_check and of the ack request in one test. Whatever fails
 * one goes the general way, put_region (a tail call with the same
 * arguments), which checks again and says what was wrong; so does an MD
 * with a threshold, to be counted. Below, nothing checks again: the
 * header's four words written as onic_ptl_msg_pack would, and the
 * transport's send. Nothing is needed after that call but its status (an
 * MD without threshold and without MAX_SIZE is never used up, and no
 * event is recorded, so no handler runs). */
int PtlPutRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                 ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                 ptl_hdr_data_t hdr_data)
{
    onic_ptl_ni_t *ni = onic_ptl_g.ni;
    onic_ptl_md_t *md;
    onic_ptl_wire_t w;
    onic_status_t status;

    /* An NI implies PtlInit (PtlFini clears it before init). */
    if (__builtin_expect(ni == NULL || onic_ptl_backend_g != NULL, 0) ||
        (md = onic_ptl_htab_get_hinted(&ni->mds, md_handle)) == NULL ||
        !(md->desc.threshold == PTL_MD_THRESH_INF &&
          !(md->desc.options & (PTL_MD_MAX_SIZE | PTL_MD_IOVEC | PTL_MD_PUT_PULLED)) &&
          local_offset <= md->desc.length && length <= md->desc.length - local_offset &&
          (unsigned)ack_req <= PTL_NOACK_REQ && target_id.nid == 0 &&
          target_id.pid < ni->size && pt_index <= (ptl_pt_index_t)ni->limits.max_pt_index &&
          ac_index <= (ptl_ac_index_t)ni->limits.max_ac_index &&
          remote_offset <= ONIC_PTL_MAX_LEN && put_is_short(ni, md, length)))
        return put_region(md_handle, local_offset, length, ack_req, target_id, pt_index,
                          ac_index, match_bits, remote_offset, hdr_data);
    w.w[0] = length | (uint64_t)ONIC_PTL_OP_PUT << 48 | (uint64_t)ac_index << 56;
    w.w[1] = remote_offset | (uint64_t)pt_index << 48;
    w.w[2] = match_bits;
    w.w[3] = hdr_data;
    status = ni->io->send(ni->io_arg, target_id.pid, &w, 4 * sizeof(uint64_t),
                          length > 0 ? onic_ptl_md_at(md, local_offset) : NULL, length);
    if (__builtin_expect(status != ONIC_OK, 0))
        return put_failed(target_id.pid, status);
    return PTL_OK;
}

int PtlPut(ptl_handle_md_t md_handle, ptl_ack_req_t ack_req, ptl_process_id_t target_id,
           ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
           ptl_size_t remote_offset, ptl_hdr_data_t hdr_data)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->put(md_handle, 0, 0, 1, ack_req, target_id, pt_index, ac_index,
                                       match_bits, remote_offset, hdr_data);
    onic_ptl_ni_t *ni;
    onic_ptl_md_t *md;
    int rc = onic_ptl_md_of(md_handle, &ni, &md);

    if (rc != PTL_OK)
        return put_no_md(md_handle, rc);
    return put_checked(ni, md, 0, md->desc.length, ack_req, target_id, pt_index, ac_index,
                       match_bits, remote_offset, hdr_data);
}

int PtlGetRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
                 ptl_match_bits_t match_bits, ptl_size_t remote_offset)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->get(md_handle, local_offset, length, 0, target_id, pt_index,
                                       ac_index, match_bits, remote_offset);
    onic_ptl_ni_t *ni;
    onic_ptl_md_t *md;
    onic_ptl_msg_t m;
    int large;
    int rc = onic_ptl_md_of(md_handle, &ni, &md);

    if (rc != PTL_OK) {
        if (rc == PTL_MD_INVALID)
            onic_error("ptl: PtlGet: md_handle %#llx names no live memory descriptor",
                       (unsigned long long)md_handle);
        return rc;
    }
    rc = initiator_check(ni, md, local_offset, length, target_id, pt_index, ac_index,
                         remote_offset, "PtlGet");
    if (rc != PTL_OK)
        return rc;
    memset(&m, 0, sizeof(m));
    m.op = ONIC_PTL_OP_GET;
    m.md = md->handle;
    m.eq = PTL_EQ_NONE;
    m.pt_index = pt_index;
    m.ac_index = ac_index;
    m.match_bits = match_bits;
    m.offset = remote_offset;
    m.rlength = length;
    m.local_offset = local_offset;
    rc = initiator_send(ni, md, &m, target_id.pid, local_offset, &large, "PtlGet");
    if (rc != PTL_OK)
        return rc;
    /* The reply cannot arrive before this: it is delivered by a later poll. */
    onic_ptl_md_count(md);
    md->pending++;
    /* No poll here: arrivals come in only where the caller reads events,
     * so a caller handling its events (and starting puts and gets as it
     * goes) never has more recorded behind its back than one poll brings. */
    onic_ptl_eq_run_handlers(ni);
    return PTL_OK;
}

int PtlGet(ptl_handle_md_t md_handle, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
           ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->get(md_handle, 0, 0, 1, target_id, pt_index, ac_index,
                                       match_bits, remote_offset);
    onic_ptl_ni_t *ni;
    onic_ptl_md_t *md;
    int rc = onic_ptl_md_of(md_handle, &ni, &md);

    if (rc != PTL_OK) {
        if (rc == PTL_MD_INVALID)
            onic_error("ptl: PtlGet: md_handle %#llx names no live memory descriptor",
                       (unsigned long long)md_handle);
        return rc;
    }
    return PtlGetRegion(md_handle, 0, md->desc.length, target_id, pt_index, ac_index, match_bits,
                        remote_offset);
}
