/* A table of fixed-size records named by 64-bit ids: the slot's index + 1
 * in the low half, its generation in the high half, bumped when the slot is
 * freed. An id kept past its record's end, or forged, finds nothing instead
 * of whatever uses the slot now -- what every table whose ids leave the
 * process (RMA keys, operation cookies) needs. Records move when the table
 * grows: hold ids, not pointers, across calls that may add. */
#ifndef ONIC_BASE_SLOTS_H
#define ONIC_BASE_SLOTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct onic_slots {
    uint8_t *mem;        /* cap slots of stride bytes: a header, then the record */
    size_t   stride, rec_size;
    uint32_t cap, live;
    uint32_t free;       /* index + 1 of the first free slot; 0: none */
    uint32_t max;        /* at most this many slots */
} onic_slots_t;

void     onic_slots_init(onic_slots_t *t, size_t rec_size, uint32_t max);
void     onic_slots_fini(onic_slots_t *t);
/* A zeroed record and its id; NULL when the table is full or out of memory. */
void    *onic_slots_add(onic_slots_t *t, uint64_t *id_p);
/* The live record id names, or NULL. */
void    *onic_slots_find(const onic_slots_t *t, uint64_t id);
/* The id of a live record of t. */
uint64_t onic_slots_id(const onic_slots_t *t, const void *rec);
void     onic_slots_del(onic_slots_t *t, void *rec);
/* The i-th slot's record if live (to walk the table), else NULL. */
void    *onic_slots_at(const onic_slots_t *t, uint32_t i);

#endif
