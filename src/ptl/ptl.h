/* The Portals layer's internals: objects, handle tables, the wire header,
 * and the calls between the public API (ni.c me.c md.c eq.c initiator.c),
 * the target side (target.c) and the transport glue (io_xport.c). Whether
 * this process's own state runs its NI or a back end does: backend.h.
 *
 * The target side is a function of an NI's state and one incoming message;
 * it reaches the outside only through what it returns (onic_ptl_out_t), so
 * the onload engine can run it for another process and the tests can feed it
 * headers with no transport at all. */
#ifndef ONIC_PTL_PTL_H
#define ONIC_PTL_PTL_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <onic/match.h>
#include <onic/portals.h>
#include <onic/status.h>
#include "base/copy.h"
#include "base/list.h"
#include "base/pool.h"
#include "base/slots.h"
#include "ptl/backend.h"

/* --- Handles -----------------------------------------------------------------
 * kind:4 | epoch:8 | generation:28 | index:24. The kind says which table; the
 * epoch which PtlNIInit made it (so a handle outlives neither its NI nor a
 * later one); the generation, bumped when a slot is freed, which object of
 * the slot. PTL_INVALID_HANDLE has kind 15, which no table uses.
 *
 * A table's generations stay below 2^27: the top generation bit marks an MD
 * handle that names the MD an entry carries inside itself (ONIC_PTL_GEN_MD0,
 * "one object per posted receive"): index and generation are then the
 * entry's, so no table slot is spent on it and it dies with the entry. */
enum {
    ONIC_PTL_KIND_NI = 1,
    ONIC_PTL_KIND_ME = 2,
    ONIC_PTL_KIND_MD = 3,
    ONIC_PTL_KIND_EQ = 4,
};
#define ONIC_PTL_MAX_OBJECTS (1u << 20) /* per kind; well inside 24 index bits */
#define ONIC_PTL_GEN_MASK    0x7ffffffu /* a table's generations */
#define ONIC_PTL_GEN_MD0     0x8000000u /* an entry's own MD (see above) */

static inline unsigned onic_ptl_handle_kind(uint64_t h)
{
    return (unsigned)(h >> 60);
}

static inline uint64_t onic_ptl_handle_make(unsigned kind, unsigned epoch, uint32_t gen,
                                            uint32_t index)
{
    return (uint64_t)kind << 60 | (uint64_t)(epoch & 0xff) << 52 |
           (uint64_t)(gen & 0xfffffff) << 24 | (index & 0xffffff);
}

typedef struct onic_ptl_htab {
    void    **obj;    /* by index; NULL when free */
    /* By index: the handle of the slot's object, or of the next one it
     * holds (the generation moved on). Kept whole, not as a generation, so
     * that handing one out is a load and checking one is a compare. */
    uint64_t *hnd;
    uint32_t *free;   /* stack of free indexes */
    uint32_t  nfree;
    uint32_t  used;   /* slots handed out so far */
    uint32_t  cap;    /* slots allocated */
    uint32_t  max;    /* the NI's limit */
    uint32_t  live;
    unsigned  kind, epoch;
    /* The last handle onic_ptl_htab_get_hinted found, and its object:
     * forgotten when that handle is deleted, so it never names a freed one. */
    uint64_t  hint;
    void     *hint_obj;
} onic_ptl_htab_t;

void          onic_ptl_htab_init(onic_ptl_htab_t *t, unsigned kind, unsigned epoch, uint32_t max);
void          onic_ptl_htab_fini(onic_ptl_htab_t *t);
/* ONIC_ERR_NO_RESOURCE at the limit, ONIC_ERR_NO_MEMORY. The slow path of
 * onic_ptl_htab_add: no free slot to reuse. */
onic_status_t onic_ptl_htab_add_new(onic_ptl_htab_t *t, void *obj, uint64_t *handle_p);
/* Inline: an entry and its handle come and go with every MPI receive, and a
 * freed slot is almost always there to reuse. */
static inline onic_status_t onic_ptl_htab_add(onic_ptl_htab_t *t, void *obj, uint64_t *handle_p)
{
    uint32_t index;

    if (__builtin_expect(t->nfree == 0, 0))
        return onic_ptl_htab_add_new(t, obj, handle_p);
    index = t->free[--t->nfree];
    t->obj[index] = obj;
    t->live++;
    *handle_p = t->hnd[index];
    return ONIC_OK;
}
/* The object, or NULL for anything that does not name a live one of t. */
/* The object a handle of t names, or NULL. Inline: every call starts with
 * one or two. */
static inline void *onic_ptl_htab_get(const onic_ptl_htab_t *t, uint64_t handle)
{
    uint32_t index = (uint32_t)(handle & 0xffffff);

    /* The slot's handle carries the table's kind and epoch and the
     * generation: one compare checks all three. A free slot's object is
     * NULL, whatever handle it will give next. */
    if (index >= t->used || t->hnd[index] != handle)
        return NULL;
    return t->obj[index];
}
/* Free the slot of a handle known to be live (an object's own, as it
 * goes): not looked up again. */
static inline void onic_ptl_htab_del_live(onic_ptl_htab_t *t, uint64_t handle)
{
    uint32_t index = (uint32_t)(handle & 0xffffff);

    if (t->hint == handle) {
        t->hint = 0; /* no handle is 0: its kind would be 0 */
        t->hint_obj = NULL;
    }
    t->obj[index] = NULL;
    /* The next generation: the field's top bit is never set (the mask is
     * one bit narrower), so clearing it wraps past ONIC_PTL_GEN_MASK. */
    t->hnd[index] = (handle + (UINT64_C(1) << 24)) & ~((uint64_t)(ONIC_PTL_GEN_MASK + 1) << 24);
    t->free[t->nfree++] = index;
    t->live--;
}

/* Free the slot of a live handle (anything else: nothing). */
static inline void onic_ptl_htab_del(onic_ptl_htab_t *t, uint64_t handle)
{
    if (onic_ptl_htab_get(t, handle) != NULL)
        onic_ptl_htab_del_live(t, handle);
}

