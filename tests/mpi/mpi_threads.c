/* MPI_THREAD_MULTIPLE through onicrun: several threads per process calling
 * MPI at once, every message checked for its content and its order.
 *
 *   own      each thread on a communicator of its own: sends to every rank
 *            (itself too) at sizes across the protocols (eager, mid-size,
 *            rendezvous), received by source, by MPI_ANY_SOURCE and
 *            MPI_ANY_TAG, and by matched probe; a receive cancelled in
 *            every round
 *   shared   the threads on MPI_COMM_WORLD at once, each by its own tag,
 *            received from MPI_ANY_SOURCE too
 *   handoff  requests started by one thread and completed by another; a
 *            thread blocked in MPI_Recv for a message another thread of
 *            the same process sends (a wait that kept the process's lock
 *            would never see it)
 *   coll     blocking collectives on each thread's communicator at once
 *   probe    MPI_Iprobe and MPI_Improbe polled by several threads on one
 *            communicator: each message taken once
 *   late     two threads blocked in MPI_Recv for messages another process
 *            sends late: one sleeps in the transport, and the arrival (not
 *            a timeout) wakes it; under the onload engine none can
 *   create   communicators made by every thread at once: MPI_Comm_create_group
 *            on one parent and group told apart by the tags alone,
 *            MPI_Comm_create_from_group by string tags, MPI_Comm_dup of
 *            MPI_COMM_SELF (alone in its agreement, it must let the
 *            others' run) and of the thread's communicator with idups of
 *            it pending, an intercommunicator made and merged meanwhile,
 *            a string tag's creation beside MPI_Comm_create_group with
 *            the tag onic hashes that string to; each used: two with one
 *            context id at a process would take each other's messages
 *
 * A message carries (rank, thread, sequence) and bytes computed from them:
 * messages from one thread on one communicator to one peer arrive in the
 * order sent (MPI 4.0, 11.6.2). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi_check.h"
#include "mpi/mpi_impl.h" /* onic_mpi_mt's counts of sleeps in the transport */

#define NT     4   /* threads per process */
#define ROUNDS 24  /* windows of messages per thread */
#define WIN    4   /* messages per peer in a window */
#define TAG_CANCEL 999

static const int sizes[] = {16, 100, 1500, 5000, 70000, 300000};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define MAXSZ  300000

static _Atomic int tfailed; /* the threads' failed checks, added to failed at the end */

#define TCHECK(_c) \
    do { \
        if (!(_c)) { \
            tfailed++; \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #_c); \
        } \
    } while (0)

static MPI_Comm comms[NT];

typedef struct msg_hdr {
    int32_t rank, thread, seq, size;
} msg_hdr_t;

static int msg_size(int seq, int thread)
{
    return sizes[(seq + thread) % NSIZES];
}

static uint8_t msg_byte(const msg_hdr_t *h, size_t i)
{
    return (uint8_t)(h->seq * 31 + (int)i + h->rank * 7 + h->thread * 13);
}

static void msg_fill(char *buf, int thread, int seq)
{
    msg_hdr_t h = {rank, thread, seq, msg_size(seq, thread)};

    memcpy(buf, &h, sizeof(h));
    for (size_t i = sizeof(h); i < (size_t)h.size; i++)
        buf[i] = (char)msg_byte(&h, i);
}

/* A received message: whole, from the thread expected, the next of its
 * sequence from that source. */
static void msg_check(const char *buf, const MPI_Status *st, int thread, int *next)
{
    msg_hdr_t h;
    int count = -1, bad = 0;

    memcpy(&h, buf, sizeof(h));
    MPI_Get_count(st, MPI_BYTE, &count);
    TCHECK(h.rank == st->MPI_SOURCE && h.rank >= 0 && h.rank < size);
    TCHECK(h.thread == thread);
    TCHECK(count == h.size && h.size == msg_size(h.seq, thread));
    if (h.rank < 0 || h.rank >= size)
        return;
    TCHECK(h.seq == next[h.rank]);
    next[h.rank] = h.seq + 1;
    for (size_t i = sizeof(h); i < (size_t)count && i < MAXSZ; i++)
        bad += (uint8_t)buf[i] != msg_byte(&h, i);
    TCHECK(bad == 0);
}

