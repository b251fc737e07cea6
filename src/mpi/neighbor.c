/* The neighbourhood collectives (MPI 3.1, 7.6): MPI_Neighbor_allgather,
 * allgatherv, alltoall, alltoallv, alltoallw and their non-blocking forms,
 * on a communicator with a Cartesian, graph or distributed-graph topology.
 *
 * A process receives block i from its i-th in-neighbour and sends to its
 * out-neighbours (topo.c, onic_mpi_topo_neighbors, gives both lists): the
 * same block to each (allgather) or block i to the i-th (alltoall). Every
 * transfer is posted at once on the communicator's collective context, as
 * one round (icoll.c) for the non-blocking forms; a Cartesian neighbour
 * off the grid (MPI_PROC_NULL) keeps its block, untouched, and moves
 * nothing.
 *
 * One tag carries every block, so two blocks between the same two
 * processes (a periodic dimension of 1 or 2 processes, a graph's repeated
 * edge) match in the order they are posted. A process sends in its
 * neighbour order; the receives are posted so that they match it: in a
 * Cartesian dimension the +1 neighbour's block comes first, because what
 * that process sends first in that dimension goes to its -1 neighbour,
 * this one (MPICH's coll/ring_neighbor_alltoall checks this on a ring of
 * two). A graph's neighbours are symmetric and a distributed graph's are
 * as the program named them, so their order is kept. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <string.h>

enum { NBR_TAG = 48 }; /* above coll.c's, collv.c's and intercoll.c's tags */

/* One side (send or receive) of a neighbourhood collective, in one of
 * three forms: NBR_PLAIN, count elements of type at buf + i * count
 * extents for neighbour i (allgather's send side: the same block, `same`,
 * for every neighbour); NBR_V, counts[i] at displs[i] extents; NBR_W,
 * counts[i] of types[i] at wdispls[i] bytes. */
enum { NBR_PLAIN, NBR_V, NBR_W };
typedef struct nbr_side {
    const char         *what;     /* "send" or "recv", for messages */
    int                 form;
    void               *buf;
    int                 count;
    const int          *counts, *displs;
    const MPI_Aint     *wdispls;
    MPI_Datatype        type;
    const MPI_Datatype *types;
    int                 same;
} nbr_side_t;

/* Check side s for n neighbours and fill x[i] (peer from peers[i]). */
static int nbr_side(onic_mpi_comm_t *c, const char *call, const nbr_side_t *s, int n,
                    const int peers[], int send, onic_mpi_xfer_t *x)
{
    onic_mpi_type_t *t = NULL;
    int rc;

    if (s->buf == MPI_IN_PLACE)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "%sbuf is MPI_IN_PLACE, which the "
                            "neighbourhood collectives do not take (MPI 3.1, 7.6)", s->what);
    /* The type (and a plain form's count) are checked even with no
     * neighbour: the error does not depend on where the process is. */
    if (s->form != NBR_W &&
        (rc = onic_mpi_coll_buf(c, call, s->what, s->buf, s->form == NBR_PLAIN ? s->count : 0,
                                s->type, &t)) != MPI_SUCCESS)
        return rc;
    if (n > 0 && s->form != NBR_PLAIN &&
        (s->counts == NULL || (s->form == NBR_V ? s->displs == NULL : s->wdispls == NULL) ||
         (s->form == NBR_W && s->types == NULL)))
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s%s is NULL with %d neighbours", s->what,
                            s->counts == NULL ? "counts" : s->form == NBR_W && s->types == NULL
                            ? "types" : "displs", n);
    for (int i = 0; i < n; i++) {
        onic_mpi_type_t *ti = t;
        int k = s->form == NBR_PLAIN ? s->count : s->counts[i];
        char *at = s->buf;
        if (k < 0)
            return onic_mpi_err(c, MPI_ERR_COUNT, call, "%scounts[%d] = %d is negative",
                                s->what, i, k);
        if (s->form == NBR_W) {
            if ((ti = onic_mpi_type_check(s->types[i], c, call, &rc)) == NULL)
                return rc;
            /* Through an integer: buf may be MPI_BOTTOM (NULL) with
             * absolute addresses, and NULL + offset is undefined in C. */
            at = (char *)((uintptr_t)s->buf + (uintptr_t)s->wdispls[i]);
        } else if (s->form == NBR_V) {
            at += (ptrdiff_t)s->displs[i] * ti->extent;
        } else if (!s->same) {
            at += (ptrdiff_t)i * k * ti->extent;
        }
        if (s->form != NBR_PLAIN && s->buf == NULL && k > 0 && ti->size > 0)
            return onic_mpi_err(c, MPI_ERR_BUFFER, call, "%sbuf is NULL with data to move "
                                "(%scounts[%d] = %d)", s->what, s->what, i, k);
        x[i] = (onic_mpi_xfer_t){send, peers[i], k, at, ti};
    }
    return MPI_SUCCESS;
}

