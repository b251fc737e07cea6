/* onic-bench-match: the cost of matching against queues of a given depth,
 * for every engine, with the list engine measured in the same run as the
 * baseline (paper 000's pre-posted and unexpected queue benchmarks, reduced
 * to the matching itself).
 *
 *   posted:     one arriving header against D posted receives (which carry
 *               the wildcards): match and remove, post a replacement.
 *   unexpected: one receive (which carries the wildcards) searching D
 *               unexpected headers: match and remove, a new header arrives.
 *
 * The header or receive targets a random entry of the queue, so the list
 * engine walks D/2 entries on average. Reported: the median ns per operation
 * over repeated runs and the mean entries inspected per lookup; for alpu on
 * a clocked unit (ONIC_ALPU_UNIT=rtl), also the unit's clock cycles per
 * lookup, its load rounds included (paper 000's figure 5 in cycles). */
#include "base/clock.h"
#include "base/rand.h"
#include "base/config.h"
#include "match/engine.h"
#include "match/alpu_unit.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_MAX_ENGINES 8
#define BENCH_MAX_DEPTHS  16
#define BENCH_SOURCES     64

typedef struct bench_mix {
    const char *name;
    unsigned    any_source_pct;
    unsigned    any_tag_pct;
} bench_mix_t;

static const bench_mix_t mixes[] = {
    {"0% wildcards", 0, 0},
    {"10% ANY_SOURCE", 10, 0},
    {"10% ANY_SOURCE + 5% ANY_TAG", 10, 5},
};
#define BENCH_NMIXES (sizeof(mixes) / sizeof(mixes[0]))

static const char *const scenarios[] = {"posted", "unexpected"};

typedef struct bench_opts {
    onic_config_t cfg;  /* engine parameters: ONIC_* from the environment */
    int         quick, csv;
    unsigned    reps;
    int         cpu;
    const char *engines[BENCH_MAX_ENGINES];
    unsigned    nengines;
    unsigned    depths[BENCH_MAX_DEPTHS];
    unsigned    ndepths;
} bench_opts_t;

typedef struct bench_result {
    double ns_median, ns_min, ns_max;
    double inspected;
    double cycles;  /* a clocked alpu unit's cycles per lookup; 0 otherwise */
} bench_result_t;

/* --- random numbers, drawn before timing --- */

static onic_rand_t rng_state;

static uint64_t rng(void)
{
    return onic_rand_next(&rng_state);
}

static unsigned rng_below(unsigned n)
{
    return onic_rand_below(&rng_state, n);
}

/* One queue entry or query shape: a fresh tag, a source, wildcards. */
typedef struct bench_key {
    onic_mkey_t key, ignore;
} bench_key_t;

static uint32_t next_tag;

static bench_key_t bench_key_new(unsigned any_source_pct, unsigned any_tag_pct)
{
    bench_key_t k;
    uint32_t tag = next_tag++ & 0x7fffffff;
    unsigned roll = rng_below(100);
    int64_t src = (int64_t)(tag % BENCH_SOURCES);
    int64_t t = tag;

    if (roll < any_source_pct)
        src = ONIC_MATCH_MPI_ANY_SOURCE;
    else if (roll < any_source_pct + any_tag_pct)
        t = ONIC_MATCH_MPI_ANY_TAG;
    onic_match_mpi_encode(1, src, t, &k.key, &k.ignore);
    return k;
}

/* What arrives to hit entry k: a header fills in k's wildcards (posted); a
 * receive takes k's envelope with the mix's wildcards (unexpected). `roll`
 * is a random number drawn before timing. */
