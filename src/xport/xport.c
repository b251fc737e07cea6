/* The transport front end: argument checks, the transport for each peer
 * (self for this process, the one ONIC_XPORT names for the rest of the job)
 * and the wait for room, during which this process keeps draining its own
 * rings so that processes flooding each other cannot deadlock. What it
 * drains is queued (`deferred`) and delivered by the next poll, before
 * anything newer: a callback never runs inside send, so sends complete in
 * the order they are called, even sends made from callbacks. Also RMA
 * argument checks, registrations, the notification queue, and the self
 * transport. */
#include "xport/msgq.h"
#include "xport/transport.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"

#include <limits.h>
#include <sched.h>
#include <string.h>

#define XPORT_SPINS_BEFORE_YIELD 64
/* Messages one poll hands to the caller at most, however many wait (a send
 * that waited for room may have queued thousands): what a caller must make
 * room for between polls -- MPI's event queue -- stays bounded. */
#define XPORT_POLL_MAX 128

/* The transports to other processes, by ONIC_XPORT (in the order of
 * onic_config_xport_values). */
static const onic_xport_ops_t *const xport_transports[] = {
    &onic_xport_shm_ops,
};

static_assert(sizeof(xport_transports) / sizeof(xport_transports[0]) == ONIC_XPORT_COUNT,
              "a transport for every ONIC_XPORT value");

struct onic_xport {
    onic_xport_params_t params;
    onic_config_t       cfg;
    onic_xport_mreg_t   mreg;    /* memory this process exposes to RMA */
    onic_xport_notify_t notify;  /* finished RMA operations, for rma_cb */
    onic_xport_tparams_t tparams;
    void               *self;
    const onic_xport_ops_t *net;  /* to the other processes: ONIC_XPORT */
    void               *peers;    /* net's state; NULL in a job of one */
    size_t              max_payload;
    onic_xport_msgq_t   deferred;       /* drained during send, not yet delivered */
    onic_xport_params_t defer_params;   /* rings' messages go to deferred */
    onic_xport_params_t poll_params;    /* rings' messages go to xport_deliver */
    unsigned            net_delivered;  /* by xport_deliver during this poll */
};

static void xport_defer(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                        const void *payload, size_t len)
{
    onic_xport_t *x = arg;
    /* On failure the message would be lost: there is no way back into the
     * ring. Running out of memory here is logged by the queue. */
    if (onic_xport_msgq_push(&x->deferred, src, user_hdr, user_len, payload, len) != ONIC_OK)
        onic_error("xport: lost a message from rank %u for lack of memory", src);
}

/* A message from a ring during poll: to the caller, unless older ones wait
 * in `deferred` (a callback's send drained them), in which case behind them. */
static void xport_deliver(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                          const void *payload, size_t len)
{
    onic_xport_t *x = arg;

    if (!onic_xport_msgq_empty(&x->deferred))
        xport_defer(x, src, user_hdr, user_len, payload, len);
    else {
        x->net_delivered++;
        x->params.recv_cb(x->params.cb_arg, src, user_hdr, user_len, payload, len);
    }
}

onic_status_t onic_xport_open(const onic_xport_params_t *p, onic_xport_t **x_p)
{
    onic_xport_t *x;
    onic_status_t status;

    if (p == NULL || x_p == NULL || p->recv_cb == NULL || p->cfg == NULL || p->size == 0 ||
        p->rank >= p->size || (p->size > 1 && p->jobid == NULL)) {
        onic_error("xport: open needs a callback, a config, rank < size and, in a job of more "
                   "than one process, a job id (start the job with onicrun)");
        return ONIC_ERR_INVALID_PARAM;
    }
    x = onic_calloc(1, sizeof(*x));
    if (x == NULL)
        return ONIC_ERR_NO_MEMORY;
    x->params = *p;
    x->cfg = *p->cfg;
    x->params.cfg = &x->cfg;
    x->defer_params = x->params;
    x->defer_params.recv_cb = xport_defer;
    x->defer_params.cb_arg = x;
    x->poll_params = x->params;
    x->poll_params.recv_cb = xport_deliver;
    x->poll_params.cb_arg = x;
    x->tparams.p = &x->params;
    x->tparams.mreg = &x->mreg;
    x->tparams.notify = &x->notify;
    x->net = xport_transports[x->cfg.xport];
    status = onic_xport_self_ops.open(&x->tparams, &x->self);
    if (status == ONIC_OK && p->size > 1)
        status = x->net->open(&x->tparams, &x->peers);
    if (status != ONIC_OK) {
        onic_xport_self_ops.close(x->self);
        onic_free(x);
        return status;
    }
    x->max_payload = onic_xport_self_ops.max_payload(x->self);
    if (x->peers != NULL && x->net->max_payload(x->peers) < x->max_payload)
        x->max_payload = x->net->max_payload(x->peers);
    *x_p = x;
    return ONIC_OK;
}

