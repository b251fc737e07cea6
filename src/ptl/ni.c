/* The network interface: PtlInit/PtlFini, PtlNIInit and friends, the access
 * control list, the one NI of this process and the lookups every public
 * call starts with. */
#include "ptl/ptl.h"
#include "ptl/post.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

/* The process's Portals state (ptl.h). */
onic_ptl_global_t onic_ptl_g;
/* The back end running the NI, NULL while it is this process's (backend.h). */
const onic_ptl_backend_ops_t *onic_ptl_backend_g;

/* A back end's fini or ni_fini said rc: PTL_OK, its NI is gone. */
static int ni_backend_closed(int rc)
{
    if (rc == PTL_OK)
        onic_ptl_backend_g = NULL;
    return rc;
}

static const char *const ptl_err_names[PTL_MAX_ERRNO] = {
    [PTL_OK] = "PTL_OK",
    [PTL_SEGV] = "PTL_SEGV",
    [PTL_NO_SPACE] = "PTL_NO_SPACE",
    [PTL_ME_IN_USE] = "PTL_ME_IN_USE",
    [PTL_NAL_FAILED] = "PTL_NAL_FAILED",
    [PTL_NO_INIT] = "PTL_NO_INIT",
    [PTL_IFACE_DUP] = "PTL_IFACE_DUP",
    [PTL_IFACE_INVALID] = "PTL_IFACE_INVALID",
    [PTL_HANDLE_INVALID] = "PTL_HANDLE_INVALID",
    [PTL_MD_INVALID] = "PTL_MD_INVALID",
    [PTL_ME_INVALID] = "PTL_ME_INVALID",
    [PTL_PROCESS_INVALID] = "PTL_PROCESS_INVALID",
    [PTL_PT_INDEX_INVALID] = "PTL_PT_INDEX_INVALID",
    [PTL_SR_INDEX_INVALID] = "PTL_SR_INDEX_INVALID",
    [PTL_EQ_INVALID] = "PTL_EQ_INVALID",
    [PTL_EQ_DROPPED] = "PTL_EQ_DROPPED",
    [PTL_EQ_EMPTY] = "PTL_EQ_EMPTY",
    [PTL_MD_NO_UPDATE] = "PTL_MD_NO_UPDATE",
    [PTL_FAIL] = "PTL_FAIL",
    [PTL_AC_INDEX_INVALID] = "PTL_AC_INDEX_INVALID",
    [PTL_MD_ILLEGAL] = "PTL_MD_ILLEGAL",
    [PTL_ME_LIST_TOO_LONG] = "PTL_ME_LIST_TOO_LONG",
    [PTL_MD_IN_USE] = "PTL_MD_IN_USE",
    [PTL_NI_INVALID] = "PTL_NI_INVALID",
    [PTL_PID_INVALID] = "PTL_PID_INVALID",
    [PTL_PT_FULL] = "PTL_PT_FULL",
    [PTL_OVF_MATCHED] = "PTL_OVF_MATCHED",
};

const char *PtlErrorStr(int errnum)
{
    if (errnum < 0 || errnum >= PTL_MAX_ERRNO || ptl_err_names[errnum] == NULL)
        return "unknown Portals return code";
    return ptl_err_names[errnum];
}

int onic_ptl_status_to_ptl(onic_status_t status)
{
    switch (status) {
    case ONIC_OK:
        return PTL_OK;
    case ONIC_ERR_NO_MEMORY:
    case ONIC_ERR_NO_RESOURCE:
        return PTL_NO_SPACE;
    default:
        return PTL_FAIL;
    }
}

/* --- Limits ------------------------------------------------------------------ */
static const ptl_ni_limits_t ptl_limits_max = {
    .max_mes = ONIC_PTL_MAX_OBJECTS,
    .max_mds = ONIC_PTL_MAX_OBJECTS,
    .max_eqs = ONIC_PTL_MAX_OBJECTS,
    .max_ac_index = ONIC_PTL_AC_LIMIT - 1,
    .max_pt_index = ONIC_PTL_PT_LIMIT - 1,
    .max_md_iovecs = PTL_MD_IOVEC_MAX,
    .max_me_list = ONIC_PTL_MAX_OBJECTS,
    .max_getput_md = 0,
};

