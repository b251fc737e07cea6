#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int onic_proc_alive(pid_t pid)
{
    char path[32], buf[512];
    const char *paren;
    ssize_t n;
    int fd;

    if (pid <= 0)
        return 0;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return errno != ENOENT; /* gone between the two looks, or no /proc */
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 1;
    buf[n] = '\0';
    /* "pid (comm) S ...": the command may hold any byte, ')' too, so the
     * state follows the last ')'. */
    if ((paren = strrchr(buf, ')')) == NULL || paren[1] != ' ')
        return 1;
    return paren[2] != 'Z' && paren[2] != 'X';
}
