// onic_alpu: paper 000's associative list processing unit as synthesizable
// Verilog, answering exactly as onic's software unit (src/match/alpu_unit.c).
//
// Cells are kept oldest first: cell 0 has the highest priority. Every cell
// loads from its younger neighbour when enabled (the youngest loads the
// INSERT data), so data only ever moves one way and a cell needs no data
// mux: a flip-flop with a clock enable per bit, as in the paper.
//   delete  cells at and after the oldest hit load from their neighbour
//           (the paper's compaction: no hole is left where the cell was);
//   insert  the new entry enters at the youngest cell and every cell at or
//           after the oldest empty one moves one place toward the oldest
//           end ("space available" taken exactly), so one insert per cycle.
// Valid cells are therefore always in age order; empty cells between them
// change no answer, which is also why the C unit may leave holes.
//
// Pipeline of a match (accept at edge 0):
//   edge 0  the request is registered once per block (fan-out)
//   edge 1  a hit bit per cell (compare, valid ANDed in)
//   edge 2  per block: any hit and the tag of its oldest hit
//   edge 3  across blocks: the result is written to the result FIFO
//   edge 4  delete: cells at and after the oldest hit shift (the enables
//           come from the hit bits again, through the same prefix chain
//           as stage 2's and one across the blocks)
// The next request is fanned out at edge 4 while the delete happens (a
// match every 4 cycles), or at edge 3 when nothing is deleted (miss or
// probe). Commands are taken only with the pipeline empty, one per cycle.
//
// LAYOUT 0: a mask bit per match bit in every cell (posted receives, the
//           paper's table IV); the request's mask is ignored.
// LAYOUT 1: the mask comes with the request (unexpected messages, table V);
//           INSERT's mask is ignored.
// LAYOUT 2: both (onic's symmetric predicate, what the C unit computes).
module onic_alpu #(
    parameter CELLS     = 256,
    parameter BLOCK     = 16,
    parameter MATCH_W   = 42,
    parameter TAG_W     = 16,
    parameter LAYOUT    = 0,
    parameter RES_DEPTH = 4,
    // derived, not to be set
    parameter CNT_W     = $clog2(CELLS + 1),
    parameter DATA_W    = TAG_W > CNT_W ? TAG_W : CNT_W
) (
    input  wire               clk,
    input  wire               rst,
    // commands: 1 START_INSERT, 2 INSERT, 3 STOP_INSERT, 4 RESET
    input  wire               cmd_valid,
    output wire               cmd_ready,
    input  wire [2:0]         cmd_type,
    input  wire [MATCH_W-1:0] cmd_key,
    input  wire [MATCH_W-1:0] cmd_mask,
    input  wire [TAG_W-1:0]   cmd_tag,
    // match requests
    input  wire               req_valid,
    output wire               req_ready,
    input  wire [MATCH_W-1:0] req_key,
    /* verilator lint_off UNUSEDSIGNAL */ // unused in LAYOUT 0
    input  wire [MATCH_W-1:0] req_mask,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire               req_probe,
    // results: 1 START_ACKNOWLEDGE (data: free cells), 2 MATCH_SUCCESS
    // (data: tag), 3 MATCH_FAILURE
    output wire               res_valid,
    input  wire               res_ready,
    output wire [1:0]         res_type,
    output wire [DATA_W-1:0]  res_data,
    // observation
    output reg  [CNT_W-1:0]   count,
    output reg                insert_mode,
    output reg                held,
    output wire               idle       // no match in flight
);
    localparam NBLK     = CELLS / BLOCK;
    localparam CELL_MSK = LAYOUT != 1;
    localparam REQ_MSK  = LAYOUT != 0;
    localparam RQ_W     = REQ_MSK ? 2 * MATCH_W : MATCH_W;
    localparam RES_W    = 2 + DATA_W;
    localparam RCNT_W   = $clog2(RES_DEPTH + 1);

    localparam CMD_START  = 3'd1, CMD_INSERT = 3'd2, CMD_STOP = 3'd3, CMD_RESET = 3'd4;
    localparam RES_ACK    = 2'd1, RES_HIT = 2'd2, RES_MISS = 2'd3;

    // ---- cells, with one extra slot on top: the INSERT data ----
    reg  [CELLS*MATCH_W-1:0] ckey;
    reg  [CELLS*MATCH_W-1:0] cmsk;
    reg  [CELLS*TAG_W-1:0]   ctag;
    reg  [CELLS-1:0]         cv;
    wire [(CELLS+1)*MATCH_W-1:0] key_chain = {cmd_key, ckey};
    wire [(CELLS+1)*MATCH_W-1:0] msk_chain = {cmd_mask, cmsk};
    wire [(CELLS+1)*TAG_W-1:0]   tag_chain = {cmd_tag, ctag};

    // ---- pipeline state ----
    // Per-block copies of the request: the paper's first stage. keep stops
    // synthesis from merging the copies back into one fan-out net.
    (* keep *) reg [NBLK*RQ_W-1:0] bq;
    reg [RQ_W-1:0]   rq;        // the request in the pipeline, kept for a hold
    reg              rq_probe;
    reg              p0, p1, p2, p3;  // compare, block priority, global, delete
    reg [CELLS-1:0]  hit;
    reg [NBLK-1:0]   bany;
    reg [NBLK*TAG_W-1:0] btagn;  // per block: the oldest hit's tag, inverted
    reg              last_req;     // the last thing taken was a request

    // ---- result FIFO ----
    reg [RES_W-1:0]  rfifo [0:RES_DEPTH-1];
    reg [RCNT_W-1:0] rcnt;
    reg [$clog2(RES_DEPTH)-1:0] rhead, rtail;
    assign res_valid = rcnt != 0;
    assign res_type  = rfifo[rhead][RES_W-1:DATA_W];
    assign res_data  = rfifo[rhead][DATA_W-1:0];
    wire   res_pop   = res_valid & res_ready;

    localparam [CNT_W-1:0] CELLS_C = CELLS[CNT_W-1:0];

    // ---- the carry chains ----
    // Each wide AND, prefix OR and oldest-first choice below is written as
    // an addition, so that synthesis maps it onto the FPGA's carry chain
    // (MUXCY/XORCY on the Virtex-II Pro) instead of a tree of LUTs:
    //   &v          the carry out of v + 1;
    //   -v = ~v + 1 bit j is 1 when v_j differs from "some bit below j is
    //               set": v | -v sets every bit at or above the lowest set
    //               bit (a prefix OR), v & -v keeps the lowest set bit (the
    //               oldest), and the carry out says v is 0.
    // The choice of a tag is an AND-OR over the one-hot oldest bit: a LUT
    // takes two cells' (oldest, tag bit) pairs and the chain ANDs the
    // pairs' NORs, which gives the tag bit inverted (kept so: the next
    // LUT absorbs the inversion).
    localparam PAIRS  = (BLOCK + 1) / 2;
    localparam BPAIRS = (NBLK + 1) / 2;

    // stage 2 and the cell enables share one prefix chain per block: of the
    // hits while a request is in stage 2 or deletes (stage 4), of the empty
    // cells otherwise (an INSERT). The two stages are never busy together.
    wire            sel_hit = p1 | p3;
    wire [CELLS-1:0] x = sel_hit ? hit : ~cv;
    reg  [CELLS-1:0] s;             // per block: -x
    reg  [NBLK-1:0]  bnone;         // per block: x is 0
    reg  [BLOCK:0]   negx;
    integer b2, j2, t2;
    always @* begin
        for (b2 = 0; b2 < NBLK; b2 = b2 + 1) begin
            negx = {1'b0, ~x[b2*BLOCK +: BLOCK]} + {{BLOCK{1'b0}}, 1'b1};
            s[b2*BLOCK +: BLOCK] = negx[BLOCK-1:0];
            bnone[b2] = negx[BLOCK];
        end
    end

    // stage 2: per block, the tag of the oldest hit (inverted) and whether
    // there was one
    wire [CELLS-1:0]     oh = hit & s;
    reg  [NBLK*TAG_W-1:0] btagn_n;
    reg  [PAIRS-1:0]     w2;
    reg  [PAIRS:0]       and2;
    reg  [2*PAIRS-1:0]   ohp, tp;
    always @* begin
        for (b2 = 0; b2 < NBLK; b2 = b2 + 1)
            for (t2 = 0; t2 < TAG_W; t2 = t2 + 1) begin
                ohp = {2*PAIRS{1'b0}};
                tp  = {2*PAIRS{1'b0}};
                for (j2 = 0; j2 < BLOCK; j2 = j2 + 1) begin
                    ohp[j2] = oh[b2*BLOCK + j2];
                    tp[j2]  = ctag[(b2*BLOCK + j2)*TAG_W + t2];
                end
                for (j2 = 0; j2 < PAIRS; j2 = j2 + 1)
                    w2[j2] = !((ohp[2*j2] & tp[2*j2]) | (ohp[2*j2+1] & tp[2*j2+1]));
                and2 = {1'b0, w2} + {{PAIRS{1'b0}}, 1'b1};
                btagn_n[b2*TAG_W + t2] = and2[PAIRS];
            end
    end

    // stage 3: across blocks, the same on the blocks' registers
    reg             gany;
    reg [TAG_W-1:0] gtag;
    reg [NBLK:0]    negb;
    reg [NBLK-1:0]  boh;
    reg [BPAIRS-1:0] w3;
    reg [BPAIRS:0]  and3;
    reg [2*BPAIRS-1:0] bohp, btp;
    integer b3, t3;
    always @* begin
        negb = {1'b0, ~bany} + {{NBLK{1'b0}}, 1'b1};
        gany = !negb[NBLK];
        boh  = bany & negb[NBLK-1:0];
        for (t3 = 0; t3 < TAG_W; t3 = t3 + 1) begin
            bohp = {2*BPAIRS{1'b0}};
            btp  = {2*BPAIRS{1'b0}};
            for (b3 = 0; b3 < NBLK; b3 = b3 + 1) begin
                bohp[b3] = boh[b3];
                btp[b3]  = !btagn[b3*TAG_W + t3];
            end
            for (b3 = 0; b3 < BPAIRS; b3 = b3 + 1)
                w3[b3] = !((bohp[2*b3] & btp[2*b3]) | (bohp[2*b3+1] & btp[2*b3+1]));
            and3 = {1'b0, w3} + {{BPAIRS{1'b0}}, 1'b1};
            gtag[t3] = !and3[BPAIRS];
        end
    end

    // ---- control ----
    wire full       = count == CELLS_C;
    wire pipe_empty = !(p0 | p1 | p2 | p3);
    assign idle     = pipe_empty;
    // results still to be written by requests in flight
    wire [1:0] inflight = {1'b0, p0} + {1'b0, p1} + {1'b0, p2};
    wire room_req = rcnt + inflight < RES_DEPTH;
    wire room_one = rcnt < RES_DEPTH;
    wire p2_hold  = p2 & !gany & insert_mode;
    wire p2_del   = p2 & gany & !rq_probe;

    // A request may start when nothing but a finishing stage is ahead of it:
    // with the delete (its cells are read after the shift) or, when nothing
    // will be deleted or held, with the global priority stage.
    wire req_slot = !held & room_req & !p0 & !p1 &
                    (!p2 | (!p2_hold & !p2_del));
    wire cmd_needs_room = (cmd_type == CMD_START & !insert_mode) |
                          (cmd_type == CMD_STOP & insert_mode & held);
    wire cmd_slot = pipe_empty & (!cmd_needs_room | room_one);
    // One item per cycle; when both wait, they take turns, as the C unit
    // serves a request and then a command.
    wire take_cmd = cmd_valid & cmd_slot & (!req_valid | !req_slot | last_req);
    wire take_req = req_valid & req_slot & !take_cmd & !(cmd_valid & last_req);
    assign cmd_ready = take_cmd;
    assign req_ready = take_req;

    wire do_start  = take_cmd & !insert_mode & cmd_type == CMD_START;
    wire do_reset  = take_cmd & !insert_mode & cmd_type == CMD_RESET;
    wire do_insert = take_cmd & insert_mode & cmd_type == CMD_INSERT & !full;
    wire do_stop   = take_cmd & insert_mode & cmd_type == CMD_STOP;
    wire do_retry  = do_stop & held;

    // ---- cell enables ----
    // A delete (stage 4) enables every cell at or after the oldest hit, an
    // INSERT every cell at or after the oldest empty one: x | -x inside the
    // block, or all of the block when an older block has an x.
    wire            go = p3 | do_insert;
    reg [CELLS-1:0] en;
    reg [NBLK-1:0]  older_x;     // per block: an older block has an x
    reg             older;
    integer b4, i4;
    always @* begin
        older = 1'b0;
        for (b4 = 0; b4 < NBLK; b4 = b4 + 1) begin
            older_x[b4] = older;
            older = older | !bnone[b4];
        end
        for (i4 = 0; i4 < CELLS; i4 = i4 + 1)
            en[i4] = go & (x[i4] | s[i4] | older_x[i4 / BLOCK]);
    end

    wire [CELLS:0] v_chain = {do_insert, cv};

    integer i5;
    always @(posedge clk) begin
        for (i5 = 0; i5 < CELLS; i5 = i5 + 1)
            if (en[i5]) begin
                ckey[i5*MATCH_W +: MATCH_W] <= key_chain[(i5+1)*MATCH_W +: MATCH_W];
                ctag[i5*TAG_W +: TAG_W]     <= tag_chain[(i5+1)*TAG_W +: TAG_W];
                cmsk[i5*MATCH_W +: MATCH_W] <= msk_chain[(i5+1)*MATCH_W +: MATCH_W];
            end
        if (rst | do_reset)
            cv <= {CELLS{1'b0}};
        else
            for (i5 = 0; i5 < CELLS; i5 = i5 + 1)
                if (en[i5])
                    cv[i5] <= v_chain[i5+1];
    end

    // ---- compare: one hit bit per cell against its block's request copy ----
    // A LUT per bit says the bit agrees (bit 0's LUT, with a free input,
    // also takes the valid bit: every select of the chain is a LUT's
    // output, as the Virtex-II Pro slice requires) and the agreements are
    // ANDed along the carry chain (the carry out of v + 1).
    function [0:0] cell_hit(input cv1, input [MATCH_W-1:0] ck, input [MATCH_W-1:0] cm,
                           input [RQ_W-1:0] q);
        reg [MATCH_W-1:0] ign, agree;
        reg [MATCH_W:0]   sum;
        begin
            ign = {MATCH_W{1'b0}};
            if (CELL_MSK) ign = ign | cm;
            if (REQ_MSK)  ign = ign | q[RQ_W-1 -: MATCH_W];
            agree = ~((ck ^ q[MATCH_W-1:0]) & ~ign);
            agree[0] = agree[0] & cv1;
            sum = {1'b0, agree} + {{MATCH_W{1'b0}}, 1'b1};
            cell_hit = sum[MATCH_W];
        end
    endfunction

    wire [RQ_W-1:0] req_in;
    generate
        if (REQ_MSK) begin : g_req_mask
            assign req_in = {req_mask, req_key};
        end else begin : g_req_key
            assign req_in = req_key;
        end
    endgenerate
    wire [RQ_W-1:0] launch = take_req ? req_in : rq;

    integer i6;
    always @(posedge clk) begin
        if (take_req | do_retry)
            bq <= {NBLK{launch}};
        if (take_req) begin
            rq       <= req_in;
            rq_probe <= req_probe;
        end
        if (p0)
            for (i6 = 0; i6 < CELLS; i6 = i6 + 1)
                hit[i6] <= cell_hit(cv[i6], ckey[i6*MATCH_W +: MATCH_W], cmsk[i6*MATCH_W +: MATCH_W],
                                    bq[(i6 / BLOCK)*RQ_W +: RQ_W]);
        if (p1) begin
            bany  <= ~bnone;
            btagn <= btagn_n;
        end
    end

    // ---- control state, counters and the result FIFO ----
    wire             push   = do_start | (p2 & !p2_hold);
    wire [CNT_W-1:0]  free_c = CELLS_C - count;
    wire [DATA_W-1:0] free_d, tag_d;
    generate
        if (DATA_W > CNT_W) begin : g_free_pad
            assign free_d = {{(DATA_W-CNT_W){1'b0}}, free_c};
        end else begin : g_free
            assign free_d = free_c;
        end
        if (DATA_W > TAG_W) begin : g_tag_pad
            assign tag_d = {{(DATA_W-TAG_W){1'b0}}, gtag};
        end else begin : g_tag
            assign tag_d = gtag;
        end
    endgenerate
    wire [RES_W-1:0] push_data = do_start ? {RES_ACK, free_d}
                               : gany     ? {RES_HIT, tag_d}
                               :            {RES_MISS, {DATA_W{1'b0}}};

    always @(posedge clk) begin
        if (rst) begin
            p0 <= 1'b0; p1 <= 1'b0; p2 <= 1'b0; p3 <= 1'b0;
            insert_mode <= 1'b0;
            held        <= 1'b0;
            count       <= {CNT_W{1'b0}};
            rcnt        <= {RCNT_W{1'b0}};
            rhead       <= 0;
            rtail       <= 0;
            last_req    <= 1'b0;
        end else begin
            p0 <= take_req | do_retry;
            p1 <= p0;
            p2 <= p1;
            p3 <= p2_del;
            if (take_req)
                last_req <= 1'b1;
            else if (take_cmd)
                last_req <= 1'b0;
            if (do_start)
                insert_mode <= 1'b1;
            else if (do_stop)
                insert_mode <= 1'b0;
            if (p2_hold)
                held <= 1'b1;
            else if (do_retry)
                held <= 1'b0;
            if (do_reset)
                count <= {CNT_W{1'b0}};
            else if (do_insert)
                count <= count + 1'b1;
            else if (p3)
                count <= count - 1'b1;
            if (push) begin
                rfifo[rtail] <= push_data;
                rtail <= rtail + 1'b1;
            end
            if (res_pop)
                rhead <= rhead + 1'b1;
            rcnt <= rcnt + {{(RCNT_W-1){1'b0}}, push} - {{(RCNT_W-1){1'b0}}, res_pop};
        end
    end

`ifdef FORMAL
    // Checked by the bounded proof (formal/alpu_formal.v, which numbers its
    // INSERTs so tags give the age of a cell); no behaviour here.
    integer f, g;
    reg [CNT_W-1:0] nvalid;
    reg             f_found;
    reg [TAG_W-1:0] f_tag;
    always @* begin
        nvalid = 0;
        f_found = 1'b0;
        f_tag = 0;
        for (f = CELLS - 1; f >= 0; f = f - 1) begin
            nvalid = nvalid + {{(CNT_W-1){1'b0}}, cv[f]};
            // the specification: the lowest (oldest) valid cell that matches
            if (cell_hit(cv[f], ckey[f*MATCH_W +: MATCH_W], cmsk[f*MATCH_W +: MATCH_W], rq)) begin
                f_found = 1'b1;
                f_tag = ctag[f*TAG_W +: TAG_W];
            end
        end
    end
    reg past_ok = 1'b0;
    reg [TAG_W-1:0] f_del_tag;
    reg             f_deleted;
    always @(posedge clk) begin
        past_ok   <= 1'b1;
        f_deleted <= p3;
        if (p2)
            f_del_tag <= gtag;
    end
    always @* if (past_ok && !rst) begin
        // the result FIFO never overflows or underflows
        assert(rcnt <= RES_DEPTH);
        assert(!(push && rcnt == RES_DEPTH && !res_pop));
        // no MATCH FAILURE between START ACKNOWLEDGE and STOP INSERT
        assert(!(push && push_data[RES_W-1:DATA_W] == RES_MISS && insert_mode));
        // the reported cell is the oldest valid matching cell
        if (p2) begin
            assert(gany == f_found);
            if (gany)
                assert(gtag == f_tag);
        end
        // the counter is the number of valid cells
        assert(nvalid == count);
        assert(count <= CELLS);
        // valid cells stay in age order, each once
        for (f = 0; f < CELLS; f = f + 1)
            for (g = f + 1; g < CELLS; g = g + 1)
                if (cv[f] && cv[g])
                    assert(ctag[f*TAG_W +: TAG_W] < ctag[g*TAG_W +: TAG_W]);
        // a held request only in insert mode, with nothing in flight
        assert(!held || (insert_mode && !p1 && !p2 && !p3));
    end
    always @(posedge clk) if (past_ok && !rst && !$past(rst)) begin
        // reset, and RESET, leave every cell empty
        if ($past(do_reset))
            assert(cv == 0);
        // a delete removes exactly the reported cell: one fewer valid cell
        // and that tag gone (the order check above forbids duplicates)
        if (f_deleted) begin
            assert(count + 1'b1 == $past(count));
            for (f = 0; f < CELLS; f = f + 1)
                assert(!(cv[f] && ctag[f*TAG_W +: TAG_W] == f_del_tag));
        end
    end
    always @(posedge clk) if (past_ok && $past(rst))
        assert(cv == 0);
`endif
endmodule
