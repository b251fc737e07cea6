/* The one registry of ONIC_* variables. Each variable has a name, a default,
 * a description, a type and a range; onic_config_read() parses them all from
 * the environment into one struct, and an invalid value is an error naming
 * the variable and what it accepts. onic-info prints the table. */
#ifndef ONIC_BASE_CONFIG_H
#define ONIC_BASE_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <onic/status.h>
#include "base/log.h"

typedef enum onic_simd {
    ONIC_SIMD_AUTO   = 0,
    ONIC_SIMD_SCALAR = 1,
    ONIC_SIMD_AVX2   = 2
} onic_simd_t;

/* ONIC_XPORT: the transport to the other processes of a job. */
typedef enum onic_config_xport {
    ONIC_XPORT_AUTO = 0,  /* shm to this node's processes, ofi to other nodes' */
    ONIC_XPORT_SHM  = 1,  /* shm only: the job must fit on one node */
    ONIC_XPORT_OFI  = 2   /* ofi to every other process, even on this node */
} onic_config_xport_t;

/* ONIC_BOOT: who tells a process its rank and its job (src/boot). */
typedef enum onic_config_boot {
    ONIC_BOOT_AUTO    = 0,  /* from the environment: PMIX_NAMESPACE, PMI_FD, else onicrun */
    ONIC_BOOT_ONICRUN = 1,
    ONIC_BOOT_PMI1    = 2,
    ONIC_BOOT_PMIX    = 3
} onic_config_boot_t;

typedef enum onic_config_shm_rma {
    ONIC_SHM_RMA_AUTO = 0,
    ONIC_SHM_RMA_CMA  = 1,
    ONIC_SHM_RMA_COPY = 2
} onic_config_shm_rma_t;

/* ONIC_SHM_DEMOTE (src/xport/shm_lane.c). */
typedef enum onic_config_shm_demote {
    ONIC_SHM_DEMOTE_AUTO = 0, /* where the CPU has CLDEMOTE */
    ONIC_SHM_DEMOTE_ON   = 1,
    ONIC_SHM_DEMOTE_OFF  = 2
} onic_config_shm_demote_t;

/* ONIC_OFI_WAIT: how an ofi wait sleeps (src/xport/ofi.c). */
typedef enum onic_config_ofi_wait {
    ONIC_OFI_WAIT_AUTO = 0, /* fd when this node's processes outnumber its cores, else poll */
    ONIC_OFI_WAIT_FD   = 1, /* on the completion queue's descriptor */
    ONIC_OFI_WAIT_POLL = 2  /* in short naps between polls */
} onic_config_ofi_wait_t;

/* ONIC_WAIT: how a blocking wait waits (onic_config_wait_sleeps). */
typedef enum onic_config_wait {
    ONIC_WAIT_AUTO  = 0, /* sleep when this node's processes outnumber its cores, else spin */
    ONIC_WAIT_SPIN  = 1, /* spin ONIC_WAIT_SPIN_US, yield, then sleep on a futex */
    ONIC_WAIT_SLEEP = 2  /* no spinning: yield while that runs another process, then sleep */
} onic_config_wait_t;

/* ONIC_ONLOAD_SHARED: what --onload does when the engine has no core of its own. */
typedef enum onic_config_onload_shared {
    ONIC_ONLOAD_SHARED_INLINE = 0, /* no engine: the processes progress their own traffic */
    ONIC_ONLOAD_SHARED_ENGINE = 1  /* the engine shares the processes' cores */
} onic_config_onload_shared_t;

typedef enum onic_config_onload_rma {
    ONIC_ONLOAD_RMA_AUTO = 0,
    ONIC_ONLOAD_RMA_COPY = 1
} onic_config_onload_rma_t;

/* ONIC_ALPU_UNIT: the unit behind the alpu engine (src/match/alpu_unit.h). */
typedef enum onic_config_alpu_unit {
    ONIC_ALPU_UNIT_SW  = 0,  /* onic's C unit */
    ONIC_ALPU_UNIT_RTL = 1   /* hw/alpu/onic_alpu.v, Verilated, in a plug-in */
} onic_config_alpu_unit_t;

#define ONIC_CONFIG_TOKEN_MAX 32
#define ONIC_CONFIG_STRING_MAX 63
#define ONIC_CONFIG_PATH_MAX 255

