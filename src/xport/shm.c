/* shm: the processes of a job on one node. Each process owns one region in
 * POSIX shared memory, /onic-<jobid>-shm-<rank>, created O_EXCL with mode
 * 0600: a header line, then one lane per possible sender (shm_lane.h), so
 * every sender writes its own lane and the receiver polls only its region.
 *
 * Opening: create and initialise the own region, map every peer's (waiting
 * for it to appear and be initialised), tell each peer so by bumping its
 * `attached` count, then wait until every peer has mapped ours and unlink
 * our name: from then on the job holds its memory only through mappings, so
 * nothing is left in /dev/shm however the processes end. */
#include "xport/shm_lane.h"
#include "xport/transport.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC          0x6f6e69632d73686dull /* "onic-shm" */
#define SHM_OPEN_TIMEOUT_NS (30ull * 1000000000ull)

typedef struct shm_region_hdr {
    uint64_t magic;     /* written last, with release: the region is ready */
    uint32_t size;      /* processes in the job */
    uint32_t nslots;    /* slots per lane */
    uint32_t attached;  /* peers that have mapped this region */
    uint32_t sleeping;  /* the owner is (about to be) asleep on `wake` */
    uint32_t wake;      /* futex word: senders bump it to wake a sleeper */
    uint8_t  pad[ONIC_SHM_SLOT - 28];
} shm_region_hdr_t;

static_assert(sizeof(shm_region_hdr_t) == ONIC_SHM_SLOT, "the region header is one line");

typedef struct shm_state {
    uint32_t       rank, size, nslots;
    size_t         region_bytes;
    size_t         max_payload;
    void         **regions;  /* by rank; regions[rank] is ours */
    onic_shm_tx_t *tx;       /* by peer: our lane in its region */
    onic_shm_rx_t *rx;       /* by peer: its lane in our region */
    uint32_t       next_rx;  /* where polling starts, for fairness */
    uint64_t       drops;
} shm_state_t;

static void shm_name(char *buf, size_t len, const char *jobid, uint32_t rank)
{
    snprintf(buf, len, "/onic-%s-shm-%u", jobid, rank);
}

static onic_shm_lane_t *shm_lane(void *region, uint32_t nslots, uint32_t sender)
{
    return (onic_shm_lane_t *)((uint8_t *)region + sizeof(shm_region_hdr_t) +
                               (size_t)sender * onic_shm_lane_size(nslots));
}

static void shm_endpoint_close(void *state)
{
    shm_state_t *s = state;

    if (s == NULL)
        return;
    for (uint32_t r = 0; s->regions != NULL && r < s->size; r++)
        if (s->regions[r] != NULL)
            munmap(s->regions[r], s->region_bytes);
    onic_free(s->regions);
    onic_free(s->tx);
    onic_free(s->rx);
    onic_free(s);
}

/* Map peer's region once it exists, has its full size and is initialised
 * with our geometry. */
