#include "base/config.h"

#include <errno.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

const char *const onic_config_match_engines[] = {"hash", "list", "alpu", "wide", NULL};
static const char *const log_values[]  = {"error", "warn", "info", "debug", "trace", NULL};
static const char *const simd_values[] = {"auto", "scalar", "avx2", NULL};
const char *const onic_config_shm_rma_values[] = {"auto", "cma", "copy", NULL};
static const char *const shm_demote_values[] = {"auto", "on", "off", NULL};
const char *const onic_config_xport_values[] = {"auto", "shm", "ofi", NULL};
const char *const onic_config_boot_values[] = {"auto", "onicrun", "pmi1", "pmix", NULL};
static const char *const core_words[] = {"last", NULL};
static const char *const auto_word[] = {"auto", NULL};
const char *const onic_config_onload_rma_values[] = {"auto", "copy", NULL};
const char *const onic_config_ofi_wait_values[] = {"auto", "fd", "poll", NULL};
static const char *const wait_values[] = {"auto", "spin", "sleep", NULL};
static const char *const onload_shared_values[] = {"inline", "engine", NULL};
const char *const onic_config_alpu_unit_values[] = {"sw", "rtl", NULL};

#define CFG_FIELD(_f) offsetof(onic_config_t, _f)

static const onic_config_var_t config_vars[] = {
    {"ONIC_LOG", "warn", "messages to print: error, warn, info, debug or trace",
     ONIC_CONFIG_ENUM, 0, 0, log_values, CFG_FIELD(log_level)},
    {"ONIC_MATCH", "hash", "matching engine for every queue: hash, list, alpu or wide",
     ONIC_CONFIG_ENUM, 0, 0, onic_config_match_engines, CFG_FIELD(match_engine)},
    {"ONIC_SIMD", "auto", "vector compares in alpu and wide: auto (AVX2 if the CPU has it), "
     "scalar, or avx2; scalar also keeps hash's short queues off SSE2", ONIC_CONFIG_ENUM, 0, 0,
     simd_values, CFG_FIELD(simd)},
    {"ONIC_ALPU_CELLS", "256", "cells in the alpu engine's unit (paper 000 used 128 and 256)",
     ONIC_CONFIG_UINT_POW2, 2, 65536, NULL, CFG_FIELD(alpu_cells)},
    {"ONIC_ALPU_BLOCK", "16", "cells per block in the alpu unit; at most ONIC_ALPU_CELLS",
     ONIC_CONFIG_UINT_POW2, 1, 65536, NULL, CFG_FIELD(alpu_block)},
    {"ONIC_ALPU_THRESHOLD", "5", "queue length above which the alpu unit is loaded "
     "(paper 000's break-even)", ONIC_CONFIG_UINT, 0, 1000000, NULL, CFG_FIELD(alpu_threshold)},
    {"ONIC_ALPU_UNIT", "sw", "the unit behind the alpu engine: sw (onic's C model) or rtl "
     "(the Verilog unit of hw/alpu, Verilated, cycle by cycle: a plug-in built with onic when "
     "Verilator is installed, for the ONIC_ALPU_CELLS/ONIC_ALPU_BLOCK sizes it was built for; "
     "thousands of times slower, to count the unit's cycles on real traffic)",
     ONIC_CONFIG_ENUM, 0, 0, onic_config_alpu_unit_values, CFG_FIELD(alpu_unit)},
    {"ONIC_ALPU_RTL_LIB", "", "the plug-in ONIC_ALPU_UNIT=rtl loads: a file name dlopen "
     "searches for, or a path; empty: libonic-alpu-rtl.so, which make install puts beside "
     "libonic (dlopen finds it there when the loader does: LD_LIBRARY_PATH, ldconfig)",
     ONIC_CONFIG_PATH, 0, 0, NULL, CFG_FIELD(alpu_rtl_lib)},
    {"ONIC_WIDE_CLEANUP", "2", "blocks of 16 the wide engine's clean-up pass compacts per "
     "operation", ONIC_CONFIG_UINT, 1, 1024, NULL, CFG_FIELD(wide_cleanup)},
    {"ONIC_HASH_BUCKETS", "64", "initial buckets of each hash index (they grow with the queue)",
     ONIC_CONFIG_UINT_POW2, 1, 65536, NULL, CFG_FIELD(hash_buckets)},
    {"ONIC_XPORT", "auto", "transport to the job's other processes (a process reaches itself "
     "through self): auto (shm to processes on this node, ofi to other nodes), shm (shared "
     "memory only: the job must fit on one node) or ofi (libfabric to every other process, "
     "even on this node)", ONIC_CONFIG_ENUM, 0, 0, onic_config_xport_values, CFG_FIELD(xport)},
    {"ONIC_BOOT", "auto", "who tells a process its rank, its job and its node: auto (PMIx if "
     "PMIX_NAMESPACE is set, the PMI-1 wire protocol if PMI_FD is set, else onicrun), onicrun, "
     "pmi1 or pmix", ONIC_CONFIG_ENUM, 0, 0, onic_config_boot_values, CFG_FIELD(boot)},
    {"ONIC_NODES", "1", "onicrun jobs: split the ranks into this many blocks that act as "
     "separate nodes (shm within a block, ofi between blocks), to try a multi-node job on one "
     "machine; at most ONIC_SIZE", ONIC_CONFIG_UINT, 1, 0x7fffffff, NULL, CFG_FIELD(nodes)},
    {"ONIC_OFI_PROVIDER", "", "libfabric provider for ofi (\"tcp\", \"verbs\", ...); empty: "
     "FI_PROVIDER if set, else the first libfabric offers with reliable datagrams and RMA",
     ONIC_CONFIG_STRING, 0, 0, NULL, CFG_FIELD(ofi_provider)},
    {"ONIC_OFI_LIB", "", "the libfabric ofi loads when a job first needs it (spanning nodes, "
     "or ONIC_XPORT=ofi): a file name dlopen searches for, or a path; empty: libfabric.so.1. "
     "A job on one node never loads it", ONIC_CONFIG_STRING, 0, 0, NULL, CFG_FIELD(ofi_lib)},
    {"ONIC_PMIX_LIB", "", "the libpmix the pmix bootstrap loads when a PMIx launcher started "
     "the job: a file name dlopen searches for, or a path; empty: libpmix.so.2",
     ONIC_CONFIG_STRING, 0, 0, NULL, CFG_FIELD(pmix_lib)},
    {"ONIC_OFI_CREDITS", "32", "ofi: messages a process may have in flight to one peer; each "
     "process posts this many (plus 2) receive buffers of 2 KB per peer on other nodes",
     ONIC_CONFIG_UINT, 4, 32768, NULL, CFG_FIELD(ofi_credits)},
    {"ONIC_OFI_SEND_TIMEOUT", "300", "ofi: seconds a send may wait for a peer to give credits "
     "back (it does so whenever it calls into onic) before the send fails naming the peer, "
     "which is then treated as unreachable; raise it if a receiver computes longer than this "
     "without calling onic while others send to it; 0: wait forever",
     ONIC_CONFIG_UINT, 0, 0x7fffffff, NULL, CFG_FIELD(ofi_send_timeout)},
    {"ONIC_OFI_BUNDLE", "1", "ofi: 1: inside a bundle (PtlStartBundle to PtlEndBundle; MPI "
     "opens one for its non-blocking sends), messages to a peer that already had one since "
     "the last poll travel together, up to one receive buffer per libfabric message, sent "
     "at the next poll, RMA or bundle end; 0: every message is one libfabric message",
     ONIC_CONFIG_UINT, 0, 1, NULL, CFG_FIELD(ofi_bundle)},
    {"ONIC_OFI_EAGER_LIMIT", "2048", "ofi: the most one message carries (its buffers hold "
     "2 KiB); a put above it moves its data by RMA, and in a job across nodes MPI's eager "
     "messages are at most this long", ONIC_CONFIG_UINT, 256, 2048, NULL,
     CFG_FIELD(ofi_eager_limit)},
    {"ONIC_OFI_WAIT", "auto", "ofi: how a wait that has spun and yielded sleeps: fd (on the "
     "completion queue's descriptor, woken at once, but the provider then signals every "
     "completion: about 2 us more per message with tcp), poll (naps of up to 50 us between "
     "polls) or auto (fd when this node's processes outnumber its cores, else poll)",
     ONIC_CONFIG_ENUM, 0, 0, onic_config_ofi_wait_values, CFG_FIELD(ofi_wait)},
    {"ONIC_SHM_RING_SLOTS", "auto", "64-byte slots in each sender's ring in a receiver's shared "
     "memory (credits per sender); a message takes one, plus payload/64 when its payload does "
     "not fit behind its header. auto: 4096, halved while one process's rings would take more "
     "than 4 MiB (1024 for 64 processes on a node), never below 256",
     ONIC_CONFIG_UINT_POW2, 2, 65536, auto_word, CFG_FIELD(shm_ring_slots)},
    {"ONIC_SHM_MID_MAX", "16384", "shm: the largest message carried through the lane itself "
     "(no system call); above a lane message's 8 KiB in fragments that the receiver copies "
     "out while the sender writes the next (0: 8 KiB); larger data goes by RMA. The receiver "
     "keeps one buffer of this size per sender that sends such messages",
     ONIC_CONFIG_UINT, 0, 262144, NULL, CFG_FIELD(shm_mid_max)},
    {"ONIC_SHM_DEMOTE", "auto", "shm: a lane message of more than one slot whose receiver had "
     "taken everything before it (so likely waits for it) has its payload's first 16 cache "
     "lines pushed to the cache all cores share (CLDEMOTE) once written, where the receiver reads them "
     "sooner: 15 % off the latency from 256 B to 4 KiB here, no change to streams, whose "
     "receivers are behind. auto: where the CPU has the instruction; on; off",
     ONIC_CONFIG_ENUM, 0, 0, shm_demote_values, CFG_FIELD(shm_demote)},
    {"ONIC_SHM_RMA", "auto", "how shm moves RMA data: cma (one copy by process_vm_readv/"
     "writev), copy (two processes copying through shared bounce buffers at once) or auto "
     "(cma from ONIC_SHM_CMA_MIN bytes up, where the kernel allows it)", ONIC_CONFIG_ENUM, 0, 0,
     onic_config_shm_rma_values, CFG_FIELD(shm_rma)},
    {"ONIC_SHM_CMA_MIN", "0", "with ONIC_SHM_RMA=auto, the smallest RMA in bytes that goes by "
     "cma (measured here, cma was never slower than the copy, and needs nothing from the peer)",
     ONIC_CONFIG_UINT, 0, 0x7fffffff, NULL, CFG_FIELD(shm_cma_min)},
    {"ONIC_SHM_ASSIST_MIN", "131072", "a cma read or write of at least this many bytes asks "
     "the peer whose memory it reaches to copy part of it too (in chunks of half the operation "
     "from 32 KiB to 4 MiB, while that peer polls): two cores copy at once; 0 never asks",
     ONIC_CONFIG_UINT, 0, 0x7fffffff, NULL, CFG_FIELD(shm_assist_min)},
    {"ONIC_SHM_BOUNCE_CHUNK", "auto", "bytes in each chunk of a bounce buffer (one per sender "
     "in a receiver's shared memory). auto: 65536, halved while one process's bounce buffers "
     "would take more than 2 MiB (8192 for 64 processes on a node with 4 chunks), never below "
     "4096", ONIC_CONFIG_UINT_POW2, 4096, 4194304, auto_word, CFG_FIELD(shm_bounce_chunk)},
    {"ONIC_SHM_BOUNCE_CHUNKS", "4", "chunks in each bounce buffer: how far the copying "
     "sender may run ahead of the receiver", ONIC_CONFIG_UINT_POW2, 2, 256, NULL,
     CFG_FIELD(shm_bounce_chunks)},
    {"ONIC_SHM_XCHG_STOP", "0", "for tests: 1 makes every process but a node's rank 0 stop "
     "itself (SIGSTOP) just before it joins the node's exchange of shared memory, so that a test "
     "can act while rank 0 listens; SIGCONT lets it go on", ONIC_CONFIG_UINT, 0, 1, NULL,
     CFG_FIELD(shm_xchg_stop)},
    {"ONIC_WAIT_SPIN_US", "50", "a blocking wait spins this long, then yields, then sleeps "
     "on a futex until a sender wakes it", ONIC_CONFIG_UINT, 0, 1000000, NULL,
     CFG_FIELD(wait_spin_us)},
    {"ONIC_WAIT", "auto", "how a blocking wait waits: spin (ONIC_WAIT_SPIN_US, then yield, "
     "then sleep on a futex), sleep (no spinning: yield a few times, which runs whoever waits for "
     "the core, then sleep on a futex until a sender wakes it; for more processes than "
     "cores) "
     "or auto (sleep when this node's processes, and an onload engine, outnumber the cores "
     "they may use: onicrun counts them and passes spin or sleep; under other launchers, "
     "the node's processes against its online CPUs)",
     ONIC_CONFIG_ENUM, 0, 0, wait_values, CFG_FIELD(wait)},
    {"ONIC_EAGER_LIMIT", "16384", "MPI: messages up to this many bytes go eagerly (one put "
     "into the posted buffer or unexpected space), larger ones by rendezvous (the receiver "
     "pulls them); at most what one Portals put carries (ONIC_SHM_MID_MAX on a node, 2 KiB "
     "across nodes, 4 KiB under onload): a larger value is lowered to it",
     ONIC_CONFIG_UINT, 0, 262144, NULL,
     CFG_FIELD(eager_limit)},
    {"ONIC_EAGER_PULL_MIN", "8193", "MPI: a message of at least this many bytes, though within "
     "ONIC_EAGER_LIMIT, sent by MPI_Isend (or a persistent or buffered send) or "
     "MPI_Sendrecv -- a blocking send, or a collective's, stays eager -- goes by rendezvous, "
     "its receiver "
     "pulling it in one copy by cross-memory attach (where the kernel allows it and "
     "ONIC_SHM_CMA_MIN is 0; elsewhere eager), when its sender has receives posted: messages "
     "going both ways at once, where each core copying only what it receives beats eager "
     "messages, which each core copies in when it sends and out when it receives; 0: never",
     ONIC_CONFIG_UINT, 0, 262144, NULL, CFG_FIELD(eager_pull_min)},
    {"ONIC_MPI_IOVEC_MAX", "64", "MPI: a receive of a non-contiguous datatype whose count "
     "elements come to at most this many blocks lands in the user's buffer through a "
     "Portals I/O vector MD (no packed copy, no unpack); more blocks, 0, or under "
     "ONIC_ONLOAD (whose engine cannot read the vector), it lands packed and is unpacked",
     ONIC_CONFIG_UINT, 0, 4096, NULL, CFG_FIELD(mpi_iovec_max)},
    {"ONIC_MPI_WIN_SHM", "1", "MPI: 1 makes an MPI_Win_allocate window whose processes share "
     "a node in shared memory, and makes put, get, the accumulates and the locks on such a "
     "window (and on an MPI_Win_allocate_shared one) loads and stores by the origin, which "
     "complete without the target making a call; 0: every window's operations are Portals "
     "messages that the target side serves (accumulates and locks in the target's next call)",
     ONIC_CONFIG_UINT, 0, 1, NULL, CFG_FIELD(mpi_win_shm)},
    {"ONIC_EAGER_CREDITS", "auto", "MPI: eager bytes a process may have outstanding at one "
     "receiver, as this many times the smaller of ONIC_EAGER_LIMIT and 2 KiB (a message costs "
     "its size, at least 64 bytes); beyond that its messages wait for their receive "
     "(rendezvous). Each process sets aside that many bytes per process of the job for "
     "unexpected messages, more only while messages wait unreceived. auto: 256 (a window of "
     "64 messages of 8 KiB), halved while that would be more than 4 MiB a process (128 from 9 "
     "processes, 64 from 17), never below 64",
     ONIC_CONFIG_UINT, 1, 65536, auto_word, CFG_FIELD(eager_credits)},
    {"ONIC_ONLOAD", "0", "1: the job runs with an onload engine (onicrun --onload sets it): "
     "onicrun starts onic-engine on its own core before the processes and stops it after "
     "them, and the engine keeps every process's Portals interface, matching and moving "
     "data while the processes compute (one node only)",
     ONIC_CONFIG_UINT, 0, 1, NULL, CFG_FIELD(onload)},
    {"ONIC_ONLOAD_CORE", "last", "the core (hwloc's logical index) onicrun pins the onload "
     "engine to, or last; with --bind core the processes use the other cores (and the "
     "engine's last when they outnumber them)",
     ONIC_CONFIG_UINT, 0, 4095, core_words, CFG_FIELD(onload_core)},
    {"ONIC_ONLOAD_SHARED", "inline", "what onicrun --onload does when the engine would have "
     "no core of its own (the processes fill the cores they may use): inline (start no "
     "engine; the processes progress their own traffic, as without --onload, and onicrun "
     "says so once) or engine (the engine shares the processes' cores and nobody spins: "
     "transfers still progress while a process computes, but every message costs a trip "
     "through the engine and the scheduler)",
     ONIC_CONFIG_ENUM, 0, 0, onload_shared_values, CFG_FIELD(onload_shared)},
    {"ONIC_ONLOAD_CMD_RECS", "256", "records of 128 bytes in each process's command ring to "
     "the onload engine; a process finding it full takes its events and retries",
     ONIC_CONFIG_UINT_POW2, 2, 65536, NULL, CFG_FIELD(onload_cmd_recs)},
    {"ONIC_ONLOAD_EVENT_RECS", "1024", "records of 128 bytes in each process's event ring from "
     "the onload engine; the engine holds a process's work while its ring is full",
     ONIC_CONFIG_UINT_POW2, 2, 65536, NULL, CFG_FIELD(onload_event_recs)},
    {"ONIC_ONLOAD_RMA", "auto", "how the onload engine reaches this process's data: auto "
     "(cross-memory attach where the kernel allows it, else copy) or copy (the process "
     "copies through a bounce area in its segment, in its own onic calls)",
     ONIC_CONFIG_ENUM, 0, 0, onic_config_onload_rma_values, CFG_FIELD(onload_rma)},
    {"ONIC_RANK", "0", "this process's rank in its job (set by onicrun)",
     ONIC_CONFIG_UINT, 0, 0x7fffffff, NULL, CFG_FIELD(rank)},
    {"ONIC_SIZE", "1", "processes in the job (set by onicrun)",
     ONIC_CONFIG_UINT, 1, 0x7fffffff, NULL, CFG_FIELD(size)},
    {"ONIC_JOBID", "", "the job's unguessable id, naming its shared memory (set by onicrun)",
     ONIC_CONFIG_TOKEN, 0, 0, NULL, CFG_FIELD(jobid)},
    {"ONIC_BOOT_FD", "0", "the descriptor of the job's store, nameless shared memory that "
     "onicrun makes and its processes inherit (set by onicrun); 0: none",
     ONIC_CONFIG_UINT, 0, 65535, NULL, CFG_FIELD(boot_fd)},
    {"ONIC_ONLOAD_FD", "0", "the descriptor of the onload engine's status segment, nameless "
     "shared memory that onicrun --onload makes and the engine and the processes inherit "
     "(set by onicrun); 0: none", ONIC_CONFIG_UINT, 0, 65535, NULL, CFG_FIELD(onload_fd)},
    {"ONIC_ONLOAD_SOCK", "0", "the descriptor of the Unix socket over which a process hands "
     "its segment to the onload engine, or the engine takes them (set by onicrun); 0: none",
     ONIC_CONFIG_UINT, 0, 65535, NULL, CFG_FIELD(onload_sock)},
    {"ONIC_TRACE", "", "a directory (it must exist): every process writes the operations of "
     "its matching queues there, one file each (onic-<job>-r<rank>-p<pid>.trace), for "
     "onic-replay; empty: no trace, and no cost", ONIC_CONFIG_PATH, 0, 0, NULL,
     CFG_FIELD(trace)},
};

