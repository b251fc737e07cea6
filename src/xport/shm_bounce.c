#include "xport/shm_bounce.h"
#include "base/copy.h"
#include "base/mem.h"

#include <string.h>

static size_t bounce_hdr_bytes(uint32_t nchunks)
{
    size_t bytes = sizeof(onic_shm_bounce_t) + (size_t)nchunks * sizeof(onic_shm_chunk_t);
    return (bytes + ONIC_SHM_BOUNCE_ALIGN - 1) / ONIC_SHM_BOUNCE_ALIGN * ONIC_SHM_BOUNCE_ALIGN;
}

size_t onic_shm_bounce_size(uint32_t nchunks, uint32_t chunk)
{
    return bounce_hdr_bytes(nchunks) + (size_t)nchunks * chunk;
}

onic_status_t onic_shm_btx_init(onic_shm_btx_t *tx, void *bounce, uint32_t nchunks, uint32_t chunk)
{
    memset(tx, 0, sizeof(*tx));
    tx->recs = onic_calloc(nchunks, sizeof(*tx->recs));
    if (tx->recs == NULL)
        return ONIC_ERR_NO_MEMORY;
    tx->b = bounce;
    tx->hdrs = (onic_shm_chunk_t *)(tx->b + 1);
    tx->data = (uint8_t *)bounce + bounce_hdr_bytes(nchunks);
    tx->nchunks = nchunks;
    tx->chunk = chunk;
    return ONIC_OK;
}

void onic_shm_btx_fini(onic_shm_btx_t *tx)
{
    onic_free(tx->recs);
    tx->recs = NULL;
}

void onic_shm_brx_init(onic_shm_brx_t *rx, void *bounce, uint32_t nchunks, uint32_t chunk)
{
    memset(rx, 0, sizeof(*rx));
    rx->b = bounce;
    rx->hdrs = (onic_shm_chunk_t *)(rx->b + 1);
    rx->data = (const uint8_t *)bounce + bounce_hdr_bytes(nchunks);
    rx->nchunks = nchunks;
    rx->chunk = chunk;
}

onic_status_t onic_shm_btx_push(onic_shm_btx_t *tx, const onic_shm_bjob_t *job)
{
    if (tx->job_tail - tx->job_head == ONIC_SHM_BOUNCE_JOBS)
        return ONIC_ERR_NO_RESOURCE;
    tx->jobs[tx->job_tail % ONIC_SHM_BOUNCE_JOBS] = *job;
    tx->jobs[tx->job_tail % ONIC_SHM_BOUNCE_JOBS].done = 0;
    tx->job_tail++;
    return ONIC_OK;
}

/* Chunks the consumer freed: a write is done when its last chunk comes back,
 * with the first error the consumer wrote into any of its chunks. */
static void btx_reclaim(onic_shm_btx_t *tx, onic_shm_write_done_t done, void *arg)
{
    uint64_t consumed = __atomic_load_n(&tx->b->consumed, __ATOMIC_ACQUIRE);

    /* A count outside what was produced is a broken consumer: take none,
     * and say so (the caller stops the job). */
    if (consumed - tx->reclaimed > tx->produced - tx->reclaimed) {
        if (tx->bad == NULL) {
            tx->bad = "consumed count";
            tx->bad_value = consumed;
        }
        return;
    }
    for (; tx->reclaimed != consumed; tx->reclaimed++) {
        uint32_t idx = (uint32_t)(tx->reclaimed & (tx->nchunks - 1));
        struct onic_shm_btx_rec *rec = &tx->recs[idx];
        if (!rec->write)
            continue;
        /* From shared memory: anything but success or a known error is
         * a broken consumer, reported as such. */
        int16_t raw = __atomic_load_n(&tx->hdrs[idx].status, __ATOMIC_RELAXED);
        onic_status_t status = raw == 0 ? ONIC_OK
                             : raw < 0 && raw > ONIC_ERR_LAST ? (onic_status_t)raw : ONIC_ERR_IO;
        if (rec->first)
            tx->reclaim_status = ONIC_OK;
        if (tx->reclaim_status == ONIC_OK)
            tx->reclaim_status = status;
        if (rec->last)
            done(arg, rec->op, tx->reclaim_status);
    }
}

unsigned onic_shm_btx_progress(onic_shm_btx_t *tx, onic_shm_write_done_t done, void *arg)
{
    unsigned filled = 0;

    if (tx->reclaimed != tx->produced)
        btx_reclaim(tx, done, arg);
    while (tx->job_head != tx->job_tail && tx->produced - tx->reclaimed < tx->nchunks) {
        onic_shm_bjob_t *job = &tx->jobs[tx->job_head % ONIC_SHM_BOUNCE_JOBS];
        uint32_t idx = (uint32_t)(tx->produced & (tx->nchunks - 1));
        onic_shm_chunk_t *h = &tx->hdrs[idx];
        uint64_t len = job->len - job->done;

        if (len > tx->chunk)
            len = tx->chunk;
        if (len > 0)
            onic_copy(tx->data + (size_t)idx * tx->chunk, job->src + job->done, len);
        h->op = job->op;
        h->offset = job->done;
        h->key = job->key;
        h->roff = job->roff;
        h->len = (uint32_t)len;
        h->kind = job->kind;
        h->status = job->status;
        job->done += len;
        tx->recs[idx].op = job->op;
        tx->recs[idx].write = job->kind == ONIC_SHM_CHUNK_WRITE_DATA;
        tx->recs[idx].first = job->done == len;
        tx->recs[idx].last = job->done == job->len;
        /* seq_cst: one side of the no-lost-wake-up handshake (shm.c). */
        __atomic_store_n(&h->ready, tx->produced + 1, __ATOMIC_SEQ_CST);
        tx->produced++;
        filled++;
        if (tx->recs[idx].last)
            tx->job_head++;
    }
    return filled;
}

unsigned onic_shm_brx_poll(onic_shm_brx_t *rx, onic_shm_chunk_cb_t cb, void *arg)
{
    unsigned handled = 0;

    while (!rx->broken) {
        uint32_t idx = (uint32_t)(rx->consumed & (rx->nchunks - 1));
        onic_shm_chunk_t *h = &rx->hdrs[idx];
        onic_shm_chunk_t c;
        onic_status_t status;

        if (__atomic_load_n(&h->ready, __ATOMIC_ACQUIRE) != rx->consumed + 1)
            break;
        memcpy(&c, h, sizeof(c));  /* each field read once */
        if (c.kind != ONIC_SHM_CHUNK_READ_ERR && c.kind != ONIC_SHM_CHUNK_READ_DATA &&
            c.kind != ONIC_SHM_CHUNK_WRITE_DATA) {
            rx->bad = "chunk kind";
            rx->bad_value = c.kind;
            rx->broken = 1;
            break;
        }
        if (c.len > rx->chunk || (c.kind == ONIC_SHM_CHUNK_READ_ERR) != (c.len == 0)) {
            rx->bad = "chunk length";
            rx->bad_value = c.len;
            rx->broken = 1;
            break;
        }
        status = cb(arg, &c, rx->data + (size_t)idx * rx->chunk);
        if (status == ONIC_ERR_IO) {
            rx->bad = "chunk operation";
            rx->bad_value = c.op;
            rx->broken = 1;
            break;
        }
        if (c.kind == ONIC_SHM_CHUNK_WRITE_DATA)
            h->status = (int16_t)status;
        rx->consumed++;
        /* seq_cst: the producer may be about to sleep waiting for room. */
        __atomic_store_n(&rx->b->consumed, rx->consumed, __ATOMIC_SEQ_CST);
        handled++;
    }
    return handled;
}
