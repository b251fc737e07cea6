/* The unexpected queue benchmark of paper 000 (sections V.A and VI.C): how
 * much a long queue of unexpected messages costs a message, over the
 * queue's length and the message size. 2 processes.
 *
 *   unexpected [--lens L,..] [--sizes S,..] [--rounds N] [--fill BYTES]
 *
 * Every round, each rank first sends the other LEN messages of FILL bytes
 * (default 0) with tags nobody receives yet (one distinct tag each), then a
 * barrier: the barrier's messages follow the fillers on the same path, so
 * when it is over both ranks hold LEN unexpected messages. Then 50
 * ping-pongs with blocking MPI_Recv (after one untimed, which absorbs the
 * barrier's exit skew), timed at rank 0: as in the paper, the
 * time to post each receive -- a search of the whole unexpected queue --
 * is part of the latency. Then every filler is received and the round ends.
 *
 * Output (rank 0): unexpected,LEN,SIZE,FILL,median,min,max -- one-way
 * time in microseconds over the rounds. */
#include "../suite.h"

#define TAG_MSG  1
#define TAG_FILL 100  /* + the filler's index */
#define K        50

static suite_list_t lens = {5, {0, 10, 100, 300, 1000}};
static suite_list_t sizes = {3, {8, 1024, 16384}};
static double rounds = 30, fill = 0;

static const suite_opt_t opts[] = {
    {"lens", "unexpected queue lengths (default 0,10,100,300,1000)", &lens, NULL},
    {"sizes", "message sizes in bytes (default 8,1024,16384)", &sizes, NULL},
    {"rounds", "timed rounds per point, each refilling the queue (default 30)", NULL, &rounds},
    {"fill", "size of the unexpected messages in bytes (default 0)", NULL, &fill},
    {NULL, NULL, NULL, NULL},
};

static double round_run(int rank, int len, int size, MPI_Request *sreq, MPI_Request *rreq,
                        char *fsend, char *frecv, char *buf)
{
    int peer = 1 - rank, f = (int)fill;
    double t0, t;

    for (int i = 0; i < len; i++)
        MPI_Isend(fsend, f, MPI_CHAR, peer, TAG_FILL + i, MPI_COMM_WORLD, &sreq[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    /* One ping-pong untimed (i = -1): rank 0 leaves the barrier before
     * rank 1 may, and that skew is not the queue's. */
    t0 = MPI_Wtime();
    for (int i = -1; i < K; i++) {
        if (i == 0)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, size, MPI_CHAR, peer, TAG_MSG, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_CHAR, peer, TAG_MSG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, size, MPI_CHAR, peer, TAG_MSG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, size, MPI_CHAR, peer, TAG_MSG, MPI_COMM_WORLD);
        }
    }
    t = (MPI_Wtime() - t0) * 1e6 / (2.0 * K);
    for (int i = 0; i < len; i++)
        MPI_Irecv(frecv + (size_t)i * (size_t)f, f, MPI_CHAR, peer, TAG_FILL + i, MPI_COMM_WORLD,
                  &rreq[i]);
    for (int i = 0; i < len; i++) {
        MPI_Status st;
        int count;
        MPI_Wait(&rreq[i], &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        SUITE_CHECK(st.MPI_TAG == TAG_FILL + i && count == f,
                    "filler %d came with tag %d and %d bytes", i, st.MPI_TAG, count);
    }
    if (len > 0) {
        MPI_Status *st = malloc((size_t)len * sizeof(*st));
        SUITE_CHECK(st != NULL, "out of memory");
        MPI_Waitall(len, sreq, st);
        free(st);
    }
    return rank == 0 ? t : 0;
}

int main(int argc, char **argv)
{
    static const char synopsis[] = "[--lens L,..] [--sizes S,..] [--rounds N] [--fill BYTES]";
    int rank, np;
    double maxlen = 0, maxsize = 0, v[SUITE_MAX_REPS];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2) {
        if (rank == 0)
            suite_usage(argv[0], synopsis, opts), fprintf(stderr, "(2 processes)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    suite_opts_parse(argc, argv, 1, synopsis, opts, rank);
    SUITE_CHECK(rounds >= 1 && rounds <= SUITE_MAX_REPS, "--rounds %g out of 1..%d", rounds,
                SUITE_MAX_REPS);
    SUITE_CHECK(fill >= 0 && fill <= 65536, "--fill %g out of 0..65536", fill);
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
    MPI_Request *sreq = malloc(((size_t)maxlen + 1) * sizeof(MPI_Request));
    MPI_Request *rreq = malloc(((size_t)maxlen + 1) * sizeof(MPI_Request));
    char *fsend = calloc(1, (size_t)fill + 1);
    char *frecv = malloc(((size_t)maxlen + 1) * ((size_t)fill + 1));
    char *buf = calloc(1, (size_t)maxsize + 1);
    SUITE_CHECK(sreq && rreq && fsend && frecv && buf, "out of memory");

    for (int s = 0; s < sizes.n; s++)
        for (int l = 0; l < lens.n; l++) {
            int len = (int)lens.v[l], size = (int)sizes.v[s];
            round_run(rank, len, size, sreq, rreq, fsend, frecv, buf); /* warm-up */
            for (int r = 0; r < (int)rounds; r++)
                v[r] = round_run(rank, len, size, sreq, rreq, fsend, frecv, buf);
            if (rank == 0)
                suite_print("unexpected", len, size, fill, v, (int)rounds);
        }
    free(sreq);
    free(rreq);
    free(fsend);
    free(frecv);
    free(buf);
    MPI_Finalize();
    return 0;
}
