/* Communicators and groups.
 *
 * A group is the list of world ranks of its members (world ranks are
 * Portals pids). A communicator is a group, this process's rank in it, and
 * a context id from 0 to ONIC_MPI_MAX_CTX - 1: its point-to-point traffic
 * carries context 2*id in the match bits, its collectives 2*id + 1, so
 * neither can match the other's, nor another communicator's.
 *
 * Context ids: every process keeps a mask of the ids it does not use; a new
 * communicator takes an id free at every process taking part -- the
 * parent's, the group's of MPI_Comm_create_group, both groups' of an
 * intercommunicator -- (ANDs over offers of ids: the claims below), so an
 * id is never in use twice at any process that could receive on it. World is 0, self 1 (self's
 * traffic never leaves the process). Freed ids return to the mask.
 *
 * Freeing: MPI_Comm_free takes the handle at once, but the object (and
 * its id) only once every operation on it has ended, as MPI asks: a
 * receive still posted on the id must not take a later communicator's
 * messages, and collectives, idups and requests still read the object.
 * A count per communicator kept by every request would cost every
 * message; instead the free finds the requests that have not ended (a
 * walk of the request handles and of the request pool,
 * onic_mpi_req_hold_comm) and marks them ONIC_MPI_KEEP_COMM, in a word
 * that the wait's path tests already; each marked one tells the
 * communicator as it ends (onic_mpi_comm_request_done), and the last
 * releases it. A non-blocking collective's schedule ends before its
 * request does, so its request alone holds the communicator. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static onic_mpi_group_t comm_group_empty = {MPI_GROUP_EMPTY, 0, NULL, 1, 1};
/* Communicators freed with requests outstanding (pending > 0), or whose
 * requests ended, one with an error not yet reported (reporting). */
static onic_dlist_t comm_freed = {&comm_freed, &comm_freed};

onic_mpi_group_t *onic_mpi_group_new(int size)
{
    onic_mpi_group_t *g = onic_calloc(1, sizeof(*g));

    if (g == NULL)
        return NULL;
    g->size = size;
    g->refs = 1;
    g->handle = MPI_GROUP_NULL;
    if (size > 0 && (g->world = onic_calloc((size_t)size, sizeof(int))) == NULL) {
        onic_free(g);
        return NULL;
    }
    return g;
}

void onic_mpi_group_unref(onic_mpi_group_t *g)
{
    if (g == NULL || g->predefined || --g->refs > 0)
        return;
    onic_free(g->world);
    onic_free(g);
}

/* A handle for a new group object: the handle owns its reference. Groups
 * behind handles are never shared with communicators (copies are), so
 * MPI_Group_free can always drop the handle and its object together. */
int onic_mpi_group_publish(onic_mpi_group_t *g, MPI_Group *h)
{
    if (onic_mpi_htab_add(&onic_mpi_g.groups, g, &g->handle) != 0)
        return -1;
    *h = g->handle;
    return 0;
}

onic_mpi_group_t *onic_mpi_group_copy(const onic_mpi_group_t *g)
{
    onic_mpi_group_t *c = onic_mpi_group_new(g->size);

    if (c != NULL && g->size > 0)
        memcpy(c->world, g->world, (size_t)g->size * sizeof(int));
    return c;
}

onic_mpi_group_t *onic_mpi_group_get(MPI_Group h)
{
    return onic_mpi_htab_get(&onic_mpi_g.groups, h);
}

onic_mpi_comm_t *onic_mpi_comm_new(onic_mpi_group_t *g, int id, MPI_Errhandler errh)
{
    onic_mpi_comm_t *c = onic_calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    c->id = id;
    c->group = g;
    c->peers = g;
    c->size = c->npeers = g->size;
    c->rank = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == onic_mpi_g.rank)
            c->rank = i;
    c->errh = errh;
    return c;
}

static void comm_destroy(onic_mpi_comm_t *c)
{
    onic_mpi_g.ctx_free[c->id / 64] |= UINT64_C(1) << (c->id % 64);
    onic_mpi_topo_free(c->topo);
    onic_mpi_attr_release(c);
    if (c->local != NULL) { /* an intercommunicator: its hidden local side shares the id */
        onic_mpi_group_unref(c->local->group);
        onic_free(c->local);
        onic_mpi_group_unref(c->peers);
    }
    onic_mpi_group_unref(c->group);
    onic_free(c);
}

int onic_mpi_comm_init(void)
{
    onic_mpi_group_t *gw = onic_mpi_group_new(onic_mpi_g.size), *gs = onic_mpi_group_new(1);
    onic_mpi_comm_t *world, *self;

    if (gw == NULL || gs == NULL)
        goto err_free_groups;
    for (int i = 0; i < onic_mpi_g.size; i++)
        gw->world[i] = i;
    gs->world[0] = onic_mpi_g.rank;
    memset(onic_mpi_g.ctx_free, 0xff, sizeof(onic_mpi_g.ctx_free));
    onic_mpi_g.ctx_free[0] &= ~UINT64_C(3);
    onic_dlist_init(&onic_mpi_g.ctx_claims);
    world = onic_mpi_comm_new(gw, 0, MPI_ERRORS_ARE_FATAL);
    self = onic_mpi_comm_new(gs, 1, MPI_ERRORS_ARE_FATAL);
    if (world == NULL || self == NULL) {
        onic_free(world);
        onic_free(self);
        goto err_free_groups;
    }
    world->handle = MPI_COMM_WORLD;
    world->predefined = 1;
    onic_mpi_g.world = world;
    self->handle = MPI_COMM_SELF;
    self->predefined = 1;
    if (onic_mpi_htab_set(&onic_mpi_g.comms, 0, world) != 0 ||
        onic_mpi_htab_set(&onic_mpi_g.comms, 1, self) != 0 ||
        onic_mpi_htab_set(&onic_mpi_g.groups, 0, &comm_group_empty) != 0) {
        onic_free(world);
        onic_free(self);
        goto err_free_groups;
    }
    return 0;

err_free_groups:
    onic_mpi_group_unref(gw);
    onic_mpi_group_unref(gs);
    return -1;
}

