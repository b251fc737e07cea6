/* The point-to-point calls: argument checks, requests (plain, persistent,
 * buffered, generalized), wait and test in all their forms, probe, cancel.
 * The protocols behind them are in p2p.c; MPI_Isendrecv's request is a
 * schedule of icoll.c's.
 *
 * A request is started (active), then complete (the operation is over and
 * its status set), then finished by a wait or test, which frees it, or,
 * for a persistent one, makes it inactive again. MPI_Request_free on an
 * active request lets it finish on its own and free itself. */
#include "mpi/mpi_impl.h"
#include "base/log.h"
#include "base/mem.h"

#include <stddef.h>
#include <string.h>

static void req_status_empty(MPI_Status *s)
{
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    s->onic_count = 0;
    s->onic_cancelled = 0;
}

/* MPI_Finalize tells pending requests from free ones by this field, which
 * the pool's free-list link must not overwrite (init.c, fini_pending). */
_Static_assert(offsetof(onic_mpi_req_t, active) >= sizeof(void *),
               "a free request's link overwrites its active field");

/* Every request passes here: every field up to the rendezvous state is
 * written once, field by field (a memset of them all, then the fields that
 * are not 0, wrote most of them twice; so did a request made empty and
 * then given its operation), that state where a rendezvous starts. A
 * handle only once the caller is given one (req_publish): blocking calls
 * and collectives never need one. */
static inline onic_mpi_req_t *req_new_op(onic_mpi_req_kind_t kind, onic_mpi_mode_t mode,
                                         const char *call, const void *buf, int count,
                                         onic_mpi_type_t *type, int peer, int tag,
                                         onic_mpi_comm_t *comm)
{
    onic_mpi_req_t *r = onic_pool_get(&onic_mpi_g.req_pool);

    if (r == NULL)
        return NULL;
    r->handle = MPI_REQUEST_NULL;
    r->kind = kind;
    r->mode = mode;
    r->keep = r->active = r->complete = r->user_freed = r->internal = 0;
    r->call = call;
    r->buf = (void *)buf;
    r->count = count;
    r->type = type;
    r->peer = peer;
    r->tag = tag;
    r->comm = comm;
    r->coll = 0;
    r->data = NULL;
    r->bytes = 0;
    r->pack = NULL;
    r->bseg = NULL;
    r->holds = 0;
    r->me = PTL_INVALID_HANDLE;
    r->md = PTL_INVALID_HANDLE;
    req_status_empty(&r->status);
    return r;
}

onic_mpi_req_t *onic_mpi_req_new(onic_mpi_req_kind_t kind, const char *call)
{
    return req_new_op(kind, ONIC_MPI_MODE_STANDARD, call, NULL, 0, NULL, 0, 0, NULL);
}

static __attribute__((noinline)) void bseg_release(onic_mpi_bseg_t *s)
{
    onic_dlist_del(&s->link);
    onic_free(s);
}

/* What a request holds besides itself (r->holds), let go. */
static __attribute__((cold, noinline)) void req_release_holds(onic_mpi_req_t *r)
{
    if (r->pack != NULL)
        onic_free(r->pack);
    if (r->bseg != NULL)
        bseg_release(r->bseg);
    if (r->type != NULL && !r->type->predefined)
        onic_mpi_type_unref(r->type);
}

void onic_mpi_req_free(onic_mpi_req_t *r)
{
    r->active = 0; /* not pending, for MPI_Finalize's walk of the pool */
    if (__builtin_expect(r->holds != 0, 0))
        req_release_holds(r);
    if (r->handle != MPI_REQUEST_NULL)
        onic_mpi_htab_del_live(&onic_mpi_g.reqs, r->handle);
    onic_pool_put(&onic_mpi_g.req_pool, r);
}

/* A request nobody waits for has completed: it goes, and tells its
 * communicator if that was freed meanwhile. Out of line (but not marked
 * cold, which moved MPI_Recv's code about): every completion passes the
 * test that leads here, and instr.py counts the same as without it. */
static __attribute__((noinline)) void req_end_freed(onic_mpi_req_t *r)
{
    onic_mpi_comm_t *c = r->comm;
    int keep = r->keep;

    if (r->status.MPI_ERROR != MPI_SUCCESS)
        onic_warn("mpi: rank %d: a freed request of %s ended with error %d; nobody will "
                  "see it", onic_mpi_g.rank, r->call, r->status.MPI_ERROR);
    r->active = 0;
    onic_mpi_req_free(r);
    if (keep & ONIC_MPI_KEEP_COMM)
        onic_mpi_comm_request_done(c, 0);
}

void onic_mpi_req_complete(onic_mpi_req_t *r)
{
    r->complete = 1;
    /* A send's data has left; a receive's is unpacked by now. */
    if (__builtin_expect(r->holds & (ONIC_MPI_HOLDS_PACK | ONIC_MPI_HOLDS_BSEG), 0)) {
        onic_free(r->pack);
        r->pack = NULL;
        if (r->bseg != NULL)
            bseg_release(r->bseg);
        r->bseg = NULL;
        r->holds &= ~(ONIC_MPI_HOLDS_PACK | ONIC_MPI_HOLDS_BSEG);
    }
    if (r->user_freed)
        req_end_freed(r);
}

typedef struct req_hold {
    const onic_mpi_comm_t *comm;
    int                    n;
} req_hold_t;

/* A pending request without a handle that frees itself (a buffered send,
 * one whose MPI_Request_free came before its end): a free element is
 * inactive, its other fields are not read (init.c, fini_pending). */
static void req_hold_one(void *elem, void *arg)
{
    onic_mpi_req_t *r = elem;
    req_hold_t *h = arg;

    if (r->active && !r->complete && r->handle == MPI_REQUEST_NULL && !r->internal &&
        r->comm == h->comm) {
        r->keep |= ONIC_MPI_KEEP_COMM;
        h->n++;
    }
}

/* Those that have not ended: every request with a handle (active,
 * complete but not waited for, persistent), and those without one that
 * free themselves, found by a walk of the pool (as MPI_Finalize finds
 * what is pending: no list costs a message a link). A collective's own
 * transfers are not counted: its request, which outlives its schedule,
 * is. */
int onic_mpi_req_hold_comm(const onic_mpi_comm_t *c)
{
    const onic_mpi_htab_t *t = &onic_mpi_g.reqs;
    req_hold_t h = {c, 0};

    for (int i = 0; i < t->used; i++) {
        onic_mpi_req_t *r = t->obj[i];
        if (r != NULL && r->comm == c) {
            r->keep |= ONIC_MPI_KEEP_COMM;
            h.n++;
        }
    }
    onic_pool_each(&onic_mpi_g.req_pool, req_hold_one, &h);
    return h.n;
}

/* Put the data where the protocols want it and start. */
static int req_start(onic_mpi_req_t *r)
{
    onic_mpi_type_t *t = r->type;
    size_t bytes = t->size * (size_t)r->count;
    int rc;

    r->active = 1;
    /* A new request is as a start leaves it; a persistent one may be done. */
    if (r->keep & ONIC_MPI_KEEP_PERSISTENT) {
        r->complete = 0;
        req_status_empty(&r->status);
    }
    if (r->peer == MPI_PROC_NULL) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        onic_mpi_req_complete(r);
        return MPI_SUCCESS;
    }
    r->bytes = bytes;
    if (r->bseg == NULL) {
        if (t->contig || bytes == 0) {
            r->data = bytes == 0 ? r->buf : (char *)r->buf + t->blocks[0].off;
        } else if (r->kind == ONIC_MPI_REQ_RECV &&
                   t->nblocks * (size_t)r->count <= onic_mpi_g.iovec_max) {
            /* Few blocks: the receive lands in place through an I/O vector
             * MD over them (p2p.c, recv_in_place), no packed copy. */
            r->data = NULL;
            rc = onic_mpi_p2p_recv_in_place(r);
            goto started;
        } else {
            if ((r->pack = onic_malloc(bytes)) == NULL) {
                r->active = 0;
                return onic_mpi_err(r->comm, MPI_ERR_NO_MEM, r->call, "no memory to pack "
                                    "%zu bytes of a non-contiguous datatype", bytes);
            }
            r->holds |= ONIC_MPI_HOLDS_PACK;
            if (r->kind == ONIC_MPI_REQ_SEND)
                onic_mpi_type_pack(t, r->buf, r->count, r->pack);
            r->data = r->pack;
        }
    }
    rc = onic_mpi_p2p_start(r);
started:
    if (rc != MPI_SUCCESS && !r->complete) {
        r->active = 0;
        onic_free(r->pack);
        r->pack = NULL;
        r->holds &= ~ONIC_MPI_HOLDS_PACK;
    }
    return rc;
}

/* --- Argument checks ---------------------------------------------------------------- */
typedef struct req_args {
    onic_mpi_comm_t *comm;
    onic_mpi_type_t *type;
} req_args_t;

/* The arguments of a call that starts an operation: the bundle stays open. */
static int req_check_start(const char *call, int is_send, const void *buf, int count,
                           MPI_Datatype datatype, int peer, int tag, MPI_Comm comm,
                           req_args_t *a)
{
    int rc;

    ONIC_MPI_CHECK_INIT_KEEP(call);
    if ((a->comm = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (count < 0)
        return onic_mpi_err(a->comm, MPI_ERR_COUNT, call, "count %d is negative; pass the "
                            "number of elements, 0 or more", count);
    if ((a->type = onic_mpi_type_check(datatype, a->comm, call, &rc)) == NULL)
        return rc;
    /* MPI_BOTTOM (NULL) is a buffer for a type of absolute addresses
     * (MPI_Get_address): refused only where the data would start in the
     * first page, which no such type names. */
    if (buf == NULL && count > 0 && a->type->size > 0 && a->type->true_lb < 4096)
        return onic_mpi_err(a->comm, MPI_ERR_BUFFER, call, "buf is NULL with count %d; pass "
                            "a buffer of the message's size (or MPI_BOTTOM with a type of "
                            "absolute addresses)", count);
    if (a->type->size * (size_t)count > ONIC_MPI_LEN_MAX)
        return onic_mpi_err(a->comm, MPI_ERR_COUNT, call, "%d elements of %zu bytes: onic "
                            "moves at most 2^42 bytes in one message", count, a->type->size);
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= a->comm->npeers) &&
        (is_send || peer != MPI_ANY_SOURCE))
        return onic_mpi_err(a->comm, MPI_ERR_RANK, call, "%s %d is not a rank of the "
                            "communicator (0 to %d%s, or MPI_PROC_NULL)",
                            is_send ? "dest" : "source", peer, a->comm->npeers - 1,
                            is_send ? "" : ", MPI_ANY_SOURCE");
    if ((tag < 0 || tag > ONIC_MPI_TAG_UB) && (is_send || tag != MPI_ANY_TAG))
        return onic_mpi_err(a->comm, MPI_ERR_TAG, call, "tag %d is outside 0 to %d (MPI_TAG_UB)"
                            "%s", tag, ONIC_MPI_TAG_UB, is_send ? "" : " and not MPI_ANY_TAG");
    if (!is_send)
        return onic_mpi_asserts_check(a->comm, peer, tag, call);
    return MPI_SUCCESS;
}

