#!/bin/sh
# How MPI jobs end: test_exit.sh ONICRUN MPI_EXIT [ONICRUN_OPTION]. Each case
# checks onicrun's exit status (see mpi_exit.c); the option is --onload for
# the same through the onload engine.
onicrun=$1 prog=$2 opt=${3:-} fail=0
check() { # expected-status nprocs case
    "$onicrun" $opt -n "$2" --timeout 30 "$prog" "$3" >/dev/null 2>&1
    got=$?
    if [ "$got" -ne "$1" ]; then
        echo "FAIL: $3 with $2 processes $opt: exit status $got, expected $1"
        fail=1
    else
        echo "ok: $3 with $2 processes $opt: exit status $got"
    fi
}
check 42 2 abort
check 42 4 abort
check 6 2 fatal      # MPI_ERR_RANK
check 0 2 pending
check 15 2 late      # MPI_ERR_OTHER
out=$("$onicrun" $opt -n 2 --timeout 30 "$prog" late 2>&1)
if ! echo "$out" | grep -q "MPI_Isend on rank .* failed: MPI_ERR_OTHER: MPI has been finalized"; then
    echo "FAIL: late $opt: MPI_Isend after MPI_Finalize must stop the process, saying so:"
    echo "$out" | sed 's/^/  | /'
    fail=1
fi
check 0 4 pending
out=$(ONIC_LOG=debug "$onicrun" $opt -n 2 --timeout 30 "$prog" pending 2>&1)
if [ "$(echo "$out" | grep "3 operations never completed" | grep "MPI_Irecv from MPI_ANY_SOURCE tag 5" |
        grep "MPI_Irecv from rank [01] MPI_ANY_TAG" | grep -c "MPI_Grequest_start[;)]")" -ne 2 ]; then
    echo "FAIL: pending $opt: each rank's report must name its pending receives and generalized request:"
    echo "$out" | sed 's/^/  | /'
    fail=1
fi
# Three named, so none left out: no "; ..." after them.
if echo "$out" | grep "3 operations never completed" | grep -q "; \.\.\.)"; then
    echo "FAIL: pending $opt: the report of 3 operations says more were left out:"
    echo "$out" | grep "never completed" | sed 's/^/  | /'
    fail=1
fi
# A start-up error names the rank it happened on, not rank 0.
out=$("$onicrun" $opt -n 4 --timeout 30 "$prog" initfail 2>&1)
got=$?
if [ "$got" -eq 0 ] || ! echo "$out" | grep -q "MPI_Init on rank 2 failed" ||
    echo "$out" | grep -q "on rank [013] failed"; then
    echo "FAIL: initfail with 4 processes $opt: exit status $got, the report must name rank 2:"
    echo "$out" | sed 's/^/  | /'
    fail=1
else
    echo "ok: initfail with 4 processes $opt: the report names rank 2"
fi
# Processes that would split messages differently: every MPI_Init fails,
# with either setting alone differing.
for what in limits credits; do
    out=$("$onicrun" $opt -n 3 --timeout 30 "$prog" $what 2>&1)
    got=$?
    if [ "$got" -ne 15 ] || ! echo "$out" | grep -q "the processes of this job have different"; then
        echo "FAIL: $what with 3 processes $opt: exit status $got (expected 15, MPI_ERR_OTHER), and the report must say the processes differ:"
        echo "$out" | sed 's/^/  | /'
        fail=1
    else
        echo "ok: $what with 3 processes $opt: MPI_Init fails, saying the processes differ"
    fi
done
exit $fail
