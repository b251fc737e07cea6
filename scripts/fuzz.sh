#!/bin/sh
# Builds the libFuzzer targets with clang (installing it if missing) in
# build-fuzz and runs one for SECONDS (default 60): TARGET ptl (default, the
# Portals target side), trace (the match-trace reader and replay) or lane
# (the shm lane's decoder and audits).
# Exits non-zero if the fuzzer finds anything.
#   scripts/fuzz.sh [SECONDS] [ptl|trace|lane]
set -eu
SECONDS_TO_RUN=${1:-60}
TARGET=${2:-ptl}
case $TARGET in
ptl) BIN=fuzz_ptl_target ;;
trace) BIN=fuzz_trace_read ;;
lane) BIN=fuzz_shm_lane ;;
*) echo "fuzz: unknown target $TARGET; use ptl, trace or lane" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

# clang alone is not enough: libFuzzer and ASan's runtime come in
# libclang-rt-dev, which a clang installed without recommends lacks.
if ! command -v clang >/dev/null 2>&1 ||
    [ ! -f "$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ]; then
    echo "fuzz: installing clang and its runtime libraries (libFuzzer, sanitizers)"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends clang libclang-rt-dev
fi
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DONIC_FUZZ=ON >/dev/null
cmake --build build-fuzz -j "$(nproc 2>/dev/null || echo 2)" --target "$BIN"
mkdir -p "build-fuzz/corpus-$TARGET"
ONIC_LOG=error "build-fuzz/tests/$BIN" \
    -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -print_final_stats=1 "build-fuzz/corpus-$TARGET"
