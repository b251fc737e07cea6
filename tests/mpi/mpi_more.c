/* onic's MPI beyond point-to-point, tested through onicrun: `mpi_more
 * NAME...` runs the named tests (or `all`) on every rank: Cartesian, graph
 * and distributed-graph topologies, the neighbourhood collectives, derived
 * datatypes and packing, the v-collectives, scans and user operations, and
 * the smaller calls real programs use. Each rank
 * counts its failed checks and the job fails if any rank's count is not
 * zero. Every expectation is computed from the ranks and sizes, never read
 * from a table. Runs at any number of processes, 1 included. */
#include <mpi.h>

#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_check.h"

/* --- Cartesian topologies ------------------------------------------------------------ */
/* The smallest spread (largest minus smallest factor) of n over two
 * dimensions, by trying every divisor. */
static int topo_best_spread2(int n)
{
    int best = n - 1;
    for (int a = 1; a <= n; a++)
        if (n % a == 0 && a >= n / a && a - n / a < best)
            best = a - n / a;
    return best;
}

static void test_topo_dims(void)
{
    int d[4];

    /* Known splits, worked by hand from the standard's rule. */
    memset(d, 0, sizeof(d));
    CHECK_EQ(MPI_Dims_create(6, 2, d), MPI_SUCCESS);
    CHECK(d[0] == 3 && d[1] == 2);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(7, 2, d);
    CHECK(d[0] == 7 && d[1] == 1);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(12, 3, d);
    CHECK(d[0] == 3 && d[1] == 2 && d[2] == 2);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(16, 4, d);
    CHECK(d[0] == 2 && d[1] == 2 && d[2] == 2 && d[3] == 2);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(24, 2, d);
    CHECK(d[0] == 6 && d[1] == 4);
    d[0] = 0; d[1] = 3; d[2] = 0;
    MPI_Dims_create(12, 3, d);
    CHECK(d[0] == 2 && d[1] == 3 && d[2] == 2);
    d[0] = 2; d[1] = 3;
    CHECK_EQ(MPI_Dims_create(6, 2, d), MPI_SUCCESS); /* all given, product right */
    CHECK(d[0] == 2 && d[1] == 3);
    /* Ties of spread go to the larger smallest dimension, then the larger
     * next smallest (MPICH's choices: its topo/dims5). */
    memset(d, 0, sizeof(d));
    MPI_Dims_create(590520, 4, d);
    CHECK(d[0] == 38 && d[1] == 37 && d[2] == 21 && d[3] == 20);
    memset(d, 0, sizeof(d));
    MPI_Dims_create(41 * 9 * 8 * 6, 4, d);
    CHECK(d[0] == 41 && d[1] == 9 && d[2] == 8 && d[3] == 6);
    {
        int d5[5] = {0, 0, 0, 0, 0};
        MPI_Dims_create(98784, 5, d5);
        CHECK(d5[0] == 14 && d5[1] == 14 && d5[2] == 9 && d5[3] == 8 && d5[4] == 7);
    }
    /* Every count to 200 in two dimensions: product, order, best balance. */
    for (int n = 1; n <= 200; n++) {
        d[0] = d[1] = 0;
        MPI_Dims_create(n, 2, d);
        CHECK_EQ(d[0] * d[1], n);
        CHECK(d[0] >= d[1]);
        CHECK_EQ(d[0] - d[1], topo_best_spread2(n));
    }
    /* And to 100 in three and four: product and order. */
    for (int k = 3; k <= 4; k++)
        for (int n = 1; n <= 100; n++) {
            long long p = 1;
            memset(d, 0, sizeof(d));
            MPI_Dims_create(n, k, d);
            for (int i = 0; i < k; i++) {
                p *= d[i];
                if (i > 0)
                    CHECK(d[i - 1] >= d[i]);
            }
            CHECK_EQ(p, n);
        }
}

/* Arguments at their edges: MPI_Dims_create's dims NULL with dimensions
 * to fill, MPI_Cart_coords' coords NULL (MPI_ERR_ARG, nothing written);
 * a grid of no dimensions has no coordinates to give, so MPI_Cart_rank
 * takes coords NULL there and answers rank 0 (MPI 3.1, 7.5.1: a
 * zero-dimensional grid is one process). */
static void test_topo_args(void)
{
    int d[1] = {size}, p[1] = {0}, r = -1;
    MPI_Comm line, none;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Dims_create(size, 2, NULL), MPI_ERR_ARG);
    MPI_Cart_create(MPI_COMM_WORLD, 1, d, p, 0, &line);
    MPI_Comm_set_errhandler(line, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Cart_coords(line, 0, 1, NULL), MPI_ERR_ARG);
    MPI_Comm_free(&line);
    MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &none);
    if (none != MPI_COMM_NULL) {
        CHECK_EQ(MPI_Cart_rank(none, NULL, &r), MPI_SUCCESS);
        CHECK_EQ(r, 0);
        MPI_Comm_free(&none);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_topo(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], r, src, dst, nd, st;
    MPI_Comm cart, sub, dup;

    test_topo_dims();
    test_topo_args();
    /* A 2-D grid over every process, periodic in dimension 0 only. */
    MPI_Dims_create(size, 2, dims);
    CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart), MPI_SUCCESS);
    CHECK(cart != MPI_COMM_NULL);
    MPI_Topo_test(cart, &st);
    CHECK_EQ(st, MPI_CART);
    MPI_Topo_test(MPI_COMM_WORLD, &st);
    CHECK_EQ(st, MPI_UNDEFINED);
    MPI_Cartdim_get(cart, &nd);
    CHECK_EQ(nd, 2);
    MPI_Comm_rank(cart, &r);
    CHECK_EQ(r, rank); /* no reordering */
    {
        int gd[2], gp[2], gc[2];
        MPI_Cart_get(cart, 2, gd, gp, gc);
        CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0);
        CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1]);
    }
    for (int q = 0; q < size; q++) {
        int back;
        MPI_Cart_coords(cart, q, 2, coords);
        CHECK(coords[0] == q / dims[1] && coords[1] == q % dims[1]);
        MPI_Cart_rank(cart, coords, &back);
        CHECK_EQ(back, q);
    }
    /* Periodic dimension 0 wraps coordinates given to MPI_Cart_rank. */
    coords[0] = -1;
    coords[1] = 0;
    MPI_Cart_rank(cart, coords, &r);
    CHECK_EQ(r, (dims[0] - 1) * dims[1]);
    {
        int x = rank / dims[1], y = rank % dims[1];
        MPI_Cart_shift(cart, 0, 1, &src, &dst);
        CHECK_EQ(src, ((x - 1 + dims[0]) % dims[0]) * dims[1] + y);
        CHECK_EQ(dst, ((x + 1) % dims[0]) * dims[1] + y);
        MPI_Cart_shift(cart, 1, 1, &src, &dst);
        CHECK_EQ(src, y == 0 ? MPI_PROC_NULL : rank - 1);
        CHECK_EQ(dst, y == dims[1] - 1 ? MPI_PROC_NULL : rank + 1);
        MPI_Cart_shift(cart, 1, -2, &src, &dst);
        CHECK_EQ(src, y + 2 >= dims[1] ? MPI_PROC_NULL : rank + 2);
        CHECK_EQ(dst, y - 2 < 0 ? MPI_PROC_NULL : rank - 2);
        /* A halo exchange along each dimension: each side gets its
         * neighbour's rank, or keeps -5 at an open edge. */
        for (int dir = 0; dir < 2; dir++) {
            int got[2] = {-5, -5};
            MPI_Cart_shift(cart, dir, 1, &src, &dst);
            MPI_Sendrecv(&rank, 1, MPI_INT, dst, 7, &got[0], 1, MPI_INT, src, 7, cart,
                         MPI_STATUS_IGNORE);
            MPI_Sendrecv(&rank, 1, MPI_INT, src, 8, &got[1], 1, MPI_INT, dst, 8, cart,
                         MPI_STATUS_IGNORE);
            CHECK_EQ(got[0], src == MPI_PROC_NULL ? -5 : src);
            CHECK_EQ(got[1], dst == MPI_PROC_NULL ? -5 : dst);
        }
        /* Rows: keep dimension 1. */
        int remain[2] = {0, 1}, sr, ss, sd[1], sp[1], sc[1];
        CHECK_EQ(MPI_Cart_sub(cart, remain, &sub), MPI_SUCCESS);
        MPI_Comm_rank(sub, &sr);
        MPI_Comm_size(sub, &ss);
        CHECK_EQ(ss, dims[1]);
        CHECK_EQ(sr, y);
        MPI_Cartdim_get(sub, &nd);
        CHECK_EQ(nd, 1);
        MPI_Cart_get(sub, 1, sd, sp, sc);
        CHECK(sd[0] == dims[1] && sp[0] == 0 && sc[0] == y);
        /* The row's sum of world ranks: x*dims1*dims1 + dims1*(dims1-1)/2. */
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub);
        CHECK_EQ(sum, x * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2);
        MPI_Comm_free(&sub);
        /* Nothing kept: a grid of one process with no dimensions, as
         * MPI_Cart_create with ndims 0 makes it: rank 0's; the others
         * get MPI_COMM_NULL. */
        remain[1] = 0;
        CHECK_EQ(MPI_Cart_sub(cart, remain, &sub), MPI_SUCCESS);
        if (rank == 0) {
            int cmp = -1;
            MPI_Comm_size(sub, &ss);
            CHECK_EQ(ss, 1);
            MPI_Cartdim_get(sub, &nd);
            CHECK_EQ(nd, 0);
            MPI_Comm_compare(sub, MPI_COMM_SELF, &cmp);
            CHECK_EQ(cmp, MPI_CONGRUENT);
            MPI_Comm_free(&sub);
        } else {
            CHECK(sub == MPI_COMM_NULL);
        }
    }
    /* A duplicate keeps the grid. */
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &st);
    CHECK_EQ(st, MPI_CART);
    MPI_Cart_shift(dup, 0, 1, &src, &dst);
    CHECK_EQ(dst, ((rank / dims[1] + 1) % dims[0]) * dims[1] + rank % dims[1]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);

    /* A 3-D periodic grid: a shift by the whole size comes back home. */
    {
        int d3[3] = {0, 0, 0}, p3[3] = {1, 1, 1}, c3[3];
        MPI_Dims_create(size, 3, d3);
        MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &cart);
        MPI_Cart_shift(cart, 2, d3[2], &src, &dst);
        CHECK_EQ(src, rank);
        CHECK_EQ(dst, rank);
        MPI_Cart_coords(cart, rank, 3, c3);
        CHECK_EQ((c3[0] * d3[1] + c3[1]) * d3[2] + c3[2], rank);
        MPI_Comm_free(&cart);
    }
    /* A grid smaller than the communicator: the last process is left out. */
    if (size > 1) {
        int d1[1] = {size - 1}, p1[1] = {0}, s1;
        MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cart);
        if (rank == size - 1) {
            CHECK(cart == MPI_COMM_NULL);
        } else {
            MPI_Comm_size(cart, &s1);
            CHECK_EQ(s1, size - 1);
            MPI_Comm_free(&cart);
        }
    }

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int big[2] = {size + 1, 1}, zero[2] = {0, 1}, neg[2] = {-1, 0}, p[2] = {0, 0};
        CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, big, p, 0, &cart), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, p, 0, &cart), MPI_ERR_DIMS);
        CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, -1, zero, p, 0, &cart), MPI_ERR_DIMS);
        CHECK_EQ(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Cart_coords(MPI_COMM_NULL, 0, 1, coords), MPI_ERR_COMM);
        CHECK_EQ(MPI_Dims_create(6, 2, neg), MPI_ERR_DIMS);
        int five[2] = {5, 0};
        CHECK_EQ(MPI_Dims_create(12, 2, five), MPI_ERR_DIMS);
        CHECK_EQ(MPI_Dims_create(0, 2, zero), MPI_ERR_ARG);
        int d1[1] = {size}, p1[1] = {0}, bad[1] = {size};
        MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cart);
        CHECK_EQ(MPI_Cart_rank(cart, bad, &r), MPI_ERR_RANK);
        CHECK_EQ(MPI_Cart_coords(cart, size, 1, coords), MPI_ERR_RANK);
        CHECK_EQ(MPI_Cart_coords(cart, 0, 0, coords), MPI_ERR_ARG);
        CHECK_EQ(MPI_Cart_shift(cart, 1, 1, &src, &dst), MPI_ERR_DIMS);
        MPI_Comm_free(&cart);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* --- Graph and distributed-graph topologies ------------------------------------------ */
/* A ring: node i's neighbours are i-1 and i+1 (mod n), in that order. */
static void graph_ring(int n, int *index, int *edges)
{
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + n) % n;
        edges[2 * i + 1] = (i + 1) % n;
    }
}

/* A star: node 0 is every other node's neighbour, and they are its. */
static void graph_star(int n, int *index, int *edges)
{
    int k = 0;
    for (int j = 1; j < n; j++)
        edges[k++] = j;
    index[0] = k;
    for (int i = 1; i < n; i++) {
        edges[k++] = 0;
        index[i] = k;
    }
}

/* The distributed graph of the tests: r -> r+1 (weight 10r+1) and
 * r -> r+2 (weight 10r+2), mod size. */
static int dg_dest(int r, int i)
{
    return (r + 1 + i) % size;
}

static int dg_weight(int r, int i)
{
    return 10 * r + 1 + i;
}

/* A sorted copy of n (rank, weight) pairs as rank * 1000 + weight. */
static void dg_keys(int n, const int *ranks, const int *w, long *out)
{
    for (int i = 0; i < n; i++) {
        long k = (long)ranks[i] * 1000 + w[i];
        int j = i;
        for (; j > 0 && out[j - 1] > k; j--)
            out[j] = out[j - 1];
        out[j] = k;
    }
}

/* The distributed graph's edges at this rank, as sorted keys. */
static void dg_expect(long *in, long *out)
{
    int src[2], sw[2], dst[2], dw[2];
    for (int i = 0; i < 2; i++) {
        src[i] = ((rank - 1 - i) % size + size) % size;
        sw[i] = dg_weight(src[i], i);
        dst[i] = dg_dest(rank, i);
        dw[i] = dg_weight(rank, i);
    }
    dg_keys(2, src, sw, in);
    dg_keys(2, dst, dw, out);
}

static void dg_check(MPI_Comm dg, int weighted)
{
    int indeg = -1, outdeg = -1, w = -1, st, src[2], sw[2], dst[2], dw[2];
    long ein[2], eout[2], gin[2], gout[2];

    MPI_Topo_test(dg, &st);
    CHECK_EQ(st, MPI_DIST_GRAPH);
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &w);
    CHECK(indeg == 2 && outdeg == 2 && w == weighted);
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, 2, src, sw, 2, dst, dw), MPI_SUCCESS);
    if (weighted) {
        dg_expect(ein, eout);
        dg_keys(2, src, sw, gin);
        dg_keys(2, dst, dw, gout);
        for (int i = 0; i < 2; i++) {
            CHECK_EQ(gin[i], ein[i]);
            CHECK_EQ(gout[i], eout[i]);
        }
    }
}

/* MPI_Graph_get and MPI_Dist_graph_neighbors write no more than the
 * caller's arrays hold (MPI 3.1, 7.5.5: maxindex, maxedges, maxindegree,
 * maxoutdegree), weights only where asked for, and refuse a negative size
 * or a NULL array that something would be written to, writing nothing. */
static void test_graph_lists(void)
{
    int *index = malloc(sizeof(int) * (size_t)size),
        *edges = malloc(sizeof(int) * 2 * (size_t)size);
    int gi[2] = {-7, -7}, ge[2] = {-7, -7}, src[2], sw[2], dst[2], dw[2], s2[2], w2[2], d2[2],
        x2[2];
    MPI_Comm g, dg;

    graph_ring(size, index, edges);
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Graph_get(g, 1, 1, gi, ge), MPI_SUCCESS);
    CHECK(gi[0] == 2 && gi[1] == -7 && ge[0] == size - 1 && ge[1] == -7);
    CHECK_EQ(MPI_Graph_get(g, 0, 0, NULL, NULL), MPI_SUCCESS);
    CHECK_EQ(MPI_Graph_get(g, 0, -1, gi, ge), MPI_ERR_ARG);
    gi[0] = -7;
    CHECK_EQ(MPI_Graph_get(g, 1, 1, gi, NULL), MPI_ERR_ARG);
    CHECK_EQ(gi[0], -7);
    MPI_Comm_free(&g);

    for (int i = 0; i < 2; i++) {
        src[i] = ((rank - 1 - i) % size + size) % size;
        sw[i] = 10 + i;
        dst[i] = (rank + 1 + i) % size;
        dw[i] = 20 + i;
        s2[i] = w2[i] = d2[i] = x2[i] = -7;
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0,
                                   &dg);
    MPI_Comm_set_errhandler(dg, MPI_ERRORS_RETURN);
    /* One of each; no destination weights asked for. */
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, 1, s2, w2, 1, d2, MPI_UNWEIGHTED), MPI_SUCCESS);
    CHECK(s2[0] == src[0] && w2[0] == 10 && s2[1] == -7 && w2[1] == -7);
    CHECK(d2[0] == dst[0] && d2[1] == -7);
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, 0, NULL, NULL, 0, NULL, NULL), MPI_SUCCESS);
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, -1, s2, w2, 2, d2, x2), MPI_ERR_ARG);
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, 2, s2, w2, -1, d2, x2), MPI_ERR_ARG);
    /* Weighted: a NULL weights array is refused before anything is written. */
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, 2, s2, NULL, 2, d2, x2), MPI_ERR_ARG);
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, 2, s2, w2, 2, d2, NULL), MPI_ERR_ARG);
    CHECK(s2[1] == -7 && x2[0] == -7);
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, 2, s2, w2, 2, d2, x2), MPI_SUCCESS);
    CHECK(s2[1] == src[1] && w2[1] == 11 && d2[1] == dst[1] && x2[0] == 20 && x2[1] == 21);
    MPI_Comm_free(&dg);
    free(index);
    free(edges);
}