void onic_mpi_comm_request_done(onic_mpi_comm_t *c, int later)
{
    /* A wait of several requests reports the first error after all have
     * ended: a later one may be the last, and the report still to come. */
    c->reporting |= later;
    if (--c->pending > 0 || c->reporting)
        return;
    onic_dlist_del(&c->freed_link);
    comm_destroy(c);
}

void onic_mpi_comm_reap(void)
{
    onic_dlist_t *l, *next;

    for (l = comm_freed.next; l != &comm_freed; l = next) {
        onic_mpi_comm_t *c = onic_container_of(l, onic_mpi_comm_t, freed_link);
        next = l->next;
        c->reporting = 0;
        if (c->pending == 0) {
            onic_dlist_del(&c->freed_link);
            comm_destroy(c);
        }
    }
}

void onic_mpi_comm_fini(void)
{
    onic_mpi_htab_t *t = &onic_mpi_g.comms;

    /* Those freed with requests never ended: the requests go with their pool. */
    while (comm_freed.next != &comm_freed) {
        onic_mpi_comm_t *c = onic_container_of(comm_freed.next, onic_mpi_comm_t, freed_link);
        onic_dlist_del(&c->freed_link);
        comm_destroy(c);
    }

    for (int i = 0; i < t->used; i++)
        if (t->obj[i] != NULL)
            comm_destroy(t->obj[i]);
    onic_mpi_g.world = NULL;
    t = &onic_mpi_g.groups;
    for (int i = 1; i < t->used; i++) {
        onic_mpi_group_t *g = t->obj[i];
        if (g != NULL) { /* handles the program never freed */
            onic_free(g->world);
            onic_free(g);
        }
    }
}

onic_mpi_comm_t *onic_mpi_comm_get(MPI_Comm h, const char *call, int *rc_p)
{
    onic_mpi_comm_t *c = onic_mpi_htab_get(&onic_mpi_g.comms, h);

    if (c == NULL)
        *rc_p = onic_mpi_err(NULL, MPI_ERR_COMM, call, "communicator %#x is %s; pass "
                             "MPI_COMM_WORLD, MPI_COMM_SELF or one made by MPI_Comm_dup, "
                             "MPI_Comm_split or MPI_Comm_create", (unsigned)h,
                             h == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a live communicator");
    return c;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_rank");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_rank", &rc)) == NULL)
        return rc;
    if (rank == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL; pass an int's "
                            "address");
    *rank = c->rank;
    return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_size");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_size", &rc)) == NULL)
        return rc;
    if (size == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL; pass an int's "
                            "address");
    *size = c->size;
    return MPI_SUCCESS;
}

/* --- Agreeing on a context id --------------------------------------------------------------
 * Every agreement on an id in progress at this process is a claim: a
 * blocking creation's (MPI_Comm_dup, split, create, create_group, and the
 * intercommunicators' MPI_Intercomm_create and _merge and their dup,
 * split and create) or an MPI_Comm_idup's. In each round every process
 * offers ids and holds them from every other claim and creation until the
 * round is settled, so that whichever id the AND of the offers names is
 * still unused at every process when it is taken: at any moment an id is
 * in use, held by one claim, or free.
 *
 * The first round offers the CTX_FIRST_OFFER lowest free ids: a first
 * round may wait long (for processes that have not started the creation
 * yet) and must not hold every id meanwhile. When the offers share no id
 * (claims or communicators elsewhere hold different ids at different
 * processes: two idups started in opposite orders hold each other's ids)
 * the claim is live: every process has started it, so its further rounds
 * end however long the others take. In a further round the live claim
 * first by priority at this process -- the lowest key (ctx_before), the
 * same at every process -- offers and holds every id it can (what it
 * holds, and every free id); every other live claim here gives back what
 * it holds and offers nothing. The offer's last word says "all I can
 * give": the leader's, with no other live claim here still holding ids.
 *
 * Why this ends, although the claims outstanding differ between processes
 * (one may have started an idup another has not; first rounds hold up to
 * 64 ids each, whoever's they are): take the live claim G first by
 * priority among all live claims. Every process of G has started it, so
 * each ends G's first round and sees G live; there no live claim comes
 * before it, so G leads there in every round from then on. The other
 * live claims there give their ids back at their next round, which ends
 * since they are live too. From then on each of G's offers there says
 * "all"; once every process's does, G's AND is every id free at all of
 * them (bar other claims' first-round holds): G takes the lowest, or, if
 * there is none, fails alike everywhere (MPI_ERR_OTHER). A claim that
 * becomes live and comes before G only takes G's place in this argument:
 * one claim after another ends, never all waiting on each other.
 * Priority is a key, not arrival order, so two processes never disagree
 * on which of two claims comes first. Two claims in progress at a process
 * must not share a key (both would lead): a communicator's collective
 * numbers differ; MPI forbids two MPI_Comm_create_group at once with one
 * tag on one parent (sessions' string tags are hashed: one pair in 2^24
 * would); an MPI_Intercomm_create's key holds this process's own local
 * communicator and collective number beside the other group's and both
 * leaders' world ranks, and the tag (two at a process could share one
 * only if the other group of each were the group of this process in the
 * other, with the same leaders, ids, collective numbers and tag). */
#define CTX_FIRST_OFFER 64

void onic_mpi_ctx_claim_begin(onic_mpi_ctx_claim_t *a, const onic_mpi_comm_t *parent,
                              unsigned seq)
{
    memset(a, 0, sizeof(*a));
    a->key[0] = (unsigned)parent->id;
    a->key[1] = ONIC_MPI_CLAIM_COLL;
    a->key[2] = seq;
    onic_dlist_push_tail(&onic_mpi_g.ctx_claims, &a->link);
}