/* ... of any other call: it ends the bundle. */
static int req_check(const char *call, int is_send, const void *buf, int count,
                     MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, req_args_t *a)
{
    if (onic_mpi_g.bundle_open)
        onic_mpi_bundle_end();
    return req_check_start(call, is_send, buf, count, datatype, peer, tag, comm, a);
}

static onic_mpi_req_t *req_make(onic_mpi_req_kind_t kind, onic_mpi_mode_t mode, const char *call,
                                const void *buf, int count, const req_args_t *a, int peer,
                                int tag, int *rc_p)
{
    onic_mpi_req_t *r = req_new_op(kind, mode, call, buf, count, a->type, peer, tag, a->comm);

    if (r == NULL) {
        *rc_p = onic_mpi_err(a->comm, MPI_ERR_NO_MEM, call, "no memory for a request");
        return NULL;
    }
    if (!a->type->predefined) {
        onic_mpi_type_ref(a->type);
        r->holds = ONIC_MPI_HOLDS_TYPE;
    }
    return r;
}

/* Give r the handle its caller will hold. */
static int req_publish(onic_mpi_req_t *r, const char *call)
{
    if (onic_mpi_htab_add(&onic_mpi_g.reqs, r, &r->handle) != 0) {
        r->handle = MPI_REQUEST_NULL;
        return onic_mpi_err(r->comm, MPI_ERR_NO_MEM, call, "no memory for a request handle");
    }
    return MPI_SUCCESS;
}

