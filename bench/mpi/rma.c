/* One-sided benchmarks as a plain MPI program, built unchanged with onicc,
 * MPICH's mpicc and Open MPI's mpicc (bench/mpi/compare.py --prog rma runs
 * all three). Rank 0 is the origin, rank 1 the target, which waits in
 * MPI_Barrier (a call that makes progress, as OSU's target does) while rank
 * 0 works in a passive-target epoch on a window of MPI_Win_allocate:
 *
 *   put_lat   MPI_Put then MPI_Win_flush, one at a time: microseconds per
 *             put, 8 B to 1 MiB (as osu_put_latency with -s flush)
 *   get_lat   MPI_Get then MPI_Win_flush, the same way
 *   put_rate  64 MPI_Puts (each to its own offset) then one MPI_Win_flush:
 *             millions of puts per second, 8 B to 4 KiB (paper 004's point)
 *   acc_lat   MPI_Accumulate of one double (MPI_SUM) then MPI_Win_flush,
 *             microseconds (osu_acc_latency's 8 bytes)
 *   fop_lat   MPI_Fetch_and_op of one long long then MPI_Win_flush,
 *             microseconds (osu_fop_latency)
 *   acc_busy_lat  acc_lat while the target computes for 100 ms without
 *             any MPI call (the overlap question of papers 001 and 003): an
 *             accumulate that needs its target's call waits for the end of
 *             the computation, which the time per accumulate then shows
 *
 * Usage: rma MODE [REPS], 2 processes. Each size is timed REPS times (5 by
 * default) after a warm-up; rank 0 prints "MODE,SIZE,MEDIAN,MIN,MAX" per
 * size, as bench/mpi/p2p.c does. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 64
#define WIN_BYTES ((size_t)WINDOW * 4096 + (1 << 20))
#define BUSY_S 0.1

/* The target's computation: a clock read in a loop, no MPI call (not even
 * MPI_Wtime). */
static void compute(double seconds)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long iterations(const char *mode, long size)
{
    long n = (64L << 20) / (size * (strcmp(mode, "put_rate") == 0 ? WINDOW : 1));

    if (n > 5000)
        n = 5000;
    if (strcmp(mode, "put_rate") == 0 && n > 500)
        n = 500;
    return n < 4 ? 4 : n;
}

/* One repetition of n iterations: rank 0's time. */
static double run(const char *mode, int rank, char *buf, long size, long n, MPI_Win win)
{
    double t0, t = 0;
    double one = 1.0;
    long long inc = 1, old;

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        if (strcmp(mode, "acc_busy_lat") == 0)
            compute(BUSY_S);
        MPI_Barrier(MPI_COMM_WORLD);
        return 0;
    }
    /* Decided once, not by a strcmp each iteration (the p2p.c loop's
     * strcmp per message was 4 to 5% of its time in perf). */
    const int kind = strcmp(mode, "put_lat") == 0   ? 0
                     : strcmp(mode, "get_lat") == 0 ? 1
                     : strcmp(mode, "acc_lat") == 0 ? 2
                     : strcmp(mode, "acc_busy_lat") == 0 ? 2
                     : strcmp(mode, "fop_lat") == 0 ? 3
                                                    : 4;

    t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        if (kind == 0) {
            MPI_Put(buf, (int)size, MPI_CHAR, 1, 0, (int)size, MPI_CHAR, win);
        } else if (kind == 1) {
            MPI_Get(buf, (int)size, MPI_CHAR, 1, 0, (int)size, MPI_CHAR, win);
        } else if (kind == 2) {
            MPI_Accumulate(&one, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, MPI_SUM, win);
        } else if (kind == 3) {
            MPI_Fetch_and_op(&inc, &old, MPI_LONG_LONG, 1, 0, MPI_SUM, win);
        } else {
            for (int w = 0; w < WINDOW; w++)
                MPI_Put(buf + (long)w * size, (int)size, MPI_CHAR, 1, (MPI_Aint)w * size,
                        (int)size, MPI_CHAR, win);
        }
        MPI_Win_flush(1, win);
    }
    t = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    static const long lat_sizes[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20};
    static const long rate_sizes[] = {8, 64, 512, 4096};
    static const long one_size[] = {8};
    const char *mode = argc > 1 ? argv[1] : "put_lat";
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    const long *sizes;
    size_t nsizes;
    int rank, size;
    char *buf, *mem;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || reps < 1 || reps > 100 ||
        (strcmp(mode, "put_lat") && strcmp(mode, "get_lat") && strcmp(mode, "put_rate") &&
         strcmp(mode, "acc_lat") && strcmp(mode, "fop_lat") && strcmp(mode, "acc_busy_lat"))) {
        if (rank == 0)
            fprintf(stderr, "usage: run with 2 processes: rma "
                            "put_lat|get_lat|put_rate|acc_lat|fop_lat|acc_busy_lat [REPS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(mode, "put_lat") == 0 || strcmp(mode, "get_lat") == 0)
        sizes = lat_sizes, nsizes = sizeof(lat_sizes) / sizeof(lat_sizes[0]);
    else if (strcmp(mode, "put_rate") == 0)
        sizes = rate_sizes, nsizes = sizeof(rate_sizes) / sizeof(rate_sizes[0]);
    else
        sizes = one_size, nsizes = 1;
    buf = malloc(WIN_BYTES);
    if (buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 1, WIN_BYTES);
    MPI_Win_allocate((MPI_Aint)WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, WIN_BYTES);
    MPI_Win_lock_all(0, win);
    for (size_t k = 0; k < nsizes; k++) {
        long n = iterations(mode, sizes[k]);
        double v[100];

        run(mode, rank, buf, sizes[k], n / 4 + 1, win); /* warm-up */
        for (int r = 0; r < reps; r++) {
            double t = run(mode, rank, buf, sizes[k], n, win);
            v[r] = strcmp(mode, "put_rate") == 0 ? (double)WINDOW * (double)n / t / 1e6
                                                   : t * 1e6 / (double)n;
        }
        qsort(v, (size_t)reps, sizeof(v[0]), cmp_double);
        if (rank == 0)
            printf("%s,%ld,%.4f,%.4f,%.4f\n", mode, sizes[k], v[reps / 2], v[0], v[reps - 1]);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
