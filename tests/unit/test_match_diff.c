/* Randomized differential test: every engine, with ordinary and unusual
 * parameters, against a plain ordered array, over random appends, inserts at
 * every position (head, tail, before or after a random entry, now and then a
 * stale anchor), matches, peeks, finds whose accept callback refuses a random
 * set of cookies, and removes, in a small key space so collisions are common.
 * Every accept call is checked against the reference: the same matching
 * entries, in queue order, up to the one taken. Keys carry random bits where
 * their masks ignore them, and one operation in 50 runs with every
 * allocation failing. Some runs shrink the gaps between order keys so that
 * renumbering is frequent, and every run now and then moves the ends of the
 * key range close so that appends and head inserts renumber too.
 *
 *   test_match_diff [--ops N] [--seed S] [--long]
 *
 * --ops is per (engine, wildcard mix); --long multiplies it by 20 for manual
 * runs. The seed is new each run (the time) unless MATCH_DIFF_SEED or --seed
 * gives it; it is printed first, and a failure prints the command that
 * replays it. */
#include "check.h"
#include "base/mem.h"
#include "base/rand.h"
#include "match/engine.h"
#include "match/wide.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- the reference: an array in queue order, searched from the front --- */

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

static void ref_insert(ref_queue_t *q, size_t at, ref_entry_t e)
{
    ref_append(q, e);
    memmove(&q->v[at + 1], &q->v[at], (q->len - 1 - at) * sizeof(*q->v));
    q->v[at] = e;
}

/* The reference's own matching rule, not the library's onic_mkey_matches
 * (a bug there would otherwise be in both sides and never show): a bit of
 * bits or id must be equal unless either side ignores it. */
static int ref_key_matches(onic_mkey_t a, onic_mkey_t a_ignore, onic_mkey_t b,
                           onic_mkey_t b_ignore)
{
    uint64_t care_bits = ~a_ignore.bits & ~b_ignore.bits, care_id = ~a_ignore.id & ~b_ignore.id;

    return (a.bits & care_bits) == (b.bits & care_bits) && (a.id & care_id) == (b.id & care_id);
}

static long ref_find(const ref_queue_t *q, onic_mkey_t key, onic_mkey_t ignore)
{
    for (size_t i = 0; i < q->len; i++)
        if (ref_key_matches(q->v[i].key, q->v[i].ignore, key, ignore))
            return (long)i;
    return -1;
}

/* --- accept: refuse a random set of cookies, and record every call --- */

#define CALLS_MAX 4096

typedef struct accept_state {
    uint64_t  salt;
    unsigned  refuse_pct;
    unsigned  last_pct;  /* of the entries taken, those answered ONIC_MATCH_TAKE_LAST */
    size_t    ncalls;
    uintptr_t calls[CALLS_MAX];
} accept_state_t;

static int accept_refuses(const accept_state_t *a, uintptr_t cookie)
{
    return ((cookie * 0x9e3779b97f4a7c15ull ^ a->salt) >> 40) % 100 < a->refuse_pct;
}

/* Whether a taken cookie is taken as the last use of its entry (removed
 * whatever find's remove says): another draw from the same hash. */
static int accept_takes_last(const accept_state_t *a, uintptr_t cookie)
{
    return ((cookie * 0xc2b2ae3d27d4eb4full ^ a->salt) >> 40) % 100 < a->last_pct;
}

static int accept_record(void *arg, void *cookie)
{
    accept_state_t *a = arg;

    if (a->ncalls < CALLS_MAX)
        a->calls[a->ncalls] = (uintptr_t)cookie;
    a->ncalls++;
    if (accept_refuses(a, (uintptr_t)cookie))
        return 0;
    return accept_takes_last(a, (uintptr_t)cookie) ? ONIC_MATCH_TAKE_LAST : ONIC_MATCH_TAKE;
}

/* The reference's find: the index taken (or -1), checking the calls the
 * engine made against the ones it should have made. 0 if they differ. */
static int ref_find_accept(const ref_queue_t *q, onic_mkey_t key, onic_mkey_t ignore,
                           const accept_state_t *a, long *i_p)
{
    size_t n = 0;
    int same = 1;

    *i_p = -1;
    for (size_t i = 0; i < q->len; i++) {
        if (!ref_key_matches(q->v[i].key, q->v[i].ignore, key, ignore))
            continue;
        if (n >= a->ncalls || (n < CALLS_MAX && a->calls[n] != q->v[i].cookie))
            same = 0;
        n++;
        if (!accept_refuses(a, q->v[i].cookie)) {
            *i_p = (long)i;
            break;
        }
    }
    return same && n == a->ncalls;
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
static unsigned long renumbered; /* renumberings, over all runs */

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
    int         tiny_gaps;  /* order keys 2 apart: renumbering all the time */
} diff_case_t;

static const char *const pos_names[] = {"tail", "head", "before", "after"};

