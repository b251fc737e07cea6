/* The pre-posted receive queue benchmark of papers 000 (section V.A) and
 * 002 (section V.A, figure 4), after Underwood and Brightwell: how much a
 * long posted-receive queue costs a message, with three degrees of freedom
 * -- the queue's length, how much of it the message traverses before its
 * receive, and the message size. 2 processes.
 *
 *   preposted lat  [options]   ping-pong latency
 *   preposted tput [options]   25 messages in flight each way (paper 002's
 *                              figure 4), for throughput and bandwidth
 *
 * Every timed round rebuilds the queue on both ranks: T receives that the
 * messages never match (one distinct tag each, from the peer), then the K
 * receives the round's messages match, then LEN - T more that are never
 * matched; a barrier; the timed exchange; then the LEN unmatched receives
 * are cancelled, oldest first. So every measured message traverses T
 * entries before its own, the queue holding LEN of them.
 *
 *   lat:  K = 10 ping-pongs per round, the value is the one-way time (us)
 *   tput: K = 25; rank 0 sends 25 messages, rank 1 waits for all 25 and
 *         sends 25 back; the value is the messages moved (50) per second of
 *         the round, in millions (bandwidth = that x size)
 *
 * Output (rank 0): preposted_lat|preposted_tput,LEN,T,SIZE,median,min,max
 * over the rounds. */
#include "../suite.h"

#define TAG_MSG   1
#define TAG_DUMMY 100  /* + the entry's index */

static suite_list_t lens = {5, {0, 10, 100, 300, 1000}};
static suite_list_t fracs = {3, {0, 0.5, 1}};
static suite_list_t sizes = {3, {8, 1024, 16384}};
static double rounds = 30;

static const suite_opt_t opts[] = {
    {"lens", "posted queue lengths (default 0,10,100,300,1000)", &lens, NULL},
    {"fracs", "fractions of the queue traversed (default 0,0.5,1)", &fracs, NULL},
    {"sizes", "message sizes in bytes (default 8,1024,16384)", &sizes, NULL},
    {"rounds", "timed rounds per point, each rebuilding the queue (default 30)", NULL, &rounds},
    {NULL, NULL, NULL, NULL},
};

typedef struct queue {
    MPI_Request *dummy;  /* [len], in posting order */
    MPI_Request *msg;    /* [k] */
    char        *dbuf;   /* one byte per unmatched receive */
    char        *mbuf;   /* k messages of size bytes */
} queue_t;

static void queue_build(queue_t *q, int peer, int len, int trav, int k, int size)
{
    for (int i = 0; i < trav; i++)
        MPI_Irecv(q->dbuf + i, 1, MPI_CHAR, peer, TAG_DUMMY + i, MPI_COMM_WORLD, &q->dummy[i]);
    for (int i = 0; i < k; i++)
        MPI_Irecv(q->mbuf + (size_t)i * (size_t)size, size, MPI_CHAR, peer, TAG_MSG,
                  MPI_COMM_WORLD, &q->msg[i]);
    for (int i = trav; i < len; i++)
        MPI_Irecv(q->dbuf + i, 1, MPI_CHAR, peer, TAG_DUMMY + i, MPI_COMM_WORLD, &q->dummy[i]);
}

static void queue_clear(queue_t *q, int len)
{
    for (int i = 0; i < len; i++) {
        MPI_Status st;
        int cancelled = 0;
        MPI_Cancel(&q->dummy[i]);
        MPI_Wait(&q->dummy[i], &st);
        MPI_Test_cancelled(&st, &cancelled);
        SUITE_CHECK(cancelled, "an unmatched receive (entry %d of %d) was not cancelled", i, len);
    }
}

