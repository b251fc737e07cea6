/* onic-engine: the onload engine of one job on this node. onicrun --onload
 * starts it (with ONIC_JOBID set and pinned to its core) before the job's
 * processes and stops it with SIGTERM after them, setting ONIC_ONLOAD_CORE
 * to the core it was pinned to; it is not meant to be run by hand. */
#include "base/config.h"
#include "base/log.h"
#include "onload/onload.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    onic_config_t cfg;
    sigset_t set;

    if (argc > 1) {
        fprintf(stderr, "usage: %s\nthe onload engine of one job; onicrun --onload starts it\n",
                argv[0]);
        return strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    if (onic_config_read(&cfg) != ONIC_OK)
        return 2;
    /* Taken synchronously in the engine's loop: no handler, no race. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* onicrun sets ONIC_ONLOAD_CORE to the core it pinned us to. */
    return onic_onload_engine_run(&cfg) == ONIC_OK ? 0 : 1;
}
