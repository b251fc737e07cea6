/* The transport front end: argument checks, the transport for each peer
 * (self for this process, shm for the rest of the job) and the wait for
 * room, during which this process keeps delivering what arrives so that
 * processes flooding each other cannot deadlock. Also the self transport. */
#include "xport/transport.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"

#include <sched.h>
#include <string.h>

#define XPORT_SPINS_BEFORE_YIELD 64

struct onic_xport {
    onic_xport_params_t params;
    onic_config_t       cfg;
    void               *self;
    void               *shm;   /* NULL in a job of one */
    size_t              max_payload;
};

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
    status = onic_xport_self_ops.open(&x->params, &x->self);
    if (status == ONIC_OK && p->size > 1)
        status = onic_xport_shm_ops.open(&x->params, &x->shm);
    if (status != ONIC_OK) {
        onic_xport_self_ops.close(x->self);
        onic_free(x);
        return status;
    }
    x->max_payload = onic_xport_self_ops.max_payload(x->self);
    if (x->shm != NULL && onic_xport_shm_ops.max_payload(x->shm) < x->max_payload)
        x->max_payload = onic_xport_shm_ops.max_payload(x->shm);
    *x_p = x;
    return ONIC_OK;
}

void onic_xport_close(onic_xport_t *x)
{
    if (x == NULL)
        return;
    if (x->shm != NULL)
        onic_xport_shm_ops.close(x->shm);
    onic_xport_self_ops.close(x->self);
    onic_free(x);
}

unsigned onic_xport_poll(onic_xport_t *x)
{
    unsigned n;

    if (x == NULL)
        return 0;
    n = onic_xport_self_ops.poll(x->self, &x->params);
    if (x->shm != NULL)
        n += onic_xport_shm_ops.poll(x->shm, &x->params);
    return n;
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
    ops = peer == x->params.rank ? &onic_xport_self_ops : &onic_xport_shm_ops;
    state = peer == x->params.rank ? x->self : x->shm;
    /* No room: deliver our own arrivals (the peer may be waiting on us), spin
     * briefly, then let others run. */
    while ((status = ops->send(state, peer, user_hdr, user_len, payload, len)) ==
           ONIC_ERR_NO_RESOURCE) {
        if (onic_xport_poll(x) == 0 && ++spins >= XPORT_SPINS_BEFORE_YIELD) {
            sched_yield();
            spins = 0;
        }
    }
    return status;
}

#define XPORT_YIELDS_BEFORE_SLEEP 16
#define XPORT_SLEEP_MAX_NS        100000000ull /* wake up to re-check now and then */

unsigned onic_xport_wait(onic_xport_t *x, uint64_t timeout_ns)
{
    uint64_t start, now, spin_ns, deadline;
    unsigned n, yields = 0;

    if (x == NULL)
        return 0;
    start = onic_time_ns();
    spin_ns = (uint64_t)x->cfg.wait_spin_us * 1000u;
    deadline = timeout_ns > UINT64_MAX - start ? UINT64_MAX : start + timeout_ns;
    while ((n = onic_xport_poll(x)) == 0) {
        now = onic_time_ns();
        if (now >= deadline)
            return 0;
        if (now - start < spin_ns)
            continue;
        if (yields < XPORT_YIELDS_BEFORE_SLEEP || x->shm == NULL) {
            yields++;
            sched_yield();
            continue;
        }
        onic_xport_shm_ops.sleep(x->shm, deadline - now < XPORT_SLEEP_MAX_NS
                                              ? deadline - now : XPORT_SLEEP_MAX_NS);
    }
    return n;
}

size_t onic_xport_max_payload(const onic_xport_t *x)
{
    return x == NULL ? 0 : x->max_payload;
}

uint64_t onic_xport_drops(const onic_xport_t *x)
{
    return x == NULL || x->shm == NULL ? 0 : onic_xport_shm_ops.drops(x->shm);
}

