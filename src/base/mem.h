/* Allocation wrappers: every allocation in onic goes through these so tests
 * can inject failures and check that nothing changes when memory runs out. */
#ifndef ONIC_BASE_MEM_H
#define ONIC_BASE_MEM_H

#include <stddef.h>

void *onic_malloc(size_t size);
void *onic_calloc(size_t count, size_t size);
/* NULL on failure, ptr then unchanged. */
void *onic_realloc(void *ptr, size_t size);
/* size is rounded up to a multiple of align. */
void *onic_aligned_alloc(size_t align, size_t size);
void  onic_free(void *ptr);

/* For a cache that keeps what it takes until its owner is destroyed (a
 * pool's chunks, hash buckets, MPI's unexpected-message buffers, a message
 * queue's buffer): failures are injected as for the others, but the leak
 * count leaves these out, since how much a cache keeps follows the peak
 * number in flight, which timing decides. size is rounded up to a multiple
 * of align; give it back to onic_cache_free. */
void *onic_cache_alloc(size_t align, size_t size);
void  onic_cache_free(void *ptr);

/* Test hook: let `successes` more allocations succeed, then fail every one
 * until reset with a negative value (the default: never fail). */
void onic_mem_fail_after(long successes);

/* Test hook: count allocations made through these wrappers less those
 * given back to onic_free, from now on (a leak check: a cycle that gives
 * back everything it took leaves onic_mem_count_net() where it was). */
void onic_mem_count_start(void);
long onic_mem_count_net(void);

#endif
