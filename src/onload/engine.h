/* The onload engine's own state, shared by its files: engine.c (status
 * segment, attaching processes, the data mover, the loop) and serve.c (the
 * Portals interfaces it keeps for its processes). Not an interface of the
 * layer: onload.h is. */
#ifndef ONIC_ONLOAD_ENGINE_H
#define ONIC_ONLOAD_ENGINE_H

#include "onload/onload.h"
#include "onload/ring.h"
#include "base/pool.h"
#include "ptl/ptl.h"

#include <sys/types.h>

typedef struct onload_msg onload_msg_t;

/* A move the target side asked for while all movers were busy. */
typedef struct onload_rma onload_rma_t;
struct onload_rma {
    onload_rma_t *next;
    uint32_t      owner, src, dst;
    uint64_t      src_addr, dst_addr, len;
    void         *ctx;
    uint64_t      owner_gen, src_gen, dst_gen; /* the incarnations it was asked for */
};

/* A range a process lets others pull from. */
typedef struct engine_reg {
    int      used;
    uint64_t id, addr, len;
} engine_reg_t;

/* One process the engine serves. */
typedef struct engine_proc {
    int                 state;  /* ENGINE_PROC_* */
    void               *map;
    size_t              bytes;
    pid_t               pid;
    int                 handed;     /* its next segment, handed over the socket; -1 none */
    pid_t               handed_pid; /* who handed it, as the kernel says */
    int                 cma;    /* the engine can read and write its memory */
    uint64_t            gen;    /* bumped at every attach: which incarnation */
    onic_onload_answer_t *answer;   /* its bounce area's answer line */
    uint8_t            *bounce;     /* and its ONIC_ONLOAD_CHUNK bytes */
    int                 area_move;  /* the move using its bounce area, or -1 */
    uint64_t            area_seq;   /* the last FILL or DRAIN asked of it */
    onic_onload_ring_t  cmd;    /* we consume */
    onic_onload_ring_t  evt;    /* we produce */
    engine_reg_t        regs[ONIC_ONLOAD_REGS];
    /* Portals (serve.c): the process's interface, kept here. */
    struct engine      *e;
    uint32_t            rank;
    onic_ptl_ni_t      *ni;         /* NULL until NI_INIT, and after NI_FINI */
    uint64_t            ni_gen;     /* bumped at every NI_INIT: which interface */
    int                 ni_closed;  /* had one: mail for it is dropped */
    int                 ni_ready;   /* it has polled: its arrivals are delivered */
    onload_msg_t       *mail, *mail_tail;  /* messages for it, oldest first */
    const void         *staged;     /* the put being done: its data, from the call */
    size_t              staged_len;
    int                 closing;    /* its NI is being closed: no news of its MDs */
    uint64_t            data_mark;  /* its event ring's tail after the last DATA */
    uint8_t            *parked;     /* a put or get waiting for mail to drain */
    size_t              parked_len;
} engine_proc_t;

/* NONE: may attach (again: a process may close and reopen); DONE: refused
 * for good (its segment or commands made no sense). */
enum { ENGINE_PROC_NONE = 0, ENGINE_PROC_ATTACHED, ENGINE_PROC_DONE };

/* A pull in progress: moving, then telling the puller, then the owner. */
typedef struct engine_move {
    int                 phase;  /* ENGINE_MOVE_* */
    uint32_t            dst, src;
    pid_t               dst_pid, src_pid;
    uint64_t            dst_gen, src_gen;  /* tell only the incarnations involved */
    uint64_t            src_addr, dst_addr, len, done;
    uint64_t            cookie, reg_id;
    onic_status_t       status;
    int                 sub;    /* ENGINE_CHUNK_*: where the current chunk is */
    size_t              n;      /* its length */
    void               *ctx;    /* a Portals interface's RMA: the target side's */
    uint32_t            owner;  /* and the rank of that interface */
    uint64_t            owner_gen;
    void               *held;   /* the chunk, out of the owner's area, waiting
                                   for the puller's */
} engine_move_t;

