/* Corrupt shared memory must stop the job: run through onicrun -n 2 by
 * test_shm_corrupt.sh, with shm_poke (an outside process) writing into
 * rank 0's region, in the lane rank 1 sends on.
 *
 *   shm_corrupt_job SCENARIO SHM_POKE
 *
 * Rank 0 sends rank 1 its pid, then (but for replay) computes for 0.3 s
 * without calling onic, so what rank 1 wrote waits in the lane while
 * shm_poke changes it; then it waits for messages. Rank 1, by scenario:
 *
 *   garbage, length, slots, kind, assist: sends one message (an 8-byte
 *       header, no payload), runs shm_poke on it,
 *       and waits for an answer that cannot come (rank 0 must find the
 *       header malformed; for garbage, whose ready word is gone, rank 1
 *       finds its message overwritten while it waits)
 *   gap:     runs shm_poke, which stamps the head's slot a lap ahead, and
 *       waits (rank 0, waiting, finds the gap)
 *   replay:  sends one message and waits for rank 0's answer (rank 0 polls
 *       from then on), runs shm_poke, which forges the next entry, then
 *       sends again (rank 1 finds its slot already stamped)
 *   credits: runs shm_poke, which inflates the consumed count, then sends
 *       more than a ring's worth (rank 1 finds credits it never sent)
 *
 * Either way the job must be stopped by the process that found the
 * corruption: if a rank is still running after 5 s, it says so and exits 0,
 * which the test counts as a failure. Exit status 2: not run by onicrun or
 * the endpoint did not open. */
#include "base/clock.h"
#include "base/config.h"
#include "xport/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct job {
    uint32_t got;       /* messages delivered */
    uint64_t last;      /* the last one's first 8 bytes */
} job_t;

static void on_message(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                       const void *payload, size_t len)
{
    job_t *j = arg;

    (void)src;
    (void)payload;
    (void)len;
    j->got++;
    if (user_len >= sizeof(j->last))
        memcpy(&j->last, user_hdr, sizeof(j->last));
}

/* Wait for the count of delivered messages to reach n, for at most s seconds. */
static int wait_for(onic_xport_t *x, job_t *j, uint32_t n, double s)
{
    uint64_t end = onic_time_ns() + (uint64_t)(s * 1e9);

    while (j->got < n && onic_time_ns() < end)
        onic_xport_wait(x, 10000000);
    return j->got >= n;
}

static void poke(const char *tool, const char *scenario, uint64_t pid)
{
    char pidbuf[32];
    pid_t child;
    int st;

    snprintf(pidbuf, sizeof(pidbuf), "%llu", (unsigned long long)pid);
    child = fork();
    if (child == 0) {
        execl(tool, tool, scenario, pidbuf, "0", "1", (char *)NULL);
        _exit(127);
    }
    if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
        WEXITSTATUS(st) != 0) {
        fprintf(stderr, "shm_corrupt_job: shm_poke %s failed\n", scenario);
        /* 77: the kernel would not let it reach rank 0 -- the test skips. */
        exit(child > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 77 ? 77 : 3);
    }
}

int main(int argc, char **argv)
{
    onic_config_t cfg;
    onic_xport_params_t p = {0};
    onic_xport_t *x;
    job_t j = {0};
    const char *scenario = argc > 2 ? argv[1] : "", *tool = argc > 2 ? argv[2] : "";
    uint64_t word = 0;

    if (argc != 3 || onic_config_read(&cfg) != ONIC_OK || cfg.jobid[0] == '\0') {
        fprintf(stderr, "usage: onicrun -n 2 shm_corrupt_job SCENARIO SHM_POKE\n");
        return 2;
    }
    p.recv_cb = on_message;
    p.cb_arg = &j;
    p.cfg = &cfg;
    if (onic_xport_open(&p, &x) != ONIC_OK || onic_xport_size(x) != 2)
        return 2;
    if (onic_xport_rank(x) == 0) {
        word = (uint64_t)getpid();
        if (onic_xport_send(x, 1, &word, sizeof(word), NULL, 0) != ONIC_OK)
            return 1;
        if (strcmp(scenario, "replay") != 0)
            usleep(300000); /* not in onic: the lane holds what rank 1 wrote */
        /* Answer the first message (replay waits for it); then wait. */
        if (wait_for(x, &j, 1, 5.0))
            onic_xport_send(x, 1, &word, sizeof(word), NULL, 0);
        wait_for(x, &j, 1000000, 5.0);
    } else {
        uint64_t pid;
        if (!wait_for(x, &j, 1, 10.0))
            return 1;
        pid = j.last;
        if (strcmp(scenario, "gap") == 0) {
            poke(tool, scenario, pid);
        } else if (strcmp(scenario, "credits") == 0) {
            poke(tool, scenario, pid);
            uint64_t slots = onic_config_shm_ring_slots(&cfg, onic_xport_size(x));
            for (uint64_t i = 0; i < 4 * slots; i++)
                onic_xport_send(x, 0, &i, sizeof(i), NULL, 0);
        } else if (strcmp(scenario, "replay") == 0) {
            onic_xport_send(x, 0, &word, sizeof(word), NULL, 0);
            wait_for(x, &j, 2, 5.0); /* rank 0 took it and now polls */
            poke(tool, scenario, pid);
            word = 2;
            onic_xport_send(x, 0, &word, sizeof(word), NULL, 0);
        } else {
            onic_xport_send(x, 0, &word, sizeof(word), NULL, 0);
            poke(tool, scenario, pid);
        }
        wait_for(x, &j, 1000000, 5.0);
    }
    fprintf(stderr, "shm_corrupt_job: rank %u still runs after scenario %s: nobody stopped "
            "the job\n", onic_xport_rank(x), scenario);
    onic_xport_close(x);
    return 0;
}
