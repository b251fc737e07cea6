/* Memory descriptors: checks, the acceptance rule of paper 003 4.8 (enabled
 * for the operation; not too long unless truncating), the threshold and
 * local offset, unlinking. */
#include "ptl/ptl.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

/* A flat MD's options; with PTL_MD_IOVEC, every one. */
#define MD_OPTIONS_FLAT (PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE | \
                         PTL_MD_ACK_DISABLE | PTL_MD_MAX_SIZE | PTL_MD_EVENT_START_DISABLE | \
                         PTL_MD_EVENT_END_DISABLE | PTL_MD_EVENT_UNLINK_DISABLE | PTL_MD_PUT_PULLED)
#define MD_OPTIONS_ALL (PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE | \
                        PTL_MD_ACK_DISABLE | PTL_MD_IOVEC | PTL_MD_MAX_SIZE | \
                        PTL_MD_EVENT_START_DISABLE | PTL_MD_EVENT_END_DISABLE | \
                        PTL_MD_EVENT_UNLINK_DISABLE | PTL_MD_PUT_PULLED)

/* An I/O vector's checks; its total in *total_p. */
static __attribute__((noinline, cold)) int md_iov_check(const onic_ptl_ni_t *ni, const ptl_md_t *md, ptl_size_t *total_p,
                        const char *call)
{
    const ptl_md_iovec_t *v = md->start;
    ptl_size_t total = 0;

    /* The vector is read in the process that made the call: an NI serving
     * another process (the onload engine) would read its own memory. */
    if (ni->io != NULL && ni->io->store != NULL) {
        onic_error("ptl: %s: PTL_MD_IOVEC under ONIC_ONLOAD: the engine cannot read the "
                   "vector; pass a flat MD", call);
        return PTL_MD_ILLEGAL;
    }
    if (v == NULL) {
        onic_error("ptl: %s: PTL_MD_IOVEC with md.start NULL: pass the ptl_md_iovec_t array",
                   call);
        return PTL_MD_ILLEGAL;
    }
    if (md->length == 0 || md->length > (ptl_size_t)ni->limits.max_md_iovecs) {
        onic_error("ptl: %s: PTL_MD_IOVEC with md.length %llu entries; use 1 to %d "
                   "(max_md_iovecs)", call, (unsigned long long)md->length,
                   ni->limits.max_md_iovecs);
        return PTL_MD_ILLEGAL;
    }
    for (ptl_size_t i = 0; i < md->length; i++) {
        if (v[i].iov_base == NULL && v[i].iov_len > 0) {
            onic_error("ptl: %s: PTL_MD_IOVEC entry %llu has iov_base NULL with iov_len %llu",
                       call, (unsigned long long)i, (unsigned long long)v[i].iov_len);
            return PTL_MD_ILLEGAL;
        }
        if (v[i].iov_len > ONIC_PTL_MAX_LEN - total) {
            onic_error("ptl: %s: PTL_MD_IOVEC entries 0 to %llu add up to 2^48 bytes or more",
                       call, (unsigned long long)i);
            return PTL_MD_ILLEGAL;
        }
        total += v[i].iov_len;
    }
    *total_p = total;
    return PTL_OK;
}

/* The checks after the options': length is the MD's in bytes (an I/O
 * vector's total). */
static inline int md_check_rest(onic_ptl_ni_t *ni, const ptl_md_t *md, ptl_size_t length,
                                ptl_unlink_t unlink, const char *call)
{
    if ((md->options & PTL_MD_MAX_SIZE) && md->max_size > length) {
        onic_error("ptl: %s: md.max_size %llu is larger than the MD's %llu bytes", call,
                   (unsigned long long)md->max_size, (unsigned long long)length);
        return PTL_MD_ILLEGAL;
    }
    if (unlink != PTL_UNLINK && unlink != PTL_RETAIN) {
        onic_error("ptl: %s: unlink_op %d; use PTL_UNLINK or PTL_RETAIN", call, (int)unlink);
        return PTL_MD_ILLEGAL;
    }
    if (md->eq_handle != PTL_EQ_NONE &&
        onic_ptl_htab_get_hinted(&ni->eqs, md->eq_handle) == NULL) {
        onic_error("ptl: %s: md.eq_handle %#llx is no live event queue (or PTL_EQ_NONE)", call,
                   (unsigned long long)md->eq_handle);
        return PTL_EQ_INVALID;
    }
    return PTL_OK;
}

