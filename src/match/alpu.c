/* alpu: the list management of paper 000 section IV. The whole queue is an
 * ordered software list (the NIC processor's copy); its first entries are
 * also loaded, as a prefix, into an ALPU unit that finds the first match
 * among them in one request: the C unit (alpu_unit.c) or, with
 * ONIC_ALPU_UNIT=rtl, the Verilated RTL (hw/alpu), both reached through the
 * same table (onic_alpu_unit_ops_t). A MATCH_FAILURE means
 * none of them matched, so only the unloaded rest of the list is walked.
 * Loads are batched (section IV.B: "conglomerate insertions"), so a short
 * unloaded tail is normal and the walk covers it.
 *
 * The unit only ever adds cells behind its youngest one, so an entry
 * inserted in front of a loaded one cuts the prefix there: the loaded
 * entries behind it become tombstones, as if cancelled, and are loaded again
 * after it by the next round. A lookup with an accept callback asks the unit
 * to probe; if accept refuses that first match, the unit cannot be asked for
 * the match behind it (a request always answers the first valid cell), so
 * the search goes on in software along the list from the refused entry. */
#include "match/engine.h"
#include "match/alpu_unit.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"

#include <assert.h>

#define ALPU_LOADED 1u  /* flags: the entry has a cell in the unit */

typedef struct alpu_entry {
    onic_mentry_t super;
    onic_dlist_t  link;
    uint32_t      slot;  /* the tag of its cell, while ALPU_LOADED */
    uint32_t      flags;
} alpu_entry_t;

/* Cell tags are indices into slots[], never entry pointers: the cell of a
 * cancelled entry stays in the unit until a match deletes it or a RESET,
 * and the pool may hand the entry's memory to a new append before then.
 * slots[t] is the entry in the cell tagged t, or NULL for a tombstone. A
 * slot is taken per cell, so `cells` slots always suffice. */
typedef struct alpu_engine {
    onic_dlist_t      live;      /* every queued entry, in queue order */
    onic_dlist_t     *unloaded;  /* first entry without a cell, or &live */
    size_t            nunloaded; /* entries from `unloaded` to the tail */
    void             *unit;
    const onic_alpu_unit_ops_t *uops;  /* ONIC_ALPU_UNIT's table */
    alpu_entry_t    **slots;
    uint32_t         *free_slots;  /* stack of unused tags */
    unsigned          nfree;
    unsigned          cells;
    unsigned          batch;       /* entries worth a load round, see alpu_load_due */
    unsigned          dead;        /* tombstones still holding a cell */
    unsigned          threshold;
    uint64_t          compared;    /* the unit's compared count, last seen */
} alpu_engine_t;

static void alpu_slots_clear(alpu_engine_t *a)
{
    /* Pushed in reverse so tags are handed out 0, 1, 2, ... */
    for (unsigned i = 0; i < a->cells; i++)
        a->free_slots[i] = a->cells - 1 - i;
    a->nfree = a->cells;
    a->dead  = 0;
}

static void alpu_slot_put(alpu_engine_t *a, uint32_t slot)
{
    a->slots[slot] = NULL;
    a->free_slots[a->nfree++] = slot;
}

