/* Windows: creation and freeing, attributes and keyvals, names, error
 * handlers, and the synchronisation calls (fence, passive-target locks and
 * flushes, post/start/complete/wait). The operations and the protocol
 * under them are in rma.c; rma.h has what both share.
 *
 * A window is collective over its communicator: it takes a private
 * duplicate of it, whose context id is the window's id (the match bits of
 * its Portals entry, unique at every member while the window lives), whose
 * collective context carries the fence's barrier and whose point-to-point
 * context carries post/start/complete/wait's messages. Its error handler is
 * the window's. */
#include "mpi/rma.h"
#include "base/mem.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* Post/start/complete/wait's messages, on the private communicator. */
enum { WIN_TAG_POST = 1, WIN_TAG_DONE = 2 };

onic_mpi_htab_t onic_mpi_win_tab;

/* Keyvals the program made (MPI_Win_create_keyval): handle WIN_KEYVAL_BASE + index. */
#define WIN_KEYVAL_BASE 0x1000
typedef struct win_keyval {
    int                           live;
    MPI_Win_delete_attr_function *del;
    void                         *extra;
} win_keyval_t;
static win_keyval_t *win_keyvals;
static int win_nkeyvals;

onic_mpi_win_t *onic_mpi_win_get(MPI_Win h, const char *call, int *rc_p)
{
    onic_mpi_win_t *w = onic_mpi_win_lookup(h);

    if (w == NULL)
        *rc_p = onic_mpi_err(NULL, MPI_ERR_WIN, call, "window %#x is %s; pass one made by "
                             "MPI_Win_create or MPI_Win_allocate and not yet freed", (unsigned)h,
                             h == MPI_WIN_NULL ? "MPI_WIN_NULL" : "not a live window");
    return w;
}

int onic_mpi_win_access(onic_mpi_win_t *w, int rank, const char *call)
{
    if (w->locked[rank] || w->fence || (w->started && w->access[rank]))
        return MPI_SUCCESS;
    return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, call, "no access epoch to rank %d is open on "
                            "this window; open one with MPI_Win_fence, MPI_Win_lock, "
                            "MPI_Win_lock_all or MPI_Win_start first", rank);
}

/* --- Creation and freeing -------------------------------------------------------------- */
static void win_destroy(onic_mpi_win_t *w)
{
    onic_mpi_win_attr_t *a;

    while ((a = w->attrs) != NULL) {
        w->attrs = a->next;
        onic_free(a);
    }
    while (w->waiting != NULL) {
        onic_mpi_lock_wait_t *q = w->waiting;
        w->waiting = q->next;
        onic_free(q);
    }
    onic_mpi_rma_win_del(w);
    if (w->owns_base)
        onic_free(w->base);
    if (w->shm != NULL)
        munmap(w->shm, w->shm_len);
    onic_free(w->shm_off);
    onic_free(w->regions);
    onic_free(w->sizes);
    onic_free(w->disp_units);
    onic_free(w->locked);
    onic_free(w->lock_sent);
    onic_free(w->access);
    onic_free(w->expose);
    onic_free(w);
}

/* --- Info hints ---------------------------------------------------------------------------- */
/* The hints of MPI 4.0, 12.2.1, each with its value when none is given:
 * set at creation or by MPI_Win_set_info, returned by MPI_Win_get_info.
 * onic needs none of the promises they make (its locks, orderings and
 * accumulates hold whatever they say), so they only describe the window;
 * a value that is not one of the key's is ignored, as other keys are. */
static int hint_bool(const char *v)
{
    return strcmp(v, "true") == 0 || strcmp(v, "false") == 0;
}

static int hint_ordering(const char *v)
{
    static const char *const kinds[] = {"rar", "raw", "war", "waw"};
    char buf[24], *tok, *save;

    if (strcmp(v, "none") == 0)
        return 1;
    snprintf(buf, sizeof(buf), "%s", v);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int known = 0;
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
            known |= strcmp(tok, kinds[k]) == 0;
        if (!known)
            return 0;
    }
    return v[0] != '\0' && v[strlen(v) - 1] != ',';
}

static int hint_ops(const char *v)
{
    return strcmp(v, "same_op") == 0 || strcmp(v, "same_op_no_op") == 0;
}

static const struct {
    const char *key, *value;
    int (*ok)(const char *value);
} win_hints[ONIC_MPI_WIN_HINTS] = {
    {"no_locks", "false", hint_bool},
    {"accumulate_ordering", "rar,raw,war,waw", hint_ordering},
    {"accumulate_ops", "same_op_no_op", hint_ops},
    {"same_size", "false", hint_bool},
    {"same_disp_unit", "false", hint_bool},
    {"alloc_shared_noncontig", "false", hint_bool},
};

static void win_hints_take(onic_mpi_win_t *w, MPI_Info info)
{
    char v[MPI_MAX_INFO_VAL + 1];

    for (int k = 0; k < ONIC_MPI_WIN_HINTS; k++)
        if (onic_mpi_info_value(info, win_hints[k].key, v, sizeof(v)) == 1 &&
            strlen(v) < sizeof(w->hints[k]) && win_hints[k].ok(v))
            strcpy(w->hints[k], v);
}

