/* Rebuilding traced queues record by record and handing each operation to
 * the models and to onic's real engines (see replay.h). Every record is
 * checked against the rebuilt queue: an entry that is not queued, or an
 * engine finding another entry than the live run did, stops that queue's
 * replay with the record's offset. */
#include "replay.h"
#include "match/engine.h"
#include "base/clock.h"
#include "base/mem.h"

#include <stdlib.h>
#include <string.h>

const char *const replay_engine_names[REPLAY_ENGINES] = {"list", "hash", "alpu", "wide"};

typedef struct rnode {
    struct rnode  *prev, *next;
    uint64_t       addr;     /* the live entry's address: its name in the trace */
    onic_mkey_t    key, ignore;
    onic_mentry_t *eng[REPLAY_ENGINES];
} rnode_t;

/* Live entries by address: open addressing, linear probing, backward-shift
 * deletion. */
typedef struct rmap {
    uint64_t *keys;
    rnode_t **vals;
    size_t    cap, count;
} rmap_t;

typedef struct rqueue {
    uint32_t        queue;
    unsigned        kind;
    int             dead;     /* inconsistent: its later records are skipped */
    rnode_t         head;     /* sentinel of the ordered entries */
    size_t          len;
    rmap_t          map;
    replay_mstate_t ms[REPLAY_MODELS];
    onic_matcher_t *eng[REPLAY_ENGINES];
} rqueue_t;

static size_t rmap_slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static rnode_t *rmap_get(const rmap_t *m, uint64_t key)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = rmap_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (m->keys[i] == 0)
            return NULL;
    }
}

static int rmap_put(rmap_t *m, uint64_t key, rnode_t *val)
{
    size_t i;

    if (2 * (m->count + 1) > m->cap) {
        rmap_t n = {NULL, NULL, m->cap == 0 ? 64 : 2 * m->cap, 0};
        n.keys = onic_calloc(n.cap, sizeof(*n.keys));
        n.vals = onic_calloc(n.cap, sizeof(*n.vals));
        if (n.keys == NULL || n.vals == NULL) {
            onic_free(n.keys);
            onic_free(n.vals);
            return -1;
        }
        for (size_t j = 0; j < m->cap; j++)
            if (m->keys[j] != 0)
                (void)rmap_put(&n, m->keys[j], m->vals[j]);
        onic_free(m->keys);
        onic_free(m->vals);
        *m = n;
    }
    for (i = rmap_slot(key, m->cap); m->keys[i] != 0; i = (i + 1) & (m->cap - 1))
        ;
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return 0;
}