typedef struct worker {
    int       t;
    pthread_t th;
    void    (*fn)(int t);
} worker_t;

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    w->fn(w->t);
    return NULL;
}

/* The communicators, one a thread, made by the main thread before the
 * first test's threads start (collective calls on one communicator are
 * the program's to order); and the level MPI_Init_thread provided. */
static void comms_ready(void)
{
    static int made;
    int provided = -1, main_thread = 0;

    if (made++)
        return;
    CHECK_EQ(MPI_Query_thread(&provided), MPI_SUCCESS);
    CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
    CHECK_EQ(MPI_Is_thread_main(&main_thread), MPI_SUCCESS);
    CHECK_EQ(main_thread, 1);
    for (int t = 0; t < NT; t++)
        CHECK_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]), MPI_SUCCESS);
}

/* fn in NT threads at once; their failed checks then count as the process's. */
static void run_threads(void (*fn)(int t))
{
    worker_t w[NT];

    comms_ready();
    tfailed = 0;
    for (int t = 0; t < NT; t++) {
        w[t].t = t;
        w[t].fn = fn;
        if (pthread_create(&w[t].th, NULL, worker_main, &w[t]) != 0) {
            CHECK(!"pthread_create");
            w[t].fn = NULL;
        }
    }
    for (int t = 0; t < NT; t++)
        if (w[t].fn != NULL)
            pthread_join(w[t].th, NULL);
    failed += tfailed;
}

/* One thread's rounds on comm, its tags from `base`: a round's messages
 * carry base + the round's parity, so a receive from MPI_ANY_SOURCE takes
 * this round's message and not a faster sender's next one (a sender is
 * at most one round ahead: it starts round r + 2 only once every rank
 * has sent it round r + 1, after its round r). Every third round is
 * received by matched probe, every other by MPI_ANY_SOURCE, the rest by
 * source (with MPI_ANY_TAG on a communicator of the thread's own). */
static void exchange(int t, MPI_Comm comm, int base)
{
    int n = size * WIN, *next = calloc((size_t)size, sizeof(int)), seq = 0;
    char *sbuf = malloc((size_t)WIN * MAXSZ), *rbuf = malloc((size_t)n * MAXSZ);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)n);

    if (next == NULL || sbuf == NULL || rbuf == NULL || rq == NULL || st == NULL) {
        TCHECK(!"memory");
        goto out;
    }
    for (int r = 0; r < ROUNDS; r++) {
        int probe = r % 3 == 2, any = r % 2 == 1, nr = 0, flag = 0, tag = base + r % 2;
        int rtag = comm != MPI_COMM_WORLD && !any ? MPI_ANY_TAG : tag;
        MPI_Request cancel;

        /* A receive nobody sends to, cancelled while the others flow. */
        TCHECK(MPI_Irecv(rbuf, 1, MPI_BYTE, MPI_ANY_SOURCE, TAG_CANCEL, comm, &cancel) ==
               MPI_SUCCESS);
        if (!probe)
            for (int k = 0; k < WIN; k++)
                for (int p = 0; p < size; p++, nr++)
                    TCHECK(MPI_Irecv(rbuf + (size_t)nr * MAXSZ, MAXSZ, MPI_BYTE,
                                     any ? MPI_ANY_SOURCE : p, rtag, comm, &rq[nr]) == MPI_SUCCESS);
        for (int k = 0; k < WIN; k++, seq++) {
            msg_fill(sbuf + (size_t)k * MAXSZ, t, seq);
            for (int p = 0; p < size; p++, nr++)
                TCHECK(MPI_Isend(sbuf + (size_t)k * MAXSZ, msg_size(seq, t), MPI_BYTE, p, tag,
                                 comm, &rq[nr]) == MPI_SUCCESS);
        }
        if (probe) {
            /* MPI_Mprobe is the probe threads can use: the message found
             * is the one received, whatever the other threads take. */
            for (int i = 0; i < n; i++) {
                MPI_Message m;
                MPI_Status ps, rs;
                int count = -1;

                TCHECK(MPI_Mprobe(MPI_ANY_SOURCE, tag, comm, &m, &ps) == MPI_SUCCESS);
                MPI_Get_count(&ps, MPI_BYTE, &count);
                TCHECK(count >= (int)sizeof(msg_hdr_t) && count <= MAXSZ);
                TCHECK(MPI_Mrecv(rbuf, count, MPI_BYTE, &m, &rs) == MPI_SUCCESS);
                TCHECK(rs.MPI_SOURCE == ps.MPI_SOURCE && rs.MPI_TAG == ps.MPI_TAG);
                msg_check(rbuf, &rs, t, next);
            }
            TCHECK(MPI_Waitall(nr, rq, st) == MPI_SUCCESS);
        } else {
            TCHECK(MPI_Waitall(nr, rq, st) == MPI_SUCCESS);
            /* Received in the order posted: by source, the k-th receive
             * from p has p's k-th message; from any source, each source's
             * messages in order among them. */
            for (int i = 0; i < n; i++) {
                TCHECK(st[i].MPI_TAG == tag);
                msg_check(rbuf + (size_t)i * MAXSZ, &st[i], t, next);
            }
        }
        TCHECK(MPI_Cancel(&cancel) == MPI_SUCCESS);
        TCHECK(MPI_Wait(&cancel, &st[0]) == MPI_SUCCESS);
        TCHECK(MPI_Test_cancelled(&st[0], &flag) == MPI_SUCCESS && flag);
    }
    for (int p = 0; p < size; p++)
        TCHECK(next[p] == ROUNDS * WIN);
