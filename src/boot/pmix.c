/* PMIx: Open MPI's mpirun, srun --mpi=pmix, prterun. The launcher's server
 * gives the rank (PMIx_Init), the job size (PMIX_JOB_SIZE), the ranks on this
 * node (PMIX_LOCAL_PEERS) and the key-value store (PMIx_Put / Commit, a
 * Fence that collects data, PMIx_Get). Every failure is reported with
 * PMIx's own error string.
 *
 * libpmix is opened (base/dl.h) when this bootstrap starts, so a process
 * that another launcher started never loads it nor what it pulls in. PMIx's
 * functions are called through pmix_fn only, including the two its
 * headers' macros call (PMIX_VALUE_RELEASE, PMIX_INFO_LOAD), whose work is
 * written out here. */
#include "boot/boot.h"
#include "base/dl.h"
#include "base/log.h"
#include "base/mem.h"

#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PMIx's exported functions onic calls, resolved by onic_boot_pmix_load. */
static struct pmix_fn {
    __typeof__(PMIx_Init)             *init;
    __typeof__(PMIx_Finalize)         *finalize;
    __typeof__(PMIx_Get)              *get;
    __typeof__(PMIx_Put)              *put;
    __typeof__(PMIx_Commit)           *commit;
    __typeof__(PMIx_Fence)            *fence;
    __typeof__(PMIx_Abort)            *abort;
    __typeof__(PMIx_Error_string)     *error_string;
    __typeof__(PMIx_Data_type_string) *data_type_string;
    __typeof__(PMIx_Value_destruct)   *value_destruct;
    __typeof__(PMIx_Info_load)        *info_load;
} pmix_fn;

/* PMIx does not version its symbols. */
static const onic_dl_sym_t pmix_syms[] = {
    {"PMIx_Init",             NULL, &pmix_fn.init},
    {"PMIx_Finalize",         NULL, &pmix_fn.finalize},
    {"PMIx_Get",              NULL, &pmix_fn.get},
    {"PMIx_Put",              NULL, &pmix_fn.put},
    {"PMIx_Commit",           NULL, &pmix_fn.commit},
    {"PMIx_Fence",            NULL, &pmix_fn.fence},
    {"PMIx_Abort",            NULL, &pmix_fn.abort},
    {"PMIx_Error_string",     NULL, &pmix_fn.error_string},
    {"PMIx_Data_type_string", NULL, &pmix_fn.data_type_string},
    {"PMIx_Value_destruct",   NULL, &pmix_fn.value_destruct},
    {"PMIx_Info_load",        NULL, &pmix_fn.info_load},
};

static onic_dl_lib_t pmix_lib = {
    .what      = "libpmix",
    .file      = "libpmix.so.2",
    .package   = "libpmix2",
    .needed_by = "the pmix bootstrap (a job started by a PMIx launcher: Open MPI's mpirun, "
                 "srun --mpi=pmix, prterun)",
    .var       = "ONIC_PMIX_LIB",
    .syms      = pmix_syms,
    .nsyms     = sizeof(pmix_syms) / sizeof(pmix_syms[0]),
};

onic_status_t onic_boot_pmix_load(const onic_config_t *cfg)
{
    return onic_dl_load(&pmix_lib, cfg->pmix_lib);
}

/* PMIX_VALUE_RELEASE: a value PMIx allocated, its contents and itself;
 * *v_p becomes NULL. */
static void pmix_value_release(pmix_value_t **v_p)
{
    pmix_fn.value_destruct(*v_p);
    free(*v_p);
    *v_p = NULL;
}

/* PMIX_INFO_CONSTRUCT then PMIX_INFO_LOAD. */
static void pmix_info_set(pmix_info_t *info, const char *key, const void *val,
                          pmix_data_type_t type)
{
    PMIX_INFO_CONSTRUCT(info);
    (void)pmix_fn.info_load(info, key, val, type);
}

/* PMIX_INFO_DESTRUCT of an info that is not persistent. */
static void pmix_info_unset(pmix_info_t *info)
{
    pmix_fn.value_destruct(&info->value);
}

typedef struct bootpmix {
    pmix_proc_t me;
    int         committed;  /* puts since the last fence were committed */
} bootpmix_t;