static void ctx_give_back(onic_mpi_ctx_claim_t *a)
{
    for (int w = 0; w < ONIC_MPI_CTX_WORDS; w++) {
        onic_mpi_g.ctx_free[w] |= a->held[w];
        a->held[w] = 0;
    }
}

/* Whether b comes before a: the same answer at every process. */
static int ctx_before(const onic_mpi_ctx_claim_t *b, const onic_mpi_ctx_claim_t *a)
{
    for (int i = 0; i < ONIC_MPI_CLAIM_KEY; i++)
        if (b->key[i] != a->key[i])
            return b->key[i] < a->key[i];
    return 0;
}

void onic_mpi_ctx_offer(onic_mpi_ctx_claim_t *a, uint64_t *offer)
{
    int lead = 1, others = 0;

    memset(offer, 0, ONIC_MPI_CTX_OFFER_WORDS * sizeof(uint64_t));
    if (!a->live) {
        for (int id = 0, n = 0; id < ONIC_MPI_MAX_CTX && n < CTX_FIRST_OFFER; id++)
            if (onic_mpi_g.ctx_free[id / 64] & UINT64_C(1) << (id % 64)) {
                offer[id / 64] |= UINT64_C(1) << (id % 64);
                n++;
            }
        for (int w = 0; w < ONIC_MPI_CTX_WORDS; w++) {
            onic_mpi_g.ctx_free[w] &= ~offer[w];
            a->held[w] = offer[w];
        }
        return;
    }
    for (onic_dlist_t *l = onic_mpi_g.ctx_claims.next; l != &onic_mpi_g.ctx_claims;
         l = l->next) {
        const onic_mpi_ctx_claim_t *b = onic_container_of(l, onic_mpi_ctx_claim_t, link);
        if (b == a || !b->live)
            continue;
        lead = lead && !ctx_before(b, a);
        for (int w = 0; w < ONIC_MPI_CTX_WORDS && !others; w++)
            others = b->held[w] != 0;
    }
    if (!lead) {
        ctx_give_back(a);
        return;
    }
    for (int w = 0; w < ONIC_MPI_CTX_WORDS; w++) {
        a->held[w] |= onic_mpi_g.ctx_free[w];
        onic_mpi_g.ctx_free[w] = 0;
        offer[w] = a->held[w];
    }
    if (!others)
        offer[ONIC_MPI_CTX_WORDS] = ~UINT64_C(0);
}

int onic_mpi_ctx_settle(onic_mpi_ctx_claim_t *a, const uint64_t *agreed)
{
    int id = -2;

    for (int w = 0; w < ONIC_MPI_CTX_WORDS; w++)
        if (agreed[w] != 0) {
            id = w * 64 + __builtin_ctzll(agreed[w]);
            break;
        }
    if (id < 0 && agreed[ONIC_MPI_CTX_WORDS] == 0) {
        /* Not every process offered all it could: another round, holding
         * what it holds until its offer says otherwise. */
        a->live = 1;
        return -1;
    }
    ctx_give_back(a);
    return id;
}

void onic_mpi_ctx_claim_end(onic_mpi_ctx_claim_t *a)
{
    ctx_give_back(a);
    onic_dlist_del(&a->link);
}

/* MPI_Comm_create_group's rounds: the AND of its members' offers, made
 * at the group's first member and sent back. Only the members take part,
 * and concurrent creations on one parent (threads) are told apart by
 * their tags alone, so the messages go on a context no communicator has
 * -- sub's point-to-point one, 2 * (ONIC_MPI_MAX_CTX + the parent's id),
 * above every communicator's two; a session's (coll), whose tags are
 * string tags' hashes, on sub's collective one -- with the call's tag:
 * one creation's never take another's, nor a collective's. Each member's
 * rounds go in order, one at a time, so a round's messages never pass
 * the last's. */
static int ctx_group_xfer(int is_send, uint64_t *buf, int peer, int tag, int coll,
                          onic_mpi_comm_t *sub, const char *call)
{
    onic_mpi_type_t *t = onic_mpi_type_get(MPI_UINT64_T);
    onic_mpi_req_t *r = NULL;
    int rc;

    if (coll)
        rc = is_send ? onic_mpi_coll_isend(buf, ONIC_MPI_CTX_OFFER_WORDS, t, peer, tag, sub, &r)
                     : onic_mpi_coll_irecv(buf, ONIC_MPI_CTX_OFFER_WORDS, t, peer, tag, sub, &r);
    else
        rc = onic_mpi_req_sub_start(is_send, buf, ONIC_MPI_CTX_OFFER_WORDS, t, peer, tag, sub,
                                    call, &r);
    return rc != MPI_SUCCESS ? rc : onic_mpi_coll_waitall(1, &r, call);
}

static int ctx_band_group(onic_mpi_comm_t *sub, uint64_t *offer, int tag, int coll,
                          const char *call)
{
    uint64_t theirs[ONIC_MPI_CTX_OFFER_WORDS];
    int rc;

    if (sub->rank != 0) {
        if ((rc = ctx_group_xfer(1, offer, 0, tag, coll, sub, call)) != MPI_SUCCESS)
            return rc;
        return ctx_group_xfer(0, offer, 0, tag, coll, sub, call);
    }
    for (int i = 1; i < sub->size; i++) {
        if ((rc = ctx_group_xfer(0, theirs, i, tag, coll, sub, call)) != MPI_SUCCESS)
            return rc;
        for (int w = 0; w < ONIC_MPI_CTX_OFFER_WORDS; w++)
            offer[w] &= theirs[w];
    }
    for (int i = 1; i < sub->size; i++)
        if ((rc = ctx_group_xfer(1, offer, i, tag, coll, sub, call)) != MPI_SUCCESS)
            return rc;
    return MPI_SUCCESS;
}

