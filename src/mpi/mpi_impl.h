/* The MPI layer's internals: handle tables, objects, the envelope in the
 * match bits, the protocols' wire words, and the calls between the files of
 * src/mpi/. Everything below talks to the rest of onic only through
 * include/onic/portals.h (and the base utilities).
 *
 *   init.c      MPI_Init/Finalize
 *   error.c     error classes, messages, handlers, MPI_Abort
 *   handle.c    the handle tables
 *   comm.c      communicators, groups, context ids, attributes
 *   datatype.c  datatypes, pack and unpack
 *   p2p.c       the Portals setup, the protocols (eager, rendezvous), unexpected
 *               buffers and credits, progress, events, probe
 *   request.c   the MPI point-to-point calls, requests, wait and test
 *   coll.c      collectives on point-to-point, reduction operations
 *   win.c       windows: creation, attributes, names, synchronisation (rma.h)
 *   rma.c       one-sided operations and the protocol under them (rma.h)
 *   collv.c     the v-collectives, reduce-scatter, scans, user operations
 *   topo.c      process topologies: Cartesian, graph, distributed graph
 *   neighbor.c  the neighbourhood collectives (MPI_Neighbor_*, MPI_Ineighbor_*)
 *   misc.c      info objects, MPI_Alloc_mem, MPI_Pcontrol, status setters
 *   attr.c      attribute caching: keyvals, values, copy and delete callbacks
 *   probe.c     matched probe: messages taken out of matching, MPI_Mrecv
 *   icoll.c     non-blocking collectives: schedules of rounds, progressed
 *               by any call that progresses
 *   intercoll.c collectives on intercommunicators, MPI_Alltoallw
 *   thread.c    MPI_THREAD_MULTIPLE: the process's lock, and how a thread
 *               waits without holding it */
#ifndef ONIC_MPI_IMPL_H
#define ONIC_MPI_IMPL_H

#include <assert.h>
#include <mpi.h>
#include <onic/portals.h>
#include <stddef.h>
#include <stdint.h>
#include "base/list.h"
#include "base/lock.h"
#include "base/pool.h"

/* --- Handles -----------------------------------------------------------------
 * kind:4 (bits 26..29) | generation:6 (20..25) | index:20. Predefined objects
 * sit at fixed indexes with generation 0 (their values are in mpi.h); a slot's
 * generation moves on when it is freed, so a stale handle is refused. */
enum {
    ONIC_MPI_KIND_COMM  = 1,
    ONIC_MPI_KIND_GROUP = 2,
    ONIC_MPI_KIND_TYPE  = 3,
    ONIC_MPI_KIND_OP    = 4,
    ONIC_MPI_KIND_REQ   = 5,
    ONIC_MPI_KIND_ERRH  = 6,
    ONIC_MPI_KIND_INFO  = 7,
    ONIC_MPI_KIND_WIN   = 8,
    ONIC_MPI_KIND_MSG   = 9,
    ONIC_MPI_KIND_SESSION = 10,
};
#define ONIC_MPI_HANDLE_INDEX_MAX (1 << 20)

typedef struct onic_mpi_htab {
    void   **obj;
    /* By index: the handle of the slot's object, or of the next one it
     * holds (the generation moved on): handing one out is a load, checking
     * one a compare. */
    int     *hnd;
    int     *free;   /* stack of free indexes */
    int      nfree, used, cap, kind;
} onic_mpi_htab_t;

void  onic_mpi_htab_init(onic_mpi_htab_t *t, int kind);
void  onic_mpi_htab_fini(onic_mpi_htab_t *t);
/* A predefined object at a fixed index (generation 0). 0 or -1 (no memory). */
int   onic_mpi_htab_set(onic_mpi_htab_t *t, int index, void *obj);
/* A new handle for obj in *h; 0 or -1 (no memory, or the table is full).
 * The slow path of onic_mpi_htab_add, when no freed slot is there. */
int   onic_mpi_htab_add_new(onic_mpi_htab_t *t, void *obj, int *h);
/* The object, or NULL for anything that is not a live handle of t. Inline:
 * every call looks up a communicator, a datatype and requests. */
#define ONIC_MPI_HANDLE_KIND_SHIFT 26
#define ONIC_MPI_HANDLE_GEN_SHIFT  20
#define ONIC_MPI_HANDLE_GEN_MASK   0x3f
static inline void *onic_mpi_htab_get(const onic_mpi_htab_t *t, int h)
{
    int index = h & (ONIC_MPI_HANDLE_INDEX_MAX - 1);

    /* The slot's handle carries the table's kind and the generation (and
     * is positive): one compare checks them all. A free slot's object is
     * NULL, whatever handle it will give next. */
    if (index >= t->used || t->hnd[index] != h)
        return NULL;
    return t->obj[index];
}
static inline int onic_mpi_handle_make(int kind, unsigned gen, int index)
{
    return kind << ONIC_MPI_HANDLE_KIND_SHIFT |
           (int)((gen & ONIC_MPI_HANDLE_GEN_MASK) << ONIC_MPI_HANDLE_GEN_SHIFT) | index;
}

/* Inline, as get: a request's handle comes and goes with every message. */
static inline int onic_mpi_htab_add(onic_mpi_htab_t *t, void *obj, int *h)
{
    int index;

    if (__builtin_expect(t->nfree == 0, 0))
        return onic_mpi_htab_add_new(t, obj, h);
    index = t->free[--t->nfree];
    t->obj[index] = obj;
    *h = t->hnd[index];
    return 0;
}

/* Free the slot of a handle known to be live (an object's own, as it
 * goes): not looked up again. */
static inline void onic_mpi_htab_del_live(onic_mpi_htab_t *t, int h)
{
    int index = h & (ONIC_MPI_HANDLE_INDEX_MAX - 1);

    t->obj[index] = NULL;
    /* The next generation; past the last, 1 (0 marks the predefined
     * objects), not a carry into the kind. */
    if (__builtin_expect((h >> ONIC_MPI_HANDLE_GEN_SHIFT & ONIC_MPI_HANDLE_GEN_MASK) ==
                             ONIC_MPI_HANDLE_GEN_MASK, 0))
        t->hnd[index] = onic_mpi_handle_make(t->kind, 1, index);
    else
        t->hnd[index] = h + (1 << ONIC_MPI_HANDLE_GEN_SHIFT);
    t->free[t->nfree++] = index;
}

/* Free the slot of a live handle (anything else: nothing). */
static inline void onic_mpi_htab_del(onic_mpi_htab_t *t, int h)
{
    if (onic_mpi_htab_get(t, h) != NULL)
        onic_mpi_htab_del_live(t, h);
}

/* --- Objects --------------------------------------------------------------------- */
typedef struct onic_mpi_group {
    int  handle;
    int  size;
    int *world;        /* world rank of each group rank */
    int  refs;         /* handles and communicators that hold it */
    int  predefined;
} onic_mpi_group_t;

#define ONIC_MPI_MAX_CTX 4096 /* communicator ids a process can hold at once */

typedef struct onic_mpi_comm {
    int               handle;
    int               id;       /* context id: p2p context 2*id, collectives 2*id + 1 */
    int               rank, size;
    int               npeers;   /* peers->size: the ranks point-to-point may name */
    onic_mpi_group_t *group;    /* group->world maps ranks to Portals pids */
    /* Whom point-to-point ranks name: the group itself, or for an
     * intercommunicator (intercomm.c) the remote group. */
    onic_mpi_group_t *peers;
    /* An intercommunicator's local group as an intracommunicator of the
     * same id, not published: the intercommunicator's agreements and
     * collectives (intercoll.c) use its collectives. NULL for an
     * intracommunicator. */
    struct onic_mpi_comm *local;
    MPI_Errhandler    errh;
    /* A window's private communicator: the window (whose handler is errh,
     * given the window); else MPI_WIN_NULL. */
    int               win;
    int               predefined;
    struct onic_mpi_topo *topo; /* its process topology (topo.c), or NULL */
    char              name[MPI_MAX_OBJECT_NAME]; /* MPI_Comm_set_name; "" if none */
    struct onic_mpi_attr *attrs;  /* cached attributes (attr.c) */
    unsigned          icoll_seq; /* non-blocking collectives started on it (icoll.c) */
    /* After MPI_Comm_free with requests on it not yet ended: how many
     * (each marked ONIC_MPI_KEEP_COMM), and its place among such
     * communicators. The object and its context id go with the last
     * (comm.c, "Freeing"). */
    int               pending;
    int               reporting;  /* one ended with an error not yet reported */
    onic_dlist_t      freed_link;
    unsigned          asserts;    /* ONIC_MPI_ASSERT_*: what its info promised */
} onic_mpi_comm_t;

/* MPI 4.0's info assertions on a communicator (MPI_Comm_set_info,
 * MPI_Comm_dup_with_info; MPI_Comm_dup copies them). The two wildcard ones
 * are checked: a receive or probe with the wildcard promised away is
 * refused. */
