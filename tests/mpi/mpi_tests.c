/* onic's MPI, tested through onicrun: `mpi_tests NAME...` runs the named
 * tests (or `all`) on every rank; each rank counts its failed checks and
 * the job fails if any rank's count is not zero. Every expectation is
 * computed, never read from a table. Works with 2 or more processes (and
 * most tests with 1). */
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mpi_check.h"

static unsigned char pattern(long long seed, size_t i)
{
    return (unsigned char)((seed * 131 + (long long)i * 7 + (long long)(i >> 8)) & 0xff);
}

/* --- ordering with mixed wildcard and exact receives ------------------------------ */
static void test_order(void)
{
    enum { N = 200 };
    int buf[N];
    MPI_Status st;

    if (size < 2)
        return;
    /* Rank 1 sends N messages to rank 0 with tags cycling 0..3; rank 0
     * receives them with a mix of exact tags, ANY_TAG and ANY_SOURCE, some
     * posted before the messages, some after; per tag and overall the
     * sequence numbers must come in send order. */
    if (rank == 1) {
        /* Nonblocking: the receiver takes them out of order, and once the
         * eager credits are used up a send waits for its receive. */
        MPI_Request q[N + 40];
        char *big[40];
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < N; i++) {
            buf[i] = i;
            MPI_Isend(&buf[i], 1, MPI_INT, 0, i % 4, MPI_COMM_WORLD, &q[i]);
        }
        /* Mixed sizes: eager and rendezvous interleaved keep their order. */
        for (int i = 0; i < 40; i++) {
            size_t n = i % 3 == 0 ? 100000 : 8;
            big[i] = malloc(n);
            memset(big[i], i, n);
            MPI_Isend(big[i], (int)n, MPI_CHAR, 0, 9, MPI_COMM_WORLD, &q[N + i]);
        }
        MPI_Waitall(N + 40, q, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 40; i++)
            free(big[i]);
    } else if (rank == 0) {
        MPI_Request pre[4];
        int pv[4];
        /* Posted before anything is sent: one ANY_SOURCE/ANY_TAG, then exact. */
        MPI_Irecv(&pv[0], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pre[0]);
        MPI_Irecv(&pv[1], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &pre[1]);
        MPI_Irecv(&pv[2], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &pre[2]);
        MPI_Irecv(&pv[3], 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &pre[3]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(4, pre, MPI_STATUSES_IGNORE);
        /* Messages 0..3 have tags 0..3: ANY/ANY takes 0 (tag 0), (1,1)
         * takes 1, (ANY,0) takes 4 (next tag 0), (1,ANY) takes 2. */
        CHECK_EQ(pv[0], 0);
        CHECK_EQ(pv[1], 1);
        CHECK_EQ(pv[2], 4);
        CHECK_EQ(pv[3], 2);
        int last[4] = {4, 1, 2, -1}, seen = 3; /* messages 0,1,2,4 are taken */
        int taken[N] = {0};
        taken[0] = taken[1] = taken[2] = taken[4] = 1;
        last[0] = 4;
        usleep(20000); /* let the rest arrive: most are unexpected now */
        for (int k = 0; k < N - 4; k++) {
            int mode = k % 3, v;
            if (mode == 0)
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            else if (mode == 1)
                MPI_Recv(&v, 1, MPI_INT, 1, k % 4, MPI_COMM_WORLD, &st);
            else
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, (k + 1) % 4, MPI_COMM_WORLD, &st);
            CHECK(v >= 0 && v < N && !taken[v]);
            if (v < 0 || v >= N)
                continue;
            taken[v] = 1;
            CHECK_EQ(st.MPI_TAG, v % 4);
            CHECK_EQ(st.MPI_SOURCE, 1);
            /* Per tag, values arrive in increasing order. */
            CHECK(v > last[v % 4]);
            last[v % 4] = v;
            if (mode == 0) {
                /* ANY/ANY must take the oldest not yet taken. */
                for (int j = 0; j < v; j++)
                    CHECK(taken[j]);
            }
            (void)seen;
        }
        for (int i = 0; i < 40; i++) {
            size_t n = i % 3 == 0 ? 100000 : 8;
            char *b = calloc(1, n);
            MPI_Recv(b, (int)n, MPI_CHAR, i % 2 ? MPI_ANY_SOURCE : 1, 9, MPI_COMM_WORLD, &st);
            int cnt;
            MPI_Get_count(&st, MPI_CHAR, &cnt);
            CHECK_EQ(cnt, (long long)n);
            CHECK(b[0] == (char)i && b[n - 1] == (char)i);
            free(b);
        }
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- thousands of unexpected messages, above and below the eager limit ------------- */
static void test_unexpected(void)
{
    enum { N = 3000, BIG = 5000 };
    MPI_Request *reqs;
    char *bufs;

    if (size < 2)
        return;
    /* Every rank but 0 sends N messages to rank 0 before rank 0 posts a
     * single receive; every 10th is above the eager limit. The senders'
     * eager credits run out early, so most go by rendezvous: nothing is
     * dropped, nothing reordered. */
    if (rank != 0) {
        reqs = malloc(N * sizeof(*reqs));
        bufs = malloc((size_t)N * BIG);
        for (int i = 0; i < N; i++) {
            size_t n = i % 10 == 9 ? BIG : (size_t)(i % 64) + 1;
            for (size_t j = 0; j < n; j++)
                bufs[(size_t)i * BIG + j] = (char)pattern(rank * 100000 + i, j);
            MPI_Isend(bufs + (size_t)i * BIG, (int)n, MPI_CHAR, 0, i % 7, MPI_COMM_WORLD,
                      &reqs[i]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
        free(reqs);
        free(bufs);
    } else {
        char *b = malloc(BIG);
        int next[64] = {0};
        MPI_Barrier(MPI_COMM_WORLD);
        usleep(50000);
        /* Receive per sender with ANY_TAG: must come in send order. */
        for (int k = 0; k < N * (size - 1); k++) {
            MPI_Status st;
            int src = 1 + k % (size - 1), cnt, i;
            MPI_Recv(b, BIG, MPI_CHAR, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            i = next[src]++;
            size_t n = i % 10 == 9 ? BIG : (size_t)(i % 64) + 1;
            MPI_Get_count(&st, MPI_CHAR, &cnt);
            CHECK_EQ(cnt, (long long)n);
            CHECK_EQ(st.MPI_TAG, i % 7);
            int ok = 1;
            for (size_t j = 0; j < n; j++)
                ok &= b[j] == (char)pattern(src * 100000 + i, j);
            CHECK(ok);
            if (failed > 10)
                break;
        }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- unexpected buffers pinned by messages left waiting ------------------------------- */
static size_t pinned_len(int i)
{
    return (size_t)(i * 37 % 2048) + 1;
}

static void test_pinned(void)
{
    enum { ROUNDS = 20, STREAM = 400, N = ROUNDS * (STREAM + 1) };

    if (size < 2)
        return;
    /* Every sender interleaves one tag-1 message per round with a stream
     * of tag-2 ones, all of eager sizes; rank 0 receives every tag-2
     * message first, so the tag-1 ones stay unexpected, each keeping its
     * unexpected buffer from being reused while the stream goes on.
     * Everything must arrive intact and in order per tag. */
    if (rank != 0) {
        MPI_Request *reqs = malloc(N * sizeof(*reqs));
        char *bufs = malloc((size_t)N * 2048);
        for (int i = 0; i < N; i++) {
            for (size_t j = 0; j < pinned_len(i); j++)
                bufs[(size_t)i * 2048 + j] = (char)pattern(rank * 100000 + i, j);
            MPI_Isend(bufs + (size_t)i * 2048, (int)pinned_len(i), MPI_CHAR, 0,
                      i % (STREAM + 1) == 0 ? 1 : 2, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
        free(reqs);
        free(bufs);
    } else {
        char *b = malloc(2048);
        for (int tag = 2; tag >= 1; tag--)
            for (int src = 1; src < size; src++)
                for (int i = 0; i < N; i++) {
                    MPI_Status st;
                    int cnt, ok = 1;
                    if ((i % (STREAM + 1) == 0) != (tag == 1))
                        continue;
                    MPI_Recv(b, 2048, MPI_CHAR, src, tag, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_CHAR, &cnt);
                    CHECK_EQ(cnt, (long long)pinned_len(i));
                    for (size_t j = 0; j < pinned_len(i) && j < (size_t)cnt; j++)
                        ok &= b[j] == (char)pattern(src * 100000 + i, j);
                    CHECK(ok);
                    if (failed > 10)
                        goto out;
                }
out:
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- probe then receive ---------------------------------------------------------------- */
/* On a communicator whose ranks are the world's reversed, MPI_SOURCE of a
 * probe and of a receive is the sender's rank in that communicator (its
 * world rank differs for every sender). Each sender sends its rank there,
 * eager and rendezvous sized. */
static void probe_source_reversed(void)
{
    enum { BIG = 5000 };
    MPI_Comm rev;
    MPI_Status st, rst;
    int rr, flag, cnt, *b = malloc(BIG * sizeof(int));

    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);
    MPI_Comm_rank(rev, &rr);
    CHECK_EQ(rr, size - 1 - rank);
    if (rr != 0) {
        MPI_Request q[2];
        for (int i = 0; i < BIG; i++)
            b[i] = rr;
        MPI_Isend(b, 1, MPI_INT, 0, 8, rev, &q[0]);
        MPI_Isend(b, BIG, MPI_INT, 0, 9, rev, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    } else {
        int seen[2][64] = {{0}};
        for (int k = 0; k < 2 * (size - 1); k++) {
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, rev, &st);
            CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < size && st.MPI_SOURCE < 64);
            CHECK(st.MPI_TAG == 8 || st.MPI_TAG == 9);
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK_EQ(cnt, st.MPI_TAG == 8 ? 1 : BIG);
            if (cnt < 1 || cnt > BIG)
                cnt = 1;
            /* Iprobe naming that source finds a message of its tag. */
            if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size) {
                MPI_Iprobe(st.MPI_SOURCE, st.MPI_TAG, rev, &flag, &rst);
                CHECK(flag && rst.MPI_SOURCE == st.MPI_SOURCE);
            }
            /* The probed message is the oldest of its tag too, so this takes
             * it whatever the probe said its source was; a wrong source then
             * fails the checks, not the job by a hang. */
            b[0] = b[cnt - 1] = -1;
            MPI_Recv(b, BIG, MPI_INT, MPI_ANY_SOURCE, st.MPI_TAG, rev, &rst);
            CHECK_EQ(rst.MPI_SOURCE, st.MPI_SOURCE);
            CHECK_EQ(b[0], st.MPI_SOURCE);
            CHECK_EQ(b[cnt - 1], st.MPI_SOURCE);
            if (rst.MPI_SOURCE >= 1 && rst.MPI_SOURCE < 64 && (rst.MPI_TAG == 8 || rst.MPI_TAG == 9))
                seen[rst.MPI_TAG - 8][rst.MPI_SOURCE]++;
        }
        for (int s = 1; s < size && s < 64; s++)
            CHECK(seen[0][s] == 1 && seen[1][s] == 1);
    }
    free(b);
    MPI_Comm_free(&rev);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_probe(void)
{
    MPI_Status st;
    int flag, cnt;

    /* MPI_PROC_NULL: source MPI_PROC_NULL, tag MPI_ANY_TAG, no data, and
     * MPI_ERROR left alone, as by every call completing one operation
     * (MPI 3.1, 3.2.5), a receive's too. */
    st.MPI_ERROR = -77;
    CHECK_EQ(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    CHECK_EQ(st.MPI_ERROR, -77);
    st.MPI_ERROR = -78;
    st.MPI_SOURCE = 5;
    CHECK_EQ(MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st.MPI_ERROR, -78);
    if (size < 2)
        return;
    if (rank == 1) {
        int a[3] = {1, 2, 3};
        double d[5000];
        for (int i = 0; i < 5000; i++)
            d[i] = i * 0.5;
        /* Nonblocking: rank 0 probes for the second message first, and a
         * send may wait for its receive (always, with ONIC_EAGER_LIMIT=0). */
        MPI_Request q[3];
        MPI_Isend(a, 3, MPI_INT, 0, 5, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(d, 5000, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(a, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &q[2]);
        MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
    } else if (rank == 0) {
        /* Probe for tag 6 first (pulls tag 5's header past it), then ANY. */
        MPI_Probe(1, 6, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &cnt);
        CHECK_EQ(cnt, 5000);
        CHECK_EQ(st.MPI_TAG, 6);
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK_EQ(st.MPI_TAG, 5); /* the oldest */
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK_EQ(cnt, 3);
        /* Receiving with ANY_TAG must take tag 5 (oldest), not 6. */
        int a[3] = {0};
        MPI_Recv(a, 3, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK_EQ(st.MPI_TAG, 5);
        CHECK(a[0] == 1 && a[2] == 3);
        double *d = calloc(5000, sizeof(double));
        MPI_Iprobe(1, 6, MPI_COMM_WORLD, &flag, &st);
        CHECK(flag);
        MPI_Recv(d, 5000, MPI_DOUBLE, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &st);
        CHECK(d[4999] == 4999 * 0.5 && d[1] == 0.5);
        free(d);
        do
            MPI_Iprobe(1, 7, MPI_COMM_WORLD, &flag, &st);
        while (!flag);
        MPI_Recv(a, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &st);
        CHECK_EQ(a[0], 1);
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        CHECK(!flag);
        MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st);
        CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    probe_source_reversed();
}

/* --- cancel -------------------------------------------------------------------------------- */
static void test_cancel(void)
{
    MPI_Request r;
    MPI_Status st;
    int v = -1, flag;

    /* A cancelled receive never takes a message: the message sent after it
     * goes to the next receive. */
    MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag);
    CHECK_EQ(v, -1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (size >= 2) {
        if (rank == 1) {
            int x = 42;
            MPI_Send(&x, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
        } else if (rank == 0) {
            int y = 0;
            MPI_Recv(&y, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &st);
            CHECK_EQ(y, 42);
            CHECK_EQ(v, -1);
        }
    }
    /* A receive that already matched is not cancelled. */
    if (size >= 2 && rank <= 1) {
        int x = 7, y = 0;
        if (rank == 1)
            MPI_Send(&x, 1, MPI_INT, 0, 78, MPI_COMM_WORLD);
        else {
            MPI_Irecv(&y, 1, MPI_INT, 1, 78, MPI_COMM_WORLD, &r);
            usleep(10000);
            MPI_Cancel(&r);
            MPI_Wait(&r, &st);
            MPI_Test_cancelled(&st, &flag);
            if (!flag)
                CHECK_EQ(y, 7);
            else { /* cancelled before it arrived: it must still be there */
                MPI_Recv(&y, 1, MPI_INT, 1, 78, MPI_COMM_WORLD, &st);
                CHECK_EQ(y, 7);
            }
        }
    }
    /* Cancelling a send: it completes normally. */
    {
        int x = 1, y;
        MPI_Isend(&x, 1, MPI_INT, rank, 79, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        MPI_Recv(&y, 1, MPI_INT, rank, 79, MPI_COMM_WORLD, &st);
        CHECK_EQ(y, 1);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(!flag);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- truncation ----------------------------------------------------------------------------- */
static void test_truncate(void)
{
    MPI_Status st;
    int rc, cnt;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* Eager posted, eager unexpected, rendezvous posted and unexpected. */
    for (int big = 0; big < 2; big++)
        for (int unexp = 0; unexp < 2; unexp++) {
            int n = big ? 20000 : 100, cap = n / 2;
            char *s = malloc((size_t)n), *r = calloc(1, (size_t)n);
            for (int i = 0; i < n; i++)
                s[i] = (char)(i * 3 + big);
            int to = (rank + 1) % size, from = (rank - 1 + size) % size;
            MPI_Request rq, sq;
            if (unexp) {
                MPI_Isend(s, n, MPI_CHAR, to, 90, MPI_COMM_WORLD, &sq);
                MPI_Barrier(MPI_COMM_WORLD);
                st.MPI_ERROR = -77;
                rc = MPI_Recv(r, cap, MPI_CHAR, from, 90, MPI_COMM_WORLD, &st);
            } else {
                MPI_Irecv(r, cap, MPI_CHAR, from, 90, MPI_COMM_WORLD, &rq);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Isend(s, n, MPI_CHAR, to, 90, MPI_COMM_WORLD, &sq);
                st.MPI_ERROR = -77;
                rc = MPI_Wait(&rq, &st);
            }
            CHECK_EQ(rc, MPI_ERR_TRUNCATE);
            /* A single completion's status keeps its MPI_ERROR (MPI 3.1, 3.2.5). */
            CHECK_EQ(st.MPI_ERROR, -77);
            MPI_Get_count(&st, MPI_CHAR, &cnt);
            CHECK_EQ(cnt, cap);
            int ok = 1;
            for (int i = 0; i < cap; i++)
                ok &= r[i] == (char)(i * 3 + big);
            CHECK(ok);
            CHECK_EQ(r[cap], 0);
            CHECK_EQ(MPI_Wait(&sq, MPI_STATUS_IGNORE), MPI_SUCCESS);
            free(s);
            free(r);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* --- synchronous, buffered and ready sends --------------------------------------------- */
static void test_modes(void)
{
    MPI_Request r;
    MPI_Status st;
    int flag, v;

    if (size < 2)
        return;
    /* Issend of a small message must not complete before the receive is posted. */
    if (rank == 0) {
        v = 5;
        MPI_Issend(&v, 1, MPI_INT, 1, 30, MPI_COMM_WORLD, &r);
        double t0 = MPI_Wtime();
        int done = 0;
        while (MPI_Wtime() - t0 < 0.05) {
            MPI_Test(&r, &flag, &st);
            if (flag) {
                done = 1;
                break;
            }
        }
        CHECK(!done); /* rank 1 has not posted its receive yet */
        MPI_Send(&v, 1, MPI_INT, 1, 31, MPI_COMM_WORLD); /* now it may */
        if (!done)
            MPI_Wait(&r, &st);
        MPI_Ssend(&v, 0, MPI_INT, 1, 32, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int a, b;
        MPI_Recv(&b, 1, MPI_INT, 0, 31, MPI_COMM_WORLD, &st);
        MPI_Recv(&a, 1, MPI_INT, 0, 30, MPI_COMM_WORLD, &st);
        CHECK_EQ(a, 5);
        MPI_Recv(&a, 1, MPI_INT, 0, 32, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &a);
        CHECK_EQ(a, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Buffered sends: return at once, the buffer is reused at detach. */
    {
        int bsize = 10 * (4000 + MPI_BSEND_OVERHEAD) + 64;
        char *bb = malloc((size_t)bsize), *msg = malloc(4000);
        void *back;
        int back_size;
        MPI_Buffer_attach(bb, bsize);
        if (rank == 0) {
            for (int i = 0; i < 10; i++) {
                memset(msg, i, 4000);
                CHECK_EQ(MPI_Bsend(msg, 4000, MPI_CHAR, 1, 40 + i, MPI_COMM_WORLD), MPI_SUCCESS);
            }
            memset(msg, 0xee, 4000); /* the messages were copied */
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            for (int i = 9; i >= 0; i--) {
                MPI_Recv(msg, 4000, MPI_CHAR, 0, 40 + i, MPI_COMM_WORLD, &st);
                CHECK(msg[0] == (char)i && msg[3999] == (char)i);
            }
        MPI_Buffer_detach(&back, &back_size);
        CHECK(back == bb);
        CHECK_EQ(back_size, bsize);
        free(bb);
        free(msg);
    }
    /* Buffered send with no room: MPI_ERR_BUFFER under ERRORS_RETURN. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        char small[100], m[200] = {0};
        MPI_Buffer_attach(small, sizeof(small));
        CHECK_EQ(MPI_Bsend(m, 200, MPI_CHAR, (rank + 1) % size, 50, MPI_COMM_WORLD),
                 MPI_ERR_BUFFER);
        void *b;
        int s;
        MPI_Buffer_detach(&b, &s);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* Ready send to a posted receive. */
    if (rank == 1) {
        MPI_Irecv(&v, 1, MPI_INT, 0, 60, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&r, &st);
        CHECK_EQ(v, 99);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            v = 99;
            MPI_Rsend(&v, 1, MPI_INT, 1, 60, MPI_COMM_WORLD);
        }
    }
    /* Nonblocking ready sends to posted receives, eager and rendezvous
     * sized: each arrives whole, with its status. */
    {
        enum { BIG = 4000 };
        int *b = malloc(BIG * sizeof(int)), small = -1, cnt;
        if (rank == 1) {
            MPI_Request q[2];
            for (int i = 0; i < BIG; i++)
                b[i] = -1;
            MPI_Irecv(&small, 1, MPI_INT, 0, 61, MPI_COMM_WORLD, &q[0]);
            MPI_Irecv(b, BIG, MPI_INT, 0, 62, MPI_COMM_WORLD, &q[1]);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Wait(&q[0], &st);
            CHECK_EQ(small, 77);
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 61);
            MPI_Wait(&q[1], &st);
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 62);
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK_EQ(cnt, BIG);
            int bad = 0;
            for (int i = 0; i < BIG; i++)
                bad += b[i] != 5 * i;
            CHECK_EQ(bad, 0);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                MPI_Request q[2];
                small = 77;
                for (int i = 0; i < BIG; i++)
                    b[i] = 5 * i;
                CHECK_EQ(MPI_Irsend(&small, 1, MPI_INT, 1, 61, MPI_COMM_WORLD, &q[0]),
                         MPI_SUCCESS);
                CHECK_EQ(MPI_Irsend(b, BIG, MPI_INT, 1, 62, MPI_COMM_WORLD, &q[1]), MPI_SUCCESS);
                MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            }
        }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- persistent requests ------------------------------------------------------------------ */
static void test_persistent(void)
{
    enum { N = 3000 };
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    static int sv[N], rv[N];
    MPI_Request r[4];
    MPI_Status st[4];
    int cnt;

    /* One pair of requests per protocol, each started 10 times: 10 ints
     * go eagerly, 3000 (12,000 bytes, above the 2,048-byte default eager
     * limit) by rendezvous; every element checked, and nothing beyond
     * the short message's count written. */
    MPI_Send_init(sv, 10, MPI_INT, to, 11, MPI_COMM_WORLD, &r[0]);
    MPI_Recv_init(rv, N, MPI_INT, from, 11, MPI_COMM_WORLD, &r[1]);
    MPI_Send_init(sv, N, MPI_INT, to, 12, MPI_COMM_WORLD, &r[2]);
    MPI_Recv_init(rv, N, MPI_INT, from, 12, MPI_COMM_WORLD, &r[3]);
    for (int it = 0; it < 20; it++) {
        int big = it % 2, n = big ? N : 10, bad = 0;
        for (int i = 0; i < N; i++) {
            sv[i] = rank * 1000000 + it * 1000 + i;
            rv[i] = -1;
        }
        MPI_Startall(2, &r[2 * big]);
        MPI_Waitall(2, &r[2 * big], st);
        CHECK(r[2 * big] != MPI_REQUEST_NULL && r[2 * big + 1] != MPI_REQUEST_NULL);
        CHECK_EQ(st[1].MPI_SOURCE, from);
        CHECK_EQ(st[1].MPI_TAG, 11 + big);
        MPI_Get_count(&st[1], MPI_INT, &cnt);
        CHECK_EQ(cnt, n);
        for (int i = 0; i < N; i++)
            if (rv[i] != (i < n ? from * 1000000 + it * 1000 + i : -1)) {
                if (bad++ == 0)
                    fprintf(stderr, "rank %d: round %d (%d ints): element %d is %d\n", rank, it,
                            n, i, rv[i]);
            }
        CHECK_EQ(bad, 0);
    }
    /* A synchronous one (8 bytes: eager size) is not complete before its
     * receive is posted, which happens after the barrier; a ready one
     * starts after its receive is posted. Five times each. */
    for (int it = 0; it < 5; it++) {
        MPI_Request s[2], q[2];
        long long out[2] = {rank * 100 + it, -rank * 100 - it}, in[2] = {-1, -1};
        int flag = -1;

        CHECK_EQ(MPI_Ssend_init(&out[0], 1, MPI_LONG_LONG, to, 21, MPI_COMM_WORLD, &s[0]),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Rsend_init(&out[1], 1, MPI_LONG_LONG, to, 22, MPI_COMM_WORLD, &s[1]),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Irecv(&in[1], 1, MPI_LONG_LONG, from, 22, MPI_COMM_WORLD, &q[1]),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Start(&s[0]), MPI_SUCCESS);
        CHECK_EQ(MPI_Test(&s[0], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(flag, 0);
        MPI_Barrier(MPI_COMM_WORLD); /* every ready send's receive is posted */
        CHECK_EQ(MPI_Start(&s[1]), MPI_SUCCESS);
        CHECK_EQ(MPI_Irecv(&in[0], 1, MPI_LONG_LONG, from, 21, MPI_COMM_WORLD, &q[0]),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Waitall(2, s, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        CHECK_EQ(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        CHECK_EQ(in[0], from * 100 + it);
        CHECK_EQ(in[1], -from * 100 - it);
        CHECK(s[0] != MPI_REQUEST_NULL && s[1] != MPI_REQUEST_NULL);
        MPI_Request_free(&s[0]);
        MPI_Request_free(&s[1]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Waiting on or testing an inactive persistent request returns at
     * once, with an empty status (any source, any tag, no error, count 0). */
    for (int how = 0; how < 2; how++) {
        int flag = -1;
        st[0].MPI_SOURCE = st[0].MPI_TAG = st[0].MPI_ERROR = 77;
        if (how == 0)
            CHECK_EQ(MPI_Wait(&r[0], &st[0]), MPI_SUCCESS);
        else
            CHECK_EQ(MPI_Test(&r[1], &flag, &st[0]), MPI_SUCCESS);
        CHECK(how == 0 || flag == 1);
        CHECK(r[how] != MPI_REQUEST_NULL);
        CHECK_EQ(st[0].MPI_SOURCE, MPI_ANY_SOURCE);
        CHECK_EQ(st[0].MPI_TAG, MPI_ANY_TAG);
        CHECK_EQ(st[0].MPI_ERROR, MPI_SUCCESS);
        MPI_Get_count(&st[0], MPI_INT, &cnt);
        CHECK_EQ(cnt, 0);
    }
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&r[i]);
    CHECK(r[0] == MPI_REQUEST_NULL && r[3] == MPI_REQUEST_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- large messages, 1 MiB to 64 MiB --------------------------------------------------- */
static void test_large(void)
{
    if (size < 2)
        return;
    for (size_t n = 1 << 20; n <= (64u << 20); n *= 4) {
        if (rank == 0) {
            unsigned char *b = malloc(n);
            for (size_t i = 0; i < n; i++)
                b[i] = pattern((long long)n, i);
            MPI_Send(b, (int)n, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
            free(b);
        } else if (rank == 1) {
            unsigned char *b = malloc(n);
            MPI_Status st;
            int cnt;
            MPI_Recv(b, (int)n, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK_EQ(cnt, (long long)n);
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; i++)
                if (b[i] != pattern((long long)n, i))
                    bad = i;
            if (bad != n)
                fprintf(stderr, "rank 1: %zu-byte message differs at byte %zu\n", n, bad);
            CHECK(bad == n);
            free(b);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- datatypes -------------------------------------------------------------------------- */
static void test_types(void)
{
    MPI_Datatype vec, con;
    MPI_Aint lb, ext;
    int sz, to = (rank + 1) % size, from = (rank - 1 + size) % size;
    double m[10][10], col[10];
    MPI_Status st;

    MPI_Type_vector(10, 1, 10, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_size(vec, &sz);
    CHECK_EQ(sz, 10 * 8);
    MPI_Type_get_extent(vec, &lb, &ext);
    CHECK_EQ(lb, 0);
    CHECK_EQ(ext, (9 * 10 + 1) * 8);
    MPI_Type_contiguous(3, vec, &con);
    MPI_Type_commit(&con);
    MPI_Type_size(con, &sz);
    CHECK_EQ(sz, 240);
    MPI_Type_free(&con);
    CHECK(con == MPI_DATATYPE_NULL);
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 10; j++)
            m[i][j] = rank * 100 + i * 10 + j;
    /* A column goes out as a vector and comes in as 10 doubles. */
    MPI_Sendrecv(&m[0][3], 1, vec, to, 12, col, 10, MPI_DOUBLE, from, 12, MPI_COMM_WORLD, &st);
    for (int i = 0; i < 10; i++)
        CHECK(col[i] == from * 100 + i * 10 + 3);
    /* And back into a column. */
    for (int i = 0; i < 10; i++)
        col[i] = -i;
    MPI_Sendrecv(col, 10, MPI_DOUBLE, to, 13, &m[0][5], 1, vec, from, 13, MPI_COMM_WORLD, &st);
    for (int i = 0; i < 10; i++) {
        CHECK(m[i][5] == -i);
        CHECK(m[i][4] == rank * 100 + i * 10 + 4);
    }
    int cnt;
    MPI_Get_count(&st, vec, &cnt);
    CHECK_EQ(cnt, 1);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, 20);
    MPI_Type_free(&vec);
    /* Blocks of 2 every 5 ints, 3 of them (extent 12 ints), count 2: the
     * second element starts one extent after the first (type map written
     * out), both ways between processes. */
    {
        static const int map[12] = {0, 1, 5, 6, 10, 11, 12, 13, 17, 18, 22, 23};
        MPI_Datatype v2;
        int a[24], p[12], back[24];
        MPI_Type_vector(3, 2, 5, MPI_INT, &v2);
        MPI_Type_commit(&v2);
        for (int i = 0; i < 24; i++)
            a[i] = rank * 100 + i;
        MPI_Sendrecv(a, 2, v2, to, 15, p, 12, MPI_INT, from, 15, MPI_COMM_WORLD, &st);
        for (int k = 0; k < 12; k++)
            CHECK_EQ(p[k], from * 100 + map[k]);
        for (int i = 0; i < 24; i++)
            back[i] = -1;
        MPI_Sendrecv(p, 12, MPI_INT, to, 16, back, 2, v2, from, 16, MPI_COMM_WORLD, &st);
        /* p held from's values; what comes back is from's from's. */
        int ff = (from - 1 + size) % size;
        for (int i = 0, k = 0; i < 24; i++)
            CHECK_EQ(back[i], k < 12 && map[k] == i ? ff * 100 + map[k++] : -1);
        MPI_Get_count(&st, v2, &cnt);
        CHECK_EQ(cnt, 2);
        MPI_Type_free(&v2);
    }
    /* Sendrecv_replace and PROC_NULL. */
    int x = rank;
    MPI_Sendrecv_replace(&x, 1, MPI_INT, to, 14, from, 14, MPI_COMM_WORLD, &st);
    CHECK_EQ(x, from);
    MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, 0);
    MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- communicators --------------------------------------------------------------------------- */
/* A context id is agreed by every member, also when they use different
 * ones: after a split that leaves the last rank out (the others hold its
 * id, the last does not), a dup of the world must take one id everywhere.
 * The last rank sends on the dup to rank 0 and then on the world; a pair's
 * messages arrive in order, so when rank 0 has the second, the first is
 * there too, on the dup and not on the split. Fails, does not hang. */
static void comm_ctx_agreed(void)
{
    MPI_Comm part, dup;
    int last = size - 1, v = 4321, got = 0, flag = 0, stray = 0;

    if (size < 3)
        return;
    MPI_Comm_split(MPI_COMM_WORLD, rank < last ? 0 : MPI_UNDEFINED, 0, &part);
    CHECK((part == MPI_COMM_NULL) == (rank == last));
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == last) {
        MPI_Send(&v, 1, MPI_INT, 0, 55, dup);
        MPI_Send(&v, 1, MPI_INT, 0, 56, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(&got, 1, MPI_INT, last, 56, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Iprobe(MPI_ANY_SOURCE, 55, part, &stray, MPI_STATUS_IGNORE);
        MPI_Iprobe(last, 55, dup, &flag, MPI_STATUS_IGNORE);
        if (stray || !flag)
            fprintf(stderr, "rank 0: the last rank's message on a dup of the world %s\n",
                    stray ? "arrived on the split that left it out (the dup's context id "
                            "was not agreed)" : "is not there");
        CHECK(!stray);
        CHECK(flag);
        if (flag) {
            MPI_Recv(&got, 1, MPI_INT, last, 55, dup, MPI_STATUS_IGNORE);
            CHECK_EQ(got, 4321);
        }
    }
    MPI_Comm_free(&dup);
    if (part != MPI_COMM_NULL)
        MPI_Comm_free(&part);
}

/* A receive freed (MPI_Request_free) before it is matched keeps its
 * freed communicator's context id: a communicator made meanwhile gets
 * another, so rank 0's self-message on it goes to its own receive and not
 * to the freed one, which takes rank 1's message sent later on the freed
 * communicator. */
static void comm_free_held(void)
{
    MPI_Comm d, e;
    MPI_Request q[2];
    int b = -1, c = -1, self = 22, v = 11, flag = 0;

    if (size < 2)
        return;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    if (rank == 0) {
        MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 5, d, &q[0]);
        MPI_Request_free(&q[0]);
        MPI_Comm_free(&d);
        MPI_Comm_dup(MPI_COMM_SELF, &e);
        MPI_Irecv(&c, 1, MPI_INT, 0, 5, e, &q[0]);
        MPI_Isend(&self, 1, MPI_INT, 0, 5, e, &q[1]);
        for (double t0 = MPI_Wtime(); !flag && MPI_Wtime() - t0 < 5;)
            MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
        if (!flag) {
            fprintf(stderr, "rank 0: a message on a new communicator went to a receive "
                            "freed on a freed one (its context id was given again)\n");
            MPI_Cancel(&q[0]);
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        }
        MPI_Wait(&q[1], MPI_STATUS_IGNORE);
        CHECK_EQ(c, 22);
        MPI_Comm_free(&e);
        MPI_Barrier(MPI_COMM_WORLD);
        for (double t0 = MPI_Wtime(); b == -1 && MPI_Wtime() - t0 < 10;)
            MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK_EQ(b, 11);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            MPI_Send(&v, 1, MPI_INT, 0, 5, d);
        MPI_Comm_free(&d);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_comm(void)
{
    MPI_Comm dup, half, sub;
    MPI_Group wg, g2;
    int r, s, res, v;
    MPI_Status st;

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &res);
    CHECK_EQ(res, MPI_CONGRUENT);
    MPI_Comm_compare(dup, dup, &res);
    CHECK_EQ(res, MPI_IDENT);
    /* The same tag on world and dup: each receive gets its own comm's message. */
    if (size >= 2 && rank < 2) {
        int other = 1 - rank, a = 100 + rank, b = 200 + rank, x, y;
        MPI_Request q[2];
        MPI_Isend(&a, 1, MPI_INT, other, 1, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(&b, 1, MPI_INT, other, 1, dup, &q[1]);
        MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st);
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK_EQ(x, 100 + other);
        CHECK_EQ(y, 200 + other);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    }
    /* Split into evens and odds, ordered by descending world rank. */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_rank(half, &r);
    MPI_Comm_size(half, &s);
    CHECK_EQ(s, (size - rank % 2 + 1) / 2);
    int above = 0;
    for (int j = rank + 2; j < size; j += 2)
        above++; /* same color, larger world rank: smaller key, so earlier */
    CHECK_EQ(r, above);
    /* Sum of world ranks within each half, by allreduce on the half. */
    int sum = 0, expect = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
    for (int i = rank % 2; i < size; i += 2)
        expect += i;
    CHECK_EQ(sum, expect);
    /* Traffic on half does not leak to world with the same tag. */
    v = rank;
    int got = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % s, 5, &got, 1, MPI_INT, (r - 1 + s) % s, 5, half, &st);
    CHECK_EQ(got % 2, rank % 2);
    /* The source is a rank of half (descending world ranks), not of world. */
    CHECK_EQ(st.MPI_SOURCE, (r - 1 + s) % s);
    CHECK_EQ(got, rank % 2 + 2 * (s - 1 - (r - 1 + s) % s));
    /* MPI_UNDEFINED: no communicator. */
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &sub);
    CHECK((rank == 0) == (sub == MPI_COMM_NULL));
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    /* Groups: translate and create. */
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int ranks[2] = {size - 1, 0}, out[2];
    MPI_Group_incl(wg, size >= 2 ? 2 : 1, ranks, &g2);
    MPI_Group_size(g2, &s);
    CHECK_EQ(s, size >= 2 ? 2 : 1);
    MPI_Group_rank(g2, &r);
    CHECK_EQ(r, rank == size - 1 ? 0 : rank == 0 ? 1 : MPI_UNDEFINED);
    int in[2] = {0, 1};
    MPI_Group_translate_ranks(g2, s, in, wg, out);
    CHECK_EQ(out[0], size - 1);
    if (s == 2)
        CHECK_EQ(out[1], 0);
    MPI_Comm_create(MPI_COMM_WORLD, g2, &sub);
    CHECK((sub != MPI_COMM_NULL) == (rank == 0 || rank == size - 1));
    if (sub != MPI_COMM_NULL) {
        int b = rank == size - 1 ? 1234 : 0;
        MPI_Bcast(&b, 1, MPI_INT, 0, sub);
        CHECK_EQ(b, 1234);
        MPI_Comm_compare(sub, MPI_COMM_WORLD, &res);
        /* {size-1, 0}: world itself at 1 process, reordered at 2, fewer above. */
        CHECK_EQ(res, size == 1 ? MPI_CONGRUENT : size == 2 ? MPI_SIMILAR : MPI_UNEQUAL);
        MPI_Comm_free(&sub);
    }
    MPI_Group_free(&g2);
    MPI_Group_free(&wg);
    CHECK(wg == MPI_GROUP_NULL);
    /* Dup and free many times: context ids come back. */
    for (int i = 0; i < 5000; i++) {
        MPI_Comm c;
        MPI_Comm_dup(half, &c);
        MPI_Comm_free(&c);
    }
    int *tagub, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagub, &flag);
    CHECK(flag && *tagub >= 32767);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL);
    comm_ctx_agreed();
    comm_free_held();
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- collectives ---------------------------------------------------------------------------- */
/* Eager-sized broadcasts from every root in turn, before any rendezvous
 * one: a tree that sends a message too many (to a rank that is no child,
 * e.g. the root at 3 processes) leaves it to be taken by a later broadcast
 * as its data, a failed check here; a rendezvous one would hang instead.
 * Returns whether every process saw every broadcast right. */
static int coll_bcast_every_root(void)
{
    int bad = 0, any = 0;

    for (int round = 0; round < 2; round++)
        for (int root = 0; root < size; root++) {
            int v[4];
            for (int i = 0; i < 4; i++)
                v[i] = rank == root ? 1000 * round + 10 * root + i : -1;
            MPI_Bcast(v, 4, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < 4; i++)
                if (v[i] != 1000 * round + 10 * root + i) {
                    fprintf(stderr, "rank %d: broadcast from %d (round %d): element %d is %d\n",
                            rank, root, round, i, v[i]);
                    bad = 1;
                }
        }
    CHECK(!bad);
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return !any;
}

static void test_coll(void)
{
    if (!coll_bcast_every_root())
        return; /* the larger broadcasts below would hang on such a tree */
    for (int root = 0; root < size; root++) {
        /* Bcast, eager and rendezvous sized. */
        for (int n = 1; n <= 10000; n *= 100) {
            int *b = malloc((size_t)n * sizeof(int));
            for (int i = 0; i < n; i++)
                b[i] = rank == root ? root * 7 + i : -1;
            MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD);
            CHECK_EQ(b[0], root * 7);
            CHECK_EQ(b[n - 1], root * 7 + n - 1);
            free(b);
        }
        /* Reduce with every op on ints, doubles and pairs. */
        int iv[2] = {rank + 1, -rank}, ir[2] = {0, 0};
        long long exp_sum = 0, exp_prod = 1;
        for (int i = 0; i < size; i++) {
            exp_sum += i + 1;
            exp_prod *= i + 1;
        }
        MPI_Reduce(iv, ir, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        if (rank == root) {
            CHECK_EQ(ir[0], exp_sum);
            CHECK_EQ(ir[1], -(long long)size * (size - 1) / 2);
        }
        MPI_Reduce(iv, ir, 1, MPI_INT, MPI_PROD, root, MPI_COMM_WORLD);
        if (rank == root)
            CHECK_EQ(ir[0], exp_prod);
        MPI_Reduce(iv, ir, 2, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
        if (rank == root) {
            CHECK_EQ(ir[0], size);
            CHECK_EQ(ir[1], 0);
        }
        MPI_Reduce(iv, ir, 2, MPI_INT, MPI_MIN, root, MPI_COMM_WORLD);
        if (rank == root) {
            CHECK_EQ(ir[0], 1);
            CHECK_EQ(ir[1], -(size - 1));
        }
    }
    int one = 1, zero = 0, r1, bits = 1 << rank, rb;
    MPI_Allreduce(&one, &r1, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    CHECK_EQ(r1, 1);
    MPI_Allreduce(rank == 0 ? &zero : &one, &r1, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    CHECK_EQ(r1, 0);
    MPI_Allreduce(rank == 0 ? &one : &zero, &r1, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    CHECK_EQ(r1, 1);
    MPI_Allreduce(&one, &r1, 1, MPI_INT, MPI_LXOR, MPI_COMM_WORLD);
    CHECK_EQ(r1, size % 2);
    /* The logical operations on MPI_C_BOOL, element by element: rank r
     * gives {true, r == 0, false, r odd}. */
    {
        _Bool in[4] = {1, rank == 0, 0, rank % 2 == 1}, out[4];
        MPI_Allreduce(in, out, 4, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD);
        CHECK(out[0] == 1 && out[1] == (size == 1) && out[2] == 0 && out[3] == 0);
        MPI_Allreduce(in, out, 4, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD);
        CHECK(out[0] == 1 && out[1] == 1 && out[2] == 0 && out[3] == (size > 1));
        MPI_Allreduce(in, out, 4, MPI_C_BOOL, MPI_LXOR, MPI_COMM_WORLD);
        CHECK(out[0] == size % 2 && out[1] == 1 && out[2] == 0 && out[3] == (size / 2) % 2);
    }
    MPI_Allreduce(&bits, &rb, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
    CHECK_EQ(rb, (1 << size) - 1);
    MPI_Allreduce(&bits, &rb, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD);
    CHECK_EQ(rb, size == 1 ? 1 : 0);
    MPI_Allreduce(&bits, &rb, 1, MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
    CHECK_EQ(rb, (1 << size) - 1);
    unsigned char ub = (unsigned char)(1 << rank), ubr;
    MPI_Allreduce(&ub, &ubr, 1, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
    CHECK_EQ(ubr, (1 << size) - 1);
    double d = rank + 0.5, dr;
    MPI_Allreduce(&d, &dr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(dr == size * (size - 1) / 2.0 + size * 0.5);
    /* In place, long long, unsigned, float. */
    long long ll = (long long)rank << 40;
    MPI_Allreduce(MPI_IN_PLACE, &ll, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    CHECK_EQ(ll, (long long)(size - 1) << 40);
    uint64_t u = 3;
    MPI_Allreduce(MPI_IN_PLACE, &u, 1, MPI_UINT64_T, MPI_PROD, MPI_COMM_WORLD);
    uint64_t ue = 1;
    for (int i = 0; i < size; i++)
        ue *= 3;
    CHECK(u == ue);
    float f = (float)rank, fr;
    MPI_Allreduce(&f, &fr, 1, MPI_FLOAT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(fr == 0.0f);
    /* MAXLOC / MINLOC: values collide so the smaller index must win. */
    struct { double v; int i; } dl = {(double)(rank % 2), rank}, dlr;
    MPI_Allreduce(&dl, &dlr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(dlr.v == (size > 1 ? 1.0 : 0.0) && dlr.i == (size > 1 ? 1 : 0));
    MPI_Allreduce(&dl, &dlr, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(dlr.v == 0.0 && dlr.i == 0);
    struct { int v; int i; } il[2] = {{-rank, rank}, {rank * rank, rank}}, ilr[2];
    MPI_Allreduce(il, ilr, 2, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(ilr[0].v == -(size - 1) && ilr[0].i == size - 1);
    CHECK(ilr[1].v == 0 && ilr[1].i == 0);
    struct { short v; int i; } sl = {(short)(10 - rank), rank}, slr;
    MPI_Allreduce(&sl, &slr, 1, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK(slr.v == 10 && slr.i == 0);
    /* Bad op/type pairs are refused. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Allreduce(&d, &dr, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_EQ(MPI_Allreduce(&d, &dr, 1, MPI_DOUBLE, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* Gather, scatter, allgather, alltoall. */
    for (int root = 0; root < size; root++) {
        int mine[3] = {rank, rank * 2, rank * 3}, *all = malloc((size_t)size * 3 * sizeof(int));
        for (int i = 0; i < size * 3; i++)
            all[i] = -1;
        MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int i = 0; i < size; i++)
                CHECK(all[3 * i] == i && all[3 * i + 1] == 2 * i && all[3 * i + 2] == 3 * i);
        if (rank == root)
            for (int i = 0; i < size * 3; i++)
                all[i] = 1000 * (i / 3) + i;
        int part[3] = {-1, -1, -1};
        MPI_Scatter(all, 3, MPI_INT, part, 3, MPI_INT, root, MPI_COMM_WORLD);
        CHECK(part[0] == 1000 * rank + 3 * rank && part[2] == 1000 * rank + 3 * rank + 2);
        /* Gather in place at the root. */
        if (rank == root) {
            for (int i = 0; i < size * 3; i++)
                all[i] = -1;
            all[3 * root] = root;
            all[3 * root + 1] = 2 * root;
            all[3 * root + 2] = 3 * root;
            MPI_Gather(MPI_IN_PLACE, 3, MPI_INT, all, 3, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < size; i++)
                CHECK(all[3 * i] == i && all[3 * i + 2] == 3 * i);
        } else {
            MPI_Gather(mine, 3, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD);
        }
        free(all);
    }
    {
        long *ag = malloc((size_t)size * 2 * sizeof(long));
        long m2[2] = {rank * 10L, rank * 10L + 1};
        MPI_Allgather(m2, 2, MPI_LONG, ag, 2, MPI_LONG, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++)
            CHECK(ag[2 * i] == i * 10L && ag[2 * i + 1] == i * 10L + 1);
        for (int i = 0; i < size * 2; i++)
            ag[i] = i / 2 == rank ? m2[i % 2] : -5;
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 2, MPI_LONG, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++)
            CHECK(ag[2 * i] == i * 10L && ag[2 * i + 1] == i * 10L + 1);
        free(ag);
    }
    {
        /* Alltoall with blocks big enough for rendezvous. */
        int blk = 1500;
        int *s = malloc((size_t)size * blk * sizeof(int)), *r = malloc((size_t)size * blk * sizeof(int));
        for (int p = 0; p < size; p++)
            for (int i = 0; i < blk; i++)
                s[p * blk + i] = rank * 100000 + p * 1000 + i % 1000;
        MPI_Alltoall(s, blk, MPI_INT, r, blk, MPI_INT, MPI_COMM_WORLD);
        int ok = 1;
        for (int p = 0; p < size; p++)
            for (int i = 0; i < blk; i++)
                ok &= r[p * blk + i] == p * 100000 + rank * 1000 + i % 1000;
        CHECK(ok);
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, blk, MPI_INT, MPI_COMM_WORLD);
        ok = 1;
        for (int p = 0; p < size; p++)
            for (int i = 0; i < blk; i++)
                ok &= r[p * blk + i] == rank * 100000 + p * 1000 + i % 1000;
        CHECK(ok);
        free(s);
        free(r);
    }
    for (int i = 0; i < 50; i++)
        MPI_Barrier(MPI_COMM_WORLD);
}

/* --- MPI_ERRORS_RETURN: bad arguments -------------------------------------------------- */
static void test_errors(void)
{
    int v = 0, flag;
    MPI_Request r = MPI_REQUEST_NULL, bogus;
    MPI_Status st;
    MPI_Errhandler eh;
    char s[MPI_MAX_ERROR_STRING];
    int len, cls;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_EQ(MPI_Irecv(&v, 1, MPI_INT, 0, 1 << 30, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    CHECK_EQ(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Send(NULL, 5, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_EQ(MPI_Send(&v, 1, 12345, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    CHECK_EQ(MPI_Send(&v, 1, unc, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* not committed */
    MPI_Type_free(&unc);
    CHECK_EQ(MPI_Type_free(&unc), MPI_ERR_TYPE);
    /* Bad communicators report through MPI_COMM_WORLD's handler. */
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 0, 0x04000077), MPI_ERR_COMM);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm freed = c;
    MPI_Comm_free(&c);
    CHECK_EQ(MPI_Barrier(freed), MPI_ERR_COMM);
    /* MPI_Send's one-test path lets none of these through either. */
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 0, freed), MPI_ERR_COMM);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, (1 << 24), MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 1 << 30, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_EQ(MPI_Send(&v, -2000000000, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Send(NULL, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Send(&v, 1, MPI_CHAR - 1, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, (1 << 24) - 1, MPI_COMM_WORLD),
             MPI_SUCCESS);
    int sz;
    CHECK_EQ(MPI_Comm_size(MPI_COMM_NULL, &sz), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_free(&(MPI_Comm){MPI_COMM_WORLD}), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_group(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    {
        /* Group calls' arrays: one NULL of two is refused; no ranges for
         * no ranges is an empty group. */
        MPI_Group wg, eg = MPI_GROUP_NULL;
        int one = 0, out = -1, esz = -1;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        CHECK_EQ(MPI_Group_translate_ranks(wg, 1, NULL, wg, &out), MPI_ERR_ARG);
        CHECK_EQ(MPI_Group_translate_ranks(wg, 1, &one, wg, NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Group_range_incl(wg, 0, NULL, &eg), MPI_SUCCESS);
        CHECK(MPI_Group_size(eg, &esz) == MPI_SUCCESS && esz == 0);
        if (eg != MPI_GROUP_EMPTY && eg != MPI_GROUP_NULL)
            MPI_Group_free(&eg);
        MPI_Group_free(&wg);
    }
    {
        /* A negative color other than MPI_UNDEFINED, at every process
         * (refused before any agreement, so none waits for the others). */
        MPI_Comm bad = MPI_COMM_WORLD;
        CHECK_EQ(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &bad), MPI_ERR_ARG);
        CHECK(bad == MPI_COMM_WORLD);
    }
    /* Requests. */
    bogus = 0x14000123;
    CHECK_EQ(MPI_Wait(&bogus, &st), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Test(&bogus, &flag, &st), MPI_ERR_REQUEST);
    MPI_Request self_recv;
    MPI_Irecv(&v, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &self_recv);
    MPI_Isend(&v, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &r);
    MPI_Request old = r;
    MPI_Wait(&r, &st);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_EQ(MPI_Wait(&old, &st), MPI_ERR_REQUEST); /* freed by the wait */
    MPI_Request arr[2] = {MPI_REQUEST_NULL, old};
    CHECK_EQ(MPI_Waitall(2, arr, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    {
        /* More requests than the calls keep on their stack (64): the array
         * they allocate goes again when a handle is refused (ASan's leak
         * check). */
        MPI_Request many[100];
        int idx = -1, done = -1, idxs[100];
        for (int i = 0; i < 100; i++)
            many[i] = MPI_REQUEST_NULL;
        many[99] = old;
        CHECK_EQ(MPI_Waitall(100, many, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
        CHECK_EQ(MPI_Testall(100, many, &done, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
        CHECK_EQ(MPI_Waitany(100, many, &idx, &st), MPI_ERR_REQUEST);
        CHECK_EQ(MPI_Waitsome(100, many, &done, idxs, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    }
    /* No requests: a NULL array is fine with a count of 0, and only then. */
    CHECK_EQ(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_EQ(MPI_Waitall(1, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
    CHECK_EQ(MPI_Start(&bogus), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Request_free(&bogus), MPI_ERR_REQUEST);
    /* No place for the request: refused before anything starts. */
    CHECK_EQ(MPI_Isend(&v, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Irecv(&v, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Ibsend(&v, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    MPI_Wait(&self_recv, &st);
    /* A message to itself is delivered by the next poll, and a test that
     * polled reads the event queues again: the first MPI_Test completes
     * the receive (inline; the onload engine delivers in its own time). */
    {
        int got = -1, seven = 7, tflag = 0;
        const char *onload = getenv("ONIC_ONLOAD");
        MPI_Request rr, sr;
        MPI_Irecv(&got, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &rr);
        MPI_Isend(&seven, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &sr);
        CHECK_EQ(MPI_Test(&rr, &tflag, &st), MPI_SUCCESS);
        CHECK(tflag || (onload != NULL && strcmp(onload, "1") == 0));
        if (!tflag)
            MPI_Wait(&rr, &st);
        CHECK_EQ(got, 7);
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
    }
    /* Waiting on null requests. */
    r = MPI_REQUEST_NULL;
    CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
    int idx;
    MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    CHECK_EQ(MPI_Waitany(3, nulls, &idx, &st), MPI_SUCCESS);
    CHECK_EQ(idx, MPI_UNDEFINED);
    /* Groups, roots, ops, keys, errors' own calls. */
    CHECK_EQ(MPI_Bcast(&v, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Reduce(&v, &sz, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_EQ(MPI_Group_size(MPI_GROUP_NULL, &sz), MPI_ERR_GROUP);
    int *val;
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, 999, &val, &flag), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len), MPI_SUCCESS);
    CHECK(strstr(s, "TRUNCATE") != NULL && len == (int)strlen(s));
    CHECK_EQ(MPI_Error_class(MPI_ERR_RANK, &cls), MPI_SUCCESS);
    CHECK_EQ(cls, MPI_ERR_RANK);
    CHECK_EQ(MPI_Error_class(9999, &cls), MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, 77), MPI_ERR_ARG);
    /* A bad rank on another communicator uses that communicator's handler. */
    MPI_Comm_dup(MPI_COMM_WORLD, &c); /* inherits ERRORS_RETURN */
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, size + 1, 0, c), MPI_ERR_RANK);
    MPI_Comm_free(&c);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_THREAD_FUNNELED, or with --multiple MPI_THREAD_MULTIPLE: every test
 * then runs with the process's lock taken by each call. */
static int thread_asked = MPI_THREAD_FUNNELED;

/* --- the rest of the setup calls ---------------------------------------------------------- */
static void test_setup(void)
{
    int flag, prov, v, sv, len;
    char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];

    MPI_Initialized(&flag);
    CHECK(flag);
    MPI_Finalized(&flag);
    CHECK(!flag);
    /* Asked for by main, and provided as asked. */
    MPI_Query_thread(&prov);
    CHECK_EQ(prov, thread_asked);
    MPI_Get_version(&v, &sv);
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION);
    MPI_Get_processor_name(name, &len);
    CHECK(len > 0 && (int)strlen(name) == len);
    MPI_Get_library_version(lib, &len);
    CHECK(strstr(lib, "onic") != NULL);
    double t0 = MPI_Wtime();
    CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 0.01);
    CHECK(MPI_Wtime() >= t0);
    /* Wait forms over a mix of sends and receives to self and a neighbour. */
    int to = (rank + 1) % size, from = (rank - 1 + size) % size, s[4] = {1, 2, 3, 4}, r[4];
    MPI_Request q[8];
    for (int i = 0; i < 4; i++) {
        MPI_Irecv(&r[i], 1, MPI_INT, from, 20 + i, MPI_COMM_WORLD, &q[i]);
        MPI_Isend(&s[i], 1, MPI_INT, to, 20 + i, MPI_COMM_WORLD, &q[4 + i]);
    }
    /* Every index once, naming a request now null; a receive's status is
     * its own (indices 0-3 are the receives of tags 20-23). */
    int done = 0, idx[8], out, seen[8] = {0};
    MPI_Status sts[8];
    while (done < 8) {
        MPI_Waitsome(8, q, &out, idx, sts);
        CHECK(out >= 1 && done + out <= 8);
        for (int k = 0; k < out && k < 8; k++) {
            int i = idx[k];
            CHECK(i >= 0 && i < 8);
            if (i < 0 || i >= 8)
                continue;
            CHECK(!seen[i]);
            seen[i] = 1;
            CHECK(q[i] == MPI_REQUEST_NULL);
            if (i < 4) {
                CHECK_EQ(sts[k].MPI_SOURCE, from);
                CHECK_EQ(sts[k].MPI_TAG, 20 + i);
                CHECK_EQ(r[i], s[i]);
            }
        }
        done += out;
    }
    MPI_Waitsome(8, q, &out, idx, sts);
    CHECK_EQ(out, MPI_UNDEFINED);
    for (int i = 0; i < 4; i++) {
        MPI_Irecv(&r[i], 1, MPI_INT, from, 30 + i, MPI_COMM_WORLD, &q[i]);
        MPI_Isend(&s[i], 1, MPI_INT, to, 30 + i, MPI_COMM_WORLD, &q[4 + i]);
    }
    memset(seen, 0, sizeof(seen));
    for (int k = 0; k < 8; k++) {
        int i;
        MPI_Waitany(8, q, &i, &sts[0]);
        CHECK(i >= 0 && i < 8 && q[i] == MPI_REQUEST_NULL);
        if (i < 0 || i >= 8)
            continue;
        CHECK(!seen[i]);
        seen[i] = 1;
        if (i < 4) {
            CHECK_EQ(sts[0].MPI_SOURCE, from);
            CHECK_EQ(sts[0].MPI_TAG, 30 + i);
            CHECK_EQ(r[i], s[i]);
        }
    }
    for (int i = 0; i < 4; i++) {
        MPI_Irecv(&r[i], 1, MPI_INT, from, 40 + i, MPI_COMM_WORLD, &q[i]);
        MPI_Isend(&s[i], 1, MPI_INT, to, 40 + i, MPI_COMM_WORLD, &q[4 + i]);
    }
    int all = 0;
    while (!all)
        MPI_Testall(8, q, &all, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 8; i++)
        CHECK(q[i] == MPI_REQUEST_NULL);
    /* Testany: each request once, the receive's status its own; then,
     * nothing active, flag set and MPI_UNDEFINED. */
    r[0] = -1;
    MPI_Irecv(&r[0], 1, MPI_INT, from, 50, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(&s[1], 1, MPI_INT, to, 50, MPI_COMM_WORLD, &q[1]);
    memset(seen, 0, sizeof(seen));
    int got = 0;
    while (got < 2) {
        int i;
        MPI_Status ts;
        MPI_Testany(2, q, &i, &flag, &ts);
        CHECK(flag || i == MPI_UNDEFINED);
        if (!flag)
            continue;
        CHECK(i == 0 || i == 1);
        if (i != 0 && i != 1)
            break;
        CHECK(!seen[i] && q[i] == MPI_REQUEST_NULL);
        seen[i] = 1;
        if (i == 0) {
            CHECK_EQ(ts.MPI_SOURCE, from);
            CHECK_EQ(ts.MPI_TAG, 50);
            CHECK_EQ(r[0], 2);
            MPI_Get_count(&ts, MPI_INT, &len);
            CHECK_EQ(len, 1);
        }
        got++;
    }
    {
        int i = 0;
        MPI_Status ts;
        MPI_Testany(2, q, &i, &flag, &ts);
        CHECK(flag && i == MPI_UNDEFINED);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- many senders, wildcard receives -------------------------------------------------- */

/* Every other rank sends rank 0 a stream of eager and rendezvous messages
 * with sequence numbers; rank 0 takes them with ANY_SOURCE receives (ANY_TAG
 * or a tag), some posted early, most late. Whatever transport each sender
 * uses (shm on this node, ofi from another), each sender's messages must
 * arrive in the order sent, per tag and overall (MPI's non-overtaking).
 * Which tag an ANY_TAG receive takes depends on the senders' timing, so a
 * receive asks for a tag only while a message of it is still to come, else
 * for the other: asking for k % 2 regardless could wait for ever (the
 * ANY_TAG receives had taken every tag-0 message, and receive 240 * (size -
 * 1) - 2 asked for tag 0 with only senders' last tag-1 messages left -- a
 * deadlock of the program, which MPI allows, seen under load). */
static void test_fanin(void)
{
    enum { N = 240, BIG = 5000 };
    static unsigned char msg[BIG];

    if (size < 2)
        return;
    if (rank != 0) {
        /* Nonblocking: the receiver asks for one tag at times, and blocking
         * rendezvous sends of the other tag from every sender could leave
         * none of the tag it waits for (a deadlock MPI allows). */
        unsigned char (*out)[BIG] = malloc((size_t)N * BIG);
        MPI_Request *reqs = malloc(N * sizeof(*reqs));
        CHECK(out != NULL && reqs != NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < N && out != NULL && reqs != NULL; i++) {
            int len = i % 5 == 0 ? BIG : 8;
            memcpy(out[i], &i, sizeof(i));
            memset(out[i] + sizeof(i), rank, (size_t)len - sizeof(i));
            MPI_Isend(out[i], len, MPI_BYTE, 0, i % 2, MPI_COMM_WORLD, &reqs[i]);
        }
        if (out != NULL && reqs != NULL)
            CHECK(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        free(out);
        free(reqs);
    } else {
        int last[64][3], from = 0, nsrc = size - 1 < 64 ? size - 1 : 63;
        /* Messages of each tag still to come (each sender sends N / 2 of each). */
        long left[2] = {(long)(N / 2) * (size - 1), (long)(N / 2) * (size - 1)};
        unsigned char (*got)[N] = calloc(64, N);
        MPI_Request early[8];
        static unsigned char eb[8][BIG];
        MPI_Status st;

        for (int s = 0; s < 64; s++)
            last[s][0] = last[s][1] = last[s][2] = -1;
        for (int k = 0; k < 8; k++)
            MPI_Irecv(eb[k], BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &early[k]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < N * (size - 1); k++) {
            unsigned char *b = msg;
            int seq, cnt, src;
            if (k < 8) {
                MPI_Wait(&early[k], &st);
                b = eb[k];
            } else if (k % 3 == 0) {
                MPI_Recv(msg, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            } else {
                /* A tag: only messages with it, from anyone -- one that is
                 * still to come. */
                int want = left[k % 2] > 0 ? k % 2 : 1 - k % 2;
                MPI_Recv(msg, BIG, MPI_BYTE, MPI_ANY_SOURCE, want, MPI_COMM_WORLD, &st);
            }
            if (st.MPI_TAG == 0 || st.MPI_TAG == 1)
                left[st.MPI_TAG]--;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            memcpy(&seq, b, sizeof(seq));
            src = st.MPI_SOURCE;
            CHECK(src >= 1 && src < size);
            if (src < 1 || src > nsrc)
                continue;
            CHECK_EQ(cnt, seq % 5 == 0 ? BIG : 8);
            CHECK_EQ(b[cnt - 1], src);
            CHECK_EQ(st.MPI_TAG, seq % 2);
            /* Nothing earlier of this sender that this receive could have
             * taken is still waiting: with ANY_TAG none at all, with a tag
             * none of that tag. */
            CHECK(!got[src][seq]);
            got[src][seq] = 1;
            for (int e = 0; e < seq; e++)
                if (!got[src][e] && (k < 8 || k % 3 == 0 || e % 2 == st.MPI_TAG)) {
                    CHECK(got[src][e]);
                    break;
                }
            last[src][0] = seq > last[src][0] ? seq : last[src][0];
            from |= 1 << (src < 30 ? src : 30);
        }
        for (int s = 1; s <= nsrc; s++)
            CHECK_EQ(last[s][0], N - 1);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- rendezvous messages put whole ------------------------------------------------------ */
/* A message above the eager limit goes as one put of the whole buffer: a
 * posted receive takes it directly (the sender completes on the ack); an
 * unposted one keeps only its header and pulls later (the sender completes
 * on the last get). Every case checks data, count, source and tag. */
#define RNDV_N 300000 /* well above the eager limit and one transport message */

static void rndv_fill(unsigned char *b, size_t n, long long seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(seed, i);
}

static int rndv_same(const unsigned char *b, size_t n, long long seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern(seed, i))
            return 0;
    return 1;
}

static void rndv_status(const MPI_Status *st, int source, int tag, int count)
{
    int cnt;

    MPI_Get_count(st, MPI_BYTE, &cnt);
    CHECK_EQ(st->MPI_SOURCE, source);
    CHECK_EQ(st->MPI_TAG, tag);
    CHECK_EQ(cnt, count);
}

static void test_rndv(void)
{
    unsigned char *s = malloc(RNDV_N), *r = malloc(RNDV_N);
    MPI_Request rq, sq;
    MPI_Status st;
    int rc, flag;

    if (size < 2) {
        free(s);
        free(r);
        return;
    }
    /* Posted first, then sent: lands directly. */
    if (rank == 0) {
        memset(r, 0, RNDV_N);
        MPI_Irecv(r, RNDV_N, MPI_BYTE, 1, 200, MPI_COMM_WORLD, &rq);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&rq, &st);
        rndv_status(&st, 1, 200, RNDV_N);
        CHECK(rndv_same(r, RNDV_N, 200));
    } else if (rank == 1) {
        rndv_fill(s, RNDV_N, 200);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(s, RNDV_N, MPI_BYTE, 0, 200, MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Sent first, probed, then received: kept as a header, pulled. */
    if (rank == 1) {
        rndv_fill(s, RNDV_N, 201);
        MPI_Isend(s, RNDV_N, MPI_BYTE, 0, 201, MPI_COMM_WORLD, &sq);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&sq, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
        int cnt;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Probe(1, 201, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK_EQ(cnt, RNDV_N);
        CHECK_EQ(st.MPI_SOURCE, 1);
        memset(r, 0, RNDV_N);
        MPI_Recv(r, RNDV_N, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        rndv_status(&st, 1, 201, RNDV_N);
        CHECK(rndv_same(r, RNDV_N, 201));
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* A posted receive shorter than the message, and one of zero bytes:
     * truncated, and the sender still completes. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int cap = RNDV_N / 3; cap >= 0; cap = cap > 0 ? 0 : -1) {
        if (rank == 0) {
            memset(r, 0, RNDV_N);
            MPI_Irecv(r, cap, MPI_BYTE, 1, 202, MPI_COMM_WORLD, &rq);
            MPI_Barrier(MPI_COMM_WORLD);
            st.MPI_ERROR = -77;
            rc = MPI_Wait(&rq, &st);
            CHECK_EQ(rc, MPI_ERR_TRUNCATE);
            CHECK_EQ(st.MPI_ERROR, -77); /* left alone by a single completion */
            rndv_status(&st, 1, 202, cap);
            CHECK(rndv_same(r, (size_t)cap, 202));
            CHECK_EQ(r[cap], 0);
        } else if (rank == 1) {
            rndv_fill(s, RNDV_N, 202);
            MPI_Barrier(MPI_COMM_WORLD);
            CHECK_EQ(MPI_Send(s, RNDV_N, MPI_BYTE, 0, 202, MPI_COMM_WORLD), MPI_SUCCESS);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* A large synchronous send completes only once its receive is posted,
     * whether it then lands directly or is pulled. */
    for (int posted = 0; posted < 2; posted++) {
        if (rank == 1) {
            rndv_fill(s, RNDV_N, 203 + posted);
            if (posted)
                MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted */
            MPI_Issend(s, RNDV_N, MPI_BYTE, 0, 203, MPI_COMM_WORLD, &sq);
            if (!posted) {
                double t0 = MPI_Wtime();
                int early = 0;
                while (MPI_Wtime() - t0 < 0.05) {
                    MPI_Test(&sq, &flag, MPI_STATUS_IGNORE);
                    early |= flag;
                    if (flag)
                        break;
                }
                CHECK(!early);
                MPI_Barrier(MPI_COMM_WORLD);
            }
            MPI_Wait(&sq, MPI_STATUS_IGNORE);
        } else if (rank == 0) {
            memset(r, 0, RNDV_N);
            if (posted)
                MPI_Irecv(r, RNDV_N, MPI_BYTE, 1, 203, MPI_COMM_WORLD, &rq);
            MPI_Barrier(MPI_COMM_WORLD);
            if (!posted)
                MPI_Irecv(r, RNDV_N, MPI_BYTE, 1, 203, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, &st);
            rndv_status(&st, 1, 203, RNDV_N);
            CHECK(rndv_same(r, RNDV_N, 203 + posted));
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* ANY_SOURCE receives of large and eager messages interleaved from one
     * sender, some posted before the messages come, some after: taken in
     * send order. */
    {
        enum { K = 24 };
        unsigned char *rb[K];
        MPI_Request q[K];
        MPI_Status sts[K];
        if (rank == 1) {
            unsigned char *sb[K];
            for (int i = 0; i < K; i++) {
                size_t n = i % 2 ? 100000 + (size_t)i : 16 + (size_t)i;
                sb[i] = malloc(n);
                rndv_fill(sb[i], n, 300 + i);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < K; i++)
                MPI_Isend(sb[i], i % 2 ? 100000 + i : 16 + i, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
                          &q[i]);
            MPI_Waitall(K, q, MPI_STATUSES_IGNORE);
            for (int i = 0; i < K; i++)
                free(sb[i]);
        } else if (rank == 0) {
            for (int i = 0; i < K; i++)
                rb[i] = calloc(1, 100000 + K);
            for (int i = 0; i < K / 2; i++)
                MPI_Irecv(rb[i], 100000 + K, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &q[i]);
            MPI_Barrier(MPI_COMM_WORLD);
            usleep(20000); /* let the rest arrive unexpected */
            for (int i = K / 2; i < K; i++)
                MPI_Irecv(rb[i], 100000 + K, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &q[i]);
            MPI_Waitall(K, q, sts);
            for (int i = 0; i < K; i++) {
                int n = i % 2 ? 100000 + i : 16 + i;
                rndv_status(&sts[i], 1, 7, n);
                CHECK(rndv_same(rb[i], (size_t)n, 300 + i));
                free(rb[i]);
            }
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Many large Isends to rank 0 from every other rank before any receive
     * is posted, received in reverse tag order per sender. */
    {
        enum { M = 40, L = 70000 };
        if (rank != 0) {
            unsigned char *sb = malloc((size_t)M * L);
            MPI_Request q[M];
            for (int t = 0; t < M; t++) {
                rndv_fill(sb + (size_t)t * L, L, rank * 1000 + t);
                MPI_Isend(sb + (size_t)t * L, L, MPI_BYTE, 0, t, MPI_COMM_WORLD, &q[t]);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Waitall(M, q, MPI_STATUSES_IGNORE);
            free(sb);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            for (int src = 1; src < size; src++)
                for (int t = M - 1; t >= 0; t--) {
                    memset(r, 0, L);
                    MPI_Recv(r, L, MPI_BYTE, src, t, MPI_COMM_WORLD, &st);
                    rndv_status(&st, src, t, L);
                    CHECK(rndv_same(r, L, src * 1000 + t));
                }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Sendrecv_replace of a large message around a ring: every rank sends
     * while its receive may or may not be posted yet. */
    {
        int to = (rank + 1) % size, from = (rank - 1 + size) % size;
        rndv_fill(s, RNDV_N, 500 + rank);
        MPI_Sendrecv_replace(s, RNDV_N, MPI_BYTE, to, 17, from, 17, MPI_COMM_WORLD, &st);
        rndv_status(&st, from, 17, RNDV_N);
        CHECK(rndv_same(s, RNDV_N, 500 + from));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* MPI_Cancel of a receive racing a large message into it: cancelled
     * (the message then goes to the next receive) or not (it completes),
     * never both, and no data is lost. */
    for (int i = 0; i < 50; i++) {
        if (rank == 1) {
            rndv_fill(s, RNDV_N / 4, 600 + i);
            MPI_Send(s, RNDV_N / 4, MPI_BYTE, 0, 18, MPI_COMM_WORLD);
        } else if (rank == 0) {
            int cancelled;
            memset(r, 0, RNDV_N / 4);
            MPI_Irecv(r, RNDV_N / 4, MPI_BYTE, 1, 18, MPI_COMM_WORLD, &rq);
            for (int k = 0; k < i % 7; k++)
                MPI_Iprobe(1, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); /* progress */
            MPI_Cancel(&rq);
            MPI_Wait(&rq, &st);
            MPI_Test_cancelled(&st, &cancelled);
            if (cancelled)
                MPI_Recv(r, RNDV_N / 4, MPI_BYTE, 1, 18, MPI_COMM_WORLD, &st);
            rndv_status(&st, 1, 18, RNDV_N / 4);
            CHECK(rndv_same(r, RNDV_N / 4, 600 + i));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(s);
    free(r);
}

/* --- small messages checked against MPI's matching rules --------------------------------- *
 * smallburst, refill and cancelrace send small messages whose payload names
 * their sender and sequence number, and check every receive against MPI's
 * rules rather than against one expected outcome (which wildcards and timing
 * leave open): each message is taken exactly once, by a receive whose source,
 * tag and communicator it matches, and nothing overtakes -- if a receive R
 * took message m of a sender, every earlier message of that sender on that
 * communicator that R could also have matched was taken by a receive posted
 * before R (MPI 3.1, 3.5: both non-overtaking rules). Messages and receives
 * come from a seeded generator; a failure prints the test's seed, and
 * MPI_TESTS_SEED=<seed> runs the same mix again (timing aside). */

static uint64_t rnd_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static int rnd_below(uint64_t *s, int n)
{
    return (int)(rnd_next(s) % (uint64_t)n);
}

/* A value fixed by (seed, a, b, c): what a sender and its receiver both compute. */
static uint64_t rnd_of(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = seed ^ (a * UINT64_C(0x100000001b3)) ^ (b << 20) ^ (c << 44);

    rnd_next(&s);
    return rnd_next(&s);
}

static uint64_t test_seed(const char *name)
{
    const char *e = getenv("MPI_TESTS_SEED");
    uint64_t h = UINT64_C(1469598103934665603);

    if (e != NULL && *e != '\0')
        return strtoull(e, NULL, 0);
    for (; *name != '\0'; name++)
        h = (h ^ (unsigned char)*name) * UINT64_C(1099511628211);
    return h;
}

/* The payload: sequence number, a check word naming sender and sequence,
 * then (longer messages) bytes derived from the check word. */
static uint32_t msg_check(uint64_t seed, int src, int seq)
{
    return (uint32_t)rnd_of(seed, 7, (uint64_t)src, (uint64_t)seq) | 1u;
}

static void msg_fill(unsigned char *b, size_t len, uint64_t seed, int src, int seq)
{
    uint32_t w[2] = {(uint32_t)seq, msg_check(seed, src, seq)};

    memcpy(b, w, sizeof(w));
    for (size_t j = sizeof(w); j < len; j++)
        b[j] = pattern(w[1], j);
}

/* Who took what: the receives' criteria by post number, the messages'
 * receives by sender and sequence number. */
typedef struct ledger {
    const char  *test;
    uint64_t     seed0, seed; /* the test's seed; this round's */
    int          round;
    int          nsend, n;   /* senders are ranks 1..nsend, n messages each */
    signed char *tag, *comm; /* [(src - 1) * n + seq]: the message's tag and communicator */
    long        *got;        /* [(src - 1) * n + seq]: post number of its receive, or -1 */
    signed char *rtag;       /* [post]: the receive's tag, -1 for MPI_ANY_TAG */
    long         posts, cap, taken;
    size_t     (*len)(int seq); /* the message's length; NULL: 8 bytes */
    int          errors;
} ledger_t;

static void ledger_init(ledger_t *L, const char *test, uint64_t seed0, int round, int nsend,
                        int n)
{
    memset(L, 0, sizeof(*L));
    L->test = test;
    L->seed0 = seed0;
    L->round = round;
    L->seed = seed0 + (uint64_t)round;
    L->nsend = nsend;
    L->n = n;
    L->tag = malloc((size_t)nsend * (size_t)n);
    L->comm = calloc((size_t)nsend * (size_t)n, 1);
    L->got = malloc((size_t)nsend * (size_t)n * sizeof(*L->got));
    for (long i = 0; i < (long)nsend * n; i++)
        L->got[i] = -1;
}

static void ledger_free(ledger_t *L)
{
    free(L->tag);
    free(L->comm);
    free(L->got);
    free(L->rtag);
}

static void ledger_fail(ledger_t *L, const char *fmt, ...)
{
    va_list ap;

    failed++;
    if (L->errors++ >= 10)
        return;
    fprintf(stderr, "rank %d: %s (MPI_TESTS_SEED=%#llx, round %d): ", rank, L->test,
            (unsigned long long)L->seed0, L->round);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* A receive is posted with tag criterion `tag` (-1: any): its post number. */
static long ledger_post(ledger_t *L, int tag)
{
    if (L->posts == L->cap) {
        L->cap = L->cap ? 2 * L->cap : 4096;
        L->rtag = realloc(L->rtag, (size_t)L->cap);
    }
    L->rtag[L->posts] = (signed char)tag;
    return L->posts++;
}

/* Receive `post` (source src, tag tag, -1 for any, on communicator comm)
 * completed with st and buf: check it and record it. The message's index,
 * or -1 if it names none. */
static long ledger_take(ledger_t *L, long post, int comm, int src, int tag, const MPI_Status *st,
                        const unsigned char *buf)
{
    uint32_t w[2];
    int cnt, s = st->MPI_SOURCE, seq;
    long i;

    MPI_Get_count(st, MPI_BYTE, &cnt);
    if (s < 1 || s > L->nsend || cnt < 8) {
        ledger_fail(L, "receive %ld: source %d, %d bytes", post, s, cnt);
        return -1;
    }
    memcpy(w, buf, sizeof(w));
    seq = (int)w[0];
    if (seq < 0 || seq >= L->n || w[1] != msg_check(L->seed, s, seq)) {
        ledger_fail(L, "receive %ld: a message from %d that rank %d never sent (seq %d, check "
                    "%#x)", post, s, s, seq, w[1]);
        return -1;
    }
    i = (long)(s - 1) * L->n + seq;
    if ((size_t)cnt != (L->len ? L->len(seq) : 8) || st->MPI_TAG != L->tag[i] ||
        comm != L->comm[i] || (src >= 0 && src != s) || (tag >= 0 && tag != st->MPI_TAG))
        ledger_fail(L, "receive %ld (source %d, tag %d, comm %d) took message %d of rank %d "
                    "(tag %d, comm %d, %zu bytes) as %d bytes, tag %d", post, src, tag, comm, seq,
                    s, L->tag[i], L->comm[i], L->len ? L->len(seq) : (size_t)8, cnt,
                    st->MPI_TAG);
    else if (L->len != NULL) {
        size_t bad = 0;
        for (size_t j = 8; j < (size_t)cnt && bad == 0; j++)
            if (buf[j] != pattern(w[1], j))
                bad = j;
        if (bad)
            ledger_fail(L, "message %d of rank %d differs at byte %zu", seq, s, bad);
    }
    if (L->got[i] >= 0) {
        ledger_fail(L, "message %d of rank %d taken twice: by receives %ld and %ld", seq, s,
                    L->got[i], post);
        return -1;
    }
    L->got[i] = post;
    L->taken++;
    return i;
}

/* Every message taken once, and no receive took a message while an earlier
 * one of the same sender and communicator that it also matched was left to
 * a receive posted later. */
static void ledger_check(ledger_t *L, int ncomm, int ntags)
{
    long *latest = malloc((size_t)ncomm * (size_t)ntags * sizeof(*latest));

    for (int s = 1; s <= L->nsend; s++) {
        for (int k = 0; k < ncomm * ntags; k++)
            latest[k] = -1; /* the latest receive to take an earlier message */
        for (int seq = 0; seq < L->n; seq++) {
            long i = (long)(s - 1) * L->n + seq, p = L->got[i], before = -1;
            int c = L->comm[i], t = L->tag[i];
            if (p < 0) {
                ledger_fail(L, "message %d of rank %d (tag %d, comm %d) never received", seq, s,
                            t, c);
                continue;
            }
            if (L->rtag[p] < 0) {
                for (int u = 0; u < ntags; u++)
                    if (latest[c * ntags + u] > before)
                        before = latest[c * ntags + u];
            } else {
                before = latest[c * ntags + t];
            }
            if (before > p)
                ledger_fail(L, "message %d of rank %d (tag %d, comm %d) went to receive %ld, "
                            "though an earlier message of that rank which receive %ld also "
                            "matched was left to receive %ld, posted after it", seq, s, t, c,
                            p, p, before);
            if (p > latest[c * ntags + t])
                latest[c * ntags + t] = p;
        }
    }
    free(latest);
}

/* Pending receives that always find their messages. With receives of a
 * laminar family of match sets pending -- (source, tag), (source, any) and
 * (any, any); or (source, tag), (any, tag) and (any, any) -- no order of
 * matching starves one if, for every set X of the family, the receives
 * whose sets meet X are no more than the messages in X not yet taken. The
 * family changes only when nothing is pending. */
typedef struct rplan {
    int  nsend, ntags, ncomm;
    int  by_tag;  /* 0: (s,t) (s,*) (*,*); 1: (s,t) (*,t) (*,*) */
    int *left;    /* [c][s][t], s = src - 1: messages not yet taken */
    int *pend;    /* [c][s][t], s = nsend or t = ntags for any: receives pending */
    int  npend;
} rplan_t;

static int *rplan_left(rplan_t *P, int c, int s, int t)
{
    return &P->left[(c * P->nsend + s) * P->ntags + t];
}

static int *rplan_pend(rplan_t *P, int c, int s, int t)
{
    return &P->pend[(c * (P->nsend + 1) + s) * (P->ntags + 1) + t];
}

static void rplan_init(rplan_t *P, int nsend, int ntags, int ncomm, const ledger_t *L)
{
    P->nsend = nsend;
    P->ntags = ntags;
    P->ncomm = ncomm;
    P->by_tag = 0;
    P->npend = 0;
    P->left = calloc((size_t)ncomm * nsend * ntags, sizeof(int));
    P->pend = calloc((size_t)ncomm * (nsend + 1) * (ntags + 1), sizeof(int));
    for (long i = 0; i < (long)nsend * L->n; i++)
        (*rplan_left(P, L->comm[i], (int)(i / L->n), L->tag[i]))++;
}

static void rplan_free(rplan_t *P)
{
    free(P->left);
    free(P->pend);
}

/* Messages in, and receives meeting, the set (s or any, t or any) of comm c. */
static int rplan_room(rplan_t *P, int c, int s, int t)
{
    int msgs = 0, recvs = 0;

    for (int a = 0; a < P->nsend; a++)
        for (int b = 0; b < P->ntags; b++)
            if ((s == P->nsend || s == a) && (t == P->ntags || t == b))
                msgs += *rplan_left(P, c, a, b);
    for (int a = 0; a <= P->nsend; a++)
        for (int b = 0; b <= P->ntags; b++)
            if ((s == P->nsend || a == P->nsend || s == a) &&
                (t == P->ntags || b == P->ntags || t == b))
                recvs += *rplan_pend(P, c, a, b);
    return msgs - recvs;
}

/* May a receive (s or any, t or any) on comm c be posted? If so it is
 * counted as pending. */
static int rplan_add(rplan_t *P, int c, int s, int t)
{
    int ok = 1;

    if (s < P->nsend && t == P->ntags && P->by_tag)
        return 0; /* (s,*) outside the family */
    if (s == P->nsend && t < P->ntags && !P->by_tag)
        return 0; /* (*,t) outside the family */
    (*rplan_pend(P, c, s, t))++;
    if (rplan_room(P, c, P->nsend, P->ntags) < 0)
        ok = 0;
    for (int a = 0; a < P->nsend && ok; a++) {
        if (!P->by_tag && rplan_room(P, c, a, P->ntags) < 0)
            ok = 0;
        for (int b = 0; b < P->ntags && ok; b++)
            if ((P->by_tag && a == 0 && rplan_room(P, c, P->nsend, b) < 0) ||
                rplan_room(P, c, a, b) < 0)
                ok = 0;
    }
    if (!ok)
        (*rplan_pend(P, c, s, t))--;
    else
        P->npend++;
    return ok;
}

/* A receive (s, t as posted) took message i of the ledger (or, if i < 0,
 * something unknown: then only the receive is taken off). */
static void rplan_done(rplan_t *P, const ledger_t *L, int c, int s, int t, long i)
{
    (*rplan_pend(P, c, s, t))--;
    P->npend--;
    if (i >= 0)
        (*rplan_left(P, L->comm[i], (int)(i / L->n), L->tag[i]))--;
}

/* A random receive the plan allows, as (c, s, t) with s = nsend / t = ntags
 * for any; 0 if none of a few tries was allowed. */
static int rplan_pick(rplan_t *P, uint64_t *r, int *c_p, int *s_p, int *t_p)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        int c = rnd_below(r, P->ncomm), kind = rnd_below(r, 4);
        int s = rnd_below(r, P->nsend), t = rnd_below(r, P->ntags);
        if (kind == 0)
            s = P->nsend, t = P->ntags;         /* any source, any tag */
        else if (kind == 1 && P->by_tag)
            s = P->nsend;                       /* any source, a tag */
        else if (kind == 1)
            t = P->ntags;                       /* a source, any tag */
        if (rplan_add(P, c, s, t)) {
            *c_p = c;
            *s_p = s;
            *t_p = t;
            return 1;
        }
    }
    return 0;
}

/* Thousands of 8-byte messages from each sender, tags 0..3 on two
 * communicators, received by rank 0 with a seeded mix of exact and wildcard
 * receives: some posted before the senders start, most while they send
 * (batches of posts between drains by MPI_Testany, MPI_Waitany and
 * MPI_Waitsome), some after pauses that leave messages unexpected. */
static void test_smallburst(void)
{
    enum { N = 5000, TAGS = 4, W = 1024, FIRST = 400 };
    const uint64_t seed = test_seed("smallburst");
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_NULL};

    if (size < 2)
        return;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    if (rank != 0) {
        unsigned char (*pay)[8] = malloc((size_t)N * 8);
        MPI_Request *q = malloc((size_t)N * sizeof(*q));
        uint64_t r = seed ^ (uint64_t)rank;
        for (int i = 0; i < N; i++)
            msg_fill(pay[i], 8, seed, rank, i);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < N; i++) {
            uint64_t v = rnd_of(seed, 1, (uint64_t)rank, (uint64_t)i);
            MPI_Isend(pay[i], 8, MPI_BYTE, 0, (int)(v % TAGS), comms[(v >> 8) & 1], &q[i]);
            if (rnd_below(&r, 600) == 0)
                usleep(200 + (useconds_t)rnd_below(&r, 1500)); /* the receiver runs ahead */
        }
        MPI_Waitall(N, q, MPI_STATUSES_IGNORE);
        free(pay);
        free(q);
    } else {
        static MPI_Request rq[W];
        static MPI_Status sts[W];
        static int idx[W];
        static unsigned char rb[W][16];
        static struct { long post; int c, s, t; } ri[W];
        int free_slots[W], nfree = W, nsend = size - 1, sleeps = 0, phase_left;
        long total = (long)nsend * N, done = 0;
        uint64_t r = seed;
        ledger_t L;
        rplan_t P;

        ledger_init(&L, "smallburst", seed, 0, nsend, N);
        for (long i = 0; i < total; i++) {
            uint64_t v = rnd_of(seed, 1, (uint64_t)(i / N + 1), (uint64_t)(i % N));
            L.tag[i] = (signed char)(v % TAGS);
            L.comm[i] = (signed char)((v >> 8) & 1);
        }
        rplan_init(&P, nsend, TAGS, 2, &L);
        for (int k = 0; k < W; k++) {
            rq[k] = MPI_REQUEST_NULL;
            free_slots[k] = W - 1 - k;
        }
        phase_left = FIRST;
        for (int step = 0; done < total; step++) {
            int action = step == 0 ? 0 : rnd_below(&r, 16), out = 0;
            if (phase_left == 0) {
                /* A new family of receives: first every pending one completes. */
                while (P.npend > 0) {
                    MPI_Waitsome(W, rq, &out, idx, sts);
                    for (int k = 0; k < out; k++) {
                        int j = idx[k];
                        long i = ledger_take(&L, ri[j].post, ri[j].c, ri[j].s, ri[j].t,
                                             &sts[k], rb[j]);
                        rplan_done(&P, &L, ri[j].c, ri[j].s < 0 ? nsend : ri[j].s - 1,
                                   ri[j].t < 0 ? TAGS : ri[j].t, i);
                        free_slots[nfree++] = j;
                        done++;
                    }
                }
                P.by_tag = !P.by_tag;
                phase_left = 200 + rnd_below(&r, 1500);
                continue;
            }
            if (action < 8) {
                int batch = step == 0 ? FIRST : 1 + rnd_below(&r, 64), c, s, t;
                for (int k = 0; k < batch && nfree > 0 && phase_left > 0; k++) {
                    int j;
                    if (!rplan_pick(&P, &r, &c, &s, &t))
                        break;
                    j = free_slots[--nfree];
                    ri[j].c = c;
                    ri[j].s = s == nsend ? -1 : s + 1;
                    ri[j].t = t == TAGS ? -1 : t;
                    ri[j].post = ledger_post(&L, ri[j].t);
                    memset(rb[j], 0xee, sizeof(rb[j]));
                    MPI_Irecv(rb[j], sizeof(rb[j]), MPI_BYTE,
                              ri[j].s < 0 ? MPI_ANY_SOURCE : ri[j].s,
                              ri[j].t < 0 ? MPI_ANY_TAG : ri[j].t, comms[c], &rq[j]);
                    phase_left--;
                }
                if (step == 0)
                    MPI_Barrier(MPI_COMM_WORLD); /* those were posted before any send */
                continue;
            }
            if (action == 15 && sleeps < 25) {
                usleep(1000 + (useconds_t)rnd_below(&r, 2000)); /* arrivals go unexpected */
                sleeps++;
                continue;
            }
            if (P.npend == 0)
                continue;
            if (action < 12) {
                /* what has completed, without waiting (onic has no MPI_Testsome) */
                for (int flag = 1; out < 64 && flag;) {
                    MPI_Testany(W, rq, &idx[out], &flag, &sts[out]);
                    flag = flag && idx[out] != MPI_UNDEFINED;
                    out += flag;
                }
            } else if (action < 14) {
                MPI_Waitany(W, rq, &idx[0], &sts[0]);
                out = 1;
            } else {
                MPI_Waitsome(W, rq, &out, idx, sts);
            }
            for (int k = 0; k < out; k++) {
                int j = idx[k];
                long i = ledger_take(&L, ri[j].post, ri[j].c, ri[j].s, ri[j].t, &sts[k], rb[j]);
                rplan_done(&P, &L, ri[j].c, ri[j].s < 0 ? nsend : ri[j].s - 1,
                           ri[j].t < 0 ? TAGS : ri[j].t, i);
                free_slots[nfree++] = j;
                done++;
            }
            if (L.errors > 20)
                break;
        }
        if (L.errors == 0) {
            int flag;
            CHECK_EQ(P.npend, 0);
            ledger_check(&L, 2, TAGS);
            for (int c = 0; c < 2; c++) {
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &flag, MPI_STATUS_IGNORE);
                CHECK(!flag);
            }
        }
        ledger_free(&L);
        rplan_free(&P);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&comms[1]);
}

/* ONIC_EAGER_CREDITS as the library reads it (auto otherwise: 256 shares
 * of 2 KiB, halved while the job's would take more than 4 MiB, at least
 * 64): the number of 8-byte messages one sender's credit covers at a
 * receiver. */
static long eager_credit_msgs(void)
{
    const char *c = getenv("ONIC_EAGER_CREDITS"), *l = getenv("ONIC_EAGER_LIMIT");
    long credits = 256;
    long limit = l != NULL && *l ? strtol(l, NULL, 0) : 16384;

    if (c != NULL && *c && strcmp(c, "auto") != 0)
        credits = strtol(c, NULL, 0);
    else
        while (credits > 64 && (long)size * credits * 2048 > 4l << 20)
            credits /= 2;
    limit = limit > 2048 ? 2048 : limit;
    return credits * (limit < 64 ? 64 : limit) / 64;
}

static size_t refill_len(int seq)
{
    return seq % 16 == 5 ? 256 + (size_t)(seq * 37 % 1700) : 8;
}

/* Unexpected space used up and given back, round after round: every sender
 * sends rank 0 far more small messages than its eager credit covers (the
 * credit's worth of 8-byte messages and 500 more, one in 16 of them up to
 * 1955 bytes: about 2.5 times what the credit takes eagerly), with
 * MPI_Isend, while rank 0 receives none -- it waits only for a "sent them
 * all" message on another communicator, so every one of them is unexpected:
 * its unexpected buffers fill, the rest come as rendezvous requests, every
 * header is kept. Then rank 0 takes them all with a seeded mix of blocking
 * receives and batches of nonblocking ones, exact and wildcard, and the
 * next round reuses what this one gave back. */
static void test_refill(void)
{
    enum { ROUNDS = 3, TAGS = 3, BATCH = 64, MAXLEN = 2048 };
    const uint64_t seed0 = test_seed("refill");
    const int n = (int)(eager_credit_msgs() + 500);
    MPI_Comm side;

    if (size < 2)
        return;
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    for (int round = 0; round < ROUNDS; round++) {
        const uint64_t seed = seed0 + (uint64_t)round;
        if (rank != 0) {
            size_t *at = malloc(((size_t)n + 1) * sizeof(*at));
            MPI_Request *q = malloc(((size_t)n + 1) * sizeof(*q));
            unsigned char *b;
            int one = 1;
            at[0] = 0;
            for (int i = 0; i < n; i++)
                at[i + 1] = at[i] + refill_len(i);
            b = malloc(at[n]);
            for (int i = 0; i < n; i++)
                msg_fill(b + at[i], refill_len(i), seed, rank, i);
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < n; i++)
                MPI_Isend(b + at[i], (int)refill_len(i), MPI_BYTE, 0,
                          (int)(rnd_of(seed, 2, (uint64_t)rank, (uint64_t)i) % TAGS),
                          MPI_COMM_WORLD, &q[i]);
            MPI_Isend(&one, 1, MPI_INT, 0, 0, side, &q[n]);
            MPI_Waitall(n + 1, q, MPI_STATUSES_IGNORE);
            free(b);
            free(at);
            free(q);
        } else {
            static unsigned char rb[BATCH][MAXLEN];
            static struct { long post; int s, t; } ri[BATCH];
            MPI_Request q[BATCH], *sent;
            MPI_Status sts[BATCH];
            int nsend = size - 1, flag, *ones;
            long total = (long)nsend * n, done = 0;
            uint64_t r = seed;
            ledger_t L;
            rplan_t P;

            ledger_init(&L, "refill", seed0, round, nsend, n);
            L.len = refill_len;
            for (long i = 0; i < total; i++)
                L.tag[i] = (signed char)(rnd_of(seed, 2, (uint64_t)(i / n + 1),
                                                (uint64_t)(i % n)) % TAGS);
            rplan_init(&P, nsend, TAGS, 1, &L);
            sent = malloc((size_t)nsend * sizeof(*sent));
            ones = malloc((size_t)nsend * sizeof(*ones));
            for (int s = 1; s <= nsend; s++)
                MPI_Irecv(&ones[s - 1], 1, MPI_INT, s, 0, side, &sent[s - 1]);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Waitall(nsend, sent, MPI_STATUSES_IGNORE);
            /* Everything was sent and nothing received yet. */
            while (done < total && L.errors <= 20) {
                int c, s, t, k = 0;
                if (rnd_below(&r, 8) == 0) {
                    /* one blocking receive */
                    if (!rplan_pick(&P, &r, &c, &s, &t))
                        continue;
                    ri[0].s = s == nsend ? -1 : s + 1;
                    ri[0].t = t == TAGS ? -1 : t;
                    ri[0].post = ledger_post(&L, ri[0].t);
                    MPI_Recv(rb[0], MAXLEN, MPI_BYTE, ri[0].s < 0 ? MPI_ANY_SOURCE : ri[0].s,
                             ri[0].t < 0 ? MPI_ANY_TAG : ri[0].t, MPI_COMM_WORLD, &sts[0]);
                    rplan_done(&P, &L, 0, s, t, ledger_take(&L, ri[0].post, 0, ri[0].s,
                                                              ri[0].t, &sts[0], rb[0]));
                    done++;
                    continue;
                }
                /* a batch, completed all at once or one at a time */
                int want = 1 + rnd_below(&r, BATCH);
                for (; k < want && rplan_pick(&P, &r, &c, &s, &t); k++) {
                    ri[k].s = s == nsend ? -1 : s + 1;
                    ri[k].t = t == TAGS ? -1 : t;
                    ri[k].post = ledger_post(&L, ri[k].t);
                    MPI_Irecv(rb[k], MAXLEN, MPI_BYTE, ri[k].s < 0 ? MPI_ANY_SOURCE : ri[k].s,
                              ri[k].t < 0 ? MPI_ANY_TAG : ri[k].t, MPI_COMM_WORLD, &q[k]);
                }
                if (rnd_below(&r, 2) == 0) {
                    MPI_Waitall(k, q, sts);
                    for (int j = 0; j < k; j++)
                        rplan_done(&P, &L, 0, ri[j].s < 0 ? nsend : ri[j].s - 1,
                                   ri[j].t < 0 ? TAGS : ri[j].t,
                                   ledger_take(&L, ri[j].post, 0, ri[j].s, ri[j].t, &sts[j],
                                               rb[j]));
                } else {
                    for (int m = 0; m < k; m++) {
                        int j;
                        MPI_Waitany(k, q, &j, &sts[0]);
                        rplan_done(&P, &L, 0, ri[j].s < 0 ? nsend : ri[j].s - 1,
                                   ri[j].t < 0 ? TAGS : ri[j].t,
                                   ledger_take(&L, ri[j].post, 0, ri[j].s, ri[j].t, &sts[0],
                                               rb[j]));
                    }
                }
                done += k;
                P.by_tag = !P.by_tag; /* nothing is pending now */
            }
            ledger_check(&L, 1, TAGS);
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            CHECK(!flag);
            ledger_free(&L);
            rplan_free(&P);
            free(sent);
            free(ones);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&side);
}

/* MPI_Cancel racing arrivals: rank 0 posts more receives than the senders
 * will send -- the first ones any-source any-tag, the rest a seeded mix --
 * lets a first batch of messages arrive and complete the first receives,
 * tells the senders to send the second batch, and cancels every receive not
 * yet known complete while that batch comes in (progress between cancels).
 * Each receive must then either have taken exactly one message (checked
 * like any other) or be cancelled with its buffer untouched; the messages
 * cancelled receives did not take are taken by later receives; nothing is
 * lost, nothing taken twice, nothing overtaken. */
static void test_cancelrace(void)
{
    enum { ROUNDS = 16, A = 48, B = 48, TAGS = 3, EXTRA = 32 };
    const uint64_t seed0 = test_seed("cancelrace");
    MPI_Comm side;
    long cancelled_all = 0, raced_all = 0;

    if (size < 2)
        return;
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    for (int round = 0; round < ROUNDS; round++) {
        const uint64_t seed = seed0 + (uint64_t)round;
        if (rank != 0) {
            unsigned char pay[A + B][8];
            MPI_Request q[A + B];
            uint64_t r = seed ^ (uint64_t)rank;
            int go;
            for (int i = 0; i < A + B; i++)
                msg_fill(pay[i], 8, seed, rank, i);
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < A + B; i++) {
                if (i == A)
                    MPI_Recv(&go, 1, MPI_INT, 0, 0, side, MPI_STATUS_IGNORE);
                if (i > A && round % 2 == 1)
                    usleep((useconds_t)rnd_below(&r, 100)); /* the second batch trickles in */
                MPI_Isend(pay[i], 8, MPI_BYTE, 0,
                          (int)(rnd_of(seed, 3, (uint64_t)rank, (uint64_t)i) % TAGS),
                          MPI_COMM_WORLD, &q[i]);
            }
            MPI_Waitall(A + B, q, MPI_STATUSES_IGNORE);
        } else {
            int nsend = size - 1, total = nsend * (A + B), R = total + EXTRA, first = nsend * A / 2;
            unsigned char (*rb)[16] = malloc((size_t)R * 16), sentinel[16], buf[16];
            MPI_Request *q = malloc((size_t)R * sizeof(*q)), *goq = malloc((size_t)nsend * sizeof(*goq));
            MPI_Status *sts = malloc((size_t)R * sizeof(*sts)), st;
            int *rs = malloc((size_t)R * sizeof(*rs)), *rt = malloc((size_t)R * sizeof(*rt));
            int *order = malloc((size_t)R * sizeof(*order)), go = 1, ncancelled = 0, flag;
            long *post = malloc((size_t)R * sizeof(*post));
            uint64_t r = seed;
            ledger_t L;

            ledger_init(&L, "cancelrace", seed0, round, nsend, A + B);
            for (long i = 0; i < (long)total; i++)
                L.tag[i] = (signed char)(rnd_of(seed, 3, (uint64_t)(i / (A + B) + 1),
                                                (uint64_t)(i % (A + B))) % TAGS);
            memset(sentinel, 0xee, sizeof(sentinel));
            for (int j = 0; j < R; j++) {
                int kind = j < first ? 0 : rnd_below(&r, 4);
                rs[j] = kind == 1 || kind == 3 ? 1 + rnd_below(&r, nsend) : -1;
                rt[j] = kind >= 2 ? rnd_below(&r, TAGS) : -1;
                post[j] = ledger_post(&L, rt[j]);
                memcpy(rb[j], sentinel, sizeof(sentinel));
                MPI_Irecv(rb[j], 16, MPI_BYTE, rs[j] < 0 ? MPI_ANY_SOURCE : rs[j],
                          rt[j] < 0 ? MPI_ANY_TAG : rt[j], MPI_COMM_WORLD, &q[j]);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            /* The first batch completes the first receives (and maybe more). */
            MPI_Waitall(first, q, sts);
            for (int s = 1; s <= nsend; s++)
                MPI_Isend(&go, 1, MPI_INT, s, 0, side, &goq[s - 1]);
            /* Cancel the rest -- in order, in reverse or shuffled -- while
             * the second batch arrives. */
            for (int k = 0; k < R - first; k++)
                order[k] = round % 3 == 1 ? R - 1 - k : first + k;
            if (round % 3 == 2)
                for (int k = R - first - 1; k > 0; k--) {
                    int o = rnd_below(&r, k + 1), x = order[k];
                    order[k] = order[o];
                    order[o] = x;
                }
            for (int k = 0; k < R - first; k++) {
                MPI_Cancel(&q[order[k]]);
                if (k % (1 + round % 5) == 0)
                    MPI_Iprobe(MPI_ANY_SOURCE, 999, side, &flag, MPI_STATUS_IGNORE);
                if (round % 4 != 0)
                    usleep((useconds_t)rnd_below(&r, 20 * (round % 4))); /* spread over arrivals */
            }
            MPI_Waitall(R - first, q + first, sts + first);
            for (int j = 0; j < R; j++) {
                int c;
                MPI_Test_cancelled(&sts[j], &c);
                if (c && j < first)
                    ledger_fail(&L, "receive %d was cancelled after it completed", j);
                if (c) {
                    ncancelled++;
                    if (memcmp(rb[j], sentinel, sizeof(sentinel)) != 0)
                        ledger_fail(&L, "cancelled receive %d wrote its buffer", j);
                } else {
                    long i = ledger_take(&L, post[j], 0, rs[j], rt[j], &sts[j], rb[j]);
                    raced_all += j >= first && i >= 0 && i % (A + B) >= A;
                }
            }
            CHECK(ncancelled >= EXTRA);
            cancelled_all += ncancelled;
            /* What the cancelled receives left: receives of kinds that
             * still have a message to take, one at a time. */
            while (L.taken < total && L.errors <= 20) {
                int s = 1 + rnd_below(&r, nsend), t = rnd_below(&r, TAGS), kind = rnd_below(&r, 4);
                int ls = 0, lt = 0, lst = 0;
                for (int i = 0; i < A + B; i++) {
                    long x = (long)(s - 1) * (A + B) + i;
                    ls += L.got[x] < 0;
                    lst += L.got[x] < 0 && L.tag[x] == t;
                }
                for (long x = 0; x < (long)total; x++)
                    lt += L.got[x] < 0 && L.tag[x] == t;
                int src = kind == 1 || kind == 3 ? s : -1, tag = kind >= 2 ? t : -1;
                if ((kind == 1 && ls == 0) || (kind == 2 && lt == 0) || (kind == 3 && lst == 0))
                    continue;
                long p = ledger_post(&L, tag);
                memcpy(buf, sentinel, sizeof(buf));
                MPI_Recv(buf, 16, MPI_BYTE, src < 0 ? MPI_ANY_SOURCE : src,
                         tag < 0 ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &st);
                if (ledger_take(&L, p, 0, src, tag, &st, buf) < 0)
                    break;
            }
            ledger_check(&L, 1, TAGS);
            MPI_Waitall(nsend, goq, MPI_STATUSES_IGNORE);
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            CHECK(!flag);
            ledger_free(&L);
            free(rb);
            free(q);
            free(goq);
            free(sts);
            free(rs);
            free(rt);
            free(order);
            free(post);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0 && getenv("MPI_TESTS_VERBOSE") != NULL)
        printf("cancelrace: %ld receives cancelled; %ld cancels lost to second-batch arrivals\n",
               cancelled_all, raced_all);
    MPI_Comm_free(&side);
}

/* A rendezvous whose data cannot move -- the receive buffer is mapped
 * read-only, so the CMA copy into it fails (run with ONIC_SHM_RMA=cma:
 * the bounce copy would write it from this process and crash) -- ends
 * with an error at both ends instead of hanging: a message put whole into
 * a posted receive (the receiver's read fails), one found unexpected and
 * pulled (the sender's write fails), and a synchronous one. Afterwards
 * the pair still talks. */
static void test_rndvfail(void)
{
    /* Past what the shm lane carries (ONIC_SHM_MID_MAX, 16 KiB by default):
     * the data moves by RMA, which finds the buffer not writable. */
    enum { N = 256 * 1024 + 1 };
    unsigned char *buf = malloc(N), *ro = NULL;
    MPI_Status st;
    MPI_Request req;
    int rc, flag = 0;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t i = 0; i < N; i++)
        buf[i] = pattern(7, i);
    if (rank == 1) {
        ro = mmap(NULL, N, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(ro != MAP_FAILED);
        fprintf(stderr, "(errors about failed sends and receives are expected next)\n");
    }
    /* Posted: the whole put cannot be moved into the receive. */
    if (rank == 1)
        CHECK_EQ(MPI_Irecv(ro, N, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(MPI_Send(buf, N, MPI_BYTE, 1, 1, MPI_COMM_WORLD) != MPI_SUCCESS);
    if (rank == 1)
        CHECK(MPI_Wait(&req, &st) != MPI_SUCCESS);
    /* Unexpected, then pulled: the sender's write fails. */
    for (int sync = 0; sync < 2; sync++) {
        if (rank == 0) {
            rc = sync ? MPI_Issend(buf, N, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req)
                      : MPI_Isend(buf, N, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req);
            CHECK_EQ(rc, MPI_SUCCESS);
            CHECK(MPI_Wait(&req, &st) != MPI_SUCCESS);
        } else if (rank == 1) {
            CHECK_EQ(MPI_Probe(0, 2, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            CHECK(MPI_Recv(ro, N, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &st) != MPI_SUCCESS);
        }
    }
    /* MPI_Scatter from rank 0 into rank 1's read-only block: the root's
     * own block copies fine, but its send to rank 1 fails, and the root's
     * call must say so as rank 1's does (the error of a transfer is not
     * lost behind the local copy's success). */
    {
        unsigned char *all = rank == 0 ? malloc(2 * (size_t)N) : NULL, *mine = NULL;
        if (rank == 0) {
            memcpy(all, buf, N);
            memcpy(all + N, buf, N);
            mine = malloc(N);
            CHECK(MPI_Scatter(all, N, MPI_BYTE, mine, N, MPI_BYTE, 0, MPI_COMM_WORLD) !=
                  MPI_SUCCESS);
            CHECK(memcmp(mine, buf, N) == 0);
        } else if (rank == 1) {
            CHECK(MPI_Scatter(NULL, 0, MPI_BYTE, ro, N, MPI_BYTE, 0, MPI_COMM_WORLD) !=
                  MPI_SUCCESS);
        }
        free(mine);
        free(all);
    }
    /* Nothing is left behind: the same message into writable memory. */
    if (rank == 0) {
        CHECK_EQ(MPI_Send(buf, N, MPI_BYTE, 1, 3, MPI_COMM_WORLD), MPI_SUCCESS);
    } else if (rank == 1) {
        unsigned char *in = calloc(1, N);
        int bad = 0;
        CHECK_EQ(MPI_Recv(in, N, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        for (size_t i = 0; i < N; i++)
            bad += in[i] != pattern(7, i);
        CHECK_EQ(bad, 0);
        CHECK_EQ(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st),
                 MPI_SUCCESS);
        CHECK_EQ(flag, 0);
        free(in);
        munmap(ro, N);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(buf);
}

/* Around every protocol boundary as the job runs them: the eager limit
 * (ONIC_EAGER_LIMIT; 16384 by default), the most one shm lane message
 * carries (8192: above it, fragments), the largest message the lane
 * carries (ONIC_SHM_MID_MAX; 16384 by default: above it, RMA) and the most
 * an ofi message carries (ONIC_OFI_EAGER_LIMIT; 2048 by default) and the
 * size from which a sender with receives posted has its receiver pull
 * (ONIC_EAGER_PULL_MIN; 8193 by default: modes 0, 3 and 4 post theirs
 * before sending, so those may go pulled up to the eager limit): 0 and 1
 * bytes and each boundary - 1, itself and + 1, each sent posted,
 * unexpected, synchronous, truncated (one byte short) and to a wildcard
 * receive, around the ring of ranks; every byte is checked, and the byte
 * past what came must be untouched. */
static void test_threshold(void)
{
    const char *env = getenv("ONIC_EAGER_LIMIT"), *mid_env = getenv("ONIC_SHM_MID_MAX");
    const char *ofi_env = getenv("ONIC_OFI_EAGER_LIMIT"), *pm_env = getenv("ONIC_EAGER_PULL_MIN");
    long lim = env != NULL ? strtol(env, NULL, 10) : 16384;
    long mid = mid_env != NULL ? strtol(mid_env, NULL, 10) : 16384;
    long ofi = ofi_env != NULL ? strtol(ofi_env, NULL, 10) : 2048;
    long pm = pm_env != NULL ? strtol(pm_env, NULL, 10) : 8193;
    long sizes[] = {0,   1,       lim - 1, lim,     lim + 1, 8191,    8192, 8193,  mid - 1,
                    mid, mid + 1, ofi - 1, ofi,     ofi + 1, pm - 1,  pm,   pm + 1};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    long most = 8193;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    unsigned char *out, *in;

    for (int k = 0; k < nsizes; k++)
        most = sizes[k] > most ? sizes[k] : most;
    out = malloc((size_t)most + 2);
    in = malloc((size_t)most + 3);
    if (size < 2) {
        free(out);
        free(in);
        return;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < nsizes; k++) {
        long n = sizes[k];
        int seen = 0;
        for (int j = 0; j < k; j++)
            seen |= sizes[j] == n;
        if (n < 0 || seen)
            continue; /* below zero, or done already */
        for (int mode = 0; mode < 8; mode++) {
            /* 0 posted, 1 unexpected, 2 synchronous, 3 truncated, 4 wildcards; with MPI_Recv
             * of a message known to be here (a later one from the same sender received
             * first): 5 exact, 6 truncated and wildcards; 7 MPI_Recv after a probe */
            long room = mode == 3 || mode == 6 ? n - 1 : n;
            MPI_Request rr, sr;
            MPI_Status st;
            int rc, cnt = -1, bad = 0, cls = MPI_SUCCESS;
            if (room < 0)
                continue;
            for (long i = 0; i < n; i++)
                out[i] = pattern(rank * 1000 + k * 10 + mode, (size_t)i);
            memset(in, 0xee, (size_t)most + 3);
            if (mode >= 5) {
                CHECK_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
                CHECK_EQ(MPI_Isend(out, (int)n, MPI_BYTE, to, 40 + mode, MPI_COMM_WORLD, &sr),
                         MPI_SUCCESS);
                CHECK_EQ(MPI_Send(NULL, 0, MPI_BYTE, to, 99, MPI_COMM_WORLD), MPI_SUCCESS);
                CHECK_EQ(MPI_Recv(NULL, 0, MPI_BYTE, from, 99, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                if (mode == 7)
                    CHECK_EQ(MPI_Probe(from, 47, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                rc = mode == 6 ? MPI_Recv(in, (int)room, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                          MPI_COMM_WORLD, &st)
                               : MPI_Recv(in, (int)room, MPI_BYTE, from, 40 + mode,
                                          MPI_COMM_WORLD, &st);
                if (rc != MPI_SUCCESS)
                    MPI_Error_class(rc, &cls);
                goto check;
            }
            if (mode != 1) {
                rc = mode == 4 ? MPI_Irecv(in, (int)room, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                           MPI_COMM_WORLD, &rr)
                               : MPI_Irecv(in, (int)room, MPI_BYTE, from, 40 + mode,
                                           MPI_COMM_WORLD, &rr);
                CHECK_EQ(rc, MPI_SUCCESS);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            rc = mode == 2 ? MPI_Issend(out, (int)n, MPI_BYTE, to, 40 + mode, MPI_COMM_WORLD, &sr)
                           : MPI_Isend(out, (int)n, MPI_BYTE, to, 40 + mode, MPI_COMM_WORLD, &sr);
            CHECK_EQ(rc, MPI_SUCCESS);
            if (mode == 1) {
                /* Arrived (or announced) before the receive is posted. */
                CHECK_EQ(MPI_Probe(from, 41, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                CHECK_EQ(MPI_Irecv(in, (int)room, MPI_BYTE, from, 41, MPI_COMM_WORLD, &rr),
                         MPI_SUCCESS);
            }
            rc = MPI_Wait(&rr, &st);
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
        check:
            CHECK_EQ(cls, (mode == 3 || mode == 6) && n > 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK_EQ(cnt, (int)room);
            CHECK_EQ(st.MPI_SOURCE, from);
            CHECK_EQ(st.MPI_TAG, 40 + mode);
            for (long i = 0; i < room; i++)
                bad += in[i] != pattern(from * 1000 + k * 10 + mode, (size_t)i);
            CHECK_EQ(bad, 0);
            CHECK_EQ(in[room], 0xee);
            if (failed && bad) {
                fprintf(stderr, "rank %d: %ld bytes, mode %d: %d bytes wrong\n", rank, n, mode,
                        bad);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(out);
    free(in);
}

/* Which protocol a message within the eager limit takes, seen from its
 * sender (run inline, 2 processes or more; ranks 0 and 1 take part): eager,
 * an MPI_Isend is complete at once; by rendezvous it stays incomplete until
 * its receiver receives, which rank 1 does only when told. A message of
 * ONIC_EAGER_PULL_MIN (8193 by default) bytes or more sent with a request
 * goes by rendezvous, pulled by its receiver, when its sender has a receive
 * posted -- here one for a message that comes last -- and eagerly when it
 * has none; 0 turns that off. Every byte is checked on arrival. */
static void test_pullmid(void)
{
    const char *lim_env = getenv("ONIC_EAGER_LIMIT"), *pm_env = getenv("ONIC_EAGER_PULL_MIN");
    long lim = lim_env != NULL ? strtol(lim_env, NULL, 10) : 16384;
    long pm = pm_env != NULL ? strtol(pm_env, NULL, 10) : 8193;
    static const long sizes[] = {4096, 8192, 8193, 16383, 16384};
    enum { MOST = 16384 };
    unsigned char *out = malloc(MOST), *in = malloc(MOST);
    int bad_any = 0;
    /* Where the kernel's cross-memory attach is not used for every length
     * (ONIC_SHM_RMA=copy, or ONIC_SHM_CMA_MIN above 0 when not =cma: the
     * bounce buffers, whose pull would need the sender's copy), nothing is
     * pulled. */
    const char *rma = getenv("ONIC_SHM_RMA"), *cma_min = getenv("ONIC_SHM_CMA_MIN");
    int pulls = !(rma != NULL && strcmp(rma, "copy") == 0) &&
                !((rma == NULL || strcmp(rma, "cma") != 0) && cma_min != NULL &&
                  strtol(cma_min, NULL, 10) > 0);

    for (int k = 0; k < (int)(sizeof(sizes) / sizeof(sizes[0])); k++) {
        long n = sizes[k];
        for (int posted = 0; posted < 2; posted++) {
            int eager = n <= lim && !(posted && pulls && pm > 0 && n >= pm), flag = 0, tests = 0,
                bad = 0;
            MPI_Request rr = MPI_REQUEST_NULL, sr;
            MPI_Status st;

            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                for (long i = 0; i < n; i++)
                    out[i] = pattern(k * 2 + posted, (size_t)i);
                if (posted)
                    CHECK_EQ(MPI_Irecv(NULL, 0, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &rr),
                             MPI_SUCCESS);
                CHECK_EQ(MPI_Isend(out, (int)n, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &sr),
                         MPI_SUCCESS);
                /* Eager: complete at the first test. Otherwise not before
                 * rank 1 receives, which it does after the go below. */
                for (; tests < (eager ? 1 : 20) && !flag; tests++) {
                    CHECK_EQ(MPI_Test(&sr, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
                    if (!eager)
                        usleep(1000);
                }
                CHECK_EQ(flag, eager);
                if (failed && flag != eager)
                    fprintf(stderr, "pullmid: %ld bytes, %s receive posted: %s, expected %s\n",
                            n, posted ? "a" : "no", flag ? "eager" : "rendezvous",
                            eager ? "eager" : "rendezvous");
                CHECK_EQ(MPI_Send(NULL, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD), MPI_SUCCESS);
                if (!flag)
                    CHECK_EQ(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
                if (posted)
                    CHECK_EQ(MPI_Wait(&rr, MPI_STATUS_IGNORE), MPI_SUCCESS);
            } else if (rank == 1) {
                CHECK_EQ(MPI_Recv(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                memset(in, 0xee, MOST);
                CHECK_EQ(MPI_Recv(in, (int)n, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                for (long i = 0; i < n; i++)
                    bad += in[i] != pattern(k * 2 + posted, (size_t)i);
                CHECK_EQ(bad, 0);
                if (posted)
                    CHECK_EQ(MPI_Send(NULL, 0, MPI_BYTE, 0, 5, MPI_COMM_WORLD), MPI_SUCCESS);
            }
        }
    }
    /* A blocking MPI_Send stays eager whatever is posted: ranks 0 and 1 each
     * post a receive for anyone, then send to each other before receiving
     * -- a program relying on eager buffering, which a pulled send would
     * stop (each waiting for the other's receive) -- contiguous data (the
     * common send) and a vector (the general way, with a request). */
    if (rank < 2 && size >= 2 && lim >= MOST) {
        MPI_Request any;
        MPI_Datatype vec;
        unsigned char *vbuf = malloc(2 * MOST);
        int peer = 1 - rank;

        for (long i = 0; i < MOST; i++) {
            out[i] = pattern(97 + rank, (size_t)i);
            vbuf[i / 8 * 16 + i % 8] = pattern(95 + rank, (size_t)i);
        }
        CHECK_EQ(MPI_Type_vector(MOST / 8, 8, 16, MPI_BYTE, &vec), MPI_SUCCESS);
        CHECK_EQ(MPI_Type_commit(&vec), MPI_SUCCESS);
        CHECK_EQ(MPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &any),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_Send(out, MOST, MPI_BYTE, peer, 12, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_EQ(MPI_Send(vbuf, 1, vec, peer, 15, MPI_COMM_WORLD), MPI_SUCCESS);
        for (int tag = 12; tag <= 15; tag += 3) {
            memset(in, 0xee, MOST);
            CHECK_EQ(MPI_Recv(in, MOST, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
            for (long i = 0; i < MOST; i++)
                bad_any += in[i] != pattern((tag == 12 ? 97 : 95) + peer, (size_t)i);
        }
        CHECK_EQ(bad_any, 0);
        CHECK_EQ(MPI_Send(NULL, 0, MPI_BYTE, peer, 11, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&any, MPI_STATUS_IGNORE), MPI_SUCCESS);
        MPI_Type_free(&vec);
        free(vbuf);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* A blocking MPI_Send short of credit, a receive posted: it goes the
     * general way (MPI_Send's common path needs credit), by rendezvous, and
     * returns MPI_SUCCESS once received. Rank 1 starts receiving 0.2 s
     * later, so rank 0's MPI_Isends before it (eager: no receive posted yet)
     * have used the credit up by then -- on a host too slow for that the
     * send goes eager, which passes too. */
    if (rank < 2 && size >= 2) {
        long n = eager_credit_msgs() * 64 / MOST + 2, bad = 0;
        MPI_Request *sr = malloc((size_t)n * sizeof(*sr)), ctl;

        for (long i = 0; i < MOST; i++)
            out[i] = pattern(96, (size_t)i);
        if (rank == 0) {
            for (long k = 0; k < n; k++)
                CHECK_EQ(MPI_Isend(out, MOST, MPI_BYTE, 1, 13, MPI_COMM_WORLD, &sr[k]),
                         MPI_SUCCESS);
            CHECK_EQ(MPI_Irecv(NULL, 0, MPI_BYTE, 1, 14, MPI_COMM_WORLD, &ctl), MPI_SUCCESS);
            CHECK_EQ(MPI_Send(out, MOST, MPI_BYTE, 1, 13, MPI_COMM_WORLD), MPI_SUCCESS);
            CHECK_EQ(MPI_Waitall((int)n, sr, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&ctl, MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else {
            usleep(200000);
            for (long k = 0; k <= n; k++) {
                memset(in, 0xee, MOST);
                CHECK_EQ(MPI_Recv(in, MOST, MPI_BYTE, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         MPI_SUCCESS);
                for (long i = 0; i < MOST; i++)
                    bad += in[i] != pattern(96, (size_t)i);
            }
            CHECK_EQ(bad, 0);
            CHECK_EQ(MPI_Send(NULL, 0, MPI_BYTE, 0, 14, MPI_COMM_WORLD), MPI_SUCCESS);
        }
        free(sr);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Pulled, the data leaves when the receiver pulls it, not with the put:
     * rank 0 rewrites its buffer right after MPI_Isend returns -- which MPI
     * forbids, and which shows here where the bytes came from -- while rank
     * 1, its receive posted, makes no MPI call until a flag in shared memory
     * says so. By cross-memory attach (ONIC_SHM_RMA=cma) rank 1 then pulls
     * the new bytes; through the bounce buffers (ONIC_SHM_RMA=copy), whose
     * pull would need rank 0's copy, PTL_MD_PUT_PULLED changes nothing and
     * the old bytes came with the put. The test entries set the variable.
     * Rank 1 says when it is out of the barrier (ready), so that no poll
     * of its barrier takes the put while rank 0 rewrites. */
    int by_cma = rma != NULL && strcmp(rma, "cma") == 0;
    if (rma != NULL && (by_cma || strcmp(rma, "copy") == 0) && lim >= 16384 && pm > 0 &&
        pm <= 16384) {
        MPI_Request rr, sr;
        MPI_Win win;
        MPI_Aint wsize;
        int *go, disp, bad = 0;

        MPI_Aint mine = rank == 0 ? 2 * (MPI_Aint)sizeof(int) : 0;

        CHECK_EQ(MPI_Win_allocate_shared(mine, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &go,
                                         &win), MPI_SUCCESS);
        CHECK_EQ(MPI_Win_shared_query(win, 0, &wsize, &disp, &go), MPI_SUCCESS);
        if (rank == 0) {
            __atomic_store_n(&go[0], 0, __ATOMIC_RELEASE);
            __atomic_store_n(&go[1], 0, __ATOMIC_RELEASE);
        }
        if (rank == 1) {
            memset(in, 0xee, MOST);
            CHECK_EQ(MPI_Irecv(in, MOST, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &rr), MPI_SUCCESS);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (long i = 0; i < MOST; i++)
                out[i] = pattern(98, (size_t)i);
            CHECK_EQ(MPI_Irecv(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD, &rr), MPI_SUCCESS);
            while (!__atomic_load_n(&go[1], __ATOMIC_ACQUIRE))
                ;
            CHECK_EQ(MPI_Isend(out, MOST, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &sr), MPI_SUCCESS);
            for (long i = 0; i < MOST; i++)
                out[i] = pattern(99, (size_t)i);
            __atomic_store_n(&go[0], 1, __ATOMIC_RELEASE);
            CHECK_EQ(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&rr, MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else if (rank == 1) {
            __atomic_store_n(&go[1], 1, __ATOMIC_RELEASE);
            while (!__atomic_load_n(&go[0], __ATOMIC_ACQUIRE))
                ;
            CHECK_EQ(MPI_Wait(&rr, MPI_STATUS_IGNORE), MPI_SUCCESS);
            for (long i = 0; i < MOST; i++)
                bad += in[i] != pattern(by_cma ? 99 : 98, (size_t)i);
            CHECK_EQ(bad, 0);
            if (failed && bad)
                fprintf(stderr, "pullmid: by %s, %d bytes are not those of the %s buffer\n", rma,
                        bad, by_cma ? "rewritten" : "original");
            CHECK_EQ(MPI_Send(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD), MPI_SUCCESS);
        }
        CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
}

/* A flood of mid-size messages: every rank sends midflood_count() messages of
 * 2049 to 65537 bytes (up to ONIC_SHM_MID_MAX, 16 KiB by default, carried
 * in fragments through the lane, the larger by RMA; mpi_midflood_ring64_2
 * sets it to 64 KiB, all through the lane) with MPI_Isend to the next
 * rank, which starts receiving only after a pause, so the lane fills, the
 * rest of a message waits at
 * its sender, and the credit runs out (later messages go by rendezvous):
 * at least 200 messages, and as many as take twice the credit in eager
 * ones (those up to 16 KiB). All of them arrive, in the order sent (one
 * tag: MPI's order is all that orders them), every byte checked. */
static long midflood_len(int i)
{
    static const long lens[] = {2049, 4096, 4097, 16383, 16384, 16385, 32768, 65535, 65536,
                                65537, 3000, 20000};
    return lens[i % (int)(sizeof(lens) / sizeof(lens[0]))];
}

static int midflood_count(void)
{
    long credit = eager_credit_msgs() * 64, eager = 0; /* bytes */
    int n = 0;

    for (; n < 200 || eager <= 2 * credit; n++)
        eager += midflood_len(n) <= 16384 ? midflood_len(n) : 0;
    return n;
}

static void test_midflood(void)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size, n = midflood_count();
    unsigned char *out = malloc((size_t)n * 65537), *in = malloc(65537 + 1);
    MPI_Request *sr = malloc((size_t)n * sizeof(*sr));
    struct timespec ts = {0, 200000000};

    if (size < 2) {
        free(out);
        free(in);
        free(sr);
        return;
    }
    for (int i = 0; i < n; i++) {
        unsigned char *o = out + (size_t)i * 65537;
        for (long j = 0; j < midflood_len(i); j++)
            o[j] = pattern(rank * 100000 + i, (size_t)j);
        CHECK_EQ(MPI_Isend(o, (int)midflood_len(i), MPI_BYTE, to, 9, MPI_COMM_WORLD, &sr[i]),
                 MPI_SUCCESS);
    }
    while (nanosleep(&ts, &ts) != 0)
        ;
    for (int i = 0; i < n; i++) {
        MPI_Status st;
        int cnt = -1, bad = 0;
        in[midflood_len(i)] = 0xee;
        CHECK_EQ(MPI_Recv(in, 65537, MPI_BYTE, from, 9, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK_EQ(cnt, (int)midflood_len(i));
        for (long j = 0; j < midflood_len(i) && j < cnt; j++)
            bad += in[j] != pattern(from * 100000 + i, (size_t)j);
        CHECK_EQ(bad, 0);
        CHECK_EQ(in[midflood_len(i)], 0xee);
    }
    CHECK_EQ(MPI_Waitall(n, sr, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
    free(sr);
}

typedef struct test {
    const char *name;
    void (*fn)(void);
} test_t;

/* Non-blocking sends onic held back to send together (ofi's bundles) leave
 * at the sender's next MPI call: rank 0 starts a burst to rank 1 (after a
 * barrier, whose progress makes the burst shorter than the every-8-starts
 * drain), completes it with MPI_Waitall, then makes no MPI call for 2 s;
 * rank 1 must have the whole burst long before. And a lone MPI_Isend is
 * never held: rank 0 sends one, computes 0.5 s, waits, three times; rank 1
 * must get each about when it was sent, not 0.5 s later. */
static void test_held(void)
{
    enum { N = 6, LONE = 3 };
    int v[N];

    if (size < 2) {
        return;
    }
    if (rank == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < LONE; i++) {
            MPI_Request q;
            struct timespec ts = {0, 500000000};
            v[i] = 200 + i;
            MPI_Isend(&v[i], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &q);
            while (nanosleep(&ts, &ts) != 0)
                ;
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    } else if (rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < LONE; i++) {
            MPI_Recv(&v[i], 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK_EQ(v[i], 200 + i);
            CHECK(MPI_Wtime() - t0 < 0.5 * i + 0.3);
        }
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) {
        MPI_Request q[N];
        struct timespec ts = {2, 0};
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < N; i++) {
            v[i] = 100 + i;
            MPI_Isend(&v[i], 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &q[i]);
        }
        MPI_Waitall(N, q, MPI_STATUSES_IGNORE);
        while (nanosleep(&ts, &ts) != 0)
            ;
    } else if (rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < N; i++) {
            MPI_Recv(&v[i], 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK_EQ(v[i], 100 + i);
        }
        CHECK(MPI_Wtime() - t0 < 1.0);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- many blocking small sends to a receiver that comes late ---------------------------- */
/* Every other rank does N blocking sends of 8 bytes (every 97th of none,
 * another tag) to rank 0, which starts receiving only after a while: the
 * first ones go eager into unexpected space with no poll at the sender, the
 * sender's credit runs out, its sends poll and go by rendezvous and wait
 * for the receiver; then, the receiver draining, credit comes back and
 * they go eager again. Rank 0 takes them with wildcards and checks that
 * every message comes exactly once and, per sender, in order. N: twice
 * the 8-byte messages a sender's credit covers, at least 6000. */
static void test_latesend(void)
{
    const long long N = 2 * eager_credit_msgs() > 6000 ? 2 * eager_credit_msgs() : 6000;

    if (size < 2)
        return;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        for (long long i = 0; i < N; i++) {
            long long v = (long long)rank << 32 | i;
            if (i % 97 == 0)
                MPI_Send(NULL, 0, MPI_LONG_LONG, 0, 2, MPI_COMM_WORLD);
            else
                MPI_Send(&v, 1, MPI_LONG_LONG, 0, 1, MPI_COMM_WORLD);
        }
    } else {
        long long *next = calloc((size_t)size, sizeof(*next));
        struct timespec ts = {0, 300000000};

        while (nanosleep(&ts, &ts) != 0)
            ;
        for (long long k = 0; k < (long long)N * (size - 1) && failed < 10; k++) {
            long long v = -1;
            MPI_Status st;
            int cnt, src;

            MPI_Recv(&v, 1, MPI_LONG_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_LONG_LONG, &cnt);
            src = st.MPI_SOURCE;
            CHECK(src > 0 && src < size);
            if (src <= 0 || src >= size)
                break;
            if (next[src] % 97 == 0) {
                CHECK_EQ(st.MPI_TAG, 2);
                CHECK_EQ(cnt, 0);
            } else {
                CHECK_EQ(st.MPI_TAG, 1);
                CHECK_EQ(cnt, 1);
                CHECK_EQ(v, (long long)src << 32 | next[src]);
            }
            next[src]++;
        }
        for (int r = 1; r < size; r++)
            CHECK_EQ(next[r], N);
        free(next);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Empty messages among messages with data, on one tag (MPI_Send's from a
 * buffer and from NULL, MPI_Ssend's): in order and with count 0, whether
 * the receive was posted before they came (each kind of put lands in its
 * own entry) or after (the unexpected kinds are kept apart and must still
 * come out in order), probed, synchronous, rendezvous. */
static void test_empty(void)
{
    enum { ROUNDS = 40, BIG = 100000 };
    /* per round: data, empty, data, empty Ssend, big (rendezvous), empty */
    static const int len[] = {8, 0, 3, 0, BIG, 0};
    enum { K = sizeof(len) / sizeof(len[0]) };
    unsigned char *buf = malloc(BIG);

    if (size < 2) {
        free(buf);
        return;
    }
    for (int posted = 0; posted <= 1; posted++) {
        MPI_Request rq[K];

        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = 0; r < ROUNDS; r++) {
            /* One barrier per round on every rank: rank 0's, after its
             * receives are posted or before it looks for the messages;
             * rank 1's, before it sends. */
            if (rank == 1) {
                MPI_Barrier(MPI_COMM_WORLD);
                for (int k = 0; k < K; k++) {
                    for (int i = 0; i < len[k]; i++)
                        buf[i] = pattern(r * K + k, (size_t)i);
                    if (k == 3)
                        MPI_Ssend(buf, 0, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
                    else /* the last empty one from no buffer at all */
                        MPI_Send(k == K - 1 ? NULL : buf, len[k], MPI_BYTE, 0, 5, MPI_COMM_WORLD);
                }
            } else if (rank == 0) {
                unsigned char *in = malloc((size_t)K * BIG);
                MPI_Status st[K];

                memset(in, 0xee, (size_t)K * BIG);
                if (posted) {
                    for (int k = 0; k < K; k++)
                        MPI_Irecv(in + (size_t)k * BIG, BIG, MPI_BYTE, k % 2 ? MPI_ANY_SOURCE : 1,
                                  k % 3 ? 5 : MPI_ANY_TAG, MPI_COMM_WORLD, &rq[k]);
                    MPI_Barrier(MPI_COMM_WORLD); /* the sends start after the posts */
                    MPI_Waitall(K, rq, st);
                } else {
                    int flag = 0, cnt = -1;
                    MPI_Status ps;

                    MPI_Barrier(MPI_COMM_WORLD);
                    for (int k = 0; k < K; k++) {
                        /* Found by a probe: it came before its receive. */
                        do
                            MPI_Iprobe(1, 5, MPI_COMM_WORLD, &flag, &ps);
                        while (!flag);
                        MPI_Get_count(&ps, MPI_BYTE, &cnt);
                        CHECK_EQ(cnt, len[k]);
                        MPI_Recv(in + (size_t)k * BIG, BIG, MPI_BYTE, k % 2 ? MPI_ANY_SOURCE : 1,
                                 k % 3 ? 5 : MPI_ANY_TAG, MPI_COMM_WORLD, &st[k]);
                    }
                }
                for (int k = 0; k < K; k++) {
                    int cnt = -1, bad = 0;
                    unsigned char *m = in + (size_t)k * BIG;

                    MPI_Get_count(&st[k], MPI_BYTE, &cnt);
                    CHECK_EQ(cnt, len[k]);
                    CHECK_EQ(st[k].MPI_SOURCE, 1);
                    CHECK_EQ(st[k].MPI_TAG, 5);
                    for (int i = 0; i < len[k]; i++)
                        bad += m[i] != pattern(r * K + k, (size_t)i);
                    CHECK_EQ(bad, 0);
                    CHECK_EQ(m[len[k]], 0xee); /* nothing past what came */
                }
                free(in);
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}


/* --- iovtypes: non-contiguous receives, in place and packed ------------------------
 * Rank 0 sends count elements of a non-contiguous type to rank 1, which
 * receives them with the same type into a buffer of 0xa5 bytes: every byte
 * of the type map must hold the sender's, every other byte (between the
 * blocks, around them) must still be 0xa5. The expected buffer is made with
 * MPI_Pack and MPI_Unpack of the sender's data (the packing path). Vector,
 * indexed, struct and subarray types, at eager, mid-size (lane fragments),
 * rendezvous put whole through the lane and by CMA, and with more blocks
 * than ONIC_MPI_IOVEC_MAX (packed); posted first and unexpected; a
 * truncated receive. With ONIC_MPI_IOVEC_MAX at its default these land in
 * place through I/O vector MDs; at 0, and under onload, packed. */
static unsigned char iov_pattern(size_t i, int salt)
{
    return (unsigned char)(i * 131 + (i >> 8) * 7 + (size_t)salt * 29 + 1);
}

static void iov_case(MPI_Datatype t, int count, int rcount, int unexpected, int tag)
{
    MPI_Aint lb, ext, tlb, text;
    size_t span;
    unsigned char *sbuf, *rbuf, *want, *packed;
    int psize, pos = 0, tsize, got = -1, rc = MPI_SUCCESS;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;

    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size(t, &tsize);
    span = (size_t)(tlb + (count - 1) * ext + text) + 64; /* a guard after the data */
    sbuf = malloc(span);
    rbuf = malloc(span);
    want = malloc(span);
    for (size_t i = 0; i < span; i++)
        sbuf[i] = iov_pattern(i, tag);
    if (rank == 0) {
        if (unexpected) {
            MPI_Isend(sbuf, count, t, 1, tag, MPI_COMM_WORLD, &req);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Send(sbuf, count, t, 1, tag, MPI_COMM_WORLD);
        }
    } else if (rank == 1) {
        memset(rbuf, 0xa5, span);
        st.MPI_ERROR = -77;
        if (unexpected) {
            MPI_Barrier(MPI_COMM_WORLD);
            rc = MPI_Recv(rbuf, rcount, t, 0, tag, MPI_COMM_WORLD, &st);
        } else {
            MPI_Irecv(rbuf, rcount, t, 0, tag, MPI_COMM_WORLD, &req);
            MPI_Barrier(MPI_COMM_WORLD);
            rc = MPI_Wait(&req, &st);
        }
        /* What the packing path makes of the same data. */
        MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize);
        packed = malloc((size_t)psize + 1);
        MPI_Pack(sbuf, count, t, packed, psize, &pos, MPI_COMM_WORLD);
        memset(want, 0xa5, span);
        pos = 0;
        MPI_Unpack(packed, psize, &pos, want, rcount, t, MPI_COMM_WORLD);
        free(packed);
        CHECK_EQ(rc, rcount < count ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
        CHECK_EQ(st.MPI_ERROR, -77); /* left alone by a single completion */
        MPI_Get_count(&st, MPI_BYTE, &got);
        CHECK_EQ(got, (long long)tsize * (rcount < count ? rcount : count));
        for (size_t i = 0; i < span; i++)
            if (rbuf[i] != want[i]) {
                fprintf(stderr, "rank 1: iovtypes tag %d (%d of %d elements, %s): byte %zu is "
                        "%#x, not %#x\n", tag, rcount, count,
                        unexpected ? "unexpected" : "posted", i, rbuf[i], want[i]);
                failed++;
                break;
            }
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(sbuf);
    free(rbuf);
    free(want);
}

/* Each type at count elements, posted and unexpected, then truncated to
 * half (a receive that expects fewer elements than come). t is committed
 * here and the caller's to free. */
static void iov_type(MPI_Datatype t, int count, int *tag)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Type_commit(&t);
    for (int unexpected = 0; unexpected < 2; unexpected++)
        iov_case(t, count, count, unexpected, (*tag)++);
    if (count > 1)
        iov_case(t, count, count / 2, 0, (*tag)++);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_iovtypes(void)
{
    /* (blocks, block length in doubles, elements): eager, mid-size,
     * rendezvous through the lane, by CMA, and more blocks than 64. */
    static const int vec[][3] = {{4, 8, 2}, {16, 64, 1}, {32, 128, 1}, {48, 1024, 1},
                                 {12, 100, 3}, {200, 4, 1}, {100, 40, 2}};
    int tag = 100;
    MPI_Datatype t;

    if (size < 2)
        return;
    for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
        MPI_Type_vector(vec[i][0], vec[i][1], vec[i][1] + 3, MPI_DOUBLE, &t);
        iov_type(t, vec[i][2], &tag);
        MPI_Type_free(&t);
    }
    /* Indexed ints, blocks of uneven lengths and gaps, one adjacent pair. */
    for (int scale = 1; scale <= 4096; scale *= 16) {
        int lens[6] = {3 * scale, 1 * scale, 7 * scale, 2 * scale, 5 * scale, 1};
        int displs[6] = {0, 4 * scale, 5 * scale, 20 * scale, 30 * scale, 40 * scale};
        MPI_Type_indexed(6, lens, displs, MPI_INT, &t);
        iov_type(t, 2, &tag);
        MPI_Type_free(&t);
    }
    /* A struct of an int, three doubles and five chars (C's padding between
     * them), many elements; and one of large arrays. */
    {
        int lens[3] = {1, 3, 5};
        MPI_Aint displs[3] = {0, 8, 32};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        MPI_Type_create_struct(3, lens, displs, types, &t);
        iov_type(t, 20, &tag);
        iov_type(t, 40, &tag); /* 80 blocks (int, then doubles and chars merged): packed */
        MPI_Type_free(&t);
        int biglens[3] = {3000, 5000, 777};
        MPI_Aint bigdispls[3] = {0, 12800, 60000};
        MPI_Type_create_struct(3, biglens, bigdispls, types, &t);
        iov_type(t, 1, &tag);
        iov_type(t, 4, &tag);
        MPI_Type_free(&t);
    }
    /* Subarrays of a 2-D array of doubles: a tile (rows of a few doubles),
     * and a band of long rows. */
    {
        int sizes[2] = {64, 64}, sub[2] = {10, 7}, start[2] = {3, 5};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
        iov_type(t, 1, &tag);
        MPI_Type_free(&t);
        int bsizes[2] = {80, 1000}, bsub[2] = {20, 900}, bstart[2] = {30, 50};
        MPI_Type_create_subarray(2, bsizes, bsub, bstart, MPI_ORDER_C, MPI_DOUBLE, &t);
        iov_type(t, 1, &tag);
        iov_type(t, 2, &tag);
        MPI_Type_free(&t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Eager MPI_Isends are complete once started: every completion call takes
 * such a request and nulls the caller's handle, its status is a finished
 * send's, MPI_Request_get_status leaves it as it is, MPI_Cancel leaves it
 * uncancelled, MPI_Start refuses it (not persistent); a rendezvous Isend
 * in the same Waitall completes once its data has moved. */
static void test_isenddone(void)
{
    enum { N = 64, BIG = 40000 };
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int out[N], in[N], flag = -1, idx = -1, outcount = -1, indices[N], cls = MPI_SUCCESS;
    int *bigout = malloc(BIG * sizeof(int)), *bigin = malloc(BIG * sizeof(int)), bad = 0;
    MPI_Request s[N + 1], r[N + 1];
    MPI_Status st[N + 1];

    if (size < 2) {
        free(bigout);
        free(bigin);
        return;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < BIG; i++)
        bigout[i] = rank * 7 + i;
    for (int i = 0; i < N; i++) {
        out[i] = rank * 1000 + i;
        in[i] = -1;
        CHECK_EQ(MPI_Irecv(&in[i], 1, MPI_INT, from, i, MPI_COMM_WORLD, &r[i]), MPI_SUCCESS);
    }
    CHECK_EQ(MPI_Irecv(bigin, BIG, MPI_INT, from, N, MPI_COMM_WORLD, &r[N]), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(MPI_Isend(&out[i], 1, MPI_INT, to, i, MPI_COMM_WORLD, &s[i]), MPI_SUCCESS);
        CHECK(s[i] != MPI_REQUEST_NULL);
    }
    CHECK_EQ(MPI_Isend(bigout, BIG, MPI_INT, to, N, MPI_COMM_WORLD, &s[N]), MPI_SUCCESS);
    st[0].MPI_ERROR = -77;
    CHECK_EQ(MPI_Wait(&s[0], &st[0]), MPI_SUCCESS);
    CHECK_EQ(s[0], MPI_REQUEST_NULL);
    CHECK_EQ(st[0].MPI_ERROR, -77); /* left alone by a single completion */
    CHECK_EQ(MPI_Test(&s[1], &flag, &st[1]), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK_EQ(s[1], MPI_REQUEST_NULL);
    flag = -1;
    CHECK_EQ(MPI_Request_get_status(s[2], &flag, &st[2]), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK(s[2] != MPI_REQUEST_NULL); /* left as it is */
    CHECK_EQ(MPI_Request_free(&s[2]), MPI_SUCCESS);
    CHECK_EQ(s[2], MPI_REQUEST_NULL);
    CHECK_EQ(MPI_Cancel(&s[3]), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&s[3], &st[3]), MPI_SUCCESS);
    flag = -1;
    CHECK_EQ(MPI_Test_cancelled(&st[3], &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    MPI_Error_class(MPI_Start(&s[4]), &cls);
    CHECK_EQ(cls, MPI_ERR_REQUEST);
    CHECK(s[4] != MPI_REQUEST_NULL);
    CHECK_EQ(MPI_Waitany(N - 4, &s[4], &idx, &st[4]), MPI_SUCCESS);
    CHECK(idx >= 0 && idx < N - 4);
    if (idx >= 0 && idx < N - 4)
        CHECK_EQ(s[4 + idx], MPI_REQUEST_NULL);
    CHECK_EQ(MPI_Testsome(8, &s[8], &outcount, indices, st), MPI_SUCCESS);
    CHECK(outcount >= 7 && outcount <= 8); /* all but one Waitany took, perhaps */
    for (int i = 8; i < 16; i++)
        CHECK_EQ(s[i], MPI_REQUEST_NULL);
    /* The rest, with the rendezvous send. */
    CHECK_EQ(MPI_Waitall(N + 1, s, st), MPI_SUCCESS);
    for (int i = 0; i <= N; i++)
        CHECK_EQ(s[i], MPI_REQUEST_NULL);
    CHECK_EQ(MPI_Waitall(N + 1, r, st), MPI_SUCCESS);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(in[i], from * 1000 + i);
        CHECK_EQ(st[i].MPI_SOURCE, from);
        CHECK_EQ(st[i].MPI_TAG, i);
    }
    for (int i = 0; i < BIG; i++)
        bad += bigin[i] != from * 7 + i;
    CHECK_EQ(bad, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(bigout);
    free(bigin);
}

/* --- MPI_Bsend_init ---------------------------------------------------------------------- */
/* Started, a buffered persistent send copies its message into the attached
 * buffer and is complete at once; the receiver gets every start's data, an
 * eager size (10 ints) and a rendezvous one (above the 16 KiB default eager
 * limit); with no buffer, or one too small, the start fails with
 * MPI_ERR_BUFFER and leaves the request inactive. */
static void test_bsendinit(void)
{
    enum { SMALL = 10, BIG = 30000, ROUNDS = 6 };
    int to = (rank + 1) % size, from = (rank - 1 + size) % size, flag, cnt;
    /* Room for every message of the test at once: a neighbour may take
     * them late. */
    int bsize = (ROUNDS + 3) * (BIG * (int)sizeof(int) + MPI_BSEND_OVERHEAD) + 64;
    int *sv = calloc(BIG, sizeof(int)), *rv = calloc(BIG, sizeof(int));
    char *bb = malloc((size_t)bsize);
    MPI_Request r[4];
    MPI_Status st[4];
    void *back;
    int back_size;

    CHECK_EQ(MPI_Bsend_init(sv, SMALL, MPI_INT, to, 70, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Bsend_init(sv, BIG, MPI_INT, to, 71, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
    MPI_Recv_init(rv, BIG, MPI_INT, from, 70, MPI_COMM_WORLD, &r[2]);
    MPI_Recv_init(rv, BIG, MPI_INT, from, 71, MPI_COMM_WORLD, &r[3]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* No buffer attached: the start fails, the request stays inactive (a
     * wait on it returns at once) and can be started later. */
    CHECK_EQ(MPI_Start(&r[0]), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Test(&r[0], &flag, &st[0]), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK_EQ(st[0].MPI_SOURCE, MPI_ANY_SOURCE);
    CHECK(r[0] != MPI_REQUEST_NULL);
    /* A buffer too small for the large message: only it fails. */
    {
        char small[SMALL * sizeof(int) + MPI_BSEND_OVERHEAD + 8];
        MPI_Buffer_attach(small, (int)sizeof(small));
        CHECK_EQ(MPI_Start(&r[1]), MPI_ERR_BUFFER);
        CHECK_EQ(MPI_Startall(1, &r[1]), MPI_ERR_BUFFER);
        MPI_Buffer_detach(&back, &back_size);
        CHECK(back == small);
    }
    /* Bad arguments. */
    CHECK_EQ(MPI_Bsend_init(sv, -1, MPI_INT, to, 1, MPI_COMM_WORLD, &r[0]), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Bsend_init(sv, 1, MPI_INT, size, 1, MPI_COMM_WORLD, &r[0]), MPI_ERR_RANK);
    CHECK_EQ(MPI_Bsend_init(sv, 1, MPI_INT, to, -3, MPI_COMM_WORLD, &r[0]), MPI_ERR_TAG);
    CHECK_EQ(MPI_Bsend_init(sv, 1, MPI_DATATYPE_NULL, to, 1, MPI_COMM_WORLD, &r[0]),
             MPI_ERR_TYPE);
    CHECK_EQ(MPI_Bsend_init(sv, 1, MPI_INT, to, 1, MPI_COMM_NULL, &r[0]), MPI_ERR_COMM);
    CHECK_EQ(MPI_Bsend_init(sv, 1, MPI_INT, to, 1, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Buffer_attach(bb, bsize);
    for (int it = 0; it < ROUNDS; it++) {
        int big = it % 2, n = big ? BIG : SMALL, bad = 0;
        for (int i = 0; i < BIG; i++) {
            sv[i] = rank * 1000000 + it * 1000 + i;
            rv[i] = -1;
        }
        /* The receive first on odd rounds, the send first on even ones:
         * the message lands posted or unexpected. */
        if (it % 4 < 2) {
            MPI_Start(&r[2 + big]);
            MPI_Start(&r[big]);
        } else {
            MPI_Startall(1, &r[big]);
            MPI_Start(&r[2 + big]);
        }
        /* Complete once buffered: the send buffer may change at once. */
        CHECK_EQ(MPI_Test(&r[big], &flag, &st[0]), MPI_SUCCESS);
        CHECK_EQ(flag, 1);
        CHECK(r[big] != MPI_REQUEST_NULL);
        for (int i = 0; i < BIG; i++)
            sv[i] = -7;
        MPI_Wait(&r[2 + big], &st[1]);
        CHECK_EQ(st[1].MPI_SOURCE, from);
        CHECK_EQ(st[1].MPI_TAG, 70 + big);
        MPI_Get_count(&st[1], MPI_INT, &cnt);
        CHECK_EQ(cnt, n);
        for (int i = 0; i < BIG; i++)
            bad += rv[i] != (i < n ? from * 1000000 + it * 1000 + i : -1);
        CHECK_EQ(bad, 0);
    }
    /* Both at once with Startall and Waitall, the receives by Waitany. */
    for (int i = 0; i < BIG; i++)
        sv[i] = 3 * i + rank;
    MPI_Startall(4, r);
    {
        int idx, got = 0;
        for (int k = 0; k < 4; k++) {
            MPI_Waitany(4, r, &idx, &st[0]);
            CHECK(idx >= 0 && idx < 4);
            got |= 1 << idx;
        }
        CHECK_EQ(got, 15);
        MPI_Waitany(4, r, &idx, &st[0]);
        CHECK_EQ(idx, MPI_UNDEFINED);
        CHECK_EQ(rv[BIG - 1], 3 * (BIG - 1) + from);
    }
    /* Cancelling a started one does nothing: it is complete already. */
    MPI_Start(&r[0]);
    MPI_Cancel(&r[0]);
    MPI_Wait(&r[0], &st[0]);
    CHECK_EQ(MPI_Test_cancelled(&st[0], &flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    MPI_Recv(rv, BIG, MPI_INT, from, 70, MPI_COMM_WORLD, &st[1]);
    CHECK_EQ(rv[SMALL - 1], 3 * (SMALL - 1) + from);
    /* Detach waits until the messages are out; the buffer comes back. */
    MPI_Buffer_detach(&back, &back_size);
    CHECK(back == bb);
    CHECK_EQ(back_size, bsize);
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&r[i]);
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
    free(bb);
    free(sv);
    free(rv);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- MPI_Isendrecv, MPI_Isendrecv_replace -------------------------------------------------- */
static int isr_val(int src, int round, int i)
{
    return src * 1000003 + round * 7919 + i;
}

/* Each rank exchanges with its ring neighbours: sends to the right,
 * receives from the left, n ints, through every completion call; the
 * status is the receive's. */
static void isr_ring(int n, int round, int how)
{
    int to = (rank + 1) % size, from = (rank - 1 + size) % size, flag = 0, idx, cnt, bad = 0;
    int *s = malloc((size_t)n * sizeof(int)), *d = malloc((size_t)(n + 1) * sizeof(int));
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[2];

    for (int i = 0; i < n; i++) {
        s[i] = isr_val(rank, round, i);
        d[i] = -1;
    }
    d[n] = -5;
    CHECK_EQ(MPI_Isendrecv(s, n, MPI_INT, to, 200 + round, d, n + 1, MPI_INT, from,
                           200 + round, MPI_COMM_WORLD, &r[1]),
             MPI_SUCCESS);
    CHECK(r[1] != MPI_REQUEST_NULL);
    switch (how) {
    case 0:
        MPI_Wait(&r[1], &st);
        break;
    case 1:
        while (!flag)
            MPI_Test(&r[1], &flag, &st);
        break;
    case 2:
        MPI_Waitall(2, r, sts);
        st = sts[1];
        break;
    case 3:
        MPI_Waitany(2, r, &idx, &st);
        CHECK_EQ(idx, 1);
        break;
    case 4:
        MPI_Waitsome(2, r, &cnt, &idx, sts);
        CHECK_EQ(cnt, 1);
        CHECK_EQ(idx, 1);
        st = sts[0];
        break;
    case 5:
        while (!flag)
            MPI_Testall(2, r, &flag, sts);
        st = sts[1];
        break;
    case 6:
        while (!flag)
            MPI_Testany(2, r, &idx, &flag, &st);
        CHECK_EQ(idx, 1);
        break;
    case 7:
        for (cnt = 0; cnt == 0;)
            MPI_Testsome(2, r, &cnt, &idx, sts);
        CHECK_EQ(cnt, 1);
        st = sts[0];
        break;
    default:
        /* Request_get_status leaves it to a wait, which gives the same. */
        while (!flag)
            MPI_Request_get_status(r[1], &flag, &st);
        CHECK(r[1] != MPI_REQUEST_NULL);
        MPI_Wait(&r[1], &sts[0]);
        CHECK_EQ(sts[0].MPI_SOURCE, st.MPI_SOURCE);
        break;
    }
    CHECK(r[1] == MPI_REQUEST_NULL);
    CHECK_EQ(st.MPI_SOURCE, from);
    CHECK_EQ(st.MPI_TAG, 200 + round);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, n);
    for (int i = 0; i < n; i++)
        bad += d[i] != isr_val(from, round, i);
    CHECK_EQ(bad, 0);
    CHECK_EQ(d[n], -5);
    free(s);
    free(d);
}

static void test_isendrecv(void)
{
    int to = (rank + 1) % size, from = (rank - 1 + size) % size, flag, cnt, bad;
    MPI_Request r, q[4];
    MPI_Status st;

    /* Eager (10 ints) and rendezvous (30,000 ints, above the eager limit)
     * through each completion call. */
    for (int how = 0; how < 9; how++) {
        isr_ring(10, 2 * how, how);
        isr_ring(30000, 2 * how + 1, how);
    }
    /* With itself, and with MPI_PROC_NULL (complete at once, an empty
     * status from MPI_PROC_NULL). */
    {
        int a = 41 + rank, b = -1;
        MPI_Isendrecv(&a, 1, MPI_INT, rank, 5, &b, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &st);
        CHECK_EQ(b, 41 + rank);
        CHECK_EQ(st.MPI_SOURCE, rank);
        MPI_Isendrecv(&a, 1, MPI_INT, MPI_PROC_NULL, 5, &b, 1, MPI_INT, MPI_PROC_NULL, 5,
                      MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &st);
        CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
        CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK_EQ(cnt, 0);
        /* Wildcard receives: the status names the sender and the tag.
         * (Only one wildcard each: a neighbour further on may have sent
         * the next part's messages, of other tags or from the other side.) */
        MPI_Isendrecv(&a, 1, MPI_INT, to, 6, &b, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD,
                      &r);
        MPI_Wait(&r, &st);
        CHECK_EQ(st.MPI_SOURCE, from);
        CHECK_EQ(st.MPI_TAG, 6);
        CHECK_EQ(b, 41 + from);
        b = -1;
        MPI_Isendrecv(&a, 1, MPI_INT, to, 7, &b, 1, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &r);
        MPI_Wait(&r, &st);
        CHECK_EQ(st.MPI_SOURCE, from);
        CHECK_EQ(st.MPI_TAG, 7);
        CHECK_EQ(b, 41 + from);
    }
    /* Several outstanding at once, both directions, the replace form
     * with a strided type (every other int of 2 x n), eager and
     * rendezvous: each buffer ends with the left (or right) neighbour's
     * data in the type's places and its gaps untouched. */
    for (int n = 8; n <= 20000; n *= 50) {
        MPI_Datatype vec;
        int *x = malloc((size_t)(2 * n) * sizeof(int)), *y = malloc((size_t)(2 * n) * sizeof(int));
        int *u = malloc((size_t)n * sizeof(int)), *v = malloc((size_t)n * sizeof(int));
        MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        for (int i = 0; i < 2 * n; i++) {
            x[i] = i % 2 ? -9 : isr_val(rank, n, i / 2);
            y[i] = i % 2 ? -9 : isr_val(rank, n + 1, i / 2);
        }
        for (int i = 0; i < n; i++)
            u[i] = isr_val(rank, n + 2, i);
        MPI_Isendrecv_replace(x, 1, vec, to, 90, from, 90, MPI_COMM_WORLD, &q[0]);
        MPI_Isendrecv_replace(y, 1, vec, from, 91, to, 91, MPI_COMM_WORLD, &q[1]);
        MPI_Isendrecv(u, n, MPI_INT, to, 92, v, n, MPI_INT, from, 92, MPI_COMM_WORLD, &q[2]);
        /* The type may go at once: the request holds it. */
        MPI_Type_free(&vec);
        MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
        bad = 0;
        for (int i = 0; i < 2 * n; i++) {
            bad += x[i] != (i % 2 ? -9 : isr_val(from, n, i / 2));
            bad += y[i] != (i % 2 ? -9 : isr_val(to, n + 1, i / 2));
        }
        for (int i = 0; i < n; i++)
            bad += v[i] != isr_val(from, n + 2, i);
        CHECK_EQ(bad, 0);
        free(x);
        free(y);
        free(u);
        free(v);
    }
    /* MPI_Request_free on an active one: it finishes on its own; the data
     * is there once the neighbour has it too. MPI_Cancel does not stop
     * one (it completes normally). */
    {
        int a = 7 * rank, b = -1, c = -1;
        MPI_Isendrecv(&a, 1, MPI_INT, to, 93, &b, 1, MPI_INT, from, 93, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        CHECK(r == MPI_REQUEST_NULL);
        MPI_Isendrecv(&a, 1, MPI_INT, to, 94, &c, 1, MPI_INT, from, 94, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK_EQ(flag, 0);
        CHECK_EQ(c, 7 * from);
        /* The freed one's receive lands while calls progress. */
        for (double t0 = MPI_Wtime(); b == -1 && MPI_Wtime() - t0 < 10;)
            MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK_EQ(b, 7 * from);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Errors: a receive too short ends the request with MPI_ERR_TRUNCATE
     * (Wait), or MPI_ERR_IN_STATUS with it in the status (Waitall); bad
     * arguments are refused at the call. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int a[4] = {1, 2, 3, 4}, b[4] = {0, 0, 0, 0};
        MPI_Status sts[1];
        MPI_Isendrecv(a, 4, MPI_INT, to, 95, b, 2, MPI_INT, from, 95, MPI_COMM_WORLD, &r);
        st.MPI_ERROR = -77;
        CHECK_EQ(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE);
        CHECK_EQ(st.MPI_ERROR, -77); /* left alone by a single completion */
        CHECK_EQ(b[2], 0);
        MPI_Isendrecv(a, 4, MPI_INT, to, 96, b, 3, MPI_INT, from, 96, MPI_COMM_WORLD, &q[0]);
        CHECK_EQ(MPI_Waitall(1, q, sts), MPI_ERR_IN_STATUS);
        CHECK_EQ(sts[0].MPI_ERROR, MPI_ERR_TRUNCATE);
        CHECK_EQ(MPI_Isendrecv(a, -1, MPI_INT, to, 1, b, 1, MPI_INT, from, 1, MPI_COMM_WORLD,
                               &r), MPI_ERR_COUNT);
        CHECK_EQ(MPI_Isendrecv(a, 1, MPI_INT, size, 1, b, 1, MPI_INT, from, 1, MPI_COMM_WORLD,
                               &r), MPI_ERR_RANK);
        CHECK_EQ(MPI_Isendrecv(a, 1, MPI_INT, to, 1, b, 1, MPI_INT, from, -2, MPI_COMM_WORLD,
                               &r), MPI_ERR_TAG);
        CHECK_EQ(MPI_Isendrecv(a, 1, MPI_INT, to, 1, b, 1, MPI_DATATYPE_NULL, from, 1,
                               MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
        CHECK_EQ(MPI_Isendrecv(a, 1, MPI_INT, to, 1, b, 1, MPI_INT, from, 1, MPI_COMM_NULL, &r),
                 MPI_ERR_COMM);
        CHECK_EQ(MPI_Isendrecv(a, 1, MPI_INT, to, 1, b, 1, MPI_INT, from, 1, MPI_COMM_WORLD,
                               NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Isendrecv_replace(a, 1, MPI_INT, MPI_ANY_SOURCE, 1, from, 1,
                                       MPI_COMM_WORLD, &r), MPI_ERR_RANK);
        CHECK_EQ(MPI_Isendrecv_replace(NULL, 3, MPI_INT, to, 1, from, 1, MPI_COMM_WORLD, &r),
                 MPI_ERR_BUFFER);
        CHECK_EQ(MPI_Isendrecv_replace(a, 1, MPI_INT, to, 1, from, 1, MPI_COMM_WORLD, NULL),
                 MPI_ERR_ARG);
        /* More than 2^31 - 1 bytes to replace: refused by both forms before anything
         * is read or allocated (a 4 GiB type over a 4-int buffer). */
        MPI_Datatype huge;
        MPI_Type_contiguous(1 << 30, MPI_INT, &huge);
        MPI_Type_commit(&huge);
        CHECK_EQ(MPI_Isendrecv_replace(a, 1, huge, to, 1, from, 1, MPI_COMM_WORLD, &r),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Sendrecv_replace(a, 1, huge, to, 1, from, 1, MPI_COMM_WORLD,
                                      MPI_STATUS_IGNORE), MPI_ERR_COUNT);
        MPI_Type_free(&huge);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- generalized requests ---------------------------------------------------------------- */
typedef struct greq_state {
    int queries, frees, cancels, last_complete;
    int query_rc, free_rc;
    int source, tag, count; /* what query_fn says */
} greq_state_t;

static int greq_query(void *extra, MPI_Status *status)
{
    greq_state_t *g = extra;

    g->queries++;
    status->MPI_SOURCE = g->source;
    status->MPI_TAG = g->tag;
    MPI_Status_set_elements(status, MPI_INT, g->count);
    MPI_Status_set_cancelled(status, g->cancels > 0);
    return g->query_rc;
}

static int greq_free(void *extra)
{
    greq_state_t *g = extra;

    g->frees++;
    return g->free_rc;
}

static int greq_cancel(void *extra, int complete)
{
    greq_state_t *g = extra;

    g->cancels++;
    g->last_complete = complete;
    return MPI_SUCCESS;
}

static MPI_Request greq_new(greq_state_t *g, int source, int tag, int count)
{
    MPI_Request r = MPI_REQUEST_NULL;

    memset(g, 0, sizeof(*g));
    g->source = source;
    g->tag = tag;
    g->count = count;
    CHECK_EQ(MPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &r), MPI_SUCCESS);
    CHECK(r != MPI_REQUEST_NULL);
    return r;
}

static void test_greq(void)
{
    greq_state_t g, h;
    MPI_Request r, q[3];
    MPI_Status st, sts[3];
    int flag, cnt, idx, out[3];

    /* Not complete until the program says so; then query_fn fills the
     * status of the wait, and free_fn runs once. */
    r = greq_new(&g, 3, 17, 5);
    CHECK_EQ(MPI_Test(&r, &flag, &st), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK_EQ(MPI_Request_get_status(r, &flag, &st), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK_EQ(g.queries, 0);
    CHECK_EQ(MPI_Grequest_complete(r), MPI_SUCCESS);
    CHECK_EQ(MPI_Request_get_status(r, &flag, &st), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK_EQ(g.queries, 1);
    CHECK_EQ(st.MPI_TAG, 17);
    CHECK_EQ(g.frees, 0);
    st.MPI_SOURCE = st.MPI_TAG = -1;
    CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_EQ(g.queries, 2);
    CHECK_EQ(g.frees, 1);
    CHECK_EQ(st.MPI_SOURCE, 3);
    CHECK_EQ(st.MPI_TAG, 17);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, 5);
    MPI_Test_cancelled(&st, &flag);
    CHECK_EQ(flag, 0);
    /* MPI_STATUS_IGNORE: query_fn still runs (on a status of onic's). */
    r = greq_new(&g, 0, 0, 0);
    MPI_Grequest_complete(r);
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(g.queries, 1);
    CHECK_EQ(g.frees, 1);
    /* With Test, Testany, Testsome, Testall, Waitany, Waitsome, among
     * point-to-point requests. */
    for (int how = 0; how < 6; how++) {
        int v = rank, w = -1;
        r = greq_new(&g, how, 20 + how, how);
        MPI_Irecv(&w, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &q[0]);
        q[1] = r;
        MPI_Send(&v, 1, MPI_INT, rank, 99, MPI_COMM_WORLD);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        CHECK_EQ(w, rank);
        /* Nothing complete among them: no call finds one. */
        switch (how) {
        case 0:
            MPI_Test(&q[1], &flag, &st);
            break;
        case 1:
            MPI_Testany(2, q, &idx, &flag, &st);
            break;
        case 2:
            MPI_Testsome(2, q, &cnt, out, sts);
            flag = cnt > 0;
            break;
        default:
            MPI_Testall(2, q, &flag, sts);
            break;
        }
        CHECK_EQ(flag, 0);
        CHECK_EQ(g.queries, 0);
        MPI_Grequest_complete(r);
        switch (how) {
        case 0:
            MPI_Test(&q[1], &flag, &st);
            CHECK_EQ(flag, 1);
            break;
        case 1:
            MPI_Testany(2, q, &idx, &flag, &st);
            CHECK_EQ(flag, 1);
            CHECK_EQ(idx, 1);
            break;
        case 2:
            MPI_Testsome(2, q, &cnt, out, sts);
            CHECK_EQ(cnt, 1);
            CHECK_EQ(out[0], 1);
            st = sts[0];
            break;
        case 3:
            MPI_Testall(2, q, &flag, sts);
            CHECK_EQ(flag, 1);
            st = sts[1];
            break;
        case 4:
            MPI_Waitany(2, q, &idx, &st);
            CHECK_EQ(idx, 1);
            break;
        default:
            MPI_Waitsome(2, q, &cnt, out, sts);
            CHECK_EQ(cnt, 1);
            st = sts[0];
            break;
        }
        CHECK(q[1] == MPI_REQUEST_NULL);
        CHECK_EQ(g.queries, 1);
        CHECK_EQ(g.frees, 1);
        CHECK_EQ(st.MPI_TAG, 20 + how);
        CHECK_EQ(st.MPI_SOURCE, how);
    }
    /* Waitall over two, completed in reverse order. */
    q[0] = greq_new(&g, 1, 1, 1);
    q[1] = greq_new(&h, 2, 2, 2);
    MPI_Grequest_complete(q[1]);
    MPI_Grequest_complete(q[0]);
    CHECK_EQ(MPI_Waitall(2, q, sts), MPI_SUCCESS);
    CHECK_EQ(sts[0].MPI_TAG, 1);
    CHECK_EQ(sts[1].MPI_TAG, 2);
    CHECK(g.frees == 1 && h.frees == 1);
    /* MPI_Request_free before the program completes it: free_fn runs at
     * MPI_Grequest_complete; after: at once. Never query_fn. */
    r = greq_new(&g, 0, 0, 0);
    q[0] = r;
    CHECK_EQ(MPI_Request_free(&q[0]), MPI_SUCCESS);
    CHECK(q[0] == MPI_REQUEST_NULL);
    CHECK_EQ(g.frees, 0);
    CHECK_EQ(MPI_Grequest_complete(r), MPI_SUCCESS);
    CHECK_EQ(g.frees, 1);
    r = greq_new(&g, 0, 0, 0);
    MPI_Grequest_complete(r);
    CHECK_EQ(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK_EQ(g.frees, 1);
    CHECK_EQ(g.queries, 0);
    /* MPI_Cancel calls cancel_fn, saying whether it is complete. */
    r = greq_new(&g, 0, 0, 0);
    CHECK_EQ(MPI_Cancel(&r), MPI_SUCCESS);
    CHECK_EQ(g.cancels, 1);
    CHECK_EQ(g.last_complete, 0);
    MPI_Grequest_complete(r);
    CHECK_EQ(MPI_Cancel(&r), MPI_SUCCESS);
    CHECK_EQ(g.cancels, 2);
    CHECK_EQ(g.last_complete, 1);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK_EQ(flag, 1);
    /* Errors: query_fn's error is the wait's (and the status's), and
     * MPI_ERR_IN_STATUS with it in the status from Waitall; free_fn's
     * when query_fn succeeded; completing twice, completing what is not a
     * generalized request, starting one, NULL callbacks. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    r = greq_new(&g, 0, 0, 0);
    g.query_rc = MPI_ERR_OTHER;
    MPI_Grequest_complete(r);
    CHECK_EQ(MPI_Request_get_status(r, &flag, &st), MPI_ERR_OTHER);
    st.MPI_ERROR = -77;
    CHECK_EQ(MPI_Wait(&r, &st), MPI_ERR_OTHER);
    CHECK_EQ(st.MPI_ERROR, -77); /* left alone by a single completion */
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_EQ(g.frees, 1);
    q[0] = greq_new(&g, 0, 0, 0);
    q[1] = greq_new(&h, 0, 0, 0);
    h.query_rc = MPI_ERR_ARG;
    MPI_Grequest_complete(q[0]);
    MPI_Grequest_complete(q[1]);
    CHECK_EQ(MPI_Waitall(2, q, sts), MPI_ERR_IN_STATUS);
    CHECK_EQ(sts[0].MPI_ERROR, MPI_SUCCESS);
    CHECK_EQ(sts[1].MPI_ERROR, MPI_ERR_ARG);
    CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL);
    r = greq_new(&g, 0, 0, 0);
    g.free_rc = MPI_ERR_INTERN;
    MPI_Grequest_complete(r);
    CHECK_EQ(MPI_Test(&r, &flag, &st), MPI_ERR_INTERN);
    CHECK_EQ(flag, 1);
    CHECK(r == MPI_REQUEST_NULL);
    r = greq_new(&g, 0, 0, 0);
    CHECK_EQ(MPI_Start(&r), MPI_ERR_REQUEST);
    MPI_Grequest_complete(r);
    CHECK_EQ(MPI_Grequest_complete(r), MPI_ERR_REQUEST);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(MPI_Grequest_complete(r), MPI_ERR_REQUEST); /* freed */
    {
        int v = 0;
        MPI_Irecv(&v, 1, MPI_INT, rank, 98, MPI_COMM_WORLD, &q[2]);
        CHECK_EQ(MPI_Grequest_complete(q[2]), MPI_ERR_REQUEST);
        MPI_Cancel(&q[2]);
        MPI_Wait(&q[2], MPI_STATUS_IGNORE);
    }
    CHECK_EQ(MPI_Grequest_start(NULL, greq_free, greq_cancel, &g, &r), MPI_ERR_ARG);
    CHECK_EQ(MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, NULL), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- large counts (MPI_Send_c, MPI_Recv_c) ------------------------------------------------- */
/* Counts that fit an int go as MPI_Send/MPI_Recv; beyond 2^31 - 1 a
 * contiguous type's elements go as one element of a type that covers them.
 * A message of 2^31 + 8 bytes is sent from a mapping only its first and
 * last pages of which are written (the rest reads as zero pages, so it
 * costs no memory), and received cut short; then a short message is
 * received with a count beyond 2^31 into such a mapping. */
static void test_largecount(void)
{
    const MPI_Count huge = ((MPI_Count)1 << 31) + 8;
    int to = (rank + 1) % size, from = (rank - 1 + size) % size, bad = 0;
    int *s = malloc(30000 * sizeof(int)), *d = malloc(30000 * sizeof(int));
    MPI_Status st;
    MPI_Count cc;
    int cnt;

    /* Blocking, around the ring (not with itself: a rendezvous send to
     * itself would wait for a receive it never reaches). */
    for (int n = 10; n <= 30000 && size >= 2; n *= 3000) {
        for (int i = 0; i < n; i++) {
            s[i] = isr_val(rank, n, i);
            d[i] = -1;
        }
        if (rank % 2 == 0) {
            CHECK_EQ(MPI_Send_c(s, n, MPI_INT, to, 60, MPI_COMM_WORLD), MPI_SUCCESS);
            CHECK_EQ(MPI_Recv_c(d, n, MPI_INT, from, 60, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        } else {
            CHECK_EQ(MPI_Recv_c(d, n, MPI_INT, from, 60, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            CHECK_EQ(MPI_Send_c(s, n, MPI_INT, to, 60, MPI_COMM_WORLD), MPI_SUCCESS);
        }
        CHECK_EQ(MPI_Get_count_c(&st, MPI_INT, &cc), MPI_SUCCESS);
        CHECK_EQ(cc, n);
        for (int i = 0; i < n; i++)
            bad += d[i] != isr_val(from, n, i);
        CHECK_EQ(bad, 0);
    }
    if (size >= 2 && rank < 2) {
        size_t len = (size_t)huge + 4096;
        unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        CHECK(m != MAP_FAILED);
        if (m != MAP_FAILED && rank == 0) {
            for (size_t i = 0; i < 4096; i++) {
                m[i] = pattern(1, i);
                m[(size_t)huge - 4096 + i] = pattern(2, i);
            }
            CHECK_EQ(MPI_Send_c(m, huge, MPI_BYTE, 1, 61, MPI_COMM_WORLD), MPI_SUCCESS);
            CHECK_EQ(MPI_Send_c(m, 4096, MPI_BYTE, 1, 62, MPI_COMM_WORLD), MPI_SUCCESS);
        } else if (m != MAP_FAILED) {
            unsigned char *b = malloc(8192);
            MPI_Probe(0, 61, MPI_COMM_WORLD, &st);
            CHECK_EQ(MPI_Get_count_c(&st, MPI_BYTE, &cc), MPI_SUCCESS);
            CHECK_EQ(cc, huge);
            CHECK_EQ(MPI_Get_count(&st, MPI_BYTE, &cnt), MPI_SUCCESS);
            CHECK_EQ(cnt, MPI_UNDEFINED);
            CHECK_EQ(MPI_Get_count_c(&st, MPI_INT, &cc), MPI_SUCCESS);
            CHECK_EQ(cc, (huge / 4));
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            CHECK_EQ(MPI_Recv_c(b, 8192, MPI_BYTE, 0, 61, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            for (size_t i = 0; i < 8192; i++)
                bad += b[i] != (i < 4096 ? pattern(1, i) : 0);
            CHECK_EQ(bad, 0);
            /* A count beyond 2^31 receives a short message. */
            CHECK_EQ(MPI_Recv_c(m, huge, MPI_BYTE, 0, 62, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            CHECK_EQ(MPI_Get_count_c(&st, MPI_BYTE, &cc), MPI_SUCCESS);
            CHECK_EQ(cc, 4096);
            for (size_t i = 0; i < 4096; i++)
                bad += m[i] != pattern(1, i);
            CHECK_EQ(bad, 0);
            free(b);
        }
        if (m != MAP_FAILED)
            munmap(m, len);
    }
    /* Errors: a negative count; beyond 2^31 - 1 elements of a
     * non-contiguous type; more than 2^42 bytes; a bad communicator. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        MPI_Datatype vec;
        MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        CHECK_EQ(MPI_Send_c(s, -1, MPI_INT, to, 1, MPI_COMM_WORLD), MPI_ERR_COUNT);
        CHECK_EQ(MPI_Recv_c(d, -5, MPI_INT, from, 1, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
        CHECK_EQ(MPI_Send_c(s, huge, vec, to, 1, MPI_COMM_WORLD), MPI_ERR_COUNT);
        CHECK_EQ(MPI_Send_c(s, (MPI_Count)1 << 41, MPI_INT, to, 1, MPI_COMM_WORLD),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Recv_c(d, huge, MPI_INT, from, 1, MPI_COMM_NULL, &st), MPI_ERR_COMM);
        CHECK_EQ(MPI_Send_c(s, huge, MPI_DATATYPE_NULL, to, 1, MPI_COMM_WORLD), MPI_ERR_TYPE);
        CHECK_EQ(MPI_Get_count_c(&st, MPI_INT, NULL), MPI_ERR_ARG);
        MPI_Type_free(&vec);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(s);
    free(d);
    MPI_Barrier(MPI_COMM_WORLD);
}

static const test_t tests[] = {
    {"setup", test_setup},         {"order", test_order},   {"unexpected", test_unexpected},
    {"pinned", test_pinned},
    {"probe", test_probe},         {"cancel", test_cancel}, {"truncate", test_truncate},
    {"modes", test_modes},         {"persistent", test_persistent},
    {"types", test_types},         {"comm", test_comm},     {"coll", test_coll},
    {"errors", test_errors},       {"large", test_large},   {"fanin", test_fanin},
    {"rndv", test_rndv},           {"smallburst", test_smallburst},
    {"refill", test_refill},       {"cancelrace", test_cancelrace},
    {"latesend", test_latesend},   {"empty", test_empty},
    {"isenddone", test_isenddone},
    {"bsendinit", test_bsendinit}, {"isendrecv", test_isendrecv},
    {"greq", test_greq},           {"largecount", test_largecount},
};

/* Not in "all": each takes seconds, or needs its own settings. */
static const test_t named_only[] = {
    {"held", test_held},
    {"rndvfail", test_rndvfail},
    {"threshold", test_threshold},
    {"midflood", test_midflood},
    {"pullmid", test_pullmid},
    {"iovtypes", test_iovtypes},
};

static int test_named(const char *name)
{
    if (strcmp(name, "all") == 0)
        return 1;
    for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
        if (strcmp(name, tests[t].name) == 0)
            return 1;
    for (size_t t = 0; t < sizeof(named_only) / sizeof(named_only[0]); t++)
        if (strcmp(name, named_only[t].name) == 0)
            return 1;
    return 0;
}

/* MPI_Init or a test that has not returned after 100 s fails here, naming
 * itself: a deadlock between processes (a collective's tree that waits on
 * a rank that never sends; MPI_Init agrees on communicators with one) or
 * a loop inside the library cannot be seen from the test but by a limit.
 * Each needs a few seconds at most on a loaded machine; ctest's limit for
 * one test is 120 s. */
static const char *watched = "";

static void watched_fired(int sig)
{
    char msg[200];
    int n = snprintf(msg, sizeof(msg), "mpi_tests rank %d: \"%s\" has not returned after "
                     "100 s: a deadlock or a call that never returns\n", rank, watched);

    (void)sig;
    if (write(2, msg, n > 0 ? (size_t)n : 0) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

static void run_test(const test_t *t)
{
    double t0 = MPI_Wtime();

    watched = t->name;
    signal(SIGALRM, watched_fired);
    alarm(100);
    t->fn();
    alarm(0);
    if (rank == 0)
        printf("%-11s %s (%.2f s)\n", t->name, failed ? "FAILED" : "ok", MPI_Wtime() - t0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int total = 0, prov;

    if (argc > 1 && strcmp(argv[1], "--multiple") == 0) {
        thread_asked = MPI_THREAD_MULTIPLE;
        argv[1] = argv[0];
        argc--;
        argv++;
    }
    watched = "MPI_Init";
    signal(SIGALRM, watched_fired);
    alarm(100);
    MPI_Init_thread(&argc, &argv, thread_asked, &prov);
    alarm(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* A name that is no test is an error, not a run of nothing that passes
     * (every rank sees the same arguments, so all stop alike). */
    for (int a = 1; a < argc; a++)
        if (!test_named(argv[a])) {
            if (rank == 0) {
                fprintf(stderr, "mpi_tests: unknown test \"%s\"; the tests are: all", argv[a]);
                for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
                    fprintf(stderr, " %s", tests[t].name);
                for (size_t t = 0; t < sizeof(named_only) / sizeof(named_only[0]); t++)
                    fprintf(stderr, " %s", named_only[t].name);
                fprintf(stderr, "\n");
            }
            MPI_Finalize();
            return 2;
        }
    if (argc < 2 && rank == 0)
        fprintf(stderr, "mpi_tests: no test named; running none\n");
    for (int a = 1; a < argc; a++) {
        for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
            if (strcmp(argv[a], "all") == 0 || strcmp(argv[a], tests[t].name) == 0)
                run_test(&tests[t]);
        for (size_t t = 0; t < sizeof(named_only) / sizeof(named_only[0]); t++)
            if (strcmp(argv[a], named_only[t].name) == 0)
                run_test(&named_only[t]);
    }
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failed checks over %d processes\n", total ? "FAIL" : "PASS", total, size);
    MPI_Finalize();
    return total != 0;
}
