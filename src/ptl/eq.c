/* Event queues: circular. When the consumer falls behind, the oldest event
 * is overwritten and the next read says so (PTL_EQ_DROPPED): events are
 * never lost silently (paper 003, 4.8). */
#include "ptl/ptl.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

#define EQ_POLL_MAX  64

void onic_ptl_eq_post_other(onic_ptl_eq_t *eq, ptl_event_t *ev)
{
    onic_ptl_ni_t *ni = eq->ni;

    if (ni->io != NULL && ni->io->event != NULL) {
        /* The queue is the process's, in its own memory (client_ptl.c). */
        ni->io->event(ni->io_arg, eq->handle, ev);
        return;
    }
    onic_ptl_eq_keep(eq, ev);
    if (eq->handler != PTL_EQ_HANDLER_NONE) {
        if (ni->hq_len == ONIC_PTL_HANDLER_QUEUE) /* never: steps are small */
            onic_ptl_eq_run_handlers(ni);
        ni->hq[ni->hq_len].eq = eq->handle;
        ni->hq[ni->hq_len].ev = *ev;
        ni->hq_len++;
    }
}

void onic_ptl_eq_run_handlers(onic_ptl_ni_t *ni)
{
    onic_ptl_handler_call_t call;
    onic_ptl_eq_t *eq;

    /* FIFO, one at a time: a handler's own calls may queue more. */
    while (ni->hq_len > 0) {
        call = ni->hq[0];
        memmove(&ni->hq[0], &ni->hq[1], --ni->hq_len * sizeof(ni->hq[0]));
        eq = onic_ptl_htab_get(&ni->eqs, call.eq);
        if (eq != NULL && eq->handler != PTL_EQ_HANDLER_NONE) {
            ni->in_handler++;
            eq->handler(&call.ev);
            ni->in_handler--;
        }
    }
}

uint64_t onic_ptl_eq_room(const onic_ptl_eq_t *eq)
{
    /* A queue kept by the process itself (onload) is the process's to
     * overflow, reported as PTL_EQ_DROPPED there. */
    if (eq->ring == NULL)
        return UINT64_MAX;
    return eq->count - (eq->tail - eq->head);
}

ptl_event_t *onic_ptl_eq_ring_alloc(onic_ptl_eq_t *eq, ptl_size_t count)
{
    eq->count = count;
    eq->mask = 1;
    /* One slot more than the queue holds: the event PtlEQGetInPlace last
     * read is not written over until count more events have come. */
    while (eq->mask <= count)
        eq->mask <<= 1;
    eq->mask--;
    return onic_calloc(eq->mask + 1, sizeof(ptl_event_t));
}

int onic_ptl_eq_count_ok(ptl_size_t count)
{
    if (count > 0 && count <= ONIC_PTL_EQ_MAX_COUNT)
        return 1;
    onic_error("ptl: PtlEQAlloc: count %llu; an event queue holds 1 to %llu events",
               (unsigned long long)count, (unsigned long long)ONIC_PTL_EQ_MAX_COUNT);
    return 0;
}

int PtlEQAlloc(ptl_handle_ni_t ni_handle, ptl_size_t count, ptl_eq_handler_t handler,
               ptl_handle_eq_t *eq_handle)
{
    onic_ptl_ni_t *ni;
    onic_ptl_eq_t *eq;
    onic_status_t status;
    int rc;

    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->eq_alloc(ni_handle, count, handler, eq_handle);
    if ((rc = onic_ptl_ni_of(ni_handle, &ni)) != PTL_OK)
        return rc;
    if (eq_handle == NULL) {
        onic_error("ptl: PtlEQAlloc with a NULL eq_handle: pass where to store the handle");
        return PTL_SEGV;
    }
    if (!onic_ptl_eq_count_ok(count))
        return PTL_FAIL;
    eq = onic_calloc(1, sizeof(*eq));
    if (eq == NULL)
        return PTL_NO_SPACE;
    /* The onload engine keeps no events: they go to the process's queue. */
    eq->ring = ni->io->event == NULL ? onic_ptl_eq_ring_alloc(eq, count) : NULL;
    if (eq->ring == NULL && ni->io->event == NULL) {
        onic_free(eq);
        return PTL_NO_SPACE;
    }
    eq->ni = ni;
    eq->count = count;
    eq->handler = handler;
    status = onic_ptl_htab_add(&ni->eqs, eq, &eq->handle);
    if (status != ONIC_OK) {
        onic_error("ptl: PtlEQAlloc: %s (at most %d event queues)", onic_status_str(status),
                   ni->limits.max_eqs);
        onic_free(eq->ring);
        onic_free(eq);
        return PTL_NO_SPACE;
    }
    *eq_handle = eq->handle;
    return PTL_OK;
}