void onic_mpi_win_hints(MPI_Win win, MPI_Info info)
{
    onic_mpi_win_t *w = onic_mpi_win_lookup(win);

    if (w != NULL && info != MPI_INFO_NULL)
        win_hints_take(w, info);
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Win_set_info";
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((w = onic_mpi_win_get(win, call, &rc)) == NULL)
        return rc;
    if ((rc = onic_mpi_info_check(w->comm, info, 0, call)) != MPI_SUCCESS)
        return rc;
    win_hints_take(w, info);
    return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Win_get_info";
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((w = onic_mpi_win_get(win, call, &rc)) == NULL)
        return rc;
    if (info_used == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, call, "info_used is NULL; pass where to store "
                                "the new info object");
    if ((rc = MPI_Info_create(info_used)) != MPI_SUCCESS)
        return rc;
    for (int k = 0; rc == MPI_SUCCESS && k < ONIC_MPI_WIN_HINTS; k++)
        rc = MPI_Info_set(*info_used, win_hints[k].key, w->hints[k]);
    if (rc != MPI_SUCCESS)
        MPI_Info_free(info_used);
    return rc;
}

int onic_mpi_win_make(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm, int flavor,
                      int owns, const char *call, MPI_Win *win)
{
    onic_mpi_comm_t *c;
    onic_mpi_win_t *w;
    long long mine[2], *all = NULL;
    ptl_md_t md;
    ptl_handle_md_t mdh;
    int rc, n;

    if ((c = onic_mpi_comm_get(comm, call, &rc)) == NULL)
        return rc;
    if (win == NULL)
        return onic_mpi_err(c, MPI_ERR_ARG, call, "win is NULL; pass where to store the "
                            "window");
    if (size < 0)
        return onic_mpi_err(c, MPI_ERR_SIZE, call, "size %lld is negative", (long long)size);
    if (disp_unit <= 0)
        return onic_mpi_err(c, MPI_ERR_DISP, call, "disp_unit %d; use 1 or more (the size "
                            "of the window's elements)", disp_unit);
    if (base == NULL && size > 0)
        return onic_mpi_err(c, MPI_ERR_BASE, call, "base is NULL for a window of %lld bytes",
                            (long long)size);
    if ((rc = onic_mpi_rma_setup(c, call)) != MPI_SUCCESS)
        return rc;
    if (onic_mpi_win_tab.kind != ONIC_MPI_KIND_WIN)
        onic_mpi_htab_init(&onic_mpi_win_tab, ONIC_MPI_KIND_WIN);
    n = c->size;
    w = onic_calloc(1, sizeof(*w));
    if (w == NULL || (w->sizes = onic_calloc((size_t)n, sizeof(*w->sizes))) == NULL ||
        (w->disp_units = onic_calloc((size_t)n, sizeof(int))) == NULL ||
        (w->locked = onic_calloc((size_t)n, sizeof(int))) == NULL ||
        (w->lock_sent = onic_calloc((size_t)n, sizeof(int))) == NULL ||
        (w->access = onic_calloc((size_t)n, sizeof(int))) == NULL ||
        (w->expose = onic_calloc((size_t)n, sizeof(int))) == NULL ||
        (all = onic_calloc((size_t)n, sizeof(mine))) == NULL) {
        if (w != NULL)
            win_destroy(w);
        return onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no memory for a window of %d "
                            "processes", n);
    }
    for (int k = 0; k < ONIC_MPI_WIN_HINTS; k++)
        strcpy(w->hints[k], win_hints[k].value);
    w->base = base;
    w->size = size;
    w->disp_unit = disp_unit;
    w->flavor = flavor;
    w->model = MPI_WIN_SEPARATE;
    w->me = PTL_INVALID_HANDLE;
    w->waiting_tail = &w->waiting;
    if ((rc = MPI_Comm_dup(comm, &w->commh)) != MPI_SUCCESS)
        goto err_free;
    w->comm = onic_mpi_comm_lookup(w->commh);
    w->comm->errh = MPI_ERRORS_ARE_FATAL; /* a window's default */
    w->id = w->comm->id;
    mine[0] = (long long)size;
    mine[1] = disp_unit;
    if ((rc = MPI_Allgather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, w->commh)) !=
        MPI_SUCCESS)
        goto err_comm;
    for (int i = 0; i < n; i++) {
        w->sizes[i] = (MPI_Aint)all[2 * i];
        w->disp_units[i] = (int)all[2 * i + 1];
    }
    /* The window's memory: remote offsets, put and get, truncating so that
     * whatever comes is answered (the origin checks ranges first). */
    memset(&md, 0, sizeof(md));
    md.start = size > 0 ? base : NULL;
    md.length = (ptl_size_t)size;
    md.threshold = PTL_MD_THRESH_INF;
    md.options = PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MANAGE_REMOTE | PTL_MD_TRUNCATE;
    md.eq_handle = PTL_EQ_NONE;
    {
        ptl_process_id_t any = {PTL_NID_ANY, PTL_PID_ANY};
        /* First: the catch-all entry (rma.c) stays last. */
        if ((rc = PtlMEAttach(onic_mpi_g.ni, ONIC_MPI_PT_WIN, any, (ptl_match_bits_t)w->id, 0,
                              PTL_RETAIN, PTL_INS_BEFORE, &w->me)) != PTL_OK ||
            (rc = PtlMDAttach(w->me, md, PTL_RETAIN, &mdh)) != PTL_OK) {
            rc = onic_mpi_err_ptl(c, call, "expose the window's memory", rc);
            goto err_comm;
        }
    }
    if (onic_mpi_htab_add(&onic_mpi_win_tab, w, &w->handle) != 0) {
        rc = onic_mpi_err(c, MPI_ERR_NO_MEM, call, "no room for a window handle");
        goto err_me;
    }
    w->comm->win = w->handle;
    onic_mpi_rma_win_add(w);
    /* Every member's entry is attached before anyone may reach it. */
    if ((rc = onic_mpi_coll_barrier(w->comm, call)) != MPI_SUCCESS) {
        onic_mpi_htab_del_live(&onic_mpi_win_tab, w->handle);
        goto err_me;
    }
    w->owns_base = owns;
    onic_free(all);
    *win = w->handle;
    return MPI_SUCCESS;