#define CONFIG_NVARS (sizeof(config_vars) / sizeof(config_vars[0]))

const onic_config_var_t *onic_config_vars(size_t *count_p)
{
    *count_p = CONFIG_NVARS;
    return config_vars;
}

const onic_config_var_t *onic_config_var_find(const char *name)
{
    for (size_t i = 0; i < CONFIG_NVARS; i++)
        if (strcmp(config_vars[i].name, name) == 0)
            return &config_vars[i];
    return NULL;
}

static void *config_field(onic_config_t *cfg, const onic_config_var_t *var)
{
    return (char *)cfg + var->offset;
}

static void config_accepted(const onic_config_var_t *var, char *buf, size_t len)
{
    size_t used = 0;

    switch (var->type) {
    case ONIC_CONFIG_UINT:
        snprintf(buf, len, "an integer from %u to %u%s%s", var->min, var->max,
                 var->values != NULL ? " or " : "", var->values != NULL ? var->values[0] : "");
        return;
    case ONIC_CONFIG_UINT_POW2:
        snprintf(buf, len, "a power of two from %u to %u%s%s", var->min, var->max,
                 var->values != NULL ? " or " : "", var->values != NULL ? var->values[0] : "");
        return;
    case ONIC_CONFIG_TOKEN:
        snprintf(buf, len, "1 to %d lowercase hex digits", ONIC_CONFIG_TOKEN_MAX);
        return;
    case ONIC_CONFIG_STRING:
    case ONIC_CONFIG_PATH:
        snprintf(buf, len, "at most %d printable characters without blanks",
                 var->type == ONIC_CONFIG_PATH ? ONIC_CONFIG_PATH_MAX : ONIC_CONFIG_STRING_MAX);
        return;
    case ONIC_CONFIG_ENUM:
        buf[0] = '\0';
        for (const char *const *v = var->values; *v != NULL && used < len; v++)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", v == var->values ? "" : "|", *v);
        return;
    }
}

