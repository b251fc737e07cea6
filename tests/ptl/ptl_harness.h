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
    size_t          hdr_len;
    uint8_t         payload[4096];
    size_t          len;
} harness_msg_t;

static harness_msg_t harness_sent[HARNESS_MAX_MSGS];
static unsigned      harness_nsent;

static onic_status_t harness_send(void *arg, uint32_t dest, const onic_ptl_wire_t *hdr,
                                  size_t hdr_len, const void *payload, size_t len)
{
    harness_msg_t *m;

    (void)arg;
    if (harness_nsent == HARNESS_MAX_MSGS || len > sizeof(m->payload))
        return ONIC_ERR_NO_RESOURCE;
    m = &harness_sent[harness_nsent++];
    m->dest = dest;
    m->hdr = *hdr;
    m->hdr_len = hdr_len;
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

/* RMA as the tests see it: registrations counted, each RMA recorded to be
 * finished by hand (harness_rma_finish), in one address space. */
#define HARNESS_MAX_RMA 16

typedef struct harness_rma {
    uint32_t        dest;
    int             write;
    void           *local;
    onic_ptl_rkey_t key;
    size_t          len;
    void           *ctx;
} harness_rma_t;

static harness_rma_t harness_rmas[HARNESS_MAX_RMA];
static unsigned      harness_nrma, harness_nreg, harness_ndereg;

static onic_status_t harness_mem_reg(void *arg, void *addr, size_t len, onic_ptl_rkey_t *key_p)
{
    (void)arg;
    key_p->addr = (uint64_t)(uintptr_t)addr;
    key_p->len = len;
    key_p->id = ++harness_nreg;
    return ONIC_OK;
}

static void harness_mem_dereg(void *arg, const onic_ptl_rkey_t *key)
{
    (void)arg;
    (void)key;
    harness_ndereg++;
}

static onic_status_t harness_rma(void *arg, uint32_t peer, int write, void *local,
                                 const onic_ptl_rkey_t *key, uint64_t roffset, size_t len,
                                 void *ctx)
{
    onic_ptl_rkey_t at = *key;

    (void)arg;
    if (harness_nrma == HARNESS_MAX_RMA)
        return ONIC_ERR_NO_RESOURCE;
    /* Recorded as a key of the piece asked for (roffset into the region). */
    at.addr += roffset;
    at.len -= roffset;
    harness_rmas[harness_nrma++] = (harness_rma_t){peer, write, local, at, len, ctx};
    return ONIC_OK;
}

/* Do recorded RMA i as a transport would (status ONIC_OK: copy), then report
 * it to the NI. */
static inline void harness_rma_finish(onic_ptl_ni_t *ni, unsigned i, onic_status_t status)
{
    harness_rma_t *r = &harness_rmas[i];
    void *remote = (void *)(uintptr_t)r->key.addr;

    if (status == ONIC_OK && r->len > 0)
        memcpy(r->write ? remote : r->local, r->write ? r->local : remote, r->len);
    onic_ptl_ni_rma_done(ni, r->ctx, status);
}

/* Whether the harness's RMA counts as one copy by this side alone (for
 * PTL_MD_PUT_PULLED); a test may turn it off. */
static int harness_one_copy_ok = 1;

static int harness_one_copy(void *arg, uint32_t peer)
{
    (void)arg;
    (void)peer;
    return harness_one_copy_ok;
}

static const onic_ptl_io_t harness_io = {
    .send = harness_send,
    .progress = harness_progress,
    .close = NULL,
    .mem_reg = harness_mem_reg,
    .mem_dereg = harness_mem_dereg,
    .rma = harness_rma,
    .one_copy = harness_one_copy,
};

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
    harness_nsent = harness_nrma = harness_nreg = harness_ndereg = 0;
    if (PtlInit(&n) != PTL_OK || onic_ptl_ni_open(&p, NULL, h_p) != PTL_OK ||
        onic_ptl_ni_of(*h_p, &ni) != PTL_OK)
        return NULL;
    return ni;
}

/* A put or get header from the target's point of view. */
static inline onic_ptl_msg_t harness_req(unsigned op, ptl_pt_index_t pt, ptl_match_bits_t bits,
                                         uint64_t len)
{
    onic_ptl_msg_t m;
    memset(&m, 0, sizeof(m));
    m.op = op;
    m.pt_index = pt;
    m.match_bits = bits;
    m.rlength = len;
    m.md = 0x1234;          /* the initiator's MD: opaque to the target */
    m.eq = PTL_EQ_NONE;
    return m;
}

/* m from src into ni's target side, as the NI sends it: a small put
 * without ack in its own 32 bytes, which take the target's straight line,
 * unless whole asks for the whole header (which takes the general steps). */
static inline onic_ptl_out_t harness_feed(onic_ptl_ni_t *ni, uint32_t src,
                                          const onic_ptl_msg_t *m, const void *payload,
                                          size_t len, int whole)
{
    onic_ptl_wire_t w;
    onic_ptl_out_t out;
    size_t hdr_len = onic_ptl_msg_pack(m, &w);

    onic_ptl_target_recv(ni, src, &w, whole ? sizeof(w) : hdr_len, payload, len, &out);
    return out;
}

#endif