err_me:
    PtlMEUnlink(w->me);
err_comm:
    MPI_Comm_free(&w->commh);
err_free:
    onic_free(all);
    win_destroy(w);
    return rc;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    ONIC_MPI_LOCKED;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_create");
    if ((rc = onic_mpi_info_check(onic_mpi_comm_lookup(comm), info, 1, "MPI_Win_create")) !=
            MPI_SUCCESS ||
        (rc = onic_mpi_win_make(base, size, disp_unit, comm, MPI_WIN_FLAVOR_CREATE, 0,
                                "MPI_Win_create", win)) != MPI_SUCCESS)
        return rc;
    onic_mpi_win_hints(*win, info);
    return MPI_SUCCESS;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    ONIC_MPI_LOCKED;
    void *base = NULL;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_allocate");
    if ((rc = onic_mpi_info_check(onic_mpi_comm_lookup(comm), info, 1, "MPI_Win_allocate")) !=
        MPI_SUCCESS)
        return rc;
    if (baseptr == NULL)
        return onic_mpi_err(onic_mpi_comm_lookup(comm), MPI_ERR_ARG, "MPI_Win_allocate",
                            "baseptr is NULL; pass where to store the memory's address");
    /* Its processes on one node, each with ONIC_MPI_WIN_SHM: the window in
     * shared memory (win_shared.c), its operations loads and stores; decided
     * by all together. Checked first, as everywhere: a member that fails
     * alone must not enter the collective. */
    if (win != NULL && size >= 0 && disp_unit > 0 && onic_mpi_comm_lookup(comm) != NULL) {
        int made;

        rc = onic_mpi_wsh_window(size, disp_unit, comm, MPI_WIN_FLAVOR_ALLOCATE,
                                 "MPI_Win_allocate", baseptr, win, &made);
        if (rc == MPI_SUCCESS && made)
            onic_mpi_win_hints(*win, info);
        if (rc != MPI_SUCCESS || made)
            return rc;
    }
    if (size > 0 && (base = onic_aligned_alloc(64, (size_t)size)) == NULL)
        return onic_mpi_err(onic_mpi_comm_lookup(comm), MPI_ERR_NO_MEM, "MPI_Win_allocate",
                            "no memory for a window of %lld bytes", (long long)size);
    if (base != NULL)
        memset(base, 0, (size_t)size);
    rc = onic_mpi_win_make(base, size, disp_unit, comm, MPI_WIN_FLAVOR_ALLOCATE, 1,
                           "MPI_Win_allocate", win);
    if (rc != MPI_SUCCESS) {
        onic_free(base);
        return rc;
    }
    *(void **)baseptr = base;
    onic_mpi_win_hints(*win, info);
    return MPI_SUCCESS;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    ONIC_MPI_LOCKED;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_create_dynamic");
    /* No memory yet; displacements are addresses (disp_unit 1). */
    if ((rc = onic_mpi_info_check(onic_mpi_comm_lookup(comm), info, 1,
                                  "MPI_Win_create_dynamic")) != MPI_SUCCESS ||
        (rc = onic_mpi_win_make(NULL, 0, 1, comm, MPI_WIN_FLAVOR_DYNAMIC, 0,
                                "MPI_Win_create_dynamic", win)) != MPI_SUCCESS)
        return rc;
    onic_mpi_win_hints(*win, info);
    return MPI_SUCCESS;
}

static onic_mpi_win_t *win_dynamic(MPI_Win win, const char *call, int *rc_p)
{
    onic_mpi_win_t *w = onic_mpi_win_get(win, call, rc_p);

    if (w != NULL && w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        *rc_p = onic_mpi_win_err(w, MPI_ERR_RMA_FLAVOR, call, "the window was not made by "
                                 "MPI_Win_create_dynamic; only such windows attach memory");
        return NULL;
    }
    return w;
}

/* Local: the target's handler checks every request against the regions
 * attached when it arrives. */
int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Win_attach";
    onic_mpi_win_t *w;
    uintptr_t b = (uintptr_t)base;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((w = win_dynamic(win, call, &rc)) == NULL)
        return rc;
    if (size < 0)
        return onic_mpi_win_err(w, MPI_ERR_SIZE, call, "size %lld is negative",
                                (long long)size);
    if (base == NULL || b > UINTPTR_MAX - (uintptr_t)size)
        return onic_mpi_win_err(w, MPI_ERR_ARG, call, "base %p (size %lld) is not memory "
                                "of this process", base, (long long)size);
    for (int i = 0; i < w->nregions; i++) {
        uintptr_t rb = (uintptr_t)w->regions[i].base, rs = (uintptr_t)w->regions[i].size;

        if (b == rb || (b < rb + rs && rb < b + (uintptr_t)size))
            return onic_mpi_win_err(w, MPI_ERR_RMA_ATTACH, call, "%lld bytes at %p overlap "
                                    "memory attached already (%lld bytes at %p); detach it "
                                    "first", (long long)size, base,
                                    (long long)w->regions[i].size,
                                    (void *)w->regions[i].base);
    }
    if (w->nregions == w->capregions) {
        int cap = w->capregions ? 2 * w->capregions : 8;
        onic_mpi_win_region_t *r = onic_realloc(w->regions, (size_t)cap * sizeof(*r));

        if (r == NULL)
            return onic_mpi_win_err(w, MPI_ERR_NO_MEM, call, "no memory to attach a region");
        w->regions = r;
        w->capregions = cap;
    }
    w->regions[w->nregions++] = (onic_mpi_win_region_t){base, size};
    return MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Win_detach";
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((w = win_dynamic(win, call, &rc)) == NULL)
        return rc;
    for (int i = 0; i < w->nregions; i++)
        if (w->regions[i].base == base) {
            w->regions[i] = w->regions[--w->nregions];
            return MPI_SUCCESS;
        }
    return onic_mpi_win_err(w, MPI_ERR_RMA_ATTACH, call, "no memory at %p is attached to the "
                            "window; pass the base given to MPI_Win_attach", base);
}

