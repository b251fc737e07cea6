/* Process topologies (MPI 3.1, chapter 7): Cartesian grids, graphs and
 * distributed graphs.
 *
 * A communicator with a topology is an ordinary one (made by
 * MPI_Comm_split, so it has its own context id) with the topology
 * attached: the dims and periods given to MPI_Cart_create, the whole graph
 * given to MPI_Graph_create, or this process's in- and out-edges of a
 * distributed graph. Ranks are never reordered (`reorder` is ignored): on
 * one node every order is as good as another. MPI_Comm_dup keeps the
 * topology (comm.c), freeing the communicator frees it. A Cartesian grid
 * is in row-major order (the last dimension varies fastest). */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <string.h>

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY (mpi.h): only their addresses count. */
int onic_mpi_unweighted[1], onic_mpi_weights_empty[1];

void onic_mpi_topo_free(onic_mpi_topo_t *t)
{
    if (t == NULL)
        return;
    onic_free(t->mem);
    onic_free(t);
}

/* Point the arrays into t->mem, from the counts. */
static void topo_layout(onic_mpi_topo_t *t)
{
    int *m = t->mem;

    switch (t->kind) {
    case MPI_CART:
        t->dims = m;
        t->periods = m + t->ndims;
        break;
    case MPI_GRAPH:
        t->index = m;
        t->edges = m + t->nnodes;
        break;
    default:
        t->sources = m;
        t->sweights = m + t->indegree;
        t->dests = m + 2 * (size_t)t->indegree;
        t->dweights = t->dests + t->outdegree;
        break;
    }
}

/* A topology of `kind` with room for its arrays: a and b are ndims (b
 * unused), nnodes and nedges, or indegree and outdegree. */
static onic_mpi_topo_t *topo_new_kind(int kind, int a, int b)
{
    onic_mpi_topo_t *t = onic_calloc(1, sizeof(*t));

    if (t == NULL)
        return NULL;
    t->kind = kind;
    if (kind == MPI_CART) {
        t->ndims = a;
        t->nmem = 2 * (size_t)a;
    } else if (kind == MPI_GRAPH) {
        t->nnodes = a;
        t->nedges = b;
        t->nmem = (size_t)a + (size_t)b;
    } else {
        t->indegree = a;
        t->outdegree = b;
        t->nmem = 2 * ((size_t)a + (size_t)b);
    }
    /* One slot even for none: a NULL mem would mean no memory. */
    if ((t->mem = onic_calloc(t->nmem + 1, sizeof(int))) == NULL) {
        onic_free(t);
        return NULL;
    }
    topo_layout(t);
    return t;
}

static onic_mpi_topo_t *topo_new(int ndims)
{
    return topo_new_kind(MPI_CART, ndims, 0);
}

onic_mpi_topo_t *onic_mpi_topo_dup(const onic_mpi_topo_t *t)
{
    onic_mpi_topo_t *n = onic_malloc(sizeof(*n));

    if (n == NULL)
        return NULL;
    *n = *t;
    if ((n->mem = onic_malloc((t->nmem + 1) * sizeof(int))) == NULL) {
        onic_free(n);
        return NULL;
    }
    memcpy(n->mem, t->mem, (t->nmem + 1) * sizeof(int));
    topo_layout(n);
    return n;
}

/* --- MPI_Dims_create ------------------------------------------------------------ */
/* The most balanced split of n over the k free dimensions, as a
 * non-increasing list (MPI 3.1, 7.5.2): every factorization with factors
 * in non-increasing order is tried, largest leading factors first, and the
 * one with the smallest spread (largest factor minus smallest) kept; among
 * those, the one with the larger smallest dimension, then the larger next
 * smallest, and so on (41 x 9 x 8 x 6, not 41 x 12 x 6 x 6; 38 x 37 x 21 x
 * 20, not 37 x 30 x 28 x 19: the choices of MPICH's topo/dims5, which MPI
 * leaves open). */
typedef struct dims_search {
    int  k;
    int *cur, *best;
    int  best_spread;
    /* The divisors of the whole, largest first: the only factors to try
     * (counting every f down from n made 75,000 calls with n up to 10^6,
     * MPICH's topo/dims5, take minutes). */
    int *divs, ndivs;
} dims_search_t;