typedef struct onic_config {
    unsigned    log_level;      /* ONIC_LOG: onic_log_level_t */
    unsigned    match_engine;   /* ONIC_MATCH: index into onic_config_match_engines */
    unsigned    simd;           /* ONIC_SIMD: onic_simd_t */
    unsigned    alpu_cells;     /* ONIC_ALPU_CELLS */
    unsigned    alpu_block;     /* ONIC_ALPU_BLOCK */
    unsigned    alpu_threshold; /* ONIC_ALPU_THRESHOLD */
    unsigned    alpu_unit;      /* ONIC_ALPU_UNIT: onic_config_alpu_unit_t */
    char        alpu_rtl_lib[ONIC_CONFIG_PATH_MAX + 1]; /* ONIC_ALPU_RTL_LIB, "" for the default */
    unsigned    wide_cleanup;   /* ONIC_WIDE_CLEANUP */
    unsigned    hash_buckets;   /* ONIC_HASH_BUCKETS */
    unsigned    xport;          /* ONIC_XPORT: onic_config_xport_t */
    unsigned    shm_ring_slots; /* ONIC_SHM_RING_SLOTS, ONIC_CONFIG_LAST for auto:
                                   onic_config_shm_ring_slots() resolves it */
    unsigned    shm_mid_max;    /* ONIC_SHM_MID_MAX */
    unsigned    shm_demote;     /* ONIC_SHM_DEMOTE: onic_config_shm_demote_t */
    unsigned    shm_rma;        /* ONIC_SHM_RMA: onic_config_shm_rma_t */
    unsigned    shm_cma_min;    /* ONIC_SHM_CMA_MIN */
    unsigned    shm_assist_min; /* ONIC_SHM_ASSIST_MIN */
    unsigned    shm_bounce_chunk;  /* ONIC_SHM_BOUNCE_CHUNK, ONIC_CONFIG_LAST for auto */
    unsigned    shm_bounce_chunks; /* ONIC_SHM_BOUNCE_CHUNKS */
    unsigned    shm_xchg_stop;  /* ONIC_SHM_XCHG_STOP */
    unsigned    wait_spin_us;   /* ONIC_WAIT_SPIN_US */
    unsigned    wait;           /* ONIC_WAIT: onic_config_wait_t */
    unsigned    eager_limit;    /* ONIC_EAGER_LIMIT */
    unsigned    eager_pull_min; /* ONIC_EAGER_PULL_MIN */
    unsigned    eager_credits;  /* ONIC_EAGER_CREDITS, ONIC_CONFIG_LAST for auto:
                                   onic_config_eager_credits() resolves it */
    unsigned    mpi_iovec_max;  /* ONIC_MPI_IOVEC_MAX */
    unsigned    mpi_win_shm;    /* ONIC_MPI_WIN_SHM */
    unsigned    boot;           /* ONIC_BOOT: onic_config_boot_t */
    unsigned    nodes;          /* ONIC_NODES */
    unsigned    ofi_credits;    /* ONIC_OFI_CREDITS */
    unsigned    ofi_send_timeout; /* ONIC_OFI_SEND_TIMEOUT, seconds; 0: none */
    char        ofi_provider[ONIC_CONFIG_STRING_MAX + 1]; /* ONIC_OFI_PROVIDER, "" for any */
    char        ofi_lib[ONIC_CONFIG_STRING_MAX + 1];  /* ONIC_OFI_LIB, "" for libfabric.so.1 */
    char        pmix_lib[ONIC_CONFIG_STRING_MAX + 1]; /* ONIC_PMIX_LIB, "" for libpmix.so.2 */
    unsigned    ofi_wait;       /* ONIC_OFI_WAIT: onic_config_ofi_wait_t */
    unsigned    ofi_eager_limit; /* ONIC_OFI_EAGER_LIMIT */
    unsigned    ofi_bundle;     /* ONIC_OFI_BUNDLE: 1 messages may travel together */
    unsigned    onload;         /* ONIC_ONLOAD: 0 inline, 1 the onload engine */
    unsigned    onload_core;    /* ONIC_ONLOAD_CORE: a core, or ONIC_CONFIG_LAST */
    unsigned    onload_shared;  /* ONIC_ONLOAD_SHARED: onic_config_onload_shared_t */
    unsigned    onload_cmd_recs;   /* ONIC_ONLOAD_CMD_RECS */
    unsigned    onload_event_recs; /* ONIC_ONLOAD_EVENT_RECS */
    unsigned    onload_rma;     /* ONIC_ONLOAD_RMA: onic_config_onload_rma_t */
    unsigned    rank;           /* ONIC_RANK, set by the launcher */
    unsigned    size;           /* ONIC_SIZE, set by the launcher */
    char        jobid[ONIC_CONFIG_TOKEN_MAX + 1]; /* ONIC_JOBID, "" outside a job */
    unsigned    boot_fd;        /* ONIC_BOOT_FD, set by onicrun; 0 none */
    unsigned    onload_fd;      /* ONIC_ONLOAD_FD, set by onicrun; 0 none */
    unsigned    onload_sock;    /* ONIC_ONLOAD_SOCK, set by onicrun; 0 none */
    char        trace[ONIC_CONFIG_PATH_MAX + 1];  /* ONIC_TRACE: a directory, "" for off */
} onic_config_t;

/* A UINT or UINT_POW2 variable may also accept one word (values[],
 * NULL-terminated), stored as ONIC_CONFIG_LAST ("last" core, "auto" size). */
#define ONIC_CONFIG_LAST 0xffffffffu

