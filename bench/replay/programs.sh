#!/bin/sh
# Real programs traced and replayed: the suite's application kernels
# (Jacobi, Cannon), its OSU-style programs (bench/rate, bench/mpi/p2p.c) and
# the MPI test programs, each run once under ONIC_TRACE with small inputs,
# then onic-replay (models only) on its traces: queue depths and what each
# model of the papers' NICs would cost against the NIC processor's walk.
#   bench/replay/programs.sh [BUILD]     (default build)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=$build/onicc
run="$build/onicrun --timeout 300"

$cc -O2 "$root/bench/apps/jacobi.c" -lm -o "$work/jacobi"
$cc -O2 "$root/bench/apps/cannon.c" -lm -o "$work/cannon"
$cc -O2 "$root/bench/rate/rate.c" -o "$work/rate"
$cc -O2 "$root/bench/mpi/p2p.c" -o "$work/p2p"
$cc -O2 "$root/bench/queue/preposted.c" -o "$work/preposted"
$cc -O2 "$root/bench/queue/unexpected.c" -o "$work/unexpected"

one() {
    name=$1
    np=$2
    shift 2
    mkdir -p "$work/t-$name"
    ONIC_TRACE=$work/t-$name $run -n "$np" "$@" >/dev/null
    echo "== $name ($np processes): $*" | sed "s|$work/||"
    "$build/onic-replay" --quiet --no-measure --depth "$work/t-$name" | sed -n '/^[0-9]* files/p;/model/p;/against/p;/^queue depth/,$p'
    echo
}
one jacobi 4 "$work/jacobi" --n 128 --iters 50 --reps 1
one cannon 4 "$work/cannon" --n 256 --reps 1
one osu_rate 2 "$work/rate" --sizes 8,1024 --iters 200 --reps 1
one osu_latency 2 "$work/p2p" latency 5
one osu_bw 2 "$work/p2p" bw 3
one preposted 2 "$work/preposted" lat --lens 0,100,1000 --fracs 0.5,1 --sizes 8 --rounds 3
one unexpected 2 "$work/unexpected" --lens 0,100,1000 --sizes 8 --rounds 3
one mpi_tests 4 "$build/tests/mpi_tests" all
