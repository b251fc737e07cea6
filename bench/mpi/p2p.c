/* Point-to-point benchmarks as a plain MPI program, built unchanged with
 * onicc, MPICH's mpicc and Open MPI's mpicc, so every MPI runs the same
 * source (bench/mpi/compare.py drives all three):
 *
 *   latency   ping-pong, one-way time in microseconds, 0 B to 4 MiB
 *   bw        streaming bandwidth: a window of 64 sends, then a 1-byte
 *             acknowledgment, in GB/s (10^9 bytes per second), 1 KiB to 4 MiB
 *   bibw      bi-directional bandwidth: both processes post a window of 64
 *             receives and 64 sends to each other, then wait for all (as
 *             osu_bibw); the bytes both ways, in GB/s, 1 KiB to 4 MiB
 *   rate      64 messages in flight, then an acknowledgment, in millions of
 *             messages per second, 1 B to 4 KiB; any even number of
 *             processes: ranks pair as (2i, 2i+1), 2i sending, and all pairs
 *             run the same loop at once, starting together after a barrier;
 *             the figure is the aggregate rate, the messages of all pairs
 *             divided by the slowest pair's time (a pair's time is its
 *             sender's, so with 2 processes it is rank 0's, as it always was)
 *   allreduce MPI_Allreduce of doubles (MPI_SUM) by every process, one after
 *             another, in microseconds per call as rank 0 sees it, 8 B to
 *             4 MiB (a multiple of 8 bytes); any number of processes
 *   allgather MPI_Allgather of SIZE bytes from every process (the same
 *             measure; SIZE times the processes at most 4 MiB)
 *   self      rank 0 sends to itself and receives it (MPI_Isend, MPI_Recv,
 *             MPI_Wait), one at a time: the time of one pass from sender to
 *             receiver, in microseconds, 0 B to 4 KiB, with one process
 *             running (with onicrun --onload: the process and the engine,
 *             which fit a 2-core machine where a ping-pong's three do not)
 *
 * Usage: p2p MODE [REPS [SIZES [OFFSET]]] (latency, bw, bibw: 2 processes; rate: an even number;
 * allreduce, allgather, self: any number). SIZES, a comma-separated list of byte counts, replaces
 * the mode's own (latency, bw and bibw: up to 4 MiB, allgather's times the processes too; rate
 * and self: up to 4 KiB; "-" keeps the mode's
 * own). OFFSET (0 to 4095, default 0): the odd ranks' buffer starts that many bytes
 * further into its page than the even ranks' -- where a receive lands against where its
 * data comes from, which decides some copies' speed (a malloc'd buffer lies 16 bytes
 * into a page, a shared segment at its start). Each size is timed REPS times (5 by
 * default) after a warm-up; rank 0 prints "MODE,SIZE,MEDIAN,MIN,MAX" per size. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Iterations so that one repetition moves about 64 MiB, or takes about
 * 10000 round trips for small sizes. */
static long iterations(const char *mode, long size)
{
    long n = size == 0 ? 10000
                       : (64L << 20) / (size * (strcmp(mode, "latency") == 0 ||
                                                        strcmp(mode, "self") == 0 ||
                                                        strcmp(mode, "allreduce") == 0 ||
                                                        strcmp(mode, "allgather") == 0
                                                    ? 1
                                                    : WINDOW));

    if (n > 10000)
        n = 10000;
    if (strcmp(mode, "rate") == 0 && n > 2000)
        n = 2000;
    return n < 4 ? 4 : n;
}

/* One repetition; returns the time it took, as rank 0 sees it for latency,
 * bw and self, and the slowest pair's for rate (the same as rank 0's with 2
 * processes). */
