/* Match entries and the portal table: each portal has a match list and an
 * overflow list (onic extension), both onic matchers, so the entry that
 * takes a request is found by the matching library in list order
 * (onic_matcher_find skips entries whose first MD rejects). */
#include "ptl/ptl.h"
#include "ptl/post.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

static onic_mkey_t me_key(ptl_process_id_t id, ptl_match_bits_t bits, ptl_match_bits_t ignore,
                          onic_mkey_t *ignore_p)
{
    onic_mkey_t key = {bits, 0};
    ignore_p->bits = ignore;
    onic_ptl_id_key(id, &key.id, &ignore_p->id);
    return key;
}

/* kind and pt_index name the queue in a match trace (ONIC_TRACE). */
static onic_status_t pt_matcher(onic_ptl_ni_t *ni, onic_matcher_t **m_p, onic_match_queue_t kind,
                                ptl_pt_index_t pt_index)
{
    onic_status_t status;

    if (*m_p != NULL)
        return ONIC_OK;
    status = onic_matcher_create(ni->engine, m_p);
    if (status == ONIC_OK)
        onic_matcher_label(*m_p, kind, pt_index);
    return status;
}

/* The kept headers go with the NI's pool. */
void onic_ptl_pt_fini(onic_ptl_pt_t *pt)
{
    onic_matcher_destroy(pt->list);
    onic_matcher_destroy(pt->overflow);
    onic_matcher_destroy(pt->unexpected);
    memset(pt, 0, sizeof(*pt));
}

void onic_ptl_me_destroy(onic_ptl_ni_t *ni, onic_ptl_me_t *me)
{
    onic_ptl_pt_t *pt = &ni->pt[me->pt_index];

    /* Its MDs go with it, without events (there is no ME unlink event). */
    while (!onic_dlist_empty(&me->mds)) {
        onic_ptl_md_t *md = onic_container_of(me->mds.next, onic_ptl_md_t, link);
        onic_dlist_del(&md->link);
        onic_ptl_md_release(ni, md);
    }
    /* NULL: the matcher removed it when the operation that used it up
     * matched (target_first_md_takes). */
    if (me->entry != NULL)
        onic_matcher_remove(me->overflow ? pt->overflow : pt->list, me->entry);
    if (me->overflow)
        pt->noverflow--;
    else
        pt->nlist--;
    onic_ptl_htab_del_live(&ni->mes, me->handle);
    onic_pool_put(&ni->me_pool, me);
}

/* me_check's answer when its one test fails: which check, said. */
static __attribute__((noinline)) int me_check_slow(onic_ptl_ni_t *ni, const char *call,
                                                   ptl_pt_index_t pt_index, int overflow,
                                                   ptl_process_id_t match_id, ptl_unlink_t unlink)
{
    onic_ptl_pt_t *pt = &ni->pt[pt_index];
    uint32_t n = overflow ? pt->noverflow : pt->nlist;
    onic_status_t status;

    if (!onic_ptl_id_valid(ni, match_id, 1)) {
        onic_error("ptl: %s: match_id {%u, %u} is no process of this job (nid 0 or PTL_NID_ANY, "
                   "pid below %u or PTL_PID_ANY)", call, match_id.nid, match_id.pid, ni->size);
        return PTL_PROCESS_INVALID;
    }
    if (unlink != PTL_UNLINK && unlink != PTL_RETAIN) {
        onic_error("ptl: %s: unlink %d; use PTL_UNLINK or PTL_RETAIN", call, (int)unlink);
        return PTL_FAIL;
    }
    if (n >= (uint32_t)ni->limits.max_me_list) {
        onic_error("ptl: %s: portal %u already has %u entries (max_me_list)", call, pt_index, n);
        return PTL_ME_LIST_TOO_LONG;
    }
    /* A matcher that cannot be made is out of memory (PTL_NO_SPACE) or an
     * engine that the configuration cannot start (PTL_FAIL: its reason is
     * logged, e.g. ONIC_ALPU_UNIT=rtl without its plug-in). */
    status = pt_matcher(ni, overflow ? &pt->overflow : &pt->list,
                        overflow ? ONIC_MATCH_QUEUE_OVERFLOW : ONIC_MATCH_QUEUE_POSTED, pt_index);
    if (status == ONIC_OK && overflow)
        status = pt_matcher(ni, &pt->unexpected, ONIC_MATCH_QUEUE_UNEXPECTED, pt_index);
    if (status != ONIC_OK) {
        onic_error("ptl: %s: cannot make portal %u's match list: %s", call, pt_index,
                   onic_status_str(status));
        return onic_ptl_status_to_ptl(status);
    }
    return PTL_OK;
}