enum {
    ONIC_MPI_ASSERT_NO_ANY_SOURCE    = 1u << 0,
    ONIC_MPI_ASSERT_NO_ANY_TAG       = 1u << 1,
    ONIC_MPI_ASSERT_EXACT_LENGTH     = 1u << 2,
    ONIC_MPI_ASSERT_ALLOW_OVERTAKING = 1u << 3,
};

/* One block of a datatype's element: `len` bytes at `off` from its start. */
typedef struct onic_mpi_block {
    ptrdiff_t off;
    size_t    len;
} onic_mpi_block_t;

/* The kinds of basic elements the reduction operations know. */
typedef enum onic_mpi_basic {
    ONIC_MPI_B_NONE = 0, /* a mix or no arithmetic: only transfer */
    ONIC_MPI_B_CHAR, ONIC_MPI_B_SCHAR, ONIC_MPI_B_UCHAR, ONIC_MPI_B_BYTE,
    ONIC_MPI_B_SHORT, ONIC_MPI_B_USHORT, ONIC_MPI_B_INT, ONIC_MPI_B_UINT,
    ONIC_MPI_B_LONG, ONIC_MPI_B_ULONG, ONIC_MPI_B_LLONG, ONIC_MPI_B_ULLONG,
    ONIC_MPI_B_FLOAT, ONIC_MPI_B_DOUBLE, ONIC_MPI_B_LDOUBLE,
    ONIC_MPI_B_INT8, ONIC_MPI_B_INT16, ONIC_MPI_B_INT32, ONIC_MPI_B_INT64,
    ONIC_MPI_B_UINT8, ONIC_MPI_B_UINT16, ONIC_MPI_B_UINT32, ONIC_MPI_B_UINT64,
    ONIC_MPI_B_FLOAT_INT, ONIC_MPI_B_DOUBLE_INT, ONIC_MPI_B_LONG_INT, ONIC_MPI_B_2INT,
    ONIC_MPI_B_SHORT_INT, ONIC_MPI_B_LDOUBLE_INT, ONIC_MPI_B_BOOL, ONIC_MPI_B_WCHAR,
    ONIC_MPI_B_AINT, ONIC_MPI_B_CFLOAT, ONIC_MPI_B_CDOUBLE, ONIC_MPI_B_CLDOUBLE,
    ONIC_MPI_B_COUNT
} onic_mpi_basic_t;

typedef struct onic_mpi_type {
    int               handle;
    const char       *name;      /* predefined: "MPI_INT" */
    size_t            size;      /* bytes of data in one element */
    ptrdiff_t         lb, extent;
    size_t            nblocks;   /* one element's data, merged where adjacent */
    onic_mpi_block_t *blocks;
    int               contig;    /* count elements are size*count bytes at lb... no gaps */
    int               committed;
    int               predefined;
    onic_mpi_basic_t  basic;     /* every element of this basic kind, or NONE */
    size_t            basic_size;
    int               refs;      /* the handle, and types built from it */
    /* Derived types (datatype.c). */
    ptrdiff_t         true_lb, true_extent; /* where the data is */
    size_t            align;     /* largest alignment of its basic types */
    int               bounded;   /* bounds set by MPI_Type_create_resized */
    size_t            blen;      /* every block this long (pack's fast path), or 0 */
    /* The signature as runs of basic elements of one size, for
     * MPI_Get_elements; NULL when too long to keep. */
    struct onic_mpi_sigrun *sig;
    size_t            nsig;
    size_t            nelems;    /* basic elements in one element */
    struct onic_mpi_envelope *env; /* how it was made (MPI_Type_get_contents) */
} onic_mpi_type_t;

typedef struct onic_mpi_sigrun {
    size_t esize, n;
} onic_mpi_sigrun_t;

/* --- Requests ---------------------------------------------------------------------- */
typedef enum {
    ONIC_MPI_REQ_SEND = 1,
    ONIC_MPI_REQ_RECV = 2,
    /* A non-blocking collective or MPI_Isendrecv(_replace): its schedule
     * completes it (icoll.c). */
    ONIC_MPI_REQ_COLL = 3,
    /* A generalized request (MPI_Grequest_start): the program completes it;
     * persistent is set, so req_finish's rare branch runs its callbacks. */
    ONIC_MPI_REQ_GREQ = 4,
} onic_mpi_req_kind_t;
typedef enum {
    ONIC_MPI_MODE_STANDARD = 0,
    ONIC_MPI_MODE_SYNC,      /* complete only once matched: always rendezvous */
    ONIC_MPI_MODE_BUFFERED,  /* from the attached buffer (an internal request) */
    ONIC_MPI_MODE_READY,
    ONIC_MPI_MODE_MATCHED,   /* a receive of the message a matched probe took (mt_hdr) */
} onic_mpi_mode_t;

typedef struct onic_mpi_bseg onic_mpi_bseg_t;

/* What a request's end keeps (its keep field): one word, so the wait's
 * one test of it sends every such case the slow way and an ordinary
 * request pays nothing. PERSISTENT: finished without freeing -- the
 * MPI_*_init requests, kept inactive after a wait, and a generalized
 * request (see its kind). COMM: its communicator was freed and waits for
 * its end (comm.c, "Freeing"). */
#define ONIC_MPI_KEEP_PERSISTENT 1
#define ONIC_MPI_KEEP_COMM       2

#define ONIC_MPI_HOLDS_PACK 0x1u
#define ONIC_MPI_HOLDS_BSEG 0x2u
#define ONIC_MPI_HOLDS_TYPE 0x4u

typedef struct onic_mpi_req {
    int                 handle;
    onic_mpi_req_kind_t kind;
    onic_mpi_mode_t     mode;
    int                 keep;       /* ONIC_MPI_KEEP_* */
    int                 active;     /* started and not yet completed by wait/test */
    int                 complete;   /* the operation is over (status is set) */
    int                 user_freed; /* MPI_Request_free while active: free at completion */
    int                 internal;   /* collectives' own: no user handle semantics */
    const char         *call;       /* the MPI call that made it, for messages */
    /* The operation as asked. */
    void               *buf;
    int                 count;
    onic_mpi_type_t    *type;
    int                 peer;       /* comm rank, MPI_ANY_SOURCE or MPI_PROC_NULL */
    int                 tag;
    onic_mpi_comm_t    *comm;
    int                 coll;       /* on the communicator's collective context */
    /* Where the data lives: the user's buffer, or a packed copy; NULL (with
     * bytes > 0) for a receive that lands in place through an I/O vector
     * MD over the type's blocks in buf (p2p.c, recv_in_place). */
    char               *data;
    size_t              bytes;      /* send: message bytes; recv: capacity */
    void               *pack;       /* owned packed buffer, or NULL */
    onic_mpi_bseg_t    *bseg;       /* buffered send: its segment of the attached buffer */
    /* ONIC_MPI_HOLDS_*: set whenever pack or bseg is, or the request holds
     * a reference to a derived type, so that a plain request's completion
     * and free test one byte, not three fields. */
    unsigned char       holds;
    /* Portals state. */
    ptl_handle_me_t     me;         /* posted receive / exposed rendezvous buffer */
    ptl_handle_md_t     md;         /* rendezvous: the get MD of a receive */
    /* Result. */
    MPI_Status          status;
    /* (Every field above is set by onic_mpi_req_new, one by one: a new
     * one is set there too.) */
    /* Rendezvous state, last: set where a rendezvous starts (send_start,
     * rndv_start), so a request that never takes one does not write it. */
    /* Rendezvous put whole (send side): its SEND_END not yet seen, and the
     * pull that finished, if one came first. */
    int                 sv_put_open, sv_pulled;
    uint64_t            sv_got;  /* bytes its gets have taken so far */
    /* Rendezvous pull (receive side). */
    uint32_t            rv_peer;    /* world rank of the sender */
    uint64_t            rv_cookie;
    uint64_t            rv_total;   /* what the sender has */
    uint64_t            rv_want;    /* what fits here */
    uint64_t            rv_issued;  /* bytes asked for */
    unsigned            rv_inflight; /* gets whose reply has not come */
    int                 rv_final_sent; /* the zero-byte get that ends a cut-short pull */
    /* MPI_Mrecv (mode MATCHED only): the header its probe took out of
     * matching, read when the receive starts. */
    const ptl_ovf_header_t *mt_hdr;
    /* A generalized request (kind GREQ only): the program's callbacks and
     * their argument. */
    MPI_Grequest_query_function  *gq_query;
    MPI_Grequest_free_function   *gq_free;
    MPI_Grequest_cancel_function *gq_cancel;
    void                         *gq_state;
} onic_mpi_req_t;

/* --- The envelope in the match bits ------------------------------------------------
 *   whole:1 (bit 63) | empty:1 (62) | context:14 (48..61) | source comm rank:24 (24..47) |
 *   tag:24 (0..23)
 * MPI_ANY_SOURCE ignores the source bits (and the match id is PTL_NID_ANY /
 * PTL_PID_ANY), MPI_ANY_TAG the tag bits. Contexts are below
 * 4 * ONIC_MPI_MAX_CTX = 2^14 (a communicator's two below 2^13, and
 * MPI_Comm_create_group's agreements above: comm.c), so the top two bits
 * are free. Whole marks a
 * rendezvous message put whole, empty a put of no data (an empty message
 * or a rendezvous request). Receives and header searches ignore both; the
 * overflow list sorts puts by them (p2p.c): a whole message's header is
 * kept without its data, an empty put's in an entry of its own, the others
 * go to the unexpected-message buffers, which, taking only those, can be
 * the list's first entries. */
