#!/bin/sh
# Recorded matching traffic into both units: an MPI job of the conformance
# suite runs with ONIC_TRACE, and alpu_trace_replay replays every rank's
# trace into the alpu engine on the C unit and on the RTL unit, at 32 cells
# from the first entry (the unit fills, overflows and is reset) and at the
# default 256 cells, threshold 5. Every lookup must find, on both units, the
# entry the live run found.
#   trace_replay.sh ONICRUN MPI_TESTS ALPU_TRACE_REPLAY PLUGIN
set -eu
run=$1 mpi=$2 replay=$3 plugin=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ONIC_TRACE=$dir "$run" -n 2 --timeout 300 "$mpi" order unexpected probe cancel fanin smallburst
ls "$dir"/*.trace >/dev/null
"$replay" --cells 32 --block 4 --threshold 0 "$plugin" "$dir"/*.trace
"$replay" "$plugin" "$dir"/*.trace
