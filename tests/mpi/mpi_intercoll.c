/* Collectives on intercommunicators (MPI 3.1, 5.2.2) and MPI_Alltoallw,
 * through onicrun. The world is cut at `cut` into a left group (world
 * ranks 0 to cut - 1) and a right group, joined by MPI_Intercomm_create;
 * each collective runs with every process of each group as its root in
 * turn, at eager and rendezvous sizes, and every result is computed from
 * the world ranks of the processes that sent it. Run at 2 to 4 processes
 * with the cut at the middle and after rank 0 (uneven groups); at 1 only
 * MPI_Alltoallw on the world runs. Every test of a cut runs twice: with
 * the blocking collectives, then with their non-blocking forms, each
 * waited for at once; then non-blocking ones overlapped, started while the
 * other group is not in the collective yet, and their errors. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"

static MPI_Comm ic;
static int cut, left, lrank, lsize, rsize;
static int rworld[64]; /* the world rank of each remote rank */

/* 1: COLL calls the non-blocking form and waits for its request. */
static int nb;
static MPI_Request nbreq = MPI_REQUEST_NULL;

static int nb_wait(int rc)
{
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&nbreq, MPI_STATUS_IGNORE);
}

#define COLL(_blocking, _nonblocking, ...) \
    (nb ? nb_wait(MPI_##_nonblocking(__VA_ARGS__, &nbreq)) : MPI_##_blocking(__VA_ARGS__))

/* Rendezvous-sized messages: more than the 16 KiB eager limit. */
#define BIG 5000

static int val(int world, int i)
{
    return world * 1000 + i;
}

/* The roots of a rooted collective: every rank of the left group, then of
 * the right; `root` is what this process passes for root r of group g. */
static int root_arg(int g, int r)
{
    if (g == left)
        return r == lrank ? MPI_ROOT : MPI_PROC_NULL;
    return r;
}

static void test_barrier_bcast(void)
{
    int *buf = malloc(BIG * sizeof(int));

    CHECK_EQ(COLL(Barrier, Ibarrier, ic), MPI_SUCCESS);
    for (int n = 3; n <= BIG; n += BIG - 3)
        for (int g = 1; g >= 0; g--)
            for (int r = 0; r < (g == left ? lsize : rsize); r++) {
                int root = root_arg(g, r), from = g == left ? -1 : rworld[r];
                for (int i = 0; i < n; i++)
                    buf[i] = root == MPI_ROOT ? val(rank, i) : -1;
                CHECK_EQ(COLL(Bcast, Ibcast, buf, n, MPI_INT, root, ic), MPI_SUCCESS);
                for (int i = 0; i < n && g != left; i++)
                    if (buf[i] != val(from, i)) {
                        CHECK_EQ(buf[i], val(from, i));
                        break;
                    }
                /* The root's group keeps its buffers. */
                if (root == MPI_PROC_NULL)
                    CHECK_EQ(buf[0], -1);
            }
    free(buf);
}

/* Gather(v) and scatter(v): remote j has j + 1 elements in the v-forms
 * (n in the plain ones), at displacement j * (n + 2): gaps stay -1. */
static void test_rooted(void)
{
    int n = 3, stride = n + rsize + 2;
    int *buf = malloc((size_t)stride * 64 * sizeof(int)), mine[64 + 3];
    int counts[64], displs[64];

    for (int j = 0; j < rsize; j++) {
        counts[j] = j + 1;
        displs[j] = j * stride;
    }
    for (int v = 0; v < 2; v++)
        for (int g = 1; g >= 0; g--)
            for (int r = 0; r < (g == left ? lsize : rsize); r++) {
                int root = root_arg(g, r), mycount = v ? lrank + 1 : n;
                int rootw = g == left ? rank : rworld[r];

                /* Gather: each remote process sends its elements. */
                for (int i = 0; i < stride * rsize; i++)
                    buf[i] = -1;
                for (int i = 0; i < mycount; i++)
                    mine[i] = val(rank, i);
                if (v)
                    CHECK_EQ(COLL(Gatherv, Igatherv, mine, mycount, MPI_INT, buf, counts,
                                  displs, MPI_INT, root, ic), MPI_SUCCESS);
                else
                    CHECK_EQ(COLL(Gather, Igather, mine, n, MPI_INT, buf, n, MPI_INT, root, ic),
                             MPI_SUCCESS);
                if (root == MPI_ROOT)
                    for (int j = 0; j < rsize; j++) {
                        int at = v ? displs[j] : j * n, k = v ? counts[j] : n;
                        for (int i = 0; i < k; i++)
                            CHECK_EQ(buf[at + i], val(rworld[j], i));
                        if (v)
                            CHECK_EQ(buf[at + k], -1);
                    }

                /* Scatter: the root sends block j to remote j. */
                for (int j = 0; j < rsize * stride; j++)
                    buf[j] = root == MPI_ROOT ? val(rank, j) : -2;
                for (int i = 0; i < 64 + 3; i++)
                    mine[i] = -1;
                if (v)
                    CHECK_EQ(COLL(Scatterv, Iscatterv, buf, counts, displs, MPI_INT, mine,
                                  mycount, MPI_INT, root, ic), MPI_SUCCESS);
                else
                    CHECK_EQ(COLL(Scatter, Iscatter, buf, n, MPI_INT, mine, n, MPI_INT, root, ic),
                             MPI_SUCCESS);
                if (g != left) {
                    /* The root's stride: its remote group is this one. */
                    int at = v ? lrank * (n + lsize + 2) : lrank * n;
                    for (int i = 0; i < mycount; i++)
                        CHECK_EQ(mine[i], val(rootw, at + i));
                    CHECK_EQ(mine[mycount], -1);
                }
            }
    free(buf);
}

/* Allgather(v), alltoall(v, w): between every local and remote pair. */
static void test_all(void)
{
    int sbuf[64 * 8], rbuf[64 * 8 + 8], counts[64], displs[64], scounts[64], sdispls[64];
    int bdispls[64], rbdispls[64];
    MPI_Datatype types[64];

    /* Allgather: 2 elements from each remote process, in remote rank order. */
    for (int i = 0; i < 2; i++)
        sbuf[i] = val(rank, i);
    memset(rbuf, 0xff, sizeof(rbuf));
    CHECK_EQ(COLL(Allgather, Iallgather, sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ic), MPI_SUCCESS);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            CHECK_EQ(rbuf[2 * j + i], val(rworld[j], i));
    CHECK_EQ(rbuf[2 * rsize], -1);

    /* Allgatherv: remote j sends j + 1 elements, placed in reverse order. */
    for (int j = 0, at = 0; j < rsize; j++) {
        counts[j] = j + 1;
        at += j + 1;
        displs[j] = rsize * (rsize + 1) / 2 - at;
    }
    for (int i = 0; i < lrank + 1; i++)
        sbuf[i] = val(rank, i);
    memset(rbuf, 0xff, sizeof(rbuf));
    CHECK_EQ(COLL(Allgatherv, Iallgatherv, sbuf, lrank + 1, MPI_INT, rbuf, counts, displs,
                  MPI_INT, ic), MPI_SUCCESS);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < j + 1; i++)
            CHECK_EQ(rbuf[displs[j] + i], val(rworld[j], i));

    /* Alltoall: block j (2 elements) to remote j, which knows it by our rank. */
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            sbuf[2 * j + i] = val(rank, 10 * j + i);
    memset(rbuf, 0xff, sizeof(rbuf));
    CHECK_EQ(COLL(Alltoall, Ialltoall, sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ic), MPI_SUCCESS);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            CHECK_EQ(rbuf[2 * j + i], val(rworld[j], 10 * lrank + i));

    /* Alltoallv and alltoallw: local a sends remote b a + b + 1 elements. */
    for (int j = 0, at = 0, rat = 0; j < rsize; j++) {
        scounts[j] = lrank + j + 1;
        sdispls[j] = at;
        bdispls[j] = at * (int)sizeof(int);
        counts[j] = lrank + j + 1;
        displs[j] = rat + 1; /* a gap before each block */
        rbdispls[j] = displs[j] * (int)sizeof(int);
        types[j] = MPI_INT;
        for (int i = 0; i < scounts[j]; i++)
            sbuf[at + i] = val(rank, 10 * j + i);
        at += scounts[j];
        rat += counts[j] + 1;
    }
    for (int w = 0; w < 2; w++) {
        memset(rbuf, 0xff, sizeof(rbuf));
        if (w)
            CHECK_EQ(COLL(Alltoallw, Ialltoallw, sbuf, scounts, bdispls, types, rbuf, counts,
                          rbdispls, types, ic), MPI_SUCCESS);
        else
            CHECK_EQ(COLL(Alltoallv, Ialltoallv, sbuf, scounts, sdispls, MPI_INT, rbuf, counts,
                          displs, MPI_INT, ic), MPI_SUCCESS);
        for (int j = 0; j < rsize; j++) {
            CHECK_EQ(rbuf[displs[j] - 1], -1);
            for (int i = 0; i < counts[j]; i++)
                CHECK_EQ(rbuf[displs[j] + i], val(rworld[j], 10 * lrank + i));
        }
    }
}

/* (first, last) ranks of a run: a run followed by the next is one run,
 * anything else -1. Associative, does not commute: rank order shows. */
static void runs(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *a = in, *b = inout;

    (void)type;
    for (int i = 0; i < *len; i++, a += 2, b += 2) {
        int ok = a[0] >= 0 && b[0] >= 0 && a[1] + 1 == b[0];
        b[0] = ok ? a[0] : -1;
        b[1] = ok ? b[1] : -1;
    }
}

static void test_reductions(void)
{
    int sbuf[BIG], *rbuf = malloc((BIG + 1) * sizeof(int)), run[2] = {lrank, lrank}, res[2];
    int counts[64], total = 12, sum0 = 0;
    MPI_Op op;

    for (int j = 0; j < rsize; j++)
        sum0 += rworld[j];
    MPI_Op_create(runs, 0, &op);
    for (int i = 0; i < BIG; i++)
        sbuf[i] = rank + i;
    for (int n = 3; n <= BIG; n += BIG - 3)
        for (int g = 1; g >= 0; g--)
            for (int r = 0; r < (g == left ? lsize : rsize); r++) {
                int root = root_arg(g, r);
                rbuf[0] = rbuf[n] = -1;
                res[0] = res[1] = -5;
                CHECK_EQ(COLL(Reduce, Ireduce, sbuf, rbuf, n, MPI_INT, MPI_SUM, root, ic),
                         MPI_SUCCESS);
                CHECK_EQ(COLL(Reduce, Ireduce, run, res, 1, MPI_2INT, op, root, ic), MPI_SUCCESS);
                if (root == MPI_ROOT) {
                    for (int i = 0; i < n; i++)
                        if (rbuf[i] != sum0 + rsize * i) {
                            CHECK_EQ(rbuf[i], sum0 + rsize * i);
                            break;
                        }
                    CHECK_EQ(rbuf[n], -1);
                    CHECK_EQ(res[0], 0);
                    CHECK_EQ(res[1], rsize - 1);
                } else {
                    CHECK_EQ(rbuf[0], -1);
                    CHECK_EQ(res[0], -5);
                }
            }

    /* Allreduce: each group gets the remote group's reduction. */
    CHECK_EQ(COLL(Allreduce, Iallreduce, sbuf, rbuf, BIG, MPI_INT, MPI_SUM, ic), MPI_SUCCESS);
    for (int i = 0; i < BIG; i++)
        if (rbuf[i] != sum0 + rsize * i) {
            CHECK_EQ(rbuf[i], sum0 + rsize * i);
            break;
        }
    CHECK_EQ(COLL(Allreduce, Iallreduce, run, res, 1, MPI_2INT, op, ic), MPI_SUCCESS);
    CHECK_EQ(res[0], 0);
    CHECK_EQ(res[1], rsize - 1);

    /* Reduce_scatter: total elements in both groups, split over the local
     * ranks as evenly as they go; local rank a gets the remote group's sum
     * of its elements. */
    {
        int at = 0;
        for (int a = 0; a < lsize; a++) {
            counts[a] = total / lsize + (a < total % lsize);
            at += a < lrank ? counts[a] : 0;
        }
        memset(rbuf, 0xff, (BIG + 1) * sizeof(int));
        CHECK_EQ(COLL(Reduce_scatter, Ireduce_scatter, sbuf, rbuf, counts, MPI_INT, MPI_SUM, ic),
                 MPI_SUCCESS);
        for (int i = 0; i < counts[lrank]; i++)
            CHECK_EQ(rbuf[i], sum0 + rsize * (at + i));
        CHECK_EQ(rbuf[counts[lrank]], -1);
    }
    /* Reduce_scatter_block: lsize * rsize * 2 elements in both groups. */
    {
        int k = 2 * rsize;
        memset(rbuf, 0xff, (BIG + 1) * sizeof(int));
        CHECK_EQ(COLL(Reduce_scatter_block, Ireduce_scatter_block, sbuf, rbuf, k, MPI_INT,
                      MPI_SUM, ic), MPI_SUCCESS);
        for (int i = 0; i < k; i++)
            CHECK_EQ(rbuf[i], sum0 + rsize * (lrank * k + i));
        CHECK_EQ(rbuf[k], -1);
    }
    MPI_Op_free(&op);
    free(rbuf);
}

static void test_errors(void)
{
    int v = 0, w = 0;

    CHECK_EQ(COLL(Bcast, Ibcast, &v, 1, MPI_INT, rsize, ic), MPI_ERR_ROOT);
    CHECK_EQ(COLL(Reduce, Ireduce, &v, &w, 1, MPI_INT, MPI_SUM, -7, ic), MPI_ERR_ROOT);
    CHECK_EQ(COLL(Allreduce, Iallreduce, MPI_IN_PLACE, &w, 1, MPI_INT, MPI_SUM, ic),
             MPI_ERR_BUFFER);
    CHECK_EQ(COLL(Allgather, Iallgather, MPI_IN_PLACE, 1, MPI_INT, &w, 1, MPI_INT, ic),
             MPI_ERR_BUFFER);
    CHECK_EQ(COLL(Gather, Igather, &v, 1, MPI_INT, NULL, 1, MPI_INT, MPI_ROOT, ic),
             MPI_ERR_BUFFER);
    /* MPI 3.1 defines no scan on an intercommunicator. */
    CHECK_EQ(COLL(Scan, Iscan, &v, &w, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    CHECK_EQ(COLL(Exscan, Iexscan, &v, &w, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
}

/* Non-blocking collectives are local calls: the left group starts a
 * barrier and a broadcast and only then tells the right group, whose
 * leader waits for that word before it starts either. */
static void test_local(void)
{
    MPI_Request r[2];
    int word = 0, v = -1;

    if (left) {
        CHECK_EQ(MPI_Ibarrier(ic, &r[0]), MPI_SUCCESS);
        v = 99;
        CHECK_EQ(MPI_Ibcast(&v, 1, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic, &r[1]),
                 MPI_SUCCESS);
        if (lrank == 0)
            CHECK_EQ(MPI_Send(&word, 1, MPI_INT, 0, 5, ic), MPI_SUCCESS);
    } else {
        if (lrank == 0)
            CHECK_EQ(MPI_Recv(&word, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(MPI_Ibarrier(ic, &r[0]), MPI_SUCCESS);
        CHECK_EQ(MPI_Ibcast(&v, 1, MPI_INT, 0, ic, &r[1]), MPI_SUCCESS);
    }
    CHECK_EQ(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_EQ(v, 99);
}

/* Several non-blocking collectives outstanding on the intercommunicator
 * at once, finished in the reverse order, the last started by MPI_Test. */
static void test_overlap(void)
{
    int *a = malloc(BIG * sizeof(int)), *b = malloc(BIG * sizeof(int));
    int c[2 * 64], d[2 * 64], e, sum0 = 0, done = 0;
    MPI_Request r[4];

    for (int j = 0; j < rsize; j++)
        sum0 += rworld[j];
    for (int i = 0; i < BIG; i++)
        a[i] = rank + i;
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            c[2 * j + i] = val(rank, 10 * j + i);
    /* The broadcast's root: the right group's rank 0. */
    e = left ? -1 : lrank == 0 ? 7 : -2;
    CHECK_EQ(MPI_Iallreduce(a, b, BIG, MPI_INT, MPI_SUM, ic, &r[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Ialltoall(c, 2, MPI_INT, d, 2, MPI_INT, ic, &r[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Ibcast(&e, 1, MPI_INT, left ? 0 : lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic,
                        &r[2]), MPI_SUCCESS);
    CHECK_EQ(MPI_Ibarrier(ic, &r[3]), MPI_SUCCESS);
    while (!done)
        CHECK_EQ(MPI_Test(&r[3], &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int k = 2; k >= 0; k--)
        CHECK_EQ(MPI_Wait(&r[k], MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < BIG; i++)
        if (b[i] != sum0 + rsize * i) {
            CHECK_EQ(b[i], sum0 + rsize * i);
            break;
        }
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            CHECK_EQ(d[2 * j + i], val(rworld[j], 10 * lrank + i));
    /* The root's group keeps its buffers. */
    CHECK_EQ(e, left || lrank == 0 ? 7 : -2);
    free(a);
    free(b);
}

/* The non-blocking forms' own errors on an intercommunicator: a call that
 * fails makes no request. */
static void test_ierrors(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int v = 0, w = 0, counts[64] = {0}, displs[64] = {0};

    CHECK_EQ(MPI_Igather(&v, 1, MPI_INT, &w, 1, MPI_INT, rsize, ic, &r), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Iscatterv(&v, counts, displs, MPI_INT, &w, 1, MPI_INT, -5, ic, &r),
             MPI_ERR_ROOT);
    CHECK_EQ(MPI_Igatherv(&v, 1, MPI_INT, &w, counts, displs, MPI_INT, MPI_ANY_SOURCE, ic, &r),
             MPI_ERR_ROOT);
    CHECK_EQ(MPI_Iscatter(&v, 1, MPI_INT, &w, 1, MPI_INT, rsize + 3, ic, &r), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Ibarrier(ic, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Iallreduce(&v, &w, 1, MPI_INT, MPI_SUM, ic, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Ialltoall(&v, 1, MPI_INT, &w, 1, MPI_INT, ic, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Ibcast(NULL, 4, MPI_INT, MPI_ROOT, ic, &r), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Ireduce(&v, &w, 1, MPI_INT, MPI_OP_NULL, 0, ic, &r), MPI_ERR_OP);
    counts[0] = -1;
    CHECK_EQ(MPI_Ireduce_scatter(&v, &w, counts, MPI_INT, MPI_SUM, ic, &r), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Ialltoallv(&v, counts, displs, MPI_INT, &w, counts, displs, MPI_INT, ic, &r),
             MPI_ERR_COUNT);
    CHECK_EQ(MPI_Ireduce_scatter_block(&v, &w, -1, MPI_INT, MPI_SUM, ic, &r), MPI_ERR_COUNT);
    /* Over 2^31 - 1 bytes (a schedule moves them as one int count),
     * refused before anything is allocated or read. */
    CHECK_EQ(MPI_Iallreduce(&v, &w, INT32_MAX, MPI_SHORT, MPI_BOR, ic, &r), MPI_ERR_COUNT);
    CHECK_EQ(r, MPI_REQUEST_NULL);
}

/* MPI_Alltoallw on the world: rank a sends rank b a + b + 1 ints, to
 * odd ranks as one vector of that many ints at stride 2, received as ints
 * at byte displacements; then the same in place. */
static void test_alltoallw_world(void)
{
    int sc[64], sd[64], rc[64], rd[64];
    int *sbuf = malloc(sizeof(int) * 4 * 130 * 64), *rbuf = malloc(sizeof(int) * 130 * 64);
    MPI_Datatype st[64], rt[64];

    for (int b = 0, at = 0, rat = 0; b < size; b++) {
        int n = rank + b + 1;
        /* Odd peers get a strided type: one element of n ints, stride 2. */
        sc[b] = b % 2 ? 1 : n;
        st[b] = MPI_INT;
        sd[b] = at * (int)sizeof(int);
        for (int i = 0; i < 2 * n; i++)
            sbuf[at + i] = i % 2 && b % 2 ? -9 : val(rank, 100 * b + (b % 2 ? i / 2 : i));
        if (b % 2) {
            MPI_Type_vector(n, 1, 2, MPI_INT, &st[b]);
            MPI_Type_commit(&st[b]);
        }
        at += 2 * n;
        rc[b] = n;
        rt[b] = MPI_INT;
        rd[b] = rat * (int)sizeof(int);
        rat += n;
    }
    memset(rbuf, 0xff, sizeof(int) * 130 * 64);
    CHECK_EQ(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int b = 0, at = 0; b < size; b++) {
        for (int i = 0; i < rc[b]; i++)
            CHECK_EQ(rbuf[at + i], val(b, 100 * rank + i));
        at += rc[b];
    }
    /* In place: what arrives from b replaces what goes to b. */
    for (int b = 0, at = 0; b < size; b++) {
        for (int i = 0; i < rc[b]; i++)
            rbuf[at + i] = val(rank, 100 * b + i);
        at += rc[b];
    }
    CHECK_EQ(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, rc, rd, rt, MPI_COMM_WORLD),
             MPI_SUCCESS);
    for (int b = 0, at = 0; b < size; b++) {
        for (int i = 0; i < rc[b]; i++)
            CHECK_EQ(rbuf[at + i], val(b, 100 * rank + i));
        at += rc[b];
    }
    CHECK_EQ(MPI_Alltoallw(sbuf, sc, sd, st, MPI_IN_PLACE, rc, rd, rt, MPI_COMM_WORLD),
             MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
    rc[0] = -1;
    CHECK_EQ(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD), MPI_ERR_COUNT);
    for (int b = 1; b < size; b += 2)
        MPI_Type_free(&st[b]);
    free(sbuf);
    free(rbuf);
}

/* A collective that never completes (a schedule waiting for a message no
 * one sends) fails the job here, naming the test and the cut, rather than
 * by onicrun's limit: 30 s for a test that takes under a second. */
static const char *stage = "MPI_Init";

static void never_returned(int sig)
{
    char msg[200];
    int n = snprintf(msg, sizeof(msg), "mpi_intercoll: rank %d: %s (cut at %d, %s) has not "
                     "returned after 30 s: a collective that never completes\n", rank, stage,
                     cut, nb ? "non-blocking" : "blocking");

    (void)sig;
    if (write(2, msg, n > 0 ? (size_t)n : 0) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

#define STAGE(fn) (stage = #fn, alarm(30), fn(), alarm(0))

static void run_cut(int at)
{
    MPI_Comm local;

    cut = at;
    left = rank < cut;
    MPI_Comm_split(MPI_COMM_WORLD, left, rank, &local);
    CHECK_EQ(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, left ? cut : 0, 7, &ic),
             MPI_SUCCESS);
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    for (int j = 0; j < rsize; j++)
        rworld[j] = left ? cut + j : j;
    for (nb = 0; nb < 2; nb++) {
        STAGE(test_errors);
        STAGE(test_barrier_bcast);
        STAGE(test_rooted);
        STAGE(test_all);
        STAGE(test_reductions);
    }
    STAGE(test_local);
    STAGE(test_overlap);
    STAGE(test_ierrors);
    CHECK_EQ(MPI_Barrier(ic), MPI_SUCCESS);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    int total = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64) {
        if (rank == 0)
            fprintf(stderr, "mpi_intercoll: at most 64 processes\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    signal(SIGALRM, never_returned);
    STAGE(test_alltoallw_world);
    if (size >= 2)
        run_cut(size / 2);
    if (size >= 3)
        run_cut(1);
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failed checks over %d processes\n", total ? "FAIL" : "PASS", total, size);
    MPI_Finalize();
    (void)argc;
    return total != 0;
}