/* A non-blocking start whose arguments are checked. */
static int req_immediate_checked(onic_mpi_req_kind_t kind, onic_mpi_mode_t mode,
                                 const char *call, const void *buf, int count,
                                 const req_args_t *a, int peer, int tag, MPI_Request *request)
{
    onic_mpi_req_t *r;
    int rc;

    if (kind == ONIC_MPI_REQ_SEND)
        onic_mpi_bundle_begin();
    if ((r = req_make(kind, mode, call, buf, count, a, peer, tag, &rc)) == NULL)
        return rc;
    if ((rc = req_publish(r, call)) != MPI_SUCCESS || (rc = req_start(r)) != MPI_SUCCESS) {
        onic_mpi_req_free(r);
        return rc;
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

static int req_immediate(onic_mpi_req_kind_t kind, onic_mpi_mode_t mode, const char *call,
                         const void *buf, int count, MPI_Datatype datatype, int peer, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    req_args_t a;
    int rc = req_check_start(call, kind == ONIC_MPI_REQ_SEND, buf, count, datatype, peer, tag,
                             comm, &a);

    if (rc != MPI_SUCCESS)
        return rc;
    if (request == NULL)
        return onic_mpi_err(a.comm, MPI_ERR_ARG, call, "request is NULL; pass where to store "
                            "the request");
    return req_immediate_checked(kind, mode, call, buf, count, &a, peer, tag, request);
}

/* The common send's or receive's checks in one test: initialized, a live
 * communicator, a committed type, count >= 0 and a buffer, a size onic
 * moves, a peer in the communicator and a tag in range (a receive's may
 * also be MPI_ANY_SOURCE and MPI_ANY_TAG). An operation that fails it
 * (MPI_PROC_NULL too) goes the general way, which checks again and says
 * what was wrong. */
/* always_inline: one more test made gcc call it out of line (40 more
 * instructions a message in MPI_Irecv and MPI_Isend). */
static inline __attribute__((always_inline)) int req_args_ok(int is_send, const void *buf,
                                                             int count, MPI_Datatype datatype,
                                                             int peer, int tag, MPI_Comm comm,
                                                             req_args_t *a)
{
    return __builtin_expect(onic_mpi_g.initialized && !onic_mpi_g.finalized, 1) &&
           (a->comm = onic_mpi_comm_lookup(comm)) != NULL &&
           (a->type = onic_mpi_type_lookup(datatype)) != NULL && count >= 0 &&
           (buf != NULL || count == 0 || a->type->size == 0) &&
           a->type->size * (size_t)count <= ONIC_MPI_LEN_MAX &&
           ((unsigned)peer < (unsigned)a->comm->npeers ||
            (!is_send && peer == MPI_ANY_SOURCE &&
             !(a->comm->asserts & ONIC_MPI_ASSERT_NO_ANY_SOURCE))) &&
           ((unsigned)tag <= ONIC_MPI_TAG_UB ||
            (!is_send && tag == MPI_ANY_TAG && !(a->comm->asserts & ONIC_MPI_ASSERT_NO_ANY_TAG)));
}

/* --- Finishing requests ----------------------------------------------------------------- */
static onic_mpi_req_t *req_get(MPI_Request h, const char *call, int *rc_p)
{
    onic_mpi_req_t *r = onic_mpi_htab_get(&onic_mpi_g.reqs, h);

    if (r == NULL || r->internal)
        *rc_p = onic_mpi_err(NULL, MPI_ERR_REQUEST, call, "request %#x is not a live request "
                             "(already completed and freed, or never made); requests are freed "
                             "by the wait or test that completes them", (unsigned)h);
    return r == NULL || r->internal ? NULL : r;
}

/* --- Generalized requests ------------------------------------------------------------- */
/* query_fn's status (into a scratch one where the caller ignores it); its
 * return value. */
static int greq_query(onic_mpi_req_t *r, MPI_Status *status)
{
    MPI_Status scratch;
    MPI_Status *s = status != MPI_STATUS_IGNORE ? status : &scratch;
    int rc;

    req_status_empty(s);
    rc = r->gq_query(r->gq_state, s);
    s->MPI_ERROR = rc;
    return rc;
}

/* A complete generalized request finished by a wait or test: query_fn
 * fills the status, then free_fn runs and the request goes. The error is
 * query_fn's, else free_fn's (MPI 3.1, 12.2). */
static __attribute__((noinline, cold)) int greq_finish(MPI_Request *h, onic_mpi_req_t *r,
                                                       MPI_Status *status)
{
    int err = greq_query(r, status), ferr = r->gq_free(r->gq_state);

    if (err == MPI_SUCCESS && ferr != MPI_SUCCESS) {
        err = ferr;
        if (status != MPI_STATUS_IGNORE)
            status->MPI_ERROR = ferr;
    }
    onic_mpi_req_free(r);
    *h = MPI_REQUEST_NULL;
    return err;
}

/* req_finish of a request whose freed communicator waits for it: a
 * persistent one goes inactive (it tells the communicator when
 * MPI_Request_free frees it), any other tells it now; an error is
 * reported against that communicator after this, which then goes
 * (req_report_done). Out of line and apart from the plain persistent
 * case, which is as before: MPI_Waitall's loop compiles as tight as
 * without it (bench/mpi/instr.py). */
static __attribute__((cold, noinline)) void req_finish_kept(MPI_Request *h, onic_mpi_req_t *r,
                                                            int err)
{
    onic_mpi_comm_t *c = r->comm;

    if (r->keep & ONIC_MPI_KEEP_PERSISTENT) {
        r->active = 0;
        r->complete = 0;
        return;
    }
    onic_mpi_req_free(r);
    *h = MPI_REQUEST_NULL;
    onic_mpi_comm_request_done(c, err != MPI_SUCCESS);
}

/* The request is complete: hand out its status, free or deactivate it.
 * Returns its error class (not yet reported). */
static int req_finish(MPI_Request *h, onic_mpi_req_t *r, MPI_Status *status)
{
    int err = r->status.MPI_ERROR;

    if (status != MPI_STATUS_IGNORE)
        *status = r->status;
    if (r->keep) {
        if (r->keep & ONIC_MPI_KEEP_COMM) {
            req_finish_kept(h, r, err);
            return err;
        }
        if (r->kind == ONIC_MPI_REQ_GREQ)
            return greq_finish(h, r, status);
        r->active = 0;
        r->complete = 0;
    } else {
        onic_mpi_req_free(r);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

/* A wait's or test's report is out: freed communicators whose last
 * request was among those it finished with an error can go now. */
static int req_report_done(int rc)
{
    onic_mpi_comm_reap();
    return rc;
}

static int req_report(onic_mpi_comm_t *comm, int err, const MPI_Status *s, const char *call)
{
    /* Only a generalized request has no communicator. */
    if (comm == NULL)
        return onic_mpi_err(NULL, err, call, "a generalized request's query_fn or free_fn "
                            "returned this error");
    if (err == MPI_ERR_TRUNCATE)
        return onic_mpi_err(comm, err, call, "a message of %lld bytes or more from rank %d (tag "
                            "%d) was cut to the receive buffer (%lld bytes kept); receive with "
                            "a larger count", s->onic_count + 1, s->MPI_SOURCE, s->MPI_TAG,
                            s->onic_count);
    return onic_mpi_err(comm, err, call, "the operation failed (see the log above)");
}

/* The report of a request a wait or test finished: its communicator may
 * be a freed one that goes after it. (A blocking call's communicator is
 * live: its reports are req_report's alone.) */
static int req_report_waited(onic_mpi_comm_t *comm, int err, const MPI_Status *s,
                             const char *call)
{
    return req_report_done(req_report(comm, err, s, call));
}

/* Inactive: a null handle or a persistent request not started. */
static int req_inactive(onic_mpi_req_t *r)
{
    return r == NULL || !r->active;
}

/* MPI_Wait's work, inlined into it and into mpi_wait_locked. */
static inline __attribute__((always_inline)) int mpi_wait_body(MPI_Request *request,
                                                               MPI_Status *status)
{
    onic_mpi_req_t *r;
    onic_mpi_comm_t *c;
    MPI_Status s;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Wait");
    if (request == NULL || status == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Wait", "%s is NULL",
                            request == NULL ? "request" : "status (use MPI_STATUS_IGNORE)");
    if (*request == MPI_REQUEST_NULL) {
        if (status != MPI_STATUS_IGNORE)
            req_status_empty(status);
        return MPI_SUCCESS;
    }
    if ((r = req_get(*request, "MPI_Wait", &rc)) == NULL)
        return rc;
    if (req_inactive(r)) {
        if (status != MPI_STATUS_IGNORE)
            req_status_empty(status);
        return MPI_SUCCESS;
    }
    while (!r->complete)
        onic_mpi_progress(1);
    c = r->comm;
    rc = req_finish(request, r, &s);
    if (status != MPI_STATUS_IGNORE)
        onic_mpi_status_give(status, &s);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : req_report_waited(c, rc, &s, "MPI_Wait");
}

/* MPI_Wait under MPI_THREAD_MULTIPLE: the same work, holding the lock. */
static __attribute__((noinline)) int mpi_wait_locked(MPI_Request *request, MPI_Status *status)
{
    ONIC_MPI_LOCKED_MT;
    return mpi_wait_body(request, status);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    ONIC_MPI_LOCKED_VIA(mpi_wait_locked(request, status));
    return mpi_wait_body(request, status);
}

/* MPI_Test's work, inlined into it and into mpi_test_locked. */
static inline __attribute__((always_inline)) int mpi_test_body(MPI_Request *request, int *flag,
                                                               MPI_Status *status)
{
    onic_mpi_req_t *r;
    onic_mpi_comm_t *c;
    MPI_Status s;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Test");
    if (request == NULL || flag == NULL || status == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Test", "%s is NULL",
                            request == NULL ? "request" : flag == NULL ? "flag" : "status");
    if (*request == MPI_REQUEST_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            req_status_empty(status);
        return MPI_SUCCESS;
    }
    if ((r = req_get(*request, "MPI_Test", &rc)) == NULL)
        return rc;
    if (req_inactive(r)) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            req_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!r->complete)
        onic_mpi_progress(0);
    if (!r->complete) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    c = r->comm;
    rc = req_finish(request, r, &s);
    if (status != MPI_STATUS_IGNORE)
        onic_mpi_status_give(status, &s);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : req_report_waited(c, rc, &s, "MPI_Test");
}

/* MPI_Test under MPI_THREAD_MULTIPLE: the same work, holding the lock. */
static __attribute__((noinline)) int mpi_test_locked(MPI_Request *request, int *flag,
                                                           MPI_Status *status)
{
    ONIC_MPI_LOCKED_MT;
    return mpi_test_body(request, flag, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    ONIC_MPI_LOCKED_VIA(mpi_test_locked(request, flag, status));
    return mpi_test_body(request, flag, status);
}

/* Look up every handle of an array first, so a bad one is reported before
 * anything changes. */
static int req_array(const char *call, int count, MPI_Request reqs[], onic_mpi_req_t **out)
{
    int rc;

    for (int i = 0; i < count; i++) {
        out[i] = NULL;
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        if ((out[i] = onic_mpi_htab_get(&onic_mpi_g.reqs, reqs[i])) == NULL || out[i]->internal)
            return onic_mpi_err(NULL, MPI_ERR_REQUEST, call, "array_of_requests[%d] = %#x is "
                                "not a live request (use MPI_REQUEST_NULL for empty places)",
                                i, (unsigned)reqs[i]);
        (void)rc;
    }
    return MPI_SUCCESS;
}

#define REQ_STACK 64

static int req_array_begin(const char *call, int count, MPI_Request reqs[],
                           onic_mpi_req_t **stack, onic_mpi_req_t ***rs_p)
{
    onic_mpi_req_t **rs = stack;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if (count < 0)
        return onic_mpi_err(NULL, MPI_ERR_COUNT, call, "count %d is negative", count);
    if (count > 0 && reqs == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "array_of_requests is NULL with count %d",
                            count);
    if (count > REQ_STACK && (rs = onic_malloc((size_t)count * sizeof(*rs))) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for %d requests", count);
    if ((rc = req_array(call, count, reqs, rs)) != MPI_SUCCESS) {
        if (rs != stack)
            onic_free(rs);
        return rc;
    }
    *rs_p = rs;
    return MPI_SUCCESS;
}

static void req_array_end(onic_mpi_req_t **stack, onic_mpi_req_t **rs)
{
    if (rs != stack)
        onic_free(rs);
}

/* Finish the complete requests among rs; errors go into the statuses. */
static int req_finish_all(int count, MPI_Request reqs[], onic_mpi_req_t **rs,
                          MPI_Status statuses[], onic_mpi_comm_t **errcomm_p)
{
    int err = MPI_SUCCESS;

    for (int i = 0; i < count; i++) {
        /* Written in place: each status once (none with MPI_STATUSES_IGNORE). */
        MPI_Status *sp = statuses != MPI_STATUSES_IGNORE ? &statuses[i] : MPI_STATUS_IGNORE;
        int e;

        if (req_inactive(rs[i])) {
            if (sp != MPI_STATUS_IGNORE)
                req_status_empty(sp);
        } else {
            onic_mpi_comm_t *c = rs[i]->comm;
            e = req_finish(&reqs[i], rs[i], sp);
            if (sp != MPI_STATUS_IGNORE)
                sp->MPI_ERROR = e;
            if (e != MPI_SUCCESS && err == MPI_SUCCESS) {
                err = e;
                *errcomm_p = c;
            }
        }
    }
    return err;
}

/* MPI_Waitall's: the requests' ends in one function. */
static __attribute__((flatten, hot)) int req_wait_finish_all(int count, MPI_Request reqs[],
                                                             onic_mpi_req_t **rs,
                                                             MPI_Status statuses[],
                                                             onic_mpi_comm_t **errcomm_p)
{
    return req_finish_all(count, reqs, rs, statuses, errcomm_p);
}

/* Whether every request from *from on is done; *from advances past the
 * done ones, which stay done, so a wait rescans nothing. */
static int req_all_done(int count, onic_mpi_req_t **rs, int *from)
{
    while (*from < count && (req_inactive(rs[*from]) || rs[*from]->complete))
        (*from)++;
    return *from == count;
}

/* MPI_Waitall's work, inlined into it and into mpi_waitall_locked. */
static inline __attribute__((always_inline)) int mpi_waitall_body(int count,
                                                                  MPI_Request *array_of_requests,
                                                                  MPI_Status *array_of_statuses)
{
    onic_mpi_req_t *stack[REQ_STACK], **rs;
    onic_mpi_comm_t *c = NULL;
    int from = 0, rc = req_array_begin("MPI_Waitall", count, array_of_requests, stack, &rs);

    if (rc != MPI_SUCCESS)
        return rc;
    /* With no requests, MPI leaves the arrays unread: NULL will do. */
    if (count > 0 && array_of_statuses == NULL) {
        req_array_end(stack, rs);
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Waitall", "array_of_statuses is NULL; use "
                            "MPI_STATUSES_IGNORE");
    }
    while (!req_all_done(count, rs, &from))
        onic_mpi_progress(1);
    rc = req_wait_finish_all(count, array_of_requests, rs, array_of_statuses, &c);
    req_array_end(stack, rs);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    return req_report_done(onic_mpi_err(c, MPI_ERR_IN_STATUS, "MPI_Waitall", "a request ended "
                                        "with %s; the statuses' MPI_ERROR fields say which",
                                        rc == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE"
                                                               : "an error"));
}

/* MPI_Waitall under MPI_THREAD_MULTIPLE: the same work, holding the lock. */
static __attribute__((noinline)) int mpi_waitall_locked(int count,
                                                              MPI_Request *array_of_requests,
                                                              MPI_Status *array_of_statuses)
{
    ONIC_MPI_LOCKED_MT;
    return mpi_waitall_body(count, array_of_requests, array_of_statuses);
}

int MPI_Waitall(int count, MPI_Request *array_of_requests, MPI_Status *array_of_statuses)
{
    ONIC_MPI_LOCKED_VIA(mpi_waitall_locked(count, array_of_requests, array_of_statuses));
    return mpi_waitall_body(count, array_of_requests, array_of_statuses);
}

/* MPI_Testall's work, inlined into it and into mpi_testall_locked. */
static inline __attribute__((always_inline)) int mpi_testall_body(int count,
                                                                  MPI_Request *array_of_requests,
                                                                  int *flag,
                                                                  MPI_Status *array_of_statuses)
{
    onic_mpi_req_t *stack[REQ_STACK], **rs;
    onic_mpi_comm_t *c = NULL;
    int from = 0, rc = req_array_begin("MPI_Testall", count, array_of_requests, stack, &rs);

    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL || (count > 0 && array_of_statuses == NULL)) {
        req_array_end(stack, rs);
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Testall", "%s is NULL",
                            flag == NULL ? "flag" : "array_of_statuses (use MPI_STATUSES_IGNORE)");
    }
    if (!req_all_done(count, rs, &from))
        onic_mpi_progress(0);
    if (!req_all_done(count, rs, &from)) {
        *flag = 0;
        req_array_end(stack, rs);
        return MPI_SUCCESS;
    }
    *flag = 1;
    rc = req_finish_all(count, array_of_requests, rs, array_of_statuses, &c);
    req_array_end(stack, rs);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    return req_report_done(onic_mpi_err(c, MPI_ERR_IN_STATUS, "MPI_Testall", "a request ended "
                                        "with an error; the statuses' MPI_ERROR fields say "
                                        "which"));
}

/* MPI_Testall under MPI_THREAD_MULTIPLE: the same work, holding the lock. */
static __attribute__((noinline)) int mpi_testall_locked(int count,
                                                              MPI_Request *array_of_requests,
                                                              int *flag,
                                                              MPI_Status *array_of_statuses)
{
    ONIC_MPI_LOCKED_MT;
    return mpi_testall_body(count, array_of_requests, flag, array_of_statuses);
}

int MPI_Testall(int count, MPI_Request *array_of_requests, int *flag, MPI_Status *array_of_statuses)
{
    ONIC_MPI_LOCKED_VIA(mpi_testall_locked(count, array_of_requests, flag, array_of_statuses));
    return mpi_testall_body(count, array_of_requests, flag, array_of_statuses);
}

/* The first complete active request, -1 if none, -2 if none is active. */
static int req_any(int count, onic_mpi_req_t **rs)
{
    int active = 0;

    for (int i = 0; i < count; i++) {
        if (req_inactive(rs[i]))
            continue;
        active = 1;
        if (rs[i]->complete)
            return i;
    }
    return active ? -1 : -2;
}

static int req_any_finish(int i, MPI_Request reqs[], onic_mpi_req_t **rs, int *index,
                          MPI_Status *status, const char *call)
{
    onic_mpi_comm_t *c = rs[i]->comm;
    MPI_Status s;
    int e = req_finish(&reqs[i], rs[i], &s);

    *index = i;
    if (status != MPI_STATUS_IGNORE)
        onic_mpi_status_give(status, &s);
    return e == MPI_SUCCESS ? MPI_SUCCESS : req_report_waited(c, e, &s, call);
}

int MPI_Waitany(int count, MPI_Request *array_of_requests, int *index, MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    onic_mpi_req_t *stack[REQ_STACK], **rs;
    int rc = req_array_begin("MPI_Waitany", count, array_of_requests, stack, &rs), i;

    if (rc != MPI_SUCCESS)
        return rc;
    if (index == NULL || status == NULL) {
        req_array_end(stack, rs);
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Waitany", "%s is NULL",
                            index == NULL ? "index" : "status (use MPI_STATUS_IGNORE)");
    }
    while ((i = req_any(count, rs)) == -1)
        onic_mpi_progress(1);
    if (i == -2) {
        *index = MPI_UNDEFINED;
        if (status != MPI_STATUS_IGNORE)
            req_status_empty(status);
        rc = MPI_SUCCESS;
    } else {
        rc = req_any_finish(i, array_of_requests, rs, index, status, "MPI_Waitany");
    }
    req_array_end(stack, rs);
    return rc;
}

int MPI_Testany(int count, MPI_Request *array_of_requests, int *index, int *flag,
                MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    onic_mpi_req_t *stack[REQ_STACK], **rs;
    int rc = req_array_begin("MPI_Testany", count, array_of_requests, stack, &rs), i;

    if (rc != MPI_SUCCESS)
        return rc;
    if (index == NULL || flag == NULL || status == NULL) {
        req_array_end(stack, rs);
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Testany", "%s is NULL",
                            index == NULL ? "index" : flag == NULL ? "flag" : "status");
    }
    if ((i = req_any(count, rs)) == -1) {
        onic_mpi_progress(0);
        i = req_any(count, rs);
    }
    rc = MPI_SUCCESS;
    if (i < 0) {
        *flag = i == -2; /* nothing active counts as done */
        *index = MPI_UNDEFINED;
        if (i == -2 && status != MPI_STATUS_IGNORE)
            req_status_empty(status);
    } else {
        *flag = 1;
        rc = req_any_finish(i, array_of_requests, rs, index, status, "MPI_Testany");
    }
    req_array_end(stack, rs);
    return rc;
}

