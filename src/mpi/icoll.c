/* Non-blocking collectives: MPI_Ibarrier, Ibcast, Ireduce, Iallreduce,
 * Igather, Iscatter, Iallgather, Ialltoall, their v-forms, Ialltoallw,
 * Ireduce_scatter(_block), Iscan, Iexscan, and MPI_Comm_idup, on intra-
 * and (but the scans) intercommunicators; and the rounds neighbor.c
 * builds for MPI_Ineighbor_*.
 *
 * Each call checks its arguments as its blocking form does, then builds a
 * schedule: a list of steps -- start a send or a receive on the
 * communicator's collective context, combine or unpack data here, or wait
 * until every transfer started so far is over (the end of a round). The
 * call starts the first round and returns a request. Every later call that
 * progresses (wait, test, probe, a blocking receive or collective, ...)
 * runs onic_mpi_icoll_progress after handling its events, which starts
 * the next round of every schedule whose round is over; the last one
 * completes the request, which MPI_Wait/Test and their kin then finish like
 * any other.
 *
 * Each collective on a communicator takes the next of its sequence numbers
 * and uses it as its tag (above the blocking collectives' tags): every
 * process starts a communicator's collectives in the same order, so the
 * numbers agree, and rounds of two outstanding collectives can be posted in
 * any order without one taking the other's messages.
 *
 * MPI_Isendrecv(_replace) is a schedule too (p2p set): one round, a send
 * and a receive on the point-to-point context with the user's tags, no
 * sequence number taken (only the caller knows of it); its request ends
 * with the receive's status. */
#include "mpi/mpi_impl.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

/* Tags of non-blocking collectives: 2^20 + their sequence number modulo
 * 2^20 (the blocking collectives use small tags). */
#define ICOLL_TAG_BASE (1 << 20)
#define ICOLL_TAG_SPAN (1 << 20)
/* A reduction's schedule moves its bytes as one count of MPI_BYTE (int). */
#define ICOLL_REDUCE_MAX ((size_t)INT32_MAX)

typedef enum {
    ICOLL_SEND,   /* buf, count, type to peer */
    ICOLL_RECV,   /* buf, count, type from peer */
    ICOLL_WAIT,   /* every transfer started so far is over */
    ICOLL_REDUCE, /* acc = acc op tmp, over bytes of packed elements */
    ICOLL_UNPACK, /* the packed acc into count elements of type at buf */
    ICOLL_CALL,   /* fn(schedule) */
} icoll_kind_t;

typedef struct icoll icoll_t;

typedef struct icoll_step {
    icoll_kind_t     kind;
    int              peer, count;
    void            *buf;
    onic_mpi_type_t *type;
    char            *acc, *tmp;
    void           (*fn)(icoll_t *s);
    onic_mpi_comm_t *on;        /* a transfer's communicator if not the schedule's */
    int              tag;       /* a point-to-point schedule's transfer: the user's */
} icoll_step_t;

struct icoll {
    onic_mpi_req_t  *req;       /* the user's request */
    onic_mpi_comm_t *comm;
    /* While a schedule is built: the communicator whose ranks the steps
     * being added name, if not comm (an intercommunicator's local side). */
    onic_mpi_comm_t *on;
    const char      *call;
    int              tag;
    icoll_step_t    *steps;
    int              nsteps, cap, next;
    onic_mpi_req_t **flight;    /* transfers of the current round */
    int              nflight;
    char            *scratch;   /* packed data: accumulator, children's parts */
    onic_mpi_type_t *types[2];  /* kept alive until the schedule ends */
    onic_mpi_type_t **wtypes;   /* Ialltoallw's, as many: kept alive too */
    int              nwtypes;
    onic_mpi_opd_t   op;
    onic_mpi_type_t *rtype;     /* the reduction's type */
    size_t           bytes;     /* of one packed reduction */
    int              failed;    /* the first transfer's error class, or 0 */
    MPI_Status       failed_status;
    onic_dlist_t     link;      /* in icoll_live_list, oldest first */
    /* MPI_Comm_idup: where the new communicator goes, its agreement on an
     * id (registered while claimed), the first step of its round. */
    MPI_Comm        *newcomm;
    unsigned         asserts;  /* the new communicator's hints (ONIC_MPI_ASSERT_*) */
    onic_mpi_ctx_claim_t claim;
    int              claimed;
    int              round;
    int              again;       /* a CALL step asks for the round again */
    /* MPI_Isendrecv: transfers on the point-to-point context with their
     * steps' tags; the receive whose status the request ends with, and
     * that status once it is over. */
    int              p2p;
    onic_mpi_req_t  *status_req;
    MPI_Status       result;
};

int onic_mpi_icoll_live;
static onic_dlist_t icoll_live_list = {&icoll_live_list, &icoll_live_list};
static int icoll_busy;

static onic_mpi_type_t *icoll_bytes(void)
{
    return onic_mpi_type_get(MPI_BYTE);
}

static char *icoll_at(void *buf, const onic_mpi_type_t *t, int count, int i)
{
    return (char *)buf + (ptrdiff_t)i * count * t->extent;
}

/* --- Building a schedule ------------------------------------------------------------------ */
static icoll_t *icoll_new(onic_mpi_comm_t *c, const char *call)
{
    icoll_t *s = onic_calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    s->comm = c;
    s->call = call;
    onic_dlist_init(&s->link);
    return s;
}

static void icoll_destroy(icoll_t *s)
{
    if (s->claimed)
        onic_mpi_ctx_claim_end(&s->claim);
    for (int i = 0; i < s->nflight; i++)
        if (s->flight[i] != NULL)
            onic_mpi_req_free(s->flight[i]);
    for (int i = 0; i < 2; i++)
        if (s->types[i] != NULL)
            onic_mpi_type_unref(s->types[i]);
    for (int i = 0; i < s->nwtypes; i++)
        onic_mpi_type_unref(s->wtypes[i]);
    onic_free(s->wtypes);
    onic_free(s->flight);
    onic_free(s->steps);
    onic_free(s->scratch);
    onic_free(s);
}

/* A step at the end; NULL for no memory (the schedule is then dropped). */
static icoll_step_t *icoll_step(icoll_t *s, icoll_kind_t kind, int peer, void *buf, int count,
                                onic_mpi_type_t *t)
{
    icoll_step_t *st;

    if (s->nsteps == s->cap) {
        int cap = s->cap > 0 ? 2 * s->cap : 16;
        icoll_step_t *n = onic_realloc(s->steps, (size_t)cap * sizeof(*n));
        if (n == NULL)
            return NULL;
        s->steps = n;
        s->cap = cap;
    }
    st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    st->peer = peer;
    st->buf = buf;
    st->count = count;
    st->type = t;
    st->on = s->on;
    return st;
}

/* The same: 0, or -1 for no memory. */
static int icoll_add(icoll_t *s, icoll_kind_t kind, int peer, void *buf, int count,
                     onic_mpi_type_t *t)
{
    return icoll_step(s, kind, peer, buf, count, t) != NULL ? 0 : -1;
}

/* A step that reads (and for REDUCE also writes) packed data. */
static int icoll_add_packed(icoll_t *s, icoll_kind_t kind, char *acc, char *tmp, void *buf,
                            int count, onic_mpi_type_t *t)
{
    icoll_step_t *st = icoll_step(s, kind, 0, buf, count, t);

    if (st == NULL)
        return -1;
    st->acc = acc;
    st->tmp = tmp;
    return 0;
}

static void icoll_keep_type(icoll_t *s, int i, onic_mpi_type_t *t)
{
    if (t != NULL && !t->predefined) {
        onic_mpi_type_ref(t);
        s->types[i] = t;
    }
}

/* --- Running a schedule -------------------------------------------------------------------- */
static void icoll_transfer_done(icoll_t *s, onic_mpi_req_t *r)
{
    if (r == s->status_req) {
        s->result = r->status;
        s->status_req = NULL;
    }
    if (r->status.MPI_ERROR != MPI_SUCCESS && !s->failed) {
        s->failed = r->status.MPI_ERROR;
        s->failed_status = r->status;
    }
    onic_mpi_req_free(r);
}