static void dims_try(dims_search_t *s, int i, int n, int maxf)
{
    if (i == s->k - 1) {
        int spread;
        if (n > maxf)
            return;
        int better = 0;
        s->cur[i] = n;
        spread = s->cur[0] - n;
        /* On a tie, the larger smallest dimension, then the larger next
         * smallest, ... (both lists are non-increasing). */
        for (int j = s->k - 1; s->best_spread == spread && j > 0 && !better; j--) {
            if (s->cur[j] < s->best[j])
                break;
            better = s->cur[j] > s->best[j];
        }
        if (s->best_spread < 0 || spread < s->best_spread || better) {
            s->best_spread = spread;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof(int));
        }
        return;
    }
    /* cur[i] = f, with f^(k-i) >= n (the rest are at most f) and f | n. */
    for (int d = 0; d < s->ndivs; d++) {
        int f = s->divs[d];
        long long p = 1;
        int j;
        if (f > maxf || f > n || n % f != 0)
            continue;
        for (j = i; j < s->k && p < n; j++)
            p *= f;
        if (p < n)
            break; /* smaller f cannot cover n either */
        /* Pruning: a spread already worse than the best cannot improve. */
        if (s->best_spread >= 0 && i > 0 && s->cur[0] - f > s->best_spread)
            continue;
        s->cur[i] = f;
        dims_try(s, i + 1, n / f, f);
    }
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Dims_create";
    long long fixed = 1;
    int nfree = 0, rest;

    ONIC_MPI_CHECK_INIT(call);
    if (nnodes <= 0)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "nnodes %d; give the number of processes "
                            "(1 or more) to arrange in a grid", nnodes);
    if (ndims < 0)
        return onic_mpi_err(NULL, MPI_ERR_DIMS, call, "ndims %d is negative", ndims);
    if (ndims > 0 && dims == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "dims is NULL with ndims %d", ndims);
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return onic_mpi_err(NULL, MPI_ERR_DIMS, call, "dims[%d] = %d is negative; give 0 "
                                "for a dimension to choose, or its size", i, dims[i]);
        if (dims[i] == 0)
            nfree++;
        else
            fixed *= dims[i];
        if (fixed > nnodes)
            break;
    }
    if (fixed > nnodes || nnodes % fixed != 0)
        return onic_mpi_err(NULL, MPI_ERR_DIMS, call, "the dimensions given (product %lld) do "
                            "not divide nnodes %d", fixed, nnodes);
    rest = (int)(nnodes / fixed);
    if (nfree == 0) {
        if (rest != 1)
            return onic_mpi_err(NULL, MPI_ERR_DIMS, call, "every dimension is given and their "
                                "product %lld is not nnodes %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    {
        /* A number up to 2^31 has at most 1600 divisors. */
        int *buf = onic_calloc(2 * (size_t)nfree + 1600, sizeof(int)), nsmall = 0;
        dims_search_t s = {nfree, buf, buf + nfree, -1, buf + 2 * nfree, 0};
        if (buf == NULL)
            return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for %d dimensions",
                                nfree);
        /* Largest first: the cofactors of the divisors up to the square
         * root (which come out descending), then those divisors. */
        {
            int small[800];
            for (long long f = 1; f * f <= rest; f++)
                if (rest % f == 0)
                    small[nsmall++] = (int)f;
            for (int i = 0; i < nsmall; i++)
                if (rest / small[i] != small[i])
                    s.divs[s.ndivs++] = rest / small[i];
            for (int i = nsmall - 1; i >= 0; i--)
                s.divs[s.ndivs++] = small[i];
        }
        dims_try(&s, 0, rest, rest);
        for (int i = 0, j = 0; i < ndims; i++)
            if (dims[i] == 0)
                dims[i] = s.best[j++];
        onic_free(buf);
    }
    return MPI_SUCCESS;
}

/* --- Cartesian communicators ------------------------------------------------------ */
static const char *topo_name(int kind)
{
    return kind == MPI_CART ? "Cartesian" : kind == MPI_GRAPH ? "graph" : "distributed-graph";
}

/* comm, if it is a communicator with a topology of `kind`; else NULL and
 * the error reported (MPI_ERR_TOPOLOGY for another topology or none). */
static onic_mpi_comm_t *topo_comm_kind(MPI_Comm comm, int kind, const char *call, int *rc_p)
{
    static const char *const how[] = {[MPI_CART] = "MPI_Cart_create",
                                      [MPI_GRAPH] = "MPI_Graph_create",
                                      [MPI_DIST_GRAPH] = "MPI_Dist_graph_create(_adjacent)"};
    onic_mpi_comm_t *c = onic_mpi_comm_get(comm, call, rc_p);

    if (c != NULL && (c->topo == NULL || c->topo->kind != kind)) {
        if (c->topo == NULL)
            *rc_p = onic_mpi_err(c, MPI_ERR_TOPOLOGY, call, "communicator %#x has no "
                                 "topology; %s needs a %s one, made by %s", (unsigned)comm,
                                 call, topo_name(kind), how[kind]);
        else
            *rc_p = onic_mpi_err(c, MPI_ERR_TOPOLOGY, call, "communicator %#x has a %s "
                                 "topology; %s needs a %s one, made by %s", (unsigned)comm,
                                 topo_name(c->topo->kind), call, topo_name(kind), how[kind]);
        return NULL;
    }
    return c;
}

static onic_mpi_comm_t *topo_comm(MPI_Comm comm, const char *call, int *rc_p)
{
    return topo_comm_kind(comm, MPI_CART, call, rc_p);
}