/* MDs that name a freed queue keep working without events, and an ack for
 * it is dropped (paper 003, 4.8): the handle is simply dead. */
int PtlEQFree(ptl_handle_eq_t eq_handle)
{
    onic_ptl_ni_t *ni;
    onic_ptl_eq_t *eq;
    int rc;

    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->eq_free(eq_handle);
    if ((rc = onic_ptl_eq_of(eq_handle, &ni, &eq)) != PTL_OK)
        return rc;
    onic_ptl_htab_del(&ni->eqs, eq_handle);
    onic_free(eq->ring);
    onic_free(eq);
    return PTL_OK;
}

/* The live queue of a get, the transport polled once if it is empty; NULL
 * and *rc_p set if the handle names none (or its handler freed it). */
static inline onic_ptl_eq_t *eq_ready(ptl_handle_eq_t eq_handle, int *rc_p)
{
    onic_ptl_ni_t *ni;
    onic_ptl_eq_t *eq;

    if ((*rc_p = onic_ptl_eq_of(eq_handle, &ni, &eq)) != PTL_OK)
        return NULL;
    if (eq->head == eq->tail) {
        onic_ptl_ni_progress(ni, 0);
        /* An EQ handler may have freed the queue. */
        if ((*rc_p = onic_ptl_eq_of(eq_handle, &ni, &eq)) != PTL_OK)
            return NULL;
    }
    return eq;
}

int PtlEQGet(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
    onic_ptl_ni_t *ni;
    onic_ptl_eq_t *eq;
    int rc;

    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->eq_poll(&eq_handle, 1, 0, event, NULL);
    if (event == NULL) {
        /* A bad handle is reported before the missing event. */
        if ((rc = onic_ptl_eq_of(eq_handle, &ni, &eq)) != PTL_OK)
            return rc;
        onic_error("ptl: PtlEQGet with a NULL event: pass where to store it");
        return PTL_SEGV;
    }
    if ((eq = eq_ready(eq_handle, &rc)) == NULL)
        return rc;
    return onic_ptl_eq_take(eq, event);
}

int PtlEQGetInPlace(ptl_handle_eq_t eq_handle, const ptl_event_t **event, ptl_event_t *spare)
{
    onic_ptl_eq_t *eq;
    int rc;

    if (event == NULL || spare == NULL) {
        onic_error("ptl: PtlEQGetInPlace with a NULL %s: pass where to store it",
                   event == NULL ? "event pointer" : "spare event");
        return onic_ptl_g.init ? PTL_SEGV : PTL_NO_INIT;
    }
    if (onic_ptl_backend_g != NULL) {
        *event = spare;
        return onic_ptl_backend_g->eq_poll(&eq_handle, 1, 0, spare, NULL);
    }
    if ((eq = eq_ready(eq_handle, &rc)) == NULL)
        return rc;
    return onic_ptl_eq_take_inplace(eq, event, spare);
}

onic_ptl_eq_t *onic_ptl_eq_find_local(ptl_handle_eq_t eq_handle)
{
    onic_ptl_ni_t *ni;
    onic_ptl_eq_t *eq;

    if (onic_ptl_backend_g != NULL || onic_ptl_eq_of(eq_handle, &ni, &eq) != PTL_OK ||
        eq->ring == NULL || eq->handler != PTL_EQ_HANDLER_NONE)
        return NULL;
    return eq;
}

/* The queue has no handler (onic_ptl_eq_find_local), and its caller frees
 * it only when done reading: unlike PtlEQGetInPlace, no second lookup
 * after the poll. */
int onic_ptl_eq_get_inplace(onic_ptl_eq_t *eq, const ptl_event_t **event, ptl_event_t *spare)
{
    if (eq->head == eq->tail)
        onic_ptl_ni_progress(eq->ni, 0);
    return onic_ptl_eq_take_inplace(eq, event, spare);
}

