/* One sender's bounce buffer in a receiver's shared-memory region: the copy
 * mechanism of shm RMA. The sender (producer) copies an operation's data
 * into fixed-size chunks while the receiver (consumer) copies earlier chunks
 * out, so both copy at once and a large transfer runs at the speed of the
 * slower copy, not of the two in turn. Data always flows from the producer to
 * the consumer: the data of an RMA read by the consumer, or of an RMA write by
 * the producer.
 *
 * Each chunk has a header line whose first word, `ready`, is the chunk's
 * sequence number + 1, stored last with release; the consumer frees chunks
 * by publishing its `consumed` count, and before freeing a write's chunk
 * writes its status into the header, which is how the producer learns that a
 * write landed (or why not) without another message.
 *
 * Nothing read from the buffer is trusted: the consumer checks every header
 * (kind, length, and through its handler the operation and range), the
 * producer every consumed count (never beyond what it produced), and a bad
 * one breaks the buffer, with the field and value (`bad`, `bad_value`): the
 * caller stops the job. */
#ifndef ONIC_XPORT_SHM_BOUNCE_H
#define ONIC_XPORT_SHM_BOUNCE_H

#include "xport/xport.h"

#define ONIC_SHM_BOUNCE_ALIGN 4096
/* Producer jobs one bounce buffer can hold: an initiator keeps at most
 * ONIC_SHM_RMA_WINDOW copy operations in flight with one peer, so jobs for
 * its reads plus the producer's own writes fit twice that. */
#define ONIC_SHM_RMA_WINDOW  64
#define ONIC_SHM_BOUNCE_JOBS (2 * ONIC_SHM_RMA_WINDOW)

enum {
    ONIC_SHM_CHUNK_READ_DATA  = 1,  /* data the consumer asked for */
    ONIC_SHM_CHUNK_READ_ERR   = 2,  /* the producer refused the read: status says why */
    ONIC_SHM_CHUNK_WRITE_DATA = 3,  /* data for the consumer's range (key, roff) */
};

/* In shared memory, one line per chunk. */
typedef struct onic_shm_chunk {
    uint64_t ready;   /* sequence number + 1, written last */
    uint64_t op;      /* the operation's id at its initiator */
    uint64_t offset;  /* of this chunk's data within the operation */
    onic_xport_mkey_t key;  /* WRITE_DATA: the consumer's range */
    uint64_t roff;    /* WRITE_DATA: the operation's offset in it */
    uint32_t len;
    uint16_t kind;
    int16_t  status;  /* READ_ERR: from the producer; WRITE_DATA: from the consumer */
} onic_shm_chunk_t;

static_assert(sizeof(onic_shm_chunk_t) == 64, "a chunk header is one line");

typedef struct onic_shm_bounce {
    uint64_t consumed;  /* chunks freed by the consumer, ever */
    uint8_t  pad[56];
} onic_shm_bounce_t;

/* Bytes of one bounce buffer: header and chunk headers rounded up to
 * ONIC_SHM_BOUNCE_ALIGN, so every chunk's data is page-aligned, then data. */
size_t onic_shm_bounce_size(uint32_t nchunks, uint32_t chunk);

/* A queued producer job. */
typedef struct onic_shm_bjob {
    uint16_t          kind;
    int16_t           status;  /* READ_ERR */
    uint64_t          op;
    const uint8_t    *src;
    uint64_t          len, done;
    onic_xport_mkey_t key;     /* WRITE_DATA */
    uint64_t          roff;
} onic_shm_bjob_t;

