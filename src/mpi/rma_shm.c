/* Windows in shared memory: the locks in each segment's control block, and
 * how an origin waits for one.
 *
 * On a window whose memory every member maps (rma.h, onic_mpi_wctl_t), an
 * origin takes the target's passive-target lock and its accumulate lock
 * itself, with atomic operations on the target's control block: no
 * request, no answer, and nothing for the target to do, so a lock, an
 * accumulate and an unlock complete while the target computes (inline or
 * under onload alike).
 *
 * A waiting origin keeps making point-to-point progress (the holder may
 * wait for a message of ours before it unlocks), spins for
 * ONIC_WAIT_SPIN_US, yields the core a few times, then sleeps on a futex
 * on the word it waits for, 1 ms at most: whoever changes the word wakes
 * the sleepers the control block counts, and the timeout bounds what a
 * lost wake-up could cost. */
#include "mpi/rma.h"
#include "base/clock.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WCTL_YIELDS   8
#define WCTL_SLEEP_NS 1000000L

typedef struct wctl_wait {
    uint64_t start;
    unsigned yields;
} wctl_wait_t;

static void wctl_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
    /* Not FUTEX_PRIVATE: the word is in memory other processes map. */
    syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

/* One round of waiting while *word is still `seen`. */
static void wctl_wait(onic_mpi_wctl_t *c, _Atomic uint32_t *word, uint32_t seen,
                      wctl_wait_t *wt)
{
    struct timespec ts = {0, WCTL_SLEEP_NS};

    onic_mpi_progress(0);
    if (atomic_load(word) != seen)
        return;
    if (wt->start == 0)
        wt->start = onic_time_ns();
    if (onic_time_ns() - wt->start < onic_mpi_g.wait_spin_ns)
        return;
    if (wt->yields < WCTL_YIELDS) {
        wt->yields++;
        sched_yield();
        return;
    }
    /* Counted before the futex checks the word: a waker that changes the
     * word after this sees the count (both sequentially consistent). */
    atomic_fetch_add(&c->sleepers, 1);
    wctl_futex(word, FUTEX_WAIT, seen, &ts);
    atomic_fetch_sub(&c->sleepers, 1);
}

static void wctl_wake(onic_mpi_wctl_t *c, _Atomic uint32_t *word)
{
    if (atomic_load(&c->sleepers) > 0)
        wctl_futex(word, FUTEX_WAKE, INT_MAX, NULL);
}

void onic_mpi_wctl_lock(onic_mpi_wctl_t *c, int type)
{
    wctl_wait_t wt = {0, 0};
    uint32_t s = atomic_load(&c->lock);

    for (;;) {
        if (type == MPI_LOCK_EXCLUSIVE) {
            /* Free but for a waiting mark (ours or another writer's): take it. */
            if ((s & ~ONIC_MPI_WCTL_WAIT) == 0) {
                if (atomic_compare_exchange_weak(&c->lock, &s, ONIC_MPI_WCTL_EXCL))
                    return;
                continue;
            }
            if (!(s & ONIC_MPI_WCTL_WAIT)) {
                if (!atomic_compare_exchange_weak(&c->lock, &s, s | ONIC_MPI_WCTL_WAIT))
                    continue;
                s |= ONIC_MPI_WCTL_WAIT;
            }
        } else if (!(s & (ONIC_MPI_WCTL_EXCL | ONIC_MPI_WCTL_WAIT))) {
            if (atomic_compare_exchange_weak(&c->lock, &s, s + 1))
                return;
            continue;
        }
        wctl_wait(c, &c->lock, s, &wt);
        s = atomic_load(&c->lock);
    }
}

void onic_mpi_wctl_unlock(onic_mpi_wctl_t *c, int type)
{
    /* Release: what this origin stored in the window is visible to the
     * next holder, who takes the lock with an acquire. */
    if (type == MPI_LOCK_EXCLUSIVE)
        atomic_fetch_and(&c->lock, ~ONIC_MPI_WCTL_EXCL);
    else
        atomic_fetch_sub(&c->lock, 1);
    wctl_wake(c, &c->lock);
}

void onic_mpi_wctl_acc_lock(onic_mpi_wctl_t *c)
{
    wctl_wait_t wt = {0, 0};
    uint32_t zero = 0;

    while (!atomic_compare_exchange_weak(&c->acc, &zero, 1)) {
        wctl_wait(c, &c->acc, 1, &wt);
        zero = 0;
    }
}

void onic_mpi_wctl_acc_unlock(onic_mpi_wctl_t *c)
{
    atomic_store(&c->acc, 0);
    wctl_wake(c, &c->acc);
}