void onic_xport_close(onic_xport_t *x)
{
    if (x == NULL)
        return;
    if (x->peers != NULL)
        x->net->close(x->peers);
    onic_xport_self_ops.close(x->self);
    onic_xport_msgq_fini(&x->deferred);
    onic_xport_mreg_fini(&x->mreg);
    onic_xport_notify_fini(&x->notify);
    onic_free(x);
}

unsigned onic_xport_poll(onic_xport_t *x)
{
    unsigned n;

    if (x == NULL)
        return 0;
    /* What send drained comes first: it is older than what is in the rings.
     * The queues are checked inline: polling an idle endpoint is the
     * latency path. */
    n = 0;
    if (!onic_xport_msgq_empty(&x->deferred)) {
        n += onic_xport_msgq_drain(&x->deferred, XPORT_POLL_MAX, x->params.recv_cb,
                                   x->params.cb_arg);
        if (!onic_xport_msgq_empty(&x->deferred))
            return n; /* the rest, and what is behind it, next time */
    }
    if (!onic_xport_msgq_empty(x->self) && n < XPORT_POLL_MAX) /* self's state is its queue */
        n += onic_xport_self_ops.poll(x->self, &x->params, XPORT_POLL_MAX - n);
    if (x->peers != NULL && n < XPORT_POLL_MAX) {
        x->net->poll(x->peers, &x->poll_params, XPORT_POLL_MAX - n);
        /* Counted when delivered: what a callback's send drained, and what
         * arrived behind it, goes out now, in order. */
        n += x->net_delivered;
        x->net_delivered = 0;
        if (!onic_xport_msgq_empty(&x->deferred) && n < XPORT_POLL_MAX)
            n += onic_xport_msgq_drain(&x->deferred, XPORT_POLL_MAX - n, x->params.recv_cb,
                                       x->params.cb_arg);
    }
    if (!onic_xport_notify_empty(&x->notify))
        n += onic_xport_notify_drain(&x->notify, x->params.rma_cb, x->params.cb_arg);
    return n;
}

/* No room: drain our own rings into `deferred` (the peer may be waiting
 * for room in them) and move RMA along, spin briefly, then let others run. */
static void xport_progress_deferred(onic_xport_t *x, unsigned *spins)
{
    /* Into `deferred`: no caller sees these yet, so no bound. */
    unsigned n = x->peers != NULL ? x->net->poll(x->peers, &x->defer_params, UINT_MAX) : 0;

    if (n == 0 && ++*spins >= XPORT_SPINS_BEFORE_YIELD) {
        sched_yield();
        *spins = 0;
    }
}

onic_status_t onic_xport_send(onic_xport_t *x, uint32_t peer, const void *user_hdr,
                              size_t user_len, const void *payload, size_t len)
{
    const onic_xport_ops_t *ops;
    void *state;
    onic_status_t status;
    unsigned spins = 0;

    if (x == NULL || peer >= x->params.size || user_len > ONIC_XPORT_USER_HDR ||
        len > x->max_payload || (user_len > 0 && user_hdr == NULL) ||
        (len > 0 && payload == NULL)) {
        if (x != NULL && peer >= x->params.size)
            onic_error("xport: send to rank %u, but the job has ranks 0 to %u", peer,
                       x->params.size - 1);
        else if (x != NULL && len > x->max_payload)
            onic_error("xport: a payload of %zu bytes is over the limit of %zu; send larger "
                       "data by RMA (or raise ONIC_SHM_RING_SLOTS)", len, x->max_payload);
        else
            onic_error("xport: send with a NULL endpoint or buffer, or a header of %zu bytes "
                       "(at most %d)", user_len, ONIC_XPORT_USER_HDR);
        return ONIC_ERR_INVALID_PARAM;
    }
    ops = peer == x->params.rank ? &onic_xport_self_ops : x->net;
    state = peer == x->params.rank ? x->self : x->peers;
    while ((status = ops->send(state, peer, user_hdr, user_len, payload, len)) ==
           ONIC_ERR_NO_RESOURCE)
        xport_progress_deferred(x, &spins);
    return status;
}