/* --- self: messages to this process, delivered in order at the next poll.
 * A byte queue of records that grows by doubling and never shrinks, so a
 * steady stream allocates nothing. */

#define SELF_MAX_PAYLOAD 2048u

typedef struct self_rec {
    uint32_t user_len, len;
    uint8_t  user[ONIC_XPORT_USER_HDR];
} self_rec_t;

typedef struct self_state {
    uint8_t *buf;
    size_t   cap, head, tail;  /* records live in buf[head, tail) */
    int      polling;          /* a callback may send to self: no re-entry */
    uint8_t *retired;          /* the buffer a running callback reads, if it grew */
} self_state_t;

static onic_status_t self_open(const onic_xport_params_t *p, void **state_p)
{
    (void)p;
    *state_p = onic_calloc(1, sizeof(self_state_t));
    return *state_p == NULL ? ONIC_ERR_NO_MEMORY : ONIC_OK;
}

static void self_close(void *state)
{
    self_state_t *s = state;
    if (s != NULL)
        onic_free(s->buf);
    onic_free(s);
}

static size_t self_rec_size(size_t len)
{
    return (sizeof(self_rec_t) + len + 7) & ~(size_t)7;
}

static onic_status_t self_send(void *state, uint32_t peer, const void *user_hdr, size_t user_len,
                               const void *payload, size_t len)
{
    self_state_t *s = state;
    size_t need = self_rec_size(len);
    self_rec_t rec;

    (void)peer;
    if (s->tail + need > s->cap) {
        if (s->head > 0 && !s->polling) { /* slide the live records down first */
            memmove(s->buf, s->buf + s->head, s->tail - s->head);
            s->tail -= s->head;
            s->head = 0;
        }
        if (s->tail + need > s->cap) {
            size_t cap = s->cap ? s->cap : 4096;
            uint8_t *buf;
            while (cap < s->tail + need)
                cap *= 2;
            buf = onic_malloc(cap);
            if (buf == NULL) {
                onic_error("xport/self: cannot grow the queue to %zu bytes", cap);
                return ONIC_ERR_NO_MEMORY;
            }
            if (s->tail > 0)
                memcpy(buf, s->buf, s->tail);
            /* A callback delivering from the old buffer may be running: keep
             * that one until the poll ends (later ones nobody reads). */
            if (s->polling && s->retired == NULL)
                s->retired = s->buf;
            else
                onic_free(s->buf);
            s->buf = buf;
            s->cap = cap;
        }
    }
    rec.user_len = (uint32_t)user_len;
    rec.len = (uint32_t)len;
    if (user_len > 0)
        memcpy(rec.user, user_hdr, user_len);
    memcpy(s->buf + s->tail, &rec, sizeof(rec));
    if (len > 0)
        memcpy(s->buf + s->tail + sizeof(rec), payload, len);
    s->tail += need;
    return ONIC_OK;
}

static unsigned self_poll(void *state, const onic_xport_params_t *p)
{
    self_state_t *s = state;
    unsigned n = 0;

    if (s->polling)
        return 0;
    s->polling = 1;
    while (s->head < s->tail) {
        self_rec_t rec;
        size_t at = s->head;
        memcpy(&rec, s->buf + at, sizeof(rec));
        s->head += self_rec_size(rec.len);
        /* Records keep their offsets while polling (no slide), so a send
         * from the callback that grows buf leaves the rest where it was. */
        p->recv_cb(p->cb_arg, p->rank, rec.user, rec.user_len, s->buf + at + sizeof(rec), rec.len);
        n++;
    }
    s->head = s->tail = 0;
    s->polling = 0;
    onic_free(s->retired);
    s->retired = NULL;
    return n;
}

static size_t self_max_payload(const void *state)
{
    (void)state;
    return SELF_MAX_PAYLOAD;
}

static uint64_t self_drops(const void *state)
{
    (void)state;
    return 0;
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
};