#define ONIC_MPI_TAG_UB        ((1 << 24) - 1)
#define ONIC_MPI_RANK_MAX      ((1 << 24) - 1)
#define ONIC_MPI_BITS_TAG      UINT64_C(0xffffff)
#define ONIC_MPI_BITS_SRC      (UINT64_C(0xffffff) << 24)
#define ONIC_MPI_BITS_WHOLE    (UINT64_C(1) << 63)
#define ONIC_MPI_BITS_EMPTY    (UINT64_C(1) << 62)
static_assert(4 * ONIC_MPI_MAX_CTX <= 1 << 14, "every context leaves the top two bits clear");

static inline uint64_t onic_mpi_bits(unsigned ctx, unsigned src, unsigned tag)
{
    return (uint64_t)ctx << 48 | (uint64_t)src << 24 | tag;
}

/* --- The protocols' header data (the put's hdr_data) --------------------------------
 *   kind:2 (62..63) | rendezvous cookie:20 (42..61) | message length:42 (0..41)
 * EAGER: the data is the put's payload. RNDV: the sender's buffer is on its
 * portal ONIC_MPI_PT_RNDV with match bits = cookie; the put carries either
 * nothing (a request: the receiver pulls `length` bytes by PtlGet) or, with
 * ONIC_MPI_BITS_WHOLE, the whole message, which a posted receive takes
 * directly; kept in the overflow list it has no data and is pulled too. */
#define ONIC_MPI_HDR_EAGER     0u
#define ONIC_MPI_HDR_RNDV      1u
#define ONIC_MPI_LEN_MAX       ((UINT64_C(1) << 42) - 1)
#define ONIC_MPI_COOKIE_MASK   ((UINT64_C(1) << 20) - 1)

static inline uint64_t onic_mpi_hdr(unsigned kind, uint64_t cookie, uint64_t len)
{
    return (uint64_t)kind << 62 | (cookie & ONIC_MPI_COOKIE_MASK) << 42 | len;
}

/* Portal indexes. */
#define ONIC_MPI_PT_P2P     1  /* messages: posted receives, unexpected buffers */
#define ONIC_MPI_PT_RNDV    2  /* senders' buffers exposed for pulling */
#define ONIC_MPI_PT_CREDIT  3  /* credit returns for eager flow control */

/* The most one pull asks for in one get: Portals moves a get longer than a
 * message by the transport's RMA (one copy with CMA), so one get per
 * message up to this size, and ONIC_MPI_PULL_DEPTH of them in flight beyond.
 * A transport without RMA refuses such a get with PTL_FAIL, and the chunk
 * is halved until it fits (get_chunk). */
#define ONIC_MPI_GET_CHUNK  (16u << 20)
#define ONIC_MPI_PULL_DEPTH 8u

/* --- The process's state ------------------------------------------------------------ */
/* Unexpected eager data lands in buffers: each is one overflow entry whose
 * MD takes message after message (locally managed offset, max_size the eager
 * limit) until less than that is left, then unlinks; once every message in
 * it has been received it is posted again. The descriptor sits in the first
 * cache line of the buffer's own aligned allocation, so a message's address
 * finds its buffer (p2p.c). */
typedef struct onic_mpi_ubuf onic_mpi_ubuf_t;
struct onic_mpi_ubuf {
    uint64_t         landed;    /* bytes put into it since posted (PUT_END) */
    uint64_t         charged;   /* what those messages cost their senders in credit */
    uint64_t         consumed;  /* bytes of those messages received */
    int              linked;    /* in the overflow list (its UNLINK not yet seen) */
    onic_mpi_ubuf_t *next;      /* every buffer, to free them */
};

typedef struct onic_mpi_pulled onic_mpi_pulled_t;

typedef struct onic_mpi_state {
    /* The library: up (initialized) from the first MPI_Init or
     * MPI_Session_init to the end of the last MPI_Finalize or
     * MPI_Session_finalize (then finalized). */
    int              initialized, finalized, finalizing;
    int              world_state; /* MPI_Init: 0 not called, 1 called, 2 MPI_Finalize called */
    int              sessions;  /* live sessions (session.c) */
    int              thread_level;
    int              rank, size;       /* in the world */
    ptl_handle_ni_t  ni;
    ptl_handle_eq_t  eq;               /* operations: receives, pulls, credits */
    ptl_handle_eq_t  eq_unexp;         /* unexpected arrivals: only wakes a blocked probe */
    /* eq and eq_unexp in this process, read without their handles; both
     * NULL under a back end (onic_ptl_eq_find_local) */
    struct onic_ptl_eq *eqs_local[2];
    ptl_handle_md_t  zero_md;          /* zero bytes, for RTS and credit puts */
    ptl_handle_me_t  zero_me;          /* overflow: takes every zero-byte put */
    ptl_handle_me_t  whole_me;         /* overflow: keeps unexpected whole puts' headers */
    int              whole_off;        /* Portals refused a whole put: requests only */
    ptl_handle_me_t  credit_me;
    ptl_handle_md_t  all_md;           /* the whole address space: every eager send */
    onic_mpi_ubuf_t *ubufs;
    size_t           ubuf_size;        /* allocation and alignment, a power of two */
    size_t           ubuf_max;         /* largest message a buffer takes */
    /* A lower bound of the unexpected space sure to be free minus the credit
     * senders hold: kept >= 0, so no eager message ever finds no room. */
    int64_t          ubuf_slack;
    size_t           eager_limit;      /* lowered if Portals refuses an eager put's size */
    /* The eager limit, or ONIC_EAGER_PULL_MIN - 1 below it: longer messages
     * ask whether receives are posted (onic_mpi_p2p_send_eager_slow). */
    size_t           eager_quick;
    size_t           pull_min;         /* ONIC_EAGER_PULL_MIN */
    /* A blocking send, or a collective's own, is starting its request
     * (request.c): it never asks to be pulled (onic_mpi_p2p_send_eager_slow). */
    int              start_blocking;
    uint64_t         get_chunk;        /* ONIC_MPI_GET_CHUNK, or less (see there) */
    uint64_t         credits_per_peer; /* bytes of unexpected space per sender */
    uint64_t        *credits;          /* by world rank: eager bytes I may still send */
    uint64_t        *owed;             /* by world rank: consumed, not yet returned */
    uint64_t         next_cookie;
    onic_dlist_t     pulled;           /* headers taken out of Portals by probes */
    uint64_t         ctx_free[ONIC_MPI_MAX_CTX / 64];
    onic_dlist_t     ctx_claims;  /* onic_mpi_ctx_claim_t in progress (comm.c) */
    onic_mpi_htab_t  comms, groups, types, ops, reqs, errhs;
    onic_pool_t      req_pool;  /* a request per operation: no malloc per message */
    unsigned         starts_undrained;  /* operations started since the last drain */
    /* Sends drain every P2P_START_DRAIN starts too: only under onload
     * (p2p.c, onic_mpi_p2p_start says why inline sends never do). */
    int              drain_sends;
    /* A receive of a non-contiguous type of at most this many blocks lands
     * in place, through an I/O vector MD (ONIC_MPI_IOVEC_MAX; 0 under
     * onload, whose engine cannot read the vector). */
    size_t           iovec_max;
    /* Windows in shared memory (ONIC_MPI_WIN_SHM), and how a process waits
     * for one of their locks: spinning this long first (0: ONIC_WAIT
     * sleeps). */
    int              win_shm;
    uint64_t         wait_spin_ns;
    onic_mpi_comm_t *world;            /* MPI_COMM_WORLD's object, found without a table */
    int              bundle_open;       /* PtlStartBundle called, no PtlEndBundle since */
    /* MPI_Buffer_attach */
    char            *bbuf;
    size_t           bbuf_size;
    onic_dlist_t     bsegs;            /* by address */
} onic_mpi_state_t;

/* Hidden: read by every call, with no GOT load (nothing outside libonic
 * uses it). */
extern onic_mpi_state_t onic_mpi_g __attribute__((visibility("hidden")));

/* --- Threads (thread.c) ---------------------------------------------------------
 * Under MPI_THREAD_MULTIPLE every MPI call holds the process's lock
 * (ONIC_MPI_LOCKED, first line of each call), and a thread that waits gives
 * it up while it waits (onic_mpi_mt_pause), so a thread blocked in a
 * receive never keeps another from sending. At any lower level of
 * threads one word is read per call and nothing is locked. */
