/* The MPI test programs' checks: a failed one is counted and printed with
 * the rank, file and line; each program exits non-zero if any failed.
 * rank and size are the program's own, set after MPI_Init. */
#ifndef ONIC_TESTS_MPI_CHECK_H
#define ONIC_TESTS_MPI_CHECK_H

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* A stage of a program that runs tests by name (each test, or a part of one
 * that calls mpi_stage) has this long: a call that never completes fails
 * the job at once, naming the stage, instead of at onicrun's timeout. */
#define MPI_STAGE_SECONDS 30

static const char *mpi_prog = "mpi", *mpi_stage_name = "MPI_Init";
/* The thread level mpi_run_named asks MPI_Init_thread for. */
static int mpi_thread_required = MPI_THREAD_SINGLE;

static inline void mpi_stage_expired(int sig)
{
    char msg[256];
    int n = snprintf(msg, sizeof(msg), "%s: rank %d: %s has not returned after %d s: a call "
                     "that never completes\n", mpi_prog, rank, mpi_stage_name, MPI_STAGE_SECONDS);

    (void)sig;
    if (write(2, msg, n > 0 ? (size_t)n : 0) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

/* The next stage starts: its name for the message, its time from now. */
static inline void mpi_stage(const char *name)
{
    mpi_stage_name = name;
    alarm(MPI_STAGE_SECONDS);
}

/* A part of a test run as a stage of its own. */
#define MPI_STAGE(_fn) (mpi_stage(#_fn), _fn())

/* A named test of a program that runs them by name. */
typedef struct mpi_named_test {
    const char *name;
    void      (*fn)(void);
} mpi_named_test_t;

/* main() of such a program: MPI_Init, the tests argv names ("all": every
 * one; an unknown name lists them and exits 2), each a stage (above), each
 * rank's failed checks summed; the exit status is 0 only if none failed. */
static inline int mpi_run_named(const char *prog, const mpi_named_test_t *tests, size_t n,
                                int argc, char **argv)
{
    int total = 0;

    mpi_prog = prog;
    signal(SIGALRM, mpi_stage_expired);
    int provided;

    mpi_stage("MPI_Init");
    MPI_Init_thread(&argc, &argv, mpi_thread_required, &provided);
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
                mpi_stage(tests[t].name);
                tests[t].fn();
                if (rank == 0)
                    printf("%-8s %s (%.2f s)\n", tests[t].name, failed ? "FAILED" : "ok",
                           MPI_Wtime() - t0);
                fflush(stdout);
            }
    mpi_stage("the sum of failed checks and MPI_Finalize");
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failed checks over %d processes\n", total ? "FAIL" : "PASS", total, size);
    MPI_Finalize();
    alarm(0);
    return total != 0;
}

#endif