/* Options beyond a flat MD's: unknown bits, or an I/O vector (its checks,
 * then the rest with its total). Out of line: the flat MD's checks meet it
 * only in the options test they make anyway. */
static __attribute__((noinline, cold)) int md_check_options(onic_ptl_ni_t *ni, const ptl_md_t *md,
                                                            ptl_unlink_t unlink, const char *call)
{
    ptl_size_t total;
    int rc;

    if ((md->options & ~MD_OPTIONS_ALL) != 0) {
        onic_error("ptl: %s: md.options %#x has unknown bits", call, md->options);
        return PTL_MD_ILLEGAL;
    }
    if ((rc = md_iov_check(ni, md, &total, call)) != PTL_OK ||
        (rc = md_check_rest(ni, md, total, unlink, call)) != PTL_OK)
        return rc;
    return ONIC_PTL_MD_IOVEC_OK;
}

int onic_ptl_md_check_flat(onic_ptl_ni_t *ni, const ptl_md_t *md, ptl_unlink_t unlink,
                           const char *call)
{
    if (md->start == NULL && md->length > 0 && md->length != PTL_SIZE_MAX) {
        if (md->options & PTL_MD_IOVEC)
            onic_error("ptl: %s: PTL_MD_IOVEC with md.start NULL: pass the ptl_md_iovec_t "
                       "array", call);
        else
            onic_error("ptl: %s: md.start is NULL with md.length %llu (only PTL_SIZE_MAX, the "
                       "whole address space, may start at NULL)", call,
                       (unsigned long long)md->length);
        return PTL_MD_ILLEGAL;
    }
    if (md->length > ONIC_PTL_MAX_LEN && !(md->start == NULL && md->length == PTL_SIZE_MAX)) {
        onic_error("ptl: %s: md.length %llu is 2^48 or more", call, (unsigned long long)md->length);
        return PTL_MD_ILLEGAL;
    }
    if (md->threshold < 0 && md->threshold != PTL_MD_THRESH_INF) {
        onic_error("ptl: %s: md.threshold %d; use 0 or more, or PTL_MD_THRESH_INF", call,
                   md->threshold);
        return PTL_MD_ILLEGAL;
    }
    if ((md->options & ~MD_OPTIONS_FLAT) != 0)
        return md_check_options(ni, md, unlink, call);
    return md_check_rest(ni, md, md->length, unlink, call);
}

int onic_ptl_md_check(onic_ptl_ni_t *ni, const ptl_md_t *md, ptl_unlink_t unlink, const char *call)
{
    int rc = onic_ptl_md_check_flat(ni, md, unlink, call);

    return rc == ONIC_PTL_MD_IOVEC_OK ? PTL_OK : rc;
}

int onic_ptl_md_iov_copy(ptl_md_t *desc, ptl_md_iovec_t **iov_p, uint32_t *niov_p)
{
    const ptl_md_iovec_t *v = desc->start;
    uint32_t n = (uint32_t)desc->length;
    ptl_md_iovec_t *copy = onic_malloc(n * sizeof(*copy));
    ptl_size_t total = 0;

    if (copy == NULL) {
        onic_error("ptl: no memory to copy an I/O vector of %u entries", n);
        return PTL_NO_SPACE;
    }
    for (uint32_t i = 0; i < n; i++) {
        copy[i] = v[i];
        total += v[i].iov_len;
    }
    desc->start = copy;
    desc->length = total;
    *iov_p = copy;
    *niov_p = n;
    return PTL_OK;
}

__attribute__((noinline, cold)) uint32_t onic_ptl_md_iov_find(const onic_ptl_md_t *md, uint64_t off, uint64_t *in_p)
{
    uint32_t i = 0;

    /* Entries of length 0 are stepped over; off below the total lands in
     * one that has bytes. */
    while (i + 1 < md->niov && off >= md->iov[i].iov_len) {
        off -= md->iov[i].iov_len;
        i++;
    }
    *in_p = off;
    return i;
}