int onic_mpi_ctx_claim_rounds(onic_mpi_ctx_claim_t *a, onic_mpi_comm_t *errc,
                              int (*band)(void *arg, uint64_t *offer, const char *call),
                              void *arg, const char *call, int *id_p)
{
    uint64_t offer[ONIC_MPI_CTX_OFFER_WORDS];
    int rc, id;

    do {
        /* Between rounds the claims before it here (idups) move on; and
         * under MPI_THREAD_MULTIPLE what a live claim waits for may be
         * another thread's claim here giving back the ids it holds, in a
         * round of its own: with nothing handled, the lock goes to it for
         * a while (a claim of MPI_COMM_SELF's, alone in its rounds, would
         * otherwise loop holding it), and what was handled wakes the
         * threads it may be for. */
        if (a->live)
            onic_mpi_mt_progress();
        onic_mpi_ctx_offer(a, offer);
        if ((rc = band(arg, offer, call)) != MPI_SUCCESS) {
            onic_mpi_ctx_claim_end(a);
            return rc;
        }
        id = onic_mpi_ctx_settle(a, offer);
    } while (id == -1);
    onic_mpi_ctx_claim_end(a);
    if (id >= 0) {
        *id_p = id;
        return MPI_SUCCESS;
    }
    return onic_mpi_err(errc, MPI_ERR_OTHER, call, "all %d communicator context ids are in "
                        "use at some process taking part (or held by other creations in "
                        "progress); free communicators with MPI_Comm_free", ONIC_MPI_MAX_CTX);
}

static int ctx_band_parent(void *arg, uint64_t *offer, const char *call)
{
    return onic_mpi_coll_band(arg, offer, ONIC_MPI_CTX_OFFER_WORDS, call);
}

typedef struct ctx_group_arg {
    onic_mpi_comm_t *sub;
    int              tag, coll;
} ctx_group_arg_t;

static int ctx_band_group_arg(void *arg, uint64_t *offer, const char *call)
{
    ctx_group_arg_t *g = arg;

    return ctx_band_group(g->sub, offer, g->tag, g->coll, call);
}

/* Agree with the rest of parent on a free context id. The claim takes a
 * collective number of parent, as every member does. */
int onic_mpi_comm_ctx_alloc(onic_mpi_comm_t *parent, const char *call, int *id_p)
{
    onic_mpi_ctx_claim_t a;

    onic_mpi_ctx_claim_begin(&a, parent, parent->icoll_seq++);
    return onic_mpi_ctx_claim_rounds(&a, parent, ctx_band_parent, parent, call, id_p);
}

int onic_mpi_comm_ctx_alloc_group(onic_mpi_comm_t *parent, onic_mpi_group_t *g, int tag,
                                  int session, MPI_Errhandler errh, const char *call, int *id_p)
{
    onic_mpi_ctx_claim_t a;
    onic_mpi_comm_t *sub;
    int rc;

    if ((sub = onic_mpi_comm_new(g, ONIC_MPI_MAX_CTX + parent->id, errh)) == NULL) {
        onic_mpi_group_unref(g);
        return onic_mpi_err_errh(errh, MPI_ERR_NO_MEM, call, "no memory for a communicator");
    }
    /* A claim of the members alone, its priority the tag: the same at
     * every member, and no two such creations on one parent run at once
     * at a process with the same tag (MPI forbids it; two sessions' whose
     * string tags hash alike, one pair in 2^24, would). What the rounds
     * report goes to the parent, or, for a session, whose program knows
     * no parent, to the call's handler. */
    onic_mpi_ctx_claim_begin(&a, parent, (unsigned)tag);
    a.key[1] = session ? ONIC_MPI_CLAIM_SESSION : ONIC_MPI_CLAIM_GROUP;
    rc = onic_mpi_ctx_claim_rounds(&a, session ? sub : parent, ctx_band_group_arg,
                                   &(ctx_group_arg_t){sub, tag, session}, call, id_p);
    onic_mpi_group_unref(g);
    onic_free(sub); /* not comm_destroy: its id is none of ctx_free's */
    return rc;
}

/* A new communicator over g (taken over) with context id, or MPI_COMM_NULL
 * if this process is not in g. */
