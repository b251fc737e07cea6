#include "base/mem.h"

#include <stdatomic.h>
#include <stdlib.h>

static _Atomic long fail_countdown = -1;
/* The leak count (onic_mem_count_start): off, it costs one relaxed load. */
static _Atomic int  counting;
static _Atomic long counted;

static void mem_count(long d)
{
    if (__builtin_expect(atomic_load_explicit(&counting, memory_order_relaxed), 0))
        atomic_fetch_add_explicit(&counted, d, memory_order_relaxed);
}

static int mem_should_fail(void)
{
    long left = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    if (__builtin_expect(left < 0, 1))
        return 0;
    if (left == 0)
        return 1;
    atomic_fetch_sub_explicit(&fail_countdown, 1, memory_order_relaxed);
    return 0;
}

void onic_mem_fail_after(long successes)
{
    atomic_store(&fail_countdown, successes < 0 ? -1 : successes);
}

void onic_mem_count_start(void)
{
    atomic_store(&counted, 0);
    atomic_store(&counting, 1);
}

long onic_mem_count_net(void)
{
    return atomic_load(&counted);
}

void *onic_malloc(size_t size)
{
    void *p = mem_should_fail() ? NULL : malloc(size);

    if (p != NULL)
        mem_count(1);
    return p;
}

void *onic_calloc(size_t count, size_t size)
{
    void *p = mem_should_fail() ? NULL : calloc(count, size);

    if (p != NULL)
        mem_count(1);
    return p;
}

void *onic_realloc(void *ptr, size_t size)
{
    void *p = mem_should_fail() ? NULL : realloc(ptr, size);

    if (p != NULL && ptr == NULL)
        mem_count(1);
    return p;
}

void *onic_cache_alloc(size_t align, size_t size)
{
    if (mem_should_fail())
        return NULL;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

void *onic_aligned_alloc(size_t align, size_t size)
{
    void *p = onic_cache_alloc(align, size);

    if (p != NULL)
        mem_count(1);
    return p;
}

void onic_cache_free(void *ptr)
{
    free(ptr);
}

void onic_free(void *ptr)
{
    if (ptr != NULL)
        mem_count(-1);
    free(ptr);
}