static void win_attr_delete_all(onic_mpi_win_t *w)
{
    onic_mpi_win_attr_t *a;

    while ((a = w->attrs) != NULL) {
        int k = a->keyval - WIN_KEYVAL_BASE;

        w->attrs = a->next;
        if (k >= 0 && k < win_nkeyvals && win_keyvals[k].del != NULL)
            win_keyvals[k].del(w->handle, a->keyval, a->value, win_keyvals[k].extra);
        onic_free(a);
    }
}

int MPI_Win_free(MPI_Win *win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_free");
    if (win == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Win_free", "win is NULL");
    if ((w = onic_mpi_win_get(*win, "MPI_Win_free", &rc)) == NULL)
        return rc;
    if (w->nlocked > 0 || w->started || w->posted)
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_free", "an epoch is still open "
                                "on this window (%s); end it before freeing the window",
                                w->nlocked > 0 ? "a lock is held" : w->started ?
                                "MPI_Win_start without MPI_Win_complete" :
                                "MPI_Win_post without MPI_Win_wait");
    if ((rc = onic_mpi_rma_flush(w, -1, "MPI_Win_free")) != MPI_SUCCESS)
        return rc;
    /* Nobody reaches the window once everybody is here. */
    if ((rc = onic_mpi_coll_barrier(w->comm, "MPI_Win_free")) != MPI_SUCCESS)
        return rc;
    if ((rc = PtlMEUnlink(w->me)) != PTL_OK)
        return onic_mpi_err_ptl(w->comm, "MPI_Win_free", "withdraw the window's memory", rc);
    win_attr_delete_all(w);
    onic_mpi_htab_del_live(&onic_mpi_win_tab, w->handle);
    MPI_Comm_free(&w->commh);
    win_destroy(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

void onic_mpi_rma_fini(void)
{
    /* Windows the program never freed: withdrawn before their memory goes
     * (none, and the table all zero, if it made none). */
    for (int i = 0; i < onic_mpi_win_tab.used; i++)
        if (onic_mpi_win_tab.obj[i] != NULL) {
            onic_mpi_win_t *w = onic_mpi_win_tab.obj[i];
            PtlMEUnlink(w->me);
            win_destroy(w);
        }
    onic_mpi_htab_fini(&onic_mpi_win_tab);
    onic_free(win_keyvals);
    win_keyvals = NULL;
    win_nkeyvals = 0;
    onic_mpi_rma_teardown();
}

/* --- Attributes, keyvals, names, groups, error handlers ---------------------------------- */
int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                          MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                          void *extra_state)
{
    ONIC_MPI_LOCKED;
    win_keyval_t *k;

    ONIC_MPI_CHECK_INIT("MPI_Win_create_keyval");
    (void)win_copy_attr_fn; /* windows are never duplicated */
    if (win_keyval == NULL)
        return onic_mpi_err(NULL, MPI_ERR_ARG, "MPI_Win_create_keyval", "win_keyval is NULL");
    k = onic_realloc(win_keyvals, (size_t)(win_nkeyvals + 1) * sizeof(*k));
    if (k == NULL)
        return onic_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Win_create_keyval", "no memory for a "
                            "keyval");
    win_keyvals = k;
    k[win_nkeyvals] = (win_keyval_t){1, win_delete_attr_fn, extra_state};
    *win_keyval = WIN_KEYVAL_BASE + win_nkeyvals++;
    return MPI_SUCCESS;
}

static win_keyval_t *win_keyval_get(int keyval)
{
    int k = keyval - WIN_KEYVAL_BASE;

    return k >= 0 && k < win_nkeyvals ? &win_keyvals[k] : NULL;
}

