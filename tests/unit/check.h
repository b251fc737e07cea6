/* Minimal assertions for onic's in-process tests: a failed CHECK prints where
 * and what, the test goes on, and check_summary() closes with the
 * "N passed, N failed" line ctest logs and the exit status. */
#ifndef ONIC_TEST_CHECK_H
#define ONIC_TEST_CHECK_H

#include <stdio.h>

static unsigned check_passed, check_failed;

#define CHECK(_cond) \
    do { \
        if (_cond) { \
            check_passed++; \
        } else { \
            check_failed++; \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #_cond); \
        } \
    } while (0)

#define CHECK_EQ(_a, _b) \
    do { \
        long long _va = (long long)(_a), _vb = (long long)(_b); \
        if (_va == _vb) { \
            check_passed++; \
        } else { \
            check_failed++; \
            fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", __FILE__, \
                    __LINE__, #_a, #_b, _va, _vb); \
        } \
    } while (0)

/* For helpers called many times: a failure counts, a pass does not, so the
 * total says how many things the tests themselves checked. */
#define REQUIRE(_cond) \
    do { \
        if (!(_cond)) { \
            check_failed++; \
            fprintf(stderr, "%s:%d: required: %s\n", __FILE__, __LINE__, #_cond); \
        } \
    } while (0)

static inline int check_summary(const char *name)
{
    printf("%s: %u passed, %u failed\n", name, check_passed, check_failed);
    return check_failed == 0 ? 0 : 1;
}

#endif
