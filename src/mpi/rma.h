/* One-sided MPI on Portals: what win.c (windows, attributes, names,
 * synchronisation) and rma.c (the operations and the protocol under them)
 * share. docs/architecture.md, "mpi", "One-sided", says why it is shaped so.
 *
 * Portals layout (portal indexes next to MPI's 1 to 3, mpi_impl.h):
 *   ONIC_MPI_PT_WIN   every window's memory: one match entry per window,
 *                     match bits = the window's id (the context id of its
 *                     private communicator), one MD over the window
 *                     (put, get, remote offsets); puts are acked, gets
 *                     replied to by the target side alone.
 *   ONIC_MPI_PT_ACC   the process's accumulate inbox: one entry, one MD
 *                     over ONIC_MPI_RMA_SLOTS slots of ONIC_MPI_RMA_SLOT
 *                     bytes per process of the job; origin o writes only
 *                     its own slots (remote offset). Accumulates, compare
 *                     and swap, lock and unlock requests land here and are
 *                     executed by this process's event handler.
 *   ONIC_MPI_PT_ACCR  the answers to those requests, into the origin's slot
 *                     of the request (the same layout). */
#ifndef ONIC_MPI_RMA_H
#define ONIC_MPI_RMA_H

#include "mpi/mpi_impl.h"

#define ONIC_MPI_PT_WIN   4
#define ONIC_MPI_PT_ACC   5
#define ONIC_MPI_PT_ACCR  6

/* Requests in flight from one origin to one target, and the bytes of each
 * (one transport message: no RMA, and a copy taken when the put is made). */
#define ONIC_MPI_RMA_SLOTS 8
#define ONIC_MPI_RMA_SLOT  2048u

/* Window attributes set by the program. */
typedef struct onic_mpi_win_attr onic_mpi_win_attr_t;
struct onic_mpi_win_attr {
    int                  keyval;
    void                *value;
    onic_mpi_win_attr_t *next;
};

/* Memory attached to a dynamic window (MPI_Win_attach). */
typedef struct onic_mpi_win_region {
    char    *base;
    MPI_Aint size;
} onic_mpi_win_region_t;