/* A rank's coordinates in t (row-major). */
static void topo_coords(const onic_mpi_topo_t *t, int rank, int n, int coords[])
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        if (i < n)
            coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* The error of a topology asked of intercommunicator c: MPI 3.1, 7.1
 * defines topologies (their creation and the mapping that would place
 * one) for intracommunicators only. */
static int topo_inter(onic_mpi_comm_t *c, const char *call)
{
    return onic_mpi_err(c, MPI_ERR_COMM, call, "communicator %#x is an intercommunicator; "
                        "process topologies are for intracommunicators only (MPI 3.1, 7.1): "
                        "pass one, e.g. from MPI_Intercomm_merge", (unsigned)c->handle);
}

/* Attach a topology to a new communicator; on failure the communicator goes. */
static int topo_attach(MPI_Comm *newcomm, onic_mpi_topo_t *t, onic_mpi_comm_t *parent,
                       const char *call)
{
    onic_mpi_comm_t *n;

    if (*newcomm == MPI_COMM_NULL) {
        onic_mpi_topo_free(t);
        return MPI_SUCCESS;
    }
    n = onic_mpi_comm_lookup(*newcomm);
    if (t == NULL) {
        MPI_Comm_free(newcomm);
        return onic_mpi_err(parent, MPI_ERR_NO_MEM, call, "no memory for the topology");
    }
    n->topo = t;
    return MPI_SUCCESS;
}

/* The grid MPI_Cart_create and MPI_Cart_map take: *n_p its processes, at
 * most c's. */
