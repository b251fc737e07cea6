/* Intercommunicators, and MPI_Comm_create_group.
 *
 * An intercommunicator is a communicator whose group is the local group
 * and whose point-to-point ranks name the remote group (comm->peers). A
 * message carries the sender's local rank, which is the rank the receiver
 * names it by, and the receiver's query names the sender's world rank, so
 * point-to-point needs nothing else (p2p.c, request.c).
 *
 * The two groups agree on a context id free at every process of both, a
 * claim's rounds (comm.c): each group ANDs its offers (an allreduce over
 * its local side), the local leaders (rank 0 of each group) swap the
 * results, and each leader broadcasts the other's to its group. On an
 * intercommunicator those swaps and broadcasts run on its collective
 * context, with tags above the collectives' (intercoll.c); for
 * MPI_Intercomm_create the leaders swap over peer_comm with the call's
 * tag. `ic->local` is the local group as a hidden intracommunicator of
 * the same id, for the broadcasts and allreduces of these agreements and
 * of the collectives. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <stdlib.h>
#include <string.h>

/* The leaders' swaps on the collective context, above the collectives'
 * own small tags (coll.c, collv.c, intercoll.c); the non-blocking ones,
 * whose tags start here too, skip these two on intercommunicators
 * (MPI_Comm_idup, the one they take there: icoll.c). */
#define IC_TAG_SWAP   (1 << 20)
#define IC_TAG_GATHER ((1 << 20) + 1)

static onic_mpi_type_t *ic_bytes(void)
{
    return onic_mpi_type_get(MPI_BYTE);
}

static int ic_get(MPI_Comm comm, const char *call, onic_mpi_comm_t **c_p)
{
    onic_mpi_comm_t *c;
    int rc;

    *c_p = NULL;
    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (c->local == NULL)
        return onic_mpi_err(c, MPI_ERR_COMM, call, "communicator %#x is an "
                            "intracommunicator; pass an intercommunicator (MPI_Intercomm_create)",
                            (unsigned)comm);
    *c_p = c;
    return MPI_SUCCESS;
}

/* The leaders swap mine (mbytes) for theirs (tbytes), and each group gets
 * its leader's copy of theirs. Collective over both groups. */
static int ic_swap(onic_mpi_comm_t *ic, const void *mine, size_t mbytes, void *theirs,
                   size_t tbytes, const char *call)
{
    onic_mpi_req_t *r[2] = {NULL, NULL};
    int rc;

    if (ic->rank == 0) {
        if ((rc = onic_mpi_coll_irecv(theirs, (int)tbytes, ic_bytes(), 0, IC_TAG_SWAP, ic,
                                      &r[0])) != MPI_SUCCESS ||
            (rc = onic_mpi_coll_isend(mine, (int)mbytes, ic_bytes(), 0, IC_TAG_SWAP, ic,
                                      &r[1])) != MPI_SUCCESS) {
            onic_mpi_coll_waitall(2, r, call);
            return rc;
        }
        if ((rc = onic_mpi_coll_waitall(2, r, call)) != MPI_SUCCESS)
            return rc;
    }
    return onic_mpi_coll_bcast(ic->local, theirs, (int)tbytes, ic_bytes(), 0, call);
}

/* Every local process's n ints, in local rank order, at every local process. */
static int ic_allgather(onic_mpi_comm_t *ic, const int *mine, int n, int *all, const char *call)
{
    onic_mpi_comm_t *l = ic->local;
    onic_mpi_req_t *r = NULL;
    int rc;

    if (l->rank == 0) {
        memcpy(all, mine, (size_t)n * sizeof(int));
        for (int i = 1; i < l->size; i++)
            if ((rc = onic_mpi_coll_irecv(all + (size_t)i * n, n * (int)sizeof(int), ic_bytes(),
                                          i, IC_TAG_GATHER, l, &r)) != MPI_SUCCESS ||
                (rc = onic_mpi_coll_waitall(1, &r, call)) != MPI_SUCCESS)
                return rc;
    } else if ((rc = onic_mpi_coll_isend(mine, n * (int)sizeof(int), ic_bytes(), 0,
                                         IC_TAG_GATHER, l, &r)) != MPI_SUCCESS ||
               (rc = onic_mpi_coll_waitall(1, &r, call)) != MPI_SUCCESS)
        return rc;
    return onic_mpi_coll_bcast(l, all, l->size * n * (int)sizeof(int), ic_bytes(), 0, call);
}

