/* The transport between processes, run through onicrun.
 *
 *   xport_job fanin N   every rank but 0 sends N messages to rank 0, which
 *                       checks per-sender order, sizes and contents
 *   xport_job flood N   every rank sends N messages to every rank (itself
 *                       included) while receiving: nobody may deadlock
 *   xport_job pingpong N  ranks 0 and 1 bounce a message N times, each side
 *                       waiting with onic_xport_wait; rank 1 answers late
 *                       now and then so rank 0 really sleeps (run with
 *                       ONIC_WAIT_SPIN_US=0): every sleep of rank 0 must be
 *                       ended by its peer, none by the re-check timer; with
 *                       ONIC_SHM_DEMOTE=on some messages were pushed to the
 *                       waiting peer's shared cache, with off none
 *   xport_job echo N    rank 1 streams N messages to rank 0, whose callback
 *                       sends each back to rank 1 and to itself: sends made
 *                       from callbacks, through full rings, stay in order
 *   xport_job crossreply N  ranks 0 and 1 each send N 1-KB requests (15
 *                       fill a 256-slot ring) and only then poll; each callback
 *                       answers every request with a 1-KB reply: a callback
 *                       waiting for room must not keep the slots the other
 *                       side waits for (a deadlock hangs the job)
 *   xport_job rmaorder N  (with ONIC_SHM_RMA=copy) every rank but 0 streams N
 *                       messages to rank 0, whose callback starts an RMA
 *                       read from the sender for each without waiting for
 *                       it: past the transport's window of reads in flight,
 *                       a start waits, and meanwhile moves what arrives
 *                       aside; the rest of that ring, and the other
 *                       senders' rings, must then wait behind it (order)
 *   xport_job refill N  rank 0 sends N empty messages to rank 1, which is not
 *                       reading: those that do not fit are kept; rank 1 then
 *                       reads exactly those that fit (told by a signal, so
 *                       that rank 0 does not call onic meanwhile), and rank 0
 *                       sends one more, which must leave at once: what was
 *                       kept goes first and leaves room for it
 *   xport_job leave N   rank 1 closes its endpoint and exits without reading;
 *                       rank 0 sends it N messages, which must be kept (its
 *                       ring is full), then closes: its close gives what is
 *                       kept a moment to leave and returns, never waiting
 *                       for a peer that left
 *   xport_job gone      (in a bundle, ofi) rank 1 answers one message and
 *                       exits; rank 0 goes on sending it (held in the
 *                       bundle) until it is found unreachable: the held
 *                       messages are dropped in a poll, and the bundle's
 *                       end must then fail, not report success
 *   xport_job errors    bad rank, over-long payload and header are errors
 *   xport_job reopen N  close the endpoint and open it again, then fanin N:
 *                       also under mpiexec/mpirun (a launcher's bootstrap
 *                       kept, its keys put again in a new epoch)
 *   xport_job stall N   rank 1 does not call into onic for 4 s; rank 0 sends
 *                       it N messages, which must all return at once (a send
 *                       never waits for its peer: what has no room is kept),
 *                       then goes on sending one every 10 ms and, with a
 *                       credit timeout of 1 s (ofi: ONIC_OFI_SEND_TIMEOUT=1),
 *                       must get an error within 3 s instead of keeping
 *                       messages for an unreachable peer forever;
 *                       then rank 1 sends rank 0 a message, which must still
 *                       arrive: a peer we cannot send to is still heard
 *                       (in a bundle, the two connect first, so rank 0's
 *                       messages are bundled until credits run out)
 *
 * With XPORT_JOB_BUNDLE=1, every rank sends inside a bundle
 * (onic_xport_bundle) from start to end, rank 0 of fanin first lets the
 * messages pile up for 0.2 s (bundles are then handed up across polls'
 * budgets), and every rank that sent streams to another (fanin's senders,
 * echo's rank 1, flood's ranks) must have bundled some: ofi must have sent
 * messages together, and every check above still holds.
 *
 * Payload sizes cycle from 0 to 200 bytes (or the endpoint's limit, if
 * lower); with ONIC_SHM_RING_SLOTS=4 the
 * credit path runs on nearly every message. Prints "xport_job: N passed,
 * M failed" per rank; exit status 1 on any failure. */
