/* MPI through the onload engine: what only the engine makes true. Run with
 * onicrun --onload.
 *
 *   mpi_onload bypass SIZE  rank 1 posts MPI_Irecv of SIZE bytes from rank
 *                           0, meets it at a barrier, then computes without
 *                           calling MPI: it scans its buffer (volatile
 *                           loads, a full barrier per pass) until every byte
 *                           is the sender's, and only then calls MPI_Wait.
 *                           Inline this would never end (progress happens in
 *                           MPI calls); the engine moves the data meanwhile.
 *                           Fails if the data is not all there within 20 s.
 *   mpi_onload killed       with MPI_ERRORS_RETURN, rank 0 kills the engine
 *                           with SIGKILL and every rank then waits in
 *                           MPI_Recv for a message that will never come:
 *                           each must get an error within 5 s, not hang
 *                           (SIGTERM from onicrun is ignored so that the
 *                           error can be seen). */
#include <mpi.h>
#include "base/clock.h"
#include "onload/onload.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t barrier_word;

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131u + 7u) | 1u; /* never 0, the buffer's start */
}

static int run_bypass(int rank, size_t size)
{
    unsigned char *buf = calloc(size, 1);
    MPI_Request req;
    int bad = 0;

    if (buf == NULL)
        return 1;
    if (rank == 0) {
        for (size_t i = 0; i < size; i++)
            buf[i] = pattern(i);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(buf, (int)size, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    } else if (rank == 1) {
        volatile unsigned char *v = buf;
        uint64_t t0, t1, passes = 0;
        size_t good = 0;

        MPI_Irecv(buf, (int)size, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &req);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = onic_time_ns();
        /* The computation: no MPI call until all the data is seen. The
         * engine writes in order, so a byte that is right stays right. */
        while (good < size && onic_time_ns() - t0 < 20000000000ull) {
            /* A full barrier (a locked read-modify-write; ThreadSanitizer
             * builds refuse a fence) before each look. */
            __atomic_fetch_add(&barrier_word, 0, __ATOMIC_SEQ_CST);
            while (good < size && v[good] == pattern(good))
                good++;
            passes++;
        }
        t1 = onic_time_ns();
        if (good < size) {
            printf("rank 1: only %zu of %zu bytes arrived in 20 s without MPI calls\n", good,
                   size);
            bad = 1;
        } else {
            printf("rank 1: all %zu bytes arrived while computing, before MPI_Wait (%llu us, "
                   "%llu passes)\n", size, (unsigned long long)((t1 - t0) / 1000),
                   (unsigned long long)passes);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < size && !bad; i++)
            bad = buf[i] != pattern(i);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(buf);
    return bad;
}

static int run_killed(int rank, int size)
{
    onic_onload_status_t st;
    const char *jobid = getenv("ONIC_JOBID");
    char msg[MPI_MAX_ERROR_STRING];
    int x = 0, rc, len;
    uint64_t t0;

    signal(SIGTERM, SIG_IGN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        onic_config_t cfg;
        if (jobid == NULL || onic_config_read(&cfg) != ONIC_OK ||
            onic_onload_status_read((int)cfg.onload_fd, &st) != ONIC_OK) {
            printf("rank 0: no onload engine to kill (run with onicrun --onload)\n");
            return 1;
        }
        printf("rank 0: killing the onload engine (pid %d) for job %s\n", (int)st.pid, jobid);
        fflush(stdout);
        kill((pid_t)st.pid, SIGKILL);
    }
    t0 = onic_time_ns();
    rc = MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    len = 0;
    MPI_Error_string(rc, msg, &len);
    printf("rank %d: MPI_Recv with the engine gone: %s after %llu ms\n", rank,
           rc == MPI_SUCCESS ? "success?" : msg,
           (unsigned long long)((onic_time_ns() - t0) / 1000000));
    fflush(stdout);
    _exit(rc != MPI_SUCCESS ? 0 : 1); /* MPI_Finalize would need the engine */
}

int main(int argc, char **argv)
{
    int rank, size, bad;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 2 && strcmp(argv[1], "bypass") == 0 && size >= 2) {
        bad = run_bypass(rank, argc >= 3 ? (size_t)strtoull(argv[2], NULL, 0) : (1u << 20));
    } else if (argc >= 2 && strcmp(argv[1], "killed") == 0 && size >= 2) {
        bad = run_killed(rank, size);
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: onicrun --onload -n 2 mpi_onload bypass [SIZE] | killed\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Finalize();
    return bad;
}