static void test_graph(void)
{
    int n2 = 2 * size, *index = malloc(sizeof(int) * (size_t)size),
        *edges = malloc(sizeof(int) * (size_t)n2), *gi = malloc(sizeof(int) * (size_t)size),
        *ge = malloc(sizeof(int) * (size_t)n2), st, nn, ne, nb[2], cnt, r;
    MPI_Comm g, dup, dg;

    test_graph_lists();
    /* A ring over every process. */
    graph_ring(size, index, edges);
    CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g), MPI_SUCCESS);
    MPI_Topo_test(g, &st);
    CHECK_EQ(st, MPI_GRAPH);
    MPI_Comm_rank(g, &r);
    CHECK_EQ(r, rank);
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK(nn == size && ne == n2);
    MPI_Graph_get(g, size, n2, gi, ge);
    for (int i = 0; i < size; i++)
        CHECK_EQ(gi[i], 2 * (i + 1));
    for (int q = 0; q < size; q++) {
        MPI_Graph_neighbors_count(g, q, &cnt);
        CHECK_EQ(cnt, 2);
        MPI_Graph_neighbors(g, q, 2, nb);
        CHECK(nb[0] == (q - 1 + size) % size && nb[1] == (q + 1) % size);
        CHECK(ge[2 * q] == nb[0] && ge[2 * q + 1] == nb[1]);
    }
    /* A duplicate keeps the graph; freeing either leaves the other whole. */
    MPI_Comm_dup(g, &dup);
    MPI_Comm_free(&g);
    MPI_Topo_test(dup, &st);
    CHECK_EQ(st, MPI_GRAPH);
    MPI_Graph_neighbors(dup, rank, 2, nb);
    CHECK_EQ(nb[1], (rank + 1) % size);
    MPI_Comm_free(&dup);

    /* A star: node 0 has size - 1 neighbours, the others 1. */
    graph_star(size, index, edges);
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK(nn == size && ne == 2 * (size - 1));
    for (int q = 0; q < size; q++) {
        MPI_Graph_neighbors_count(g, q, &cnt);
        CHECK_EQ(cnt, q == 0 ? size - 1 : 1);
    }
    if (size > 1) {
        MPI_Graph_neighbors(g, size - 1, 2, nb);
        CHECK_EQ(nb[0], 0);
        MPI_Graph_neighbors(g, 0, 1, nb); /* only as many as asked */
        CHECK_EQ(nb[0], 1);
    }
    MPI_Comm_free(&g);
    /* A graph of fewer nodes leaves the last processes out; none, all. */
    graph_star(size - 1, index, edges);
    MPI_Graph_create(MPI_COMM_WORLD, size - 1, index, edges, 0, &g);
    if (rank == size - 1) {
        CHECK(g == MPI_COMM_NULL);
    } else {
        MPI_Comm_size(g, &cnt);
        CHECK_EQ(cnt, size - 1);
        MPI_Comm_free(&g);
    }
    CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &g), MPI_SUCCESS);
    CHECK(g == MPI_COMM_NULL);
    /* Without reordering, map keeps the ranks that are nodes. */
    {
        int i0[1] = {0}, e0[1] = {0}; /* one node, no edge */
        MPI_Graph_map(MPI_COMM_WORLD, 1, i0, e0, &r);
    }
    CHECK_EQ(r, rank == 0 ? 0 : MPI_UNDEFINED);
    {
        int d[2] = {1, size}, p[2] = {0, 1};
        MPI_Cart_map(MPI_COMM_WORLD, 2, d, p, &r);
        CHECK_EQ(r, rank);
        MPI_Cart_map(MPI_COMM_WORLD, 0, d, p, &r);
        CHECK_EQ(r, rank == 0 ? 0 : MPI_UNDEFINED);
    }

    /* A distributed graph with weights, given adjacent, then by each
     * process's out-edges, then all of it by rank 0; and unweighted. */
    {
        int src[2], sw[2], dst[2], dw[2], one = 1, two = 2, *all_s, *all_d, *all_w, *deg;
        for (int i = 0; i < 2; i++) {
            src[i] = ((rank - 1 - i) % size + size) % size;
            sw[i] = dg_weight(src[i], i);
            dst[i] = dg_dest(rank, i);
            dw[i] = dg_weight(rank, i);
        }
        CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw,
                                                MPI_INFO_NULL, 0, &dg), MPI_SUCCESS);
        dg_check(dg, 1);
        /* The adjacent form keeps the order given. */
        {
            int s2[2], w2[2], d2[2], x2[2];
            MPI_Dist_graph_neighbors(dg, 2, s2, w2, 2, d2, x2);
            CHECK(s2[0] == src[0] && s2[1] == src[1] && w2[0] == sw[0] && w2[1] == sw[1]);
            CHECK(d2[0] == dst[0] && d2[1] == dst[1] && x2[0] == dw[0] && x2[1] == dw[1]);
        }
        MPI_Comm_dup(dg, &dup);
        MPI_Comm_free(&dg);
        dg_check(dup, 1);
        MPI_Comm_free(&dup);
        CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &two, dst, dw, MPI_INFO_NULL,
                                       0, &dg), MPI_SUCCESS);
        dg_check(dg, 1);
        MPI_Comm_free(&dg);
        all_s = malloc(sizeof(int) * (size_t)n2);
        all_d = malloc(sizeof(int) * (size_t)n2);
        all_w = malloc(sizeof(int) * (size_t)n2);
        deg = malloc(sizeof(int) * (size_t)n2);
        for (int q = 0, k = 0; q < size; q++)
            for (int i = 0; i < 2; i++, k++) {
                all_s[k] = q;
                deg[k] = 1;
                all_d[k] = dg_dest(q, i);
                all_w[k] = dg_weight(q, i);
            }
        CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? n2 : 0, all_s, deg, all_d,
                                       rank == 0 ? all_w : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL,
                                       0, &dg), MPI_SUCCESS);
        dg_check(dg, 1);
        MPI_Comm_free(&dg);
        free(all_s);
        free(all_d);
        free(all_w);
        free(deg);
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
        dg_check(dg, 0);
        MPI_Comm_free(&dg);
        (void)one;
    }

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int dec[2] = {2, 1}, e2[2] = {0, 0}, out[2] = {0, size}, i1[1] = {1}, p[1] = {0},
            d[1] = {size + 1}, x = 0, neg[2] = {-1, 1};
        MPI_Comm cart;
        CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 2 > size ? 1 : 2, dec, e2, 0, &g),
                 size >= 2 ? MPI_ERR_ARG : MPI_SUCCESS); /* index decreasing */
        if (size < 2 && g != MPI_COMM_NULL)
            MPI_Comm_free(&g);
        CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 1, i1, out + 1, 0, &g), MPI_ERR_ARG);
        CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g), MPI_ERR_ARG);
        CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g), MPI_ERR_ARG);
        CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 1, neg, e2, 0, &g), MPI_ERR_ARG);
        CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 1, i1, NULL, 0, &g), MPI_ERR_ARG);
        CHECK_EQ(MPI_Graph_map(MPI_COMM_WORLD, 1, i1, out + 1, &x), MPI_ERR_ARG);
        CHECK_EQ(MPI_Cart_map(MPI_COMM_WORLD, 1, d, p, &x), MPI_ERR_TOPOLOGY);
        /* Graph calls on a communicator without a graph. */
        CHECK_EQ(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), MPI_ERR_TOPOLOGY);
        d[0] = size;
        MPI_Cart_create(MPI_COMM_WORLD, 1, d, p, 0, &cart);
        MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Graph_neighbors_count(cart, 0, &cnt), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Graph_neighbors(cart, 0, 2, nb), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Graph_get(cart, 1, 1, gi, ge), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Dist_graph_neighbors_count(cart, &nn, &ne, &x), MPI_ERR_TOPOLOGY);
        MPI_Comm_free(&cart);
        graph_ring(size, index, edges);
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Graph_neighbors_count(g, size, &cnt), MPI_ERR_RANK);
        CHECK_EQ(MPI_Graph_neighbors(g, -1, 2, nb), MPI_ERR_RANK);
        CHECK_EQ(MPI_Graph_neighbors(g, size, 2, nb), MPI_ERR_RANK);
        CHECK_EQ(MPI_Cartdim_get(g, &x), MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Dist_graph_neighbors(g, 0, NULL, NULL, 0, NULL, NULL), MPI_ERR_TOPOLOGY);
        MPI_Comm_free(&g);
        /* Distributed graphs: a neighbour out of range, a negative weight,
         * weights for one side only. */
        CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &size, e2, 0, NULL,
                                                MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg),
                 MPI_ERR_RANK);
        CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, e2, neg, 0, NULL,
                                                MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg),
                 MPI_ERR_ARG);
        CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, e2, MPI_UNWEIGHTED, 1, e2,
                                                e2, MPI_INFO_NULL, 0, &dg), MPI_ERR_ARG);
        CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, e2, e2, 0, e2, e2,
                                                MPI_INFO_NULL, 0, &dg), MPI_ERR_ARG);
        CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, out + 1, i1, e2, e2, MPI_INFO_NULL,
                                       0, &dg), MPI_ERR_RANK);
        CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, e2, i1, out + 1, e2, MPI_INFO_NULL,
                                       0, &dg), MPI_ERR_RANK);
        CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, e2, neg, e2, e2, MPI_INFO_NULL,
                                       0, &dg), MPI_ERR_ARG);
        /* A negative degree that the next one makes up for (edges 0 in all). */
        CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 2, e2, neg, e2, e2, MPI_INFO_NULL,
                                       0, &dg), MPI_ERR_ARG);
        CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_NULL, 1, e2, i1, e2, e2, MPI_INFO_NULL, 0, &dg),
                 MPI_ERR_COMM);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(index);
    free(edges);
    free(gi);
    free(ge);
}

/* --- Neighbourhood collectives ------------------------------------------------------------ */
/* What a process sends to its i-th out-neighbour in the tests below:
 * element e of block i of process r. */
static int nbr_val(int r, int i, int e)
{
    return r * 1000 + i * 10 + e;
}

/* A neighbourhood as the standard defines it (MPI 3.1, 7.6), worked out
 * here from the topology's definition: in[j] the j-th in-neighbour of this
 * rank and from[j] which block of that neighbour's lands in slot j (-1:
 * none, MPI_PROC_NULL). */
typedef struct nbr_expect {
    int nin, nout, in[8], out[8], from[8];
} nbr_expect_t;

/* A 2-D grid (dims d, periods p): for each dimension the -1 then the +1
 * neighbour; what comes from the -1 one is what it sent to its +1 (block
 * 2k+1), and the other way round. */
static void nbr_cart_expect(const int d[2], const int p[2], nbr_expect_t *x)
{
    int c[2] = {rank / d[1], rank % d[1]};
    x->nin = x->nout = 4;
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < 2; s++) {
            int cc[2] = {c[0], c[1]}, j = 2 * k + s, ok = 1;
            cc[k] += s == 0 ? -1 : 1;
            if (cc[k] < 0 || cc[k] >= d[k]) {
                if (p[k])
                    cc[k] = (cc[k] + d[k]) % d[k];
                else
                    ok = 0;
            }
            x->in[j] = x->out[j] = ok ? cc[0] * d[1] + cc[1] : MPI_PROC_NULL;
            x->from[j] = ok ? 2 * k + (1 - s) : -1;
        }
}

/* A graph given as each node's neighbour lists (out-lists; in-lists the
 * same for a graph): the k-th time q appears among my in-neighbours, my
 * slot gets the block q sends at the k-th time I appear in its out-list
 * (messages between two processes match in order). */
static void nbr_graph_expect(int nin, const int *in, void (*outs)(int q, int *n, int *o),
                             nbr_expect_t *x)
{
    x->nin = nin;
    for (int j = 0; j < nin; j++) {
        int q = in[j], k = 0, no, o[8], seen = 0;
        x->in[j] = q;
        for (int i = 0; i < j; i++)
            k += in[i] == q;
        outs(q, &no, o);
        x->from[j] = -1;
        for (int i = 0; i < no; i++)
            if (o[i] == rank && seen++ == k)
                x->from[j] = i;
    }
    outs(rank, &x->nout, x->out);
}

static void nbr_ring_outs(int q, int *n, int *o)
{
    *n = 2;
    o[0] = (q - 1 + size) % size;
    o[1] = (q + 1) % size;
}

static void nbr_dg_outs(int q, int *n, int *o)
{
    *n = 2;
    o[0] = dg_dest(q, 0);
    o[1] = dg_dest(q, 1);
}