typedef enum onic_config_type {
    ONIC_CONFIG_UINT,       /* decimal in [min, max], or a word of values[] if any */
    ONIC_CONFIG_UINT_POW2,  /* a power of two in [min, max] */
    ONIC_CONFIG_ENUM,       /* one of values[] */
    ONIC_CONFIG_TOKEN,      /* 1 to ONIC_CONFIG_TOKEN_MAX lowercase hex digits,
                               in a char[ONIC_CONFIG_TOKEN_MAX + 1] field */
    ONIC_CONFIG_STRING,     /* 0 to ONIC_CONFIG_STRING_MAX printable characters, no
                               blanks, in a char[ONIC_CONFIG_STRING_MAX + 1] field */
    ONIC_CONFIG_PATH        /* 0 to ONIC_CONFIG_PATH_MAX printable characters, no
                               blanks, in a char[ONIC_CONFIG_PATH_MAX + 1] field */
} onic_config_type_t;

typedef struct onic_config_var {
    const char         *name;
    const char         *dflt;
    const char         *desc;
    onic_config_type_t  type;
    unsigned            min, max;
    const char *const  *values;   /* ONIC_CONFIG_ENUM, NULL-terminated; for
                                     ONIC_CONFIG_UINT one optional word */
    size_t              offset;   /* of the field in onic_config_t: unsigned, or
                                     char[] for ONIC_CONFIG_TOKEN */
} onic_config_var_t;

extern const char *const onic_config_match_engines[];
extern const char *const onic_config_shm_rma_values[];
extern const char *const onic_config_xport_values[];
extern const char *const onic_config_boot_values[];
extern const char *const onic_config_onload_rma_values[];
extern const char *const onic_config_ofi_wait_values[];
extern const char *const onic_config_alpu_unit_values[];

/* The whole table, for onic-info. */
const onic_config_var_t *onic_config_vars(size_t *count_p);
/* One row by name, or NULL: for a tool that needs a few variables without
 * the whole environment being valid (onicrun). */
const onic_config_var_t *onic_config_var_find(const char *name);
void onic_config_defaults(onic_config_t *cfg_p);
/* Defaults overridden by the environment. ONIC_ERR_INVALID_PARAM (after
 * logging which variable and what it accepts) if any value is invalid;
 * *cfg_p is written only on success. Unknown ONIC_* variables get a warning. */
onic_status_t onic_config_read(onic_config_t *cfg_p);
/* Parse one value for var into value_p (an unsigned, or a char[] of
 * ONIC_CONFIG_TOKEN_MAX + 1 for tokens); on failure writes a message to err
 * and leaves *value_p alone. */
onic_status_t onic_config_parse(const onic_config_var_t *var, const char *str,
                                void *value_p, char *err, size_t errlen);
/* Format var's value in cfg ("hash", "256") into buf. */
void onic_config_format(const onic_config_var_t *var, const onic_config_t *cfg,
                        char *buf, size_t len);
/* The raw environment value of a registered variable, or NULL. */
const char *onic_config_env(const onic_config_var_t *var);
/* ONIC_LOG alone, for the logger's first use (invalid: the default). */
onic_log_level_t onic_config_log_level(void);

/* ONIC_WAIT resolved: 1 if a blocking wait should not spin, because nprocs
 * processes (this node's, the onload engine included) outnumber the cores
 * (ONIC_WAIT=sleep, or auto and more than the online CPUs), else 0. */
int onic_config_wait_sleeps(const onic_config_t *cfg, unsigned nprocs);

/* ONIC_SHM_RING_SLOTS and ONIC_SHM_BOUNCE_CHUNK resolved for a node of
 * nprocs processes: the value set, or for auto the largest (4096 slots,
 * 64 KiB chunks) with which one process's lanes' slots take at most 4 MiB,
 * and its bounce buffers' chunks 2 MiB (their header lines come on top),
 * never below 256 slots and 4 KiB. Every process
 * of a node gets the same from the same nprocs, as their regions' geometry
 * must agree. */
unsigned onic_config_shm_ring_slots(const onic_config_t *cfg, unsigned nprocs);
unsigned onic_config_shm_bounce_chunk(const onic_config_t *cfg, unsigned nprocs);

/* The most one eager message counts for in a sender's credit (bytes):
 * ONIC_EAGER_CREDITS counts shares of this size. */
#define ONIC_EAGER_CREDIT_UNIT 2048u

/* ONIC_EAGER_CREDITS resolved for a job of nprocs processes: the value set,
 * or for auto 256, halved while nprocs shares of ONIC_EAGER_CREDIT_UNIT
 * each would take more than 4 MiB, never below 64. Every process gets the
 * same (MPI_Init checks that they agree). */
unsigned onic_config_eager_credits(const onic_config_t *cfg, unsigned nprocs);

/* The most slots one process's lanes hold together on a node of at most
 * nprocs processes (auto rings shrink as a node fills, so a node of fewer
 * processes may hold more): what a receiver may have to take in at once. */
uint64_t onic_config_shm_ring_most(const onic_config_t *cfg, unsigned nprocs);

#endif
