/* Attribute caching on communicators (MPI 3.1, 6.7): keyvals made by
 * MPI_Comm_create_keyval with their copy and delete callbacks, values set
 * on a communicator, copied by MPI_Comm_dup through the copy callback,
 * and deleted (the delete callback called) by MPI_Comm_delete_attr, by
 * setting a new value, and when the communicator is freed (MPI_COMM_SELF's
 * and MPI_COMM_WORLD's at MPI_Finalize), the last set first.
 *
 * Keyvals are small ints from ATTR_KEY_FIRST up, above the predefined
 * ones (MPI_TAG_UB ... in mpi.h, answered by comm.c); a freed keyval stays
 * reserved while values under it remain, as MPI requires. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <string.h>

#define ATTR_KEY_FIRST 16

typedef struct attr_key {
    int                            live;  /* not freed by the program */
    int                            uses;  /* values set under it */
    MPI_Comm_copy_attr_function   *copy;
    MPI_Comm_delete_attr_function *del;
    void                          *extra;
} attr_key_t;

struct onic_mpi_attr {
    int                   key;
    void                 *val;
    struct onic_mpi_attr *next;
};

static attr_key_t *attr_keys;
static int attr_nkeys, attr_cap;

static attr_key_t *attr_key(int keyval)
{
    int i = keyval - ATTR_KEY_FIRST;

    if (i < 0 || i >= attr_nkeys || (!attr_keys[i].live && attr_keys[i].uses == 0))
        return NULL;
    return &attr_keys[i];
}

/* A keyval no longer live and with no value left is free again. */
static void attr_key_drop(attr_key_t *k)
{
    if (--k->uses == 0 && !k->live)
        memset(k, 0, sizeof(*k));
}

int MPI_Comm_dup_fn(MPI_Comm oldcomm, int comm_keyval, void *extra_state, void *attribute_val_in,
                    void *attribute_val_out, int *flag)
{
    ONIC_MPI_LOCKED;
    (void)oldcomm;
    (void)comm_keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                           void *extra_state)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_create_keyval";
    int i;

    ONIC_MPI_CHECK_INIT(call);
    if (comm_keyval == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "comm_keyval is NULL");
    for (i = 0; i < attr_nkeys; i++)
        if (!attr_keys[i].live && attr_keys[i].uses == 0)
            break;
    if (i == attr_cap) {
        int cap = attr_cap == 0 ? 16 : 2 * attr_cap;
        attr_key_t *k = onic_calloc((size_t)cap, sizeof(*k));
        if (k == NULL)
            return onic_mpi_err(NULL, MPI_ERR_NO_MEM, call, "no memory for a keyval");
        if (attr_cap > 0)
            memcpy(k, attr_keys, (size_t)attr_cap * sizeof(*k));
        onic_free(attr_keys);
        attr_keys = k;
        attr_cap = cap;
    }
    if (i == attr_nkeys)
        attr_nkeys++;
    attr_keys[i] = (attr_key_t){1, 0, comm_copy_attr_fn, comm_delete_attr_fn, extra_state};
    *comm_keyval = ATTR_KEY_FIRST + i;
    return MPI_SUCCESS;
}

int MPI_Comm_free_keyval(int *comm_keyval)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_free_keyval";
    attr_key_t *k;

    ONIC_MPI_CHECK_INIT(call);
    if (comm_keyval == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, call, "comm_keyval is NULL");
    if ((k = attr_key(*comm_keyval)) == NULL || !k->live)
        return onic_mpi_err(NULL, MPI_ERR_KEYVAL, call, "keyval %d is not one from "
                            "MPI_Comm_create_keyval (or was freed)", *comm_keyval);
    k->live = 0;
    if (k->uses == 0)
        memset(k, 0, sizeof(*k));
    *comm_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* Take the value of key off c, calling its delete callback; MPI_SUCCESS
 * (also if none was set) or the callback's error. */
static int attr_remove(onic_mpi_comm_t *c, int key)
{
    struct onic_mpi_attr **p = &c->attrs, *a;
    attr_key_t *k = &attr_keys[key - ATTR_KEY_FIRST];
    int rc = MPI_SUCCESS;

    while (*p != NULL && (*p)->key != key)
        p = &(*p)->next;
    if ((a = *p) == NULL)
        return MPI_SUCCESS;
    if (k->del != NULL)
        rc = k->del(c->handle, key, a->val, k->extra);
    if (rc != MPI_SUCCESS)
        return rc;
    *p = a->next;
    onic_free(a);
    attr_key_drop(k);
    return MPI_SUCCESS;
}

