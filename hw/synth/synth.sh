#!/bin/sh
# Synthesizes onic_alpu with Yosys for the Virtex-II Pro (synth_xilinx
# -family xc2vp: the LUT4 and flip-flop cells of paper 000's tables IV and
# V) and prints a table in the paper's columns, plus the longest
# register-to-register path in LUT4 levels (ltp, with ONIC_SYNTH_LTP=1) and,
# for the iCE40 HX8K, the
# maximum clock nextpnr-ice40 reports.
#
#   synth.sh                   the six configurations of tables IV and V,
#                              both layouts, and the iCE40 run
#   synth.sh CELLS BLOCK LAYOUT  one configuration (what ctest runs)
#   synth.sh ice40             the iCE40 run alone
#
# LUTs counts LUT1-LUT4 and INV cells: Yosys leaves an inverter as an INV
# cell, which on the Virtex-II Pro takes a LUT like any other function.
# MUXCY/XORCY (the carry chain) and MUXF5-F8 sit beside the LUTs in a slice
# and are not counted, as in the paper's tables.
#
# Match width 42 and tag width 16 as in the paper. Latency and match
# interval are the pipeline's, in cycles (measured by alpu_cosim --bench).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rtl=$here/../alpu/onic_alpu.v
work=${ONIC_SYNTH_DIR:-$(mktemp -d)}
mkdir -p "$work"

# synth_one CELLS BLOCK LAYOUT: one row
synth_one() {
    log=$work/xc2vp_$1_$2_$3.log
    yosys -q -l "$log" -p "read_verilog -defer -sv $rtl
        chparam -set CELLS $1 -set BLOCK $2 -set MATCH_W 42 -set TAG_W 16 -set LAYOUT $3 onic_alpu
        synth_xilinx -family xc2vp -top onic_alpu -flatten
        tee -o $work/stat_$1_$2_$3.txt stat" >/dev/null
    # ltp does not know the Xilinx flip-flops, so the LUT levels come from
    # Yosys's generic LUT4 mapping of the same design, which turns the
    # carry chains into LUT levels: only with ONIC_SYNTH_LTP=1, since it
    # then overstates the path and takes as long as the synthesis itself.
    [ "${ONIC_SYNTH_LTP:-0}" = 0 ] && echo "ltp not measured" > "$work/ltp_$1_$2_$3.txt" ||
    yosys -q -p "read_verilog -defer -sv $rtl
        chparam -set CELLS $1 -set BLOCK $2 -set MATCH_W 42 -set TAG_W 16 -set LAYOUT $3 onic_alpu
        synth -flatten -top onic_alpu -lut 4
        tee -o $work/ltp_$1_$2_$3.txt ltp -noff" >/dev/null
    luts=$(awk '/ (LUT[1-6]|INV) /{s+=$2} END{print s+0}' "$work/stat_$1_$2_$3.txt")
    lutram=$(awk '/ RAM[0-9]+X[0-9]+[SD] /{s+=$2} END{print s+0}' "$work/stat_$1_$2_$3.txt")
    ffs=$(awk '/ FD[A-Z]* /{s+=$2} END{print s+0}' "$work/stat_$1_$2_$3.txt")
    ltp=$(sed -n 's/.*Longest topological path in onic_alpu (length=\([0-9]*\)).*/\1/p' \
          "$work/ltp_$1_$2_$3.txt")
    [ -n "$ltp" ] || ltp=--
    [ "$3" = 0 ] && unit=posted || unit=unexpected
    printf '| %-10s | %5s | %5s | %7s | %6s | %7s | %4s |\n' \
        "$unit" "$1" "$2" "$luts" "$lutram" "$ffs" "$ltp"
}

header() {
    echo "| unit       | cells | block |   LUTs | LUTRAM |     FFs |  ltp |"
    echo "|------------|-------|-------|--------|--------|---------|------|"
}

if [ $# -eq 3 ]; then
    header
    synth_one "$1" "$2" "$3"
    exit 0
fi

if [ "${1:-}" != ice40 ]; then
echo "Virtex-II Pro (yosys $(yosys -V | awk '{print $2}') synth_xilinx -family xc2vp), match 42, tag 16"
echo
header
for layout in 0 1; do
    for cells in 256 128; do
        for block in 8 16 32; do
            synth_one $cells $block $layout
        done
    done
done
fi

# iCE40 HX8K: per layout, the largest unit that places, with nextpnr-ice40's
# fmax. The unit has more input bits than the package has pins, so it is
# synthesized inside ice40_top.v, which feeds them from a shift register.
if command -v nextpnr-ice40 >/dev/null 2>&1; then
    echo
    echo "iCE40 HX8K (synth_ice40, nextpnr-ice40 --hx8k --package ct256), match 42, tag 16"
    echo
    echo "| unit       | cells | block | LCs  | LUT4s | FFs  | fmax (MHz) |"
    echo "|------------|-------|-------|------|-------|------|------------|"
    done_layouts=""
    for cfg in "1 64 16" "1 32 16" "0 64 16" "0 32 16" "0 16 8"; do
        set -- $cfg
        case " $done_layouts " in *" $1 "*) continue ;; esac
        base=$work/ice40_$1_$2_$3
        yosys -q -l "$base.yosys.log" -p "read_verilog -defer -sv $rtl $here/ice40_top.v
            chparam -set CELLS $2 -set BLOCK $3 -set MATCH_W 42 -set TAG_W 16 -set LAYOUT $1 alpu_ice40_top
            synth_ice40 -top alpu_ice40_top -json $base.json" >/dev/null
        if nextpnr-ice40 --hx8k --package ct256 --json "$base.json" --pcf-allow-unconstrained \
               --freq 100 --seed 1 --timing-allow-fail > "$base.pnr.log" 2>&1; then
            lc=$(sed -n 's/.*ICESTORM_LC: *\([0-9]*\)\/.*/\1/p' "$base.pnr.log" | tail -1)
            lut=$(awk '/ SB_LUT4 /{s+=$2} END{print s+0}' "$base.yosys.log")
            ff=$(awk '/ SB_DFF[A-Z]* /{s+=$2} END{print s+0}' "$base.yosys.log")
            fmax=$(sed -n "s/.*Max frequency for clock *'clk\$SB_IO_IN_\$glb_clk': \([0-9.]*\) MHz.*/\1/p" \
                   "$base.pnr.log" | tail -1)
            [ "$1" = 0 ] && unit=posted || unit=unexpected
            printf '| %-10s | %5s | %5s | %4s | %5s | %4s | %10s |\n' "$unit" "$2" "$3" "$lc" \
                "$lut" "$ff" "$fmax"
            done_layouts="$done_layouts $1"
        fi
    done
else
    echo
    echo "iCE40 HX8K: left out, nextpnr-ice40 is not installed (scripts/install-deps.sh synth)"
fi
