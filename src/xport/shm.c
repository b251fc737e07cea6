/* shm: the processes of a job on one node. Each process owns one region of
 * nameless shared memory (memfd_create, base/shmfd.h): a header line, one
 * lane per possible sender (shm_lane.h), so every sender writes its own lane
 * and the receiver polls only its region, then one bounce buffer per
 * possible sender (shm_bounce.h) for RMA data.
 *
 * Opening: create and initialise the own region, hand its descriptor to the
 * node's rank 0 over a Unix socket and get every region's back (the
 * exchange, below: SCM_RIGHTS, the peers' credentials checked), map them,
 * and close the descriptors: the job's memory never has a name, in
 * /dev/shm or anywhere, and goes with the last mapping however the
 * processes end.
 *
 * RMA goes by CMA (cma.h, one copy, needs nothing from the peer) or through
 * the bounce buffers (two copies at once, needs the peer to poll): a read
 * sends the peer a request in our lane and the data comes back in the peer's
 * bounce buffer in our region; a write streams data into our bounce buffer
 * in the peer's region and learns from it when the data landed. Which one:
 * ONIC_SHM_RMA, by size in auto mode, and the copy wherever CMA failed its
 * probe.
 *
 * A large CMA operation is cooperative (ONIC_SHM_ASSIST_MIN): the
 * initiator opens the one assist line at the end of its region
 * (shm_assist_t), tells the owner of the other memory so (ASSIST), and both
 * take chunks (half the operation, from 32 KiB to 4 MiB) in turn: for a
 * read, the initiator by process_vm_readv and the owner -- if it polls
 * meanwhile -- by process_vm_writev into the initiator, and the other way
 * round for a write. One copy each, on two cores: here 10.7 GB/s alone,
 * about 20 together at 1 MiB. The initiator waits for the chunks the owner
 * took before it completes the operation. */
#include "xport/cma.h"
#include "xport/shm_bounce.h"
#include "xport/shm_lane.h"
#include "xport/transport.h"
#include "base/clock.h"
#include "base/copy.h"
#include "base/cpu.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/shmfd.h"
#include "boot/boot.h"
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC          0x6f6e69632d73686dull /* "onic-shm" */
#define SHM_OPEN_TIMEOUT_NS (30ull * 1000000000ull)

/* Kinds of shm's own messages (ONIC_XPORT_KIND_USER is the layer above's). */
enum { SHM_KIND_READ_REQ = 1, SHM_KIND_ASSIST = 2, SHM_KIND_MAX = SHM_KIND_ASSIST };

/* The user header of a READ_REQ: send len bytes at (key, roff) of your
 * memory into your bounce buffer in my region, tagged with my op id.
 * Of an ASSIST: help with my operation on len bytes at (key, roff) of your
 * memory; op is my assist line's generation, bit 63 set for a write. */
typedef struct shm_read_req {
    uint64_t          op;
    onic_xport_mkey_t key;
    uint64_t          roff, len;
} shm_read_req_t;

static_assert(sizeof(shm_read_req_t) == ONIC_XPORT_USER_HDR, "a read request fills a header");

typedef struct shm_region_hdr {
    uint64_t magic;     /* written last, with release: the region is ready */
    uint32_t size;      /* processes in the job */
    uint32_t nslots;    /* slots per lane */
    uint32_t attached;  /* peers that have mapped this region */
    uint32_t sleeping;  /* the owner's threads (about to be) asleep on `wake` */
    uint32_t wake;      /* futex word: senders bump it to wake a sleeper */
    uint32_t pid;       /* the owner, for CMA */
    uint64_t nonce;     /* random; the CMA probe reads it at nonce_addr */
    uint64_t nonce_addr;
    uint32_t chunk, nchunks;  /* bounce buffer geometry */
    uint32_t fences;    /* the owner issues a global membarrier before it sleeps */
    uint32_t mid_max;   /* the largest message its lanes take (in fragments above a frame) */
} shm_region_hdr_t;

static_assert(sizeof(shm_region_hdr_t) <= ONIC_SHM_SLOT, "the region header is one line");

/* A cooperative operation's chunk: half of it (each process takes one, the
 * fewest system calls), within these bounds. Measured here: 1 MiB reads in
 * 512 KiB chunks 20.7 GB/s, in 128 KiB chunks 15.3. */
#define SHM_ASSIST_CHUNK_MIN (32u << 10)
#define SHM_ASSIST_CHUNK_MAX (4u << 20)
#define SHM_ASSIST_WAKE_MIN (1u << 20) /* operations this long wake a sleeping owner */
#define SHM_ASSIST_HELP_MAX (16u << 20) /* bytes a helper copies per ASSIST: bounds its poll */

/* A cooperative operation's line, in the initiator's region; its length
 * and direction travel in the ASSIST itself. Chunks are claimed by
 * compare-and-swap on `next`, whose high half is the operation's
 * generation, so a helper that comes late finds another generation, or
 * every chunk taken, and takes nothing. The helper adds one to `done` per
 * chunk it finished (after the data), and stores the generation in
 * `failed` first if its copy failed, or if it cannot reach the initiator at
 * all. Every word is accessed atomically: both processes touch it. */
typedef struct shm_assist {
    uint64_t next;    /* generation << 32 | next chunk to take */
    uint64_t done;    /* chunks the helper finished */
    uint64_t failed;  /* a generation the helper could not (or cannot) copy for */
    uint64_t local;   /* the initiator's address */
    uint64_t pad[4];
} shm_assist_t;

static_assert(sizeof(shm_assist_t) == ONIC_SHM_SLOT, "the assist line is one line");

/* A copy-path RMA operation this process started (a record of s->ops,
 * named on the wire by its slot id). */
typedef struct shm_rma_op {
    uint8_t  *local;
    uint64_t  len, done;
    void     *ctx;
    uint32_t  peer;
    uint8_t   write;
} shm_rma_op_t;

/* A mid-size message to one peer that left only in part (onic_shm_tx_mid):
 * the rest waits in the front end's backlog as the peer's first record,
 * and the next send to that peer is that record (the front end sends
 * nothing to a peer past its backlog); `skip` of its bytes have left. */
typedef struct shm_mid_tx {
    size_t  skip;
    uint8_t cont;  /* the next send to this peer is the rest of a message */
} shm_mid_tx_t;

typedef struct shm_state {
    uint32_t       rank, size, nslots;
    uint32_t       chunk;        /* bytes in a bounce buffer's chunk */
    size_t         region_bytes, bounce_bytes, bounce_off, assist_off;
    size_t         frame;        /* the most one lane message carries */
    size_t         max_payload;  /* the most a message carries: frame, or mid_max above it */
    shm_mid_tx_t  *mid;          /* by peer */
    void         **regions;  /* by rank; regions[rank] is ours */
    onic_shm_tx_t *tx;       /* by peer: our lane in its region */
    onic_shm_rx_t *rx;       /* by peer: its lane in our region */
    onic_shm_btx_t *btx;     /* by peer: our bounce buffer in its region */
    onic_shm_brx_t *brx;     /* by peer: its bounce buffer in our region */
    pid_t         *pids;     /* by peer; 0 where CMA failed its probe */
    uint32_t      *window;   /* by peer: copy operations in flight */
    uint32_t       next_rx;  /* where polling starts, for fairness */
    int            fences;   /* we issue MEMBARRIER_CMD_GLOBAL_EXPEDITED before sleeping */
    int            fenced;   /* membarrier can interrupt us: our stores may be plain */
    uint64_t       drops;
    unsigned       rma_mode; /* onic_config_shm_rma_t */
    uint64_t       cma_min;
    /* Some RMA may go through the bounce buffers, whose window can be full:
     * a start then waits inside a callback, polling lanes that set messages
     * aside -- and such a poll stops at a placed message's fragments, so no
     * message is placed (shm_place). */
    int            rma_may_wait;
    uint64_t       assist_min;  /* ONIC_SHM_ASSIST_MIN; 0: never */
    uint32_t       assist_gen;  /* of our assist line's last operation */
    uint8_t       *no_assist;   /* by peer: it could not help once; do not ask again */
    uint64_t       assisted;    /* bytes peers copied for our operations */
    onic_slots_t   ops;      /* shm_rma_op_t */
    onic_status_t (*full)(void *full_arg, uint32_t peer, const void *user_hdr, size_t user_len,
                          const void *payload, size_t len); /* tp->full */
    void          *full_arg;
    const onic_xport_mreg_t *mreg;
    onic_xport_notify_t     *notify;
    const uint32_t *ranks;   /* tp->ranks: by peer, its rank in the job; NULL: the same */
    unsigned        full_tries; /* sends that found no room, for the audit */
} shm_state_t;

/* --- fail-stop --------------------------------------------------------- */

