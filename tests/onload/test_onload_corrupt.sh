#!/bin/sh
# The onload engine's shared memory corrupted by an outside process under a
# running job (onload_corrupt.c): the status segment zeroed, rank 1's event
# ring (which rank 1 reads) and its command ring (which the engine reads)
# given a tail far ahead. Each: one error line naming what was wrong, exit
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
lines() { n=$(grep -c "error: onload: corrupt data in $1" "$out");
          [ "$n" -ge 1 ] && [ "$n" -le 2 ] && [ "$(grep -c 'error:' "$out")" -eq "$n" ]; }
for case in "onload-zero:the engine's status segment" \
            "onload-evt:the event ring of rank 1, seen by it: the producer's tail" \
            "onload-cmd:the command ring of rank 1, seen by the engine: the producer's tail"; do
    scenario=${case%%:*}
    what=${case#*:}
    # Two processes and the engine on 2 cores: keep the engine anyway.
    ONIC_ONLOAD_SHARED=engine go --onload -n 2 "$job" "$poke" "$scenario"
    end=$(date +%s.%N)
    if [ $rc -eq 77 ]; then
        echo "SKIPPED: the kernel does not let a process write another's memory"
        exit 0
    fi
    check "$scenario: exit status 65 (got $rc)" [ $rc -eq 65 ]
    check "$scenario: one error line per process at most, naming $what" lines "$what"
    check "$scenario: the job ended within a second of the write" in_time
done
check_end test_onload_corrupt
