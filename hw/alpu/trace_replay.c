/* alpu_trace_replay: recorded matching traffic (ONIC_TRACE files, read with
 * src/match/trace.h's reader) replayed into the alpu engine twice, once on
 * onic's C unit and once on the Verilated RTL unit (the plug-in,
 * ONIC_ALPU_UNIT=rtl), operation by operation. The engine drives both units
 * with the same commands and requests as long as their answers agree, so
 * every lookup must find, on both, the entry the live run found; a lookup
 * with an accept callback (Portals' MD checks) takes exactly that entry.
 * Reports the differences (the exit status is 1 if there are any) and the
 * RTL unit's clock cycles per lookup against the queue's length: paper
 * 000's figure 5 for the ALPU, counted on the traffic of real runs.
 *
 *   alpu_trace_replay [--cells N --block B --threshold T] PLUGIN TRACE...
 *
 * cells, block and threshold default to ONIC_ALPU_CELLS, ONIC_ALPU_BLOCK and
 * ONIC_ALPU_THRESHOLD's defaults; the plug-in must have been built for
 * that size (ONIC_ALPU_RTL_SIZES). */
#include "base/config.h"
#include "match/alpu_unit.h"
#include "match/engine.h"
#include "match/trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry of the live run, as queued in both matchers. */
typedef struct node {
    onic_mentry_t *sw, *rtl;
} node_t;

/* (queue, address) -> the latest node appended with them. Addresses are
 * unique among a process's queued entries and reused after; a new append
 * replaces the old mapping, so nothing is ever deleted. */
typedef struct slot {
    uint64_t addr;
    uint32_t queue;
    node_t  *node;
} slot_t;

typedef struct map {
    slot_t *slots;
    size_t  cap, used;
} map_t;

typedef struct queue {
    uint32_t        queue;
    onic_matcher_t *sw, *rtl;
} queue_t;

#define NBUCKETS 8
static const size_t bucket_top[NBUCKETS] = {4, 8, 16, 32, 64, 128, 256, SIZE_MAX};

typedef struct totals {
    uint64_t ops, lookups, differences, unknown;
    uint64_t lookups_by_len[NBUCKETS], cycles_by_len[NBUCKETS];
} totals_t;

static size_t map_hash(uint32_t queue, uint64_t addr, size_t cap)
{
    uint64_t h = (addr ^ ((uint64_t)queue << 48)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static slot_t *map_find(map_t *m, uint32_t queue, uint64_t addr)
{
    size_t i = map_hash(queue, addr, m->cap);

    while (m->slots[i].node != NULL && (m->slots[i].addr != addr || m->slots[i].queue != queue))
        i = (i + 1) & (m->cap - 1);
    return &m->slots[i];
}

static int map_put(map_t *m, uint32_t queue, uint64_t addr, node_t *node)
{
    slot_t *s;

    if (2 * (m->used + 1) > m->cap) {
        map_t bigger = {calloc(2 * m->cap, sizeof(slot_t)), 2 * m->cap, 0};
        if (bigger.slots == NULL)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].node != NULL) {
                *map_find(&bigger, m->slots[i].queue, m->slots[i].addr) = m->slots[i];
                bigger.used++;
            }
        free(m->slots);
        *m = bigger;
    }
    s = map_find(m, queue, addr);
    if (s->node == NULL)
        m->used++;
    s->addr  = addr;
    s->queue = queue;
    s->node  = node;
    return 0;
}

static node_t *map_get(map_t *m, uint32_t queue, uint64_t addr)
{
    return map_find(m, queue, addr)->node;
}

static int accept_only(void *arg, void *cookie)
{
    return arg != NULL && arg == cookie;
}

static void *lookup(onic_matcher_t *m, const onic_trace_rec_t *r, node_t *want)
{
    if (r->flags & ONIC_TRACE_ACCEPT)
        return onic_matcher_find(m, r->key, r->ignore, accept_only, want,
                                 r->op == ONIC_TRACE_OP_MATCH);
    if (r->op == ONIC_TRACE_OP_MATCH)
        return onic_matcher_match(m, r->key, r->ignore);
    return onic_matcher_peek(m, r->key, r->ignore);
}

