/* Intercommunicators, MPI_Comm_create_group and the rest MPICH's test
 * harness needs (complex types, MPI-1's hvector and hindexed, MPI_BOTTOM,
 * empty request arrays given as NULL), through
 * onicrun, at any number of processes (1 checks what needs no second group). The world is
 * split into a left half (ranks 0 to size/2 - 1) and a right half, joined
 * by MPI_Intercomm_create; every expectation is computed from the ranks. */
#include <complex.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/mem.h"
#include "mpi_check.h"

static int half;  /* the left group's size */

/* The world rank of rank i of the left (left = 1) or right group. */
static int world_of(int left, int i)
{
    return left ? i : half + i;
}

/* Every process sends its world rank to every remote rank (tag: its local
 * rank) and receives one from each, named and by MPI_ANY_SOURCE;
 * remote_world[j] is what remote rank j must send. */
static void inter_exchange(MPI_Comm ic, const int *remote_world)
{
    int lrank, lsize, rsize, me = rank;

    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    int *in = calloc((size_t)rsize, sizeof(int));
    MPI_Request *rq = calloc((size_t)rsize * 2, sizeof(MPI_Request));
    MPI_Status *st = calloc((size_t)rsize * 2, sizeof(MPI_Status));
    for (int j = 0; j < rsize; j++) {
        in[j] = -1;
        MPI_Irecv(&in[j], 1, MPI_INT, j, j, ic, &rq[j]);
        MPI_Isend(&me, 1, MPI_INT, j, lrank, ic, &rq[rsize + j]);
    }
    CHECK_EQ(MPI_Waitall(2 * rsize, rq, st), MPI_SUCCESS);
    for (int j = 0; j < rsize; j++) {
        CHECK_EQ(in[j], remote_world[j]);
        CHECK_EQ(st[j].MPI_SOURCE, j);
        CHECK_EQ(st[j].MPI_TAG, j);
    }
    /* Remote rank 0 hears from every rank of this side by MPI_ANY_SOURCE. */
    MPI_Send(&me, 1, MPI_INT, 0, 99, ic);
    if (lrank == 0) {
        int seen = 0;
        for (int j = 0; j < rsize; j++) {
            MPI_Status s;
            int v = -1;
            CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 99, ic, &s), MPI_SUCCESS);
            CHECK(s.MPI_SOURCE >= 0 && s.MPI_SOURCE < rsize);
            if (s.MPI_SOURCE >= 0 && s.MPI_SOURCE < rsize) {
                CHECK_EQ(v, remote_world[s.MPI_SOURCE]);
                seen |= 1 << s.MPI_SOURCE;
            }
        }
        CHECK_EQ(seen, (1 << rsize) - 1);
    }
    free(in);
    free(rq);
    free(st);
}

/* Two communicators over the same processes have contexts of their own:
 * the message on a waits while b's, sent after it with the same tag to
 * the same remote rank 0, is received first. Local rank 0 of each side. */
static void contexts_apart(MPI_Comm a, MPI_Comm b)
{
    int one = 1, two = 2, x = 0, y = 0;

    MPI_Send(&one, 1, MPI_INT, 0, 5, a);
    MPI_Send(&two, 1, MPI_INT, 0, 5, b);
    MPI_Recv(&y, 1, MPI_INT, 0, 5, b, MPI_STATUS_IGNORE);
    MPI_Recv(&x, 1, MPI_INT, 0, 5, a, MPI_STATUS_IGNORE);
    CHECK_EQ(x, 1);
    CHECK_EQ(y, 2);
}

