/* The transport front end: argument checks, the transport for each peer
 * (self for this process, shm for the others on this node, ofi for other
 * nodes', as the launcher placed them and ONIC_XPORT allows), and the
 * backlog: a send never waits for its peer. A message the peer has no room
 * for yet is copied into that peer's backlog, and every later one to that
 * peer goes behind it; each poll (and each send to the peer) sends what
 * has room by then, in order. So a sender never depends on what its
 * receiver is doing, which is what makes MPI's nonblocking calls local.
 * Waits that remain (RMA with too many in flight, a bundle that cannot
 * leave, a backlog that cannot grow) keep draining this process's own
 * transports so that processes flooding each other cannot deadlock; what
 * they drain is queued (`deferred`) and delivered by the next poll, before
 * anything newer: a callback never runs inside send. Also RMA argument
 * checks, registrations, the notification queue, and the self transport.
 *
 * Opening a job learnt from the launcher: the node's first rank makes up an
 * unguessable name for the node's shared memory (unless the launcher gave
 * one) and ofi publishes its address, both through the launcher's store,
 * then one fence; shm then opens among the node's ranks only, numbered 0 to
 * n-1 in rank order, and ofi looks addresses up when it first needs them. */
#include "xport/msgq.h"
#include "xport/transport.h"
#include "base/clock.h"
#include "base/copy.h"
#include "base/dl.h"
#include "base/log.h"
#include "base/mem.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define XPORT_SPINS_BEFORE_YIELD 64
/* Messages one poll hands to the caller at most, however many wait (a send
 * that waited for room may have queued thousands): what a caller must make
 * room for between polls -- MPI's event queue -- stays bounded. */
#define XPORT_POLL_MAX 128

/* The transports to other processes, by route. */
enum { XPORT_SELF = 0, XPORT_SHM = 1, XPORT_OFI = 2, XPORT_NTR = 3 };
static const char *const xport_route_names[XPORT_NTR] = {"self", "shm", "ofi"};

typedef struct xport_tr {
    const onic_xport_ops_t *ops;
    void                   *state;      /* NULL: not open */
    struct onic_xport      *x;
    const uint32_t         *ranks;      /* transport's numbering -> job rank; NULL: the same */
    onic_xport_params_t     params;     /* rank and size in the transport's numbering */
    onic_xport_params_t     defer_params;  /* messages go to deferred */
    onic_xport_params_t     poll_params;   /* messages go to xport_tr_deliver, or straight to
                                              the caller (direct) */
    int                     direct;        /* ops->holds, in the job's numbering */
    onic_xport_tparams_t    tp;
} xport_tr_t;

/* Where a send to a peer goes: its transport's send, state, and the peer's
 * number there. Filled at open from route and index, so that a send is one
 * table entry and one call (self included: its send queues). */
typedef struct xport_dest {
    onic_status_t (*send)(void *state, uint32_t peer, const void *user_hdr, size_t user_len,
                          const void *payload, size_t len);
    void          *state;
    uint32_t       idx;
    uint32_t       queued; /* messages in this peer's backlog */
    int            queues; /* send hands what has no room to tp->full (ops->queues) */
} xport_dest_t;

struct onic_xport {
    onic_xport_params_t params;
    onic_config_t       cfg;
    onic_xport_mreg_t   mreg;    /* memory this process exposes to RMA */
    onic_xport_notify_t notify;  /* finished RMA operations, for rma_cb */
    void               *self;
    xport_tr_t          tr[XPORT_NTR];  /* [XPORT_SHM], [XPORT_OFI]; [XPORT_SELF] unused */
    xport_tr_t         *open[XPORT_NTR];/* the open ones, nopen of them */
    unsigned            nopen;
    unsigned            poll_first; /* which open transport a poll starts with */
    uint8_t            *route;   /* by peer: XPORT_SELF, _SHM or _OFI */
    xport_dest_t       *dest;    /* by peer: where a send goes, looked up once at open */
    uint32_t           *index;   /* by peer: its number in its transport; NULL: the rank */
    uint8_t            *serve_ofi;  /* by peer: 1 if ofi carries it */
    onic_boot_t        *boot;    /* NULL for a job given by params */
    char                jobid[17];
    char                nodeid[ONIC_BOOT_JOBID_MAX + 1];
    size_t              max_payload;
    onic_xport_msgq_t   deferred;       /* drained during a wait, not yet delivered */
    onic_xport_msgq_t  *backlog;        /* by peer: sent, waiting for room (dest's queued) */
    uint64_t            queued;         /* messages in all backlogs */
    int                 flushing;       /* a backlog is being sent: tp->full refuses */
    onic_status_t       flush_failed;   /* how a backlog's send failed, if it did */
    unsigned            net_delivered;  /* by xport_tr_deliver during this poll */
    /* deferred is not empty (params.held): kept as a flag, set where
     * deferred is filled or drained, so that shm's poll reads one word a
     * message, not the queue's two. */
    int                 held;
    /* The wait policy (ONIC_WAIT), fixed at open: how long a wait spins,
     * and whether this node has more processes than cores. */
    uint64_t            wait_spin_ns;
    int                 wait_sleeps;
    unsigned            room_spins;     /* empty polls before a sender short of room yields */
};

/* A transport polled with defer_params is never held. */
static const int xport_never_held = 0;

static void xport_defer(onic_xport_t *x, uint32_t src, const void *user_hdr, size_t user_len,
                        const void *payload, size_t len)
{
    /* On failure the message would be lost: there is no way back into the
     * ring. Running out of memory here is logged by the queue. */
    if (onic_xport_msgq_push(&x->deferred, src, user_hdr, user_len, payload, len) != ONIC_OK)
        onic_error("xport: lost a message from rank %u for lack of memory", src);
    x->held = !onic_xport_msgq_empty(&x->deferred);
}