onic_status_t onic_config_parse(const onic_config_var_t *var, const char *str,
                                void *value_p, char *err, size_t errlen)
{
    char accepted[128];
    char *end;
    unsigned long v;

    if (var->type == ONIC_CONFIG_TOKEN) {
        size_t len = strspn(str, "0123456789abcdef");
        if (len > 0 && len <= ONIC_CONFIG_TOKEN_MAX && str[len] == '\0') {
            memcpy(value_p, str, len + 1);
            return ONIC_OK;
        }
    } else if (var->type == ONIC_CONFIG_STRING || var->type == ONIC_CONFIG_PATH) {
        size_t len = 0;
        while (str[len] > ' ' && str[len] < 0x7f)
            len++;
        if (len <= (var->type == ONIC_CONFIG_PATH ? ONIC_CONFIG_PATH_MAX : ONIC_CONFIG_STRING_MAX)
            && str[len] == '\0') {
            memcpy(value_p, str, len + 1);
            return ONIC_OK;
        }
    } else if (var->type == ONIC_CONFIG_ENUM) {
        for (unsigned i = 0; var->values[i] != NULL; i++) {
            if (strcmp(str, var->values[i]) == 0) {
                *(unsigned *)value_p = i;
                return ONIC_OK;
            }
        }
    } else if ((var->type == ONIC_CONFIG_UINT || var->type == ONIC_CONFIG_UINT_POW2) &&
               var->values != NULL && strcmp(str, var->values[0]) == 0) {
        *(unsigned *)value_p = ONIC_CONFIG_LAST;
        return ONIC_OK;
    } else {
        errno = 0;
        v = strtoul(str, &end, 10);
        if (str[0] >= '0' && str[0] <= '9' && *end == '\0' && errno == 0 &&
            v >= var->min && v <= var->max &&
            (var->type != ONIC_CONFIG_UINT_POW2 || (v & (v - 1)) == 0)) {
            *(unsigned *)value_p = (unsigned)v;
            return ONIC_OK;
        }
    }
    config_accepted(var, accepted, sizeof(accepted));
    /* A long value is cut, so what it should be still fits the message. */
    if (snprintf(err, errlen, "invalid %s=\"%.80s%s\": expected %s", var->name, str,
                 strlen(str) > 80 ? "..." : "", accepted) < 0)
        err[0] = '\0'; /* (a message cut at errlen is still the message) */
    return ONIC_ERR_INVALID_PARAM;
}