int MPI_Win_free_keyval(int *win_keyval)
{
    ONIC_MPI_LOCKED;
    win_keyval_t *k;

    ONIC_MPI_CHECK_INIT("MPI_Win_free_keyval");
    if (win_keyval == NULL || (k = win_keyval_get(*win_keyval)) == NULL || !k->live)
        return onic_mpi_err(NULL, MPI_ERR_KEYVAL, "MPI_Win_free_keyval", "not a window keyval "
                            "made by MPI_Win_create_keyval (or freed already)");
    /* Attributes set with it keep their delete function. */
    k->live = 0;
    *win_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static onic_mpi_win_attr_t **win_attr_find(onic_mpi_win_t *w, int keyval)
{
    onic_mpi_win_attr_t **p;

    for (p = &w->attrs; *p != NULL; p = &(*p)->next)
        if ((*p)->keyval == keyval)
            return p;
    return NULL;
}

static int win_attr_del(onic_mpi_win_t *w, onic_mpi_win_attr_t **p)
{
    onic_mpi_win_attr_t *a = *p;
    win_keyval_t *k = win_keyval_get(a->keyval);
    int rc = MPI_SUCCESS;

    if (k != NULL && k->del != NULL)
        rc = k->del(w->handle, a->keyval, a->value, k->extra);
    if (rc != MPI_SUCCESS)
        return rc;
    *p = a->next;
    onic_free(a);
    return MPI_SUCCESS;
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    onic_mpi_win_attr_t **p, *a;
    win_keyval_t *k;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_set_attr");
    if ((w = onic_mpi_win_get(win, "MPI_Win_set_attr", &rc)) == NULL)
        return rc;
    if ((k = win_keyval_get(win_keyval)) == NULL || !k->live)
        return onic_mpi_win_err(w, MPI_ERR_KEYVAL, "MPI_Win_set_attr", "keyval %d is not one "
                                "made by MPI_Win_create_keyval (the predefined ones cannot be "
                                "set)", win_keyval);
    if ((p = win_attr_find(w, win_keyval)) != NULL &&
        (rc = win_attr_del(w, p)) != MPI_SUCCESS)
        return onic_mpi_win_err(w, rc, "MPI_Win_set_attr", "the delete function of the "
                                "attribute it replaces failed");
    if ((a = onic_calloc(1, sizeof(*a))) == NULL)
        return onic_mpi_win_err(w, MPI_ERR_NO_MEM, "MPI_Win_set_attr", "no memory");
    a->keyval = win_keyval;
    a->value = attribute_val;
    a->next = w->attrs;
    w->attrs = a;
    return MPI_SUCCESS;
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    onic_mpi_win_attr_t **p;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_delete_attr");
    if ((w = onic_mpi_win_get(win, "MPI_Win_delete_attr", &rc)) == NULL)
        return rc;
    if (win_keyval_get(win_keyval) == NULL || (p = win_attr_find(w, win_keyval)) == NULL)
        return onic_mpi_win_err(w, MPI_ERR_KEYVAL, "MPI_Win_delete_attr", "keyval %d has no "
                                "attribute on this window", win_keyval);
    if ((rc = win_attr_del(w, p)) != MPI_SUCCESS)
        return onic_mpi_win_err(w, rc, "MPI_Win_delete_attr", "the attribute's delete "
                                "function failed");
    return MPI_SUCCESS;
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    onic_mpi_win_attr_t **p;
    void *v;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_get_attr");
    if ((w = onic_mpi_win_get(win, "MPI_Win_get_attr", &rc)) == NULL)
        return rc;
    if (attribute_val == NULL || flag == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, "MPI_Win_get_attr", "%s is NULL",
                                flag == NULL ? "flag" : "attribute_val");
    switch (win_keyval) {
    case MPI_WIN_BASE:
        v = w->base;
        break;
    case MPI_WIN_SIZE:
        v = &w->size;
        break;
    case MPI_WIN_DISP_UNIT:
        v = &w->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        v = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        v = &w->model;
        break;
    default:
        if (win_keyval_get(win_keyval) == NULL)
            return onic_mpi_win_err(w, MPI_ERR_KEYVAL, "MPI_Win_get_attr", "keyval %d is not "
                                    "a window keyval", win_keyval);
        if ((p = win_attr_find(w, win_keyval)) == NULL) {
            *flag = 0;
            return MPI_SUCCESS;
        }
        v = (*p)->value;
        break;
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_get_group");
    if ((w = onic_mpi_win_get(win, "MPI_Win_get_group", &rc)) == NULL)
        return rc;
    if (group == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, "MPI_Win_get_group", "group is NULL");
    return MPI_Comm_group(w->commh, group);
}

int MPI_Win_set_name(MPI_Win win, const char *win_name)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_set_name");
    if ((w = onic_mpi_win_get(win, "MPI_Win_set_name", &rc)) == NULL)
        return rc;
    if (win_name == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, "MPI_Win_set_name", "win_name is NULL");
    /* Longer names are cut (MPI 3.1, 6.8). */
    snprintf(w->name, sizeof(w->name), "%s", win_name);
    return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_get_name");
    if ((w = onic_mpi_win_get(win, "MPI_Win_get_name", &rc)) == NULL)
        return rc;
    if (win_name == NULL || resultlen == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, "MPI_Win_get_name", "%s is NULL",
                                win_name == NULL ? "win_name" : "resultlen");
    strcpy(win_name, w->name);
    *resultlen = (int)strlen(w->name);
    return MPI_SUCCESS;
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc, kind;

    ONIC_MPI_CHECK_INIT("MPI_Win_set_errhandler");
    if ((w = onic_mpi_win_get(win, "MPI_Win_set_errhandler", &rc)) == NULL)
        return rc;
    if ((kind = onic_mpi_errh_kind(errhandler)) == ONIC_MPI_ERRH_NONE ||
        kind == ONIC_MPI_ERRH_COMM)
        return onic_mpi_win_err(w, MPI_ERR_ARG, "MPI_Win_set_errhandler", "errhandler %#x is "
                                "not a window's error handler%s; use MPI_ERRORS_ARE_FATAL, "
                                "MPI_ERRORS_RETURN or one from MPI_Win_create_errhandler",
                                (unsigned)errhandler,
                                kind == ONIC_MPI_ERRH_COMM ? " (it is a communicator's)" : "");
    w->comm->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    ONIC_MPI_LOCKED;
    const char *call = "MPI_Win_call_errhandler";
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((w = onic_mpi_win_get(win, call, &rc)) == NULL)
        return rc;
    /* As if a call on win had failed with errorcode (fatal stops the job). */
    rc = onic_mpi_win_err(w, errorcode, call, "MPI_Win_call_errhandler with error code %d",
                          errorcode);
    return rc == errorcode ? MPI_SUCCESS : rc;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_get_errhandler");
    if ((w = onic_mpi_win_get(win, "MPI_Win_get_errhandler", &rc)) == NULL)
        return rc;
    if (errhandler == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, "MPI_Win_get_errhandler", "errhandler is NULL");
    *errhandler = w->comm->errh;
    return MPI_SUCCESS;
}

/* --- Active target: fence --------------------------------------------------------------- */
#define WIN_FENCE_ASSERTS (MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | \
                           MPI_MODE_NOSUCCEED)

