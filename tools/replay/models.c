/* The timing models: what one queue operation would cost on the papers'
 * NIC hardware, given where its entry stands in the queue. Each is a few
 * lines of arithmetic over the parameters (params.c); docs/replay.md says
 * where each number comes from and how the curves compare with the papers'.
 *
 * nic   paper 000's baseline: the NIC's embedded processor reads the
 *       header over the bus and walks the list. Each entry inspected costs
 *       entry_cycles, plus miss_cycles for the share of the queue that does
 *       not fit in the data cache (cache_bytes / (length x entry_bytes)).
 * alpu  paper 000's ALPU in front of that list. Above the threshold the
 *       processor loads the queue's first entries into the cells (START
 *       INSERT, the START ACKNOWLEDGE read back, one INSERT per entry,
 *       STOP INSERT) in its loop before the next header; that load is
 *       counted as work but not as the lookup's latency, as in the papers'
 *       benchmark where queues are built before the clock starts. A lookup
 *       then costs the result read over the bus, the unit's match cycles and
 *       the processor's handling; on MATCH FAILURE the processor walks the
 *       part of the list not in the unit (the overflow), whose cache share
 *       counts only that part. A match found in the unit deletes its cell.
 * pim   paper 002's PIM NIC: entries interleaved in blocks of
 *       pim_block_entries, kept compact by the clean-up thread, so a lookup
 *       reads ceil(walked / entries) blocks, each pim_block_loads wide
 *       accesses of pim_mem_cycles plus pim_block_cycles of compares, on a
 *       single-issue core with no cache.
 * list  onic's list engine: entries inspected only (what the live run
 *       counted with ONIC_MATCH=list), no time. */
#include "replay.h"

#include <math.h>

const char *const replay_model_names[REPLAY_MODELS] = {"list", "nic", "alpu", "pim"};

static int op_is_lookup(unsigned op)
{
    return op == ONIC_TRACE_OP_MATCH || op == ONIC_TRACE_OP_PEEK;
}

static size_t op_walked(const replay_op_t *op)
{
    return (op->flags & ONIC_TRACE_HIT) ? op->pos + 1 : op->len;
}

/* ns for a walk of `walked` entries by the NIC processor over a list part
 * of `part` entries. */
static double nic_walk_ns(const replay_params_t *p, size_t walked, size_t part)
{
    double footprint = (double)part * p->entry_bytes;
    double out = footprint > p->cache_bytes ? 1.0 - p->cache_bytes / footprint : 0.0;

    return (double)walked * (p->entry_cycles + out * p->miss_cycles) * 1000.0 / p->nic_mhz;
}

static replay_cost_t model_list(const replay_op_t *op)
{
    replay_cost_t c = {0, 0, 0};

    if (op_is_lookup(op->op))
        c.inspected = op_walked(op);
    return c;
}

static replay_cost_t model_nic(const replay_params_t *p, const replay_op_t *op)
{
    replay_cost_t c = {0, 0, 0};

    if (op_is_lookup(op->op)) {
        c.inspected = op_walked(op);
        c.ns = p->bus_ns + p->op_cycles * 1000.0 / p->nic_mhz +
               nic_walk_ns(p, c.inspected, op->len);
    } else if (op->op != ONIC_TRACE_OP_LABEL) {
        c.ns = p->bus_ns + p->append_cycles * 1000.0 / p->nic_mhz;
    }
    return c;
}

/* The processor's load round before a lookup: START INSERT, its
 * acknowledgement, n INSERTs, STOP INSERT. Returns its time. */
static double alpu_load(const replay_params_t *p, replay_mstate_t *st, size_t len)
{
    size_t cells = (size_t)p->alpu_cells, n;
    double insert_ns;

    if ((double)len <= p->alpu_threshold || st->loaded >= len || st->loaded >= cells)
        return 0;
    n = len - st->loaded;
    if (n > cells - st->loaded)
        n = cells - st->loaded;
    st->loaded += n;
    insert_ns = p->alpu_insert_cycles * 1000.0 / p->alpu_mhz;
    if (insert_ns < p->bus_ns)   /* each INSERT crosses the bus */
        insert_ns = p->bus_ns;
    return 3 * p->bus_ns + (double)n * insert_ns;
}

static replay_cost_t model_alpu(const replay_params_t *p, replay_mstate_t *st,
                                const replay_op_t *op)
{
    replay_cost_t c = {0, 0, 0};
    int hit = (op->flags & ONIC_TRACE_HIT) != 0;

    if (op->op == ONIC_TRACE_OP_LABEL)
        return c;
    if (!op_is_lookup(op->op)) {
        c.ns = p->bus_ns + p->append_cycles * 1000.0 / p->nic_mhz;
        if (op->op == ONIC_TRACE_OP_INSERT && op->pos < st->loaded)
            st->loaded = op->pos;   /* the unit only adds behind its youngest cell */
        else if (op->op == ONIC_TRACE_OP_REMOVE && op->pos < st->loaded)
            st->loaded--;
        return c;
    }
    c.side_ns = alpu_load(p, st, op->len);
    if (st->loaded == 0)
        return model_nic(p, op);
    c.ns = p->bus_ns + p->alpu_match_cycles * 1000.0 / p->alpu_mhz +
           p->alpu_handle_cycles * 1000.0 / p->nic_mhz;
    if (hit && op->pos < st->loaded) {
        if (op->op == ONIC_TRACE_OP_MATCH)
            st->loaded--;
        return c;
    }
    /* MATCH FAILURE: the processor walks the entries behind the unit's. */
    c.inspected = hit ? op->pos + 1 - st->loaded : op->len - st->loaded;
    c.ns += p->op_cycles * 1000.0 / p->nic_mhz + nic_walk_ns(p, c.inspected, op->len - st->loaded);
    return c;
}

static replay_cost_t model_pim(const replay_params_t *p, const replay_op_t *op)
{
    replay_cost_t c = {0, 0, 0};
    double cyc_ns = 1000.0 / p->pim_mhz;

    if (op_is_lookup(op->op)) {
        double blocks;
        c.inspected = op_walked(op);
        blocks = ceil((double)c.inspected / p->pim_block_entries);
        c.ns = p->bus_ns + (p->pim_op_cycles +
               blocks * (p->pim_block_loads * p->pim_mem_cycles + p->pim_block_cycles)) * cyc_ns;
    } else if (op->op != ONIC_TRACE_OP_LABEL) {
        /* read and write back the block the slot is in */
        c.ns = p->bus_ns + 2 * p->pim_mem_cycles * cyc_ns;
    }
    return c;
}

replay_cost_t replay_model_cost(replay_model_id_t model, const replay_params_t *p,
                                replay_mstate_t *st, const replay_op_t *op)
{
    switch (model) {
    case REPLAY_MODEL_LIST:
        return model_list(op);
    case REPLAY_MODEL_NIC:
        return model_nic(p, op);
    case REPLAY_MODEL_ALPU:
        return model_alpu(p, st, op);
    case REPLAY_MODEL_PIM:
        return model_pim(p, op);
    default:
        break;
    }
    return (replay_cost_t){0, 0, 0};
}
