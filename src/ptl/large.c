/* The large puts and gets this process started, by cookie: slot index and
 * generation, like a handle, so a DONE or reply naming a finished or forged
 * operation finds nothing. */
#include "ptl/ptl.h"
#include "base/mem.h"

#include <string.h>

int onic_ptl_large_add(onic_ptl_ni_t *ni, uint64_t *cookie_p, onic_ptl_large_t **rec_p)
{
    onic_ptl_large_t *rec;

    if (ni->large_free == 0) {
        uint32_t cap = ni->large_cap == 0 ? 16 : ni->large_cap * 2;
        onic_ptl_large_t *t;
        if (ni->large_cap >= ONIC_PTL_MAX_OBJECTS)
            return PTL_NO_SPACE;
        t = onic_calloc(cap, sizeof(*t));
        if (t == NULL)
            return PTL_NO_SPACE;
        if (ni->large != NULL)
            memcpy(t, ni->large, ni->large_cap * sizeof(*t));
        for (uint32_t i = cap; i > ni->large_cap; i--) {
            t[i - 1].gen = 1;
            t[i - 1].next = ni->large_free;
            ni->large_free = i;
        }
        onic_free(ni->large);
        ni->large = t;
        ni->large_cap = cap;
    }
    rec = &ni->large[ni->large_free - 1];
    ni->large_free = rec->next;
    rec->used = 1;
    *cookie_p = (uint64_t)rec->gen << 32 | (uint64_t)(rec - ni->large + 1);
    *rec_p = rec;
    return PTL_OK;
}

onic_ptl_large_t *onic_ptl_large_find(onic_ptl_ni_t *ni, uint64_t cookie, uint32_t src)
{
    uint64_t index = (cookie & 0xffffffffu) - 1;
    onic_ptl_large_t *rec;

    if ((cookie & 0xffffffffu) == 0 || index >= ni->large_cap)
        return NULL;
    rec = &ni->large[index];
    if (!rec->used || rec->gen != (uint32_t)(cookie >> 32) || rec->target != src)
        return NULL;
    return rec;
}

void onic_ptl_large_del(onic_ptl_ni_t *ni, onic_ptl_large_t *rec)
{
    uint32_t gen = rec->gen == UINT32_MAX ? 1 : rec->gen + 1;

    memset(rec, 0, sizeof(*rec));
    rec->gen = gen;
    rec->next = ni->large_free;
    ni->large_free = (uint32_t)(rec - ni->large) + 1;
}

void onic_ptl_large_fini(onic_ptl_ni_t *ni)
{
    onic_free(ni->large);
    ni->large = NULL;
    ni->large_cap = ni->large_free = 0;
}
