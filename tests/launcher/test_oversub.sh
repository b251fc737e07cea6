#!/bin/sh
# More processes than cores, observed from outside, on 2 CPUs (taskset) so
# that it holds on any machine: onicrun tells the processes not to spin
# (ONIC_WAIT), and --onload without a core for the engine runs the job
# without it, saying so once, unless ONIC_ONLOAD_SHARED=engine.
#   test_oversub.sh ONICRUN ONIC_INFO
set -u
if [ "$(nproc)" -lt 2 ]; then
    echo "SKIPPED: needs 2 CPUs"
    exit 0
fi
[ -n "${OVERSUB_PINNED:-}" ] || OVERSUB_PINNED=1 exec taskset -c 0,1 "$0" "$@"
run=$1
info=$2
. "$(dirname "$0")/check_lib.sh"

wait_is() { [ "$(grep -c "ONIC_WAIT  *auto  *$1 " "$out")" -eq "$2" ]; }
said_once() { [ "$(grep -c 'leaving the engine none of its own' "$out")" -eq 1 ]; }

go -n 2 "$info"
check "2 processes on 2 cores: waits spin" wait_is spin 2
go -n 4 "$info"
check "4 processes on 2 cores: waits sleep" wait_is sleep 4
ONIC_WAIT=spin go -n 4 "$info"
check "ONIC_WAIT set by the user is kept" wait_is spin 4
ONIC_WAIT=never go -n 2 "$info"
check "an invalid ONIC_WAIT is refused, naming it" \
    sh -c "[ $rc -ne 0 ] && grep -q 'invalid ONIC_WAIT=\"never\"' '$out'"

# One process and the engine fit 2 cores: the engine runs, nobody sleeps.
go --onload -n 1 "$info"
check "--onload -n 1 on 2 cores: the engine runs" grep -q "running for job" "$out"
check "--onload -n 1 on 2 cores: waits spin" wait_is spin 1
check "--onload -n 1 on 2 cores: nothing to say" sh -c "! grep -q 'onicrun: --onload' '$out'"
# Two processes leave the engine no core: no engine, said once.
go --onload -n 2 "$info"
check "--onload -n 2 on 2 cores: the job succeeds" [ $rc -eq 0 ]
check "--onload -n 2 on 2 cores: no engine" [ "$(grep -c 'none for job' "$out")" -eq 2 ]
check "--onload -n 2 on 2 cores: said once" said_once
check "--onload -n 2 on 2 cores: the processes' ONIC_ONLOAD is 0" \
    [ "$(grep -c 'ONIC_ONLOAD  *0  *0 ' "$out")" -eq 2 ]
ONIC_ONLOAD=1 go -n 4 "$info"
check "ONIC_ONLOAD=1 -n 4 on 2 cores: no engine, said once, waits sleep" \
    sh -c "[ \$(grep -c 'none for job' '$out') -eq 4 ] && [ \$(grep -c 'leaving the engine none' '$out') -eq 1 ] && [ \$(grep -c 'ONIC_WAIT  *auto  *sleep ' '$out') -eq 4 ]"
# Asked to share: the engine runs, and everyone sleeps rather than spins.
ONIC_ONLOAD_SHARED=engine go --onload -n 2 "$info"
check "ONIC_ONLOAD_SHARED=engine: the engine runs" \
    [ "$(grep -c 'running for job' "$out")" -eq 2 ]
check "ONIC_ONLOAD_SHARED=engine: waits sleep" wait_is sleep 2
check "ONIC_ONLOAD_SHARED=engine: said once" \
    [ "$(grep -c 'onload engine share' "$out")" -eq 1 ]
ONIC_ONLOAD_SHARED=both go --onload -n 2 "$info"
check "an invalid ONIC_ONLOAD_SHARED is refused, naming it" \
    sh -c "[ $rc -ne 0 ] && grep -q 'invalid ONIC_ONLOAD_SHARED=\"both\"' '$out'"
check_end test_oversub
