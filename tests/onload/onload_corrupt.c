/* The onload engine's status segment zeroed under a running job (by
 * shm_poke, an outside process): the first process that looks must stop
 * the job with one error line, not decide that the live engine is gone
 * and leave every later call failing. Run by test_onload_corrupt.sh:
 *
 *   onicrun --onload -n 2 onload_corrupt SHM_POKE
 *
 * After MPI_Init, rank 1 has shm_poke zero the segment as it maps it, then
 * both ranks ping-pong for 5 s; a rank still running then says so and
 * exits 0, which the test counts as a failure. */
#include <mpi.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, v = 0;
    time_t end;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2)
        return 2;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        char pid[32];
        pid_t child;
        int st;
        snprintf(pid, sizeof(pid), "%d", (int)getpid());
        child = fork();
        if (child == 0) {
            execl(argv[1], argv[1], "onload-zero", pid, (char *)NULL);
            _exit(127);
        }
        if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0)
            return child > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 77 ? 77 : 3;
    }
    end = time(NULL) + 5;
    while (time(NULL) < end) {
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
    }
    fprintf(stderr, "onload_corrupt: rank %d still runs: nobody stopped the job\n", rank);
    MPI_Finalize();
    return 0;
}