static const ptl_ni_limits_t ptl_limits_default = {
    .max_mes = ONIC_PTL_MAX_OBJECTS,
    .max_mds = ONIC_PTL_MAX_OBJECTS,
    .max_eqs = ONIC_PTL_MAX_OBJECTS,
    .max_ac_index = 63,
    .max_pt_index = 63,
    .max_md_iovecs = PTL_MD_IOVEC_MAX,
    .max_me_list = ONIC_PTL_MAX_OBJECTS,
    .max_getput_md = 0,
};

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void onic_ptl_ni_clamp_limits(const ptl_ni_limits_t *desired, ptl_ni_limits_t *actual)
{
    const ptl_ni_limits_t *d = desired != NULL ? desired : &ptl_limits_default;
    const ptl_ni_limits_t *m = &ptl_limits_max;

    actual->max_mes = clamp(d->max_mes, 1, m->max_mes);
    actual->max_mds = clamp(d->max_mds, 1, m->max_mds);
    actual->max_eqs = clamp(d->max_eqs, 1, m->max_eqs);
    actual->max_ac_index = clamp(d->max_ac_index, 1, m->max_ac_index); /* entries 0 and 1 */
    actual->max_pt_index = clamp(d->max_pt_index, 0, m->max_pt_index);
    actual->max_md_iovecs = clamp(d->max_md_iovecs, 1, m->max_md_iovecs);
    actual->max_me_list = clamp(d->max_me_list, 1, m->max_me_list);
    actual->max_getput_md = 0;
}

/* --- Process ids ----------------------------------------------------------------- */
void onic_ptl_id_key(ptl_process_id_t id, uint64_t *id_p, uint64_t *ignore_p)
{
    *id_p = (uint64_t)id.nid << 32 | id.pid;
    *ignore_p = (id.nid == PTL_NID_ANY ? UINT64_C(0xffffffff) << 32 : 0) |
                (id.pid == PTL_PID_ANY ? UINT64_C(0xffffffff) : 0);
}

/* --- Access control ---------------------------------------------------------------- */
onic_ptl_ace_t onic_ptl_ace_make(const onic_ptl_ni_t *ni, ptl_process_id_t id, ptl_uid_t uid,
                                 ptl_jid_t jid, ptl_pt_index_t pt_index)
{
    onic_ptl_ace_t a = {1, id, uid, jid, pt_index, 0};

    a.everyone = (id.nid == PTL_NID_ANY || id.nid == 0) && id.pid == PTL_PID_ANY &&
                 (uid == PTL_UID_ANY || uid == ni->uid) && (jid == PTL_JID_ANY || jid == ni->jid) &&
                 pt_index == PTL_PT_INDEX_ANY;
    return a;
}

/* --- The NI ---------------------------------------------------------------------- */
static void ni_destroy(onic_ptl_ni_t *ni)
{
    if (ni->pt != NULL) {
        for (uint32_t i = 0; i < ni->mes.used; i++)
            if (ni->mes.obj[i] != NULL)
                onic_ptl_me_destroy(ni, ni->mes.obj[i]);
        for (int i = 0; i <= ni->limits.max_pt_index; i++)
            onic_ptl_pt_fini(&ni->pt[i]);
    }
    for (uint32_t i = 0; i < ni->mds.used; i++)
        if (ni->mds.obj[i] != NULL)
            onic_ptl_md_destroy(ni, ni->mds.obj[i]);
    for (uint32_t i = 0; i < ni->eqs.used; i++) {
        onic_ptl_eq_t *eq = ni->eqs.obj[i];
        if (eq != NULL) {
            onic_free(eq->ring);
            onic_free(eq);
        }
    }
    onic_ptl_target_fini(ni);
    onic_ptl_large_fini(ni);
    onic_pool_fini(&ni->me_pool);
    onic_pool_fini(&ni->md_pool);
    onic_pool_fini(&ni->ovf_pool);
    onic_ptl_htab_fini(&ni->mes);
    onic_ptl_htab_fini(&ni->mds);
    onic_ptl_htab_fini(&ni->eqs);
    onic_free(ni->pt);
    onic_free(ni->acl);
    onic_free(ni->iov_buf);
    onic_free(ni);
}

