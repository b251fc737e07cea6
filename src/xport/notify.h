/* The notification queue: where finished RMA operations are posted (as
 * EXTOLL's RMA unit writes its notifications) until poll or wait hands them
 * to rma_cb. A slot is reserved when an operation starts, in the caller's
 * context where running out of memory can be returned; posting, which may
 * happen deep inside progress, then never fails and a completion is never
 * lost. */
#ifndef ONIC_XPORT_NOTIFY_H
#define ONIC_XPORT_NOTIFY_H

#include "xport/xport.h"

typedef struct onic_xport_note {
    void         *ctx;
    onic_status_t status;
} onic_xport_note_t;

typedef struct onic_xport_notify {
    onic_xport_note_t *ring;
    size_t             cap;        /* a power of two, or 0 */
    uint64_t           head, tail; /* notes in [head, tail) */
    size_t             reserved;   /* started operations not yet posted */
} onic_xport_notify_t;

onic_status_t onic_xport_notify_reserve(onic_xport_notify_t *q);
/* Give back a reservation whose operation never started. */
void          onic_xport_notify_unreserve(onic_xport_notify_t *q);
void          onic_xport_notify_post(onic_xport_notify_t *q, void *ctx, onic_status_t status);
/* Hand every note to cb (also those posted by cb meanwhile). */
unsigned      onic_xport_notify_drain(onic_xport_notify_t *q, onic_xport_rma_cb_t cb, void *arg);
void          onic_xport_notify_fini(onic_xport_notify_t *q);

static inline int onic_xport_notify_empty(const onic_xport_notify_t *q)
{
    return q->head == q->tail;
}

#endif
