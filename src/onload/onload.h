/* The onload engine (paper 001, ProOnE): one process per node, on its own
 * core, started by onicrun before a job's processes and stopped after them.
 * This header is the layer's interface: the engine's status segment, which
 * onicrun and onic-info read; the engine's main loop (tools/onic-engine.c);
 * and the client side a process uses to reach its engine: a segment of its
 * own holding a command ring and an event ring (ring.h).
 *
 * The engine attaches processes, serves their command rings and answers on
 * their event rings, with the commands below, and runs their Portals
 * (serve.c; a process's side is client_ptl.c, the NI's onload back end, see
 * src/ptl/backend.h and docs/architecture.md, "onload"). */
#ifndef ONIC_ONLOAD_ONLOAD_H
#define ONIC_ONLOAD_ONLOAD_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <onic/status.h>
#include "base/config.h"

#define ONIC_ONLOAD_STATUS_MAGIC   0x6f6e6c73u /* "onls" */
#define ONIC_ONLOAD_STATUS_VERSION 1u
#define ONIC_ONLOAD_NAME_MAX       64

typedef enum onic_onload_state {
    ONIC_ONLOAD_STARTING = 0,
    ONIC_ONLOAD_READY    = 1,  /* serving (onicrun starts the processes now) */
    ONIC_ONLOAD_STOPPED  = 2   /* left its loop; the segment is going away */
} onic_onload_state_t;

/* The engine's status segment, nameless shared memory (base/shmfd.h) that
 * onicrun makes and passes to the engine and the processes, written by
 * the engine but for its bell, which processes ring. Readers check magic,
 * version and the mapping's size, and use the counters only as numbers to
 * show. */
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
    uint64_t procs;       /* processes attached now */
    uint64_t procs_seen;  /* processes ever attached */
    uint64_t refused;     /* processes refused (bad segment or commands) */
    uint8_t  pad3[64 - 56];
    uint32_t wake;        /* futex word: bumped to wake a sleeping engine */
    uint32_t sleeping;
    uint8_t  pad4[64 - 8];
} onic_onload_status_t;

static_assert(sizeof(onic_onload_status_t) == 4 * 64, "the status segment is four lines");

/* The slots of the command and event rings: fixed by the protocol. A record
 * takes one or more (ring.h). */
#define ONIC_ONLOAD_REC 128
/* The longest record either side sends (a Portals put with its data); a
 * reader that may get Portals records gives poll and wait this much room. */
#define ONIC_ONLOAD_MSG_MAX 8192

/* Commands (process to engine). */
typedef enum onic_onload_cmd {
    ONIC_ONLOAD_CMD_PING  = 1, /* answered by PONG with the same payload */
    ONIC_ONLOAD_CMD_BYE   = 2, /* the process detaches; no answer */
    ONIC_ONLOAD_CMD_REG   = 3, /* onic_onload_reg_t: others may pull from this range */
    ONIC_ONLOAD_CMD_DEREG = 4, /* onic_onload_reg_t (id only) */
    ONIC_ONLOAD_CMD_PULL  = 5  /* onic_onload_pull_t: move another process's
                                  registered data into this process's memory */
} onic_onload_cmd_t;

/* Events (engine to process). */
typedef enum onic_onload_evt {
    ONIC_ONLOAD_EVT_WELCOME = 1, /* the engine attached the process's segment */
    ONIC_ONLOAD_EVT_PONG    = 2,
    ONIC_ONLOAD_EVT_PULLED  = 3, /* onic_onload_done_t, to the puller: the data is in */
    ONIC_ONLOAD_EVT_READ    = 4, /* onic_onload_done_t, to the owner of the range */
    ONIC_ONLOAD_EVT_ERROR   = 5, /* onic_onload_done_t: a REG or DEREG failed */
    /* Where the engine cannot reach a process by CMA, the process copies
     * through its segment's bounce area itself, inside its poll and wait
     * (onic_onload_client_poll handles these; the caller never sees them),
     * and answers in the area's first line, not on its command ring: a
     * full command ring must never stop the copy that would drain it. */
    ONIC_ONLOAD_EVT_FILL    = 6, /* onic_onload_copy_t: copy from your range into the area */
    ONIC_ONLOAD_EVT_DRAIN   = 7  /* onic_onload_copy_t: copy from the area into your pull */
} onic_onload_evt_t;

