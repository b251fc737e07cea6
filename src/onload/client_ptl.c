/* The client side of Portals in the onload engine: this process's Portals
 * NI run by the engine (src/onload/serve.c is the engine's side). It is the
 * NI's onload back end (src/ptl/backend.h): it fills onic_ptl_backend_onload,
 * and PtlNIInit under ONIC_ONLOAD=1 hands the public calls to it. It lives
 * in src/onload, beside client.c (the process's side of the rings, which it
 * drives), because it is the process's half of the engine's protocol
 * (proto.h); src/ptl reaches it only through the table, so ptl includes
 * nothing of onload.
 *
 * The engine keeps the interface, its match lists, MDs and event queues'
 * bookkeeping; this side turns each public call into one command and waits
 * for its answer, and applies what the engine sends on its event ring, in
 * order: DATA (the target side's writes into this process's MDs), EVENT
 * (into the event queues, which live here, so PtlEQGet reads local memory),
 * MD_GONE (a bound MD was unlinked). A put carries its data in its command
 * when this side knows the MD's memory (bound MDs, which it mirrors) and it
 * is small; otherwise the engine moves it by RMA.
 *
 * Handles are the engine's. A call that needs no answer never waits for
 * the engine; one that does waits spinning, then sleeping on the event
 * ring's bell, and fails with PTL_NAL_FAILED once the engine is gone. */
#include "onload/proto.h"
#include "ptl/backend.h"
#include "ptl/ptl.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"
#include "base/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A bound MD's memory, to put from without asking the engine. */
typedef struct remote_md {
    ptl_handle_md_t handle;
    uint64_t        start, length;
    int             threshold;
    unsigned        options;
} remote_md_t;

typedef struct remote_handler_call {
    ptl_eq_handler_t handler;
    ptl_event_t      ev;
} remote_handler_call_t;

typedef struct remote {
    onic_onload_client_t *c;
    ptl_handle_ni_t       ni;
    uint32_t              rank, size;
    ptl_uid_t             uid;
    ptl_jid_t             jid;
    ptl_ni_limits_t       limits;
    int                   have_answer;
    onic_onload_reply_t   answer;
    int                   dead;      /* the engine is gone: every call fails */
    int                   ready;     /* told the engine to deliver arrivals */
    onic_ptl_eq_t       **eqs;       /* by the handle's index; NULL: none */
    uint32_t              neqs;
    remote_md_t          *mds;       /* by the handle's index; handle 0: none */
    uint32_t              nmds;
    remote_handler_call_t *hq;       /* handlers to call once the call is done */
    unsigned              hq_len, hq_cap;
    int                   in_handler;
    uint8_t              *rec;       /* a record from the engine */
    uint8_t              *cmd;       /* a command being made */
} remote_t;

/* The engine's interface for this process, while it has one. */
static remote_t *remote_g;

static uint32_t remote_index(uint64_t handle)
{
    return (uint32_t)(handle & 0xffffff);
}

/* --- tables ------------------------------------------------------------------ */
static onic_ptl_eq_t *remote_eq(remote_t *r, ptl_handle_eq_t h)
{
    uint32_t i = remote_index(h);
    return i < r->neqs && r->eqs[i] != NULL && r->eqs[i]->handle == h ? r->eqs[i] : NULL;
}

static int remote_grow(void **tab, uint32_t *n, uint32_t want, size_t elem)
{
    uint32_t cap = *n > 0 ? *n : 64;
    void *t;

    while (cap <= want)
        cap *= 2;
    if (cap == *n)
        return 1;
    t = onic_realloc(*tab, (size_t)cap * elem);
    if (t == NULL)
        return 0;
    memset((uint8_t *)t + (size_t)*n * elem, 0, (size_t)(cap - *n) * elem);
    *tab = t;
    *n = cap;
    return 1;
}

static void remote_md_note(remote_t *r, ptl_handle_md_t h, const ptl_md_t *md)
{
    uint32_t i = remote_index(h);

    /* Without room to mirror it, its puts go by RMA: slower, still right. */
    if (i >= r->nmds && !remote_grow((void **)&r->mds, &r->nmds, i, sizeof(*r->mds)))
        return;
    r->mds[i] = (remote_md_t){h, (uint64_t)(uintptr_t)md->start, md->length, md->threshold,
                              md->options};
}

static void remote_md_forget(remote_t *r, ptl_handle_md_t h)
{
    uint32_t i = remote_index(h);

    if (i < r->nmds && r->mds[i].handle == h)
        r->mds[i].handle = 0;
}