static int cart_check(onic_mpi_comm_t *c, const char *call, int ndims, const int dims[],
                      const int periods[], long long *n_p)
{
    long long n = 1;

    if (ndims < 0)
        return onic_mpi_err(c, MPI_ERR_DIMS, call, "ndims %d is negative", ndims);
    if (ndims > 0 && (dims == NULL || periods == NULL))
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL with ndims %d",
                            dims == NULL ? "dims" : "periods", ndims);
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return onic_mpi_err(c, MPI_ERR_DIMS, call, "dims[%d] = %d; every dimension needs "
                                "1 or more processes (MPI_Dims_create can choose them)", i,
                                dims[i]);
        n *= dims[i];
        if (n > c->size)
            return onic_mpi_err(c, MPI_ERR_TOPOLOGY, call, "the grid of the first %d "
                                "dimensions already has %lld processes, more than the %d of "
                                "the communicator", i + 1, n, c->size);
    }
    *n_p = n;
    return MPI_SUCCESS;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Cart_create";
    onic_mpi_comm_t *c;
    onic_mpi_topo_t *t;
    long long n = 1;
    int rc;

    (void)reorder; /* ranks are kept: see the top of this file */
    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm_old, call, &rc)) == NULL)
        return rc;
    if (c->local != NULL)
        return topo_inter(c, call);
    if (comm_cart == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "comm_cart is NULL");
    if ((rc = cart_check(c, call, ndims, dims, periods, &n)) != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_split(comm_old, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, comm_cart)) !=
        MPI_SUCCESS)
        return rc;
    if ((t = topo_new(ndims)) != NULL)
        for (int i = 0; i < ndims; i++) {
            t->dims[i] = dims[i];
            t->periods[i] = periods[i] != 0;
        }
    return topo_attach(comm_cart, t, c, call);
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Cartdim_get");
    if ((c = topo_comm(comm, "MPI_Cartdim_get", &rc)) == NULL)
        return rc;
    if (ndims == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Cartdim_get", "ndims is NULL");
    *ndims = c->topo->ndims;
    return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int *status)
{
    ONIC_MPI_LOCKED;
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Topo_test");
    if ((c = onic_mpi_comm_get(comm, "MPI_Topo_test", &rc)) == NULL)
        return rc;
    if (status == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Topo_test", "status is NULL");
    *status = c->topo != NULL ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Cart_get";
    onic_mpi_comm_t *c;
    int rc, n;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm(comm, call, &rc)) == NULL)
        return rc;
    if (maxdims < 0)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "maxdims %d is negative", maxdims);
    n = maxdims < c->topo->ndims ? maxdims : c->topo->ndims;
    if (n > 0 && (dims == NULL || periods == NULL || coords == NULL))
        return onic_mpi_err(c, MPI_ERR_ARG, call, "dims, periods or coords is NULL");
    for (int i = 0; i < n; i++) {
        dims[i] = c->topo->dims[i];
        periods[i] = c->topo->periods[i];
    }
    topo_coords(c->topo, c->rank, n, coords);
    return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Cart_coords";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm(comm, call, &rc)) == NULL)
        return rc;
    if (rank < 0 || rank >= c->size)
        return onic_mpi_err(c, MPI_ERR_RANK, call, "rank %d is not in the grid (0 to %d)", rank,
                            c->size - 1);
    if (maxdims < c->topo->ndims)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "maxdims %d is less than the grid's %d "
                            "dimensions", maxdims, c->topo->ndims);
    if (c->topo->ndims > 0 && coords == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "coords is NULL");
    topo_coords(c->topo, rank, c->topo->ndims, coords);
    return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Cart_rank";
    onic_mpi_comm_t *c;
    const onic_mpi_topo_t *t;
    int rc, r = 0;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm(comm, call, &rc)) == NULL)
        return rc;
    t = c->topo;
    if (rank == NULL || (t->ndims > 0 && coords == NULL))
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL", rank == NULL ? "rank" : "coords");
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i];
        if (t->periods[i])
            x = ((x % t->dims[i]) + t->dims[i]) % t->dims[i];
        else if (x < 0 || x >= t->dims[i])
            return onic_mpi_err(c, MPI_ERR_RANK, call, "coords[%d] = %d is outside dimension "
                                "%d (0 to %d), which is not periodic", i, x, i, t->dims[i] - 1);
        r = r * t->dims[i] + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Cart_shift";
    onic_mpi_comm_t *c;
    const onic_mpi_topo_t *t;
    int rc, coords_buf[32], *coords, out[2];

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm(comm, call, &rc)) == NULL)
        return rc;
    t = c->topo;
    if (rank_source == NULL || rank_dest == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL",
                            rank_source == NULL ? "rank_source" : "rank_dest");
    if (direction < 0 || direction >= t->ndims)
        return onic_mpi_err(c, MPI_ERR_DIMS, call, "direction %d is not a dimension of the grid "
                            "(0 to %d)", direction, t->ndims - 1);
    coords = t->ndims <= 32 ? coords_buf : onic_malloc((size_t)t->ndims * sizeof(int));
    if (coords == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d coordinates", t->ndims);
    for (int k = 0; k < 2; k++) {
        /* k 0: the source, -disp away; k 1: the destination, +disp. */
        long long x;
        int d = t->dims[direction], r = 0;
        topo_coords(t, c->rank, t->ndims, coords);
        x = (long long)coords[direction] + (k == 0 ? -(long long)disp : disp);
        if (t->periods[direction])
            x = ((x % d) + d) % d;
        if (x < 0 || x >= d) {
            out[k] = MPI_PROC_NULL;
            continue;
        }
        coords[direction] = (int)x;
        for (int i = 0; i < t->ndims; i++)
            r = r * t->dims[i] + coords[i];
        out[k] = r;
    }
    if (coords != coords_buf)
        onic_free(coords);
    *rank_source = out[0];
    *rank_dest = out[1];
    return MPI_SUCCESS;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Cart_sub";
    onic_mpi_comm_t *c;
    const onic_mpi_topo_t *t;
    onic_mpi_topo_t *nt;
    int rc, color = 0, key = 0, kept = 0, *coords;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm(comm, call, &rc)) == NULL)
        return rc;
    t = c->topo;
    if (newcomm == NULL || (t->ndims > 0 && remain_dims == NULL))
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL",
                            newcomm == NULL ? "newcomm" : "remain_dims");
    if ((coords = onic_calloc((size_t)t->ndims + 1, sizeof(int))) == NULL)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d coordinates", t->ndims);
    topo_coords(t, c->rank, t->ndims, coords);
    /* Same color: same coordinates in the dimensions dropped; the key
     * orders the rest row-major, which is the rank order already. */
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + coords[i];
            kept++;
        } else {
            color = color * t->dims[i] + coords[i];
        }
    }
    onic_free(coords);
    /* Nothing kept: a zero-dimensional grid, which has one process, as
     * MPI_Cart_create with ndims 0 makes it: rank 0's; the others get
     * MPI_COMM_NULL (MPICH's reading, and its test suite's). */
    if (kept == 0)
        color = c->rank == 0 ? 0 : MPI_UNDEFINED;
    if ((rc = MPI_Comm_split(comm, color, key, newcomm)) != MPI_SUCCESS)
        return rc;
    if ((nt = topo_new(kept)) != NULL)
        for (int i = 0, j = 0; i < t->ndims; i++)
            if (remain_dims[i]) {
                nt->dims[j] = t->dims[i];
                nt->periods[j++] = t->periods[i];
            }
    return topo_attach(newcomm, nt, c, call);
}

/* --- MPI_Cart_map, MPI_Graph_map ------------------------------------------------------- */
/* Without reordering, process i of the communicator is node i: the first
 * nodes-many ranks keep theirs, the others are left out (MPI 3.1, 7.5.8). */
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Cart_map";
    onic_mpi_comm_t *c;
    long long n;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (c->local != NULL)
        return topo_inter(c, call);
    if (newrank == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "newrank is NULL");
    if ((rc = cart_check(c, call, ndims, dims, periods, &n)) != MPI_SUCCESS)
        return rc;
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* The graph MPI_Graph_create and MPI_Graph_map take (MPI 3.1, 7.5.3):
 * index[i] the number of edges of nodes 0 to i, so never decreasing;
 * edges[] the nodes, each in 0 .. nnodes - 1. Self-edges and repeated
 * edges are allowed (since MPI 2.1). */
