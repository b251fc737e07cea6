/* The collectives with a count per process (gatherv, scatterv, allgatherv,
 * alltoallv), reduce-scatter, the prefix reductions (scan, exscan), and
 * user operations (MPI_Op_create), on coll.c's point-to-point helpers and
 * over the communicator's collective context.
 *
 * The v-forms post every transfer at once (linear: one message per pair
 * that has data), as coll.c's gather and alltoall do. Reduce-scatter is a
 * reduce to rank 0 then a scatterv; scan and exscan pass the prefix along
 * the ranks in order, so an operation that does not commute is applied in
 * rank order. MPI_IN_PLACE is taken wherever MPI 3.1 allows it. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <string.h>

enum {
    COLLV_TAG_GATHERV = 16,
    COLLV_TAG_SCATTERV,
    COLLV_TAG_ALLGATHERV,
    COLLV_TAG_ALLTOALLV,
    COLLV_TAG_SCAN,
    COLLV_TAG_EXSCAN,
};

static char *collv_at(const void *buf, const onic_mpi_type_t *t, int displ)
{
    return (char *)(uintptr_t)buf + (ptrdiff_t)displ * t->extent;
}

/* counts[] (and displs[], if asked) of n processes: given, not negative. */
static int collv_counts(onic_mpi_comm_t *c, const char *call, const char *what,
                        const int counts[], const int displs[], int need_displs)
{
    if (counts == NULL || (need_displs && displs == NULL))
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s%s is NULL", what,
                            counts == NULL ? "counts" : "displs");
    for (int i = 0; i < c->size; i++)
        if (counts[i] < 0)
            return onic_mpi_err(c, MPI_ERR_COUNT, call, "%scounts[%d] = %d is negative", what, i,
                                counts[i]);
    return MPI_SUCCESS;
}

/* A buffer given for counts: NULL only if every count is 0 or the type empty. */
static int collv_buf(onic_mpi_comm_t *c, const char *call, const char *what, const void *buf,
                     const int counts[], MPI_Datatype type, onic_mpi_type_t **t_p)
{
    int rc, any = 0;

    if ((rc = onic_mpi_coll_buf(c, call, what, buf, 0, type, t_p)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < c->size; i++)
        any |= counts[i] > 0;
    if (buf == NULL && any && (*t_p)->size > 0)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "%sbuf is NULL with data to move", what);
    return MPI_SUCCESS;
}

/* Wait for n requests (NULL entries skipped), free the array, keep the
 * first error. */
static int collv_finish(int n, onic_mpi_req_t **reqs, int rc, const char *call)
{
    int rc2 = onic_mpi_coll_waitall(n, reqs, call);

    onic_free(reqs);
    return rc != MPI_SUCCESS ? rc : rc2;
}

static onic_mpi_req_t **collv_reqs(onic_mpi_comm_t *c, const char *call, int per_peer, int *rc_p)
{
    onic_mpi_req_t **reqs = onic_calloc((size_t)c->size * (size_t)per_peer, sizeof(*reqs));

    if (reqs == NULL)
        *rc_p = onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d requests",
                             c->size * per_peer);
    return reqs;
}

