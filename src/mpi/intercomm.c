/* Intercommunicators, and MPI_Comm_create_group.
 *
 * An intercommunicator is a communicator whose group is the local group
 * and whose point-to-point ranks name the remote group (comm->peers). A
 * message carries the sender's local rank, which is the rank the receiver
 * names it by, and the receiver's query names the sender's world rank, so
 * point-to-point needs nothing else (p2p.c, request.c).
 *
 * The two groups agree on a context id free at every process of both:
 * each group agrees on its own mask (an allreduce over its local side),
 * the local leaders (rank 0 of each group) swap the masks, and each
 * leader broadcasts the other's to its group. Those swaps and broadcasts
 * run on the intercommunicator's collective context, with tags above the
 * collectives' (intercoll.c). `ic->local` is the local group as a hidden
 * intracommunicator of the same id, for the broadcasts and allreduces of
 * these agreements and of the collectives. */
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
#define IC_MASK_WORDS (ONIC_MPI_MAX_CTX / 64)

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

static int ic_lowest(onic_mpi_comm_t *c, const uint64_t *mask, const char *call, int *id_p)
{
    for (int w = 0; w < IC_MASK_WORDS; w++)
        if (mask[w] != 0) {
            *id_p = w * 64 + __builtin_ctzll(mask[w]);
            return MPI_SUCCESS;
        }
    return onic_mpi_err(c, MPI_ERR_OTHER, call, "all %d communicator context ids are in use "
                        "at some process of the two groups; free communicators with "
                        "MPI_Comm_free", ONIC_MPI_MAX_CTX);
}

/* A context id free at every process of both groups. */
static int ic_ctx_agree(onic_mpi_comm_t *ic, const char *call, int *id_p)
{
    uint64_t mask[IC_MASK_WORDS], theirs[IC_MASK_WORDS];
    int rc;

    memcpy(mask, onic_mpi_g.ctx_free, sizeof(mask));
    if ((rc = onic_mpi_coll_ctx_agree(ic->local, mask, IC_MASK_WORDS, call)) != MPI_SUCCESS ||
        (rc = ic_swap(ic, mask, sizeof(mask), theirs, sizeof(theirs), call)) != MPI_SUCCESS)
        return rc;
    for (int w = 0; w < IC_MASK_WORDS; w++)
        mask[w] &= theirs[w];
    return ic_lowest(ic, mask, call, id_p);
}

/* The leaders' swap runs after the snapshot's agreement: the whole of it
 * counts as one agreement for the idups (icoll.c). */