/* Whether pt_index's list (overflow or not) takes a new entry with these
 * arguments: PTL_OK or the code, said. The usual case is one test. */
static inline int me_check(onic_ptl_ni_t *ni, const char *call, ptl_pt_index_t pt_index,
                           int overflow, ptl_process_id_t match_id, ptl_unlink_t unlink)
{
    const onic_ptl_pt_t *pt = &ni->pt[pt_index];

    if (__builtin_expect(!overflow && pt->list != NULL &&
                             pt->nlist < (uint32_t)ni->limits.max_me_list &&
                             (unlink == PTL_UNLINK || unlink == PTL_RETAIN) &&
                             onic_ptl_id_valid(ni, match_id, 1), 1))
        return PTL_OK;
    return me_check_slow(ni, call, pt_index, overflow, match_id, unlink);
}

/* Make an entry whose arguments me_check passed and link it into its list
 * at pos, next to anchor for BEFORE/AFTER. A Portals code. */
static int me_link(onic_ptl_ni_t *ni, const char *call, ptl_pt_index_t pt_index, int overflow,
                   ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                   ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, onic_match_pos_t pos,
                   onic_ptl_me_t *anchor, onic_ptl_me_t **me_p)
{
    onic_ptl_pt_t *pt = &ni->pt[pt_index];
    onic_mkey_t key, ignore;
    onic_ptl_me_t *me = onic_pool_get(&ni->me_pool);
    onic_status_t status;

    if (me == NULL)
        return PTL_NO_SPACE;
    /* Every field but md0, which is set when used: no memset. */
    me->pt_index = pt_index;
    me->overflow = overflow;
    me->match_id = match_id;
    me->match_bits = match_bits;
    me->ignore_bits = ignore_bits;
    me->unlink = unlink;
    me->md0_used = me->md0_live = me->oneshot = 0;
    onic_dlist_init(&me->mds);
    status = onic_ptl_htab_add(&ni->mes, me, &me->handle);
    if (status != ONIC_OK) {
        onic_error("ptl: %s: %s (at most %d match entries)", call, onic_status_str(status),
                   ni->limits.max_mes);
        goto err_free_me;
    }
    key = me_key(match_id, match_bits, ignore_bits, &ignore);
    status = onic_matcher_insert(overflow ? pt->overflow : pt->list, key, ignore, me, pos,
                                 anchor != NULL ? anchor->entry : NULL, &me->entry);
    if (status != ONIC_OK) {
        onic_error("ptl: %s: cannot insert into portal %u's list: %s", call, pt_index,
                   onic_status_str(status));
        goto err_del_handle;
    }
    if (overflow)
        pt->noverflow++;
    else
        pt->nlist++;
    *me_p = me;
    return PTL_OK;

err_del_handle:
    onic_ptl_htab_del(&ni->mes, me->handle);
err_free_me:
    onic_pool_put(&ni->me_pool, me);
    return onic_ptl_status_to_ptl(status);
}

/* Insert a new entry into pt_index's list (overflow or not) at pos, next to
 * anchor for BEFORE/AFTER. A Portals code. */
