// Co-simulation of the RTL ALPU (onic_alpu.v, Verilated) against onic's
// software unit (src/match/alpu_unit.c) on the same stream.
//
// The two units see the same commands and requests in the same order: the
// RTL chooses when it takes each one (valid/ready), and in the cycle it does
// the harness pushes the same item into the C unit and runs it, so the C
// unit serves it at once. The protocol fixes the result order given that
// order, so the result streams must be identical, entry for entry; the
// harness compares every result the RTL hands out with the C unit's next.
//
//   alpu_cosim [ops [seed]]   randomized streams (default 20000 ops)
//   alpu_cosim --malformed    directed: malformed commands, never a hang
//   alpu_cosim --bench        cycles per match against occupancy, per insert
//
// Built per configuration: CFG_CELLS, CFG_BLOCK, CFG_MATCH_W, CFG_TAG_W,
// CFG_LAYOUT (0 mask in the cell, 1 mask in the request, 2 both).
#include "Vonic_alpu.h"
#include "verilated.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

extern "C" {
#include "match/alpu_unit.h"
}

namespace {

constexpr unsigned CELLS = CFG_CELLS, BLOCK = CFG_BLOCK, MATCH_W = CFG_MATCH_W,
                   TAG_W = CFG_TAG_W, LAYOUT = CFG_LAYOUT;
static_assert(MATCH_W <= 128, "keys map onto onic_mkey_t's 128 bits");

uint64_t rng_state = 1;
uint64_t rng()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
unsigned pick(unsigned n) { return (unsigned)(rng() % n); }

// MATCH_W bits of a key: bit k of the RTL key is bit k of onic_mkey_t's
// {id, bits}, so the C unit compares exactly the bits the RTL holds.
onic_mkey_t clip(onic_mkey_t k)
{
    if constexpr (MATCH_W < 64) {
        k.bits &= (1ull << MATCH_W) - 1;
        k.id = 0;
    } else if constexpr (MATCH_W == 64) {
        k.id = 0;
    } else if constexpr (MATCH_W < 128) {
        k.id &= (1ull << (MATCH_W - 64)) - 1;
    }
    return k;
}

template <typename T> void put_key(T &port, onic_mkey_t k)
{
    if constexpr (sizeof(T) <= 8) {
        port = (T)k.bits;
    } else {
        uint32_t w[4] = {(uint32_t)k.bits, (uint32_t)(k.bits >> 32), (uint32_t)k.id,
                         (uint32_t)(k.id >> 32)};
        for (unsigned i = 0; i < (MATCH_W + 31) / 32; i++)
            port[i] = w[i];
    }
}

struct Item {
    bool is_cmd;
    onic_alpu_cmd_t cmd;
    onic_alpu_hdr_t hdr;
};

struct Harness {
    Vonic_alpu *top;
    onic_alpu_unit_t *unit;
    std::deque<onic_alpu_result_t> expect;  // C results the RTL still owes
    uint64_t cycle = 0, results = 0, taken = 0, last_taken = 0;
    unsigned ready_pct = 100;  // how often the driver takes a result
    bool fail = false;

    Harness()
    {
        top = new Vonic_alpu;
        if (onic_alpu_unit_create(CELLS, BLOCK, ONIC_SIMD_AUTO, &unit) != ONIC_OK) {
            fprintf(stderr, "cosim: cannot create the C unit\n");
            exit(2);
        }
        top->clk = 0;
        top->rst = 1;
        top->cmd_valid = top->req_valid = 0;
        top->res_ready = 0;
        tick();
        top->eval(); // the falling edge, so the next rising one is seen
        tick();
        top->rst = 0;
    }
    ~Harness()
    {
        top->final();
        delete top;
        onic_alpu_unit_destroy(unit);
    }

    // The rising edge; the falling one is settled by the next cycle's
    // eval with its inputs (nothing in the unit is clocked on it), one
    // eval a cycle fewer.
    void tick()
    {
        top->clk = 1;
        top->eval();
        top->clk = 0;
        cycle++;
    }

    void drain_c()
    {
        onic_alpu_unit_run(unit);
        onic_alpu_result_t r;
        while (onic_alpu_unit_result_pop(unit, &r) == ONIC_OK)
            expect.push_back(r);
    }