out:
    free(next);
    free(sbuf);
    free(rbuf);
    free(rq);
    free(st);
}

static void own_thread(int t)
{
    exchange(t, comms[t], 0);
}

static void test_own(void)
{
    run_threads(own_thread);
}

static void shared_thread(int t)
{
    exchange(t, MPI_COMM_WORLD, 2 * t);
}

static void test_shared(void)
{
    run_threads(shared_thread);
}

/* --- handoff ------------------------------------------------------------------------ */
#define HANDOFF_N 64
static MPI_Request handed[HANDOFF_N];
static int handed_buf[HANDOFF_N];
static pthread_barrier_t handoff_bar;

static void handoff_thread(int t)
{
    int one = 0, prev = (rank + size - 1) % size, next = (rank + 1) % size;
    MPI_Status st;

    if (t == 0) {
        /* Receives this thread starts, another completes. */
        for (int i = 0; i < HANDOFF_N; i++)
            TCHECK(MPI_Irecv(&handed_buf[i], 1, MPI_INT, prev, 100 + i, comms[0], &handed[i]) ==
                   MPI_SUCCESS);
        pthread_barrier_wait(&handoff_bar);
        /* Blocked here until thread 2 sends to this process. */
        TCHECK(MPI_Recv(&one, 1, MPI_INT, rank, 300, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
        TCHECK(one == 4242 && st.MPI_SOURCE == rank);
    } else if (t == 1) {
        MPI_Status sts[HANDOFF_N];
        pthread_barrier_wait(&handoff_bar);
        TCHECK(MPI_Waitall(HANDOFF_N, handed, sts) == MPI_SUCCESS);
        for (int i = 0; i < HANDOFF_N; i++)
            TCHECK(handed_buf[i] == prev * 1000 + i && sts[i].MPI_TAG == 100 + i);
    } else if (t == 2) {
        pthread_barrier_wait(&handoff_bar);
        /* Late, so that thread 0 is asleep in its receive by now. */
        usleep(20000);
        one = 4242;
        TCHECK(MPI_Send(&one, 1, MPI_INT, rank, 300, MPI_COMM_WORLD) == MPI_SUCCESS);
    } else {
        pthread_barrier_wait(&handoff_bar);
        for (int i = HANDOFF_N - 1; i >= 0; i--) {
            int v = rank * 1000 + i;
            TCHECK(MPI_Send(&v, 1, MPI_INT, next, 100 + i, comms[0]) == MPI_SUCCESS);
        }
    }
}

static void test_handoff(void)
{
    pthread_barrier_init(&handoff_bar, NULL, NT);
    run_threads(handoff_thread);
    pthread_barrier_destroy(&handoff_bar);
}

/* --- coll --------------------------------------------------------------------------- */
static void coll_thread(int t)
{
    for (int i = 0; i < 50; i++) {
        int v = rank + t + i, sum = -1, root = i % size, b = rank == root ? i * 10 + t : -1;
        TCHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comms[t]) == MPI_SUCCESS);
        TCHECK(sum == size * (size - 1) / 2 + size * (t + i));
        TCHECK(MPI_Bcast(&b, 1, MPI_INT, root, comms[t]) == MPI_SUCCESS);
        TCHECK(b == i * 10 + t);
        TCHECK(MPI_Barrier(comms[t]) == MPI_SUCCESS);
    }
}