/* The job rank of shm's peer r, for messages. */
static uint32_t shm_job_rank(const shm_state_t *s, uint32_t r)
{
    return s->ranks != NULL ? s->ranks[r] : r;
}

/* Corrupt data in a lane (what the lane's checks found: rx->bad or tx->bad):
 * one line naming the lane, the field and the value, then the job stops as
 * if this process had died. Nothing of the lane is read again. */
static _Noreturn __attribute__((cold, noinline)) void
shm_lane_corrupt(const shm_state_t *s, uint32_t peer, int we_send, unsigned bad, uint64_t value)
{
    uint32_t me = shm_job_rank(s, s->rank), them = shm_job_rank(s, peer);
    uint32_t from = we_send ? me : them, to = we_send ? them : me;
    const onic_shm_tx_t *tx = &s->tx[peer];
    const onic_shm_rx_t *rx = &s->rx[peer];
    char what[256];

    switch (bad) {
    case ONIC_SHM_BAD_KIND:
        snprintf(what, sizeof(what), "kind %llu, which is none this transport knows",
                 (unsigned long long)value);
        break;
    case ONIC_SHM_BAD_LEN:
        snprintf(what, sizeof(what), "payload length %llu, over the %zu bytes a message may "
                 "carry", (unsigned long long)value, s->frame);
        break;
    case ONIC_SHM_BAD_USER_LEN:
        snprintf(what, sizeof(what), "header length %llu, over the %d bytes of a header",
                 (unsigned long long)value, ONIC_XPORT_USER_HDR);
        break;
    case ONIC_SHM_BAD_SLOTS:
        snprintf(what, sizeof(what), "slot count %llu, which is not what the message's lengths "
                 "take (a ring of %u slots)", (unsigned long long)value, s->nslots);
        break;
    case ONIC_SHM_BAD_SEQ:
        snprintf(what, sizeof(what), "sequence number %llu where %llu is due (a gap: an entry "
                 "of a later lap)", (unsigned long long)value, (unsigned long long)rx->head);
        break;
    case ONIC_SHM_BAD_CREDIT:
        snprintf(what, sizeof(what), "consumed count %llu, outside the %llu to %llu slots sent "
                 "and not yet returned (credits never sent)", (unsigned long long)value,
                 (unsigned long long)tx->credit, (unsigned long long)tx->tail);
        break;
    case ONIC_SHM_BAD_REPLAY:
        snprintf(what, sizeof(what), "ready word %#llx already in the slot of sequence number "
                 "%llu before the sender wrote it (a replayed or forged entry)",
                 (unsigned long long)value, (unsigned long long)tx->tail);
        break;
    case ONIC_SHM_BAD_MID:
        snprintf(what, sizeof(what), "a mid-size message's fragment of kind %#llx out of place "
                 "(%llu of %llu bytes in)", (unsigned long long)value,
                 (unsigned long long)rx->mid_got, (unsigned long long)rx->mid_total);
        break;
    case ONIC_SHM_BAD_MID_LEN:
        snprintf(what, sizeof(what), "a mid-size message's length %llu, outside %zu to %zu "
                 "bytes or past the message's end (%llu of %llu bytes in)",
                 (unsigned long long)value, s->frame + 1, s->max_payload,
                 (unsigned long long)rx->mid_got, (unsigned long long)rx->mid_total);
        break;
    case ONIC_SHM_BAD_MID_MEM:
        snprintf(what, sizeof(what), "no memory to receive a mid-size message of %llu bytes "
                 "(set ONIC_SHM_MID_MAX lower)", (unsigned long long)value);
        break;
    case ONIC_SHM_BAD_LOST:
        snprintf(what, sizeof(what), "ready word %#llx in the slot of sequence number %llu, "
                 "which the sender wrote and the receiver has not taken (overwritten)",
                 (unsigned long long)value, (unsigned long long)tx->credit);
        break;
    default:
        snprintf(what, sizeof(what), "transport message of kind %llu malformed",
                 (unsigned long long)value);
        break;
    }
    onic_log_fail_stop(ONIC_EXIT_CORRUPT, "shm: corrupt data in the lane from rank %u to rank "
                       "%u (seen by rank %u): %s; stopping the job", from, to, me, what);
}

/* The same for a bounce buffer: `ours` is the buffer we produce into (in
 * the peer's region), else the peer's in ours. */
static _Noreturn __attribute__((cold, noinline)) void
shm_bounce_corrupt(const shm_state_t *s, uint32_t peer, int ours, const char *field,
                   uint64_t value)
{
    uint32_t me = shm_job_rank(s, s->rank), them = shm_job_rank(s, peer);

    onic_log_fail_stop(ONIC_EXIT_CORRUPT, "shm: corrupt data in the RMA bounce buffer from "
                       "rank %u to rank %u (seen by rank %u): %s %llu makes no sense there; "
                       "stopping the job", ours ? me : them, ours ? them : me, me,
                       field != NULL ? field : "chunk", (unsigned long long)value);
}

static void shm_rx_check(const shm_state_t *s, uint32_t peer)
{
    if (__builtin_expect(s->rx[peer].broken, 0))
        shm_lane_corrupt(s, peer, 0, s->rx[peer].bad, s->rx[peer].bad_value);
}

static void shm_tx_check(const shm_state_t *s, uint32_t peer)
{
    if (__builtin_expect(s->tx[peer].bad != ONIC_SHM_BAD_NONE, 0))
        shm_lane_corrupt(s, peer, 1, s->tx[peer].bad, s->tx[peer].bad_value);
}

/* Where this process waits: every lane audited (onic_shm_tx_audit,
 * onic_shm_rx_audit), so corruption that leaves a lane waiting for ever
 * (a ready word overwritten, a gap) stops the job instead. A few loads per
 * peer, paid only before sleeping and now and then while short of room. */
static void shm_audit(shm_state_t *s)
{
    for (uint32_t r = 0; r < s->size; r++) {
        if (r == s->rank)
            continue;
        if (!onic_shm_rx_audit(&s->rx[r]))
            shm_rx_check(s, r);
        if (!onic_shm_tx_audit(&s->tx[r]))
            shm_tx_check(s, r);
    }
}

static onic_shm_lane_t *shm_lane(void *region, uint32_t nslots, uint32_t sender)
{
    return (onic_shm_lane_t *)((uint8_t *)region + sizeof(shm_region_hdr_t) +
                               (size_t)sender * onic_shm_lane_size(nslots));
}

static void *shm_bounce(const shm_state_t *s, void *region, uint32_t sender)
{
    return (uint8_t *)region + s->bounce_off + (size_t)sender * s->bounce_bytes;
}

static shm_assist_t *shm_assist(const shm_state_t *s, void *region)
{
    return (shm_assist_t *)((uint8_t *)region + s->assist_off);
}

static void shm_endpoint_close(void *state)
{
    shm_state_t *s = state;

    if (s == NULL)
        return;
    for (uint32_t r = 0; s->regions != NULL && r < s->size; r++)
        if (s->regions[r] != NULL)
            munmap(s->regions[r], s->region_bytes);
    for (uint32_t r = 0; s->btx != NULL && r < s->size; r++)
        onic_shm_btx_fini(&s->btx[r]);
    for (uint32_t r = 0; s->rx != NULL && r < s->size; r++)
        onic_shm_rx_fini(&s->rx[r]);
    onic_free(s->mid);
    onic_free(s->regions);
    onic_free(s->tx);
    onic_free(s->rx);
    onic_free(s->btx);
    onic_free(s->brx);
    onic_free(s->pids);
    onic_free(s->window);
    onic_free(s->no_assist);
    onic_slots_fini(&s->ops);
    onic_free(s);
}

/* Map peer's region from the descriptor the exchange gave us, once it is
 * initialised with our geometry. */
static onic_status_t shm_attach(shm_state_t *s, int fd, uint32_t peer, uint64_t deadline)
{
    char what[48];
    shm_region_hdr_t *h;

    snprintf(what, sizeof(what), "the region of rank %u", peer);
    if (onic_shmfd_check(fd, s->region_bytes, what) != ONIC_OK) {
        onic_error("shm: set ONIC_SHM_RING_SLOTS, ONIC_SHM_BOUNCE_CHUNK and "
                   "ONIC_SHM_BOUNCE_CHUNKS the same for every process");
        return ONIC_ERR_INVALID_PARAM;
    }
    s->regions[peer] = mmap(NULL, s->region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->regions[peer] == MAP_FAILED) {
        s->regions[peer] = NULL;
        onic_error("shm: cannot map the region of rank %u (%zu bytes): %m", peer, s->region_bytes);
        return ONIC_ERR_NO_MEMORY;
    }
    h = s->regions[peer];
    while (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC) {
        if (onic_time_ns() > deadline) {
            onic_error("shm: the region of rank %u was never initialised", peer);
            return ONIC_ERR_IO;
        }
        sched_yield();
    }
    if (h->size != s->size || h->nslots != s->nslots ||
        h->chunk != ((shm_region_hdr_t *)s->regions[s->rank])->chunk ||
        h->nchunks != ((shm_region_hdr_t *)s->regions[s->rank])->nchunks ||
        h->mid_max != s->max_payload) {
        onic_error("shm: rank %u runs with %u processes, %u ring slots, %u bounce chunks of "
                   "%u bytes and messages of up to %u bytes, this one otherwise; set ONIC_SHM_* "
                   "the same everywhere", peer, h->size, h->nslots, h->nchunks, h->chunk,
                   h->mid_max);
        return ONIC_ERR_INVALID_PARAM;
    }
    __atomic_fetch_add(&h->attached, 1, __ATOMIC_RELEASE);
    return ONIC_OK;
}