static int attr_add(onic_mpi_comm_t *c, int key, void *val)
{
    struct onic_mpi_attr *a = onic_calloc(1, sizeof(*a)), **p = &c->attrs;

    if (a == NULL)
        return -1;
    a->key = key;
    a->val = val;
    /* Kept in the order set (the copies on dup follow it). */
    while (*p != NULL)
        p = &(*p)->next;
    *p = a;
    attr_keys[key - ATTR_KEY_FIRST].uses++;
    return 0;
}

static onic_mpi_comm_t *attr_comm(MPI_Comm comm, int keyval, const char *call, int *rc_p)
{
    onic_mpi_comm_t *c = onic_mpi_comm_get(comm, call, rc_p);
    attr_key_t *k;

    if (c == NULL)
        return NULL;
    if ((k = attr_key(keyval)) == NULL || !k->live) {
        *rc_p = onic_mpi_err(c, MPI_ERR_KEYVAL, call, "keyval %d is not one from "
                             "MPI_Comm_create_keyval (or was freed)%s", keyval,
                             keyval > 0 && keyval < ATTR_KEY_FIRST ? "; the predefined "
                             "attributes cannot be set or deleted" : "");
        return NULL;
    }
    return c;
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_set_attr";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = attr_comm(comm, comm_keyval, call, &rc)) == NULL)
        return rc;
    /* A value already there is deleted first (its callback runs). */
    if ((rc = attr_remove(c, comm_keyval)) != MPI_SUCCESS)
        return onic_mpi_err(c, rc, call, "the delete callback of keyval %d failed with %d",
                            comm_keyval, rc);
    if (attr_add(c, comm_keyval, attribute_val) != 0)
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for an attribute");
    return MPI_SUCCESS;
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Comm_delete_attr";
    onic_mpi_comm_t *c;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((c = attr_comm(comm, comm_keyval, call, &rc)) == NULL)
        return rc;
    if ((rc = attr_remove(c, comm_keyval)) != MPI_SUCCESS)
        return onic_mpi_err(c, rc, call, "the delete callback of keyval %d failed with %d",
                            comm_keyval, rc);
    return MPI_SUCCESS;
}

int onic_mpi_attr_get(onic_mpi_comm_t *c, int keyval, void *attribute_val, int *flag)
{
    struct onic_mpi_attr *a;

    if (attr_key(keyval) == NULL)
        return onic_mpi_err(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "keyval %d is not an "
                            "attribute key: the predefined ones are MPI_TAG_UB, MPI_HOST, MPI_IO "
                            "and MPI_WTIME_IS_GLOBAL, the others come from "
                            "MPI_Comm_create_keyval", keyval);
    for (a = c->attrs; a != NULL && a->key != keyval; a = a->next)
        ;
    *flag = a != NULL;
    if (a != NULL)
        *(void **)attribute_val = a->val;
    return MPI_SUCCESS;
}

int onic_mpi_attr_copy(onic_mpi_comm_t *from, onic_mpi_comm_t *to)
{
    for (struct onic_mpi_attr *a = from->attrs; a != NULL; a = a->next) {
        attr_key_t *k = &attr_keys[a->key - ATTR_KEY_FIRST];
        void *out = NULL;
        int flag = 0, rc;
        if (k->copy == NULL)
            continue; /* MPI_COMM_NULL_COPY_FN: not copied */
        if ((rc = k->copy(from->handle, a->key, k->extra, a->val, &out, &flag)) != MPI_SUCCESS)
            return onic_mpi_err(from, rc, "MPI_Comm_dup", "the copy callback of keyval %d "
                                "failed with %d", a->key, rc);
        if (flag && attr_add(to, a->key, out) != 0)
            return onic_mpi_err(from, MPI_ERR_NO_MEM, "MPI_Comm_dup", "no memory for an "
                                "attribute");
    }
    return MPI_SUCCESS;
}

/* Last set, first deleted: MPI 3.1 (8.7.1) asks it of MPI_COMM_SELF's at
 * MPI_Finalize; onic does the same whenever a communicator is freed. */
int onic_mpi_attr_delete_all(onic_mpi_comm_t *c)
{
    int rc = MPI_SUCCESS;

    while (c->attrs != NULL && rc == MPI_SUCCESS) {
        struct onic_mpi_attr *last = c->attrs;
        while (last->next != NULL)
            last = last->next;
        rc = attr_remove(c, last->key);
    }
    return rc;
}

void onic_mpi_attr_fini(void)
{
    onic_free(attr_keys);
    attr_keys = NULL;
    attr_nkeys = attr_cap = 0;
}

void onic_mpi_attr_release(onic_mpi_comm_t *c)
{
    while (c->attrs != NULL) {
        struct onic_mpi_attr *a = c->attrs;
        c->attrs = a->next;
        onic_free(a);
    }
}
