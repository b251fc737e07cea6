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
 * Both are ticket locks, served in the order asked: an origin that locks
 * and unlocks in a loop re-takes a free lock faster than a sleeping one
 * wakes, so a lock that goes to whoever grabs it first can shut another
 * origin out for good (the message windows' locks are granted in order at
 * the target too). The passive-target lock is a reader-writer ticket lock:
 * a request waits until `serving` reaches its ticket; a shared one then
 * counts itself in `readers` and passes `serving` on at once, so shared
 * requests in a row hold the lock together; an exclusive one keeps
 * `serving` until its unlock and waits for the readers before it to leave.
 *
 * A waiting origin keeps making point-to-point progress (the holder may
 * wait for a message of ours before it unlocks), spins for
 * ONIC_WAIT_SPIN_US, yields the core a few times, then sleeps on a futex
 * on the word it waits for, 1 ms at most: whoever moves `serving`,
 * `readers` or `acc_serving` wakes the sleepers the control block counts,
 * and the timeout bounds what a lost wake-up could cost. */
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

    if (onic_mpi_progress(0) > 0)
        onic_mpi_mt_handled();
    /* Another thread of this process may hold the lock waited for: it
     * needs the process's lock to give it back. (Another process moves
     * the word: no arrival tells of it.) */
    if (atomic_load(word) != seen || onic_mpi_mt_pause(0))
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
    /* Counted before the futex checks the word: a waker that moves the
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

/* Wait until *word is `want`. */
static void wctl_wait_for(onic_mpi_wctl_t *c, _Atomic uint32_t *word, uint32_t want)
{
    wctl_wait_t wt = {0, 0};
    uint32_t v;

    /* seq_cst loads: the acquire that makes the last holder's stores
     * to the window visible. */
    while ((v = atomic_load(word)) != want)
        wctl_wait(c, word, v, &wt);
}

void onic_mpi_wctl_lock(onic_mpi_wctl_t *c, int type)
{
    uint32_t t = atomic_fetch_add(&c->ticket, 1);

    wctl_wait_for(c, &c->serving, t);
    if (type == MPI_LOCK_SHARED) {
        /* Counted in before the next request may go: an exclusive one
         * after this waits for it to leave. */
        atomic_fetch_add(&c->readers, 1);
        atomic_fetch_add(&c->serving, 1);
        wctl_wake(c, &c->serving);
        return;
    }
    wctl_wait_for(c, &c->readers, 0);
}

void onic_mpi_wctl_unlock(onic_mpi_wctl_t *c, int type)
{
    /* Release: what this origin stored in the window is visible to the
     * next holder. */
    if (type == MPI_LOCK_SHARED) {
        atomic_fetch_sub(&c->readers, 1);
        wctl_wake(c, &c->readers);
    } else {
        atomic_fetch_add(&c->serving, 1);
        wctl_wake(c, &c->serving);
    }
}

void onic_mpi_wctl_acc_lock(onic_mpi_wctl_t *c)
{
    wctl_wait_for(c, &c->acc_serving, atomic_fetch_add(&c->acc_ticket, 1));
}

void onic_mpi_wctl_acc_unlock(onic_mpi_wctl_t *c)
{
    atomic_fetch_add(&c->acc_serving, 1);
    wctl_wake(c, &c->acc_serving);
}