static void test_intercomm(void)
{
    int left = rank < half, lrank, lsize, rsize, flag, cmp;
    MPI_Comm local, ic, dup, merged, split, sub;
    MPI_Group g, wg;
    int remote_world[64];

    if (size < 2)
        return;
    MPI_Comm_split(MPI_COMM_WORLD, left, rank, &local);
    CHECK_EQ(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? half : 0, 7, &ic),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_test_inter(ic, &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    MPI_Comm_test_inter(local, &flag);
    CHECK_EQ(flag, 0);
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    CHECK_EQ(MPI_Comm_remote_size(ic, &rsize), MPI_SUCCESS);
    CHECK_EQ(lrank, left ? rank : rank - half);
    CHECK_EQ(lsize, left ? half : size - half);
    CHECK_EQ(rsize, left ? size - half : half);
    for (int j = 0; j < rsize; j++)
        remote_world[j] = world_of(!left, j);

    /* The remote group, translated to the world. */
    CHECK_EQ(MPI_Comm_remote_group(ic, &g), MPI_SUCCESS);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int j = 0; j < rsize; j++) {
        int w = -1;
        MPI_Group_translate_ranks(g, 1, &j, wg, &w);
        CHECK_EQ(w, remote_world[j]);
    }
    MPI_Group_free(&g);

    inter_exchange(ic, remote_world);

    /* No topology on an intercommunicator (MPI 3.1, 7.1), so no mapping
     * onto one and no neighbourhood collective either: MPI_ERR_COMM,
     * nothing made or set. */
    {
        int dims[1] = {1}, periods[1] = {0}, one[1] = {0}, v = rank, w = -1, nr = -7;
        MPI_Comm t = MPI_COMM_NULL;
        MPI_Request q = MPI_REQUEST_NULL;
        CHECK_EQ(MPI_Cart_create(ic, 1, dims, periods, 0, &t), MPI_ERR_COMM);
        CHECK(t == MPI_COMM_NULL);
        CHECK_EQ(MPI_Graph_create(ic, 1, dims, one, 0, &t), MPI_ERR_COMM);
        CHECK(t == MPI_COMM_NULL);
        CHECK_EQ(MPI_Cart_map(ic, 1, dims, periods, &nr), MPI_ERR_COMM);
        CHECK_EQ(MPI_Graph_map(ic, 1, dims, one, &nr), MPI_ERR_COMM);
        CHECK_EQ(nr, -7);
        /* The same arguments on an intracommunicator are fine. */
        CHECK_EQ(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &nr), MPI_SUCCESS);
        CHECK_EQ(nr, rank == 0 ? 0 : MPI_UNDEFINED);
        CHECK_EQ(MPI_Graph_map(MPI_COMM_WORLD, 1, dims, one, &nr), MPI_SUCCESS);
        CHECK_EQ(nr, rank == 0 ? 0 : MPI_UNDEFINED);
        CHECK_EQ(MPI_Dist_graph_create_adjacent(ic, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &t),
                 MPI_ERR_COMM);
        CHECK(t == MPI_COMM_NULL);
        CHECK_EQ(MPI_Neighbor_allgather(&v, 1, MPI_INT, &w, 1, MPI_INT, ic), MPI_ERR_COMM);
        CHECK_EQ(MPI_Ineighbor_alltoall(&v, 1, MPI_INT, &w, 1, MPI_INT, ic, &q), MPI_ERR_COMM);
        CHECK(q == MPI_REQUEST_NULL);
        CHECK_EQ(w, -1);
    }

    /* A dup's traffic is its own. */
    CHECK_EQ(MPI_Comm_dup(ic, &dup), MPI_SUCCESS);
    MPI_Comm_test_inter(dup, &flag);
    CHECK_EQ(flag, 1);
    if (lrank == 0)
        contexts_apart(ic, dup);
    inter_exchange(dup, remote_world);
    MPI_Comm_free(&dup);

    /* MPI_Comm_idup of the intercommunicator: two outstanding at once with
     * a blocking dup between, each its own context; an intercommunicator
     * over the same groups. */
    {
        MPI_Comm i1 = MPI_COMM_NULL, i2 = MPI_COMM_NULL;
        MPI_Request q[2];
        int n = -1;
        CHECK_EQ(MPI_Comm_idup(ic, &i1, &q[0]), MPI_SUCCESS);
        CHECK_EQ(MPI_Comm_idup_with_info(ic, MPI_INFO_NULL, &i2, &q[1]), MPI_SUCCESS);
        CHECK_EQ(MPI_Comm_dup(ic, &dup), MPI_SUCCESS);
        CHECK_EQ(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        CHECK(i1 != MPI_COMM_NULL && i2 != MPI_COMM_NULL);
        if (i1 != MPI_COMM_NULL && i2 != MPI_COMM_NULL) {
            MPI_Comm_test_inter(i1, &flag);
            CHECK_EQ(flag, 1);
            MPI_Comm_remote_size(i2, &n);
            CHECK_EQ(n, rsize);
            MPI_Comm_rank(i1, &n);
            CHECK_EQ(n, lrank);
            if (lrank == 0)
                contexts_apart(i1, i2);
            inter_exchange(i1, remote_world);
            inter_exchange(i2, remote_world);
            MPI_Comm_free(&i1);
            MPI_Comm_free(&i2);
        }
        inter_exchange(dup, remote_world);
        MPI_Comm_free(&dup);
    }

    /* Merged, left low: the world's order; left high: the right group first. */
    CHECK_EQ(MPI_Intercomm_merge(ic, !left, &merged), MPI_SUCCESS);
    MPI_Comm_rank(merged, &flag);
    CHECK_EQ(flag, rank);
    MPI_Comm_compare(merged, MPI_COMM_WORLD, &cmp);
    CHECK_EQ(cmp, MPI_CONGRUENT);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK_EQ(sum, size * (size - 1) / 2);
    MPI_Comm_free(&merged);
    CHECK_EQ(MPI_Intercomm_merge(ic, left, &merged), MPI_SUCCESS);
    MPI_Comm_rank(merged, &flag);
    CHECK_EQ(flag, left ? (size - half) + rank : rank - half);
    MPI_Comm_free(&merged);

    /* Split by parity of the local rank, keys reversing the order: each
     * color's locals with the same color's remotes, highest rank first. */
    int color = lrank % 2;
    CHECK_EQ(MPI_Comm_split(ic, color, -lrank, &split), MPI_SUCCESS);
    {
        int rn = 0, ln = 0, rw[64], mine = -1;
        for (int j = rsize - 1; j >= 0; j--)
            if (j % 2 == color)
                rw[rn++] = remote_world[j];
        for (int j = lsize - 1; j >= 0; j--)
            if (j % 2 == color) {
                if (j == lrank)
                    mine = ln;
                ln++;
            }
        if (rn == 0) {
            CHECK(split == MPI_COMM_NULL);
        } else {
            CHECK(split != MPI_COMM_NULL);
            if (split != MPI_COMM_NULL) {
                int r2, s2, rs2;
                MPI_Comm_rank(split, &r2);
                MPI_Comm_size(split, &s2);
                MPI_Comm_remote_size(split, &rs2);
                CHECK_EQ(r2, mine);
                CHECK_EQ(s2, ln);
                CHECK_EQ(rs2, rn);
                inter_exchange(split, rw);
                MPI_Comm_free(&split);
            }
        }
    }

    /* MPI_Comm_create without each side's local rank 0. */
    {
        MPI_Group lg, without0;
        int zero = 0;
        MPI_Comm_group(ic, &lg);
        MPI_Group_excl(lg, 1, &zero, &without0);
        CHECK_EQ(MPI_Comm_create(ic, without0, &sub), MPI_SUCCESS);
        if (lrank == 0 || lsize == 1 || rsize == 1) {
            CHECK(sub == MPI_COMM_NULL);
        } else {
            CHECK(sub != MPI_COMM_NULL);
            if (sub != MPI_COMM_NULL) {
                int rs2, r2;
                MPI_Comm_rank(sub, &r2);
                MPI_Comm_remote_size(sub, &rs2);
                CHECK_EQ(r2, lrank - 1);
                CHECK_EQ(rs2, rsize - 1);
                inter_exchange(sub, remote_world + 1);
                MPI_Comm_free(&sub);
            }
        }
        MPI_Group_free(&without0);
        MPI_Group_free(&lg);
    }

    /* Non-blocking collectives run on it (tested in mpi_intercoll); a
     * root past the remote group is refused and makes no request. */
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    {
        MPI_Request rq = MPI_REQUEST_NULL;
        CHECK_EQ(MPI_Ibcast(&flag, 1, MPI_INT, rsize, ic, &rq), MPI_ERR_ROOT);
        CHECK(rq == MPI_REQUEST_NULL);
        CHECK_EQ(MPI_Ibarrier(ic, &rq), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    /* Ranks name the remote group: one past its end is refused. */
    CHECK_EQ(MPI_Send(&flag, 1, MPI_INT, rsize, 0, ic), MPI_ERR_RANK);

    MPI_Group_free(&wg);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

static void test_create_group(void)
{
    MPI_Group wg, evens;
    MPI_Comm c;
    int n = (size + 1) / 2, *ranks = calloc((size_t)n, sizeof(int));

    for (int i = 0; i < n; i++)
        ranks[i] = 2 * i;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, n, ranks, &evens);
    if (rank % 2 == 0) {
        CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 3, &c), MPI_SUCCESS);
        CHECK(c != MPI_COMM_NULL);
        if (c != MPI_COMM_NULL) {
            int r, s, sum = 0;
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &s);
            CHECK_EQ(r, rank / 2);
            CHECK_EQ(s, n);
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
            CHECK_EQ(sum, n * (n - 1)); /* 0 + 2 + ... + 2(n-1) */
            MPI_Comm_free(&c);
        }
    } else {
        /* Only members call it; a process outside is told so. */
        CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 3, &c), MPI_ERR_GROUP);
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&wg);
    free(ranks);
}