/* onic_ptl_htab_get for a caller that names the same object again and
 * again (PtlPutRegion: MPI's MD of all memory): one compare when it is the
 * last one found. */
static inline void *onic_ptl_htab_get_hinted(onic_ptl_htab_t *t, uint64_t handle)
{
    void *obj;

    if (handle == t->hint)
        return t->hint_obj;
    if ((obj = onic_ptl_htab_get(t, handle)) != NULL) {
        t->hint = handle;
        t->hint_obj = obj;
    }
    return obj;
}

/* --- Wire header --------------------------------------------------------------
 * One message per put, get, ack, reply and done: this header in the
 * transport's user header, the data as its payload. Six words, of which a
 * message carries only the first onic_ptl_wire_len(op, flags) bytes -- a put
 * without ack four words, a get five, the rest six -- so that a small put
 * and its data share one cache line:
 *   w0 requested length:48 | op:4 | flags:4 | ACL index:8
 *   w1 remote offset:48 | portal index:16
 *   w2 match bits
 *   w3 put: hdr_data; get: local offset; ack, reply, done: manipulated length
 *   w4 the initiator's MD handle (echoed)
 *   w5 put, ack: the initiator's event queue for the ack; reply: local
 *      offset (a large reply: the initiator's cookie); done: the cookie
 * The initiator is the transport's source rank, never a header field.
 * Lengths and offsets are below 2^48 (no address space is larger).
 *
 * Large data (more than one message carries): a put or get with
 * ONIC_PTL_FLAG_LARGE carries, as its payload, the key of the initiator's
 * region registered for RMA and a cookie naming the operation at the
 * initiator. The target, once translation and access control pass, pulls a
 * put's data (RMA read) or pushes a get's (RMA write) straight between the
 * two MDs, then answers DONE (with the ack, if one is due) or the reply. */
enum {
    ONIC_PTL_OP_PUT   = 1,
    ONIC_PTL_OP_GET   = 2,
    ONIC_PTL_OP_ACK   = 3,
    ONIC_PTL_OP_REPLY = 4,
    ONIC_PTL_OP_DONE  = 5,  /* a large put was pulled: the initiator may reuse its data */
};
#define ONIC_PTL_FLAG_ACK   0x1u /* put: acknowledge it; done: and acknowledged */
#define ONIC_PTL_FLAG_LARGE 0x2u /* put, get, reply: the data moves by RMA */
#define ONIC_PTL_FLAG_FAIL  0x4u /* done, large reply: the RMA failed, nothing moved */
#define ONIC_PTL_FLAGS_ALL  0x7u
#define ONIC_PTL_MAX_LEN    ((UINT64_C(1) << 48) - 1)
#define ONIC_PTL_PT_LIMIT   4096 /* portal indexes fit the wire's 16 bits */
#define ONIC_PTL_AC_LIMIT   256  /* ACL indexes fit its 8 bits */

typedef struct onic_ptl_wire {
    uint64_t w[6];
} onic_ptl_wire_t;
static_assert(sizeof(onic_ptl_wire_t) == 48, "the Portals header fills the transport's user header");

/* A header unpacked: every field, whatever the op. */
typedef struct onic_ptl_msg {
    unsigned         op, flags;
    ptl_pt_index_t   pt_index;
    ptl_ac_index_t   ac_index;
    ptl_match_bits_t match_bits;
    uint64_t         offset;       /* remote offset requested; echoed */
    uint64_t         rlength;      /* requested length; echoed */
    uint64_t         mlength;      /* ack, reply: manipulated length */
    uint64_t         hdr_data;     /* put */
    uint64_t         local_offset; /* get, reply: where the reply lands in the initiator's MD */
    ptl_handle_md_t  md;           /* the initiator's MD; echoed */
    ptl_handle_eq_t  eq;           /* put, ack: the initiator's queue for the ack */
    uint64_t         cookie;       /* done, large reply: the initiator's operation */
} onic_ptl_msg_t;

/* A registered region as the transport names it (the layout of
 * onic_xport_mkey_t), opaque to everything but the glue. */
typedef struct onic_ptl_rkey {
    uint64_t addr, len, id;
} onic_ptl_rkey_t;

/* The payload of a large put or get. */
typedef struct onic_ptl_large_desc {
    onic_ptl_rkey_t key;
    uint64_t        cookie;
} onic_ptl_large_desc_t;

/* Fields beyond the wire's widths must have been refused by the caller.
 * Fills all six words; returns how many bytes of them to send. */
size_t        onic_ptl_msg_pack(const onic_ptl_msg_t *m, onic_ptl_wire_t *w);
size_t        onic_ptl_wire_len(unsigned op, unsigned flags);
/* ONIC_ERR_INVALID_PARAM for a size that is neither the op's nor the whole
 * header, an unknown op or flag. */
onic_status_t onic_ptl_msg_unpack(const void *buf, size_t len, onic_ptl_msg_t *m_p);

/* --- Objects -------------------------------------------------------------------- */
typedef struct onic_ptl_ni onic_ptl_ni_t;

typedef struct onic_ptl_eq {
    onic_ptl_ni_t   *ni;
    ptl_handle_eq_t  handle;
    ptl_event_t     *ring;        /* mask + 1 entries, a power of two at least count */
    uint64_t         count;       /* events it holds before the oldest is overwritten */
    uint64_t         mask;        /* positions to ring indices without a division */
    uint64_t         head, tail;  /* read and write positions; both back to 0 when a read
                                     empties the queue */
    int              dropped;     /* events were overwritten since the last read */
    int              lent;        /* PtlEQGetInPlace lent a ring slot since the last restart
                                     (until its next call: reads by PtlEQGet and PtlEQPoll
                                     alone then walk the ring as before) */
    ptl_seq_t        seq;         /* the next event's sequence number */
    ptl_eq_handler_t handler;
} onic_ptl_eq_t;

typedef struct onic_ptl_me onic_ptl_me_t;

