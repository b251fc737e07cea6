#include "base/log.h"
#include "base/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};
static int log_level = -1; /* -1: not read from ONIC_LOG yet */

int onic_log_enabled(onic_log_level_t level)
{
    if (__builtin_expect(log_level < 0, 0))
        log_level = (int)onic_config_log_level();
    return (int)level <= log_level;
}

void onic_log_set_level(onic_log_level_t level)
{
    log_level = (int)level;
}

void onic_log_emit(onic_log_level_t level, const char *file, int line, const char *fmt, ...)
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