static onic_status_t alpu_init(onic_matcher_t *m)
{
    unsigned cells = m->cfg.alpu_cells;
    const onic_alpu_unit_ops_t *uops;
    void *unit;
    alpu_engine_t *a;
    onic_status_t status;

    status = onic_alpu_unit_ops_get(&m->cfg, &uops);
    if (status != ONIC_OK)
        return status;
    status = uops->create(cells, m->cfg.alpu_block, (onic_simd_t)m->cfg.simd, &unit);
    if (status == ONIC_ERR_UNSUPPORTED) {
        onic_error("alpu: the ONIC_ALPU_UNIT=%s unit was built for ONIC_ALPU_CELLS/"
                   "ONIC_ALPU_BLOCK %s only, not %u/%u; set those, or build it for this size "
                   "(docs/architecture.md, alpu in hardware)", uops->name,
                   uops->sizes != NULL ? uops->sizes : "(none)", cells, m->cfg.alpu_block);
        return ONIC_ERR_INVALID_PARAM;
    }
    if (status != ONIC_OK)
        return status;
    a = onic_calloc(1, sizeof(*a));
    if (a == NULL)
        goto err_unit;
    a->slots      = onic_calloc(cells, sizeof(*a->slots));
    a->free_slots = onic_malloc(cells * sizeof(*a->free_slots));
    if (a->slots == NULL || a->free_slots == NULL)
        goto err_engine;
    onic_dlist_init(&a->live);
    a->unloaded  = &a->live;
    a->unit      = unit;
    a->uops      = uops;
    a->cells     = cells;
    /* A load round's fixed cost includes a compaction linear in the unit,
     * so the batch grows with it; a block's worth at least. */
    a->batch     = cells / 8 > m->cfg.alpu_block ? cells / 8 : m->cfg.alpu_block;
    a->threshold = m->cfg.alpu_threshold;
    alpu_slots_clear(a);
    m->engine = a;
    return ONIC_OK;

err_engine:
    onic_free(a->slots);
    onic_free(a->free_slots);
    onic_free(a);
err_unit:
    uops->destroy(unit);
    onic_error("alpu: cannot allocate an engine for %u cells", cells);
    return ONIC_ERR_NO_MEMORY;
}

static void alpu_fini(onic_matcher_t *m)
{
    alpu_engine_t *a = m->engine;

    a->uops->destroy(a->unit);
    onic_free(a->slots);
    onic_free(a->free_slots);
    onic_free(a);
}

static void alpu_append(onic_matcher_t *m, onic_mentry_t *e)
{
    alpu_engine_t *a = m->engine;
    alpu_entry_t *ae = (alpu_entry_t *)e;

    ae->flags = 0;
    onic_dlist_push_tail(&a->live, &ae->link);
    if (a->unloaded == &a->live)
        a->unloaded = &ae->link;
    a->nunloaded++;
}

/* Commands never back up for long: the unit drains its command FIFO in
 * insert mode without producing results, so running it makes room. */
static void alpu_cmd(alpu_engine_t *a, const onic_alpu_cmd_t *cmd)
{
    if (a->uops->cmd_push(a->unit, cmd) == ONIC_OK)
        return;
    a->uops->run(a->unit);
    onic_status_t status = a->uops->cmd_push(a->unit, cmd);
    assert(status == ONIC_OK);
    (void)status;
}

/* One request, answered at once: find() takes every result as it comes, so
 * the unit never has an older one queued. */
static void alpu_request(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int probe,
                         onic_alpu_result_t *res_p)
{
    alpu_engine_t *a = m->engine;
    onic_alpu_hdr_t hdr = {.key = key, .ignore = ignore, .probe = (uint32_t)probe};
    onic_status_t status;
    uint64_t compared;

    status = a->uops->hdr_push(a->unit, &hdr);
    assert(status == ONIC_OK);
    a->uops->run(a->unit);
    status = a->uops->result_pop(a->unit, res_p);
    assert(status == ONIC_OK && res_p->type != ONIC_ALPU_RES_START_ACK);
    (void)status;
    compared = a->uops->compared(a->unit);
    m->stats.inspected += compared - a->compared;
    a->compared = compared;
}

/* Whether a load round is worth its fixed cost (START_INSERT, the wait for
 * START_ACKNOWLEDGE, STOP_INSERT, the unit's compaction) now. Always when
 * the unit is empty; otherwise once a batch has piled up and has room:
 * a->batch unloaded entries and free cells, or half the queue for a queue
 * too short to reach that. Until then the few unloaded entries are found by
 * the walk after MATCH_FAILURE, which a request for them pays for. */