void onic_config_format(const onic_config_var_t *var, const onic_config_t *cfg,
                        char *buf, size_t len)
{
    const void *field = config_field((onic_config_t *)cfg, var);
    int text = var->type == ONIC_CONFIG_TOKEN || var->type == ONIC_CONFIG_STRING ||
               var->type == ONIC_CONFIG_PATH;
    unsigned v = text ? 0 : *(const unsigned *)field;
    if (text)
        snprintf(buf, len, "%s", *(const char *)field ? (const char *)field : "-");
    else if (var->type == ONIC_CONFIG_ENUM)
        snprintf(buf, len, "%s", var->values[v]);
    else if (var->values != NULL && v == ONIC_CONFIG_LAST)
        snprintf(buf, len, "%s", var->values[0]);
    else
        snprintf(buf, len, "%u", v);
}

const char *onic_config_env(const onic_config_var_t *var)
{
    return getenv(var->name);
}

void onic_config_defaults(onic_config_t *cfg_p)
{
    char err[16];

    memset(cfg_p, 0, sizeof(*cfg_p));
    for (size_t i = 0; i < CONFIG_NVARS; i++) {
        /* The table's defaults are valid by construction (a test checks);
         * an empty default leaves a token empty. */
        if (config_vars[i].dflt[0] == '\0')
            continue;
        (void)onic_config_parse(&config_vars[i], config_vars[i].dflt,
                                config_field(cfg_p, &config_vars[i]), err, sizeof(err));
    }
}

