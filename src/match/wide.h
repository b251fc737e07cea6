/* Internal queries on the wide engine, for its tests. */
#ifndef ONIC_MATCH_WIDE_H
#define ONIC_MATCH_WIDE_H

#include <stddef.h>
#include "match/engine.h"

typedef struct onic_match_wide_info {
    size_t blocks;  /* blocks in the chain; an emptied queue keeps its last one */
    size_t spare;   /* blocks allocated and free for appends */
    size_t holes;   /* free slots in the chain, the tail's unused ones included */
} onic_match_wide_info_t;

/* m must be a "wide" matcher. */
void onic_match_wide_info_get(const onic_matcher_t *m, onic_match_wide_info_t *info_p);
/* Walk the whole chain checking every invariant; 1 if all hold. */
int  onic_match_wide_check(const onic_matcher_t *m);

#endif