static int graph_check(onic_mpi_comm_t *c, const char *call, int nnodes, const int index[],
                       const int edges[])
{
    if (nnodes < 0 || nnodes > c->size)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "nnodes %d; a graph has 0 to %d nodes (the "
                            "processes of the communicator)", nnodes, c->size);
    if (nnodes > 0 && index == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "index is NULL with nnodes %d", nnodes);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i > 0 ? index[i - 1] : 0))
            return onic_mpi_err(c, MPI_ERR_ARG, call, "index[%d] = %d is less than %s %d; "
                                "index[i] counts the edges of nodes 0 to i, so it never "
                                "decreases", i, index[i], i > 0 ? "index[i-1] =" : "",
                                i > 0 ? index[i - 1] : 0);
    if (nnodes > 0 && index[nnodes - 1] > 0 && edges == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "edges is NULL with %d edges",
                            index[nnodes - 1]);
    for (int i = 0, k = 0; i < nnodes; i++)
        for (; k < index[i]; k++)
            if (edges[k] < 0 || edges[k] >= nnodes)
                return onic_mpi_err(c, MPI_ERR_ARG, call, "edges[%d] = %d (a neighbour of node "
                                    "%d) is not a node of the graph (0 to %d)", k, edges[k], i,
                                    nnodes - 1);
    return MPI_SUCCESS;
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Graph_map";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (c->local != NULL)
        return topo_inter(c, call);
    if (newrank == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "newrank is NULL");
    if ((rc = graph_check(c, call, nnodes, index, edges)) != MPI_SUCCESS)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* --- Graph communicators ---------------------------------------------------------------- */
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Graph_create";
    onic_mpi_comm_t *c;
    onic_mpi_topo_t *t;
    int rc, nedges;

    (void)reorder; /* ranks are kept: see the top of this file */
    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm_old, call, &rc)) == NULL)
        return rc;
    if (c->local != NULL)
        return topo_inter(c, call);
    if (comm_graph == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "comm_graph is NULL");
    if ((rc = graph_check(c, call, nnodes, index, edges)) != MPI_SUCCESS)
        return rc;
    /* nnodes 0 is allowed and gives every process MPI_COMM_NULL (MPI 3.1,
     * 7.5.3). */
    if ((rc = MPI_Comm_split(comm_old, c->rank < nnodes ? 0 : MPI_UNDEFINED, c->rank,
                             comm_graph)) != MPI_SUCCESS)
        return rc;
    nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    if ((t = topo_new_kind(MPI_GRAPH, nnodes, nedges)) != NULL) {
        if (nnodes > 0)
            memcpy(t->index, index, (size_t)nnodes * sizeof(int));
        if (nedges > 0)
            memcpy(t->edges, edges, (size_t)nedges * sizeof(int));
    }
    return topo_attach(comm_graph, t, c, call);
}

int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Graphdims_get";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm_kind(comm, MPI_GRAPH, call, &rc)) == NULL)
        return rc;
    if (nnodes == NULL || nedges == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL",
                            nnodes == NULL ? "nnodes" : "nedges");
    *nnodes = c->topo->nnodes;
    *nedges = c->topo->nedges;
    return MPI_SUCCESS;
}

/* One of a topology's lists out to the caller's array, which holds max
 * entries: its first min(max, have) entries of from, and as many weights
 * (wfrom to wto) where `weights` says the caller asked for them. */
typedef struct topo_list_out {
    const char *what, *max_what, *w_what; /* the arguments' names, for messages */
    int         max, have, weights;
    const int  *from, *wfrom;
    int        *to, *wto;
} topo_list_out_t;

/* The entries of list l to write. */
static int topo_list_n(const topo_list_out_t *l)
{
    return l->max < l->have ? l->max : l->have;
}

/* MPI_Graph_get and MPI_Dist_graph_neighbors: n lists out, each clipped to
 * what the caller says its array holds (as MPI_Cart_get does); a negative
 * size, or a NULL array where something is to be written, is refused
 * before anything is written. */
static int topo_lists_out(onic_mpi_comm_t *c, const char *call, const topo_list_out_t *l, int n)
{
    for (int i = 0; i < n; i++)
        if (l[i].max < 0)
            return onic_mpi_err(c, MPI_ERR_ARG, call, "%s %d is negative", l[i].max_what,
                                l[i].max);
    for (int i = 0; i < n; i++)
        if (topo_list_n(&l[i]) > 0 && (l[i].to == NULL || (l[i].weights && l[i].wto == NULL)))
            return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL",
                                l[i].to == NULL ? l[i].what : l[i].w_what);
    for (int i = 0; i < n; i++) {
        if (topo_list_n(&l[i]) <= 0)
            continue;
        memcpy(l[i].to, l[i].from, (size_t)topo_list_n(&l[i]) * sizeof(int));
        if (l[i].weights)
            memcpy(l[i].wto, l[i].wfrom, (size_t)topo_list_n(&l[i]) * sizeof(int));
    }
    return MPI_SUCCESS;
}

