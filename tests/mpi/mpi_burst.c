/* A burst the event queue must survive (3 processes): rank 0 posts 20000
 * receives from rank 2, then sends 3000 messages to rank 1, which starts
 * receiving only a second later, so rank 0's sends are kept in its
 * transport's backlog while rank 2's 20000 messages pile up in its rings. Every one of those
 * completes a posted receive, and all must come through without the event
 * queue overflowing (which stops the job) and in order. */
#include <mpi.h>

#include <stdio.h>
#include <unistd.h>

#define NRECV 20000
#define NSEND 3000

int main(int argc, char **argv)
{
    static int rb[NRECV], sb[NRECV];
    static MPI_Request rq[NRECV], sq[NSEND];
    int rank, size, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        if (rank == 0)
            fprintf(stderr, "mpi_burst: run with 3 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < NRECV; i++)
        sb[i] = i;
    if (rank == 0) {
        for (int i = 0; i < NRECV; i++)
            MPI_Irecv(&rb[i], 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &rq[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < NSEND; i++)
            MPI_Isend(&sb[i], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &sq[i]);
        MPI_Waitall(NSEND, sq, MPI_STATUSES_IGNORE);
        MPI_Waitall(NRECV, rq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NRECV; i++)
            bad += rb[i] != i; /* non-overtaking: the i-th send fills the i-th receive */
    } else if (rank == 1) {
        static int b[NSEND];
        MPI_Barrier(MPI_COMM_WORLD);
        sleep(1);
        for (int i = 0; i < NSEND; i++)
            MPI_Irecv(&b[i], 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &sq[i]);
        MPI_Waitall(NSEND, sq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NSEND; i++)
            bad += b[i] != i;
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        usleep(100000);
        for (int i = 0; i < NRECV; i++)
            MPI_Isend(&sb[i], 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq[i]);
        MPI_Waitall(NRECV, rq, MPI_STATUSES_IGNORE);
    }
    printf("mpi_burst rank %d: %s\n", rank, bad == 0 ? "passed" : "FAILED");
    MPI_Finalize();
    return bad == 0 ? 0 : 1;
}
