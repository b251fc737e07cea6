/* onic transports: move small messages between the processes of a job.
 *
 * A message is a 64-byte header, of which the layer above owns
 * ONIC_XPORT_USER_HDR bytes, plus an inline payload of up to the transport's
 * limit (shm: ONIC_SHM_MID_MAX, above 2 KiB in fragments through its lane). Messages between one pair of processes arrive in the order sent, and
 * none is ever dropped: a sender without room makes progress on its own
 * receives until the receiver has made room, so processes flooding each
 * other cannot deadlock.
 *
 * Transports plug in through onic_xport_ops_t, chosen per peer at open:
 * `self` for a process's messages to itself, `shm` for the other processes
 * on this node, `ofi` (libfabric) for processes on other nodes; ONIC_XPORT
 * can force shm only or ofi for every peer. Which processes share a node
 * comes from the launcher (src/boot). An endpoint has one owner: no call is
 * thread-safe. */
#ifndef ONIC_XPORT_XPORT_H
#define ONIC_XPORT_XPORT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <onic/status.h>
#include "base/config.h"

#define ONIC_XPORT_USER_HDR    48
/* The largest inline payload of ofi (its buffers) and of a queued record
 * kept without an allocation of its own; shm's lane messages carry up to
 * ONIC_SHM_FRAME_MAX (shm_lane.h). Larger data goes in fragments or by RMA. */
#define ONIC_XPORT_MAX_PAYLOAD 2048u
/* The largest message any transport may carry in pieces (shm's mid-size
 * messages, ONIC_SHM_MID_MAX) or queue whole (self, the backlog). */
#define ONIC_XPORT_MID_CAP (256u << 10)

/* The first cache line of every message on the wire. `ready` is written last
 * with release semantics and tells the receiver the message is complete;
 * what else it says is the transport's (shm: the slot's sequence number and
 * the message's length in slots). */
typedef struct onic_xport_hdr {
    uint64_t ready;
    uint32_t len;                        /* payload bytes after this line */
    uint16_t user_len;                   /* bytes of user[] in use */
    uint16_t kind;                       /* ONIC_XPORT_KIND_USER, or the transport's own */
    uint8_t  user[ONIC_XPORT_USER_HDR];  /* the layer above's header */
} onic_xport_hdr_t;

static_assert(sizeof(onic_xport_hdr_t) == 64, "a message header is one cache line");

/* A message for the layer above; other kinds are a transport's own control
 * messages (an RMA request), handled inside the transport. */
#define ONIC_XPORT_KIND_USER 0

/* Called by poll and wait for each message, in order per sender; never by
 * send (what arrives while a send waits for room is queued for the next
 * poll). The pointers are valid only during the call. user_hdr points to a
 * private copy; payload may point into memory shared with the sender (a
 * shm lane's slots, which the sender does not write again before the call
 * returns): read each byte once, as a copy does. The callback may send,
 * to any rank. */
typedef void (*onic_xport_recv_cb_t)(void *arg, uint32_t src, const void *user_hdr,
                                     size_t user_len, const void *payload, size_t len);

/* Called by poll and wait for each finished RMA operation, with the ctx it
 * was started with and ONIC_OK or why it failed. May send and start RMA. */
typedef void (*onic_xport_rma_cb_t)(void *arg, void *ctx, onic_status_t status);

/* Optional, for a message whose header arrives ahead of its len payload
 * bytes (shm's mid-size messages), in its turn among src's messages: 1 if
 * the caller takes it now -- its payload's first *room bytes go to *dest
 * as they come, the rest is dropped, and placed_cb (never recv_cb) says
 * when they are in; 0 if it is to come whole through recv_cb. May not
 * send. */
typedef int (*onic_xport_place_cb_t)(void *arg, uint32_t src, const void *user_hdr,
                                     size_t user_len, size_t len, void **dest, size_t *room);
typedef void (*onic_xport_placed_cb_t)(void *arg, uint32_t src);