/* A move for a Portals interface ends in PTL_DONE (onload_serve_rma_done)
 * instead of telling the two processes. */
enum { ENGINE_MOVE_FREE = 0, ENGINE_MOVE_COPY, ENGINE_MOVE_TELL_DST, ENGINE_MOVE_TELL_SRC,
       ENGINE_MOVE_PTL_DONE };

/* A chunk's way when a process cannot be reached by CMA: the owner copies
 * it into its bounce area (FILL), the engine moves it on, the puller
 * copies it out of its own (DRAIN). */
enum { ENGINE_CHUNK_START = 0, ENGINE_CHUNK_WAIT_FILL, ENGINE_CHUNK_HAVE_SRC,
       ENGINE_CHUNK_WAIT_DRAIN };

typedef struct engine {
    const onic_config_t   *cfg;
    onic_onload_status_t  *status;
    int                    sock;    /* where processes hand their segments (ONIC_ONLOAD_SOCK) */
    engine_proc_t         *procs;   /* by rank */
    uint32_t               nprocs;
    uint32_t               attached;
    uint32_t               done;     /* refused for good */
    uint64_t               seen;     /* attaches, ever */
    engine_move_t          moves[ONIC_ONLOAD_MOVES];
    unsigned               nmoves;
    uint8_t               *chunk;   /* ONIC_ONLOAD_CHUNK bytes on their way */
    /* serve.c */
    uint64_t               mail;     /* messages waiting for their receiver */
    onload_rma_t          *rma_wait, *rma_wait_tail; /* moves waiting for a slot */
    uint64_t               rma_ids;
    uint8_t               *scratch;  /* a DATA record being made */
    uint8_t               *cmdbuf;   /* the command being done */
    onic_pool_t            mail_pool; /* small messages between interfaces */
} engine_t;


/* --- serve.c: Portals for the engine's processes ---------------------------- */
/* Whether p runs Portals here (its event ring then must keep room for a
 * whole exchange, ONIC_ONLOAD_EVT_NEED, before the engine takes work for it). */
int      onload_serve_active(const engine_proc_t *p);
/* One ONIC_ONLOAD_CMD_PTL command of p's (buf: len bytes, already popped). */
void     onload_serve_call(engine_t *e, engine_proc_t *p, const void *buf, size_t len);
/* Deliver what the interfaces sent each other, each while its receiver has
 * room; returns the messages delivered, sets *blocked_p if some wait. */
unsigned onload_serve_deliver(engine_t *e, int *blocked_p);
/* Whether p may give more commands that send: the messages waiting are
 * bounded; other commands are always taken. */
int      onload_serve_may_take(const engine_t *e);
/* Whether the command (buf, len) sends a message (a put or a get). */
int      onload_serve_sends(const void *buf, size_t len);
/* Whether p has DATA records it has not applied yet: the engine must not
 * read or write its memory by CMA until it has, or it would undo or miss
 * them. */
int      onload_serve_data_pending(engine_proc_t *p);
/* A move the target side asked for has ended: complete it (0 if it must
 * wait for room). */
int      onload_serve_rma_done(engine_t *e, engine_move_t *m);
/* p goes (BYE, death or refusal): close its interface, drop its mail. */
void     onload_serve_detach(engine_t *e, engine_proc_t *p);
void     onload_serve_init(engine_t *e);
void     onload_serve_fini(engine_t *e);

/* --- engine.c, for serve.c --------------------------------------------------- */
/* Start moving len bytes from src's src_addr to dst's dst_addr for the
 * interface of rank `owner`; it ends in onload_serve_rma_done. */
void     onload_engine_move_ptl(engine_t *e, uint32_t owner, uint32_t src, uint64_t src_addr,
                                uint32_t dst, uint64_t dst_addr, uint64_t len, void *ctx);

#endif