static void config_warn_unknown(void)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;

    if (atomic_flag_test_and_set(&warned))
        return;
    for (char **env = environ; env != NULL && *env != NULL; env++) {
        size_t len;
        int known = 0;
        if (strncmp(*env, "ONIC_", 5) != 0)
            continue;
        len = strcspn(*env, "=");
        for (size_t i = 0; i < CONFIG_NVARS && !known; i++)
            known = strlen(config_vars[i].name) == len &&
                    strncmp(config_vars[i].name, *env, len) == 0;
        if (!known)
            onic_warn("unknown variable %.*s ignored; onic-info lists the ONIC_* variables",
                      (int)len, *env);
    }
}

__attribute__((cold, noinline)) onic_status_t onic_config_read(onic_config_t *cfg_p)
{
    onic_config_t cfg;
    char err[256];
    onic_status_t status = ONIC_OK;

    onic_config_defaults(&cfg);
    for (size_t i = 0; i < CONFIG_NVARS; i++) {
        const char *str = onic_config_env(&config_vars[i]);
        if (str == NULL)
            continue;
        if (onic_config_parse(&config_vars[i], str, config_field(&cfg, &config_vars[i]),
                              err, sizeof(err)) != ONIC_OK) {
            onic_error("%s", err);
            status = ONIC_ERR_INVALID_PARAM;
        }
    }
    if (status == ONIC_OK && cfg.alpu_block > cfg.alpu_cells) {
        onic_error("invalid ONIC_ALPU_BLOCK=%u: must not exceed ONIC_ALPU_CELLS=%u",
                   cfg.alpu_block, cfg.alpu_cells);
        status = ONIC_ERR_INVALID_PARAM;
    }
    if (status == ONIC_OK && cfg.nodes > cfg.size) {
        onic_error("invalid ONIC_NODES=%u: a job of ONIC_SIZE=%u processes has at most that "
                   "many nodes", cfg.nodes, cfg.size);
        status = ONIC_ERR_INVALID_PARAM;
    }
    if (status == ONIC_OK && cfg.rank >= cfg.size) {
        onic_error("invalid ONIC_RANK=%u: must be below ONIC_SIZE=%u (start jobs with onicrun)",
                   cfg.rank, cfg.size);
        status = ONIC_ERR_INVALID_PARAM;
    }
    config_warn_unknown();
    /* onicrun's rank, as soon as it is read: errors from here on name it,
     * even this call's (src/boot sets it for other launchers). */
    if (onic_log_rank() < 0) {
        const onic_config_var_t *var = onic_config_var_find("ONIC_RANK");
        const char *str = var != NULL ? onic_config_env(var) : NULL;
        unsigned rank;
        if (str != NULL && onic_config_parse(var, str, &rank, err, sizeof(err)) == ONIC_OK)
            onic_log_rank_set((int)rank);
    }
    if (status == ONIC_OK)
        *cfg_p = cfg;
    return status;
}

