// Bounded proof harness (yosys-smtbmc, hw/alpu/formal/run.sh): every input
// of onic_alpu is free except the tags, which number the INSERTs so that a
// tag tells a cell's age. The properties are the `ifdef FORMAL block in
// onic_alpu.v: the reported cell is the oldest valid matching one; a delete
// removes exactly it and keeps the others in order with no duplicate;
// no MATCH FAILURE in insert mode; the result FIFO never overflows or
// underflows; reset and RESET empty the unit.
module alpu_formal #(
    parameter CELLS = 8, BLOCK = 4, MATCH_W = 6, TAG_W = 7
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               cmd_valid,
    input  wire [2:0]         cmd_type,
    input  wire [MATCH_W-1:0] cmd_key,
    input  wire [MATCH_W-1:0] cmd_mask,
    input  wire               req_valid,
    input  wire [MATCH_W-1:0] req_key,
    input  wire [MATCH_W-1:0] req_mask,
    input  wire               req_probe,
    input  wire               res_ready
);
    reg init = 1'b1;
    always @(posedge clk) init <= 1'b0;
    always @* if (init) assume(rst);

    reg [TAG_W-1:0] next_tag;
    wire cmd_ready;
    always @(posedge clk)
        if (init)
            next_tag <= 0;
        else if (cmd_valid && cmd_ready && cmd_type == 3'd2)
            next_tag <= next_tag + 1'b1;
    // the proof is as deep as the tags can count without wrapping
    always @* assume(next_tag != {TAG_W{1'b1}});

    onic_alpu #(.CELLS(CELLS), .BLOCK(BLOCK), .MATCH_W(MATCH_W), .TAG_W(TAG_W), .LAYOUT(2))
    dut (.clk(clk), .rst(rst),
         .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_type(cmd_type),
         .cmd_key(cmd_key), .cmd_mask(cmd_mask), .cmd_tag(next_tag),
         .req_valid(req_valid), .req_ready(), .req_key(req_key),
         .req_mask(req_mask), .req_probe(req_probe),
         .res_valid(), .res_ready(res_ready), .res_type(), .res_data(),
         .count(), .insert_mode(), .held(), .idle());
endmodule