typedef struct onic_xport_params {
    /* This process in its job. size 0: ask the launcher (src/boot) for rank,
     * size, the job's nodes and addresses; then every transport is possible.
     * Otherwise the job is the given ranks of one node, reached by shm, and
     * jobid names its shared memory (NULL if size 1). */
    uint32_t             rank, size;
    const char          *jobid;
    onic_xport_recv_cb_t recv_cb;
    void                *cb_arg;      /* for recv_cb and rma_cb */
    onic_xport_rma_cb_t  rma_cb;      /* NULL: this process starts no RMA */
    /* Both or neither (NULL: every message comes whole); with cb_arg. */
    onic_xport_place_cb_t  place_cb;
    onic_xport_placed_cb_t placed_cb;
    const onic_config_t *cfg;         /* ONIC_SHM_* and friends */
    /* The front end's, for its transports' polls (callers of
     * onic_xport_open leave it NULL): nonzero while it holds messages older
     * than those still in the rings (a wait inside a callback -- an RMA
     * start past the window -- set them aside), which go first; a transport
     * that honours it (ops->holds) delivers nothing more then. */
    const int           *held;
} onic_xport_params_t;

typedef struct onic_xport onic_xport_t;

/* Open this process's endpoint: all of the job's endpoints must open before
 * any returns (each waits for the others, up to a timeout). */
onic_status_t onic_xport_open(const onic_xport_params_t *params, onic_xport_t **x_p);
void          onic_xport_close(onic_xport_t *x);

/* Send user_len (<= ONIC_XPORT_USER_HDR) header bytes and len payload bytes
 * (<= onic_xport_max_payload) to peer. Never waits for the peer: returns
 * once the message is in the peer's ring (or queue, for oneself) or, when
 * the peer has no room, copied into its backlog behind anything older to
 * that peer; later polls send it, in order. The buffers may be reused at
 * once either way. */
onic_status_t onic_xport_send(onic_xport_t *x, uint32_t peer, const void *user_hdr,
                              size_t user_len, const void *payload, size_t len);
/* The same for a caller that has checked those arguments itself (Portals
 * checks every put and get at its public boundary): x not NULL, peer below
 * onic_xport_size, user_len <= ONIC_XPORT_USER_HDR, len <= max_payload,
 * buffers not NULL where their length is not 0. Nothing is checked again:
 * the send is one lookup and the transport's call. */
onic_status_t onic_xport_send_nocheck(onic_xport_t *x, uint32_t peer, const void *user_hdr,
                                      size_t user_len, const void *payload, size_t len);
/* Messages sent but still waiting for room at their peers (the backlog):
 * they leave in order from later polls, which every send to the same peer
 * also tries first. */
uint64_t      onic_xport_backlog(const onic_xport_t *x);
/* Deliver what has arrived through recv_cb (and finished RMA through
 * rma_cb), at most 128 messages per call so a caller's own queues stay
 * bounded; returns how many. */
unsigned      onic_xport_poll(onic_xport_t *x);
/* Like poll, but wait up to timeout_ns for something to arrive: spin for
 * ONIC_WAIT_SPIN_US, then yield the core a few times, then sleep on a futex
 * until a sender wakes this process. Returns how many messages it delivered
 * (0 after the timeout). */
unsigned      onic_xport_wait(onic_xport_t *x, uint64_t timeout_ns);
/* A wait's sleep in two halves, for a thread that must not hold the lock
 * it calls the endpoint under while it sleeps (MPI_THREAD_MULTIPLE): arm,
 * holding the lock, after a poll that found nothing -- 1 when nothing
 * waits and from now on an arrival moves *word and wakes its futex
 * (shared: FUTEX_WAIT without FUTEX_PRIVATE_FLAG, on *val) for up to
 * *max_ns; 0 when something waits or this endpoint cannot sleep so (more
 * than one transport, a backlog), nothing armed. Then sleep without the
 * lock; another thread may end the sleep early by moving *word and waking
 * it. Disarm holding the lock again; the endpoint stays open meanwhile. */
int           onic_xport_sleep_arm(onic_xport_t *x, uint32_t **word, uint32_t *val,
                                   uint64_t *max_ns);
void          onic_xport_sleep_disarm(onic_xport_t *x);
/* --- RMA: read and write another process's memory (paper 004, III.C).
 * A process exposes a range with mem_reg and sends the key to a peer inside
 * a message; the peer names (key, offset, length) in rma_read / rma_write.
 * The operation runs asynchronously and its completion is posted to this
 * process's notification queue, which poll and wait deliver through rma_cb.
 * The range is checked against the key by the initiator and again by the
 * owner when the owner takes part (the copy mechanism); an operation outside
 * it completes with ONIC_ERR_INVALID_PARAM. Buffers stay untouched by the
 * caller until completion. */
