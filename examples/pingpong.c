/* Ping-pong between ranks 0 and 1 (the others wait at the barrier): the
 * half round-trip time and bandwidth for a few sizes, eager and rendezvous.
 *   onicc examples/pingpong.c -o pingpong && onicrun -n 2 ./pingpong */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    const int sizes[] = {0, 8, 1024, 2048, 65536, 1 << 20};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong needs 2 processes: onicrun -n 2 ./pingpong\n");
        MPI_Finalize();
        return 1;
    }
    char *buf = malloc(1 << 20);
    if (rank == 0)
        printf("%10s %12s %12s\n", "bytes", "usec", "MB/s");
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        int n = sizes[s], iters = n >= 65536 ? 50 : 1000;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters && rank < 2; i++) {
            if (rank == 0) {
                memset(buf, i & 0xff, (size_t)n);
                MPI_Send(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad |= n > 0 && (buf[0] != (char)(i & 0xff) || buf[n - 1] != (char)(i & 0xff));
            } else {
                MPI_Recv(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            }
        }
        double us = (MPI_Wtime() - t0) * 1e6 / iters / 2;
        if (rank == 0)
            printf("%10d %12.2f %12.1f\n", n, us, n / us);
    }
    free(buf);
    MPI_Finalize();
    if (rank == 0 && bad)
        printf("data came back WRONG\n");
    return bad;
}