/* One round; returns its value at rank 0 (0 elsewhere). */
static double round_run(int tput, int rank, queue_t *q, int len, int trav, int size)
{
    int k = tput ? 25 : 10, peer = 1 - rank;
    MPI_Request sreq[25];
    MPI_Status st[25];
    char *sbuf = q->mbuf + (size_t)k * (size_t)size;
    double t0, t = 0;

    queue_build(q, peer, len, trav, k, size);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (!tput) {
        for (int i = 0; i < k; i++) {
            if (rank == 0) {
                MPI_Send(sbuf, size, MPI_CHAR, peer, TAG_MSG, MPI_COMM_WORLD);
                MPI_Wait(&q->msg[i], MPI_STATUS_IGNORE);
            } else {
                MPI_Wait(&q->msg[i], MPI_STATUS_IGNORE);
                MPI_Send(sbuf, size, MPI_CHAR, peer, TAG_MSG, MPI_COMM_WORLD);
            }
        }
        t = (MPI_Wtime() - t0) * 1e6 / (2.0 * k);
    } else {
        if (rank == 1)
            MPI_Waitall(k, q->msg, st);
        for (int i = 0; i < k; i++)
            MPI_Isend(sbuf, size, MPI_CHAR, peer, TAG_MSG, MPI_COMM_WORLD, &sreq[i]);
        MPI_Waitall(k, sreq, st);
        if (rank == 0)
            MPI_Waitall(k, q->msg, st);
        t = 2.0 * k / (MPI_Wtime() - t0) / 1e6;
    }
    queue_clear(q, len);
    return rank == 0 ? t : 0;
}

int main(int argc, char **argv)
{
    static const char synopsis[] = "lat|tput [--lens L,..] [--fracs F,..] [--sizes S,..] [--rounds N]";
    int rank, np, tput;
    queue_t q;
    double maxlen = 0, maxsize = 0, v[SUITE_MAX_REPS];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2 || argc < 2 || (strcmp(argv[1], "lat") && strcmp(argv[1], "tput"))) {
        if (rank == 0)
            suite_usage(argv[0], synopsis, opts), fprintf(stderr, "(2 processes)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tput = strcmp(argv[1], "tput") == 0;
    suite_opts_parse(argc, argv, 2, synopsis, opts, rank);
    SUITE_CHECK(rounds >= 1 && rounds <= SUITE_MAX_REPS, "--rounds %g out of 1..%d", rounds,
                SUITE_MAX_REPS);
    for (int i = 0; i < lens.n; i++) {
        SUITE_CHECK(lens.v[i] >= 0 && lens.v[i] <= 30000, "queue length %g out of 0..30000",
                    lens.v[i]);
        maxlen = lens.v[i] > maxlen ? lens.v[i] : maxlen;
    }
    for (int i = 0; i < sizes.n; i++) {
        SUITE_CHECK(sizes.v[i] >= 0 && sizes.v[i] <= (1 << 24), "size %g out of 0..16 MiB",
                    sizes.v[i]);
        maxsize = sizes.v[i] > maxsize ? sizes.v[i] : maxsize;
    }
    for (int i = 0; i < fracs.n; i++)
        SUITE_CHECK(fracs.v[i] >= 0 && fracs.v[i] <= 1, "fraction %g out of 0..1", fracs.v[i]);

    q.dummy = malloc(((size_t)maxlen + 1) * sizeof(MPI_Request));
    q.msg = malloc(25 * sizeof(MPI_Request));
    q.dbuf = malloc((size_t)maxlen + 1);
    q.mbuf = calloc(26, (size_t)maxsize + 1);
    SUITE_CHECK(q.dummy && q.msg && q.dbuf && q.mbuf, "out of memory");

    for (int s = 0; s < sizes.n; s++)
        for (int l = 0; l < lens.n; l++)
            for (int f = 0; f < fracs.n; f++) {
                int len = (int)lens.v[l], size = (int)sizes.v[s];
                int trav = (int)(fracs.v[f] * len + 0.5);
                if (len == 0 && f > 0)
                    continue; /* an empty queue has one traversal */
                round_run(tput, rank, &q, len, trav, size); /* warm-up */
                for (int r = 0; r < (int)rounds; r++)
                    v[r] = round_run(tput, rank, &q, len, trav, size);
                if (rank == 0)
                    suite_print(tput ? "preposted_tput" : "preposted_lat", len, trav, size, v,
                                (int)rounds);
            }
    free(q.dummy);
    free(q.msg);
    free(q.dbuf);
    free(q.mbuf);
    MPI_Finalize();
    return 0;
}
