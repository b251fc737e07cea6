/* How an MPI job ends, observed by test_exit.sh through onicrun's status:
 *   abort    rank 1 calls MPI_Abort(MPI_COMM_WORLD, 42) while rank 0 waits
 *            for a message that never comes: the job stops with status 42;
 *   fatal    a send to a rank that does not exist, under the default
 *            MPI_ERRORS_ARE_FATAL: status MPI_ERR_RANK;
 *   pending  MPI_Finalize with a receive never matched, under
 *            MPI_ERRORS_RETURN: MPI_ERR_PENDING is returned, no hang
 *            (exit 0 when that is what happened), and the report names
 *            those receives (one from MPI_ANY_SOURCE, one with
 *            MPI_ANY_TAG) and a generalized request never completed, not
 *            the 200 requests completed and freed before them
 *            (test_exit.sh checks the text);
 *   die      the last rank is killed (SIGKILL) while the others wait for its
 *            message: the launcher must end the job with an error, not hang;
 *   initfail rank 2 alone starts with an invalid ONIC_EAGER_LIMIT: its
 *            MPI_Init fails, and its report names rank 2 (test_exit.sh
 *            checks the text);
 *   limits, credits  rank 1 alone starts with another ONIC_EAGER_LIMIT, or
 *            another ONIC_EAGER_CREDITS: every rank's MPI_Init fails
 *            (MPI_ERR_OTHER), saying the processes disagree;
 *   late     MPI_Isend (then MPI_Irecv) after MPI_Finalize: the process
 *            stops with MPI_ERR_OTHER, saying MPI has been finalized
 *            (the send's quick argument check sends nothing then). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int greq_query(void *state, MPI_Status *status)
{
    (void)state;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int greq_free(void *state)
{
    (void)state;
    return MPI_SUCCESS;
}

static int greq_cancel(void *state, int complete)
{
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    MPI_Request r;
    const char *me = getenv("ONIC_RANK");

    if (argc > 1 && strcmp(argv[1], "initfail") == 0 && me != NULL && strcmp(me, "2") == 0)
        setenv("ONIC_EAGER_LIMIT", "bogus", 1);
    if (argc > 1 && strcmp(argv[1], "limits") == 0 && me != NULL && strcmp(me, "1") == 0)
        setenv("ONIC_EAGER_LIMIT", "1000", 1);
    if (argc > 1 && strcmp(argv[1], "credits") == 0 && me != NULL && strcmp(me, "1") == 0)
        setenv("ONIC_EAGER_CREDITS", "32", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2)
        return 2;
    if (strcmp(argv[1], "abort") == 0) {
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, 42);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return 3; /* never */
    }
    if (strcmp(argv[1], "fatal") == 0) {
        MPI_Send(&v, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
        return 3; /* never */
    }
    if (strcmp(argv[1], "pending") == 0) {
        int rc, in[100], out[100];
        MPI_Request rs[200];
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        for (int i = 0; i < 100; i++) {
            out[i] = i;
            MPI_Irecv(&in[i], 1, MPI_INT, rank, 6, MPI_COMM_WORLD, &rs[i]);
            MPI_Isend(&out[i], 1, MPI_INT, rank, 6, MPI_COMM_WORLD, &rs[100 + i]);
        }
        MPI_Waitall(200, rs, MPI_STATUSES_IGNORE);
        MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r);
        MPI_Irecv(&in[0], 1, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, &rs[1]);
        MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &rs[0]);
        rc = MPI_Finalize();
        if (rc != MPI_ERR_PENDING) {
            fprintf(stderr, "rank %d: MPI_Finalize returned %d, expected MPI_ERR_PENDING\n",
                    rank, rc);
            return 1;
        }
        return 0;
    }
    if (strcmp(argv[1], "late") == 0) {
        MPI_Finalize();
        MPI_Isend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
        MPI_Irecv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
        return 3; /* never */
    }
    if (strcmp(argv[1], "die") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == size - 1)
            raise(SIGKILL);
        MPI_Recv(&v, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return 3; /* never */
    }
    return 2;
}
