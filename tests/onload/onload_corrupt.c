/* The onload engine's shared memory corrupted under a running job (by
 * shm_poke, an outside process): the first process that looks must stop
 * the job with one error line, not decide that the live engine is gone
 * and leave every later call failing, nor go on with a broken ring. Run by
 * test_onload_corrupt.sh:
 *
 *   onicrun --onload -n 2 onload_corrupt SHM_POKE [SCENARIO]
 *
 * After MPI_Init, rank 1 has shm_poke do SCENARIO (onload-zero, the
 * default: zero the engine's status segment; onload-evt, onload-cmd: break
 * rank 1's event or command ring) as rank 1 maps it (and after the
 * command ring's, waits 0.3 s; rank 0 waits 0.3 s before its first
 * message), then both ranks ping-pong for 5 s (for the event ring, only
 * probe: see below); a rank still running then says so and exits 0, which
 * the test counts as a failure. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, v = 0;
    time_t end;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2 && argc != 3)
        return 2;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        char pid[32];
        pid_t child;
        int st;
        snprintf(pid, sizeof(pid), "%d", (int)getpid());
        child = fork();
        if (child == 0) {
            execl(argv[1], argv[1], argc == 3 ? argv[2] : "onload-zero", pid, "1",
                  (char *)NULL);
            _exit(127);
        }
        if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0)
            return child > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 77 ? 77 : 3;
        /* Its command ring: quiet for a while, so that rank 1's own next
         * command (which writes the tail) does not mend the damage before
         * the engine, which looks at least every 100 ms, has seen it. */
        if (argc == 3 && strcmp(argv[2], "onload-cmd") == 0)
            usleep(300000);
    }
    /* Rank 0 sends nothing for a while: an event for rank 1 pushed by the
     * engine right after shm_poke wrote would mend the event ring's tail
     * before rank 1 has seen it. */
    if (rank == 0)
        usleep(300000);
    end = time(NULL) + 5;
    /* The event ring: nobody sends at all. Any event the engine pushes to
     * rank 1 -- and under load shm_poke may take longer than rank 0's wait
     * -- mends the tail before rank 1 sees it; rank 1 polls its ring (a
     * probe) and must find the damage with nothing arriving. */
    if (argc == 3 && strcmp(argv[2], "onload-evt") == 0) {
        while (time(NULL) < end) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
    }
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