typedef struct onic_ptl_md {
    /* threshold counts down in place. With PTL_MD_IOVEC, start is iov and
     * length the entries' total in bytes, so every offset and length check
     * is the flat MD's; onic_ptl_md_snapshot gives the caller's view back. */
    ptl_md_t         desc;
    ptl_handle_md_t  handle;
    ptl_unlink_t     unlink;
    ptl_size_t       local_offset;  /* advanced by operations without MANAGE_REMOTE */
    onic_ptl_me_t   *me;            /* NULL for a bound MD */
    onic_dlist_t     link;          /* in me->mds */
    unsigned         pending;       /* gets waiting for their reply */
    unsigned         inflight;      /* large puts not yet pulled, RMA into or out of it */
    /* me->md0: no table slot, no pool element of its own (1; 2 when
     * PtlMDUpdate gave it an I/O vector, whose copy its release frees). */
    int              embedded;
    uint32_t         niov;          /* PTL_MD_IOVEC: entries of iov */
    ptl_md_iovec_t  *iov;           /* PTL_MD_IOVEC: onic's copy of the vector; else NULL */
} onic_ptl_md_t;

/* Whether operations are under way on md (it cannot be unlinked or changed). */
static inline int onic_ptl_md_busy(const onic_ptl_md_t *md)
{
    return md->pending > 0 || md->inflight > 0;
}

/* The address at offset off of md, an MD without PTL_MD_IOVEC (an I/O
 * vector's bytes go through onic_ptl_md_store / _load / _seg). Integer
 * arithmetic: an MD spanning the whole address space starts at NULL
 * (PTL_SIZE_MAX). */
static inline char *onic_ptl_md_at(const onic_ptl_md_t *md, ptl_size_t off)
{
    return (char *)((uintptr_t)md->desc.start + (uintptr_t)off);
}

/* A large put or get this process started, until its DONE or reply: what
 * its completion reports, and the registration to drop then. */
typedef struct onic_ptl_large {
    int              get;
    uint32_t         target;
    ptl_handle_md_t  md;
    onic_ptl_rkey_t  key;
    ptl_pt_index_t   pt_index;
    ptl_match_bits_t match_bits;
    uint64_t         rlength, local_offset, hdr_data;
    /* An I/O vector MD's region in one piece, registered in its place (the
     * transport registers contiguous memory): a put's data gathered, a
     * get's landing place, scattered into the MD at the reply. Freed with
     * the record. */
    char            *bounce;
} onic_ptl_large_t;

struct onic_ptl_me {
    ptl_handle_me_t  handle;
    ptl_pt_index_t   pt_index;
    int              overflow;      /* in the portal's overflow list */
    ptl_process_id_t match_id;
    ptl_match_bits_t match_bits, ignore_bits;
    ptl_unlink_t     unlink;
    onic_mentry_t   *entry;         /* in the portal's matcher */
    onic_dlist_t     mds;           /* the first is the one considered */
    /* The first MD attached to an entry lives here, created and freed with
     * it (a posted receive is one object, as Portals 4 merged ME and MD).
     * Used once per entry, so its handle never names a later MD. */
    int              md0_used, md0_live;
    /* Posted by onic_ptl_recv_post and not changed since (no PtlMDUpdate,
     * no other MD attached): md0 alone, flat, threshold 1, puts only at
     * local offsets, both PTL_UNLINK -- the matcher's accept takes a short
     * way (target_first_md_takes). */
    int              oneshot;
    onic_ptl_md_t    md0;
};

/* A kept header of a put that landed in an overflow entry (the extension). */
typedef struct onic_ptl_ovf {
    ptl_ovf_header_t hdr;
} onic_ptl_ovf_t;

typedef struct onic_ptl_pt {
    onic_matcher_t *list;        /* the match list; created on first use */
    onic_matcher_t *overflow;    /* searched when the list takes nothing */
    onic_matcher_t *unexpected;  /* onic_ptl_ovf_t, oldest first */
    uint32_t        nlist, noverflow;
} onic_ptl_pt_t;

typedef struct onic_ptl_ace {
    int              admit;  /* 0: the entry denies everything */
    ptl_process_id_t id;
    ptl_uid_t        uid;
    ptl_jid_t        jid;
    ptl_pt_index_t   pt_index;
    /* Admits every process that can reach this NI (all of them are of its
     * job and user), on every portal: worked out when the entry is set, so
     * the usual message's access check is one load. */
    int              everyone;
} onic_ptl_ace_t;

/* An entry admitting id, uid and jid on pt_index, its everyone flag set. */
onic_ptl_ace_t onic_ptl_ace_make(const onic_ptl_ni_t *ni, ptl_process_id_t id, ptl_uid_t uid,
                                 ptl_jid_t jid, ptl_pt_index_t pt_index);

/* Why a message was discarded. PTL_SR_DROP_COUNT is their sum. */
typedef enum onic_ptl_drop {
    ONIC_PTL_DROP_MALFORMED,     /* header or sizes do not add up, unknown source */
    ONIC_PTL_DROP_PT_INDEX,      /* no such portal */
    ONIC_PTL_DROP_AC_INDEX,      /* no such ACL entry */
    ONIC_PTL_DROP_AC_DENIED,     /* the entry does not admit the initiator */
    ONIC_PTL_DROP_AC_PT,         /* the entry does not admit the portal */
    ONIC_PTL_DROP_NO_MATCH,      /* no entry whose first MD accepts */
    ONIC_PTL_DROP_NO_MEMORY,     /* an overflow header could not be kept */
    ONIC_PTL_DROP_ACK_EQ,        /* ack: its event queue is gone */
    ONIC_PTL_DROP_REPLY_MD,      /* reply: its MD is gone (or waits for none) */
    ONIC_PTL_DROP_REPLY_EQ_FULL, /* reply: its MD's event queue has no room */
    ONIC_PTL_DROP_REASONS
} onic_ptl_drop_t;