typedef struct onic_mpi_mt {
    onic_lock_t      lock;
    _Atomic int      on;       /* MPI_THREAD_MULTIPLE provided */
    /* Threads asleep in onic_mpi_mt_pause, and the word they sleep on: a
     * call that ends while some sleep moves it and wakes them (it may have
     * completed what they wait for). */
    _Atomic uint32_t sleepers;
    _Atomic uint32_t gen;
    /* The one sleeper, if any, asleep in the transport (where an arrival
     * wakes it): the word it sleeps on, which a call that ends moves too.
     * How many such sleeps there were, and how many ended by the word
     * moving rather than their timeout (tests read them). */
    _Atomic(uint32_t *) xword;
    _Atomic uint64_t xsleeps, xwoken;
} __attribute__((aligned(64))) onic_mpi_mt_t;

extern onic_mpi_mt_t onic_mpi_mt __attribute__((visibility("hidden")));

typedef onic_lock_t *onic_mpi_guard_t;

static inline onic_mpi_guard_t onic_mpi_enter(void)
{
    if (__builtin_expect(atomic_load_explicit(&onic_mpi_mt.on, memory_order_relaxed), 0)) {
        onic_lock_take(&onic_mpi_mt.lock);
        return &onic_mpi_mt.lock;
    }
    return NULL;
}

void onic_mpi_mt_leave(void);

static inline void onic_mpi_leave(onic_mpi_guard_t *g)
{
    if (__builtin_expect(*g != NULL, 0))
        onic_mpi_mt_leave();
}

/* The first line of an MPI call: holds the lock under MPI_THREAD_MULTIPLE
 * until the call returns, by whichever return. */
#define ONIC_MPI_LOCKED ONIC_MPI_GUARD_(onic_mpi_enter())
#define ONIC_MPI_GUARD_(_enter)                                                            \
    onic_mpi_guard_t onic_mpi_guard_ __attribute__((cleanup(onic_mpi_leave), unused)) = _enter

/* Provide thread level `required` from here on (init.c). */
void onic_mpi_thread_want(int required);
/* The first line of the hot calls (MPI_Send, MPI_Irecv, MPI_Waitall...):
 * below MPI_THREAD_MULTIPLE a load and a branch, where ONIC_MPI_LOCKED
 * keeps its guard to the call's end (10 to 15 instructions a message).
 * Under it, `_locked_call`: the call's work (inlined there too) holding
 * the lock. */
#define ONIC_MPI_LOCKED_VIA(_locked_call)                                                  \
    if (__builtin_expect(atomic_load_explicit(&onic_mpi_mt.on, memory_order_relaxed), 0))  \
        return _locked_call

/* The first line of ONIC_MPI_LOCKED_VIA's helpers, which run only under
 * MPI_THREAD_MULTIPLE: ONIC_MPI_LOCKED without looking at the level again
 * (a few instructions a message). */
static inline onic_mpi_guard_t onic_mpi_enter_mt(void)
{
    onic_lock_take(&onic_mpi_mt.lock);
    return &onic_mpi_mt.lock;
}

#define ONIC_MPI_LOCKED_MT ONIC_MPI_GUARD_(onic_mpi_enter_mt())

/* Start or stop MPI_THREAD_MULTIPLE (MPI_Init_thread, MPI_Finalize). */
void onic_mpi_mt_start(void);
void onic_mpi_mt_stop(void);
/* A blocking wait found nothing to do: under MPI_THREAD_MULTIPLE give the
 * lock up for one round of waiting (spin, yield, then sleep until another
 * thread's call ends or, with `arrivals`, a message arrives -- else up to
 * 100 us pass, to poll again); 0 otherwise, and the caller waits its own
 * way. arrivals: what the caller waits for comes through the transport
 * (events, messages); 0 when it comes from elsewhere (memory another
 * process writes), which no sleep in the transport would see. */
int  onic_mpi_mt_pause(int arrivals);
/* A waiting round of onic_mpi_progress(0) handled something: under
 * MPI_THREAD_MULTIPLE the wait starts afresh, sleeping threads wake (it
 * may be what they wait for) and a thread waiting for the lock gets it
 * first; nothing otherwise. */
void onic_mpi_mt_handled(void);
/* onic_mpi_progress(1) under MPI_THREAD_MULTIPLE. */
unsigned onic_mpi_mt_progress(void);

/* A kept unexpected header, taken out of Portals by a probe. */
struct onic_mpi_pulled {
    ptl_ovf_header_t hdr;
    onic_dlist_t     link;
};

struct onic_mpi_bseg {
    size_t       off, len;   /* in the attached buffer, overhead included */
    onic_dlist_t link;
};

/* --- error.c ---------------------------------------------------------------------- */
/* Report an error of class cls from call: the message names the call, this
 * rank and what to do; then the communicator's handler runs (comm NULL:
 * MPI_COMM_WORLD's): ERRORS_ARE_FATAL stops the job, ERRORS_RETURN returns
 * cls (MPI_ERR_INTERN for a cls of MPI_SUCCESS: never 0). */
