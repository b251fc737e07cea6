/* What the plain-MPI programs of the benchmark suite (bench/queue,
 * bench/rate, bench/overlap, bench/apps) share. Header-only and plain C11
 * + MPI, so every program builds unchanged with onicc, MPICH's mpicc and
 * Open MPI's mpicc.
 *
 * Every program prints, on rank 0, one CSV line per measured point:
 *
 *     test,p1,p2,p3,median,min,max
 *
 * p1..p3 are the point's parameters (numbers; what they mean is per test,
 * listed in each program's header and in bench/suite.py), median, min and
 * max are over the program's repetitions. Anything else goes to stderr. */
#ifndef ONIC_BENCH_SUITE_H
#define ONIC_BENCH_SUITE_H

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUITE_MAX_LIST 64
#define SUITE_MAX_REPS 1000

/* A comma-separated list of numbers, e.g. "0,10,100". */
typedef struct suite_list {
    int    n;
    double v[SUITE_MAX_LIST];
} suite_list_t;

/* Named options: --name value, each program declares what it takes. */
typedef struct suite_opt {
    const char   *name;
    const char   *help;
    suite_list_t *list;  /* a list option, or */
    double       *num;   /* a single number */
} suite_opt_t;

static inline int suite_list_parse(const char *s, suite_list_t *l)
{
    char *end;

    l->n = 0;
    while (*s != '\0') {
        if (l->n == SUITE_MAX_LIST)
            return -1;
        l->v[l->n++] = strtod(s, &end);
        if (end == s || (*end != ',' && *end != '\0'))
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return l->n > 0 ? 0 : -1;
}

static inline void suite_usage(const char *prog, const char *synopsis, const suite_opt_t *opts)
{
    fprintf(stderr, "usage: %s %s\n", prog, synopsis);
    for (const suite_opt_t *o = opts; o->name != NULL; o++)
        fprintf(stderr, "  --%-10s %s\n", o->name, o->help);
}

/* Parses argv[first..] against opts; on an error prints the usage (rank 0)
 * and aborts the job. */
static inline void suite_opts_parse(int argc, char **argv, int first, const char *synopsis,
                                    const suite_opt_t *opts, int rank)
{
    for (int i = first; i < argc; i++) {
        const suite_opt_t *o = opts;
        while (o->name != NULL && (strncmp(argv[i], "--", 2) != 0 || strcmp(argv[i] + 2, o->name)))
            o++;
        int ok = o->name != NULL && i + 1 < argc;
        if (ok && o->list != NULL)
            ok = suite_list_parse(argv[i + 1], o->list) == 0;
        else if (ok) {
            char *end;
            *o->num = strtod(argv[i + 1], &end);
            ok = end != argv[i + 1] && *end == '\0';
        }
        if (!ok) {
            if (rank == 0) {
                fprintf(stderr, "%s: bad or unknown option '%s'\n", argv[0], argv[i]);
                suite_usage(argv[0], synopsis, opts);
            }
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        i++;
    }
}

static inline int suite_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Prints "test,p1,p2,p3,median,min,max" for the n samples in v (sorted in
 * place). Rank 0 only. */
static inline void suite_print(const char *test, double p1, double p2, double p3, double *v, int n)
{
    qsort(v, (size_t)n, sizeof(v[0]), suite_cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    printf("%s,%.10g,%.10g,%.10g,%.6g,%.6g,%.6g\n", test, p1, p2, p3, med, v[0], v[n - 1]);
    fflush(stdout);
}

/* The application's computation: W microseconds of arithmetic that never
 * calls MPI, ended by the clock (so W means the same on every MPI). */
static inline double suite_compute(double us)
{
    static volatile double sink;
    double x = sink + 1.0, end = MPI_Wtime() + us * 1e-6;

    if (us <= 0)
        return x;
    do {
        for (int i = 0; i < 64; i++)
            x = x * 1.0000001 + 1e-9;
    } while (MPI_Wtime() < end);
    sink = x;
    return x;
}

/* Rank 0 reports a failed check on stderr and the job aborts. */
#define SUITE_CHECK(cond, ...)                                                        \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\n");                                                    \
            MPI_Abort(MPI_COMM_WORLD, 3);                                             \
        }                                                                             \
    } while (0)

#endif
