/* A token goes around the ring of processes, each adding its rank, a few
 * times; then every process checks the sum with MPI_Allreduce.
 *   onicc examples/ring.c -o ring && onicrun -n 4 ./ring */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, token = 0, laps = 3, sum, expect;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int lap = 0; lap < laps; lap++) {
        if (rank == 0) {
            token += rank;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect = laps * sum;
    if (rank == 0)
        printf("ring of %d: token %d after %d laps (expected %d): %s\n", size, token, laps,
               expect, token == expect ? "ok" : "WRONG");
    MPI_Finalize();
    return token != expect;
}
