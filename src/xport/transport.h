/* The interface between the transport front end (xport.c) and each
 * transport. A transport fills one const onic_xport_ops_t; the front end
 * validates arguments, picks the transport per peer (self for this process,
 * shm for the others on this node, ofi for other nodes') and keeps what a
 * send answers ONIC_ERR_NO_RESOURCE for in that peer's backlog. Each transport numbers its peers its own way (shm:
 * the node's ranks 0 to n-1); the front end translates. */
#ifndef ONIC_XPORT_TRANSPORT_H
#define ONIC_XPORT_TRANSPORT_H

#include "xport/mreg.h"
#include "xport/notify.h"
#include "boot/boot.h"

/* What a transport gets at open, besides the caller's parameters: the
 * process's registrations, to check the ranges peers name, and its
 * notification queue, where it posts finished RMA operations (the front end
 * reserved the slot before starting the operation). */
typedef struct onic_xport_tparams {
    const onic_xport_params_t *p;       /* rank and size in the transport's own numbering */
    const onic_xport_mreg_t   *mreg;
    onic_xport_notify_t       *notify;
    onic_boot_t               *boot;    /* the launcher's store; NULL without one */
    const uint8_t             *serve;   /* by peer: 1 if this transport carries it */
    const uint32_t            *ranks;   /* by peer: its rank in the job (for messages); NULL:
                                         * the transport's numbering is the job's */
    /* What a send that finds no room may hand its message to instead of
     * answering ONIC_ERR_NO_RESOURCE (and answer what it answers): the
     * front end keeps the message in the peer's backlog, or, when it is
     * retrying that backlog, answers ONIC_ERR_NO_RESOURCE. A transport
     * that does so says it with `queues` in its ops, and its send is then
     * a tail call with nothing kept for a retry. */
    onic_status_t            (*full)(void *full_arg, uint32_t peer, const void *user_hdr,
                                     size_t user_len, const void *payload, size_t len);
    void                      *full_arg;
} onic_xport_tparams_t;

typedef struct onic_xport_ops {
    const char *name;
    onic_status_t (*open)(const onic_xport_tparams_t *tp, void **state_p);
    void          (*close)(void *state);
    /* ONIC_ERR_NO_RESOURCE: no room now, nothing sent -- unless `queues`:
     * then send hands such a message to tp->full. Never a wait: the front
     * end keeps the message and sends it from a later poll. */
    onic_status_t (*send)(void *state, uint32_t peer, const void *user_hdr, size_t user_len,
                          const void *payload, size_t len);
    int           queues;
    /* Delivers up to max user messages through p->recv_cb and returns how
     * many; also moves RMA along, posting what finishes to the notification
     * queue. */
    unsigned      (*poll)(void *state, const onic_xport_params_t *p, unsigned max);
    /* The poll delivers nothing more once *p->held is nonzero, and counts
     * in its return only what it delivered: the front end may then give
     * it the caller's recv_cb, with no call of its own in between. */
    int           holds;
    size_t        (*max_payload)(const void *state);
    uint64_t      (*drops)(const void *state);
    /* Optional: sleep until a message may have arrived or timeout_ns pass,
     * without losing a wake-up from a sender. NULL: cannot sleep. */
    void          (*sleep)(void *state, uint64_t timeout_ns);
    /* Optional, both or neither: sleep's two halves, for a sleeper that
     * must not hold its caller's lock while asleep (onic_xport_sleep_arm).
     * sleep_arm: 1 when nothing waits and from now on an arrival moves
     * *word and wakes its (shared) futex; *val is its value now, *max_ns
     * the longest such a sleep may last. 0: something waits, nothing
     * armed. sleep_disarm ends an armed sleep. */
    int           (*sleep_arm)(void *state, uint32_t **word, uint32_t *val, uint64_t *max_ns);
    void          (*sleep_disarm)(void *state);
    /* Start an RMA read (write = 0) or write of len > 0 bytes, whose range
     * the front end checked against rkey; post its completion (ctx) to the
     * notification queue, now or from a later poll. ONIC_ERR_NO_RESOURCE:
     * too many in flight now, nothing started. */
    onic_status_t (*rma)(void *state, uint32_t peer, int write, void *local,
                         const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len, void *ctx);
    /* Optional: rma with the local side in n pieces adding up to len (a
     * Portals I/O vector MD's), which it may change.
     * ONIC_ERR_UNSUPPORTED: not towards this peer or at this size; nothing
     * started (the caller moves the pieces one by one). NULL: never. */
    onic_status_t (*rmav)(void *state, uint32_t peer, int write, struct iovec *local, unsigned n,
                          const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len, void *ctx);
    /* ONIC_XPORT_CAP_* this transport offers towards peer. */
    unsigned      (*caps)(const void *state, uint32_t peer);
    /* Optional: make a registered range reachable by peers' RMA through this
     * transport (a network card's registration), under the id in key; and
     * undo it. NULL: the mreg table is all it needs. */
    onic_status_t (*mem_reg)(void *state, void *addr, size_t len, const onic_xport_mkey_t *key);
    void          (*mem_dereg)(void *state, const onic_xport_mkey_t *key);
    /* Optional: on = 1 opens a bundle, in which sends may be held back to
     * travel together (as one network message); on = 0 ends it, sending
     * what was held, as does every poll. ONIC_ERR_NO_RESOURCE: some could
     * not leave yet (the front end polls and calls again). NULL: every send
     * leaves at once. */
    onic_status_t (*bundle)(void *state, int on);
    /* Optional: messages that left inside a network message with others. */
    uint64_t      (*bundled)(const void *state);
    /* Optional: bytes of this process's RMA that the peers copied. */
    uint64_t      (*assisted)(const void *state);
    /* Optional: messages whose lines were pushed to a waiting receiver's
     * shared cache (shm, ONIC_SHM_DEMOTE). */
    uint64_t      (*demoted)(const void *state);
} onic_xport_ops_t;

extern const onic_xport_ops_t onic_xport_self_ops;
extern const onic_xport_ops_t onic_xport_shm_ops;

/* What each process of a node puts in the launcher's store ("shm-pid") for
 * shm's exchange: its pid, and the inodes of its network and pid
 * namespaces (0 where /proc cannot tell), which the exchange needs shared. */
typedef struct onic_xport_shm_who {
    uint64_t pid;
    uint64_t netns;
    uint64_t pidns;
} onic_xport_shm_who_t;

void onic_xport_shm_who(onic_xport_shm_who_t *who);
extern const onic_xport_ops_t onic_xport_ofi_ops;

#endif
