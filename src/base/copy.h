#ifndef ONIC_BASE_COPY_H
#define ONIC_BASE_COPY_H

/* Copying a message's bytes: memcpy and memmove, except where the C
 * library's own choice is known to be slow.
 *
 * glibc's memcpy moves from about 2 KiB up to the L2 cache's size (on
 * AMD; 512 KiB here) with `rep movsb`. On an AMD EPYC (Zen 3, fast short
 * rep movsb) that runs at 1.5 to 2 GB/s instead of 30 to 60 when the
 * destination lies 1 to 31 bytes after the source modulo 4 KiB (and at
 * half speed from 33 to 63). Where a message lands is the application's
 * choice, so a receive or a get into a malloc'd buffer (16 bytes into a
 * page) from a page-aligned shared segment hit it every time: a 256 KiB
 * MPI_Get took about 150 us (10 in pieces). In that range the bytes go in pieces of
 * ONIC_COPY_PIECE, each a call of memcpy that glibc makes with vector
 * loads and stores at full speed (docs/architecture.md, base). */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* At or below glibc's smallest rep movsb threshold (2048 + 64 with FSRM). */
#define ONIC_COPY_PIECE 2048

/* Where glibc stops using rep movsb: the L2 cache's size, read once
 * (copy.c; 512 KiB where the C library does not say). */
extern size_t onic_copy_max;

/* How many bytes after the source the destination lies, modulo 4 KiB:
 * rep movsb is slow from 1 to 63 (glibc's) or 1 to 31 (the kernel's). */
static inline __attribute__((always_inline)) uintptr_t onic_copy_skew(const void *dst,
                                                                      const void *src)
{
    return ((uintptr_t)dst - (uintptr_t)src) & 4095;
}

/* Whether memcpy would take the slow rep movsb for this pair. */
static inline __attribute__((always_inline)) int onic_copy_aliased(void *dst, const void *src, size_t n)
{
    return n > ONIC_COPY_PIECE && n < onic_copy_max && onic_copy_skew(dst, src) - 1 < 63;
}

/* The copy in pieces (copy.c), for the pairs above, and how many such
 * copies this process made. */
void onic_copy_pieces(void *dst, const void *src, size_t n);
extern _Atomic uint64_t onic_copy_pieced;

/* What onic_copy and onic_move copy inline (onic_move_small). */
#define ONIC_COPY_INLINE 16

/* memcpy of more than ONIC_COPY_INLINE bytes (copy.c). Out of line, and memcpy reached
 * by a jump: three instructions more than memcpy's (inline, the test and
 * the second call cost six). */
void onic_copy_large(void *dst, const void *src, size_t n);

/* memmove of 0 to ONIC_COPY_INLINE bytes, inline: every byte is loaded before any is
 * stored, so the areas may overlap. Two loads and two stores that overlap
 * in the middle cover every length of a class (8 to 16, 4 to 7, 1 to 3)
 * without a branch on it: an 8-byte put's copy in a few instructions where
 * the call of memmove cost about 20. */
static inline __attribute__((always_inline)) void onic_move_small(void *dst, const void *src,
                                                                  size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;

    if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n > 0) {
        unsigned char a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

/* memcpy: the areas do not overlap. Up to 16 bytes inline (an eager
 * message's 8 bytes in a few instructions, not a call of memcpy's 20). */
static inline __attribute__((always_inline)) void onic_copy(void *dst, const void *src, size_t n)
{
    if (n <= ONIC_COPY_INLINE)
        onic_move_small(dst, src, n);
    else
        onic_copy_large(dst, src, n);
}

/* memmove: the areas may overlap. A destination 1 to 63 bytes after its
 * source modulo 4 KiB overlaps it only when it is that close in fact, and
 * then memmove copies backward, without rep movsb. */
static inline __attribute__((always_inline)) void onic_move(void *dst, const void *src, size_t n)
{
    if (n <= ONIC_COPY_INLINE)
        onic_move_small(dst, src, n);
    else if (__builtin_expect(onic_copy_aliased(dst, src, n), 0) &&
        (uintptr_t)dst - (uintptr_t)src >= n)
        onic_copy_pieces(dst, src, n);
    else
        memmove(dst, src, n);
}

#endif
