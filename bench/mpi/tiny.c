/* Latency-bound loops of tiny messages, the kind that suffer most when
 * ranks (and an onload engine) outnumber the cores: a plain MPI program,
 * built unchanged with onicc, MPICH's mpicc and Open MPI's mpicc.
 *
 *   allgather  MPI_Allgather of 2 bytes per rank, in a loop: thousands of
 *              allgathers per second (p1 = processes)
 *   chain      one double through every rank in turn and back to rank 0
 *              (rank r receives it from r-1, adds r and sends it on), rank
 *              0 starting the next row when the last came back: a ring of
 *              latencies, thousands of rows per second (p1 = processes;
 *              with 2, a ping-pong)
 *
 * Usage: tiny allgather|chain [--iters N] [--reps R]. Each repetition is
 * timed from a barrier to a barrier after a warm-up, and runs N iterations
 * or as many as take about 0.3 s at the warm-up's pace, whichever is fewer; rank 0 prints
 * "test,np,0,0,median,min,max" (bench/suite.h). Every allgather's contents
 * and every row's sum are checked. */
#include "../suite.h"

#define WARM_MAX    50  /* warm-up iterations, at most */
#define REP_SECONDS 0.3 /* a repetition lasts about this long, or --iters */

static double run_allgather(int rank, int size, long iters)
{
    char mine[2], all[2 * 64];
    double t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        mine[0] = (char)(rank + i);
        mine[1] = (char)(rank ^ i);
        MPI_Allgather(mine, 2, MPI_CHAR, all, 2, MPI_CHAR, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            SUITE_CHECK(all[2 * r] == (char)(r + i) && all[2 * r + 1] == (char)(r ^ i),
                        "allgather %ld: wrong bytes from rank %d", i, r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double run_chain(int rank, int size, long iters)
{
    double t0, v;
    double sum = (double)size * (size - 1) / 2;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            v = (double)i;
            MPI_Send(&v, 1, MPI_DOUBLE, 1 % size, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_DOUBLE, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            SUITE_CHECK(v == (double)i + sum, "row %ld: sum %g, expected %g", i, v,
                        (double)i + sum);
        } else {
            MPI_Recv(&v, 1, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            v += rank;
            MPI_Send(&v, 1, MPI_DOUBLE, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    double iters = 20000, reps = 5, t[SUITE_MAX_REPS];
    int rank, size, chain;
    const suite_opt_t opts[] = {
        {"iters", "loop iterations per repetition, at most (20000)", NULL, &iters},
        {"reps", "timed repetitions (5)", NULL, &reps},
        {NULL, NULL, NULL, NULL},
    };
    const char *synopsis = "allgather|chain [--iters N] [--reps R]";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || (strcmp(argv[1], "allgather") != 0 && strcmp(argv[1], "chain") != 0)) {
        if (rank == 0)
            suite_usage(argv[0], synopsis, opts);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    suite_opts_parse(argc, argv, 2, synopsis, opts, rank);
    if (size < 2 || size > 64 || iters < 1 || reps < 1 || reps > SUITE_MAX_REPS) {
        if (rank == 0)
            fprintf(stderr, "%s: 2 to 64 processes, iters and reps at least 1, reps at "
                            "most %d\n", argv[0], SUITE_MAX_REPS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    chain = strcmp(argv[1], "chain") == 0;
    /* Warm-up, which also sizes the repetitions: at most --iters
     * iterations, fewer where that would take more than about 0.3 s (an
     * MPI whose ranks spin on 2 cores shared by 4 can manage 50 a second),
     * the count rank 0 finds sent to every rank. */
    {
        long warm = (long)iters / 10 < WARM_MAX ? (long)iters / 10 + 1 : WARM_MAX;
        double s = chain ? run_chain(rank, size, warm) : run_allgather(rank, size, warm);
        long n = (long)(REP_SECONDS * warm / (s > 0 ? s : 1e-9));
        n = n < 10 ? 10 : n > (long)iters ? (long)iters : n;
        MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        iters = (double)n;
    }
    for (int r = 0; r < (int)reps; r++) {
        double s = chain ? run_chain(rank, size, (long)iters)
                         : run_allgather(rank, size, (long)iters);
        /* Thousands per second. */
        t[r] = iters / s / 1e3;
    }
    if (rank == 0)
        suite_print(argv[1], size, 0, 0, t, (int)reps);
    MPI_Finalize();
    return 0;
}
