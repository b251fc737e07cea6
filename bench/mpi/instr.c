/* Instructions of the MPI calls of one 8-byte message, counted by valgrind's
 * callgrind, as a plain MPI program built unchanged with onicc, MPICH's
 * mpicc and Open MPI's mpicc (bench/mpi/instr.py drives all three).
 *
 * Two ranks: rank 0 sends, rank 1 receives. Each round runs two orders of
 * B = 32 messages of 8 bytes (MPI_BYTE, one tag):
 *
 *   expected    the receiver posts B MPI_Irecv; the sender does B MPI_Send;
 *               the receiver does one MPI_Waitall over the B requests
 *   unexpected  the sender does B MPI_Send; the receiver does B MPI_Recv
 *   isend       the receiver posts B MPI_Irecv (not counted); the sender
 *               does B MPI_Isend and one MPI_Waitall over them, the
 *               message-rate benchmarks' sender (osu_bw, osu_mbw_mr);
 *               with the source named only; before the sends, the
 *               receiver does B MPI_Test that find nothing (test-empty),
 *               the call of a program that polls while it computes
 *
 * first with the source named, then with MPI_ANY_SOURCE; then one-sided:
 *
 *   put         rank 0 does B MPI_Put of 8 bytes into rank 1's window (made
 *               by MPI_Win_allocate, rank 0 holding MPI_Win_lock_all), then
 *               one MPI_Win_flush (put-flush)
 *   get         the same with B MPI_Get of what the puts wrote (get-flush),
 *               checked against it
 *
 * while rank 1 polls MPI_Iprobe, so an MPI whose one-sided operations need
 * the target to progress finds it doing so. The ranks take
 * turns through a counter in a page of nameless shared memory (a memfd
 * rank 0 hands to rank 1, bench/fdpass.h), never through MPI, so a measured call never waits for the other rank: when it starts,
 * the other rank is spinning outside MPI and everything it needs is there.
 *
 * Collection is on only around each measured call (CALLGRIND_TOGGLE_COLLECT;
 * run under valgrind --tool=callgrind --collect-atstart=no
 * --instr-atstart=no), and after each group of calls of one kind the
 * counts are dumped under its name (CALLGRIND_DUMP_STATS_AT), so each dump
 * holds the instructions of one kind of call only. "empty-B" and "empty-1"
 * dump B toggle pairs and one with nothing between them: what the toggles
 * themselves add to a group of B calls and to one call, which the driver
 * subtracts. Every kind is dumped once per round, so the driver can take
 * the rounds after the first few only, where one-time costs are past.
 *
 * Without valgrind the client requests do nothing and the program only
 * checks that the messages arrive.
 *
 * Usage: instr ROUNDS (2 processes). The receiver checks every message
 * (value, source, tag, size) and the program exits non-zero on any error. */
#define _GNU_SOURCE
#include <mpi.h>
#include <valgrind/callgrind.h>

#include "../fdpass.h"

#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define B 32
#define TAG 7
#define SENDER 0
#define RECEIVER 1
#define PAGE 4096
#define TIMEOUT_S 120 /* a turn not given within this long means the other rank is stuck */

/* Another process's stores must be seen through the page without locks. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "atomic_uint must be lock-free");

static int rank;
static atomic_uint *turn; /* in the shared page: the step whose owner may go */

