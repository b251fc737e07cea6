/* Message rate in the style of the OSU multiple-bandwidth / message-rate
 * test, as paper 004 (section V.A, figures 3 and 4) runs it: several
 * sender/receiver pairs at once, each sender streaming windows of
 * non-blocking sends that its receiver has pre-posted receives for, one
 * small acknowledgment per window. An even number of processes: rank 2i
 * sends to rank 2i+1, so with ranks bound to cores round-robin every pair
 * spans two cores.
 *
 *   rate [--sizes S,..] [--window W] [--iters N] [--reps R]
 *
 * Each repetition: a barrier, ITERS windows of W messages per pair, and the
 * slowest pair's time; the value is the messages of all pairs per second,
 * in millions (bandwidth = that x size).
 *
 * Output (rank 0): rate,PAIRS,SIZE,WINDOW,median,min,max */
#include "../suite.h"

#define TAG_DATA 1
#define TAG_ACK  2

static suite_list_t sizes = {13, {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}};
static double window = 64, iters = 2000, reps = 5;

static const suite_opt_t opts[] = {
    {"sizes", "message sizes in bytes (default 1,2,4,..,4096)", &sizes, NULL},
    {"window", "messages in flight per pair (default 64)", NULL, &window},
    {"iters", "windows per repetition (default 2000)", NULL, &iters},
    {"reps", "timed repetitions per size (default 5)", NULL, &reps},
    {NULL, NULL, NULL, NULL},
};

static double run(int rank, int size, int w, long n, char *sbuf, char *rbuf, MPI_Request *req,
                  MPI_Status *st)
{
    int sender = rank % 2 == 0, peer = sender ? rank + 1 : rank - 1;
    char ack = 0;
    double t0, t, tmax;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        if (sender) {
            for (int k = 0; k < w; k++)
                MPI_Isend(sbuf, size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &req[k]);
            MPI_Waitall(w, req, st);
            MPI_Recv(&ack, 1, MPI_CHAR, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int k = 0; k < w; k++)
                MPI_Irecv(rbuf + (size_t)k * (size_t)size, size, MPI_CHAR, peer, TAG_DATA,
                          MPI_COMM_WORLD, &req[k]);
            MPI_Waitall(w, req, st);
            MPI_Send(&ack, 1, MPI_CHAR, peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    t = MPI_Wtime() - t0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

int main(int argc, char **argv)
{
    static const char synopsis[] = "[--sizes S,..] [--window W] [--iters N] [--reps R]";
    int rank, np, w;
    double maxsize = 0, v[SUITE_MAX_REPS];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2 || np % 2) {
        if (rank == 0)
            suite_usage(argv[0], synopsis, opts), fprintf(stderr, "(an even number of processes)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    suite_opts_parse(argc, argv, 1, synopsis, opts, rank);
    SUITE_CHECK(reps >= 1 && reps <= SUITE_MAX_REPS, "--reps %g out of 1..%d", reps,
                SUITE_MAX_REPS);
    SUITE_CHECK(window >= 1 && window <= 1024, "--window %g out of 1..1024", window);
    SUITE_CHECK(iters >= 1, "--iters %g below 1", iters);
    for (int i = 0; i < sizes.n; i++) {
        SUITE_CHECK(sizes.v[i] >= 0 && sizes.v[i] <= (1 << 20), "size %g out of 0..1 MiB",
                    sizes.v[i]);
        maxsize = sizes.v[i] > maxsize ? sizes.v[i] : maxsize;
    }
    w = (int)window;
    char *sbuf = calloc(1, (size_t)maxsize + 1);
    char *rbuf = malloc((size_t)w * ((size_t)maxsize + 1));
    MPI_Request *req = malloc((size_t)w * sizeof(*req));
    MPI_Status *st = malloc((size_t)w * sizeof(*st));
    SUITE_CHECK(sbuf && rbuf && req && st, "out of memory");

    for (int s = 0; s < sizes.n; s++) {
        int size = (int)sizes.v[s];
        long n = (long)iters;
        run(rank, size, w, n / 10 + 1, sbuf, rbuf, req, st); /* warm-up */
        for (int r = 0; r < (int)reps; r++)
            v[r] = (double)(np / 2) * w * (double)n / run(rank, size, w, n, sbuf, rbuf, req, st) / 1e6;
        if (rank == 0)
            suite_print("rate", np / 2, size, w, v, (int)reps);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    free(st);
    MPI_Finalize();
    return 0;
}
