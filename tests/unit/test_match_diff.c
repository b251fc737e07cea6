/* Randomized differential test: every engine, with ordinary and unusual
 * parameters, against a plain ordered array, over random appends, matches,
 * peeks and removes in a small key space so collisions are common. Keys
 * carry random bits where their masks ignore them, and one operation in 50
 * runs with every allocation failing.
 *
 *   test_match_diff [--ops N] [--seed S] [--long]
 *
 * --ops is per (engine, wildcard mix); --long multiplies it by 20 for manual
 * runs. A failure prints the seed and step; --seed S reproduces it. */
#include "check.h"
#include "base/mem.h"
#include "base/rand.h"
#include "match/engine.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- the reference: an array in append order, searched from the front --- */

typedef struct ref_entry {
    onic_mkey_t    key, ignore;
    uintptr_t      cookie;
    onic_mentry_t *handle;  /* the engine's handle for the same entry */
} ref_entry_t;

typedef struct ref_queue {
    ref_entry_t *v;
    size_t       len, cap;
} ref_queue_t;

static void ref_append(ref_queue_t *q, ref_entry_t e)
{
    if (q->len == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 1024;
        q->v = realloc(q->v, q->cap * sizeof(*q->v));
        if (q->v == NULL)
            abort();
    }
    q->v[q->len++] = e;
}

static long ref_find(const ref_queue_t *q, onic_mkey_t key, onic_mkey_t ignore)
{
    for (size_t i = 0; i < q->len; i++)
        if (onic_mkey_matches(q->v[i].key, q->v[i].ignore, key, ignore))
            return (long)i;
    return -1;
}

static void ref_delete(ref_queue_t *q, size_t i)
{
    memmove(&q->v[i], &q->v[i + 1], (q->len - i - 1) * sizeof(*q->v));
    q->len--;
}

/* --- random keys --- */

static onic_rand_t rng_state;

static unsigned rng_below(unsigned n)
{
    return onic_rand_below(&rng_state, n);
}

/* A few Portals-style masks beyond MPI's four, so engines meet more mask
 * classes than an index may have. */
static const uint64_t odd_masks[] = {0xf, 0xf0, 0x3, 0x100000000ull, 0xff00, 0x1,
                                     0x2, 0x4, 0x8, 0x10, 0x20, 0xffffffff00000000ull};

/* A key in a small space: 2 contexts, 4 sources, 8 tags. With probability
 * wild_pct a wildcard shape, and now and then an odd Portals mask. */
static void random_key(unsigned wild_pct, onic_mkey_t *key_p, onic_mkey_t *ignore_p)
{
    int ctx = (int)rng_below(2), src = (int)rng_below(4), tag = (int)rng_below(8);

    if (rng_below(100) < wild_pct) {
        switch (rng_below(3)) {
        case 0: src = ONIC_MATCH_MPI_ANY_SOURCE; break;
        case 1: tag = ONIC_MATCH_MPI_ANY_TAG; break;
        default: src = ONIC_MATCH_MPI_ANY_SOURCE; tag = ONIC_MATCH_MPI_ANY_TAG; break;
        }
    }
    if (onic_match_mpi_encode((uint64_t)ctx, src, tag, key_p, ignore_p) != ONIC_OK)
        abort();
    if (wild_pct > 0 && rng_below(100) < 2)
        ignore_p->bits |= odd_masks[rng_below(sizeof(odd_masks) / sizeof(odd_masks[0]))];
    /* Junk where the mask says "don't care": it must never change an answer. */
    key_p->bits ^= onic_rand_next(&rng_state) & ignore_p->bits;
    key_p->id ^= onic_rand_next(&rng_state) & ignore_p->id;
}

/* Every allocation fails from now until starve_end(); the library's error
 * messages for it (expected here) go to /dev/null meanwhile. */
static int saved_stderr = -1;
static unsigned long refused; /* appends that failed for lack of memory */