onic_log_level_t onic_config_log_level(void)
{
    char err[256];
    unsigned level;
    const char *str = onic_config_env(&config_vars[0]);

    if (str != NULL && onic_config_parse(&config_vars[0], str, &level, err, sizeof(err)) == ONIC_OK)
        return (onic_log_level_t)level;
    if (str != NULL) /* the logger is not up yet: say it directly */
        fprintf(stderr, "onic: %s; using warn\n", err);
    return ONIC_LOG_WARN;
}

int onic_config_wait_sleeps(const onic_config_t *cfg, unsigned nprocs)
{
    long cpus;

    if (cfg->wait != ONIC_WAIT_AUTO)
        return cfg->wait == ONIC_WAIT_SLEEP;
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 && nprocs > (unsigned long)cpus;
}

/* One process's shared memory grows with the node's processes (a lane and
 * a bounce buffer for each sender). auto sizes keep the lanes within 4 MiB
 * and the bounce buffers, used only where the kernel refuses cma, within
 * 2 MiB, so that a process's region stays below the segments MPICH sets
 * aside (bench/mpi/idle_mem.c: 8.6 MB a process at 64 processes). */
#define CONFIG_SHM_LANES_MAX  (4u << 20)
#define CONFIG_SHM_RING_MAX   4096u /* slots: 256 KiB a lane */
#define CONFIG_SHM_BOUNCE_MAX (2u << 20)
#define CONFIG_CREDITS_MAX    (4u << 20)

