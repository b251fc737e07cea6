/* A software model of paper 000's associative list processing unit (ALPU):
 * the "hardware" that the alpu engine drives the way the NIC processor of
 * section IV does. It is reached only through its FIFOs:
 *   command FIFO  START_INSERT, INSERT(key, mask, tag), STOP_INSERT, RESET
 *   header FIFO   match requests (key, query mask, probe)
 *   result FIFO   START_ACKNOWLEDGE(free cells), MATCH_SUCCESS(tag),
 *                 MATCH_FAILURE
 * and onic_alpu_unit_run() plays the state machine of figure 3 until it has
 * nothing to do or the result FIFO is full.
 *
 * Cells are kept oldest first (cell 0 has the highest priority) in blocks
 * of `block` cells (section III.B), each cell with a valid bit. A request
 * matches the oldest valid cell under the symmetric predicate of
 * onic_mkey_matches(). The paper's unit shifts the younger cells up on a
 * deleting match; this model only clears the cell's valid bit, and the hole
 * stays until insert mode compacts the holes away ("space available"): an
 * INSERT first compacts when no cell is left after the youngest valid one,
 * or when holes outnumber valid cells, then fills the cell after the
 * youngest valid one. Holes never change an answer, so the valid cells are
 * always in age order and START_ACKNOWLEDGE reports cells - valid cells; a
 * shift per delete would only cost a copy of the younger cells each time.
 *
 * State machine, one step serving at most one request and then one command:
 *   match state   requests answered MATCH_SUCCESS or MATCH_FAILURE; pending
 *                 commands are read after the current match, and only RESET
 *                 and START_INSERT are valid (others discarded, counted).
 *                 START_INSERT answers START_ACKNOWLEDGE(free cells).
 *   insert mode   INSERT fills the next cell (discarded when full) and
 *                 STOP_INSERT returns to the match state; anything else is
 *                 discarded. A request that fails is held at the head of the
 *                 header FIFO (requests behind it wait) and retried after
 *                 STOP_INSERT, so no MATCH_FAILURE comes between
 *                 START_ACKNOWLEDGE and STOP_INSERT.
 * run() stops when the result FIFO is full and resumes on the next call.
 *
 * onic extension: a request with `probe` set reports the match but keeps the
 * cell (MPI_Iprobe); the paper's unit always deletes. */
#ifndef ONIC_MATCH_ALPU_UNIT_H
#define ONIC_MATCH_ALPU_UNIT_H

#include <stdint.h>
#include <onic/match.h>
#include <onic/status.h>
#include "base/config.h"

/* Each FIFO is a ring of this many slots. */
#define ONIC_ALPU_UNIT_FIFO_DEPTH 64u
/* Largest unit: tags handed back by the engine are cell-sized indices. */
#define ONIC_ALPU_UNIT_MAX_CELLS  (1u << 24)

typedef enum onic_alpu_cmd_type {
    ONIC_ALPU_CMD_START_INSERT = 1,
    ONIC_ALPU_CMD_INSERT       = 2,
    ONIC_ALPU_CMD_STOP_INSERT  = 3,
    ONIC_ALPU_CMD_RESET        = 4
} onic_alpu_cmd_type_t;

typedef struct onic_alpu_cmd {
    uint32_t    type;    /* onic_alpu_cmd_type_t */
    onic_mkey_t key;     /* INSERT only */
    onic_mkey_t ignore;  /* INSERT only: the cell's mask bits */
    uint64_t    tag;     /* INSERT only: returned by MATCH_SUCCESS */
} onic_alpu_cmd_t;

typedef struct onic_alpu_hdr {
    onic_mkey_t key;
    onic_mkey_t ignore;  /* the request's own mask bits */
    uint32_t    probe;   /* nonzero: report the match, keep the cell */
} onic_alpu_hdr_t;

typedef enum onic_alpu_result_type {
    ONIC_ALPU_RES_START_ACK     = 1,
    ONIC_ALPU_RES_MATCH_SUCCESS = 2,
    ONIC_ALPU_RES_MATCH_FAILURE = 3
} onic_alpu_result_type_t;

typedef struct onic_alpu_result {
    uint32_t type;  /* onic_alpu_result_type_t */
    uint32_t free;  /* START_ACK: cells free when insert mode began */
    uint64_t tag;   /* MATCH_SUCCESS: the matched cell's tag */
} onic_alpu_result_t;

typedef struct onic_alpu_unit_counters {
    uint64_t matches;    /* requests answered (success or failure) */
    uint64_t hits;       /* requests answered MATCH_SUCCESS */
    uint64_t compared;   /* valid cells compared, held retries included */
    uint64_t inserts;    /* INSERTs that filled a cell */
    uint64_t resets;     /* RESETs obeyed */
    uint64_t discarded;  /* commands not valid in the state they arrived in */
    uint64_t compactions;  /* times an INSERT compacted the holes away */
    uint64_t moved;      /* valid cells those compactions moved */
} onic_alpu_unit_counters_t;

typedef struct onic_alpu_unit onic_alpu_unit_t;

/* cells and block: powers of two, block <= cells. simd AUTO uses AVX2 when
 * the CPU has it; AVX2 on a CPU without it is ONIC_ERR_INVALID_PARAM. */
onic_status_t onic_alpu_unit_create(unsigned cells, unsigned block, onic_simd_t simd,
                                    onic_alpu_unit_t **unit_p);