/* The members of MPI_Comm_create_group agree over the parent's collective
 * context, numbered by their ranks in the group, so a member's message can
 * carry the same bits as another process's message of a collective on the
 * parent: here world rank 1's part of an MPI_Allreduce and world rank 2
 * (rank 1 among the evens) its part of the agreement, both to rank 0. Rank
 * 0 first lets rank 1's arrive and has a probe pull every unexpected
 * header out of Portals: each must still go to the receive of its sender,
 * or the agreement takes rank 1's and the MPI_Allreduce waits for ever. */
static void test_create_group_pulled(void)
{
    MPI_Group wg, evens;
    MPI_Comm c = MPI_COMM_NULL;
    int n = (size + 1) / 2, *ranks = calloc((size_t)n, sizeof(int)), one = 1, all = 0;

    if (size < 3) {
        free(ranks);
        return;
    }
    for (int i = 0; i < n; i++)
        ranks[i] = 2 * i;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, n, ranks, &evens);
    if (rank % 2 == 0) {
        if (rank == 0) {
            int flag = 1;
            struct timespec pause = {0, 50 * 1000 * 1000};
            nanosleep(&pause, NULL); /* rank 1's part arrives meanwhile */
            CHECK_EQ(MPI_Iprobe(MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
            CHECK_EQ(flag, 0);
        }
        CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &c), MPI_SUCCESS);
        if (c != MPI_COMM_NULL) {
            int s = 0;
            MPI_Comm_size(c, &s);
            CHECK_EQ(s, n);
            MPI_Comm_free(&c);
        }
    }
    CHECK_EQ(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(all, size);
    MPI_Group_free(&evens);
    MPI_Group_free(&wg);
    free(ranks);
}

