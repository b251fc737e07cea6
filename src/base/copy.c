#include "base/copy.h"

#include <stdatomic.h>

#include <unistd.h>

size_t onic_copy_max = 512 * 1024;
_Atomic uint64_t onic_copy_pieced;

/* Not `cold`: gcc would make each memcpy a rep movsb, the slow copy. */
__attribute__((noinline)) void onic_copy_pieces(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    size_t piece = ONIC_COPY_PIECE;

    /* A length the compiler cannot see: a known one is inlined as rep
     * movsq, which is slow here too. */
    __asm__("" : "+r"(piece));
    atomic_fetch_add_explicit(&onic_copy_pieced, 1, memory_order_relaxed);
    for (; n > piece; n -= piece, d += piece, s += piece)
        memcpy(d, s, piece);
    memcpy(d, s, n);
}

__attribute__((noinline)) void onic_copy_large(void *dst, const void *src, size_t n)
{
    if (__builtin_expect(onic_copy_aliased(dst, src, n), 0))
        onic_copy_pieces(dst, src, n);
    else
        memcpy(dst, src, n);
}

/* Before any copy: a constructor, so every program that links the library
 * (the onload engine, the tools) has it without an init call. */
__attribute__((constructor)) static void copy_init(void)
{
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

    if (l2 > ONIC_COPY_PIECE)
        onic_copy_max = (size_t)l2;
}