static void xport_tr_defer(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                           const void *payload, size_t len)
{
    xport_tr_t *t = arg;
    xport_defer(t->x, t->ranks != NULL ? t->ranks[src] : src, user_hdr, user_len, payload, len);
}

/* A message from a transport during poll: to the caller, unless older ones
 * wait in `deferred` (a callback's send drained them), in which case behind
 * them. */
static void xport_tr_deliver(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                             const void *payload, size_t len)
{
    xport_tr_t *t = arg;
    onic_xport_t *x = t->x;

    if (t->ranks != NULL)
        src = t->ranks[src];
    if (!onic_xport_msgq_empty(&x->deferred))
        xport_defer(x, src, user_hdr, user_len, payload, len);
    else {
        x->net_delivered++;
        x->params.recv_cb(x->params.cb_arg, src, user_hdr, user_len, payload, len);
    }
}

static onic_status_t xport_tr_full(void *arg, uint32_t peer, const void *user_hdr,
                                   size_t user_len, const void *payload, size_t len);

static void xport_tr_setup(onic_xport_t *x, unsigned which, const onic_xport_ops_t *ops,
                           uint32_t rank, uint32_t size, const char *jobid, const uint32_t *ranks)
{
    xport_tr_t *t = &x->tr[which];

    t->ops = ops;
    t->x = x;
    t->ranks = ranks;
    t->params = x->params;
    t->params.rank = rank;
    t->params.size = size;
    t->params.jobid = jobid;
    t->params.held = &xport_never_held;
    t->defer_params = t->params;
    t->defer_params.recv_cb = xport_tr_defer;
    t->defer_params.cb_arg = t;
    /* Only a transport that delivers to the caller itself, in order, may
     * hand it a message ahead of its data. */
    t->defer_params.place_cb = NULL;
    t->defer_params.placed_cb = NULL;
    t->poll_params = t->params;
    /* A transport that stops at older messages, in the job's numbering,
     * delivers to the caller itself: one call a message, not two. */
    t->direct = ops->holds && ranks == NULL;
    if (t->direct) {
        t->poll_params.held = &x->held;
    } else {
        t->poll_params.recv_cb = xport_tr_deliver;
        t->poll_params.cb_arg = t;
        t->poll_params.place_cb = NULL;
        t->poll_params.placed_cb = NULL;
    }
    t->tp.p = &t->params;
    t->tp.mreg = &x->mreg;
    t->tp.notify = &x->notify;
    t->tp.boot = x->boot;
    t->tp.serve = which == XPORT_OFI ? x->serve_ofi : NULL;
    t->tp.ranks = ranks;
    t->tp.full = xport_tr_full;
    t->tp.full_arg = t;
}

static onic_status_t xport_tr_open(onic_xport_t *x, unsigned which)
{
    xport_tr_t *t = &x->tr[which];
    onic_status_t status;

    status = t->ops->open(&t->tp, &t->state);
    if (status == ONIC_OK)
        x->open[x->nopen++] = t;
    return status;
}

/* A 16-hex-digit id for the whole job: onicrun's own, or a hash of the
 * launcher's name for the job (every process hashes the same name). */