/* Every neighbourhood collective on comm, whose neighbourhood is x. */
static void nbr_run(MPI_Comm comm, const nbr_expect_t *x)
{
    enum { B = 3, GAP = 5 }; /* elements of a block; room per slot in the v-forms */
    int sb[8 * GAP], rb[8 * GAP], sc[8], rc[8], sd[8], rd[8];
    MPI_Aint sw[8], rw[8];
    MPI_Datatype st[8], rt[8], pair;
    MPI_Request req;

    /* allgather: my rank's block 0 to everyone; slot j = in[j]'s. */
    for (int nb = 0; nb < 2; nb++) {
        for (int e = 0; e < B; e++)
            sb[e] = nbr_val(rank, 0, e);
        for (int i = 0; i < 8 * B; i++)
            rb[i] = -7;
        if (nb) {
            MPI_Ineighbor_allgather(sb, B, MPI_INT, rb, B, MPI_INT, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            CHECK_EQ(MPI_Neighbor_allgather(sb, B, MPI_INT, rb, B, MPI_INT, comm), MPI_SUCCESS);
        }
        for (int j = 0; j < x->nin; j++)
            for (int e = 0; e < B; e++)
                CHECK_EQ(rb[j * B + e], x->in[j] == MPI_PROC_NULL ? -7 : nbr_val(x->in[j], 0, e));
    }
    /* allgatherv: process r sends r % 2 + 1 elements; slot j at j * GAP. */
    for (int nb = 0; nb < 2; nb++) {
        int mine = rank % 2 + 1;
        for (int e = 0; e < mine; e++)
            sb[e] = nbr_val(rank, 0, e);
        for (int j = 0; j < x->nin; j++) {
            rc[j] = x->in[j] == MPI_PROC_NULL ? 4 : x->in[j] % 2 + 1;
            rd[j] = (x->nin - 1 - j) * GAP; /* backwards: displacements matter */
        }
        for (int i = 0; i < 8 * GAP; i++)
            rb[i] = -7;
        if (nb) {
            MPI_Ineighbor_allgatherv(sb, mine, MPI_INT, rb, rc, rd, MPI_INT, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_allgatherv(sb, mine, MPI_INT, rb, rc, rd, MPI_INT, comm);
        }
        for (int j = 0; j < x->nin; j++)
            for (int e = 0; e < GAP; e++)
                CHECK_EQ(rb[rd[j] + e], x->in[j] == MPI_PROC_NULL || e >= rc[j]
                                            ? -7 : nbr_val(x->in[j], 0, e));
    }
    /* alltoall: block i to out[i]. */
    for (int nb = 0; nb < 2; nb++) {
        for (int i = 0; i < x->nout; i++)
            for (int e = 0; e < B; e++)
                sb[i * B + e] = nbr_val(rank, i, e);
        for (int i = 0; i < 8 * B; i++)
            rb[i] = -7;
        if (nb) {
            MPI_Ineighbor_alltoall(sb, B, MPI_INT, rb, B, MPI_INT, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            CHECK_EQ(MPI_Neighbor_alltoall(sb, B, MPI_INT, rb, B, MPI_INT, comm), MPI_SUCCESS);
        }
        for (int j = 0; j < x->nin; j++)
            for (int e = 0; e < B; e++)
                CHECK_EQ(rb[j * B + e], x->from[j] < 0 ? -7 : nbr_val(x->in[j], x->from[j], e));
    }
    /* alltoallv: block i has i + 1 elements, at GAP * (nout - 1 - i). */
    for (int nb = 0; nb < 2; nb++) {
        for (int i = 0; i < x->nout; i++) {
            sc[i] = i + 1;
            sd[i] = GAP * (x->nout - 1 - i);
            for (int e = 0; e < sc[i]; e++)
                sb[sd[i] + e] = nbr_val(rank, i, e);
        }
        for (int j = 0; j < x->nin; j++) {
            rc[j] = x->from[j] < 0 ? 2 : x->from[j] + 1;
            rd[j] = GAP * j + 1;
        }
        for (int i = 0; i < 8 * GAP; i++)
            rb[i] = -7;
        if (nb) {
            MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm);
        }
        for (int j = 0; j < x->nin; j++)
            for (int e = 0; e < rc[j]; e++)
                CHECK_EQ(rb[rd[j] + e], x->from[j] < 0 ? -7 : nbr_val(x->in[j], x->from[j], e));
    }
    /* alltoallw: 2 ints per block, sent as 2 MPI_INT to even slots and one
     * pair type to odd ones, received the other way; byte displacements. */
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (int nb = 0; nb < 2; nb++) {
        for (int i = 0; i < x->nout; i++) {
            sc[i] = i % 2 ? 1 : 2;
            st[i] = i % 2 ? pair : MPI_INT;
            sw[i] = (MPI_Aint)sizeof(int) * GAP * i;
            for (int e = 0; e < 2; e++)
                sb[GAP * i + e] = nbr_val(rank, i, e);
        }
        for (int j = 0; j < x->nin; j++) {
            rc[j] = j % 2 ? 2 : 1;
            rt[j] = j % 2 ? MPI_INT : pair;
            rw[j] = (MPI_Aint)sizeof(int) * (GAP * (x->nin - 1 - j) + 2);
        }
        for (int i = 0; i < 8 * GAP; i++)
            rb[i] = -7;
        if (nb) {
            MPI_Ineighbor_alltoallw(sb, sc, sw, st, rb, rc, rw, rt, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_alltoallw(sb, sc, sw, st, rb, rc, rw, rt, comm);
        }
        for (int j = 0; j < x->nin; j++)
            for (int e = 0; e < 2; e++)
                CHECK_EQ(rb[rw[j] / (MPI_Aint)sizeof(int) + e],
                         x->from[j] < 0 ? -7 : nbr_val(x->in[j], x->from[j], e));
    }
    MPI_Type_free(&pair);
}

static void test_nbr(void)
{
    nbr_expect_t x;
    MPI_Comm comm;

    /* 2-D grids over every process: periodic in both dimensions, in
     * neither, in one. */
    for (int k = 0; k < 3; k++) {
        int d[2] = {0, 0}, p[2] = {k == 0, k == 0 || k == 2};
        MPI_Dims_create(size, 2, d);
        MPI_Cart_create(MPI_COMM_WORLD, 2, d, p, 0, &comm);
        nbr_cart_expect(d, p, &x);
        nbr_run(comm, &x);
        MPI_Comm_free(&comm);
    }
    /* A ring graph (at 1 and 2 processes, repeated edges). */
    {
        int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 *
                                                                          (size_t)size);
        graph_ring(size, index, edges);
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &comm);
        nbr_graph_expect(2, edges + 2 * rank, nbr_ring_outs, &x);
        nbr_run(comm, &x);
        MPI_Comm_free(&comm);
        free(index);
        free(edges);
    }
    /* The distributed graph r -> r+1, r+2. */
    {
        int src[2], dst[2];
        for (int i = 0; i < 2; i++) {
            src[i] = ((rank - 1 - i) % size + size) % size;
            dst[i] = dg_dest(rank, i);
        }
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm);
        nbr_graph_expect(2, src, nbr_dg_outs, &x);
        nbr_run(comm, &x);
        MPI_Comm_free(&comm);
    }
    /* Errors: no topology, MPI_IN_PLACE, a negative count. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int b[8] = {0}, d[1] = {size}, p[1] = {1}, cnt[2] = {1, -1}, dsp[2] = {0, 1};
        MPI_Request req;
        CHECK_EQ(MPI_Neighbor_alltoall(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_TOPOLOGY);
        CHECK_EQ(MPI_Ineighbor_allgather(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD, &req),
                 MPI_ERR_TOPOLOGY);
        MPI_Cart_create(MPI_COMM_WORLD, 1, d, p, 0, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, comm),
                 MPI_ERR_BUFFER);
        CHECK_EQ(MPI_Neighbor_allgather(b, -1, MPI_INT, b, 1, MPI_INT, comm), MPI_ERR_COUNT);
        CHECK_EQ(MPI_Neighbor_alltoallv(b, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, comm),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Neighbor_alltoall(b, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, comm),
                 MPI_ERR_TYPE);
        CHECK_EQ(MPI_Ineighbor_alltoall(b, 1, MPI_INT, b, 1, MPI_INT, comm, NULL), MPI_ERR_ARG);
        MPI_Comm_free(&comm);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* --- Derived datatypes ---------------------------------------------------------------- */
/* A type over ints checked against its type map worked out by hand: ref
 * lists one element's ints (offsets in ints, in order), lb and ext are in
 * ints. Checked: size, bounds, pack against a gather by the map, unpack
 * back, and the type sent around the ring at counts from one element to
 * past the eager limit and into rendezvous, received both with the type
 * (only the mapped ints change) and as plain ints (the packed order). */
static void dtype_check(MPI_Datatype t, const char *name, const long *ref, int nref, long lb,
                        long ext, int maxcount)
{
    static const int counts[] = {1, 3, 50, 500, 20000};
    int sz, to = (rank + 1) % size, from = (rank - 1 + size) % size;
    MPI_Aint l, e;

    MPI_Type_size(t, &sz);
    MPI_Type_get_extent(t, &l, &e);
    if (sz != nref * 4 || l != lb * 4 || e != ext * 4)
        fprintf(stderr, "rank %d: type %s\n", rank, name);
    CHECK_EQ(sz, nref * 4);
    CHECK_EQ(l, lb * 4);
    CHECK_EQ(e, ext * 4);
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        int count = counts[k] < maxcount ? counts[k] : maxcount, pos = 0, psize, bad = 0;
        /* The span the elements touch, from lb: enough room either side. */
        long span = (long)(count + 1) * (ext > 0 ? ext : 1) + 64, lo = 32;
        int *src = malloc((size_t)(span + 2 * lo) * sizeof(int));
        int *dst = malloc((size_t)(span + 2 * lo) * sizeof(int));
        int *flat = malloc((size_t)count * (size_t)nref * sizeof(int) + 4);
        int *got = malloc((size_t)count * (size_t)nref * sizeof(int) + 4);
        int *sbase = src + lo - lb, *dbase = dst + lo - lb;
        MPI_Status st;

        for (long i = 0; i < span + 2 * lo; i++)
            src[i] = (int)(i - lo + lb) + 1000000 * rank;
        /* MPI_Pack gives the mapped ints in order. */
        MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize);
        CHECK_EQ(psize, count * nref * 4);
        CHECK_EQ(MPI_Pack(sbase, count, t, flat, psize, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_EQ(pos, psize);
        for (int el = 0; el < count; el++)
            for (int j = 0; j < nref; j++)
                bad += flat[el * nref + j] != (int)(el * ext + ref[j]) + 1000000 * rank;
        CHECK_EQ(bad, 0);
        /* MPI_Unpack puts them back where they were, and nowhere else. */
        for (long i = 0; i < span + 2 * lo; i++)
            dst[i] = -1;
        pos = 0;
        CHECK_EQ(MPI_Unpack(flat, psize, &pos, dbase, count, t, MPI_COMM_WORLD), MPI_SUCCESS);
        bad = 0;
        for (long i = 0; i < span + 2 * lo; i++)
            bad += dst[i] != -1 && dst[i] != src[i];
        for (int el = 0; el < count; el++)
            for (int j = 0; j < nref; j++)
                bad += dbase[el * ext + ref[j]] != sbase[el * ext + ref[j]];
        CHECK_EQ(bad, 0);
        /* Around the ring: typed to typed. */
        for (long i = 0; i < span + 2 * lo; i++)
            dst[i] = -1;
        MPI_Sendrecv(sbase, count, t, to, 30, dbase, count, t, from, 30, MPI_COMM_WORLD, &st);
        bad = 0;
        for (int el = 0; el < count; el++)
            for (int j = 0; j < nref; j++) {
                long at = el * ext + ref[j];
                bad += dbase[at] != (int)at + 1000000 * from;
                dbase[at] = -1;
            }
        for (long i = 0; i < span + 2 * lo; i++)
            bad += dst[i] != -1; /* nothing outside the map was written */
        CHECK_EQ(bad, 0);
        {
            int n = -1;
            MPI_Get_count(&st, t, &n);
            CHECK_EQ(n, count);
            MPI_Get_elements(&st, t, &n);
            CHECK_EQ(n, count * nref);
        }
        /* Typed to plain ints: the packed order. */
        MPI_Sendrecv(sbase, count, t, to, 31, got, count * nref, MPI_INT, from, 31,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = 0;
        for (int el = 0; el < count; el++)
            for (int j = 0; j < nref; j++)
                bad += got[el * nref + j] != (int)(el * ext + ref[j]) + 1000000 * from;
        CHECK_EQ(bad, 0);
        free(src);
        free(dst);
        free(flat);
        free(got);
    }
}

typedef struct {
    int    a;
    double d;
    char   c[3];
} dtype_rec_t;

static void test_dtype_struct(void)
{
    enum { N = 300 }; /* 300 x 24 bytes: a rendezvous message */
    int bl[3] = {1, 1, 3}, to = (rank + 1) % size, from = (rank - 1 + size) % size, n;
    MPI_Aint disp[3], base, lb, ext;
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, rec;
    dtype_rec_t *s = calloc(N, sizeof(*s)), *r = calloc(N, sizeof(*r));
    MPI_Status st;

    MPI_Get_address(&s[0], &base);
    MPI_Get_address(&s[0].a, &disp[0]);
    MPI_Get_address(&s[0].d, &disp[1]);
    MPI_Get_address(&s[0].c, &disp[2]);
    for (int i = 0; i < 3; i++)
        disp[i] = MPI_Aint_diff(disp[i], base);
    MPI_Type_create_struct(3, bl, disp, types, &rec);
    MPI_Type_commit(&rec);
    /* The extent is the C struct's: padded to the double's alignment. */
    MPI_Type_get_extent(rec, &lb, &ext);
    CHECK_EQ(lb, 0);
    CHECK_EQ(ext, sizeof(dtype_rec_t));
    MPI_Type_size(rec, &n);
    CHECK_EQ(n, sizeof(int) + sizeof(double) + 3);
    MPI_Type_get_true_extent(rec, &lb, &ext);
    CHECK_EQ(lb, 0);
    CHECK_EQ(ext, offsetof(dtype_rec_t, c) + 3);
    for (int i = 0; i < N; i++) {
        s[i].a = i + rank * 1000;
        s[i].d = i * 0.5 + rank;
        memcpy(s[i].c, (char[]){(char)('a' + i % 26), (char)rank, (char)i}, 3);
    }
    for (int count = 1; count <= N; count += N - 1) {
        int bad = 0;
        memset(r, 0x5a, N * sizeof(*r));
        MPI_Sendrecv(s, count, rec, to, 40, r, count, rec, from, 40, MPI_COMM_WORLD, &st);
        for (int i = 0; i < count; i++)
            bad += r[i].a != i + from * 1000 || r[i].d != i * 0.5 + from ||
                   r[i].c[0] != (char)('a' + i % 26) || r[i].c[1] != (char)from ||
                   r[i].c[2] != (char)i;
        CHECK_EQ(bad, 0);
        MPI_Get_elements(&st, rec, &n);
        CHECK_EQ(n, count * 5);
    }
    /* A message cut inside the struct: 2 ints then a double's worth,
     * received as two records: elements count int, double, and one char
     * each; 12 + 8 bytes are two records' first int and... here simply
     * int (4) + double (8) + 2 chars = 14 bytes: 4 elements. */
    {
        char raw[14];
        memset(raw, 1, sizeof(raw));
        MPI_Sendrecv(raw, 14, MPI_BYTE, to, 41, r, 2, rec, from, 41, MPI_COMM_WORLD, &st);
        MPI_Get_elements(&st, rec, &n);
        CHECK_EQ(n, 4);
        MPI_Get_count(&st, rec, &n);
        CHECK_EQ(n, MPI_UNDEFINED);
        MPI_Sendrecv(raw, 6, MPI_BYTE, to, 42, r, 2, rec, from, 42, MPI_COMM_WORLD, &st);
        MPI_Get_elements(&st, rec, &n); /* 4 + 2 bytes: the double is cut */
        CHECK_EQ(n, MPI_UNDEFINED);
    }
    MPI_Type_free(&rec);
    free(s);
    free(r);
}

/* The predefined types for MPI_Offset, MPI_Count and C++'s bool and
 * complex: their names and sizes, reductions in their arithmetic, a
 * transfer; MPI_Type_match_size's C types of a class and size. */
static void test_dtype_named(void)
{
    static const struct {
        MPI_Datatype t;
        const char  *name;
        int          size;
    } named[] = {
        {MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset)},
        {MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count)},
        {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1},
        {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 2 * sizeof(float)},
        {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 2 * sizeof(double)},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double)},
        {MPI_INTEGER, "MPI_INTEGER", 4},
        {MPI_REAL, "MPI_REAL", 4},
        {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8},
        {MPI_COMPLEX, "MPI_COMPLEX", 8},
        {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16},
        {MPI_LOGICAL, "MPI_LOGICAL", 4},
        {MPI_CHARACTER, "MPI_CHARACTER", 1},
        {MPI_REAL4, "MPI_REAL4", 4},
        {MPI_REAL8, "MPI_REAL8", 8},
        {MPI_REAL16, "MPI_REAL16", 16},
        {MPI_COMPLEX8, "MPI_COMPLEX8", 8},
        {MPI_COMPLEX16, "MPI_COMPLEX16", 16},
        {MPI_COMPLEX32, "MPI_COMPLEX32", 32},
        {MPI_INTEGER1, "MPI_INTEGER1", 1},
        {MPI_INTEGER2, "MPI_INTEGER2", 2},
        {MPI_INTEGER4, "MPI_INTEGER4", 4},
        {MPI_INTEGER8, "MPI_INTEGER8", 8},
        {MPI_INTEGER16, "MPI_INTEGER16", 16},
        {MPI_C_COMPLEX, "MPI_C_COMPLEX", 2 * sizeof(float)},
    };
    char name[MPI_MAX_OBJECT_NAME];
    int len, sz, ni, na, nt, comb;
    MPI_Count c = ((MPI_Count)rank + 1) << 40, csum = 0;
    MPI_Offset o = (MPI_Offset)rank * 3 - 7, omax = 0;
    _Bool b = rank == size - 1, bor = 0;
    double z[2] = {rank + 0.5, -rank - 0.25}, zin[2] = {0, 0};
    MPI_Datatype m;

    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        MPI_Type_get_name(named[i].t, name, &len);
        CHECK(strcmp(name, named[i].name) == 0 && len == (int)strlen(named[i].name));
        MPI_Type_size(named[i].t, &sz);
        CHECK_EQ(sz, named[i].size);
        MPI_Type_get_envelope(named[i].t, &ni, &na, &nt, &comb);
        CHECK(comb == MPI_COMBINER_NAMED);
    }
    MPI_Allreduce(&c, &csum, 1, MPI_COUNT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(csum == ((MPI_Count)size * (size + 1) / 2) << 40);
    MPI_Allreduce(&o, &omax, 1, MPI_OFFSET, MPI_MAX, MPI_COMM_WORLD);
    CHECK(omax == (MPI_Offset)(size - 1) * 3 - 7);
    MPI_Allreduce(&b, &bor, 1, MPI_CXX_BOOL, MPI_LOR, MPI_COMM_WORLD);
    CHECK(bor == 1);
    /* A complex from the left neighbour, as it was sent. */
    MPI_Sendrecv(z, 1, MPI_CXX_DOUBLE_COMPLEX, (rank + 1) % size, 31, zin, 1,
                 MPI_CXX_DOUBLE_COMPLEX, (rank - 1 + size) % size, 31, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(zin[0] == (rank - 1 + size) % size + 0.5 && zin[1] == -((rank - 1 + size) % size) - 0.25);
    /* Complex numbers sum and multiply (and do nothing else): rank r gives
     * (r + 1) + i, so the sum is n(n+1)/2 + n i and the product that of
     * (k + i) for k = 1 to n, computed here. */
    {
        double _Complex mine = (rank + 1) + 1.0 * _Complex_I, sum = 0, prod = 0, want = 1;
        float _Complex fmine = (float)(rank + 1) + 1.0f * _Complex_I, fsum = 0;
        for (int k = 1; k <= size; k++)
            want *= k + 1.0 * _Complex_I;
        MPI_Allreduce(&mine, &sum, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
        CHECK(creal(sum) == size * (size + 1) / 2.0 && cimag(sum) == size);
        MPI_Allreduce(&mine, &prod, 1, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
        {
            double _Complex d = prod - want;
            double dd = creal(d) * creal(d) + cimag(d) * cimag(d),
                   ww = creal(want) * creal(want) + cimag(want) * cimag(want);
            CHECK(dd < 1e-18 * ww);
        }
        MPI_Allreduce(&fmine, &fsum, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
        CHECK(crealf(fsum) == size * (size + 1) / 2.0f && cimagf(fsum) == size);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Allreduce(&mine, &sum, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD),
                 MPI_ERR_OP);
        CHECK_EQ(MPI_Allreduce(&mine, &sum, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD),
                 MPI_ERR_OP);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }

    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(double), &m), MPI_SUCCESS);
    CHECK(m == MPI_DOUBLE);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(float), &m), MPI_SUCCESS);
    CHECK(m == MPI_FLOAT);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &m), MPI_SUCCESS);
    CHECK(m == MPI_INT16_T);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &m), MPI_SUCCESS);
    CHECK(m == MPI_INT64_T);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 2 * sizeof(float), &m), MPI_SUCCESS);
    CHECK(m == MPI_C_FLOAT_COMPLEX);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    m = MPI_DATATYPE_NULL;
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &m), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_match_size(7, 4, &m), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, NULL), MPI_ERR_ARG);
    CHECK(m == MPI_DATATYPE_NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* The owner's coordinate of global index i of a dimension (MPI 4.0,
 * 5.1.4): a block of ceil(g / p) (or darg), or blocks of darg dealt in
 * turn. */
static int darray_owner(int i, int g, int distrib, int darg, int p)
{
    int k;

    if (distrib == MPI_DISTRIBUTE_NONE)
        return 0;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        k = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        return i / k;
    }
    k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return i / k % p;
}

/* MPI_Type_create_darray, every process of several grids (the rank is an
 * argument: one process checks them all): packing a global array whose
 * elements are their own linear indices gives exactly the indices the
 * process owns, in memory order; the extent is the whole array's. */
