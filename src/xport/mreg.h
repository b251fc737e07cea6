/* Memory this process exposes to RMA: a table of registered ranges, each
 * named by a slot id (base/slots.h), so a key kept after mem_dereg, or
 * forged, finds nothing instead of stale memory. Every range a peer names
 * is checked here before this process touches it. */
#ifndef ONIC_XPORT_MREG_H
#define ONIC_XPORT_MREG_H

#include "xport/xport.h"
#include "base/slots.h"

typedef struct onic_xport_mreg {
    onic_slots_t ranges;  /* of {addr, len}; created on first use */
    int          ready;
} onic_xport_mreg_t;

onic_status_t onic_xport_mreg_add(onic_xport_mreg_t *t, void *addr, size_t len,
                                  onic_xport_mkey_t *key_p);
onic_status_t onic_xport_mreg_del(onic_xport_mreg_t *t, const onic_xport_mkey_t *key);
/* The local address of [offset, offset + len) of the range key names, or
 * NULL if key is not a live registration of this table (id, address and
 * length all agree) or the bytes fall outside it. */
void         *onic_xport_mreg_find(const onic_xport_mreg_t *t, const onic_xport_mkey_t *key,
                                   uint64_t offset, uint64_t len);
void          onic_xport_mreg_fini(onic_xport_mreg_t *t);

/* Whether [offset, offset + len) lies inside a range of key_len bytes. */
static inline int onic_xport_mkey_covers(uint64_t key_len, uint64_t offset, uint64_t len)
{
    return offset <= key_len && len <= key_len - offset;
}

#endif