__attribute__((noinline, cold)) void onic_ptl_md_iov_store(onic_ptl_ni_t *ni, const onic_ptl_md_t *md, uint64_t off,
                           const void *data, size_t len)
{
    const char *from = data;
    uint64_t in;
    uint32_t i = onic_ptl_md_iov_find(md, off, &in);

    for (; len > 0 && i < md->niov; i++, in = 0) {
        size_t n = md->iov[i].iov_len - in < len ? (size_t)(md->iov[i].iov_len - in) : len;
        if (n > 0)
            onic_ptl_ni_store(ni, (char *)md->iov[i].iov_base + in, from, n);
        from += n;
        len -= n;
    }
}

__attribute__((noinline, cold)) void onic_ptl_md_iov_load(const onic_ptl_md_t *md, uint64_t off, void *buf, size_t len)
{
    char *to = buf;
    uint64_t in;
    uint32_t i = onic_ptl_md_iov_find(md, off, &in);

    for (; len > 0 && i < md->niov; i++, in = 0) {
        size_t n = md->iov[i].iov_len - in < len ? (size_t)(md->iov[i].iov_len - in) : len;
        if (n > 0)
            onic_copy(to, (const char *)md->iov[i].iov_base + in, n);
        to += n;
        len -= n;
    }
}

__attribute__((noinline, cold)) char *onic_ptl_md_seg(const onic_ptl_md_t *md, uint64_t off, uint64_t len, uint64_t *piece_p)
{
    uint64_t in;
    uint32_t i;

    if (!(md->desc.options & PTL_MD_IOVEC)) {
        *piece_p = len;
        return onic_ptl_md_at(md, off);
    }
    i = onic_ptl_md_iov_find(md, off, &in);
    *piece_p = md->iov[i].iov_len - in < len ? md->iov[i].iov_len - in : len;
    return (char *)md->iov[i].iov_base + in;
}

onic_ptl_md_t *onic_ptl_md_embed(onic_ptl_ni_t *ni, onic_ptl_me_t *me, const ptl_md_t *desc,
                                 ptl_unlink_t unlink)
{
    onic_ptl_md_t *md = onic_ptl_md_embed_fields(ni, me, unlink);

    md->desc = *desc;
    return md;
}

onic_ptl_md_t *onic_ptl_md_embed_fields(onic_ptl_ni_t *ni, onic_ptl_me_t *me, ptl_unlink_t unlink)
{
    onic_ptl_md_t *md = &me->md0;

    /* Every field but desc: no memset (iov and niov are read only with
     * PTL_MD_IOVEC, which an entry's own MD gets only from PtlMDUpdate,
     * which sets them). */
    md->handle = onic_ptl_md0_handle(me->handle);
    md->unlink = unlink;
    md->local_offset = 0;
    md->me = me;
    md->pending = md->inflight = 0;
    md->embedded = 1;
    me->md0_used = me->md0_live = 1;
    ni->md0_live++;
    onic_dlist_push_tail(&me->mds, &md->link);
    return md;
}