#define XPORT_YIELDS_BEFORE_SLEEP 16
#define XPORT_POLLS_PER_CLOCK     32
#define XPORT_SLEEP_MAX_NS        100000000ull /* wake up to re-check now and then */

unsigned onic_xport_wait(onic_xport_t *x, uint64_t timeout_ns)
{
    uint64_t start, now, spin_ns, deadline;
    unsigned n, yields = 0, polls = 0;

    if (x == NULL)
        return 0;
    start = onic_time_ns();
    spin_ns = (uint64_t)x->cfg.wait_spin_us * 1000u;
    deadline = timeout_ns > UINT64_MAX - start ? UINT64_MAX : start + timeout_ns;
    while ((n = onic_xport_poll(x)) == 0) {
        /* Reading the clock costs more than an idle poll: while spinning,
         * look at it only now and then. */
        if (++polls % XPORT_POLLS_PER_CLOCK != 0 && timeout_ns != 0)
            continue;
        now = onic_time_ns();
        if (now >= deadline)
            return 0;
        if (now - start < spin_ns)
            continue;
        if (yields < XPORT_YIELDS_BEFORE_SLEEP || x->peers == NULL || x->net->sleep == NULL) {
            yields++;
            sched_yield();
            continue;
        }
        x->net->sleep(x->peers, deadline - now < XPORT_SLEEP_MAX_NS
                                              ? deadline - now : XPORT_SLEEP_MAX_NS);
    }
    return n;
}

onic_status_t onic_xport_mem_reg(onic_xport_t *x, void *addr, size_t len, onic_xport_mkey_t *key_p)
{
    onic_status_t status;

    if (x == NULL || key_p == NULL || (addr == NULL && len > 0)) {
        onic_error("xport: mem_reg needs an endpoint, a key to fill and, for a non-empty "
                   "range, an address");
        return ONIC_ERR_INVALID_PARAM;
    }
    status = onic_xport_mreg_add(&x->mreg, addr, len, key_p);
    if (status != ONIC_OK)
        onic_error("xport: cannot register %zu bytes at %p: %s", len, addr,
                   onic_status_str(status));
    return status;
}

onic_status_t onic_xport_mem_dereg(onic_xport_t *x, const onic_xport_mkey_t *key)
{
    if (x == NULL || key == NULL) {
        onic_error("xport: mem_dereg with a NULL endpoint or key");
        return ONIC_ERR_INVALID_PARAM;
    }
    return onic_xport_mreg_del(&x->mreg, key);
}

/* RMA to oneself: the owner is here, so the range is checked against the
 * registration too, and the copy is done at once. */
static onic_status_t xport_self_rma(onic_xport_t *x, int write, void *local,
                                    const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len)
{
    void *remote = onic_xport_mreg_find(&x->mreg, rkey, roffset, len);

    if (remote == NULL)
        return ONIC_ERR_INVALID_PARAM;
    if (write)
        memmove(remote, local, len);
    else
        memmove(local, remote, len);
    return ONIC_OK;
}

