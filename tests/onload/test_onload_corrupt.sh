#!/bin/sh
# The onload engine's status segment zeroed by an outside process under a
# running job (onload_corrupt.c): one error line naming the segment, exit
# status 65, the job ended within a second of the write.
#   test_onload_corrupt.sh ONICRUN ONLOAD_CORRUPT SHM_POKE
set -u
run=$1
job=$2
poke=$3
. "$(dirname "$(readlink -f "$0")")/../launcher/check_lib.sh"

in_time() {
    poked=$(sed -n 's/^shm_poke: .* done at //p' "$out")
    [ -n "$poked" ] && awk -v a="$poked" -v b="$end" 'BEGIN { exit !(b - a < 1.0) }'
}
# Every process that looks may say it once; never a flood.
lines() { n=$(grep -c "error: onload: corrupt data in the engine's status segment" "$out");
          [ "$n" -ge 1 ] && [ "$n" -le 2 ] && [ "$(grep -c 'error:' "$out")" -eq "$n" ]; }
# Two processes and the engine on 2 cores: keep the engine anyway.
ONIC_ONLOAD_SHARED=engine go --onload -n 2 "$job" "$poke"
end=$(date +%s.%N)
if [ $rc -eq 77 ]; then
    echo "SKIPPED: the kernel does not let a process write another's memory"
    exit 0
fi
check "exit status 65 (got $rc)" [ $rc -eq 65 ]
check "one error line per process at most, naming the segment" lines
check "the job ended within a second of the write" in_time
check_end test_onload_corrupt