/* Our region: nameless shared memory (shmfd.h), mapped, initialised; its
 * descriptor into *fd_p for the exchange. */
static onic_status_t shm_open_region(shm_state_t *s, const onic_config_t *cfg, int *fd_p)
{
    char name[32];
    shm_region_hdr_t *h;
    uint64_t nonce = 0;
    int fd;

    snprintf(name, sizeof(name), "onic-shm-%u", s->rank); /* for /proc/PID/maps only */
    fd = onic_shmfd_create(name, s->region_bytes);
    if (fd < 0)
        return ONIC_ERR_NO_MEMORY;
    s->regions[s->rank] = mmap(NULL, s->region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->regions[s->rank] == MAP_FAILED) {
        s->regions[s->rank] = NULL;
        onic_error("shm: cannot map this process's region (%zu bytes): %m", s->region_bytes);
        close(fd);
        return ONIC_ERR_NO_MEMORY;
    }
    *fd_p = fd;
    if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
        nonce = onic_time_ns() ^ ((uint64_t)getpid() << 32);
    h = s->regions[s->rank];
    /* Each lane's key: a stale slot must not pass for a message by chance. */
    for (uint32_t r = 0; r < s->size; r++) {
        nonce = nonce * 6364136223846793005ull + 1442695040888963407ull;
        shm_lane(h, s->nslots, r)->key = nonce ^ (nonce >> 29);
    }
    h->size = s->size;
    h->nslots = s->nslots;
    h->pid = (uint32_t)getpid();
    h->nonce = nonce | 1;
    h->nonce_addr = (uint64_t)(uintptr_t)&h->nonce;
    h->chunk = s->chunk;
    h->nchunks = cfg->shm_bounce_chunks;
    h->fences = (uint32_t)s->fences;
    h->mid_max = (uint32_t)s->max_payload;
    __atomic_store_n(&h->magic, SHM_MAGIC, __ATOMIC_RELEASE);
    return ONIC_OK;
}

/* The exchange of region descriptors among the node's processes. Rank 0
 * (of the node) listens on an abstract Unix socket named by the token the
 * launcher's store carries (fresh and random for every opening, known only
 * to the job's processes until the socket exists); the others connect and
 * send theirs, and get every descriptor back. Both ends check the peer's
 * credentials as the kernel reports them (SO_PEERCRED): our uid, and the
 * pid the rank it claims to be put in the store. A connection that fails
 * a check is closed and said once; it changes nothing. The socket is
 * closed, and its name gone, once every process of the node has sent. */
#define SHM_XCHG_MAGIC 0x6f6e69632d78636eull /* "onic-xcn" */

typedef struct shm_xchg_msg {
    uint64_t magic;
    uint32_t index;   /* hello: the sender's rank; descriptors: the first one's */
    uint32_t count;   /* hello: processes in the node; descriptors: how many follow */
    uint64_t bytes;   /* hello: region size */
} shm_xchg_msg_t;

/* Leader: one connection's hello, checked; its descriptor into fds[]. 0 if
 * refused (said why), -1 on an error that ends the exchange. */
static int shm_xchg_take(shm_state_t *s, int conn, const pid_t *pids, int *fds, int *conns,
                         uint64_t deadline, unsigned refused)
{
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    shm_xchg_msg_t m;
    size_t len = 0;
    unsigned nfd = 0;
    int fd = -1;
    uint64_t until = onic_time_ns() + 1000000000ull; /* a silent peer holds us a second */

    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) {
        if (refused == 0)
            onic_warn("shm: cannot learn who connected to this node's exchange: %m; refused");
        return 0;
    }
    if (cred.uid != geteuid()) {
        if (refused == 0)
            onic_warn("shm: refused a connection to this node's exchange from pid %d of uid %u "
                  "(not this job's user)", (int)cred.pid, (unsigned)cred.uid);
        return 0;
    }
    if (!onic_shmfd_ready(conn, until < deadline ? until : deadline) ||
        onic_shmfd_recv(conn, &m, sizeof(m), &len, &fd, 1, &nfd, NULL) != ONIC_OK ||
        len != sizeof(m) || nfd != 1 || m.magic != SHM_XCHG_MAGIC || m.index == 0 ||
        m.index >= s->size || cred.pid != pids[m.index] || conns[m.index] >= 0) {
        if (refused == 0)
            onic_warn("shm: refused a connection to this node's exchange from pid %d: not a "
                      "process of this job that has yet to join it", (int)cred.pid);
        if (nfd == 1)
            close(fd);
        return 0;
    }
    if (m.count != s->size || m.bytes != s->region_bytes) {
        onic_error("shm: rank %u opens %u processes' regions of %llu bytes, this one %u of %zu; "
                   "set ONIC_SHM_* the same everywhere", m.index, m.count,
                   (unsigned long long)m.bytes, s->size, s->region_bytes);
        close(fd);
        return -1;
    }
    fds[m.index] = fd;
    conns[m.index] = conn;
    return 1;
}

static onic_status_t shm_xchg_lead(shm_state_t *s, const char *token, const pid_t *pids,
                                   int *fds, uint64_t deadline)
{
    struct sockaddr_un sa;
    socklen_t salen = onic_shmfd_addr(&sa, token, "shm");
    onic_status_t status = ONIC_OK;
    int *conns = onic_malloc(s->size * sizeof(*conns));
    int lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    uint32_t have = 1;
    unsigned refused = 0; /* said once, counted after */

    if (conns == NULL || lsock < 0 || bind(lsock, (struct sockaddr *)&sa, salen) != 0 ||
        listen(lsock, (int)s->size) != 0) {
        onic_error("shm: cannot listen for this node's processes (abstract Unix socket): %m");
        if (lsock >= 0)
            close(lsock);
        onic_free(conns);
        return ONIC_ERR_IO;
    }
    for (uint32_t r = 0; r < s->size; r++)
        conns[r] = -1;
    while (have < s->size && status == ONIC_OK) {
        int conn, took;
        if (!onic_shmfd_ready(lsock, deadline)) {
            onic_error("shm: %u of the node's %u processes did not join its exchange in "
                       "time; are they in another network namespace?", s->size - have, s->size);
            status = ONIC_ERR_IO;
            break;
        }
        conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
            continue;
        took = shm_xchg_take(s, conn, pids, fds, conns, deadline, refused);
        refused += took == 0;
        if (took <= 0)
            close(conn);
        if (took < 0)
            status = ONIC_ERR_INVALID_PARAM;
        have += took > 0;
    }
    close(lsock); /* the name is gone */
    if (refused > 1)
        onic_warn("shm: refused %u connections to this node's exchange in all", refused);
    for (uint32_t r = 1; r < s->size; r++) {
        for (uint32_t first = 0; status == ONIC_OK && first < s->size; first += ONIC_SHMFD_MAX) {
            uint32_t n = s->size - first < ONIC_SHMFD_MAX ? s->size - first : ONIC_SHMFD_MAX;
            shm_xchg_msg_t m = {SHM_XCHG_MAGIC, first, n, s->region_bytes};
            if (onic_shmfd_send(conns[r], &m, sizeof(m), fds + first, n) != ONIC_OK) {
                onic_error("shm: cannot hand the node's regions to rank %u: %m", r);
                status = ONIC_ERR_IO;
            }
        }
        if (conns[r] >= 0)
            close(conns[r]);
    }
    onic_free(conns);
    return status;
}