/* The producer's private view. */
typedef struct onic_shm_btx {
    onic_shm_bounce_t *b;
    onic_shm_chunk_t  *hdrs;
    uint8_t           *data;
    uint32_t           nchunks, chunk;
    uint64_t           produced, reclaimed;
    onic_status_t      reclaim_status;  /* of the write being reclaimed */
    struct onic_shm_btx_rec {  /* what each chunk in flight carries */
        uint64_t op;
        uint8_t  write, first, last;
    }                 *recs;   /* nchunks, private */
    onic_shm_bjob_t    jobs[ONIC_SHM_BOUNCE_JOBS];
    uint32_t           job_head, job_tail;  /* jobs[head, tail), mod the array */
    const char        *bad;     /* the consumer's field that made no sense; NULL: none */
    uint64_t           bad_value;
} onic_shm_btx_t;

/* The consumer's private view. */
typedef struct onic_shm_brx {
    onic_shm_bounce_t *b;
    onic_shm_chunk_t  *hdrs;
    const uint8_t     *data;
    uint32_t           nchunks, chunk;
    uint64_t           consumed;
    int                broken;
    const char        *bad;     /* why: the chunk header's field */
    uint64_t           bad_value;
} onic_shm_brx_t;

/* The producer learns a write finished (every chunk consumed; status the
 * first error the consumer reported, or ONIC_OK). */
typedef void (*onic_shm_write_done_t)(void *arg, uint64_t op, onic_status_t status);
/* The consumer handles one checked chunk: copy data to where op (READ_DATA)
 * or key + roff + offset (WRITE_DATA) says, or fail op (READ_ERR). Returns
 * the status to report for a write chunk; ONIC_ERR_IO for a chunk that makes
 * no sense for its operation breaks the buffer. */
typedef onic_status_t (*onic_shm_chunk_cb_t)(void *arg, const onic_shm_chunk_t *hdr,
                                             const void *data);

onic_status_t onic_shm_btx_init(onic_shm_btx_t *tx, void *bounce, uint32_t nchunks, uint32_t chunk);
void          onic_shm_btx_fini(onic_shm_btx_t *tx);
void          onic_shm_brx_init(onic_shm_brx_t *rx, void *bounce, uint32_t nchunks, uint32_t chunk);

/* Queue a job; ONIC_ERR_NO_RESOURCE when the job ring is full. */
onic_status_t onic_shm_btx_push(onic_shm_btx_t *tx, const onic_shm_bjob_t *job);
/* Reclaim freed chunks (reporting finished writes) and fill free chunks
 * from the jobs. Returns how many chunks it filled. */
unsigned      onic_shm_btx_progress(onic_shm_btx_t *tx, onic_shm_write_done_t done, void *arg);
/* Whether the producer has anything queued or in flight. */
static inline int onic_shm_btx_busy(const onic_shm_btx_t *tx)
{
    return tx->job_head != tx->job_tail || tx->reclaimed != tx->produced;
}
/* Whether the consumer freed chunks the producer has not reclaimed yet.
 * seq_cst: a producer's re-check before it sleeps. */
static inline int onic_shm_btx_freed(const onic_shm_btx_t *tx)
{
    return __atomic_load_n(&tx->b->consumed, __ATOMIC_SEQ_CST) != tx->reclaimed;
}

/* Handle every ready chunk in order through cb and free it. Returns how many
 * it handled; sets rx->broken on a malformed chunk. */
unsigned      onic_shm_brx_poll(onic_shm_brx_t *rx, onic_shm_chunk_cb_t cb, void *arg);
/* Whether a chunk is ready (acquire: for polling). */
static inline int onic_shm_brx_ready(const onic_shm_brx_t *rx)
{
    return __atomic_load_n(&rx->hdrs[rx->consumed & (rx->nchunks - 1)].ready,
                           __ATOMIC_ACQUIRE) == rx->consumed + 1;
}

/* Whether a chunk is ready. seq_cst: a consumer's re-check before it sleeps. */
static inline int onic_shm_brx_pending(const onic_shm_brx_t *rx)
{
    return __atomic_load_n(&rx->hdrs[rx->consumed & (rx->nchunks - 1)].ready,
                           __ATOMIC_SEQ_CST) == rx->consumed + 1;
}

#endif