/* Start steps up to the next wait (or the end); 1 once all are done. */
static int icoll_advance(icoll_t *s)
{
    for (;;) {
        for (int i = 0; i < s->nflight; i++)
            if (!s->flight[i]->complete)
                return 0;
        for (int i = 0; i < s->nflight; i++)
            icoll_transfer_done(s, s->flight[i]);
        s->nflight = 0;
        if (s->next == s->nsteps)
            return 1;
        for (; s->next < s->nsteps; s->next++) {
            icoll_step_t *st = &s->steps[s->next];
            onic_mpi_req_t *r = NULL;
            int rc = MPI_SUCCESS;

            if (st->kind == ICOLL_WAIT) {
                s->next++;
                break;
            }
            switch (st->kind) {
            case ICOLL_SEND:
                if (s->p2p) {
                    rc = onic_mpi_req_sub_start(1, st->buf, st->count, st->type, st->peer,
                                                st->tag, s->comm, s->call, &r);
                    break;
                }
                rc = onic_mpi_coll_isend(st->buf, st->count, st->type, st->peer, s->tag,
                                         st->on != NULL ? st->on : s->comm, &r);
                break;
            case ICOLL_RECV:
                if (s->p2p) {
                    rc = onic_mpi_req_sub_start(0, st->buf, st->count, st->type, st->peer,
                                                st->tag, s->comm, s->call, &r);
                    s->status_req = r;
                    break;
                }
                rc = onic_mpi_coll_irecv(st->buf, st->count, st->type, st->peer, s->tag,
                                         st->on != NULL ? st->on : s->comm, &r);
                break;
            case ICOLL_REDUCE:
                /* tmp = acc op tmp, then acc takes it: the order MPI asks of
                 * an operation that does not commute (acc holds lower ranks). */
                onic_mpi_coll_apply(&s->op, s->rtype, st->acc, st->tmp, s->bytes);
                memcpy(st->acc, st->tmp, s->bytes);
                break;
            case ICOLL_UNPACK:
                if (!s->failed)
                    onic_mpi_type_unpack(st->type, st->acc, s->bytes, st->buf, st->count);
                break;
            case ICOLL_CALL:
                st->fn(s);
                if (s->again) {
                    /* The round's steps again, at once; alone in its
                     * communicator (no transfer to wait for) from the next
                     * progress on, so that what else is live moves on. */
                    s->again = 0;
                    s->next = s->round;
                    if (s->comm->local == NULL && s->comm->size == 1)
                        return 0;
                    goto next_round;
                }
                break;
            case ICOLL_WAIT:
                break;
            }
            if (rc != MPI_SUCCESS && !s->failed) {
                /* Reported where it happened; the other processes' transfers
                 * still run, so they do not hang. */
                s->failed = rc;
                s->failed_status.MPI_SOURCE = st->peer;
                s->failed_status.MPI_TAG = s->tag;
                s->failed_status.onic_count = 0;
            }
            if (r != NULL)
                s->flight[s->nflight++] = r;
        }
    next_round:;
    }
}

static void icoll_finish(icoll_t *s)
{
    onic_mpi_req_t *r = s->req;

    onic_dlist_del(&s->link);
    onic_mpi_icoll_live--;
    if (s->p2p) {
        r->status = s->result;
        r->status.MPI_ERROR = s->failed;
    } else if (s->failed) {
        r->status = s->failed_status;
        r->status.MPI_ERROR = s->failed;
    }
    icoll_destroy(s);
    onic_mpi_req_complete(r);
}

void onic_mpi_icoll_progress(void)
{
    onic_dlist_t *l, *next;

    /* A send short of credit polls, and so comes back here: the outer
     * pass goes on where it was. */
    if (icoll_busy)
        return;
    icoll_busy = 1;
    for (l = icoll_live_list.next; l != &icoll_live_list; l = next) {
        icoll_t *s = onic_container_of(l, icoll_t, link);
        next = l->next;
        if (icoll_advance(s))
            icoll_finish(s);
    }
    icoll_busy = 0;
}

void onic_mpi_icoll_fini(void)
{
    while (icoll_live_list.next != &icoll_live_list) {
        icoll_t *s = onic_container_of(icoll_live_list.next, icoll_t, link);
        onic_dlist_del(&s->link);
        /* Its requests, never completed, go with the request pool. */
        s->nflight = 0;
        icoll_destroy(s);
    }
    onic_mpi_icoll_live = 0;
}

/* The schedule is built: make its request, take a tag, start it. */
static int icoll_start(icoll_t *s, MPI_Request *request)
{
    onic_mpi_comm_t *c = s->comm;
    const char *call = s->call; /* for the reports after s is gone */
    onic_mpi_req_t *r;

    if ((s->flight = onic_calloc((size_t)s->nsteps + 1, sizeof(*s->flight))) == NULL ||
        (r = onic_mpi_req_new(ONIC_MPI_REQ_COLL, call)) == NULL) {
        icoll_destroy(s);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a request");
    }
    if (onic_mpi_htab_add(&onic_mpi_g.reqs, r, &r->handle) != 0) {
        r->handle = MPI_REQUEST_NULL;
        onic_mpi_req_free(r);
        icoll_destroy(s);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a request handle");
    }
    r->comm = c;
    r->peer = MPI_PROC_NULL;
    r->active = 1;
    s->req = r;
    /* On an intercommunicator (MPI_Comm_idup only) the tags skip the two
     * its blocking agreements use (intercomm.c). */
    if (s->p2p) {
        /* Its steps carry the user's tags. */
    } else if (c->local != NULL) {
        s->tag = ICOLL_TAG_BASE + 2 + (int)(c->icoll_seq++ % (ICOLL_TAG_SPAN - 2));
    } else {
        s->tag = ICOLL_TAG_BASE + (int)(c->icoll_seq++ % ICOLL_TAG_SPAN);
    }
    *request = r->handle;
    onic_dlist_push_tail(&icoll_live_list, &s->link);
    onic_mpi_icoll_live++;
    /* The first round starts now; a nested progress (a send short of
     * credit) must not run this schedule meanwhile. */
    icoll_busy++;
    if (icoll_advance(s)) {
        icoll_busy--;
        icoll_finish(s);
        return MPI_SUCCESS;
    }
    icoll_busy--;
    return MPI_SUCCESS;
}

static int icoll_nomem(onic_mpi_comm_t *c, icoll_t *s, const char *call)
{
    if (s != NULL)
        icoll_destroy(s);
    return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a collective's schedule");
}

int onic_mpi_icoll_sendrecv(onic_mpi_comm_t *c, const char *call, const void *sendbuf,
                            int sendcount, onic_mpi_type_t *st, int dest, int sendtag,
                            void *recvbuf, int recvcount, onic_mpi_type_t *rt, int source,
                            int recvtag, char *copy, MPI_Request *request)
{
    icoll_t *s = icoll_new(c, call);
    icoll_step_t *recv, *send;

    if (s == NULL) {
        onic_free(copy);
        return icoll_nomem(c, NULL, call);
    }
    s->p2p = 1;
    s->scratch = copy;
    s->result.MPI_SOURCE = MPI_ANY_SOURCE;
    s->result.MPI_TAG = MPI_ANY_TAG;
    /* The receive first, as MPI_Sendrecv posts it: a message to self finds
     * it posted. */
    if ((recv = icoll_step(s, ICOLL_RECV, source, recvbuf, recvcount, rt)) == NULL ||
        (send = icoll_step(s, ICOLL_SEND, dest, (void *)sendbuf, sendcount, st)) == NULL)
        return icoll_nomem(c, s, call);
    recv->tag = recvtag;
    send->tag = sendtag;
    return icoll_start(s, request);
}

static int icoll_request_check(onic_mpi_comm_t *c, const char *call, MPI_Request *request)
{
    if (request == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "request is NULL; pass where to store the "
                            "request");
    return MPI_SUCCESS;
}

