#!/bin/sh
# An outside process that finds a job's exchange of shared memory in
# /proc/net/unix during start-up, squats every name the job could use (in
# /dev/shm and as abstract sockets), connects and sends a forged hello
# (rank 1's, with a region) and then garbage, is refused each time with a
# clear line from rank 0, and the job still completes with every message. The
# job's rank 1 holds the window open (ONIC_SHM_XCHG_STOP=1: it stops itself
# before it joins; xchg_intruder continues it afterwards).
#   test_xchg_intruder.sh ONICRUN XPORT_JOB XCHG_INTRUDER
set -u
run=$1
job=$2
intruder=$3
. "$(dirname "$(readlink -f "$0")")/../launcher/check_lib.sh"

said=$(mktemp)
ONIC_SHM_XCHG_STOP=1 "$run" -n 2 --timeout 30 "$job" fanin 1000 >"$out" 2>&1 &
job_pid=$!
"$intruder" "$job_pid" 2 >"$said" 2>&1
irc=$?
wait $job_pid
rc=$?
cat "$said" >>"$out"
ipid=$(sed -n 's/^xchg_intruder: pid \([0-9]*\) found .*/\1/p' "$said")
rm -f "$said"

check "the intruder found the exchange and was refused both times (rc $irc)" [ $irc -eq 0 ]
check "the job completes (rc $rc)" [ $rc -eq 0 ]
check "rank 0 received every message" grep -q "xport_job rank 0: [1-9][0-9]* passed, 0 failed" "$out"
check "rank 0 says it refused the intruder's pid" \
    grep -q "refused a connection to this node's exchange from pid $ipid: not a process of this job" "$out"
check "rank 0 counts both refusals" grep -q "refused 2 connections to this node's exchange in all" "$out"
# The names it squatted (its job's id, every name onic once used) changed
# nothing: the job completed above. onicrun sweeps onic-ID-* at the end.
id=$(sed -n 's/^xchg_intruder: squatted \([0-9]*\) names of job \([0-9a-f]*\)$/\2/p' "$out")
squats=$(sed -n 's/^xchg_intruder: squatted \([0-9]*\) names of job .*/\1/p' "$out")
squatted() { [ -n "$id" ] && [ "${squats:-0}" -ge 8 ]; }
swept() { ! ls /dev/shm 2>/dev/null | grep -q "^onic-$id-"; }
check "the intruder squatted the job's names (${squats:-none})" squatted
check "and nothing of them is left" swept
[ -n "$id" ] && rm -f /dev/shm/onic-"$id"-*
check_end test_xchg_intruder
