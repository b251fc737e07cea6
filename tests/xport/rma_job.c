/* Transport RMA between processes, run through onicrun (2 or more ranks).
 *
 * Every rank exposes a 64 MiB source filled with its own pattern and a 64 MiB
 * sink, and sends both keys to every peer. Then each rank, towards the next
 * rank (rank + 1) % size:
 *  - reads 1 byte to 64 MiB at awkward offsets and checks every byte;
 *  - writes the same sizes into the peer's sink, and after each write tells
 *    the peer (a message) what it should now find there; the peer checks
 *    and answers before the next write;
 *  - starts 300 reads of random sizes at once (more than the transport keeps
 *    in flight per peer, so the window's wait runs) and checks them all;
 *  - starts 2048 two-piece reads at once (onic_xport_rmav; with cma each
 *    completes in the call): every one completes once, with its bytes;
 *  - reads and writes outside a key, through a deregistered key and a forged
 *    one: errors, never a crash and never wrong data.
 * ONIC_SHM_RMA picks the mechanism; with "cma" the test also requires that
 * cross-memory attach is in use, with "copy" that it is not. With the
 * argument "nocma" every rank first forbids itself process_vm_readv/writev
 * (seccomp, as a container's profile may): then even ONIC_SHM_RMA=cma must
 * fall back to the copy and everything must still work. Every rank keeps
 * polling until all are done, since the copy mechanism needs the owner.
 *
 * "assist" (2 ranks, cma): rank 0 alone reads and writes rank 1's memory,
 * 256 KiB to 64 MiB, while rank 1 only waits: rank 1 must have copied part
 * of it (onic_xport_assisted at rank 0), and every byte must be right.
 * "assist_refused": rank 1 forbids itself CMA after opening (its probe
 * passed), so its help fails: rank 0 must notice, redo the copy, stop
 * asking, and still get every byte right. */
#include "base/clock.h"
#include "base/config.h"
#include "base/rand.h"
#include "xport/xport.h"

#include <errno.h>
#include <signal.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RMA_BUF   (64u << 20)
#define RMA_BURST 300
#define RMAV_BURST 2048

enum { MSG_KEYS = 1, MSG_CHECK = 2, MSG_CHECKED = 3, MSG_DONE = 4 };

typedef struct rma_msg {
    uint32_t          type;
    uint32_t          seed;
    uint64_t          off, len;
    onic_xport_mkey_t key;   /* MSG_KEYS: the source; the sink follows as payload */
} rma_msg_t;

typedef struct rma_job {
    onic_xport_t      *x;
    uint32_t           rank, size;
    uint8_t           *src, *sink;
    onic_xport_mkey_t *peer_src, *peer_sink;  /* by rank */
    uint32_t           keys, checked, done;   /* messages seen */
    uint64_t           completions;
    onic_status_t      last_status;
    uint32_t          *seen;  /* by burst index + 1 (a completion's ctx): times completed */
    unsigned           bad;
} rma_job_t;

static uint8_t src_byte(uint32_t rank, uint64_t i)
{
    return (uint8_t)(rank * 151 + i * 13 + (i >> 12));
}

static uint8_t write_byte(uint32_t seed, uint64_t i)
{
    return (uint8_t)(seed * 29 + i * 7 + (i >> 9));
}

static void on_message(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                       const void *payload, size_t len)
{
    rma_job_t *j = arg;
    rma_msg_t m;

    if (user_len != sizeof(m) || src >= j->size) {
        j->bad++;
        return;
    }
    memcpy(&m, user_hdr, sizeof(m));
    if (m.type == MSG_KEYS && len == sizeof(onic_xport_mkey_t)) {
        j->peer_src[src] = m.key;
        memcpy(&j->peer_sink[src], payload, len);
        j->keys++;
    } else if (m.type == MSG_CHECK && m.off <= RMA_BUF && m.len <= RMA_BUF - m.off) {
        for (uint64_t i = 0; i < m.len; i++)
            if (j->sink[m.off + i] != write_byte(m.seed, i)) {
                fprintf(stderr, "rank %u: write from %u of %llu bytes at %llu wrong at %llu\n",
                        j->rank, src, (unsigned long long)m.len, (unsigned long long)m.off,
                        (unsigned long long)i);
                j->bad++;
                break;
            }
        /* The writer waits for this before it writes over the range again. */
        rma_msg_t ack = {.type = MSG_CHECKED};
        if (onic_xport_send(j->x, src, &ack, sizeof(ack), NULL, 0) != ONIC_OK)
            j->bad++;
    } else if (m.type == MSG_CHECKED) {
        j->checked++;
    } else if (m.type == MSG_DONE) {
        j->done++;
    } else {
        j->bad++;
    }
}