/* --- The trees ------------------------------------------------------------------------------ */
/* The communicator the steps being added are on. */
static onic_mpi_comm_t *icoll_side(const icoll_t *s)
{
    return s->on != NULL ? s->on : s->comm;
}

/* Dissemination barrier: in round k, send to rank + 2^k, hear from rank - 2^k. */
static int icoll_barrier_steps(icoll_t *s)
{
    onic_mpi_comm_t *c = icoll_side(s);

    for (int dist = 1; dist < c->size; dist *= 2)
        if (icoll_add(s, ICOLL_RECV, (c->rank - dist + c->size) % c->size, NULL, 0,
                      icoll_bytes()) != 0 ||
            icoll_add(s, ICOLL_SEND, (c->rank + dist) % c->size, NULL, 0, icoll_bytes()) != 0 ||
            icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0)
            return -1;
    return 0;
}

/* Binomial broadcast of buf from root (ranks relative to root): receive
 * from the parent, then a wait, then send to the children. */
static int icoll_tree_bcast(icoll_t *s, void *buf, int count, onic_mpi_type_t *t, int root)
{
    onic_mpi_comm_t *c = icoll_side(s);
    int n = c->size, rel = (c->rank - root + n) % n, mask;

    for (mask = 1; mask < n; mask <<= 1)
        if (rel & mask) {
            if (icoll_add(s, ICOLL_RECV, (rel - mask + root) % n, buf, count, t) != 0 ||
                icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0)
                return -1;
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n && icoll_add(s, ICOLL_SEND, (rel + mask + root) % n, buf, count, t) != 0)
            return -1;
    return icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL);
}

/* Binomial reduction of the packed acc (s->bytes) to rank 0 of a tree
 * whose subtrees hold consecutive ranks, combined in rank order, then
 * handed to root if root is not 0. tmp has room for a part per child. */
static int icoll_tree_reduce(icoll_t *s, char *acc, char *tmp, int root)
{
    onic_mpi_comm_t *c = icoll_side(s);
    onic_mpi_type_t *b = icoll_bytes();
    int n = c->size, r = c->rank, mask, k = 0, bytes = (int)s->bytes;

    for (mask = 1; mask < n && !(r & mask); mask <<= 1)
        if (r + mask < n &&
            icoll_add(s, ICOLL_RECV, r + mask, tmp + (size_t)k++ * s->bytes, bytes, b) != 0)
            return -1;
    if (icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0)
        return -1;
    for (int i = 0; i < k; i++)
        if (icoll_add_packed(s, ICOLL_REDUCE, acc, tmp + (size_t)i * s->bytes, NULL, 0, NULL) != 0)
            return -1;
    /* The wait after it: root may receive the result into acc next. */
    if (r != 0 && (icoll_add(s, ICOLL_SEND, r - mask, acc, bytes, b) != 0 ||
                   icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0))
        return -1;
    if (root != 0 && r == 0 && icoll_add(s, ICOLL_SEND, root, acc, bytes, b) != 0)
        return -1;
    if (root != 0 && r == root && icoll_add(s, ICOLL_RECV, 0, acc, bytes, b) != 0)
        return -1;
    return icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL);
}

/* Parts a process of the reduction tree receives, one per child: at most
 * ceil(log2 n), rank 0's (icoll_tree_reduce's k). */
static int icoll_tree_parts(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* A reduction's schedule over scratch (bytes per packed input), which it
 * owns from here on: freed with it, or now if there is no memory for it. */
static icoll_t *icoll_new_reduction(onic_mpi_comm_t *c, const char *call, char *scratch,
                                    size_t bytes, const onic_mpi_opd_t *o, onic_mpi_type_t *t)
{
    icoll_t *s = icoll_new(c, call);

    if (s == NULL) {
        onic_free(scratch);
        return NULL;
    }
    s->scratch = scratch;
    s->bytes = bytes;
    s->op = *o;
    s->rtype = t;
    icoll_keep_type(s, 1, t);
    return s;
}

/* --- Intercommunicators ---------------------------------------------------------------------- */
/* The blocking forms' algorithms (intercoll.c) as schedules: the local
 * side's steps on ic->local (the trees above, s->on), the leaders' (local
 * rank 0) and the roots' messages on the intercommunicator. A process of
 * the root's group other than the root (MPI_PROC_NULL) still makes an empty
 * schedule: it takes its sequence number, as every member does. */

/* A plan (intercoll.c) made (rc) as one round; its types kept. */
static int icoll_plan(onic_mpi_comm_t *c, const char *call, int rc, onic_mpi_plan_t *p,
                      MPI_Request *request)
{
    icoll_t *s;

    if (rc == MPI_SUCCESS && (rc = icoll_request_check(c, call, request)) != MPI_SUCCESS)
        onic_mpi_plan_free(p);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((s = icoll_new(c, call)) == NULL ||
        (s->wtypes = onic_calloc(2 * (size_t)p->n + 1, sizeof(*s->wtypes))) == NULL) {
        onic_mpi_plan_free(p);
        return icoll_nomem(c, s, call);
    }
    s->scratch = p->copy; /* MPI_IN_PLACE's copy, which the sends read */
    p->copy = NULL;
    for (int k = 0; k < 2 * p->n; k++) {
        int peer = (c->rank + k / 2) % p->n; /* not all to rank 0 first */
        onic_mpi_pair_t *x = k % 2 ? &p->send[peer] : &p->recv[peer];
        if (x->type == NULL)
            continue;
        if (icoll_add(s, k % 2 ? ICOLL_SEND : ICOLL_RECV, peer, x->buf, x->count, x->type) != 0) {
            onic_mpi_plan_free(p);
            return icoll_nomem(c, s, call);
        }
        onic_mpi_type_ref(x->type);
        s->wtypes[s->nwtypes++] = x->type;
    }
    onic_mpi_plan_free(p);
    return icoll_start(s, request);
}

/* The neighbourhood collectives (neighbor.c): their transfers as one
 * round, started in the order given (which neighbor.c chose so that
 * messages between two processes match the right slots). */
int onic_mpi_icoll_xfers(onic_mpi_comm_t *c, const char *call, int n, const onic_mpi_xfer_t *x,
                         MPI_Request *request)
{
    icoll_t *s;

    if ((s = icoll_new(c, call)) == NULL ||
        (s->wtypes = onic_calloc((size_t)n + 1, sizeof(*s->wtypes))) == NULL)
        return icoll_nomem(c, s, call);
    for (int i = 0; i < n; i++) {
        if (icoll_add(s, x[i].send ? ICOLL_SEND : ICOLL_RECV, x[i].peer, x[i].buf, x[i].count,
                      x[i].type) != 0)
            return icoll_nomem(c, s, call);
        onic_mpi_type_ref(x[i].type);
        s->wtypes[s->nwtypes++] = x[i].type;
    }
    return icoll_start(s, request);
}

/* Igather(v) and Iscatter(v) on an intercommunicator (counts NULL: the
 * plain forms), as intercoll.c's plan. */
static int icoll_ic_rooted(onic_mpi_comm_t *ic, const char *call, int gather,
                           const void *sendbuf, int sendcount, const int sendcounts[],
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           const int recvcounts[], MPI_Datatype recvtype, const int displs[],
                           int root, MPI_Request *request)
{
    onic_mpi_plan_t p;
    int rc = gather ? onic_mpi_inter_gather(ic, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvcounts, displs, recvtype, root, call, &p)
                    : onic_mpi_inter_scatter(ic, sendbuf, sendcount, sendcounts, displs,
                                             sendtype, recvbuf, recvcount, recvtype, root, call,
                                             &p);

    return icoll_plan(ic, call, rc, &p, request);
}

/* Iallgather(v) and Ialltoall(v) on an intercommunicator, the same way. */
static int icoll_ic_all(onic_mpi_comm_t *ic, const char *call, int to_all, const void *sendbuf,
                        int sendcount, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        MPI_Request *request)
{
    onic_mpi_plan_t p;
    int rc = onic_mpi_coll_alltoall_any(ic, call, to_all, sendbuf, sendcount, sendcounts,
                                        sdispls, sendtype, NULL, recvbuf, recvcount, recvcounts,
                                        rdispls, recvtype, NULL, &p);

    return icoll_plan(ic, call, rc, &p, request);
}

/* The trees on an intercommunicator's local side, rooted at local rank 0. */
static int icoll_local_bcast(icoll_t *s, void *buf, int count, onic_mpi_type_t *t)
{
    int rc;

    s->on = s->comm->local;
    rc = icoll_tree_bcast(s, buf, count, t, 0);
    s->on = NULL;
    return rc;
}

static int icoll_local_reduce(icoll_t *s, char *acc, char *tmp)
{
    int rc;

    s->on = s->comm->local;
    rc = icoll_tree_reduce(s, acc, tmp, 0);
    s->on = NULL;
    return rc;
}

/* The leaders swap `bytes` packed bytes: mine goes, theirs comes. */
static int icoll_leaders_swap(icoll_t *s, char *mine, char *theirs, int bytes)
{
    if (icoll_add(s, ICOLL_RECV, 0, theirs, bytes, icoll_bytes()) != 0 ||
        icoll_add(s, ICOLL_SEND, 0, mine, bytes, icoll_bytes()) != 0)
        return -1;
    return icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL);
}

