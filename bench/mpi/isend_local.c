/* Are nonblocking sends local? Rank 0 starts N MPI_Isend of SIZE bytes to
 * rank 1 while rank 1 computes (sleeps) for a second outside MPI before it
 * posts its receives; rank 0 reports the time spent inside its loop of
 * MPI_Isend calls. A local call returns whatever the peer does, so the
 * time stays near zero; an implementation whose Isend waits for room at
 * the receiver spends about the receiver's second in it.
 *
 *   isend_local [--size BYTES] [--counts 10,100,1000] [--reps R] [--sleep-ms MS]
 *
 * Prints one line per count in the suite's CSV (bench/suite.h):
 * "isend_local,SIZE,COUNT,0,MEDIAN,MIN,MAX", seconds over R runs, for any
 * MPI (built with mpicc or onicc). --sleep-ms (1000 by default) is how long
 * the receiver computes. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int size = 400, reps = 3, sleep_ms = 1000, counts[16], ncounts = 0, rank, np, maxc = 0;
    int bad = 0;
    const char *list = "10,100,1000";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = atoi(argv[++i]);
        else if (strcmp(argv[i], "--counts") == 0 && i + 1 < argc)
            list = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--sleep-ms") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            sleep_ms = *end == '\0' && v >= 0 && v <= 60000 ? (int)v : -1;
        }
    }
    for (const char *p = list; *p != '\0' && ncounts < 16;) {
        counts[ncounts] = atoi(p);
        if (counts[ncounts] < 1)
            bad = 1;
        if (counts[ncounts] > maxc)
            maxc = counts[ncounts];
        ncounts++;
        p = strchr(p, ',');
        if (p == NULL)
            break;
        p++;
    }
    if (np != 2 || size < 1 || reps < 1 || reps > 64 || maxc < 1 || bad || sleep_ms < 0 ||
        sleep_ms > 60000) {
        if (rank == 0)
            fprintf(stderr, "isend_local: 2 processes; --size >= 1, --reps 1..64, counts >= 1, "
                            "--sleep-ms 0..60000\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = malloc((size_t)maxc * (size_t)size);
    MPI_Request *rq = malloc(sizeof(*rq) * (size_t)maxc);
    MPI_Status *st = malloc(sizeof(*st) * (size_t)maxc);
    if (buf == NULL || rq == NULL || st == NULL) {
        fprintf(stderr, "isend_local: no memory for %d messages of %d bytes\n", maxc, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 1, (size_t)maxc * (size_t)size);
    for (int c = 0; c < ncounts; c++) {
        int n = counts[c];
        double t[64];
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                double t0 = MPI_Wtime();
                for (int i = 0; i < n; i++)
                    MPI_Isend(buf + (size_t)i * size, size, MPI_BYTE, 1, i, MPI_COMM_WORLD,
                              &rq[i]);
                t[r] = MPI_Wtime() - t0;
            } else {
                struct timespec ts = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL); /* computing, outside MPI */
                for (int i = 0; i < n; i++)
                    MPI_Irecv(buf + (size_t)i * size, size, MPI_BYTE, 0, i, MPI_COMM_WORLD,
                              &rq[i]);
            }
            MPI_Waitall(n, rq, st); /* not IGNORE: gcc warns on it with MPICH's mpi.h */
        }
        if (rank == 0) {
            qsort(t, (size_t)reps, sizeof(t[0]), cmp_double);
            printf("isend_local,%d,%d,0,%.6f,%.6f,%.6f\n", size, n, t[reps / 2], t[0],
                   t[reps - 1]);
            fflush(stdout);
        }
    }
    free(st);
    free(rq);
    free(buf);
    MPI_Finalize();
    return 0;
}
