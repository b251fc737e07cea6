/* Does communication move while the application computes? The benchmarks
 * of paper 001 (ProOnE, sections 4.1 to 4.3) and paper 003 (Portals,
 * section 5.3), as one plain MPI program for 2 processes. "Compute W" is
 * W microseconds of arithmetic that never calls MPI.
 *
 *   overlap send|recv [--size B] [--work W,..] [--iters N] [--reps R]
 *       ProOnE 4.1. The measured side starts the transfer (MPI_Isend, or
 *       MPI_Irecv), computes W and waits; the other side makes the matching
 *       blocking call. The measured side is rank 0 either way (the one
 *       onicrun --onload --bind core keeps off the engine's core even when
 *       cores are short). Overlap = W / the measured side's total time: 1
 *       when the transfer hides entirely behind the computation, about
 *       W / (W + transfer) when nothing moves until the wait.
 *       Output: overlap_send|overlap_recv,SIZE,W,0,...
 *
 *   skew [--size B] [--work W,..] [--iters N] [--reps R]
 *       ProOnE 4.2. Each process: MPI_Irecv, blocking MPI_Send, compute W,
 *       MPI_Wait, ITERS times (1000 in the paper); the value is the time per
 *       iteration in microseconds. Where the receives progress only inside
 *       MPI calls, the two computations serialize; where they progress on
 *       their own, the time stays near W plus one transfer.
 *       Output: skew,SIZE,W,0,...
 *
 *   avail send|recv [--sizes B,..] [--iters N] [--reps R]
 *       Availability (ProOnE 4.3, after the Sandia MPI benchmark): the share
 *       of a transfer's time that the measured side's CPU is left free.
 *       T = the transfer's one-way time (half a blocking ping-pong); then
 *       post, compute W = 2T (long enough for the transfer to finish
 *       meanwhile if anything moves it), wait: overhead = that time - W, the
 *       CPU time the transfer still took from the application, and
 *       availability = 1 - overhead / T (clamped to 0..1).
 *       Output: avail_send|avail_recv,SIZE,0,0,... and
 *               overhead_send|overhead_recv,SIZE,0,0,... (microseconds)
 *
 *   bypass [--size B] [--batch N] [--work W,..] [--iters N] [--reps R]
 *       Application bypass (paper 003, figure 5): both ranks pre-post N
 *       receives, barrier, post N sends; rank 0 then computes W, rank 1
 *       does not; then both wait for their batch. The value is the time
 *       rank 0 still waits after its computation (microseconds): it falls
 *       to nearly 0 with W when messages are handled without the
 *       application, and stays at the transfer time when they are not.
 *       Output: bypass,SIZE,W,BATCH,...
 *
 * Every value is the median (and min, max) over REPS repetitions, each
 * the mean of ITERS iterations; a barrier starts every iteration. */
#include "../suite.h"

#define TAG 1

static suite_list_t work = {8, {0, 25, 50, 100, 200, 400, 800, 1600}};
static suite_list_t sizes = {9, {8, 64, 512, 2048, 4096, 16384, 65536, 262144, 1048576}};
static double size = 1 << 20, iters = 20, reps = 5, batch = 10;

static const suite_opt_t opts[] = {
    {"size", "message size in bytes (overlap, skew, bypass; default 1048576)", NULL, &size},
    {"sizes", "message sizes in bytes (avail; default 8,64,..,1048576)", &sizes, NULL},
    {"work", "computation times in microseconds (default 0,25,50,..,1600)", &work, NULL},
    {"iters", "iterations per repetition (default 20)", NULL, &iters},
    {"reps", "repetitions per point (default 5)", NULL, &reps},
    {"batch", "messages per batch (bypass; default 10)", NULL, &batch},
    {NULL, NULL, NULL, NULL},
};

static int rank;
static char *sbuf, *rbuf;

/* One iteration of the overlap pattern; the measured side returns its time
 * (us), the other 0. */