int  onic_mpi_err_report(onic_mpi_comm_t *comm, int cls, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* What the compiler is told: the code is never MPI_SUCCESS, so a caller's
 * "check, return its error, else use what it set" needs no dummy
 * initialization (gcc -O3 otherwise warns that the outputs may be unset). */
static inline int onic_mpi_err_nonzero(int rc)
{
    if (rc == 0)
        __builtin_unreachable();
    return rc;
}
#define onic_mpi_err(...) onic_mpi_err_nonzero(onic_mpi_err_report(__VA_ARGS__))
/* The same to handler errh (a session's: session.c). */
int  onic_mpi_err_errh(MPI_Errhandler errh, int cls, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A Portals failure from call, as MPI_ERR_INTERN. */
int  onic_mpi_err_ptl(onic_mpi_comm_t *comm, const char *call, const char *what, int rc);
/* Before MPI_Init or after MPI_Finalize: the fatal report. */
_Noreturn int onic_mpi_err_state(const char *call);
void onic_mpi_errh_init(void);
/* What an error handler handle is: none (or freed), a predefined one, or
 * a program's for communicators or for windows (error.c). */
enum { ONIC_MPI_ERRH_NONE, ONIC_MPI_ERRH_PREDEFINED, ONIC_MPI_ERRH_COMM, ONIC_MPI_ERRH_WIN };
int  onic_mpi_errh_kind(MPI_Errhandler h);
/* MPI_Finalize: the handlers from MPI_Comm_create_errhandler. */
void onic_mpi_errh_fini(void);
_Noreturn void onic_mpi_die(int code);
/* This rank for a message: MPI's, else the launcher's (before MPI knows it), else "?". */
const char *onic_mpi_rank_str(void);

/* Argument checks shared by the calls: each returns MPI_SUCCESS or reports.
 * Checks that a call is allowed at all (MPI_Init done, not finalized). */
/* Bundles: a non-blocking send start (MPI_Isend, MPI_Start...) opens one
 * (PtlStartBundle), so that back-to-back sends to a peer may travel
 * together; any other MPI call but MPI_Irecv and MPI_Wtime ends it on
 * entry (PtlEndBundle), so a held message waits at most for the
 * application's next MPI call. What progress sends (credits, pulls) leaves
 * with the poll that ends every progress call. */
void onic_mpi_bundle_begin(void); /* unless one is open */
void onic_mpi_bundle_end(void);

/* The check of a call that starts operations: the bundle stays open. */
#define ONIC_MPI_CHECK_INIT_KEEP(_call) \
    do { \
        if (!onic_mpi_g.initialized || onic_mpi_g.finalized) \
            return onic_mpi_err_state(_call); \
    } while (0)

/* Every other call's: it ends the bundle. */
#define ONIC_MPI_CHECK_INIT(_call) \
    do { \
        ONIC_MPI_CHECK_INIT_KEEP(_call); \
        if (onic_mpi_g.bundle_open) \
            onic_mpi_bundle_end(); \
    } while (0)

/* --- comm.c ---------------------------------------------------------------------- */
int  onic_mpi_comm_init(void);
void onic_mpi_comm_fini(void);
/* The live communicator, or NULL after reporting MPI_ERR_COMM (*rc_p). */
onic_mpi_comm_t *onic_mpi_comm_get(MPI_Comm h, const char *call, int *rc_p);
/* The live communicator, or NULL (nothing reported): MPI_COMM_WORLD with no
 * table walk. Only between MPI_Init and MPI_Finalize. */
static inline onic_mpi_comm_t *onic_mpi_comm_lookup(MPI_Comm h)
{
    return h == MPI_COMM_WORLD ? onic_mpi_g.world : onic_mpi_htab_get(&onic_mpi_g.comms, h);
}
onic_mpi_group_t *onic_mpi_group_get(MPI_Group h);
/* comm.c's makers, shared with intercomm.c. A new group of size (one
 * reference, no handle), or NULL; drop a reference (none for NULL, as
 * free: error paths drop what they made without asking); a copy; a handle
 * for g (taken over; -1 if none is left). */
onic_mpi_group_t *onic_mpi_group_new(int size);
void onic_mpi_group_unref(onic_mpi_group_t *g);
onic_mpi_group_t *onic_mpi_group_copy(const onic_mpi_group_t *g);
int  onic_mpi_group_publish(onic_mpi_group_t *g, MPI_Group *h);
/* A communicator freed by MPI_Comm_free (comm.c, "Freeing"): one of its
 * requests (marked ONIC_MPI_KEEP_COMM) has ended; with the last, the
 * communicator goes, unless one ended with an error (`later`) that its
 * caller reports against it: the caller calls onic_mpi_comm_reap once it
 * has (and before it returns). */
void onic_mpi_comm_request_done(onic_mpi_comm_t *c, int later);
void onic_mpi_comm_reap(void);
/* A communicator object over g (not taken) with context id, unpublished. */
onic_mpi_comm_t *onic_mpi_comm_new(onic_mpi_group_t *g, int id, MPI_Errhandler errh);
/* The lowest context id free at every process of parent (collective). */
int  onic_mpi_comm_ctx_alloc(onic_mpi_comm_t *parent, const char *call, int *id_p);
/* The same among the members of g (a subset of parent's group, taken
 * over) alone, told apart from other such agreements on parent by tag
 * (MPI_Comm_create_group), or for a session (MPI_Comm_create_from_group,
 * parent the job: errors go to errh) by a tag of their own. */
int  onic_mpi_comm_ctx_alloc_group(onic_mpi_comm_t *parent, onic_mpi_group_t *g, int tag,
                                   int session, MPI_Errhandler errh, const char *call,
                                   int *id_p);
/* MPI_Comm_create_group's work (intercomm.c), c and g checked, this
 * process in g; for a session, errors to errh. */
int  onic_mpi_comm_create_group(onic_mpi_comm_t *c, onic_mpi_group_t *g, int tag, int session,
                                MPI_Errhandler errh, const char *call, MPI_Comm *newcomm);

/* An agreement on a context id in rounds (comm.c), MPI_Comm_idup's or a
 * blocking creation's: each round every process offers ids (holding them
 * from every other agreement until the round is settled) and the AND of
 * the offers is taken. An offer is ONIC_MPI_CTX_OFFER_WORDS words: the
 * ids' bitmap, then a word all ones if the offer holds every id this
 * process can give (the AND says whether every process's did). */
#define ONIC_MPI_CTX_WORDS       (ONIC_MPI_MAX_CTX / 64)
#define ONIC_MPI_CTX_OFFER_WORDS (ONIC_MPI_CTX_WORDS + 1)
#define ONIC_MPI_CLAIM_KEY       8
enum { ONIC_MPI_CLAIM_COLL, ONIC_MPI_CLAIM_GROUP, ONIC_MPI_CLAIM_SESSION,
       ONIC_MPI_CLAIM_INTERCOMM };
typedef struct onic_mpi_ctx_claim {
    onic_dlist_t link;   /* in onic_mpi_g.ctx_claims */
    /* The priority, compared word by word, the same at every process
     * taking part (ONIC_MPI_CLAIM_*): the parent's context id, the kind,
     * then the parent's collective number, or the tag of
     * MPI_Comm_create_group (MPI_Comm_create_from_group: its string
     * tag's hash); for MPI_Intercomm_create, whose groups have no parent
     * in common, each group's (local communicator's id, collective
     * number, leader's world rank), the group whose leader has the lower
     * world rank first, then the tag. */
    unsigned     key[ONIC_MPI_CLAIM_KEY];
    int          live;   /* its first round found no common id */
    uint64_t     held[ONIC_MPI_CTX_WORDS];
} onic_mpi_ctx_claim_t;
/* Registers a claim for parent's collective number seq (key: parent's id,
 * ONIC_MPI_CLAIM_COLL, seq; the caller may set another key before its
 * first offer). */
void onic_mpi_ctx_claim_begin(onic_mpi_ctx_claim_t *a, const onic_mpi_comm_t *parent,
                              unsigned seq);
/* A blocking claim's rounds until it settles (then ended): band(arg,
 * offer) makes each round's offer the AND of every process's; errors are
 * reported on errc. The id agreed in *id_p, or the error. */
int  onic_mpi_ctx_claim_rounds(onic_mpi_ctx_claim_t *a, onic_mpi_comm_t *errc,
                               int (*band)(void *arg, uint64_t *offer, const char *call),
                               void *arg, const char *call, int *id_p);
/* This process's offer for the claim's next round, into offer. */
void onic_mpi_ctx_offer(onic_mpi_ctx_claim_t *a, uint64_t *offer);
/* The AND of a round's offers: the id agreed (given back to the free ids,
 * for the caller to publish before anything else runs), -1 for another
 * round, -2 if there is none to agree on. */
int  onic_mpi_ctx_settle(onic_mpi_ctx_claim_t *a, const uint64_t *agreed);
/* Unregisters it; what it holds goes back. */
void onic_mpi_ctx_claim_end(onic_mpi_ctx_claim_t *a);
/* A handle for a communicator over g (taken over) with id, or
 * MPI_COMM_NULL where this process is not in g. */
int  onic_mpi_comm_publish(onic_mpi_comm_t *parent, onic_mpi_group_t *g, int id,
                           const char *call, MPI_Comm *newcomm);
/* The same, its errors (and the new communicator's) to errh. */
int  onic_mpi_comm_publish_errh(onic_mpi_group_t *g, int id, MPI_Errhandler errh,
                                const char *call, MPI_Comm *newcomm);
/* MPI_SUCCESS if every member of g is in c's (local) group, else the
 * error reported. */
int  onic_mpi_group_subset(onic_mpi_comm_t *c, const onic_mpi_group_t *g, const char *call);
/* A split's order: by key, then by rank in the parent (qsort). */
typedef struct onic_mpi_split_entry {
    int color, key, rank;
} onic_mpi_split_entry_t;
int  onic_mpi_comm_split_cmp(const void *a, const void *b);
/* intercomm.c: MPI_Comm_dup, MPI_Comm_split and MPI_Comm_create of an
 * intercommunicator ic (checked). */
int  onic_mpi_intercomm_dup(onic_mpi_comm_t *ic, const char *call, MPI_Comm *newcomm);
int  onic_mpi_intercomm_dup_as(onic_mpi_comm_t *ic, int id, const char *call, MPI_Comm *newcomm);
int  onic_mpi_intercomm_split(onic_mpi_comm_t *ic, int color, int key, MPI_Comm *newcomm);
int  onic_mpi_intercomm_create_sub(onic_mpi_comm_t *ic, onic_mpi_group_t *g, MPI_Comm *newcomm);
/* A duplicate of c with context id `id` (agreed by every member), its grid
 * and attributes copied: MPI_Comm_dup and MPI_Comm_idup. */
int  onic_mpi_comm_dup_as(onic_mpi_comm_t *c, int id, const char *call, MPI_Comm *newcomm);
static inline uint32_t onic_mpi_comm_world_rank(const onic_mpi_comm_t *c, int rank)
{
    return (uint32_t)c->peers->world[rank];
}

/* --- datatype.c ---------------------------------------------------------------------- */
int  onic_mpi_type_init(void);
void onic_mpi_type_fini(void);
onic_mpi_type_t *onic_mpi_type_get(MPI_Datatype h);
/* A committed type usable for communication, or NULL after reporting. */
onic_mpi_type_t *onic_mpi_type_check(MPI_Datatype h, onic_mpi_comm_t *comm, const char *call,
                                     int *rc_p);
/* The predefined types: fixed objects, MPI_CHAR + i at index i. */
#define ONIC_MPI_TYPE_NPREDEF 61
extern onic_mpi_type_t onic_mpi_type_predef[ONIC_MPI_TYPE_NPREDEF]
    __attribute__((visibility("hidden")));
/* A committed type usable for communication, or NULL (nothing reported):
 * a predefined one with no table walk. Only between MPI_Init and
 * MPI_Finalize. */
static inline onic_mpi_type_t *onic_mpi_type_lookup(MPI_Datatype h)
{
    unsigned i = (unsigned)h - (unsigned)MPI_CHAR;
    onic_mpi_type_t *t;

    if (i < ONIC_MPI_TYPE_NPREDEF)
        return &onic_mpi_type_predef[i];
    t = onic_mpi_htab_get(&onic_mpi_g.types, h);
    return t != NULL && t->committed ? t : NULL;
}
/* Operations under way keep a derived type alive after MPI_Type_free. */
void onic_mpi_type_ref(onic_mpi_type_t *t);
void onic_mpi_type_unref(onic_mpi_type_t *t);
/* Pack count elements at buf into out (type->size * count bytes). */
void onic_mpi_type_pack(const onic_mpi_type_t *t, const void *buf, int count, void *out);
/* Unpack the first `bytes` bytes of packed data into count elements at buf. */
void onic_mpi_type_unpack(const onic_mpi_type_t *t, const void *in, size_t bytes, void *buf,
                          int count);

/* --- p2p.c ---------------------------------------------------------------------- */
int  onic_mpi_p2p_init(void);
void onic_mpi_p2p_fini(void);
/* Handle what Portals reports: all of it (block 0), or wait (sleeping)
 * for something if nothing is there and handle what is at hand then, up to
 * a batch (block 1). The number of events handled. */
unsigned onic_mpi_progress(int block);
/* Start a request (send or receive) whose fields are filled; MPI_SUCCESS or
 * the class reported. A request that completes at once is complete here. */
int  onic_mpi_p2p_start(onic_mpi_req_t *r);
/* onic_mpi_p2p_start of a receive of a non-contiguous type that lands in
 * place (r->data NULL): an I/O vector MD over its blocks in r->buf. */
int  onic_mpi_p2p_recv_in_place(onic_mpi_req_t *r);
/* A blocking standard send of contiguous data without a request: sent
 * eagerly (MPI_SUCCESS, complete), an error, or ONIC_MPI_NOT_EAGER, when
 * the caller makes a request and starts it. (ONIC_MPI_PULL: what
 * onic_mpi_p2p_send_eager returns, asked by a send with a request, for a
 * message within the eager limit that its receiver is to pull.) */
#define ONIC_MPI_NOT_EAGER (-1)
#define ONIC_MPI_PULL      (-2)
int  onic_mpi_p2p_send_now(onic_mpi_comm_t *c, int peer, int tag, const void *data, size_t bytes,
                           const char *call);
/* A blocking receive of contiguous data (bytes at data) without a request,
 * if its message is already here: 1, copied and *status set (MPI_ERROR
 * included, not yet reported); 0, nothing taken: the caller makes a
 * request and starts it; ONIC_MPI_RECV_RNDV, a rendezvous message's
 * header taken into *h, which the caller receives as a matched message
 * (ONIC_MPI_MODE_MATCHED). */
#define ONIC_MPI_RECV_RNDV 2
int  onic_mpi_p2p_recv_now(onic_mpi_comm_t *c, int source, int tag, void *data, size_t bytes,
                           ptl_ovf_header_t *h, MPI_Status *status);

/* What an eager message costs its sender in credit at the receiver (p2p.c,
 * "Unexpected buffers and credits"): its length, at least
 * ONIC_MPI_CHARGE_MIN, which bounds the headers and events a sender's
 * credit causes. */
#define ONIC_MPI_CHARGE_MIN 64u
static inline uint64_t onic_mpi_charge(uint64_t length)
{
    return length < ONIC_MPI_CHARGE_MIN ? ONIC_MPI_CHARGE_MIN : length;
}

/* The eager put of a message to world rank dest: from the MD spanning all
 * memory, the buffer's address as the offset. A Portals code. */
static inline int onic_mpi_p2p_put_eager(const onic_mpi_comm_t *c, int coll, uint32_t dest,
                                         int tag, const void *data, size_t bytes)
{
    unsigned ctx = 2u * (unsigned)c->id + (unsigned)coll;
    ptl_process_id_t id = {0, dest};

    return PtlPutRegion(onic_mpi_g.all_md, (ptl_size_t)(uintptr_t)data, bytes, PTL_NOACK_REQ, id,
                        ONIC_MPI_PT_P2P, 0,
                        onic_mpi_bits(ctx, (unsigned)c->rank, (unsigned)tag) |
                            (uint64_t)(bytes == 0) << 62 /* ONIC_MPI_BITS_EMPTY */,
                        0, onic_mpi_hdr(ONIC_MPI_HDR_EAGER, 0, bytes));
}

int  onic_mpi_p2p_send_eager_slow(onic_mpi_comm_t *c, int coll, int peer, int tag,
                                  const void *data, size_t bytes, int may_pull, const char *call);
/* Portals refused an eager put (rc): the error reported, or, for a put
 * too long for the transport, the eager limit lowered and
 * ONIC_MPI_NOT_EAGER. */
int  onic_mpi_p2p_send_refused(onic_mpi_comm_t *c, size_t bytes, int rc, const char *call);

/* An eager put of bytes at data, if the message goes eager (standard or
 * ready mode, within the eager limit, credit left at the peer, and -- when
 * may_pull, for a send with a request -- not a mid-size message whose
 * sender has a receive posted): MPI_SUCCESS once sent (an eager send is
 * complete then), an MPI error, or ONIC_MPI_NOT_EAGER or ONIC_MPI_PULL for
 * the rendezvous protocols. Inline: with credit and within eager_quick, it
 * is the put and the credit taken; otherwise the slow path decides (see
 * there). */
static inline int onic_mpi_p2p_send_eager(onic_mpi_comm_t *c, int coll, int peer, int tag,
                                          const void *data, size_t bytes, int may_pull,
                                          const char *call)
{
    uint32_t dest = onic_mpi_comm_world_rank(c, peer);
    uint64_t charge = bytes > 0 ? onic_mpi_charge(bytes) : 0;
    int rc;

    if (__builtin_expect(bytes > onic_mpi_g.eager_quick || onic_mpi_g.credits[dest] < charge, 0))
        return onic_mpi_p2p_send_eager_slow(c, coll, peer, tag, data, bytes, may_pull, call);
    rc = onic_mpi_p2p_put_eager(c, coll, dest, tag, data, bytes);
    if (__builtin_expect(rc != PTL_OK, 0))
        return onic_mpi_p2p_send_refused(c, bytes, rc, call);
    onic_mpi_g.credits[dest] -= charge;
    return MPI_SUCCESS;
}
/* Cancel a receive that has not matched; 1 if it was cancelled. */
int  onic_mpi_p2p_cancel(onic_mpi_req_t *r);
/* Look for a matching message without receiving it. */
int  onic_mpi_p2p_iprobe(onic_mpi_comm_t *comm, int coll, int source, int tag, int *flag,
                         MPI_Status *status, const char *call);
/* Matched probe: take the oldest message matching (source, tag) on comm's
 * point-to-point context out of matching for good (*flag 1, its header in
 * *h_p), or *flag 0. MPI_SUCCESS or the error reported. */
int  onic_mpi_p2p_improbe(onic_mpi_comm_t *comm, int source, int tag, int *flag,
                          ptl_ovf_header_t *h_p, const char *call);
/* The status a probe of that message gives (MPI_ERROR left as it is:
 * onic_mpi_status_give). */
void onic_mpi_p2p_hdr_status(const ptl_ovf_header_t *h, MPI_Status *status);

/* --- request.c ---------------------------------------------------------------------- */
/* The status a call that completes one operation hands out (MPI_Recv,
 * MPI_Wait, MPI_Test, MPI_Waitany, MPI_Sendrecv, MPI_Mrecv, probes,
 * MPI_Request_get_status): every field but MPI_ERROR, which MPI 3.1
 * (3.2.5) lets only the calls returning several statuses write; the
 * call's return value says how the operation ended. */
static inline void onic_mpi_status_give(MPI_Status *dst, const MPI_Status *src)
{
    dst->MPI_SOURCE = src->MPI_SOURCE;
    dst->MPI_TAG = src->MPI_TAG;
    dst->onic_cancelled = src->onic_cancelled;
    dst->onic_count = src->onic_count;
}

onic_mpi_req_t *onic_mpi_req_new(onic_mpi_req_kind_t kind, const char *call);
void onic_mpi_req_free(onic_mpi_req_t *r);
/* The operation is over: status set. */
void onic_mpi_req_complete(onic_mpi_req_t *r);
/* MPI_Comm_free: mark every request on c that has not ended
 * ONIC_MPI_KEEP_COMM (each then tells c when it does); how many. */
int  onic_mpi_req_hold_comm(const onic_mpi_comm_t *c);
/* Internal (collectives): start a send or a receive on comm's collective
 * context and wait for it / for all of them. */
int  onic_mpi_coll_isend(const void *buf, int count, onic_mpi_type_t *t, int dest, int tag,
                         onic_mpi_comm_t *comm, onic_mpi_req_t **r_p);
int  onic_mpi_coll_irecv(void *buf, int count, onic_mpi_type_t *t, int src, int tag,
                         onic_mpi_comm_t *comm, onic_mpi_req_t **r_p);
int  onic_mpi_coll_waitall(int n, onic_mpi_req_t **reqs, const char *call);
/* A send (is_send 1) or receive started on comm's point-to-point context,
 * internal, for MPI_Isendrecv's schedule (icoll.c); tag is the user's. */
int  onic_mpi_req_sub_start(int is_send, const void *buf, int count, onic_mpi_type_t *t,
                            int peer, int tag, onic_mpi_comm_t *comm, const char *call,
                            onic_mpi_req_t **r_p);
/* A receive of count elements of t of the message h that a matched probe
 * took (source MPI_PROC_NULL: none, complete at once), started, with a
 * handle; *r_p is it. MPI_SUCCESS or the error reported. */
int  onic_mpi_req_mrecv(void *buf, int count, onic_mpi_type_t *t, onic_mpi_comm_t *comm,
                        int source, const ptl_ovf_header_t *h, const char *call,
                        onic_mpi_req_t **r_p);
/* MPI_Buffer_detach's wait; MPI_Finalize's detach. */
void onic_mpi_bsend_reap(void);

/* --- coll.c ---------------------------------------------------------------------- */
/* A user operation (MPI_Op_create). */
typedef struct onic_mpi_op {
    int                handle;
    MPI_User_function *fn;
    int                commute;
} onic_mpi_op_t;
/* An operation as a reduction applies it: a predefined one's code, or
 * ONIC_MPI_OP_USER and the user's function. */
#define ONIC_MPI_OP_USER 64
typedef struct onic_mpi_opd {
    int                code;
    MPI_User_function *fn;
    int                commute;
} onic_mpi_opd_t;
/* op defined on t (predefined: MPI 3.1, 5.9.2), or the error reported. */
int  onic_mpi_coll_op_check(MPI_Op h, onic_mpi_type_t *t, onic_mpi_comm_t *c, const char *call,
                            onic_mpi_opd_t *op_p);
/* io = in op io over `bytes` of packed elements of t, which do not
 * overlap (restrict: MPI makes an accumulate whose origin overlaps its
 * target erroneous). */
void onic_mpi_coll_apply(const onic_mpi_opd_t *op, const onic_mpi_type_t *t, const char *in,
                         char *io, size_t bytes);
/* The packed allreduce of acc (the result replaces it), combined in rank
 * order at every process (the same bits everywhere). */
int  onic_mpi_coll_allreduce(onic_mpi_comm_t *c, char *acc, size_t bytes, onic_mpi_type_t *t,
                             const onic_mpi_opd_t *op, const char *call);
/* The same with the input in src (not in acc yet; NULL: it is), which
 * acc may overlap: read as it is needed, not copied whole first. */
int  onic_mpi_coll_allreduce_from(onic_mpi_comm_t *c, const char *src, char *acc, size_t bytes,
                                  onic_mpi_type_t *t, const onic_mpi_opd_t *op,
                                  const char *call);
/* The packed reduction of acc (overwritten) to root, whose acc holds the
 * result; in rank order for an operation that does not commute. */
int  onic_mpi_coll_reduce(onic_mpi_comm_t *c, char *acc, size_t bytes, onic_mpi_type_t *t,
                          const onic_mpi_opd_t *op, int root, const char *call);
int  onic_mpi_coll_bcast(onic_mpi_comm_t *c, void *buf, int count, onic_mpi_type_t *t, int root,
                         const char *call);
/* The checks collectives share: the call allowed and comm live; a buffer
 * of count elements of type; a root. MPI_SUCCESS or the error reported. */
int  onic_mpi_coll_comm(MPI_Comm comm, const char *call, onic_mpi_comm_t **c_p);
/* Reduce-scatter-block's counts: recvcount for each of c's processes
 * (MPI_ERR_COUNT if negative); the caller frees them. */
int  onic_mpi_coll_block_counts(onic_mpi_comm_t *c, const char *call, int recvcount,
                                int **counts_p);
int  onic_mpi_coll_buf(onic_mpi_comm_t *c, const char *call, const char *what, const void *buf,
                       int count, MPI_Datatype type, onic_mpi_type_t **t_p);
int  onic_mpi_coll_root(onic_mpi_comm_t *c, const char *call, int root);
/* Allgather(v) on an intracommunicator, every block at once (collv.c):
 * this process's block (sendbuf, or MPI_IN_PLACE: its place in recvbuf)
 * to every other process, theirs into recvbuf -- recvcounts[i] elements
 * at displs[i], or with both NULL recvcount at i * recvcount. */
int  onic_mpi_coll_allgather_xchg(onic_mpi_comm_t *c, const void *sendbuf, int sendcount,
                                  onic_mpi_type_t *st, void *recvbuf, int recvcount,
                                  const int recvcounts[], const int displs[],
                                  onic_mpi_type_t *rt, const char *call);
/* Copy between two typed buffers of this process (via a packed copy). */
int  onic_mpi_coll_local_copy(onic_mpi_comm_t *c, const char *call, const void *src, int scount,
                              onic_mpi_type_t *st, void *dst, int rcount, onic_mpi_type_t *rt);

/* Where a reduction's packed input goes: a buffer of onic_malloc's or of
 * onic_mpi_scratch_get's, or the receive buffer itself where its elements
 * lie as packed ones do (a contiguous type), else a scratch buffer. */
enum { ONIC_MPI_ACC_MALLOC, ONIC_MPI_ACC_SCRATCH, ONIC_MPI_ACC_RECVBUF };
/* Whether ONIC_MPI_ACC_RECVBUF takes the receive buffer for `bytes` of t. */
static inline int onic_mpi_acc_in_recvbuf(const onic_mpi_type_t *t, size_t bytes)
{
    return t->contig && bytes > 0;
}
/* The checks of a reduction's arguments (root ignored for all); the input
 * packed into *acc_p of *bytes_p bytes, as `how` says (the caller frees a
 * buffer that is not the receive buffer; into the receive buffer, the
 * input is not copied: the caller reads it from the send buffer). */
int  onic_mpi_coll_reduce_begin(const char *call, MPI_Comm comm, const void *sendbuf,
                                void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                int root, int all, size_t max_bytes, onic_mpi_comm_t **c_p,
                                onic_mpi_type_t **t_p, onic_mpi_opd_t *op_p, char **acc_p,
                                size_t *bytes_p, int how);
/* A buffer of at least size bytes for a blocking call's packed copies, or
 * NULL (no memory): kept for the next call when given back with
 * onic_mpi_scratch_put, as a buffer malloc hands back to the kernel costs
 * a page fault per page at its next use (coll.c); called holding the MPI
 * lock. onic_mpi_scratch_fini frees what is kept. */
void *onic_mpi_scratch_get(size_t size);
void  onic_mpi_scratch_put(void *p);
void  onic_mpi_scratch_fini(void);
/* The send side's checks where check_send, the receive side's where
 * check_recv (the root's, or everyone's in the all- forms). */
int  onic_mpi_coll_sides(onic_mpi_comm_t *c, const char *call, const void *sendbuf,
                         int sendcount, MPI_Datatype sendtype, const void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, int check_send, int check_recv,
                         onic_mpi_type_t **st_p, onic_mpi_type_t **rt_p);

/* --- intercoll.c ---------------------------------------------------------------------- */
/* comm if it is a live intercommunicator (MPI initialized), else NULL and
 * nothing reported: the blocking collectives' way to the forms below. */
onic_mpi_comm_t *onic_mpi_coll_inter(MPI_Comm comm);
/* MPI_ROOT, MPI_PROC_NULL or a remote rank of ic, or MPI_ERR_ROOT
 * reported; *role_p: 1 the root, 0 the root's group (nothing to do), -1
 * the other group. */
int  onic_mpi_inter_root(onic_mpi_comm_t *ic, const char *call, int root, int *role_p);
/* One transfer with one peer: count elements of type at buf. */
typedef struct onic_mpi_pair {
    void            *buf;
    int              count;
    onic_mpi_type_t *type;
} onic_mpi_pair_t;
/* A collective made of one message per pair of processes, all posted at
 * once: send[i] to and recv[i] from peer i of n (type NULL: none), the
 * sends reading `copy` where MPI_IN_PLACE made one; the blocking forms post
 * them on `tag` and wait, the non-blocking ones (icoll.c) make them a
 * round of a schedule. */
typedef struct onic_mpi_plan {
    int              n, tag;
    onic_mpi_pair_t *send, *recv; /* one allocation, send's */
    char            *copy;
} onic_mpi_plan_t;
void onic_mpi_plan_free(onic_mpi_plan_t *p);
/* The collectives on an intercommunicator ic (MPI 3.1, 5.2.2): root is
 * MPI_ROOT, MPI_PROC_NULL or a remote rank; the v-forms' counts NULL for
 * the plain forms. MPI_SUCCESS or the error reported. Those taking a plan
 * run it when plan is NULL, else return it there, the caller's to run and
 * free (MPI_SUCCESS only). */
int  onic_mpi_inter_barrier(onic_mpi_comm_t *ic, const char *call);
int  onic_mpi_inter_bcast(onic_mpi_comm_t *ic, void *buf, int count, MPI_Datatype type,
                          int root, const char *call);
int  onic_mpi_inter_gather(onic_mpi_comm_t *ic, const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           int root, const char *call, onic_mpi_plan_t *plan);
int  onic_mpi_inter_scatter(onic_mpi_comm_t *ic, const void *sendbuf, int sendcount,
                            const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            const char *call, onic_mpi_plan_t *plan);
/* A reduction's checks at a process that sends (send 1: count elements
 * of sendbuf) or at the root, which only receives (recvbuf); MPI_IN_PLACE
 * refused. *t_p, *op_p: the type and the operation. */
int  onic_mpi_inter_reduce_check(onic_mpi_comm_t *ic, const char *call, int send,
                                 const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype type, MPI_Op op, onic_mpi_type_t **t_p,
                                 onic_mpi_opd_t *op_p);
int  onic_mpi_inter_reduce(onic_mpi_comm_t *ic, const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype type, MPI_Op op, int root, const char *call);
int  onic_mpi_inter_allreduce(onic_mpi_comm_t *ic, const void *sendbuf, void *recvbuf,
                              int count, const int counts[], MPI_Datatype type, MPI_Op op,
                              const char *call);
/* Reduce-scatter's counts (c->size of them, the local group's on an
 * intercommunicator) checked; *total_p their sum. */
int  onic_mpi_coll_rs_counts(onic_mpi_comm_t *c, const char *call, const int recvcounts[],
                             int *total_p);
int  onic_mpi_inter_reduce_scatter(onic_mpi_comm_t *ic, const void *sendbuf, void *recvbuf,
                                   const int recvcounts[], MPI_Datatype type, MPI_Op op,
                                   const char *call);
/* Post send[i] to and recv[i] from each of the n peers of c at once; wait. */
int  onic_mpi_coll_pairs(onic_mpi_comm_t *c, int n, const onic_mpi_pair_t *send,
                         const onic_mpi_pair_t *recv, int tag, const char *call);
/* Allgather(v) (gather: one send block for all) and alltoall(v, w) on an
 * intercommunicator, and MPI_Alltoallw on either kind: counts NULL for a
 * count each, displs NULL for blocks in order, types NULL for one type
 * (recvtypes given: displacements in bytes, as alltoallw's). */
int  onic_mpi_coll_alltoall_any(onic_mpi_comm_t *c, const char *call, int gather,
                                const void *sendbuf, int sendcount, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype,
                                const MPI_Datatype sendtypes[], void *recvbuf, int recvcount,
                                const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, const MPI_Datatype recvtypes[],
                                onic_mpi_plan_t *plan);

/* --- icoll.c ---------------------------------------------------------------------- */
/* Schedules not yet complete: progress advances them when non-zero. */
extern int onic_mpi_icoll_live __attribute__((visibility("hidden")));
/* Start every round whose previous one is over, in every live schedule;
 * complete the schedules that are done. Not reentered. */
void onic_mpi_icoll_progress(void);
/* MPI_Finalize: schedules never completed. */
void onic_mpi_icoll_fini(void);
/* MPI_Isendrecv(_replace), the arguments checked (request.c): the send and
 * the receive on comm's point-to-point context, started at once as a
 * schedule's one round; *request completes when both are over, with the
 * receive's status (and the first error). copy, if not NULL, is the
 * schedule's to free at its end (the packed data _replace sends).
 * MPI_SUCCESS or the error reported (copy freed). */
int  onic_mpi_icoll_sendrecv(onic_mpi_comm_t *c, const char *call, const void *sendbuf,
                             int sendcount, onic_mpi_type_t *st, int dest, int sendtag,
                             void *recvbuf, int recvcount, onic_mpi_type_t *rt, int source,
                             int recvtag, char *copy, MPI_Request *request);

/* --- probe.c ---------------------------------------------------------------------- */
/* MPI_Finalize: messages taken by a matched probe and never received. */
void onic_mpi_probe_fini(void);

/* --- collv.c ---------------------------------------------------------------------- */
/* MPI_Finalize: the user operations never freed. */
void onic_mpi_op_fini(void);

/* --- attr.c ---------------------------------------------------------------------- */
/* MPI_Comm_get_attr of a keyval that is not predefined. */
int  onic_mpi_attr_get(onic_mpi_comm_t *c, int keyval, void *attribute_val, int *flag);
/* MPI_Comm_dup: the copy callbacks; MPI_SUCCESS or the error reported. */
int  onic_mpi_attr_copy(onic_mpi_comm_t *from, onic_mpi_comm_t *to);
/* MPI_Comm_free: the delete callbacks; MPI_SUCCESS or a callback's code. */
int  onic_mpi_attr_delete_all(onic_mpi_comm_t *c);
/* Free what is left without callbacks (MPI_Finalize, failed dups). */
void onic_mpi_attr_release(onic_mpi_comm_t *c);
void onic_mpi_attr_fini(void);

/* --- init.c ---------------------------------------------------------------------- */
/* The library brought up by the first MPI_Init or MPI_Session_init (the
 * thread level asked for; what is provided is onic_mpi_g.thread_level),
 * and down by the last MPI_Finalize or MPI_Session_finalize: a barrier
 * over the job's processes first. */
int onic_mpi_lib_up(int required, const char *call);
int onic_mpi_lib_down(const char *call);

/* --- misc.c ---------------------------------------------------------------------- */
/* --- error.c ---------------------------------------------------------------------- */
/* MPI_LASTUSEDCODE: the highest error code, predefined or added. */
int  onic_mpi_err_lastused(void);

/* MPI_SUCCESS if h is a live info object (or MPI_INFO_NULL where
 * null_ok), else the error reported against c. */
int  onic_mpi_info_check(onic_mpi_comm_t *c, MPI_Info h, int null_ok, const char *call);
/* `asserts` changed by the assertions info (a checked info object or
 * MPI_INFO_NULL) sets or clears (misc.c). */
unsigned onic_mpi_info_asserts(MPI_Info info, unsigned asserts);
/* A receive's or probe's source and tag against c's assertions (comm.c):
 * MPI_SUCCESS, or the error reported. */
int  onic_mpi_asserts_check(onic_mpi_comm_t *c, int source, int tag, const char *call);
/* A new info object saying each assertion's value, as MPI_Comm_get_info. */
int  onic_mpi_info_of_asserts(unsigned asserts, MPI_Info *info);
/* Quiet forms for session.c: key's value of info h into val (len bytes):
 * 1 found, 0 not there (or key NULL: h checked only), -1 h is no live
 * info object. A new info holding
 * key = val (none if key is NULL) in *h: 0, or -1 (no memory). */
int  onic_mpi_info_value(MPI_Info h, const char *key, char *val, size_t len);
int  onic_mpi_info_make(MPI_Info *h, const char *key, const char *val);
/* The *_with_info forms' checks (comm.c): MPI is initialized, comm is a
 * communicator, info an info object or MPI_INFO_NULL; MPI_SUCCESS or the
 * error reported. */
int  onic_mpi_comm_hints_check(MPI_Comm comm, MPI_Info info, const char *call);
/* The allreduce (AND) of context-id masks behind every new communicator. */
int  onic_mpi_coll_band(onic_mpi_comm_t *comm, uint64_t *mask, int nwords, const char *call);
int  onic_mpi_coll_barrier(onic_mpi_comm_t *comm, const char *call);
/* A predefined reduction operation on t (reported if it is none or not
 * defined there); *op_p is what onic_mpi_op_apply takes: io = in op io
 * over `bytes` of packed elements of t's basic kind. */
int  onic_mpi_op_check(MPI_Op h, onic_mpi_type_t *t, onic_mpi_comm_t *c, const char *call,
                       int *op_p);
void onic_mpi_op_apply(int op, const onic_mpi_type_t *t, const void *in, void *io, size_t bytes);

/* --- win.c, rma.c (one-sided; their own header is rma.h) -------------------------------- */
/* MPI_Finalize: windows the program did not free, and the RMA state. */
void onic_mpi_rma_fini(void);

/* --- topo.c ---------------------------------------------------------------------- */
/* A communicator's process topology (MPI 3.1, chapter 7). */
typedef struct onic_mpi_topo {
    int  kind;                   /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART: dims and periods of ndims dimensions. */
    int  ndims;
    int *dims, *periods;
    /* MPI_GRAPH: the whole graph as MPI_Graph_create took it. */
    int  nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH: this process's edges only, in and out, with their
     * weights (1 each where the graph is unweighted). */
    int  indegree, outdegree, weighted;
    int *sources, *sweights, *dests, *dweights;
    int *mem;                    /* every array above: one allocation */
    size_t nmem;
} onic_mpi_topo_t;
void onic_mpi_topo_free(onic_mpi_topo_t *t);
/* A copy (MPI_Comm_dup keeps the topology), or NULL for no memory. */
onic_mpi_topo_t *onic_mpi_topo_dup(const onic_mpi_topo_t *t);
/* The neighbourhood of c's process for the neighbourhood collectives
 * (MPI 3.1, 7.6): whom it receives from (*nin of them, *in) and sends to
 * (*nout, *out), MPI_PROC_NULL for a Cartesian neighbour off the grid;
 * *alloc_p is the caller's to free (NULL if the lists are the topology's
 * own). MPI_ERR_TOPOLOGY reported if c has none. */
int  onic_mpi_topo_neighbors(onic_mpi_comm_t *c, const char *call, int *nin, const int **in,
                             int *nout, const int **out, int **alloc_p);

/* --- neighbor.c, icoll.c: the neighbourhood collectives ------------------------------- */
/* One transfer of a collective posted as one round: a send (send 1) or a
 * receive of count elements of type at buf with peer (MPI_PROC_NULL: none). */
typedef struct onic_mpi_xfer {
    int              send, peer, count;
    void            *buf;
    onic_mpi_type_t *type;
} onic_mpi_xfer_t;
/* The n transfers started in their order, on c's collective context, as a
 * non-blocking collective's one round; *request completes when all are
 * over. The types are kept alive meanwhile. MPI_SUCCESS or the error
 * reported. */
int  onic_mpi_icoll_xfers(onic_mpi_comm_t *c, const char *call, int n,
                          const onic_mpi_xfer_t *x, MPI_Request *request);

#endif