/* --- what the engine sends ------------------------------------------------------- */
static void remote_apply(remote_t *r, uint32_t kind, const uint8_t *buf, size_t len)
{
    onic_onload_event_t ev;
    onic_ptl_eq_t *eq;
    uint64_t addr;
    ptl_handle_md_t md;

    switch (kind) {
    case ONIC_ONLOAD_EVT_ANSWER:
        if (len == sizeof(r->answer)) {
            memcpy(&r->answer, buf, sizeof(r->answer));
            r->have_answer = 1;
            return;
        }
        break;
    case ONIC_ONLOAD_EVT_DATA:
        /* Where the target side put data into one of our MDs: the engine
         * may write this process's memory anyway (CMA), so the address is
         * as trusted as that; the sizes are checked. */
        if (len >= sizeof(addr)) {
            memcpy(&addr, buf, sizeof(addr));
            memcpy((void *)(uintptr_t)addr, buf + sizeof(addr), len - sizeof(addr));
            return;
        }
        break;
    case ONIC_ONLOAD_EVT_EVENT:
        if (len == sizeof(ev)) {
            memcpy(&ev, buf, sizeof(ev));
            eq = remote_eq(r, ev.eq);
            if (eq == NULL)
                return; /* freed since: its events go with it */
            onic_ptl_eq_keep(eq, &ev.ev);
            eq->seq = ev.ev.sequence + 1;
            if (eq->handler != PTL_EQ_HANDLER_NONE) {
                if (r->hq_len == r->hq_cap) {
                    unsigned cap = r->hq_cap > 0 ? 2 * r->hq_cap : 16;
                    void *t = onic_realloc(r->hq, cap * sizeof(*r->hq));
                    if (t == NULL) {
                        onic_error("ptl: no memory to call an event handler; event kept");
                        return;
                    }
                    r->hq = t;
                    r->hq_cap = cap;
                }
                r->hq[r->hq_len++] = (remote_handler_call_t){eq->handler, ev.ev};
            }
            return;
        }
        break;
    case ONIC_ONLOAD_EVT_MD_GONE:
        if (len == sizeof(md)) {
            memcpy(&md, buf, sizeof(md));
            remote_md_forget(r, md);
            return;
        }
        break;
    case ONIC_ONLOAD_EVT_FAILED:
        if (len == sizeof(r->answer)) {
            onic_onload_reply_t f;
            memcpy(&f, buf, sizeof(f));
            onic_error("ptl: %s, which did not wait for the onload engine, failed there: %s",
                       f.value == ONIC_ONLOAD_OP_ME_UNLINK ? "PtlMEUnlinkAsync" : "a put",
                       PtlErrorStr(f.rc));
            return;
        }
        break;
    default:
        break;
    }
    onic_error("onload: a record of kind %u and %zu bytes from the engine makes no sense; "
               "ignored", kind, len);
}

/* Apply everything waiting; ONIC_ERR_IO once the engine is gone. */
static onic_status_t remote_drain(remote_t *r)
{
    uint32_t kind;
    size_t len;
    onic_status_t st;

    if (r->dead)
        return ONIC_ERR_IO;
    while ((st = onic_onload_client_poll(r->c, &kind, r->rec, ONIC_ONLOAD_MSG_MAX, &len)) ==
           ONIC_OK)
        remote_apply(r, kind, r->rec, len);
    if (st != ONIC_ERR_NO_ELEM) {
        r->dead = 1;
        return ONIC_ERR_IO;
    }
    return ONIC_OK;
}

/* Wait up to timeout_ns for one record and apply it (and what follows). */
static onic_status_t remote_wait(remote_t *r, uint64_t timeout_ns)
{
    uint32_t kind;
    size_t len;
    onic_status_t st;

    if (r->dead)
        return ONIC_ERR_IO;
    st = onic_onload_client_wait(r->c, &kind, r->rec, ONIC_ONLOAD_MSG_MAX, &len, timeout_ns);
    if (st == ONIC_ERR_NO_ELEM)
        return ONIC_OK;
    if (st != ONIC_OK) {
        r->dead = 1;
        return ONIC_ERR_IO;
    }
    remote_apply(r, kind, r->rec, len);
    return remote_drain(r);
}

static void remote_run_handlers(remote_t *r)
{
    if (r->in_handler)
        return;
    while (r->hq_len > 0) {
        remote_handler_call_t call = r->hq[0];
        memmove(&r->hq[0], &r->hq[1], --r->hq_len * sizeof(r->hq[0]));
        r->in_handler = 1;
        call.handler(&call.ev);
        r->in_handler = 0;
    }
}

static int remote_gone(const char *call)
{
    onic_error("ptl: %s: the onload engine serving this process is gone", call);
    return PTL_NAL_FAILED;
}