int onic_ptl_ni_open(const onic_ptl_ni_params_t *p, ptl_ni_limits_t *actual,
                     ptl_handle_ni_t *ni_handle)
{
    onic_ptl_ni_t *ni;

    if (!onic_ptl_g.init)
        return PTL_NO_INIT;
    if (ni_handle == NULL) {
        onic_error("ptl: PtlNIInit with a NULL ni_handle: pass where to store the handle");
        return PTL_SEGV;
    }
    if (onic_ptl_g.ni != NULL) {
        *ni_handle = onic_ptl_g.ni->handle;
        if (actual != NULL)
            *actual = onic_ptl_g.ni->limits;
        return PTL_IFACE_DUP;
    }
    ni = onic_calloc(1, sizeof(*ni));
    if (ni == NULL)
        return PTL_NO_SPACE;
    onic_ptl_g.epoch = (onic_ptl_g.epoch + 1) & 0xff;
    ni->handle = onic_ptl_handle_make(ONIC_PTL_KIND_NI, onic_ptl_g.epoch, 0, 0);
    ni->rank = p->rank;
    ni->size = p->size;
    ni->uid = p->uid;
    ni->jid = p->jid;
    ni->max_inline = p->max_inline;
    ni->engine = p->engine;
    ni->io = p->io;
    ni->io_arg = p->io_arg;
    onic_dlist_init(&ni->rma_pending);
    onic_pool_init(&ni->me_pool, sizeof(onic_ptl_me_t), 64);
    onic_pool_init(&ni->md_pool, sizeof(onic_ptl_md_t), 64);
    onic_pool_init(&ni->ovf_pool, sizeof(onic_ptl_ovf_t), 64);
    onic_ptl_large_init(ni);
    onic_ptl_ni_clamp_limits(p->desired, &ni->limits);
    /* An NI serving another process (the onload engine) takes no I/O
     * vectors (md.c says why): 1, the 3.3 specification's "none". */
    if (p->io != NULL && p->io->store != NULL)
        ni->limits.max_md_iovecs = 1;
    onic_ptl_htab_init(&ni->mes, ONIC_PTL_KIND_ME, onic_ptl_g.epoch, (uint32_t)ni->limits.max_mes);
    onic_ptl_htab_init(&ni->mds, ONIC_PTL_KIND_MD, onic_ptl_g.epoch, (uint32_t)ni->limits.max_mds);
    onic_ptl_htab_init(&ni->eqs, ONIC_PTL_KIND_EQ, onic_ptl_g.epoch, (uint32_t)ni->limits.max_eqs);
    ni->pt = onic_calloc((size_t)ni->limits.max_pt_index + 1, sizeof(*ni->pt));
    ni->acl = onic_calloc((size_t)ni->limits.max_ac_index + 1, sizeof(*ni->acl));
    if (ni->pt == NULL || ni->acl == NULL) {
        ni_destroy(ni);
        return PTL_NO_SPACE;
    }
    /* Paper 003, 4.5: entry 0 admits the job, entry 1 system processes. */
    ni->acl[0] = onic_ptl_ace_make(ni, (ptl_process_id_t){PTL_NID_ANY, PTL_PID_ANY},
                                   PTL_UID_ANY, ni->jid, PTL_PT_INDEX_ANY);
    ni->acl[1] = onic_ptl_ace_make(ni, (ptl_process_id_t){PTL_NID_ANY, PTL_PID_ANY},
                                   PTL_UID_ANY, PTL_JID_NONE, PTL_PT_INDEX_ANY);
    onic_ptl_g.ni = ni;
    if (actual != NULL)
        *actual = ni->limits;
    *ni_handle = ni->handle;
    return PTL_OK;
}

static int ni_close(const char *call)
{
    onic_ptl_ni_t *ni = onic_ptl_g.ni;

    if (ni == NULL)
        return PTL_OK;
    if (ni->in_handler || ni->in_progress) {
        onic_error("ptl: %s from inside an event handler: the NI is in use; finalize after "
                   "the handler returns", call);
        return PTL_FAIL;
    }
    /* The transport first: nothing may arrive into state being freed. */
    if (ni->io != NULL && ni->io->close != NULL)
        ni->io->close(ni->io_arg);
    onic_ptl_g.ni = NULL;
    ni_destroy(ni);
    return PTL_OK;
}

onic_ptl_ni_t *onic_ptl_ni_select(onic_ptl_ni_t *ni)
{
    onic_ptl_ni_t *old = onic_ptl_g.ni;

    onic_ptl_g.ni = ni;
    return old;
}


unsigned onic_ptl_ni_progress(onic_ptl_ni_t *ni, uint64_t timeout_ns)
{
    unsigned n;

    if (ni->in_progress || ni->io == NULL || ni->io->progress == NULL)
        return 0;
    ni->in_progress = 1;
    n = ni->io->progress(ni->io_arg, timeout_ns);
    ni->in_progress = 0;
    return n;
}

