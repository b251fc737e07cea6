/* Handle tables: a slot per object with a generation, so a stale handle (of
 * a freed object, or of an earlier NI) names nothing instead of whatever
 * reuses the slot. Slots come from a stack of free indexes; the arrays grow
 * by doubling up to the NI's limit. */
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
    onic_free(t->gen);
    onic_free(t->free);
    memset(t, 0, sizeof(*t));
}

static int htab_grow(onic_ptl_htab_t *t)
{
    uint32_t cap = t->cap == 0 ? 16 : t->cap * 2;
    void **obj;
    uint32_t *gen, *free_idx;

    if (cap > t->max)
        cap = t->max;
    obj = onic_calloc(cap, sizeof(*obj));
    gen = onic_calloc(cap, sizeof(*gen));
    free_idx = onic_calloc(cap, sizeof(*free_idx));
    if (obj == NULL || gen == NULL || free_idx == NULL) {
        onic_free(obj);
        onic_free(gen);
        onic_free(free_idx);
        return 0;
    }
    if (t->cap > 0) {
        memcpy(obj, t->obj, t->cap * sizeof(*obj));
        memcpy(gen, t->gen, t->cap * sizeof(*gen));
        memcpy(free_idx, t->free, t->nfree * sizeof(*free_idx));
    }
    onic_free(t->obj);
    onic_free(t->gen);
    onic_free(t->free);
    t->obj = obj;
    t->gen = gen;
    t->free = free_idx;
    t->cap = cap;
    return 1;
}

onic_status_t onic_ptl_htab_add(onic_ptl_htab_t *t, void *obj, uint64_t *handle_p)
{
    uint32_t index;

    if (t->nfree > 0) {
        index = t->free[--t->nfree];
    } else {
        if (t->used >= t->max)
            return ONIC_ERR_NO_RESOURCE;
        if (t->used == t->cap && !htab_grow(t))
            return ONIC_ERR_NO_MEMORY;
        index = t->used++;
    }
    t->obj[index] = obj;
    t->live++;
    *handle_p = onic_ptl_handle_make(t->kind, t->epoch, t->gen[index], index);
    return ONIC_OK;
}

void onic_ptl_htab_del(onic_ptl_htab_t *t, uint64_t handle)
{
    uint32_t index = (uint32_t)(handle & 0xffffff);

    if (onic_ptl_htab_get(t, handle) == NULL)
        return;
    if (t->hint == handle) {
        t->hint = 0; /* no handle is 0: its kind would be 0 */
        t->hint_obj = NULL;
    }
    t->obj[index] = NULL;
    t->gen[index]++;
    t->free[t->nfree++] = index;
    t->live--;
}
