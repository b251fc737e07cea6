#!/bin/sh
# Corrupt shared memory stops the job (fail-stop): for each scenario of
# shm_corrupt_job.c, an outside process (shm_poke) writes into a running
# 2-rank job's shared memory; the process that finds it must print one
# error line naming the lane, the field and the value, and the job must end
# with a non-zero status (65, a corrupt-data exit) within a second of the
# write. (That nothing is left in /dev/shm, the shm_ledger tests around the
# whole run check: other jobs may run meanwhile.)
#   test_shm_corrupt.sh ONICRUN SHM_CORRUPT_JOB SHM_POKE
set -u
run=$1
job=$2
poke=$3
. "$(dirname "$(readlink -f "$0")")/../launcher/check_lib.sh"

# The one error line: "shm: corrupt data in the lane from rank A to rank B
# (seen by rank C): FIELD ...; stopping the job".
one_line() { [ "$(grep -c 'error: shm: corrupt data in the lane from rank 1 to rank 0' "$out")" -eq 1 ]; }
names() { grep 'error: shm: corrupt data' "$out" | grep -q -- "$1"; }
# From the write to onicrun's end: under a second.
in_time() {
    poked=$(sed -n 's/^shm_poke: .* done at //p' "$out")
    [ -n "$poked" ] && awk -v a="$poked" -v b="$end" 'BEGIN { exit !(b - a < 1.0) }'
}
skipped=0
for case in "garbage:ready word .* (overwritten)" "length:payload length 4294967295" \
            "slots:slot count 255" "kind:kind 77" \
            "assist:transport message of kind 2 malformed" "gap:sequence number" \
            "replay:ready word .* (a replayed or forged entry)" \
            "credits:consumed count"; do
    scenario=${case%%:*}
    field=${case#*:}
    go -n 2 "$job" "$scenario" "$poke"
    end=$(date +%s.%N)
    if [ $rc -eq 77 ] || grep -q 'shm_corrupt_job: shm_poke .* failed' "$out" &&
        grep -q 'Operation not permitted' "$out"; then
        skipped=$((skipped + 1))
        continue
    fi
    check "$scenario: exit status 65 (got $rc)" [ $rc -eq 65 ]
    check "$scenario: one error line for the lane" one_line
    check "$scenario: the line names $field" names "$field"
    check "$scenario: the job ended within a second of the write" in_time
done
if [ $skipped -gt 0 ]; then
    echo "SKIPPED $skipped scenarios: the kernel does not let a process write another's memory"
fi
check_end test_shm_corrupt