static void test_coll(void)
{
    run_threads(coll_thread);
}

/* --- probe -------------------------------------------------------------------------- */
#define PROBE_N 200
static _Atomic int probe_taken;
static int probe_rep; /* the run of the test: every value sent carries it */
static _Atomic int probe_seen[PROBE_N];

/* Threads 0 and 1 take messages with MPI_Iprobe/MPI_Improbe, polling;
 * threads 2 and 3 send them to the next rank. A message probed by
 * MPI_Improbe is this thread's alone. */
static void probe_thread(int t)
{
    int next = (rank + 1) % size;

    if (t >= 2) {
        for (int i = t - 2; i < PROBE_N; i += 2) {
            int v = probe_rep * PROBE_N + i;
            TCHECK(MPI_Send(&v, 1, MPI_INT, next, 7, comms[1]) == MPI_SUCCESS);
        }
        return;
    }
    while (probe_taken < PROBE_N) {
        MPI_Message m;
        MPI_Status st, ps;
        int flag = 0, v = -1, any = 0, count = -1, prev = (rank + size - 1) % size;

        /* A message MPI_Iprobe sees may be gone by the next call (the other
         * taking thread's), but what it says of it is whole. */
        TCHECK(MPI_Iprobe(MPI_ANY_SOURCE, 7, comms[1], &any, &ps) == MPI_SUCCESS);
        if (any) {
            TCHECK(ps.MPI_SOURCE == prev && ps.MPI_TAG == 7);
            TCHECK(MPI_Get_count(&ps, MPI_INT, &count) == MPI_SUCCESS && count == 1);
        }
        TCHECK(MPI_Improbe(MPI_ANY_SOURCE, 7, comms[1], &flag, &m, &st) == MPI_SUCCESS);
        if (!flag)
            continue; /* m and st are undefined then */
        TCHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 7);
        TCHECK(MPI_Get_count(&st, MPI_INT, &count) == MPI_SUCCESS && count == 1);
        TCHECK(MPI_Mrecv(&v, 1, MPI_INT, &m, &st) == MPI_SUCCESS);
        TCHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == prev);
        if (v / PROBE_N != probe_rep)
            fprintf(stderr, "rank %d: thread %d received %d of run %d in run %d\n", rank, t,
                    v % PROBE_N, v / PROBE_N, probe_rep);
        v -= probe_rep * PROBE_N;
        TCHECK(v >= 0 && v < PROBE_N);
        if (v >= 0 && v < PROBE_N && probe_seen[v]++ != 0) {
            tfailed++;
            fprintf(stderr, "rank %d: thread %d received %d a second time (from %d)\n", rank, t,
                    v, st.MPI_SOURCE);
        }
        probe_taken++;
    }
}

static void test_probe(void)
{
    probe_taken = 0;
    for (int i = 0; i < PROBE_N; i++)
        probe_seen[i] = 0;
    run_threads(probe_thread);
    CHECK_EQ(probe_taken, PROBE_N);
    /* No rank sends the next run's messages before every taker of this
     * one has stopped looking. */
    MPI_Barrier(MPI_COMM_WORLD);
    probe_rep++;
}

