/* The transport glue: the NI of this process on the job's xport endpoint.
 * Arrivals go to the target side (onic_ptl_ni_deliver); the target's
 * answers and the initiator's requests go out as one message each, the
 * Portals header in the transport's user header. PtlNIInit's first open
 * comes here, which reads the ONIC_* configuration: under ONIC_ONLOAD the
 * NI goes to the onload engine's back end instead (backend.h). */
#include "ptl/ptl.h"
#include "base/config.h"
#include "base/log.h"
#include "base/mem.h"
#include "xport/xport.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static_assert(sizeof(onic_ptl_wire_t) <= ONIC_XPORT_USER_HDR,
              "the Portals header fits the transport's user header");

typedef struct ptl_xport {
    onic_xport_t  *x;
    onic_ptl_ni_t *ni;
} ptl_xport_t;

/* Every arriving message: the target side inlined into one function
 * (flatten and hot, as src/mpi/request.c's hot calls). */
__attribute__((flatten, hot)) static void ptl_xport_recv(void *arg, uint32_t src, const void *hdr,
                                                         size_t hdr_len, const void *payload,
                                                         size_t len)
{
    ptl_xport_t *px = arg;
    onic_ptl_ni_deliver(px->ni, src, hdr, hdr_len, payload, len);
}

/* The NI has checked what it sends (onic_ptl_io_t's send): the transport's
 * front end does not check it again. */
static onic_status_t ptl_xport_send(void *arg, uint32_t dest, const onic_ptl_wire_t *hdr,
                                    size_t hdr_len, const void *payload, size_t len)
{
    ptl_xport_t *px = arg;
    return onic_xport_send_nocheck(px->x, dest, hdr, hdr_len, payload, len);
}

static unsigned ptl_xport_progress(void *arg, uint64_t timeout_ns)
{
    ptl_xport_t *px = arg;
    return timeout_ns == 0 ? onic_xport_poll(px->x) : onic_xport_wait(px->x, timeout_ns);
}

static int ptl_xport_sleep_arm(void *arg, uint32_t **word, uint32_t *val, uint64_t *max_ns)
{
    ptl_xport_t *px = arg;
    return onic_xport_sleep_arm(px->x, word, val, max_ns);
}

static void ptl_xport_sleep_disarm(void *arg)
{
    ptl_xport_t *px = arg;
    onic_xport_sleep_disarm(px->x);
}

static int ptl_xport_place(void *arg, uint32_t src, const void *hdr, size_t hdr_len, size_t len,
                           void **dest, size_t *room)
{
    ptl_xport_t *px = arg;
    return onic_ptl_target_place(px->ni, src, hdr, hdr_len, len, dest, room);
}

static void ptl_xport_placed(void *arg, uint32_t src)
{
    ptl_xport_t *px = arg;
    onic_ptl_ni_placed(px->ni, src);
}

static void ptl_xport_rma_cb(void *arg, void *ctx, onic_status_t status)
{
    ptl_xport_t *px = arg;
    onic_ptl_ni_rma_done(px->ni, ctx, status);
}

static_assert(sizeof(onic_ptl_rkey_t) == sizeof(onic_xport_mkey_t),
              "a Portals region key is the transport's");

static onic_status_t ptl_xport_mem_reg(void *arg, void *addr, size_t len, onic_ptl_rkey_t *key_p)
{
    ptl_xport_t *px = arg;
    onic_xport_mkey_t key;
    onic_status_t status = onic_xport_mem_reg(px->x, addr, len, &key);

    key_p->addr = key.addr;
    key_p->len = key.len;
    key_p->id = key.id;
    return status;
}

static void ptl_xport_mem_dereg(void *arg, const onic_ptl_rkey_t *key)
{
    ptl_xport_t *px = arg;
    onic_xport_mkey_t k = {key->addr, key->len, key->id};
    onic_xport_mem_dereg(px->x, &k);
}

static onic_status_t ptl_xport_rma(void *arg, uint32_t peer, int write, void *local,
                                   const onic_ptl_rkey_t *key, uint64_t roffset, size_t len,
                                   void *ctx)
{
    ptl_xport_t *px = arg;
    onic_xport_mkey_t k = {key->addr, key->len, key->id};

    return write ? onic_xport_rma_write(px->x, peer, local, &k, roffset, len, ctx)
                 : onic_xport_rma_read(px->x, peer, local, &k, roffset, len, ctx);
}

static onic_status_t ptl_xport_rmav(void *arg, uint32_t peer, int write, struct iovec *local,
                                    unsigned n, const onic_ptl_rkey_t *key, uint64_t roffset,
                                    size_t len, void *ctx)
{
    ptl_xport_t *px = arg;
    onic_xport_mkey_t k = {key->addr, key->len, key->id};

    return onic_xport_rmav(px->x, peer, write, local, n, &k, roffset, len, ctx);
}