int onic_mpi_comm_publish_errh(onic_mpi_group_t *g, int id, MPI_Errhandler errh,
                               const char *call, MPI_Comm *newcomm)
{
    onic_mpi_comm_t *c;

    c = onic_mpi_comm_new(g, id, errh);
    if (c == NULL) {
        onic_mpi_group_unref(g);
        return onic_mpi_err_errh(errh, MPI_ERR_NO_MEM, call, "no memory for a communicator");
    }
    if (c->rank == MPI_UNDEFINED) {
        onic_mpi_group_unref(g);
        onic_free(c);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (onic_mpi_htab_add(&onic_mpi_g.comms, c, &c->handle) != 0) {
        onic_mpi_group_unref(g);
        onic_free(c);
        return onic_mpi_err_errh(errh, MPI_ERR_NO_MEM, call, "no room for a communicator "
                                 "handle");
    }
    onic_mpi_g.ctx_free[id / 64] &= ~(UINT64_C(1) << (id % 64));
    *newcomm = c->handle;
    return MPI_SUCCESS;
}

int onic_mpi_comm_publish(onic_mpi_comm_t *parent, onic_mpi_group_t *g, int id, const char *call,
                        MPI_Comm *newcomm)
{
    return onic_mpi_comm_publish_errh(g, id, parent->errh, call, newcomm);
}

int onic_mpi_comm_dup_as(onic_mpi_comm_t *c, int id, const char *call, MPI_Comm *newcomm)
{
    onic_mpi_group_t *g = c->group;
    int rc;

    g->refs++;
    if ((rc = onic_mpi_comm_publish(c, g, id, call, newcomm)) != MPI_SUCCESS)
        return rc;
    /* The copy keeps the topology, the hints, and the attributes their
     * callbacks copy. */
    onic_mpi_comm_lookup(*newcomm)->asserts = c->asserts;
    if (c->topo != NULL &&
        (onic_mpi_comm_lookup(*newcomm)->topo = onic_mpi_topo_dup(c->topo)) == NULL) {
        MPI_Comm_free(newcomm);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for the topology");
    }
    if ((rc = onic_mpi_attr_copy(c, onic_mpi_comm_lookup(*newcomm))) != MPI_SUCCESS) {
        onic_mpi_attr_release(onic_mpi_comm_lookup(*newcomm));
        MPI_Comm_free(newcomm);
        return rc;
    }
    return MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc, id;

    ONIC_MPI_CHECK_INIT("MPI_Comm_dup");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_dup", &rc)) == NULL)
        return rc;
    if (newcomm == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_dup", "newcomm is NULL");
    if (c->local != NULL) {
        /* An intercommunicator has no grid. */
        if ((rc = onic_mpi_intercomm_dup(c, "MPI_Comm_dup", newcomm)) != MPI_SUCCESS)
            return rc;
        onic_mpi_comm_lookup(*newcomm)->asserts = c->asserts;
        if ((rc = onic_mpi_attr_copy(c, onic_mpi_comm_lookup(*newcomm))) != MPI_SUCCESS) {
            onic_mpi_attr_release(onic_mpi_comm_lookup(*newcomm));
            MPI_Comm_free(newcomm);
            return rc;
        }
        return MPI_SUCCESS;
    }
    if ((rc = onic_mpi_comm_ctx_alloc(c, "MPI_Comm_dup", &id)) != MPI_SUCCESS)
        return rc;
    return onic_mpi_comm_dup_as(c, id, "MPI_Comm_dup", newcomm);
}

int onic_mpi_comm_split_cmp(const void *a, const void *b)
{
    const onic_mpi_split_entry_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_split";
    onic_mpi_comm_t *c;
    onic_mpi_group_t *g;
    onic_mpi_split_entry_t *all;
    int mine[2] = {color, key}, *pairs, rc, id, n = 0;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (newcomm == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "newcomm is NULL");
    if (color < 0 && color != MPI_UNDEFINED)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "color %d; use a color of 0 or more, or "
                            "MPI_UNDEFINED to be in no new communicator", color);
    if (c->local != NULL)
        return onic_mpi_intercomm_split(c, color, key, newcomm);
    pairs = onic_malloc((size_t)c->size * 2 * sizeof(int));
    all = onic_malloc((size_t)c->size * sizeof(*all));
    if (pairs == NULL || all == NULL) {
        onic_free(pairs);
        onic_free(all);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d colors", c->size);
    }
    rc = MPI_Allgather(mine, 2, MPI_INT, pairs, 2, MPI_INT, c->handle);
    if (rc == MPI_SUCCESS)
        rc = onic_mpi_comm_ctx_alloc(c, call, &id);
    if (rc != MPI_SUCCESS) {
        onic_free(pairs);
        onic_free(all);
        return rc;
    }
    for (int i = 0; i < c->size; i++)
        if (color != MPI_UNDEFINED && pairs[2 * i] == color)
            all[n++] = (onic_mpi_split_entry_t){pairs[2 * i], pairs[2 * i + 1], i};
    onic_free(pairs);
    if (color == MPI_UNDEFINED) {
        onic_free(all);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    qsort(all, (size_t)n, sizeof(*all), onic_mpi_comm_split_cmp);
    if ((g = onic_mpi_group_new(n)) == NULL) {
        onic_free(all);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a group of %d", n);
    }
    for (int i = 0; i < n; i++)
        g->world[i] = c->group->world[all[i].rank];
    onic_free(all);
    /* Every color gets the same id: the new communicators are disjoint. */
    return onic_mpi_comm_publish(c, g, id, call, newcomm);
}

int onic_mpi_group_subset(onic_mpi_comm_t *c, const onic_mpi_group_t *g, const char *call)
{
    for (int i = 0; i < g->size; i++) {
        int in = 0;
        for (int j = 0; j < c->size && !in; j++)
            in = c->group->world[j] == g->world[i];
        if (!in)
            return onic_mpi_err(c, MPI_ERR_GROUP, call, "member %d of the group (world rank "
                                "%d) is not in the communicator's (local) group; the group "
                                "must be a subset", i, g->world[i]);
    }
    return MPI_SUCCESS;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_create";
    onic_mpi_comm_t *c;
    onic_mpi_group_t *g;
    int rc, id;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if ((g = onic_mpi_group_get(group)) == NULL)
        return onic_mpi_err(c, MPI_ERR_GROUP, call, "group %#x is not a live group",
                            (unsigned)group);
    if (newcomm == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "newcomm is NULL");
    if (c->local != NULL)
        return onic_mpi_intercomm_create_sub(c, g, newcomm);
    if ((rc = onic_mpi_group_subset(c, g, call)) != MPI_SUCCESS)
        return rc;
    if ((rc = onic_mpi_comm_ctx_alloc(c, call, &id)) != MPI_SUCCESS)
        return rc;
    if (g->size == 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if ((g = onic_mpi_group_copy(g)) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a group");
    return onic_mpi_comm_publish(c, g, id, call, newcomm);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_free");
    if (comm == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Comm_free", "comm is NULL; pass the "
                            "address of the handle");
    if ((c = onic_mpi_comm_get(*comm, "MPI_Comm_free", &rc)) == NULL)
        return rc;
    if (c->predefined)
        return onic_mpi_err(c, MPI_ERR_COMM, "MPI_Comm_free", "%s cannot be freed",
                            c->handle == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    /* The attributes' delete callbacks run while the handle still works. */
    if ((rc = onic_mpi_attr_delete_all(c)) != MPI_SUCCESS)
        return onic_mpi_err(c, rc, "MPI_Comm_free", "an attribute's delete callback failed "
                            "with %d; the communicator is not freed", rc);
    onic_mpi_htab_del(&onic_mpi_g.comms, c->handle);
    *comm = MPI_COMM_NULL;
    if ((c->pending = onic_mpi_req_hold_comm(c)) == 0)
        comm_destroy(c);
    else
        onic_dlist_push_tail(&comm_freed, &c->freed_link);
    return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *a, *b;
    int rc, same = 1, similar = 1;

    ONIC_MPI_CHECK_INIT("MPI_Comm_compare");
    if ((a = onic_mpi_comm_get(comm1, "MPI_Comm_compare", &rc)) == NULL ||
        (b = onic_mpi_comm_get(comm2, "MPI_Comm_compare", &rc)) == NULL)
        return rc;
    if (result == NULL)
        return onic_mpi_err(a, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < a->size; i++) {
        int found = 0;
        same &= a->group->world[i] == b->group->world[i];
        for (int j = 0; j < b->size && !found; j++)
            found = a->group->world[i] == b->group->world[j];
        similar &= found;
    }
    *result = same ? MPI_CONGRUENT : similar ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    onic_mpi_group_t *g;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_group");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_group", &rc)) == NULL)
        return rc;
    if (group == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
    if ((g = onic_mpi_group_copy(c->group)) == NULL || onic_mpi_group_publish(g, group) != 0) {
        onic_mpi_group_unref(g);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, "MPI_Comm_group", "no room for a group");
    }
    return MPI_SUCCESS;
}

int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    ONIC_MPI_LOCKED;
    static int tag_ub = ONIC_MPI_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime = 0,
               universe, lastused;
    onic_mpi_comm_t *c;
    int *val;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_get_attr");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_get_attr", &rc)) == NULL)
        return rc;
    if (attribute_val == NULL || flag == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_get_attr", "%s is NULL",
                            flag == NULL ? "flag" : "attribute_val");
    switch (comm_keyval) {
    case MPI_TAG_UB: val = &tag_ub; break;
    case MPI_HOST: val = &host; break;
    case MPI_IO: val = &io; break;
    case MPI_WTIME_IS_GLOBAL: val = &wtime; break;
    /* No process can be spawned: the universe is the job. */
    case MPI_UNIVERSE_SIZE: universe = onic_mpi_g.size; val = &universe; break;
    /* The highest error code: MPI_ERR_LASTCODE until the program adds some. */
    case MPI_LASTUSEDCODE: lastused = onic_mpi_err_lastused(); val = &lastused; break;
    default:
        return onic_mpi_attr_get(c, comm_keyval, attribute_val, flag);
    }
    /* The value is a pointer to the attribute, as the standard has it. */
    *(int **)attribute_val = val;
    *flag = 1;
    return MPI_SUCCESS;
}