/* A round of an agreement on ic: each group's AND, swapped by the leaders
 * and ANDed with the other's. */
static int ic_band(void *arg, uint64_t *offer, const char *call)
{
    onic_mpi_comm_t *ic = arg;
    uint64_t theirs[ONIC_MPI_CTX_OFFER_WORDS];
    int rc;

    if ((rc = onic_mpi_coll_band(ic->local, offer, ONIC_MPI_CTX_OFFER_WORDS, call)) !=
            MPI_SUCCESS ||
        (rc = ic_swap(ic, offer, sizeof(theirs), theirs, sizeof(theirs), call)) != MPI_SUCCESS)
        return rc;
    for (int w = 0; w < ONIC_MPI_CTX_OFFER_WORDS; w++)
        offer[w] &= theirs[w];
    return MPI_SUCCESS;
}

/* A context id free at every process of both groups: a claim of ic's
 * next collective number, the same in both groups (each calls the same
 * collectives on ic in the same order). */
static int ic_ctx(onic_mpi_comm_t *ic, const char *call, int *id_p)
{
    onic_mpi_ctx_claim_t a;

    onic_mpi_ctx_claim_begin(&a, ic, ic->icoll_seq++);
    return onic_mpi_ctx_claim_rounds(&a, ic, ic_band, ic, call, id_p);
}

/* The intercommunicator between local group g and remote group r (both
 * taken over) with context id; MPI_COMM_NULL where this process is not in
 * g. parent lends its error handler and reports errors. */
static int ic_make(onic_mpi_comm_t *parent, onic_mpi_group_t *g, onic_mpi_group_t *r, int id,
                   const char *call, MPI_Comm *newcomm)
{
    onic_mpi_comm_t *c, *l;
    int rc;

    if ((l = onic_mpi_comm_new(g, id, parent->errh)) == NULL) {
        onic_mpi_group_unref(g);
        onic_mpi_group_unref(r);
        return onic_mpi_err(parent, MPI_ERR_NO_MEM, call, "no memory for a communicator");
    }
    g->refs++; /* one for the hidden local side, one for the intercommunicator */
    if ((rc = onic_mpi_comm_publish(parent, g, id, call, newcomm)) != MPI_SUCCESS ||
        *newcomm == MPI_COMM_NULL) {
        onic_mpi_group_unref(g);
        onic_mpi_group_unref(r);
        onic_free(l);
        return rc;
    }
    c = onic_mpi_comm_lookup(*newcomm);
    c->peers = r;
    c->npeers = r->size;
    c->local = l;
    return MPI_SUCCESS;
}

static onic_mpi_group_t *ic_group_of(const int *world, int n)
{
    onic_mpi_group_t *g = onic_mpi_group_new(n);

    if (g != NULL && n > 0)
        memcpy(g->world, world, (size_t)n * sizeof(int));
    return g;
}

/* What a local leader sends the other in MPI_Intercomm_create: the
 * size of its group (its world ranks follow), and its half of the key of
 * the claim both groups make (local_comm's id and collective number). */
typedef struct ic_hello {
    int      size;
    int      id;
    unsigned seq;
    int      leader; /* world rank */
} ic_hello_t;

/* The leader's part of MPI_Intercomm_create before the context id: swap
 * hellos and world ranks with the remote leader over peer_comm. */