/* PtlEQPoll with timeout 0 on such queues of one NI, read in place: the
 * first queue in order with an event; when all are empty, one poll of
 * their NI and the queues again. */
int onic_ptl_eq_poll_inplace(onic_ptl_eq_t *const *eqs, int size, const ptl_event_t **event,
                             ptl_event_t *spare, int *which)
{
    for (int polled = 0;; polled = 1) {
        for (int i = 0; i < size; i++) {
            if (eqs[i]->head != eqs[i]->tail) {
                *which = i;
                return onic_ptl_eq_take_inplace(eqs[i], event, spare);
            }
        }
        if (polled)
            return PTL_EQ_EMPTY;
        onic_ptl_ni_progress(eqs[0]->ni, 0);
    }
}

int PtlEQWait(ptl_handle_eq_t eq_handle, ptl_event_t *event)
{
    return PtlEQPoll(&eq_handle, 1, PTL_TIME_FOREVER, event, NULL);
}

int onic_ptl_eq_poll_check(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout,
                           ptl_event_t *event)
{
    onic_ptl_ni_t *ni = NULL;
    onic_ptl_eq_t *eq;
    int init;

    /* Every call passes here: the good case costs one branch. */
    if (__builtin_expect(eq_handles != NULL && event != NULL && size >= 1 && size <= EQ_POLL_MAX &&
                         (timeout >= 0 || timeout == PTL_TIME_FOREVER), 1))
        return PTL_OK;
    /* Before PtlInit every failure is still PTL_NO_INIT. */
    init = onic_ptl_eq_of(PTL_EQ_NONE, &ni, &eq) != PTL_NO_INIT;
    if (eq_handles == NULL || event == NULL) {
        onic_error("ptl: PtlEQPoll/Wait with a NULL %s", event == NULL ? "event" : "eq_handles");
        return init ? PTL_SEGV : PTL_NO_INIT;
    }
    if (size < 1 || size > EQ_POLL_MAX) {
        onic_error("ptl: PtlEQPoll: size %d; poll 1 to %d event queues", size, EQ_POLL_MAX);
        return init ? PTL_FAIL : PTL_NO_INIT;
    }
    if (timeout < 0 && timeout != PTL_TIME_FOREVER) {
        onic_error("ptl: PtlEQPoll: timeout %d ms; use 0 or more, or PTL_TIME_FOREVER", timeout);
        return init ? PTL_FAIL : PTL_NO_INIT;
    }
    return PTL_OK;
}

int PtlEQPoll(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout, ptl_event_t *event,
              int *which)
{
    onic_ptl_ni_t *ni = NULL;
    onic_ptl_eq_t *eq;
    uint64_t deadline = UINT64_MAX, now;
    int rc, i, polled = 0;

    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->eq_poll(eq_handles, size, timeout, event, which);
    if ((rc = onic_ptl_eq_poll_check(eq_handles, size, timeout, event)) != PTL_OK)
        return rc;
    for (;;) {
        /* Every handle is checked on every round: a handler may free one. */
        for (i = 0; i < size; i++) {
            if ((rc = onic_ptl_eq_of(eq_handles[i], &ni, &eq)) != PTL_OK)
                return rc;
            rc = onic_ptl_eq_take(eq, event);
            if (rc != PTL_EQ_EMPTY) {
                if (which != NULL)
                    *which = i;
                return rc;
            }
        }
        /* The first round only polls: an event already queued, or brought
         * by that poll, costs no clock read. The timeout counts from the
         * end of that poll. */
        if (polled && timeout == 0)
            return PTL_EQ_EMPTY;
        now = polled && timeout != PTL_TIME_FOREVER ? onic_time_ns() : 0;
        if (polled && deadline == UINT64_MAX && timeout != PTL_TIME_FOREVER)
            deadline = now + (uint64_t)timeout * 1000000u;
        if (polled && now >= deadline)
            return PTL_EQ_EMPTY;
        /* Sleeps in the transport when nothing comes (onic_xport_wait). */
        onic_ptl_ni_progress(ni, !polled ? 0 : deadline == UINT64_MAX ? UINT64_MAX
                                                                        : deadline - now);
        polled = 1;
        if (ni->in_progress && timeout == PTL_TIME_FOREVER) {
            onic_error("ptl: PtlEQWait from inside an event handler would wait for ever");
            return PTL_FAIL;
        }
    }
}