/* MPI_Graph_get and MPI_Graph_neighbors write at most as many entries as
 * the caller says its arrays hold (as MPI_Cart_get does). */
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Graph_get";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm_kind(comm, MPI_GRAPH, call, &rc)) == NULL)
        return rc;
    const topo_list_out_t l[2] = {
        {"index", "maxindex", NULL, maxindex, c->topo->nnodes, 0, c->topo->index, NULL, index,
         NULL},
        {"edges", "maxedges", NULL, maxedges, c->topo->nedges, 0, c->topo->edges, NULL, edges,
         NULL},
    };
    return topo_lists_out(c, call, l, 2);
}

/* A graph node's neighbours: edges[*first .. *first + *n - 1]. */
static void graph_node(const onic_mpi_topo_t *t, int rank, int *first, int *n)
{
    *first = rank > 0 ? t->index[rank - 1] : 0;
    *n = t->index[rank] - *first;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Graph_neighbors_count";
    onic_mpi_comm_t *c;
    int rc, first;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm_kind(comm, MPI_GRAPH, call, &rc)) == NULL)
        return rc;
    if (rank < 0 || rank >= c->topo->nnodes)
        return onic_mpi_err(c, MPI_ERR_RANK, call, "rank %d is not a node of the graph (0 to "
                            "%d)", rank, c->topo->nnodes - 1);
    if (nneighbors == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "nneighbors is NULL");
    graph_node(c->topo, rank, &first, nneighbors);
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Graph_neighbors";
    onic_mpi_comm_t *c;
    int rc, first, n;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm_kind(comm, MPI_GRAPH, call, &rc)) == NULL)
        return rc;
    if (rank < 0 || rank >= c->topo->nnodes)
        return onic_mpi_err(c, MPI_ERR_RANK, call, "rank %d is not a node of the graph (0 to "
                            "%d)", rank, c->topo->nnodes - 1);
    if (maxneighbors < 0)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "maxneighbors %d is negative", maxneighbors);
    graph_node(c->topo, rank, &first, &n);
    if (maxneighbors < n)
        n = maxneighbors;
    if (n > 0 && neighbors == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "neighbors is NULL");
    if (n > 0)
        memcpy(neighbors, c->topo->edges + first, (size_t)n * sizeof(int));
    return MPI_SUCCESS;
}

/* --- Distributed graphs ------------------------------------------------------------------- */
/* n ranks of c (what names them in messages: "sources", ...), each one of
 * c's, and their weights: MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY (n 0 only),
 * or n of them, none negative (MPI 3.1, 7.5.4). NULL stands for no list
 * where n is 0. */
static int dist_list(onic_mpi_comm_t *c, const char *call, const char *what, const char *wname,
                     int n, const int ranks[], const int weights[])
{
    if (n < 0)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "the number of %s, %d, is negative", what, n);
    if (n > 0 && ranks == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL with %d of them", what, n);
    if (n > 0 && weights == MPI_WEIGHTS_EMPTY)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is MPI_WEIGHTS_EMPTY with %d %s; it "
                            "stands for no weights where there is no edge", wname, n, what);
    if (n > 0 && weights == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL with %d %s; give MPI_UNWEIGHTED "
                            "for an unweighted graph", wname, n, what);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= c->size)
            return onic_mpi_err(c, MPI_ERR_RANK, call, "%s[%d] = %d is not a rank of the "
                                "communicator (0 to %d)", what, i, ranks[i], c->size - 1);
        if (weights != MPI_UNWEIGHTED && weights[i] < 0)
            return onic_mpi_err(c, MPI_ERR_ARG, call, "%s[%d] = %d is negative", wname, i,
                                weights[i]);
    }
    return MPI_SUCCESS;
}

/* The new communicator: every process of comm_old, in its order. */
static int dist_comm(MPI_Comm comm_old, onic_mpi_comm_t *c, MPI_Comm *newcomm)
{
    return MPI_Comm_split(comm_old, 0, c->rank, newcomm);
}

static void dist_fill(int *ranks, int *w, int n, const int from[], const int wfrom[])
{
    for (int i = 0; i < n; i++) {
        ranks[i] = from[i];
        w[i] = wfrom == MPI_UNWEIGHTED ? 1 : wfrom[i];
    }
}