/* --- Gatherv, scatterv ----------------------------------------------------------------- */
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Gatherv";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *st = NULL, *rt;
    onic_mpi_req_t *one = NULL, **reqs;
    int rc, in_place = sendbuf == MPI_IN_PLACE;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_inter_gather(c, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                                     displs, recvtype, root, call, NULL);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS)
        return rc;
    if (in_place && c->rank != root)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is for the root only");
    if (!in_place &&
        (rc = onic_mpi_coll_buf(c, call, "send", sendbuf, sendcount, sendtype, &st)) !=
            MPI_SUCCESS)
        return rc;
    if (c->rank != root) {
        if ((rc = onic_mpi_coll_isend(sendbuf, sendcount, st, root, COLLV_TAG_GATHERV, c, &one)) !=
            MPI_SUCCESS)
            return rc;
        return onic_mpi_coll_waitall(1, &one, call);
    }
    if ((rc = collv_counts(c, call, "recv", recvcounts, displs, 1)) != MPI_SUCCESS ||
        (rc = collv_buf(c, call, "recv", recvbuf, recvcounts, recvtype, &rt)) != MPI_SUCCESS ||
        (reqs = collv_reqs(c, call, 1, &rc)) == NULL)
        return rc;
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++)
        if (i != root)
            rc = onic_mpi_coll_irecv(collv_at(recvbuf, rt, displs[i]), recvcounts[i], rt, i,
                                     COLLV_TAG_GATHERV, c, &reqs[i]);
    if (rc == MPI_SUCCESS && !in_place)
        rc = onic_mpi_coll_local_copy(c, call, sendbuf, sendcount, st,
                                      collv_at(recvbuf, rt, displs[root]), recvcounts[root], rt);
    return collv_finish(c->size, reqs, rc, call);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Scatterv";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *st, *rt = NULL;
    onic_mpi_req_t *one = NULL, **reqs;
    int rc, in_place = recvbuf == MPI_IN_PLACE;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_inter_scatter(c, sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                                      recvcount, recvtype, root, call, NULL);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_root(c, call, root)) != MPI_SUCCESS)
        return rc;
    if (in_place && c->rank != root)
        return onic_mpi_err(c, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is for the root only");
    if (!in_place &&
        (rc = onic_mpi_coll_buf(c, call, "recv", recvbuf, recvcount, recvtype, &rt)) !=
            MPI_SUCCESS)
        return rc;
    if (c->rank != root) {
        if ((rc = onic_mpi_coll_irecv(recvbuf, recvcount, rt, root, COLLV_TAG_SCATTERV, c,
                                      &one)) != MPI_SUCCESS)
            return rc;
        return onic_mpi_coll_waitall(1, &one, call);
    }
    if ((rc = collv_counts(c, call, "send", sendcounts, displs, 1)) != MPI_SUCCESS ||
        (rc = collv_buf(c, call, "send", sendbuf, sendcounts, sendtype, &st)) != MPI_SUCCESS ||
        (reqs = collv_reqs(c, call, 1, &rc)) == NULL)
        return rc;
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++)
        if (i != root)
            rc = onic_mpi_coll_isend(collv_at(sendbuf, st, displs[i]), sendcounts[i], st, i,
                                     COLLV_TAG_SCATTERV, c, &reqs[i]);
    if (rc == MPI_SUCCESS && !in_place)
        rc = onic_mpi_coll_local_copy(c, call, collv_at(sendbuf, st, displs[root]),
                                      sendcounts[root], st, recvbuf, recvcount, rt);
    return collv_finish(c->size, reqs, rc, call);
}

/* --- Allgatherv, alltoallv ------------------------------------------------------------- */
/* Where block i of an allgather's receive buffer starts: displs[i]
 * elements in, or i * count with no displs (MPI_Allgather, which checks
 * that count * size fits an int). */
static char *allgather_at(void *recvbuf, const onic_mpi_type_t *rt, int count,
                          const int displs[], int i)
{
    return collv_at(recvbuf, rt, displs != NULL ? displs[i] : i * count);
}