static int me_insert(onic_ptl_ni_t *ni, const char *call, ptl_pt_index_t pt_index, int overflow,
                     ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                     ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, onic_match_pos_t pos,
                     onic_ptl_me_t *anchor, onic_ptl_me_t **me_p)
{
    int rc = me_check(ni, call, pt_index, overflow, match_id, unlink);

    if (rc != PTL_OK)
        return rc;
    if (anchor != NULL && anchor->entry == NULL) {
        /* A receive a put took whose data is still coming: out of the list
         * (PtlMDAttach answers the same). */
        onic_debug("ptl: %s: base entry %#llx was taken by a put still moving its data", call,
                   (unsigned long long)anchor->handle);
        return PTL_ME_IN_USE;
    }
    return me_link(ni, call, pt_index, overflow, match_id, match_bits, ignore_bits, unlink, pos,
                   anchor, me_p);
}

static int me_check_pt(onic_ptl_ni_t *ni, ptl_pt_index_t pt_index, const char *call)
{
    if (pt_index > (ptl_pt_index_t)ni->limits.max_pt_index) {
        onic_error("ptl: %s: pt_index %u is beyond the portal table (0 to %d)", call, pt_index,
                   ni->limits.max_pt_index);
        return PTL_PT_INDEX_INVALID;
    }
    return PTL_OK;
}

static int me_check_pos(ptl_ins_pos_t position, const char *call)
{
    if (position != PTL_INS_BEFORE && position != PTL_INS_AFTER) {
        onic_error("ptl: %s: position %d; use PTL_INS_BEFORE or PTL_INS_AFTER", call,
                   (int)position);
        return PTL_FAIL;
    }
    return PTL_OK;
}

static int me_attach(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, int overflow,
                     ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                     ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, ptl_ins_pos_t position,
                     ptl_handle_me_t *me_handle, const char *call)
{
    onic_ptl_ni_t *ni;
    onic_ptl_me_t *me;
    int rc;

    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->me_attach(overflow ? 2 : 0, ni_handle, &pt_index, match_id,
                                             match_bits, ignore_bits, unlink, position, me_handle);
    if ((rc = onic_ptl_ni_of(ni_handle, &ni)) != PTL_OK)
        return rc;
    if (me_handle == NULL) {
        onic_error("ptl: %s with a NULL me_handle: pass where to store the handle", call);
        return PTL_SEGV;
    }
    if ((rc = me_check_pt(ni, pt_index, call)) != PTL_OK ||
        (rc = me_check_pos(position, call)) != PTL_OK)
        return rc;
    rc = me_insert(ni, call, pt_index, overflow, match_id, match_bits, ignore_bits, unlink,
                   position == PTL_INS_BEFORE ? ONIC_MATCH_HEAD : ONIC_MATCH_TAIL, NULL, &me);
    if (rc == PTL_OK)
        *me_handle = me->handle;
    return rc;
}

int PtlMEAttach(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, ptl_process_id_t match_id,
                ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                ptl_ins_pos_t position, ptl_handle_me_t *me_handle)
{
    return me_attach(ni_handle, pt_index, 0, match_id, match_bits, ignore_bits, unlink, position,
                     me_handle, "PtlMEAttach");
}

int PtlMEAttachOverflow(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                        ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                        ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                        ptl_ins_pos_t position, ptl_handle_me_t *me_handle)
{
    return me_attach(ni_handle, pt_index, 1, match_id, match_bits, ignore_bits, unlink, position,
                     me_handle, "PtlMEAttachOverflow");
}

int PtlMEAttachAny(ptl_handle_ni_t ni_handle, ptl_pt_index_t *pt_index, ptl_process_id_t match_id,
                   ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                   ptl_handle_me_t *me_handle)
{
    onic_ptl_ni_t *ni;
    onic_ptl_me_t *me;
    int rc;

    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->me_attach(1, ni_handle, pt_index, match_id, match_bits,
                                             ignore_bits, unlink, PTL_INS_AFTER, me_handle);
    if ((rc = onic_ptl_ni_of(ni_handle, &ni)) != PTL_OK)
        return rc;
    if (pt_index == NULL || me_handle == NULL) {
        onic_error("ptl: PtlMEAttachAny with a NULL %s", pt_index == NULL ? "pt_index" : "me_handle");
        return PTL_SEGV;
    }
    for (ptl_pt_index_t i = 0; i <= (ptl_pt_index_t)ni->limits.max_pt_index; i++) {
        if (ni->pt[i].nlist != 0 || ni->pt[i].noverflow != 0)
            continue;
        rc = me_insert(ni, "PtlMEAttachAny", i, 0, match_id, match_bits, ignore_bits, unlink,
                       ONIC_MATCH_TAIL, NULL, &me);
        if (rc == PTL_OK) {
            *pt_index = i;
            *me_handle = me->handle;
        }
        return rc;
    }
    onic_error("ptl: PtlMEAttachAny: every portal (0 to %d) has entries", ni->limits.max_pt_index);
    return PTL_PT_FULL;
}