/* How an NI reaches the outside: the transport glue, or a test's capture. */
typedef struct onic_ptl_io {
    /* One message to dest. The NI checks before it calls, so send need not:
     * dest < ni->size, hdr_len <= sizeof(onic_ptl_wire_t), len <=
     * ni->max_inline, payload not NULL when len > 0. */
    onic_status_t (*send)(void *arg, uint32_t dest, const onic_ptl_wire_t *hdr, size_t hdr_len,
                          const void *payload, size_t len);
    /* Deliver what has arrived (to onic_ptl_ni_deliver), waiting up to
     * timeout_ns for something; the number delivered. */
    unsigned      (*progress)(void *arg, uint64_t timeout_ns);
    void          (*close)(void *arg);
    /* Optional, all three or none (no large puts and gets then). */
    onic_status_t (*mem_reg)(void *arg, void *addr, size_t len, onic_ptl_rkey_t *key_p);
    void          (*mem_dereg)(void *arg, const onic_ptl_rkey_t *key);
    /* Start an RMA read (write = 0) or write with the peer's region key; its
     * completion comes back through onic_ptl_ni_rma_done(ctx). */
    onic_status_t (*rma)(void *arg, uint32_t peer, int write, void *local,
                         const onic_ptl_rkey_t *key, uint64_t roffset, size_t len, void *ctx);
    /* Optional: rma with the local side in n pieces adding up to len (an
     * I/O vector MD's region), which it may change; ONIC_ERR_UNSUPPORTED
     * when it cannot now (nothing started: the target moves the pieces one
     * by one through rma). */
    onic_status_t (*rmav)(void *arg, uint32_t peer, int write, struct iovec *local, unsigned n,
                          const onic_ptl_rkey_t *key, uint64_t roffset, size_t len, void *ctx);
    /* Optional: whether rma with peer is one copy made by this side alone,
     * needing nothing of the peer (shm's cross-memory attach): what
     * PTL_MD_PUT_PULLED asks of the target's pull. NULL: never. */
    int           (*one_copy)(void *arg, uint32_t peer);
    /* Optional: open (on = 1) or end a bundle of sends (PtlStartBundle). */
    onic_status_t (*bundle)(void *arg, int on);
    /* Optional, all four or none: the NI runs in another process than the
     * memory and event queues it serves (the onload engine, which keeps one
     * NI per process). NULL: this process's own, reached directly.
     *   load: the len bytes at addr of the process, readable here, or NULL
     *         when they are not at hand (a put then goes large, by RMA);
     *   store: write len bytes to addr of the process;
     *   event: an event for the process's queue eq (its sequence set);
     *   md_gone: a bound MD is gone (the process keeps their addresses). */
    const void   *(*load)(void *arg, const void *addr, size_t len);
    void          (*store)(void *arg, void *addr, const void *data, size_t len);
    void          (*event)(void *arg, ptl_handle_eq_t eq, const ptl_event_t *ev);
    void          (*md_gone)(void *arg, ptl_handle_md_t md);
    /* Optional, both or neither: a sleep another thread can end
     * (onic_ptl_sleep_arm, post.h), onic_xport_sleep_arm's contract. */
    int           (*sleep_arm)(void *arg, uint32_t **word, uint32_t *val, uint64_t *max_ns);
    void          (*sleep_disarm)(void *arg);
} onic_ptl_io_t;

/* An event whose queue has a handler, waiting for the step that recorded it
 * to finish: handlers run when no object is half-way through an operation,
 * so one may unlink, free or put whatever it likes. */
typedef struct onic_ptl_handler_call {
    ptl_handle_eq_t eq;
    ptl_event_t     ev;
} onic_ptl_handler_call_t;
#define ONIC_PTL_HANDLER_QUEUE 8 /* a step records at most 3 events */

struct onic_ptl_ni {
    ptl_handle_ni_t      handle;
    uint32_t             rank, size;
    ptl_uid_t            uid;
    ptl_jid_t            jid;
    size_t               max_inline;   /* the largest payload of one message */
    ptl_ni_limits_t      limits;
    const char          *engine;       /* matching engine; NULL: ONIC_MATCH */
    onic_ptl_htab_t      mes, mds, eqs;
    onic_ptl_pt_t       *pt;           /* limits.max_pt_index + 1 */
    onic_ptl_ace_t      *acl;          /* limits.max_ac_index + 1 */
    uint64_t             drops[ONIC_PTL_DROP_REASONS];
    uint64_t             dropped;
    const onic_ptl_io_t *io;
    void                *io_arg;
    int                  in_progress;  /* an EQ handler must not poll again */
    int                  in_handler;   /* nor finalize the NI under its caller */
    onic_ptl_handler_call_t hq[ONIC_PTL_HANDLER_QUEUE];
    unsigned             hq_len;
    onic_dlist_t         rma_pending;  /* the target side's RMA under way */
    /* MEs and MDs come and go with every MPI receive: pools, not malloc. */
    onic_pool_t          me_pool, md_pool;
    /* Kept headers of unexpected puts (the overflow extension): one per
     * unexpected message, bounded by what senders may have outstanding. */
    onic_pool_t          ovf_pool;
    uint32_t             md0_live;     /* entries' own MDs: they count towards max_mds */
    onic_slots_t         large;        /* onic_ptl_large_t, by cookie */
    /* max_inline bytes, made at the first need: a get's reply gathered from
     * an I/O vector MD, a put's data from one. */
    char                *iov_buf;
    /* Puts placed ahead of their data (onic_ptl_target_place), one at most
     * per sender: made at the first, size entries. */
    struct onic_ptl_placed *placed;
};

typedef struct onic_ptl_ni_params {
    uint32_t             rank, size;
    ptl_uid_t            uid;
    ptl_jid_t            jid;
    size_t               max_inline;
    const char          *engine;
    const ptl_ni_limits_t *desired;    /* NULL: defaults */
    const onic_ptl_io_t *io;
    void                *io_arg;
} onic_ptl_ni_params_t;

/* Data into the NI's process's memory: a copy here, or through io->store.
 * Always inline: the target's straight line stores through it. */
static inline __attribute__((always_inline)) void onic_ptl_ni_store(onic_ptl_ni_t *ni, void *at, const void *data, size_t len)
{
    if (ni->io->store != NULL)
        ni->io->store(ni->io_arg, at, data, len);
    else
        onic_copy(at, data, len);
}