/* MPI_Waitsome (block: until one is complete) and MPI_Testsome. */
static int req_some(const char *call, int block, int incount, MPI_Request *array_of_requests,
                    int *outcount, int *array_of_indices, MPI_Status *array_of_statuses)
{
    onic_mpi_req_t *stack[REQ_STACK], **rs;
    onic_mpi_comm_t *c = NULL;
    int rc = req_array_begin(call, incount, array_of_requests, stack, &rs), i, n = 0;
    int err = MPI_SUCCESS;

    if (rc != MPI_SUCCESS)
        return rc;
    if (outcount == NULL || (incount > 0 && array_of_indices == NULL) ||
        (incount > 0 && array_of_statuses == NULL)) {
        req_array_end(stack, rs);
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s is NULL",
                            outcount == NULL ? "outcount" : array_of_statuses == NULL
                            ? "array_of_statuses (use MPI_STATUSES_IGNORE)" : "array_of_indices");
    }
    if (block) {
        while ((i = req_any(incount, rs)) == -1)
            onic_mpi_progress(1);
    } else if ((i = req_any(incount, rs)) == -1) {
        onic_mpi_progress(0);
        i = req_any(incount, rs);
    }
    if (i == -2) {
        *outcount = MPI_UNDEFINED;
        req_array_end(stack, rs);
        return MPI_SUCCESS;
    }
    for (i = 0; i < incount; i++) {
        MPI_Status s;
        int e;
        if (req_inactive(rs[i]) || !rs[i]->complete)
            continue;
        if (err == MPI_SUCCESS)
            c = rs[i]->comm;
        e = req_finish(&array_of_requests[i], rs[i], &s);
        s.MPI_ERROR = e;
        if (e != MPI_SUCCESS && err == MPI_SUCCESS)
            err = e;
        array_of_indices[n] = i;
        if (array_of_statuses != MPI_STATUSES_IGNORE)
            array_of_statuses[n] = s;
        n++;
    }
    *outcount = n;
    req_array_end(stack, rs);
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    return req_report_done(onic_mpi_err(c, MPI_ERR_IN_STATUS, call, "a request ended with an "
                                        "error; the statuses' MPI_ERROR fields say which"));
}

int MPI_Waitsome(int incount, MPI_Request *array_of_requests, int *outcount,
                 int *array_of_indices, MPI_Status *array_of_statuses)
{
    ONIC_MPI_LOCKED;
    return req_some("MPI_Waitsome", 1, incount, array_of_requests, outcount, array_of_indices,
                    array_of_statuses);
}

/* MPI_Request_free of a generalized request: free_fn runs now if the
 * program has completed it, else in MPI_Grequest_complete. */
