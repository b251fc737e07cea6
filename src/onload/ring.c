#include "onload/ring.h"
#include "base/log.h"

#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_NRECS_MAX (1u << 20)

size_t onic_onload_ring_bytes(uint32_t nrecs, uint32_t rec_size)
{
    if (nrecs < 2 || nrecs > RING_NRECS_MAX || (nrecs & (nrecs - 1)) != 0)
        return 0;
    if (rec_size < ONIC_ONLOAD_REC_MIN || rec_size > ONIC_ONLOAD_REC_MAX ||
        rec_size % ONIC_ONLOAD_LINE != 0)
        return 0;
    return sizeof(onic_onload_ring_hdr_t) + (size_t)nrecs * rec_size;
}

onic_status_t onic_onload_ring_format(void *mem, size_t bytes, uint32_t nrecs, uint32_t rec_size)
{
    onic_onload_ring_hdr_t *h = mem;
    size_t need = onic_onload_ring_bytes(nrecs, rec_size);

    if (mem == NULL || need == 0 || bytes < need) {
        onic_error("onload: cannot format a ring of %u records of %u bytes in %zu bytes",
                   nrecs, rec_size, bytes);
        return ONIC_ERR_INVALID_PARAM;
    }
    memset(h, 0, sizeof(*h));
    h->nrecs    = nrecs;
    h->rec_size = rec_size;
    h->version  = ONIC_ONLOAD_RING_VERSION;
    /* Last: whoever checks the magic sees a complete header. */
    __atomic_store_n(&h->magic, ONIC_ONLOAD_RING_MAGIC, __ATOMIC_RELEASE);
    return ONIC_OK;
}

onic_status_t onic_onload_ring_attach(void *mem, size_t bytes, onic_onload_ring_t *ring_p)
{
    onic_onload_ring_hdr_t *h = mem;
    uint32_t magic, version, nrecs, rec_size;
    size_t need;

    if (mem == NULL || ring_p == NULL || bytes < sizeof(*h)) {
        onic_error("onload: a ring needs at least %zu bytes, got %zu", sizeof(*h), bytes);
        return ONIC_ERR_INVALID_PARAM;
    }
    magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
    version  = h->version;
    nrecs    = h->nrecs;
    rec_size = h->rec_size;
    if (magic != ONIC_ONLOAD_RING_MAGIC) {
        onic_error("onload: no ring here (magic %#x, expected %#x)", magic,
                   ONIC_ONLOAD_RING_MAGIC);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (version != ONIC_ONLOAD_RING_VERSION) {
        onic_error("onload: ring version %u, this onic speaks version %u (engine and "
                   "application from different builds?)", version, ONIC_ONLOAD_RING_VERSION);
        return ONIC_ERR_UNSUPPORTED;
    }
    need = onic_onload_ring_bytes(nrecs, rec_size);
    if (need == 0 || need > bytes) {
        onic_error("onload: ring of %u records of %u bytes does not fit its %zu bytes",
                   nrecs, rec_size, bytes);
        return ONIC_ERR_INVALID_PARAM;
    }
    ring_p->hdr      = h;
    ring_p->recs     = (uint8_t *)(h + 1);
    ring_p->nrecs    = nrecs;
    ring_p->rec_size = rec_size;
    ring_p->next     = 0;
    ring_p->other    = 0;
    ring_p->broken   = 0;
    ring_p->name[0]  = '\0';
    return ONIC_OK;
}

static uint8_t *ring_rec(const onic_onload_ring_t *ring, uint64_t at)
{
    return ring->recs + (size_t)(at & (ring->nrecs - 1)) * ring->rec_size;
}

void onic_onload_ring_fail_stop(onic_onload_ring_t *ring, const char *name)
{
    snprintf(ring->name, sizeof(ring->name), "%s", name != NULL ? name : "a ring");
}

/* what names the field read and its value a, then the value it was
 * checked against, b. */
static void ring_break(onic_onload_ring_t *ring, const char *what, uint64_t a, uint64_t b)
{
    if (ring->name[0] != '\0')
        onic_log_fail_stop(ONIC_EXIT_CORRUPT, "onload: corrupt data in %s: %s: %llu (against "
                           "%llu); stopping the job", ring->name, what, (unsigned long long)a,
                           (unsigned long long)b);
    if (!ring->broken)
        onic_error("onload: ring broken: %s (%llu, %llu); it is no longer used", what,
                   (unsigned long long)a, (unsigned long long)b);
    ring->broken = 1;
}

/* Producer: refresh the consumer's head. Returns 0 when it makes no sense. */
static int ring_read_head(onic_onload_ring_t *ring)
{
    uint64_t head = __atomic_load_n(&ring->hdr->head, __ATOMIC_ACQUIRE);

    if (head > ring->next || ring->next - head > ring->nrecs || head < ring->other) {
        ring_break(ring, "the consumer's head is out of range (the producer's tail)", head,
                   ring->next);
        return 0;
    }
    ring->other = head;
    return 1;
}

/* Consumer: refresh the producer's tail. */
static int ring_read_tail(onic_onload_ring_t *ring, int order)
{
    uint64_t tail = __atomic_load_n(&ring->hdr->tail, order);

    if (tail < ring->next || tail - ring->next > ring->nrecs) {
        ring_break(ring, "the producer's tail is out of range (the consumer's head)", tail,
                   ring->next);
        return 0;
    }
    ring->other = tail;
    return 1;
}

static long ring_futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

/* Copy between a record's payload and buf: the payload starts after the
 * record's header and runs on through the following slots, wrapping at the
 * end of the ring. */
static void ring_copy(const onic_onload_ring_t *ring, uint64_t at, void *buf, size_t len, int out)
{
    size_t area = (size_t)ring->nrecs * ring->rec_size;
    size_t pos = (size_t)(at & (ring->nrecs - 1)) * ring->rec_size + sizeof(onic_onload_rec_hdr_t);
    size_t first = len < area - pos ? len : area - pos;

    if (out) {
        memcpy(buf, ring->recs + pos, first);
        memcpy((uint8_t *)buf + first, ring->recs, len - first);
    } else {
        memcpy(ring->recs + pos, buf, first);
        memcpy(ring->recs, (const uint8_t *)buf + first, len - first);
    }
}

onic_status_t onic_onload_ring_push(onic_onload_ring_t *ring, uint32_t kind, const void *data,
                                    size_t len)
{
    onic_onload_rec_hdr_t rh = {kind, (uint32_t)len};
    uint64_t slots;

    if (ring->broken)
        return ONIC_ERR_IO;
    if (len > onic_onload_ring_len_max(ring) || (len > 0 && data == NULL))
        return ONIC_ERR_INVALID_PARAM;
    slots = onic_onload_ring_slots(ring, len);
    /* The cached head is enough while it leaves room: the consumer only
     * moves it forward. */
    if (ring->next + slots - ring->other > ring->nrecs) {
        if (!ring_read_head(ring))
            return ONIC_ERR_IO;
        if (ring->next + slots - ring->other > ring->nrecs)
            return ONIC_ERR_NO_RESOURCE;
    }
    memcpy(ring_rec(ring, ring->next), &rh, sizeof(rh));
    if (len > 0)
        ring_copy(ring, ring->next, (void *)data, len, 0);
    ring->next += slots;
    /* seq_cst, with the load of `sleeping` after it and the sleeper's
     * store-then-check in onic_onload_ring_sleep: either the sleeper sees
     * this record or we see it asleep. */
    __atomic_store_n(&ring->hdr->tail, ring->next, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ring->hdr->sleeping, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&ring->hdr->wake, 1, __ATOMIC_RELEASE);
        ring_futex(&ring->hdr->wake, FUTEX_WAKE, 1, NULL);
    }
    return ONIC_OK;
}

