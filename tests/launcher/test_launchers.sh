#!/bin/sh
# onic programs started by other launchers on this machine:
#   test_launchers.sh MPI_TESTS MPI_EXIT
# Open MPI's mpirun (PMIx) and MPICH's Hydra (the PMI-1 wire protocol) each
# run the MPI test suite with 2 and 4 processes (shm), and with 2 processes
# over ofi (addresses through the launcher's store); a job whose rank calls
# MPI_Abort or is killed ends non-zero, not in a hang; onicrun started by
# either launcher runs its own job, not the launcher's; an endpoint closed
# and opened again over ofi works (the launcher's session kept, new keys); a launcher that cannot
# be reached is an error naming it. Skips (77) if neither launcher is here.
#   test_launchers.sh MPI_TESTS MPI_EXIT ONICRUN MPI_BURST XPORT_JOB [startup]
# With "startup" (ctest's launchers_startup, the sanitizer runs' check of
# start-up through PMIx and PMI-1): under each launcher only the MPI test
# `setup` with 2 processes, by shm and over ofi, MPI_Abort, and the endpoint
# opened twice (the launcher's store written again); then the unreachable
# launchers as above.
tests=$1 exitprog=$2 onicrun=$3 burst=$4 xportjob=$5 mode=${6:-full} fail=0 ran=0
export FI_PROVIDER=tcp FI_TCP_IFACE=lo   # stay on this machine

ompi=$(command -v mpirun.openmpi || true)
hydra=$(command -v mpiexec.hydra || true)

run() { # name expected(0|nonzero) command...
    name=$1 want=$2
    shift 2
    out=$(timeout 120 "$@" 2>&1)
    got=$?
    ran=$((ran + 1))
    if [ "$got" -eq 124 ]; then
        echo "FAIL: $name: hung (killed after 120 s)"; echo "$out" | tail -5; fail=1
    elif [ "$want" = 0 ] && [ "$got" -ne 0 ]; then
        echo "FAIL: $name: exit status $got"; echo "$out" | tail -15; fail=1
    elif [ "$want" = nonzero ] && [ "$got" -eq 0 ]; then
        echo "FAIL: $name: exit status 0, expected an error"; echo "$out" | tail -5; fail=1
    else
        echo "ok: $name (exit status $got)"
    fi
}
# The last run's ranks made one job of N processes (not N jobs of one).
one_job() { # N
    if ! echo "$out" | grep -q "^PASS: 0 failed checks over $1 processes"; then
        echo "FAIL: not one job of $1 processes"; echo "$out" | tail -5; fail=1
    fi
}

if [ -n "$ompi" ]; then
    om="$ompi --allow-run-as-root --oversubscribe --bind-to none -x FI_PROVIDER -x FI_TCP_IFACE"
    if [ "$mode" = startup ]; then
        run "mpirun -n 2 mpi_tests setup" 0 $om -n 2 "$tests" setup
        one_job 2
        run "mpirun -n 2 mpi_tests setup over ofi" 0 $om -x ONIC_XPORT=ofi -n 2 "$tests" setup
        one_job 2
        run "mpirun: MPI_Abort" nonzero $om -n 2 "$exitprog" abort
        run "mpirun: an endpoint opened twice over ofi" 0 $om -x ONIC_XPORT=ofi -n 2 "$xportjob" \
            reopen 1000
    else
        for np in 2 4; do
            run "mpirun -n $np mpi_tests all" 0 $om -n $np "$tests" all
            one_job $np
        done
        run "mpirun -n 2 mpi_tests all over ofi" 0 $om -x ONIC_XPORT=ofi -n 2 "$tests" all
        run "mpirun: MPI_Abort" nonzero $om -n 2 "$exitprog" abort
        run "mpirun: a rank killed" nonzero $om -n 4 "$exitprog" die
        run "mpirun -n 1 onicrun -n 3 mpi_burst" 0 $om -n 1 "$onicrun" -n 3 "$burst"
        run "mpirun: an endpoint opened twice over ofi" 0 $om -x ONIC_XPORT=ofi -n 2 "$xportjob" \
            reopen 1000
    fi
else
    echo "skip: mpirun.openmpi not installed (apt-get install openmpi-bin)"
fi
if [ -n "$hydra" ]; then
    if [ "$mode" = startup ]; then
        run "mpiexec.hydra -n 2 mpi_tests setup" 0 "$hydra" -n 2 "$tests" setup
        one_job 2
        run "mpiexec.hydra -n 2 mpi_tests setup over ofi" 0 env ONIC_XPORT=ofi "$hydra" -n 2 \
            "$tests" setup
        one_job 2
        run "mpiexec.hydra: MPI_Abort" nonzero "$hydra" -n 2 "$exitprog" abort
        run "mpiexec.hydra: an endpoint opened twice over ofi" 0 env ONIC_XPORT=ofi "$hydra" -n 2 \
            "$xportjob" reopen 1000
    else
        for np in 2 4; do
            run "mpiexec.hydra -n $np mpi_tests all" 0 "$hydra" -n $np "$tests" all
            one_job $np
        done
        run "mpiexec.hydra -n 2 mpi_tests all over ofi" 0 env ONIC_XPORT=ofi "$hydra" -n 2 "$tests" all
        run "mpiexec.hydra: MPI_Abort" nonzero "$hydra" -n 2 "$exitprog" abort
        run "mpiexec.hydra: a rank killed" nonzero "$hydra" -n 4 "$exitprog" die
        run "mpiexec.hydra -n 1 onicrun -n 3 mpi_burst" 0 "$hydra" -n 1 "$onicrun" -n 3 "$burst"
        run "mpiexec.hydra: an endpoint opened twice over ofi" 0 env ONIC_XPORT=ofi "$hydra" -n 2 \
            "$xportjob" reopen 1000
    fi
else
    echo "skip: mpiexec.hydra not installed (apt-get install mpich)"
fi

# No launcher behind the variables: an error that names it, and no hang.
out=$(PMI_FD=99 PMI_RANK=0 PMI_SIZE=2 timeout 30 "$tests" setup 2>&1); got=$?
if [ $got -eq 0 ] || ! echo "$out" | grep -q "pmi1: cannot write to the launcher"; then
    echo "FAIL: a dead PMI_FD: status $got"; echo "$out"; fail=1
else
    echo "ok: a dead PMI_FD is an error naming it (exit status $got)"
fi
if [ -n "$ompi" ]; then
    out=$(PMIX_NAMESPACE=nosuchjob timeout 30 "$tests" setup 2>&1); got=$?
    if [ $got -eq 0 ] || ! echo "$out" | grep -q "pmix: PMIx_Init"; then
        echo "FAIL: no PMIx server: status $got"; echo "$out"; fail=1
    else
        echo "ok: no PMIx server is an error with PMIx's text (exit status $got)"
    fi
fi
[ -z "$ompi" ] && [ -z "$hydra" ] && exit 77
exit $fail