#define REMOTE_QUIET 2 /* answer: none, and the engine need not wake for it */

/* Send c (with nbytes of data already after it in r->cmd when c is
 * r->cmd) and, if answer is 1, wait for the answer into *reply. A Portals
 * code. */
static int remote_call(remote_t *r, onic_onload_call_t *c, size_t nbytes, int answer,
                       onic_onload_reply_t *reply, const char *call)
{
    onic_status_t st;

    memset(reply, 0, sizeof(*reply));
    if (r->dead)
        return remote_gone(call);
    c->nbytes = (uint32_t)nbytes;
    if ((void *)c != (void *)r->cmd) /* a put builds its call in place */
        memcpy(r->cmd, c, sizeof(*c));
    /* A full ring: take what the engine sends (it holds our commands back
     * only until we make room), then retry. */
    while ((st = (answer == REMOTE_QUIET ? onic_onload_client_push_quiet
                                         : onic_onload_client_push)(
                r->c, ONIC_ONLOAD_CMD_PTL, r->cmd, sizeof(*c) + nbytes)) == ONIC_ERR_NO_RESOURCE)
        if (remote_wait(r, 1000000u) != ONIC_OK)
            return remote_gone(call);
    if (st != ONIC_OK) {
        r->dead = 1;
        return remote_gone(call);
    }
    if (answer != 1)
        return PTL_OK;
    r->have_answer = 0;
    while (!r->have_answer)
        if (remote_drain(r) != ONIC_OK ||
            (!r->have_answer && remote_wait(r, UINT64_MAX) != ONIC_OK))
            return remote_gone(call);
    *reply = r->answer;
    return reply->rc;
}

static void remote_call_init(onic_onload_call_t *c, uint32_t op, uint64_t h)
{
    memset(c, 0, sizeof(*c));
    c->op = op;
    c->h = h;
}

static int remote_null(const void *p, const char *call, const char *what)
{
    if (p != NULL)
        return 0;
    onic_error("ptl: %s with a NULL %s: pass where to store it", call, what);
    return 1;
}

/* --- the interface -------------------------------------------------------------- */
static void remote_free(remote_t *r)
{
    for (uint32_t i = 0; i < r->neqs; i++)
        if (r->eqs[i] != NULL) {
            onic_free(r->eqs[i]->ring);
            onic_free(r->eqs[i]);
        }
    onic_free(r->eqs);
    onic_free(r->mds);
    onic_free(r->hq);
    onic_free(r->rec);
    onic_free(r->cmd);
    onic_free(r);
}

static int remote_ni_open(const struct onic_config *cfg, ptl_pid_t pid,
                          const ptl_ni_limits_t *desired, ptl_ni_limits_t *actual,
                          ptl_handle_ni_t *ni_handle)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    onic_status_t st;
    int rc;

    if (r != NULL) {
        *ni_handle = r->ni;
        if (actual != NULL)
            *actual = r->limits;
        return PTL_IFACE_DUP;
    }
    if (cfg->nodes > 1) {
        onic_error("onload: the engine serves the processes of one node; this job spans %u "
                   "(ONIC_NODES): run it without --onload", cfg->nodes);
        return PTL_NAL_FAILED;
    }
    if (cfg->onload_event_recs < ONIC_ONLOAD_EVT_NEED(ONIC_ONLOAD_REC) ||
        cfg->onload_cmd_recs < ONIC_ONLOAD_CMD_NEED(ONIC_ONLOAD_REC)) {
        onic_error("onload: Portals through the engine needs ONIC_ONLOAD_EVENT_RECS of at least "
                   "%zu and ONIC_ONLOAD_CMD_RECS of at least %zu (they are %u and %u)",
                   (size_t)ONIC_ONLOAD_EVT_NEED(ONIC_ONLOAD_REC),
                   (size_t)ONIC_ONLOAD_CMD_NEED(ONIC_ONLOAD_REC), cfg->onload_event_recs,
                   cfg->onload_cmd_recs);
        return PTL_NAL_FAILED;
    }
    if (pid != PTL_PID_ANY && pid != cfg->rank) {
        onic_error("ptl: PtlNIInit: pid %u; this process is rank %u of its job (or pass "
                   "PTL_PID_ANY)", pid, cfg->rank);
        return PTL_PID_INVALID;
    }
    r = onic_calloc(1, sizeof(*r));
    if (r == NULL || (r->rec = onic_malloc(ONIC_ONLOAD_MSG_MAX)) == NULL ||
        (r->cmd = onic_malloc(ONIC_ONLOAD_MSG_MAX)) == NULL) {
        if (r != NULL)
            remote_free(r);
        return PTL_NO_SPACE;
    }
    st = onic_onload_client_open(cfg, &r->c);
    if (st != ONIC_OK) {
        onic_error("onload: PtlNIInit: cannot reach this job's onload engine (%s); start the "
                   "job with onicrun --onload", onic_status_str(st));
        remote_free(r);
        return PTL_NAL_FAILED;
    }
    onic_onload_client_serve_ptl(r->c);
    r->rank = cfg->rank;
    r->size = cfg->size;
    r->uid = (ptl_uid_t)getuid();
    r->jid = onic_ptl_jid_of(cfg->jobid);
    remote_call_init(&c, ONIC_ONLOAD_OP_NI_INIT, 0);
    c.u.init.rank = r->rank;
    c.u.init.size = r->size;
    c.u.init.uid = r->uid;
    c.u.init.jid = r->jid;
    if (desired != NULL) {
        c.u.init.have_limits = 1;
        c.u.init.limits = *desired;
    }
    snprintf(c.u.init.engine, sizeof(c.u.init.engine), "%s",
             onic_config_match_engines[cfg->match_engine]);
    rc = remote_call(r, &c, 0, 1, &reply, "PtlNIInit");
    if (rc != PTL_OK) {
        onic_onload_client_close(r->c);
        remote_free(r);
        return rc;
    }
    r->ni = reply.h;
    r->limits = reply.u.limits;
    if (actual != NULL)
        *actual = r->limits;
    *ni_handle = r->ni;
    remote_g = r;
    return PTL_OK;
}