onic_status_t onic_onload_ring_pop(onic_onload_ring_t *ring, uint32_t *kind_p, void *buf,
                                   size_t cap, size_t *len_p)
{
    onic_onload_rec_hdr_t rh;
    uint64_t slots;

    if (ring->broken)
        return ONIC_ERR_IO;
    if (ring->next == ring->other) {
        if (!ring_read_tail(ring, __ATOMIC_ACQUIRE))
            return ONIC_ERR_IO;
        if (ring->next == ring->other)
            return ONIC_ERR_NO_ELEM;
    }
    memcpy(&rh, ring_rec(ring, ring->next), sizeof(rh)); /* once: the producer may rewrite it */
    /* The producer publishes a record's slots with one store of its tail. */
    slots = onic_onload_ring_slots(ring, rh.len);
    if (rh.len > onic_onload_ring_len_max(ring) || slots > ring->other - ring->next) {
        ring_break(ring, "a record's length is longer than what was published (at record)",
                   rh.len, ring->next);
        return ONIC_ERR_IO;
    }
    if (rh.len > cap) {
        ring_break(ring, "a record's length is longer than its reader takes", rh.len, cap);
        return ONIC_ERR_IO;
    }
    if (rh.len > 0)
        ring_copy(ring, ring->next, buf, rh.len, 1);
    ring->next += slots;
    __atomic_store_n(&ring->hdr->head, ring->next, __ATOMIC_RELEASE);
    *kind_p = rh.kind;
    *len_p = rh.len;
    return ONIC_OK;
}

uint32_t onic_onload_ring_count(onic_onload_ring_t *ring)
{
    if (ring->broken || !ring_read_tail(ring, __ATOMIC_ACQUIRE))
        return 0;
    return (uint32_t)(ring->other - ring->next);
}

uint32_t onic_onload_ring_room(onic_onload_ring_t *ring)
{
    if (ring->broken || !ring_read_head(ring))
        return 0;
    return ring->nrecs - (uint32_t)(ring->next - ring->other);
}

int onic_onload_ring_pending(onic_onload_ring_t *ring)
{
    if (ring->broken || !ring_read_tail(ring, __ATOMIC_SEQ_CST))
        return 0;
    return ring->other != ring->next;
}

void onic_onload_ring_sleep(onic_onload_ring_t *ring, uint64_t timeout_ns)
{
    onic_onload_ring_hdr_t *h = ring->hdr;
    uint32_t seq = __atomic_load_n(&h->wake, __ATOMIC_ACQUIRE);
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};

    if (ring->broken)
        return;
    __atomic_store_n(&h->sleeping, 1, __ATOMIC_SEQ_CST);
    /* Shared futex (not _PRIVATE): the producer is another process. It
     * returns at once if the word moved since we read it. */
    if (ring_read_tail(ring, __ATOMIC_SEQ_CST) && ring->other == ring->next)
        ring_futex(&h->wake, FUTEX_WAIT, seq, &ts);
    __atomic_store_n(&h->sleeping, 0, __ATOMIC_RELAXED);
}
