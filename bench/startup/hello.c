/* The smallest MPI program: what a user's first try costs to start and end.
 * bench/startup/startup.py times it with each MPI; the tests run it to see
 * which libraries a job loads. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0 && argc > 1)
        printf("hello from %d processes\n", size);
    MPI_Finalize();
    return 0;
}