static void xport_jobid(onic_xport_t *x, const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t len = strspn(name, "0123456789abcdef");

    if (len > 0 && len <= 16 && name[len] == '\0') {
        memcpy(x->jobid, name, len + 1);
        return;
    }
    for (const char *p = name; *p != '\0'; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    snprintf(x->jobid, sizeof(x->jobid), "%016llx", (unsigned long long)h);
}

/* Which transport reaches each peer, from where the launcher put it. */
static onic_status_t xport_routes(onic_xport_t *x)
{
    onic_boot_t *b = x->boot;
    uint32_t n = x->params.size, nofi = 0;

    x->route = onic_calloc(n, 1);
    x->serve_ofi = onic_calloc(n, 1);
    if (x->route == NULL || x->serve_ofi == NULL)
        return ONIC_ERR_NO_MEMORY;
    for (uint32_t r = 0; r < n; r++) {
        int local = b == NULL || onic_boot_is_local(b, r);
        if (r == x->params.rank)
            x->route[r] = XPORT_SELF;
        else if (local && x->cfg.xport != ONIC_XPORT_OFI)
            x->route[r] = XPORT_SHM;
        else if (!local && x->cfg.xport == ONIC_XPORT_SHM) {
            onic_error("xport: ONIC_XPORT=shm, but rank %u runs on another node; use "
                       "ONIC_XPORT=auto (shm on this node, ofi between nodes)", r);
            return ONIC_ERR_INVALID_PARAM;
        } else {
            x->route[r] = XPORT_OFI;
            x->serve_ofi[r] = 1;
            nofi++;
        }
    }
    onic_debug("xport: rank %u reaches %u ranks by shm and %u by ofi", x->params.rank,
               b == NULL ? n - 1 : (x->cfg.xport == ONIC_XPORT_OFI ? 0 : b->nlocal - 1), nofi);
    return ONIC_OK;
}

/* Where a process's start-up goes, for ONIC_LOG=debug: nanoseconds in
 * each step of xport_open_booted, and in loading libraries (inside boot
 * for PMIx, inside ofi for libfabric). */
typedef struct xport_startup {
    uint64_t t0, boot, ofi, fence, shm, dl;
} xport_startup_t;

/* The time since the last mark, and a new mark. */
static uint64_t xport_lap(xport_startup_t *st)
{
    uint64_t now = onic_time_ns(), dt = now - st->t0;

    st->t0 = now;
    return dt;
}

/* How long ago the kernel started this process, in ms (to its clock tick,
 * 10 ms): what the program's own start (the dynamic loader, libraries'
 * constructors) took before onic was called; -1 if unknown. */
static double xport_process_age_ms(void)
{
    char buf[1024], *p;
    unsigned long long start = 0;
    long tick = sysconf(_SC_CLK_TCK);
    struct timespec now;
    size_t len;
    FILE *f = fopen("/proc/self/stat", "r");

    if (f == NULL)
        return -1;
    len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    p = strrchr(buf, ')'); /* after the command's name, which may hold anything */
    for (int field = 2; p != NULL && field < 22; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL || sscanf(p, " %llu", &start) != 1 || tick <= 0 ||
        clock_gettime(CLOCK_BOOTTIME, &now) != 0)
        return -1;
    return ((double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6) -
           (double)start * 1e3 / (double)tick;
}

static void xport_startup_log(const onic_xport_t *x, const xport_startup_t *st)
{
    if (!onic_log_enabled(ONIC_LOG_DEBUG))
        return;
    onic_debug("xport: rank %u start-up %.2f ms: bootstrap %.2f (%s), ofi %.2f, exchange "
               "through the launcher %.2f, shared memory %.2f; of these, loading libraries "
               "%.2f; the process began %.0f ms ago", x->params.rank,
               (double)(st->boot + st->ofi + st->fence + st->shm) / 1e6, (double)st->boot / 1e6,
               x->boot != NULL ? x->boot->ops->name : "none", (double)st->ofi / 1e6,
               (double)st->fence / 1e6, (double)st->shm / 1e6, (double)st->dl / 1e6,
               xport_process_age_ms());
}

static onic_status_t xport_open_steps(onic_xport_t *x, xport_startup_t *st);

/* The job from the launcher: routes, the node's shared-memory name and the
 * transports' addresses through the store, then the transports. */
static onic_status_t xport_open_booted(onic_xport_t *x)
{
    xport_startup_t st = {0};
    uint64_t dl0 = onic_dl_total_ns();
    onic_status_t status;

    st.t0 = onic_time_ns();
    status = xport_open_steps(x, &st);
    st.dl = onic_dl_total_ns() - dl0;
    if (status == ONIC_OK)
        xport_startup_log(x, &st);
    return status;
}

static onic_status_t xport_open_steps(onic_xport_t *x, xport_startup_t *st)
{
    onic_boot_t *b;
    onic_status_t status;
    uint32_t nshm;
    int need_fence, need_nodeid;

    status = onic_boot_open(&x->cfg, &x->boot);
    st->boot = xport_lap(st);
    if (status != ONIC_OK)
        return status;
    b = x->boot;
    x->params.rank = b->rank;
    x->params.size = b->size;
    xport_jobid(x, b->jobid);
    status = xport_routes(x);
    if (status != ONIC_OK)
        return status;
    nshm = x->cfg.xport == ONIC_XPORT_OFI ? 0 : b->nlocal - 1;
    /* Whether anybody needs the store is the same answer everywhere: the
     * launcher, ONIC_XPORT and "the job spans nodes" are. */
    need_nodeid = nshm > 0;
    need_fence = b->size > 1 && (need_nodeid || x->cfg.xport == ONIC_XPORT_OFI ||
                                 b->nlocal < b->size);
    if (need_nodeid) {
        /* The node's first rank names, afresh each time, the socket over
         * which the node's processes exchange their shared memory (shm.c);
         * the name is in the launcher's store, which only the job's
         * processes read, with every process's pid for the exchange to
         * check who connects. */
        onic_xport_shm_who_t who;
        onic_xport_shm_who(&who);
        if (b->rank == b->local[0]) {
            uint8_t rnd[8];
            if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
                onic_error("xport: no random bytes to name this node's exchange: %m");
                return ONIC_ERR_IO;
            }
            for (int i = 0; i < 8; i++)
                snprintf(x->nodeid + 2 * i, 3, "%02x", rnd[i]);
            status = onic_boot_put(b, "shm-node", x->nodeid, 16);
            if (status != ONIC_OK)
                return status;
        }
        status = onic_boot_put(b, "shm-pid", &who, sizeof(who));
        if (status != ONIC_OK)
            return status;
    }
    st->boot += xport_lap(st); /* routes and the node's name */
    for (uint32_t r = 0; r < b->size; r++) {
        if (x->serve_ofi[r]) { /* ofi puts its address before the fence */
            xport_tr_setup(x, XPORT_OFI, &onic_xport_ofi_ops, b->rank, b->size, x->jobid, NULL);
            status = xport_tr_open(x, XPORT_OFI);
            if (status != ONIC_OK)
                return status;
            break;
        }
    }
    st->ofi = xport_lap(st);
    if (need_fence) {
        status = onic_boot_fence(b);
        if (status != ONIC_OK)
            return status;
    }
    if (nshm == 0) {
        st->fence = xport_lap(st);
        return ONIC_OK;
    }
    if (b->rank != b->local[0]) {
        size_t len = 16;
        status = onic_boot_get(b, b->local[0], "shm-node", x->nodeid, &len);
        if (status != ONIC_OK)
            return status;
        if (len != 16 || strspn(x->nodeid, "0123456789abcdef") < 16) {
            onic_error("xport: rank %u named this node's shared memory oddly", b->local[0]);
            return ONIC_ERR_IO;
        }
        x->nodeid[16] = '\0';
    }
    st->fence = xport_lap(st);
    if (b->nlocal < b->size) {
        /* shm numbers the node's ranks 0 to n-1. */
        x->index = onic_calloc(b->size, sizeof(*x->index));
        if (x->index == NULL)
            return ONIC_ERR_NO_MEMORY;
        for (uint32_t i = 0; i < b->nlocal; i++)
            x->index[b->local[i]] = i;
        xport_tr_setup(x, XPORT_SHM, &onic_xport_shm_ops, b->local_index, b->nlocal, x->nodeid,
                       b->local);
    } else {
        xport_tr_setup(x, XPORT_SHM, &onic_xport_shm_ops, b->rank, b->size, x->nodeid, NULL);
    }
    status = xport_tr_open(x, XPORT_SHM);
    st->shm = xport_lap(st);
    return status;
}

/* The transport to peer and the peer's number in it. */
static inline xport_tr_t *xport_peer(onic_xport_t *x, uint32_t peer, uint32_t *idx_p)
{
    xport_tr_t *t = &x->tr[x->route[peer]];

    *idx_p = t->ranks != NULL ? x->index[peer] : peer;
    return t;
}

static void xport_backlog_close(onic_xport_t *x);
static void xport_backlog_flush(onic_xport_t *x);

void onic_xport_close(onic_xport_t *x)
{
    if (x == NULL)
        return;
    if (x->backlog != NULL)
        xport_backlog_close(x);
    for (unsigned i = 0; i < x->nopen; i++)
        x->open[i]->ops->close(x->open[i]->state);
    if (x->self != NULL)
        onic_xport_self_ops.close(x->self);
    onic_xport_msgq_fini(&x->deferred);
    onic_xport_mreg_fini(&x->mreg);
    onic_xport_notify_fini(&x->notify);
    onic_free(x->route);
    onic_free(x->dest);
    onic_free(x->backlog);
    onic_free(x->index);
    onic_free(x->serve_ofi);
    onic_boot_close(x->boot);
    onic_free(x);
}

/* ONIC_WAIT: with more processes on this node than cores, a process that
 * spins waiting for a message holds the core the sender needs to send it,
 * so the waits do not spin (see onic_xport_wait); otherwise they spin
 * ONIC_WAIT_SPIN_US, as ever. */
static void xport_wait_policy(onic_xport_t *x)
{
    unsigned nlocal = x->boot != NULL ? x->boot->nlocal : x->params.size;

    x->wait_sleeps = onic_config_wait_sleeps(&x->cfg, nlocal + (x->cfg.onload != 0));
    x->wait_spin_ns = x->wait_sleeps ? 0 : (uint64_t)x->cfg.wait_spin_us * 1000u;
    x->room_spins = x->wait_sleeps ? 1 : XPORT_SPINS_BEFORE_YIELD;
    onic_debug("xport: rank %u: %u processes on this node, waits %s", x->params.rank, nlocal,
               x->wait_sleeps ? "sleep without spinning (more processes than cores)"
                              : "spin, then sleep");
}

onic_status_t onic_xport_open(const onic_xport_params_t *p, onic_xport_t **x_p)
{
    onic_xport_t *x;
    onic_status_t status;

    if (p == NULL || x_p == NULL || p->recv_cb == NULL || p->cfg == NULL ||
        (p->place_cb == NULL) != (p->placed_cb == NULL) ||
        (p->size > 0 && p->rank >= p->size) || (p->size > 1 && p->jobid == NULL)) {
        onic_error("xport: open needs a callback (place_cb and placed_cb both or neither), a "
                   "config and either size 0 (ask the launcher) or rank < size and, in a job "
                   "of more than one process, a job id");
        return ONIC_ERR_INVALID_PARAM;
    }
    x = onic_calloc(1, sizeof(*x));
    if (x == NULL)
        return ONIC_ERR_NO_MEMORY;
    x->params = *p;
    x->params.held = &xport_never_held;
    x->cfg = *p->cfg;
    x->params.cfg = &x->cfg;
    /* Until the job is known (xport_wait_policy): as with a core each. */
    x->wait_spin_ns = (uint64_t)x->cfg.wait_spin_us * 1000u;
    x->room_spins = XPORT_SPINS_BEFORE_YIELD;
    status = onic_xport_self_ops.open(NULL, &x->self);
    if (status == ONIC_OK && p->size == 0) {
        status = xport_open_booted(x);
    } else if (status == ONIC_OK && p->size > 1) {
        /* A job of one node, given: everyone else by shm, which exchanges
         * its memory through the launcher's store, so the launcher must
         * agree on who is who. */
        if (x->cfg.xport == ONIC_XPORT_OFI)
            onic_warn("xport: ONIC_XPORT=ofi needs a job learnt from its launcher; this "
                      "endpoint was given its job, so it uses shm");
        x->cfg.xport = ONIC_XPORT_SHM;
        status = xport_open_booted(x);
        if (status == ONIC_OK && (x->params.rank != p->rank || x->params.size != p->size ||
                                  x->boot->nlocal != x->boot->size)) {
            onic_error("xport: this endpoint was given rank %u of %u on one node, but its "
                       "launcher says rank %u of %u, %u on this node; start it with onicrun "
                       "-n %u", p->rank, p->size, x->params.rank, x->params.size,
                       x->boot->nlocal, p->size);
            status = ONIC_ERR_INVALID_PARAM;
        }
    } else if (status == ONIC_OK) {
        xport_jobid(x, p->jobid != NULL ? p->jobid : "");
        x->cfg.xport = ONIC_XPORT_SHM;
        status = xport_routes(x);
    }
    if (status != ONIC_OK && onic_boot_is_launcher(x->boot) && x->boot->size > 1)
        /* The others may be in the launcher's fence, which would never
         * end: the launcher ends the job instead. */
        onic_boot_abort(x->boot, 1, "cannot open this process's transports (see the errors "
                        "above)");
    if (status != ONIC_OK) {
        onic_xport_close(x);
        return status;
    }
    x->dest = onic_calloc(x->params.size, sizeof(*x->dest));
    x->backlog = onic_calloc(x->params.size, sizeof(*x->backlog));
    if (x->dest == NULL || x->backlog == NULL) {
        onic_xport_close(x);
        return ONIC_ERR_NO_MEMORY;
    }
    for (uint32_t r = 0; r < x->params.size; r++) {
        if (x->route[r] == XPORT_SELF) {
            x->dest[r] = (xport_dest_t){onic_xport_self_ops.send, x->self, r, 0, 1};
        } else {
            uint32_t idx;
            xport_tr_t *t = xport_peer(x, r, &idx);
            x->dest[r] = (xport_dest_t){t->ops->send, t->state, idx, 0, t->ops->queues};
        }
    }
    xport_wait_policy(x);
    x->max_payload = onic_xport_self_ops.max_payload(x->self);
    for (unsigned i = 0; i < x->nopen; i++)
        if (x->open[i]->ops->max_payload(x->open[i]->state) < x->max_payload)
            x->max_payload = x->open[i]->ops->max_payload(x->open[i]->state);
    *x_p = x;
    return ONIC_OK;
}

/* Callbacks run outside a transport's poll (RMA completions, what a send
 * drained) may answer into a bundle: a poll of no messages sends what the
 * transports hold, as every poll does first. */
static void xport_flush_held(onic_xport_t *x)
{
    for (unsigned i = 0; i < x->nopen; i++)
        if (x->open[i]->ops->bundle != NULL)
            x->open[i]->ops->poll(x->open[i]->state, &x->open[i]->poll_params, 0);
}

unsigned onic_xport_poll(onic_xport_t *x)
{
    unsigned n;
    int answered = 0; /* callbacks ran outside a transport's poll */

    if (x == NULL)
        return 0;
    if (__builtin_expect(x->queued > 0, 0))
        xport_backlog_flush(x);
    /* What a wait drained comes first: it is older than what is in the rings.
     * The queues are checked inline: polling an idle endpoint is the
     * latency path. */
    n = 0;
    if (!onic_xport_msgq_empty(&x->deferred)) {
        n += onic_xport_msgq_drain(&x->deferred, XPORT_POLL_MAX, x->params.recv_cb,
                                   x->params.cb_arg);
        x->held = !onic_xport_msgq_empty(&x->deferred);
        if (!onic_xport_msgq_empty(&x->deferred)) {
            xport_flush_held(x);
            return n; /* the rest, and what is behind it, next time */
        }
        answered = 1;
    }
    if (!onic_xport_msgq_empty(x->self) && n < XPORT_POLL_MAX) /* self's state is its queue */
        n += onic_xport_self_ops.poll(x->self, &x->params, XPORT_POLL_MAX - n);
    /* Each poll starts with the next transport: one that always has
     * something must not take the whole budget every time. */
    if (x->nopen > 1 && ++x->poll_first >= x->nopen)
        x->poll_first = 0;
    for (unsigned k = 0; k < x->nopen && n < XPORT_POLL_MAX; k++) {
        xport_tr_t *t = x->open[(x->poll_first + k) % x->nopen];
        unsigned got = t->ops->poll(t->state, &t->poll_params, XPORT_POLL_MAX - n);
        /* Counted when delivered (a direct transport counts its own): what
         * a wait inside a callback set aside, and what arrived behind it,
         * goes out now, in order. */
        n += t->direct ? got : x->net_delivered;
        x->net_delivered = 0;
        if (!onic_xport_msgq_empty(&x->deferred) && n < XPORT_POLL_MAX) {
            n += onic_xport_msgq_drain(&x->deferred, XPORT_POLL_MAX - n, x->params.recv_cb,
                                       x->params.cb_arg);
            x->held = !onic_xport_msgq_empty(&x->deferred);
            answered = 1;
        }
    }
    if (!onic_xport_notify_empty(&x->notify)) {
        n += onic_xport_notify_drain(&x->notify, x->params.rma_cb, x->params.cb_arg);
        answered = 1;
    }
    if (answered)
        xport_flush_held(x);
    return n;
}

/* No room: drain our own transports into `deferred` (the peer may be
 * waiting for room in them) and move RMA along, spin briefly, then let
 * others run. */
static void xport_progress_deferred(onic_xport_t *x, unsigned *spins)
{
    unsigned n = 0;

    /* Into `deferred`: no caller sees these yet, so no bound. */
    for (unsigned i = 0; i < x->nopen; i++)
        n += x->open[i]->ops->poll(x->open[i]->state, &x->open[i]->defer_params, UINT_MAX);
    if (n == 0 && ++*spins >= x->room_spins) {
        sched_yield();
        *spins = 0;
    }
}

/* --- The backlog --------------------------------------------------------------------------- */
/* Keep a message for peer behind what is already kept for it. */
static onic_status_t xport_backlog_push(onic_xport_t *x, uint32_t peer, const void *user_hdr,
                                        size_t user_len, const void *payload, size_t len)
{
    onic_status_t status =
        onic_xport_msgq_push(&x->backlog[peer], peer, user_hdr, user_len, payload, len);

    if (status != ONIC_OK) {
        onic_error("xport: no memory to keep a message for rank %u, which has no room for it "
                   "now (%u messages wait for it already)", peer, x->dest[peer].queued);
        return status;
    }
    x->dest[peer].queued++;
    x->queued++;
    return ONIC_OK;
}

/* tp->full: a transport's send found no room (peer in its numbering). While
 * a backlog is being sent the message is the backlog's own first one: it
 * stays where it is. */
static onic_status_t xport_tr_full(void *arg, uint32_t peer, const void *user_hdr,
                                   size_t user_len, const void *payload, size_t len)
{
    xport_tr_t *t = arg;

    if (t->x->flushing)
        return ONIC_ERR_NO_RESOURCE;
    return xport_backlog_push(t->x, t->ranks != NULL ? t->ranks[peer] : peer, user_hdr, user_len,
                              payload, len);
}

/* A failure stops the backlog's sending there (the transport said why):
 * the backlog's other messages are lost with it. */
static onic_status_t xport_backlog_send1(void *arg, uint32_t peer, const void *user_hdr,
                                         size_t user_len, const void *payload, size_t len)
{
    onic_xport_t *x = arg;
    const xport_dest_t *d = &x->dest[peer];
    onic_status_t status = d->send(d->state, d->idx, user_hdr, user_len, payload, len);

    if (status != ONIC_OK && status != ONIC_ERR_NO_RESOURCE) {
        x->flush_failed = status;
        return ONIC_ERR_NO_RESOURCE;
    }
    return status;
}

/* Send what peer's backlog has room for now, oldest first. A peer the
 * transport gave up on (it failed, or stopped taking messages) loses what
 * was kept for it, with one error; later sends to it fail. */
static void xport_backlog_flush_peer(onic_xport_t *x, uint32_t peer)
{
    xport_dest_t *d = &x->dest[peer];
    unsigned n;

    x->flushing = 1;
    x->flush_failed = ONIC_OK;
    n = onic_xport_msgq_send(&x->backlog[peer], xport_backlog_send1, x);
    x->flushing = 0;
    d->queued -= n;
    x->queued -= n;
    if (__builtin_expect(x->flush_failed != ONIC_OK, 0)) {
        onic_error("xport: %u messages to rank %u, kept until it had room, are lost: %s",
                   d->queued, peer, onic_status_str(x->flush_failed));
        x->queued -= d->queued;
        d->queued = 0;
        onic_xport_msgq_fini(&x->backlog[peer]);
    }
}

/* Every backlog: each poll starts with this, so what waits leaves as soon
 * as its peer has made room, whatever the caller then waits for. */
static void __attribute__((noinline)) xport_backlog_flush(onic_xport_t *x)
{
    for (uint32_t r = 0; r < x->params.size && x->queued > 0; r++)
        if (x->dest[r].queued > 0)
            xport_backlog_flush_peer(x, r);
}

/* A send with older messages to the same peer still kept, or to a
 * transport that answers "no room" itself: after them, or into the
 * backlog. */
static onic_status_t __attribute__((noinline))
xport_send_backlog(onic_xport_t *x, uint32_t peer, const void *user_hdr, size_t user_len,
                   const void *payload, size_t len)
{
    const xport_dest_t *d = &x->dest[peer];
    onic_status_t status;

    if (d->queued > 0)
        xport_backlog_flush_peer(x, peer);
    if (d->queued == 0) {
        status = d->send(d->state, d->idx, user_hdr, user_len, payload, len);
        if (status != ONIC_ERR_NO_RESOURCE)
            return status;
    }
    return xport_backlog_push(x, peer, user_hdr, user_len, payload, len);
}

/* At close, what is still kept gets a moment to leave: a peer that
 * already left, or never reads again, must not hold this process. */
#define XPORT_CLOSE_FLUSH_NS 1000000000ull

static void xport_backlog_close(onic_xport_t *x)
{
    uint64_t start = onic_time_ns();
    unsigned spins = 0;

    while (x->queued > 0 && onic_time_ns() - start < XPORT_CLOSE_FLUSH_NS) {
        xport_backlog_flush(x);
        if (x->queued > 0)
            xport_progress_deferred(x, &spins);
    }
    if (x->queued > 0)
        onic_debug("xport: rank %u closes with %llu messages its peers had no room for",
                   x->params.rank, (unsigned long long)x->queued);
    for (uint32_t r = 0; r < x->params.size; r++)
        onic_xport_msgq_fini(&x->backlog[r]);
}

onic_status_t onic_xport_send_nocheck(onic_xport_t *x, uint32_t peer, const void *user_hdr,
                                      size_t user_len, const void *payload, size_t len)
{
    const xport_dest_t *d = &x->dest[peer];

    /* The common case is a tail call: the transport keeps what has no room
     * through tp->full itself. */
    if (__builtin_expect(d->queued == 0 && d->queues, 1))
        return d->send(d->state, d->idx, user_hdr, user_len, payload, len);
    return xport_send_backlog(x, peer, user_hdr, user_len, payload, len);
}

uint64_t onic_xport_backlog(const onic_xport_t *x)
{
    return x != NULL ? x->queued : 0;
}

static onic_status_t __attribute__((noinline))
xport_send_invalid(const onic_xport_t *x, uint32_t peer, size_t user_len, size_t len)
{
    if (x != NULL && peer >= x->params.size)
        onic_error("xport: send to rank %u, but the job has ranks 0 to %u", peer,
                   x->params.size - 1);
    else if (x != NULL && len > x->max_payload)
        onic_error("xport: a payload of %zu bytes is over the limit of %zu; send larger "
                   "data by RMA (or raise ONIC_SHM_MID_MAX, or ONIC_OFI_EAGER_LIMIT across "
                   "nodes)", len, x->max_payload);
    else
        onic_error("xport: send with a NULL endpoint or buffer, or a header of %zu bytes "
                   "(at most %d)", user_len, ONIC_XPORT_USER_HDR);
    return ONIC_ERR_INVALID_PARAM;
}

onic_status_t onic_xport_send(onic_xport_t *x, uint32_t peer, const void *user_hdr,
                              size_t user_len, const void *payload, size_t len)
{
    if (x == NULL || peer >= x->params.size || user_len > ONIC_XPORT_USER_HDR ||
        len > x->max_payload || (user_len > 0 && user_hdr == NULL) ||
        (len > 0 && payload == NULL))
        return xport_send_invalid(x, peer, user_len, len);
    return onic_xport_send_nocheck(x, peer, user_hdr, user_len, payload, len);
}

onic_status_t onic_xport_bundle(onic_xport_t *x, int on)
{
    unsigned spins = 0;

    if (x == NULL)
        return ONIC_ERR_INVALID_PARAM;
    for (unsigned i = 0; i < x->nopen; i++) {
        xport_tr_t *t = x->open[i];
        onic_status_t status;
        if (t->ops->bundle == NULL)
            continue;
        while ((status = t->ops->bundle(t->state, on)) == ONIC_ERR_NO_RESOURCE)
            xport_progress_deferred(x, &spins);
        if (status != ONIC_OK)
            return status;
    }
    return ONIC_OK;
}

typedef enum { XPORT_ASSISTED, XPORT_DEMOTED, XPORT_BUNDLED } xport_counter_t;

/* A counter summed over the open transports that keep it (its op NULL
 * where a transport has none). */
static uint64_t xport_count(const onic_xport_t *x, xport_counter_t which)
{
    uint64_t n = 0;

    for (unsigned i = 0; x != NULL && i < x->nopen; i++) {
        const onic_xport_ops_t *ops = x->open[i]->ops;
        uint64_t (*count)(const void *) = which == XPORT_ASSISTED  ? ops->assisted
                                          : which == XPORT_DEMOTED ? ops->demoted
                                                                   : ops->bundled;
        if (count != NULL)
            n += count(x->open[i]->state);
    }
    return n;
}

uint64_t onic_xport_assisted(const onic_xport_t *x)
{
    return xport_count(x, XPORT_ASSISTED);
}

uint64_t onic_xport_demoted(const onic_xport_t *x)
{
    return xport_count(x, XPORT_DEMOTED);
}

uint64_t onic_xport_bundled(const onic_xport_t *x)
{
    return xport_count(x, XPORT_BUNDLED);
}

#define XPORT_YIELDS_BEFORE_SLEEP 16
#define XPORT_POLLS_PER_CLOCK     32
#define XPORT_SLEEP_MAX_NS        100000000ull /* wake up to re-check now and then */
/* With two transports, each can sleep only on its own wake-up: sleep in
 * short turns so neither waits long for the other's. */
#define XPORT_SLEEP_SHARED_NS     1000000ull

unsigned onic_xport_wait(onic_xport_t *x, uint64_t timeout_ns)
{
    uint64_t start, now, deadline, slice;
    unsigned n, yields = 0, polls = 0, turn = 0;

    if (x == NULL)
        return 0;
    start = onic_time_ns();
    deadline = timeout_ns > UINT64_MAX - start ? UINT64_MAX : start + timeout_ns;
    while ((n = onic_xport_poll(x)) == 0) {
        xport_tr_t *t;
        /* Reading the clock costs more than an idle poll: while spinning,
         * look at it only now and then. A wait that does not spin (more
         * processes than cores) goes on to yield at once. */
        if (++polls % XPORT_POLLS_PER_CLOCK != 0 && timeout_ns != 0 && !x->wait_sleeps)
            continue;
        now = onic_time_ns();
        if (now >= deadline)
            return 0;
        if (now - start < x->wait_spin_ns)
            continue;
        /* A yield runs whoever else waits for this core -- with more
         * processes than cores, often the very sender we wait for --
         * and costs a sender on another core nothing; a few of them, then
         * sleep until a sender wakes us (measured with 4 ranks on 2 cores:
         * 4 to 64 yields alike, more than twice the rate of sleeping at
         * once, and sleeping at last better than yielding for ever). */
        t = x->nopen > 0 ? x->open[turn++ % x->nopen] : NULL;
        /* Nobody wakes a sender when its peer makes room: with a backlog,
         * no sleep. */
        if (yields < XPORT_YIELDS_BEFORE_SLEEP || t == NULL || t->ops->sleep == NULL ||
            x->queued > 0) {
            yields++;
            sched_yield();
            continue;
        }
        slice = x->nopen > 1 ? XPORT_SLEEP_SHARED_NS : XPORT_SLEEP_MAX_NS;
        t->ops->sleep(t->state, deadline - now < slice ? deadline - now : slice);
    }
    return n;
}

int onic_xport_sleep_arm(onic_xport_t *x, uint32_t **word, uint32_t *val, uint64_t *max_ns)
{
    xport_tr_t *t;

    /* One transport to sleep in, and nothing here that only a poll moves:
     * a backlog (nobody wakes a sender when its peer makes room), what a
     * wait drained, messages to itself, finished RMA. */
    if (x == NULL || x->nopen != 1 || (t = x->open[0])->ops->sleep_arm == NULL ||
        x->queued > 0 || !onic_xport_msgq_empty(&x->deferred) ||
        !onic_xport_msgq_empty(x->self) || !onic_xport_notify_empty(&x->notify))
        return 0;
    return t->ops->sleep_arm(t->state, word, val, max_ns);
}

void onic_xport_sleep_disarm(onic_xport_t *x)
{
    x->open[0]->ops->sleep_disarm(x->open[0]->state);
}

onic_status_t onic_xport_mem_reg(onic_xport_t *x, void *addr, size_t len, onic_xport_mkey_t *key_p)
{
    onic_xport_mkey_t key;
    onic_status_t status;

    if (x == NULL || key_p == NULL || (addr == NULL && len > 0)) {
        onic_error("xport: mem_reg needs an endpoint, a key to fill and, for a non-empty "
                   "range, an address");
        return ONIC_ERR_INVALID_PARAM;
    }
    status = onic_xport_mreg_add(&x->mreg, addr, len, &key);
    for (unsigned i = 0; status == ONIC_OK && i < x->nopen; i++) {
        xport_tr_t *t = x->open[i];
        if (t->ops->mem_reg == NULL)
            continue;
        status = t->ops->mem_reg(t->state, addr, len, &key);
        if (status != ONIC_OK) {
            for (unsigned j = 0; j < i; j++)
                if (x->open[j]->ops->mem_dereg != NULL)
                    x->open[j]->ops->mem_dereg(x->open[j]->state, &key);
            onic_xport_mreg_del(&x->mreg, &key);
        }
    }
    if (status != ONIC_OK) {
        onic_error("xport: cannot register %zu bytes at %p: %s", len, addr,
                   onic_status_str(status));
        return status;
    }
    *key_p = key;
    return ONIC_OK;
}

onic_status_t onic_xport_mem_dereg(onic_xport_t *x, const onic_xport_mkey_t *key)
{
    onic_status_t status;

    if (x == NULL || key == NULL) {
        onic_error("xport: mem_dereg with a NULL endpoint or key");
        return ONIC_ERR_INVALID_PARAM;
    }
    status = onic_xport_mreg_del(&x->mreg, key);
    if (status == ONIC_OK) /* only what this table knew: a forged key undoes nothing */
        for (unsigned i = 0; i < x->nopen; i++)
            if (x->open[i]->ops->mem_dereg != NULL)
                x->open[i]->ops->mem_dereg(x->open[i]->state, key);
    return status;
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
        onic_move(remote, local, len);
    else
        onic_move(local, remote, len);
    return ONIC_OK;
}

static onic_status_t xport_rma(onic_xport_t *x, uint32_t peer, int write, void *local,
                               const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len,
                               void *ctx)
{
    const char *what = write ? "rma_write" : "rma_read";
    onic_status_t status;
    unsigned spins = 0;
    xport_tr_t *t;
    uint32_t idx;

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
    t = xport_peer(x, peer, &idx);
    if (t->ops->rma == NULL) {
        onic_xport_notify_unreserve(&x->notify);
        onic_error("xport: the %s transport has no RMA", t->ops->name);
        return ONIC_ERR_UNSUPPORTED;
    }
    /* Too many in flight with this peer: move them along until one ends. */
    while ((status = t->ops->rma(t->state, idx, write, local, rkey, roffset, len, ctx)) ==
           ONIC_ERR_NO_RESOURCE)
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

onic_status_t onic_xport_rmav(onic_xport_t *x, uint32_t peer, int write, struct iovec *local,
                              unsigned n, const onic_xport_mkey_t *rkey, uint64_t roffset,
                              size_t len, void *ctx)
{
    onic_status_t status;
    xport_tr_t *t;
    uint32_t idx;

    /* The checks of xport_rma; this process itself, nothing to move, and a
     * transport without it take the pieces one by one. */
    if (x == NULL || peer >= x->params.size || rkey == NULL || local == NULL || n == 0 ||
        x->params.rma_cb == NULL || !onic_xport_mkey_covers(rkey->len, roffset, len)) {
        onic_error("xport: rma%s: bad arguments (rank %u, %u pieces, %zu bytes at offset %llu)",
                   write ? "_writev" : "_readv", peer, n, len, (unsigned long long)roffset);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (peer == x->params.rank || len == 0)
        return ONIC_ERR_UNSUPPORTED;
    t = xport_peer(x, peer, &idx);
    if (t->ops->rmav == NULL)
        return ONIC_ERR_UNSUPPORTED;
    if ((status = onic_xport_notify_reserve(&x->notify)) != ONIC_OK)
        return status;
    status = t->ops->rmav(t->state, idx, write, local, n, rkey, roffset, len, ctx);
    if (status != ONIC_OK)
        onic_xport_notify_unreserve(&x->notify);
    return status;
}

unsigned onic_xport_caps(const onic_xport_t *x, uint32_t peer)
{
    uint32_t idx;
    xport_tr_t *t;

    if (x == NULL || peer >= x->params.size)
        return 0;
    if (peer == x->params.rank)
        return onic_xport_self_ops.caps(x->self, peer);
    t = xport_peer((onic_xport_t *)x, peer, &idx);
    return t->ops->caps(t->state, idx);
}

size_t onic_xport_max_payload(const onic_xport_t *x)
{
    return x == NULL ? 0 : x->max_payload;
}

uint64_t onic_xport_drops(const onic_xport_t *x)
{
    uint64_t n = 0;

    for (unsigned i = 0; x != NULL && i < x->nopen; i++)
        n += x->open[i]->ops->drops(x->open[i]->state);
    return n;
}

uint32_t onic_xport_rank(const onic_xport_t *x)
{
    return x == NULL ? 0 : x->params.rank;
}

uint32_t onic_xport_size(const onic_xport_t *x)
{
    return x == NULL ? 0 : x->params.size;
}

const char *onic_xport_jobid(const onic_xport_t *x)
{
    return x == NULL ? "" : x->jobid;
}

const char *onic_xport_peer_transport(const onic_xport_t *x, uint32_t peer)
{
    if (x == NULL || peer >= x->params.size)
        return NULL;
    return xport_route_names[x->route[peer]];
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
    return ONIC_XPORT_MID_CAP;
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