typedef struct onic_onload_copy {
    uint64_t addr;
    uint64_t len;   /* at most ONIC_ONLOAD_CHUNK */
    uint64_t seq;   /* to write into the answer line when done */
} onic_onload_copy_t;

/* The first line of a bounce area: the process's answer to the last FILL
 * or DRAIN, status first, then seq (seq_cst, and the engine's bell). */
typedef struct onic_onload_answer {
    uint64_t seq;
    int32_t  status;
    uint8_t  pad[64 - 12];
} onic_onload_answer_t;

static_assert(sizeof(onic_onload_answer_t) == 64, "the answer is one line");

/* A bounce area: the answer line, then one chunk. */
#define ONIC_ONLOAD_BOUNCE (sizeof(onic_onload_answer_t) + ONIC_ONLOAD_CHUNK)

typedef struct onic_onload_reg {
    uint64_t id;    /* the process's own name for the range */
    uint64_t addr;
    uint64_t len;
} onic_onload_reg_t;

typedef struct onic_onload_pull {
    uint32_t src;       /* the rank that registered the range */
    uint32_t pad;
    uint64_t reg_id;
    uint64_t offset;    /* in the range */
    uint64_t len;
    uint64_t dst_addr;  /* in the puller's memory */
    uint64_t cookie;    /* echoed in PULLED */
} onic_onload_pull_t;

typedef struct onic_onload_done {
    uint64_t cookie;    /* PULLED: the pull's; READ: the range's id; ERROR: the id */
    uint64_t len;       /* bytes moved */
    int32_t  status;    /* onic_status_t */
    uint32_t peer;      /* PULLED: the source rank; READ: the puller */
} onic_onload_done_t;

/* Ranges one process may have registered at once. */
#define ONIC_ONLOAD_REGS 64
/* Pulls the engine moves at once (for all processes): each round of its loop
 * moves one chunk of each, so a large pull does not hold up the others. A
 * pull beyond that is answered PULLED with ONIC_ERR_NO_RESOURCE (retry). */
#define ONIC_ONLOAD_MOVES 64
#define ONIC_ONLOAD_CHUNK (256u << 10)

#define ONIC_ONLOAD_PROC_MAGIC 0x6f6e6c70u /* "onlp" */

/* The head of a process's segment, nameless shared memory the process
 * makes and hands to the engine over ONIC_ONLOAD_SOCK (SCM_RIGHTS, with
 * its credentials), written by the process before it does so; the engine
 * checks every field against the mapping before it uses one. */
typedef struct onic_onload_proc_hdr {
    uint32_t magic;
    uint32_t version;    /* ONIC_ONLOAD_STATUS_VERSION */
    uint32_t rank;
    int32_t  pid;
    uint64_t cmd_off, cmd_bytes;
    uint64_t evt_off, evt_bytes;
    /* Where this header is mapped in the process: the engine reads it there
     * by CMA, which proves pid is this process and that CMA works. 0: do
     * not use CMA on this process (ONIC_ONLOAD_RMA=copy). */
    uint64_t self_addr;
    uint64_t bounce_off;  /* ONIC_ONLOAD_BOUNCE bytes for the copy without CMA */
} onic_onload_proc_hdr_t;

static_assert(sizeof(onic_onload_proc_hdr_t) == 64, "a process segment's header is one line");

/* A copy of a job's engine status, read from its segment (the descriptor
 * onicrun passes as ONIC_ONLOAD_FD; 0: none) after checking it.
 * ONIC_ERR_NO_ELEM when there is no segment or the engine has not
 * published it yet, ONIC_ERR_IO when it is not a status segment of this
 * version. */
onic_status_t onic_onload_status_read(int fd, onic_onload_status_t *status_p);

