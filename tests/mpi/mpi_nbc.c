/* Matched probe and non-blocking collectives, tested through onicrun:
 * `mpi_nbc NAME...` runs the named tests (or `all`) on every rank. Each
 * rank counts its failed checks and the job fails if any rank's count is
 * not zero. Expected values are computed from ranks, sizes and indexes
 * as MPI defines the operations. Runs at any number of processes, 1
 * included.
 *
 *   mprobe  Mprobe/Improbe/Mrecv/Imrecv: eager and rendezvous sizes,
 *           wildcards, MPI_PROC_NULL, a probed message out of matching,
 *           truncation, error cases
 *   mprace  two probers taking messages in turns, each holding some
 *           before receiving them: every message received exactly once,
 *           each sender's in order
 *   icoll   every non-blocking collective at every root, MPI_IN_PLACE,
 *           a user operation that does not commute, rendezvous sizes;
 *           the first round under way before the call returns
 *   iorder  several collectives outstanding on one communicator,
 *           interleaved with point-to-point, completed in any order
 *   idup    MPI_Comm_idup outstanding with other collectives and with a
 *           blocking MPI_Comm_dup: communicators of their own contexts;
 *           ids come back when freed
 *   idupx   two and three idups started in opposite and rotated orders on
 *           communicators over the same and over overlapping processes,
 *           with blocking dups between them, and one process waiting for
 *           one idup before starting the other: each new communicator
 *           works and has a context of its own
 *   idupmem allocation failing at one process while an idup's further
 *           rounds run: every process's wait returns (MPI_SUCCESS or an
 *           error class), none hangs; logs errors, so a test of its own
 *   idupfull every context id in use at rank 0: MPI_Comm_split refused,
 *           and an idup of a one-process communicator waiting behind
 *           another takes its further rounds at later progress, getting
 *           an id freed meanwhile; logs an error too (run with idupmem
 *           at 2 processes)
 *   ierrors bad roots, operations, buffers and requests; mismatched counts
 *   commfree MPI_Comm_free with collectives, an idup and point-to-point
 *           outstanding on the communicator: they complete, its context
 *           id stays taken meanwhile, and the last to end frees it */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_check.h"
#include "base/mem.h"

/* A value that names where it came from. */
static int val(int src, int tag, int i)
{
    return src * 1000003 + tag * 1009 + i;
}

/* --- Matched probe ------------------------------------------------------------------- */
/* Sizes that cover empty, eager, rendezvous and a large pull (in ints). */
static const int mp_sizes[] = {0, 2, 700, 100000};
#define MP_NSIZES 4

static void mprobe_receive_all(int use_improbe)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Request sreq[MP_NSIZES];
    int *sbuf[MP_NSIZES];

    for (int k = 0; k < MP_NSIZES; k++) {
        sbuf[k] = malloc(sizeof(int) * (size_t)(mp_sizes[k] + 1));
        for (int i = 0; i < mp_sizes[k]; i++)
            sbuf[k][i] = val(rank, 10 + k, i);
        MPI_Isend(sbuf[k], mp_sizes[k], MPI_INT, right, 10 + k, MPI_COMM_WORLD, &sreq[k]);
    }
    /* Largest first, by tag: each probe names its tag, the source is a wildcard. */
    for (int k = MP_NSIZES - 1; k >= 0; k--) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int count = -1, flag = 0, *buf;

        if (use_improbe) {
            while (!flag)
                CHECK_EQ(MPI_Improbe(MPI_ANY_SOURCE, 10 + k, MPI_COMM_WORLD, &flag, &msg, &st),
                         MPI_SUCCESS);
        } else {
            CHECK_EQ(MPI_Mprobe(MPI_ANY_SOURCE, 10 + k, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
        }
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC);
        CHECK_EQ(st.MPI_SOURCE, left);
        CHECK_EQ(st.MPI_TAG, 10 + k);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_EQ(count, mp_sizes[k]);
        buf = malloc(sizeof(int) * (size_t)(mp_sizes[k] + 1));
        memset(buf, 0xff, sizeof(int) * (size_t)(mp_sizes[k] + 1));
        if (use_improbe) {
            MPI_Request r;
            CHECK_EQ(MPI_Imrecv(buf, mp_sizes[k], MPI_INT, &msg, &r), MPI_SUCCESS);
            CHECK_EQ(msg, MPI_MESSAGE_NULL);
            CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
        } else {
            CHECK_EQ(MPI_Mrecv(buf, mp_sizes[k], MPI_INT, &msg, &st), MPI_SUCCESS);
            CHECK_EQ(msg, MPI_MESSAGE_NULL);
        }
        CHECK_EQ(st.MPI_SOURCE, left);
        CHECK_EQ(st.MPI_TAG, 10 + k);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_EQ(count, mp_sizes[k]);
        for (int i = 0; i < mp_sizes[k]; i++)
            if (buf[i] != val(left, 10 + k, i)) {
                CHECK_EQ(buf[i], val(left, 10 + k, i));
                break;
            }
        CHECK_EQ(buf[mp_sizes[k]], -1); /* nothing past the message */
        free(buf);
    }
    MPI_Waitall(MP_NSIZES, sreq, MPI_STATUSES_IGNORE);
    for (int k = 0; k < MP_NSIZES; k++)
        free(sbuf[k]);
}

static void mprobe_proc_null(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Request r;
    int flag = 0, count = -1, x = 7;

    CHECK_EQ(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
    CHECK_EQ(msg, MPI_MESSAGE_NO_PROC);
    CHECK_EQ(MPI_Message_f2c(MPI_Message_c2f(msg)), MPI_MESSAGE_NO_PROC);
    CHECK_EQ(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)), MPI_MESSAGE_NULL);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 0);
    st.MPI_SOURCE = 5;
    CHECK_EQ(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st), MPI_SUCCESS);
    CHECK_EQ(msg, MPI_MESSAGE_NULL);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 0);
    CHECK_EQ(x, 7); /* nothing written */
    CHECK_EQ(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st),
             MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK_EQ(msg, MPI_MESSAGE_NO_PROC);
    CHECK_EQ(MPI_Imrecv(&x, 1, MPI_INT, &msg, &r), MPI_SUCCESS);
    CHECK_EQ(msg, MPI_MESSAGE_NULL);
    CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(x, 7);
}

/* A probed message is out of matching: a probe or receive that would have
 * matched it takes the next one, and the Mrecv still gets the first. */
static void mprobe_out_of_matching(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int a[3] = {val(rank, 1, 0), val(rank, 1, 1), val(rank, 1, 2)}, b = val(rank, 2, 0);
    int ra[3] = {0, 0, 0}, rb = 0, count = -1, flag = 1;
    MPI_Request s[2];
    MPI_Message msg;
    MPI_Status st;

    MPI_Isend(a, 3, MPI_INT, right, 30, MPI_COMM_WORLD, &s[0]);
    MPI_Isend(&b, 1, MPI_INT, right, 30, MPI_COMM_WORLD, &s[1]);
    CHECK_EQ(MPI_Mprobe(left, 30, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 3); /* the older message */
    /* The second message, not the first, is what is left to match. */
    do
        MPI_Iprobe(left, 30, MPI_COMM_WORLD, &flag, &st);
    while (!flag);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 1);
    CHECK_EQ(MPI_Recv(&rb, 3, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &st),
             MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 1);
    CHECK_EQ(rb, val(left, 2, 0));
    /* Nothing more to match. */
    MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
    MPI_Improbe(left, 30, MPI_COMM_WORLD, &flag, &(MPI_Message){0}, MPI_STATUS_IGNORE);
    CHECK_EQ(flag, 0);
    /* Through Fortran's integer and back (both names), the handle still
     * receives its message. */
    msg = PMPI_Message_f2c(MPI_Message_c2f(msg));
    msg = MPI_Message_f2c(PMPI_Message_c2f(msg));
    CHECK_EQ(MPI_Mrecv(ra, 3, MPI_INT, &msg, &st), MPI_SUCCESS);
    CHECK_EQ(msg, MPI_MESSAGE_NULL);
    CHECK(ra[0] == val(left, 1, 0) && ra[1] == val(left, 1, 1) && ra[2] == val(left, 1, 2));
}

