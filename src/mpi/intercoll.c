/* Collectives on intercommunicators (MPI 3.1, 5.2.2), and MPI_Alltoallw.
 *
 * Built as the standard describes them, from point-to-point on the
 * intercommunicator (ranks name the remote group) and the collectives of
 * the hidden local intracommunicator `ic->local`:
 *
 *   barrier     a local barrier, the leaders (local rank 0) swap a message,
 *               a local broadcast lets the group go;
 *   bcast       the root (MPI_ROOT) sends to remote rank 0, which
 *               broadcasts in its group; MPI_PROC_NULL does nothing;
 *   gather(v), scatter(v)
 *               one message between the root and each remote process;
 *   allgather(v), alltoall(v,w)
 *               one message between each local and each remote process,
 *               all posted at once;
 *   reduce, allreduce, reduce_scatter(_block)
 *               a local reduction to the leader (in rank order, so an
 *               operation that does not commute is applied as MPI asks),
 *               then the leader sends it to the root, or the leaders swap
 *               their results and hand them to their groups.
 *
 * Gather(v), scatter(v) and the all-to-all family are described as a plan
 * (one message per pair of processes), which the blocking forms run here
 * and the non-blocking ones (icoll.c) make a round of their schedule.
 *
 * The local collectives use coll.c's tags on the local side's collective
 * context, which is the intercommunicator's own (one id); messages between
 * the groups use the tags below on it. A receive always names its source's
 * world rank and the groups are disjoint, so the two never match each
 * other's messages. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <string.h>

enum {
    INTER_TAG_BARRIER = 32,
    INTER_TAG_BCAST,
    INTER_TAG_GATHER,
    INTER_TAG_SCATTER,
    INTER_TAG_PAIRS,
    INTER_TAG_REDUCE,
    INTER_TAG_SPLIT, /* the leader's blocks of a reduce-scatter, within its group */
};

static onic_mpi_type_t *inter_bytes(void)
{
    return onic_mpi_type_get(MPI_BYTE);
}

onic_mpi_comm_t *onic_mpi_coll_inter(MPI_Comm comm)
{
    onic_mpi_comm_t *c;

    if (!onic_mpi_g.initialized || onic_mpi_g.finalized)
        return NULL;
    if ((c = onic_mpi_comm_lookup(comm)) == NULL || c->local == NULL)
        return NULL;
    if (onic_mpi_g.bundle_open) /* as ONIC_MPI_CHECK_INIT: a collective ends the bundle */
        onic_mpi_bundle_end();
    return c;
}

int onic_mpi_inter_root(onic_mpi_comm_t *ic, const char *call, int root, int *role_p)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL) {
        *role_p = root == MPI_ROOT;
        return MPI_SUCCESS;
    }
    if (root < 0 || root >= ic->npeers)
        return onic_mpi_err(ic, MPI_ERR_ROOT, call, "root %d is none of MPI_ROOT (the root), "
                            "MPI_PROC_NULL (the rest of its group) and a rank of the remote "
                            "group (0 to %d) on this intercommunicator", root, ic->npeers - 1);
    *role_p = -1;
    return MPI_SUCCESS;
}

static int inter_no_in_place(onic_mpi_comm_t *ic, const char *call, const void *buf)
{
    if (buf == MPI_IN_PLACE)
        return onic_mpi_err(ic, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is not allowed %s",
                            ic->local != NULL ? "on an intercommunicator (MPI 3.1, 5.2.2)"
                                              : "as the receive buffer; pass it as sendbuf");
    return MPI_SUCCESS;
}

/* n counts (and displacements) given, none negative. */
static int inter_counts(onic_mpi_comm_t *ic, const char *call, const char *what, int n,
                        const int counts[], const int displs[])
{
    if (counts == NULL || displs == NULL)
        return onic_mpi_err(ic, MPI_ERR_ARG, call, "%s%s is NULL", what,
                            counts == NULL ? "counts" : "displs");
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return onic_mpi_err(ic, MPI_ERR_COUNT, call, "%scounts[%d] = %d is negative", what,
                                i, counts[i]);
    return MPI_SUCCESS;
}