static void rmap_del(rmap_t *m, uint64_t key)
{
    size_t i = rmap_slot(key, m->cap), j;

    while (m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    /* Backward shift: pull later members of the run into the gap. */
    for (j = (i + 1) & (m->cap - 1); m->keys[j] != 0; j = (j + 1) & (m->cap - 1)) {
        size_t home = rmap_slot(m->keys[j], m->cap);
        if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->vals[i] = NULL;
    m->count--;
}

/* --- results --- */

replay_result_t *replay_result_new(void)
{
    return onic_calloc(1, sizeof(replay_result_t));
}

void replay_result_free(replay_result_t *res)
{
    if (res == NULL)
        return;
    for (int i = 0; i < REPLAY_MODELS; i++)
        onic_free(res->model[i].samples);
    for (int i = 0; i < REPLAY_ENGINES; i++)
        onic_free(res->engine[i].samples);
    onic_free(res);
}

static void total_sample(replay_total_t *t, double ns)
{
    if (t->nsamples == t->cap) {
        size_t ncap = t->cap == 0 ? 4096 : 2 * t->cap;
        double *s = onic_realloc(t->samples, ncap * sizeof(*s));
        if (s == NULL)
            return;   /* percentiles then cover fewer lookups; totals stay exact */
        t->samples = s;
        t->cap = ncap;
    }
    t->samples[t->nsamples++] = ns;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double replay_total_percentile(replay_total_t *t, double q)
{
    size_t i;

    if (t->nsamples == 0)
        return 0;
    qsort(t->samples, t->nsamples, sizeof(*t->samples), cmp_double);
    i = (size_t)(q * (double)(t->nsamples - 1) + 0.5);
    return t->samples[i < t->nsamples ? i : t->nsamples - 1];
}

/* --- one queue --- */

static size_t node_pos(const rqueue_t *q, const rnode_t *n)
{
    size_t pos = 0;

    for (const rnode_t *p = n->prev; p != &q->head; p = p->prev)
        pos++;
    return pos;
}

static void node_link_after(rnode_t *at, rnode_t *n)
{
    n->prev = at;
    n->next = at->next;
    at->next->prev = n;
    at->next = n;
}

static void node_unlink(rqueue_t *q, rnode_t *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    rmap_del(&q->map, n->addr);
    q->len--;
    onic_free(n);
}

static void queue_free(rqueue_t *q)
{
    rnode_t *n = q->head.next;

    while (n != &q->head) {
        rnode_t *next = n->next;
        onic_free(n);
        n = next;
    }
    onic_free(q->map.keys);
    onic_free(q->map.vals);
    for (int i = 0; i < REPLAY_ENGINES; i++)
        onic_matcher_destroy(q->eng[i]);
    onic_free(q);
}

static rqueue_t *queue_new(uint32_t queue, int measure)
{
    rqueue_t *q = onic_calloc(1, sizeof(*q));
    onic_config_t cfg;

    if (q == NULL)
        return NULL;
    q->queue = queue;
    q->head.prev = q->head.next = &q->head;
    if (!measure)
        return q;
    onic_config_defaults(&cfg);   /* the defaults, never ONIC_TRACE: a replay records nothing */
    for (int i = 0; i < REPLAY_ENGINES; i++) {
        if (onic_matcher_create_cfg(replay_engine_names[i], &cfg, &q->eng[i]) != ONIC_OK) {
            queue_free(q);
            return NULL;
        }
    }
    return q;
}

/* Engines: the accept callback takes exactly the entry the live run found. */
static int accept_only(void *arg, void *cookie)
{
    return arg != NULL && arg == cookie;
}

static uint64_t timer_overhead_ns;

static void timer_calibrate(void)
{
    uint64_t best = UINT64_MAX;

    for (int i = 0; i < 1000; i++) {
        uint64_t t0 = onic_time_ns(), t1 = onic_time_ns();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    timer_overhead_ns = best;
}

static double timed(uint64_t t0)
{
    uint64_t d = onic_time_ns() - t0;
    return d > timer_overhead_ns ? (double)(d - timer_overhead_ns) : 0.0;
}

static int fail(replay_result_t *res, rqueue_t *q, const onic_trace_t *t, size_t i,
                const char *what)
{
    q->dead = 1;
    if (!res->inconsistent) {
        res->inconsistent = 1;
        snprintf(res->error, sizeof(res->error),
                 "rank %u queue %u: record at offset %llu: %s; the rest of this queue is "
                 "skipped", t->hdr.rank, q->queue, (unsigned long long)t->offsets[i], what);
    }
    return -1;
}

/* The real engines do what the record says, timed. */
static int replay_engines(replay_result_t *res, rqueue_t *q, const onic_trace_t *t, size_t i,
                          const onic_trace_rec_t *r, rnode_t *n, rnode_t *anchor, size_t len)
{
    int lookup = r->op == ONIC_TRACE_OP_MATCH || r->op == ONIC_TRACE_OP_PEEK;
    size_t slot = len < REPLAY_LEN_MAX ? len : REPLAY_LEN_MAX;

    for (int e = 0; e < REPLAY_ENGINES; e++) {
        onic_matcher_t *m = q->eng[e];
        replay_total_t *tot = &res->engine[e];
        onic_status_t status = ONIC_OK;
        void *found = NULL;
        uint64_t inspected = m->stats.inspected, t0 = onic_time_ns();
        double ns;

        switch (r->op) {
        case ONIC_TRACE_OP_APPEND:
            status = onic_matcher_append(m, r->key, r->ignore, n, &n->eng[e]);
            break;
        case ONIC_TRACE_OP_INSERT:
            status = onic_matcher_insert(m, r->key, r->ignore, n, (onic_match_pos_t)r->pos,
                                         anchor != NULL ? anchor->eng[e] : NULL, &n->eng[e]);
            break;
        case ONIC_TRACE_OP_MATCH:
        case ONIC_TRACE_OP_PEEK:
            if (r->flags & ONIC_TRACE_ACCEPT)
                found = onic_matcher_find(m, r->key, r->ignore, accept_only, n,
                                          r->op == ONIC_TRACE_OP_MATCH);
            else if (r->op == ONIC_TRACE_OP_MATCH)
                found = onic_matcher_match(m, r->key, r->ignore);
            else
                found = onic_matcher_peek(m, r->key, r->ignore);
            break;
        case ONIC_TRACE_OP_REMOVE:
            status = onic_matcher_remove(m, n->eng[e]);
            break;
        }
        ns = timed(t0);
        if (status != ONIC_OK)
            return fail(res, q, t, i, "an engine refused the operation");
        if (lookup && found != (void *)n) {
            char what[96];
            snprintf(what, sizeof(what), "the %s engine found another entry than the live run",
                     replay_engine_names[e]);
            return fail(res, q, t, i, what);
        }
        if (lookup) {
            tot->lookups++;
            tot->hits += found != NULL;
            tot->inspected += m->stats.inspected - inspected;
            tot->lookup_ns += ns;
            res->len_engine_ns[e][slot] += ns;
            if (res->keep_samples)
                total_sample(tot, ns);
        } else {
            tot->other_ops++;
            tot->other_ns += ns;
        }
    }
    return 0;
}

static void replay_models(replay_result_t *res, rqueue_t *q, const onic_trace_rec_t *r,
                          size_t len, size_t pos, uint64_t *list_inspected)
{
    replay_op_t op = {r->op, r->flags, len, pos};
    int lookup = r->op == ONIC_TRACE_OP_MATCH || r->op == ONIC_TRACE_OP_PEEK;
    size_t slot = len < REPLAY_LEN_MAX ? len : REPLAY_LEN_MAX;

    if (lookup)
        res->depth[q->kind][slot]++;
    for (int mi = 0; mi < REPLAY_MODELS; mi++) {
        replay_cost_t c = replay_model_cost((replay_model_id_t)mi, &res->params, &q->ms[mi], &op);
        replay_total_t *tot = &res->model[mi];
        tot->inspected += c.inspected;
        tot->other_ns += c.side_ns;
        if (lookup) {
            tot->lookups++;
            tot->hits += (r->flags & ONIC_TRACE_HIT) != 0;
            tot->lookup_ns += c.ns;
            res->len_ns[mi][slot] += c.ns;
            if (res->keep_samples)
                total_sample(tot, c.ns);
            if (mi == REPLAY_MODEL_LIST && list_inspected != NULL)
                *list_inspected = c.inspected;
        } else {
            tot->other_ops++;
            tot->other_ns += c.ns;
        }
    }
}

static int replay_record(replay_result_t *res, rqueue_t *q, const onic_trace_t *t, size_t i,
                         int measure, uint64_t *list_inspected)
{
    const onic_trace_rec_t *r = &t->recs[i];
    rnode_t *n = NULL, *anchor = NULL;
    size_t len = q->len, pos = len;

    switch (r->op) {
    case ONIC_TRACE_OP_LABEL:
        q->kind = r->kind;
        return 0;
    case ONIC_TRACE_OP_APPEND:
    case ONIC_TRACE_OP_INSERT:
        if (rmap_get(&q->map, r->entry) != NULL)
            return fail(res, q, t, i, "an entry added twice without being removed");
        if (r->op == ONIC_TRACE_OP_INSERT && r->pos != ONIC_MATCH_HEAD) {
            anchor = rmap_get(&q->map, r->aux);
            if (anchor == NULL)
                return fail(res, q, t, i, "an insert next to an entry that is not queued");
        }
        n = onic_calloc(1, sizeof(*n));
        if (n == NULL || rmap_put(&q->map, r->entry, n) != 0) {
            onic_free(n);
            return fail(res, q, t, i, "out of memory");
        }
        n->addr = r->entry;
        n->key = r->key;
        n->ignore = r->ignore;
        if (r->op == ONIC_TRACE_OP_APPEND) {
            node_link_after(q->head.prev, n);
        } else if (anchor == NULL) {
            node_link_after(&q->head, n);
            pos = 0;
        } else {
            pos = node_pos(q, anchor) + (r->pos == ONIC_MATCH_AFTER);
            node_link_after(r->pos == ONIC_MATCH_AFTER ? anchor : anchor->prev, n);
        }
        q->len++;
        break;
    case ONIC_TRACE_OP_MATCH:
    case ONIC_TRACE_OP_PEEK:
    case ONIC_TRACE_OP_REMOVE:
        if (r->entry != 0) {
            n = rmap_get(&q->map, r->entry);
            if (n == NULL)
                return fail(res, q, t, i, r->op == ONIC_TRACE_OP_REMOVE ?
                            "removal of an entry that is not queued" :
                            "a lookup found an entry that is not queued");
            pos = node_pos(q, n);
        }
        break;
    }
    if (measure && replay_engines(res, q, t, i, r, n, anchor, len) != 0)
        return -1;
    replay_models(res, q, r, len, pos, list_inspected);
    if (n != NULL && (r->op == ONIC_TRACE_OP_REMOVE || r->op == ONIC_TRACE_OP_MATCH))
        node_unlink(q, n);
    return 0;
}

int replay_trace(const onic_trace_t *t, const replay_opts_t *opts, replay_result_t *res,
                 uint64_t *list_inspected)
{
    rqueue_t **queues = NULL, *last = NULL;
    size_t nqueues = 0, cap = 0;
    int rc = 0;

    if (t == NULL || opts == NULL || res == NULL)
        return -1;
    if (opts->measure && timer_overhead_ns == 0)
        timer_calibrate();
    res->params = opts->params;
    res->keep_samples = opts->keep_samples;
    res->files++;
    for (size_t i = 0; i < t->nrecs; i++) {
        const onic_trace_rec_t *r = &t->recs[i];
        rqueue_t *q;

        if (list_inspected != NULL)
            list_inspected[i] = UINT64_MAX;
        /* Queue numbers come from the file: looked up, never used as an
         * index, so a damaged number costs a search, not an allocation. */
        q = last != NULL && last->queue == r->queue ? last : NULL;
        for (size_t j = 0; q == NULL && j < nqueues; j++)
            if (queues[j]->queue == r->queue)
                q = queues[j];
        if (q == NULL) {
            if (nqueues == cap) {
                size_t ncap = cap == 0 ? 16 : 2 * cap;
                rqueue_t **nq = onic_realloc(queues, ncap * sizeof(*nq));
                if (nq == NULL) {
                    rc = -1;
                    break;
                }
                queues = nq;
                cap = ncap;
            }
            q = queue_new(r->queue, opts->measure);
            if (q == NULL) {
                rc = -1;
                break;
            }
            queues[nqueues++] = q;
            res->queues++;
        }
        last = q;
        if (q->dead)
            continue;
        if (r->op != ONIC_TRACE_OP_LABEL && opts->kinds != 0 && !(opts->kinds & (1u << q->kind)))
            continue;
        res->records++;
        if (replay_record(res, q, t, i, opts->measure,
                          list_inspected != NULL ? &list_inspected[i] : NULL) != 0)
            rc = -1;
        if (q->len > res->max_len)
            res->max_len = q->len;
    }
    for (size_t i = 0; i < nqueues; i++)
        queue_free(queues[i]);
    onic_free(queues);
    return rc;
}