static onic_mpi_comm_t *dist_comm_old(MPI_Comm comm_old, MPI_Comm *newcomm, const char *call,
                                      int *rc_p)
{
    onic_mpi_comm_t *c = onic_mpi_comm_get(comm_old, call, rc_p);

    if (c == NULL)
        return NULL;
    if (c->local != NULL) {
        *rc_p = topo_inter(c, call);
        return NULL;
    }
    if (newcomm == NULL) {
        *rc_p = onic_mpi_err(c, MPI_ERR_ARG, call, "comm_dist_graph is NULL");
        return NULL;
    }
    return c;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Dist_graph_create_adjacent";
    onic_mpi_comm_t *c;
    onic_mpi_topo_t *t;
    int rc;

    (void)reorder; /* ranks are kept: see the top of this file */
    ONIC_MPI_CHECK_INIT(call);
    if ((c = dist_comm_old(comm_old, comm_dist_graph, call, &rc)) == NULL)
        return rc;
    if ((rc = onic_mpi_info_check(c, info, 1, call)) != MPI_SUCCESS ||
        (rc = dist_list(c, call, "sources", "sourceweights", indegree, sources,
                        sourceweights)) != MPI_SUCCESS ||
        (rc = dist_list(c, call, "destinations", "destweights", outdegree, destinations,
                        destweights)) != MPI_SUCCESS)
        return rc;
    if ((sourceweights == MPI_UNWEIGHTED) != (destweights == MPI_UNWEIGHTED))
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is MPI_UNWEIGHTED and %s not; a graph "
                            "is weighted or not", sourceweights == MPI_UNWEIGHTED ?
                            "sourceweights" : "destweights", sourceweights == MPI_UNWEIGHTED ?
                            "destweights" : "sourceweights");
    if ((rc = dist_comm(comm_old, c, comm_dist_graph)) != MPI_SUCCESS)
        return rc;
    if ((t = topo_new_kind(MPI_DIST_GRAPH, indegree, outdegree)) != NULL) {
        t->weighted = sourceweights != MPI_UNWEIGHTED;
        dist_fill(t->sources, t->sweights, indegree, sources, sourceweights);
        dist_fill(t->dests, t->dweights, outdegree, destinations, destweights);
    }
    return topo_attach(comm_dist_graph, t, c, call);
}

/* MPI_Dist_graph_create: every process may name any edge, so each gets
 * every edge named (an allgather of (source, destination, weight)
 * triples) and keeps its own. The neighbours come in the order the
 * edges were named, by rank then position; MPI 3.1 leaves it open. */
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *comm_dist_graph)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Dist_graph_create";
    onic_mpi_comm_t *c, *nc;
    onic_mpi_topo_t *t = NULL;
    int rc, nedges = 0, *mine = NULL, *all = NULL, *counts = NULL, *displs = NULL, total = 0;
    int flags[2], in = 0, out = 0;

    (void)reorder; /* ranks are kept: see the top of this file */
    ONIC_MPI_CHECK_INIT(call);
    if ((c = dist_comm_old(comm_old, comm_dist_graph, call, &rc)) == NULL)
        return rc;
    if ((rc = onic_mpi_info_check(c, info, 1, call)) != MPI_SUCCESS)
        return rc;
    if (n < 0)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "n %d is negative", n);
    if (n > 0 && (sources == NULL || degrees == NULL))
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL with n %d",
                            sources == NULL ? "sources" : "degrees", n);
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= c->size)
            return onic_mpi_err(c, MPI_ERR_RANK, call, "sources[%d] = %d is not a rank of the "
                                "communicator (0 to %d)", i, sources[i], c->size - 1);
        if (degrees[i] < 0)
            return onic_mpi_err(c, MPI_ERR_ARG, call, "degrees[%d] = %d is negative", i,
                                degrees[i]);
        if (nedges > INT32_MAX / 3 - degrees[i])
            return onic_mpi_err(c, MPI_ERR_ARG, call, "more edges than an int counts");
        nedges += degrees[i];
    }
    if ((rc = dist_list(c, call, "destinations", "weights", nedges, destinations, weights)) !=
        MPI_SUCCESS)
        return rc;
    if ((rc = dist_comm(comm_old, c, comm_dist_graph)) != MPI_SUCCESS)
        return rc;
    nc = onic_mpi_comm_lookup(*comm_dist_graph);
    if ((mine = onic_malloc((3 * (size_t)nedges + 1) * sizeof(int))) == NULL ||
        (counts = onic_calloc(2 * (size_t)nc->size, sizeof(int))) == NULL)
        goto nomem;
    displs = counts + nc->size;
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            mine[3 * k] = sources[i];
            mine[3 * k + 1] = destinations[k];
            mine[3 * k + 2] = weights == MPI_UNWEIGHTED ? 1 : weights[k];
        }
    /* flags: [0] how many ints this process names, [1] 1 if it said
     * MPI_UNWEIGHTED (then the graph is unweighted: all say it or none). */
    flags[0] = 3 * nedges;
    flags[1] = weights == MPI_UNWEIGHTED;
    {
        int *fl = onic_malloc(2 * (size_t)nc->size * sizeof(int)), unweighted = 0;
        if (fl == NULL)
            goto nomem;
        if ((rc = MPI_Allgather(flags, 2, MPI_INT, fl, 2, MPI_INT, *comm_dist_graph)) !=
            MPI_SUCCESS) {
            onic_free(fl);
            goto fail;
        }
        for (int i = 0; i < nc->size; i++) {
            if (total > INT32_MAX - fl[2 * i]) {
                onic_free(fl);
                rc = onic_mpi_err(c, MPI_ERR_ARG, call, "the processes name more edges than "
                                  "an int counts");
                goto fail;
            }
            counts[i] = fl[2 * i];
            displs[i] = total;
            total += fl[2 * i];
            unweighted |= fl[2 * i + 1];
        }
        onic_free(fl);
        if ((all = onic_malloc(((size_t)total + 1) * sizeof(int))) == NULL)
            goto nomem;
        if ((rc = MPI_Allgatherv(mine, 3 * nedges, MPI_INT, all, counts, displs, MPI_INT,
                                 *comm_dist_graph)) != MPI_SUCCESS)
            goto fail;
        for (int k = 0; k < total; k += 3) {
            in += all[k + 1] == nc->rank;
            out += all[k] == nc->rank;
        }
        if ((t = topo_new_kind(MPI_DIST_GRAPH, in, out)) == NULL)
            goto nomem;
        t->weighted = !unweighted;
        in = out = 0;
        for (int k = 0; k < total; k += 3) {
            if (all[k + 1] == nc->rank) {
                t->sources[in] = all[k];
                t->sweights[in++] = all[k + 2];
            }
            if (all[k] == nc->rank) {
                t->dests[out] = all[k + 1];
                t->dweights[out++] = all[k + 2];
            }
        }
    }
    onic_free(mine);
    onic_free(all);
    onic_free(counts);
    return topo_attach(comm_dist_graph, t, c, call);