/* --- Groups ------------------------------------------------------------------------- */
static onic_mpi_group_t *group_check(MPI_Group h, const char *call, int *rc_p)
{
    onic_mpi_group_t *g = onic_mpi_group_get(h);

    if (g == NULL)
        *rc_p = onic_mpi_err(NULL, MPI_ERR_GROUP, call, "group %#x is %s; pass one from "
                             "MPI_Comm_group or MPI_Group_incl, or MPI_GROUP_EMPTY",
                             (unsigned)h, h == MPI_GROUP_NULL ? "MPI_GROUP_NULL" : "not live");
    return g;
}

int MPI_Group_size(MPI_Group group, int *size)
{
    ONIC_MPI_LOCKED;
    onic_mpi_group_t *g;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Group_size");
    if ((g = group_check(group, "MPI_Group_size", &rc)) == NULL)
        return rc;
    if (size == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
    *size = g->size;
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
    ONIC_MPI_LOCKED;
    onic_mpi_group_t *g;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Group_rank");
    if ((g = group_check(group, "MPI_Group_rank", &rc)) == NULL)
        return rc;
    if (rank == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
    *rank = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == onic_mpi_g.rank)
            *rank = i;
    return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Group_incl";
    onic_mpi_group_t *g, *ng;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((g = group_check(group, call, &rc)) == NULL)
        return rc;
    if (n < 0 || n > g->size)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "n %d; include 0 to %d ranks", n, g->size);
    if ((n > 0 && ranks == NULL) || newgroup == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s is NULL",
                            newgroup == NULL ? "newgroup" : "ranks");
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return onic_mpi_err(NULL, MPI_ERR_RANK, call, "ranks[%d] = %d is not a rank of the "
                                "group (0 to %d)", i, ranks[i], g->size - 1);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                return onic_mpi_err(NULL, MPI_ERR_RANK, call, "rank %d appears twice "
                                    "(ranks[%d] and ranks[%d]); list each once", ranks[i], j, i);
    }
    if (n == 0) {
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    if ((ng = onic_mpi_group_new(n)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a group of %d", n);
    for (int i = 0; i < n; i++)
        ng->world[i] = g->world[ranks[i]];
    if (onic_mpi_group_publish(ng, newgroup) != 0) {
        onic_mpi_group_unref(ng);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no room for a group handle");
    }
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group)
{
    ONIC_MPI_LOCKED;
    onic_mpi_group_t *g;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Group_free");
    if (group == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
    if ((g = group_check(*group, "MPI_Group_free", &rc)) == NULL)
        return rc;
    if (!g->predefined) {
        onic_mpi_htab_del(&onic_mpi_g.groups, g->handle);
        onic_mpi_group_unref(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[])
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Group_translate_ranks";
    onic_mpi_group_t *a, *b;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((a = group_check(group1, call, &rc)) == NULL || (b = group_check(group2, call, &rc)) == NULL)
        return rc;
    if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "n %d with %s", n,
                            n < 0 ? "a negative count" : "a NULL rank array");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= a->size)
            return onic_mpi_err(NULL, MPI_ERR_RANK, call, "ranks1[%d] = %d is not a rank of "
                                "group1 (0 to %d)", i, ranks1[i], a->size - 1);
        ranks2[i] = MPI_UNDEFINED;
        for (int j = 0; j < b->size; j++)
            if (b->world[j] == a->world[ranks1[i]])
                ranks2[i] = j;
    }
    return MPI_SUCCESS;
}

/* --- More group operations (MPI 3.1, 6.3.2) ------------------------------------------ */
/* A new group of the world ranks in world[0..n), published in *newgroup
 * (n 0: MPI_GROUP_EMPTY). */
static int group_make(const char *call, const int *world, int n, MPI_Group *newgroup)
{
    onic_mpi_group_t *ng;

    if (n == 0) {
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    if ((ng = onic_mpi_group_new(n)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a group of %d", n);
    memcpy(ng->world, world, (size_t)n * sizeof(int));
    if (onic_mpi_group_publish(ng, newgroup) != 0) {
        onic_mpi_group_unref(ng);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no room for a group handle");
    }
    return MPI_SUCCESS;
}

static int group_has(const onic_mpi_group_t *g, int world)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world)
            return 1;
    return 0;
}

/* The set operations: union (op 0: a's, then b's not in a), intersection
 * (1: a's that are in b), difference (2: a's not in b), in a's order. */
static int group_setop(const char *call, int op, MPI_Group group1, MPI_Group group2,
                       MPI_Group *newgroup)
{
    onic_mpi_group_t *a, *b;
    int rc, n = 0, *w;

    ONIC_MPI_CHECK_INIT(call);
    if ((a = group_check(group1, call, &rc)) == NULL || (b = group_check(group2, call, &rc)) == NULL)
        return rc;
    if (newgroup == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "newgroup is NULL");
    if ((w = onic_malloc(((size_t)a->size + (size_t)b->size + 1) * sizeof(int))) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a group");
    for (int i = 0; i < a->size; i++)
        if (op == 0 || (op == 1) == group_has(b, a->world[i]))
            w[n++] = a->world[i];
    if (op == 0)
        for (int i = 0; i < b->size; i++)
            if (!group_has(a, b->world[i]))
                w[n++] = b->world[i];
    rc = group_make(call, w, n, newgroup);
    onic_free(w);
    return rc;
}

int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    ONIC_MPI_LOCKED;
    return group_setop("MPI_Group_union", 0, group1, group2, newgroup);
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    ONIC_MPI_LOCKED;
    return group_setop("MPI_Group_intersection", 1, group1, group2, newgroup);
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    ONIC_MPI_LOCKED;
    return group_setop("MPI_Group_difference", 2, group1, group2, newgroup);
}

/* Mark ranks of g: each listed once and in range; the ranks in `mark`. */
static int group_mark(const char *call, const onic_mpi_group_t *g, int n, const int ranks[],
                      char *mark)
{
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return onic_mpi_err(NULL, MPI_ERR_RANK, call, "ranks[%d] = %d is not a rank of the "
                                "group (0 to %d)", i, ranks[i], g->size - 1);
        if (mark[ranks[i]])
            return onic_mpi_err(NULL, MPI_ERR_RANK, call, "rank %d is listed twice", ranks[i]);
        mark[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Group_excl";
    onic_mpi_group_t *g;
    char *mark;
    int rc, k = 0, *w;

    ONIC_MPI_CHECK_INIT(call);
    if ((g = group_check(group, call, &rc)) == NULL)
        return rc;
    if (n < 0 || n > g->size || (n > 0 && ranks == NULL) || newgroup == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "n %d (0 to %d), ranks %s, newgroup %s", n,
                            g->size, ranks == NULL ? "NULL" : "given",
                            newgroup == NULL ? "NULL" : "given");
    mark = onic_calloc((size_t)g->size + 1, 1);
    w = onic_malloc(((size_t)g->size + 1) * sizeof(int));
    if (mark == NULL || w == NULL) {
        onic_free(mark);
        onic_free(w);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a group");
    }
    if ((rc = group_mark(call, g, n, ranks, mark)) == MPI_SUCCESS) {
        for (int i = 0; i < g->size; i++)
            if (!mark[i])
                w[k++] = g->world[i];
        rc = group_make(call, w, k, newgroup);
    }
    onic_free(mark);
    onic_free(w);
    return rc;
}

/* The ranks of n triplets (first, last, stride), in order, in *out_p
 * (their number in *k_p): MPI_SUCCESS or the error reported. */
static int group_ranges(const char *call, const onic_mpi_group_t *g, int n, int ranges[][3],
                        int **out_p, int *k_p)
{
    long long total = 0;
    int *out, k = 0;

    for (int i = 0; i < n; i++) {
        int f = ranges[i][0], l = ranges[i][1], s = ranges[i][2];
        if (s == 0 || f < 0 || f >= g->size || l < 0 || l >= g->size || (s > 0 && f > l) ||
            (s < 0 && f < l))
            return onic_mpi_err(NULL, MPI_ERR_ARG, call, "range %d (%d, %d, %d) is not a range "
                                "of ranks 0 to %d (stride not 0, moving from first toward "
                                "last)", i, f, l, s, g->size - 1);
        total += (l - f) / s + 1;
        if (total > g->size)
            return onic_mpi_err(NULL, MPI_ERR_RANK, call, "the ranges name more ranks than the "
                                "group's %d: some twice", g->size);
    }
    if ((out = onic_malloc(((size_t)total + 1) * sizeof(int))) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for %lld ranks", total);
    for (int i = 0; i < n; i++)
        for (int r = ranges[i][0]; ranges[i][2] > 0 ? r <= ranges[i][1] : r >= ranges[i][1];
             r += ranges[i][2])
            out[k++] = r;
    *out_p = out;
    *k_p = k;
    return MPI_SUCCESS;
}

static int group_range(const char *call, int excl, MPI_Group group, int n, int ranges[][3],
                       MPI_Group *newgroup)
{
    onic_mpi_group_t *g;
    int rc, k = 0, *list = NULL;

    ONIC_MPI_CHECK_INIT(call);
    if ((g = group_check(group, call, &rc)) == NULL)
        return rc;
    if (n < 0 || (n > 0 && ranges == NULL) || newgroup == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "n %d, ranges %s, newgroup %s", n,
                            ranges == NULL ? "NULL" : "given", newgroup == NULL ? "NULL" : "given");
    if ((rc = group_ranges(call, g, n, ranges, &list, &k)) != MPI_SUCCESS)
        return rc;
    /* A rank listed twice across ranges is refused by incl and excl. */
    rc = excl ? MPI_Group_excl(group, k, list, newgroup) : MPI_Group_incl(group, k, list, newgroup);
    onic_free(list);
    return rc;
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    ONIC_MPI_LOCKED;
    return group_range("MPI_Group_range_incl", 0, group, n, ranges, newgroup);
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    ONIC_MPI_LOCKED;
    return group_range("MPI_Group_range_excl", 1, group, n, ranges, newgroup);
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Group_compare";
    onic_mpi_group_t *a, *b;
    int rc, same = 1, similar = 1;

    ONIC_MPI_CHECK_INIT(call);
    if ((a = group_check(group1, call, &rc)) == NULL || (b = group_check(group2, call, &rc)) == NULL)
        return rc;
    if (result == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "result is NULL");
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < a->size; i++) {
        same &= a->world[i] == b->world[i];
        similar &= group_has(b, a->world[i]);
    }
    *result = same ? MPI_IDENT : similar ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

/* --- Names, splitting by node ------------------------------------------------------------- */
int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_set_name");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_set_name", &rc)) == NULL)
        return rc;
    if (comm_name == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_set_name", "comm_name is NULL");
    /* Longer names are cut to MPI_MAX_OBJECT_NAME - 1 characters. */
    snprintf(c->name, sizeof(c->name), "%s", comm_name);
    return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    const char *name;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_get_name");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_get_name", &rc)) == NULL)
        return rc;
    if (comm_name == NULL || resultlen == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_get_name", "%s is NULL",
                            comm_name == NULL ? "comm_name" : "resultlen");
    name = c->name;
    if (name[0] == '\0' && c->handle == MPI_COMM_WORLD)
        name = "MPI_COMM_WORLD";
    else if (name[0] == '\0' && c->handle == MPI_COMM_SELF)
        name = "MPI_COMM_SELF";
    *resultlen = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", name);
    return MPI_SUCCESS;
}