static inline bench_key_t bench_query_for(bench_key_t k, int unexpected, const bench_mix_t *mix,
                                          uint64_t roll)
{
    bench_key_t q = {k.key, {0, 0}};

    if (!unexpected) {
        if (k.ignore.id != 0)
            q.key.id = roll % BENCH_SOURCES;
        if (k.ignore.bits != 0)
            q.key.bits = (q.key.bits & ~k.ignore.bits) | ((roll >> 32) & 0x3fffffff);
        return q;
    }
    unsigned pct = (unsigned)(roll % 100);
    if (pct < mix->any_source_pct)
        q.ignore.id = UINT64_MAX;
    else if (pct < mix->any_source_pct + mix->any_tag_pct)
        q.ignore.bits = 0xffffffffull;
    return q;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Random numbers for one chunk of operations, drawn before it is timed. A
 * chunk is small so its arrays do not push the queue out of the caches. */
#define BENCH_CHUNK 1024

typedef struct bench_run {
    onic_matcher_t    *m;
    const bench_mix_t *mix;
    int                unexpected;
    unsigned           depth;
    unsigned           entry_any_src, entry_any_tag;
    bench_key_t       *slots;  /* slot i: the live entry whose cookie is i + 1 */
    uint64_t           misses;
    uint32_t           targets[BENCH_CHUNK];
    uint64_t           rolls[BENCH_CHUNK];
    bench_key_t        fresh[BENCH_CHUNK];
} bench_run_t;

/* Time `ops` operations (match the target, append a replacement); ns. */
static uint64_t bench_ops(bench_run_t *b, uint64_t ops)
{
    uint64_t ns = 0;

    while (ops > 0) {
        unsigned n = ops < BENCH_CHUNK ? (unsigned)ops : BENCH_CHUNK;
        uint64_t t0;

        for (unsigned i = 0; i < n; i++) {
            b->targets[i] = rng_below(b->depth);
            b->rolls[i] = rng();
            b->fresh[i] = bench_key_new(b->entry_any_src, b->entry_any_tag);
        }
        t0 = onic_time_ns();
        for (unsigned i = 0; i < n; i++) {
            bench_key_t q = bench_query_for(b->slots[b->targets[i]], b->unexpected, b->mix,
                                            b->rolls[i]);
            void *c = onic_matcher_match(b->m, q.key, q.ignore);
            if (__builtin_expect(c == NULL, 0)) {
                b->misses++; /* cannot happen: every query targets a live entry */
                continue;
            }
            b->slots[(uintptr_t)c - 1] = b->fresh[i];
            onic_matcher_append(b->m, b->fresh[i].key, b->fresh[i].ignore, c, NULL);
        }
        ns += onic_time_ns() - t0;
        ops -= n;
    }
    return ns;
}

static int bench_one(const bench_opts_t *o, const char *engine, int unexpected,
                     const bench_mix_t *mix, unsigned depth, bench_result_t *r)
{
    /* Each timed repetition lasts about this long, whatever the engine. */
    const double rep_ns = o->quick ? 2e6 : 20e6;
    bench_run_t *b = calloc(1, sizeof(*b));
    double *ns = malloc((o->reps + 1) * sizeof(*ns));
    onic_match_stats_t s0, s1;
    onic_alpu_unit_clock_t c0 = {0}, c1 = {0};
    int clocked = strcmp(engine, "alpu") == 0;
    uint64_t ops;
    int ok = 1;

    if (b == NULL || ns == NULL || (b->slots = malloc(depth * sizeof(*b->slots))) == NULL ||
        onic_matcher_create_cfg(engine, &o->cfg, &b->m) != ONIC_OK) {
        fprintf(stderr, "onic-bench-match: cannot set up %s at depth %u\n", engine, depth);
        if (b != NULL)
            free(b->slots);
        free(b), free(ns);
        return 0;
    }
    b->mix = mix;
    b->unexpected = unexpected;
    b->depth = depth;
    b->entry_any_src = unexpected ? 0 : mix->any_source_pct;
    b->entry_any_tag = unexpected ? 0 : mix->any_tag_pct;
    onic_rand_seed(&rng_state, 0x9e3779b97f4a7c15ull + depth); /* every engine sees the same stream */
    next_tag = 0;
    for (unsigned i = 0; i < depth; i++) {
        b->slots[i] = bench_key_new(b->entry_any_src, b->entry_any_tag);
        /* The cookie is slot + 1: NULL means "no match". */
        onic_matcher_append(b->m, b->slots[i].key, b->slots[i].ignore,
                            (void *)(uintptr_t)(i + 1), NULL);
    }

    /* Warm up (caches, pools, lazy indices) and size the repetitions. */
    ops = 256;
    ns[0] = (double)bench_ops(b, ops) / (double)ops;
    ops = (uint64_t)(rep_ns / (ns[0] > 1 ? ns[0] : 1));
    ops = ops < 256 ? 256 : ops;
    onic_matcher_stats(b->m, &s0);
    if (clocked)
        onic_match_alpu_clock(b->m, &c0);
    for (unsigned rep = 1; rep <= o->reps; rep++)
        ns[rep] = (double)bench_ops(b, ops) / (double)ops;
    onic_matcher_stats(b->m, &s1);
    if (clocked)
        onic_match_alpu_clock(b->m, &c1);

    if (b->misses != 0) {
        fprintf(stderr, "onic-bench-match: %s missed %llu targets at depth %u\n", engine,
                (unsigned long long)b->misses, depth);
        ok = 0;
    }
    qsort(ns + 1, o->reps, sizeof(double), cmp_double);
    r->ns_median = ns[1 + o->reps / 2];
    r->ns_min = ns[1];
    r->ns_max = ns[o->reps];
    r->inspected = s1.lookups > s0.lookups
                       ? (double)(s1.inspected - s0.inspected) / (double)(s1.lookups - s0.lookups)
                       : 0;
    r->cycles = s1.lookups > s0.lookups
                    ? (double)(c1.cycles - c0.cycles) / (double)(s1.lookups - s0.lookups)
                    : 0;
    onic_matcher_destroy(b->m);
    free(b->slots), free(b), free(ns);
    return ok;
}

/* alpu on a unit with a clock (ONIC_ALPU_UNIT=rtl): its cycles are shown. */
static int clocked_unit(const bench_opts_t *o, const char *engine)
{
    return strcmp(engine, "alpu") == 0 && o->cfg.alpu_unit != ONIC_ALPU_UNIT_SW;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--quick] [--csv] [--reps N] [--cpu N|-1] [--engines a,b] [--depths 1,8]\n"
            "  --quick    fewer operations and repetitions (the demo)\n"
            "  --csv      CSV instead of the table\n"
            "  --reps N   timed repetitions of ~20 ms per cell (median reported; default 7,\n"
            "             quick: 3 of ~2 ms)\n"
            "  --cpu N    pin to CPU N (default: the last CPU; -1: do not pin)\n"
            "  --engines  engines to run; list is always added as the baseline\n"
            "  --depths   queue depths (default 1,8,64,256,1024,4096)\n"
            "Engine parameters come from ONIC_* variables (see onic-info), e.g.\n"
            "ONIC_ALPU_THRESHOLD=0 to load the alpu unit from the first entry, or\n"
            "ONIC_ALPU_UNIT=rtl to run alpu on the Verilated unit and count its cycles\n"
            "per lookup (column cyc; hw/alpu, thousands of times slower).\n", argv0);
}