static int remote_ni_fini(ptl_handle_ni_t ni_handle)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    if (ni_handle != r->ni)
        return PTL_NI_INVALID;
    if (r->in_handler) {
        onic_error("ptl: PtlNIFini from inside an event handler: finalize after it returns");
        return PTL_FAIL;
    }
    remote_call_init(&c, ONIC_ONLOAD_OP_NI_FINI, ni_handle);
    rc = remote_call(r, &c, 0, 1, &reply, "PtlNIFini");
    if (rc != PTL_OK && rc != PTL_NAL_FAILED)
        return rc;
    remote_g = NULL;
    onic_onload_client_close(r->c);
    remote_free(r);
    return PTL_OK;
}

static int remote_fini(void)
{
    return remote_g != NULL ? remote_ni_fini(remote_g->ni) : PTL_OK;
}

/* Inline, messages arrive only inside the calls that look for events, so a
 * process sets up its lists before anything lands; the engine keeps its
 * arrivals until this first look. */
static int remote_ready(remote_t *r)
{
    onic_onload_call_t c;
    onic_onload_reply_t reply;

    remote_call_init(&c, ONIC_ONLOAD_OP_READY, r->ni);
    r->ready = 1;
    return remote_call(r, &c, 0, 0, &reply, "PtlEQPoll");
}

static int remote_ni_status(ptl_handle_ni_t ni_handle, ptl_sr_index_t reg,
                            ptl_sr_value_t *status)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    if (ni_handle != r->ni)
        return PTL_NI_INVALID;
    if (remote_null(status, "PtlNIStatus", "status"))
        return PTL_SEGV;
    if (reg == PTL_SR_JOB_SIZE) {
        *status = (ptl_sr_value_t)r->size;
        return PTL_OK;
    }
    if (reg == PTL_SR_MAX_INLINE) { /* a put's data travels in its command up to this */
        *status = (ptl_sr_value_t)ONIC_ONLOAD_PUT_INLINE;
        return PTL_OK;
    }
    /* Inline, the drop count looks at what has arrived: it lets arrivals in. */
    if (reg == PTL_SR_DROP_COUNT && !r->ready && (rc = remote_ready(r)) != PTL_OK)
        return rc;
    remote_call_init(&c, ONIC_ONLOAD_OP_NI_STATUS, ni_handle);
    c.off = (uint64_t)reg;
    rc = remote_call(r, &c, 0, 1, &reply, "PtlNIStatus");
    if (rc == PTL_OK)
        *status = (ptl_sr_value_t)reply.value;
    return rc;
}

static int remote_ni_handle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    if (remote_null(ni_handle, "PtlNIHandle", "ni_handle"))
        return PTL_SEGV;
    remote_call_init(&c, ONIC_ONLOAD_OP_NI_HANDLE, handle);
    rc = remote_call(r, &c, 0, 1, &reply, "PtlNIHandle");
    if (rc == PTL_OK)
        *ni_handle = reply.h;
    return rc;
}

/* The engine sends for this process, and bundles as it sees fit. */
static int remote_ni_bundle(ptl_handle_ni_t ni_handle, int on)
{
    (void)on;
    return ni_handle == remote_g->ni ? PTL_OK : PTL_NI_INVALID;
}