/* Every local process is in; the leaders tell each other so; the
 * broadcast lets the group out only once the other group is in. */
static int icoll_ic_barrier(onic_mpi_comm_t *ic, const char *call, MPI_Request *request)
{
    icoll_t *s;
    int rc, bad;

    if ((rc = icoll_request_check(ic, call, request)) != MPI_SUCCESS)
        return rc;
    if ((s = icoll_new(ic, call)) == NULL)
        return icoll_nomem(ic, s, call);
    s->on = ic->local;
    bad = icoll_barrier_steps(s) != 0;
    s->on = NULL;
    if (bad || (ic->local->rank == 0 && icoll_leaders_swap(s, NULL, NULL, 0) != 0) ||
        icoll_local_bcast(s, NULL, 0, icoll_bytes()) != 0)
        return icoll_nomem(ic, s, call);
    return icoll_start(s, request);
}

/* The root (MPI_ROOT) sends to remote rank 0, which broadcasts in its group. */
static int icoll_ic_bcast(onic_mpi_comm_t *ic, const char *call, void *buf, int count,
                          MPI_Datatype datatype, int root, MPI_Request *request)
{
    onic_mpi_type_t *t = NULL;
    icoll_t *s;
    int rc, role = 0;

    if ((rc = onic_mpi_inter_root(ic, call, root, &role)) != MPI_SUCCESS ||
        (role != 0 && (rc = onic_mpi_coll_buf(ic, call, "", buf, count, datatype, &t)) !=
                          MPI_SUCCESS) ||
        (rc = icoll_request_check(ic, call, request)) != MPI_SUCCESS)
        return rc;
    if ((s = icoll_new(ic, call)) == NULL)
        return icoll_nomem(ic, s, call);
    icoll_keep_type(s, 0, t);
    if ((role == 1 && (icoll_add(s, ICOLL_SEND, 0, buf, count, t) != 0 ||
                       icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0)) ||
        (role == -1 && ic->local->rank == 0 &&
         (icoll_add(s, ICOLL_RECV, root, buf, count, t) != 0 ||
          icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0)) ||
        (role == -1 && icoll_local_bcast(s, buf, count, t) != 0))
        return icoll_nomem(ic, s, call);
    return icoll_start(s, request);
}

/* Ireduce (rooted), Iallreduce (counts NULL) and Ireduce_scatter (block i
 * of the result, counts[i] elements, to local process i; count is their
 * sum): this group's input reduced over its local tree to its leader,
 * which sends it to the root, or swaps it with the other leader and hands
 * the other group's result to its group. The scratch: the accumulator, the
 * result, the tree's parts. */
static int icoll_ic_reduce(const char *call, onic_mpi_comm_t *ic, const void *sendbuf,
                           void *recvbuf, int count, const int counts[], MPI_Datatype datatype,
                           MPI_Op op, int rooted, int root, MPI_Request *request)
{
    onic_mpi_comm_t *l = ic->local;
    onic_mpi_type_t *t = NULL;
    onic_mpi_opd_t o;
    icoll_t *s;
    char *scratch, *res;
    size_t bytes, at = 0;
    int rc, role = -1, bad, mine = counts != NULL ? counts[l->rank] : count;

    if ((rooted && (rc = onic_mpi_inter_root(ic, call, root, &role)) != MPI_SUCCESS) ||
        (!rooted && (rc = onic_mpi_coll_buf(ic, call, "recv", recvbuf, mine, datatype, &t)) !=
                        MPI_SUCCESS) ||
        (role != 0 &&
         (rc = onic_mpi_inter_reduce_check(ic, call, role == -1, sendbuf, recvbuf, count,
                                           datatype, op, &t, &o)) != MPI_SUCCESS) ||
        (rc = icoll_request_check(ic, call, request)) != MPI_SUCCESS)
        return rc;
    if (role == 0) {
        if ((s = icoll_new(ic, call)) == NULL)
            return icoll_nomem(ic, s, call);
        return icoll_start(s, request);
    }
    bytes = t->size * (size_t)count;
    if (bytes > ICOLL_REDUCE_MAX)
        return onic_mpi_err(ic, MPI_ERR_COUNT, call, "%d elements of %zu bytes: %s reduces at "
                            "most %zu bytes in one call", count, t->size, call, ICOLL_REDUCE_MAX);
    if ((scratch = onic_malloc(bytes * (size_t)(icoll_tree_parts(l->size) + 2) + 1)) == NULL ||
        (s = icoll_new_reduction(ic, call, scratch, bytes, &o, t)) == NULL)
        return icoll_nomem(ic, NULL, call);
    res = scratch + bytes;
    if (role == 1) {
        /* The root: the other group's result, from its leader. */
        if (icoll_add(s, ICOLL_RECV, 0, res, (int)bytes, icoll_bytes()) != 0 ||
            icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0 ||
            icoll_add_packed(s, ICOLL_UNPACK, res, NULL, recvbuf, count, t) != 0)
            return icoll_nomem(ic, s, call);
        return icoll_start(s, request);
    }
    onic_mpi_type_pack(t, sendbuf, count, scratch);
    if (icoll_local_reduce(s, scratch, res + bytes) != 0)
        return icoll_nomem(ic, s, call);
    if (rooted) {
        if (l->rank == 0 && (icoll_add(s, ICOLL_SEND, root, scratch, (int)bytes,
                                       icoll_bytes()) != 0 ||
                             icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0))
            return icoll_nomem(ic, s, call);
        return icoll_start(s, request);
    }
    /* The groups' totals must agree: a longer one is a truncation here. */
    bad = l->rank == 0 && icoll_leaders_swap(s, scratch, res, (int)bytes) != 0;
    if (counts == NULL) {
        bad = bad || icoll_local_bcast(s, res, (int)bytes, icoll_bytes()) != 0;
    } else {
        s->on = l;
        for (int i = 1; i < l->size && l->rank == 0 && !bad; i++) {
            at += t->size * (size_t)counts[i - 1];
            bad = icoll_add(s, ICOLL_SEND, i, res + at, (int)(t->size * (size_t)counts[i]),
                            icoll_bytes()) != 0;
        }
        if (l->rank > 0)
            bad = bad || icoll_add(s, ICOLL_RECV, 0, res, (int)(t->size * (size_t)mine),
                                   icoll_bytes()) != 0;
        bad = bad || icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0;
        s->on = NULL;
    }
    if (bad || icoll_add_packed(s, ICOLL_UNPACK, res, NULL, recvbuf, mine, t) != 0)
        return icoll_nomem(ic, s, call);
    return icoll_start(s, request);
}

