#include "base/log.h"
#include "base/config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};
/* -1: not read from ONIC_LOG yet. Threads that race to read it all read the
 * same value, so relaxed atomics suffice. */
static _Atomic int log_level = -1;

__attribute__((cold, noinline)) int onic_log_enabled(onic_log_level_t level)
{
    int cur = atomic_load_explicit(&log_level, memory_order_relaxed);

    if (__builtin_expect(cur < 0, 0)) {
        cur = (int)onic_config_log_level();
        atomic_store_explicit(&log_level, cur, memory_order_relaxed);
    }
    return (int)level <= cur;
}

void onic_log_set_level(onic_log_level_t level)
{
    atomic_store_explicit(&log_level, (int)level, memory_order_relaxed);
}

__attribute__((cold, noinline)) void onic_log_emit(onic_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    int saved_errno = errno; /* keep %m meaningful */
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    errno = saved_errno;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (level >= ONIC_LOG_DEBUG)
        fprintf(stderr, "onic[%d] %s: %s (%s:%d)\n", (int)getpid(), level_names[level], msg,
                file, line);
    else
        fprintf(stderr, "onic[%d] %s: %s\n", (int)getpid(), level_names[level], msg);
    errno = saved_errno;
}

static _Atomic int log_rank = -1;

void onic_log_rank_set(int rank)
{
    atomic_store_explicit(&log_rank, rank, memory_order_relaxed);
}

int onic_log_rank(void)
{
    return atomic_load_explicit(&log_rank, memory_order_relaxed);
}

static void (*log_abort_fn)(int code, const char *msg);

void onic_log_abort_set(void (*fn)(int code, const char *msg))
{
    log_abort_fn = fn;
}

__attribute__((cold, noinline)) void onic_log_abort_job(int code, const char *msg)
{
    void (*fn)(int, const char *) = log_abort_fn;

    log_abort_fn = NULL; /* once */
    if (fn != NULL)
        fn(code, msg);
}

__attribute__((cold, noinline, noreturn)) void onic_log_fail_stop(int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "onic[%d] error: %s\n", (int)getpid(), msg);
    fflush(stderr);
    fflush(stdout);
    onic_log_abort_job(code, msg);
    _exit(code);
}
