/* Sessions (MPI 4.0, 11.3), through onicrun at any number of processes:
 *   mpi_session only   -- MPI started by sessions alone, never MPI_Init:
 *                         info objects before, between and after; the
 *                         process sets and their names, sizes and groups;
 *                         communicators made from them (collectives, a ring
 *                         of messages, errors returned to their handler);
 *                         two sessions at once, the library up until the
 *                         last ends, and not started again after it.
 *   mpi_session mixed  -- MPI_Init and a session together: errors on no
 *                         session and on a session (no memory for one
 *                         among them), handlers set, asked
 *                         and called, bad arguments; the session's
 *                         communicator still works after MPI_Finalize,
 *                         until the session ends.
 * Each rank counts its failed checks and exits 1 if any failed. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "mpi_check.h"

/* A communicator made from set's group in session s: its size and rank as
 * the set says, a sum of ranks, a ring of messages, an error returned. */
static void check_comm(MPI_Session s, const char *set, int want_size, int want_rank)
{
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int n = -1, r = -1, sum = -1, got = -1, v = 0;

    CHECK_EQ(MPI_Group_from_session_pset(s, set, &g), MPI_SUCCESS);
    CHECK_EQ(MPI_Group_size(g, &n), MPI_SUCCESS);
    CHECK_EQ(n, want_size);
    CHECK_EQ(MPI_Comm_create_from_group(g, "org.onic.tests.mpi_session", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &c), MPI_SUCCESS);
    CHECK_EQ(MPI_Group_free(&g), MPI_SUCCESS);
    if (c == MPI_COMM_NULL)
        return;
    CHECK_EQ(MPI_Comm_size(c, &n), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_rank(c, &r), MPI_SUCCESS);
    CHECK_EQ(n, want_size);
    CHECK_EQ(r, want_rank);
    CHECK_EQ(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
    CHECK_EQ(sum, n * (n - 1) / 2);
    v = 1000 + r;
    CHECK_EQ(MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % n, 7, &got, 1, MPI_INT, (r + n - 1) % n, 7,
                          c, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(got, 1000 + (r + n - 1) % n);
    /* The handler given at creation: errors come back. */
    CHECK_EQ(MPI_Comm_get_errhandler(c, &eh), MPI_SUCCESS);
    CHECK_EQ(eh, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, n, 7, c), MPI_ERR_RANK);
    CHECK_EQ(MPI_Comm_free(&c), MPI_SUCCESS);
}

static void test_only(void)
{
    MPI_Session s = MPI_SESSION_NULL, s2 = MPI_SESSION_NULL, s3 = MPI_SESSION_NULL;
    MPI_Info info = MPI_INFO_NULL, got = MPI_INFO_NULL;
    char val[MPI_MAX_INFO_VAL + 1], name[MPI_MAX_PSET_NAME_LEN];
    int flag = -1, n = -1, len, wsize;

    /* Info objects before MPI starts (MPI 4.0, 11.2.1). */
    CHECK_EQ(MPI_Initialized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK_EQ(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK_EQ(MPI_Info_set(info, "thread_level", "MPI_THREAD_SERIALIZED"), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_init(info, MPI_ERRORS_RETURN, &s), MPI_SUCCESS);
    CHECK(s != MPI_SESSION_NULL);
    /* Sessions are not MPI_Init. */
    CHECK_EQ(MPI_Initialized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    /* The level provided: every level is, as asked. */
    CHECK_EQ(MPI_Session_get_info(s, &got), MPI_SUCCESS);
    CHECK_EQ(MPI_Info_get(got, "thread_level", MPI_MAX_INFO_VAL, val, &flag), MPI_SUCCESS);
    CHECK(flag && strcmp(val, "MPI_THREAD_SERIALIZED") == 0);
    CHECK_EQ(MPI_Info_free(&got), MPI_SUCCESS);

    /* The process sets: two, each name's length with its terminator when
     * pset_len is 0, a name cut to pset_len - 1 characters. */
    CHECK_EQ(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n), MPI_SUCCESS);
    CHECK_EQ(n, 2);
    len = 0;
    CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL), MPI_SUCCESS);
    CHECK_EQ(len, (int)strlen("mpi://WORLD") + 1);
    CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name), MPI_SUCCESS);
    CHECK(strcmp(name, "mpi://WORLD") == 0);
    len = 5;
    CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1, &len, name), MPI_SUCCESS);
    CHECK(strcmp(name, "mpi:") == 0);
    CHECK_EQ(len, (int)strlen("mpi://SELF") + 1);
    len = sizeof(name);
    CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &len, name), MPI_ERR_ARG);
    CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, name), MPI_ERR_ARG);

    /* Their sizes; a name in any case; an unknown one refused. */
    CHECK_EQ(MPI_Session_get_pset_info(s, "mpi://WORLD", &got), MPI_SUCCESS);
    CHECK_EQ(MPI_Info_get(got, "mpi_size", MPI_MAX_INFO_VAL, val, &flag), MPI_SUCCESS);
    CHECK(flag && atoi(val) == size);
    CHECK_EQ(MPI_Info_free(&got), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_get_pset_info(s, "mpi://self", &got), MPI_SUCCESS);
    CHECK_EQ(MPI_Info_get(got, "mpi_size", MPI_MAX_INFO_VAL, val, &flag), MPI_SUCCESS);
    CHECK(flag && atoi(val) == 1);
    CHECK_EQ(MPI_Info_free(&got), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_get_pset_info(s, "mpi://nowhere", &got), MPI_ERR_ARG);
    CHECK_EQ(MPI_Group_from_session_pset(s, NULL, NULL), MPI_ERR_ARG);

    wsize = size;
    check_comm(s, "mpi://WORLD", wsize, rank);
    check_comm(s, "mpi://SELF", 1, 0);

    /* A second session; the first ends, the library stays up for the
     * second, whose communicators work; a third comes and goes. */
    CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2), MPI_SUCCESS);
    CHECK(s2 != s);
    CHECK_EQ(MPI_Session_finalize(&s), MPI_SUCCESS);
    CHECK_EQ(s, MPI_SESSION_NULL);
    check_comm(s2, "mpi://WORLD", wsize, rank);
    CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_finalize(&s3), MPI_SUCCESS);
    check_comm(s2, "mpi://world", wsize, rank);
    CHECK_EQ(MPI_Session_finalize(&s2), MPI_SUCCESS);

    /* The library is down: not MPI_Finalize's doing, and not started
     * again (the error comes back to the handler given). */
    CHECK_EQ(MPI_Finalized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s), MPI_ERR_OTHER);
    CHECK_EQ(s, MPI_SESSION_NULL);
    /* Info objects outlive it. */
    CHECK_EQ(MPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, val, &flag), MPI_SUCCESS);
    CHECK(flag && strcmp(val, "MPI_THREAD_SERIALIZED") == 0);
    CHECK_EQ(MPI_Info_free(&info), MPI_SUCCESS);
}