/* --- The calls ----------------------------------------------------------------------------- */
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Ibarrier";
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    icoll_t *s;
    int rc;

    if (c != NULL)
        return icoll_ic_barrier(c, call, request);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = icoll_request_check(c, call, request)) != MPI_SUCCESS)
        return rc;
    if ((s = icoll_new(c, call)) == NULL || icoll_barrier_steps(s) != 0)
        return icoll_nomem(c, s, call);
    return icoll_start(s, request);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Ibcast";
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    onic_mpi_type_t *t;
    icoll_t *s;
    int rc;

    if (c != NULL)
        return icoll_ic_bcast(c, call, buffer, count, datatype, root, request);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_buf(c, call, "", buffer, count, datatype, &t)) != MPI_SUCCESS ||
        (rc = icoll_request_check(c, call, request)) != MPI_SUCCESS)
        return rc;
    if ((s = icoll_new(c, call)) == NULL)
        return icoll_nomem(c, s, call);
    icoll_keep_type(s, 0, t);
    if (icoll_tree_bcast(s, buffer, count, t, root) != 0)
        return icoll_nomem(c, s, call);
    return icoll_start(s, request);
}

/* Ireduce and Iallreduce: the input packed, reduced over the tree to
 * root (all: to 0, then broadcast packed), unpacked into recvbuf. */
static int icoll_reduce(const char *call, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, int root, int all, MPI_Comm comm,
                        MPI_Request *request)
{
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    onic_mpi_opd_t o;
    icoll_t *s;
    char *acc, *scratch;
    size_t bytes;
    int rc;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return icoll_ic_reduce(call, c, sendbuf, recvbuf, count, NULL, datatype, op, !all, root,
                               request);
    if (request == NULL) {
        if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS)
            return rc;
        return icoll_request_check(c, call, request);
    }
    if ((rc = onic_mpi_coll_reduce_begin(call, comm, sendbuf, recvbuf, count, datatype, op,
                                         all ? 0 : root, all, ICOLL_REDUCE_MAX, &c, &t, &o,
                                         &acc, &bytes, ONIC_MPI_ACC_MALLOC)) !=
        MPI_SUCCESS)
        return rc;
    /* The accumulator, then a part per child of the tree. */
    scratch = onic_realloc(acc, bytes * (size_t)(icoll_tree_parts(c->size) + 1) + 1);
    if (scratch == NULL) {
        onic_free(acc);
        return icoll_nomem(c, NULL, call);
    }
    if ((s = icoll_new_reduction(c, call, scratch, bytes, &o, t)) == NULL)
        return icoll_nomem(c, NULL, call);
    if (icoll_tree_reduce(s, scratch, scratch + bytes, all ? 0 : root) != 0 ||
        (all && icoll_tree_bcast(s, scratch, (int)bytes, icoll_bytes(), 0) != 0))
        return icoll_nomem(c, s, call);
    if ((all || c->rank == root) &&
        icoll_add_packed(s, ICOLL_UNPACK, scratch, NULL, recvbuf, count, t) != 0)
        return icoll_nomem(c, s, call);
    return icoll_start(s, request);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, 0, comm,
                        request);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_reduce("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, 0, 1, comm,
                        request);
}

/* The checks of gather and scatter (rooted) and of the all- forms:
 * comm, root, MPI_IN_PLACE where the form allows it, both sides. */