#include "base/clock.h"
#include "base/config.h"
#include "xport/xport.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* How this process's futex sleeps ended, seen by wrapping syscall(2),
 * which the transport's sleep goes through: woken (0), the word had moved
 * already (EAGAIN), or the sleep's re-check timer ran out (ETIMEDOUT). A
 * sleep that ends by its timer although the peer had answered (the word
 * moved: senders bump it before they wake) is a lost wake-up, whatever the
 * time it took; one whose word had not moved only waited for a peer that
 * had not answered yet (on a loaded machine it can be off its core for
 * longer than the timer), which is no failure. */
static unsigned long futex_woken, futex_moved, futex_timed_out, futex_timed_late;

long syscall(long nr, ...)
{
    static long (*real)(long, ...);
    long a[6], rc;
    va_list ap;
    int e;

    va_start(ap, nr);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "syscall");
    rc = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    e = errno;
    if (nr == SYS_futex && (a[1] & FUTEX_CMD_MASK) == FUTEX_WAIT) {
        if (rc == 0)
            __atomic_fetch_add(&futex_woken, 1, __ATOMIC_RELAXED);
        else if (e == EAGAIN)
            __atomic_fetch_add(&futex_moved, 1, __ATOMIC_RELAXED);
        else if (e == ETIMEDOUT &&
                 __atomic_load_n((uint32_t *)a[0], __ATOMIC_ACQUIRE) != (uint32_t)a[2])
            __atomic_fetch_add(&futex_timed_out, 1, __ATOMIC_RELAXED);
        else if (e == ETIMEDOUT)
            __atomic_fetch_add(&futex_timed_late, 1, __ATOMIC_RELAXED);
    }
    errno = e;
    return rc;
}

typedef struct job {
    onic_xport_t *x;
    int       echo;       /* rank 0 answers from inside its callback */
    int       cross;      /* crossreply: answer every request from the callback */
    int       rmaorder;   /* rank 0 starts a read from the callback of each message */
    onic_xport_mkey_t *keys;  /* rmaorder: by sender, its region, from its first message */
    uint64_t  reads, reads_done;
    pid_t     peer_pid;   /* refill: the other rank's, from its first message */
    uint64_t  requests, replies;
    uint32_t  rank, size;
    uint64_t *next_seq;   /* by sender: the sequence number expected next */
    uint64_t  received;
    uint64_t  bad;
} job_t;

static size_t max_len = 200; /* lowered to the endpoint's limit at open */
#define SEQ_PID (UINT64_MAX - 1) /* refill: a process id, outside the stream */
#define SEQ_KEY (UINT64_MAX - 2) /* rmaorder: rank 1's key, outside the stream */

static size_t msg_len(uint64_t seq)
{
    return (size_t)(seq % (max_len + 1));
}

static uint8_t msg_byte(uint32_t src, uint64_t seq, size_t i)
{
    return (uint8_t)(src * 131 + seq * 7 + i);
}

static void on_message(void *arg, uint32_t src, const void *user_hdr, size_t user_len,
                       const void *payload, size_t len)
{
    job_t *j = arg;
    uint64_t seq;
    const uint8_t *p = payload;

    j->received++;
    if (j->cross) {
        static uint8_t reply[1024];
        memcpy(&seq, user_hdr, sizeof(seq));
        if (seq != UINT64_MAX) {
            j->replies++;
        } else {
            /* Answer from the callback, through a ring the peer has filled. */
            seq = j->requests++;
            if (onic_xport_send(j->x, src, &seq, sizeof(seq), reply, sizeof(reply)) != ONIC_OK)
                j->bad++;
        }
        return;
    }
    if (src >= j->size || user_len != sizeof(seq)) {
        j->bad++;
        return;
    }
    memcpy(&seq, user_hdr, sizeof(seq));
    if (seq == SEQ_PID && len == sizeof(pid_t)) {
        memcpy(&j->peer_pid, payload, sizeof(pid_t));
        return;
    }
    if (seq == SEQ_KEY && len == sizeof(*j->keys)) {
        memcpy(&j->keys[src], payload, sizeof(*j->keys));
        return;
    }
    if (seq != j->next_seq[src] || len != msg_len(seq)) {
        if (j->bad++ < 5)
            fprintf(stderr, "rank %u: from %u got seq %llu (len %zu), expected %llu\n", j->rank,
                    src, (unsigned long long)seq, len, (unsigned long long)j->next_seq[src]);
    }
    for (size_t i = 0; i < len; i++)
        if (p[i] != msg_byte(src, seq, i)) {
            j->bad++;
            break;
        }
    j->next_seq[src] = seq + 1;
    if (j->rmaorder && j->rank == 0 && src != 0) {
        static uint8_t local[256];
        j->reads++;
        if (onic_xport_rma_read(j->x, src, local, &j->keys[src], seq % 16 * 256, sizeof(local),
                                j) != ONIC_OK)
            j->bad++;
    }
    if (j->echo && j->rank == 0 && src == 1) {
        /* Send from the callback, to the sender and to oneself: through
         * full rings these sends wait, and must still leave in order. */
        uint8_t out[256];
        for (size_t i = 0; i < len; i++)
            out[i] = msg_byte(0, seq, i);
        if (onic_xport_send(j->x, 1, &seq, sizeof(seq), out, len) != ONIC_OK ||
            onic_xport_send(j->x, 0, &seq, sizeof(seq), out, len) != ONIC_OK)
            j->bad++;
    }
}