static int remote_ni_ids(ptl_handle_ni_t ni_handle, ptl_process_id_t *id, ptl_uid_t *uid,
                         ptl_jid_t *jid)
{
    remote_t *r = remote_g;

    if (ni_handle != r->ni)
        return PTL_NI_INVALID;
    if (id == NULL && uid == NULL && jid == NULL) {
        onic_error("ptl: PtlGetId/Uid/Jid with a NULL pointer: pass where to store it");
        return PTL_SEGV;
    }
    if (id != NULL) {
        id->nid = 0;
        id->pid = r->rank;
    }
    if (uid != NULL)
        *uid = r->uid;
    if (jid != NULL)
        *jid = r->jid;
    return PTL_OK;
}

static int remote_ac_entry(ptl_handle_ni_t ni_handle, ptl_ac_index_t ac_index,
                           ptl_process_id_t match_id, ptl_uid_t uid, ptl_jid_t jid,
                           ptl_pt_index_t pt_index)
{
    onic_onload_call_t c;
    onic_onload_reply_t reply;

    remote_call_init(&c, ONIC_ONLOAD_OP_AC_ENTRY, ni_handle);
    c.ac = ac_index;
    c.id = match_id;
    c.off = uid;
    c.len = jid;
    c.pt = pt_index;
    return remote_call(remote_g, &c, 0, 1, &reply, "PtlACEntry");
}

/* --- match entries ------------------------------------------------------------------ */
static int remote_me_attach(int kind, ptl_handle_ni_t ni_handle, ptl_pt_index_t *pt_index,
                            ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                            ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                            ptl_ins_pos_t position, ptl_handle_me_t *me_handle)
{
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    if (remote_null(me_handle, "PtlMEAttach", "me_handle") ||
        remote_null(pt_index, "PtlMEAttachAny", "pt_index"))
        return PTL_SEGV;
    remote_call_init(&c, ONIC_ONLOAD_OP_ME_ATTACH, ni_handle);
    c.flag = (uint32_t)kind;
    c.pt = *pt_index;
    c.id = match_id;
    c.bits = match_bits;
    c.ignore = ignore_bits;
    c.unlink = (uint32_t)unlink;
    c.pos = (uint32_t)position;
    rc = remote_call(remote_g, &c, 0, 1, &reply, "PtlMEAttach");
    if (rc == PTL_OK) {
        *me_handle = reply.h;
        if (kind == 1)
            *pt_index = reply.pt;
    }
    return rc;
}

static int remote_me_insert(ptl_handle_me_t base, ptl_process_id_t match_id,
                            ptl_match_bits_t match_bits, ptl_match_bits_t ignore_bits,
                            ptl_unlink_t unlink, ptl_ins_pos_t position,
                            ptl_handle_me_t *me_handle)
{
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    if (remote_null(me_handle, "PtlMEInsert", "me_handle"))
        return PTL_SEGV;
    remote_call_init(&c, ONIC_ONLOAD_OP_ME_INSERT, base);
    c.id = match_id;
    c.bits = match_bits;
    c.ignore = ignore_bits;
    c.unlink = (uint32_t)unlink;
    c.pos = (uint32_t)position;
    rc = remote_call(remote_g, &c, 0, 1, &reply, "PtlMEInsert");
    if (rc == PTL_OK)
        *me_handle = reply.h;
    return rc;
}

static int remote_me_unlink(ptl_handle_me_t me_handle)
{
    onic_onload_call_t c;
    onic_onload_reply_t reply;

    remote_call_init(&c, ONIC_ONLOAD_OP_ME_UNLINK, me_handle);
    return remote_call(remote_g, &c, 0, 1, &reply, "PtlMEUnlink");
}

/* The kind is checked here, so a wrong handle still fails at once; the
 * engine reports what it finds later (EVT_FAILED). Quiet: the caller
 * expects no more operations on the entry, so it may wait until the
 * engine wakes for something else. */
static int remote_me_unlink_async(ptl_handle_me_t me_handle)
{
    onic_onload_call_t c;
    onic_onload_reply_t reply;

    if (onic_ptl_handle_kind(me_handle) != ONIC_PTL_KIND_ME) {
        onic_error("ptl: PtlMEUnlinkAsync: %#llx is no match entry's handle",
                   (unsigned long long)me_handle);
        return PTL_ME_INVALID;
    }
    remote_call_init(&c, ONIC_ONLOAD_OP_ME_UNLINK, me_handle);
    c.flag = 2;
    return remote_call(remote_g, &c, 0, REMOTE_QUIET, &reply, "PtlMEUnlinkAsync");
}

/* The engine would read an I/O vector in its own memory: refused here, where
 * the caller sees why. */
