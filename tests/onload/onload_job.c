/* Processes and their onload engine, through onicrun --onload.
 *
 *   onload_job ping COUNT   every rank sends COUNT pings of varying sizes,
 *                           as many in flight as its command ring holds,
 *                           taking pongs whenever the ring is full, and
 *                           checks every pong, in order; then the engine's
 *                           command counter covers them
 *   onload_job killed       rank 0 kills the engine with SIGKILL; every
 *                           rank blocked waiting for an event must get an
 *                           error within 5 s, not hang (SIGTERM from
 *                           onicrun is ignored so the error can be seen) */
#include "base/clock.h"
#include "base/config.h"
#include "onload/onload.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t ping_len(uint64_t seq)
{
    return 8 + (size_t)(seq * 2654435761u % (ONIC_ONLOAD_REC - 16 + 1));
}

static void ping_fill(uint8_t *buf, uint64_t seq, size_t len)
{
    memcpy(buf, &seq, sizeof(seq));
    for (size_t i = sizeof(seq); i < len; i++)
        buf[i] = (uint8_t)(seq * 13 + i);
}

static int ping_check(const uint8_t *buf, size_t len, uint64_t seq)
{
    uint8_t want[ONIC_ONLOAD_REC];

    if (len != ping_len(seq))
        return 0;
    ping_fill(want, seq, len);
    return memcmp(buf, want, len) == 0;
}

static int run_ping(const onic_config_t *cfg, onic_onload_client_t *c, uint64_t count)
{
    uint8_t buf[ONIC_ONLOAD_REC];
    uint64_t sent = 0, got = 0, full = 0;
    onic_onload_status_t st;

    while (got < count) {
        uint32_t kind;
        size_t len;
        onic_status_t s;

        if (sent < count) {
            size_t l = ping_len(sent);
            ping_fill(buf, sent, l);
            s = onic_onload_client_push(c, ONIC_ONLOAD_CMD_PING, buf, l);
            if (s == ONIC_OK) {
                sent++;
                continue;
            }
            if (s != ONIC_ERR_NO_RESOURCE) {
                fprintf(stderr, "rank %u: push %llu: %s\n", cfg->rank, (unsigned long long)sent,
                        onic_status_str(s));
                return 1;
            }
            full++;
            s = onic_onload_client_poll(c, &kind, buf, &len);
            if (s == ONIC_ERR_NO_ELEM)
                continue; /* the engine has not answered yet: retry the push */
        } else {
            s = onic_onload_client_wait(c, &kind, buf, &len, 10000000000ull);
        }
        if (s != ONIC_OK || kind != ONIC_ONLOAD_EVT_PONG || !ping_check(buf, len, got)) {
            fprintf(stderr, "rank %u: pong %llu: %s, kind %u, len %zu\n", cfg->rank,
                    (unsigned long long)got, onic_status_str(s), kind, len);
            return 1;
        }
        got++;
    }
    if (onic_onload_status_read(cfg->jobid, &st) != ONIC_OK || st.commands < count) {
        fprintf(stderr, "rank %u: the engine's command count is below %llu\n", cfg->rank,
                (unsigned long long)count);
        return 1;
    }
    printf("rank %u: %llu pings answered in order (command ring full %llu times)\n", cfg->rank,
           (unsigned long long)count, (unsigned long long)full);
    return 0;
}

static int run_killed(const onic_config_t *cfg, onic_onload_client_t *c)
{
    uint8_t buf[ONIC_ONLOAD_REC];
    onic_onload_status_t st;
    uint64_t t0;
    uint32_t kind;
    size_t len;
    onic_status_t s;

    if (cfg->rank == 0) {
        if (onic_onload_status_read(cfg->jobid, &st) != ONIC_OK)
            return 1;
        kill((pid_t)st.pid, SIGKILL);
    }
    t0 = onic_time_ns();
    /* Nothing will come: only the engine's death ends this wait. */
    s = onic_onload_client_wait(c, &kind, buf, &len, 5000000000ull);
    printf("rank %u: waiting for an event: %s after %llu ms\n", cfg->rank, onic_status_str(s),
           (unsigned long long)((onic_time_ns() - t0) / 1000000));
    fflush(stdout);
    return s == ONIC_ERR_IO ? 0 : 1;
}

int main(int argc, char **argv)
{
    onic_config_t cfg;
    onic_onload_client_t *c;
    onic_status_t s;
    int rc;

    if (argc < 2 || onic_config_read(&cfg) != ONIC_OK)
        return 2;
    if (strcmp(argv[1], "killed") == 0)
        signal(SIGTERM, SIG_IGN);
    s = onic_onload_client_open(&cfg, &c);
    if (s != ONIC_OK) {
        printf("rank %u: cannot reach the engine: %s\n", cfg.rank, onic_status_str(s));
        return 1;
    }
    if (strcmp(argv[1], "ping") == 0 && argc == 3)
        rc = run_ping(&cfg, c, strtoull(argv[2], NULL, 10));
    else if (strcmp(argv[1], "killed") == 0)
        rc = run_killed(&cfg, c);
    else
        rc = 2;
    onic_onload_client_close(c);
    return rc;
}
