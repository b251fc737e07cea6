/* Logging: lowercase messages, logged where the error is first seen, naming
 * the object and the value. The level comes from ONIC_LOG; levels above
 * ONIC_LOG_MAX are compiled out so trace calls cost nothing in release. */
#ifndef ONIC_BASE_LOG_H
#define ONIC_BASE_LOG_H

typedef enum onic_log_level {
    ONIC_LOG_ERROR = 0,
    ONIC_LOG_WARN  = 1,
    ONIC_LOG_INFO  = 2,
    ONIC_LOG_DEBUG = 3,
    ONIC_LOG_TRACE = 4
} onic_log_level_t;

#ifndef ONIC_LOG_MAX
#define ONIC_LOG_MAX ONIC_LOG_DEBUG
#endif

int  onic_log_enabled(onic_log_level_t level);
void onic_log_set_level(onic_log_level_t level);
void onic_log_emit(onic_log_level_t level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define onic_log(_lvl, ...) \
    do { \
        if ((_lvl) <= ONIC_LOG_MAX && onic_log_enabled(_lvl)) \
            onic_log_emit((_lvl), __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

/* Ending the whole job on a fatal error: the bootstrap of a launcher that
 * must be told (PMIx, PMI-1) registers how while it is open; layers that
 * know nothing of launchers (MPI) call onic_log_abort_job before exiting.
 * Does nothing when no such bootstrap is open. */
/* This process's rank in its job, once its launcher said it (src/boot
 * sets it as soon as it knows); -1 before. For messages that must name
 * the rank before the layers above know it. */
void onic_log_rank_set(int rank);
int  onic_log_rank(void);

void onic_log_abort_set(void (*fn)(int code, const char *msg));
void onic_log_abort_job(int code, const char *msg);

/* The exit status of a process that found corrupt data in memory another
 * process writes (a shared-memory lane, bounce buffer, or the onload
 * engine's segments): sysexits' EX_DATAERR. */
#define ONIC_EXIT_CORRUPT 65

/* Fail-stop: print one error line (whatever ONIC_LOG says), tell the
 * launcher to end the job (onic_log_abort_job), and exit with code at
 * once, as a dead rank would: no handler, no atexit, nothing read from the
 * shared memory again. onicrun then stops the other processes. */
void onic_log_fail_stop(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), cold, noreturn));

#define onic_error(...) onic_log(ONIC_LOG_ERROR, __VA_ARGS__)
#define onic_warn(...)  onic_log(ONIC_LOG_WARN, __VA_ARGS__)
#define onic_info(...)  onic_log(ONIC_LOG_INFO, __VA_ARGS__)
#define onic_debug(...) onic_log(ONIC_LOG_DEBUG, __VA_ARGS__)
#define onic_trace(...) onic_log(ONIC_LOG_TRACE, __VA_ARGS__)

#endif
