/* MPI_THREAD_MULTIPLE: one lock for the process's MPI state, and waiting
 * without it (mpi_impl.h, "Threads"; docs/architecture.md, "threads").
 *
 * Every call takes the lock for its whole length: the layers under MPI
 * (Portals, the transports, the matching engines) are written for one
 * caller at a time, and the lock is what makes them so. What keeps threads
 * from serializing on it is that nobody holds it while waiting: a blocking
 * wait makes a round of progress with it, then gives it up for one round
 * of waiting (onic_mpi_mt_pause) and takes it back to look again. A round
 * spins for ONIC_WAIT_SPIN_US from the wait's start, then yields a few
 * times, then sleeps. One sleeper at a time sleeps in the transport,
 * armed holding the lock (onic_ptl_sleep_arm), where an arrival wakes it
 * as it wakes a single-threaded wait, and so does another thread's call
 * that ends (which may have completed what it waits for); woken so, it
 * wakes the others (what came may be theirs). The others sleep on a futex of
 * the process until a call ends or a while passes, then poll again. The
 * while is 10 ms when a thread sleeps in the transport; when none can
 * (the onload engine, two transports, a backlog), it grows from 20 us to
 * 100 us over the wait: nobody else polls the transports, so a message is
 * seen at most that late, for at most 10,000 wake-ups a second of a thread
 * that waits long. (Yielding instead of spinning when
 * another thread waits too was tried: with a busy process beside, a yield
 * waits out that one's time slice, and 2 threads a process fell from 1 to
 * 0.03 M messages a second.) */
#include "mpi/mpi_impl.h"
#include "base/clock.h"
#include "base/cpu.h"
#include "ptl/post.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MT_YIELDS       8
#define MT_SLEEP_MIN_NS 20000L
#define MT_SLEEP_MAX_NS 100000L
/* A sleep in the transport, and another's beside it: arrivals and calls
 * that end wake them; the timeout is a backstop. */
#define MT_XSLEEP_NS    10000000L
/* Pause instructions a spinning round makes (tens of ns each): a round
 * much longer would add its length to a ping-pong's latency. */
#define MT_SPINS        8
/* How long a thread that gave the lock up waits for a sleeper to take it
 * before it competes again. */
#define MT_HANDOFF_NS  50000u

onic_mpi_mt_t onic_mpi_mt;

/* This thread's current wait: when it began (0: none under way), how
 * many yields it made and how long it sleeps next. A wait ends with the
 * call that waits, or when a round of it handled something. */
static __thread struct mt_wait {
    uint64_t start;
    unsigned yields;
    long     sleep_ns;
} mt_w __attribute__((tls_model("initial-exec")));

/* op on a futex of this process (gen) or, shared, on the transport's word
 * in memory other processes map; the system call's result. */
static long mt_futex(uint32_t *word, int shared, int op, uint32_t val,
                     const struct timespec *ts)
{
    return syscall(SYS_futex, word, shared ? op : op | FUTEX_PRIVATE_FLAG, val, ts, NULL, 0);
}

void onic_mpi_mt_start(void)
{
    atomic_store_explicit(&onic_mpi_mt.on, 1, memory_order_relaxed);
}

void onic_mpi_mt_stop(void)
{
    atomic_store_explicit(&onic_mpi_mt.on, 0, memory_order_relaxed);
}

/* Wake the threads asleep in onic_mpi_mt_pause: what they wait for may
 * have happened. A sleeper counts itself while it still holds the lock, so
 * whoever holds it after sees the count: with none counted, nothing moves
 * (one relaxed load a call). */
static __attribute__((noinline)) void mt_wake_sleepers_now(void)
{
    uint32_t *xword = atomic_load_explicit(&onic_mpi_mt.xword, memory_order_acquire);

    atomic_fetch_add(&onic_mpi_mt.gen, 1);
    mt_futex((uint32_t *)&onic_mpi_mt.gen, 0, FUTEX_WAKE, INT_MAX, NULL);
    /* The transport's word is in memory shared with the other processes
     * (so, a shared futex); it stays mapped while MPI runs. */
    if (xword != NULL) {
        __atomic_add_fetch(xword, 1, __ATOMIC_SEQ_CST);
        mt_futex(xword, 1, FUTEX_WAKE, INT_MAX, NULL);
    }
}

/* Sleep in the transport, armed: 1 if the word moved (an arrival, or a
 * call that ended), 0 after the timeout; both counted. */
static int mt_xsleep(uint32_t *word, uint32_t val, uint64_t max_ns)
{
    uint64_t ns = max_ns < (uint64_t)MT_XSLEEP_NS ? max_ns : (uint64_t)MT_XSLEEP_NS;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};

    atomic_fetch_add_explicit(&onic_mpi_mt.xsleeps, 1, memory_order_relaxed);
    if (mt_futex(word, 1, FUTEX_WAIT, val, &ts) == 0 || errno == EAGAIN) {
        atomic_fetch_add_explicit(&onic_mpi_mt.xwoken, 1, memory_order_relaxed);
        return 1;
    }
    return 0;
}

static inline __attribute__((always_inline)) void mt_wake_sleepers(void)
{
    if (atomic_load_explicit(&onic_mpi_mt.sleepers, memory_order_relaxed) != 0)
        mt_wake_sleepers_now();
}