static onic_status_t xport_rma(onic_xport_t *x, uint32_t peer, int write, void *local,
                               const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len,
                               void *ctx)
{
    const char *what = write ? "rma_write" : "rma_read";
    onic_status_t status;
    unsigned spins = 0;

    if (x == NULL || peer >= x->params.size || rkey == NULL || (local == NULL && len > 0) ||
        x->params.rma_cb == NULL) {
        if (x != NULL && peer >= x->params.size)
            onic_error("xport: %s to rank %u, but the job has ranks 0 to %u", what, peer,
                       x->params.size - 1);
        else if (x != NULL && x->params.rma_cb == NULL)
            onic_error("xport: %s on an endpoint opened without an rma_cb to report it to",
                       what);
        else
            onic_error("xport: %s with a NULL endpoint, key or buffer", what);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (!onic_xport_mkey_covers(rkey->len, roffset, len)) {
        onic_error("xport: %s of %zu bytes at offset %llu is outside the %llu bytes the key "
                   "names", what, len, (unsigned long long)roffset,
                   (unsigned long long)rkey->len);
        return ONIC_ERR_INVALID_PARAM;
    }
    status = onic_xport_notify_reserve(&x->notify);
    if (status != ONIC_OK)
        return status;
    if (peer == x->params.rank) {
        onic_xport_notify_post(&x->notify, ctx, xport_self_rma(x, write, local, rkey, roffset,
                                                               len));
        return ONIC_OK;
    }
    if (len == 0) {
        onic_xport_notify_post(&x->notify, ctx, ONIC_OK);
        return ONIC_OK;
    }
    if (x->net->rma == NULL) {
        onic_xport_notify_unreserve(&x->notify);
        onic_error("xport: the %s transport has no RMA", x->net->name);
        return ONIC_ERR_UNSUPPORTED;
    }
    /* Too many in flight with this peer: move them along until one ends. */
    while ((status = x->net->rma(x->peers, peer, write, local, rkey, roffset, len,
                                            ctx)) == ONIC_ERR_NO_RESOURCE)
        xport_progress_deferred(x, &spins);
    if (status != ONIC_OK)
        onic_xport_notify_unreserve(&x->notify);
    return status;
}

onic_status_t onic_xport_rma_read(onic_xport_t *x, uint32_t peer, void *local,
                                  const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len,
                                  void *ctx)
{
    return xport_rma(x, peer, 0, local, rkey, roffset, len, ctx);
}

onic_status_t onic_xport_rma_write(onic_xport_t *x, uint32_t peer, const void *local,
                                   const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len,
                                   void *ctx)
{
    return xport_rma(x, peer, 1, (void *)(uintptr_t)local, rkey, roffset, len, ctx);
}

unsigned onic_xport_caps(const onic_xport_t *x, uint32_t peer)
{
    if (x == NULL || peer >= x->params.size)
        return 0;
    if (peer == x->params.rank)
        return onic_xport_self_ops.caps(x->self, peer);
    return x->net->caps(x->peers, peer);
}

size_t onic_xport_max_payload(const onic_xport_t *x)
{
    return x == NULL ? 0 : x->max_payload;
}

uint64_t onic_xport_drops(const onic_xport_t *x)
{
    return x == NULL || x->peers == NULL ? 0 : x->net->drops(x->peers);
}

/* --- self: messages to this process, queued and delivered in order at the
 * next poll. */

static onic_status_t self_open(const onic_xport_tparams_t *tp, void **state_p)
{
    (void)tp;
    *state_p = onic_calloc(1, sizeof(onic_xport_msgq_t));
    return *state_p == NULL ? ONIC_ERR_NO_MEMORY : ONIC_OK;
}

static void self_close(void *state)
{
    if (state != NULL)
        onic_xport_msgq_fini(state);
    onic_free(state);
}

static onic_status_t self_send(void *state, uint32_t peer, const void *user_hdr, size_t user_len,
                               const void *payload, size_t len)
{
    return onic_xport_msgq_push(state, peer, user_hdr, user_len, payload, len);
}

static unsigned self_poll(void *state, const onic_xport_params_t *p, unsigned max)
{
    return onic_xport_msgq_drain(state, max, p->recv_cb, p->cb_arg);
}

static size_t self_max_payload(const void *state)
{
    (void)state;
    return ONIC_XPORT_MAX_PAYLOAD;
}

static uint64_t self_drops(const void *state)
{
    (void)state;
    return 0;
}

static unsigned self_caps(const void *state, uint32_t peer)
{
    (void)state;
    (void)peer;
    return ONIC_XPORT_CAP_RMA; /* done by the front end: the owner is here */
}

const onic_xport_ops_t onic_xport_self_ops = {
    .name        = "self",
    .open        = self_open,
    .close       = self_close,
    .send        = self_send,
    .poll        = self_poll,
    .max_payload = self_max_payload,
    .drops       = self_drops,
    .sleep       = NULL, /* its messages come from this process: nothing to wait for */
    .rma         = NULL, /* the front end copies: see xport_self_rma */
    .caps        = self_caps,
};
