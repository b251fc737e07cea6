#!/bin/sh
# Job control through onicrun, observed from outside:
#   - SIGTSTP (Ctrl-Z) to onicrun mid-flood stops every rank and onicrun
#     itself; SIGCONT (fg) continues them, and the 4-rank flood finishes
#     with every message delivered;
#   - a rank stopped alone (kill -STOP) for 5 s is waited for, with a
#     notice naming it, and the job finishes with every message delivered.
#   test_jobctl.sh ONICRUN XPORT_JOB
set -u
run=$1
job=$2
. "$(dirname "$0")/check_lib.sh"

state() { ps -o stat= -p "$1" 2>/dev/null | cut -c1; }
ranks() { pgrep -P "$1" | tr '\n' ' '; }
all_stopped() {
    for p in $1; do [ "$(state "$p")" = T ] || return 1; done
}
delivered() { [ "$(grep -c "xport_job rank .*: [1-9][0-9]* passed, 0 failed" "$out")" -eq "$1" ]; }
# Wait up to 2 s for a condition.
soon() {
    i=0
    while [ $i -lt 40 ]; do
        "$@" && return 0
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

# Ctrl-Z mid-flood, then fg.
"$run" -n 4 --timeout 300 "$job" flood 400000 >"$out" 2>&1 &
pid=$!
sleep 0.2
pids=$(ranks $pid)
kill -TSTP $pid
check "SIGTSTP stops onicrun" soon sh -c "[ \"\$(ps -o stat= -p $pid | cut -c1)\" = T ]"
check "SIGTSTP stops all 4 ranks" soon all_stopped "$pids"
sleep 0.5
check "the ranks stay stopped" all_stopped "$pids"
kill -CONT $pid
wait $pid
rc=$?
check "the job continued goes on to exit 0 (got $rc)" [ $rc -eq 0 ]
check "every rank got every message" delivered 4

# One rank stopped alone for 5 s, mid-flood (large enough to last over a
# second: sends do not wait for room, so a flood is quick). The jobs' limits
# are for a hang: on a loaded machine this flood alone took over 50 s.
"$run" -n 2 --timeout 300 "$job" flood 1000000 >"$out" 2>&1 &
pid=$!
sleep 0.3
victim=$(pgrep -P $pid | tail -n 1)
kill -STOP "$victim"
sleep 5
check "onicrun says which rank is stopped" \
    grep -q "rank [01] (pid $victim) has been stopped for [0-9]* s; the job waits" "$out"
check "the rest of the job waits for it" [ -n "$(ranks $pid)" ]
kill -CONT "$victim"
wait $pid
rc=$?
check "the job finishes with exit 0 (got $rc)" [ $rc -eq 0 ]
check "every rank got every message" delivered 2
check_end test_jobctl
