#include "xport/mreg.h"
#include "base/log.h"
#include "base/mem.h"

#include <string.h>

#define MREG_MIN_CAP 16

static uint64_t mreg_id(uint32_t index, uint32_t gen)
{
    return (uint64_t)gen << 32 | (uint64_t)(index + 1);
}

static onic_status_t mreg_grow(onic_xport_mreg_t *t)
{
    uint32_t cap = t->cap == 0 ? MREG_MIN_CAP : t->cap * 2;
    onic_xport_mreg_slot_t *slots;

    if (t->cap >= UINT32_MAX / 2)
        return ONIC_ERR_NO_RESOURCE;
    slots = onic_calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return ONIC_ERR_NO_MEMORY;
    if (t->slots != NULL)
        memcpy(slots, t->slots, t->cap * sizeof(*slots));
    /* The new slots go on the free list, lowest index first. */
    for (uint32_t i = cap; i > t->cap; i--) {
        slots[i - 1].next = t->free;
        t->free = i;
    }
    onic_free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return ONIC_OK;
}

onic_status_t onic_xport_mreg_add(onic_xport_mreg_t *t, void *addr, size_t len,
                                  onic_xport_mkey_t *key_p)
{
    onic_xport_mreg_slot_t *slot;
    uint32_t index;
    onic_status_t status;

    if (t->free == 0 && (status = mreg_grow(t)) != ONIC_OK)
        return status;
    index = t->free - 1;
    slot = &t->slots[index];
    t->free = slot->next;
    slot->addr = (uint64_t)(uintptr_t)addr;
    slot->len = len;
    slot->used = 1;
    if (slot->gen == 0)
        slot->gen = 1;  /* ids are never 0 */
    t->count++;
    key_p->addr = slot->addr;
    key_p->len = slot->len;
    key_p->id = mreg_id(index, slot->gen);
    return ONIC_OK;
}

static onic_xport_mreg_slot_t *mreg_slot(const onic_xport_mreg_t *t, const onic_xport_mkey_t *key)
{
    uint64_t index = (key->id & 0xffffffffu) - 1;
    onic_xport_mreg_slot_t *slot;

    if ((key->id & 0xffffffffu) == 0 || index >= t->cap)
        return NULL;
    slot = &t->slots[index];
    if (!slot->used || slot->gen != (uint32_t)(key->id >> 32) || slot->addr != key->addr ||
        slot->len != key->len)
        return NULL;
    return slot;
}

onic_status_t onic_xport_mreg_del(onic_xport_mreg_t *t, const onic_xport_mkey_t *key)
{
    onic_xport_mreg_slot_t *slot = mreg_slot(t, key);

    if (slot == NULL)
        return ONIC_ERR_NO_ELEM;
    slot->used = 0;
    slot->gen = slot->gen == UINT32_MAX ? 1 : slot->gen + 1;
    slot->next = t->free;
    t->free = (uint32_t)(slot - t->slots) + 1;
    t->count--;
    return ONIC_OK;
}

void *onic_xport_mreg_find(const onic_xport_mreg_t *t, const onic_xport_mkey_t *key,
                           uint64_t offset, uint64_t len)
{
    const onic_xport_mreg_slot_t *slot = mreg_slot(t, key);

    if (slot == NULL || !onic_xport_mkey_covers(slot->len, offset, len))
        return NULL;
    return (void *)(uintptr_t)(slot->addr + offset);
}

void onic_xport_mreg_fini(onic_xport_mreg_t *t)
{
    onic_free(t->slots);
    memset(t, 0, sizeof(*t));
}
