/* Different matchers in different threads at once: what match.h promises.
 * Each thread creates its own matcher from the environment (config registry,
 * logging), runs a post/match workload and checks every answer. In a normal
 * build this checks the answers; under ThreadSanitizer (make test
 * SANITIZE=thread) it checks the library's shared state. */
#include "check.h"
#include "match/engine.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define THREADS 4
#define OPS     20000

static _Atomic unsigned wrong;

static void *worker(void *arg)
{
    const char *engine = onic_match_engines()[(uintptr_t)arg % 4];
    onic_matcher_t *m;
    onic_mkey_t none = {0, 0};

    if (onic_matcher_create(engine, &m) != ONIC_OK) {
        atomic_fetch_add(&wrong, 1);
        return NULL;
    }
    for (uint64_t i = 0; i < OPS; i++) {
        onic_mkey_t k = {i % 97, (uintptr_t)arg};
        if (onic_matcher_append(m, k, none, (void *)(uintptr_t)(i + 1), NULL) != ONIC_OK)
            atomic_fetch_add(&wrong, 1);
        if (i >= 50) { /* keep ~50 queued: match the entry posted 50 ago */
            onic_mkey_t old = {(i - 50) % 97, (uintptr_t)arg};
            if ((uintptr_t)onic_matcher_match(m, old, none) != i - 49)
                atomic_fetch_add(&wrong, 1);
        }
    }
    if (onic_matcher_length(m) != 50)
        atomic_fetch_add(&wrong, 1);
    onic_matcher_destroy(m);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];

    for (uintptr_t i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0);
    for (unsigned i = 0; i < THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    CHECK_EQ(atomic_load(&wrong), 0);
    return check_summary("match_threads");
}
