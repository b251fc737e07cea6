// alpu_ice40_top: onic_alpu for the iCE40 HX8K fmax run of synth.sh. The
// unit's ports are wider than the package has pins (two 42-bit keys, two
// masks and a tag in: over 200 pins), so its wide inputs come from a shift
// register fed by one pin; the handshakes, the command type and the outputs
// stay pins. The shift register adds a flip-flop per input bit and one LUT
// level at most on no path of the unit, so the timing is the unit's.
module alpu_ice40_top #(
    parameter CELLS   = 32,
    parameter BLOCK   = 16,
    parameter MATCH_W = 42,
    parameter TAG_W   = 16,
    parameter LAYOUT  = 1,
    parameter CNT_W   = $clog2(CELLS + 1),
    parameter DATA_W  = TAG_W > CNT_W ? TAG_W : CNT_W
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              sin,
    input  wire              cmd_valid,
    output wire              cmd_ready,
    input  wire [2:0]        cmd_type,
    input  wire              req_valid,
    output wire              req_ready,
    input  wire              req_probe,
    output wire              res_valid,
    input  wire              res_ready,
    output wire [1:0]        res_type,
    output wire [DATA_W-1:0] res_data,
    output wire [CNT_W-1:0]  count,
    output wire              insert_mode,
    output wire              held,
    output wire              idle
);
    localparam SR_W = 4 * MATCH_W + TAG_W;
    reg [SR_W-1:0] sr;
    always @(posedge clk)
        sr <= {sr[SR_W-2:0], sin};

    onic_alpu #(.CELLS(CELLS), .BLOCK(BLOCK), .MATCH_W(MATCH_W), .TAG_W(TAG_W),
                .LAYOUT(LAYOUT)) unit (
        .clk(clk), .rst(rst),
        .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_type(cmd_type),
        .cmd_key(sr[0 +: MATCH_W]), .cmd_mask(sr[MATCH_W +: MATCH_W]),
        .cmd_tag(sr[2*MATCH_W +: TAG_W]),
        .req_valid(req_valid), .req_ready(req_ready),
        .req_key(sr[2*MATCH_W+TAG_W +: MATCH_W]), .req_mask(sr[3*MATCH_W+TAG_W +: MATCH_W]),
        .req_probe(req_probe),
        .res_valid(res_valid), .res_ready(res_ready), .res_type(res_type), .res_data(res_data),
        .count(count), .insert_mode(insert_mode), .held(held), .idle(idle));
endmodule