static onic_status_t pmix_fail(const char *what, pmix_status_t rc)
{
    onic_error("boot: pmix: %s failed: %s (%d)", what, pmix_fn.error_string(rc), (int)rc);
    return ONIC_ERR_IO;
}

/* A value of the wrong type: PMIx said success, the value is not usable. */
static onic_status_t pmix_bad_value(const char *what, const pmix_value_t *val)
{
    onic_error("boot: pmix: %s: the launcher's value is %s, not what PMIx documents; is the "
               "launcher's PMIx compatible with this one?", what,
               val == NULL ? "missing" : pmix_fn.data_type_string(val->type));
    return ONIC_ERR_IO;
}

static onic_status_t bootpmix_init(onic_boot_t *b)
{
    bootpmix_t *s;
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    onic_status_t status;

    status = onic_boot_pmix_load(&b->cfg);
    if (status != ONIC_OK)
        return status;
    s = onic_calloc(1, sizeof(*s));
    if (s == NULL)
        return ONIC_ERR_NO_MEMORY;
    rc = pmix_fn.init(&s->me, NULL, 0);
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
    rc = pmix_fn.get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_UINT32) {
        status = rc != PMIX_SUCCESS ? pmix_fail("getting the job size (PMIX_JOB_SIZE)", rc)
                                    : pmix_bad_value("PMIX_JOB_SIZE", val);
        goto err_fini;
    }
    b->size = val->data.uint32;
    pmix_value_release(&val);
    if (b->size == 0 || b->rank >= b->size) {
        onic_error("boot: pmix: rank %u of a job of %u", b->rank, b->size);
        status = ONIC_ERR_IO;
        goto err_fini;
    }
    rc = pmix_fn.get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_STRING ||
        val->data.string == NULL) {
        status = rc != PMIX_SUCCESS
                     ? pmix_fail("getting the ranks on this node (PMIX_LOCAL_PEERS)", rc)
                     : pmix_bad_value("PMIX_LOCAL_PEERS", val);
        goto err_fini;
    }
    status = onic_boot_local_parse(b, val->data.string, "PMIX_LOCAL_PEERS");
    pmix_value_release(&val);
    if (status != ONIC_OK)
        goto err_fini;
    return ONIC_OK;

err_fini:
    if (val != NULL)
        pmix_value_release(&val);
    pmix_fn.finalize(NULL, 0);
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
    rc = pmix_fn.put(PMIX_GLOBAL, k, &v);
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
        rc = pmix_fn.commit();
        if (rc != PMIX_SUCCESS)
            return pmix_fail("PMIx_Commit", rc);
        s->committed = 1;
    }
    PMIX_PROC_CONSTRUCT(&wild);
    memcpy(wild.nspace, s->me.nspace, sizeof(wild.nspace));
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_info_set(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = pmix_fn.fence(&wild, 1, &info, 1);
    pmix_info_unset(&info);
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
    pmix_info_set(&info[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    rc = pmix_fn.get(&proc, k, info, 1, &v);
    pmix_info_unset(&info[0]);
    if (rc != PMIX_SUCCESS || v == NULL) {
        onic_error("boot: pmix: getting rank %u's %s failed: %s", rank, key,
                   pmix_fn.error_string(rc));
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
        pmix_value_release(&v);
    return status;
}

static void bootpmix_abort(onic_boot_t *b, int code, const char *msg)
{
    pmix_status_t rc;

    fprintf(stderr, "onic: rank %u aborts the job with code %d: %s\n", b->rank, code, msg);
    rc = pmix_fn.abort(code, msg, NULL, 0);
    if (rc != PMIX_SUCCESS)
        onic_error("boot: pmix: PMIx_Abort failed: %s; exiting anyway", pmix_fn.error_string(rc));
}

static void bootpmix_fini(onic_boot_t *b)
{
    pmix_status_t rc;

    if (b->state == NULL)
        return;
    rc = pmix_fn.finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        onic_warn("boot: pmix: PMIx_Finalize failed: %s", pmix_fn.error_string(rc));
    onic_free(b->state);
    b->state = NULL;
}

const onic_boot_ops_t onic_boot_pmix_ops = {
    .name    = "pmix",
    .init    = bootpmix_init,
    .put     = bootpmix_put,
    .fence   = bootpmix_fence,
    .get     = bootpmix_get,
    .abort   = bootpmix_abort,
    .fini    = bootpmix_fini,
};