static int diff_run(const diff_case_t *c, unsigned wild_pct, uint64_t seed, uint64_t ops)
{
    onic_config_t cfg;
    onic_matcher_t *m;
    ref_queue_t ref = {NULL, 0, 0};
    uintptr_t next_cookie = 1;
    /* Phases of growth and drain so queues cross every threshold: short,
     * past the alpu unit, hundreds deep, and back and forth across hash's
     * small ring (32 entries; it is left for the index on the 33rd and
     * taken again once the queue empties, hence the drains to 0). */
    static const size_t targets[] = {3, 12, 40, 300, 6, 700, 20, 0, 31, 2, 34, 28, 0, 33};
    size_t target = targets[0];
    uint64_t step;
    int failed = 0;

    static accept_state_t acc;
    onic_mentry_t *stale = NULL; /* just removed, its memory not reused yet */

    onic_config_defaults(&cfg);
    c->tune(&cfg);
    if (onic_matcher_create_cfg(c->engine, &cfg, &m) != ONIC_OK) {
        fprintf(stderr, "%s: cannot create the matcher\n", c->label);
        return 1;
    }
    if (c->tiny_gaps) {
        m->seq_stride = 2;
        m->seq_step = 1;
    }
    onic_rand_seed(&rng_state, seed);

    for (step = 0; step < ops && !failed; step++) {
        onic_mkey_t key, ignore;
        unsigned op = rng_below(100);

        if (step % 5000 == 0) {
            target = targets[(step / 5000) % (sizeof(targets) / sizeof(targets[0]))];
            /* Bring both ends of the key range near (a lower low_seq and a
             * higher next_seq stay valid bounds): the next few appends and
             * head inserts renumber. */
            if (m->low_seq > 2 * m->seq_stride + 1)
                m->low_seq = 2 * m->seq_stride + 1;
            if (m->next_seq < UINT64_MAX - 2 * m->seq_stride)
                m->next_seq = UINT64_MAX - 2 * m->seq_stride;
        }
        /* Drift toward the target length: appends above it are rarer. */
        unsigned append_pct = ref.len < target ? 60 : 25;

        if (op < append_pct) {
            ref_entry_t e;
            /* Half appends, half inserts at a random position. */
            onic_match_pos_t pos = rng_below(2) ? ONIC_MATCH_TAIL : (onic_match_pos_t)rng_below(4);
            onic_mentry_t *anchor = NULL;
            size_t at = ref.len;
            int use_stale = 0, use_insert = pos != ONIC_MATCH_TAIL || rng_below(2);
            onic_status_t st;

            if (pos == ONIC_MATCH_HEAD) {
                at = 0;
            } else if (pos == ONIC_MATCH_BEFORE || pos == ONIC_MATCH_AFTER) {
                if (stale != NULL && rng_below(10) == 0) {
                    use_stale = 1;
                    anchor = stale;
                } else if (ref.len == 0) {
                    pos = ONIC_MATCH_HEAD;
                    at = 0;
                } else {
                    at = rng_below((unsigned)ref.len);
                    anchor = ref.v[at].handle;
                    at += pos == ONIC_MATCH_AFTER;
                }
            }
            random_key(wild_pct, &key, &ignore);
            e.key = key;
            e.ignore = ignore;
            e.cookie = next_cookie++;
            e.handle = NULL;
            /* Now and then with memory failing -- always worth trying when
             * the entry pool is about to need a chunk: the call either
             * succeeds or fails with NO_MEMORY and changes nothing (length is
             * checked below, answers on later steps). */
            int starve = (m->pool.free_list == NULL && rng_below(2) == 0) || rng_below(50) == 0;
            if (starve)
                starve_begin();
            if (use_insert)
                st = onic_matcher_insert(m, key, ignore, (void *)e.cookie, pos, anchor, &e.handle);
            else
                st = onic_matcher_append(m, key, ignore, (void *)e.cookie, &e.handle);
            if (starve)
                starve_end();
            stale = NULL;
            if (use_stale) {
                if (st != ONIC_ERR_NO_ELEM && !(starve && st == ONIC_ERR_NO_MEMORY)) {
                    fprintf(stderr, "%s: insert %s a removed entry: %s\n", c->label,
                            pos_names[pos], onic_status_str(st));
                    failed = 1;
                }
            } else if (st == ONIC_OK) {
                ref_insert(&ref, at, e);
            } else if (starve && st == ONIC_ERR_NO_MEMORY) {
                refused++;
            } else {
                fprintf(stderr, "%s: %s %s failed: %s\n", c->label,
                        use_insert ? "insert" : "append", pos_names[pos], onic_status_str(st));
                failed = 1;
                break;
            }
        } else if (op < append_pct + 45) {
            unsigned kind = rng_below(6); /* 0-1 match, 2 peek, 3-5 find with accept */
            int remove = kind < 2 || (kind > 2 && rng_below(2));
            long i;
            uintptr_t got, want;

            random_key(wild_pct, &key, &ignore);
            if (kind > 2) {
                static const unsigned pcts[] = {0, 30, 70, 95, 100};
                acc.salt = onic_rand_next(&rng_state);
                acc.refuse_pct = pcts[rng_below(5)];
                acc.last_pct = pcts[rng_below(5)];
                acc.ncalls = 0;
            }
            int starve = rng_below(50) == 0; /* lazily built indices may want memory */
            if (starve)
                starve_begin();
            if (kind < 2)
                got = (uintptr_t)onic_matcher_match(m, key, ignore);
            else if (kind == 2)
                got = (uintptr_t)onic_matcher_peek(m, key, ignore);
            else
                got = (uintptr_t)onic_matcher_find(m, key, ignore, accept_record, &acc, remove);
            if (starve)
                starve_end();
            if (kind > 2) {
                if (!ref_find_accept(&ref, key, ignore, &acc, &i)) {
                    fprintf(stderr, "%s find: %zu accept calls differ from the reference\n",
                            c->label, acc.ncalls);
                    failed = 1;
                }
            } else {
                i = ref_find(&ref, key, ignore);
            }
            want = i < 0 ? 0 : ref.v[i].cookie;
            if (got != want) {
                fprintf(stderr, "%s %s: cookie %" PRIuPTR ", reference %" PRIuPTR "\n",
                        c->label, kind < 2 ? "match" : kind == 2 ? "peek" : "find", got, want);
                failed = 1;
            } else if (i >= 0 &&
                       (remove || (kind > 2 && accept_takes_last(&acc, ref.v[i].cookie)))) {
                ref_delete(&ref, (size_t)i);
            }
        } else if (ref.len > 0) {
            size_t i = rng_below((unsigned)ref.len);
            if (onic_matcher_remove(m, ref.v[i].handle) != ONIC_OK) {
                fprintf(stderr, "%s: remove of a queued entry failed\n", c->label);
                failed = 1;
            }
            stale = ref.v[i].handle;
            ref_delete(&ref, i);
        }
        if (!failed && step % 1000 == 0 && strcmp(c->engine, "wide") == 0 &&
            !onic_match_wide_check(m)) {
            fprintf(stderr, "%s: the wide engine's invariants do not hold\n", c->label);
            failed = 1;
        }
        if (!failed && onic_matcher_length(m) != ref.len) {
            fprintf(stderr, "%s: length %zu, reference %zu\n", c->label,
                    onic_matcher_length(m), ref.len);
            failed = 1;
        }
    }
    /* Drain: everything left comes out in queue order. */
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
        fprintf(stderr, "FAILED: %s, %u%% wildcards, run seed %" PRIu64 " (at step %" PRIu64 ")\n",
                c->label, wild_pct, seed, step);
    renumbered += m->renumbers;
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
static void tune_hash_scalar(onic_config_t *cfg) { cfg->simd = ONIC_SIMD_SCALAR; }

static const diff_case_t cases[] = {
    {"list", "list", tune_none, 0},
    {"list", "list(tiny key gaps)", tune_none, 1},
    {"hash", "hash", tune_none, 0},
    {"hash", "hash(1 bucket to start)", tune_hash_tiny, 0},
    {"hash", "hash(tiny key gaps)", tune_none, 1},
    {"hash", "hash(ring tags without SSE2)", tune_hash_scalar, 0},
    {"alpu", "alpu", tune_none, 0},
    {"alpu", "alpu(8 cells, blocks of 2)", tune_alpu_8x2, 0},
    {"alpu", "alpu(256 cells, blocks of 32)", tune_alpu_256x32, 0},
    {"alpu", "alpu(64 cells, scalar)", tune_alpu_scalar, 0},
    {"alpu", "alpu(8 cells, tiny key gaps)", tune_alpu_8x2, 1},
    {"wide", "wide", tune_none, 0},
    {"wide", "wide(clean-up 1, scalar)", tune_wide_scalar, 0},
    {"wide", "wide(clean-up 1024)", tune_wide_eager, 0},
    {"wide", "wide(tiny key gaps)", tune_none, 1},
};

int main(int argc, char **argv)
{
    /* A new seed each run explores; MATCH_DIFF_SEED or --seed replays one
     * (not ONIC_*: the library warns of unknown ONIC_ variables). */
    const char *env = getenv("MATCH_DIFF_SEED");
    uint64_t ops = 150000, seed = env != NULL ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
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
    printf("seed %" PRIu64 ", %" PRIu64 " operations per run (replay: MATCH_DIFF_SEED=%" PRIu64
           " or --seed %" PRIu64 ")\n", seed, ops, seed, seed);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (size_t x = 0; x < sizeof(mixes) / sizeof(mixes[0]); x++) {
            int f = diff_run(&cases[c], mixes[x], seed + x, ops);
            runs++;
            failures += (unsigned)f;
            printf("%-32s %2u%% wildcards  %s\n", cases[c].label, mixes[x], f ? "FAILED" : "ok");
        }
    }
    printf("%lu appends and inserts were refused for lack of memory, each changing nothing\n",
           refused);
    printf("%lu renumberings of the order keys\n", renumbered);
    printf("match_diff: %u passed, %u failed\n", runs - failures, failures);
    if (failures)
        fprintf(stderr, "replay: %s --seed %" PRIu64 " --ops %" PRIu64 "\n", argv[0], seed, ops);
    return failures ? 1 : 0;
}
