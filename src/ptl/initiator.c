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

#include <string.h>

/* Checks shared by put and get; a Portals code. */
static int initiator_check(onic_ptl_ni_t *ni, const onic_ptl_md_t *md, ptl_size_t local_offset,
                           ptl_size_t length, ptl_process_id_t target_id,
                           ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
                           ptl_size_t remote_offset, const char *call)
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
    if (length > ni->max_inline && ni->io->rma == NULL) {
        onic_error("ptl: %s: %llu bytes; this interface moves at most %zu bytes per put or "
                   "get (its transport has no RMA)", call, (unsigned long long)length,
                   ni->max_inline);
        return PTL_FAIL;
    }
    return PTL_OK;
}

/* Register [local_offset, +length) of md and remember the operation; the
 * payload to send instead of the data. A Portals code. */
static int initiator_large(onic_ptl_ni_t *ni, onic_ptl_md_t *md, int get, uint32_t target,
                           const onic_ptl_msg_t *m, ptl_size_t local_offset,
                           onic_ptl_large_desc_t *desc, const char *call)
{
    onic_ptl_large_t *rec;
    onic_status_t status;
    int rc = onic_ptl_large_add(ni, &desc->cookie, &rec);

    if (rc != PTL_OK) {
        onic_error("ptl: %s: no room to track another large operation", call);
        return rc;
    }
    status = ni->io->mem_reg(ni->io_arg, onic_ptl_md_at(md, local_offset), m->rlength,
                             &desc->key);
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
    int large = m->rlength > ni->max_inline, rc;

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

int PtlPutRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                 ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                 ptl_hdr_data_t hdr_data)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->put(md_handle, local_offset, length, 0, ack_req, target_id,
                                       pt_index, ac_index, match_bits, remote_offset, hdr_data);
    onic_ptl_ni_t *ni;
    onic_ptl_md_t *md;
    onic_ptl_eq_t *eq;
    onic_ptl_msg_t m;
    ptl_event_t ev;
    int large;
    int rc = onic_ptl_md_of(md_handle, &ni, &md);

    if (rc != PTL_OK) {
        if (rc == PTL_MD_INVALID)
            onic_error("ptl: PtlPut: md_handle %#llx names no live memory descriptor",
                       (unsigned long long)md_handle);
        return rc;
    }
    if (ack_req != PTL_ACK_REQ && ack_req != PTL_NOACK_REQ) {
        onic_error("ptl: PtlPut: ack_req %d; use PTL_ACK_REQ or PTL_NOACK_REQ", (int)ack_req);
        return PTL_FAIL;
    }
    rc = initiator_check(ni, md, local_offset, length, target_id, pt_index, ac_index,
                         remote_offset, "PtlPut");
    if (rc != PTL_OK)
        return rc;
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
    rc = initiator_send(ni, md, &m, target_id.pid, local_offset, &large, "PtlPut");
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

    if (rc != PTL_OK) {
        if (rc == PTL_MD_INVALID)
            onic_error("ptl: PtlPut: md_handle %#llx names no live memory descriptor",
                       (unsigned long long)md_handle);
        return rc;
    }
    return PtlPutRegion(md_handle, 0, md->desc.length, ack_req, target_id, pt_index, ac_index,
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