static int icoll_sides(const char *call, MPI_Comm comm, int rooted, int root, int gather,
                       const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       const void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       MPI_Request *request, onic_mpi_comm_t **c_p, onic_mpi_type_t **st_p,
                       onic_mpi_type_t **rt_p)
{
    onic_mpi_comm_t *c;
    int rc, is_root, send_side, recv_side;

    if ((rc = onic_mpi_coll_comm(comm, call, c_p)) != MPI_SUCCESS)
        return rc;
    c = *c_p;
    if (rooted && (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS)
        return rc;
    is_root = !rooted || c->rank == root;
    /* gather: every process sends, the root receives; scatter the reverse;
     * the all- forms both. MPI_IN_PLACE stands for the root's own block
     * (gather: sendbuf; scatter: recvbuf), or everyone's sendbuf in the
     * all- forms. */
    send_side = !rooted || gather || is_root;
    recv_side = !rooted || !gather || is_root;
    if ((gather ? sendbuf : recvbuf) == MPI_IN_PLACE && !is_root)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is for the root only");
    if ((rc = onic_mpi_coll_sides(c, call, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                  recvtype, send_side && sendbuf != MPI_IN_PLACE,
                                  recv_side && recvbuf != MPI_IN_PLACE, st_p, rt_p)) !=
        MPI_SUCCESS)
        return rc;
    return icoll_request_check(c, call, request);
}

/* Igather and Iscatter: the root's own block copied here, one transfer
 * per other process (gather: each sends its block to the root; scatter:
 * the root sends block i to process i). */
static int icoll_rooted(const char *call, int gather, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    onic_mpi_type_t *st, *rt;
    icoll_t *s;
    int rc;

    if (c != NULL)
        return icoll_ic_rooted(c, call, gather, sendbuf, sendcount, NULL, sendtype, recvbuf,
                               recvcount, NULL, recvtype, NULL, root, request);
    if ((rc = icoll_sides(call, comm, 1, root, gather, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, request, &c, &st, &rt)) != MPI_SUCCESS)
        return rc;
    if ((s = icoll_new(c, call)) == NULL)
        return icoll_nomem(c, s, call);
    icoll_keep_type(s, 0, st);
    icoll_keep_type(s, 1, rt);
    if (c->rank != root) {
        if ((gather ? icoll_add(s, ICOLL_SEND, root, (void *)sendbuf, sendcount, st)
                    : icoll_add(s, ICOLL_RECV, root, recvbuf, recvcount, rt)) != 0)
            return icoll_nomem(c, s, call);
        return icoll_start(s, request);
    }
    /* MPI_IN_PLACE (gather's sendbuf, scatter's recvbuf): the block is there. */
    if ((gather ? sendbuf : recvbuf) != MPI_IN_PLACE &&
        (rc = onic_mpi_coll_local_copy(
             c, call, gather ? sendbuf : icoll_at((void *)sendbuf, st, sendcount, root),
             sendcount, st, gather ? icoll_at(recvbuf, rt, recvcount, root) : recvbuf,
             recvcount, rt)) != MPI_SUCCESS) {
        icoll_destroy(s);
        return rc;
    }
    for (int i = 0; i < c->size; i++)
        if (i != root &&
            (gather ? icoll_add(s, ICOLL_RECV, i, icoll_at(recvbuf, rt, recvcount, i), recvcount,
                                rt)
                    : icoll_add(s, ICOLL_SEND, i, icoll_at((void *)sendbuf, st, sendcount, i),
                                sendcount, st)) != 0)
            return icoll_nomem(c, s, call);
    return icoll_start(s, request);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_rooted("MPI_Igather", 1, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_rooted("MPI_Iscatter", 0, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request);
}

/* Iallgather and Ialltoall: every transfer of one round, posted at once;
 * block i of the send side goes to process i (alltoall) or the one send
 * block to all (allgather). MPI_IN_PLACE: allgather's own block is in
 * recvbuf already; alltoall sends from a packed copy of recvbuf. */
static int icoll_all(const char *call, int to_all, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    onic_mpi_type_t *st, *rt;
    icoll_t *s;
    int rc;

    if (c != NULL)
        return icoll_ic_all(c, call, to_all, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                            recvcount, NULL, NULL, recvtype, request);
    if ((rc = icoll_sides(call, comm, 0, 0, 1, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, request, &c, &st, &rt)) != MPI_SUCCESS)
        return rc;
    if ((s = icoll_new(c, call)) == NULL)
        return icoll_nomem(c, s, call);
    icoll_keep_type(s, 0, st);
    icoll_keep_type(s, 1, rt);
    if (sendbuf == MPI_IN_PLACE && to_all) {
        sendbuf = icoll_at(recvbuf, rt, recvcount, c->rank);
        sendcount = recvcount;
        st = rt;
    } else if (sendbuf == MPI_IN_PLACE) {
        size_t bytes = rt->size * (size_t)recvcount * (size_t)c->size;
        if ((s->scratch = onic_malloc(bytes + 1)) == NULL)
            return icoll_nomem(c, s, call);
        onic_mpi_type_pack(rt, recvbuf, recvcount * c->size, s->scratch);
        sendbuf = s->scratch;
        st = icoll_bytes();
        sendcount = (int)(rt->size * (size_t)recvcount);
    }
    for (int i = 0; i < c->size; i++) {
        int peer = (c->rank + i) % c->size; /* not all to rank 0 first */
        if (to_all && peer == c->rank) {
            if (sendbuf != icoll_at(recvbuf, rt, recvcount, c->rank) &&
                (rc = onic_mpi_coll_local_copy(c, call, sendbuf, sendcount, st,
                                               icoll_at(recvbuf, rt, recvcount, peer), recvcount,
                                               rt)) != MPI_SUCCESS) {
                icoll_destroy(s);
                return rc;
            }
            continue;
        }
        if (icoll_add(s, ICOLL_RECV, peer, icoll_at(recvbuf, rt, recvcount, peer), recvcount,
                      rt) != 0 ||
            icoll_add(s, ICOLL_SEND, peer,
                      to_all ? (void *)sendbuf : icoll_at((void *)sendbuf, st, sendcount, peer),
                      sendcount, st) != 0)
            return icoll_nomem(c, s, call);
    }
    return icoll_start(s, request);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_all("MPI_Iallgather", 1, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, comm, request);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_all("MPI_Ialltoall", 0, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, comm, request);
}

/* --- MPI_Comm_idup ----------------------------------------------------------------------------- */
/* The processes agree on a context id in rounds (comm.c's claims: its
 * comment says why they end), each a reduction (AND) and a broadcast of
 * the offers. The round's steps are made once and run again as long as
 * the agreement goes on: a further round allocates nothing, so it cannot
 * fail at one process and leave the others waiting for its messages. */

static void icoll_idup_finish(icoll_t *s);
/* The leaders AND the other group's offer into their own. */
static void icoll_idup_and(icoll_t *s)
{
    uint64_t *mine = (uint64_t *)s->scratch;
    const uint64_t *theirs = (const uint64_t *)(s->scratch + s->bytes);

    for (size_t w = 0; w < s->bytes / sizeof(uint64_t); w++)
        mine[w] &= theirs[w];
}

/* An intercommunicator's round: each group reduces its offers over its
 * local side, the leaders (local rank 0) swap theirs on the
 * intercommunicator and AND them, and each broadcasts the result to its
 * group; then the finish. The scratch: the offer, the other group's, the
 * tree's parts. */
static int icoll_ic_round(icoll_t *s)
{
    char *theirs = s->scratch + s->bytes;
    icoll_step_t *st;

    if (icoll_local_reduce(s, s->scratch, theirs + s->bytes) != 0)
        return -1;
    if (s->comm->local->rank == 0) {
        if (icoll_leaders_swap(s, s->scratch, theirs, (int)s->bytes) != 0 ||
            (st = icoll_step(s, ICOLL_CALL, 0, NULL, 0, NULL)) == NULL)
            return -1;
        st->fn = icoll_idup_and;
    }
    if (icoll_local_bcast(s, s->scratch, (int)s->bytes, icoll_bytes()) != 0 ||
        (st = icoll_step(s, ICOLL_CALL, 0, NULL, 0, NULL)) == NULL)
        return -1;
    st->fn = icoll_idup_finish;
    return 0;
}

/* A round's steps, over the offer in the scratch. 0, or -1 for no memory. */
static int icoll_idup_round(icoll_t *s)
{
    icoll_step_t *st;

    s->round = s->nsteps;
    if (s->comm->local != NULL)
        return icoll_ic_round(s);
    if (icoll_tree_reduce(s, s->scratch, s->scratch + s->bytes, 0) != 0 ||
        icoll_tree_bcast(s, s->scratch, (int)s->bytes, icoll_bytes(), 0) != 0 ||
        (st = icoll_step(s, ICOLL_CALL, 0, NULL, 0, NULL)) == NULL)
        return -1;
    st->fn = icoll_idup_finish;
    return 0;
}

static void icoll_idup_finish(icoll_t *s)
{
    int id = -2, rc;

    /* A failed transfer ends it here; the AND of the others' rounds then
     * misses this process's part, so they wait: as any collective whose
     * transfer failed (only a peer's death or a mismatch makes one). */
    if (!s->failed && (id = onic_mpi_ctx_settle(&s->claim, (uint64_t *)s->scratch)) == -1) {
        onic_mpi_ctx_offer(&s->claim, (uint64_t *)s->scratch);
        s->again = 1;
        return;
    }
    onic_mpi_ctx_claim_end(&s->claim);
    s->claimed = 0;
    *s->newcomm = MPI_COMM_NULL;
    if (s->failed)
        return;
    if (id < 0) {
        onic_error("mpi: rank %d: MPI_Comm_idup: no context id is free at every process: "
                   "a process has none left of the %d (in use, or held by other creations in "
                   "progress); free communicators, or create fewer at once", onic_mpi_g.rank,
                   ONIC_MPI_MAX_CTX);
        s->failed = MPI_ERR_OTHER;
        return;
    }
    if (s->comm->local != NULL)
        rc = onic_mpi_intercomm_dup_as(s->comm, id, s->call, s->newcomm);
    else
        rc = onic_mpi_comm_dup_as(s->comm, id, s->call, s->newcomm);
    if (rc != MPI_SUCCESS) {
        s->failed = rc;
        *s->newcomm = MPI_COMM_NULL;
        return;
    }
    onic_mpi_comm_lookup(*s->newcomm)->asserts = s->asserts;
}

/* MPI_Comm_idup, the new communicator's hints `asserts` (its parent's, or
 * MPI_Comm_idup_with_info's info's). */
static int icoll_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request, int with_info,
                      MPI_Info info)
{
    const char *call = with_info ? "MPI_Comm_idup_with_info" : "MPI_Comm_idup";
    size_t bytes = ONIC_MPI_CTX_OFFER_WORDS * sizeof(uint64_t);
    onic_mpi_type_t *u64 = onic_mpi_type_get(MPI_UINT64_T);
    onic_mpi_comm_t *c;
    icoll_t *s;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL ||
        (rc = icoll_request_check(c, call, request)) != MPI_SUCCESS)
        return rc;
    if (newcomm == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "newcomm is NULL; pass where to store the "
                            "new communicator");
    if ((s = icoll_new(c, call)) == NULL ||
        (s->scratch = onic_calloc(icoll_tree_parts(c->local != NULL ? c->local->size : c->size)
                                  + 2, bytes)) == NULL)
        return icoll_nomem(c, s, call);
    if ((rc = onic_mpi_coll_op_check(MPI_BAND, u64, c->local != NULL ? c->local : c, call,
                                     &s->op)) != MPI_SUCCESS) {
        icoll_destroy(s);
        return rc;
    }
    s->rtype = u64;
    s->bytes = bytes;
    s->newcomm = newcomm;
    s->asserts = with_info ? onic_mpi_info_asserts(info, 0) : c->asserts;
    if (icoll_idup_round(s) != 0)
        return icoll_nomem(c, s, call);
    /* Its priority: the collective number icoll_start takes next. From
     * here on icoll_destroy gives back what it holds. */
    onic_mpi_ctx_claim_begin(&s->claim, c, c->icoll_seq);
    s->claimed = 1;
    onic_mpi_ctx_offer(&s->claim, (uint64_t *)s->scratch);
    return icoll_start(s, request);
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_idup(comm, newcomm, request, 0, MPI_INFO_NULL);
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                            MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    int rc = onic_mpi_comm_hints_check(comm, info, "MPI_Comm_idup_with_info");

    return rc != MPI_SUCCESS ? rc : icoll_idup(comm, newcomm, request, 1, info);
}

/* --- The v-forms ------------------------------------------------------------------------------- */
/* counts[] and displs[] of the communicator's size: given, none negative. */
static int icoll_counts(onic_mpi_comm_t *c, const char *call, const char *what,
                        const int counts[], const int displs[])
{
    if (counts == NULL || displs == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s%s is NULL", what,
                            counts == NULL ? "counts" : "displs");
    for (int i = 0; i < c->size; i++)
        if (counts[i] < 0)
            return onic_mpi_err(c, MPI_ERR_COUNT, call, "%scounts[%d] = %d is negative", what,
                                i, counts[i]);
    return MPI_SUCCESS;
}