nomem:
    rc = onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for the graph's %d edges", nedges);
fail:
    onic_free(mine);
    onic_free(all);
    onic_free(counts);
    MPI_Comm_free(comm_dist_graph);
    return rc;
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Dist_graph_neighbors_count";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm_kind(comm, MPI_DIST_GRAPH, call, &rc)) == NULL)
        return rc;
    if (indegree == NULL || outdegree == NULL || weighted == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "%s is NULL", indegree == NULL ? "indegree" :
                            outdegree == NULL ? "outdegree" : "weighted");
    *indegree = c->topo->indegree;
    *outdegree = c->topo->outdegree;
    *weighted = c->topo->weighted;
    return MPI_SUCCESS;
}

/* At most maxindegree sources and maxoutdegree destinations; the weights
 * only where the graph is weighted and the caller asks for them (not
 * MPI_UNWEIGHTED). */
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[])
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Dist_graph_neighbors";
    onic_mpi_comm_t *c;
    const onic_mpi_topo_t *t;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = topo_comm_kind(comm, MPI_DIST_GRAPH, call, &rc)) == NULL)
        return rc;
    t = c->topo;
    const topo_list_out_t l[2] = {
        {"sources", "maxindegree", "sourceweights", maxindegree, t->indegree,
         t->weighted && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY,
         t->sources, t->sweights, sources, sourceweights},
        {"destinations", "maxoutdegree", "destweights", maxoutdegree, t->outdegree,
         t->weighted && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY,
         t->dests, t->dweights, destinations, destweights},
    };
    return topo_lists_out(c, call, l, 2);
}

/* --- The neighbourhoods of the neighbourhood collectives ----------------------------------- */
int onic_mpi_topo_neighbors(onic_mpi_comm_t *c, const char *call, int *nin, const int **in,
                            int *nout, const int **out, int **alloc_p)
{
    const onic_mpi_topo_t *t = c->topo;

    *alloc_p = NULL;
    if (t == NULL)
        return onic_mpi_err(c, MPI_ERR_TOPOLOGY, call, "communicator %#x has no topology; a "
                            "neighbourhood collective needs a Cartesian, graph or "
                            "distributed-graph one", (unsigned)c->handle);
    if (t->kind == MPI_CART) {
        /* For each dimension the -1 then the +1 neighbour (MPI 3.1, 7.6):
         * MPI_Cart_shift's source and destination of displacement 1. */
        int *nb = onic_malloc((2 * (size_t)t->ndims + 1) * sizeof(int)), rc;
        if (nb == NULL)
            return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for %d neighbours",
                                2 * t->ndims);
        for (int d = 0; d < t->ndims; d++)
            if ((rc = MPI_Cart_shift(c->handle, d, 1, &nb[2 * d], &nb[2 * d + 1])) !=
                MPI_SUCCESS) {
                onic_free(nb);
                return rc;
            }
        *nin = *nout = 2 * t->ndims;
        *in = *out = *alloc_p = nb;
    } else if (t->kind == MPI_GRAPH) {
        int first;
        graph_node(t, c->rank, &first, nin);
        *nout = *nin;
        *in = *out = t->edges + first;
    } else {
        *nin = t->indegree;
        *in = t->sources;
        *nout = t->outdegree;
        *out = t->dests;
    }
    return MPI_SUCCESS;
}
