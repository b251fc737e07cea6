/* A recursive lock for the threads of one process (MPI_THREAD_MULTIPLE).
 *
 * The word is a futex: 0 free, 1 held, 2 held with threads asleep on it.
 * Uncontended, taking and giving it are one atomic each. The holder is
 * named by the address of a thread-local byte, so asking "do I hold it?"
 * costs no system call; depth counts the holder's nested takes (a user
 * callback run inside a call may call MPI again). */
#ifndef ONIC_BASE_LOCK_H
#define ONIC_BASE_LOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct onic_lock {
    _Atomic uint32_t     word;
    unsigned             depth; /* read and written by the holder only */
    _Atomic(const void *) owner; /* the holder's tag, or NULL */
} onic_lock_t;

/* initial-exec: the tag's address is one instruction away, no call. */
extern __thread char onic_lock_tag_ __attribute__((tls_model("initial-exec")));

/* The word was not free: this thread's again (one level deeper), or wait
 * for it. */
void onic_lock_take_held(onic_lock_t *l);
/* Wake one sleeper; whether there was one. */
int  onic_lock_wake(onic_lock_t *l);

static inline const void *onic_lock_self(void)
{
    return &onic_lock_tag_;
}

static inline int onic_lock_held(onic_lock_t *l)
{
    return atomic_load_explicit(&l->owner, memory_order_relaxed) == onic_lock_self();
}

static inline void onic_lock_take(onic_lock_t *l)
{
    uint32_t free_word = 0;

    /* A free word first: a nested take finds it held and asks, out of
     * line, whose it is. */
    if (__builtin_expect(!atomic_compare_exchange_strong_explicit(&l->word, &free_word, 1,
                                                                  memory_order_acquire,
                                                                  memory_order_relaxed),
                         0)) {
        onic_lock_take_held(l);
        return;
    }
    atomic_store_explicit(&l->owner, onic_lock_self(), memory_order_relaxed);
    l->depth = 1;
}

static inline void onic_lock_give(onic_lock_t *l)
{
    if (--l->depth > 0)
        return;
    atomic_store_explicit(&l->owner, NULL, memory_order_relaxed);
    if (atomic_exchange_explicit(&l->word, 0, memory_order_release) != 1)
        (void)onic_lock_wake(l);
}

/* Give the lock up however deeply the caller holds it (a thread about to
 * wait lets the others in); *others says whether that woke a thread
 * asleep on it. Returns the depth onic_lock_retake restores. */
unsigned onic_lock_drop(onic_lock_t *l, int *others);
void     onic_lock_retake(onic_lock_t *l, unsigned depth);

#endif
