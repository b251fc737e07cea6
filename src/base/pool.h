/* A pool of fixed-size elements that grows in chunks and never shrinks until
 * destroyed, so steady-state get/put never call the allocator. */
#ifndef ONIC_BASE_POOL_H
#define ONIC_BASE_POOL_H

#include <stddef.h>

typedef struct onic_pool {
    size_t elem_size;  /* rounded up to 16 bytes */
    size_t per_chunk;
    void  *free_list;  /* LIFO: the most recently freed element is the warmest */
    void  *chunks;     /* singly linked through each chunk's first word */
    size_t in_use;
} onic_pool_t;

void  onic_pool_init(onic_pool_t *pool, size_t elem_size, size_t per_chunk);
void  onic_pool_fini(onic_pool_t *pool);
/* Adds a chunk to the free list; 0 if it cannot be allocated. */
int   onic_pool_grow(onic_pool_t *pool);

/* NULL when a new chunk is needed and cannot be allocated. Inline: these two
 * are on every append and match (always: gcc kept a copy of get out of
 * line, a frame for four instructions). */
static inline __attribute__((always_inline)) void *onic_pool_get(onic_pool_t *pool)
{
    void **elem;

    if (__builtin_expect(pool->free_list == NULL, 0) && !onic_pool_grow(pool))
        return NULL;
    elem = pool->free_list;
    pool->free_list = *elem;
    pool->in_use++;
    return elem;
}

/* Call fn on every element of the pool, handed out or free, chunk by
 * chunk: for a walk over what is in use that must cost the hot path
 * nothing. Elements of a new chunk start zeroed; a free element's first
 * pointer-sized bytes are the free list's link, the rest as it was left. */
void  onic_pool_each(const onic_pool_t *pool, void (*fn)(void *elem, void *arg), void *arg);

static inline __attribute__((always_inline)) void onic_pool_put(onic_pool_t *pool, void *elem)
{
    *(void **)elem = pool->free_list;
    pool->free_list = elem;
    pool->in_use--;
}

#endif
