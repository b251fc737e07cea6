/* Handle tables: every MPI handle is an int naming a slot of its kind's
 * table, so a stale, foreign or invented handle is refused, never followed. */
#include "mpi/mpi_impl.h"
#include "base/mem.h"

#include <string.h>

#define HANDLE_KIND_SHIFT ONIC_MPI_HANDLE_KIND_SHIFT
#define HANDLE_GEN_SHIFT  ONIC_MPI_HANDLE_GEN_SHIFT
#define HANDLE_GEN_MASK   ONIC_MPI_HANDLE_GEN_MASK
#define HANDLE_INDEX_MASK (ONIC_MPI_HANDLE_INDEX_MAX - 1)

void onic_mpi_htab_init(onic_mpi_htab_t *t, int kind)
{
    memset(t, 0, sizeof(*t));
    t->kind = kind;
}

void onic_mpi_htab_fini(onic_mpi_htab_t *t)
{
    onic_free(t->obj);
    onic_free(t->hnd);
    onic_free(t->free);
    memset(t, 0, sizeof(*t));
}

static int htab_grow(onic_mpi_htab_t *t, int need)
{
    int cap = t->cap == 0 ? 64 : t->cap;
    void **obj;
    int *hnd;
    int *fr;

    if (need <= t->cap)
        return 0;
    while (cap < need)
        cap *= 2;
    if (cap > ONIC_MPI_HANDLE_INDEX_MAX)
        cap = ONIC_MPI_HANDLE_INDEX_MAX;
    if (cap < need)
        return -1;
    obj = onic_calloc((size_t)cap, sizeof(*obj));
    hnd = onic_calloc((size_t)cap, sizeof(*hnd));
    fr = onic_calloc((size_t)cap, sizeof(*fr));
    if (obj == NULL || hnd == NULL || fr == NULL) {
        onic_free(obj);
        onic_free(hnd);
        onic_free(fr);
        return -1;
    }
    if (t->cap > 0) {
        memcpy(obj, t->obj, (size_t)t->cap * sizeof(*obj));
        memcpy(hnd, t->hnd, (size_t)t->cap * sizeof(*hnd));
        memcpy(fr, t->free, (size_t)t->nfree * sizeof(*fr));
    }
    onic_free(t->obj);
    onic_free(t->hnd);
    onic_free(t->free);
    t->obj = obj;
    t->hnd = hnd;
    t->free = fr;
    t->cap = cap;
    return 0;
}

int onic_mpi_htab_set(onic_mpi_htab_t *t, int index, void *obj)
{
    if (htab_grow(t, index + 1) != 0)
        return -1;
    t->obj[index] = obj;
    t->hnd[index] = onic_mpi_handle_make(t->kind, 0, index);
    if (index >= t->used)
        t->used = index + 1;
    return 0;
}

int onic_mpi_htab_add_new(onic_mpi_htab_t *t, void *obj, int *h)
{
    int index;

    if (t->nfree > 0)
        return onic_mpi_htab_add(t, obj, h);
    if (htab_grow(t, t->used + 1) != 0)
        return -1;
    index = t->used++;
    t->hnd[index] = onic_mpi_handle_make(t->kind, 1, index); /* generation 0: predefined */
    t->obj[index] = obj;
    *h = t->hnd[index];
    return 0;
}