static int ic_ctx(onic_mpi_comm_t *ic, const char *call, int *id_p)
{
    int rc;

    onic_mpi_g.ctx_agreeing++;
    rc = ic_ctx_agree(ic, call, id_p);
    onic_mpi_g.ctx_agreeing--;
    return rc;
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

/* What a local leader sends the other in MPI_Intercomm_create. */
typedef struct ic_hello {
    uint64_t mask[IC_MASK_WORDS];
    int      size; /* of its group; its world ranks follow */
    int      pad;
} ic_hello_t;

/* The leader's part of MPI_Intercomm_create: swap hellos and world ranks
 * with the remote leader over peer_comm, then the context id. */
static int ic_leader(onic_mpi_comm_t *lc, MPI_Comm peer_comm, int remote_leader, int tag,
                     const uint64_t *mask, int **rworld_p, int *rsize_p, int *id_p)
{
    const char *call = "MPI_Intercomm_create";
    onic_mpi_comm_t *pc;
    ic_hello_t mine, theirs;
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
    memset(&mine, 0, sizeof(mine));
    memcpy(mine.mask, mask, sizeof(mine.mask));
    mine.size = lc->size;
    if ((rc = MPI_Sendrecv(&mine, (int)sizeof(mine), MPI_BYTE, remote_leader, tag, &theirs,
                           (int)sizeof(theirs), MPI_BYTE, remote_leader, tag, peer_comm,
                           MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return rc;
    if (theirs.size < 1 || theirs.size > onic_mpi_g.size)
        return onic_mpi_err(lc, MPI_ERR_INTERN, call, "the remote leader says its group has "
                            "%d processes; the job has %d", theirs.size, onic_mpi_g.size);
    if ((rworld = onic_malloc((size_t)theirs.size * sizeof(int))) == NULL)
        return onic_mpi_err(lc, MPI_ERR_NO_MEM, call, "no memory for %d ranks", theirs.size);
    if ((rc = MPI_Sendrecv(lc->group->world, lc->size, MPI_INT, remote_leader, tag, rworld,
                           theirs.size, MPI_INT, remote_leader, tag, peer_comm,
                           MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
        onic_free(rworld);
        return rc;
    }
    for (int i = 0; i < theirs.size; i++) {
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
    for (int w = 0; w < IC_MASK_WORDS; w++)
        theirs.mask[w] &= mask[w];
    if ((rc = ic_lowest(lc, theirs.mask, call, id_p)) != MPI_SUCCESS) {
        onic_free(rworld);
        return rc;
    }
    *rworld_p = rworld;
    *rsize_p = theirs.size;
    return MPI_SUCCESS;
}

static int ic_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                     int remote_leader, int tag, MPI_Comm *newintercomm)
{
    const char *call = "MPI_Intercomm_create";
    uint64_t mask[IC_MASK_WORDS];
    onic_mpi_comm_t *lc;
    onic_mpi_group_t *g, *r;
    int rc, hdr[3] = {MPI_SUCCESS, 0, 0}, *rworld = NULL;

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
    memcpy(mask, onic_mpi_g.ctx_free, sizeof(mask));
    if ((rc = onic_mpi_coll_ctx_agree(lc, mask, IC_MASK_WORDS, call)) != MPI_SUCCESS)
        return rc;
    if (lc->rank == local_leader)
        hdr[0] = ic_leader(lc, peer_comm, remote_leader, tag, mask, &rworld, &hdr[2], &hdr[1]);
    /* The leader's outcome and the remote group reach the whole local group. */
    if ((rc = onic_mpi_coll_bcast(lc, hdr, 3, onic_mpi_type_get(MPI_INT), local_leader,
                                  call)) != MPI_SUCCESS) {
        onic_free(rworld);
        return rc;
    }
    if (hdr[0] != MPI_SUCCESS)
        return lc->rank == local_leader
                   ? hdr[0]
                   : onic_mpi_err(lc, hdr[0], call, "the local leader (rank %d) failed; see "
                                  "its error", local_leader);
    if (rworld == NULL && (rworld = onic_malloc((size_t)hdr[2] * sizeof(int))) == NULL)
        return onic_mpi_err(lc, MPI_ERR_NO_MEM, call, "no memory for %d ranks", hdr[2]);
    rc = onic_mpi_coll_bcast(lc, rworld, hdr[2], onic_mpi_type_get(MPI_INT), local_leader, call);
    g = onic_mpi_group_copy(lc->group);
    r = rc == MPI_SUCCESS ? ic_group_of(rworld, hdr[2]) : NULL;
    onic_free(rworld);
    if (rc != MPI_SUCCESS || g == NULL || r == NULL) {
        onic_mpi_group_unref(g);
        onic_mpi_group_unref(r);
        return rc != MPI_SUCCESS ? rc : onic_mpi_err(lc, MPI_ERR_NO_MEM, call, "no memory for "
                                                      "the groups");
    }
    return ic_make(lc, g, r, hdr[1], call, newintercomm);
}

/* From the snapshot of the free ids to the new communicator, one
 * agreement for the idups (icoll.c). */
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    ONIC_MPI_LOCKED;
    int rc;

    onic_mpi_g.ctx_agreeing++;
    rc = ic_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm);
    onic_mpi_g.ctx_agreeing--;
    return rc;
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

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_create_group";
    uint64_t mask[IC_MASK_WORDS];
    onic_mpi_comm_t *c, *sub;
    onic_mpi_group_t *g;
    int rc, id = 0;

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
    /* Only the group's members take part: they agree on an id among
     * themselves, over the parent's collective context addressed by their
     * ranks in the group (a message names its sender's world rank, so
     * nobody outside the group can be taken for a member). */
    if ((sub = onic_mpi_comm_new(g, c->id, c->errh)) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a communicator");
    if (sub->rank == MPI_UNDEFINED) {
        onic_free(sub);
        return onic_mpi_err(c, MPI_ERR_GROUP, call, "this process is not in the group; only "
                            "the group's members call MPI_Comm_create_group");
    }
    memcpy(mask, onic_mpi_g.ctx_free, sizeof(mask));
    rc = onic_mpi_coll_ctx_agree(sub, mask, IC_MASK_WORDS, call);
    onic_free(sub);
    if (rc != MPI_SUCCESS || (rc = ic_lowest(c, mask, call, &id)) != MPI_SUCCESS)
        return rc;
    if ((g = onic_mpi_group_copy(g)) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a group");
    return onic_mpi_comm_publish(c, g, id, call, newcomm);
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