/* Every neighbourhood collective: check, list the transfers, run them
 * (request NULL: blocking) or start them as a round. */
static int nbr_coll(const char *call, MPI_Comm comm, nbr_side_t *send, nbr_side_t *recv,
                    int blocking, MPI_Request *request)
{
    onic_mpi_comm_t *c;
    const int *in, *out;
    int *alloc = NULL, nin, nout, rc, n = 0;
    onic_mpi_xfer_t *x = NULL, *posted = NULL;

    send->what = "send";
    recv->what = "recv";
    /* Its own message: the shared check's (merge it first) does not apply. */
    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_err(c, MPI_ERR_COMM, call, "communicator %#x is an intercommunicator; "
                            "%s needs one with a process topology, which only an "
                            "intracommunicator can have", (unsigned)comm, call);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS)
        return rc;
    if (!blocking && request == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "request is NULL; pass where to store the "
                            "request");
    if ((rc = onic_mpi_topo_neighbors(c, call, &nin, &in, &nout, &out, &alloc)) != MPI_SUCCESS)
        return rc;
    /* x: the receives in neighbour order, then the sends; posted: what
     * is posted, in the order it is. */
    if ((x = onic_malloc(((size_t)nin + (size_t)nout + 1) * sizeof(*x))) == NULL ||
        (posted = onic_malloc(((size_t)nin + (size_t)nout + 1) * sizeof(*x))) == NULL) {
        rc = onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d transfers", nin + nout);
        goto out;
    }
    if ((rc = nbr_side(c, call, recv, nin, in, 0, x)) != MPI_SUCCESS ||
        (rc = nbr_side(c, call, send, nout, out, 1, x + nin)) != MPI_SUCCESS)
        goto out;
    for (int i = 0; i < nin; i++) {
        /* A Cartesian dimension's pair of slots, +1 first (see the top). */
        int k = c->topo->kind == MPI_CART ? i ^ 1 : i;
        if (x[k].peer != MPI_PROC_NULL)
            posted[n++] = x[k];
    }
    for (int i = nin; i < nin + nout; i++)
        if (x[i].peer != MPI_PROC_NULL)
            posted[n++] = x[i];
    if (!blocking) {
        rc = onic_mpi_icoll_xfers(c, call, n, posted, request);
    } else {
        onic_mpi_req_t **reqs = onic_calloc((size_t)n + 1, sizeof(*reqs));
        int rc2;
        if (reqs == NULL) {
            rc = onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d requests", n);
            goto out;
        }
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            rc = posted[i].send
                     ? onic_mpi_coll_isend(posted[i].buf, posted[i].count, posted[i].type,
                                           posted[i].peer, NBR_TAG, c, &reqs[i])
                     : onic_mpi_coll_irecv(posted[i].buf, posted[i].count, posted[i].type,
                                           posted[i].peer, NBR_TAG, c, &reqs[i]);
        rc2 = onic_mpi_coll_waitall(n, reqs, call);
        onic_free(reqs);
        if (rc == MPI_SUCCESS)
            rc = rc2;
    }
out:
    onic_free(x);
    onic_free(posted);
    onic_free(alloc);
    return rc;
}