typedef struct onic_xport_mkey {
    uint64_t addr;  /* the range in its owner's address space */
    uint64_t len;
    uint64_t id;    /* names the registration at its owner; 0 is never valid */
} onic_xport_mkey_t;

onic_status_t onic_xport_mem_reg(onic_xport_t *x, void *addr, size_t len, onic_xport_mkey_t *key_p);
/* Later operations naming key fail; ones already running may still finish. */
onic_status_t onic_xport_mem_dereg(onic_xport_t *x, const onic_xport_mkey_t *key);
/* Copy len bytes from the peer's range (rkey, roffset) into local. */
onic_status_t onic_xport_rma_read(onic_xport_t *x, uint32_t peer, void *local,
                                  const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len,
                                  void *ctx);
/* Copy len bytes from local into the peer's range (rkey, roffset). */
onic_status_t onic_xport_rma_write(onic_xport_t *x, uint32_t peer, const void *local,
                                   const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len,
                                   void *ctx);

/* onic_xport_rma_read (write 0) or _write with the local side in n
 * pieces adding up to len bytes (which it may change), in one operation
 * where the transport can (shm by CMA: one process_vm_readv/writev).
 * ONIC_ERR_UNSUPPORTED: it cannot, towards this peer or at this size now;
 * nothing started, and the caller moves the pieces one by one. */
onic_status_t onic_xport_rmav(onic_xport_t *x, uint32_t peer, int write, struct iovec *local,
                              unsigned n, const onic_xport_mkey_t *rkey, uint64_t roffset,
                              size_t len, void *ctx);

/* What the transport to peer offers. */
#define ONIC_XPORT_CAP_RMA   0x1u  /* rma_read and rma_write */
#define ONIC_XPORT_CAP_SLEEP 0x2u  /* wait can sleep until this peer sends */
#define ONIC_XPORT_CAP_CMA   0x4u  /* RMA of any length goes by one copy (process_vm_readv/writev),
                                      needing nothing of the peer */
unsigned      onic_xport_caps(const onic_xport_t *x, uint32_t peer);

size_t        onic_xport_max_payload(const onic_xport_t *x);
/* Bundles: on = 1 tells the transports that several sends may follow, which
 * they may hold back to send together (ofi, with ONIC_OFI_BUNDLE: one network
 * message for many); every poll sends what is held, and on = 0 sends it and
 * ends the bundle, waiting for room as send does. Order is kept either way.
 * A held message waits for the next poll or the bundle's end: open a bundle
 * only where one of them comes soon. */
onic_status_t onic_xport_bundle(onic_xport_t *x, int on);
/* Messages that left together with others in one network message. */
uint64_t      onic_xport_bundled(const onic_xport_t *x);
/* Bytes of this process's RMA that the peers owning the other memory
 * copied for it (shm's cooperative operations, ONIC_SHM_ASSIST_MIN). */
uint64_t      onic_xport_assisted(const onic_xport_t *x);
/* Messages whose lines were pushed to a waiting receiver's shared cache
 * (shm, ONIC_SHM_DEMOTE). */
uint64_t      onic_xport_demoted(const onic_xport_t *x);

/* This process's rank, the job's size (as learnt at open), and an id the
 * same in every process of the job: 1 to 16 lowercase hex digits. */
uint32_t      onic_xport_rank(const onic_xport_t *x);
uint32_t      onic_xport_size(const onic_xport_t *x);
const char   *onic_xport_jobid(const onic_xport_t *x);
/* The transport that carries messages to peer: "self", "shm" or "ofi". */
const char   *onic_xport_peer_transport(const onic_xport_t *x, uint32_t peer);
/* Loads libfabric, which ofi opens when a job first needs it (base/dl.h);
 * for onic-info. An error names the package to install. */
onic_status_t onic_xport_ofi_load(const onic_config_t *cfg);
/* Messages dropped because what arrived was malformed (a broken sender). */
uint64_t      onic_xport_drops(const onic_xport_t *x);

#endif