static void starve_begin(void)
{
    int null = open("/dev/null", O_WRONLY);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    if (null >= 0) {
        dup2(null, STDERR_FILENO);
        close(null);
    }
    onic_mem_fail_after(0);
}

static void starve_end(void)
{
    onic_mem_fail_after(-1);
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
}

/* --- one run: one engine configuration, one mix --- */

typedef struct diff_case {
    const char *engine;
    const char *label;
    void (*tune)(onic_config_t *cfg);
} diff_case_t;

static int diff_run(const diff_case_t *c, unsigned wild_pct, uint64_t seed, uint64_t ops)
{
    onic_config_t cfg;
    onic_matcher_t *m;
    ref_queue_t ref = {NULL, 0, 0};
    uintptr_t next_cookie = 1;
    /* Phases of growth and drain so queues cross every threshold: short,
     * past the alpu unit, past hash's linear walk, hundreds deep. */
    static const size_t targets[] = {3, 12, 40, 300, 6, 700, 20};
    size_t target = targets[0];
    uint64_t step;
    int failed = 0;

    onic_config_defaults(&cfg);
    c->tune(&cfg);
    if (onic_matcher_create_cfg(c->engine, &cfg, &m) != ONIC_OK) {
        fprintf(stderr, "%s: cannot create the matcher\n", c->label);
        return 1;
    }
    onic_rand_seed(&rng_state, seed);

    for (step = 0; step < ops && !failed; step++) {
        onic_mkey_t key, ignore;
        unsigned op = rng_below(100);

        if (step % 5000 == 0)
            target = targets[(step / 5000) % (sizeof(targets) / sizeof(targets[0]))];
        /* Drift toward the target length: appends above it are rarer. */
        unsigned append_pct = ref.len < target ? 60 : 25;

        if (op < append_pct) {
            ref_entry_t e;
            random_key(wild_pct, &key, &ignore);
            e.key = key;
            e.ignore = ignore;
            e.cookie = next_cookie++;
            /* Now and then with memory failing -- always worth trying when
             * the entry pool is about to need a chunk: the append either
             * succeeds or fails with NO_MEMORY and changes nothing (length is
             * checked below, answers on later steps). */
            int starve = (m->pool.free_list == NULL && rng_below(2) == 0) || rng_below(50) == 0;
            if (starve)
                starve_begin();
            onic_status_t st = onic_matcher_append(m, key, ignore, (void *)e.cookie, &e.handle);
            if (starve)
                starve_end();
            if (st == ONIC_OK) {
                ref_append(&ref, e);
            } else if (starve && st == ONIC_ERR_NO_MEMORY) {
                refused++;
            } else if (!starve || st != ONIC_ERR_NO_MEMORY) {
                fprintf(stderr, "%s: append failed: %s\n", c->label, onic_status_str(st));
                failed = 1;
                break;
            }
        } else if (op < append_pct + 45) {
            int peek = rng_below(5) == 0;
            long i;
            uintptr_t got, want;

            random_key(wild_pct, &key, &ignore);
            i = ref_find(&ref, key, ignore);
            want = i < 0 ? 0 : ref.v[i].cookie;
            int starve = rng_below(50) == 0; /* lazily built indices may want memory */
            if (starve)
                starve_begin();
            got = (uintptr_t)(peek ? onic_matcher_peek(m, key, ignore)
                                   : onic_matcher_match(m, key, ignore));
            if (starve)
                starve_end();
            if (got != want) {
                fprintf(stderr, "%s %s: cookie %" PRIuPTR ", reference %" PRIuPTR "\n",
                        c->label, peek ? "peek" : "match", got, want);
                failed = 1;
            } else if (i >= 0 && !peek) {
                ref_delete(&ref, (size_t)i);
            }
        } else if (ref.len > 0) {
            size_t i = rng_below((unsigned)ref.len);
            if (onic_matcher_remove(m, ref.v[i].handle) != ONIC_OK) {
                fprintf(stderr, "%s: remove of a queued entry failed\n", c->label);
                failed = 1;
            }
            ref_delete(&ref, i);
        }
        if (!failed && onic_matcher_length(m) != ref.len) {
            fprintf(stderr, "%s: length %zu, reference %zu\n", c->label,
                    onic_matcher_length(m), ref.len);
            failed = 1;
        }
    }
    /* Drain: everything left comes out oldest first. */
    onic_mkey_t all = {~0ull, ~0ull}, zero = {0, 0};
    for (size_t i = 0; i < ref.len && !failed; i++) {
        uintptr_t got = (uintptr_t)onic_matcher_match(m, zero, all);
        if (got != ref.v[i].cookie) {
            fprintf(stderr, "%s drain: cookie %" PRIuPTR ", reference %" PRIuPTR "\n", c->label,
                    got, ref.v[i].cookie);
            failed = 1;
        }
    }
    if (failed)
        fprintf(stderr, "FAILED: %s, %u%% wildcards, --seed %" PRIu64 " (at step %" PRIu64 ")\n",
                c->label, wild_pct, seed, step);
    onic_matcher_destroy(m);
    free(ref.v);
    return failed;
}