/* --- Info hints ---------------------------------------------------------------------------- */
/* The hints onic reads are MPI 4.0's assertions (mpi_assert_no_any_source,
 * _no_any_tag, _exact_length, _allow_overtaking): kept per communicator,
 * the wildcard ones checked on every receive and probe (a wildcard
 * promised away is refused, not matched by surprise). None makes a path
 * faster yet: an exact receive already costs what it would with them.
 * MPI_Comm_get_info returns the four, true or false (MPI 4.0, 7.4.4: the
 * hints actually used); other keys are ignored, and not returned. */
int onic_mpi_asserts_check(onic_mpi_comm_t *c, int source, int tag, const char *call)
{
    if (source == MPI_ANY_SOURCE && (c->asserts & ONIC_MPI_ASSERT_NO_ANY_SOURCE))
        return onic_mpi_err(c, MPI_ERR_RANK, call, "source is MPI_ANY_SOURCE on a communicator "
                            "whose info asserts mpi_assert_no_any_source; name the rank, or "
                            "drop the assertion");
    if (tag == MPI_ANY_TAG && (c->asserts & ONIC_MPI_ASSERT_NO_ANY_TAG))
        return onic_mpi_err(c, MPI_ERR_TAG, call, "tag is MPI_ANY_TAG on a communicator whose "
                            "info asserts mpi_assert_no_any_tag; name the tag, or drop the "
                            "assertion");
    return MPI_SUCCESS;
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_set_info";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if ((rc = onic_mpi_info_check(c, info, 0, call)) != MPI_SUCCESS)
        return rc;
    c->asserts = onic_mpi_info_asserts(info, c->asserts);
    return MPI_SUCCESS;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_get_info";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (info_used == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "info_used is NULL; pass where to store the "
                            "new info object");
    return onic_mpi_info_of_asserts(c->asserts, info_used);
}