static void test_dtype_darray(void)
{
    static const struct {
        int ndims, order, g[3], d[3], da[3], p[3];
    } cfg[] = {
        {2, MPI_ORDER_C, {6, 7}, {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
         {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, {2, 3}},
        {2, MPI_ORDER_FORTRAN, {9, 5}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
         {2, 3}, {3, 2}},
        {3, MPI_ORDER_C, {4, 5, 11}, {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC,
         MPI_DISTRIBUTE_CYCLIC}, {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, 3},
         {1, 2, 2}},
        {1, MPI_ORDER_C, {10}, {MPI_DISTRIBUTE_BLOCK}, {4}, {3}}, /* the last owns 2 */
        {1, MPI_ORDER_FORTRAN, {3}, {MPI_DISTRIBUTE_BLOCK}, {MPI_DISTRIBUTE_DFLT_DARG}, {4}},
    };
    int all[220], packed[220], want[220];

    for (int i = 0; i < 220; i++)
        all[i] = i;
    for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
        int nd = cfg[c].ndims, whole = 1, grid = 1;
        for (int i = 0; i < nd; i++) {
            whole *= cfg[c].g[i];
            grid *= cfg[c].p[i];
        }
        for (int r = 0; r < grid; r++) {
            MPI_Datatype t;
            MPI_Aint lb, ext;
            int coord[3], n = 0, sz = -1, pos = 0, ni, na, nt, comb;
            for (int i = nd - 1, rest = r; i >= 0; i--) { /* row-major grid */
                coord[i] = rest % cfg[c].p[i];
                rest /= cfg[c].p[i];
            }
            /* Linear index l in memory order: its index in each dimension. */
            for (int l = 0; l < whole; l++) {
                int rest = l, mine = 1;
                for (int k = 0; k < nd; k++) {
                    int i = cfg[c].order == MPI_ORDER_C ? nd - 1 - k : k; /* fastest first */
                    int x = rest % cfg[c].g[i];
                    rest /= cfg[c].g[i];
                    mine &= darray_owner(x, cfg[c].g[i], cfg[c].d[i], cfg[c].da[i],
                                         cfg[c].p[i]) == coord[i];
                }
                if (mine)
                    want[n++] = l;
            }
            CHECK_EQ(MPI_Type_create_darray(grid, r, nd, cfg[c].g, cfg[c].d, cfg[c].da,
                                            cfg[c].p, cfg[c].order, MPI_INT, &t), MPI_SUCCESS);
            MPI_Type_commit(&t);
            MPI_Type_size(t, &sz);
            MPI_Type_get_extent(t, &lb, &ext);
            CHECK(sz == n * (int)sizeof(int) && lb == 0 && ext == whole * (MPI_Aint)sizeof(int));
            MPI_Pack(all, 1, t, packed, sizeof(packed), &pos, MPI_COMM_SELF);
            CHECK_EQ(pos, n * (int)sizeof(int));
            for (int i = 0; i < n; i++)
                if (packed[i] != want[i]) {
                    fprintf(stderr, "darray %zu, rank %d: element %d is %d, want %d\n", c, r, i,
                            packed[i], want[i]);
                    CHECK(0);
                    break;
                }
            MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
            CHECK(comb == MPI_COMBINER_DARRAY && ni == 4 * nd + 4 && na == 0 && nt == 1);
            MPI_Type_free(&t);
        }
    }
    {   /* Refused: a grid that is not the size, a spread undistributed
         * dimension, blocks too small to cover it, a rank off the grid. */
        int g[2] = {8, 8}, d[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
            da[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p[2] = {2, 1};
        MPI_Datatype t = MPI_DATATYPE_NULL;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Type_create_darray(3, 0, 2, g, d, da, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
        CHECK_EQ(MPI_Type_create_darray(2, 2, 2, g, d, da, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
        p[1] = 2;
        CHECK_EQ(MPI_Type_create_darray(4, 0, 2, g, d, da, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
        d[1] = MPI_DISTRIBUTE_BLOCK;
        da[1] = 3; /* 3 x 2 < 8 */
        CHECK_EQ(MPI_Type_create_darray(4, 0, 2, g, d, da, p, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
        /* gsizes and psizes are positive (MPI 3.1, 4.1.4): a dimension of
         * no elements, or over no processes, is refused, not an empty
         * type; the grid of one process would be right for either. */
        {
            int g1[1] = {0}, d1[1] = {MPI_DISTRIBUTE_BLOCK},
                da1[1] = {MPI_DISTRIBUTE_DFLT_DARG}, p1[1] = {1};
            CHECK_EQ(MPI_Type_create_darray(1, 0, 1, g1, d1, da1, p1, MPI_ORDER_C, MPI_INT, &t),
                     MPI_ERR_ARG);
            g1[0] = 4;
            p1[0] = 0;
            CHECK_EQ(MPI_Type_create_darray(1, 0, 1, g1, d1, da1, p1, MPI_ORDER_C, MPI_INT, &t),
                     MPI_ERR_ARG);
        }
        CHECK(t == MPI_DATATYPE_NULL);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
}

/* external32: big-endian bytes of the sizes MPI's table gives, written
 * out here; unpacked back to the values; the kinds onic does not convert
 * refused, not garbled. */
static void test_dtype_external(void)
{
    static const unsigned char want_int[8] = {0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe};
    static const unsigned char want_dbl[8] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};      /* 1.0 */
    static const unsigned char want_cpx[8] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};   /* 1 + 2i */
    int in[4] = {0x01020304, -2, 7, 9}, back[4] = {0, 0, 0, 0};
    double d = 1.0, dback = 0;
    float _Complex z = 1.0f + 2.0f * _Complex_I, zback = 0;
    unsigned char buf[64];
    MPI_Aint pos = 0, size = -1;
    MPI_Datatype v;
    long l = 5;

    CHECK_EQ(MPI_Pack_external_size("external32", 2, MPI_INT, &size), MPI_SUCCESS);
    CHECK_EQ(size, 8);
    CHECK_EQ(MPI_Pack_external("external32", in, 2, MPI_INT, buf, sizeof(buf), &pos),
             MPI_SUCCESS);
    CHECK(pos == 8 && memcmp(buf, want_int, 8) == 0);
    CHECK_EQ(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof(buf), &pos),
             MPI_SUCCESS);
    CHECK(pos == 16 && memcmp(buf + 8, want_dbl, 8) == 0);
    CHECK_EQ(MPI_Pack_external("external32", &z, 1, MPI_C_FLOAT_COMPLEX, buf, sizeof(buf), &pos),
             MPI_SUCCESS);
    CHECK(pos == 24 && memcmp(buf + 16, want_cpx, 8) == 0);
    /* Every other int of four: 0x01020304 and 7. */
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    CHECK_EQ(MPI_Pack_external("external32", in, 1, v, buf, sizeof(buf), &pos), MPI_SUCCESS);
    CHECK(pos == 32 && memcmp(buf + 24, want_int, 4) == 0 && buf[31] == 7 && buf[28] == 0);
    pos = 0;
    CHECK_EQ(MPI_Unpack_external("external32", buf, 32, &pos, back, 2, MPI_INT), MPI_SUCCESS);
    CHECK(back[0] == 0x01020304 && back[1] == -2);
    CHECK_EQ(MPI_Unpack_external("external32", buf, 32, &pos, &dback, 1, MPI_DOUBLE),
             MPI_SUCCESS);
    CHECK(dback == 1.0);
    CHECK_EQ(MPI_Unpack_external("external32", buf, 32, &pos, &zback, 1, MPI_C_FLOAT_COMPLEX),
             MPI_SUCCESS);
    CHECK(zback == z);
    memset(back, 0, sizeof(back));
    CHECK_EQ(MPI_Unpack_external("external32", buf, 32, &pos, back, 1, v), MPI_SUCCESS);
    CHECK(pos == 32 && back[0] == 0x01020304 && back[1] == 0 && back[2] == 7);
    MPI_Type_free(&v);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pos = 0;
    CHECK_EQ(MPI_Pack_external("native", in, 1, MPI_INT, buf, sizeof(buf), &pos), MPI_ERR_ARG);
    CHECK_EQ(MPI_Pack_external(NULL, in, 1, MPI_INT, buf, sizeof(buf), &pos), MPI_ERR_ARG);
    CHECK_EQ(MPI_Pack_external_size(NULL, 1, MPI_INT, &size), MPI_ERR_ARG);
    /* MPI_LONG is 4 bytes in external32, 8 here: refused. */
    CHECK_EQ(MPI_Pack_external("external32", &l, 1, MPI_LONG, buf, sizeof(buf), &pos),
             MPI_ERR_TYPE);
    CHECK_EQ(MPI_Pack_external("external32", in, 4, MPI_INT, buf, 12, &pos), MPI_ERR_TRUNCATE);
    CHECK_EQ(pos, 0);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Resized types that look contiguous by one measure and are not: a
 * vector of two ints two apart resized to the extent of its data (8
 * bytes: its size is its extent, its first block at its lower bound), and
 * one int resized to 8 bytes; packing either takes ints 0 and 2.
 * And MPI_Pack's counts: a negative incount or outsize is MPI_ERR_COUNT
 * (MPI 3.1, 4.2: incount and outsize are non-negative), whichever it is. */
static void test_dtype_resized_gap(void)
{
    int in[4] = {10, 11, 12, 13}, out[2] = {-1, -1}, sz = -1, pos = 0;
    MPI_Aint lb = -1, ext = -1;
    MPI_Datatype v, r;

    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 2 * (MPI_Aint)sizeof(int), &r);
    MPI_Type_commit(&r);
    MPI_Type_size(r, &sz);
    MPI_Type_get_extent(r, &lb, &ext);
    CHECK(sz == 2 * (int)sizeof(int) && lb == 0 && ext == 2 * (MPI_Aint)sizeof(int));
    CHECK_EQ(MPI_Pack(in, 1, r, out, sizeof(out), &pos, MPI_COMM_SELF), MPI_SUCCESS);
    CHECK(pos == (int)sizeof(out) && out[0] == 10 && out[1] == 12);
    MPI_Type_free(&r);
    /* One int stretched to the extent of two: one block at the lower
     * bound, but two of them are ints 0 and 2, not a run of bytes. */
    MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &r);
    MPI_Type_commit(&r);
    out[0] = out[1] = -1;
    pos = 0;
    CHECK_EQ(MPI_Pack(in, 2, r, out, sizeof(out), &pos, MPI_COMM_SELF), MPI_SUCCESS);
    CHECK(pos == (int)sizeof(out) && out[0] == 10 && out[1] == 12);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    pos = 0;
    CHECK_EQ(MPI_Pack(in, -1, MPI_INT, out, sizeof(out), &pos, MPI_COMM_SELF), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Pack(in, 1, MPI_INT, out, -1, &pos, MPI_COMM_SELF), MPI_ERR_COUNT);
    CHECK_EQ(pos, 0);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&r);
    MPI_Type_free(&v);
}

static void test_dtype(void)
{
    MPI_Datatype t, v, w;

    test_dtype_named();
    test_dtype_external();
    test_dtype_darray();
    test_dtype_resized_gap();

    {   /* A long contiguous type is one block, made without a part per element. */
        int sz;
        MPI_Aint lb, ext;
        CHECK_EQ(MPI_Type_contiguous(1 << 30, MPI_CHAR, &t), MPI_SUCCESS);
        MPI_Type_size(t, &sz);
        MPI_Type_get_extent(t, &lb, &ext);
        CHECK(sz == 1 << 30 && lb == 0 && ext == 1 << 30);
        MPI_Type_free(&t);
    }

    {   /* indexed: blocks {2,1,3} at {0,5,9} */
        int bl[3] = {2, 1, 3}, d[3] = {0, 5, 9};
        long ref[] = {0, 1, 5, 9, 10, 11};
        MPI_Type_indexed(3, bl, d, MPI_INT, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "indexed", ref, 6, 0, 12, 1 << 30);
        /* The envelope gives back what made it. */
        int ni, na, nt, comb, ints[7];
        MPI_Aint ai[1];
        MPI_Datatype ty[1];
        MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
        CHECK(comb == MPI_COMBINER_INDEXED && ni == 7 && na == 0 && nt == 1);
        MPI_Type_get_contents(t, 7, 0, 1, ints, ai, ty);
        CHECK(ints[0] == 3 && ints[1] == 2 && ints[3] == 3 && ints[4] == 0 && ints[6] == 9);
        CHECK(ty[0] == MPI_INT);
        MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &comb);
        CHECK_EQ(comb, MPI_COMBINER_NAMED);
        /* dup: the same map, committed already. */
        MPI_Type_dup(t, &w);
        dtype_check(w, "dup", ref, 6, 0, 12, 1 << 30);
        MPI_Type_get_envelope(w, &ni, &na, &nt, &comb);
        CHECK_EQ(comb, MPI_COMBINER_DUP);
        MPI_Type_free(&w);
        /* A vector of (live) indexed types: its contents give a new handle
         * that decodes as the indexed type did (MPI 3.1, 4.1.13), not as
         * a dup, and is freed on its own. */
        {
            int vi[3];
            MPI_Datatype vt, inner = MPI_DATATYPE_NULL;
            MPI_Type_vector(2, 1, 2, t, &vt);
            MPI_Type_get_contents(vt, 3, 0, 1, vi, ai, &inner);
            CHECK(vi[0] == 2 && vi[1] == 1 && vi[2] == 2);
            CHECK(inner != t && inner != MPI_DATATYPE_NULL);
            MPI_Type_get_envelope(inner, &ni, &na, &nt, &comb);
            CHECK(comb == MPI_COMBINER_INDEXED && ni == 7 && na == 0 && nt == 1);
            for (int i = 0; i < 7; i++)
                ints[i] = -1;
            MPI_Type_get_contents(inner, 7, 0, 1, ints, ai, ty);
            CHECK(ints[0] == 3 && ints[1] == 2 && ints[3] == 3 && ints[4] == 0 && ints[6] == 9);
            CHECK(ty[0] == MPI_INT);
            CHECK_EQ(MPI_Type_free(&inner), MPI_SUCCESS);
            CHECK_EQ(MPI_Type_free(&vt), MPI_SUCCESS);
        }
        /* Names: the predefined ones', one set, and a long one cut. */
        char name[MPI_MAX_OBJECT_NAME], longname[300];
        int len;
        MPI_Type_get_name(MPI_INT, name, &len);
        CHECK(strcmp(name, "MPI_INT") == 0 && len == 7);
        MPI_Type_get_name(t, name, &len);
        CHECK_EQ(len, 0);
        MPI_Type_set_name(t, "three blocks");
        MPI_Type_get_name(t, name, &len);
        CHECK(strcmp(name, "three blocks") == 0 && len == 12);
        memset(longname, 'x', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        MPI_Type_set_name(t, longname);
        MPI_Type_get_name(t, name, &len);
        CHECK_EQ(len, MPI_MAX_OBJECT_NAME - 1);
        MPI_Type_free(&t);
    }
    {   /* hindexed: the same in bytes */
        int bl[3] = {2, 1, 3};
        MPI_Aint d[3] = {0, 20, 36};
        long ref[] = {0, 1, 5, 9, 10, 11};
        MPI_Type_create_hindexed(3, bl, d, MPI_INT, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "hindexed", ref, 6, 0, 12, 1 << 30);
        MPI_Type_free(&t);
    }
    {   /* indexed_block: 2 ints at {7,1,4}: lb 1, ub 9 */
        int d[3] = {7, 1, 4};
        MPI_Aint ad[3] = {28, 4, 16};
        long ref[] = {7, 8, 1, 2, 4, 5};
        MPI_Type_create_indexed_block(3, 2, d, MPI_INT, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "indexed_block", ref, 6, 1, 8, 1 << 30);
        MPI_Type_free(&t);
        MPI_Type_create_hindexed_block(3, 2, ad, MPI_INT, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "hindexed_block", ref, 6, 1, 8, 1 << 30);
        MPI_Type_free(&t);
    }
    {   /* hvector: 3 blocks of 2 ints, 20 bytes apart */
        long ref[] = {0, 1, 5, 6, 10, 11};
        MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "hvector", ref, 6, 0, 12, 1 << 30);
        MPI_Type_free(&t);
    }
    {   /* subarray, C order: rows 1..3, columns 2..3 of a 6 x 5 array */
        int sizes[2] = {6, 5}, sub[2] = {3, 2}, starts[2] = {1, 2};
        long ref[6], refF[6];
        int k = 0;
        for (int r = 1; r <= 3; r++)
            for (int c = 2; c <= 3; c++)
                ref[k++] = r * 5 + c;
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "subarray C", ref, 6, 0, 30, 1 << 30);
        MPI_Type_free(&t);
        /* Fortran order: dimension 0 fastest. */
        k = 0;
        for (int j = 2; j <= 3; j++)
            for (int i = 1; i <= 3; i++)
                refF[k++] = i + 6 * j;
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "subarray Fortran", refF, 6, 0, 30, 1 << 30);
        MPI_Type_free(&t);
    }
    {   /* A 3-D subarray: a 2 x 2 x 3 box at (1,0,2) of 3 x 4 x 6 */
        int sizes[3] = {3, 4, 6}, sub[3] = {2, 2, 3}, starts[3] = {1, 0, 2}, k = 0;
        long ref[12];
        for (int a = 1; a <= 2; a++)
            for (int b = 0; b <= 1; b++)
                for (int c = 2; c <= 4; c++)
                    ref[k++] = (a * 4 + b) * 6 + c;
        MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "subarray 3-D", ref, 12, 0, 72, 1 << 30);
        MPI_Type_free(&t);
    }
    {   /* A column resized to one int: consecutive elements are the next
         * columns (the idiom for scattering columns). */
        long ref[] = {0, 4, 8};
        MPI_Aint tl, te;
        MPI_Type_vector(3, 1, 4, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, sizeof(int), &t);
        MPI_Type_commit(&t);
        dtype_check(t, "resized column", ref, 3, 0, 1, 4);
        MPI_Type_get_true_extent(t, &tl, &te);
        CHECK(tl == 0 && te == 9 * (MPI_Aint)sizeof(int));
        MPI_Type_free(&t);
        /* Bounds moved out on both sides: the data stays where it was. */
        MPI_Type_create_resized(MPI_INT, -8, 40, &t);
        MPI_Type_commit(&t);
        MPI_Type_get_true_extent(t, &tl, &te);
        CHECK(tl == 0 && te == (MPI_Aint)sizeof(int));
        long one[] = {0};
        dtype_check(t, "resized int", one, 1, -2, 10, 1 << 30);
        MPI_Type_free(&t);
        /* Nested: two of the column type, then a struct of it and 2 ints. */
        long ref2[] = {0, 3, 4, 7};
        MPI_Datatype col2;
        MPI_Type_vector(2, 1, 3, MPI_INT, &col2);
        MPI_Type_contiguous(2, col2, &t);
        MPI_Type_commit(&t);
        dtype_check(t, "contiguous of vector", ref2, 4, 0, 8, 1 << 30);
        MPI_Type_free(&t);
        int bl[2] = {1, 2};
        MPI_Aint d[2] = {0, 40};
        MPI_Datatype ty[2] = {col2, MPI_INT};
        long ref3[] = {0, 3, 10, 11};
        MPI_Type_create_struct(2, bl, d, ty, &t);
        MPI_Type_free(&col2); /* the struct keeps what it needs */
        MPI_Type_commit(&t);
        dtype_check(t, "struct of vector", ref3, 4, 0, 12, 1 << 30);
        /* Its contents name the freed vector: a handle again, to free. */
        {
            int ints[3];
            MPI_Aint ai[2];
            MPI_Datatype got[2];
            int ni, na, nt, comb, sz;
            MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
            CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nt == 2);
            MPI_Type_get_contents(t, 3, 2, 2, ints, ai, got);
            CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && ai[1] == 40);
            CHECK(got[1] == MPI_INT);
            MPI_Type_size(got[0], &sz);
            CHECK_EQ(sz, 2 * (int)sizeof(int));
            MPI_Type_free(&got[0]);
        }
        MPI_Type_free(&t);
        MPI_Type_free(&v);
    }
    test_dtype_struct();

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int bl[2] = {1, -1}, d[2] = {0, 1}, sizes[1] = {4}, sub[1] = {2}, st[1] = {3}, pos = 0;
        MPI_Aint ad[2] = {0, 8};
        MPI_Datatype ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
        int bl1[2] = {1, 1}, x[4] = {0}, buf[4];
        char small[4];
        CHECK_EQ(MPI_Type_indexed(2, bl, d, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_EQ(MPI_Type_indexed(-1, bl, d, MPI_INT, &t), MPI_ERR_COUNT);
        CHECK_EQ(MPI_Type_indexed(2, bl1, d, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
        CHECK_EQ(MPI_Type_create_struct(2, bl1, ad, ty, &t), MPI_ERR_TYPE);
        CHECK_EQ(MPI_Type_create_subarray(1, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG);
        CHECK_EQ(MPI_Type_create_subarray(1, sizes, sub, d, 99, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_EQ(MPI_Type_create_resized(MPI_INT, 0, 4, NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Pack(x, 4, MPI_INT, small, 4, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
        CHECK_EQ(pos, 0);
        CHECK_EQ(MPI_Unpack(small, 4, &pos, buf, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
        pos = 5;
        CHECK_EQ(MPI_Unpack(small, 4, &pos, buf, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG);
        CHECK_EQ(MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL), MPI_ERR_TYPE);
        /* A predefined type's name may change, and change back. */
        {
            char nm[MPI_MAX_OBJECT_NAME];
            int nl;
            CHECK_EQ(MPI_Type_set_name(MPI_INT, "mine"), MPI_SUCCESS);
            MPI_Type_get_name(MPI_INT, nm, &nl);
            CHECK(strcmp(nm, "mine") == 0 && nl == 4);
            MPI_Type_get_name(MPI_LONG_LONG, nm, &nl);
            CHECK(strcmp(nm, "MPI_LONG_LONG_INT") == 0);
            CHECK_EQ(MPI_Type_set_name(MPI_INT, "MPI_INT"), MPI_SUCCESS);
        }
        MPI_Type_vector(2, 1, 2, MPI_INT, &t); /* not committed */
        pos = 0;
        CHECK_EQ(MPI_Pack(x, 1, t, buf, 16, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
        CHECK_EQ(MPI_Send(x, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        MPI_Type_free(&t);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* --- v-collectives, reduce-scatter, scans, user operations ------------------------------ */
/* An affine map x -> a x + b; op(u, v) is "u, then v", which does not
 * commute: reductions must apply the ranks' maps in rank order. Modulo
 * 2^64 (the MPI type is two MPI_LONG_LONG, the same bytes): the products
 * of thousands of elements' maps over 6 or 7 ranks overflow. */
typedef struct {
    unsigned long long a, b;
} affine_t;

static void affine_then(void *in, void *io, int *len, MPI_Datatype *dt)
{
    affine_t *u = in, *v = io;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        affine_t r = {u[i].a * v[i].a, u[i].b * v[i].a + v[i].b};
        v[i] = r;
    }
}

/* What a receive buffer holds before an exscan (rank 0's stays so). */
static const affine_t affine_mark = {(unsigned long long)-3, (unsigned long long)-3};

static affine_t affine_of(int r, int k)
{
    return (affine_t){(unsigned long long)(r + 2 + k), (unsigned long long)(r + 1 - k)};
}

/* The ranks lo..hi-1 composed in order, for element k. */
static affine_t affine_fold(int lo, int hi, int k)
{
    affine_t acc = {1, 0};
    for (int r = lo; r < hi; r++) {
        affine_t u = affine_of(r, k);
        acc = (affine_t){acc.a * u.a, acc.b * u.a + u.b};
    }
    return acc;
}

/* A sum over the ints at 0 and 2 of each element of a vector(2, 1, 2)
 * type (extent 3 ints): the function reads the type's own layout. */
static void sum_vec(void *in, void *io, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = io;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        b[3 * i] += a[3 * i];
        b[3 * i + 2] += a[3 * i + 2];
    }
}

static void test_collv_gather(int scale)
{
    /* Process i has (i + 1) * scale ints 100000 i + k; blocks land one int
     * apart, so the gaps must keep -1. */
    int *counts = calloc((size_t)size, sizeof(int)), *displs = calloc((size_t)size, sizeof(int));
    int total = 0, mine = (rank + 1) * scale;
    int *send = calloc((size_t)mine + 1, sizeof(int)), *recv, *exp;

    for (int i = 0; i < size; i++) {
        counts[i] = (i + 1) * scale;
        displs[i] = total;
        total += counts[i] + 1;
    }
    recv = calloc((size_t)total, sizeof(int));
    exp = calloc((size_t)total, sizeof(int));
    for (int i = 0; i < total; i++)
        exp[i] = -1;
    for (int i = 0; i < size; i++)
        for (int k = 0; k < counts[i]; k++)
            exp[displs[i] + k] = 100000 * i + k;
    for (int k = 0; k < mine; k++)
        send[k] = 100000 * rank + k;
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < total; i++)
            recv[i] = -1;
        CHECK_EQ(MPI_Gatherv(send, mine, MPI_INT, recv, counts, displs, MPI_INT, root,
                             MPI_COMM_WORLD), MPI_SUCCESS);
        if (rank == root)
            CHECK(memcmp(recv, exp, (size_t)total * sizeof(int)) == 0);
        /* In place: the root's block is in recvbuf already. */
        for (int i = 0; i < total; i++)
            recv[i] = rank == root ? (i >= displs[root] && i < displs[root] + mine ? exp[i] : -1)
                                   : -7;
        MPI_Gatherv(rank == root ? MPI_IN_PLACE : send, mine, MPI_INT, recv, counts, displs,
                    MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            CHECK(memcmp(recv, exp, (size_t)total * sizeof(int)) == 0);
        /* Scatterv back: each gets its block. */
        int *got = malloc((size_t)mine * sizeof(int) + 4), bad = 0;
        for (int k = 0; k < mine; k++)
            got[k] = -1;
        CHECK_EQ(MPI_Scatterv(exp, counts, displs, MPI_INT, got, mine, MPI_INT, root,
                              MPI_COMM_WORLD), MPI_SUCCESS);
        for (int k = 0; k < mine; k++)
            bad += got[k] != 100000 * rank + k;
        CHECK_EQ(bad, 0);
        free(got);
    }
    /* Allgatherv, plain and in place. */
    for (int i = 0; i < total; i++)
        recv[i] = -1;
    CHECK_EQ(MPI_Allgatherv(send, mine, MPI_INT, recv, counts, displs, MPI_INT, MPI_COMM_WORLD),
             MPI_SUCCESS);
    CHECK(memcmp(recv, exp, (size_t)total * sizeof(int)) == 0);
    for (int i = 0; i < total; i++)
        recv[i] = i >= displs[rank] && i < displs[rank] + mine ? exp[i] : -1;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, MPI_INT,
                   MPI_COMM_WORLD);
    CHECK(memcmp(recv, exp, (size_t)total * sizeof(int)) == 0);
    free(counts);
    free(displs);
    free(send);
    free(recv);
    free(exp);
}

static void test_collv_alltoall(int scale)
{
    /* From r to j: ((r + j) % 3 + 1) * scale ints 1000000 r + 1000 j + k. */
    int *sc = malloc(4 * (size_t)size * sizeof(int)), *sd = sc + size, *rc = sd + size,
        *rd = rc + size;
    int stot = 0, rtot = 0, bad = 0;
    int *send, *recv;

    for (int j = 0; j < size; j++) {
        sc[j] = ((rank + j) % 3 + 1) * scale;
        rc[j] = ((j + rank) % 3 + 1) * scale;
    }
    /* Blocks in reverse order, to show the displacements are used. */
    for (int j = size - 1; j >= 0; j--) {
        sd[j] = stot;
        stot += sc[j];
        rd[j] = rtot;
        rtot += rc[j] + 2;
    }
    send = malloc((size_t)stot * sizeof(int) + 4);
    recv = malloc((size_t)rtot * sizeof(int) + 4);
    for (int j = 0; j < size; j++)
        for (int k = 0; k < sc[j]; k++)
            send[sd[j] + k] = 1000000 * rank + 1000 * j + k;
    for (int i = 0; i < rtot; i++)
        recv[i] = -1;
    CHECK_EQ(MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, MPI_COMM_WORLD),
             MPI_SUCCESS);
    for (int j = 0; j < size; j++) {
        for (int k = 0; k < rc[j]; k++)
            bad += recv[rd[j] + k] != 1000000 * j + 1000 * rank + k;
        bad += recv[rd[j] + rc[j]] != -1 || recv[rd[j] + rc[j] + 1] != -1;
    }
    CHECK_EQ(bad, 0);
    /* In place: the counts are symmetric here ((r + j) % 3 both ways), so
     * recvbuf's block j goes to j and j's block for us replaces it. */
    for (int j = 0; j < size; j++)
        for (int k = 0; k < rc[j]; k++)
            recv[rd[j] + k] = 1000000 * rank + 1000 * j + k;
    CHECK_EQ(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv, rc, rd, MPI_INT,
                           MPI_COMM_WORLD), MPI_SUCCESS);
    bad = 0;
    for (int j = 0; j < size; j++)
        for (int k = 0; k < rc[j]; k++)
            bad += recv[rd[j] + k] != 1000000 * j + 1000 * rank + k;
    CHECK_EQ(bad, 0);
    free(sc);
    free(send);
    free(recv);
}

/* Gatherv and Scatterv past the plain cases: the root's own block in
 * place for Scatterv, a root given fewer elements than a process sends, a
 * send buffer reused as soon as Gatherv returns, a NULL buffer. */
static void test_collv_edges(void)
{
    int *counts = malloc(2 * (size_t)size * sizeof(int)), *displs = counts + size;
    int *all = malloc(3 * (size_t)size * sizeof(int)), got[2], bad = 0;

    /* Scatterv, the root's block left where it is (MPI_IN_PLACE as its
     * recvbuf): every other process gets its two ints. */
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < size; i++) {
            counts[i] = 2;
            displs[i] = 3 * i;
            all[3 * i] = 100 * i + root;
            all[3 * i + 1] = 100 * i + root + 1;
            all[3 * i + 2] = -5;
        }
        got[0] = got[1] = -1;
        CHECK_EQ(MPI_Scatterv(all, counts, displs, MPI_INT, rank == root ? MPI_IN_PLACE : got, 2,
                              MPI_INT, root, MPI_COMM_WORLD), MPI_SUCCESS);
        if (rank != root)
            bad += got[0] != 100 * rank + root || got[1] != 100 * rank + root + 1;
        else
            bad += all[3 * root] != 100 * root + root || all[3 * root + 2] != -5;
    }
    CHECK_EQ(bad, 0);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size > 1) {
        /* Every process but the root sends two ints where the root takes
         * one: the root's call reports the truncation (what a sender hears
         * MPI leaves open). */
        int root = size - 1, two[2] = {rank, rank}, rc, cls = -1;
        for (int i = 0; i < size; i++) {
            counts[i] = 1;
            displs[i] = i;
        }
        rc = MPI_Gatherv(two, rank == root ? 1 : 2, MPI_INT, all, counts, displs, MPI_INT, root,
                         MPI_COMM_WORLD);
        if (rank == root) {
            MPI_Error_class(rc, &cls);
            CHECK_EQ(cls, MPI_ERR_TRUNCATE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* A NULL recvbuf at the root with elements to receive is refused at
     * once, before anything moves (the others do not take part). NULL with
     * no element to receive is fine. */
    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        counts[0] = 1;
        displs[0] = 0;
        CHECK_EQ(MPI_Gatherv(got, 1, MPI_INT, NULL, counts, displs, MPI_INT, 0, MPI_COMM_SELF),
                 MPI_ERR_BUFFER);
        CHECK_EQ(MPI_Scatterv(NULL, counts, displs, MPI_INT, got, 1, MPI_INT, 0, MPI_COMM_SELF),
                 MPI_ERR_BUFFER);
        counts[0] = 0;
        CHECK_EQ(MPI_Gatherv(got, 0, MPI_INT, NULL, counts, displs, MPI_INT, 0, MPI_COMM_SELF),
                 MPI_SUCCESS);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    }
    /* MPI_IN_PLACE as recvbuf is the root's alone: refused at once
     * elsewhere, nothing received (rank 0, the root, does not take part). */
    if (rank != 0)
        CHECK_EQ(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0,
                              MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    if (size > 1) {
        /* MPI_Gatherv is blocking: when it returns, the send buffer is the
         * caller's again. Each process overwrites its own at once; the
         * root comes in late, so a send still in flight (rendezvous size)
         * would take the new contents. */
        enum { BIG = 50000 };
        int *mine = malloc(BIG * sizeof(int)), *recv = NULL;
        struct timespec late = {0, 300 * 1000 * 1000};
        for (int k = 0; k < BIG; k++)
            mine[k] = rank * BIG + k;
        for (int i = 0; i < size; i++) {
            counts[i] = BIG;
            displs[i] = i * BIG;
        }
        if (rank == 0) {
            recv = malloc((size_t)size * BIG * sizeof(int));
            nanosleep(&late, NULL);
        }
        CHECK_EQ(MPI_Gatherv(mine, BIG, MPI_INT, recv, counts, displs, MPI_INT, 0,
                             MPI_COMM_WORLD), MPI_SUCCESS);
        for (int k = 0; k < BIG; k++)
            mine[k] = -1;
        if (rank == 0) {
            bad = 0;
            for (int k = 0; k < size * BIG; k++)
                bad += recv[k] != k;
            CHECK_EQ(bad, 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        free(mine);
        free(recv);
    }
    free(counts);
    free(all);
}

/* MPI_Scatter from every root, its own block left in place: every other
 * process gets its block (a root that sent nothing would leave them
 * waiting until the stage's watchdog). */
static void test_scatter_roots(void)
{
    int *all = malloc(2 * (size_t)size * sizeof(int)), part[2], bad = 0;

    for (int root = 0; root < size; root++) {
        for (int i = 0; i < 2 * size; i++)
            all[i] = 1000 * root + i;
        part[0] = part[1] = -1;
        CHECK_EQ(MPI_Scatter(all, 2, MPI_INT, rank == root ? MPI_IN_PLACE : part, 2, MPI_INT,
                             root, MPI_COMM_WORLD), MPI_SUCCESS);
        if (rank != root)
            bad += part[0] != 1000 * root + 2 * rank || part[1] != 1000 * root + 2 * rank + 1;
        else
            bad += part[0] != -1 || all[2 * root] != 1000 * root + 2 * root;
    }
    CHECK_EQ(bad, 0);
    free(all);
}

/* MPI_Reduce from every root, in place at the root, with no receive
 * buffer elsewhere (MPI 3.1, 5.9.1: recvbuf is significant at the root
 * only); the root's buffer must end as the sum. */
static void test_reduce_roots(void)
{
    int bad = 0;

    for (int root = 0; root < size; root++) {
        int v[2] = {rank + 1, 10 * rank};
        CHECK_EQ(MPI_Reduce(rank == root ? MPI_IN_PLACE : v, rank == root ? v : NULL, 2, MPI_INT,
                            MPI_SUM, root, MPI_COMM_WORLD), MPI_SUCCESS);
        if (rank == root)
            bad += v[0] != size * (size + 1) / 2 || v[1] != 10 * size * (size - 1) / 2;
    }
    CHECK_EQ(bad, 0);
}

/* Blocking collectives' argument checks at their limits. */
static void test_coll_limits(void)
{
    MPI_Datatype empty;
    int x[2] = {7, 7}, commute;

    /* recvcount times the processes is the element count of the whole
     * buffer: INT32_MAX is allowed, here of an empty type on one process,
     * so nothing moves. */
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    CHECK_EQ(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x, INT32_MAX, empty,
                           MPI_COMM_SELF), MPI_SUCCESS);
    CHECK_EQ(MPI_Allgather(x, INT32_MAX, empty, x, INT32_MAX, empty, MPI_COMM_SELF),
             MPI_SUCCESS);
    CHECK(x[0] == 7 && x[1] == 7);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* One more than an int holds, over all processes' blocks: refused on
     * every process before anything moves. */
    if (size > 1)
        CHECK_EQ(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x, INT32_MAX / size + 1,
                               empty, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_Type_free(&empty);

    /* A root out of range is MPI_ERR_ROOT, found before anything moves. */
    CHECK_EQ(MPI_Scatter(x, 1, MPI_INT, x + 1, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Scatterv(x, x, x, MPI_INT, x + 1, 1, MPI_INT, size, MPI_COMM_WORLD),
             MPI_ERR_ROOT);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Every predefined operation commutes, the first and last of them
     * included. */
    const MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
                          MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        commute = -1;
        CHECK_EQ(MPI_Op_commutative(ops[i], &commute), MPI_SUCCESS);
        CHECK_EQ(commute, 1);
    }
}

/* MPI_Allgather, every block to every process at once: blocks of 40 KB
 * (rendezvous) and of one int, in place and not, the send side as ints
 * and the receive side as pairs of ints; block i is rank i's, and the
 * send buffer is left alone. */
static void test_allgather_blocks(void)
{
    enum { B = 10000 };
    int *mine = malloc(B * sizeof(int)), *all = malloc((size_t)size * B * sizeof(int));
    int bad = 0, one = 7 * rank, ones[64];
    MPI_Datatype pair;

    CHECK(mine != NULL && all != NULL && size <= 64);
    for (int k = 0; k < B; k++)
        mine[k] = rank * 100000 + k;
    memset(all, 0xff, (size_t)size * B * sizeof(int));
    MPI_Allgather(mine, B, MPI_INT, all, B, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int k = 0; k < B; k++)
            bad += all[(size_t)r * B + k] != r * 100000 + k;
    for (int k = 0; k < B; k++)
        bad += mine[k] != rank * 100000 + k;
    CHECK_EQ(bad, 0);
    /* In place, received as pairs: rank r's block is already at r. */
    memset(all, 0xff, (size_t)size * B * sizeof(int));
    memcpy(all + (size_t)rank * B, mine, B * sizeof(int));
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, B / 2, pair, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int k = 0; k < B; k++)
            bad += all[(size_t)r * B + k] != r * 100000 + k;
    CHECK_EQ(bad, 0);
    /* Not in place, ints sent and pairs received (this process's own
     * block too, copied from one type to the other). */
    memset(all, 0xff, (size_t)size * B * sizeof(int));
    MPI_Allgather(mine, B, MPI_INT, all, B / 2, pair, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int k = 0; k < B; k++)
            bad += all[(size_t)r * B + k] != r * 100000 + k;
    CHECK_EQ(bad, 0);
    MPI_Type_free(&pair);
    MPI_Allgather(&one, 1, MPI_INT, ones, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        bad += ones[r] != 7 * r;
    CHECK_EQ(bad, 0);
    free(mine);
    free(all);
}

/* A sum of the BLK long longs of each element of test_allreduce_long's
 * one-element type. */
static void sum_blk(void *in, void *io, int *len, MPI_Datatype *dt)
{
    long long *a = in, *b = io;
    int n;

    MPI_Type_size(*dt, &n);
    for (long i = 0; i < (long)*len * n / (long)sizeof(long long); i++)
        b[i] += a[i];
}

/* MPI_Allreduce of long data, which goes by halves (reduce-scatter, then
 * allgather) from 32 KiB, into the receive buffer itself where the type
 * lays elements out packed: an operation that does not commute, on an
 * element count no power of two divides, in place and not; sums of
 * doubles whose bits depend on the order of the additions, the same bits
 * at every process; a strided type (packed copies); one element per
 * process or fewer (by doubling); and the send buffer left as it was. */
static void test_allreduce_long(void)
{
    enum { E = 4099, D = 8191, V = 4096, BLK = 6144 };
    MPI_Op then, bsum;
    MPI_Datatype aff, big, vec;
    affine_t *in = malloc(E * sizeof(*in)), *out = malloc(E * sizeof(*out));
    double *din = malloc(D * sizeof(double)), *dout = malloc(D * sizeof(double));
    double *d0 = malloc(D * sizeof(double));
    long long *vin = malloc(3 * V * sizeof(long long)), *vout = malloc(3 * V * sizeof(long long));
    int bad = 0;

    CHECK(in != NULL && out != NULL && din != NULL && dout != NULL && d0 != NULL &&
          vin != NULL && vout != NULL);
    MPI_Op_create(affine_then, 0, &then);
    MPI_Type_contiguous(2, MPI_LONG_LONG, &aff);
    MPI_Type_commit(&aff);
    for (int k = 0; k < E; k++)
        in[k] = affine_of(rank, k);
    MPI_Allreduce(in, out, E, aff, then, MPI_COMM_WORLD);
    for (int k = 0; k < E; k++) {
        affine_t e = affine_fold(0, size, k), i = affine_of(rank, k);
        bad += out[k].a != e.a || out[k].b != e.b || in[k].a != i.a || in[k].b != i.b;
    }
    MPI_Allreduce(MPI_IN_PLACE, in, E, aff, then, MPI_COMM_WORLD);
    for (int k = 0; k < E; k++) {
        affine_t e = affine_fold(0, size, k);
        bad += in[k].a != e.a || in[k].b != e.b;
    }
    CHECK_EQ(bad, 0);

    /* Sums whose rounding depends on their order: every process has the
     * bits of rank 0's. */
    for (int k = 0; k < D; k++)
        din[k] = 1.0 / (3.0 + k + rank) + (rank % 2 ? 1e16 : 0.1);
    MPI_Allreduce(din, dout, D, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    memcpy(d0, dout, D * sizeof(double));
    MPI_Bcast(d0, D, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    CHECK_EQ(memcmp(d0, dout, D * sizeof(double)), 0);
    for (int k = 0; k < D; k++) {
        double e = 0;
        for (int r = 0; r < size; r++)
            e += 1.0 / (3.0 + k + r) + (r % 2 ? 1e16 : 0.1);
        double diff = dout[k] > e ? dout[k] - e : e - dout[k];
        bad += diff > 1e-14 * e + 4.0;
    }
    CHECK_EQ(bad, 0);

    /* Every other long long of 3 (a strided type, packed copies): the
     * gaps of the receive buffer stay as they were. */
    MPI_Type_vector(1, 1, 3, MPI_LONG_LONG, &vec);
    MPI_Type_create_resized(vec, 0, 3 * sizeof(long long), &big);
    MPI_Type_commit(&big);
    for (int k = 0; k < 3 * V; k++) {
        vin[k] = (long long)rank * 1000003 + k;
        vout[k] = -1;
    }
    MPI_Allreduce(vin, vout, V, big, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 3 * V; k++)
        bad += vout[k] != (k % 3 ? -1 : (long long)size * (size - 1) / 2 * 1000003 +
                                               (long long)size * k);
    CHECK_EQ(bad, 0);
    MPI_Type_free(&big);
    MPI_Type_free(&vec);

    /* 48 KiB in one element, or two: fewer elements than processes (at
     * 3 and 4) go by doubling, two at 2 processes by halves of one. */
    MPI_Type_contiguous(BLK, MPI_LONG_LONG, &big);
    MPI_Type_commit(&big);
    MPI_Op_create(sum_blk, 1, &bsum);
    for (int count = 1; count <= 2; count++) {
        for (int k = 0; k < count * BLK; k++) {
            vin[k] = (long long)rank * 7 + k;
            vout[k] = -1;
        }
        MPI_Allreduce(vin, vout, count, big, bsum, MPI_COMM_WORLD);
        for (int k = 0; k < count * BLK; k++)
            bad += vout[k] != (long long)size * (size - 1) / 2 * 7 + (long long)size * k;
        CHECK_EQ(bad, 0);
    }
    MPI_Op_free(&bsum);
    MPI_Type_free(&big);
    MPI_Type_free(&aff);
    MPI_Op_free(&then);
    free(in);
    free(out);
    free(din);
    free(dout);
    free(d0);
    free(vin);
    free(vout);
}

static void test_coll(void)
{
    enum { N = 5 };
    MPI_Op then, vsum;
    int commute = -1;

    test_collv_gather(1);
    test_collv_gather(3000); /* blocks of 12 KB and more: rendezvous */
    test_collv_alltoall(1);
    test_collv_alltoall(2000);
    /* Stages of their own: one that hangs is named (mpi_check.h). */
    MPI_STAGE(test_scatter_roots);
    MPI_STAGE(test_reduce_roots);
    MPI_STAGE(test_collv_edges);
    MPI_STAGE(test_coll_limits);
    MPI_STAGE(test_allreduce_long);
    MPI_STAGE(test_allgather_blocks);
    mpi_stage("coll");

    MPI_Op_create(affine_then, 0, &then);
    MPI_Op_commutative(then, &commute);
    CHECK_EQ(commute, 0);
    MPI_Op_commutative(MPI_SUM, &commute);
    CHECK_EQ(commute, 1);
    {
        /* A pair of long longs per element, as a contiguous type. */
        MPI_Datatype aff;
        affine_t in[N], out[N];
        int bad = 0;
        MPI_Type_contiguous(2, MPI_LONG_LONG, &aff);
        MPI_Type_commit(&aff);
        for (int k = 0; k < N; k++)
            in[k] = affine_of(rank, k);
        for (int root = 0; root < size; root++) {
            memset(out, 0, sizeof(out));
            MPI_Reduce(in, out, N, aff, then, root, MPI_COMM_WORLD);
            if (rank == root)
                for (int k = 0; k < N; k++) {
                    affine_t e = affine_fold(0, size, k);
                    bad += out[k].a != e.a || out[k].b != e.b;
                }
        }
        memset(out, 0, sizeof(out));
        MPI_Allreduce(in, out, N, aff, then, MPI_COMM_WORLD);
        for (int k = 0; k < N; k++) {
            affine_t e = affine_fold(0, size, k);
            bad += out[k].a != e.a || out[k].b != e.b;
        }
        /* Scan: ranks 0..r; exscan: 0..r-1 (rank 0's left as it was). */
        MPI_Scan(in, out, N, aff, then, MPI_COMM_WORLD);
        for (int k = 0; k < N; k++) {
            affine_t e = affine_fold(0, rank + 1, k);
            bad += out[k].a != e.a || out[k].b != e.b;
        }
        for (int k = 0; k < N; k++)
            out[k] = affine_mark;
        MPI_Exscan(in, out, N, aff, then, MPI_COMM_WORLD);
        for (int k = 0; k < N; k++) {
            affine_t e = rank == 0 ? affine_mark : affine_fold(0, rank, k);
            bad += out[k].a != e.a || out[k].b != e.b;
        }
        /* In place scan. */
        memcpy(out, in, sizeof(in));
        MPI_Scan(MPI_IN_PLACE, out, N, aff, then, MPI_COMM_WORLD);
        for (int k = 0; k < N; k++) {
            affine_t e = affine_fold(0, rank + 1, k);
            bad += out[k].a != e.a || out[k].b != e.b;
        }
        CHECK_EQ(bad, 0);
        MPI_Type_free(&aff);
    }
    {
        /* Predefined sums: scan, exscan, reduce_scatter(_block). */
        int v = rank + 1, s = -1, n = 3, bad = 0;
        MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK_EQ(s, (rank + 1) * (rank + 2) / 2);
        s = -1;
        MPI_Exscan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank > 0)
            CHECK_EQ(s, rank * (rank + 1) / 2);
        /* Element k of every process's input is rank + k: the sum over
         * processes is size k + size (size - 1) / 2. */
        int *in = malloc((size_t)size * (size_t)n * 4 * sizeof(int));
        int *out = malloc((size_t)size * (size_t)n * 4 * sizeof(int));
        int *counts = malloc((size_t)size * sizeof(int)), total = 0, at = 0;
        for (int k = 0; k < size * n; k++)
            in[k] = rank + k;
        MPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < n; k++)
            bad += out[k] != size * (rank * n + k) + size * (size - 1) / 2;
        memcpy(out, in, (size_t)size * (size_t)n * sizeof(int));
        MPI_Reduce_scatter_block(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < n; k++)
            bad += out[k] != size * (rank * n + k) + size * (size - 1) / 2;
        for (int i = 0; i < size; i++) {
            counts[i] = i + 1;
            total += counts[i];
            if (i < rank)
                at += counts[i];
        }
        for (int k = 0; k < total; k++)
            in[k] = rank + k;
        MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < counts[rank]; k++)
            bad += out[k] != size * (at + k) + size * (size - 1) / 2;
        /* The non-commuting op: block r of the rank-ordered composition. */
        {
            MPI_Datatype aff;
            affine_t *ain = malloc((size_t)total * sizeof(affine_t));
            affine_t *aout = malloc((size_t)total * sizeof(affine_t));
            MPI_Type_contiguous(2, MPI_LONG_LONG, &aff);
            MPI_Type_commit(&aff);
            for (int k = 0; k < total; k++)
                ain[k] = affine_of(rank, k);
            MPI_Reduce_scatter(ain, aout, counts, aff, then, MPI_COMM_WORLD);
            for (int k = 0; k < counts[rank]; k++) {
                affine_t e = affine_fold(0, size, at + k);
                bad += aout[k].a != e.a || aout[k].b != e.b;
            }
            MPI_Type_free(&aff);
            free(ain);
            free(aout);
        }
        CHECK_EQ(bad, 0);
        free(in);
        free(out);
        free(counts);
    }
    {
        /* A user sum on a type with gaps: the function sees the layout,
         * and the gap ints of the result keep their value. */
        MPI_Datatype vec;
        int in[3 * N], out[3 * N], bad = 0;
        MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Op_create(sum_vec, 1, &vsum);
        for (int i = 0; i < 3 * N; i++) {
            in[i] = rank * 10 + i;
            out[i] = -9;
        }
        /* extent 3 ints: element i at 3 i, data at 3 i and 3 i + 2 */
        MPI_Allreduce(in, out, N, vec, vsum, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++) {
            bad += out[3 * i] != 10 * size * (size - 1) / 2 + size * 3 * i;
            bad += out[3 * i + 1] != -9;
            bad += out[3 * i + 2] != 10 * size * (size - 1) / 2 + size * (3 * i + 2);
        }
        CHECK_EQ(bad, 0);
        /* MPI_Reduce_local with the same: out = in op out, gaps kept. */
        for (int i = 0; i < 3 * N; i++)
            out[i] = 100 * i;
        CHECK_EQ(MPI_Reduce_local(in, out, N, vec, vsum), MPI_SUCCESS);
        for (int i = 0; i < 3 * N; i++)
            CHECK_EQ(out[i], i % 3 == 1 ? 100 * i : 100 * i + rank * 10 + i);
        MPI_Op_free(&vsum);
        CHECK(vsum == MPI_OP_NULL);
        MPI_Type_free(&vec);
    }
    {
        /* MPI_Reduce_local is inoutbuf = inbuf op inoutbuf: the order shows
         * with an operation that does not commute. */
        long long in[2] = {3, 7}, io[2] = {5, -1};
        double d[2] = {1.5, -2}, e[2] = {0.5, 4};
        MPI_Datatype aff;
        MPI_Type_contiguous(2, MPI_LONG_LONG, &aff);
        MPI_Type_commit(&aff);
        /* (3x + 7, then 5x - 1) = 15x + 34; the other order gives 15x + 4. */
        CHECK_EQ(MPI_Reduce_local(in, io, 1, aff, then), MPI_SUCCESS);
        CHECK(io[0] == 15 && io[1] == 34);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Reduce_local(in, io, -1, aff, then), MPI_ERR_COUNT);
        CHECK_EQ(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_BXOR), MPI_ERR_OP);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        CHECK_EQ(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_MAX), MPI_SUCCESS);
        CHECK(e[0] == 1.5 && e[1] == 4);
        MPI_Type_free(&aff);
    }
    {
        /* Two long longs that start one past the type's address, reduced
         * in the buffers themselves (MPI_Reduce_local, MPI_Allreduce in
         * and out of place): the cells before and after stay as they were. */
        long long a[4] = {-5, 3, 4, -6}, b[4] = {-7, 10, 20, -8}, c[4] = {-9, -9, -9, -9};
        int two = 2;
        MPI_Aint at = sizeof(long long);
        MPI_Datatype late;
        MPI_Type_create_hindexed(1, &two, &at, MPI_LONG_LONG, &late);
        MPI_Type_commit(&late);
        CHECK_EQ(MPI_Reduce_local(a, b, 1, late, MPI_SUM), MPI_SUCCESS);
        CHECK(b[0] == -7 && b[1] == 13 && b[2] == 24 && b[3] == -8);
        CHECK_EQ(MPI_Reduce_local(a, b, 0, late, MPI_SUM), MPI_SUCCESS);
        CHECK(b[1] == 13 && b[2] == 24);
        CHECK_EQ(MPI_Allreduce(a, c, 1, late, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK(c[0] == -9 && c[1] == 3 * size && c[2] == 4 * size && c[3] == -9);
        CHECK(a[0] == -5 && a[1] == 3 && a[2] == 4 && a[3] == -6);
        CHECK_EQ(MPI_Allreduce(MPI_IN_PLACE, a, 1, late, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK(a[0] == -5 && a[1] == 3 && a[2] == 4 && a[3] == -6);
        MPI_Type_free(&late);
    }

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int v = 1, s, neg[64], z[64];
        MPI_Op freed = then, sum = MPI_SUM;
        for (int i = 0; i < 64; i++) {
            neg[i] = i == size - 1 ? -1 : 1;
            z[i] = 0;
        }
        MPI_Op_free(&freed);
        CHECK_EQ(MPI_Allreduce(&v, &s, 1, MPI_INT, then, MPI_COMM_WORLD), MPI_ERR_OP);
        CHECK_EQ(MPI_Scan(&v, &s, 1, MPI_INT, 0x10000077, MPI_COMM_WORLD), MPI_ERR_OP);
        CHECK_EQ(MPI_Op_free(&sum), MPI_ERR_OP);
        CHECK_EQ(MPI_Op_free(&freed), MPI_ERR_OP);
        CHECK_EQ(MPI_Op_create(NULL, 1, &freed), MPI_ERR_ARG);
        CHECK_EQ(MPI_Exscan(&v, &s, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
        CHECK_EQ(MPI_Allgatherv(&v, 1, MPI_INT, &s, neg, z, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Allgatherv(&v, 1, MPI_INT, &s, NULL, z, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_ARG);
        CHECK_EQ(MPI_Gatherv(&v, 1, MPI_INT, &s, z, z, MPI_INT, size, MPI_COMM_WORLD),
                 MPI_ERR_ROOT);
        CHECK_EQ(MPI_Reduce_scatter_block(&v, &s, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Alltoallv(&v, z, NULL, MPI_INT, &s, z, z, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_ARG);
        /* MPI_IN_PLACE is the root's alone: refused at once elsewhere,
         * nothing sent (rank 0, the root, does not take part). */
        if (rank != 0)
            CHECK_EQ(MPI_Gatherv(MPI_IN_PLACE, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0,
                                 MPI_COMM_WORLD), MPI_ERR_BUFFER);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* --- Testsome, request status, groups, names, split by node, info, memory ---------------- */
static void test_misc_requests(void)
{
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int out[3] = {-1, -1, -1}, v[3] = {10 + rank, 11 + rank, 12 + rank}, n, idx[3], seen = 0;
    MPI_Request rq[3], sq[3];
    MPI_Status st[3];
    double t0;

    for (int k = 0; k < 3; k++)
        MPI_Irecv(&out[k], 1, MPI_INT, from, k, MPI_COMM_WORLD, &rq[k]);
    /* Tags 0 and 2 now, tag 1 after a barrier: Testsome sees 0 and 2 only. */
    MPI_Isend(&v[0], 1, MPI_INT, to, 0, MPI_COMM_WORLD, &sq[0]);
    MPI_Isend(&v[2], 1, MPI_INT, to, 2, MPI_COMM_WORLD, &sq[2]);
    t0 = MPI_Wtime();
    while (seen < 2 && MPI_Wtime() - t0 < 20) {
        CHECK_EQ(MPI_Testsome(3, rq, &n, idx, st), MPI_SUCCESS);
        for (int i = 0; i < n; i++) {
            CHECK(idx[i] == 0 || idx[i] == 2);
            CHECK_EQ(st[i].MPI_TAG, idx[i]);
            CHECK_EQ(st[i].MPI_SOURCE, from);
            CHECK(rq[idx[i]] == MPI_REQUEST_NULL);
        }
        seen += n;
    }
    CHECK_EQ(seen, 2);
    CHECK(rq[1] != MPI_REQUEST_NULL);
    CHECK(out[0] == 10 + from && out[2] == 12 + from && out[1] == -1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(&v[1], 1, MPI_INT, to, 1, MPI_COMM_WORLD, &sq[1]);
    /* Request_get_status: flag, status, and the request left alone. */
    {
        int flag = 0;
        MPI_Status s;
        t0 = MPI_Wtime();
        while (!flag && MPI_Wtime() - t0 < 20)
            MPI_Request_get_status(rq[1], &flag, &s);
        CHECK_EQ(flag, 1);
        CHECK_EQ(s.MPI_TAG, 1);
        CHECK(rq[1] != MPI_REQUEST_NULL);
        CHECK_EQ(MPI_Testsome(3, rq, &n, idx, st), MPI_SUCCESS);
        CHECK(n == 1 && idx[0] == 1 && out[1] == 11 + from);
        /* Nothing active left. */
        CHECK_EQ(MPI_Testsome(3, rq, &n, idx, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        CHECK_EQ(n, MPI_UNDEFINED);
        MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &s);
        CHECK_EQ(flag, 1);
    }
    MPI_Waitall(3, sq, MPI_STATUSES_IGNORE);
    /* Status setters. */
    {
        MPI_Status s;
        int c, flag;
        MPI_Status_set_elements(&s, MPI_INT, 3);
        MPI_Get_count(&s, MPI_INT, &c);
        CHECK_EQ(c, 3);
        MPI_Get_elements(&s, MPI_INT, &c);
        CHECK_EQ(c, 3);
        MPI_Status_set_cancelled(&s, 1);
        MPI_Test_cancelled(&s, &flag);
        CHECK_EQ(flag, 1);
        /* No elements is a count too. */
        CHECK_EQ(MPI_Status_set_elements(&s, MPI_INT, 0), MPI_SUCCESS);
        MPI_Get_count(&s, MPI_INT, &c);
        CHECK_EQ(c, 0);
        /* A datatype of no bytes counts 0, whatever the status holds (no
         * division by its size). */
        {
            MPI_Datatype empty;
            CHECK_EQ(MPI_Type_contiguous(0, MPI_INT, &empty), MPI_SUCCESS);
            CHECK_EQ(MPI_Type_commit(&empty), MPI_SUCCESS);
            MPI_Status_set_elements(&s, MPI_INT, 3);
            c = -1;
            CHECK_EQ(MPI_Get_count(&s, empty, &c), MPI_SUCCESS);
            CHECK_EQ(c, 0);
            MPI_Type_free(&empty);
        }
    }
    /* A peer one past the last rank, refused by the calls' first test as
     * by their general checks (MPI_ERR_RANK, no request), and a replace of
     * more than 2^31 - 1 bytes (MPI_ERR_COUNT, the buffer untouched). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        MPI_Request q = MPI_REQUEST_NULL;
        int x = 7;
        CHECK_EQ(MPI_Isend(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &q), MPI_ERR_RANK);
        CHECK(q == MPI_REQUEST_NULL);
        CHECK_EQ(MPI_Irecv(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &q), MPI_ERR_RANK);
        CHECK(q == MPI_REQUEST_NULL);
        CHECK_EQ(MPI_Sendrecv_replace(&x, 1 << 30, MPI_INT, rank, 0, rank, 0, MPI_COMM_WORLD,
                                      MPI_STATUS_IGNORE),
                 MPI_ERR_COUNT);
        CHECK_EQ(x, 7);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_misc_groups(void)
{
    MPI_Group world, excl, rev, even, odd, u, in, diff;
    int res, n, *r = malloc((size_t)size * sizeof(int)), *t = malloc((size_t)size * sizeof(int));
    int range[1][3];

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int i = 0; i < size; i++)
        r[i] = i;
    /* excl rank 0: ranks 1.. in order. */
    int zero = 0;
    MPI_Group_excl(world, 1, &zero, &excl);
    MPI_Group_size(excl, &n);
    CHECK_EQ(n, size - 1);
    MPI_Group_translate_ranks(excl, size - 1, r, world, t);
    for (int i = 0; i < size - 1; i++)
        CHECK_EQ(t[i], i + 1);
    /* The ranks backwards: similar to world (identical for one). */
    range[0][0] = size - 1;
    range[0][1] = 0;
    range[0][2] = -1;
    MPI_Group_range_incl(world, 1, range, &rev);
    MPI_Group_translate_ranks(rev, size, r, world, t);
    for (int i = 0; i < size; i++)
        CHECK_EQ(t[i], size - 1 - i);
    MPI_Group_compare(world, rev, &res);
    CHECK_EQ(res, size == 1 ? MPI_IDENT : MPI_SIMILAR);
    /* Evens by range_incl, odds by range_excl of the evens' range. */
    range[0][0] = 0;
    range[0][1] = size - 1;
    range[0][2] = 2;
    MPI_Group_range_incl(world, 1, range, &even);
    MPI_Group_range_excl(world, 1, range, &odd);
    MPI_Group_size(even, &n);
    CHECK_EQ(n, (size + 1) / 2);
    MPI_Group_size(odd, &n);
    CHECK_EQ(n, size / 2);
    /* union: evens then odds; intersection with world: the evens;
     * difference world - evens: the odds. */
    MPI_Group_union(even, odd, &u);
    MPI_Group_translate_ranks(u, size, r, world, t);
    for (int i = 0; i < size; i++)
        CHECK_EQ(t[i], i < (size + 1) / 2 ? 2 * i : 2 * (i - (size + 1) / 2) + 1);
    MPI_Group_compare(u, world, &res);
    CHECK_EQ(res, size <= 2 ? MPI_IDENT : MPI_SIMILAR);
    MPI_Group_intersection(world, even, &in);
    MPI_Group_compare(in, even, &res);
    CHECK_EQ(res, MPI_IDENT);
    MPI_Group_difference(world, even, &diff);
    MPI_Group_compare(diff, odd, &res);
    CHECK_EQ(res, MPI_IDENT);
    MPI_Group_compare(even, odd, &res);
    CHECK_EQ(res, size == 2 ? MPI_UNEQUAL : MPI_UNEQUAL);
    MPI_Group_free(&diff);
    MPI_Group_free(&in);
    MPI_Group_free(&u);
    MPI_Group_free(&odd);
    MPI_Group_free(&even);
    MPI_Group_free(&rev);
    MPI_Group_free(&excl);
    /* Errors: a rank twice, a stride of 0. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int twice[2] = {0, 0};
        range[0][2] = 0;
        CHECK_EQ(MPI_Group_excl(world, 2, twice, &excl), size == 1 ? MPI_ERR_ARG : MPI_ERR_RANK);
        CHECK_EQ(MPI_Group_range_incl(world, 1, range, &excl), MPI_ERR_ARG);
        CHECK_EQ(MPI_Group_union(world, MPI_GROUP_NULL, &u), MPI_ERR_GROUP);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Group_free(&world);
    free(r);
    free(t);
}

/* MPI_Group_range_incl's ranges at their edges (MPI 3.1, 6.3.2: a range
 * runs from first toward last by a stride that is not 0; first may equal
 * last, in either direction): one rank each, the last rank alone, a
 * negative stride that stops short of last, and ranges that are not. */
static void test_misc_ranges(void)
{
    MPI_Group world, g;
    int n = -1, r = -1, range[2][3];

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    /* (size-1, size-1, 1) and (0, 0, -1): one rank, the last, then rank 0. */
    range[0][0] = range[0][1] = size - 1;
    range[0][2] = 1;
    range[1][0] = range[1][1] = 0;
    range[1][2] = -1;
    CHECK_EQ(MPI_Group_range_incl(world, size > 1 ? 2 : 1, range, &g), MPI_SUCCESS);
    MPI_Group_size(g, &n);
    CHECK_EQ(n, size > 1 ? 2 : 1);
    MPI_Group_rank(g, &r);
    CHECK_EQ(r, rank == size - 1 ? 0 : rank == 0 ? 1 : MPI_UNDEFINED);
    MPI_Group_free(&g);
    /* (size-1, 0, -2): size-1, size-3, ... down to 0 or 1. */
    range[0][0] = size - 1;
    range[0][1] = 0;
    range[0][2] = -2;
    CHECK_EQ(MPI_Group_range_incl(world, 1, range, &g), MPI_SUCCESS);
    MPI_Group_size(g, &n);
    CHECK_EQ(n, (size + 1) / 2);
    MPI_Group_rank(g, &r);
    CHECK_EQ(r, (size - 1 - rank) % 2 == 0 ? (size - 1 - rank) / 2 : MPI_UNDEFINED);
    MPI_Group_free(&g);
    /* No range at all: the empty group. */
    CHECK_EQ(MPI_Group_range_incl(world, 0, range, &g), MPI_SUCCESS);
    CHECK(g == MPI_GROUP_EMPTY);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* A stride moving away from last, a rank past the group: refused. */
    if (size > 1) {
        range[0][0] = 0;
        range[0][1] = 1;
        range[0][2] = -1;
        CHECK_EQ(MPI_Group_range_incl(world, 1, range, &g), MPI_ERR_ARG);
        range[0][0] = 1;
        range[0][1] = 0;
        range[0][2] = 1;
        CHECK_EQ(MPI_Group_range_incl(world, 1, range, &g), MPI_ERR_ARG);
    }
    range[0][0] = 0;
    range[0][1] = size;
    range[0][2] = 1;
    CHECK_EQ(MPI_Group_range_incl(world, 1, range, &g), MPI_ERR_ARG);
    /* Refused by incl and excl alike, newgroup left as it was: a stride
     * of 0, a first rank below 0, ranges naming more ranks than the group
     * (MPI_ERR_RANK: some twice), and one rank in two ranges. */
    for (int excl = 0; excl < 2; excl++) {
        int (*fn)(MPI_Group, int, int[][3], MPI_Group *) =
            excl ? MPI_Group_range_excl : MPI_Group_range_incl;
        g = MPI_GROUP_EMPTY;
        range[0][0] = range[0][1] = 0;
        range[0][2] = 0;
        CHECK_EQ(fn(world, 1, range, &g), MPI_ERR_ARG);
        range[0][0] = -1;
        range[0][2] = 1;
        CHECK_EQ(fn(world, 1, range, &g), MPI_ERR_ARG);
        range[0][0] = 0;
        range[0][1] = size - 1;
        range[1][0] = range[1][1] = size - 1;
        range[1][2] = 1;
        CHECK_EQ(fn(world, 2, range, &g), MPI_ERR_RANK);
        if (size > 1) {
            range[0][1] = 0;
            range[1][0] = range[1][1] = 0;
            CHECK_EQ(fn(world, 2, range, &g), MPI_ERR_RANK);
        }
        CHECK(g == MPI_GROUP_EMPTY);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Group_free(&world);
}

/* MPI_Comm_compare of two communicators of the same size (MPI 3.1, 6.4.1):
 * the same members in another order are MPI_SIMILAR, other members
 * MPI_UNEQUAL. And MPI_Comm_create refuses a group that is not a subset
 * of the communicator's (MPI 3.1, 6.4.2), here MPI_COMM_SELF's. */
static void test_misc_comms(void)
{
    MPI_Comm lo = MPI_COMM_NULL, lo_rev = MPI_COMM_NULL, other = MPI_COMM_NULL, c;
    MPI_Group world;
    int res = -1;

    /* lo: world ranks 0 and 1; lo_rev: the same, reversed; other: 0 and 2. */
    if (size >= 2) {
        MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &lo);
        MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, -rank, &lo_rev);
        if (lo != MPI_COMM_NULL) {
            MPI_Comm_compare(lo, lo_rev, &res);
            CHECK_EQ(res, MPI_SIMILAR);
        }
    }
    if (size >= 3) {
        MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || rank == 2 ? 0 : MPI_UNDEFINED, rank, &other);
        if (rank == 0) {
            res = -1;
            MPI_Comm_compare(lo, other, &res);
            CHECK_EQ(res, MPI_UNEQUAL);
            MPI_Comm_compare(other, lo_rev, &res);
            CHECK_EQ(res, MPI_UNEQUAL);
        }
    }
    if (other != MPI_COMM_NULL)
        MPI_Comm_free(&other);
    if (lo_rev != MPI_COMM_NULL)
        MPI_Comm_free(&lo_rev);
    if (lo != MPI_COMM_NULL)
        MPI_Comm_free(&lo);
    if (size >= 2) {
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        c = MPI_COMM_NULL;
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Comm_create(MPI_COMM_SELF, world, &c), MPI_ERR_GROUP);
        CHECK(c == MPI_COMM_NULL);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_Group_free(&world);
    }
}

/* Attribute callbacks: the copy gives value + 1, the delete counts. */
static int attr_deletes, attr_copies;

static int attr_copy_plus(MPI_Comm oldcomm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)key;
    (void)extra;
    attr_copies++;
    *(intptr_t *)out = (intptr_t)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int attr_delete_count(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm;
    (void)key;
    (void)val;
    attr_deletes += *(int *)extra;
    return MPI_SUCCESS;
}

static void test_misc_attrs(void)
{
    int key, nocopy, flag, one = 1, *tag_ub;
    intptr_t v;
    MPI_Comm d, dd;

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag == 1 && *tag_ub >= 32767);
    CHECK_EQ(MPI_Comm_create_keyval(attr_copy_plus, attr_delete_count, &key, &one), MPI_SUCCESS);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, attr_delete_count, &nocopy, &one);
    CHECK(key != nocopy && key != MPI_KEYVAL_INVALID);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_get_attr(d, key, &v, &flag);
    CHECK_EQ(flag, 0);
    MPI_Comm_set_attr(d, key, (void *)(intptr_t)41);
    MPI_Comm_set_attr(d, nocopy, (void *)(intptr_t)7);
    MPI_Comm_get_attr(d, key, &v, &flag);
    CHECK(flag == 1 && v == 41);
    /* dup: the copy callback runs for key only. */
    MPI_Comm_dup(d, &dd);
    CHECK_EQ(attr_copies, 1);
    MPI_Comm_get_attr(dd, key, &v, &flag);
    CHECK(flag == 1 && v == 42);
    MPI_Comm_get_attr(dd, nocopy, &v, &flag);
    CHECK_EQ(flag, 0);
    /* Freeing dd deletes its one attribute. */
    MPI_Comm_free(&dd);
    CHECK_EQ(attr_deletes, 1);
    /* Setting again deletes the old value; delete_attr deletes. */
    MPI_Comm_set_attr(d, key, (void *)(intptr_t)5);
    CHECK_EQ(attr_deletes, 2);
    MPI_Comm_delete_attr(d, key);
    CHECK_EQ(attr_deletes, 3);
    MPI_Comm_get_attr(d, key, &v, &flag);
    CHECK_EQ(flag, 0);
    /* A freed keyval's values live on until their communicator goes. */
    MPI_Comm_free_keyval(&nocopy);
    CHECK_EQ(nocopy, MPI_KEYVAL_INVALID);
    MPI_Comm_free(&d);
    CHECK_EQ(attr_deletes, 4);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, 9999, &v, &flag), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&key);
    CHECK_EQ(MPI_Comm_free_keyval(&key), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, 16, NULL), MPI_ERR_KEYVAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A handler that records what it was called with. */
static int errh_calls, errh_code;
static MPI_Comm errh_comm;

static void errh_record(MPI_Comm *comm, int *code, ...)
{
    errh_calls++;
    errh_code = *code;
    errh_comm = *comm;
}

static void test_misc_errh(void)
{
    MPI_Errhandler eh, got, keep;
    MPI_Comm d, e;
    int v = 0;

    CHECK_EQ(MPI_Comm_create_errhandler(errh_record, &eh), MPI_SUCCESS);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, eh);
    MPI_Comm_get_errhandler(d, &got);
    CHECK(got == eh);
    /* A failing call runs it with the class and the communicator, then
     * returns the class. */
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, size, 0, d), MPI_ERR_RANK);
    CHECK(errh_calls == 1 && errh_code == MPI_ERR_RANK && errh_comm == d);
    CHECK_EQ(MPI_Comm_call_errhandler(d, MPI_ERR_OTHER), MPI_SUCCESS);
    CHECK(errh_calls == 2 && errh_code == MPI_ERR_OTHER);
    /* Freed: d keeps it, no communicator can take it again. */
    keep = eh;
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, -5, d), MPI_ERR_TAG);
    CHECK(errh_calls == 3 && errh_code == MPI_ERR_TAG);
    /* A request that ends in error (truncated) inside MPI_Waitsome and
     * MPI_Testsome: its communicator's handler, with MPI_ERR_IN_STATUS. */
    for (int some = 0; some < 2; some++) {
        int two[2] = {1, 2}, one = 0, n = 0, idx[1], rc;
        MPI_Request rq;
        MPI_Status st[1];

        MPI_Irecv(&one, 1, MPI_INT, rank, 9, d, &rq);
        MPI_Send(two, 2, MPI_INT, rank, 9, d);
        if (some == 0)
            rc = MPI_Waitsome(1, &rq, &n, idx, st);
        else
            do
                rc = MPI_Testsome(1, &rq, &n, idx, st);
            while (rc == MPI_SUCCESS && n == 0);
        CHECK_EQ(rc, MPI_ERR_IN_STATUS);
        CHECK(errh_calls == 4 + some && errh_code == MPI_ERR_IN_STATUS && errh_comm == d);
        CHECK(n == 1 && idx[0] == 0 && st[0].MPI_ERROR == MPI_ERR_TRUNCATE);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &e);
    MPI_Comm_set_errhandler(e, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Comm_set_errhandler(e, keep), MPI_ERR_ARG);
    CHECK_EQ(errh_calls, 5); /* e's handler is MPI_ERRORS_RETURN */
    MPI_Comm_free(&e);
    MPI_Comm_free(&d);
}

static void test_misc(void)
{
    test_misc_requests();
    test_misc_groups();
    test_misc_ranges();
    test_misc_comms();
    test_misc_attrs();
    test_misc_errh();
    {
        /* Names: the predefined ones, one set, a duplicate's none. */
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Comm d, dd;
        MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
        CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
        int inter = -1;
        MPI_Comm_test_inter(MPI_COMM_WORLD, &inter);
        CHECK_EQ(inter, 0);
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_set_name(d, "halo rows");
        MPI_Comm_get_name(d, name, &len);
        CHECK(strcmp(name, "halo rows") == 0 && len == 9);
        MPI_Comm_dup(d, &dd);
        MPI_Comm_get_name(dd, name, &len);
        CHECK_EQ(len, 0);
        MPI_Comm_free(&dd);
        MPI_Comm_free(&d);
    }
    {
        /* One node: the shared communicator is every process, by key. */
        MPI_Comm node;
        int r, s;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL,
                            &node);
        MPI_Comm_size(node, &s);
        MPI_Comm_rank(node, &r);
        CHECK_EQ(s, size);
        CHECK_EQ(r, size - 1 - rank);
        MPI_Comm_free(&node);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node);
        CHECK(node == MPI_COMM_NULL);
    }
    {
        /* Info: set, get (cut to valuelen), order of keys, delete, dup. */
        MPI_Info info, copy;
        char v[16], k[MPI_MAX_INFO_KEY + 1];
        int flag, n, len;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alpha", "one");
        MPI_Info_set(info, "beta", "a longer value");
        MPI_Info_set(info, "gamma", "3");
        MPI_Info_set(info, "alpha", "uno"); /* replaces, keeps its place */
        MPI_Info_get_nkeys(info, &n);
        CHECK_EQ(n, 3);
        MPI_Info_get_nthkey(info, 0, k);
        CHECK(strcmp(k, "alpha") == 0);
        MPI_Info_get_nthkey(info, 2, k);
        CHECK(strcmp(k, "gamma") == 0);
        MPI_Info_get(info, "alpha", sizeof(v) - 1, v, &flag);
        CHECK(flag == 1 && strcmp(v, "uno") == 0);
        MPI_Info_get(info, "beta", 4, v, &flag);
        CHECK(flag == 1 && strcmp(v, "a lo") == 0);
        MPI_Info_get_valuelen(info, "beta", &len, &flag);
        CHECK(flag == 1 && len == 14);
        MPI_Info_get(info, "delta", sizeof(v) - 1, v, &flag);
        CHECK_EQ(flag, 0);
        MPI_Info_dup(info, &copy);
        MPI_Info_delete(info, "beta");
        MPI_Info_get_nkeys(info, &n);
        CHECK_EQ(n, 2);
        MPI_Info_get_nkeys(copy, &n);
        CHECK_EQ(n, 3);
        MPI_Info_get_nthkey(info, 1, k);
        CHECK(strcmp(k, "gamma") == 0);
        MPI_Info_free(&copy);
        CHECK(copy == MPI_INFO_NULL);
        MPI_Info_get_nkeys(MPI_INFO_ENV, &n);
        CHECK_EQ(n, 0);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Info_delete(info, "beta"), MPI_ERR_ARG);
        CHECK_EQ(MPI_Info_set(info, "", "x"), MPI_ERR_ARG);
        CHECK_EQ(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_ARG);
        CHECK_EQ(MPI_Info_free(&copy), MPI_ERR_ARG);
        CHECK_EQ(MPI_Info_free(NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Info_delete(info, NULL), MPI_ERR_ARG);
        {
            /* MPI_INFO_ENV is the library's: not freed, still readable. */
            MPI_Info env = MPI_INFO_ENV;
            CHECK_EQ(MPI_Info_free(&env), MPI_ERR_ARG);
            CHECK(env == MPI_INFO_ENV);
            CHECK_EQ(MPI_Info_get_nkeys(MPI_INFO_ENV, &n), MPI_SUCCESS);
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Info_free(&info);
    }
    {
        /* Error classes, codes and strings the program adds, and MPI-1's
         * handler calls: a handler set with MPI_Errhandler_set receives an
         * added code from MPI_Comm_call_errhandler. */
        int cls, code, argcode, out = -1, len = -1, flag = 0, *last;
        char str[MPI_MAX_ERROR_STRING], big[MPI_MAX_ERROR_STRING + 8];
        MPI_Errhandler eh, got;
        MPI_Comm d;
        CHECK_EQ(MPI_Add_error_class(&cls), MPI_SUCCESS);
        CHECK(cls > MPI_ERR_LASTCODE);
        CHECK_EQ(MPI_Add_error_code(cls, &code), MPI_SUCCESS);
        CHECK_EQ(MPI_Add_error_code(MPI_ERR_ARG, &argcode), MPI_SUCCESS);
        CHECK(code != cls && argcode != code && argcode > MPI_ERR_LASTCODE);
        MPI_Error_class(cls, &out);
        CHECK_EQ(out, cls);
        MPI_Error_class(code, &out);
        CHECK_EQ(out, cls);
        MPI_Error_class(argcode, &out);
        CHECK_EQ(out, MPI_ERR_ARG);
        MPI_Error_string(code, str, &len);
        CHECK(len == 0 && str[0] == '\0');
        CHECK_EQ(MPI_Add_error_string(code, "the program's own error"), MPI_SUCCESS);
        MPI_Error_string(code, str, &len);
        CHECK(strcmp(str, "the program's own error") == 0 && len == 23);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
        CHECK(flag == 1 && *last >= argcode);
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        CHECK_EQ(MPI_Errhandler_create(errh_record, &eh), MPI_SUCCESS);
        CHECK_EQ(MPI_Errhandler_set(d, eh), MPI_SUCCESS);
        CHECK_EQ(MPI_Errhandler_get(d, &got), MPI_SUCCESS);
        CHECK_EQ(got, eh);
        errh_calls = 0;
        CHECK_EQ(MPI_Comm_call_errhandler(d, code), MPI_SUCCESS);
        CHECK(errh_calls == 1 && errh_code == code && errh_comm == d);
        /* Errors, returned: a code that is not a class, a predefined
         * code's string, a string too long. */
        MPI_Errhandler_set(d, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Add_error_code(code, &out), MPI_ERR_ARG);
        CHECK_EQ(MPI_Add_error_code(MPI_ERR_LASTCODE + 100000, &out), MPI_ERR_ARG);
        CHECK_EQ(MPI_Add_error_string(MPI_ERR_ARG, "no"), MPI_ERR_ARG);
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        CHECK_EQ(MPI_Add_error_string(cls, big), MPI_ERR_ARG);
        CHECK_EQ(MPI_Add_error_class(NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Add_error_code(cls, NULL), MPI_ERR_ARG);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Errhandler_free(&eh);
        MPI_Comm_free(&d);
    }
    {
        /* A communicator's hints: MPI 4.0's four assertions are kept
         * (get_info says each, true or false; other keys are not used,
         * so not returned), copied by dup, set by the dups with info, and
         * the wildcard ones refuse a wildcard receive or probe. */
        MPI_Info info, used;
        MPI_Comm d, di, dd, sp;
        MPI_Request req;
        MPI_Status st;
        int n, r, res, flag, v = rank, got = -1, next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        char val[MPI_MAX_INFO_VAL + 1];
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
        MPI_Info_set(info, "mpi_assert_no_any_source", "TRUE");
        MPI_Info_set(info, "mpi_assert_exact_length", "maybe");
        MPI_Info_set(info, "no_such_hint", "1");
        CHECK_EQ(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d), MPI_SUCCESS);
        MPI_Comm_compare(MPI_COMM_WORLD, d, &res);
        CHECK_EQ(res, MPI_CONGRUENT);
        CHECK_EQ(MPI_Comm_get_info(d, &used), MPI_SUCCESS);
        CHECK(used != MPI_INFO_NULL && used != info);
        MPI_Info_get_nkeys(used, &n);
        CHECK_EQ(n, 4);
        flag = 0;
        MPI_Info_get(used, "mpi_assert_no_any_source", MPI_MAX_INFO_VAL, val, &flag);
        CHECK(flag && strcmp(val, "true") == 0);
        MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, val, &flag);
        CHECK(flag && strcmp(val, "true") == 0);
        MPI_Info_get(used, "mpi_assert_exact_length", MPI_MAX_INFO_VAL, val, &flag);
        CHECK(flag && strcmp(val, "false") == 0);
        MPI_Info_get(used, "no_such_hint", MPI_MAX_INFO_VAL, val, &flag);
        CHECK(!flag);
        MPI_Info_free(&used);
        /* Wildcards refused, exact receives served. */
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 3, d, &req), MPI_ERR_RANK);
        CHECK_EQ(MPI_Irecv(&got, 1, MPI_INT, prev, MPI_ANY_TAG, d, &req), MPI_ERR_TAG);
        CHECK_EQ(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 3, d, &st), MPI_ERR_RANK);
        CHECK_EQ(MPI_Iprobe(MPI_ANY_SOURCE, 3, d, &flag, &st), MPI_ERR_RANK);
        CHECK_EQ(MPI_Iprobe(prev, MPI_ANY_TAG, d, &flag, &st), MPI_ERR_TAG);
        CHECK_EQ(MPI_Recv_init(&got, 1, MPI_INT, prev, MPI_ANY_TAG, d, &req), MPI_ERR_TAG);
        CHECK_EQ(MPI_Sendrecv(&v, 1, MPI_INT, next, 3, &got, 1, MPI_INT, prev, 3, d, &st),
                 MPI_SUCCESS);
        CHECK_EQ(got, prev);
        /* A dup keeps them; a split has none; set_info changes what it names. */
        CHECK_EQ(MPI_Comm_dup(d, &dd), MPI_SUCCESS);
        MPI_Comm_set_errhandler(dd, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Iprobe(MPI_ANY_SOURCE, 3, dd, &flag, &st), MPI_ERR_RANK);
        CHECK_EQ(MPI_Comm_split(d, 0, rank, &sp), MPI_SUCCESS);
        CHECK_EQ(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, sp, &flag, &st), MPI_SUCCESS);
        MPI_Comm_free(&sp);
        MPI_Info_set(info, "mpi_assert_no_any_source", "false");
        MPI_Info_delete(info, "mpi_assert_no_any_tag");
        CHECK_EQ(MPI_Comm_set_info(dd, info), MPI_SUCCESS);
        CHECK_EQ(MPI_Iprobe(prev, MPI_ANY_TAG, dd, &flag, &st), MPI_ERR_TAG);
        CHECK_EQ(MPI_Sendrecv(&v, 1, MPI_INT, next, 4, &got, 1, MPI_INT, MPI_ANY_SOURCE, 4, dd,
                              &st), MPI_SUCCESS);
        CHECK(got == prev && st.MPI_SOURCE == prev);
        MPI_Comm_free(&dd);
        /* idup copies them, idup_with_info takes info's (here none). */
        CHECK_EQ(MPI_Comm_idup(d, &di, &req), MPI_SUCCESS);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Comm_set_errhandler(di, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Iprobe(prev, MPI_ANY_TAG, di, &flag, &st), MPI_ERR_TAG);
        MPI_Comm_free(&di);
        CHECK_EQ(MPI_Comm_idup_with_info(d, MPI_INFO_NULL, &di, &req), MPI_SUCCESS);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Comm_rank(di, &r);
        CHECK_EQ(r, rank);
        r = rank;
        MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_INT, MPI_SUM, di);
        CHECK_EQ(r, size * (size - 1) / 2);
        CHECK_EQ(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, di, &flag, &st), MPI_SUCCESS);
        MPI_Comm_free(&di);
        CHECK_EQ(MPI_Comm_set_info(d, MPI_INFO_NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Comm_get_info(d, NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Comm_dup_with_info(d, (MPI_Info)0x12345, &di), MPI_ERR_ARG);
        CHECK_EQ(MPI_Comm_idup_with_info(d, (MPI_Info)0x12345, &di, &req), MPI_ERR_ARG);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Comm_get_info(MPI_COMM_NULL, &used), MPI_ERR_COMM);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_free(&d);
        MPI_Info_free(&info);
    }
    {
        /* Memory from MPI_Alloc_mem carries a rendezvous message. */
        enum { BYTES = 1 << 20 };
        unsigned char *s, *r;
        int bad = 0;
        CHECK_EQ(MPI_Alloc_mem(BYTES, MPI_INFO_NULL, &s), MPI_SUCCESS);
        CHECK_EQ(MPI_Alloc_mem(BYTES, MPI_INFO_NULL, &r), MPI_SUCCESS);
        for (int i = 0; i < BYTES; i++)
            s[i] = (unsigned char)(i * 7 + rank);
        MPI_Sendrecv(s, BYTES, MPI_BYTE, (rank + 1) % size, 50, r, BYTES, MPI_BYTE,
                     (rank - 1 + size) % size, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < BYTES; i++)
            bad += r[i] != (unsigned char)(i * 7 + (rank - 1 + size) % size);
        CHECK_EQ(bad, 0);
        MPI_Free_mem(s);
        MPI_Free_mem(r);
        CHECK_EQ(MPI_Pcontrol(1), MPI_SUCCESS);
    }
}

/* --- The runner ------------------------------------------------------------------------ */
static const mpi_named_test_t tests[] = {
    {"topo", test_topo},
    {"graph", test_graph},
    {"nbr", test_nbr},
    {"dtype", test_dtype},
    {"coll", test_coll},
    {"misc", test_misc},
};

int main(int argc, char **argv)
{
    return mpi_run_named("mpi_more", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