int PtlMEInsert(ptl_handle_me_t base, ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, ptl_ins_pos_t position,
                ptl_handle_me_t *me_handle)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->me_insert(base, match_id, match_bits, ignore_bits, unlink,
                                             position, me_handle);
    onic_ptl_ni_t *ni;
    onic_ptl_me_t *anchor, *me;
    int rc = onic_ptl_me_of(base, &ni, &anchor);

    if (rc != PTL_OK) {
        if (rc == PTL_ME_INVALID)
            onic_error("ptl: PtlMEInsert: base %#llx names no live match entry",
                       (unsigned long long)base);
        return rc;
    }
    if (me_handle == NULL) {
        onic_error("ptl: PtlMEInsert with a NULL me_handle: pass where to store the handle");
        return PTL_SEGV;
    }
    if ((rc = me_check_pos(position, "PtlMEInsert")) != PTL_OK)
        return rc;
    rc = me_insert(ni, "PtlMEInsert", anchor->pt_index, anchor->overflow, match_id, match_bits,
                   ignore_bits, unlink,
                   position == PTL_INS_BEFORE ? ONIC_MATCH_BEFORE : ONIC_MATCH_AFTER, anchor, &me);
    if (rc == PTL_OK)
        *me_handle = me->handle;
    return rc;
}

int PtlMEUnlink(ptl_handle_me_t me_handle)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->me_unlink(me_handle);
    onic_ptl_ni_t *ni;
    onic_ptl_me_t *me;
    onic_dlist_t *l;
    int rc = onic_ptl_me_of(me_handle, &ni, &me);

    if (rc != PTL_OK)
        return rc;
    for (l = me->mds.next; l != &me->mds; l = l->next)
        if (onic_ptl_md_busy(onic_container_of(l, onic_ptl_md_t, link))) {
            /* Not the caller's mistake: an entry can be matched by a large
             * put between its caller's last event and this call (MPI_Cancel
             * of a receive); the code says so. */
            onic_debug("ptl: PtlMEUnlink: an MD of entry %#llx waits for a reply or a transfer",
                       (unsigned long long)me_handle);
            return PTL_ME_IN_USE;
        }
    onic_ptl_me_destroy(ni, me);
    return PTL_OK;
}

int PtlMEUnlinkAsync(ptl_handle_me_t me_handle)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->me_unlink_async(me_handle);
    return PtlMEUnlink(me_handle);
}

/* The oldest unexpected header at pt_index matching (match_id, bits,
 * ignore), taken into *header: 1, or 0 if none. */
static inline int me_take_unexpected(onic_ptl_ni_t *ni, ptl_pt_index_t pt_index,
                                     ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                                     ptl_match_bits_t ignore_bits, ptl_ovf_header_t *header)
{
    onic_mkey_t key, ignore;
    onic_ptl_ovf_t *rec;

    if (onic_matcher_length(ni->pt[pt_index].unexpected) == 0)
        return 0;
    key = me_key(match_id, match_bits, ignore_bits, &ignore);
    rec = onic_matcher_match(ni->pt[pt_index].unexpected, key, ignore);
    if (rec == NULL)
        return 0;
    *header = rec->hdr;
    onic_pool_put(&ni->ovf_pool, rec);
    return 1;
}

/* PtlMEAttachSearch's attach of an I/O vector MD (checked): the MD made
 * first, from the pool with its copy of the vector (onic_ptl_md_create),
 * so that no memory for it undoes nothing. */