/* MPI_THREAD_MULTIPLE's sleep (post.h): not while this NI is in progress
 * or a handler's call waits, nor through a back end. */
int onic_ptl_sleep_arm(ptl_handle_ni_t ni_handle, uint32_t **word, uint32_t *val,
                       uint64_t *max_ns)
{
    onic_ptl_ni_t *ni = onic_ptl_g.ni;

    return onic_ptl_backend_g == NULL && ni != NULL && ni->handle == ni_handle &&
           !ni->in_progress && ni->hq_len == 0 && ni->io != NULL && ni->io->sleep_arm != NULL &&
           ni->io->sleep_arm(ni->io_arg, word, val, max_ns);
}

void onic_ptl_sleep_disarm(ptl_handle_ni_t ni_handle)
{
    onic_ptl_ni_t *ni = onic_ptl_g.ni;

    if (ni != NULL && ni->handle == ni_handle && ni->io != NULL && ni->io->sleep_disarm != NULL)
        ni->io->sleep_disarm(ni->io_arg);
}

/* Do what the target side answered: drop a registration, start an RMA (if
 * that fails, the operation ends there and then), send a message. */
static void ni_answer(onic_ptl_ni_t *ni, onic_ptl_out_t *out)
{
    onic_status_t status;

    if (out->dereg)
        ni->io->mem_dereg(ni->io_arg, &out->dereg_key);
    if (out->rma) {
        status = ONIC_ERR_UNSUPPORTED;
        if (out->rma_iov != NULL) {
            /* Set first: the completion may be reported from inside. */
            onic_ptl_target_rma_vector(out->rma_ctx, 1);
            status = ni->io->rmav(ni->io_arg, out->dest, out->rma_write, out->rma_iov,
                                  out->rma_niov, &out->rma_key, out->rma_roffset, out->rma_vlen,
                                  out->rma_ctx);
            if (status == ONIC_ERR_UNSUPPORTED)
                onic_ptl_target_rma_vector(out->rma_ctx, 0);
        }
        if (status == ONIC_ERR_UNSUPPORTED)
            status = ni->io->rma(ni->io_arg, out->dest, out->rma_write, out->rma_local,
                                 &out->rma_key, out->rma_roffset, out->rma_len, out->rma_ctx);
        if (status != ONIC_OK) {
            onic_ptl_target_rma_done(ni, out->rma_ctx, status, out);
            ni_answer(ni, out);
            return;
        }
    }
    if (out->send) {
        /* io->send checks nothing (its callers do): the target side's
         * answer is held to the same limits as a put. */
        if (out->dest >= ni->size || out->hdr_len > sizeof(out->hdr) || out->len > ni->max_inline ||
            (out->len > 0 && out->payload == NULL)) {
            onic_error("ptl: an answer to rank %u of %zu + %zu bytes is beyond what the "
                       "interface sends (a bug in the target side): not sent", out->dest,
                       out->hdr_len, out->len);
            return;
        }
        status = ni->io->send(ni->io_arg, out->dest, &out->hdr, out->hdr_len, out->payload,
                              out->len);
        if (status != ONIC_OK)
            onic_error("ptl: cannot answer rank %u: %s", out->dest, onic_status_str(status));
    }
}

void onic_ptl_ni_deliver(onic_ptl_ni_t *ni, uint32_t src, const void *hdr, size_t hdr_len,
                         const void *payload, size_t len)
{
    onic_ptl_out_t out;
    int taken = hdr_len == 32 ? onic_ptl_target_put_small(ni, src, hdr, payload, len, &out) : 0;

    if (taken == 1) /* the common small put: no answer, no handler */
        return;
    if (taken == 0)
        onic_ptl_target_recv(ni, src, hdr, hdr_len, payload, len, &out);
    if (out.send | out.rma | out.dereg) /* most messages need no answer */
        ni_answer(ni, &out);
    onic_ptl_eq_run_handlers(ni);
}

void onic_ptl_ni_rma_done(onic_ptl_ni_t *ni, void *ctx, onic_status_t status)
{
    onic_ptl_out_t out;

    onic_ptl_target_rma_done(ni, ctx, status, &out);
    ni_answer(ni, &out);
    onic_ptl_eq_run_handlers(ni);
}

void onic_ptl_ni_placed(onic_ptl_ni_t *ni, uint32_t src)
{
    onic_ptl_out_t out;

    onic_ptl_target_placed(ni, src, &out);
    if (out.send | out.rma | out.dereg)
        ni_answer(ni, &out);
    onic_ptl_eq_run_handlers(ni);
}