static onic_status_t shm_attach(shm_state_t *s, const char *jobid, uint32_t peer, uint64_t deadline)
{
    char name[80];
    shm_region_hdr_t *h;
    struct stat st;
    int fd = -1;

    shm_name(name, sizeof(name), jobid, peer);
    for (;;) {
        if (fd < 0)
            fd = shm_open(name, O_RDWR, 0);
        if (fd >= 0 && fstat(fd, &st) != 0)
            st.st_size = 0;
        if (fd >= 0 && (size_t)st.st_size == s->region_bytes)
            break;
        /* ftruncate sizes a region in one step: any other non-zero size is
         * a process set up differently. */
        if (fd >= 0 && st.st_size != 0 && (size_t)st.st_size != s->region_bytes) {
            onic_error("shm: the region of rank %u has %lld bytes where this process expects "
                       "%zu; set ONIC_SHM_RING_SLOTS the same for every process", peer,
                       (long long)st.st_size, s->region_bytes);
            close(fd);
            return ONIC_ERR_INVALID_PARAM;
        }
        if (fd < 0 && errno != ENOENT) {
            onic_error("shm: cannot open the region of rank %u (%s): %m", peer, name);
            return ONIC_ERR_IO;
        }
        if (onic_time_ns() > deadline) {
            onic_error("shm: rank %u did not create its region %s in time; is it running "
                       "in the same job (ONIC_JOBID)?", peer, name);
            if (fd >= 0)
                close(fd);
            return ONIC_ERR_IO;
        }
        usleep(1000);
    }
    s->regions[peer] = mmap(NULL, s->region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
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
    if (h->size != s->size || h->nslots != s->nslots) {
        onic_error("shm: rank %u runs with %u processes and %u ring slots, this one with %u and "
                   "%u; set ONIC_SHM_RING_SLOTS the same everywhere", peer, h->size, h->nslots,
                   s->size, s->nslots);
        return ONIC_ERR_INVALID_PARAM;
    }
    __atomic_fetch_add(&h->attached, 1, __ATOMIC_RELEASE);
    return ONIC_OK;
}

static onic_status_t shm_open_region(shm_state_t *s, const char *jobid)
{
    char name[80];
    shm_region_hdr_t *h;
    int fd;

    shm_name(name, sizeof(name), jobid, s->rank);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        onic_error("shm: cannot create %s: %m%s", name,
                   errno == EEXIST ? " (another process of this job has rank "
                                     "ONIC_RANK already?)" : "");
        return ONIC_ERR_IO;
    }
    if (ftruncate(fd, (off_t)s->region_bytes) != 0) {
        onic_error("shm: cannot size %s to %zu bytes: %m", name, s->region_bytes);
        close(fd);
        shm_unlink(name);
        return ONIC_ERR_NO_MEMORY;
    }
    s->regions[s->rank] = mmap(NULL, s->region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (s->regions[s->rank] == MAP_FAILED) {
        s->regions[s->rank] = NULL;
        onic_error("shm: cannot map %s (%zu bytes): %m", name, s->region_bytes);
        shm_unlink(name);
        return ONIC_ERR_NO_MEMORY;
    }
    h = s->regions[s->rank];
    h->size = s->size;
    h->nslots = s->nslots;
    __atomic_store_n(&h->magic, SHM_MAGIC, __ATOMIC_RELEASE);
    return ONIC_OK;
}

static onic_status_t shm_endpoint_open(const onic_xport_params_t *p, void **state_p)
{
    shm_state_t *s = onic_calloc(1, sizeof(*s));
    uint64_t deadline = onic_time_ns() + SHM_OPEN_TIMEOUT_NS;
    onic_status_t status;
    char name[80];

    if (s == NULL)
        return ONIC_ERR_NO_MEMORY;
    s->rank = p->rank;
    s->size = p->size;
    s->nslots = p->cfg->shm_ring_slots;
    s->region_bytes = sizeof(shm_region_hdr_t) + (size_t)s->size * onic_shm_lane_size(s->nslots);
    s->max_payload = (size_t)(s->nslots - 1) * ONIC_SHM_SLOT;
    if (s->max_payload > ONIC_XPORT_MAX_PAYLOAD)
        s->max_payload = ONIC_XPORT_MAX_PAYLOAD;
    s->regions = onic_calloc(s->size, sizeof(*s->regions));
    s->tx = onic_calloc(s->size, sizeof(*s->tx));
    s->rx = onic_calloc(s->size, sizeof(*s->rx));
    if (s->regions == NULL || s->tx == NULL || s->rx == NULL) {
        shm_endpoint_close(s);
        return ONIC_ERR_NO_MEMORY;
    }
    status = shm_open_region(s, p->jobid);
    for (uint32_t r = 0; status == ONIC_OK && r < s->size; r++)
        if (r != s->rank)
            status = shm_attach(s, p->jobid, r, deadline);
    /* Everyone mapped ours: the name can go now. */
    while (status == ONIC_OK &&
           __atomic_load_n(&((shm_region_hdr_t *)s->regions[s->rank])->attached,
                           __ATOMIC_ACQUIRE) != s->size - 1) {
        if (onic_time_ns() > deadline) {
            onic_error("shm: not every process of the job mapped this one's region in time");
            status = ONIC_ERR_IO;
        }
        sched_yield();
    }
    shm_name(name, sizeof(name), p->jobid, s->rank);
    if (s->regions[s->rank] != NULL)
        shm_unlink(name);
    if (status != ONIC_OK) {
        shm_endpoint_close(s);
        return status;
    }
    for (uint32_t r = 0; r < s->size; r++) {
        if (r == s->rank)
            continue;
        onic_shm_tx_init(&s->tx[r], shm_lane(s->regions[r], s->nslots, s->rank), s->nslots);
        onic_shm_rx_init(&s->rx[r], shm_lane(s->regions[s->rank], s->nslots, r), s->nslots, r);
    }
    *state_p = s;
    return ONIC_OK;
}

static long shm_futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* Wake the peer only if it said it sleeps. The message's `ready` store, this
 * load, the sleeper's store to `sleeping` and its re-check of the lanes are
 * all seq_cst, so in their single order either the sleeper sees the message
 * or we see it asleep: no wake-up is lost. */
static void shm_wake(shm_state_t *s, uint32_t peer)
{
    shm_region_hdr_t *h = s->regions[peer];

    if (__atomic_load_n(&h->sleeping, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&h->wake, 1, __ATOMIC_RELEASE);
        shm_futex(&h->wake, FUTEX_WAKE, 1, NULL);
    }
}

static onic_status_t shm_send(void *state, uint32_t peer, const void *user_hdr, size_t user_len,
                              const void *payload, size_t len)
{
    shm_state_t *s = state;
    onic_status_t status = onic_shm_tx_try(&s->tx[peer], user_hdr, user_len, payload, len);

    if (status == ONIC_OK)
        shm_wake(s, peer);
    return status;
}

/* Sleep until a sender wakes us or timeout_ns pass, unless something is
 * already waiting in a lane. */
static void shm_sleep(void *state, uint64_t timeout_ns)
{
    shm_state_t *s = state;
    shm_region_hdr_t *h = s->regions[s->rank];
    uint32_t seq = __atomic_load_n(&h->wake, __ATOMIC_ACQUIRE);
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    int pending = 0;

    __atomic_store_n(&h->sleeping, 1, __ATOMIC_SEQ_CST);
    for (uint32_t r = 0; r < s->size && !pending; r++)
        pending = r != s->rank && !s->rx[r].broken && onic_shm_rx_pending(&s->rx[r]);
    if (!pending)
        shm_futex(&h->wake, FUTEX_WAIT, seq, &ts); /* returns at once if seq moved */
    __atomic_store_n(&h->sleeping, 0, __ATOMIC_RELAXED);
}

static unsigned shm_poll(void *state, const onic_xport_params_t *p)
{
    shm_state_t *s = state;
    unsigned n = 0;

    for (uint32_t i = 0; i < s->size; i++) {
        uint32_t r = (s->next_rx + i) % s->size;
        onic_shm_rx_t *rx = &s->rx[r];
        if (r == s->rank || rx->broken)
            continue;
        n += onic_shm_rx_poll(rx, 64, s->max_payload, p->recv_cb, p->cb_arg);
        if (rx->broken) {
            s->drops++;
            onic_error("shm: malformed message from rank %u; ignoring that rank from now on", r);
        }
    }
    s->next_rx = (s->next_rx + 1) % s->size;
    return n;
}

static size_t shm_max_payload(const void *state)
{
    return ((const shm_state_t *)state)->max_payload;
}

static uint64_t shm_drops(const void *state)
{
    return ((const shm_state_t *)state)->drops;
}

const onic_xport_ops_t onic_xport_shm_ops = {
    .name        = "shm",
    .open        = shm_endpoint_open,
    .close       = shm_endpoint_close,
    .send        = shm_send,
    .poll        = shm_poll,
    .max_payload = shm_max_payload,
    .drops       = shm_drops,
    .sleep       = shm_sleep,
};
