/* An NI with no transport, for tests and the fuzzer: what it sends is
 * captured, and messages are fed straight into the target side. */
#ifndef ONIC_TEST_PTL_HARNESS_H
#define ONIC_TEST_PTL_HARNESS_H

#include "ptl/ptl.h"

#include <string.h>

#define HARNESS_MAX_MSGS 16
#define HARNESS_UID      1000
#define HARNESS_JID      77

typedef struct harness_msg {
    uint32_t        dest;
    onic_ptl_wire_t hdr;
    uint8_t         payload[4096];
    size_t          len;
} harness_msg_t;

static harness_msg_t harness_sent[HARNESS_MAX_MSGS];
static unsigned      harness_nsent;

static onic_status_t harness_send(void *arg, uint32_t dest, const onic_ptl_wire_t *hdr,
                                  const void *payload, size_t len)
{
    harness_msg_t *m;

    (void)arg;
    if (harness_nsent == HARNESS_MAX_MSGS || len > sizeof(m->payload))
        return ONIC_ERR_NO_RESOURCE;
    m = &harness_sent[harness_nsent++];
    m->dest = dest;
    m->hdr = *hdr;
    m->len = len;
    if (len > 0)
        memcpy(m->payload, payload, len);
    return ONIC_OK;
}

static unsigned harness_progress(void *arg, uint64_t timeout_ns)
{
    (void)arg;
    (void)timeout_ns;
    return 0;
}

static const onic_ptl_io_t harness_io = {harness_send, harness_progress, NULL};

/* PtlInit and an NI of rank `rank` in a job of `size` on `engine`. */
static onic_ptl_ni_t *harness_open(uint32_t rank, uint32_t size, const char *engine,
                                   const ptl_ni_limits_t *desired, ptl_handle_ni_t *h_p)
{
    onic_ptl_ni_params_t p;
    onic_ptl_ni_t *ni;
    int n;

    memset(&p, 0, sizeof(p));
    p.rank = rank;
    p.size = size;
    p.uid = HARNESS_UID;
    p.jid = HARNESS_JID;
    p.max_inline = 2048;
    p.engine = engine;
    p.desired = desired;
    p.io = &harness_io;
    harness_nsent = 0;
    if (PtlInit(&n) != PTL_OK || onic_ptl_ni_open(&p, NULL, h_p) != PTL_OK ||
        onic_ptl_ni_of(*h_p, &ni) != PTL_OK)
        return NULL;
    return ni;
}

#endif