static double overlap_once(int send_side, int n, double w)
{
    MPI_Request req;
    double t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (rank == 0) { /* measured */
        if (send_side)
            MPI_Isend(sbuf, n, MPI_CHAR, 1, TAG, MPI_COMM_WORLD, &req);
        else
            MPI_Irecv(rbuf, n, MPI_CHAR, 1, TAG, MPI_COMM_WORLD, &req);
        suite_compute(w);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return (MPI_Wtime() - t0) * 1e6;
    }
    if (send_side)
        MPI_Recv(rbuf, n, MPI_CHAR, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Send(sbuf, n, MPI_CHAR, 0, TAG, MPI_COMM_WORLD);
    return 0;
}

/* Mean time of `it` iterations at the measured side, known on both ranks
 * (the availability search needs both to take the same steps). */
static double overlap_mean(int send_side, int n, double w, int it)
{
    double sum = 0, mean;
    for (int i = 0; i < it; i++)
        sum += overlap_once(send_side, n, w);
    sum /= it;
    MPI_Allreduce(&sum, &mean, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return mean;
}

static void run_overlap(int send_side)
{
    double v[SUITE_MAX_REPS];
    for (int k = 0; k < work.n; k++) {
        overlap_mean(send_side, (int)size, work.v[k], 2); /* warm-up */
        for (int r = 0; r < (int)reps; r++)
            v[r] = work.v[k] / overlap_mean(send_side, (int)size, work.v[k], (int)iters);
        if (rank == 0)
            suite_print(send_side ? "overlap_send" : "overlap_recv", size, work.v[k], 0, v,
                        (int)reps);
    }
}

static void run_skew(void)
{
    double v[SUITE_MAX_REPS];
    int peer = 1 - rank, n = (int)size;
    for (int k = 0; k < work.n; k++) {
        for (int r = -1; r < (int)reps; r++) { /* r = -1: warm-up */
            MPI_Request req;
            double t0, t, tmax;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int i = 0; i < (r < 0 ? 2 : (int)iters); i++) {
                MPI_Irecv(rbuf, n, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, &req);
                MPI_Send(sbuf, n, MPI_CHAR, peer, TAG, MPI_COMM_WORLD);
                suite_compute(work.v[k]);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            t = (MPI_Wtime() - t0) * 1e6 / iters;
            MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r >= 0)
                v[r] = tmax;
        }
        if (rank == 0)
            suite_print("skew", size, work.v[k], 0, v, (int)reps);
    }
}

/* Mean one-way time of `it` blocking ping-pongs of n bytes, on both ranks. */
static double pingpong_mean(int n, int it)
{
    double t0, t;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < it; i++) {
        if (rank == 0) {
            MPI_Send(sbuf, n, MPI_CHAR, 1, TAG, MPI_COMM_WORLD);
            MPI_Recv(rbuf, n, MPI_CHAR, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, n, MPI_CHAR, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, n, MPI_CHAR, 0, TAG, MPI_COMM_WORLD);
        }
    }
    t = (MPI_Wtime() - t0) * 1e6 / (2.0 * it);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

static void run_avail(int send_side)
{
    double av[SUITE_MAX_REPS], ov[SUITE_MAX_REPS];
    for (int s = 0; s < sizes.n; s++) {
        int n = (int)sizes.v[s];
        overlap_mean(send_side, n, 0, 2); /* warm-up */
        for (int r = 0; r < (int)reps; r++) {
            double tr = pingpong_mean(n, (int)iters), w = 2 * tr;
            double over = overlap_mean(send_side, n, w, (int)iters) - w, a = 1 - over / tr;
            ov[r] = over < 0 ? 0 : over;
            av[r] = a < 0 ? 0 : a > 1 ? 1 : a;
        }
        if (rank == 0) {
            suite_print(send_side ? "avail_send" : "avail_recv", n, 0, 0, av, (int)reps);
            suite_print(send_side ? "overhead_send" : "overhead_recv", n, 0, 0, ov, (int)reps);
        }
    }
}

static void run_bypass(void)
{
    int nb = (int)batch, n = (int)size, peer = 1 - rank;
    MPI_Request *req = malloc(2 * (size_t)nb * sizeof(*req));
    MPI_Status *st = malloc(2 * (size_t)nb * sizeof(*st));
    double v[SUITE_MAX_REPS];

    SUITE_CHECK(req && st, "out of memory");
    for (int k = 0; k < work.n; k++) {
        for (int r = -1; r < (int)reps; r++) {
            double sum = 0;
            for (int i = 0; i < (r < 0 ? 2 : (int)iters); i++) {
                for (int b = 0; b < nb; b++)
                    MPI_Irecv(rbuf + (size_t)b * (size_t)n, n, MPI_CHAR, peer, TAG,
                              MPI_COMM_WORLD, &req[b]);
                MPI_Barrier(MPI_COMM_WORLD);
                for (int b = 0; b < nb; b++)
                    MPI_Isend(sbuf, n, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, &req[nb + b]);
                if (rank == 0)
                    suite_compute(work.v[k]);
                double a = MPI_Wtime();
                MPI_Waitall(2 * nb, req, st);
                sum += (MPI_Wtime() - a) * 1e6;
            }
            if (r >= 0)
                v[r] = sum / iters;
        }
        if (rank == 0)
            suite_print("bypass", n, work.v[k], nb, v, (int)reps);
    }
    free(req);
    free(st);
}

int main(int argc, char **argv)
{
    static const char synopsis[] =
        "overlap send|recv | skew | avail send|recv | bypass  [--size B] [--sizes B,..]\n"
        "       [--work W,..] [--iters N] [--reps R] [--batch N]   (2 processes)";
    int np, first = 2, side = 0;
    double maxsize;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *mode = argc > 1 ? argv[1] : "";
    int two = strcmp(mode, "overlap") == 0 || strcmp(mode, "avail") == 0;
    if (two) {
        first = 3;
        side = argc > 2 && strcmp(argv[2], "send") == 0 ? 1
             : argc > 2 && strcmp(argv[2], "recv") == 0 ? 2 : 0;
    }
    if (np != 2 || (two && side == 0) || (!two && strcmp(mode, "skew") && strcmp(mode, "bypass"))) {
        if (rank == 0)
            suite_usage(argv[0], synopsis, opts);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    suite_opts_parse(argc, argv, first, synopsis, opts, rank);
    SUITE_CHECK(reps >= 1 && reps <= SUITE_MAX_REPS, "--reps %g out of 1..%d", reps,
                SUITE_MAX_REPS);
    SUITE_CHECK(iters >= 1, "--iters %g below 1", iters);
    SUITE_CHECK(batch >= 1 && batch <= 1000, "--batch %g out of 1..1000", batch);
    SUITE_CHECK(size >= 0 && size <= (64 << 20), "--size %g out of 0..64 MiB", size);
    for (int k = 0; k < work.n; k++)
        SUITE_CHECK(work.v[k] >= 0 && work.v[k] <= 1e6, "work %g out of 0..1e6 us", work.v[k]);
    maxsize = size;
    for (int s = 0; s < sizes.n; s++) {
        SUITE_CHECK(sizes.v[s] >= 0 && sizes.v[s] <= (64 << 20), "size %g out of 0..64 MiB",
                    sizes.v[s]);
        maxsize = sizes.v[s] > maxsize ? sizes.v[s] : maxsize;
    }
    sbuf = malloc((size_t)maxsize + 1);
    rbuf = malloc(((size_t)maxsize + 1) * (size_t)batch);
    SUITE_CHECK(sbuf && rbuf, "out of memory");
    memset(sbuf, 1, (size_t)maxsize + 1);
    memset(rbuf, 0, ((size_t)maxsize + 1) * (size_t)batch);

    if (strcmp(mode, "overlap") == 0)
        run_overlap(side == 1);
    else if (strcmp(mode, "avail") == 0)
        run_avail(side == 1);
    else if (strcmp(mode, "skew") == 0)
        run_skew();
    else
        run_bypass();
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
