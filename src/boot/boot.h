/* onic bootstrap: what a process learns from whoever started it.
 *
 * At start-up a process asks its launcher who it is: its rank, the job's
 * size, which ranks share its node (as the launcher placed them, never
 * probed), and a key-value store through which every process publishes its
 * transport addresses, with one collective fence between the puts and the
 * gets. The launcher is recognised from the environment:
 *
 *   PMIX_NAMESPACE set   PMIx (Open MPI's mpirun, srun --mpi=pmix, prterun)
 *   PMI_FD set           the PMI-1 wire protocol (MPICH's Hydra mpiexec,
 *                        srun --mpi=pmi2)
 *   otherwise            onicrun (ONIC_RANK, ONIC_SIZE, ONIC_JOBID; a store
 *                        in nameless shared memory, ONIC_BOOT_FD), or a job
 *                        of one
 *
 * ONIC_BOOT names one of them instead. Each is a const onic_boot_ops_t; pmix
 * loads libpmix when it starts, and says what to install if it cannot.
 *
 * The bootstrap is per process, not per endpoint: onic_boot_open returns the
 * same one to every caller and counts them; the last onic_boot_close ends
 * the session with the launcher. Not thread-safe. */
#ifndef ONIC_BOOT_BOOT_H
#define ONIC_BOOT_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include <onic/status.h>
#include "base/config.h"

/* Keys are short names ("ofi-addr"); values are bytes, at most this many
 * (PMI-1 carries them as hex in 1024 characters). */
#define ONIC_BOOT_KEY_MAX 32
#define ONIC_BOOT_VAL_MAX 256
#define ONIC_BOOT_JOBID_MAX 64

typedef struct onic_boot onic_boot_t;

typedef struct onic_boot_ops {
    const char *name;
    /* Fill rank, size, local[] (sorted, including this rank), nlocal and
     * jobid; set up what put, fence and get need. */
    onic_status_t (*init)(onic_boot_t *b);
    onic_status_t (*put)(onic_boot_t *b, const char *key, const void *val, size_t len);
    /* Every process of the job arrives; after it, get sees all puts made
     * before it. */
    onic_status_t (*fence)(onic_boot_t *b);
    /* *len_p: in, the buffer's size; out, the value's. */
    onic_status_t (*get)(onic_boot_t *b, uint32_t rank, const char *key, void *val,
                         size_t *len_p);
    /* Ask the launcher to end the whole job; may return. */
    void          (*abort)(onic_boot_t *b, int code, const char *msg);
    void          (*fini)(onic_boot_t *b);
} onic_boot_ops_t;

struct onic_boot {
    const onic_boot_ops_t *ops;
    uint32_t  rank, size;
    uint32_t *local;    /* the ranks on this node, ascending; local[0] leads the node */
    uint32_t  nlocal;
    uint32_t  local_index;  /* this rank's place in local[] */
    char      jobid[ONIC_BOOT_JOBID_MAX + 1];  /* the same for every process of the job */
    /* An unguessable name the ranks of this node share, if the launcher
     * gives one (onicrun); empty: the transports agree on one through the
     * store. */
    char      nodeid[ONIC_BOOT_JOBID_MAX + 1];
    onic_config_t cfg;
    unsigned  refs;
    /* Launchers' sessions last until exit: how many times the bootstrap
     * was opened again after every user closed it. Keys put in a later
     * epoch are other keys (PMI-1 refuses a key put twice; PMIx may
     * answer from what it cached). */
    unsigned  epoch;
    void     *state;    /* the bootstrap's own */
};

/* The bootstrap this process uses, set up on first call (later calls return
 * the same one and ignore cfg). Errors are logged with the launcher's text. */
onic_status_t onic_boot_open(const onic_config_t *cfg, onic_boot_t **b_p);
void          onic_boot_close(onic_boot_t *b);

onic_status_t onic_boot_put(onic_boot_t *b, const char *key, const void *val, size_t len);
onic_status_t onic_boot_fence(onic_boot_t *b);
onic_status_t onic_boot_get(onic_boot_t *b, uint32_t rank, const char *key, void *val,
                            size_t *len_p);
/* Whether rank runs on this node. */
int           onic_boot_is_local(const onic_boot_t *b, uint32_t rank);
/* Tell the launcher to end the job with code, then exit(code); never returns. */
/* 1 if b is a launcher's bootstrap (PMIx, PMI-1), not onicrun's. */
int           onic_boot_is_launcher(const onic_boot_t *b);
void          onic_boot_abort(onic_boot_t *b, int code, const char *msg) __attribute__((noreturn));

/* For onicrun: the store of a job of size processes, nameless shared
 * memory initialised, its descriptor (close-on-exec: onicrun clears that
 * for its processes and passes it as ONIC_BOOT_FD) into *fd_p. */
onic_status_t onic_boot_onicrun_store(uint32_t size, int *fd_p);

/* Every bootstrap, in the order of onic_config_boot_values after "auto";
 * for onic-info. */
const onic_boot_ops_t *const *onic_boot_all(size_t *count_p);

extern const onic_boot_ops_t onic_boot_onicrun_ops;
extern const onic_boot_ops_t onic_boot_pmi1_ops;
extern const onic_boot_ops_t onic_boot_pmix_ops;

/* Loads libpmix, which the pmix bootstrap opens when it starts (base/dl.h);
 * for onic-info. An error names the package to install. */
onic_status_t onic_boot_pmix_load(const onic_config_t *cfg);

/* For the bootstraps, to fill local[]: from a list of ranks "0,2-5" (rank
 * must be in it); a block of ranks; an ascending array of n ranks from
 * onic_malloc, which it takes over (and frees on error). */
onic_status_t onic_boot_local_set(onic_boot_t *b, uint32_t *local, uint32_t n);
onic_status_t onic_boot_local_parse(onic_boot_t *b, const char *list, const char *what);
onic_status_t onic_boot_local_block(onic_boot_t *b, uint32_t first, uint32_t count);

#endif
