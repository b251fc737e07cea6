/* The MPI test programs' checks: a failed one is counted and printed with
 * the rank, file and line; each program exits non-zero if any failed.
 * rank and size are the program's own, set after MPI_Init. */
#ifndef ONIC_TESTS_MPI_CHECK_H
#define ONIC_TESTS_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size, failed;

#define CHECK(_c) \
    do { \
        if (!(_c)) { \
            failed++; \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #_c); \
        } \
    } while (0)
#define CHECK_EQ(_a, _b) \
    do { \
        long long _x = (long long)(_a), _y = (long long)(_b); \
        if (_x != _y) { \
            failed++; \
            fprintf(stderr, "rank %d: %s:%d: %s == %s (%lld != %lld)\n", rank, __FILE__, \
                    __LINE__, #_a, #_b, _x, _y); \
        } \
    } while (0)

/* A named test of a program that runs them by name. */
typedef struct mpi_named_test {
    const char *name;
    void      (*fn)(void);
} mpi_named_test_t;

/* main() of such a program: MPI_Init, the tests argv names ("all": every
 * one; an unknown name lists them and exits 2), each rank's failed checks
 * summed; the exit status is 0 only if none failed. */
static inline int mpi_run_named(const char *prog, const mpi_named_test_t *tests, size_t n,
                                int argc, char **argv)
{
    int total = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        int known = strcmp(argv[a], "all") == 0;
        for (size_t t = 0; t < n; t++)
            known |= strcmp(argv[a], tests[t].name) == 0;
        if (!known) {
            if (rank == 0) {
                fprintf(stderr, "%s: unknown test \"%s\"; the tests are: all", prog, argv[a]);
                for (size_t t = 0; t < n; t++)
                    fprintf(stderr, " %s", tests[t].name);
                fprintf(stderr, "\n");
            }
            MPI_Finalize();
            return 2;
        }
    }
    if (argc < 2 && rank == 0)
        fprintf(stderr, "%s: no test named; running none\n", prog);
    for (int a = 1; a < argc; a++)
        for (size_t t = 0; t < n; t++)
            if (strcmp(argv[a], "all") == 0 || strcmp(argv[a], tests[t].name) == 0) {
                double t0 = MPI_Wtime();
                tests[t].fn();
                if (rank == 0)
                    printf("%-8s %s (%.2f s)\n", tests[t].name, failed ? "FAILED" : "ok",
                           MPI_Wtime() - t0);
                fflush(stdout);
            }
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failed checks over %d processes\n", total ? "FAIL" : "PASS", total, size);
    MPI_Finalize();
    return total != 0;
}

#endif