static int
me_attach_iov(onic_ptl_ni_t *ni, ptl_pt_index_t pt_index, ptl_process_id_t match_id,
              ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
              ptl_ins_pos_t position, const ptl_md_t *md, ptl_unlink_t md_unlink,
              ptl_handle_me_t *me_handle, ptl_handle_md_t *md_handle)
{
    onic_ptl_me_t *me;
    onic_ptl_md_t *obj;
    int rc = onic_ptl_md_create(ni, md, md_unlink, NULL, &obj);

    if (rc != PTL_OK)
        return rc;
    rc = me_link(ni, "PtlMEAttachSearch", pt_index, 0, match_id, match_bits, ignore_bits, unlink,
                 position == PTL_INS_BEFORE ? ONIC_MATCH_HEAD : ONIC_MATCH_TAIL, NULL, &me);
    if (rc != PTL_OK) {
        onic_ptl_md_release(ni, obj);
        return rc;
    }
    obj->me = me;
    onic_dlist_push_tail(&me->mds, &obj->link);
    *me_handle = me->handle;
    *md_handle = obj->handle;
    return PTL_OK;
}

/* PtlMEAttachSearch of an I/O vector MD (checked by
 * onic_ptl_md_check_flat), from the entry's checks on: out of line, so a
 * flat MD's search tests nothing for it. */
static __attribute__((noinline, cold)) int
me_search_iov(onic_ptl_ni_t *ni, ptl_pt_index_t pt_index, ptl_process_id_t match_id,
              ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
              ptl_ins_pos_t position, const ptl_md_t *md, ptl_unlink_t md_unlink,
              ptl_handle_me_t *me_handle, ptl_handle_md_t *md_handle, ptl_ovf_header_t *header)
{
    int rc = me_check(ni, "PtlMEAttachSearch", pt_index, 0, match_id, unlink);

    if (rc != PTL_OK)
        return rc;
    /* As PtlMEAttachSearch: search and attach with no poll between. */
    if (me_take_unexpected(ni, pt_index, match_id, match_bits, ignore_bits, header))
        return PTL_OVF_MATCHED;
    return me_attach_iov(ni, pt_index, match_id, match_bits, ignore_bits, unlink, position, md,
                         md_unlink, me_handle, md_handle);
}

int PtlMEAttachSearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                      ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                      ptl_match_bits_t ignore_bits, ptl_unlink_t unlink, ptl_ins_pos_t position,
                      ptl_md_t md, ptl_unlink_t md_unlink, ptl_handle_me_t *me_handle,
                      ptl_handle_md_t *md_handle, ptl_ovf_header_t *header)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->me_search(ni_handle, pt_index, match_id, match_bits,
                                             ignore_bits, unlink, position, md, md_unlink,
                                             me_handle, md_handle, header);
    const char *call = "PtlMEAttachSearch";
    onic_ptl_ni_t *ni;
    onic_ptl_me_t *me;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    if (me_handle == NULL || md_handle == NULL || header == NULL) {
        onic_error("ptl: %s with a NULL %s", call,
                   me_handle == NULL ? "me_handle" : md_handle == NULL ? "md_handle" : "header");
        return PTL_SEGV;
    }
    if ((rc = me_check_pt(ni, pt_index, call)) != PTL_OK ||
        (rc = me_check_pos(position, call)) != PTL_OK ||
        (rc = onic_ptl_md_check_flat(ni, &md, md_unlink, call)) != PTL_OK ||
        (rc = me_check(ni, call, pt_index, 0, match_id, unlink)) != PTL_OK) {
        if (rc != ONIC_PTL_MD_IOVEC_OK)
            return rc;
        return me_search_iov(ni, pt_index, match_id, match_bits, ignore_bits, unlink, position,
                             &md, md_unlink, me_handle, md_handle, header);
    }
    /* Search and attach with no poll in between: nothing can arrive. */
    if (me_take_unexpected(ni, pt_index, match_id, match_bits, ignore_bits, header))
        return PTL_OVF_MATCHED;
    /* The entry carries its MD: the MD limit is checked before either is
     * made, so nothing is undone. */
    if (!onic_ptl_md_room(ni)) {
        onic_error("ptl: %s: cannot create a memory descriptor: %d exist (max_mds)", call,
                   ni->limits.max_mds);
        return PTL_NO_SPACE;
    }
    rc = me_link(ni, call, pt_index, 0, match_id, match_bits, ignore_bits, unlink,
                 position == PTL_INS_BEFORE ? ONIC_MATCH_HEAD : ONIC_MATCH_TAIL, NULL, &me);
    if (rc != PTL_OK)
        return rc;
    *me_handle = me->handle;
    *md_handle = onic_ptl_md_embed(ni, me, &md, md_unlink)->handle;
    return PTL_OK;
}