/* The handle of me's own MD: the entry's index and generation, marked. */
static inline uint64_t onic_ptl_md0_handle(uint64_t me_handle)
{
    return (me_handle & ~(UINT64_C(0xf) << 60)) | (uint64_t)ONIC_PTL_KIND_MD << 60 |
           (uint64_t)ONIC_PTL_GEN_MD0 << 24;
}

/* The live MD a handle names, in the MD table or inside its entry; NULL for
 * anything else. */
static inline onic_ptl_md_t *onic_ptl_md_get(const onic_ptl_ni_t *ni, uint64_t h)
{
    onic_ptl_me_t *me;

    if (!((h >> 24) & ONIC_PTL_GEN_MD0))
        return onic_ptl_htab_get(&ni->mds, h);
    if (onic_ptl_handle_kind(h) != ONIC_PTL_KIND_MD)
        return NULL;
    me = onic_ptl_htab_get(&ni->mes, (h & ~(UINT64_C(0xf) << 60) &
                                      ~((uint64_t)ONIC_PTL_GEN_MD0 << 24)) |
                                         (uint64_t)ONIC_PTL_KIND_ME << 60);
    return me != NULL && me->md0_live ? &me->md0 : NULL;
}

/* --- ni.c ------------------------------------------------------------------------ */
/* The process's Portals state. One NI: onic gives a process one interface. */
typedef struct onic_ptl_global {
    int            init;   /* PtlInit called, PtlFini not yet */
    onic_ptl_ni_t *ni;
    unsigned       epoch;  /* bumped by every NI, so old handles name nothing */
} onic_ptl_global_t;
/* Hidden (as onic_ptl_backend_g): read by every call, with no GOT load. */
extern onic_ptl_global_t onic_ptl_g __attribute__((visibility("hidden")));

/* The live NI for a handle of each kind, with the Portals code when there is
 * none (PTL_NO_INIT, or the kind's INVALID code). Inline: every public call
 * starts with one. */
static inline int onic_ptl_ni_of(ptl_handle_ni_t h, onic_ptl_ni_t **ni_p)
{
    if (!onic_ptl_g.init)
        return PTL_NO_INIT;
    if (onic_ptl_g.ni == NULL || h != onic_ptl_g.ni->handle)
        return PTL_NI_INVALID;
    *ni_p = onic_ptl_g.ni;
    return PTL_OK;
}

#define ONIC_PTL_OBJ_OF(_name, _type, _get, _invalid) \
    static inline int onic_ptl_##_name##_of(uint64_t h, onic_ptl_ni_t **ni_p, _type **obj_p) \
    { \
        _type *obj; \
        if (!onic_ptl_g.init) \
            return PTL_NO_INIT; \
        if (onic_ptl_g.ni == NULL || (obj = _get) == NULL) \
            return _invalid; \
        *ni_p = onic_ptl_g.ni; \
        *obj_p = obj; \
        return PTL_OK; \
    }
ONIC_PTL_OBJ_OF(me, onic_ptl_me_t, onic_ptl_htab_get(&onic_ptl_g.ni->mes, h), PTL_ME_INVALID)
ONIC_PTL_OBJ_OF(md, onic_ptl_md_t, onic_ptl_md_get(onic_ptl_g.ni, h), PTL_MD_INVALID)
/* A process polls the same one or two queues again and again: one compare. */
ONIC_PTL_OBJ_OF(eq, onic_ptl_eq_t, onic_ptl_htab_get_hinted(&onic_ptl_g.ni->eqs, h),
                PTL_EQ_INVALID)

/* The onload engine keeps one NI per process it serves and selects the one a
 * command is for; the public calls then act on it (NULL: none, so that
 * onic_ptl_ni_open makes another). Returns the NI selected before. */
onic_ptl_ni_t *onic_ptl_ni_select(onic_ptl_ni_t *ni);
/* Create the process's NI (PtlInit must have been called; PTL_IFACE_DUP if
 * there is one) on io; a Portals return code. PtlNIInit calls it with the
 * transport glue, tests with their own io. */
int  onic_ptl_ni_open(const onic_ptl_ni_params_t *p, ptl_ni_limits_t *actual,
                      ptl_handle_ni_t *ni_handle);
void onic_ptl_ni_clamp_limits(const ptl_ni_limits_t *desired, ptl_ni_limits_t *actual);
/* Let arrivals in (not from inside an EQ handler); how many arrived. */
unsigned onic_ptl_ni_progress(onic_ptl_ni_t *ni, uint64_t timeout_ns);
/* An arrival from the transport: run the target side, send what it answers. */
void onic_ptl_ni_deliver(onic_ptl_ni_t *ni, uint32_t src, const void *hdr, size_t hdr_len,
                         const void *payload, size_t len);
/* An RMA the target side asked for has finished: complete it, send what it
 * answers. */
void onic_ptl_ni_rma_done(onic_ptl_ni_t *ni, void *ctx, onic_status_t status);
/* The end of a put placed ahead of its data (onic_ptl_target_place):
 * onic_ptl_target_placed, and the ack it answers sent. */
void onic_ptl_ni_placed(onic_ptl_ni_t *ni, uint32_t src);
void onic_ptl_ni_drop(onic_ptl_ni_t *ni, onic_ptl_drop_t why);
/* Large operations this process started (large.c). add: a Portals code. */
int               onic_ptl_large_add(onic_ptl_ni_t *ni, uint64_t *cookie_p,
                                     onic_ptl_large_t **rec_p);
/* The live record a cookie from the wire names, started towards src; NULL
 * for anything else. */
onic_ptl_large_t *onic_ptl_large_find(onic_ptl_ni_t *ni, uint64_t cookie, uint32_t src);
void              onic_ptl_large_del(onic_ptl_ni_t *ni, onic_ptl_large_t *rec);
void              onic_ptl_large_init(onic_ptl_ni_t *ni);
void              onic_ptl_large_fini(onic_ptl_ni_t *ni);
int  onic_ptl_status_to_ptl(onic_status_t status);
/* {0, rank} or wildcards; 0 if not a process of this job. */
static inline int onic_ptl_id_valid(const onic_ptl_ni_t *ni, ptl_process_id_t id, int wildcards)
{
    int nid_ok = id.nid == 0 || (wildcards && id.nid == PTL_NID_ANY);
    int pid_ok = id.pid < ni->size || (wildcards && id.pid == PTL_PID_ANY);
    return nid_ok && pid_ok;
}
/* The matching key of a process id with wildcards. */
void onic_ptl_id_key(ptl_process_id_t id, uint64_t *id_p, uint64_t *ignore_p);

