/* The recursive futex lock's slow paths (lock.h). */
#include "base/lock.h"
#include "base/cpu.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A holder gives the lock back within a call's few hundred instructions:
 * spin about that long, then sleep (the holder may be waiting for this
 * core: threads of a process bound to one; and a sleeper woken by the
 * give runs soon, where a yield to another busy process may wait out its
 * whole time slice). */
#define LOCK_SPINS 16

__thread char onic_lock_tag_ __attribute__((tls_model("initial-exec")));

static long lock_futex(_Atomic uint32_t *word, int op, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static void lock_take_slow(onic_lock_t *l)
{
    uint32_t w;

    for (int i = 0; i < LOCK_SPINS; i++) {
        w = 0;
        if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&l->word, &w, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        onic_cpu_relax();
    }
    /* Mark the word "sleepers" before sleeping, so the giver wakes one;
     * whoever takes it from here on takes it marked, which costs at
     * most one wake too many. */
    while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
        lock_futex(&l->word, FUTEX_WAIT, 2);
}

void onic_lock_take_held(onic_lock_t *l)
{
    /* Only this thread ever stores its own tag, so a relaxed look is enough. */
    if (onic_lock_held(l)) {
        l->depth++;
        return;
    }
    lock_take_slow(l);
    atomic_store_explicit(&l->owner, onic_lock_self(), memory_order_relaxed);
    l->depth = 1;
}

int onic_lock_wake(onic_lock_t *l)
{
    return lock_futex(&l->word, FUTEX_WAKE, 1) > 0;
}

unsigned onic_lock_drop(onic_lock_t *l, int *others)
{
    unsigned depth = l->depth;

    l->depth = 0;
    atomic_store_explicit(&l->owner, NULL, memory_order_relaxed);
    /* The word says "sleepers" from the last slow take on, whether or not
     * any still sleep: a thread woken is the answer. */
    *others = atomic_exchange_explicit(&l->word, 0, memory_order_release) != 1 &&
              onic_lock_wake(l);
    return depth;
}

void onic_lock_retake(onic_lock_t *l, unsigned depth)
{
    onic_lock_take(l);
    l->depth = depth;
}