/* Leader to leader: send mine, receive theirs. */
static int inter_swap(onic_mpi_comm_t *ic, const void *mine, int mbytes, void *theirs,
                      int tbytes, int tag, const char *call)
{
    onic_mpi_req_t *r[2] = {NULL, NULL};
    int rc = onic_mpi_coll_irecv(theirs, tbytes, inter_bytes(), 0, tag, ic, &r[0]);

    if (rc == MPI_SUCCESS)
        rc = onic_mpi_coll_isend(mine, mbytes, inter_bytes(), 0, tag, ic, &r[1]);
    {
        int rc2 = onic_mpi_coll_waitall(2, r, call);
        return rc != MPI_SUCCESS ? rc : rc2;
    }
}

int onic_mpi_inter_barrier(onic_mpi_comm_t *ic, const char *call)
{
    onic_mpi_comm_t *l = ic->local;
    int rc;

    /* Every local process is in; the leaders tell each other so; the
     * broadcast lets the group out only once the remote group is in. */
    if ((rc = onic_mpi_coll_barrier(l, call)) != MPI_SUCCESS)
        return rc;
    if (l->rank == 0 && (rc = inter_swap(ic, NULL, 0, NULL, 0, INTER_TAG_BARRIER, call)) !=
                            MPI_SUCCESS)
        return rc;
    return onic_mpi_coll_bcast(l, NULL, 0, inter_bytes(), 0, call);
}

int onic_mpi_inter_bcast(onic_mpi_comm_t *ic, void *buf, int count, MPI_Datatype type,
                         int root, const char *call)
{
    onic_mpi_type_t *t;
    onic_mpi_req_t *r = NULL;
    int rc, role = 0;

    if ((rc = onic_mpi_inter_root(ic, call, root, &role)) != MPI_SUCCESS || role == 0)
        return rc;
    if ((rc = onic_mpi_coll_buf(ic, call, "", buf, count, type, &t)) != MPI_SUCCESS)
        return rc;
    if (role == 1) {
        if ((rc = onic_mpi_coll_isend(buf, count, t, 0, INTER_TAG_BCAST, ic, &r)) != MPI_SUCCESS)
            return rc;
        return onic_mpi_coll_waitall(1, &r, call);
    }
    if (ic->local->rank == 0 &&
        ((rc = onic_mpi_coll_irecv(buf, count, t, root, INTER_TAG_BCAST, ic, &r)) !=
             MPI_SUCCESS ||
         (rc = onic_mpi_coll_waitall(1, &r, call)) != MPI_SUCCESS))
        return rc;
    return onic_mpi_coll_bcast(ic->local, buf, count, t, 0, call);
}

