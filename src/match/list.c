/* list: a doubly linked list walked from the oldest entry, the queue every
 * MPI library in the papers used and the baseline for the others. */
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

static onic_mentry_t *list_find(onic_matcher_t *m, onic_mkey_t key, onic_mkey_t ignore, int remove)
{
    onic_dlist_t *head = m->engine;
    uint64_t inspected = 0;

    for (onic_dlist_t *l = head->next; l != head; l = l->next) {
        list_entry_t *le = onic_container_of(l, list_entry_t, link);
        inspected++;
        if (onic_mentry_matches(&le->super, key, ignore)) {
            m->stats.inspected += inspected;
            if (remove)
                onic_dlist_del(l);
            return &le->super;
        }
    }
    m->stats.inspected += inspected;
    return NULL;
}

static void list_remove(onic_matcher_t *m, onic_mentry_t *e)
{
    (void)m;
    onic_dlist_del(&((list_entry_t *)e)->link);
}

const onic_match_ops_t onic_match_list_ops = {
    .name       = "list",
    .desc       = "linked list walked from the oldest entry (the papers' baseline)",
    .entry_size = sizeof(list_entry_t),
    .init       = list_init,
    .fini       = list_fini,
    .append     = list_append,
    .find       = list_find,
    .remove     = list_remove,
};