static void test_mixed(void)
{
    MPI_Session s = MPI_SESSION_NULL, bad = MPI_SESSION_NULL, stale, old;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    int flag = -1, n = -1, provided = -1, r = -1, sum = -1;

    CHECK_EQ(MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* No memory for a session: refused, and MPI_Init's MPI goes on. */
    onic_mem_fail_after(0);
    CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad), MPI_ERR_NO_MEM);
    onic_mem_fail_after(-1);
    CHECK_EQ(bad, MPI_SESSION_NULL);
    CHECK_EQ(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(sum, size * (size - 1) / 2);
    CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s), MPI_SUCCESS);

    /* No session: the error goes to MPI_COMM_WORLD's handler. */
    CHECK_EQ(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    CHECK_EQ(MPI_Session_get_num_psets(MPI_COMM_WORLD, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &stale), MPI_SUCCESS);
    old = stale;
    CHECK_EQ(MPI_Session_finalize(&stale), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_finalize(&old), MPI_ERR_SESSION); /* ended already */
    CHECK_EQ(MPI_Session_finalize(NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &bad), MPI_ERR_ARG);
    CHECK_EQ(MPI_Session_init(MPI_COMM_WORLD, MPI_ERRORS_RETURN, &bad), MPI_ERR_ARG);
    CHECK_EQ(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK_EQ(MPI_Info_set(info, "thread_level", "MPI_THREAD_SOMETIMES"), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_init(info, MPI_ERRORS_RETURN, &bad), MPI_ERR_ARG);
    CHECK_EQ(bad, MPI_SESSION_NULL);
    CHECK_EQ(MPI_Info_free(&info), MPI_SUCCESS);

    /* The session's handler: asked, set, called. */
    CHECK_EQ(MPI_Session_get_errhandler(s, &eh), MPI_SUCCESS);
    CHECK_EQ(eh, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Session_set_errhandler(s, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Session_set_errhandler(s, MPI_ERRORS_ARE_FATAL), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_get_errhandler(s, &eh), MPI_SUCCESS);
    CHECK_EQ(eh, MPI_ERRORS_ARE_FATAL);
    CHECK_EQ(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_call_errhandler(s, MPI_ERR_OTHER), MPI_SUCCESS);
    CHECK_EQ(MPI_Session_f2c(MPI_Session_c2f(s)), s);
    CHECK_EQ(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, NULL, NULL), MPI_ERR_ARG);

    /* A communicator from a group: its errors to the handler it was given;
     * a bad group, tag or handler refused before anything is agreed. */
    CHECK_EQ(MPI_Group_from_session_pset(s, "mpi://WORLD", &g), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_create_from_group(MPI_GROUP_NULL, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &c), MPI_ERR_GROUP);
    CHECK_EQ(MPI_Comm_create_from_group(g, "", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
             MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_create_from_group(g, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
             MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_create_from_group(g, "t", MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &c),
             MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_create_from_group(g, "t", MPI_COMM_WORLD, MPI_ERRORS_RETURN, &c),
             MPI_ERR_ARG); /* not an info object */
    CHECK_EQ(MPI_Comm_create_from_group(g, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL),
             MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_create_from_group(g, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Group_free(&g), MPI_SUCCESS);

    /* MPI_Finalize ends what MPI_Init began; the session keeps MPI up. */
    CHECK_EQ(MPI_Finalize(), MPI_SUCCESS);
    CHECK_EQ(MPI_Finalized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK_EQ(MPI_Initialized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    if (c != MPI_COMM_NULL) {
        CHECK_EQ(MPI_Comm_rank(c, &r), MPI_SUCCESS);
        CHECK_EQ(r, rank);
        CHECK_EQ(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
        CHECK_EQ(sum, size * (size - 1) / 2);
        CHECK_EQ(MPI_Comm_free(&c), MPI_SUCCESS);
    }
    CHECK_EQ(MPI_Session_finalize(&s), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    const char *mode = argc == 2 ? argv[1] : "";
    char *r = getenv("ONIC_RANK"), *n = getenv("ONIC_SIZE");

    /* The rank and size for the messages, before MPI knows them. */
    rank = r != NULL ? atoi(r) : 0;
    size = n != NULL ? atoi(n) : 1;
    mpi_prog = "mpi_session";
    signal(SIGALRM, mpi_stage_expired);
    mpi_stage(mode);
    if (strcmp(mode, "only") == 0) {
        test_only();
    } else if (strcmp(mode, "mixed") == 0) {
        test_mixed();
    } else {
        fprintf(stderr, "usage: mpi_session only|mixed\n");
        return 2;
    }
    alarm(0);
    if (failed == 0 && rank == 0)
        printf("mpi_session %s: ok at %d processes\n", mode, size);
    return failed != 0;
}
