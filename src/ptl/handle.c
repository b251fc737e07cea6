/* Handle tables: a slot per object with a generation, so a stale handle (of
 * a freed object, or of an earlier NI) names nothing instead of whatever
 * reuses the slot (each slot keeps its whole current handle). Slots come
 * from a stack of free indexes; the arrays grow by doubling up to the NI's
 * limit. */
#include "ptl/ptl.h"
#include "base/mem.h"

#include <string.h>

void onic_ptl_htab_init(onic_ptl_htab_t *t, unsigned kind, unsigned epoch, uint32_t max)
{
    memset(t, 0, sizeof(*t));
    t->kind = kind;
    t->epoch = epoch;
    t->max = max < ONIC_PTL_MAX_OBJECTS ? max : ONIC_PTL_MAX_OBJECTS;
}

void onic_ptl_htab_fini(onic_ptl_htab_t *t)
{
    onic_free(t->obj);
    onic_free(t->hnd);
    onic_free(t->free);
    memset(t, 0, sizeof(*t));
}

static int htab_grow(onic_ptl_htab_t *t)
{
    uint32_t cap = t->cap == 0 ? 16 : t->cap * 2;
    void **obj;
    uint64_t *hnd;
    uint32_t *free_idx;

    if (cap > t->max)
        cap = t->max;
    obj = onic_calloc(cap, sizeof(*obj));
    hnd = onic_calloc(cap, sizeof(*hnd));
    free_idx = onic_calloc(cap, sizeof(*free_idx));
    if (obj == NULL || hnd == NULL || free_idx == NULL) {
        onic_free(obj);
        onic_free(hnd);
        onic_free(free_idx);
        return 0;
    }
    if (t->cap > 0) {
        memcpy(obj, t->obj, t->cap * sizeof(*obj));
        memcpy(hnd, t->hnd, t->cap * sizeof(*hnd));
        memcpy(free_idx, t->free, t->nfree * sizeof(*free_idx));
    }
    onic_free(t->obj);
    onic_free(t->hnd);
    onic_free(t->free);
    t->obj = obj;
    t->hnd = hnd;
    t->free = free_idx;
    t->cap = cap;
    return 1;
}

onic_status_t onic_ptl_htab_add_new(onic_ptl_htab_t *t, void *obj, uint64_t *handle_p)
{
    uint32_t index;

    if (t->nfree > 0)
        return onic_ptl_htab_add(t, obj, handle_p);
    if (t->used >= t->max)
        return ONIC_ERR_NO_RESOURCE;
    if (t->used == t->cap && !htab_grow(t))
        return ONIC_ERR_NO_MEMORY;
    index = t->used++;
    t->obj[index] = obj;
    t->live++;
    t->hnd[index] = onic_ptl_handle_make(t->kind, t->epoch, 0, index);
    *handle_p = t->hnd[index];
    return ONIC_OK;
}