void onic_ptl_ni_drop(onic_ptl_ni_t *ni, onic_ptl_drop_t why)
{
    ni->drops[why]++;
    ni->dropped++;
}

/* --- Public calls -------------------------------------------------------------------- */
int PtlInit(int *max_interfaces)
{
    if (max_interfaces == NULL) {
        onic_error("ptl: PtlInit with a NULL max_interfaces: pass where to store the count");
        return PTL_SEGV;
    }
    onic_ptl_g.init = 1;
    *max_interfaces = 1;
    return PTL_OK;
}

void PtlFini(void)
{
    if (onic_ptl_backend_g != NULL)
        ni_backend_closed(onic_ptl_backend_g->fini());
    if (ni_close("PtlFini") == PTL_OK)
        onic_ptl_g.init = 0;
}

int PtlNIInit(ptl_interface_t iface, ptl_pid_t pid, ptl_ni_limits_t *desired,
              ptl_ni_limits_t *actual, ptl_handle_ni_t *ni_handle)
{
    if (!onic_ptl_g.init)
        return PTL_NO_INIT;
    if (ni_handle == NULL) {
        onic_error("ptl: PtlNIInit with a NULL ni_handle: pass where to store the handle");
        return PTL_SEGV;
    }
    if (iface != PTL_IFACE_DEFAULT) {
        onic_error("ptl: PtlNIInit: interface %d does not exist; onic has one, PTL_IFACE_DEFAULT",
                   iface);
        return PTL_IFACE_INVALID;
    }
    if (onic_ptl_g.ni != NULL || onic_ptl_backend_g != NULL) {
        if (onic_ptl_backend_g != NULL)
            return onic_ptl_backend_g->ni_open(NULL, pid, desired, actual, ni_handle);
        return onic_ptl_ni_open(NULL, actual, ni_handle); /* PTL_IFACE_DUP */
    }
    return onic_ptl_xport_ni_open(pid, desired, actual, ni_handle);
}

int PtlNIFini(ptl_handle_ni_t ni_handle)
{
    if (onic_ptl_backend_g != NULL)
        return ni_backend_closed(onic_ptl_backend_g->ni_fini(ni_handle));
    onic_ptl_ni_t *ni;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    return ni_close("PtlNIFini");
}

int PtlNIStatus(ptl_handle_ni_t ni_handle, ptl_sr_index_t reg, ptl_sr_value_t *status)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->ni_status(ni_handle, reg, status);
    onic_ptl_ni_t *ni;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    if (status == NULL) {
        onic_error("ptl: PtlNIStatus with a NULL status: pass where to store the value");
        return PTL_SEGV;
    }
    if (reg == PTL_SR_JOB_SIZE) {
        *status = (ptl_sr_value_t)ni->size;
        return PTL_OK;
    }
    if (reg == PTL_SR_MAX_INLINE) {
        *status = ni->max_inline > INT32_MAX ? INT32_MAX : (ptl_sr_value_t)ni->max_inline;
        return PTL_OK;
    }
    if (reg != PTL_SR_DROP_COUNT) {
        onic_error("ptl: PtlNIStatus: status register %d does not exist; use PTL_SR_DROP_COUNT, "
                   "PTL_SR_JOB_SIZE or PTL_SR_MAX_INLINE", reg);
        return PTL_SR_INDEX_INVALID;
    }
    /* Messages that arrived and are waiting count once looked at. */
    onic_ptl_ni_progress(ni, 0);
    *status = ni->dropped > INT32_MAX ? INT32_MAX : (ptl_sr_value_t)ni->dropped;
    return PTL_OK;
}