static int ptl_xport_one_copy(void *arg, uint32_t peer)
{
    ptl_xport_t *px = arg;
    return (onic_xport_caps(px->x, peer) & ONIC_XPORT_CAP_CMA) != 0;
}

static onic_status_t ptl_xport_bundle(void *arg, int on)
{
    ptl_xport_t *px = arg;
    return onic_xport_bundle(px->x, on);
}

static void ptl_xport_close(void *arg)
{
    ptl_xport_t *px = arg;
    onic_xport_close(px->x);
    onic_free(px);
}

static const onic_ptl_io_t ptl_xport_io = {
    .send = ptl_xport_send,
    .progress = ptl_xport_progress,
    .close = ptl_xport_close,
    .mem_reg = ptl_xport_mem_reg,
    .mem_dereg = ptl_xport_mem_dereg,
    .rma = ptl_xport_rma,
    .rmav = ptl_xport_rmav,
    .one_copy = ptl_xport_one_copy,
    .bundle = ptl_xport_bundle,
    .sleep_arm = ptl_xport_sleep_arm,
    .sleep_disarm = ptl_xport_sleep_disarm,
};

/* The job id as a ptl_jid_t: its last 8 hex digits; a job of one started
 * without onicrun gets one from its process id. Never PTL_JID_NONE (system
 * processes) nor PTL_JID_ANY. */
ptl_jid_t onic_ptl_jid_of(const char *jobid)
{
    size_t len = strlen(jobid);
    ptl_jid_t jid = len > 0 ? (ptl_jid_t)strtoul(jobid + (len > 8 ? len - 8 : 0), NULL, 16)
                            : (ptl_jid_t)getpid();
    return jid == PTL_JID_NONE || jid == PTL_JID_ANY ? 1 : jid;
}

int onic_ptl_xport_ni_open(ptl_pid_t pid, const ptl_ni_limits_t *desired,
                           ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle)
{
    onic_config_t cfg;
    onic_ptl_ni_params_t p;
    onic_xport_params_t xp;
    ptl_xport_t *px;
    onic_ptl_ni_t *ni;
    onic_status_t status;
    ptl_handle_ni_t h;
    int rc;

    if (onic_config_read(&cfg) != ONIC_OK) {
        onic_error("ptl: PtlNIInit: the ONIC_* environment is invalid (see above)");
        return PTL_FAIL;
    }
    if (cfg.onload) { /* the job's onload engine keeps the interface */
        rc = onic_ptl_backend_onload.ni_open(&cfg, pid, desired, actual, ni_handle);
        if (rc == PTL_OK)
            onic_ptl_backend_g = &onic_ptl_backend_onload;
        return rc;
    }
    px = onic_calloc(1, sizeof(*px));
    if (px == NULL)
        return PTL_NO_SPACE;
    /* The transport first: it learns from the launcher who this process is.
     * Nothing is delivered before the first poll, when px->ni is set. */
    memset(&xp, 0, sizeof(xp));
    xp.size = 0; /* from the launcher */
    xp.recv_cb = ptl_xport_recv;
    xp.rma_cb = ptl_xport_rma_cb;
    xp.place_cb = ptl_xport_place;
    xp.placed_cb = ptl_xport_placed;
    xp.cb_arg = px;
    xp.cfg = &cfg;
    status = onic_xport_open(&xp, &px->x);
    if (status != ONIC_OK) {
        onic_error("ptl: PtlNIInit: cannot open the transport: %s", onic_status_str(status));
        onic_free(px);
        return PTL_NAL_FAILED;
    }
    if (pid != PTL_PID_ANY && pid != onic_xport_rank(px->x)) {
        onic_error("ptl: PtlNIInit: pid %u; this process is rank %u of its job (or pass "
                   "PTL_PID_ANY)", pid, onic_xport_rank(px->x));
        ptl_xport_close(px);
        return PTL_PID_INVALID;
    }
    memset(&p, 0, sizeof(p));
    p.rank = onic_xport_rank(px->x);
    p.size = onic_xport_size(px->x);
    p.uid = (ptl_uid_t)getuid();
    p.jid = onic_ptl_jid_of(onic_xport_jobid(px->x));
    p.desired = desired;
    p.io = &ptl_xport_io;
    p.io_arg = px;
    rc = onic_ptl_ni_open(&p, actual, &h);
    if (rc != PTL_OK) {
        ptl_xport_close(px);
        return rc;
    }
    if (onic_ptl_ni_of(h, &ni) != PTL_OK) { /* never: it was just opened */
        ptl_xport_close(px);
        return PTL_FAIL;
    }
    px->ni = ni;
    ni->max_inline = onic_xport_max_payload(px->x);
    /* A large put or get sends its key in place of the data. */
    static_assert(sizeof(onic_ptl_large_desc_t) <= 64, "a large operation's key fits any "
                  "transport's smallest payload (shm's ring of two slots: 64 bytes)");
    *ni_handle = h;
    return PTL_OK;
}
