/* The large puts and gets this process started, by cookie: a slot id
 * (base/slots.h), so a DONE or reply naming a finished or forged operation
 * finds nothing. */
#include "ptl/ptl.h"
#include "base/mem.h"

void onic_ptl_large_init(onic_ptl_ni_t *ni)
{
    onic_slots_init(&ni->large, sizeof(onic_ptl_large_t), ONIC_PTL_MAX_OBJECTS);
}

int onic_ptl_large_add(onic_ptl_ni_t *ni, uint64_t *cookie_p, onic_ptl_large_t **rec_p)
{
    *rec_p = onic_slots_add(&ni->large, cookie_p);
    return *rec_p != NULL ? PTL_OK : PTL_NO_SPACE;
}

onic_ptl_large_t *onic_ptl_large_find(onic_ptl_ni_t *ni, uint64_t cookie, uint32_t src)
{
    onic_ptl_large_t *rec = onic_slots_find(&ni->large, cookie);

    return rec != NULL && rec->target == src ? rec : NULL;
}

void onic_ptl_large_del(onic_ptl_ni_t *ni, onic_ptl_large_t *rec)
{
    onic_free(rec->bounce);
    onic_slots_del(&ni->large, rec);
}

void onic_ptl_large_fini(onic_ptl_ni_t *ni)
{
    onic_ptl_large_t *rec;

    for (uint32_t i = 0; i < ni->large.cap; i++)
        if ((rec = onic_slots_at(&ni->large, i)) != NULL)
            onic_free(rec->bounce);
    onic_slots_fini(&ni->large);
}