static int win_passive_or_pscw(onic_mpi_win_t *w, const char *call)
{
    if (w->nlocked > 0 || w->started || w->posted)
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, call, "%s is open on this window; end it "
                                "first", w->nlocked > 0 ? "a passive-target epoch (a lock)"
                                : w->started ? "an access epoch of MPI_Win_start"
                                             : "an exposure epoch of MPI_Win_post");
    return MPI_SUCCESS;
}

int MPI_Win_fence(int assert, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_fence");
    if ((w = onic_mpi_win_get(win, "MPI_Win_fence", &rc)) == NULL)
        return rc;
    if (assert & ~WIN_FENCE_ASSERTS)
        return onic_mpi_win_err(w, MPI_ERR_ASSERT, "MPI_Win_fence", "assert %#x has bits no "
                                "MPI_MODE_* for fences has", (unsigned)assert);
    if ((rc = win_passive_or_pscw(w, "MPI_Win_fence")) != MPI_SUCCESS)
        return rc;
    /* What this process started is complete at its targets, then everyone's is. */
    if ((rc = onic_mpi_rma_flush(w, -1, "MPI_Win_fence")) != MPI_SUCCESS)
        return rc;
    if ((rc = onic_mpi_coll_barrier(w->comm, "MPI_Win_fence")) != MPI_SUCCESS)
        return rc;
    w->fence = !(assert & MPI_MODE_NOSUCCEED);
    w->fence_ops = 0;
    return MPI_SUCCESS;
}

/* --- Passive target ---------------------------------------------------------------------- */
static int win_rank(onic_mpi_win_t *w, int rank, const char *call)
{
    if (rank >= 0 && rank < w->comm->size)
        return MPI_SUCCESS;
    return onic_mpi_win_err(w, MPI_ERR_RANK, call, "rank %d is not in the window's group "
                            "(0 to %d)", rank, w->comm->size - 1);
}

/* A lock may start unless an active-target epoch has work in it. */
static int win_lock_allowed(onic_mpi_win_t *w, const char *call)
{
    if (w->started || w->posted || (w->fence && w->fence_ops > 0))
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, call, "an active-target epoch (%s) is "
                                "open on this window; end it first", w->started ?
                                "MPI_Win_start" : w->posted ? "MPI_Win_post" : "a fence");
    return MPI_SUCCESS;
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_lock");
    if ((w = onic_mpi_win_get(win, "MPI_Win_lock", &rc)) == NULL)
        return rc;
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return onic_mpi_win_err(w, MPI_ERR_LOCKTYPE, "MPI_Win_lock", "lock_type %d; use "
                                "MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE", lock_type);
    if (assert & ~MPI_MODE_NOCHECK)
        return onic_mpi_win_err(w, MPI_ERR_ASSERT, "MPI_Win_lock", "assert %#x; a lock takes "
                                "0 or MPI_MODE_NOCHECK", (unsigned)assert);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = win_rank(w, rank, "MPI_Win_lock")) != MPI_SUCCESS ||
        (rc = win_lock_allowed(w, "MPI_Win_lock")) != MPI_SUCCESS)
        return rc;
    if (w->locked[rank])
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_lock", "rank %d is locked "
                                "already by this process%s; unlock it first", rank,
                                w->lock_all ? " (MPI_Win_lock_all)" : "");
    if (!(assert & MPI_MODE_NOCHECK) &&
        (rc = onic_mpi_rma_lock(w, rank, lock_type, "MPI_Win_lock")) != MPI_SUCCESS)
        return rc;
    w->fence = 0;
    w->locked[rank] = lock_type;
    w->lock_sent[rank] = !(assert & MPI_MODE_NOCHECK);
    w->nlocked++;
    return MPI_SUCCESS;
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_unlock");
    if ((w = onic_mpi_win_get(win, "MPI_Win_unlock", &rc)) == NULL)
        return rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = win_rank(w, rank, "MPI_Win_unlock")) != MPI_SUCCESS)
        return rc;
    if (!w->locked[rank] || w->lock_all)
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_unlock", "rank %d is not locked "
                                "by MPI_Win_lock of this process%s", rank,
                                w->lock_all ? " (MPI_Win_lock_all locked it: use "
                                "MPI_Win_unlock_all)" : "");
    if ((rc = onic_mpi_rma_flush(w, (int)onic_mpi_comm_world_rank(w->comm, rank),
                                 "MPI_Win_unlock")) != MPI_SUCCESS)
        return rc;
    if (w->lock_sent[rank] && (rc = onic_mpi_rma_unlock(w, rank, "MPI_Win_unlock")) !=
        MPI_SUCCESS)
        return rc;
    w->locked[rank] = 0;
    w->lock_sent[rank] = 0;
    w->nlocked--;
    return MPI_SUCCESS;
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_lock_all");
    if ((w = onic_mpi_win_get(win, "MPI_Win_lock_all", &rc)) == NULL)
        return rc;
    if (assert & ~MPI_MODE_NOCHECK)
        return onic_mpi_win_err(w, MPI_ERR_ASSERT, "MPI_Win_lock_all", "assert %#x; a lock "
                                "takes 0 or MPI_MODE_NOCHECK", (unsigned)assert);
    if ((rc = win_lock_allowed(w, "MPI_Win_lock_all")) != MPI_SUCCESS)
        return rc;
    if (w->nlocked > 0)
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "this process holds "
                                "a lock on this window already; unlock first");
    if (!(assert & MPI_MODE_NOCHECK) &&
        (rc = onic_mpi_rma_lock_all(w, "MPI_Win_lock_all")) != MPI_SUCCESS)
        return rc;
    w->fence = 0;
    for (int i = 0; i < w->comm->size; i++) {
        w->locked[i] = MPI_LOCK_SHARED;
        w->lock_sent[i] = !(assert & MPI_MODE_NOCHECK);
    }
    w->nlocked = w->comm->size;
    w->lock_all = 1;
    return MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_unlock_all");
    if ((w = onic_mpi_win_get(win, "MPI_Win_unlock_all", &rc)) == NULL)
        return rc;
    if (!w->lock_all)
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", "no "
                                "MPI_Win_lock_all is open on this window");
    if ((rc = onic_mpi_rma_flush(w, -1, "MPI_Win_unlock_all")) != MPI_SUCCESS)
        return rc;
    if (w->lock_sent[0] && (rc = onic_mpi_rma_unlock_all(w, "MPI_Win_unlock_all")) !=
        MPI_SUCCESS)
        return rc;
    memset(w->locked, 0, (size_t)w->comm->size * sizeof(int));
    memset(w->lock_sent, 0, (size_t)w->comm->size * sizeof(int));
    w->nlocked = 0;
    w->lock_all = 0;
    return MPI_SUCCESS;
}