static int alpu_load_due(const onic_matcher_t *m, const alpu_engine_t *a)
{
    size_t want;

    if (m->length <= a->threshold || a->nunloaded == 0 || a->nfree == 0)
        return 0;
    if (a->nfree == a->cells)
        return 1;
    want = m->length / 2 < a->batch ? m->length / 2 : a->batch;
    return a->nunloaded >= want && a->nfree >= want;
}

/* Batch-load the oldest unloaded entries into the free cells. Loading in
 * queue order keeps the loaded entries a prefix: each is older than every
 * unloaded one. */
static void alpu_load(alpu_engine_t *a)
{
    onic_alpu_cmd_t cmd = {.type = ONIC_ALPU_CMD_START_INSERT};
    onic_alpu_result_t res;
    unsigned room;

    alpu_cmd(a, &cmd);
    a->uops->run(a->unit);
    if (a->uops->result_pop(a->unit, &res) != ONIC_OK || res.type != ONIC_ALPU_RES_START_ACK) {
        assert(!"alpu unit did not acknowledge START_INSERT");
        return;
    }
    assert(res.free == a->nfree);
    cmd.type = ONIC_ALPU_CMD_INSERT;
    for (room = res.free; room > 0 && a->unloaded != &a->live; room--) {
        alpu_entry_t *e = onic_container_of(a->unloaded, alpu_entry_t, link);
        uint32_t slot = a->free_slots[--a->nfree];

        a->slots[slot] = e;
        e->slot = slot;
        e->flags |= ALPU_LOADED;
        cmd.key    = e->super.key;
        cmd.ignore = e->super.ignore;
        cmd.tag    = slot;
        alpu_cmd(a, &cmd);
        a->unloaded = a->unloaded->next;
        a->nunloaded--;
    }
    cmd.type = ONIC_ALPU_CMD_STOP_INSERT;
    alpu_cmd(a, &cmd);
    a->uops->run(a->unit);
}

/* Take the loaded entries from l to the end of the prefix out of the unit,
 * leaving tombstones, so that the prefix ends before l. */
static void alpu_unload_from(alpu_engine_t *a, onic_dlist_t *l)
{
    for (onic_dlist_t *x = l; x != a->unloaded; x = x->next) {
        alpu_entry_t *e = onic_container_of(x, alpu_entry_t, link);
        a->slots[e->slot] = NULL;
        a->dead++;
        e->flags &= ~ALPU_LOADED;
        a->nunloaded++;
    }
    a->unloaded = l;
}

/* Too many tombstones waste cells: clear the unit and let the next find
 * reload it from the oldest live entry. */
static void alpu_reset(alpu_engine_t *a)
{
    onic_alpu_cmd_t cmd = {.type = ONIC_ALPU_CMD_RESET};

    alpu_cmd(a, &cmd);
    a->uops->run(a->unit);
    for (onic_dlist_t *l = a->live.next; l != a->unloaded; l = l->next) {
        onic_container_of(l, alpu_entry_t, link)->flags &= ~ALPU_LOADED;
        a->nunloaded++;
    }
    a->unloaded = a->live.next;
    for (unsigned i = 0; i < a->cells; i++)
        a->slots[i] = NULL;
    alpu_slots_clear(a);
}

static void alpu_remove(onic_matcher_t *m, onic_mentry_t *e);

/* find with accept. The unit probes (it keeps the cell) so that a refused
 * entry stays queued; a taken one is then deleted with the same query, which
 * hits the same cell. After a refusal the walk starts behind the refused
 * entry, loaded or not, and a loaded entry it takes and removes leaves a
 * tombstone, as a cancel does. */
