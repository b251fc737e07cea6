/* onic-replay's parts: the queues of match traces rebuilt record by record
 * (replay.c), the timing models of the papers' NIC hardware (models.c) and
 * their parameters, read from a small file a user can edit (params.c).
 *
 * A replay follows each traced queue separately: it keeps the queue's
 * entries in order, finds where each record's entry stands, and hands the
 * operation, with that position, to every model. The models never match
 * keys themselves: the trace says which entry each lookup found, so a
 * model only has to say what finding it at that place would cost. The
 * measured engines do match keys (they are onic's real matchers) and must
 * find the recorded entry, which checks the trace as a side effect. */
#ifndef ONIC_TOOLS_REPLAY_H
#define ONIC_TOOLS_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "match/trace.h"

/* --- parameters (params.c): every field is a line `name = value` of the
 * parameter file; defaults are paper 000 table III / paper 002 table I. */
typedef struct replay_params {
    /* The NIC's embedded processor walking a list (paper 000 table III). */
    double nic_mhz;          /* clock */
    double bus_ns;           /* one access over the NIC's bus */
    double op_cycles;        /* per lookup, besides the walk */
    double entry_cycles;     /* per entry inspected, in cache */
    double miss_cycles;      /* more per entry inspected out of cache */
    double cache_bytes;      /* the processor's data cache */
    double entry_bytes;      /* cache footprint of one queue entry */
    double append_cycles;    /* link an entry at the tail */
    /* The ALPU (paper 000 sections III-IV). */
    double alpu_cells;
    double alpu_block;
    double alpu_threshold;   /* queue length above which it is loaded */
    double alpu_mhz;
    double alpu_match_cycles;   /* one match request */
    double alpu_insert_cycles;  /* one INSERT */
    double alpu_handle_cycles;  /* the processor's work per ALPU result */
    /* The PIM NIC's wide compares (paper 002 sections III-V, table I). */
    double pim_mhz;
    double pim_mem_cycles;   /* one wide memory access */
    double pim_block_entries;   /* entries per interleaved block */
    double pim_block_loads;     /* wide loads to compare one block */
    double pim_block_cycles;    /* compare and branch per block */
    double pim_op_cycles;       /* per lookup, besides the blocks */
} replay_params_t;

void replay_params_defaults(replay_params_t *p);
/* Read `name = value` lines over p ('#' starts a comment). A bad line, an
 * unknown name or an out-of-range value fails naming the file and line. */
int  replay_params_load(const char *path, replay_params_t *p, char *err, size_t errlen);
/* Write p in the file's format. */
void replay_params_print(const replay_params_t *p, FILE *out);

/* --- models (models.c) --- */
typedef enum replay_model_id {
    REPLAY_MODEL_LIST,    /* onic's list engine: entries inspected, no time */
    REPLAY_MODEL_NIC,     /* the embedded processor walking the list */
    REPLAY_MODEL_ALPU,    /* the NIC processor with an ALPU in front of the list */
    REPLAY_MODEL_PIM,     /* the PIM NIC's interleaved blocks and wide compares */
    REPLAY_MODELS
} replay_model_id_t;

extern const char *const replay_model_names[REPLAY_MODELS];

/* What a model sees of one operation. */
typedef struct replay_op {
    unsigned op;      /* onic_trace_op_t */
    unsigned flags;
    size_t   len;     /* queue length before the operation */
    size_t   pos;     /* where the entry is (was) in the queue, from 0; lookups: len on a miss */
} replay_op_t;

/* A model's state for one queue (the ALPU's loaded prefix). */
typedef struct replay_mstate {
    size_t loaded;    /* ALPU: entries of the queue's front held in cells */
} replay_mstate_t;

typedef struct replay_cost {
    double   ns;          /* the operation's modelled time (0 for the list model) */
    double   side_ns;     /* work the NIC did before it, not in its latency (ALPU loads) */
    uint64_t inspected;   /* entries compared (by a processor; ALPU cells not counted) */
} replay_cost_t;

replay_cost_t replay_model_cost(replay_model_id_t model, const replay_params_t *p,
                                replay_mstate_t *st, const replay_op_t *op);

/* --- replay (replay.c) --- */
#define REPLAY_ENGINES 4   /* list, hash, alpu, wide: measured on this machine */
extern const char *const replay_engine_names[REPLAY_ENGINES];

/* Totals of one model or engine over a replay. */
typedef struct replay_total {
    uint64_t lookups, hits, other_ops;
    uint64_t inspected;
    double   lookup_ns, other_ns;
    double  *samples;     /* ns per lookup, for percentiles (NULL if not kept) */
    size_t   nsamples, cap;
} replay_total_t;

#define REPLAY_LEN_MAX 4096  /* lengths counted one by one; longer ones share the last slot */

typedef struct replay_opts {
    replay_params_t params;
    int             measure;      /* replay through the real engines, timed */
    int             keep_samples; /* per-lookup costs for percentiles */
    unsigned        kinds;        /* bit per queue kind to replay (0: all) */
} replay_opts_t;

typedef struct replay_result {
    replay_params_t params;        /* set by replay_trace from its options */
    int            keep_samples;
    replay_total_t model[REPLAY_MODELS];
    replay_total_t engine[REPLAY_ENGINES];
    /* Lookups by queue length before them (per queue kind: the depth
     * histogram), and each model's and engine's time there. */
    uint64_t depth[ONIC_TRACE_QUEUE_KINDS][REPLAY_LEN_MAX + 1];
    double   len_ns[REPLAY_MODELS][REPLAY_LEN_MAX + 1];
    double   len_engine_ns[REPLAY_ENGINES][REPLAY_LEN_MAX + 1];
    uint64_t records, queues, files;
    uint64_t max_len;
    /* The first inconsistency found (entry unknown, engine found another). */
    int      inconsistent;
    char     error[256];
} replay_result_t;

/* Per-record list-model inspected counts, for tests: when not NULL,
 * replay_trace stores for record i (of t) the list model's count at
 * list_inspected[i] (lookups only; other records get UINT64_MAX). */
int  replay_trace(const onic_trace_t *t, const replay_opts_t *opts, replay_result_t *res,
                  uint64_t *list_inspected);
/* NULL when out of memory; free with replay_result_free. */
replay_result_t *replay_result_new(void);
void   replay_result_free(replay_result_t *res);
/* The q-quantile (0..1) of a total's kept samples (sorts them); 0 if none. */
double replay_total_percentile(replay_total_t *t, double q);

#endif