/* --- Plans: one message per pair of processes, all posted at once ---------------------- */
static int inter_plan_new(onic_mpi_comm_t *c, const char *call, int n, int tag,
                          onic_mpi_plan_t *p)
{
    memset(p, 0, sizeof(*p));
    if ((p->send = onic_calloc(2 * (size_t)n + 1, sizeof(*p->send))) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d transfers", 2 * n);
    p->n = n;
    p->recv = p->send + n;
    p->tag = tag;
    return MPI_SUCCESS;
}

void onic_mpi_plan_free(onic_mpi_plan_t *p)
{
    onic_free(p->send);
    onic_free(p->copy);
    p->send = p->recv = NULL;
    p->copy = NULL;
}

/* The plan is made (rc): run it here and now (the blocking forms, out
 * NULL), or hand it to a non-blocking form (icoll.c) as *out. */
static int inter_plan_done(onic_mpi_comm_t *c, onic_mpi_plan_t *p, onic_mpi_plan_t *out, int rc,
                           const char *call)
{
    if (rc == MPI_SUCCESS && out != NULL) {
        *out = *p;
        return MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS)
        rc = onic_mpi_coll_pairs(c, p->n, p->send, p->recv, p->tag, call);
    onic_mpi_plan_free(p);
    return rc;
}

/* A process's one block with the root (rank root of the remote group). */
static int inter_to_root(onic_mpi_comm_t *ic, const char *call, const char *what, const void *buf,
                         int count, MPI_Datatype type, onic_mpi_pair_t *pair)
{
    onic_mpi_type_t *t;
    int rc;

    if ((rc = inter_no_in_place(ic, call, buf)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_buf(ic, call, what, buf, count, type, &t)) != MPI_SUCCESS)
        return rc;
    *pair = (onic_mpi_pair_t){(void *)(uintptr_t)buf, count, t};
    return MPI_SUCCESS;
}

/* The root's side of gather (recv) or scatter (send): block i with remote
 * process i, counts[i] elements at displs[i] extents of the type (the
 * v-forms), or counts NULL: count elements at i * count. */
static int inter_root_side(onic_mpi_comm_t *ic, const char *call, int gather, void *buf,
                           int count, const int counts[], const int displs[], MPI_Datatype type,
                           onic_mpi_pair_t *p)
{
    const char *what = gather ? "recv" : "send";
    onic_mpi_type_t *t;
    int rc;

    if (counts != NULL && (rc = inter_counts(ic, call, what, ic->npeers, counts, displs)) !=
                              MPI_SUCCESS)
        return rc;
    if ((rc = onic_mpi_coll_buf(ic, call, what, buf, counts != NULL ? 0 : count, type, &t)) !=
        MPI_SUCCESS)
        return rc;
    for (int i = 0; i < ic->npeers; i++) {
        int k = counts != NULL ? counts[i] : count;
        ptrdiff_t at = counts != NULL ? displs[i] : (ptrdiff_t)i * count;
        if (buf == NULL && k > 0 && t->size > 0)
            return onic_mpi_err(ic, MPI_ERR_BUFFER, call, "%sbuf is NULL with data to move",
                                what);
        p[i] = (onic_mpi_pair_t){(char *)buf + at * t->extent, k, t};
    }
    return MPI_SUCCESS;
}

/* Gather and gatherv (counts, displs NULL: recvcount each, in order). */
int onic_mpi_inter_gather(onic_mpi_comm_t *ic, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          int root, const char *call, onic_mpi_plan_t *plan)
{
    onic_mpi_plan_t p;
    int rc, role = 0;

    if ((rc = onic_mpi_inter_root(ic, call, root, &role)) != MPI_SUCCESS ||
        (rc = inter_plan_new(ic, call, ic->npeers, INTER_TAG_GATHER, &p)) != MPI_SUCCESS)
        return rc;
    if (role == -1)
        rc = inter_to_root(ic, call, "send", sendbuf, sendcount, sendtype, &p.send[root]);
    else if (role == 1)
        rc = inter_root_side(ic, call, 1, recvbuf, recvcount, recvcounts, displs, recvtype,
                             p.recv);
    return inter_plan_done(ic, &p, plan, rc, call);
}

/* Scatter and scatterv (counts, displs NULL: sendcount each, in order). */
int onic_mpi_inter_scatter(onic_mpi_comm_t *ic, const void *sendbuf, int sendcount,
                           const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                           const char *call, onic_mpi_plan_t *plan)
{
    onic_mpi_plan_t p;
    int rc, role = 0;

    if ((rc = onic_mpi_inter_root(ic, call, root, &role)) != MPI_SUCCESS ||
        (rc = inter_plan_new(ic, call, ic->npeers, INTER_TAG_SCATTER, &p)) != MPI_SUCCESS)
        return rc;
    if (role == -1)
        rc = inter_to_root(ic, call, "recv", recvbuf, recvcount, recvtype, &p.recv[root]);
    else if (role == 1)
        rc = inter_root_side(ic, call, 0, (void *)(uintptr_t)sendbuf, sendcount, sendcounts,
                             displs, sendtype, p.send);
    return inter_plan_done(ic, &p, plan, rc, call);
}

/* --- Every process with every peer -------------------------------------------------------- */
int onic_mpi_coll_pairs(onic_mpi_comm_t *c, int n, const onic_mpi_pair_t *send,
                        const onic_mpi_pair_t *recv, int tag, const char *call)
{
    onic_mpi_req_t **reqs = onic_calloc(2 * (size_t)n + 1, sizeof(*reqs));
    int rc = MPI_SUCCESS, rc2;

    if (reqs == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d requests", 2 * n);
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
        int peer = (c->rank + k) % n; /* spread the load: not all to rank 0 first */
        if (recv[peer].type != NULL)
            rc = onic_mpi_coll_irecv(recv[peer].buf, recv[peer].count, recv[peer].type, peer,
                                     tag, c, &reqs[2 * k]);
        if (rc == MPI_SUCCESS && send[peer].type != NULL)
            rc = onic_mpi_coll_isend(send[peer].buf, send[peer].count, send[peer].type, peer,
                                     tag, c, &reqs[2 * k + 1]);
    }
    rc2 = onic_mpi_coll_waitall(2 * n, reqs, call);
    onic_free(reqs);
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* One side of an all-to-all exchange: what each of n peers gets (sends)
 * or gives (receives). counts NULL: count each; displs NULL: blocks in
 * order; bytes: displs are in bytes (alltoallw); types NULL: type for all;
 * one: the same block for every peer (allgather's send side). */
static int inter_side(onic_mpi_comm_t *c, const char *call, const char *what, int n,
                      const void *buf, int count, const int counts[], const int displs[],
                      int bytes, MPI_Datatype type, const MPI_Datatype types[], int one,
                      onic_mpi_pair_t *p)
{
    onic_mpi_type_t *t = NULL;
    int rc;

    if (counts != NULL && (rc = inter_counts(c, call, what, n, counts, displs)) != MPI_SUCCESS)
        return rc;
    if (types == NULL && (rc = onic_mpi_coll_buf(c, call, what, buf, counts == NULL ? count : 0,
                                                 type, &t)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++) {
        int k = counts != NULL ? counts[i] : count;
        ptrdiff_t off;
        if (types != NULL && (t = onic_mpi_type_check(types[i], c, call, &rc)) == NULL)
            return rc;
        off = one ? 0 : displs == NULL ? (ptrdiff_t)i * count * t->extent
                      : bytes ? (ptrdiff_t)displs[i] : (ptrdiff_t)displs[i] * t->extent;
        if (buf == NULL && k > 0 && t->size > 0)
            return onic_mpi_err(c, MPI_ERR_BUFFER, call, "%sbuf is NULL with data to move",
                                what);
        p[i] = (onic_mpi_pair_t){(char *)(uintptr_t)buf + off, k, t};
    }
    return MPI_SUCCESS;
}

/* The all-to-all family on an intercommunicator, or MPI_Alltoallw on an
 * intracommunicator: describe both sides as a plan. */
int onic_mpi_coll_alltoall_any(onic_mpi_comm_t *c, const char *call, int gather,
                               const void *sendbuf, int sendcount, const int sendcounts[],
                               const int sdispls[], MPI_Datatype sendtype,
                               const MPI_Datatype sendtypes[], void *recvbuf, int recvcount,
                               const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, const MPI_Datatype recvtypes[],
                               onic_mpi_plan_t *plan)
{
    int n = c->local != NULL ? c->npeers : c->size, w = recvtypes != NULL, rc;
    int in_place = sendbuf == MPI_IN_PLACE;
    onic_mpi_plan_t pl;
    onic_mpi_pair_t *p;

    if ((c->local != NULL && (rc = inter_no_in_place(c, call, sendbuf)) != MPI_SUCCESS) ||
        (rc = inter_no_in_place(c, call, recvbuf)) != MPI_SUCCESS)
        return rc;
    if (w && sendtypes == NULL && !in_place)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "sendtypes is NULL");
    if ((rc = inter_plan_new(c, call, n, INTER_TAG_PAIRS, &pl)) != MPI_SUCCESS)
        return rc;
    p = pl.send;
    if ((rc = inter_side(c, call, "recv", n, recvbuf, recvcount, recvcounts, rdispls, w,
                         recvtype, recvtypes, 0, p + n)) == MPI_SUCCESS && in_place) {
        /* MPI_IN_PLACE (intracommunicators): block i of recvbuf goes to
         * process i, as much as it receives from it, from a packed copy. */
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += p[n + i].type->size * (size_t)p[n + i].count;
        if (total > INT32_MAX)
            rc = onic_mpi_err(c, MPI_ERR_COUNT, call, "MPI_IN_PLACE: the receive buffer holds "
                              "more than 2^31 bytes");
        else if ((pl.copy = onic_malloc(total + 1)) == NULL)
            rc = onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", total);
        for (size_t i = 0, at = 0; rc == MPI_SUCCESS && i < (size_t)n; i++) {
            size_t b = p[n + i].type->size * (size_t)p[n + i].count;
            onic_mpi_type_pack(p[n + i].type, p[n + i].buf, p[n + i].count, pl.copy + at);
            p[i] = (onic_mpi_pair_t){pl.copy + at, (int)b, inter_bytes()};
            at += b;
        }
    } else if (rc == MPI_SUCCESS) {
        rc = inter_side(c, call, "send", n, sendbuf, sendcount, gather ? NULL : sendcounts,
                        sdispls, w, sendtype, sendtypes, gather, p);
    }
    return inter_plan_done(c, &pl, plan, rc, call);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Alltoallw";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (recvtypes == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "recvtypes is NULL");
    return onic_mpi_coll_alltoall_any(c, call, 0, sendbuf, 0, sendcounts, sdispls, MPI_BYTE,
                                      sendtypes, recvbuf, 0, recvcounts, rdispls, MPI_BYTE,
                                      recvtypes, NULL);
}

/* --- Reductions --------------------------------------------------------------------------- */
int onic_mpi_inter_reduce_check(onic_mpi_comm_t *ic, const char *call, int send,
                                const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                MPI_Op op, onic_mpi_type_t **t_p, onic_mpi_opd_t *op_p)
{
    int rc;

    if ((rc = inter_no_in_place(ic, call, sendbuf)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_buf(ic, call, send ? "send" : "recv", send ? sendbuf : recvbuf,
                                count, type, t_p)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_op_check(op, *t_p, ic, call, op_p)) != MPI_SUCCESS)
        return rc;
    if ((*t_p)->size * (size_t)count > INT32_MAX)
        return onic_mpi_err(ic, MPI_ERR_COUNT, call, "%d elements of %zu bytes: onic reduces at "
                            "most 2^31 - 1 bytes in one call", count, (*t_p)->size);
    return MPI_SUCCESS;
}

/* This group's reduction of count elements, packed, at its leader (*acc_p,
 * the caller's; at the others too, unused). */
static int inter_reduce_local(onic_mpi_comm_t *ic, const char *call, const void *sendbuf,
                              int count, MPI_Datatype type, MPI_Op op, onic_mpi_type_t **t_p,
                              char **acc_p, size_t *bytes_p)
{
    onic_mpi_opd_t o;
    size_t bytes;
    char *acc;
    int rc;

    if ((rc = onic_mpi_inter_reduce_check(ic, call, 1, sendbuf, NULL, count, type, op, t_p,
                                          &o)) != MPI_SUCCESS)
        return rc;
    bytes = (*t_p)->size * (size_t)count;
    if ((acc = onic_malloc(bytes + 1)) == NULL)
        return onic_mpi_err(ic, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
    onic_mpi_type_pack(*t_p, sendbuf, count, acc);
    if ((rc = onic_mpi_coll_reduce(ic->local, acc, bytes, *t_p, &o, 0, call)) != MPI_SUCCESS) {
        onic_free(acc);
        return rc;
    }
    *acc_p = acc;
    *bytes_p = bytes;
    return MPI_SUCCESS;
}

int onic_mpi_inter_reduce(onic_mpi_comm_t *ic, const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype type, MPI_Op op, int root, const char *call)
{
    onic_mpi_type_t *t;
    onic_mpi_opd_t o;
    onic_mpi_req_t *r = NULL;
    char *acc = NULL;
    size_t bytes;
    int rc, role = 0;

    if ((rc = onic_mpi_inter_root(ic, call, root, &role)) != MPI_SUCCESS || role == 0)
        return rc;
    if (role == -1) {
        if ((rc = inter_reduce_local(ic, call, sendbuf, count, type, op, &t, &acc, &bytes)) !=
            MPI_SUCCESS)
            return rc;
        if (ic->local->rank == 0 &&
            (rc = onic_mpi_coll_isend(acc, (int)bytes, inter_bytes(), root, INTER_TAG_REDUCE, ic,
                                      &r)) == MPI_SUCCESS)
            rc = onic_mpi_coll_waitall(1, &r, call);
        onic_free(acc);
        return rc;
    }
    if ((rc = onic_mpi_inter_reduce_check(ic, call, 0, sendbuf, recvbuf, count, type, op, &t,
                                          &o)) != MPI_SUCCESS)
        return rc;
    bytes = t->size * (size_t)count;
    if ((acc = onic_malloc(bytes + 1)) == NULL)
        return onic_mpi_err(ic, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
    if ((rc = onic_mpi_coll_irecv(acc, (int)bytes, inter_bytes(), 0, INTER_TAG_REDUCE, ic,
                                  &r)) == MPI_SUCCESS &&
        (rc = onic_mpi_coll_waitall(1, &r, call)) == MPI_SUCCESS)
        onic_mpi_type_unpack(t, acc, bytes, recvbuf, count);
    onic_free(acc);
    return rc;
}

/* Allreduce and reduce-scatter: each group's reduction, swapped by the
 * leaders; counts NULL: the whole result to every process (allreduce),
 * else block i of it to local process i (count is their sum). */
int onic_mpi_inter_allreduce(onic_mpi_comm_t *ic, const void *sendbuf, void *recvbuf,
                             int count, const int counts[], MPI_Datatype type, MPI_Op op,
                             const char *call)
{
    onic_mpi_comm_t *l = ic->local;
    onic_mpi_type_t *t;
    onic_mpi_req_t **reqs = NULL;
    char *acc, *res = NULL;
    size_t bytes;
    int rc, mine = count;

    if ((rc = onic_mpi_coll_buf(ic, call, "recv", recvbuf, counts != NULL ? counts[l->rank] : count,
                                type, &t)) != MPI_SUCCESS ||
        (rc = inter_reduce_local(ic, call, sendbuf, count, type, op, &t, &acc, &bytes)) !=
            MPI_SUCCESS)
        return rc;
    if ((res = onic_malloc(bytes + 1)) == NULL) {
        onic_free(acc);
        return onic_mpi_err(ic, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
    }
    /* The groups' totals must agree: a longer one is a truncation here. */
    if (l->rank == 0)
        rc = inter_swap(ic, acc, (int)bytes, res, (int)bytes, INTER_TAG_REDUCE, call);
    if (rc == MPI_SUCCESS && counts == NULL) {
        rc = onic_mpi_coll_bcast(l, res, (int)bytes, inter_bytes(), 0, call);
    } else if (rc == MPI_SUCCESS) {
        /* The leader hands each its block; rc reaches the others as a
         * missing message only if the leader fails, which it reports. */
        size_t at = 0;
        mine = counts[l->rank];
        if (l->rank == 0 && (reqs = onic_calloc((size_t)l->size + 1, sizeof(*reqs))) == NULL)
            rc = onic_mpi_err(ic, MPI_ERR_NO_MEM, call, "no memory for %d requests", l->size);
        for (int i = 0; i < l->size && l->rank == 0 && rc == MPI_SUCCESS; i++) {
            if (i > 0)
                rc = onic_mpi_coll_isend(res + at, counts[i] * (int)t->size, inter_bytes(), i,
                                         INTER_TAG_SPLIT, l, &reqs[i]);
            at += (size_t)counts[i] * t->size;
        }
        if (l->rank == 0) {
            int rc2 = reqs != NULL ? onic_mpi_coll_waitall(l->size, reqs, call) : MPI_SUCCESS;
            rc = rc != MPI_SUCCESS ? rc : rc2;
            onic_free(reqs);
        } else {
            onic_mpi_req_t *one = NULL;
            if ((rc = onic_mpi_coll_irecv(res, mine * (int)t->size, inter_bytes(), 0,
                                          INTER_TAG_SPLIT, l, &one)) == MPI_SUCCESS)
                rc = onic_mpi_coll_waitall(1, &one, call);
        }
    }
    if (rc == MPI_SUCCESS)
        onic_mpi_type_unpack(t, res, t->size * (size_t)mine, recvbuf, mine);
    onic_free(res);
    onic_free(acc);
    return rc;
}

int onic_mpi_coll_rs_counts(onic_mpi_comm_t *c, const char *call, const int recvcounts[],
                            int *total_p)
{
    long long total = 0;

    if (recvcounts == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "recvcounts is NULL");
    for (int i = 0; i < c->size; i++) {
        if (recvcounts[i] < 0)
            return onic_mpi_err(c, MPI_ERR_COUNT, call, "recvcounts[%d] = %d is negative", i,
                                recvcounts[i]);
        total += recvcounts[i];
    }
    if (total > INT32_MAX)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "the counts add up to %lld elements, more "
                            "than an int counts", total);
    *total_p = (int)total;
    return MPI_SUCCESS;
}

int onic_mpi_inter_reduce_scatter(onic_mpi_comm_t *ic, const void *sendbuf, void *recvbuf,
                                  const int recvcounts[], MPI_Datatype type, MPI_Op op,
                                  const char *call)
{
    int total, rc = onic_mpi_coll_rs_counts(ic, call, recvcounts, &total);

    if (rc != MPI_SUCCESS)
        return rc;
    return onic_mpi_inter_allreduce(ic, sendbuf, recvbuf, total, recvcounts, type, op, call);
}
