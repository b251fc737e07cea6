#ifndef ONIC_BASE_PROC_H
#define ONIC_BASE_PROC_H

#include <sys/types.h>

/* Whether process pid still runs: 0 once it has exited, also while it
 * waits as a zombie for its parent (which kill(pid, 0) passes) -- its
 * state in /proc/<pid>/stat is then Z or X. Where /proc cannot be read,
 * only kill(pid, 0) decides. */
int onic_proc_alive(pid_t pid);

#endif