/* A lock request waiting at its target. */
typedef struct onic_mpi_lock_wait onic_mpi_lock_wait_t;
struct onic_mpi_lock_wait {
    uint32_t              origin;  /* world rank */
    unsigned              slot;
    int                   type;    /* MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
    onic_mpi_lock_wait_t *next;
};

/* A window in shared memory (ONIC_MPI_WIN_SHM): each member's segment has
 * a control block, a cache line in the same shared memory, that every
 * origin works on directly (rma_shm.c). Both locks are ticket locks: served
 * in the order asked, so no origin that asks again and again shuts out
 * another. */
typedef struct onic_mpi_wctl {
    _Atomic uint32_t ticket;      /* passive target: the next request's number */
    _Atomic uint32_t serving;     /* the request served now (a shared one passes it on) */
    _Atomic uint32_t readers;     /* holders of the shared lock */
    _Atomic uint32_t acc_ticket;  /* accumulates: one at a time, in the order asked */
    _Atomic uint32_t acc_serving;
    _Atomic uint32_t sleepers;    /* processes asleep on one of these words */
    uint32_t         pad[10];
} onic_mpi_wctl_t;
static_assert(sizeof(onic_mpi_wctl_t) == 64, "a control block is one cache line");

/* The info hints a window keeps (win.c, win_hints). */
#define ONIC_MPI_WIN_HINTS 6

typedef struct onic_mpi_win {
    int               handle;
    int               id;          /* the private communicator's context id */
    MPI_Comm          commh;       /* private: MPI_Comm_dup of the creator's */
    onic_mpi_comm_t  *comm;        /* its errh is the window's error handler */
    char             *base;
    MPI_Aint          size;
    int               disp_unit;
    int               flavor;
    int               model;       /* MPI_WIN_SEPARATE, UNIFIED if shared (architecture.md) */
    int               owns_base;   /* MPI_Win_allocate: freed with the window */
    char             *shm;         /* in shared memory: the control blocks, then every
                                      segment, mapped (MPI_Win_allocate_shared, and
                                      MPI_Win_allocate on one node) */
    size_t            shm_len;
    MPI_Aint         *shm_off;     /* by comm rank: where its segment starts in shm */
    onic_mpi_wctl_t  *ctl;         /* by comm rank, at shm: operations are loads and stores
                                      (ONIC_MPI_WIN_SHM); NULL: they are Portals messages */
    onic_mpi_win_region_t *regions; /* MPI_Win_create_dynamic: attached memory */
    int               nregions, capregions;
    MPI_Aint         *sizes;       /* by comm rank */
    int              *disp_units;
    ptl_handle_me_t   me;
    char              name[MPI_MAX_OBJECT_NAME];
    char              hints[ONIC_MPI_WIN_HINTS][24]; /* info hints' values (win.c) */
    onic_mpi_win_attr_t *attrs;
    /* Origin side: the epochs open. */
    int               fence;       /* a fence opened an epoch (no NOSUCCEED) */
    int               fence_ops;   /* operations started in it */
    int              *locked;      /* by comm rank: 0, or the lock type held */
    int              *lock_sent;   /* by comm rank: the lock was requested (not NOCHECK) */
    int               nlocked;     /* targets locked (lock_all counts each) */
    int               lock_all;
    int              *access;      /* by comm rank: in the MPI_Win_start group */
    int               started, naccess;
    int              *expose;      /* by comm rank: in the MPI_Win_post group */
    int               posted, nexpose, nexpose_done;
    /* Target side: the lock. */
    int               excl;        /* held exclusively */
    int               shared;      /* holders of the shared lock */
    onic_mpi_lock_wait_t *waiting, **waiting_tail;
} onic_mpi_win_t;

/* --- rma.c ------------------------------------------------------------------------ */
/* Set up the inbox, the answer slots and the MDs the first time a window is
 * made (collective: every member is ready before any can reach it). */
int  onic_mpi_rma_setup(onic_mpi_comm_t *c, const char *call);
/* Undo onic_mpi_rma_setup (MPI_Finalize, or a setup that failed). */
void onic_mpi_rma_teardown(void);
void onic_mpi_rma_win_add(onic_mpi_win_t *w);
void onic_mpi_rma_win_del(onic_mpi_win_t *w);
/* Wait until every operation this process started to world rank `world`
 * (-1: to every process) is complete at its target. */
int  onic_mpi_rma_flush(onic_mpi_win_t *w, int world, const char *call);
/* Lock or unlock target comm rank `rank` (a request to its inbox and the
 * wait for its answer; in shared memory, its control block's lock). */
int  onic_mpi_rma_lock(onic_mpi_win_t *w, int rank, int type, const char *call);
int  onic_mpi_rma_unlock(onic_mpi_win_t *w, int rank, const char *call);
/* Send the lock requests of a lock_all, then wait for all the answers. */
int  onic_mpi_rma_lock_all(onic_mpi_win_t *w, const char *call);
int  onic_mpi_rma_unlock_all(onic_mpi_win_t *w, const char *call);
/* One round of progress for RMA: events of this process's operations. */
void onic_mpi_rma_poll(int block);

/* --- rma_shm.c: windows in shared memory ----------------------------------------------
 * Passive-target locks in the target's control block, granted in the order
 * requested (shared requests in a row hold it together). */
void onic_mpi_wctl_lock(onic_mpi_wctl_t *c, int type);
void onic_mpi_wctl_unlock(onic_mpi_wctl_t *c, int type);
/* Around one accumulate's application to the segment: per-element
 * atomicity against every other origin. */
void onic_mpi_wctl_acc_lock(onic_mpi_wctl_t *c);
void onic_mpi_wctl_acc_unlock(onic_mpi_wctl_t *c);

/* --- win.c ------------------------------------------------------------------------ */
/* Make a window over base (size bytes) on comm: collective. owns: base is
 * freed with the window (onic_free). */
int  onic_mpi_win_make(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm, int flavor,
                       int owns, const char *call, MPI_Win *win);
/* The live window, or NULL after reporting MPI_ERR_WIN (*rc_p). */
onic_mpi_win_t *onic_mpi_win_get(MPI_Win h, const char *call, int *rc_p);
/* The windows' handles: all zero until the first window and after the
 * last MPI_Finalize, when a lookup finds nothing. */
extern onic_mpi_htab_t onic_mpi_win_tab;
/* The live window, or NULL (nothing reported): for the hot path. */
static inline onic_mpi_win_t *onic_mpi_win_lookup(MPI_Win h)
{
    return onic_mpi_htab_get(&onic_mpi_win_tab, h);
}
/* Report an error on the window's handler. */
#define onic_mpi_win_err(_w, _cls, _call, ...) onic_mpi_err((_w)->comm, _cls, _call, __VA_ARGS__)
/* May an operation go to comm rank `rank` now? MPI_SUCCESS or MPI_ERR_RMA_SYNC reported. */
int  onic_mpi_win_access(onic_mpi_win_t *w, int rank, const char *call);

/* The window's info hints from info (MPI_INFO_NULL: none), after a
 * creation that info was checked for (onic_mpi_info_check). */
void onic_mpi_win_hints(MPI_Win win, MPI_Info info);

/* --- win_shared.c ----------------------------------------------------------------- */
/* Make a window of `flavor` in memory shared by comm's processes
 * (collective), whose operations are loads and stores if every member has
 * ONIC_MPI_WIN_SHM. MPI_WIN_FLAVOR_SHARED: they must share a node
 * (MPI_ERR_RMA_SHARED); MPI_WIN_FLAVOR_ALLOCATE: if they do not, or one
 * has ONIC_MPI_WIN_SHM=0, or the memory cannot be had, nothing is made
 * (*made_p 0, MPI_SUCCESS) and the caller makes it in private memory. The
 * arguments are checked already. */
int  onic_mpi_wsh_window(MPI_Aint size, int disp_unit, MPI_Comm comm, int flavor,
                         const char *call, void *baseptr, MPI_Win *win, int *made_p);
/* Rank 0's hand-over of a shared window's memory: this message, with the
 * memory's descriptor (SCM_RIGHTS). */
#define ONIC_MPI_WSH_MAGIC 0x6f6e69632d77696eull /* "onic-win" */
typedef struct onic_mpi_wsh_msg {
    uint64_t magic;
    uint64_t bytes;
} onic_mpi_wsh_msg_t;
/* A shared window's member: the descriptor of the window's memory (bytes)
 * handed over by its rank 0 on sock, checked; -1 if what came is not such a
 * hand-over, with every descriptor it carried closed. */
int  onic_mpi_wsh_take(int sock, uint64_t bytes);

#endif
