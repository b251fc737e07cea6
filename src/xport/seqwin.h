/* One sender's messages put back in the order it sent them, for a transport
 * whose provider may complete receives out of order (libfabric promises
 * FI_ORDER_SAS for delivery, nothing for completions, and tcp's rxm
 * reports FI_ORDER_NONE). Each message carries a 16-bit number; credits
 * keep at most `size` of a sender's messages in flight, so an arriving
 * number is the next one, or a later one to hold until the gap fills, or a
 * protocol error (a duplicate, or beyond the window). */
#ifndef ONIC_XPORT_SEQWIN_H
#define ONIC_XPORT_SEQWIN_H

#include "onic/status.h"

#include <stddef.h>
#include <stdint.h>

#define ONIC_SEQWIN_MAX 32768u /* numbers are 16 bits: half the space at most */

typedef enum onic_seqwin_verdict {
    ONIC_SEQWIN_NEXT = 0, /* hand it up now, then onic_seqwin_advance */
    ONIC_SEQWIN_HOLD = 1, /* early: onic_seqwin_hold it */
    ONIC_SEQWIN_BAD  = 2  /* a number held already or outside the window */
} onic_seqwin_verdict_t;

typedef struct onic_seqwin {
    uint16_t next;   /* the number of the next message to hand up */
    uint32_t size;   /* at most this many in flight, 1 to ONIC_SEQWIN_MAX */
    uint32_t mask;   /* slots - 1: a power of two >= size, which divides 2^16, so a
                        number keeps its slot across the wrap */
    uint32_t nheld;
    void   **held;   /* slots by number & mask; NULL until the first hold */
} onic_seqwin_t;

void                  onic_seqwin_init(onic_seqwin_t *w, uint32_t size);
onic_seqwin_verdict_t onic_seqwin_check(const onic_seqwin_t *w, uint16_t seq);
/* Keep item (not NULL) for seq, which check called HOLD.
 * ONIC_ERR_NO_MEMORY the first time if the slots cannot be allocated. */
onic_status_t         onic_seqwin_hold(onic_seqwin_t *w, uint16_t seq, void *item);
/* The next message was handed up. */
static inline void    onic_seqwin_advance(onic_seqwin_t *w) { w->next++; }
/* Whether the item that is now next is held. */
static inline int     onic_seqwin_ready(const onic_seqwin_t *w)
{
    return w->nheld > 0 && w->held[w->next & w->mask] != NULL;
}
/* The held item that is now next, removed (the caller hands it up, then
 * advances), or NULL. */
void                 *onic_seqwin_take(onic_seqwin_t *w);
void                  onic_seqwin_fini(onic_seqwin_t *w);

#endif
