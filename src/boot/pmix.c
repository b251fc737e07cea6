/* PMIx: Open MPI's mpirun, srun --mpi=pmix, prterun. The launcher's server
 * gives the rank (PMIx_Init), the job size (PMIX_JOB_SIZE), the ranks on this
 * node (PMIX_LOCAL_PEERS) and the key-value store (PMIx_Put / Commit, a
 * Fence that collects data, PMIx_Get). Every failure is reported with
 * PMIx's own error string.
 *
 * Built only where pkg-config finds PMIx (ONIC_HAVE_PMIX): otherwise the
 * table below says so and the front end refuses to use it. */
#include "boot/boot.h"

#ifdef ONIC_HAVE_PMIX

#include "base/log.h"
#include "base/mem.h"

#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct bootpmix {
    pmix_proc_t me;
    int         committed;  /* puts since the last fence were committed */
} bootpmix_t;

static onic_status_t pmix_fail(const char *what, pmix_status_t rc)
{
    onic_error("boot: pmix: %s failed: %s (%d)", what, PMIx_Error_string(rc), (int)rc);
    return ONIC_ERR_IO;
}

/* A value of the wrong type: PMIx said success, the value is not usable. */
static onic_status_t pmix_bad_value(const char *what, const pmix_value_t *val)
{
    onic_error("boot: pmix: %s: the launcher's value is %s, not what PMIx documents; is the "
               "launcher's PMIx compatible with this one?", what,
               val == NULL ? "missing" : PMIx_Data_type_string(val->type));
    return ONIC_ERR_IO;
}

static onic_status_t bootpmix_init(onic_boot_t *b)
{
    bootpmix_t *s = onic_calloc(1, sizeof(*s));
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    onic_status_t status;

    if (s == NULL)
        return ONIC_ERR_NO_MEMORY;
    rc = PMIx_Init(&s->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        onic_free(s);
        return pmix_fail("PMIx_Init (is the launcher's PMIx server reachable?)", rc);
    }
    b->state = s;
    b->rank = s->me.rank;
    snprintf(b->jobid, sizeof(b->jobid), "%.*s", ONIC_BOOT_JOBID_MAX, s->me.nspace);
    PMIX_PROC_CONSTRUCT(&wild);
    memcpy(wild.nspace, s->me.nspace, sizeof(wild.nspace));
    wild.rank = PMIX_RANK_WILDCARD;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_UINT32) {
        status = rc != PMIX_SUCCESS ? pmix_fail("getting the job size (PMIX_JOB_SIZE)", rc)
                                    : pmix_bad_value("PMIX_JOB_SIZE", val);
        goto err_fini;
    }
    b->size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    val = NULL;
    if (b->size == 0 || b->rank >= b->size) {
        onic_error("boot: pmix: rank %u of a job of %u", b->rank, b->size);
        status = ONIC_ERR_IO;
        goto err_fini;
    }
    rc = PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_STRING ||
        val->data.string == NULL) {
        status = rc != PMIX_SUCCESS
                     ? pmix_fail("getting the ranks on this node (PMIX_LOCAL_PEERS)", rc)
                     : pmix_bad_value("PMIX_LOCAL_PEERS", val);
        goto err_fini;
    }
    status = onic_boot_local_parse(b, val->data.string, "PMIX_LOCAL_PEERS");
    PMIX_VALUE_RELEASE(val);
    if (status != ONIC_OK)
        goto err_fini;
    return ONIC_OK;

err_fini:
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    PMIx_Finalize(NULL, 0);
    onic_free(s);
    b->state = NULL;
    return status;
}

static onic_status_t bootpmix_put(onic_boot_t *b, const char *key, const void *val, size_t len)
{
    bootpmix_t *s = b->state;
    pmix_value_t v;
    char k[PMIX_MAX_KEYLEN + 1];
    pmix_status_t rc;

    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)(uintptr_t)val;
    v.data.bo.size = len;
    snprintf(k, sizeof(k), "onic-%s", key);
    rc = PMIx_Put(PMIX_GLOBAL, k, &v);
    if (rc != PMIX_SUCCESS)
        return pmix_fail("PMIx_Put", rc);
    s->committed = 0;
    return ONIC_OK;
}

