/* The small calls real programs make: MPI_Info objects (ordered key/value
 * strings; onic reads no hints, but keeps and returns what is set),
 * MPI_Alloc_mem / MPI_Free_mem (plain heap memory: every transport moves
 * any memory), MPI_Pcontrol (no profiling layer: nothing to do), and
 * MPI_Status_set_elements / set_cancelled for generalized requests'
 * statuses. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* --- Info objects ---------------------------------------------------------------------- */
typedef struct info_entry {
    char *key, *val;
} info_entry_t;

typedef struct info {
    int           handle;
    int           n, cap;
    info_entry_t *e;
} info_t;

/* Made on first use, and kept for the process: info objects outlive MPI
 * (made before it starts, used after it ends). MPI_INFO_ENV is the empty
 * object at index 0. */
static onic_mpi_htab_t info_tab;
static int info_ready;
static info_t info_env = {MPI_INFO_ENV, 0, 0, NULL};

static int info_init(void)
{
    if (info_ready)
        return 0;
    onic_mpi_htab_init(&info_tab, ONIC_MPI_KIND_INFO);
    if (onic_mpi_htab_set(&info_tab, 0, &info_env) != 0)
        return -1;
    info_ready = 1;
    return 0;
}

static void info_destroy(info_t *in)
{
    for (int i = 0; i < in->n; i++) {
        onic_free(in->e[i].key);
        onic_free(in->e[i].val);
    }
    onic_free(in->e);
    if (in != &info_env)
        onic_free(in);
}

static info_t *info_get(MPI_Info h, const char *call, int *rc_p)
{
    info_t *in = info_init() == 0 ? onic_mpi_htab_get(&info_tab, h) : NULL;

    if (in == NULL)
        *rc_p = onic_mpi_err(NULL, MPI_ERR_ARG, call, "info %#x is %s; pass one from "
                             "MPI_Info_create, or MPI_INFO_ENV", (unsigned)h,
                             h == MPI_INFO_NULL ? "MPI_INFO_NULL" : "not a live info object");
    return in;
}

int onic_mpi_info_check(onic_mpi_comm_t *c, MPI_Info h, int null_ok, const char *call)
{
    if ((h == MPI_INFO_NULL && null_ok) ||
        (info_init() == 0 && onic_mpi_htab_get(&info_tab, h) != NULL))
        return MPI_SUCCESS;
    return onic_mpi_err(c, MPI_ERR_ARG, call, "info %#x is %s; pass one from MPI_Info_create%s",
                        (unsigned)h, h == MPI_INFO_NULL ? "MPI_INFO_NULL" : "not a live info "
                        "object", null_ok ? ", MPI_INFO_ENV or MPI_INFO_NULL" : " or MPI_INFO_ENV");
}

static int info_find(const info_t *in, const char *key);

/* MPI 4.0's communicator assertions, each a boolean "true" or "false". */
static const struct {
    const char *key;
    unsigned    bit;
} info_asserts[] = {
    {"mpi_assert_no_any_source", ONIC_MPI_ASSERT_NO_ANY_SOURCE},
    {"mpi_assert_no_any_tag", ONIC_MPI_ASSERT_NO_ANY_TAG},
    {"mpi_assert_exact_length", ONIC_MPI_ASSERT_EXACT_LENGTH},
    {"mpi_assert_allow_overtaking", ONIC_MPI_ASSERT_ALLOW_OVERTAKING},
};

unsigned onic_mpi_info_asserts(MPI_Info h, unsigned asserts)
{
    info_t *in = h != MPI_INFO_NULL && info_init() == 0 ? onic_mpi_htab_get(&info_tab, h) : NULL;

    for (size_t k = 0; in != NULL && k < sizeof(info_asserts) / sizeof(info_asserts[0]); k++) {
        int i = info_find(in, info_asserts[k].key);
        if (i < 0)
            continue;
        /* Any other value is no assertion: a hint that cannot be read
         * is ignored, as hints may be. */
        if (strcasecmp(in->e[i].val, "true") == 0)
            asserts |= info_asserts[k].bit;
        else
            asserts &= ~info_asserts[k].bit;
    }
    return asserts;
}

int onic_mpi_info_of_asserts(unsigned asserts, MPI_Info *info)
{
    int rc = MPI_Info_create(info);

    for (size_t k = 0; rc == MPI_SUCCESS && k < sizeof(info_asserts) / sizeof(info_asserts[0]);
         k++)
        rc = MPI_Info_set(*info, info_asserts[k].key,
                          asserts & info_asserts[k].bit ? "true" : "false");
    return rc;
}

