/* list: a doubly linked list in queue order, walked from the front: the
 * queue every MPI library in the papers used and the baseline for the others. */
#include "match/engine.h"
#include "base/list.h"

typedef struct list_entry {
    onic_mentry_t   super;
    onic_dlist_t    link;
} list_entry_t;

static onic_status_t list_init(onic_matcher_t *m)
{
    static_assert(sizeof(onic_dlist_t) == 2 * sizeof(void *), "list head is two pointers");
    m->engine = onic_dlist_head_alloc();
    if (m->engine == NULL) {
        onic_error("match/list: cannot allocate the list head");
        return ONIC_ERR_NO_MEMORY;
    }
    return ONIC_OK;
}

static void list_fini(onic_matcher_t *m)
{
    onic_dlist_head_free(m->engine);
}

static void list_append(onic_matcher_t *m, onic_mentry_t *e)
{
    onic_dlist_push_tail(m->engine, &((list_entry_t *)e)->link);
}

static onic_status_t list_insert(onic_matcher_t *m, onic_mentry_t *e, onic_mentry_t *anchor,
                                 int after)
{
    onic_dlist_t *at = anchor != NULL ? &((list_entry_t *)anchor)->link : m->engine;

    onic_match_dlist_insert(after || anchor == NULL ? at : at->prev, &((list_entry_t *)e)->link);
    return ONIC_OK;
}

static onic_mentry_t *list_neighbour(onic_matcher_t *m, const onic_mentry_t *e, int after)
{
    const onic_dlist_t *l = &((const list_entry_t *)e)->link;
    onic_dlist_t *n = after ? l->next : l->prev;

    return n == m->engine ? NULL : &onic_container_of(n, list_entry_t, link)->super;
}

static onic_status_t list_renumber(onic_matcher_t *m, uint64_t base, uint64_t stride)
{
    onic_dlist_t *head = m->engine;

    for (onic_dlist_t *l = head->next; l != head; l = l->next, base += stride)
        onic_container_of(l, list_entry_t, link)->super.seq = base;
    return ONIC_OK;
}

/* A refused entry is just passed by: the walk goes on behind it. Inline
 * into both ops, so find's constant NULL accept costs nothing. */
static inline onic_mentry_t *list_walk(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                       onic_match_accept_t accept, void *arg, int *remove)
{
    onic_dlist_t *head = m->engine;
    uint64_t inspected = 0;

    for (onic_dlist_t *l = head->next; l != head; l = l->next) {
        list_entry_t *le = onic_container_of(l, list_entry_t, link);
        int took;

        inspected++;
        if (onic_mentry_matches(&le->super, key, ignore) &&
            (took = accept == NULL ? ONIC_MATCH_TAKE : accept(arg, le->super.cookie)) != 0) {
            m->stats.inspected += inspected;
            if (took == ONIC_MATCH_TAKE_LAST)
                *remove = 1;
            if (*remove)
                onic_dlist_del(l);
            return &le->super;
        }
    }
    m->stats.inspected += inspected;
    return NULL;
}

static onic_mentry_t *list_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    return list_walk(m, key, ignore, NULL, NULL, &remove);
}

static onic_mentry_t *list_find_accept(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore,
                                       onic_match_accept_t accept, void *arg, int *remove)
{
    return list_walk(m, key, ignore, accept, arg, remove);
}

static void list_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    (void)m;
    onic_dlist_del(&((list_entry_t *)e)->link);
}

const onic_match_ops_t onic_match_list_ops = {
    .name       = "list",
    .desc       = "linked list walked from the front (the papers' baseline)",
    .entry_size = sizeof(list_entry_t),
    .init       = list_init,
    .fini       = list_fini,
    .append     = list_append,
    .insert     = list_insert,
    .neighbour  = list_neighbour,
    .renumber   = list_renumber,
    .find       = list_find,
    .find_accept = list_find_accept,
    .remove     = list_remove,
};
