/* Minimal assertions for onic's in-process tests: a failed CHECK prints where
 * and what, the test goes on, and check_summary() closes with the
 * "N passed, N failed" line ctest logs and the exit status. */
#ifndef ONIC_TEST_CHECK_H
#define ONIC_TEST_CHECK_H

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* Catch what is written to stderr from here (into *tmp_p; *saved_p keeps
 * the real one) ... */
static inline void check_stderr_catch(FILE **tmp_p, int *saved_p)
{
    *tmp_p = tmpfile();
    *saved_p = dup(2);
    REQUIRE(*tmp_p != NULL && *saved_p >= 0);
    fflush(stderr);
    REQUIRE(dup2(fileno(*tmp_p), 2) == 2);
}

/* ... to here, into out (a string). */
static inline void check_stderr_caught(FILE *tmp, int saved, char *out, size_t outlen)
{
    size_t n;

    fflush(stderr);
    REQUIRE(dup2(saved, 2) == 2);
    close(saved);
    rewind(tmp);
    n = fread(out, 1, outlen - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
}

/* A watchdog for tests that take well under a second: a call that never
 * returns (an endless walk inside the code under test, which the test
 * cannot bound from outside) fails the test, named, after `seconds`,
 * rather than running into ctest's timeout. Not a measure of speed: the
 * bound is a hundred times what the test needs on a loaded machine. */
static inline const char **check_watchdog_name(void)
{
    static const char *name = "test";
    return &name;
}

static inline void check_watchdog_fire(int sig)
{
    static const char msg[] = ": still running after the watchdog's limit (it needs well "
                              "under a second): a call that never returns\n";
    const char *name = *check_watchdog_name();

    (void)sig;
    if (write(2, name, strlen(name)) < 0 || write(2, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

static inline void check_watchdog(const char *name, unsigned seconds)
{
    *check_watchdog_name() = name;
    signal(SIGALRM, check_watchdog_fire);
    alarm(seconds);
}

static inline int check_summary(const char *name)
{
    printf("%s: %u passed, %u failed\n", name, check_passed, check_failed);
    return check_failed == 0 ? 0 : 1;
}

#endif