/* Igatherv and Iscatterv: as Igather and Iscatter, block i being counts[i]
 * elements at displs[i] extents into the root's buffer. */
static int icoll_rooted_v(const char *call, int gather, const void *sendbuf, int sendcount,
                          const int sendcounts[], MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, const int recvcounts[], MPI_Datatype recvtype,
                          const int displs[], int root, MPI_Comm comm, MPI_Request *request)
{
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    onic_mpi_type_t *st = NULL, *rt = NULL, *t;
    const int *counts = gather ? recvcounts : sendcounts;
    void *rootbuf = gather ? recvbuf : (void *)(uintptr_t)sendbuf;
    icoll_t *s;
    int rc, in_place;

    if (c != NULL)
        return icoll_ic_rooted(c, call, gather, sendbuf, sendcount, sendcounts, sendtype,
                               recvbuf, recvcount, recvcounts, recvtype, displs, root, request);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS ||
        (rc = icoll_request_check(c, call, request)) != MPI_SUCCESS)
        return rc;
    in_place = (gather ? sendbuf : recvbuf) == MPI_IN_PLACE;
    if (in_place && c->rank != root)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is for the root only");
    /* Every process's own block; the root's counts and buffer. */
    if (!in_place &&
        (rc = gather ? onic_mpi_coll_buf(c, call, "send", sendbuf, sendcount, sendtype, &st)
                     : onic_mpi_coll_buf(c, call, "recv", recvbuf, recvcount, recvtype, &rt)) !=
            MPI_SUCCESS)
        return rc;
    if (c->rank == root) {
        int any = 0;
        if ((rc = icoll_counts(c, call, gather ? "recv" : "send", counts, displs)) !=
                MPI_SUCCESS ||
            (rc = gather ? onic_mpi_coll_buf(c, call, "recv", recvbuf, 0, recvtype, &rt)
                         : onic_mpi_coll_buf(c, call, "send", sendbuf, 0, sendtype, &st)) !=
                MPI_SUCCESS)
            return rc;
        for (int i = 0; i < c->size; i++)
            any |= counts[i] > 0;
        t = gather ? rt : st;
        if (rootbuf == NULL && any && t->size > 0)
            return onic_mpi_err(c, MPI_ERR_BUFFER, call, "%sbuf is NULL with data to move",
                                gather ? "recv" : "send");
    }
    if ((s = icoll_new(c, call)) == NULL)
        return icoll_nomem(c, s, call);
    icoll_keep_type(s, 0, st);
    icoll_keep_type(s, 1, rt);
    if (c->rank != root) {
        if ((gather ? icoll_add(s, ICOLL_SEND, root, (void *)(uintptr_t)sendbuf, sendcount, st)
                    : icoll_add(s, ICOLL_RECV, root, recvbuf, recvcount, rt)) != 0)
            return icoll_nomem(c, s, call);
        return icoll_start(s, request);
    }
    t = gather ? rt : st;
    if (!in_place &&
        (rc = gather ? onic_mpi_coll_local_copy(c, call, sendbuf, sendcount, st,
                                                icoll_at(recvbuf, rt, 1, displs[root]),
                                                recvcounts[root], rt)
                     : onic_mpi_coll_local_copy(c, call, icoll_at(rootbuf, st, 1, displs[root]),
                                                sendcounts[root], st, recvbuf, recvcount, rt)) !=
            MPI_SUCCESS) {
        icoll_destroy(s);
        return rc;
    }
    for (int i = 0; i < c->size; i++)
        if (i != root && icoll_add(s, gather ? ICOLL_RECV : ICOLL_SEND, i,
                                   icoll_at(rootbuf, t, 1, displs[i]), counts[i], t) != 0)
            return icoll_nomem(c, s, call);
    return icoll_start(s, request);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_rooted_v("MPI_Igatherv", 1, sendbuf, sendcount, NULL, sendtype, recvbuf, 0,
                          recvcounts, recvtype, displs, root, comm, request);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_rooted_v("MPI_Iscatterv", 0, sendbuf, 0, sendcounts, sendtype, recvbuf,
                          recvcount, NULL, recvtype, displs, root, comm, request);
}

/* Iallgatherv and Ialltoallv: every transfer in one round, as Iallgather
 * and Ialltoall. MPI_IN_PLACE: allgatherv's own block is in place;
 * alltoallv sends block i of a packed copy of recvbuf to process i. */
static int icoll_all_v(const char *call, int to_all, const void *sendbuf, int sendcount,
                       const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    onic_mpi_type_t *st = NULL, *rt;
    icoll_t *s;
    size_t *offs = NULL;
    int rc, in_place = sendbuf == MPI_IN_PLACE, any = 0;

    if (c != NULL)
        return icoll_ic_all(c, call, to_all, sendbuf, sendcount, sendcounts, sdispls, sendtype,
                            recvbuf, 0, recvcounts, rdispls, recvtype, request);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = icoll_request_check(c, call, request)) != MPI_SUCCESS ||
        (rc = icoll_counts(c, call, "recv", recvcounts, rdispls)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_buf(c, call, "recv", recvbuf, 0, recvtype, &rt)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < c->size; i++)
        any |= recvcounts[i] > 0;
    if (recvbuf == NULL && any && rt->size > 0)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "recvbuf is NULL with data to move");
    if (!in_place && to_all &&
        (rc = onic_mpi_coll_buf(c, call, "send", sendbuf, sendcount, sendtype, &st)) !=
            MPI_SUCCESS)
        return rc;
    if (!in_place && !to_all) {
        any = 0;
        if ((rc = icoll_counts(c, call, "send", sendcounts, sdispls)) != MPI_SUCCESS ||
            (rc = onic_mpi_coll_buf(c, call, "send", sendbuf, 0, sendtype, &st)) != MPI_SUCCESS)
            return rc;
        for (int i = 0; i < c->size; i++)
            any |= sendcounts[i] > 0;
        if (sendbuf == NULL && any && st->size > 0)
            return onic_mpi_err(c, MPI_ERR_BUFFER, call, "sendbuf is NULL with data to move");
    }
    if ((s = icoll_new(c, call)) == NULL)
        return icoll_nomem(c, s, call);
    icoll_keep_type(s, 0, st);
    icoll_keep_type(s, 1, rt);
    if (in_place && to_all) {
        sendbuf = icoll_at(recvbuf, rt, 1, rdispls[c->rank]);
        sendcount = recvcounts[c->rank];
        st = rt;
    } else if (in_place) {
        size_t total = 0;
        if ((offs = onic_calloc((size_t)c->size + 1, sizeof(*offs))) == NULL)
            return icoll_nomem(c, s, call);
        for (int i = 0; i < c->size; i++) {
            offs[i] = total;
            total += rt->size * (size_t)recvcounts[i];
        }
        if (total > INT32_MAX || (s->scratch = onic_malloc(total + 1)) == NULL) {
            onic_free(offs);
            icoll_destroy(s);
            return onic_mpi_err(c, total > INT32_MAX ? MPI_ERR_COUNT : MPI_ERR_NO_MEM, call,
                                "MPI_IN_PLACE: no room for a copy of the %zu bytes of recvbuf",
                                total);
        }
        for (int i = 0; i < c->size; i++)
            onic_mpi_type_pack(rt, icoll_at(recvbuf, rt, 1, rdispls[i]), recvcounts[i],
                               s->scratch + offs[i]);
    }
    for (int k = 0; k < c->size; k++) {
        int peer = (c->rank + k) % c->size; /* not all to rank 0 first */
        void *rb = icoll_at(recvbuf, rt, 1, rdispls[peer]), *sb;
        int sc;
        if (to_all && peer == c->rank) {
            if (!in_place && (rc = onic_mpi_coll_local_copy(c, call, sendbuf, sendcount, st, rb,
                                                            recvcounts[peer], rt)) !=
                                 MPI_SUCCESS) {
                icoll_destroy(s);
                return rc;
            }
            continue;
        }
        if (to_all) {
            sb = (void *)(uintptr_t)sendbuf;
            sc = sendcount;
        } else if (in_place) {
            sb = s->scratch + offs[peer];
            sc = (int)(rt->size * (size_t)recvcounts[peer]);
        } else {
            sb = icoll_at((void *)(uintptr_t)sendbuf, st, 1, sdispls[peer]);
            sc = sendcounts[peer];
        }
        if (icoll_add(s, ICOLL_RECV, peer, rb, recvcounts[peer], rt) != 0 ||
            icoll_add(s, ICOLL_SEND, peer, sb, sc, in_place && !to_all ? icoll_bytes() : st) != 0) {
            onic_free(offs);
            return icoll_nomem(c, s, call);
        }
    }
    onic_free(offs);
    return icoll_start(s, request);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_all_v("MPI_Iallgatherv", 1, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                       recvcounts, displs, recvtype, comm, request);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_all_v("MPI_Ialltoallv", 0, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf,
                       recvcounts, rdispls, recvtype, comm, request);
}