static onic_mentry_t *alpu_find_accept(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                       onic_match_accept_t accept, void *arg, int *remove)
{
    alpu_engine_t *a = m->engine;
    onic_dlist_t *from = NULL;
    onic_alpu_result_t res;
    uint64_t walked = 0;
    int took;

    if (alpu_load_due(m, a))
        alpu_load(a);
    while (a->nfree < a->cells) {
        alpu_entry_t *e;
        uint32_t slot;

        alpu_request(m, key, ignore, 1, &res);
        if (res.type == ONIC_ALPU_RES_MATCH_FAILURE)
            break;
        slot = (uint32_t)res.tag;
        assert(res.tag < a->cells);
        e = a->slots[slot];
        if (e == NULL) { /* a tombstone: drop it, ask again */
            alpu_request(m, key, ignore, 0, &res);
            assert(res.type == ONIC_ALPU_RES_MATCH_SUCCESS && res.tag == slot);
            alpu_slot_put(a, slot);
            a->dead--;
            continue;
        }
        if ((took = accept(arg, e->super.cookie)) == 0) {
            from = e->link.next;
            break;
        }
        if (took == ONIC_MATCH_TAKE_LAST)
            *remove = 1;
        if (*remove) {
            alpu_request(m, key, ignore, 0, &res);
            assert(res.type == ONIC_ALPU_RES_MATCH_SUCCESS && res.tag == slot);
            alpu_slot_put(a, slot);
            e->flags &= ~ALPU_LOADED;
            onic_dlist_del(&e->link);
        }
        return &e->super;
    }
    if (from == NULL)
        from = a->unloaded;
    for (onic_dlist_t *l = from; l != &a->live; l = l->next) {
        alpu_entry_t *e = onic_container_of(l, alpu_entry_t, link);

        walked++;
        if (onic_mentry_matches(&e->super, key, ignore) &&
            (took = accept(arg, e->super.cookie)) != 0) {
            m->stats.inspected += walked;
            if (took == ONIC_MATCH_TAKE_LAST)
                *remove = 1;
            if (*remove)
                alpu_remove(m, &e->super);
            return &e->super;
        }
    }
    m->stats.inspected += walked;
    return NULL;
}

static onic_mentry_t *alpu_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    alpu_engine_t *a = m->engine;
    onic_alpu_result_t res;
    uint64_t walked = 0;

    if (alpu_load_due(m, a))
        alpu_load(a);
    while (a->nfree < a->cells) {
        alpu_entry_t *e;
        uint32_t slot;

        alpu_request(m, key, ignore, !remove, &res);
        if (res.type == ONIC_ALPU_RES_MATCH_FAILURE)
            break;
        slot = (uint32_t)res.tag;
        assert(res.tag < a->cells);
        e = a->slots[slot];
        if (e == NULL) {
            /* A tombstone. A deleting request already dropped its cell; a
             * probe left it, so drop it with the same query (the oldest
             * match is still that cell). Then ask again. */
            if (!remove) {
                alpu_request(m, key, ignore, 0, &res);
                assert(res.type == ONIC_ALPU_RES_MATCH_SUCCESS && res.tag == slot);
            }
            alpu_slot_put(a, slot);
            a->dead--;
            continue;
        }
        if (remove) {
            alpu_slot_put(a, slot);
            e->flags &= ~ALPU_LOADED;
            onic_dlist_del(&e->link);
        }
        return &e->super;
    }

    for (onic_dlist_t *l = a->unloaded; l != &a->live; l = l->next) {
        alpu_entry_t *e = onic_container_of(l, alpu_entry_t, link);

        walked++;
        if (onic_mentry_matches(&e->super, key, ignore)) {
            m->stats.inspected += walked;
            if (remove) {
                if (l == a->unloaded)
                    a->unloaded = l->next;
                onic_dlist_del(l);
                a->nunloaded--;
            }
            return &e->super;
        }
    }
    m->stats.inspected += walked;
    return NULL;
}

