#!/bin/sh
# The processes of a node exchange their shared memory over an abstract Unix
# socket (one network namespace) and check each other's pids (one pid
# namespace). A rank started in another namespace of either kind must make
# the job fail at once with an error naming the namespace, not wait out
# the exchange's 30 s. Exit 77 (skipped) where
# unprivileged namespaces cannot be made.
#   test_xchg_ns.sh ONICRUN XPORT_JOB
set -u
run=$1
job=$2
. "$(dirname "$(readlink -f "$0")")/../launcher/check_lib.sh"

if ! unshare -rn true 2>/dev/null || ! unshare -rpf true 2>/dev/null; then
    echo "SKIPPED: unprivileged network and pid namespaces are not allowed here"
    rm -f "$out"
    exit 77
fi
for kind in network pid; do
    flags=$([ $kind = network ] && echo -rn || echo -rpf)
    go -n 2 sh -c 'if [ "$ONIC_RANK" = 1 ]; then exec unshare '"$flags"' "$0" fanin 10
                   else exec "$0" fanin 10; fi' "$job"
    check "rank 1 in another $kind namespace: the job fails (rc $rc)" [ $rc -ne 0 ] && [ $rc -ne 124 ]
    # Whichever sees it first; onicrun then stops the other.
    check "a rank names the other's $kind namespace" \
        grep -Eq "error: shm: rank (1 is in another $kind namespace than rank 0|0 is in another $kind namespace than rank 1)" "$out"
    check "and does not wait for the exchange's limit" \
        sh -c "! grep -q 'did not join its exchange in time' '$out'"
done
check_end test_xchg_ns