static void on_rma(void *arg, void *ctx, onic_status_t status)
{
    rma_job_t *j = arg;

    j->completions++;
    j->last_status = status;
    if (ctx != NULL && j->seen != NULL)
        j->seen[(uintptr_t)ctx - 1]++;
}

/* Start one operation and wait for its completion; its status. */
static onic_status_t rma_sync(rma_job_t *j, int write, uint32_t peer, void *local,
                              const onic_xport_mkey_t *key, uint64_t off, size_t len)
{
    uint64_t want = j->completions + 1;
    onic_status_t status = write ? onic_xport_rma_write(j->x, peer, local, key, off, len, NULL)
                                 : onic_xport_rma_read(j->x, peer, local, key, off, len, NULL);

    if (status != ONIC_OK)
        return status;
    while (j->completions < want)
        onic_xport_wait(j->x, UINT64_MAX);
    return j->last_status;
}

/* A failed check ends this rank at once: a peer may wait for what it would
 * send next (a check, an answer), and onicrun then ends the job with a
 * failure instead of its time limit ending a hang. */
static void check(rma_job_t *j, int ok, const char *what, uint64_t len)
{
    if (!ok) {
        fprintf(stderr, "rank %u: %s (%llu bytes) failed; stopping\n", j->rank, what,
                (unsigned long long)len);
        exit(1);
    }
}

static void send_msg(rma_job_t *j, uint32_t peer, const rma_msg_t *m, const void *payload,
                     size_t len)
{
    check(j, onic_xport_send(j->x, peer, m, sizeof(*m), payload, len) == ONIC_OK, "send", len);
}

/* Make process_vm_readv/writev fail with EPERM in this process, as a
 * seccomp profile may; 0 if the filter is in place. */
static int forbid_cma(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return -1;
    return 0;
}

/* The "assist" modes' rank 0: every operation checked, and what rank 1
 * copied for it. */
static void run_assist(rma_job_t *j, uint8_t *local, int refused)
{
    static const uint64_t sizes[] = {262144, (1u << 20) + 4097, 4u << 20, (16u << 20) - 1,
                                     RMA_BUF};
    uint32_t peer = 1;

    for (int round = 0; round < 3; round++)
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            uint64_t len = sizes[k], off = (len * 5 + 3) % (RMA_BUF - len + 1);
            uint32_t seed = (uint32_t)(k + 7 + round * 10);
            int ok;

            memset(local, 0, len);
            ok = rma_sync(j, 0, peer, local, &j->peer_src[peer], off, len) == ONIC_OK;
            for (uint64_t i = 0; ok && i < len; i++)
                ok = local[i] == src_byte(peer, off + i);
            check(j, ok, "assisted read", len);
            for (uint64_t i = 0; i < len; i++)
                local[i] = write_byte(seed, i);
            check(j, rma_sync(j, 1, peer, local, &j->peer_sink[peer], off, len) == ONIC_OK,
                  "assisted write", len);
            rma_msg_t m = {.type = MSG_CHECK, .seed = seed, .off = off, .len = len};
            send_msg(j, peer, &m, NULL, 0);
            while (j->checked < (uint32_t)(round * 5 + k + 1))
                onic_xport_wait(j->x, UINT64_MAX);
        }
    printf("rma_job rank 0: rank 1 copied %llu bytes of the operations\n",
           (unsigned long long)onic_xport_assisted(j->x));
    if (refused)
        check(j, onic_xport_assisted(j->x) == 0, "no help from a process that cannot give it", 0);
    else
        check(j, onic_xport_assisted(j->x) > 0, "help from the waiting owner", 0);
}

/* An operation that never completes (a lost chunk or a help that is
 * waited for in vain) fails the job here, after 100 s, rather than at
 * onicrun's limit: the job needs a few seconds, and a hang inside the
 * transport cannot be seen from the test but by a limit. */