/* rank: a comm rank, or -1 for every target (the _all flavours). */
static int win_flush(MPI_Win win, int rank, int all, const char *call)
{
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT(call);
    if ((w = onic_mpi_win_get(win, call, &rc)) == NULL)
        return rc;
    if (!all) {
        if (rank == MPI_PROC_NULL)
            return MPI_SUCCESS;
        if ((rc = win_rank(w, rank, call)) != MPI_SUCCESS)
            return rc;
    }
    if (all ? w->nlocked == 0 : !w->locked[rank])
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, call, "no passive-target epoch is open "
                                "%s; flushes belong between MPI_Win_lock(_all) and "
                                "MPI_Win_unlock(_all)", all ? "on this window" :
                                "to this rank");
    return onic_mpi_rma_flush(w, all ? -1 : (int)onic_mpi_comm_world_rank(w->comm, rank), call);
}

/* Local completion is taken as remote completion: stronger, and what the
 * acknowledgments say anyway. */
int MPI_Win_flush(int rank, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    return win_flush(win, rank, 0, "MPI_Win_flush");
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    return win_flush(win, rank, 0, "MPI_Win_flush_local");
}

int MPI_Win_flush_all(MPI_Win win)
{
    ONIC_MPI_LOCKED;
    return win_flush(win, -1, 1, "MPI_Win_flush_all");
}

int MPI_Win_flush_local_all(MPI_Win win)
{
    ONIC_MPI_LOCKED;
    return win_flush(win, -1, 1, "MPI_Win_flush_local_all");
}

/* The window's public and private copies agree: what the target side has
 * delivered (under onload, data that waits in this process's event ring)
 * is in memory, and memory operations are ordered around the call. */
int MPI_Win_sync(MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_sync");
    if ((w = onic_mpi_win_get(win, "MPI_Win_sync", &rc)) == NULL)
        return rc;
    atomic_thread_fence(memory_order_seq_cst);
    onic_mpi_rma_poll(0);
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}