void          onic_alpu_unit_destroy(onic_alpu_unit_t *unit);

/* ONIC_ERR_NO_RESOURCE when the FIFO is full; nothing is queued then. */
onic_status_t onic_alpu_unit_cmd_push(onic_alpu_unit_t *unit, const onic_alpu_cmd_t *cmd);
onic_status_t onic_alpu_unit_hdr_push(onic_alpu_unit_t *unit, const onic_alpu_hdr_t *hdr);
/* Process queued commands and requests; returns the number of steps taken
 * (0: idle, blocked on a held request, or the result FIFO is full). */
unsigned      onic_alpu_unit_run(onic_alpu_unit_t *unit);
/* ONIC_ERR_NO_ELEM when the result FIFO is empty. */
onic_status_t onic_alpu_unit_result_pop(onic_alpu_unit_t *unit, onic_alpu_result_t *res_p);

/* Observation only (the engine tracks cells itself, as the paper's
 * processor does): valid cells, free cells, the span of cells up to and
 * including the youngest valid one (valid cells plus holes), the compare
 * path, counters. compared is counters.compared without copying them all,
 * for a caller that reads it on every request. */
unsigned      onic_alpu_unit_count(const onic_alpu_unit_t *unit);
unsigned      onic_alpu_unit_free_cells(const onic_alpu_unit_t *unit);
unsigned      onic_alpu_unit_span(const onic_alpu_unit_t *unit);
uint64_t      onic_alpu_unit_compared(const onic_alpu_unit_t *unit);
const char   *onic_alpu_unit_simd(const onic_alpu_unit_t *unit);  /* "avx2" or "scalar" */
void          onic_alpu_unit_counters(const onic_alpu_unit_t *unit,
                                      onic_alpu_unit_counters_t *counters_p);

/* --- the unit behind the alpu engine, as a table ---
 * The engine reaches its unit only through these calls, so another unit
 * with the same FIFOs can stand in for the C one: ONIC_ALPU_UNIT=sw is
 * onic_alpu_unit_sw_ops (the functions above), rtl the Verilated
 * hw/alpu/onic_alpu.v in a plug-in (hw/alpu/rtl_unit.cpp) that
 * onic_alpu_unit_ops_get opens at run time: libonic does not link it. A table's create makes an opaque unit the other
 * calls take; each call behaves as the function above of the same name.
 * The plug-in is C++ built beside libonic from this header: abi names the
 * layout of these structs, and a plug-in of another one is refused. */
#define ONIC_ALPU_UNIT_ABI 1

/* A clocked unit's counts (all zero for the C unit, which has no clock). */
typedef struct onic_alpu_unit_clock {
    uint64_t cycles;    /* clock cycles run */
    uint64_t requests;  /* match requests the unit took */
    uint64_t commands;  /* commands the unit took */
} onic_alpu_unit_clock_t;

typedef struct onic_alpu_unit_ops {
    uint32_t      abi;      /* ONIC_ALPU_UNIT_ABI */
    const char   *name;     /* "sw", "rtl" */
    /* The (cells, block) pairs a unit of fixed size was built for, "256/16
     * 128/16", or NULL: any the create above accepts. */
    const char   *sizes;
    /* ONIC_ERR_UNSUPPORTED: not built for that size; no message (the
     * caller names the variables). */
    onic_status_t (*create)(unsigned cells, unsigned block, onic_simd_t simd, void **unit_p);
    void          (*destroy)(void *unit);
    onic_status_t (*cmd_push)(void *unit, const onic_alpu_cmd_t *cmd);
    onic_status_t (*hdr_push)(void *unit, const onic_alpu_hdr_t *hdr);
    unsigned      (*run)(void *unit);
    onic_status_t (*result_pop)(void *unit, onic_alpu_result_t *res_p);
    uint64_t      (*compared)(const void *unit);
    void          (*clock)(const void *unit, onic_alpu_unit_clock_t *clock_p);
} onic_alpu_unit_ops_t;

extern const onic_alpu_unit_ops_t onic_alpu_unit_sw_ops;

/* The table ONIC_ALPU_UNIT names (cfg->alpu_unit), the rtl plug-in loaded
 * on first use from ONIC_ALPU_RTL_LIB. ONIC_ERR_UNSUPPORTED, after an
 * error naming the variable and what to do, when it cannot be had. */
onic_status_t onic_alpu_unit_ops_get(const onic_config_t *cfg,
                                     const onic_alpu_unit_ops_t **ops_p);

/* The symbol the plug-in exports: its table, or NULL if it was not built
 * for this abi. */
typedef const onic_alpu_unit_ops_t *(*onic_alpu_unit_plugin_fn)(uint32_t abi);
#define ONIC_ALPU_UNIT_PLUGIN_SYM "onic_alpu_rtl_unit_ops"

/* The C unit behind an "alpu" matcher, for tests and tools; NULL for
 * another engine or another unit. */
const onic_alpu_unit_t *onic_match_alpu_unit(const onic_matcher_t *m);
/* The unit's clock counts behind an "alpu" matcher: ONIC_ERR_INVALID_PARAM
 * for another engine; zeros for the C unit. */
onic_status_t onic_match_alpu_clock(const onic_matcher_t *m, onic_alpu_unit_clock_t *clock_p);

#endif
