/* A queue of copied messages, delivered in order by a later drain: the
 * self transport's messages, what a wait for room moves out of the rings
 * (so callbacks never run inside send), and, sent by a later retry, the
 * messages a peer had no room for yet (the front end's backlog). Records live in one
 * buffer that doubles when full and never shrinks, so a steady stream
 * allocates nothing. */
#ifndef ONIC_XPORT_MSGQ_H
#define ONIC_XPORT_MSGQ_H

#include "xport/xport.h"

typedef struct onic_xport_msgq {
    uint8_t *buf;
    size_t   cap, head, tail;  /* records in buf[head, tail) */
    int      draining;         /* a drain is running: no slide, no nested drain */
} onic_xport_msgq_t;

/* ONIC_ERR_INVALID_PARAM for more than ONIC_XPORT_MID_CAP bytes,
 * ONIC_ERR_NO_MEMORY when the buffer cannot grow; nothing queued then. */
onic_status_t onic_xport_msgq_push(onic_xport_msgq_t *q, uint32_t src, const void *user_hdr,
                                   size_t user_len, const void *payload, size_t len);
/* Deliver up to max records, oldest first, including those pushed by the
 * callbacks meanwhile; each is copied out first, so callbacks may push. 0
 * when nested. A record of more than ONIC_XPORT_MAX_PAYLOAD bytes is copied
 * out to the heap; without memory it stays, for the next drain. */
unsigned      onic_xport_msgq_drain(onic_xport_msgq_t *q, unsigned max, onic_xport_recv_cb_t cb,
                                    void *cb_arg);
/* Hand the records, oldest first, to send (which must not push to q) until
 * it answers ONIC_ERR_NO_RESOURCE: that record stays first. A record that
 * send refuses otherwise is dropped (send reported why). Returns how many
 * records left the queue. */
typedef onic_status_t (*onic_xport_msgq_send_fn_t)(void *arg, uint32_t dest, const void *user_hdr,
                                                   size_t user_len, const void *payload,
                                                   size_t len);
unsigned      onic_xport_msgq_send(onic_xport_msgq_t *q, onic_xport_msgq_send_fn_t send,
                                   void *arg);
void          onic_xport_msgq_fini(onic_xport_msgq_t *q);

static inline int onic_xport_msgq_empty(const onic_xport_msgq_t *q)
{
    return q->head == q->tail;
}

#endif