/* --- Active target: post, start, complete, wait ----------------------------------------- */
/* Mark the window ranks of group's members in set; their count. */
static int win_group_ranks(onic_mpi_win_t *w, MPI_Group group, int *set, const char *call,
                           int *n_p)
{
    onic_mpi_group_t *g = onic_mpi_group_get(group);
    int n = 0;

    if (g == NULL)
        return onic_mpi_win_err(w, MPI_ERR_GROUP, call, "group %#x is not a live group",
                                (unsigned)group);
    memset(set, 0, (size_t)w->comm->size * sizeof(int));
    for (int i = 0; i < g->size; i++) {
        int r = -1;
        for (int j = 0; j < w->comm->size; j++)
            if (w->comm->group->world[j] == g->world[i])
                r = j;
        if (r < 0)
            return onic_mpi_win_err(w, MPI_ERR_GROUP, call, "member %d of the group is not in "
                                    "the window's group", i);
        if (!set[r])
            n++;
        set[r] = 1;
    }
    *n_p = n;
    return MPI_SUCCESS;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc, n;

    ONIC_MPI_CHECK_INIT("MPI_Win_post");
    if ((w = onic_mpi_win_get(win, "MPI_Win_post", &rc)) == NULL)
        return rc;
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return onic_mpi_win_err(w, MPI_ERR_ASSERT, "MPI_Win_post", "assert %#x has bits "
                                "MPI_Win_post does not take", (unsigned)assert);
    if (w->posted || w->nlocked > 0 || (w->fence && w->fence_ops > 0))
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_post", "another epoch is open "
                                "on this window (%s)", w->posted ? "MPI_Win_post" :
                                w->nlocked > 0 ? "a lock" : "a fence");
    if ((rc = win_group_ranks(w, group, w->expose, "MPI_Win_post", &n)) != MPI_SUCCESS)
        return rc;
    /* Each origin learns that it may start. */
    for (int r = 0; r < w->comm->size; r++)
        if (w->expose[r] &&
            (rc = MPI_Send(NULL, 0, MPI_BYTE, r, WIN_TAG_POST, w->commh)) != MPI_SUCCESS)
            return rc;
    w->fence = 0;
    w->posted = 1;
    w->nexpose = n;
    w->nexpose_done = 0;
    return MPI_SUCCESS;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc, n;

    ONIC_MPI_CHECK_INIT("MPI_Win_start");
    if ((w = onic_mpi_win_get(win, "MPI_Win_start", &rc)) == NULL)
        return rc;
    if (assert & ~MPI_MODE_NOCHECK)
        return onic_mpi_win_err(w, MPI_ERR_ASSERT, "MPI_Win_start", "assert %#x; start takes "
                                "0 or MPI_MODE_NOCHECK", (unsigned)assert);
    if (w->started || w->nlocked > 0 || (w->fence && w->fence_ops > 0))
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_start", "another epoch is open "
                                "on this window (%s)", w->started ? "MPI_Win_start" :
                                w->nlocked > 0 ? "a lock" : "a fence");
    if ((rc = win_group_ranks(w, group, w->access, "MPI_Win_start", &n)) != MPI_SUCCESS)
        return rc;
    /* Wait for every target's post (its exposure epoch is open). */
    for (int r = 0; r < w->comm->size; r++)
        if (w->access[r] && (rc = MPI_Recv(NULL, 0, MPI_BYTE, r, WIN_TAG_POST, w->commh,
                                           MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            return rc;
    w->fence = 0;
    w->started = 1;
    w->naccess = n;
    return MPI_SUCCESS;
}

int MPI_Win_complete(MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_complete");
    if ((w = onic_mpi_win_get(win, "MPI_Win_complete", &rc)) == NULL)
        return rc;
    if (!w->started)
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_complete", "no MPI_Win_start "
                                "epoch is open on this window");
    for (int r = 0; r < w->comm->size; r++)
        if (w->access[r] && (rc = onic_mpi_rma_flush(w, (int)onic_mpi_comm_world_rank(w->comm, r),
                                                     "MPI_Win_complete")) != MPI_SUCCESS)
            return rc;
    /* Each target learns that this origin's operations are in its memory. */
    for (int r = 0; r < w->comm->size; r++)
        if (w->access[r] &&
            (rc = MPI_Send(NULL, 0, MPI_BYTE, r, WIN_TAG_DONE, w->commh)) != MPI_SUCCESS)
            return rc;
    memset(w->access, 0, (size_t)w->comm->size * sizeof(int));
    w->started = 0;
    return MPI_SUCCESS;
}

/* Take the DONE messages that are here (block: wait for all). */
static int win_take_done(onic_mpi_win_t *w, int block, const char *call)
{
    int rc, flag;

    for (int r = 0; r < w->comm->size; r++) {
        if (w->expose[r] != 1)
            continue;
        if (!block) {
            if ((rc = MPI_Iprobe(r, WIN_TAG_DONE, w->commh, &flag, MPI_STATUS_IGNORE)) !=
                MPI_SUCCESS)
                return rc;
            if (!flag)
                continue;
        }
        if ((rc = MPI_Recv(NULL, 0, MPI_BYTE, r, WIN_TAG_DONE, w->commh, MPI_STATUS_IGNORE)) !=
            MPI_SUCCESS)
            return rc;
        w->expose[r] = 2;
        w->nexpose_done++;
    }
    (void)call;
    if (w->nexpose_done == w->nexpose) {
        memset(w->expose, 0, (size_t)w->comm->size * sizeof(int));
        w->posted = 0;
    }
    return MPI_SUCCESS;
}

int MPI_Win_wait(MPI_Win win)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_wait");
    if ((w = onic_mpi_win_get(win, "MPI_Win_wait", &rc)) == NULL)
        return rc;
    if (!w->posted)
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_wait", "no MPI_Win_post epoch "
                                "is open on this window");
    return win_take_done(w, 1, "MPI_Win_wait");
}

int MPI_Win_test(MPI_Win win, int *flag)
{
    ONIC_MPI_LOCKED;
    onic_mpi_win_t *w;
    int rc;

    ONIC_MPI_CHECK_INIT("MPI_Win_test");
    if ((w = onic_mpi_win_get(win, "MPI_Win_test", &rc)) == NULL)
        return rc;
    if (flag == NULL)
        return onic_mpi_win_err(w, MPI_ERR_ARG, "MPI_Win_test", "flag is NULL");
    if (!w->posted)
        return onic_mpi_win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_test", "no MPI_Win_post epoch "
                                "is open on this window");
    if ((rc = win_take_done(w, 0, "MPI_Win_test")) != MPI_SUCCESS)
        return rc;
    *flag = !w->posted;
    return MPI_SUCCESS;
}