int onic_ptl_md_create(onic_ptl_ni_t *ni, const ptl_md_t *desc, ptl_unlink_t unlink,
                       onic_ptl_me_t *me, onic_ptl_md_t **md_p)
{
    onic_ptl_md_t *md;
    ptl_md_t d = *desc;
    ptl_md_iovec_t *iov = NULL;
    uint32_t niov = 0;
    int rc;

    if (!onic_ptl_md_room(ni)) {
        onic_error("ptl: cannot create a memory descriptor: %d exist (max_mds)",
                   ni->limits.max_mds);
        return PTL_NO_SPACE;
    }
    if ((d.options & PTL_MD_IOVEC) && (rc = onic_ptl_md_iov_copy(&d, &iov, &niov)) != PTL_OK)
        return rc;
    if (me != NULL)
        me->oneshot = 0; /* no more its lone MD */
    /* An entry's first MD is the one it carries: no pool, no table slot.
     * Not an I/O vector's, whose copy of the vector is freed with it: the
     * release of an entry's own MD, every posted receive's, then has
     * nothing to test for. */
    if (me != NULL && !me->md0_used && iov == NULL) {
        *md_p = onic_ptl_md_embed(ni, me, &d, unlink);
        return PTL_OK;
    }
    if ((md = onic_pool_get(&ni->md_pool)) == NULL) {
        onic_free(iov);
        return PTL_NO_SPACE;
    }
    memset(md, 0, sizeof(*md));
    md->desc = d;
    md->iov = iov;
    md->niov = niov;
    md->unlink = unlink;
    md->me = me;
    if (onic_ptl_htab_add(&ni->mds, md, &md->handle) != ONIC_OK) {
        onic_error("ptl: cannot create a memory descriptor: no memory for its handle");
        onic_free(iov);
        onic_pool_put(&ni->md_pool, md);
        return PTL_NO_SPACE;
    }
    if (me != NULL)
        onic_dlist_push_tail(&me->mds, &md->link);
    *md_p = md;
    return PTL_OK;
}

/* Any MD but an entry's own flat one: its copy of an I/O vector freed
 * (an entry's own MD has one only if PtlMDUpdate made it a vector:
 * embedded 2), then the MD. Out of line, so a posted receive's release
 * tests nothing more than whether it is that common one. */
static __attribute__((noinline)) void md_release_other(onic_ptl_ni_t *ni, onic_ptl_md_t *md)
{
    if (md->desc.options & PTL_MD_IOVEC)
        onic_free(md->iov);
    if (md->embedded) {
        md->me->md0_live = 0;
        ni->md0_live--;
        return;
    }
    onic_ptl_htab_del_live(&ni->mds, md->handle);
    onic_pool_put(&ni->md_pool, md);
}

void onic_ptl_md_release(onic_ptl_ni_t *ni, onic_ptl_md_t *md)
{
    if (md->embedded != 1) {
        md_release_other(ni, md);
        return;
    }
    md->me->md0_live = 0;
    ni->md0_live--;
}

void onic_ptl_md_destroy(onic_ptl_ni_t *ni, onic_ptl_md_t *md)
{
    onic_ptl_me_t *me = md->me;

    if (me != NULL)
        onic_dlist_del(&md->link);
    else if (ni->io != NULL && ni->io->md_gone != NULL)
        ni->io->md_gone(ni->io_arg, md->handle);
    onic_ptl_md_release(ni, md);
    /* Paper 003, 4.4: an entry whose MD list this empties goes too, if it
     * was attached with PTL_UNLINK. */
    if (me != NULL && onic_dlist_empty(&me->mds) && me->unlink == PTL_UNLINK)
        onic_ptl_me_destroy(ni, me);
}

int PtlMDAttach(ptl_handle_me_t me_handle, ptl_md_t md, ptl_unlink_t unlink_op,
                ptl_handle_md_t *md_handle)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->md_attach(me_handle, md, unlink_op, md_handle);
    onic_ptl_ni_t *ni;
    onic_ptl_me_t *me;
    onic_ptl_md_t *obj;
    int rc = onic_ptl_me_of(me_handle, &ni, &me);

    if (rc != PTL_OK) {
        if (rc == PTL_ME_INVALID)
            onic_error("ptl: PtlMDAttach: me_handle %#llx names no live match entry",
                       (unsigned long long)me_handle);
        return rc;
    }
    if (md_handle == NULL) {
        onic_error("ptl: PtlMDAttach with a NULL md_handle: pass where to store the handle");
        return PTL_SEGV;
    }
    if (me->entry == NULL) {
        /* A receive of onic_ptl_recv_post that a put took and whose data
         * is still coming (a large or placed put): it left the list then,
         * being used up, and goes when that put ends. */
        onic_debug("ptl: PtlMDAttach: entry %#llx was taken by a put still moving its data",
                   (unsigned long long)me_handle);
        return PTL_ME_IN_USE;
    }
    if ((rc = onic_ptl_md_check(ni, &md, unlink_op, "PtlMDAttach")) != PTL_OK)
        return rc;
    if ((rc = onic_ptl_md_create(ni, &md, unlink_op, me, &obj)) != PTL_OK)
        return rc;
    *md_handle = obj->handle;
    return PTL_OK;
}