static void on_rma(void *arg, void *ctx, onic_status_t status)
{
    job_t *j = arg;

    j->reads_done++;
    j->bad += ctx != j || status != ONIC_OK;
}

/* refill's signals, SIGUSR1 with a value, so that neither process calls
 * into onic while it waits for the other: 1 once it came, 0 after 20 s. */
static int signal_wait(int *value_p)
{
    sigset_t set;
    siginfo_t info;
    struct timespec limit = {20, 0};

    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    if (sigtimedwait(&set, &info, &limit) != SIGUSR1)
        return 0;
    *value_p = info.si_value.sival_int;
    return 1;
}

static int signal_send(pid_t pid, int value)
{
    union sigval v = {.sival_int = value};

    return pid > 0 && sigqueue(pid, SIGUSR1, v) == 0;
}

static void close_held(int sig)
{
    static const char msg[] = "xport_job: rank 0: closing its endpoint has not returned after "
                              "20 s: it waits for a peer that left\n";

    (void)sig;
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

/* Blocking receive: spin, yield, then sleep until a sender wakes us. */
/* Until expect messages came and what this rank sent has left (a send
 * that found no room keeps its message for later polls). */
static void wait_until(onic_xport_t *x, const job_t *j, uint64_t expect)
{
    while (j->received < expect)
        onic_xport_wait(x, UINT64_MAX);
    while (onic_xport_backlog(x) > 0)
        onic_xport_wait(x, 1000000);
}

static int send_stream(onic_xport_t *x, job_t *j, uint32_t peer, uint64_t seq)
{
    uint8_t payload[256];
    size_t len = msg_len(seq);

    for (size_t i = 0; i < len; i++)
        payload[i] = msg_byte(j->rank, seq, i);
    return onic_xport_send(x, peer, &seq, sizeof(seq), payload, len) == ONIC_OK;
}

/* A job of up to 100,000 messages needs a few seconds; one that has not
 * ended after 100 s has lost a message, a credit or a wake-up inside the
 * transport, which the test cannot see but by a limit: it fails here,
 * rather than at onicrun's. Larger jobs (a million messages through a
 * tiny ring: 20 s on a quiet machine) keep onicrun's limit alone. */
static void on_watchdog(int sig)
{
    static const char msg[] = "xport_job: not done after 100 s (it needs a few): a message, "
                              "credit or wake-up lost\n";

    (void)sig;
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to say */
    }
    _exit(1);
}