static queue_t *queue_get(queue_t **qs, size_t *nq, uint32_t id, const onic_config_t *cfg)
{
    onic_config_t sw = *cfg;
    queue_t *q;

    for (size_t i = 0; i < *nq; i++)
        if ((*qs)[i].queue == id)
            return &(*qs)[i];
    q = realloc(*qs, (*nq + 1) * sizeof(**qs));
    if (q == NULL)
        return NULL;
    *qs = q;
    q = &(*qs)[(*nq)++];
    memset(q, 0, sizeof(*q));
    q->queue = id;
    sw.alpu_unit = ONIC_ALPU_UNIT_SW;
    if (onic_matcher_create_cfg("alpu", &sw, &q->sw) != ONIC_OK ||
        onic_matcher_create_cfg("alpu", cfg, &q->rtl) != ONIC_OK) {
        (*nq)--;
        return NULL;
    }
    return q;
}

static int replay_file(const char *path, const onic_config_t *cfg, totals_t *tot)
{
    onic_trace_t t;
    char err[256];
    queue_t *qs = NULL;
    size_t nq = 0;
    map_t map = {calloc(1024, sizeof(slot_t)), 1024, 0};
    node_t **nodes = NULL;
    size_t nnodes = 0;
    int rc = 0;

    if (onic_trace_read(path, &t, err, sizeof(err)) != ONIC_OK) {
        fprintf(stderr, "alpu_trace_replay: %s: %s\n", path, err);
        free(map.slots);
        return -1;
    }
    if (t.damaged)
        fprintf(stderr, "alpu_trace_replay: %s: replaying up to offset %llu: %s\n", path,
                (unsigned long long)t.error_offset, t.error);
    nodes = calloc(t.nrecs + 1, sizeof(*nodes));
    if (map.slots == NULL || nodes == NULL) {
        fprintf(stderr, "alpu_trace_replay: out of memory\n");
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < t.nrecs && rc == 0; i++) {
        const onic_trace_rec_t *r = &t.recs[i];
        queue_t *q;
        node_t *n = NULL, *anchor = NULL;
        onic_status_t s1 = ONIC_OK, s2 = ONIC_OK;

        if (r->op == ONIC_TRACE_OP_LABEL)
            continue;
        if ((q = queue_get(&qs, &nq, r->queue, cfg)) == NULL) {
            fprintf(stderr, "alpu_trace_replay: cannot make the alpu engines (see above)\n");
            rc = -1;
            break;
        }
        tot->ops++;
        switch (r->op) {
        case ONIC_TRACE_OP_APPEND:
        case ONIC_TRACE_OP_INSERT:
            if ((n = calloc(1, sizeof(*n))) == NULL || map_put(&map, r->queue, r->entry, n) != 0) {
                free(n);
                fprintf(stderr, "alpu_trace_replay: out of memory\n");
                rc = -1;
                break;
            }
            nodes[nnodes++] = n;
            if (r->op == ONIC_TRACE_OP_APPEND) {
                s1 = onic_matcher_append(q->sw, r->key, r->ignore, n, &n->sw);
                s2 = onic_matcher_append(q->rtl, r->key, r->ignore, n, &n->rtl);
                break;
            }
            if (r->aux != 0 && (anchor = map_get(&map, r->queue, r->aux)) == NULL) {
                tot->unknown++;
                break;
            }
            s1 = onic_matcher_insert(q->sw, r->key, r->ignore, n, (onic_match_pos_t)r->pos,
                                     anchor != NULL ? anchor->sw : NULL, &n->sw);
            s2 = onic_matcher_insert(q->rtl, r->key, r->ignore, n, (onic_match_pos_t)r->pos,
                                     anchor != NULL ? anchor->rtl : NULL, &n->rtl);
            break;
        case ONIC_TRACE_OP_MATCH:
        case ONIC_TRACE_OP_PEEK: {
            size_t len = onic_matcher_length(q->rtl), b = 0;
            onic_alpu_unit_clock_t c0, c1;
            void *fs, *fr;

            if ((r->flags & ONIC_TRACE_HIT) && (n = map_get(&map, r->queue, r->entry)) == NULL) {
                tot->unknown++;
                break;
            }
            onic_match_alpu_clock(q->rtl, &c0);
            fr = lookup(q->rtl, r, n);
            onic_match_alpu_clock(q->rtl, &c1);
            fs = lookup(q->sw, r, n);
            if (fs != (void *)n || fr != (void *)n) {
                if (tot->differences++ < 10)
                    fprintf(stderr, "alpu_trace_replay: %s, record at offset %llu (queue %u, "
                            "length %zu): the live run found %s, the C unit %s, the RTL unit "
                            "%s\n", path, (unsigned long long)t.offsets[i], r->queue, len,
                            n != NULL ? "an entry" : "none",
                            fs == (void *)n ? "the same" : fs != NULL ? "another" : "none",
                            fr == (void *)n ? "the same" : fr != NULL ? "another" : "none");
            }
            while (len > bucket_top[b])
                b++;
            tot->lookups++;
            tot->lookups_by_len[b]++;
            tot->cycles_by_len[b] += c1.cycles - c0.cycles;
            break;
        }
        case ONIC_TRACE_OP_REMOVE:
            if ((n = map_get(&map, r->queue, r->entry)) == NULL) {
                tot->unknown++;
                break;
            }
            s1 = onic_matcher_remove(q->sw, n->sw);
            s2 = onic_matcher_remove(q->rtl, n->rtl);
            break;
        }
        if (s1 != ONIC_OK || s2 != ONIC_OK) {
            if (tot->differences++ < 10)
                fprintf(stderr, "alpu_trace_replay: %s, record at offset %llu: the C unit's "
                        "engine answered %d, the RTL unit's %d\n", path,
                        (unsigned long long)t.offsets[i], (int)s1, (int)s2);
        }
        if (onic_matcher_length(q->sw) != onic_matcher_length(q->rtl) && tot->differences++ < 10)
            fprintf(stderr, "alpu_trace_replay: %s, record at offset %llu: lengths differ\n",
                    path, (unsigned long long)t.offsets[i]);
    }
out:
    for (size_t i = 0; i < nq; i++) {
        onic_matcher_destroy(qs[i].sw);
        onic_matcher_destroy(qs[i].rtl);
    }
    for (size_t i = 0; i < nnodes; i++)
        free(nodes[i]);
    free(nodes);
    free(qs);
    free(map.slots);
    onic_trace_free(&t);
    return rc;
}