/* The receive MPI posts (post.h): PtlMEAttachSearch's steps without its
 * checks, the MD's fields written in place. */
int onic_ptl_recv_post(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                       ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                       ptl_match_bits_t ignore_bits, void *start, ptl_size_t length,
                       unsigned options, void *user_ptr, ptl_handle_eq_t eq,
                       ptl_handle_me_t *me_handle, ptl_ovf_header_t *header)
{
    onic_ptl_ni_t *ni = onic_ptl_g.ni;
    onic_ptl_me_t *me;
    onic_ptl_md_t *md;
    ptl_md_t desc;
    ptl_handle_md_t md_handle;
    int rc;

    if (__builtin_expect(onic_ptl_backend_g == NULL && ni != NULL && ni->handle == ni_handle &&
                         ni->pt[pt_index].list != NULL &&
                         ni->pt[pt_index].nlist < (uint32_t)ni->limits.max_me_list &&
                         onic_ptl_md_room(ni), 1)) {
        if (me_take_unexpected(ni, pt_index, match_id, match_bits, ignore_bits, header))
            return PTL_OVF_MATCHED;
        rc = me_link(ni, "PtlMEAttachSearch", pt_index, 0, match_id, match_bits, ignore_bits,
                     PTL_UNLINK, ONIC_MATCH_TAIL, NULL, &me);
        if (rc != PTL_OK)
            return rc;
        md = onic_ptl_md_embed_fields(ni, me, PTL_UNLINK);
        md->desc.start = start;
        md->desc.length = length;
        md->desc.threshold = 1;
        md->desc.max_size = 0;
        md->desc.options = options;
        md->desc.user_ptr = user_ptr;
        md->desc.eq_handle = eq;
        me->oneshot = (options & (PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE |
                                  PTL_MD_MAX_SIZE | PTL_MD_IOVEC)) == PTL_MD_OP_PUT;
        *me_handle = me->handle;
        return PTL_OK;
    }
    memset(&desc, 0, sizeof(desc));
    desc.start = start;
    desc.length = length;
    desc.threshold = 1;
    desc.options = options;
    desc.user_ptr = user_ptr;
    desc.eq_handle = eq;
    return PtlMEAttachSearch(ni_handle, pt_index, match_id, match_bits, ignore_bits, PTL_UNLINK,
                             PTL_INS_AFTER, desc, PTL_UNLINK, me_handle, &md_handle, header);
}

int onic_ptl_recv_posted(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
    onic_ptl_ni_t *ni = onic_ptl_g.ni;
    const onic_matcher_t *list;

    if (onic_ptl_backend_g != NULL || ni == NULL || ni->handle != ni_handle)
        return 0;
    list = ni->pt[pt_index].list;
    return list != NULL && onic_matcher_length(list) > 0;
}

int onic_ptl_recv_take(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                       ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                       ptl_match_bits_t ignore_bits, ptl_ovf_header_t *header)
{
    onic_ptl_ni_t *ni = onic_ptl_g.ni;

    return onic_ptl_backend_g == NULL && ni != NULL && ni->handle == ni_handle &&
           me_take_unexpected(ni, pt_index, match_id, match_bits, ignore_bits, header);
}