static void on_watchdog(int sig)
{
    static const char msg[] = "rma_job: not done after 100 s (it needs a few): an operation "
                              "that never completes\n";

    (void)sig;
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

int main(int argc, char **argv)
{
    int nocma = argc > 1 && strcmp(argv[1], "nocma") == 0;
    int assist = argc > 1 && strncmp(argv[1], "assist", 6) == 0;
    int refused = argc > 1 && strcmp(argv[1], "assist_refused") == 0;
    static const uint64_t sizes[] = {1, 7, 64, 4095, 4096, 65536 + 13, 1u << 20,
                                     (8u << 20) + 5, RMA_BUF};
    onic_config_t cfg;
    onic_xport_params_t p = {0};
    rma_job_t j = {0};
    onic_xport_mkey_t src_key, sink_key, bad_key;
    uint8_t *local;
    uint32_t peer;
    unsigned caps;
    uint64_t t0;

    if (onic_config_read(&cfg) != ONIC_OK || cfg.size < 2) {
        fprintf(stderr, "rma_job: run me with onicrun -n 2 or more\n");
        return 2;
    }
    j.rank = cfg.rank;
    j.size = cfg.size;
    signal(SIGALRM, on_watchdog);
    alarm(100);
    if (nocma && forbid_cma() != 0) {
        fprintf(stderr, "rma_job: cannot install a seccomp filter: %s\n", strerror(errno));
        return 1;
    }
    p.size = 0; /* from the launcher: onicrun's shm, or ofi with ONIC_XPORT=ofi */
    p.recv_cb = on_message;
    p.rma_cb = on_rma;
    p.cb_arg = &j;
    p.cfg = &cfg;
    j.src = malloc(RMA_BUF);
    j.sink = calloc(1, RMA_BUF);
    local = malloc(RMA_BUF);
    j.peer_src = calloc(j.size, sizeof(*j.peer_src));
    j.peer_sink = calloc(j.size, sizeof(*j.peer_sink));
    if (j.src == NULL || j.sink == NULL || local == NULL || j.peer_src == NULL ||
        j.peer_sink == NULL || onic_xport_open(&p, &j.x) != ONIC_OK) {
        fprintf(stderr, "rma_job: rank %u cannot set up\n", j.rank);
        return 1;
    }
    for (uint64_t i = 0; i < RMA_BUF; i++)
        j.src[i] = src_byte(j.rank, i);
    check(&j, onic_xport_mem_reg(j.x, j.src, RMA_BUF, &src_key) == ONIC_OK, "mem_reg", RMA_BUF);
    check(&j, onic_xport_mem_reg(j.x, j.sink, RMA_BUF, &sink_key) == ONIC_OK, "mem_reg", RMA_BUF);
    for (uint32_t r = 0; r < j.size; r++) {
        rma_msg_t m = {.type = MSG_KEYS, .key = src_key};
        if (r != j.rank)
            send_msg(&j, r, &m, &sink_key, sizeof(sink_key));
    }
    while (j.keys < j.size - 1)
        onic_xport_wait(j.x, UINT64_MAX);

    peer = (j.rank + 1) % j.size;
    caps = onic_xport_caps(j.x, peer);
    if (assist) {
        if (j.size != 2 || (caps & ONIC_XPORT_CAP_CMA) == 0) {
            printf("rma_job rank %u: the assist modes need 2 ranks and CMA\n", j.rank);
            return j.size != 2 ? 2 : 0;
        }
        if (j.rank == 0) {
            while (j.checked < 1) /* rank 1 is ready (and, refused, forbidden CMA) */
                onic_xport_wait(j.x, UINT64_MAX);
            j.checked = 0;
            run_assist(&j, local, refused);
            rma_msg_t m = {.type = MSG_DONE};
            send_msg(&j, 1, &m, NULL, 0);
        } else {
            rma_msg_t m = {.type = MSG_CHECKED};
            if (refused && forbid_cma() != 0) {
                fprintf(stderr, "rma_job: cannot install a seccomp filter: %s\n",
                        strerror(errno));
                return 1;
            }
            send_msg(&j, 0, &m, NULL, 0);
            while (j.done < 1) /* serve, in waits that sleep */
                onic_xport_wait(j.x, UINT64_MAX);
        }
        goto out;
    }
    check(&j, (caps & ONIC_XPORT_CAP_RMA) != 0, "RMA capability", 0);
    if (nocma)
        check(&j, (caps & ONIC_XPORT_CAP_CMA) == 0, "the copy where the kernel refuses CMA", 0);
    else if (cfg.shm_rma == ONIC_SHM_RMA_CMA)
        check(&j, (caps & ONIC_XPORT_CAP_CMA) != 0, "cross-memory attach in use", 0);
    if (cfg.shm_rma == ONIC_SHM_RMA_COPY)
        check(&j, (caps & ONIC_XPORT_CAP_CMA) == 0, "bounce buffers in use", 0);

    t0 = onic_time_ns();
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        uint64_t len = sizes[k], off = (len * 3 + 1) % (RMA_BUF - len + 1);
        uint32_t seed = (uint32_t)(k + 1 + j.rank * 100);
        int ok;

        memset(local, 0, len);
        ok = rma_sync(&j, 0, peer, local, &j.peer_src[peer], off, len) == ONIC_OK;
        for (uint64_t i = 0; ok && i < len; i++)
            ok = local[i] == src_byte(peer, off + i);
        check(&j, ok, "read", len);

        for (uint64_t i = 0; i < len; i++)
            local[i] = write_byte(seed, i);
        ok = rma_sync(&j, 1, peer, local, &j.peer_sink[peer], off, len) == ONIC_OK;
        check(&j, ok, "write", len);
        rma_msg_t m = {.type = MSG_CHECK, .seed = seed, .off = off, .len = len};
        send_msg(&j, peer, &m, NULL, 0);
        while (j.checked < k + 1)
            onic_xport_wait(j.x, UINT64_MAX);
    }

    /* A burst of reads in flight at once, each into its own place. */
    {
        onic_rand_t rng;
        uint64_t offs[RMA_BURST], lens[RMA_BURST], at = 0, want;
        int ok = 1;
        onic_rand_seed(&rng, 1234 + j.rank);
        want = j.completions + RMA_BURST;
        for (int i = 0; i < RMA_BURST; i++) {
            lens[i] = 1 + onic_rand_next(&rng) % 150000;
            offs[i] = onic_rand_next(&rng) % (RMA_BUF - lens[i]);
            if (onic_xport_rma_read(j.x, peer, local + at, &j.peer_src[peer], offs[i], lens[i],
                                    NULL) != ONIC_OK)
                ok = 0;
            at += lens[i];
        }
        while (ok && j.completions < want)
            onic_xport_wait(j.x, UINT64_MAX);
        at = 0;
        for (int i = 0; ok && i < RMA_BURST; i++) {
            for (uint64_t b = 0; ok && b < lens[i]; b++)
                ok = local[at + b] == src_byte(peer, offs[i] + b);
            at += lens[i];
        }
        check(&j, ok, "burst of reads", RMA_BURST);
    }

    /* A burst of two-piece reads (onic_xport_rmav) where the transport
     * takes them in one operation (cma), none waited for: every one
     * completes exactly once -- each started one keeps its completion's
     * place reserved, even if it completes at once (more of them than
     * the notification ring has grown to so far). */
    {
        static uint32_t seen[RMAV_BURST];
        static uint8_t started[RMAV_BURST];
        uint64_t want = j.completions;
        int ok = 1;
        memset(seen, 0, sizeof(seen));
        memset(started, 0, sizeof(started));
        j.seen = seen;
        for (int i = 0; ok && i < RMAV_BURST; i++) {
            struct iovec v[2] = {{local + 64 * i, 16}, {local + 64 * i + 32, 16}};
            onic_status_t st = onic_xport_rmav(j.x, peer, 0, v, 2, &j.peer_src[peer],
                                               (uint64_t)i * 32, 32, (void *)(uintptr_t)(i + 1));
            if (st == ONIC_OK) {
                want++;
                started[i] = 1;
            } else if (st != ONIC_ERR_UNSUPPORTED) {
                ok = 0;
            }
        }
        while (ok && j.completions < want)
            onic_xport_wait(j.x, UINT64_MAX);
        for (int i = 0; ok && i < RMAV_BURST; i++) {
            ok = seen[i] == started[i];
            for (uint64_t b = 0; ok && started[i] && b < 32; b++)
                ok = local[64 * i + (b < 16 ? b : b + 16)] == src_byte(peer, (uint64_t)i * 32 + b);
        }
        j.seen = NULL;
        check(&j, ok, "burst of two-piece reads", RMAV_BURST);
    }

    /* Out of range, forged, deregistered, unmapped: errors, nothing moved. */
    {
        onic_xport_mkey_t k = j.peer_src[peer];
        onic_xport_mkey_t gone;
        fprintf(stderr, "(errors about RMA ranges are expected next)\n");
        check(&j, onic_xport_rma_read(j.x, peer, local, &k, RMA_BUF - 10, 11, NULL) ==
                  ONIC_ERR_INVALID_PARAM, "read past the key", 11);
        check(&j, onic_xport_rma_read(j.x, j.size, local, &k, 0, 1, NULL) ==
                  ONIC_ERR_INVALID_PARAM, "read from a bad rank", 1);
        check(&j, onic_xport_rma_read(j.x, peer, NULL, &k, 0, 1, NULL) ==
                  ONIC_ERR_INVALID_PARAM, "read into NULL", 1);
        /* An unmapped address: the kernel (CMA) or the owner (copy) says no. */
        bad_key = k;
        bad_key.addr = 4096;
        bad_key.len = 4096;
        /* Over ofi the provider refuses a key it does not have (the key
         * mixes id, address and length), and tcp then drops the connection
         * with it: not something to do in the middle of a test. */
        if (strcmp(onic_xport_peer_transport(j.x, peer), "ofi") == 0)
            printf("rma_job rank %u: over ofi, refusals of forged keys are left to the "
                   "provider\n", j.rank);
        else
            check(&j, rma_sync(&j, 0, peer, local, &bad_key, 0, 4096) == ONIC_ERR_INVALID_PARAM,
                  "read of unmapped memory", 4096);
        if ((cfg.shm_rma == ONIC_SHM_RMA_COPY || nocma) &&
            strcmp(onic_xport_peer_transport(j.x, peer), "ofi") != 0) {
            /* Only the owner can refuse a key it no longer honours. */
            bad_key = k;
            bad_key.id ^= 1ull << 40;
            check(&j, rma_sync(&j, 0, peer, local, &bad_key, 0, 64) == ONIC_ERR_INVALID_PARAM,
                  "read through a forged key", 64);
            memset(local, 0x5a, 64);
            check(&j, rma_sync(&j, 1, peer, local, &bad_key, 0, 64) == ONIC_ERR_INVALID_PARAM,
                  "write through a forged key", 64);
        }
        check(&j, onic_xport_mem_reg(j.x, local, 4096, &gone) == ONIC_OK, "mem_reg", 4096);
        check(&j, onic_xport_mem_dereg(j.x, &gone) == ONIC_OK, "mem_dereg", 4096);
        check(&j, onic_xport_mem_dereg(j.x, &gone) == ONIC_ERR_NO_ELEM, "second dereg", 4096);
        /* Oneself: the owner is here, so a stale key is refused in any mode. */
        check(&j, rma_sync(&j, 0, j.rank, local + 8192, &gone, 0, 16) == ONIC_ERR_INVALID_PARAM,
              "read through a deregistered key", 16);
        check(&j, rma_sync(&j, 0, j.rank, local, &src_key, 100, 4096) == ONIC_OK &&
                  memcmp(local, j.src + 100, 4096) == 0, "read from oneself", 4096);
    }

    printf("rma_job rank %u: RMA to rank %u by %s took %.2f s\n", j.rank, peer,
           (caps & ONIC_XPORT_CAP_CMA) ? "cma" : "copy", (double)(onic_time_ns() - t0) / 1e9);
    /* Keep serving until everyone is done: the copy needs the owner. */
    for (uint32_t r = 0; r < j.size; r++) {
        rma_msg_t m = {.type = MSG_DONE};
        if (r != j.rank)
            send_msg(&j, r, &m, NULL, 0);
    }
    while (j.done < j.size - 1)
        onic_xport_wait(j.x, UINT64_MAX);
    check(&j, onic_xport_drops(j.x) == 0, "no drops", 0);
out:
    onic_xport_close(j.x);
    printf("rma_job rank %u: %s\n", j.rank, j.bad == 0 ? "passed" : "FAILED");
    free(j.src);
    free(j.sink);
    free(local);
    free(j.peer_src);
    free(j.peer_sink);
    return j.bad == 0 ? 0 : 1;
}
