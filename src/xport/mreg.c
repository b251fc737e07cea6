#include "xport/mreg.h"

typedef struct mreg_range {
    uint64_t addr, len;
} mreg_range_t;

onic_status_t onic_xport_mreg_add(onic_xport_mreg_t *t, void *addr, size_t len,
                                  onic_xport_mkey_t *key_p)
{
    mreg_range_t *r;

    if (!t->ready) {
        onic_slots_init(&t->ranges, sizeof(mreg_range_t), UINT32_MAX / 2);
        t->ready = 1;
    }
    r = onic_slots_add(&t->ranges, &key_p->id);
    if (r == NULL)
        return ONIC_ERR_NO_MEMORY;
    r->addr = key_p->addr = (uint64_t)(uintptr_t)addr;
    r->len = key_p->len = len;
    return ONIC_OK;
}

static mreg_range_t *mreg_range(const onic_xport_mreg_t *t, const onic_xport_mkey_t *key)
{
    mreg_range_t *r = t->ready ? onic_slots_find(&t->ranges, key->id) : NULL;

    return r != NULL && r->addr == key->addr && r->len == key->len ? r : NULL;
}

onic_status_t onic_xport_mreg_del(onic_xport_mreg_t *t, const onic_xport_mkey_t *key)
{
    mreg_range_t *r = mreg_range(t, key);

    if (r == NULL)
        return ONIC_ERR_NO_ELEM;
    onic_slots_del(&t->ranges, r);
    return ONIC_OK;
}

void *onic_xport_mreg_find(const onic_xport_mreg_t *t, const onic_xport_mkey_t *key,
                           uint64_t offset, uint64_t len)
{
    const mreg_range_t *r = mreg_range(t, key);

    if (r == NULL || !onic_xport_mkey_covers(r->len, offset, len))
        return NULL;
    return (void *)(uintptr_t)(r->addr + offset);
}

void onic_xport_mreg_fini(onic_xport_mreg_t *t)
{
    if (t->ready)
        onic_slots_fini(&t->ranges);
    t->ready = 0;
}