static int greq_request_free(MPI_Request *request, onic_mpi_req_t *r)
{
    int rc;

    *request = MPI_REQUEST_NULL;
    if (!r->complete) {
        r->user_freed = 1;
        return MPI_SUCCESS;
    }
    rc = r->gq_free(r->gq_state);
    onic_mpi_req_free(r);
    if (rc != MPI_SUCCESS)
        return onic_mpi_err(NULL, rc, "MPI_Request_free", "the generalized request's free_fn "
                            "returned this error");
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    onic_mpi_req_t *r;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Request_free");
    if (request == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Request_free", "request is NULL");
    if ((r = req_get(*request, "MPI_Request_free", &rc)) == NULL)
        return rc;
    if (r->kind == ONIC_MPI_REQ_GREQ)
        return greq_request_free(request, r);
    if (r->active && !r->complete) {
        r->user_freed = 1; /* it frees itself when it completes */
    } else {
        onic_mpi_comm_t *c = r->comm;
        int keep = r->keep;

        onic_mpi_req_free(r);
        if (keep & ONIC_MPI_KEEP_COMM)
            onic_mpi_comm_request_done(c, 0);
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    onic_mpi_req_t *r;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Cancel");
    if (request == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Cancel", "request is NULL");
    if ((r = req_get(*request, "MPI_Cancel", &rc)) == NULL)
        return rc;
    if (r->kind == ONIC_MPI_REQ_GREQ) {
        /* The program cancels it, told whether it has completed it. */
        if ((rc = r->gq_cancel(r->gq_state, r->complete)) != MPI_SUCCESS)
            return onic_mpi_err(NULL, rc, "MPI_Cancel", "the generalized request's cancel_fn "
                                "returned this error");
        return MPI_SUCCESS;
    }
    if (!r->active)
        return onic_mpi_err(r->comm, MPI_ERR_REQUEST, "MPI_Cancel", "the persistent request is "
                            "not started; only an active request can be cancelled");
    /* A send is never cancelled: it completes normally (MPI allows either
     * outcome), which MPI_Test_cancelled then reports. */
    onic_mpi_p2p_cancel(r);
    return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Test_cancelled");
    if (status == NULL || status == MPI_STATUS_IGNORE || flag == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "%s",
                            flag == NULL ? "flag is NULL" : "status must be a real status, not "
                            "NULL or MPI_STATUS_IGNORE");
    *flag = status->onic_cancelled;
    return MPI_SUCCESS;
}

/* MPI_Get_count's and MPI_Get_count_c's: the count of whole elements of
 * datatype in status, or MPI_UNDEFINED. */
static int req_get_count(const char *call, const MPI_Status *status, MPI_Datatype datatype,
                         int count_null, MPI_Count *c)
{
    onic_mpi_type_t *t;

    ONIC_MPI_CHECK_INIT(call);
    if (status == NULL || status == MPI_STATUS_IGNORE || count_null)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s",
                            count_null ? "count is NULL" : "status must be a real status, "
                            "not NULL or MPI_STATUS_IGNORE");
    if ((t = onic_mpi_type_get(datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, call, "datatype %#x is not a datatype",
                            (unsigned)datatype);
    if (t->size == 0)
        *c = 0;
    else if (status->onic_count % (long long)t->size != 0)
        *c = MPI_UNDEFINED;
    else
        *c = status->onic_count / (long long)t->size;
    return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    ONIC_MPI_LOCKED;
    MPI_Count c;
    int rc = req_get_count("MPI_Get_count", status, datatype, count == NULL, &c);

    if (rc != MPI_SUCCESS)
        return rc;
    *count = c > INT32_MAX ? MPI_UNDEFINED : (int)c;
    return MPI_SUCCESS;
}

/* --- Sends and receives ---------------------------------------------------------------- */
/* The common non-blocking send, its arguments checked: the request, the
 * bundle and the eager put in one function (flatten, as req_irecv_checked
 * below), what is rare staying out. */
static __attribute__((flatten, hot)) int req_isend_checked(const void *buf, int count,
                                                           onic_mpi_comm_t *comm,
                                                           onic_mpi_type_t *type, int dest,
                                                           int tag, MPI_Request *request)
{
    const req_args_t a = {comm, type};

    return req_immediate_checked(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_STANDARD, "MPI_Isend", buf,
                                 count, &a, dest, tag, request);
}

/* MPI_Isend's work, inlined into it and into mpi_isend_locked. */
static inline __attribute__((always_inline)) int mpi_isend_body(const void *buf, int count,
                                                                MPI_Datatype datatype, int dest,
                                                                int tag, MPI_Comm comm,
                                                                MPI_Request *request)
{
    req_args_t a;

    if (req_args_ok(1, buf, count, datatype, dest, tag, comm, &a) && request != NULL)
        return req_isend_checked(buf, count, a.comm, a.type, dest, tag, request);
    return req_immediate(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_STANDARD, "MPI_Isend", buf, count,
                         datatype, dest, tag, comm, request);
}

/* MPI_Isend under MPI_THREAD_MULTIPLE: the same work, holding the lock. */
static __attribute__((noinline)) int mpi_isend_locked(const void *buf, int count,
                                                            MPI_Datatype datatype, int dest,
                                                            int tag, MPI_Comm comm,
                                                            MPI_Request *request)
{
    ONIC_MPI_LOCKED_MT;
    return mpi_isend_body(buf, count, datatype, dest, tag, comm, request);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    ONIC_MPI_LOCKED_VIA(mpi_isend_locked(buf, count, datatype, dest, tag, comm, request));
    return mpi_isend_body(buf, count, datatype, dest, tag, comm, request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return req_immediate(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_SYNC, "MPI_Issend", buf, count,
                         datatype, dest, tag, comm, request);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return req_immediate(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_READY, "MPI_Irsend", buf, count,
                         datatype, dest, tag, comm, request);
}

/* The common receive, its arguments checked: every step in one function.
 * flatten inlines the whole chain -- request, Portals entry and MD, the
 * matcher's generic layer -- whose calls cost as much as their work did;
 * the engine's op stays an indirect call, and what is rare (errors,
 * logging, rendezvous, allocation) is marked noinline where it is defined
 * and stays out. The same for the other hot entry points: MPI_Send,
 * MPI_Recv, MPI_Waitall's ends, onic_mpi_progress and the transport's
 * delivery into Portals (io_xport.c). Each is also marked hot: gcc
 * optimizes it as such and places them together at the front of the
 * text (9 fewer instructions a received 8-byte message; latency and rate
 * the same within the noise of where the library's pages land). */
static __attribute__((flatten, hot)) int req_irecv_checked(void *buf, int count,
                                                           onic_mpi_comm_t *comm,
                                                           onic_mpi_type_t *type, int source,
                                                           int tag, MPI_Request *request)
{
    const req_args_t a = {comm, type};

    return req_immediate_checked(ONIC_MPI_REQ_RECV, ONIC_MPI_MODE_STANDARD, "MPI_Irecv", buf,
                                 count, &a, source, tag, request);
}

/* MPI_Irecv's work, inlined into it and into mpi_irecv_locked. */
static inline __attribute__((always_inline)) int mpi_irecv_body(void *buf, int count,
                                                                MPI_Datatype datatype, int source,
                                                                int tag, MPI_Comm comm,
                                                                MPI_Request *request)
{
    req_args_t a;

    if (req_args_ok(0, buf, count, datatype, source, tag, comm, &a) && request != NULL)
        return req_irecv_checked(buf, count, a.comm, a.type, source, tag, request);
    return req_immediate(ONIC_MPI_REQ_RECV, ONIC_MPI_MODE_STANDARD, "MPI_Irecv", buf, count,
                         datatype, source, tag, comm, request);
}

/* MPI_Irecv under MPI_THREAD_MULTIPLE: the same work, holding the lock. */
static __attribute__((noinline)) int mpi_irecv_locked(void *buf, int count,
                                                            MPI_Datatype datatype, int source,
                                                            int tag, MPI_Comm comm,
                                                            MPI_Request *request)
{
    ONIC_MPI_LOCKED_MT;
    return mpi_irecv_body(buf, count, datatype, source, tag, comm, request);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    ONIC_MPI_LOCKED_VIA(mpi_irecv_locked(buf, count, datatype, source, tag, comm, request));
    return mpi_irecv_body(buf, count, datatype, source, tag, comm, request);
}

/* A blocking operation through a request: start it, wait for it. */
/* h: the header of a matched receive's message (ONIC_MPI_MODE_MATCHED). */
static int req_blocking_wait(onic_mpi_req_kind_t kind, onic_mpi_mode_t mode, const char *call,
                             const void *buf, int count, const req_args_t *a, int peer, int tag,
                             const ptl_ovf_header_t *h, MPI_Status *status)
{
    onic_mpi_req_t *r;
    MPI_Status s;
    int rc;

    if ((r = req_make(kind, mode, call, buf, count, a, peer, tag, &rc)) == NULL)
        return rc;
    r->mt_hdr = h;
    /* A blocking send is not pulled (onic_mpi_p2p_send_eager_slow). */
    onic_mpi_g.start_blocking = kind == ONIC_MPI_REQ_SEND;
    rc = req_start(r);
    onic_mpi_g.start_blocking = 0;
    if (rc != MPI_SUCCESS) {
        onic_mpi_req_free(r);
        return rc;
    }
    while (!r->complete)
        onic_mpi_progress(1);
    s = r->status;
    onic_mpi_req_free(r);
    if (status != MPI_STATUS_IGNORE)
        onic_mpi_status_give(status, &s);
    return s.MPI_ERROR == MPI_SUCCESS ? MPI_SUCCESS : req_report(a->comm, s.MPI_ERROR, &s, call);
}

static int req_blocking(onic_mpi_req_kind_t kind, onic_mpi_mode_t mode, const char *call,
                        const void *buf, int count, MPI_Datatype datatype, int peer, int tag,
                        MPI_Comm comm, MPI_Status *status)
{
    req_args_t a;
    int rc = req_check(call, kind == ONIC_MPI_REQ_SEND, buf, count, datatype, peer, tag, comm, &a);

    if (rc != MPI_SUCCESS)
        return rc;
    if (status == NULL)
        return onic_mpi_err(a.comm, MPI_ERR_ARG, call, "status is NULL; use MPI_STATUS_IGNORE");
    /* The common small send needs no request: it is complete once put. */
    if (kind == ONIC_MPI_REQ_SEND && mode == ONIC_MPI_MODE_STANDARD && peer != MPI_PROC_NULL &&
        a.type->contig) {
        size_t bytes = a.type->size * (size_t)count;
        rc = onic_mpi_p2p_send_now(a.comm, peer, tag,
                                   bytes == 0 ? buf : (const char *)buf + a.type->blocks[0].off,
                                   bytes, call);
        if (rc != ONIC_MPI_NOT_EAGER)
            return rc;
    }
    return req_blocking_wait(kind, mode, call, buf, count, &a, peer, tag, NULL, status);
}

/* MPI_Send, every case: the checks that report, a bundle to end, a
 * request for what does not go eager. */
static int __attribute__((noinline))
send_general(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return req_blocking(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_STANDARD, "MPI_Send", buf, count,
                        datatype, dest, tag, comm, MPI_STATUS_IGNORE);
}

/* MPI_Send's arguments, kept in memory across the put for the rare path
 * that needs them again (so the common path keeps nothing in registers
 * across that call). */
typedef struct send_args {
    const void  *buf;
    int          count, dest, tag;
    MPI_Datatype datatype;
    MPI_Comm     comm;
} send_args_t;

/* Portals refused the eager put: its credit back, and what the refusal
 * means (p2p.c): an error, or a put longer than the transport carries, so
 * the eager limit comes down and the message goes the general way. */
static int __attribute__((noinline, cold)) send_refused(const send_args_t *a, int rc)
{
    onic_mpi_comm_t *c = onic_mpi_comm_lookup(a->comm);
    onic_mpi_type_t *t = onic_mpi_type_lookup(a->datatype);
    size_t bytes = t->size * (size_t)a->count;

    if (bytes > 0)
        onic_mpi_g.credits[onic_mpi_comm_world_rank(c, a->dest)] += onic_mpi_charge(bytes);
    if ((rc = onic_mpi_p2p_send_refused(c, bytes, rc, "MPI_Send")) != ONIC_MPI_NOT_EAGER)
        return rc;
    return send_general(a->buf, a->count, a->datatype, a->dest, a->tag, a->comm);
}

/* An empty MPI_Send (its arguments checked, as the common send's): the
 * eager put of nothing, which takes no credit (it lands in no buffer: the
 * receiver's empty-message overflow entry keeps its header only), without
 * the general way's second round of checks. */
static int __attribute__((noinline)) send_empty(onic_mpi_comm_t *c, int dest, int tag,
                                                const send_args_t *a)
{
    int rc = onic_mpi_p2p_put_eager(c, 0, onic_mpi_comm_world_rank(c, dest), tag, NULL, 0);

    if (__builtin_expect(rc != PTL_OK, 0))
        return send_refused(a, rc);
    return MPI_SUCCESS;
}

/* The common send -- MPI_COMM_WORLD or a live communicator, a predefined or
 * committed contiguous type, a rank and tag in range, a buffer, 1 byte to
 * the eager limit and the credit at the receiver, no bundle open, not under
 * onload -- is every check of req_check_start in one test, the credit
 * taken, and the eager put: complete once put, nothing polled. Whatever
 * fails a check goes the general way (send_general, a tail call with the
 * same arguments), which checks again and reports it with its class; so
 * do larger messages, a send without credit (it polls for credit returns,
 * then goes by rendezvous if still short) and the rest. */
/* flatten: see req_irecv_checked. */
/* MPI_Send's work, inlined into it and into mpi_send_locked. */
static inline __attribute__((always_inline)) int mpi_send_body(const void *buf, int count,
                                                               MPI_Datatype datatype, int dest,
                                                               int tag, MPI_Comm comm)
{
    send_args_t a;
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    uint32_t wdest;
    uint64_t charge;
    size_t bytes;
    int rc;

    if (__builtin_expect(!onic_mpi_g.initialized || onic_mpi_g.finalized ||
                         onic_mpi_g.bundle_open || onic_mpi_g.drain_sends, 0) ||
        (c = onic_mpi_comm_lookup(comm)) == NULL || (t = onic_mpi_type_lookup(datatype)) == NULL ||
        !t->contig || (unsigned)dest >= (unsigned)c->npeers || (unsigned)tag > ONIC_MPI_TAG_UB ||
        /* count >= 0, and small enough that size * count cannot wrap */
        (size_t)(unsigned)count > onic_mpi_g.eager_limit)
        return send_general(buf, count, datatype, dest, tag, comm);
    /* 1 to eager_limit bytes from a buffer (a blocking send never asks to
     * be pulled: onic_mpi_p2p_send_eager_slow); an empty message (buffer or
     * not) has a way of its own, outside this one. */
    bytes = t->size * (size_t)count;
    if (__builtin_expect(buf == NULL || bytes - 1 >= onic_mpi_g.eager_limit, 0)) {
        if (bytes > 0) /* NULL with data: reported there */
            return send_general(buf, count, datatype, dest, tag, comm);
        return send_empty(c, dest, tag, &(send_args_t){buf, count, dest, tag, datatype, comm});
    }
    wdest = onic_mpi_comm_world_rank(c, dest);
    charge = onic_mpi_charge(bytes);
    if (__builtin_expect(onic_mpi_g.credits[wdest] < charge, 0))
        return send_general(buf, count, datatype, dest, tag, comm);
    onic_mpi_g.credits[wdest] -= charge; /* given back if the put fails */
    a = (send_args_t){buf, count, dest, tag, datatype, comm};
    rc = onic_mpi_p2p_put_eager(c, 0, wdest, tag, (const char *)buf + t->blocks[0].off, bytes);
    if (__builtin_expect(rc != PTL_OK, 0))
        return send_refused(&a, rc);
    return MPI_SUCCESS;
}

/* MPI_Send under MPI_THREAD_MULTIPLE: the same work, holding the lock. */
static __attribute__((flatten, noinline)) int mpi_send_locked(const void *buf, int count,
                                                                    MPI_Datatype datatype, int dest,
                                                                    int tag, MPI_Comm comm)
{
    ONIC_MPI_LOCKED_MT;
    return mpi_send_body(buf, count, datatype, dest, tag, comm);
}

__attribute__((flatten, hot)) int MPI_Send(const void *buf, int count, MPI_Datatype datatype,
                                           int dest, int tag, MPI_Comm comm)
{
    ONIC_MPI_LOCKED_VIA(mpi_send_locked(buf, count, datatype, dest, tag, comm));
    return mpi_send_body(buf, count, datatype, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return req_blocking(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_SYNC, "MPI_Ssend", buf, count,
                        datatype, dest, tag, comm, MPI_STATUS_IGNORE);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return req_blocking(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_READY, "MPI_Rsend", buf, count,
                        datatype, dest, tag, comm, MPI_STATUS_IGNORE);
}

/* The common blocking receive, its arguments checked: every step in one
 * function, as req_irecv_checked. */
static __attribute__((flatten, hot)) int req_recv_checked(void *buf, int count,
                                                          const req_args_t *a, int source, int tag,
                                                          MPI_Status *status)
{
    ptl_ovf_header_t h;
    MPI_Status s;
    size_t bytes;
    int rc;

    /* A contiguous receive whose message is already here needs no request. */
    if (a->type->contig) {
        bytes = a->type->size * (size_t)count;
        rc = onic_mpi_p2p_recv_now(a->comm, source, tag,
                                   bytes == 0 ? buf : (char *)buf + a->type->blocks[0].off, bytes,
                                   &h, &s);
        if (rc == 1) {
            if (status != MPI_STATUS_IGNORE)
                onic_mpi_status_give(status, &s);
            return s.MPI_ERROR == MPI_SUCCESS ? MPI_SUCCESS
                                              : req_report(a->comm, s.MPI_ERROR, &s, "MPI_Recv");
        }
        if (rc == ONIC_MPI_RECV_RNDV)
            return req_blocking_wait(ONIC_MPI_REQ_RECV, ONIC_MPI_MODE_MATCHED, "MPI_Recv", buf,
                                     count, a, source, tag, &h, status);
    }
    return req_blocking_wait(ONIC_MPI_REQ_RECV, ONIC_MPI_MODE_STANDARD, "MPI_Recv", buf, count,
                             a, source, tag, NULL, status);
}

/* MPI_Recv's work, inlined into it and into mpi_recv_locked. */
static inline __attribute__((always_inline)) int mpi_recv_body(void *buf, int count,
                                                               MPI_Datatype datatype, int source,
                                                               int tag, MPI_Comm comm,
                                                               MPI_Status *status)
{
    req_args_t a;

    if (req_args_ok(0, buf, count, datatype, source, tag, comm, &a) && status != NULL) {
        if (onic_mpi_g.bundle_open)
            onic_mpi_bundle_end();
        return req_recv_checked(buf, count, &a, source, tag, status);
    }
    return req_blocking(ONIC_MPI_REQ_RECV, ONIC_MPI_MODE_STANDARD, "MPI_Recv", buf, count,
                        datatype, source, tag, comm, status);
}

/* MPI_Recv under MPI_THREAD_MULTIPLE: the same work, holding the lock. */
static __attribute__((noinline)) int mpi_recv_locked(void *buf, int count,
                                                           MPI_Datatype datatype, int source,
                                                           int tag, MPI_Comm comm,
                                                           MPI_Status *status)
{
    ONIC_MPI_LOCKED_MT;
    return mpi_recv_body(buf, count, datatype, source, tag, comm, status);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    ONIC_MPI_LOCKED_VIA(mpi_recv_locked(buf, count, datatype, source, tag, comm, status));
    return mpi_recv_body(buf, count, datatype, source, tag, comm, status);
}

/* The Sendrecv forms' arguments: the send's, then the receive's. */
static int req_check_pair(const char *call, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                          MPI_Comm comm, req_args_t *sa, req_args_t *ra)
{
    int rc = req_check(call, 1, sendbuf, sendcount, sendtype, dest, sendtag, comm, sa);

    return rc != MPI_SUCCESS ? rc
                             : req_check(call, 0, recvbuf, recvcount, recvtype, source, recvtag,
                                         comm, ra);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Sendrecv";
    req_args_t sa, ra;
    onic_mpi_req_t *sr, *rr;
    MPI_Status s;
    int rc;

    if ((rc = req_check_pair(call, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                             recvcount, recvtype, source, recvtag, comm, &sa, &ra)) != MPI_SUCCESS)
        return rc;
    if (status == NULL)
        return onic_mpi_err(ra.comm, MPI_ERR_ARG, call, "status is NULL; use MPI_STATUS_IGNORE");
    if ((rr = req_make(ONIC_MPI_REQ_RECV, ONIC_MPI_MODE_STANDARD, call, recvbuf, recvcount, &ra,
                       source, recvtag, &rc)) == NULL)
        return rc;
    if ((rc = req_start(rr)) != MPI_SUCCESS) {
        onic_mpi_req_free(rr);
        return rc;
    }
    if ((sr = req_make(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_STANDARD, call, sendbuf, sendcount, &sa,
                       dest, sendtag, &rc)) == NULL || (rc = req_start(sr)) != MPI_SUCCESS) {
        /* The receive stays posted and frees itself when a message comes. */
        if (sr != NULL)
            onic_mpi_req_free(sr);
        if (!onic_mpi_p2p_cancel(rr) && !rr->complete)
            rr->user_freed = 1;
        else
            onic_mpi_req_free(rr);
        return rc;
    }
    while (!sr->complete || !rr->complete)
        onic_mpi_progress(1);
    onic_mpi_req_free(sr);
    s = rr->status;
    onic_mpi_req_free(rr);
    if (status != MPI_STATUS_IGNORE)
        onic_mpi_status_give(status, &s);
    return s.MPI_ERROR == MPI_SUCCESS ? MPI_SUCCESS : req_report(ra.comm, s.MPI_ERROR, &s, call);
}

/* The replace forms' outgoing message: a packed copy of buf, so the receive
 * may overwrite buf; it goes as *bytes MPI_BYTEs, an int count. */
static int req_replace_copy(const char *call, const req_args_t *a, const void *buf, int count,
                            char **copy, size_t *bytes)
{
    *bytes = a->type->size * (size_t)count;
    if (*bytes > INT32_MAX)
        return onic_mpi_err(a->comm, MPI_ERR_COUNT, call, "%zu bytes: onic replaces at most "
                            "2^31 - 1 bytes in one call; use the form with a second buffer",
                            *bytes);
    if ((*copy = onic_malloc(*bytes + 1)) == NULL)
        return onic_mpi_err(a->comm, MPI_ERR_NO_MEM, call, "no memory for a %zu-byte copy",
                            *bytes);
    onic_mpi_type_pack(a->type, buf, count, *copy);
    return MPI_SUCCESS;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Sendrecv_replace";
    req_args_t a;
    size_t bytes;
    char *copy;
    int rc;

    if ((rc = req_check_pair(call, buf, count, datatype, dest, sendtag, buf, count, datatype,
                             source, recvtag, comm, &a, &a)) != MPI_SUCCESS)
        return rc;
    if ((rc = req_replace_copy(call, &a, buf, count, &copy, &bytes)) != MPI_SUCCESS)
        return rc;
    rc = MPI_Sendrecv(copy, (int)bytes, MPI_BYTE, dest, sendtag, buf, count, datatype, source,
                      recvtag, comm, status);
    onic_free(copy);
    return rc;
}

int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Isendrecv";
    req_args_t sa, ra;
    int rc;

    if ((rc = req_check_pair(call, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                             recvcount, recvtype, source, recvtag, comm, &sa, &ra)) != MPI_SUCCESS)
        return rc;
    if (request == NULL)
        return onic_mpi_err(ra.comm, MPI_ERR_ARG, call, "request is NULL; pass where to store "
                            "the request");
    return onic_mpi_icoll_sendrecv(ra.comm, call, sendbuf, sendcount, sa.type, dest, sendtag,
                                   recvbuf, recvcount, ra.type, source, recvtag, NULL, request);
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Isendrecv_replace";
    req_args_t a;
    size_t bytes;
    char *copy;
    int rc;

    if ((rc = req_check_pair(call, buf, count, datatype, dest, sendtag, buf, count, datatype,
                             source, recvtag, comm, &a, &a)) != MPI_SUCCESS)
        return rc;
    if (request == NULL)
        return onic_mpi_err(a.comm, MPI_ERR_ARG, call, "request is NULL; pass where to store "
                            "the request");
    /* The copy is the schedule's, freed with it. */
    if ((rc = req_replace_copy(call, &a, buf, count, &copy, &bytes)) != MPI_SUCCESS)
        return rc;
    return onic_mpi_icoll_sendrecv(a.comm, call, copy, (int)bytes, onic_mpi_type_get(MPI_BYTE),
                                   dest, sendtag, buf, count, a.type, source, recvtag, copy,
                                   request);
}

/* --- Large counts (MPI 4.0's _c forms) ----------------------------------------------- */
#define REQ_CHUNK_SHIFT 30

/* count elements of datatype as an int count of a type: themselves up to
 * INT_MAX; beyond, one element of a struct of count / 2^30 runs of 2^30
 * elements and the rest (*made_p 1: the caller frees *t_p). Only for a
 * contiguous type: onic lists a derived type's blocks one by one, and 2^30
 * elements of a non-contiguous type would list billions. */
static int req_count_c(const char *call, MPI_Count count, MPI_Datatype datatype, MPI_Comm comm,
                       int *n_p, MPI_Datatype *t_p, int *made_p)
{
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    MPI_Datatype chunk, types[2];
    MPI_Aint displs[2], lb, extent;
    int lens[2], rc;

    *made_p = 0;
    *n_p = 0;
    *t_p = datatype;
    if (count >= 0 && count <= INT32_MAX) {
        *n_p = (int)count;
        return MPI_SUCCESS;
    }
    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (count < 0)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "count %lld is negative; pass the number "
                            "of elements, 0 or more", count);
    if ((t = onic_mpi_type_check(datatype, c, call, &rc)) == NULL)
        return rc;
    if (t->size == 0) {
        *n_p = 0;
        return MPI_SUCCESS;
    }
    if ((MPI_Count)(ONIC_MPI_LEN_MAX / t->size) < count)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "%lld elements of %zu bytes: onic moves at "
                            "most 2^42 bytes in one message", count, t->size);
    if (!t->contig)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "%lld elements of a non-contiguous type: "
                            "onic takes more than 2^31 - 1 elements only of a contiguous type; "
                            "send fewer, larger elements (MPI_Type_contiguous)", count);
    MPI_Type_get_extent(datatype, &lb, &extent);
    lens[0] = (int)(count >> REQ_CHUNK_SHIFT);
    lens[1] = (int)(count & ((1 << REQ_CHUNK_SHIFT) - 1));
    displs[0] = 0;
    displs[1] = (MPI_Aint)lens[0] * extent << REQ_CHUNK_SHIFT;
    if ((rc = MPI_Type_contiguous(1 << REQ_CHUNK_SHIFT, datatype, &chunk)) != MPI_SUCCESS)
        return rc;
    types[0] = chunk;
    types[1] = datatype;
    rc = MPI_Type_create_struct(2, lens, displs, types, t_p);
    MPI_Type_free(&chunk);
    if (rc != MPI_SUCCESS || (rc = MPI_Type_commit(t_p)) != MPI_SUCCESS)
        return rc;
    *n_p = 1;
    *made_p = 1;
    return MPI_SUCCESS;
}

int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    MPI_Datatype t;
    int n, made, rc = req_count_c("MPI_Send_c", count, datatype, comm, &n, &t, &made);

    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Send(buf, n, t, dest, tag, comm);
    if (made)
        MPI_Type_free(&t);
    return rc;
}

int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
               MPI_Comm comm, MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    MPI_Datatype t;
    int n, made, rc = req_count_c("MPI_Recv_c", count, datatype, comm, &n, &t, &made);

    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Recv(buf, n, t, source, tag, comm, status);
    if (made)
        MPI_Type_free(&t);
    return rc;
}

int MPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    ONIC_MPI_LOCKED;
    return req_get_count("MPI_Get_count_c", status, datatype, count == NULL, count);
}

/* --- Persistent requests --------------------------------------------------------------- */
static int req_init(onic_mpi_req_kind_t kind, onic_mpi_mode_t mode, const char *call,
                    const void *buf, int count, MPI_Datatype datatype, int peer, int tag,
                    MPI_Comm comm, MPI_Request *request)
{
    req_args_t a = { NULL, NULL };
    onic_mpi_req_t *r;
    int rc = req_check(call, kind == ONIC_MPI_REQ_SEND, buf, count, datatype, peer, tag, comm, &a);

    if (rc != MPI_SUCCESS)
        return rc;
    if (request == NULL)
        return onic_mpi_err(a.comm, MPI_ERR_ARG, call, "request is NULL");
    if ((r = req_make(kind, mode, call, buf, count, &a, peer, tag, &rc)) == NULL)
        return rc;
    r->keep = ONIC_MPI_KEEP_PERSISTENT;
    if ((rc = req_publish(r, call)) != MPI_SUCCESS) {
        onic_mpi_req_free(r);
        return rc;
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return req_init(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_STANDARD, "MPI_Send_init", buf, count, datatype, dest, tag, comm,
                    request);
}

/* Started, it completes only once its receive matched it (MPI_Issend). */
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return req_init(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_SYNC, "MPI_Ssend_init", buf, count,
                    datatype, dest, tag, comm, request);
}

