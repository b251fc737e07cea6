#!/bin/sh
# The bounded proof: yosys writes onic_alpu with its `ifdef FORMAL
# properties inside alpu_formal.v as SMT-LIB, yosys-smtbmc unrolls it DEPTH
# cycles with z3 (Debian's boolector 1.5 fails under smtbmc's incremental
# mode). run.sh [CELLS BLOCK MATCH_W DEPTH]; defaults: 4 cells in blocks of
# 2, 3-bit keys, 16 cycles: enough to fill the unit (START, four INSERTs,
# STOP) and delete from it twice.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cells=${1:-4} block=${2:-2} width=${3:-3} depth=${4:-16}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
yosys -q -p "read_verilog -defer -formal -DFORMAL $here/../onic_alpu.v $here/alpu_formal.v
    chparam -set CELLS $cells -set BLOCK $block -set MATCH_W $width -set TAG_W 6 alpu_formal
    prep -flatten -top alpu_formal
    memory_map
    opt -fast
    async2sync
    dffunmap
    write_smt2 -wires $work/alpu.smt2"
yosys-smtbmc -s z3 --unroll -t "$depth" "$work/alpu.smt2"