static int ic_leader(onic_mpi_comm_t *lc, MPI_Comm peer_comm, int remote_leader, int tag,
                     unsigned seq, int **rworld_p, ic_hello_t *theirs)
{
    const char *call = "MPI_Intercomm_create";
    onic_mpi_comm_t *pc;
    ic_hello_t mine;
    int rc, *rworld;

    if ((pc = onic_mpi_comm_get(peer_comm, call, &rc)) == NULL)
        return rc;
    if (pc->local != NULL)
        return onic_mpi_err(lc, MPI_ERR_COMM, call, "peer_comm is an intercommunicator; pass "
                            "an intracommunicator holding both leaders");
    if (remote_leader < 0 || remote_leader >= pc->size || remote_leader == pc->rank)
        return onic_mpi_err(lc, MPI_ERR_RANK, call, "remote_leader %d is not another rank of "
                            "peer_comm (0 to %d, this process is %d)", remote_leader,
                            pc->size - 1, pc->rank);
    mine = (ic_hello_t){lc->size, lc->id, seq, onic_mpi_g.rank};
    if ((rc = MPI_Sendrecv(&mine, (int)sizeof(mine), MPI_BYTE, remote_leader, tag, theirs,
                           (int)sizeof(*theirs), MPI_BYTE, remote_leader, tag, peer_comm,
                           MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return rc;
    if (theirs->size < 1 || theirs->size > onic_mpi_g.size || theirs->id < 0 ||
        theirs->id >= ONIC_MPI_MAX_CTX || theirs->leader < 0 ||
        theirs->leader >= onic_mpi_g.size || theirs->leader == onic_mpi_g.rank)
        return onic_mpi_err(lc, MPI_ERR_INTERN, call, "the remote leader (world rank %d) says "
                            "its group has %d processes (the job has %d) and context id %d",
                            theirs->leader, theirs->size, onic_mpi_g.size, theirs->id);
    if ((rworld = onic_malloc((size_t)theirs->size * sizeof(int))) == NULL)
        return onic_mpi_err(lc, MPI_ERR_NO_MEM, call, "no memory for %d ranks", theirs->size);
    if ((rc = MPI_Sendrecv(lc->group->world, lc->size, MPI_INT, remote_leader, tag, rworld,
                           theirs->size, MPI_INT, remote_leader, tag, peer_comm,
                           MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
        onic_free(rworld);
        return rc;
    }
    for (int i = 0; i < theirs->size; i++) {
        int bad = rworld[i] < 0 || rworld[i] >= onic_mpi_g.size;
        for (int j = 0; j < lc->size && !bad; j++)
            bad = lc->group->world[j] == rworld[i];
        if (bad) {
            onic_free(rworld);
            return onic_mpi_err(lc, MPI_ERR_COMM, call, "world rank %d is in both groups (or "
                                "no rank); the groups of an intercommunicator are disjoint",
                                rworld[i]);
        }
    }
    *rworld_p = rworld;
    return MPI_SUCCESS;
}

/* A round of MPI_Intercomm_create's agreement: the local group's AND,
 * swapped by the leaders over peer_comm with the call's tag and ANDed with
 * the other's there, then broadcast from the leader with its outcome. */
typedef struct ic_create_arg {
    onic_mpi_comm_t *lc;
    int              local_leader, remote_leader, tag;
    MPI_Comm         peer_comm;
} ic_create_arg_t;

static int ic_create_band(void *arg, uint64_t *offer, const char *call)
{
    ic_create_arg_t *a = arg;
    uint64_t buf[ONIC_MPI_CTX_OFFER_WORDS + 1], theirs[ONIC_MPI_CTX_OFFER_WORDS];
    int rc;

    if ((rc = onic_mpi_coll_band(a->lc, offer, ONIC_MPI_CTX_OFFER_WORDS, call)) != MPI_SUCCESS)
        return rc;
    memcpy(buf, offer, sizeof(theirs));
    buf[ONIC_MPI_CTX_OFFER_WORDS] = MPI_SUCCESS;
    if (a->lc->rank == a->local_leader) {
        rc = MPI_Sendrecv(offer, ONIC_MPI_CTX_OFFER_WORDS, MPI_UINT64_T, a->remote_leader,
                          a->tag, theirs, ONIC_MPI_CTX_OFFER_WORDS, MPI_UINT64_T,
                          a->remote_leader, a->tag, a->peer_comm, MPI_STATUS_IGNORE);
        for (int w = 0; w < ONIC_MPI_CTX_OFFER_WORDS; w++)
            buf[w] &= theirs[w];
        buf[ONIC_MPI_CTX_OFFER_WORDS] = (uint64_t)rc;
    }
    if ((rc = onic_mpi_coll_bcast(a->lc, buf, ONIC_MPI_CTX_OFFER_WORDS + 1,
                                  onic_mpi_type_get(MPI_UINT64_T), a->local_leader, call)) !=
        MPI_SUCCESS)
        return rc;
    if ((rc = (int)buf[ONIC_MPI_CTX_OFFER_WORDS]) != MPI_SUCCESS)
        return a->lc->rank == a->local_leader
                   ? rc
                   : onic_mpi_err(a->lc, rc, call, "the local leader (rank %d) failed; see its "
                                  "error", a->local_leader);
    memcpy(offer, buf, sizeof(theirs));
    return MPI_SUCCESS;
}

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Intercomm_create";
    onic_mpi_comm_t *lc;
    onic_mpi_group_t *g, *r;
    onic_mpi_ctx_claim_t claim;
    ic_hello_t theirs = {0, 0, 0, 0};
    int rc, id = 0, hdr[5] = {MPI_SUCCESS, 0, 0, 0, 0}, *rworld = NULL;
    unsigned seq;

    ONIC_MPI_CHECK_INIT(call);
    if ((lc = onic_mpi_comm_get(local_comm, call, &rc)) == NULL)
        return rc;
    if (lc->local != NULL)
        return onic_mpi_err(lc, MPI_ERR_COMM, call, "local_comm is an intercommunicator; "
                            "pass the local group's intracommunicator");
    if (newintercomm == NULL)
        return onic_mpi_err(lc, MPI_ERR_ARG, call, "newintercomm is NULL");
    if (local_leader < 0 || local_leader >= lc->size)
        return onic_mpi_err(lc, MPI_ERR_RANK, call, "local_leader %d is not a rank of "
                            "local_comm (0 to %d)", local_leader, lc->size - 1);
    if (tag < 0 || tag > ONIC_MPI_TAG_UB)
        return onic_mpi_err(lc, MPI_ERR_TAG, call, "tag %d is outside 0 to %d (MPI_TAG_UB)",
                            tag, ONIC_MPI_TAG_UB);
    /* A collective number of local_comm, as every member takes. */
    seq = lc->icoll_seq++;
    if (lc->rank == local_leader)
        hdr[0] = ic_leader(lc, peer_comm, remote_leader, tag, seq, &rworld, &theirs);
    hdr[1] = theirs.size;
    hdr[2] = theirs.id;
    hdr[3] = (int)theirs.seq;
    hdr[4] = theirs.leader;
    /* The leader's outcome, the remote group's key and ranks reach the
     * whole local group. */
    if ((rc = onic_mpi_coll_bcast(lc, hdr, 5, onic_mpi_type_get(MPI_INT), local_leader,
                                  call)) != MPI_SUCCESS) {
        onic_free(rworld);
        return rc;
    }
    if (hdr[0] != MPI_SUCCESS)
        return lc->rank == local_leader
                   ? hdr[0]
                   : onic_mpi_err(lc, hdr[0], call, "the local leader (rank %d) failed; see "
                                  "its error", local_leader);
    if (rworld == NULL && (rworld = onic_malloc((size_t)hdr[1] * sizeof(int))) == NULL)
        return onic_mpi_err(lc, MPI_ERR_NO_MEM, call, "no memory for %d ranks", hdr[1]);
    if ((rc = onic_mpi_coll_bcast(lc, rworld, hdr[1], onic_mpi_type_get(MPI_INT), local_leader,
                                  call)) != MPI_SUCCESS) {
        onic_free(rworld);
        return rc;
    }
    /* The claim's key, the same in both groups (mpi_impl.h,
     * onic_mpi_ctx_claim_t): each group's local communicator's id and
     * collective number and its leader's world rank, the group whose
     * leader has the lower world rank first; then the tag. */
    onic_mpi_ctx_claim_begin(&claim, lc, seq);
    {
        unsigned mine[3] = {(unsigned)lc->id, seq, (unsigned)lc->group->world[local_leader]};
        unsigned other[3] = {(unsigned)hdr[2], (unsigned)hdr[3], (unsigned)hdr[4]};
        const unsigned *lo = mine[2] < other[2] ? mine : other, *hi = lo == mine ? other : mine;

        claim.key[0] = lo[0];
        claim.key[1] = ONIC_MPI_CLAIM_INTERCOMM;
        claim.key[2] = lo[1];
        claim.key[3] = lo[2];
        claim.key[4] = hi[0];
        claim.key[5] = hi[1];
        claim.key[6] = hi[2];
        claim.key[7] = (unsigned)tag;
    }
    if ((rc = onic_mpi_ctx_claim_rounds(&claim, lc, ic_create_band,
                                        &(ic_create_arg_t){lc, local_leader, remote_leader, tag,
                                                           peer_comm},
                                        call, &id)) != MPI_SUCCESS) {
        onic_free(rworld);
        return rc;
    }
    g = onic_mpi_group_copy(lc->group);
    r = ic_group_of(rworld, hdr[1]);
    onic_free(rworld);
    if (g == NULL || r == NULL) {
        onic_mpi_group_unref(g);
        onic_mpi_group_unref(r);
        return onic_mpi_err(lc, MPI_ERR_NO_MEM, call, "no memory for the groups");
    }
    return ic_make(lc, g, r, id, call, newintercomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Intercomm_merge";
    onic_mpi_comm_t *ic;
    onic_mpi_group_t *g;
    int rc, id = 0, mine[2], theirs[2], first;

    if ((rc = ic_get(intercomm, call, &ic)) != MPI_SUCCESS)
        return rc;
    if (newintracomm == NULL)
        return onic_mpi_err(ic, MPI_ERR_ARG, call, "newintracomm is NULL");
    mine[0] = high != 0;
    mine[1] = ic->group->world[0];
    if ((rc = ic_swap(ic, mine, sizeof(mine), theirs, sizeof(theirs), call)) != MPI_SUCCESS ||
        (rc = ic_ctx(ic, call, &id)) != MPI_SUCCESS)
        return rc;
    /* The group that said high = false comes first; if both said the same,
     * the one whose leader has the lower world rank (MPI leaves the order
     * open, but both sides must pick the same). */
    first = mine[0] != theirs[0] ? !mine[0] : mine[1] < theirs[1];
    if ((g = onic_mpi_group_new(ic->size + ic->npeers)) == NULL)
        return onic_mpi_err(ic, MPI_ERR_NO_MEM, call, "no memory for a group of %d",
                            ic->size + ic->npeers);
    memcpy(g->world + (first ? 0 : ic->npeers), ic->group->world,
           (size_t)ic->size * sizeof(int));
    memcpy(g->world + (first ? ic->size : 0), ic->peers->world,
           (size_t)ic->npeers * sizeof(int));
    return onic_mpi_comm_publish(ic, g, id, call, newintracomm);
}

int onic_mpi_intercomm_dup(onic_mpi_comm_t *ic, const char *call, MPI_Comm *newcomm)
{
    int rc, id = 0;

    if ((rc = ic_ctx(ic, call, &id)) != MPI_SUCCESS)
        return rc;
    ic->group->refs++;
    ic->peers->refs++;
    return ic_make(ic, ic->group, ic->peers, id, call, newcomm);
}

/* MPI_Comm_idup's: a copy of ic, with its attributes, under the context
 * id both groups agreed on (icoll.c). */
int onic_mpi_intercomm_dup_as(onic_mpi_comm_t *ic, int id, const char *call, MPI_Comm *newcomm)
{
    int rc;

    ic->group->refs++;
    ic->peers->refs++;
    if ((rc = ic_make(ic, ic->group, ic->peers, id, call, newcomm)) != MPI_SUCCESS)
        return rc;
    onic_mpi_comm_lookup(*newcomm)->asserts = ic->asserts;
    if ((rc = onic_mpi_attr_copy(ic, onic_mpi_comm_lookup(*newcomm))) != MPI_SUCCESS) {
        onic_mpi_attr_release(onic_mpi_comm_lookup(*newcomm));
        MPI_Comm_free(newcomm);
    }
    return rc;
}

/* The members of one side with color, ordered by key then rank. */
static onic_mpi_group_t *ic_split_side(const int *pairs, const onic_mpi_group_t *side, int color)
{
    onic_mpi_split_entry_t *sel = onic_malloc((size_t)side->size * sizeof(*sel) + 1);
    onic_mpi_group_t *g;
    int n = 0;

    if (sel == NULL)
        return NULL;
    for (int i = 0; i < side->size; i++)
        if (pairs[2 * i] == color)
            sel[n++] = (onic_mpi_split_entry_t){color, pairs[2 * i + 1], i};
    qsort(sel, (size_t)n, sizeof(*sel), onic_mpi_comm_split_cmp);
    if ((g = onic_mpi_group_new(n)) != NULL)
        for (int i = 0; i < n; i++)
            g->world[i] = side->world[sel[i].rank];
    onic_free(sel);
    return g;
}

/* MPI_Comm_split of an intercommunicator: each color's local members
 * with the same color's remote members (MPI 3.1, 6.4.2). */
int onic_mpi_intercomm_split(onic_mpi_comm_t *ic, int color, int key, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_split";
    onic_mpi_group_t *g = NULL, *r = NULL;
    int mine[2] = {color, key}, *pairs, *rpairs, rc, id = 0;

    pairs = onic_malloc((size_t)ic->size * 2 * sizeof(int));
    rpairs = onic_malloc((size_t)ic->npeers * 2 * sizeof(int));
    if (pairs == NULL || rpairs == NULL) {
        onic_free(pairs);
        onic_free(rpairs);
        return onic_mpi_err(ic, MPI_ERR_NO_MEM, call, "no memory for the colors");
    }
    if ((rc = ic_allgather(ic, mine, 2, pairs, call)) == MPI_SUCCESS &&
        (rc = ic_swap(ic, pairs, (size_t)ic->size * 2 * sizeof(int), rpairs,
                      (size_t)ic->npeers * 2 * sizeof(int), call)) == MPI_SUCCESS &&
        (rc = ic_ctx(ic, call, &id)) == MPI_SUCCESS && color != MPI_UNDEFINED) {
        g = ic_split_side(pairs, ic->group, color);
        r = ic_split_side(rpairs, ic->peers, color);
        if (g == NULL || r == NULL)
            rc = onic_mpi_err(ic, MPI_ERR_NO_MEM, call, "no memory for the groups");
    }
    onic_free(pairs);
    onic_free(rpairs);
    if (rc != MPI_SUCCESS || color == MPI_UNDEFINED || r->size == 0) {
        onic_mpi_group_unref(g);
        onic_mpi_group_unref(r);
        *newcomm = MPI_COMM_NULL;
        return rc;
    }
    return ic_make(ic, g, r, id, call, newcomm);
}

/* MPI_Comm_create of an intercommunicator: each side names a subgroup of
 * its local group; the result joins the two (MPI 3.1, 6.4.2). */
int onic_mpi_intercomm_create_sub(onic_mpi_comm_t *ic, onic_mpi_group_t *sub, MPI_Comm *newcomm)
{
    const char *call = "MPI_Comm_create";
    onic_mpi_group_t *g, *r;
    int rc, id = 0, rsize = 0;

    if ((rc = onic_mpi_group_subset(ic, sub, call)) != MPI_SUCCESS)
        return rc;
    if ((rc = ic_swap(ic, &sub->size, sizeof(int), &rsize, sizeof(int), call)) != MPI_SUCCESS)
        return rc;
    if (rsize < 0 || rsize > ic->npeers)
        return onic_mpi_err(ic, MPI_ERR_INTERN, call, "the remote group says its subgroup has "
                            "%d of its %d processes", rsize, ic->npeers);
    g = onic_mpi_group_copy(sub);
    r = onic_mpi_group_new(rsize);
    if (g == NULL || r == NULL) {
        onic_mpi_group_unref(g);
        onic_mpi_group_unref(r);
        return onic_mpi_err(ic, MPI_ERR_NO_MEM, call, "no memory for the groups");
    }
    if ((rc = ic_swap(ic, sub->world, (size_t)sub->size * sizeof(int), r->world,
                      (size_t)rsize * sizeof(int), call)) != MPI_SUCCESS ||
        (rc = ic_ctx(ic, call, &id)) != MPI_SUCCESS || g->size == 0 || rsize == 0) {
        onic_mpi_group_unref(g);
        onic_mpi_group_unref(r);
        *newcomm = MPI_COMM_NULL;
        return rc;
    }
    return ic_make(ic, g, r, id, call, newcomm);
}

int onic_mpi_comm_create_group(onic_mpi_comm_t *c, onic_mpi_group_t *g, int tag, int session,
                               MPI_Errhandler errh, const char *call, MPI_Comm *newcomm)
{
    int rc, id;

    if (!session)
        errh = c->errh;
    /* A copy: another thread may free the program's group while this one
     * waits for the other members. One reference for the agreement, one
     * for the communicator. */
    if ((g = onic_mpi_group_copy(g)) == NULL)
        return onic_mpi_err_errh(errh, MPI_ERR_NO_MEM, call, "no memory for a group");
    g->refs++;
    if ((rc = onic_mpi_comm_ctx_alloc_group(c, g, tag, session, errh, call, &id)) !=
        MPI_SUCCESS) {
        onic_mpi_group_unref(g);
        return rc;
    }
    return onic_mpi_comm_publish_errh(g, id, errh, call, newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_create_group";
    onic_mpi_comm_t *c;
    onic_mpi_group_t *g;
    int rc, i;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (c->local != NULL)
        return onic_mpi_err(c, MPI_ERR_COMM, call, "communicator %#x is an "
                            "intercommunicator; pass an intracommunicator", (unsigned)comm);
    if ((g = onic_mpi_group_get(group)) == NULL)
        return onic_mpi_err(c, MPI_ERR_GROUP, call, "group %#x is not a live group",
                            (unsigned)group);
    if (newcomm == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "newcomm is NULL");
    if (tag < 0 || tag > ONIC_MPI_TAG_UB)
        return onic_mpi_err(c, MPI_ERR_TAG, call, "tag %d is outside 0 to %d (MPI_TAG_UB)",
                            tag, ONIC_MPI_TAG_UB);
    if ((rc = onic_mpi_group_subset(c, g, call)) != MPI_SUCCESS)
        return rc;
    if (g->size == 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    for (i = 0; i < g->size && g->world[i] != onic_mpi_g.rank; i++)
        ;
    if (i == g->size)
        return onic_mpi_err(c, MPI_ERR_GROUP, call, "this process is not in the group; only "
                            "the group's members call MPI_Comm_create_group");
    /* Only the group's members take part: they agree on an id among
     * themselves (comm.c, onic_mpi_comm_ctx_alloc_group), addressed by
     * their ranks in the group (a message names its sender's world rank,
     * so nobody outside the group can be taken for a member). */
    return onic_mpi_comm_create_group(c, g, tag, 0, MPI_ERRHANDLER_NULL, call, newcomm);
}

int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Comm_test_inter");
    if ((c = onic_mpi_comm_get(comm, "MPI_Comm_test_inter", &rc)) == NULL)
        return rc;
    if (flag == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag is NULL");
    *flag = c->local != NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    if ((rc = ic_get(comm, "MPI_Comm_remote_size", &c)) != MPI_SUCCESS)
        return rc;
    if (size == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_remote_size", "size is NULL");
    *size = c->npeers;
    return MPI_SUCCESS;
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    onic_mpi_group_t *g;
    int rc;

    if ((rc = ic_get(comm, "MPI_Comm_remote_group", &c)) != MPI_SUCCESS)
        return rc;
    if (group == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Comm_remote_group", "group is NULL");
    if ((g = onic_mpi_group_copy(c->peers)) == NULL || onic_mpi_group_publish(g, group) != 0) {
        onic_mpi_group_unref(g);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, "MPI_Comm_remote_group", "no room for a group");
    }
    return MPI_SUCCESS;
}