/* Whether the engine a status names is alive: its pid runs (a zombie does
 * not, base/proc.h) and its state is READY. */
int onic_onload_status_alive(const onic_onload_status_t *status);

/* The engine: fill in the status segment onicrun made (ONIC_ONLOAD_FD),
 * report READY, take the processes' segments from ONIC_ONLOAD_SOCK, and
 * serve the job's cfg->size processes until SIGTERM, SIGINT or SIGHUP (the
 * caller blocks them first). cfg->onload_core is published as its core. */
onic_status_t onic_onload_engine_run(const onic_config_t *cfg);

/* --- the process's side --------------------------------------------- */

typedef struct onic_onload_client onic_onload_client_t;

/* Hand a process segment (a descriptor of nameless shared memory whose
 * header says rank) to the job's engine over ONIC_ONLOAD_SOCK and ring its
 * bell; the engine checks the sender's pid against the header's. For
 * onic_onload_client_open, and for tests that make a segment by hand. */
onic_status_t onic_onload_client_hand(const onic_config_t *cfg, int fd, uint32_t rank);

/* Reach the job's engine: create this process's segment (rings sized by
 * ONIC_ONLOAD_CMD_RECS and ONIC_ONLOAD_EVENT_RECS), ring the engine's bell
 * and wait for its WELCOME. ONIC_ERR_NO_ELEM if the job has no engine, ONIC_ERR_IO if it
 * dies or does not answer within 10 s. */
onic_status_t onic_onload_client_open(const onic_config_t *cfg, onic_onload_client_t **client_p);

/* The engine runs this process's Portals (client_ptl.c): its copies
 * through the bounce area are into and out of MDs, which the engine alone
 * knows, so they are not checked against REG and PULL. */
void onic_onload_client_serve_ptl(onic_onload_client_t *client);

/* Say BYE (if the engine still lives) and unmap. */
void onic_onload_client_close(onic_onload_client_t *client);

/* A command to the engine. ONIC_ERR_NO_RESOURCE when the command ring is
 * full (nothing written: take events, then retry), ONIC_ERR_INVALID_PARAM
 * when len exceeds ONIC_ONLOAD_MSG_MAX, ONIC_ERR_IO when the engine is gone
 * or the ring broken. REG, DEREG and PULL are also noted here, so that a
 * FILL or DRAIN from the engine is checked against what this process
 * exposed or asked for; with ONIC_ONLOAD_MOVES pulls awaiting PULLED, a
 * further PULL is ONIC_ERR_NO_RESOURCE too. */
onic_status_t onic_onload_client_push(onic_onload_client_t *client, uint32_t kind,
                                      const void *data, size_t len);

/* The same, for a command nothing waits on: a sleeping engine is not woken
 * for it (a wake-up costs the caller a system call and the engine ~15 us),
 * and runs it when something else wakes it: any later push, this ring
 * filling up, or at the latest its heartbeat (0.1 s). */
onic_status_t onic_onload_client_push_quiet(onic_onload_client_t *client, uint32_t kind,
                                            const void *data, size_t len);

/* The oldest event, its payload into buf (cap bytes), after doing the
 * copies the engine asks for on the way (FILL, DRAIN). ONIC_ERR_NO_ELEM
 * when there is none. */
onic_status_t onic_onload_client_poll(onic_onload_client_t *client, uint32_t *kind_p, void *buf,
                                      size_t cap, size_t *len_p);

/* The same, waiting up to timeout_ns: spin ONIC_WAIT_SPIN_US, yield, then
 * sleep on the event ring's bell, checking every 100 ms that the engine
 * lives. ONIC_ERR_NO_ELEM after the timeout, ONIC_ERR_IO (logged) if the
 * engine is gone. */
onic_status_t onic_onload_client_wait(onic_onload_client_t *client, uint32_t *kind_p, void *buf,
                                      size_t cap, size_t *len_p, uint64_t timeout_ns);

/* ONIC_OK while the engine lives, ONIC_ERR_IO once it is found gone. */
onic_status_t onic_onload_client_check(onic_onload_client_t *client);

#endif