static int remote_md_iovec(const ptl_md_t *md, const char *call)
{
    if (!(md->options & PTL_MD_IOVEC))
        return 0;
    onic_error("ptl: %s: PTL_MD_IOVEC under ONIC_ONLOAD: the engine cannot read the vector; "
               "pass a flat MD", call);
    return 1;
}

static int remote_me_search(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
                            ptl_process_id_t match_id, ptl_match_bits_t match_bits,
                            ptl_match_bits_t ignore_bits, ptl_unlink_t unlink,
                            ptl_ins_pos_t position, ptl_md_t md, ptl_unlink_t md_unlink,
                            ptl_handle_me_t *me_handle, ptl_handle_md_t *md_handle,
                            ptl_ovf_header_t *header)
{
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    if (remote_null(me_handle, "PtlMEAttachSearch", "me_handle") ||
        remote_null(md_handle, "PtlMEAttachSearch", "md_handle") ||
        remote_null(header, "PtlMEAttachSearch", "header"))
        return PTL_SEGV;
    if (remote_md_iovec(&md, "PtlMEAttachSearch"))
        return PTL_MD_ILLEGAL;
    remote_call_init(&c, ONIC_ONLOAD_OP_ME_SEARCH, ni_handle);
    c.pt = pt_index;
    c.id = match_id;
    c.bits = match_bits;
    c.ignore = ignore_bits;
    c.unlink = (uint32_t)unlink;
    c.pos = (uint32_t)position;
    c.u.md = md;
    c.md_unlink = (uint32_t)md_unlink;
    rc = remote_call(remote_g, &c, 0, 1, &reply, "PtlMEAttachSearch");
    if (rc == PTL_OK) {
        *me_handle = reply.h;
        *md_handle = reply.h2;
    } else if (rc == PTL_OVF_MATCHED) {
        *header = reply.u.hdr;
    }
    return rc;
}

/* --- memory descriptors ---------------------------------------------------------------- */
static int remote_md_attach(ptl_handle_me_t me_handle, ptl_md_t md, ptl_unlink_t unlink_op,
                            ptl_handle_md_t *md_handle)
{
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    if (remote_null(md_handle, "PtlMDAttach", "md_handle"))
        return PTL_SEGV;
    if (remote_md_iovec(&md, "PtlMDAttach"))
        return PTL_MD_ILLEGAL;
    remote_call_init(&c, ONIC_ONLOAD_OP_MD_ATTACH, me_handle);
    c.u.md = md;
    c.md_unlink = (uint32_t)unlink_op;
    rc = remote_call(remote_g, &c, 0, 1, &reply, "PtlMDAttach");
    if (rc == PTL_OK)
        *md_handle = reply.h;
    return rc;
}

static int remote_md_bind(ptl_handle_ni_t ni_handle, ptl_md_t md, ptl_unlink_t unlink_op,
                          ptl_handle_md_t *md_handle)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    if (remote_null(md_handle, "PtlMDBind", "md_handle"))
        return PTL_SEGV;
    if (remote_md_iovec(&md, "PtlMDBind"))
        return PTL_MD_ILLEGAL;
    remote_call_init(&c, ONIC_ONLOAD_OP_MD_BIND, ni_handle);
    c.u.md = md;
    c.md_unlink = (uint32_t)unlink_op;
    rc = remote_call(r, &c, 0, 1, &reply, "PtlMDBind");
    if (rc == PTL_OK) {
        *md_handle = reply.h;
        remote_md_note(r, reply.h, &md);
    }
    return rc;
}

static int remote_md_unlink(ptl_handle_md_t md_handle)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    remote_call_init(&c, ONIC_ONLOAD_OP_MD_UNLINK, md_handle);
    rc = remote_call(r, &c, 0, 1, &reply, "PtlMDUnlink");
    if (rc == PTL_OK)
        remote_md_forget(r, md_handle);
    return rc;
}