static onic_status_t bootpmix_fence(onic_boot_t *b)
{
    bootpmix_t *s = b->state;
    pmix_proc_t wild;
    pmix_info_t info;
    bool collect = true;
    pmix_status_t rc;

    if (!s->committed) {
        rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS)
            return pmix_fail("PMIx_Commit", rc);
        s->committed = 1;
    }
    PMIX_PROC_CONSTRUCT(&wild);
    memcpy(wild.nspace, s->me.nspace, sizeof(wild.nspace));
    wild.rank = PMIX_RANK_WILDCARD;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(&wild, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        return pmix_fail("PMIx_Fence (did a process of the job fail?)", rc);
    return ONIC_OK;
}

static onic_status_t bootpmix_get(onic_boot_t *b, uint32_t rank, const char *key, void *val,
                                  size_t *len_p)
{
    bootpmix_t *s = b->state;
    pmix_proc_t proc;
    pmix_value_t *v = NULL;
    char k[PMIX_MAX_KEYLEN + 1];
    pmix_info_t info[1];
    int timeout = 30; /* seconds */
    pmix_status_t rc;
    onic_status_t status = ONIC_OK;

    PMIX_PROC_CONSTRUCT(&proc);
    memcpy(proc.nspace, s->me.nspace, sizeof(proc.nspace));
    proc.rank = rank;
    snprintf(k, sizeof(k), "onic-%s", key);
    /* After the fence the value is there or never will be: do not let the
     * server wait for it forever (it may still fetch it from the rank's
     * node, so not PMIX_OPTIONAL). */
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    rc = PMIx_Get(&proc, k, info, 1, &v);
    PMIX_INFO_DESTRUCT(&info[0]);
    if (rc != PMIX_SUCCESS || v == NULL) {
        onic_error("boot: pmix: getting rank %u's %s failed: %s", rank, key,
                   PMIx_Error_string(rc));
        status = ONIC_ERR_IO;
    } else if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size > *len_p) {
        onic_error("boot: pmix: rank %u's %s is not %zu bytes or fewer", rank, key, *len_p);
        status = ONIC_ERR_TRUNCATED;
    } else {
        if (v->data.bo.size > 0)
            memcpy(val, v->data.bo.bytes, v->data.bo.size);
        *len_p = v->data.bo.size;
    }
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
    return status;
}

static void bootpmix_abort(onic_boot_t *b, int code, const char *msg)
{
    pmix_status_t rc;

    fprintf(stderr, "onic: rank %u aborts the job with code %d: %s\n", b->rank, code, msg);
    rc = PMIx_Abort(code, msg, NULL, 0);
    if (rc != PMIX_SUCCESS)
        onic_error("boot: pmix: PMIx_Abort failed: %s; exiting anyway", PMIx_Error_string(rc));
}

static void bootpmix_fini(onic_boot_t *b)
{
    pmix_status_t rc;

    if (b->state == NULL)
        return;
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        onic_warn("boot: pmix: PMIx_Finalize failed: %s", PMIx_Error_string(rc));
    onic_free(b->state);
    b->state = NULL;
}

const onic_boot_ops_t onic_boot_pmix_ops = {
    .name    = "pmix",
    .missing = NULL,
    .init    = bootpmix_init,
    .put     = bootpmix_put,
    .fence   = bootpmix_fence,
    .get     = bootpmix_get,
    .abort   = bootpmix_abort,
    .fini    = bootpmix_fini,
};

#else /* !ONIC_HAVE_PMIX */

/* Never called: the front end refuses a bootstrap that names what is missing. */
const onic_boot_ops_t onic_boot_pmix_ops = {
    .name    = "pmix",
    .missing = "PMIx not found at build time (install libpmix-dev and rebuild)",
};

#endif