int onic_mpi_coll_allgather_xchg(onic_mpi_comm_t *c, const void *sendbuf, int sendcount,
                                 onic_mpi_type_t *st, void *recvbuf, int recvcount,
                                 const int recvcounts[], const int displs[],
                                 onic_mpi_type_t *rt, const char *call)
{
    onic_mpi_req_t **reqs;
    int rc = MPI_SUCCESS, in_place = sendbuf == MPI_IN_PLACE;

    if (in_place) {
        /* Our block is already in place: send it from there. */
        sendbuf = allgather_at(recvbuf, rt, recvcount, displs, c->rank);
        sendcount = recvcounts != NULL ? recvcounts[c->rank] : recvcount;
        st = rt;
    }
    if ((reqs = collv_reqs(c, call, 2, &rc)) == NULL)
        return rc;
    for (int k = 1; k < c->size && rc == MPI_SUCCESS; k++) {
        /* Peers in a ring order from each rank: not all to rank 0 first. */
        int to = (c->rank + k) % c->size, from = (c->rank - k + c->size) % c->size;
        rc = onic_mpi_coll_irecv(allgather_at(recvbuf, rt, recvcount, displs, from),
                                 recvcounts != NULL ? recvcounts[from] : recvcount, rt, from,
                                 COLLV_TAG_ALLGATHERV, c, &reqs[2 * k]);
        if (rc == MPI_SUCCESS)
            rc = onic_mpi_coll_isend(sendbuf, sendcount, st, to, COLLV_TAG_ALLGATHERV, c,
                                     &reqs[2 * k + 1]);
    }
    if (rc == MPI_SUCCESS && !in_place)
        rc = onic_mpi_coll_local_copy(c, call, sendbuf, sendcount, st,
                                      allgather_at(recvbuf, rt, recvcount, displs, c->rank),
                                      recvcounts != NULL ? recvcounts[c->rank] : recvcount, rt);
    return collv_finish(2 * c->size, reqs, rc, call);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Allgatherv";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *st = NULL, *rt;
    int rc;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_coll_alltoall_any(c, call, 1, sendbuf, sendcount, NULL, NULL, sendtype,
                                          NULL, recvbuf, 0, recvcounts, displs, recvtype, NULL,
                                          NULL);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = collv_counts(c, call, "recv", recvcounts, displs, 1)) != MPI_SUCCESS ||
        (rc = collv_buf(c, call, "recv", recvbuf, recvcounts, recvtype, &rt)) != MPI_SUCCESS)
        return rc;
    if (sendbuf != MPI_IN_PLACE &&
        (rc = onic_mpi_coll_buf(c, call, "send", sendbuf, sendcount, sendtype, &st)) !=
            MPI_SUCCESS)
        return rc;
    return onic_mpi_coll_allgather_xchg(c, sendbuf, sendcount, st, recvbuf, 0, recvcounts,
                                        displs, rt, call);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Alltoallv";
    onic_mpi_comm_t *c;
    onic_mpi_type_t *st, *rt;
    onic_mpi_req_t **reqs;
    char *copy = NULL;
    int rc, *offs = NULL;

    if ((c = onic_mpi_coll_inter(comm)) != NULL)
        return onic_mpi_coll_alltoall_any(c, call, 0, sendbuf, 0, sendcounts, sdispls, sendtype,
                                          NULL, recvbuf, 0, recvcounts, rdispls, recvtype, NULL,
                                          NULL);
    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = collv_counts(c, call, "recv", recvcounts, rdispls, 1)) != MPI_SUCCESS ||
        (rc = collv_buf(c, call, "recv", recvbuf, recvcounts, recvtype, &rt)) != MPI_SUCCESS)
        return rc;
    if (sendbuf == MPI_IN_PLACE) {
        /* Send from a packed copy of each block of the receive buffer:
         * block i goes to process i, as much as it receives from it. */
        size_t total = 0;
        if ((offs = onic_calloc((size_t)c->size + 1, sizeof(int))) == NULL)
            return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d offsets", c->size);
        for (int i = 0; i < c->size; i++) {
            if (total + rt->size * (size_t)recvcounts[i] > INT32_MAX) {
                onic_free(offs);
                return onic_mpi_err(c, MPI_ERR_COUNT, call, "MPI_IN_PLACE: the receive buffer "
                                    "holds more than 2^31 bytes");
            }
            offs[i] = (int)total;
            total += rt->size * (size_t)recvcounts[i];
        }
        if ((copy = onic_malloc(total + 1)) == NULL) {
            onic_free(offs);
            return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", total);
        }
        for (int i = 0; i < c->size; i++)
            onic_mpi_type_pack(rt, collv_at(recvbuf, rt, rdispls[i]), recvcounts[i],
                               copy + offs[i]);
        st = onic_mpi_type_get(MPI_BYTE);
    } else if ((rc = collv_counts(c, call, "send", sendcounts, sdispls, 1)) != MPI_SUCCESS ||
               (rc = collv_buf(c, call, "send", sendbuf, sendcounts, sendtype, &st)) !=
                   MPI_SUCCESS) {
        return rc;
    }
    if ((reqs = collv_reqs(c, call, 2, &rc)) == NULL) {
        onic_free(copy);
        onic_free(offs);
        return rc;
    }
    for (int k = 0; k < c->size && rc == MPI_SUCCESS; k++) {
        int peer = (c->rank + k) % c->size;
        rc = onic_mpi_coll_irecv(collv_at(recvbuf, rt, rdispls[peer]), recvcounts[peer], rt,
                                 peer, COLLV_TAG_ALLTOALLV, c, &reqs[2 * k]);
        if (rc != MPI_SUCCESS)
            break;
        if (copy != NULL)
            rc = onic_mpi_coll_isend(copy + offs[peer], (int)(rt->size * (size_t)recvcounts[peer]),
                                     st, peer, COLLV_TAG_ALLTOALLV, c, &reqs[2 * k + 1]);
        else
            rc = onic_mpi_coll_isend(collv_at(sendbuf, st, sdispls[peer]), sendcounts[peer], st,
                                     peer, COLLV_TAG_ALLTOALLV, c, &reqs[2 * k + 1]);
    }
    rc = collv_finish(2 * c->size, reqs, rc, call);
    onic_free(copy);
    onic_free(offs);
    return rc;
}