int onic_mpi_comm_hints_check(MPI_Comm comm, MPI_Info info, const char *call)
{
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    return onic_mpi_info_check(c, info, 1, call);
}

/* As MPI_Comm_dup, the new communicator's hints info's, not comm's.
 * MPI_INFO_NULL is taken as no hints. */
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    int rc = onic_mpi_comm_hints_check(comm, info, "MPI_Comm_dup_with_info");

    if (rc == MPI_SUCCESS && (rc = MPI_Comm_dup(comm, newcomm)) == MPI_SUCCESS)
        onic_mpi_comm_lookup(*newcomm)->asserts = onic_mpi_info_asserts(info, 0);
    return rc;
}

/* MPI_COMM_TYPE_SHARED: the processes that share this one's memory, i.e.
 * its node: the same processor name (the host's). */
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_split_type";
    char mine[MPI_MAX_PROCESSOR_NAME], *all;
    onic_mpi_comm_t *c;
    int rc, len, color = MPI_UNDEFINED;

    (void)info;
    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (newcomm == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "newcomm is NULL");
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "split_type %d; onic knows "
                            "MPI_COMM_TYPE_SHARED (and MPI_UNDEFINED)", split_type);
    if ((all = onic_malloc((size_t)c->size * MPI_MAX_PROCESSOR_NAME)) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d names", c->size);
    memset(mine, 0, sizeof(mine));
    MPI_Get_processor_name(mine, &len);
    rc = MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                       MPI_CHAR, comm);
    /* The color: the lowest rank on the same node. */
    for (int i = 0; rc == MPI_SUCCESS && i < c->size && color == MPI_UNDEFINED; i++)
        if (strncmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, mine, MPI_MAX_PROCESSOR_NAME) == 0)
            color = i;
    onic_free(all);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Comm_split(comm, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : color, key,
                          newcomm);
}