static void fail(const char *what)
{
    fprintf(stderr, "instr: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* Spins (yielding: both ranks and valgrind share two cores) until step is
 * this rank's turn; outside any measured region. */
static void await(unsigned step)
{
    time_t start = time(NULL);

    for (unsigned n = 0; atomic_load_explicit(turn, memory_order_acquire) != step; n++) {
        sched_yield();
        if ((n & 1023) == 0 && time(NULL) - start > TIMEOUT_S)
            fail("timed out waiting for the other rank");
    }
}

/* await, making MPI progress meanwhile: the target of one-sided
 * operations. */
static void await_progress(unsigned step)
{
    time_t start = time(NULL);
    int flag;

    for (unsigned n = 0; atomic_load_explicit(turn, memory_order_acquire) != step; n++) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        sched_yield();
        if ((n & 1023) == 0 && time(NULL) - start > TIMEOUT_S)
            fail("timed out waiting for the other rank");
    }
}

static void pass(unsigned step)
{
    atomic_store_explicit(turn, step + 1, memory_order_release);
}

/* One measured call: collection is on from the first toggle to the second.
 * The result is checked after the second, outside the count. */
#define MEASURED(rc, call)                                                                    \
    do {                                                                                      \
        CALLGRIND_TOGGLE_COLLECT;                                                             \
        (rc) = (call);                                                                        \
        CALLGRIND_TOGGLE_COLLECT;                                                             \
    } while (0)

static void check_rc(int rc, const char *call)
{
    if (rc != MPI_SUCCESS)
        fail(call);
}

/* The value of message i of a round: a stale, lost or reordered message
 * carries another. */
static uint64_t value(unsigned round, int any, int i)
{
    return ((uint64_t)round << 32) | ((uint64_t)any << 16) | (uint64_t)i;
}

static void check(const uint64_t *buf, const MPI_Status *st, unsigned round, int any)
{
    for (int i = 0; i < B; i++) {
        int count = -1;
        MPI_Get_count(&st[i], MPI_BYTE, &count);
        if (buf[i] != value(round, any, i) || st[i].MPI_SOURCE != SENDER ||
            st[i].MPI_TAG != TAG || count != (int)sizeof(buf[i]))
            fail("a message arrived wrong (value, source, tag or size)");
    }
}

/* One round of the orders with the source named (any = 0, isend too) or
 * MPI_ANY_SOURCE (any = 1, the first two); step is the round's first turn,
 * 8 turns (any = 0) or 5 (any = 1). Fewer messages a round than a
 * sender's eager credit (2048 of 8 bytes) over the default 12 rounds, so no
 * measured send waits for credit to come back. */
static void round_of(unsigned round, int any, unsigned step)
{
    static const char *names[2][7] = {
        {"send-exp", "irecv", "waitall", "send-unexp", "recv", "isend", "isend-waitall"},
        {"send-exp-any", "irecv-any", "waitall-any", "send-unexp-any", "recv-any"}};
    const int src = any ? MPI_ANY_SOURCE : SENDER;
    uint64_t buf[B];
    MPI_Request req[B];
    MPI_Status st[B];
    int rc = MPI_SUCCESS;

    if (rank == SENDER) {
        for (int i = 0; i < B; i++)
            buf[i] = value(round, any, i);
        await(step + 1); /* expected: the receives are posted */
        for (int i = 0; i < B; i++) {
            MEASURED(rc, MPI_Send(&buf[i], 8, MPI_BYTE, RECEIVER, TAG, MPI_COMM_WORLD));
            check_rc(rc, "MPI_Send");
        }
        CALLGRIND_DUMP_STATS_AT(names[any][0]);
        pass(step + 1);
        await(step + 3); /* unexpected: the receiver has finished its Waitall */
        for (int i = 0; i < B; i++) {
            MEASURED(rc, MPI_Send(&buf[i], 8, MPI_BYTE, RECEIVER, TAG, MPI_COMM_WORLD));
            check_rc(rc, "MPI_Send");
        }
        CALLGRIND_DUMP_STATS_AT(names[any][3]);
        pass(step + 3);
        if (any)
            return;
        await(step + 6); /* isend: the receives are posted */
        for (int i = 0; i < B; i++) {
            MEASURED(rc, MPI_Isend(&buf[i], 8, MPI_BYTE, RECEIVER, TAG, MPI_COMM_WORLD, &req[i]));
            check_rc(rc, "MPI_Isend");
        }
        CALLGRIND_DUMP_STATS_AT(names[any][5]);
        MEASURED(rc, MPI_Waitall(B, req, MPI_STATUSES_IGNORE));
        check_rc(rc, "MPI_Waitall");
        CALLGRIND_DUMP_STATS_AT(names[any][6]);
        pass(step + 6);
        return;
    }
    memset(buf, 0xff, sizeof(buf));
    await(step);
    for (int i = 0; i < B; i++) {
        MEASURED(rc, MPI_Irecv(&buf[i], 8, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &req[i]));
        check_rc(rc, "MPI_Irecv");
    }
    CALLGRIND_DUMP_STATS_AT(names[any][1]);
    pass(step);
    await(step + 2); /* the B messages have been sent */
    MEASURED(rc, MPI_Waitall(B, req, st));
    check_rc(rc, "MPI_Waitall");
    CALLGRIND_DUMP_STATS_AT(names[any][2]);
    check(buf, st, round, any);
    memset(buf, 0xff, sizeof(buf));
    pass(step + 2);
    await(step + 4); /* the B messages have been sent and wait unexpected */
    for (int i = 0; i < B; i++) {
        MEASURED(rc, MPI_Recv(&buf[i], 8, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &st[i]));
        check_rc(rc, "MPI_Recv");
    }
    CALLGRIND_DUMP_STATS_AT(names[any][4]);
    check(buf, st, round, any);
    memset(buf, 0xff, sizeof(buf));
    pass(step + 4);
    if (any)
        return;
    await(step + 5); /* isend: receives posted, not counted */
    for (int i = 0; i < B; i++)
        check_rc(MPI_Irecv(&buf[i], 8, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &req[i]), "MPI_Irecv");
    for (int i = 0; i < B; i++) { /* nothing sent yet: the test finds nothing */
        int flag = 1;
        MEASURED(rc, MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
        check_rc(rc, "MPI_Test");
        if (flag)
            fail("MPI_Test completed a receive before its message was sent");
    }
    CALLGRIND_DUMP_STATS_AT("test-empty");
    pass(step + 5);
    await(step + 7); /* the B messages have been sent */
    check_rc(MPI_Waitall(B, req, st), "MPI_Waitall");
    check(buf, st, round, any);
    pass(step + 7);
}

/* B puts (get 0) or gets of 8 bytes, cell i from or to buf[i], and the
 * flush after them. Inline with get a constant: nothing but the call in
 * the measured regions. */
static inline __attribute__((always_inline)) void rma_group(MPI_Win win, int get, uint64_t *buf)
{
    int rc = MPI_SUCCESS;

    for (int i = 0; i < B; i++) {
        if (get)
            MEASURED(rc, MPI_Get(&buf[i], 8, MPI_BYTE, RECEIVER, i, 8, MPI_BYTE, win));
        else
            MEASURED(rc, MPI_Put(&buf[i], 8, MPI_BYTE, RECEIVER, i, 8, MPI_BYTE, win));
        check_rc(rc, get ? "MPI_Get" : "MPI_Put");
    }
    CALLGRIND_DUMP_STATS_AT(get ? "get" : "put");
    MEASURED(rc, MPI_Win_flush(RECEIVER, win));
    check_rc(rc, "MPI_Win_flush");
    CALLGRIND_DUMP_STATS_AT(get ? "get-flush" : "put-flush");
}

/* One round of one-sided operations into rank 1's window (two turns from
 * step). */
static void round_rma(unsigned round, MPI_Win win, unsigned step)
{
    uint64_t buf[B], back[B];

    if (rank == RECEIVER) {
        await_progress(step + 1);
        pass(step + 1);
        return;
    }
    for (int i = 0; i < B; i++) {
        buf[i] = value(round, 2, i);
        back[i] = ~buf[i];
    }
    await(step);
    rma_group(win, 0, buf);
    rma_group(win, 1, back);
    if (memcmp(buf, back, sizeof(buf)) != 0)
        fail("MPI_Get did not read what MPI_Put wrote");
    pass(step);
}

int main(int argc, char **argv)
{
    int size, fd = -1, lsock = -1, rc = 0;
    struct { long pid; char token[BENCH_TOKEN_LEN + 1]; } me = {0, ""}, peer;
    long rounds;
    void *page, *wbase;
    MPI_Win win;

    /* "multiple": the same calls from one thread of an MPI_THREAD_MULTIPLE
     * process, which is what a thread level costs. */
    int multiple = argc == 3 && strcmp(argv[2], "multiple") == 0, provided = -1;

    MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rounds = argc >= 2 ? strtol(argv[1], NULL, 10) : 0;
    if (multiple && provided != MPI_THREAD_MULTIPLE)
        fail("MPI_THREAD_MULTIPLE asked for and not provided");
    if (size != 2 || rounds < 1 || rounds > 100000 || (argc == 3 && !multiple) || argc > 3) {
        if (rank == 0)
            fprintf(stderr, "usage: run with 2 processes: instr ROUNDS [multiple]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
    }
    /* Rank 0 makes the page and listens before it sends its token, so
     * rank 1 finds it ready; each checks the other's pid. */
    me.pid = (long)getpid();
    if (rank == 0 && ((fd = bench_fdpass_create("instr", PAGE)) < 0 ||
                      (lsock = bench_fdpass_listen(me.token)) < 0))
        fail("cannot make the flag page");
    MPI_Sendrecv(&me, sizeof(me), MPI_BYTE, 1 - rank, TAG + 1, &peer, sizeof(peer), MPI_BYTE,
                 1 - rank, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    peer.token[BENCH_TOKEN_LEN] = '\0';
    if (rank == 0 && bench_fdpass_give(lsock, (pid_t)peer.pid, fd) != 0)
        fail("cannot hand the flag page to rank 1");
    if (rank == 1 && (fd = bench_fdpass_take(peer.token, (pid_t)peer.pid, PAGE)) < 0)
        fail("cannot take the flag page from rank 0");
    page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED)
        fail("cannot map the flag page");
    close(fd);
    turn = page; /* a fresh object is zero-filled: turn 0 */

    if (MPI_Win_allocate(B * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &wbase, &win) != MPI_SUCCESS ||
        (rank == SENDER && MPI_Win_lock_all(0, win) != MPI_SUCCESS) ||
        /* an MPI may need the target in a call to grant the lock */
        MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        fail("cannot make the window");

    /* The rounds only: MPI_Init's work is not even instrumented. */
    CALLGRIND_START_INSTRUMENTATION;
    for (unsigned r = 0; r < (unsigned)rounds; r++) {
        for (int any = 0; any < 2; any++)
            round_of(r, any, r * 15 + (any ? 8u : 0u));
        round_rma(r, win, r * 15 + 13);
        /* What the toggles cost by themselves, shaped like the measured
         * groups: B pairs (the B calls of a kind) and one (MPI_Waitall). */
        for (int i = 0; i < B; i++)
            MEASURED(rc, 0);
        CALLGRIND_DUMP_STATS_AT("empty-B");
        MEASURED(rc, 0);
        CALLGRIND_DUMP_STATS_AT("empty-1");
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    (void)rc; /* the empty groups set it */
    if ((rank == SENDER && MPI_Win_unlock_all(win) != MPI_SUCCESS) ||
        MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS || MPI_Win_free(&win) != MPI_SUCCESS)
        fail("cannot free the window");

    if (rank == RECEIVER)
        printf("instr: %ld rounds of %d messages of 8 bytes in 5 orders and %d puts and "
               "gets, all checked\n", rounds, B, B);
    munmap(page, PAGE);
    MPI_Finalize();
    return 0;
}