int main(int argc, char **argv)
{
    onic_config_t cfg;
    onic_xport_params_t p = {0};
    onic_xport_t *x;
    job_t j = {0};
    const char *mode = argc > 1 ? argv[1] : "fanin";
    uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000;
    unsigned passed = 0, failed = 0;
    const char *bundle_env = getenv("XPORT_JOB_BUNDLE");
    int bundle = bundle_env != NULL && strcmp(bundle_env, "1") == 0, streamed = 0;
    uint64_t bundled;

    if (n <= 100000) {
        signal(SIGALRM, on_watchdog);
        alarm(100);
    }
    if (onic_config_read(&cfg) != ONIC_OK ||
        (cfg.jobid[0] == '\0' && strcmp(mode, "reopen") != 0)) {
        fprintf(stderr, "xport_job: run me with onicrun\n");
        return 2;
    }
    j.rank = cfg.rank;
    j.size = cfg.size;
    j.next_seq = calloc(j.size, sizeof(*j.next_seq));
    p.size = 0; /* from the launcher: onicrun's shm, or ofi with ONIC_XPORT=ofi */
    p.recv_cb = on_message;
    p.rma_cb = on_rma;
    p.cb_arg = &j;
    p.cfg = &cfg;
    if (j.next_seq == NULL || onic_xport_open(&p, &x) != ONIC_OK) {
        fprintf(stderr, "xport_job: rank %u cannot open its endpoint\n", j.rank);
        return 1;
    }
    if (strcmp(mode, "reopen") == 0) {
        onic_xport_close(x);
        if (onic_xport_open(&p, &x) != ONIC_OK) {
            fprintf(stderr, "xport_job: rank %u cannot open its endpoint again\n", j.rank);
            return 1;
        }
        mode = "fanin";
    }
    /* The launcher's numbering (cfg has onicrun's only). */
    j.rank = onic_xport_rank(x);
    j.size = onic_xport_size(x);
    free(j.next_seq); /* nothing is delivered before the first poll */
    if ((j.next_seq = calloc(j.size, sizeof(*j.next_seq))) == NULL)
        return 1;
    if (onic_xport_max_payload(x) < max_len)
        max_len = onic_xport_max_payload(x);
    j.x = x;
    if (bundle && onic_xport_bundle(x, 1) != ONIC_OK)
        failed++;

    if (strcmp(mode, "fanin") == 0) {
        uint64_t expect = j.rank == 0 ? n * (j.size - 1) : 0;
        streamed = j.rank != 0;
        if (j.rank != 0)
            for (uint64_t s = 0; s < n; s++)
                failed += !send_stream(x, &j, 0, s);
        else if (bundle)
            usleep(200000);
        wait_until(x, &j, expect);
        for (uint32_t r = 1; j.rank == 0 && r < j.size; r++) {
            if (j.next_seq[r] == n)
                passed++;
            else
                failed++;
        }
    } else if (strcmp(mode, "flood") == 0) {
        streamed = 1;
        for (uint64_t s = 0; s < n; s++)
            for (uint32_t r = 0; r < j.size; r++)
                failed += !send_stream(x, &j, (j.rank + r) % j.size, s);
        wait_until(x, &j, n * j.size);
        for (uint32_t r = 0; r < j.size; r++) {
            if (j.next_seq[r] == n)
                passed++;
            else
                failed++;
        }
    } else if (strcmp(mode, "pingpong") == 0) {
        for (uint64_t s = 0; s < n && j.rank < 2; s++) {
            if (j.rank == 0) {
                failed += !send_stream(x, &j, 1, s);
                wait_until(x, &j, s + 1);
            } else {
                wait_until(x, &j, s + 1);
                if (s % 50 == 0)
                    usleep(2000); /* long enough for rank 0 to go to sleep */
                failed += !send_stream(x, &j, 0, s);
            }
        }
        if (j.rank == 0) {
            /* Rank 0 slept (the late answers see to it) and every sleep was
             * ended by its peer: a wake-up lost is a sleep that ran to its
             * 100 ms re-check, however fast or slow the machine is. */
            /* (A sender that never wakes leaves every sleep to its timer
             * with the word unmoved: most sleeps woken rules that out.) */
            const char *demote = getenv("ONIC_SHM_DEMOTE");
            uint64_t demoted = onic_xport_demoted(x);
            if (j.next_seq[1] == n && futex_woken + futex_moved > futex_timed_late &&
                futex_timed_out == 0)
                passed++;
            else
                failed++;
            /* Each message of several slots finds the peer waiting for it
             * (it took everything before): ONIC_SHM_DEMOTE=on pushes some,
             * off none. */
            if (demote != NULL && strcmp(demote, "on") == 0 && demoted == 0) {
                fprintf(stderr, "rank 0: ONIC_SHM_DEMOTE=on, yet no message pushed\n");
                failed++;
            } else if (demote != NULL && strcmp(demote, "off") == 0 && demoted > 0) {
                fprintf(stderr, "rank 0: ONIC_SHM_DEMOTE=off, yet %llu messages pushed\n",
                        (unsigned long long)demoted);
                failed++;
            }
            fprintf(futex_timed_out > 0 || futex_woken + futex_moved <= futex_timed_late
                        ? stderr : stdout,
                    "rank 0: %lu sleeps woken, %lu not begun (woken already), %lu ended by "
                    "the re-check timer after the peer answered (lost wake-ups), %lu before "
                    "it answered (a slow peer)\n",
                    futex_woken, futex_moved, futex_timed_out, futex_timed_late);
        } else if (j.rank == 1) {
            if (j.next_seq[0] == n)
                passed++;
            else
                failed++;
        }
    } else if (strcmp(mode, "echo") == 0) {
        j.echo = 1;
        streamed = j.rank == 1;
        if (j.rank == 1) {
            for (uint64_t s = 0; s < n; s++)
                failed += !send_stream(x, &j, 0, s);
            wait_until(x, &j, n);
        } else if (j.rank == 0) {
            wait_until(x, &j, 2 * n); /* n from rank 1, n from itself */
        }
        if (j.rank < 2) {
            if (j.next_seq[1 - j.rank] == n && (j.rank == 1 || j.next_seq[0] == n))
                passed++;
            else
                failed++;
        }
    } else if (strcmp(mode, "rmaorder") == 0) {
        static uint8_t region[16 * 256];
        uint64_t senders = j.size - 1, ok = 1;
        j.rmaorder = 1;
        j.keys = calloc(j.size, sizeof(*j.keys));
        failed += j.keys == NULL;
        if (j.rank > 0 && j.keys != NULL) {
            uint64_t tag = SEQ_KEY;
            onic_xport_mkey_t key;
            failed += onic_xport_mem_reg(x, region, sizeof(region), &key) != ONIC_OK ||
                      onic_xport_send(x, 0, &tag, sizeof(tag), &key, sizeof(key)) != ONIC_OK;
            for (uint64_t s = 0; s < n; s++)
                failed += !send_stream(x, &j, 0, s);
            wait_until(x, &j, 1); /* rank 0's word that its reads are over */
            ok = j.next_seq[0] == 1 && j.reads == 0;
        } else if (j.keys != NULL) {
            wait_until(x, &j, senders * (n + 1));
            while (j.reads_done < j.reads)
                onic_xport_wait(x, 1000000);
            for (uint32_t r = 1; r < j.size; r++) {
                failed += !send_stream(x, &j, r, 0);
                ok &= j.next_seq[r] == n;
            }
            wait_until(x, &j, senders * (n + 1));
            ok &= j.reads == senders * n && j.reads_done == j.reads;
        }
        if (ok)
            passed++;
        else
            failed++;
    } else if (strcmp(mode, "crossreply") == 0) {
        static uint8_t req[1024];
        j.cross = 1;
        for (uint64_t r = 0; r < n && j.rank < 2; r++) {
            uint64_t tag = UINT64_MAX; /* a request; replies carry their number */
            failed += onic_xport_send(x, 1 - j.rank, &tag, sizeof(tag), req, sizeof(req)) !=
                      ONIC_OK;
        }
        usleep(200000); /* both rings full of requests before either side polls */
        while (j.rank < 2 && (j.replies < n || j.requests < n))
            onic_xport_wait(x, UINT64_MAX);
        if (j.rank < 2) {
            if (j.replies == n && j.requests == n)
                passed++;
            else
                failed++;
        }
    } else if (strcmp(mode, "stall") == 0) {
        /* In a bundle, connected first: rank 0's messages are then held
         * (bundled) when rank 1 stops taking them, and must be dropped with
         * an error when it turns unreachable, not waited for. */
        uint64_t s0 = 0;
        if (bundle && j.rank == 0)
            failed += !send_stream(x, &j, 1, s0++);
        if (bundle && j.rank == 1)
            wait_until(x, &j, 1);
        if (j.rank == 0) {
            uint64_t t0 = onic_time_ns(), s;
            onic_status_t st = ONIC_OK;
            double secs;
            fprintf(stderr, "(an error about rank 1 is expected next)\n");
            for (s = s0; s < n && st == ONIC_OK; s++)
                st = send_stream(x, &j, 1, s) ? ONIC_OK : ONIC_ERR_IO;
            secs = (double)(onic_time_ns() - t0) / 1e9;
            if (st != ONIC_OK || secs >= 1.0) {
                failed++;
                fprintf(stderr, "rank 0: %llu sends to a peer outside onic returned %d after "
                        "%.1f s (each must return at once)\n", (unsigned long long)s, (int)st,
                        secs);
            }
            while (st == ONIC_OK && onic_time_ns() - t0 < 5000000000ull) {
                onic_xport_wait(x, 10000000);
                st = send_stream(x, &j, 1, s++) ? ONIC_OK : ONIC_ERR_IO;
            }
            secs = (double)(onic_time_ns() - t0) / 1e9;
            if (st == ONIC_ERR_IO && secs < 3.0 && onic_xport_backlog(x) == 0) {
                passed++;
            } else {
                failed++;
                fprintf(stderr, "rank 0: %llu sends ended with status %d after %.1f s, %llu "
                        "messages kept\n", (unsigned long long)s, (int)st, secs,
                        (unsigned long long)onic_xport_backlog(x));
            }
            while (j.received < 1 && onic_time_ns() - t0 < 15000000000ull)
                onic_xport_wait(x, 10000000);
            if (j.received == 1)
                passed++;
            else
                failed++;
        } else if (j.rank == 1) {
            sleep(4);
            failed += !send_stream(x, &j, 0, 0);
        }
    } else if (strcmp(mode, "refill") == 0 && j.size == 2) {
        /* Rank 0 fills rank 1's ring (empty messages, a slot each) and
         * keeps the rest; rank 1, not reading meanwhile, is told how many
         * fit, reads exactly those and says so; then rank 0, which has not
         * called onic since, sends one more: sending what was kept leaves
         * room for it, so it leaves at once and nothing is kept. Every
         * message arrives, in order. */
        uint32_t peer = 1 - j.rank;
        pid_t pid = getpid();
        sigset_t set;
        uint64_t seq = SEQ_PID, kept = 0;
        int fits = 0, ok;
        max_len = 0;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigprocmask(SIG_BLOCK, &set, NULL);
        /* Rank 1 sends its id only once it has rank 0's, and then stops
         * reading until told. */
        if (j.rank == 0)
            failed += onic_xport_send(x, peer, &seq, sizeof(seq), &pid, sizeof(pid)) != ONIC_OK;
        while (j.peer_pid == 0)
            onic_xport_wait(x, 10000000);
        if (j.rank == 1)
            failed += onic_xport_send(x, peer, &seq, sizeof(seq), &pid, sizeof(pid)) != ONIC_OK;
        if (j.rank == 0) {
            for (uint64_t s = 0; s < n; s++)
                failed += !send_stream(x, &j, 1, s);
            kept = onic_xport_backlog(x);
            fits = (int)(n - kept);
            /* What is kept, and one more, fit in the ring once it is empty. */
            ok = kept > 0 && kept + 1 <= (uint64_t)fits;
            if (!ok)
                fprintf(stderr, "rank 0: of %llu messages %llu were kept; run with "
                        "ONIC_SHM_RING_SLOTS at least 2 + N / 2\n", (unsigned long long)n,
                        (unsigned long long)kept);
            ok = ok && signal_send(j.peer_pid, fits) && signal_wait(&fits);
            failed += !ok;
            if (ok) {
                failed += !send_stream(x, &j, 1, n);
                if (onic_xport_backlog(x) == 0) {
                    passed++;
                } else {
                    failed++;
                    fprintf(stderr, "rank 0: rank 1 read all it had; of the %llu messages "
                            "kept and one more, %llu are still kept\n",
                            (unsigned long long)kept, (unsigned long long)onic_xport_backlog(x));
                }
            }
            wait_until(x, &j, 1);
        } else {
            ok = signal_wait(&fits);
            while (ok && j.next_seq[0] < (uint64_t)fits)
                onic_xport_wait(x, 10000000);
            ok = ok && signal_send(j.peer_pid, 0);
            failed += !ok;
            if (ok) {
                wait_until(x, &j, n + 2);
                if (j.next_seq[0] == n + 1)
                    passed++;
                else
                    failed++;
            }
        }
    } else if (strcmp(mode, "leave") == 0) {
        /* Rank 1 leaves without reading; what rank 0 keeps for it can
         * never go. */
        if (j.rank == 0) {
            for (uint64_t s = 0; s < n; s++)
                failed += !send_stream(x, &j, 1, s);
            if (onic_xport_backlog(x) > 0) {
                passed++;
            } else {
                failed++;
                fprintf(stderr, "rank 0: %llu messages to a peer that reads none, none kept\n",
                        (unsigned long long)n);
            }
            signal(SIGALRM, close_held);
            alarm(20);
        }
    } else if (strcmp(mode, "gone") == 0) {
        /* In a bundle: rank 1 takes one message and exits; rank 0 then
         * sends it one more, which is held (its second in the bundle),
         * and polls until the held one is dropped with rank 1: the end
         * of the bundle must then fail, though the drop happened in a
         * poll, not at the end. */
        if (j.rank == 0) {
            uint64_t t0;
            failed += !send_stream(x, &j, 1, 0);
            wait_until(x, &j, 1); /* its answer */
            usleep(1000000);      /* rank 1 is gone */
            fprintf(stderr, "(errors about rank 1 are expected next)\n");
            t0 = onic_time_ns();
            for (uint64_t s = 1; onic_time_ns() - t0 < 3000000000ull; s++) {
                if (!send_stream(x, &j, 1, s))
                    break;
                onic_xport_wait(x, 10000000);
            }
            if (onic_xport_bundle(x, 0) == ONIC_ERR_IO) {
                passed++;
            } else {
                failed++;
                fprintf(stderr, "rank 0: a bundle whose held messages were lost ended well\n");
            }
            bundle = 0;
        } else if (j.rank == 1) {
            uint64_t t0;
            wait_until(x, &j, 1);
            failed += !send_stream(x, &j, 0, 0);
            t0 = onic_time_ns(); /* long enough for the answer to leave */
            while (onic_time_ns() - t0 < 200000000ull)
                onic_xport_wait(x, 10000000);
            printf("xport_job rank 1: exits at once\n");
            fflush(stdout);
            _exit(0);
        }
    } else if (strcmp(mode, "errors") == 0) {
        static uint8_t big[ONIC_XPORT_MID_CAP + 1];
        uint8_t hdr[64] = {0};
        size_t max = onic_xport_max_payload(x);
        /* One lane message carries 2 KiB (less on a ring of fewer slots);
         * a message up to ONIC_SHM_MID_MAX goes in pieces above that. */
        unsigned slots = onic_config_shm_ring_slots(&cfg, j.size);
        size_t frame = (slots - 1) * 64u < 2048 ? (slots - 1) * 64u : 2048;
        int ok[4];
        fprintf(stderr, "(three errors are expected next)\n");
        ok[0] = onic_xport_send(x, j.size, hdr, 8, NULL, 0) == ONIC_ERR_INVALID_PARAM;
        ok[1] = onic_xport_send(x, 0, hdr, 8, big, max + 1) == ONIC_ERR_INVALID_PARAM;
        ok[2] = onic_xport_send(x, 0, hdr, ONIC_XPORT_USER_HDR + 1, NULL, 0) ==
                ONIC_ERR_INVALID_PARAM;
        ok[3] = max == (cfg.shm_mid_max > frame ? cfg.shm_mid_max : frame);
        for (int i = 0; i < 4; i++) {
            if (ok[i])
                passed++;
            else
                failed++;
        }
    } else {
        fprintf(stderr, "xport_job: unknown mode %s\n", mode);
        return 2;
    }
    if (bundle) {
        if (onic_xport_bundle(x, 0) != ONIC_OK)
            failed++;
        if (streamed && onic_xport_bundled(x) == 0) {
            failed++;
            fprintf(stderr, "rank %u: no message was bundled with another\n", j.rank);
        }
    }
    if (j.bad > 0)
        failed++;
    else
        passed++;
    if (onic_xport_drops(x) != 0)
        failed++;
    /* Everyone is done receiving before anyone unmaps: a late sender's
     * credits must still come back. */
    bundled = onic_xport_bundled(x);
    onic_xport_close(x);
    alarm(0);
    printf("xport_job rank %u: %u passed, %u failed (%llu messages received, %llu sent "
           "bundled)\n", j.rank, passed, failed, (unsigned long long)j.received,
           (unsigned long long)bundled);
    free(j.next_seq);
    free(j.keys);
    return failed == 0 ? 0 : 1;
}