/* --- Reduce-scatter, scans -------------------------------------------------------------- */
/* Check a reduction's arguments and pack its input (sendbuf, or recvbuf
 * for MPI_IN_PLACE) into a fresh buffer of count elements. */
static int collv_reduce_begin(const char *call, onic_mpi_comm_t *c, const void *sendbuf,
                              const void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              onic_mpi_type_t **t_p, onic_mpi_opd_t *op_p, char **acc_p,
                              size_t *bytes_p)
{
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int rc;

    if ((rc = onic_mpi_coll_buf(c, call, "send", in, count, datatype, t_p)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_op_check(op, *t_p, c, call, op_p)) != MPI_SUCCESS)
        return rc;
    *bytes_p = (*t_p)->size * (size_t)count;
    if (*bytes_p > INT32_MAX)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "%d elements of %zu bytes: onic reduces at "
                            "most 2^31 - 1 bytes in one call", count, (*t_p)->size);
    if ((*acc_p = onic_malloc(*bytes_p + 1)) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", *bytes_p);
    onic_mpi_type_pack(*t_p, in, count, *acc_p);
    return MPI_SUCCESS;
}

/* The sum of counts[], or -1 (reported) past an int. */
static int collv_total(onic_mpi_comm_t *c, const char *call, const int counts[], int *rc_p)
{
    long long total = 0;

    for (int i = 0; i < c->size; i++)
        total += counts[i];
    if (total > INT32_MAX) {
        *rc_p = onic_mpi_err(c, MPI_ERR_COUNT, call, "the counts add up to %lld elements, more "
                             "than an int counts", total);
        return -1;
    }
    return (int)total;
}

static int collv_reduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                                const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm)
{
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    onic_mpi_opd_t o;
    char *acc;
    size_t bytes;
    int rc, total, *displs, *bcounts;

    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = collv_counts(c, call, "recv", recvcounts, NULL, 0)) != MPI_SUCCESS ||
        (total = collv_total(c, call, recvcounts, &rc)) < 0)
        return rc;
    if (sendbuf != MPI_IN_PLACE &&
        (rc = onic_mpi_coll_buf(c, call, "recv", recvbuf, recvcounts[c->rank], datatype, &t)) !=
            MPI_SUCCESS)
        return rc;
    if ((rc = collv_reduce_begin(call, c, sendbuf, recvbuf, total, datatype, op, &t, &o, &acc,
                                 &bytes)) != MPI_SUCCESS)
        return rc;
    displs = onic_calloc(2 * (size_t)c->size, sizeof(int));
    if (displs == NULL) {
        onic_free(acc);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d counts", c->size);
    }
    bcounts = displs + c->size;
    /* Block i: recvcounts[i] packed elements, as bytes. */
    for (int i = 0, at = 0; i < c->size; i++) {
        displs[i] = at * (int)t->size;
        bcounts[i] = recvcounts[i] * (int)t->size;
        at += recvcounts[i];
    }
    rc = onic_mpi_coll_reduce(c, acc, bytes, t, &o, 0, call);
    if (rc == MPI_SUCCESS) {
        /* Rank 0 scatters the blocks (packed bytes); each unpacks its own.
         * In place, the result goes to the start of recvbuf. */
        size_t mine = (size_t)bcounts[c->rank];
        char *part = onic_malloc(mine + 1);
        if (part == NULL) {
            rc = onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", mine);
        } else {
            rc = MPI_Scatterv(acc, bcounts, displs, MPI_BYTE, part, (int)mine, MPI_BYTE, 0,
                              c->handle);
            if (rc == MPI_SUCCESS)
                onic_mpi_type_unpack(t, part, mine, recvbuf, recvcounts[c->rank]);
            onic_free(part);
        }
    }
    onic_free(displs);
    onic_free(acc);
    return rc;
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *ic = onic_mpi_coll_inter(comm);

    if (ic != NULL)
        return onic_mpi_inter_reduce_scatter(ic, sendbuf, recvbuf, recvcounts, datatype, op,
                                             "MPI_Reduce_scatter");
    return collv_reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op,
                                comm);
}