    void check_result()
    {
        onic_alpu_result_t r = {};
        uint32_t type = top->res_type;
        uint64_t data = top->res_data;

        if (expect.empty()) {
            fprintf(stderr, "cosim: cycle %llu: RTL result %u (%llu) but the C unit has none\n",
                    (unsigned long long)cycle, type, (unsigned long long)data);
            fail = true;
            return;
        }
        r = expect.front();
        expect.pop_front();
        uint64_t want = r.type == ONIC_ALPU_RES_START_ACK ? r.free
                      : r.type == ONIC_ALPU_RES_MATCH_SUCCESS ? r.tag : 0;
        if (type != r.type || data != want) {
            fprintf(stderr, "cosim: cycle %llu, result %llu: RTL %u (%llu), C unit %u (%llu)\n",
                    (unsigned long long)cycle, (unsigned long long)results, type,
                    (unsigned long long)data, r.type, (unsigned long long)want);
            fail = true;
        }
        results++;
    }

    // One cycle: present the heads of the two queues (each with probability
    // pct), mirror what the RTL takes into the C unit, compare what it
    // hands out. Returns the number of items taken.
    unsigned step(std::deque<Item> &cmds, std::deque<Item> &reqs, unsigned pct)
    {
        bool cv = !cmds.empty() && pick(100) < pct;
        bool rv = !reqs.empty() && pick(100) < pct;
        unsigned n = 0;

        top->cmd_valid = cv;
        if (cv) {
            const onic_alpu_cmd_t &c = cmds.front().cmd;
            top->cmd_type = c.type & 7;
            put_key(top->cmd_key, c.key);
            put_key(top->cmd_mask, c.ignore);
            top->cmd_tag = (uint32_t)c.tag;
        }
        top->req_valid = rv;
        if (rv) {
            const onic_alpu_hdr_t &h = reqs.front().hdr;
            put_key(top->req_key, h.key);
            put_key(top->req_mask, h.ignore);
            top->req_probe = h.probe != 0;
        }
        top->res_ready = pick(100) < ready_pct;
        top->eval();
        if (cv && top->cmd_ready) {
            onic_alpu_unit_cmd_push(unit, &cmds.front().cmd);
            drain_c();
            cmds.pop_front();
            n++;
        }
        if (rv && top->req_ready) {
            onic_alpu_unit_hdr_push(unit, &reqs.front().hdr);
            drain_c();
            reqs.pop_front();
            n++;
        }
        if (top->res_valid && top->res_ready)
            check_result();
        tick();
        taken += n;
        if (n != 0)
            last_taken = cycle;
        return n;
    }

