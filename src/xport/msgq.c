#include "xport/msgq.h"
#include "base/log.h"
#include "base/copy.h"
#include "base/mem.h"

#include <string.h>

typedef struct msgq_rec {
    uint32_t src, user_len, len, pad;
    uint8_t  user[ONIC_XPORT_USER_HDR];
} msgq_rec_t;

static size_t msgq_rec_size(size_t len)
{
    return (sizeof(msgq_rec_t) + len + 7) & ~(size_t)7;
}

onic_status_t onic_xport_msgq_push(onic_xport_msgq_t *q, uint32_t src, const void *user_hdr,
                                   size_t user_len, const void *payload, size_t len)
{
    size_t need = msgq_rec_size(len);
    msgq_rec_t rec;

    if (len > ONIC_XPORT_MID_CAP || user_len > ONIC_XPORT_USER_HDR) {
        onic_error("xport: a queued message of %zu + %zu bytes is over the limits (%u, %d)",
                   user_len, len, ONIC_XPORT_MID_CAP, ONIC_XPORT_USER_HDR);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (q->tail + need > q->cap) {
        if (q->head > 0 && !q->draining) { /* slide the live records down first */
            memmove(q->buf, q->buf + q->head, q->tail - q->head);
            q->tail -= q->head;
            q->head = 0;
        }
        if (q->tail + need > q->cap) {
            size_t cap = q->cap ? q->cap : 4096;
            uint8_t *buf;
            while (cap < q->tail + need)
                cap *= 2;
            /* a cache (onic_cache_alloc): its size follows the longest
             * backlog, which timing decides */
            buf = onic_cache_alloc(64, cap);
            if (buf == NULL) {
                onic_error("xport: cannot grow a message queue to %zu bytes", cap);
                return ONIC_ERR_NO_MEMORY;
            }
            if (q->tail > 0)
                memcpy(buf, q->buf, q->tail);
            onic_cache_free(q->buf); /* nobody reads it: drain copies records out */
            q->buf = buf;
            q->cap = cap;
        }
    }
    memset(&rec, 0, sizeof(rec));
    rec.src = src;
    rec.user_len = (uint32_t)user_len;
    rec.len = (uint32_t)len;
    if (user_len > 0)
        memcpy(rec.user, user_hdr, user_len);
    memcpy(q->buf + q->tail, &rec, sizeof(rec));
    if (len > 0)
        onic_copy(q->buf + q->tail + sizeof(rec), payload, len);
    q->tail += need;
    return ONIC_OK;
}

unsigned onic_xport_msgq_drain(onic_xport_msgq_t *q, unsigned max, onic_xport_recv_cb_t cb,
                               void *cb_arg)
{
    unsigned n = 0;

    if (q->draining)
        return 0;
    q->draining = 1;
    while (q->head < q->tail && n < max) {
        /* Records keep their offsets while draining (no slide), and each is
         * copied out: a callback's push may move buf. */
        msgq_rec_t rec;
        uint8_t small[ONIC_XPORT_MAX_PAYLOAD], *payload = small;
        memcpy(&rec, q->buf + q->head, sizeof(rec));
        if (rec.len > sizeof(small) && (payload = onic_malloc(rec.len)) == NULL)
            break; /* kept: the next drain tries again */
        memcpy(payload, q->buf + q->head + sizeof(rec), rec.len);
        q->head += msgq_rec_size(rec.len);
        cb(cb_arg, rec.src, rec.user, rec.user_len, payload, rec.len);
        if (payload != small)
            onic_free(payload);
        n++;
    }
    if (q->head == q->tail)
        q->head = q->tail = 0;
    q->draining = 0;
    return n;
}

unsigned onic_xport_msgq_send(onic_xport_msgq_t *q, onic_xport_msgq_send_fn_t send, void *arg)
{
    unsigned n = 0;

    if (q->draining)
        return 0;
    q->draining = 1;
    while (q->head < q->tail) {
        /* In place: send copies the message out and never pushes here. */
        const msgq_rec_t *rec = (const msgq_rec_t *)(void *)(q->buf + q->head);
        if (send(arg, rec->src, rec->user, rec->user_len, rec + 1, rec->len) ==
            ONIC_ERR_NO_RESOURCE)
            break;
        q->head += msgq_rec_size(rec->len);
        n++;
    }
    if (q->head == q->tail)
        q->head = q->tail = 0;
    q->draining = 0;
    return n;
}

void onic_xport_msgq_fini(onic_xport_msgq_t *q)
{
    onic_cache_free(q->buf);
    memset(q, 0, sizeof(*q));
}