static int remote_md_update(ptl_handle_md_t md_handle, ptl_md_t *old_md, ptl_md_t *new_md,
                            ptl_handle_eq_t eq_handle)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    onic_ptl_eq_t *eq;
    int rc;

    if (new_md != NULL && remote_md_iovec(new_md, "PtlMDUpdate"))
        return PTL_MD_ILLEGAL;
    remote_call_init(&c, ONIC_ONLOAD_OP_MD_UPDATE, md_handle);
    c.flag = (old_md != NULL ? 1u : 0u) | (new_md != NULL ? 2u : 0u);
    if (new_md != NULL)
        c.u.md = *new_md;
    c.h2 = eq_handle;
    c.off = UINT64_MAX;
    if (eq_handle != PTL_EQ_NONE) {
        /* The engine tests emptiness against what we have seen: see all. */
        if (remote_drain(r) != ONIC_OK)
            return remote_gone("PtlMDUpdate");
        if ((eq = remote_eq(r, eq_handle)) != NULL && eq->head == eq->tail)
            c.off = eq->seq;
    }
    rc = remote_call(r, &c, 0, 1, &reply, "PtlMDUpdate");
    if (rc == PTL_OK || (rc == PTL_MD_NO_UPDATE && old_md != NULL)) {
        if (old_md != NULL)
            *old_md = reply.u.md;
        if (rc == PTL_OK && new_md != NULL) {
            uint32_t i = remote_index(md_handle);
            if (i < r->nmds && r->mds[i].handle == md_handle)
                remote_md_note(r, md_handle, new_md);
        }
    }
    return rc;
}

/* --- event queues ----------------------------------------------------------------- */
static int remote_eq_alloc(ptl_handle_ni_t ni_handle, ptl_size_t count,
                           ptl_eq_handler_t handler, ptl_handle_eq_t *eq_handle)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    onic_ptl_eq_t *eq;
    uint32_t i;
    int rc;

    if (remote_null(eq_handle, "PtlEQAlloc", "eq_handle"))
        return PTL_SEGV;
    if (!onic_ptl_eq_count_ok(count))
        return PTL_FAIL;
    eq = onic_calloc(1, sizeof(*eq));
    if (eq == NULL || (eq->ring = onic_ptl_eq_ring_alloc(eq, count)) == NULL) {
        onic_free(eq);
        return PTL_NO_SPACE;
    }
    remote_call_init(&c, ONIC_ONLOAD_OP_EQ_ALLOC, ni_handle);
    c.len = count;
    rc = remote_call(r, &c, 0, 1, &reply, "PtlEQAlloc");
    i = remote_index(reply.h);
    if (rc == PTL_OK && i >= r->neqs && !remote_grow((void **)&r->eqs, &r->neqs, i,
                                                     sizeof(*r->eqs))) {
        remote_call_init(&c, ONIC_ONLOAD_OP_EQ_FREE, reply.h);
        remote_call(r, &c, 0, 1, &reply, "PtlEQAlloc");
        rc = PTL_NO_SPACE;
    }
    if (rc != PTL_OK) {
        onic_free(eq->ring);
        onic_free(eq);
        return rc;
    }
    eq->handle = reply.h;
    eq->count = count;
    eq->handler = handler;
    r->eqs[i] = eq;
    *eq_handle = eq->handle;
    return PTL_OK;
}

static int remote_eq_free(ptl_handle_eq_t eq_handle)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    onic_ptl_eq_t *eq;
    int rc;

    remote_call_init(&c, ONIC_ONLOAD_OP_EQ_FREE, eq_handle);
    rc = remote_call(r, &c, 0, 1, &reply, "PtlEQFree");
    if (rc == PTL_OK && (eq = remote_eq(r, eq_handle)) != NULL) {
        r->eqs[remote_index(eq_handle)] = NULL;
        onic_free(eq->ring);
        onic_free(eq);
    }
    return rc;
}

static int remote_eq_poll(ptl_handle_eq_t *eq_handles, int size, ptl_time_t timeout,
                          ptl_event_t *event, int *which)
{
    remote_t *r = remote_g;
    uint64_t deadline = UINT64_MAX, now;
    onic_ptl_eq_t *eq;
    int rc, i, drained = 0;

    if ((rc = onic_ptl_eq_poll_check(eq_handles, size, timeout, event)) != PTL_OK)
        return rc;
    if (!r->ready && (rc = remote_ready(r)) != PTL_OK)
        return rc;
    if (timeout != PTL_TIME_FOREVER)
        deadline = onic_time_ns() + (uint64_t)timeout * 1000000u;
    for (;;) {
        remote_run_handlers(r);
        /* Every handle is checked on every round: a handler may free one. */
        for (i = 0; i < size; i++) {
            if ((eq = remote_eq(r, eq_handles[i])) == NULL)
                return PTL_EQ_INVALID;
            rc = onic_ptl_eq_take(eq, event);
            if (rc != PTL_EQ_EMPTY) {
                if (which != NULL)
                    *which = i;
                return rc;
            }
        }
        if (!drained) {
            /* First what already waits on the ring, without the clock. */
            if (remote_drain(r) != ONIC_OK)
                return remote_gone("PtlEQPoll");
            drained = 1;
            continue;
        }
        now = onic_time_ns();
        if (now >= deadline)
            return PTL_EQ_EMPTY;
        if (r->in_handler && deadline == UINT64_MAX) {
            onic_error("ptl: PtlEQWait from inside an event handler would wait for ever");
            return PTL_FAIL;
        }
        if (remote_wait(r, deadline - now) != ONIC_OK)
            return remote_gone("PtlEQPoll");
    }
}