int onic_mpi_coll_block_counts(onic_mpi_comm_t *c, const char *call, int recvcount,
                               int **counts_p)
{
    int *counts;

    if (recvcount < 0)
        return onic_mpi_err(c, MPI_ERR_COUNT, call, "recvcount %d is negative", recvcount);
    if ((counts = onic_calloc((size_t)c->size, sizeof(int))) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d counts", c->size);
    for (int i = 0; i < c->size; i++)
        counts[i] = recvcount;
    *counts_p = counts;
    return MPI_SUCCESS;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Reduce_scatter_block";
    onic_mpi_comm_t *c = onic_mpi_coll_inter(comm);
    int rc, *counts;

    if (c == NULL && (rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS)
        return rc;
    if ((rc = onic_mpi_coll_block_counts(c, call, recvcount, &counts)) != MPI_SUCCESS)
        return rc;
    rc = c->local != NULL
             ? onic_mpi_inter_reduce_scatter(c, sendbuf, recvbuf, counts, datatype, op, call)
             : collv_reduce_scatter(call, sendbuf, recvbuf, counts, datatype, op, comm);
    onic_free(counts);
    return rc;
}

/* Inclusive (exclusive 0) or exclusive (1) prefix reduction along the
 * ranks: rank r takes the prefix of 0..r-1 from r-1, and passes on that
 * prefix op its own input. */
static int collv_scan(const char *call, int exclusive, const void *sendbuf, void *recvbuf,
                      int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    onic_mpi_comm_t *c;
    onic_mpi_type_t *t;
    onic_mpi_opd_t o;
    onic_mpi_req_t *r = NULL;
    char *acc, *prev = NULL;
    size_t bytes;
    int rc, tag = exclusive ? COLLV_TAG_EXSCAN : COLLV_TAG_SCAN;

    if ((rc = onic_mpi_coll_comm(comm, call, &c)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_buf(c, call, "recv", recvbuf, count, datatype, &t)) != MPI_SUCCESS ||
        (rc = collv_reduce_begin(call, c, sendbuf, recvbuf, count, datatype, op, &t, &o, &acc,
                                 &bytes)) != MPI_SUCCESS)
        return rc;
    if (c->rank > 0) {
        if ((prev = onic_malloc(bytes + 1)) == NULL) {
            onic_free(acc);
            return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
        }
        rc = onic_mpi_coll_irecv(prev, (int)bytes, onic_mpi_type_get(MPI_BYTE), c->rank - 1, tag,
                                 c, &r);
        if (rc == MPI_SUCCESS)
            rc = onic_mpi_coll_waitall(1, &r, call);
        /* Exscan's result is the prefix before us; rank 0's is undefined
         * (its recvbuf is left as it is). */
        if (rc == MPI_SUCCESS && exclusive)
            onic_mpi_type_unpack(t, prev, bytes, recvbuf, count);
        /* acc = prefix op ours, the prefix on the left. */
        if (rc == MPI_SUCCESS)
            onic_mpi_coll_apply(&o, t, prev, acc, bytes);
    }
    if (rc == MPI_SUCCESS && !exclusive)
        onic_mpi_type_unpack(t, acc, bytes, recvbuf, count);
    if (rc == MPI_SUCCESS && c->rank + 1 < c->size) {
        rc = onic_mpi_coll_isend(acc, (int)bytes, onic_mpi_type_get(MPI_BYTE), c->rank + 1, tag, c,
                                 &r);
        if (rc == MPI_SUCCESS)
            rc = onic_mpi_coll_waitall(1, &r, call);
    }
    onic_free(prev);
    onic_free(acc);
    return rc;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return collv_scan("MPI_Scan", 0, sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    ONIC_MPI_LOCKED;
    return collv_scan("MPI_Exscan", 1, sendbuf, recvbuf, count, datatype, op, comm);
}

/* --- Local reduction ----------------------------------------------------------------------- */
int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Reduce_local";
    onic_mpi_type_t *t;
    onic_mpi_opd_t o;
    size_t bytes;
    char *a, *b;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((rc = onic_mpi_coll_buf(NULL, call, "in", inbuf, count, datatype, &t)) != MPI_SUCCESS ||
        (rc = onic_mpi_coll_buf(NULL, call, "inout", inoutbuf, count, datatype, &t)) !=
            MPI_SUCCESS ||
        (rc = onic_mpi_coll_op_check(op, t, NULL, call, &o)) != MPI_SUCCESS)
        return rc;
    bytes = t->size * (size_t)count;
    /* inoutbuf = inbuf op inoutbuf: in place where the type lays elements
     * out packed (MPI makes aliased buffers erroneous), else on packed
     * copies as the collectives do. */
    if (onic_mpi_acc_in_recvbuf(t, bytes)) {
        onic_mpi_coll_apply(&o, t, (const char *)inbuf + t->blocks[0].off,
                            (char *)inoutbuf + t->blocks[0].off, bytes);
        return MPI_SUCCESS;
    }
    a = onic_mpi_scratch_get(bytes + 1);
    b = onic_mpi_scratch_get(bytes + 1);
    if (a == NULL || b == NULL) {
        onic_mpi_scratch_put(a);
        onic_mpi_scratch_put(b);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for %zu bytes", bytes);
    }
    onic_mpi_type_pack(t, inbuf, count, a);
    onic_mpi_type_pack(t, inoutbuf, count, b);
    onic_mpi_coll_apply(&o, t, a, b, bytes);
    onic_mpi_type_unpack(t, b, bytes, inoutbuf, count);
    onic_mpi_scratch_put(a);
    onic_mpi_scratch_put(b);
    return MPI_SUCCESS;
}

/* --- User operations --------------------------------------------------------------------- */
int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Op_create";
    onic_mpi_op_t *o;

    ONIC_MPI_CHECK_INIT(call);
    if (user_fn == NULL || op == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s is NULL",
                            user_fn == NULL ? "user_fn" : "op");
    if ((o = onic_calloc(1, sizeof(*o))) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for an operation");
    o->fn = user_fn;
    o->commute = commute != 0;
    if (onic_mpi_htab_add(&onic_mpi_g.ops, o, &o->handle) != 0) {
        onic_free(o);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no room for an operation handle");
    }
    *op = o->handle;
    return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op *op)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Op_free";
    onic_mpi_op_t *o;

    ONIC_MPI_CHECK_INIT(call);
    if (op == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "op is NULL; pass the address of the handle");
    if (*op >= MPI_MAX && *op <= MPI_MINLOC)
        return onic_mpi_err(NULL, MPI_ERR_OP, call, "a predefined operation cannot be freed");
    if ((o = onic_mpi_htab_get(&onic_mpi_g.ops, *op)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_OP, call, "op %#x is not an operation from "
                            "MPI_Op_create (or was freed)", (unsigned)*op);
    onic_mpi_htab_del(&onic_mpi_g.ops, o->handle);
    onic_free(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Op_commutative";
    onic_mpi_op_t *o;

    ONIC_MPI_CHECK_INIT(call);
    if (commute == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "commute is NULL");
    if (op >= MPI_MAX && op <= MPI_MINLOC) {
        *commute = 1;
        return MPI_SUCCESS;
    }
    if ((o = onic_mpi_htab_get(&onic_mpi_g.ops, op)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_OP, call, "op %#x is not an operation", (unsigned)op);
    *commute = o->commute;
    return MPI_SUCCESS;
}

void onic_mpi_op_fini(void)
{
    onic_mpi_htab_t *t = &onic_mpi_g.ops;

    for (int i = 0; i < t->used; i++)
        onic_free(t->obj[i]);
}