/* --- eq.c ---------------------------------------------------------------------- */
/* onic_ptl_eq_post for a queue with a handler or kept by another process. */
void     onic_ptl_eq_post_other(onic_ptl_eq_t *eq, ptl_event_t *ev);
/* Call the handlers of what the last step recorded (their queues may have
 * been freed since: then nothing). */
void     onic_ptl_eq_run_handlers(onic_ptl_ni_t *ni);
uint64_t onic_ptl_eq_room(const onic_ptl_eq_t *eq);

/* --- md.c ---------------------------------------------------------------------- */
/* The checks of a ptl_md_t: PTL_OK or the Portals code to return. */
int  onic_ptl_md_check(onic_ptl_ni_t *ni, const ptl_md_t *md, ptl_unlink_t unlink, const char *call);
/* onic_ptl_md_check, but a good I/O vector MD is ONIC_PTL_MD_IOVEC_OK (no
 * Portals code): PtlMEAttachSearch learns it in the test of the result it
 * makes anyway, so a flat MD's attach tests nothing more. */
#define ONIC_PTL_MD_IOVEC_OK (PTL_MAX_ERRNO + 1)
int  onic_ptl_md_check_flat(onic_ptl_ni_t *ni, const ptl_md_t *md, ptl_unlink_t unlink,
                            const char *call);
/* Whether another MD may be made: the table's own limit does not see the
 * entries' MDs, so both count. */
static inline int onic_ptl_md_room(const onic_ptl_ni_t *ni)
{
    return ni->mds.live + ni->md0_live < ni->mds.max;
}
/* A checked I/O vector desc made onic's: the vector copied (*iov_p, *niov_p,
 * onic_free'd with the MD), desc's start the copy and length its total. A
 * Portals code (PTL_NO_SPACE). */
int  onic_ptl_md_iov_copy(ptl_md_t *desc, ptl_md_iovec_t **iov_p, uint32_t *niov_p);
/* me's own MD (me has none yet), desc checked and not an I/O vector (whose
 * MD comes from the pool: onic_ptl_md_create), onic_ptl_md_room true. */
onic_ptl_md_t *onic_ptl_md_embed(onic_ptl_ni_t *ni, onic_ptl_me_t *me, const ptl_md_t *desc,
                                 ptl_unlink_t unlink);
/* The same with every field set but md->desc, which the caller writes. */
onic_ptl_md_t *onic_ptl_md_embed_fields(onic_ptl_ni_t *ni, onic_ptl_me_t *me, ptl_unlink_t unlink);
/* A new MD on me (NULL: bound); a Portals code. */
int  onic_ptl_md_create(onic_ptl_ni_t *ni, const ptl_md_t *desc, ptl_unlink_t unlink,
                        onic_ptl_me_t *me, onic_ptl_md_t **md_p);
/* Free md's handle and memory (an entry's own MD: mark its slot free). */
void onic_ptl_md_release(onic_ptl_ni_t *ni, onic_ptl_md_t *md);
/* Detach (and unlink the ME if that empties it and it says so) and free. */
void onic_ptl_md_destroy(onic_ptl_ni_t *ni, onic_ptl_md_t *md);

/* The small steps every message takes, inline (they were most of its
 * calls). */
/* Threshold 0, or with PTL_MD_MAX_SIZE less than max_size left. */
static inline __attribute__((always_inline)) int onic_ptl_md_used_up(const onic_ptl_md_t *md)
{
    if (md->desc.threshold == 0)
        return 1;
    return (md->desc.options & PTL_MD_MAX_SIZE) &&
           (md->local_offset > md->desc.length ||
            md->desc.length - md->local_offset < md->desc.max_size);
}

/* Whether md takes an incoming put or get of rlength bytes at roffset; if so
 * where (offset_p) and how much (mlength_p). Changes nothing. */
static inline int onic_ptl_md_accepts(const onic_ptl_md_t *md, unsigned op, uint64_t rlength,
                                      uint64_t roffset, uint64_t *offset_p, uint64_t *mlength_p)
{
    unsigned options = md->desc.options;
    uint64_t offset, room;

    if (onic_ptl_md_used_up(md))
        return 0;
    if (!(options & (op == ONIC_PTL_OP_PUT ? PTL_MD_OP_PUT : PTL_MD_OP_GET)))
        return 0;
    offset = (options & PTL_MD_MANAGE_REMOTE) ? roffset : md->local_offset;
    room = offset < md->desc.length ? md->desc.length - offset : 0;
    if ((options & PTL_MD_MAX_SIZE) && md->desc.max_size < room)
        room = md->desc.max_size;
    if (rlength > room && !(options & PTL_MD_TRUNCATE))
        return 0;
    *offset_p = offset;
    *mlength_p = rlength < room ? rlength : room;
    return 1;
}

/* Count one operation against the threshold (PtlPut and PtlGet count when
 * they start: a get's reply only completes it). */
static inline void onic_ptl_md_count(onic_ptl_md_t *md)
{
    if (md->desc.threshold > 0)
        md->desc.threshold--;
}

/* Count one incoming operation; the local offset advances by mlength unless
 * the MD manages offsets remotely. */
static inline void onic_ptl_md_consume(onic_ptl_md_t *md, uint64_t mlength)
{
    onic_ptl_md_count(md);
    if (!(md->desc.options & PTL_MD_MANAGE_REMOTE))
        md->local_offset += mlength;
}

/* Used up, PTL_UNLINK, and no get waiting for its reply (which would then
 * find no MD): time to unlink. */
static inline int onic_ptl_md_should_unlink(const onic_ptl_md_t *md)
{
    return md->unlink == PTL_UNLINK && !onic_ptl_md_busy(md) && onic_ptl_md_used_up(md);
}

