#!/bin/bash
# Two "hosts" on one machine: network namespaces A and B joined by a veth
# pair (198.18.8.1 and .2, an interface named onic0 on both sides), made and
# removed by this script. Launchers run on A and reach B through a
# remote-shell stand-in that enters B's namespace.
#   test_netns.sh MPI_TESTS MPI_EXIT [MAPS_JOB]
# Runs the MPI test suite across the hosts with 2 and 4 processes under
# Open MPI's mpirun and MPICH's Hydra (ranks on one host by shm, across by
# ofi over tcp), then the faults: a rank on B killed mid-run, and a peer
# that published an address A cannot reach. With MAPS_JOB
# (tests/launcher/maps_job.c), also that a job across the hosts has
# loaded libfabric, which a job on one host does not. Exit 77 (skipped)
# where namespaces cannot be made (not root, no ip netns).
set -u
tests=$1 exitprog=$2 maps=${3:-} fail=0
source "$(dirname "$0")/netns_lib.sh"

export FI_PROVIDER=tcp FI_TCP_IFACE=onic0
ompi=$(command -v mpirun.openmpi || true)
hydra=$(command -v mpiexec.hydra || true)

run() { # name expected(0|nonzero) command...
    local name=$1 want=$2 out got
    shift 2
    out=$(timeout 120 "$tmp/on_a" "$@" 2>&1)
    got=$?
    if [ "$got" -eq 124 ]; then
        echo "FAIL: $name: hung (killed after 120 s)"; echo "$out" | tail -8; fail=1
    elif [ "$want" = 0 ] && [ "$got" -ne 0 ]; then
        echo "FAIL: $name: exit status $got"; echo "$out" | tail -15; fail=1
    elif [ "$want" = 0 ] && echo "$out" | grep -q "onic\[[0-9]*\] error:"; then
        echo "FAIL: $name: passed, but logged an error"; echo "$out" | grep "error:" | head -5
        fail=1
    elif [ "$want" = nonzero ] && { [ "$got" -eq 0 ] || [ "$got" -eq 126 ] || [ "$got" -eq 127 ]; }; then
        echo "FAIL: $name: exit status 0, expected an error"; echo "$out" | tail -8; fail=1
    else
        echo "ok: $name (exit status $got)"
    fi
    last_out=$out
}

# A rank on B publishes an address on B's loopback: A cannot reach it.
cat > "$tmp/badaddr" <<EOS
#!/bin/sh
[ "\$(ip netns identify \$\$)" = "$B" ] && export FI_TCP_IFACE=lo
exec "\$@"
EOS
chmod +x "$tmp/badaddr"

if [ -n "$ompi" ]; then
    om="$ompi --allow-run-as-root --oversubscribe --bind-to none --mca plm_rsh_agent $tmp/nsrsh
        --mca oob_tcp_if_include onic0 --mca btl_tcp_if_include onic0 -x FI_PROVIDER -x FI_TCP_IFACE"
    run "mpirun, 2 hosts x 1: mpi_tests all held" 0 $om --host 198.18.8.1:1,198.18.8.2:1 -n 2 "$tests" all held
    run "mpirun, 2 hosts x 2: mpi_tests all" 0 $om --host 198.18.8.1:2,198.18.8.2:2 -n 4 "$tests" all
    [ -n "$maps" ] && run "mpirun, 2 hosts x 1: libfabric loaded" 0 $om \
        --host 198.18.8.1:1,198.18.8.2:1 -n 2 "$maps" self present libfabric
    run "mpirun, 2 hosts x 2: a rank on B killed" nonzero $om --host 198.18.8.1:2,198.18.8.2:2 -n 4 \
        "$exitprog" die
    run "mpirun, 2 hosts: an unreachable address" nonzero $om --host 198.18.8.1:1,198.18.8.2:1 -n 2 \
        "$tmp/badaddr" "$tests" setup
    if echo "$last_out" | grep -q "error: ofi: .*reachable"; then
        echo "$last_out" | grep "error: ofi" | head -1
    else
        echo "FAIL: an unreachable address: no error saying so"; echo "$last_out" | tail -8; fail=1
    fi
else
    echo "skip: mpirun.openmpi not installed"
fi
if [ -n "$hydra" ]; then
    hy="$hydra -launcher rsh -launcher-exec $tmp/nsrsh -iface onic0"
    run "hydra, 2 hosts x 1: mpi_tests all" 0 $hy -hosts 198.18.8.1:1,198.18.8.2:1 -n 2 "$tests" all
    run "hydra, 2 hosts x 2: mpi_tests all" 0 $hy -hosts 198.18.8.1:2,198.18.8.2:2 -n 4 "$tests" all
    [ -n "$maps" ] && run "hydra, 2 hosts x 1: libfabric loaded" 0 $hy \
        -hosts 198.18.8.1:1,198.18.8.2:1 -n 2 "$maps" self present libfabric
    run "hydra, 2 hosts x 2: a rank on B killed" nonzero $hy -hosts 198.18.8.1:2,198.18.8.2:2 -n 4 \
        "$exitprog" die
else
    echo "skip: mpiexec.hydra not installed"
fi
[ -z "$ompi" ] && [ -z "$hydra" ] && exit 77
exit $fail