static int parse_opts(int argc, char **argv, bench_opts_t *o)
{
    static const unsigned default_depths[] = {1, 8, 64, 256, 1024, 4096};
    char *engines = NULL, *depths = NULL;

    memset(o, 0, sizeof(*o));
    if (onic_config_read(&o->cfg) != ONIC_OK)
        return 0; /* the variable and what it accepts were logged */
    o->cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) o->quick = 1;
        else if (strcmp(argv[i], "--csv") == 0) o->csv = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            char *end;
            unsigned long r = strtoul(argv[++i], &end, 10);
            if (*end != '\0' || argv[i][0] < '1' || argv[i][0] > '9' || r > 1000) {
                fprintf(stderr, "onic-bench-match: --reps %s is not in 1..1000\n", argv[i]);
                return 0;
            }
            o->reps = (unsigned)r;
        }
        else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc) {
            char *end;
            long c = strtol(argv[++i], &end, 10);
            if (*end != '\0' || argv[i][0] == '\0' || c < -1 || c >= CPU_SETSIZE) {
                fprintf(stderr, "onic-bench-match: --cpu %s is not -1 or a CPU number\n", argv[i]);
                return 0;
            }
            o->cpu = (int)c;
        }
        else if (strcmp(argv[i], "--engines") == 0 && i + 1 < argc) engines = argv[++i];
        else if (strcmp(argv[i], "--depths") == 0 && i + 1 < argc) depths = argv[++i];
        else if (strcmp(argv[i], "--help") == 0) { usage(argv[0]); exit(0); }
        else return 0;
    }
    if (o->reps == 0)
        o->reps = o->quick ? 3 : 7;

    o->engines[o->nengines++] = "list";
    if (engines == NULL) {
        for (const char *const *e = onic_match_engines(); *e != NULL; e++)
            if (strcmp(*e, "list") != 0 && o->nengines < BENCH_MAX_ENGINES)
                o->engines[o->nengines++] = *e;
    } else {
        for (char *tok = strtok(engines, ","); tok != NULL; tok = strtok(NULL, ",")) {
            if (onic_match_ops_find(tok) == NULL) {
                fprintf(stderr, "onic-bench-match: unknown engine \"%s\"\n", tok);
                return 0;
            }
            if (strcmp(tok, "list") != 0 && o->nengines < BENCH_MAX_ENGINES)
                o->engines[o->nengines++] = tok;
        }
    }
    if (depths == NULL) {
        memcpy(o->depths, default_depths, sizeof(default_depths));
        o->ndepths = sizeof(default_depths) / sizeof(default_depths[0]);
    } else {
        for (char *tok = strtok(depths, ","); tok != NULL && o->ndepths < BENCH_MAX_DEPTHS;
             tok = strtok(NULL, ",")) {
            char *end;
            long d = strtol(tok, &end, 10);
            if (*end != '\0' || d < 1 || d > 1 << 20) {
                fprintf(stderr, "onic-bench-match: depth \"%s\" is not in 1..1048576\n", tok);
                return 0;
            }
            o->depths[o->ndepths++] = (unsigned)d;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    static bench_result_t res[2][BENCH_NMIXES][BENCH_MAX_DEPTHS][BENCH_MAX_ENGINES];

    if (!parse_opts(argc, argv, &o)) {
        usage(argv[0]);
        return 2;
    }
    if (o.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(o.cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) != 0)
            fprintf(stderr, "onic-bench-match: cannot pin to cpu %d: %m (running unpinned)\n",
                    o.cpu);
    }

    if (o.csv)
        printf("scenario,mix,depth,engine,ns_median,ns_min,ns_max,inspected_mean,speedup_vs_list,"
               "unit_cycles_per_lookup\n");
    else
        printf("onic-bench-match: ns per operation (median of %u runs) and entries inspected "
               "per lookup;\nx list = list's time / this engine's time, measured in the same "
               "run%s\n", o.reps, o.quick ? " (quick mode)" : "");

    for (unsigned s = 0; s < 2; s++) {
        for (unsigned x = 0; x < BENCH_NMIXES; x++) {
            if (!o.csv) {
                printf("\n%s queue, %s\n%6s", scenarios[s], mixes[x].name, "depth");
                for (unsigned e = 0; e < o.nengines; e++)
                    printf(" | %6s ns  insp%s%s", o.engines[e], e ? "   x list" : "",
                           clocked_unit(&o, o.engines[e]) ? "    cyc" : "");
                printf("\n");
            }
            for (unsigned d = 0; d < o.ndepths; d++) {
                if (!o.csv)
                    printf("%6u", o.depths[d]);
                for (unsigned e = 0; e < o.nengines; e++) {
                    bench_result_t *r = &res[s][x][d][e];
                    if (!bench_one(&o, o.engines[e], (int)s, &mixes[x], o.depths[d], r))
                        return 1;
                    double speedup = res[s][x][d][0].ns_median / r->ns_median;
                    if (o.csv)
                        printf("%s,%s,%u,%s,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n", scenarios[s],
                               mixes[x].name, o.depths[d], o.engines[e], r->ns_median, r->ns_min,
                               r->ns_max, r->inspected, speedup, r->cycles);
                    else if (e == 0)
                        printf(" | %9.1f %6.1f", r->ns_median, r->inspected);
                    else
                        printf(" | %9.1f %6.1f %8.1f", r->ns_median, r->inspected, speedup);
                    if (!o.csv && e != 0 && clocked_unit(&o, o.engines[e]))
                        printf(" %6.1f", r->cycles);
                    fflush(stdout);
                }
                if (!o.csv)
                    printf("\n");
            }
        }
    }
    return 0;
}