/* Complex types are moved as their C types; MPI_Type_hvector and
 * MPI_Type_hindexed build what their create_ forms build. */
static void test_compat(void)
{
    double _Complex z[3], back[3];
    MPI_Datatype hv, hi, chv;
    int sz, blens[2] = {1, 2};
    MPI_Aint lb, ext, disp[2] = {0, 3 * (MPI_Aint)sizeof(double)};

    MPI_Type_size(MPI_C_DOUBLE_COMPLEX, &sz);
    CHECK_EQ(sz, sizeof(double _Complex));
    MPI_Type_size(MPI_C_COMPLEX, &sz);
    CHECK_EQ(sz, sizeof(float _Complex));
    MPI_Type_size(MPI_C_LONG_DOUBLE_COMPLEX, &sz);
    CHECK_EQ(sz, sizeof(long double _Complex));
    for (int i = 0; i < 3; i++)
        z[i] = (rank + 1) * (i + 1) + 0.5 * i * _Complex_I;
    /* A ring: each rank's three values go to the next. */
    MPI_Sendrecv(z, 3, MPI_C_DOUBLE_COMPLEX, (rank + 1) % size, 11, back, 3,
                 MPI_C_DOUBLE_COMPLEX, (rank + size - 1) % size, 11, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int from = (rank + size - 1) % size;
    for (int i = 0; i < 3; i++)
        CHECK(back[i] == (from + 1) * (i + 1) + 0.5 * i * _Complex_I);
    /* A struct of a char and a double complex is padded as C pads it. */
    {
        struct cz { char c; double _Complex z; };
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {offsetof(struct cz, c), offsetof(struct cz, z)};
        MPI_Datatype ty[2] = {MPI_CHAR, MPI_C_DOUBLE_COMPLEX}, st;
        MPI_Aint slb, sext;
        MPI_Type_create_struct(2, bl, d, ty, &st);
        MPI_Type_get_extent(st, &slb, &sext);
        CHECK_EQ(sext, sizeof(struct cz));
        MPI_Type_free(&st);
    }
    /* They sum (and multiply); a comparison is refused, not wrong. */
    CHECK_EQ(MPI_Allreduce(z, back, 3, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD),
             MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        CHECK(back[i] == (i + 1) * size * (size + 1) / 2 + 0.5 * i * size * _Complex_I);
    CHECK_EQ(MPI_Allreduce(z, back, 3, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD),
             MPI_ERR_OP);

    CHECK_EQ(MPI_Type_hvector(2, 3, 5 * (MPI_Aint)sizeof(int), MPI_INT, &hv), MPI_SUCCESS);
    MPI_Type_create_hvector(2, 3, 5 * (MPI_Aint)sizeof(int), MPI_INT, &chv);
    MPI_Type_get_extent(hv, &lb, &ext);
    CHECK_EQ(ext, 8 * sizeof(int)); /* 5 + 3 ints */
    MPI_Type_size(hv, &sz);
    CHECK_EQ(sz, 6 * sizeof(int));
    {
        int ni, na, nd, comb;
        MPI_Type_get_envelope(hv, &ni, &na, &nd, &comb);
        CHECK_EQ(comb, MPI_COMBINER_HVECTOR);
    }
    CHECK_EQ(MPI_Type_hindexed(2, blens, disp, MPI_DOUBLE, &hi), MPI_SUCCESS);
    MPI_Type_get_extent(hi, &lb, &ext);
    CHECK_EQ(ext, 5 * sizeof(double)); /* blocks at 0 and 3, the second of 2 */
    MPI_Type_size(hi, &sz);
    CHECK_EQ(sz, 3 * sizeof(double));
    CHECK_EQ(MPI_Type_hvector(-1, 1, 0, MPI_INT, &chv), MPI_ERR_COUNT);
    MPI_Type_free(&hv);
    MPI_Type_free(&hi);
    MPI_Type_free(&chv);
}

/* MPI_BOTTOM with types of absolute addresses; the request arrays of
 * calls with no requests may be NULL (MPI leaves them unread). */
static void test_bottom_and_empty(void)
{
    int out[3] = {rank, rank + 10, rank + 20}, in[3] = {-1, -1, -1}, flag = 0, n = 7;
    MPI_Aint a_out, a_in;
    MPI_Datatype t_out, t_in;
    int three = 3;

    MPI_Get_address(out, &a_out);
    MPI_Get_address(in, &a_in);
    MPI_Type_create_struct(1, &three, &a_out, (MPI_Datatype[]){MPI_INT}, &t_out);
    MPI_Type_create_struct(1, &three, &a_in, (MPI_Datatype[]){MPI_INT}, &t_in);
    MPI_Type_commit(&t_out);
    MPI_Type_commit(&t_in);
    CHECK_EQ(MPI_Sendrecv(MPI_BOTTOM, 1, t_out, (rank + 1) % size, 12, MPI_BOTTOM, 1, t_in,
                          (rank + size - 1) % size, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    int from = (rank + size - 1) % size;
    CHECK(in[0] == from && in[1] == from + 10 && in[2] == from + 20);
    MPI_Type_free(&t_out);
    MPI_Type_free(&t_in);
    /* NULL with a type whose data starts at 0 is no MPI_BOTTOM use. */
    CHECK_EQ(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);

    CHECK_EQ(MPI_Waitall(0, NULL, NULL), MPI_SUCCESS);
    CHECK_EQ(MPI_Testall(0, NULL, &flag, NULL), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK_EQ(MPI_Waitsome(0, NULL, &n, NULL, NULL), MPI_SUCCESS);
    CHECK_EQ(n, MPI_UNDEFINED);
    n = 7;
    CHECK_EQ(MPI_Testsome(0, NULL, &n, NULL, NULL), MPI_SUCCESS);
    CHECK_EQ(n, MPI_UNDEFINED);
    /* With requests, the statuses are still needed. */
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK_EQ(MPI_Waitall(1, &r, NULL), MPI_ERR_ARG);
}

/* MPI_Comm_free of an intercommunicator gives back all it holds, its
 * hidden local side too: with onic's allocations counted, making and
 * freeing intercommunicators (after one that warms up what is kept, such
 * as the collectives' requests) leaves the count where it was. Freeing
 * never returns an error, so only the count sees a leak. */
/* An intercommunicator freed with a barrier and an idup on it still
 * under way: both complete, the idup's communicator works, and the last
 * to end releases the freed one (test_intercomm_freed counts it). */
static void inter_free_busy(MPI_Comm ic)
{
    MPI_Request q[2];
    MPI_Comm d = MPI_COMM_NULL;
    int flag = 0, rs = -1;

    CHECK_EQ(MPI_Ibarrier(ic, &q[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_idup(ic, &d, &q[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_free(&ic), MPI_SUCCESS);
    CHECK(ic == MPI_COMM_NULL);
    CHECK_EQ(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK(d != MPI_COMM_NULL);
    if (d == MPI_COMM_NULL)
        return;
    MPI_Comm_test_inter(d, &flag);
    CHECK_EQ(flag, 1);
    MPI_Comm_remote_size(d, &rs);
    CHECK_EQ(rs, rank < half ? size - half : half);
    CHECK_EQ(MPI_Barrier(d), MPI_SUCCESS);
    MPI_Comm_free(&d);
}

static void test_intercomm_freed(void)
{
    int left = rank < half;
    long net;
    MPI_Comm local, ic;

    if (size < 2)
        return;
    MPI_Comm_split(MPI_COMM_WORLD, left, rank, &local);
    CHECK_EQ(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? half : 0, 8, &ic),
             MPI_SUCCESS);
    inter_free_busy(ic);
    MPI_Barrier(MPI_COMM_WORLD);
    onic_mem_count_start();
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? half : 0, 8, &ic),
                 MPI_SUCCESS);
        if (i % 2 == 1) {
            inter_free_busy(ic);
            continue;
        }
        MPI_Comm_free(&ic);
        CHECK(ic == MPI_COMM_NULL);
    }
    net = onic_mem_count_net();
    if (net != 0)
        fprintf(stderr, "rank %d: 4 intercommunicators made and freed kept %ld allocations\n",
                rank, net);
    CHECK_EQ(net, 0);
    MPI_Comm_free(&local);
}

static void test_errors(void)
{
    MPI_Comm c;
    int v, flag, *p;

    CHECK_EQ(MPI_Comm_remote_size(MPI_COMM_WORLD, &v), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_remote_group(MPI_COMM_WORLD, NULL), MPI_ERR_COMM);
    CHECK_EQ(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c), MPI_ERR_COMM);
    CHECK_EQ(MPI_Intercomm_create(MPI_COMM_SELF, 1, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_RANK);
    CHECK_EQ(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 0, -1, &c), MPI_ERR_TAG);
    CHECK_EQ(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 0, 0, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &c), MPI_ERR_GROUP);
    CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, -2, &c), MPI_ERR_TAG);
    CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 0, &c), MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    /* The universe is the job: nothing can be spawned. */
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    if (flag)
        CHECK_EQ(*p, size);
}

/* `mpi_inter nbr_fatal`: a neighbourhood collective on an
 * intercommunicator under MPI_ERRORS_ARE_FATAL, so that ctest reads the
 * error's message (it names the call and why: no topology there). */
static int nbr_fatal(void)
{
    int left = rank < half, v = rank, w;
    MPI_Comm local, ic;

    MPI_Comm_split(MPI_COMM_WORLD, left, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? half : 0, 9, &ic);
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
    MPI_Neighbor_allgather(&v, 1, MPI_INT, &w, 1, MPI_INT, ic);
    fprintf(stderr, "mpi_inter nbr_fatal: rank %d: MPI_Neighbor_allgather returned\n", rank);
    MPI_Finalize();
    return 1;
}

int main(int argc, char **argv)
{
    int total = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    half = size / 2;
    if (size > 64) {
        if (rank == 0)
            fprintf(stderr, "mpi_inter: at most 64 processes\n");
        MPI_Finalize();
        return 2;
    }
    if (argc == 2 && strcmp(argv[1], "nbr_fatal") == 0 && size >= 2)
        return nbr_fatal();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    test_errors();
    test_create_group();
    test_create_group_pulled();
    test_compat();
    test_bottom_and_empty();
    test_intercomm();
    test_intercomm_freed();
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failed checks over %d processes\n", total ? "FAIL" : "PASS", total, size);
    MPI_Finalize();
    return total != 0;
}