static int opt_uint(const char *name, const char *s, unsigned *v)
{
    char *end;
    unsigned long x = strtoul(s, &end, 10);

    if (*end != '\0' || s[0] < '0' || s[0] > '9' || x > 1000000) {
        fprintf(stderr, "alpu_trace_replay: %s %s is not a number up to 1000000\n", name, s);
        return -1;
    }
    *v = (unsigned)x;
    return 0;
}

int main(int argc, char **argv)
{
    onic_config_t cfg;
    totals_t tot;
    int a = 1, files = 0;

    onic_config_defaults(&cfg);
    memset(&tot, 0, sizeof(tot));
    for (; a + 1 < argc && strncmp(argv[a], "--", 2) == 0; a += 2) {
        unsigned *v = !strcmp(argv[a], "--cells") ? &cfg.alpu_cells
                    : !strcmp(argv[a], "--block") ? &cfg.alpu_block
                    : !strcmp(argv[a], "--threshold") ? &cfg.alpu_threshold : NULL;
        if (v == NULL || opt_uint(argv[a], argv[a + 1], v) != 0)
            break;
    }
    if (argc - a < 2 || strncmp(argv[a], "--", 2) == 0) {
        fprintf(stderr, "usage: %s [--cells N] [--block B] [--threshold T] "
                "libonic-alpu-rtl.so TRACE...\n", argv[0]);
        return 2;
    }
    cfg.alpu_unit = ONIC_ALPU_UNIT_RTL;
    snprintf(cfg.alpu_rtl_lib, sizeof(cfg.alpu_rtl_lib), "%s", argv[a++]);
    for (; a < argc; a++, files++)
        if (replay_file(argv[a], &cfg, &tot) != 0)
            return 2;

    printf("alpu_trace_replay: %d files, %llu operations, %llu lookups, cells %u block %u "
           "threshold %u: %llu differences between the live run, the C unit and the RTL unit"
           "%s\n", files, (unsigned long long)tot.ops, (unsigned long long)tot.lookups,
           cfg.alpu_cells, cfg.alpu_block, cfg.alpu_threshold,
           (unsigned long long)tot.differences,
           tot.unknown != 0 ? " (some records named entries the trace never queued)" : "");
    printf("%-12s %10s %16s\n", "queue length", "lookups", "RTL cycles each");
    for (unsigned b = 0, lo = 0; b < NBUCKETS; lo = (unsigned)bucket_top[b] + 1, b++) {
        char range[32];
        if (tot.lookups_by_len[b] == 0)
            continue;
        if (bucket_top[b] == SIZE_MAX)
            snprintf(range, sizeof(range), "%u-", lo);
        else
            snprintf(range, sizeof(range), "%u-%zu", lo, bucket_top[b]);
        printf("%-12s %10llu %16.2f\n", range, (unsigned long long)tot.lookups_by_len[b],
               (double)tot.cycles_by_len[b] / (double)tot.lookups_by_len[b]);
    }
    return tot.differences == 0 && tot.unknown == 0 ? 0 : 1;
}