/* Started, a ready send (MPI_Irsend): the receive must be posted first. */
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return req_init(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_READY, "MPI_Rsend_init", buf, count,
                    datatype, dest, tag, comm, request);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return req_init(ONIC_MPI_REQ_RECV, ONIC_MPI_MODE_STANDARD, "MPI_Recv_init", buf, count, datatype, source, tag, comm,
                    request);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return req_init(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_BUFFERED, "MPI_Bsend_init", buf, count,
                    datatype, dest, tag, comm, request);
}

static int bsend_start(onic_mpi_req_t *r, const char *call);

static int req_start_one(MPI_Request *request, const char *call)
{
    onic_mpi_req_t *r;
    int rc;

    if (request == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "request is NULL");
    if ((r = req_get(*request, call, &rc)) == NULL)
        return rc;
    if (!(r->keep & ONIC_MPI_KEEP_PERSISTENT) || r->active)
        return onic_mpi_err(r->comm, MPI_ERR_REQUEST, call, "request %#x is %s; start only an "
                            "inactive persistent request (MPI_Send_init, MPI_Bsend_init, "
                            "MPI_Recv_init)", (unsigned)*request,
                            r->kind == ONIC_MPI_REQ_GREQ ? "a generalized request"
                            : r->keep & ONIC_MPI_KEEP_PERSISTENT ? "already active"
                                                                 : "not persistent");
    if (r->kind == ONIC_MPI_REQ_SEND) {
        if (r->mode == ONIC_MPI_MODE_BUFFERED)
            return bsend_start(r, call);
        onic_mpi_bundle_begin();
    }
    return req_start(r);
}

int MPI_Start(MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT_KEEP("MPI_Start");
    return req_start_one(request, "MPI_Start");
}

int MPI_Startall(int count, MPI_Request *array_of_requests)
{
    ONIC_MPI_LOCKED;
    int rc;

    ONIC_MPI_CHECK_INIT_KEEP("MPI_Startall");
    if (count < 0 || (count > 0 && array_of_requests == NULL))
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Startall", "count %d with %s", count,
                            count < 0 ? "a negative count" : "a NULL array");
    for (int i = 0; i < count; i++)
        if ((rc = req_start_one(&array_of_requests[i], "MPI_Startall")) != MPI_SUCCESS)
            return rc;
    return MPI_SUCCESS;
}

/* --- Probe ---------------------------------------------------------------------------------- */
static int probe_check(const char *call, int source, int tag, MPI_Comm comm, req_args_t *a)
{
    return req_check(call, 0, NULL, 0, MPI_BYTE, source, tag, comm, a);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    req_args_t a;
    int rc = probe_check("MPI_Iprobe", source, tag, comm, &a);

    if (rc != MPI_SUCCESS)
        return rc;
    if (flag == NULL || status == NULL)
        return onic_mpi_err(a.comm, MPI_ERR_ARG, "MPI_Iprobe", "%s is NULL",
                            flag == NULL ? "flag" : "status (use MPI_STATUS_IGNORE)");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE) { /* MPI_ERROR left alone, as by any probe */
            status->MPI_SOURCE = MPI_PROC_NULL;
            status->MPI_TAG = MPI_ANY_TAG;
            status->onic_count = 0;
            status->onic_cancelled = 0;
        }
        return MPI_SUCCESS;
    }
    return onic_mpi_p2p_iprobe(a.comm, 0, source, tag, flag, status, "MPI_Iprobe");
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    req_args_t a;
    int flag = 0, rc = probe_check("MPI_Probe", source, tag, comm, &a);

    if (rc != MPI_SUCCESS)
        return rc;
    if (status == NULL)
        return onic_mpi_err(a.comm, MPI_ERR_ARG, "MPI_Probe", "status is NULL; use "
                            "MPI_STATUS_IGNORE");
    if (source == MPI_PROC_NULL)
        return MPI_Iprobe(source, tag, comm, &flag, status);
    for (;;) {
        rc = onic_mpi_p2p_iprobe(a.comm, 0, source, tag, &flag, status, "MPI_Probe");
        if (rc != MPI_SUCCESS || flag)
            return rc;
        onic_mpi_progress(1);
    }
}

/* --- Buffered sends -------------------------------------------------------------------------- */
int MPI_Buffer_attach(void *buffer, int size)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Buffer_attach");
    if (onic_mpi_g.bbuf != NULL)
        return onic_mpi_err(NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach", "a buffer is already "
                            "attached; detach it first with MPI_Buffer_detach");
    if (size < 0 || (buffer == NULL && size > 0))
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Buffer_attach", "buffer %p with size %d",
                            buffer, size);
    onic_mpi_g.bbuf = buffer;
    onic_mpi_g.bbuf_size = (size_t)size;
    return MPI_SUCCESS;
}

void onic_mpi_bsend_reap(void)
{
    while (!onic_dlist_empty(&onic_mpi_g.bsegs))
        onic_mpi_progress(1);
}

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Buffer_detach");
    if (buffer_addr == NULL || size == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Buffer_detach", "%s is NULL",
                            size == NULL ? "size" : "buffer_addr");
    /* Every buffered message is delivered before the buffer is handed back. */
    onic_mpi_bsend_reap();
    *(void **)buffer_addr = onic_mpi_g.bbuf;
    *size = (int)onic_mpi_g.bbuf_size;
    onic_mpi_g.bbuf = NULL;
    onic_mpi_g.bbuf_size = 0;
    return MPI_SUCCESS;
}

/* First fit in the attached buffer; segments are kept in address order. */
static onic_mpi_bseg_t *bseg_alloc(size_t len)
{
    size_t at = 0;
    onic_dlist_t *l;
    onic_mpi_bseg_t *s;

    for (l = onic_mpi_g.bsegs.next; l != &onic_mpi_g.bsegs; l = l->next) {
        onic_mpi_bseg_t *u = onic_container_of(l, onic_mpi_bseg_t, link);
        if (u->off - at >= len)
            break;
        at = u->off + u->len;
    }
    if (onic_mpi_g.bbuf_size < at || onic_mpi_g.bbuf_size - at < len)
        return NULL;
    if ((s = onic_malloc(sizeof(*s))) == NULL)
        return NULL;
    s->off = at;
    s->len = len;
    /* Before l: the list stays in address order. */
    s->link.next = l;
    s->link.prev = l->prev;
    l->prev->next = &s->link;
    l->prev = &s->link;
    return s;
}

/* A buffered send, its arguments checked: the message is copied into the
 * attached buffer and sent from there by a request that frees itself (and
 * its space) when done; it never waits for the receiver. */
static int bsend_checked(const char *call, const void *buf, int count, const req_args_t *ap,
                         int dest, int tag)
{
    req_args_t a = *ap;
    onic_mpi_req_t *r;
    onic_mpi_bseg_t *s;
    size_t bytes, need;
    int rc;

    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    bytes = a.type->size * (size_t)count;
    need = ((bytes + 7) & ~(size_t)7) + MPI_BSEND_OVERHEAD;
    if ((s = bseg_alloc(need)) == NULL) {
        onic_mpi_progress(0); /* finished buffered sends give their space back */
        s = bseg_alloc(need);
    }
    if (s == NULL)
        return onic_mpi_err(a.comm, MPI_ERR_BUFFER, call, "the attached buffer (%zu bytes) has "
                            "no room for %zu more bytes (the message plus MPI_BSEND_OVERHEAD); "
                            "attach a larger buffer with MPI_Buffer_attach", onic_mpi_g.bbuf_size,
                            need);
    if ((r = req_make(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_BUFFERED, call, buf, count, &a, dest, tag,
                      &rc)) == NULL) {
        bseg_release(s);
        return rc;
    }
    r->bseg = s;
    r->holds |= ONIC_MPI_HOLDS_BSEG;
    r->data = onic_mpi_g.bbuf + s->off;
    onic_mpi_type_pack(a.type, buf, count, r->data);
    r->user_freed = 1; /* nobody waits for it; it frees itself (and its space) */
    if ((rc = req_start(r)) != MPI_SUCCESS) {
        r->user_freed = 0;
        onic_mpi_req_free(r);
    }
    return rc;
}