static void tune_none(onic_config_t *cfg) { (void)cfg; }
static void tune_alpu_8x2(onic_config_t *cfg)
{
    cfg->alpu_cells = 8;
    cfg->alpu_block = 2;
    cfg->alpu_threshold = 0;
}
static void tune_alpu_256x32(onic_config_t *cfg)
{
    cfg->alpu_cells = 256;
    cfg->alpu_block = 32;
}
static void tune_alpu_scalar(onic_config_t *cfg)
{
    cfg->alpu_cells = 64;
    cfg->alpu_threshold = 1;
    cfg->simd = ONIC_SIMD_SCALAR;
}
static void tune_wide_scalar(onic_config_t *cfg)
{
    cfg->wide_cleanup = 1;
    cfg->simd = ONIC_SIMD_SCALAR;
}
static void tune_wide_eager(onic_config_t *cfg) { cfg->wide_cleanup = 1024; }
static void tune_hash_tiny(onic_config_t *cfg) { cfg->hash_buckets = 1; }

static const diff_case_t cases[] = {
    {"list", "list", tune_none},
    {"hash", "hash", tune_none},
    {"hash", "hash(1 bucket to start)", tune_hash_tiny},
    {"alpu", "alpu", tune_none},
    {"alpu", "alpu(8 cells, blocks of 2)", tune_alpu_8x2},
    {"alpu", "alpu(256 cells, blocks of 32)", tune_alpu_256x32},
    {"alpu", "alpu(64 cells, scalar)", tune_alpu_scalar},
    {"wide", "wide", tune_none},
    {"wide", "wide(clean-up 1, scalar)", tune_wide_scalar},
    {"wide", "wide(clean-up 1024)", tune_wide_eager},
};

int main(int argc, char **argv)
{
    uint64_t ops = 150000, seed = (uint64_t)time(NULL);
    static const unsigned mixes[] = {0, 10, 50};
    unsigned runs = 0, failures = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc)
            ops = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--long") == 0)
            ops *= 20;
        else {
            fprintf(stderr, "usage: %s [--ops N] [--seed S] [--long]\n", argv[0]);
            return 2;
        }
    }
    printf("seed %" PRIu64 ", %" PRIu64 " operations per run\n", seed, ops);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (size_t x = 0; x < sizeof(mixes) / sizeof(mixes[0]); x++) {
            int f = diff_run(&cases[c], mixes[x], seed + x, ops);
            runs++;
            failures += (unsigned)f;
            printf("%-32s %2u%% wildcards  %s\n", cases[c].label, mixes[x], f ? "FAILED" : "ok");
        }
    }
    printf("%lu appends were refused for lack of memory, each changing nothing\n", refused);
    printf("match_diff: %u passed, %u failed\n", runs - failures, failures);
    return failures ? 1 : 0;
}