/* --- The calls ---------------------------------------------------------------------------- */
static int nbr_allgather(const char *call, int v, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, int blocking, MPI_Request *request)
{
    nbr_side_t s = {.form = NBR_PLAIN, .buf = (void *)(uintptr_t)sendbuf, .count = sendcount,
                    .type = sendtype, .same = 1};
    nbr_side_t r = {.form = v ? NBR_V : NBR_PLAIN, .buf = recvbuf, .count = recvcount,
                    .counts = recvcounts, .displs = displs, .type = recvtype};

    return nbr_coll(call, comm, &s, &r, blocking, request);
}

static int nbr_alltoall(const char *call, int form, const void *sendbuf, int sendcount,
                        const int sendcounts[], const int sdispls[], const MPI_Aint swdispls[],
                        MPI_Datatype sendtype, const MPI_Datatype sendtypes[], void *recvbuf,
                        int recvcount, const int recvcounts[], const int rdispls[],
                        const MPI_Aint rwdispls[], MPI_Datatype recvtype,
                        const MPI_Datatype recvtypes[], MPI_Comm comm, int blocking,
                        MPI_Request *request)
{
    nbr_side_t s = {.form = form, .buf = (void *)(uintptr_t)sendbuf, .count = sendcount,
                    .counts = sendcounts, .displs = sdispls, .wdispls = swdispls,
                    .type = sendtype, .types = sendtypes};
    nbr_side_t r = {.form = form, .buf = recvbuf, .count = recvcount, .counts = recvcounts,
                    .displs = rdispls, .wdispls = rwdispls, .type = recvtype,
                    .types = recvtypes};

    return nbr_coll(call, comm, &s, &r, blocking, request);
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return nbr_allgather("MPI_Neighbor_allgather", 0, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, comm, 1, NULL);
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return nbr_allgather("MPI_Neighbor_allgatherv", 1, sendbuf, sendcount, sendtype, recvbuf, 0,
                         recvcounts, displs, recvtype, comm, 1, NULL);
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return nbr_alltoall("MPI_Neighbor_alltoall", NBR_PLAIN, sendbuf, sendcount, NULL, NULL,
                        NULL, sendtype, NULL, recvbuf, recvcount, NULL, NULL, NULL, recvtype,
                        NULL, comm, 1, NULL);
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return nbr_alltoall("MPI_Neighbor_alltoallv", NBR_V, sendbuf, 0, sendcounts, sdispls, NULL,
                        sendtype, NULL, recvbuf, 0, recvcounts, rdispls, NULL, recvtype, NULL,
                        comm, 1, NULL);
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                           void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return nbr_alltoall("MPI_Neighbor_alltoallw", NBR_W, sendbuf, 0, sendcounts, NULL, sdispls,
                        MPI_DATATYPE_NULL, sendtypes, recvbuf, 0, recvcounts, NULL, rdispls,
                        MPI_DATATYPE_NULL, recvtypes, comm, 1, NULL);
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return nbr_allgather("MPI_Ineighbor_allgather", 0, sendbuf, sendcount, sendtype, recvbuf,
                         recvcount, NULL, NULL, recvtype, comm, 0, request);
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return nbr_allgather("MPI_Ineighbor_allgatherv", 1, sendbuf, sendcount, sendtype, recvbuf, 0,
                         recvcounts, displs, recvtype, comm, 0, request);
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return nbr_alltoall("MPI_Ineighbor_alltoall", NBR_PLAIN, sendbuf, sendcount, NULL, NULL, NULL,
                        sendtype, NULL, recvbuf, recvcount, NULL, NULL, NULL, recvtype, NULL,
                        comm, 0, request);
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return nbr_alltoall("MPI_Ineighbor_alltoallv", NBR_V, sendbuf, 0, sendcounts, sdispls, NULL,
                        sendtype, NULL, recvbuf, 0, recvcounts, rdispls, NULL, recvtype, NULL,
                        comm, 0, request);
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request)
{
    ONIC_MPI_LOCKED;
    return nbr_alltoall("MPI_Ineighbor_alltoallw", NBR_W, sendbuf, 0, sendcounts, NULL, sdispls,
                        MPI_DATATYPE_NULL, sendtypes, recvbuf, 0, recvcounts, NULL, rdispls,
                        MPI_DATATYPE_NULL, recvtypes, comm, 0, request);
}