/* MPI_Start of an MPI_Bsend_init request: the message goes into the
 * attached buffer as MPI_Bsend's would, and the request is complete at
 * once (the buffered mode's completion); with no room it stays inactive
 * and the start fails with MPI_ERR_BUFFER. */
static int bsend_start(onic_mpi_req_t *r, const char *call)
{
    req_args_t a = {r->comm, r->type};
    int rc = bsend_checked(call, r->buf, r->count, &a, r->peer, r->tag);

    if (rc != MPI_SUCCESS)
        return rc;
    req_status_empty(&r->status);
    r->active = 1;
    r->complete = 1;
    return MPI_SUCCESS;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    req_args_t a;
    int rc = req_check("MPI_Bsend", 1, buf, count, datatype, dest, tag, comm, &a);

    return rc != MPI_SUCCESS ? rc : bsend_checked("MPI_Bsend", buf, count, &a, dest, tag);
}

/* Complete as soon as the message is in the attached buffer (the standard's
 * buffered mode): the request handed back is done already. */
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Ibsend";
    req_args_t a;
    int rc = req_check(call, 1, buf, count, datatype, dest, tag, comm, &a);

    if (rc != MPI_SUCCESS)
        return rc;
    if (request == NULL)
        return onic_mpi_err(a.comm, MPI_ERR_ARG, call, "request is NULL; pass where to store "
                            "the request");
    if ((rc = bsend_checked(call, buf, count, &a, dest, tag)) != MPI_SUCCESS)
        return rc;
    return req_immediate_checked(ONIC_MPI_REQ_SEND, ONIC_MPI_MODE_BUFFERED, call, buf, 0, &a,
                                 MPI_PROC_NULL, tag, request);
}

/* --- Collectives' own requests ----------------------------------------------------------- */
/* An internal transfer, on comm's collective context (coll 1) or its
 * point-to-point one. */
static int coll_req(onic_mpi_req_kind_t kind, int coll, const char *call, const void *buf,
                    int count, onic_mpi_type_t *t, int peer, int tag, onic_mpi_comm_t *comm,
                    onic_mpi_req_t **r_p)
{
    req_args_t a = {comm, t};
    onic_mpi_req_t *r;
    int rc;

    /* The callers checked the user's roots: a rank outside the
     * communicator here is onic's own error, refused rather than sent to
     * whatever lies past the rank table. */
    if ((unsigned)peer >= (unsigned)comm->npeers && peer != MPI_PROC_NULL &&
        !(kind == ONIC_MPI_REQ_RECV && peer == MPI_ANY_SOURCE))
        return onic_mpi_err(comm, MPI_ERR_INTERN, call, "a transfer %s rank %d of a "
                            "communicator of %d: a bug in onic, please report it",
                            kind == ONIC_MPI_REQ_RECV ? "from" : "to", peer, comm->npeers);
    if ((r = req_make(kind, ONIC_MPI_MODE_STANDARD, call, buf, count, &a, peer, tag, &rc)) ==
        NULL)
        return rc;
    r->internal = 1;
    r->coll = coll;
    /* A collective's, started as a blocking send's, is never pulled
     * (onic_mpi_p2p_send_eager_slow): where both sides swap at once (an
     * allreduce's recursive doubling), measured, a 16 KiB allreduce of 2
     * processes took 12 us pulled against 6 eager. Set here, not tested
     * in send_start: MPI_Isend's straight line stays as it is. The
     * requests of MPI_Isendrecv (onic_mpi_req_sub_start) may be pulled,
     * as MPI_Sendrecv's are. */
    onic_mpi_g.start_blocking = coll;
    rc = req_start(r);
    onic_mpi_g.start_blocking = 0;
    if (rc != MPI_SUCCESS) {
        onic_mpi_req_free(r);
        return rc;
    }
    *r_p = r;
    return MPI_SUCCESS;
}

int onic_mpi_coll_isend(const void *buf, int count, onic_mpi_type_t *t, int dest, int tag,
                        onic_mpi_comm_t *comm, onic_mpi_req_t **r_p)
{
    return coll_req(ONIC_MPI_REQ_SEND, 1, "a collective", buf, count, t, dest, tag, comm, r_p);
}

int onic_mpi_coll_irecv(void *buf, int count, onic_mpi_type_t *t, int src, int tag,
                        onic_mpi_comm_t *comm, onic_mpi_req_t **r_p)
{
    return coll_req(ONIC_MPI_REQ_RECV, 1, "a collective", buf, count, t, src, tag, comm, r_p);
}

int onic_mpi_req_sub_start(int is_send, const void *buf, int count, onic_mpi_type_t *t,
                           int peer, int tag, onic_mpi_comm_t *comm, const char *call,
                           onic_mpi_req_t **r_p)
{
    return coll_req(is_send ? ONIC_MPI_REQ_SEND : ONIC_MPI_REQ_RECV, 0, call, buf, count, t,
                    peer, tag, comm, r_p);
}

int onic_mpi_coll_waitall(int n, onic_mpi_req_t **reqs, const char *call)
{
    int err = MPI_SUCCESS;
    onic_mpi_comm_t *c = NULL;

    for (int i = 0; i < n; i++) {
        if (reqs[i] == NULL)
            continue;
        while (!reqs[i]->complete)
            onic_mpi_progress(1);
        if (reqs[i]->status.MPI_ERROR != MPI_SUCCESS && err == MPI_SUCCESS) {
            err = reqs[i]->status.MPI_ERROR;
            c = reqs[i]->comm;
        }
        onic_mpi_req_free(reqs[i]);
        reqs[i] = NULL;
    }
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    return onic_mpi_err(c, err, call, "%s", err == MPI_ERR_TRUNCATE
                        ? "a process sent more than this one's counts allow; every process "
                          "must pass matching counts and types" : "a transfer failed");
}

/* --- Matched receives (probe.c) ------------------------------------------------------------ */
int onic_mpi_req_mrecv(void *buf, int count, onic_mpi_type_t *t, onic_mpi_comm_t *comm,
                       int source, const ptl_ovf_header_t *h, const char *call,
                       onic_mpi_req_t **r_p)
{
    req_args_t a = {comm, t};
    onic_mpi_req_t *r;
    int rc;

    if ((r = req_make(ONIC_MPI_REQ_RECV, ONIC_MPI_MODE_MATCHED, call, buf, count, &a, source,
                      MPI_ANY_TAG, &rc)) == NULL)
        return rc;
    r->mt_hdr = h;
    if ((rc = req_publish(r, call)) != MPI_SUCCESS || (rc = req_start(r)) != MPI_SUCCESS) {
        onic_mpi_req_free(r);
        return rc;
    }
    *r_p = r;
    return MPI_SUCCESS;
}

/* --- Testsome, Request_get_status ------------------------------------------------------ */
/* MPI_Waitsome without the wait: what has completed after one progress. */
int MPI_Testsome(int incount, MPI_Request *array_of_requests, int *outcount,
                 int *array_of_indices, MPI_Status *array_of_statuses)
{
    ONIC_MPI_LOCKED;
    return req_some("MPI_Testsome", 0, incount, array_of_requests, outcount, array_of_indices,
                    array_of_statuses);
}

/* MPI_Test that leaves the request as it is (not freed, still active). */
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    ONIC_MPI_LOCKED;
    onic_mpi_req_t *r;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Request_get_status");
    if (flag == NULL || status == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Request_get_status", "%s is NULL",
                            flag == NULL ? "flag" : "status (use MPI_STATUS_IGNORE)");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            req_status_empty(status);
        return MPI_SUCCESS;
    }
    if ((r = req_get(request, "MPI_Request_get_status", &rc)) == NULL)
        return rc;
    if (req_inactive(r)) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            req_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!r->complete)
        onic_mpi_progress(0);
    *flag = r->complete;
    if (r->complete && r->kind == ONIC_MPI_REQ_GREQ) {
        /* query_fn says the status, each time it is asked. */
        if ((rc = greq_query(r, status)) != MPI_SUCCESS)
            return onic_mpi_err(NULL, rc, "MPI_Request_get_status", "the generalized "
                                "request's query_fn returned this error");
        return MPI_SUCCESS;
    }
    if (r->complete && status != MPI_STATUS_IGNORE)
        onic_mpi_status_give(status, &r->status);
    return MPI_SUCCESS;
}

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                       MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Grequest_start";
    onic_mpi_req_t *r;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if (query_fn == NULL || free_fn == NULL || cancel_fn == NULL || request == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s is NULL; pass %s",
                            query_fn == NULL ? "query_fn" : free_fn == NULL ? "free_fn"
                            : cancel_fn == NULL ? "cancel_fn" : "request",
                            request == NULL ? "where to store the request"
                                            : "a function (one that returns MPI_SUCCESS will do)");
    if ((r = onic_mpi_req_new(ONIC_MPI_REQ_GREQ, call)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a request");
    /* Active until a wait or test finishes it (MPI_Finalize reports one
     * the program never completed); only MPI_Grequest_complete completes
     * it. */
    r->keep = ONIC_MPI_KEEP_PERSISTENT;
    r->active = 1;
    r->peer = MPI_PROC_NULL;
    r->gq_query = query_fn;
    r->gq_free = free_fn;
    r->gq_cancel = cancel_fn;
    r->gq_state = extra_state;
    if ((rc = req_publish(r, call)) != MPI_SUCCESS) {
        onic_mpi_req_free(r);
        return rc;
    }
    *request = r->handle;
    return MPI_SUCCESS;
}

int MPI_Grequest_complete(MPI_Request request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Grequest_complete";
    onic_mpi_req_t *r;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((r = req_get(request, call, &rc)) == NULL)
        return rc;
    if (r->kind != ONIC_MPI_REQ_GREQ || r->complete)
        return onic_mpi_err(r->comm, MPI_ERR_REQUEST, call, "request %#x is %s; complete only "
                            "a generalized request (MPI_Grequest_start), once",
                            (unsigned)request, r->kind != ONIC_MPI_REQ_GREQ
                            ? "not a generalized request" : "already complete");
    r->complete = 1;
    if (!r->user_freed)
        return MPI_SUCCESS;
    /* MPI_Request_free came first: the request goes now. */
    rc = r->gq_free(r->gq_state);
    onic_mpi_req_free(r);
    if (rc != MPI_SUCCESS)
        return onic_mpi_err(NULL, rc, call, "the generalized request's free_fn returned this "
                            "error");
    return MPI_SUCCESS;
}