/* The largest power of two v from lo to hi with nprocs * v * unit within
 * max, or lo. */
static unsigned config_fit(unsigned nprocs, unsigned unit, unsigned lo, unsigned hi,
                               unsigned max)
{
    unsigned v = hi;

    while (v > lo && (uint64_t)nprocs * v * unit > max)
        v /= 2;
    return v;
}

unsigned onic_config_shm_ring_slots(const onic_config_t *cfg, unsigned nprocs)
{
    if (cfg->shm_ring_slots != ONIC_CONFIG_LAST)
        return cfg->shm_ring_slots;
    return config_fit(nprocs, 64, 256, CONFIG_SHM_RING_MAX, CONFIG_SHM_LANES_MAX);
}

uint64_t onic_config_shm_ring_most(const onic_config_t *cfg, unsigned nprocs)
{
    uint64_t most = (uint64_t)nprocs * onic_config_shm_ring_slots(cfg, nprocs);

    /* n * slots(n) drops where auto halves the rings: its peaks are the
     * last n before each halving. */
    for (unsigned v = CONFIG_SHM_RING_MAX; cfg->shm_ring_slots == ONIC_CONFIG_LAST && v > 256;
         v /= 2) {
        unsigned n = CONFIG_SHM_LANES_MAX / 64 / v < nprocs ? CONFIG_SHM_LANES_MAX / 64 / v : nprocs;
        uint64_t held = (uint64_t)n * onic_config_shm_ring_slots(cfg, n);
        most = held > most ? held : most;
    }
    return most;
}

unsigned onic_config_eager_credits(const onic_config_t *cfg, unsigned nprocs)
{
    if (cfg->eager_credits != ONIC_CONFIG_LAST)
        return cfg->eager_credits;
    return config_fit(nprocs, ONIC_EAGER_CREDIT_UNIT, 64, 256, CONFIG_CREDITS_MAX);
}

unsigned onic_config_shm_bounce_chunk(const onic_config_t *cfg, unsigned nprocs)
{
    if (cfg->shm_bounce_chunk != ONIC_CONFIG_LAST)
        return cfg->shm_bounce_chunk;
    return config_fit(nprocs, cfg->shm_bounce_chunks, 4096, 65536, CONFIG_SHM_BOUNCE_MAX);
}