int PtlNIHandle(ptl_handle_any_t handle, ptl_handle_ni_t *ni_handle)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->ni_handle(handle, ni_handle);
    onic_ptl_ni_t *ni = NULL;
    void *obj;
    int rc;

    if (!onic_ptl_g.init)
        return PTL_NO_INIT;
    if (ni_handle == NULL) {
        onic_error("ptl: PtlNIHandle with a NULL ni_handle: pass where to store the handle");
        return PTL_SEGV;
    }
    switch (onic_ptl_handle_kind(handle)) {
    case ONIC_PTL_KIND_NI:
        rc = onic_ptl_ni_of(handle, &ni);
        break;
    case ONIC_PTL_KIND_ME:
        rc = onic_ptl_me_of(handle, &ni, (onic_ptl_me_t **)&obj);
        break;
    case ONIC_PTL_KIND_MD:
        rc = onic_ptl_md_of(handle, &ni, (onic_ptl_md_t **)&obj);
        break;
    case ONIC_PTL_KIND_EQ:
        rc = onic_ptl_eq_of(handle, &ni, (onic_ptl_eq_t **)&obj);
        break;
    default:
        rc = PTL_HANDLE_INVALID;
        break;
    }
    if (rc != PTL_OK) {
        onic_error("ptl: PtlNIHandle: handle %#llx names no live object",
                   (unsigned long long)handle);
        return PTL_HANDLE_INVALID;
    }
    *ni_handle = ni->handle;
    return PTL_OK;
}

static int ni_bundle(ptl_handle_ni_t ni_handle, int on)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->ni_bundle(ni_handle, on);
    onic_ptl_ni_t *ni;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    if (ni->io == NULL || ni->io->bundle == NULL)
        return PTL_OK; /* nothing is ever held */
    return onic_ptl_status_to_ptl(ni->io->bundle(ni->io_arg, on));
}

int PtlStartBundle(ptl_handle_ni_t ni_handle)
{
    return ni_bundle(ni_handle, 1);
}

int PtlEndBundle(ptl_handle_ni_t ni_handle)
{
    return ni_bundle(ni_handle, 0);
}

int PtlGetId(ptl_handle_ni_t ni_handle, ptl_process_id_t *id)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->ni_ids(ni_handle, id, NULL, NULL);
    onic_ptl_ni_t *ni;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    if (id == NULL) {
        onic_error("ptl: PtlGetId with a NULL id: pass where to store it");
        return PTL_SEGV;
    }
    id->nid = 0;
    id->pid = ni->rank;
    return PTL_OK;
}

int PtlGetUid(ptl_handle_ni_t ni_handle, ptl_uid_t *uid)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->ni_ids(ni_handle, NULL, uid, NULL);
    onic_ptl_ni_t *ni;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    if (uid == NULL) {
        onic_error("ptl: PtlGetUid with a NULL uid: pass where to store it");
        return PTL_SEGV;
    }
    *uid = ni->uid;
    return PTL_OK;
}

int PtlGetJid(ptl_handle_ni_t ni_handle, ptl_jid_t *jid)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->ni_ids(ni_handle, NULL, NULL, jid);
    onic_ptl_ni_t *ni;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    if (jid == NULL) {
        onic_error("ptl: PtlGetJid with a NULL jid: pass where to store it");
        return PTL_SEGV;
    }
    *jid = ni->jid;
    return PTL_OK;
}

int PtlACEntry(ptl_handle_ni_t ni_handle, ptl_ac_index_t ac_index, ptl_process_id_t match_id,
               ptl_uid_t uid, ptl_jid_t jid, ptl_pt_index_t pt_index)
{
    if (onic_ptl_backend_g != NULL)
        return onic_ptl_backend_g->ac_entry(ni_handle, ac_index, match_id, uid, jid, pt_index);
    onic_ptl_ni_t *ni;
    int rc = onic_ptl_ni_of(ni_handle, &ni);

    if (rc != PTL_OK)
        return rc;
    if (ac_index > (ptl_ac_index_t)ni->limits.max_ac_index) {
        onic_error("ptl: PtlACEntry: ac_index %u is beyond the access control list (0 to %d)",
                   ac_index, ni->limits.max_ac_index);
        return PTL_AC_INDEX_INVALID;
    }
    if (!onic_ptl_id_valid(ni, match_id, 1)) {
        onic_error("ptl: PtlACEntry: match_id {%u, %u} is no process of this job (nid 0 or "
                   "PTL_NID_ANY, pid below %u or PTL_PID_ANY)", match_id.nid, match_id.pid,
                   ni->size);
        return PTL_PROCESS_INVALID;
    }
    if (pt_index != PTL_PT_INDEX_ANY && pt_index > (ptl_pt_index_t)ni->limits.max_pt_index) {
        onic_error("ptl: PtlACEntry: pt_index %u is beyond the portal table (0 to %d, or "
                   "PTL_PT_INDEX_ANY)", pt_index, ni->limits.max_pt_index);
        return PTL_PT_INDEX_INVALID;
    }
    ni->acl[ac_index] = onic_ptl_ace_make(ni, match_id, uid, jid, pt_index);
    return PTL_OK;
}
