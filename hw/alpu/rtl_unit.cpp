// libonic-alpu-rtl.so: the Verilated onic_alpu.v behind the alpu engine's
// unit table (src/match/alpu_unit.h), chosen by ONIC_ALPU_UNIT=rtl and
// opened by libonic with dlopen, so that libonic stays C11 without C++ or
// Verilator.
//
// The engine pushes commands and requests into FIFOs of the C unit's depth
// and calls run(); run() clocks the RTL, presenting the head of each FIFO
// on its valid/ready channel and taking every result it hands out, until
// nothing is left to take and no match is in flight, a request is held in
// insert mode with no command left to release it, or the result FIFO is
// full -- the three places the C unit's run() stops. The cycles it clocks
// are counted (onic_alpu_unit_clock_t): what the hardware would spend for
// the engine, which waits for each answer before it sends the next request.
//
// Keys are the whole of onic_mkey_t (MATCH_W 128: bits, then id), masks on
// both sides (LAYOUT 2, the C unit's symmetric predicate), tags of 16 bits
// (the engine's tags are cell indices). A Verilated model has its size fixed
// when it is built: the plug-in holds one model per (cells, block) in
// ONIC_ALPU_RTL_SIZES (hw/CMakeLists.txt), listed by rtl_models.h.
#include "verilated.h"
#include "rtl_models.h"

extern "C" {
#include "match/alpu_unit.h"
}

#include <cstdio>
#include <deque>

