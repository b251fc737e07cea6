/* The MPI test programs' checks: a failed one is counted and printed with
 * the rank, file and line; each program exits non-zero if any failed.
 * rank and size are the program's own, set after MPI_Init. */
#ifndef ONIC_TESTS_MPI_CHECK_H
#define ONIC_TESTS_MPI_CHECK_H

#include <stdio.h>

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

#endif