static onic_status_t shm_xchg_join(shm_state_t *s, const char *token, const pid_t *pids,
                                   int *fds, uint64_t deadline, int stop)
{
    struct sockaddr_un sa;
    socklen_t salen = onic_shmfd_addr(&sa, token, "shm"), clen;
    shm_xchg_msg_t m = {SHM_XCHG_MAGIC, s->rank, s->size, s->region_bytes};
    struct ucred cred;
    uint32_t got = 0;
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

    if (sock < 0) {
        onic_error("shm: cannot make a Unix socket: %m");
        return ONIC_ERR_IO;
    }
    if (stop)
        raise(SIGSTOP); /* ONIC_SHM_XCHG_STOP: a test holds the window open */
    /* The node's rank 0 may not listen yet. */
    while (connect(sock, (struct sockaddr *)&sa, salen) != 0) {
        if ((errno != ECONNREFUSED && errno != ENOENT && errno != EAGAIN && errno != EINTR) ||
            onic_time_ns() > deadline) {
            onic_error("shm: cannot reach the node's rank 0 to exchange shared memory: %m; is "
                       "it running, in the same network namespace?");
            close(sock);
            return ONIC_ERR_IO;
        }
        usleep(1000);
    }
    clen = sizeof(cred);
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.uid != geteuid() ||
        cred.pid != pids[0]) {
        onic_error("shm: the node's exchange is held by pid %d (uid %u), not by its rank 0 "
                   "(pid %d); refusing it", (int)cred.pid, (unsigned)cred.uid, (int)pids[0]);
        close(sock);
        return ONIC_ERR_IO;
    }
    if (onic_shmfd_send(sock, &m, sizeof(m), &fds[s->rank], 1) != ONIC_OK) {
        onic_error("shm: cannot hand this process's region to the node's rank 0: %m");
        close(sock);
        return ONIC_ERR_IO;
    }
    while (got < s->size) {
        int part[ONIC_SHMFD_MAX];
        unsigned nfd = 0;
        size_t len = 0;
        onic_status_t st = onic_shmfd_ready(sock, deadline)
                               ? onic_shmfd_recv(sock, &m, sizeof(m), &len, part, ONIC_SHMFD_MAX,
                                                 &nfd, NULL)
                               : ONIC_ERR_IO;
        if (st != ONIC_OK || len != sizeof(m) || m.magic != SHM_XCHG_MAGIC || m.index != got ||
            m.count != nfd || nfd == 0 || got + nfd > s->size) {
            onic_error("shm: the node's rank 0 ended the exchange of shared memory early (see "
                       "its errors)");
            for (unsigned i = 0; st == ONIC_OK && i < nfd; i++)
                close(part[i]);
            close(sock);
            return ONIC_ERR_IO;
        }
        for (unsigned i = 0; i < nfd; i++, got++) {
            if (got == s->rank)
                close(part[i]); /* our own, back */
            else
                fds[got] = part[i];
        }
    }
    close(sock);
    return ONIC_OK;
}