    // Run until both queues are empty and every result is out.
    bool run(std::deque<Item> &cmds, std::deque<Item> &reqs, unsigned pct)
    {
        while (!fail && (!cmds.empty() || !reqs.empty() || !expect.empty() || top->res_valid)) {
            step(cmds, reqs, pct);
            // A request held in insert mode waits for STOP_INSERT: only a
            // stream that never sends it may stall, and ours always do.
            if (cycle - last_taken > 1000 + 4 * CELLS) {
                fprintf(stderr, "cosim: cycle %llu: no progress (cmds %zu, reqs %zu, owed %zu, "
                        "held %u, insert mode %u)\n", (unsigned long long)cycle, cmds.size(),
                        reqs.size(), expect.size(), top->held, top->insert_mode);
                fail = true;
            }
        }
        if (!fail && top->count != onic_alpu_unit_count(unit)) {
            fprintf(stderr, "cosim: RTL holds %u cells, the C unit %u\n", top->count,
                    onic_alpu_unit_count(unit));
            fail = true;
        }
        return !fail;
    }
};

Item mk_cmd(uint32_t type, onic_mkey_t k = {0, 0}, onic_mkey_t m = {0, 0}, uint64_t tag = 0)
{
    Item it = {};
    it.is_cmd = true;
    it.cmd.type = type;
    it.cmd.key = clip(k);
    // the layout decides which side may carry mask bits
    it.cmd.ignore = LAYOUT == 1 ? onic_mkey_t{0, 0} : clip(m);
    it.cmd.tag = tag & ((1ull << TAG_W) - 1);
    return it;
}

Item mk_req(onic_mkey_t k, onic_mkey_t m, bool probe)
{
    Item it = {};
    it.hdr.key = clip(k);
    it.hdr.ignore = LAYOUT == 0 ? onic_mkey_t{0, 0} : clip(m);
    it.hdr.probe = probe;
    return it;
}

// Keys from a small alphabet spread over the whole width, so hits, misses
// and several cells with one key are all common.
onic_mkey_t rand_key()
{
    uint64_t v = pick(12);
    return clip({v * 0x9e3779b97f4a7c15ull, v * 0xc2b2ae3d27d4eb4full});
}
onic_mkey_t rand_mask()
{
    switch (pick(8)) {
    case 0: return clip({UINT64_MAX, UINT64_MAX});           // matches anything
    case 1: return clip({0xffffull, 0});                      // "any tag"
    case 2: return clip({~0xffffull, UINT64_MAX});            // "any source"
    case 3: return clip({rng(), rng()});
    default: return {0, 0};
    }
}

// A stream in the shape the engine sends, with the paper's corner cases.
void gen_stream(std::deque<Item> &cmds, std::deque<Item> &reqs, unsigned ops, uint64_t &tag)
{
    unsigned n = 0;
    while (n < ops) {
        unsigned what = pick(100);
        if (what < 35) {  // an insert round, sometimes more than fits
            cmds.push_back(mk_cmd(ONIC_ALPU_CMD_START_INSERT));
            unsigned burst = pick(8) == 0 ? CELLS + pick(4) : 1 + pick(8);
            for (unsigned i = 0; i < burst; i++)
                cmds.push_back(mk_cmd(ONIC_ALPU_CMD_INSERT, rand_key(),
                                      pick(3) == 0 ? rand_mask() : onic_mkey_t{0, 0}, ++tag));
            cmds.push_back(mk_cmd(ONIC_ALPU_CMD_STOP_INSERT));
            n += burst + 2;
        } else if (what < 37) {
            cmds.push_back(mk_cmd(ONIC_ALPU_CMD_RESET));
            n++;
        } else if (what < 40) {  // malformed: unknown types, commands out of place
            static const uint32_t junk[] = {0, 5, 6, 7, ONIC_ALPU_CMD_INSERT,
                                            ONIC_ALPU_CMD_STOP_INSERT};
            cmds.push_back(mk_cmd(junk[pick(6)], rand_key(), {0, 0}, ++tag));
            n++;
        } else if (what < 41) {  // START_INSERT twice, RESET in insert mode
            cmds.push_back(mk_cmd(ONIC_ALPU_CMD_START_INSERT));
            cmds.push_back(mk_cmd(pick(2) ? ONIC_ALPU_CMD_START_INSERT : ONIC_ALPU_CMD_RESET));
            cmds.push_back(mk_cmd(ONIC_ALPU_CMD_INSERT, rand_key(), {0, 0}, ++tag));
            cmds.push_back(mk_cmd(ONIC_ALPU_CMD_STOP_INSERT));
            n += 4;
        } else {
            unsigned burst = 1 + pick(8);
            for (unsigned i = 0; i < burst; i++)
                reqs.push_back(mk_req(rand_key(), pick(4) == 0 ? rand_mask() : onic_mkey_t{0, 0},
                                      pick(8) == 0));
            n += burst;
        }
    }
}

int random_streams(unsigned ops, uint64_t seed)
{
    Harness h;
    uint64_t tag = 0;
    auto t0 = std::chrono::steady_clock::now();

    rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
    // Chunks with different pacing: back to back, sparse, a slow reader.
    for (unsigned done = 0, round = 0; done < ops && !h.fail; round++) {
        std::deque<Item> cmds, reqs;
        unsigned chunk = ops - done < 2000 ? ops - done : 2000;
        gen_stream(cmds, reqs, chunk, tag);
        done += (unsigned)(cmds.size() + reqs.size());
        static const unsigned pace[] = {100, 100, 60, 20};
        static const unsigned ready[] = {100, 90, 50, 10};
        h.ready_pct = ready[round % 4];
        if (!h.run(cmds, reqs, pace[(round / 4) % 4]))
            break;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    onic_alpu_unit_counters_t c;
    onic_alpu_unit_counters(h.unit, &c);
    printf("cosim cells %u block %u match %u tag %u layout %u: %llu ops, %llu results, "
           "%llu cycles, %llu hits, %llu inserts, %llu discarded, %.0f ops/s, %.0f cycles/s: %s\n",
           CELLS, BLOCK, MATCH_W, TAG_W, LAYOUT, (unsigned long long)h.taken,
           (unsigned long long)h.results, (unsigned long long)h.cycle,
           (unsigned long long)c.hits, (unsigned long long)c.inserts,
           (unsigned long long)c.discarded, h.taken / s, h.cycle / s, h.fail ? "FAIL" : "ok");
    return h.fail ? 1 : 0;
}

// Each malformed command gets its documented response from both units:
// discarded, no result, the unit goes on.
int malformed()
{
    Harness h;
    std::deque<Item> cmds, reqs;
    onic_mkey_t k = clip({5, 0});

    for (uint32_t t : {0u, 5u, 6u, 7u, (uint32_t)ONIC_ALPU_CMD_INSERT,
                       (uint32_t)ONIC_ALPU_CMD_STOP_INSERT})
        cmds.push_back(mk_cmd(t, k, {0, 0}, 1));
    if (!h.run(cmds, reqs, 100) || h.results != 0 || h.top->count != 0)
        return fprintf(stderr, "malformed: commands outside insert mode\n"), 1;
    cmds.push_back(mk_cmd(ONIC_ALPU_CMD_START_INSERT));
    for (uint32_t t : {0u, 5u, 7u, (uint32_t)ONIC_ALPU_CMD_START_INSERT,
                       (uint32_t)ONIC_ALPU_CMD_RESET})
        cmds.push_back(mk_cmd(t, k, {0, 0}, 2));
    cmds.push_back(mk_cmd(ONIC_ALPU_CMD_INSERT, k, {0, 0}, 3));
    cmds.push_back(mk_cmd(ONIC_ALPU_CMD_STOP_INSERT));
    reqs.push_back(mk_req(k, {0, 0}, false));
    reqs.push_back(mk_req(k, {0, 0}, false));
    if (!h.run(cmds, reqs, 100) || h.results != 3)
        return fprintf(stderr, "malformed: commands inside insert mode\n"), 1;
    onic_alpu_unit_counters_t c;
    onic_alpu_unit_counters(h.unit, &c);
    printf("malformed: %llu commands discarded by both units, then ACK, SUCCESS, FAILURE: ok\n",
           (unsigned long long)c.discarded);
    return 0;
}

// Cycles between requests the RTL takes, back to back, at occupancy n:
// hits at the oldest, middle and youngest valid cell, misses, probes.
int bench()
{
    printf("# cells %u block %u match %u layout %u: cycles per request, back to back\n",
           CELLS, BLOCK, MATCH_W, LAYOUT);
    printf("%-9s %8s %8s %8s %8s %8s\n", "occupied", "oldest", "middle", "youngest", "miss",
           "probe");
    for (unsigned occ : {0u, 32u, 64u, 128u, 192u, 256u}) {
        if (occ > CELLS)
            break;
        double col[5];
        for (unsigned kind = 0; kind < 5; kind++) {
            Harness h;
            std::deque<Item> cmds, reqs;
            const unsigned n = 16;
            cmds.push_back(mk_cmd(ONIC_ALPU_CMD_START_INSERT));
            for (unsigned i = 0; i < occ; i++)  // key i+1 at age i
                cmds.push_back(mk_cmd(ONIC_ALPU_CMD_INSERT, clip({i + 1, 0}), {0, 0}, i));
            cmds.push_back(mk_cmd(ONIC_ALPU_CMD_STOP_INSERT));
            h.run(cmds, reqs, 100);
            for (unsigned r = 0; r < n; r++) {
                unsigned at = kind == 0 ? r : kind == 1 ? occ / 2 + r : occ - 1 - r;
                bool hit = kind < 3 && occ >= 2 * n;
                onic_mkey_t k = kind == 4 ? clip({occ / 2 + 1ull, 0})
                              : hit ? clip({at + 1ull, 0}) : clip({1ull << 40, 7});
                reqs.push_back(mk_req(k, {0, 0}, kind == 4));
            }
            uint64_t start = h.cycle;
            while (!reqs.empty())
                h.step(cmds, reqs, 100);
            col[kind] = (double)(h.cycle - start) / n;
            if (!h.run(cmds, reqs, 100))
                return 1;
        }
        printf("%-9u %8.2f %8.2f %8.2f %8.2f %8.2f\n", occ, col[0], col[1], col[2], col[3],
               col[4]);
    }
    // Inserts: a burst into an empty unit, cycles per INSERT taken.
    Harness h;
    std::deque<Item> cmds, reqs;
    cmds.push_back(mk_cmd(ONIC_ALPU_CMD_START_INSERT));
    h.run(cmds, reqs, 100);
    for (unsigned i = 0; i < CELLS; i++)
        cmds.push_back(mk_cmd(ONIC_ALPU_CMD_INSERT, clip({i, 0}), {0, 0}, i));
    uint64_t start = h.cycle;
    while (!cmds.empty())
        h.step(cmds, reqs, 100);
    printf("insert: %.2f cycles per INSERT (%u into an empty unit)\n",
           (double)(h.cycle - start) / CELLS, CELLS);
    // Latency: a request presented to an idle unit, to its result.
    cmds.push_back(mk_cmd(ONIC_ALPU_CMD_STOP_INSERT));
    h.run(cmds, reqs, 100);
    reqs.push_back(mk_req(clip({0, 0}), {0, 0}, false));
    start = h.cycle;
    h.ready_pct = 100;
    while (!h.top->res_valid)
        h.step(cmds, reqs, 100);
    printf("latency: %llu cycles from request taken to result valid\n",
           (unsigned long long)(h.cycle - start));
    return h.run(cmds, reqs, 100) ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--malformed"))
        return malformed();
    if (argc > 1 && !strcmp(argv[1], "--bench"))
        return bench();
    unsigned ops = argc > 1 ? (unsigned)strtoul(argv[1], nullptr, 0) : 20000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], nullptr, 0) : 1;
    return random_streams(ops, seed);
}