static int info_key_ok(const char *key, const char *call)
{
    size_t n = key == NULL ? 0 : strlen(key);

    if (n == 0 || n > MPI_MAX_INFO_KEY)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "key %s; a key has 1 to MPI_MAX_INFO_KEY "
                            "(%d) characters", key == NULL ? "is NULL" : "is empty or too long",
                            MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

static int info_find(const info_t *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->e[i].key, key) == 0)
            return i;
    return -1;
}

static int info_add(info_t *in, const char *key, const char *val)
{
    char *k, *v;
    int i = info_find(in, key);

    if ((v = strdup(val)) == NULL)
        return -1;
    if (i >= 0) {
        free(in->e[i].val);
        in->e[i].val = v;
        return 0;
    }
    if (in->n == in->cap) {
        int cap = in->cap == 0 ? 8 : 2 * in->cap;
        info_entry_t *e = onic_calloc((size_t)cap, sizeof(*e));
        if (e == NULL) {
            free(v);
            return -1;
        }
        if (in->n > 0)
            memcpy(e, in->e, (size_t)in->n * sizeof(*e));
        onic_free(in->e);
        in->e = e;
        in->cap = cap;
    }
    if ((k = strdup(key)) == NULL) {
        free(v);
        return -1;
    }
    in->e[in->n++] = (info_entry_t){k, v};
    return 0;
}

/* The info calls may come at any time, before MPI_Init or
 * MPI_Session_init and after the end (MPI 4.0, 11.2.1): their table lives
 * apart from the library's. Once it is up, they end a bundle as any call. */
#define INFO_CHECK_STATE() \
    do { \
        if (onic_mpi_g.bundle_open) \
            onic_mpi_bundle_end(); \
    } while (0)

int onic_mpi_info_value(MPI_Info h, const char *key, char *val, size_t len)
{
    info_t *in = info_init() == 0 ? onic_mpi_htab_get(&info_tab, h) : NULL;
    int i;

    if (in == NULL)
        return -1;
    if (key == NULL || (i = info_find(in, key)) < 0)
        return 0;
    snprintf(val, len, "%s", in->e[i].val);
    return 1;
}

int onic_mpi_info_make(MPI_Info *h, const char *key, const char *val)
{
    info_t *in;

    if (info_init() != 0 || (in = onic_calloc(1, sizeof(*in))) == NULL)
        return -1;
    if (key != NULL && info_add(in, key, val) != 0) {
        info_destroy(in);
        return -1;
    }
    if (onic_mpi_htab_add(&info_tab, in, &in->handle) != 0) {
        info_destroy(in);
        return -1;
    }
    *h = in->handle;
    return 0;
}

static int info_publish(info_t *in, MPI_Info *h, const char *call)
{
    if (onic_mpi_htab_add(&info_tab, in, &in->handle) != 0) {
        info_destroy(in);
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no room for an info handle");
    }
    *h = in->handle;
    return MPI_SUCCESS;
}

int MPI_Info_create(MPI_Info *info)
{
    ONIC_MPI_LOCKED;
    INFO_CHECK_STATE();
    if (info == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
    if (onic_mpi_info_make(info, NULL, NULL) != 0)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "no memory for an info");
    return MPI_SUCCESS;
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Info_set";
    info_t *in;
    int rc;

    INFO_CHECK_STATE();
    if ((in = info_get(info, call, &rc)) == NULL || (rc = info_key_ok(key, call)) != MPI_SUCCESS)
        return rc;
    if (in == &info_env)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "MPI_INFO_ENV cannot be changed");
    if (value == NULL || value[0] == '\0' || strlen(value) > MPI_MAX_INFO_VAL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "value %s; a value has 1 to "
                            "MPI_MAX_INFO_VAL (%d) characters", value == NULL ? "is NULL"
                            : "is empty or too long", MPI_MAX_INFO_VAL);
    if (info_add(in, key, value) != 0)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for key \"%s\"", key);
    return MPI_SUCCESS;
}