namespace {

constexpr size_t FIFO = ONIC_ALPU_UNIT_FIFO_DEPTH;

template <typename T> void put_key(T &port, onic_mkey_t k)
{
    port[0] = (uint32_t)k.bits;
    port[1] = (uint32_t)(k.bits >> 32);
    port[2] = (uint32_t)k.id;
    port[3] = (uint32_t)(k.id >> 32);
}

struct Unit {
    std::deque<onic_alpu_cmd_t>    cmds;
    std::deque<onic_alpu_hdr_t>    hdrs;
    std::deque<onic_alpu_result_t> results;
    onic_alpu_unit_clock_t         clk = {};
    uint64_t                       compared = 0;
    virtual ~Unit() {}
    virtual unsigned run() = 0;
};

template <typename M> struct RtlUnit final : Unit {
    VerilatedContext ctx;
    M               *top;
    unsigned         cells;

    explicit RtlUnit(unsigned n) : cells(n)
    {
        top = new M{&ctx, "onic_alpu"};
        top->clk = 0;
        top->rst = 1;
        top->cmd_valid = top->req_valid = top->res_ready = 0;
        tick();
        tick();
        top->rst = 0;
        top->eval();
    }
    ~RtlUnit() override
    {
        top->final();
        delete top;
    }

    void tick()
    {
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
    }

    unsigned run() override
    {
        unsigned taken = 0, quiet = 0;

        for (;;) {
            bool cv = !cmds.empty(), rv = !hdrs.empty(), room = results.size() < FIFO;

            if (!cv && top->idle && !top->res_valid && (!rv || top->held))
                break;  // done, or a request held until a STOP_INSERT that has not come
            if (!room && top->res_valid)
                break;  // the engine has results to take first
            if (quiet > 1000 + 4 * cells) {
                fprintf(stderr, "onic: alpu rtl: no progress in %u cycles (commands %zu, "
                        "requests %zu, held %u, insert mode %u)\n", quiet, cmds.size(),
                        hdrs.size(), (unsigned)top->held, (unsigned)top->insert_mode);
                break;
            }
            top->cmd_valid = cv;
            if (cv) {
                const onic_alpu_cmd_t &c = cmds.front();
                top->cmd_type = c.type & 7;
                put_key(top->cmd_key, c.key);
                put_key(top->cmd_mask, c.ignore);
                top->cmd_tag = (uint32_t)c.tag;
            }
            top->req_valid = rv;
            if (rv) {
                const onic_alpu_hdr_t &h = hdrs.front();
                put_key(top->req_key, h.key);
                put_key(top->req_mask, h.ignore);
                top->req_probe = h.probe != 0;
            }
            top->res_ready = room;
            top->eval();
            quiet++;
            if (cv && top->cmd_ready) {
                cmds.pop_front();
                clk.commands++;
                taken++;
                quiet = 0;
            }
            if (rv && top->req_ready) {
                compared += top->count;
                hdrs.pop_front();
                clk.requests++;
                taken++;
                quiet = 0;
            }
            if (top->res_valid && room) {
                onic_alpu_result_t r = {};
                r.type = top->res_type;
                if (r.type == ONIC_ALPU_RES_START_ACK)
                    r.free = top->res_data;
                else if (r.type == ONIC_ALPU_RES_MATCH_SUCCESS)
                    r.tag = top->res_data;
                results.push_back(r);
                quiet = 0;
            }
            tick();
            clk.cycles++;
        }
        top->cmd_valid = top->req_valid = top->res_ready = 0;
        return taken;
    }
};

#define RTL_SIZE_STR(c, b) " " #c "/" #b
const char sizes[] = ONIC_RTL_MODELS(RTL_SIZE_STR);  // " 256/16 32/4": used from sizes + 1

onic_status_t rtl_create(unsigned cells, unsigned block, onic_simd_t, void **unit_p)
{
    Unit *u = nullptr;

    try {  // no exception may reach the C caller
#define RTL_MAKE(c, b) \
        if (u == nullptr && cells == c && block == b) \
            u = new RtlUnit<Vonic_alpu_##c##_##b>(c);
        ONIC_RTL_MODELS(RTL_MAKE)
#undef RTL_MAKE
    } catch (...) {
        return ONIC_ERR_NO_MEMORY;
    }
    if (u == nullptr)
        return ONIC_ERR_UNSUPPORTED;
    *unit_p = u;
    return ONIC_OK;
}

void rtl_destroy(void *unit)
{
    delete static_cast<Unit *>(unit);
}

onic_status_t rtl_cmd_push(void *unit, const onic_alpu_cmd_t *cmd)
{
    Unit *u = static_cast<Unit *>(unit);
    if (u->cmds.size() >= FIFO)
        return ONIC_ERR_NO_RESOURCE;
    try {
        u->cmds.push_back(*cmd);
    } catch (...) {
        return ONIC_ERR_NO_MEMORY;
    }
    return ONIC_OK;
}

onic_status_t rtl_hdr_push(void *unit, const onic_alpu_hdr_t *hdr)
{
    Unit *u = static_cast<Unit *>(unit);
    if (u->hdrs.size() >= FIFO)
        return ONIC_ERR_NO_RESOURCE;
    try {
        u->hdrs.push_back(*hdr);
    } catch (...) {
        return ONIC_ERR_NO_MEMORY;
    }
    return ONIC_OK;
}

unsigned rtl_run(void *unit)
{
    try {
        return static_cast<Unit *>(unit)->run();
    } catch (...) {  // out of memory for a result: the engine finds none
        return 0;
    }
}

onic_status_t rtl_result_pop(void *unit, onic_alpu_result_t *res_p)
{
    Unit *u = static_cast<Unit *>(unit);
    if (u->results.empty())
        return ONIC_ERR_NO_ELEM;
    *res_p = u->results.front();
    u->results.pop_front();
    return ONIC_OK;
}

uint64_t rtl_compared(const void *unit)
{
    return static_cast<const Unit *>(unit)->compared;
}

void rtl_clock(const void *unit, onic_alpu_unit_clock_t *clock_p)
{
    *clock_p = static_cast<const Unit *>(unit)->clk;
}

const onic_alpu_unit_ops_t rtl_ops = {
    ONIC_ALPU_UNIT_ABI, "rtl", sizes + 1, rtl_create, rtl_destroy, rtl_cmd_push, rtl_hdr_push,
    rtl_run, rtl_result_pop, rtl_compared, rtl_clock,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const onic_alpu_unit_ops_t *
onic_alpu_rtl_unit_ops(uint32_t abi)
{
    return abi == ONIC_ALPU_UNIT_ABI ? &rtl_ops : nullptr;
}