/* The state an event reports (an I/O vector's length is its entries). */
static inline void onic_ptl_md_snapshot(const onic_ptl_md_t *md, ptl_md_t *out)
{
    *out = md->desc;
    if (__builtin_expect(md->desc.options & PTL_MD_IOVEC, 0))
        out->length = md->niov;
}

/* --- I/O vector MDs (md.c) -------------------------------------------------------
 * Out of line and cold: the flat MD's paths test the option they already
 * hold and never loop. off and len lie inside the MD (checked by the
 * caller, as for a flat one). */
/* The entry holding byte off of md, and off's place in it (*in_p). */
uint32_t onic_ptl_md_iov_find(const onic_ptl_md_t *md, uint64_t off, uint64_t *in_p);
/* len bytes of data into md at off, entry by entry (through io->store). */
void     onic_ptl_md_iov_store(onic_ptl_ni_t *ni, const onic_ptl_md_t *md, uint64_t off,
                               const void *data, size_t len);
/* len bytes of md at off into buf. */
void     onic_ptl_md_iov_load(const onic_ptl_md_t *md, uint64_t off, void *buf, size_t len);
/* The contiguous piece of md at off: its address, and how many of len
 * bytes it holds (*piece_p); for an MD without a vector, all of them. */
char    *onic_ptl_md_seg(const onic_ptl_md_t *md, uint64_t off, uint64_t len, uint64_t *piece_p);

/* Data into md at off: one copy into a flat MD, the vector's entries
 * otherwise. */
static inline void onic_ptl_md_store(onic_ptl_ni_t *ni, const onic_ptl_md_t *md, uint64_t off,
                                     const void *data, size_t len)
{
    if (__builtin_expect(md->desc.options & PTL_MD_IOVEC, 0))
        onic_ptl_md_iov_store(ni, md, off, data, len);
    else
        onic_ptl_ni_store(ni, onic_ptl_md_at(md, off), data, len);
}

/* Keep ev as it is (its sequence already set) in eq's ring, overwriting the
 * oldest when full. */
static inline void onic_ptl_eq_keep(onic_ptl_eq_t *eq, const ptl_event_t *ev)
{
    if (eq->tail - eq->head == eq->count) {
        eq->head++;
        eq->dropped = 1;
    }
    eq->ring[eq->tail & eq->mask] = *ev;
    eq->tail++;
}

/* The oldest event of eq: PTL_EQ_EMPTY, or PTL_OK or PTL_EQ_DROPPED (events
 * were overwritten since the last read). A read that empties the queue
 * starts it again at the ring's first slot: a queue that is drained as it
 * fills (MPI's) then writes the same few slots, which stay in cache,
 * instead of walking its whole ring (16 Ki events of 144 bytes, a cache
 * miss or two an event) -- unless PtlEQGetInPlace lent a slot since the
 * last restart, which stays valid until its next call. */
static inline int onic_ptl_eq_take(onic_ptl_eq_t *eq, ptl_event_t *event)
{
    int rc;

    if (eq->head == eq->tail)
        return PTL_EQ_EMPTY;
    *event = eq->ring[eq->head & eq->mask];
    if (++eq->head == eq->tail && !eq->lent)
        eq->head = eq->tail = 0;
    rc = eq->dropped ? PTL_EQ_DROPPED : PTL_OK;
    eq->dropped = 0;
    return rc;
}

/* onic_ptl_eq_take, the event left where it is (PtlEQGetInPlace) -- but
 * for the read that empties the queue, which copies it to *spare: the
 * queue starts again at its first slot (as above), which the next event
 * would overwrite while the caller still reads this one. A slot lent
 * earlier is the caller's until this call. */
static inline int onic_ptl_eq_take_inplace(onic_ptl_eq_t *eq, const ptl_event_t **event,
                                           ptl_event_t *spare)
{
    const ptl_event_t *ev;
    int rc;

    if (eq->head == eq->tail)
        return PTL_EQ_EMPTY;
    ev = &eq->ring[eq->head & eq->mask];
    if (++eq->head == eq->tail) {
        *spare = *ev;
        ev = spare;
        eq->head = eq->tail = 0;
        eq->lent = 0;
    } else {
        eq->lent = 1;
    }
    *event = ev;
    rc = eq->dropped ? PTL_EQ_DROPPED : PTL_OK;
    eq->dropped = 0;
    return rc;
}

/* Where eq's next event is written in place, or NULL when it must be built
 * and posted (a handler, or a queue another process keeps). Every field but
 * sequence is the caller's to fill, then onic_ptl_eq_commit. Overwrites the
 * oldest when full, as onic_ptl_eq_keep. */
static inline ptl_event_t *onic_ptl_eq_slot(onic_ptl_eq_t *eq)
{
    const onic_ptl_io_t *io = eq->ni->io;

    if (__builtin_expect((io != NULL && io->event != NULL) || eq->handler != PTL_EQ_HANDLER_NONE,
                         0))
        return NULL;
    if (eq->tail - eq->head == eq->count) {
        eq->head++;
        eq->dropped = 1;
    }
    return &eq->ring[eq->tail & eq->mask];
}

static inline void onic_ptl_eq_commit(onic_ptl_eq_t *eq, ptl_event_t *ev)
{
    ev->sequence = eq->seq++;
    eq->tail++;
}

/* Record ev (its sequence set here); overwrites the oldest when full. A
 * handler's call is queued for onic_ptl_eq_run_handlers. */
static inline void onic_ptl_eq_post(onic_ptl_eq_t *eq, ptl_event_t *ev)
{
    const onic_ptl_io_t *io = eq->ni->io;

    ev->sequence = eq->seq++;
    if (__builtin_expect((io != NULL && io->event != NULL) || eq->handler != PTL_EQ_HANDLER_NONE,
                         0)) {
        onic_ptl_eq_post_other(eq, ev);
        return;
    }
    onic_ptl_eq_keep(eq, ev);
}

/* The MD's live event queue, or NULL (none, or freed since). */
static inline onic_ptl_eq_t *onic_ptl_md_eq(onic_ptl_ni_t *ni, const onic_ptl_md_t *md)
{
    if (md->desc.eq_handle == PTL_EQ_NONE)
        return NULL;
    return onic_ptl_htab_get_hinted(&ni->eqs, md->desc.eq_handle);
}