int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Info_get";
    info_t *in;
    int rc, i;

    INFO_CHECK_STATE();
    if ((in = info_get(info, call, &rc)) == NULL || (rc = info_key_ok(key, call)) != MPI_SUCCESS)
        return rc;
    if (flag == NULL || valuelen < 0 || (valuelen > 0 && value == NULL))
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "flag NULL, valuelen negative, or value "
                            "NULL");
    if ((i = info_find(in, key)) < 0) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    /* At most valuelen characters, then the terminator (MPI 3.1, 9.4). */
    if (value != NULL) {
        size_t n = strlen(in->e[i].val);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, in->e[i].val, n);
        value[n] = '\0';
    }
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Info_get_valuelen";
    info_t *in;
    int rc, i;

    INFO_CHECK_STATE();
    if ((in = info_get(info, call, &rc)) == NULL || (rc = info_key_ok(key, call)) != MPI_SUCCESS)
        return rc;
    if (valuelen == NULL || flag == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "%s is NULL",
                            flag == NULL ? "flag" : "valuelen");
    i = info_find(in, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(in->e[i].val);
    return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char *key)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Info_delete";
    info_t *in;
    int rc, i;

    INFO_CHECK_STATE();
    if ((in = info_get(info, call, &rc)) == NULL || (rc = info_key_ok(key, call)) != MPI_SUCCESS)
        return rc;
    if ((i = info_find(in, key)) < 0)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "key \"%s\" is not set (MPI_ERR_INFO_NOKEY "
                            "in the standard)", key);
    onic_free(in->e[i].key);
    onic_free(in->e[i].val);
    memmove(&in->e[i], &in->e[i + 1], (size_t)(in->n - i - 1) * sizeof(*in->e));
    in->n--;
    return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    ONIC_MPI_LOCKED;
    info_t *in;
    int rc;

    INFO_CHECK_STATE();
    if ((in = info_get(info, "MPI_Info_get_nkeys", &rc)) == NULL)
        return rc;
    if (nkeys == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys is NULL");
    *nkeys = in->n;
    return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    ONIC_MPI_LOCKED;
    info_t *in;
    int rc;

    INFO_CHECK_STATE();
    if ((in = info_get(info, "MPI_Info_get_nthkey", &rc)) == NULL)
        return rc;
    if (key == NULL || n < 0 || n >= in->n)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey", "key NULL or n %d not "
                            "from 0 to %d", n, in->n - 1);
    strcpy(key, in->e[n].key);
    return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    ONIC_MPI_LOCKED;
    info_t *in, *d;
    int rc;

    INFO_CHECK_STATE();
    if ((in = info_get(info, "MPI_Info_dup", &rc)) == NULL)
        return rc;
    if (newinfo == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_dup", "newinfo is NULL");
    if ((d = onic_calloc(1, sizeof(*d))) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_dup", "no memory for an info");
    for (int i = 0; i < in->n; i++)
        if (info_add(d, in->e[i].key, in->e[i].val) != 0) {
            info_destroy(d);
            return onic_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_dup", "no memory for an info");
        }
    return info_publish(d, newinfo, "MPI_Info_dup");
}

int MPI_Info_free(MPI_Info *info)
{
    ONIC_MPI_LOCKED;
    info_t *in;
    int rc;

    INFO_CHECK_STATE();
    if (info == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_free", "info is NULL");
    if ((in = info_get(*info, "MPI_Info_free", &rc)) == NULL)
        return rc;
    if (in == &info_env)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Info_free", "MPI_INFO_ENV cannot be freed");
    onic_mpi_htab_del(&info_tab, in->handle);
    info_destroy(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

/* --- Memory, profiling, statuses ------------------------------------------------------- */
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    ONIC_MPI_LOCKED;
    void *p;

    (void)info; /* no hints are read */
    ONIC_MPI_CHECK_INIT("MPI_Alloc_mem");
    if (size < 0 || baseptr == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Alloc_mem", "%s",
                            size < 0 ? "size is negative" : "baseptr is NULL");
    if ((p = malloc(size == 0 ? 1 : (size_t)size)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "no memory for %lld bytes",
                            (long long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}

int MPI_Pcontrol(const int level, ...)
{
    ONIC_MPI_LOCKED;
    (void)level;
    return MPI_SUCCESS;
}

int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    ONIC_MPI_LOCKED;
    onic_mpi_type_t *t;

    ONIC_MPI_CHECK_INIT("MPI_Status_set_elements");
    if (status == NULL || status == MPI_STATUS_IGNORE || count < 0)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_set_elements", "%s",
                            count < 0 ? "count is negative" : "status is NULL or ignored");
    if ((t = onic_mpi_type_get(datatype)) == NULL)
        return onic_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Status_set_elements", "datatype %#x is "
                            "not a datatype", (unsigned)datatype);
    /* count basic elements: whole elements of the type by their size, the
     * rest by the size of a basic element (homogeneous types). */
    if (t->nelems > 0 && count % (MPI_Count)t->nelems == 0)
        status->onic_count = count / (MPI_Count)t->nelems * (MPI_Count)t->size;
    else if (t->nelems > 0 && t->sig != NULL && t->nsig == 1)
        status->onic_count = count * (MPI_Count)t->sig[0].esize;
    else
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_set_elements", "%lld elements are "
                            "not whole elements of this mixed datatype", (long long)count);
    return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    ONIC_MPI_LOCKED;
    return MPI_Status_set_elements_x(status, datatype, count);
}

int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    ONIC_MPI_LOCKED;
    ONIC_MPI_CHECK_INIT("MPI_Status_set_cancelled");
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "status is NULL or "
                            "ignored");
    status->onic_cancelled = flag != 0;
    return MPI_SUCCESS;
}