/* --- puts and gets -------------------------------------------------------------------- */
static int remote_put(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                      int whole, ptl_ack_req_t ack_req, ptl_process_id_t target_id,
                      ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
                      ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                      ptl_hdr_data_t hdr_data)
{
    remote_t *r = remote_g;
    onic_onload_call_t *c = (onic_onload_call_t *)(void *)r->cmd;
    onic_onload_reply_t reply;
    const remote_md_t *m = NULL;
    uint32_t i = remote_index(md_handle);
    size_t nbytes = 0;
    int rc;

    remote_call_init(c, ONIC_ONLOAD_OP_PUT, md_handle);
    if (i < r->nmds && r->mds[i].handle == md_handle)
        m = &r->mds[i];
    if (whole && m != NULL) {
        local_offset = 0;
        length = m->length;
    }
    c->flag = whole ? 1u : 0u;
    c->off = local_offset;
    c->len = length;
    c->unlink = (uint32_t)ack_req;
    c->id = target_id;
    c->pt = pt_index;
    c->ac = ac_index;
    c->bits = match_bits;
    c->roff = remote_offset;
    c->hdr = hdr_data;
    /* The data goes with the call when we know where it is; the engine
     * checks the region against the MD as for any put. */
    if (m != NULL && length > 0 && length <= ONIC_ONLOAD_PUT_INLINE &&
        local_offset <= m->length && length <= m->length - local_offset) {
        memcpy(r->cmd + sizeof(*c), (const void *)(uintptr_t)(m->start + local_offset),
               length);
        nbytes = length;
    }
    /* No need to wait for the answer when it can only be PTL_OK: an MD the
     * engine cannot unlink by itself (no threshold, no max size), the data
     * here, and every argument checked as the engine would. A failure after
     * all (no memory in the engine) is logged as the engine reports it. */
    if (m != NULL && m->threshold == PTL_MD_THRESH_INF && !(m->options & PTL_MD_MAX_SIZE) &&
        (nbytes == length) && local_offset <= m->length && length <= m->length - local_offset &&
        (ack_req == PTL_ACK_REQ || ack_req == PTL_NOACK_REQ) && target_id.nid == 0 &&
        target_id.pid < r->size && pt_index <= (ptl_pt_index_t)r->limits.max_pt_index &&
        ac_index <= (ptl_ac_index_t)r->limits.max_ac_index && remote_offset <= ONIC_PTL_MAX_LEN) {
        c->flag |= 2u;
        rc = remote_call(r, c, nbytes, 0, &reply, "PtlPut");
        remote_run_handlers(r);
        return rc;
    }
    rc = remote_call(r, c, nbytes, 1, &reply, "PtlPut");
    remote_run_handlers(r);
    return rc;
}

int remote_get(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                        int whole, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                        ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
                        ptl_size_t remote_offset)
{
    remote_t *r = remote_g;
    onic_onload_call_t c;
    onic_onload_reply_t reply;
    int rc;

    remote_call_init(&c, ONIC_ONLOAD_OP_GET, md_handle);
    c.flag = whole ? 1u : 0u;
    c.off = local_offset;
    c.len = length;
    c.id = target_id;
    c.pt = pt_index;
    c.ac = ac_index;
    c.bits = match_bits;
    c.roff = remote_offset;
    rc = remote_call(r, &c, 0, 1, &reply, "PtlGet");
    remote_run_handlers(r);
    return rc;
}

/* --- the back end ------------------------------------------------------------------- */
const onic_ptl_backend_ops_t onic_ptl_backend_onload = {
    .ni_open = remote_ni_open,
    .ni_fini = remote_ni_fini,
    .fini = remote_fini,
    .ni_status = remote_ni_status,
    .ni_handle = remote_ni_handle,
    .ni_bundle = remote_ni_bundle,
    .ni_ids = remote_ni_ids,
    .ac_entry = remote_ac_entry,
    .me_attach = remote_me_attach,
    .me_insert = remote_me_insert,
    .me_unlink = remote_me_unlink,
    .me_unlink_async = remote_me_unlink_async,
    .me_search = remote_me_search,
    .md_attach = remote_md_attach,
    .md_bind = remote_md_bind,
    .md_unlink = remote_md_unlink,
    .md_update = remote_md_update,
    .eq_alloc = remote_eq_alloc,
    .eq_free = remote_eq_free,
    .eq_poll = remote_eq_poll,
    .put = remote_put,
    .get = remote_get,
};
