/* The onload engine (paper 001, ProOnE): one process per node, on its own
 * core, started by onicrun before a job's processes and stopped after them.
 * This header is the layer's interface: the engine's status segment, which
 * onicrun and onic-info read, and the engine's main loop (tools/onic-engine.c).
 * The rings between the engine and each process are in ring.h.
 *
 * Today the engine runs, publishes its status and counters and sleeps on a
 * futex while there is no work; it does not serve Portals calls yet, and
 * PtlNIInit refuses to open an interface when ONIC_ONLOAD=1 (see
 * docs/architecture.md, "onload"). */
#ifndef ONIC_ONLOAD_ONLOAD_H
#define ONIC_ONLOAD_ONLOAD_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <onic/status.h>

#define ONIC_ONLOAD_STATUS_MAGIC   0x6f6e6c73u /* "onls" */
#define ONIC_ONLOAD_STATUS_VERSION 1u
#define ONIC_ONLOAD_NAME_MAX       64

typedef enum onic_onload_state {
    ONIC_ONLOAD_STARTING = 0,
    ONIC_ONLOAD_READY    = 1,  /* serving (onicrun starts the processes now) */
    ONIC_ONLOAD_STOPPED  = 2   /* left its loop; the segment is going away */
} onic_onload_state_t;

/* The engine's status segment, /onic-<jobid>-onload, mode 0600, written only
 * by the engine. Readers check magic, version and the mapping's size, and
 * use the counters only as numbers to show. */
typedef struct onic_onload_status {
    uint32_t magic;
    uint32_t version;
    uint32_t state;       /* onic_onload_state_t */
    int32_t  pid;
    uint32_t core;        /* the core it was pinned to; UINT32_MAX unbound */
    uint32_t pad0;
    uint64_t started_ns;  /* CLOCK_MONOTONIC */
    uint8_t  pad1[64 - 32];
    /* Bumped by the engine at least every 100 ms, busy or idle: a reader that
     * sees it stand still for long sees an engine that is stuck. */
    uint64_t heartbeat;
    uint64_t heartbeat_ns;
    uint8_t  pad2[64 - 16];
    uint64_t commands;    /* records taken from command rings */
    uint64_t matches;     /* arrivals the target side matched */
    uint64_t bytes;       /* bytes moved between processes */
    uint64_t busy_ns;     /* time spent with work to do */
    uint8_t  pad3[64 - 32];
    uint32_t wake;        /* futex word: bumped to wake a sleeping engine */
    uint32_t sleeping;
    uint8_t  pad4[64 - 8];
} onic_onload_status_t;

static_assert(sizeof(onic_onload_status_t) == 4 * 64, "the status segment is four lines");

/* "/onic-<jobid>-onload" into buf (ONIC_ONLOAD_NAME_MAX bytes). */
void onic_onload_status_name(const char *jobid, char *buf);

/* A copy of a job's engine status, read from its segment after checking it.
 * ONIC_ERR_NO_ELEM when the job has no engine segment, ONIC_ERR_IO when
 * the segment is not a status segment of this version. */
onic_status_t onic_onload_status_read(const char *jobid, onic_onload_status_t *status_p);

/* Whether the engine a status names is alive: its pid exists and its state
 * is READY. */
int onic_onload_status_alive(const onic_onload_status_t *status);

/* The engine: create the status segment for jobid, report READY, and serve
 * until SIGTERM, SIGINT or SIGHUP (the caller blocks them first). core is
 * what to publish as the engine's core. */
onic_status_t onic_onload_engine_run(const char *jobid, uint32_t core);

#endif