void onic_mpi_mt_leave(void)
{
    onic_lock_t *l = &onic_mpi_mt.lock;
    int last = l->depth == 1;

    onic_lock_give(l);
    if (last) {
        mt_w.start = 0;
        mt_wake_sleepers();
    }
}

/* Let a thread that slept on the lock have it before this one competes
 * again: an unfair lock given up and taken straight back starves it. */
static void mt_handoff(onic_lock_t *l)
{
    uint64_t start = onic_time_ns();

    while (atomic_load_explicit(&l->word, memory_order_relaxed) == 0 &&
           onic_time_ns() - start < MT_HANDOFF_NS) {
        for (int i = 0; i < MT_SPINS; i++)
            onic_cpu_relax();
        sched_yield(); /* the woken thread may need this core */
    }
}

/* Give the lock up, letting in first a thread asleep on it; the depth
 * onic_lock_retake restores. */
static unsigned mt_give_up(onic_lock_t *l)
{
    int others;
    unsigned depth = onic_lock_drop(l, &others);

    if (others)
        mt_handoff(l);
    return depth;
}

int onic_mpi_mt_pause(int arrivals)
{
    onic_lock_t *l = &onic_mpi_mt.lock;
    uint32_t gen, *xword = NULL, xval = 0;
    uint64_t now, xmax = 0;
    long sleep_ns;
    unsigned depth;
    int spin, sleep, moved = 0;

    /* Only a holder may give the lock up (a call that began before
     * MPI_THREAD_MULTIPLE started holds nothing). */
    if (!atomic_load_explicit(&onic_mpi_mt.on, memory_order_relaxed) || !onic_lock_held(l))
        return 0;
    now = onic_time_ns();
    if (mt_w.start == 0) {
        mt_w.start = now;
        mt_w.yields = 0;
        mt_w.sleep_ns = MT_SLEEP_MIN_NS;
    }
    spin = now - mt_w.start < onic_mpi_g.wait_spin_ns;
    sleep = !spin && mt_w.yields >= MT_YIELDS;
    /* A sleeper counts itself before it gives the lock up: every call
     * that ends after, having held the lock since, sees the count, moves
     * gen and wakes it. */
    sleep_ns = mt_w.sleep_ns;
    if (sleep) {
        atomic_fetch_add_explicit(&onic_mpi_mt.sleepers, 1, memory_order_relaxed);
        /* The transport's sleeper, if there is none yet and the transport
         * can; beside one, a long sleep: it wakes us for what it handles. */
        if (arrivals && atomic_load_explicit(&onic_mpi_mt.xword, memory_order_relaxed) != NULL)
            sleep_ns = MT_XSLEEP_NS;
        else if (arrivals && onic_ptl_sleep_arm(onic_mpi_g.ni, &xword, &xval, &xmax))
            atomic_store_explicit(&onic_mpi_mt.xword, xword, memory_order_release);
    }
    gen = atomic_load_explicit(&onic_mpi_mt.gen, memory_order_relaxed);
    depth = mt_give_up(l);
    if (xword != NULL) {
        moved = mt_xsleep(xword, xval, xmax);
    } else if (sleep) {
        struct timespec ts = {0, sleep_ns};
        mt_futex((uint32_t *)&onic_mpi_mt.gen, 0, FUTEX_WAIT, gen, &ts);
        mt_w.sleep_ns = mt_w.sleep_ns * 2 < MT_SLEEP_MAX_NS ? mt_w.sleep_ns * 2 : MT_SLEEP_MAX_NS;
    } else if (spin) {
        for (int i = 0; i < MT_SPINS && atomic_load_explicit(&onic_mpi_mt.gen,
                                                             memory_order_relaxed) == gen; i++)
            onic_cpu_relax();
    } else {
        mt_w.yields++;
        sched_yield();
    }
    onic_lock_retake(l, depth);
    if (xword != NULL) {
        atomic_store_explicit(&onic_mpi_mt.xword, NULL, memory_order_relaxed);
        onic_ptl_sleep_disarm(onic_mpi_g.ni);
    }
    if (sleep)
        atomic_fetch_sub_explicit(&onic_mpi_mt.sleepers, 1, memory_order_relaxed);
    /* Woken in the transport: what came may be another sleeper's, and its
     * event may land in a queue this thread's round does not count (a
     * one-sided operation's): they look too. */
    if (moved)
        mt_wake_sleepers();
    return 1;
}

void onic_mpi_mt_handled(void)
{
    onic_lock_t *l = &onic_mpi_mt.lock;

    if (!atomic_load_explicit(&onic_mpi_mt.on, memory_order_relaxed))
        return;
    mt_w.start = 0;
    /* What was handled may be what sleeping threads wait for; and threads
     * waiting for the lock get their turn before this one's next round,
     * however long events keep coming. */
    mt_wake_sleepers();
    if (onic_lock_held(l) && atomic_load_explicit(&l->word, memory_order_relaxed) == 2)
        onic_lock_retake(l, mt_give_up(l));
}

/* A blocking round of progress under MPI_THREAD_MULTIPLE: handle what is
 * there; if nothing was, pause. */
unsigned onic_mpi_mt_progress(void)
{
    unsigned n = onic_mpi_progress(0);

    if (n == 0)
        onic_mpi_mt_pause(1);
    else
        onic_mpi_mt_handled();
    return n;
}
