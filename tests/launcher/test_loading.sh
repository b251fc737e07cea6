#!/bin/sh
# A job loads libfabric and PMIx only when it uses them:
#   test_loading.sh ONICRUN MAPS_JOB LIBONIC_SO
# libonic.so needs neither; a job of one process, and onicrun's jobs on one
# node, map neither (nor the PSM libraries Debian's libfabric pulls in),
# and neither does onicrun; a job spanning onicrun's "nodes" (ONIC_NODES=2)
# or told ONIC_XPORT=ofi loads libfabric and runs; with the library
# unloadable (ONIC_OFI_LIB naming a missing file) such a job fails with an
# error that names the package to install. Under Open MPI's mpirun (PMIx)
# libpmix is loaded and libfabric is not, and a missing libpmix is the same
# kind of error; under MPICH's Hydra (PMI-1) neither is loaded.
run=$1 job=$2 lib=$3
. "$(dirname "$0")/check_lib.sh"
export FI_PROVIDER=tcp FI_TCP_IFACE=lo   # stay on this machine
unset ONIC_XPORT ONIC_NODES ONIC_OFI_LIB ONIC_PMIX_LIB
net="libfabric libinfinipath libpsm"

check "libonic.so needs neither libfabric nor libpmix" \
    sh -c "! readelf -d '$lib' | grep NEEDED | grep -q -e fabric -e pmix"

"$job" self absent $net libpmix >"$out" 2>&1
check "a job of one process loads neither" [ $? -eq 0 ]

go -n 2 "$job" self absent $net libpmix
check "onicrun -n 2 (one node): the ranks load neither" [ $rc -eq 0 ]
go -n 2 "$job" parent absent $net libpmix
check "onicrun itself loads neither" [ $rc -eq 0 ]

ONIC_NODES=2 go -n 2 "$job" self present libfabric
check "ONIC_NODES=2: libfabric is loaded and the job runs" [ $rc -eq 0 ]
ONIC_XPORT=ofi go -n 2 "$job" self present libfabric
check "ONIC_XPORT=ofi: libfabric is loaded and the job runs" [ $rc -eq 0 ]

ONIC_OFI_LIB=/nonexistent/libfabric.so.1 ONIC_NODES=2 go -n 2 "$job" self absent libfabric
check "libfabric missing: the job fails" [ $rc -ne 0 ] && [ $rc -ne 124 ]
check "libfabric missing: the error names the package" \
    grep -q "needs libfabric, which cannot be loaded: .*apt-get install libfabric1" "$out"
ONIC_OFI_LIB=/nonexistent/libfabric.so.1 go -n 2 "$job" self absent $net
check "libfabric missing, one node: the job runs without it" [ $rc -eq 0 ]

ompi=$(command -v mpirun.openmpi || true)
if [ -n "$ompi" ]; then
    om="$ompi --allow-run-as-root --oversubscribe --bind-to none"
    timeout 60 $om -n 2 "$job" self present libpmix >"$out" 2>&1
    check "mpirun.openmpi: libpmix is loaded" [ $? -eq 0 ]
    timeout 60 $om -n 2 "$job" self absent $net >"$out" 2>&1
    check "mpirun.openmpi, one node: libfabric is not" [ $? -eq 0 ]
    timeout 60 $om -x ONIC_PMIX_LIB=/nonexistent/libpmix.so.2 -n 2 "$job" self absent libpmix \
        >"$out" 2>&1
    rc=$?
    check "libpmix missing under mpirun.openmpi: the job fails" [ $rc -ne 0 ] && [ $rc -ne 124 ]
    check "libpmix missing: the error names the package" \
        grep -q "needs libpmix, which cannot be loaded: .*apt-get install libpmix2" "$out"
else
    echo "skip: mpirun.openmpi not installed"
fi
hydra=$(command -v mpiexec.hydra || true)
if [ -n "$hydra" ]; then
    timeout 60 "$hydra" -n 2 "$job" self absent $net libpmix >"$out" 2>&1
    check "mpiexec.hydra, one node: neither is loaded" [ $? -eq 0 ]
else
    echo "skip: mpiexec.hydra not installed"
fi
check_end loading