/* --- me.c ---------------------------------------------------------------------- */
/* Remove from its list, free its MDs and itself. */
void onic_ptl_me_destroy(onic_ptl_ni_t *ni, onic_ptl_me_t *me);
void onic_ptl_pt_fini(onic_ptl_pt_t *pt);

/* --- initiator.c ------------------------------------------------------------------- */
/* A put whose arguments PtlPut / PtlPutRegion have checked (the MD usable,
 * the region inside it, target below ni->size, indexes within the NI's
 * limits, remote_offset below 2^48, a length the NI can move): nothing is
 * checked again below. An MD without event queue and data that fits one
 * message go in a straight line (header words written directly, no
 * message struct, no events); everything else -- events, acks, large
 * puts by RMA, an NI serving another process -- the general way. */
int  onic_ptl_put(onic_ptl_ni_t *ni, onic_ptl_md_t *md, ptl_size_t local_offset,
                  ptl_size_t length, ptl_ack_req_t ack_req, uint32_t target,
                  ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
                  ptl_size_t remote_offset, ptl_hdr_data_t hdr_data);

/* --- target.c: the target side --------------------------------------------------- */
/* What the target answers: at most one message back to the initiator. The
 * payload points into an MD and is valid until the NI is next used. */
typedef struct onic_ptl_out {
    int             send;
    uint32_t        dest;
    onic_ptl_wire_t hdr;
    size_t          hdr_len;
    const void     *payload;
    size_t          len;
    /* An RMA to start with dest (a large put's pull, a large get's push),
     * reported back with rma_ctx through onic_ptl_target_rma_done. */
    int             rma, rma_write;
    void           *rma_local;
    onic_ptl_rkey_t rma_key;
    uint64_t        rma_roffset;   /* into the key's region */
    size_t          rma_len;
    /* An I/O vector MD's whole region (rma_vlen bytes in rma_niov pieces),
     * to move in one io->rmav if it can; else rma_local and rma_len, its
     * first piece. NULL: no vector. */
    struct iovec   *rma_iov;
    unsigned        rma_niov;
    size_t          rma_vlen;
    void           *rma_ctx;
    /* A registration of this process's to drop (its large op is over). */
    int             dereg;
    onic_ptl_rkey_t dereg_key;
} onic_ptl_out_t;

/* One message from rank src (a header of hdr_len bytes and its payload):
 * checks, translation, delivery, events, and the answer in *out. Every
 * field is untrusted: anything malformed is a counted drop. */
void onic_ptl_target_recv(onic_ptl_ni_t *ni, uint32_t src, const void *hdr, size_t hdr_len,
                          const void *payload, size_t len, onic_ptl_out_t *out);
/* The straight line of onic_ptl_target_recv for a small put without ack
 * sent as its own 32 header bytes (target.c says what it takes): 0 not
 * taken, nothing changed; 1 taken, nothing to answer and no handler call
 * queued; 2 taken, *out holds the answer as onic_ptl_target_recv's. The NI
 * calls it first, so the common put skips the answer's bookkeeping. */
int  onic_ptl_target_put_small(onic_ptl_ni_t *ni, uint32_t src, const void *hdr,
                               const void *payload, size_t len, onic_ptl_out_t *out);
/* The RMA an answer asked for (out->rma_ctx) has finished with status: the
 * END events, an unlink that waited for it, and the DONE or reply in *out.
 * If it could not even start, the caller passes the reason as status. */
void onic_ptl_target_rma_done(onic_ptl_ni_t *ni, void *ctx, onic_status_t status,
                              onic_ptl_out_t *out);
/* A put from src whose header (hdr_len bytes) came ahead of its len bytes
 * of data, which the transport can write where the put goes (shm's
 * mid-size messages). 1: a receive that onic_ptl_recv_post made takes it
 * -- matched now, its MD counted and held as for a large put -- and the
 * first *room bytes of the data go to *dest, the rest is cut off;
 * onic_ptl_target_placed ends it. 0: nothing changed (anything else: an
 * unexpected message, a general entry or MD, a header to drop), the
 * message comes whole through onic_ptl_target_recv. */
int  onic_ptl_target_place(onic_ptl_ni_t *ni, uint32_t src, const void *hdr, size_t hdr_len,
                           size_t len, void **dest, size_t *room);
/* The data of src's placed put is in: its END event, its unlink, the ack
 * in *out if one is due. A src with no put placed is a counted drop. */
void onic_ptl_target_placed(onic_ptl_ni_t *ni, uint32_t src, onic_ptl_out_t *out);
/* Forget the RMA still under way and the puts placed (the NI is going). */
void onic_ptl_target_fini(onic_ptl_ni_t *ni);
/* The vector RMA an answer offered (out->rma_iov) is under way (whole 1:
 * it moves the region at once) or was refused (whole 0: its first piece
 * goes alone, the rest after it). */
void onic_ptl_target_rma_vector(void *ctx, int whole);

/* --- eq.c, shared with the onload back end ------------------------------------------ */
/* The checks of PtlEQPoll's arguments: PTL_OK or the code to return. */
int  onic_ptl_eq_poll_check(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout,
                            ptl_event_t *event);
#define ONIC_PTL_EQ_MAX_COUNT (UINT64_C(1) << 20)
/* 1 for an event count PtlEQAlloc takes; else 0, said. */
int  onic_ptl_eq_count_ok(ptl_size_t count);
/* eq's ring for count events (count and mask set too); NULL without memory. */
ptl_event_t *onic_ptl_eq_ring_alloc(onic_ptl_eq_t *eq, ptl_size_t count);

/* --- io_xport.c: the transport glue -------------------------------------------- */
/* The job id as a ptl_jid_t (never PTL_JID_NONE nor PTL_JID_ANY). */
ptl_jid_t onic_ptl_jid_of(const char *jobid);
/* The NI of this process on the job's transport (PtlNIInit). */
int onic_ptl_xport_ni_open(ptl_pid_t pid, const ptl_ni_limits_t *desired,
                           ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle);

#endif
