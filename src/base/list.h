/* Intrusive circular doubly linked lists. */
#ifndef ONIC_BASE_LIST_H
#define ONIC_BASE_LIST_H

#include <assert.h>
#include <stddef.h>
#include "base/mem.h"

#define onic_container_of(_ptr, _type, _member) \
    ((_type *)((char *)(_ptr) - offsetof(_type, _member)))

typedef struct onic_dlist {
    struct onic_dlist *prev, *next;
} onic_dlist_t;

static inline void onic_dlist_init(onic_dlist_t *head)
{
    head->prev = head->next = head;
}

static inline int onic_dlist_empty(const onic_dlist_t *head)
{
    return head->next == head;
}

static inline void onic_dlist_push_tail(onic_dlist_t *head, onic_dlist_t *l)
{
    l->prev = head->prev;
    l->next = head;
    head->prev->next = l;
    head->prev = l;
}

static inline void onic_dlist_del(onic_dlist_t *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
}

static inline onic_dlist_t *onic_dlist_head_alloc(void)
{
    onic_dlist_t *head = onic_malloc(sizeof(*head));
    if (head != NULL)
        onic_dlist_init(head);
    return head;
}

static inline void onic_dlist_head_free(onic_dlist_t *head)
{
    onic_free(head);
}

#endif
