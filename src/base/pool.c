#include "base/pool.h"
#include "base/mem.h"

#include <stdint.h>
#include <string.h>

/* Chunks start with one 64-byte line holding the link to the next chunk, so
 * elements stay cache-line aligned when their size is a multiple of 64. */
#define POOL_CHUNK_HEADER 64

void onic_pool_init(onic_pool_t *pool, size_t elem_size, size_t per_chunk)
{
    pool->elem_size = (elem_size + 15) & ~(size_t)15;
    pool->per_chunk = per_chunk ? per_chunk : 64;
    pool->free_list = NULL;
    pool->chunks    = NULL;
    pool->in_use    = 0;
}

__attribute__((cold, noinline)) int onic_pool_grow(onic_pool_t *pool)
{
    char *chunk = onic_cache_alloc(64, POOL_CHUNK_HEADER + pool->elem_size * pool->per_chunk);
    if (chunk == NULL)
        return 0;
    memset(chunk, 0, POOL_CHUNK_HEADER + pool->elem_size * pool->per_chunk);
    *(void **)chunk = pool->chunks;
    pool->chunks = chunk;
    /* Thread the free list so elements are handed out in address order. */
    for (size_t i = pool->per_chunk; i-- > 0;) {
        void **elem = (void **)(chunk + POOL_CHUNK_HEADER + i * pool->elem_size);
        *elem = pool->free_list;
        pool->free_list = elem;
    }
    return 1;
}

void onic_pool_each(const onic_pool_t *pool, void (*fn)(void *elem, void *arg), void *arg)
{
    for (char *chunk = pool->chunks; chunk != NULL; chunk = *(void **)chunk)
        for (size_t i = 0; i < pool->per_chunk; i++)
            fn(chunk + POOL_CHUNK_HEADER + i * pool->elem_size, arg);
}

void onic_pool_fini(onic_pool_t *pool)
{
    void *chunk = pool->chunks;
    while (chunk != NULL) {
        void *next = *(void **)chunk;
        onic_cache_free(chunk);
        chunk = next;
    }
    pool->chunks = NULL;
    pool->free_list = NULL;
    pool->in_use = 0;
}