static double run(const char *mode, int rank, char *buf, long size, long n)
{
    MPI_Request req[2 * WINDOW];
    MPI_Status st[2 * WINDOW]; /* not MPI_STATUSES_IGNORE: some headers make gcc warn about it */
    int sender = rank % 2 == 0, peer = sender ? rank + 1 : rank - 1;
    /* Decided once: a strcmp a message (the MPI calls between could change
     * the string, for all the compiler knows) was 4 to 5% of the rate
     * loop's time. */
    const int self = strcmp(mode, "self") == 0, latency = strcmp(mode, "latency") == 0,
              rate = strcmp(mode, "rate") == 0, bibw = strcmp(mode, "bibw") == 0,
              allreduce = strcmp(mode, "allreduce") == 0,
              allgather = strcmp(mode, "allgather") == 0;
    char ack = 0;
    double t0, t, tmax;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        if (self) {
            if (rank == 0) {
                MPI_Request r;
                MPI_Isend(buf, (int)size, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &r);
                MPI_Recv(buf + size, (int)size, MPI_CHAR, 0, 4, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            }
            continue;
        }
        if (allreduce) {
            /* From the lower 4 MiB into the upper. */
            MPI_Allreduce(buf, buf + (4L << 20), (int)(size / 8), MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD);
            continue;
        }
        if (allgather) {
            MPI_Allgather(buf, (int)size, MPI_CHAR, buf + (4L << 20), (int)size, MPI_CHAR,
                          MPI_COMM_WORLD);
            continue;
        }
        if (latency) {
            if (rank == 0) {
                MPI_Send(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
            continue;
        }
        if (bibw) {
            /* Receives into the upper 4 MiB, sends from the lower. */
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(buf + (4L << 20), (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD,
                          &req[w]);
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(buf, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[WINDOW + w]);
            MPI_Waitall(2 * WINDOW, req, st);
            continue;
        }
        /* bw and rate: a window of sends (each from its own slot of buf for
         * rate, the same buffer for bw), then one acknowledgment back. */
        for (int w = 0; w < WINDOW; w++) {
            char *p = rate ? buf + (long)w * size : buf;
            if (sender)
                MPI_Isend(p, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[w]);
            else
                MPI_Irecv(p, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[w]);
        }
        MPI_Waitall(WINDOW, req, st);
        if (sender)
            MPI_Recv(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
    }
    t = MPI_Wtime() - t0;
    if (!rate)
        return t;
    /* The slowest pair's time, each pair's being its sender's. */
    if (!sender)
        t = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

int main(int argc, char **argv)
{
    static const long lat_sizes[] = {0, 1, 8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20};
    static const long bw_sizes[] = {1024, 8192, 65536, 262144, 1 << 20, 4 << 20};
    static const long rate_sizes[] = {1, 8, 64, 256, 1024, 4096};
    static const long self_sizes[] = {0, 8, 64, 512, 4096};
    static const long allreduce_sizes[] = {8, 64, 512, 4096, 16384, 65536, 262144, 1 << 20};
    const char *mode = argc > 1 ? argv[1] : "latency";
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    const long *sizes;
    size_t nsizes;
    long given[64];
    int rank, size;
    long offset = 0;
    char *mem, *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int two = strcmp(mode, "latency") == 0 || strcmp(mode, "bw") == 0 ||
                    strcmp(mode, "bibw") == 0;
    /* The collectives' modes: any number of processes, their own sizes. */
    const int allreduce = strcmp(mode, "allreduce") == 0 || strcmp(mode, "allgather") == 0;

    if ((size != 2 && two) ||
        ((size < 2 || size % 2 != 0) && strcmp(mode, "rate") == 0) || reps < 1 ||
        reps > 100 ||
        (!two && !allreduce && strcmp(mode, "rate") && strcmp(mode, "self"))) {
        if (rank == 0)
            fprintf(stderr, "usage: run with 2 processes: p2p latency|bw|bibw [REPS]; "
                            "with an even number: p2p rate [REPS]; "
                            "with any number: p2p allreduce|allgather|self [REPS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(mode, "latency") == 0)
        sizes = lat_sizes, nsizes = sizeof(lat_sizes) / sizeof(lat_sizes[0]);
    else if (strcmp(mode, "bw") == 0 || strcmp(mode, "bibw") == 0)
        sizes = bw_sizes, nsizes = sizeof(bw_sizes) / sizeof(bw_sizes[0]);
    else if (strcmp(mode, "self") == 0)
        sizes = self_sizes, nsizes = sizeof(self_sizes) / sizeof(self_sizes[0]);
    else if (allreduce)
        sizes = allreduce_sizes, nsizes = sizeof(allreduce_sizes) / sizeof(allreduce_sizes[0]);
    else
        sizes = rate_sizes, nsizes = sizeof(rate_sizes) / sizeof(rate_sizes[0]);
    if (argc > 4) {
        char *end;
        offset = strtol(argv[4], &end, 10);
        if (end == argv[4] || *end != '\0' || offset < 0 || offset > 4095) {
            if (rank == 0)
                fprintf(stderr, "p2p: OFFSET is a byte count from 0 to 4095, not \"%s\"\n",
                        argv[4]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (argc > 3 && strcmp(argv[3], "-") != 0) {
        long most = two || allreduce ? 4L << 20 : 4096;
        char *p = argv[3], *end;
        nsizes = 0;
        while (*p != '\0' && nsizes < sizeof(given) / sizeof(given[0])) {
            given[nsizes] = strtol(p, &end, 10);
            if (end == p || given[nsizes] < 0 || given[nsizes] > most ||
                (strcmp(mode, "allreduce") == 0 && given[nsizes] % 8 != 0) ||
                (strcmp(mode, "allgather") == 0 && given[nsizes] * size > most) ||
                (*end != ',' && *end != '\0')) {
                if (rank == 0)
                    fprintf(stderr, "p2p: SIZES is a comma-separated list of byte counts "
                                    "from 0 to %ld for %s%s, not \"%s\"\n", most, mode,
                            strcmp(mode, "allreduce") == 0 ? " (multiples of 8)"
                            : strcmp(mode, "allgather") == 0 ? " (divided by the processes)"
                                                             : "",
                            argv[3]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            nsizes++;
            p = *end == ',' ? end + 1 : end;
        }
        sizes = given;
    }
    /* An allgather's blocks from every process fit the upper 4 MiB. */
    while (strcmp(mode, "allgather") == 0 && nsizes > 0 &&
           sizes[nsizes - 1] * size > 4L << 20)
        nsizes--;
    /* Page-aligned, then OFFSET bytes in at the odd ranks. */
    mem = aligned_alloc(4096, (size_t)WINDOW * 4096 + (8 << 20) + 4096);
    if (mem == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    buf = mem + (rank % 2 ? offset : 0);
    memset(buf, 1, (size_t)WINDOW * 4096 + (8 << 20));

    for (size_t k = 0; k < nsizes; k++) {
        long n = iterations(mode, sizes[k]);
        double v[100];
        run(mode, rank, buf, sizes[k], n / 4 + 1); /* warm-up */
        for (int r = 0; r < reps; r++) {
            double t = run(mode, rank, buf, sizes[k], n);
            if (strcmp(mode, "latency") == 0)
                v[r] = t * 1e6 / (2.0 * (double)n);
            else if (strcmp(mode, "self") == 0 || allreduce)
                v[r] = t * 1e6 / (double)n;
            else if (strcmp(mode, "bw") == 0)
                v[r] = (double)sizes[k] * WINDOW * (double)n / t / 1e9;
            else if (strcmp(mode, "bibw") == 0)
                v[r] = 2.0 * (double)sizes[k] * WINDOW * (double)n / t / 1e9;
            else
                v[r] = (double)WINDOW * (double)n * (double)(size / 2) / t / 1e6;
        }
        qsort(v, (size_t)reps, sizeof(v[0]), cmp_double);
        if (rank == 0)
            printf("%s,%ld,%.4f,%.4f,%.4f\n", mode, sizes[k], v[reps / 2], v[0], v[reps - 1]);
    }
    free(mem);
    MPI_Finalize();
    return 0;
}
