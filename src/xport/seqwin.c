#include "xport/seqwin.h"
#include "base/mem.h"

void onic_seqwin_init(onic_seqwin_t *w, uint32_t size)
{
    w->next = 0;
    w->size = size < 1 ? 1 : size > ONIC_SEQWIN_MAX ? ONIC_SEQWIN_MAX : size;
    w->mask = 1;
    while (w->mask < w->size)
        w->mask <<= 1;
    w->mask--;
    w->nheld = 0;
    w->held = NULL;
}

onic_seqwin_verdict_t onic_seqwin_check(const onic_seqwin_t *w, uint16_t seq)
{
    uint16_t ahead = (uint16_t)(seq - w->next);

    /* Held already, even as the next (its turn came but a poll's budget
     * left it for the next poll): a duplicate. */
    if (ahead >= w->size || (w->held != NULL && w->held[seq & w->mask] != NULL))
        return ONIC_SEQWIN_BAD;
    return ahead == 0 ? ONIC_SEQWIN_NEXT : ONIC_SEQWIN_HOLD;
}

onic_status_t onic_seqwin_hold(onic_seqwin_t *w, uint16_t seq, void *item)
{
    if (w->held == NULL) {
        w->held = onic_calloc((size_t)w->mask + 1, sizeof(*w->held));
        if (w->held == NULL)
            return ONIC_ERR_NO_MEMORY;
    }
    w->held[seq & w->mask] = item;
    w->nheld++;
    return ONIC_OK;
}

void *onic_seqwin_take(onic_seqwin_t *w)
{
    void *item;

    if (w->nheld == 0)
        return NULL;
    item = w->held[w->next & w->mask];
    if (item != NULL) {
        w->held[w->next & w->mask] = NULL;
        w->nheld--;
    }
    return item;
}

void onic_seqwin_fini(onic_seqwin_t *w)
{
    onic_free(w->held);
    w->held = NULL;
    w->nheld = 0;
}
