#include "base/mem.h"

#include <stdatomic.h>
#include <stdlib.h>

static _Atomic long fail_countdown = -1;

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

void *onic_malloc(size_t size)
{
    return mem_should_fail() ? NULL : malloc(size);
}

void *onic_calloc(size_t count, size_t size)
{
    return mem_should_fail() ? NULL : calloc(count, size);
}

void *onic_realloc(void *ptr, size_t size)
{
    return mem_should_fail() ? NULL : realloc(ptr, size);
}

void *onic_aligned_alloc(size_t align, size_t size)
{
    if (mem_should_fail())
        return NULL;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

void onic_free(void *ptr)
{
    free(ptr);
}
