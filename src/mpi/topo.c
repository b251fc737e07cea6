/* Cartesian process topologies (MPI 3.1, chapter 7).
 *
 * A Cartesian communicator is an ordinary one (made by MPI_Comm_split, so
 * it has its own context id) with a grid attached: the dims and periods
 * given to MPI_Cart_create. Ranks are in row-major order (the last
 * dimension varies fastest) and never reordered: on one node every order
 * is as good as another. MPI_Comm_dup keeps the grid (comm.c), freeing the
 * communicator frees it. Graph and distributed-graph topologies are not
 * built: MPI_Topo_test never returns them. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <string.h>

void onic_mpi_topo_free(onic_mpi_topo_t *t)
{
    if (t == NULL)
        return;
    onic_free(t->dims);
    onic_free(t);
}

static onic_mpi_topo_t *topo_new(int ndims)
{
    onic_mpi_topo_t *t = onic_calloc(1, sizeof(*t));

    if (t == NULL)
        return NULL;
    t->ndims = ndims;
    /* dims and periods in one allocation; one slot even for 0 dimensions. */
    if ((t->dims = onic_calloc(2 * (size_t)ndims + 1, sizeof(int))) == NULL) {
        onic_free(t);
        return NULL;
    }
    t->periods = t->dims + ndims;
    return t;
}

onic_mpi_topo_t *onic_mpi_topo_dup(const onic_mpi_topo_t *t)
{
    onic_mpi_topo_t *n = topo_new(t->ndims);

    if (n != NULL && t->ndims > 0)
        memcpy(n->dims, t->dims, 2 * (size_t)t->ndims * sizeof(int));
    return n;
}

/* --- MPI_Dims_create ------------------------------------------------------------ */
/* The most balanced split of n over the k free dimensions, as a
 * non-increasing list (MPI 3.1, 7.5.2): every factorization with factors
 * in non-increasing order is tried, largest leading factors first, and the
 * one with the smallest spread (largest factor minus smallest) kept; among
 * those, the one whose dimensions after the first have the smallest
 * spread, and so on (41 x 9 x 8 x 6, not 41 x 12 x 6 x 6, as MPICH's
 * topo/dims5 expects). */
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
        /* On a tie, the smaller spread of the dimensions after the first,
         * then after the second, ...: cur[j] is each one's largest, n the
         * smallest of all. */
        for (int j = 1; s->best_spread == spread && j < s->k - 1 && !better; j++) {
            if (s->cur[j] - n > s->best[j] - s->best[s->k - 1])
                break;
            better = s->cur[j] - n < s->best[j] - s->best[s->k - 1];
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
static onic_mpi_comm_t *topo_comm(MPI_Comm comm, const char *call, int *rc_p)
{
    onic_mpi_comm_t *c = onic_mpi_comm_get(comm, call, rc_p);

    if (c != NULL && c->topo == NULL) {
        *rc_p = onic_mpi_err(c, MPI_ERR_TOPOLOGY, call, "communicator %#x has no Cartesian "
                             "topology; make one with MPI_Cart_create", (unsigned)comm);
        return NULL;
    }
    return c;
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

/* Attach a grid to a new communicator; on failure the communicator goes. */
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
        return onic_mpi_err(parent, MPI_ERR_NO_MEM, call, "no memory for a grid");
    }
    n->topo = t;
    return MPI_SUCCESS;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    const char *call = "MPI_Cart_create";
    onic_mpi_comm_t *c;
    onic_mpi_topo_t *t;
    long long n = 1;
    int rc;

    (void)reorder; /* ranks are kept: see the top of this file */
    ONIC_MPI_CHECK_INIT(call);
    if ((c = onic_mpi_comm_get(comm_old, call, &rc)) == NULL)
        return rc;
    if (comm_cart == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "comm_cart is NULL");
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
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Topo_test");
    if ((c = onic_mpi_comm_get(comm, "MPI_Topo_test", &rc)) == NULL)
        return rc;
    if (status == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, "MPI_Topo_test", "status is NULL");
    *status = c->topo != NULL ? MPI_CART : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
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