static void mprobe_truncate(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int n[2] = {16, 5000}; /* eager and rendezvous */

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < 2; k++) {
        int *s = malloc(sizeof(int) * (size_t)n[k]), r[5] = {0, 0, 0, 0, -1}, count = -1;
        MPI_Request sr, rr;
        MPI_Message msg;
        MPI_Status st;

        for (int i = 0; i < n[k]; i++)
            s[i] = val(rank, 40 + k, i);
        MPI_Isend(s, n[k], MPI_INT, right, 40 + k, MPI_COMM_WORLD, &sr);
        CHECK_EQ(MPI_Mprobe(left, 40 + k, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
        if (k == 0) {
            CHECK_EQ(MPI_Mrecv(r, 4, MPI_INT, &msg, &st), MPI_ERR_TRUNCATE);
        } else {
            CHECK_EQ(MPI_Imrecv(r, 4, MPI_INT, &msg, &rr), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&rr, &st), MPI_ERR_TRUNCATE);
        }
        CHECK_EQ(msg, MPI_MESSAGE_NULL);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_EQ(count, 4);
        for (int i = 0; i < 4; i++)
            CHECK_EQ(r[i], val(left, 40 + k, i));
        CHECK_EQ(r[4], -1);
        CHECK_EQ(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
        free(s);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void mprobe_errors(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL, stale;
    MPI_Request r;
    int x = 1, flag;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Mrecv(&x, 1, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    msg = 12345;
    CHECK_EQ(MPI_Imrecv(&x, 1, MPI_INT, &msg, &r), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Mrecv(&x, 1, MPI_INT, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    CHECK_EQ(MPI_Mprobe(size, 0, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    CHECK_EQ(MPI_Mprobe(0, -5, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE), MPI_ERR_TAG);
    CHECK_EQ(MPI_Improbe(0, 0, MPI_COMM_NULL, &flag, &msg, MPI_STATUS_IGNORE), MPI_ERR_COMM);
    CHECK_EQ(MPI_Improbe(0, 0, MPI_COMM_WORLD, NULL, &msg, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    CHECK_EQ(MPI_Mprobe(0, 0, MPI_COMM_WORLD, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    /* A message handle is good for one receive. */
    MPI_Send(&x, 1, MPI_INT, rank, 50, MPI_COMM_WORLD);
    CHECK_EQ(MPI_Mprobe(rank, 50, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE), MPI_SUCCESS);
    stale = msg;
    CHECK_EQ(MPI_Mrecv(&x, 1, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(MPI_Mrecv(&x, 1, MPI_INT, &stale, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    /* A bad buffer or type leaves the message to a correct receive. */
    MPI_Send(&x, 1, MPI_INT, rank, 51, MPI_COMM_WORLD);
    CHECK_EQ(MPI_Mprobe(rank, 51, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(MPI_Mrecv(NULL, 1, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Mrecv(&x, -1, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Mrecv(&x, 1, MPI_DATATYPE_NULL, &msg, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    CHECK(msg != MPI_MESSAGE_NULL);
    CHECK_EQ(MPI_Mrecv(&x, 1, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_mprobe(void)
{
    mprobe_receive_all(0);
    mprobe_receive_all(1);
    mprobe_proc_null();
    mprobe_out_of_matching();
    mprobe_truncate();
    mprobe_errors();
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- Two probers racing -------------------------------------------------------------------- */
#define RACE_N 300 /* messages from each rank to rank 0 */
#define RACE_HOLD 3 /* messages a prober holds before receiving them */

typedef struct prober {
    MPI_Message held[RACE_HOLD];
    int         order[RACE_HOLD]; /* when each was probed */
    int         n;
} prober_t;

/* Receive what p holds; record who sent what, in the order it was probed. */
static void race_drain(prober_t *p, int *seen, int *ord_src, int *ord_seq)
{
    for (int h = 0; h < p->n; h++) {
        int buf[2048], count = 0;
        MPI_Status st;

        CHECK_EQ(MPI_Mrecv(buf, 2048, MPI_INT, &p->held[h], &st), MPI_SUCCESS);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count >= 2);
        CHECK_EQ(buf[0], st.MPI_SOURCE);
        if (buf[0] < 0 || buf[0] >= size || buf[1] < 0 || buf[1] >= RACE_N)
            continue;
        CHECK_EQ(st.MPI_TAG, buf[1] % 4);
        seen[buf[0] * RACE_N + buf[1]]++;
        ord_src[p->order[h]] = buf[0];
        ord_seq[p->order[h]] = buf[1];
        for (int i = 2; i < count; i++)
            if (buf[i] != val(buf[0], buf[1], i)) {
                CHECK_EQ(buf[i], val(buf[0], buf[1], i));
                break;
            }
    }
    p->n = 0;
}

static void test_mprace(void)
{
    MPI_Request *reqs = malloc(sizeof(*reqs) * RACE_N);
    int (*bufs)[2048] = malloc(sizeof(*bufs) * RACE_N);

    /* Every rank (0 too) sends RACE_N messages of varying size and tag,
     * some past the eager limit, to rank 0. */
    for (int s = 0; s < RACE_N; s++) {
        int n = 2 + (s * 37) % (s % 10 == 0 ? 2046 : 60);
        bufs[s][0] = rank;
        bufs[s][1] = s;
        for (int i = 2; i < n; i++)
            bufs[s][i] = val(rank, s, i);
        MPI_Isend(bufs[s], n, MPI_INT, 0, s % 4, MPI_COMM_WORLD, &reqs[s]);
    }
    if (rank == 0) {
        int total = size * RACE_N, got = 0, order = 0;
        int *seen = calloc((size_t)total, sizeof(int));
        int *ord_src = malloc(sizeof(int) * (size_t)(total + 1));
        int *ord_seq = malloc(sizeof(int) * (size_t)(total + 1));
        int *last = malloc(sizeof(int) * (size_t)size * 4);
        prober_t p[2];

        for (int i = 0; i < size * 4; i++)
            last[i] = -1;
        for (int i = 0; i <= total; i++)
            ord_src[i] = -1;
        memset(p, 0, sizeof(p));
        /* Prober 0 takes any message, prober 1 those of tag 1 or 3, in
         * turns: whichever probes first takes a message, and neither can
         * see it again. */
        while (got < total) {
            for (int k = 0; k < 2 && got < total; k++) {
                MPI_Message m;
                MPI_Status st;
                int flag = 0, tag = k == 0 ? MPI_ANY_TAG : 1 + 2 * (order % 2);

                MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &m, &st);
                if (!flag)
                    continue;
                CHECK(tag == MPI_ANY_TAG || st.MPI_TAG == tag);
                p[k].order[p[k].n] = ++order;
                p[k].held[p[k].n++] = m;
                got++;
                if (p[k].n == RACE_HOLD)
                    race_drain(&p[k], seen, ord_src, ord_seq);
            }
        }
        race_drain(&p[0], seen, ord_src, ord_seq);
        race_drain(&p[1], seen, ord_src, ord_seq);
        for (int i = 0; i < total; i++)
            if (seen[i] != 1) {
                CHECK_EQ(seen[i], 1);
                break;
            }
        /* Each sender's messages of one tag were probed in the order sent
         * (a probe takes the oldest that matches). */
        for (int o = 1; o <= total; o++) {
            int src = ord_src[o], seq = ord_seq[o];
            CHECK(src >= 0);
            if (src < 0)
                break;
            CHECK(seq > last[src * 4 + seq % 4]);
            last[src * 4 + seq % 4] = seq;
        }
        free(seen);
        free(ord_src);
        free(ord_seq);
        free(last);
    }
    MPI_Waitall(RACE_N, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    free(bufs);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- Non-blocking collectives -------------------------------------------------------------- */
static void wait_or_test(MPI_Request *r, int by_test)
{
    int flag = 0;

    if (!by_test) {
        CHECK_EQ(MPI_Wait(r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        return;
    }
    while (!flag)
        CHECK_EQ(MPI_Test(r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(*r, MPI_REQUEST_NULL);
}

/* A pair (value, weight): concatenation of decimal digits, which is
 * associative and does not commute. io = in . io */
static void concat_op(void *in, void *io, int *len, MPI_Datatype *type)
{
    long long *a = in, *b = io;

    (void)type;
    for (int i = 0; i < *len; i++) {
        b[2 * i] = a[2 * i] * b[2 * i + 1] + b[2 * i];
        b[2 * i + 1] = a[2 * i + 1] * b[2 * i + 1];
    }
}

static void icoll_barrier(void)
{
    MPI_Request r;
    int flag = 1, go = 1;

    /* Rank 1 starts its barrier only when rank 0 says so, after rank 0
     * tested its own: that test cannot have found it complete. */
    if (rank == 1)
        MPI_Recv(&go, 1, MPI_INT, 0, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &r), MPI_SUCCESS);
    if (rank == 0 && size > 1) {
        CHECK_EQ(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(flag, 0);
        MPI_Send(&go, 1, MPI_INT, 1, 60, MPI_COMM_WORLD);
    }
    wait_or_test(&r, rank % 2);
}

/* The call starts the first round (icoll.c): the root's Ibcast reaches
 * rank 1, its child in the tree, while the root makes no MPI call at all.
 * Rank 1 says it has the data through memory the two share. */
static void icoll_starts(void)
{
    MPI_Win win;
    MPI_Aint bytes;
    MPI_Request r;
    struct timespec t0, now, tick = {0, 1000 * 1000};
    int *flag, *mine, unit, b = rank == 0 ? 42 : -1;

    if (size < 2)
        return;
    MPI_Win_allocate_shared(rank == 0 ? sizeof(int) : 0, sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &mine, &win);
    MPI_Win_shared_query(win, 0, &bytes, &unit, &flag);
    if (rank == 0)
        __atomic_store_n(flag, 0, __ATOMIC_RELEASE);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    if (rank == 0) {
        /* Up to 20 s (the stage has 30), by the clock, not MPI_Wtime. */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            nanosleep(&tick, NULL);
            clock_gettime(CLOCK_MONOTONIC, &now);
        } while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && now.tv_sec - t0.tv_sec < 20);
        CHECK_EQ(__atomic_load_n(flag, __ATOMIC_ACQUIRE), 1);
    }
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(b, 42);
    if (rank == 1)
        __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
}

static void icoll_bcast(void)
{
    int counts[3] = {1, 1000, 70000};

    for (int root = 0; root < size; root++)
        for (int k = 0; k < 3; k++) {
            int n = counts[k], *b = malloc(sizeof(int) * (size_t)n);
            MPI_Request r;
            for (int i = 0; i < n; i++)
                b[i] = rank == root ? val(root, k, i) : -1;
            CHECK_EQ(MPI_Ibcast(b, n, MPI_INT, root, MPI_COMM_WORLD, &r), MPI_SUCCESS);
            wait_or_test(&r, (root + k) % 2);
            for (int i = 0; i < n; i++)
                if (b[i] != val(root, k, i)) {
                    CHECK_EQ(b[i], val(root, k, i));
                    break;
                }
            free(b);
        }
}

static void icoll_reduce(void)
{
    int n = 3000; /* past the eager limit as packed data */
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    long long sumr = (long long)size * (size + 1) / 2;
    MPI_Request r;

    for (int i = 0; i < n; i++)
        in[i] = (rank + 1) * (i + 1);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++)
            out[i] = -1;
        CHECK_EQ(MPI_Ireduce(in, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &r),
                 MPI_SUCCESS);
        wait_or_test(&r, root % 2);
        for (int i = 0; i < n; i++)
            if (out[i] != (rank == root ? (int)sumr * (i + 1) : -1)) {
                CHECK_EQ(out[i], rank == root ? (int)sumr * (i + 1) : -1);
                break;
            }
        /* In place at the root: its input is in recvbuf. */
        for (int i = 0; i < n; i++)
            out[i] = in[i];
        CHECK_EQ(MPI_Ireduce(rank == root ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_MAX, root,
                             MPI_COMM_WORLD, &r), MPI_SUCCESS);
        wait_or_test(&r, 0);
        if (rank == root)
            CHECK(out[0] == size && out[n - 1] == size * n);
    }
    /* Allreduce: sums, doubles' maxima in place, and the user operation in rank order. */
    CHECK_EQ(MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    wait_or_test(&r, 1);
    for (int i = 0; i < n; i++)
        if (out[i] != (int)sumr * (i + 1)) {
            CHECK_EQ(out[i], (int)sumr * (i + 1));
            break;
        }
    {
        double d[4] = {rank, -rank, 0.5 * rank, 1e9 - rank};
        CHECK_EQ(MPI_Iallreduce(MPI_IN_PLACE, d, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &r),
                 MPI_SUCCESS);
        wait_or_test(&r, 0);
        CHECK(d[0] == size - 1 && d[1] == 0 && d[2] == 0.5 * (size - 1) && d[3] == 1e9);
    }
    {
        MPI_Datatype pair;
        MPI_Op op;
        long long mine[2] = {rank + 1, 10}, all[2] = {0, 0}, expect = 0;
        MPI_Type_contiguous(2, MPI_LONG_LONG, &pair);
        MPI_Type_commit(&pair);
        MPI_Op_create(concat_op, 0, &op);
        for (int i = 0; i < size; i++)
            expect = expect * 10 + i + 1;
        CHECK_EQ(MPI_Iallreduce(mine, all, 1, pair, op, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        /* Freed while the collective runs: MPI keeps them until it is over. */
        MPI_Op_free(&op);
        MPI_Type_free(&pair);
        wait_or_test(&r, 1);
        CHECK_EQ(all[0], expect);
        for (int root = 0; root < size; root++) {
            MPI_Type_contiguous(2, MPI_LONG_LONG, &pair);
            MPI_Type_commit(&pair);
            MPI_Op_create(concat_op, 0, &op);
            all[0] = all[1] = 0;
            CHECK_EQ(MPI_Ireduce(mine, all, 1, pair, op, root, MPI_COMM_WORLD, &r), MPI_SUCCESS);
            wait_or_test(&r, 0);
            CHECK_EQ(all[0], rank == root ? expect : 0);
            MPI_Op_free(&op);
            MPI_Type_free(&pair);
        }
    }
    free(in);
    free(out);
}

static void icoll_gather_scatter(void)
{
    int m = 3, *all = malloc(sizeof(int) * (size_t)(m * size)), mine[3];
    MPI_Request r;

    for (int root = 0; root < size; root++) {
        for (int j = 0; j < m; j++)
            mine[j] = val(rank, root, j);
        for (int i = 0; i < m * size; i++)
            all[i] = -1;
        CHECK_EQ(MPI_Igather(mine, m, MPI_INT, all, m, MPI_INT, root, MPI_COMM_WORLD, &r),
                 MPI_SUCCESS);
        wait_or_test(&r, root % 2);
        if (rank == root)
            for (int i = 0; i < size; i++)
                for (int j = 0; j < m; j++)
                    CHECK_EQ(all[i * m + j], val(i, root, j));
        /* Scatter back what was gathered, the root's block in place. */
        for (int j = 0; j < m; j++)
            mine[j] = -1;
        CHECK_EQ(MPI_Iscatter(all, m, MPI_INT, rank == root ? MPI_IN_PLACE : mine, m, MPI_INT,
                              root, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        wait_or_test(&r, 0);
        for (int j = 0; j < m; j++)
            CHECK_EQ(rank == root ? all[root * m + j] : mine[j], val(rank, root, j));
    }
    free(all);
}

static void icoll_allgather_alltoall(void)
{
    int m = 700; /* blocks past the eager limit */
    int *s = malloc(sizeof(int) * (size_t)(m * size)), *a = malloc(sizeof(int) * (size_t)(m * size));
    MPI_Request r;

    for (int j = 0; j < m; j++)
        s[j] = val(rank, 1, j);
    CHECK_EQ(MPI_Iallgather(s, m, MPI_INT, a, m, MPI_INT, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    wait_or_test(&r, 1);
    for (int i = 0; i < size; i++)
        for (int j = 0; j < m; j += 97)
            CHECK_EQ(a[i * m + j], val(i, 1, j));
    for (int i = 0; i < m * size; i++)
        a[i] = i / m == rank ? val(rank, 2, i % m) : -1;
    CHECK_EQ(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, m, MPI_INT, MPI_COMM_WORLD, &r),
             MPI_SUCCESS);
    wait_or_test(&r, 0);
    for (int i = 0; i < size; i++)
        for (int j = 0; j < m; j += 97)
            CHECK_EQ(a[i * m + j], val(i, 2, j));
    /* Alltoall: block d of rank r is val(r, d, j). */
    for (int d = 0; d < size; d++)
        for (int j = 0; j < m; j++)
            s[d * m + j] = val(rank, 10 + d, j);
    CHECK_EQ(MPI_Ialltoall(s, m, MPI_INT, a, m, MPI_INT, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    wait_or_test(&r, 1);
    for (int i = 0; i < size; i++)
        for (int j = 0; j < m; j += 97)
            CHECK_EQ(a[i * m + j], val(i, 10 + rank, j));
    memcpy(a, s, sizeof(int) * (size_t)(m * size));
    CHECK_EQ(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, m, MPI_INT, MPI_COMM_WORLD, &r),
             MPI_SUCCESS);
    wait_or_test(&r, 0);
    for (int i = 0; i < size; i++)
        for (int j = 0; j < m; j += 97)
            CHECK_EQ(a[i * m + j], val(i, 10 + rank, j));
    free(s);
    free(a);
}

/* The v-forms: process i's block has i + 1 elements (gatherv, scatterv,
 * allgatherv; times 300 for alltoallv's, past the eager limit), with a gap
 * of one element before each block that must stay untouched. */
static void icoll_v(void)
{
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int total = 0, stotal = 0, mine[64], *all, *s, *a;
    MPI_Request r;

    for (int i = 0; i < size; i++) {
        cnt[i] = i + 1;
        dsp[i] = total + 1;
        total += i + 2;
    }
    all = malloc(sizeof(int) * (size_t)total);
    for (int root = 0; root < size; root++) {
        for (int j = 0; j < rank + 1; j++)
            mine[j] = val(rank, root, j);
        for (int i = 0; i < total; i++)
            all[i] = -1;
        CHECK_EQ(MPI_Igatherv(mine, rank + 1, MPI_INT, all, cnt, dsp, MPI_INT, root,
                              MPI_COMM_WORLD, &r), MPI_SUCCESS);
        wait_or_test(&r, root % 2);
        if (rank == root)
            for (int i = 0; i < size; i++) {
                CHECK_EQ(all[dsp[i] - 1], -1);
                for (int j = 0; j < cnt[i]; j++)
                    CHECK_EQ(all[dsp[i] + j], val(i, root, j));
            }
        /* Scatter back what was gathered, the root's block in place. */
        for (int j = 0; j < rank + 2; j++)
            mine[j] = -1;
        CHECK_EQ(MPI_Iscatterv(all, cnt, dsp, MPI_INT, rank == root ? MPI_IN_PLACE : mine,
                               rank + 1, MPI_INT, root, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        wait_or_test(&r, 0);
        for (int j = 0; j < rank + 1; j++)
            CHECK_EQ(rank == root ? all[dsp[root] + j] : mine[j], val(rank, root, j));
        if (rank != root)
            CHECK_EQ(mine[rank + 1], -1);
        /* The root's own block, gathered in place. */
        for (int i = 0; i < total; i++)
            all[i] = i == dsp[root] && rank == root ? -7 : -1;
        CHECK_EQ(MPI_Igatherv(rank == root ? MPI_IN_PLACE : mine, rank + 1, MPI_INT, all, cnt,
                              dsp, MPI_INT, root, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        wait_or_test(&r, 1);
        if (rank == root)
            for (int i = 0; i < size; i++)
                CHECK_EQ(all[dsp[i]], i == root ? -7 : val(i, root, 0));
    }
    /* Allgatherv, and again in place. */
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int i = 0; i < total; i++)
            all[i] = -1;
        for (int j = 0; j < rank + 1; j++) {
            mine[j] = val(rank, 5, j);
            if (in_place)
                all[dsp[rank] + j] = mine[j];
        }
        CHECK_EQ(MPI_Iallgatherv(in_place ? MPI_IN_PLACE : mine, rank + 1, MPI_INT, all, cnt, dsp,
                                 MPI_INT, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        wait_or_test(&r, in_place);
        for (int i = 0; i < size; i++) {
            CHECK_EQ(all[dsp[i] - 1], -1);
            for (int j = 0; j < cnt[i]; j++)
                CHECK_EQ(all[dsp[i] + j], val(i, 5, j));
        }
    }
    /* Alltoallv: rank a sends rank b 300 (a + b + 1) elements. */
    total = 0;
    for (int b = 0; b < size; b++) {
        sc[b] = cnt[b] = 300 * (rank + b + 1);
        sd[b] = stotal;
        dsp[b] = total + 1;
        stotal += sc[b];
        total += cnt[b] + 1;
    }
    s = malloc(sizeof(int) * (size_t)stotal);
    a = malloc(sizeof(int) * (size_t)total);
    for (int b = 0; b < size; b++)
        for (int j = 0; j < sc[b]; j++)
            s[sd[b] + j] = val(rank, 10 + b, j);
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int i = 0; i < total; i++)
            a[i] = -1;
        if (in_place) /* what goes to b is in b's receive block */
            for (int b = 0; b < size; b++)
                memcpy(a + dsp[b], s + sd[b], sizeof(int) * (size_t)sc[b]);
        CHECK_EQ(MPI_Ialltoallv(in_place ? MPI_IN_PLACE : s, sc, sd, MPI_INT, a, cnt, dsp,
                                MPI_INT, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        wait_or_test(&r, !in_place);
        for (int b = 0; b < size; b++) {
            CHECK_EQ(a[dsp[b] - 1], -1);
            for (int j = 0; j < cnt[b]; j += 37)
                CHECK_EQ(a[dsp[b] + j], val(b, 10 + rank, j));
            CHECK_EQ(a[dsp[b] + cnt[b] - 1], val(b, 10 + rank, cnt[b] - 1));
        }
    }
    /* Ialltoallw: the same exchange, byte displacements, and to odd ranks
     * as one element of a derived type freed before the wait (kept). */
    for (int in_place = 0; in_place < 2; in_place++) {
        MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size);
        MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
        int *sw = malloc(sizeof(int) * (size_t)size), *sbd = malloc(sizeof(int) * (size_t)size);
        int *rbd = malloc(sizeof(int) * (size_t)size);
        for (int b = 0; b < size; b++) {
            st[b] = rt[b] = MPI_INT;
            sw[b] = sc[b];
            sbd[b] = sd[b] * (int)sizeof(int);
            rbd[b] = dsp[b] * (int)sizeof(int);
            if (b % 2) {
                MPI_Type_contiguous(sc[b], MPI_INT, &st[b]);
                MPI_Type_commit(&st[b]);
                sw[b] = 1;
            }
        }
        for (int i = 0; i < total; i++)
            a[i] = -1;
        if (in_place)
            for (int b = 0; b < size; b++)
                memcpy(a + dsp[b], s + sd[b], sizeof(int) * (size_t)sc[b]);
        CHECK_EQ(MPI_Ialltoallw(in_place ? MPI_IN_PLACE : s, sw, sbd, st, a, cnt, rbd, rt,
                                MPI_COMM_WORLD, &r), MPI_SUCCESS);
        for (int b = 1; b < size; b += 2)
            MPI_Type_free(&st[b]);
        wait_or_test(&r, in_place);
        for (int b = 0; b < size; b++) {
            CHECK_EQ(a[dsp[b] - 1], -1);
            for (int j = 0; j < cnt[b]; j += 37)
                CHECK_EQ(a[dsp[b] + j], val(b, 10 + rank, j));
            CHECK_EQ(a[dsp[b] + cnt[b] - 1], val(b, 10 + rank, cnt[b] - 1));
        }
        free(st);
        free(rt);
        free(sw);
        free(sbd);
        free(rbd);
    }
    free(s);
    free(a);
    free(all);
    free(cnt);
    free(dsp);
    free(sc);
    free(sd);
}

/* Ireduce_scatter(_block), Iscan, Iexscan: element k of rank r's input is
 * r + 1 + k; the sums and prefixes follow, and the digits operation shows
 * rank order. */
static void icoll_rs_scan(void)
{
    int *cnt = malloc(sizeof(int) * (size_t)size), total = 0, at = 0, m = 1200;
    int *in, *out;
    long long sumr = (long long)size * (size + 1) / 2;
    MPI_Request r;

    for (int i = 0; i < size; i++) {
        cnt[i] = 300 * (i + 1); /* rank 0's last blocks past the eager limit */
        total += cnt[i];
        at += i < rank ? cnt[i] : 0;
    }
    in = malloc(sizeof(int) * (size_t)(total + m * size));
    out = malloc(sizeof(int) * (size_t)(total + m * size + 1));
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int k = 0; k < total; k++)
            (in_place ? out : in)[k] = rank + 1 + k;
        if (!in_place)
            for (int k = 0; k <= cnt[rank]; k++)
                out[k] = -1;
        CHECK_EQ(MPI_Ireduce_scatter(in_place ? MPI_IN_PLACE : in, out, cnt, MPI_INT, MPI_SUM,
                                     MPI_COMM_WORLD, &r), MPI_SUCCESS);
        wait_or_test(&r, in_place);
        for (int k = 0; k < cnt[rank]; k++)
            if (out[k] != (int)(sumr + (long long)size * (at + k))) {
                CHECK_EQ(out[k], sumr + (long long)size * (at + k));
                break;
            }
        if (!in_place)
            CHECK_EQ(out[cnt[rank]], -1);
    }
    for (int k = 0; k < m * size; k++)
        in[k] = rank + 1 + k;
    for (int k = 0; k <= m; k++)
        out[k] = -1;
    CHECK_EQ(MPI_Ireduce_scatter_block(in, out, m, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r),
             MPI_SUCCESS);
    wait_or_test(&r, 0);
    for (int k = 0; k < m; k++)
        if (out[k] != (int)(sumr + (long long)size * (rank * m + k))) {
            CHECK_EQ(out[k], sumr + (long long)size * (rank * m + k));
            break;
        }
    CHECK_EQ(out[m], -1);

    /* Scans of sums over m elements: ranks 0..r (exclusive: 0..r-1). */
    for (int ex = 0; ex < 2; ex++) {
        long long pre = (long long)(rank + 1 - ex) * (rank + 2 - ex) / 2;
        for (int k = 0; k < m; k++)
            out[k] = -1;
        CHECK_EQ((ex ? MPI_Iexscan : MPI_Iscan)(in, out, m, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                                &r), MPI_SUCCESS);
        wait_or_test(&r, ex);
        for (int k = 0; k < m && !(ex && rank == 0); k++)
            if (out[k] != (int)(pre + (long long)(rank + 1 - ex) * k)) {
                CHECK_EQ(out[k], pre + (long long)(rank + 1 - ex) * k);
                break;
            }
        if (ex && rank == 0) /* undefined, and left alone */
            CHECK_EQ(out[0], -1);
    }
    /* In place, and an operation that does not commute (digits 1..r+1). */
    {
        MPI_Datatype pair;
        MPI_Op op;
        long long d[2], expect = 0;
        MPI_Type_contiguous(2, MPI_LONG_LONG, &pair);
        MPI_Type_commit(&pair);
        MPI_Op_create(concat_op, 0, &op);
        for (int ex = 0; ex < 2; ex++) {
            expect = 0;
            for (int i = 0; i < rank + 1 - ex; i++)
                expect = expect * 10 + i + 1;
            d[0] = rank + 1;
            d[1] = 10;
            CHECK_EQ((ex ? MPI_Iexscan : MPI_Iscan)(MPI_IN_PLACE, d, 1, pair, op, MPI_COMM_WORLD,
                                                    &r), MPI_SUCCESS);
            wait_or_test(&r, 0);
            CHECK_EQ(d[0], ex && rank == 0 ? rank + 1 : expect);
        }
        MPI_Op_free(&op);
        MPI_Type_free(&pair);
    }
    free(in);
    free(out);
    free(cnt);
}

/* Each part a stage: one that hangs is named (mpi_check.h). */
static void test_icoll(void)
{
    MPI_STAGE(icoll_barrier);
    MPI_STAGE(icoll_starts);
    MPI_STAGE(icoll_bcast);
    MPI_STAGE(icoll_reduce);
    MPI_STAGE(icoll_gather_scatter);
    MPI_STAGE(icoll_allgather_alltoall);
    MPI_STAGE(icoll_v);
    MPI_STAGE(icoll_rs_scan);
    mpi_stage("icoll's closing barrier");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- Several outstanding, with point-to-point ------------------------------------------------ */
static void test_iorder(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Comm dup;

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int round = 0; round < 20; round++) {
        int b1[4], b2[600], sum = 0, mx = -1, tok = val(rank, round, 0), got = -1;
        int *ag = malloc(sizeof(int) * (size_t)size), *at = malloc(sizeof(int) * (size_t)size);
        int *as = malloc(sizeof(int) * (size_t)size), one = rank + round, blocking = 0;
        MPI_Request r[9];
        int root2 = (round + 1) % size;

        for (int i = 0; i < 4; i++)
            b1[i] = rank == 0 ? val(0, round, i) : -1;
        for (int i = 0; i < 600; i++)
            b2[i] = rank == root2 ? val(root2, round, i) : -1;
        for (int i = 0; i < size; i++)
            as[i] = val(rank, round, i);
        /* Two broadcasts from different roots, a reduction, a barrier, an
         * allgather and an alltoall outstanding at once, on two
         * communicators, with a message around the ring in the middle. */
        MPI_Ibcast(b1, 4, MPI_INT, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup, &r[1]);
        MPI_Ibcast(b2, 600, MPI_INT, root2, MPI_COMM_WORLD, &r[2]);
        MPI_Isend(&tok, 1, MPI_INT, right, round, MPI_COMM_WORLD, &r[3]);
        MPI_Ibarrier(MPI_COMM_WORLD, &r[4]);
        MPI_Ireduce(&one, &mx, 1, MPI_INT, MPI_MAX, size - 1, dup, &r[5]);
        MPI_Iallgather(&one, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, &r[6]);
        MPI_Irecv(&got, 1, MPI_INT, left, round, MPI_COMM_WORLD, &r[7]);
        MPI_Ialltoall(as, 1, MPI_INT, at, 1, MPI_INT, dup, &r[8]);
        /* A blocking collective while they are outstanding. */
        MPI_Allreduce(&one, &blocking, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        CHECK_EQ(blocking, round);
        if (round % 3 == 0) {
            CHECK_EQ(MPI_Waitall(9, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        } else if (round % 3 == 1) {
            for (int i = 8; i >= 0; i--)
                CHECK_EQ(MPI_Wait(&r[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else {
            int flag = 0;
            while (!flag)
                CHECK_EQ(MPI_Testall(9, r, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        }
        for (int i = 0; i < 4; i++)
            CHECK_EQ(b1[i], val(0, round, i));
        for (int i = 0; i < 600; i += 37)
            CHECK_EQ(b2[i], val(root2, round, i));
        CHECK_EQ(sum, size * round + size * (size - 1) / 2);
        if (rank == size - 1)
            CHECK_EQ(mx, size - 1 + round);
        for (int i = 0; i < size; i++) {
            CHECK_EQ(ag[i], i + round);
            CHECK_EQ(at[i], val(i, round, rank));
        }
        CHECK_EQ(got, val(left, round, 0));
        free(ag);
        free(at);
        free(as);
    }
    MPI_Comm_free(&dup);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- MPI_Comm_idup ----------------------------------------------------------------------- */
static void test_idup(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Comm w2, a = MPI_COMM_NULL, b = MPI_COMM_NULL, d;
    MPI_Request r[3];
    int x = rank, sum = -1, res = -1;

    MPI_Comm_dup(MPI_COMM_WORLD, &w2);
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r[0]), MPI_SUCCESS);
    MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
    CHECK_EQ(MPI_Comm_idup(w2, &b, &r[2]), MPI_SUCCESS);
    /* A blocking creation while both are outstanding. */
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    CHECK_EQ(MPI_Waitall(3, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_EQ(sum, size * (size - 1) / 2);
    CHECK(a != MPI_COMM_NULL && b != MPI_COMM_NULL);
    if (a == MPI_COMM_NULL || b == MPI_COMM_NULL)
        return;
    MPI_Comm_compare(a, MPI_COMM_WORLD, &res);
    CHECK_EQ(res, MPI_CONGRUENT);
    MPI_Comm_compare(a, b, &res);
    CHECK_EQ(res, MPI_CONGRUENT);
    MPI_Comm_rank(b, &x);
    CHECK_EQ(x, rank);
    /* Each communicator its own context: the same tag on all five, received
     * in the reverse order, each message on its own communicator. */
    {
        MPI_Comm all[5] = {MPI_COMM_WORLD, w2, a, b, d};
        MPI_Request s[5];
        int out[5], in = -1;
        for (int k = 0; k < 5; k++) {
            out[k] = rank * 10 + k;
            MPI_Isend(&out[k], 1, MPI_INT, right, 7, all[k], &s[k]);
        }
        for (int k = 4; k >= 0; k--) {
            MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 7, all[k], MPI_STATUS_IGNORE);
            CHECK_EQ(in, left * 10 + k);
        }
        MPI_Waitall(5, s, MPI_STATUSES_IGNORE);
        /* Collectives on the new ones. */
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_MAX, b);
        CHECK_EQ(sum, size - 1);
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Comm_free(&d);
    MPI_Comm_free(&w2);
    /* 100 alive at once, each offering 64 ids: more than the 4096 there
     * are unless every offer but the id taken comes back. */
    {
        MPI_Comm many[100];
        int n = 0;
        for (; n < 100; n++) {
            MPI_Request q;
            CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &many[n], &q), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(many[n] != MPI_COMM_NULL);
            if (many[n] == MPI_COMM_NULL)
                break;
        }
        while (n > 0)
            MPI_Comm_free(&many[--n]);
    }
    /* Offers that share no id: rank 0 starts an idup (offering its 64
     * lowest free ids) while the others first take those, and more, with
     * 600 dups of MPI_COMM_SELF; the agreement takes another round, from
     * the others' lowest offer, rather than fail. */
    {
        enum { NSELF = 600 };
        static MPI_Comm selfs[NSELF];
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Request q;
        int k = rank == 0 ? 0 : NSELF, got = -1;
        if (rank == 0)
            CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &c, &q), MPI_SUCCESS);
        for (int i = 0; i < k; i++)
            MPI_Comm_dup(MPI_COMM_SELF, &selfs[i]);
        if (rank != 0)
            CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &c, &q), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(c != MPI_COMM_NULL);
        if (c != MPI_COMM_NULL) {
            MPI_Allreduce(&rank, &got, 1, MPI_INT, MPI_SUM, c);
            CHECK_EQ(got, size * (size - 1) / 2);
            MPI_Comm_free(&c);
        }
        while (k > 0)
            MPI_Comm_free(&selfs[--k]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Each of n communicators (MPI_COMM_NULL where this process is not in it)
 * works and has a context of its own: the same tag sent on all of them to
 * the next member, received in the reverse order; then an allreduce on
 * each. */
static void idup_check_comms(MPI_Comm *c, int n)
{
    MPI_Request s[8];
    int out[8], in, ns = 0;

    for (int k = 0; k < n; k++) {
        int r, sz;
        if (c[k] == MPI_COMM_NULL)
            continue;
        MPI_Comm_rank(c[k], &r);
        MPI_Comm_size(c[k], &sz);
        out[k] = rank * 10 + k;
        MPI_Isend(&out[k], 1, MPI_INT, (r + 1) % sz, 9, c[k], &s[ns++]);
    }
    for (int k = n - 1; k >= 0; k--) {
        int r, sz, left, got = -1;
        MPI_Group g, wg;
        if (c[k] == MPI_COMM_NULL)
            continue;
        MPI_Comm_rank(c[k], &r);
        MPI_Comm_size(c[k], &sz);
        left = (r - 1 + sz) % sz;
        /* The sender's world rank, for the value it sent. */
        MPI_Comm_group(c[k], &g);
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_translate_ranks(g, 1, &left, wg, &got);
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        in = -1;
        MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 9, c[k], MPI_STATUS_IGNORE);
        CHECK_EQ(in, got * 10 + k);
    }
    MPI_Waitall(ns, s, MPI_STATUSES_IGNORE);
    for (int k = 0; k < n; k++) {
        int sum = -1, one = 1, sz;
        if (c[k] == MPI_COMM_NULL)
            continue;
        MPI_Comm_size(c[k], &sz);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c[k]);
        CHECK_EQ(sum, sz);
    }
}

/* idups on parent[k] (those this process is in), started in the order
 * (first + j) % n, a blocking dup of MPI_COMM_WORLD after the start
 * numbered dup_at (-1: none); the new communicators' checks. */
static void idup_rotated(MPI_Comm *parent, int n, int first, int dup_at)
{
    MPI_Comm got[8], d = MPI_COMM_NULL;
    MPI_Request r[8];

    for (int j = 0; j < n; j++) {
        int k = (first + j) % n;
        got[k] = MPI_COMM_NULL;
        r[k] = MPI_REQUEST_NULL;
        if (parent[k] != MPI_COMM_NULL)
            CHECK_EQ(MPI_Comm_idup(parent[k], &got[k], &r[k]), MPI_SUCCESS);
        if (j == dup_at)
            CHECK_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &d), MPI_SUCCESS);
    }
    CHECK_EQ(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int k = 0; k < n; k++)
        CHECK((got[k] != MPI_COMM_NULL) == (parent[k] != MPI_COMM_NULL));
    {
        MPI_Comm all[9];
        int m = 0;
        for (int k = 0; k < n; k++)
            all[m++] = got[k];
        all[m++] = d != MPI_COMM_NULL ? d : MPI_COMM_WORLD;
        for (int k = 0; k < n; k++)
            all[m++] = parent[k];
        idup_check_comms(all, m > 8 ? 8 : m);
    }
    for (int k = 0; k < n; k++)
        if (got[k] != MPI_COMM_NULL)
            MPI_Comm_free(&got[k]);
    if (d != MPI_COMM_NULL)
        MPI_Comm_free(&d);
}

static void test_idupx(void)
{
    MPI_Comm w[3], ov[3];

    for (int k = 0; k < 3; k++)
        MPI_Comm_dup(MPI_COMM_WORLD, &w[k]);
    /* Two over the same processes in opposite orders (MPICH's
     * idup_with_info): each first round holds ids the other's needs. */
    for (int dup_at = -1; dup_at < 2; dup_at++)
        idup_rotated(w, 2, rank % 2, dup_at);
    /* Three, each process starting at its own. */
    for (int dup_at = -1; dup_at < 3; dup_at++)
        idup_rotated(w, 3, rank % 3, dup_at);
    /* One process waits for the idup it started second before starting
     * the other, which the others started first and left outstanding. */
    if (size > 1) {
        MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
        MPI_Request r[2];
        if (rank == 1) {
            CHECK_EQ(MPI_Comm_idup(w[1], &b, &r[1]), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&r[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK_EQ(MPI_Comm_idup(w[0], &a, &r[0]), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&r[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else {
            CHECK_EQ(MPI_Comm_idup(w[0], &a, &r[0]), MPI_SUCCESS);
            CHECK_EQ(MPI_Comm_idup(w[1], &b, &r[1]), MPI_SUCCESS);
            CHECK_EQ(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        }
        {
            MPI_Comm all[4] = {a, b, w[0], w[1]};
            idup_check_comms(all, 4);
        }
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
    }
    /* A blocking dup whose first round finds no common id (rank 0 holds
     * its 64 lowest for an idup the others start only after the dup), and
     * an idup whose further rounds run while rank 0 is in a blocking dup
     * that the others join only once the idup is over (rank 0 has 70 more
     * ids in use, so the idup's first offers share none). */
    if (size > 1) {
        enum { NSELF = 70 };
        static MPI_Comm selfs[NSELF];
        MPI_Comm a = MPI_COMM_NULL, d = MPI_COMM_NULL;
        MPI_Request q;
        int n = rank == 0 ? NSELF : 0;
        if (rank == 0)
            CHECK_EQ(MPI_Comm_idup(w[0], &a, &q), MPI_SUCCESS);
        CHECK_EQ(MPI_Comm_dup(w[1], &d), MPI_SUCCESS);
        if (rank != 0)
            CHECK_EQ(MPI_Comm_idup(w[0], &a, &q), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
        {
            MPI_Comm all[4] = {a, d, w[0], w[1]};
            idup_check_comms(all, 4);
        }
        MPI_Comm_free(&a);
        MPI_Comm_free(&d);
        for (int i = 0; i < n; i++)
            MPI_Comm_dup(MPI_COMM_SELF, &selfs[i]);
        CHECK_EQ(MPI_Comm_idup(w[0], &a, &q), MPI_SUCCESS);
        if (rank == 0) {
            CHECK_EQ(MPI_Comm_dup(w[1], &d), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else {
            CHECK_EQ(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK_EQ(MPI_Comm_dup(w[1], &d), MPI_SUCCESS);
        }
        {
            MPI_Comm all[4] = {a, d, w[0], w[1]};
            idup_check_comms(all, 4);
        }
        MPI_Comm_free(&a);
        MPI_Comm_free(&d);
        while (n > 0)
            MPI_Comm_free(&selfs[--n]);
    }
    /* Overlapping: all but the last, all but the first, and everyone;
     * the processes in two or three start at their own. */
    if (size > 2) {
        MPI_Comm_split(MPI_COMM_WORLD, rank < size - 1 ? 0 : MPI_UNDEFINED, rank, &ov[0]);
        MPI_Comm_split(MPI_COMM_WORLD, rank > 0 ? 0 : MPI_UNDEFINED, rank, &ov[1]);
        ov[2] = w[2];
        for (int dup_at = -1; dup_at < 3; dup_at++) {
            idup_rotated(ov, 2, rank % 2, dup_at < 2 ? dup_at : -1);
            idup_rotated(ov, 3, rank % 3, dup_at);
        }
        for (int k = 0; k < 2; k++)
            if (ov[k] != MPI_COMM_NULL)
                MPI_Comm_free(&ov[k]);
    }
    for (int k = 0; k < 3; k++)
        MPI_Comm_free(&w[k]);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Allocation fails at one process (victim) from the k-th allocation after
 * its idup is started, while the idup needs a further round (the others
 * have taken the ids its first round offered). Whatever fails there, every
 * process's wait returns: the others get a communicator (or an error),
 * the victim one or an error. */
static void test_idupmem(void)
{
    enum { NSELF = 70 };
    static MPI_Comm selfs[NSELF];

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int victim = 0; victim < size; victim++)
        for (long k = 0; k < 8; k++) {
            MPI_Comm c = MPI_COMM_NULL;
            MPI_Request q = MPI_REQUEST_NULL;
            int n = rank == 0 ? 0 : NSELF, rc, ok = 0, all = 0;
            if (rank == 0)
                CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &c, &q), MPI_SUCCESS);
            for (int i = 0; i < n; i++)
                MPI_Comm_dup(MPI_COMM_SELF, &selfs[i]);
            if (rank != 0)
                CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &c, &q), MPI_SUCCESS);
            if (rank == victim)
                onic_mem_fail_after(k);
            rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
            onic_mem_fail_after(-1);
            CHECK(rc == MPI_SUCCESS || rank == victim);
            CHECK((rc == MPI_SUCCESS) == (c != MPI_COMM_NULL));
            ok = rc == MPI_SUCCESS;
            /* Every process got here: the counts of successes agree. */
            CHECK_EQ(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     MPI_SUCCESS);
            CHECK(all >= size - 1);
            if (c != MPI_COMM_NULL)
                MPI_Comm_free(&c);
            while (n > 0)
                MPI_Comm_free(&selfs[--n]);
        }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every context id in use at one process (dups of MPI_COMM_SELF until one
 * is refused). MPI_Comm_split then fails with MPI_ERR_OTHER and leaves
 * newcomm alone. Two idups of one-process communicators: the first (on
 * MPI_COMM_SELF, first by priority) finds no id and settles on none at
 * its next round; the second, behind it, offers nothing and waits. Their
 * further rounds run at the next progress, not inside MPI_Comm_idup (an
 * idup alone in its communicator that ran them at once would settle the
 * second before the first ends, with no id, or spin), so an id freed
 * before the wait goes to the second, which must then work. The first
 * logs its failure: run with idupmem's test, which allows that. */
static void test_idupfull(void)
{
    enum { MAXC = 4096 };
    static MPI_Comm selfs[MAXC];
    MPI_Comm x = MPI_COMM_WORLD, s1 = MPI_COMM_NULL, s2 = MPI_COMM_NULL;
    MPI_Request q[2];
    int n = 0, rc = MPI_SUCCESS, res = -1, one = 0;

    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        while (n < MAXC && (rc = MPI_Comm_dup(MPI_COMM_SELF, &selfs[n])) == MPI_SUCCESS)
            n++;
        CHECK_EQ(rc, MPI_ERR_OTHER);
        CHECK(n > 64);
        CHECK_EQ(MPI_Comm_split(MPI_COMM_SELF, 0, 0, &x), MPI_ERR_OTHER);
        CHECK(x == MPI_COMM_WORLD);
        CHECK_EQ(MPI_Comm_idup(MPI_COMM_SELF, &s1, &q[0]), MPI_SUCCESS);
        CHECK_EQ(MPI_Comm_idup(selfs[n - 1], &s2, &q[1]), MPI_SUCCESS);
        MPI_Comm_free(&selfs[0]);
        rc = MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        CHECK(rc == MPI_ERR_OTHER || rc == MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&q[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(s2 != MPI_COMM_NULL);
        if (s2 != MPI_COMM_NULL) {
            MPI_Comm_compare(s2, MPI_COMM_SELF, &res);
            CHECK_EQ(res, MPI_CONGRUENT);
            MPI_Allreduce(&rank, &one, 1, MPI_INT, MPI_MAX, s2);
            CHECK_EQ(one, rank);
            MPI_Comm_free(&s2);
        }
        if (s1 != MPI_COMM_NULL)
            MPI_Comm_free(&s1);
        while (n > 1)
            MPI_Comm_free(&selfs[--n]);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- Errors ----------------------------------------------------------------------------------- */
/* The root's buffer of Igather(v) and Iscatter(v) is significant at the
 * root only (MPI 3.1, 5.5 and 5.6): NULL elsewhere, with NULL counts and
 * displacements for the v-forms, works. At the root NULL is refused
 * (MPI_ERR_BUFFER) only if it has data to move: not with every count 0
 * nor with a type of size 0. The root is the last rank: not rank 0. */
static void ierrors_root_buffers(void)
{
    int root = size - 1, counts[64], displs[64], zero[64] = {0}, mine[64], *all;
    int len = size * (size + 1);
    MPI_Datatype empty;
    MPI_Request r = MPI_REQUEST_NULL;

    all = malloc(sizeof(int) * (size_t)len);
    /* Rank i's block: i + 1 ints at i (size + 1), a gap after each. */
    for (int i = 0; i < size; i++) {
        counts[i] = i + 1;
        displs[i] = i * (size + 1);
    }
    for (int v = 0; v < 2; v++) {
        int n = v ? rank + 1 : 1;
        for (int i = 0; i < n; i++)
            mine[i] = val(rank, 1, i);
        for (int i = 0; i < len; i++)
            all[i] = -1;
        if (v)
            CHECK_EQ(MPI_Igatherv(mine, n, MPI_INT, rank == root ? all : NULL,
                                  rank == root ? counts : NULL, rank == root ? displs : NULL,
                                  MPI_INT, root, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        else
            CHECK_EQ(MPI_Igather(mine, 1, MPI_INT, rank == root ? all : NULL, 1, MPI_INT, root,
                                 MPI_COMM_WORLD, &r), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int j = 0; j < size && rank == root; j++) {
            for (int i = 0; i < (v ? j + 1 : 1); i++)
                CHECK_EQ(all[(v ? displs[j] : j) + i], val(j, 1, i));
            if (v)
                CHECK_EQ(all[displs[j] + j + 1], -1);
        }
        /* And scatter the root's buffer back, block by block. */
        for (int i = 0; i < len; i++)
            all[i] = val(root, 2, i);
        for (int i = 0; i <= n; i++)
            mine[i] = -1;
        if (v)
            CHECK_EQ(MPI_Iscatterv(rank == root ? all : NULL, rank == root ? counts : NULL,
                                   rank == root ? displs : NULL, MPI_INT, mine, n, MPI_INT, root,
                                   MPI_COMM_WORLD, &r), MPI_SUCCESS);
        else
            CHECK_EQ(MPI_Iscatter(rank == root ? all : NULL, 1, MPI_INT, mine, 1, MPI_INT, root,
                                  MPI_COMM_WORLD, &r), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int i = 0; i < n; i++)
            CHECK_EQ(mine[i], val(root, 2, (v ? displs[rank] : rank) + i));
        CHECK_EQ(mine[n], -1);
    }
    /* Nothing to move: NULL at the root too. */
    CHECK_EQ(MPI_Igatherv(mine, 0, MPI_INT, NULL, zero, zero, MPI_INT, root, MPI_COMM_WORLD, &r),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(MPI_Iscatterv(NULL, zero, zero, MPI_INT, mine, 0, MPI_INT, root, MPI_COMM_WORLD, &r),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    CHECK_EQ(MPI_Igatherv(mine, 3, empty, NULL, counts, displs, empty, root, MPI_COMM_WORLD, &r),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(MPI_Iscatterv(NULL, counts, displs, empty, mine, rank + 1, empty, root,
                           MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Type_free(&empty);
    /* Data to move and no buffer at the root: refused there, before any
     * transfer (so the root alone calls). */
    if (rank == root) {
        CHECK_EQ(MPI_Igatherv(mine, rank + 1, MPI_INT, NULL, counts, displs, MPI_INT, root,
                              MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
        CHECK_EQ(MPI_Iscatterv(NULL, counts, displs, MPI_INT, mine, rank + 1, MPI_INT, root,
                               MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
        CHECK_EQ(r, MPI_REQUEST_NULL);
    }
    free(all);
}

/* Ialltoallv with counts that differ by peer, 0 to some (rank a sends rank
 * b (a + b) % 3 ints), gaps between the blocks kept, sent from a buffer
 * and in place; then in place with more than 2^31 - 1 bytes in
 * recvbuf (2^31: two elements of a 1 GiB type, to the last rank), which
 * its packed copy cannot hold: MPI_ERR_COUNT before anything is read. */
static void ierrors_alltoallv_counts(void)
{
    int sc[64], sd[64], rc[64], rd[64], s[64 * 3], a[64 * 4], st = 0, rt = 0;
    MPI_Datatype gib;
    MPI_Request r = MPI_REQUEST_NULL;

    for (int b = 0; b < size; b++) {
        sc[b] = (rank + b) % 3;
        rc[b] = sc[b];
        sd[b] = st;
        rd[b] = rt + 1; /* a gap before each block */
        for (int j = 0; j < sc[b]; j++)
            s[st + j] = val(rank, 20 + b, j);
        st += sc[b];
        rt += rc[b] + 1;
    }
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int i = 0; i < rt + 1; i++)
            a[i] = -1;
        if (in_place)
            for (int b = 0; b < size; b++)
                memcpy(a + rd[b], s + sd[b], sizeof(int) * (size_t)sc[b]);
        CHECK_EQ(MPI_Ialltoallv(in_place ? MPI_IN_PLACE : s, sc, sd, MPI_INT, a, rc, rd, MPI_INT,
                                MPI_COMM_WORLD, &r), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int b = 0; b < size; b++) {
            CHECK_EQ(a[rd[b] - 1], -1);
            for (int j = 0; j < rc[b]; j++)
                CHECK_EQ(a[rd[b] + j], val(b, 20 + rank, j));
        }
        CHECK_EQ(a[rt], -1);
    }
    MPI_Type_contiguous(1 << 28, MPI_INT, &gib);
    MPI_Type_commit(&gib);
    for (int b = 0; b < size; b++) {
        rc[b] = b == size - 1 ? 2 : 0;
        rd[b] = 0;
    }
    CHECK_EQ(MPI_Ialltoallv(MPI_IN_PLACE, sc, sd, MPI_INT, a, rc, rd, gib, MPI_COMM_WORLD, &r),
             MPI_ERR_COUNT);
    CHECK_EQ(r, MPI_REQUEST_NULL);
    MPI_Type_free(&gib);
}

static void test_ierrors(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm dup;
    int x[8] = {0}, y[8] = {0};
    double d = 1.0;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ierrors_root_buffers();
    ierrors_alltoallv_counts();
    CHECK_EQ(MPI_Ibcast(x, 1, MPI_INT, size, MPI_COMM_WORLD, &r), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Ibcast(x, 1, MPI_INT, -1, MPI_COMM_WORLD, &r), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Ireduce(x, y, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD, &r), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Igather(x, 1, MPI_INT, y, 1, MPI_INT, -3, MPI_COMM_WORLD, &r), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, size, MPI_COMM_WORLD, &r), MPI_ERR_ROOT);
    CHECK_EQ(MPI_Iallreduce(&d, y, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD, &r), MPI_ERR_OP);
    CHECK_EQ(MPI_Iallreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Iallreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Ibarrier(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Ibarrier(MPI_COMM_NULL, &r), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_NULL, &dup, &r), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &r), MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dup, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Ibcast(NULL, 4, MPI_INT, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Iallgather(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, MPI_COMM_WORLD, &r),
             MPI_ERR_TYPE);
    CHECK_EQ(MPI_Ialltoall(x, 1, MPI_INT, y, -2, MPI_INT, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    {
        int neg[64], z[64] = {0};
        MPI_Datatype ints[64];
        for (int i = 0; i < size; i++)
            neg[i] = i == size - 1 ? -1 : 1;
        CHECK_EQ(MPI_Igatherv(x, 1, MPI_INT, y, z, z, MPI_INT, size, MPI_COMM_WORLD, &r),
                 MPI_ERR_ROOT);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        CHECK_EQ(MPI_Iscatterv(x, z, NULL, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_SELF, &r),
                 MPI_ERR_ARG);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        CHECK_EQ(MPI_Iallgatherv(x, 1, MPI_INT, y, neg, z, MPI_INT, MPI_COMM_WORLD, &r),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Ialltoallv(x, neg, z, MPI_INT, y, z, z, MPI_INT, MPI_COMM_WORLD, &r),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Ireduce_scatter(x, y, neg, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Ireduce_scatter_block(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r),
                 MPI_ERR_COUNT);
        CHECK_EQ(MPI_Iscan(&d, y, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD, &r), MPI_ERR_OP);
        CHECK_EQ(MPI_Iexscan(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
        CHECK_EQ(MPI_Ialltoallw(x, z, z, NULL, y, z, z, NULL, MPI_COMM_WORLD, &r), MPI_ERR_ARG);
        for (int i = 0; i < 64; i++)
            ints[i] = MPI_INT;
        CHECK_EQ(MPI_Ialltoallw(x, neg, z, ints, y, z, z, ints, MPI_COMM_WORLD, &r),
                 MPI_ERR_COUNT);
    }
    if (size > 1)
        CHECK_EQ(MPI_Igather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, (rank + 1) % size,
                             MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
    CHECK_EQ(r, MPI_REQUEST_NULL); /* no failed call gave a request */
    /* Mismatched counts: the root broadcasts 8 ints, the others expect 4;
     * rank 1, the root's first child, is told at its wait. */
    CHECK_EQ(MPI_Ibcast(x, rank == 0 ? 8 : 4, MPI_INT, 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    if (rank == 1)
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    else
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_EQ(r, MPI_REQUEST_NULL);
    /* A collective's request is no message: Mrecv refuses it. */
    CHECK_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_EQ(MPI_Mrecv(x, 1, MPI_INT, (MPI_Message *)&r, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- MPI_Comm_free with operations outstanding ------------------------------------------ */
/* Every rank frees a communicator right after starting on it: non-blocking
 * collectives (one a rendezvous-sized broadcast), an MPI_Comm_idup,
 * point-to-point (eager and rendezvous, one send freed by MPI_Request_free
 * while under way, one receive that will be cut short), persistent
 * requests, and a receive no message on it will match. Rank 0 starts only
 * after the others have freed theirs, so theirs are under way then. The
 * operations must complete as if nothing was freed; the receive left
 * posted must not take a message of a communicator made after the free
 * (its context id stays taken until it ends); the last one to end gives
 * back everything. */
#define CF_BIG 100000 /* ints: past the eager limit */

/* Wait (calling MPI) up to 2 s for *r; 1 if it completed. */
static int commfree_wait_a_while(MPI_Request *r, MPI_Status *st)
{
    double t0 = MPI_Wtime();
    int flag = 0;

    while (!flag && MPI_Wtime() - t0 < 2.0)
        MPI_Test(r, &flag, st);
    return flag;
}

static void commfree_cycle(int one_wait, int *big_out, int *big_in, int *big_bc, int *big_free,
                           int *big_b)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int x = rank + 1, sum = -1, s_out = rank, s_in = -1, t_out[8], t_in[4] = {0};
    int p_out = rank * 7, p_in = -1, z_in = -1, e_out = 4242, e_in = -1, flag = 0, res = -1;
    MPI_Comm c, d = MPI_COMM_NULL, e;
    MPI_Request r[8], p[2], tr[2], fr[2], br, zr, er;
    MPI_Status st;
    int bsize = (int)(CF_BIG * sizeof(int)) + MPI_BSEND_OVERHEAD + 64;
    char *bbuf = malloc((size_t)bsize);
    void *detached;

    for (int i = 0; i < 8; i++)
        t_out[i] = i;
    for (int i = 0; i < CF_BIG; i++) {
        big_out[i] = rank * CF_BIG + i;
        big_bc[i] = rank == size - 1 ? i * 3 : -1;
        big_in[i] = big_free[i] = big_b[i] = -1;
    }
    MPI_Buffer_attach(bbuf, bsize);
    CHECK_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
    if (rank == 0)
        MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(MPI_Ibarrier(c, &r[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c, &r[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Ibcast(big_bc, CF_BIG, MPI_INT, size - 1, c, &r[2]), MPI_SUCCESS);
    CHECK_EQ(MPI_Irecv(&s_in, 1, MPI_INT, left, 1, c, &r[3]), MPI_SUCCESS);
    CHECK_EQ(MPI_Isend(&s_out, 1, MPI_INT, right, 1, c, &r[4]), MPI_SUCCESS);
    CHECK_EQ(MPI_Irecv(big_in, CF_BIG, MPI_INT, left, 2, c, &r[5]), MPI_SUCCESS);
    CHECK_EQ(MPI_Isend(big_out, CF_BIG, MPI_INT, right, 2, c, &r[6]), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_idup(c, &d, &r[7]), MPI_SUCCESS);
    /* 8 ints into room for 4: MPI_ERR_TRUNCATE at the receiver's wait. */
    CHECK_EQ(MPI_Irecv(t_in, 4, MPI_INT, left, 3, c, &tr[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Isend(t_out, 8, MPI_INT, right, 3, c, &tr[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Recv_init(&p_in, 1, MPI_INT, left, 4, c, &p[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Send_init(&p_out, 1, MPI_INT, right, 4, c, &p[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Startall(2, p), MPI_SUCCESS);
    /* A rendezvous send nobody waits for. */
    CHECK_EQ(MPI_Irecv(big_free, CF_BIG, MPI_INT, left, 5, c, &fr[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Isend(big_out, CF_BIG, MPI_INT, right, 5, c, &fr[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Request_free(&fr[1]), MPI_SUCCESS);
    /* A buffered rendezvous send: a request with no handle that ends on
     * its own. */
    CHECK_EQ(MPI_Irecv(big_b, CF_BIG, MPI_INT, left, 6, c, &br), MPI_SUCCESS);
    CHECK_EQ(MPI_Bsend(big_out, CF_BIG, MPI_INT, right, 6, c), MPI_SUCCESS);
    /* Matched by nothing on c: cancelled at the end. */
    CHECK_EQ(MPI_Irecv(&z_in, 1, MPI_INT, left, 9, c, &zr), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_free(&c), MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    if (rank != 0)
        MPI_Barrier(MPI_COMM_WORLD);

    /* A communicator made now, the zombie's receive still posted: a
     * message on it with the same source and tag is its own. */
    CHECK_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &e), MPI_SUCCESS);
    CHECK_EQ(MPI_Irecv(&e_in, 1, MPI_INT, left, 9, e, &er), MPI_SUCCESS);
    CHECK_EQ(MPI_Send(&e_out, 1, MPI_INT, right, 9, e), MPI_SUCCESS);
    CHECK(commfree_wait_a_while(&er, &st));
    CHECK_EQ(e_in, 4242);
    if (er != MPI_REQUEST_NULL) {
        MPI_Cancel(&er);
        MPI_Wait(&er, MPI_STATUS_IGNORE);
    }

    CHECK_EQ(MPI_Waitall(8, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_EQ(sum, size * (size + 1) / 2);
    CHECK_EQ(s_in, left);
    for (int i = 0; i < CF_BIG; i += 997) {
        CHECK_EQ(big_in[i], left * CF_BIG + i);
        CHECK_EQ(big_bc[i], i * 3);
    }
    CHECK(d != MPI_COMM_NULL);
    if (d != MPI_COMM_NULL) {
        MPI_Comm_compare(d, MPI_COMM_WORLD, &res);
        CHECK_EQ(res, MPI_CONGRUENT);
        CHECK_EQ(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_MAX, d), MPI_SUCCESS);
        CHECK_EQ(sum, size);
        MPI_Comm_free(&d);
    }
    CHECK_EQ(MPI_Waitall(2, p, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_EQ(p_in, left * 7);
    CHECK_EQ(MPI_Request_free(&p[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Request_free(&p[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&fr[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(big_free[CF_BIG - 1], left * CF_BIG + CF_BIG - 1);
    CHECK_EQ(MPI_Wait(&br, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(big_b[CF_BIG / 2], left * CF_BIG + CF_BIG / 2);
    CHECK_EQ(MPI_Wait(&tr[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
    /* The last two requests on c: the receive nothing matched (cancelled)
     * and the one cut short, whose error is reported against c after it
     * ended; in turn, or in one wait that ends the failed one first. */
    CHECK_EQ(MPI_Test(&zr, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK_EQ(MPI_Cancel(&zr), MPI_SUCCESS);
    if (!one_wait) {
        CHECK_EQ(MPI_Wait(&zr, &st), MPI_SUCCESS);
        MPI_Test_cancelled(&st, &flag);
        CHECK_EQ(flag, 1);
        CHECK_EQ(MPI_Wait(&tr[0], &st), MPI_ERR_TRUNCATE);
    } else {
        MPI_Request last[2] = {tr[0], zr};
        MPI_Status sts[2];
        CHECK_EQ(MPI_Waitall(2, last, sts), MPI_ERR_IN_STATUS);
        CHECK_EQ(sts[0].MPI_ERROR, MPI_ERR_TRUNCATE);
        CHECK_EQ(sts[1].MPI_ERROR, MPI_SUCCESS);
        MPI_Test_cancelled(&sts[1], &flag);
        CHECK_EQ(flag, 1);
    }
    CHECK_EQ(t_in[3], 3);
    CHECK_EQ(z_in, -1);
    MPI_Comm_free(&e);
    MPI_Buffer_detach(&detached, &bsize); /* waits for the buffered send */
    free(bbuf);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_commfree(void)
{
    int *big = malloc(5 * CF_BIG * sizeof(int));

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* Once for the allocations made once (buffers, tables), then counted,
     * each way of ending. */
    commfree_cycle(0, big, big + CF_BIG, big + 2 * CF_BIG, big + 3 * CF_BIG, big + 4 * CF_BIG);
    for (int one_wait = 0; one_wait < 2; one_wait++) {
        /* A leak shows in every cycle. Memory a cache takes (left out of
         * the count, base/mem.h) could still be missed by that list and
         * show once, the first time timing makes it grow: so up to three
         * cycles, and one that gives everything back passes. */
        long nets[3] = {0, 0, 0};
        int clean = 0;

        for (int attempt = 0; attempt < 3 && !clean; attempt++) {
            double t0;
            long net;
            onic_mem_count_start();
            commfree_cycle(one_wait, big, big + CF_BIG, big + 2 * CF_BIG, big + 3 * CF_BIG,
                           big + 4 * CF_BIG);
            /* The send freed by MPI_Request_free ends when this process
             * hears that its data was taken: progress until then. */
            t0 = MPI_Wtime();
            while ((net = onic_mem_count_net()) != 0 && MPI_Wtime() - t0 < 2.0) {
                int flag;
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                           MPI_STATUS_IGNORE);
            }
            nets[attempt] = net;
            /* Every rank goes on, or stops, together. */
            clean = net == 0;
            MPI_Allreduce(MPI_IN_PLACE, &clean, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        }
        if (!clean && nets[0] != 0)
            fprintf(stderr, "rank %d: a communicator freed with operations outstanding kept "
                    "%ld, %ld and %ld allocations after they ended, in three cycles\n", rank,
                    nets[0], nets[1], nets[2]);
        CHECK(clean);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(big);
}

static const mpi_named_test_t tests[] = {
    {"mprobe", test_mprobe},   {"mprace", test_mprace}, {"icoll", test_icoll},
    {"iorder", test_iorder},   {"idup", test_idup},     {"ierrors", test_ierrors},
    {"idupx", test_idupx},     {"idupmem", test_idupmem}, {"commfree", test_commfree},
    {"idupfull", test_idupfull},
};

int main(int argc, char **argv)
{
    return mpi_run_named("mpi_nbc", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