int PtlMDBind(ptl_handle_ni_t ni_handle, ptl_md_t md, ptl_unlink_t unlink_op,
              ptl_handle_md_t *md_handle)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->md_bind(ni_handle, md, unlink_op, md_handle);
    onic_ptl_ni_t *ni;
    onic_ptl_md_t *obj;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    if (md_handle == NULL) {
        onic_error("ptl: PtlMDBind with a NULL md_handle: pass where to store the handle");
        return PTL_SEGV;
    }
    if ((rc = onic_ptl_md_check(ni, &md, unlink_op, "PtlMDBind")) != PTL_OK)
        return rc;
    if ((rc = onic_ptl_md_create(ni, &md, unlink_op, NULL, &obj)) != PTL_OK)
        return rc;
    *md_handle = obj->handle;
    return PTL_OK;
}

int PtlMDUnlink(ptl_handle_md_t md_handle)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->md_unlink(md_handle);
    onic_ptl_ni_t *ni;
    onic_ptl_md_t *md;
    int rc = onic_ptl_md_of(md_handle, &ni, &md);

    if (rc != PTL_OK)
        return rc;
    if (onic_ptl_md_busy(md)) {
        onic_error("ptl: PtlMDUnlink: MD %#llx waits for %u replies and %u large transfers; "
                   "unlink it after their END events", (unsigned long long)md_handle,
                   md->pending, md->inflight);
        return PTL_MD_IN_USE;
    }
    onic_ptl_md_destroy(ni, md);
    return PTL_OK;
}

int PtlMDUpdate(ptl_handle_md_t md_handle, ptl_md_t *old_md, ptl_md_t *new_md,
                ptl_handle_eq_t eq_handle)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->md_update(md_handle, old_md, new_md, eq_handle);
    onic_ptl_ni_t *ni;
    onic_ptl_md_t *md;
    onic_ptl_eq_t *eq = NULL;
    ptl_md_t desc;
    ptl_md_iovec_t *iov = NULL;
    uint32_t niov = 0;
    int rc = onic_ptl_md_of(md_handle, &ni, &md);

    if (rc != PTL_OK)
        return rc;
    if (eq_handle != PTL_EQ_NONE && (eq = onic_ptl_htab_get(&ni->eqs, eq_handle)) == NULL) {
        onic_error("ptl: PtlMDUpdate: eq_handle %#llx is no live event queue (or PTL_EQ_NONE)",
                   (unsigned long long)eq_handle);
        return PTL_EQ_INVALID;
    }
    if (new_md != NULL && (rc = onic_ptl_md_check(ni, new_md, md->unlink, "PtlMDUpdate")) != PTL_OK)
        return rc;
    if (old_md != NULL)
        onic_ptl_md_snapshot(md, old_md);
    if (new_md == NULL)
        return PTL_OK;
    /* No transport poll here: the test and the update are one step. */
    if (eq != NULL && eq->head != eq->tail)
        return PTL_MD_NO_UPDATE;
    if (onic_ptl_md_busy(md)) {
        onic_error("ptl: PtlMDUpdate: MD %#llx waits for %u replies and %u large transfers",
                   (unsigned long long)md_handle, md->pending, md->inflight);
        return PTL_MD_IN_USE;
    }
    desc = *new_md;
    if ((desc.options & PTL_MD_IOVEC) && (rc = onic_ptl_md_iov_copy(&desc, &iov, &niov)) != PTL_OK)
        return rc;
    if (md->desc.options & PTL_MD_IOVEC)
        onic_free(md->iov);
    if (md->me != NULL)
        md->me->oneshot = 0; /* its MD is not what was posted */
    md->desc = desc;
    md->iov = iov;
    md->niov = niov;
    md->local_offset = 0;
    /* An entry's own MD with a vector now (or no more) is released by the
     * way that frees it (onic_ptl_md_release). */
    if (md->embedded)
        md->embedded = iov != NULL ? 2 : 1;
    return PTL_OK;
}