static uint64_t shm_ns_inode(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

void onic_xport_shm_who(onic_xport_shm_who_t *who)
{
    who->pid = (uint64_t)getpid();
    who->netns = shm_ns_inode("/proc/self/ns/net");
    who->pidns = shm_ns_inode("/proc/self/ns/pid");
}

/* Namespaces a and b differ (both known). */
static int shm_ns_differ(uint64_t a, uint64_t b)
{
    return a != 0 && b != 0 && a != b;
}

/* The pids of the node's processes, as each put it in the store. Processes
 * in another network namespace cannot reach the exchange's abstract socket,
 * and in another pid namespace their pids are not the ones the kernel
 * reports: said at once, rather than after the exchange's 30 s. */
static onic_status_t shm_xchg_pids(shm_state_t *s, const onic_xport_tparams_t *tp, pid_t *pids)
{
    onic_xport_shm_who_t me;

    onic_xport_shm_who(&me);
    for (uint32_t r = 0; r < s->size; r++) {
        uint32_t rank = tp->ranks != NULL ? tp->ranks[r] : r;
        onic_xport_shm_who_t who = {0, 0, 0};
        size_t len = sizeof(who);
        onic_status_t status = tp->boot == NULL
                                   ? ONIC_ERR_INVALID_PARAM
                                   : onic_boot_get(tp->boot, rank, "shm-pid", &who, &len);
        if (status != ONIC_OK || len != sizeof(who) || who.pid == 0 || who.pid > INT32_MAX) {
            onic_error("shm: no pid of rank %u in the launcher's store", rank);
            return ONIC_ERR_IO;
        }
        if (shm_ns_differ(who.netns, me.netns) || shm_ns_differ(who.pidns, me.pidns)) {
            int net = shm_ns_differ(who.netns, me.netns);
            onic_error("shm: rank %u is in another %s namespace than rank %u (%s:[%llu], this "
                       "one %s:[%llu]); the processes of a node share memory only within one "
                       "network and one pid namespace: start them in the same ones", rank, net ? "network" : "pid",
                       tp->ranks != NULL ? tp->ranks[s->rank] : s->rank, net ? "net" : "pid",
                       (unsigned long long)(net ? who.netns : who.pidns), net ? "net" : "pid",
                       (unsigned long long)(net ? me.netns : me.pidns));
            return ONIC_ERR_UNSUPPORTED;
        }
        pids[r] = (pid_t)who.pid;
    }
    return ONIC_OK;
}

/* The no-lost-wake-up handshake (shm_wake) needs a full fence between a
 * sender's store of `ready` and its load of `sleeping`: a seq_cst store, an
 * atomic exchange paid on every message. Where the kernel has membarrier,
 * the sleeper pays instead, once per sleep: it interrupts every registered
 * process with a barrier after announcing it sleeps and before it re-checks
 * its lanes, so a registered sender's plain release store is either seen by
 * the re-check or ordered before its own load, which then sees `sleeping`. */
static void shm_fence_setup(shm_state_t *s)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

    if (cmds < 0)
        return;
    s->fences = (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0;
    s->fenced = (cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0 &&
                syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

/* CMA towards each peer, unless told to copy: probe it, and say once what
 * RMA will use. */
static void shm_cma_setup(shm_state_t *s)
{
    uint32_t ok = 0, tried = 0;

    for (uint32_t r = 0; r < s->size; r++) {
        shm_region_hdr_t *h = s->regions[r];
        if (r == s->rank || s->rma_mode == ONIC_SHM_RMA_COPY)
            continue;
        tried++;
        if (onic_xport_cma_probe((pid_t)h->pid, h->nonce_addr, h->nonce)) {
            s->pids[r] = (pid_t)h->pid;
            ok++;
        }
    }
    s->rma_may_wait = ok < tried || s->rma_mode == ONIC_SHM_RMA_COPY ||
                      (s->rma_mode != ONIC_SHM_RMA_CMA && s->cma_min > 0);
    if (s->rma_mode == ONIC_SHM_RMA_COPY)
        onic_info("shm: RMA through bounce buffers (ONIC_SHM_RMA=copy)");
    else if (ok < tried)
        onic_log(s->rma_mode == ONIC_SHM_RMA_CMA ? ONIC_LOG_WARN : ONIC_LOG_INFO,
                 "shm: the kernel refused cross-memory attach to %u of %u peers (ptrace "
                 "restrictions or a container?); RMA with them goes through bounce buffers",
                 tried - ok, tried);
    else if (s->rma_mode == ONIC_SHM_RMA_CMA)
        onic_info("shm: RMA by cross-memory attach (ONIC_SHM_RMA=cma)");
    else
        onic_info("shm: RMA by cross-memory attach from %llu bytes, bounce buffers below",
                  (unsigned long long)s->cma_min);
}

static onic_status_t shm_endpoint_open(const onic_xport_tparams_t *tp, void **state_p)
{
    const onic_xport_params_t *p = tp->p;
    shm_state_t *s = onic_calloc(1, sizeof(*s));
    uint64_t deadline = onic_time_ns() + SHM_OPEN_TIMEOUT_NS;
    onic_status_t status;
    pid_t *pids;
    int *fds, fd = -1;
    uint32_t demote = p->cfg->shm_demote == ONIC_SHM_DEMOTE_ON ||
                      (p->cfg->shm_demote == ONIC_SHM_DEMOTE_AUTO && onic_cpu_has_cldemote());

    if (s == NULL)
        return ONIC_ERR_NO_MEMORY;
    s->rank = p->rank;
    s->size = p->size;
    s->full = tp->full;
    s->full_arg = tp->full_arg;
    /* auto sizes follow the node's process count, the same in every
     * process, so the regions' geometry agrees. */
    s->nslots = onic_config_shm_ring_slots(p->cfg, p->size);
    s->chunk = onic_config_shm_bounce_chunk(p->cfg, p->size);
    s->rma_mode = p->cfg->shm_rma;
    s->cma_min = p->cfg->shm_cma_min;
    s->assist_min = p->cfg->shm_assist_min;
    s->mreg = tp->mreg;
    s->notify = tp->notify;
    s->ranks = tp->ranks;
    s->bounce_bytes = onic_shm_bounce_size(p->cfg->shm_bounce_chunks, s->chunk);
    s->bounce_off = sizeof(shm_region_hdr_t) + (size_t)s->size * onic_shm_lane_size(s->nslots);
    s->bounce_off = (s->bounce_off + ONIC_SHM_BOUNCE_ALIGN - 1) / ONIC_SHM_BOUNCE_ALIGN *
                    ONIC_SHM_BOUNCE_ALIGN;
    s->assist_off = (s->bounce_off + (size_t)s->size * s->bounce_bytes + ONIC_SHM_SLOT - 1) /
                    ONIC_SHM_SLOT * ONIC_SHM_SLOT;
    s->region_bytes = s->assist_off + sizeof(shm_assist_t);
    s->frame = (size_t)(s->nslots - 1) * ONIC_SHM_SLOT;
    if (s->frame > ONIC_SHM_FRAME_MAX)
        s->frame = ONIC_SHM_FRAME_MAX;
    /* Above a frame, in fragments through the same lane (ONIC_SHM_MID_MAX). */
    s->max_payload = p->cfg->shm_mid_max > s->frame ? p->cfg->shm_mid_max : s->frame;
    s->regions = onic_calloc(s->size, sizeof(*s->regions));
    s->tx = onic_calloc(s->size, sizeof(*s->tx));
    s->rx = onic_calloc(s->size, sizeof(*s->rx));
    s->btx = onic_calloc(s->size, sizeof(*s->btx));
    s->brx = onic_calloc(s->size, sizeof(*s->brx));
    s->pids = onic_calloc(s->size, sizeof(*s->pids));
    s->window = onic_calloc(s->size, sizeof(*s->window));
    s->no_assist = onic_calloc(s->size, sizeof(*s->no_assist));
    s->mid = onic_calloc(s->size, sizeof(*s->mid));
    onic_slots_init(&s->ops, sizeof(shm_rma_op_t), UINT32_MAX / 2);
    if (s->regions == NULL || s->tx == NULL || s->rx == NULL || s->btx == NULL ||
        s->brx == NULL || s->pids == NULL || s->window == NULL || s->no_assist == NULL ||
        s->mid == NULL) {
        shm_endpoint_close(s);
        return ONIC_ERR_NO_MEMORY;
    }
    shm_fence_setup(s);
    status = shm_open_region(s, p->cfg, &fd);
    fds = onic_malloc(s->size * sizeof(*fds));
    pids = onic_malloc(s->size * sizeof(*pids));
    if (fds == NULL || pids == NULL) {
        status = ONIC_ERR_NO_MEMORY;
    } else {
        for (uint32_t r = 0; r < s->size; r++)
            fds[r] = -1;
        fds[s->rank] = fd;
        if (status == ONIC_OK)
            status = shm_xchg_pids(s, tp, pids);
        if (status == ONIC_OK)
            status = s->rank == 0 ? shm_xchg_lead(s, p->jobid, pids, fds, deadline)
                                  : shm_xchg_join(s, p->jobid, pids, fds, deadline,
                                                   (int)p->cfg->shm_xchg_stop);
        for (uint32_t r = 0; status == ONIC_OK && r < s->size; r++)
            if (r != s->rank)
                status = shm_attach(s, fds[r], r, deadline);
        for (uint32_t r = 0; r < s->size; r++)
            if (fds[r] >= 0)
                close(fds[r]); /* the mappings hold the memory */
    }
    onic_free(fds);
    onic_free(pids);
    for (uint32_t r = 0; status == ONIC_OK && r < s->size; r++) {
        if (r == s->rank)
            continue;
        onic_shm_tx_init(&s->tx[r], shm_lane(s->regions[r], s->nslots, s->rank), s->nslots);
        s->tx[r].release_only = s->fenced && ((shm_region_hdr_t *)s->regions[r])->fences;
        s->tx[r].demote = demote;
        onic_shm_rx_init(&s->rx[r], shm_lane(s->regions[s->rank], s->nslots, r), s->nslots, r);
        s->rx[r].mid_max = (uint32_t)s->max_payload;
        status = onic_shm_btx_init(&s->btx[r], shm_bounce(s, s->regions[r], s->rank),
                                   p->cfg->shm_bounce_chunks, s->chunk);
        onic_shm_brx_init(&s->brx[r], shm_bounce(s, s->regions[s->rank], r),
                          p->cfg->shm_bounce_chunks, s->chunk);
    }
    if (status != ONIC_OK) {
        shm_endpoint_close(s);
        return status;
    }
    shm_cma_setup(s);
    *state_p = s;
    return ONIC_OK;
}

static long shm_futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* The peer said it sleeps: wake it -- all its sleepers, since a thread of
 * MPI_THREAD_MULTIPLE and a caller's wait may sleep at once. */
static void __attribute__((noinline)) shm_wake_sleeper(shm_region_hdr_t *h)
{
    __atomic_fetch_add(&h->wake, 1, __ATOMIC_RELEASE);
    shm_futex(&h->wake, FUTEX_WAKE, INT_MAX, NULL);
}

/* Wake the peer only if it said it sleeps. Whatever we published for it (a
 * message's `ready`, a chunk's `ready`, a freed chunk count), this load, the
 * sleeper's store to `sleeping` and its re-check of the same words are all
 * seq_cst (or the sleeper's membarrier stands in for our store's fence, see
 * shm_fence_setup), so either the sleeper sees our work or we see it asleep:
 * no wake-up is lost. */
static inline void shm_wake(shm_state_t *s, uint32_t peer)
{
    shm_region_hdr_t *h = s->regions[peer];

    if (__builtin_expect(__atomic_load_n(&h->sleeping, __ATOMIC_SEQ_CST), 0))
        shm_wake_sleeper(h);
}

/* A mid-size message (more than a frame), or the rest of one: as many
 * fragments as the lane has room for, the rest kept by the front end
 * (tp->full) as the peer's first record -- only what has not left, so a
 * stream of them is copied once more only as far as the ring is full. */
static onic_status_t __attribute__((noinline))
shm_send_mid(shm_state_t *s, uint32_t peer, const void *user_hdr, size_t user_len,
             const void *payload, size_t len)
{
    shm_mid_tx_t *m = &s->mid[peer];
    int first = !m->cont;
    size_t off = m->cont ? m->skip : 0, from;
    onic_status_t status = onic_shm_tx_mid(&s->tx[peer], user_hdr, user_len, payload, len,
                                           s->frame, &first, &off);

    if (status == ONIC_OK) {
        m->cont = 0;
        m->skip = 0;
        shm_wake(s, peer);
        return ONIC_OK;
    }
    if (status != ONIC_ERR_NO_RESOURCE)
        shm_tx_check(s, peer); /* does not return */
    if (++s->full_tries % 1024 == 0 && !onic_shm_tx_audit(&s->tx[peer]))
        shm_tx_check(s, peer);
    if (first) /* nothing left: kept whole, as any message without room */
        return s->full(s->full_arg, peer, user_hdr, user_len, payload, len);
    shm_wake(s, peer);
    if (m->cont) { /* the backlog's own record, sent again: it stays first */
        m->skip = off;
        return s->full(s->full_arg, peer, user_hdr, user_len, payload, len);
    }
    /* Keep the rest, at least one byte more than a one-slot message holds,
     * so the next send of it comes here and not the one-slot path (which
     * would stamp it a message of its own). */
    from = len - off > ONIC_XPORT_USER_HDR ? off : len - ONIC_XPORT_USER_HDR - 1;
    m->cont = 1;
    m->skip = off - from;
    status = s->full(s->full_arg, peer, NULL, 0, (const uint8_t *)payload + from, len - from);
    if (status == ONIC_ERR_NO_RESOURCE)
        m->skip = off; /* sent from the backlog: its record stays as it was, whole */
    else if (status != ONIC_OK)
        m->cont = 0; /* lost (the front end said so) */
    return status;
}

/* A message of several slots, or a lane without room (the credit is read
 * again): without room, the front end keeps the message for a later poll
 * (tp->full, ops.queues). */
static onic_status_t __attribute__((noinline))
shm_send_slow(shm_state_t *s, uint32_t peer, const void *user_hdr, size_t user_len,
              const void *payload, size_t len)
{
    onic_status_t status;

    if (len > s->frame || s->mid[peer].cont)
        return shm_send_mid(s, peer, user_hdr, user_len, payload, len);
    status = onic_shm_tx_try(&s->tx[peer], ONIC_XPORT_KIND_USER, user_hdr, user_len, payload,
                             len);

    if (status != ONIC_OK) {
        if (status != ONIC_ERR_NO_RESOURCE)
            shm_tx_check(s, peer); /* does not return */
        /* A receiver stuck at a message of ours that was overwritten never
         * gives room: look now and then (the backlog retries from polls). */
        if (++s->full_tries % 1024 == 0 && !onic_shm_tx_audit(&s->tx[peer]))
            shm_tx_check(s, peer);
        return s->full(s->full_arg, peer, user_hdr, user_len, payload, len);
    }
    shm_wake(s, peer);
    return ONIC_OK;
}

/* A one-slot message with room is written here, everything else goes on,
 * as a tail call, to shm_send_slow: nothing is kept live across a call on
 * the common path. */
static onic_status_t shm_send(void *state, uint32_t peer, const void *user_hdr, size_t user_len,
                              const void *payload, size_t len)
{
    shm_state_t *s = state;
    onic_shm_tx_t *tx = &s->tx[peer];
    shm_region_hdr_t *h;

    if (__builtin_expect(user_len + len > ONIC_XPORT_USER_HDR || !onic_shm_tx_room1(tx), 0))
        return shm_send_slow(s, peer, user_hdr, user_len, payload, len);
    /* A slot someone else wrote: shm_send_slow finds it again, and stops. */
    if (__builtin_expect(onic_shm_tx_put1(tx, ONIC_XPORT_KIND_USER, user_hdr, user_len, payload,
                                          len) != ONIC_OK, 0))
        return shm_send_slow(s, peer, user_hdr, user_len, payload, len);
    h = s->regions[peer];
    if (__builtin_expect(__atomic_load_n(&h->sleeping, __ATOMIC_SEQ_CST), 0))
        shm_wake_sleeper(h); /* shm_wake */
    return ONIC_OK;
}

/* Whether anything waits for this process: a message, a chunk, or room for
 * a copy it has queued. */
static int shm_pending(shm_state_t *s)
{
    for (uint32_t r = 0; r < s->size; r++) {
        if (r == s->rank)
            continue;
        if ((!s->rx[r].broken && onic_shm_rx_pending(&s->rx[r])) ||
            (!s->brx[r].broken && onic_shm_brx_pending(&s->brx[r])) ||
            (onic_shm_btx_busy(&s->btx[r]) && onic_shm_btx_freed(&s->btx[r])))
            return 1;
    }
    return 0;
}

/* Announce a sleep: from here senders wake the word *word_p, whose value
 * *val_p a futex wait compares; 0 (and no announcement) when something
 * already waits. *max_ns: how long the sleep may last, 1 ms when the
 * fence senders count on failed (they might go unseen). `sleeping` counts
 * the sleepers (a thread of MPI_THREAD_MULTIPLE and a waiting caller may
 * sleep at once); senders only ask whether it is 0. */
static int shm_sleep_arm(void *state, uint32_t **word_p, uint32_t *val_p, uint64_t *max_ns)
{
    shm_state_t *s = state;
    shm_region_hdr_t *h = s->regions[s->rank];
    uint32_t seq = __atomic_load_n(&h->wake, __ATOMIC_ACQUIRE);

    shm_audit(s);
    *max_ns = UINT64_MAX;
    __atomic_add_fetch(&h->sleeping, 1, __ATOMIC_SEQ_CST);
    if (s->fences && syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)
        *max_ns = 1000000;
    if (shm_pending(s)) {
        __atomic_sub_fetch(&h->sleeping, 1, __ATOMIC_RELAXED);
        return 0;
    }
    *word_p = &h->wake;
    *val_p = seq;
    return 1;
}

static void shm_sleep_disarm(void *state)
{
    shm_state_t *s = state;
    shm_region_hdr_t *h = s->regions[s->rank];

    __atomic_sub_fetch(&h->sleeping, 1, __ATOMIC_RELAXED);
}

/* Sleep until a peer wakes us or timeout_ns pass, unless something already
 * waits. */
static void shm_sleep(void *state, uint64_t timeout_ns)
{
    uint32_t *word, seq;
    uint64_t max_ns;

    if (!shm_sleep_arm(state, &word, &seq, &max_ns))
        return;
    if (timeout_ns > max_ns)
        timeout_ns = max_ns;
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    shm_futex(word, FUTEX_WAIT, seq, &ts); /* returns at once if seq moved */
    shm_sleep_disarm(state);
}

/* --- RMA through the bounce buffers ---------------------------------- */

/* The operation an id from shared memory names, if it is ours, in flight,
 * with that peer and of that direction. */
static shm_rma_op_t *shm_op_find(shm_state_t *s, uint64_t id, uint32_t peer, int write)
{
    shm_rma_op_t *op = onic_slots_find(&s->ops, id);

    return op != NULL && op->peer == peer && op->write == write ? op : NULL;
}

static void shm_op_complete(shm_state_t *s, shm_rma_op_t *op, onic_status_t status)
{
    s->window[op->peer]--;
    onic_xport_notify_post(s->notify, op->ctx, status);
    onic_slots_del(&s->ops, op);
}

typedef struct shm_chunk_ctx {
    shm_state_t *s;
    uint32_t     src;
} shm_chunk_ctx_t;

/* A chunk from src's bounce buffer in our region (checked by shm_bounce for
 * kind and length; here for the operation and the range). */
static onic_status_t shm_chunk(void *arg, const onic_shm_chunk_t *c, const void *data)
{
    shm_chunk_ctx_t *cc = arg;
    shm_state_t *s = cc->s;
    shm_rma_op_t *op;
    void *dst;

    switch (c->kind) {
    case ONIC_SHM_CHUNK_READ_DATA:
        op = shm_op_find(s, c->op, cc->src, 0);
        if (op == NULL || c->offset != op->done || c->len > op->len - op->done)
            return ONIC_ERR_IO;
        onic_copy(op->local + op->done, data, c->len);
        op->done += c->len;
        if (op->done == op->len)
            shm_op_complete(s, op, ONIC_OK);
        return ONIC_OK;
    case ONIC_SHM_CHUNK_READ_ERR:
        op = shm_op_find(s, c->op, cc->src, 0);
        if (op == NULL || c->status >= 0 || c->status <= ONIC_ERR_LAST)
            return ONIC_ERR_IO;
        shm_op_complete(s, op, (onic_status_t)c->status);
        return ONIC_OK;
    default: /* WRITE_DATA: into our memory, only where we registered it */
        if (c->roff > UINT64_MAX - c->offset)
            return ONIC_ERR_INVALID_PARAM;
        dst = onic_xport_mreg_find(s->mreg, &c->key, c->roff + c->offset, c->len);
        if (dst == NULL)
            return ONIC_ERR_INVALID_PARAM;
        onic_copy(dst, data, c->len);
        return ONIC_OK;
    }
}

static void shm_write_done(void *arg, uint64_t id, onic_status_t status)
{
    shm_chunk_ctx_t *cc = arg;
    shm_rma_op_t *op = shm_op_find(cc->s, id, cc->src, 1);

    if (op != NULL) /* our own records name it: it is there */
        shm_op_complete(cc->s, op, status);
}

/* src asks for a range of our memory: queue the data, or a refusal. */
static void shm_read_req(shm_state_t *s, uint32_t src, const void *user_hdr, size_t user_len)
{
    shm_read_req_t req;
    onic_shm_bjob_t job = {0};

    if (user_len != sizeof(req)) {
        onic_shm_rx_break(&s->rx[src], ONIC_SHM_BAD_OWN, SHM_KIND_READ_REQ);
        return;
    }
    memcpy(&req, user_hdr, sizeof(req));
    job.op = req.op;
    job.len = req.len;
    job.src = req.len == 0 ? NULL : onic_xport_mreg_find(s->mreg, &req.key, req.roff, req.len);
    if (job.src != NULL) {
        job.kind = ONIC_SHM_CHUNK_READ_DATA;
    } else {
        job.kind = ONIC_SHM_CHUNK_READ_ERR;
        job.status = ONIC_ERR_INVALID_PARAM;
        job.len = 0;
    }
    /* A peer keeps at most ONIC_SHM_RMA_WINDOW requests in flight, so the
     * job ring has room; if not, the peer is broken. */
    if (onic_shm_btx_push(&s->btx[src], &job) != ONIC_OK)
        onic_shm_rx_break(&s->rx[src], ONIC_SHM_BAD_OWN, SHM_KIND_READ_REQ);
}

/* The next chunk of generation gen's n to copy, taken; n when none is left
 * (or the line has moved on to another operation). */
static uint64_t shm_assist_take(shm_assist_t *a, uint64_t gen, uint64_t n)
{
    uint64_t cur = __atomic_load_n(&a->next, __ATOMIC_ACQUIRE);

    for (;;) {
        if (cur >> 32 != gen || (cur & 0xffffffffu) >= n)
            return n;
        if (__atomic_compare_exchange_n(&a->next, &cur, cur + 1, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return cur & 0xffffffffu;
    }
}

/* The chunk of a cooperative operation of len bytes; both sides compute it
 * from the length, so a helper never counts another operation's chunks. */
static uint64_t shm_assist_chunk(uint64_t len)
{
    uint64_t chunk = (len / 2 + 4095) & ~(uint64_t)4095;

    return chunk < SHM_ASSIST_CHUNK_MIN ? SHM_ASSIST_CHUNK_MIN
           : chunk > SHM_ASSIST_CHUNK_MAX ? SHM_ASSIST_CHUNK_MAX : chunk;
}

/* One chunk of a cooperative operation, seen from `self`, which copies
 * between its own `mine` and the other process's `theirs` (pid): a read
 * brings theirs into mine, a write takes mine into theirs. */
static onic_status_t shm_assist_copy(pid_t pid, int read, uint8_t *mine, uint64_t theirs,
                                     uint64_t len)
{
    return read ? onic_xport_cma_read(pid, mine, theirs, len)
                : onic_xport_cma_write(pid, mine, theirs, len);
}

/* ASSIST from the initiator of an RMA on our memory: take chunks of it and
 * copy them ourselves -- for its read, from our memory into its; for its
 * write, from its memory into ours -- up to SHM_ASSIST_HELP_MAX bytes.
 * Everything read from its line is checked, and our side must lie in a
 * registration of ours, as for a READ_REQ. A request we cannot serve is
 * simply not served: the initiator copies what no one took. */
static void shm_assist_help(shm_state_t *s, uint32_t initiator, const void *user_hdr,
                            size_t user_len)
{
    shm_read_req_t req;
    shm_assist_t *a;
    uint64_t gen, len, chunk, n, i, write, copied = 0;
    uint64_t theirs;
    uint8_t *ours;

    if (user_len != sizeof(req)) {
        onic_shm_rx_break(&s->rx[initiator], ONIC_SHM_BAD_OWN, SHM_KIND_ASSIST);
        return;
    }
    memcpy(&req, user_hdr, sizeof(req));
    a = shm_assist(s, s->regions[initiator]);
    gen = req.op & 0xffffffffu;
    if (__atomic_load_n(&a->next, __ATOMIC_ACQUIRE) >> 32 != gen)
        return; /* that operation is over */
    if (s->pids[initiator] == 0) {
        /* The kernel does not let us reach it: say so, once, and it stops
         * asking (the line is its until the next generation). */
        __atomic_store_n(&a->failed, gen, __ATOMIC_RELAXED);
        return;
    }
    /* The length is the message's and the chunk follows from it, so n is
     * the operation's own: were the other fields already a later
     * operation's, this one is over and every take below fails. */
    len = req.len;
    chunk = shm_assist_chunk(len);
    theirs = __atomic_load_n(&a->local, __ATOMIC_ACQUIRE);
    write = req.op >> 63;
    if (len == 0 || len > UINT32_MAX * chunk)
        return; /* nonsense: leave it to the initiator */
    ours = onic_xport_mreg_find(s->mreg, &req.key, req.roff, req.len);
    if (ours == NULL)
        return;
    n = (len + chunk - 1) / chunk;
    while (copied < SHM_ASSIST_HELP_MAX && (i = shm_assist_take(a, gen, n)) < n) {
        uint64_t off = i * chunk, l = len - off < chunk ? len - off : chunk;
        /* Its write is our read, and the other way round. */
        int ok = shm_assist_copy(s->pids[initiator], (int)write, ours + off, theirs + off, l) ==
                 ONIC_OK;
        if (!ok)
            __atomic_store_n(&a->failed, gen, __ATOMIC_RELAXED);
        __atomic_fetch_add(&a->done, 1, __ATOMIC_RELEASE);
        if (!ok)
            break; /* the initiator redoes it all */
        copied += l;
    }
}

/* Wait until the helper finished the `theirs` chunks it took; 0 if it died
 * first. It copies a chunk in microseconds once it has one, but may be
 * descheduled meanwhile: spin, then yield, and look at its pid now and then
 * (a zombie, which kill(pid, 0) passes, counts as dead). */
static int shm_assist_wait(shm_assist_t *a, uint64_t theirs, pid_t helper)
{
    unsigned spins = 0;

    while (__atomic_load_n(&a->done, __ATOMIC_ACQUIRE) < theirs) {
        if (++spins < 4096) {
            __builtin_ia32_pause();
            continue;
        }
        if (spins % 1024 == 0 && !onic_proc_alive(helper))
            return 0;
        sched_yield();
    }
    return 1;
}

/* A CMA read or write of len bytes with peer's memory, with the peer's help
 * if it polls meanwhile (see the top of this file). Returns as
 * onic_xport_cma_read / _write; the data is in place when it does. */
static onic_status_t shm_rma_assisted(shm_state_t *s, uint32_t peer, int write, uint8_t *local,
                                      const onic_xport_mkey_t *rkey, uint64_t roff, size_t len)
{
    shm_assist_t *a = shm_assist(s, s->regions[s->rank]);
    uint64_t chunk = shm_assist_chunk(len);
    uint64_t raddr = rkey->addr + roff, mine = 0, mine_bytes = 0, gen, n, i;
    shm_read_req_t req = {.key = *rkey, .roff = roff, .len = len};
    pid_t pid = s->pids[peer];
    onic_status_t status = ONIC_OK;

    gen = ++s->assist_gen;
    req.op = gen | (uint64_t)write << 63;
    n = (len + chunk - 1) / chunk;
    __atomic_store_n(&a->local, (uint64_t)(uintptr_t)local, __ATOMIC_RELEASE);
    __atomic_store_n(&a->done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&a->failed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&a->next, gen << 32, __ATOMIC_RELEASE);
    /* No room in its lane: it is busy anyway; we copy alone. A peer asleep
     * in a wait is woken only where the operation outlasts its wake-up (tens
     * of microseconds here) by far. */
    if (onic_shm_tx_try(&s->tx[peer], SHM_KIND_ASSIST, &req, sizeof(req), NULL, 0) == ONIC_OK &&
        len >= SHM_ASSIST_WAKE_MIN)
        shm_wake(s, peer);
    shm_tx_check(s, peer);
    while ((i = shm_assist_take(a, gen, n)) < n) {
        uint64_t off = i * chunk, l = len - off < chunk ? len - off : chunk;
        mine++;
        mine_bytes += l;
        /* After a failure, take the rest without copying: the helper must
         * not touch local once we have returned. */
        if (status == ONIC_OK)
            status = shm_assist_copy(pid, !write, local + off, raddr + off, l);
    }
    if (!shm_assist_wait(a, n - mine, pid))
        return shm_assist_copy(pid, !write, local, raddr, len); /* fails: it is gone */
    /* It finished no more chunks than it took: a larger count is not its. */
    if (__atomic_load_n(&a->done, __ATOMIC_ACQUIRE) != n - mine)
        onic_log_fail_stop(ONIC_EXIT_CORRUPT, "shm: corrupt data in the assist line of rank %u "
                           "(seen by it): done count %llu where rank %u took %llu chunks; "
                           "stopping the job", shm_job_rank(s, s->rank),
                           (unsigned long long)__atomic_load_n(&a->done, __ATOMIC_RELAXED),
                           shm_job_rank(s, peer), (unsigned long long)(n - mine));
    if (__atomic_load_n(&a->failed, __ATOMIC_ACQUIRE) == gen) {
        onic_info("shm: rank %u cannot copy for this process (ptrace rules?); it will not be "
                  "asked to help again", peer);
        s->no_assist[peer] = 1;
        if (n - mine > 0 && status == ONIC_OK)
            return shm_assist_copy(pid, !write, local, raddr, len);
    }
    if (status == ONIC_OK)
        s->assisted += len - mine_bytes;
    return status;
}

/* Whether the front end holds older messages (a wait inside a callback --
 * an RMA start past the window -- took them out of the rings): ours wait
 * behind them (ops.holds). */
static inline int shm_held(const onic_xport_params_t *p)
{
    return *p->held;
}

/* Lane messages: the layer above's go to recv_cb, ours are handled here
 * (and counted apart: a poll returns what it delivered). */
typedef struct shm_msg_ctx {
    shm_state_t               *s;
    const onic_xport_params_t *p;
    unsigned                   own;
} shm_msg_ctx_t;

static void __attribute__((noinline)) shm_msg_own(shm_state_t *s, uint32_t src, unsigned kind,
                                                  const void *user_hdr, size_t user_len,
                                                  size_t len)
{
    if (len == 0 && kind == SHM_KIND_READ_REQ)
        shm_read_req(s, src, user_hdr, user_len);
    else if (len == 0 && kind == SHM_KIND_ASSIST)
        shm_assist_help(s, src, user_hdr, user_len);
    else
        onic_shm_rx_break(&s->rx[src], ONIC_SHM_BAD_OWN, kind);
}

/* Inlined into the lane's poll: a message of the layer above costs one
 * call, its callback's. */
static inline int shm_msg(void *arg, uint32_t src, unsigned kind, const void *user_hdr,
                          size_t user_len, const void *payload, size_t len)
{
    shm_msg_ctx_t *mc = arg;

    if (__builtin_expect(kind == ONIC_XPORT_KIND_USER, 1)) {
        mc->p->recv_cb(mc->p->cb_arg, src, user_hdr, user_len, payload, len);
        return shm_held(mc->p);
    }
    mc->own++;
    shm_msg_own(mc->s, src, kind, user_hdr, user_len, len);
    return 0;
}

/* A mid-size message at its FIRST: to the layer above's place_cb, unless
 * older messages are held for it (they go first) or an RMA start may wait
 * (rma_may_wait: CMA is not what every RMA uses). */
static int shm_place(void *arg, uint32_t src, const void *user_hdr, size_t user_len, size_t len,
                     void **dest, size_t *room)
{
    shm_msg_ctx_t *mc = arg;

    return !shm_held(mc->p) && !mc->s->rma_may_wait &&
           mc->p->place_cb(mc->p->cb_arg, src, user_hdr, user_len, len, dest, room);
}

static int shm_placed(void *arg, uint32_t src)
{
    shm_msg_ctx_t *mc = arg;

    mc->p->placed_cb(mc->p->cb_arg, src);
    return shm_held(mc->p);
}

static const onic_shm_placer_t shm_placer = {shm_place, shm_placed};

/* Move src's RMA along: take its chunks in our region, fill ours in its. */
static void __attribute__((noinline)) shm_rma_progress(shm_state_t *s, uint32_t r)
{
    shm_chunk_ctx_t cc = {s, r};

    if (!s->brx[r].broken && onic_shm_brx_pending(&s->brx[r])) {
        if (onic_shm_brx_poll(&s->brx[r], shm_chunk, &cc) > 0)
            shm_wake(s, r); /* it may sleep waiting for room */
        if (s->brx[r].broken)
            shm_bounce_corrupt(s, r, 0, s->brx[r].bad, s->brx[r].bad_value);
    }
    if (onic_shm_btx_busy(&s->btx[r]) &&
        onic_shm_btx_progress(&s->btx[r], shm_write_done, &cc) > 0)
        shm_wake(s, r);
    if (s->btx[r].bad != NULL)
        shm_bounce_corrupt(s, r, 1, s->btx[r].bad, s->btx[r].bad_value);
}

static unsigned shm_poll(void *state, const onic_xport_params_t *p, unsigned max)
{
    shm_state_t *s = state;
    shm_msg_ctx_t mc = {s, p, 0};
    unsigned n = 0;

    /* Polling an idle endpoint is the latency path: each peer costs two
     * loads of lines that stay in this core's cache until the peer writes
     * them, and calls only where there is work. */
    for (uint32_t i = 0, r = s->next_rx; i < s->size; i++, r = r + 1 == s->size ? 0 : r + 1) {
        onic_shm_rx_t *rx = &s->rx[r];
        if (r == s->rank)
            continue;
        if (!rx->broken && n < max && (onic_shm_rx_ready(rx) || rx->head != rx->published) &&
            !shm_held(p)) {
            n += onic_shm_rx_poll(rx, max - n < 64 ? max - n : 64, s->frame, SHM_KIND_MAX,
                                  shm_msg, p->place_cb != NULL ? &shm_placer : NULL, &mc);
            shm_rx_check(s, r);
        }
        if (onic_shm_btx_busy(&s->btx[r]) || onic_shm_brx_ready(&s->brx[r]))
            shm_rma_progress(s, r);
    }
    s->next_rx = s->next_rx + 1 == s->size ? 0 : s->next_rx + 1;
    return n - mc.own;
}

static onic_status_t shm_rma(void *state, uint32_t peer, int write, void *local,
                             const onic_xport_mkey_t *rkey, uint64_t roffset, size_t len,
                             void *ctx)
{
    shm_state_t *s = state;
    shm_rma_op_t *op;
    onic_status_t status;
    uint64_t id;

    if (s->pids[peer] != 0 && (s->rma_mode == ONIC_SHM_RMA_CMA || len >= s->cma_min)) {
        if (s->assist_min > 0 && len >= s->assist_min && !s->no_assist[peer])
            status = shm_rma_assisted(s, peer, write, local, rkey, roffset, len);
        else
            status = shm_assist_copy(s->pids[peer], !write, local, rkey->addr + roffset, len);
        if (status != ONIC_ERR_UNSUPPORTED) {
            onic_xport_notify_post(s->notify, ctx, status);
            return ONIC_OK;
        }
        /* Refused after the probe passed (a ptrace policy changed): copy. */
        onic_warn("shm: the kernel now refuses cross-memory attach to rank %u; copying", peer);
        s->pids[peer] = 0;
        s->rma_may_wait = 1;
    }
    if (!write && s->brx[peer].broken) {
        onic_error("shm: rank %u sent malformed RMA data before; no more reads from it", peer);
        return ONIC_ERR_IO;
    }
    if (s->window[peer] >= ONIC_SHM_RMA_WINDOW)
        return ONIC_ERR_NO_RESOURCE;
    op = onic_slots_add(&s->ops, &id);
    if (op == NULL)
        return ONIC_ERR_NO_MEMORY;
    op->local = local;
    op->len = len;
    op->done = 0;
    op->ctx = ctx;
    op->peer = peer;
    op->write = (uint8_t)write;
    if (write) {
        onic_shm_bjob_t job = {.kind = ONIC_SHM_CHUNK_WRITE_DATA, .op = id,
                               .src = local, .len = len, .key = *rkey, .roff = roffset};
        status = onic_shm_btx_push(&s->btx[peer], &job);
    } else {
        shm_read_req_t req = {.op = id, .key = *rkey, .roff = roffset,
                              .len = len};
        status = onic_shm_tx_try(&s->tx[peer], SHM_KIND_READ_REQ, &req, sizeof(req), NULL, 0);
        shm_tx_check(s, peer);
    }
    if (status != ONIC_OK) {
        onic_slots_del(&s->ops, op);
        return status;
    }
    s->window[peer]++;
    if (write)
        shm_rma_progress(s, peer);
    else
        shm_wake(s, peer);
    return ONIC_OK;
}

/* CMA alone takes the pieces at once (in one call, no assist: the pieces
 * of an I/O vector are each smaller than the whole); the bounce buffers
 * move one contiguous range, so the caller goes piece by piece. */
static onic_status_t shm_rmav(void *state, uint32_t peer, int write, struct iovec *local,
                              unsigned n, const onic_xport_mkey_t *rkey, uint64_t roffset,
                              size_t len, void *ctx)
{
    shm_state_t *s = state;
    onic_status_t status;

    if (s->pids[peer] == 0 || n > IOV_MAX ||
        (s->rma_mode != ONIC_SHM_RMA_CMA && len < s->cma_min))
        return ONIC_ERR_UNSUPPORTED;
    status = onic_xport_cma_copyv(s->pids[peer], write, local, n, rkey->addr + roffset, len);
    if (status == ONIC_ERR_UNSUPPORTED)
        return status; /* refused now: shm_rma says so and copies */
    onic_xport_notify_post(s->notify, ctx, status);
    return ONIC_OK;
}

static unsigned shm_caps(const void *state, uint32_t peer)
{
    const shm_state_t *s = state;

    /* CMA for every length: allowed by the kernel, and no ONIC_SHM_CMA_MIN
     * sending short ones through the bounce buffers. */
    return ONIC_XPORT_CAP_RMA | ONIC_XPORT_CAP_SLEEP |
           (s->pids[peer] != 0 && (s->rma_mode == ONIC_SHM_RMA_CMA || s->cma_min == 0)
                ? ONIC_XPORT_CAP_CMA
                : 0u);
}

static size_t shm_max_payload(const void *state)
{
    return ((const shm_state_t *)state)->max_payload;
}

static uint64_t shm_drops(const void *state)
{
    return ((const shm_state_t *)state)->drops;
}

static uint64_t shm_assisted(const void *state)
{
    return ((const shm_state_t *)state)->assisted;
}

static uint64_t shm_demoted(const void *state)
{
    const shm_state_t *s = state;
    uint64_t n = 0;

    for (uint32_t r = 0; r < s->size; r++)
        if (r != s->rank)
            n += s->tx[r].demoted;
    return n;
}

const onic_xport_ops_t onic_xport_shm_ops = {
    .name        = "shm",
    .open        = shm_endpoint_open,
    .close       = shm_endpoint_close,
    .send        = shm_send,
    .queues      = 1,
    .poll        = shm_poll,
    .holds       = 1,
    .max_payload = shm_max_payload,
    .drops       = shm_drops,
    .assisted    = shm_assisted,
    .demoted     = shm_demoted,
    .sleep       = shm_sleep,
    .sleep_arm   = shm_sleep_arm,
    .sleep_disarm = shm_sleep_disarm,
    .rma         = shm_rma,
    .rmav        = shm_rmav,
    .caps        = shm_caps,
};
