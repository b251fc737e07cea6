#include "xport/notify.h"
#include "base/mem.h"

#define NOTIFY_MIN_CAP 64

onic_status_t onic_xport_notify_reserve(onic_xport_notify_t *q)
{
    size_t used = (size_t)(q->tail - q->head);

    if (used + q->reserved + 1 > q->cap) {
        size_t cap = q->cap == 0 ? NOTIFY_MIN_CAP : q->cap * 2;
        onic_xport_note_t *ring = onic_malloc(cap * sizeof(*ring));
        if (ring == NULL)
            return ONIC_ERR_NO_MEMORY;
        for (size_t i = 0; i < used; i++)
            ring[i] = q->ring[(q->head + i) & (q->cap - 1)];
        onic_free(q->ring);
        q->ring = ring;
        q->cap = cap;
        q->head = 0;
        q->tail = used;
    }
    q->reserved++;
    return ONIC_OK;
}

void onic_xport_notify_unreserve(onic_xport_notify_t *q)
{
    q->reserved--;
}

void onic_xport_notify_post(onic_xport_notify_t *q, void *ctx, onic_status_t status)
{
    onic_xport_note_t *note = &q->ring[q->tail & (q->cap - 1)];

    note->ctx = ctx;
    note->status = status;
    q->tail++;
    q->reserved--;
}

unsigned onic_xport_notify_drain(onic_xport_notify_t *q, onic_xport_rma_cb_t cb, void *arg)
{
    unsigned n = 0;

    while (q->head != q->tail) {
        onic_xport_note_t note = q->ring[q->head & (q->cap - 1)];
        q->head++;  /* first: cb may start operations and grow the ring */
        cb(arg, note.ctx, note.status);
        n++;
    }
    return n;
}

void onic_xport_notify_fini(onic_xport_notify_t *q)
{
    onic_free(q->ring);
    q->ring = NULL;
    q->cap = 0;
    q->head = q->tail = 0;
    q->reserved = 0;
}