/* Link in the list; in front of a loaded entry, cut the prefix there. */
static onic_status_t alpu_insert(onic_matcher_t *m, onic_mentry_t *e, onic_mentry_t *anchor,
                                 int after)
{
    alpu_engine_t *a = m->engine;
    alpu_entry_t *ae = (alpu_entry_t *)e;
    onic_dlist_t *at = anchor != NULL ? &((alpu_entry_t *)anchor)->link : &a->live;
    onic_dlist_t *next;

    ae->flags = 0;
    onic_match_dlist_insert(after || anchor == NULL ? at : at->prev, &ae->link);
    next = ae->link.next;
    if (next != &a->live && (onic_container_of(next, alpu_entry_t, link)->flags & ALPU_LOADED))
        alpu_unload_from(a, next);
    if (next == a->unloaded)
        a->unloaded = &ae->link;
    a->nunloaded++;
    if (a->dead > a->cells / 2)
        alpu_reset(a);
    return ONIC_OK;
}

static onic_mentry_t *alpu_neighbour(onic_matcher_t *m, const onic_mentry_t *e, int after)
{
    alpu_engine_t *a = m->engine;
    const onic_dlist_t *l = &((const alpu_entry_t *)e)->link;
    onic_dlist_t *n = after ? l->next : l->prev;

    return n == &a->live ? NULL : &onic_container_of(n, alpu_entry_t, link)->super;
}

/* The unit holds tags, not order keys: only the list needs the new keys. */
static onic_status_t alpu_renumber(onic_matcher_t *m, uint64_t base, uint64_t stride)
{
    alpu_engine_t *a = m->engine;

    for (onic_dlist_t *l = a->live.next; l != &a->live; l = l->next, base += stride)
        onic_container_of(l, alpu_entry_t, link)->super.seq = base;
    return ONIC_OK;
}

/* The unit has no delete-by-tag, so a loaded entry leaves a tombstone: its
 * slot forgets the entry (which the front end frees once we return) and the
 * cell goes when a request next hits it, or at a RESET. */
static void alpu_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    alpu_engine_t *a = m->engine;
    alpu_entry_t *ae = (alpu_entry_t *)e;

    if (ae->flags & ALPU_LOADED) {
        a->slots[ae->slot] = NULL;
        a->dead++;
        ae->flags &= ~ALPU_LOADED;
    } else {
        if (&ae->link == a->unloaded)
            a->unloaded = ae->link.next;
        a->nunloaded--;
    }
    onic_dlist_del(&ae->link);
    if (a->dead > a->cells / 2)
        alpu_reset(a);
}

const onic_alpu_unit_t *onic_match_alpu_unit(const onic_matcher_t *m)
{
    const alpu_engine_t *a;

    if (m == NULL || m->ops != &onic_match_alpu_ops)
        return NULL;
    a = m->engine;
    return a->uops == &onic_alpu_unit_sw_ops ? a->unit : NULL;
}

onic_status_t onic_match_alpu_clock(const onic_matcher_t *m, onic_alpu_unit_clock_t *clock_p)
{
    const alpu_engine_t *a;

    if (m == NULL || clock_p == NULL || m->ops != &onic_match_alpu_ops) {
        onic_error("alpu: onic_match_alpu_clock needs an alpu matcher and a place for the counts");
        return ONIC_ERR_INVALID_PARAM;
    }
    a = m->engine;
    a->uops->clock(a->unit, clock_p);
    return ONIC_OK;
}

const onic_match_ops_t onic_match_alpu_ops = {
    .name       = "alpu",
    .desc       = "software model of paper 000's associative list unit, "
                  "loaded with the first entries",
    .entry_size = sizeof(alpu_entry_t),
    .init       = alpu_init,
    .fini       = alpu_fini,
    .append     = alpu_append,
    .insert     = alpu_insert,
    .neighbour  = alpu_neighbour,
    .renumber   = alpu_renumber,
    .find       = alpu_find,
    .find_accept = alpu_find_accept,
    .remove     = alpu_remove,
};
