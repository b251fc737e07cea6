/* The recursive futex lock of MPI_THREAD_MULTIPLE (src/base/lock.h): one
 * holder at a time, nested takes by the holder, dropping it whatever the
 * depth and taking it back at that depth, and sleepers woken. Threads
 * count under it with plain (non-atomic) increments, so a lock that let two
 * in at once loses counts; under ThreadSanitizer (label threads) the same
 * increments would be reported as races. */
#include "check.h"
#include "base/lock.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#define THREADS 4
#define ROUNDS  20000

static onic_lock_t lock;
static unsigned long counter;      /* only under the lock */
static _Atomic unsigned bad;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        onic_lock_take(&lock);
        if (!onic_lock_held(&lock))
            bad++;
        counter++;
        if (i % 7 == 0) {
            /* Nested, as a callback calling MPI inside a call. */
            onic_lock_take(&lock);
            counter++;
            onic_lock_give(&lock);
            if (!onic_lock_held(&lock))
                bad++; /* the outer take still holds it */
        }
        if (i % 97 == 0) {
            /* Given up at depth 2 for a while (a wait), then taken back. */
            int others;
            onic_lock_take(&lock);
            unsigned depth = onic_lock_drop(&lock, &others);
            if (depth != 2 || onic_lock_held(&lock))
                bad++;
            sched_yield();
            onic_lock_retake(&lock, depth);
            counter++;
            onic_lock_give(&lock); /* depth 2 -> 1 */
            if (!onic_lock_held(&lock))
                bad++;
        }
        onic_lock_give(&lock);
        if (onic_lock_held(&lock))
            bad++;
    }
    return NULL;
}

static unsigned long expected_per_thread(void)
{
    unsigned long n = 0;
    for (int i = 0; i < ROUNDS; i++)
        n += 1 + (i % 7 == 0) + (i % 97 == 0);
    return n;
}

/* A holder that keeps the lock long enough for the others to sleep on it
 * (word 2): its give must wake them, or they would sleep for ever. */
static void *sleeper(void *arg)
{
    (void)arg;
    onic_lock_take(&lock);
    counter++;
    onic_lock_give(&lock);
    return NULL;
}

static void test_sleepers_woken(void)
{
    pthread_t t[THREADS];
    struct timespec ts = {0, 1000 * 1000};
    int others = -1, waited = 0;

    counter = 0;
    onic_lock_take(&lock);
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, sleeper, NULL) == 0);
    /* Past their spins they mark the word and sleep (5 s at most, for a
     * loaded machine), then a while longer so that more of them sleep. */
    while (atomic_load(&lock.word) != 2 && waited++ < 5000)
        nanosleep(&ts, NULL);
    CHECK_EQ(atomic_load(&lock.word), 2);
    for (int i = 0; i < 20; i++)
        nanosleep(&ts, NULL);
    /* Dropping wakes one and says so; each wakes the next. */
    unsigned depth = onic_lock_drop(&lock, &others);
    CHECK_EQ(depth, 1);
    CHECK_EQ(others, 1);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(counter, THREADS);
    CHECK_EQ(atomic_load(&lock.word), 0);
    /* Alone, a drop finds nobody waiting. */
    onic_lock_take(&lock);
    depth = onic_lock_drop(&lock, &others);
    CHECK_EQ(others, 0);
    CHECK_EQ(depth, 1);
}

static void test_counting(void)
{
    pthread_t t[THREADS];

    counter = 0;
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(counter, THREADS * expected_per_thread());
    CHECK_EQ(bad, 0);
    CHECK(!onic_lock_held(&lock));
    CHECK_EQ(atomic_load(&lock.word), 0);
}

int main(void)
{
    /* A give that wakes nobody leaves the sleepers asleep: fail, not hang. */
    check_watchdog("lock", 60);
    test_counting();
    test_sleepers_woken();
    return check_summary("lock");
}