/* --- late --------------------------------------------------------------------------- */
#define LATE_ROUNDS 4
#define LATE_US     20000
static pthread_barrier_t late_bar;
static uint64_t late_sleeps, late_woken; /* in the first phase */
static uint64_t self_woken;              /* in the third */

/* Even ranks send to the next rank, each message late; odd ranks wait for
 * them in MPI_Recv. First thread 0 alone, with nothing else of its
 * process in MPI: a sleep in the transport that ends before its timeout
 * can only have been ended by an arrival. Then threads 0 and 1 at once,
 * one asleep in the transport and one beside it. Then on every rank
 * thread 0 waits for what thread 1 sends it late through the process's
 * own queue, which no arrival announces: thread 1's call, as it ends,
 * wakes the sleeper. */
static void late_round(int t, int peer, int i)
{
    int v;
    MPI_Status st;

    if (rank % 2 == 0) {
        usleep(LATE_US * (unsigned)(t + 1));
        v = rank * 100 + t * 10 + i;
        TCHECK(MPI_Send(&v, 1, MPI_INT, peer, 500 + t, comms[2]) == MPI_SUCCESS);
    } else {
        v = -1;
        TCHECK(MPI_Recv(&v, 1, MPI_INT, peer, 500 + t, comms[2], &st) == MPI_SUCCESS);
        TCHECK(v == peer * 100 + t * 10 + i && st.MPI_TAG == 500 + t);
    }
}

static void late_thread(int t)
{
    int peer = rank % 2 == 0 ? rank + 1 : rank - 1;

    if (t == 0) {
        uint64_t s0 = atomic_load(&onic_mpi_mt.xsleeps), w0 = atomic_load(&onic_mpi_mt.xwoken);
        for (int i = 0; i < LATE_ROUNDS && peer < size; i++)
            late_round(0, peer, i);
        late_sleeps = atomic_load(&onic_mpi_mt.xsleeps) - s0;
        late_woken = atomic_load(&onic_mpi_mt.xwoken) - w0;
    }
    pthread_barrier_wait(&late_bar);
    if (t < 2 && peer < size)
        for (int i = 0; i < LATE_ROUNDS; i++)
            late_round(t, peer, LATE_ROUNDS + i);
    pthread_barrier_wait(&late_bar);
    if (t == 0) {
        uint64_t w0 = atomic_load(&onic_mpi_mt.xwoken);
        for (int i = 0; i < LATE_ROUNDS; i++) {
            int v = -1;
            TCHECK(MPI_Recv(&v, 1, MPI_INT, rank, 600, comms[2], MPI_STATUS_IGNORE) ==
                   MPI_SUCCESS);
            TCHECK(v == 600 + i);
        }
        self_woken = atomic_load(&onic_mpi_mt.xwoken) - w0;
    } else if (t == 1) {
        for (int i = 0; i < LATE_ROUNDS; i++) {
            int v = 600 + i;
            usleep(LATE_US);
            TCHECK(MPI_Send(&v, 1, MPI_INT, rank, 600, comms[2]) == MPI_SUCCESS);
        }
    }
}

static void test_late(void)
{
    const char *onload = getenv("ONIC_ONLOAD");

    pthread_barrier_init(&late_bar, NULL, NT);
    run_threads(late_thread);
    pthread_barrier_destroy(&late_bar);
    if (onload != NULL && strcmp(onload, "0") != 0) {
        /* The engine's NI is in another process: nothing here to sleep in. */
        CHECK_EQ(late_sleeps, 0);
        CHECK_EQ(self_woken, 0);
        return;
    }
    CHECK(self_woken > 0);
    if (rank % 2 == 1) {
        CHECK(late_sleeps > 0);
        CHECK(late_woken > 0);
    }
}

/* --- create ------------------------------------------------------------------------ */
#define CREATE_ROUNDS 6
#define CREATE_IDUPS  3

/* A message around the ring of c carrying the thread's number: it comes
 * back on c alone, whatever the other threads' communicators carry. */
