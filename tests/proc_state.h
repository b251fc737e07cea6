/* The state of another process as /proc/PID/stat gives it (R, S, T for
 * stopped, Z for a zombie...), for the tests that watch one; 0 when it
 * cannot be read. */
#ifndef ONIC_TEST_PROC_STATE_H
#define ONIC_TEST_PROC_STATE_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

static inline char test_proc_state(pid_t pid)
{
    char path[64], buf[512], *paren;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    paren = strrchr(buf, ')'); /* after the command name, which may hold anything */
    return paren != NULL && paren[1] == ' ' ? paren[2] : 0;
}

#endif
