/* What MPI_Finalize does before it finalizes, and the smaller calls around
 * it, through onicrun at any number of processes: the delete callbacks of
 * the attributes on MPI_COMM_SELF run first, the last set first, while MPI
 * still works (MPI_Finalized says no), then MPI_COMM_WORLD's the same way;
 * a freed communicator's attributes go the last set first too; MPI-1's
 * MPI_NULL_COPY_FN and MPI_DUP_FN; MPI_Is_thread_main, true in the thread
 * that called MPI_Init and false in another. Prints "PASS" and exits 0, or
 * names each failed check and exits 1. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int fails;

#define CHECK(c) \
    do { \
        if (!(c)) { \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
            fails++; \
        } \
    } while (0)

/* The order the delete callbacks ran in: the value of each attribute. */
static intptr_t order[16];
static int norder, finalized_seen;

static int record_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    int flag = 1, r = -1;

    (void)keyval;
    (void)extra;
    MPI_Finalized(&flag);
    finalized_seen |= flag;
    /* MPI works still: a call on the communicator being deleted. */
    CHECK(MPI_Comm_rank(comm, &r) == MPI_SUCCESS && r >= 0);
    if (norder < 16)
        order[norder++] = (intptr_t)val;
    return MPI_SUCCESS;
}

static void *other_thread(void *arg)
{
    int *flag = arg;
    MPI_Is_thread_main(flag);
    return NULL;
}

int main(int argc, char **argv)
{
    int key[4], flag = 0, provided;
    MPI_Comm d, dd;
    pthread_t t;
    intptr_t v;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    CHECK(MPI_Is_thread_main(&flag) == MPI_SUCCESS && flag == 1);
    flag = -1;
    if (pthread_create(&t, NULL, other_thread, &flag) == 0) {
        pthread_join(t, NULL);
        CHECK(flag == 0);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Is_thread_main(NULL) == MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* MPI-1's names: MPI_DUP_FN copies, MPI_NULL_COPY_FN does not. */
    MPI_Comm_create_keyval(MPI_DUP_FN, record_delete, &key[0], NULL);
    MPI_Comm_create_keyval(MPI_NULL_COPY_FN, record_delete, &key[1], NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_NULL_DELETE_FN, &key[2], NULL);
    MPI_Comm_create_keyval(MPI_NULL_COPY_FN, record_delete, &key[3], NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_attr(d, key[1], (void *)(intptr_t)1);
    MPI_Comm_set_attr(d, key[0], (void *)(intptr_t)2);
    MPI_Comm_set_attr(d, key[2], (void *)(intptr_t)3);
    MPI_Comm_dup(d, &dd);
    CHECK(MPI_Comm_get_attr(dd, key[0], &v, &flag) == MPI_SUCCESS && flag == 1 && v == 2);
    MPI_Comm_get_attr(dd, key[1], &v, &flag);
    CHECK(flag == 0);
    MPI_Comm_free(&dd);
    CHECK(norder == 1 && order[0] == 2);
    /* Freed: the last set first (key[2]'s has no callback). */
    norder = 0;
    MPI_Comm_free(&d);
    CHECK(norder == 2 && order[0] == 2 && order[1] == 1);

    /* At MPI_Finalize: SELF's in the reverse order of setting, then
     * WORLD's. Setting a value again deletes the old one (its callback
     * runs now) and makes the new one the last set. */
    norder = 0;
    MPI_Comm_set_attr(MPI_COMM_WORLD, key[0], (void *)(intptr_t)20);
    MPI_Comm_set_attr(MPI_COMM_SELF, key[3], (void *)(intptr_t)10);
    MPI_Comm_set_attr(MPI_COMM_SELF, key[1], (void *)(intptr_t)11);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key[1], (void *)(intptr_t)21);
    MPI_Comm_set_attr(MPI_COMM_SELF, key[0], (void *)(intptr_t)12);
    MPI_Comm_set_attr(MPI_COMM_SELF, key[3], (void *)(intptr_t)13); /* deletes 10 */
    CHECK(norder == 1 && order[0] == 10);
    norder = 0;
    /* The keyvals freed: their values stay until their communicators go. */
    for (int i = 0; i < 4; i++)
        MPI_Comm_free_keyval(&key[i]);
    MPI_Finalize();
    CHECK(norder == 5);
    CHECK(order[0] == 13 && order[1] == 12 && order[2] == 11);
    CHECK(order[3] == 21 && order[4] == 20);
    CHECK(finalized_seen == 0);
    if (fails == 0)
        printf("PASS\n");
    return fails != 0;
}