static void create_use(MPI_Comm c, int t)
{
    int n = 0, r = -1, v = -1;

    TCHECK(c != MPI_COMM_NULL);
    if (c == MPI_COMM_NULL)
        return;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    TCHECK(MPI_Sendrecv(&t, 1, MPI_INT, (r + 1) % n, 5, &v, 1, MPI_INT, (r + n - 1) % n, 5, c,
                        MPI_STATUS_IGNORE) == MPI_SUCCESS);
    TCHECK(v == t);
    TCHECK(MPI_Comm_free(&c) == MPI_SUCCESS);
}

/* How onic makes a tag of MPI_Comm_create_from_group's string tag: its
 * FNV-1a hash folded to 24 bits (src/mpi/session.c). */
static int create_hash(const char *str)
{
    uint32_t h = 2166136261u;

    for (; *str != '\0'; str++)
        h = (h ^ (unsigned char)*str) * 16777619u;
    return (int)((h ^ h >> 24) & 0xffffff);
}

static void create_thread(int t)
{
    MPI_Group wg, sg;
    MPI_Session s;
    MPI_Comm c, half, ic, d[CREATE_IDUPS];
    MPI_Request q[CREATE_IDUPS];
    int low = rank < size / 2 || size == 1;
    char stag[64];

    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < CREATE_ROUNDS; i++) {
        TCHECK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, t, &c) == MPI_SUCCESS);
        create_use(c, t);
        TCHECK(MPI_Comm_dup(MPI_COMM_SELF, &c) == MPI_SUCCESS);
        create_use(c, t);
        for (int k = 0; k < CREATE_IDUPS; k++)
            TCHECK(MPI_Comm_idup(comms[t], &d[k], &q[k]) == MPI_SUCCESS);
        TCHECK(MPI_Comm_dup(comms[t], &c) == MPI_SUCCESS);
        create_use(c, t);
        if (size >= 2) {
            /* The halves' leaders are ranks 0 and size / 2 of comms[t]. */
            TCHECK(MPI_Comm_split(comms[t], low, rank, &half) == MPI_SUCCESS);
            TCHECK(MPI_Intercomm_create(half, 0, comms[t], low ? size / 2 : 0, 77, &ic) ==
                   MPI_SUCCESS);
            TCHECK(MPI_Intercomm_merge(ic, !low, &c) == MPI_SUCCESS);
            create_use(c, t);
            TCHECK(MPI_Comm_free(&ic) == MPI_SUCCESS);
            TCHECK(MPI_Comm_free(&half) == MPI_SUCCESS);
        }
        TCHECK(MPI_Waitall(CREATE_IDUPS, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        for (int k = 0; k < CREATE_IDUPS; k++)
            create_use(d[k], t);
    }
    /* A session's creation by string tag, beside another thread's
     * MPI_Comm_create_group on MPI_COMM_WORLD whose tag is that string's
     * hash as onic takes it (session.c): the two must not meet. */
    snprintf(stag, sizeof(stag), "org.onic.test.create.%d", t);
    TCHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
    TCHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &sg) == MPI_SUCCESS);
    for (int k = 0; k < 2; k++) {
        if ((k + t) % 2 == 0) {
            TCHECK(MPI_Comm_create_from_group(sg, stag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) ==
                   MPI_SUCCESS);
        } else {
            char other[64];
            snprintf(other, sizeof(other), "org.onic.test.create.%d", (t + 1) % NT);
            TCHECK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, create_hash(other), &c) ==
                   MPI_SUCCESS);
        }
        create_use(c, t);
    }
    MPI_Group_free(&sg);
    MPI_Group_free(&wg);
    TCHECK(MPI_Session_finalize(&s) == MPI_SUCCESS);
}

static void test_create(void)
{
    run_threads(create_thread);
}

static const mpi_named_test_t tests[] = {
    {"own", test_own},     {"shared", test_shared}, {"handoff", test_handoff},
    {"coll", test_coll},   {"probe", test_probe},   {"late", test_late},
    {"create", test_create},
};

int main(int argc, char **argv)
{
    int rc;

    mpi_thread_required = MPI_THREAD_MULTIPLE;
    rc = mpi_run_named("mpi_threads", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
    return rc;
}
