#include "base/slots.h"
#include "base/mem.h"

#include <string.h>

typedef struct slot_hdr {
    uint32_t gen;   /* never 0, so no id is 0 */
    uint32_t next;  /* free list, by index + 1 */
    uint32_t used;
    uint32_t pad;
} slot_hdr_t;

#define SLOTS_MIN 16

static slot_hdr_t *slot(const onic_slots_t *t, uint32_t i)
{
    return (slot_hdr_t *)(t->mem + (size_t)i * t->stride);
}

void onic_slots_init(onic_slots_t *t, size_t rec_size, uint32_t max)
{
    memset(t, 0, sizeof(*t));
    t->rec_size = rec_size;
    t->stride = (sizeof(slot_hdr_t) + rec_size + 15) / 16 * 16;
    t->max = max;
}

void onic_slots_fini(onic_slots_t *t)
{
    onic_free(t->mem);
    t->mem = NULL;
    t->cap = t->live = t->free = 0;
}

static int slots_grow(onic_slots_t *t)
{
    uint32_t cap = t->cap == 0 ? SLOTS_MIN : t->cap * 2;
    uint8_t *mem;

    if (cap > t->max)
        cap = t->max;
    if (cap <= t->cap)
        return 0;
    mem = onic_malloc((size_t)cap * t->stride);
    if (mem == NULL)
        return 0;
    if (t->mem != NULL)
        memcpy(mem, t->mem, (size_t)t->cap * t->stride);
    onic_free(t->mem);
    t->mem = mem;
    for (uint32_t i = cap; i > t->cap; i--) {
        slot_hdr_t *h = slot(t, i - 1);
        h->gen = 1;
        h->used = 0;
        h->next = t->free;
        t->free = i;
    }
    t->cap = cap;
    return 1;
}

void *onic_slots_add(onic_slots_t *t, uint64_t *id_p)
{
    slot_hdr_t *h;

    if (t->free == 0 && !slots_grow(t))
        return NULL;
    h = slot(t, t->free - 1);
    *id_p = (uint64_t)h->gen << 32 | t->free;
    t->free = h->next;
    h->used = 1;
    t->live++;
    memset(h + 1, 0, t->rec_size);
    return h + 1;
}

void *onic_slots_find(const onic_slots_t *t, uint64_t id)
{
    uint64_t index = (id & 0xffffffffu) - 1;
    slot_hdr_t *h;

    if ((id & 0xffffffffu) == 0 || index >= t->cap)
        return NULL;
    h = slot(t, (uint32_t)index);
    return h->used && h->gen == (uint32_t)(id >> 32) ? h + 1 : NULL;
}

uint64_t onic_slots_id(const onic_slots_t *t, const void *rec)
{
    const slot_hdr_t *h = (const slot_hdr_t *)rec - 1;
    uint32_t index = (uint32_t)(((const uint8_t *)h - t->mem) / t->stride);

    return (uint64_t)h->gen << 32 | (index + 1);
}

void onic_slots_del(onic_slots_t *t, void *rec)
{
    slot_hdr_t *h = (slot_hdr_t *)rec - 1;
    uint32_t index = (uint32_t)(((uint8_t *)h - t->mem) / t->stride);

    h->used = 0;
    h->gen = h->gen == UINT32_MAX ? 1 : h->gen + 1;
    h->next = t->free;
    t->free = index + 1;
    t->live--;
}

void *onic_slots_at(const onic_slots_t *t, uint32_t i)
{
    slot_hdr_t *h;

    if (i >= t->cap)
        return NULL;
    h = slot(t, i);
    return h->used ? h + 1 : NULL;
}
