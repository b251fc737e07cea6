/* A small, fast, seedable pseudo-random generator (xorshift64*) for tests and
 * benchmarks: reproducible from a seed, not for anything secret. */
#ifndef ONIC_BASE_RAND_H
#define ONIC_BASE_RAND_H

#include <stdint.h>

typedef struct onic_rand {
    uint64_t state;
} onic_rand_t;

static inline void onic_rand_seed(onic_rand_t *r, uint64_t seed)
{
    r->state = seed ? seed : 0x9e3779b97f4a7c15ull; /* zero is a fixed point */
}

static inline uint64_t onic_rand_next(onic_rand_t *r)
{
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return r->state * 0x2545f4914f6cdd1dull;
}

/* Uniform enough in [0, n) for n far below 2^32. */
static inline unsigned onic_rand_below(onic_rand_t *r, unsigned n)
{
    return (unsigned)((onic_rand_next(r) >> 32) % n);
}

#endif