/* --- Reduce-scatter, scans ---------------------------------------------------------------------- */
/* The reduction's schedule: the input packed (sendbuf, or recvbuf in
 * place) into scratch, which has room for the accumulator and `parts`
 * more packed inputs. */
static int icoll_reduction(const char *call, MPI_Comm comm, const void *sendbuf, void *recvbuf,
                           int count, MPI_Datatype datatype, MPI_Op op, int parts,
                           MPI_Request *request, icoll_t **s_p)
{
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    onic_mpi_opd_t o;
    char *acc, *scratch;
    size_t bytes;
    icoll_t *s;
    int rc;

    /* recvbuf is checked by the caller (reduce-scatter's is smaller). */
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = icoll_request_check(c, call, request)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_reduce_begin(call, comm, sendbuf,
                                         sendbuf == MPI_IN_PLACE ? recvbuf : (void *)(uintptr_t)sendbuf,
                                         count, datatype, op, 0, 1, ICOLL_REDUCE_MAX, &c, &t,
                                         &o, &acc, &bytes, ONIC_MPI_ACC_MALLOC)) != MPI_SUCCESS)
        return rc;
    if ((scratch = onic_realloc(acc, bytes * (size_t)(parts + 1) + 1)) == NULL) {
        onic_free(acc);
        return icoll_nomem(c, NULL, call);
    }
    if ((s = icoll_new_reduction(c, call, scratch, bytes, &o, t)) == NULL)
        return icoll_nomem(c, NULL, call);
    *s_p = s;
    return MPI_SUCCESS;
}

/* Ireduce_scatter: the reduction to rank 0 over the tree, then rank 0
 * sends block i (recvcounts[i] packed elements) to process i. */
static int icoll_reduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                                const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, MPI_Request *request)
{
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    onic_mpi_type_t *t;
    icoll_t *s;
    size_t at = 0;
    int rc, total;

    if ((c == NULL && (rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS) ||
        (rc = onic_mpi_coll_rs_counts(c, call, recvcounts, &total)) != MPI_SUCCESS)
        return rc;
    if (c->local != NULL)
        return icoll_ic_reduce(call, c, sendbuf, recvbuf, total, recvcounts, datatype, op, 0, 0,
                               request);
    if (sendbuf != MPI_IN_PLACE &&
        (rc = onic_mpi_coll_buf(c, call, "recv", recvbuf, recvcounts[c->rank], datatype, &t)) !=
            MPI_SUCCESS)
        return rc;
    if ((rc = icoll_reduction(call, comm, sendbuf, recvbuf, total, datatype, op,
                              icoll_tree_parts(c->size), request, &s)) != MPI_SUCCESS)
        return rc;
    t = s->rtype;
    if (icoll_tree_reduce(s, s->scratch, s->scratch + s->bytes, 0) != 0)
        return icoll_nomem(c, s, call);
    for (int i = 0; i < c->size; i++) {
        size_t b = t->size * (size_t)recvcounts[i];
        if ((c->rank == 0 && i > 0 &&
             icoll_add(s, ICOLL_SEND, i, s->scratch + at, (int)b, icoll_bytes()) != 0) ||
            (c->rank == i && i > 0 &&
             (icoll_add(s, ICOLL_RECV, 0, s->scratch, (int)b, icoll_bytes()) != 0 ||
              icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0)))
            return icoll_nomem(c, s, call);
        at += b;
    }
    /* In place, the result goes to the start of recvbuf. */
    if (icoll_add_packed(s, ICOLL_UNPACK, s->scratch, NULL, recvbuf, recvcounts[c->rank], t) !=
            0 ||
        icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0)
        return icoll_nomem(c, s, call);
    return icoll_start(s, request);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_reduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype,
                                op, comm, request);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Ireduce_scatter_block";
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    int rc, *counts;

    if (c == NULL && (rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS)
        return rc;
    if ((rc = onic_mpi_coll_block_counts(c, call, recvcount, &counts)) != MPI_SUCCESS)
        return rc;
    rc = icoll_reduce_scatter(call, sendbuf, recvbuf, counts, datatype, op, comm, request);
    onic_free(counts);
    return rc;
}

/* Iscan and Iexscan: the prefix of ranks 0..r-1 from r - 1 (exscan's
 * result), combined as prefix op ours (rank order) and passed to r + 1. */
static int icoll_scan(const char *call, int exclusive, const void *sendbuf, void *recvbuf,
                      int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      MPI_Request *request)
{
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    icoll_t *s;
    char *mine, *prev;
    int rc;

    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_buf(c, call, "recv", recvbuf, count, datatype, &t)) != MPI_SUCCESS ||
        (rc = icoll_reduction(call, comm, sendbuf, recvbuf, count, datatype, op, 1, request,
                              &s)) != MPI_SUCCESS)
        return rc;
    mine = s->scratch;
    prev = s->scratch + s->bytes;
    if (c->rank > 0) {
        /* Exscan's result is the prefix before us; rank 0's is undefined
         * (its recvbuf is left as it is). */
        if (icoll_add(s, ICOLL_RECV, c->rank - 1, prev, (int)s->bytes, icoll_bytes()) != 0 ||
            icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0 ||
            (exclusive &&
             icoll_add_packed(s, ICOLL_UNPACK, prev, NULL, recvbuf, count, t) != 0) ||
            icoll_add_packed(s, ICOLL_REDUCE, prev, mine, NULL, 0, NULL) != 0)
            return icoll_nomem(c, s, call);
    }
    if ((!exclusive && icoll_add_packed(s, ICOLL_UNPACK, mine, NULL, recvbuf, count, t) != 0) ||
        (c->rank + 1 < c->size &&
         icoll_add(s, ICOLL_SEND, c->rank + 1, mine, (int)s->bytes, icoll_bytes()) != 0) ||
        icoll_add(s, ICOLL_WAIT, 0, NULL, 0, NULL) != 0)
        return icoll_nomem(c, s, call);
    return icoll_start(s, request);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_scan("MPI_Iscan", 0, sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return icoll_scan("MPI_Iexscan", 1, sendbuf, recvbuf, count, datatype, op, comm, request);
}

/* Ialltoallw (either kind of communicator): MPI_Alltoallw's plan
 * (intercoll.c) as one round. */
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Ialltoallw";
    onic_mpi_comm_t *c;
    onic_mpi_plan_t p;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL ||
        (rc = icoll_request_check(c, call, request)) != MPI_SUCCESS)
        return rc;
    if (recvtypes == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "recvtypes is NULL");
    return icoll_plan(c, call,
                      onic_mpi_coll_alltoall_any(c, call, 0, sendbuf, 0, sendcounts, sdispls,
                                                 MPI_BYTE, sendtypes, recvbuf, 0, recvcounts,
                                                 rdispls, MPI_BYTE, recvtypes, &p),
                      &p, request);
}
